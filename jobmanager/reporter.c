/*
 * reporter.c -- the JobManager's side of Flink's Prometheus reporter.
 *
 * Every second the loop renders the figures it owns into Prometheus's text
 * format with Flink's names and labels and hands the text to the reporter's
 * server (core/prom.c), which serves the latest one: the cluster's
 * (flink_jobmanager_numRegisteredTaskManagers, _numRunningJobs,
 * _taskSlotsAvailable, _taskSlotsTotal) and, for each job not yet ended,
 * its checkpoint and restart metrics (flink_jobmanager_job_*, labelled
 * job_id and job_name), the same values as GET /jobs/:id/metrics.
 */
#include <string.h>
#include <unistd.h>

#include "jm.h"
#include "log.h"
#include "prom.h"

#define TAG "jm:prom"

static void render(jm *j)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    sl_prom_text t = {0};
    int ntm = 0, running = 0;
    for (jm_tm *tm = j->tms; tm; tm = tm->next) ntm++;
    for (jm_job *job = j->jobs; job; job = job->next) running += job->state == JOB_RUNNING;
    const char *const cl[] = {"host", host, NULL};
    sl_prom_sample(&t, "jobmanager_numRegisteredTaskManagers", ntm, cl);
    sl_prom_sample(&t, "jobmanager_numRunningJobs", running, cl);
    sl_prom_sample(&t, "jobmanager_taskSlotsAvailable", jm_slots_free(j), cl);
    sl_prom_sample(&t, "jobmanager_taskSlotsTotal", jm_slots_total(j), cl);
    static const char *const names[] = {
        "jobmanager_job_lastCheckpointDuration", "jobmanager_job_lastCheckpointSize",
        "jobmanager_job_lastCompletedCheckpointId", "jobmanager_job_numberOfCompletedCheckpoints",
        "jobmanager_job_numberOfFailedCheckpoints", "jobmanager_job_numberOfInProgressCheckpoints",
        "jobmanager_job_totalNumberOfCheckpoints", "jobmanager_job_numRestarts"};
    /* one name at a time, every job's sample under it */
    for (size_t k = 0; k < SL_ARRAY_LEN(names); k++)
        for (jm_job *job = j->jobs; job; job = job->next) {
            if (jm_job_state_terminal(job->state)) continue;
            const jm_checkpoint *lc = job->latest_completed;
            double v[] = {lc ? (double)(lc->end_ms - lc->trigger_ms) : -1,
                          lc ? (double)lc->state_size : -1,
                          lc ? (double)lc->id : -1,
                          job->cp_completed,
                          job->cp_failed,
                          job->pending != NULL,
                          job->cp_total,
                          job->restarts};
            const char *const jl[] = {"host", host, "job_id", job->id, "job_name", job->g->name, NULL};
            sl_prom_sample(&t, names[k], v[k], jl);
        }
    sl_prom_publish(j->prom, sl_prom_text_take(&t));
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    render(arg);
}

int jm_prom_start(jm *j, char *err, size_t errlen)
{
    if (!sl_prom_enabled(j->conf)) return SL_OK;
    j->prom = sl_prom_start(j->conf, err, errlen);
    if (!j->prom) return SL_ERR;
    render(j);
    j->prom_tick = event_new(j->base, -1, EV_PERSIST, on_tick, j);
    struct timeval tv = {1, 0};
    event_add(j->prom_tick, &tv);
    sl_info(TAG, "Prometheus reporter serving on port %d", sl_prom_port(j->prom));
    return SL_OK;
}

void jm_prom_stop(jm *j)
{
    if (j->prom_tick) event_free(j->prom_tick);
    j->prom_tick = NULL;
    sl_prom_stop(j->prom);
    j->prom = NULL;
}
