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
 * The write buffer. RocksDB is not touched once per record: gets, puts and
 * deletes go through a bounded write-back buffer in front of it (an arena of
 * entries -- encoded key, value, state -- with an open-addressing index), so
 * the usual read-modify-write of a record is one buffer lookup, and RocksDB
 * sees a get only for an entry not in the buffer and a write batch when the
 * buffer flushes: when it is full (RB_ARENA bytes or RB_MAX_ENTRIES
 * entries) and before an incremental checkpoint (which is RocksDB's files). An entry's
 * state says what RocksDB holds for it: CLEAN (read, unchanged), ABSENT
 * (known not to be there), DIRTY (a value to write), GONE (a delete to
 * write); `indb` says whether RocksDB may hold a value for it, so that
 * deleting an entry RocksDB never saw (a window's accumulator created and
 * fired between two flushes) writes no tombstone. Values handed out are
 * borrowed until the next call, 8-byte aligned. An entry larger than the
 * buffer bypasses it (after a flush).
 *
 * sl_kstate_entries and sl_kstate_bytes are exact counters. The buffer knows
 * whether each entry it holds exists; a blind put or del of an entry it
 * does not hold reads first (a bloom filter makes that cheap for absent
 * keys).
 *
 * Scans (scan_key: one key's entries) do not flush it either. Entries of a
 * state id that has been scanned are chained per key prefix (kg|sid|klen|
 * key, hashed into RB_PHEADS chain heads; the first scan of a state id
 * flushes once, so from then on every buffered entry of it is on a chain),
 * and a scan merges them with one RocksDB iterator, kept from one write of
 * RocksDB (a batch, a direct put or delete) to the next, so a scan is a seek
 * plus the key's entries, not a batch write and a new iterator; the
 * buffer's entry wins where both hold a key.
 *
 * Snapshots do not flush the buffer: a snapshot is a RocksDB snapshot plus
 * a copy of the buffer's DIRTY and GONE entries at that moment, sorted by
 * encoded key (the overlay), and sl_ksnap_each merges the two over the key
 * group's range -- an overlay entry replaces (DIRTY) or hides (GONE)
 * RocksDB's entry of the same key. So a checkpoint costs one copy of what
 * changed since the last flush, not a batch of RocksDB writes plus, on the
 * next records, a RocksDB read of every live accumulator; at a 1 s
 * checkpoint interval that was most of the RocksDB work of a steady
 * stream. The buffered entries stay DIRTY (RocksDB still lacks them) and
 * are written when the buffer fills. Snapshots read from any thread. The
 * database handle is reference counted, so a snapshot that outlives
 * sl_kstate_close still reads correctly; the database closes and its
 * directory goes when the last of them is released.
 *
 * The memory budget. sl_rocksdb_memory_configure gives the process (a
 * TaskManager) one budget for all its RocksDB instances, Flink's managed
 * memory: one LRU block cache of (1 - write-buffer ratio) of it, shared by
 * every instance opened afterwards, with index and filter blocks charged to
 * it, and the ratio's share for memtables. RocksDB 7.8's C API has no
 * write-buffer manager, so the memtable share is enforced here instead:
 * each live instance gets write_buffer_size = share / (RDB_MEMTABLES * live
 * instances), set at open and reset on every live instance (SetOptions)
 * whenever one opens or closes, so the memtables of all instances together
 * stay within the share (down to a floor of RDB_MIN_WRITE_BUFFER per
 * memtable, which a warning names when reached). The live instances are a
 * list under mem.mu; nothing on the data path takes it.
 *
 * RocksDB reports errors through `char **errptr`; rdb_err translates that,
 * once, into the caller's err buffer.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "state_int.h"

/* The database, shared by the state and its live snapshots. */
typedef struct rdb_db {
    _Atomic int refs;
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *topts;
    char *dir;
    char instance[17];             /* 16 random hex: names this instance's files in shared/ */
    rocksdb_cache_t *cache;        /* the shared block cache, or NULL (not owned) */
    struct rdb_db *next, *prev;    /* in mem.live while open under a budget */
} rdb_db;

/* ---- the process's memory budget ----------------------------------------- */

#define RDB_MEMTABLES 2                   /* max_write_buffer_number */
#define RDB_MIN_WRITE_BUFFER (256u << 10) /* floor of one memtable */

static struct {
    pthread_mutex_t mu;
    rocksdb_cache_t *cache;  /* NULL: no budget, each instance has RocksDB's defaults */
    uint64_t budget;
    uint64_t wb_total;       /* bytes for all memtables together */
    rdb_db *live;
    int nlive;
    int nopen;               /* instances open, budget or not */
} mem = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t wb_per_instance(int n)
{
    uint64_t b = mem.wb_total / RDB_MEMTABLES / (uint64_t)(n > 0 ? n : 1);
    return b < RDB_MIN_WRITE_BUFFER ? RDB_MIN_WRITE_BUFFER : b;
}

/* Give every live instance its share of the memtable budget. mem.mu held. */
static void wb_rebalance(void)
{
    char v[32];
    snprintf(v, sizeof v, "%" PRIu64, wb_per_instance(mem.nlive));
    const char *keys[] = {"write_buffer_size"}, *vals[] = {v};
    for (rdb_db *d = mem.live; d; d = d->next) {
        char *e = NULL;
        rocksdb_set_options(d->db, 1, keys, vals, &e);
        if (e) {
            sl_warn("rocksdb", "state in '%s': cannot set write_buffer_size to %s: %s", d->dir, v, e);
            rocksdb_free(e);
        }
    }
}

int sl_rocksdb_memory_configure(uint64_t budget, double write_buffer_ratio, char *err, size_t errlen)
{
    if (!(write_buffer_ratio >= 0 && write_buffer_ratio <= 1))
        return sl_seterr(err, errlen, "rocksdb memory: write-buffer ratio %g is not within [0, 1]",
                         write_buffer_ratio);
    pthread_mutex_lock(&mem.mu);
    int rc = SL_OK;
    if (mem.nopen) {
        rc = sl_seterr(err, errlen, "rocksdb memory: the budget cannot change while %d RocksDB "
                       "state%s open", mem.nopen, mem.nopen == 1 ? " is" : "s are");
    } else {
        if (mem.cache) rocksdb_cache_destroy(mem.cache);
        mem.cache = NULL;
        mem.budget = budget;
        mem.wb_total = (uint64_t)((double)budget * write_buffer_ratio);
        if (budget) mem.cache = rocksdb_cache_create_lru((size_t)(budget - mem.wb_total));
    }
    pthread_mutex_unlock(&mem.mu);
    return rc;
}

void sl_rocksdb_memory_stats(sl_rocksdb_memory *out)
{
    pthread_mutex_lock(&mem.mu);
    memset(out, 0, sizeof *out);
    out->budget = mem.budget;
    if (mem.cache) {
        out->cache_capacity = mem.budget - mem.wb_total;
        out->cache_usage = rocksdb_cache_get_usage(mem.cache);
        out->write_buffer_total = mem.wb_total;
        out->write_buffer_per_instance = wb_per_instance(mem.nlive);
    }
    out->instances = mem.nopen;
    pthread_mutex_unlock(&mem.mu);
}

typedef struct rdb_state {
    sl_kstate base;
    rdb_db *d;
    rocksdb_writeoptions_t *wo;    /* WAL disabled */
    rocksdb_readoptions_t *ro;     /* gets */
    rocksdb_readoptions_t *ro_scan; /* scan_key's iterator */
    rocksdb_iterator_t *it;        /* scan_key's iterator over RocksDB as it is since the
                                      last write to it (NULL: make one at the next scan) */
    uint8_t scanned[256];          /* per state id: scanned once, its entries chained */
    uint32_t *pheads;              /* per hash of kg|sid|klen|key: the first buffered
                                      entry of a scanned state with that prefix (arena
                                      unit + 1; 0 = none), chained by rb_ent.pnext */
    struct rb_ent **scanv;         /* scan_key: the buffer's entries of the key, sorted */
    size_t scancap;
    uint8_t *val;                  /* the last value read, handed out borrowed */
    size_t val_cap;
    uint8_t *tmp;                  /* a put's value copied out of the state's own memory */
    size_t tmp_cap;
    /* the write buffer */
    uint8_t *arena;                /* entries, each rb_ent + key + value, 8-aligned */
    size_t arena_used;
    uint32_t *slots;               /* index: RB_TAG(hash) | (arena offset / 8 + 1);
                                      0 = empty (the tag spares a probe the cache miss
                                      of reading a wrong entry; 256 KiB stay in cache) */
    uint32_t nent;                 /* entries indexed */
    uint32_t ndirty;               /* entries DIRTY or GONE */
    uint32_t last_off;             /* arena offset + 1 of the entry the last call found
                                      or made (0 = none): a record's put after its get
                                      neither hashes nor probes again */
    uint32_t last_slot;            /* its index slot */
} rdb_state;

enum { RB_CLEAN = 0, RB_ABSENT, RB_DIRTY, RB_GONE, RB_OBSOLETE };
#define RB_ARENA (4u << 20)        /* bytes of buffered entries */
#define RB_SLOTS (1u << 16)        /* index slots (power of two) */
#define RB_MAX_ENTRIES (RB_SLOTS / 2)
#define RB_PHEADS (1u << 14)       /* prefix chain heads (power of two) */

typedef struct rb_ent {
    uint64_t hash;
    uint32_t klen, vlen, vcap;
    uint8_t state;                 /* RB_* */
    uint8_t indb;                  /* RocksDB may hold a value for the key */
    uint8_t pad[2];
    uint32_t pnext;                /* next entry of the same prefix chain (a scanned
                                      state's), arena unit + 1; 0 = end */
    uint32_t pad2;
} rb_ent;                          /* then the key (padded to 8), then vcap value bytes */

#define RB_ALIGN(n) (((n) + 7u) & ~(size_t)7u)
/* A slot: the top 12 bits of the hash, then the entry's 8-byte arena unit + 1
 * in 20 bits (RB_ARENA / 8 units fit). */
#define RB_UNIT_BITS 20
#define RB_TAG(h) ((uint32_t)((h) >> 52) << RB_UNIT_BITS)
#define RB_SLOT_OFF(sv) ((size_t)(((sv) & ((1u << RB_UNIT_BITS) - 1)) - 1) * 8)
_Static_assert(RB_ARENA / 8 < (1u << RB_UNIT_BITS), "arena units must fit a slot");

typedef struct rdb_snap {
    sl_ksnap base;
    rdb_db *d;
    const rocksdb_snapshot_t *snap;
    uint8_t *ov;                   /* the overlay: copied rb_ents, key and value each */
    rb_ent **ovx;                  /* them in encoded-key order */
    size_t nov;
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
    if (d->db) {
        pthread_mutex_lock(&mem.mu);
        if (d->cache) {
            if (d->prev) d->prev->next = d->next;
            else mem.live = d->next;
            if (d->next) d->next->prev = d->prev;
            mem.nlive--;
            wb_rebalance();
        }
        mem.nopen--;
        rocksdb_close(d->db);
        pthread_mutex_unlock(&mem.mu);
    }
    rocksdb_options_destroy(d->opts);
    rocksdb_block_based_options_destroy(d->topts);
    if (d->db) (void)rm_tree(d->dir, NULL, 0); /* best effort: nobody to tell */
    free(d->dir);
    free(d);
}

/* ---- the write buffer ------------------------------------------------------- */

static inline uint8_t *rb_key(rb_ent *e) { return (uint8_t *)(e + 1); }
static inline uint8_t *rb_val(rb_ent *e) { return rb_key(e) + RB_ALIGN(e->klen); }
static inline size_t rb_size(size_t klen, size_t vcap)
{
    return sizeof(rb_ent) + RB_ALIGN(klen) + RB_ALIGN(vcap);
}

/* The entry of encoded key k, or NULL; *slot is where it is (or would go). */
static rb_ent *rb_find(rdb_state *st, const uint8_t *k, size_t n, uint64_t h, uint32_t *slot)
{
    uint32_t i = (uint32_t)h & (RB_SLOTS - 1);
    uint32_t tag = RB_TAG(h);
    for (;; i = (i + 1) & (RB_SLOTS - 1)) {
        uint32_t sv = st->slots[i];
        if (!sv) break;
        if ((sv & ~((1u << RB_UNIT_BITS) - 1)) != tag) continue;
        rb_ent *e = (rb_ent *)(st->arena + RB_SLOT_OFF(sv));
        if (e->hash == h && e->klen == n && memcmp(rb_key(e), k, n) == 0) {
            *slot = i;
            return e;
        }
    }
    *slot = i;
    return NULL;
}

/* Length of the kg|sid|klen|key prefix of encoded key k: one key's entries. */
static inline size_t rb_prefix_len(const uint8_t *k)
{
    return SL_KENC_HDR + (size_t)sl_get_be16(k + 3);
}

/* RocksDB is written: the scan iterator (an implicit snapshot) is stale. */
static void it_reset(rdb_state *st)
{
    if (st->it) rocksdb_iter_destroy(st->it);
    st->it = NULL;
}

/* A new entry for k at index slot (from rb_find), or NULL when the buffer
 * has no room for it (flush first). */
static rb_ent *rb_add(rdb_state *st, uint32_t slot, const uint8_t *k, size_t n, uint64_t h,
                      const void *val, size_t vlen, int state, int indb)
{
    size_t need = rb_size(n, vlen);
    if (st->nent >= RB_MAX_ENTRIES || need > RB_ARENA - st->arena_used) return NULL;
    rb_ent *e = (rb_ent *)(st->arena + st->arena_used);
    e->hash = h;
    e->klen = (uint32_t)n;
    e->vlen = (uint32_t)vlen;
    e->vcap = (uint32_t)RB_ALIGN(vlen);
    e->state = (uint8_t)state;
    e->indb = (uint8_t)indb;
    memcpy(rb_key(e), k, n);
    if (vlen) memcpy(rb_val(e), val, vlen);
    e->pnext = 0;
    if (st->scanned[k[2]]) { /* a scanned state's entry: on its key's chain */
        uint32_t *head = &st->pheads[sl_kstate_hash(k, rb_prefix_len(k)) & (RB_PHEADS - 1)];
        e->pnext = *head;
        *head = (uint32_t)(st->arena_used / 8 + 1);
    }
    if (!st->slots[slot]) st->nent++;
    st->slots[slot] = RB_TAG(h) | (uint32_t)(st->arena_used / 8 + 1);
    st->arena_used += need;
    if (state == RB_DIRTY || state == RB_GONE) st->ndirty++;
    st->last_off = (uint32_t)((uint8_t *)e - st->arena) + 1;
    st->last_slot = slot;
    return e;
}

/* Write every DIRTY and GONE entry in one batch, then empty the buffer. */
static int rb_flush(rdb_state *st, char *err, size_t errlen)
{
    int rc = SL_OK;
    if (st->ndirty) {
        rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
        for (size_t off = 0; off < st->arena_used;) {
            rb_ent *e = (rb_ent *)(st->arena + off);
            if (e->state == RB_DIRTY)
                rocksdb_writebatch_put(wb, (const char *)rb_key(e), e->klen,
                                       e->vlen ? (const char *)rb_val(e) : "", e->vlen);
            else if (e->state == RB_GONE)
                rocksdb_writebatch_delete(wb, (const char *)rb_key(e), e->klen);
            off += rb_size(e->klen, e->vcap);
        }
        char *e = NULL;
        it_reset(st);
        rocksdb_write(st->d->db, st->wo, wb, &e);
        rocksdb_writebatch_destroy(wb);
        if (e) rc = rdb_err(e, "write", st->d->dir, err, errlen);
    }
    /* on a failed write too: what RocksDB holds is unknown now, start over */
    memset(st->slots, 0, RB_SLOTS * sizeof *st->slots);
    memset(st->pheads, 0, RB_PHEADS * sizeof *st->pheads);
    st->arena_used = 0;
    st->nent = 0;
    st->ndirty = 0;
    st->last_off = 0;
    return rc;
}

/* Read k from RocksDB: SL_OK with the value in st->val, SL_DONE if absent. */
static int rdb_read(rdb_state *st, const uint8_t *k, size_t n, size_t *vlen, char *err, size_t errlen)
{
    char *e = NULL;
    rocksdb_pinnableslice_t *ps = rocksdb_get_pinned(st->d->db, st->ro, (const char *)k, n, &e);
    if (e) return rdb_err(e, "get", st->d->dir, err, errlen);
    if (!ps) return SL_DONE;
    const char *v = rocksdb_pinnableslice_value(ps, vlen);
    reserve(&st->val, &st->val_cap, *vlen + 1);
    if (*vlen) memcpy(st->val, v, *vlen);
    rocksdb_pinnableslice_destroy(ps);
    return SL_OK;
}

/* The entry of k in the buffer, reading RocksDB into it on a miss (and
 * flushing to make room); NULL with err on a RocksDB error, or with *big
 * set when the entry cannot fit in the buffer at all (then st->val and
 * *found / *vlen describe it). */
static rb_ent *rb_load(rdb_state *st, const uint8_t *k, size_t n, uint64_t *hp, uint32_t *slot,
                       int *big, int *found, size_t *vlen, char *err, size_t errlen)
{
    *big = 0;
    if (st->last_off) {
        rb_ent *l = (rb_ent *)(st->arena + st->last_off - 1);
        if (l->state != RB_OBSOLETE && l->klen == n && memcmp(rb_key(l), k, n) == 0) {
            *hp = l->hash;
            *slot = st->last_slot;
            return l;
        }
    }
    uint64_t h = *hp = sl_kstate_hash(k, n);
    rb_ent *e = rb_find(st, k, n, h, slot);
    if (e) {
        st->last_off = (uint32_t)((uint8_t *)e - st->arena) + 1;
        st->last_slot = *slot;
        return e;
    }
    int rc = rdb_read(st, k, n, vlen, err, errlen);
    if (rc == SL_ERR) return NULL;
    *found = rc == SL_OK;
    if (!*found) *vlen = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        e = rb_add(st, *slot, k, n, h, st->val, *vlen, *found ? RB_CLEAN : RB_ABSENT, *found);
        if (e) return e;
        if (attempt || rb_flush(st, err, errlen) != SL_OK) break;
        rb_find(st, k, n, h, slot);
    }
    if (rb_size(n, *vlen) > RB_ARENA) *big = 1;
    return NULL;
}

/* ---- operations --------------------------------------------------------- */

static int rdb_get(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void **val,
                   size_t *vlen, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    uint64_t h;
    uint32_t slot;
    int big, found;
    size_t n = 0;
    rb_ent *e = rb_load(st, k, klen, &h, &slot, &big, &found, &n, err, errlen);
    if (!e) {
        if (!big) return SL_ERR;
        if (!found) return SL_DONE; /* not reached: absent entries are small */
        *val = st->val;             /* too large to buffer: handed out from st->val */
        *vlen = n;
        return SL_OK;
    }
    if (e->state == RB_ABSENT || e->state == RB_GONE) return SL_DONE;
    *val = rb_val(e);
    *vlen = e->vlen;
    return SL_OK;
}

/* A write of an entry too large for the buffer goes straight to RocksDB. */
static int rdb_put_direct(rdb_state *st, const uint8_t *k, size_t klen, const void *val,
                          size_t vlen, char *err, size_t errlen)
{
    if (rb_flush(st, err, errlen) != SL_OK) return SL_ERR;
    size_t old = 0;
    int rc = rdb_read(st, k, klen, &old, err, errlen);
    if (rc == SL_ERR) return rc;
    char *e = NULL;
    it_reset(st);
    rocksdb_put(st->d->db, st->wo, (const char *)k, klen, val ? (const char *)val : "", vlen, &e);
    if (e) return rdb_err(e, "put", st->d->dir, err, errlen);
    if (rc == SL_OK) {
        st->base.bytes = st->base.bytes - old + vlen;
    } else {
        st->base.entries++;
        st->base.bytes += klen - SL_KENC_HDR + vlen;
    }
    return SL_OK;
}

static int rdb_put(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void *val,
                   size_t vlen, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    /* a value borrowed from this state (against the contract, but cheap to
     * allow) could move when the buffer makes room: copy it out first */
    const uint8_t *vp = val;
    if (vlen && ((vp >= st->arena && vp < st->arena + RB_ARENA) ||
                 (st->val && vp >= st->val && vp < st->val + st->val_cap))) {
        reserve(&st->tmp, &st->tmp_cap, vlen);
        memmove(st->tmp, val, vlen);
        val = st->tmp;
    }
    if (rb_size(klen, vlen) > RB_ARENA) return rdb_put_direct(st, k, klen, val, vlen, err, errlen);
    uint64_t h;
    uint32_t slot;
    int big, found;
    size_t n = 0;
    rb_ent *e = rb_load(st, k, klen, &h, &slot, &big, &found, &n, err, errlen);
    if (!e) return big ? rdb_put_direct(st, k, klen, val, vlen, err, errlen) : SL_ERR;
    int existed = e->state == RB_CLEAN || e->state == RB_DIRTY;
    if (existed) {
        s->bytes = s->bytes - e->vlen + vlen;
    } else {
        s->entries++;
        s->bytes += klen - SL_KENC_HDR + vlen;
    }
    if (vlen <= e->vcap) { /* in place */
        if (e->state != RB_DIRTY && e->state != RB_GONE) st->ndirty++;
        e->state = RB_DIRTY;
        e->vlen = (uint32_t)vlen;
        if (vlen) memmove(rb_val(e), val, vlen); /* val may be this very value */
        return SL_OK;
    }
    /* grown: a new version of the entry; the old one is skipped by flushes */
    if (e->state == RB_DIRTY || e->state == RB_GONE) st->ndirty--;
    e->state = RB_OBSOLETE;
    rb_ent *ne = rb_add(st, slot, k, klen, h, val, vlen, RB_DIRTY, e->indb);
    if (ne) return SL_OK;
    /* no room: the counters already say the entry is written; write it
     * (after the flush RocksDB may hold the key: indb) */
    if (rb_flush(st, err, errlen) != SL_OK) return SL_ERR;
    rb_find(st, k, klen, h, &slot);
    if (rb_add(st, slot, k, klen, h, val, vlen, RB_DIRTY, 1)) return SL_OK;
    return sl_seterr(err, errlen, "rocksdb state: write buffer cannot hold an entry of %zu bytes",
                     vlen);
}

/* Deleting an absent entry is not an error: SL_OK either way. */
static int rdb_del(sl_kstate *s, int kg, const uint8_t *k, size_t klen, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    uint64_t h;
    uint32_t slot;
    int big, found;
    size_t n = 0;
    rb_ent *e = rb_load(st, k, klen, &h, &slot, &big, &found, &n, err, errlen);
    if (!e) {
        if (!big) return SL_ERR;
        /* a value too large to buffer: delete it in RocksDB directly */
        if (rb_flush(st, err, errlen) != SL_OK) return SL_ERR;
        char *re = NULL;
        it_reset(st);
        rocksdb_delete(st->d->db, st->wo, (const char *)k, klen, &re);
        if (re) return rdb_err(re, "delete", st->d->dir, err, errlen);
        s->entries--;
        s->bytes -= klen - SL_KENC_HDR + n;
        return SL_OK;
    }
    if (e->state == RB_ABSENT || e->state == RB_GONE) return SL_OK;
    s->entries--;
    s->bytes -= klen - SL_KENC_HDR + e->vlen;
    e->vlen = 0;
    if (!e->indb) { /* written and deleted since the last flush: nothing to write */
        if (e->state == RB_DIRTY) st->ndirty--;
        e->state = RB_ABSENT;
        return SL_OK;
    }
    if (e->state == RB_CLEAN) st->ndirty++;
    e->state = RB_GONE;
    return SL_OK;
}

/* RocksDB's bytewise order of two encoded keys. */
static int key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    int c = memcmp(a, b, SL_MIN(an, bn));
    return c ? c : (an > bn) - (an < bn);
}

