/*
 * test_calc.c -- unit tests for the calc operator (operators/calc.c).
 *
 * Each test builds an sl_vertex by hand (an id and a JSON config), calls
 * plan() against a hand-made input schema, then drives open/process/close
 * on an sl_op whose emit callback renders every emitted row to text
 * ("+I[4, 4, 1767225600040] ts=40"), so expectations are literal strings
 * worked out by hand. Plan errors are checked word for word.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobgraph.h"
#include "operator.h"
#include "sl_test.h"

extern const sl_op_def sl_op_calc;

/* The runtime's sl_op_fail lives in the operator registry; a weak copy here
 * lets this test link without the whole library (the real one wins when
 * it is linked in). */
__attribute__((weak)) int sl_op_fail(sl_op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->err, sizeof op->err, fmt, ap);
    va_end(ap);
    return SL_ERR;
}

/* ---- a harness: one calc vertex, a recording downstream ---------------- */

typedef struct rec {
    const sl_schema *schema; /* the operator's output schema */
    int n;                   /* rows recorded */
    char rows[64][160];
    int emit_rc;             /* what the downstream answers */
} rec;

static int record(void *ctx, int output, sl_row *row)
{
    rec *r = ctx;
    if (r->n < 64) {
        char *d = r->rows[r->n++];
        size_t cap = sizeof r->rows[0], o = 0;
        const char *kind[] = {"+I", "-U", "+U", "-D"};
        o += (size_t)snprintf(d + o, cap - o, "%s[", kind[row->kind]);
        for (int i = 0; i < row->n && o < cap; i++) {
            const sl_value *v = &row->vals[i];
            const char *sep = i ? ", " : "";
            if (v->isnull) {
                o += (size_t)snprintf(d + o, cap - o, "%snull", sep);
                continue;
            }
            switch (r->schema->fields[i].type) {
            case SL_T_DOUBLE: o += (size_t)snprintf(d + o, cap - o, "%s%g", sep, v->v.d); break;
            case SL_T_BOOLEAN:
                o += (size_t)snprintf(d + o, cap - o, "%s%s", sep, v->v.i ? "true" : "false");
                break;
            case SL_T_STRING:
            case SL_T_BYTES:
                o += (size_t)snprintf(d + o, cap - o, "%s%.*s", sep, (int)v->v.s.len, v->v.s.p);
                break;
            default:
                o += (size_t)snprintf(d + o, cap - o, "%s%lld", sep, (long long)v->v.i);
                break;
            }
        }
        if (o < cap) {
            if (row->ts == SL_TS_NONE) snprintf(d + o, cap - o, "]");
            else snprintf(d + o, cap - o, "] ts=%lld", (long long)row->ts);
        }
    }
    return r->emit_rc;
}

typedef struct harness {
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    sl_op op;
    rec rec;
    char err[400];
} harness;

/* Input schema for most tests: id BIGINT, name STRING, score DOUBLE. */
static void input_schema(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "id", SL_T_BIGINT);
    sl_schema_add(s, "name", SL_T_STRING);
    sl_schema_add(s, "score", SL_T_DOUBLE);
}

/* Plan the vertex from a JSON config; true when plan() succeeded. */
static bool plan(harness *h, const char *config)
{
    memset(h, 0, sizeof *h);
    h->v.id = (char *)"calc";
    h->v.type = (char *)"calc";
    h->v.def = &sl_op_calc;
    h->v.config = sl_test_config(config);
    input_schema(&h->in);
    h->plan = sl_test_plan(&sl_op_calc, &h->v, &h->in, &h->out, h->err, sizeof h->err);
    return h->plan != NULL;
}

static int open_op(harness *h, size_t scratch)
{
    h->op.def = &sl_op_calc;
    h->op.vertex = &h->v;
    h->op.plan = h->plan;
    h->op.parallelism = 1;
    h->op.in = &h->in;
    h->op.out = &h->out;
    h->op.emit = record;
    h->op.emit_ctx = &h->rec;
    h->op.task_name = "calc (1/1)";
    h->rec.schema = &h->out;
    sl_arena_init(&h->op.scratch, scratch);
    return sl_op_calc.open(&h->op);
}

/* Feed one row, resetting scratch first as the runtime does. */
static int feed(harness *h, sl_rowkind kind, int64_t ts, int64_t id, const char *name,
                double score)
{
    sl_value v[3];
    memset(v, 0, sizeof v);
    v[0].v.i = id;
    if (name) {
        v[1].v.s.p = name;
        v[1].v.s.len = (uint32_t)strlen(name);
    } else {
        v[1].isnull = true;
    }
    v[2].v.d = score;
    sl_row r = {kind, 3, v, ts};
    sl_arena_reset(&h->op.scratch);
    return sl_op_calc.process(&h->op, 0, &r);
}

