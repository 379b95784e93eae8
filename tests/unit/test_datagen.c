/*
 * test_datagen.c -- the datagen source driven directly through its
 * sl_op_def callbacks, as a task thread would: plan, open, run until
 * SL_DONE (sleeping on SL_AGAIN), close.
 *
 * Sequence values and chunk boundaries are worked out by hand; random
 * output is checked for bounds, for being the same on every run with the
 * same seed, and for differing between seeds and subtasks.
 *
 * Checkpoints: a run cut at a snapshot and resumed from its blob must give
 * exactly the rows of an uninterrupted run (the uninterrupted run is the
 * reference, so random columns are checked too); rescaled, the rows of all
 * new subtasks together must be exactly the old ones' remaining rows.
 */
#include <time.h>

#include "sl_test.h"
#include "jobgraph.h"
#include "operator.h"
#include "row_text.h"

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
    if (sl_schema_parse(schema, &f->v.declared, f->err, sizeof f->err) != SL_OK) abort();
    f->plan = sl_test_plan(&sl_op_datagen, &f->v, NULL, &f->out, f->err, sizeof f->err);
    return f->plan ? SL_OK : SL_ERR;
}

static void fixture_free(fixture *f)
{
    if (f->plan) sl_op_datagen.plan_free(f->plan);
    sl_vertex_plan_free(&f->v);
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
    row_text_put(&s->text, &s->len, &s->cap, p, n);
}

static int sink_emit(void *ctx, int output, sl_row *row)
{
    sink *s = ctx;
    row_text_row(&s->text, &s->len, &s->cap, row, s->schema);
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

static int bounds_emit(void *ctx, int output, sl_row *row)
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

/* ---- the types beyond the original seven ------------------------------- */

/* Every row of a run, its values kept as Flink's print text per column. */
typedef struct text_sink {
    const sl_schema *schema;
    char cell[64][8][512]; /* up to 64 rows of 8 columns */
    size_t n;
} text_sink;

static int text_emit(void *ctx, int output, sl_row *row)
{
    text_sink *t = ctx;
    if (t->n < 64)
        for (int i = 0; i < row->n && i < 8; i++)
            sl_value_format_dt(t->cell[t->n][i], sizeof t->cell[t->n][i], &row->vals[i],
                               t->schema->fields[i].dt);
    t->n++;
    return SL_OK;
}

static int run_text(fixture *f, int sub, int p, text_sink *t)
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
    op.emit = text_emit;
    op.emit_ctx = t;
    t->schema = &f->out;
    int rc = op.def->open(&op);
    for (int calls = 0; rc == SL_OK && calls < 100000; calls++) {
        rc = op.def->run(&op);
        if (rc == SL_AGAIN) rc = SL_OK;
    }
    op.def->close(&op);
    return rc;
}

static void test_new_types_sequence(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "d DECIMAL(10, 2), t TINYINT, s SMALLINT, x FLOAT, y STRING",
                              "{\"rows-per-second\": 1000000,"
                              " \"fields.d.kind\": \"sequence\", \"fields.d.start\": -1, \"fields.d.end\": 1,"
                              " \"fields.t.kind\": \"sequence\", \"fields.t.start\": 126, \"fields.t.end\": 127,"
                              " \"fields.s.kind\": \"sequence\", \"fields.s.start\": 7, \"fields.s.end\": 9,"
                              " \"fields.x.kind\": \"sequence\", \"fields.x.start\": 5, \"fields.x.end\": 9,"
                              " \"fields.y.kind\": \"sequence\", \"fields.y.start\": 10, \"fields.y.end\": 20}"),
                 SL_OK);
    static text_sink t;
    memset(&t, 0, sizeof t);
    CHECK_EQ_INT(run_text(&f, 0, 1, &t), SL_DONE);
    CHECK_EQ_INT(t.n, 2); /* the TINYINT sequence is the shortest */
    CHECK_EQ_STR(t.cell[0][0], "-1.00");
    CHECK_EQ_STR(t.cell[1][0], "0.00");
    CHECK_EQ_STR(t.cell[1][1], "127");
    CHECK_EQ_STR(t.cell[1][2], "8");
    CHECK_EQ_STR(t.cell[1][3], "6.0");
    CHECK_EQ_STR(t.cell[1][4], "11");
    fixture_free(&f);
}

