/*
 * collect.c -- the `collect` sink: the rows of a plain SQL SELECT, sent to
 * the JobManager for the client that reads the job's results
 * (GET /jobs/:jobid/results; `sluice sql` and the SQL gateway).
 *
 * Each row becomes one JSON array of its kind and its values as the SQL
 * client shows them: ["+I", "1", "Bob", null] (TIMESTAMP as
 * 2026-01-01 00:00:00.000, always with milliseconds; DOUBLE as Java writes
 * it; NULL as null), one line each, numbered from 0 in the order taken.
 * Rows wait in a buffer the subtask owns (no allocation per row once it has
 * grown) and go out in batches of at most SL_COLLECT_BATCH_ROWS rows, as far
 * as the job has credit (core/collect.h): when a batch is full, 100 ms
 * after a row arrived, and when credit comes back (the TaskManager's credit
 * descriptor wakes the task: ready()).
 *
 * A client that does not read leaves the job without credit; the sink then
 * keeps taking rows, up to SL_COLLECT_PENDING_BYTES of them, so that the
 * task goes on handling checkpoint barriers. Beyond that bound it waits for
 * credit, which backpressures the job (barriers then wait too).
 *
 * Exactly once across restarts, with checkpointing (as Flink's collect sink
 * with checkpoints): a row is sent only once a completed checkpoint covers
 * it (the rows taken before checkpoint n's barrier are released when n
 * completes), so a restore never replays a sent row from the sources. The
 * operator state is the rows not sent yet and the last SL_COLLECT_CREDIT
 * rows sent, with the number of the first: a row older than those has
 * reached the JobManager (a sink sends 512 more rows only on credit that
 * the JobManager returns in row order). A restored sink sends them all
 * again; the JobManager drops the rows it has (by number). The end of
 * input waits for the final checkpoint: its completion sends what is left
 * and the end mark. Without checkpointing rows go out at once and a
 * restart ends the results (the JobManager's error).
 *
 * Its operator info shows {"pendingRows", "sentRows"}.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "collect.h"
#include "format_json.h"
#include "jobgraph.h"
#include "operator.h"
#include "temporal.h"

#define COLLECT_LINGER_MS 100

#define COLLECT_MARKS 64 /* checkpoints in flight whose barriers the sink passed */

typedef struct collect_state {
    sl_buf out;         /* out.p[win, head): the last rows sent (gated only);
                           out.p[head, out.len): rows not sent yet, one per line */
    size_t win, head;
    int nwin;           /* rows in buf[win, head) */
    int nrows;          /* rows in buf[head, len) */
    uint64_t next;      /* the number of the row at buf[head] */
    uint64_t released;  /* rows numbered below it may be sent */
    long long sent;     /* rows sent by this subtask since it opened */
    int gated;          /* checkpointing: rows wait for the checkpoint that covers them */
    int ended, end_sent;
    int fd;             /* the credit descriptor, or -1 */
    struct { int64_t cpid; uint64_t upto; } marks[COLLECT_MARKS];
    int nmarks;
    sl_buf row;         /* scratch: the row being encoded (format_json.c) */
    sl_tz *tz;          /* the session zone TIMESTAMP_LTZ columns show in; NULL: UTC */
    sl_value *local;    /* scratch: a row's values with its LTZ columns made local */
} collect_state;

typedef struct collect_plan {
    char *zone; /* table.local-time-zone as planned; NULL: UTC */
} collect_plan;

static void *collect_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    collect_plan *pl = sl_calloc(1, sizeof *pl);
    const char *zone = sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE);
    if (zone) { /* checked now, so that open cannot fail on it */
        sl_tz *tz = sl_tz_open(zone, SL_TZ_JAVA_TIME, err, errlen);
        if (!tz) {
            free(pl);
            return NULL;
        }
        sl_tz_destroy(tz);
        pl->zone = sl_strdup(zone);
    }
    return pl;
}

