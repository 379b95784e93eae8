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
 * currentOutputWatermark, numLateRecordsDropped. With buffer debloating
 * on, debloatedBufferSize and estimatedTimeToConsumeBuffersMs per consumer
 * task; with latency markers on, the latency histograms as summaries in
 * Flink's job scope (publish_latency). REST shows the same reports, as
 * they reach the JobManager (the operator ones as
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

/* Latency histograms, in Flink's job scope: their groups (source_id,
 * source_subtask_index by granularity, then operator_id and
 * operator_subtask_index) become both the name and the labels. */
static void publish_latency(tm_net *n, const Sluice__Heartbeat *hb, sl_prom_text *t, const char *host)
{
    static const char *const names[] = {
        "taskmanager_job_latency_operator_id_operator_subtask_index_latency",
        "taskmanager_job_latency_source_id_operator_id_operator_subtask_index_latency",
        "taskmanager_job_latency_source_id_source_subtask_index_operator_id_operator_subtask_index_latency"};
    for (size_t i = 0; i < hb->n_metrics; i++) {
        const Sluice__SubtaskMetrics *m = hb->metrics[i];
        const tm_deploy *d = find_deploy(n, m);
        if (!d || m->chain >= (uint32_t)d->g->nchains) continue;
        const sl_chain *ch = &d->g->chains[m->chain];
        for (size_t h = 0; h < m->n_latency; h++) {
            const Sluice__LatencyHistogram *x = m->latency[h];
            if (x->op >= (uint32_t)ch->n || x->source >= d->g->nv) continue;
            int gran = x->source < 0 ? 0 : x->source_subtask < 0 ? 1 : 2;
            char sub[16], srcsub[16];
            snprintf(sub, sizeof sub, "%u", m->subtask);
            snprintf(srcsub, sizeof srcsub, "%d", x->source_subtask);
            const char *labels[17];
            int k = 0;
            labels[k++] = "host", labels[k++] = host;
            labels[k++] = "tm_id", labels[k++] = n->id;
            labels[k++] = "job_id", labels[k++] = d->job_id;
            labels[k++] = "job_name", labels[k++] = d->g->name;
            if (gran >= 1) labels[k++] = "source_id", labels[k++] = d->g->v[x->source].uid;
            if (gran == 2) labels[k++] = "source_subtask_index", labels[k++] = srcsub;
            labels[k++] = "operator_id", labels[k++] = d->g->v[ch->vertices[x->op]].uid;
            labels[k++] = "operator_subtask_index", labels[k++] = sub;
            labels[k] = NULL;
            const double q[] = {x->median, x->p75, x->p95, x->p98, x->p99, x->p999};
            sl_prom_summary(t, names[gran], x->count, q, labels);
        }
    }
}

/* A subtask's labels in Flink's task scope (host, tm_id, job, task, subtask,
 * attempt), with room for an operator's two after them. */
typedef struct task_scope {
    const tm_deploy *d;
    const sl_chain *ch;
    char sub[16], att[16];
    const char *labels[21];
} task_scope;

#define TASK_LABELS 16 /* the task scope's labels and values */

/* The scope of m's subtask, or 0 when its job or chain is not (or no longer) here. */
static int task_scope_of(tm_net *n, const Sluice__SubtaskMetrics *m, const char *host, task_scope *s)
{
    s->d = find_deploy(n, m);
    if (!s->d || m->chain >= (uint32_t)s->d->g->nchains) return 0;
    s->ch = &s->d->g->chains[m->chain];
    snprintf(s->sub, sizeof s->sub, "%u", m->subtask);
    snprintf(s->att, sizeof s->att, "%u", m->attempt);
    const char *const l[TASK_LABELS] = {"host", host, "tm_id", n->id, "job_id", s->d->job_id,
                                        "job_name", s->d->g->name, "task_id", s->ch->id,
                                        "task_name", s->ch->name, "subtask_index", s->sub,
                                        "task_attempt_num", s->att};
    memcpy(s->labels, l, sizeof l);
    s->labels[TASK_LABELS] = NULL;
    return 1;
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
            task_scope sc;
            if (!task_scope_of(n, m, host, &sc)) continue;
            double v[] = {(double)m->records_in, (double)m->records_out, (double)m->bytes_in,
                          (double)m->bytes_out, m->busy_ms_per_s, m->backpressured_ms_per_s,
                          m->idle_ms_per_s, (double)m->busy_ms, (double)m->backpressured_ms,
                          (double)m->idle_ms, m->in_pool_usage, m->out_pool_usage,
                          (double)m->input_watermark, (double)m->output_watermark,
                          (double)m->late_dropped};
            sl_prom_sample(&t, names[k], v[k], sc.labels);
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
            task_scope sc;
            if (!task_scope_of(n, m, host, &sc)) continue;
            for (size_t q = 0; q < m->n_operators && q < (size_t)sc.ch->n; q++) {
                const Sluice__OperatorMetrics *o = m->operators[q];
                const sl_vertex *v = &sc.d->g->v[sc.ch->vertices[q]];
                double vals[] = {(double)o->records_in, (double)o->records_out, (double)o->late_dropped,
                                 (double)o->input_watermark, (double)o->output_watermark,
                                 (double)o->records_in_errors};
                sc.labels[TASK_LABELS] = "operator_id";
                sc.labels[TASK_LABELS + 1] = v->uid;
                sc.labels[TASK_LABELS + 2] = "operator_name";
                sc.labels[TASK_LABELS + 3] = v->name;
                sc.labels[TASK_LABELS + 4] = NULL;
                sl_prom_sample(&t, op_names[k], vals[k], sc.labels);
            }
        }
    /* buffer debloating, per consumer task (debloat.h) */
    static const char *const db_names[] = {"taskmanager_job_task_debloatedBufferSize",
                                           "taskmanager_job_task_estimatedTimeToConsumeBuffersMs"};
    for (size_t k = 0; k < SL_ARRAY_LEN(db_names); k++)
        for (size_t i = 0; i < hb->n_metrics; i++) {
            const Sluice__SubtaskMetrics *m = hb->metrics[i];
            task_scope sc;
            if (!m->debloated_buffer_size || !task_scope_of(n, m, host, &sc) || !sc.d->debloat) continue;
            sl_prom_sample(&t, db_names[k],
                           (double)(k ? m->time_to_consume_ms : m->debloated_buffer_size), sc.labels);
        }
    publish_latency(n, hb, &t, host);
    sl_prom_publish(n->prom, sl_prom_text_take(&t));
}