static void test_new_types_random(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "d DECIMAL(10, 2), dt DATE, tm TIME(0), ts TIMESTAMP(9), "
                              "a ARRAY<TINYINT>, m MAP<INT, STRING>, ms MULTISET<INT>, "
                              "r ROW<k INT, tags ARRAY<CHAR(2)>>",
                              "{\"rows-per-second\": 1000000, \"number-of-rows\": 64, \"seed\": 7,"
                              " \"fields.d.min\": \"-1.5\", \"fields.d.max\": 2.25,"
                              " \"fields.dt.min\": \"2026-02-27\", \"fields.dt.max\": \"2026-03-01\","
                              " \"fields.tm.min\": \"10:00:00\", \"fields.tm.max\": \"10:00:59\","
                              " \"fields.ts.min\": \"2026-01-01 00:00:00\","
                              " \"fields.ts.max\": \"2026-01-01 00:00:00\","
                              " \"fields.a.length\": 2, \"fields.a.element.min\": 0,"
                              " \"fields.a.element.max\": 1, \"fields.a.element.null-rate\": 0.5,"
                              " \"fields.m.length\": 4, \"fields.m.key.min\": 0, \"fields.m.key.max\": 1,"
                              " \"fields.m.value.length\": 1,"
                              " \"fields.ms.element.min\": 5, \"fields.ms.element.max\": 5,"
                              " \"fields.r.k.min\": 3, \"fields.r.k.max\": 3, \"fields.r.tags.length\": 1}"),
                 SL_OK);
    static text_sink t;
    memset(&t, 0, sizeof t);
    CHECK_EQ_INT(run_text(&f, 0, 1, &t), SL_DONE);
    CHECK_EQ_INT(t.n, 64);
    int nulls = 0, dates[3] = {0};
    for (size_t i = 0; i < 64; i++) {
        double d = atof(t.cell[i][0]);
        CHECK(d >= -1.5 && d <= 2.25 && strlen(strchr(t.cell[i][0], '.')) == 3);
        CHECK(!strcmp(t.cell[i][1], "2026-02-27") || !strcmp(t.cell[i][1], "2026-02-28") ||
              !strcmp(t.cell[i][1], "2026-03-01"));
        dates[t.cell[i][1][9] - '7' < 0 ? 2 : t.cell[i][1][9] - '7'] += 1;
        CHECK(!strncmp(t.cell[i][2], "10:00", 5));
        /* TIMESTAMP(9): the given millisecond and random nanos within it */
        CHECK(!strncmp(t.cell[i][3], "2026-01-01T00:00:00.000", 23));
        const char *a = t.cell[i][4];
        CHECK(a[0] == '[' && strlen(a) >= 6 && strlen(a) <= 12);
        nulls += strstr(a, "null") != NULL;
        /* MAP keys 0 and 1 only, each once: at most two entries */
        const char *m = t.cell[i][5];
        CHECK(m[0] == '{' && (strstr(m, "0=") || strstr(m, "1=")));
        CHECK(!strstr(strstr(m, "0=") ? strstr(m, "0=") + 2 : m, "0="));
        CHECK_EQ_STR(t.cell[i][6], "{5=3}");
        CHECK(!strncmp(t.cell[i][7], "+I[3, [", 7) && strlen(t.cell[i][7]) == 11);
    }
    CHECK(nulls > 0 && nulls < 64);
    CHECK(dates[0] > 0 && dates[1] > 0 && dates[2] > 0);
    /* the same seed gives the same rows */
    static text_sink t2;
    memset(&t2, 0, sizeof t2);
    CHECK_EQ_INT(run_text(&f, 0, 1, &t2), SL_DONE);
    CHECK(memcmp(t.cell, t2.cell, sizeof t.cell) == 0);
    fixture_free(&f);
}

/* Many short strings: the arena's alignment is part of what a row needs. */
static void test_many_short_strings(void)
{
    char schema[2048] = "", config[4096] = "{\"rows-per-second\": 1000000, \"number-of-rows\": 50";
    for (int i = 0; i < 60; i++) {
        char col[64];
        snprintf(col, sizeof col, "%ss%d STRING", i ? ", " : "", i);
        strcat(schema, col);
        snprintf(col, sizeof col, ", \"fields.s%d.length\": 1", i);
        strcat(config, col);
    }
    strcat(config, "}");
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, schema, config), SL_OK);
    static text_sink t;
    memset(&t, 0, sizeof t);
    CHECK_EQ_INT(run_text(&f, 0, 1, &t), SL_DONE);
    CHECK_EQ_INT(t.n, 50);
    fixture_free(&f);
}