static int rbent_cmp(const void *pa, const void *pb)
{
    rb_ent *a = *(rb_ent *const *)pa, *b = *(rb_ent *const *)pb;
    return key_cmp(rb_key(a), a->klen, rb_key(b), b->klen);
}

/* One key's entries: RocksDB's (through one iterator kept from one write
 * of RocksDB to the next, so a scan is a seek, not an iterator) merged with
 * the buffer's (found on the key's prefix chain, sorted), the buffer's
 * winning where both hold a key. Nothing is flushed, so a scan costs the
 * key's entries whatever the buffer holds. */
static int rdb_scan(sl_kstate *s, int kg, const uint8_t *prefix, size_t plen, sl_kscan_fn fn,
                    void *ctx, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    int sid = prefix[2];
    if (!st->scanned[sid]) {
        /* its entries buffered so far are on no chain: into RocksDB with them */
        if (st->ndirty && rb_flush(st, err, errlen) != SL_OK) return SL_ERR;
        st->scanned[sid] = 1;
    }
    size_t m = 0;
    for (uint32_t u = st->pheads[sl_kstate_hash(prefix, plen) & (RB_PHEADS - 1)]; u;) {
        rb_ent *e = (rb_ent *)(st->arena + (size_t)(u - 1) * 8);
        u = e->pnext;
        if (e->state == RB_OBSOLETE || e->klen < plen || memcmp(rb_key(e), prefix, plen)) continue;
        if (m == st->scancap) {
            st->scancap = st->scancap ? st->scancap * 2 : 16;
            st->scanv = sl_realloc(st->scanv, st->scancap * sizeof *st->scanv);
        }
        st->scanv[m++] = e;
    }
    if (m > 1) qsort(st->scanv, m, sizeof *st->scanv, rbent_cmp);
    if (!st->it) st->it = rocksdb_create_iterator(st->d->db, st->ro_scan);
    rocksdb_iterator_t *it = st->it;
    rocksdb_iter_seek(it, (const char *)prefix, plen);
    size_t j = 0;
    for (;;) {
        size_t kn = 0, vn = 0;
        const char *key = NULL;
        if (rocksdb_iter_valid(it)) {
            key = rocksdb_iter_key(it, &kn);
            if (kn < plen || memcmp(key, prefix, plen) != 0) key = NULL;
        }
        if (!key && j == m) break;
        int c = !key ? -1 : j == m ? 1 : key_cmp(rb_key(st->scanv[j]), st->scanv[j]->klen,
                                                 (const uint8_t *)key, kn);
        if (c <= 0) { /* the buffer's entry: it is what the key holds */
            rb_ent *e = st->scanv[j++];
            if (c == 0) rocksdb_iter_next(it);
            if (e->state != RB_CLEAN && e->state != RB_DIRTY) continue;
            if (fn(ctx, rb_key(e) + plen, e->klen - plen, rb_val(e), e->vlen)) break;
            continue;
        }
        const char *v = rocksdb_iter_value(it, &vn);
        reserve(&st->val, &st->val_cap, vn + 1);
        if (vn) memcpy(st->val, v, vn);
        if (fn(ctx, key + plen, kn - plen, st->val, vn)) break;
        rocksdb_iter_next(it);
    }
    char *e = NULL;
    rocksdb_iter_get_error(it, &e);
    if (e) {
        it_reset(st);
        return rdb_err(e, "scan", st->d->dir, err, errlen);
    }
    return SL_OK;
}

