/*
 * test_dtype.c -- type descriptors (parse, canonical text, interning) and
 * the binary form, readers, builder and print text of the types beyond the
 * original seven. Expected texts and bytes are written out by hand.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sl_test.h"
#include "row.h"

static const sl_dtype *P(const char *text)
{
    const sl_dtype *d = NULL;
    char err[300];
    if (sl_dtype_parse(text, &d, err, sizeof err) != SL_OK) {
        fprintf(stderr, "parse '%s': %s\n", text, err);
        return NULL;
    }
    return d;
}

static void test_parse_text(void)
{
    static const struct {
        const char *in, *text;
    } cases[] = {
        {"BOOLEAN", "BOOLEAN"}, {"tinyint", "TINYINT"}, {"SMALLINT", "SMALLINT"},
        {"INTEGER", "INT"}, {"BIGINT", "BIGINT"}, {"FLOAT", "FLOAT"}, {"REAL", "FLOAT"},
        {"DOUBLE PRECISION", "DOUBLE"}, {"DECIMAL", "DECIMAL(10, 0)"},
        {"dec(5)", "DECIMAL(5, 0)"}, {"NUMERIC(38,18)", "DECIMAL(38, 18)"},
        {"DECIMAL(10, 2) NOT NULL", "DECIMAL(10, 2) NOT NULL"}, {"CHAR", "CHAR(1)"},
        {"CHAR(3)", "CHAR(3)"}, {"VARCHAR", "VARCHAR(1)"}, {"VARCHAR(2147483647)", "STRING"},
        {"STRING", "STRING"}, {"BINARY(2)", "BINARY(2)"}, {"VARBINARY(4)", "VARBINARY(4)"},
        {"BYTES", "BYTES"}, {"DATE", "DATE"}, {"TIME", "TIME(0)"}, {"TIME(3)", "TIME(3)"},
        {"TIMESTAMP", "TIMESTAMP(3)"}, {"TIMESTAMP(6) WITHOUT TIME ZONE", "TIMESTAMP(6)"},
        {"TIMESTAMP(9) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(9)"},
        {"TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(3)"},
        {"INTERVAL YEAR TO MONTH", "INTERVAL YEAR(2) TO MONTH"},
        {"INTERVAL MONTH", "INTERVAL MONTH"},
        {"INTERVAL DAY TO SECOND(3)", "INTERVAL DAY(2) TO SECOND(3)"},
        {"INTERVAL SECOND", "INTERVAL SECOND(6)"},
        {"INTERVAL HOUR TO MINUTE", "INTERVAL HOUR TO MINUTE"},
        {"ARRAY<INT>", "ARRAY<INT>"}, {"INT ARRAY", "ARRAY<INT>"},
        {"INT NOT NULL ARRAY NOT NULL", "ARRAY<INT NOT NULL> NOT NULL"},
        {"MAP<STRING, INT>", "MAP<STRING, INT>"}, {"MULTISET<STRING>", "MULTISET<STRING>"},
        {"ROW<id INT, tags ARRAY<STRING>>", "ROW<`id` INT, `tags` ARRAY<STRING>>"},
        {"ROW(a INT NOT NULL, `b c` STRING COMMENT 'x''y')", "ROW<`a` INT NOT NULL, `b c` STRING>"},
        {"ROW<`a``b` ROW<x MAP<INT, ARRAY<DECIMAL(20, 4)>>>>",
         "ROW<`a``b` ROW<`x` MAP<INT, ARRAY<DECIMAL(20, 4)>>>>"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        const sl_dtype *d = P(cases[i].in);
        CHECK(d != NULL);
        if (!d) continue;
        CHECK_EQ_STR(d->text, cases[i].text);
        /* the text reads back to the same (interned) descriptor */
        CHECK(P(d->text) == d);
    }
    CHECK(P("decimal(10,2)") == P("DECIMAL(10, 2)"));
    CHECK(P("INT")->kind == SL_T_INT && P("INT") == sl_dtype_basic(SL_T_INT));
    CHECK(P("VARCHAR(5)")->kind == SL_T_STRING);
    CHECK(P("VARCHAR(5)")->phys == sl_dtype_basic(SL_T_STRING));
    CHECK(P("TIMESTAMP_LTZ(3)")->phys == sl_dtype_basic(SL_T_TIMESTAMP));
    CHECK(P("DECIMAL(10, 2) NOT NULL")->phys == P("DECIMAL(10, 2)"));
    const sl_dtype *r = P("ROW<a INT, b ARRAY<STRING>>");
    CHECK_EQ_INT(r->nfields, 2);
    CHECK_EQ_STR(r->names[1], "b");
    CHECK(r->ftypes[1]->elem == sl_dtype_basic(SL_T_STRING));

    static const struct {
        const char *in, *err;
    } bad[] = {
        {"", "data type '': at position 1: expected a data type"},
        {"INTS", "data type 'INTS': at position 1: unknown data type INTS"},
        {"DECIMAL(39, 2)", "data type 'DECIMAL(39, 2)': at position 9: DECIMAL precision must be "
                           "between 1 and 38"},
        {"DECIMAL(5, 6)", "data type 'DECIMAL(5, 6)': at position 12: DECIMAL scale must be "
                          "between 0 and the precision"},
        {"ARRAY<INT", "data type 'ARRAY<INT': at position 10: expected '>'"},
        {"ROW<a INT, a INT>", "data type 'ROW<a INT, a INT>': at position 12: duplicate ROW field a"},
        {"TIME(10)", "data type 'TIME(10)': at position 6: the precision of TIME must be between 0 "
                     "and 9"},
        {"MAP<INT>", "data type 'MAP<INT>': at position 8: expected ','"},
        {"INT INT", "data type 'INT INT': at position 5: unexpected text after the type"},
        {"TIMESTAMP WITH TIME ZONE", "data type 'TIMESTAMP WITH TIME ZONE': at position 16: "
                                     "TIMESTAMP WITH TIME ZONE is not supported; use WITH LOCAL "
                                     "TIME ZONE"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++) {
        const sl_dtype *d = NULL;
        char err[300] = "";
        CHECK_EQ_INT(sl_dtype_parse(bad[i].in, &d, err, sizeof err), SL_ERR);
        CHECK_EQ_STR(err, bad[i].err);
    }
    /* nesting deeper than the limit is refused, not recursed into */
    char deep[2000] = "";
    for (int i = 0; i < 100; i++) strcat(deep, "ARRAY<");
    strcat(deep, "INT");
    for (int i = 0; i < 100; i++) strcat(deep, ">");
    const sl_dtype *d = NULL;
    char err[300];
    CHECK_EQ_INT(sl_dtype_parse(deep, &d, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "nested too deeply") != NULL);
}

