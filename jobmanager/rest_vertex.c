/*
 * rest_vertex.c -- a job vertex's REST endpoints (Flink's job vertex is a
 * Sluice chain): GET /jobs/:id/vertices/:vid and its backpressure, metrics,
 * watermarks, subtasks (by index, attempt, with metrics and accumulators),
 * subtask times, TaskManagers, accumulators and the flame graph; and
 * Sluice's /sluice/jobs/:id/vertices/:vid/subtasks. Runs on the loop
 * thread, called from rest.c's route.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "jm.h"
#include "rest_int.h"

/* GET .../vertices/:vid/metrics (per subtask: .../subtasks/metrics): Flink's
 * metric lists, or with ?get= their values (aggregated with ?agg=). */
static json_t *metrics_list(route_ctx *rc, const jm_job *job, int c, int per_subtask)
{
    const char *get = jm_rest_qarg(rc, "get");
    json_t *arr = json_array();
    const sl_chain *ch = &job->g->chains[c];
    if (!get) {
        /* no selection: list the available metric ids, as Flink does: the
         * task's, then each operator's ("<operator name>.<metric>") */
        int nnames = 0;
        while (jm_rest_metric_names[nnames]) nnames++;
        for (int k = 0; k < nnames + ch->n * (int)JM_REST_N_OP_METRICS; k++) {
            char name[300];
            if (k < nnames) snprintf(name, sizeof name, "%s", jm_rest_metric_names[k]);
            else snprintf(name, sizeof name, "%s.%s",
                          job->g->v[ch->vertices[(k - nnames) / (int)JM_REST_N_OP_METRICS]].name,
                          jm_rest_op_metric_names[(k - nnames) % (int)JM_REST_N_OP_METRICS]);
            if (per_subtask) {
                json_array_append_new(arr, json_pack("{s:s}", "id", name));
            } else {
                for (int i = 0; i < ch->parallelism; i++) {
                    char id[320];
                    snprintf(id, sizeof id, "%d.%s", i, name);
                    json_array_append_new(arr, json_pack("{s:s}", "id", id));
                }
            }
        }
        return arr;
    }
    const char *agg = jm_rest_qarg(rc, "agg");
    char *list = sl_strdup(get), *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (per_subtask) {
            double mn = 0, mx = 0, sum = 0, v;
            int n = 0;
            for (int i = 0; i < ch->parallelism; i++) {
                if (jm_rest_subtask_metric(job, c, i, name, &v) != SL_OK) continue;
                if (!n || v < mn) mn = v;
                if (!n || v > mx) mx = v;
                sum += v;
                n++;
            }
            if (!n) continue;
            json_t *o = json_pack("{s:s}", "id", name);
            int all = !agg || !*agg;
            if (all || strstr(agg, "min")) json_object_set_new(o, "min", json_real(mn));
            if (all || strstr(agg, "max")) json_object_set_new(o, "max", json_real(mx));
            if (all || strstr(agg, "avg")) json_object_set_new(o, "avg", json_real(sum / n));
            if (all || strstr(agg, "sum")) json_object_set_new(o, "sum", json_real(sum));
            json_array_append_new(arr, o);
        } else {
            /* "0.numRecordsIn" or plain "numRecordsIn" (all subtasks) */
            const char *dot = strchr(name, '.');
            char *end = NULL;
            long idx = dot ? strtol(name, &end, 10) : -1;
            int explicit_idx = dot && end == dot;
            const char *metric = explicit_idx ? dot + 1 : name;
            for (int i = 0; i < ch->parallelism; i++) {
                double v;
                if (explicit_idx && i != idx) continue;
                if (jm_rest_subtask_metric(job, c, i, metric, &v) != SL_OK) continue;
                char id[320];
                snprintf(id, sizeof id, "%d.%s", i, metric);
                json_array_append_new(arr, json_pack("{s:s,s:o}", "id", id, "value",
                                                     jm_rest_metric_value(v, metric)));
            }
        }
    }
    free(list);
    return arr;
}

static const char *bp_level(double ratio)
{
    return ratio <= 0.10 ? "ok" : ratio <= 0.5 ? "low" : "high";
}

/* GET /sluice/jobs/:id/vertices/:vid/subtasks: per subtask its
 * TaskManager, host, state and every metric (numbers), with watermarkIdle. */
