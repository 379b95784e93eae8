/*
 * test_group_aggregate.c -- unit tests for the group_aggregate operator
 * (operators/group_aggregate.c).
 *
 * Each test builds a vertex by hand (id "agg", a JSON config), plans it
 * against a fixed input schema, opens a keyed state backend for key groups
 * 0..127 the way the runtime does, and drives open/process/close. The emit
 * callback renders every output row as text ("-U[1, 2, 30]"), so each test
 * states the exact changelog it expects, worked out by hand from Flink's
 * GROUP BY semantics. Scripted tests run on both backends (hashmap and
 * rocksdb); a longer pseudo-random changelog is checked against a model
 * kept by the test itself and must come out identical on both backends.
 * State TTL tests drive processing time by hand: the operator reads the
 * clock through sl_group_aggregate_set_clock() (set to the test's `now`),
 * and the test calls proc_time() itself, as the runtime would once the
 * clock reaches op->proc_time_at.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobgraph.h"
#include "keygroup.h"
#include "operator.h"
#include "sl_test.h"
#include "runtime.h"

extern const sl_op_def sl_op_group_aggregate;
#define GA (&sl_op_group_aggregate)
void sl_group_aggregate_set_clock(int64_t (*fn)(void)); /* group_aggregate.c's test hook */

/* The runtime's sl_op_fail lives in the operator registry; a weak copy here
 * lets this test link without the whole library. */
__attribute__((weak)) int sl_op_fail(sl_op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->err, sizeof op->err, fmt, ap);
    va_end(ap);
    return SL_ERR;
}

/* ---- harness ------------------------------------------------------------------ */

#define ROWLEN 200

typedef struct outlog {
    const sl_schema *schema; /* the operator's output schema */
    int n, cap;
    char (*rows)[ROWLEN];
    int64_t last_ts;         /* timestamp of the last emitted row */
} outlog;

static void format_row(const sl_schema *s, const sl_row *row, char *d, size_t cap)
{
    static const char *const kinds[] = {"+I", "-U", "+U", "-D"};
    size_t o = (size_t)snprintf(d, cap, "%s[", kinds[row->kind]);
    for (int i = 0; i < row->n && o < cap; i++) {
        const sl_value *v = &row->vals[i];
        const char *sep = i ? ", " : "";
        if (v->isnull) o += (size_t)snprintf(d + o, cap - o, "%snull", sep);
        else if (s->fields[i].type == SL_T_DOUBLE)
            o += (size_t)snprintf(d + o, cap - o, "%s%g", sep, v->v.d);
        else if (s->fields[i].type == SL_T_STRING)
            o += (size_t)snprintf(d + o, cap - o, "%s%.*s", sep, (int)v->v.s.len, v->v.s.p);
        else o += (size_t)snprintf(d + o, cap - o, "%s%lld", sep, (long long)v->v.i);
    }
    if (o < cap) snprintf(d + o, cap - o, "]");
}

static int record(void *ctx, int output, sl_row *row)
{
    outlog *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->rows = realloc(l->rows, (size_t)l->cap * ROWLEN);
        if (!l->rows) abort();
    }
    format_row(l->schema, row, l->rows[l->n++], ROWLEN);
    l->last_ts = row->ts;
    return SL_OK;
}

typedef struct harness {
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    sl_op op;
    bool opened;
    sl_kstate *ks;
    bool own_ks;        /* teardown closes ks */
    char dir[64];       /* rocksdb directory */
    outlog log;
    char err[512];
} harness;

/* Input schema: user BIGINT, region STRING, amount INT, price DOUBLE,
 * at TIMESTAMP, big BIGINT. */
enum { C_USER, C_REGION, C_AMOUNT, C_PRICE, C_AT, C_BIG, NCOLS };

static bool plan(harness *h, const char *config)
{
    memset(h, 0, sizeof *h);
    h->v.id = (char *)"agg";
    h->v.type = (char *)"group_aggregate";
    h->v.def = GA;
    h->v.config = sl_test_config(config);
    sl_schema_init(&h->in);
    sl_schema_add(&h->in, "user", SL_T_BIGINT);
    sl_schema_add(&h->in, "region", SL_T_STRING);
    sl_schema_add(&h->in, "amount", SL_T_INT);
    sl_schema_add(&h->in, "price", SL_T_DOUBLE);
    sl_schema_add(&h->in, "at", SL_T_TIMESTAMP);
    sl_schema_add(&h->in, "big", SL_T_BIGINT);
    h->plan = sl_test_plan(GA, &h->v, &h->in, &h->out, h->err, sizeof h->err);
    return h->plan != NULL;
}

/* Open the operator as the runtime would, on a fresh backend (or on `ks`
 * when given, which the caller keeps owning). */
static int open_op(harness *h, sl_backend_kind kind, sl_kstate *ks)
{
    if (ks) {
        h->ks = ks;
    } else {
        if (kind == SL_BACKEND_ROCKSDB) {
            snprintf(h->dir, sizeof h->dir, "/tmp/sl_test_ga_XXXXXX");
            if (!mkdtemp(h->dir)) abort();
        }
        char err[256];
        h->ks = sl_kstate_open(kind, h->dir, 128, 0, 127, err, sizeof err);
        if (!h->ks) {
            fprintf(stderr, "sl_kstate_open: %s\n", err);
            return SL_ERR;
        }
        h->own_ks = true;
    }
    sl_op *op = &h->op;
    sl_rt_init(op, &h->v, 0, 128);
    op->plan = h->plan;
    op->kstate = h->ks; /* opened here, not by sl_rt_open: tests share one */
    op->event_timers = sl_timers_new();
    op->proc_timers = sl_timers_new();
    op->emit = record;
    op->emit_ctx = &h->log;
    op->out_connected[0] = 1;
    op->task_name = "agg (1/1)";
    h->log.schema = &h->out;
    h->opened = true;
    return GA->open(op);
}

static void teardown(harness *h)
{
    if (h->opened) {
        h->op.kstate = NULL; /* the harness's, closed below */
        sl_rt_close(&h->op);
    }
    if (h->own_ks) sl_kstate_close(h->ks);
    if (h->dir[0]) rmdir(h->dir); /* normally gone already */
    if (h->plan) GA->plan_free(h->plan);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
    free(h->log.rows);
    memset(h, 0, sizeof *h);
}

/* Values for feed(). */
static sl_value I(int64_t x) { return (sl_value){.v.i = x}; }
static sl_value D(double x) { return (sl_value){.v.d = x}; }
static sl_value S(const char *s) { return (sl_value){.v.s = {s, (uint32_t)strlen(s)}}; }
static const sl_value N = {.isnull = true};

/* One input row (user, region, amount, price, at, big) of the given kind. */
static int feed(harness *h, sl_rowkind kind, sl_value user, sl_value region, sl_value amount,
                sl_value price, sl_value at, sl_value big)
{
    sl_value v[NCOLS] = {user, region, amount, price, at, big};
    sl_row r = {kind, NCOLS, v, 1000};
    return sl_rt_process(&h->op, 0, &r);
}

/* Shorthands for the common (user, amount, price) rows. */
static int feed3(harness *h, sl_rowkind kind, sl_value user, sl_value amount, sl_value price)
{
    return feed(h, kind, user, S("eu"), amount, price, N, N);
}

#define PI SL_KIND_INSERT
#define MU SL_KIND_UPDATE_BEFORE
#define PU SL_KIND_UPDATE_AFTER
#define MD SL_KIND_DELETE

