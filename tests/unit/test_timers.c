/*
 * test_timers.c -- the timer service: firing order, de-duplication,
 * deletion, callbacks that register timers while firing, stopping on a
 * non-OK return, and per-key-group enumeration.
 *
 * The randomized cases keep a plain array as the model and sort it with a
 * comparator written here ((time, kg, key, ns), bytes compared with the
 * shorter first on a common prefix), so every expectation is computed
 * independently of the heap and hash set under test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl_test.h"
#include "timers.h"

typedef struct {
    int64_t time;
    int kg;
    uint8_t key[4];
    size_t klen;
    uint8_t ns[3];
    size_t nslen;
} mtimer;

static sl_timer view(const mtimer *m)
{
    sl_timer t = {m->time, m->kg, m->key, m->klen, m->ns, m->nslen};
    return t;
}

static int bytes_order(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    for (size_t i = 0; i < al && i < bl; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return al == bl ? 0 : al < bl ? -1 : 1;
}

static int mt_cmp(const void *pa, const void *pb)
{
    const mtimer *a = pa, *b = pb;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->kg != b->kg) return a->kg < b->kg ? -1 : 1;
    int c = bytes_order(a->key, a->klen, b->key, b->klen);
    return c ? c : bytes_order(a->ns, a->nslen, b->ns, b->nslen);
}

static int same(const mtimer *a, const sl_timer *t)
{
    return a->time == t->time && a->kg == t->kg && a->klen == t->klen && a->nslen == t->nslen &&
           memcmp(a->key, t->key, t->klen) == 0 && memcmp(a->ns, t->ns, t->nslen) == 0;
}

static uint32_t rng = 2463534242u;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static mtimer random_timer(void)
{
    mtimer m = {0};
    m.time = (int64_t)(next_rand() % 50) - 10; /* ties and negatives */
    m.kg = (int)(next_rand() % 6);
    m.klen = next_rand() % 4;
    for (size_t i = 0; i < m.klen; i++) m.key[i] = (uint8_t)"a\x00\xffz"[next_rand() % 4];
    m.nslen = next_rand() % 3;
    for (size_t i = 0; i < m.nslen; i++) m.ns[i] = (uint8_t)"\x01\xfe"[next_rand() % 2];
    return m;
}

/* A model of distinct timers. */
typedef struct {
    mtimer *v;
    size_t n, cap;
} model;

static int model_find(const model *m, const mtimer *t)
{
    for (size_t i = 0; i < m->n; i++)
        if (mt_cmp(&m->v[i], t) == 0) return (int)i;
    return -1;
}

static void model_add(model *m, const mtimer *t)
{
    if (model_find(m, t) >= 0) return;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
    }
    m->v[m->n++] = *t;
}

static void model_del(model *m, const mtimer *t)
{
    int i = model_find(m, t);
    if (i >= 0) m->v[i] = m->v[--m->n];
}

/* Records what fired. */
typedef struct {
    mtimer got[20000];
    size_t n;
} fired;

static int record_cb(void *ctx, const sl_timer *t)
{
    fired *f = ctx;
    mtimer *m = &f->got[f->n++];
    memset(m, 0, sizeof *m);
    m->time = t->time;
    m->kg = t->kg;
    m->klen = t->klen;
    memcpy(m->key, t->key, t->klen);
    m->nslen = t->nslen;
    memcpy(m->ns, t->ns, t->nslen);
    return SL_OK;
}

static fired F; /* large: keep it off the stack */

/* ---- cases -------------------------------------------------------------- */

static void test_empty(void)
{
    sl_timers *t = sl_timers_new();
    CHECK_EQ_INT(sl_timers_count(t), 0);
    CHECK(sl_timers_next(t) == INT64_MAX);
    F.n = 0;
    CHECK_EQ_INT(sl_timers_fire(t, INT64_MAX, record_cb, &F), SL_OK);
    CHECK_EQ_INT(F.n, 0);
    mtimer m = {.time = 5};
    sl_timer v = view(&m);
    sl_timers_del(t, &v); /* absent: nothing happens */
    sl_timers_destroy(t);
    sl_timers_destroy(NULL);
}

