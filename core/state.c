/*
 * state.c -- keyed state: the part both backends share.
 *
 * sl_kstate_open checks the key-group range and hands off to a backend
 * (state_hashmap.c, state_rocksdb.c) through an operation table
 * (state_int.h). Everything a backend would otherwise repeat lives here:
 * state-name registration, validation of ids, keys and lengths, and the
 * encoded key (kg | sid | klen | key | ns, see state_int.h).
 *
 * The current key is encoded once, at sl_kstate_set_key, into a buffer the
 * state owns; each get/put/del then writes the state id byte and appends
 * the namespace, so the per-call cost is one short memcpy and no
 * allocation (the buffer only grows when a longer key or namespace than any
 * before arrives).
 *
 * set_key cannot fail (it returns void), so a key that is too long or whose
 * key group is not owned is remembered and reported as SL_ERR, with the
 * reason, by the next get/put/del/scan.
 *
 * Callback conventions: sl_kstate_scan_key returns SL_OK when the callback
 * stopped the walk (stopping is not a failure); sl_ksnap_each returns the
 * callback's non-zero value when it stopped the walk, so a snapshot writer
 * can return SL_ERR from its callback and see it come back.
 */
#include <stdlib.h>
#include <string.h>

#include "state_int.h"

enum {
    KEY_NONE = 0, /* no set_key yet */
    KEY_OK,
    KEY_TOO_LONG, /* longer than a u16 can say */
    KEY_BAD_KG    /* key group outside [kg_first, kg_last] */
};

#define SL_KSTATE_MAX_PARALLELISM 32768 /* key groups fit the u16 in the encoded key */

/* ---- hashing and encoding ----------------------------------------------- */

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t mix_word(uint64_t h, uint64_t w)
{
    h ^= w * 0x87c37b91114253d5ull;
    return rotl64(h, 29) * 0x4cf5ad432745937full + 0x52dce729u;
}

/* Eight bytes at a time in host order (the hash never leaves the process);
 * the last 1-8 bytes are read as one word that may overlap the previous
 * one (or, for strings under 8 bytes, as two overlapping halves), so the
 * tail costs no loop; a final avalanche makes the low bits the hash table
 * indexes with depend on every input bit. */
uint64_t sl_kstate_hash(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)len * 0xff51afd7ed558ccdull);
    if (len >= 8) {
        size_t n = len;
        while (n > 8) {
            h = mix_word(h, sl_load_u64(p));
            p += 8;
            n -= 8;
        }
        h = mix_word(h, sl_load_u64((const uint8_t *)data + len - 8));
    } else if (len >= 4) {
        h = mix_word(h, sl_load_u32(p) | (uint64_t)sl_load_u32(p + len - 4) << 32);
    } else if (len > 0) {
        h = mix_word(h, (uint64_t)p[0] | (uint64_t)p[len / 2] << 8 | (uint64_t)p[len - 1] << 16);
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

int sl_kenc_decode(const uint8_t *k, size_t klen, sl_kentry *e)
{
    if (klen < SL_KENC_HDR) return SL_ERR;
    size_t keylen = sl_get_be16(k + 3);
    if (SL_KENC_HDR + keylen > klen) return SL_ERR;
    e->kg = (int)sl_get_be16(k);
    e->sid = k[2];
    e->key = k + SL_KENC_HDR;
    e->klen = keylen;
    e->ns = k + SL_KENC_HDR + keylen;
    e->nslen = klen - SL_KENC_HDR - keylen;
    return SL_OK;
}

/* Make room for n bytes in *buf (capacity *cap); growth doubles. */
static void buf_reserve(uint8_t **buf, size_t *cap, size_t n)
{
    if (n <= *cap) return;
    size_t c = *cap ? *cap : 64;
    while (c < n) c *= 2;
    *buf = sl_realloc(*buf, c);
    *cap = c;
}

/* ---- open, close, names ------------------------------------------------- */

sl_kstate *sl_kstate_open(sl_backend_kind kind, const char *dir, int max_parallelism, int kg_first,
                          int kg_last, char *err, size_t errlen)
{
    if (max_parallelism < 1 || max_parallelism > SL_KSTATE_MAX_PARALLELISM) {
        sl_seterr(err, errlen, "keyed state: max parallelism %d is outside 1..%d", max_parallelism,
                  SL_KSTATE_MAX_PARALLELISM);
        return NULL;
    }
    if (kg_first < 0 || kg_last < kg_first || kg_last >= max_parallelism) {
        sl_seterr(err, errlen,
                  "keyed state: key-group range [%d, %d] is not within [0, %d] (max parallelism %d)",
                  kg_first, kg_last, max_parallelism - 1, max_parallelism);
        return NULL;
    }
    sl_kstate *s = NULL;
    switch (kind) {
    case SL_BACKEND_HASHMAP:
        s = sl_kstate_hashmap_open(kg_first, kg_last, err, errlen);
        break;
    case SL_BACKEND_ROCKSDB:
        if (!dir || !*dir) {
            sl_seterr(err, errlen, "keyed state: the rocksdb backend needs a directory");
            return NULL;
        }
        s = sl_kstate_rocksdb_open(dir, err, errlen);
        break;
    default:
        sl_seterr(err, errlen, "keyed state: unknown backend kind %d", (int)kind);
        return NULL;
    }
    if (!s) return NULL;
    s->kind = kind;
    s->max_parallelism = max_parallelism;
    s->kg_first = kg_first;
    s->kg_last = kg_last;
    s->key_state = KEY_NONE;
    buf_reserve(&s->enc, &s->enc_cap, 256);
    buf_reserve(&s->rbuf, &s->rbuf_cap, 256);
    return s;
}

void sl_kstate_base_free(sl_kstate *s)
{
    for (int i = 0; i < s->nstates; i++) free(s->names[i]);
    free(s->enc);
    free(s->rbuf);
}

void sl_kstate_close(sl_kstate *s)
{
    if (!s) return;
    s->ops->close(s);
}

sl_backend_kind sl_kstate_kind(const sl_kstate *s) { return s->kind; }

int sl_kstate_register(sl_kstate *s, const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < s->nstates; i++)
        if (strcmp(s->names[i], name) == 0) return i;
    if (s->nstates >= SL_KSTATE_MAX_STATES) return -1;
    s->names[s->nstates] = sl_strdup(name);
    return s->nstates++;
}

