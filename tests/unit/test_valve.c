/*
 * test_valve.c -- a consumer's input channels (runtime/valve.c): the first
 * word of every channel before anything is judged, idle channels left out
 * of the minimum, an idle channel that speaks again below the watermark
 * (unaligned until it catches up, then back in the minimum), the largest
 * watermark when the last aligned channel goes idle, ended channels, and
 * per-input idleness of a two-input operator. A test operator says, per
 * row, whether the runtime's watermark makes it late; watermarks and
 * idleness the runtime forwards are traced as text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl_test.h"
#include "runtime.h"
#include "valve.h"

static char trace[4096];

static void say(const char *fmt, long long a, long long b)
{
    size_t o = strlen(trace);
    snprintf(trace + o, sizeof trace - o, o ? " " : "");
    o = strlen(trace);
    snprintf(trace + o, sizeof trace - o, fmt, a, b);
}

/* "late?": one or two inputs (ts BIGINT); each row is traced as
 * "r<input>:<ts>" with "L" appended when ts <= the current watermark. */
static void *lt_plan(sl_plan_ctx *pc, char *err, size_t errlen)
{
    SL_UNUSED(err);
    SL_UNUSED(errlen);
    sl_schema_copy(pc->out, pc->in[0].schema);
    return sl_calloc(1, 1);
}

static int lt_process(sl_op *op, int input, sl_row *row)
{
    say(row->ts <= op->current_watermark ? "r%lld:%lldL" : "r%lld:%lld", input, row->ts);
    return SL_OK;
}

static const sl_op_def lt = {
    .abi = SL_OP_ABI_VERSION, .name = "late?", .max_inputs = 2,
    .plan = lt_plan, .plan_free = free, .process = lt_process,
};

static int on_wm(void *ctx, int64_t wm)
{
    SL_UNUSED(ctx);
    say("wm%lld", wm == INT64_MAX ? -1 : wm, 0);
    return SL_OK;
}

static int on_idle(void *ctx, int idle)
{
    SL_UNUSED(ctx);
    say("idle%lld", idle, 0);
    return SL_OK;
}

static int on_row(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(ctx);
    SL_UNUSED(output);
    SL_UNUSED(row);
    return SL_OK;
}

typedef struct fixture {
    sl_vertex v;
    sl_op op;
    sl_schema in[2];
    int nin;
    sl_valve valve;
    int chan_input[4];
    char err[400];
} fixture;

/* nin inputs; channel c reads input chan_input[c] (nchan channels). */
static void fx_open(fixture *f, int nin, int nchan, const int *chan_input)
{
    memset(f, 0, sizeof *f);
    trace[0] = 0;
    f->v.id = (char *)"t";
    f->v.def = &lt;
    f->v.parallelism = 1;
    f->nin = nin;
    for (int i = 0; i < nin; i++) {
        sl_schema_init(&f->in[i]);
        sl_schema_add(&f->in[i], "ts", SL_T_BIGINT);
    }
    SL_ASSERT(sl_vertex_plan(&f->v, nin, f->in, NULL, f->err, sizeof f->err) == SL_OK);
    sl_rt_init(&f->op, &f->v, 0, 128);
    f->op.emit = on_row;
    f->op.emit_wm = on_wm;
    f->op.emit_idle = on_idle;
    f->op.task_name = "t (1/1)";
    SL_ASSERT(sl_rt_open(&f->op, SL_BACKEND_HASHMAP, NULL) == SL_OK);
    memcpy(f->chan_input, chan_input, (size_t)nchan * sizeof(int));
    sl_valve_init(&f->valve, nchan, f->chan_input);
}

static void fx_close(fixture *f)
{
    sl_valve_free(&f->valve);
    sl_rt_close(&f->op);
    sl_vertex_plan_free(&f->v);
    for (int i = 0; i < f->nin; i++) sl_schema_free(&f->in[i]);
}

