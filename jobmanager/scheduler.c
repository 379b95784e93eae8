/*
 * scheduler.c -- jobs from submission to a terminal state.
 *
 * A submitted job is CREATED and asks for as many slots as its largest
 * vertex parallelism (slot sharing: slot i runs subtask i of every chain).
 * jm_schedule() places waiting jobs, oldest first, spreading their slots
 * over the TaskManagers with the most free slots; a job that cannot be
 * placed says why in state_reason ("waiting for 4 slots, 3 free") and fails
 * with that reason after slot.request.timeout. A deployed job is RUNNING;
 * task reports move it to FINISHED (all tasks finished), FAILED (a task
 * failed: the others are cancelled and the error becomes its exception) or
 * CANCELED. A lost TaskManager, a failed task or a report from the
 * checkpoint coordinator (failures past tolerable-failed-checkpoints) fails
 * the job or, when the restart strategy allows, restarts it.
 *
 * This file alone owns the job lifecycle and the restart policy:
 * fixed-delay (a constant delay, a number of attempts) and exponential-delay
 * (Flink's: initial-backoff, growing by backoff-multiplier up to max-backoff,
 * +/- jitter-factor; attempts-before-reset-backoff attempts; after
 * reset-backoff-threshold without a failure the backoff and the count start
 * again). It also keeps the job store bounded: finished jobs beyond
 * jobstore.max-capacity or older than jobstore.expiration-time are freed.
 *
 * Everything here runs on the loop thread.
 */
#include <string.h>
#include <stdlib.h>

#include "jm.h"
#include "store.h"
#include "ha.h"
#include "log.h"

#define TAG "jm:sched"

static void rescale_end(jm_job *job, jm_rescale_status st, const char *reason, const char *why);
static void span_enter(jm_rescale *rs, const char *state);

static const char *job_state_names[] = {"INITIALIZING", "CREATED", "RUNNING", "FAILING",
                                        "FAILED", "CANCELLING", "CANCELED", "FINISHED",
                                        "RESTARTING", "SUSPENDED"};
static const char *task_state_names[] = {"CREATED", "SCHEDULED", "DEPLOYING", "RUNNING",
                                         "FINISHED", "CANCELING", "CANCELED", "FAILED",
                                         "INITIALIZING"};

const char *jm_job_state_name(jm_job_state s) { return job_state_names[s]; }
const char *jm_task_state_name(jm_task_state s) { return task_state_names[s]; }

int jm_job_state_terminal(jm_job_state s)
{
    return s == JOB_FAILED || s == JOB_CANCELED || s == JOB_FINISHED || s == JOB_SUSPENDED;
}

void jm_job_set_state(jm_job *job, jm_job_state s)
{
    if (job->state == s) return;
    sl_info(TAG, "Job %s (%s) switched from state %s to %s.", job->g->name, job->id,
            job_state_names[job->state], job_state_names[s]);
    job->state = s;
    job->timestamps[s] = sl_now_ms();
    if (jm_job_state_terminal(s)) job->end_ms = job->timestamps[s];
}

jm_job *jm_job_find(jm *j, const char *id)
{
    for (jm_job *job = j->jobs; job; job = job->next)
        if (!strcmp(job->id, id)) return job;
    return NULL;
}

jm_tm *jm_tm_find(jm *j, const char *id)
{
    for (jm_tm *tm = j->tms; tm; tm = tm->next)
        if (!strcmp(tm->id, id)) return tm;
    return NULL;
}

int jm_slots_total(jm *j)
{
    int n = 0;
    for (jm_tm *tm = j->tms; tm; tm = tm->next) n += tm->slots;
    return n;
}

static int tm_free(const jm_tm *tm)
{
    int n = 0;
    for (int i = 0; i < tm->slots; i++) n += tm->slot_job[i] == NULL;
    return n;
}

int jm_slots_free(jm *j)
{
    int n = 0;
    for (jm_tm *tm = j->tms; tm; tm = tm->next) n += tm_free(tm);
    return n;
}

void jm_job_add_exception(jm_job *job, const char *name, const char *trace, const char *task,
                          const char *tm_id, const jm_tm *tm)
{
    if (job->nexceptions >= 64) return; /* the first failures are the telling ones */
    job->exceptions = sl_realloc(job->exceptions, sizeof(jm_exception) * (size_t)(job->nexceptions + 1));
    jm_exception *e = &job->exceptions[job->nexceptions++];
    e->name = sl_strdup(name);
    e->stacktrace = sl_strdup(trace ? trace : name);
    e->task = task ? sl_strdup(task) : NULL;
    e->tm_id = tm_id ? sl_strdup(tm_id) : NULL;
    e->endpoint = tm ? sl_sprintf("%s:%d", tm->host, tm->data_port) : NULL;
    e->timestamp = sl_now_ms();
}

static void set_reason(jm_job *job, const char *reason)
{
    free(job->state_reason);
    job->state_reason = reason ? sl_strdup(reason) : NULL;
}

/* pipeline.auto-watermark-interval: the default interval of `watermark`
 * operators, which cannot read daemon configuration; written into the job
 * so that every TaskManager plans it the same way. */
static void apply_watermark_default(jm *j, sl_jobgraph *g)
{
    for (int i = 0; i < g->nv; i++) {
        sl_vertex *v = &g->v[i];
        if (strcmp(v->type, "watermark") || !json_is_object(v->config) ||
            json_object_get(v->config, "interval"))
            continue;
        char iv[32];
        snprintf(iv, sizeof iv, "%lld ms", (long long)j->auto_watermark_interval_ms);
        json_object_set_new(v->config, "interval", json_string(iv));
    }
}