/* ---- the current key ---------------------------------------------------- */

void sl_kstate_set_key(sl_kstate *s, const void *key, size_t len, int kg)
{
    if (SL_UNLIKELY(len > SL_KSTATE_MAX_KEY)) {
        s->key_state = KEY_TOO_LONG;
        s->bad_klen = len;
        return;
    }
    if (SL_UNLIKELY(kg < s->kg_first || kg > s->kg_last)) {
        s->key_state = KEY_BAD_KG;
        s->kg = kg;
        return;
    }
    buf_reserve(&s->enc, &s->enc_cap, SL_KENC_HDR + len + 64);
    sl_put_be16(s->enc, (uint16_t)kg);
    s->enc[2] = 0;
    sl_put_be16(s->enc + 3, (uint16_t)len);
    if (len) memcpy(s->enc + SL_KENC_HDR, key, len);
    s->enc_plen = SL_KENC_HDR + len;
    s->kg = kg;
    s->key_state = KEY_OK;
}

static int key_error(const sl_kstate *s, char *err, size_t errlen)
{
    switch (s->key_state) {
    case KEY_TOO_LONG:
        return sl_seterr(err, errlen, "keyed state: key of %zu bytes is longer than %u bytes",
                         s->bad_klen, SL_KSTATE_MAX_KEY);
    case KEY_BAD_KG:
        if (s->kg < 0) /* set by the runtime on an unkeyed input of a keyed operator */
            return sl_seterr(err, errlen, "keyed state: no current key here (the broadcast side has none)");
        return sl_seterr(err, errlen,
                         "keyed state: key group %d is not owned by this subtask ([%d, %d])", s->kg,
                         s->kg_first, s->kg_last);
    default:
        return sl_seterr(err, errlen, "keyed state: no current key (sl_kstate_set_key not called)");
    }
}

static int check_sid(const sl_kstate *s, int sid, char *err, size_t errlen)
{
    if (SL_LIKELY(sid >= 0 && sid < s->nstates)) return SL_OK;
    return sl_seterr(err, errlen, "keyed state: state id %d is not registered (%d registered)", sid,
                     s->nstates);
}