static void test_order(void)
{
    sl_timers *t = sl_timers_new();
    model m = {0};
    for (int i = 0; i < 3000; i++) {
        mtimer x = random_timer();
        sl_timer v = view(&x);
        sl_timers_add(t, &v);
        model_add(&m, &x);
    }
    CHECK(m.n < 3000); /* the generator does produce duplicates */
    CHECK_EQ_INT(sl_timers_count(t), m.n);
    qsort(m.v, m.n, sizeof *m.v, mt_cmp);
    CHECK_EQ_INT(sl_timers_next(t), m.v[0].time);
    F.n = 0;
    CHECK_EQ_INT(sl_timers_fire(t, INT64_MAX, record_cb, &F), SL_OK);
    CHECK_EQ_INT(F.n, m.n);
    for (size_t i = 0; i < m.n; i++) CHECK(mt_cmp(&F.got[i], &m.v[i]) == 0);
    CHECK_EQ_INT(sl_timers_count(t), 0);
    free(m.v);
    sl_timers_destroy(t);
}

static void test_duplicates(void)
{
    sl_timers *t = sl_timers_new();
    mtimer a = {.time = 100, .kg = 3, .key = "k", .klen = 1, .ns = "w", .nslen = 1};
    mtimer b = a;
    b.ns[0] = 'x'; /* another namespace: another timer */
    mtimer c = a;
    c.kg = 4;
    sl_timer va = view(&a), vb = view(&b), vc = view(&c);
    sl_timers_add(t, &va);
    sl_timers_add(t, &va);
    mtimer copy = a; /* equal bytes at another address are the same timer */
    sl_timer vcopy = view(&copy);
    sl_timers_add(t, &vcopy);
    CHECK_EQ_INT(sl_timers_count(t), 1);
    sl_timers_add(t, &vb);
    sl_timers_add(t, &vc);
    sl_timers_add(t, &vb);
    CHECK_EQ_INT(sl_timers_count(t), 3);
    F.n = 0;
    CHECK_EQ_INT(sl_timers_fire(t, 100, record_cb, &F), SL_OK);
    CHECK_EQ_INT(F.n, 3);
    CHECK(mt_cmp(&F.got[0], &a) == 0);
    CHECK(mt_cmp(&F.got[1], &b) == 0);
    CHECK(mt_cmp(&F.got[2], &c) == 0);
    /* after firing, the same timer can be registered again */
    sl_timers_add(t, &va);
    CHECK_EQ_INT(sl_timers_count(t), 1);
    sl_timers_destroy(t);
}

static void test_delete(void)
{
    sl_timers *t = sl_timers_new();
    model m = {0};
    /* random adds and deletes, checked against the model throughout */
    for (int i = 0; i < 20000; i++) {
        mtimer x = random_timer();
        sl_timer v = view(&x);
        if (next_rand() % 3 == 0) {
            sl_timers_del(t, &v);
            model_del(&m, &x);
        } else {
            sl_timers_add(t, &v);
            model_add(&m, &x);
        }
        if (i % 1000 == 0) CHECK_EQ_INT(sl_timers_count(t), m.n);
    }
    CHECK_EQ_INT(sl_timers_count(t), m.n);
    qsort(m.v, m.n, sizeof *m.v, mt_cmp);
    /* delete the earliest and the latest explicitly */
    sl_timer first = view(&m.v[0]), last = view(&m.v[m.n - 1]);
    sl_timers_del(t, &first);
    sl_timers_del(t, &last);
    CHECK_EQ_INT(sl_timers_count(t), m.n - 2);
    CHECK_EQ_INT(sl_timers_next(t), m.v[1].time);
    F.n = 0;
    CHECK_EQ_INT(sl_timers_fire(t, INT64_MAX, record_cb, &F), SL_OK);
    CHECK_EQ_INT(F.n, m.n - 2);
    for (size_t i = 0; i < F.n; i++) CHECK(mt_cmp(&F.got[i], &m.v[i + 1]) == 0);
    free(m.v);
    sl_timers_destroy(t);
}

/* Fires, and registers more timers from inside the callback. */
typedef struct {
    sl_timers *t;
    int64_t times[16];
    int n;
} rereg_ctx;

