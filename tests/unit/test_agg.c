/*
 * test_agg.c -- unit tests for the aggregate library (operators/agg.c):
 * parsing and Flink's result types, then add / retract / merge / result for
 * each function over each type it takes, COUNT(1), MIN/MAX over BOOLEAN,
 * and the accumulator layout.
 *
 * The input schema is b BOOLEAN, i INT, l BIGINT, d DOUBLE, s STRING,
 * t TIMESTAMP, y BYTES. Every expected value is written out by hand.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agg.h"
#include "sl_test.h"

enum { CB, CI, CL, CD, CS, CT, CY, NCOLS };

static void in_schema(sl_schema *in)
{
    sl_schema_init(in);
    sl_schema_add(in, "b", SL_T_BOOLEAN);
    sl_schema_add(in, "i", SL_T_INT);
    sl_schema_add(in, "l", SL_T_BIGINT);
    sl_schema_add(in, "d", SL_T_DOUBLE);
    sl_schema_add(in, "s", SL_T_STRING);
    sl_schema_add(in, "t", SL_T_TIMESTAMP);
    sl_schema_add(in, "y", SL_T_BYTES);
}

typedef struct fixture {
    sl_schema in, out;
    sl_agg_list l;
    char err[512];
} fixture;

/* Plan the items (NULL-terminated) or report the first error. */
static int setup(fixture *f, const char *const *items)
{
    in_schema(&f->in);
    sl_schema_init(&f->out);
    sl_agg_list_init(&f->l);
    f->err[0] = 0;
    for (int i = 0; items[i]; i++)
        if (sl_agg_list_add(&f->l, items[i], i + 1, &f->in, &f->out, f->err, sizeof f->err) !=
            SL_OK)
            return SL_ERR;
    return SL_OK;
}

static void teardown(fixture *f)
{
    sl_agg_list_free(&f->l);
    sl_schema_free(&f->in);
    sl_schema_free(&f->out);
}

/* A row whose column c holds x (the others NULL); x NULL when isnull. */
typedef struct trow {
    sl_value v[NCOLS];
    sl_row r;
} trow;

static sl_row *row_i(trow *t, int c, int64_t x, bool isnull)
{
    for (int k = 0; k < NCOLS; k++) t->v[k] = (sl_value){.isnull = true};
    t->v[c] = (sl_value){.isnull = isnull, .v.i = x};
    t->r = (sl_row){.kind = SL_KIND_INSERT, .n = NCOLS, .vals = t->v};
    return &t->r;
}

static sl_row *row_d(trow *t, double x)
{
    row_i(t, CD, 0, false);
    t->v[CD].v.d = x;
    return &t->r;
}

static void schema_text(const sl_schema *s, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s %s", i ? ", " : "", s->fields[i].name,
                              sl_type_name(s->fields[i].type));
}

/* ---- parsing, result types, layout --------------------------------------- */