/* ---- snapshots ---------------------------------------------------------- */

/* The first overlay entry of key group kg or above (the overlay is sorted by
 * encoded key, whose first two bytes are the key group). */
static size_t ov_lower_bound(const rdb_snap *sn, int kg)
{
    size_t lo = 0, hi = sn->nov;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int)sl_get_be16(rb_key(sn->ovx[mid])) < kg) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Hand one entry of key group kg to fn; SL_ERR with a message if the key
 * is not an encoded key of kg. */
static int snap_emit(const rdb_snap *sn, int kg, const uint8_t *key, size_t kn, const void *val,
                     size_t vn, int (*fn)(void *ctx, const sl_kentry *e), void *ctx, char *err,
                     size_t errlen)
{
    sl_kentry ke;
    if (sl_kenc_decode(key, kn, &ke) != SL_OK || ke.kg != kg)
        return sl_seterr(err, errlen,
                         "rocksdb state in '%s': malformed key of %zu bytes in key group %d",
                         sn->d->dir, kn, kg);
    ke.val = val;
    ke.vlen = vn;
    return fn(ctx, &ke);
}

/* RocksDB's entries of kg as of the snapshot merged with the overlay's: an
 * overlay entry wins over RocksDB's of the same key, a GONE one hides it. */
static int rdb_snap_each(sl_ksnap *base, int kg, int (*fn)(void *ctx, const sl_kentry *e),
                         void *ctx, char *err, size_t errlen)
{
    rdb_snap *sn = (rdb_snap *)base;
    size_t oi = ov_lower_bound(sn, kg);
    uint8_t lo[2], hi[2];
    sl_put_be16(lo, (uint16_t)kg);
    sl_put_be16(hi, (uint16_t)(kg + 1));
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    rocksdb_readoptions_set_snapshot(ro, sn->snap);
    rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)hi, 2);
    rocksdb_readoptions_set_fill_cache(ro, 0); /* a bulk read: keep the hot blocks */
    rocksdb_iterator_t *it = rocksdb_create_iterator(sn->d->db, ro);
    int rc = SL_OK;
    rocksdb_iter_seek(it, (const char *)lo, 2);
    for (;;) {
        rb_ent *o = oi < sn->nov && (int)sl_get_be16(rb_key(sn->ovx[oi])) == kg ? sn->ovx[oi] : NULL;
        int valid = rocksdb_iter_valid(it);
        if (rc != SL_OK || (!o && !valid)) break;
        size_t kn = 0, vn = 0;
        const uint8_t *key = valid ? (const uint8_t *)rocksdb_iter_key(it, &kn) : NULL;
        int c = !o ? 1 : !valid ? -1 : sl_kenc_cmp(rb_key(o), o->klen, key, kn);
        if (c <= 0) { /* the overlay's entry, replacing RocksDB's on a tie */
            if (o->state == RB_DIRTY)
                rc = snap_emit(sn, kg, rb_key(o), o->klen, rb_val(o), o->vlen, fn, ctx, err,
                               errlen);
            oi++;
            if (c == 0) rocksdb_iter_next(it);
            continue;
        }
        const void *v = rocksdb_iter_value(it, &vn);
        rc = snap_emit(sn, kg, key, kn, v, vn, fn, ctx, err, errlen);
        rocksdb_iter_next(it);
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
    free(sn->ov);
    free(sn->ovx);
    free(sn);
}