/* Compare the whole log with an expected list (NULL-terminated). */
static bool log_is(const outlog *l, const char *const *want)
{
    int n = 0;
    while (want[n]) n++;
    bool ok = n == l->n;
    for (int i = 0; ok && i < n; i++) ok = strcmp(l->rows[i], want[i]) == 0;
    if (!ok) {
        fprintf(stderr, "  got %d rows:\n", l->n);
        for (int i = 0; i < l->n; i++) fprintf(stderr, "    %s\n", l->rows[i]);
        fprintf(stderr, "  expected %d rows:\n", n);
        for (int i = 0; i < n; i++) fprintf(stderr, "    %s\n", want[i]);
    }
    return ok;
}

static const sl_backend_kind backends[] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};

/* ---- definition and schema ------------------------------------------------------ */

static void test_definition(void)
{
    CHECK_EQ_STR(GA->name, "group_aggregate");
    CHECK(GA->flags == SL_OPF_KEYED);
    CHECK(GA->on_timer != NULL && GA->proc_time == NULL); /* TTL runs on the timer service */
    CHECK_EQ_STR(GA->options[0].key, "group-by");
    CHECK_EQ_STR(GA->options[1].key, "aggregates");
    CHECK_EQ_STR(GA->options[2].key, "input-changelog");
    CHECK_EQ_STR(GA->options[3].key, "state.ttl");
    CHECK_EQ_STR(GA->options[4].key, "table.exec.state.ttl");
    CHECK_EQ_STR(GA->options[5].key, "phase");
    CHECK_EQ_STR(GA->options[6].key, "functions");
    CHECK(GA->options[7].key == NULL);
    CHECK(GA->plan && GA->plan_free && GA->open && GA->process && GA->close);
    CHECK(GA->on_timer && GA->restore_state);
    CHECK(sl_op_find("group_aggregate") == GA);
}

static void test_output_schema(void)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"region\", \"user\"], \"aggregates\": [\"Count(*)\","
                   " \"count( amount ) AS n\", \"sum ( amount ) total\", \"SUM(big)\","
                   " \"SUM(price) AS sp\", \"min(at) AS first_at\", \"MAX(`price`) AS `my max`\","
                   " \"AVG(amount)\", \"avg(big) AS ab\", \"AVG(price) AS ap\","
                   " \"MIN(amount) AS lo\"]}"));
    static const char *const names[] = {"region", "user",     "EXPR$2", "n",      "total",
                                        "EXPR$5", "sp",       "first_at", "my max", "EXPR$9",
                                        "ab",     "ap",       "lo"};
    static const sl_type types[] = {SL_T_STRING, SL_T_BIGINT,    SL_T_BIGINT, SL_T_BIGINT,
                                    SL_T_INT,    SL_T_BIGINT,    SL_T_DOUBLE, SL_T_TIMESTAMP,
                                    SL_T_DOUBLE, SL_T_INT,       SL_T_BIGINT, SL_T_DOUBLE,
                                    SL_T_INT};
    CHECK_EQ_INT(h.out.n, 13);
    for (int i = 0; i < 13; i++) {
        CHECK_EQ_STR(h.out.fields[i].name, names[i]);
        CHECK_EQ_INT(h.out.fields[i].type, types[i]);
    }
    teardown(&h);

    /* no aggregates: a SELECT DISTINCT; one group-by column may be a string */
    CHECK(plan(&h, "{\"group-by\": \"region\"}"));
    CHECK_EQ_INT(h.out.n, 1);
    CHECK_EQ_STR(h.out.fields[0].name, "region");
    teardown(&h);
}

/* ---- changelogs ----------------------------------------------------------------- */

static void run_inserts(sl_backend_kind kind)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"],"
                   " \"aggregates\": [\"COUNT(*) AS cnt\", \"SUM(amount) AS total\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(10), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(2), I(5), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(20), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(3), I(7), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(2), I(1), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(0), N), SL_OK);
    static const char *const want[] = {
        "+I[1, 1, 10]", "+I[2, 1, 5]",  "-U[1, 1, 10]", "+U[1, 2, 30]", "+I[3, 1, 7]",
        "-U[2, 1, 5]",  "+U[2, 2, 6]",  "-U[1, 2, 30]", "+U[1, 3, 30]", NULL};
    CHECK(log_is(&h.log, want));
    CHECK_EQ_INT(h.log.last_ts, 1000); /* the input row's timestamp carries over */
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 3);
    teardown(&h);
}

static void test_inserts_several_keys(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_inserts(backends[b]);
}

static void run_values_and_nulls(sl_backend_kind kind)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"region\"], \"aggregates\": [\"COUNT(*)\","
                   " \"COUNT(amount) AS n\", \"SUM(amount) AS s\", \"MIN(amount) AS lo\","
                   " \"MAX(price) AS hi\", \"AVG(amount) AS a\", \"AVG(price) AS ap\","
                   " \"MIN(at) AS first_at\", \"SUM(big) AS sb\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("eu"), N, N, N, N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("eu"), I(7), D(2.5), I(1000), I(10)), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("eu"), I(-8), D(1.0), I(500), N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("eu"), I(-6), D(4.0), I(2000), I(5)), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("us"), I(3), N, N, N), SL_OK);
    /* AVG over INT truncates toward zero: -1/2 = 0, -7/3 = -2 */
    static const char *const want[] = {
        "+I[eu, 1, 0, null, null, null, null, null, null, null]",
        "-U[eu, 1, 0, null, null, null, null, null, null, null]",
        "+U[eu, 2, 1, 7, 7, 2.5, 7, 2.5, 1000, 10]",
        "-U[eu, 2, 1, 7, 7, 2.5, 7, 2.5, 1000, 10]",
        "+U[eu, 3, 2, -1, -8, 2.5, 0, 1.75, 500, 10]",
        "-U[eu, 3, 2, -1, -8, 2.5, 0, 1.75, 500, 10]",
        "+U[eu, 4, 3, -7, -8, 4, -2, 2.5, 500, 15]",
        "+I[us, 1, 1, 3, 3, null, 3, null, null, null]",
        NULL};
    CHECK(log_is(&h.log, want));
    teardown(&h);
}

static void test_values_and_nulls(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_values_and_nulls(backends[b]);
}

static void run_retraction_input(sl_backend_kind kind)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*) AS cnt\","
                   " \"SUM(amount) AS total\", \"AVG(price) AS ap\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(10), D(1.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(20), D(2.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(2), I(5), D(4.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, MU, I(1), I(10), D(1.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PU, I(1), I(11), D(3.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(2), I(5), D(4.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(3), I(1), D(1.0)), SL_OK); /* no such key: ignored */
    CHECK_EQ_INT(feed3(&h, MD, I(1), I(20), D(2.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(1), I(11), D(3.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PU, I(2), I(9), D(0.5)), SL_OK); /* +U on a new key inserts */
    static const char *const want[] = {
        "+I[1, 1, 10, 1]",  "-U[1, 1, 10, 1]",  "+U[1, 2, 30, 1.5]", "+I[2, 1, 5, 4]",
        "-U[1, 2, 30, 1.5]", "+U[1, 1, 20, 2]",  "-U[1, 1, 20, 2]",   "+U[1, 2, 31, 2.5]",
        "-D[2, 1, 5, 4]",   "-U[1, 2, 31, 2.5]", "+U[1, 1, 11, 3]",   "-D[1, 1, 11, 3]",
        "+I[2, 1, 9, 0.5]", NULL};
    CHECK(log_is(&h.log, want));
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 1); /* keys 1 and 3 hold no state */
    teardown(&h);
}

