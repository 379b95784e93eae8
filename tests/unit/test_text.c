/*
 * test_text.c -- unit tests for lib/text.c (the edit distance and the
 * timestamp formatter) and lib/bytes.h (the byte-order helpers): distances
 * worked out by hand, timestamps computed with Python's datetime (negative
 * epochs, leap days, years outside 0001..9999), and each helper's bytes
 * against the layout written out by hand.
 */
#include <stdio.h>
#include <string.h>

#include "blob.h"
#include "bytes.h"
#include "sl_test.h"
#include "text.h"

static void test_edit_distance(void)
{
    CHECK_EQ_INT(sl_edit_distance("kitten", "sitting"), 3);
    CHECK_EQ_INT(sl_edit_distance("sitting", "kitten"), 3);
    CHECK_EQ_INT(sl_edit_distance("flaw", "lawn"), 2);
    CHECK_EQ_INT(sl_edit_distance("", ""), 0);
    CHECK_EQ_INT(sl_edit_distance("", "abc"), 3);
    CHECK_EQ_INT(sl_edit_distance("abc", ""), 3);
    CHECK_EQ_INT(sl_edit_distance("same", "same"), 0);
    /* both callers want hints regardless of case */
    CHECK_EQ_INT(sl_edit_distance("Kitten", "kITTEN"), 0);
    CHECK_EQ_INT(sl_edit_distance("DataGen", "datagem"), 1);
    /* a transposition is two edits in Levenshtein's distance */
    CHECK_EQ_INT(sl_edit_distance("kafka", "akfka"), 2);
    CHECK_EQ_INT(sl_edit_distance("parallelism.default", "parallelism.defualt"), 2);
    char longer[SL_EDIT_MAX_LEN + 2], limit[SL_EDIT_MAX_LEN + 1];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    memset(limit, 'a', sizeof limit - 1);
    limit[sizeof limit - 1] = '\0';
    CHECK_EQ_INT(sl_edit_distance(limit, ""), SL_EDIT_MAX_LEN);
    CHECK_EQ_INT(sl_edit_distance(longer, "a"), SL_EDIT_FAR);
    CHECK_EQ_INT(sl_edit_distance("a", longer), SL_EDIT_FAR);
}

static void check_ts(int64_t ms, const char *iso, const char *space, const char *sql,
                     const char *java)
{
    char b[64];
    CHECK_EQ_INT(sl_ts_text(b, sizeof b, ms, SL_TS_ISO), (int)strlen(iso));
    CHECK_EQ_STR(b, iso);
    CHECK_EQ_INT(sl_ts_text(b, sizeof b, ms, SL_TS_SPACE), (int)strlen(space));
    CHECK_EQ_STR(b, space);
    CHECK_EQ_INT(sl_ts_text(b, sizeof b, ms, SL_TS_SQL), (int)strlen(sql));
    CHECK_EQ_STR(b, sql);
    CHECK_EQ_INT(sl_ts_text(b, sizeof b, ms, SL_TS_JAVA), (int)strlen(java));
    CHECK_EQ_STR(b, java);
}

static void test_timestamps(void)
{
    /* values from Python: (datetime(...) - epoch) // timedelta(milliseconds=1) */
    check_ts(0, "1970-01-01T00:00:00.000", "1970-01-01 00:00:00.000", "1970-01-01 00:00:00",
             "1970-01-01T00:00");
    check_ts(1787151610000LL, "2026-08-19T15:00:10.000", "2026-08-19 15:00:10.000",
             "2026-08-19 15:00:10", "2026-08-19T15:00:10");
    check_ts(1787151600123LL, "2026-08-19T15:00:00.123", "2026-08-19 15:00:00.123",
             "2026-08-19 15:00:00.123", "2026-08-19T15:00:00.123");
    /* leap days, after and before the epoch */
    check_ts(1709210096020LL, "2024-02-29T12:34:56.020", "2024-02-29 12:34:56.020",
             "2024-02-29 12:34:56.02", "2024-02-29T12:34:56.020");
    check_ts(951868799000LL, "2000-02-29T23:59:59.000", "2000-02-29 23:59:59.000",
             "2000-02-29 23:59:59", "2000-02-29T23:59:59");
    check_ts(-2077747199500LL, "1904-02-29T00:00:00.500", "1904-02-29 00:00:00.500",
             "1904-02-29 00:00:00.5", "1904-02-29T00:00:00.500");
    /* negative epochs round toward the past */
    check_ts(-1, "1969-12-31T23:59:59.999", "1969-12-31 23:59:59.999", "1969-12-31 23:59:59.999",
             "1969-12-31T23:59:59.999");
    check_ts(-60000, "1969-12-31T23:59:00.000", "1969-12-31 23:59:00.000", "1969-12-31 23:59:00",
             "1969-12-31T23:59");
    check_ts(-62135596800000LL, "0001-01-01T00:00:00.000", "0001-01-01 00:00:00.000",
             "0001-01-01 00:00:00", "0001-01-01T00:00");
    /* beyond year 9999, as java.time writes it */
    check_ts(253402300800000LL, "+10000-01-01T00:00:00.000", "+10000-01-01 00:00:00.000",
             "+10000-01-01 00:00:00", "+10000-01-01T00:00");
    /* a short buffer: cut and terminated, the full length returned */
    char b[11];
    CHECK_EQ_INT(sl_ts_text(b, sizeof b, 0, SL_TS_ISO), 23);
    CHECK_EQ_STR(b, "1970-01-01");
    CHECK_EQ_INT(sl_ts_text(NULL, 0, 0, SL_TS_SQL), 19);
    CHECK_EQ_INT(sl_ts_format(b, sizeof b, 0), 23);
}

