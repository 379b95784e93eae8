/*
 * test_jdbc.c -- the jdbc connector's binary values (operators/jdbc_common.c)
 * against PostgreSQL's documented wire forms: numeric (ndigits, weight,
 * sign, dscale, base-10000 digits), date (days from 2000-01-01), time and
 * timestamp (microseconds), one-dimensional arrays; values round-tripped
 * through encode and decode; and malformed bytes refused with a reason,
 * never read past their end (the server is input from outside).
 */
#include <stdint.h>
#include <string.h>

#include "decimal.h"
#include "jdbc_common.h"
#include "sl_test.h"

static const sl_dtype *dt_of(const char *text)
{
    const sl_dtype *dt = NULL;
    char err[128];
    if (sl_dtype_parse(text, &dt, err, sizeof err) != SL_OK) return NULL;
    return dt;
}

static sl_value dec_val(const char *text, const sl_dtype *dt)
{
    sl_value v = {0};
    sl_dec d = {0, 0};
    sl_dec_type t = {(uint8_t)dt->p, (uint8_t)dt->s};
    sl_dec_parse(text, strlen(text), t, &d);
    v.v.dec.lo = d.lo;
    v.v.dec.hi = d.hi;
    return v;
}

/* big-endian 16-bit words into bytes */
static size_t words(uint8_t *out, const int *w, int n)
{
    for (int i = 0; i < n; i++) {
        out[2 * i] = (uint8_t)((unsigned)w[i] >> 8);
        out[2 * i + 1] = (uint8_t)w[i];
    }
    return (size_t)n * 2;
}

static void test_numeric_wire_form(void)
{
    const sl_dtype *dt = dt_of("DECIMAL(12, 3)");
    CHECK(dt != NULL);
    static const struct {
        const char *text;
        int w[12], n;
    } cases[] = {
        /* ndigits, weight, sign, dscale, digits */
        {"12345.678", {3, 1, 0, 3, 1, 2345, 6780}, 7},
        {"-0.001", {1, -1, 0x4000, 3, 10}, 5},
        {"0.000", {0, 0, 0, 3}, 4},
        {"10000.000", {1, 1, 0, 3, 1}, 5},
        {"999999999.999", {4, 2, 0, 3, 9, 9999, 9999, 9990}, 8},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        sl_value v = dec_val(cases[i].text, dt);
        sl_buf b = {0};
        sl_jdbc_encode(&b, &v, dt);
        uint8_t want[32];
        size_t wl = words(want, cases[i].w, cases[i].n);
        CHECK_EQ_INT(b.len, wl);
        CHECK(memcmp(b.p, want, wl) == 0);
        sl_value back = {0};
        char why[128];
        CHECK_EQ_INT(sl_jdbc_decode(b.p, (int)b.len, 1700, dt, &back, NULL, why, sizeof why),
                     SL_OK);
        CHECK(!back.isnull && back.v.dec.lo == v.v.dec.lo && back.v.dec.hi == v.v.dec.hi);
        sl_buf_free(&b);
    }
}

