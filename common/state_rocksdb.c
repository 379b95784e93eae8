/*
 * state_rocksdb.c -- the RocksDB keyed-state backend, over RocksDB's C API.
 *
 * One RocksDB instance per sl_kstate, in its own directory: the directory is
 * removed and recreated at open (state comes back from checkpoints, never
 * from a previous run's files) and removed again at close. The RocksDB key
 * is the encoded key of state_int.h, kg | sid | klen | key | ns, so a key
 * group is one contiguous key range and one key's namespaces are one
 * contiguous range inside it.
 *
 * Writes go with the write-ahead log disabled: durability comes from
 * checkpoints. One read-options and one write-options object are made at
 * open and reused. A get reads through rocksdb_get_pinned and copies the
 * value into a buffer the state owns (8-byte aligned, like the hashmap's,
 * and borrowed until the next call). RocksDB's C API allocates a small
 * handle per get; that allocation is inside RocksDB and unavoidable here.
 *
 * sl_kstate_entries and sl_kstate_bytes are exact counters. To keep them
 * without an extra read per write, the state remembers what it last learnt
 * about one encoded key (present or not, value length): the usual
 * read-modify-write -- get, then put or del of the same entry -- needs no
 * second read; a blind put or del of another entry reads first (a bloom
 * filter makes that cheap for absent keys).
 *
 * Snapshots are RocksDB snapshots: sl_kstate_snapshot is O(1), and
 * sl_ksnap_each runs an iterator pinned to the snapshot over the key
 * group's range, from any thread. The database handle is reference
 * counted, so a snapshot that outlives sl_kstate_close still reads
 * correctly; the database closes and its directory goes when the last of
 * them is released.
 *
 * RocksDB reports errors through `char **errptr`; rdb_err translates that,
 * once, into the caller's err buffer.
 */
#include <errno.h>
#include <ftw.h>
#include <rocksdb/c.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state_int.h"

/* The database, shared by the state and its live snapshots. */
typedef struct rdb_db {
    _Atomic int refs;
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *topts;
    char *dir;
} rdb_db;

typedef struct rdb_state {
    sl_kstate base;
    rdb_db *d;
    rocksdb_writeoptions_t *wo;    /* WAL disabled */
    rocksdb_readoptions_t *ro;     /* gets */
    rocksdb_readoptions_t *ro_scan; /* scan_key: upper bound set per scan */
    uint8_t *ub;                   /* scan_key's upper bound (the prefix's successor) */
    size_t ub_cap;
    uint8_t *val;                  /* the last value read, handed out borrowed */
    size_t val_cap;
    uint8_t *known;                /* the encoded key the next three fields describe */
    size_t known_len, known_cap;
    int known_found;               /* known_len > 0: whether that entry exists */
    size_t known_vlen;             /* and its value length if it does */
} rdb_state;

typedef struct rdb_snap {
    sl_ksnap base;
    rdb_db *d;
    const rocksdb_snapshot_t *snap;
} rdb_snap;

static int rdb_err(char *e, const char *what, const char *dir, char *err, size_t errlen)
{
    sl_seterr(err, errlen, "rocksdb state in '%s': %s: %s", dir, what, e ? e : "unknown error");
    rocksdb_free(e);
    return SL_ERR;
}

static void reserve(uint8_t **buf, size_t *cap, size_t n)
{
    if (n <= *cap) return;
    size_t c = *cap ? *cap : 64;
    while (c < n) c *= 2;
    free(*buf); /* contents need not survive */
    *buf = sl_malloc(c);
    *cap = c;
}

/* ---- the directory ------------------------------------------------------ */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Remove dir and everything below it; a missing dir is fine. */
static int rm_tree(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return SL_OK; /* mk_tree will say why */
        return sl_seterr(err, errlen, "rocksdb state: cannot inspect '%s': %s", dir,
                         strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return sl_seterr(err, errlen, "rocksdb state: '%s' exists and is not a directory", dir);
    if (nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return sl_seterr(err, errlen, "rocksdb state: cannot remove old directory '%s': %s", dir,
                         strerror(errno));
    return SL_OK;
}

/* mkdir -p */
static int mk_tree(const char *dir, char *err, size_t errlen)
{
    char *p = sl_strdup(dir);
    int rc = SL_OK;
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c != '\0') continue;
        char saved = *c;
        *c = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            rc = sl_seterr(err, errlen, "rocksdb state: cannot create directory '%s' (at '%s'): %s",
                           dir, p, strerror(errno));
            break;
        }
        *c = saved;
        if (!saved) break;
    }
    if (rc == SL_OK) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = sl_seterr(err, errlen, "rocksdb state: cannot create directory '%s': %s", dir,
                           errno ? strerror(errno) : "not a directory");
    }
    free(p);
    return rc;
}

static void db_unref(rdb_db *d)
{
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) return;
    if (d->db) rocksdb_close(d->db);
    rocksdb_options_destroy(d->opts);
    rocksdb_block_based_options_destroy(d->topts);
    if (d->db) (void)rm_tree(d->dir, NULL, 0); /* best effort: nobody to tell */
    free(d->dir);
    free(d);
}

