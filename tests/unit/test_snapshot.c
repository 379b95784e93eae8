/*
 * test_snapshot.c -- state files and _metadata (core/snapshot.c).
 *
 * Keyed state comes from real backends (both of them): the test builds an
 * sl_kstate, snapshots it, writes a file and reads it back, checking what
 * comes back against its own model of what it put (keys built with
 * snprintf, key groups from the key-group law, values from a formula).
 * Damaged files are made by flipping every byte and truncating at every
 * length; every one must give an error naming the file, and none may crash
 * (the sanitizer build runs the same cases). The CRC-32C the file format
 * uses is checked against a bit-at-a-time CRC written here from the
 * polynomial, which also lets the test forge well-checksummed headers with
 * bad contents.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keygroup.h"
#include "sl_test.h"
#include "snapshot.h"
#include "snapshot.pb-c.h"
#include "snapshot_inc.h"
#include "state.h"

#define MAXP 128
#define NKEYS 300
#define BIG_LEN (3u << 20) /* bigger than the writer's 1 MiB buffer */

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
    snprintf(tmp_root, sizeof tmp_root, "%s/sl-snap-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        exit(2);
    }
}

static void tmp_remove(void) { nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static const char *kind_name(sl_backend_kind k) { return k == SL_BACKEND_HASHMAP ? "hashmap" : "rocksdb"; }

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

static void in_tmp(void (*body)(void))
{
    tmp_make();
    body();
    tmp_remove();
}

static void tpath(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tmp_root, name); }

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Whole file into a malloc'ed buffer (NULL if unreadable). */
static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