static jm_job *job_new(jm *j, sl_jobgraph *g, const char *id)
{
    jm_job *job = sl_calloc(1, sizeof *job);
    if (id) snprintf(job->id, sizeof job->id, "%s", id);
    else sl_random_hex(job->id, 32);
    apply_watermark_default(j, g);
    job->g = g;
    jm_job_settings(j, job);
    job->graph_json = sl_jobgraph_dump(g);
    job->nslots = g->max_vertex_parallelism;
    job->state = JOB_INITIALIZING;
    job->start_ms = sl_now_ms();
    job->timestamps[JOB_INITIALIZING] = job->start_ms;
    job->created_mono_ms = sl_mono_ms();
    job->tasks = sl_calloc((size_t)g->nchains, sizeof(jm_task *));
    for (int c = 0; c < g->nchains; c++)
        job->tasks[c] = sl_calloc((size_t)g->chains[c].parallelism, sizeof(jm_task));
    job->slot_tm = sl_calloc((size_t)job->nslots, sizeof(jm_tm *));
    job->next = j->jobs;
    j->jobs = job;
    sl_info(TAG, "Received job %s (%s), needs %d slot%s.", job->id, g->name, job->nslots,
            job->nslots == 1 ? "" : "s");
    jm_job_set_state(job, JOB_CREATED);
    return job;
}

jm_job *jm_job_submit(jm *j, sl_jobgraph *g) { return job_new(j, g, NULL); }
jm_job *jm_job_admit(jm *j, sl_jobgraph *g, char *restore_dir, uint64_t restore_cpid,
                     int restore_is_savepoint, Sluice__UserLibrary *lib, char *err, size_t errlen)
{
    Sluice__UserLibrary **libs = NULL;
    if (lib) {
        libs = sl_calloc(1, sizeof *libs);
        libs[0] = lib;
    }
    return jm_job_admit_libs(j, g, restore_dir, restore_cpid, restore_is_savepoint, libs,
                             lib ? 1 : 0, err, errlen);
}

jm_job *jm_job_admit_libs(jm *j, sl_jobgraph *g, char *restore_dir, uint64_t restore_cpid,
                          int restore_is_savepoint, Sluice__UserLibrary **libs, size_t nlibs,
                          char *err, size_t errlen)
{
    if (!jm_ha_may_act(j)) {
        sl_jobgraph_destroy(g);
        free(restore_dir);
        for (size_t i = 0; i < nlibs; i++) jm_user_library_free(libs[i]);
        free(libs);
        sl_seterr(err, errlen, "this JobManager cannot accept jobs while it is not the confirmed leader");
        return NULL;
    }
    jm_job *job = jm_job_submit(j, g);
    if (restore_dir) {
        job->restore_dir = restore_dir;
        job->cp_counter = restore_cpid; /* checkpoint ids go on from the snapshot's */
        job->restored_is_savepoint = restore_is_savepoint;
    }
    job->libs = libs;
    job->nlibs = nlibs;
    char herr[600];
    if (jm_ha_job_submitted(j, job, herr, sizeof herr) != SL_OK) { /* not recoverable: refused */
        job->ha_removed = 1;
        jm_job_cancel(j, job);
        sl_seterr(err, errlen, "cannot persist job %s for high availability: %s", job->id, herr);
        return NULL;
    }
    jm_schedule(j);
    return job;
}

void jm_user_library_free(Sluice__UserLibrary *lib)
{
    if (!lib) return;
    free(lib->id);
    free(lib->data.data);
    free(lib);
}

jm_job *jm_job_recover(jm *j, sl_jobgraph *g, const char *id) { return job_new(j, g, id); }

static void release_slots(jm_job *job)
{
    for (int s = 0; s < job->nslots; s++) {
        jm_tm *tm = job->slot_tm[s];
        if (!tm) continue;
        for (int i = 0; i < tm->slots; i++)
            if (tm->slot_job[i] == job) { tm->slot_job[i] = NULL; break; }
        job->slot_tm[s] = NULL;
    }
}

static void send_cancel(jm *j, jm_job *job) { jm_send_cancel(j, job); }

/* Mark every non-terminal task as `s`. */
static void tasks_to(jm_job *job, jm_task_state s)
{
    for (int c = 0; c < job->g->nchains; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++) {
            jm_task *t = &job->tasks[c][i];
            if (t->state != T_FINISHED && t->state != T_CANCELED && t->state != T_FAILED) {
                t->state = s;
                t->end_ms = sl_now_ms();
            }
        }
}

/* End a job that was deployed: tell TaskManagers, free the slots. */
static void job_end(jm *j, jm_job *job, jm_job_state final, const char *reason)
{
    if (job->state == JOB_RUNNING || job->state == JOB_CANCELLING || job->state == JOB_FAILING)
        send_cancel(j, job);
    rescale_end(job, RS_FAILED, final == JOB_CANCELED ? "JOB_CANCELED" : "JOB_FAILED",
                reason ? reason : "the job ended");
    release_slots(job);
    tasks_to(job, final == JOB_FAILED ? T_CANCELED : T_CANCELED);
    if (reason) set_reason(job, reason);
    jm_job_set_state(job, final);
    if (final == JOB_CANCELED) jm_cp_job_canceled(j, job);
}

void jm_job_cancel(jm *j, jm_job *job)
{
    if (jm_job_state_terminal(job->state)) return;
    rescale_end(job, RS_FAILED, "JOB_CANCELED", "the job was cancelled");
    set_reason(job, NULL);
    job->restart_at_mono_ms = 0;
    jm_cp_job_ended(j, job);
    if (job->state == JOB_RUNNING) {
        jm_job_set_state(job, JOB_CANCELLING);
        send_cancel(j, job);
        tasks_to(job, T_CANCELING);
        /* CANCELED once the TaskManagers report; a TaskManager that never
         * answers is covered by the heartbeat timeout */
        return;
    }
    job_end(j, job, JOB_CANCELED, NULL);
}

static void job_fail(jm *j, jm_job *job, const char *reason)
{
    sl_warn(TAG, "Job %s (%s) fails: %s", job->g->name, job->id, reason);
    jm_cp_job_ended(j, job);
    job_end(j, job, JOB_FAILED, reason);
}