static const sl_ksnap_ops rdb_snap_ops = {
    .each = rdb_snap_each,
    .release = rdb_snap_release,
};

static int ov_cmp(const void *pa, const void *pb)
{
    rb_ent *a = *(rb_ent *const *)pa, *b = *(rb_ent *const *)pb;
    return sl_kenc_cmp(rb_key(a), a->klen, rb_key(b), b->klen);
}

/* Copy the buffer's DIRTY and GONE entries into sn's overlay, sorted. The
 * arena holds at most one live (not OBSOLETE) version of a key, so the
 * overlay's keys are distinct. One allocation per checkpoint, not per
 * record. */
static void ov_build(rdb_snap *sn, const rdb_state *st)
{
    size_t bytes = 0, n = 0;
    for (size_t off = 0; off < st->arena_used;) {
        rb_ent *e = (rb_ent *)(st->arena + off);
        size_t sz = rb_size(e->klen, e->vcap);
        if (e->state == RB_DIRTY || e->state == RB_GONE) {
            bytes += rb_size(e->klen, e->vlen);
            n++;
        }
        off += sz;
    }
    sn->ov = sl_malloc(bytes ? bytes : 1);
    sn->ovx = sl_malloc((n ? n : 1) * sizeof *sn->ovx);
    size_t w = 0;
    for (size_t off = 0; off < st->arena_used;) {
        rb_ent *e = (rb_ent *)(st->arena + off);
        off += rb_size(e->klen, e->vcap);
        if (e->state != RB_DIRTY && e->state != RB_GONE) continue;
        rb_ent *c = (rb_ent *)(sn->ov + w);
        *c = *e;
        c->vcap = (uint32_t)RB_ALIGN(e->vlen);
        memcpy(rb_key(c), rb_key(e), e->klen);
        if (e->vlen) memcpy(rb_val(c), rb_val(e), e->vlen);
        sn->ovx[sn->nov++] = c;
        w += rb_size(c->klen, c->vcap);
    }
    qsort(sn->ovx, sn->nov, sizeof *sn->ovx, ov_cmp);
}

