/*
 * state_hashmap.c -- the in-memory keyed-state backend.
 *
 * One open-addressing hash table per owned key group, so a key group can be
 * snapshotted or handed over as a unit. A table is a power-of-two array of
 * one-word slots (the entry's address, the hash's top 16 bits as a tag),
 * probed linearly from hash & mask, grown by doubling when it would pass
 * 70% full, and kept tombstone-free by backward-shift deletion. The hash is
 * sl_kstate_hash over the encoded key from the state id on (sid|klen|key|ns;
 * the key group is implied by the table); an entry keeps its low 32 bits,
 * its home in any table. An entry is one piece of memory holding a 24-byte
 * header, the encoded key and the value, made when the entry is new, with
 * slack after the value so a value that grows a little is rewritten in
 * place; get hands out a pointer into the entry (8-byte aligned, borrowed
 * until the next call). Entries of up to 256 bytes (nearly all) are carved
 * from 64 KiB slab blocks of the state, a free list per 8-byte size, so
 * there is no malloc per entry nor its header and rounding; bytes per
 * entry are therefore 24 + encoded key + value rounded up to 8, plus a slot
 * word at 35-70% load (bench/state_bench.c --layout measures them).
 *
 * Snapshots are copy-on-write, not copies. Both slot arrays and entries
 * carry an atomic reference count:
 *   - a snapshot takes a reference on each key group's slot array: O(key
 *     groups), microseconds whatever the state size;
 *   - the task thread reads shared arrays freely, but before it changes a
 *     table whose array is shared it copies the array (one memcpy of the
 *     slots) and takes a reference on each entry in it -- once per table per
 *     snapshot, on the first write to that key group;
 *   - it changes an entry in place only when the entry's count is 1 (no
 *     snapshot can see it); otherwise a put writes a new entry and drops its
 *     reference on the old one, which the snapshot keeps alive;
 *   - releasing the snapshot (any thread) drops its array references; the
 *     last reference to an array drops its entries', the last to an entry
 *     frees it (off the task thread: onto the slab's lock-free stack, which
 *     the task thread takes whole when it needs memory; the slab itself
 *     lives until the state and every snapshot have let it go).
 * So a snapshot is immutable from the moment it is taken: nothing it can
 * reach is ever written again. A full deep copy would cost O(entries) on
 * the task thread at every checkpoint and double the memory; this costs a
 * pointer copy per key group up front, and afterwards roughly one slot-array
 * copy per touched key group plus one entry allocation per entry first
 * written while a snapshot is alive (bench/state_bench.c measures both).
 *
 * sl_ksnap_each sorts a key group's entries on demand into encoded-key
 * order (state_int.h), the order RocksDB keeps. The hash covers the
 * namespace, so one key's entries are not adjacent; scan_key finds them
 * through a key index instead of walking the key group's table: per state
 * id that has been scanned once, per key group a table of the same kind
 * (never shared with snapshots) maps sid|klen|key to the key's live entries:
 * a key with one entry has that entry in its slot (marked by bit 0; the
 * entry's kpos holds the key's hash meanwhile), a key with more has a
 * record there, a vector of pointers to them (malloc'd: it grows by
 * realloc), each entry knowing its place in the vector (kpos); a key that
 * drops back to one entry has it in its slot again. The index is
 * built by one walk over every table at the first scan of the state id and
 * kept by put (a new entry is appended; an entry copied away from a
 * snapshot or grown into a larger one takes its old place) and del (the vector's
 * last pointer moves into the freed place), all O(1) whatever the key
 * holds, so states that are never scanned cost nothing, and a scan costs
 * the key's entries: a copy of the vector sorted by namespace, so both
 * backends visit them in the same order. kpos is the task thread's: a
 * snapshot reading a shared entry never looks at it.
 *
 * Threads: everything runs on the task thread except sl_ksnap_each and
 * sl_ksnap_release, which only read shared (hence frozen) arrays and
 * entries and drop references.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "slab.h"
#include "state_int.h"

typedef struct hm_entry {
    _Atomic uint32_t refs; /* slot arrays holding this entry */
    uint32_t hash;         /* low 32 bits of its table hash: its home in any table */
    uint32_t elen;         /* encoded key from sid on: sid|klen|key|ns */
    uint32_t vlen;
    uint32_t vcap;         /* room for the value: vlen plus slack */
    uint32_t kpos;         /* in an indexed state (task thread only): its place in its key's
                              key-index vector, or, while it is its key's only entry, the
                              low 32 bits of the key's index hash */
    uint8_t data[];        /* elen key bytes, padding (the value starts 8-byte aligned in
                              the allocation), vcap value bytes */
} hm_entry;

