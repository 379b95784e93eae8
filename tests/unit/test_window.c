/*
 * test_window.c -- unit tests for the window operator
 * (operators/window.c).
 *
 * Each test plans a `window` vertex (id "win") from a JSON config against
 * the input schema (user_id BIGINT, ts TIMESTAMP, amount INT, price DOUBLE,
 * name STRING), opens keyed state for key groups 0..127 and two timer
 * services the way the runtime does, and drives process / watermark /
 * proc_time / end_input directly. The emit callback renders each result the
 * way Flink's print sink does ("+I[2026-08-19T15:00, 2026-08-19T15:00:10,
 * 2026-08-19T15:00:09.999, 1, 2]"); results that fire together for several
 * keys come out in key-group order, so those tests compare them sorted.
 * Every expectation is written out by hand.
 *
 * The generated tests feed thousands of out-of-order rows through the real
 * watermark assigner chained into the window and check the outcome against
 * a brute-force model kept in the test: the watermark rule, the lateness
 * rule and the window assignment are recomputed from their definitions, and
 * "window counts + late drops = rows in" must hold exactly.
 *
 * The scripted and generated cases run on both state backends.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agg.h"
#include "jobgraph.h"
#include "keygroup.h"
#include "operator.h"
#include "sl_test.h"
#include "runtime.h"

extern const sl_op_def sl_op_window;
extern const sl_op_def sl_op_watermark;
#define WIN (&sl_op_window)

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

static sl_backend_kind g_backend = SL_BACKEND_HASHMAP;

/* ---- harness ------------------------------------------------------------------ */

#define ROWLEN 200

typedef struct harness harness;
struct harness {
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    sl_op op;
    char dir[64];
    int n, cap, taken;       /* rows recorded; rows already returned by take */
    char (*rows)[ROWLEN];
    int64_t last_ts;         /* ts of the last emitted row */
    char wms[512];           /* forwarded watermarks, "9999 MAX" */
    int (*hook)(harness *h, const sl_row *row); /* replaces recording if set */
    void *hook_ctx;
    char err[512];
    char text[65536];        /* take()'s result */
};

static int on_row(void *ctx, int output, sl_row *row)
{
    harness *h = ctx;
    SL_UNUSED(output);
    h->last_ts = row->ts;
    if (h->hook) return h->hook(h, row);
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->rows = realloc(h->rows, (size_t)h->cap * ROWLEN);
        if (!h->rows) abort();
    }
    char *d = h->rows[h->n++];
    size_t o = (size_t)snprintf(d, ROWLEN, "%s[", sl_rowkind_short(row->kind));
    for (int i = 0; i < row->n && o < ROWLEN; i++) {
        if (i) o += (size_t)snprintf(d + o, ROWLEN - o, ", ");
        if (o < ROWLEN)
            o += (size_t)sl_value_format_dt(d + o, ROWLEN - o, &row->vals[i], h->out.fields[i].dt);
    }
    if (o < ROWLEN) snprintf(d + o, ROWLEN - o, "]");
    return SL_OK;
}

static int on_wm(void *ctx, int64_t wm)
{
    harness *h = ctx;
    size_t o = strlen(h->wms);
    if (wm == INT64_MAX) snprintf(h->wms + o, sizeof h->wms - o, "%sMAX", o ? " " : "");
    else snprintf(h->wms + o, sizeof h->wms - o, "%s%lld", o ? " " : "", (long long)(wm - T0));
    return SL_OK;
}

static int cmp_rows(const void *a, const void *b) { return strcmp(a, b); }

/* The rows emitted since the last take, joined by '\n'; sorted or in
 * emission order. */
static const char *take_(harness *h, bool sorted)
{
    if (sorted && h->n > h->taken)
        qsort(h->rows + h->taken, (size_t)(h->n - h->taken), ROWLEN, cmp_rows);
    size_t o = 0;
    h->text[0] = 0;
    for (int i = h->taken; i < h->n; i++)
        o += (size_t)snprintf(h->text + o, sizeof h->text - o, "%s%s", o ? "\n" : "", h->rows[i]);
    h->taken = h->n;
    return h->text;
}
#define take(h) take_((h), true)
#define take_raw(h) take_((h), false)

static void input_schema(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "user_id", SL_T_BIGINT);
    sl_schema_add(s, "ts", SL_T_TIMESTAMP);
    sl_schema_add(s, "amount", SL_T_INT);
    sl_schema_add(s, "price", SL_T_DOUBLE);
    sl_schema_add(s, "name", SL_T_STRING);
}

static harness *plan(const char *config)
{
    harness *h = calloc(1, sizeof *h);
    if (!h) abort();
    h->v.id = (char *)"win";
    h->v.type = (char *)"window";
    h->v.def = WIN;
    h->v.config = sl_test_config(config);
    input_schema(&h->in);
    h->plan = sl_test_plan(WIN, &h->v, &h->in, &h->out, h->err, sizeof h->err);
    return h;
}

/* Open as the runtime does: keyed state and timers first, then open(). */
static void open_op(harness *h)
{
    sl_op *op = &h->op;
    sl_rt_init(op, &h->v, 0, 128);
    op->plan = h->plan;
    op->emit = on_row;
    op->emit_wm = on_wm;
    op->emit_ctx = h;
    op->out_connected[0] = 1;
    op->task_name = "win (1/1)";
    if (g_backend == SL_BACKEND_ROCKSDB) {
        snprintf(h->dir, sizeof h->dir, "/tmp/sl_test_window_XXXXXX");
        if (!mkdtemp(h->dir)) abort();
    }
    if (sl_rt_open(op, g_backend, h->dir) != SL_OK) {
        fprintf(stderr, "open: %s\n", op->err);
        abort();
    }
}

static void done(harness *h)
{
    sl_rt_close(&h->op);
    if (h->dir[0]) rmdir(h->dir);
    if (h->plan) WIN->plan_free(h->plan);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
    free(h->rows);
    free(h);
}

static harness *start(const char *config)
{
    harness *h = plan(config);
    if (!h->plan) {
        fprintf(stderr, "plan: %s\n", h->err);
        abort();
    }
    open_op(h);
    return h;
}

/* One row: user_id, ts = T0 + off ms, amount, price, name (NULL = null). */
static int feed_full(harness *h, int64_t user, int64_t off, int amount, double price,
                     const char *name)
{
    sl_value vals[5] = {{.v.i = user}, {.v.i = T0 + off}, {.v.i = amount}, {.v.d = price}};
    if (name) {
        vals[4].v.s.p = name;
        vals[4].v.s.len = (uint32_t)strlen(name);
    } else {
        vals[4].isnull = true;
    }
    sl_row row = {.kind = SL_KIND_INSERT, .n = 5, .vals = vals, .ts = T0 + off};
    return sl_rt_process(&h->op, 0, &row);
}

static int feed(harness *h, int64_t user, int64_t off, int amount)
{
    return feed_full(h, user, off, amount, 0.0, "n");
}

/* A new input watermark, delivered as the runtime does. */
static int wm(harness *h, int64_t off)
{
    int64_t w = off == INT64_MAX ? INT64_MAX : T0 + off;
    return sl_rt_watermark(&h->op, 0, w);
}

static void schema_text(const sl_schema *s, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s %s", i ? ", " : "", s->fields[i].name,
                              sl_type_name(s->fields[i].type));
}

/* Run a scripted case on both backends. */
#define BOTH_BACKENDS(name)                                                    \
    static void test_##name(void)                                              \
    {                                                                          \
        g_backend = SL_BACKEND_HASHMAP;                                        \
        name();                                                                \
    }                                                                          \
    static void test_##name##_rocksdb(void)                                    \
    {                                                                          \
        g_backend = SL_BACKEND_ROCKSDB;                                        \
        name();                                                                \
        g_backend = SL_BACKEND_HASHMAP;                                        \
    }

/* ---- plan ----------------------------------------------------------------------- */

static void expect_plan_error(const char *config, const char *msg)
{
    harness *h = plan(config);
    if (h->plan) fprintf(stderr, "plan unexpectedly accepted %s\n", config);
    else if (strcmp(h->err, msg) != 0) fprintf(stderr, "got:  %s\nwant: %s\n", h->err, msg);
    if (h->plan || strcmp(h->err, msg) != 0) sl_test_failed_ = 1;
    if (h->plan) WIN->plan_free(h->plan);
    h->plan = NULL;
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
    free(h);
}

#define TS_TUMBLE "\"time-column\": \"ts\", \"window\": \"TUMBLE(INTERVAL '10' SECOND)\""

