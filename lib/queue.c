/*
 * queue.c -- see queue.h: a FIFO of intrusive messages under one mutex,
 * woken through an eventfd or a condition variable.
 *
 * Invariants, under mu: head == NULL <=> tail == NULL <=> len == 0;
 * 0 <= len <= max when max > 0 (push_wait and call wait for room, push
 * refuses). With an eventfd: whenever len > 0, either the eventfd's counter
 * is non-zero or a producer that found the queue empty is about to write
 * it, or the consumer has cleared it and is about to take the list -- so a
 * message never waits without a wake-up on its way. The eventfd is written
 * outside the lock; a write that arrives after the consumer took the list
 * costs one spurious wake-up, never a lost one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "queue.h"
#include "log.h"

#define TAG "queue"

struct sl_queue {
    pthread_mutex_t mu;
    pthread_cond_t work;        /* SL_QUEUE_COND: messages arrived, or closed */
    pthread_cond_t room;        /* bounded: the consumer took messages, or closed */
    pthread_cond_t answered;    /* a waited-for message was answered */
    sl_qmsg *head, *tail;
    size_t len;
    size_t max;                 /* 0 = unbounded */
    int closed;
    int consumer_waits;         /* sl_queue_wait sleeps on work */
    int producers_wait;         /* push_wait/call sleep on room */
    sl_queue_wake wake;
    int efd;                    /* SL_QUEUE_EVENTFD, else -1 */
    const char *name;           /* static, for messages */
};

sl_queue *sl_queue_new(const char *name, sl_queue_wake wake, size_t max, char *err, size_t errlen)
{
    int efd = -1;
    if (wake == SL_QUEUE_EVENTFD) {
        efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (efd < 0) {
            sl_seterr(err, errlen, "cannot make the %s queue's eventfd: %s", name, strerror(errno));
            return NULL;
        }
    }
    sl_queue *q = sl_calloc(1, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->room, NULL);
    pthread_cond_init(&q->answered, NULL);
    q->max = max;
    q->wake = wake;
    q->efd = efd;
    q->name = name;
    return q;
}

void sl_queue_destroy(sl_queue *q)
{
    if (!q) return;
    if (q->efd >= 0) close(q->efd);
    pthread_cond_destroy(&q->answered);
    pthread_cond_destroy(&q->room);
    pthread_cond_destroy(&q->work);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

static void kick(sl_queue *q)
{
    uint64_t one = 1;
    if (write(q->efd, &one, sizeof one) < 0 && errno != EAGAIN)
        sl_warn(TAG, "cannot wake the %s queue's consumer: %s", q->name, strerror(errno));
}

/* Under mu, room checked: link m; returns whether the eventfd must be
 * written (the queue was empty). */
static int link_locked(sl_queue *q, sl_qmsg *m)
{
    int was_empty = q->head == NULL;
    m->next = NULL;
    if (q->tail) q->tail->next = m;
    else q->head = m;
    q->tail = m;
    q->len++;
    if (q->consumer_waits) pthread_cond_signal(&q->work);
    return was_empty && q->efd >= 0;
}

/* block: wait for room; else SL_AGAIN when full. */
static int push(sl_queue *q, sl_qmsg *m, int block)
{
    pthread_mutex_lock(&q->mu);
    while (!q->closed && q->max && q->len >= q->max) {
        if (!block) {
            pthread_mutex_unlock(&q->mu);
            return SL_AGAIN;
        }
        q->producers_wait++;
        pthread_cond_wait(&q->room, &q->mu);
        q->producers_wait--;
    }
    if (q->closed) {
        pthread_mutex_unlock(&q->mu);
        return SL_ERR;
    }
    int k = link_locked(q, m);
    pthread_mutex_unlock(&q->mu);
    if (k) kick(q);
    return SL_OK;
}

int sl_queue_push(sl_queue *q, sl_qmsg *m)
{
    m->waited = 0;
    m->done = 0;
    return push(q, m, 0);
}

int sl_queue_push_wait(sl_queue *q, sl_qmsg *m)
{
    m->waited = 0;
    m->done = 0;
    return push(q, m, 1);
}

int sl_queue_call(sl_queue *q, sl_qmsg *m)
{
    m->waited = 1;
    m->done = 0;
    if (push(q, m, 1) != SL_OK) return SL_ERR;
    pthread_mutex_lock(&q->mu);
    while (!m->done) pthread_cond_wait(&q->answered, &q->mu);
    int rc = m->done > 0 ? SL_OK : SL_ERR;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int sl_queue_answer(sl_queue *q, sl_qmsg *m, int rc)
{
    if (!m->waited) return 0;
    pthread_mutex_lock(&q->mu);
    m->done = rc == SL_OK ? 1 : -1; /* from here on the caller may free m */
    pthread_cond_broadcast(&q->answered);
    pthread_mutex_unlock(&q->mu);
    return 1;
}

/* Under mu: take the whole list. */
static sl_qmsg *take_locked(sl_queue *q)
{
    sl_qmsg *list = q->head;
    q->head = q->tail = NULL;
    q->len = 0;
    if (list && q->producers_wait) pthread_cond_broadcast(&q->room);
    return list;
}

sl_qmsg *sl_queue_pop_all(sl_queue *q)
{
    if (q->efd >= 0) {
        uint64_t x; /* cleared before the list is taken: a push after this writes it again */
        if (read(q->efd, &x, sizeof x) < 0 && errno != EAGAIN)
            sl_warn(TAG, "cannot read the %s queue's eventfd: %s", q->name, strerror(errno));
    }
    pthread_mutex_lock(&q->mu);
    sl_qmsg *list = take_locked(q);
    pthread_mutex_unlock(&q->mu);
    return list;
}

sl_qmsg *sl_queue_wait(sl_queue *q)
{
    SL_ASSERT(q->wake == SL_QUEUE_COND);
    pthread_mutex_lock(&q->mu);
    while (!q->head && !q->closed) {
        q->consumer_waits++;
        pthread_cond_wait(&q->work, &q->mu);
        q->consumer_waits--;
    }
    sl_qmsg *list = take_locked(q);
    pthread_mutex_unlock(&q->mu);
    return list;
}

sl_qmsg *sl_queue_remove_if(sl_queue *q, int (*match)(const sl_qmsg *m, void *arg), void *arg)
{
    sl_qmsg *out = NULL, **out_tail = &out;
    pthread_mutex_lock(&q->mu);
    sl_qmsg **pm = &q->head, *last = NULL;
    while (*pm) {
        sl_qmsg *m = *pm;
        if (match(m, arg)) {
            *pm = m->next;
            m->next = NULL;
            *out_tail = m;
            out_tail = &m->next;
            q->len--;
        } else {
            last = m;
            pm = &m->next;
        }
    }
    q->tail = last;
    if (out && q->producers_wait) pthread_cond_broadcast(&q->room);
    pthread_mutex_unlock(&q->mu);
    return out;
}

void sl_queue_close(sl_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->work);
    pthread_cond_broadcast(&q->room);
    pthread_mutex_unlock(&q->mu);
}

int sl_queue_closed(sl_queue *q)
{
    pthread_mutex_lock(&q->mu);
    int closed = q->closed;
    pthread_mutex_unlock(&q->mu);
    return closed;
}

int sl_queue_fd(const sl_queue *q) { return q->efd; }

size_t sl_queue_len(sl_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t len = q->len;
    pthread_mutex_unlock(&q->mu);
    return len;
}