/* ---- what is known about one entry ----------------------------------------- */

static void known_set(rdb_state *st, const uint8_t *k, size_t n, int found, size_t vlen)
{
    if (n > st->known_cap) {
        st->known_cap = n * 2;
        st->known = sl_realloc(st->known, st->known_cap);
    }
    memcpy(st->known, k, n);
    st->known_len = n;
    st->known_found = found;
    st->known_vlen = vlen;
}

/* Whether encoded key k exists, and its value length: from what is known,
 * else by reading. */
static int lookup(rdb_state *st, const uint8_t *k, size_t n, int *found, size_t *vlen, char *err,
                  size_t errlen)
{
    if (st->known_len == n && memcmp(st->known, k, n) == 0) {
        *found = st->known_found;
        *vlen = st->known_vlen;
        return SL_OK;
    }
    char *e = NULL;
    rocksdb_pinnableslice_t *ps = rocksdb_get_pinned(st->d->db, st->ro, (const char *)k, n, &e);
    if (e) return rdb_err(e, "get", st->d->dir, err, errlen);
    *found = ps != NULL;
    *vlen = 0;
    if (ps) {
        rocksdb_pinnableslice_value(ps, vlen);
        rocksdb_pinnableslice_destroy(ps);
    }
    return SL_OK;
}

/* ---- operations --------------------------------------------------------- */

static int rdb_get(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void **val,
                   size_t *vlen, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    char *e = NULL;
    rocksdb_pinnableslice_t *ps = rocksdb_get_pinned(st->d->db, st->ro, (const char *)k, klen, &e);
    if (e) return rdb_err(e, "get", st->d->dir, err, errlen);
    if (!ps) {
        known_set(st, k, klen, 0, 0);
        return SL_DONE;
    }
    size_t n = 0;
    const char *v = rocksdb_pinnableslice_value(ps, &n);
    reserve(&st->val, &st->val_cap, n + 1);
    if (n) memcpy(st->val, v, n);
    rocksdb_pinnableslice_destroy(ps);
    known_set(st, k, klen, 1, n);
    *val = st->val;
    *vlen = n;
    return SL_OK;
}

static int rdb_put(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void *val,
                   size_t vlen, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    int found;
    size_t old;
    if (lookup(st, k, klen, &found, &old, err, errlen) != SL_OK) return SL_ERR;
    char *e = NULL;
    rocksdb_put(st->d->db, st->wo, (const char *)k, klen, val ? (const char *)val : "", vlen, &e);
    if (e) {
        st->known_len = 0;
        return rdb_err(e, "put", st->d->dir, err, errlen);
    }
    if (found) {
        s->bytes = s->bytes - old + vlen;
    } else {
        s->entries++;
        s->bytes += klen - SL_KENC_HDR + vlen;
    }
    known_set(st, k, klen, 1, vlen);
    return SL_OK;
}

/* Deleting an absent entry is not an error: SL_OK either way. */
static int rdb_del(sl_kstate *s, int kg, const uint8_t *k, size_t klen, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    int found;
    size_t old;
    if (lookup(st, k, klen, &found, &old, err, errlen) != SL_OK) return SL_ERR;
    if (!found) return SL_OK;
    char *e = NULL;
    rocksdb_delete(st->d->db, st->wo, (const char *)k, klen, &e);
    if (e) {
        st->known_len = 0;
        return rdb_err(e, "delete", st->d->dir, err, errlen);
    }
    s->entries--;
    s->bytes -= klen - SL_KENC_HDR + old;
    known_set(st, k, klen, 0, 0);
    return SL_OK;
}

static int rdb_scan(sl_kstate *s, int kg, const uint8_t *prefix, size_t plen, sl_kscan_fn fn,
                    void *ctx, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    /* the smallest key above every key starting with prefix: bump the last
     * byte below 0xff and cut after it (byte 0 is a kg below 0x80) */
    reserve(&st->ub, &st->ub_cap, plen);
    memcpy(st->ub, prefix, plen);
    size_t ublen = plen;
    while (ublen > 0 && st->ub[ublen - 1] == 0xff) ublen--;
    SL_ASSERT(ublen > 0);
    st->ub[ublen - 1]++;
    rocksdb_readoptions_set_iterate_upper_bound(st->ro_scan, (const char *)st->ub, ublen);
    rocksdb_iterator_t *it = rocksdb_create_iterator(st->d->db, st->ro_scan);
    for (rocksdb_iter_seek(it, (const char *)prefix, plen); rocksdb_iter_valid(it);
         rocksdb_iter_next(it)) {
        size_t kn = 0, vn = 0;
        const char *key = rocksdb_iter_key(it, &kn);
        const char *v = rocksdb_iter_value(it, &vn);
        if (kn < plen || memcmp(key, prefix, plen) != 0) break;
        reserve(&st->val, &st->val_cap, vn + 1);
        if (vn) memcpy(st->val, v, vn);
        if (fn(ctx, key + plen, kn - plen, st->val, vn)) break;
    }
    char *e = NULL;
    rocksdb_iter_get_error(it, &e);
    rocksdb_iter_destroy(it);
    if (e) return rdb_err(e, "scan", st->d->dir, err, errlen);
    return SL_OK;
}