static void test_plan_errors(void)
{
    expect_plan_error("{\"time-column\": \"ts\", \"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': option 'window' is required, e.g. "
                      "\"TUMBLE(INTERVAL '10' SECOND)\"");
    expect_plan_error("{\"window\": \"TUMBLE(INTERVAL '10' SECOND)\", \"aggregates\": "
                      "[\"COUNT(*)\"]}",
                      "vertex 'win': option 'time-column' (the TIMESTAMP column with the event "
                      "time) is required for event-time windows");
    expect_plan_error("{\"time-column\": \"amount\", \"window\": \"TUMBLE(INTERVAL '10' SECOND)\","
                      " \"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': time-column 'amount' is INT; event-time windows need a "
                      "TIMESTAMP column");
    expect_plan_error("{\"time-column\": \"ts\", \"window\": \"SLIDE(INTERVAL '10' SECOND)\", "
                      "\"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': window 'SLIDE(INTERVAL '10' SECOND)': expected TUMBLE(size "
                      "[, offset]), HOP(slide, size [, offset]), SESSION(gap) or CUMULATE(step, "
                      "max size [, offset]) with sizes like INTERVAL '10' SECOND");
    { /* a local phase cannot slice a HOP whose size is no multiple of its slide */
        char serr[256];
        int64_t slide, offset;
        CHECK_EQ_INT(sl_window_slicing("win", "HOP(INTERVAL '3' SECOND, INTERVAL '10' SECOND)",
                                       &slide, &offset, serr, sizeof serr), SL_ERR);
        CHECK_EQ_STR(serr, "vertex 'win': window 'HOP(INTERVAL '3' SECOND, INTERVAL '10' SECOND)': "
                           "a HOP size (10000 ms) that is no whole multiple of the slide (3000 ms) "
                           "has no slices");
        /* an offset counts modulo the period (Flink's getWindowStartWithOffset): HOP's
         * slide, CUMULATE's size (its slices then start at offset modulo the step) */
        CHECK_EQ_INT(sl_window_slicing("win", "HOP(INTERVAL '3' SECOND, INTERVAL '9' SECOND, "
                                       "INTERVAL '-1' SECOND)", &slide, &offset, serr,
                                       sizeof serr), SL_OK);
        CHECK_EQ_INT(slide, 3000);
        CHECK_EQ_INT(offset, 2000);
        CHECK_EQ_INT(sl_window_slicing("win", "CUMULATE(INTERVAL '2' SECOND, INTERVAL '6' SECOND, "
                                       "INTERVAL '7' SECOND)", &slide, &offset, serr,
                                       sizeof serr), SL_OK);
        CHECK_EQ_INT(slide, 2000);
        CHECK_EQ_INT(offset, 1000);
    }
    expect_plan_error("{\"time-column\": \"ts\", \"window\": \"SESSION(INTERVAL '0' SECOND)\", "
                      "\"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': window 'SESSION(INTERVAL '0' SECOND)': argument 1 must be "
                      "between 1 ms and 1099511627776 ms");
    expect_plan_error("{\"time-column\": \"ts\", \"window\": \"TUMBLE(INTERVAL '10' SECOND\", "
                      "\"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': window 'TUMBLE(INTERVAL '10' SECOND': missing ')'");
    expect_plan_error("{" TS_TUMBLE ", \"group-by\": [\"usr\"], \"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': group-by column 'usr' is not in the input");
    expect_plan_error("{" TS_TUMBLE ", \"aggregates\": []}",
                      "vertex 'win': option 'aggregates' must list at least one aggregate when "
                      "there is no group-by key, e.g. [\"COUNT(*) AS cnt\"]");
    expect_plan_error("{" TS_TUMBLE ", \"group-by\": {\"a\": 1}, \"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': option 'group-by' must be an array of column names, e.g. "
                      "[\"user_id\"]");
    expect_plan_error("{" TS_TUMBLE ", \"group-by\": [\"window_start\"]}",
                      "vertex 'win': group-by column 'window_start' is not in the input");
    expect_plan_error("{" TS_TUMBLE ", \"group-by\": [\"name\", \"NAME\"]}",
                      "vertex 'win': group-by column 'NAME' is listed twice");
    expect_plan_error("{" TS_TUMBLE ", \"group-by\": [\"name\"], \"aggregates\": 7}",
                      "vertex 'win': option 'aggregates' must be an array of aggregate calls, "
                      "e.g. [\"COUNT(*) AS cnt\"]");
    expect_plan_error("{" TS_TUMBLE ", \"aggregates\": [\"SUM(name)\"]}",
                      "vertex 'win': aggregate 1 'SUM(name)': SUM needs a numeric column (TINYINT, "
                      "SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL); 'name' is STRING");
    expect_plan_error("{" TS_TUMBLE ", \"aggregates\": [\"COUNT(*)\", \"MEDIAN(amount)\"]}",
                      "vertex 'win': aggregate 2 'MEDIAN(amount)': unknown aggregate function "
                      "'MEDIAN' (expected COUNT, SUM, MIN, MAX or AVG)");
    expect_plan_error("{" TS_TUMBLE ", \"aggregates\": [\"MAX(amt)\"]}",
                      "vertex 'win': aggregate 1 'MAX(amt)': unknown column 'amt'");
    expect_plan_error("{" TS_TUMBLE ", \"aggregates\": [\"COUNT(*) AS c\", \"SUM(amount) AS c\"]}",
                      "vertex 'win': aggregate 2 'SUM(amount) AS c': duplicate output column 'c' "
                      "(rename it with AS)");
    expect_plan_error("{\"time\": \"processing\", \"window\": \"CUMULATE(INTERVAL '1' SECOND, "
                      "INTERVAL '10' SECOND)\", \"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': processing-time windows can be TUMBLE, HOP or SESSION only");
    expect_plan_error("{" TS_TUMBLE ", \"allowed-lateness\": \"soon\", \"aggregates\": "
                      "[\"COUNT(*)\"]}",
                      "vertex 'win': option 'allowed-lateness': invalid interval 'soon': expected "
                      "a form like '5 s', '100 ms' or INTERVAL '10' SECOND");
    expect_plan_error("{" TS_TUMBLE ", \"time\": \"wall\", \"aggregates\": [\"COUNT(*)\"]}",
                      "vertex 'win': option 'time' must be 'event' or 'processing', not 'wall'");
}

/* Output columns: window_start, window_end, window_time, keys, aggregates,
 * with Flink's result types and EXPR$n for unnamed aggregates. */
static void test_output_schema(void)
{
    harness *h = plan("{" TS_TUMBLE ", \"group-by\": [\"user_id\", \"name\"], \"aggregates\": "
                      "[\"COUNT(*)\", \"count(price) AS n\", \"SUM(amount) total\", "
                      "\"AVG(amount) AS a\", \"MIN(ts) AS first_ts\", \"MAX(price) AS `hi`\", "
                      "\"SUM(price) AS sp\"]}");
    CHECK(h->plan != NULL);
    char buf[1024];
    schema_text(&h->out, buf, sizeof buf);
    CHECK_EQ_STR(buf, "window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time "
                      "TIMESTAMP(3), user_id BIGINT, name STRING, EXPR$5 BIGINT, n BIGINT, "
                      "total INT, a INT, first_ts TIMESTAMP(3), hi DOUBLE, sp DOUBLE");
    h->dir[0] = 0;
    WIN->plan_free(h->plan);
    h->plan = NULL;
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
    free(h);
}

/* COUNT(1) counts rows as COUNT(*) does, and MIN/MAX take BOOLEAN (FALSE <
 * TRUE), as in Flink -- also across a session merge, which combines the
 * accumulators. The input here is (ts TIMESTAMP, ok BOOLEAN). */
static void count_one_and_boolean_minmax(void)
{
    static const char *const windows[] = {"TUMBLE(INTERVAL '10' SECOND)",
                                          "SESSION(INTERVAL '5' SECOND)"};
    for (int w = 0; w < 2; w++) {
        harness *h = calloc(1, sizeof *h);
        if (!h) abort();
        h->v.id = (char *)"win";
        h->v.type = (char *)"window";
        h->v.def = WIN;
        char config[512];
        snprintf(config, sizeof config, "{\"time-column\": \"ts\", \"window\": \"%s\", "
                 "\"aggregates\": [\"COUNT(1) AS c\", \"MIN(ok) AS lo\", \"MAX(ok) AS hi\", "
                 "\"count(ok)\"]}", windows[w]);
        h->v.config = json_loads(config, 0, NULL);
        sl_schema_init(&h->in);
        sl_schema_add(&h->in, "ts", SL_T_TIMESTAMP);
        sl_schema_add(&h->in, "ok", SL_T_BOOLEAN);
        h->plan = sl_test_plan(WIN, &h->v, &h->in, &h->out, h->err, sizeof h->err);
        if (!h->plan) fprintf(stderr, "  plan: %s\n", h->err);
        CHECK(h->plan != NULL);
        char buf[512];
        schema_text(&h->out, buf, sizeof buf);
        CHECK_EQ_STR(buf, "window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time "
                          "TIMESTAMP(3), c BIGINT, lo BOOLEAN, hi BOOLEAN, EXPR$6 BIGINT");
        open_op(h);
        /* ts offsets: 1000 and 8000 are one session only once 4000 bridges them */
        const int64_t offs[] = {1000, 8000, 4000, 12000, 13000};
        const int oks[] = {1, -1, 0, -1, 1}; /* -1: NULL */
        for (int i = 0; i < 5; i++) {
            sl_value vals[2] = {{.v.i = T0 + offs[i]}, {.isnull = oks[i] < 0, .v.i = oks[i]}};
            sl_row row = {.kind = SL_KIND_INSERT, .n = 2, .vals = vals, .ts = T0 + offs[i]};
            CHECK_EQ_INT(sl_rt_process(&h->op, 0, &row), SL_OK);
        }
        CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
        if (w == 0)
            CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:10, "
                                  "2026-08-19T15:00:09.999, 3, false, true, 2]\n"
                                  "+I[2026-08-19T15:00:10, 2026-08-19T15:00:20, "
                                  "2026-08-19T15:00:19.999, 2, true, true, 1]");
        else
            CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00:01, 2026-08-19T15:00:18, "
                                  "2026-08-19T15:00:17.999, 5, false, true, 3]");
        done(h);
    }
}
BOTH_BACKENDS(count_one_and_boolean_minmax)

