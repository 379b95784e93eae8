/*
 * test_row.c -- type parsing, schemas, the binary row format, key bytes,
 * Flink-style value formatting and the scratch arena.
 *
 * Expected bytes and strings are written out by hand from the format in
 * row.h and from what Java's toString methods print, not computed with the
 * code under test.
 */
#include <math.h>
#include <stdlib.h>

#include "sl_test.h"
#include "row.h"

static void test_type_parse(void)
{
    static const struct {
        const char *text;
        sl_type t;
    } ok[] = {
        {"BOOLEAN", SL_T_BOOLEAN}, {"boolean", SL_T_BOOLEAN}, {"INT", SL_T_INT},
        {"Integer", SL_T_INT}, {"BIGINT", SL_T_BIGINT}, {"double", SL_T_DOUBLE},
        {"STRING", SL_T_STRING}, {"varchar", SL_T_STRING}, {"VARCHAR(10)", SL_T_STRING},
        {"VARCHAR( 255 )", SL_T_STRING}, {"BYTES", SL_T_BYTES}, {"TIMESTAMP", SL_T_TIMESTAMP},
        {"timestamp(3)", SL_T_TIMESTAMP}, {"TIMESTAMP_LTZ(3)", SL_T_TIMESTAMP},
        {"  BIGINT ", SL_T_BIGINT}, {"TIMESTAMP (3)", SL_T_TIMESTAMP},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(ok); i++) {
        sl_type t = SL_T_NULL;
        CHECK_EQ_INT(sl_type_parse(ok[i].text, &t), SL_OK);
        CHECK_EQ_INT(t, ok[i].t);
    }
    static const char *bad[] = {"", "INTS", "VARCHAR(", "VARCHAR()", "VARCHAR(0)", "VARCHAR(x)",
                                "INT(3)", "TIMESTAMP(9)", "BIGINT BIGINT", "FLOAT",
                                "VARCHAR(10", "VARCHAR(10))", "STRIN"};
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++) {
        sl_type t = SL_T_INT;
        CHECK_EQ_INT(sl_type_parse(bad[i], &t), SL_ERR);
        CHECK_EQ_INT(t, SL_T_INT);
    }
    CHECK_EQ_STR(sl_type_name(SL_T_BIGINT), "BIGINT");
    CHECK_EQ_STR(sl_type_name(SL_T_TIMESTAMP), "TIMESTAMP(3)");
    CHECK_EQ_STR(sl_type_name(SL_T_STRING), "STRING");
    CHECK_EQ_STR(sl_rowkind_short(SL_KIND_INSERT), "+I");
    CHECK_EQ_STR(sl_rowkind_short(SL_KIND_UPDATE_BEFORE), "-U");
    CHECK_EQ_STR(sl_rowkind_short(SL_KIND_UPDATE_AFTER), "+U");
    CHECK_EQ_STR(sl_rowkind_short(SL_KIND_DELETE), "-D");
}

static void test_schema(void)
{
    sl_schema s, c;
    sl_schema_init(&s);
    sl_schema_add(&s, "id", SL_T_BIGINT);
    sl_schema_add(&s, "Name", SL_T_STRING);
    CHECK_EQ_INT(s.n, 2);
    CHECK_EQ_INT(sl_schema_find(&s, "ID"), 0);
    CHECK_EQ_INT(sl_schema_find(&s, "name"), 1);
    CHECK_EQ_INT(sl_schema_find(&s, "nam"), -1);
    sl_schema_copy(&c, &s);
    CHECK(sl_schema_equal(&s, &c));
    CHECK(c.fields[1].name != s.fields[1].name);
    c.fields[1].type = SL_T_BYTES;
    CHECK(!sl_schema_equal(&s, &c));
    sl_schema_free(&c);
    CHECK_EQ_INT(c.n, 0);
    sl_schema_free(&s);
    sl_schema_free(NULL);
}

/* A schema with every type, used by the round trips below. */
static void all_types(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "b", SL_T_BOOLEAN);
    sl_schema_add(s, "i", SL_T_INT);
    sl_schema_add(s, "l", SL_T_BIGINT);
    sl_schema_add(s, "d", SL_T_DOUBLE);
    sl_schema_add(s, "s", SL_T_STRING);
    sl_schema_add(s, "y", SL_T_BYTES);
    sl_schema_add(s, "t", SL_T_TIMESTAMP);
}