/* A slot is one word: the entry's address in the low 48 bits (user-space
 * addresses on x86-64 and AArch64 fit), the top 16 bits of the hash above
 * them as a tag, so a probe reads an entry only when the tags agree; 0 is
 * empty. In a key index bit 0 set marks an entry of the state itself (its
 * key's only entry) rather than a key record. */
typedef uint64_t hm_slot;
#define SLOT_PTR_MASK ((UINT64_C(1) << 48) - 1)
#define SLOT_DIRECT UINT64_C(1)

static inline hm_slot slot_make(uint64_t h, const hm_entry *e)
{
    uint64_t p = (uint64_t)(uintptr_t)e;
    SL_ASSERT((p & ~SLOT_PTR_MASK) == 0);
    return (h & ~SLOT_PTR_MASK) | p;
}
static inline hm_entry *slot_entry(hm_slot s)
{
    return (hm_entry *)(uintptr_t)(s & SLOT_PTR_MASK & ~SLOT_DIRECT);
}

typedef struct hm_array {
    _Atomic uint32_t refs; /* the live table and snapshots holding it */
    uint32_t count;        /* entries; 0 <= count <= 0.7 * (mask + 1) */
    size_t mask;           /* slots - 1, slots a power of two, at most 2^32 */
    hm_slot slots[];
} hm_array;

/* Entries live in a slab (core/slab.h: up to SL_SLAB_MAX bytes carved from
 * blocks in multiples of 8 -- an entry's size is a multiple of 8, and its
 * header says it: sizeof(hm_entry) + voff(elen) + vcap -- larger ones
 * malloc'd). The task thread allocates and frees into its free lists; an
 * entry whose last reference a snapshot's release drops (any thread) goes
 * onto the slab's remote stack. The slab outlives the state while a
 * snapshot holds it (refs: the state and each live snapshot). */
typedef struct hm_slab {
    _Atomic uint32_t refs;
    sl_slab s;
} hm_slab;

typedef struct hm_state {
    sl_kstate base;
    hm_slab *slab;
    int ntables;        /* kg_last - kg_first + 1 */
    hm_array **tables;  /* per owned key group; NULL until its first put */
    hm_entry **scanv;   /* scan_key's matches, reused */
    size_t scancap;
    hm_array **kidx[256]; /* per state id (NULL: not scanned yet), per owned key group
                             (NULL: no entry yet): the key index */
} hm_state;

typedef struct hm_snap {
    sl_ksnap base;
    hm_slab *slab;      /* a reference */
    int kg_first;
    int ntables;
    hm_array *arr[]; /* a reference each, NULL for empty key groups */
} hm_snap;

#define HM_NOTFOUND ((size_t)-1)
#define HM_MIN_SLOTS 16

/* The value's offset in data: the entry (malloc'd, so 8-byte aligned) has
 * its value 8-byte aligned too. */
static inline size_t voff(uint32_t elen)
{
    return ((sizeof(hm_entry) + elen + 7) & ~(size_t)7) - sizeof(hm_entry);
}
static inline uint8_t *hm_val(hm_entry *e) { return e->data + voff(e->elen); }