json_t *jm_rest_sluice_subtasks(const jm_job *job, int c)
{
    const sl_chain *ch = &job->g->chains[c];
    json_t *subs = json_array();
    for (int i = 0; i < ch->parallelism; i++) {
        const jm_task *t = &job->tasks[c][i];
        json_t *m = json_object();
        for (int k = 0; jm_rest_metric_names[k]; k++) {
            double v;
            jm_rest_task_metric(t, jm_rest_metric_names[k], &v);
            if (strstr(jm_rest_metric_names[k], "Watermark"))
                json_object_set_new(m, jm_rest_metric_names[k], json_integer((json_int_t)(v <= (double)INT64_MIN ? INT64_MIN : (int64_t)v)));
            else
                json_object_set_new(m, jm_rest_metric_names[k], json_real(v));
        }
        json_object_set_new(m, "watermarkIdle", json_boolean(t->metrics.has && t->metrics.m.watermark_idle));
        json_array_append_new(subs, json_pack("{s:i,s:s,s:s,s:s,s:o}", "subtask", i,
                                              "taskmanager-id", t->tm_id ? t->tm_id : "",
                                              "host", t->host ? t->host : "", "status",
                                              jm_task_state_name(t->state), "metrics", m));
    }
    return json_pack("{s:o}", "subtasks", subs);
}

/* Flink's SubtaskExecutionAttemptDetailsInfo of subtask i of chain c: its
 * attempt (the job's deployment: Sluice restarts whole jobs), where it runs,
 * its times and I/O metrics. */
static json_t *subtask_json(jm *j, const jm_job *job, int c, int i)
{
    const jm_task *t = &job->tasks[c][i];
    const jm_tm *tm = t->tm_id ? jm_tm_find(j, t->tm_id) : NULL;
    char endpoint[300];
    snprintf(endpoint, sizeof endpoint, "%s:%d", t->host ? t->host : "", tm ? tm->data_port : -1);
    int done = t->state == T_FINISHED || t->state == T_CANCELED || t->state == T_FAILED;
    int64_t start = t->start_ms ? t->start_ms : -1, end = done && t->end_ms ? t->end_ms : -1;
    /* the time in each state: Sluice records when a task started
     * running and when it ended, not the earlier states' times */
    int64_t running = start < 0 ? 0 : (end >= 0 ? end : sl_now_ms()) - start;
    json_t *o = json_pack("{s:i,s:s,s:i,s:s,s:I,s:I,s:I,s:I,s:o,s:s,s:{s:i,s:i,s:i,s:i,s:I}}", "subtask", i,
                          "status", jm_task_state_name(t->state), "attempt", (int)job->attempt,
                          "endpoint", t->host ? endpoint : "(unassigned)", "start-time",
                          (json_int_t)start, "start_time", (json_int_t)start, "end-time",
                          (json_int_t)end, "duration",
                          (json_int_t)(start < 0 ? -1 : (end >= 0 ? end : sl_now_ms()) - start),
                          "metrics", jm_rest_io_metrics(t, 1), "taskmanager-id",
                          t->tm_id ? t->tm_id : "(unassigned)", "status-duration", "CREATED", 0,
                          "SCHEDULED", 0, "DEPLOYING", 0, "INITIALIZING", 0, "RUNNING",
                          (json_int_t)running);
    return o;
}

/* "host:data port" where subtask i of chain c runs, or "(unassigned)". */
static const char *task_endpoint(jm *j, const jm_task *t, char *buf, size_t len)
{
    const jm_tm *tm = t->tm_id ? jm_tm_find(j, t->tm_id) : NULL;
    if (!t->host) return "(unassigned)";
    snprintf(buf, len, "%s:%d", t->host, tm ? tm->data_port : -1);
    return buf;
}

/* A whole number in [0, n) from text, or -1. */
static long index_arg(const char *text, long n)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno || v < 0 || v >= n) return -1;
    return v;
}

/* GET .../subtasks/:index[/metrics | /attempts/:attempt[/accumulators]] and
 * .../subtasks/accumulators. Sluice restarts whole jobs, so a subtask's one
 * attempt is the job's current deployment; earlier ones are not kept. */