static void test_numeric_reads_round_and_overflow(void)
{
    const sl_dtype *dt = dt_of("DECIMAL(5, 2)");
    char why[128], text[64];
    uint8_t in[32];
    /* 123.455 (dscale 3): HALF_UP to 123.46 */
    int a[] = {3, 0, 0, 3, 123, 4550, 0};
    size_t n = words(in, a, 7);
    sl_value v = {0};
    CHECK_EQ_INT(sl_jdbc_decode((const char *)in, (int)n, 1700, dt, &v, NULL, why, sizeof why),
                 SL_OK);
    sl_dec d = {v.v.dec.lo, v.v.dec.hi};
    sl_dec_format(text, sizeof text, d, 2);
    CHECK_EQ_STR(text, "123.46");
    /* 1e40 (weight 10): more digits than any DECIMAL: NULL */
    int big[] = {1, 10, 0, 0, 1};
    n = words(in, big, 5);
    CHECK_EQ_INT(sl_jdbc_decode((const char *)in, (int)n, 1700, dt, &v, NULL, why, sizeof why),
                 SL_OK);
    CHECK(v.isnull);
    /* 1000.00 into DECIMAL(5, 2): NULL */
    int k[] = {1, 0, 0, 2, 1000};
    n = words(in, k, 5);
    CHECK_EQ_INT(sl_jdbc_decode((const char *)in, (int)n, 1700, dt, &v, NULL, why, sizeof why),
                 SL_OK);
    CHECK(v.isnull);
    /* NaN fails with the reason */
    int nan[] = {0, 0, 0xC000, 0};
    n = words(in, nan, 4);
    CHECK_EQ_INT(sl_jdbc_decode((const char *)in, (int)n, 1700, dt, &v, NULL, why, sizeof why),
                 SL_ERR);
    CHECK_EQ_STR(why, "NaN does not read as DECIMAL(5, 2)");
    /* fewer digit bytes than ndigits says */
    int cut[] = {3, 0, 0, 3, 123};
    n = words(in, cut, 5);
    CHECK_EQ_INT(sl_jdbc_decode((const char *)in, (int)n, 1700, dt, &v, NULL, why, sizeof why),
                 SL_ERR);
    CHECK_EQ_STR(why, "a malformed numeric");
}

static void test_time_values(void)
{
    char why[128];
    sl_buf b = {0};
    /* DATE 1969-12-31 is day -1: -10958 from 2000-01-01 */
    sl_value v = {.v.i = -1};
    sl_jdbc_encode(&b, &v, dt_of("DATE"));
    CHECK_EQ_INT(b.len, 4);
    CHECK_EQ_INT((int32_t)(((uint32_t)(uint8_t)b.p[0] << 24) | ((uint32_t)(uint8_t)b.p[1] << 16) |
                           ((uint32_t)(uint8_t)b.p[2] << 8) | (uint8_t)b.p[3]), -10958);
    /* TIMESTAMP(6) keeps microseconds; nanoseconds round HALF_UP */
    const sl_dtype *ts = dt_of("TIMESTAMP(9)");
    sl_value t = {0};
    t.v.ts.ms = -1; /* 1969-12-31 23:59:59.999 */
    t.v.ts.nano = 999500;
    sl_buf_reset(&b);
    sl_jdbc_encode(&b, &t, ts);
    sl_value back = {0};
    CHECK_EQ_INT(sl_jdbc_decode(b.p, (int)b.len, 1114, ts, &back, NULL, why, sizeof why), SL_OK);
    CHECK_EQ_INT(back.v.ts.ms, 0); /* -1 ms + 999.5 us rounds to 0 us */
    CHECK_EQ_INT(back.v.ts.nano, 0);
    t.v.ts.nano = 123456;
    sl_buf_reset(&b);
    sl_jdbc_encode(&b, &t, ts);
    CHECK_EQ_INT(sl_jdbc_decode(b.p, (int)b.len, 1114, ts, &back, NULL, why, sizeof why), SL_OK);
    CHECK_EQ_INT(back.v.ts.ms, -1);
    CHECK_EQ_INT(back.v.ts.nano, 123000);
    /* infinity */
    memset(b.p, 0x7f, 1);
    memset(b.p + 1, 0xff, 7);
    CHECK_EQ_INT(sl_jdbc_decode(b.p, 8, 1114, ts, &back, NULL, why, sizeof why), SL_ERR);
    CHECK_EQ_STR(why, "an infinite timestamp does not read as TIMESTAMP(9)");
    sl_buf_free(&b);
}