/* Read the checkpointing and restart settings of configuration c. */
static void settings_read(jm_settings *st, const sl_config *c)
{
    memset(st, 0, sizeof *st);
    st->cp_interval_ms = sl_config_int(c, "execution.checkpointing.interval");
    st->cp_timeout_ms = sl_config_int(c, "execution.checkpointing.timeout");
    st->cp_min_pause_ms = sl_config_int(c, "execution.checkpointing.min-pause");
    st->cp_tolerable = (int)sl_config_int(c, "execution.checkpointing.tolerable-failed-checkpoints");
    st->cp_exactly_once = strcmp(sl_config_str(c, "execution.checkpointing.mode"), "AT_LEAST_ONCE") != 0;
    st->cp_unaligned = st->cp_exactly_once && sl_config_bool(c, "execution.checkpointing.unaligned.enabled");
    st->cp_aligned_timeout_ms = sl_config_int(c, "execution.checkpointing.aligned-checkpoint-timeout");
    const char *rs = sl_config_restart_strategy(c); /* unset: by checkpointing, as Flink */
    st->restart_type = !strcmp(rs, "fixed-delay")         ? JM_RESTART_FIXED
                       : !strcmp(rs, "exponential-delay") ? JM_RESTART_EXPONENTIAL
                                                          : JM_RESTART_NONE;
    if (st->restart_type == JM_RESTART_EXPONENTIAL) {
        const char *p = "restart-strategy.exponential-delay.";
        char key[128];
#define EXP_KEY(name) (snprintf(key, sizeof key, "%s%s", p, name), key)
        st->restart_attempts = (int)sl_config_int(c, EXP_KEY("attempts-before-reset-backoff"));
        st->exp_initial_ms = sl_config_int(c, EXP_KEY("initial-backoff"));
        st->exp_max_ms = sl_config_int(c, EXP_KEY("max-backoff"));
        st->exp_reset_ms = sl_config_int(c, EXP_KEY("reset-backoff-threshold"));
        st->exp_multiplier = sl_config_double(c, EXP_KEY("backoff-multiplier"));
        st->exp_jitter = sl_config_double(c, EXP_KEY("jitter-factor"));
#undef EXP_KEY
    } else {
        st->restart_attempts = (int)sl_config_int(c, "restart-strategy.fixed-delay.attempts");
        st->restart_delay_ms = sl_config_int(c, "restart-strategy.fixed-delay.delay");
    }
}

/* The settings of graph g: the cluster's configuration, with the job's own
 * "config" keys over it (checked at parse). */
static void graph_settings(const jm *j, const sl_jobgraph *g, jm_settings *st)
{
    if (!g->conf || !json_object_size(g->conf)) {
        settings_read(st, j->conf);
        return;
    }
    /* the cluster's configuration, then the job's keys over it (checked at parse) */
    sl_config *c = sl_config_new();
    for (int i = 0; i < sl_config_count(j->conf); i++) {
        const char *k, *v;
        sl_config_entry(j->conf, i, &k, &v);
        sl_config_set(c, k, v, NULL, NULL, 0);
    }
    const char *k;
    json_t *v;
    json_object_foreach(g->conf, k, v) sl_config_set(c, k, json_string_value(v), NULL, NULL, 0);
    settings_read(st, c);
    sl_config_destroy(c);
}

void jm_job_settings(jm *j, jm_job *job) { graph_settings(j, job->g, &job->set); }

int jm_job_graph_check(const jm *j, const sl_jobgraph *g, char *err, size_t errlen)
{
    jm_settings st;
    graph_settings(j, g, &st);
    sl_job_check jc = {
        .checkpoint_interval_ms = st.cp_interval_ms,
        .checkpoint_timeout_ms = st.cp_timeout_ms,
        .checkpoint_min_pause_ms = st.cp_min_pause_ms,
        .exactly_once = st.cp_exactly_once,
        .max_parallelism = g->max_parallelism,
        .unaligned = st.cp_unaligned,
    };
    for (int i = 0; i < g->nv; i++) {
        const sl_vertex *v = &g->v[i];
        if (v->def->check_job && v->def->check_job(v, v->plan, &jc, err, errlen) != SL_OK)
            return SL_ERR;
    }
    return SL_OK;
}

/* Flink's ExponentialDelayRestartBackoffTimeStrategy: the first restart
 * waits initial-backoff, each next one multiplier times the last (at most
 * max-backoff), plus or minus up to jitter-factor of it; a job that ran
 * reset-backoff-threshold since its last failure starts over. */
int64_t jm_restart_backoff(jm *j, jm_job *job, int64_t now)
{
    if (job->last_failure_mono_ms && now - job->last_failure_mono_ms >= job->set.exp_reset_ms) {
        job->backoff_ms = 0;
        job->cycle_restarts = 0;
    }
    job->last_failure_mono_ms = now;
    if (job->cycle_restarts >= job->set.restart_attempts) return -1;
    if (!job->backoff_ms) {
        job->backoff_ms = job->set.exp_initial_ms;
    } else {
        double next = (double)job->backoff_ms * job->set.exp_multiplier;
        job->backoff_ms = next >= (double)job->set.exp_max_ms ? job->set.exp_max_ms : (int64_t)next;
    }
    if (job->backoff_ms > job->set.exp_max_ms) job->backoff_ms = job->set.exp_max_ms;
    int64_t delay = job->backoff_ms;
    if (job->set.exp_jitter > 0) {
        char hex[9];
        sl_random_hex(hex, 8);
        double u = (double)strtoul(hex, NULL, 16) / 4294967295.0; /* 0..1 */
        delay += (int64_t)((u * 2 - 1) * job->set.exp_jitter * (double)job->backoff_ms);
    }
    job->cycle_restarts++;
    return SL_MAX(delay, 1);
}

/* A deployed job lost a task or TaskManager, or its checkpoints failed past
 * tolerance: restart it from its latest checkpoint when the restart
 * strategy allows, else fail it. */