static void subtask_routes(route_ctx *rc, jm_job *job, int c, reply *r)
{
    const sl_chain *ch = &job->g->chains[c];
    char ep[300];
    if (rc->nseg == 6 && !strcmp(rc->seg[5], "accumulators")) {
        json_t *subs = json_array();
        for (int k = 0; k < ch->parallelism; k++)
            json_array_append_new(subs, json_pack("{s:i,s:i,s:s,s:[]}", "subtask", k, "attempt",
                                                  (int)job->attempt, "endpoint",
                                                  task_endpoint(rc->j, &job->tasks[c][k], ep,
                                                                sizeof ep),
                                                  "user-accumulators"));
        reply_json(r, 200, json_pack("{s:s,s:i,s:o}", "id", ch->id, "parallelism",
                                     ch->parallelism, "subtasks", subs));
        return;
    }
    long i = index_arg(rc->seg[5], ch->parallelism);
    if (i < 0)
        return reply_err(r, 404, "subtask '%s' of vertex %s: the vertex has subtasks 0 to %d",
                         rc->seg[5], ch->id, ch->parallelism - 1);
    if (rc->nseg == 6) return reply_json(r, 200, subtask_json(rc->j, job, c, (int)i));
    if (rc->nseg == 7 && !strcmp(rc->seg[6], "metrics")) {
        /* Flink's subtask scope: the ids without the subtask's index */
        const char *get = jm_rest_qarg(rc, "get");
        json_t *arr = json_array();
        if (!get) {
            for (int k = 0; jm_rest_metric_names[k]; k++)
                json_array_append_new(arr, json_pack("{s:s}", "id", jm_rest_metric_names[k]));
            return reply_json(r, 200, arr);
        }
        char *list = sl_strdup(get), *save = NULL;
        for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            double v;
            if (jm_rest_subtask_metric(job, c, (int)i, name, &v) != SL_OK) continue;
            json_array_append_new(arr, json_pack("{s:s,s:o}", "id", name, "value",
                                                 jm_rest_metric_value(v, name)));
        }
        free(list);
        return reply_json(r, 200, arr);
    }
    if (rc->nseg >= 8 && rc->nseg <= 9 && !strcmp(rc->seg[6], "attempts")) {
        long a = index_arg(rc->seg[7], (long)job->attempt + 1);
        if (a != (long)job->attempt)
            return reply_err(r, 404, "attempt '%s' of subtask %ld of vertex %s is not known: "
                             "the current one is %u (earlier attempts are not kept)",
                             rc->seg[7], i, ch->id, job->attempt);
        if (rc->nseg == 8) return reply_json(r, 200, subtask_json(rc->j, job, c, (int)i));
        if (!strcmp(rc->seg[8], "accumulators")) {
            char id[80];
            snprintf(id, sizeof id, "%s-%ld-%u", ch->id, i, job->attempt);
            return reply_json(r, 200, json_pack("{s:i,s:i,s:s,s:[]}", "subtask", (int)i,
                                                "attempt", (int)job->attempt, "id", id,
                                                "user-accumulators"));
        }
    }
    reply_err(r, 404, "Not found: no such subtask resource");
}

/* One summary of Flink's AggregatedTaskDetailsInfo: min, max, avg, sum and
 * the median and quartile figures over n values (sorted here). */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static json_t *aggregate_json(int64_t *v, int n)
{
    if (!n) return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "min", (json_int_t)0, "max",
                             (json_int_t)0, "avg", (json_int_t)0, "sum", (json_int_t)0, "median",
                             (json_int_t)0, "p25", (json_int_t)0, "p75", (json_int_t)0, "p95",
                             (json_int_t)0);
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    int64_t sum = 0;
    for (int k = 0; k < n; k++) sum += v[k];
#define PCT(p) ((json_int_t)v[(int)((double)(n - 1) * (p) + 0.5)])
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "min", (json_int_t)v[0], "max",
                     (json_int_t)v[n - 1], "avg", (json_int_t)(sum / n), "sum", (json_int_t)sum,
                     "median", PCT(0.5), "p25", PCT(0.25), "p75", PCT(0.75), "p95", PCT(0.95));
#undef PCT
}

/* Flink's JobVertexTaskManagersInfo: the vertex's subtasks grouped by the
 * TaskManager they run on (the unassigned ones together). */