static void row(fixture *f, int c, int64_t ts)
{
    sl_value v[1] = {{.v.i = ts}};
    sl_row r = {SL_KIND_INSERT, 1, v, ts};
    SL_ASSERT(sl_rt_process(&f->op, f->chan_input[c], &r) == SL_OK);
}

static int wm(fixture *f, int c, int64_t w) { return sl_valve_watermark(&f->valve, &f->op, c, w); }
static int status(fixture *f, int c, int idle) { return sl_valve_status(&f->valve, &f->op, c, idle); }

static const int one_input[4] = {0, 0, 0, 0};

/* Nothing moves before every channel has spoken; a reader without a split
 * says idle as its first word and then holds nothing back. */
static void test_first_word(void)
{
    static fixture f;
    fx_open(&f, 1, 2, one_input);
    CHECK(!sl_valve_ready(&f.valve));
    CHECK_EQ_INT(status(&f, 0, 0), SL_OK); /* active, at the lowest watermark */
    CHECK(sl_valve_spoke(&f.valve, 0) && !sl_valve_spoke(&f.valve, 1));
    CHECK_EQ_INT(wm(&f, 0, 100), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, INT64_MIN); /* channel 1 may still be below */
    CHECK(!sl_valve_ready(&f.valve));
    CHECK_EQ_INT(status(&f, 1, 1), SL_OK);
    CHECK(sl_valve_ready(&f.valve));
    CHECK_EQ_INT(f.op.current_watermark, 100);
    row(&f, 0, 90);
    row(&f, 0, 150);
    CHECK_EQ_INT(sl_valve_end(&f.valve, &f.op, 1), SL_OK); /* the idle reader ends: no change */
    CHECK_EQ_INT(wm(&f, 0, 200), SL_OK);
    CHECK_EQ_STR(trace, "wm100 r0:90L r0:150 wm200");
    fx_close(&f);
}

/* An end is a first word too (an empty file's reader ends at once). */
static void test_end_is_a_first_word(void)
{
    static fixture f;
    fx_open(&f, 1, 2, one_input);
    CHECK_EQ_INT(status(&f, 0, 0), SL_OK);
    CHECK_EQ_INT(wm(&f, 0, 100), SL_OK);
    CHECK_EQ_INT(wm(&f, 1, INT64_MAX), SL_OK);
    CHECK(sl_valve_ready(&f.valve));
    CHECK_EQ_INT(sl_valve_end(&f.valve, &f.op, 1), SL_OK);
    CHECK(sl_valve_ended(&f.valve, 1));
    CHECK_EQ_INT(f.op.current_watermark, 100);
    CHECK_EQ_STR(trace, "wm100");
    fx_close(&f);
}

/* An idle channel that becomes active again below the input's watermark:
 * its rows are judged against that watermark and it holds nothing back
 * until its own watermark reaches it; then it is in the minimum again. */
static void test_idle_channel_becomes_active_again(void)
{
    static fixture f;
    fx_open(&f, 1, 2, one_input);
    CHECK_EQ_INT(status(&f, 0, 0), SL_OK);
    CHECK_EQ_INT(status(&f, 1, 1), SL_OK);
    CHECK_EQ_INT(wm(&f, 0, 100), SL_OK);
    CHECK_EQ_INT(wm(&f, 1, 5000), SL_OK); /* idle: says nothing of time */
    CHECK_EQ_INT(status(&f, 1, 0), SL_OK); /* active again at the lowest watermark */
    row(&f, 1, 60);                       /* late: the input is at 100 */
    CHECK_EQ_INT(wm(&f, 0, 200), SL_OK);  /* not held back by channel 1 */
    CHECK_EQ_INT(wm(&f, 1, 150), SL_OK);  /* still behind 200 */
    CHECK_EQ_INT(wm(&f, 0, 300), SL_OK);
    CHECK_EQ_INT(wm(&f, 1, 350), SL_OK);  /* caught up: in the minimum again */
    CHECK_EQ_INT(wm(&f, 0, 400), SL_OK);  /* min(400, 350) */
    CHECK_EQ_INT(f.op.current_watermark, 350);
    CHECK_EQ_INT(wm(&f, 1, 500), SL_OK);  /* min(400, 500) */
    CHECK_EQ_STR(trace, "wm100 r0:60L wm200 wm300 wm350 wm400");
    fx_close(&f);
}

