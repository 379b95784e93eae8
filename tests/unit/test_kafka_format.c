/*
 * test_kafka_format.c -- the Kafka connector's record formats
 * (operators/kafka_common.c): json, csv and raw decoding and encoding.
 *
 * Expected values are written out by hand from Flink's json and csv formats.
 * Every prefix of a valid record and a batch of random bytes must decode to
 * an error or a row, never a crash or a read out of bounds (ASan build).
 */
#include "sl_test.h"
#include "kafka_common.h"
#include "format_json.h"

typedef struct cfix {
    sl_schema s;
    kf_codec c;
    sl_value vals[8];
    kf_buf str;
    char why[300];
} cfix;

/* id BIGINT, name STRING, ok BOOLEAN, x DOUBLE, ts TIMESTAMP, n INT, b BYTES */
static void cfix_init(cfix *f, kf_format fmt)
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
}

static void cfix_free(cfix *f)
{
    kf_codec_free(&f->c);
    kf_buf_free(&f->str);
    sl_schema_free(&f->s);
}

static int dec(cfix *f, const char *text)
{
    return kf_decode(&f->c, text, strlen(text), f->vals, &f->str, f->why, sizeof f->why);
}

static int str_is(const sl_value *v, const char *s)
{
    return !v->isnull && v->v.s.len == strlen(s) && !memcmp(v->v.s.p, s, v->v.s.len);
}

static void test_json_values(void)
{
    cfix f;
    cfix_init(&f, KF_JSON);
    CHECK_EQ_INT(dec(&f, "{\"id\": 42, \"name\": \"a\\\"b\\u00e9\\ud83d\\ude00\", \"ok\": true, "
                         "\"x\": -1.5e3, \"ts\": \"2026-01-01 00:00:01.5\", \"n\": \"7\", "
                         "\"b\": \"aGk=\", \"extra\": {\"deep\": [1, {\"a\": null}]}}"),
                 SL_OK);
    CHECK_EQ_INT(f.vals[0].v.i, 42);
    CHECK(str_is(&f.vals[1], "a\"b\xc3\xa9\xf0\x9f\x98\x80"));
    CHECK_EQ_INT(f.vals[2].v.i, 1);
    CHECK(f.vals[3].v.d == -1500.0);
    CHECK_EQ_INT(f.vals[4].v.i, 1767225601500LL);
    CHECK_EQ_INT(f.vals[5].v.i, 7);
    CHECK(str_is(&f.vals[6], "hi"));
    /* missing and null fields are NULL; ISO timestamps and epoch ms; a
     * nested value is kept as text in a STRING column */
    CHECK_EQ_INT(dec(&f, "{\"name\": {\"k\": [1,2]}, \"ts\": \"2026-01-01T00:00:00Z\", "
                         "\"x\": null}"), SL_OK);
    CHECK(f.vals[0].isnull && f.vals[2].isnull && f.vals[3].isnull && f.vals[5].isnull);
    CHECK(str_is(&f.vals[1], "{\"k\": [1,2]}"));
    CHECK_EQ_INT(f.vals[4].v.i, 1767225600000LL);
    CHECK_EQ_INT(dec(&f, "{\"ts\": 1767225600123, \"name\": 12}"), SL_OK);
    CHECK_EQ_INT(f.vals[4].v.i, 1767225600123LL);
    CHECK(str_is(&f.vals[1], "12"));
    CHECK_EQ_INT(dec(&f, "  {}  "), SL_OK);
    cfix_free(&f);
}

