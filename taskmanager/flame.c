/*
 * flame.c -- the TaskManager's side of Flink's flame graphs: the
 * JobManager asks (ProcessInfoRequest STACK_SAMPLES) for stack samples of
 * the task threads of one chain of a deployment; the network thread looks
 * up their thread ids and queues the request (tm_flame) for the flame
 * sampler thread, which samples them (lib/stack_sample.c, about num_samples x
 * delay_ms) and hands the answer back through the inbox (TM_OP_SAMPLED),
 * where the network thread sends the ProcessInfoReply. Thread dumps
 * (THREAD_DUMP, every thread's stack: lib/proc_info.c) take the same way.
 * Neither the task threads nor the network thread wait for a sampling.
 */
#include <string.h>

#include "tm.h"
#include "frame.h"
#include "log.h"
#include "proc_info.h"
#include "stack_sample.h"

#define TAG "tm:flame"
#define FLAME_QUEUE_MAX 16       /* requests waiting for the sampler */
#define FLAME_REPLY_MAX (8u << 20) /* bytes of samples one reply may carry */

static void flame_free(tm_flame *f)
{
    if (!f) return;
    free(f->tids);
    free(f->json);
    free(f->error);
    free(f);
}

static void *flame_main(void *arg)
{
    tm_net *n = arg;
    sl_qmsg *list;
    pthread_setname_np(pthread_self(), "flame-sampler"); /* its name in thread dumps */
    while ((list = sl_queue_wait(n->flames))) { /* NULL: stopped, and nothing left */
        while (list) {
            tm_flame *f = SL_QMSG_OF(list, tm_flame, qm);
            list = list->next;
            char err[300];
            json_t *res = NULL;
            if (!__atomic_load_n(&n->flame_stop, __ATOMIC_ACQUIRE) && f->dump)
                res = sl_proc_thread_dump(
                    (int)sl_config_int(n->conf, "cluster.thread-dump.stacktrace-max-depth"));
            else if (!__atomic_load_n(&n->flame_stop, __ATOMIC_ACQUIRE))
                res = sl_stack_sample(f->tids, f->ntids, f->num, f->delay_ms, f->depth,
                                        &n->flame_stop, err, sizeof err);
            else
                snprintf(err, sizeof err, "the TaskManager is stopping");
            if (res) f->json = json_dumps(res, JSON_COMPACT);
            else f->error = sl_strdup(err);
            if (f->json && strlen(f->json) > FLAME_REPLY_MAX) { /* a control frame is at most 16 MiB */
                f->error = sl_sprintf("the stack samples take %zu bytes, more than %u: lower "
                                      "rest.flamegraph.num-samples or rest.flamegraph.stack-depth",
                                      strlen(f->json), FLAME_REPLY_MAX);
                free(f->json);
                f->json = NULL;
            }
            json_decref(res);
            f->qm.type = TM_OP_SAMPLED;
            if (sl_queue_push(n->inbox, &f->qm) != SL_OK) flame_free(f);
        }
    }
    return NULL;
}

int tm_flame_start(tm_net *n, char *err, size_t errlen)
{
    if (sl_stack_init(err, errlen) != SL_OK) return SL_ERR;
    if (!(n->flames = sl_queue_new("flame sampler", SL_QUEUE_COND, FLAME_QUEUE_MAX, err, errlen)))
        return SL_ERR;
    int e = pthread_create(&n->flame_thread, NULL, flame_main, n);
    if (e) return sl_seterr(err, errlen, "cannot start the flame sampler: %s", strerror(e));
    n->flame_started = 1;
    return SL_OK;
}

/* Before the inbox's last run: a sampling under way ends after its round;
 * requests not begun are dropped; answers wait in the inbox. */
void tm_flame_stop(tm_net *n)
{
    if (!n->flame_started) return;
    __atomic_store_n(&n->flame_stop, 1, __ATOMIC_RELEASE);
    sl_queue_close(n->flames);
    pthread_join(n->flame_thread, NULL);
    n->flame_started = 0;
    sl_queue_destroy(n->flames);
    n->flames = NULL;
}

static int flame_push(tm_net *n, tm_flame *f, char *err, size_t errlen)
{
    int rc = sl_queue_push(n->flames, &f->qm);
    if (rc != SL_OK) {
        flame_free(f);
        return sl_seterr(err, errlen, "TaskManager %s: %s", n->id,
                         rc == SL_AGAIN ? "too many stack samplings are waiting"
                                        : "the flame sampler has stopped");
    }
    return SL_OK;
}

int tm_flame_request(tm_net *n, const Sluice__ProcessInfoRequest *rq, char *err, size_t errlen)
{
    tm_deploy *d = NULL;
    for (tm_deploy *x = n->deploys; x && !d; x = x->next)
        if (!strcmp(x->job_id, rq->job_id ? rq->job_id : "") && x->attempt == rq->attempt) d = x;
    if (!d)
        return sl_seterr(err, errlen, "job %s (attempt %u) is not deployed on TaskManager %s",
                         rq->job_id, rq->attempt, n->id);
    if (!n->flame_started) return sl_seterr(err, errlen, "the flame sampler is not running");
    if (rq->num_samples < 1 || rq->num_samples > 10000 || rq->delay_ms > 60000 ||
        rq->stack_depth < 1)
        return sl_seterr(err, errlen, "bad stack sample request: %u samples %u ms apart, depth %u",
                         rq->num_samples, rq->delay_ms, rq->stack_depth);
    tm_flame *f = sl_calloc(1, sizeof *f);
    f->id = rq->id;
    f->tids = sl_calloc((size_t)(d->ntasks ? d->ntasks : 1), sizeof *f->tids);
    for (int i = 0; i < d->ntasks; i++) {
        tm_task *t = &d->tasks[i];
        int tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
        if (t->chain == (int)rq->chain && tid > 0 && (!rq->one_subtask || t->subtask == (int)rq->subtask))
            f->tids[f->ntids++] = tid;
    }
    f->num = (int)rq->num_samples;
    f->delay_ms = (int)rq->delay_ms;
    f->depth = (int)rq->stack_depth;
    return flame_push(n, f, err, errlen);
}

int tm_flame_dump(tm_net *n, uint64_t id, char *err, size_t errlen)
{
    if (!n->flame_started) return sl_seterr(err, errlen, "the flame sampler is not running");
    tm_flame *f = sl_calloc(1, sizeof *f);
    f->id = id;
    f->dump = 1;
    return flame_push(n, f, err, errlen);
}

void tm_flame_done(tm_net *n, tm_flame *f)
{
    if (n->jm && !n->stopping) {
        Sluice__ProcessInfoReply out = SLUICE__PROCESS_INFO_REPLY__INIT;
        out.id = f->id;
        out.json = f->json ? f->json : (char *)"";
        out.error = f->error ? f->error : (char *)"";
        Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
        env.msg_case = SLUICE__ENVELOPE__MSG_PROCESS_INFO_REPLY;
        env.process_info_reply = &out;
        sl_frame_push(bufferevent_get_output(n->jm), &env);
    }
    flame_free(f);
}
