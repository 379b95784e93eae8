/*
 * test_datagen.c -- the datagen source driven directly through its
 * sl_op_def callbacks, as a task thread would: plan, open, run until
 * SL_DONE (sleeping on SL_AGAIN), close.
 *
 * Sequence values and chunk boundaries are worked out by hand; random
 * output is checked for bounds, for being the same on every run with the
 * same seed, and for differing between seeds and subtasks.
 */
#include <time.h>

#include "sl_test.h"
#include "jobgraph.h"
#include "operator.h"

extern const sl_op_def sl_op_datagen;

/* A vertex "gen" with a schema given as "name TYPE, name TYPE" and a JSON
 * config. */
typedef struct fixture {
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    char err[512];
} fixture;

static int fixture_plan(fixture *f, const char *schema, const char *config)
{
    memset(f, 0, sizeof *f);
    f->v.id = "gen";
    f->v.name = "gen";
    f->v.type = "datagen";
    f->v.def = &sl_op_datagen;
    json_error_t je;
    f->v.config = json_loads(config, 0, &je);
    if (!f->v.config) {
        fprintf(stderr, "bad test config: %s\n", je.text);
        return SL_ERR;
    }
    sl_schema_init(&f->v.declared);
    sl_schema_init(&f->in);
    sl_schema_init(&f->out);
    char *copy = sl_strdup(schema), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        char *sp = strchr(tok, ' ');
        *sp = '\0';
        sl_type t;
        if (sl_type_parse(sp + 1, &t) != SL_OK) abort();
        sl_schema_add(&f->v.declared, tok, t);
    }
    free(copy);
    f->plan = sl_op_datagen.plan(&f->v, &f->in, &f->out, f->err, sizeof f->err);
    return f->plan ? SL_OK : SL_ERR;
}

static void fixture_free(fixture *f)
{
    if (f->plan) sl_op_datagen.plan_free(f->plan);
    sl_schema_free(&f->v.declared);
    sl_schema_free(&f->in);
    sl_schema_free(&f->out);
    json_decref(f->v.config);
}

/* What the runs collect: every row as text, and column 0 when it is an
 * integer. */
typedef struct sink {
    const sl_schema *schema;
    char *text;
    size_t len, cap;
    int64_t *col0;
    size_t n, ncap;
    int again; /* SL_AGAIN returns seen */
} sink;

static void sink_put(sink *s, const char *p, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->text = sl_realloc(s->text, s->cap);
    }
    memcpy(s->text + s->len, p, n);
    s->len += n;
    s->text[s->len] = '\0';
}

static int sink_emit(void *ctx, sl_row *row)
{
    sink *s = ctx;
    char buf[512];
    for (int i = 0; i < row->n; i++) {
        int n = sl_value_format(buf, sizeof buf, &row->vals[i], s->schema->fields[i].type);
        sink_put(s, buf, (size_t)SL_MIN(n, (int)sizeof buf - 1));
        sink_put(s, i + 1 < row->n ? "|" : "\n", 1);
    }
    if (s->n == s->ncap) {
        s->ncap = s->ncap ? s->ncap * 2 : 64;
        s->col0 = sl_realloc(s->col0, s->ncap * sizeof *s->col0);
    }
    s->col0[s->n++] = row->vals[0].v.i;
    return SL_OK;
}

static void sink_free(sink *s)
{
    free(s->text);
    free(s->col0);
    memset(s, 0, sizeof *s);
}

