/*
 * rest.c -- the REST API and the dashboard's files on rest.port (8081).
 *
 * libmicrohttpd runs the connections on its own thread pool. A REST thread
 * never reads or changes the JobManager's state: it splits the path, copies
 * the query arguments, checks the bearer token, does the work that needs no
 * state (parsing and planning a submitted job graph; reading a savepoint to
 * restore from and disposing of one, both through the I/O worker), then
 * posts the request to the loop thread as a JM_OP_REST op and waits for the
 * reply (jm_op_call). On the loop, route() runs the handler, which reads
 * and changes state freely, and builds the JSON with jansson, using Flink's
 * paths and field names (see docs/REST.md). The REST thread serialises it
 * and answers. Bad input gets a 4xx with {"errors": ["..."]}; a request
 * that arrives while the JobManager shuts down gets 503. Request bodies are
 * capped; static files are served only from the web root, by names made of
 * safe characters.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <event2/event.h>
#include "http_reply.h"
#include <jansson.h>

#include "collect.h"
#include "http_server.h"
#include "jm.h"
#include "proc_info.h"
#include "rest_int.h"
#include "ha.h"
#include "log.h"
#include "keygroup.h"
#include "proc_info.h"
#include "snapshot.h"

#define TAG "jm:rest"
#define MAX_BODY (8u << 20)
/* Connection limits (see "the connection watch" above jm_rest_start):
 * a connection that sends nothing for REST_IDLE_TIMEOUT_S is closed
 * (libmicrohttpd's idle timeout, restarted by every byte); a request's
 * headers must all be in within REST_HEADER_DEADLINE_MS of the connection's
 * start or of its previous request's end, however they trickle; one client
 * address holds at most REST_PER_CLIENT_CONNECTIONS and all clients
 * REST_MAX_CONNECTIONS, and past REST_SOFT_CONNECTIONS (or the per-address
 * share) a new connection closes the oldest one still waiting for headers
 * (or idle between requests), so a flood of slow clients cannot lock new
 * ones out. libmicrohttpd itself refuses connections only beyond the hard
 * limits (REST_MAX_CONNECTIONS, twice the per-address share). */
#define REST_IDLE_TIMEOUT_S 10
#define REST_HEADER_DEADLINE_MS 10000
#define REST_MAX_CONNECTIONS 1024
#define REST_SOFT_CONNECTIONS (REST_MAX_CONNECTIONS - 64)
#define REST_PER_CLIENT_CONNECTIONS 256
#define REST_SWEEP_MS 250



/* Flink's failure-cause of an asynchronous operation: its client reads
 * only serialized-throwable (jthrowable.c); class and stack-trace are for
 * people and for curl. */
static json_t *failure_cause_json(const char *cls, const char *msg)
{
    char *trace = sl_sprintf("%s: %s\n", cls, msg);
    char *ser = jm_throwable_b64(cls, msg, trace);
    json_t *o = json_pack("{s:s,s:s,s:s}", "class", cls, "stack-trace", trace,
                          "serialized-throwable", ser);
    free(ser);
    free(trace);
    return o;
}

/* The state of an asynchronous operation, in Flink's shape: IN_PROGRESS
 * with a null operation, or COMPLETED with the operation's result (a
 * savepoint's location, a checkpoint's id, nothing for a disposal) or its
 * failure-cause. Every field Flink's classes expect is present (null when
 * it does not apply). */
static void reply_async(reply *r, const jm_savepoint_op *op, const char *failure_class)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_pack("{s:s}", "id", op->done ? "COMPLETED" : "IN_PROGRESS"));
    if (!op->done) {
        json_object_set_new(o, "operation", json_null());
    } else {
        json_t *res = json_object();
        if (op->is_checkpoint)
            json_object_set_new(res, "checkpointId",
                                op->done > 0 ? json_integer((json_int_t)op->cp_id) : json_null());
        else if (op->cp_id || op->location)
            json_object_set_new(res, "location",
                                op->done > 0 && op->location ? json_string(op->location) : json_null());
        /* Flink spells it failureCause in a checkpoint's result (CheckpointInfo),
         * failure-cause in the others */
        json_object_set_new(res, op->is_checkpoint ? "failureCause" : "failure-cause",
                            op->done < 0 ? failure_cause_json(failure_class, op->failure ? op->failure : "failed")
                                         : json_null());
        json_object_set_new(o, "operation", res);
    }
    reply_json(r, 200, o);
}

/* The distinct state backends of the registered TaskManagers, in
 * registration order, into buf ("" when none is registered). */
static const char *tms_backends(jm *j, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (jm_tm *tm = j->tms; tm; tm = tm->next) {
        int seen = 0;
        for (jm_tm *p = j->tms; p != tm; p = p->next) seen |= !strcmp(p->state_backend, tm->state_backend);
        if (seen || used + strlen(tm->state_backend) + 2 > len) continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", tm->state_backend);
    }
    return buf;
}

/* The backend a job's state lives in: that of the TaskManagers of its last
 * deployment, or, before it was deployed, of those registered now. */
static const char *job_backend(jm *j, const jm_job *job, char *buf, size_t len)
{
    const char *own = sl_jobgraph_conf(job->g, "state.backend.type"); /* the job's config */
    if (own) return own;
    if (job->state_backend && *job->state_backend) return job->state_backend;
    return tms_backends(j, buf, len);
}

/* ---- JSON builders (loop thread) ---------------------------------------- */

const char *jm_rest_metric_names[] = {
    "numRecordsIn", "numRecordsOut", "numBytesIn", "numBytesOut", "numRecordsInPerSecond",
    "numRecordsOutPerSecond", "numBytesInPerSecond", "numBytesOutPerSecond",
    "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond",
    "accumulatedBusyTimeMs", "accumulatedBackPressuredTimeMs", "accumulatedIdleTimeMs",
    "buffers.inPoolUsage", "buffers.outPoolUsage", "currentInputWatermark",
    "currentOutputWatermark", "numLateRecordsDropped", "checkpointAlignmentTime",
    "checkpointStartDelayNanos", "stateEntries", "stateSizeBytes", "debloatedBufferSize",
    "estimatedTimeToConsumeBuffersMs", NULL};

/* Value of a named metric of one subtask; SL_ERR if the name is unknown. */
int jm_rest_task_metric(const jm_task *t, const char *name, double *out)
{
    const jm_metrics *mm = &t->metrics;
    const Sluice__SubtaskMetrics *m = &mm->m;
    if (!strcmp(name, "checkpointAlignmentTime")) { /* ns, as Flink's gauge */
        *out = (double)t->last_alignment_ns;
        return SL_OK;
    }
    if (!strcmp(name, "checkpointStartDelayNanos")) {
        *out = (double)t->last_start_delay_ns;
        return SL_OK;
    }
    if (!mm->has) {
        /* nothing reported yet: zeros, watermarks unknown */
        for (int i = 0; jm_rest_metric_names[i]; i++)
            if (!strcmp(name, jm_rest_metric_names[i])) {
                *out = strstr(name, "Watermark") ? (double)INT64_MIN : 0;
                return SL_OK;
            }
        return SL_ERR;
    }
    if (!strcmp(name, "numRecordsIn")) *out = (double)m->records_in;
    else if (!strcmp(name, "numRecordsOut")) *out = (double)m->records_out;
    else if (!strcmp(name, "numBytesIn")) *out = (double)m->bytes_in;
    else if (!strcmp(name, "numBytesOut")) *out = (double)m->bytes_out;
    else if (!strcmp(name, "numRecordsInPerSecond")) *out = mm->in_rate;
    else if (!strcmp(name, "numRecordsOutPerSecond")) *out = mm->out_rate;
    else if (!strcmp(name, "numBytesInPerSecond")) *out = mm->in_bytes_rate;
    else if (!strcmp(name, "numBytesOutPerSecond")) *out = mm->out_bytes_rate;
    else if (!strcmp(name, "busyTimeMsPerSecond")) *out = m->busy_ms_per_s;
    else if (!strcmp(name, "backPressuredTimeMsPerSecond")) *out = m->backpressured_ms_per_s;
    else if (!strcmp(name, "idleTimeMsPerSecond")) *out = m->idle_ms_per_s;
    else if (!strcmp(name, "accumulatedBusyTimeMs")) *out = (double)m->busy_ms;
    else if (!strcmp(name, "accumulatedBackPressuredTimeMs")) *out = (double)m->backpressured_ms;
    else if (!strcmp(name, "accumulatedIdleTimeMs")) *out = (double)m->idle_ms;
    else if (!strcmp(name, "buffers.inPoolUsage")) *out = m->in_pool_usage;
    else if (!strcmp(name, "buffers.outPoolUsage")) *out = m->out_pool_usage;
    else if (!strcmp(name, "currentInputWatermark")) *out = (double)m->input_watermark;
    else if (!strcmp(name, "currentOutputWatermark")) *out = (double)m->output_watermark;
    else if (!strcmp(name, "numLateRecordsDropped")) *out = (double)m->late_dropped;
    else if (!strcmp(name, "stateEntries")) *out = (double)m->state_entries;
    else if (!strcmp(name, "stateSizeBytes")) *out = (double)m->state_bytes;
    else if (!strcmp(name, "debloatedBufferSize")) *out = (double)m->debloated_buffer_size;
    else if (!strcmp(name, "estimatedTimeToConsumeBuffersMs")) *out = (double)m->time_to_consume_ms;
    else return SL_ERR;
    return SL_OK;
}

/* Flink's operator-scope metrics, one per chained operator. */
const char *jm_rest_op_metric_names[JM_REST_N_OP_METRICS + 1] = {"numRecordsIn", "numRecordsOut", "numLateRecordsDropped",
                                        "currentInputWatermark", "currentOutputWatermark",
                                        "numRecordsInErrors", NULL};

/* "<operator name>.<metric>" of subtask i of chain c (Flink's id of an
 * operator's metric in a vertex); SL_ERR if there is no such. */
static int op_metric(const jm_job *job, int c, int i, const char *name, double *out)
{
    const sl_chain *ch = &job->g->chains[c];
    const char *dot = strrchr(name, '.');
    if (!dot) return SL_ERR;
    int m = -1;
    for (int k = 0; jm_rest_op_metric_names[k]; k++)
        if (!strcmp(dot + 1, jm_rest_op_metric_names[k])) m = k;
    if (m < 0) return SL_ERR;
    size_t n = (size_t)(dot - name);
    for (int k = 0; k < ch->n; k++) {
        const char *vname = job->g->v[ch->vertices[k]].name;
        if (strlen(vname) != n || strncmp(vname, name, n)) continue;
        const jm_metrics *mm = &job->tasks[c][i].metrics;
        if (mm->nops != ch->n) { /* nothing reported yet */
            *out = m == 3 || m == 4 ? (double)INT64_MIN : 0; /* the watermarks */
            return SL_OK;
        }
        const struct jm_op_metrics *o = &mm->ops[k];
        double v[] = {(double)o->records_in, (double)o->records_out, (double)o->late_dropped,
                      (double)o->in_wm, (double)o->out_wm, (double)o->records_in_errors};
        *out = v[m];
        return SL_OK;
    }
    return SL_ERR;
}

/* A subtask's metric by Flink's name: the task's, or one of an operator's. */
int jm_rest_subtask_metric(const jm_job *job, int c, int i, const char *name, double *out)
{
    if (jm_rest_task_metric(&job->tasks[c][i], name, out) == SL_OK) return SL_OK;
    return op_metric(job, c, i, name, out);
}

json_t *jm_rest_metric_value(double v, const char *name)
{
    char buf[64];
    if (strstr(name, "Watermark") && v <= (double)INT64_MIN) return json_string("-9223372036854775808");
    if (v == (double)(long long)v) snprintf(buf, sizeof buf, "%lld", (long long)v);
    else snprintf(buf, sizeof buf, "%.3f", v);
    return json_string(buf);
}

static int64_t job_duration(const jm_job *job)
{
    return (job->end_ms ? job->end_ms : sl_now_ms()) - job->start_ms;
}