static void teardown(harness *h)
{
    if (h->op.def) {
        sl_op_calc.close(&h->op);
        sl_arena_free(&h->op.scratch);
    }
    if (h->plan) sl_op_calc.plan_free(h->plan);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
}

/* ---- tests ------------------------------------------------------------------- */

static void test_definition(void)
{
    CHECK_EQ_STR(sl_op_calc.name, "calc");
    CHECK(sl_op_calc.flags == 0);
    CHECK_EQ_STR(sl_op_calc.options[0].key, "projection");
    CHECK_EQ_STR(sl_op_calc.options[1].key, "filter");
    CHECK_EQ_STR(sl_op_calc.options[2].key, "functions");
    CHECK_EQ_STR(sl_op_calc.options[3].key, "python.fn-execution.bundle.size");
    CHECK_EQ_STR(sl_op_calc.options[4].key, "python.fn-execution.bundle.time");
    CHECK_EQ_STR(sl_op_calc.options[5].key, "table.local-time-zone");
    CHECK(sl_op_calc.options[6].key == NULL);
    CHECK(sl_op_calc.process && sl_op_calc.open && sl_op_calc.close && sl_op_calc.plan_free);
}

static void test_projection_and_filter(void)
{
    static harness h;
    CHECK(plan(&h, "{\"projection\": [\"id\", \"id % 5 AS user_id\","
                   " \"TO_TIMESTAMP_LTZ(1767225600000 + id * 10, 3) AS ts\","
                   " \"UPPER(name) AS uname\", \"score * 2\"],"
                   " \"filter\": \"id % 2 = 0\"}"));
    CHECK_EQ_INT(h.out.n, 5);
    CHECK_EQ_STR(h.out.fields[0].name, "id");
    CHECK(h.out.fields[0].type == SL_T_BIGINT);
    CHECK_EQ_STR(h.out.fields[1].name, "user_id");
    CHECK(h.out.fields[1].type == SL_T_INT); /* BIGINT % INT: the divisor's type (Flink) */
    CHECK_EQ_STR(h.out.fields[2].name, "ts");
    CHECK(h.out.fields[2].type == SL_T_TIMESTAMP);
    CHECK_EQ_STR(h.out.fields[3].name, "uname");
    CHECK(h.out.fields[3].type == SL_T_STRING);
    CHECK_EQ_STR(h.out.fields[4].name, "EXPR$4");
    CHECK(h.out.fields[4].type == SL_T_DOUBLE);

    CHECK_EQ_INT(open_op(&h, 4096), SL_OK);
    const char *names[] = {"ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo"};
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, 1000 + i, i, names[i], i + 0.25), SL_OK);
    CHECK_EQ_INT(h.rec.n, 5);
    CHECK_EQ_STR(h.rec.rows[0], "+I[0, 0, 1767225600000, ANN, 0.5] ts=1000");
    CHECK_EQ_STR(h.rec.rows[1], "+I[2, 2, 1767225600020, CY, 4.5] ts=1002");
    CHECK_EQ_STR(h.rec.rows[2], "+I[4, 4, 1767225600040, EVE, 8.5] ts=1004");
    CHECK_EQ_STR(h.rec.rows[3], "+I[6, 1, 1767225600060, GUS, 12.5] ts=1006");
    CHECK_EQ_STR(h.rec.rows[4], "+I[8, 3, 1767225600080, IVY, 16.5] ts=1008");
    CHECK_EQ_INT(h.op.metrics.records_out, 5);

    /* the row kind and timestamp pass through; NULL propagates */
    CHECK_EQ_INT(feed(&h, SL_KIND_UPDATE_BEFORE, SL_TS_NONE, 12, NULL, 1), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_DELETE, -5, -4, "zed", -1), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_UPDATE_AFTER, 7, -3, "odd", 0), SL_OK); /* -3 % 2 = -1 */
    CHECK_EQ_INT(h.rec.n, 7);
    CHECK_EQ_STR(h.rec.rows[5], "-U[12, 2, 1767225600120, null, 2]");
    CHECK_EQ_STR(h.rec.rows[6], "-D[-4, -4, 1767225599960, ZED, -2] ts=-5");
    teardown(&h);
}