/* Run subtask `sub` of `p` to the end (or `max_calls` run() calls). */
static int run_subtask(fixture *f, int sub, int p, sink *s, int max_calls)
{
    sl_op op;
    memset(&op, 0, sizeof op);
    op.def = &sl_op_datagen;
    op.vertex = &f->v;
    op.plan = f->plan;
    op.subtask = sub;
    op.parallelism = p;
    op.max_parallelism = 128;
    op.out = &f->out;
    op.emit = sink_emit;
    op.emit_ctx = s;
    s->schema = &f->out;
    int rc = op.def->open(&op);
    if (rc != SL_OK) return rc;
    for (int calls = 0; max_calls <= 0 || calls < max_calls; calls++) {
        rc = op.def->run(&op);
        if (rc == SL_AGAIN) {
            s->again++;
            /* The wake time may already have passed on a slow machine. */
            int64_t now = sl_mono_ms();
            if (op.wake_at_ms <= 0 || op.wake_at_ms > now + 2000) {
                fprintf(stderr, "SL_AGAIN with a wake time of %lld at %lld\n",
                        (long long)op.wake_at_ms, (long long)now);
                rc = SL_ERR;
                break;
            }
            if (op.wake_at_ms > now) {
                struct timespec ts = {0, (long)(op.wake_at_ms - now) * 1000000L};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        if (rc != SL_OK) break;
    }
    op.def->close(&op);
    if (op.metrics.records_out != s->n) {
        fprintf(stderr, "records_out %llu, rows seen %zu\n",
                (unsigned long long)op.metrics.records_out, s->n);
        return SL_ERR;
    }
    return rc;
}

static void test_sequence_exact(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "id BIGINT, n INT",
                              "{\"rows-per-second\": 1000000,"
                              " \"fields.id.kind\": \"sequence\", \"fields.id.start\": 1,"
                              " \"fields.id.end\": \"10\","
                              " \"fields.n.kind\": \"sequence\", \"fields.n.start\": -3,"
                              " \"fields.n.end\": 100}"),
                 SL_OK);
    CHECK_EQ_INT(f.out.n, 2);
    CHECK_EQ_STR(f.out.fields[0].name, "id");
    CHECK_EQ_INT(f.out.fields[1].type, SL_T_INT);
    sink s = {0};
    CHECK_EQ_INT(run_subtask(&f, 0, 1, &s, 0), SL_DONE);
    /* The shorter sequence ends the source. */
    CHECK_EQ_STR(s.text, "1|-3\n2|-2\n3|-1\n4|0\n5|1\n6|2\n7|3\n8|4\n9|5\n10|6\n");
    sink_free(&s);
    fixture_free(&f);
}

/* Subtask chunks for start..end over p, as lists of (first, count). */
static void check_split(const char *config, int p, const int64_t *first, const int64_t *count,
                        int64_t start, int64_t end)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "v BIGINT", config), SL_OK);
    int64_t total = end - start + 1;
    char *seen = calloc((size_t)total, 1);
    for (int i = 0; i < p; i++) {
        sink s = {0};
        CHECK_EQ_INT(run_subtask(&f, i, p, &s, 0), SL_DONE);
        CHECK_EQ_INT(s.n, count[i]);
        for (size_t k = 0; k < s.n; k++) {
            CHECK_EQ_INT(s.col0[k], first[i] + (int64_t)k); /* contiguous, in order */
            CHECK(s.col0[k] >= start && s.col0[k] <= end);
            seen[s.col0[k] - start]++;
        }
        sink_free(&s);
    }
    for (int64_t k = 0; k < total; k++) CHECK_EQ_INT(seen[k], 1); /* exactly once */
    free(seen);
    fixture_free(&f);
}

static void test_sequence_split_p3(void)
{
    /* 33 values: 11 each. */
    static const int64_t f1[] = {-5, 6, 17}, c1[] = {11, 11, 11};
    check_split("{\"rows-per-second\": 1000000, \"fields.v.kind\": \"sequence\","
                " \"fields.v.start\": -5, \"fields.v.end\": 27}",
                3, f1, c1, -5, 27);
    /* 10 values: 4, 3, 3. */
    static const int64_t f2[] = {1, 5, 8}, c2[] = {4, 3, 3};
    check_split("{\"rows-per-second\": 1000000, \"fields.v.kind\": \"sequence\","
                " \"fields.v.start\": 1, \"fields.v.end\": 10}",
                3, f2, c2, 1, 10);
    /* 2 values over 3 subtasks: the third has nothing. */
    static const int64_t f3[] = {7, 8, 0}, c3[] = {1, 1, 0};
    check_split("{\"rows-per-second\": 1000000, \"fields.v.kind\": \"sequence\","
                " \"fields.v.start\": 7, \"fields.v.end\": 8}",
                3, f3, c3, 7, 8);
}