static json_t *task_counts(const jm_job *job, int chain, int lower)
{
    int counts[T_NSTATES] = {0};
    int c0 = chain < 0 ? 0 : chain, c1 = chain < 0 ? job->g->nchains : chain + 1;
    int total = 0;
    for (int c = c0; c < c1; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++) {
            counts[job->tasks[c][i].state]++;
            total++;
        }
    json_t *o = json_object();
    if (lower) json_object_set_new(o, "total", json_integer(total));
    for (int s = 0; s < T_NSTATES; s++) {
        char key[32];
        snprintf(key, sizeof key, "%s", jm_task_state_name((jm_task_state)s));
        if (lower)
            for (char *p = key; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        json_object_set_new(o, key, json_integer(counts[s]));
    }
    /* Flink's ExecutionState has RECONCILING (a JobManager fail-over with
     * running tasks); Sluice never has a task in it */
    json_object_set_new(o, lower ? "reconciling" : "RECONCILING", json_integer(0));
    return o;
}

/* The state of n tasks together: the "least advanced" wins, as Flink aggregates. */
jm_task_state jm_rest_tasks_state(const jm_task *ts, int n)
{
    static const jm_task_state order[] = {T_FAILED, T_CANCELING, T_CANCELED, T_CREATED, T_SCHEDULED,
                                          T_DEPLOYING, T_INITIALIZING, T_RUNNING, T_FINISHED};
    for (size_t k = 0; k < SL_ARRAY_LEN(order); k++)
        for (int i = 0; i < n; i++)
            if (ts[i].state == order[k]) return order[k];
    return T_CREATED;
}

static jm_task_state chain_state(const jm_job *job, int c)
{
    return jm_rest_tasks_state(job->tasks[c], job->g->chains[c].parallelism);
}

/* Flink's JobDetails of a job; sluice adds Sluice's state-reason and
 * unbounded-state warnings (GET /sluice/jobs/overview). */
static json_t *job_overview(const jm_job *job, int sluice)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I}", "jid", job->id, "name", job->g->name,
                          "state", jm_job_state_name(job->state), "start-time", (json_int_t)job->start_ms,
                          "end-time", (json_int_t)(job->end_ms ? job->end_ms : -1), "duration",
                          (json_int_t)job_duration(job), "last-modification",
                          (json_int_t)job->timestamps[job->state]);
    json_object_set_new(o, "tasks", task_counts(job, -1, 1));
    /* Flink counts operators not yet added to an adaptive graph; Sluice's graphs are whole */
    json_object_set_new(o, "pending-operators", json_integer(0));
    if (sluice) {
        json_object_set_new(o, "state-reason", job->state_reason ? json_string(job->state_reason) : json_null());
        json_object_set_new(o, "warnings", sl_jobgraph_warnings(job->g));
    }
    return o;
}

/* Sum of a metric over n subtasks. */
static double tasks_sum(const jm_task *ts, int n, const char *metric)
{
    double sum = 0, v;
    for (int i = 0; i < n; i++)
        if (jm_rest_task_metric(&ts[i], metric, &v) == SL_OK) sum += v;
    return sum;
}

/* Flink's IOMetricsInfo over n subtasks (a vertex's, or one subtask's). */
json_t *jm_rest_io_metrics(const jm_task *ts, int n)
{
    return json_pack("{s:I,s:b,s:I,s:b,s:I,s:b,s:I,s:b,s:I,s:I,s:I}", "read-bytes",
                     (json_int_t)tasks_sum(ts, n, "numBytesIn"), "read-bytes-complete", 1,
                     "write-bytes", (json_int_t)tasks_sum(ts, n, "numBytesOut"),
                     "write-bytes-complete", 1, "read-records",
                     (json_int_t)tasks_sum(ts, n, "numRecordsIn"), "read-records-complete", 1,
                     "write-records", (json_int_t)tasks_sum(ts, n, "numRecordsOut"),
                     "write-records-complete", 1, "accumulated-backpressured-time",
                     (json_int_t)tasks_sum(ts, n, "accumulatedBackPressuredTimeMs"),
                     "accumulated-idle-time", (json_int_t)tasks_sum(ts, n, "accumulatedIdleTimeMs"),
                     "accumulated-busy-time", (json_int_t)tasks_sum(ts, n, "accumulatedBusyTimeMs"));
}

/* Flink's JobPlanInfo.Plan: one node per chain (Flink's job vertex), its inputs. */
static json_t *job_plan(const jm_job *job)
{
    const sl_jobgraph *g = job->g;
    json_t *nodes = json_array();
    for (int c = 0; c < g->nchains; c++) {
        const sl_chain *ch = &g->chains[c];
        const sl_vertex *head = &g->v[ch->vertices[0]];
        json_t *inputs = json_array();
        for (int k = 0; k < head->nin; k++) {
            const sl_edge *e = &g->e[head->in_edges[k]];
            json_array_append_new(inputs, json_pack("{s:i,s:s,s:s,s:s}", "num", k, "id",
                                                    g->chains[g->v[e->from].chain].id, "ship_strategy",
                                                    sl_part_name(e->strategy), "exchange",
                                                    "pipelined_bounded"));
        }
        json_array_append_new(nodes, json_pack("{s:s,s:i,s:s,s:s,s:s,s:o,s:{}}", "id", ch->id,
                                               "parallelism", ch->parallelism, "operator", head->type,
                                               "operator_strategy", "", "description", ch->name,
                                               "inputs", inputs, "optimizer_properties"));
    }
    return json_pack("{s:s,s:s,s:s,s:o}", "jid", job->id, "name", g->name, "type", "STREAMING",
                     "nodes", nodes);
}

/* What Flink's plan has no field for: per node (chain) the operators
 * chained in it, and per input the key columns of a hash edge and the side
 * output it reads. For GET /sluice/jobs/:id. */
static json_t *sluice_plan(const jm_job *job)
{
    const sl_jobgraph *g = job->g;
    json_t *nodes = json_array();
    for (int c = 0; c < g->nchains; c++) {
        const sl_chain *ch = &g->chains[c];
        const sl_vertex *head = &g->v[ch->vertices[0]];
        json_t *inputs = json_array();
        for (int k = 0; k < head->nin; k++) {
            const sl_edge *e = &g->e[head->in_edges[k]];
            json_t *in = json_pack("{s:i,s:s}", "num", k, "id", g->chains[g->v[e->from].chain].id);
            if (e->strategy == SL_PART_HASH) {
                json_t *keys = json_array();
                for (int q = 0; q < e->nkeys; q++)
                    json_array_append_new(keys, json_string(sl_edge_schema(g, e)->fields[e->keys[q]].name));
                json_object_set_new(in, "keys", keys);
            }
            if (e->output_name) json_object_set_new(in, "side_output", json_string(e->output_name));
            json_array_append_new(inputs, in);
        }
        json_t *ops = json_array();
        for (int k = 0; k < ch->n; k++) {
            const sl_vertex *v = &g->v[ch->vertices[k]];
            json_array_append_new(ops, json_pack("{s:s,s:s,s:s}", "id", v->id, "uid", v->uid, "type",
                                                 v->type));
        }
        json_array_append_new(nodes, json_pack("{s:s,s:o,s:o}", "id", ch->id, "operators", ops,
                                               "inputs", inputs));
    }
    return json_pack("{s:o}", "nodes", nodes);
}

static json_t *job_detail(const jm_job *job)
{
    const sl_jobgraph *g = job->g;
    json_t *o = json_pack("{s:s,s:s,s:b,s:s,s:I,s:I,s:I,s:i,s:I}", "jid", job->id, "name", g->name,
                          "isStoppable", job->state == JOB_RUNNING, "state", jm_job_state_name(job->state), "start-time",
                          (json_int_t)job->start_ms, "end-time",
                          (json_int_t)(job->end_ms ? job->end_ms : -1), "duration",
                          (json_int_t)job_duration(job), "maxParallelism", g->max_parallelism, "now",
                          (json_int_t)sl_now_ms());
    json_t *ts = json_object();
    for (int s = 0; s < JOB_NSTATES; s++)
        json_object_set_new(ts, jm_job_state_name((jm_job_state)s), json_integer(job->timestamps[s]));
    json_object_set_new(o, "timestamps", ts);
    json_object_set_new(o, "job-type", json_string("STREAMING"));
    json_object_set_new(o, "pending-operators", json_integer(0));
    json_t *vs = json_array();
    for (int c = 0; c < g->nchains; c++) {
        const sl_chain *ch = &g->chains[c];
        int64_t start = INT64_MAX, end = -1;
        for (int i = 0; i < ch->parallelism; i++) {
            if (job->tasks[c][i].start_ms && job->tasks[c][i].start_ms < start) start = job->tasks[c][i].start_ms;
            if (job->tasks[c][i].end_ms > end) end = job->tasks[c][i].end_ms;
        }
        if (start == INT64_MAX) start = -1;
        jm_task_state st = chain_state(job, c);
        int done = st == T_FINISHED || st == T_CANCELED || st == T_FAILED;
        json_t *metrics = jm_rest_io_metrics(job->tasks[c], ch->parallelism);
        /* every vertex of a Sluice job shares one slot sharing group (nslots
         * = the largest parallelism), which has no id of its own: the job's */
        json_array_append_new(
            vs, json_pack("{s:s,s:s,s:s,s:i,s:i,s:s,s:I,s:I,s:I,s:o,s:o}", "id", ch->id,
                          "slotSharingGroupId", job->id, "name", ch->name,
                          "maxParallelism", g->max_parallelism, "parallelism", ch->parallelism,
                          "status", jm_task_state_name(st), "start-time", (json_int_t)start,
                          "end-time", (json_int_t)(done ? end : -1), "duration",
                          (json_int_t)(start < 0 ? -1 : (done ? end : sl_now_ms()) - start), "tasks",
                          task_counts(job, c, 0), "metrics", metrics));
    }
    json_object_set_new(o, "vertices", vs);
    json_t *sc = json_object();
    for (int s = 0; s < T_NSTATES; s++) {
        int n = 0;
        for (int c = 0; c < g->nchains; c++)
            if (chain_state(job, c) == (jm_task_state)s) n++;
        json_object_set_new(sc, jm_task_state_name((jm_task_state)s), json_integer(n));
    }
    json_object_set_new(sc, "RECONCILING", json_integer(0)); /* as in task_counts */
    json_object_set_new(o, "status-counts", sc);
    json_object_set_new(o, "plan", job_plan(job));
    return o;
}

/* GET /sluice/jobs/:id: what Sluice knows of a job that Flink's job
 * details have no field for. */
static json_t *sluice_job(jm *j, const jm_job *job)
{
    char bk[256];
    json_t *o = json_pack("{s:s,s:s,s:i,s:s,s:o}", "jid", job->id, "state",
                          jm_job_state_name(job->state), "slots-needed", job->nslots,
                          "state-backend", job_backend(j, job, bk, sizeof bk), "plan",
                          sluice_plan(job));
    json_object_set_new(o, "state-reason", job->state_reason ? json_string(job->state_reason) : json_null());
    json_object_set_new(o, "warnings", sl_jobgraph_warnings(job->g));
    return o;
}

/* Tasks of live (not terminal) jobs deployed on tm. */
static int tm_tasks(jm *j, const jm_tm *tm, const jm_job *only)
{
    int n = 0;
    for (jm_job *job = j->jobs; job; job = job->next) {
        if ((only && job != only) || jm_job_state_terminal(job->state)) continue;
        for (int c = 0; c < job->g->nchains; c++)
            for (int i = 0; i < job->g->chains[c].parallelism; i++) {
                const jm_task *t = &job->tasks[c][i];
                n += t->tm_id && !strcmp(t->tm_id, tm->id) && t->state != T_FINISHED &&
                     t->state != T_CANCELED && t->state != T_FAILED;
            }
    }
    return n;
}

/* Flink's ResourceProfileInfo of `share` of a TaskManager's slots: its
 * cores and managed memory (MB); Sluice has no JVM heap or network
 * buffer pool sized apart, so those are 0. */
