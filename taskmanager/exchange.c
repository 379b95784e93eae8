/*
 * exchange.c -- see exchange.h: gates, writers, readers, channel wiring and
 * credit bookkeeping. The transport (net.c) only moves frames; deployment
 * (deploy.c) only builds and tears down; this file decides where every
 * buffer goes and when it may.
 *
 * Elements inside a buffer: u8 tag, u32 length (little endian), payload.
 * A record that does not fit in an empty buffer is a spanning record:
 * SPAN_FIRST (u32 total, first bytes) fills the rest of one buffer and
 * SPAN_MORE elements continue it in the next buffers of that subpartition,
 * so its parts are consecutive on the channel; the last part may share its
 * buffer with the elements that follow.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <event2/event.h>

#include "tm.h"
#include "log.h"
#include "keygroup.h"
#include "bytes.h"

#define TAG "tm:exchange"

/* ---- gates and mail ----------------------------------------------------- */

void tm_gate_init(tm_gate *g, int nchan)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->nchan = nchan;
    g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/* Wake a task that polls descriptors (a source waiting on I/O). */
static void gate_kick(tm_gate *g)
{
    uint64_t one = 1;
    if (g->efd >= 0 && write(g->efd, &one, sizeof one) < 0 && errno != EAGAIN)
        sl_warn(TAG, "waking a task: %s", strerror(errno));
}

void tm_gate_push(tm_gate *g, sl_netbuf *b)
{
    b->next = NULL;
    pthread_mutex_lock(&g->mu);
    if (g->closed) {
        pthread_mutex_unlock(&g->mu);
        sl_buf_recycle(b);
        return;
    }
    if (g->tail) g->tail->next = b;
    else g->head = b;
    g->tail = b;
    g->queued++;
    g->pushed++;
    int kick = g->polling;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    if (kick) gate_kick(g);
}

void tm_gate_push_priority(tm_gate *g, sl_netbuf *b)
{
    b->next = NULL;
    pthread_mutex_lock(&g->mu);
    if (g->closed) {
        pthread_mutex_unlock(&g->mu);
        sl_buf_recycle(b);
        return;
    }
    sl_netbuf **at = &g->head, *last = NULL;
    while (*at && (*at)->prio) {
        last = *at;
        at = &(*at)->next;
    }
    int n = 0;
    for (sl_netbuf *x = *at; x; x = x->next) n += x->chan == b->chan;
    b->overtaken = n;
    b->next = *at;
    *at = b;
    if (!b->next) g->tail = b;
    SL_UNUSED(last);
    g->queued++;
    g->pushed++;
    int kick = g->polling;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    if (kick) gate_kick(g);
}

sl_netbuf *tm_gate_take_priority(tm_gate *g)
{
    pthread_mutex_lock(&g->mu);
    sl_netbuf *b = NULL;
    if (!g->closed && g->head && g->head->prio) {
        b = g->head;
        g->head = b->next;
        if (!g->head) g->tail = NULL;
        g->queued--;
    }
    pthread_mutex_unlock(&g->mu);
    return b;
}

int tm_gate_each_queued(tm_gate *g, int chan, int n, int (*fn)(void *ctx, const sl_netbuf *b), void *ctx)
{
    int rc = SL_OK, done = 0;
    pthread_mutex_lock(&g->mu);
    for (sl_netbuf *x = g->head; x && done < n && rc == SL_OK; x = x->next)
        if (!x->prio && x->chan == chan) {
            rc = fn(ctx, x);
            done++;
        }
    pthread_mutex_unlock(&g->mu);
    return rc == SL_OK && done < n ? SL_ERR : rc;
}

/* The oldest buffer, under g->mu; NULL when none or closed. */
static sl_netbuf *gate_pop_locked(tm_gate *g)
{
    sl_netbuf *b = NULL;
    if (!g->closed && g->head) {
        b = g->head;
        g->head = b->next;
        if (!g->head) g->tail = NULL;
        g->queued--;
    }
    return b;
}

sl_netbuf *tm_gate_take(tm_gate *g, int64_t deadline_ns)
{
    pthread_mutex_lock(&g->mu);
    while (!g->head && !g->closed && !g->mail_head) {
        struct timespec ts;
        int64_t now = sl_mono_ns();
        if (now >= deadline_ns) break;
        /* condition variables here wait on CLOCK_REALTIME: convert */
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t wake = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (deadline_ns - now);
        ts.tv_sec = wake / 1000000000;
        ts.tv_nsec = wake % 1000000000;
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
    }
    sl_netbuf *b = gate_pop_locked(g);
    pthread_mutex_unlock(&g->mu);
    return b;
}

sl_netbuf *tm_gate_take_poll(tm_gate *g, int64_t deadline_ns, struct pollfd *fds, int nfds)
{
    pthread_mutex_lock(&g->mu);
    sl_netbuf *b = gate_pop_locked(g);
    int wait = !b && !g->closed && !g->mail_head;
    /* set under the lock: a push after this point writes efd */
    if (wait) g->polling = 1;
    pthread_mutex_unlock(&g->mu);
    if (!wait) return b;
    struct pollfd pf[SL_MAX_WATCH_FDS * 4 + 1];
    int n = 0;
    pf[n++] = (struct pollfd){.fd = g->efd, .events = POLLIN};
    for (int i = 0; i < nfds && n < (int)SL_ARRAY_LEN(pf); i++) pf[n++] = fds[i];
    int64_t now = sl_mono_ns();
    int ms = deadline_ns <= now ? 0 : (int)SL_MIN((deadline_ns - now) / 1000000 + 1, 1000);
    if (poll(pf, (nfds_t)n, ms) > 0 && (pf[0].revents & POLLIN)) {
        uint64_t x;
        if (read(g->efd, &x, sizeof x) < 0 && errno != EAGAIN)
            sl_warn(TAG, "task wake-up: %s", strerror(errno));
    }
    for (int i = 1; i < n; i++) fds[i - 1].revents = pf[i].revents;
    pthread_mutex_lock(&g->mu);
    g->polling = 0;
    b = gate_pop_locked(g);
    pthread_mutex_unlock(&g->mu);
    return b;
}

sl_netbuf *tm_gate_take_nowait(tm_gate *g)
{
    pthread_mutex_lock(&g->mu);
    sl_netbuf *b = gate_pop_locked(g);
    pthread_mutex_unlock(&g->mu);
    return b;
}