static int spill(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(data, 1, n, f) : 0;
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* CRC-32C one bit at a time, straight from the reflected polynomial. */
static uint32_t crc32c_bitwise(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
    }
    return ~c;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- the model: what the test put into keyed state ---------------------- */

typedef struct ment {
    int sid;
    char key[24];
    char ns[24];
    size_t vlen;
    int kg;
    int seen;
} ment;

static ment model[NKEYS * 3 + 1];
static size_t nmodel;

/* Value bytes of model entry m: a formula of its key, sid and position. */
static uint8_t val_byte(const ment *m, size_t i)
{
    return (uint8_t)(m->key[4] * 31 + m->sid * 7 + i * 13 + m->ns[0]);
}

static void fill_val(const ment *m, uint8_t *out)
{
    for (size_t i = 0; i < m->vlen; i++) out[i] = val_byte(m, i);
}

/* Entries for NKEYS keys: key i has states 0..i%3 (state 0 in the empty
 * namespace), values 0..49 bytes long, and one entry of BIG_LEN bytes. */
static void model_build(void)
{
    nmodel = 0;
    for (int i = 0; i < NKEYS; i++)
        for (int sid = 0; sid <= i % 3; sid++) {
            ment *m = &model[nmodel++];
            memset(m, 0, sizeof *m);
            m->sid = sid;
            snprintf(m->key, sizeof m->key, "key-%d", i);
            if (sid) snprintf(m->ns, sizeof m->ns, "w%d", i * sid);
            m->vlen = (size_t)(i * 7 + sid) % 50;
            m->kg = sl_kg_of_key(m->key, strlen(m->key), MAXP);
        }
    ment *m = &model[nmodel++];
    memset(m, 0, sizeof *m);
    m->sid = 1;
    snprintf(m->key, sizeof m->key, "big");
    m->vlen = BIG_LEN;
    m->kg = sl_kg_of_key(m->key, strlen(m->key), MAXP);
}

static int model_in(const ment *m, int first, int last) { return m->kg >= first && m->kg <= last; }

static sl_kstate *open_kind(sl_backend_kind kind, int first, int last)
{
    char dir[512], err[256] = "";
    snprintf(dir, sizeof dir, "%s/db-%d", tmp_root, ++db_seq);
    sl_kstate *s = sl_kstate_open(kind, dir, MAXP, first, last, err, sizeof err);
    if (!s) fprintf(stderr, "open %s: %s\n", kind_name(kind), err);
    if (s) {
        sl_kstate_register(s, "a");
        sl_kstate_register(s, "b");
        sl_kstate_register(s, "c");
    }
    return s;
}

static int put_m(sl_kstate *s, const ment *m, uint8_t *scratch)
{
    char err[256];
    fill_val(m, scratch);
    sl_kstate_set_key(s, m->key, strlen(m->key), m->kg);
    int rc = sl_kstate_put(s, m->sid, m->ns, strlen(m->ns), scratch, m->vlen, err, sizeof err);
    if (rc != SL_OK) fprintf(stderr, "put: %s\n", err);
    return rc;
}

/* Load the model's entries of [first, last] into s, in forward or reverse
 * order, with some overwrites and a deleted extra entry on the way. */
static int load_state(sl_kstate *s, int first, int last, int reverse)
{
    char err[256];
    uint8_t *scratch = malloc(BIG_LEN);
    int rc = SL_OK;
    for (size_t j = 0; j < nmodel && rc == SL_OK; j++) {
        const ment *m = &model[reverse ? nmodel - 1 - j : j];
        if (!model_in(m, first, last)) continue;
        if (j % 5 == 0) { /* an older value first */
            sl_kstate_set_key(s, m->key, strlen(m->key), m->kg);
            rc = sl_kstate_put(s, m->sid, m->ns, strlen(m->ns), "old value", 9, err, sizeof err);
        }
        if (rc == SL_OK && j % 7 == 0) { /* an entry that is gone before the snapshot */
            rc = sl_kstate_put(s, 2, "ghost", 5, "x", 1, err, sizeof err);
            if (rc == SL_OK) rc = sl_kstate_del(s, 2, "ghost", 5, err, sizeof err);
        }
        if (rc == SL_OK) rc = put_m(s, m, scratch);
    }
    free(scratch);
    return rc;
}

static void model_unsee(void)
{
    for (size_t i = 0; i < nmodel; i++) model[i].seen = 0;
}

typedef struct rctx {
    int first, last; /* the range asked for */
    int last_kg;     /* entries must come in key-group order */
    size_t n;
    int bad;
    uint8_t *scratch;
} rctx;

/* Reader callback: the entry must be in the model, with its value. */
static int on_entry(void *ctx, const sl_kentry *e)
{
    rctx *c = ctx;
    c->n++;
    if (e->kg < c->first || e->kg > c->last || e->kg < c->last_kg) {
        fprintf(stderr, "entry of key group %d out of place (range [%d, %d], previous %d)\n", e->kg,
                c->first, c->last, c->last_kg);
        c->bad = 1;
        return SL_OK;
    }
    c->last_kg = e->kg;
    for (size_t i = 0; i < nmodel; i++) {
        ment *m = &model[i];
        if (m->sid != e->sid || strlen(m->key) != e->klen || memcmp(m->key, e->key, e->klen) ||
            strlen(m->ns) != e->nslen || memcmp(m->ns, e->ns, e->nslen))
            continue;
        fill_val(m, c->scratch);
        if (m->kg != e->kg || m->vlen != e->vlen || memcmp(c->scratch, e->val, e->vlen) != 0) {
            fprintf(stderr, "entry %s/%d/%s: wrong key group or value\n", m->key, m->sid, m->ns);
            c->bad = 1;
        }
        m->seen++;
        return SL_OK;
    }
    fprintf(stderr, "entry not in the model: sid %d key %.*s\n", e->sid, (int)e->klen,
            (const char *)e->key);
    c->bad = 1;
    return SL_OK;
}

/* Read [first, last] of path into the model's seen counters. */
static int read_range(const char *path, int first, int last, size_t *n)
{
    char err[512] = "";
    rctx c = {.first = first, .last = last, .last_kg = -1, .scratch = malloc(BIG_LEN)};
    int rc = sl_snapr_keyed(path, first, last, on_entry, &c, err, sizeof err);
    if (rc != SL_OK) fprintf(stderr, "read %s: %s\n", path, err);
    free(c.scratch);
    if (n) *n = c.n;
    return rc == SL_OK && !c.bad ? 0 : -1;
}

/* Write the keyed state of s (no timers, no opstate) to path. */
static int write_keyed(sl_kstate *s, const char *path, int first, int last, uint64_t *size)
{
    char err[512] = "";
    sl_ksnap *snap = sl_kstate_snapshot(s, err, sizeof err);
    if (!snap) {
        fprintf(stderr, "snapshot: %s\n", err);
        return -1;
    }
    sl_snapw *w = sl_snapw_open(path, MAXP, first, last, err, sizeof err);
    int rc = w ? sl_snapw_keyed(w, snap, err, sizeof err) : SL_ERR;
    if (w && rc == SL_OK) rc = sl_snapw_finish(w, size, err, sizeof err);
    else if (w) sl_snapw_abort(w);
    if (rc != SL_OK) fprintf(stderr, "write %s: %s\n", path, err);
    sl_ksnap_release(snap);
    return rc == SL_OK ? 0 : -1;
}

/* ---- keyed round trip ----------------------------------------------------- */

static void body_roundtrip(sl_backend_kind kind)
{
    char path[512], err[512];
    tpath(path, sizeof path, "op-0.state");
    model_build();
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    CHECK_EQ_INT(load_state(s, 0, MAXP - 1, 0), SL_OK);
    uint64_t size = 0;
    CHECK_EQ_INT(write_keyed(s, path, 0, MAXP - 1, &size), 0);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK_EQ_INT(size, st.st_size);
    CHECK(size > BIG_LEN);

    int maxp, first, last;
    CHECK_EQ_INT(sl_snapr_info(path, &maxp, &first, &last, err, sizeof err), SL_OK);
    CHECK_EQ_INT(maxp, MAXP);
    CHECK_EQ_INT(first, 0);
    CHECK_EQ_INT(last, MAXP - 1);

    model_unsee();
    size_t n = 0;
    CHECK_EQ_INT(read_range(path, 0, MAXP - 1, &n), 0);
    CHECK_EQ_INT(n, nmodel);
    for (size_t i = 0; i < nmodel; i++) CHECK_EQ_INT(model[i].seen, 1);

    /* a file with no timers and no opstate reads as such */
    void *blob = (void *)1;
    size_t blen = 99;
    CHECK_EQ_INT(sl_snapr_opstate(path, &blob, &blen, err, sizeof err), SL_OK);
    CHECK(blob == NULL);
    CHECK_EQ_INT(blen, 0);
    sl_kstate_close(s);
}

static void test_roundtrip_keyed(void) { both(body_roundtrip); }

/* ---- rescaling: 2 files re-split into 3 ranges ---------------------------- */

static void body_rescale(sl_backend_kind kind)
{
    char a[512], b[512], err[512];
    tpath(a, sizeof a, "op-0.state");
    tpath(b, sizeof b, "op-1.state");
    model_build();
    sl_kstate *s0 = open_kind(kind, 0, 63), *s1 = open_kind(kind, 64, 127);
    CHECK(s0 && s1);
    CHECK_EQ_INT(load_state(s0, 0, 63, 0), SL_OK);
    CHECK_EQ_INT(load_state(s1, 64, 127, 1), SL_OK);
    CHECK_EQ_INT(write_keyed(s0, a, 0, 63, NULL), 0);
    CHECK_EQ_INT(write_keyed(s1, b, 64, 127, NULL), 0);
    sl_kstate_close(s0);
    sl_kstate_close(s1);

    int maxp, first, last;
    CHECK_EQ_INT(sl_snapr_info(b, &maxp, &first, &last, err, sizeof err), SL_OK);
    CHECK_EQ_INT(first, 64);
    CHECK_EQ_INT(last, 127);

    /* the ranges of 3 subtasks by the key-group law, computed by hand */
    const int ranges[3][2] = {{0, 42}, {43, 85}, {86, 127}};
    model_unsee();
    size_t total = 0;
    for (int r = 0; r < 3; r++) {
        size_t expect = 0, got = 0, n;
        for (size_t i = 0; i < nmodel; i++) expect += model_in(&model[i], ranges[r][0], ranges[r][1]);
        CHECK_EQ_INT(read_range(a, ranges[r][0], ranges[r][1], &n), 0);
        got += n;
        CHECK_EQ_INT(read_range(b, ranges[r][0], ranges[r][1], &n), 0);
        got += n;
        CHECK_EQ_INT(got, expect);
        total += got;
    }
    CHECK_EQ_INT(total, nmodel);
    for (size_t i = 0; i < nmodel; i++) CHECK_EQ_INT(model[i].seen, 1);

    /* a range the file does not cover reads as nothing */
    size_t n = 99;
    CHECK_EQ_INT(read_range(a, 64, 127, &n), 0);
    CHECK_EQ_INT(n, 0);
}

static void test_rescale_split(void) { both(body_rescale); }

/* ---- timers and operator state ------------------------------------------ */

#define NTIMERS 200

typedef struct tkey {
    char key[16], ns[16];
    int seen;
} tkey;

static sl_snap_timer timers[NTIMERS];
static tkey tkeys[NTIMERS];

/* NTIMERS timers over 40 keys, both kinds, times around zero and at the
 * extremes, some with empty keys or namespaces. */
static void timers_build(void)
{
    for (int i = 0; i < NTIMERS; i++) {
        tkey *k = &tkeys[i];
        memset(k, 0, sizeof *k);
        if (i % 17) snprintf(k->key, sizeof k->key, "key-%d", i % 40);
        if (i % 3) snprintf(k->ns, sizeof k->ns, "w%d", i);
        sl_snap_timer *t = &timers[i];
        t->kind = i % 2;
        t->time = i == 0 ? INT64_MIN : i == 1 ? INT64_MAX : (int64_t)(i * 1000003 % 7919) - 4000;
        t->key = k->key;
        t->klen = strlen(k->key);
        t->ns = k->ns;
        t->nslen = strlen(k->ns);
        t->kg = sl_kg_of_key(k->key, t->klen, MAXP);
    }
}

typedef struct tctx {
    int first, last;
    const sl_snap_timer *prev; /* copy of the previous one, for the order */
    sl_snap_timer prev_copy;
    char prev_key[16], prev_ns[16];
    size_t n;
    int bad;
} tctx;

static int bcmp_len(const void *a, size_t na, const void *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* The file order: kg, kind, time, key, ns -- spelled out field by field. */
static int timer_before(const sl_snap_timer *a, const sl_snap_timer *b)
{
    if (a->kg != b->kg) return a->kg < b->kg;
    if (a->kind != b->kind) return a->kind < b->kind;
    if (a->time != b->time) return a->time < b->time;
    int c = bcmp_len(a->key, a->klen, b->key, b->klen);
    if (c) return c < 0;
    return bcmp_len(a->ns, a->nslen, b->ns, b->nslen) < 0;
}

static int on_timer(void *ctx, const sl_snap_timer *t)
{
    tctx *c = ctx;
    c->n++;
    if (t->kg < c->first || t->kg > c->last || (c->prev && !timer_before(c->prev, t))) {
        fprintf(stderr, "timer of key group %d out of order or range\n", t->kg);
        c->bad = 1;
    }
    int found = 0;
    for (int i = 0; i < NTIMERS && !found; i++) {
        const sl_snap_timer *m = &timers[i];
        if (m->kind == t->kind && m->time == t->time && m->kg == t->kg && m->klen == t->klen &&
            m->nslen == t->nslen && !memcmp(m->key, t->key, t->klen) && !memcmp(m->ns, t->ns, t->nslen)) {
            tkeys[i].seen++;
            found = 1;
        }
    }
    if (!found) c->bad = 1;
    c->prev_copy = *t;
    memcpy(c->prev_key, t->key, t->klen);
    memcpy(c->prev_ns, t->ns, t->nslen);
    c->prev_copy.key = c->prev_key;
    c->prev_copy.ns = c->prev_ns;
    c->prev = &c->prev_copy;
    return SL_OK;
}

static void body_timers_opstate(void)
{
    char path[512], err[512] = "";
    tpath(path, sizeof path, "win-3.state");
    timers_build();
    size_t bloblen = (2u << 20) + 5;
    uint8_t *blob = malloc(bloblen);
    for (size_t i = 0; i < bloblen; i++) blob[i] = (uint8_t)(i * 2654435761u >> 13);

    sl_snapw *w = sl_snapw_open(path, MAXP, 0, MAXP - 1, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_timers(w, timers, NTIMERS, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapw_opstate(w, blob, bloblen, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapw_finish(w, NULL, err, sizeof err), SL_OK);

    tctx c = {.first = 0, .last = MAXP - 1};
    CHECK_EQ_INT(sl_snapr_timers(path, 0, MAXP - 1, on_timer, &c, err, sizeof err), SL_OK);
    CHECK(!c.bad);
    CHECK_EQ_INT(c.n, NTIMERS);
    for (int i = 0; i < NTIMERS; i++) CHECK_EQ_INT(tkeys[i].seen, 1);

    /* a sub-range gives exactly the timers of its key groups */
    size_t expect = 0;
    for (int i = 0; i < NTIMERS; i++) expect += timers[i].kg >= 30 && timers[i].kg <= 70;
    CHECK(expect > 0 && expect < NTIMERS);
    tctx c2 = {.first = 30, .last = 70};
    CHECK_EQ_INT(sl_snapr_timers(path, 30, 70, on_timer, &c2, err, sizeof err), SL_OK);
    CHECK(!c2.bad);
    CHECK_EQ_INT(c2.n, expect);

    /* no keyed state was written: none is read */
    rctx rc = {.first = 0, .last = MAXP - 1, .last_kg = -1};
    model_build();
    CHECK_EQ_INT(sl_snapr_keyed(path, 0, MAXP - 1, on_entry, &rc, err, sizeof err), SL_OK);
    CHECK_EQ_INT(rc.n, 0);

    void *got = NULL;
    size_t glen = 0;
    CHECK_EQ_INT(sl_snapr_opstate(path, &got, &glen, err, sizeof err), SL_OK);
    CHECK_EQ_INT(glen, bloblen);
    CHECK(memcmp(got, blob, bloblen) == 0);
    free(got);
    free(blob);

    /* an empty blob is no blob */
    w = sl_snapw_open(path, MAXP, 5, 9, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_opstate(w, "", 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapw_finish(w, NULL, err, sizeof err), SL_OK);
    got = (void *)1;
    CHECK_EQ_INT(sl_snapr_opstate(path, &got, &glen, err, sizeof err), SL_OK);
    CHECK(got == NULL);
    CHECK_EQ_INT(glen, 0);
}

static void test_timers_opstate(void) { in_tmp(body_timers_opstate); }

/* ---- canonical bytes -------------------------------------------------------- */

/* Write the model's state (loaded in `reverse` order) with timers given in
 * a rotated order and a blob, to path. */
static int write_full(sl_backend_kind kind, int reverse, int rot, const char *path)
{
    char err[512] = "";
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    if (!s || load_state(s, 0, MAXP - 1, reverse) != SL_OK) return -1;
    sl_snap_timer rotated[NTIMERS];
    for (int i = 0; i < NTIMERS; i++) rotated[i] = timers[(i + rot) % NTIMERS];
    sl_ksnap *snap = sl_kstate_snapshot(s, err, sizeof err);
    sl_snapw *w = snap ? sl_snapw_open(path, MAXP, 0, MAXP - 1, err, sizeof err) : NULL;
    int rc = w ? SL_OK : SL_ERR;
    if (rc == SL_OK) rc = sl_snapw_keyed(w, snap, err, sizeof err);
    if (rc == SL_OK) rc = sl_snapw_timers(w, rotated, NTIMERS, err, sizeof err);
    if (rc == SL_OK) rc = sl_snapw_opstate(w, "offsets", 7, err, sizeof err);
    if (rc == SL_OK) rc = sl_snapw_finish(w, NULL, err, sizeof err);
    else if (w) sl_snapw_abort(w);
    if (rc != SL_OK) fprintf(stderr, "write_full: %s\n", err);
    sl_ksnap_release(snap);
    sl_kstate_close(s);
    return rc == SL_OK ? 0 : -1;
}

static void body_canonical(void)
{
    char p1[512], p2[512], p3[512];
    tpath(p1, sizeof p1, "h-fwd.state");
    tpath(p2, sizeof p2, "h-rev.state");
    tpath(p3, sizeof p3, "r-rev.state");
    model_build();
    timers_build();
    CHECK_EQ_INT(write_full(SL_BACKEND_HASHMAP, 0, 0, p1), 0);
    CHECK_EQ_INT(write_full(SL_BACKEND_HASHMAP, 1, 77, p2), 0);
    CHECK_EQ_INT(write_full(SL_BACKEND_ROCKSDB, 1, 123, p3), 0);
    size_t n1, n2, n3;
    uint8_t *b1 = slurp(p1, &n1), *b2 = slurp(p2, &n2), *b3 = slurp(p3, &n3);
    CHECK(b1 && b2 && b3);
    CHECK(n1 > BIG_LEN);
    CHECK_EQ_INT(n2, n1);
    CHECK_EQ_INT(n3, n1);
    CHECK(memcmp(b1, b2, n1) == 0);
    CHECK(memcmp(b1, b3, n1) == 0);
    free(b1);
    free(b2);
    free(b3);
}

static void test_canonical_bytes(void) { in_tmp(body_canonical); }

/* ---- writing on another thread while the task goes on ------------------- */

typedef struct wjob {
    sl_ksnap *snap;
    const char *path;
    int rc;
    char err[512];
} wjob;

static void *writer_main(void *arg)
{
    wjob *j = arg;
    sl_snapw *w = sl_snapw_open(j->path, MAXP, 0, MAXP - 1, j->err, sizeof j->err);
    j->rc = w ? sl_snapw_keyed(w, j->snap, j->err, sizeof j->err) : SL_ERR;
    if (w && j->rc == SL_OK) j->rc = sl_snapw_finish(w, NULL, j->err, sizeof j->err);
    else if (w) sl_snapw_abort(w);
    return NULL;
}

static void body_thread(sl_backend_kind kind)
{
    char path[512], err[512];
    tpath(path, sizeof path, "op-0.state");
    model_build();
    sl_kstate *s = open_kind(kind, 0, MAXP - 1);
    CHECK(s);
    CHECK_EQ_INT(load_state(s, 0, MAXP - 1, 0), SL_OK);
    wjob j = {.snap = sl_kstate_snapshot(s, err, sizeof err), .path = path};
    CHECK(j.snap);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, writer_main, &j) == 0);
    /* the task thread changes every entry and adds new ones meanwhile */
    int rc = SL_OK;
    for (size_t i = 0; i < nmodel && rc == SL_OK; i++) {
        const ment *m = &model[i];
        sl_kstate_set_key(s, m->key, strlen(m->key), m->kg);
        rc = sl_kstate_put(s, m->sid, m->ns, strlen(m->ns), "changed", 7, err, sizeof err);
        if (rc == SL_OK) rc = sl_kstate_put(s, 2, "later", 5, "new", 3, err, sizeof err);
    }
    pthread_join(th, NULL);
    sl_ksnap_release(j.snap);
    CHECK_EQ_INT(rc, SL_OK);
    if (j.rc != SL_OK) fprintf(stderr, "writer: %s\n", j.err);
    CHECK_EQ_INT(j.rc, SL_OK);
    /* the file holds the state as it was at the snapshot */
    model_unsee();
    size_t n = 0;
    CHECK_EQ_INT(read_range(path, 0, MAXP - 1, &n), 0);
    CHECK_EQ_INT(n, nmodel);
    for (size_t i = 0; i < nmodel; i++) CHECK_EQ_INT(model[i].seen, 1);
    sl_kstate_close(s);
}

static void test_write_on_other_thread(void) { both(body_thread); }

/* ---- _metadata --------------------------------------------------------- */

static void body_metadata(void)
{
    char dir[512], file[600], err[512] = "";
    tpath(dir, sizeof dir, "chk-7");
    CHECK_EQ_INT(sl_mkdirs(dir, err, sizeof err), SL_OK);
    snprintf(file, sizeof file, "%s/_metadata", dir);

    void *packed = NULL;
    size_t len = 0;
    CHECK_EQ_INT(sl_snapshot_read_metadata(dir, &packed, &len, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "_metadata") && strstr(err, "does not exist"));

    Sluice__SubtaskState st[2] = {SLUICE__SUBTASK_STATE__INIT, SLUICE__SUBTASK_STATE__INIT};
    st[0].subtask = 0, st[0].file = "agg-0.state", st[0].kg_first = 0, st[0].kg_last = 63,
    st[0].size = 4096;
    st[1].subtask = 1, st[1].file = "agg-1.state", st[1].kg_first = 64, st[1].kg_last = 127,
    st[1].size = 8192, st[1].has_opstate = 1;
    Sluice__SubtaskState *sts[2] = {&st[0], &st[1]};
    Sluice__OperatorState op = SLUICE__OPERATOR_STATE__INIT;
    op.uid = "agg";
    op.type = "group_aggregate";
    op.parallelism = 2;
    op.keyed = 1;
    op.n_subtasks = 2;
    op.subtasks = sts;
    Sluice__OperatorState *ops[1] = {&op};
    Sluice__SnapshotMetadata md = SLUICE__SNAPSHOT_METADATA__INIT;
    md.format_version = SL_SNAPSHOT_FORMAT_VERSION;
    md.job_id = "0123456789abcdef0123456789abcdef";
    md.job_name = "demo";
    md.checkpoint_id = 7;
    md.timestamp = 1700000000123;
    md.is_savepoint = 0;
    md.max_parallelism = MAXP;
    md.n_operators = 1;
    md.operators = ops;
    md.graph_json = "{\"vertices\":[]}";
    size_t plen = sluice__snapshot_metadata__get_packed_size(&md);
    uint8_t *buf = malloc(plen);
    CHECK_EQ_INT(sluice__snapshot_metadata__pack(&md, buf), plen);

    CHECK_EQ_INT(sl_snapshot_write_metadata(dir, buf, plen, err, sizeof err), SL_OK);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/_metadata.tmp", dir);
    CHECK(!exists(tmp));
    /* read through the directory and through the file itself */
    for (int via = 0; via < 2; via++) {
        CHECK_EQ_INT(sl_snapshot_read_metadata(via ? file : dir, &packed, &len, err, sizeof err), SL_OK);
        CHECK_EQ_INT(len, plen);
        CHECK(memcmp(packed, buf, plen) == 0);
        Sluice__SnapshotMetadata *u = sluice__snapshot_metadata__unpack(NULL, len, packed);
        free(packed);
        CHECK(u);
        CHECK_EQ_INT(u->format_version, SL_SNAPSHOT_FORMAT_VERSION);
        CHECK_EQ_STR(u->job_id, "0123456789abcdef0123456789abcdef");
        CHECK_EQ_STR(u->job_name, "demo");
        CHECK_EQ_INT(u->checkpoint_id, 7);
        CHECK_EQ_INT(u->timestamp, 1700000000123);
        CHECK_EQ_INT(u->max_parallelism, MAXP);
        CHECK_EQ_STR(u->graph_json, "{\"vertices\":[]}");
        CHECK_EQ_INT(u->n_operators, 1);
        CHECK_EQ_STR(u->operators[0]->uid, "agg");
        CHECK_EQ_STR(u->operators[0]->type, "group_aggregate");
        CHECK_EQ_INT(u->operators[0]->keyed, 1);
        CHECK_EQ_INT(u->operators[0]->n_subtasks, 2);
        CHECK_EQ_STR(u->operators[0]->subtasks[1]->file, "agg-1.state");
        CHECK_EQ_INT(u->operators[0]->subtasks[1]->kg_first, 64);
        CHECK_EQ_INT(u->operators[0]->subtasks[1]->kg_last, 127);
        CHECK_EQ_INT(u->operators[0]->subtasks[1]->size, 8192);
        CHECK_EQ_INT(u->operators[0]->subtasks[1]->has_opstate, 1);
        CHECK_EQ_INT(u->operators[0]->subtasks[0]->has_opstate, 0);
        sluice__snapshot_metadata__free_unpacked(u, NULL);
    }

    /* a second write replaces the first whole; an empty message is fine */
    CHECK_EQ_INT(sl_snapshot_write_metadata(dir, NULL, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapshot_read_metadata(dir, &packed, &len, err, sizeof err), SL_OK);
    CHECK_EQ_INT(len, 0);
    free(packed);

    /* file framing: magic, version, length, CRC-32C of the payload */
    CHECK_EQ_INT(sl_snapshot_write_metadata(dir, buf, plen, err, sizeof err), SL_OK);
    size_t n;
    uint8_t *raw = slurp(file, &n);
    CHECK(raw);
    CHECK_EQ_INT(n, 24 + plen);
    CHECK(memcmp(raw, "SLMETA\0\0", 8) == 0);
    CHECK_EQ_INT(le32(raw + 8), SL_SNAPSHOT_FORMAT_VERSION);
    CHECK_EQ_INT(le32(raw + 12), crc32c_bitwise(buf, plen));
    CHECK_EQ_INT(le32(raw + 16), plen);
    CHECK_EQ_INT(le32(raw + 20), 0);
    free(raw);

    /* into a directory that does not exist: an error naming it */
    char nodir[600];
    snprintf(nodir, sizeof nodir, "%s/missing", tmp_root);
    CHECK_EQ_INT(sl_snapshot_write_metadata(nodir, buf, plen, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "missing/_metadata.tmp"));
    free(buf);
}

static void test_metadata_roundtrip(void) { in_tmp(body_metadata); }

/* ---- damaged files ----------------------------------------------------------- */

static int count_entry(void *ctx, const sl_kentry *e)
{
    (void)e;
    ++*(size_t *)ctx;
    return SL_OK;
}

static int count_timer(void *ctx, const sl_snap_timer *t)
{
    (void)t;
    ++*(size_t *)ctx;
    return SL_OK;
}

/* Run every reader over the whole of path. Returns how many failed; each
 * failure's message must name the file (else counts as -100). */
static int readers_failing(const char *path)
{
    char err[512];
    int failed = 0;
    size_t ne = 0, nt = 0;
    int maxp, first, last;
    void *blob;
    size_t blen;
#define ONE(call)                                                                      \
    do {                                                                               \
        err[0] = '\0';                                                                 \
        if ((call) != SL_OK) failed += strstr(err, path) ? 1 : -100;                   \
    } while (0)
    ONE(sl_snapr_info(path, &maxp, &first, &last, err, sizeof err));
    ONE(sl_snapr_keyed(path, 0, 1 << 20, count_entry, &ne, err, sizeof err));
    ONE(sl_snapr_timers(path, 0, 1 << 20, count_timer, &nt, err, sizeof err));
    blob = NULL;
    ONE(sl_snapr_opstate(path, &blob, &blen, err, sizeof err));
    free(blob);
#undef ONE
    if (!failed && (ne != 4 || nt != 3)) return -1000; /* a good file: write_small's 4 and 3 */
    return failed;
}

/* sl_snapr_check refuses path, naming it. */
static int check_fails_naming(const char *path)
{
    char err[512] = "";
    return sl_snapr_check(path, err, sizeof err) == SL_ERR && strstr(err, path) != NULL;
}

static int small_ident; /* write_small records an identity (version 2) */

/* A small file of every section kind: a few entries in three key groups
 * of max parallelism 8, timers, an opstate blob; with small_ident, the
 * identity of job "job-1", uid "op-a", subtask 3 first. */
static int write_small(const char *path)
{
    char err[512] = "";
    sl_kstate *s = sl_kstate_open(SL_BACKEND_HASHMAP, NULL, 8, 0, 7, err, sizeof err);
    if (!s) return -1;
    sl_kstate_register(s, "v");
    const char *keys[] = {"a", "bb", "ccc", "dddd"};
    int kgs[] = {1, 1, 4, 7};
    for (int i = 0; i < 4; i++) {
        sl_kstate_set_key(s, keys[i], strlen(keys[i]), kgs[i]);
        sl_kstate_put(s, 0, "n", (size_t)(i % 2), "val", (size_t)i, err, sizeof err);
    }
    sl_snap_timer t[3] = {{.kind = 0, .time = 5, .kg = 1, .key = "a", .klen = 1},
                          {.kind = 1, .time = -9, .kg = 4, .key = "ccc", .klen = 3, .ns = "w", .nslen = 1},
                          {.kind = 0, .time = 300, .kg = 4, .key = "ccc", .klen = 3}};
    sl_ksnap *snap = sl_kstate_snapshot(s, err, sizeof err);
    sl_snapw *w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    int rc = w && snap ? SL_OK : SL_ERR;
    if (rc == SL_OK && small_ident) rc = sl_snapw_identity(w, "job-1", "op-a", 3, err, sizeof err);
    if (rc == SL_OK) rc = sl_snapw_keyed(w, snap, err, sizeof err);
    if (rc == SL_OK) rc = sl_snapw_timers(w, t, 3, err, sizeof err);
    if (rc == SL_OK) rc = sl_snapw_opstate(w, "op", 2, err, sizeof err);
    if (rc == SL_OK) rc = sl_snapw_finish(w, NULL, err, sizeof err);
    sl_ksnap_release(snap);
    sl_kstate_close(s);
    if (rc != SL_OK) fprintf(stderr, "write_small: %s\n", err);
    return rc == SL_OK ? 0 : -1;
}

static void body_fuzz_state(void)
{
    char path[512], bad[512];
    tpath(path, sizeof path, "small.state");
    tpath(bad, sizeof bad, "bad.state");
    CHECK_EQ_INT(write_small(path), 0);
    size_t n;
    uint8_t *orig = slurp(path, &n);
    CHECK(orig);
    CHECK(n > 100 && n < 2000);
    CHECK_EQ_INT(readers_failing(path), 0);
    char err[512];
    CHECK_EQ_INT(sl_snapr_check(path, err, sizeof err), SL_OK);

    uint8_t *copy = malloc(n);
    const uint8_t flips[] = {0x01, 0x80, 0xff};
    for (size_t i = 0; i < n; i++)
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(copy, orig, n);
            copy[i] ^= flips[f];
            CHECK(spill(bad, copy, n) == 0);
            int failing = readers_failing(bad);
            if (failing < 1) fprintf(stderr, "flip 0x%02x at byte %zu: %d readers failed\n", flips[f], i, failing);
            CHECK(failing >= 1);
            CHECK(check_fails_naming(bad));
        }
    for (size_t len = 0; len < n; len++) {
        CHECK(spill(bad, orig, len) == 0);
        int failing = readers_failing(bad);
        if (failing != 4) fprintf(stderr, "truncated to %zu: %d readers failed\n", len, failing);
        CHECK_EQ_INT(failing, 4);
        CHECK(check_fails_naming(bad));
    }
    /* bytes appended are damage too */
    memcpy(copy, orig, n);
    CHECK(spill(bad, orig, n) == 0);
    FILE *f = fopen(bad, "ab");
    CHECK(f);
    fputs("junk", f);
    fclose(f);
    CHECK_EQ_INT(readers_failing(bad), 4);
    CHECK(check_fails_naming(bad));
    free(copy);
    free(orig);
}

static void test_fuzz_state_file(void)
{
    small_ident = 0;
    in_tmp(body_fuzz_state);
    small_ident = 1; /* every byte of the identity is checked too */
    in_tmp(body_fuzz_state);
    small_ident = 0;
}

/* The identity comes back as written, in a version 2 file; a version 1
 * file has none; it must come first and only once. */
static void body_identity(void)
{
    char path[512], err[512];
    tpath(path, sizeof path, "id.state");
    small_ident = 1;
    CHECK_EQ_INT(write_small(path), 0);
    small_ident = 0;
    size_t n;
    uint8_t *raw = slurp(path, &n);
    CHECK(raw);
    CHECK_EQ_INT(le32(raw + 8), SL_STATE_FORMAT_IDENT);
    free(raw);
    sl_snap_ident *id = calloc(1, sizeof *id);
    int maxp = 0, first = -1, last = -1;
    CHECK_EQ_INT(sl_snapr_ident(path, id, &maxp, &first, &last, err, sizeof err), SL_OK);
    CHECK_EQ_INT(id->known, 1);
    CHECK(!strcmp(id->job_id, "job-1") && !strcmp(id->uid, "op-a"));
    CHECK_EQ_INT(id->subtask, 3);
    CHECK_EQ_INT(maxp, 8);
    CHECK_EQ_INT(first, 0);
    CHECK_EQ_INT(last, 7);
    CHECK_EQ_INT(readers_failing(path), 0);

    CHECK_EQ_INT(write_small(path), 0);
    raw = slurp(path, &n);
    CHECK(raw);
    CHECK_EQ_INT(le32(raw + 8), SL_SNAPSHOT_FORMAT_VERSION);
    free(raw);
    memset(id, 0xff, sizeof *id);
    CHECK_EQ_INT(sl_snapr_ident(path, id, NULL, NULL, NULL, err, sizeof err), SL_OK);
    CHECK_EQ_INT(id->known, 0);
    free(id);

    sl_snapw *w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_opstate(w, "x", 1, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapw_identity(w, "j", "u", 0, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "the identity given after a later section or twice"));
    sl_snapw_abort(w);
}

static void test_identity(void) { in_tmp(body_identity); }

static void body_fuzz_metadata(void)
{
    char err[512];
    const char msg[] = "\x08\x01\x12\x04test packed metadata bytes";
    CHECK_EQ_INT(sl_snapshot_write_metadata(tmp_root, msg, sizeof msg - 1, err, sizeof err), SL_OK);
    char file[512], bad[512];
    tpath(file, sizeof file, "_metadata");
    tpath(bad, sizeof bad, "bad_metadata");
    size_t n;
    uint8_t *orig = slurp(file, &n);
    CHECK(orig);
    CHECK_EQ_INT(n, 24 + sizeof msg - 1);
    uint8_t *copy = malloc(n);
    void *p;
    size_t len;
    for (size_t i = 0; i < n; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, orig, n);
            copy[i] ^= (uint8_t)(1u << bit);
            CHECK(spill(bad, copy, n) == 0);
            p = NULL;
            err[0] = '\0';
            CHECK_EQ_INT(sl_snapshot_read_metadata(bad, &p, &len, err, sizeof err), SL_ERR);
            CHECK(p == NULL);
            CHECK(strstr(err, bad));
        }
    for (size_t l = 0; l < n; l++) {
        CHECK(spill(bad, orig, l) == 0);
        err[0] = '\0';
        CHECK_EQ_INT(sl_snapshot_read_metadata(bad, &p, &len, err, sizeof err), SL_ERR);
        CHECK(strstr(err, bad));
    }
    free(copy);
    free(orig);
}

static void test_fuzz_metadata(void) { in_tmp(body_fuzz_metadata); }

/* Forged files with good checksums but bad contents, and foreign files. */
static void body_bad_files(void)
{
    char path[512], bad[512], err[512];
    tpath(path, sizeof path, "small.state");
    tpath(bad, sizeof bad, "forged.state");
    CHECK_EQ_INT(crc32c_bitwise("123456789", 9), 0xe3069283u); /* the check value of CRC-32C */
    CHECK_EQ_INT(write_small(path), 0);
    size_t n;
    uint8_t *orig = slurp(path, &n);
    CHECK(orig);
    /* the header: magic, version, max parallelism, range, CRC-32C */
    CHECK(memcmp(orig, "SLSTATE\0", 8) == 0);
    CHECK_EQ_INT(le32(orig + 8), SL_SNAPSHOT_FORMAT_VERSION);
    CHECK_EQ_INT(le32(orig + 12), 8);
    CHECK_EQ_INT(le32(orig + 16), 0);
    CHECK_EQ_INT(le32(orig + 20), 7);
    CHECK_EQ_INT(le32(orig + 24), crc32c_bitwise(orig, 24));
    /* the trailer's CRC over index offset and length */
    CHECK_EQ_INT(le32(orig + n - 12), crc32c_bitwise(orig + n - 28, 16));
    CHECK(memcmp(orig + n - 8, "SLSTIDX\0", 8) == 0);

    uint8_t *copy = malloc(n);
    /* a future version */
    memcpy(copy, orig, n);
    set_le32(copy + 8, 3);
    set_le32(copy + 24, crc32c_bitwise(copy, 24));
    CHECK(spill(bad, copy, n) == 0);
    CHECK_EQ_INT(sl_snapr_info(bad, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, bad) && strstr(err, "version 3 is not supported"));
    /* version 2 without its identity section */
    memcpy(copy, orig, n);
    set_le32(copy + 8, 2);
    set_le32(copy + 24, crc32c_bitwise(copy, 24));
    CHECK(spill(bad, copy, n) == 0);
    CHECK_EQ_INT(sl_snapr_info(bad, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, bad) != NULL);
    /* key groups beyond max parallelism */
    memcpy(copy, orig, n);
    set_le32(copy + 20, 8);
    set_le32(copy + 24, crc32c_bitwise(copy, 24));
    CHECK(spill(bad, copy, n) == 0);
    CHECK_EQ_INT(sl_snapr_info(bad, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, bad) && strstr(err, "[0, 8] does not fit max parallelism 8"));
    /* a narrower range than the index was written for */
    memcpy(copy, orig, n);
    set_le32(copy + 20, 6);
    set_le32(copy + 24, crc32c_bitwise(copy, 24));
    CHECK(spill(bad, copy, n) == 0);
    CHECK_EQ_INT(sl_snapr_info(bad, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, bad));
    free(copy);
    free(orig);

    /* foreign, empty, missing, a directory */
    CHECK(spill(bad, "hello, this is not a state file at all, just some text", 55) == 0);
    CHECK_EQ_INT(sl_snapr_info(bad, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, bad) && strstr(err, "not a Sluice state file"));
    CHECK(spill(bad, "", 0) == 0);
    CHECK_EQ_INT(sl_snapr_info(bad, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, bad) && strstr(err, "truncated"));
    unlink(bad);
    CHECK_EQ_INT(sl_snapr_info(bad, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, bad) && strstr(err, "No such file"));
    CHECK_EQ_INT(sl_snapr_info(tmp_root, NULL, NULL, NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, tmp_root));
    void *p = (void *)1;
    size_t len;
    CHECK_EQ_INT(sl_snapshot_read_metadata(path, &p, &len, err, sizeof err), SL_ERR);
    CHECK(p == NULL && strstr(err, "not a Sluice snapshot metadata file"));
    /* a metadata file from the future */
    CHECK_EQ_INT(sl_snapshot_write_metadata(tmp_root, "x", 1, err, sizeof err), SL_OK);
    char md[512];
    tpath(md, sizeof md, "_metadata");
    uint8_t *m = slurp(md, &n);
    CHECK(m);
    set_le32(m + 8, 9);
    CHECK(spill(md, m, n) == 0);
    free(m);
    CHECK_EQ_INT(sl_snapshot_read_metadata(tmp_root, &p, &len, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "version 9 is not supported"));

    /* bad requests */
    rctx c = {.last_kg = -1};
    CHECK_EQ_INT(sl_snapr_keyed(path, 5, 3, on_entry, &c, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "[5, 3]"));
    CHECK_EQ_INT(sl_snapr_keyed(path, -1, 3, on_entry, &c, err, sizeof err), SL_ERR);
}

static void test_bad_files(void) { in_tmp(body_bad_files); }

/* ---- callbacks, order and argument errors ---------------------------------- */

static int stop_at_second(void *ctx, const sl_kentry *e)
{
    (void)e;
    return ++*(int *)ctx == 2 ? 7 : SL_OK;
}

static int timer_fails(void *ctx, const sl_snap_timer *t)
{
    (void)t, (void)ctx;
    return SL_ERR;
}

static void body_writer_rules(void)
{
    char path[512], err[512];
    tpath(path, sizeof path, "small.state");
    CHECK_EQ_INT(write_small(path), 0);
    /* a callback's non-zero return stops the walk and comes back as is */
    int calls = 0;
    CHECK_EQ_INT(sl_snapr_keyed(path, 0, 7, stop_at_second, &calls, err, sizeof err), 7);
    CHECK_EQ_INT(calls, 2);
    CHECK_EQ_INT(sl_snapr_timers(path, 0, 7, timer_fails, NULL, err, sizeof err), SL_ERR);

    /* sections out of order, twice, or with timers outside the range */
    sl_kstate *s = sl_kstate_open(SL_BACKEND_HASHMAP, NULL, 8, 0, 7, err, sizeof err);
    CHECK(s);
    sl_ksnap *snap = sl_kstate_snapshot(s, err, sizeof err);
    sl_snapw *w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    CHECK(w && snap);
    CHECK_EQ_INT(sl_snapw_timers(w, NULL, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapw_keyed(w, snap, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "keyed state given after a later section"));
    CHECK_EQ_INT(sl_snapw_timers(w, NULL, 0, err, sizeof err), SL_ERR);
    sl_snapw_abort(w);

    sl_snap_timer t = {.kind = 0, .time = 1, .kg = 3, .key = "k", .klen = 1};
    w = sl_snapw_open(path, 8, 4, 7, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_timers(w, &t, 1, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "key group 3, outside the file's [4, 7]"));
    CHECK_EQ_INT(sl_snapw_finish(w, NULL, err, sizeof err), SL_ERR); /* refuses and frees */
    CHECK(strstr(err, "key group 3"));
    t.kind = 2;
    t.kg = 5;
    w = sl_snapw_open(path, 8, 4, 7, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_timers(w, &t, 1, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "malformed"));
    sl_snapw_abort(w);
    /* a keyed snapshot of another range than the file's */
    w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    sl_kstate *s2 = sl_kstate_open(SL_BACKEND_HASHMAP, NULL, 8, 0, 3, err, sizeof err);
    sl_ksnap *snap2 = sl_kstate_snapshot(s2, err, sizeof err);
    CHECK_EQ_INT(sl_snapw_keyed(w, snap2, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "key group 4"));
    sl_snapw_abort(w);
    sl_ksnap_release(snap2);
    sl_kstate_close(s2);
    /* the original file survived all of that */
    CHECK_EQ_INT(readers_failing(path), 0);

    /* bad arguments to open */
    CHECK(!sl_snapw_open(path, 0, 0, 0, err, sizeof err));
    CHECK(strstr(err, "max parallelism 0"));
    CHECK(!sl_snapw_open(path, 8, 3, 8, err, sizeof err));
    CHECK(strstr(err, "[3, 8]"));
    char nodir[600];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/x.state", tmp_root);
    CHECK(!sl_snapw_open(nodir, 8, 0, 7, err, sizeof err));
    CHECK(strstr(err, "no/such/dir/x.state.tmp"));
    sl_ksnap_release(snap);
    sl_kstate_close(s);
}

static void test_writer_rules(void) { in_tmp(body_writer_rules); }

/* ---- atomicity ----------------------------------------------------------- */

static void body_atomic(void)
{
    char path[512], tmp[600], err[512];
    tpath(path, sizeof path, "op-0.state");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    sl_snapw *w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_opstate(w, "abc", 3, err, sizeof err), SL_OK);
    CHECK(!exists(path));
    CHECK(exists(tmp));
    sl_snapw_abort(w);
    CHECK(!exists(path));
    CHECK(!exists(tmp));

    w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_opstate(w, "abc", 3, err, sizeof err), SL_OK);
    CHECK(!exists(path));
    uint64_t size = 0;
    CHECK_EQ_INT(sl_snapw_finish(w, &size, err, sizeof err), SL_OK);
    CHECK(exists(path));
    CHECK(!exists(tmp));
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK_EQ_INT(size, st.st_size);
    /* header 28 + opstate section 24+3+4 + index 24+8*32+16+4 + trailer 28 */
    CHECK_EQ_INT(size, 28 + 31 + 300 + 28);

    /* an old file stays readable, whole, until the new one replaces it */
    w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_opstate(w, "newer", 5, err, sizeof err), SL_OK);
    void *blob;
    size_t blen;
    CHECK_EQ_INT(sl_snapr_opstate(path, &blob, &blen, err, sizeof err), SL_OK);
    CHECK(blen == 3 && memcmp(blob, "abc", 3) == 0);
    free(blob);
    CHECK_EQ_INT(sl_snapw_finish(w, NULL, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapr_opstate(path, &blob, &blen, err, sizeof err), SL_OK);
    CHECK(blen == 5 && memcmp(blob, "newer", 5) == 0);
    free(blob);

    /* _metadata is not there until written, and no temp file remains */
    char md[512], mdtmp[600];
    tpath(md, sizeof md, "_metadata");
    snprintf(mdtmp, sizeof mdtmp, "%s.tmp", md);
    CHECK(!exists(md));
    CHECK_EQ_INT(sl_snapshot_write_metadata(tmp_root, "m", 1, err, sizeof err), SL_OK);
    CHECK(exists(md));
    CHECK(!exists(mdtmp));
}

static void test_atomicity(void) { in_tmp(body_atomic); }

/* ---- directories ----------------------------------------------------------- */

static void touch(const char *dir, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    spill(p, "x", 1);
}

static void body_dirs(void)
{
    char dir[512], deep[600], err[512];
    tpath(dir, sizeof dir, "ckpt/job/chk-1");
    CHECK_EQ_INT(sl_mkdirs(dir, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_mkdirs(dir, err, sizeof err), SL_OK); /* already there */
    snprintf(deep, sizeof deep, "%s/a/b//c/", dir);
    CHECK_EQ_INT(sl_mkdirs(deep, err, sizeof err), SL_OK);
    snprintf(deep, sizeof deep, "%s/a/b/c", dir);
    struct stat st;
    CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
    /* a file in the way */
    touch(dir, "afile");
    snprintf(deep, sizeof deep, "%s/afile/sub", dir);
    CHECK_EQ_INT(sl_mkdirs(deep, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "afile") && strstr(err, "not a directory"));
    CHECK_EQ_INT(sl_mkdirs("", err, sizeof err), SL_ERR);

    /* remove: a snapshot directory goes, files and all */
    char snap[512];
    tpath(snap, sizeof snap, "ckpt/job/chk-2");
    CHECK_EQ_INT(sl_mkdirs(snap, err, sizeof err), SL_OK);
    touch(snap, "_metadata");
    touch(snap, "agg-0.state");
    touch(snap, "agg-1.state.tmp");
    touch(snap, "_metadata.tmp");
    CHECK_EQ_INT(sl_snapshot_remove(snap, err, sizeof err), SL_OK);
    CHECK(!exists(snap));
    /* an empty one too, and one already gone is nothing to do */
    CHECK_EQ_INT(sl_mkdirs(snap, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapshot_remove(snap, err, sizeof err), SL_OK);
    CHECK(!exists(snap));
    CHECK_EQ_INT(sl_snapshot_remove(snap, err, sizeof err), SL_OK);

    /* anything else inside: refuse and touch nothing */
    CHECK_EQ_INT(sl_mkdirs(snap, err, sizeof err), SL_OK);
    touch(snap, "_metadata");
    touch(snap, "agg-0.state");
    touch(snap, "notes.txt");
    CHECK_EQ_INT(sl_snapshot_remove(snap, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "refusing") && strstr(err, "notes.txt") && strstr(err, snap));
    char p[700];
    snprintf(p, sizeof p, "%s/_metadata", snap);
    CHECK(exists(p));
    snprintf(p, sizeof p, "%s/agg-0.state", snap);
    CHECK(exists(p));
    snprintf(p, sizeof p, "%s/notes.txt", snap);
    unlink(p);
    /* a directory named like a state file is not a state file */
    snprintf(p, sizeof p, "%s/sub.state", snap);
    CHECK(mkdir(p, 0755) == 0);
    touch(p, "precious");
    CHECK_EQ_INT(sl_snapshot_remove(snap, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "sub.state"));
    snprintf(p, sizeof p, "%s/sub.state/precious", snap);
    CHECK(exists(p));
    /* nor is a bare suffix */
    snprintf(p, sizeof p, "%s/sub.state/precious", snap);
    unlink(p);
    snprintf(p, sizeof p, "%s/sub.state", snap);
    rmdir(p);
    touch(snap, ".state");
    CHECK_EQ_INT(sl_snapshot_remove(snap, err, sizeof err), SL_ERR);
    snprintf(p, sizeof p, "%s/.state", snap);
    unlink(p);
    CHECK_EQ_INT(sl_snapshot_remove(snap, err, sizeof err), SL_OK);
    CHECK(!exists(snap));
    /* not a directory */
    snprintf(p, sizeof p, "%s/afile", dir);
    CHECK_EQ_INT(sl_snapshot_remove(p, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "afile"));
}

static void test_directories(void) { in_tmp(body_dirs); }

/* ---- incremental checkpoints --------------------------------------------- */

static int rm_entry_for_inc(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* Reference counts against a brute-force model: a seeded stream of
 * checkpoints, each referencing files that appear, live a while and are
 * compacted away (as SST files are); with R retained, dropping the oldest
 * must free exactly the files of it that no retained one lists. */
static void test_shared_refs_model(void)
{
    enum { STEPS = 400, R = 3, MAXF = 64 };
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    sl_shared_refs *r = sl_shared_refs_new();
    char *ckpt[STEPS][MAXF];
    size_t nf[STEPS];
    int live[1024] = {0}; /* files alive now, by number */
    int next_file = 0, first_retained = 0;
    for (int step = 0; step < STEPS; step++) {
        /* some files get compacted away, some new ones appear */
        for (int f = 0; f < next_file; f++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            if (live[f] && (seed >> 33) % 5 == 0) live[f] = 0;
        }
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int fresh = (int)((seed >> 33) % 4);
        for (int k = 0; k < fresh && next_file < 1024; k++) live[next_file++] = 1;
        nf[step] = 0;
        for (int f = 0; f < next_file && nf[step] < MAXF; f++)
            if (live[f]) ckpt[step][nf[step]++] = sl_sprintf("0123456789abcdef-%06d.sst", f);
        sl_shared_refs_add(r, ckpt[step], nf[step]);
        if (step - first_retained + 1 > R) {
            int drop = first_retained++;
            size_t ndead = 0;
            char **dead = sl_shared_refs_release(r, ckpt[drop], nf[drop], &ndead);
            /* the model: files of drop in none of the retained */
            size_t want = 0;
            for (size_t i = 0; i < nf[drop]; i++) {
                int still = 0;
                for (int c = first_retained; c <= step && !still; c++)
                    for (size_t k = 0; k < nf[c] && !still; k++) still = !strcmp(ckpt[c][k], ckpt[drop][i]);
                if (still) continue;
                want++;
                int listed = 0;
                for (size_t k = 0; k < ndead; k++) listed |= !strcmp(dead[k], ckpt[drop][i]);
                CHECK(listed);
            }
            CHECK_EQ_INT(ndead, want);
            for (size_t k = 0; k < ndead; k++) free(dead[k]);
            free(dead);
        }
        /* every count equals the number of retained checkpoints listing it */
        size_t distinct = 0;
        for (int f = 0; f < next_file; f++) {
            char name[64];
            snprintf(name, sizeof name, "0123456789abcdef-%06d.sst", f);
            int n = 0;
            for (int c = first_retained; c <= step; c++)
                for (size_t k = 0; k < nf[c]; k++) n += !strcmp(ckpt[c][k], name);
            CHECK_EQ_INT(sl_shared_refs_count(r, name), n);
            distinct += n > 0;
        }
        CHECK_EQ_INT(sl_shared_refs_size(r), distinct);
    }
    /* a name listed twice in one checkpoint counts once; unknown names are ignored */
    char *dup[] = {"0123456789abcdef-999999.sst", "0123456789abcdef-999999.sst"};
    sl_shared_refs_add(r, dup, 2);
    CHECK_EQ_INT(sl_shared_refs_count(r, dup[0]), 1);
    size_t nd = 0;
    char **d = sl_shared_refs_release(r, dup, 2, &nd);
    CHECK_EQ_INT(nd, 1);
    free(d[0]);
    free(d);
    char *unknown[] = {"ffffffffffffffff-000001.sst"};
    d = sl_shared_refs_release(r, unknown, 1, &nd);
    CHECK_EQ_INT(nd, 0);
    free(d);
    for (int c = 0; c < STEPS; c++)
        for (size_t k = 0; k < nf[c]; k++) free(ckpt[c][k]);
    sl_shared_refs_free(r);
}

typedef struct inc_count { uint64_t n, sum; int bad; } inc_count;

static int inc_visit(void *ctx, const sl_kentry *e)
{
    inc_count *c = ctx;
    /* key "k<i>", value "v<i>-<gen>" written by the test */
    char key[32], val[48];
    snprintf(key, sizeof key, "%.*s", (int)e->klen, (const char *)e->key);
    snprintf(val, sizeof val, "%.*s", (int)e->vlen, (const char *)e->val);
    int i = atoi(key + 1);
    char want[48];
    snprintf(want, sizeof want, "v%d-%d", i, i % 10 == 0 ? 1 : 0);
    if (strcmp(val, want)) c->bad++;
    c->n++;
    c->sum += (uint64_t)i;
    return 0;
}

/* A RocksDB state checkpointed twice: the second upload writes less than
 * it references, the files come back under RocksDB's names, and reading
 * them gives exactly the entries written. */
static void test_incremental_upload_stage(void)
{
    char root[256], err[512] = "";
    snprintf(root, sizeof root, "/tmp/sl-inc-XXXXXX");
    CHECK(mkdtemp(root));
    char db[400], local[400], chk1[400], chk2[400], stage[400];
    snprintf(db, sizeof db, "%s/db", root);
    snprintf(local, sizeof local, "%s/db.chk", root);
    snprintf(chk1, sizeof chk1, "%s/job/chk-1", root);
    snprintf(chk2, sizeof chk2, "%s/job/chk-2", root);
    snprintf(stage, sizeof stage, "%s/stage", root);
    sl_kstate *s = sl_kstate_open(SL_BACKEND_ROCKSDB, db, 128, 0, 127, err, sizeof err);
    CHECK(s);
    CHECK_EQ_INT(sl_kstate_register(s, "v"), 0);
    enum { N = 20000 };
    for (int i = 0; i < N; i++) {
        char key[32], val[48];
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d-0", i);
        sl_kstate_set_key(s, key, strlen(key), sl_kg_of_key(key, strlen(key), 128));
        CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, val, strlen(val), err, sizeof err), SL_OK);
    }
    CHECK_EQ_INT(sl_mkdirs(chk1, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_kstate_rocksdb_checkpoint(s, local, err, sizeof err), SL_OK);
    sl_inc_files f1, f2;
    CHECK_EQ_INT(sl_inc_upload(local, sl_kstate_rocksdb_instance(s), chk1, &f1, err, sizeof err), SL_OK);
    CHECK(f1.nshared >= 1 && f1.npriv >= 2);
    CHECK_EQ_INT(f1.written, f1.size); /* the first one writes everything */
    CHECK_EQ_INT(sl_rm_tree(local, err, sizeof err), SL_OK);
    /* a tenth of the keys change */
    for (int i = 0; i < N; i += 10) {
        char key[32], val[48];
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d-1", i);
        sl_kstate_set_key(s, key, strlen(key), sl_kg_of_key(key, strlen(key), 128));
        CHECK_EQ_INT(sl_kstate_put(s, 0, "", 0, val, strlen(val), err, sizeof err), SL_OK);
    }
    CHECK_EQ_INT(sl_mkdirs(chk2, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_kstate_rocksdb_checkpoint(s, local, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_inc_upload(local, sl_kstate_rocksdb_instance(s), chk2, &f2, err, sizeof err), SL_OK);
    CHECK(f2.nshared > f1.nshared);  /* the old SST file is referenced again */
    CHECK(f2.written < f2.size);     /* ... not written again */
    for (size_t i = 0; i < f1.nshared; i++) {
        int again = 0;
        for (size_t k = 0; k < f2.nshared; k++) again |= !strcmp(f1.shared[i], f2.shared[k]);
        CHECK(again);
        CHECK(sl_inc_name_ok(f1.shared[i], 0));
    }
    sl_kstate_close(s);
    /* restore the second one, key groups [0, 63] and then all of them */
    Sluice__SubtaskState ss = SLUICE__SUBTASK_STATE__INIT;
    ss.shared_files = f2.shared;
    ss.n_shared_files = f2.nshared;
    ss.private_files = f2.priv;
    ss.n_private_files = f2.npriv;
    CHECK_EQ_INT(sl_inc_stage(chk2, &ss, stage, err, sizeof err), SL_OK);
    inc_count all = {0, 0, 0}, half = {0, 0, 0};
    CHECK_EQ_INT(sl_rocksdb_read_checkpoint(stage, 0, 127, inc_visit, &all, err, sizeof err), SL_OK);
    CHECK_EQ_INT(all.n, N);
    CHECK_EQ_INT(all.sum, (uint64_t)N * (N - 1) / 2);
    CHECK_EQ_INT(all.bad, 0);
    CHECK_EQ_INT(sl_rocksdb_read_checkpoint(stage, 0, 63, inc_visit, &half, err, sizeof err), SL_OK);
    uint64_t want = 0;
    for (int i = 0; i < N; i++) {
        char key[32];
        snprintf(key, sizeof key, "k%d", i);
        want += sl_kg_of_key(key, strlen(key), 128) <= 63;
    }
    CHECK_EQ_INT(half.n, want);
    CHECK_EQ_INT(half.bad, 0);
    /* the shared directory is the snapshot directory's sibling, written any way */
    char *a = sl_inc_shared_dir("/c/job/chk-2"), *b = sl_inc_shared_dir("/c/job/chk-2//"),
         *c = sl_inc_shared_dir("chk-2");
    CHECK_EQ_STR(a, "/c/job/shared");
    CHECK_EQ_STR(b, "/c/job/shared");
    CHECK_EQ_STR(c, "shared");
    free(a);
    free(b);
    free(c);
    /* a missing shared file is a clear error */
    char *sh = sl_inc_shared_dir(chk2);
    char gone[600];
    snprintf(gone, sizeof gone, "%s/%s", sh, f2.shared[0]);
    CHECK_EQ_INT(unlink(gone), 0);
    CHECK_EQ_INT(sl_inc_stage(chk2, &ss, stage, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "missing or unreadable") != NULL);
    free(sh);
    sl_inc_files_free(&f1);
    sl_inc_files_free(&f2);
    nftw(root, rm_entry_for_inc, 16, FTW_DEPTH | FTW_PHYS);
}

/* sl_snapshot_check over a snapshot of three subtasks' files: one intact,
 * one with a flipped byte in a section's payload, one truncated. Each
 * damaged file is named with what is wrong, the CRCs worked out here. */
static void body_check_snapshot(void)
{
    char err[2048], files[3][512];
    const char *names[3] = {"op-a-0.state", "op-a-1.state", "op-a-2.state"};
    Sluice__SubtaskState st[3], *sts[3];
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        tpath(files[i], sizeof files[i], names[i]);
        CHECK_EQ_INT(write_small(files[i]), 0); /* version 1: key groups [0, 7] of 8 */
        struct stat sb;
        CHECK_EQ_INT(stat(files[i], &sb), 0);
        n = (size_t)sb.st_size;
        sluice__subtask_state__init(&st[i]);
        st[i].subtask = (uint32_t)i, st[i].file = (char *)names[i], st[i].kg_first = 0;
        st[i].kg_last = 7, st[i].size = n, st[i].has_opstate = 1;
        sts[i] = &st[i];
    }
    Sluice__OperatorState op = SLUICE__OPERATOR_STATE__INIT;
    op.uid = "op-a";
    op.parallelism = 3;
    op.n_subtasks = 3;
    op.subtasks = sts;
    Sluice__OperatorState *ops[1] = {&op};
    Sluice__SnapshotMetadata md = SLUICE__SNAPSHOT_METADATA__INIT;
    md.format_version = SL_SNAPSHOT_FORMAT_VERSION;
    md.job_id = "job-1";
    md.max_parallelism = 8;
    md.n_operators = 1;
    md.operators = ops;
    int nbad = -1, nfiles = -1;
    CHECK_EQ_INT(sl_snapshot_check(tmp_root, &md, &nbad, &nfiles, err, sizeof err), SL_OK);
    CHECK_EQ_INT(nbad, 0);
    CHECK_EQ_INT(nfiles, 3);
    CHECK_EQ_STR(err, "");

    /* op-a-1: one byte of the first section's payload (KEYS of key group 1,
     * right after the 28-byte header) flipped */
    uint8_t *raw = slurp(files[1], &n);
    CHECK(raw);
    const size_t off = 28;
    CHECK(memcmp(raw + off, "KEYS", 4) == 0);
    CHECK_EQ_INT(le32(raw + off + 4), 1);
    size_t plen = (size_t)le32(raw + off + 16), slen = 24 + plen + 4;
    raw[off + 24 + 2] ^= 0x10;
    uint8_t *cat = malloc(plen + 24); /* the CRC covers the payload, then the header */
    memcpy(cat, raw + off + 24, plen);
    memcpy(cat + plen, raw + off, 24);
    uint32_t computed = crc32c_bitwise(cat, plen + 24), stored = le32(raw + off + 24 + plen);
    free(cat);
    CHECK(computed != stored);
    CHECK(spill(files[1], raw, n) == 0);
    free(raw);
    /* op-a-2: its last 9 bytes gone */
    CHECK_EQ_INT(truncate(files[2], (off_t)n - 9), 0);

    CHECK_EQ_INT(sl_snapshot_check(tmp_root, &md, &nbad, &nfiles, err, sizeof err), SL_ERR);
    CHECK_EQ_INT(nbad, 2);
    CHECK_EQ_INT(nfiles, 3);
    char want[2048];
    snprintf(want, sizeof want,
             "%s: the entries of key group 1 (offset 28, %zu bytes) is damaged: CRC-32C mismatch "
             "(stored %08x, computed %08x)\n"
             "%s: %zu bytes, but _metadata records %zu for operator 'op-a' subtask 2 "
             "(truncated)",
             files[1], slen, stored, computed, files[2], n - 9, n);
    CHECK_EQ_STR(err, want);
    /* the restore's own check passes op-a-1 (its sections are read only when
     * restored): this is what the check adds */
    CHECK_EQ_INT(sl_snapshot_verify_file(tmp_root, &md, &op, &st[1], err, sizeof err), SL_OK);

    /* a file longer than _metadata says: named, with both sizes */
    CHECK_EQ_INT(write_small(files[2]), 0);
    FILE *f = fopen(files[0], "ab");
    CHECK(f);
    fputs("junk", f);
    fclose(f);
    CHECK_EQ_INT(sl_snapshot_check(tmp_root, &md, &nbad, &nfiles, err, sizeof err), SL_ERR);
    CHECK_EQ_INT(nbad, 2);
    snprintf(want, sizeof want, "%s: %zu bytes, but _metadata records %zu for operator 'op-a' "
             "subtask 0 (bytes added)\n", files[0], n + 4, n);
    CHECK(strncmp(err, want, strlen(want)) == 0);

    /* a list longer than the buffer: whole lines, then how many more */
    char small[200];
    CHECK_EQ_INT(sl_snapshot_check(tmp_root, &md, &nbad, &nfiles, small, sizeof small), SL_ERR);
    CHECK(strstr(small, "(and ") != NULL && strstr(small, " more damaged files)") != NULL);
}

static void test_check_snapshot(void) { in_tmp(body_check_snapshot); }

/* A section far bigger than the check's 64 KiB piece: read whole, a flipped
 * byte deep inside it found. */
static void body_check_big_section(void)
{
    char path[512], err[512];
    tpath(path, sizeof path, "big.state");
    uint8_t *blob = malloc(BIG_LEN);
    for (size_t i = 0; i < BIG_LEN; i++) blob[i] = (uint8_t)(i * 7 + (i >> 11));
    sl_snapw *w = sl_snapw_open(path, 8, 0, 7, err, sizeof err);
    CHECK(w);
    CHECK_EQ_INT(sl_snapw_opstate(w, blob, BIG_LEN, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_snapw_finish(w, NULL, err, sizeof err), SL_OK);
    free(blob);
    CHECK_EQ_INT(sl_snapr_check(path, err, sizeof err), SL_OK);
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    uint8_t b;
    const off_t at = 28 + 24 + (2u << 20) + 5;
    CHECK_EQ_INT(pread(fd, &b, 1, at), 1);
    b ^= 0x01;
    CHECK_EQ_INT(pwrite(fd, &b, 1, at), 1);
    close(fd);
    CHECK_EQ_INT(sl_snapr_check(path, err, sizeof err), SL_ERR);
    CHECK(strstr(err, path) && strstr(err, "the operator state (offset 28, ") &&
          strstr(err, "is damaged: CRC-32C mismatch (stored "));
}

static void test_check_big_section(void) { in_tmp(body_check_big_section); }

SL_TEST_MAIN(SL_TEST(test_roundtrip_keyed), SL_TEST(test_rescale_split), SL_TEST(test_timers_opstate),
             SL_TEST(test_canonical_bytes), SL_TEST(test_write_on_other_thread),
             SL_TEST(test_metadata_roundtrip), SL_TEST(test_fuzz_state_file),
             SL_TEST(test_fuzz_metadata), SL_TEST(test_bad_files), SL_TEST(test_writer_rules),
             SL_TEST(test_atomicity), SL_TEST(test_directories), SL_TEST(test_identity),
             SL_TEST(test_shared_refs_model), SL_TEST(test_incremental_upload_stage),
             SL_TEST(test_check_snapshot), SL_TEST(test_check_big_section))