static void test_parse_and_result_types(void)
{
    static fixture f;
    const char *items[] = {"COUNT(*)", "count(1) AS c1", "COUNT( s ) n", "COUNT(y)", "SUM(i)",
                           "SUM(l) AS sl", "sum(d)", "AVG(i)", "AVG(l) al", "AVG(d)",
                           "MIN(b) AS lo_b", "MAX(b)", "MIN(i)", "MAX(l)", "MIN(d)", "MAX(t)",
                           "MIN(`t`) AS `first t`", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    char buf[1024];
    schema_text(&f.out, buf, sizeof buf);
    CHECK_EQ_STR(buf, "EXPR$0 BIGINT, c1 BIGINT, n BIGINT, EXPR$3 BIGINT, EXPR$4 INT, sl BIGINT, "
                      "EXPR$6 DOUBLE, EXPR$7 INT, al BIGINT, EXPR$9 DOUBLE, lo_b BOOLEAN, "
                      "EXPR$11 BOOLEAN, EXPR$12 INT, EXPR$13 BIGINT, EXPR$14 DOUBLE, "
                      "EXPR$15 TIMESTAMP(3), first t TIMESTAMP(3)");
    CHECK_EQ_INT(f.l.n, 17);
    CHECK_EQ_INT(f.l.aggs[0].fn, SL_AGG_COUNT_STAR);
    CHECK_EQ_INT(f.l.aggs[1].fn, SL_AGG_COUNT_STAR); /* COUNT(1) is COUNT(*) */
    CHECK_EQ_INT(f.l.aggs[1].col, -1);
    CHECK_EQ_INT(f.l.aggs[2].fn, SL_AGG_COUNT);
    CHECK_EQ_INT(f.l.aggs[2].col, CS);
    CHECK(f.l.has_minmax);
    /* layout: 8-byte row count; COUNT(*) 0, COUNT(col) 8, the rest 16 bytes */
    CHECK_EQ_INT(f.l.aggs[0].off, 8);
    CHECK_EQ_INT(f.l.aggs[2].off, 8);
    CHECK_EQ_INT(f.l.aggs[3].off, 16);
    CHECK_EQ_INT(f.l.aggs[4].off, 24);
    CHECK_EQ_INT(f.l.size, 8 + 8 + 8 + 13 * 16);
    CHECK_EQ_STR(f.l.aggs[16].text, "MIN(`t`) AS `first t`");
    teardown(&f);

    /* names continue after columns already in the output (window keys) */
    static fixture g;
    in_schema(&g.in);
    sl_schema_init(&g.out);
    sl_agg_list_init(&g.l);
    sl_schema_add(&g.out, "k", SL_T_BIGINT);
    CHECK_EQ_INT(sl_agg_list_add(&g.l, "SUM(l)", 1, &g.in, &g.out, g.err, sizeof g.err), SL_OK);
    CHECK_EQ_STR(g.out.fields[1].name, "EXPR$1");
    CHECK_EQ_INT(g.l.size, 24);
    teardown(&g);
}

static void parse_error(const char *item, const char *want)
{
    static fixture f;
    const char *items[] = {"COUNT(*) AS c", item, NULL};
    CHECK_EQ_INT(setup(&f, items), SL_ERR);
    CHECK_EQ_STR(f.err, want);
    CHECK_EQ_INT(f.l.n, 1);   /* the failed item left nothing behind */
    CHECK_EQ_INT(f.out.n, 1);
    teardown(&f);
}

static void test_parse_errors(void)
{
    parse_error("SUM(s)", "aggregate 2 'SUM(s)': SUM needs a numeric column (TINYINT, "
                          "SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL); 's' is STRING");
    parse_error("AVG(b)", "aggregate 2 'AVG(b)': AVG needs a numeric column (TINYINT, "
                          "SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL); 'b' is BOOLEAN");
    parse_error("SUM(t)", "aggregate 2 'SUM(t)': SUM needs a numeric column (TINYINT, "
                          "SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL); 't' is TIMESTAMP(3)");
    parse_error("MAX(y)", "aggregate 2 'MAX(y)': MAX needs an INT, BIGINT, DOUBLE, BOOLEAN, "
                          "TIMESTAMP or STRING column; 'y' is BYTES");
    parse_error("SUM(1)", "aggregate 2 'SUM(1)': expected a column name inside SUM( )");
    parse_error("COUNT(12)", "aggregate 2 'COUNT(12)': expected a column name inside COUNT( )");
    parse_error("MIN(*)", "aggregate 2 'MIN(*)': '*' is only allowed in COUNT(*)");
    parse_error("COUNT(i, l)", "aggregate 2 'COUNT(i, l)': the argument of COUNT must be a single "
                               "column (compute expressions in a calc vertex first)");
    parse_error("COUNT(DISTINCT *)", "aggregate 2 'COUNT(DISTINCT *)': DISTINCT needs a column, "
                                     "not *");
    parse_error("COUNT(*) FILTER (WHERE i)", "aggregate 2 'COUNT(*) FILTER (WHERE i)': FILTER: "
                                             "column 'i' is INT, not BOOLEAN");
    parse_error("COUNT(*) FILTER (WHERE i > 1)", "aggregate 2 'COUNT(*) FILTER (WHERE i > 1)': "
                "expected ')' after FILTER (WHERE i");
    parse_error("COUNT(*) FILTER (b)", "aggregate 2 'COUNT(*) FILTER (b)': expected FILTER "
                                       "(WHERE column)");
    parse_error("MEDIAN(i)", "aggregate 2 'MEDIAN(i)': unknown aggregate function 'MEDIAN' "
                             "(expected COUNT, SUM, MIN, MAX or AVG)");
    parse_error("i", "aggregate 2 'i': expected an aggregate call such as SUM(amount)");
    parse_error("SUM(q)", "aggregate 2 'SUM(q)': unknown column 'q'");
    parse_error("SUM(i) AS c", "aggregate 2 'SUM(i) AS c': duplicate output column 'c' (rename "
                               "it with AS)");
    parse_error("SUM(i) AS", "aggregate 2 'SUM(i) AS': expected an alias after AS");
    parse_error("SUM(i) x y", "aggregate 2 'SUM(i) x y': unexpected text 'y' after the alias");
}

/* ---- COUNT ------------------------------------------------------------------ */

static void test_count(void)
{
    static fixture f;
    const char *items[] = {"COUNT(*)", "COUNT(1)", "COUNT(b)", "COUNT(i)", "COUNT(l)", "COUNT(d)",
                           "COUNT(s)", "COUNT(t)", "COUNT(y)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[256];
    sl_value out[9];
    sl_agg_init(&f.l, acc);
    sl_agg_result(&f.l, acc, out);
    for (int i = 0; i < 9; i++) {
        CHECK(!out[i].isnull); /* COUNT of nothing is 0, never NULL */
        CHECK_EQ_INT(out[i].v.i, 0);
    }
    /* one row per column with a value there, one row of NULLs only */
    trow t;
    for (int c = 0; c < NCOLS; c++) sl_agg_add(&f.l, acc, row_i(&t, c, 1, false));
    sl_agg_add(&f.l, acc, row_i(&t, CI, 0, true));
    sl_agg_add(&f.l, acc, row_i(&t, CI, 7, false)); /* a second INT */
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(sl_agg_rows(acc), 9);
    CHECK_EQ_INT(out[0].v.i, 9);
    CHECK_EQ_INT(out[1].v.i, 9);
    CHECK_EQ_INT(out[2].v.i, 1); /* b */
    CHECK_EQ_INT(out[3].v.i, 2); /* i */
    for (int i = 4; i < 9; i++) CHECK_EQ_INT(out[i].v.i, 1);
    /* retract the second INT and the NULL row */
    sl_agg_retract(&f.l, acc, row_i(&t, CI, 7, false));
    sl_agg_retract(&f.l, acc, row_i(&t, CI, 0, true));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, 7);
    CHECK_EQ_INT(out[1].v.i, 7);
    CHECK_EQ_INT(out[3].v.i, 1);
    teardown(&f);
}

/* FILTER: items count only rows whose BOOLEAN column is TRUE; COUNT(*)
 * with a filter has its own slot. DISTINCT items are left to the caller:
 * sl_agg_add skips them, sl_agg_distinct_apply folds a value in or out. */
static void test_filter_and_distinct(void)
{
    static fixture f;
    const char *items[] = {"COUNT(*) FILTER (WHERE b) AS n", "SUM(i) FILTER(WHERE `b`)",
                           "COUNT(DISTINCT i) AS di", "SUM(DISTINCT i)", "MAX(DISTINCT i)",
                           "COUNT(*)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    CHECK(f.l.has_distinct);
    CHECK(f.l.aggs[2].distinct && f.l.aggs[3].distinct);
    CHECK(!f.l.aggs[4].distinct); /* MAX(DISTINCT x) = MAX(x) */
    CHECK_EQ_INT(f.l.aggs[0].filter, CB);
    CHECK_EQ_INT(f.l.aggs[2].filter, -1);
    char sch[256];
    schema_text(&f.out, sch, sizeof sch);
    CHECK_EQ_STR(sch, "n BIGINT, EXPR$1 INT, di BIGINT, EXPR$3 INT, EXPR$4 INT, EXPR$5 BIGINT");
    uint8_t acc[256];
    sl_value out[6];
    sl_agg_init(&f.l, acc);
    /* rows (b, i): (T, 5), (F, 7), (NULL, 5), (T, 2) */
    static const struct { bool bnull; int64_t b, i; } rows[] = {
        {false, 1, 5}, {false, 0, 7}, {true, 0, 5}, {false, 1, 2}};
    trow t;
    for (size_t k = 0; k < SL_ARRAY_LEN(rows); k++) {
        row_i(&t, CB, rows[k].b, rows[k].bnull);
        t.v[CI] = (sl_value){.v.i = rows[k].i};
        sl_agg_add(&f.l, acc, &t.r);
        /* the caller's value set: 5 twice, so it is folded in once */
        if (k != 2)
            for (int a = 2; a <= 3; a++) sl_agg_distinct_apply(&f.l, a, acc, &t.r, 1);
        uint8_t tmp[8];
        const void *p;
        size_t len;
        CHECK(sl_agg_distinct_value(&f.l.aggs[2], &t.r, tmp, &p, &len));
        CHECK_EQ_INT(len, 8);
        CHECK(!sl_agg_distinct_value(&f.l.aggs[4], &t.r, tmp, &p, &len));
    }
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, 2);      /* b TRUE twice */
    CHECK_EQ_INT(out[1].v.i, 7);      /* 5 + 2 */
    CHECK_EQ_INT(out[2].v.i, 3);      /* {5, 7, 2} */
    CHECK_EQ_INT(out[3].v.i, 14);
    CHECK_EQ_INT(out[4].v.i, 7);
    CHECK_EQ_INT(out[5].v.i, 4);
    /* retract (T, 2) */
    row_i(&t, CB, 1, false);
    t.v[CI] = (sl_value){.v.i = 2};
    sl_agg_retract(&f.l, acc, &t.r);
    for (int a = 2; a <= 3; a++) sl_agg_distinct_apply(&f.l, a, acc, &t.r, -1);
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, 1);
    CHECK_EQ_INT(out[1].v.i, 5);
    CHECK_EQ_INT(out[2].v.i, 2);
    CHECK_EQ_INT(out[3].v.i, 12);
    CHECK_EQ_INT(out[5].v.i, 3);
    teardown(&f);
}

