/*
 * test_format_avro.c -- the avro format (operators/format_avro.c): the
 * schema derived from a table, the bytes of a record written out by hand
 * from the Avro specification, decoding them back, and bad input: every
 * prefix of a valid record, bytes after it and random bytes decode to an
 * error or a row, never a crash or a read out of bounds (ASan build).
 */
#include "sl_test.h"
#include "bytes.h"
#include "format_avro.h"
#include "kafka_common.h"

typedef struct afix {
    sl_schema s;
    kf_codec c;
    sl_vertex v;
    sl_avro *a;
    sl_value vals[8];
    sl_buf str, out;
    char why[300];
} afix;

/* id BIGINT NOT NULL (through not-null-fields), name STRING, amt
 * DECIMAL(5, 2), d DATE, ts TIMESTAMP(6), tags ARRAY<INT NOT NULL> */
static void afix_init(afix *f, const char *config)
{
    memset(f, 0, sizeof *f);
    sl_schema_init(&f->s);
    char err[300];
    if (sl_schema_parse("id BIGINT, name STRING, amt DECIMAL(5, 2), d DATE, ts TIMESTAMP(6), "
                        "tags ARRAY<INT NOT NULL>", &f->s, err, sizeof err) != SL_OK)
        abort();
    int cols[6] = {0, 1, 2, 3, 4, 5};
    f->v.id = "v";
    f->v.config = sl_test_config(config);
    if (kf_codec_init(&f->c, KF_AVRO, &f->s, cols, 6, "v", err, sizeof err) != SL_OK ||
        sl_avro_fmt_plan(&f->c, &f->v, false, "t", err, sizeof err) != SL_OK) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    f->a = sl_avro_new(&f->c);
}

static void afix_free(afix *f)
{
    sl_avro_destroy(f->a);
    kf_codec_free(&f->c);
    json_decref(f->v.config);
    sl_buf_free(&f->str);
    sl_buf_free(&f->out);
    sl_schema_free(&f->s);
}

static void test_schema(void)
{
    afix f;
    afix_init(&f, "{\"not-null-fields\": \"id\"}");
    CHECK_EQ_STR(sl_avro_fmt_schema(f.c.avro),
                 "{\"type\":\"record\",\"name\":\"record\",\"namespace\":"
                 "\"org.apache.flink.avro.generated\",\"fields\":["
                 "{\"name\":\"id\",\"type\":\"long\"},"
                 "{\"name\":\"name\",\"type\":[\"null\",\"string\"],\"default\":null},"
                 "{\"name\":\"amt\",\"type\":[\"null\",{\"type\":\"bytes\",\"logicalType\":"
                 "\"decimal\",\"precision\":5,\"scale\":2}],\"default\":null},"
                 "{\"name\":\"d\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"date\"}],"
                 "\"default\":null},"
                 "{\"name\":\"ts\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":"
                 "\"timestamp-micros\"}],\"default\":null},"
                 "{\"name\":\"tags\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\"}],"
                 "\"default\":null}]}");
    afix_free(&f);
}

/* id 1, name "ab", amt -1.00 (-100: the one byte 0x9c), d NULL, ts 1970-01-01 00:00:00.000001, tags [3, -1] */
static const uint8_t REC[] = {0x02, 0x02, 0x04, 'a', 'b', 0x02, 0x02, 0x9c, 0x00, 0x02,
                              0x02, 0x02, 0x04, 0x06, 0x01, 0x00};

static void test_encode_and_decode(void)
{
    afix f;
    afix_init(&f, "{\"not-null-fields\": \"id\"}");
    sl_value v[6] = {{.v.i = 1}, {.v.s = {"ab", 2}}, {.v.dec = {(uint64_t)-100, -1}},
                     {.isnull = true}, {.v.ts = {0, 1000}}, {0}};
    /* the array [3, -1] in the row's canonical form: count, bitmap, elements */
    uint8_t arr[4 + 1 + 8];
    sl_put_le32(arr, 2);
    arr[4] = 0;
    sl_put_le32(arr + 5, 3);
    sl_put_le32(arr + 9, (uint32_t)-1);
    v[5].v.s.p = (const char *)arr;
    v[5].v.s.len = sizeof arr;
    sl_row row = {SL_KIND_INSERT, 6, v, SL_TS_NONE};
    CHECK_EQ_INT(sl_avro_encode(f.a, &row, &f.out, f.why, sizeof f.why), SL_OK);
    CHECK_EQ_INT((int)f.out.len, (int)sizeof REC);
    CHECK(f.out.len == sizeof REC && !memcmp(f.out.p, REC, sizeof REC));

    CHECK_EQ_INT(sl_avro_decode(f.a, (const char *)REC, sizeof REC, f.vals, &f.str, f.why,
                                sizeof f.why), SL_OK);
    CHECK(!f.vals[0].isnull && f.vals[0].v.i == 1);
    CHECK(f.vals[1].v.s.len == 2 && !memcmp(f.vals[1].v.s.p, "ab", 2));
    CHECK(f.vals[2].v.dec.hi == -1 && f.vals[2].v.dec.lo == (uint64_t)-100);
    CHECK(f.vals[3].isnull);
    CHECK(f.vals[4].v.ts.ms == 0 && f.vals[4].v.ts.nano == 1000);
    CHECK(f.vals[5].v.s.len == sizeof arr && !memcmp(f.vals[5].v.s.p, arr, sizeof arr));

    /* a NULL into the NOT NULL column is refused, naming it */
    v[0].isnull = true;
    f.out.len = 0;
    CHECK_EQ_INT(sl_avro_encode(f.a, &row, &f.out, f.why, sizeof f.why), SL_ERR);
    CHECK_EQ_STR(f.why, "column 'id': NULL for BIGINT NOT NULL");
    afix_free(&f);
}