/* An entry in the layout before the shared aggregate library (flags without
 * WIN_AGG_LAYOUT, a 16-byte COUNT(*) slot) is refused, not misread. */
static void old_entry_layout_is_refused(void)
{
    harness *h = start("{" TS_TUMBLE ", \"aggregates\": [\"COUNT(*) AS c\"]}");
    int sid = sl_kstate_register(h->op.kstate, "window-acc");
    sl_kstate_set_key(h->op.kstate, "", 0, sl_kg_of_key("", 0, 128));
    uint8_t ns[16], old[1 + 16 + 16] = {0};
    uint64_t a = (uint64_t)T0 ^ ((uint64_t)1 << 63); /* [T0, T0 + 10 s), as window.c */
    uint64_t b = (uint64_t)(T0 + 10000) ^ ((uint64_t)1 << 63);
    for (int i = 0; i < 8; i++) {
        ns[i] = (uint8_t)(a >> (56 - 8 * i));
        ns[8 + i] = (uint8_t)(b >> (56 - 8 * i));
    }
    old[1] = 3; /* n = 3 rows */
    char err[256];
    CHECK_EQ_INT(sl_kstate_put(h->op.kstate, sid, ns, 16, old, sizeof old, err, sizeof err), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 1000, 0), SL_ERR);
    CHECK_EQ_STR(h->op.err, "vertex 'win': the window state was written by an older Sluice, whose "
                            "accumulators are laid out differently; run the job without restoring "
                            "it");
    done(h);
}
BOTH_BACKENDS(old_entry_layout_is_refused)

/* ---- event-time windows ------------------------------------------------------- */

static void tumble(void)
{
    harness *h = start("{" TS_TUMBLE ", \"group-by\": [\"user_id\"], \"aggregates\": "
                       "[\"COUNT(*) AS cnt\", \"SUM(amount) AS total\", \"AVG(amount) AS av\", "
                       "\"MIN(price) AS lo\", \"MAX(price) AS hi\", \"COUNT(name) AS named\"]}");
    CHECK_EQ_INT(feed_full(h, 1, 1000, 3, 1.5, "a"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 2000, 4, 0.5, NULL), SL_OK);
    CHECK_EQ_INT(feed_full(h, 2, 5000, -7, 2.0, "b"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 2, 9999, 2, 2.25, "c"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 12000, 10, 3.0, "d"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 2, 10000, 1, 1.0, NULL), SL_OK);
    CHECK_EQ_STR(take(h), "");
    CHECK_EQ_INT(wm(h, 9998), SL_OK); /* the end is not passed yet */
    CHECK_EQ_STR(take(h), "");
    CHECK_EQ_INT(wm(h, 9999), SL_OK);
    CHECK_EQ_STR(take(h),
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, 2, 7, 3, "
                 "0.5, 1.5, 1]\n"
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 2, 2, -5, -2, "
                 "2.0, 2.25, 2]");
    CHECK_EQ_INT(h->last_ts, T0 + 9999); /* rows carry ts = window_time */
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK); /* end of input fires everything */
    CHECK_EQ_STR(take(h),
                 "+I[2026-08-19T15:00:10, 2026-08-19T15:00:20, 2026-08-19T15:00:19.999, 1, 1, 10, "
                 "10, 3.0, 3.0, 1]\n"
                 "+I[2026-08-19T15:00:10, 2026-08-19T15:00:20, 2026-08-19T15:00:19.999, 2, 1, 1, "
                 "1, 1.0, 1.0, 0]");
    CHECK_EQ_STR(h->wms, "9998 9999 MAX");
    CHECK_EQ_INT(h->op.metrics.late_dropped, 0);
    CHECK_EQ_INT(h->op.metrics.records_out, 4);
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0); /* nothing left behind */
    CHECK_EQ_INT(sl_timers_count(h->op.event_timers), 0);
    done(h);
}
BOTH_BACKENDS(tumble)

/* String and NULL keys come back from state intact. */
static void string_keys(void)
{
    harness *h = start("{" TS_TUMBLE ", \"group-by\": [\"name\", \"user_id\"], \"aggregates\": "
                       "[\"COUNT(*) AS c\"]}");
    CHECK_EQ_INT(feed_full(h, 1, 1, 0, 0, "x"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 2, 0, 0, NULL), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 3, 0, 0, "x"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 2, 4, 0, 0, "x"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 5, 0, 0, NULL), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 6, 0, 0, "a much longer name than the rest, to grow buffers"),
                 SL_OK);
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take(h),
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, a much longer "
                 "name than the rest, to grow buffers, 1, 1]\n"
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, null, 1, 2]\n"
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, x, 1, 2]\n"
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, x, 2, 1]");
    done(h);
}
BOTH_BACKENDS(string_keys)

/* TUMBLE(size, offset): windows start at offset + k * size; no group-by is
 * one global window; an alias may follow without AS. */
static void tumble_offset(void)
{
    harness *h = start("{\"time-column\": \"ts\", \"window\": \"TUMBLE(INTERVAL '10' SECOND, "
                       "INTERVAL '3' SECOND)\", \"aggregates\": [\"COUNT(*) AS c\", "
                       "\"SUM(amount) s\"]}");
    CHECK_EQ_INT(feed(h, 1, 2000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 3000, 2), SL_OK);
    CHECK_EQ_INT(feed(h, 3, 12999, 4), SL_OK);
    CHECK_EQ_INT(feed(h, 4, 13000, 8), SL_OK);
    CHECK_EQ_INT(wm(h, 2999), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T14:59:53, 2026-08-19T15:00:03, 2026-08-19T15:00:02.999, "
                          "1, 1]");
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h),
                 "+I[2026-08-19T15:00:03, 2026-08-19T15:00:13, 2026-08-19T15:00:12.999, 2, 6]\n"
                 "+I[2026-08-19T15:00:13, 2026-08-19T15:00:23, 2026-08-19T15:00:22.999, 1, 8]");
    done(h);

    /* around the epoch: -1 ms belongs to the window before it */
    h = start("{" TS_TUMBLE ", \"aggregates\": [\"COUNT(*) AS c\"]}");
    CHECK_EQ_INT(feed(h, 1, -T0 - 1, 0), SL_OK);
    CHECK_EQ_INT(feed(h, 1, -T0, 0), SL_OK);
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h),
                 "+I[1969-12-31T23:59:50, 1970-01-01T00:00, 1969-12-31T23:59:59.999, 1]\n"
                 "+I[1970-01-01T00:00, 1970-01-01T00:00:10, 1970-01-01T00:00:09.999, 1]");
    done(h);
}
BOTH_BACKENDS(tumble_offset)

/* HOP(slide 5 s, size 10 s): each row is in two windows. */
static void hop(void)
{
    harness *h = start("{\"time-column\": \"ts\", \"window\": \"HOP(INTERVAL '5' SECOND, "
                       "INTERVAL '10' SECOND)\", \"group-by\": [\"user_id\"], \"aggregates\": "
                       "[\"COUNT(*) AS c\", \"MIN(amount) AS lo\", \"MAX(amount) AS hi\", "
                       "\"AVG(price) AS ap\"]}");
    CHECK_EQ_INT(feed_full(h, 1, 7000, 5, 1.0, "n"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 12000, 9, 2.0, "n"), SL_OK);
    CHECK_EQ_INT(feed_full(h, 1, 3000, 1, 4.0, "n"), SL_OK);
    CHECK_EQ_INT(wm(h, 4999), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T14:59:55, 2026-08-19T15:00:05, "
                              "2026-08-19T15:00:04.999, 1, 1, 1, 1, 4.0]");
    CHECK_EQ_INT(wm(h, 14999), SL_OK); /* two windows, in end order */
    CHECK_EQ_STR(take_raw(h),
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, 2, 1, 5, "
                 "2.5]\n"
                 "+I[2026-08-19T15:00:05, 2026-08-19T15:00:15, 2026-08-19T15:00:14.999, 1, 2, 5, "
                 "9, 1.5]");
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T15:00:10, 2026-08-19T15:00:20, "
                              "2026-08-19T15:00:19.999, 1, 1, 9, 9, 2.0]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    done(h);
}
BOTH_BACKENDS(hop)

