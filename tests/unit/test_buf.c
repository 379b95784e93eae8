/*
 * test_buf.c -- unit tests for lib/'s byte buffer (buf.h), JSON string
 * escaper (json_escape.h) and base64 (base64.h). Expected values are built
 * independently: by plain arrays and snprintf, by hand from RFC 8259's
 * escape rules, and from RFC 4648's test vectors.
 */
#include <stdint.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "json_escape.h"
#include "sl_test.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

static int invariant(const sl_buf *b)
{
    if (b->len > b->cap) return 0;
    if (!b->p) return b->len == 0 && b->cap == 0;
    return b->len < b->cap && b->p[b->len] == '\0';
}

/* Many appends of every kind against a plain array built by hand. */
static void test_buf_appends(void)
{
    static char want[300000];
    size_t wn = 0;
    sl_buf b = SL_BUF_INIT;
    CHECK(invariant(&b));
    int reallocs = 0;
    char *lastp = NULL;
    while (wn < sizeof want - 100) {
        char chunk[64];
        size_t n = next_rand() % 40;
        for (size_t i = 0; i < n; i++) chunk[i] = (char)('a' + next_rand() % 26);
        switch (next_rand() % 4) {
        case 0: sl_buf_put(&b, chunk, n); break;
        case 1:
            n = 1;
            sl_buf_putc(&b, chunk[0] = 'Z');
            break;
        case 2:
            chunk[n] = '\0';
            sl_buf_str(&b, chunk);
            break;
        default: {
            char *dst = sl_buf_room(&b, n);
            memcpy(dst, chunk, n);
            sl_buf_added(&b, n);
        }
        }
        memcpy(want + wn, chunk, n);
        wn += n;
        CHECK(invariant(&b));
        if (b.p != lastp) reallocs++, lastp = b.p;
    }
    CHECK_EQ_INT(b.len, wn);
    CHECK(memcmp(b.p, want, wn) == 0);
    CHECK(reallocs <= 20); /* doubling: a few dozen at most for 300 kB */
    sl_buf_put(&b, NULL, 0);
    CHECK_EQ_INT(b.len, wn);
    sl_buf_free(&b);
    CHECK(b.p == NULL && b.len == 0 && b.cap == 0);
    sl_buf_free(NULL);
    sl_buf_put(&b, "xy", 2); /* usable again after free */
    CHECK_EQ_STR(b.p, "xy");
    sl_buf_free(&b);
}

static void test_buf_reserve(void)
{
    sl_buf b = SL_BUF_INIT;
    sl_buf_reserve(&b, 1000);
    CHECK(b.cap > 1000 && b.len == 0);
    char *p = b.p;
    for (int i = 0; i < 1000; i++) sl_buf_putc(&b, 'x');
    CHECK(b.p == p); /* no reallocation within the reserved room */
    CHECK(invariant(&b));
    sl_buf_free(&b);
}

static void test_buf_fmt(void)
{
    sl_buf b = SL_BUF_INIT;
    sl_buf_fmt(&b, "%d-%s", 42, "x");
    CHECK_EQ_STR(b.p, "42-x");
    /* output far beyond the first room */
    static char big[5000], want[6000];
    memset(big, 'q', sizeof big - 1);
    sl_buf_fmt(&b, "[%s]%d", big, 7);
    snprintf(want, sizeof want, "42-x[%s]7", big);
    CHECK_EQ_INT(b.len, strlen(want));
    CHECK_EQ_STR(b.p, want);
    CHECK(invariant(&b));
    sl_buf_fmt(&b, "%s", "");
    CHECK_EQ_INT(b.len, strlen(want));
    sl_buf_free(&b);
}