/* Room for a value of vlen, in multiples of 8: a quarter more (at most 512
 * bytes more) plus 8, so accumulators that grow seldom move -- but none for
 * a value of at most 64 bytes (counters, a count and a sum, a TTL and a
 * count, a join's row: fixed sizes, mostly, which is most entries of most
 * states; one that does grow costs a copy of a small entry). */
static inline uint32_t vcap_for(size_t vlen)
{
    size_t slack = vlen <= 64 ? 0 : SL_MIN(vlen / 4, (size_t)512) + 8;
    return (uint32_t)((vlen + slack + 7) & ~(size_t)7);
}

/* ---- entry memory -------------------------------------------------------- */

static inline size_t entry_size(uint32_t elen, uint32_t vcap)
{
    return sizeof(hm_entry) + voff(elen) + vcap;
}

static void slab_unref(hm_slab *sb)
{
    if (atomic_fetch_sub_explicit(&sb->refs, 1, memory_order_acq_rel) != 1) return;
    sl_slab_release(&sb->s);
    free(sb);
}

/* Entry e's memory back: into the free lists on the task thread (local),
 * else onto the remote stack. */
static void entry_free(hm_slab *sb, hm_entry *e, int local)
{
    size_t size = entry_size(e->elen, e->vcap);
    if (local) sl_slab_free(&sb->s, e, size);
    else sl_slab_free_remote(&sb->s, e, size);
}

static hm_entry *entry_new(hm_slab *sb, const uint8_t *k, size_t n, uint64_t h, const void *val,
                           size_t vlen)
{
    uint32_t cap = vcap_for(vlen);
    size_t size = entry_size((uint32_t)n, cap);
    hm_entry *e = sl_slab_alloc(&sb->s, size);
    atomic_init(&e->refs, 1);
    e->hash = (uint32_t)h;
    e->elen = (uint32_t)n;
    e->vlen = (uint32_t)vlen;
    e->vcap = cap;
    e->kpos = 0;
    memcpy(e->data, k, n);
    if (vlen) memcpy(hm_val(e), val, vlen);
    return e;
}

static inline void entry_unref(hm_slab *sb, hm_entry *e, int local)
{
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) entry_free(sb, e, local);
}

/* A key-index record (task thread only, never shared): malloc'd, as its
 * vector grows by realloc. */
static hm_entry *record_new(const uint8_t *p, size_t pn, uint64_t h, size_t cap)
{
    hm_entry *r = sl_malloc(sizeof *r + voff((uint32_t)pn) + cap);
    atomic_init(&r->refs, 1);
    r->hash = (uint32_t)h;
    r->elen = (uint32_t)pn;
    r->vlen = 0;
    r->vcap = (uint32_t)cap;
    r->kpos = 0;
    memcpy(r->data, p, pn);
    return r;
}

static hm_array *array_new(size_t nslots)
{
    hm_array *a = sl_calloc(1, sizeof *a + nslots * sizeof(hm_slot));
    atomic_init(&a->refs, 1);
    a->mask = nslots - 1;
    return a;
}

static void array_unref(hm_slab *sb, hm_array *a, int local)
{
    if (!a || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1) return;
    for (size_t i = 0; i <= a->mask; i++)
        if (a->slots[i]) entry_unref(sb, slot_entry(a->slots[i]), local);
    free(a);
}

/* A slot's home: the hash its entry was placed by. In a key index that is
 * the key's hash, which a key's only entry keeps in kpos. */
static inline uint64_t slot_home(hm_slot s)
{
    const hm_entry *e = slot_entry(s);
    return (s & SLOT_DIRECT) ? e->kpos : e->hash;
}