static void test_retraction_input(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_retraction_input(backends[b]);
}

static void run_unchanged(sl_backend_kind kind)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"],"
                   " \"aggregates\": [\"MAX(amount) AS hi\", \"COUNT(price) AS np\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(5), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(3), N), SL_OK);    /* max stays 5 */
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(5), N), SL_OK);    /* a tie */
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(9), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), N, D(2.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(2), N), SL_OK);
    static const char *const want[] = {"+I[1, 5, 0]", "-U[1, 5, 0]", "+U[1, 9, 0]",
                                       "-U[1, 9, 0]", "+U[1, 9, 1]", NULL};
    CHECK(log_is(&h.log, want));
    teardown(&h);

    /* a retraction that changes nothing visible emits nothing either, until
     * the key's last row goes */
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(price) AS np\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(5), I(1), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(5), I(1), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(5), I(1), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MU, I(5), I(1), N), SL_OK);
    static const char *const want2[] = {"+I[5, 0]", "-D[5, 0]", NULL};
    CHECK(log_is(&h.log, want2));
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    teardown(&h);
}

static void test_unchanged_results_emit_nothing(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_unchanged(backends[b]);
}

static void run_minmax_retract(sl_backend_kind kind)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"input-changelog\": \"retract\","
                   " \"aggregates\": [\"MIN(amount) AS lo\", \"MAX(amount) AS hi\","
                   " \"MAX(price) AS hp\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(5), D(1.5)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(3), D(2.5)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(3), D(0.5)), SL_OK); /* nothing changes */
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(8), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MU, I(1), I(3), D(2.5)), SL_OK); /* one 3 is left; max price 1.5 */
    CHECK_EQ_INT(feed3(&h, MD, I(1), I(3), D(0.5)), SL_OK); /* min goes back to 5 */
    CHECK_EQ_INT(feed3(&h, MD, I(1), I(8), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(1), I(5), D(1.5)), SL_OK);
    /* NaN sorts above every number, as in Flink (Java's Double.compareTo) */
    CHECK_EQ_INT(feed3(&h, PI, I(2), I(1), D(NAN)), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(2), I(1), D(7.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(2), I(1), D(NAN)), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(2), I(1), D(7.0)), SL_OK);
    /* a retraction of a value never inserted: the key empties, and the
     * multiset entries it left behind go with it */
    CHECK_EQ_INT(feed3(&h, PI, I(3), I(4), D(1.0)), SL_OK);
    CHECK_EQ_INT(feed3(&h, MU, I(3), I(2), D(1.0)), SL_OK);
    /* an early retraction (of 5) leaves a negative count, which must not
     * count as present when the minimum is looked for again */
    CHECK_EQ_INT(feed3(&h, PI, I(4), I(10), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(4), I(20), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(4), I(30), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MU, I(4), I(5), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(4), I(10), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(4), I(20), N), SL_OK);
    static const char *const want[] = {
        "+I[1, 5, 5, 1.5]", "-U[1, 5, 5, 1.5]", "+U[1, 3, 5, 2.5]", "-U[1, 3, 5, 2.5]",
        "+U[1, 3, 8, 2.5]", "-U[1, 3, 8, 2.5]", "+U[1, 3, 8, 1.5]", "-U[1, 3, 8, 1.5]",
        "+U[1, 5, 8, 1.5]", "-U[1, 5, 8, 1.5]", "+U[1, 5, 5, 1.5]", "-D[1, 5, 5, 1.5]",
        "+I[2, 1, 1, nan]", "-U[2, 1, 1, nan]", "+U[2, 1, 1, 7]",   "-D[2, 1, 1, 7]",
        "+I[3, 4, 4, 1]",   "-D[3, 4, 4, 1]",
        "+I[4, 10, 10, null]", "-U[4, 10, 10, null]", "+U[4, 10, 20, null]",
        "-U[4, 10, 20, null]", "+U[4, 10, 30, null]", "-U[4, 10, 30, null]",
        "+U[4, 20, 30, null]", "-D[4, 20, 30, null]", NULL};
    CHECK(log_is(&h.log, want));
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    teardown(&h);
}

static void test_minmax_with_retraction(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_minmax_retract(backends[b]);
}

static void test_minmax_insert_only_refuses_retraction(void)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"],"
                   " \"aggregates\": [\"COUNT(*)\", \"MIN(amount) AS lo\"]}"));
    CHECK_EQ_INT(open_op(&h, SL_BACKEND_HASHMAP, NULL), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(5), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, PI, I(1), I(6), N), SL_OK);
    CHECK_EQ_INT(feed3(&h, MD, I(1), N, N), SL_OK); /* a NULL needs no multiset */
    CHECK_EQ_INT(feed3(&h, MU, I(1), I(5), N), SL_ERR);
    CHECK_EQ_STR(h.op.err, "vertex 'agg': aggregate 2 'MIN(amount) AS lo' received a retraction "
                           "(-U) but the vertex's input is insert-only; set \"input-changelog\": "
                           "\"retract\" on it to keep the values MIN/MAX need");
    static const char *const want[] = {"+I[1, 1, 5]", "-U[1, 1, 5]", "+U[1, 2, 5]",
                                       "-U[1, 2, 5]", "+U[1, 1, 5]", NULL};
    CHECK(log_is(&h.log, want));
    teardown(&h);
}

static void run_integer_wrap(sl_backend_kind kind)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(amount) AS s\","
                   " \"AVG(amount) AS a\", \"SUM(big) AS sb\", \"AVG(big) AS ab\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), N, I(2147483647), N, N, I(INT64_MAX)), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), N, I(2147483647), N, N, I(1)), SL_OK);
    /* SUM(INT) wraps at 32 bits like Flink's; AVG(INT) sums in 64 bits */
    static const char *const want[] = {
        "+I[1, 2147483647, 2147483647, 9223372036854775807, 9223372036854775807]",
        "-U[1, 2147483647, 2147483647, 9223372036854775807, 9223372036854775807]",
        "+U[1, -2, 2147483647, -9223372036854775808, -4611686018427387904]", NULL};
    CHECK(log_is(&h.log, want));
    teardown(&h);
}

static void test_integer_overflow_wraps(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_integer_wrap(backends[b]);
}

static void run_compound_key(sl_backend_kind kind)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"region\", \"user\"], \"aggregates\": [\"COUNT(*) AS c\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("eu"), N, N, N, N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(2), S("eu"), N, N, N, N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("us"), N, N, N, N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), S("eu"), N, N, N, N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), N, N, N, N, N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, I(1), N, N, N, N, N), SL_OK);
    CHECK_EQ_INT(feed(&h, PI, N, N, N, N, N, N), SL_OK);
    static const char *const want[] = {"+I[eu, 1, 1]",   "+I[eu, 2, 1]",   "+I[us, 1, 1]",
                                       "-U[eu, 1, 1]",   "+U[eu, 1, 2]",   "+I[null, 1, 1]",
                                       "-U[null, 1, 1]", "+U[null, 1, 2]", "+I[null, null, 1]",
                                       NULL};
    CHECK(log_is(&h.log, want));
    teardown(&h);
}

static void test_compound_and_null_keys(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_compound_key(backends[b]);
}

/* ---- a long changelog against a model, on both backends ------------------------ */