static json_t *resource_json(const jm_tm *tm, int share)
{
    double frac = tm->slots ? (double)share / tm->slots : 0;
    return json_pack("{s:f,s:i,s:i,s:i,s:i,s:{}}", "cpuCores", tm->cpu_cores * frac,
                     "taskHeapMemory", 0, "taskOffHeapMemory", 0, "managedMemory",
                     (int)((double)tm->managed_memory * frac / (1 << 20)), "networkMemory", 0,
                     "extendedResources");
}

/* Flink's TaskManagerInfo (and, with detail, TaskManagerDetailsInfo). */
static json_t *tm_json(jm *j, const jm_tm *tm, int detail)
{
    int free_slots = 0;
    for (int i = 0; i < tm->slots; i++) free_slots += tm->slot_job[i] == NULL;
    json_t *o = json_pack("{s:s,s:s,s:i,s:i,s:I,s:i,s:i,s:i,s:o,s:o,s:{s:i,s:I,s:I,s:I},s:b}", "id",
                          tm->id, "path", tm->host, "dataPort", tm->data_port, "jmxPort", -1,
                          "timeSinceLastHeartbeat", (json_int_t)(sl_mono_ms() - tm->last_heartbeat_ms),
                          "slotsNumber", tm->slots, "freeSlots", free_slots, "assignedTasks",
                          tm_tasks(j, tm, NULL), "totalResource", resource_json(tm, tm->slots),
                          "freeResource", resource_json(tm, free_slots), "hardware", "cpuCores",
                          tm->cpu_cores, "physicalMemory", (json_int_t)tm->physical_memory,
                          "freeMemory", (json_int_t)tm->free_memory, "managedMemory",
                          (json_int_t)tm->managed_memory, "blocked", 0);
    /* Flink's memory model is the JVM's; only the managed part exists here */
    json_t *mc = json_object();
    static const char *jvm_parts[] = {"frameworkHeap", "taskHeap", "frameworkOffHeap", "taskOffHeap",
                                      "networkMemory", "jvmMetaspace", "jvmOverhead",
                                      "totalFlinkMemory", "totalProcessMemory"};
    for (size_t i = 0; i < SL_ARRAY_LEN(jvm_parts); i++) json_object_set_new(mc, jvm_parts[i], json_null());
    json_object_set_new(mc, "managedMemory", json_integer((json_int_t)tm->managed_memory));
    json_object_set_new(o, "memoryConfiguration", mc);
    if (detail) {
        json_t *as = json_array();
        for (int i = 0; i < tm->slots; i++)
            if (tm->slot_job[i])
                json_array_append_new(as, json_pack("{s:s,s:o,s:i}", "jobId", tm->slot_job[i]->id,
                                                    "resource", resource_json(tm, 1), "assignedTasks",
                                                    tm_tasks(j, tm, tm->slot_job[i])));
        json_object_set_new(o, "allocatedSlots", as);
        /* Flink's TaskManagerMetricsInfo is the JVM's heap, direct and
         * mapped buffers and Netty's network pool: none of them exist here */
        json_t *m = json_object();
        static const char *jvm_metrics[] = {
            "heapUsed", "heapCommitted", "heapMax", "nonHeapUsed", "nonHeapCommitted", "nonHeapMax",
            "directCount", "directUsed", "directMax", "mappedCount", "mappedUsed", "mappedMax",
            "nettyShuffleMemorySegmentsAvailable", "nettyShuffleMemorySegmentsUsed",
            "nettyShuffleMemorySegmentsTotal", "nettyShuffleMemoryAvailable",
            "nettyShuffleMemoryUsed", "nettyShuffleMemoryTotal"};
        for (size_t i = 0; i < SL_ARRAY_LEN(jvm_metrics); i++) json_object_set_new(m, jvm_metrics[i], json_integer(0));
        json_object_set_new(m, "garbageCollectors", json_array());
        json_object_set_new(o, "metrics", m);
    }
    return o;
}

/* GET /sluice/taskmanagers: what Flink's TaskManagerInfo has no field
 * for -- when each registered, its state backend, and its slots by index
 * with the job holding each. */
static json_t *sluice_tms(jm *j)
{
    json_t *arr = json_array();
    for (jm_tm *tm = j->tms; tm; tm = tm->next) {
        json_t *slots = json_array();
        for (int i = 0; i < tm->slots; i++)
            json_array_append_new(slots, tm->slot_job[i]
                                             ? json_pack("{s:i,s:s,s:s}", "slot", i, "jobId",
                                                         tm->slot_job[i]->id, "jobName",
                                                         tm->slot_job[i]->g->name)
                                             : json_pack("{s:i,s:n,s:n}", "slot", i, "jobId", "jobName"));
        json_array_append_new(arr, json_pack("{s:s,s:I,s:s,s:o}", "id", tm->id, "registered",
                                             (json_int_t)tm->registered_ms, "stateBackend",
                                             tm->state_backend, "slots", slots));
    }
    return json_pack("{s:o}", "taskmanagers", arr);
}

/* ---- routing ---------------------------------------------------------- */


const char *jm_rest_qarg(route_ctx *rc, const char *key)
{
    for (int i = 0; i < rc->nargs; i++)
        if (!strcmp(rc->arg_key[i], key)) return rc->arg_val[i];
    return NULL;
}

static MHD_RESULT copy_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    route_ctx *rc = cls;
    if (rc->nargs == MAX_ARGS || !key) return MHD_YES; /* more are ignored */
    rc->arg_key[rc->nargs] = sl_strdup(key);
    rc->arg_val[rc->nargs] = sl_strdup(value ? value : "");
    rc->nargs++;
    return MHD_YES;
}


static int find_chain(const jm_job *job, const char *vid)
{
    for (int c = 0; c < job->g->nchains; c++)
        if (!strcmp(job->g->chains[c].id, vid)) return c;
    return -1;
}


/* Is name one of the items of the comma-separated list? */
static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}

/* The job metrics below, by name, for one job: returns their number. */
static size_t job_metric_values(const jm_job *job, const char **names, double *vals);


/* Flink's aggregated metric entry ({"id", "min", "max", "avg", "sum"}: those
 * `agg` names, every one when it is empty) over the values added. */
typedef struct {
    double mn, mx, sum;
    int count;
} metric_acc;

static void metric_add(metric_acc *a, double v)
{
    if (!a->count || v < a->mn) a->mn = v;
    if (!a->count || v > a->mx) a->mx = v;
    a->sum += v;
    a->count++;
}

static json_t *metric_agg_json(const char *id, const metric_acc *a, const char *agg)
{
    json_t *o = json_pack("{s:s}", "id", id);
    int all = !agg || !*agg;
    if (!a->count) return o;
    if (all || strstr(agg, "min")) json_object_set_new(o, "min", json_real(a->mn));
    if (all || strstr(agg, "max")) json_object_set_new(o, "max", json_real(a->mx));
    if (all || strstr(agg, "avg")) json_object_set_new(o, "avg", json_real(a->sum / a->count));
    if (all || strstr(agg, "sum")) json_object_set_new(o, "sum", json_real(a->sum));
    return o;
}

/* GET /jobs/metrics[?get=a,b&agg=min,max,avg,sum]: Flink's job metrics
 * aggregated over every job (optionally only ?jobs=id,id). */
static json_t *jobs_metrics(route_ctx *rc)
{
    const char *names[16];
    double vals[16];
    size_t n = job_metric_values(NULL, names, vals);
    const char *get = jm_rest_qarg(rc, "get"), *agg = jm_rest_qarg(rc, "agg"), *only = jm_rest_qarg(rc, "jobs");
    json_t *arr = json_array();
    for (size_t m = 0; m < n; m++) {
        if (!get) {
            json_array_append_new(arr, json_pack("{s:s}", "id", names[m]));
            continue;
        }
        if (!list_has(get, names[m])) continue;
        metric_acc a = {0};
        for (jm_job *job = rc->j->jobs; job; job = job->next) {
            if (only && !list_has(only, job->id)) continue;
            job_metric_values(job, names, vals);
            metric_add(&a, vals[m]);
        }
        json_array_append_new(arr, metric_agg_json(names[m], &a, agg));
    }
    return arr;
}

/* GET /jobs/:id/metrics[?get=a,b]: the job's checkpoint metrics, Flink's names. */
static size_t job_metric_values(const jm_job *job, const char **names, double *vals)
{
    const jm_checkpoint *lc = job ? job->latest_completed : NULL;
    struct { const char *name; double v; } ms[] = {
        {"lastCheckpointDuration", lc ? (double)(lc->end_ms - lc->trigger_ms) : -1},
        {"lastCheckpointSize", lc ? (double)lc->state_size : -1},
        {"lastCheckpointFullSize", lc ? (double)lc->state_size : -1},
        {"lastCompletedCheckpointId", lc ? (double)lc->id : -1},
        {"lastCheckpointRestoreTimestamp", job && job->cp_restored ? (double)job->restored_ms : -1},
        {"numberOfCompletedCheckpoints", job ? job->cp_completed : 0},
        {"numberOfFailedCheckpoints", job ? job->cp_failed : 0},
        {"numberOfInProgressCheckpoints", job && job->pending != NULL},
        {"totalNumberOfCheckpoints", job ? job->cp_total : 0},
        {"numRestarts", job ? job->restarts : 0},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(ms); i++) {
        names[i] = ms[i].name;
        vals[i] = ms[i].v;
    }
    return SL_ARRAY_LEN(ms);
}

/* The job's latency histograms (metrics.latency.interval) as Flink's
 * metric store names a histogram's values: the job-scope groups, then
 * latency_<stat>. */
static void latency_metrics(const jm_job *job, const char *get, json_t *arr)
{
    static const char *const stats[] = {"min", "max", "mean", "median", "stddev", "p75",
                                        "p90", "p95", "p98", "p99", "p999"};
    for (int c = 0; c < job->g->nchains; c++) {
        const sl_chain *ch = &job->g->chains[c];
        for (int i = 0; i < ch->parallelism; i++) {
            const jm_metrics *mm = &job->tasks[c][i].metrics;
            for (int h = 0; h < mm->nlat; h++) {
                const Sluice__LatencyHistogram *x = &mm->lat[h];
                if (x->op >= (uint32_t)ch->n || x->source >= job->g->nv) continue;
                char base[400];
                size_t at = (size_t)snprintf(base, sizeof base, "latency.");
                if (x->source >= 0)
                    at += (size_t)snprintf(base + at, sizeof base - at, "source_id.%s.",
                                           job->g->v[x->source].uid);
                if (x->source >= 0 && x->source_subtask >= 0)
                    at += (size_t)snprintf(base + at, sizeof base - at, "source_subtask_index.%d.",
                                           x->source_subtask);
                snprintf(base + at, sizeof base - at, "operator_id.%s.operator_subtask_index.%d.latency",
                         job->g->v[ch->vertices[x->op]].uid, i);
                const double v[] = {x->min, x->max, x->mean, x->median, x->stddev, x->p75,
                                    x->p90, x->p95, x->p98, x->p99, x->p999};
                for (size_t k = 0; k < SL_ARRAY_LEN(stats); k++) {
                    char id[440];
                    snprintf(id, sizeof id, "%s_%s", base, stats[k]);
                    if (!get) {
                        json_array_append_new(arr, json_pack("{s:s}", "id", id));
                    } else if (list_has(get, id)) {
                        char num[64];
                        snprintf(num, sizeof num, "%.17g", v[k]);
                        json_array_append_new(arr, json_pack("{s:s,s:s}", "id", id, "value", num));
                    }
                }
            }
        }
    }
}

static json_t *job_metrics(route_ctx *rc, const jm_job *job)
{
    const char *names[16];
    double vals[16];
    size_t n = job_metric_values(job, names, vals);
    const char *get = jm_rest_qarg(rc, "get");
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (get) {
            if (!list_has(get, names[i])) continue;
            json_array_append_new(arr, json_pack("{s:s,s:o}", "id", names[i], "value",
                                                 jm_rest_metric_value(vals[i], names[i])));
        } else {
            json_array_append_new(arr, json_pack("{s:s}", "id", names[i]));
        }
    }
    if (job->tasks) latency_metrics(job, get, arr);
    return arr;
}