static void test_buf_take_reset(void)
{
    sl_buf b = SL_BUF_INIT;
    char *s = sl_buf_take(&b);
    CHECK_EQ_STR(s, "");
    free(s);
    sl_buf_str(&b, "hello");
    sl_buf_reset(&b);
    CHECK(b.len == 0 && b.p && b.p[0] == '\0');
    size_t cap = b.cap;
    char *p = b.p;
    sl_buf_str(&b, "world");
    CHECK(b.p == p && b.cap == cap); /* reset kept the memory */
    sl_buf_set(&b, "ab", 2);
    CHECK_EQ_STR(b.p, "ab");
    s = sl_buf_take(&b);
    CHECK_EQ_STR(s, "ab");
    CHECK(b.p == NULL && b.len == 0 && b.cap == 0);
    free(s);
}

static void test_buf_truncate(void)
{
    sl_buf b = SL_BUF_INIT;
    sl_buf_truncate(&b, 0); /* empty and unallocated: nothing to do */
    CHECK(b.p == NULL && b.len == 0);
    sl_buf_str(&b, "abcdef");
    size_t cap = b.cap;
    sl_buf_truncate(&b, 6);
    CHECK_EQ_STR(b.p, "abcdef");
    sl_buf_truncate(&b, 2);
    CHECK_EQ_INT(b.len, 2);
    CHECK_EQ_STR(b.p, "ab");
    CHECK(b.cap == cap && invariant(&b));
    sl_buf_str(&b, "x");
    CHECK_EQ_STR(b.p, "abx");
    sl_buf_truncate(&b, 0);
    CHECK(b.len == 0 && b.p[0] == '\0');
    sl_buf_free(&b);
}