void tm_mail_free(tm_mail *m)
{
    while (m) {
        tm_mail *next = m->next;
        free(m->dir);
        free(m);
        m = next;
    }
}

void tm_task_mail(tm_task *t, tm_mail *m)
{
    tm_gate *g = &t->gate;
    m->next = NULL;
    pthread_mutex_lock(&g->mu);
    if (g->closed) {
        pthread_mutex_unlock(&g->mu);
        tm_mail_free(m);
        return;
    }
    if (g->mail_tail) g->mail_tail->next = m;
    else g->mail_head = m;
    g->mail_tail = m;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    gate_kick(g);
}

tm_mail *tm_gate_take_mail(tm_gate *g)
{
    pthread_mutex_lock(&g->mu);
    tm_mail *m = g->mail_head;
    g->mail_head = g->mail_tail = NULL;
    pthread_mutex_unlock(&g->mu);
    return m;
}

void tm_gate_close(tm_gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->closed = 1;
    sl_netbuf *b = g->head;
    g->head = g->tail = NULL;
    g->queued = 0;
    tm_mail *m = g->mail_head;
    g->mail_head = g->mail_tail = NULL;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    gate_kick(g);
    tm_mail_free(m);
    while (b) {
        sl_netbuf *next = b->next;
        sl_buf_recycle(b);
        b = next;
    }
}

void tm_gate_destroy(tm_gate *g)
{
    tm_gate_close(g);
    if (g->efd >= 0) close(g->efd);
    g->efd = -1;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

void tm_task_wake(tm_task *t)
{
    pthread_mutex_lock(&t->gate.mu);
    pthread_cond_broadcast(&t->gate.cv);
    pthread_mutex_unlock(&t->gate.mu);
}

/* ---- building a task's outputs ------------------------------------------ */

int tm_reader_init(tm_reader *rd, int nchan)
{
    rd->nchan = nchan;
    rd->chan = sl_calloc((size_t)(nchan ? nchan : 1), sizeof(tm_span_in));
    return SL_OK;
}

void tm_reader_free(tm_reader *rd)
{
    for (int c = 0; c < rd->nchan && rd->chan; c++) free(rd->chan[c].buf);
    free(rd->chan);
    rd->chan = NULL;
    rd->nchan = 0;
}

int tm_exchange_build_task(tm_task *t, char *err, size_t errlen)
{
    tm_deploy *d = t->d;
    const sl_jobgraph *g = d->g;
    const sl_chain *ch = &g->chains[t->chain];
    const sl_vertex *tail = &g->v[ch->vertices[ch->n - 1]];
    t->nwriters = tail->nout;
    t->writers = sl_calloc((size_t)(tail->nout ? tail->nout : 1), sizeof(tm_writer));
    memset(&t->ws, 0, sizeof t->ws);
    t->ws.t = t;
    t->ws.vertex = tail->name;
    t->ws.debloat = d->debloat;
    /* latency markers' random channel: any well-mixed seed will do */
    t->ws.rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)t->chain << 32) ^ (uint64_t)(t->subtask + 1) ^
                (uint64_t)sl_mono_ns();
    int nsubs = 0;
    for (int w = 0; w < tail->nout; w++) {
        tm_writer *wr = &t->writers[w];
        wr->e = &g->e[tail->out_edges[w]];
        wr->schema = sl_edge_schema(g, wr->e);
        wr->output = wr->e->output;
        wr->nsub = g->v[wr->e->to].parallelism;
        wr->chans = sl_calloc((size_t)wr->nsub, sizeof(tm_outchan *));
        wr->cur = sl_calloc((size_t)wr->nsub, sizeof(sl_netbuf *));
        wr->rr = t->subtask % wr->nsub;
        wr->max_parallelism = g->max_parallelism;
        nsubs += wr->e->strategy == SL_PART_FORWARD ? 1 : wr->nsub;
        if (wr->e->strategy == SL_PART_HASH && !t->ws.keybuf) t->ws.keybuf = sl_malloc(SL_MAX_KEY_BYTES);
    }
    if (tail->nout) {
        /* enough for every subpartition to fill one buffer while another is
         * in flight, plus a few spare: the bound on what a task can have
         * outstanding */
        t->out_pool = sl_pool_new(2 * nsubs + 8, d->seg_size);
    }
    tm_reader_init(&t->rd, t->ngate_chan);
    SL_UNUSED(err);
    SL_UNUSED(errlen);
    return SL_OK;
}

static void task_outputs_free(tm_task *t)
{
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++)
            if (wr->cur[k]) sl_buf_recycle(wr->cur[k]);
        free(wr->chans);
        free(wr->cur);
    }
    free(t->writers);
    t->writers = NULL;
    t->nwriters = 0;
    if (t->out_pool) sl_pool_close(t->out_pool);
    t->out_pool = NULL;
    free(t->ws.keybuf);
    free(t->ws.span);
    memset(&t->ws, 0, sizeof t->ws);
    tm_reader_free(&t->rd);
}

int tm_exchange_has_output(const tm_task *t, int output)
{
    for (int w = 0; w < t->nwriters; w++)
        if (t->writers[w].output == output) return 1;
    return 0;
}

void tm_exchange_set_wait(tm_wset *ws, void (*begin)(void *, int64_t), void (*end)(void *, int64_t),
                          void *ctx)
{
    ws->wait_begin = begin;
    ws->wait_end = end;
    ws->wait_ctx = ctx;
}

/* ---- writing (task thread) ---------------------------------------------- */

static sl_netbuf *get_buffer(tm_wset *ws)
{
    int64_t waited = 0;
    sl_netbuf *b = sl_pool_tryget(ws->t->out_pool);
    if (!b) {
        if (ws->wait_begin) ws->wait_begin(ws->wait_ctx, sl_mono_ns());
        if (ws->tick && ws->ticking) {
            /* something is due while we wait (an aligned-checkpoint-timeout) */
            for (;;) {
                int64_t w = 0;
                int timed_out = 0;
                b = sl_pool_get_timed(ws->t->out_pool, 5000000, &w, &timed_out);
                waited += w;
                if (b || !timed_out) break;
                ws->tick(ws->wait_ctx);
                if (!ws->ticking) {
                    b = sl_pool_get(ws->t->out_pool, &w);
                    waited += w;
                    break;
                }
            }
        } else {
            b = sl_pool_get(ws->t->out_pool, &waited);
        }
        if (ws->wait_end) ws->wait_end(ws->wait_ctx, waited);
    }
    return b;
}