static void test_plan_errors(void)
{
    CHECK(plan_fails("x BIGINT", "{\"fields.x.bogus\": 1}", "fields.x.bogus"));
    CHECK(plan_fails("x BIGINT", "{\"fields.y.min\": 1}", "no column 'y'"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x\": 1}", "fields.x"));
    CHECK(plan_fails("x BIGINT", "{\"fields.x.min\": 5, \"fields.x.max\": 4}", "min 5 is above max 4"));
    CHECK(plan_fails("x DOUBLE", "{\"fields.x.min\": 5.5, \"fields.x.max\": 4}", "min"));
    CHECK(plan_fails("x DOUBLE", "{\"fields.x.min\": \"abc\"}", "fields.x.min"));
    CHECK(plan_fails("x BOOLEAN", "{\"fields.x.kind\": \"sequence\", \"fields.x.start\": 1,"
                                 " \"fields.x.end\": 2}", "a number or string column"));
    CHECK(plan_fails("x DECIMAL(3, 2)", "{\"fields.x.kind\": \"sequence\", \"fields.x.start\": 1,"
                                 " \"fields.x.end\": 10}", "does not fit DECIMAL(3, 2)"));
    CHECK(plan_fails("x TINYINT", "{\"fields.x.max\": 200}", "does not fit a TINYINT"));
    CHECK(plan_fails("x DATE", "{\"fields.x.min\": \"2026-13-01\", \"fields.x.max\": \"2026-01-01\"}",
                     "'2026-13-01' is no DATE value"));
    CHECK(plan_fails("x DATE", "{\"fields.x.min\": \"2026-01-01\"}", "needs both min and max"));
    CHECK(plan_fails("x ARRAY<INT>", "{\"fields.x.elem.min\": 1}", "has no nested field 'x.elem'"));
    CHECK(plan_fails("x ARRAY<INT>", "{\"fields.x.element.kind\": \"sequence\"}",
                     "only a column can be a sequence"));
    CHECK(plan_fails("x ROW<a INT>", "{\"fields.x.a.length\": 1}", "fields.x.a.length"));
    CHECK(plan_fails("x CHAR(3)", "{\"fields.x.length\": 4}", "length 4 is not in 0..3"));
    CHECK(plan_fails("x INT", "{\"fields.x.null-rate\": 1.5}", "fields.x.null-rate"));
    /* intervals: random only (Flink's datagen refuses a sequence), bounds in months as INT */
    CHECK(plan_fails("x INTERVAL DAY", "{\"fields.x.kind\": \"sequence\", \"fields.x.start\": 1,"
                                       " \"fields.x.end\": 2}", "a sequence needs a number"));
    CHECK(plan_fails("x INTERVAL YEAR TO MONTH", "{\"fields.x.min\": 3000000000}",
                     "does not fit an INT"));
    CHECK(plan_fails("x ARRAY<ARRAY<STRING>>", "{\"fields.x.length\": 100000,"
                     " \"fields.x.element.length\": 100000}", "more than 64 MiB"));
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
    CHECK(sl_test_plan(&sl_op_datagen, &f.v, NULL, &f.out, f.err, sizeof f.err) == NULL);
    CHECK(strstr(f.err, "'gen'") && strstr(f.err, "schema"));
    sl_vertex_plan_free(&f.v);
    json_decref(f.v.config);
}

/* ---- checkpoints --------------------------------------------------------- */

/* A sink that pushes back (SL_AGAIN) once it holds `stop` rows, so a run
 * can be cut at an exact row for a snapshot. */
typedef struct cut_sink {
    sink s;
    size_t stop; /* 0: never */
} cut_sink;

static int cut_emit(void *ctx, int output, sl_row *row)
{
    cut_sink *c = ctx;
    sink_emit(&c->s, output, row);
    return c->stop && c->s.n >= c->stop ? SL_AGAIN : SL_OK;
}