static int rereg_cb(void *vctx, const sl_timer *tm)
{
    rereg_ctx *c = vctx;
    c->times[c->n++] = tm->time;
    sl_timer more = *tm;
    if (tm->time == 10) { /* due in this pass: fires before 20 */
        more.time = 15;
        sl_timers_add(c->t, &more);
    } else if (tm->time == 20) {
        more.time = 22; /* due */
        sl_timers_add(c->t, &more);
        more.time = 100; /* not due */
        sl_timers_add(c->t, &more);
        more.time = 30; /* already registered: ignored */
        sl_timers_add(c->t, &more);
    }
    return SL_OK;
}

static void test_fire_reregister(void)
{
    sl_timers *t = sl_timers_new();
    for (int64_t tm = 10; tm <= 40; tm += 10) {
        sl_timer v = {tm, 1, "key", 3, "", 0};
        sl_timers_add(t, &v);
    }
    rereg_ctx c = {.t = t};
    CHECK_EQ_INT(sl_timers_fire(t, 25, rereg_cb, &c), SL_OK);
    CHECK_EQ_INT(c.n, 4);
    CHECK_EQ_INT(c.times[0], 10);
    CHECK_EQ_INT(c.times[1], 15);
    CHECK_EQ_INT(c.times[2], 20);
    CHECK_EQ_INT(c.times[3], 22);
    CHECK_EQ_INT(sl_timers_count(t), 3);
    CHECK_EQ_INT(sl_timers_next(t), 30);
    c.n = 0;
    CHECK_EQ_INT(sl_timers_fire(t, INT64_MAX, rereg_cb, &c), SL_OK);
    CHECK_EQ_INT(c.n, 3);
    CHECK_EQ_INT(c.times[0], 30);
    CHECK_EQ_INT(c.times[1], 40);
    CHECK_EQ_INT(c.times[2], 100);
    CHECK_EQ_INT(sl_timers_count(t), 0);
    sl_timers_destroy(t);
}

/* Handles two timers, then reports backpressure; can re-add itself first. */
typedef struct {
    sl_timers *t;
    int calls, ok_budget, readd;
    int64_t last;
} stop_ctx;

static int stop_cb(void *vctx, const sl_timer *tm)
{
    stop_ctx *c = vctx;
    c->calls++;
    c->last = tm->time;
    if (c->ok_budget-- > 0) return SL_OK;
    if (c->readd) sl_timers_add(c->t, tm);
    return SL_AGAIN;
}

static void test_fire_stop(void)
{
    sl_timers *t = sl_timers_new();
    for (int64_t tm = 1; tm <= 5; tm++) {
        sl_timer v = {tm, 0, "k", 1, "", 0};
        sl_timers_add(t, &v);
    }
    stop_ctx c = {.t = t, .ok_budget = 2};
    CHECK_EQ_INT(sl_timers_fire(t, 10, stop_cb, &c), SL_AGAIN);
    CHECK_EQ_INT(c.calls, 3);
    CHECK_EQ_INT(c.last, 3);
    /* timer 3 was not handled: it is still there, 1 and 2 are gone */
    CHECK_EQ_INT(sl_timers_count(t), 3);
    CHECK_EQ_INT(sl_timers_next(t), 3);
    /* a callback that re-adds the timer before failing leaves one copy */
    c = (stop_ctx){.t = t, .ok_budget = 0, .readd = 1};
    CHECK_EQ_INT(sl_timers_fire(t, 10, stop_cb, &c), SL_AGAIN);
    CHECK_EQ_INT(sl_timers_count(t), 3);
    c = (stop_ctx){.t = t, .ok_budget = 100};
    CHECK_EQ_INT(sl_timers_fire(t, 10, stop_cb, &c), SL_OK);
    CHECK_EQ_INT(c.calls, 3);
    CHECK_EQ_INT(sl_timers_count(t), 0);
    sl_timers_destroy(t);
}

typedef struct {
    mtimer got[5000];
    size_t n;
} each_ctx;

static void each_cb(void *vctx, const sl_timer *tm)
{
    each_ctx *c = vctx;
    record_cb(&F, tm); /* F doubles as scratch for the conversion */
    c->got[c->n++] = F.got[--F.n];
}

static each_ctx E;