static inline size_t array_find(const hm_array *a, uint64_t h, const uint8_t *k, size_t n)
{
    uint64_t tag = h & ~SLOT_PTR_MASK;
    for (size_t i = h & a->mask;; i = (i + 1) & a->mask) {
        hm_slot sl = a->slots[i];
        if (!sl) return HM_NOTFOUND;
        if ((sl & ~SLOT_PTR_MASK) != tag) continue;
        const hm_entry *e = slot_entry(sl);
        if (e->hash == (uint32_t)h && e->elen == n && memcmp(e->data, k, n) == 0) return i;
    }
}

/* Insert slot value sv whose home is h. */
static inline void array_insert(hm_array *a, uint64_t h, hm_slot sv)
{
    size_t i = h & a->mask;
    while (a->slots[i]) i = (i + 1) & a->mask;
    a->slots[i] = sv;
    a->count++;
}

/* A copy of a with twice the slots; a is freed, its entries move. */
static hm_array *array_doubled(hm_array *a)
{
    hm_array *g = array_new((a->mask + 1) * 2);
    for (size_t i = 0; i <= a->mask; i++)
        if (a->slots[i]) array_insert(g, slot_home(a->slots[i]), a->slots[i]);
    free(a);
    return g;
}

/* The table of key group index idx, ready to be changed: created if absent,
 * unshared from snapshots if shared. */
static hm_array *table_writable(hm_state *st, int idx)
{
    hm_array *a = st->tables[idx];
    if (!a) return st->tables[idx] = array_new(HM_MIN_SLOTS);
    if (atomic_load_explicit(&a->refs, memory_order_acquire) == 1) return a;
    size_t nslots = a->mask + 1;
    hm_array *c = array_new(nslots);
    memcpy(c->slots, a->slots, nslots * sizeof(hm_slot));
    c->count = a->count;
    for (size_t i = 0; i < nslots; i++)
        if (c->slots[i])
            atomic_fetch_add_explicit(&slot_entry(c->slots[i])->refs, 1, memory_order_relaxed);
    array_unref(st->slab, a, 1);
    return st->tables[idx] = c;
}

/* Remove slot i of an exclusively held array, shifting later members of
 * its probe run back so no tombstone is needed. */
static void array_remove(hm_array *a, size_t i)
{
    size_t j = i;
    for (;;) {
        j = (j + 1) & a->mask;
        if (!a->slots[j]) break;
        size_t home = slot_home(a->slots[j]) & a->mask;
        /* slot j may move to i only if i lies on its probe path home..j */
        if (((j - home) & a->mask) >= ((j - i) & a->mask)) {
            a->slots[i] = a->slots[j];
            i = j;
        }
    }
    a->slots[i] = 0;
    a->count--;
}

static int entry_cmp(const void *pa, const void *pb)
{
    const hm_entry *a = *(hm_entry *const *)pa, *b = *(hm_entry *const *)pb;
    return sl_kenc_cmp(a->data, a->elen, b->data, b->elen);
}

/* ---- the key index ------------------------------------------------------- */

/* Length of the sid|klen|key prefix of an entry's encoded key p (sid on). */
static inline size_t key_prefix_len(const uint8_t *p) { return 3 + (size_t)sl_get_be16(p + 1); }

/* The slot of key prefix p (sid|klen|key, pn bytes, hash h) in key index
 * table a, or HM_NOTFOUND. A record holds exactly the prefix; a key's only
 * entry holds it followed by the namespace. */
static size_t kidx_find(const hm_array *a, uint64_t h, const uint8_t *p, size_t pn)
{
    uint64_t tag = h & ~SLOT_PTR_MASK;
    for (size_t i = h & a->mask;; i = (i + 1) & a->mask) {
        hm_slot sl = a->slots[i];
        if (!sl) return HM_NOTFOUND;
        if ((sl & ~SLOT_PTR_MASK) != tag) continue;
        const hm_entry *e = slot_entry(sl);
        if ((uint32_t)slot_home(sl) != (uint32_t)h) continue;
        if ((sl & SLOT_DIRECT) ? e->elen < pn : e->elen != pn) continue;
        if (memcmp(e->data, p, pn) == 0) return i;
    }
}