/* The last aligned channel going idle moves the input to the largest
 * watermark its channels reached, then the output goes idle; whatever the
 * order in which they went quiet. */
static void test_all_idle_takes_the_largest(void)
{
    static fixture f;
    fx_open(&f, 1, 2, one_input);
    CHECK_EQ_INT(wm(&f, 0, 100), SL_OK);
    CHECK_EQ_INT(wm(&f, 1, 50), SL_OK);
    CHECK_EQ_INT(status(&f, 0, 1), SL_OK); /* 50 still holds */
    CHECK_EQ_INT(f.op.current_watermark, 50);
    CHECK_EQ_INT(status(&f, 1, 1), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, 100);
    CHECK(f.valve.all_idle);
    CHECK_EQ_INT(status(&f, 0, 0), SL_OK); /* at 100: aligned at once */
    CHECK_EQ_INT(wm(&f, 0, 120), SL_OK);
    CHECK_EQ_STR(trace, "wm50 wm100 idle1 idle0 wm120");
    fx_close(&f);
}

/* With two inputs, an input whose channels are all idle is left out of the
 * operator's minimum; the output is idle only when every channel is. */
static void test_two_inputs(void)
{
    static fixture f;
    static const int two[4] = {0, 0, 1, 1};
    fx_open(&f, 2, 4, two);
    CHECK_EQ_INT(wm(&f, 0, 100), SL_OK);
    CHECK_EQ_INT(wm(&f, 1, 80), SL_OK);
    CHECK_EQ_INT(status(&f, 2, 1), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, INT64_MIN); /* channel 3 has not spoken */
    CHECK_EQ_INT(status(&f, 3, 1), SL_OK);            /* input 1 idle */
    CHECK_EQ_INT(f.op.current_watermark, 80);
    row(&f, 2, 70); /* input 1's rows are judged by the operator's watermark */
    CHECK_EQ_INT(sl_valve_end(&f.valve, &f.op, 1), SL_OK); /* input 0: channel 0 alone */
    CHECK_EQ_INT(f.op.current_watermark, 100);
    CHECK_EQ_INT(status(&f, 0, 1), SL_OK); /* every live channel idle */
    CHECK_EQ_STR(trace, "wm80 r1:70L wm100 idle1");
    fx_close(&f);
}

/* The end of an idle reader (or stop-with-drain): the producer says active
 * and then the maximum watermark, which counts; while idle it would not. */
static void test_idle_channel_ends_with_the_maximum(void)
{
    static fixture f;
    fx_open(&f, 1, 2, one_input);
    CHECK_EQ_INT(status(&f, 0, 0), SL_OK);
    CHECK_EQ_INT(status(&f, 1, 1), SL_OK);
    CHECK_EQ_INT(wm(&f, 0, 100), SL_OK);
    CHECK_EQ_INT(status(&f, 0, 1), SL_OK); /* every channel idle */
    CHECK_EQ_INT(wm(&f, 0, INT64_MAX), SL_OK); /* ignored while idle */
    CHECK_EQ_INT(f.op.current_watermark, 100);
    CHECK_EQ_INT(status(&f, 0, 0), SL_OK);
    CHECK_EQ_INT(wm(&f, 0, INT64_MAX), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, INT64_MAX);
    CHECK_EQ_STR(trace, "wm100 idle1 idle0 wm-1");
    fx_close(&f);
}

SL_TEST_MAIN(SL_TEST(test_idle_channel_ends_with_the_maximum), SL_TEST(test_first_word), SL_TEST(test_end_is_a_first_word),
             SL_TEST(test_idle_channel_becomes_active_again), SL_TEST(test_all_idle_takes_the_largest),
             SL_TEST(test_two_inputs))
