/*
 * collect.c -- the `collect` sink: the rows of a plain SQL SELECT, sent to
 * the JobManager for the client that reads the job's results
 * (GET /jobs/:jobid/results; `sluice sql` and the SQL gateway).
 *
 * Each row becomes one JSON array of its kind and its values as the SQL
 * client shows them: ["+I", "1", "Bob", null] (TIMESTAMP as
 * 2026-01-01 00:00:00.000, always with milliseconds; DOUBLE as Java writes
 * it; NULL as null). Rows
 * are gathered into a batch in a buffer the subtask owns (no allocation per
 * row) and sent when the batch holds SL_COLLECT_BATCH_ROWS rows or
 * SL_COLLECT_BATCH_BYTES bytes, 100 ms after its first row, and at the end
 * of input (with the end mark). Sending waits for credit (common/collect.h):
 * a client that does not read backpressures the job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "jobgraph.h"
#include "operator.h"

#define COLLECT_LINGER_MS 100

typedef struct collect_state {
    char *buf;
    size_t len, cap;
    int nrows;
    int ended;
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
    op->priv = st;
    return SL_OK;
}

static void put(collect_state *st, const char *s, size_t n)
{
    if (st->len + n + 1 > st->cap) {
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

static int flush_batch(sl_op *op, int end)
{
    collect_state *st = op->priv;
    if (!st->nrows && !end) return SL_OK;
    char err[256];
    int rc = sl_collect_send(st->buf, st->len, st->nrows, end, err, sizeof err);
    st->len = 0;
    st->nrows = 0;
    op->proc_time_at = INT64_MAX;
    if (rc == SL_ERR) return sl_op_fail(op, "%s", err);
    return SL_OK; /* SL_DONE: the job is being cancelled; nobody reads any more */
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
    if (++st->nrows == 1) op->proc_time_at = sl_op_processing_time(op) + COLLECT_LINGER_MS;
    if (st->nrows >= SL_COLLECT_BATCH_ROWS || st->len >= SL_COLLECT_BATCH_BYTES)
        return flush_batch(op, 0);
    return SL_OK;
}

static int collect_proc_time(sl_op *op, int64_t now_ms)
{
    (void)now_ms;
    return flush_batch(op, 0);
}

static int collect_end_input(sl_op *op, int input)
{
    (void)input;
    collect_state *st = op->priv;
    if (op->inputs_ended < op->nin || st->ended) return SL_OK;
    st->ended = 1;
    return flush_batch(op, 1);
}

static void collect_close(sl_op *op)
{
    collect_state *st = op->priv;
    if (!st) return;
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
    .close = collect_close,
};
