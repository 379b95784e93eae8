/*
 * state_int.h -- what state.c shares with its two backends, and nothing
 * else includes: the common part of an sl_kstate, the backend operation
 * tables, and the encoded-key helpers.
 *
 * Encoded key (the RocksDB key, and the order snapshots iterate in):
 *
 *     kg (u16 big endian) | sid (u8) | klen (u16 big endian) | key | ns
 *
 * The key length is explicit so that one key's entries form one contiguous
 * range (the prefix through the key) whatever the namespaces look like.
 * Within one key group the hashmap hashes and compares the bytes from sid
 * on; it orders entries exactly as RocksDB's bytewise comparator does
 * (memcmp over the common length, then shorter first), which is what makes
 * snapshots of the two backends identical.
 *
 * state.c keeps the current key already encoded in `enc` (kg|sid|klen|key),
 * so a get/put only patches the sid byte and appends the namespace.
 */
#ifndef SL_STATE_INT_H
#define SL_STATE_INT_H

#include <string.h>

#include "bytes.h"
#include "state.h"
#include "sl_limits.h"

#define SL_KENC_HDR 5                  /* kg(2) + sid(1) + klen(2) */
#define SL_KSTATE_MAX_STATES 255       /* ids 0..254 */
#define SL_KSTATE_MAX_KEY SL_MAX_KEY_BYTES /* klen is a u16 */
#define SL_KSTATE_MAX_NS (1u << 24)    /* namespaces are window ids and the like */
#define SL_KSTATE_MAX_VAL (1u << 30)   /* one value; the hashmap stores u32 lengths */

typedef int (*sl_kscan_fn)(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen);

/* One backend. `k`/`klen` is always a whole encoded key (kg included);
 * `kg` is its key group, already checked to be owned. */
typedef struct sl_kstate_ops {
    int (*get)(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void **val,
               size_t *vlen, char *err, size_t errlen);
    int (*put)(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void *val, size_t vlen,
               char *err, size_t errlen);
    int (*del)(sl_kstate *s, int kg, const uint8_t *k, size_t klen, char *err, size_t errlen);
    /* every entry whose encoded key starts with prefix (kg|sid|klen|key),
     * in namespace order; SL_OK also when fn stopped the walk */
    int (*scan)(sl_kstate *s, int kg, const uint8_t *prefix, size_t plen, sl_kscan_fn fn,
                void *ctx, char *err, size_t errlen);
    sl_ksnap *(*snapshot)(sl_kstate *s, char *err, size_t errlen);
    void (*close)(sl_kstate *s); /* frees the backend, base included */
} sl_kstate_ops;

/* Common head of every backend's state; backends embed it first. */
struct sl_kstate {
    const sl_kstate_ops *ops;
    sl_backend_kind kind;
    int max_parallelism;
    int kg_first, kg_last;      /* owned key groups, inclusive */
    int nstates;                /* registered names */
    char *names[SL_KSTATE_MAX_STATES];
    uint8_t *enc;               /* current key encoded, then the call's namespace */
    size_t enc_cap;
    size_t enc_plen;            /* SL_KENC_HDR + key length */
    int kg;                     /* current key's group */
    int key_state;              /* KEY_* in state.c: whether get/put may run */
    size_t bad_klen;            /* for the message when the key was too long */
    uint8_t *rbuf;              /* restore's own encoding buffer */
    size_t rbuf_cap;
    uint64_t entries;           /* maintained by the backend */
    uint64_t bytes;             /* key + namespace + value bytes */
    uint8_t ttl_layout[SL_KSTATE_MAX_STATES]; /* SL_KTTL_* per state: expired entries are
                                                 left out of snapshots */
    int64_t (*ttl_clock)(void); /* the clock their expiry is read against */
    uint8_t restored[SL_KSTATE_MAX_STATES]; /* 1: sl_kstate_restore put an entry of it */
};

/* The common head of a snapshot. */
typedef struct sl_ksnap_ops {
    int (*each)(sl_ksnap *snap, int kg, int (*fn)(void *ctx, const sl_kentry *e), void *ctx,
                char *err, size_t errlen);
    void (*release)(sl_ksnap *snap);
} sl_ksnap_ops;

struct sl_ksnap {
    const sl_ksnap_ops *ops;
    int kg_first, kg_last;
    uint8_t ttl_layout[SL_KSTATE_MAX_STATES]; /* the state's, when the snapshot was taken */
    int ttl_any;                /* some state has a layout: entries are filtered */
    int64_t ttl_now;            /* the TTL clock when the snapshot was taken */
};

/* Backend constructors: the base fields are filled in by state.c after the
 * backend returns its zeroed struct. */
sl_kstate *sl_kstate_hashmap_open(int kg_first, int kg_last, char *err, size_t errlen);
sl_kstate *sl_kstate_rocksdb_open(const char *dir, char *err, size_t errlen);
void sl_kstate_base_free(sl_kstate *s); /* the base's own buffers, not s */

/* Split an encoded key into e's sid/kg/key/ns (pointing into k). SL_ERR if
 * the bytes cannot be an encoded key. */
int sl_kenc_decode(const uint8_t *k, size_t klen, sl_kentry *e);

/* Bytewise order: memcmp over the common length, then shorter first. */
static inline int sl_kenc_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return (alen > blen) - (alen < blen);
}

/* A fast 64-bit hash of a short byte string (the hashmap's table hash). */
uint64_t sl_kstate_hash(const void *data, size_t len);

#endif
