/*
 * test_watermark.c -- unit tests for the watermark assigner
 * (operators/watermark.c).
 *
 * Each test plans a `watermark` vertex from a JSON config against the input
 * schema (user_id BIGINT, ts TIMESTAMP), opens it on a hand-made sl_op and
 * drives process / proc_time / watermark directly, with the wall clock
 * passed in by the test. The downstream callbacks append every event to one
 * log -- "row +I[1, 2026-08-19T15:00:07] ts=7000", "wm 1999", "idle 1" --
 * so each test compares the whole sequence against literal text worked out
 * by hand from the rule: watermark = max timestamp - delay - 1 ms, emitted
 * at a tick only when it advanced.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobgraph.h"
#include "operator.h"
#include "sl_test.h"

extern const sl_op_def sl_op_watermark;

/* 2026-08-19T15:00:00Z in ms since the epoch. */
#define T0 1787151600000LL

__attribute__((weak)) int sl_op_fail(sl_op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->err, sizeof op->err, fmt, ap);
    va_end(ap);
    return SL_ERR;
}

typedef struct harness {
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    sl_op op;
    char log[4096];
    size_t loglen;
    char err[400];
} harness;

static void logf_(harness *h, const char *fmt, ...) SL_PRINTF(2, 3);
static void logf_(harness *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(h->log + h->loglen, sizeof h->log - h->loglen, fmt, ap);
    va_end(ap);
    if (n > 0) h->loglen = SL_MIN(h->loglen + (size_t)n, sizeof h->log - 1);
}

static int on_row(void *ctx, int output, sl_row *row)
{
    harness *h = ctx;
    logf_(h, "%srow %s[", h->loglen ? "; " : "", sl_rowkind_short(row->kind));
    for (int i = 0; i < row->n; i++) {
        char buf[64];
        sl_value_format(buf, sizeof buf, &row->vals[i], h->out.fields[i].type);
        logf_(h, "%s%s", i ? ", " : "", buf);
    }
    logf_(h, "] ts=%lld", (long long)(row->ts - T0));
    return SL_OK;
}

static int on_wm(void *ctx, int64_t wm)
{
    harness *h = ctx;
    if (wm == INT64_MAX) logf_(h, "%swm MAX", h->loglen ? "; " : "");
    else logf_(h, "%swm %lld", h->loglen ? "; " : "", (long long)(wm - T0));
    return SL_OK;
}

static int on_idle(void *ctx, int idle)
{
    harness *h = ctx;
    logf_(h, "%sidle %d", h->loglen ? "; " : "", idle);
    return SL_OK;
}

static bool plan(harness *h, const char *config)
{
    memset(h, 0, sizeof *h);
    h->v.id = (char *)"wm";
    h->v.type = (char *)"watermark";
    h->v.def = &sl_op_watermark;
    h->v.config = sl_test_config(config);
    sl_schema_init(&h->in);
    sl_schema_add(&h->in, "user_id", SL_T_BIGINT);
    sl_schema_add(&h->in, "ts", SL_T_TIMESTAMP);
    h->plan = sl_test_plan(&sl_op_watermark, &h->v, &h->in, &h->out, h->err, sizeof h->err);
    return h->plan != NULL;
}

static void open_op(harness *h)
{
    h->op.def = &sl_op_watermark;
    h->op.vertex = &h->v;
    h->op.plan = h->plan;
    h->op.parallelism = 1;
    h->op.in = &h->in;
    h->op.out = &h->out;
    h->op.emit = on_row;
    h->op.emit_wm = on_wm;
    h->op.emit_idle = on_idle;
    h->op.emit_ctx = h;
    h->op.proc_time_at = INT64_MAX;
    h->op.current_watermark = INT64_MIN;
    h->op.task_name = "wm (1/1)";
    if (sl_op_watermark.open(&h->op) != SL_OK) {
        fprintf(stderr, "open failed: %s\n", h->op.err);
        abort();
    }
}

static void done(harness *h)
{
    if (h->op.priv) sl_op_watermark.close(&h->op);
    if (h->plan) sl_op_watermark.plan_free(h->plan);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
}

/* Feed (user_id, T0 + offset ms); returns process()'s result. */
static int feed(harness *h, int64_t user, int64_t off_ms)
{
    sl_value vals[2] = {{.v.i = user}, {.v.i = T0 + off_ms}};
    sl_row row = {.kind = SL_KIND_INSERT, .n = 2, .vals = vals, .ts = SL_TS_NONE};
    return sl_op_watermark.process(&h->op, 0, &row);
}