static void test_sequence_whole_bigint_range(void)
{
    /* 2^64 values over 3: chunks of 6148914691236517206, ...205, ...205. */
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "v BIGINT",
                              "{\"number-of-rows\": 6, \"fields.v.kind\": \"sequence\","
                              " \"fields.v.start\": -9223372036854775808,"
                              " \"fields.v.end\": 9223372036854775807}"),
                 SL_OK);
    static const int64_t first[] = {INT64_MIN, -3074457345618258602LL, 3074457345618258603LL};
    for (int i = 0; i < 3; i++) {
        sink s = {0};
        CHECK_EQ_INT(run_subtask(&f, i, 3, &s, 0), SL_DONE);
        CHECK_EQ_INT(s.n, 2);
        CHECK_EQ_INT(s.col0[0], first[i]);
        CHECK_EQ_INT(s.col0[1], first[i] + 1);
        sink_free(&s);
    }
    fixture_free(&f);
}

static const char *random_config =
    "{\"rows-per-second\": 1000000, \"number-of-rows\": 3000, \"seed\": 42,"
    " \"fields.i.min\": -3, \"fields.i.max\": 3,"
    " \"fields.l.min\": 1000000000000, \"fields.l.max\": \"1000000000009\","
    " \"fields.d.min\": 1.5, \"fields.d.max\": \"2.5\","
    " \"fields.s.length\": 7, \"fields.y.length\": 5,"
    " \"fields.t.max-past\": \"10 s\", \"fields.k.kind\": \"random\"}";
static const char *random_schema =
    "i INT, l BIGINT, d DOUBLE, s STRING, y BYTES, b BOOLEAN, t TIMESTAMP(3), k BIGINT";

/* Capture the rows themselves for the bound checks. */
typedef struct bounds {
    int n;
    int seen_i[7];
    int seen_b[2];
    int bad;
    int64_t lo_ts, hi_ts;
} bounds;

static int bounds_emit(void *ctx, sl_row *row)
{
    bounds *b = ctx;
    b->n++;
    const sl_value *v = row->vals;
    for (int i = 0; i < 8; i++)
        if (v[i].isnull) b->bad |= 1;
    if (v[0].v.i < -3 || v[0].v.i > 3) b->bad |= 2;
    else b->seen_i[v[0].v.i + 3]++;
    if (v[1].v.i < 1000000000000LL || v[1].v.i > 1000000000009LL) b->bad |= 4;
    if (!(v[2].v.d >= 1.5 && v[2].v.d <= 2.5)) b->bad |= 8;
    if (v[3].v.s.len != 7) b->bad |= 16;
    for (uint32_t k = 0; k < v[3].v.s.len; k++) {
        char c = v[3].v.s.p[k];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) b->bad |= 32;
    }
    if (v[4].v.s.len != 5) b->bad |= 64;
    if (v[5].v.i != 0 && v[5].v.i != 1) b->bad |= 128;
    else b->seen_b[v[5].v.i]++;
    if (v[6].v.i < b->lo_ts || v[6].v.i > b->hi_ts) b->bad |= 256;
    return SL_OK;
}