static inline hm_entry **kidx_vec(hm_entry *r) { return (hm_entry **)(void *)hm_val(r); }

/* Key group index idx's table of state id sid's key index, made when absent. */
static hm_array *kidx_table(hm_state *st, int sid, int idx)
{
    hm_array **t = st->kidx[sid];
    if (!t[idx]) t[idx] = array_new(HM_MIN_SLOTS);
    return t[idx];
}

/* Entry e (of key group index idx) joins its key's place in the index: the
 * slot itself while it is the key's only entry, then a record's vector. */
static void kidx_add(hm_state *st, int idx, hm_entry *e)
{
    int sid = e->data[0];
    hm_array *a = kidx_table(st, sid, idx);
    size_t pn = key_prefix_len(e->data);
    uint64_t h = sl_kstate_hash(e->data, pn);
    size_t i = kidx_find(a, h, e->data, pn);
    if (i == HM_NOTFOUND) {
        if ((size_t)(a->count + 1) * 10 > (a->mask + 1) * 7)
            st->kidx[sid][idx] = a = array_doubled(a);
        e->kpos = (uint32_t)h;
        array_insert(a, h, slot_make(h, e) | SLOT_DIRECT);
        return;
    }
    hm_slot sv = a->slots[i];
    hm_entry *r;
    if (sv & SLOT_DIRECT) { /* the key's second entry: a record for both */
        hm_entry *d = slot_entry(sv);
        r = record_new(e->data, pn, h, 4 * sizeof e);
        d->kpos = 0;
        kidx_vec(r)[0] = d;
        r->vlen = sizeof e;
        a->slots[i] = slot_make(h, r);
    } else {
        r = slot_entry(sv);
    }
    size_t vlen = (size_t)r->vlen + sizeof e;
    if (vlen > r->vcap) { /* doubling: a hot key's vector is not copied per row */
        size_t cap = SL_MAX((size_t)r->vcap * 2, (size_t)8);
        r = sl_realloc(r, sizeof *r + voff(r->elen) + cap);
        r->vcap = (uint32_t)cap;
        a->slots[i] = slot_make(h, r);
    }
    e->kpos = r->vlen / (uint32_t)sizeof e;
    kidx_vec(r)[e->kpos] = e;
    r->vlen = (uint32_t)vlen;
}

/* The index slot of the key of entry e (key group index idx). */
static size_t kidx_slot_of(hm_state *st, int idx, const hm_entry *e, hm_array **ap)
{
    hm_array *a = st->kidx[e->data[0]][idx];
    size_t pn = key_prefix_len(e->data);
    SL_ASSERT(a);
    size_t i = kidx_find(a, sl_kstate_hash(e->data, pn), e->data, pn);
    SL_ASSERT(i != HM_NOTFOUND);
    *ap = a;
    return i;
}

/* Entry e leaves its key's place in the index: the last of the vector takes
 * its place, so O(1) whatever the key holds; a key left with one entry has
 * it in the slot again. */
static void kidx_del(hm_state *st, int idx, const hm_entry *e)
{
    hm_array *a;
    size_t i = kidx_slot_of(st, idx, e, &a);
    hm_slot sv = a->slots[i];
    if (sv & SLOT_DIRECT) {
        SL_ASSERT(slot_entry(sv) == e);
        array_remove(a, i);
        return;
    }
    hm_entry *r = slot_entry(sv), **v = kidx_vec(r);
    uint32_t n = r->vlen / (uint32_t)sizeof e, p = e->kpos;
    SL_ASSERT(p < n && v[p] == e);
    v[p] = v[n - 1];
    v[p]->kpos = p;
    r->vlen -= (uint32_t)sizeof e;
    if (n - 1 == 1) {
        hm_entry *d = v[0];
        d->kpos = r->hash;
        a->slots[i] = slot_make(sv, d) | SLOT_DIRECT; /* the tag is the key's */
        free(r);
    }
}