/* A checkpoint barrier: RocksDB's snapshot plus the buffer's changes. */
static sl_ksnap *rdb_snapshot(sl_kstate *s, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    (void)err;
    (void)errlen;
    rdb_snap *sn = sl_calloc(1, sizeof *sn);
    sn->base.ops = &rdb_snap_ops;
    sn->d = st->d;
    atomic_fetch_add_explicit(&st->d->refs, 1, memory_order_relaxed);
    sn->snap = rocksdb_create_snapshot(st->d->db);
    if (st->ndirty) ov_build(sn, st);
    return &sn->base;
}

/* ---- open and close ----------------------------------------------------- */

static void rdb_close(sl_kstate *s)
{
    rdb_state *st = (rdb_state *)s;
    rocksdb_writeoptions_destroy(st->wo);
    rocksdb_readoptions_destroy(st->ro);
    it_reset(st);
    rocksdb_readoptions_destroy(st->ro_scan);
    free(st->scanv);
    free(st->pheads);
    free(st->val);
    free(st->arena);
    free(st->slots);
    free(st->tmp);
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
    sl_random_hex(d->instance, 16);
    d->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(d->opts, 1);
    rocksdb_options_set_info_log_level(d->opts, 2 /* WARN */);
    rocksdb_options_set_keep_log_file_num(d->opts, 1);
    rocksdb_options_increase_parallelism(d->opts, 2);
    /* a bloom filter keeps the existence read of a blind put of a new entry cheap */
    d->topts = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_filter_policy(d->topts, rocksdb_filterpolicy_create_bloom(10));

    /* under the budget: the shared cache, and this instance's memtable share
     * (the lock is held across the open so the share counts it) */
    pthread_mutex_lock(&mem.mu);
    if (mem.cache) {
        d->cache = mem.cache;
        rocksdb_block_based_options_set_block_cache(d->topts, mem.cache);
        rocksdb_block_based_options_set_cache_index_and_filter_blocks(d->topts, 1);
        rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(d->topts, 1);
        rocksdb_options_set_max_write_buffer_number(d->opts, RDB_MEMTABLES);
        rocksdb_options_set_write_buffer_size(d->opts, (size_t)wb_per_instance(mem.nlive + 1));
    }
    rocksdb_options_set_block_based_table_factory(d->opts, d->topts);

    char *e = NULL;
    d->db = rocksdb_open(d->opts, dir, &e);
    if (e || !d->db) {
        pthread_mutex_unlock(&mem.mu);
        rdb_err(e, "open", dir, err, errlen);
        if (d->db) rocksdb_close(d->db);
        d->db = NULL;
        db_unref(d);
        (void)rm_tree(dir, NULL, 0);
        return NULL;
    }
    mem.nopen++;
    if (d->cache) {
        d->next = mem.live;
        if (mem.live) mem.live->prev = d;
        mem.live = d;
        mem.nlive++;
        if (wb_per_instance(mem.nlive) == RDB_MIN_WRITE_BUFFER &&
            (uint64_t)mem.nlive * RDB_MEMTABLES * RDB_MIN_WRITE_BUFFER > mem.wb_total)
            sl_warn("rocksdb", "%d RocksDB states share a write-buffer budget of %" PRIu64
                    " bytes: each gets the floor of %u bytes per memtable, %" PRIu64
                    " bytes together (raise taskmanager.memory.managed.size)",
                    mem.nlive, mem.wb_total, RDB_MIN_WRITE_BUFFER,
                    (uint64_t)mem.nlive * RDB_MEMTABLES * RDB_MIN_WRITE_BUFFER);
        wb_rebalance();
    }
    pthread_mutex_unlock(&mem.mu);

    rdb_state *st = sl_calloc(1, sizeof *st);
    st->base.ops = &rdb_ops;
    st->d = d;
    st->wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(st->wo, 1);
    st->ro = rocksdb_readoptions_create();
    st->ro_scan = rocksdb_readoptions_create();
    st->arena = sl_malloc(RB_ARENA);
    st->slots = sl_calloc(RB_SLOTS, sizeof *st->slots);
    st->pheads = sl_calloc(RB_PHEADS, sizeof *st->pheads);
    return &st->base;
}

