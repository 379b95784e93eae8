/*
 * print.c -- the `print` sink: each row as one line, in Flink's format.
 *
 *   +I[2, 2, 2026-01-01T00:00:00.020]
 *
 * The row kind's short name, then the values (formatted by sl_value_format,
 * i.e. as Java's toString would show them) joined by ", ". Like Flink, a
 * `print-identifier` prefixes "ident> ", a parallel sink prefixes the
 * 1-based subtask "2> ", and both together give "ident:2> ".
 * `standard-error` = true writes to stderr instead of op->out_stream (the
 * TaskManager's stdout).
 *
 * Each line is built in a buffer owned by the subtask (grown only when a row
 * is longer than any before it) and handed to the stream in one fwrite, so
 * lines from several print subtasks sharing the TaskManager's stdout never
 * interleave. The stream's own buffer collects the lines; it is flushed when
 * 100 ms have passed since the last flush (looked up on a coarse clock that
 * costs no system call), on end of input and on close. A line that arrives
 * after a quiet spell therefore waits at most until the next row, the end of
 * input, or the TaskManager flushing its stdout.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "config.h"
#include "jobgraph.h"
#include "buf.h"
#include "operator.h"

#define PRINT_FLUSH_NS (100 * 1000000LL)

typedef struct print_plan {
    char *ident;    /* print-identifier, NULL when absent or empty */
    bool to_stderr; /* standard-error */
} print_plan;

typedef struct print_state {
    FILE *out;
    char prefix[160]; /* "ident:2> " */
    size_t prefix_len;
    sl_buf line;      /* the line being built */
    int64_t last_flush_ns;
} print_state;

static void print_plan_free(void *p)
{
    print_plan *pl = p;
    if (!pl) return;
    free(pl->ident);
    free(pl);
}

static void *print_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    json_t *jid = json_object_get(v->config, "print-identifier");
    if (jid && !json_is_string(jid)) {
        sl_seterr(err, errlen, "vertex '%s': option 'print-identifier' must be a string", v->id);
        return NULL;
    }
    bool to_stderr = false;
    json_t *jse = json_object_get(v->config, "standard-error");
    if (jse) {
        int b = 0;
        if (json_is_boolean(jse)) b = json_is_true(jse);
        else if (!json_is_string(jse) || sl_parse_bool(json_string_value(jse), &b) != SL_OK) {
            sl_seterr(err, errlen, "vertex '%s': option 'standard-error' must be true or false",
                      v->id);
            return NULL;
        }
        to_stderr = b != 0;
    }
    print_plan *pl = sl_calloc(1, sizeof *pl);
    const char *id = jid ? json_string_value(jid) : "";
    if (id[0]) pl->ident = sl_strndup(id, strnlen(id, 120));
    pl->to_stderr = to_stderr;
    return pl;
}

static int64_t coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int print_open(sl_op *op)
{
    const print_plan *pl = op->plan;
    print_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->out = pl->to_stderr ? stderr : op->out_stream ? op->out_stream : stdout;
    int n;
    if (pl->ident && op->parallelism > 1)
        n = snprintf(st->prefix, sizeof st->prefix, "%s:%d> ", pl->ident, op->subtask + 1);
    else if (pl->ident)
        n = snprintf(st->prefix, sizeof st->prefix, "%s> ", pl->ident);
    else if (op->parallelism > 1)
        n = snprintf(st->prefix, sizeof st->prefix, "%d> ", op->subtask + 1);
    else
        n = 0;
    st->prefix_len = (size_t)n;
    sl_buf_reserve(&st->line, 256);
    st->last_flush_ns = coarse_ns();
    return SL_OK;
}

static int print_flush(sl_op *op, print_state *st)
{
    st->last_flush_ns = coarse_ns();
    if (fflush(st->out) != 0)
        return sl_op_fail(op, "print: cannot write to %s", st->out == stderr ? "stderr" : "stdout");
    return SL_OK;
}

static int print_process(sl_op *op, int input, sl_row *row)
{
    print_state *st = op->priv;
    const sl_schema *s = op->in;
    sl_buf *b = &st->line;
    sl_buf_reset(b);
    sl_buf_put(b, st->prefix, st->prefix_len);
    sl_buf_put(b, sl_rowkind_short(row->kind), 2);
    sl_buf_putc(b, '[');
    for (int i = 0; i < row->n && i < s->n; i++) {
        if (i) sl_buf_put(b, ", ", 2);
        const sl_value *v = &row->vals[i];
        sl_type t = s->fields[i].type;
        if (!v->isnull && t == SL_T_STRING) {
            sl_buf_put(b, v->v.s.p, v->v.s.len); /* no copy through a formatter */
            continue;
        }
        char *room = sl_buf_room(b, 64);
        const sl_dtype *dt = s->fields[i].dt;
        int n = sl_value_format_dt(room, b->cap - b->len, v, dt);
        if ((size_t)n >= b->cap - b->len) {
            room = sl_buf_room(b, (size_t)n + 1);
            n = sl_value_format_dt(room, b->cap - b->len, v, dt);
        }
        sl_buf_added(b, (size_t)n);
    }
    sl_buf_put(b, "]\n", 2);
    if (fwrite(b->p, 1, b->len, st->out) != b->len)
        return sl_op_fail(op, "print: cannot write to %s", st->out == stderr ? "stderr" : "stdout");
    if (coarse_ns() - st->last_flush_ns >= PRINT_FLUSH_NS) return print_flush(op, st);
    return SL_OK;
}

static int print_end_input(sl_op *op, int input)
{
    return print_flush(op, op->priv);
}

static void print_close(sl_op *op)
{
    print_state *st = op->priv;
    if (!st) return;
    fflush(st->out);
    sl_buf_free(&st->line);
    free(st);
    op->priv = NULL;
}

static const sl_op_option print_options[] = {
    {"print-identifier", SL_CT_STRING, NULL, NULL,
     "Prefix of every printed line."},
    {"standard-error", SL_CT_STRING, NULL, NULL,
     "true: print to the TaskManager's standard error instead of its output."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_print = {
    .abi = SL_OP_ABI_VERSION,
    .name = "print",
    .flags = SL_OPF_SINK,
    .options = print_options,
    .plan = print_plan_new,
    .plan_free = print_plan_free,
    .open = print_open,
    .process = print_process,
    .end_input = print_end_input,
    .close = print_close,
};