/* Into the consumer's gate, or onto the channel's send queue. */
static void hand_on(tm_wset *ws, tm_outchan *oc, sl_netbuf *b)
{
    __atomic_add_fetch(&ws->t->m.bytes_out, b->len, __ATOMIC_RELAXED);
    if (oc->local) {
        b->chan = oc->local_idx;
        tm_gate_push(oc->local, b);
        return;
    }
    tm_peer *p = oc->peer;
    b->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (oc->qtail) oc->qtail->next = b;
    else oc->qhead = b;
    oc->qtail = b;
    oc->qlen++;
    pthread_mutex_unlock(&p->mu);
    tm_net_peer_wake(p);
}

static void put_hdr(uint8_t *p, int tag, uint32_t len);

int tm_exchange_priority_barrier(tm_wset *ws, const void *payload, size_t len,
                                 int (*out)(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b),
                                 void *ctx, char *err, size_t errlen)
{
    tm_task *t = ws->t;
    tm_exchange_flush(ws);
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++) {
            if (wr->e->strategy == SL_PART_FORWARD && k != t->subtask) continue;
            tm_outchan *oc = wr->chans[k];
            if (!oc) continue;
            sl_netbuf *b = sl_netbuf_heap((uint32_t)(SL_EL_HDR + len));
            put_hdr(b->data, SL_EL_BARRIER, (uint32_t)len);
            memcpy(b->data + SL_EL_HDR, payload, len);
            b->len = (uint32_t)(SL_EL_HDR + len);
            b->prio = 1;
            if (oc->local) {
                b->chan = oc->local_idx;
                tm_gate_push_priority(oc->local, b);
                continue;
            }
            /* remote: what waits for credit is output channel state, and
             * the barrier goes ahead of it -- in one hold of the lock, so
             * the network thread sends none of those buffers in between
             * (only this thread queues on oc; the network thread takes
             * from the head). The writes go to stdio's buffer: short. */
            tm_peer *p = oc->peer;
            int rc = SL_OK;
            pthread_mutex_lock(&p->mu);
            for (sl_netbuf *x = oc->qhead; x && rc == SL_OK; x = x->next) rc = out(ctx, wr->e, k, x);
            if (oc->ptail) oc->ptail->next = b;
            else oc->phead = b;
            oc->ptail = b;
            pthread_mutex_unlock(&p->mu);
            tm_net_peer_wake(p);
            if (rc != SL_OK) return sl_seterr(err, errlen, "%s: persisting in-flight data failed", ws->vertex);
        }
    }
    return SL_OK;
}

/* fn(oc, writer, subpartition, ctx) on every remote channel of t; stops at
 * the first that does not return SL_OK. */
static int each_remote(tm_task *t, int (*fn)(tm_outchan *, tm_writer *, int, void *), void *ctx)
{
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++) {
            if (wr->e->strategy == SL_PART_FORWARD && k != t->subtask) continue;
            tm_outchan *oc = wr->chans[k];
            if (!oc || oc->local) continue;
            int rc = fn(oc, wr, k, ctx);
            if (rc != SL_OK) return rc;
        }
    }
    return SL_OK;
}

/* The buffer of oc's send queue that ends with barrier cpid, under
 * oc->peer->mu; *before gets the one ahead of it (NULL: it is the head). */
static sl_netbuf *queued_barrier(tm_outchan *oc, uint64_t cpid, sl_netbuf **before)
{
    sl_netbuf *prev = NULL;
    for (sl_netbuf *x = oc->qhead; x; prev = x, x = x->next)
        if (x->barrier == cpid) {
            if (before) *before = prev;
            return x;
        }
    return NULL;
}

static int count_queued(tm_outchan *oc, tm_writer *wr, int k, void *ctx)
{
    SL_UNUSED(wr);
    SL_UNUSED(k);
    uint64_t *a = ctx; /* a[0] cpid, a[1] count */
    pthread_mutex_lock(&oc->peer->mu);
    a[1] += queued_barrier(oc, a[0], NULL) != NULL;
    pthread_mutex_unlock(&oc->peer->mu);
    return SL_OK;
}

int tm_exchange_queued_barriers(tm_wset *ws, uint64_t cpid)
{
    uint64_t a[2] = {cpid, 0};
    each_remote(ws->t, count_queued, a);
    return (int)a[1];
}

int tm_exchange_has_remote(const tm_task *t)
{
    for (int w = 0; w < t->nwriters; w++)
        for (int k = 0; k < t->writers[w].nsub; k++)
            if (t->writers[w].chans[k] && !t->writers[w].chans[k]->local) return 1;
    return 0;
}

typedef struct overtake_ctx {
    uint64_t cpid;
    const uint8_t *payload;
    size_t len;
    int (*out)(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b);
    void *ctx;
    int channels, buffers;
} overtake_ctx;

static int overtake_one(tm_outchan *oc, tm_writer *wr, int k, void *arg)
{
    overtake_ctx *o = arg;
    tm_peer *p = oc->peer;
    uint32_t el = (uint32_t)(SL_EL_HDR + o->len);
    int rc = SL_OK;
    sl_netbuf *drop = NULL;
    pthread_mutex_lock(&p->mu);
    sl_netbuf *prev = NULL, *bx = queued_barrier(oc, o->cpid, &prev);
    /* the barrier is its buffer's last element, as this task wrote it */
    if (bx && (bx->len < el || bx->data[bx->len - el] != SL_EL_BARRIER ||
               sl_get_le32(bx->data + bx->len - el + 1) != (uint32_t)o->len))
        bx = NULL;
    if (bx) {
        /* what is queued ahead of the barrier, and its own buffer's
         * elements before it, are output channel state; they stay queued
         * and go to the consumer after the barrier, which it processes as
         * data after its snapshot */
        for (sl_netbuf *x = oc->qhead; x && rc == SL_OK; x = x->next) {
            if (x == bx) {
                sl_netbuf part = *bx;
                part.len = bx->len - el;
                if (part.len) rc = o->out(o->ctx, wr->e, k, &part);
                break;
            }
            rc = o->out(o->ctx, wr->e, k, x);
            o->buffers++;
        }
        bx->len -= el;
        bx->barrier = 0;
        if (!bx->len) { /* the barrier alone: the buffer goes */
            if (prev) prev->next = bx->next;
            else oc->qhead = bx->next;
            if (oc->qtail == bx) oc->qtail = prev;
            oc->qlen--;
            drop = bx;
        } else {
            o->buffers++;
        }
        sl_netbuf *b = sl_netbuf_heap(el);
        put_hdr(b->data, SL_EL_BARRIER, (uint32_t)o->len);
        memcpy(b->data + SL_EL_HDR, o->payload, o->len);
        b->len = el;
        b->prio = 1;
        if (oc->ptail) oc->ptail->next = b;
        else oc->phead = b;
        oc->ptail = b;
        o->channels++;
    }
    pthread_mutex_unlock(&p->mu);
    if (drop) {
        drop->next = NULL;
        sl_buf_recycle(drop);
    }
    if (bx) tm_net_peer_wake(p);
    return rc;
}