/* CUMULATE(step 2 s, max 6 s): windows [0,2) [0,4) [0,6), then [6,8)... */
static void cumulate(void)
{
    harness *h = start("{\"time-column\": \"ts\", \"window\": \"CUMULATE(INTERVAL '2' SECOND, "
                       "INTERVAL '6' SECOND)\", \"aggregates\": [\"COUNT(*) AS c\", "
                       "\"SUM(amount) AS s\"]}");
    CHECK_EQ_INT(feed(h, 1, 1000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 3000, 2), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 5500, 4), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 7000, 8), SL_OK);
    CHECK_EQ_INT(wm(h, 1999), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:02, 2026-08-19T15:00:01.999, 1, "
                          "1]");
    CHECK_EQ_INT(wm(h, 3999), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:04, 2026-08-19T15:00:03.999, 2, "
                          "3]");
    CHECK_EQ_INT(wm(h, 5999), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:06, 2026-08-19T15:00:05.999, 3, "
                          "7]");
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h),
                 "+I[2026-08-19T15:00:06, 2026-08-19T15:00:08, 2026-08-19T15:00:07.999, 1, 8]\n"
                 "+I[2026-08-19T15:00:06, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, 8]\n"
                 "+I[2026-08-19T15:00:06, 2026-08-19T15:00:12, 2026-08-19T15:00:11.999, 1, 8]");
    done(h);
}
BOTH_BACKENDS(cumulate)

/* SESSION(30 s): rows within the gap merge, out of order too; windows that
 * only touch merge as well (Flink's TimeWindow.intersects). */
static void session(void)
{
    harness *h = start("{\"time-column\": \"ts\", \"window\": \"SESSION(INTERVAL '30' SECOND)\", "
                       "\"group-by\": [\"user_id\"], \"aggregates\": [\"COUNT(*) AS c\", "
                       "\"SUM(amount) AS s\"]}");
    CHECK_EQ_INT(feed(h, 1, 0, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 10000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 20000, 2), SL_OK);      /* [0,30) + [20,50) */
    CHECK_EQ_INT(feed(h, 2, 60000, 2), SL_OK);      /* apart from [10,40) */
    CHECK_EQ_INT(feed(h, 1, 100000, 4), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 40000, 4), SL_OK);      /* [40,70) bridges [10,40) and [60,90) */
    CHECK_EQ_INT(feed(h, 3, 200000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 3, 230000, 1), SL_OK);     /* touches [200,230) */
    CHECK_EQ_INT(feed(h, 3, 300000, 1), SL_OK);
    CHECK_EQ_STR(take(h), "");
    CHECK_EQ_INT(wm(h, 49999), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:50, 2026-08-19T15:00:49.999, 1, "
                          "2, 3]");
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take(h),
                 "+I[2026-08-19T15:00:10, 2026-08-19T15:01:30, 2026-08-19T15:01:29.999, 2, 3, 7]\n"
                 "+I[2026-08-19T15:01:40, 2026-08-19T15:02:10, 2026-08-19T15:02:09.999, 1, 1, 4]\n"
                 "+I[2026-08-19T15:03:20, 2026-08-19T15:04:20, 2026-08-19T15:04:19.999, 3, 2, 2]\n"
                 "+I[2026-08-19T15:05, 2026-08-19T15:05:30, 2026-08-19T15:05:29.999, 3, 1, 1]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0); /* windows and session lists */
    CHECK_EQ_INT(sl_timers_count(h->op.event_timers), 0);
    done(h);
}
BOTH_BACKENDS(session)

/* The same sessions without aggregates (a distinct per key and session):
 * merging carries the row count alone, and each session is one row. */
static void session_no_aggregates(void)
{
    harness *h = start("{\"time-column\": \"ts\", \"window\": \"SESSION(INTERVAL '30' SECOND)\", "
                       "\"group-by\": [\"user_id\"]}");
    char sch[256];
    schema_text(&h->out, sch, sizeof sch);
    CHECK_EQ_STR(sch, "window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time "
                      "TIMESTAMP(3), user_id BIGINT");
    CHECK_EQ_INT(feed(h, 1, 0, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 10000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 20000, 2), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 60000, 2), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 100000, 4), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 40000, 4), SL_OK);
    CHECK_EQ_INT(feed(h, 3, 200000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 3, 230000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 3, 300000, 1), SL_OK);
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take(h),
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:50, 2026-08-19T15:00:49.999, 1]\n"
                 "+I[2026-08-19T15:00:10, 2026-08-19T15:01:30, 2026-08-19T15:01:29.999, 2]\n"
                 "+I[2026-08-19T15:01:40, 2026-08-19T15:02:10, 2026-08-19T15:02:09.999, 1]\n"
                 "+I[2026-08-19T15:03:20, 2026-08-19T15:04:20, 2026-08-19T15:04:19.999, 3]\n"
                 "+I[2026-08-19T15:05, 2026-08-19T15:05:30, 2026-08-19T15:05:29.999, 3]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    CHECK_EQ_INT(sl_timers_count(h->op.event_timers), 0);
    done(h);
}
BOTH_BACKENDS(session_no_aggregates)

/* ---- lateness ----------------------------------------------------------------- */

/* Allowed lateness 5 s: a late row updates the fired result with -U/+U; a
 * row for a window past its end that never fired is emitted at once; after
 * maxTimestamp + 5 s the state is gone and rows for it are dropped and
 * counted. */
static void lateness(void)
{
    harness *h = start("{" TS_TUMBLE ", \"group-by\": [\"user_id\"], \"allowed-lateness\": "
                       "\"5 s\", \"aggregates\": [\"COUNT(*) AS c\", \"SUM(amount) AS s\"]}");
    CHECK_EQ_INT(feed(h, 1, 1000, 10), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 2000, 20), SL_OK);
    CHECK_EQ_INT(wm(h, 10000), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:10, "
                              "2026-08-19T15:00:09.999, 1, 2, 30]");
    CHECK_EQ_INT(feed(h, 1, 3000, 5), SL_OK);
    CHECK_EQ_STR(take_raw(h),
                 "-U[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, 2, 30]\n"
                 "+U[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, 3, 35]");
    CHECK_EQ_INT(feed(h, 2, 8000, 1), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:10, "
                              "2026-08-19T15:00:09.999, 2, 1, 1]");
    CHECK_EQ_INT(wm(h, 14998), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 4000, 1), SL_OK);
    CHECK_EQ_STR(take_raw(h),
                 "-U[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, 3, 35]\n"
                 "+U[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, 4, 36]");
    CHECK_EQ_INT(h->op.metrics.late_dropped, 0);
    CHECK_EQ_INT(wm(h, 14999), SL_OK); /* 9999 + 5000: cleaned, nothing emitted */
    CHECK_EQ_STR(take_raw(h), "");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    CHECK_EQ_INT(feed(h, 1, 5000, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 9000, 1), SL_OK);
    CHECK_EQ_STR(take_raw(h), "");
    CHECK_EQ_INT(h->op.metrics.late_dropped, 2);
    CHECK_EQ_INT(feed(h, 1, 15000, 7), SL_OK); /* next window, on time */
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T15:00:10, 2026-08-19T15:00:20, "
                              "2026-08-19T15:00:19.999, 1, 1, 7]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    CHECK_EQ_INT(sl_timers_count(h->op.event_timers), 0);
    done(h);
}
BOTH_BACKENDS(lateness)

/* Without lateness a row is dropped when all its windows have fired: a row
 * behind the watermark whose window is still open is kept; a HOP row with
 * one window still open counts in that window, not as dropped. */
static void late_drops(void)
{
    harness *h = start("{" TS_TUMBLE ", \"aggregates\": [\"COUNT(*) AS c\"]}");
    CHECK_EQ_INT(wm(h, 10500), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 9900, 0), SL_OK);  /* [0,10) fired: dropped */
    CHECK_EQ_INT(feed(h, 1, 10200, 0), SL_OK); /* behind the watermark, window open */
    CHECK_EQ_INT(feed(h, 1, 0, 0), SL_OK);     /* dropped */
    CHECK_EQ_INT(h->op.metrics.late_dropped, 2);
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00:10, 2026-08-19T15:00:20, "
                          "2026-08-19T15:00:19.999, 1]");
    done(h);

    h = start("{\"time-column\": \"ts\", \"window\": \"HOP(INTERVAL '5' SECOND, INTERVAL '10' "
              "SECOND)\", \"aggregates\": [\"COUNT(*) AS c\"]}");
    CHECK_EQ_INT(wm(h, 10500), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 7000, 0), SL_OK);  /* [0,10) late, [5,15) open */
    CHECK_EQ_INT(feed(h, 1, 4000, 0), SL_OK);  /* [-5,5) and [0,10) late: dropped */
    CHECK_EQ_INT(feed(h, 1, 12000, 0), SL_OK);
    CHECK_EQ_INT(h->op.metrics.late_dropped, 1);
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h),
                 "+I[2026-08-19T15:00:05, 2026-08-19T15:00:15, 2026-08-19T15:00:14.999, 2]\n"
                 "+I[2026-08-19T15:00:10, 2026-08-19T15:00:20, 2026-08-19T15:00:19.999, 1]");
    done(h);
}
BOTH_BACKENDS(late_drops)