static void test_random_within_bounds(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, random_schema, random_config), SL_OK);
    bounds b = {0};
    sl_op op;
    memset(&op, 0, sizeof op);
    op.def = &sl_op_datagen;
    op.vertex = &f.v;
    op.plan = f.plan;
    op.parallelism = 1;
    op.out = &f.out;
    op.emit = bounds_emit;
    op.emit_ctx = &b;
    b.lo_ts = sl_now_ms() - 10000;
    b.hi_ts = INT64_MAX;
    CHECK_EQ_INT(op.def->open(&op), SL_OK);
    int rc;
    while ((rc = op.def->run(&op)) == SL_OK || rc == SL_AGAIN) {
        if (rc == SL_AGAIN) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    op.def->close(&op);
    b.hi_ts = sl_now_ms();
    CHECK_EQ_INT(rc, SL_DONE);
    CHECK_EQ_INT(b.n, 3000);
    CHECK_EQ_INT(b.bad, 0);
    for (int i = 0; i < 7; i++) CHECK(b.seen_i[i] > 0); /* every value in -3..3 turns up */
    CHECK(b.seen_b[0] > 0 && b.seen_b[1] > 0);
    fixture_free(&f);
}

static void test_random_timestamp_now(void)
{
    /* Without max-past a random TIMESTAMP is the wall-clock time. */
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "t TIMESTAMP_LTZ(3)",
                              "{\"number-of-rows\": 5, \"rows-per-second\": 1000000}"),
                 SL_OK);
    int64_t before = sl_now_ms();
    sink s = {0};
    CHECK_EQ_INT(run_subtask(&f, 0, 1, &s, 0), SL_DONE);
    int64_t after = sl_now_ms();
    CHECK_EQ_INT(s.n, 5);
    for (size_t k = 0; k < s.n; k++) CHECK(s.col0[k] >= before && s.col0[k] <= after);
    sink_free(&s);
    fixture_free(&f);
}

static void test_seed_determinism(void)
{
    /* TIMESTAMP depends on the clock, so it is left out here. */
    const char *schema = "i INT, l BIGINT, d DOUBLE, s STRING, y BYTES, b BOOLEAN";
    const char *cfg = "{\"rows-per-second\": 1000000, \"number-of-rows\": 500, \"seed\": 7,"
                      " \"fields.s.length\": 12}";
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, schema, cfg), SL_OK);
    sink a = {0}, b = {0}, c = {0};
    CHECK_EQ_INT(run_subtask(&f, 1, 2, &a, 0), SL_DONE);
    CHECK_EQ_INT(run_subtask(&f, 1, 2, &b, 0), SL_DONE);
    CHECK_EQ_INT(run_subtask(&f, 0, 2, &c, 0), SL_DONE);
    CHECK_EQ_INT(a.n, 250);
    CHECK(a.len > 0 && a.len == b.len);
    CHECK_EQ_STR(a.text, b.text);                 /* same seed, same subtask: same rows */
    CHECK(strcmp(a.text, c.text) != 0);           /* another subtask: another stream */
    fixture_free(&f);

    fixture g;
    CHECK_EQ_INT(fixture_plan(&g, schema,
                              "{\"rows-per-second\": 1000000, \"number-of-rows\": 500,"
                              " \"seed\": 8, \"fields.s.length\": 12}"),
                 SL_OK);
    sink d = {0};
    CHECK_EQ_INT(run_subtask(&g, 1, 2, &d, 0), SL_DONE);
    CHECK(strcmp(a.text, d.text) != 0);           /* another seed: other rows */
    fixture_free(&g);

    /* Adding a column leaves the other columns' values unchanged. */
    fixture h;
    CHECK_EQ_INT(fixture_plan(&h, "i INT, z DOUBLE",
                              "{\"rows-per-second\": 1000000, \"number-of-rows\": 50,"
                              " \"seed\": 7}"),
                 SL_OK);
    fixture h1;
    CHECK_EQ_INT(fixture_plan(&h1, "i INT",
                              "{\"rows-per-second\": 1000000, \"number-of-rows\": 50,"
                              " \"seed\": 7}"),
                 SL_OK);
    sink e = {0}, e1 = {0};
    CHECK_EQ_INT(run_subtask(&h, 0, 1, &e, 0), SL_DONE);
    CHECK_EQ_INT(run_subtask(&h1, 0, 1, &e1, 0), SL_DONE);
    CHECK_EQ_INT(e.n, e1.n);
    for (size_t k = 0; k < e.n; k++) CHECK_EQ_INT(e.col0[k], e1.col0[k]);
    fixture_free(&h);
    fixture_free(&h1);
    sink_free(&a); sink_free(&b); sink_free(&c); sink_free(&d); sink_free(&e); sink_free(&e1);
}