int tm_exchange_overtake_queued(tm_wset *ws, uint64_t cpid, const void *payload, size_t len,
                                int (*out)(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b),
                                void *ctx, int *channels, int *buffers, char *err, size_t errlen)
{
    overtake_ctx o = {cpid, payload, len, out, ctx, 0, 0};
    int rc = each_remote(ws->t, overtake_one, &o);
    *channels = o.channels;
    *buffers = o.buffers;
    if (rc != SL_OK) return sl_seterr(err, errlen, "%s: persisting in-flight data failed", ws->vertex);
    return SL_OK;
}

void tm_exchange_flush(tm_wset *ws)
{
    tm_task *t = ws->t;
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++)
            if (wr->cur[k] && wr->cur[k]->len) {
                hand_on(ws, wr->chans[k], wr->cur[k]);
                wr->cur[k] = NULL;
            }
    }
}

static void put_hdr(uint8_t *p, int tag, uint32_t len)
{
    p[0] = (uint8_t)tag;
    sl_put_le32(p + 1, len);
}

void tm_span_write(sl_netbuf *b, const uint8_t *rec, uint32_t len, uint32_t *done)
{
    uint8_t *p = b->data + b->len;
    uint32_t room = b->cap - b->len;
    if (*done == 0) {
        SL_ASSERT(room > SL_EL_HDR + 4);
        uint32_t n = SL_MIN(len, room - SL_EL_HDR - 4);
        put_hdr(p, SL_EL_SPAN_FIRST, 4 + n);
        sl_put_le32(p + SL_EL_HDR, len);
        memcpy(p + SL_EL_HDR + 4, rec, n);
        b->len += SL_EL_HDR + 4 + n;
        *done = n;
    } else {
        SL_ASSERT(room > SL_EL_HDR);
        uint32_t n = SL_MIN(len - *done, room - SL_EL_HDR);
        put_hdr(p, SL_EL_SPAN_MORE, n);
        memcpy(p + SL_EL_HDR, rec + *done, n);
        b->len += SL_EL_HDR + n;
        *done += n;
    }
}

/* A record too large for one buffer: encoded once into ws->span, then
 * written in parts into consecutive buffers of subpartition k, starting
 * with an empty one. */
static int put_spanning(tm_wset *ws, tm_writer *wr, int k, const sl_row *row, char *err, size_t errlen)
{
    size_t total = 8 + sl_row_size(row, wr->schema);
    if (total > SL_MAX_RECORD_BYTES)
        return sl_seterr(err, errlen,
                         "%s: a record of %zu bytes exceeds the maximum record size of %u bytes "
                         "(16 MiB)", ws->vertex, total, SL_MAX_RECORD_BYTES);
    if (total > ws->span_cap) {
        size_t cap = ws->span_cap ? ws->span_cap : 64u << 10;
        while (cap < total) cap *= 2;
        cap = SL_MIN(cap, (size_t)SL_MAX_RECORD_BYTES);
        free(ws->span);
        ws->span = sl_malloc(cap);
        ws->span_cap = cap;
    }
    sl_put_lei64(ws->span, row->ts);
    size_t n = sl_row_encode(row, wr->schema, ws->span + 8, ws->span_cap - 8);
    SL_ASSERT(n + 8 == total);
    uint32_t done = 0;
    while (done < total) {
        sl_netbuf *b = wr->cur[k];
        if (b && b->cap - b->len <= SL_EL_HDR + 4) {
            hand_on(ws, wr->chans[k], b);
            b = wr->cur[k] = NULL;
        }
        if (!b) {
            b = get_buffer(ws);
            if (!b) return sl_seterr(err, errlen, "cancelled");
            wr->cur[k] = b;
        }
        tm_span_write(b, ws->span, (uint32_t)total, &done);
    }
    return SL_OK;
}

/* Debloating: a buffer started for channel oc holds at most the size its
 * consumer announced (its gate's when it runs here, else what its credits
 * carried). Per buffer, not per record. */
static void debloat_cap(const tm_outchan *oc, sl_netbuf *b)
{
    uint32_t size = oc->local ? __atomic_load_n(&oc->local->buf_size, __ATOMIC_RELAXED)
                              : __atomic_load_n(&oc->buf_size, __ATOMIC_RELAXED);
    if (size >= SL_EL_HDR + 16 && size < b->cap) b->cap = size;
}

/* Append one element to subpartition k of writer wr. `row` NULL means the
 * payload is the 8-byte value `x` (watermark), a flag (IDLE, END) or
 * payload[plen] (BARRIER, LATENCY). A buffer debloated too small for the
 * element while still empty takes its full size. */
