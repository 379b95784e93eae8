/*
 * test_state.c -- keyed state, every case against both backends.
 *
 * Each test_* runs its body once for the hashmap and once for RocksDB,
 * inside a fresh temporary directory that is removed afterwards. Expected
 * values are computed by the test from its own data (strings built with
 * snprintf, an ordering written out field by field rather than through the
 * encoded key), never read back from the code under test.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "keygroup.h"
#include "sl_test.h"
#include "state.h"

#define MAXP 128

static char tmp_root[256];
static int db_seq;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void tmp_make(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmp_root, sizeof tmp_root, "%s/sl-state-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        exit(2);
    }
}

static void tmp_remove(void) { nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static const char *kind_name(sl_backend_kind k) { return k == SL_BACKEND_HASHMAP ? "hashmap" : "rocksdb"; }

/* Open a backend; RocksDB gets a new directory under tmp_root. */
static sl_kstate *open_kind(sl_backend_kind kind, int first, int last)
{
    char dir[512], err[256] = "";
    snprintf(dir, sizeof dir, "%s/db-%d", tmp_root, ++db_seq);
    sl_kstate *s = sl_kstate_open(kind, dir, MAXP, first, last, err, sizeof err);
    if (!s) fprintf(stderr, "open %s: %s\n", kind_name(kind), err);
    return s;
}

/* Run body for both backends, each in a fresh temporary directory. */
static void both(void (*body)(sl_backend_kind))
{
    const sl_backend_kind kinds[] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};
    for (size_t i = 0; i < 2 && !sl_test_failed_; i++) {
        tmp_make();
        body(kinds[i]);
        if (sl_test_failed_) fprintf(stderr, "  (backend: %s)\n", kind_name(kinds[i]));
        tmp_remove();
    }
}

/* Run body once in a fresh temporary directory, removed even on failure. */
static void in_tmp(void (*body)(void))
{
    tmp_make();
    body();
    tmp_remove();
}

static int kg_of(const void *k, size_t n) { return sl_kg_of_key(k, n, MAXP); }

static void set_key_str(sl_kstate *s, const char *k)
{
    sl_kstate_set_key(s, k, strlen(k), kg_of(k, strlen(k)));
}

/* 1 if the state holds exactly `want` (NULL: absent) at (sid, ns) of the current key */
static int holds(sl_kstate *s, int sid, const char *ns, const void *want, size_t wlen)
{
    const void *v;
    size_t n;
    char err[256];
    int rc = sl_kstate_get(s, sid, ns, strlen(ns), &v, &n, err, sizeof err);
    if (!want) return rc == SL_DONE;
    return rc == SL_OK && n == wlen && (wlen == 0 || memcmp(v, want, wlen) == 0);
}

/* ---- put / get / del ---------------------------------------------------- */

static void body_put_get_del(sl_backend_kind kind)
{
    char err[256];
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    CHECK_EQ_INT(sl_kstate_kind(s), kind);
    CHECK_EQ_INT(sl_kstate_register(s, "v"), 0);
    set_key_str(s, "k1");
    CHECK(holds(s, 0, "", NULL, 0));
    CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, "a", 1, err, sizeof err), SL_OK);
    CHECK(holds(s, 0, "", "a", 1));
    CHECK_EQ_INT(sl_kstate_entries(s), 1);
    CHECK_EQ_INT(sl_kstate_bytes(s), 2 + 0 + 1);

    /* overwrite with a value growing a byte at a time, past any slack */
    uint8_t buf[600];
    for (size_t len = 0; len <= sizeof buf; len += 7) {
        for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)(i * 7 + len);
        CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, buf, len, err, sizeof err), SL_OK);
        const void *v;
        size_t n;
        CHECK_EQ_INT(sl_kstate_get(s, 0, "", 0, &v, &n, err, sizeof err), SL_OK);
        CHECK_EQ_INT(n, len);
        CHECK(len == 0 || memcmp(v, buf, len) == 0);
        CHECK_EQ_INT((uintptr_t)v % 8, 0); /* values come 8-byte aligned */
        CHECK_EQ_INT(sl_kstate_entries(s), 1);
        CHECK_EQ_INT(sl_kstate_bytes(s), 2 + len);
    }
    /* shrink back, then an empty value is still present */
    CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, "xyz", 3, err, sizeof err), SL_OK);
    CHECK(holds(s, 0, "", "xyz", 3));
    CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, NULL, 0, err, sizeof err), SL_OK);
    CHECK(holds(s, 0, "", "", 0));
    CHECK_EQ_INT(sl_kstate_bytes(s), 2);

    CHECK_EQ_INT(sl_kstate_del(s, 0, "", 0, err, sizeof err), SL_OK);
    CHECK(holds(s, 0, "", NULL, 0));
    CHECK_EQ_INT(sl_kstate_entries(s), 0);
    CHECK_EQ_INT(sl_kstate_bytes(s), 0);
    CHECK_EQ_INT(sl_kstate_del(s, 0, "", 0, err, sizeof err), SL_OK); /* absent: fine */
    CHECK_EQ_INT(sl_kstate_entries(s), 0);

    /* a blind put (no get before it) and a blind delete keep the counters */
    set_key_str(s, "k2");
    CHECK_EQ_INT(sl_kstate_put(s, 0, "n", 1, "1234", 4, err, sizeof err), SL_OK);
    set_key_str(s, "k3");
    CHECK_EQ_INT(sl_kstate_put(s, 0, "n", 1, "12", 2, err, sizeof err), SL_OK);
    set_key_str(s, "k2");
    CHECK_EQ_INT(sl_kstate_put(s, 0, "n", 1, "123456", 6, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_kstate_entries(s), 2);
    CHECK_EQ_INT(sl_kstate_bytes(s), (2 + 1 + 6) + (2 + 1 + 2));
    set_key_str(s, "k3");
    CHECK_EQ_INT(sl_kstate_del(s, 0, "n", 1, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_kstate_entries(s), 1);
    CHECK_EQ_INT(sl_kstate_bytes(s), 2 + 1 + 6);
    sl_kstate_close(s);
}

static void test_put_get_del(void) { both(body_put_get_del); }

static void body_errors(sl_backend_kind kind)
{
    char err[256] = "";
    const void *v;
    size_t n;
    sl_kstate *s = open_kind(kind, 0, 63);
    CHECK(s);
    /* no key yet */
    CHECK_EQ_INT(sl_kstate_register(s, "v"), 0);
    CHECK_EQ_INT(sl_kstate_get(s, 0, "", 0, &v, &n, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "no current key"));
    /* unregistered state id */
    sl_kstate_set_key(s, "k", 1, 5);
    CHECK_EQ_INT(sl_kstate_put(s, 1, "", 0, "x", 1, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "state id 1 is not registered"));
    CHECK_EQ_INT(sl_kstate_get(s, -1, "", 0, &v, &n, err, sizeof err), SL_ERR);
    /* a key group this subtask does not own */
    sl_kstate_set_key(s, "k", 1, 100);
    CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, "x", 1, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "key group 100 is not owned"));
    CHECK_EQ_INT(sl_kstate_del(s, 0, "", 0, err, sizeof err), SL_ERR);
    /* a key longer than the u16 length can say */
    size_t big = 70000;
    char *key = calloc(1, big);
    sl_kstate_set_key(s, key, big, 3);
    free(key);
    CHECK_EQ_INT(sl_kstate_get(s, 0, "", 0, &v, &n, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "70000 bytes"));
    /* a good key again clears it; nothing was written by the failures */
    sl_kstate_set_key(s, "k", 1, 5);
    CHECK_EQ_INT(sl_kstate_get(s, 0, "", 0, &v, &n, err, sizeof err), SL_DONE);
    CHECK_EQ_INT(sl_kstate_entries(s), 0);
    /* the longest key allowed works */
    key = malloc(65535);
    memset(key, 'k', 65535);
    sl_kstate_set_key(s, key, 65535, 7);
    free(key);
    CHECK_EQ_INT(sl_kstate_put(s, 0, "ns", 2, "v", 1, err, sizeof err), SL_OK);
    CHECK(holds(s, 0, "ns", "v", 1));
    sl_kstate_close(s);
}

static void test_errors(void) { both(body_errors); }

static void test_open_errors(void)
{
    char err[256] = "";
    CHECK(!sl_kstate_open(SL_BACKEND_HASHMAP, NULL, 0, 0, 0, err, sizeof err));
    CHECK(strstr(err, "max parallelism 0"));
    CHECK(!sl_kstate_open(SL_BACKEND_HASHMAP, NULL, 128, 10, 128, err, sizeof err));
    CHECK(strstr(err, "[10, 128]"));
    CHECK(!sl_kstate_open(SL_BACKEND_HASHMAP, NULL, 128, 5, 4, err, sizeof err));
    CHECK(!sl_kstate_open(SL_BACKEND_ROCKSDB, NULL, 128, 0, 127, err, sizeof err));
    CHECK(strstr(err, "needs a directory"));
    CHECK(!sl_kstate_open((sl_backend_kind)7, "/tmp/x", 128, 0, 127, err, sizeof err));
    CHECK(strstr(err, "unknown backend"));
}

/* ---- many keys ---------------------------------------------------------- */

#define NKEYS 20000

static void val_of(char *out, size_t cap, int i, int sid, int gen)
{
    /* lengths vary with i so that entries differ in size */
    snprintf(out, cap, "v%d-s%d-g%d-%.*s", i, sid, gen, i % 37, "abcdefghijklmnopqrstuvwxyz0123456789!");
}

