/*
 * blackhole.c -- the `blackhole` sink: accepts rows and discards them.
 *
 * With `sink.rows-per-second` it is also a deliberately slow sink, so tests
 * and demos can create backpressure on demand. Rows are paced against a
 * schedule (row k is due k / rate after the first): the clock is looked at
 * once per slice of about a millisecond's worth of rows, and the thread
 * sleeps only when it is more than a millisecond ahead, so the cost is one
 * clock read and at most one sleep per slice, never a system call per row.
 * A sink that fell behind (its input was slow) may catch up by at most one
 * second's worth of rows, so a pause upstream does not earn a burst.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "jobgraph.h"
#include "operator.h"

typedef struct blackhole_plan {
    int64_t rows_per_second; /* whole sink; 0 = unthrottled */
} blackhole_plan;

typedef struct blackhole_state {
    double ns_per_row;   /* this subtask's pace */
    uint64_t slice;      /* rows between clock reads */
    uint64_t pending;    /* rows since the last clock read */
    int64_t base_ns;     /* schedule anchor (sl_mono_ns) */
    uint64_t base_count; /* rows counted at base_ns */
    uint64_t count;      /* rows seen */
} blackhole_state;

static void blackhole_plan_free(void *p) { free(p); }

static void *blackhole_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    int64_t rate = sl_plan_opt_int(pc, "sink.rows-per-second");
    if (rate < 0 || (rate == 0 && sl_plan_opt_isset(pc, "sink.rows-per-second"))) {
        sl_seterr(err, errlen, "vertex '%s': option 'sink.rows-per-second' must be positive",
                  v->id);
        return NULL;
    }
    blackhole_plan *pl = sl_calloc(1, sizeof *pl);
    pl->rows_per_second = rate;
    return pl;
}

static int blackhole_open(sl_op *op)
{
    const blackhole_plan *pl = op->plan;
    blackhole_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    if (pl->rows_per_second > 0) {
        int p = op->parallelism > 0 ? op->parallelism : 1;
        double per_subtask = (double)pl->rows_per_second / p;
        st->ns_per_row = 1e9 / per_subtask;
        st->slice = (uint64_t)(per_subtask / 1000.0); /* ~1 ms of rows */
        if (st->slice < 1) st->slice = 1;
        st->base_ns = -1; /* anchored at the first row */
    }
    return SL_OK;
}

static void sleep_until(int64_t mono_ns)
{
    struct timespec ts = {(time_t)(mono_ns / 1000000000), (long)(mono_ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static int blackhole_process(sl_op *op, int input, sl_row *row)
{
    blackhole_state *st = op->priv;
    if (st->ns_per_row == 0) return SL_OK;
    st->count++;
    if (++st->pending < st->slice) return SL_OK;
    st->pending = 0;

    int64_t now = sl_mono_ns();
    if (st->base_ns < 0) {
        st->base_ns = now;
        st->base_count = st->count;
        return SL_OK;
    }
    int64_t due = st->base_ns + (int64_t)((double)(st->count - st->base_count) * st->ns_per_row);
    if (due - now > 1000000) {
        sleep_until(due);
    } else if (now - due > 1000000000) {
        /* Behind by more than a second: forgive all but one second. */
        st->base_ns = now - 1000000000;
        st->base_count = st->count;
    }
    return SL_OK;
}

static void blackhole_close(sl_op *op)
{
    free(op->priv);
    op->priv = NULL;
}

static const sl_op_option blackhole_options[] = {
    {"sink.rows-per-second", SL_CT_INT, NULL, NULL,
     "Rate limit of the sink, rows per second per subtask (positive); unset: no limit."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_blackhole = {
    .abi = SL_OP_ABI_VERSION,
    .name = "blackhole",
    .flags = SL_OPF_SINK,
    .options = blackhole_options,
    .plan = blackhole_plan_new,
    .plan_free = blackhole_plan_free,
    .open = blackhole_open,
    .process = blackhole_process,
    .close = blackhole_close,
};
