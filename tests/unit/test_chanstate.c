/*
 * test_chanstate.c -- the channel-state file of unaligned checkpoints
 * (core/chanstate.h). One small file is compared byte for byte with the
 * layout chanstate.h describes, built here by hand with a bitwise CRC-32C
 * of its own; many random sections round-trip in order; damage (a flipped
 * data byte, a flipped header byte, truncation anywhere, a wrong magic, a
 * wrong section count) is an error naming the file, never a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chanstate.h"
#include "sl_test.h"

static char dir[] = "/tmp/sluice-test-chanstate-XXXXXX";
static int dir_made;

/* The test's directory, made by whichever case runs first (each case can
 * also run alone: `test_chanstate test_layout`); emptied and removed at
 * exit. */
static void remove_dir(void)
{
    static const char *const files[] = {"one.state", "many.state", "bad.state", "abort.state"};
    char path[128];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void setup(void)
{
    if (dir_made) return;
    CHECK(mkdtemp(dir) != NULL);
    dir_made = 1;
    atexit(remove_dir);
}

static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
    }
    return ~crc;
}

static void le32(uint8_t *p, uint32_t x)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(x >> (8 * i));
}

static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static void spit(const char *path, const uint8_t *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(buf, 1, n, f) == n);
    fclose(f);
}

static void test_crc_vector(void)
{
    /* the CRC-32C check value of RFC 3720 */
    CHECK(crc32c_bitwise(0, (const uint8_t *)"123456789", 9) == 0xe3069283u);
}

/* One section, byte for byte. */
static void test_layout(void)
{
    char path[128];
    setup();
    snprintf(path, sizeof path, "%s/one.state", dir);
    char err[300];
    sl_cs_writer *w = sl_cs_open(path, err, sizeof err);
    CHECK(w != NULL);
    sl_cs_chan ch = {"src", "agg", 1, 2, 3};
    CHECK(sl_cs_append2(w, SL_CS_INPUT, &ch, "ab", 2, "cde", 3, err, sizeof err) == SL_OK);
    uint64_t size = 0;
    CHECK(sl_cs_finish(w, &size, err, sizeof err) == SL_OK);
    CHECK(access(path, F_OK) == 0);
    uint8_t want[128];
    size_t n = 0;
    memcpy(want, "SLCHST\0\0", 8);
    le32(want + 8, 1);
    le32(want + 12, 0);
    n = 16;
    uint8_t *h = want + n;
    memset(h, 0, 32);
    h[0] = 1;
    h[2] = 3; /* producer uid length */
    h[4] = 3; /* consumer uid length */
    le32(h + 8, 1);
    le32(h + 12, 2);
    le32(h + 16, 3);
    le32(h + 20, 5);
    memcpy(h + 32, "srcaggabcde", 11);
    uint32_t crc = crc32c_bitwise(0, h, 28);
    crc = crc32c_bitwise(crc, h + 32, 11);
    le32(h + 28, crc);
    n += 32 + 11;
    uint8_t *e = want + n;
    e[0] = 0xff;
    e[1] = e[2] = e[3] = 0;
    le32(e + 4, 1);
    le32(e + 8, crc32c_bitwise(0, e, 8));
    n += 12;
    uint8_t got[256];
    size_t gn = slurp(path, got, sizeof got);
    CHECK_EQ_INT((int)gn, (int)n);
    CHECK_EQ_INT((int)size, (int)n);
    CHECK(memcmp(got, want, n) == 0);
}

typedef struct seen {
    int n;
    uint32_t total;
    uint32_t sum; /* of data bytes, weighted by position */
    int bad;
} seen;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

/* the i-th section's expected content, derived from i alone */
static uint32_t sec_len(int i) { return (uint32_t)((i * 7919) % 40000); }
static uint8_t sec_byte(int i, uint32_t k) { return (uint8_t)(i * 31 + k * 17); }

static int check_section(void *ctx, const sl_cs_section *s, char *err, size_t errlen)
{
    seen *sn = ctx;
    int i = sn->n++;
    (void)err;
    (void)errlen;
    char from[32], to[32];
    snprintf(from, sizeof from, "p%d", i % 3);
    snprintf(to, sizeof to, "c%d", i % 5);
    if (s->kind != (i % 2 ? SL_CS_OUTPUT : SL_CS_INPUT) || strcmp(s->ch.from_uid, from) ||
        strcmp(s->ch.to_uid, to) || s->ch.input != (uint32_t)(i % 2) || s->ch.from_subtask != (uint32_t)i ||
        s->ch.to_subtask != (uint32_t)(i + 1) || s->len != sec_len(i))
        sn->bad++;
    for (uint32_t k = 0; k < s->len; k++)
        if (s->data[k] != sec_byte(i, k)) {
            sn->bad++;
            break;
        }
    return SL_OK;
}