/* POST /jobs/:id/savepoints {"target-directory", "cancel-job"} and
 * POST /jobs/:id/stop {"targetDirectory", "drain"}. */
static void track_trigger(jm_job *job, jm_checkpoint *cp, int is_checkpoint, reply *r);

static void trigger_savepoint(route_ctx *rc, jm_job *job, int stop, reply *r)
{
    jm *j = rc->j;
    json_error_t jerr;
    json_t *body = rc->rq->len ? json_loadb(rc->rq->body, rc->rq->len, 0, &jerr) : json_object();
    if (!body || !json_is_object(body)) {
        reply_err(r, 400, "the request body must be a JSON object%s%s", body ? "" : ": ",
                  body ? "" : jerr.text);
        json_decref(body);
        return;
    }
    json_t *jt = json_object_get(body, stop ? "targetDirectory" : "target-directory");
    json_t *jflag = json_object_get(body, stop ? "drain" : "cancel-job");
    if ((jt && !json_is_string(jt) && !json_is_null(jt)) || (jflag && !json_is_boolean(jflag))) {
        reply_err(r, 400, "'%s' must be a string and '%s' a boolean",
                  stop ? "targetDirectory" : "target-directory", stop ? "drain" : "cancel-job");
        json_decref(body);
        return;
    }
    int flag = jflag && json_is_true(jflag);
    /* the target, if any, was checked against the allowed roots and made
     * canonical on the REST thread (prepare_target) */
    char *dir = jm_savepoint_dir(j, job, rc->target_dir);
    json_decref(body);
    if (!dir) {
        reply_err(r, 400, "no target directory given and state.savepoints.dir is not configured");
        return;
    }
    char err[300];
    jm_checkpoint *cp = jm_cp_trigger(j, job, stop ? CP_SYNC_SAVEPOINT : CP_SAVEPOINT, dir,
                                      stop || flag, stop && flag, err, sizeof err);
    free(dir);
    if (!cp) {
        reply_err(r, 409, "cannot take a savepoint: %s", err);
        return;
    }
    track_trigger(job, cp, 0, r);
}

/* REST thread, POST /jobs/:id/savepoints and /stop: a target directory
 * given must lie under an allowed root (rest_guard.c); keep its canonical
 * form for the loop. A body that is not JSON is left to the loop to refuse. */
static int prepare_target(route_ctx *rc, reply *r)
{
    int stop = !strcmp(rc->seg[2], "stop");
    json_error_t jerr;
    json_t *body = rc->rq->len ? json_loadb(rc->rq->body, rc->rq->len, 0, &jerr) : NULL;
    json_t *jt = json_object_get(body, stop ? "targetDirectory" : "target-directory");
    int rc_ = SL_OK;
    if (json_is_string(jt) && *json_string_value(jt)) {
        char err[1400];
        rc->target_dir = jm_rest_allowed_dir(rc->j, json_string_value(jt), "the savepoint target", err,
                                             sizeof err);
        if (!rc->target_dir) {
            reply_err(r, 400, "%s", err);
            rc_ = SL_ERR;
        }
    }
    json_decref(body);
    return rc_;
}

/* The REST trigger that asked for cp, for GET .../savepoints/:rid or
 * .../checkpoints/:rid; checkpoint.c answers it when cp ends. */
static void track_trigger(jm_job *job, jm_checkpoint *cp, int is_checkpoint, reply *r)
{
    jm_savepoint_op *op = sl_calloc(1, sizeof *op);
    sl_random_hex(op->request_id, 32);
    op->is_checkpoint = is_checkpoint;
    op->cp_id = cp->id;
    memcpy(cp->request_id, op->request_id, sizeof cp->request_id);
    op->next = job->sp_ops;
    job->sp_ops = op;
    reply_json(r, 202, json_pack("{s:s}", "request-id", op->request_id));
}

/* POST /jobs/:id/checkpoints {"checkpointType": "FULL"|"INCREMENTAL"|"CONFIGURED"}:
 * a checkpoint now, into state.checkpoints.dir like the periodic ones.
 * Sluice's checkpoints are always full snapshots, so every type is one. */
static void trigger_checkpoint(route_ctx *rc, jm_job *job, reply *r)
{
    json_error_t jerr;
    json_t *body = rc->rq->len ? json_loadb(rc->rq->body, rc->rq->len, 0, &jerr) : json_object();
    json_t *jt = json_object_get(body, "checkpointType");
    const char *type = json_is_string(jt) ? json_string_value(jt) : "CONFIGURED";
    if (!body || !json_is_object(body) || (jt && !json_is_string(jt) && !json_is_null(jt)) ||
        (strcmp(type, "FULL") && strcmp(type, "INCREMENTAL") && strcmp(type, "CONFIGURED"))) {
        reply_err(r, 400, "the body must be {\"checkpointType\": \"FULL\", \"INCREMENTAL\" or \"CONFIGURED\"}");
        json_decref(body);
        return;
    }
    json_decref(body);
    char err[300];
    jm_checkpoint *cp = jm_cp_trigger(rc->j, job, CP_CHECKPOINT, NULL, 0, 0, err, sizeof err);
    if (!cp) {
        reply_err(r, 409, "cannot take a checkpoint: %s", err);
        return;
    }
    track_trigger(job, cp, 1, r);
}

static jm_savepoint_op *find_trigger(jm_job *job, const char *rid, int is_checkpoint)
{
    for (jm_savepoint_op *x = job->sp_ops; x; x = x->next)
        if (!strcmp(x->request_id, rid) && x->is_checkpoint == is_checkpoint) return x;
    return NULL;
}

/* What the operators of the job's current attempt published
 * (sl_op_set_info): {"subtasks": [{"vertex", "subtask", "info"}]}; with
 * kafka_only, the open and pre-committed transactions of exactly-once
 * Kafka sinks as {"transactions": [...]} with their age. */
static json_t *operator_info(const jm_job *job, int kafka_only)
{
    json_t *out = json_array();
    int64_t now = sl_now_ms();
    for (int c = 0; c < job->g->nchains; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++) {
            const jm_metrics *mm = &job->tasks[c][i].metrics;
            if (!mm->info || mm->m.attempt != job->attempt) continue;
            json_t *all = json_loads(mm->info, 0, NULL);
            const char *vid;
            json_t *one;
            json_object_foreach(all, vid, one) {
                if (!kafka_only) {
                    json_array_append_new(out, json_pack("{s:s,s:i,s:O}", "vertex", vid,
                                                         "subtask", i, "info", one));
                    continue;
                }
                size_t k;
                json_t *tx;
                json_array_foreach(json_object_get(one, "kafka-transactions"), k, tx) {
                    json_t *o = json_deep_copy(tx);
                    json_object_set_new(o, "vertex", json_string(vid));
                    json_object_set_new(o, "subtask", json_integer(i));
                    json_t *at = json_object_get(o, "started-at");
                    if (json_is_integer(at))
                        json_object_set_new(o, "age-ms", json_integer(now - json_integer_value(at)));
                    json_array_append_new(out, o);
                }
            }
            json_decref(all);
        }
    return json_pack("{s:o}", kafka_only ? "transactions" : "subtasks", out);
}

static jm_checkpoint *find_checkpoint(jm_job *job, const char *id)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(id, &end, 10);
    if (errno || end == id || *end) return NULL;
    for (jm_checkpoint *x = job->cps; x; x = x->next)
        if (x->id == n) return x;
    return NULL;
}

/* GET /sluice/...: what Sluice has and Flink's REST API has no place for
 * (docs/REST.md). Flink's own endpoints keep Flink's shapes exactly. */
static void sluice_routes(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    if (strcmp(rc->method, "GET")) {
        reply_err(r, 405, "%s is not allowed on /sluice/...", rc->method);
    } else if (rc->nseg == 2 && !strcmp(rc->seg[1], "taskmanagers")) {
        reply_json(r, 200, sluice_tms(j));
    } else if (rc->nseg == 3 && !strcmp(rc->seg[1], "jobs") && !strcmp(rc->seg[2], "overview")) {
        json_t *arr = json_array();
        for (jm_job *job = j->jobs; job; job = job->next) json_array_append_new(arr, job_overview(job, 1));
        reply_json(r, 200, json_pack("{s:o}", "jobs", arr));
    } else if (rc->nseg >= 3 && !strcmp(rc->seg[1], "jobs")) {
        jm_job *job = jm_job_find(j, rc->seg[2]);
        int c = -1;
        if (!job) reply_err(r, 404, "Job %s not found", rc->seg[2]);
        else if (rc->nseg == 3) reply_json(r, 200, sluice_job(j, job));
        else if (rc->nseg == 4 && !strcmp(rc->seg[3], "checkpoints"))
            reply_json(r, 200, jm_rest_checkpoints_sluice(job));
        else if (rc->nseg == 4 && !strcmp(rc->seg[3], "operator-info"))
            reply_json(r, 200, operator_info(job, 0));
        else if (rc->nseg == 4 && !strcmp(rc->seg[3], "kafka-transactions"))
            reply_json(r, 200, operator_info(job, 1));
        else if (rc->nseg == 6 && !strcmp(rc->seg[3], "vertices") && !strcmp(rc->seg[5], "subtasks")) {
            if ((c = find_chain(job, rc->seg[4])) < 0)
                reply_err(r, 404, "Vertex %s not found in job %s", rc->seg[4], job->id);
            else reply_json(r, 200, jm_rest_sluice_subtasks(job, c));
        } else reply_err(r, 404, "Not found: no such Sluice resource of job %s", job->id);
    } else {
        reply_err(r, 404, "Not found: GET /sluice/%s", rc->nseg > 1 ? rc->seg[1] : "");
    }
}

/* Flink's ConfigurationInfo: every configuration key and value (secrets
 * masked); with a job, its own "config" keys over the cluster's. */
static json_t *cluster_config(jm *j, const jm_job *job)
{
    json_t *arr = json_array();
    json_t *own = job && job->g->conf ? job->g->conf : NULL;
    for (int i = 0; i < sl_config_count(j->conf); i++) {
        const char *k, *v;
        char bk[256];
        sl_config_entry(j->conf, i, &k, &v);
        if (!strcmp(k, "rest.auth-token") || !strcmp(k, "security.cluster.secret") ||
            !strcmp(k, "s3.secret-key"))
            v = *v ? "******" : "";
        /* the TaskManagers' setting is the one that counts, not ours */
        if (!strcmp(k, "state.backend.type")) v = job ? job_backend(j, job, bk, sizeof bk)
                                                      : tms_backends(j, bk, sizeof bk);
        if (json_is_string(json_object_get(own, k))) v = json_string_value(json_object_get(own, k));
        json_array_append_new(arr, json_pack("{s:s,s:s}", "key", k, "value", v));
    }
    const char *k;
    json_t *v;
    json_object_foreach(own, k, v) { /* the job's keys the cluster's list lacks */
        int listed = 0;
        for (int i = 0; i < sl_config_count(j->conf) && !listed; i++) {
            const char *ck, *cv;
            sl_config_entry(j->conf, i, &ck, &cv);
            listed = !strcmp(ck, k);
        }
        if (json_is_string(v) && !listed)
            json_array_append_new(arr, json_pack("{s:s,s:O}", "key", k, "value", v));
    }
    return arr;
}

/* Flink's JobExecutionResultResponseBody: IN_PROGRESS until the job ends, then
 * its JobResult (what Flink's client polls for a job's end). */