/* Entry old (key group index idx) now lives at ne (a copy, or a realloc:
 * old may be freed, so it is only compared, never read); kpos is old's. */
static void kidx_moved(hm_state *st, int idx, uintptr_t old, uint32_t kpos, hm_entry *ne)
{
    hm_array *a = st->kidx[ne->data[0]][idx];
    size_t pn = key_prefix_len(ne->data);
    uint64_t h = sl_kstate_hash(ne->data, pn), tag = h & ~SLOT_PTR_MASK;
    ne->kpos = kpos;
    SL_ASSERT(a);
    for (size_t i = h & a->mask;; i = (i + 1) & a->mask) {
        hm_slot sv = a->slots[i];
        SL_ASSERT(sv);
        if ((sv & ~SLOT_PTR_MASK) != tag) continue;
        if (sv & SLOT_DIRECT) {
            if ((uintptr_t)slot_entry(sv) != old) continue;
            a->slots[i] = slot_make(sv, ne) | SLOT_DIRECT;
            return;
        }
        hm_entry *r = slot_entry(sv);
        if (r->hash == (uint32_t)h && r->elen == pn && memcmp(r->data, ne->data, pn) == 0) {
            SL_ASSERT(kpos < r->vlen / sizeof ne);
            kidx_vec(r)[kpos] = ne;
            return;
        }
    }
}

/* State id sid's key index, built from every table at its first use. */
static hm_array **kidx_get(hm_state *st, int sid)
{
    if (st->kidx[sid]) return st->kidx[sid];
    st->kidx[sid] = sl_calloc((size_t)st->ntables, sizeof(hm_array *));
    for (int t = 0; t < st->ntables; t++) {
        hm_array *a = st->tables[t];
        for (size_t i = 0; a && i <= a->mask; i++) {
            hm_entry *e = a->slots[i] ? slot_entry(a->slots[i]) : NULL;
            if (e && e->data[0] == sid) kidx_add(st, t, e);
        }
    }
    return st->kidx[sid];
}

static void kidx_free(hm_array **t, int ntables)
{
    if (!t) return;
    for (int k = 0; k < ntables; k++) {
        hm_array *a = t[k];
        for (size_t i = 0; a && i <= a->mask; i++)
            if (a->slots[i] && !(a->slots[i] & SLOT_DIRECT)) free(slot_entry(a->slots[i]));
        free(a);
    }
    free(t);
}

/* ---- operations --------------------------------------------------------- */

static int hm_get(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void **val,
                  size_t *vlen, char *err, size_t errlen)
{
    hm_state *st = (hm_state *)s;
    hm_array *a = st->tables[kg - s->kg_first];
    if (!a) return SL_DONE;
    const uint8_t *k2 = k + 2;
    size_t n = klen - 2;
    size_t i = array_find(a, sl_kstate_hash(k2, n), k2, n);
    if (i == HM_NOTFOUND) return SL_DONE;
    hm_entry *e = slot_entry(a->slots[i]);
    *val = hm_val(e);
    *vlen = e->vlen;
    return SL_OK;
}

