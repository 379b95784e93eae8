/*
 * timers.c -- the timer service of one keyed operator subtask.
 *
 * Each distinct timer is one node (time, key group, key and namespace bytes
 * in one piece of memory: a slot of a slab block, no malloc per timer, below
 * SL_SLAB_MAX bytes) that sits in three structures at once:
 *   - a binary min-heap ordered by (time, kg, key, ns) -- a total order,
 *     so firing is deterministic. Its entries carry the time and a 64-bit
 *     prefix of (kg, key) beside the node pointer, so most comparisons
 *     never touch a node: timers due at the same instant (every key's
 *     window end) tie on time, and the prefix orders them without the two
 *     cache misses of reading both nodes. Each node remembers its heap
 *     index, so deleting any timer is O(log n);
 *   - an open-addressing hash set (linear probing, backward-shift delete,
 *     doubled at 70% load) on the same four fields, which is what makes a
 *     second registration of the same timer a no-op, as in Flink;
 *   - a doubly linked list per key group, so sl_timers_each(kg) -- called
 *     for every owned key group when a snapshot is written -- visits only
 *     that group's timers.
 *
 * Firing pops the heap top while its time is <= the bound. The node is
 * unlinked from all three structures before the callback runs, so the
 * callback may add or delete timers freely (including re-adding the very
 * timer it is handed, which then fires again in the same pass if it is
 * still due). If the callback returns anything but SL_OK the walk stops and
 * that timer is put back (unless the callback re-added it itself): a
 * callback that could not do its work -- SL_AGAIN under backpressure, say
 * -- loses nothing.
 *
 * Keys and namespaces compare bytewise, shorter first on a common prefix,
 * the same order keyed state uses for its encoded keys.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "keygroup.h"
#include "slab.h"
#include "timers.h"

typedef struct tnode tnode;

/* A heap entry: pre is the key group in the top 16 bits, then the key's
 * first 6 bytes (zero-padded), so pre's order agrees with node_cmp's on
 * (kg, key) wherever the prefixes differ. */
typedef struct hent {
    int64_t time;
    uint64_t pre;
    tnode *x;
} hent;

struct tnode {
    int64_t time;
    struct tnode *kprev, *knext; /* the key group's list */
    uint32_t hash;
    uint32_t hidx;              /* position in the heap */
    uint32_t klen, nslen;
    uint16_t kg;                /* < KG_LIMIT */
    uint8_t data[];             /* key, then namespace */
};

struct sl_timers {
    hent *heap;      /* min-heap: heap[(i-1)/2] <= heap[i] */
    size_t n, cap;
    tnode **set;     /* hash set; NULL slots are empty */
    size_t set_mask; /* slots - 1 */
    tnode **kg_head; /* per key group: first node of its list */
    int nkg;         /* kg_head's length */
    sl_slab slab;    /* the nodes (task thread only) */
};

#define KG_LIMIT 65536 /* key groups are u16 everywhere in state */

static uint32_t timer_hash(const sl_timer *tm)
{
    uint32_t seed = (uint32_t)tm->time * 0x9e3779b1u ^ (uint32_t)((uint64_t)tm->time >> 32) ^
                    (uint32_t)tm->kg * 0x85ebca6bu;
    uint32_t h = sl_murmur3_32(tm->key, tm->klen, seed);
    return sl_murmur3_32(tm->ns, tm->nslen, h);
}

static int bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return (alen > blen) - (alen < blen);
}

/* Order of two nodes: time, then key group, then key, then namespace. */
static int node_cmp(const tnode *a, const tnode *b)
{
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->kg != b->kg) return a->kg < b->kg ? -1 : 1;
    int c = bytes_cmp(a->data, a->klen, b->data, b->klen);
    if (c) return c;
    return bytes_cmp(a->data + a->klen, a->nslen, b->data + b->klen, b->nslen);
}

static int node_is(const tnode *x, const sl_timer *tm, uint32_t h)
{
    return x->hash == h && x->time == tm->time && x->kg == tm->kg && x->klen == tm->klen &&
           x->nslen == tm->nslen && (!tm->klen || memcmp(x->data, tm->key, tm->klen) == 0) &&
           (!tm->nslen || memcmp(x->data + x->klen, tm->ns, tm->nslen) == 0);
}

static void node_view(const tnode *x, sl_timer *tm)
{
    tm->time = x->time;
    tm->kg = x->kg;
    tm->key = x->data;
    tm->klen = x->klen;
    tm->ns = x->data + x->klen;
    tm->nslen = x->nslen;
}

