/*
 * state.h -- keyed state: one interface, two backends.
 *
 * A keyed operator subtask owns one sl_kstate. It holds every named state
 * of that operator (up to 255 per operator) for the key groups the subtask
 * owns, [kg_first, kg_last]. An entry is addressed by (state id, key group,
 * key bytes, namespace bytes) -- the namespace is e.g. the window a value
 * belongs to -- and holds opaque value bytes.
 *
 * Backends (state.backend.type):
 *   hashmap  in memory: an open-addressing hash table per key group, so a
 *            key group can be snapshotted or handed over as a unit;
 *   rocksdb  one RocksDB instance per operator subtask in `dir`; the
 *            RocksDB key is kg (2 bytes big endian) | state id (1 byte) |
 *            u16 key length | key | namespace, so a key group is one
 *            contiguous key range.
 * Both iterate a key group's entries in a deterministic order (by the
 * encoded key), which keeps snapshots canonical.
 *
 * Threads: an sl_kstate is used by its task thread only, except that a
 * snapshot (sl_kstate_snapshot) produces an immutable view that another
 * thread may write out (see sl_kstate_snap_*).
 *
 * Memory: values returned by get are borrowed until the next call on the
 * same sl_kstate. put copies. No allocation per get; a put allocates only
 * when an entry is new or grows.
 */
#ifndef SL_STATE_H
#define SL_STATE_H

#include "sl.h"

typedef enum { SL_BACKEND_HASHMAP = 0, SL_BACKEND_ROCKSDB = 1 } sl_backend_kind;

typedef struct sl_kstate sl_kstate;

/* Open a backend for key groups [kg_first, kg_last] of max_parallelism.
 * `dir` is the RocksDB directory (created; emptied first) and is ignored by
 * hashmap. NULL with err on failure. */
sl_kstate *sl_kstate_open(sl_backend_kind kind, const char *dir, int max_parallelism, int kg_first,
                          int kg_last, char *err, size_t errlen);
void sl_kstate_close(sl_kstate *s); /* frees; RocksDB files are removed */
sl_backend_kind sl_kstate_kind(const sl_kstate *s);

/* Named states of this operator: the same name always gets the same id
 * (ids are assigned in registration order, so an operator that registers in
 * a fixed order gets stable ids across restarts). -1 if more than 255. */
int sl_kstate_register(sl_kstate *s, const char *name);

/* The key of the record being processed: set once per record (or timer)
 * before get/put/del. `key` is the serialized key (sl_row_key_encode);
 * kg its key group (must be within the owned range). The bytes are copied. */
void sl_kstate_set_key(sl_kstate *s, const void *key, size_t len, int kg);

/* SL_OK with *val and *vlen borrowed until the next call, SL_DONE if absent,
 * SL_ERR on a backend error (message in err). */
int sl_kstate_get(sl_kstate *s, int sid, const void *ns, size_t nslen, const void **val,
                  size_t *vlen, char *err, size_t errlen);
int sl_kstate_put(sl_kstate *s, int sid, const void *ns, size_t nslen, const void *val,
                  size_t vlen, char *err, size_t errlen);
int sl_kstate_del(sl_kstate *s, int sid, const void *ns, size_t nslen, char *err, size_t errlen);

/* Visit every entry of state `sid` under the current key, any namespace
 * (e.g. all windows of a key). The callback may not modify the state;
 * return non-zero from it to stop. */
int sl_kstate_scan_key(sl_kstate *s, int sid,
                       int (*fn)(void *ctx, const void *ns, size_t nslen, const void *val,
                                 size_t vlen),
                       void *ctx, char *err, size_t errlen);

/* Number of entries, and bytes of keys + values, across all states. */
uint64_t sl_kstate_entries(const sl_kstate *s);
uint64_t sl_kstate_bytes(const sl_kstate *s);

/* State `sid` holds values with a time-to-live (core/vstate.h's
 * encoding): layout SL_KTTL_VALUE (an i64 expiry first: value and map
 * entries) or SL_KTTL_LIST ([u32 len][i64 expiry][bytes] elements); 0 turns
 * it off. Snapshots taken afterwards leave out every entry that has expired
 * by `clock` at that moment (a list when all its elements have): Flink's
 * cleanupFullSnapshot. */