static void collect_plan_free(void *p)
{
    collect_plan *pl = p;
    if (pl) free(pl->zone);
    free(pl);
}

static int collect_open(sl_op *op)
{
    collect_state *st = sl_calloc(1, sizeof *st);
    sl_buf_reserve(&st->out, 4096);
    st->fd = sl_op_collect_credit_fd(op);
    st->gated = op->final_checkpoint; /* checkpoints will be taken */
    const collect_plan *pl = op->plan;
    if (pl && pl->zone) {
        st->tz = sl_tz_open(pl->zone, SL_TZ_JAVA_TIME, NULL, 0);
        st->local = sl_calloc((size_t)op->in->n + 1, sizeof *st->local);
    }
    op->priv = st;
    op->proc_time_at = INT64_MAX;
    if (st->fd >= 0) return sl_op_watch_fd(op, st->fd, POLLIN);
    return SL_OK;
}

static void put(collect_state *st, const char *s, size_t n)
{
    if (SL_UNLIKELY(st->out.cap - st->out.len <= n) && st->win > 0) {
        /* the room of rows sent and forgotten first */
        memmove(st->out.p, st->out.p + st->win, st->out.len - st->win);
        st->out.len -= st->win;
        st->head -= st->win;
        st->win = 0;
    }
    sl_buf_put(&st->out, s, n);
}

static void publish(sl_op *op)
{
    collect_state *st = op->priv;
    char info[96];
    snprintf(info, sizeof info, "{\"pendingRows\":%d,\"sentRows\":%lld}", st->nrows, st->sent);
    sl_op_set_info(op, info);
}

/* Send the first pending rows, at most maxk of them and about
 * SL_COLLECT_BATCH_BYTES (one row at least), with the end mark when `end`
 * and they are the last: at once when the job has credit for them, else
 * after waiting for it. */
static int send_rows(sl_op *op, int maxk, int end)
{
    collect_state *st = op->priv;
    size_t to = st->head;
    int k = 0;
    while (k < maxk && k < st->nrows && (k == 0 || to - st->head < SL_COLLECT_BATCH_BYTES)) {
        const char *nl = memchr(st->out.p + to, '\n', st->out.len - to);
        to = (size_t)(nl - st->out.p) + 1;
        k++;
    }
    int last = end && k == st->nrows;
    char err[256];
    int rc = sl_op_collect_send(op, st->out.p + st->head, to - st->head, k, st->next, last, err, sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "%s", err);
    st->head = to;
    st->nrows -= k;
    st->next += (uint64_t)k;
    st->sent += k;
    st->end_sent |= last;
    if (st->gated) { /* keep the last SL_COLLECT_CREDIT rows sent for a restore */
        st->nwin += k;
        for (; st->nwin > SL_COLLECT_CREDIT; st->nwin--)
            st->win = (size_t)((const char *)memchr(st->out.p + st->win, '\n', st->head - st->win) -
                               st->out.p) + 1;
    } else {
        st->win = st->head;
    }
    if (st->win == st->out.len) {
        st->win = st->head = 0;
        sl_buf_reset(&st->out);
    }
    return rc; /* SL_DONE: the job is being cancelled; nobody reads any more */
}

/* Pending rows a completed checkpoint covers (all when not gated). */
static int releasable(const collect_state *st)
{
    if (!st->gated) return st->nrows;
    return st->released > st->next ? (int)SL_MIN(st->released - st->next, (uint64_t)st->nrows) : 0;
}

/* Send what the job has credit for; `partial` sends a last batch smaller
 * than SL_COLLECT_BATCH_ROWS too. Never waits. */
