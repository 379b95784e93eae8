/*
 * collect.c -- the `collect` sink: the rows of a plain SQL SELECT, sent to
 * the JobManager for the client that reads the job's results
 * (GET /jobs/:jobid/results; `sluice sql` and the SQL gateway).
 *
 * Each row becomes one JSON array of its kind and its values as the SQL
 * client shows them: ["+I", "1", "Bob", null] (TIMESTAMP as
 * 2026-01-01 00:00:00.000, always with milliseconds; DOUBLE as Java writes
 * it; NULL as null), one line each. Rows wait in a buffer the subtask owns
 * (no allocation per row once it has grown) and go out in batches of at
 * most SL_COLLECT_BATCH_ROWS rows, as far as the job has credit
 * (common/collect.h): when a batch is full, 100 ms after a row arrived, and
 * when credit comes back (the TaskManager's credit descriptor wakes the
 * task: ready()).
 *
 * A client that does not read leaves the job without credit; the sink then
 * keeps taking rows, up to SL_COLLECT_PENDING_BYTES of them, so that the
 * task goes on handling checkpoint barriers: the rows it holds are its
 * operator state (a checkpoint covers them; a restore sends them). Beyond
 * that bound it waits for credit, which backpressures the job (barriers then
 * wait too). At the end of input it sends everything, waiting for credit,
 * then the end mark. Its operator info shows {"pendingRows", "sentRows"}.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "jobgraph.h"
#include "operator.h"

#define COLLECT_LINGER_MS 100

typedef struct collect_state {
    char *buf;          /* rows not sent yet: buf[head, len), one per line */
    size_t head, len, cap;
    int nrows;          /* rows in buf[head, len) */
    long long sent;     /* rows sent */
    int ended;
    int fd;             /* the credit descriptor, or -1 */
} collect_state;

static void *collect_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    (void)pc;
    (void)err;
    (void)errlen;
    return sl_calloc(1, 1);
}

static void collect_plan_free(void *p) { free(p); }

static int collect_open(sl_op *op)
{
    collect_state *st = sl_calloc(1, sizeof *st);
    st->cap = 4096;
    st->buf = sl_malloc(st->cap);
    st->fd = sl_collect_credit_fd();
    op->priv = st;
    op->proc_time_at = INT64_MAX;
    if (st->fd >= 0) return sl_op_watch_fd(op, st->fd, POLLIN);
    return SL_OK;
}

static void put(collect_state *st, const char *s, size_t n)
{
    if (st->len + n + 1 > st->cap) {
        if (st->head > 0) { /* the sent rows' room first */
            memmove(st->buf, st->buf + st->head, st->len - st->head);
            st->len -= st->head;
            st->head = 0;
        }
        while (st->len + n + 1 > st->cap) st->cap *= 2;
        st->buf = sl_realloc(st->buf, st->cap);
    }
    memcpy(st->buf + st->len, s, n);
    st->len += n;
}

/* s as the inside of a JSON string. */
static void put_escaped(collect_state *st, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        put(st, s + from, i - from);
        char esc[8];
        if (c == '"' || c == '\\') snprintf(esc, sizeof esc, "\\%c", c);
        else if (c == '\n') snprintf(esc, sizeof esc, "\\n");
        else if (c == '\t') snprintf(esc, sizeof esc, "\\t");
        else snprintf(esc, sizeof esc, "\\u%04x", c);
        put(st, esc, strlen(esc));
        from = i + 1;
    }
    put(st, s + from, n - from);
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
        const char *nl = memchr(st->buf + to, '\n', st->len - to);
        to = (size_t)(nl - st->buf) + 1;
        k++;
    }
    char err[256];
    int rc = sl_collect_send(st->buf + st->head, to - st->head, k, end && k == st->nrows, err,
                             sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "%s", err);
    st->head = to;
    st->nrows -= k;
    st->sent += k;
    if (st->head == st->len) st->head = st->len = 0;
    return rc; /* SL_DONE: the job is being cancelled; nobody reads any more */
}

/* Send what the job has credit for; `partial` sends a last batch smaller
 * than SL_COLLECT_BATCH_ROWS too. Never waits. */