static void test_json_errors(void)
{
    cfix f;
    cfix_init(&f, KF_JSON);
    static const struct { const char *in, *why; } cases[] = {
        {"", "not a JSON object"},
        {"[1]", "not a JSON object"},
        {"{\"id\": 1", "expected ',' or '}'"},
        {"{\"id\": \"x\"}", "field 'id': 'x' is not a BIGINT"},
        {"{\"n\": 3000000000}", "field 'n': 3000000000 does not fit an INT"},
        {"{\"ok\": 1}", "field 'ok': '1' is not a BOOLEAN"},
        {"{\"ts\": \"yesterday\"}", "field 'ts': 'yesterday' is not a TIMESTAMP (yyyy-MM-dd HH:mm:ss[.SSS])"},
        {"{\"id\": [1]}", "field 'id': a JSON array for a BIGINT column"},
        {"{\"name\": \"a\\q\"}", "bad escape '\\q'"},
        {"{\"id\": 1} x", "trailing characters after the object"},
        {"{\"b\": \"***\"}", "field 'b': '***' is not base64"},
        {"{\"id\": 1.5}", "field 'id': '1.5' is not a BIGINT"},
        {"{\"n\": 12x}", "field 'n': '12x' is not an INT"},
        {"{\"x\": 12x}", "bad number '12x'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_EQ_INT(dec(&f, cases[i].in), SL_ERR);
        CHECK_EQ_STR(f.why, cases[i].why);
    }
    /* deep nesting is an error, not a deep recursion */
    char deep[400];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "{\"z\": ");
    for (int i = 0; i < 100; i++) deep[n++] = '[';
    deep[n] = '\0';
    CHECK_EQ_INT(dec(&f, deep), SL_ERR);
    CHECK_EQ_STR(f.why, "nested deeper than 64");
    cfix_free(&f);
}

/* Strings against a model: random values of plain bytes, UTF-8, DEL,
 * escapes and (rarely) a raw control character, of every length around the
 * scanner's eight-byte steps, first or last in the record (whose buffer is
 * exactly its size); the decoded text is built beside the escaped one. */
static void test_json_strings_model(void)
{
    cfix f;
    cfix_init(&f, KF_JSON);
    uint64_t s = 0x9E3779B97F4A7C15ULL;
#define NEXT() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
    for (int k = 0; k < 4000; k++) {
        char esc[400], want[200];
        size_t en = 0, wn = 0;
        int ctrl = 0;
        size_t units = NEXT() % 40;
        for (size_t u = 0; u < units; u++) {
            switch (NEXT() % 16) {
            case 0: esc[en++] = '\\'; esc[en++] = '"'; want[wn++] = '"'; break;
            case 1: esc[en++] = '\\'; esc[en++] = '\\'; want[wn++] = '\\'; break;
            case 2: esc[en++] = '\\'; esc[en++] = 'n'; want[wn++] = '\n'; break;
            case 3: memcpy(esc + en, "\\u0041", 6); en += 6; want[wn++] = 'A'; break;
            case 4: esc[en++] = want[wn++] = '\xc3'; esc[en++] = want[wn++] = '\xa9'; break;
            case 5: esc[en++] = want[wn++] = 0x7f; break;
            case 6:
                if (NEXT() % 8 == 0) {
                    esc[en++] = want[wn++] = (char)(1 + NEXT() % 31);
                    ctrl = 1;
                    break;
                }
                /* fall through */
            default: esc[en++] = want[wn++] = (char)('a' + NEXT() % 26); break;
            }
        }
        long long id = (long long)(NEXT() % 2000001) - 1000000;
        char rec[512];
        int n = NEXT() % 2 ? snprintf(rec, sizeof rec, "{\"id\": %lld, \"name\": \"%.*s\"}", id, (int)en, esc)
                           : snprintf(rec, sizeof rec, "{\"name\": \"%.*s\", \"id\":%lld}", (int)en, esc, id);
        char *buf = malloc((size_t)n);
        memcpy(buf, rec, (size_t)n);
        int rc = kf_decode(&f.c, buf, (size_t)n, f.vals, &f.str, f.why, sizeof f.why);
        if (ctrl) {
            CHECK_EQ_INT(rc, SL_ERR);
            CHECK_EQ_STR(f.why, "control character in a string");
        } else {
            CHECK_EQ_INT(rc, SL_OK);
            CHECK_EQ_INT(f.vals[0].v.i, id);
            CHECK(!f.vals[1].isnull && f.vals[1].v.s.len == wn && !memcmp(f.vals[1].v.s.p, want, wn));
        }
        free(buf);
        f.str.len = 0;
    }
#undef NEXT
    /* an integer column's number is parsed once, by strtoll (errors: test_json_errors) */
    CHECK_EQ_INT(dec(&f, "{\"id\": -0042}"), SL_OK);
    CHECK_EQ_INT(f.vals[0].v.i, -42);
    cfix_free(&f);
}