static int send_available(sl_op *op, int partial)
{
    collect_state *st = op->priv;
    int rc = SL_OK;
    while (rc == SL_OK && releasable(st) > 0) {
        int k = SL_MIN(SL_MIN(releasable(st), SL_COLLECT_BATCH_ROWS), sl_op_collect_credit_now(op));
        if (k <= 0 || (k < SL_COLLECT_BATCH_ROWS && !partial)) break;
        rc = send_rows(op, k, 0);
    }
    /* rows left: look again after the linger at the latest (publishing what
     * waits); the credit descriptor wakes us sooner */
    if (st->nrows == 0) op->proc_time_at = INT64_MAX;
    else if (op->proc_time_at == INT64_MAX)
        op->proc_time_at = sl_op_processing_time(op) + COLLECT_LINGER_MS;
    return rc == SL_DONE ? SL_OK : rc;
}

static int collect_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    collect_state *st = op->priv;
    sl_buf_reset(&st->row);
    sl_row shown = *row;
    if (st->tz) { /* a TIMESTAMP_LTZ shows as the session zone's wall-clock time, as Flink's client */
        int n = SL_MIN(row->n, op->in->n);
        memcpy(st->local, row->vals, sizeof *st->local * (size_t)n);
        for (int i = 0; i < n; i++) {
            const sl_dtype *dt = op->in->fields[i].dt;
            if (op->in->fields[i].type == SL_T_TIMESTAMP && dt && dt->variant == SL_DV_LTZ &&
                !st->local[i].isnull)
                st->local[i].v.i = sl_tz_to_local(st->tz, st->local[i].v.i);
        }
        shown.vals = st->local;
        shown.n = n;
    }
    sl_fmt_json_client_row(&st->row, &shown, row, op->in); /* format_json.c */
    put(st, st->row.p, st->row.len);
    put(st, "\n", 1);
    op->metrics.records_in++;
    if (++st->nrows == 1 && op->proc_time_at == INT64_MAX)
        op->proc_time_at = sl_op_processing_time(op) + COLLECT_LINGER_MS;
    if ((st->nrows >= SL_COLLECT_BATCH_ROWS || st->out.len - st->head >= SL_COLLECT_BATCH_BYTES) &&
        send_available(op, st->nrows < SL_COLLECT_BATCH_ROWS) != SL_OK)
        return SL_ERR;
    /* the client is far behind: wait for it (backpressure); rows no
     * checkpoint covers yet cannot go, so they stay until the next barrier */
    while (st->out.len - st->head > SL_COLLECT_PENDING_BYTES && releasable(st) > 0) {
        int rc = send_rows(op, SL_MIN(releasable(st), SL_COLLECT_BATCH_ROWS), 0);
        if (rc != SL_OK) return rc == SL_DONE ? SL_OK : rc;
    }
    return SL_OK;
}

static int collect_proc_time(sl_op *op, int64_t now_ms)
{
    (void)now_ms;
    op->proc_time_at = INT64_MAX;
    int rc = send_available(op, 1);
    publish(op);
    return rc;
}

/* The credit descriptor is readable: credit came back. */
static int collect_ready(sl_op *op)
{
    collect_state *st = op->priv;
    uint64_t x;
    ssize_t got = st->fd >= 0 ? read(st->fd, &x, sizeof x) : -1;
    if (got < 0 && st->fd >= 0 && errno != EAGAIN)
        return sl_op_fail(op, "collect: cannot read the credit descriptor: %s", strerror(errno));
    return got == (ssize_t)sizeof x && releasable(st) > 0 ? send_available(op, 1) : SL_OK;
}

/* Send every pending row and the end mark, waiting for credit. */
static int send_all(sl_op *op)
{
    collect_state *st = op->priv;
    int rc;
    do
        rc = send_rows(op, SL_COLLECT_BATCH_ROWS, 1); /* the last batch carries the end */
    while (rc == SL_OK && st->nrows > 0);
    op->proc_time_at = INT64_MAX;
    publish(op);
    return rc == SL_DONE ? SL_OK : rc;
}

static int collect_end_input(sl_op *op, int input)
{
    (void)input;
    collect_state *st = op->priv;
    if (op->inputs_ended < op->nin || st->ended) return SL_OK;
    st->ended = 1;
    /* gated: the final checkpoint's completion sends them (the task waits for it) */
    return st->gated ? SL_OK : send_all(op);
}