static int put_element(tm_wset *ws, tm_writer *wr, int k, int tag, const sl_row *row, int64_t x,
                       const void *payload, size_t plen, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        sl_netbuf *b = wr->cur[k];
        if (!b) {
            b = get_buffer(ws);
            if (!b) return sl_seterr(err, errlen, "cancelled");
            wr->cur[k] = b;
            if (SL_UNLIKELY(ws->debloat)) debloat_cap(wr->chans[k], b);
        }
        uint8_t *p = b->data + b->len;
        size_t room = b->cap - b->len;
        size_t n = 0;
        if (tag == SL_EL_RECORD) {
            if (room >= SL_EL_HDR + 8) {
                size_t body = sl_row_encode(row, wr->schema, p + SL_EL_HDR + 8, room - SL_EL_HDR - 8);
                if (body) {
                    n = SL_EL_HDR + 8 + body;
                    sl_put_lei64(p + SL_EL_HDR, row->ts);
                }
            }
        } else if (tag == SL_EL_WATERMARK) {
            if (room >= SL_EL_HDR + 8) {
                n = SL_EL_HDR + 8;
                sl_put_lei64(p + SL_EL_HDR, x);
            }
        } else if (tag == SL_EL_BARRIER || tag == SL_EL_LATENCY) {
            if (room >= SL_EL_HDR + plen) {
                n = SL_EL_HDR + plen;
                memcpy(p + SL_EL_HDR, payload, plen);
            }
        } else if (room >= SL_EL_HDR + 1) { /* IDLE: 1 = idle; END: 1 = drained, 0 = stopped */
            n = SL_EL_HDR + 1;
            p[SL_EL_HDR] = (uint8_t)(x != 0);
        }
        if (n) {
            put_hdr(p, tag, (uint32_t)(n - SL_EL_HDR));
            b->len += (uint32_t)n;
            if (tag == SL_EL_BARRIER && plen >= 8) b->barrier = sl_get_le64(payload);
            return SL_OK;
        }
        if (b->len == 0 && b->cap < b->pool->size) {
            b->cap = b->pool->size; /* debloated too far for this one: full size */
            attempt--;
            continue;
        }
        if (b->len == 0) {
            if (tag == SL_EL_RECORD) return put_spanning(ws, wr, k, row, err, errlen);
            return sl_seterr(err, errlen, "%s: a control element of %zu bytes does not fit in a %u-byte "
                             "network buffer", ws->vertex, plen, b->cap);
        }
        hand_on(ws, wr->chans[k], b);
        wr->cur[k] = NULL;
    }
    return sl_seterr(err, errlen, "internal: element does not fit");
}

/* The subpartition for row, -1 for all of them, -2 on error. */
static int route(tm_wset *ws, tm_writer *wr, const sl_row *row, char *err, size_t errlen)
{
    switch (wr->e->strategy) {
    case SL_PART_FORWARD:
        return ws->t->subtask;
    case SL_PART_REBALANCE: {
        int k = wr->rr;
        wr->rr = (wr->rr + 1) % wr->nsub;
        return k;
    }
    case SL_PART_HASH: {
        size_t n = sl_row_key_encode(row, wr->schema, wr->e->keys, wr->e->nkeys, ws->keybuf,
                                     SL_MAX_KEY_BYTES);
        if (n == 0 && wr->e->nkeys > 0) {
            sl_seterr(err, errlen, "%s: a key of %zu bytes exceeds the maximum key size of %u bytes "
                      "(64 KiB)", ws->vertex,
                      sl_row_key_size(row, wr->schema, wr->e->keys, wr->e->nkeys), SL_MAX_KEY_BYTES);
            return -2;
        }
        int kg = sl_kg_of_key(ws->keybuf, n, wr->max_parallelism);
        return sl_kg_operator_index(kg, wr->nsub, wr->max_parallelism);
    }
    case SL_PART_BROADCAST:
        return -1;
    }
    return 0;
}

int tm_exchange_emit(tm_wset *ws, int output, const sl_row *row, char *err, size_t errlen)
{
    tm_task *t = ws->t;
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        if (wr->output != output) continue;
        int k = route(ws, wr, row, err, errlen);
        if (k == -2) return SL_ERR;
        if (k >= 0) {
            if (put_element(ws, wr, k, SL_EL_RECORD, row, 0, NULL, 0, err, errlen)) return SL_ERR;
        } else {
            for (k = 0; k < wr->nsub; k++)
                if (put_element(ws, wr, k, SL_EL_RECORD, row, 0, NULL, 0, err, errlen)) return SL_ERR;
        }
    }
    if (t->d->buffer_timeout_ms == 0) tm_exchange_flush(ws);
    return SL_OK;
}

int tm_exchange_broadcast(tm_wset *ws, int tag, int64_t x, const void *payload, size_t len,
                          char *err, size_t errlen)
{
    tm_task *t = ws->t;
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++) {
            if (wr->e->strategy == SL_PART_FORWARD && k != t->subtask) continue;
            if (put_element(ws, wr, k, tag, NULL, x, payload, len, err, errlen)) return SL_ERR;
        }
    }
    return SL_OK;
}

static uint64_t next_random(tm_wset *ws)
{
    uint64_t x = ws->rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return ws->rng = x;
}

int tm_exchange_latency(tm_wset *ws, const uint8_t *payload, size_t len, char *err, size_t errlen)
{
    tm_task *t = ws->t;
    int nmain = 0;
    for (int w = 0; w < t->nwriters; w++) nmain += t->writers[w].output == 0;
    if (!t->nwriters) return SL_OK;
    /* one writer of the main output (any writer when it has none), at random */
    int pick = (int)(next_random(ws) % (uint64_t)(nmain ? nmain : t->nwriters));
    tm_writer *wr = NULL;
    for (int w = 0; w < t->nwriters && !wr; w++)
        if ((!nmain || t->writers[w].output == 0) && pick-- == 0) wr = &t->writers[w];
    int k = wr->e->strategy == SL_PART_FORWARD ? t->subtask : (int)(next_random(ws) % (uint64_t)wr->nsub);
    if (!wr->chans[k]) return SL_OK;
    return put_element(ws, wr, k, SL_EL_LATENCY, NULL, 0, payload, len, err, errlen);
}

/* ---- reading (task thread) ---------------------------------------------- */