static int op_start(sl_op *op, fixture *f, int sub, int p, cut_sink *c)
{
    memset(op, 0, sizeof *op);
    op->def = &sl_op_datagen;
    op->vertex = &f->v;
    op->plan = f->plan;
    op->subtask = sub;
    op->parallelism = p;
    op->max_parallelism = 128;
    op->out = &f->out;
    op->emit = cut_emit;
    op->emit_ctx = c;
    c->s.schema = &f->out;
    return op->def->open(op);
}

/* Run until SL_DONE, or until the sink holds `stop` rows (then SL_AGAIN). */
static int drive(sl_op *op, cut_sink *c, size_t stop)
{
    c->stop = stop;
    for (;;) {
        if (stop && c->s.n >= stop) return SL_AGAIN;
        int rc = op->def->run(op);
        if (rc == SL_AGAIN) {
            c->s.again++;
            int64_t now = sl_mono_ms();
            if (op->wake_at_ms > now) {
                struct timespec ts = {0, (long)(op->wake_at_ms - now) * 1000000L};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        if (rc != SL_OK) return rc;
    }
}

typedef struct blob {
    void *p;
    size_t len;
} blob;

static int snap(sl_op *op, int64_t cpid, blob *b)
{
    b->p = NULL;
    b->len = 0;
    return op->def->snapshot_state(op, cpid, &b->p, &b->len);
}

/* Restore subtask `sub` of `p` from the given blobs. */
static int op_restore(sl_op *op, fixture *f, int sub, int p, cut_sink *c, const blob *bs, int n)
{
    if (op_start(op, f, sub, p, c) != SL_OK) return SL_ERR;
    const void *ptrs[8];
    size_t lens[8];
    for (int k = 0; k < n; k++) {
        ptrs[k] = bs[k].p;
        lens[k] = bs[k].len;
    }
    return op->def->restore_state(op, ptrs, lens, n);
}

static const char *ckpt_schema = "id BIGINT, i INT, d DOUBLE, s STRING, y BYTES, b BOOLEAN, q INT";
static const char *ckpt_config =
    "{\"rows-per-second\": 1000000, \"seed\": 11,"
    " \"fields.id.kind\": \"sequence\", \"fields.id.start\": 1, \"fields.id.end\": 3001,"
    " \"fields.q.kind\": \"sequence\", \"fields.q.start\": -2147483648,"
    " \"fields.q.end\": 2147483647, \"fields.i.min\": -50, \"fields.i.max\": 50,"
    " \"fields.s.length\": 9, \"fields.y.length\": 3}";

/* Cut subtask `sub` of `p` at each of cuts[] (rows emitted in total) and
 * resume from the snapshot each time; the rows must equal `want`. */
static void check_continuity(fixture *f, int sub, int p, const size_t *cuts, int ncuts,
                             size_t total, const char *want)
{
    cut_sink all = {0};
    sl_op op;
    cut_sink c = {0};
    CHECK_EQ_INT(op_start(&op, f, sub, p, &c), SL_OK);
    for (int k = 0; k <= ncuts; k++) {
        int rc = drive(&op, &c, k < ncuts ? cuts[k] - all.s.n : total - all.s.n);
        CHECK(rc == SL_AGAIN || rc == SL_DONE);
        blob b;
        CHECK_EQ_INT(snap(&op, k + 1, &b), SL_OK);
        CHECK(b.len > 0 && ((unsigned char *)b.p)[0] == 1); /* format version 1 */
        op.def->close(&op);
        sink_put(&all.s, c.s.text ? c.s.text : "", c.s.len);
        all.s.n += c.s.n;
        sink_free(&c.s);
        if (k == ncuts) {
            free(b.p);
            break;
        }
        CHECK_EQ_INT(op_restore(&op, f, sub, p, &c, &b, 1), SL_OK);
        free(b.p);
    }
    CHECK_EQ_INT(all.s.n, total);
    CHECK_EQ_STR(all.s.text ? all.s.text : "", want);
    sink_free(&all.s);
}

static void test_checkpoint_same_parallelism(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, ckpt_schema, ckpt_config), SL_OK);
    /* 3001 ids over 2: 1501 and 1500 rows; q's chunks are far longer. */
    for (int sub = 0; sub < 2; sub++) {
        sink ref = {0};
        CHECK_EQ_INT(run_subtask(&f, sub, 2, &ref, 0), SL_DONE);
        CHECK_EQ_INT(ref.n, sub == 0 ? 1501 : 1500);
        CHECK_EQ_INT(ref.col0[0], sub == 0 ? 1 : 1502);
        /* Cut once mid-stream, at several points including before the
         * first row and after the last, and across batch boundaries. */
        static const size_t one[] = {777};
        static const size_t many[] = {0, 1, 1024, 1025, 1400, 1500};
        check_continuity(&f, sub, 2, one, 1, ref.n, ref.text);
        check_continuity(&f, sub, 2, many, 6, ref.n, ref.text);
        sink_free(&ref);
    }
    fixture_free(&f);

    /* An unbounded random source continues its PRNGs exactly. */
    CHECK_EQ_INT(fixture_plan(&f, "r BIGINT, s STRING, d DOUBLE",
                              "{\"rows-per-second\": 1000000, \"seed\": 5,"
                              " \"fields.s.length\": 20}"),
                 SL_OK);
    sl_op op;
    cut_sink ref = {0};
    CHECK_EQ_INT(op_start(&op, &f, 0, 1, &ref), SL_OK);
    CHECK_EQ_INT(drive(&op, &ref, 3000), SL_AGAIN);
    op.def->close(&op);
    static const size_t cuts[] = {1234, 2048};
    check_continuity(&f, 0, 1, cuts, 2, 3000, ref.s.text);
    sink_free(&ref.s);
    fixture_free(&f);

    /* Without a seed the stream is new each run, but a restored blob
     * carries its PRNG state: two restores of it give the same rows. */
    CHECK_EQ_INT(fixture_plan(&f, "r BIGINT", "{\"rows-per-second\": 1000000}"), SL_OK);
    cut_sink c0 = {0}, c1 = {0}, c2 = {0};
    CHECK_EQ_INT(op_start(&op, &f, 0, 1, &c0), SL_OK);
    CHECK_EQ_INT(drive(&op, &c0, 100), SL_AGAIN);
    blob b;
    CHECK_EQ_INT(snap(&op, 1, &b), SL_OK);
    op.def->close(&op);
    CHECK_EQ_INT(op_restore(&op, &f, 0, 1, &c1, &b, 1), SL_OK);
    CHECK_EQ_INT(drive(&op, &c1, 500), SL_AGAIN);
    op.def->close(&op);
    CHECK_EQ_INT(op_restore(&op, &f, 0, 1, &c2, &b, 1), SL_OK);
    CHECK_EQ_INT(drive(&op, &c2, 500), SL_AGAIN);
    op.def->close(&op);
    CHECK_EQ_STR(c1.s.text, c2.s.text);
    CHECK(strcmp(c0.s.text, c1.s.text) != 0);
    free(b.p);
    sink_free(&c0.s);
    sink_free(&c1.s);
    sink_free(&c2.s);
    fixture_free(&f);
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of `text`, sorted, joined again: a multiset fingerprint. */
static char *sorted_lines(const char *text, size_t *nlines)
{
    char *copy = sl_strdup(text ? text : ""), *save = NULL;
    size_t n = 0, cap = 16;
    char **lines = sl_malloc(cap * sizeof *lines);
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (n == cap) lines = sl_realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = l;
    }
    qsort(lines, n, sizeof *lines, cmp_line);
    size_t len = strlen(text ? text : "");
    char *out = sl_malloc(len + 2), *o = out;
    for (size_t k = 0; k < n; k++) {
        size_t ln = strlen(lines[k]);
        memcpy(o, lines[k], ln);
        o += ln;
        *o++ = '\n';
    }
    *o = '\0';
    free(lines);
    free(copy);
    *nlines = n;
    return out;
}