/* Sessions with lateness: a late row that stretches a fired session
 * retracts it (-D) and the stretched session fires as +I; a row inside a
 * fired session updates it (-U/+U); after cleanup a row is dropped. */
static void session_lateness(void)
{
    harness *h = start("{\"time-column\": \"ts\", \"window\": \"SESSION(INTERVAL '10' SECOND)\", "
                       "\"group-by\": [\"user_id\"], \"allowed-lateness\": \"20 s\", "
                       "\"aggregates\": [\"COUNT(*) AS c\", \"SUM(amount) AS s\"]}");
    CHECK_EQ_INT(feed(h, 1, 0, 1), SL_OK);
    CHECK_EQ_INT(wm(h, 9999), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:10, "
                              "2026-08-19T15:00:09.999, 1, 1, 1]");
    CHECK_EQ_INT(feed(h, 1, 5000, 2), SL_OK); /* [0,10) becomes [0,15), not due yet */
    CHECK_EQ_STR(take_raw(h), "-D[2026-08-19T15:00, 2026-08-19T15:00:10, "
                              "2026-08-19T15:00:09.999, 1, 1, 1]");
    CHECK_EQ_INT(wm(h, 14999), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:15, "
                              "2026-08-19T15:00:14.999, 1, 2, 3]");
    CHECK_EQ_INT(feed(h, 1, 2000, 4), SL_OK); /* inside [0,15) */
    CHECK_EQ_STR(take_raw(h),
                 "-U[2026-08-19T15:00, 2026-08-19T15:00:15, 2026-08-19T15:00:14.999, 1, 2, 3]\n"
                 "+U[2026-08-19T15:00, 2026-08-19T15:00:15, 2026-08-19T15:00:14.999, 1, 3, 7]");
    CHECK_EQ_INT(wm(h, 34999), SL_OK); /* 14999 + 20000: cleaned */
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    CHECK_EQ_INT(feed(h, 1, 4000, 8), SL_OK); /* [4,14): 13999 + 20000 <= 34999 */
    CHECK_EQ_INT(h->op.metrics.late_dropped, 1);
    CHECK_EQ_INT(feed(h, 1, 30000, 16), SL_OK); /* [30,40): on time */
    CHECK_EQ_STR(take_raw(h), "");
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h), "+I[2026-08-19T15:00:30, 2026-08-19T15:00:40, "
                              "2026-08-19T15:00:39.999, 1, 1, 16]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    CHECK_EQ_INT(sl_timers_count(h->op.event_timers), 0);
    done(h);

    /* a late row bridging two fired sessions: both retracted, the merged
     * session is already due and fires at once */
    h = start("{\"time-column\": \"ts\", \"window\": \"SESSION(INTERVAL '10' SECOND)\", "
              "\"group-by\": [\"user_id\"], \"allowed-lateness\": \"30 s\", "
              "\"aggregates\": [\"COUNT(*) AS c\", \"SUM(amount) AS s\"]}");
    CHECK_EQ_INT(feed(h, 2, 0, 1), SL_OK);
    CHECK_EQ_INT(feed(h, 2, 20000, 2), SL_OK);
    CHECK_EQ_INT(wm(h, 29999), SL_OK);
    CHECK_EQ_STR(take_raw(h),
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 2, 1, 1]\n"
                 "+I[2026-08-19T15:00:20, 2026-08-19T15:00:30, 2026-08-19T15:00:29.999, 2, 1, 2]");
    CHECK_EQ_INT(feed(h, 2, 10000, 4), SL_OK);
    CHECK_EQ_STR(take(h),
                 "+I[2026-08-19T15:00, 2026-08-19T15:00:30, 2026-08-19T15:00:29.999, 2, 3, 7]\n"
                 "-D[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 2, 1, 1]\n"
                 "-D[2026-08-19T15:00:20, 2026-08-19T15:00:30, 2026-08-19T15:00:29.999, 2, 1, 2]");
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take_raw(h), "");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    CHECK_EQ_INT(sl_timers_count(h->op.event_timers), 0);
    done(h);
}
BOTH_BACKENDS(session_lateness)

/* A NULL event time or a changelog input fails the task clearly. */
static void test_bad_rows(void)
{
    harness *h = start("{" TS_TUMBLE ", \"aggregates\": [\"COUNT(*) AS c\"]}");
    sl_value vals[5] = {{.v.i = 1}, {.isnull = true}, {.v.i = 1}, {.v.d = 0}, {.isnull = true}};
    sl_row row = {.kind = SL_KIND_INSERT, .n = 5, .vals = vals, .ts = SL_TS_NONE};
    CHECK_EQ_INT(sl_rt_process(&h->op, 0, &row), SL_ERR);
    CHECK_EQ_STR(h->op.err, "vertex 'win': time-column 'ts' is NULL in a row; event-time windows "
                            "need a timestamp on every row");
    vals[1] = (sl_value){.v.i = T0};
    row.kind = SL_KIND_UPDATE_BEFORE;
    CHECK_EQ_INT(sl_rt_process(&h->op, 0, &row), SL_ERR);
    CHECK_EQ_STR(h->op.err, "vertex 'win': window aggregation takes an insert-only stream, got a "
                            "-U row");
    done(h);
}

/* ---- processing time ----------------------------------------------------------- */

/* Rows go to the window of the wall clock at arrival; proc_time fires it
 * once the clock reaches window_end - 1; end_input fires what is left. */
static void test_processing_time(void)
{
    const int64_t hour = 3600000;
    harness *h = NULL;
    int64_t ws = 0;
    for (int attempt = 0; attempt < 3; attempt++) { /* retry if an hour ends meanwhile */
        h = start("{\"time\": \"processing\", \"window\": \"TUMBLE(INTERVAL '1' HOUR)\", "
                  "\"group-by\": [\"user_id\"], \"aggregates\": [\"COUNT(*) AS c\"]}");
        int64_t before = sl_now_ms();
        CHECK_EQ_INT(feed(h, 1, 0, 0), SL_OK);
        CHECK_EQ_INT(feed(h, 1, 0, 0), SL_OK);
        CHECK_EQ_INT(feed(h, 2, -T0, 0), SL_OK); /* the ts column is not what counts */
        int64_t after = sl_now_ms();
        ws = before - before % hour;
        if (after - after % hour == ws) break;
        done(h);
        h = NULL;
    }
    CHECK(h != NULL);
    CHECK_EQ_INT(sl_rt_next_proc(&h->op), ws + hour - 1);
    char s[40], e[40], t[40], want[512];
    sl_value vs = {.v.i = ws}, ve = {.v.i = ws + hour}, vt = {.v.i = ws + hour - 1};
    sl_value_format(s, sizeof s, &vs, SL_T_TIMESTAMP);
    sl_value_format(e, sizeof e, &ve, SL_T_TIMESTAMP);
    sl_value_format(t, sizeof t, &vt, SL_T_TIMESTAMP);
    CHECK_EQ_INT(sl_rt_fire_proc(&h->op, ws + hour - 2), SL_OK);
    CHECK_EQ_STR(take(h), "");
    CHECK_EQ_INT(wm(h, 0), SL_OK); /* event time does not fire processing-time windows */
    CHECK_EQ_STR(take(h), "");
    CHECK_EQ_INT(sl_rt_fire_proc(&h->op, ws + hour - 1), SL_OK);
    snprintf(want, sizeof want, "+I[%s, %s, %s, 1, 2]\n+I[%s, %s, %s, 2, 1]", s, e, t, s, e, t);
    CHECK_EQ_STR(take(h), want);
    CHECK_EQ_INT(sl_rt_next_proc(&h->op), INT64_MAX);
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    /* end of input fires the open windows */
    CHECK_EQ_INT(feed(h, 3, 0, 0), SL_OK);
    CHECK(sl_rt_next_proc(&h->op) != INT64_MAX);
    CHECK_EQ_INT(sl_rt_end_input(&h->op, 0), SL_OK);
    CHECK_EQ_INT(h->n, 3);
    CHECK(strstr(h->rows[2], ", 3, 1]") != NULL);
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    done(h);
}

/* A TIMESTAMP as the harness renders it; its text orders as the time does. */
static void ts_text(char *buf, size_t cap, int64_t ms)
{
    sl_value v = {.v.i = ms};
    sl_value_format(buf, cap, &v, SL_T_TIMESTAMP);
}

/* Processing-time sessions: each row opens [now, now + gap) and merges with
 * the key's session it touches (the old session's timer goes); the clock
 * reaching a session's end - 1 fires it once and forgets it, so a later row
 * of the key opens a new session; end_input fires what is left. */