int tm_exchange_read(tm_reader *rd, const sl_netbuf *b, size_t *pos, tm_element *el, char *err,
                     size_t errlen)
{
    if (*pos >= b->len) return SL_DONE;
    if (b->len - *pos < SL_EL_HDR) return sl_seterr(err, errlen, "truncated element header");
    if (b->chan < 0 || b->chan >= rd->nchan) return sl_seterr(err, errlen, "unknown input channel %d", b->chan);
    tm_span_in *sp = &rd->chan[b->chan];
    uint8_t tag = b->data[*pos];
    uint32_t len = sl_get_le32(b->data + *pos + 1);
    if (len > b->len - *pos - SL_EL_HDR)
        return sl_seterr(err, errlen, "element of %u bytes overruns its buffer", len);
    const uint8_t *p = b->data + *pos + SL_EL_HDR;
    *pos += SL_EL_HDR + len;
    if (tag == SL_EL_SPAN_FIRST) {
        uint32_t total;
        if (sp->want) return sl_seterr(err, errlen, "a spanning record starts inside another");
        if (len < 4) return sl_seterr(err, errlen, "truncated spanning record");
        total = sl_get_le32(p);
        if (total > SL_MAX_RECORD_BYTES)
            return sl_seterr(err, errlen, "spanning record of %u bytes exceeds the maximum record size "
                             "of %u bytes", total, SL_MAX_RECORD_BYTES);
        if (total <= len - 4) return sl_seterr(err, errlen, "spanning record of %u bytes in one part", total);
        if (total > sp->cap) {
            uint32_t cap = sp->cap ? sp->cap : 64u << 10;
            while (cap < total) cap *= 2;
            cap = SL_MIN(cap, SL_MAX_RECORD_BYTES);
            free(sp->buf);
            sp->buf = sl_malloc(cap);
            sp->cap = cap;
        }
        memcpy(sp->buf, p + 4, len - 4);
        sp->have = len - 4;
        sp->want = total;
        return SL_AGAIN;
    }
    if (tag == SL_EL_SPAN_MORE) {
        if (!sp->want) return sl_seterr(err, errlen, "a spanning record's continuation without its start");
        if (len == 0 || len > sp->want - sp->have)
            return sl_seterr(err, errlen, "spanning record part of %u bytes overruns the record", len);
        memcpy(sp->buf + sp->have, p, len);
        sp->have += len;
        if (sp->have < sp->want) return SL_AGAIN;
        el->tag = SL_EL_RECORD;
        el->p = sp->buf;
        el->len = sp->want;
        sp->want = sp->have = 0;
        return SL_OK;
    }
    if (sp->want) return sl_seterr(err, errlen, "element %u inside a spanning record", tag);
    el->tag = tag;
    el->p = p;
    el->len = len;
    return SL_OK;
}

int tm_buffer_barrier(const sl_netbuf *b, uint64_t *cpid)
{
    size_t pos = 0;
    int tag = 0;
    const uint8_t *last = NULL;
    uint32_t llen = 0;
    while (b->len - pos >= SL_EL_HDR) {
        uint32_t len = sl_get_le32(b->data + pos + 1);
        if (len > b->len - pos - SL_EL_HDR) return 0;
        tag = b->data[pos];
        last = b->data + pos + SL_EL_HDR;
        llen = len;
        pos += SL_EL_HDR + len;
    }
    if (tag != SL_EL_BARRIER || llen < 8) return 0;
    *cpid = sl_get_le64(last);
    return 1;
}

/* ---- wiring (network thread) --------------------------------------------- */

/* Which gate channel index producer subtask i of edge e has at consumer j. */
static int gate_index(const sl_jobgraph *g, const sl_vertex *head, int e_idx, int i)
{
    int idx = 0;
    for (int k = 0; k < head->nin; k++) {
        const sl_edge *e = &g->e[head->in_edges[k]];
        int np = g->v[e->from].parallelism;
        if (head->in_edges[k] == e_idx) return idx + (e->strategy == SL_PART_FORWARD ? 0 : i);
        idx += e->strategy == SL_PART_FORWARD ? 1 : np;
    }
    return -1;
}

static tm_task *local_task(tm_deploy *d, int chain, int subtask)
{
    for (int i = 0; i < d->ntasks; i++)
        if (d->tasks[i].chain == chain && d->tasks[i].subtask == subtask) return &d->tasks[i];
    return NULL;
}

static void send_credit(tm_deploy *d, tm_inchan *ic, int credits)
{
    if (!credits) return;
    ic->announced += credits;
    tm_net_send_credit(ic->peer, d->session, d->attempt, ic->id, credits,
                       __atomic_load_n(&ic->gate->buf_size, __ATOMIC_RELAXED));
}

void tm_exchange_take_early(tm_deploy *d, tm_peer *p)
{
    int64_t now = sl_mono_ms();
    for (int i = 0; i < p->nearly;) {
        tm_early_credit *ec = &p->early[i];
        if (ec->session == d->session && ec->attempt == d->attempt) {
            tm_outchan *oc = ec->chan < d->nchan ? d->out_by_id[ec->chan] : NULL;
            if (oc && oc->peer == p) oc->credit += (int)ec->credits;
            else sl_warn(TAG, "job %s: dropping an early credit for unknown channel %u from %s",
                         d->job_id, ec->chan, p->id);
            p->early[i] = p->early[--p->nearly];
        } else if (now - ec->at_ms > TM_EARLY_TTL_MS) {
            p->early[i] = p->early[--p->nearly];
        } else {
            i++;
        }
    }
}