/* Finish the encoded key of this call: sid byte and namespace. */
static int enc_prep(sl_kstate *s, int sid, const void *ns, size_t nslen, size_t *len, char *err,
                    size_t errlen)
{
    if (SL_UNLIKELY(s->key_state != KEY_OK)) return key_error(s, err, errlen);
    if (SL_UNLIKELY(check_sid(s, sid, err, errlen) != SL_OK)) return SL_ERR;
    if (SL_UNLIKELY(nslen > SL_KSTATE_MAX_NS || (nslen && !ns)))
        return sl_seterr(err, errlen, "keyed state: bad namespace (%zu bytes, at most %u)", nslen,
                         SL_KSTATE_MAX_NS);
    size_t n = s->enc_plen + nslen;
    if (SL_UNLIKELY(n > s->enc_cap)) buf_reserve(&s->enc, &s->enc_cap, n);
    s->enc[2] = (uint8_t)sid;
    if (nslen) memcpy(s->enc + s->enc_plen, ns, nslen);
    *len = n;
    return SL_OK;
}

/* ---- entry operations --------------------------------------------------- */

int sl_kstate_get(sl_kstate *s, int sid, const void *ns, size_t nslen, const void **val,
                  size_t *vlen, char *err, size_t errlen)
{
    size_t n;
    *val = NULL;
    *vlen = 0;
    if (enc_prep(s, sid, ns, nslen, &n, err, errlen) != SL_OK) return SL_ERR;
    return s->ops->get(s, s->kg, s->enc, n, val, vlen, err, errlen);
}

int sl_kstate_put(sl_kstate *s, int sid, const void *ns, size_t nslen, const void *val,
                  size_t vlen, char *err, size_t errlen)
{
    size_t n;
    if (SL_UNLIKELY(vlen > SL_KSTATE_MAX_VAL || (vlen && !val)))
        return sl_seterr(err, errlen, "keyed state: bad value (%zu bytes, at most %u)", vlen,
                         SL_KSTATE_MAX_VAL);
    if (enc_prep(s, sid, ns, nslen, &n, err, errlen) != SL_OK) return SL_ERR;
    return s->ops->put(s, s->kg, s->enc, n, val, vlen, err, errlen);
}

int sl_kstate_del(sl_kstate *s, int sid, const void *ns, size_t nslen, char *err, size_t errlen)
{
    size_t n;
    if (enc_prep(s, sid, ns, nslen, &n, err, errlen) != SL_OK) return SL_ERR;
    return s->ops->del(s, s->kg, s->enc, n, err, errlen);
}

int sl_kstate_scan_key(sl_kstate *s, int sid,
                       int (*fn)(void *ctx, const void *ns, size_t nslen, const void *val,
                                 size_t vlen),
                       void *ctx, char *err, size_t errlen)
{
    if (SL_UNLIKELY(s->key_state != KEY_OK)) return key_error(s, err, errlen);
    if (SL_UNLIKELY(check_sid(s, sid, err, errlen) != SL_OK)) return SL_ERR;
    s->enc[2] = (uint8_t)sid;
    return s->ops->scan(s, s->kg, s->enc, s->enc_plen, fn, ctx, err, errlen);
}

uint64_t sl_kstate_entries(const sl_kstate *s) { return s->entries; }
uint64_t sl_kstate_bytes(const sl_kstate *s) { return s->bytes; }

/* ---- snapshots and restore ---------------------------------------------- */

void sl_kstate_set_ttl(sl_kstate *s, int sid, int layout, int64_t (*clock)(void))
{
    if (sid < 0 || sid >= SL_KSTATE_MAX_STATES) return;
    s->ttl_layout[sid] = (uint8_t)layout;
    if (clock) s->ttl_clock = clock;
}

sl_ksnap *sl_kstate_snapshot(sl_kstate *s, char *err, size_t errlen)
{
    sl_ksnap *snap = s->ops->snapshot(s, err, errlen);
    if (snap) {
        snap->kg_first = s->kg_first;
        snap->kg_last = s->kg_last;
        memcpy(snap->ttl_layout, s->ttl_layout, sizeof snap->ttl_layout);
        snap->ttl_any = 0;
        for (int i = 0; i < s->nstates; i++) snap->ttl_any |= s->ttl_layout[i] != 0;
        snap->ttl_now = snap->ttl_any && s->ttl_clock ? s->ttl_clock() : 0;
    }
    return snap;
}