/* Run the source at ps[0], cutting every subtask after some rows; restore
 * at ps[1] (blob i to subtask i % ps[1]) and so on; the last stage runs to
 * the end. All rows together must be exactly those of an uninterrupted run
 * at ps[0]. A subtask dealt no blob must produce nothing. */
static void check_rescale(const char *schema, const char *config, const int *ps, int nstages,
                          size_t total)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, schema, config), SL_OK);
    sink ref = {0}, got = {0};
    for (int i = 0; i < ps[0]; i++) {
        sink one = {0};
        CHECK_EQ_INT(run_subtask(&f, i, ps[0], &one, 0), SL_DONE);
        sink_put(&ref, one.text ? one.text : "", one.len);
        ref.n += one.n;
        sink_free(&one);
    }
    CHECK_EQ_INT(ref.n, total);

    blob prev[8], next[8];
    int nprev = 0;
    for (int st = 0; st < nstages; st++) {
        int p = ps[st];
        bool last = st == nstages - 1;
        for (int j = 0; j < p; j++) {
            blob mine[8];
            int nmine = 0;
            for (int i = 0; i < nprev; i++)
                if (i % p == j) mine[nmine++] = prev[i];
            sl_op op;
            cut_sink c = {0};
            if (st == 0) CHECK_EQ_INT(op_start(&op, &f, j, p, &c), SL_OK);
            else CHECK_EQ_INT(op_restore(&op, &f, j, p, &c, mine, nmine), SL_OK);
            /* Cuts differ per subtask; some fall past a share's end. */
            int rc = drive(&op, &c, last ? 0 : 150 + 211 * (size_t)j);
            if (st > 0 && nmine == 0) {
                CHECK_EQ_INT(rc, SL_DONE);
                CHECK_EQ_INT(c.s.n, 0);
            }
            if (last) CHECK_EQ_INT(rc, SL_DONE);
            else CHECK_EQ_INT(snap(&op, st + 1, &next[j]), SL_OK);
            op.def->close(&op);
            sink_put(&got, c.s.text ? c.s.text : "", c.s.len);
            sink_free(&c.s);
        }
        for (int i = 0; i < nprev; i++) free(prev[i].p);
        nprev = last ? 0 : p;
        memcpy(prev, next, sizeof next);
    }
    size_t nref, ngot;
    char *a = sorted_lines(ref.text, &nref), *b = sorted_lines(got.text, &ngot);
    CHECK_EQ_INT(ngot, nref);
    CHECK_EQ_STR(b, a); /* nothing lost, nothing twice */
    free(a);
    free(b);
    sink_free(&ref);
    sink_free(&got);
    fixture_free(&f);
}