static json_t *vertex_taskmanagers(jm *j, const jm_job *job, int c)
{
    static const char *const io[][2] = {
        {"read-bytes", "numBytesIn"}, {"write-bytes", "numBytesOut"},
        {"read-records", "numRecordsIn"}, {"write-records", "numRecordsOut"},
        {"accumulated-backpressured-time", "accumulatedBackPressuredTimeMs"},
        {"accumulated-idle-time", "accumulatedIdleTimeMs"},
        {"accumulated-busy-time", "accumulatedBusyTimeMs"}};
    const sl_chain *ch = &job->g->chains[c];
    const jm_task *ts = job->tasks[c];
    int n = ch->parallelism;
    char *done = sl_calloc((size_t)n, 1);
    jm_task *group = sl_calloc((size_t)n, sizeof *group);
    int64_t *vals = sl_calloc((size_t)n, sizeof *vals);
    json_t *tms = json_array();
    for (int i = 0; i < n; i++) {
        if (done[i]) continue;
        const char *tm_id = ts[i].tm_id;
        int m = 0, counts[T_NSTATES] = {0};
        int64_t start = -1, end = -1;
        int all_done = 1;
        for (int k = i; k < n; k++) {
            if (done[k] || (tm_id ? !ts[k].tm_id || strcmp(tm_id, ts[k].tm_id) : ts[k].tm_id != NULL))
                continue;
            done[k] = 1;
            group[m++] = ts[k];
            counts[ts[k].state]++;
            if (ts[k].start_ms && (start < 0 || ts[k].start_ms < start)) start = ts[k].start_ms;
            int ended = ts[k].state == T_FINISHED || ts[k].state == T_CANCELED || ts[k].state == T_FAILED;
            if (!ended) all_done = 0;
            else if (ts[k].end_ms > end) end = ts[k].end_ms;
        }
        if (!all_done) end = -1;
        json_t *sc = json_object();
        for (int s = 0; s < T_NSTATES; s++)
            json_object_set_new(sc, jm_task_state_name((jm_task_state)s), json_integer(counts[s]));
        jm_task_state worst = jm_rest_tasks_state(group, m);
        json_t *agg = json_object();
        for (size_t q = 0; q < SL_ARRAY_LEN(io); q++) {
            for (int k = 0; k < m; k++) {
                double v = 0;
                jm_rest_task_metric(&group[k], io[q][1], &v);
                vals[k] = (int64_t)v;
            }
            json_object_set_new(agg, io[q][0], aggregate_json(vals, m));
        }
        json_t *durations = json_object();
        static const char *const states[] = {"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING"};
        for (size_t q = 0; q < SL_ARRAY_LEN(states); q++) {
            for (int k = 0; k < m; k++) {
                int ended = group[k].end_ms && (group[k].state == T_FINISHED ||
                                                group[k].state == T_CANCELED || group[k].state == T_FAILED);
                vals[k] = q == 4 && group[k].start_ms
                              ? (ended ? group[k].end_ms : sl_now_ms()) - group[k].start_ms : 0;
            }
            json_object_set_new(durations, states[q], aggregate_json(vals, m));
        }
        char ep[300];
        const jm_tm *tm = tm_id ? jm_tm_find(j, tm_id) : NULL;
        if (tm) snprintf(ep, sizeof ep, "%s:%d", tm->host, tm->data_port);
        else snprintf(ep, sizeof ep, "(unassigned)");
        json_array_append_new(tms, json_pack(
            "{s:s,s:s,s:I,s:I,s:I,s:o,s:o,s:s,s:{s:o,s:o}}", "endpoint", ep, "status",
            jm_task_state_name(worst), "start-time", (json_int_t)start, "end-time", (json_int_t)end,
            "duration", (json_int_t)(start < 0 ? -1 : (end >= 0 ? end : sl_now_ms()) - start),
            "metrics", jm_rest_io_metrics(group, m), "status-counts", sc, "taskmanager-id",
            tm_id ? tm_id : "(unassigned)", "aggregated", "metrics", agg, "status-duration",
            durations));
    }
    free(done);
    free(group);
    free(vals);
    return json_pack("{s:s,s:s,s:I,s:o}", "id", ch->id, "name", ch->name, "now",
                     (json_int_t)sl_now_ms(), "taskmanagers", tms);
}

