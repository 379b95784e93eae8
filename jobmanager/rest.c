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
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <jansson.h>

#include "jm.h"
#include "ha.h"
#include "log.h"
#include "keygroup.h"
#include "snapshot.h"

#define TAG "jm:rest"
#define MAX_BODY (8u << 20)

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

typedef struct req {
    char *body;
    size_t len;
    int too_big;
} req;

typedef struct reply {
    int status;
    json_t *json;     /* owned */
} reply;

static void reply_json(reply *r, int status, json_t *j)
{
    r->status = status;
    r->json = j;
}

static void reply_err(reply *r, int status, const char *fmt, ...) SL_PRINTF(3, 4);
static void reply_err(reply *r, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    reply_json(r, status, json_pack("{s:[s]}", "errors", msg));
}

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
    if (job->state_backend && *job->state_backend) return job->state_backend;
    return tms_backends(j, buf, len);
}

/* ---- JSON builders (loop thread) ---------------------------------------- */

static const char *metric_names[] = {
    "numRecordsIn", "numRecordsOut", "numBytesIn", "numBytesOut", "numRecordsInPerSecond",
    "numRecordsOutPerSecond", "numBytesInPerSecond", "numBytesOutPerSecond",
    "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond",
    "accumulatedBusyTimeMs", "accumulatedBackPressuredTimeMs", "accumulatedIdleTimeMs",
    "buffers.inPoolUsage", "buffers.outPoolUsage", "currentInputWatermark",
    "currentOutputWatermark", "numLateRecordsDropped", "checkpointAlignmentTime",
    "checkpointStartDelayNanos", NULL};

/* Value of a named metric of one subtask; SL_ERR if the name is unknown. */
static int task_metric(const jm_task *t, const char *name, double *out)
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
        for (int i = 0; metric_names[i]; i++)
            if (!strcmp(name, metric_names[i])) {
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
    else return SL_ERR;
    return SL_OK;
}

static json_t *metric_value_json(double v, const char *name)
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

static jm_task_state chain_state(const jm_job *job, int c)
{
    /* the "least advanced" wins, as Flink aggregates */
    static const jm_task_state order[] = {T_FAILED, T_CANCELING, T_CANCELED, T_CREATED, T_SCHEDULED,
                                          T_DEPLOYING, T_INITIALIZING, T_RUNNING, T_FINISHED};
    for (size_t k = 0; k < SL_ARRAY_LEN(order); k++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++)
            if (job->tasks[c][i].state == order[k]) return order[k];
    return T_CREATED;
}

static json_t *job_overview(const jm_job *job)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I}", "jid", job->id, "name", job->g->name,
                          "state", jm_job_state_name(job->state), "start-time", (json_int_t)job->start_ms,
                          "end-time", (json_int_t)(job->end_ms ? job->end_ms : -1), "duration",
                          (json_int_t)job_duration(job), "last-modification",
                          (json_int_t)job->timestamps[job->state]);
    json_object_set_new(o, "tasks", task_counts(job, -1, 1));
    /* Flink counts operators not yet added to an adaptive graph; Sluice's graphs are whole */
    json_object_set_new(o, "pending-operators", json_integer(0));
    if (job->state_reason) json_object_set_new(o, "state-reason", json_string(job->state_reason));
    return o;
}

static double chain_sum(const jm_job *job, int c, const char *metric)
{
    double sum = 0, v;
    for (int i = 0; i < job->g->chains[c].parallelism; i++)
        if (task_metric(&job->tasks[c][i], metric, &v) == SL_OK) sum += v;
    return sum;
}

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
            json_t *in = json_pack("{s:i,s:s,s:s,s:s}", "num", k, "id",
                                   g->chains[g->v[e->from].chain].id, "ship_strategy",
                                   sl_part_name(e->strategy), "exchange", "pipelined_bounded");
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
        json_array_append_new(nodes, json_pack("{s:s,s:i,s:s,s:s,s:s,s:o,s:o,s:{}}", "id", ch->id,
                                               "parallelism", ch->parallelism, "operator", head->type,
                                               "operator_strategy", "", "description", ch->name,
                                               "inputs", inputs, "operators", ops,
                                               "optimizer_properties"));
    }
    return json_pack("{s:s,s:s,s:s,s:o}", "jid", job->id, "name", g->name, "type", "STREAMING",
                     "nodes", nodes);
}