static void test_byte_order(void)
{
    unsigned char b[8];
    sl_put_le16(b, 0x0102);
    CHECK(b[0] == 0x02 && b[1] == 0x01);
    CHECK_EQ_INT(sl_get_le16(b), 0x0102);
    sl_put_be16(b, 0x0102);
    CHECK(b[0] == 0x01 && b[1] == 0x02);
    CHECK_EQ_INT(sl_get_be16(b), 0x0102);
    sl_put_le32(b, 0x01020304u);
    CHECK(!memcmp(b, "\x04\x03\x02\x01", 4));
    CHECK_EQ_INT(sl_get_le32(b), 0x01020304);
    sl_put_be32(b, 0x01020304u);
    CHECK(!memcmp(b, "\x01\x02\x03\x04", 4));
    CHECK_EQ_INT(sl_get_be32(b), 0x01020304);
    sl_put_le64(b, 0x0102030405060708ull);
    CHECK(!memcmp(b, "\x08\x07\x06\x05\x04\x03\x02\x01", 8));
    CHECK(sl_get_le64(b) == 0x0102030405060708ull);
    sl_put_be64(b, 0x0102030405060708ull);
    CHECK(!memcmp(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8));
    CHECK(sl_get_be64(b) == 0x0102030405060708ull);
    sl_put_lei64(b, -2);
    CHECK(!memcmp(b, "\xfe\xff\xff\xff\xff\xff\xff\xff", 8));
    CHECK(sl_get_lei64(b) == -2);
    sl_put_ledbl(b, 1.0); /* IEEE 754: 0x3ff0000000000000 */
    CHECK(!memcmp(b, "\x00\x00\x00\x00\x00\x00\xf0\x3f", 8));
    CHECK(sl_get_ledbl(b) == 1.0);
    CHECK(sl_bswap16(0x0102) == 0x0201 && sl_bswap32(0x01020304u) == 0x04030201u &&
          sl_bswap64(0x0102030405060708ull) == 0x0807060504030201ull);
    /* native order: whatever the host's, the same bytes load the same number */
    memcpy(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    uint32_t n32;
    uint64_t n64;
    memcpy(&n32, b, 4);
    memcpy(&n64, b, 8);
    CHECK(sl_load_u32(b) == n32 && sl_load_u64(b) == n64);

    /* cursors: fields of 2, 4 and 8 bytes one after the other */
    unsigned char blob[16];
    unsigned char *p = sl_put_le_n(blob, 0xBEEF, 2);
    p = sl_put_le_n(p, 0x01020304u, 4);
    p = sl_put_le_n(p, 0x1122334455667788ull, 8);
    CHECK_EQ_INT(p - blob, 14);
    CHECK(!memcmp(blob, "\xef\xbe\x04\x03\x02\x01\x88\x77\x66\x55\x44\x33\x22\x11", 14));
    const unsigned char *q = blob;
    CHECK(sl_get_le_n(&q, 2) == 0xBEEF);
    CHECK(sl_get_le_n(&q, 4) == 0x01020304u);
    CHECK(sl_get_le_n(&q, 8) == 0x1122334455667788ull);
    CHECK_EQ_INT(q - blob, 14);
    /* only the low bytes are written */
    p = sl_put_le_n(blob, 0xAABBCCDDull, 2);
    CHECK(blob[0] == 0xDD && blob[1] == 0xCC && p == blob + 2);
    /* FNV-1a 64 of "" and "a" (the published test vectors) */
    CHECK(sl_blob_fnv1a((const unsigned char *)"", 0) == 0xcbf29ce484222325ull);
    CHECK(sl_blob_fnv1a((const unsigned char *)"a", 1) == 0xaf63dc4c8601ec8cull);
}

SL_TEST_MAIN(SL_TEST(test_edit_distance), SL_TEST(test_timestamps), SL_TEST(test_byte_order))