static json_t *execution_result(const jm_job *job)
{
    const char *app;
    switch (job->state) {
    case JOB_FINISHED: app = "SUCCEEDED"; break;
    case JOB_FAILED: app = "FAILED"; break;
    case JOB_CANCELED: app = "CANCELED"; break;
    default: return json_pack("{s:{s:s}}", "status", "id", "IN_PROGRESS");
    }
    json_t *res = json_pack("{s:s,s:s,s:{},s:I}", "id", job->id, "application-status", app,
                            "accumulator-results", "net-runtime", (json_int_t)job_duration(job));
    if (job->state != JOB_FINISHED)
        json_object_set_new(res, "failure-cause",
                            job->state == JOB_FAILED
                                ? failure_cause_json("org.apache.flink.runtime.JobException",
                                                     job->state_reason ? job->state_reason
                                                                       : "the job failed")
                                : failure_cause_json("org.apache.flink.runtime.client.JobCancellationException",
                                                     "Job was cancelled."));
    return json_pack("{s:{s:s},s:o}", "status", "id", "COMPLETED", "job-execution-result", res);
}

static void job_routes(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    jm_job *job = jm_job_find(j, rc->seg[1]);
    if (!job) {
        reply_err(r, 404, "Job %s not found", rc->seg[1]);
        return;
    }
    int get = !strcmp(rc->method, "GET");
    if (jm_rest_rescale_routes(rc, job, r)) return;
    if (rc->nseg == 2 && get) {
        reply_json(r, 200, job_detail(job));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "status")) {
        reply_json(r, 200, json_pack("{s:s}", "status", jm_job_state_name(job->state)));
    } else if (rc->nseg == 3 && !strcmp(rc->method, "POST") && !strcmp(rc->seg[2], "checkpoints")) {
        trigger_checkpoint(rc, job, r);
    } else if (rc->nseg == 2 && !strcmp(rc->method, "PATCH")) {
        const char *mode = jm_rest_qarg(rc, "mode");
        if (mode && strcmp(mode, "cancel")) {
            reply_err(r, 400, "mode must be 'cancel', got '%s'", mode);
            return;
        }
        if (jm_job_state_terminal(job->state)) {
            reply_err(r, 409, "Job %s is already %s", job->id, jm_job_state_name(job->state));
            return;
        }
        jm_job_cancel(j, job);
        reply_json(r, 202, json_object());
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "results")) {
        const char *tk = jm_rest_qarg(rc, "token"), *mx = jm_rest_qarg(rc, "max");
        char *e1 = NULL, *e2 = NULL;
        unsigned long long token = tk ? strtoull(tk, &e1, 10) : 0;
        long max = mx ? strtol(mx, &e2, 10) : SL_COLLECT_CREDIT;
        if ((tk && (!*tk || *e1 || tk[0] == '-')) || (mx && (!*mx || *e2 || max < 1))) {
            reply_err(r, 400, "token and max must be whole numbers (max at least 1)");
            return;
        }
        int status;
        char err[300];
        json_t *o = jm_results_fetch(j, job, token, (int)SL_MIN(max, SL_COLLECT_CREDIT), &status,
                                     err, sizeof err);
        if (o) reply_json(r, 200, o);
        else reply_err(r, status, "%s", err);
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "exceptions")) {
        /* Flink 2.x's RootExceptionInfo, newest first; Sluice records each failure
         * on its own, so none has concurrent exceptions, and it labels none */
        json_t *entries = json_array();
        for (int i = job->nexceptions - 1; i >= 0; i--) {
            const jm_exception *e = &job->exceptions[i];
            json_t *o = json_pack("{s:s,s:s,s:I,s:{},s:[]}", "exceptionName", e->name,
                                  "stacktrace", e->stacktrace, "timestamp",
                                  (json_int_t)e->timestamp, "failureLabels",
                                  "concurrentExceptions");
            json_object_set_new(o, "taskName", e->task ? json_string(e->task) : json_null());
            json_object_set_new(o, "endpoint", e->endpoint ? json_string(e->endpoint) : json_null());
            json_object_set_new(o, "taskManagerId", e->tm_id ? json_string(e->tm_id) : json_null());
            json_array_append_new(entries, o);
        }
        reply_json(r, 200, json_pack("{s:{s:o,s:b}}", "exceptionHistory", "entries", entries,
                                     "truncated", job->nexceptions >= 64));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "metrics")) {
        reply_json(r, 200, job_metrics(rc, job));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "plan")) {
        reply_json(r, 200, json_pack("{s:o}", "plan", job_plan(job)));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "execution-result")) {
        reply_json(r, 200, execution_result(job));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "accumulators")) {
        /* Sluice's jobs keep no accumulators */
        reply_json(r, 200, json_pack("{s:[],s:[],s:{}}", "job-accumulators", "user-task-accumulators",
                                     "serialized-user-task-accumulators"));
    } else if (rc->nseg == 4 && get && !strcmp(rc->seg[2], "jobmanager") &&
               !strcmp(rc->seg[3], "config")) {
        reply_json(r, 200, cluster_config(j, job));
    } else if (rc->nseg == 4 && get && !strcmp(rc->seg[2], "jobmanager") &&
               !strcmp(rc->seg[3], "environment")) {
        reply_json(r, 200, sl_proc_environment("Sluice JobManager " SL_VERSION));
    } else if (get && ((rc->nseg == 4 && !strcmp(rc->seg[2], "jobmanager") &&
                        !strcmp(rc->seg[3], "log-url")) ||
                       (rc->nseg == 5 && !strcmp(rc->seg[2], "taskmanagers") &&
                        !strcmp(rc->seg[4], "log-url")))) {
        /* as Flink without historyserver.log.*.url-pattern: there is no
         * external log service to link to; the logs are served here */
        reply_err(r, 404, "No log url pattern is configured: the logs are at /jobmanager/logs");
    } else if (rc->nseg == 4 && get && !strcmp(rc->seg[2], "rescaling")) {
        reply_err(r, 404, "Rescaling operation %s of job %s not found", rc->seg[3], job->id);
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "config")) {
        reply_json(r, 200, json_pack("{s:s,s:s,s:{s:i,s:s,s:b,s:{}}}", "jid", job->id, "name",
                                     job->g->name, "execution-config", "job-parallelism",
                                     job->g->parallelism, "restart-strategy",
                                     job->set.restart_type == JM_RESTART_FIXED ? "fixed-delay"
                                     : job->set.restart_type == JM_RESTART_EXPONENTIAL
                                         ? "exponential-delay" : "none",
                                     "object-reuse-mode", 0, "user-config"));
    } else if (rc->nseg >= 3 && get && !strcmp(rc->seg[2], "checkpoints")) {
        if (rc->nseg == 4 && !strcmp(rc->seg[3], "config")) {
            json_t *o = json_object();
            json_object_set_new(o, "mode", json_string(job->set.cp_exactly_once ? "exactly_once" : "at_least_once"));
            json_object_set_new(o, "interval", json_integer(job->set.cp_interval_ms));
            json_object_set_new(o, "timeout", json_integer(job->set.cp_timeout_ms));
            json_object_set_new(o, "min_pause", json_integer(job->set.cp_min_pause_ms));
            json_object_set_new(o, "max_concurrent", json_integer(sl_config_int(j->conf, "execution.checkpointing.max-concurrent-checkpoints")));
            json_object_set_new(o, "externalization", json_pack("{s:b,s:b}", "enabled", 1, "delete_on_cancellation", j->cp_delete_on_cancel));
            char bk[256];
            /* what the TaskManagers use, not this daemon's own setting */
            json_object_set_new(o, "state_backend", json_string(job_backend(j, job, bk, sizeof bk)));
            json_object_set_new(o, "checkpoint_storage", json_string("FileSystemCheckpointStorage"));
            json_object_set_new(o, "unaligned_checkpoints", json_boolean(job->set.cp_unaligned));
            json_object_set_new(o, "tolerable_failed_checkpoints", json_integer(job->set.cp_tolerable));
            json_object_set_new(o, "aligned_checkpoint_timeout",
                                json_integer(job->set.cp_unaligned ? job->set.cp_aligned_timeout_ms : 0));
            /* Flink's field for a feature Sluice has not: no state changelog */
            json_object_set_new(o, "checkpoints_after_tasks_finish", json_true());
            json_object_set_new(o, "state_changelog_enabled", json_false());
            json_object_set_new(o, "changelog_periodic_materialization_interval", json_integer(0));
            json_object_set_new(o, "changelog_storage", json_null());
            reply_json(r, 200, o);
        } else if (rc->nseg == 3) {
            reply_json(r, 200, jm_rest_checkpoints_json(job));
        } else if (rc->nseg == 4) {
            jm_savepoint_op *op = find_trigger(job, rc->seg[3], 1);
            if (!op) reply_err(r, 404, "Checkpoint trigger %s of job %s not found", rc->seg[3], job->id);
            else reply_async(r, op, "org.apache.flink.runtime.checkpoint.CheckpointException");
        } else if (rc->nseg == 5 && !strcmp(rc->seg[3], "details")) {
            jm_checkpoint *cp = find_checkpoint(job, rc->seg[4]);
            if (!cp) reply_err(r, 404, "Checkpoint %s of job %s not found", rc->seg[4], job->id);
            else reply_json(r, 200, jm_rest_checkpoint_details(job, cp));
        } else if (rc->nseg == 7 && !strcmp(rc->seg[3], "details") && !strcmp(rc->seg[5], "subtasks")) {
            jm_checkpoint *cp = find_checkpoint(job, rc->seg[4]);
            int c = find_chain(job, rc->seg[6]);
            if (!cp) reply_err(r, 404, "Checkpoint %s of job %s not found", rc->seg[4], job->id);
            else if (c < 0) reply_err(r, 404, "Vertex %s not found in job %s", rc->seg[6], job->id);
            else reply_json(r, 200, jm_rest_checkpoint_subtasks(job, cp, c));
        } else {
            reply_err(r, 404, "Not found: checkpoint resource");
        }
    } else if (rc->nseg == 3 && !strcmp(rc->method, "POST") &&
               (!strcmp(rc->seg[2], "savepoints") || !strcmp(rc->seg[2], "stop"))) {
        trigger_savepoint(rc, job, !strcmp(rc->seg[2], "stop"), r);
    } else if (rc->nseg == 4 && get && !strcmp(rc->seg[2], "savepoints")) {
        jm_savepoint_op *op = find_trigger(job, rc->seg[3], 0);
        if (!op) reply_err(r, 404, "Savepoint trigger %s of job %s not found", rc->seg[3], job->id);
        else reply_async(r, op, "org.apache.flink.runtime.checkpoint.CheckpointException");
    } else if (rc->nseg >= 4 && get && !strcmp(rc->seg[2], "vertices")) {
        int c = find_chain(job, rc->seg[3]);
        if (c < 0) reply_err(r, 404, "Vertex %s not found in job %s", rc->seg[3], job->id);
        else jm_rest_vertex_routes(rc, job, c, r);
    } else {
        reply_err(r, 404, "Not found: %s /jobs/%s/%s", rc->method, job->id,
                  rc->nseg > 2 ? rc->seg[2] : "");
    }
}

/* REST thread, POST /jobs and POST /savepoints/check: parse and plan the
 * graph (pure), and check the savepoint to restore from (the I/O worker
 * reads it). Returns SL_OK when the loop should take it from here; else r
 * holds the answer (an error, or the check's report). */