static void test_encode_exact_bytes(void)
{
    sl_schema s;
    all_types(&s);
    sl_value v[7] = {0};
    v[0].v.i = 1;
    v[1].v.i = -2;
    v[2].v.i = 0x0102030405060708LL;
    v[3].v.d = 1.0; /* 0x3FF0000000000000 */
    v[4].v.s.p = "hi";
    v[4].v.s.len = 2;
    v[5].isnull = true;
    v[6].v.i = 20;
    sl_row r = {SL_KIND_UPDATE_AFTER, 7, v, SL_TS_NONE};
    static const uint8_t want[] = {
        2,                                          /* +U */
        0x20,                                       /* field 5 NULL */
        1,                                          /* BOOLEAN */
        0xFE, 0xFF, 0xFF, 0xFF,                     /* INT -2 */
        8, 7, 6, 5, 4, 3, 2, 1,                     /* BIGINT */
        0, 0, 0, 0, 0, 0, 0xF0, 0x3F,               /* DOUBLE 1.0 */
        2, 0, 0, 0, 'h', 'i',                       /* STRING */
        20, 0, 0, 0, 0, 0, 0, 0,                    /* TIMESTAMP */
    };
    uint8_t buf[64];
    CHECK_EQ_INT(sl_row_size(&r, &s), sizeof want);
    CHECK_EQ_INT(sl_row_encode(&r, &s, buf, sizeof buf), sizeof want);
    CHECK(memcmp(buf, want, sizeof want) == 0);
    /* Too small a buffer: nothing written, 0 returned. */
    CHECK_EQ_INT(sl_row_encode(&r, &s, buf, sizeof want - 1), 0);
    sl_schema_free(&s);
}

static void test_roundtrip_every_type(void)
{
    sl_schema s;
    all_types(&s);
    static const char bytes[] = {0, (char)0xFF, 'x'};
    sl_value rows[4][7];
    memset(rows, 0, sizeof rows);
    /* row 0: ordinary values */
    rows[0][0].v.i = 1;
    rows[0][1].v.i = INT32_MIN;
    rows[0][2].v.i = INT64_MAX;
    rows[0][3].v.d = -2.5;
    rows[0][4].v.s.p = "héllo";
    rows[0][4].v.s.len = (uint32_t)strlen("héllo");
    rows[0][5].v.s.p = bytes;
    rows[0][5].v.s.len = 3;
    rows[0][6].v.i = -1; /* 1969-12-31T23:59:59.999 */
    /* row 1: all NULL */
    for (int i = 0; i < 7; i++) rows[1][i].isnull = true;
    /* row 2: empty strings, zeros, extremes */
    rows[2][0].v.i = 0;
    rows[2][1].v.i = INT32_MAX;
    rows[2][2].v.i = INT64_MIN;
    rows[2][3].v.d = INFINITY;
    rows[2][4].v.s.p = "";
    rows[2][5].v.s.p = NULL; /* empty BYTES with no pointer */
    rows[2][6].v.i = 1767225600020LL;
    /* row 3: alternating NULLs */
    for (int i = 0; i < 7; i++) rows[3][i] = rows[0][i];
    for (int i = 0; i < 7; i += 2) rows[3][i].isnull = true;

    for (int k = 0; k < 4; k++) {
        sl_row r = {(sl_rowkind)k, 7, rows[k], SL_TS_NONE};
        uint8_t buf[128];
        size_t n = sl_row_encode(&r, &s, buf, sizeof buf);
        CHECK(n > 0);
        sl_value got[7];
        sl_row out = {SL_KIND_INSERT, 0, got, 123};
        char err[200] = "";
        CHECK_EQ_INT(sl_row_decode(buf, n, &s, &out, err, sizeof err), SL_OK);
        CHECK_EQ_INT(out.kind, k);
        CHECK_EQ_INT(out.n, 7);
        CHECK_EQ_INT(out.ts, 123); /* decode leaves the timestamp alone */
        for (int i = 0; i < 7; i++) {
            CHECK_EQ_INT(got[i].isnull, rows[k][i].isnull);
            if (got[i].isnull) continue;
            switch (s.fields[i].type) {
            case SL_T_DOUBLE: CHECK(got[i].v.d == rows[k][i].v.d); break;
            case SL_T_STRING:
            case SL_T_BYTES:
                CHECK_EQ_INT(got[i].v.s.len, rows[k][i].v.s.len);
                CHECK(got[i].v.s.len == 0 ||
                      memcmp(got[i].v.s.p, rows[k][i].v.s.p, got[i].v.s.len) == 0);
                /* Decoded in place: points into the frame. */
                CHECK(got[i].v.s.p >= (const char *)buf && got[i].v.s.p <= (const char *)buf + n);
                break;
            default: CHECK_EQ_INT(got[i].v.i, rows[k][i].v.i); break;
            }
        }
    }
    sl_schema_free(&s);
}