static void body_many_keys(sl_backend_kind kind)
{
    char err[256], key[32], val[96];
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    CHECK_EQ_INT(sl_kstate_register(s, "a"), 0);
    CHECK_EQ_INT(sl_kstate_register(s, "b"), 1);
    uint64_t bytes = 0;
    static int kg_seen[MAXP];
    memset(kg_seen, 0, sizeof kg_seen);
    for (int i = 0; i < NKEYS; i++) {
        int kl = snprintf(key, sizeof key, "key-%d", i);
        sl_kstate_set_key(s, key, (size_t)kl, kg_of(key, (size_t)kl));
        kg_seen[kg_of(key, (size_t)kl)] = 1;
        for (int sid = 0; sid < 2; sid++) {
            val_of(val, sizeof val, i, sid, 0);
            CHECK_EQ_INT(sl_kstate_put(s, sid, "w", 1, val, strlen(val), err, sizeof err), SL_OK);
            bytes += (size_t)kl + 1 + strlen(val);
        }
    }
    int groups = 0;
    for (int g = 0; g < MAXP; g++) groups += kg_seen[g];
    CHECK_EQ_INT(groups, MAXP);
    CHECK_EQ_INT(sl_kstate_entries(s), 2 * NKEYS);
    CHECK_EQ_INT(sl_kstate_bytes(s), bytes);
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        set_key_str(s, key);
        for (int sid = 0; sid < 2; sid++) {
            val_of(val, sizeof val, i, sid, 0);
            CHECK(holds(s, sid, "w", val, strlen(val)));
        }
        CHECK(holds(s, 0, "x", NULL, 0));
    }
    /* delete every third key's state a, rewrite the rest longer */
    uint64_t entries = 2 * NKEYS;
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        set_key_str(s, key);
        if (i % 3 == 0) {
            CHECK_EQ_INT(sl_kstate_del(s, 0, "w", 1, err, sizeof err), SL_OK);
            val_of(val, sizeof val, i, 0, 0);
            bytes -= strlen(key) + 1 + strlen(val);
            entries--;
        } else {
            char old[96];
            val_of(old, sizeof old, i, 0, 0);
            val_of(val, sizeof val, i, 0, 1000 + i);
            CHECK_EQ_INT(sl_kstate_put(s, 0, "w", 1, val, strlen(val), err, sizeof err), SL_OK);
            bytes += strlen(val) - strlen(old);
        }
    }
    CHECK_EQ_INT(sl_kstate_entries(s), entries);
    CHECK_EQ_INT(sl_kstate_bytes(s), bytes);
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        set_key_str(s, key);
        if (i % 3 == 0) {
            CHECK(holds(s, 0, "w", NULL, 0));
        } else {
            val_of(val, sizeof val, i, 0, 1000 + i);
            CHECK(holds(s, 0, "w", val, strlen(val)));
        }
        val_of(val, sizeof val, i, 1, 0);
        CHECK(holds(s, 1, "w", val, strlen(val)));
    }
    sl_kstate_close(s);
}

static void test_many_keys(void) { both(body_many_keys); }

/* ---- namespaces --------------------------------------------------------- */

static void body_namespaces(sl_backend_kind kind)
{
    char err[256];
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    CHECK_EQ_INT(sl_kstate_register(s, "a"), 0);
    CHECK_EQ_INT(sl_kstate_register(s, "b"), 1);
    const char *nss[] = {"", "w1", "w10", "w2", "\x00\x00\x00\x01"};
    const size_t nsl[] = {0, 2, 3, 2, 4};
    /* key "ab" with namespace "c" and key "abc" with namespace "" must differ */
    const char *keys[] = {"ab", "abc"};
    for (int k = 0; k < 2; k++) {
        set_key_str(s, keys[k]);
        for (int sid = 0; sid < 2; sid++)
            for (int n = 0; n < 5; n++) {
                char v[32];
                int vl = snprintf(v, sizeof v, "%s|%d|%d", keys[k], sid, n);
                CHECK_EQ_INT(sl_kstate_put(s, sid, nss[n], nsl[n], v, (size_t)vl, err, sizeof err),
                             SL_OK);
            }
        CHECK_EQ_INT(sl_kstate_put(s, 0, "c", 1, keys[k], strlen(keys[k]), err, sizeof err), SL_OK);
    }
    CHECK_EQ_INT(sl_kstate_entries(s), 2 * (2 * 5 + 1));
    for (int k = 0; k < 2; k++) {
        set_key_str(s, keys[k]);
        for (int sid = 0; sid < 2; sid++)
            for (int n = 0; n < 5; n++) {
                char v[32];
                int vl = snprintf(v, sizeof v, "%s|%d|%d", keys[k], sid, n);
                const void *got;
                size_t gl;
                CHECK_EQ_INT(sl_kstate_get(s, sid, nss[n], nsl[n], &got, &gl, err, sizeof err), SL_OK);
                CHECK_EQ_INT(gl, vl);
                CHECK(memcmp(got, v, gl) == 0);
            }
        CHECK(holds(s, 0, "c", keys[k], strlen(keys[k])));
        CHECK(holds(s, 1, "c", NULL, 0));
    }
    /* deleting one namespace leaves the others */
    set_key_str(s, "ab");
    CHECK_EQ_INT(sl_kstate_del(s, 0, "w1", 2, err, sizeof err), SL_OK);
    CHECK(holds(s, 0, "w1", NULL, 0));
    CHECK(holds(s, 1, "w1", "ab|1|1", 6));
    CHECK(holds(s, 0, "w10", "ab|0|2", 6));
    set_key_str(s, "abc");
    CHECK(holds(s, 0, "w1", "abc|0|1", 7));
    sl_kstate_close(s);
}

static void test_namespaces(void) { both(body_namespaces); }

/* ---- scan_key ----------------------------------------------------------- */

typedef struct {
    int n, stop_after;
    char seen[16][64];
} scan_ctx;

static int scan_cb(void *vctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    scan_ctx *c = vctx;
    if (c->n < 16)
        snprintf(c->seen[c->n], sizeof c->seen[0], "%.*s=%.*s", (int)nslen, (const char *)ns,
                 (int)vlen, (const char *)val);
    c->n++;
    return c->stop_after && c->n >= c->stop_after;
}

static void body_scan_key(sl_backend_kind kind)
{
    char err[256];
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    CHECK_EQ_INT(sl_kstate_register(s, "a"), 0);
    CHECK_EQ_INT(sl_kstate_register(s, "b"), 1);
    const char *nss[] = {"b", "a", "ab", "", "~~"};
    set_key_str(s, "K");
    for (int i = 0; i < 5; i++) {
        char v[16];
        snprintf(v, sizeof v, "v%d", i);
        CHECK_EQ_INT(sl_kstate_put(s, 0, nss[i], strlen(nss[i]), v, 2, err, sizeof err), SL_OK);
    }
    CHECK_EQ_INT(sl_kstate_put(s, 1, "a", 1, "other-sid", 9, err, sizeof err), SL_OK);
    /* neighbours: a longer key with K as prefix, a key sorting right after */
    set_key_str(s, "KK");
    CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, "kk", 2, err, sizeof err), SL_OK);
    set_key_str(s, "L");
    CHECK_EQ_INT(sl_kstate_put(s, 0, "a", 1, "l", 1, err, sizeof err), SL_OK);
    /* plus filler in every key group so the scan has something to skip */
    for (int i = 0; i < 2000; i++) {
        char k[24];
        snprintf(k, sizeof k, "f%d", i);
        set_key_str(s, k);
        CHECK_EQ_INT(sl_kstate_put(s, 0, "a", 1, "f", 1, err, sizeof err), SL_OK);
    }

    set_key_str(s, "K");
    scan_ctx c = {0};
    CHECK_EQ_INT(sl_kstate_scan_key(s, 0, scan_cb, &c, err, sizeof err), SL_OK);
    CHECK_EQ_INT(c.n, 5);
    /* namespaces in bytewise order, shorter first on a common prefix */
    CHECK_EQ_STR(c.seen[0], "=v3");
    CHECK_EQ_STR(c.seen[1], "a=v1");
    CHECK_EQ_STR(c.seen[2], "ab=v2");
    CHECK_EQ_STR(c.seen[3], "b=v0");
    CHECK_EQ_STR(c.seen[4], "~~=v4");

    scan_ctx c1 = {0};
    CHECK_EQ_INT(sl_kstate_scan_key(s, 1, scan_cb, &c1, err, sizeof err), SL_OK);
    CHECK_EQ_INT(c1.n, 1);
    CHECK_EQ_STR(c1.seen[0], "a=other-sid");

    scan_ctx c2 = {.stop_after = 2};
    CHECK_EQ_INT(sl_kstate_scan_key(s, 0, scan_cb, &c2, err, sizeof err), SL_OK);
    CHECK_EQ_INT(c2.n, 2);

    set_key_str(s, "nobody");
    scan_ctx c3 = {0};
    CHECK_EQ_INT(sl_kstate_scan_key(s, 0, scan_cb, &c3, err, sizeof err), SL_OK);
    CHECK_EQ_INT(c3.n, 0);
    CHECK_EQ_INT(sl_kstate_scan_key(s, 2, scan_cb, &c3, err, sizeof err), SL_ERR);
    sl_kstate_close(s);
}

static void test_scan_key(void) { both(body_scan_key); }

/* A key's scan as text "ns=val;..." (sid sid of the current key). */
#define SCAN_TEXT 16384
static int scan_cb_text(void *vctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    char *out = vctx;
    size_t at = strlen(out);
    snprintf(out + at, SCAN_TEXT - at, "%.*s=%.*s;", (int)nslen, (const char *)ns, (int)vlen,
             (const char *)val);
    return 0;
}