void jm_rest_vertex_routes(route_ctx *rc, jm_job *job, int c, reply *r)
{
    const sl_chain *ch = &job->g->chains[c];
    const char *what = rc->nseg > 4 ? rc->seg[4] : NULL;
    if (!what) {
        /* Flink's JobVertexDetailsInfo: per subtask its attempt (the job's
         * deployment: Sluice restarts whole jobs), where it runs, its times
         * and I/O metrics */
        json_t *subs = json_array();
        for (int i = 0; i < ch->parallelism; i++) {
            json_t *o = subtask_json(rc->j, job, c, i);
            json_array_append_new(subs, o);
        }
        reply_json(r, 200, json_pack("{s:s,s:s,s:i,s:i,s:I,s:o}", "id", ch->id, "name", ch->name,
                                     "parallelism", ch->parallelism, "maxParallelism",
                                     job->g->max_parallelism, "now", (json_int_t)sl_now_ms(),
                                     "subtasks", subs));
        return;
    }
    if (!strcmp(what, "backpressure") && rc->nseg == 5) {
        json_t *subs = json_array();
        double worst = 0;
        for (int i = 0; i < ch->parallelism; i++) {
            double bp = 0, busy = 0, idle = 0;
            jm_rest_task_metric(&job->tasks[c][i], "backPressuredTimeMsPerSecond", &bp);
            jm_rest_task_metric(&job->tasks[c][i], "busyTimeMsPerSecond", &busy);
            jm_rest_task_metric(&job->tasks[c][i], "idleTimeMsPerSecond", &idle);
            double ratio = bp / 1000.0;
            if (ratio > worst) worst = ratio;
            json_array_append_new(subs, json_pack("{s:i,s:s,s:s,s:f,s:f,s:f}", "subtask", i,
                                                  "backpressure-level", bp_level(ratio),
                                                  "backpressureLevel", bp_level(ratio), "ratio",
                                                  ratio, "idleRatio", idle / 1000.0, "busyRatio",
                                                  busy / 1000.0));
        }
        reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:I,s:o}", "status", "ok", "backpressure-level",
                                     bp_level(worst), "backpressureLevel", bp_level(worst),
                                     "end-timestamp", (json_int_t)sl_now_ms(), "subtasks", subs));
        return;
    }
    if (!strcmp(what, "metrics") && rc->nseg == 5) {
        reply_json(r, 200, metrics_list(rc, job, c, 0));
        return;
    }
    if (!strcmp(what, "watermarks") && rc->nseg == 5) {
        json_t *arr = json_array();
        for (int i = 0; i < ch->parallelism; i++) {
            double v;
            const jm_task *t = &job->tasks[c][i];
            char id[64];
            snprintf(id, sizeof id, "%d.currentInputWatermark", i);
            jm_rest_task_metric(t, "currentInputWatermark", &v);
            /* whether it is idle: watermarkIdle in GET /sluice/.../subtasks */
            json_array_append_new(arr, json_pack("{s:s,s:o}", "id", id, "value",
                                                 jm_rest_metric_value(v, "Watermark")));
        }
        reply_json(r, 200, arr);
        return;
    }
    if (!strcmp(what, "subtasks") && rc->nseg == 6 && !strcmp(rc->seg[5], "metrics")) {
        reply_json(r, 200, metrics_list(rc, job, c, 1));
        return;
    }
    if (!strcmp(what, "subtasks") && rc->nseg >= 6 && strcmp(rc->seg[5], "metrics")) {
        subtask_routes(rc, job, c, r);
        return;
    }
    if (!strcmp(what, "accumulators") && rc->nseg == 5) {
        /* Sluice's operators keep no user accumulators */
        reply_json(r, 200, json_pack("{s:s,s:[]}", "id", ch->id, "user-accumulators"));
        return;
    }
    if (!strcmp(what, "subtasktimes") && rc->nseg == 5) {
        json_t *subs = json_array();
        for (int i = 0; i < ch->parallelism; i++) {
            const jm_task *t = &job->tasks[c][i];
            char ep[300];
            /* the states whose start Sluice records: RUNNING and the end */
            json_t *ts = json_object();
            if (t->start_ms) json_object_set_new(ts, "RUNNING", json_integer(t->start_ms));
            int done = t->state == T_FINISHED || t->state == T_CANCELED || t->state == T_FAILED;
            if (done && t->end_ms)
                json_object_set_new(ts, jm_task_state_name(t->state), json_integer(t->end_ms));
            int64_t dur = !t->start_ms ? -1 : (done && t->end_ms ? t->end_ms : sl_now_ms()) - t->start_ms;
            json_array_append_new(subs, json_pack("{s:i,s:s,s:I,s:o}", "subtask", i, "endpoint",
                                                  task_endpoint(rc->j, t, ep, sizeof ep),
                                                  "duration", (json_int_t)dur, "timestamps", ts));
        }
        reply_json(r, 200, json_pack("{s:s,s:s,s:I,s:o}", "id", ch->id, "name", ch->name, "now",
                                     (json_int_t)sl_now_ms(), "subtasks", subs));
        return;
    }
    if (!strcmp(what, "taskmanagers") && rc->nseg == 5) {
        reply_json(r, 200, vertex_taskmanagers(rc->j, job, c));
        return;
    }
    if (!strcmp(what, "jm-operator-metrics") && rc->nseg == 5) {
        reply_json(r, 200, json_array()); /* Sluice's operators have no JobManager side */
        return;
    }
    if (!strcmp(what, "flamegraph") && rc->nseg == 5) {
        jm_rest_flamegraph(rc, job, c, r); /* rest_flame.c */
        return;
    }
    reply_err(r, 404, "Not found: no such vertex resource '%s'", what);
}