static void test_each_by_kg(void)
{
    sl_timers *t = sl_timers_new();
    model m = {0};
    for (int i = 0; i < 4000; i++) {
        mtimer x = random_timer();
        x.kg = (int)(next_rand() % 6) * 50; /* key groups 0, 50, ..., 250 */
        sl_timer v = view(&x);
        sl_timers_add(t, &v);
        model_add(&m, &x);
        if (i % 4 == 0) { /* and some deletions */
            mtimer y = m.v[next_rand() % m.n];
            sl_timer vy = view(&y);
            sl_timers_del(t, &vy);
            model_del(&m, &y);
        }
    }
    /* fire part of them, then enumerate what is left */
    F.n = 0;
    CHECK_EQ_INT(sl_timers_fire(t, 5, record_cb, &F), SL_OK);
    for (size_t i = 0; i < F.n; i++) model_del(&m, &F.got[i]);
    CHECK_EQ_INT(sl_timers_count(t), m.n);
    size_t total = 0;
    for (int kg = 0; kg <= 300; kg++) {
        E.n = 0;
        F.n = 0;
        sl_timers_each(t, kg, each_cb, &E);
        size_t want = 0;
        for (size_t i = 0; i < m.n; i++) want += m.v[i].kg == kg;
        CHECK_EQ_INT(E.n, want);
        for (size_t i = 0; i < E.n; i++) {
            CHECK_EQ_INT(E.got[i].kg, kg);
            CHECK(model_find(&m, &E.got[i]) >= 0);
            for (size_t j = 0; j < i; j++) CHECK(mt_cmp(&E.got[i], &E.got[j]) != 0);
        }
        total += E.n;
    }
    CHECK_EQ_INT(total, m.n);
    E.n = 0;
    sl_timers_each(t, 100000, each_cb, &E);
    sl_timers_each(t, -1, each_cb, &E);
    CHECK_EQ_INT(E.n, 0);
    free(m.v);
    sl_timers_destroy(t);
}

/* Deletes one timer and adds many (so the heap and set grow) while
 * handling another, then checks its own view is intact. */
typedef struct {
    sl_timers *t;
    int ok;
} churn_ctx;

static int churn_cb(void *vctx, const sl_timer *tm)
{
    churn_ctx *c = vctx;
    sl_timer b = {2, 0, "b", 1, "", 0};
    sl_timers_del(c->t, &b);
    for (int i = 0; i < 500; i++) {
        sl_timer x = {1000 + i, i % 7, "xyz", 3, &i, sizeof i};
        sl_timers_add(c->t, &x);
    }
    mtimer want = {.time = 1, .kg = 0, .key = "a", .klen = 1, .ns = "n", .nslen = 1};
    c->ok = same(&want, tm);
    return SL_OK;
}

static void test_borrowed_view(void)
{
    sl_timers *t = sl_timers_new();
    sl_timer a = {1, 0, "a", 1, "n", 1};
    sl_timer b = {2, 0, "b", 1, "", 0};
    sl_timers_add(t, &a);
    sl_timers_add(t, &b);
    churn_ctx c = {.t = t};
    CHECK_EQ_INT(sl_timers_fire(t, 2, churn_cb, &c), SL_OK);
    CHECK(c.ok);
    CHECK_EQ_INT(sl_timers_count(t), 500); /* b was deleted before it was due */
    CHECK_EQ_INT(sl_timers_next(t), 1000);
    sl_timers_destroy(t);
}

/* Keys longer than the heap's inline prefix (kg in 16 bits, 6 key bytes):
 * long shared prefixes, zero bytes at the prefix's edge, the largest key
 * groups, so most order decisions fall past the prefix. Fired order must
 * be the model's sorted order of the distinct timers left after deletes. */
typedef struct {
    int64_t time;
    int kg;
    uint8_t key[12];
    size_t klen;
    uint8_t ns[2];
    size_t nslen;
} ltimer;

static int lt_cmp(const void *pa, const void *pb)
{
    const ltimer *a = pa, *b = pb;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->kg != b->kg) return a->kg < b->kg ? -1 : 1;
    int c = bytes_order(a->key, a->klen, b->key, b->klen);
    return c ? c : bytes_order(a->ns, a->nslen, b->ns, b->nslen);
}