static void fail_or_restart(jm *j, jm_job *job, const char *reason)
{
    int64_t now = sl_mono_ms(), delay = -1;
    if (job->set.restart_type == JM_RESTART_FIXED) {
        job->last_failure_mono_ms = now;
        if (job->restarts < job->set.restart_attempts) delay = SL_MAX(job->set.restart_delay_ms, 1);
    } else if (job->set.restart_type == JM_RESTART_EXPONENTIAL) {
        delay = jm_restart_backoff(j, job, now);
    }
    if (delay < 0) {
        if (job->set.restart_type != JM_RESTART_NONE) {
            char r2[800];
            snprintf(r2, sizeof r2, "%s (restart attempts exhausted: %d)", reason,
                     job->set.restart_type == JM_RESTART_FIXED ? job->restarts : job->cycle_restarts);
            job_fail(j, job, r2);
        } else {
            job_fail(j, job, reason);
        }
        return;
    }
    rescale_end(job, RS_FAILED, "JOB_FAILOVER_RESTARTING", reason);
    job->restarts++;
    int attempt = job->set.restart_type == JM_RESTART_FIXED ? job->restarts : job->cycle_restarts;
    sl_warn(TAG, "Job %s (%s) restarts (attempt %d of %d) in %lld ms: %s", job->g->name, job->id,
            attempt, job->set.restart_attempts, (long long)delay, reason);
    jm_cp_job_ended(j, job);
    send_cancel(j, job);
    release_slots(job);
    tasks_to(job, T_CANCELED);
    if (job->restore_point) { /* else: the snapshot it started from, if any */
        free(job->restore_dir);
        job->restore_dir = sl_strdup(job->restore_point);
        job->restored_is_savepoint = 0;
    }
    jm_job_set_state(job, JOB_RESTARTING);
    job->restart_at_mono_ms = now + delay;
}

/* ---- rescaling ------------------------------------------------------------ */