static void test_arrays(void)
{
    const sl_dtype *dt = dt_of("ARRAY<DECIMAL(10, 2)>");
    sl_jdbc_scratch sc;
    sl_jdbc_scratch_init(&sc);
    sl_arena a;
    sl_arena_init(&a, 1 << 20);
    sl_value el[3] = {dec_val("1.25", dt->elem), {.isnull = true}, dec_val("-0.01", dt->elem)};
    sl_value arr = {0};
    CHECK_EQ_INT(sl_nested_build(dt, el, 3, NULL, &a, &arr), SL_OK);
    sl_buf b = {0};
    sl_jdbc_encode(&b, &arr, dt);
    char why[128];
    sl_value back = {0};
    CHECK_EQ_INT(sl_jdbc_decode(b.p, (int)b.len, 1231, dt, &back, &sc, why, sizeof why), SL_OK);
    CHECK_EQ_INT(back.v.s.len, arr.v.s.len);
    CHECK(memcmp(back.v.s.p, arr.v.s.p, arr.v.s.len) == 0);
    /* a count beyond the bytes, a wrong element type, two dimensions: refused */
    char bad[64];
    memcpy(bad, b.p, b.len);
    bad[12] = 0x7f;
    CHECK_EQ_INT(sl_jdbc_decode(bad, (int)b.len, 1231, dt, &back, &sc, why, sizeof why), SL_ERR);
    CHECK_EQ_STR(why, "a malformed array");
    memcpy(bad, b.p, b.len);
    bad[11] = 23; /* int4 elements in a numeric[] */
    CHECK_EQ_INT(sl_jdbc_decode(bad, (int)b.len, 1231, dt, &back, &sc, why, sizeof why), SL_ERR);
    memcpy(bad, b.p, b.len);
    bad[3] = 2;
    CHECK_EQ_INT(sl_jdbc_decode(bad, (int)b.len, 1231, dt, &back, &sc, why, sizeof why), SL_ERR);
    CHECK_EQ_STR(why, "a 2-dimensional array does not read as ARRAY<DECIMAL(10, 2)>");
    /* every truncation of the value is refused, never read past */
    for (size_t cut = 0; cut < b.len; cut++) {
        char *p = sl_malloc(cut ? cut : 1);
        memcpy(p, b.p, cut);
        CHECK_EQ_INT(sl_jdbc_decode(p, (int)cut, 1231, dt, &back, &sc, why, sizeof why), SL_ERR);
        free(p);
    }
    /* the empty array: no dimensions */
    sl_value empty = {0};
    CHECK_EQ_INT(sl_nested_build(dt, NULL, 0, NULL, &a, &empty), SL_OK);
    sl_buf_reset(&b);
    sl_jdbc_encode(&b, &empty, dt);
    CHECK_EQ_INT(b.len, 12);
    CHECK_EQ_INT(sl_jdbc_decode(b.p, (int)b.len, 1231, dt, &back, &sc, why, sizeof why), SL_OK);
    sl_nested_reader r;
    CHECK_EQ_INT(sl_nested_open(&r, dt, &back), 0);
    sl_buf_free(&b);
    sl_arena_free(&a);
    sl_jdbc_scratch_free(&sc);
}

static void test_types_carried(void)
{
    static const char *const yes[] = {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT",
                                      "FLOAT", "DOUBLE", "DECIMAL(38, 18)", "CHAR(3)",
                                      "VARCHAR(10)", "BYTES", "DATE", "TIME(6)",
                                      "TIMESTAMP(9)", "TIMESTAMP_LTZ(3)", "ARRAY<DATE>"};
    static const char *const no[] = {"MAP<STRING, INT>", "ARRAY<ARRAY<INT>>", "ROW<a INT>",
                                     "INTERVAL DAY TO SECOND(3)", "MULTISET<INT>"};
    for (size_t i = 0; i < SL_ARRAY_LEN(yes); i++) CHECK(sl_jdbc_carries(dt_of(yes[i])));
    for (size_t i = 0; i < SL_ARRAY_LEN(no); i++) CHECK(!sl_jdbc_carries(dt_of(no[i])));
    CHECK_EQ_INT(sl_jdbc_param_type(dt_of("ARRAY<VARCHAR(5)>")), 1009); /* text[] */
    CHECK(sl_jdbc_result_maps(1015, dt_of("ARRAY<STRING>")));          /* varchar[] */
    CHECK(!sl_jdbc_result_maps(1007, dt_of("ARRAY<SMALLINT>")));       /* int4[] */
}

SL_TEST_MAIN(SL_TEST(test_numeric_wire_form), SL_TEST(test_numeric_reads_round_and_overflow),
             SL_TEST(test_time_values), SL_TEST(test_arrays), SL_TEST(test_types_carried))