static void test_number_of_rows(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT",
                              "{\"number-of-rows\": 10, \"rows-per-second\": 1000000}"),
                 SL_OK);
    static const size_t want[] = {4, 3, 3};
    for (int i = 0; i < 3; i++) {
        sink s = {0};
        CHECK_EQ_INT(run_subtask(&f, i, 3, &s, 0), SL_DONE);
        CHECK_EQ_INT(s.n, want[i]);
        sink_free(&s);
    }
    fixture_free(&f);

    /* number-of-rows cuts a longer sequence short... */
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT",
                              "{\"number-of-rows\": 5, \"rows-per-second\": 1000000,"
                              " \"fields.x.kind\": \"sequence\", \"fields.x.start\": 1,"
                              " \"fields.x.end\": 100}"),
                 SL_OK);
    sink s = {0};
    CHECK_EQ_INT(run_subtask(&f, 0, 1, &s, 0), SL_DONE);
    CHECK_EQ_STR(s.text, "1\n2\n3\n4\n5\n");
    sink_free(&s);
    fixture_free(&f);

    /* ...and a shorter sequence ends before number-of-rows. */
    CHECK_EQ_INT(fixture_plan(&f, "x INT",
                              "{\"number-of-rows\": 10, \"rows-per-second\": 1000000,"
                              " \"fields.x.kind\": \"sequence\", \"fields.x.start\": 1,"
                              " \"fields.x.end\": 3}"),
                 SL_OK);
    CHECK_EQ_INT(run_subtask(&f, 0, 1, &s, 0), SL_DONE);
    CHECK_EQ_STR(s.text, "1\n2\n3\n");
    sink_free(&s);
    fixture_free(&f);

    /* Zero rows: done at once. */
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT", "{\"number-of-rows\": 0}"), SL_OK);
    CHECK_EQ_INT(run_subtask(&f, 0, 1, &s, 0), SL_DONE);
    CHECK_EQ_INT(s.n, 0);
    sink_free(&s);
    fixture_free(&f);

    /* Without a bound the source keeps going. */
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT", "{\"rows-per-second\": 1000000000}"), SL_OK);
    CHECK_EQ_INT(run_subtask(&f, 0, 1, &s, 20), SL_OK);
    CHECK(s.n > 1024);
    sink_free(&s);
    fixture_free(&f);
}

static void test_rate_limit(void)
{
    /* 1000 rows/s over 2 subtasks = 500 each: 100 rows take >= 198 ms, and
     * the source sleeps (SL_AGAIN) rather than spinning. Only a lower bound
     * is asserted: a slow machine may take longer, never shorter. */
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT",
                              "{\"rows-per-second\": 1000, \"number-of-rows\": 200}"),
                 SL_OK);
    sink s = {0};
    int64_t t0 = sl_mono_ms();
    CHECK_EQ_INT(run_subtask(&f, 0, 2, &s, 0), SL_DONE);
    int64_t took = sl_mono_ms() - t0;
    CHECK_EQ_INT(s.n, 100);
    CHECK(took >= 190);
    CHECK(s.again > 0);
    sink_free(&s);
    fixture_free(&f);

    /* Flink's default rate: 10000/s; 50 rows must not come out at once. */
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT", "{\"number-of-rows\": 50}"), SL_OK);
    CHECK_EQ_INT(run_subtask(&f, 0, 1, &s, 0), SL_DONE);
    CHECK_EQ_INT(s.n, 50);
    CHECK(s.again > 0);
    sink_free(&s);
    fixture_free(&f);
}