static int hm_put(sl_kstate *s, int kg, const uint8_t *k, size_t klen, const void *val,
                  size_t vlen, char *err, size_t errlen)
{
    hm_state *st = (hm_state *)s;
    int idx = kg - s->kg_first;
    const uint8_t *k2 = k + 2;
    size_t n = klen - 2;
    uint64_t h = sl_kstate_hash(k2, n);
    hm_array *a = table_writable(st, idx);
    size_t i = array_find(a, h, k2, n);
    int indexed = st->kidx[k[2]] != NULL;
    if (i != HM_NOTFOUND) {
        hm_entry *e = slot_entry(a->slots[i]);
        uint32_t old = e->vlen;
        if (atomic_load_explicit(&e->refs, memory_order_acquire) != 1) {
            /* a snapshot sees this entry: leave it to the snapshot */
            hm_entry *ne = entry_new(st->slab, k2, n, h, val, vlen);
            a->slots[i] = slot_make(h, ne);
            if (indexed) kidx_moved(st, idx, (uintptr_t)e, e->kpos, ne);
            entry_unref(st->slab, e, 1);
        } else {
            if (vlen > e->vcap) { /* a new entry: val may be the old one's own bytes */
                hm_entry *ne = entry_new(st->slab, k2, n, h, val, vlen);
                a->slots[i] = slot_make(h, ne);
                if (indexed) kidx_moved(st, idx, (uintptr_t)e, e->kpos, ne);
                entry_free(st->slab, e, 1);
                s->bytes = s->bytes - old + vlen;
                return SL_OK;
            }
            if (vlen) memmove(hm_val(e), val, vlen); /* val may be this entry's own bytes */
            e->vlen = (uint32_t)vlen;
        }
        s->bytes = s->bytes - old + vlen;
        return SL_OK;
    }
    if ((size_t)(a->count + 1) * 10 > (a->mask + 1) * 7) st->tables[idx] = a = array_doubled(a);
    hm_entry *ne = entry_new(st->slab, k2, n, h, val, vlen);
    array_insert(a, h, slot_make(h, ne));
    if (indexed) kidx_add(st, idx, ne);
    s->entries++;
    s->bytes += (n - 3) + vlen; /* key + namespace + value */
    return SL_OK;
}

/* Deleting an absent entry is not an error: SL_OK either way. */
static int hm_del(sl_kstate *s, int kg, const uint8_t *k, size_t klen, char *err, size_t errlen)
{
    hm_state *st = (hm_state *)s;
    int idx = kg - s->kg_first;
    hm_array *a = st->tables[idx];
    if (!a) return SL_OK;
    const uint8_t *k2 = k + 2;
    size_t n = klen - 2;
    size_t i = array_find(a, sl_kstate_hash(k2, n), k2, n);
    if (i == HM_NOTFOUND) return SL_OK;
    a = table_writable(st, idx); /* an unshared copy keeps the slot layout, so i holds */
    hm_entry *e = slot_entry(a->slots[i]);
    s->entries--;
    s->bytes -= (n - 3) + e->vlen;
    array_remove(a, i);
    if (st->kidx[k[2]]) kidx_del(st, idx, e);
    entry_unref(st->slab, e, 1);
    return SL_OK;
}

static int hm_scan(sl_kstate *s, int kg, const uint8_t *prefix, size_t plen, sl_kscan_fn fn,
                   void *ctx, char *err, size_t errlen)
{
    hm_state *st = (hm_state *)s;
    int idx = kg - s->kg_first;
    hm_array *a = st->tables[idx];
    if (!a) return SL_OK;
    size_t pn = plen - 2, m;
    const uint8_t *p = prefix + 2; /* sid|klen|key */
    hm_array *ix = kidx_get(st, prefix[2])[idx];
    if (!ix) return SL_OK;
    size_t at = kidx_find(ix, sl_kstate_hash(p, pn), p, pn);
    if (at == HM_NOTFOUND) return SL_OK;
    hm_slot sv = ix->slots[at];
    if (sv & SLOT_DIRECT) {
        hm_entry *e = slot_entry(sv);
        fn(ctx, e->data + pn, e->elen - pn, hm_val(e), e->vlen);
        return SL_OK;
    }
    hm_entry *r = slot_entry(sv);
    m = r->vlen / sizeof(hm_entry *);
    if (m > st->scancap) {
        st->scancap = SL_MAX(m, st->scancap * 2);
        st->scanv = sl_realloc(st->scanv, st->scancap * sizeof *st->scanv);
    }
    /* sorted in a copy: the vector's order is its entries' kpos */
    memcpy(st->scanv, kidx_vec(r), m * sizeof *st->scanv);
    if (m > 1) qsort(st->scanv, m, sizeof *st->scanv, entry_cmp);
    for (size_t i = 0; i < m; i++) {
        hm_entry *e = st->scanv[i];
        if (fn(ctx, e->data + pn, e->elen - pn, hm_val(e), e->vlen)) break;
    }
    return SL_OK;
}