/* ---- SUM and AVG ---------------------------------------------------------- */

static void test_sum_avg_int(void)
{
    static fixture f;
    const char *items[] = {"SUM(i)", "AVG(i)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[64];
    sl_value out[2];
    trow t;
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_i(&t, CI, 0, true));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].isnull && out[1].isnull); /* of no non-NULL value: NULL */
    sl_agg_add(&f.l, acc, row_i(&t, CI, 2147483647, false));
    sl_agg_add(&f.l, acc, row_i(&t, CI, 1, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, -2147483648LL); /* SUM(INT) is INT: wraps at 32 bits */
    CHECK_EQ_INT(out[1].v.i, 1073741824);    /* AVG(INT) sums in 64 bits */
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_i(&t, CI, -3, false));
    sl_agg_add(&f.l, acc, row_i(&t, CI, -4, false));
    sl_agg_add(&f.l, acc, row_i(&t, CI, 0, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, -7);
    CHECK_EQ_INT(out[1].v.i, -2); /* -7 / 3 truncates toward zero */
    sl_agg_retract(&f.l, acc, row_i(&t, CI, -4, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, -3);
    CHECK_EQ_INT(out[1].v.i, -1); /* -3 / 2 */
    sl_agg_retract(&f.l, acc, row_i(&t, CI, -3, false));
    sl_agg_retract(&f.l, acc, row_i(&t, CI, 0, false));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].isnull && out[1].isnull); /* every value retracted */
    teardown(&f);
}