static json_t *job_detail(jm *j, const jm_job *job)
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
        json_t *metrics = json_pack(
            "{s:I,s:b,s:I,s:b,s:I,s:b,s:I,s:b,s:I,s:I,s:I}", "read-bytes",
            (json_int_t)chain_sum(job, c, "numBytesIn"), "read-bytes-complete", 1, "write-bytes",
            (json_int_t)chain_sum(job, c, "numBytesOut"), "write-bytes-complete", 1, "read-records",
            (json_int_t)chain_sum(job, c, "numRecordsIn"), "read-records-complete", 1,
            "write-records", (json_int_t)chain_sum(job, c, "numRecordsOut"),
            "write-records-complete", 1, "accumulated-backpressured-time",
            (json_int_t)chain_sum(job, c, "accumulatedBackPressuredTimeMs"), "accumulated-idle-time",
            (json_int_t)chain_sum(job, c, "accumulatedIdleTimeMs"), "accumulated-busy-time",
            (json_int_t)chain_sum(job, c, "accumulatedBusyTimeMs"));
        /* beyond Flink: late rows dropped by window operators in this vertex */
        json_object_set_new(metrics, "numLateRecordsDropped",
                            json_integer((json_int_t)chain_sum(job, c, "numLateRecordsDropped")));
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
    if (job->state_reason) json_object_set_new(o, "state-reason", json_string(job->state_reason));
    json_object_set_new(o, "slots-needed", json_integer(job->nslots));
    char bk[256];
    json_object_set_new(o, "state-backend", json_string(job_backend(j, job, bk, sizeof bk)));
    return o;
}

static json_t *tm_json_base(const jm_tm *tm, int detail)
{
    int free_slots = 0;
    for (int i = 0; i < tm->slots; i++) free_slots += tm->slot_job[i] == NULL;
    json_t *o = json_pack("{s:s,s:s,s:i,s:I,s:I,s:i,s:i,s:{s:i,s:I,s:I,s:I}}", "id", tm->id, "path",
                          tm->host, "dataPort", tm->data_port, "timeSinceLastHeartbeat",
                          (json_int_t)(sl_mono_ms() - tm->last_heartbeat_ms), "registered",
                          (json_int_t)tm->registered_ms, "slotsNumber", tm->slots, "freeSlots",
                          free_slots, "hardware", "cpuCores", tm->cpu_cores, "physicalMemory",
                          (json_int_t)tm->physical_memory, "freeMemory", (json_int_t)tm->free_memory,
                          "managedMemory", (json_int_t)tm->managed_memory);
    if (detail) {
        json_t *as = json_array();
        for (int i = 0; i < tm->slots; i++)
            if (tm->slot_job[i])
                json_array_append_new(as, json_pack("{s:i,s:s,s:s}", "slot", i, "jobId",
                                                    tm->slot_job[i]->id, "jobName",
                                                    tm->slot_job[i]->g->name));
        json_object_set_new(o, "allocatedSlots", as);
    }
    return o;
}

static json_t *tm_json(const jm_tm *tm, int detail)
{
    json_t *o = tm_json_base(tm, detail);
    /* beyond Flink: where this TaskManager keeps keyed state */
    json_object_set_new(o, "stateBackend", json_string(tm->state_backend));
    return o;
}

/* ---- routing ---------------------------------------------------------- */

#define MAX_ARGS 16

/* One API request on its way from a REST thread to the loop and back. */
typedef struct route_ctx {
    jm *j;
    const char *method;
    char *seg[12];
    int nseg;
    req *rq;
    char *arg_key[MAX_ARGS], *arg_val[MAX_ARGS]; /* query arguments, copied (owned) */
    int nargs;
    /* POST /jobs: prepared on the REST thread; the loop takes g (sets NULL) */
    sl_jobgraph *g;
    char *restore_dir;          /* snapshot to restore from, or NULL */
    uint64_t restore_cpid;
    int restore_is_savepoint;
    /* POST /savepoint-disposal: done on the REST thread, recorded by the loop */
    int disposal_rc;            /* SL_OK or SL_ERR */
    char disposal_err[1100];
    reply *r;                   /* the answer, written by the loop */
} route_ctx;

static const char *qarg(route_ctx *rc, const char *key)
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