static void test_decode_rejects_every_truncation(void)
{
    sl_schema s;
    all_types(&s);
    sl_value v[7] = {0};
    v[0].v.i = 1;
    v[1].v.i = 7;
    v[2].v.i = 8;
    v[3].v.d = 0.5;
    v[4].v.s.p = "abcdef";
    v[4].v.s.len = 6;
    v[5].v.s.p = "xy";
    v[5].v.s.len = 2;
    v[6].v.i = 9;
    sl_row r = {SL_KIND_INSERT, 7, v, SL_TS_NONE};
    uint8_t buf[128];
    size_t n = sl_row_encode(&r, &s, buf, sizeof buf);
    CHECK_EQ_INT(n, 1 + 1 + 1 + 4 + 8 + 8 + 10 + 6 + 8);
    for (size_t cut = 0; cut < n; cut++) {
        /* Copy into an exact-size heap block so ASan sees any overread. */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, buf, cut);
        sl_value got[7];
        sl_row out = {0, 0, got, 0};
        char err[200] = "";
        int rc = sl_row_decode(p, cut, &s, &out, err, sizeof err);
        free(p);
        CHECK_EQ_INT(rc, SL_ERR);
        CHECK(strstr(err, "damaged row") != NULL);
    }
    /* One byte too many is damage too. */
    buf[n] = 0;
    sl_value got[7];
    sl_row out = {0, 0, got, 0};
    char err[200] = "";
    CHECK_EQ_INT(sl_row_decode(buf, n + 1, &s, &out, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "unexpected bytes") != NULL);
    sl_schema_free(&s);
}

static void test_decode_rejects_garbage(void)
{
    sl_schema s;
    all_types(&s);
    sl_value got[7];
    sl_row out = {0, 0, got, 0};
    char err[200];

    /* Bad row kind. */
    uint8_t k[2] = {4, 0x7F};
    CHECK_EQ_INT(sl_row_decode(k, sizeof k, &s, &out, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "row kind") != NULL);
    /* Bitmap bit beyond the 7 fields. */
    uint8_t b[2] = {0, 0xFF};
    CHECK_EQ_INT(sl_row_decode(b, sizeof b, &s, &out, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "null bitmap") != NULL);
    /* BOOLEAN byte that is neither 0 nor 1. */
    uint8_t bo[3] = {0, 0x7E, 2};
    CHECK_EQ_INT(sl_row_decode(bo, sizeof bo, &s, &out, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "BOOLEAN") != NULL);
    /* STRING claiming 4 GB. */
    uint8_t st[] = {0, 0x6F, 0xFF, 0xFF, 0xFF, 0xFF, 'a'};
    CHECK_EQ_INT(sl_row_decode(st, sizeof st, &s, &out, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "field 4 's'") != NULL);
    /* NULL err buffer is allowed. */
    CHECK_EQ_INT(sl_row_decode(st, sizeof st, &s, &out, NULL, 0), SL_ERR);

    /* Pseudo-random garbage: must fail or succeed cleanly, never overread. */
    uint64_t x = 88172645463325252ULL;
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(round % 40);
        uint8_t *p = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            p[i] = (uint8_t)x;
        }
        if (len > 0) p[0] &= 3;           /* valid kind, to get further in */
        if (len > 1) p[1] |= 0x80;         /* and zero the spare bitmap bit */
        if (len > 1) p[1] ^= 0x80;
        int rc = sl_row_decode(p, len, &s, &out, err, sizeof err);
        CHECK(rc == SL_OK || rc == SL_ERR);
        free(p);
    }
    sl_schema_free(&s);
}