static void test_processing_time_sessions(void)
{
    const int64_t gap = 3600000;
    harness *h = start("{\"time\": \"processing\", \"window\": \"SESSION(INTERVAL '1' HOUR)\", "
                       "\"group-by\": [\"user_id\"], \"aggregates\": [\"COUNT(*) AS c\", "
                       "\"SUM(amount) AS s\"]}");
    int64_t before = sl_now_ms();
    CHECK_EQ_INT(feed(h, 1, 0, 5), SL_OK);
    CHECK_EQ_INT(feed(h, 2, -T0, 7), SL_OK); /* the ts column is not what counts */
    CHECK_EQ_INT(feed(h, 1, 0, 6), SL_OK);
    CHECK_EQ_INT(feed(h, 1, 0, 1), SL_OK);
    int64_t after = sl_now_ms();
    /* one live timer per session: the merged-away ones were deleted */
    int64_t next = sl_rt_next_proc(&h->op);
    CHECK(next >= before + gap - 1 && next <= after + gap - 1);
    CHECK_EQ_INT(sl_rt_fire_proc(&h->op, before + gap - 2), SL_OK);
    CHECK_EQ_STR(take(h), "");
    CHECK_EQ_INT(wm(h, 0), SL_OK); /* event time does not fire them */
    CHECK_EQ_STR(take(h), "");
    CHECK_EQ_INT(sl_rt_fire_proc(&h->op, after + gap - 1), SL_OK);
    CHECK_EQ_INT(h->n, 2);
    char lo[40], hi[40], elo[40], ehi[40], tlo[40], thi[40];
    ts_text(lo, sizeof lo, before);
    ts_text(hi, sizeof hi, after);
    ts_text(elo, sizeof elo, before + gap);
    ts_text(ehi, sizeof ehi, after + gap);
    ts_text(tlo, sizeof tlo, before + gap - 1);
    ts_text(thi, sizeof thi, after + gap - 1);
    int seen = 0;
    for (int i = 0; i < h->n; i++) {
        long long user, c, sum;
        char sb[40], eb[40], tb[40];
        CHECK(sscanf(h->rows[i], "+I[%39[^,], %39[^,], %39[^,], %lld, %lld, %lld]", sb, eb, tb,
                     &user, &c, &sum) == 6);
        CHECK(strcmp(sb, lo) >= 0 && strcmp(sb, hi) <= 0);
        CHECK(strcmp(eb, elo) >= 0 && strcmp(eb, ehi) <= 0 && strcmp(eb, sb) > 0);
        CHECK(strcmp(tb, tlo) >= 0 && strcmp(tb, thi) <= 0 && strcmp(tb, eb) < 0);
        if (user == 1) CHECK(c == 3 && sum == 12);
        else CHECK(user == 2 && c == 1 && sum == 7);
        seen |= 1 << user;
    }
    CHECK_EQ_INT(seen, 6);
    CHECK_EQ_INT(sl_rt_next_proc(&h->op), INT64_MAX);
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0); /* accumulators and session lists */
    /* a later row opens a new session; end of input fires it */
    CHECK_EQ_INT(feed(h, 1, 0, 9), SL_OK);
    CHECK_EQ_INT(sl_rt_end_input(&h->op, 0), SL_OK);
    CHECK_EQ_INT(h->n, 3);
    CHECK(strstr(h->rows[2], ", 1, 1, 9]") != NULL);
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    done(h);
}

/* ---- generated out-of-order streams against a brute-force model ----------------- */

#define GEN_ROWS 4000
#define GEN_USERS 5

typedef struct gen_win {
    int64_t start, end, user;
    int64_t cnt, sum;
} gen_win;

/* A small table of window results, searched linearly. */
typedef struct gen_table {
    gen_win *w;
    int n, cap;
} gen_table;

static gen_win *table_find(gen_table *t, int64_t start, int64_t end, int64_t user, bool add)
{
    for (int i = 0; i < t->n; i++)
        if (t->w[i].start == start && t->w[i].end == end && t->w[i].user == user) return &t->w[i];
    if (!add) return NULL;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->w = realloc(t->w, (size_t)t->cap * sizeof *t->w);
        if (!t->w) abort();
    }
    t->w[t->n] = (gen_win){start, end, user, 0, 0};
    return &t->w[t->n++];
}

static void table_del(gen_table *t, gen_win *w)
{
    *w = t->w[--t->n];
}

typedef struct gen_out {
    gen_table got;
    int errors;   /* changelog rows that did not fit the table's state */
} gen_out;