const void *sl_kstate_rocksdb_cache(const sl_kstate *s)
{
    if (!s || sl_kstate_kind(s) != SL_BACKEND_ROCKSDB) return NULL;
    return ((const rdb_state *)s)->d->cache;
}

int sl_rm_tree(const char *dir, char *err, size_t errlen) { return rm_tree(dir, err, errlen); }

/* ---- incremental checkpoints ---------------------------------------------- */

const char *sl_kstate_rocksdb_instance(const sl_kstate *s)
{
    return ((const rdb_state *)s)->d->instance;
}

int sl_kstate_rocksdb_checkpoint(sl_kstate *s, const char *dir, char *err, size_t errlen)
{
    rdb_state *st = (rdb_state *)s;
    /* a checkpoint barrier: everything written so far goes into RocksDB */
    if (st->ndirty && rb_flush(st, err, errlen) != SL_OK) return SL_ERR;
    if (rm_tree(dir, err, errlen) != SL_OK) return SL_ERR;
    char *e = NULL;
    rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(st->d->db, &e);
    if (e) return rdb_err(e, "checkpoint", st->d->dir, err, errlen);
    /* 0: flush the memtables first, so the checkpoint is SST files only */
    rocksdb_checkpoint_create(cp, dir, 0, &e);
    rocksdb_checkpoint_object_destroy(cp);
    if (e) {
        (void)rm_tree(dir, NULL, 0);
        return rdb_err(e, "checkpoint", st->d->dir, err, errlen);
    }
    return SL_OK;
}