/* The value of model number v: its digits, padded with '.' to len bytes. */
static size_t sk_value(char *out, int v, int len)
{
    int n = snprintf(out, 256, "%d", v);
    while (n < len) out[n++] = '.';
    out[n] = '\0';
    return (size_t)n;
}

/* Random puts, overwrites and deletes of many keys' namespaces on both
 * backends at once, a snapshot held across part of them, scans of random
 * keys in between (the hashmap's key index is built at the first scan of a
 * state id and kept from then on): every scan gives the same entries in the
 * same order on both backends, and the same as a model of the live entries.
 * Values change size (the hashmap reallocates an entry that outgrows its
 * room, the RocksDB buffer writes a new version of it), and large values
 * of a third state fill the RocksDB write buffer now and then, so scans
 * also run across flushes (the iterator they keep is renewed). */
static void body_scan_key_random(void)
{
    enum { SK_KEYS = 40, SK_NS = 24 };
    static int model[2][SK_KEYS][SK_NS][2]; /* value number, length; length 0 = absent */
    memset(model, 0, sizeof model);
    char err[256];
    sl_kstate *s[2] = {open_kind(SL_BACKEND_HASHMAP, 0, MAXP - 1),
                       open_kind(SL_BACKEND_ROCKSDB, 0, MAXP - 1)};
    CHECK(s[0] && s[1]);
    for (int b = 0; b < 2; b++) {
        CHECK_EQ_INT(sl_kstate_register(s[b], "x"), 0);
        CHECK_EQ_INT(sl_kstate_register(s[b], "y"), 1);
        CHECK_EQ_INT(sl_kstate_register(s[b], "filler"), 2);
    }
    static char filler[40000];
    memset(filler, 'f', sizeof filler);
    uint64_t r = 0x9e3779b97f4a7c15ULL;
    sl_ksnap *snap = NULL;
    int scans = 0, nonempty = 0;
    for (int step = 0; step < 12000; step++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        int key = (int)(r % SK_KEYS), ns = (int)((r >> 8) % SK_NS), sid = (int)((r >> 16) % 2);
        int op = (int)((r >> 20) % 10), num = (int)((r >> 32) % 1000);
        int len = (r >> 44) % 4 ? 1 + (int)((r >> 48) % 8) : 1 + (int)((r >> 48) % 200);
        char k[16], n[8], v[256];
        snprintf(k, sizeof k, "key%d", key);
        snprintf(n, sizeof n, "n%02d", ns);
        size_t vlen = sk_value(v, num, len);
        if (step == 2000 || step == 7000) snap = sl_kstate_snapshot(s[0], err, sizeof err);
        if (step == 4000 || step == 9000) {
            sl_ksnap_release(snap);
            snap = NULL;
        }
        if (step % 40 == 0)
            for (int b = 0; b < 2; b++) {
                set_key_str(s[b], k);
                CHECK_EQ_INT(sl_kstate_put(s[b], 2, n, strlen(n), filler, sizeof filler, err,
                                           sizeof err), SL_OK);
            }
        for (int b = 0; b < 2; b++) {
            set_key_str(s[b], k);
            if (op < 6)
                CHECK_EQ_INT(sl_kstate_put(s[b], sid, n, strlen(n), v, vlen, err, sizeof err), SL_OK);
            else if (op < 9) CHECK_EQ_INT(sl_kstate_del(s[b], sid, n, strlen(n), err, sizeof err), SL_OK);
        }
        if (op < 6) model[sid][key][ns][0] = num, model[sid][key][ns][1] = len;
        else if (op < 9) model[sid][key][ns][1] = 0;
        if (op == 9 && step > 500) { /* a scan, of the key just drawn */
            static char got[2][SCAN_TEXT], want[SCAN_TEXT];
            want[0] = '\0';
            for (int b = 0; b < 2; b++) {
                got[b][0] = '\0';
                CHECK_EQ_INT(sl_kstate_scan_key(s[b], sid, scan_cb_text, got[b], err, sizeof err), SL_OK);
            }
            for (int q = 0; q < SK_NS; q++)
                if (model[sid][key][q][1]) {
                    size_t at = strlen(want);
                    sk_value(v, model[sid][key][q][0], model[sid][key][q][1]);
                    snprintf(want + at, sizeof want - at, "n%02d=%s;", q, v);
                }
            CHECK_EQ_STR(got[0], want);
            CHECK_EQ_STR(got[1], want);
            scans++;
            nonempty += want[0] != '\0';
        }
    }
    CHECK(scans > 600 && nonempty > 400);
    if (snap) sl_ksnap_release(snap);
    sl_kstate_close(s[0]);
    sl_kstate_close(s[1]);
}

static void test_scan_key_random(void) { in_tmp(body_scan_key_random); }

/* ---- register ----------------------------------------------------------- */

static void body_register(sl_backend_kind kind)
{
    sl_kstate *s = open_kind(kind, 0, 0);
    sl_kstate *t = open_kind(kind, 0, 0);
    CHECK(s && t);
    char name[24];
    for (int i = 0; i < 255; i++) {
        snprintf(name, sizeof name, "state-%d", i);
        CHECK_EQ_INT(sl_kstate_register(s, name), i);
        CHECK_EQ_INT(sl_kstate_register(t, name), i);
    }
    CHECK_EQ_INT(sl_kstate_register(s, "state-0"), 0);
    CHECK_EQ_INT(sl_kstate_register(s, "state-254"), 254);
    CHECK_EQ_INT(sl_kstate_register(s, "one-too-many"), -1);
    CHECK_EQ_INT(sl_kstate_register(s, NULL), -1);
    /* the highest id is usable */
    char err[256];
    sl_kstate_set_key(s, "k", 1, 0);
    CHECK_EQ_INT(sl_kstate_put(s, 254, "", 0, "x", 1, err, sizeof err), SL_OK);
    CHECK(holds(s, 254, "", "x", 1));
    CHECK(holds(s, 253, "", NULL, 0));
    sl_kstate_close(s);
    sl_kstate_close(t);
}

static void test_register(void) { both(body_register); }

/* ---- snapshots ---------------------------------------------------------- */

#define NSNAP 5000

/* What a snapshot reader checks against: key-<i> (sid 0, ns "n") -> val. */
typedef struct {
    sl_ksnap *snap;
    int expect_gen[2 * NSNAP]; /* per key index: 0 absent, else generation */
    int seen[2 * NSNAP];
    int bad, count;
    char err[256];
    int rc;
} snap_check;

static void gen_val(char *out, size_t cap, int i, int gen)
{
    if (gen == 3) { /* a big one */
        snprintf(out, cap, "g3-%d-%0300d", i, i);
        return;
    }
    snprintf(out, cap, "g%d-%d", gen, i);
}

static int snap_check_cb(void *vctx, const sl_kentry *e)
{
    snap_check *c = vctx;
    char key[32], val[400];
    int i;
    c->count++;
    if (e->sid != 0 || e->nslen != 1 || memcmp(e->ns, "n", 1) != 0 || e->klen >= sizeof key) {
        c->bad++;
        return 0;
    }
    memcpy(key, e->key, e->klen);
    key[e->klen] = '\0';
    if (sscanf(key, "key-%d", &i) != 1 || i < 0 || i >= 2 * NSNAP ||
        e->kg != kg_of(e->key, e->klen)) {
        c->bad++;
        return 0;
    }
    c->seen[i]++;
    gen_val(val, sizeof val, i, c->expect_gen[i]);
    if (!c->expect_gen[i] || e->vlen != strlen(val) || memcmp(e->val, val, e->vlen) != 0) c->bad++;
    return 0;
}

static void *snap_check_all(void *arg)
{
    snap_check *c = arg;
    c->rc = SL_OK;
    for (int kg = 0; kg < MAXP && c->rc == SL_OK; kg++)
        c->rc = sl_ksnap_each(c->snap, kg, snap_check_cb, c, c->err, sizeof c->err);
    return NULL;
}

/* After the walk: every expected key seen once, nothing else. */
static int snap_check_ok(const snap_check *c)
{
    if (c->rc != SL_OK || c->bad) return 0;
    int want = 0;
    for (int i = 0; i < 2 * NSNAP; i++) {
        if (c->seen[i] != (c->expect_gen[i] ? 1 : 0)) return 0;
        want += c->expect_gen[i] != 0;
    }
    return c->count == want;
}

static int put_gen(sl_kstate *s, int i, int gen)
{
    char key[32], val[400], err[256];
    snprintf(key, sizeof key, "key-%d", i);
    set_key_str(s, key);
    if (!gen) return sl_kstate_del(s, 0, "n", 1, err, sizeof err);
    gen_val(val, sizeof val, i, gen);
    return sl_kstate_put(s, 0, "n", 1, val, strlen(val), err, sizeof err);
}