/* A row of every new type: encode, decode, compare, format. */
static void test_roundtrip_new_types(void)
{
    sl_schema s;
    sl_schema_init(&s);
    char err[300];
    CHECK_EQ_INT(sl_schema_parse("ti TINYINT, si SMALLINT, f FLOAT, d DATE, t TIME(0), "
                                 "t9 TIME(9), ts6 TIMESTAMP(6), dec DECIMAL(10, 2), "
                                 "big DECIMAL(38, 4), ym INTERVAL YEAR TO MONTH, "
                                 "dt INTERVAL DAY TO SECOND(3), arr ARRAY<INT>, "
                                 "m MAP<STRING, INT>, r ROW<id INT, tags ARRAY<STRING>>",
                                 &s, err, sizeof err),
                 SL_OK);
    CHECK_EQ_INT(s.n, 14);
    sl_arena a;
    sl_arena_init(&a, 1 << 16);
    sl_value v[14];
    memset(v, 0, sizeof v);
    v[0].v.i = -5;
    v[1].v.i = -300;
    v[2].v.d = 1.5;
    v[3].v.i = 20454; /* 2026-01-01 */
    v[4].v.i = 36000000; /* 10:00 */
    v[5].v.ts.ms = 36001500; /* 10:00:01.500000001 */
    v[5].v.ts.nano = 1;
    v[6].v.ts.ms = 1767225600123LL; /* 2026-01-01T00:00:00.123456 */
    v[6].v.ts.nano = 456000;
    v[7].v.dec.lo = 1230; /* 12.30 */
    v[8].v.dec.lo = (uint64_t)-10000; /* -1.0000 */
    v[8].v.dec.hi = -1;
    v[9].v.i = 14; /* 1 year 2 months */
    v[10].v.i = 93784500; /* 1 day 02:03:04.5 */
    sl_value el[3] = {{.v.i = 1}, {.v.i = 2}, {.isnull = true}};
    CHECK_EQ_INT(sl_nested_build(s.fields[11].dt, el, 3, NULL, &a, &v[11]), SL_OK);
    sl_value mk[2] = {{.v.s = {"a", 1}}, {.v.s = {"b", 1}}};
    sl_value mv[2] = {{.v.i = 1}, {.isnull = true}};
    CHECK_EQ_INT(sl_nested_build(s.fields[12].dt, mk, 2, mv, &a, &v[12]), SL_OK);
    const sl_dtype *rt = s.fields[13].dt;
    sl_value tags[2] = {{.v.s = {"x", 1}}, {.v.s = {"yz", 2}}};
    sl_value rf[2] = {{.v.i = 7}};
    CHECK_EQ_INT(sl_nested_build(rt->ftypes[1], tags, 2, NULL, &a, &rf[1]), SL_OK);
    CHECK_EQ_INT(sl_nested_build(rt, rf, 0, NULL, &a, &v[13]), SL_OK);
    /* hand-computed canonical bytes of the ARRAY [1, 2, NULL]: count 3,
     * bitmap 0b100, then two INTs */
    static const uint8_t arr_bytes[] = {3, 0, 0, 0, 4, 1, 0, 0, 0, 2, 0, 0, 0};
    CHECK_EQ_INT(v[11].v.s.len, sizeof arr_bytes);
    CHECK(memcmp(v[11].v.s.p, arr_bytes, sizeof arr_bytes) == 0);

    sl_row row = {SL_KIND_INSERT, 14, v, SL_TS_NONE};
    uint8_t buf[1024];
    size_t n = sl_row_encode(&row, &s, buf, sizeof buf);
    /* 1 kind + 2 bitmap + 1+2+4+4+4+8+12+8+16+4+8 + (4+13) + map + row */
    CHECK(n > 0);
    sl_value out[14];
    sl_row r2 = {.vals = out};
    CHECK_EQ_INT(sl_row_decode(buf, n, &s, &r2, err, sizeof err), SL_OK);
    static const char *want[] = {
        "-5", "-300", "1.5", "2026-01-01", "10:00", "10:00:01.500000001",
        "2026-01-01T00:00:00.123456", "12.30", "-1.0000", "P1Y2M", "PT26H3M4.5S",
        "[1, 2, null]", "{a=1, b=null}", "+I[7, [x, yz]]",
    };
    for (int i = 0; i < 14; i++) {
        char txt[200];
        sl_value_format_dt(txt, sizeof txt, &out[i], s.fields[i].dt);
        CHECK_EQ_STR(txt, want[i]);
    }
    /* readers */
    sl_nested_reader rd;
    sl_value e, ev;
    CHECK_EQ_INT(sl_nested_open(&rd, s.fields[12].dt, &out[12]), 2);
    CHECK(sl_nested_next(&rd, &e, &ev));
    CHECK(e.v.s.len == 1 && e.v.s.p[0] == 'a' && !ev.isnull && ev.v.i == 1);
    CHECK(sl_nested_next(&rd, &e, &ev));
    CHECK(e.v.s.p[0] == 'b' && ev.isnull);
    CHECK(!sl_nested_next(&rd, &e, &ev));
    CHECK(sl_nested_get(s.fields[11].dt, &out[11], 2, &e, NULL) && e.isnull);
    CHECK(!sl_nested_get(s.fields[11].dt, &out[11], 3, &e, NULL));
    CHECK(sl_nested_get(rt, &out[13], 1, &e, NULL));
    CHECK(sl_nested_get(rt->ftypes[1], &e, 1, &ev, NULL) && ev.v.s.len == 2);

    /* every truncation of the frame is refused with a message */
    for (size_t cut = 0; cut < n; cut++) {
        char m[400] = "";
        CHECK_EQ_INT(sl_row_decode(buf, cut, &s, &r2, m, sizeof m), SL_ERR);
        CHECK(m[0] != 0);
    }
    /* damage inside the nested ROW: its ARRAY claims 3 elements */
    uint8_t bad[1024];
    memcpy(bad, buf, n);
    size_t at = n - v[13].v.s.len; /* the ROW's bytes: bitmap, INT, u32 len, ARRAY */
    CHECK_EQ_INT(bad[at + 5 + 4], 2);
    bad[at + 5 + 4] = 3;
    CHECK_EQ_INT(sl_row_decode(bad, n, &s, &r2, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "field 13 'r'") != NULL);
    CHECK(strstr(err, "field 'tags'") != NULL);
    /* a DECIMAL(10, 2) beyond 10 digits is refused */
    sl_value big = v[7];
    big.v.dec.lo = 10000000000ULL;
    sl_value keep = v[7];
    v[7] = big;
    n = sl_row_encode(&row, &s, buf, sizeof buf);
    CHECK_EQ_INT(sl_row_decode(buf, n, &s, &r2, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "DECIMAL(10, 2)") != NULL);
    v[7] = keep;
    /* key bytes of the ROW column decode to the same bytes */
    int keys[] = {13, 7};
    uint8_t kb[256];
    size_t kn = sl_row_key_encode(&row, &s, keys, 2, kb, sizeof kb);
    CHECK_EQ_INT(kn, sl_row_key_size(&row, &s, keys, 2));
    sl_value kv[2];
    CHECK_EQ_INT(sl_row_key_decode(kb, kn, &s, keys, 2, kv), SL_OK);
    CHECK(kv[0].v.s.len == v[13].v.s.len && !memcmp(kv[0].v.s.p, v[13].v.s.p, kv[0].v.s.len));
    CHECK(kv[1].v.dec.lo == 1230 && kv[1].v.dec.hi == 0);
    sl_arena_free(&a);
    sl_schema_free(&s);
}