#define MKEYS 40
#define MROWS 4000

typedef struct model_row {
    int64_t user;
    bool amount_null;
    int64_t amount;
} model_row;

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* Feed a pseudo-random changelog: inserts, and retractions of rows still
 * live (as -U or -D), then apply the operator's output to a table and
 * compare it with aggregates computed here from the live rows. */
static void run_model(sl_backend_kind kind, outlog *keep)
{
    static harness h;
    static model_row live[MROWS];
    int nlive = 0;
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"input-changelog\": \"retract\","
                   " \"aggregates\": [\"COUNT(*)\", \"COUNT(amount)\", \"SUM(amount)\","
                   " \"MIN(amount)\", \"MAX(amount)\", \"AVG(amount)\"]}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    uint32_t seed = 42;
    for (int step = 0; step < MROWS; step++) {
        uint32_t r = lcg(&seed);
        if (nlive > 0 && r % 3 == 0) {
            int k = (int)(lcg(&seed) % (uint32_t)nlive);
            model_row m = live[k];
            live[k] = live[--nlive];
            sl_rowkind rk = (r / 3) % 2 ? MU : MD;
            CHECK_EQ_INT(feed3(&h, rk, I(m.user), m.amount_null ? N : I(m.amount), N), SL_OK);
        } else {
            model_row m = {.user = (int64_t)(lcg(&seed) % MKEYS),
                           .amount_null = lcg(&seed) % 10 == 0,
                           .amount = (int64_t)(lcg(&seed) % 201) - 100};
            live[nlive++] = m;
            sl_rowkind rk = r % 7 == 1 ? PU : PI;
            CHECK_EQ_INT(feed3(&h, rk, I(m.user), m.amount_null ? N : I(m.amount), N), SL_OK);
        }
    }

    /* materialize the changelog, checking each retraction matches */
    static char table[MKEYS][ROWLEN];
    static bool pending[MKEYS]; /* a -U was seen, its +U is due next */
    memset(table, 0, sizeof table);
    memset(pending, 0, sizeof pending);
    for (int i = 0; i < h.log.n; i++) {
        const char *row = h.log.rows[i];
        int key = atoi(row + 3);
        CHECK(key >= 0 && key < MKEYS);
        const char *body = row + 2;
        if (strncmp(row, "+I", 2) == 0) {
            CHECK(table[key][0] == '\0');
            snprintf(table[key], ROWLEN, "%s", body);
        } else if (strncmp(row, "-U", 2) == 0) {
            CHECK_EQ_STR(table[key], body);
            CHECK(i + 1 < h.log.n && strncmp(h.log.rows[i + 1], "+U", 2) == 0);
            pending[key] = true;
        } else if (strncmp(row, "+U", 2) == 0) {
            CHECK(pending[key]);
            pending[key] = false;
            snprintf(table[key], ROWLEN, "%s", body);
        } else {
            CHECK_EQ_STR(table[key], body);
            table[key][0] = '\0';
        }
    }
    int nkeys = 0;
    for (int key = 0; key < MKEYS; key++) {
        int64_t cnt = 0, n = 0, sum = 0, lo = 0, hi = 0;
        for (int i = 0; i < nlive; i++) {
            if (live[i].user != key) continue;
            cnt++;
            if (live[i].amount_null) continue;
            int64_t a = live[i].amount;
            if (n == 0 || a < lo) lo = a;
            if (n == 0 || a > hi) hi = a;
            n++;
            sum += a;
        }
        char want[ROWLEN];
        if (cnt == 0) want[0] = '\0';
        else if (n == 0)
            snprintf(want, sizeof want, "[%d, %lld, 0, null, null, null, null]", key,
                     (long long)cnt);
        else
            snprintf(want, sizeof want, "[%d, %lld, %lld, %lld, %lld, %lld, %lld]", key,
                     (long long)cnt, (long long)n, (long long)sum, (long long)lo, (long long)hi,
                     (long long)(sum / n));
        CHECK_EQ_STR(table[key], want);
        if (cnt) nkeys++;
    }
    CHECK(nkeys > MKEYS / 2);          /* the test exercised many live keys ... */
    CHECK(h.log.n > MROWS);            /* ... and many updates */
    *keep = h.log;                     /* hand the log to the caller */
    h.log.rows = NULL;
    teardown(&h);
}

static void test_backends_agree_with_model(void)
{
    outlog a = {0}, b = {0};
    run_model(SL_BACKEND_HASHMAP, &a);
    run_model(SL_BACKEND_ROCKSDB, &b);
    bool same = a.n == b.n && a.n > 0;
    for (int i = 0; same && i < a.n; i++) same = strcmp(a.rows[i], b.rows[i]) == 0;
    free(a.rows);
    free(b.rows);
    CHECK(same);
}

/* ---- state and ownership checks ------------------------------------------------- */

static void test_state_from_other_aggregates_is_refused(void)
{
    static harness h1, h2;
    CHECK(plan(&h1, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(amount) AS n\"]}"));
    CHECK_EQ_INT(open_op(&h1, SL_BACKEND_HASHMAP, NULL), SL_OK);
    CHECK_EQ_INT(feed3(&h1, PI, I(1), I(5), N), SL_OK);
    CHECK(plan(&h2, "{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(amount) AS n\"]}"));
    CHECK_EQ_INT(open_op(&h2, SL_BACKEND_HASHMAP, h1.ks), SL_OK);
    CHECK_EQ_INT(feed3(&h2, PI, I(1), I(5), N), SL_ERR);
    CHECK_EQ_STR(h2.op.err, "vertex 'agg': its state holds a 16-byte accumulator where 24 bytes "
                            "were expected (the aggregates differ from those the state was "
                            "written with)");
    teardown(&h2);
    teardown(&h1);
}

static void test_row_of_foreign_key_group_fails(void)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\"]}"));
    CHECK_EQ_INT(open_op(&h, SL_BACKEND_HASHMAP, NULL), SL_OK);
    /* act as subtask 0 of 2: key groups 0..63 */
    h.op.subtask = 0;
    h.op.parallelism = 2;
    h.op.kg_last = 63;
    /* find a user whose key group the other subtask owns: the key bytes are
     * a non-null marker and the BIGINT little endian (row.h) */
    int64_t user = 0;
    int kg = 0;
    for (user = 0; user < 1000; user++) {
        uint8_t key[9] = {1};
        for (int i = 0; i < 8; i++) key[1 + i] = (uint8_t)((uint64_t)user >> (8 * i));
        kg = (int)(sl_murmur3_32(key, sizeof key, 0) % 128);
        if (kg >= 64) break;
    }
    CHECK(kg >= 64);
    CHECK_EQ_INT(feed3(&h, PI, I(user), I(1), N), SL_ERR);
    char want[300];
    snprintf(want, sizeof want, "agg (1/1): a row of key group %d reached the subtask owning key "
             "groups 0-63 (input 0 is not partitioned by its key)", kg);
    CHECK_EQ_STR(h.op.err, want);
    CHECK_EQ_INT(h.log.n, 0);
    teardown(&h);
}

static void test_open_without_state_fails(void)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\"]}"));
    h.op.plan = h.plan;
    CHECK_EQ_INT(GA->open(&h.op), SL_ERR);
    CHECK_EQ_STR(h.op.err, "vertex 'agg': no keyed state backend was opened for this keyed "
                           "operator");
    GA->close(&h.op);
    teardown(&h);
}

/* ---- in a job graph -------------------------------------------------------------- */

