/*
 * loop.c -- the op queue: how other threads hand work to the loop thread.
 *
 * The loop thread owns all JobManager state (jm.h). A REST thread that needs
 * an answer from that state, the I/O worker with a result, or ZooKeeper's
 * thread with an event puts a typed op (jm_op_kind: who sends it, who runs
 * it) on j->ops, an sl_queue (lib/queue.h) whose eventfd the loop watches;
 * the loop takes the whole queue and runs it in one callback. jm_op_call()
 * waits until the loop has answered -- librdkafka's op queues are the model.
 * The queue's lock is a leaf, never held while an op runs. When the loop
 * has stopped (jm_ops_close), the queue is closed: posts are refused, and
 * callers are answered at once with a refusal, so no REST thread waits for a
 * loop that is gone.
 *
 * Unbounded: a REST op is waited for, so there are at most as many as REST
 * threads; a JM_OP_CP_WRITTEN answers one queued I/O job; a JM_OP_HA is one
 * ZooKeeper session change or fired watch, and the loop re-arms a watch only
 * after it ran. None of them can pile up faster than the loop runs them.
 */
#include <string.h>

#include "jm.h"
#include "ha.h"
#include "log.h"

#define TAG "jm:loop"

int jm_on_loop(const jm *j) { return pthread_equal(pthread_self(), j->loop_thread); }

static void run_op(jm *j, jm_op *op)
{
    switch ((jm_op_kind)op->qm.type) {
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
    sl_qmsg *list = sl_queue_pop_all(j->ops);
    while (list) {
        jm_op *op = SL_QMSG_OF(list, jm_op, qm);
        list = list->next;
        run_op(j, op);
        if (!sl_queue_answer(j->ops, &op->qm, SL_OK)) free(op); /* else the waiter's again */
    }
}

int jm_ops_init(jm *j)
{
    char err[200];
    j->ops = sl_queue_new("JobManager loop", SL_QUEUE_EVENTFD, 0, err, sizeof err);
    if (!j->ops) {
        sl_error(TAG, "%s", err);
        return SL_ERR;
    }
    j->op_event = event_new(j->base, sl_queue_fd(j->ops), EV_READ | EV_PERSIST, on_ops, j);
    return j->op_event && event_add(j->op_event, NULL) == 0 ? SL_OK : SL_ERR;
}

void jm_op_post(jm *j, jm_op *op)
{
    if (sl_queue_push(j->ops, &op->qm) != SL_OK) free(op);
}

int jm_op_call(jm *j, jm_op *op)
{
    SL_ASSERT(!jm_on_loop(j)); /* the loop would wait for itself */
    return sl_queue_call(j->ops, &op->qm);
}

void jm_ops_close(jm *j)
{
    sl_queue_close(j->ops);
    sl_qmsg *list = sl_queue_pop_all(j->ops);
    while (list) {
        jm_op *op = SL_QMSG_OF(list, jm_op, qm);
        list = list->next;
        if (!sl_queue_answer(j->ops, &op->qm, SL_ERR)) free(op);
    }
}

void jm_ops_destroy(jm *j)
{
    if (j->op_event) event_free(j->op_event);
    j->op_event = NULL;
    sl_queue_destroy(j->ops);
    j->ops = NULL;
}