/* plan must fail, naming the vertex and `needle`. */
static int plan_fails(const char *schema, const char *config, const char *needle)
{
    fixture f;
    int rc = fixture_plan(&f, schema, config);
    int ok = rc == SL_ERR && strstr(f.err, "'gen'") && strstr(f.err, needle);
    if (!ok) fprintf(stderr, "config %s: got \"%s\", wanted \"%s\"\n", config, f.err, needle);
    fixture_free(&f);
    return ok;
}

static void test_plan_errors(void)
{
    CHECK(plan_fails("x BIGINT", "{\"fields.x.bogus\": 1}", "fields.x.bogus"));
    CHECK(plan_fails("x BIGINT", "{\"fields.y.min\": 1}", "no column 'y'"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x\": 1}", "fields.x"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.min\": 5, \"fields.x.max\": 4}", "min 5 is above max 4"));
    CHECK(plan_fails("x DOUBLE", "{\"fields.x.min\": 5.5, \"fields.x.max\": 4}", "min"));
    CHECK(plan_fails("x DOUBLE", "{\"fields.x.min\": \"abc\"}", "fields.x.min"));
    CHECK(plan_fails("x STRING", "{\"fields.x.kind\": \"sequence\", \"fields.x.start\": 1,"
                                 " \"fields.x.end\": 2}", "INT or BIGINT"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.kind\": \"sequence\", \"fields.x.start\": 1}",
                     "fields.x.end"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.kind\": \"sequence\", \"fields.x.start\": 3,"
                                 " \"fields.x.end\": 2}", "fields.x.start"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.kind\": \"sequence\", \"fields.x.start\": 1,"
                                 " \"fields.x.end\": 2, \"fields.x.max\": 3}", "fields.x.max"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.start\": 1}", "fields.x.start"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.kind\": \"zigzag\"}", "fields.x.kind"));
    CHECK(plan_fails("x INT", "{\"fields.x.length\": 3}", "fields.x.length"));
    CHECK(plan_fails("x STRING", "{\"fields.x.min\": 3}", "fields.x.min"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.max-past\": \"5 s\"}", "fields.x.max-past"));
    CHECK(plan_fails("x TIMESTAMP(3)", "{\"fields.x.max-past\": \"soon\"}", "fields.x.max-past"));
    CHECK(plan_fails("x STRING", "{\"fields.x.length\": -1}", "fields.x.length"));
    CHECK(plan_fails("x INT", "{\"fields.x.max\": 3000000000}", "does not fit an INT"));
    CHECK(plan_fails("x BIGINT", "{\"rows-per-second\": 0}", "rows-per-second"));
    CHECK(plan_fails("x BIGINT", "{\"rows-per-second\": \"fast\"}", "rows-per-second"));
    CHECK(plan_fails("x BIGINT", "{\"number-of-rows\": -1}", "number-of-rows"));
    CHECK(plan_fails("x BIGINT", "{\"seed\": 1.5}", "seed"));

    /* No schema at all. */
    fixture f;
    memset(&f, 0, sizeof f);
    f.v.id = "gen";
    f.v.config = json_object();
    sl_schema_init(&f.v.declared);
    CHECK(sl_op_datagen.plan(&f.v, &f.in, &f.out, f.err, sizeof f.err) == NULL);
    CHECK(strstr(f.err, "'gen'") && strstr(f.err, "schema"));
    json_decref(f.v.config);
}

SL_TEST_MAIN(SL_TEST(test_sequence_exact), SL_TEST(test_sequence_split_p3),
             SL_TEST(test_sequence_whole_bigint_range), SL_TEST(test_random_within_bounds),
             SL_TEST(test_random_timestamp_now), SL_TEST(test_seed_determinism),
             SL_TEST(test_number_of_rows), SL_TEST(test_rate_limit), SL_TEST(test_plan_errors))