static void uuid4(char out[37])
{
    char h[33];
    sl_random_hex(h, 32);
    h[12] = '4';                                  /* version 4 */
    h[16] = "89ab"[(h[16] - '0') & 3];            /* variant 10xx */
    snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

static void span_enter(jm_rescale *rs, const char *state)
{
    int64_t now = sl_now_ms();
    if (rs->nspans && !rs->spans[rs->nspans - 1].leave_ms) rs->spans[rs->nspans - 1].leave_ms = now;
    if (!state || rs->nspans == JM_RESCALE_SPANS) return;
    rs->spans[rs->nspans].state = state;
    rs->spans[rs->nspans].enter_ms = now;
    rs->nspans++;
}

static void rescale_free(jm_rescale *rs)
{
    free(rs->failure);
    free(rs->lower);
    free(rs->upper);
    free(rs->pre);
    free(rs->post);
    for (int i = 0; i < rs->nspans; i++) free(rs->spans[i].exception);
    free(rs->sp_dir);
    free(rs);
}

static void rescales_free(jm_job *job)
{
    while (job->rescales) {
        jm_rescale *rs = job->rescales;
        job->rescales = rs->next;
        rescale_free(rs);
    }
    job->rescaling = NULL;
}

static jm_rescale *rescale_new(jm_job *job, const int *lower, const int *upper)
{
    jm_rescale *rs = sl_calloc(1, sizeof *rs);
    int n = job->g->nchains;
    uuid4(rs->uuid);
    uuid4(rs->req_uuid);
    rs->attempt = ++job->rescale_count;
    rs->start_ms = sl_now_ms();
    rs->nchains = n;
    rs->lower = sl_calloc((size_t)n, sizeof(int));
    rs->upper = sl_calloc((size_t)n, sizeof(int));
    rs->pre = sl_calloc((size_t)n, sizeof(int));
    rs->post = sl_calloc((size_t)n, sizeof(int));
    for (int c = 0; c < n; c++) {
        rs->lower[c] = lower[c];
        rs->upper[c] = upper[c];
        rs->pre[c] = job->g->chains[c].parallelism;
    }
    rs->pre_slots = job->nslots;
    rs->next = job->rescales;
    job->rescales = rs;
    int kept = 0; /* the oldest ended ones beyond the bound go */
    for (jm_rescale **pp = &job->rescales; *pp;) {
        if (++kept > JM_RESCALE_HISTORY && *pp != job->rescaling) {
            jm_rescale *old = *pp;
            *pp = old->next;
            rescale_free(old);
            continue;
        }
        pp = &(*pp)->next;
    }
    return rs;
}

/* End the rescale in progress, if any. */
static void rescale_end(jm_job *job, jm_rescale_status st, const char *reason, const char *why)
{
    jm_rescale *rs = job->rescaling;
    if (!rs) return;
    if (why && rs->nspans && !rs->spans[rs->nspans - 1].exception)
        rs->spans[rs->nspans - 1].exception = sl_strdup(why);
    span_enter(rs, NULL);
    rs->status = st;
    rs->reason = reason;
    rs->end_ms = sl_now_ms();
    if (why) rs->failure = sl_strdup(why);
    job->rescale_counts[st]++;
    job->rescaling = NULL;
    if (st == RS_COMPLETED)
        sl_info(TAG, "Job %s (%s) is rescaled (rescale %s).", job->g->name, job->id, rs->uuid);
    else if (st == RS_FAILED)
        sl_warn(TAG, "Rescale %s of job %s failed: %s", rs->uuid, job->id, why ? why : reason);
}

/* The job's graph with chain c at parallelism p[c]: parsed and checked as a
 * submission is, and with the same chains (ids, in order). */
static sl_jobgraph *graph_at(jm *j, const jm_job *job, const int *p, char *err, size_t errlen)
{
    const sl_jobgraph *g = job->g;
    json_t *doc = json_loads(job->graph_json, 0, NULL);
    json_t *vs = json_object_get(doc, "vertices");
    if (!doc || !json_is_array(vs) || json_array_size(vs) != (size_t)g->nv) {
        json_decref(doc);
        sl_seterr(err, errlen, "the job's graph cannot be read back");
        return NULL;
    }
    for (int i = 0; i < g->nv; i++)
        json_object_set_new(json_array_get(vs, (size_t)i), "parallelism",
                            json_integer(p[g->v[i].chain]));
    /* "parallelism" of the job is only the default for vertices without
     * one; every vertex has its own here */
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    char perr[600];
    sl_jobgraph *ng = text ? sl_jobgraph_parse(text, strlen(text), j->default_parallelism, 0, perr,
                                               sizeof perr)
                           : NULL;
    free(text);
    if (!ng) {
        sl_seterr(err, errlen, "the job cannot run at that parallelism: %s", perr);
        return NULL;
    }
    int same = ng->nchains == g->nchains && ng->max_parallelism == g->max_parallelism;
    for (int c = 0; same && c < g->nchains; c++) same = !strcmp(ng->chains[c].id, g->chains[c].id);
    if (!same) {
        sl_jobgraph_destroy(ng);
        sl_seterr(err, errlen,
                  "at that parallelism the job's operators would chain differently (a forward "
                  "edge between vertices of equal parallelism joins them): give them different "
                  "parallelisms or resubmit the job");
        return NULL;
    }
    if (jm_job_graph_check(j, ng, err, errlen) != SL_OK) {
        sl_jobgraph_destroy(ng);
        return NULL;
    }
    return ng;
}

int jm_job_rescale(jm *j, jm_job *job, const int *lower, const int *upper, jm_rescale **out,
                   char *err, size_t errlen)
{
    *out = NULL;
    if (job->state != JOB_RUNNING) {
        sl_seterr(err, errlen, "job %s is %s: only a RUNNING job can be rescaled", job->id,
                  jm_job_state_name(job->state));
        return 409;
    }
    if (job->rescaling) {
        sl_seterr(err, errlen, "rescale %s of job %s is still in progress", job->rescaling->uuid,
                  job->id);
        return 409;
    }
    for (int i = 0; i < job->g->nv; i++)
        if (job->g->v[i].def->flags & SL_OPF_COLLECT) {
            sl_seterr(err, errlen, "job %s sends a query's rows to a client (collect sink '%s'): it "
                      "cannot be rescaled", job->id, job->g->v[i].id);
            return 400;
        }
    int change = 0;
    for (int c = 0; c < job->g->nchains; c++) change |= upper[c] != job->g->chains[c].parallelism;
    /* the job must be able to run at both ends of the bounds */
    for (int pass = 0; pass < 2; pass++) {
        const int *p = pass ? lower : upper;
        if (pass && !memcmp(lower, upper, sizeof(int) * (size_t)job->g->nchains)) break;
        sl_jobgraph *ng = graph_at(j, job, p, err, errlen);
        if (!ng) return 400;
        sl_jobgraph_destroy(ng);
    }
    if (!change) { /* as Flink: recorded, and nothing happens */
        jm_rescale *rs = rescale_new(job, lower, upper);
        job->rescaling = rs;
        for (int c = 0; c < job->g->nchains; c++) rs->post[c] = rs->pre[c];
        rs->post_slots = rs->pre_slots;
        rescale_end(job, RS_IGNORED, "NO_RESOURCES_OR_PARALLELISMS_CHANGE", NULL);
        *out = rs;
        return 0;
    }
    char *dir = jm_savepoint_dir(j, job, NULL);
    if (!dir) { /* no state.savepoints.dir: next to the job's checkpoints */
        char hex[13];
        sl_random_hex(hex, 12);
        dir = sl_sprintf("%s/%s/rescale-%s", j->cp_dir, job->id, hex);
    }
    char cerr[300];
    jm_checkpoint *cp = jm_cp_trigger(j, job, CP_SYNC_SAVEPOINT, dir, 1, 0, cerr, sizeof cerr);
    free(dir);
    if (!cp) {
        sl_seterr(err, errlen, "cannot take the rescale's savepoint: %s", cerr);
        return 409;
    }
    jm_rescale *rs = rescale_new(job, lower, upper);
    job->rescaling = rs;
    rs->sp_id = cp->id;
    span_enter(rs, "StopWithSavepoint");
    sl_info(TAG, "Job %s (%s) rescales (rescale %s): stop with savepoint %llu, then restore.",
            job->g->name, job->id, rs->uuid, (unsigned long long)cp->id);
    *out = rs;
    return 0;
}

/* Free chain c's task records (their strings and the array). */
static void chain_tasks_free(jm_job *job, int c)
{
    for (int i = 0; i < job->g->chains[c].parallelism; i++) {
        free(job->tasks[c][i].tm_id);
        free(job->tasks[c][i].host);
        free(job->tasks[c][i].metrics.ops);
        free(job->tasks[c][i].metrics.info);
        free(job->tasks[c][i].metrics.lat);
    }
    free(job->tasks[c]);
}

/* Every task finished after the rescale's savepoint completed: swap in the
 * graph at the new parallelism and wait for its slots, restoring from the
 * savepoint. */
static void rescale_restart(jm *j, jm_job *job)
{
    jm_rescale *rs = job->rescaling;
    jm_cp_job_ended(j, job);
    release_slots(job);
    /* as many slots as there are, within the bounds */
    int avail = jm_slots_free(j), n = job->g->nchains;
    int *p = sl_calloc((size_t)n, sizeof(int));
    for (int c = 0; c < n; c++) p[c] = SL_MAX(rs->lower[c], SL_MIN(rs->upper[c], avail));
    char err[800];
    sl_jobgraph *ng = graph_at(j, job, p, err, sizeof err);
    free(p);
    if (ng) {
        for (int c = 0; c < job->g->nchains; c++) {
            chain_tasks_free(job, c);
            job->tasks[c] = sl_calloc((size_t)ng->chains[c].parallelism, sizeof(jm_task));
        }
        sl_jobgraph_destroy(job->g);
        job->g = ng;
        free(job->graph_json);
        job->graph_json = sl_jobgraph_dump(ng);
        free(job->slot_tm);
        job->nslots = ng->max_vertex_parallelism;
        job->slot_tm = sl_calloc((size_t)job->nslots, sizeof(jm_tm *));
    }
    /* restore from the savepoint: it is also the job's restore point until
     * a checkpoint at the new parallelism completes */
    free(job->restore_dir);
    job->restore_dir = sl_strdup(rs->sp_dir);
    job->restored_is_savepoint = 1;
    free(job->restore_point);
    job->restore_point = sl_strdup(rs->sp_dir);
    job->restore_point_id = rs->sp_id;
    job->cp_counter = SL_MAX(job->cp_counter, rs->sp_id);
    if (ng && jm_ha_job_rescaled(j, job, err, sizeof err) != SL_OK)
        /* a JobManager taking over would run it at the old parallelism, from
         * the same savepoint (ZooKeeper has it as the latest checkpoint) */
        sl_warn(TAG, "Job %s: the rescaled graph is not persisted: %s", job->id, err);
    for (int c = 0; c < job->g->nchains; c++) rs->post[c] = job->g->chains[c].parallelism;
    rs->post_slots = job->nslots;
    jm_job_set_state(job, JOB_RESTARTING);
    if (!ng) { /* at the old parallelism, from the savepoint */
        rescale_end(job, RS_FAILED, "EXCEPTION_OCCURRED", err);
    } else {
        span_enter(rs, "WaitingForResources");
    }
    job->created_mono_ms = sl_mono_ms();
    jm_job_set_state(job, JOB_CREATED);
    jm_schedule(j);
}

void jm_sched_on_sp_failed(jm *j, jm_job *job, uint64_t cp_id, const char *why)
{
    SL_UNUSED(j);
    if (job->rescaling && job->rescaling->sp_id == cp_id && !job->rescaling->sp_done) {
        char r[600];
        snprintf(r, sizeof r, "its savepoint %llu failed: %s", (unsigned long long)cp_id, why);
        rescale_end(job, RS_FAILED, "EXCEPTION_OCCURRED", r);
    }
}

void jm_sched_on_cp_failed(jm *j, jm_job *job, const char *reason)
{
    if (job->state != JOB_RUNNING) return;
    jm_job_add_exception(job, "CheckpointException", reason, NULL, NULL, NULL);
    fail_or_restart(j, job, reason);
}

void jm_sched_on_cp_completed(jm *j, jm_job *job, const jm_checkpoint *cp)
{
    jm_rescale *rs = job->rescaling;
    if (rs && cp->id == rs->sp_id) {
        /* the tasks finish now; the job restores from it, also should it
         * fail before a checkpoint at the new parallelism (its sinks have
         * committed what it covers) */
        rs->sp_done = 1;
        rs->sp_dir = sl_strdup(cp->dir);
        jm_cp_drop_rescale_savepoint(j, job); /* an earlier rescale's: this one replaces it */
        job->rescale_sp = sl_strdup(cp->dir);
        job->rescale_sp_id = cp->id;
        free(job->restore_point);
        job->restore_point = sl_strdup(cp->dir);
        job->restore_point_id = cp->id;
        return;
    }
    if (cp->type != CP_CHECKPOINT) return; /* savepoints are not restore points of the job */
    /* the next restart of this job restores from here */
    free(job->restore_point);
    job->restore_point = sl_strdup(cp->dir);
    job->restore_point_id = cp->id;
    /* a checkpoint of the job at its new parallelism (not one its tasks
     * took while finishing for the rescale): the savepoint is needed no more */
    if (!job->rescaling) jm_cp_drop_rescale_savepoint(j, job);
}

static void job_free(jm_job *job)
{
    for (int c = 0; c < job->g->nchains; c++) chain_tasks_free(job, c);
    free(job->tasks);
    for (int i = 0; i < job->nexceptions; i++) {
        free(job->exceptions[i].name);
        free(job->exceptions[i].stacktrace);
        free(job->exceptions[i].task);
        free(job->exceptions[i].tm_id);
        free(job->exceptions[i].endpoint);
    }
    free(job->exceptions);
    jm_cp_free(job);
    jm_results_free(job);
    free(job->slot_tm);
    free(job->state_reason);
    free(job->state_backend);
    free(job->restore_point);
    free(job->rescale_sp);
    rescales_free(job);
    free(job->graph_json);
    for (size_t i = 0; i < job->nlibs; i++) jm_user_library_free(job->libs[i]);
    free(job->libs);
    sl_jobgraph_destroy(job->g);
    free(job);
}

/* Forget finished jobs beyond jobstore.max-capacity (the oldest first) and
 * those finished longer than jobstore.expiration-time ago. */
static void evict(jm *j)
{
    int64_t now = sl_now_ms();
    int64_t kept = 0;
    /* jobs is newest first, so the capacity keeps the newest finished ones */
    for (jm_job **pp = &j->jobs; *pp;) {
        jm_job *job = *pp;
        int done = job->state == JOB_FINISHED || job->state == JOB_CANCELED || job->state == JOB_FAILED;
        if (done && (kept >= j->jobstore_capacity || now - job->end_ms >= j->jobstore_expiration_ms)) {
            sl_info(TAG, "Job %s (%s) leaves the job store (%s).", job->g->name, job->id,
                    kept >= j->jobstore_capacity ? "jobstore.max-capacity" : "jobstore.expiration-time");
            *pp = job->next;
            job_free(job);
            continue;
        }
        kept += done;
        pp = &job->next;
    }
}

void jm_sched_tick(jm *j)
{
    int64_t now = sl_mono_ms();
    int due = 0;
    for (jm_job *job = j->jobs; job; job = job->next) {
        if (job->state != JOB_RESTARTING || !job->restart_at_mono_ms || now < job->restart_at_mono_ms)
            continue;
        job->restart_at_mono_ms = 0;
        job->created_mono_ms = now;
        jm_job_set_state(job, JOB_CREATED);
        due = 1;
    }
    if (due) jm_schedule(j);
    evict(j);
}

/* Pick nslots slots spread evenly: repeatedly take a free slot on the
 * TaskManager holding the fewest of this job's slots so far, and among
 * those the one with the most free slots. */
static int place(jm *j, jm_job *job)
{
    int need = job->nslots, have = jm_slots_free(j);
    if (have < need) {
        char reason[128];
        snprintf(reason, sizeof reason, "%swaiting for %d slot%s, %d free",
                 job->rescaling ? "rescaling: " : "", need, need == 1 ? "" : "s", have);
        if (!job->state_reason || strcmp(job->state_reason, reason)) {
            sl_info(TAG, "Job %s (%s) is %s.", job->g->name, job->id, reason);
            set_reason(job, reason);
        }
        return SL_AGAIN;
    }
    for (int s = 0; s < need; s++) {
        jm_tm *best = NULL;
        int bestfree = 0, bestmine = 0;
        for (jm_tm *tm = j->tms; tm; tm = tm->next) {
            int f = tm_free(tm), mine = 0;
            if (!f) continue;
            for (int q = 0; q < s; q++) mine += job->slot_tm[q] == tm;
            if (!best || mine < bestmine || (mine == bestmine && f > bestfree)) {
                best = tm;
                bestfree = f;
                bestmine = mine;
            }
        }
        SL_ASSERT(best);
        for (int i = 0; i < best->slots; i++)
            if (!best->slot_job[i]) { best->slot_job[i] = job; break; }
        job->slot_tm[s] = best;
    }
    set_reason(job, NULL);
    return SL_OK;
}

/* The state backends the job's TaskManagers use, distinct, in slot order
 * ("hashmap", or "hashmap,rocksdb" when they differ). */
static void record_backends(jm_job *job)
{
    char buf[256] = "";
    size_t used = 0;
    for (int s = 0; s < job->nslots; s++) {
        const char *b = job->slot_tm[s] ? job->slot_tm[s]->state_backend : NULL;
        if (!b) continue;
        int seen = 0;
        for (int q = 0; q < s; q++)
            seen |= job->slot_tm[q] && !strcmp(job->slot_tm[q]->state_backend, b);
        if (seen || used + strlen(b) + 2 > sizeof buf) continue;
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? "," : "", b);
    }
    free(job->state_backend);
    job->state_backend = sl_strdup(buf);
}