static void body_snapshot_isolation(sl_backend_kind kind)
{
    char err[256];
    static snap_check c1, c2;
    memset(&c1, 0, sizeof c1);
    memset(&c2, 0, sizeof c2);
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    CHECK_EQ_INT(sl_kstate_register(s, "v"), 0);
    int live[2 * NSNAP] = {0};
    for (int i = 0; i < NSNAP; i++) {
        CHECK_EQ_INT(put_gen(s, i, 1), SL_OK);
        live[i] = 1;
    }
    c1.snap = sl_kstate_snapshot(s, err, sizeof err);
    CHECK(c1.snap);
    memcpy(c1.expect_gen, live, sizeof live);

    /* mutate: overwrite, delete, add, grow past the slack */
    for (int i = 0; i < 1000; i++) CHECK_EQ_INT(put_gen(s, i, live[i] = 2), SL_OK);
    for (int i = 1000; i < 2000; i++) CHECK_EQ_INT(put_gen(s, i, live[i] = 0), SL_OK);
    for (int i = NSNAP; i < NSNAP + 1000; i++) CHECK_EQ_INT(put_gen(s, i, live[i] = 2), SL_OK);
    for (int i = 2000; i < 2100; i++) CHECK_EQ_INT(put_gen(s, i, live[i] = 3), SL_OK);

    /* a second snapshot of the changed state, read on another thread while
     * this one keeps changing it */
    c2.snap = sl_kstate_snapshot(s, err, sizeof err);
    CHECK(c2.snap);
    memcpy(c2.expect_gen, live, sizeof live);
    pthread_t th1, th2;
    CHECK_EQ_INT(pthread_create(&th1, NULL, snap_check_all, &c1), 0);
    CHECK_EQ_INT(pthread_create(&th2, NULL, snap_check_all, &c2), 0);
    int failed_puts = 0;
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NSNAP + 1000; i++) {
            int g = (i + round) % 4; /* deletes, puts, big puts, mixed */
            failed_puts += put_gen(s, i, g) != SL_OK;
            live[i] = g;
        }
    pthread_join(th1, NULL);
    pthread_join(th2, NULL);
    CHECK_EQ_INT(failed_puts, 0);
    if (c1.rc != SL_OK) fprintf(stderr, "snapshot 1: %s\n", c1.err);
    CHECK(snap_check_ok(&c1));
    CHECK(snap_check_ok(&c2));

    /* the live state has the final values */
    uint64_t n = 0;
    for (int i = 0; i < NSNAP + 1000; i++) {
        char key[32], val[400];
        snprintf(key, sizeof key, "key-%d", i);
        set_key_str(s, key);
        if (live[i]) {
            gen_val(val, sizeof val, i, live[i]);
            CHECK(holds(s, 0, "n", val, strlen(val)));
            n++;
        } else {
            CHECK(holds(s, 0, "n", NULL, 0));
        }
    }
    CHECK_EQ_INT(sl_kstate_entries(s), n);

    /* a snapshot outlives its state: close first, then read and release */
    sl_ksnap_release(c2.snap);
    sl_kstate_close(s);
    memset(c1.seen, 0, sizeof c1.seen);
    c1.count = 0;
    snap_check_all(&c1);
    CHECK(snap_check_ok(&c1));
    sl_ksnap_release(c1.snap);
    sl_ksnap_release(NULL);
}

static void test_snapshot_isolation(void) { both(body_snapshot_isolation); }

static int count_cb(void *ctx, const sl_kentry *e)
{
    (void)e;
    ++*(int *)ctx;
    return 0;
}

static void body_snapshot_range(sl_backend_kind kind)
{
    char err[256] = "";
    sl_kstate *s = open_kind(kind, 10, 20);
    CHECK(s);
    sl_ksnap *sn = sl_kstate_snapshot(s, err, sizeof err);
    CHECK(sn);
    int calls = 0;
    CHECK_EQ_INT(sl_ksnap_each(sn, 15, count_cb, &calls, err, sizeof err), SL_OK);
    CHECK_EQ_INT(calls, 0); /* empty: the callback is never called */
    CHECK_EQ_INT(sl_ksnap_each(sn, 21, count_cb, &calls, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "key group 21"));
    sl_ksnap_release(sn);
    sl_kstate_close(s);
}

static void test_snapshot_range(void) { both(body_snapshot_range); }

/* ---- snapshot order ------------------------------------------------------ */

typedef struct {
    int sid;
    int kg;
    char key[8];
    size_t klen;
    char ns[4];
    size_t nslen;
    char val[16];
    size_t vlen;
} model_entry;

#define NORD 3000

static model_entry ord[NORD];

/* Encoded-key order spelled out: sid, then key length, then key bytes, then
 * namespace bytes with a shorter namespace first on a common prefix. */
static int model_cmp(const void *pa, const void *pb)
{
    const model_entry *a = pa, *b = pb;
    if (a->kg != b->kg) return a->kg - b->kg;
    if (a->sid != b->sid) return a->sid - b->sid;
    if (a->klen != b->klen) return a->klen < b->klen ? -1 : 1;
    int c = memcmp(a->key, b->key, a->klen);
    if (c) return c;
    size_t n = SL_MIN(a->nslen, b->nslen);
    c = memcmp(a->ns, b->ns, n);
    if (c) return c;
    return (int)a->nslen - (int)b->nslen;
}

static void make_ord(void)
{
    /* keys of 1..4 bytes over a small alphabet (prefixes of one another),
     * namespaces of 0..3 bytes including 0x00 and 0xff */
    uint32_t x = 12345;
    int n = 0;
    while (n < NORD) {
        model_entry e = {0};
        x = x * 1103515245u + 12345u;
        e.sid = (int)(x >> 28) % 3;
        e.klen = 1 + (x >> 20) % 4;
        for (size_t i = 0; i < e.klen; i++) {
            x = x * 1103515245u + 12345u;
            e.key[i] = "ab\x00\xff"[(x >> 16) % 4];
        }
        x = x * 1103515245u + 12345u;
        e.nslen = (x >> 16) % 4;
        for (size_t i = 0; i < e.nslen; i++) {
            x = x * 1103515245u + 12345u;
            e.ns[i] = "\x00\x01z\xff"[(x >> 16) % 4];
        }
        e.kg = kg_of(e.key, e.klen);
        int dup = 0;
        for (int j = 0; j < n && !dup; j++)
            dup = ord[j].sid == e.sid && ord[j].klen == e.klen && ord[j].nslen == e.nslen &&
                  memcmp(ord[j].key, e.key, e.klen) == 0 && memcmp(ord[j].ns, e.ns, e.nslen) == 0;
        if (dup) continue;
        e.vlen = (size_t)snprintf(e.val, sizeof e.val, "val%d", n);
        ord[n++] = e;
    }
}

typedef struct {
    uint8_t *buf;
    size_t len, cap;
} bytes_out;

static void out_add(bytes_out *o, const void *p, size_t n)
{
    if (o->len + n + 8 > o->cap) {
        o->cap = (o->len + n + 8) * 2;
        o->buf = realloc(o->buf, o->cap);
    }
    uint64_t n64 = n;
    memcpy(o->buf + o->len, &n64, 8);
    memcpy(o->buf + o->len + 8, p, n);
    o->len += n + 8;
}

static int serialize_cb(void *vctx, const sl_kentry *e)
{
    bytes_out *o = vctx;
    int hdr[2] = {e->sid, e->kg};
    out_add(o, hdr, sizeof hdr);
    out_add(o, e->key, e->klen);
    out_add(o, e->ns, e->nslen);
    out_add(o, e->val, e->vlen);
    return 0;
}

/* The whole snapshot, key group by key group, as bytes. */
static int snapshot_bytes(sl_kstate *s, bytes_out *o)
{
    char err[256];
    sl_ksnap *sn = sl_kstate_snapshot(s, err, sizeof err);
    if (!sn) return SL_ERR;
    int rc = SL_OK;
    for (int kg = 0; kg < MAXP && rc == SL_OK; kg++)
        rc = sl_ksnap_each(sn, kg, serialize_cb, o, err, sizeof err);
    sl_ksnap_release(sn);
    return rc;
}

static int load_ord(sl_kstate *s, int reverse, int churn)
{
    char err[256];
    for (int k = 0; k < 3; k++) sl_kstate_register(s, k == 0 ? "x" : k == 1 ? "y" : "z");
    for (int j = 0; j < NORD; j++) {
        const model_entry *e = &ord[reverse ? NORD - 1 - j : j];
        sl_kstate_set_key(s, e->key, e->klen, e->kg);
        if (churn && sl_kstate_put(s, e->sid, e->ns, e->nslen, "tmp", 3, err, sizeof err)) return SL_ERR;
        if (sl_kstate_put(s, e->sid, e->ns, e->nslen, e->val, e->vlen, err, sizeof err)) return SL_ERR;
        if (churn && j % 2) { /* delete and put back */
            if (sl_kstate_del(s, e->sid, e->ns, e->nslen, err, sizeof err)) return SL_ERR;
            if (sl_kstate_put(s, e->sid, e->ns, e->nslen, e->val, e->vlen, err, sizeof err))
                return SL_ERR;
        }
    }
    return SL_OK;
}

static void body_snapshot_order(void)
{
    make_ord();
    /* the expected bytes, from the model sorted by its own comparator */
    static model_entry sorted[NORD];
    memcpy(sorted, ord, sizeof ord);
    qsort(sorted, NORD, sizeof sorted[0], model_cmp);
    bytes_out want = {0};
    for (int j = 0; j < NORD; j++) {
        sl_kentry e = {sorted[j].sid, sorted[j].kg, sorted[j].key, sorted[j].klen,
                       sorted[j].ns,  sorted[j].nslen, sorted[j].val, sorted[j].vlen};
        serialize_cb(&want, &e);
    }
    /* hashmap and rocksdb, loaded in different orders with churn */
    sl_kstate *h1 = open_kind(SL_BACKEND_HASHMAP, 0, MAXP - 1);
    sl_kstate *h2 = open_kind(SL_BACKEND_HASHMAP, 0, MAXP - 1);
    sl_kstate *r1 = open_kind(SL_BACKEND_ROCKSDB, 0, MAXP - 1);
    CHECK(h1 && h2 && r1);
    CHECK_EQ_INT(load_ord(h1, 0, 0), SL_OK);
    CHECK_EQ_INT(load_ord(h2, 1, 1), SL_OK);
    CHECK_EQ_INT(load_ord(r1, 1, 1), SL_OK);
    bytes_out b[3] = {{0}};
    CHECK_EQ_INT(snapshot_bytes(h1, &b[0]), SL_OK);
    CHECK_EQ_INT(snapshot_bytes(h2, &b[1]), SL_OK);
    CHECK_EQ_INT(snapshot_bytes(r1, &b[2]), SL_OK);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(b[i].len, want.len);
        CHECK(memcmp(b[i].buf, want.buf, want.len) == 0);
        free(b[i].buf);
    }
    free(want.buf);
    CHECK_EQ_INT(sl_kstate_entries(h1), NORD);
    CHECK_EQ_INT(sl_kstate_entries(r1), NORD);
    CHECK_EQ_INT(sl_kstate_bytes(h1), sl_kstate_bytes(r1));
    sl_kstate_close(h1);
    sl_kstate_close(h2);
    sl_kstate_close(r1);
}