static void test_sum_avg_bigint(void)
{
    static fixture f;
    const char *items[] = {"SUM(l)", "AVG(l)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[64];
    sl_value out[2];
    trow t;
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_i(&t, CL, INT64_MAX, false));
    sl_agg_add(&f.l, acc, row_i(&t, CL, 1, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, INT64_MIN); /* wraps like Java's long */
    CHECK_EQ_INT(out[1].v.i, INT64_MIN / 2);
    sl_agg_retract(&f.l, acc, row_i(&t, CL, 1, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, INT64_MAX);
    CHECK_EQ_INT(out[1].v.i, INT64_MAX);
    teardown(&f);
}

static void test_sum_avg_double(void)
{
    static fixture f;
    const char *items[] = {"SUM(d)", "AVG(d)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[64];
    sl_value out[2];
    trow t;
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_d(&t, -0.0));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].v.d == 0.0 && signbit(out[0].v.d)); /* the first value as it is */
    sl_agg_add(&f.l, acc, row_d(&t, 1.5));
    sl_agg_add(&f.l, acc, row_d(&t, 3.0));
    sl_agg_add(&f.l, acc, row_i(&t, CD, 0, true));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].v.d == 4.5);
    CHECK(out[1].v.d == 1.5);
    sl_agg_retract(&f.l, acc, row_d(&t, 3.0));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].v.d == 1.5);
    CHECK(out[1].v.d == 0.75);
    teardown(&f);
}