/* Apply the operator's changelog to the table of current results. */
static int gen_collect(harness *h, const sl_row *row)
{
    gen_out *g = h->hook_ctx;
    int64_t s = row->vals[0].v.i, e = row->vals[1].v.i, u = row->vals[3].v.i;
    /* without aggregates (a distinct per window) a result is just there */
    int64_t c = row->n > 4 ? row->vals[4].v.i : 1, sum = row->n > 5 ? row->vals[5].v.i : 0;
    gen_win *w = table_find(&g->got, s, e, u, false);
    switch (row->kind) {
    case SL_KIND_INSERT:
    case SL_KIND_UPDATE_AFTER:
        if (w || row->ts != e - 1) g->errors++;
        w = table_find(&g->got, s, e, u, true);
        w->cnt = c;
        w->sum = sum;
        break;
    case SL_KIND_UPDATE_BEFORE:
    case SL_KIND_DELETE:
        if (!w || w->cnt != c || w->sum != sum) g->errors++;
        else table_del(&g->got, w);
        break;
    }
    return SL_OK;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct gen_row {
    int64_t ts, user;
    int amount;
} gen_row;

/* The stream: 20 rows/s of arrival, event time scattered up to 10 s into
 * the past (the seed demo's shape). */
static void gen_rows(gen_row *rows, uint64_t seed)
{
    for (int i = 0; i < GEN_ROWS; i++) {
        rows[i].ts = T0 + (int64_t)i * 50 - (int64_t)(splitmix(&seed) % 10001);
        rows[i].user = 1 + (int64_t)(splitmix(&seed) % GEN_USERS);
        rows[i].amount = (int)(splitmix(&seed) % 100);
    }
}

/* The model's windows for ts, from the definitions: every [s, s + size)
 * with s a multiple of the slide that contains ts; for CUMULATE every
 * [S, S + k * step) containing ts, S the multiple of the max size below ts. */
static int model_windows(char kind, int64_t slide, int64_t size, int64_t ts, int64_t *st,
                         int64_t *en)
{
    int n = 0;
    if (kind == 'C') {
        int64_t s = ts - size + 1;
        while (s % size != 0) s++;
        for (int64_t e = s + slide; e <= s + size; e += slide)
            if (ts < e) st[n] = s, en[n++] = e;
        return n;
    }
    int64_t s = ts - size + 1;
    while (s % slide != 0) s++;
    for (; s <= ts; s += slide) st[n] = s, en[n++] = s + size;
    return n;
}

/* Chain glue, as the runtime's: the assigner's rows and watermarks go
 * straight into the window operator. */
static int glue_row(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(output);
    return sl_rt_process(ctx, 0, row);
}

static int glue_wm(void *ctx, int64_t w) { return sl_rt_watermark(ctx, 0, w); }

/* Drive generated rows through watermark (delay, a tick every 4 rows = the
 * default 200 ms at 20 rows/s) -> window, then end of input, and compare
 * with the model. kind: 'T' tumble, 'H' hop, 'C' cumulate. Returns the
 * number of late drops through *drops. distinct: no aggregates at all, so
 * the result is one row per (user, window) that kept a row (Nexmark q8's
 * GROUP BY id, window_start, window_end). */
static void generated_run(const char *window, char kind, int64_t slide, int64_t size,
                          int64_t delay, int64_t lateness, uint64_t seed, bool distinct,
                          int64_t *drops_out)
{
    gen_row *rows = malloc(GEN_ROWS * sizeof *rows);
    if (!rows) abort();
    gen_rows(rows, seed);

    /* the model: watermark = max - delay - 1 at each tick when it advances;
     * a row counts in each window w with w.end - 1 + lateness > watermark,
     * and is dropped when it has none */
    gen_table want = {0};
    int64_t model_drops = 0, max_ts = INT64_MIN, wmk = INT64_MIN;
    int64_t st[64], en[64];
    for (int i = 0; i < GEN_ROWS; i++) {
        int n = model_windows(kind, slide, size, rows[i].ts, st, en);
        int kept = 0;
        for (int k = 0; k < n; k++) {
            if (wmk != INT64_MIN && en[k] - 1 + lateness <= wmk) continue;
            gen_win *w = table_find(&want, st[k], en[k], rows[i].user, true);
            if (distinct) {
                w->cnt = 1;
            } else {
                w->cnt++;
                w->sum += rows[i].amount;
            }
            kept++;
        }
        if (!kept) model_drops++;
        if (rows[i].ts > max_ts) max_ts = rows[i].ts;
        if (i % 4 == 3 && max_ts - delay - 1 > wmk) wmk = max_ts - delay - 1;
    }

    char cfg[512];
    snprintf(cfg, sizeof cfg, "{\"time-column\": \"ts\", \"window\": \"%s\", \"group-by\": "
             "[\"user_id\"], \"allowed-lateness\": %lld, \"aggregates\": [%s]}", window,
             (long long)lateness, distinct ? "" : "\"COUNT(*) AS c\", \"SUM(amount) AS s\"");
    harness *h = start(cfg);
    CHECK_EQ_INT(h->out.n, distinct ? 4 : 6);
    gen_out g = {0};
    h->hook = gen_collect;
    h->hook_ctx = &g;

    sl_vertex wv = {.id = (char *)"wm", .type = (char *)"watermark"};
    char wcfg[128];
    snprintf(wcfg, sizeof wcfg, "{\"column\": \"ts\", \"delay\": %lld}", (long long)delay);
    wv.config = json_loads(wcfg, 0, NULL);
    sl_schema wout;
    char err[256];
    void *wplan = sl_test_plan(&sl_op_watermark, &wv, &h->in, &wout, err, sizeof err);
    SL_ASSERT(wplan != NULL);
    sl_op wop = {0};
    sl_rt_init(&wop, &wv, 0, 128);
    wop.plan = wplan;
    wop.emit = glue_row;
    wop.emit_wm = glue_wm;
    wop.emit_ctx = &h->op;
    wop.out_connected[0] = 1;
    int rc = sl_op_watermark.open(&wop);
    for (int i = 0; i < GEN_ROWS && rc == SL_OK; i++) {
        sl_value vals[5] = {{.v.i = rows[i].user}, {.v.i = rows[i].ts},
                            {.v.i = rows[i].amount}, {.v.d = 0}, {.isnull = true}};
        sl_row row = {.kind = SL_KIND_INSERT, .n = 5, .vals = vals, .ts = SL_TS_NONE};
        rc = sl_op_watermark.process(&wop, 0, &row);
        if (rc == SL_OK && i % 4 == 3) rc = sl_op_watermark.proc_time(&wop, (int64_t)i * 50);
    }
    if (rc == SL_OK) rc = sl_rt_end_input(&wop, 0); /* end of input */
    if (rc != SL_OK) fprintf(stderr, "generated run failed: %s %s\n", wop.err, h->op.err);

    int64_t drops = h->op.metrics.late_dropped;
    int64_t in_windows = 0;
    for (int i = 0; i < g.got.n; i++) in_windows += g.got.w[i].cnt;
    int mismatches = 0;
    for (int i = 0; i < want.n; i++) {
        gen_win *w = table_find(&g.got, want.w[i].start, want.w[i].end, want.w[i].user, false);
        if (!w || w->cnt != want.w[i].cnt || w->sum != want.w[i].sum) mismatches++;
    }
    *drops_out = drops;

    sl_rt_close(&wop);
    sl_op_watermark.plan_free(wplan);
    sl_vertex_plan_free(&wv);
    sl_schema_free(&wout);
    json_decref(wv.config);
    int64_t records_in = (int64_t)h->op.metrics.records_in;
    size_t left = (size_t)sl_kstate_entries(h->op.kstate) + sl_timers_count(h->op.event_timers);
    done(h);
    free(want.w);
    free(g.got.w);
    free(rows);

    CHECK_EQ_INT(rc, SL_OK);
    CHECK_EQ_INT(records_in, GEN_ROWS);
    CHECK_EQ_INT(g.errors, 0);
    CHECK_EQ_INT(drops, model_drops);
    CHECK_EQ_INT(g.got.n, want.n);
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(left, 0);
    if (kind == 'T' && !distinct) CHECK_EQ_INT(in_windows + drops, GEN_ROWS); /* nothing vanishes */
}

static void generated_case(const char *window, char kind, int64_t slide, int64_t size,
                           int64_t delay, int64_t lateness, uint64_t seed, int64_t *drops_out)
{
    generated_run(window, kind, slide, size, delay, lateness, seed, false, drops_out);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sessions: rows in arbitrary order must merge into exactly the sessions
 * the sorted timestamps give (consecutive rows at most `gap` apart). The
 * watermark stays far behind until the end, so nothing is late. */
static void generated_sessions(uint64_t seed)
{
    const int64_t gap = 300;
    gen_row *rows = malloc(GEN_ROWS * sizeof *rows);
    int64_t *ts = malloc(GEN_ROWS * sizeof *ts);
    if (!rows || !ts) abort();
    gen_rows(rows, seed);
    gen_table want = {0};
    for (int64_t u = 1; u <= GEN_USERS; u++) {
        int n = 0;
        for (int i = 0; i < GEN_ROWS; i++)
            if (rows[i].user == u) ts[n++] = rows[i].ts;
        qsort(ts, (size_t)n, sizeof *ts, cmp_i64);
        for (int i = 0; i < n;) {
            int j = i;
            while (j + 1 < n && ts[j + 1] <= ts[j] + gap) j++;
            gen_win *w = table_find(&want, ts[i], ts[j] + gap, u, true);
            w->cnt = j - i + 1;
            i = j + 1;
        }
    }
    /* sums: each row's amount goes to its user's session containing it */
    for (int i = 0; i < GEN_ROWS; i++)
        for (int k = 0; k < want.n; k++)
            if (want.w[k].user == rows[i].user && want.w[k].start <= rows[i].ts &&
                rows[i].ts < want.w[k].end) {
                want.w[k].sum += rows[i].amount;
                break;
            }

    harness *h = start("{\"time-column\": \"ts\", \"window\": \"SESSION(INTERVAL '300' "
                       "MILLISECOND)\", \"group-by\": [\"user_id\"], \"aggregates\": "
                       "[\"COUNT(*) AS c\", \"SUM(amount) AS s\"]}");
    gen_out g = {0};
    h->hook = gen_collect;
    h->hook_ctx = &g;
    int rc = SL_OK;
    for (int i = 0; i < GEN_ROWS && rc == SL_OK; i++) {
        sl_value vals[5] = {{.v.i = rows[i].user}, {.v.i = rows[i].ts},
                            {.v.i = rows[i].amount}, {.v.d = 0}, {.isnull = true}};
        sl_row row = {.kind = SL_KIND_INSERT, .n = 5, .vals = vals, .ts = rows[i].ts};
        rc = sl_rt_process(&h->op, 0, &row);
        if (rc == SL_OK && i % 500 == 499) rc = wm(h, -86400000); /* far behind */
    }
    if (rc == SL_OK) rc = wm(h, INT64_MAX);
    if (rc != SL_OK) fprintf(stderr, "session run failed: %s\n", h->op.err);
    int mismatches = 0;
    for (int i = 0; i < want.n; i++) {
        gen_win *w = table_find(&g.got, want.w[i].start, want.w[i].end, want.w[i].user, false);
        if (!w || w->cnt != want.w[i].cnt || w->sum != want.w[i].sum) mismatches++;
    }
    size_t left = (size_t)sl_kstate_entries(h->op.kstate) + sl_timers_count(h->op.event_timers);
    int64_t drops = h->op.metrics.late_dropped;
    int got_n = g.got.n, want_n = want.n;
    done(h);
    free(want.w);
    free(g.got.w);
    free(rows);
    free(ts);
    CHECK_EQ_INT(rc, SL_OK);
    CHECK_EQ_INT(g.errors, 0);
    CHECK_EQ_INT(drops, 0);
    CHECK(want_n > 500); /* the gap splits the stream often */
    CHECK_EQ_INT(got_n, want_n);
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(left, 0);
}

/* The seed demo's shape with 5 s and 1 s delay: drops are counted, and a
 * shorter delay drops more. */
static void generated_tumble(void)
{
    int64_t d5 = -1, d1 = -1;
    generated_case("TUMBLE(INTERVAL '10' SECOND)", 'T', 10000, 10000, 5000, 0, 42, &d5);
    generated_case("TUMBLE(INTERVAL '10' SECOND)", 'T', 10000, 10000, 1000, 0, 42, &d1);
    CHECK(d5 > 0);
    CHECK(d1 > d5);
    int64_t dl = -1;
    generated_case("TUMBLE(INTERVAL '10' SECOND)", 'T', 10000, 10000, 1000, 3000, 7, &dl);
}
BOTH_BACKENDS(generated_tumble)

static void generated_hop_cumulate(void)
{
    int64_t d = -1;
    generated_case("HOP(INTERVAL '5' SECOND, INTERVAL '10' SECOND)", 'H', 5000, 10000, 1000, 0,
                   43, &d);
    CHECK(d > 0);
    generated_case("HOP(INTERVAL '2' SECOND, INTERVAL '6' SECOND)", 'H', 2000, 6000, 2000, 2500,
                   44, &d);
    generated_case("CUMULATE(INTERVAL '2' SECOND, INTERVAL '10' SECOND)", 'C', 2000, 10000,
                   3000, 0, 45, &d);
    CHECK(d > 0);
    generated_case("CUMULATE(INTERVAL '2' SECOND, INTERVAL '10' SECOND)", 'C', 2000, 10000,
                   1000, 4000, 46, &d);
    /* a size that is no multiple of the slide (Flink's group-window HOP): per
     * window, 3 or 4 windows a row; with and without lateness */
    generated_case("HOP(INTERVAL '3' SECOND, INTERVAL '10' SECOND)", 'H', 3000, 10000, 1000, 0,
                   47, &d);
    CHECK(d > 0);
    generated_case("HOP(INTERVAL '3' SECOND, INTERVAL '10' SECOND)", 'H', 3000, 10000, 2000, 2500,
                   48, &d);
}
BOTH_BACKENDS(generated_hop_cumulate)

/* No aggregates, only keys: one row per (user, window) that kept a row, on
 * every path -- TUMBLE, sliced HOP and CUMULATE, and the per-window entries
 * that allowed lateness takes (a late row then updates a fired window with
 * -U/+U of the same row); the drops are those of the same run with
 * aggregates. */
static void generated_distinct(void)
{
    static const struct {
        const char *window;
        char kind;
        int64_t slide, size, delay, lateness;
    } runs[] = {
        {"TUMBLE(INTERVAL '10' SECOND)", 'T', 10000, 10000, 1000, 0},
        {"TUMBLE(INTERVAL '10' SECOND)", 'T', 10000, 10000, 1000, 3000},
        {"HOP(INTERVAL '5' SECOND, INTERVAL '10' SECOND)", 'H', 5000, 10000, 1000, 0},
        {"HOP(INTERVAL '2' SECOND, INTERVAL '6' SECOND)", 'H', 2000, 6000, 2000, 2500},
        {"CUMULATE(INTERVAL '2' SECOND, INTERVAL '10' SECOND)", 'C', 2000, 10000, 3000, 0},
        {"CUMULATE(INTERVAL '2' SECOND, INTERVAL '10' SECOND)", 'C', 2000, 10000, 1000, 4000},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int64_t with_aggs = -1, without = -2;
        generated_run(runs[i].window, runs[i].kind, runs[i].slide, runs[i].size, runs[i].delay,
                      runs[i].lateness, 50 + i, false, &with_aggs);
        generated_run(runs[i].window, runs[i].kind, runs[i].slide, runs[i].size, runs[i].delay,
                      runs[i].lateness, 50 + i, true, &without);
        CHECK_EQ_INT(without, with_aggs);
    }
}
BOTH_BACKENDS(generated_distinct)

static void generated_session(void)
{
    generated_sessions(99);
    generated_sessions(100);
}
BOTH_BACKENDS(generated_session)

/* ---- COLLECT and the JSON aggregates; retractions ---------------------------------- */

/* One row of kind k: user_id, ts = T0 + off ms, amount, name. */
static int feed_kind(harness *h, sl_rowkind k, int64_t user, int64_t off, int amount,
                     const char *name)
{
    sl_value vals[5] = {{.v.i = user}, {.v.i = T0 + off}, {.v.i = amount}, {.v.d = 0}};
    vals[4].v.s.p = name;
    vals[4].v.s.len = (uint32_t)strlen(name);
    sl_row row = {.kind = k, .n = 5, .vals = vals, .ts = T0 + off};
    return sl_rt_process(&h->op, 0, &row);
}

/* Merging sessions carry their kept values into the merged window: COLLECT's
 * copies add up, JSON_OBJECTAGG's members join; nothing is left behind. */
static void kept_sessions(void)
{
    harness *h = start("{\"time-column\": \"ts\", \"window\": \"SESSION(INTERVAL '10' SECOND)\", "
                       "\"group-by\": [\"user_id\"], \"aggregates\": [\"COLLECT(name) AS c\", "
                       "\"COLLECT(DISTINCT name) AS d\", \"JSON_OBJECTAGG(name VALUE amount) AS o\"]}");
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 0, 1, "b"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 18000, 2, "a"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 9000, 3, "c"), SL_OK); /* bridges the two */
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:28, 2026-08-19T15:00:27.999, 1, "
                          "{a=1, b=1, c=1}, {a=1, b=1, c=1}, {\"a\":2,\"b\":1,\"c\":3}]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    done(h);
    /* a key the window already holds fails the job, as Flink's accumulate */
    h = start("{" TS_TUMBLE ", \"aggregates\": [\"JSON_OBJECTAGG(name VALUE amount) AS o\"]}");
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 0, 1, "k"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 2, 10, 2, "k"), SL_ERR);
    CHECK_EQ_STR(h->op.err, "vertex 'win': JSON_OBJECTAGG(name VALUE amount) AS o: the key 'k' is "
                            "already present; JSON_OBJECTAGG takes each key once (Flink fails the "
                            "same way)");
    done(h);
}
BOTH_BACKENDS(kept_sessions)