static void test_in_job_graph(void)
{
    static const char job[] =
        "{\"name\": \"totals\", \"parallelism\": 2, \"vertices\": ["
        " {\"id\": \"gen\", \"type\": \"datagen\", \"schema\": [{\"name\": \"user_id\","
        "  \"type\": \"INT\"}, {\"name\": \"amount\", \"type\": \"BIGINT\"}],"
        "  \"config\": {\"number-of-rows\": \"10\"}},"
        " {\"id\": \"agg\", \"type\": \"group_aggregate\", \"config\": {\"group-by\":"
        "  [\"user_id\"], \"aggregates\": [\"COUNT(*) AS cnt\", \"SUM(amount) AS total\","
        "  \"AVG(amount)\"], \"input-changelog\": \"insert-only\"}},"
        " {\"id\": \"out\", \"type\": \"print\"}],"
        " \"edges\": [{\"from\": \"gen\", \"to\": \"agg\", \"strategy\": \"hash\","
        "  \"keys\": [\"user_id\"]}, {\"from\": \"agg\", \"to\": \"out\"}]}";
    char err[512] = "";
    sl_jobgraph *g = sl_jobgraph_parse(job, strlen(job), 1, 0, err, sizeof err);
    if (!g) fprintf(stderr, "  %s\n", err);
    CHECK(g != NULL);
    const sl_vertex *v = &g->v[1];
    CHECK(v->def == GA);
    CHECK_EQ_INT(v->out.n, 4);
    CHECK_EQ_STR(v->out.fields[0].name, "user_id");
    CHECK_EQ_INT(v->out.fields[0].type, SL_T_INT);
    CHECK_EQ_STR(v->out.fields[1].name, "cnt");
    CHECK_EQ_STR(v->out.fields[2].name, "total");
    CHECK_EQ_INT(v->out.fields[2].type, SL_T_BIGINT);
    CHECK_EQ_STR(v->out.fields[3].name, "EXPR$3");
    sl_jobgraph_destroy(g);

    /* the operator's own message comes through with the vertex named once */
    static char bad[sizeof job + 16];
    const char *at = strstr(job, "SUM(amount)");
    snprintf(bad, sizeof bad, "%.*sSUM(amont)%s", (int)(at - job), job, at + 11);
    CHECK(sl_jobgraph_parse(bad, strlen(bad), 1, 0, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "vertex 'agg': aggregate 2 'SUM(amont) AS total': unknown column 'amont'");
}

/* ---- COUNT(1) and MIN/MAX over BOOLEAN (the shared aggregate library) ---------- */

/* Plan against (user BIGINT, ok BOOLEAN), open on `kind`. */
static bool plan_bool(harness *h, const char *config, sl_backend_kind kind)
{
    memset(h, 0, sizeof *h);
    h->v.id = (char *)"agg";
    h->v.type = (char *)"group_aggregate";
    h->v.def = GA;
    h->v.config = json_loads(config, 0, NULL);
    if (!h->v.config) abort();
    sl_schema_init(&h->in);
    sl_schema_add(&h->in, "user", SL_T_BIGINT);
    sl_schema_add(&h->in, "ok", SL_T_BOOLEAN);
    h->plan = sl_test_plan(GA, &h->v, &h->in, &h->out, h->err, sizeof h->err);
    if (!h->plan) fprintf(stderr, "  plan: %s\n", h->err);
    return h->plan && open_op(h, kind, NULL) == SL_OK;
}

static int feed_bool(harness *h, sl_rowkind kind, int64_t user, sl_value ok)
{
    sl_value v[2] = {I(user), ok};
    sl_row r = {kind, 2, v, 1000};
    return sl_rt_process(&h->op, 0, &r);
}

static void run_count_one_and_boolean_minmax(sl_backend_kind kind, bool retract)
{
    static harness h;
    char config[512];
    snprintf(config, sizeof config, "{\"group-by\": [\"user\"], \"input-changelog\": \"%s\", "
             "\"aggregates\": [\"COUNT(1) AS c\", \"MIN(ok) AS lo\", \"MAX(ok) AS hi\", "
             "\"COUNT(ok) AS n\"]}", retract ? "retract" : "insert-only");
    CHECK(plan_bool(&h, config, kind));
    CHECK_EQ_INT(h.out.fields[1].type, SL_T_BIGINT);
    CHECK_EQ_INT(h.out.fields[2].type, SL_T_BOOLEAN);
    CHECK_EQ_INT(h.out.fields[3].type, SL_T_BOOLEAN);
    CHECK_EQ_INT(feed_bool(&h, PI, 1, I(1)), SL_OK);
    CHECK_EQ_INT(feed_bool(&h, PI, 1, N), SL_OK);  /* COUNT(1) counts it, COUNT(ok) not */
    CHECK_EQ_INT(feed_bool(&h, PI, 1, I(0)), SL_OK); /* FALSE < TRUE */
    CHECK_EQ_INT(feed_bool(&h, PI, 2, N), SL_OK);  /* MIN/MAX of NULLs only: NULL */
    if (retract) {
        CHECK_EQ_INT(feed_bool(&h, MD, 1, I(0)), SL_OK); /* the minimum goes back to TRUE */
        CHECK_EQ_INT(feed_bool(&h, MD, 1, I(1)), SL_OK);
    }
    static const char *const common[] = {"+I[1, 1, 1, 1, 1]", "-U[1, 1, 1, 1, 1]",
                                         "+U[1, 2, 1, 1, 1]", "-U[1, 2, 1, 1, 1]",
                                         "+U[1, 3, 0, 1, 2]", "+I[2, 1, null, null, 0]", NULL};
    static const char *const more[] = {"+I[1, 1, 1, 1, 1]", "-U[1, 1, 1, 1, 1]",
                                       "+U[1, 2, 1, 1, 1]", "-U[1, 2, 1, 1, 1]",
                                       "+U[1, 3, 0, 1, 2]", "+I[2, 1, null, null, 0]",
                                       "-U[1, 3, 0, 1, 2]", "+U[1, 2, 1, 1, 1]",
                                       "-U[1, 2, 1, 1, 1]", "+U[1, 1, null, null, 0]", NULL};
    CHECK(log_is(&h.log, retract ? more : common));
    teardown(&h);
}

static void test_count_one_and_boolean_minmax(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        run_count_one_and_boolean_minmax(backends[b], false);
        run_count_one_and_boolean_minmax(backends[b], true);
    }
}

/* ---- plan errors ---------------------------------------------------------------- */

static void plan_error(const char *config, const char *want)
{
    static harness h;
    CHECK(!plan(&h, config));
    CHECK_EQ_STR(h.err, want);
    CHECK_EQ_INT(h.out.n, 0);
    teardown(&h);
}