static void test_pass_through(void)
{
    static harness h;
    CHECK(plan(&h, "{}"));
    CHECK(sl_schema_equal(&h.in, &h.out));
    CHECK_EQ_INT(open_op(&h, 0), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, 5, 1, "a", 1.5), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_UPDATE_AFTER, SL_TS_NONE, 2, NULL, 2), SL_OK);
    CHECK_EQ_INT(h.rec.n, 2);
    CHECK_EQ_STR(h.rec.rows[0], "+I[1, a, 1.5] ts=5");
    CHECK_EQ_STR(h.rec.rows[1], "+U[2, null, 2]");
    teardown(&h);

    /* a filter alone keeps every column */
    CHECK(plan(&h, "{\"filter\": \"name LIKE 'a%' AND score > 1\"}"));
    CHECK(sl_schema_equal(&h.in, &h.out));
    CHECK_EQ_INT(open_op(&h, 0), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, 1, 1, "ann", 1.5), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, 2, 2, "bob", 2.5), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, 3, 3, "al", 0.5), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, 4, 4, NULL, 9), SL_OK); /* NULL filter: dropped */
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, 5, 5, "amy", 3), SL_OK);
    CHECK_EQ_INT(h.rec.n, 2);
    CHECK_EQ_STR(h.rec.rows[0], "+I[1, ann, 1.5] ts=1");
    CHECK_EQ_STR(h.rec.rows[1], "+I[5, amy, 3] ts=5");
    teardown(&h);

    /* "projection": null is the same as absent */
    CHECK(plan(&h, "{\"projection\": null, \"filter\": null}"));
    CHECK(sl_schema_equal(&h.in, &h.out));
    teardown(&h);
}

/* Strings built by expressions come from scratch, reset per record. */
static void test_strings_in_scratch(void)
{
    static harness h;
    CHECK(plan(&h, "{\"projection\": [\"CONCAT(name, '#', CAST(id AS STRING)) AS tag\","
                   " \"SUBSTRING(name FROM 2) AS rest\"]}"));
    CHECK_EQ_INT(open_op(&h, 64), SL_OK);
    char name[40];
    for (int i = 0; i < 40; i++) { /* more records than one arena could hold without reset */
        snprintf(name, sizeof name, "user%02d", i);
        CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, i * 100, name, 0), SL_OK);
    }
    CHECK_EQ_INT(h.rec.n, 40);
    CHECK_EQ_STR(h.rec.rows[0], "+I[user00#0, ser00]");
    CHECK_EQ_STR(h.rec.rows[39], "+I[user39#3900, ser39]");

    /* a result bigger than the scratch space fails the task cleanly */
    char big[100];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, 1, big, 0), SL_ERR);
    CHECK_EQ_STR(h.op.err, "vertex 'calc': projection item 1: string result too large "
                           "(101 bytes; scratch space exhausted) at position 1 (row 41 of subtask 0)");
    teardown(&h);
}

static void test_runtime_errors(void)
{
    static harness h;
    CHECK(plan(&h, "{\"projection\": [\"id\", \"100 / id AS q\"]}"));
    CHECK_EQ_INT(open_op(&h, 1024), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, 7, "a", 0), SL_OK);
    CHECK_EQ_STR(h.rec.rows[0], "+I[7, 14]");
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, 0, "a", 0), SL_ERR);
    CHECK_EQ_STR(h.op.err, "vertex 'calc': projection item 2: division by zero at position 5 (row 2 of subtask 0)");
    CHECK_EQ_INT(h.rec.n, 1);
    teardown(&h);

    CHECK(plan(&h, "{\"filter\": \"CAST(name AS INT) > 0\"}"));
    CHECK_EQ_INT(open_op(&h, 1024), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, 1, "12", 0), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, 1, "twelve", 0), SL_ERR);
    CHECK_EQ_STR(h.op.err, "vertex 'calc': filter: cannot CAST 'twelve' to INT at position 1 (row 2 of subtask 0)");
    CHECK_EQ_INT(h.rec.n, 1);
    teardown(&h);
}

/* What the downstream answers (backpressure, failure) comes back up. */
static void test_emit_result_propagates(void)
{
    static harness h;
    CHECK(plan(&h, "{\"projection\": [\"id\"]}"));
    CHECK_EQ_INT(open_op(&h, 0), SL_OK);
    h.rec.emit_rc = SL_AGAIN;
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, 1, "a", 0), SL_AGAIN);
    h.rec.emit_rc = SL_ERR;
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, SL_TS_NONE, 1, "a", 0), SL_ERR);
    teardown(&h);
}

/* plan() refuses each bad config with a message naming vertex, item and
 * position, and leaves no output schema behind. */