/* ---- MIN and MAX ----------------------------------------------------------- */

static void test_minmax_integers_and_timestamp(void)
{
    static fixture f;
    const char *items[] = {"MIN(i)", "MAX(i)", "MIN(l)", "MAX(l)", "MIN(t)", "MAX(t)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[128];
    sl_value out[6];
    trow t;
    sl_agg_init(&f.l, acc);
    sl_agg_result(&f.l, acc, out);
    for (int i = 0; i < 6; i++) CHECK(out[i].isnull);
    const int64_t xs[] = {5, -2147483648LL, 2147483647};
    for (int k = 0; k < 3; k++) {
        sl_agg_add(&f.l, acc, row_i(&t, CI, xs[k], false));
        sl_agg_add(&f.l, acc, row_i(&t, CL, xs[k] * 1000000000LL, false));
        sl_agg_add(&f.l, acc, row_i(&t, CT, 1787151600000LL + xs[k], false));
    }
    sl_agg_add(&f.l, acc, row_i(&t, CI, 0, true));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, -2147483648LL);
    CHECK_EQ_INT(out[1].v.i, 2147483647);
    CHECK_EQ_INT(out[2].v.i, -2147483648000000000LL);
    CHECK_EQ_INT(out[3].v.i, 2147483647000000000LL);
    CHECK_EQ_INT(out[4].v.i, 1787151600000LL - 2147483648LL);
    CHECK_EQ_INT(out[5].v.i, 1787151600000LL + 2147483647LL);
    teardown(&f);
}

static void test_minmax_boolean(void)
{
    static fixture f;
    const char *items[] = {"MIN(b)", "MAX(b)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[64];
    sl_value out[2];
    trow t;
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_i(&t, CB, 1, false));
    sl_agg_result(&f.l, acc, out);
    CHECK(!out[0].isnull && out[0].v.i == 1 && out[1].v.i == 1);
    sl_agg_add(&f.l, acc, row_i(&t, CB, 0, true));
    sl_agg_add(&f.l, acc, row_i(&t, CB, 0, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, 0); /* FALSE < TRUE */
    CHECK_EQ_INT(out[1].v.i, 1);
    CHECK_EQ_INT(f.out.fields[0].type, SL_T_BOOLEAN);
    teardown(&f);
}

static void test_minmax_double(void)
{
    static fixture f;
    const char *items[] = {"MIN(d)", "MAX(d)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[64];
    sl_value out[2];
    trow t;
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_d(&t, 0.0));
    sl_agg_add(&f.l, acc, row_d(&t, -0.0));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].v.d == 0.0 && signbit(out[0].v.d));  /* -0.0 < 0.0 (Double.compareTo) */
    CHECK(out[1].v.d == 0.0 && !signbit(out[1].v.d));
    sl_agg_add(&f.l, acc, row_d(&t, -1e300));
    sl_agg_add(&f.l, acc, row_d(&t, INFINITY));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].v.d == -1e300);
    CHECK(out[1].v.d == INFINITY);
    sl_agg_add(&f.l, acc, row_d(&t, NAN));
    sl_agg_result(&f.l, acc, out);
    CHECK(out[0].v.d == -1e300);
    CHECK(isnan(out[1].v.d)); /* NaN above everything */
    teardown(&f);
}