static void test_plan_errors(void)
{
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\", \"SUM(nme)\"]}",
               "vertex 'agg': aggregate 2 'SUM(nme)': unknown column 'nme'");
    plan_error("{\"aggregates\": [\"COUNT(*)\"]}",
               "vertex 'agg': option 'group-by' must list at least one column (the key), e.g. "
               "[\"user_id\"]");
    plan_error("{\"group-by\": []}", "vertex 'agg': option 'group-by' must list at least one "
               "column (the key), e.g. [\"user_id\"]");
    plan_error("{\"group-by\": {\"a\": 1}}",
               "vertex 'agg': option 'group-by' must be an array of column names, e.g. "
               "[\"user_id\"]");
    plan_error("{\"group-by\": [\"usr\"]}",
               "vertex 'agg': group-by column 'usr' is not in the input");
    plan_error("{\"group-by\": [\"user\", \"USER\"]}",
               "vertex 'agg': group-by column 'USER' is listed twice");
    plan_error("{\"group-by\": [\"user\", 1]}",
               "vertex 'agg': group-by item 2 must be a column name, e.g. \"user_id\"");
    plan_error("{\"group-by\": [\"user\", \"c1\", \"c2\", \"c3\", \"c4\", \"c5\", \"c6\", \"c7\", "
               "\"c8\", \"c9\", \"c10\", \"c11\", \"c12\", \"c13\", \"c14\", \"c15\", \"c16\", "
               "\"c17\", \"c18\", \"c19\", \"c20\", \"c21\", \"c22\", \"c23\", \"c24\", \"c25\", "
               "\"c26\", \"c27\", \"c28\", \"c29\", \"c30\", \"c31\", \"c32\"]}",
               "vertex 'agg': option 'group-by' lists 33 columns, the limit is 32");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"MEDIAN(amount)\"]}",
               "vertex 'agg': aggregate 1 'MEDIAN(amount)': unknown aggregate function 'MEDIAN' "
               "(expected COUNT, SUM, MIN, MAX or AVG)");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(*)\"]}",
               "vertex 'agg': aggregate 1 'SUM(*)': '*' is only allowed in COUNT(*)");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\", \"SUM(region)\"]}",
               "vertex 'agg': aggregate 2 'SUM(region)': SUM needs a numeric column (TINYINT, "
               "SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL); 'region' is STRING");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"avg(region)\"]}",
               "vertex 'agg': aggregate 1 'avg(region)': AVG needs a numeric column (TINYINT, "
               "SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL); 'region' is STRING");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(amount * 2)\"]}",
               "vertex 'agg': aggregate 1 'SUM(amount * 2)': the argument of SUM must be a "
               "single column (compute expressions in a calc vertex first)");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(DISTINCT *)\"]}",
               "vertex 'agg': aggregate 1 'COUNT(DISTINCT *)': DISTINCT needs a column, not *");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"amount\"]}",
               "vertex 'agg': aggregate 1 'amount': expected an aggregate call such as "
               "SUM(amount)");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"SUM()\"]}",
               "vertex 'agg': aggregate 1 'SUM()': expected a column name inside SUM( )");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(amount) AS\"]}",
               "vertex 'agg': aggregate 1 'SUM(amount) AS': expected an alias after AS");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(amount) AS a b\"]}",
               "vertex 'agg': aggregate 1 'SUM(amount) AS a b': unexpected text 'b' after the "
               "alias");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(amount) + 1\"]}",
               "vertex 'agg': aggregate 1 'SUM(amount) + 1': expected an alias after the call, "
               "got '+ 1'");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*) AS user\"]}",
               "vertex 'agg': aggregate 1 'COUNT(*) AS user': duplicate output column 'user' "
               "(rename it with AS)");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": 5}",
               "vertex 'agg': option 'aggregates' must be an array of aggregate calls, e.g. "
               "[\"COUNT(*) AS cnt\"]");
    plan_error("{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\", 3]}",
               "vertex 'agg': aggregate 2 must be a string, e.g. \"SUM(amount) AS total\"");
    plan_error("{\"group-by\": [\"user\"], \"input-changelog\": \"upsert\"}",
               "vertex 'agg': input-changelog must be \"insert-only\" or \"retract\"");
}

/* ---- state TTL -------------------------------------------------------------------- */

static int64_t test_now; /* processing time as the operator sees it */
static int64_t test_clock(void) { return test_now; }

/* proc_time() at `now`, as the runtime calls it: returns how many rows it
 * emitted (TTL expiry must emit none), -1 if it failed. */
static int fire_at(harness *h, int64_t now)
{
    int before = h->log.n;
    test_now = now;
    if (sl_rt_fire_proc(&h->op, now) != SL_OK) {
        fprintf(stderr, "  proc_time(%lld): %s\n", (long long)now, h->op.err);
        return -1;
    }
    return h->log.n - before;
}

static int feed_at(harness *h, int64_t now, sl_rowkind kind, int64_t user, int64_t amount)
{
    test_now = now;
    return feed3(h, kind, I(user), I(amount), N);
}

static void run_ttl_expiry(sl_backend_kind kind)
{
    static harness h;
    sl_group_aggregate_set_clock(test_clock);
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*) AS cnt\","
                   " \"SUM(amount) AS total\"], \"state.ttl\": \"10 s\"}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), INT64_MAX);
    CHECK_EQ_INT(feed_at(&h, 0, PI, 1, 5), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 0, PI, 2, 7), SL_OK);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 10000);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 2);
    CHECK_EQ_INT(feed_at(&h, 8000, PI, 2, 1), SL_OK); /* user 2 touched at 8 s */
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 2); /* no new timer for an update */
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 10000);

    /* 10 s: user 1 (idle since 0) expires silently; user 2 lives to 18 s */
    CHECK_EQ_INT(fire_at(&h, 10000), 0);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 1);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 1);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 18000);
    CHECK_EQ_INT(feed_at(&h, 10000, PI, 1, 3), SL_OK); /* starts from empty: +I, count 1 */
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 18000);            /* user 1's new timer is at 20 s */
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 2);

    CHECK_EQ_INT(fire_at(&h, 17999), 0); /* early: nothing is due */
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 2);
    CHECK_EQ_INT(fire_at(&h, 18000), 0);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 1);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 20000);
    CHECK_EQ_INT(feed_at(&h, 18000, PI, 2, 4), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 19000, PI, 1, 10), SL_OK); /* user 1 still alive at 19 s */
    static const char *const want[] = {
        "+I[1, 1, 5]", "+I[2, 1, 7]", "-U[2, 1, 7]", "+U[2, 2, 8]", "+I[1, 1, 3]",
        "+I[2, 1, 4]", "-U[1, 1, 3]", "+U[1, 2, 13]", NULL};
    CHECK(log_is(&h.log, want));

    /* a late firing (the task was busy) expires everything idle too long */
    CHECK_EQ_INT(fire_at(&h, 60000), 0);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 0);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), INT64_MAX);
    teardown(&h);
    sl_group_aggregate_set_clock(NULL);
}

static void test_ttl_expiry(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_ttl_expiry(backends[b]);
}

/* A row that finds its key's state past the TTL before the timer ran sees
 * no state (Flink never returns expired state). */
static void run_ttl_expired_before_timer(sl_backend_kind kind)
{
    static harness h;
    sl_group_aggregate_set_clock(test_clock);
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*) AS cnt\","
                   " \"MAX(amount) AS hi\"], \"input-changelog\": \"retract\","
                   " \"table.exec.state.ttl\": \"10 s\"}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 0, PI, 1, 5), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 1000, PI, 1, 9), SL_OK);
    /* acc + two "minmax" entries (5 and 9) */
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 3);
    CHECK_EQ_INT(feed_at(&h, 11000, PI, 1, 2), SL_OK); /* idle 10 s: expired, no timer run yet */
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 2);          /* acc + the entry of 2 */
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 1); /* the old timer went with the state */
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 21000);      /* the runtime's: the earliest timer */
    CHECK_EQ_INT(fire_at(&h, 11000), 0);                /* nothing due any more */
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 21000);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 2);
    /* a retraction reaching an expired key is ignored, and clears it */
    CHECK_EQ_INT(feed_at(&h, 30000, MU, 1, 2), SL_OK);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 0);
    static const char *const want[] = {"+I[1, 1, 5]", "-U[1, 1, 5]", "+U[1, 2, 9]",
                                       "+I[1, 1, 2]", NULL};
    CHECK(log_is(&h.log, want));
    teardown(&h);
    sl_group_aggregate_set_clock(NULL);
}