static void test_checkpoint_rescale(void)
{
    static const int up[] = {2, 3}, down[] = {3, 2}, one[] = {4, 1}, twice[] = {4, 2, 3},
                     back[] = {3, 2, 3};
    check_rescale(ckpt_schema, ckpt_config, up, 2, 3001);
    check_rescale(ckpt_schema, ckpt_config, down, 2, 3001);
    check_rescale(ckpt_schema, ckpt_config, one, 2, 3001);
    check_rescale(ckpt_schema, ckpt_config, twice, 3, 3001);
    check_rescale(ckpt_schema, ckpt_config, back, 3, 3001);
    /* Bounded by number-of-rows alone (random columns only). */
    static const char *rows_cfg = "{\"rows-per-second\": 1000000, \"seed\": 3,"
                                  " \"number-of-rows\": 2500, \"fields.s.length\": 16}";
    check_rescale("v BIGINT, s STRING", rows_cfg, down, 2, 2500);
    check_rescale("v BIGINT, s STRING", rows_cfg, up, 2, 2500);
    check_rescale("v BIGINT, s STRING", rows_cfg, one, 2, 2500);
}

static void test_checkpoint_rate(void)
{
    /* 1000 rows/s over 2 subtasks: 500/s each, 150 rows each. */
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT",
                              "{\"rows-per-second\": 1000, \"number-of-rows\": 300}"),
                 SL_OK);
    blob b[2];
    for (int i = 0; i < 2; i++) {
        sl_op op;
        cut_sink c = {0};
        CHECK_EQ_INT(op_start(&op, &f, i, 2, &c), SL_OK);
        CHECK_EQ_INT(drive(&op, &c, i == 0 ? 50 : 1), SL_AGAIN);
        CHECK_EQ_INT(snap(&op, 1, &b[i]), SL_OK);
        op.def->close(&op);
        sink_free(&c.s);
    }
    /* Same parallelism: the other 100 rows still at 500/s (>= 198 ms; the
     * pause since the snapshot is not made up in a burst). */
    struct timespec pause = {0, 200 * 1000000L};
    nanosleep(&pause, NULL);
    sl_op op;
    cut_sink c = {0};
    CHECK_EQ_INT(op_restore(&op, &f, 0, 2, &c, &b[0], 1), SL_OK);
    int64_t t0 = sl_mono_ms();
    CHECK_EQ_INT(drive(&op, &c, 0), SL_DONE);
    int64_t took = sl_mono_ms() - t0;
    op.def->close(&op);
    CHECK_EQ_INT(c.s.n, 100);
    CHECK(took >= 190);
    CHECK(c.s.again > 0);
    sink_free(&c.s);
    /* Both shares on one subtask: 100 + 149 rows at the whole source's
     * 1000/s (>= 248 ms). */
    CHECK_EQ_INT(op_restore(&op, &f, 0, 1, &c, b, 2), SL_OK);
    t0 = sl_mono_ms();
    CHECK_EQ_INT(drive(&op, &c, 0), SL_DONE);
    took = sl_mono_ms() - t0;
    op.def->close(&op);
    CHECK_EQ_INT(c.s.n, 249);
    CHECK(took >= 240);
    sink_free(&c.s);
    free(b[0].p);
    free(b[1].p);
    fixture_free(&f);
}