static void test_zero_field_schema(void)
{
    sl_schema s;
    sl_schema_init(&s);
    sl_row r = {SL_KIND_DELETE, 0, NULL, SL_TS_NONE};
    uint8_t buf[4];
    CHECK_EQ_INT(sl_row_encode(&r, &s, buf, sizeof buf), 1);
    CHECK_EQ_INT(buf[0], 3);
    sl_row out = {0, 5, NULL, 0};
    CHECK_EQ_INT(sl_row_decode(buf, 1, &s, &out, NULL, 0), SL_OK);
    CHECK_EQ_INT(out.kind, SL_KIND_DELETE);
    CHECK_EQ_INT(out.n, 0);
    CHECK_EQ_INT(sl_row_decode(buf, 0, &s, &out, NULL, 0), SL_ERR);
}

static void test_key_encode(void)
{
    sl_schema s;
    sl_schema_init(&s);
    sl_schema_add(&s, "a", SL_T_INT);
    sl_schema_add(&s, "b", SL_T_STRING);
    sl_schema_add(&s, "c", SL_T_DOUBLE);
    sl_value v[3] = {0};
    v[0].v.i = 5;
    v[1].v.s.p = "ab";
    v[1].v.s.len = 2;
    v[2].v.d = -0.0;
    sl_row r = {SL_KIND_INSERT, 3, v, SL_TS_NONE};
    uint8_t buf[64];
    int keys[] = {1, 0};
    static const uint8_t want[] = {1, 2, 0, 0, 0, 'a', 'b', 1, 5, 0, 0, 0};
    CHECK_EQ_INT(sl_row_key_encode(&r, &s, keys, 2, buf, sizeof buf), sizeof want);
    CHECK(memcmp(buf, want, sizeof want) == 0);
    CHECK_EQ_INT(sl_row_key_encode(&r, &s, keys, 2, buf, sizeof want - 1), 0);

    /* NULL key column: a single 0 marker. */
    v[0].isnull = true;
    int k0[] = {0};
    CHECK_EQ_INT(sl_row_key_encode(&r, &s, k0, 1, buf, sizeof buf), 1);
    CHECK_EQ_INT(buf[0], 0);

    /* -0.0 and 0.0 are one key; every NaN is one key. */
    int k2[] = {2};
    uint8_t a[16], b[16];
    CHECK_EQ_INT(sl_row_key_encode(&r, &s, k2, 1, a, sizeof a), 9);
    v[2].v.d = 0.0;
    CHECK_EQ_INT(sl_row_key_encode(&r, &s, k2, 1, b, sizeof b), 9);
    CHECK(memcmp(a, b, 9) == 0);
    v[2].v.d = NAN;
    sl_row_key_encode(&r, &s, k2, 1, a, sizeof a);
    v[2].v.d = -NAN;
    sl_row_key_encode(&r, &s, k2, 1, b, sizeof b);
    CHECK(memcmp(a, b, 9) == 0);

    /* ("a","bc") and ("ab","c") must differ: lengths keep columns apart. */
    sl_schema s2;
    sl_schema_init(&s2);
    sl_schema_add(&s2, "x", SL_T_STRING);
    sl_schema_add(&s2, "y", SL_T_STRING);
    sl_value w[2] = {0};
    sl_row r2 = {SL_KIND_INSERT, 2, w, SL_TS_NONE};
    int k01[] = {0, 1};
    w[0].v.s.p = "a"; w[0].v.s.len = 1; w[1].v.s.p = "bc"; w[1].v.s.len = 2;
    size_t na = sl_row_key_encode(&r2, &s2, k01, 2, a, sizeof a);
    w[0].v.s.p = "ab"; w[0].v.s.len = 2; w[1].v.s.p = "c"; w[1].v.s.len = 1;
    size_t nb = sl_row_key_encode(&r2, &s2, k01, 2, b, sizeof b);
    CHECK_EQ_INT(na, nb);
    CHECK(memcmp(a, b, na) != 0);
    sl_schema_free(&s2);
    sl_schema_free(&s);
}

static const char *fmt_d(double d, char *buf, size_t cap)
{
    sl_value v = {0};
    v.v.d = d;
    sl_value_format(buf, cap, &v, SL_T_DOUBLE);
    return buf;
}