static void test_snapshot_order(void) { in_tmp(body_snapshot_order); }

/* ---- restore ------------------------------------------------------------ */

typedef struct {
    sl_kstate *dst[2];
    int split; /* kg <= split goes to dst[0] */
    int errors;
    char err[256];
} restore_ctx;

static int restore_cb(void *vctx, const sl_kentry *e)
{
    restore_ctx *c = vctx;
    if (sl_kstate_restore(c->dst[e->kg > c->split], e, c->err, sizeof c->err) != SL_OK) c->errors++;
    return 0;
}

#define NREST 6000

static void restore_split(sl_backend_kind from, sl_backend_kind to)
{
    char err[256], key[32], val[64];
    sl_kstate *src = open_kind(from, 0, MAXP - 1);
    CHECK(src);
    CHECK_EQ_INT(sl_kstate_register(src, "s0"), 0);
    CHECK_EQ_INT(sl_kstate_register(src, "s1"), 1);
    for (int i = 0; i < NREST; i++) {
        snprintf(key, sizeof key, "user-%d", i);
        set_key_str(src, key);
        snprintf(val, sizeof val, "a%d", i);
        CHECK_EQ_INT(sl_kstate_put(src, i % 2, "w", 1, val, strlen(val), err, sizeof err), SL_OK);
        if (i % 5 == 0)
            CHECK_EQ_INT(sl_kstate_put(src, 1, "", 0, val, strlen(val), err, sizeof err), SL_OK);
    }
    restore_ctx rc = {.split = 63};
    rc.dst[0] = open_kind(to, 0, 63);
    rc.dst[1] = open_kind(to, 64, 127);
    CHECK(rc.dst[0] && rc.dst[1]);
    for (int d = 0; d < 2; d++) {
        CHECK_EQ_INT(sl_kstate_register(rc.dst[d], "s0"), 0);
        CHECK_EQ_INT(sl_kstate_register(rc.dst[d], "s1"), 1);
    }
    sl_ksnap *sn = sl_kstate_snapshot(src, err, sizeof err);
    CHECK(sn);
    for (int kg = 0; kg < MAXP; kg++)
        CHECK_EQ_INT(sl_ksnap_each(sn, kg, restore_cb, &rc, err, sizeof err), SL_OK);
    sl_ksnap_release(sn);
    CHECK_EQ_INT(rc.errors, 0);
    CHECK_EQ_INT(sl_kstate_entries(rc.dst[0]) + sl_kstate_entries(rc.dst[1]),
                 sl_kstate_entries(src));
    CHECK_EQ_INT(sl_kstate_bytes(rc.dst[0]) + sl_kstate_bytes(rc.dst[1]), sl_kstate_bytes(src));
    CHECK(sl_kstate_entries(rc.dst[0]) > 0 && sl_kstate_entries(rc.dst[1]) > 0);
    /* every entry is in exactly the destination owning its key group */
    for (int i = 0; i < NREST; i++) {
        int kl = snprintf(key, sizeof key, "user-%d", i);
        int kg = kg_of(key, (size_t)kl);
        snprintf(val, sizeof val, "a%d", i);
        sl_kstate *own = rc.dst[kg > 63], *other = rc.dst[kg <= 63];
        sl_kstate_set_key(own, key, (size_t)kl, kg);
        CHECK(holds(own, i % 2, "w", val, strlen(val)));
        CHECK(holds(own, 1 - i % 2, "w", NULL, 0));
        CHECK(holds(own, 1, "", i % 5 == 0 ? val : NULL, strlen(val)));
        /* the other one does not own the key group at all */
        sl_kstate_set_key(other, key, (size_t)kl, kg);
        const void *v;
        size_t n;
        CHECK_EQ_INT(sl_kstate_get(other, 0, "w", 1, &v, &n, err, sizeof err), SL_ERR);
    }
    sl_kstate_close(src);
    sl_kstate_close(rc.dst[0]);
    sl_kstate_close(rc.dst[1]);
}

static void test_restore_split(void)
{
    const sl_backend_kind k[2] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};
    for (int a = 0; a < 2 && !sl_test_failed_; a++)
        for (int b = 0; b < 2 && !sl_test_failed_; b++) {
            tmp_make();
            restore_split(k[a], k[b]);
            if (sl_test_failed_)
                fprintf(stderr, "  (from %s to %s)\n", kind_name(k[a]), kind_name(k[b]));
            tmp_remove();
        }
}

static void body_restore_errors(sl_backend_kind kind)
{
    char err[256] = "";
    sl_kstate *s = open_kind(kind, 0, 63);
    CHECK(s);
    sl_kentry e = {.sid = 0, .kg = 64, .key = "k", .klen = 1, .ns = "", .nslen = 0,
                   .val = "v", .vlen = 1};
    CHECK_EQ_INT(sl_kstate_restore(s, &e, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "key group 64 is outside"));
    CHECK(strstr(err, "[0, 63]"));
    e.kg = -1;
    CHECK_EQ_INT(sl_kstate_restore(s, &e, err, sizeof err), SL_ERR);
    e.kg = 3;
    e.sid = 255;
    CHECK_EQ_INT(sl_kstate_restore(s, &e, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "state id 255"));
    e.sid = 0;
    e.klen = 70000;
    CHECK_EQ_INT(sl_kstate_restore(s, &e, err, sizeof err), SL_ERR);
    e.klen = 1;
    CHECK_EQ_INT(sl_kstate_restore(s, NULL, err, sizeof err), SL_ERR);
    CHECK_EQ_INT(sl_kstate_entries(s), 0);
    /* a good one lands */
    CHECK_EQ_INT(sl_kstate_restore(s, &e, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_kstate_entries(s), 1);
    CHECK_EQ_INT(sl_kstate_register(s, "v"), 0);
    sl_kstate_set_key(s, "k", 1, 3);
    CHECK(holds(s, 0, "", "v", 1));
    sl_kstate_close(s);
}

static void test_restore_errors(void) { both(body_restore_errors); }

/* ---- RocksDB directories ------------------------------------------------ */

static void body_rocksdb_bad_dir(void)
{
    char path[512], dir[600], err[512] = "";
    snprintf(path, sizeof path, "%s/plain-file", tmp_root);
    FILE *f = fopen(path, "w");
    CHECK(f);
    fclose(f);
    /* below a regular file: cannot be created */
    snprintf(dir, sizeof dir, "%s/db", path);
    CHECK(!sl_kstate_open(SL_BACKEND_ROCKSDB, dir, MAXP, 0, 127, err, sizeof err));
    CHECK(strstr(err, "cannot create directory"));
    CHECK(strstr(err, dir));
    CHECK(strstr(err, "Not a directory"));
    /* the path itself is a regular file: not emptied, refused */
    CHECK(!sl_kstate_open(SL_BACKEND_ROCKSDB, path, MAXP, 0, 127, err, sizeof err));
    CHECK(strstr(err, "is not a directory"));
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode));
}

static void test_rocksdb_bad_dir(void) { in_tmp(body_rocksdb_bad_dir); }

static void body_rocksdb_dir_lifecycle(void)
{
    char dir[512], stale[600], err[512] = "";
    /* nested, partly missing path with a stale file from an earlier run */
    snprintf(dir, sizeof dir, "%s/a/b/db", tmp_root);
    sl_kstate *s = sl_kstate_open(SL_BACKEND_ROCKSDB, dir, MAXP, 0, 127, err, sizeof err);
    CHECK(s);
    sl_kstate_close(s);
    struct stat st;
    CHECK(stat(dir, &st) != 0 && errno == ENOENT); /* close removed it */
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(stale, sizeof stale, "%s/stale", dir);
    FILE *f = fopen(stale, "w");
    CHECK(f);
    fclose(f);
    s = sl_kstate_open(SL_BACKEND_ROCKSDB, dir, MAXP, 0, 127, err, sizeof err);
    CHECK(s);
    CHECK(stat(stale, &st) != 0 && errno == ENOENT); /* emptied at open */
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    sl_kstate_close(s);
}

static void test_rocksdb_dir_lifecycle(void) { in_tmp(body_rocksdb_dir_lifecycle); }

/* ---- the RocksDB write buffer against the hashmap ----------------------------- */

/* A seeded random mix of gets, puts (growing and shrinking values, blind and
 * after a get), deletes, scans and snapshots over 60,000 entries -- far more
 * than RocksDB's write buffer holds, so it flushes many times, before scans,
 * before snapshots and when full -- on both backends at once: every get
 * answers the same, the counters agree at every step, and every snapshot
 * holds the same entries in the same order. */
typedef struct snap_dump {
    uint64_t h;                 /* FNV-1a over every entry of every key group */
    uint64_t n;
} snap_dump;

