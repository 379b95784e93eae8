/*
 * test_format.c -- unit tests for the row encoders (operators/format_json.c,
 * operators/format_csv.c) and their round trip through the one decoder
 * (kf_decode): each type's exact text written out by hand, NULLs,
 * NaN/Infinity, RFC 4180 quoting, the SQL client's rows, and bad input
 * refused with a reason that names the field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_csv.h"
#include "format_json.h"
#include "kafka_common.h"
#include "sl_test.h"

typedef struct fix {
    sl_schema s;
    kf_codec c;
    sl_value in[7], out[7];
    sl_row row;
    kf_buf enc, str;
    char why[300];
} fix;

/* id BIGINT, name STRING, ok BOOLEAN, x DOUBLE, ts TIMESTAMP, n INT, b BYTES */
static void fix_init(fix *f, kf_format fmt)
{
    memset(f, 0, sizeof *f);
    sl_schema_init(&f->s);
    sl_schema_add(&f->s, "id", SL_T_BIGINT);
    sl_schema_add(&f->s, "name", SL_T_STRING);
    sl_schema_add(&f->s, "ok", SL_T_BOOLEAN);
    sl_schema_add(&f->s, "x", SL_T_DOUBLE);
    sl_schema_add(&f->s, "ts", SL_T_TIMESTAMP);
    sl_schema_add(&f->s, "n", SL_T_INT);
    sl_schema_add(&f->s, "b", SL_T_BYTES);
    int cols[7] = {0, 1, 2, 3, 4, 5, 6};
    char err[200];
    if (kf_codec_init(&f->c, fmt, &f->s, cols, 7, "v", err, sizeof err) != SL_OK) abort();
    f->row = (sl_row){SL_KIND_INSERT, 7, f->in, 0};
}

static void fix_free(fix *f)
{
    kf_codec_free(&f->c);
    kf_buf_free(&f->enc);
    kf_buf_free(&f->str);
    sl_schema_free(&f->s);
}

/* 7, "a,\"b\"", true, 1.5, 2024-02-29 12:34:56.020, -3, bytes 00 ff 41 */
static void fill(fix *f)
{
    f->in[0] = (sl_value){.v.i = 7};
    f->in[1] = (sl_value){.v.s = {"a,\"b\"", 5}};
    f->in[2] = (sl_value){.v.i = 1};
    f->in[3] = (sl_value){.v.d = 1.5};
    f->in[4] = (sl_value){.v.i = 1709210096020LL};
    f->in[5] = (sl_value){.v.i = -3};
    f->in[6] = (sl_value){.v.s = {"\x00\xff" "A", 3}};
}

static const char *encoded(fix *f, bool json)
{
    f->enc.len = 0;
    if (json) sl_fmt_json_fields(&f->enc, &f->c, &f->row, NULL, 0);
    else sl_fmt_csv_fields(&f->enc, &f->c, &f->row);
    kf_buf_reserve(&f->enc, 1);
    f->enc.p[f->enc.len] = '\0';
    return f->enc.p;
}

/* decode `text` (an object's members, braces added, or a csv record) */
static int decode(fix *f, const char *text, bool json)
{
    char rec[1024];
    snprintf(rec, sizeof rec, json ? "{%s}" : "%s", text);
    return kf_decode(&f->c, rec, strlen(rec), f->out, &f->str, f->why, sizeof f->why);
}

static void check_same(fix *f)
{
    for (int i = 0; i < 7; i++) {
        const sl_value *a = &f->in[i], *b = &f->out[i];
        CHECK_EQ_INT(a->isnull, b->isnull);
        if (a->isnull) continue;
        sl_type t = f->s.fields[i].type;
        if (t == SL_T_STRING || t == SL_T_BYTES)
            CHECK(a->v.s.len == b->v.s.len && !memcmp(a->v.s.p, b->v.s.p, a->v.s.len));
        else if (t == SL_T_DOUBLE)
            CHECK(a->v.d == b->v.d || (isnan(a->v.d) && isnan(b->v.d)));
        else
            CHECK(a->v.i == b->v.i);
    }
}

static void test_json_values(void)
{
    fix f;
    fix_init(&f, KF_JSON);
    fill(&f);
    CHECK_EQ_STR(encoded(&f, true), "\"id\":7,\"name\":\"a,\\\"b\\\"\",\"ok\":true,\"x\":1.5,"
                                    "\"ts\":\"2024-02-29 12:34:56.02\",\"n\":-3,\"b\":\"AP9B\"");
    CHECK_EQ_INT(decode(&f, f.enc.p, true), SL_OK);
    check_same(&f);
    /* NULLs, non-finite doubles, a negative epoch, escapes */
    for (int i = 0; i < 7; i++) f.in[i].isnull = true;
    CHECK_EQ_STR(encoded(&f, true), "\"id\":null,\"name\":null,\"ok\":null,\"x\":null,"
                                    "\"ts\":null,\"n\":null,\"b\":null");
    CHECK_EQ_INT(decode(&f, f.enc.p, true), SL_OK);
    check_same(&f);
    fill(&f);
    f.in[1] = (sl_value){.v.s = {"t\tn\n\\ \x01", 7}};
    f.in[3].v.d = NAN;
    f.in[4].v.i = -1;
    f.in[6].v.s.len = 0;
    CHECK_EQ_STR(encoded(&f, true), "\"id\":7,\"name\":\"t\\tn\\n\\\\ \\u0001\",\"ok\":true,"
                                    "\"x\":\"NaN\",\"ts\":\"1969-12-31 23:59:59.999\",\"n\":-3,"
                                    "\"b\":\"\"");
    CHECK_EQ_INT(decode(&f, f.enc.p, true), SL_OK);
    check_same(&f);
    f.in[3].v.d = INFINITY;
    CHECK(strstr(encoded(&f, true), "\"x\":\"Infinity\""));
    CHECK_EQ_INT(decode(&f, f.enc.p, true), SL_OK);
    check_same(&f);
    f.in[3].v.d = -INFINITY;
    CHECK(strstr(encoded(&f, true), "\"x\":\"-Infinity\""));
    CHECK_EQ_INT(decode(&f, f.enc.p, true), SL_OK);
    check_same(&f);
    /* one value alone */
    f.enc.len = 0;
    sl_value d = {.v.d = 100.0};
    sl_fmt_json_value(&f.enc, &d, SL_T_DOUBLE);
    CHECK(f.enc.len == 5 && !memcmp(f.enc.p, "100.0", 5));
    fix_free(&f);
}