/* "input-changelog": "retract": a -D row leaves its window's accumulator
 * and COLLECT's copies; a window whose rows all went emits nothing. */
static void retract_rows(void)
{
    harness *h = start("{" TS_TUMBLE ", \"input-changelog\": \"retract\", \"group-by\": "
                       "[\"user_id\"], \"aggregates\": [\"COUNT(*) AS n\", \"SUM(amount) AS s\", "
                       "\"COLLECT(name) AS c\", \"COLLECT(DISTINCT name) AS d\"]}");
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 0, 1, "a"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 10, 2, "b"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 20, 3, "a"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_DELETE, 1, 0, 1, "a"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 2, 30, 5, "x"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_UPDATE_BEFORE, 2, 30, 5, "x"), SL_OK);
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, "
                          "2, 5, {a=1, b=1}, {a=1, b=1}]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    done(h);
    /* MIN/MAX (also of a STRING) find the next extremum when the last copy
     * of theirs goes; DISTINCT counts a value's copies */
    h = start("{" TS_TUMBLE ", \"input-changelog\": \"retract\", \"group-by\": "
              "[\"user_id\"], \"aggregates\": [\"MIN(amount) AS lo\", \"MAX(amount) AS hi\", "
              "\"MIN(name) AS ln\", \"MAX(name) AS hn\", \"COUNT(DISTINCT amount) AS d\"]}");
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 0, 5, "b"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 10, 9, "z"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 20, 9, "z"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 1, 30, 3, "a"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_DELETE, 1, 10, 9, "z"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 2, 0, 4, "m"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 2, 10, 6, "n"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_DELETE, 2, 10, 6, "n"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_DELETE, 2, 0, 4, "m"), SL_OK); /* the window's rows all go */
    CHECK_EQ_INT(feed_kind(h, SL_KIND_INSERT, 3, 0, 8, "c"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_DELETE, 1, 20, 9, "z"), SL_OK);
    CHECK_EQ_INT(feed_kind(h, SL_KIND_DELETE, 1, 30, 3, "a"), SL_OK);
    CHECK_EQ_INT(wm(h, INT64_MAX), SL_OK);
    CHECK_EQ_STR(take(h), "+I[2026-08-19T15:00, 2026-08-19T15:00:10, 2026-08-19T15:00:09.999, 1, "
                          "5, 5, b, b, 1]\n+I[2026-08-19T15:00, 2026-08-19T15:00:10, "
                          "2026-08-19T15:00:09.999, 3, 8, 8, c, c, 1]");
    CHECK_EQ_INT(sl_kstate_entries(h->op.kstate), 0);
    done(h);
}
BOTH_BACKENDS(retract_rows)

SL_TEST_MAIN(SL_TEST(test_plan_errors), SL_TEST(test_output_schema),
             SL_TEST(test_generated_distinct), SL_TEST(test_generated_distinct_rocksdb),
             SL_TEST(test_session_no_aggregates), SL_TEST(test_session_no_aggregates_rocksdb), SL_TEST(test_tumble),
             SL_TEST(test_tumble_rocksdb), SL_TEST(test_string_keys),
             SL_TEST(test_string_keys_rocksdb), SL_TEST(test_tumble_offset),
             SL_TEST(test_tumble_offset_rocksdb), SL_TEST(test_hop), SL_TEST(test_hop_rocksdb),
             SL_TEST(test_cumulate), SL_TEST(test_cumulate_rocksdb), SL_TEST(test_session),
             SL_TEST(test_session_rocksdb), SL_TEST(test_lateness),
             SL_TEST(test_lateness_rocksdb), SL_TEST(test_late_drops),
             SL_TEST(test_late_drops_rocksdb), SL_TEST(test_session_lateness),
             SL_TEST(test_session_lateness_rocksdb), SL_TEST(test_bad_rows),
             SL_TEST(test_processing_time), SL_TEST(test_processing_time_sessions), SL_TEST(test_generated_tumble),
             SL_TEST(test_generated_tumble_rocksdb), SL_TEST(test_generated_hop_cumulate),
             SL_TEST(test_generated_hop_cumulate_rocksdb), SL_TEST(test_generated_session),
             SL_TEST(test_generated_session_rocksdb), SL_TEST(test_count_one_and_boolean_minmax),
             SL_TEST(test_count_one_and_boolean_minmax_rocksdb),
             SL_TEST(test_old_entry_layout_is_refused),
             SL_TEST(test_old_entry_layout_is_refused_rocksdb), SL_TEST(test_kept_sessions),
             SL_TEST(test_kept_sessions_rocksdb), SL_TEST(test_retract_rows),
             SL_TEST(test_retract_rows_rocksdb))