static void test_json_escape(void)
{
    static const struct {
        const char *in;
        size_t n;
        const char *want;
    } cases[] = {
        {"", 0, ""},
        {"plain text", 10, "plain text"},
        {"\"", 1, "\\\""},
        {"\\", 1, "\\\\"},
        {"/", 1, "/"}, /* the solidus may stay as it is */
        {"\b\f\n\r\t", 5, "\\b\\f\\n\\r\\t"},
        {"\0", 1, "\\u0000"},
        {"\x01\x07\x0b\x0e\x1f", 5, "\\u0001\\u0007\\u000b\\u000e\\u001f"},
        {"a\"b\\c\nd", 7, "a\\\"b\\\\c\\nd"},
        {"\x7f", 1, "\x7f"}, /* DEL is not a control character for JSON */
        {"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", 15, "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"\xe2\x80\xa8", 3, "\xe2\x80\xa8"}, /* U+2028 passes through */
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        sl_buf b = SL_BUF_INIT;
        sl_buf_str(&b, "<");
        sl_json_escape(&b, cases[i].in, cases[i].n);
        sl_buf_str(&b, ">");
        char want[128];
        snprintf(want, sizeof want, "<%s>", cases[i].want);
        if (strcmp(b.p, want) != 0) fprintf(stderr, "case %zu\n", i);
        CHECK_EQ_STR(b.p, want);
        sl_buf_free(&b);
    }
    /* every control character: short form or \u00xx */
    for (int c = 0; c < 0x20; c++) {
        sl_buf b = SL_BUF_INIT;
        char ch = (char)c, want[8];
        sl_json_escape(&b, &ch, 1);
        const char *sh = c == 8 ? "\\b" : c == 12 ? "\\f" : c == 10 ? "\\n" : c == 13 ? "\\r"
                         : c == 9 ? "\\t" : NULL;
        if (sh) snprintf(want, sizeof want, "%s", sh);
        else snprintf(want, sizeof want, "\\u%04x", c);
        CHECK_EQ_STR(b.p, want);
        sl_buf_free(&b);
    }
}

static void test_base64_vectors(void)
{
    static const char *const vec[][2] = {
        {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(vec); i++) {
        sl_buf b = SL_BUF_INIT;
        sl_base64_encode(&b, vec[i][0], strlen(vec[i][0]));
        char *s = sl_buf_take(&b);
        CHECK_EQ_STR(s, vec[i][1]);
        free(s);
        CHECK_EQ_INT(sl_base64_decode(&b, vec[i][1], strlen(vec[i][1])), SL_OK);
        CHECK_EQ_INT(b.len, strlen(vec[i][0]));
        CHECK(b.len == 0 || memcmp(b.p, vec[i][0], b.len) == 0);
        sl_buf_free(&b);
    }
    /* the URL alphabet and missing padding */
    static const uint8_t bin[] = {0xfb, 0xff, 0xbf};
    static const char *const forms[] = {"+/+/", "-_-_", "+_-/"};
    for (size_t i = 0; i < SL_ARRAY_LEN(forms); i++) {
        sl_buf b = SL_BUF_INIT;
        CHECK_EQ_INT(sl_base64_decode(&b, forms[i], 4), SL_OK);
        CHECK(b.len == 3 && memcmp(b.p, bin, 3) == 0);
        sl_buf_free(&b);
    }
    sl_buf b = SL_BUF_INIT;
    CHECK_EQ_INT(sl_base64_decode(&b, "Zm9vYg", 6), SL_OK);
    CHECK_EQ_INT(sl_base64_decode(&b, "Zm8", 3), SL_OK);
    CHECK_EQ_INT(b.len, 6);
    CHECK(memcmp(b.p, "foobfo", 6) == 0);
    sl_buf_free(&b);
}

static void test_base64_invalid(void)
{
    static const char *const bad[] = {"Z", "Zm9vY", "Zm 9v", "Zm9v!", "Zg==Zg==", "Z=g=", "Zm9v\n"};
    sl_buf b = SL_BUF_INIT;
    sl_buf_str(&b, "keep");
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++) {
        CHECK_EQ_INT(sl_base64_decode(&b, bad[i], strlen(bad[i])), SL_ERR);
        CHECK_EQ_STR(b.p, "keep"); /* unchanged */
    }
    sl_buf_free(&b);
}

/* Round trips of seeded random bytes of every length 0..300, the encoded
 * text checked against a bit-by-bit encoder written here. */
static void test_base64_round_trip(void)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint8_t in[300];
    for (size_t n = 0; n <= 300; n++) {
        for (size_t i = 0; i < n; i++) in[i] = (uint8_t)next_rand();
        char want[420];
        size_t w = 0;
        for (size_t bit = 0; bit < n * 8; bit += 6) {
            unsigned v = 0;
            for (size_t k = 0; k < 6; k++) {
                size_t j = bit + k;
                v = v << 1 | (j < n * 8 ? (in[j / 8] >> (7 - j % 8)) & 1u : 0u);
            }
            want[w++] = tab[v];
        }
        while (w % 4) want[w++] = '=';
        want[w] = '\0';
        sl_buf b = SL_BUF_INIT;
        sl_base64_encode(&b, in, n);
        CHECK_EQ_INT(b.len, SL_BASE64_ENC_LEN(n));
        CHECK_EQ_STR(b.p, want);
        sl_buf d = SL_BUF_INIT;
        CHECK_EQ_INT(sl_base64_decode(&d, b.p, b.len), SL_OK);
        CHECK_EQ_INT(d.len, n);
        CHECK(n == 0 || memcmp(d.p, in, n) == 0);
        size_t unpadded = b.len;
        while (unpadded && b.p[unpadded - 1] == '=') unpadded--;
        sl_buf_reset(&d);
        CHECK_EQ_INT(sl_base64_decode(&d, b.p, unpadded), SL_OK);
        CHECK_EQ_INT(d.len, n);
        CHECK(n == 0 || memcmp(d.p, in, n) == 0);
        sl_buf_free(&b);
        sl_buf_free(&d);
    }
}

SL_TEST_MAIN(SL_TEST(test_buf_appends), SL_TEST(test_buf_reserve), SL_TEST(test_buf_fmt),
             SL_TEST(test_buf_take_reset), SL_TEST(test_buf_truncate),
             SL_TEST(test_json_escape), SL_TEST(test_base64_vectors),
             SL_TEST(test_base64_invalid), SL_TEST(test_base64_round_trip))
