/*
 * test_queue.c -- lib/queue.c: FIFO order, pop-all, close, the eventfd and
 * condition-variable wake-ups, call and answer, two producers, the bound.
 */
#include <poll.h>
#include <pthread.h>

#include "sl_test.h"
#include "queue.h"

typedef struct msg {
    int producer;
    int seq;
    sl_qmsg qm;
} msg;

enum { T_PLAIN = 1, T_OTHER = 2 };

static msg *msg_new(int producer, int seq)
{
    msg *m = sl_calloc(1, sizeof *m);
    m->producer = producer;
    m->seq = seq;
    m->qm.type = T_PLAIN;
    return m;
}

static int readable(int fd)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    return poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN);
}

static void free_list(sl_qmsg *l)
{
    while (l) {
        sl_qmsg *next = l->next;
        free(SL_QMSG_OF(l, msg, qm));
        l = next;
    }
}

static void test_fifo_pop_all_and_eventfd(void)
{
    char err[200];
    sl_queue *q = sl_queue_new("test", SL_QUEUE_EVENTFD, 0, err, sizeof err);
    CHECK(q != NULL);
    int fd = sl_queue_fd(q);
    CHECK(fd >= 0);
    CHECK(!readable(fd));
    CHECK(sl_queue_pop_all(q) == NULL);
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(sl_queue_push(q, &msg_new(0, i)->qm), SL_OK);
    CHECK_EQ_INT(sl_queue_len(q), 5);
    CHECK(readable(fd));
    sl_qmsg *l = sl_queue_pop_all(q);
    CHECK(!readable(fd)); /* cleared by the drain */
    CHECK_EQ_INT(sl_queue_len(q), 0);
    int n = 0;
    for (sl_qmsg *m = l; m; m = m->next, n++) {
        CHECK_EQ_INT(SL_QMSG_OF(m, msg, qm)->seq, n);
        CHECK_EQ_INT(m->type, T_PLAIN);
    }
    CHECK_EQ_INT(n, 5);
    free_list(l);
    CHECK(sl_queue_pop_all(q) == NULL);
    /* readable again after the next push, once */
    CHECK_EQ_INT(sl_queue_push(q, &msg_new(0, 9)->qm), SL_OK);
    CHECK(readable(fd));
    l = sl_queue_pop_all(q);
    CHECK(l && !l->next && SL_QMSG_OF(l, msg, qm)->seq == 9);
    CHECK(!readable(fd));
    free_list(l);
    sl_queue_destroy(q);
    sl_queue_destroy(NULL);
}

static void test_close_refuses_pushes_keeps_queued(void)
{
    char err[200];
    sl_queue *q = sl_queue_new("test", SL_QUEUE_EVENTFD, 0, err, sizeof err);
    msg *a = msg_new(0, 1), *b = msg_new(0, 2);
    CHECK_EQ_INT(sl_queue_push(q, &a->qm), SL_OK);
    CHECK(!sl_queue_closed(q));
    sl_queue_close(q);
    CHECK(sl_queue_closed(q));
    CHECK_EQ_INT(sl_queue_push(q, &b->qm), SL_ERR);       /* b still ours */
    CHECK_EQ_INT(sl_queue_push_wait(q, &b->qm), SL_ERR);
    CHECK_EQ_INT(sl_queue_call(q, &b->qm), SL_ERR);
    free(b);
    sl_qmsg *l = sl_queue_pop_all(q); /* what was queued before stays */
    CHECK(l == &a->qm && !l->next);
    free_list(l);
    sl_queue_destroy(q);
}

static int of_type(const sl_qmsg *m, void *arg) { return m->type == *(int *)arg; }

/* remove_if takes the matching messages, oldest first, and leaves the rest
 * in order; pushes after it append behind what stayed. */