static int count_only(void *ctx, const sl_cs_section *s, char *err, size_t errlen)
{
    (void)s;
    (void)err;
    (void)errlen;
    ((seen *)ctx)->n++;
    return SL_OK;
}

static void test_round_trip_and_damage(void)
{
    char path[128];
    setup();
    snprintf(path, sizeof path, "%s/many.state", dir);
    char err[300];
    sl_cs_writer *w = sl_cs_open(path, err, sizeof err);
    CHECK(w != NULL);
    static uint8_t data[40000];
    const int nsec = 60;
    for (int i = 0; i < nsec; i++) {
        for (uint32_t k = 0; k < sec_len(i); k++) data[k] = sec_byte(i, k);
        char from[32], to[32];
        snprintf(from, sizeof from, "p%d", i % 3);
        snprintf(to, sizeof to, "c%d", i % 5);
        sl_cs_chan ch = {from, to, (uint32_t)(i % 2), (uint32_t)i, (uint32_t)(i + 1)};
        uint32_t cut = sec_len(i) ? next_rand() % sec_len(i) : 0;
        CHECK(sl_cs_append2(w, i % 2 ? SL_CS_OUTPUT : SL_CS_INPUT, &ch, data, cut, data + cut,
                            sec_len(i) - cut, err, sizeof err) == SL_OK);
    }
    uint64_t size = 0;
    CHECK(sl_cs_finish(w, &size, err, sizeof err) == SL_OK);
    seen sn = {0};
    CHECK(sl_cs_read(path, check_section, &sn, err, sizeof err) == SL_OK);
    CHECK_EQ_INT(sn.n, nsec);
    CHECK_EQ_INT(sn.bad, 0);

    static uint8_t file[4u << 20];
    size_t fn = slurp(path, file, sizeof file);
    CHECK(fn == size);
    char bad[160];
    setup();
    snprintf(bad, sizeof bad, "%s/bad.state", dir);
    /* truncated anywhere: an error naming the file */
    for (int t = 0; t < 200; t++) {
        size_t cut = next_rand() % fn;
        spit(bad, file, cut);
        seen x = {0};
        err[0] = '\0';
        CHECK(sl_cs_read(bad, count_only, &x, err, sizeof err) == SL_ERR);
        CHECK(strstr(err, "bad.state") != NULL);
    }
    /* a flipped byte anywhere: an error (the checksum or a header bound) */
    for (int t = 0; t < 200; t++) {
        size_t at = next_rand() % fn;
        file[at] ^= (uint8_t)(1u << (next_rand() % 8));
        spit(bad, file, fn);
        seen x = {0};
        err[0] = '\0';
        int rc = sl_cs_read(bad, count_only, &x, err, sizeof err);
        CHECK(rc == SL_ERR);
        CHECK(strstr(err, "bad.state") != NULL);
        slurp(path, file, sizeof file); /* undamaged again */
    }
    /* the end section's count must match */
    uint8_t *end = file + fn - 12;
    le32(end + 4, (uint32_t)nsec + 1);
    le32(end + 8, crc32c_bitwise(0, end, 8));
    spit(bad, file, fn);
    seen x = {0};
    CHECK(sl_cs_read(bad, count_only, &x, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "counts 61 sections") != NULL);
    /* not a channel-state file */
    spit(bad, (const uint8_t *)"SLSTATE\0\1\0\0\0\0\0\0\0", 16);
    CHECK(sl_cs_read(bad, count_only, &x, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "is not a channel-state file") != NULL);
    unlink(bad);
    unlink(path);
}

/* A section over the limit is refused on write; an abort leaves nothing. */
static void test_limits_and_abort(void)
{
    char path[128];
    setup();
    snprintf(path, sizeof path, "%s/abort.state", dir);
    char err[300];
    sl_cs_writer *w = sl_cs_open(path, err, sizeof err);
    CHECK(w != NULL);
    sl_cs_chan ch = {"a", "b", 0, 0, 0};
    CHECK(sl_cs_append2(w, SL_CS_INPUT, &ch, "x", 1, NULL, SL_CS_MAX_DATA, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "out of bounds") != NULL);
    sl_cs_abort(w);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(access(tmp, F_OK) != 0 && access(path, F_OK) != 0);
    sl_cs_abort(NULL);
}


SL_TEST_MAIN(SL_TEST(test_crc_vector), SL_TEST(test_layout), SL_TEST(test_round_trip_and_damage),
             SL_TEST(test_limits_and_abort))