static int dump_entry(void *ctx, const sl_kentry *e)
{
    snap_dump *d = ctx;
    const uint8_t *parts[3] = {e->key, e->ns, e->val};
    size_t lens[3] = {e->klen, e->nslen, e->vlen};
    d->h = (d->h ^ (uint64_t)e->sid) * 0x100000001b3ull;
    for (int p = 0; p < 3; p++) {
        d->h = (d->h ^ lens[p]) * 0x100000001b3ull;
        for (size_t i = 0; i < lens[p]; i++) d->h = (d->h ^ parts[p][i]) * 0x100000001b3ull;
    }
    d->n++;
    return 0;
}

static snap_dump dump(sl_kstate *s)
{
    char err[256];
    snap_dump d = {1469598103934665603ull, 0};
    sl_ksnap *sn = sl_kstate_snapshot(s, err, sizeof err);
    if (!sn) return d;
    for (int kg = 0; kg < MAXP; kg++) sl_ksnap_each(sn, kg, dump_entry, &d, err, sizeof err);
    sl_ksnap_release(sn);
    return d;
}

static int count_scan(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    (*(uint64_t *)ctx) += 1 + nslen + vlen;
    return 0;
}

static void body_write_buffer_model(void)
{
    sl_kstate *hm = open_kind(SL_BACKEND_HASHMAP, 0, MAXP - 1);
    sl_kstate *rd = open_kind(SL_BACKEND_ROCKSDB, 0, MAXP - 1);
    SL_ASSERT(hm && rd);
    sl_kstate *both_s[2] = {hm, rd};
    for (int b = 0; b < 2; b++) {
        CHECK_EQ_INT(sl_kstate_register(both_s[b], "a"), 0);
        CHECK_EQ_INT(sl_kstate_register(both_s[b], "b"), 1);
    }
    uint64_t x = 12345;
    char err[256], key[32], ns[8];
    static uint8_t val[4096];
    int mismatches = 0, snapshots = 0;
    for (int step = 0; step < 400000 && !mismatches; step++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(x >> 33);
        int k = (int)(r % 60000), sid = (r >> 16) & 1, op = (int)((x >> 20) % 100);
        snprintf(key, sizeof key, "k%d", k);
        snprintf(ns, sizeof ns, "n%u", (unsigned)((r >> 8) % 3));
        size_t vlen = (x >> 40) % 97 == 0 ? 1000 + (x >> 44) % 3000 : (x >> 40) % 200;
        for (size_t i = 0; i < vlen; i++) val[i] = (uint8_t)(k + i + step);
        int rc[2];
        const void *got[2];
        size_t gotlen[2];
        for (int b = 0; b < 2; b++) {
            set_key_str(both_s[b], key);
            if (op < 35) {
                rc[b] = sl_kstate_get(both_s[b], sid, ns, strlen(ns), &got[b], &gotlen[b], err, sizeof err);
            } else if (op < 80) {
                rc[b] = sl_kstate_put(both_s[b], sid, ns, strlen(ns), val, vlen, err, sizeof err);
            } else if (op < 97) {
                rc[b] = sl_kstate_del(both_s[b], sid, ns, strlen(ns), err, sizeof err);
            } else {
                uint64_t sum = 0;
                rc[b] = sl_kstate_scan_key(both_s[b], sid, count_scan, &sum, err, sizeof err);
                gotlen[b] = (size_t)sum;
                got[b] = NULL;
            }
        }
        if (rc[0] != rc[1] || rc[0] == SL_ERR) mismatches++;
        else if (op < 35 && rc[0] == SL_OK &&
                 (gotlen[0] != gotlen[1] || (gotlen[0] && memcmp(got[0], got[1], gotlen[0]))))
            mismatches++;
        else if (op >= 97 && gotlen[0] != gotlen[1])
            mismatches++;
        if (sl_kstate_entries(hm) != sl_kstate_entries(rd) || sl_kstate_bytes(hm) != sl_kstate_bytes(rd))
            mismatches++;
        if (step % 100000 == 99999) {
            snap_dump a = dump(hm), c = dump(rd);
            snapshots++;
            if (a.n != c.n || a.h != c.h) mismatches++;
        }
        if (mismatches) fprintf(stderr, "  step %d (op %d, key %s): backends disagree\n", step, op, key);
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(snapshots, 4);
    CHECK(sl_kstate_entries(rd) > 40000); /* the buffer (32,768 entries) was outgrown */
    snap_dump a = dump(hm), c = dump(rd);
    CHECK(a.n == c.n && a.h == c.h && a.n == sl_kstate_entries(hm));
    sl_kstate_close(hm);
    sl_kstate_close(rd);
}

static void test_write_buffer_model(void) { in_tmp(body_write_buffer_model); }

/* ---- snapshots of a non-empty write buffer -------------------------------- */

/* A snapshot does not flush RocksDB's write buffer: it is RocksDB's
 * snapshot merged with a copy of the buffered changes. Seeded random puts
 * and deletes fill both backends far past the buffer (so RocksDB holds most
 * entries), a scan then empties the buffer (a scan flushes it), and BUF_OPS
 * more changes -- overwrites, growths, deletes of flushed entries, new
 * entries, new entries deleted again -- stay in the buffer, which cannot
 * flush with so few. The snapshot taken then, read only after far more
 * changes (flushing many times), restores into fresh states of both
 * backends, split over two key-group ranges as a rescale does, to exactly
 * the model's entries of that moment: the test's own table of which step
 * last wrote each (key, state, namespace) and with what length. */
#define BK 30000       /* keys */
#define BNS 2          /* namespaces per key and state */
#define BUF_OPS 6000   /* changes while the buffer holds them */

typedef struct bmodel {
    int32_t step[BK * 2 * BNS];  /* step of the last put; -1 absent */
    uint16_t len[BK * 2 * BNS];
} bmodel;

static void bval(uint8_t *out, int k, int step, size_t len)
{
    for (size_t i = 0; i < len; i++) out[i] = (uint8_t)(k * 31 + step + i);
}

/* One seeded change on both live states and the model. */
static int bstep(sl_kstate **live, bmodel *m, uint64_t *x, int step)
{
    static uint8_t val[600];
    char err[256], key[24], ns[16];
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(*x >> 33);
    int k = (int)(r % BK), sid = (r >> 15) & 1, n = (int)((r >> 16) % BNS);
    int del = (*x >> 24) % 5 == 0;
    size_t len = (*x >> 40) % 50 == 0 ? 300 + (*x >> 44) % 300 : (*x >> 40) % 40;
    size_t slot = ((size_t)k * 2 + (size_t)sid) * BNS + (size_t)n;
    snprintf(key, sizeof key, "key-%d", k);
    snprintf(ns, sizeof ns, "n%d", n);
    bval(val, k, step, len);
    int bad = 0;
    for (int b = 0; b < 2; b++) {
        set_key_str(live[b], key);
        int rc = del ? sl_kstate_del(live[b], sid, ns, 2, err, sizeof err)
                     : sl_kstate_put(live[b], sid, ns, 2, val, len, err, sizeof err);
        if (rc != SL_OK) bad++;
    }
    m->step[slot] = del ? -1 : step;
    m->len[slot] = (uint16_t)len;
    return bad;
}

/* Restore sn into dst[0] (key groups 0..63) and dst[1] (64..127) and check
 * them against m: every slot, and the entry count. */
static int brestore_check(sl_ksnap *sn, sl_kstate **dst, const bmodel *m)
{
    char err[256], key[24], ns[16];
    static uint8_t want[600];
    restore_ctx rc = {.split = 63, .dst = {dst[0], dst[1]}};
    for (int kg = 0; kg < MAXP; kg++)
        if (sl_ksnap_each(sn, kg, restore_cb, &rc, err, sizeof err) != SL_OK) return -1;
    if (rc.errors) return -1;
    uint64_t present = 0;
    int wrong = 0;
    for (int k = 0; k < BK; k++) {
        snprintf(key, sizeof key, "key-%d", k);
        int kg = kg_of(key, strlen(key));
        sl_kstate *own = dst[kg > 63];
        sl_kstate_set_key(own, key, strlen(key), kg);
        for (int sid = 0; sid < 2; sid++)
            for (int n = 0; n < BNS; n++) {
                size_t slot = ((size_t)k * 2 + (size_t)sid) * BNS + (size_t)n;
                snprintf(ns, sizeof ns, "n%d", n);
                if (m->step[slot] < 0) {
                    wrong += !holds(own, sid, ns, NULL, 0);
                    continue;
                }
                present++;
                bval(want, k, m->step[slot], m->len[slot]);
                wrong += !holds(own, sid, ns, want, m->len[slot]);
            }
    }
    if (wrong) fprintf(stderr, "  %d entries differ from the model\n", wrong);
    return wrong || sl_kstate_entries(dst[0]) + sl_kstate_entries(dst[1]) != present ? -1 : 0;
}

static void body_snapshot_buffered(void)
{
    char err[256];
    static bmodel m, at_snap;
    for (size_t i = 0; i < BK * 2 * BNS; i++) m.step[i] = -1;
    sl_kstate *live[2] = {open_kind(SL_BACKEND_HASHMAP, 0, MAXP - 1),
                          open_kind(SL_BACKEND_ROCKSDB, 0, MAXP - 1)};
    SL_ASSERT(live[0] && live[1]);
    for (int b = 0; b < 2; b++) {
        CHECK_EQ_INT(sl_kstate_register(live[b], "a"), 0);
        CHECK_EQ_INT(sl_kstate_register(live[b], "b"), 1);
    }
    uint64_t x = 777;
    int step = 0, bad = 0;
    for (; step < 60000; step++) bad += bstep(live, &m, &x, step); /* ten buffers' worth */
    uint64_t ignored = 0;
    for (int b = 0; b < 2; b++) {
        set_key_str(live[b], "key-0");
        CHECK_EQ_INT(sl_kstate_scan_key(live[b], 0, count_scan, &ignored, err, sizeof err), SL_OK);
    }
    for (int end = step + BUF_OPS; step < end; step++) bad += bstep(live, &m, &x, step);
    CHECK_EQ_INT(bad, 0);
    sl_ksnap *sn[2];
    for (int b = 0; b < 2; b++) CHECK((sn[b] = sl_kstate_snapshot(live[b], err, sizeof err)));
    at_snap = m;
    /* the live states go on, past many flushes, before the snapshots are read */
    for (int end = step + 60000; step < end; step++) bad += bstep(live, &m, &x, step);
    CHECK_EQ_INT(bad, 0);
    /* both snapshots hold the same entries in the same order */
    snap_dump d[2];
    for (int b = 0; b < 2; b++) {
        d[b] = (snap_dump){1469598103934665603ull, 0};
        for (int kg = 0; kg < MAXP; kg++)
            CHECK_EQ_INT(sl_ksnap_each(sn[b], kg, dump_entry, &d[b], err, sizeof err), SL_OK);
    }
    CHECK(d[0].n == d[1].n && d[0].h == d[1].h);
    /* each restores, rescaled, into either backend exactly as the model was */
    const sl_backend_kind kinds[2] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};
    for (int from = 0; from < 2; from++)
        for (int to = 0; to < 2; to++) {
            sl_kstate *dst[2] = {open_kind(kinds[to], 0, 63), open_kind(kinds[to], 64, MAXP - 1)};
            SL_ASSERT(dst[0] && dst[1]);
            for (int b = 0; b < 2; b++) {
                CHECK_EQ_INT(sl_kstate_register(dst[b], "a"), 0);
                CHECK_EQ_INT(sl_kstate_register(dst[b], "b"), 1);
            }
            CHECK_EQ_INT(brestore_check(sn[from], dst, &at_snap), 0);
            if (sl_test_failed_)
                fprintf(stderr, "  (from %s to %s)\n", kind_name(kinds[from]), kind_name(kinds[to]));
            sl_kstate_close(dst[0]);
            sl_kstate_close(dst[1]);
        }
    for (int b = 0; b < 2; b++) sl_ksnap_release(sn[b]);
    /* and a snapshot of the end state too */
    CHECK((sn[1] = sl_kstate_snapshot(live[1], err, sizeof err)));
    sl_kstate *dst[2] = {open_kind(SL_BACKEND_HASHMAP, 0, 63),
                         open_kind(SL_BACKEND_HASHMAP, 64, MAXP - 1)};
    SL_ASSERT(dst[0] && dst[1]);
    for (int b = 0; b < 2; b++) {
        CHECK_EQ_INT(sl_kstate_register(dst[b], "a"), 0);
        CHECK_EQ_INT(sl_kstate_register(dst[b], "b"), 1);
    }
    CHECK_EQ_INT(brestore_check(sn[1], dst, &m), 0);
    sl_ksnap_release(sn[1]);
    sl_kstate_close(dst[0]);
    sl_kstate_close(dst[1]);
    sl_kstate_close(live[0]);
    sl_kstate_close(live[1]);
}