static void test_format_double(void)
{
    char b[64];
    /* What Java's Double.toString prints. */
    CHECK_EQ_STR(fmt_d(2.5, b, sizeof b), "2.5");
    CHECK_EQ_STR(fmt_d(3.0, b, sizeof b), "3.0");
    CHECK_EQ_STR(fmt_d(0.1, b, sizeof b), "0.1");
    CHECK_EQ_STR(fmt_d(-0.1, b, sizeof b), "-0.1");
    CHECK_EQ_STR(fmt_d(0.1 + 0.2, b, sizeof b), "0.30000000000000004");
    CHECK_EQ_STR(fmt_d(100.0, b, sizeof b), "100.0");
    CHECK_EQ_STR(fmt_d(123.456, b, sizeof b), "123.456");
    CHECK_EQ_STR(fmt_d(0.001, b, sizeof b), "0.001");
    CHECK_EQ_STR(fmt_d(0.0001, b, sizeof b), "1.0E-4");
    CHECK_EQ_STR(fmt_d(1234567.0, b, sizeof b), "1234567.0");
    CHECK_EQ_STR(fmt_d(9999999.0, b, sizeof b), "9999999.0");
    CHECK_EQ_STR(fmt_d(1e7, b, sizeof b), "1.0E7");
    CHECK_EQ_STR(fmt_d(12345678.0, b, sizeof b), "1.2345678E7");
    CHECK_EQ_STR(fmt_d(1.5e300, b, sizeof b), "1.5E300");
    CHECK_EQ_STR(fmt_d(-2.5e-10, b, sizeof b), "-2.5E-10");
    CHECK_EQ_STR(fmt_d(0.0, b, sizeof b), "0.0");
    CHECK_EQ_STR(fmt_d(-0.0, b, sizeof b), "-0.0");
    CHECK_EQ_STR(fmt_d(NAN, b, sizeof b), "NaN");
    CHECK_EQ_STR(fmt_d(INFINITY, b, sizeof b), "Infinity");
    CHECK_EQ_STR(fmt_d(-INFINITY, b, sizeof b), "-Infinity");
    CHECK_EQ_STR(fmt_d(1.0 / 3.0, b, sizeof b), "0.3333333333333333");
    CHECK_EQ_STR(fmt_d(2.0 / 3.0, b, sizeof b), "0.6666666666666666");
    CHECK_EQ_STR(fmt_d(1.7976931348623157e308, b, sizeof b), "1.7976931348623157E308");
    CHECK_EQ_STR(fmt_d(4.9e-324, b, sizeof b), "4.9E-324");
}

static void test_format_values(void)
{
    char b[64];
    sl_value v = {0};
    v.v.i = 1;
    sl_value_format(b, sizeof b, &v, SL_T_BOOLEAN);
    CHECK_EQ_STR(b, "true");
    v.v.i = 0;
    sl_value_format(b, sizeof b, &v, SL_T_BOOLEAN);
    CHECK_EQ_STR(b, "false");
    v.v.i = -42;
    sl_value_format(b, sizeof b, &v, SL_T_INT);
    CHECK_EQ_STR(b, "-42");
    v.v.i = INT64_MIN;
    sl_value_format(b, sizeof b, &v, SL_T_BIGINT);
    CHECK_EQ_STR(b, "-9223372036854775808");
    v.isnull = true;
    CHECK_EQ_INT(sl_value_format(b, sizeof b, &v, SL_T_STRING), 4);
    CHECK_EQ_STR(b, "null");
    v.isnull = false;
    v.v.s.p = "abc, def";
    v.v.s.len = 3;
    sl_value_format(b, sizeof b, &v, SL_T_STRING);
    CHECK_EQ_STR(b, "abc");
    v.v.s.p = "";
    v.v.s.len = 0;
    CHECK_EQ_INT(sl_value_format(b, sizeof b, &v, SL_T_STRING), 0);
    CHECK_EQ_STR(b, "");
    static const char by[] = {104, (char)0xFF, 0};
    v.v.s.p = by;
    v.v.s.len = 3;
    sl_value_format(b, sizeof b, &v, SL_T_BYTES);
    CHECK_EQ_STR(b, "[104, -1, 0]");

    /* Truncation: snprintf-like return, always terminated. */
    v.v.s.p = "abcdef";
    v.v.s.len = 6;
    CHECK_EQ_INT(sl_value_format(b, 4, &v, SL_T_STRING), 6);
    CHECK_EQ_STR(b, "abc");
    v.v.d = 123.456;
    CHECK_EQ_INT(sl_value_format(b, 3, &v, SL_T_DOUBLE), 7);
    CHECK_EQ_STR(b, "12");
    CHECK_EQ_INT(sl_value_format(NULL, 0, &v, SL_T_DOUBLE), 7);
}