int tm_exchange_wire(tm_net *n, tm_deploy *d, const tm_slot_loc *slots, char *err, size_t errlen)
{
    const sl_jobgraph *g = d->g;
    /* channel ids: per inter-chain edge, producer i x consumer j */
    uint32_t *base = sl_calloc((size_t)(g->ne ? g->ne : 1), sizeof(uint32_t));
    uint32_t next = 0;
    for (int e = 0; e < g->ne; e++) {
        base[e] = next;
        next += (uint32_t)(g->v[g->e[e].from].parallelism * g->v[g->e[e].to].parallelism);
    }
    d->nchan = next;
    d->out_by_id = sl_calloc(next ? next : 1, sizeof(tm_outchan *));
    d->in_by_id = sl_calloc(next ? next : 1, sizeof(tm_inchan *));
    int nremote_in = 0;
    for (int e = 0; e < g->ne; e++) {
        const sl_edge *ed = &g->e[e];
        const sl_vertex *from = &g->v[ed->from], *to = &g->v[ed->to];
        if (from->chain == to->chain) continue; /* chained: a function call */
        int out_idx = -1;
        for (int k = 0; k < from->nout; k++)
            if (from->out_edges[k] == e) out_idx = k;
        for (int i = 0; i < from->parallelism; i++)
            for (int j = 0; j < to->parallelism; j++) {
                if (ed->strategy == SL_PART_FORWARD && i != j) continue;
                uint32_t id = base[e] + (uint32_t)(i * to->parallelism + j);
                tm_task *prod = local_task(d, from->chain, i), *cons = local_task(d, to->chain, j);
                int gi = gate_index(g, to, e, i);
                if (prod) {
                    tm_outchan *oc = sl_calloc(1, sizeof *oc);
                    oc->id = id;
                    oc->d = d;
                    if (cons) {
                        oc->local = &cons->gate;
                        oc->local_idx = gi;
                    } else {
                        const tm_slot_loc *loc = &slots[j];
                        oc->peer = tm_net_peer(n, loc->tm_id, loc->host, loc->data_port);
                        pthread_mutex_lock(&oc->peer->mu);
                        oc->peer_next = oc->peer->chans;
                        oc->peer->chans = oc;
                        pthread_mutex_unlock(&oc->peer->mu);
                    }
                    d->out_by_id[id] = oc;
                    prod->writers[out_idx].chans[j] = oc;
                }
                if (cons && !prod) {
                    const tm_slot_loc *loc = &slots[i];
                    tm_inchan *ic = sl_calloc(1, sizeof *ic);
                    ic->id = id;
                    ic->gate = &cons->gate;
                    ic->gate_idx = gi;
                    ic->peer = tm_net_peer(n, loc->tm_id, loc->host, loc->data_port);
                    d->in_by_id[id] = ic;
                    nremote_in++;
                }
                if (cons) cons->chan_input[gi] = ed->to_input;
            }
    }
    free(base);
    /* receive buffers: exclusive per remote channel, plus floating per gate */
    int ngates = 0;
    for (int i = 0; i < d->ntasks; i++) ngates += d->tasks[i].ngate_chan > 0;
    int total = nremote_in * d->buffers_per_channel + (nremote_in ? ngates * d->floating_per_gate : 0);
    if (total) {
        d->recv_pool = sl_pool_new(total, d->seg_size);
        for (uint32_t id = 0; id < d->nchan; id++) {
            tm_inchan *ic = d->in_by_id[id];
            if (!ic) continue;
            for (int k = 0; k < d->buffers_per_channel; k++) {
                sl_netbuf *b = sl_pool_tryget(d->recv_pool);
                SL_ASSERT(b);
                b->owner = (int)id; /* returns as this channel's credit */
                b->recycle = tm_exchange_recycle_recv;
                b->recycle_ctx = n;
                b->next = ic->reserved;
                ic->reserved = b;
                ic->nreserved++;
            }
        }
    }
    /* first credits, and those that came before us */
    for (uint32_t id = 0; id < d->nchan; id++)
        if (d->in_by_id[id]) send_credit(d, d->in_by_id[id], d->in_by_id[id]->nreserved);
    for (tm_peer *p = n->peers; p; p = p->next) tm_exchange_take_early(d, p);
    SL_UNUSED(err);
    SL_UNUSED(errlen);
    return SL_OK;
}

/* sl_queue_remove_if: a receive buffer of pool `arg` on its way back. */
static int recv_back_of(const sl_qmsg *m, void *arg)
{
    return m->type == TM_OP_RECV_BACK && SL_QMSG_OF(m, const sl_netbuf, qm)->pool == arg;
}

void tm_exchange_unwire(tm_net *n, tm_deploy *d)
{
    for (uint32_t id = 0; id < d->nchan; id++) {
        tm_outchan *oc = d->out_by_id[id];
        if (oc) {
            if (oc->peer) {
                tm_peer *p = oc->peer;
                pthread_mutex_lock(&p->mu);
                for (tm_outchan **q = &p->chans; *q; q = &(*q)->peer_next)
                    if (*q == oc) { *q = oc->peer_next; break; }
                sl_netbuf *b = oc->qhead, *pb = oc->phead;
                oc->qhead = oc->qtail = NULL;
                oc->phead = oc->ptail = NULL;
                pthread_mutex_unlock(&p->mu);
                while (b) { sl_netbuf *nx = b->next; sl_buf_recycle(b); b = nx; }
                while (pb) { sl_netbuf *nx = pb->next; sl_buf_recycle(pb); pb = nx; }
            }
            free(oc);
        }
        tm_inchan *ic = d->in_by_id[id];
        if (ic) {
            sl_netbuf *b = ic->reserved;
            while (b) { sl_netbuf *nx = b->next; sl_pool_put(b); b = nx; }
            free(ic);
        }
    }
    for (int i = 0; i < d->ntasks; i++) {
        tm_task *t = &d->tasks[i];
        tm_gate_destroy(&t->gate);
        free(t->info);
        task_outputs_free(t);
    }
    /* receive buffers still on their way back are in the inbox: take them */
    if (d->recv_pool && n->inbox) {
        sl_qmsg *m = sl_queue_remove_if(n->inbox, recv_back_of, d->recv_pool);
        while (m) {
            sl_qmsg *next = m->next;
            sl_pool_put(SL_QMSG_OF(m, sl_netbuf, qm));
            m = next;
        }
    }
    if (d->recv_pool) sl_pool_close(d->recv_pool);
    d->recv_pool = NULL;
    for (tm_peer *p = n->peers; p; p = p->next) tm_exchange_drop_early(p, d->session, d->attempt);
    free(d->out_by_id);
    free(d->in_by_id);
    d->out_by_id = NULL;
    d->in_by_id = NULL;
    d->nchan = 0;
}

int tm_exchange_uses_peer(const tm_deploy *d, const tm_peer *p)
{
    for (uint32_t id = 0; id < d->nchan; id++)
        if ((d->out_by_id[id] && d->out_by_id[id]->peer == p) ||
            (d->in_by_id[id] && d->in_by_id[id]->peer == p))
            return 1;
    return 0;
}

int tm_exchange_sends_drained(tm_deploy *d)
{
    for (uint32_t id = 0; id < d->nchan; id++) {
        tm_outchan *oc = d->out_by_id[id];
        if (oc && oc->peer) {
            pthread_mutex_lock(&oc->peer->mu);
            int empty = oc->qhead == NULL && oc->phead == NULL;
            pthread_mutex_unlock(&oc->peer->mu);
            if (!empty) return 0;
        }
    }
    return 1;
}

/* ---- credits (network thread) -------------------------------------------- */

void tm_exchange_drop_early(tm_peer *p, uint64_t session, uint32_t attempt)
{
    int64_t now = sl_mono_ms();
    for (int i = 0; i < p->nearly;) {
        tm_early_credit *ec = &p->early[i];
        if ((ec->session == session && ec->attempt == attempt) || now - ec->at_ms > TM_EARLY_TTL_MS)
            p->early[i] = p->early[--p->nearly];
        else
            i++;
    }
}