static void deploy(jm *j, jm_job *job)
{
    job->attempt = ++j->next_attempt;
    for (int c = 0; c < job->g->nchains; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++) {
            jm_task *t = &job->tasks[c][i];
            jm_tm *tm = job->slot_tm[i];
            free(t->tm_id);
            free(t->host);
            free(t->metrics.ops);
            free(t->metrics.info);
            free(t->metrics.lat);
            memset(t, 0, sizeof *t);
            t->state = T_DEPLOYING;
            t->tm_id = sl_strdup(tm->id);
            t->host = sl_strdup(tm->host);
            t->start_ms = sl_now_ms();
        }
    Sluice__SlotLocation *locs = sl_calloc((size_t)job->nslots, sizeof *locs);
    Sluice__SlotLocation **plocs = sl_calloc((size_t)job->nslots, sizeof *plocs);
    uint32_t *local = sl_calloc((size_t)job->nslots, sizeof(uint32_t));
    for (int s = 0; s < job->nslots; s++) {
        sluice__slot_location__init(&locs[s]);
        locs[s].tm_id = job->slot_tm[s]->id;
        locs[s].host = job->slot_tm[s]->host;
        locs[s].data_port = (uint32_t)job->slot_tm[s]->data_port;
        plocs[s] = &locs[s];
    }
    for (jm_tm *tm = j->tms; tm; tm = tm->next) {
        size_t nlocal = 0;
        for (int s = 0; s < job->nslots; s++)
            if (job->slot_tm[s] == tm) local[nlocal++] = (uint32_t)s;
        if (!nlocal) continue;
        Sluice__DeployJob d = SLUICE__DEPLOY_JOB__INIT;
        d.job_id = job->id;
        d.attempt = job->attempt;
        d.session = j->session;
        d.graph_json = job->graph_json;
        d.n_slots = (size_t)job->nslots;
        d.slots = plocs;
        d.n_local_slots = nlocal;
        d.local_slots = local;
        d.buffer_timeout_ms = sl_config_int(j->conf, "execution.buffer-timeout");
        d.restore_dir = job->restore_dir ? job->restore_dir : "";
        d.checkpointing = job->set.cp_interval_ms > 0;
        d.exactly_once = job->set.cp_exactly_once;
        d.n_libraries = job->nlibs;
        d.libraries = job->libs;
        d.collect_credit = jm_results_room(job);
        Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
        env.msg_case = SLUICE__ENVELOPE__MSG_DEPLOY;
        env.deploy = &d;
        jm_send(tm, &env);
    }
    free(locs);
    free(plocs);
    free(local);
    record_backends(job);
    if (job->restore_dir) {
        job->cp_restored++;
        job->restored_ms = sl_now_ms();
        free(job->restored_path);
        job->restored_path = sl_store_uri(job->restore_dir);
        job->restored_id = job->restore_point ? (int64_t)job->restore_point_id : (int64_t)job->cp_counter;
    }
    job->next_cp_mono_ms = sl_mono_ms() + job->set.cp_interval_ms;
    job->final_cp_wanted = 0;
    jm_job_set_state(job, JOB_RUNNING);
    if (job->rescaling && job->rescaling->sp_done) {
        span_enter(job->rescaling, "Executing");
        rescale_end(job, RS_COMPLETED, "SUCCEEDED", NULL);
    }
}