/* The original seven keep their exact bytes. */
static void test_old_bytes(void)
{
    sl_schema s;
    sl_schema_init(&s);
    char err[200];
    CHECK_EQ_INT(sl_schema_parse("a INT, b TIMESTAMP(3), c STRING", &s, err, sizeof err), SL_OK);
    sl_value v[3] = {{.v.i = 1}, {.v.i = 2}, {.v.s = {"x", 1}}};
    sl_row r = {SL_KIND_INSERT, 3, v, SL_TS_NONE};
    uint8_t buf[64];
    size_t n = sl_row_encode(&r, &s, buf, sizeof buf);
    static const uint8_t want[] = {0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'x'};
    CHECK_EQ_INT(n, sizeof want);
    CHECK(memcmp(buf, want, n) == 0);
    sl_schema_free(&s);
}

static void test_format_decimal(void)
{
    const sl_dtype *d = P("DECIMAL(38, 10)");
    sl_value v = {0};
    char t[64];
    sl_value_format_dt(t, sizeof t, &v, d);
    CHECK_EQ_STR(t, "0E-10"); /* as Java's BigDecimal.toString */
    v.v.dec.lo = 1234567;
    sl_value_format_dt(t, sizeof t, &v, d);
    CHECK_EQ_STR(t, "0.0001234567");
    v.v.dec.lo = 1;
    sl_value_format_dt(t, sizeof t, &v, P("DECIMAL(10, 7)"));
    CHECK_EQ_STR(t, "1E-7");
    /* 10^37 - 1 over scale 0: 37 nines */
    v.v.dec.lo = 0x4b3b4ca85a86c47aULL * 0 + 0;
    unsigned __int128 x = 1;
    for (int i = 0; i < 37; i++) x *= 10;
    x -= 1;
    v.v.dec.lo = (uint64_t)x;
    v.v.dec.hi = (int64_t)(x >> 64);
    sl_value_format_dt(t, sizeof t, &v, P("DECIMAL(38, 0)"));
    CHECK_EQ_STR(t, "9999999999999999999999999999999999999");
    v.v.i = 0;
    sl_value f = {.v.d = 0.1f};
    sl_value_format_dt(t, sizeof t, &f, P("FLOAT"));
    CHECK_EQ_STR(t, "0.1");
    f.v.d = 1e10;
    sl_value_format_dt(t, sizeof t, &f, P("FLOAT"));
    CHECK_EQ_STR(t, "1.0E10");
}