static ltimer long_timer(void)
{
    static const int kgs[] = {0, 1, 255, 256, 65535};
    ltimer m = {0};
    m.time = (int64_t)(next_rand() % 4);
    m.kg = kgs[next_rand() % 5];
    m.klen = next_rand() % 13;
    for (size_t i = 0; i < m.klen; i++)
        m.key[i] = i < 6 && next_rand() % 4 ? (uint8_t)"\x01\x00\x00\x00\x00\x00"[i]
                                            : (uint8_t)"\x00\x01\xff"[next_rand() % 3];
    m.nslen = next_rand() % 3;
    for (size_t i = 0; i < m.nslen; i++) m.ns[i] = (uint8_t)(next_rand() % 2);
    return m;
}

static ltimer lgot[6000];
static size_t nlgot;

static int long_cb(void *ctx, const sl_timer *tm)
{
    (void)ctx;
    ltimer *g = &lgot[nlgot++];
    memset(g, 0, sizeof *g);
    g->time = tm->time;
    g->kg = tm->kg;
    g->klen = tm->klen;
    memcpy(g->key, tm->key, tm->klen);
    g->nslen = tm->nslen;
    memcpy(g->ns, tm->ns, tm->nslen);
    return SL_OK;
}

static void test_order_long_keys(void)
{
    sl_timers *t = sl_timers_new();
    static ltimer all[6000];
    for (int i = 0; i < 6000; i++) {
        all[i] = long_timer();
        sl_timer v = {all[i].time, all[i].kg, all[i].key, all[i].klen, all[i].ns, all[i].nslen};
        sl_timers_add(t, &v);
        if (i % 7 == 6) { /* delete an earlier one (maybe already deleted) */
            ltimer d = all[next_rand() % (uint32_t)i]; /* a copy: the marks change all[] */
            if (d.time == INT64_MIN) continue;        /* deleted already */
            sl_timer dv = {d.time, d.kg, d.key, d.klen, d.ns, d.nslen};
            sl_timers_del(t, &dv);
            for (int j = 0; j <= i; j++) /* every registration of it is gone */
                if (all[j].time != INT64_MIN && lt_cmp(&all[j], &d) == 0) all[j].time = INT64_MIN;
        }
    }
    /* the model: what survives, sorted, duplicates once */
    ltimer *m = sl_malloc(6000 * sizeof *m);
    size_t n = 0;
    for (int i = 0; i < 6000; i++)
        if (all[i].time != INT64_MIN) m[n++] = all[i];
    qsort(m, n, sizeof *m, lt_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || lt_cmp(&m[u - 1], &m[i]) != 0) m[u++] = m[i];
    CHECK(u > 1000 && u < 6000);
    CHECK_EQ_INT(sl_timers_count(t), u);
    nlgot = 0;
    CHECK_EQ_INT(sl_timers_fire(t, INT64_MAX, long_cb, NULL), SL_OK);
    CHECK_EQ_INT(nlgot, u);
    size_t bad = 0;
    for (size_t i = 0; i < u && i < nlgot; i++) bad += lt_cmp(&lgot[i], &m[i]) != 0;
    CHECK_EQ_INT(bad, 0);
    free(m);
    sl_timers_destroy(t);
}

/* Timers of many sizes (keys of 0 to 300 bytes: nodes from every slab size
 * and above it, which are malloc'd), in rounds of adds, deletes and partial
 * firings, so freed nodes are reused by later timers of the same size: what
 * fires, in order, and what each key group lists are the model's, and every
 * key and namespace byte survives. The key's bytes are derived from its id
 * and length, so a node handed out twice would show. */
typedef struct {
    int64_t time;
    int kg, id;
    size_t klen, nslen;
} stimer;

static void st_key(const stimer *m, uint8_t *key, uint8_t *ns)
{
    for (size_t i = 0; i < m->klen; i++) key[i] = (uint8_t)(m->id * 7 + (int)i * 13);
    for (size_t i = 0; i < m->nslen; i++) ns[i] = (uint8_t)(m->id + (int)i);
}