static void test_snapshot_buffered(void) { in_tmp(body_snapshot_buffered); }

/* ---- the shared memory budget ------------------------------------------- */

#define BUDGET (8u << 20)
#define NSTATES 4
#define BKEYS 15000

static void budget_val(char *out, size_t cap, int st, int i)
{
    /* ~200 bytes, different per state and key */
    snprintf(out, cap, "s%d-k%d-%0190d", st, i, i * 7 + st);
}

static void body_shared_budget(void)
{
    char err[256] = "", key[32], val[256];
    CHECK_EQ_INT(sl_rocksdb_memory_configure(BUDGET, 0.5, err, sizeof err), SL_OK);
    sl_kstate *s[NSTATES];
    for (int k = 0; k < NSTATES; k++) {
        CHECK((s[k] = open_kind(SL_BACKEND_ROCKSDB, 0, MAXP - 1)));
        CHECK_EQ_INT(sl_kstate_register(s[k], "v"), 0);
    }
    /* one cache object for all of them */
    const void *cache = sl_kstate_rocksdb_cache(s[0]);
    CHECK(cache != NULL);
    for (int k = 1; k < NSTATES; k++) CHECK(sl_kstate_rocksdb_cache(s[k]) == cache);
    sl_rocksdb_memory m;
    sl_rocksdb_memory_stats(&m);
    CHECK_EQ_INT(m.budget, BUDGET);
    CHECK_EQ_INT(m.cache_capacity, BUDGET / 2);
    CHECK_EQ_INT(m.write_buffer_total, BUDGET / 2);
    CHECK_EQ_INT(m.instances, NSTATES);
    /* the memtable share is split among the live instances */
    CHECK_EQ_INT(m.write_buffer_per_instance, BUDGET / 2 / 2 / NSTATES);
    /* the budget does not change under open states */
    CHECK_EQ_INT(sl_rocksdb_memory_configure(0, 0.5, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "while 4 RocksDB states are open") != NULL);

    /* more data than the whole budget: 4 x 15000 x ~200 bytes */
    for (int i = 0; i < BKEYS; i++)
        for (int k = 0; k < NSTATES; k++) {
            snprintf(key, sizeof key, "key-%d", i);
            set_key_str(s[k], key);
            budget_val(val, sizeof val, k, i);
            int rc = sl_kstate_put(s[k], 0, "n", 1, val, strlen(val), err, sizeof err);
            if (rc != SL_OK) fprintf(stderr, "put: %s\n", err);
            CHECK_EQ_INT(rc, SL_OK);
        }
    /* read every key back, in another order, through the cache */
    for (int k = 0; k < NSTATES; k++)
        for (int j = 0; j < BKEYS; j++) {
            int i = (int)(((uint64_t)j * 7919u) % BKEYS);
            snprintf(key, sizeof key, "key-%d", i);
            set_key_str(s[k], key);
            budget_val(val, sizeof val, k, i);
            CHECK(holds(s[k], 0, "n", val, strlen(val)));
        }
    sl_rocksdb_memory_stats(&m);
    CHECK(m.cache_usage > 0);                /* the reads did go through the shared cache */
    CHECK(m.cache_usage <= m.cache_capacity); /* and it stayed within its share */
    /* closing one gives the others its memtable share */
    sl_kstate_close(s[NSTATES - 1]);
    sl_rocksdb_memory_stats(&m);
    CHECK_EQ_INT(m.instances, NSTATES - 1);
    CHECK_EQ_INT(m.write_buffer_per_instance, BUDGET / 2 / 2 / (NSTATES - 1));
    for (int k = 0; k < NSTATES - 1; k++) sl_kstate_close(s[k]);
    /* back to no budget for the other tests */
    CHECK_EQ_INT(sl_rocksdb_memory_configure(0, 0.5, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_rocksdb_memory_configure(1, 1.5, err, sizeof err), SL_ERR);
    CHECK((s[0] = open_kind(SL_BACKEND_ROCKSDB, 0, MAXP - 1)));
    CHECK(sl_kstate_rocksdb_cache(s[0]) == NULL);
    sl_kstate_close(s[0]);
}

static void test_rocksdb_shared_budget(void) { in_tmp(body_shared_budget); }

/* ---- the compact layout, against a model --------------------------------- */

/* Many keys with few entries each (0 to CL_NS per key and state), so keys
 * keep passing between none, one and several entries -- the hashmap holds a
 * key's only entry in its key-index slot and a vector from the second on --
 * through puts, overwrites that grow and shrink values (reallocated entries,
 * copy-on-write ones while a snapshot lives), deletes, per-key scans (state 0
 * indexed from the start, state 1 only from mid-run, so the index is built
 * over a full table), and a state whose values carry a TTL expiry
 * (SL_KTTL_VALUE: snapshots leave out what expired by their clock). Every
 * scan is checked against the model, every snapshot against the model as it
 * was when the snapshot was taken, and the last one is restored into two
 * states splitting the key groups (a rescale) that go on with the same
 * random work and are checked again. */
enum { CL_KEYS = 2500, CL_NS = 4, CL_STATES = 3 };
typedef struct cl_cell {
    int num, len; /* len 0: absent */
    int64_t expiry;
} cl_cell;
typedef cl_cell cl_model[CL_STATES][CL_KEYS][CL_NS];

static int64_t cl_now;
static int64_t cl_clock(void) { return cl_now; }

/* The bytes of a model cell: the expiry first in state 2, then the number's
 * digits padded with its state's letter to len bytes. */
static size_t cl_value(uint8_t *out, int sid, const cl_cell *c)
{
    size_t at = 0;
    if (sid == 2) {
        memcpy(out, &c->expiry, 8);
        at = 8;
    }
    int n = snprintf((char *)out + at, 400, "%d", c->num);
    while (n < c->len) out[at + (size_t)n++] = (uint8_t)('a' + sid);
    return at + (size_t)n;
}

static int cl_visible(int sid, const cl_cell *c, int64_t now)
{
    return c->len && (sid != 2 || now < c->expiry);
}

typedef struct cl_check {
    const cl_model *m;
    int64_t now;
    long seen, bad;
    sl_kstate *dst[2]; /* restore into these when set: key groups [0, 63] and [64, 127] */
} cl_check;

static int cl_check_cb(void *ctx, const sl_kentry *e)
{
    cl_check *c = ctx;
    char key[16], ns[8];
    int k = -1, q = -1;
    snprintf(key, sizeof key, "%.*s", (int)SL_MIN(e->klen, (size_t)15), (const char *)e->key);
    snprintf(ns, sizeof ns, "%.*s", (int)SL_MIN(e->nslen, (size_t)7), (const char *)e->ns);
    if (sscanf(key, "k%d", &k) != 1 || sscanf(ns, "n%d", &q) != 1 || k < 0 || k >= CL_KEYS ||
        q < 0 || q >= CL_NS || e->sid < 0 || e->sid >= CL_STATES ||
        e->kg != kg_of(e->key, e->klen)) {
        c->bad++;
        return 0;
    }
    const cl_cell *cell = &(*c->m)[e->sid][k][q];
    uint8_t want[512];
    size_t wl = cl_value(want, e->sid, cell);
    if (!cl_visible(e->sid, cell, c->now) || e->vlen != wl || memcmp(e->val, want, wl) != 0) c->bad++;
    c->seen++;
    if (c->dst[0]) {
        char err[256];
        if (sl_kstate_restore(c->dst[e->kg > 63], e, err, sizeof err) != SL_OK) c->bad++;
    }
    return 0;
}

/* Check snapshot sn of key groups [kg_lo, kg_hi] against model m at clock now;
 * restore into dst when given. */
static void cl_check_snap(sl_ksnap *sn, int kg_lo, int kg_hi, const cl_model *m, int64_t now,
                          sl_kstate **dst)
{
    char err[256];
    cl_check c = {.m = m, .now = now};
    if (dst) c.dst[0] = dst[0], c.dst[1] = dst[1];
    for (int kg = kg_lo; kg <= kg_hi; kg++) CHECK_EQ_INT(sl_ksnap_each(sn, kg, cl_check_cb, &c, err, sizeof err), SL_OK);
    long want = 0;
    for (int sid = 0; sid < CL_STATES; sid++)
        for (int k = 0; k < CL_KEYS; k++)
            for (int q = 0; q < CL_NS; q++) want += cl_visible(sid, &(*m)[sid][k][q], now);
    CHECK_EQ_INT(c.bad, 0);
    CHECK_EQ_INT(c.seen, want);
}

static int cl_scan_cb(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    sl_buf *b = ctx;
    uint32_t l = (uint32_t)nslen;
    sl_buf_put(b, &l, 4);
    sl_buf_put(b, ns, nslen);
    l = (uint32_t)vlen;
    sl_buf_put(b, &l, 4);
    sl_buf_put(b, val, vlen);
    return 0;
}

/* steps of random work on the states of s (one, or two splitting the key
 * groups), checked against m; the clock moves one per step. */
static void cl_run(sl_kstate **s, int ns, cl_model *m, uint64_t *r, int steps, int late_index,
                   long *scans, long *multi)
{
    char err[256];
    sl_buf got = {0}, want = {0};
    for (int step = 0; step < steps && !sl_test_failed_; step++) {
        cl_now++;
        *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
        int k = (int)(*r % CL_KEYS), q = (int)((*r >> 12) % CL_NS), sid = (int)((*r >> 16) % 3);
        int op = (int)((*r >> 20) % 20), num = (int)((*r >> 28) % 100000);
        int len = (*r >> 45) % 8 ? 1 + (int)((*r >> 48) % 12) : 20 + (int)((*r >> 48) % 280);
        char key[16], nsb[8];
        int kl = snprintf(key, sizeof key, "k%d", k), nl = snprintf(nsb, sizeof nsb, "n%d", q);
        int kg = kg_of(key, (size_t)kl);
        sl_kstate *t = s[ns == 2 && kg > 63];
        sl_kstate_set_key(t, key, (size_t)kl, kg);
        cl_cell *c = &(*m)[sid][k][q];
        if (op < 11) {
            cl_cell nc = {num, len, cl_now + 1 + (int64_t)((*r >> 36) % 3000)};
            uint8_t v[512];
            size_t vl = cl_value(v, sid, &nc);
            CHECK_EQ_INT(sl_kstate_put(t, sid, nsb, (size_t)nl, v, vl, err, sizeof err), SL_OK);
            *c = nc;
        } else if (op < 17) {
            CHECK_EQ_INT(sl_kstate_del(t, sid, nsb, (size_t)nl, err, sizeof err), SL_OK);
            c->len = 0;
        } else if (sid != 1 || step >= late_index) { /* a scan of the key: every entry, TTL or not */
            sl_buf_reset(&got);
            sl_buf_reset(&want);
            CHECK_EQ_INT(sl_kstate_scan_key(t, sid, cl_scan_cb, &got, err, sizeof err), SL_OK);
            int n = 0;
            for (int j = 0; j < CL_NS; j++) {
                const cl_cell *cj = &(*m)[sid][k][j];
                if (!cj->len) continue;
                uint8_t v[512];
                char nj[16];
                int njl = snprintf(nj, sizeof nj, "n%d", j);
                cl_scan_cb(&want, nj, (size_t)njl, v, cl_value(v, sid, cj));
                n++;
            }
            CHECK_EQ_INT(got.len, want.len);
            CHECK(!want.len || memcmp(sl_buf_u8(&got), sl_buf_u8(&want), want.len) == 0);
            ++*scans;
            *multi += n > 1;
        }
        /* a get of the cell after every change */
        uint8_t v[512];
        size_t vl = cl_value(v, sid, c);
        const void *gv;
        size_t gl;
        int rc = sl_kstate_get(t, sid, nsb, (size_t)nl, &gv, &gl, err, sizeof err);
        if (c->len) CHECK(rc == SL_OK && gl == vl && memcmp(gv, v, vl) == 0);
        else CHECK_EQ_INT(rc, SL_DONE);
    }
    sl_buf_free(&got);
    sl_buf_free(&want);
}

static void body_compact_model(sl_backend_kind kind)
{
    static cl_model m, at_snap;
    memset(m, 0, sizeof m);
    char err[256];
    uint64_t r = 0x2545f4914f6cdd1dULL;
    long scans = 0, multi = 0;
    cl_now = 1000;
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    for (int i = 0; i < CL_STATES; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%d", i);
        CHECK_EQ_INT(sl_kstate_register(s, name), i);
    }
    sl_kstate_set_ttl(s, 2, SL_KTTL_VALUE, cl_clock);
    for (int round = 0; round < 4 && !sl_test_failed_; round++) {
        cl_run(&s, 1, &m, &r, 6000, round >= 2 ? 0 : 1 << 30, &scans, &multi);
        /* a snapshot lives through the next round's changes */
        sl_ksnap *sn = sl_kstate_snapshot(s, err, sizeof err);
        CHECK(sn);
        memcpy(at_snap, m, sizeof m);
        int64_t taken = cl_now;
        cl_run(&s, 1, &m, &r, 4000, round >= 1 ? 0 : 1 << 30, &scans, &multi);
        cl_check_snap(sn, 0, MAXP - 1, (const cl_model *)&at_snap, taken, NULL);
        sl_ksnap_release(sn);
    }
    CHECK(scans > 2000 && multi > 300);
    /* rescale: the last snapshot into two states of half the key groups each */
    sl_kstate *d[2] = {open_kind(kind, 0, 63), open_kind(kind, 64, MAXP - 1)};
    CHECK(d[0] && d[1]);
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < CL_STATES; i++) {
            char name[16];
            snprintf(name, sizeof name, "s%d", i);
            CHECK_EQ_INT(sl_kstate_register(d[b], name), i);
        }
        sl_kstate_set_ttl(d[b], 2, SL_KTTL_VALUE, cl_clock);
    }
    sl_ksnap *sn = sl_kstate_snapshot(s, err, sizeof err);
    CHECK(sn);
    cl_check_snap(sn, 0, MAXP - 1, (const cl_model *)&m, cl_now, d);
    sl_ksnap_release(sn);
    sl_kstate_close(s);
    /* what expired by the snapshot's clock was left out: gone from the model too */
    for (int k = 0; k < CL_KEYS; k++)
        for (int q = 0; q < CL_NS; q++)
            if (!cl_visible(2, &m[2][k][q], cl_now)) m[2][k][q].len = 0;
    cl_run(d, 2, &m, &r, 8000, 0, &scans, &multi);
    for (int b = 0; b < 2; b++) {
        static cl_model half;
        memcpy(half, m, sizeof m);
        for (int k = 0; k < CL_KEYS; k++) { /* the other state's keys are not in this one */
            char key[16];
            int kl = snprintf(key, sizeof key, "k%d", k);
            if ((kg_of(key, (size_t)kl) > 63) != b)
                for (int i = 0; i < CL_STATES; i++)
                    for (int q = 0; q < CL_NS; q++) half[i][k][q].len = 0;
        }
        sn = sl_kstate_snapshot(d[b], err, sizeof err);
        CHECK(sn);
        cl_check_snap(sn, b ? 64 : 0, b ? MAXP - 1 : 63, (const cl_model *)&half, cl_now, NULL);
        sl_ksnap_release(sn);
        sl_kstate_close(d[b]);
    }
}

static void test_compact_model(void) { both(body_compact_model); }

SL_TEST_MAIN(SL_TEST(test_put_get_del), SL_TEST(test_errors), SL_TEST(test_open_errors),
             SL_TEST(test_many_keys), SL_TEST(test_namespaces), SL_TEST(test_scan_key), SL_TEST(test_scan_key_random),
             SL_TEST(test_register), SL_TEST(test_snapshot_isolation),
             SL_TEST(test_snapshot_range), SL_TEST(test_snapshot_order),
             SL_TEST(test_restore_split), SL_TEST(test_restore_errors),
             SL_TEST(test_rocksdb_bad_dir), SL_TEST(test_rocksdb_dir_lifecycle),
             SL_TEST(test_write_buffer_model), SL_TEST(test_snapshot_buffered),
             SL_TEST(test_rocksdb_shared_budget), SL_TEST(test_compact_model))