/* Has every value of the entry expired by `now`? */
static int ttl_gone(int layout, const uint8_t *v, size_t vlen, int64_t now)
{
    int64_t at;
    if (layout == SL_KTTL_VALUE) {
        if (vlen < 8) return 0;
        memcpy(&at, v, 8);
        return now >= at;
    }
    for (size_t pos = 0; pos < vlen;) { /* a list: gone when all its elements are */
        uint32_t l;
        if (vlen - pos < 12) return 0;
        memcpy(&l, v + pos, 4);
        memcpy(&at, v + pos + 4, 8);
        if (now < at || vlen - pos - 12 < l) return 0;
        pos += 12 + (size_t)l;
    }
    return 1;
}

typedef struct ttl_filter {
    const sl_ksnap *snap;
    int (*fn)(void *ctx, const sl_kentry *e);
    void *ctx;
} ttl_filter;

static int ttl_visit(void *ctx, const sl_kentry *e)
{
    ttl_filter *f = ctx;
    int layout = e->sid >= 0 && e->sid < SL_KSTATE_MAX_STATES ? f->snap->ttl_layout[e->sid] : 0;
    if (layout && ttl_gone(layout, e->val, e->vlen, f->snap->ttl_now)) return 0;
    return f->fn(f->ctx, e);
}

int sl_ksnap_each(sl_ksnap *snap, int kg, int (*fn)(void *ctx, const sl_kentry *e), void *ctx,
                  char *err, size_t errlen)
{
    if (kg < snap->kg_first || kg > snap->kg_last)
        return sl_seterr(err, errlen, "keyed state snapshot: key group %d is outside its range [%d, %d]",
                         kg, snap->kg_first, snap->kg_last);
    if (!snap->ttl_any) return snap->ops->each(snap, kg, fn, ctx, err, errlen);
    ttl_filter f = {snap, fn, ctx};
    return snap->ops->each(snap, kg, ttl_visit, &f, err, errlen);
}

void sl_ksnap_release(sl_ksnap *snap)
{
    if (snap) snap->ops->release(snap);
}

int sl_kstate_restored(const sl_kstate *s, int sid)
{
    return sid >= 0 && sid < SL_KSTATE_MAX_STATES && s->restored[sid];
}

int sl_kstate_restore(sl_kstate *s, const sl_kentry *e, char *err, size_t errlen)
{
    if (!e) return sl_seterr(err, errlen, "keyed state restore: no entry");
    if (e->kg < s->kg_first || e->kg > s->kg_last)
        return sl_seterr(err, errlen,
                         "keyed state restore: entry of key group %d is outside this subtask's "
                         "range [%d, %d]",
                         e->kg, s->kg_first, s->kg_last);
    if (e->sid < 0 || e->sid >= SL_KSTATE_MAX_STATES)
        return sl_seterr(err, errlen, "keyed state restore: state id %d is outside 0..%d", e->sid,
                         SL_KSTATE_MAX_STATES - 1);
    if (e->klen > SL_KSTATE_MAX_KEY || (e->klen && !e->key))
        return sl_seterr(err, errlen, "keyed state restore: bad key (%zu bytes, at most %u)",
                         e->klen, SL_KSTATE_MAX_KEY);
    if (e->nslen > SL_KSTATE_MAX_NS || (e->nslen && !e->ns))
        return sl_seterr(err, errlen, "keyed state restore: bad namespace (%zu bytes, at most %u)",
                         e->nslen, SL_KSTATE_MAX_NS);
    if (e->vlen > SL_KSTATE_MAX_VAL || (e->vlen && !e->val))
        return sl_seterr(err, errlen, "keyed state restore: bad value (%zu bytes, at most %u)",
                         e->vlen, SL_KSTATE_MAX_VAL);
    size_t n = SL_KENC_HDR + e->klen + e->nslen;
    buf_reserve(&s->rbuf, &s->rbuf_cap, n);
    sl_put_be16(s->rbuf, (uint16_t)e->kg);
    s->rbuf[2] = (uint8_t)e->sid;
    sl_put_be16(s->rbuf + 3, (uint16_t)e->klen);
    if (e->klen) memcpy(s->rbuf + SL_KENC_HDR, e->key, e->klen);
    if (e->nslen) memcpy(s->rbuf + SL_KENC_HDR + e->klen, e->ns, e->nslen);
    s->restored[e->sid] = 1;
    return s->ops->put(s, e->kg, s->rbuf, n, e->val, e->vlen, err, errlen);
}