static void test_json_refused(void)
{
    fix f;
    fix_init(&f, KF_JSON);
    CHECK_EQ_INT(decode(&f, "\"id\":\"x7\"", true), SL_ERR);
    CHECK_EQ_STR(f.why, "field 'id': 'x7' is not a BIGINT");
    CHECK_EQ_INT(decode(&f, "\"n\":4294967296", true), SL_ERR);
    CHECK_EQ_STR(f.why, "field 'n': 4294967296 does not fit an INT");
    CHECK_EQ_INT(decode(&f, "\"b\":\"!!\"", true), SL_ERR);
    CHECK_EQ_STR(f.why, "field 'b': '!!' is not base64");
    CHECK_EQ_INT(decode(&f, "\"ts\":\"yesterday\"", true), SL_ERR);
    CHECK(strstr(f.why, "field 'ts': 'yesterday' is not a TIMESTAMP") == f.why);
    CHECK_EQ_INT(decode(&f, "\"ok\":[1]", true), SL_ERR);
    CHECK_EQ_STR(f.why, "field 'ok': a JSON array for a BOOLEAN column");
    fix_free(&f);
}

static void test_csv_values(void)
{
    fix f;
    fix_init(&f, KF_CSV);
    fill(&f);
    CHECK_EQ_STR(encoded(&f, false), "7,\"a,\"\"b\"\"\",true,1.5,2024-02-29 12:34:56.02,-3,AP9B");
    CHECK_EQ_INT(decode(&f, f.enc.p, false), SL_OK);
    check_same(&f);
    /* NULL is an empty field, an empty string "" */
    for (int i = 0; i < 7; i++) f.in[i].isnull = true;
    f.in[1] = (sl_value){.v.s = {"", 0}};
    CHECK_EQ_STR(encoded(&f, false), ",\"\",,,,,");
    CHECK_EQ_INT(decode(&f, f.enc.p, false), SL_OK);
    check_same(&f);
    /* CR and LF force quotes; a plain string goes bare */
    fill(&f);
    f.in[1] = (sl_value){.v.s = {"l1\r\nl2", 6}};
    f.in[3].v.d = NAN;
    CHECK_EQ_STR(encoded(&f, false), "7,\"l1\r\nl2\",true,NaN,2024-02-29 12:34:56.02,-3,AP9B");
    CHECK_EQ_INT(decode(&f, f.enc.p, false), SL_OK);
    check_same(&f);
    f.in[1] = (sl_value){.v.s = {"plain", 5}};
    f.in[3].v.d = -INFINITY;
    CHECK_EQ_STR(encoded(&f, false), "7,plain,true,-Infinity,2024-02-29 12:34:56.02,-3,AP9B");
    CHECK_EQ_INT(decode(&f, f.enc.p, false), SL_OK);
    check_same(&f);
    fix_free(&f);
}

static void test_csv_refused(void)
{
    fix f;
    fix_init(&f, KF_CSV);
    CHECK_EQ_INT(decode(&f, "7,a,maybe,1,,,", false), SL_ERR);
    CHECK_EQ_STR(f.why, "field 3 ('ok'): 'maybe' is not a BOOLEAN");
    CHECK_EQ_INT(decode(&f, "7,\"a\"x,true,1,,,", false), SL_ERR);
    CHECK_EQ_STR(f.why, "field 2: text after the closing quote");
    CHECK_EQ_INT(decode(&f, "7,a", false), SL_ERR);
    CHECK_EQ_STR(f.why, "2 fields, but the format has 7 columns");
    fix_free(&f);
}

static void test_client_row(void)
{
    fix f;
    fix_init(&f, KF_JSON);
    fill(&f);
    f.row.kind = SL_KIND_UPDATE_BEFORE;
    f.in[5].isnull = true;
    f.enc.len = 0;
    sl_fmt_json_client_row(&f.enc, &f.row, NULL, &f.s);
    kf_buf_reserve(&f.enc, 1);
    f.enc.p[f.enc.len] = '\0';
    /* BYTES go as their characters, escaped (the client shows them) */
    CHECK_EQ_STR(f.enc.p, "[\"-U\",\"7\",\"a,\\\"b\\\"\",\"true\",\"1.5\","
                          "\"2024-02-29 12:34:56.020\",null,\"\\u0000\xff" "A\"]");
    fix_free(&f);
}

SL_TEST_MAIN(SL_TEST(test_json_values), SL_TEST(test_json_refused), SL_TEST(test_csv_values),
             SL_TEST(test_csv_refused), SL_TEST(test_client_row))