static int send_available(sl_op *op, int partial)
{
    collect_state *st = op->priv;
    int rc = SL_OK;
    while (rc == SL_OK && st->nrows > 0) {
        int k = SL_MIN(SL_MIN(st->nrows, SL_COLLECT_BATCH_ROWS), sl_collect_credit_now());
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
    const sl_schema *s = op->in;
    put(st, "[\"", 2);
    const char *kind = sl_rowkind_short(row->kind);
    put(st, kind, strlen(kind));
    put(st, "\"", 1);
    for (int i = 0; i < s->n && i < row->n; i++) {
        const sl_value *v = &row->vals[i];
        if (v->isnull) {
            put(st, ",null", 5);
            continue;
        }
        put(st, ",\"", 2);
        if (s->fields[i].type == SL_T_STRING || s->fields[i].type == SL_T_BYTES) {
            put_escaped(st, v->v.s.p, v->v.s.len);
        } else {
            char tmp[64];
            int n = s->fields[i].type == SL_T_TIMESTAMP ? sl_ts_format(tmp, sizeof tmp, v->v.i)
                                                        : sl_value_format(tmp, sizeof tmp, v,
                                                                          s->fields[i].type);
            if (n < 0) n = 0;
            if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
            /* the SQL client's form of a TIMESTAMP: 2026-01-01 00:00:00.020 */
            if (s->fields[i].type == SL_T_TIMESTAMP && n > 10 && tmp[10] == 'T') tmp[10] = ' ';
            put_escaped(st, tmp, (size_t)n);
        }
        put(st, "\"", 1);
    }
    put(st, "]\n", 2);
    op->metrics.records_in++;
    if (++st->nrows == 1 && op->proc_time_at == INT64_MAX)
        op->proc_time_at = sl_op_processing_time(op) + COLLECT_LINGER_MS;
    if ((st->nrows >= SL_COLLECT_BATCH_ROWS || st->len - st->head >= SL_COLLECT_BATCH_BYTES) &&
        send_available(op, st->nrows < SL_COLLECT_BATCH_ROWS) != SL_OK)
        return SL_ERR;
    /* the client is far behind: wait for it (backpressure) */
    while (st->len - st->head > SL_COLLECT_PENDING_BYTES) {
        int rc = send_rows(op, SL_MIN(st->nrows, SL_COLLECT_BATCH_ROWS), 0);
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
    return got == (ssize_t)sizeof x && st->nrows > 0 ? send_available(op, 1) : SL_OK;
}

static int collect_end_input(sl_op *op, int input)
{
    (void)input;
    collect_state *st = op->priv;
    if (op->inputs_ended < op->nin || st->ended) return SL_OK;
    st->ended = 1;
    int rc;
    do
        rc = send_rows(op, SL_COLLECT_BATCH_ROWS, 1); /* the last batch carries the end */
    while (rc == SL_OK && st->nrows > 0);
    op->proc_time_at = INT64_MAX;
    publish(op);
    return rc == SL_DONE ? SL_OK : rc;
}

/* Operator state: the rows taken but not sent yet. */
static int collect_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    (void)cpid;
    collect_state *st = op->priv;
    *len = st->len - st->head;
    *blob = NULL;
    if (*len) {
        *blob = sl_malloc(*len);
        memcpy(*blob, st->buf + st->head, *len);
    }
    return SL_OK;
}

static int collect_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    collect_state *st = op->priv;
    for (int i = 0; i < nblobs; i++) {
        if (!lens[i]) continue;
        const char *p = blobs[i];
        if (p[lens[i] - 1] != '\n')
            return sl_op_fail(op, "collect: damaged state (a row without its end)");
        put(st, p, lens[i]);
        for (size_t j = 0; j < lens[i]; j++) st->nrows += p[j] == '\n';
    }
    if (st->nrows) op->proc_time_at = sl_op_processing_time(op) + COLLECT_LINGER_MS;
    return SL_OK;
}

static void collect_close(sl_op *op)
{
    collect_state *st = op->priv;
    if (!st) return;
    if (st->fd >= 0) sl_op_unwatch_fd(op, st->fd);
    free(st->buf);
    free(st);
    op->priv = NULL;
}

static const char *const collect_options[] = {NULL};

const sl_op_def sl_op_collect = {
    .abi = SL_OP_ABI_VERSION,
    .name = "collect",
    .flags = SL_OPF_SINK,
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
};