static int prepare_submit(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    int64_t p = 0;
    const char *ps = jm_rest_qarg(rc, "parallelism");
    if (ps && *ps && (sl_parse_int(ps, &p) != SL_OK || p < 1 || p > 32768)) {
        reply_err(r, 400, "parallelism must be an integer between 1 and 32768, got '%s'", ps);
        return SL_ERR;
    }
    const char *sp = jm_rest_qarg(rc, "savepointPath");
    const char *anr = jm_rest_qarg(rc, "allowNonRestoredState");
    int allow = anr && (!strcmp(anr, "true") || !strcmp(anr, "1"));
    if (!rc->rq->len) {
        reply_err(r, 400, "the request body must be a JSON job graph (see docs/JOBS.md)");
        return SL_ERR;
    }
    char err[1024];
    sl_jobgraph *g = sl_jobgraph_parse(rc->rq->body, rc->rq->len, j->default_parallelism, (int)p,
                                       err, sizeof err);
    if (!g || jm_job_graph_check(j, g, err, sizeof err) != SL_OK) {
        sl_jobgraph_destroy(g);
        reply_err(r, 400, "%s", err);
        return SL_ERR;
    }
    int check = rc->nseg == 2; /* POST /savepoints/check: report only */
    if (!check && jm_jars_collect_functions(j, g, &rc->libs, &rc->nlibs, err, sizeof err) != SL_OK) {
        sl_jobgraph_destroy(g);
        reply_err(r, 400, "%s", err);
        return SL_ERR;
    }
    if ((sp && *sp) || check) {
        if (!sp || !*sp) {
            sl_jobgraph_destroy(g);
            reply_err(r, 400, "savepointPath is required");
            return SL_ERR;
        }
        char perr[1400];
        char *from = jm_rest_allowed_dir(j, sp, "savepointPath", perr, sizeof perr);
        if (!from) {
            sl_jobgraph_destroy(g);
            reply_err(r, 400, "%s", perr);
            return SL_ERR;
        }
        json_t *report = NULL;
        jm_io_job io;
        memset(&io, 0, sizeof io);
        io.qm.type = JM_IO_RESTORE_PLAN;
        io.g = g;
        io.path = sp; /* allowed (checked above); messages name it as the user gave it */
        io.allow_non_restored = allow;
        io.report = check ? &report : NULL;
        io.dir_out = &rc->restore_dir;
        io.cpid_out = &rc->restore_cpid;
        io.is_savepoint_out = &rc->restore_is_savepoint;
        int io_rc = jm_io_call(j, &io);
        free(from);
        if (io_rc != SL_OK) {
            sl_jobgraph_destroy(g);
            free(rc->restore_dir);
            rc->restore_dir = NULL;
            reply_err(r, 400, "%s", io.err);
            return SL_ERR;
        }
        if (check) {
            free(rc->restore_dir);
            rc->restore_dir = NULL;
            sl_jobgraph_destroy(g);
            reply_json(r, 200, report);
            return SL_ERR;
        }
    }
    rc->g = g;
    return SL_OK;
}

/* Loop: register the prepared job and try to schedule it. */
static void submit_job(route_ctx *rc, reply *r)
{
    char err[700];
    jm_job *job = jm_job_admit_libs(rc->j, rc->g, rc->restore_dir, rc->restore_cpid,
                                    rc->restore_is_savepoint, rc->libs, rc->nlibs, err, sizeof err);
    rc->g = NULL;
    rc->libs = NULL;
    rc->nlibs = 0;
    rc->restore_dir = NULL;
    if (!job) {
        reply_err(r, 503, "%s", err);
        return;
    }
    reply_json(r, 200, json_pack("{s:s, s:o}", "jobid", job->id, "warnings", sl_jobgraph_warnings(job->g)));
}

/* REST thread: remove the savepoint named by body.savepoint-path (on the
 * I/O worker; no JobManager state involved). SL_ERR with the reason in err
 * when the body is not {"savepoint-path"} (*bad_body set), the path is not
 * under an allowed root, there is no savepoint there (*not_found set), its
 * _metadata is not a savepoint's, or removing it failed. */
static int dispose_path(route_ctx *rc, int *bad_body, int *not_found, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *body = json_loadb(rc->rq->body ? rc->rq->body : "", rc->rq->len, 0, &jerr);
    json_t *jp = json_object_get(body, "savepoint-path");
    int rc_ = SL_OK;
    *bad_body = *not_found = 0;
    if (!json_is_string(jp)) {
        json_decref(body);
        *bad_body = 1;
        return sl_seterr(err, errlen, "the body must be {\"savepoint-path\": \"...\"}");
    }
    char *dir = jm_rest_allowed_dir(rc->j, json_string_value(jp), "the savepoint to dispose of", err, errlen);
    if (!dir) {
        rc_ = SL_ERR;
    } else {
        jm_io_job io;
        memset(&io, 0, sizeof io);
        io.qm.type = JM_IO_DISPOSE;
        io.dir = dir; /* borrowed: a waited-for job is not freed by the worker */
        if (jm_io_call(rc->j, &io) != SL_OK) {
            *not_found = io.not_found;
            rc_ = sl_seterr(err, errlen, "cannot dispose of savepoint '%s': %s", json_string_value(jp), io.err);
        }
        free(dir);
    }
    json_decref(body);
    return rc_;
}

/* REST thread, POST /savepoints/dispose {"savepoint-path"}: Sluice's
 * synchronous disposal, answered at once: 404 when there is no savepoint. */
static void dispose_savepoint(route_ctx *rc, reply *r)
{
    char err[1400];
    int bad, not_found;
    if (dispose_path(rc, &bad, &not_found, err, sizeof err) != SL_OK) reply_err(r, not_found ? 404 : 400, "%s", err);
    else reply_json(r, 200, json_object());
}

/* Loop, POST /savepoint-disposal (Flink's asynchronous form): the REST
 * thread has already disposed of it; record the outcome for
 * GET /savepoint-disposal/:rid. The newest 64 are kept. */
static void record_disposal(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    jm_savepoint_op *op = sl_calloc(1, sizeof *op);
    sl_random_hex(op->request_id, 32);
    op->done = rc->disposal_rc == SL_OK ? 1 : -1;
    if (op->done < 0) op->failure = sl_strdup(rc->disposal_err);
    op->next = j->disposals;
    j->disposals = op;
    int n = 0;
    for (jm_savepoint_op *x = j->disposals; x; x = x->next)
        if (++n == 64) {
            while (x->next) {
                jm_savepoint_op *dead = x->next;
                x->next = dead->next;
                free(dead->failure);
                free(dead);
            }
            break;
        }
    reply_json(r, 202, json_pack("{s:s}", "request-id", op->request_id));
}

int jm_rest_authorized(jm *j, struct MHD_Connection *conn)
{
    const char *tok = j->auth_token;
    if (!tok || !*tok) return 1;
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7)) return 0;
    h += 7;
    size_t a = strlen(h), b = strlen(tok);
    unsigned diff = (unsigned)(a ^ b);
    for (size_t i = 0; i < a && i < b; i++) diff |= (unsigned)(h[i] ^ tok[i]);
    return diff == 0;
}

/* One process's metrics in Flink's MetricCollectionResponseBody: every id
 * without ?get, else the ones asked for with their values. */
static json_t *metric_answer(route_ctx *rc, const char *const *names, const double *vals, size_t n)
{
    const char *get = jm_rest_qarg(rc, "get");
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (get && !list_has(get, names[i])) continue;
        if (get) json_array_append_new(arr, json_pack("{s:s,s:o}", "id", names[i], "value",
                                                      jm_rest_metric_value(vals[i], names[i])));
        else json_array_append_new(arr, json_pack("{s:s}", "id", names[i]));
    }
    return arr;
}

/* The process metrics both daemons have, under Flink's names for the
 * JVM's (the process is what the JVM is there): CPU load (0..1 of the
 * machine) and time (ns), threads; memory under Flink's ProcessTree group. */
#define PROCESS_METRICS 5
static const char *const process_metric_names[PROCESS_METRICS] = {
    "Status.JVM.CPU.Load", "Status.JVM.CPU.Time", "Status.JVM.Threads.Count",
    "Status.ProcessTree.Memory.RSS", "Status.ProcessTree.Memory.Virtual"};

/* A TaskManager's metrics (from its heartbeats): returns their number. */
#define TM_METRICS (PROCESS_METRICS + 1)
static size_t tm_metric_values(jm *j, const jm_tm *tm, const char **names, double *vals)
{
    size_t n = 0;
    for (; n < PROCESS_METRICS; n++) names[n] = process_metric_names[n];
    names[n++] = "Status.Flink.Memory.Managed.Total";
    if (!tm) return n;
    double v[TM_METRICS] = {tm->cpu_load, (double)tm->cpu_ns, tm->threads, (double)tm->rss_bytes,
                            (double)tm->virtual_bytes, (double)tm->managed_memory};
    (void)j;
    memcpy(vals, v, sizeof v);
    return n;
}

/* GET /taskmanagers/metrics[?get=a,b&agg=min,max,avg,sum&taskmanagers=id,id]:
 * Flink's TaskManager metrics aggregated over the TaskManagers. */
static json_t *taskmanagers_metrics(route_ctx *rc)
{
    const char *names[TM_METRICS];
    double vals[TM_METRICS];
    size_t n = tm_metric_values(rc->j, NULL, names, vals);
    const char *get = jm_rest_qarg(rc, "get"), *agg = jm_rest_qarg(rc, "agg");
    const char *only = jm_rest_qarg(rc, "taskmanagers");
    json_t *arr = json_array();
    for (size_t m = 0; m < n; m++) {
        if (!get) {
            json_array_append_new(arr, json_pack("{s:s}", "id", names[m]));
            continue;
        }
        if (!list_has(get, names[m])) continue;
        metric_acc a = {0};
        for (jm_tm *tm = rc->j->tms; tm; tm = tm->next) {
            if (only && !list_has(only, tm->id)) continue;
            tm_metric_values(rc->j, tm, names, vals);
            metric_add(&a, vals[m]);
        }
        json_array_append_new(arr, metric_agg_json(names[m], &a, agg));
    }
    return arr;
}

/* GET /jobmanager/metrics[?get=a,b]: Flink's JobManager metrics that
 * Sluice has: the cluster's, and its own process's (read now; the CPU
 * load over the time since the previous reading at least 1 s before). */
static json_t *jobmanager_metrics(route_ctx *rc)
{
    jm *j = rc->j;
    int ntm = 0, running = 0;
    for (jm_tm *tm = j->tms; tm; tm = tm->next) ntm++;
    for (jm_job *job = j->jobs; job; job = job->next) running += job->state == JOB_RUNNING;
    sl_proc_stats ps;
    sl_proc_stats_read(&ps);
    int64_t now = sl_mono_ms();
    if (!j->self_cpu_at_ms || now - j->self_cpu_at_ms >= 1000) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (j->self_cpu_at_ms)
            j->self_cpu_load = sl_proc_cpu_load(j->self_cpu_ns, ps.cpu_ns, now - j->self_cpu_at_ms, (int)ncpu);
        j->self_cpu_ns = ps.cpu_ns;
        j->self_cpu_at_ms = now;
    }
    const char *names[4 + PROCESS_METRICS] = {"numRegisteredTaskManagers", "numRunningJobs",
                                              "taskSlotsAvailable", "taskSlotsTotal"};
    for (int i = 0; i < PROCESS_METRICS; i++) names[4 + i] = process_metric_names[i];
    double vals[4 + PROCESS_METRICS] = {ntm, running, jm_slots_free(j), jm_slots_total(j),
                                        j->self_cpu_load, (double)ps.cpu_ns, ps.threads,
                                        (double)ps.rss_bytes, (double)ps.virtual_bytes};
    return metric_answer(rc, names, vals, SL_ARRAY_LEN(vals));
}

/* GET /taskmanagers/:id/metrics[?get=a,b] */
static json_t *taskmanager_metrics(route_ctx *rc, const jm_tm *tm)
{
    const char *names[TM_METRICS];
    double vals[TM_METRICS];
    size_t n = tm_metric_values(rc->j, tm, names, vals);
    return metric_answer(rc, names, vals, n);
}