static int st_cmp(const void *pa, const void *pb)
{
    const stimer *a = pa, *b = pb;
    uint8_t ka[300], na[8], kb[300], nb[8];
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->kg != b->kg) return a->kg < b->kg ? -1 : 1;
    st_key(a, ka, na);
    st_key(b, kb, nb);
    int c = bytes_order(ka, a->klen, kb, b->klen);
    return c ? c : bytes_order(na, a->nslen, nb, b->nslen);
}

typedef struct {
    stimer live[4096];
    int n;
    int bad;
    int fired;
    stimer *want; /* the expected firing order */
} st_ctx;

static int st_check(const stimer *m, const sl_timer *t)
{
    uint8_t k[300], n[8];
    st_key(m, k, n);
    return m->time == t->time && m->kg == t->kg && m->klen == t->klen && m->nslen == t->nslen &&
           memcmp(k, t->key, t->klen) == 0 && memcmp(n, t->ns, t->nslen) == 0;
}

static int st_fire_cb(void *vctx, const sl_timer *t)
{
    st_ctx *c = vctx;
    c->bad += !st_check(&c->want[c->fired++], t);
    return SL_OK;
}

static void st_each_cb(void *vctx, const sl_timer *t)
{
    st_ctx *c = vctx;
    int found = 0;
    for (int i = 0; i < c->n && !found; i++) found = st_check(&c->live[i], t);
    c->bad += !found;
    c->fired++;
}

static void test_node_sizes(void)
{
    static st_ctx c;
    static stimer sorted[4096];
    memset(&c, 0, sizeof c);
    sl_timers *t = sl_timers_new();
    int next_id = 0;
    int64_t now = 0;
    for (int round = 0; round < 30; round++) {
        for (int i = 0; i < 120 && c.n < 4000; i++) { /* adds, all distinct (ids) */
            stimer m = {now + 1 + (int64_t)(next_rand() % 100), (int)(next_rand() % 8), next_id++,
                        next_rand() % 4 ? next_rand() % 40 : next_rand() % 301, next_rand() % 8};
            uint8_t k[300], n[8];
            st_key(&m, k, n);
            sl_timer v = {m.time, m.kg, k, m.klen, n, m.nslen};
            sl_timers_add(t, &v);
            c.live[c.n++] = m;
        }
        for (int i = 0; i < 30 && c.n; i++) { /* deletes of random live ones */
            int j = (int)(next_rand() % (unsigned)c.n);
            uint8_t k[300], n[8];
            st_key(&c.live[j], k, n);
            sl_timer v = {c.live[j].time, c.live[j].kg, k, c.live[j].klen, n, c.live[j].nslen};
            sl_timers_del(t, &v);
            c.live[j] = c.live[--c.n];
        }
        CHECK_EQ_INT(sl_timers_count(t), c.n);
        /* each key group lists exactly its live timers */
        c.fired = 0;
        for (int kg = 0; kg < 8; kg++) sl_timers_each(t, kg, st_each_cb, &c);
        CHECK_EQ_INT(c.fired, c.n);
        /* fire what is due by now + 40, in the model's order */
        now += 40;
        int due = 0;
        for (int i = 0; i < c.n; i++)
            if (c.live[i].time <= now) sorted[due++] = c.live[i];
        qsort(sorted, (size_t)due, sizeof *sorted, st_cmp);
        c.want = sorted;
        c.fired = 0;
        CHECK_EQ_INT(sl_timers_fire(t, now, st_fire_cb, &c), SL_OK);
        CHECK_EQ_INT(c.fired, due);
        for (int i = 0; i < c.n;) /* the fired ones leave the model */
            if (c.live[i].time <= now) c.live[i] = c.live[--c.n];
            else i++;
    }
    CHECK_EQ_INT(c.bad, 0);
    CHECK(next_id > 3000);
    sl_timers_destroy(t); /* with timers left, small and large */
}

SL_TEST_MAIN(SL_TEST(test_empty), SL_TEST(test_order), SL_TEST(test_order_long_keys), SL_TEST(test_duplicates),
             SL_TEST(test_delete), SL_TEST(test_fire_reregister), SL_TEST(test_fire_stop),
             SL_TEST(test_each_by_kg), SL_TEST(test_borrowed_view), SL_TEST(test_node_sizes))