/* Shares restored into one subtask are served one after the other, in the
 * order of the blobs (the old subtasks'), each to its end: a sequence's
 * earlier part is not mixed with a later one (taking turns would let a
 * watermark derived from the rows run ahead and make the earlier rows late). */
static void test_checkpoint_shares_in_order(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "x BIGINT",
                              "{\"rows-per-second\": 1000000, \"fields.x.kind\": \"sequence\","
                              " \"fields.x.start\": 1, \"fields.x.end\": 6000}"),
                 SL_OK);
    blob b[2];
    for (int i = 0; i < 2; i++) {
        sl_op op;
        cut_sink c = {0};
        CHECK_EQ_INT(op_start(&op, &f, i, 2, &c), SL_OK);
        CHECK_EQ_INT(drive(&op, &c, i == 0 ? 100 : 50), SL_AGAIN);
        CHECK_EQ_INT(snap(&op, 1, &b[i]), SL_OK);
        op.def->close(&op);
        sink_free(&c.s);
    }
    sl_op op;
    cut_sink c = {0};
    CHECK_EQ_INT(op_restore(&op, &f, 0, 1, &c, b, 2), SL_OK);
    CHECK_EQ_INT(drive(&op, &c, 0), SL_DONE);
    op.def->close(&op);
    CHECK_EQ_INT(c.s.n, 2900 + 2950);
    int ok = c.s.n == 5850;
    for (size_t k = 0; ok && k < c.s.n; k++) /* 101..3000, then 3051..6000 */
        ok = c.s.col0[k] == (int64_t)(k < 2900 ? 101 + k : 3051 + (k - 2900));
    CHECK(ok);
    sink_free(&c.s);
    free(b[0].p);
    free(b[1].p);
    fixture_free(&f);
}

/* The test's own FNV-1a, to forge a blob whose checksum is right. */
static uint64_t test_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void reseal(unsigned char *p, size_t len)
{
    uint64_t h = test_fnv1a(p, len - 8);
    for (int b = 0; b < 8; b++) p[len - 8 + b] = (unsigned char)(h >> (8 * b));
}

/* Restoring `bs` must fail with a message naming the vertex and `needle`. */
static int restore_fails(fixture *f, const blob *bs, int n, const char *needle)
{
    sl_op op;
    cut_sink c = {0};
    int rc = op_restore(&op, f, 0, 1, &c, bs, n);
    int ok = rc == SL_ERR && strstr(op.err, "datagen 'gen'") && strstr(op.err, needle);
    if (!ok) fprintf(stderr, "restore: rc %d, \"%s\", wanted \"%s\"\n", rc, op.err, needle);
    op.def->close(&op);
    return ok;
}