void jm_schedule(jm *j)
{
    if (!jm_ha_may_act(j)) return; /* standby, or ZooKeeper suspended: nothing is deployed */
    /* oldest first: jobs is newest-first, so walk to the end */
    int n = 0;
    for (jm_job *job = j->jobs; job; job = job->next) n++;
    jm_job **order = sl_calloc((size_t)(n ? n : 1), sizeof *order);
    int k = n;
    for (jm_job *job = j->jobs; job; job = job->next) order[--k] = job;
    for (int i = 0; i < n; i++) {
        jm_job *job = order[i];
        if (job->state != JOB_CREATED) continue;
        if (place(j, job) == SL_OK) deploy(j, job);
    }
    free(order);
}

static jm_task *find_task(jm_job *job, uint32_t chain, uint32_t subtask)
{
    if (chain >= (uint32_t)job->g->nchains || subtask >= (uint32_t)job->g->chains[chain].parallelism)
        return NULL;
    return &job->tasks[chain][subtask];
}

int jm_task_runs_on(jm *j, const char *job_id, uint32_t attempt, uint32_t chain, uint32_t subtask,
                    const jm_tm *tm)
{
    jm_job *job = job_id ? jm_job_find(j, job_id) : NULL;
    if (!job || attempt != job->attempt || !job->tasks) return 1;
    jm_task *t = find_task(job, chain, subtask);
    return !t || !t->tm_id || !strcmp(t->tm_id, tm->id);
}

static int all_tasks_in(jm_job *job, int (*pred)(jm_task_state))
{
    for (int c = 0; c < job->g->nchains; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++)
            if (!pred(job->tasks[c][i].state)) return 0;
    return 1;
}

static int is_finished(jm_task_state s) { return s == T_FINISHED; }
static int is_stopped(jm_task_state s) { return s == T_FINISHED || s == T_CANCELED || s == T_FAILED; }

