/*
 * queue.h -- the one typed message queue between threads, with a wake-up.
 *
 * Every hand-off of work from one thread to another goes through an
 * sl_queue (librdkafka's op queues are the model): a producer links a
 * message under a short mutex, the consumer takes the whole list in one
 * lock (sl_queue_pop_all) and runs it in order. Messages are intrusive: a
 * message struct embeds an sl_qmsg, whose `type` is a value of the queue's
 * own enum; each such enum says, per type, which thread sends it and which
 * receives it. The queue never allocates, so a push cannot fail for want of
 * memory and a per-buffer hand-off costs a lock and, at most, one write.
 *
 * Wake-up, chosen per queue:
 *  - SL_QUEUE_EVENTFD for a consumer that is an event loop: sl_queue_fd()
 *    is an eventfd, readable while messages wait (libevent watches it with
 *    EV_READ|EV_PERSIST). A push writes it only when the queue was empty,
 *    and sl_queue_pop_all clears it before it takes the list, so a wake-up
 *    is never lost and a burst costs one write.
 *  - SL_QUEUE_COND for a worker thread that blocks: sl_queue_wait sleeps on
 *    a condition variable until messages wait or the queue is closed.
 *
 * A producer may wait for its message to be run (sl_queue_call: the
 * consumer answers with sl_queue_answer), which is how a REST thread waits
 * for the JobManager's loop.
 *
 * Bound: max > 0 makes sl_queue_push refuse with SL_AGAIN when max
 * messages wait, and sl_queue_push_wait block until there is room; max 0 is
 * unbounded, for queues whose producers are bounded by something else
 * (each user says what).
 *
 * Close: once sl_queue_close has run, every push and call is refused
 * (SL_ERR, the message untouched and still the caller's); what was queued
 * before stays for the consumer to take. Blocked producers and a waiting
 * consumer wake up.
 *
 * Threads: push, push_wait and call from any thread; pop_all, wait,
 * remove_if and answer from the consumer. The queue's mutex is a leaf: it
 * is never held while a message runs or while anything else is locked.
 */
#ifndef SL_QUEUE_H
#define SL_QUEUE_H

#include <stddef.h>

#include "sl.h"

/* The header a message embeds (anywhere: SL_QMSG_OF finds the message). */
typedef struct sl_qmsg {
    struct sl_qmsg *next;       /* the queue's link; the consumer may follow it */
    int type;                   /* a value of the queue's own enum */
    int waited;                 /* set by sl_queue_call: a thread waits for it */
    int done;                   /* 0 until answered: 1 answered, -1 refused */
} sl_qmsg;

/* The message struct that embeds `m` as its field `member`. */
#define SL_QMSG_OF(m, type, member) ((type *)(void *)((char *)(m) - offsetof(type, member)))

typedef enum {
    SL_QUEUE_EVENTFD = 1,       /* an event loop consumes: sl_queue_fd() */
    SL_QUEUE_COND = 2           /* a blocking worker consumes: sl_queue_wait() */
} sl_queue_wake;

typedef struct sl_queue sl_queue;

/* A queue named `name` (static text, for messages) with the given wake-up;
 * max 0 = unbounded. NULL with err when the eventfd cannot be made. */
sl_queue *sl_queue_new(const char *name, sl_queue_wake wake, size_t max, char *err, size_t errlen);
/* Free the queue (NULL: no-op). No thread may use it any more; messages
 * still queued are not freed (the owner drains it first). */
void sl_queue_destroy(sl_queue *q);

/* Any thread: append m (its link and flags are set here). SL_OK; SL_AGAIN
 * when the queue is full; SL_ERR once closed. Unless SL_OK, m is still the
 * caller's. */
int sl_queue_push(sl_queue *q, sl_qmsg *m);
/* As sl_queue_push, but waits while the queue is full: SL_OK or SL_ERR
 * (closed). Never on an event-loop thread. */
int sl_queue_push_wait(sl_queue *q, sl_qmsg *m);
/* Any thread but the consumer: push m (it stays the caller's) and wait
 * until the consumer answers it. SL_OK when run, SL_ERR when refused: the
 * queue was closed before it was queued, or the consumer answered SL_ERR
 * (an owner that closes a queue drains it and answers what waits). */
int sl_queue_call(sl_queue *q, sl_qmsg *m);
/* Consumer: m, a message taken from q, is done. For a waited message
 * (m->waited) this hands it back to its caller -- who may free it at once,
 * so the consumer must not touch it afterwards -- with SL_OK (run) or SL_ERR
 * (refused). Returns 1 when m was waited for (now the caller's), 0 when it
 * was not (still the consumer's to free). */
int sl_queue_answer(sl_queue *q, sl_qmsg *m, int rc);

/* Consumer: everything queued, oldest first, linked by next (NULL when
 * none); the eventfd is cleared first. */
sl_qmsg *sl_queue_pop_all(sl_queue *q);
/* Consumer of an SL_QUEUE_COND queue: as sl_queue_pop_all, but sleeps until
 * something is queued. NULL only when the queue is closed and empty. */
sl_qmsg *sl_queue_wait(sl_queue *q);
/* Consumer: unlink and return (oldest first) the queued messages for which
 * match(m, arg) is non-zero, e.g. those that point into something about
 * to be freed. */
sl_qmsg *sl_queue_remove_if(sl_queue *q, int (*match)(const sl_qmsg *m, void *arg), void *arg);

/* Refuse every push from now on and wake whoever waits (any thread). */
void sl_queue_close(sl_queue *q);
int sl_queue_closed(sl_queue *q);
/* SL_QUEUE_EVENTFD: the descriptor to watch for reading; else -1. */
int sl_queue_fd(const sl_queue *q);
size_t sl_queue_len(sl_queue *q);       /* messages waiting now */

#endif