enum { SL_KTTL_NONE = 0, SL_KTTL_VALUE = 1, SL_KTTL_LIST = 2 };
void sl_kstate_set_ttl(sl_kstate *s, int sid, int layout, int64_t (*clock)(void));

/* ---- snapshots and restore -------------------------------------------- */

/* A raw entry, as snapshots carry it: state id, key group, key, namespace. */
typedef struct sl_kentry {
    int sid;
    int kg;
    const void *key;
    size_t klen;
    const void *ns;
    size_t nslen;
    const void *val;
    size_t vlen;
} sl_kentry;

/* A consistent, immutable view of the whole state at one moment, cheap to
 * take on the task thread (hashmap: copy-on-write of the tables; rocksdb: a
 * RocksDB snapshot), and readable from another thread while the task goes
 * on changing the live state. */
typedef struct sl_ksnap sl_ksnap;

sl_ksnap *sl_kstate_snapshot(sl_kstate *s, char *err, size_t errlen);
/* Visit the view's entries of key group kg, in encoded-key order. Any thread. */
int sl_ksnap_each(sl_ksnap *snap, int kg, int (*fn)(void *ctx, const sl_kentry *e), void *ctx,
                  char *err, size_t errlen);
void sl_ksnap_release(sl_ksnap *snap); /* any thread */

/* Restore: insert a raw entry (from a snapshot file). Its key group must be
 * in the owned range, else SL_ERR. */
int sl_kstate_restore(sl_kstate *s, const sl_kentry *e, char *err, size_t errlen);
/* 1 when sl_kstate_restore has put any entry of state `sid` (an operator
 * can tell whether a restored state holds a layout it no longer writes). */
int sl_kstate_restored(const sl_kstate *s, int sid);

/* ---- the RocksDB memory budget ----------------------------------------- */

/* One budget for every RocksDB state of the process (a TaskManager's managed
 * memory): states opened afterwards share one LRU block cache of
 * (1 - write_buffer_ratio) * budget bytes, index and filter blocks included,
 * and their memtables share write_buffer_ratio * budget bytes. budget 0:
 * none, each instance has RocksDB's own defaults (as without a call).
 * Refused (SL_ERR) while any RocksDB state is open. */
int sl_rocksdb_memory_configure(uint64_t budget, double write_buffer_ratio, char *err,
                                size_t errlen);

typedef struct sl_rocksdb_memory {
    uint64_t budget;                    /* 0 = none configured */
    uint64_t cache_capacity;            /* the shared block cache */
    uint64_t cache_usage;               /* what it holds now */
    uint64_t write_buffer_total;        /* the memtable share */
    uint64_t write_buffer_per_instance; /* write_buffer_size of each live instance */
    int instances;                      /* RocksDB states open */
} sl_rocksdb_memory;

void sl_rocksdb_memory_stats(sl_rocksdb_memory *out);

/* The block cache a RocksDB state uses when it shares the budget's (an
 * identity, for tests and diagnostics); NULL otherwise. */
const void *sl_kstate_rocksdb_cache(const sl_kstate *s);

/* ---- incremental checkpoints (rocksdb only) ----------------------------- */

/* rm -r of a directory (a missing one is fine; refuses a non-directory). */
int sl_rm_tree(const char *dir, char *err, size_t errlen);

/* 16 hex digits, random per instance: prefixes its SST files' names in a
 * checkpoint's shared directory (RocksDB's file numbers restart with every
 * instance; an SST file of one instance never changes). */
const char *sl_kstate_rocksdb_instance(const sl_kstate *s);
/* A RocksDB checkpoint of the state as of now into `dir` (created; must not
 * exist or is emptied): the write buffer and memtables are flushed, SST
 * files hard-linked. The task thread, at a barrier. */
int sl_kstate_rocksdb_checkpoint(sl_kstate *s, const char *dir, char *err, size_t errlen);
/* Open a RocksDB checkpoint directory read-only and visit its entries of key
 * groups [kg_lo, kg_hi] in encoded-key order; fn returning non-zero stops
 * it with SL_ERR (fn's own message). */
int sl_rocksdb_read_checkpoint(const char *dir, int kg_lo, int kg_hi,
                               int (*fn)(void *ctx, const sl_kentry *e), void *ctx, char *err,
                               size_t errlen);

#endif