static void test_remove_if(void)
{
    char err[200];
    sl_queue *q = sl_queue_new("test", SL_QUEUE_EVENTFD, 0, err, sizeof err);
    for (int i = 0; i < 6; i++) {
        msg *m = msg_new(0, i);
        m->qm.type = i % 2 ? T_OTHER : T_PLAIN;
        CHECK_EQ_INT(sl_queue_push(q, &m->qm), SL_OK);
    }
    int other = T_OTHER;
    sl_qmsg *odd = sl_queue_remove_if(q, of_type, &other);
    int seqs[3], n = 0;
    for (sl_qmsg *m = odd; m && n < 3; m = m->next) seqs[n++] = SL_QMSG_OF(m, msg, qm)->seq;
    CHECK_EQ_INT(n, 3);
    CHECK(seqs[0] == 1 && seqs[1] == 3 && seqs[2] == 5);
    free_list(odd);
    CHECK_EQ_INT(sl_queue_len(q), 3);
    CHECK_EQ_INT(sl_queue_push(q, &msg_new(0, 6)->qm), SL_OK); /* the tail is right */
    sl_qmsg *l = sl_queue_pop_all(q);
    n = 0;
    for (sl_qmsg *m = l; m; m = m->next) {
        int want = n < 3 ? 2 * n : 6;
        CHECK_EQ_INT(SL_QMSG_OF(m, msg, qm)->seq, want);
        n++;
    }
    CHECK_EQ_INT(n, 4);
    free_list(l);
    sl_queue_destroy(q);
}

/* ---- threads ------------------------------------------------------------ */

#define PER_PRODUCER 20000

typedef struct {
    sl_queue *q;
    int id;
    int refused;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (int i = 0; i < PER_PRODUCER; i++) {
        msg *m = msg_new(p->id, i);
        if (sl_queue_push_wait(p->q, &m->qm) != SL_OK) {
            free(m);
            p->refused++;
        }
    }
    return NULL;
}

/* Two producers against a consumer woken by the eventfd: every message
 * arrives once, each producer's in its order. */