/* Every prefix of a valid record, and random bytes: an answer, no crash. */
static void test_truncations_and_garbage(void)
{
    const char *full = "{\"id\": 42, \"name\": \"a\\u00e9\\\"\", \"ok\": false, \"x\": 1e5, "
                       "\"ts\": \"2026-01-01 00:00:01.500\", \"n\": -3, \"b\": \"aGk\"}";
    for (int fmt = KF_JSON; fmt <= KF_CSV; fmt++) {
        cfix f;
        cfix_init(&f, (kf_format)fmt);
        const char *rec = fmt == KF_JSON ? full : "42,\"a,\"\"b\",false,1e5,2026-01-01 00:00:01.5,-3,aGk=";
        size_t len = strlen(rec);
        for (size_t k = 0; k < len; k++) {
            char *cut = malloc(k ? k : 1); /* exactly k bytes: ASan sees any overrun */
            memcpy(cut, rec, k);
            int rc = kf_decode(&f.c, cut, k, f.vals, &f.str, f.why, sizeof f.why);
            CHECK(rc == SL_OK || rc == SL_ERR);
            free(cut);
        }
        CHECK_EQ_INT(kf_decode(&f.c, rec, len, f.vals, &f.str, f.why, sizeof f.why), SL_OK);
        uint64_t s = 88172645463325252ULL;
        for (int k = 0; k < 2000; k++) {
            size_t n = (size_t)(k % 64) + 1;
            char *g = malloc(n);
            for (size_t j = 0; j < n; j++) {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                g[j] = "{}[]\",:\\ 0123456789.-eEtrufalsn"[s % 32];
            }
            int rc = kf_decode(&f.c, g, n, f.vals, &f.str, f.why, sizeof f.why);
            CHECK(rc == SL_OK || rc == SL_ERR);
            free(g);
        }
        cfix_free(&f);
    }
}

static void test_csv(void)
{
    cfix f;
    cfix_init(&f, KF_CSV);
    CHECK_EQ_INT(dec(&f, "1,\"a,\"\"q\"\"\",true,2.5,2026-01-01 00:00:00,9,aGk=\n"), SL_OK);
    CHECK_EQ_INT(f.vals[0].v.i, 1);
    CHECK(str_is(&f.vals[1], "a,\"q\""));
    CHECK_EQ_INT(f.vals[2].v.i, 1);
    CHECK(f.vals[3].v.d == 2.5);
    CHECK_EQ_INT(f.vals[4].v.i, 1767225600000LL);
    CHECK(str_is(&f.vals[6], "hi"));
    /* empty unquoted: NULL; "" in a STRING column: the empty string */
    CHECK_EQ_INT(dec(&f, ",\"\",,,,,"), SL_OK);
    CHECK(f.vals[0].isnull && str_is(&f.vals[1], "") && f.vals[6].isnull);
    CHECK_EQ_INT(dec(&f, "1,2"), SL_ERR);
    CHECK_EQ_STR(f.why, "2 fields, but the format has 7 columns");
    CHECK_EQ_INT(dec(&f, "x,a,true,1,2026-01-01 00:00:00,1,"), SL_ERR);
    CHECK_EQ_STR(f.why, "field 1 ('id'): 'x' is not a BIGINT");
    CHECK_EQ_INT(dec(&f, "1,\"abc,true,1,x,1,"), SL_ERR);
    CHECK_EQ_STR(f.why, "field 2: unterminated quote");
    cfix_free(&f);
}