static void test_checkpoint_bad_blob(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, "id BIGINT",
                              "{\"rows-per-second\": 1000000, \"fields.id.kind\": \"sequence\","
                              " \"fields.id.start\": 1, \"fields.id.end\": 100}"),
                 SL_OK);
    sl_op op;
    cut_sink c = {0};
    CHECK_EQ_INT(op_start(&op, &f, 0, 1, &c), SL_OK);
    CHECK_EQ_INT(drive(&op, &c, 10), SL_AGAIN);
    blob good;
    CHECK_EQ_INT(snap(&op, 1, &good), SL_OK);
    op.def->close(&op);
    sink_free(&c.s);
    /* version, "SLDG", 1 field, 1 share, kind+type, one share with one
     * field, checksum */
    CHECK_EQ_INT(good.len, 13 + 2 + (4 + 1 + 8 + 8 + 24) + 8);
    unsigned char *g = good.p;
    CHECK(memcmp(g, "\001SLDG", 5) == 0);

    unsigned char *bad = malloc(good.len);
    blob b = {bad, good.len};
    memcpy(bad, g, good.len);
    bad[30] ^= 0x40;
    CHECK(restore_fails(&f, &b, 1, "damaged (checksum mismatch"));
    CHECK(restore_fails(&f, &b, 1, "state 1 of 1"));
    blob two[2] = {good, b};
    CHECK(restore_fails(&f, two, 2, "state 2 of 2"));
    memcpy(bad, g, good.len);
    b.len = good.len - 1;
    CHECK(restore_fails(&f, &b, 1, "damaged"));
    b.len = 6;
    CHECK(restore_fails(&f, &b, 1, "too short"));
    b.len = 0;
    CHECK(restore_fails(&f, &b, 1, "too short"));
    b.len = good.len;
    bad[0] = 2;
    CHECK(restore_fails(&f, &b, 1, "format version 2"));
    memcpy(bad, "{\"offsets\": [1, 2, 3], \"x\": 1}", 31);
    b.len = 31;
    CHECK(restore_fails(&f, &b, 1, "not datagen state"));

    /* A well-sealed blob whose share claims more rows than its range. */
    memcpy(bad, g, good.len);
    b.len = good.len;
    bad[13 + 2 + 4 + 1 + 7] = 0x7f; /* remaining: top byte */
    reseal(bad, good.len);
    CHECK(restore_fails(&f, &b, 1, "share 0 is damaged"));
    /* A share that owes sequence rows must be bounded. */
    memcpy(bad, g, good.len);
    bad[13 + 2 + 4] = 0;
    reseal(bad, good.len);
    CHECK(restore_fails(&f, &b, 1, "share 0 is damaged"));
    free(bad);

    /* State of another schema: more columns, or another kind. */
    fixture f2;
    CHECK_EQ_INT(fixture_plan(&f2, "id BIGINT, x INT", "{}"), SL_OK);
    CHECK(restore_fails(&f2, &good, 1, "taken with 1 fields, but the vertex has 2"));
    fixture_free(&f2);
    CHECK_EQ_INT(fixture_plan(&f2, "id BIGINT", "{}"), SL_OK);
    CHECK(restore_fails(&f2, &good, 1, "column 1 was a sequence BIGINT"));
    fixture_free(&f2);

    /* The good blob still restores: ids 11..100. */
    CHECK_EQ_INT(op_restore(&op, &f, 0, 1, &c, &good, 1), SL_OK);
    CHECK_EQ_INT(drive(&op, &c, 0), SL_DONE);
    op.def->close(&op);
    CHECK_EQ_INT(c.s.n, 90);
    CHECK_EQ_INT(c.s.col0[0], 11);
    CHECK_EQ_INT(c.s.col0[89], 100);
    sink_free(&c.s);
    free(good.p);
    fixture_free(&f);
}

SL_TEST_MAIN(SL_TEST(test_sequence_exact), SL_TEST(test_sequence_split_p3),
             SL_TEST(test_sequence_whole_bigint_range), SL_TEST(test_random_within_bounds),
             SL_TEST(test_random_timestamp_now), SL_TEST(test_seed_determinism),
             SL_TEST(test_number_of_rows), SL_TEST(test_rate_limit), SL_TEST(test_new_types_sequence), SL_TEST(test_new_types_random),
             SL_TEST(test_many_short_strings),
             SL_TEST(test_plan_errors),
             SL_TEST(test_checkpoint_same_parallelism), SL_TEST(test_checkpoint_rescale),
             SL_TEST(test_checkpoint_rate), SL_TEST(test_checkpoint_shares_in_order),
             SL_TEST(test_checkpoint_bad_blob))