static int tick(harness *h, int64_t now)
{
    return sl_op_watermark.proc_time(&h->op, now);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_plan_errors(void)
{
    harness h;
    CHECK(!plan(&h, "{}"));
    CHECK_EQ_STR(h.err, "vertex 'wm': option 'column' (the TIMESTAMP column that holds event "
                        "time) is required");
    done(&h);
    CHECK(!plan(&h, "{\"column\": \"tss\"}"));
    CHECK_EQ_STR(h.err, "vertex 'wm': column 'tss' is not in the input");
    done(&h);
    CHECK(!plan(&h, "{\"column\": \"user_id\"}"));
    CHECK_EQ_STR(h.err, "vertex 'wm': column 'user_id' is BIGINT; a watermark needs a TIMESTAMP "
                        "column (use TO_TIMESTAMP_LTZ(x, 3) in a calc first)");
    done(&h);
    CHECK(!plan(&h, "{\"column\": \"ts\", \"delay\": \"5 parsecs\"}"));
    const char *want = "vertex 'wm': option 'delay': invalid interval '5 parsecs'";
    CHECK(strncmp(h.err, want, strlen(want)) == 0);
    done(&h);
    CHECK(!plan(&h, "{\"column\": \"ts\", \"idle-timeout\": [1]}"));
    CHECK_EQ_STR(h.err, "vertex 'wm': option 'idle-timeout' must be a duration like '5 s'");
    done(&h);
    /* the output schema is the input's */
    CHECK(plan(&h, "{\"column\": \"ts\", \"delay\": \"INTERVAL '5' SECOND\"}"));
    CHECK(sl_schema_equal(&h.in, &h.out));
    done(&h);
}

/* Rows pass through stamped; ticks emit max - delay - 1 only when it moved. */
static void test_bounded_out_of_orderness(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\", \"delay\": \"5 s\"}"));
    open_op(&h);
    int64_t now = 1000000;
    CHECK_EQ_INT(tick(&h, now), SL_OK); /* nothing seen: no watermark */
    CHECK_EQ_INT(h.op.proc_time_at, now + 200);
    CHECK_EQ_INT(feed(&h, 1, 7000), SL_OK);
    CHECK_EQ_INT(feed(&h, 2, 3000), SL_OK);
    CHECK_EQ_INT(tick(&h, now + 200), SL_OK);
    CHECK_EQ_INT(feed(&h, 3, 6999), SL_OK); /* behind the max: no advance */
    CHECK_EQ_INT(tick(&h, now + 400), SL_OK);
    CHECK_EQ_INT(feed(&h, 4, 9500), SL_OK);
    CHECK_EQ_INT(tick(&h, now + 600), SL_OK);
    CHECK_EQ_STR(h.log, "row +I[1, 2026-08-19T15:00:07] ts=7000; "
                        "row +I[2, 2026-08-19T15:00:03] ts=3000; "
                        "wm 1999; "
                        "row +I[3, 2026-08-19T15:00:06.999] ts=6999; "
                        "row +I[4, 2026-08-19T15:00:09.500] ts=9500; "
                        "wm 4499");
    CHECK_EQ_INT(h.op.proc_time_at, now + 800);
    done(&h);
}

/* interval 0: a watermark right after each row that advances it. */
static void test_interval_zero(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\", \"delay\": 1000, \"interval\": \"0 ms\"}"));
    open_op(&h);
    CHECK_EQ_INT(h.op.proc_time_at, INT64_MAX); /* no ticks needed */
    CHECK_EQ_INT(feed(&h, 1, 5000), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, 4000), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, 5001), SL_OK);
    CHECK_EQ_STR(h.log, "row +I[1, 2026-08-19T15:00:05] ts=5000; wm 3999; "
                        "row +I[1, 2026-08-19T15:00:04] ts=4000; "
                        "row +I[1, 2026-08-19T15:00:05.001] ts=5001; wm 4000");
    done(&h);
}

/* "rule": "sql" (what the SQL planner sets): Flink SQL's watermark
 * max - delay, no "- 1 ms"; the default stays the DataStream rule above. */
static void test_sql_rule(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\", \"delay\": 1000, \"interval\": \"0 ms\", "
                   "\"rule\": \"sql\"}"));
    open_op(&h);
    CHECK_EQ_INT(feed(&h, 1, 5000), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, 4000), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, 5001), SL_OK);
    CHECK_EQ_STR(h.log, "row +I[1, 2026-08-19T15:00:05] ts=5000; wm 4000; "
                        "row +I[1, 2026-08-19T15:00:04] ts=4000; "
                        "row +I[1, 2026-08-19T15:00:05.001] ts=5001; wm 4001");
    done(&h);
    CHECK(!plan(&h, "{\"column\": \"ts\", \"rule\": \"flink\"}"));
    CHECK(strstr(h.err, "rule") != NULL);
    done(&h);
}