static void test_ttl_expired_before_timer(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) run_ttl_expired_before_timer(backends[b]);
}

/* A key retracted to nothing takes its timer with it; one re-created later
 * gets a fresh one. */
static void run_ttl_retraction_removes_timer(sl_backend_kind kind)
{
    static harness h;
    sl_group_aggregate_set_clock(test_clock);
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"SUM(amount) AS s\"],"
                   " \"state.ttl\": \"5 s\"}"));
    CHECK_EQ_INT(open_op(&h, kind, NULL), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 1000, PI, 4, 3), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 2000, MD, 4, 3), SL_OK);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 0);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    CHECK_EQ_INT(feed_at(&h, 3000, PI, 4, 8), SL_OK);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 1);
    CHECK_EQ_INT(fire_at(&h, 6000), 0); /* the timer of the first life was removed */
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 1);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 8000);
    CHECK_EQ_INT(fire_at(&h, 8000), 0);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    static const char *const want[] = {"+I[4, 3]", "-D[4, 3]", "+I[4, 8]", NULL};
    CHECK(log_is(&h.log, want));
    teardown(&h);
    sl_group_aggregate_set_clock(NULL);
}

static void test_ttl_retraction_removes_timer(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++)
        run_ttl_retraction_removes_timer(backends[b]);
}

/* A key updated every second for 100 s with a 10 s TTL keeps one timer,
 * which fires about once per TTL period, and expires 10 s after its last
 * update; the runtime's loop is imitated millisecond by millisecond. */
static void test_ttl_busy_key_keeps_one_timer(void)
{
    static harness h;
    sl_group_aggregate_set_clock(test_clock);
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*) AS cnt\"],"
                   " \"state.ttl\": 10000}"));
    CHECK_EQ_INT(open_op(&h, SL_BACKEND_HASHMAP, NULL), SL_OK);
    int calls = 0;
    for (int64_t t = 0; t <= 120000; t++) {
        if (t >= sl_rt_next_proc(&h.op)) {
            CHECK_EQ_INT(fire_at(&h, t), 0);
            calls++;
        }
        if (t % 1000 == 0 && t < 100000) CHECK_EQ_INT(feed_at(&h, t, PI, 7, 1), SL_OK);
        CHECK(sl_timers_count(h.op.proc_timers) <= 1);
        if (t == 108999) CHECK_EQ_INT(sl_kstate_entries(h.ks), 1);
        if (t == 109000) CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    }
    /* the timer fires at 10 s and moves to 19 s (the last update was at
     * 9 s), then 28, 37, ... 100 s (last update 99 s), and at 109 s the key
     * expires: 10 + 9k s for k = 0..10, then 109 s */
    CHECK_EQ_INT(calls, 12);
    CHECK_EQ_INT(h.log.n, 1 + 2 * 99);
    CHECK_EQ_STR(h.log.rows[h.log.n - 1], "+U[7, 100]");
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), INT64_MAX);
    teardown(&h);
    sl_group_aggregate_set_clock(NULL);
}

/* A timer that is not the one the key's state records (none arise in a
 * running job, but restored or foreign timers could) is dropped when it
 * fires early, leaving the key's own timer as the only one. */
static void test_ttl_stray_timer_is_dropped(void)
{
    static harness h;
    sl_group_aggregate_set_clock(test_clock);
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\"],"
                   " \"state.ttl\": \"10 s\"}"));
    CHECK_EQ_INT(open_op(&h, SL_BACKEND_HASHMAP, NULL), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 0, PI, 1, 1), SL_OK);    /* its timer: 10 s */
    CHECK_EQ_INT(feed_at(&h, 3000, PI, 1, 1), SL_OK); /* last update 3 s */
    uint8_t key[9] = {1, 1};                          /* user 1, as the operator encodes it */
    sl_timer stray = {.time = 5000, .kg = sl_kg_of_key(key, sizeof key, 128), .key = key,
                      .klen = sizeof key, .ns = "", .nslen = 0};
    sl_timers_add(h.op.proc_timers, &stray);
    CHECK_EQ_INT(fire_at(&h, 5000), 0);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 1);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 10000);
    CHECK_EQ_INT(fire_at(&h, 10000), 0); /* its own: moved to 13 s */
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 13000);
    CHECK_EQ_INT(fire_at(&h, 13000), 0);
    CHECK_EQ_INT(sl_kstate_entries(h.ks), 0);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 0);
    teardown(&h);
    sl_group_aggregate_set_clock(NULL);
}

/* "0" (or no option) keeps state forever: no timers, the old layout. */
static void test_ttl_zero_keeps_state(void)
{
    static harness h;
    sl_group_aggregate_set_clock(test_clock);
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\"],"
                   " \"state.ttl\": \"0\"}"));
    CHECK_EQ_INT(open_op(&h, SL_BACKEND_HASHMAP, NULL), SL_OK);
    CHECK_EQ_INT(feed_at(&h, 0, PI, 1, 1), SL_OK);
    CHECK_EQ_INT(sl_timers_count(h.op.proc_timers), 0);
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), INT64_MAX);
    CHECK_EQ_INT(fire_at(&h, INT64_MAX), 0);
    CHECK_EQ_INT(feed_at(&h, 1000000000, PI, 1, 1), SL_OK);
    static const char *const want[] = {"+I[1, 1]", "-U[1, 1]", "+U[1, 2]", NULL};
    CHECK(log_is(&h.log, want));
    const void *val;
    size_t vlen;
    char err[256];
    int sid = sl_kstate_register(h.ks, "acc");
    uint8_t key[9] = {1, 1}; /* non-null marker, BIGINT 1 little endian */
    sl_kstate_set_key(h.ks, key, sizeof key, sl_kg_of_key(key, sizeof key, 128));
    CHECK_EQ_INT(sl_kstate_get(h.ks, sid, "", 0, &val, &vlen, err, sizeof err), SL_OK);
    CHECK_EQ_INT(vlen, 8); /* the row count only, as without the option */
    teardown(&h);
    sl_group_aggregate_set_clock(NULL);
}

static void copy_timer(void *ctx, const sl_timer *tm) { sl_timers_add(ctx, tm); }

/* State written with one TTL setting and read with the other is refused
 * with a message saying what to set: on restore (the timers tell) and,
 * failing that, on the first read of an accumulator of the wrong size. */