static void test_bad_input(void)
{
    afix f;
    afix_init(&f, "{\"not-null-fields\": \"id\"}");
    for (size_t n = 0; n < sizeof REC; n++)
        CHECK_EQ_INT(sl_avro_decode(f.a, (const char *)REC, n, f.vals, &f.str, f.why,
                                    sizeof f.why), SL_ERR);
    uint8_t more[sizeof REC + 1];
    memcpy(more, REC, sizeof REC);
    more[sizeof REC] = 0;
    CHECK_EQ_INT(sl_avro_decode(f.a, (const char *)more, sizeof more, f.vals, &f.str, f.why,
                                sizeof f.why), SL_ERR);
    CHECK_EQ_STR(f.why, "1 bytes after the Avro record");
    /* a union branch past the end, a length past the end, a decimal too wide */
    static const uint8_t branch[] = {0x02, 0x06};
    CHECK_EQ_INT(sl_avro_decode(f.a, (const char *)branch, sizeof branch, f.vals, &f.str, f.why,
                                sizeof f.why), SL_ERR);
    static const uint8_t wide[] = {0x02, 0x00, 0x02, 0x06, 0x01, 0x86, 0xa0, 0x00, 0x00, 0x00};
    CHECK_EQ_INT(sl_avro_decode(f.a, (const char *)wide, sizeof wide, f.vals, &f.str, f.why,
                                sizeof f.why), SL_ERR);
    CHECK_EQ_STR(f.why, "field 'amt': a decimal with more than 5 digits for DECIMAL(5, 2)");
    uint64_t x = 88172645463325252ULL;
    uint8_t junk[64];
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(round % 64);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            junk[i] = (uint8_t)(round % 3 ? x % 8 : x); /* small bytes: plausible lengths */
        }
        int rc = sl_avro_decode(f.a, (const char *)junk, n, f.vals, &f.str, f.why, sizeof f.why);
        CHECK(rc == SL_OK || rc == SL_ERR);
    }
    afix_free(&f);
}

static void test_refused_types(void)
{
    sl_schema s;
    sl_schema_init(&s);
    char err[300];
    CHECK_EQ_INT(sl_schema_parse("m MAP<INT, STRING>, t TIMESTAMP(9), i INTERVAL DAY TO SECOND",
                                 &s, err, sizeof err), SL_OK);
    sl_vertex v = {.id = "v", .config = json_object()};
    const char *want[] = {
        ("vertex 'v': column 'm': MAP<INT, STRING>: Avro map keys are strings (MAP<STRING, ...>, "
         "MULTISET<STRING>)"),
        "vertex 'v': column 't': TIMESTAMP(9): Avro timestamps stop at microseconds (TIMESTAMP(6))",
        "vertex 'v': column 'i': Avro cannot carry INTERVAL DAY(2) TO SECOND(6) values"};
    for (int i = 0; i < 3; i++) {
        kf_codec c;
        CHECK_EQ_INT(kf_codec_init(&c, KF_AVRO, &s, &i, 1, "v", err, sizeof err), SL_OK);
        CHECK_EQ_INT(sl_avro_fmt_plan(&c, &v, false, NULL, err, sizeof err), SL_ERR);
        CHECK_EQ_STR(err, want[i]);
        kf_codec_free(&c);
    }
    json_decref(v.config);
    sl_schema_free(&s);
}

SL_TEST_MAIN(SL_TEST(test_schema), SL_TEST(test_encode_and_decode), SL_TEST(test_bad_input),
             SL_TEST(test_refused_types))