static void test_encode_roundtrip(void)
{
    for (int fmt = KF_JSON; fmt <= KF_CSV; fmt++) {
        cfix f;
        cfix_init(&f, (kf_format)fmt);
        sl_value v[7] = {
            {.v.i = -5}, {.v.s = {"x,\"y\"\n", 6}}, {.v.i = 0}, {.v.d = 0.25},
            {.v.i = 1767225600020LL}, {.isnull = true}, {.v.s = {"\x00\xff", 2}},
        };
        sl_row row = {SL_KIND_INSERT, 7, v, SL_TS_NONE};
        kf_buf out = {0};
        CHECK_EQ_INT(kf_encode(&f.c, &row, &out, f.why, sizeof f.why), SL_OK);
        if (fmt == KF_JSON) {
            kf_buf_reserve(&out, 1);
            out.p[out.len] = '\0';
            CHECK_EQ_STR(out.p, "{\"id\":-5,\"name\":\"x,\\\"y\\\"\\n\",\"ok\":false,\"x\":0.25,"
                                "\"ts\":\"2026-01-01 00:00:00.02\",\"n\":null,\"b\":\"AP8=\"}");
        }
        CHECK_EQ_INT(kf_decode(&f.c, out.p, out.len, f.vals, &f.str, f.why, sizeof f.why), SL_OK);
        CHECK_EQ_INT(f.vals[0].v.i, -5);
        CHECK(str_is(&f.vals[1], "x,\"y\"\n"));
        CHECK_EQ_INT(f.vals[2].v.i, 0);
        CHECK(f.vals[3].v.d == 0.25);
        CHECK_EQ_INT(f.vals[4].v.i, 1767225600020LL);
        CHECK(f.vals[5].isnull);
        CHECK(f.vals[6].v.s.len == 2 && !memcmp(f.vals[6].v.s.p, "\x00\xff", 2));
        kf_buf_free(&out);
        cfix_free(&f);
    }
}

static void test_raw_and_timestamps(void)
{
    sl_schema s;
    sl_schema_init(&s);
    sl_schema_add(&s, "line", SL_T_STRING);
    sl_schema_add(&s, "id", SL_T_BIGINT);
    int one = 0, two[2] = {0, 1};
    kf_codec c;
    char err[300];
    CHECK_EQ_INT(kf_codec_init(&c, KF_RAW, &s, &one, 1, "v", err, sizeof err), SL_OK);
    sl_value v[2];
    kf_buf str = {0};
    CHECK_EQ_INT(kf_decode(&c, "a\0b", 3, v, &str, err, sizeof err), SL_OK);
    CHECK(v[0].v.s.len == 3 && !v[0].isnull);
    CHECK_EQ_INT(kf_decode(&c, NULL, 0, v, &str, err, sizeof err), SL_OK);
    CHECK(v[0].isnull);
    kf_codec_free(&c);
    CHECK_EQ_INT(kf_codec_init(&c, KF_RAW, &s, two, 2, "v", err, sizeof err), SL_ERR);
    kf_buf_free(&str);
    sl_schema_free(&s);

    int64_t ms;
    CHECK_EQ_INT(kf_parse_timestamp("1970-01-01 00:00:00", 19, &ms), SL_OK);
    CHECK_EQ_INT(ms, 0);
    CHECK_EQ_INT(kf_parse_timestamp("1969-12-31T23:59:59.999", 23, &ms), SL_OK);
    CHECK_EQ_INT(ms, -1);
    CHECK_EQ_INT(kf_parse_timestamp("2024-02-29 12:00:00.123456789", 29, &ms), SL_OK);
    CHECK_EQ_INT(ms, 1709208000123LL);
    CHECK_EQ_INT(kf_parse_timestamp("2024-13-01 00:00:00", 19, &ms), SL_ERR);
    CHECK_EQ_INT(kf_parse_timestamp("2024-01-01 00:00", 16, &ms), SL_ERR);
    CHECK_EQ_INT(kf_parse_timestamp("2024-01-01 00:00:00.", 20, &ms), SL_ERR);
}

/* debezium-json: op c/r/u/d into the before and after images, the
 * schema-included envelope, the errors, and the encoding by row kind. */