int sl_rocksdb_read_checkpoint(const char *dir, int kg_lo, int kg_hi,
                               int (*fn)(void *ctx, const sl_kentry *e), void *ctx, char *err,
                               size_t errlen)
{
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_options_set_info_log_level(o, 2 /* WARN */);
    char *e = NULL;
    rocksdb_t *db = rocksdb_open_for_read_only(o, dir, 0, &e);
    rocksdb_options_destroy(o);
    if (e || !db) return rdb_err(e, "opening the restored checkpoint", dir, err, errlen);
    uint8_t lo[2], hi[2];
    sl_put_be16(lo, (uint16_t)kg_lo);
    sl_put_be16(hi, (uint16_t)(kg_hi + 1));
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)hi, 2);
    rocksdb_readoptions_set_fill_cache(ro, 0);
    rocksdb_iterator_t *it = rocksdb_create_iterator(db, ro);
    int rc = SL_OK;
    for (rocksdb_iter_seek(it, (const char *)lo, 2); rc == SL_OK && rocksdb_iter_valid(it);
         rocksdb_iter_next(it)) {
        size_t kn = 0, vn = 0;
        const uint8_t *key = (const uint8_t *)rocksdb_iter_key(it, &kn);
        sl_kentry ke;
        if (sl_kenc_decode(key, kn, &ke) != SL_OK || ke.kg < kg_lo || ke.kg > kg_hi) {
            rc = sl_seterr(err, errlen, "restored rocksdb checkpoint in '%s': malformed key of %zu "
                           "bytes", dir, kn);
            break;
        }
        ke.val = rocksdb_iter_value(it, &vn);
        ke.vlen = vn;
        if (fn(ctx, &ke)) rc = SL_ERR;
    }
    rocksdb_iter_get_error(it, &e);
    rocksdb_iter_destroy(it);
    rocksdb_readoptions_destroy(ro);
    rocksdb_close(db);
    if (e) return rdb_err(e, "reading the restored checkpoint", dir, err, errlen);
    return rc;
}