static void test_format_timestamp(void)
{
    char b[64];
    sl_value v = {0};
    /* 2026-01-01T00:00:00Z = 1767225600 s. */
    v.v.i = 1767225600000LL + 20;
    sl_value_format(b, sizeof b, &v, SL_T_TIMESTAMP);
    CHECK_EQ_STR(b, "2026-01-01T00:00:00.020");
    /* LocalDateTime.toString leaves out zero seconds and millis. */
    v.v.i = 1767225600000LL;
    sl_value_format(b, sizeof b, &v, SL_T_TIMESTAMP);
    CHECK_EQ_STR(b, "2026-01-01T00:00");
    v.v.i = 1767225600000LL + 10000;
    sl_value_format(b, sizeof b, &v, SL_T_TIMESTAMP);
    CHECK_EQ_STR(b, "2026-01-01T00:00:10");
    /* 2026-08-19T15:00:10 = 1787151610 s (day 20684 since the epoch). */
    v.v.i = 1787151610000LL;
    sl_value_format(b, sizeof b, &v, SL_T_TIMESTAMP);
    CHECK_EQ_STR(b, "2026-08-19T15:00:10");
    /* Leap day and before the epoch. */
    v.v.i = 951782400000LL + 123; /* 2000-02-29 */
    sl_value_format(b, sizeof b, &v, SL_T_TIMESTAMP);
    CHECK_EQ_STR(b, "2000-02-29T00:00:00.123");
    v.v.i = -1;
    sl_value_format(b, sizeof b, &v, SL_T_TIMESTAMP);
    CHECK_EQ_STR(b, "1969-12-31T23:59:59.999");

    CHECK_EQ_INT(sl_ts_format(b, sizeof b, 1767225600000LL), 23);
    CHECK_EQ_STR(b, "2026-01-01T00:00:00.000");
    sl_ts_format(b, sizeof b, 0);
    CHECK_EQ_STR(b, "1970-01-01T00:00:00.000");
    sl_ts_format(b, sizeof b, 253402300799999LL);
    CHECK_EQ_STR(b, "9999-12-31T23:59:59.999");
    sl_ts_format(b, sizeof b, -62135596800000LL); /* 0001-01-01 */
    CHECK_EQ_STR(b, "0001-01-01T00:00:00.000");
}

static void test_arena(void)
{
    sl_arena a;
    sl_arena_init(&a, 64);
    CHECK(a.buf == NULL); /* lazy */
    char *p = sl_arena_alloc(&a, 10);
    CHECK(p != NULL);
    memset(p, 'x', 10);
    char *q = sl_arena_alloc(&a, 20);
    CHECK(q != NULL);
    CHECK_EQ_INT((uintptr_t)q % 8, 0);
    CHECK(q >= p + 10);
    CHECK(sl_arena_alloc(&a, 64) == NULL); /* full: NULL, never moves */
    CHECK(p[9] == 'x');
    char *base = a.buf;
    sl_arena_reset(&a);
    CHECK(sl_arena_alloc(&a, 64) == base);
    CHECK(sl_arena_alloc(&a, 1) == NULL);
    sl_arena_reset(&a);
    CHECK(sl_arena_alloc(&a, 65) == NULL);
    CHECK(a.buf == base);
    sl_arena_free(&a);
    sl_arena_free(&a);

    sl_arena z;
    sl_arena_init(&z, 0);
    CHECK(sl_arena_alloc(&z, 1) == NULL);
    sl_arena_free(&z);
}

SL_TEST_MAIN(SL_TEST(test_type_parse), SL_TEST(test_schema), SL_TEST(test_encode_exact_bytes),
             SL_TEST(test_roundtrip_every_type), SL_TEST(test_decode_rejects_every_truncation),
             SL_TEST(test_decode_rejects_garbage), SL_TEST(test_zero_field_schema),
             SL_TEST(test_key_encode), SL_TEST(test_format_double),
             SL_TEST(test_format_values), SL_TEST(test_format_timestamp), SL_TEST(test_arena))