/* ---- snapshots ---------------------------------------------------------- */

static int hm_snap_each(sl_ksnap *base, int kg, int (*fn)(void *ctx, const sl_kentry *e),
                        void *ctx, char *err, size_t errlen)
{
    hm_snap *sn = (hm_snap *)base;
    hm_array *a = sn->arr[kg - sn->kg_first];
    if (!a || a->count == 0) return SL_OK;
    hm_entry **v = sl_malloc(a->count * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i <= a->mask; i++)
        if (a->slots[i]) v[m++] = slot_entry(a->slots[i]);
    SL_ASSERT(m == a->count);
    qsort(v, m, sizeof *v, entry_cmp);
    int rc = SL_OK;
    for (size_t i = 0; i < m && rc == SL_OK; i++) {
        hm_entry *e = v[i];
        size_t klen = sl_get_be16(e->data + 1);
        SL_ASSERT(3 + klen <= e->elen);
        sl_kentry ke = {
            .sid = e->data[0],
            .kg = kg,
            .key = e->data + 3,
            .klen = klen,
            .ns = e->data + 3 + klen,
            .nslen = e->elen - 3 - klen,
            .val = hm_val(e),
            .vlen = e->vlen,
        };
        rc = fn(ctx, &ke);
    }
    free(v);
    return rc;
}

static void hm_snap_release(sl_ksnap *base)
{
    hm_snap *sn = (hm_snap *)base;
    for (int i = 0; i < sn->ntables; i++) array_unref(sn->slab, sn->arr[i], 0);
    slab_unref(sn->slab);
    free(sn);
}

static const sl_ksnap_ops hm_snap_ops = {
    .each = hm_snap_each,
    .release = hm_snap_release,
};

static sl_ksnap *hm_snapshot(sl_kstate *s, char *err, size_t errlen)
{
    hm_state *st = (hm_state *)s;
    hm_snap *sn = sl_calloc(1, sizeof *sn + (size_t)st->ntables * sizeof(hm_array *));
    sn->base.ops = &hm_snap_ops;
    sn->slab = st->slab;
    atomic_fetch_add_explicit(&st->slab->refs, 1, memory_order_relaxed);
    sn->kg_first = s->kg_first;
    sn->ntables = st->ntables;
    for (int i = 0; i < st->ntables; i++) {
        hm_array *a = st->tables[i];
        if (!a || a->count == 0) continue;
        atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
        sn->arr[i] = a;
    }
    return &sn->base;
}

static void hm_close(sl_kstate *s)
{
    hm_state *st = (hm_state *)s;
    for (int i = 0; i < st->ntables; i++) array_unref(st->slab, st->tables[i], 1);
    for (int i = 0; i < 256; i++) kidx_free(st->kidx[i], st->ntables);
    slab_unref(st->slab);
    free(st->tables);
    free(st->scanv);
    sl_kstate_base_free(s);
    free(st);
}

static const sl_kstate_ops hm_ops = {
    .get = hm_get,
    .put = hm_put,
    .del = hm_del,
    .scan = hm_scan,
    .snapshot = hm_snapshot,
    .close = hm_close,
};

sl_kstate *sl_kstate_hashmap_open(int kg_first, int kg_last, char *err, size_t errlen)
{
    hm_state *st = sl_calloc(1, sizeof *st);
    st->base.ops = &hm_ops;
    st->slab = sl_calloc(1, sizeof *st->slab);
    atomic_init(&st->slab->refs, 1);
    sl_slab_init(&st->slab->s);
    st->ntables = kg_last - kg_first + 1;
    st->tables = sl_calloc((size_t)st->ntables, sizeof *st->tables);
    return &st->base;
}