/* Retraction leaves MIN and MAX alone; keep_values leaves them to the caller. */
static void test_minmax_retract_and_keep_values(void)
{
    static fixture f;
    const char *items[] = {"COUNT(*)", "MIN(i)", "MAX(i)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t acc[64];
    sl_value out[3];
    trow t;
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_i(&t, CI, 3, false));
    sl_agg_add(&f.l, acc, row_i(&t, CI, 9, false));
    sl_agg_retract(&f.l, acc, row_i(&t, CI, 9, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, 1);
    CHECK_EQ_INT(out[1].v.i, 3);
    CHECK_EQ_INT(out[2].v.i, 9); /* the library cannot know the next maximum */

    f.l.keep_values = true;
    sl_agg_init(&f.l, acc);
    sl_agg_add(&f.l, acc, row_i(&t, CI, 3, false));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[0].v.i, 1);
    CHECK(out[1].isnull && out[2].isnull); /* left to the caller */
    int64_t k;
    CHECK(!sl_agg_minmax_get(&f.l.aggs[1], acc, &k));
    sl_agg_minmax_set(&f.l.aggs[1], acc, true, 3);
    sl_agg_minmax_set(&f.l.aggs[2], acc, true, sl_agg_order_key(SL_T_INT, &t.v[CI]));
    sl_agg_result(&f.l, acc, out);
    CHECK_EQ_INT(out[1].v.i, 3);
    CHECK_EQ_INT(out[2].v.i, 3);
    CHECK(sl_agg_minmax_get(&f.l.aggs[2], acc, &k) && k == 3);
    CHECK(sl_agg_minmax_better(&f.l.aggs[2], 4, 3) && !sl_agg_minmax_better(&f.l.aggs[1], 4, 3));
    sl_agg_minmax_set(&f.l.aggs[1], acc, false, 0);
    sl_agg_result(&f.l, acc, out);
    CHECK(out[1].isnull);
    teardown(&f);
}

/* ---- merge ---------------------------------------------------------------------- */

/* Merging the accumulators of two halves gives the accumulator of the whole,
 * byte for byte, for every function over every type; an empty side changes
 * nothing. */