static void test_two_producers_eventfd(void)
{
    char err[200];
    sl_queue *q = sl_queue_new("test", SL_QUEUE_EVENTFD, 0, err, sizeof err);
    producer p[2] = {{q, 0, 0}, {q, 1, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, produce, &p[i]);
    int next[2] = {0, 0}, got = 0, bad = 0;
    while (got < 2 * PER_PRODUCER) {
        struct pollfd pf = {.fd = sl_queue_fd(q), .events = POLLIN};
        if (poll(&pf, 1, 5000) != 1) break; /* a lost wake-up: fails below */
        sl_qmsg *l = sl_queue_pop_all(q);
        while (l) {
            msg *m = SL_QMSG_OF(l, msg, qm);
            l = l->next;
            if (m->seq != next[m->producer]) bad++;
            next[m->producer] = m->seq + 1;
            got++;
            free(m);
        }
    }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(got, 2 * PER_PRODUCER);
    CHECK_EQ_INT(next[0], PER_PRODUCER);
    CHECK_EQ_INT(next[1], PER_PRODUCER);
    CHECK(sl_queue_pop_all(q) == NULL);
    CHECK(!readable(sl_queue_fd(q)));
    sl_queue_destroy(q);
}

/* The same against a blocking consumer on a bounded queue (producers wait
 * for room); close wakes the consumer once everything is taken. */
static void test_two_producers_cond_bounded(void)
{
    char err[200];
    sl_queue *q = sl_queue_new("test", SL_QUEUE_COND, 16, err, sizeof err);
    CHECK_EQ_INT(sl_queue_fd(q), -1);
    producer p[2] = {{q, 0, 0}, {q, 1, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, produce, &p[i]);
    int next[2] = {0, 0}, got = 0, bad = 0, over = 0;
    sl_qmsg *l;
    while (got < 2 * PER_PRODUCER && (l = sl_queue_wait(q))) {
        int n = 0;
        while (l) {
            msg *m = SL_QMSG_OF(l, msg, qm);
            l = l->next;
            if (m->seq != next[m->producer]) bad++;
            next[m->producer] = m->seq + 1;
            got++;
            n++;
            free(m);
        }
        if (n > 16) over++; /* never more than the bound at once */
    }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(over, 0);
    CHECK_EQ_INT(got, 2 * PER_PRODUCER);
    CHECK_EQ_INT(p[0].refused + p[1].refused, 0);
    sl_queue_close(q);
    CHECK(sl_queue_wait(q) == NULL); /* closed and empty: the worker ends */
    sl_queue_destroy(q);
}

/* A full bounded queue refuses a plain push with SL_AGAIN (the message is
 * still the caller's) and takes it once the consumer made room; a producer
 * blocked for room is released by close with SL_ERR. */
static void test_bound_refuses_then_blocks_until_close(void)
{
    char err[200];
    sl_queue *q = sl_queue_new("test", SL_QUEUE_COND, 2, err, sizeof err);
    msg *a = msg_new(0, 0), *b = msg_new(0, 1), *c = msg_new(0, 2);
    CHECK_EQ_INT(sl_queue_push(q, &a->qm), SL_OK);
    CHECK_EQ_INT(sl_queue_push(q, &b->qm), SL_OK);
    CHECK_EQ_INT(sl_queue_push(q, &c->qm), SL_AGAIN);
    CHECK_EQ_INT(sl_queue_len(q), 2);
    free_list(sl_queue_pop_all(q));
    CHECK_EQ_INT(sl_queue_push(q, &c->qm), SL_OK);
    /* fill it, then a blocking producer waits until close */
    msg *d = msg_new(0, 3);
    CHECK_EQ_INT(sl_queue_push(q, &d->qm), SL_OK);
    producer p = {q, 1, 0};
    pthread_t t;
    pthread_create(&t, NULL, produce, &p); /* blocks on its first push */
    usleep(50 * 1000);
    CHECK_EQ_INT(sl_queue_len(q), 2);
    sl_queue_close(q);
    pthread_join(t, NULL);
    CHECK_EQ_INT(p.refused, PER_PRODUCER);
    free_list(sl_queue_pop_all(q));
    sl_queue_destroy(q);
}

/* ---- call and answer ----------------------------------------------------- */

typedef struct {
    sl_queue *q;
    msg m;
    int rc;
} caller;

static void *call_thread(void *arg)
{
    caller *c = arg;
    c->m.qm.type = T_PLAIN;
    c->rc = sl_queue_call(c->q, &c->m.qm);
    return NULL;
}

static void test_call_answered_and_refused(void)
{
    char err[200];
    sl_queue *q = sl_queue_new("test", SL_QUEUE_COND, 0, err, sizeof err);
    caller c1 = {.q = q, .rc = 99}, c2 = {.q = q, .rc = 99};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, call_thread, &c1);
    sl_qmsg *l = sl_queue_wait(q);
    CHECK(l == &c1.m.qm && !l->next && l->waited);
    c1.m.seq = 42; /* the consumer's work, seen by the caller after the answer */
    CHECK_EQ_INT(sl_queue_answer(q, l, SL_OK), 1);
    pthread_join(t1, NULL);
    CHECK_EQ_INT(c1.rc, SL_OK);
    CHECK_EQ_INT(c1.m.seq, 42);
    /* a posted (not waited) message stays the consumer's */
    msg *posted = msg_new(0, 0);
    CHECK_EQ_INT(sl_queue_push(q, &posted->qm), SL_OK);
    l = sl_queue_pop_all(q);
    CHECK_EQ_INT(sl_queue_answer(q, l, SL_OK), 0);
    free(posted);
    /* the owner closes and answers what still waits with a refusal */
    pthread_create(&t2, NULL, call_thread, &c2);
    while (sl_queue_len(q) == 0) usleep(1000);
    sl_queue_close(q);
    l = sl_queue_pop_all(q);
    CHECK(l == &c2.m.qm);
    CHECK_EQ_INT(sl_queue_answer(q, l, SL_ERR), 1);
    pthread_join(t2, NULL);
    CHECK_EQ_INT(c2.rc, SL_ERR);
    sl_queue_destroy(q);
}

SL_TEST_MAIN(SL_TEST(test_fifo_pop_all_and_eventfd), SL_TEST(test_close_refuses_pushes_keeps_queued),
             SL_TEST(test_remove_if), SL_TEST(test_two_producers_eventfd),
             SL_TEST(test_two_producers_cond_bounded), SL_TEST(test_bound_refuses_then_blocks_until_close),
             SL_TEST(test_call_answered_and_refused))