void jm_on_task_status(jm *j, const Sluice__TaskStatus *ts)
{
    jm_job *job = ts->job_id ? jm_job_find(j, ts->job_id) : NULL;
    if (!job || ts->attempt != job->attempt) return; /* a report from an older deployment */
    jm_task *t = find_task(job, ts->chain, ts->subtask);
    if (!t) return;
    if (ts->final_metrics) jm_apply_metrics(j, ts->final_metrics);
    switch (ts->state) {
    case SLUICE__TASK_STATE__TASK_RUNNING:
        if (t->state == T_DEPLOYING || t->state == T_CREATED) t->state = T_RUNNING;
        if (ts->end_of_input && t->state == T_RUNNING) {
            t->end_of_input = 1;
            jm_cp_on_end_of_input(j, job);
        }
        break;
    case SLUICE__TASK_STATE__TASK_FINISHED:
        t->state = T_FINISHED;
        t->end_ms = sl_now_ms();
        if (job->state == JOB_RUNNING) jm_cp_on_task_finished(j, job, ts->chain, ts->subtask);
        if (job->state == JOB_RUNNING && all_tasks_in(job, is_finished) && job->rescaling &&
            job->rescaling->sp_done) {
            rescale_restart(j, job);
        } else if (job->state == JOB_RUNNING && all_tasks_in(job, is_finished)) {
            rescale_end(job, RS_FAILED, "JOB_FINISHED", "the job finished");
            jm_cp_job_ended(j, job);
            jm_cp_drop_rescale_savepoint(j, job);
            release_slots(job);
            jm_job_set_state(job, JOB_FINISHED);
            jm_schedule(j); /* its slots serve a waiting job at once, as in Flink */
        }
        break;
    case SLUICE__TASK_STATE__TASK_CANCELED:
        t->state = T_CANCELED;
        t->end_ms = sl_now_ms();
        if (job->state == JOB_CANCELLING && all_tasks_in(job, is_stopped)) {
            jm_cp_job_ended(j, job);
            release_slots(job);
            jm_job_set_state(job, JOB_CANCELED);
            jm_cp_job_canceled(j, job);
            jm_schedule(j);
        }
        break;
    case SLUICE__TASK_STATE__TASK_FAILED: {
        t->state = T_FAILED;
        t->end_ms = sl_now_ms();
        const sl_chain *ch = &job->g->chains[ts->chain];
        char task[256];
        snprintf(task, sizeof task, "%s (%u/%d)", ch->name, ts->subtask + 1, ch->parallelism);
        const char *tm_id = ts->tm_id && *ts->tm_id ? ts->tm_id : t->tm_id;
        const char *msg = ts->error && *ts->error ? ts->error : "task failed";
        jm_job_add_exception(job, msg, msg, task, tm_id, tm_id ? jm_tm_find(j, tm_id) : NULL);
        if (job->state == JOB_RUNNING) {
            char reason[600];
            snprintf(reason, sizeof reason, "%s failed: %s", task, msg);
            fail_or_restart(j, job, reason);
            jm_schedule(j); /* a failed job's slots are free now */
        }
        break;
    }
    default:
        break;
    }
}

void jm_on_tm_lost(jm *j, jm_tm *tm, const char *why)
{
    sl_warn(TAG, "TaskManager %s is gone (%s); its %d slots are removed.", tm->id, why, tm->slots);
    for (jm_job *job = j->jobs; job; job = job->next) {
        int uses = 0;
        for (int s = 0; s < job->nslots; s++)
            if (job->slot_tm[s] == tm) uses = 1;
        if (!uses) continue;
        /* the lost TaskManager cannot be told anything; forget its slots first */
        for (int s = 0; s < job->nslots; s++)
            if (job->slot_tm[s] == tm) job->slot_tm[s] = NULL;
        if (job->state == JOB_RUNNING || job->state == JOB_CANCELLING) {
            char reason[300];
            snprintf(reason, sizeof reason, "TaskManager %s was lost: %s", tm->id, why);
            jm_job_add_exception(job, reason, reason, NULL, tm->id, tm);
            if (job->state == JOB_CANCELLING) job_end(j, job, JOB_CANCELED, NULL);
            else fail_or_restart(j, job, reason);
        }
    }
    for (jm_tm **p = &j->tms; *p; p = &(*p)->next)
        if (*p == tm) { *p = tm->next; break; }
    if (tm->conn) tm->conn->tm = NULL;
    free(tm->id);
    free(tm->host);
    free(tm->state_backend);
    free(tm->slot_job);
    free(tm);
    jm_schedule(j);
}

void jm_check_timeouts(jm *j)
{
    int64_t now = sl_mono_ms();
    for (jm_tm *tm = j->tms; tm;) {
        jm_tm *next = tm->next;
        if (now - tm->last_heartbeat_ms > j->heartbeat_timeout_ms) {
            char why[96];
            snprintf(why, sizeof why, "no heartbeat for %lld ms", (long long)(now - tm->last_heartbeat_ms));
            jm_on_tm_lost(j, tm, why);
        }
        tm = next;
    }
    for (jm_job *job = j->jobs; job; job = job->next) {
        if (job->state != JOB_CREATED) continue;
        if (now - job->created_mono_ms > j->slot_timeout_ms) {
            char reason[300];
            snprintf(reason, sizeof reason,
                     "could not get %d slot%s within slot.request.timeout (%lld ms): %s", job->nslots,
                     job->nslots == 1 ? "" : "s", (long long)j->slot_timeout_ms,
                     job->state_reason ? job->state_reason : "not enough slots");
            jm_job_add_exception(job, "NoResourceAvailableException", reason, NULL, NULL, NULL);
            job_fail(j, job, reason);
        }
    }
}

void jm_jobs_suspend_all(jm *j)
{
    for (jm_job *job = j->jobs; job; job = job->next) {
        if (jm_job_state_terminal(job->state)) continue;
        jm_cp_job_ended(j, job);
        release_slots(job);
        tasks_to(job, T_CANCELED);
        jm_job_set_state(job, JOB_SUSPENDED);
    }
    while (j->jobs) {
        jm_job *job = j->jobs;
        j->jobs = job->next;
        job_free(job);
    }
}

void jm_jobs_destroy(jm *j)
{
    while (j->jobs) {
        jm_job *job = j->jobs;
        j->jobs = job->next;
        job_free(job);
    }
    while (j->tms) {
        jm_tm *tm = j->tms;
        j->tms = tm->next;
        free(tm->id);
        free(tm->host);
        free(tm->state_backend);
        free(tm->slot_job);
        free(tm);
    }
}