int tm_exchange_credit(tm_peer *p, tm_deploy *d, uint64_t session, uint32_t attempt,
                       uint32_t chan, uint32_t credits, uint32_t buf_size, char *err, size_t errlen)
{
    if (credits == 0 || credits > 1u << 16) return sl_seterr(err, errlen, "bad credit count %u", credits);
    if (!d && tm_deploy_ended(p->net, session, attempt)) return SL_OK; /* its job has ended here */
    if (!d) {
        /* expired ones go first; then one entry per channel, summed */
        tm_exchange_drop_early(p, 0, 0);
        int64_t now = sl_mono_ms();
        for (int i = 0; i < p->nearly; i++) {
            tm_early_credit *ec = &p->early[i];
            if (ec->session == session && ec->attempt == attempt && ec->chan == chan) {
                if (ec->credits + credits <= 1u << 16) ec->credits += credits;
                ec->at_ms = now;
                return SL_OK;
            }
        }
        if (!p->early) p->early = sl_calloc(TM_EARLY_MAX, sizeof *p->early);
        if (p->nearly == TM_EARLY_MAX) {
            int oldest = 0;
            for (int i = 1; i < p->nearly; i++)
                if (p->early[i].at_ms < p->early[oldest].at_ms) oldest = i;
            if (now - p->early_warned_ms >= 10000) { /* at most one line per peer per 10 s */
                sl_warn(TAG, "%d early credits from %s; forgetting the oldest (attempt %u)", TM_EARLY_MAX,
                        p->id, p->early[oldest].attempt);
                p->early_warned_ms = now;
            }
            p->early[oldest] = p->early[--p->nearly];
        }
        p->early[p->nearly++] = (tm_early_credit){session, attempt, chan, credits, now};
        return SL_OK;
    }
    if (chan >= d->nchan || !d->out_by_id[chan] || d->out_by_id[chan]->peer != p)
        return sl_seterr(err, errlen, "credit for unknown channel %u of attempt %u", chan, attempt);
    d->out_by_id[chan]->credit += (int)credits;
    if (buf_size != __atomic_load_n(&d->out_by_id[chan]->buf_size, __ATOMIC_RELAXED))
        __atomic_store_n(&d->out_by_id[chan]->buf_size, buf_size, __ATOMIC_RELAXED);
    return SL_OK;
}

/* Lend floating buffers to a channel whose sender has more queued than it
 * has credit for. */
static void lend_floating(tm_deploy *d, tm_inchan *ic)
{
    int want = ic->backlog - ic->announced;
    int lent = 0;
    while (want-- > 0) {
        sl_netbuf *b = sl_pool_tryget(d->recv_pool);
        if (!b) break;
        b->owner = -1; /* floating: goes back to the pool */
        b->recycle = tm_exchange_recycle_recv;
        b->recycle_ctx = d->net;
        b->next = ic->reserved;
        ic->reserved = b;
        ic->nreserved++;
        lent++;
    }
    send_credit(d, ic, lent);
}

sl_netbuf *tm_exchange_recv_buffer(tm_peer *p, tm_deploy *d, uint32_t chan, uint32_t len, char *err,
                                size_t errlen)
{
    tm_inchan *ic = chan < d->nchan ? d->in_by_id[chan] : NULL;
    if (!ic || ic->peer != p) {
        sl_seterr(err, errlen, "data for unknown channel %u of job %s", chan, d->job_id);
        return NULL;
    }
    if (!ic->reserved) {
        sl_seterr(err, errlen, "data on channel %u without credit", chan);
        return NULL;
    }
    if (len > d->seg_size) {
        sl_seterr(err, errlen, "data frame of %u bytes exceeds the %u-byte buffer", len, d->seg_size);
        return NULL;
    }
    sl_netbuf *b = ic->reserved;
    ic->reserved = b->next;
    ic->nreserved--;
    ic->announced--;
    b->next = NULL;
    return b;
}

void tm_exchange_deliver(tm_deploy *d, uint32_t chan, sl_netbuf *b, uint32_t backlog)
{
    tm_inchan *ic = d->in_by_id[chan];
    ic->backlog = (int)SL_MIN(backlog, 1u << 16);
    b->chan = ic->gate_idx;
    tm_gate_push(ic->gate, b);
    if (ic->backlog > ic->announced) lend_floating(d, ic);
}

sl_netbuf *tm_exchange_event_buffer(tm_peer *p, tm_deploy *d, uint32_t chan, uint32_t len, char *err,
                                    size_t errlen)
{
    tm_inchan *ic = chan < d->nchan ? d->in_by_id[chan] : NULL;
    if (!ic || ic->peer != p) {
        sl_seterr(err, errlen, "event for unknown channel %u of job %s", chan, d->job_id);
        return NULL;
    }
    /* a barrier: id, time, flags, timeout and its directory (task.c) */
    if (len > SL_EL_HDR + 4200) {
        sl_seterr(err, errlen, "event frame of %u bytes (at most %u)", len, SL_EL_HDR + 4200);
        return NULL;
    }
    return sl_netbuf_heap(len);
}

void tm_exchange_deliver_priority(tm_deploy *d, uint32_t chan, sl_netbuf *b)
{
    tm_inchan *ic = d->in_by_id[chan];
    b->chan = ic->gate_idx;
    b->prio = 1;
    tm_gate_push_priority(ic->gate, b);
}

void tm_exchange_recycle_recv(sl_netbuf *b)
{
    tm_net *n = b->recycle_ctx;
    b->qm.type = TM_OP_RECV_BACK;
    if (sl_queue_push(n->inbox, &b->qm) != SL_OK) sl_pool_put(b); /* stopped: no credit to give */
}

/* A receive buffer came back: it becomes credit for its channel (exclusive)
 * or returns to the deployment's spare pool (floating). */
void tm_exchange_recv_back(tm_net *n, sl_netbuf *b)
{
    tm_deploy *d = NULL;
    for (tm_deploy *x = n->deploys; x; x = x->next)
        if (x->recv_pool == b->pool) d = x;
    if (!d || d->cancelled) {
        sl_pool_put(b);
        return;
    }
    tm_inchan *ic = NULL;
    if (b->owner >= 0 && (uint32_t)b->owner < d->nchan) ic = d->in_by_id[b->owner];
    if (ic) {
        b->next = ic->reserved;
        ic->reserved = b;
        ic->nreserved++;
        send_credit(d, ic, 1);
    } else {
        sl_pool_put(b);
    }
}

void tm_exchange_peer_up(tm_net *n, tm_peer *p)
{
    for (tm_deploy *d = n->deploys; d; d = d->next)
        for (uint32_t id = 0; id < d->nchan; id++) {
            tm_inchan *ic = d->in_by_id[id];
            if (ic && ic->peer == p && ic->announced) {
                int c = ic->announced;
                ic->announced = 0;
                send_credit(d, ic, c);
            }
        }
}
