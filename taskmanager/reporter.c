/*
 * reporter.c -- the TaskManager's side of Flink's Prometheus reporter.
 *
 * On each heartbeat the network thread has just gathered every running
 * subtask's figures for the JobManager; the same figures go to the
 * reporter's server (core/prom.c) under Flink's task-scope names,
 * flink_taskmanager_job_task_<metric>, labelled as Flink labels them (host,
 * tm_id, job_id, job_name, task_id, task_name, subtask_index,
 * task_attempt_num); per chained operator, Flink's operator scope,
 * flink_taskmanager_job_task_operator_<metric> with operator_id (its uid)
 * and operator_name as well: numRecordsIn/Out, currentInputWatermark,
 * currentOutputWatermark, numLateRecordsDropped. REST shows the same
 * reports, as they reach the JobManager (the operator ones as
 * <subtask>.<operator name>.<metric> of the vertex).
 */
#include <string.h>

#include "prom.h"
#include "tm.h"

static const tm_deploy *find_deploy(const tm_net *n, const Sluice__SubtaskMetrics *m)
{
    for (const tm_deploy *d = n->deploys; d; d = d->next)
        if (!d->cancelled && d->attempt == m->attempt && m->job_id && !strcmp(d->job_id, m->job_id))
            return d;
    return NULL;
}

void tm_prom_publish(tm_net *n, const Sluice__Heartbeat *hb)
{
    static const char *const names[] = {
        "taskmanager_job_task_numRecordsIn", "taskmanager_job_task_numRecordsOut",
        "taskmanager_job_task_numBytesIn", "taskmanager_job_task_numBytesOut",
        "taskmanager_job_task_busyTimeMsPerSecond", "taskmanager_job_task_backPressuredTimeMsPerSecond",
        "taskmanager_job_task_idleTimeMsPerSecond", "taskmanager_job_task_accumulatedBusyTimeMs",
        "taskmanager_job_task_accumulatedBackPressuredTimeMs", "taskmanager_job_task_accumulatedIdleTimeMs",
        "taskmanager_job_task_buffers_inPoolUsage", "taskmanager_job_task_buffers_outPoolUsage",
        "taskmanager_job_task_currentInputWatermark", "taskmanager_job_task_currentOutputWatermark",
        "taskmanager_job_task_numLateRecordsDropped"};
    sl_prom_text t = {0};
    const char *host = n->host && *n->host ? n->host : "localhost";
    for (size_t k = 0; k < SL_ARRAY_LEN(names); k++)
        for (size_t i = 0; i < hb->n_metrics; i++) {
            const Sluice__SubtaskMetrics *m = hb->metrics[i];
            const tm_deploy *d = find_deploy(n, m);
            if (!d || m->chain >= (uint32_t)d->g->nchains) continue;
            const sl_chain *ch = &d->g->chains[m->chain];
            double v[] = {(double)m->records_in, (double)m->records_out, (double)m->bytes_in,
                          (double)m->bytes_out, m->busy_ms_per_s, m->backpressured_ms_per_s,
                          m->idle_ms_per_s, (double)m->busy_ms, (double)m->backpressured_ms,
                          (double)m->idle_ms, m->in_pool_usage, m->out_pool_usage,
                          (double)m->input_watermark, (double)m->output_watermark,
                          (double)m->late_dropped};
            char sub[16], att[16];
            snprintf(sub, sizeof sub, "%u", m->subtask);
            snprintf(att, sizeof att, "%u", m->attempt);
            const char *const labels[] = {"host", host, "tm_id", n->id, "job_id", d->job_id,
                                          "job_name", d->g->name, "task_id", ch->id,
                                          "task_name", ch->name, "subtask_index", sub,
                                          "task_attempt_num", att, NULL};
            sl_prom_sample(&t, names[k], v[k], labels);
        }
    static const char *const op_names[] = {
        "taskmanager_job_task_operator_numRecordsIn", "taskmanager_job_task_operator_numRecordsOut",
        "taskmanager_job_task_operator_numLateRecordsDropped",
        "taskmanager_job_task_operator_currentInputWatermark",
        "taskmanager_job_task_operator_currentOutputWatermark",
        "taskmanager_job_task_operator_numRecordsInErrors"};
    for (size_t k = 0; k < SL_ARRAY_LEN(op_names); k++)
        for (size_t i = 0; i < hb->n_metrics; i++) {
            const Sluice__SubtaskMetrics *m = hb->metrics[i];
            const tm_deploy *d = find_deploy(n, m);
            if (!d || m->chain >= (uint32_t)d->g->nchains) continue;
            const sl_chain *ch = &d->g->chains[m->chain];
            char sub[16], att[16];
            snprintf(sub, sizeof sub, "%u", m->subtask);
            snprintf(att, sizeof att, "%u", m->attempt);
            for (size_t q = 0; q < m->n_operators && q < (size_t)ch->n; q++) {
                const Sluice__OperatorMetrics *o = m->operators[q];
                const sl_vertex *v = &d->g->v[ch->vertices[q]];
                double vals[] = {(double)o->records_in, (double)o->records_out, (double)o->late_dropped,
                                 (double)o->input_watermark, (double)o->output_watermark,
                                 (double)o->records_in_errors};
                const char *const labels[] = {"host", host, "tm_id", n->id, "job_id", d->job_id,
                                              "job_name", d->g->name, "task_id", ch->id,
                                              "task_name", ch->name, "subtask_index", sub,
                                              "task_attempt_num", att, "operator_id", v->uid,
                                              "operator_name", v->name, NULL};
                sl_prom_sample(&t, op_names[k], vals[k], labels);
            }
        }
    sl_prom_publish(n->prom, sl_prom_text_take(&t));
}
