/*
 * buffer.c -- see buffer.h. One mutex and condition variable per pool; the
 * lock is taken once per 32 KiB buffer, never per record.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "buffer.h"

sl_pool *sl_pool_new(int nbufs, uint32_t size)
{
    sl_pool *p = sl_calloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->total = nbufs;
    p->size = size;
    p->mem = sl_malloc((size_t)nbufs * size);
    p->bufs = sl_calloc((size_t)nbufs, sizeof(sl_netbuf));
    for (int i = 0; i < nbufs; i++) {
        sl_netbuf *b = &p->bufs[i];
        b->data = p->mem + (size_t)i * size;
        b->cap = size;
        b->pool = p;
        b->recycle = sl_pool_put;
        b->next = p->free;
        p->free = b;
    }
    p->nfree = nbufs;
    return p;
}

static void pool_free(sl_pool *p)
{
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->mem);
    free(p->bufs);
    free(p);
}

sl_netbuf *sl_pool_get(sl_pool *p, int64_t *waited_ns)
{
    int64_t t0 = 0;
    sl_netbuf *b = NULL;
    pthread_mutex_lock(&p->mu);
    if (!p->free && !p->cancelled) {
        t0 = sl_mono_ns();
        while (!p->free && !p->cancelled) pthread_cond_wait(&p->cv, &p->mu);
    }
    if (!p->cancelled && p->free) {
        b = p->free;
        p->free = b->next;
        p->nfree--;
    }
    pthread_mutex_unlock(&p->mu);
    if (waited_ns) *waited_ns = t0 ? sl_mono_ns() - t0 : 0;
    if (b) {
        b->len = 0;
        b->cap = p->size;
        b->next = NULL;
        b->prio = 0;
        b->overtaken = 0;
        b->barrier = 0;
        b->recycle = sl_pool_put;
    }
    return b;
}

sl_netbuf *sl_pool_get_timed(sl_pool *p, int64_t timeout_ns, int64_t *waited_ns, int *timed_out)
{
    int64_t t0 = sl_mono_ns();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the pool's condition variable's clock */
    int64_t ns = (int64_t)until.tv_nsec + timeout_ns;
    until.tv_sec += (time_t)(ns / 1000000000);
    until.tv_nsec = (long)(ns % 1000000000);
    *timed_out = 0;
    pthread_mutex_lock(&p->mu);
    while (!p->free && !p->cancelled && !*timed_out)
        if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT) *timed_out = !p->free;
    pthread_mutex_unlock(&p->mu);
    if (waited_ns) *waited_ns = sl_mono_ns() - t0;
    if (*timed_out || p->cancelled) return NULL;
    return sl_pool_tryget(p);
}

sl_netbuf *sl_pool_tryget(sl_pool *p)
{
    sl_netbuf *b = NULL;
    pthread_mutex_lock(&p->mu);
    if (!p->cancelled && p->free) {
        b = p->free;
        p->free = b->next;
        p->nfree--;
    }
    pthread_mutex_unlock(&p->mu);
    if (b) {
        b->len = 0;
        b->cap = p->size;
        b->next = NULL;
        b->prio = 0;
        b->overtaken = 0;
        b->barrier = 0;
        b->recycle = sl_pool_put;
    }
    return b;
}

void sl_pool_put(sl_netbuf *b)
{
    sl_pool *p = b->pool;
    pthread_mutex_lock(&p->mu);
    b->next = p->free;
    p->free = b;
    p->nfree++;
    int done = p->closed && p->nfree == p->total;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (done) pool_free(p);
}

void sl_pool_cancel(sl_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->cancelled = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void sl_pool_close(sl_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->cancelled = 1;
    p->closed = 1;
    int done = p->nfree == p->total;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (done) pool_free(p);
}

float sl_pool_usage(sl_pool *p)
{
    pthread_mutex_lock(&p->mu);
    float u = p->total ? (float)(p->total - p->nfree) / (float)p->total : 0.0f;
    pthread_mutex_unlock(&p->mu);
    return u;
}

static void heap_free(sl_netbuf *b) { free(b); }

sl_netbuf *sl_netbuf_heap(uint32_t size)
{
    sl_netbuf *b = sl_calloc(1, sizeof *b + size);
    b->data = (uint8_t *)(b + 1);
    b->cap = size;
    b->owner = -1;
    b->recycle = heap_free;
    return b;
}
