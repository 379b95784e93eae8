/*
 * test_keygroup.c -- the key hash against published MurmurHash3 x86_32
 * vectors, and the key-group range law: for every parallelism each key
 * group has exactly one owner, the ranges are contiguous and cover
 * [0, maxParallelism), and routing by sl_kg_operator_index agrees with them.
 */
#include "sl_test.h"
#include "keygroup.h"
#include "jobgraph.h"

static void test_murmur3_vectors(void)
{
    CHECK_EQ_INT(sl_murmur3_32("", 0, 0), 0);
    CHECK_EQ_INT(sl_murmur3_32("", 0, 1), 0x514E28B7u);
    CHECK_EQ_INT(sl_murmur3_32("", 0, 0xffffffffu), 0x81F16F39u);
    CHECK_EQ_INT(sl_murmur3_32("hello", 5, 0), 0x248BFA47u);
    CHECK_EQ_INT(sl_murmur3_32("\0\0\0\0", 4, 0), 0x2362F9DEu);
    CHECK_EQ_INT(sl_murmur3_32("\xff\xff\xff\xff", 4, 0), 0x76293B50u);
    CHECK_EQ_INT(sl_murmur3_32("aaaa", 4, 0x9747b28cu), 0x5A97808Au);
    CHECK_EQ_INT(sl_murmur3_32("abc", 3, 0), 0xB3DD93FAu);
    CHECK_EQ_INT(sl_murmur3_32("Hello, world!", 13, 1234), 0xFAF6CDB3u);
    CHECK_EQ_INT(sl_murmur3_32("The quick brown fox jumps over the lazy dog", 43, 0x9747b28cu),
                 0x2FA826CDu);
}

static void test_murmur3_unaligned(void)
{
    /* The same bytes at every alignment hash the same. */
    char buf[32];
    uint32_t want = sl_murmur3_32("hello world", 11, 7);
    for (int off = 0; off < 8; off++) {
        memcpy(buf + off, "hello world", 11);
        CHECK_EQ_INT(sl_murmur3_32(buf + off, 11, 7), want);
    }
}

/* Check the whole law for one (p, maxP). Returns 0 on success. */
static int check_ranges(int p, int maxp)
{
    int expect_first = 0;
    for (int i = 0; i < p; i++) {
        int first, last;
        sl_kg_range(i, p, maxp, &first, &last);
        if (first != expect_first) return 1; /* contiguous, no gap or overlap */
        if (last < first - 1) return 2;      /* empty only when p > maxP */
        for (int kg = first; kg <= last; kg++)
            if (sl_kg_operator_index(kg, p, maxp) != i) return 3;
        expect_first = last + 1;
    }
    if (expect_first != maxp) return 4; /* covers [0, maxP) */
    return 0;
}

static void test_ranges_maxp_128(void)
{
    for (int p = 1; p <= 128; p++) {
        int rc = check_ranges(p, 128);
        if (rc) fprintf(stderr, "p=%d rc=%d\n", p, rc);
        CHECK_EQ_INT(rc, 0);
    }
}

static void test_ranges_maxp_1000(void)
{
    for (int p = 1; p <= 1000; p++) {
        int rc = check_ranges(p, 1000);
        if (rc) fprintf(stderr, "p=%d rc=%d\n", p, rc);
        CHECK_EQ_INT(rc, 0);
    }
}

static void test_ranges_maxp_32768_sampled(void)
{
    static const int ps[] = {1, 2, 3, 7, 10, 64, 100, 127, 1000, 4097, 9999, 16384, 32767, 32768};
    for (size_t i = 0; i < SL_ARRAY_LEN(ps); i++) {
        int rc = check_ranges(ps[i], 32768);
        if (rc) fprintf(stderr, "p=%d rc=%d\n", ps[i], rc);
        CHECK_EQ_INT(rc, 0);
    }
}

static void test_ranges_exact(void)
{
    /* Worked by hand from [(i*maxP + p - 1)/p, ((i+1)*maxP - 1)/p]. */
    int f, l;
    sl_kg_range(0, 3, 128, &f, &l);
    CHECK_EQ_INT(f, 0);
    CHECK_EQ_INT(l, 42);
    sl_kg_range(1, 3, 128, &f, &l);
    CHECK_EQ_INT(f, 43);
    CHECK_EQ_INT(l, 85);
    sl_kg_range(2, 3, 128, &f, &l);
    CHECK_EQ_INT(f, 86);
    CHECK_EQ_INT(l, 127);
    CHECK_EQ_INT(sl_kg_operator_index(42, 3, 128), 0);
    CHECK_EQ_INT(sl_kg_operator_index(43, 3, 128), 1);
    CHECK_EQ_INT(sl_kg_operator_index(127, 3, 128), 2);
}

static void test_kg_of_key(void)
{
    /* 0x248BFA47 = 613153351; mod 128 = 71, mod 1000 = 351. */
    CHECK_EQ_INT(sl_kg_of_key("hello", 5, 128), 71);
    CHECK_EQ_INT(sl_kg_of_key("hello", 5, 1000), 351);
    /* A hash with the top bit set stays non-negative: 0xFAF6CDB3 % 128 = 0x33. */
    CHECK_EQ_INT(sl_kg_of_hash(0xFAF6CDB3u, 128), 0x33);
}

static void test_default_max_parallelism(void)
{
    CHECK_EQ_INT(sl_kg_default_max_parallelism(1), 128);
    CHECK_EQ_INT(sl_kg_default_max_parallelism(4), 128);
    CHECK_EQ_INT(sl_kg_default_max_parallelism(85), 128);  /* 127 -> 128 */
    CHECK_EQ_INT(sl_kg_default_max_parallelism(86), 256);  /* 129 -> 256 */
    CHECK_EQ_INT(sl_kg_default_max_parallelism(100), 256);
    CHECK_EQ_INT(sl_kg_default_max_parallelism(171), 256); /* 171 + 85 = 256 exactly */
    CHECK_EQ_INT(sl_kg_default_max_parallelism(172), 512); /* 258 -> 512 */
    CHECK_EQ_INT(sl_kg_default_max_parallelism(30000), 32768);
    CHECK_EQ_INT(sl_kg_default_max_parallelism(2147483647), 32768);
}

SL_TEST_MAIN(SL_TEST(test_murmur3_vectors), SL_TEST(test_murmur3_unaligned),
             SL_TEST(test_ranges_maxp_128), SL_TEST(test_ranges_maxp_1000),
             SL_TEST(test_ranges_maxp_32768_sampled), SL_TEST(test_ranges_exact),
             SL_TEST(test_kg_of_key), SL_TEST(test_default_max_parallelism))