static void test_ttl_state_mismatch(void)
{
    static harness h1, h2;
    sl_group_aggregate_set_clock(test_clock);
    const char *with = "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\"],"
                       " \"state.ttl\": \"1 min\"}";
    const char *without = "{\"group-by\": [\"user\"], \"aggregates\": [\"COUNT(*)\"]}";

    /* with TTL -> with TTL: restore arms the earliest restored timer */
    CHECK(plan(&h1, with));
    CHECK_EQ_INT(open_op(&h1, SL_BACKEND_HASHMAP, NULL), SL_OK);
    CHECK_EQ_INT(feed_at(&h1, 5000, PI, 1, 1), SL_OK);
    CHECK_EQ_INT(feed_at(&h1, 2000, PI, 2, 1), SL_OK);
    CHECK(plan(&h2, with));
    CHECK_EQ_INT(open_op(&h2, SL_BACKEND_HASHMAP, h1.ks), SL_OK);
    for (int kg = 0; kg < 128; kg++) sl_timers_each(h1.op.proc_timers, kg, copy_timer,
                                                    h2.op.proc_timers);
    CHECK_EQ_INT(GA->restore_state(&h2.op, NULL, NULL, 0), SL_OK);
    CHECK_EQ_INT(sl_rt_next_proc(&h2.op), 62000);
    CHECK_EQ_INT(fire_at(&h2, 62000), 0);
    CHECK_EQ_INT(sl_kstate_entries(h1.ks), 1); /* user 2 expired, user 1 (65 s) not yet */
    teardown(&h2);

    /* with TTL -> without */
    CHECK(plan(&h2, without));
    CHECK_EQ_INT(open_op(&h2, SL_BACKEND_HASHMAP, h1.ks), SL_OK);
    for (int kg = 0; kg < 128; kg++) sl_timers_each(h1.op.proc_timers, kg, copy_timer,
                                                    h2.op.proc_timers);
    CHECK_EQ_INT(GA->restore_state(&h2.op, NULL, NULL, 0), SL_ERR);
    CHECK_EQ_STR(h2.op.err, "vertex 'agg': the restored state was written with 'state.ttl' set "
                            "(expiry timers: 2); set 'state.ttl' on the vertex to "
                            "restore it");
    teardown(&h2);
    teardown(&h1);

    /* without TTL -> with */
    CHECK(plan(&h1, without));
    CHECK_EQ_INT(open_op(&h1, SL_BACKEND_HASHMAP, NULL), SL_OK);
    CHECK_EQ_INT(feed_at(&h1, 0, PI, 1, 1), SL_OK);
    CHECK(plan(&h2, with));
    CHECK_EQ_INT(open_op(&h2, SL_BACKEND_HASHMAP, h1.ks), SL_OK);
    CHECK_EQ_INT(GA->restore_state(&h2.op, NULL, NULL, 0), SL_ERR);
    CHECK_EQ_STR(h2.op.err, "vertex 'agg': the restored state was written without "
                            "'state.ttl'; remove 'state.ttl' from the vertex to restore it");
    /* and read directly, the accumulator's size gives it away */
    CHECK_EQ_INT(feed_at(&h2, 0, PI, 1, 1), SL_ERR);
    CHECK_EQ_STR(h2.op.err, "vertex 'agg': its state holds a 8-byte accumulator where 24 bytes "
                            "were expected (the aggregates or the use of 'state.ttl' differ "
                            "from those the state was written with)");
    teardown(&h2);
    teardown(&h1);
    sl_group_aggregate_set_clock(NULL);
}

static void test_ttl_needs_timers(void)
{
    static harness h;
    CHECK(plan(&h, "{\"group-by\": [\"user\"], \"state.ttl\": \"1 s\"}"));
    CHECK_EQ_INT(open_op(&h, SL_BACKEND_HASHMAP, NULL), SL_OK);
    GA->close(&h.op);
    sl_timers_destroy(h.op.proc_timers);
    h.op.proc_timers = NULL;
    CHECK_EQ_INT(GA->open(&h.op), SL_ERR);
    GA->close(&h.op);
    CHECK_EQ_STR(h.op.err, "vertex 'agg': 'state.ttl' needs processing-time timers, but none "
                           "were set up for this operator");
    teardown(&h);
}

static void test_ttl_options(void)
{
    plan_error("{\"group-by\": [\"user\"], \"state.ttl\": \"abc\"}",
               "vertex 'agg': option 'state.ttl' must be a duration like '5 s'");
    plan_error("{\"group-by\": [\"user\"], \"state.ttl\": \"-1 s\"}",
               "vertex 'agg': option 'state.ttl' must be a duration like '5 s'");
    plan_error("{\"group-by\": [\"user\"], \"state.ttl\": [1]}",
               "vertex 'agg': option 'state.ttl' must be a duration like '5 s'");
    plan_error("{\"group-by\": [\"user\"], \"table.exec.state.ttl\": \"1 fortnight\"}",
               "vertex 'agg': option 'table.exec.state.ttl' must be a duration like '5 s'");
    plan_error("{\"group-by\": [\"user\"], \"state.ttl\": \"1 h\","
               " \"table.exec.state.ttl\": \"1 h\"}",
               "vertex 'agg': set either 'state.ttl' or its alias 'table.exec.state.ttl', not "
               "both");

    /* accepted in a job graph (the options list), errors reach the submitter */
    static const char job[] =
        "{\"name\": \"ttl\", \"vertices\": ["
        " {\"id\": \"gen\", \"type\": \"datagen\", \"schema\": [{\"name\": \"k\","
        "  \"type\": \"INT\"}], \"config\": {\"number-of-rows\": \"10\"}},"
        " {\"id\": \"agg\", \"type\": \"group_aggregate\", \"config\": {\"group-by\": [\"k\"],"
        "  \"aggregates\": [\"COUNT(*) AS cnt\"], \"table.exec.state.ttl\": \"%s\"}},"
        " {\"id\": \"out\", \"type\": \"print\"}],"
        " \"edges\": [{\"from\": \"gen\", \"to\": \"agg\", \"strategy\": \"hash\","
        "  \"keys\": [\"k\"]}, {\"from\": \"agg\", \"to\": \"out\"}]}";
    char text[sizeof job + 16], err[512] = "";
    snprintf(text, sizeof text, job, "1 h");
    sl_jobgraph *g = sl_jobgraph_parse(text, strlen(text), 1, 0, err, sizeof err);
    if (!g) fprintf(stderr, "  %s\n", err);
    CHECK(g != NULL);
    sl_jobgraph_destroy(g);
    snprintf(text, sizeof text, job, "abc");
    CHECK(sl_jobgraph_parse(text, strlen(text), 1, 0, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "vertex 'agg': option 'table.exec.state.ttl' must be a duration like '5 s'");
}

SL_TEST_MAIN(SL_TEST(test_definition), SL_TEST(test_output_schema),
             SL_TEST(test_inserts_several_keys), SL_TEST(test_values_and_nulls),
             SL_TEST(test_retraction_input), SL_TEST(test_unchanged_results_emit_nothing),
             SL_TEST(test_minmax_with_retraction),
             SL_TEST(test_minmax_insert_only_refuses_retraction),
             SL_TEST(test_integer_overflow_wraps), SL_TEST(test_compound_and_null_keys),
             SL_TEST(test_backends_agree_with_model),
             SL_TEST(test_state_from_other_aggregates_is_refused),
             SL_TEST(test_row_of_foreign_key_group_fails), SL_TEST(test_open_without_state_fails),
             SL_TEST(test_in_job_graph), SL_TEST(test_count_one_and_boolean_minmax),
             SL_TEST(test_plan_errors), SL_TEST(test_ttl_expiry),
             SL_TEST(test_ttl_expired_before_timer), SL_TEST(test_ttl_retraction_removes_timer),
             SL_TEST(test_ttl_busy_key_keeps_one_timer), SL_TEST(test_ttl_stray_timer_is_dropped),
             SL_TEST(test_ttl_zero_keeps_state),
             SL_TEST(test_ttl_state_mismatch), SL_TEST(test_ttl_needs_timers),
             SL_TEST(test_ttl_options))