/* Split "a,b,c" and call fn for each item. */
static json_t *metrics_list(route_ctx *rc, const jm_job *job, int c, int per_subtask)
{
    const char *get = qarg(rc, "get");
    json_t *arr = json_array();
    const sl_chain *ch = &job->g->chains[c];
    if (!get) {
        /* no selection: list the available metric ids, as Flink does */
        for (int k = 0; metric_names[k]; k++) {
            if (per_subtask) {
                json_array_append_new(arr, json_pack("{s:s}", "id", metric_names[k]));
            } else {
                for (int i = 0; i < ch->parallelism; i++) {
                    char id[128];
                    snprintf(id, sizeof id, "%d.%s", i, metric_names[k]);
                    json_array_append_new(arr, json_pack("{s:s}", "id", id));
                }
            }
        }
        return arr;
    }
    const char *agg = qarg(rc, "agg");
    char *list = sl_strdup(get), *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (per_subtask) {
            double mn = 0, mx = 0, sum = 0, v;
            int n = 0;
            for (int i = 0; i < ch->parallelism; i++) {
                if (task_metric(&job->tasks[c][i], name, &v) != SL_OK) continue;
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
                if (task_metric(&job->tasks[c][i], metric, &v) != SL_OK) continue;
                char id[160];
                snprintf(id, sizeof id, "%d.%s", i, metric);
                json_array_append_new(arr, json_pack("{s:s,s:o}", "id", id, "value",
                                                     metric_value_json(v, metric)));
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

static void vertex_routes(route_ctx *rc, jm_job *job, int c, reply *r)
{
    const sl_chain *ch = &job->g->chains[c];
    const char *what = rc->nseg > 4 ? rc->seg[4] : NULL;
    if (!what) {
        json_t *subs = json_array();
        for (int i = 0; i < ch->parallelism; i++) {
            const jm_task *t = &job->tasks[c][i];
            json_array_append_new(subs, json_pack("{s:i,s:s,s:s,s:I}", "subtask", i, "status",
                                                  jm_task_state_name(t->state), "host",
                                                  t->host ? t->host : "", "start-time",
                                                  (json_int_t)t->start_ms));
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
            task_metric(&job->tasks[c][i], "backPressuredTimeMsPerSecond", &bp);
            task_metric(&job->tasks[c][i], "busyTimeMsPerSecond", &busy);
            task_metric(&job->tasks[c][i], "idleTimeMsPerSecond", &idle);
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
            task_metric(t, "currentInputWatermark", &v);
            json_t *o = json_pack("{s:s,s:o}", "id", id, "value", metric_value_json(v, "Watermark"));
            json_object_set_new(o, "idle", json_boolean(t->metrics.has && t->metrics.m.watermark_idle));
            json_array_append_new(arr, o);
        }
        reply_json(r, 200, arr);
        return;
    }
    if (!strcmp(what, "subtasks") && rc->nseg == 6 && !strcmp(rc->seg[5], "metrics")) {
        reply_json(r, 200, metrics_list(rc, job, c, 1));
        return;
    }
    if (!strcmp(what, "subtasks") && rc->nseg == 5) {
        json_t *subs = json_array();
        for (int i = 0; i < ch->parallelism; i++) {
            const jm_task *t = &job->tasks[c][i];
            json_t *m = json_object();
            for (int k = 0; metric_names[k]; k++) {
                double v;
                task_metric(t, metric_names[k], &v);
                if (strstr(metric_names[k], "Watermark"))
                    json_object_set_new(m, metric_names[k], json_integer((json_int_t)(v <= (double)INT64_MIN ? INT64_MIN : (int64_t)v)));
                else
                    json_object_set_new(m, metric_names[k], json_real(v));
            }
            json_object_set_new(m, "watermarkIdle", json_boolean(t->metrics.has && t->metrics.m.watermark_idle));
            json_array_append_new(subs, json_pack("{s:i,s:s,s:s,s:s,s:o}", "subtask", i,
                                                  "taskmanager-id", t->tm_id ? t->tm_id : "",
                                                  "host", t->host ? t->host : "", "status",
                                                  jm_task_state_name(t->state), "metrics", m));
        }
        reply_json(r, 200, json_pack("{s:o}", "subtasks", subs));
        return;
    }
    reply_err(r, 404, "Not found: no such vertex resource '%s'", what);
}

/* Is name one of the items of the comma-separated list? */
static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}

/* GET /jobs/:id/metrics[?get=a,b]: the job's checkpoint metrics, Flink's names. */
static json_t *job_metrics(route_ctx *rc, const jm_job *job)
{
    const jm_checkpoint *lc = job->latest_completed;
    int in_progress = job->pending != NULL;
    struct { const char *name; double v; } ms[] = {
        {"lastCheckpointDuration", lc ? (double)(lc->end_ms - lc->trigger_ms) : -1},
        {"lastCheckpointSize", lc ? (double)lc->state_size : -1},
        {"lastCheckpointFullSize", lc ? (double)lc->state_size : -1},
        {"lastCompletedCheckpointId", lc ? (double)lc->id : -1},
        {"lastCheckpointRestoreTimestamp", job->cp_restored ? (double)job->restored_ms : -1},
        {"numberOfCompletedCheckpoints", job->cp_completed},
        {"numberOfFailedCheckpoints", job->cp_failed},
        {"numberOfInProgressCheckpoints", in_progress},
        {"totalNumberOfCheckpoints", job->cp_total},
        {"numRestarts", job->restarts},
    };
    const char *get = qarg(rc, "get");
    json_t *arr = json_array();
    for (size_t i = 0; i < SL_ARRAY_LEN(ms); i++) {
        if (get) {
            if (!list_has(get, ms[i].name)) continue;
            json_array_append_new(arr, json_pack("{s:s,s:o}", "id", ms[i].name, "value",
                                                 metric_value_json(ms[i].v, ms[i].name)));
        } else {
            json_array_append_new(arr, json_pack("{s:s}", "id", ms[i].name));
        }
    }
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
    const char *target = json_is_string(jt) ? json_string_value(jt) : NULL;
    int flag = jflag && json_is_true(jflag);
    /* a file:// URI and a plain path are the same directory, as in the configuration */
    char why[300];
    char *local = target && *target ? sl_config_local_path(target, why, sizeof why) : NULL;
    if (target && *target && !local) {
        reply_err(r, 400, "target directory %s", why);
        json_decref(body);
        return;
    }
    if (local && (strstr(local, "..") || local[0] != '/')) {
        reply_err(r, 400, "the target directory must be an absolute path (or file:///path) without '..', got '%s'", target);
        free(local);
        json_decref(body);
        return;
    }
    char *dir = jm_savepoint_dir(j, job, local);
    free(local);
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

static void job_routes(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    jm_job *job = jm_job_find(j, rc->seg[1]);
    if (!job) {
        reply_err(r, 404, "Job %s not found", rc->seg[1]);
        return;
    }
    int get = !strcmp(rc->method, "GET");
    if (rc->nseg == 2 && get) {
        reply_json(r, 200, job_detail(j, job));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "status")) {
        reply_json(r, 200, json_pack("{s:s}", "status", jm_job_state_name(job->state)));
    } else if (rc->nseg == 3 && !strcmp(rc->method, "POST") && !strcmp(rc->seg[2], "checkpoints")) {
        trigger_checkpoint(rc, job, r);
    } else if (rc->nseg == 2 && !strcmp(rc->method, "PATCH")) {
        const char *mode = qarg(rc, "mode");
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
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "exceptions")) {
        json_t *entries = json_array();
        for (int i = job->nexceptions - 1; i >= 0; i--) {
            const jm_exception *e = &job->exceptions[i];
            json_t *o = json_pack("{s:s,s:s,s:I}", "exceptionName", e->name, "stacktrace",
                                  e->stacktrace, "timestamp", (json_int_t)e->timestamp);
            json_object_set_new(o, "taskName", e->task ? json_string(e->task) : json_null());
            json_object_set_new(o, "location", e->location ? json_string(e->location) : json_null());
            json_array_append_new(entries, o);
        }
        json_t *root = json_pack("{s:{s:o,s:b}}", "exceptionHistory", "entries", entries,
                                 "truncated", job->nexceptions >= 64);
        if (job->nexceptions)
            json_object_set_new(root, "root-exception",
                                json_string(job->exceptions[0].stacktrace));
        reply_json(r, 200, root);
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "metrics")) {
        reply_json(r, 200, job_metrics(rc, job));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "plan")) {
        reply_json(r, 200, json_pack("{s:o}", "plan", job_plan(job)));
    } else if (rc->nseg == 3 && get && !strcmp(rc->seg[2], "config")) {
        reply_json(r, 200, json_pack("{s:s,s:s,s:{s:i,s:s,s:b,s:{}}}", "jid", job->id, "name",
                                     job->g->name, "execution-config", "job-parallelism",
                                     job->g->parallelism, "restart-strategy",
                                     sl_config_str(j->conf, "restart-strategy.type"),
                                     "object-reuse-mode", 0, "user-config"));
    } else if (rc->nseg >= 3 && get && !strcmp(rc->seg[2], "checkpoints")) {
        if (rc->nseg == 4 && !strcmp(rc->seg[3], "config")) {
            json_t *o = json_object();
            json_object_set_new(o, "mode", json_string(j->cp_exactly_once ? "exactly_once" : "at_least_once"));
            json_object_set_new(o, "interval", json_integer(sl_config_int(j->conf, "execution.checkpointing.interval")));
            json_object_set_new(o, "timeout", json_integer(sl_config_int(j->conf, "execution.checkpointing.timeout")));
            json_object_set_new(o, "min_pause", json_integer(sl_config_int(j->conf, "execution.checkpointing.min-pause")));
            json_object_set_new(o, "max_concurrent", json_integer(sl_config_int(j->conf, "execution.checkpointing.max-concurrent-checkpoints")));
            json_object_set_new(o, "externalization", json_pack("{s:b,s:b}", "enabled", 1, "delete_on_cancellation", j->cp_delete_on_cancel));
            char bk[256];
            /* what the TaskManagers use, not this daemon's own setting */
            json_object_set_new(o, "state_backend", json_string(job_backend(j, job, bk, sizeof bk)));
            json_object_set_new(o, "checkpoint_storage", json_string("FileSystemCheckpointStorage"));
            json_object_set_new(o, "unaligned_checkpoints", json_false());
            json_object_set_new(o, "tolerable_failed_checkpoints", json_integer(sl_config_int(j->conf, "execution.checkpointing.tolerable-failed-checkpoints")));
            /* Flink's fields for features Sluice has not: aligned checkpoints
             * never time out into unaligned ones, no state changelog */
            json_object_set_new(o, "aligned_checkpoint_timeout", json_integer(0));
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
            jm_checkpoint *cp = NULL;
            for (jm_checkpoint *x = job->cps; x; x = x->next)
                if ((uint64_t)strtoull(rc->seg[4], NULL, 10) == x->id) cp = x;
            if (!cp) reply_err(r, 404, "Checkpoint %s of job %s not found", rc->seg[4], job->id);
            else reply_json(r, 200, jm_rest_checkpoint_details(job, cp));
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
        else vertex_routes(rc, job, c, r);
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
    const char *ps = qarg(rc, "parallelism");
    if (ps && *ps && (sl_parse_int(ps, &p) != SL_OK || p < 1 || p > 32768)) {
        reply_err(r, 400, "parallelism must be an integer between 1 and 32768, got '%s'", ps);
        return SL_ERR;
    }
    const char *sp = qarg(rc, "savepointPath");
    const char *anr = qarg(rc, "allowNonRestoredState");
    int allow = anr && (!strcmp(anr, "true") || !strcmp(anr, "1"));
    if (!rc->rq->len) {
        reply_err(r, 400, "the request body must be a JSON job graph (see docs/JOBS.md)");
        return SL_ERR;
    }
    char err[1024];
    sl_jobgraph *g = sl_jobgraph_parse(rc->rq->body, rc->rq->len, j->default_parallelism, (int)p,
                                       err, sizeof err);
    if (!g) {
        reply_err(r, 400, "%s", err);
        return SL_ERR;
    }
    int check = rc->nseg == 2; /* POST /savepoints/check: report only */
    if ((sp && *sp) || check) {
        if (!sp || !*sp) {
            sl_jobgraph_destroy(g);
            reply_err(r, 400, "savepointPath is required");
            return SL_ERR;
        }
        json_t *report = NULL;
        jm_io_job io;
        memset(&io, 0, sizeof io);
        io.kind = JM_IO_RESTORE_PLAN;
        io.g = g;
        io.path = sp;
        io.allow_non_restored = allow;
        io.report = check ? &report : NULL;
        io.dir_out = &rc->restore_dir;
        io.cpid_out = &rc->restore_cpid;
        io.is_savepoint_out = &rc->restore_is_savepoint;
        if (jm_io_call(j, &io) != SL_OK) {
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
    jm *j = rc->j;
    if (!jm_ha_may_act(j)) {
        reply_err(r, 503, "this JobManager cannot accept jobs while it is not the confirmed leader");
        return;
    }
    jm_job *job = jm_job_submit(j, rc->g);
    rc->g = NULL;
    if (rc->restore_dir) {
        job->restore_dir = rc->restore_dir;
        rc->restore_dir = NULL;
        job->cp_counter = rc->restore_cpid; /* checkpoint ids go on from the snapshot's */
        job->restored_is_savepoint = rc->restore_is_savepoint;
    }
    char herr[600];
    if (jm_ha_job_submitted(j, job, herr, sizeof herr) != SL_OK) { /* not recoverable: refused */
        job->ha_removed = 1;
        jm_job_cancel(j, job);
        reply_err(r, 503, "cannot persist job %s for high availability: %s", job->id, herr);
        return;
    }
    jm_schedule(j);
    reply_json(r, 200, json_pack("{s:s}", "jobid", job->id));
}

/* REST thread: remove the savepoint named by body.savepoint-path (on the
 * I/O worker; no JobManager state involved). SL_ERR with the reason in err
 * when the body is not {"savepoint-path"} (*bad_body set), the path is not
 * a savepoint directory, or removing it failed. */
static int dispose_path(route_ctx *rc, int *bad_body, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *body = json_loadb(rc->rq->body ? rc->rq->body : "", rc->rq->len, 0, &jerr);
    json_t *jp = json_object_get(body, "savepoint-path");
    int rc_ = SL_OK;
    *bad_body = 0;
    if (!json_is_string(jp)) {
        json_decref(body);
        *bad_body = 1;
        return sl_seterr(err, errlen, "the body must be {\"savepoint-path\": \"...\"}");
    }
    const char *p = json_string_value(jp);
    if (!strncmp(p, "file://", 7)) p += 7;
    else if (!strncmp(p, "file:", 5)) p += 5;
    const char *base = strrchr(p, '/');
    if (p[0] != '/' || strstr(p, "..") || !base || strncmp(base + 1, "savepoint-", 10)) {
        rc_ = sl_seterr(err, errlen, "'%s' is not a savepoint directory (savepoint-<id>-<hex>)",
                        json_string_value(jp));
    } else {
        jm_io_job io;
        memset(&io, 0, sizeof io);
        io.kind = JM_IO_DISPOSE;
        io.dir = (char *)p; /* borrowed: a waited-for job is not freed by the worker */
        if (jm_io_call(rc->j, &io) != SL_OK)
            rc_ = sl_seterr(err, errlen, "cannot dispose of savepoint '%s': %s", json_string_value(jp), io.err);
    }
    json_decref(body);
    return rc_;
}

/* REST thread, POST /savepoints/dispose {"savepoint-path"}: Sluice's
 * synchronous disposal, answered at once. */
static void dispose_savepoint(route_ctx *rc, reply *r)
{
    char err[1100];
    int bad;
    if (dispose_path(rc, &bad, err, sizeof err) != SL_OK) reply_err(r, 400, "%s", err);
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

static int authorized(jm *j, struct MHD_Connection *conn)
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

/* GET /jobmanager/metrics[?get=a,b]: Flink's JobManager metrics that
 * Sluice has (the cluster's, not the process's JVM ones). */
static json_t *jobmanager_metrics(route_ctx *rc)
{
    jm *j = rc->j;
    int ntm = 0, running = 0;
    for (jm_tm *tm = j->tms; tm; tm = tm->next) ntm++;
    for (jm_job *job = j->jobs; job; job = job->next) running += job->state == JOB_RUNNING;
    struct { const char *name; double v; } ms[] = {
        {"numRegisteredTaskManagers", ntm},
        {"numRunningJobs", running},
        {"taskSlotsAvailable", jm_slots_free(j)},
        {"taskSlotsTotal", jm_slots_total(j)},
    };
    const char *get = qarg(rc, "get");
    json_t *arr = json_array();
    for (size_t i = 0; i < SL_ARRAY_LEN(ms); i++) {
        if (get && !list_has(get, ms[i].name)) continue;
        if (get) json_array_append_new(arr, json_pack("{s:s,s:o}", "id", ms[i].name, "value",
                                                      metric_value_json(ms[i].v, ms[i].name)));
        else json_array_append_new(arr, json_pack("{s:s}", "id", ms[i].name));
    }
    return arr;
}

static void route(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    const char *m = rc->method;
    int get = !strcmp(m, "GET");
    if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "config")) {
        /* Flink's DashboardConfiguration exactly: flink-version is Sluice's */
        reply_json(r, 200, json_pack("{s:i,s:s,s:i,s:s,s:s,s:{s:b,s:b,s:b}}", "refresh-interval",
                                     3000, "timezone-name", "UTC", "timezone-offset", 0,
                                     "flink-version", SL_VERSION, "flink-revision", "sluice",
                                     "features", "web-submit", 0, "web-cancel", 1, "web-history", 0));
        /* web-submit is Flink's jar upload, which Sluice has not (its own
         * submission of JSON job graphs, POST /jobs, is always there) */
        json_object_set_new(json_object_get(r->json, "features"), "web-rescale", json_false());
        json_object_set_new(r->json, "high-availability", jm_ha_json(j));
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "jobmanager") && !strcmp(rc->seg[1], "config")) {
        json_t *arr = json_array();
        for (int i = 0; i < sl_config_count(j->conf); i++) {
            const char *k, *v;
            char bk[256];
            sl_config_entry(j->conf, i, &k, &v);
            if (!strcmp(k, "rest.auth-token")) v = *v ? "******" : "";
            /* the TaskManagers' setting is the one that counts, not ours */
            if (!strcmp(k, "state.backend.type")) v = tms_backends(j, bk, sizeof bk);
            json_array_append_new(arr, json_pack("{s:s,s:s}", "key", k, "value", v));
        }
        reply_json(r, 200, arr);
    } else if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "overview")) {
        int counts[JOB_NSTATES] = {0};
        for (jm_job *job = j->jobs; job; job = job->next) counts[job->state]++;
        int ntm = 0;
        for (jm_tm *tm = j->tms; tm; tm = tm->next) ntm++;
        reply_json(r, 200, json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:s}", "taskmanagers", ntm,
                                     "slots-total", jm_slots_total(j), "slots-available",
                                     jm_slots_free(j), "jobs-running",
                                     counts[JOB_RUNNING] + counts[JOB_RESTARTING] +
                                         counts[JOB_CANCELLING] + counts[JOB_FAILING],
                                     "jobs-scheduled", counts[JOB_CREATED] + counts[JOB_INITIALIZING],
                                     "jobs-finished", counts[JOB_FINISHED], "jobs-cancelled",
                                     counts[JOB_CANCELED], "jobs-failed", counts[JOB_FAILED],
                                     "flink-version", SL_VERSION, "flink-commit", "sluice"));
        /* Flink's blocklist (nodes marked bad); Sluice has none */
        json_object_set_new(r->json, "taskmanagers-blocked", json_integer(0));
        json_object_set_new(r->json, "slots-free-and-blocked", json_integer(0));
    } else if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "taskmanagers")) {
        json_t *arr = json_array();
        for (jm_tm *tm = j->tms; tm; tm = tm->next) json_array_append_new(arr, tm_json(tm, 0));
        reply_json(r, 200, json_pack("{s:o}", "taskmanagers", arr));
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "taskmanagers")) {
        jm_tm *tm = jm_tm_find(j, rc->seg[1]);
        if (!tm) reply_err(r, 404, "TaskManager %s not found", rc->seg[1]);
        else reply_json(r, 200, tm_json(tm, 1));
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
    } else if (rc->nseg == 2 && get && !strcmp(rc->seg[0], "jobs") && !strcmp(rc->seg[1], "overview")) {
        json_t *arr = json_array();
        for (jm_job *job = j->jobs; job; job = job->next) json_array_append_new(arr, job_overview(job));
        reply_json(r, 200, json_pack("{s:o}", "jobs", arr));
    } else if (rc->nseg >= 2 && !strcmp(rc->seg[0], "jobs")) {
        job_routes(rc, r);
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
        if (!jm_tm_find(j, rc->seg[1])) reply_err(r, 404, "TaskManager %s not found", rc->seg[1]);
        else reply_json(r, 200, json_array()); /* Sluice reports no TaskManager-level metrics yet */
    } else if (rc->nseg == 1 && get && !strcmp(rc->seg[0], "jars")) {
        /* Sluice runs JSON job graphs, not jars: the list is always empty */
        reply_json(r, 200, json_pack("{s:s,s:[]}", "address", "", "files"));
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
                                     "/jars", "/sql", NULL};
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
    req *rq = *con_cls;
    if (!rq) {
        rq = sl_calloc(1, sizeof *rq);
        *con_cls = rq;
        return MHD_YES;
    }
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
    /* Flink's REST client puts the API version first (/v1/jobs/overview);
     * the same API answers with and without it */
    const char *path = url;
    int v1 = !strncmp(url, "/v1", 3) && (url[3] == '/' || url[3] == '\0');
    if (v1) path = url + 3;
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
    int bad_body = 0;
    int savepoints = rc.nseg == 2 && post && !strcmp(rc.seg[0], "savepoints");
    int disposal = rc.nseg == 1 && post && !strcmp(rc.seg[0], "savepoint-disposal");
    if (rq->too_big) {
        reply_err(&r, 413, "request body larger than %u bytes", MAX_BODY);
    } else if (!(rc.nseg == 1 && !strcmp(rc.seg[0], "config")) &&
               jm_ha_rest_refuse(j, &r.status, &r.json)) {
        /* a standby JobManager: says where the leader is (ha.c) */
    } else if (rc.nseg < 0) {
        reply_err(&r, 404, "Not found: path too long");
    } else if (strcmp(method, "GET") && strcmp(method, "HEAD") && !authorized(j, conn)) {
        reply_err(&r, 401, "this JobManager requires 'Authorization: Bearer <rest.auth-token>'");
    } else if (savepoints && !strcmp(rc.seg[1], "dispose")) {
        dispose_savepoint(&rc, &r);
    } else if (disposal && (rc.disposal_rc = dispose_path(&rc, &bad_body, rc.disposal_err,
                                                          sizeof rc.disposal_err)) != SL_OK &&
               bad_body) {
        reply_err(&r, 400, "%s", rc.disposal_err);
    } else {
        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, copy_arg, &rc);
        int submit = (rc.nseg == 1 && post && !strcmp(rc.seg[0], "jobs")) ||
                     (savepoints && !strcmp(rc.seg[1], "check"));
        if (!submit || prepare_submit(&rc, &r) == SL_OK) {
            if (savepoints && !submit) {
                reply_err(&r, 404, "Not found: %s /savepoints/%s", method, rc.seg[1]);
            } else {
                jm_op op;
                memset(&op, 0, sizeof op);
                op.kind = JM_OP_REST;
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
    char *text = json_dumps(r.json, JSON_COMPACT);
    json_decref(r.json);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_RESULT ret = MHD_queue_response(conn, (unsigned)r.status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    req *rq = *con_cls;
    if (rq) {
        free(rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

int jm_rest_start(jm *j, char *err, size_t errlen)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)sl_config_int(j->conf, "rest.port"));
    const char *bind = sl_config_str(j->conf, "rest.bind-address");
    if (!bind || !*bind) bind = "127.0.0.1";
    if (!strcmp(bind, "localhost")) bind = "127.0.0.1";
    if (inet_pton(AF_INET, bind, &sin.sin_addr) != 1)
        return sl_seterr(err, errlen, "rest.bind-address: '%s' is not an IPv4 address", bind);
    /* REST threads only parse and wait for the loop, so a few suffice;
     * epoll (MHD_USE_AUTO) lets each serve hundreds of connections */
    j->http = MHD_start_daemon(MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
                               0, NULL, NULL, on_request, j, MHD_OPTION_SOCK_ADDR,
                               (struct sockaddr *)&sin, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)4,
                               MHD_OPTION_NOTIFY_COMPLETED, on_completed, j,
                               MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
                               MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024, MHD_OPTION_END);
    if (!j->http)
        return sl_seterr(err, errlen, "cannot start the REST server on %s:%d (port in use?)", bind,
                         ntohs(sin.sin_port));
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(j->http, MHD_DAEMON_INFO_BIND_PORT);
    j->rest_port = info ? info->port : ntohs(sin.sin_port);
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
    /* the loop has ended and the REST threads are gone: nobody else reads these */
    while (j->disposals) {
        jm_savepoint_op *op = j->disposals;
        j->disposals = op->next;
        free(op->failure);
        free(op);
    }
}