/* ---- snapshots ---------------------------------------------------------- */

static int rdb_snap_each(sl_ksnap *base, int kg, int (*fn)(void *ctx, const sl_kentry *e),
                         void *ctx, char *err, size_t errlen)
{
    rdb_snap *sn = (rdb_snap *)base;
    uint8_t lo[2], hi[2];
    sl_put_be16(lo, (uint16_t)kg);
    sl_put_be16(hi, (uint16_t)(kg + 1));
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    rocksdb_readoptions_set_snapshot(ro, sn->snap);
    rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)hi, 2);
    rocksdb_readoptions_set_fill_cache(ro, 0); /* a bulk read: keep the hot blocks */
    rocksdb_iterator_t *it = rocksdb_create_iterator(sn->d->db, ro);
    int rc = SL_OK;
    for (rocksdb_iter_seek(it, (const char *)lo, 2); rc == SL_OK && rocksdb_iter_valid(it);
         rocksdb_iter_next(it)) {
        size_t kn = 0, vn = 0;
        const uint8_t *key = (const uint8_t *)rocksdb_iter_key(it, &kn);
        sl_kentry ke;
        if (sl_kenc_decode(key, kn, &ke) != SL_OK || ke.kg != kg) {
            rc = sl_seterr(err, errlen,
                           "rocksdb state in '%s': malformed key of %zu bytes in key group %d",
                           sn->d->dir, kn, kg);
            break;
        }
        ke.val = rocksdb_iter_value(it, &vn);
        ke.vlen = vn;
        rc = fn(ctx, &ke);
    }
    char *e = NULL;
    rocksdb_iter_get_error(it, &e);
    rocksdb_iter_destroy(it);
    rocksdb_readoptions_destroy(ro);
    if (e) return rdb_err(e, "snapshot scan", sn->d->dir, err, errlen);
    return rc;
}

static void rdb_snap_release(sl_ksnap *base)
{
    rdb_snap *sn = (rdb_snap *)base;
    rocksdb_release_snapshot(sn->d->db, sn->snap);
    db_unref(sn->d);
    free(sn);
}

static const sl_ksnap_ops rdb_snap_ops = {
    .each = rdb_snap_each,
    .release = rdb_snap_release,
};

static sl_ksnap *rdb_snapshot(sl_kstate *s, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    rdb_snap *sn = sl_calloc(1, sizeof *sn);
    sn->base.ops = &rdb_snap_ops;
    sn->d = st->d;
    atomic_fetch_add_explicit(&st->d->refs, 1, memory_order_relaxed);
    sn->snap = rocksdb_create_snapshot(st->d->db);
    return &sn->base;
}

/* ---- open and close ----------------------------------------------------- */

static void rdb_close(sl_kstate *s)
{
    rdb_state *st = (rdb_state *)s;
    rocksdb_writeoptions_destroy(st->wo);
    rocksdb_readoptions_destroy(st->ro);
    rocksdb_readoptions_destroy(st->ro_scan);
    free(st->ub);
    free(st->val);
    free(st->known);
    db_unref(st->d);
    sl_kstate_base_free(s);
    free(st);
}

static const sl_kstate_ops rdb_ops = {
    .get = rdb_get,
    .put = rdb_put,
    .del = rdb_del,
    .scan = rdb_scan,
    .snapshot = rdb_snapshot,
    .close = rdb_close,
};

sl_kstate *sl_kstate_rocksdb_open(const char *dir, char *err, size_t errlen)
{
    if (strcmp(dir, "/") == 0) {
        sl_seterr(err, errlen, "rocksdb state: refusing to use '/' as the state directory");
        return NULL;
    }
    if (rm_tree(dir, err, errlen) != SL_OK || mk_tree(dir, err, errlen) != SL_OK) return NULL;

    rdb_db *d = sl_calloc(1, sizeof *d);
    atomic_init(&d->refs, 1);
    d->dir = sl_strdup(dir);
    d->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(d->opts, 1);
    rocksdb_options_set_info_log_level(d->opts, 2 /* WARN */);
    rocksdb_options_set_keep_log_file_num(d->opts, 1);
    rocksdb_options_increase_parallelism(d->opts, 2);
    /* a bloom filter keeps the existence read of a blind put of a new entry cheap */
    d->topts = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_filter_policy(d->topts, rocksdb_filterpolicy_create_bloom(10));
    rocksdb_options_set_block_based_table_factory(d->opts, d->topts);

    char *e = NULL;
    d->db = rocksdb_open(d->opts, dir, &e);
    if (e || !d->db) {
        rdb_err(e, "open", dir, err, errlen);
        if (d->db) rocksdb_close(d->db);
        d->db = NULL;
        db_unref(d);
        (void)rm_tree(dir, NULL, 0);
        return NULL;
    }

    rdb_state *st = sl_calloc(1, sizeof *st);
    st->base.ops = &rdb_ops;
    st->d = d;
    st->wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(st->wo, 1);
    st->ro = rocksdb_readoptions_create();
    st->ro_scan = rocksdb_readoptions_create();
    return &st->base;
}