static void test_merge(void)
{
    static fixture f;
    const char *items[] = {"COUNT(*)", "COUNT(i)", "SUM(i)", "SUM(l)", "SUM(d)", "AVG(i)",
                           "AVG(l)", "AVG(d)", "MIN(b)", "MAX(b)", "MIN(i)", "MAX(l)", "MIN(d)",
                           "MAX(d)", "MIN(t)", "MAX(t)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    uint8_t whole[512], a[512], b[512], empty[512];
    sl_agg_init(&f.l, whole);
    sl_agg_init(&f.l, a);
    sl_agg_init(&f.l, b);
    sl_agg_init(&f.l, empty);
    trow t;
    for (int k = 0; k < 20; k++) {
        sl_value v[NCOLS];
        v[CB] = (sl_value){.isnull = k % 7 == 0, .v.i = k % 3 == 0};
        v[CI] = (sl_value){.isnull = k % 5 == 0, .v.i = (k * 37) % 23 - 11};
        v[CL] = (sl_value){.isnull = k == 3, .v.i = (int64_t)k * 1000000007LL};
        v[CD] = (sl_value){.isnull = k == 4, .v.d = (double)((k * 13) % 17) / 4.0};
        v[CS] = (sl_value){.isnull = true};
        v[CT] = (sl_value){.isnull = k == 9, .v.i = 1787151600000LL - k * 1000};
        v[CY] = (sl_value){.isnull = true};
        memcpy(t.v, v, sizeof v);
        t.r = (sl_row){.kind = SL_KIND_INSERT, .n = NCOLS, .vals = t.v};
        sl_agg_add(&f.l, whole, &t.r);
        sl_agg_add(&f.l, k < 8 ? a : b, &t.r);
    }
    uint8_t m[512];
    memcpy(m, empty, f.l.size);
    sl_agg_merge(&f.l, m, a); /* empty + a == a */
    CHECK(memcmp(m, a, f.l.size) == 0);
    sl_agg_merge(&f.l, m, empty); /* a + empty == a */
    CHECK(memcmp(m, a, f.l.size) == 0);
    sl_agg_merge(&f.l, m, b);
    CHECK(memcmp(m, whole, f.l.size) == 0);
    /* and the results, written out */
    sl_value out[16];
    sl_agg_result(&f.l, m, out);
    CHECK_EQ_INT(out[0].v.i, 20);
    CHECK_EQ_INT(out[1].v.i, 16); /* i is NULL for k = 0, 5, 10, 15 */
    CHECK_EQ_INT(out[8].v.i, 0);
    CHECK_EQ_INT(out[9].v.i, 1);
    CHECK_EQ_INT(out[11].v.i, 19 * 1000000007LL);
    CHECK_EQ_INT(out[14].v.i, 1787151600000LL - 19000);
    CHECK_EQ_INT(out[15].v.i, 1787151600000LL - 0);
    /* merging in the other order gives the same results */
    memcpy(m, b, f.l.size);
    sl_agg_merge(&f.l, m, a);
    sl_value out2[16];
    sl_agg_result(&f.l, m, out2);
    CHECK(sl_agg_results_equal(&f.l, out, out2));
    teardown(&f);
}

static void test_results_equal(void)
{
    static fixture f;
    const char *items[] = {"SUM(d)", "COUNT(*)", NULL};
    CHECK_EQ_INT(setup(&f, items), SL_OK);
    sl_value a[2] = {{.v.d = 0.0}, {.v.i = 1}}, b[2] = {{.v.d = 0.0}, {.v.i = 1}};
    CHECK(sl_agg_results_equal(&f.l, a, b));
    b[0].v.d = -0.0; /* Double.equals tells 0.0 and -0.0 apart */
    CHECK(!sl_agg_results_equal(&f.l, a, b));
    a[0].v.d = NAN;
    b[0].v.d = -NAN; /* and takes every NaN for one */
    CHECK(sl_agg_results_equal(&f.l, a, b));
    b[1].v.i = 2;
    CHECK(!sl_agg_results_equal(&f.l, a, b));
    b[1].v.i = 1;
    b[0].isnull = true;
    CHECK(!sl_agg_results_equal(&f.l, a, b));
    teardown(&f);
}

/* DECIMAL(10, 2) and DATE columns: SUM is DECIMAL(38, 2), AVG DECIMAL(38, 6)
 * (the exact sum divided once, HALF_UP), MIN/MAX keep the type; a SUM/AVG
 * slot is 24 bytes; retract and merge are exact. */
static void test_decimal_and_date(void)
{
    sl_schema in, out;
    sl_schema_init(&in);
    sl_schema_init(&out);
    const sl_dtype *d102;
    char err[256];
    CHECK_EQ_INT(sl_dtype_parse("DECIMAL(10, 2)", &d102, err, sizeof err), SL_OK);
    sl_schema_add_dt(&in, "p", d102);
    sl_schema_add(&in, "dt", SL_T_DATE);
    sl_agg_list l;
    sl_agg_list_init(&l);
    const char *items[] = {"SUM(p)", "AVG(p)", "MIN(p)", "MAX(p)", "MAX(dt)", "COUNT(p)"};
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(sl_agg_list_add(&l, items[i], i + 1, &in, &out, err, sizeof err), SL_OK);
    CHECK_EQ_STR(out.fields[0].dt->text, "DECIMAL(38, 2)");
    CHECK_EQ_STR(out.fields[1].dt->text, "DECIMAL(38, 6)");
    CHECK_EQ_STR(out.fields[2].dt->text, "DECIMAL(10, 2)");
    CHECK_EQ_STR(out.fields[4].dt->text, "DATE");
    CHECK_EQ_INT((int)l.size, 8 + 24 + 24 + 16 + 16 + 16 + 8);
    l.keep_values = false;
    uint8_t acc[128], acc2[128];
    sl_agg_init(&l, acc);
    sl_agg_init(&l, acc2);
    /* 1.10, 2.25, 3.00 (unscaled 110, 225, 300); dates 20000, 19000, 20500 */
    int64_t cents[] = {110, 225, 300, -99999};
    int64_t days[] = {20000, 19000, 20500, 1};
    sl_value v[2];
    sl_row r = {.kind = SL_KIND_INSERT, .n = 2, .vals = v};
    for (int i = 0; i < 4; i++) {
        v[0] = (sl_value){.v.dec = {(uint64_t)cents[i], cents[i] < 0 ? -1 : 0}};
        v[1] = (sl_value){.v.i = days[i]};
        sl_agg_add(&l, i < 2 ? acc : acc2, &r);
    }
    v[0] = (sl_value){.v.dec = {(uint64_t)-99999, -1}}; /* take -999.99 back out */
    v[1] = (sl_value){.isnull = true};
    sl_agg_retract(&l, acc2, &r);
    sl_agg_merge(&l, acc, acc2);
    sl_value o[6];
    sl_agg_result(&l, acc, o);
    CHECK_EQ_INT((int64_t)o[0].v.dec.lo, 635); /* 6.35 */
    CHECK_EQ_INT(o[0].v.dec.hi, 0);
    CHECK_EQ_INT((int64_t)o[1].v.dec.lo, 2116667); /* 6.35 / 3 = 2.116666.. -> 2.116667 */
    CHECK_EQ_INT(o[5].v.i, 3);
    /* the caller keeps MIN/MAX under retraction; without it the extremes stay */
    CHECK_EQ_INT((int64_t)o[2].v.dec.lo, -99999);
    CHECK_EQ_INT(o[2].v.dec.hi, -1);
    CHECK_EQ_INT((int64_t)o[3].v.dec.lo, 300);
    CHECK_EQ_INT(o[4].v.i, 20500);
    /* a negative sum */
    sl_agg_init(&l, acc);
    v[0] = (sl_value){.v.dec = {(uint64_t)-5, -1}};
    v[1] = (sl_value){.isnull = true};
    sl_agg_add(&l, acc, &r);
    sl_agg_add(&l, acc, &r);
    sl_agg_add(&l, acc, &r);
    sl_agg_result(&l, acc, o);
    CHECK_EQ_INT((int64_t)o[0].v.dec.lo, -15);
    CHECK_EQ_INT(o[0].v.dec.hi, -1);
    CHECK_EQ_INT((int64_t)o[1].v.dec.lo, -50000); /* -0.05 at scale 6 */
    /* MIN/MAX of a DECIMAL wider than 18 digits is refused */
    const sl_dtype *d30;
    CHECK_EQ_INT(sl_dtype_parse("DECIMAL(30, 2)", &d30, err, sizeof err), SL_OK);
    sl_schema_add_dt(&in, "w", d30);
    CHECK_EQ_INT(sl_agg_list_add(&l, "MIN(w)", 7, &in, &out, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "MIN of DECIMAL(30, 2) (precision above 18) is not supported yet") != NULL);
    sl_agg_list_free(&l);
    sl_schema_free(&in);
    sl_schema_free(&out);
}

SL_TEST_MAIN(SL_TEST(test_decimal_and_date), SL_TEST(test_parse_and_result_types), SL_TEST(test_parse_errors),
             SL_TEST(test_count), SL_TEST(test_filter_and_distinct), SL_TEST(test_sum_avg_int), SL_TEST(test_sum_avg_bigint),
             SL_TEST(test_sum_avg_double), SL_TEST(test_minmax_integers_and_timestamp),
             SL_TEST(test_minmax_boolean), SL_TEST(test_minmax_double),
             SL_TEST(test_minmax_retract_and_keep_values), SL_TEST(test_merge),
             SL_TEST(test_results_equal))