/* Operator state: the number of the first row kept, the rows sent that are
 * kept (8 bytes each, little-endian), then those rows and the pending ones. */
static int collect_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    collect_state *st = op->priv;
    if (st->gated) { /* the rows taken so far go out once this checkpoint completes */
        if (st->nmarks == COLLECT_MARKS) { /* the oldest never completed: forget it */
            memmove(st->marks, st->marks + 1, sizeof st->marks[0] * (COLLECT_MARKS - 1));
            st->nmarks--;
        }
        st->marks[st->nmarks].cpid = cpid;
        st->marks[st->nmarks].upto = st->next + (uint64_t)st->nrows;
        st->nmarks++;
    }
    size_t rows = st->out.len - st->win;
    uint8_t *b = sl_malloc(16 + rows);
    sl_put_lei64(b, (int64_t)(st->next - (uint64_t)st->nwin));
    sl_put_lei64(b + 8, st->nwin);
    memcpy(b + 16, st->out.p + st->win, rows);
    *blob = b;
    *len = 16 + rows;
    return SL_OK;
}

static int collect_complete(sl_op *op, int64_t cpid)
{
    collect_state *st = op->priv;
    int keep = 0;
    for (int i = 0; i < st->nmarks; i++) {
        if (st->marks[i].cpid <= cpid) {
            if (st->marks[i].upto > st->released) st->released = st->marks[i].upto;
        } else {
            st->marks[keep++] = st->marks[i];
        }
    }
    st->nmarks = keep;
    /* the final checkpoint: everything left, then the end (the task ends after it) */
    if (st->ended && !st->end_sent && st->released >= st->next + (uint64_t)st->nrows)
        return send_all(op);
    return send_available(op, 1);
}

static int collect_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    collect_state *st = op->priv;
    if (nblobs > 1) return sl_op_fail(op, "collect: %d state blobs for one sink", nblobs);
    for (int i = 0; i < nblobs; i++) {
        const uint8_t *p = blobs[i];
        if (lens[i] < 16 || (lens[i] > 16 && p[lens[i] - 1] != '\n'))
            return sl_op_fail(op, "collect: damaged state (%zu bytes)", lens[i]);
        st->next = (uint64_t)sl_get_lei64(p);
        put(st, (const char *)p + 16, lens[i] - 16);
        for (size_t j = 16; j < lens[i]; j++) st->nrows += p[j] == '\n';
    }
    /* a completed checkpoint covers them all: they go out again, the kept
     * sent ones included (the JobManager drops those it has) */
    st->released = st->next + (uint64_t)st->nrows;
    if (st->nrows) op->proc_time_at = sl_op_processing_time(op);
    return SL_OK;
}

static void collect_close(sl_op *op)
{
    collect_state *st = op->priv;
    if (!st) return;
    if (st->fd >= 0) sl_op_unwatch_fd(op, st->fd);
    sl_buf_free(&st->out);
    sl_buf_free(&st->row);
    sl_tz_destroy(st->tz);
    free(st->local);
    free(st);
    op->priv = NULL;
}

static const sl_op_option collect_options[] = {
    {SL_OPT_LOCAL_TIME_ZONE, SL_CT_STRING, NULL, NULL,
     "The session time zone TIMESTAMP_LTZ columns are shown in (a java.time.ZoneId name; "
     "default UTC)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_collect = {
    .abi = SL_OP_ABI_VERSION,
    .name = "collect",
    .flags = SL_OPF_SINK | SL_OPF_COLLECT,
    .options = collect_options,
    .plan = collect_plan_new,
    .plan_free = collect_plan_free,
    .open = collect_open,
    .process = collect_process,
    .end_input = collect_end_input,
    .proc_time = collect_proc_time,
    .ready = collect_ready,
    .close = collect_close,
    .snapshot_state = collect_snapshot,
    .restore_state = collect_restore,
    .checkpoint_complete = collect_complete,
};