/* ---- heap --------------------------------------------------------------- */

static hent hent_of(tnode *x)
{
    uint64_t pre = (uint64_t)(uint32_t)x->kg << 48;
    for (uint32_t i = 0; i < 6 && i < x->klen; i++) pre |= (uint64_t)x->data[i] << (40 - 8 * i);
    return (hent){.time = x->time, .pre = pre, .x = x};
}

static int hent_cmp(const hent *a, const hent *b)
{
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->pre != b->pre) return a->pre < b->pre ? -1 : 1;
    return node_cmp(a->x, b->x);
}

static void heap_set(sl_timers *t, size_t i, hent e)
{
    t->heap[i] = e;
    e.x->hidx = (uint32_t)i;
}

static void sift_up(sl_timers *t, size_t i)
{
    hent e = t->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (hent_cmp(&t->heap[p], &e) <= 0) break;
        heap_set(t, i, t->heap[p]);
        i = p;
    }
    heap_set(t, i, e);
}

static void sift_down(sl_timers *t, size_t i)
{
    hent e = t->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= t->n) break;
        if (c + 1 < t->n && hent_cmp(&t->heap[c + 1], &t->heap[c]) < 0) c++;
        if (hent_cmp(&e, &t->heap[c]) <= 0) break;
        heap_set(t, i, t->heap[c]);
        i = c;
    }
    heap_set(t, i, e);
}

static void heap_remove(sl_timers *t, tnode *x)
{
    size_t i = x->hidx;
    t->n--;
    if (i == t->n) return;
    tnode *y = t->heap[t->n].x; /* the last leaf fills the hole, then finds its place */
    heap_set(t, i, t->heap[t->n]);
    sift_down(t, i);
    if (t->heap[i].x == y) sift_up(t, i);
}

/* ---- hash set ----------------------------------------------------------- */

static size_t set_find(const sl_timers *t, const sl_timer *tm, uint32_t h)
{
    for (size_t i = h & t->set_mask;; i = (i + 1) & t->set_mask) {
        if (!t->set[i]) return (size_t)-1;
        if (node_is(t->set[i], tm, h)) return i;
    }
}

static void set_place(tnode **set, size_t mask, tnode *x)
{
    size_t i = x->hash & mask;
    while (set[i]) i = (i + 1) & mask;
    set[i] = x;
}

static void set_insert(sl_timers *t, tnode *x)
{
    if ((t->n + 1) * 10 > (t->set_mask + 1) * 7) {
        size_t nslots = (t->set_mask + 1) * 2;
        tnode **ns = sl_calloc(nslots, sizeof *ns);
        for (size_t i = 0; i <= t->set_mask; i++)
            if (t->set[i]) set_place(ns, nslots - 1, t->set[i]);
        free(t->set);
        t->set = ns;
        t->set_mask = nslots - 1;
    }
    set_place(t->set, t->set_mask, x);
}

static void set_remove(sl_timers *t, size_t i)
{
    size_t j = i, m = t->set_mask;
    for (;;) {
        j = (j + 1) & m;
        if (!t->set[j]) break;
        size_t home = t->set[j]->hash & m;
        if (((j - home) & m) >= ((j - i) & m)) {
            t->set[i] = t->set[j];
            i = j;
        }
    }
    t->set[i] = NULL;
}

/* ---- key-group lists ---------------------------------------------------- */

static void kg_link(sl_timers *t, tnode *x)
{
    if (x->kg >= t->nkg) {
        int n = t->nkg ? t->nkg : 64;
        while (n <= x->kg) n *= 2;
        t->kg_head = sl_realloc(t->kg_head, (size_t)n * sizeof *t->kg_head);
        memset(t->kg_head + t->nkg, 0, (size_t)(n - t->nkg) * sizeof *t->kg_head);
        t->nkg = n;
    }
    x->kprev = NULL;
    x->knext = t->kg_head[x->kg];
    if (x->knext) x->knext->kprev = x;
    t->kg_head[x->kg] = x;
}

static void kg_unlink(sl_timers *t, tnode *x)
{
    if (x->kprev) x->kprev->knext = x->knext;
    else t->kg_head[x->kg] = x->knext;
    if (x->knext) x->knext->kprev = x->kprev;
}

/* ---- node memory -------------------------------------------------------- */