static void test_plan_errors(void)
{
    static const struct {
        const char *config;
        const char *err;
    } cases[] = {
        {"{\"projection\": [\"id\", \"usr_id % 5 AS user_id\"]}",
         "vertex 'calc': projection item 2: line 1, column 1: unknown column 'usr_id'"},
        {"{\"projection\": [\"id\", \"id + usr\"]}",
         "vertex 'calc': projection item 2: line 1, column 6: unknown column 'usr'"},
        {"{\"projection\": [\"'a' + 1\"]}",
         "vertex 'calc': projection item 1: line 1, column 5: cannot apply '+' to CHAR(1) and INT"},
        {"{\"projection\": [\"NOPE(id)\"]}",
         "vertex 'calc': projection item 1: line 1, column 1: unknown function 'NOPE'"},
        {"{\"projection\": [\"ABS(id, id)\"]}",
         "vertex 'calc': projection item 1: line 1, column 1: ABS takes 1 argument, got 2"},
        {"{\"projection\": [\"id\", \"id + 1 AS ID\"]}",
         "vertex 'calc': projection item 2: duplicate output column 'ID' (rename it with AS)"},
        {"{\"projection\": [\"name\", \"id AS name\"]}",
         "vertex 'calc': projection item 2: duplicate output column 'name' (rename it with AS)"},
        {"{\"projection\": [\"NULL AS x\"]}",
         "vertex 'calc': projection item 1: the type of 'x' is unknown (a bare NULL); use "
         "CAST(NULL AS <type>)"},
        {"{\"projection\": [\"id\", 5]}",
         "vertex 'calc': projection item 2 must be a string"},
        {"{\"projection\": \"id\"}",
         "vertex 'calc': projection must be an array of expressions"},
        {"{\"projection\": []}",
         "vertex 'calc': projection must list at least one item"},
        {"{\"projection\": [\"id AS\"]}",
         "vertex 'calc': projection item 1: line 1, column 6: unexpected end of input, "
         "expected an identifier"},
        {"{\"filter\": \"idd = 1\"}",
         "vertex 'calc': filter: line 1, column 1: unknown column 'idd'"},
        {"{\"filter\": \"id + 1\"}",
         "vertex 'calc': filter must be a BOOLEAN condition, got BIGINT"},
        {"{\"filter\": true}",
         "vertex 'calc': filter must be a string expression"},
        {"{\"filter\": \"\"}",
         "vertex 'calc': filter: line 1, column 1: unexpected end of input, expected an expression"},
        {"{\"projection\": [\"id\"], \"filter\": \"(id > 1\"}",
         "vertex 'calc': filter: line 1, column 8: unexpected end of input, expected ')' or ','"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static harness h;
        if (plan(&h, cases[i].config)) {
            fprintf(stderr, "config %s was accepted\n", cases[i].config);
            teardown(&h);
            CHECK(0);
        }
        if (strcmp(h.err, cases[i].err) != 0)
            fprintf(stderr, "config %s\n", cases[i].config);
        CHECK_EQ_STR(h.err, cases[i].err);
        CHECK_EQ_INT(h.out.n, 0);
        CHECK(h.out.fields == NULL);
        teardown(&h);
    }

    /* more items than a row may have */
    static harness h;
    json_t *items = json_array();
    for (int i = 0; i <= SL_MAX_FIELDS; i++) json_array_append_new(items, json_string("id"));
    json_t *cfg = json_object();
    json_object_set_new(cfg, "projection", items);
    char *text = json_dumps(cfg, 0);
    json_decref(cfg);
    CHECK(!plan(&h, text));
    free(text);
    CHECK_EQ_STR(h.err, "vertex 'calc': projection has 257 items, the limit is 256");
    teardown(&h);
}

/* Names: aliases, a bare column's schema spelling, EXPR$<index> otherwise. */
static void test_output_names(void)
{
    static harness h;
    CHECK(plan(&h, "{\"projection\": [\"ID\", \"`name` AS `full name`\", \"score + 1\","
                   " \"id * 2 twice\"]}"));
    CHECK_EQ_INT(h.out.n, 4);
    CHECK_EQ_STR(h.out.fields[0].name, "id");
    CHECK_EQ_STR(h.out.fields[1].name, "full name");
    CHECK_EQ_STR(h.out.fields[2].name, "EXPR$2");
    CHECK_EQ_STR(h.out.fields[3].name, "twice");
    CHECK(h.out.fields[3].type == SL_T_BIGINT);
    teardown(&h);
}

SL_TEST_MAIN(SL_TEST(test_definition), SL_TEST(test_projection_and_filter),
             SL_TEST(test_pass_through), SL_TEST(test_strings_in_scratch),
             SL_TEST(test_runtime_errors), SL_TEST(test_emit_result_propagates),
             SL_TEST(test_plan_errors), SL_TEST(test_output_names))
