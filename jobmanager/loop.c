/*
 * loop.c -- the op queue: how other threads hand work to the loop thread.
 *
 * The loop thread owns all JobManager state (jm.h). A REST thread that needs
 * an answer from that state, or the I/O worker with a result, puts a typed
 * op (jm_op_kind: who sends it, who runs it) on this queue and activates
 * op_event; the loop runs the queue in one callback. jm_op_call() waits
 * on op_done until the loop has answered -- librdkafka's op queues are the
 * model. op_lock is a leaf: it is held only to link or unlink ops and set
 * flags, never while an op runs, so nothing can wait on anything while
 * holding it. When the loop has stopped (jm_ops_close), posted ops are
 * refused at once, so no REST thread waits for a loop that is gone.
 */
#include <string.h>

#include "jm.h"
#include "ha.h"
#include "log.h"

#define TAG "jm:loop"

int jm_on_loop(const jm *j) { return pthread_equal(pthread_self(), j->loop_thread); }

static void run_op(jm *j, jm_op *op)
{
    switch (op->kind) {
    case JM_OP_REST: jm_rest_on_loop(j, op->u.rest.ctx); break;
    case JM_OP_JAR_RUN: jm_jars_on_loop(j, op->u.rest.ctx); break;
    case JM_OP_CP_WRITTEN: jm_cp_on_written(j, op); break;
    case JM_OP_HA: jm_ha_on_loop(j, op); break;
    }
}

/* The loop: take everything queued, run it in order, answer the waiters. */
static void on_ops(evutil_socket_t fd, short what, void *arg)
{
    jm *j = arg;
    pthread_mutex_lock(&j->op_lock);
    jm_op *list = j->op_head;
    j->op_head = j->op_tail = NULL;
    pthread_mutex_unlock(&j->op_lock);
    int answered = 0;
    while (list) {
        jm_op *op = list;
        list = op->next;
        op->next = NULL;
        run_op(j, op);
        if (op->waited) {
            pthread_mutex_lock(&j->op_lock);
            op->done = 1; /* the waiter may free op from here on */
            pthread_mutex_unlock(&j->op_lock);
            answered = 1;
        } else {
            free(op);
        }
    }
    if (answered) pthread_cond_broadcast(&j->op_done);
}

int jm_ops_init(jm *j)
{
    pthread_mutex_init(&j->op_lock, NULL);
    pthread_cond_init(&j->op_done, NULL);
    j->op_event = event_new(j->base, -1, 0, on_ops, j);
    return j->op_event ? SL_OK : SL_ERR;
}

/* Link op under op_lock; SL_ERR (op untouched) once closed. */
static int enqueue(jm *j, jm_op *op)
{
    op->next = NULL;
    pthread_mutex_lock(&j->op_lock);
    if (j->op_closed) {
        pthread_mutex_unlock(&j->op_lock);
        return SL_ERR;
    }
    if (j->op_tail) j->op_tail->next = op;
    else j->op_head = op;
    j->op_tail = op;
    /* under op_lock, so jm_ops_close cannot free the event in between;
     * libevent's base lock is taken inside, after ours, and the loop never
     * holds it while taking op_lock */
    event_active(j->op_event, EV_TIMEOUT, 0);
    pthread_mutex_unlock(&j->op_lock);
    return SL_OK;
}

void jm_op_post(jm *j, jm_op *op)
{
    op->waited = 0;
    if (enqueue(j, op) != SL_OK) free(op);
}

int jm_op_call(jm *j, jm_op *op)
{
    SL_ASSERT(!jm_on_loop(j)); /* the loop would wait for itself */
    op->waited = 1;
    op->done = 0;
    if (enqueue(j, op) != SL_OK) return SL_ERR;
    pthread_mutex_lock(&j->op_lock);
    while (!op->done) pthread_cond_wait(&j->op_done, &j->op_lock);
    int rc = op->done > 0 ? SL_OK : SL_ERR;
    pthread_mutex_unlock(&j->op_lock);
    return rc;
}

void jm_ops_close(jm *j)
{
    pthread_mutex_lock(&j->op_lock);
    j->op_closed = 1;
    jm_op *list = j->op_head;
    j->op_head = j->op_tail = NULL;
    for (jm_op *op = list, *next; op; op = next) {
        next = op->next;
        if (op->waited) op->done = -1;
        else free(op);
    }
    pthread_mutex_unlock(&j->op_lock);
    pthread_cond_broadcast(&j->op_done);
}

void jm_ops_destroy(jm *j)
{
    if (j->op_event) event_free(j->op_event);
    j->op_event = NULL;
    pthread_cond_destroy(&j->op_done);
    pthread_mutex_destroy(&j->op_lock);
}