static size_t node_size(size_t klen, size_t nslen)
{
    return (offsetof(tnode, data) + klen + nslen + 7) & ~(size_t)7;
}

static tnode *node_alloc(sl_timers *t, size_t size) { return sl_slab_alloc(&t->slab, size); }

static void node_free(sl_timers *t, tnode *x)
{
    sl_slab_free(&t->slab, x, node_size(x->klen, x->nslen));
}

/* ---- the service -------------------------------------------------------- */

sl_timers *sl_timers_new(void)
{
    sl_timers *t = sl_calloc(1, sizeof *t);
    t->cap = 64;
    t->heap = sl_malloc(t->cap * sizeof *t->heap);
    t->set_mask = 63;
    t->set = sl_calloc(t->set_mask + 1, sizeof *t->set);
    sl_slab_init(&t->slab);
    return t;
}

void sl_timers_destroy(sl_timers *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++)
        if (node_size(t->heap[i].x->klen, t->heap[i].x->nslen) > SL_SLAB_MAX) free(t->heap[i].x);
    sl_slab_release(&t->slab);
    free(t->heap);
    free(t->set);
    free(t->kg_head);
    free(t);
}

/* Link an unlinked node into all three structures. */
static void node_link(sl_timers *t, tnode *x)
{
    set_insert(t, x); /* sizes by t->n, so before the heap grows */
    if (t->n == t->cap) {
        SL_ASSERT(t->cap < UINT32_MAX / 2); /* hidx is a u32 */
        t->cap *= 2;
        t->heap = sl_realloc(t->heap, t->cap * sizeof *t->heap);
    }
    heap_set(t, t->n++, hent_of(x));
    sift_up(t, t->n - 1);
    kg_link(t, x);
}

/* Unlink node x (found at set slot si) from all three; the node survives. */
static void node_unlink(sl_timers *t, tnode *x, size_t si)
{
    set_remove(t, si);
    heap_remove(t, x);
    kg_unlink(t, x);
}

void sl_timers_add(sl_timers *t, const sl_timer *tm)
{
    SL_ASSERT(tm->kg >= 0 && tm->kg < KG_LIMIT);
    uint32_t h = timer_hash(tm);
    if (set_find(t, tm, h) != (size_t)-1) return;
    SL_ASSERT(tm->klen <= UINT32_MAX && tm->nslen <= UINT32_MAX);
    tnode *x = node_alloc(t, node_size(tm->klen, tm->nslen));
    x->time = tm->time;
    x->kg = (uint16_t)tm->kg;
    x->klen = (uint32_t)tm->klen;
    x->nslen = (uint32_t)tm->nslen;
    x->hash = h;
    if (tm->klen) memcpy(x->data, tm->key, tm->klen);
    if (tm->nslen) memcpy(x->data + tm->klen, tm->ns, tm->nslen);
    node_link(t, x);
}

void sl_timers_del(sl_timers *t, const sl_timer *tm)
{
    uint32_t h = timer_hash(tm);
    size_t si = set_find(t, tm, h);
    if (si == (size_t)-1) return;
    tnode *x = t->set[si];
    node_unlink(t, x, si);
    node_free(t, x);
}

int64_t sl_timers_next(const sl_timers *t) { return t->n ? t->heap[0].time : INT64_MAX; }

size_t sl_timers_count(const sl_timers *t) { return t->n; }

int sl_timers_fire(sl_timers *t, int64_t bound, int (*fn)(void *ctx, const sl_timer *tm),
                   void *ctx)
{
    while (t->n && t->heap[0].time <= bound) {
        tnode *x = t->heap[0].x;
        sl_timer tm;
        node_view(x, &tm);
        node_unlink(t, x, set_find(t, &tm, x->hash));
        int rc = fn(ctx, &tm);
        if (rc == SL_OK) {
            node_free(t, x);
            continue;
        }
        /* not handled: the timer stays, unless the callback re-added it */
        if (set_find(t, &tm, x->hash) == (size_t)-1) node_link(t, x);
        else node_free(t, x);
        return rc;
    }
    return SL_OK;
}

void sl_timers_each(const sl_timers *t, int kg, void (*fn)(void *ctx, const sl_timer *tm),
                    void *ctx)
{
    if (kg < 0 || kg >= t->nkg) return;
    for (const tnode *x = t->kg_head[kg]; x; x = x->knext) {
        sl_timer tm;
        node_view(x, &tm);
        fn(ctx, &tm);
    }
}