static void route(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    const char *m = rc->method;
    int get = !strcmp(m, "GET");
    if (rc->pinfo_stage) return jm_rest_pinfo_route(rc, r);
    if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "config")) {
        /* Flink's DashboardConfiguration exactly: flink-version is Sluice's */
        reply_json(r, 200, json_pack("{s:i,s:s,s:i,s:s,s:s,s:{s:b,s:b,s:b}}", "refresh-interval",
                                     3000, "timezone-name", "UTC", "timezone-offset", 0,
                                     "flink-version", SL_VERSION, "flink-revision", "sluice",
                                     "features", "web-submit", sl_config_bool(j->conf, "web.submit.enable"),
                                     "web-cancel", 1, "web-history", 0));
        /* web-submit: the jar API with C jobs (jars.c), whose upload the
         * submit page offers; POST /jobs with JSON graphs is always there */
        json_object_set_new(json_object_get(r->json, "features"), "web-rescale", json_true());
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "sluice") && !strcmp(rc->seg[1], "ha")) {
        /* which JobManager leads and this one's role (Flink's /config has
         * no place for it; standbys answer this too) */
        reply_json(r, 200, jm_ha_json(j));
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "jobmanager") && !strcmp(rc->seg[1], "config")) {
        reply_json(r, 200, cluster_config(j, NULL));
    } else if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "overview")) {
        int counts[JOB_NSTATES] = {0};
        for (jm_job *job = j->jobs; job; job = job->next) counts[job->state]++;
        int ntm = 0;
        for (jm_tm *tm = j->tms; tm; tm = tm->next) ntm++;
        /* Flink's ClusterOverview: jobs-running counts every job that has
         * not ended, the ones waiting to be scheduled too, as Flink does */
        reply_json(r, 200, json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:s}", "taskmanagers", ntm,
                                     "slots-total", jm_slots_total(j), "slots-available",
                                     jm_slots_free(j), "jobs-running",
                                     counts[JOB_RUNNING] + counts[JOB_RESTARTING] +
                                         counts[JOB_CANCELLING] + counts[JOB_FAILING] +
                                         counts[JOB_CREATED] + counts[JOB_INITIALIZING] +
                                         counts[JOB_SUSPENDED],
                                     "jobs-finished", counts[JOB_FINISHED], "jobs-cancelled",
                                     counts[JOB_CANCELED], "jobs-failed", counts[JOB_FAILED],
                                     "flink-version", SL_VERSION, "flink-commit", "sluice"));
        /* Flink's blocklist (nodes marked bad); Sluice has none */
        json_object_set_new(r->json, "taskmanagers-blocked", json_integer(0));
        json_object_set_new(r->json, "slots-free-and-blocked", json_integer(0));
    } else if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "taskmanagers")) {
        json_t *arr = json_array();
        for (jm_tm *tm = j->tms; tm; tm = tm->next) json_array_append_new(arr, tm_json(j, tm, 0));
        reply_json(r, 200, json_pack("{s:o}", "taskmanagers", arr));
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "taskmanagers") &&
               !strcmp(rc->seg[1], "metrics")) {
        reply_json(r, 200, taskmanagers_metrics(rc));
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "taskmanagers")) {
        jm_tm *tm = jm_tm_find(j, rc->seg[1]);
        if (!tm) reply_err(r, 404, "TaskManager %s not found", rc->seg[1]);
        else reply_json(r, 200, tm_json(j, tm, 1));
    } else if (rc->nseg == 1 && !strcmp(rc->seg[0], "jobs")) {
        if (get) {
            json_t *arr = json_array();
            for (jm_job *job = j->jobs; job; job = job->next)
                json_array_append_new(arr, json_pack("{s:s,s:s}", "id", job->id, "status",
                                                     jm_job_state_name(job->state)));
            reply_json(r, 200, json_pack("{s:o}", "jobs", arr));
        } else if (!strcmp(m, "POST")) {
            submit_job(rc, r);
        } else {
            reply_err(r, 405, "%s is not allowed on /jobs", m);
        }
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "jobs") && !strcmp(rc->seg[1], "metrics")) {
        reply_json(r, 200, jobs_metrics(rc));
    } else if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "datasets")) {
        /* Flink's cluster partitions of batch jobs; a streaming cluster has none */
        reply_json(r, 200, json_pack("{s:[]}", "dataSets"));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[0], "datasets") && !strcmp(rc->seg[1], "delete")) {
        reply_err(r, 404, "Unknown trigger id %s: there are no data sets to delete", rc->seg[2]);
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "applications") &&
               !strcmp(rc->seg[1], "overview")) {
        /* Flink 2.x's applications: Sluice's jobs belong to none */
        reply_json(r, 200, json_pack("{s:[]}", "applications"));
    } else if (rc->nseg >= 2 && get && !strcmp(rc->seg[0], "applications")) {
        reply_err(r, 404, "Application %s not found", rc->seg[1]);
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "jobs") && !strcmp(rc->seg[1], "overview")) {
        json_t *arr = json_array();
        for (jm_job *job = j->jobs; job; job = job->next) json_array_append_new(arr, job_overview(job, 0));
        reply_json(r, 200, json_pack("{s:o}", "jobs", arr));
    } else if (rc->nseg >= 2 && !strcmp(rc->seg[0], "jobs")) {
        job_routes(rc, r);
    } else if (rc->nseg >= 1 && !strcmp(rc->seg[0], "sluice")) {
        sluice_routes(rc, r);
    } else if (rc->nseg == 1 && !strcmp(m, "POST") && !strcmp(rc->seg[0], "savepoint-disposal")) {
        record_disposal(rc, r);
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "savepoint-disposal")) {
        jm_savepoint_op *op = NULL;
        for (jm_savepoint_op *x = j->disposals; x && !op; x = x->next)
            if (!strcmp(x->request_id, rc->seg[1])) op = x;
        if (!op) reply_err(r, 404, "Savepoint disposal %s not found", rc->seg[1]);
        else reply_async(r, op, "org.apache.flink.util.FlinkException");
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "jobmanager") && !strcmp(rc->seg[1], "metrics")) {
        reply_json(r, 200, jobmanager_metrics(rc));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[0], "taskmanagers") && !strcmp(rc->seg[2], "metrics")) {
        jm_tm *tm = jm_tm_find(j, rc->seg[1]);
        if (!tm) reply_err(r, 404, "TaskManager %s not found", rc->seg[1]);
        else reply_json(r, 200, taskmanager_metrics(rc, tm));
    } else {
        reply_err(r, 404, "Not found: %s /%s", m, rc->nseg ? rc->seg[0] : "");
    }
}

/* ---- static files ----------------------------------------------------- */

static const char *mime_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return "application/octet-stream";
    if (!strcmp(dot, ".html")) return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js") || !strcmp(dot, ".mjs")) return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css")) return "text/css; charset=utf-8";
    if (!strcmp(dot, ".svg")) return "image/svg+xml";
    if (!strcmp(dot, ".json")) return "application/json";
    if (!strcmp(dot, ".png")) return "image/png";
    if (!strcmp(dot, ".ico")) return "image/x-icon";
    return "application/octet-stream";
}

static int safe_path(const char *p)
{
    if (!*p || strstr(p, "..") || p[0] == '/') return 0;
    for (; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '/' || *p == '.' || *p == '-' || *p == '_'))
            return 0;
    return 1;
}