/* The table grows past its first sizes and keeps every type findable (one
 * pointer per text); CHAR(0) parses (plans carry it) but a declared column of
 * it is refused in Flink's words; sl_dtype_text caps at STRING. */
static void test_table_grows_and_text_types(void)
{
    const sl_dtype *first[6000];
    char t[64], err[200];
    for (int n = 1; n <= 6000; n++) {
        snprintf(t, sizeof t, "VARCHAR(%d) NOT NULL", n);
        first[n - 1] = P(t);
        CHECK(first[n - 1] != NULL);
    }
    CHECK(sl_dtype_count() > 6000);
    for (int n = 1; n <= 6000; n += 7) {
        snprintf(t, sizeof t, "VARCHAR(%d) NOT NULL", n);
        CHECK(P(t) == first[n - 1]);
        CHECK(sl_dtype_text(true, false, n, true, NULL, 0) == first[n - 1]);
    }
    const sl_dtype *c0 = sl_dtype_text(true, true, 0, true, NULL, 0);
    CHECK(c0 != NULL);
    CHECK_EQ_STR(c0->text, "CHAR(0) NOT NULL");
    CHECK(P("CHAR(0) NOT NULL") == c0);
    CHECK(sl_dtype_check_declared(c0, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "Zero-length character strings have no serializable string representation.");
    CHECK(sl_dtype_check_declared(P("ROW<a INT, b ARRAY<BINARY(0)>>"), err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "Zero-length binary strings have no serializable string representation.");
    CHECK(sl_dtype_check_declared(P("MAP<CHAR(1), VARCHAR(3)>"), err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_dtype_text(true, true, (int64_t)SL_DTYPE_MAX_LEN + 5, false, NULL, 0)->text,
                 "STRING");
    CHECK_EQ_STR(sl_dtype_text(true, true, 7, false, NULL, 0)->text, "CHAR(7)");
}

SL_TEST_MAIN(SL_TEST(test_parse_text), SL_TEST(test_roundtrip_new_types), SL_TEST(test_old_bytes),
             SL_TEST(test_format_decimal), SL_TEST(test_table_grows_and_text_types))