static void test_debezium(void)
{
    cfix f;
    cfix_init(&f, KF_DEBEZIUM);
    sl_value before[8];
    kf_change ch;
#define DBZ(text) kf_decode_debezium(&f.c, text, strlen(text), before, f.vals, &ch, &f.str, \
                                     f.why, sizeof f.why)
    CHECK_EQ_INT(DBZ("{\"before\":null,\"after\":{\"id\":1,\"name\":\"a\"},\"op\":\"c\","
                     "\"ts_ms\":5,\"source\":{\"db\":\"x\"}}"), SL_OK);
    CHECK_EQ_INT(ch, KF_CHANGE_INSERT);
    CHECK(f.vals[0].v.i == 1 && str_is(&f.vals[1], "a") && f.vals[2].isnull);
    CHECK_EQ_INT(DBZ("{\"op\":\"r\",\"after\":{\"id\":2}}"), SL_OK);
    CHECK_EQ_INT(ch, KF_CHANGE_INSERT);
    CHECK_EQ_INT(DBZ("{\"before\":{\"id\":3,\"name\":\"old\\u0021\"},\"after\":{\"id\":3,"
                     "\"name\":\"new\"},\"op\":\"u\"}"), SL_OK);
    CHECK_EQ_INT(ch, KF_CHANGE_UPDATE);
    CHECK(before[0].v.i == 3 && str_is(&before[1], "old!") && str_is(&f.vals[1], "new"));
    CHECK_EQ_INT(DBZ("{\"schema\":{\"type\":\"struct\"},\"payload\":{\"before\":{\"id\":4},"
                     "\"after\":null,\"op\":\"d\"}}"), SL_OK);
    CHECK_EQ_INT(ch, KF_CHANGE_DELETE);
    CHECK(before[0].v.i == 4 && f.vals[0].isnull);
    static const struct { const char *in, *why; } bad[] = {
        {"{\"after\":{\"id\":1}}", "no 'op' field (a Debezium change event has one)"},
        {"{\"op\":\"x\",\"after\":{}}", "unknown 'op' 'x' (c, r, u or d)"},
        {"{\"op\":\"u\",\"after\":{\"id\":1}}",
         "op 'u' without a 'before' image (the source table must log full rows, e.g. REPLICA "
         "IDENTITY FULL)"},
        {"{\"op\":\"d\",\"before\":null}", "op 'd' without a 'before' image"},
        {"{\"op\":\"c\",\"after\":{\"id\":\"z\"}}", "'after': field 'id': 'z' is not a BIGINT"},
        {"{\"op\":\"c\",\"after\":7}", "'after' is neither an object nor null"},
        {"{\"op\":\"c\",\"after\":{}} x", "trailing characters after the object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(DBZ(bad[i].in), SL_ERR);
        CHECK_EQ_STR(f.why, bad[i].why);
    }
    /* every prefix: an answer, no overrun */
    const char *full = "{\"before\":{\"id\":3,\"name\":\"o\\\"\"},\"after\":{\"id\":3},\"op\":\"u\"}";
    for (size_t k = 0; k < strlen(full); k++) {
        char *cut = malloc(k ? k : 1);
        memcpy(cut, full, k);
        int rc = kf_decode_debezium(&f.c, cut, k, before, f.vals, &ch, &f.str, f.why, sizeof f.why);
        CHECK(rc == SL_ERR);
        free(cut);
    }
    /* encoding: +I/+U as a create, -U/-D as a delete */
    sl_value v[7] = {{.v.i = 9}, {.v.s = {"q", 1}}, {.isnull = true}, {.isnull = true},
                     {.isnull = true}, {.isnull = true}, {.isnull = true}};
    const struct { sl_rowkind k; const char *want; } enc[] = {
        {SL_KIND_INSERT, "{\"before\":null,\"after\":{\"id\":9,\"name\":\"q\",\"ok\":null,"
                         "\"x\":null,\"ts\":null,\"n\":null,\"b\":null},\"op\":\"c\"}"},
        {SL_KIND_UPDATE_AFTER, "{\"before\":null,\"after\":{\"id\":9,\"name\":\"q\",\"ok\":null,"
                               "\"x\":null,\"ts\":null,\"n\":null,\"b\":null},\"op\":\"c\"}"},
        {SL_KIND_UPDATE_BEFORE, "{\"before\":{\"id\":9,\"name\":\"q\",\"ok\":null,\"x\":null,"
                                "\"ts\":null,\"n\":null,\"b\":null},\"after\":null,\"op\":\"d\"}"},
        {SL_KIND_DELETE, "{\"before\":{\"id\":9,\"name\":\"q\",\"ok\":null,\"x\":null,"
                         "\"ts\":null,\"n\":null,\"b\":null},\"after\":null,\"op\":\"d\"}"},
    };
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++) {
        sl_row row = {enc[i].k, 7, v, SL_TS_NONE};
        kf_buf out = {0};
        CHECK_EQ_INT(kf_encode(&f.c, &row, &out, f.why, sizeof f.why), SL_OK);
        kf_buf_reserve(&out, 1);
        out.p[out.len] = '\0';
        CHECK_EQ_STR(out.p, enc[i].want);
        CHECK_EQ_INT(kf_decode_debezium(&f.c, out.p, out.len, before, f.vals, &ch, &f.str, f.why,
                                        sizeof f.why), SL_OK);
        CHECK_EQ_INT(ch, i < 2 ? KF_CHANGE_INSERT : KF_CHANGE_DELETE);
        CHECK_EQ_INT((i < 2 ? f.vals : before)[0].v.i, 9);
        kf_buf_free(&out);
    }