static MHD_RESULT serve_file(jm *j, struct MHD_Connection *conn, const char *url)
{
    const char *rel = url[0] == '/' ? url + 1 : url;
    if (!*rel) rel = "index.html";
    struct MHD_Response *resp;
    int status;
    char path[1024];
    int fd = -1;
    struct stat st;
    if (safe_path(rel) && j->web_root &&
        snprintf(path, sizeof path, "%s/%s", j->web_root, rel) < (int)sizeof path &&
        (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
        MHD_add_response_header(resp, "Content-Type", mime_of(rel));
        MHD_add_response_header(resp, "Cache-Control", "no-cache");
        status = 200;
    } else {
        if (fd >= 0) close(fd);
        sl_info(TAG, "GET %s -> 404: no such file in the web root", url);
        static const char nf[] = "{\"errors\":[\"Not found.\"]}";
        resp = MHD_create_response_from_buffer(sizeof nf - 1, (void *)nf, MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(resp, "Content-Type", "application/json");
        status = 404;
    }
    MHD_RESULT ret = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* ---- libmicrohttpd glue ----------------------------------------------- */

static int is_api_path(const char *url)
{
    static const char *prefixes[] = {"/config", "/overview", "/jobs", "/taskmanagers",
                                     "/jobmanager", "/savepoints", "/savepoint-disposal",
                                     "/jars", "/sql", "/sluice", "/datasets", "/applications",
                                     NULL};
    for (int i = 0; prefixes[i]; i++) {
        size_t n = strlen(prefixes[i]);
        if (!strncmp(url, prefixes[i], n) && (url[n] == '\0' || url[n] == '/')) return 1;
    }
    return 0;
}

static MHD_RESULT on_request(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload_data,
                             size_t *upload_size, void **con_cls)
{
    jm *j = cls;
    /* Flink's REST client puts the API version first (/v1/jobs/overview);
     * the same API answers with and without it */
    const char *path = url;
    int v1 = !strncmp(url, "/v1", 3) && (url[3] == '/' || url[3] == '\0');
    if (v1) path = url + 3;
    req *rq = *con_cls;
    if (!rq) {
        /* the first call: the headers only. Every request, /jars included,
         * is judged here, before a byte of its body is read or stored */
        rq = sl_calloc(1, sizeof *rq);
        *con_cls = rq;
        rq->jars = jm_jars_path(url);
        rq->refused = jm_rest_admit(j, conn, method, path, rq->why, sizeof rq->why);
        if (rq->refused || !rq->jars) return MHD_YES;
    }
    if (rq->refused) {
        if (*upload_size) { /* read and dropped */
            *upload_size = 0;
            return MHD_YES;
        }
        reply r = {0, NULL};
        reply_err(&r, rq->refused, "%s", rq->why);
        sl_info(TAG, "%s %s -> %d: %s", method, url, rq->refused, rq->why);
        return sl_reply_send(conn, &r);
    }
    if (rq->jars) return (MHD_RESULT)jm_jars_request(j, conn, url, method, upload_data, upload_size, &rq->jar);
    if (*upload_size) {
        if (rq->len + *upload_size > MAX_BODY) rq->too_big = 1;
        else {
            rq->body = sl_realloc(rq->body, rq->len + *upload_size + 1);
            memcpy(rq->body + rq->len, upload_data, *upload_size);
            rq->len += *upload_size;
            rq->body[rq->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (!v1 && !is_api_path(url) && (!strcmp(method, "GET") || !strcmp(method, "HEAD")))
        return serve_file(j, conn, url);

    reply r = {0, NULL};
    route_ctx rc;
    memset(&rc, 0, sizeof rc);
    rc.j = j;
    rc.method = method;
    rc.rq = rq;
    rc.r = &r;
    char *copy = sl_strdup(path), *save = NULL;
    for (char *s = strtok_r(copy, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (rc.nseg == (int)SL_ARRAY_LEN(rc.seg)) { rc.nseg = -1; break; }
        rc.seg[rc.nseg++] = s;
    }
    int post = !strcmp(method, "POST");
    int bad_body = 0, file = -1;
    uint64_t file_size = 0;
    int savepoints = rc.nseg == 2 && post && !strcmp(rc.seg[0], "savepoints");
    int disposal = rc.nseg == 1 && post && !strcmp(rc.seg[0], "savepoint-disposal");
    if (rq->too_big) {
        reply_err(&r, 413, "request body larger than %u bytes", MAX_BODY);
    } else if (!(rc.nseg == 1 && !strcmp(rc.seg[0], "config")) &&
               !(rc.nseg == 2 && !strcmp(rc.seg[0], "sluice") && !strcmp(rc.seg[1], "ha")) &&
               jm_ha_rest_refuse(j, &r.status, &r.json)) {
        /* a standby JobManager: says where the leader is (ha.c) */
    } else if (rc.nseg < 0) {
        reply_err(&r, 404, "Not found: path too long");
    } else if (jm_rest_process_routes(&rc, &r, &file, &file_size)) {
        if (file >= 0) {
            free(copy);
            return jm_rest_send_file(conn, file, file_size);
        }
    } else if ((rc.pinfo_kind = jm_rest_tm_process_kind(&rc)) >= 0) {
        uint8_t *data = NULL;
        size_t len = 0;
        jm_rest_tm_process(j, &rc, &r, &data, &len);
        if (data) {
            free(copy);
            struct MHD_Response *resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
            MHD_add_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
            MHD_add_response_header(resp, "Cache-Control", "no-cache");
            MHD_RESULT ret = MHD_queue_response(conn, 200, resp);
            MHD_destroy_response(resp);
            return ret;
        }
    } else if (savepoints && !strcmp(rc.seg[1], "dispose")) {
        dispose_savepoint(&rc, &r);
    } else if (disposal && (rc.disposal_rc = dispose_path(&rc, &bad_body, &rc.disposal_not_found,
                                                          rc.disposal_err, sizeof rc.disposal_err)) != SL_OK &&
               bad_body) {
        reply_err(&r, 400, "%s", rc.disposal_err);
    } else {
        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, copy_arg, &rc);
        int submit = (rc.nseg == 1 && post && !strcmp(rc.seg[0], "jobs")) ||
                     (savepoints && !strcmp(rc.seg[1], "check"));
        int target = rc.nseg == 3 && post && !strcmp(rc.seg[0], "jobs") &&
                     (!strcmp(rc.seg[2], "savepoints") || !strcmp(rc.seg[2], "stop"));
        if ((!submit || prepare_submit(&rc, &r) == SL_OK) && (!target || prepare_target(&rc, &r) == SL_OK)) {
            if (savepoints && !submit) {
                reply_err(&r, 404, "Not found: %s /savepoints/%s", method, rc.seg[1]);
            } else {
                jm_op op;
                memset(&op, 0, sizeof op);
                op.qm.type = JM_OP_REST;
                op.u.rest.ctx = &rc;
                if (jm_op_call(j, &op) != SL_OK) {
                    json_decref(r.json);
                    reply_err(&r, 503, "the JobManager is shutting down");
                }
            }
        }
        /* what the loop did not take */
        sl_jobgraph_destroy(rc.g);
        free(rc.restore_dir);
        for (size_t i = 0; i < rc.nlibs; i++) jm_user_library_free(rc.libs[i]);
        free(rc.libs);
        free(rc.target_dir);
        for (int i = 0; i < rc.nargs; i++) {
            free(rc.arg_key[i]);
            free(rc.arg_val[i]);
        }
    }
    free(copy);
    if (r.status >= 400) {
        /* a client's failing calls leave a trace, with the reason given */
        json_t *e0 = json_array_get(json_object_get(r.json, "errors"), 0);
        sl_info(TAG, "%s %s -> %d%s%s", method, url, r.status, json_is_string(e0) ? ": " : "",
                json_is_string(e0) ? json_string_value(e0) : "");
    }
    return sl_reply_send(conn, &r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    SL_UNUSED(cls);
    req *rq = *con_cls;
    if (rq) {
        jm_jars_completed(rq->jar);
        free(rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

/* The REST keystore (a PEM file) as a string, or NULL with err. */
static char *read_pem(const char *path, char *err, size_t errlen)
{
    if (!strncmp(path, "file://", 7)) path += 7;
    FILE *f = fopen(path, "rb");
    if (!f) {
        sl_seterr(err, errlen, "security.ssl.rest.keystore %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16;
    char *buf = sl_malloc(cap + 1);
    size_t n = fread(buf, 1, cap, f);
    buf[n] = 0;
    int big = n == cap && fgetc(f) != EOF;
    fclose(f);
    if (big || !n || !strstr(buf, "-----BEGIN")) {
        free(buf);
        sl_seterr(err, errlen, "security.ssl.rest.keystore %s: %s", path,
                  big ? "larger than 64 KiB" : "not a PEM file (no -----BEGIN line)");
        return NULL;
    }
    return buf;
}

/* ---- the connection watch -------------------------------------------------
 *
 * libmicrohttpd's only timeout is an idle one that every received byte
 * restarts, so a client sending a header byte every few seconds holds its
 * connection for ever, and its connection limits refuse the newest client,
 * not the slowest. The watch adds what is missing with the library's own
 * hooks: MHD_OPTION_NOTIFY_CONNECTION records each connection (its socket,
 * its client's address, when it started); the access handler's first call
 * (headers complete) marks it busy and NOTIFY_COMPLETED marks it waiting
 * again. A connection waiting longer than REST_HEADER_DEADLINE_MS, or the
 * oldest waiting one when a new connection finds the limits reached, is
 * shut down: libmicrohttpd has no call to close a connection from outside
 * its handlers, so the watch calls shutdown(2) on the socket and the
 * library, reading end of file, closes and cleans up the connection itself
 * (the descriptor stays valid meanwhile: the library closes it only after
 * NOTIFY_CONNECTION's CLOSED, which waits for the watch's lock). The
 * deadline is enforced by a timer on the loop thread every REST_SWEEP_MS;
 * evictions happen in the notification, on the REST thread that accepted.
 * One REST server per process, so the watch is file-static.
 */
typedef struct rest_conn {
    int fd;                     /* libmicrohttpd's socket: shut down, never closed, here */
    uint32_t addr;              /* client IPv4 address (network order) */
    int64_t since;              /* started, or its last request ended (sl_mono_ms) */
    int busy;                   /* a request's headers are in: its handler or body runs */
    int shut;                   /* shut down by the watch; the library closes it */
    struct rest_conn *prev, *next;
} rest_conn;

static struct {
    pthread_mutex_t mu;         /* guards everything below */
    rest_conn *head;            /* every open connection, newest first */
    int n;
    uint64_t evicted, expired;  /* shut down since the last log line */
    struct event *sweep;        /* the loop's timer */
} rest_watch = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Locked: the waiting connection (not busy, not already shut) that has
 * waited longest, of address addr unless addr is 0; NULL if none. */
static rest_conn *watch_oldest_waiting(uint32_t addr)
{
    rest_conn *best = NULL;
    for (rest_conn *wc = rest_watch.head; wc; wc = wc->next)
        if (!wc->busy && !wc->shut && (!addr || wc->addr == addr) && (!best || wc->since <= best->since))
            best = wc;
    return best;
}

static void watch_shut(rest_conn *wc)
{
    wc->shut = 1;
    shutdown(wc->fd, SHUT_RDWR);
}

static void on_rest_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                               enum MHD_ConnectionNotificationCode toe)
{
    SL_UNUSED(cls);
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        rest_conn *wc = *socket_context;
        if (!wc) return;
        pthread_mutex_lock(&rest_watch.mu);
        if (wc->prev) wc->prev->next = wc->next;
        else rest_watch.head = wc->next;
        if (wc->next) wc->next->prev = wc->prev;
        rest_watch.n--;
        pthread_mutex_unlock(&rest_watch.mu);
        free(wc);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fdi = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ai = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!fdi) return;
    rest_conn *wc = sl_calloc(1, sizeof *wc);
    wc->fd = fdi->connect_fd;
    if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET)
        wc->addr = ((const struct sockaddr_in *)ai->client_addr)->sin_addr.s_addr;
    wc->since = sl_mono_ms();
    pthread_mutex_lock(&rest_watch.mu);
    /* make room: the oldest waiting connection of this address, then of all */
    int same = 0;
    for (rest_conn *o = rest_watch.head; o; o = o->next)
        if (o->addr == wc->addr && !o->shut) same++;
    rest_conn *victim = NULL;
    if (wc->addr && same >= REST_PER_CLIENT_CONNECTIONS) victim = watch_oldest_waiting(wc->addr);
    else if (rest_watch.n >= REST_SOFT_CONNECTIONS) victim = watch_oldest_waiting(0);
    if (victim) {
        watch_shut(victim);
        rest_watch.evicted++;
    }
    wc->next = rest_watch.head;
    if (wc->next) wc->next->prev = wc;
    rest_watch.head = wc;
    rest_watch.n++;
    pthread_mutex_unlock(&rest_watch.mu);
    *socket_context = wc;
}

/* The loop's timer: shut connections past the header deadline, and say
 * what the watch did since the last time (one line, however many). */
static void on_rest_sweep(evutil_socket_t fd, short what, void *arg)
{
    SL_UNUSED(fd);
    SL_UNUSED(what);
    SL_UNUSED(arg);
    int64_t now = sl_mono_ms();
    pthread_mutex_lock(&rest_watch.mu);
    for (rest_conn *wc = rest_watch.head; wc; wc = wc->next)
        if (!wc->busy && !wc->shut && now - wc->since > REST_HEADER_DEADLINE_MS) {
            watch_shut(wc);
            rest_watch.expired++;
        }
    uint64_t evicted = rest_watch.evicted, expired = rest_watch.expired;
    int n = rest_watch.n;
    rest_watch.evicted = rest_watch.expired = 0;
    pthread_mutex_unlock(&rest_watch.mu);
    if (expired || evicted)
        sl_warn(TAG, "closed %llu REST connection%s whose request headers did not arrive within "
                     "%d ms and %llu waiting ones to make room for new clients (%d open)",
                (unsigned long long)expired, expired == 1 ? "" : "s", REST_HEADER_DEADLINE_MS,
                (unsigned long long)evicted, n);
}

static void watch_set_busy(struct MHD_Connection *conn, int busy)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    rest_conn *wc = ci ? ci->socket_context : NULL;
    if (!wc || wc->busy == busy) return; /* busy is written only on this connection's thread */
    pthread_mutex_lock(&rest_watch.mu);
    wc->busy = busy;
    wc->since = sl_mono_ms();
    pthread_mutex_unlock(&rest_watch.mu);
}

/* The access handler as libmicrohttpd sees it: first the watch learns that
 * the request's headers are in. */
static MHD_RESULT on_rest_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_size, void **con_cls)
{
    watch_set_busy(conn, 1);
    return on_request(cls, conn, url, method, version, upload_data, upload_size, con_cls);
}

static void on_rest_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    on_completed(cls, conn, con_cls, toe);
    watch_set_busy(conn, 0);
}

int jm_rest_start(jm *j, char *err, size_t errlen)
{
    /* HTTPS: the keystore's PEM holds the certificate chain and the key */
    char *pem = NULL;
    if (sl_config_bool(j->conf, "security.ssl.rest.enabled")) {
        const char *ks = sl_config_str(j->conf, "security.ssl.rest.keystore");
        if (!ks || !*ks)
            return sl_seterr(err, errlen, "security.ssl.rest.enabled is true: set "
                             "security.ssl.rest.keystore (a PEM file with certificate and key)");
        pem = read_pem(ks, err, errlen);
        if (!pem) return SL_ERR;
    }
    /* REST threads only parse and wait for the loop, so a few suffice */
    sl_http_conf hc = {
        .what = "the REST server",
        .bind_key = "rest.bind-address",
        .bind = sl_config_str(j->conf, "rest.bind-address"),
        .port = (int)sl_config_int(j->conf, "rest.port"),
        .threads = 4,
        .idle_timeout_s = REST_IDLE_TIMEOUT_S,
        .connection_limit = REST_MAX_CONNECTIONS,
        .per_ip_limit = 2 * REST_PER_CLIENT_CONNECTIONS,
        .tls_pem = pem,
        .handler = on_rest_access,
        .handler_cls = j,
        .completed = on_rest_completed,
        .completed_cls = j,
        .notify_connection = on_rest_connection,
        .notify_connection_cls = j,
    };
    j->http = sl_http_start(&hc, &j->rest_port, err, errlen);
    free(pem); /* libmicrohttpd has made its own credentials from it */
    if (!j->http) return SL_ERR;
    rest_watch.sweep = event_new(j->base, -1, EV_PERSIST, on_rest_sweep, j);
    struct timeval sweep = {0, REST_SWEEP_MS * 1000};
    event_add(rest_watch.sweep, &sweep);
    return SL_OK;
}

void jm_rest_on_loop(jm *j, void *ctx)
{
    route_ctx *rc = ctx;
    SL_UNUSED(j);
    route(rc, rc->r);
}

void jm_rest_stop(jm *j)
{
    if (j->http) MHD_stop_daemon(j->http);
    j->http = NULL;
    if (rest_watch.sweep) event_free(rest_watch.sweep); /* its connections are gone */
    rest_watch.sweep = NULL;
    /* the loop has ended and the REST threads are gone: nobody else reads these */
    while (j->disposals) {
        jm_savepoint_op *op = j->disposals;
        j->disposals = op->next;
        free(op->failure);
        free(op);
    }
    jm_rest_pinfo_free_all(j);
    jm_rest_flames_free_all(j);
}
