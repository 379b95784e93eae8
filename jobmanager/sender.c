/*
 * sender.c -- every message the JobManager sends to a TaskManager.
 *
 * Only the loop thread writes sockets: each function here checks that
 * (SL_ASSERT) and queues one frame into the connection's bufferevent,
 * which libevent flushes when the socket is writable. A TaskManager without
 * a live connection is skipped: it cannot be told anything, and the
 * heartbeat timeout or its reconnection settles what it missed. The
 * scheduler and the checkpoint coordinator fill messages that carry their
 * own state (DeployJob in scheduler.c) and hand them here; the small ones
 * (cancel, trigger, notify) are built here from the job.
 */
#include <string.h>
#include <event2/bufferevent.h>

#include "jm.h"
#include "ha.h"
#include "frame.h"

void jm_send_conn(jm_conn *c, Sluice__Envelope *env)
{
    SL_ASSERT(jm_on_loop(c->jm));
    sl_frame_push(bufferevent_get_output(c->bev), env);
}

void jm_send(jm_tm *tm, Sluice__Envelope *env)
{
    if (!tm || !tm->conn) return;
    if (!jm_ha_may_act(tm->conn->jm)) return; /* fenced: not the confirmed leader */
    jm_send_conn(tm->conn, env);
}

void jm_send_job(jm *j, jm_job *job, Sluice__Envelope *env)
{
    for (jm_tm *tm = j->tms; tm; tm = tm->next)
        for (int s = 0; s < job->nslots; s++)
            if (job->slot_tm[s] == tm) {
                jm_send(tm, env);
                break;
            }
}

void jm_send_cancel(jm *j, jm_job *job)
{
    Sluice__CancelJob cj = SLUICE__CANCEL_JOB__INIT;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    cj.job_id = job->id;
    cj.attempt = job->attempt;
    env.msg_case = SLUICE__ENVELOPE__MSG_CANCEL;
    env.cancel = &cj;
    jm_send_job(j, job, &env);
}

void jm_send_trigger(jm *j, jm_job *job, const jm_checkpoint *cp)
{
    Sluice__TriggerCheckpoint tc = SLUICE__TRIGGER_CHECKPOINT__INIT;
    tc.job_id = job->id;
    tc.attempt = job->attempt;
    tc.checkpoint_id = cp->id;
    tc.timestamp = cp->trigger_ms;
    tc.is_savepoint = cp->type != CP_CHECKPOINT;
    tc.dir = cp->dir;
    tc.stop = cp->stop;
    tc.drain = cp->drain;
    /* savepoints stay aligned, as Flink's */
    tc.unaligned = cp->type == CP_CHECKPOINT && job->set.cp_unaligned;
    tc.aligned_timeout_ms = tc.unaligned ? job->set.cp_aligned_timeout_ms : 0;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_TRIGGER;
    env.trigger = &tc;
    jm_send_job(j, job, &env);
}

void jm_send_notify(jm *j, jm_job *job, uint64_t cp_id, int completed)
{
    Sluice__NotifyCheckpoint nc = SLUICE__NOTIFY_CHECKPOINT__INIT;
    nc.job_id = job->id;
    nc.attempt = job->attempt;
    nc.checkpoint_id = cp_id;
    nc.completed = completed;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_NOTIFY;
    env.notify = &nc;
    jm_send_job(j, job, &env);
}