/* Idle after idle-timeout without rows (judged at ticks); active again on
 * the next row, before the row goes out. */
static void test_idleness(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\", \"delay\": \"0 s\", \"idle-timeout\": \"1 s\", "
                   "\"interval\": \"200 ms\"}"));
    open_op(&h);
    int64_t now = 5000000;
    CHECK_EQ_INT(feed(&h, 1, 100), SL_OK);
    CHECK_EQ_INT(tick(&h, now), SL_OK); /* rows seen: active at `now` */
    for (int64_t t = now + 200; t < now + 1000; t += 200) CHECK_EQ_INT(tick(&h, t), SL_OK);
    CHECK(strstr(h.log, "idle") == NULL);
    CHECK_EQ_INT(tick(&h, now + 1000), SL_OK); /* 1 s without rows */
    CHECK_EQ_INT(tick(&h, now + 1200), SL_OK); /* stays idle, said once */
    CHECK_EQ_INT(feed(&h, 1, 300), SL_OK);
    CHECK_EQ_INT(tick(&h, now + 1400), SL_OK);
    CHECK_EQ_INT(tick(&h, now + 2200), SL_OK); /* 800 ms since the row: active */
    CHECK_EQ_STR(h.log, "row +I[1, 2026-08-19T15:00:00.100] ts=100; wm 99; idle 1; idle 0; "
                        "row +I[1, 2026-08-19T15:00:00.300] ts=300; wm 299");
    done(&h);
}

/* Idleness also from the start: a source that never speaks goes idle. */
static void test_idle_from_start(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\", \"idle-timeout\": \"500 ms\"}"));
    open_op(&h);
    CHECK_EQ_INT(tick(&h, 100), SL_OK);
    CHECK_EQ_INT(tick(&h, 300), SL_OK);
    CHECK_EQ_STR(h.log, "");
    CHECK_EQ_INT(tick(&h, 600), SL_OK);
    CHECK_EQ_STR(h.log, "idle 1");
    done(&h);
}

/* Upstream watermarks are ignored except the end of input, which goes
 * through once; no periodic watermark follows it. */
static void test_end_of_input(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\", \"delay\": \"2 s\"}"));
    open_op(&h);
    CHECK_EQ_INT(feed(&h, 1, 10000), SL_OK);
    CHECK_EQ_INT(sl_op_watermark.watermark(&h.op, 0, T0 + 50000), SL_OK);
    CHECK_EQ_INT(sl_op_watermark.watermark(&h.op, 0, INT64_MAX), SL_OK);
    CHECK_EQ_INT(h.op.proc_time_at, INT64_MAX);
    CHECK_EQ_INT(tick(&h, 1000), SL_OK);
    CHECK_EQ_INT(sl_op_watermark.watermark(&h.op, 0, INT64_MAX), SL_OK);
    CHECK_EQ_STR(h.log, "row +I[1, 2026-08-19T15:00:10] ts=10000; wm MAX");
    done(&h);
}

/* A NULL rowtime fails the task with a message naming vertex and column. */
static void test_null_timestamp_fails(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\"}"));
    open_op(&h);
    sl_value vals[2] = {{.v.i = 1}, {.isnull = true}};
    sl_row row = {.kind = SL_KIND_INSERT, .n = 2, .vals = vals, .ts = SL_TS_NONE};
    CHECK_EQ_INT(sl_op_watermark.process(&h.op, 0, &row), SL_ERR);
    CHECK_EQ_STR(h.op.err, "vertex 'wm': column 'ts' is NULL in a row; an event-time column "
                           "must not be NULL (filter such rows out or COALESCE the column "
                           "upstream)");
    CHECK_EQ_STR(h.log, "");
    done(&h);
}

/* Without the runtime's idleness hook the operator still works. */
static void test_no_idle_hook(void)
{
    harness h;
    CHECK(plan(&h, "{\"column\": \"ts\", \"idle-timeout\": 100}"));
    open_op(&h);
    h.op.emit_idle = NULL;
    CHECK_EQ_INT(tick(&h, 0), SL_OK);
    CHECK_EQ_INT(tick(&h, 200), SL_OK);
    CHECK_EQ_INT(feed(&h, 7, 0), SL_OK);
    CHECK_EQ_STR(h.log, "row +I[7, 2026-08-19T15:00] ts=0");
    done(&h);
}

SL_TEST_MAIN(SL_TEST(test_plan_errors), SL_TEST(test_bounded_out_of_orderness),
             SL_TEST(test_interval_zero), SL_TEST(test_sql_rule), SL_TEST(test_idleness),
             SL_TEST(test_idle_from_start),
             SL_TEST(test_end_of_input), SL_TEST(test_null_timestamp_fails),
             SL_TEST(test_no_idle_hook))