#undef DBZ
    cfix_free(&f);
    /* csv carries no row kind */
    cfix_init(&f, KF_CSV);
    sl_row del = {SL_KIND_DELETE, 7, v, SL_TS_NONE};
    kf_buf out = {0};
    CHECK_EQ_INT(kf_encode(&f.c, &del, &out, f.why, sizeof f.why), SL_ERR);
    CHECK_EQ_STR(f.why, "a -D row cannot be written as csv, which carries no row kind (use "
                        "debezium-json)");
    kf_buf_free(&out);
    cfix_free(&f);
}

/* The headers column's JSON text, as the sink parses it: every header in
 * order, null values, escapes; each error named; every prefix of a valid
 * text refused. */
typedef struct hdr_log {
    char text[512];
    size_t n;
} hdr_log;

static int hdr_add(void *ctx, const char *name, size_t nlen, const char *val, size_t vlen)
{
    hdr_log *l = ctx;
    l->n += (size_t)snprintf(l->text + l->n, sizeof l->text - l->n, "[%.*s=%s%.*s]", (int)nlen,
                             name, val ? "" : "null", val ? (int)vlen : 0, val ? val : "");
    return SL_OK;
}

static const char *hdrs(const char *text, kf_buf *str)
{
    static char out[600];
    hdr_log l = {{0}, 0};
    char why[200];
    if (kf_headers_parse(text, strlen(text), str, hdr_add, &l, why, sizeof why) != SL_OK)
        snprintf(out, sizeof out, "ERR %s", why);
    else snprintf(out, sizeof out, "%s", l.text);
    return out;
}

static void test_headers_parse(void)
{
    kf_buf str = {0};
    CHECK_EQ_STR(hdrs("{}", &str), "");
    CHECK_EQ_STR(hdrs(" { \"a\" : \"1\", \"b\":null,\"a\":\"x\\\"y\\u00e9\"} ", &str),
                 "[a=1][b=null][a=x\"y\xc3\xa9]");
    CHECK_EQ_STR(hdrs("[]", &str), "ERR the headers are not a JSON object");
    CHECK_EQ_STR(hdrs("{\"a\":1}", &str), "ERR header 'a': the value must be a string or null");
    CHECK_EQ_STR(hdrs("{\"a\":\"1\"} x", &str), "ERR trailing characters after the headers");
    CHECK_EQ_STR(hdrs("{a:\"1\"}", &str), "ERR expected a header name");
    const char *ok = "{\"trace\":\"t\\n1\",\"e\":null}";
    char pre[64];
    for (size_t n = 0; n < strlen(ok); n++) {
        snprintf(pre, sizeof pre, "%.*s", (int)n, ok);
        CHECK(!strncmp(hdrs(pre, &str), "ERR ", 4));
    }
    kf_buf_free(&str);
}

/* Nested columns read with the json options Flink's way: each line decoded
 * (and every prefix of it: errors, never a crash) and the row written back. */
static const char *nested_rt(kf_codec *c, const sl_schema *s, const char *line, kf_buf *str,
                             char *buf, size_t cap)
{
    sl_value vals[8];
    char why[300];
    if (kf_decode(c, line, strlen(line), vals, str, why, sizeof why) != SL_OK) {
        snprintf(buf, cap, "ERR %s", why);
        return buf;
    }
    sl_row row = {.kind = SL_KIND_INSERT, .n = s->n, .vals = vals};
    sl_buf out = SL_BUF_INIT;
    sl_fmt_json_fields(&out, c, &row, why, sizeof why);
    snprintf(buf, cap, "%.*s", (int)out.len, out.p);
    sl_buf_free(&out);
    return buf;
}

static void test_json_nested_options(void)
{
    sl_schema s;
    sl_schema_init(&s);
    char err[300];
    CHECK_EQ_INT(sl_schema_parse("id INT, r ROW<a INT, b STRING, c ROW<d INT>>, "
                                        "ai ARRAY<INT>, m MAP<STRING, INT>, t TIMESTAMP_LTZ(3), "
                                        "u TIMESTAMP_LTZ(6)", &s, err, sizeof err), SL_OK);
    int cols[6] = {0, 1, 2, 3, 4, 5};
    kf_codec c;
    memset(&c, 0, sizeof c);
    CHECK_EQ_INT(kf_codec_init(&c, KF_JSON, &s, cols, 6, "v", err, sizeof err), SL_OK);
    json_t *opts = json_pack("{s:s}", "json.fail-on-missing-field", "true");
    CHECK_EQ_INT(kf_json_opts_read(&c, opts, "v", err, sizeof err), SL_OK);
    json_decref(opts);
    kf_buf str = {0};
    char buf[600];
    const char *full = "{\"id\":1,\"r\":{\"a\":1,\"b\":\"x\",\"c\":{\"d\":1}},\"ai\":[1],\"m\":{},"
                       "\"t\":\"2026-01-01 00:00:00.5Z\",\"u\":\"1969-12-31T23:59:59.999999Z\"}";
    /* a TIMESTAMP_LTZ is written as its instant with a 'Z' */
    CHECK_EQ_STR(nested_rt(&c, &s, full, &str, buf, sizeof buf),
                 "\"id\":1,\"r\":{\"a\":1,\"b\":\"x\",\"c\":{\"d\":1}},\"ai\":[1],\"m\":{},"
                 "\"t\":\"2026-01-01 00:00:00.5Z\",\"u\":\"1969-12-31 23:59:59.999999Z\"");
    CHECK_EQ_STR(nested_rt(&c, &s, "{\"id\":1,\"r\":{\"a\":1,\"b\":\"x\",\"c\":{}},\"ai\":[],"
                                   "\"m\":{},\"t\":null,\"u\":null}", &str, buf, sizeof buf),
                 "ERR field 'r': field 'c': field 'd' is missing (json.fail-on-missing-field)");
    /* json.ignore-parse-errors instead */
    c.json.fail_missing = false;
    c.ignore_errors = true;
    CHECK_EQ_STR(nested_rt(&c, &s, "{\"id\":\"x\",\"r\":{\"b\":true,\"c\":[1],\"a\":{\"q\":1}},"
                                   "\"ai\":[1,\"zz\",false,4],\"m\":{\"k\":\"zz\",\"j\":2},"
                                   "\"t\":\"nope\",\"u\":{}}", &str, buf, sizeof buf),
                 "\"id\":null,\"r\":{\"a\":null,\"b\":\"true\",\"c\":null},"
                 "\"ai\":[1,null,null,4],\"m\":{\"k\":null,\"j\":2},\"t\":null,\"u\":null");
    CHECK(!strncmp(nested_rt(&c, &s, "[1]", &str, buf, sizeof buf), "ERR ", 4));
    const char *bad = "{\"id\":\"x\",\"r\":{\"a\":{\"q\":[1,{\"z\":\"\\u00e9\"}]},\"c\":7},"
                      "\"ai\":[1,\"zz\",{}],\"m\":{\"k\":[],\"j\":\"y\"},\"u\":\"2026\"}";
    for (size_t k = 0; k <= strlen(bad); k++) { /* every prefix: a row or an error */
        char *cut = malloc(k ? k : 1); /* exactly k bytes: ASan sees any overrun */
        memcpy(cut, bad, k);
        sl_value vals[8];
        int rc = kf_decode(&c, cut, k, vals, &str, err, sizeof err);
        CHECK(rc == SL_OK || rc == SL_ERR);
        CHECK(rc == SL_ERR || k == strlen(bad));
        free(cut);
    }
    kf_buf_free(&str);
    kf_codec_free(&c);
    sl_schema_free(&s);
}

SL_TEST_MAIN(SL_TEST(test_headers_parse), SL_TEST(test_json_values), SL_TEST(test_json_errors),
             SL_TEST(test_json_strings_model),
             SL_TEST(test_truncations_and_garbage), SL_TEST(test_csv),
             SL_TEST(test_encode_roundtrip), SL_TEST(test_raw_and_timestamps),
             SL_TEST(test_debezium), SL_TEST(test_json_nested_options))
