/*
 * deploy.c -- deployments: planning, building, wiring, cancelling, reaping.
 *
 * A deployment is named by the JobManager's session, the job and the
 * attempt: attempts count from 1 again when a JobManager restarts, so the
 * session (random per JobManager start, sent in RegisterAck and DeployJob)
 * is what keeps a new session's attempt 1 apart from an old one that is
 * still draining here.
 *
 * A DeployJob is planned off the network thread: the network thread notes
 * it as "planning" and hands the message to the deploy worker, which parses
 * the job graph (sl_jobgraph_parse runs every operator's plan) and reads the
 * restore snapshot's _metadata from disk, then hands the result back
 * through the network thread's inbox. The network thread then builds the
 * tasks, wires the exchange and starts the task threads -- unless the
 * attempt was cancelled meanwhile, in which case the plan is dropped.
 *
 * The DeployJob travels to the worker on tm_net.plans (an sl_queue,
 * TM_PLAN_DEPLOY) and back on the inbox (TM_OP_PLANNED), the same tm_plan
 * moving from one queue to the next. Unbounded: one entry per deployment
 * the JobManager sends, and it sends one per attempt.
 *
 * Threads: everything here runs on the network thread except plan_main.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include "tm.h"
#include "latency.h"
#include "debloat.h"
#include "collect.h"
#include "keygroup.h"
#include "log.h"
#include "snapshot.h"
#include "store.h"
#include "userfn.h"

#define TAG "tm:deploy"

/* A DeployJob on its way through the worker (owned by whoever holds it). */
typedef struct tm_plan {
    Sluice__Envelope *env;      /* the DeployJob envelope */
    sl_jobgraph *g;             /* planned graph, or NULL with err */
    struct Sluice__SnapshotMetadata *restore;
    char *restore_copy;         /* an s3:// snapshot fetched here (its root), or NULL */
    char *restore_local;        /* the snapshot directory inside it */
    char err[1024];
    sl_qmsg qm;                 /* TM_PLAN_DEPLOY on tm_net.plans, then
                                   TM_OP_PLANNED on the network thread's inbox */
} tm_plan;

/* A deployment the worker is planning (network thread). */
typedef struct tm_planning {
    uint64_t session;
    uint32_t attempt;
    int cancelled;
    struct tm_planning *next;
} tm_planning;

/* Remove the local copy of an s3:// snapshot (NULL: none). */
static void remove_copy(const char *root)
{
    char err[300];
    if (root && sl_rm_tree(root, err, sizeof err) != SL_OK)
        sl_warn(TAG, "cannot remove the restore copy %s: %s", root, err);
}

static void plan_free(tm_plan *p)
{
    if (!p) return;
    if (p->g) sl_jobgraph_destroy(p->g);
    if (p->restore) sluice__snapshot_metadata__free_unpacked(p->restore, NULL);
    if (p->env) sluice__envelope__free_unpacked(p->env, NULL);
    remove_copy(p->restore_copy);
    free(p->restore_copy);
    free(p->restore_local);
    free(p);
}

/* ---- the worker ---------------------------------------------------------- */

/* Write a shipped C job to path unless it is there (same id, same
 * content): a temporary file renamed into place, so a task never loads a
 * half-written object. */
static int write_library(const char *path, const Sluice__UserLibrary *lib, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && (size_t)st.st_size == lib->data.len) return SL_OK;
    char *tmp = sl_sprintf("%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    int rc = SL_OK;
    if (fd < 0) rc = sl_seterr(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
    else {
        size_t at = 0;
        while (at < lib->data.len && rc == SL_OK) {
            ssize_t w = write(fd, lib->data.data + at, lib->data.len - at);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) rc = sl_seterr(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
            else at += (size_t)w;
        }
        if (close(fd) != 0 && rc == SL_OK) rc = sl_seterr(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        if (rc == SL_OK && rename(tmp, path) != 0)
            rc = sl_seterr(err, errlen, "cannot rename %s: %s", tmp, strerror(errno));
        if (rc != SL_OK) unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* The C jobs shipped with the deployment go under this TaskManager's
 * taskmanager.tmp.dirs, and every "library": "jar:<id>" of the graph (a
 * vertex's, or one of its user functions') is pointed at its file. Returns the graph text to plan (caller frees), or
 * NULL with err. */
static char *place_libraries(tm_net *n, const Sluice__DeployJob *m, char *err, size_t errlen)
{
    if (!m->n_libraries) return sl_strdup(m->graph_json);
    char *dir = sl_sprintf("%s/sluice-%s/jars", sl_config_str(n->conf, "taskmanager.tmp.dirs"), n->id);
    for (char *c = dir; *c; c++)
        if (*c == ':') *c = '_';
    int rc = sl_mkdirs(dir, err, errlen);
    json_t *doc = rc == SL_OK ? json_loads(m->graph_json, 0, NULL) : NULL;
    if (rc == SL_OK && !doc) rc = sl_seterr(err, errlen, "the deployed graph is not JSON");
    for (size_t i = 0; rc == SL_OK && i < m->n_libraries; i++) {
        const Sluice__UserLibrary *lib = m->libraries[i];
        char *path = sl_sprintf("%s/%s", dir, lib->id ? lib->id : ""), *ref = sl_sprintf("jar:%s", lib->id ? lib->id : "");
        if (!sl_ds_jar_ref_ok(ref)) {
            rc = sl_seterr(err, errlen, "a shipped library has a bad id");
            free(path);
            free(ref);
            break;
        }
        rc = write_library(path, lib, err, errlen);
        json_t *vs = json_object_get(doc, "vertices"), *v;
        size_t k;
        json_array_foreach(vs, k, v) {
            json_t *cfg = json_object_get(v, "config");
            const char *l = json_string_value(json_object_get(cfg, "library"));
            if (rc == SL_OK && l && !strcmp(l, ref)) json_object_set_new(cfg, "library", json_string(path));
            json_t *f; /* user-defined functions (core/udf_sig.h) */
            size_t q;
            json_array_foreach(json_object_get(cfg, "functions"), q, f) {
                const char *fl = json_string_value(json_object_get(f, "library"));
                if (rc == SL_OK && fl && !strcmp(fl, ref)) json_object_set_new(f, "library", json_string(path));
            }
        }
        free(path);
        free(ref);
    }
    char *text = rc == SL_OK ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    free(dir);
    return text;
}

/* Which old subtask states this TaskManager's subtasks read on restore
 * (sl_snapshot_share, the rule the tasks apply): only those are fetched
 * from S3, so a rescale does not bring every file to every TaskManager. */
typedef struct {
    const sl_jobgraph *g;
    const Sluice__DeployJob *m;
    size_t asked, wanted;       /* subtask states with files: all, and ours */
} fetch_scope;

static int local_share(void *ctx, const Sluice__OperatorState *os, const Sluice__SubtaskState *ss)
{
    fetch_scope *fs = ctx;
    int files = (ss->file && *ss->file) || ss->n_private_files || ss->n_shared_files;
    fs->asked += files;
    for (int i = 0; i < fs->g->nv; i++) {
        const sl_vertex *v = &fs->g->v[i];
        if (strcmp(v->uid, os->uid)) continue;
        for (size_t s = 0; s < fs->m->n_local_slots; s++) {
            int sub = (int)fs->m->local_slots[s], kf, kl;
            if (sub >= v->parallelism) continue;
            sl_kg_range(sub, v->parallelism, fs->g->max_parallelism, &kf, &kl);
            if (sl_snapshot_share(ss, (v->def->flags & SL_OPF_KEYED) != 0, kf, kl,
                                  v->def->restore_state != NULL,
                                  (v->def->flags & SL_OPF_UNION_STATE) != 0, sub, v->parallelism)) {
                fs->wanted += files;
                return 1;
            }
        }
    }
    return 0;
}

static void plan_one(tm_net *n, tm_plan *p)
{
    const Sluice__DeployJob *m = p->env->deploy;
    char *graph = place_libraries(n, m, p->err, sizeof p->err);
    if (!graph) return;
    p->g = sl_jobgraph_parse(graph, strlen(graph), 1, 0, p->err, sizeof p->err);
    free(graph);
    if (!p->g || !m->restore_dir || !*m->restore_dir) return;
    void *packed = NULL;
    size_t plen = 0;
    char err[900];
    if (sl_snapshot_read_metadata(m->restore_dir, &packed, &plen, err, sizeof err) != SL_OK)
        snprintf(p->err, sizeof p->err, "cannot restore: %s", err);
    else if (!(p->restore = sluice__snapshot_metadata__unpack(NULL, plen, packed)))
        snprintf(p->err, sizeof p->err, "%.900s/_metadata does not decode", m->restore_dir);
    free(packed);
    if (!p->restore || !sl_store_is_s3(m->restore_dir)) return;
    /* on S3: the tasks read local files, so every file _metadata names is
     * fetched first, here, off the network thread */
    p->restore_copy = sl_sprintf("%s/sluice-%s/restore-%s-%llx-%u",
                                 sl_config_str(n->conf, "taskmanager.tmp.dirs"), n->id ? n->id : "tm",
                                 m->job_id, (unsigned long long)m->session, m->attempt);
    p->restore_local = sl_sprintf("%s/snapshot", p->restore_copy);
    remove_copy(p->restore_copy); /* a leftover of an earlier process */
    fetch_scope fs = {p->g, m, 0, 0};
    if (sl_snapshot_fetch(m->restore_dir, p->restore, local_share, &fs, p->restore_local, err,
                          sizeof err) != SL_OK)
        snprintf(p->err, sizeof p->err, "cannot restore: fetching %.300s: %.600s", m->restore_dir, err);
    else
        sl_info(TAG, "Job %s: fetched the files of %zu of the %zu subtask states in %s that this "
                "TaskManager's subtasks restore from.", m->job_id, fs.wanted, fs.asked, m->restore_dir);
}

static void *plan_main(void *arg)
{
    tm_net *n = arg;
    sl_qmsg *list;
    pthread_setname_np(pthread_self(), "deploy-worker"); /* its name in thread dumps */
    while ((list = sl_queue_wait(n->plans))) { /* NULL: stopped, and nothing left */
        while (list) {
            tm_plan *p = SL_QMSG_OF(list, tm_plan, qm);
            list = list->next;
            if (sl_queue_closed(n->plans)) { /* stopping: nobody wants the rest now */
                plan_free(p);
                continue;
            }
            plan_one(n, p);
            /* back to the network thread, in order */
            p->qm.type = TM_OP_PLANNED;
            if (sl_queue_push(n->inbox, &p->qm) != SL_OK) plan_free(p);
        }
    }
    return NULL;
}

int tm_deploy_start(tm_net *n, char *err, size_t errlen)
{
    if (!(n->plans = sl_queue_new("deploy worker", SL_QUEUE_COND, 0, err, errlen))) return SL_ERR;
    int e = pthread_create(&n->plan_thread, NULL, plan_main, n);
    if (e) return sl_seterr(err, errlen, "cannot start the deploy worker: %s", strerror(e));
    n->plan_started = 1;
    return SL_OK;
}

/* Plans the worker has not begun are dropped; those it finished wait in
 * the inbox, whose last run (tm_net_stop) drops them. */
void tm_deploy_stop(tm_net *n)
{
    if (!n->plan_started) return;
    sl_queue_close(n->plans);
    pthread_join(n->plan_thread, NULL);
    n->plan_started = 0;
    sl_queue_destroy(n->plans);
    n->plans = NULL;
    while (n->planning) {
        tm_planning *x = n->planning;
        n->planning = x->next;
        free(x);
    }
}

void tm_deploy_request(tm_net *n, Sluice__Envelope *env)
{
    const Sluice__DeployJob *m = env->deploy;
    if (!m->job_id || strlen(m->job_id) != 32 || !m->graph_json || m->n_slots == 0 ||
        m->n_slots > 65536) {
        sl_warn(TAG, "ignoring a malformed deployment");
        sluice__envelope__free_unpacked(env, NULL);
        return;
    }
    for (size_t s = 0; s < m->n_slots; s++)
        if (!m->slots[s] || !m->slots[s]->tm_id || !m->slots[s]->host) {
            sl_warn(TAG, "ignoring a deployment of job %s with a slot without a location", m->job_id);
            sluice__envelope__free_unpacked(env, NULL);
            return;
        }
    tm_planning *x = sl_calloc(1, sizeof *x);
    x->session = m->session;
    x->attempt = m->attempt;
    x->next = n->planning;
    n->planning = x;
    tm_plan *p = sl_calloc(1, sizeof *p);
    p->env = env;
    p->qm.type = TM_PLAN_DEPLOY;
    if (sl_queue_push(n->plans, &p->qm) != SL_OK) plan_free(p); /* stopping */
}

/* ---- building ------------------------------------------------------------ */

static void deploy_build(tm_net *n, tm_plan *p)
{
    const Sluice__DeployJob *m = p->env->deploy;
    char err[1024];
    sl_jobgraph *g = p->g;
    tm_deploy *d = sl_calloc(1, sizeof *d);
    pthread_mutex_init(&d->collect_mu, NULL);
    pthread_cond_init(&d->collect_cv, NULL);
    d->collect_credit = (int)SL_MIN(m->collect_credit, SL_COLLECT_CREDIT);
    d->collect_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); /* -1: sinks fall back to polling */
    memcpy(d->job_id, m->job_id, 32);
    d->session = m->session;
    d->attempt = m->attempt;
    d->g = g;
    p->g = NULL;
    d->net = n;
    d->nslots = (int)m->n_slots;
    d->buffer_timeout_ms = m->buffer_timeout_ms;
    d->checkpointing = m->checkpointing;
    d->exactly_once = m->exactly_once;
    if (m->restore_dir && *m->restore_dir) {
        d->restore_dir = sl_strdup(p->restore_local ? p->restore_local : m->restore_dir);
        d->restore_copy = p->restore_copy; /* removed with the deployment */
        p->restore_copy = NULL;
        d->restore = p->restore;
        p->restore = NULL;
    }
    d->seg_size = (uint32_t)sl_config_int(n->conf, "taskmanager.memory.segment-size");
    d->buffers_per_channel = (int)sl_config_int(n->conf, "taskmanager.network.memory.buffers-per-channel");
    d->floating_per_gate = (int)sl_config_int(n->conf, "taskmanager.network.memory.floating-buffers-per-gate");
    if (d->buffers_per_channel < 1) d->buffers_per_channel = 1;
    d->latency_ms = sl_config_int(n->conf, "metrics.latency.interval");
    const char *own_lat = sl_jobgraph_conf(g, "metrics.latency.interval");
    if (own_lat) {
        sl_config *jc = sl_config_new(); /* checked when the job was submitted */
        if (sl_config_set(jc, "metrics.latency.interval", own_lat, NULL, NULL, 0) == SL_OK)
            d->latency_ms = sl_config_int(jc, "metrics.latency.interval");
        sl_config_destroy(jc);
    }
    d->debloat = sl_config_bool(n->conf, "taskmanager.network.memory.buffer-debloat.enabled");
    /* tasks: every chain's subtask for each local slot */
    int ntasks = 0;
    for (size_t s = 0; s < m->n_local_slots; s++)
        for (int c = 0; c < g->nchains; c++)
            if (m->local_slots[s] < (uint32_t)g->chains[c].parallelism) ntasks++;
    d->tasks = sl_calloc((size_t)(ntasks ? ntasks : 1), sizeof(tm_task));
    for (size_t s = 0; s < m->n_local_slots; s++)
        for (int c = 0; c < g->nchains; c++) {
            if (m->local_slots[s] >= (uint32_t)g->chains[c].parallelism) continue;
            tm_task *t = &d->tasks[d->ntasks++];
            t->d = d;
            t->chain = c;
            t->subtask = (int)m->local_slots[s];
            t->hb_at_ns = sl_mono_ns(); /* the first heartbeat covers the time since now */
            const sl_vertex *head = &g->v[g->chains[c].vertices[0]];
            int nchan = 0;
            for (int k = 0; k < head->nin; k++) {
                const sl_edge *e = &g->e[head->in_edges[k]];
                nchan += e->strategy == SL_PART_FORWARD ? 1 : g->v[e->from].parallelism;
            }
            t->ngate_chan = nchan;
            t->chan_input = sl_calloc((size_t)(nchan ? nchan : 1), sizeof(int));
            /* per-operator figures, and the heartbeat's records of them */
            int nops = g->chains[c].n;
            t->m.nops = nops;
            t->m.ops = sl_calloc((size_t)nops, sizeof *t->m.ops);
            t->hb_ops = sl_calloc((size_t)nops, sizeof *t->hb_ops);
            t->hb_op_ptrs = sl_calloc((size_t)nops, sizeof *t->hb_op_ptrs);
            for (int k = 0; k < nops; k++) {
                t->m.ops[k].in_wm = t->m.ops[k].out_wm = INT64_MIN;
                sluice__operator_metrics__init(&t->hb_ops[k]);
                t->hb_op_ptrs[k] = &t->hb_ops[k];
            }
            tm_gate_init(&t->gate, nchan);
            if (d->latency_ms > 0)
                t->lat = tm_latency_new(
                    tm_latency_granularity(sl_config_str(n->conf, "metrics.latency.granularity")),
                    (int)sl_config_int(n->conf, "metrics.latency.history-size"));
            if (d->debloat && nchan) t->debloat = tm_debloat_new(n->conf, d->seg_size);
            tm_exchange_build_task(t, err, sizeof err);
        }
    tm_slot_loc *locs = sl_calloc(m->n_slots, sizeof *locs);
    for (size_t s = 0; s < m->n_slots; s++) {
        locs[s].tm_id = m->slots[s]->tm_id;
        locs[s].host = m->slots[s]->host;
        locs[s].data_port = (int)m->slots[s]->data_port;
    }
    d->next = n->deploys;
    n->deploys = d;
    sl_info(TAG, "deploying job %s attempt %u: %d task%s", d->job_id, d->attempt, d->ntasks,
            d->ntasks == 1 ? "" : "s");
    tm_exchange_wire(n, d, locs, err, sizeof err);
    free(locs);
    tm_net_connect_peers(n, d);
    for (int i = 0; i < d->ntasks; i++) {
        d->running_tasks++;
        if (tm_task_start(&d->tasks[i], err, sizeof err) != SL_OK) {
            d->running_tasks--;
            tm_net_report_direct(n, d->job_id, d->attempt, d->tasks[i].chain, d->tasks[i].subtask,
                                 SLUICE__TASK_STATE__TASK_FAILED, err);
        }
    }
    tm_net_flush_peers(n);
}

/* Every subtask's slot is named (the message comes from outside). */
static int slots_cover(const sl_jobgraph *g, const Sluice__DeployJob *m)
{
    for (int c = 0; c < g->nchains; c++)
        if ((size_t)g->chains[c].parallelism > m->n_slots) return 0;
    for (size_t s = 0; s < m->n_local_slots; s++)
        if (m->local_slots[s] >= m->n_slots) return 0;
    return 1;
}

void tm_deploy_planned(tm_net *n, sl_qmsg *msg)
{
    tm_plan *p = SL_QMSG_OF(msg, tm_plan, qm);
    const Sluice__DeployJob *m = p->env->deploy;
    int cancelled = 1; /* not planning any more: the JobManager went away */
    for (tm_planning **pp = &n->planning; *pp; pp = &(*pp)->next)
        if ((*pp)->session == m->session && (*pp)->attempt == m->attempt) {
            tm_planning *x = *pp;
            cancelled = x->cancelled;
            *pp = x->next;
            free(x);
            break;
        }
    if (n->stopping) {
        /* shutting down: dropped without a word, as the worker's queue */
    } else if (cancelled) {
        sl_info(TAG, "job %s attempt %u was cancelled while it was being planned", m->job_id,
                m->attempt);
    } else if (p->g && !p->err[0] && !slots_cover(p->g, m)) {
        snprintf(p->err, sizeof p->err, "the deployment names %zu slots, fewer than the job's parallelism",
                 m->n_slots);
        sl_error(TAG, "cannot deploy job %s: %s", m->job_id, p->err);
        tm_net_report_direct(n, m->job_id, m->attempt, 0, 0, SLUICE__TASK_STATE__TASK_FAILED, p->err);
    } else if (!p->g || p->err[0]) {
        sl_error(TAG, "cannot deploy job %s: %s", m->job_id, p->err);
        tm_net_report_direct(n, m->job_id, m->attempt, 0, 0, SLUICE__TASK_STATE__TASK_FAILED, p->err);
    } else {
        deploy_build(n, p);
    }
    plan_free(p);
}

/* ---- lookup, cancel, free ------------------------------------------------- */

tm_deploy *tm_deploy_find(tm_net *n, uint64_t session, uint32_t attempt)
{
    for (tm_deploy *d = n->deploys; d; d = d->next)
        if (d->session == session && d->attempt == attempt) return d;
    return NULL;
}

int tm_deploy_ended(const tm_net *n, uint64_t session, uint32_t attempt)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(n->ended); i++)
        if (n->ended[i].attempt == attempt && n->ended[i].session == session && attempt) return 1;
    return 0;
}

tm_task *tm_deploy_task(tm_deploy *d, int chain, int subtask)
{
    for (int i = 0; i < d->ntasks; i++)
        if (d->tasks[i].chain == chain && d->tasks[i].subtask == subtask) return &d->tasks[i];
    return NULL;
}

void tm_deploy_cancel(tm_net *n, tm_deploy *d)
{
    if (d->cancelled) return;
    __atomic_store_n(&d->cancelled, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < d->ntasks; i++) {
        tm_task *t = &d->tasks[i];
        pthread_mutex_lock(&t->gate.mu);
        t->gate.closed = 1;
        pthread_cond_broadcast(&t->gate.cv);
        pthread_mutex_unlock(&t->gate.mu);
        if (t->out_pool) sl_pool_cancel(t->out_pool);
        tm_task_wake(t);
    }
    SL_UNUSED(n);
}

void tm_deploy_cancel_attempt(tm_net *n, uint64_t session, const char *job_id, uint32_t attempt)
{
    tm_deploy *d = tm_deploy_find(n, session, attempt);
    if (d && job_id && strcmp(d->job_id, job_id) == 0) tm_deploy_cancel(n, d);
    for (tm_planning *x = n->planning; x; x = x->next)
        if (x->session == session && x->attempt == attempt) x->cancelled = 1;
}

void tm_deploy_cancel_all(tm_net *n)
{
    for (tm_deploy *d = n->deploys; d; d = d->next) tm_deploy_cancel(n, d);
    for (tm_planning *x = n->planning; x; x = x->next) x->cancelled = 1;
}

void tm_deploy_restored(tm_deploy *d)
{
    if (__atomic_add_fetch(&d->restored, 1, __ATOMIC_ACQ_REL) == d->ntasks && d->restore_copy)
        remove_copy(d->restore_copy); /* every task has read what it needs */
}

void tm_deploy_free(tm_net *n, tm_deploy *d)
{
    for (int i = 0; i < d->ntasks; i++)
        if (d->tasks[i].started) pthread_join(d->tasks[i].thread, NULL);
    for (tm_deploy **pp = &n->deploys; *pp; pp = &(*pp)->next)
        if (*pp == d) { *pp = d->next; break; }
    tm_exchange_unwire(n, d);
    n->ended[n->ended_next].session = d->session;
    n->ended[n->ended_next].attempt = d->attempt;
    n->ended_next = (n->ended_next + 1) % (int)SL_ARRAY_LEN(n->ended);
    for (int i = 0; i < d->ntasks; i++) {
        free(d->tasks[i].chan_input);
        free(d->tasks[i].m.ops);
        free(d->tasks[i].hb_ops);
        free(d->tasks[i].hb_op_ptrs);
        tm_latency_free(d->tasks[i].lat);
        tm_debloat_free(d->tasks[i].debloat);
    }
    free(d->tasks);
    sl_jobgraph_destroy(d->g);
    if (d->restore) sluice__snapshot_metadata__free_unpacked(d->restore, NULL);
    free(d->restore_dir);
    remove_copy(d->restore_copy);
    free(d->restore_copy);
    pthread_cond_destroy(&d->collect_cv);
    pthread_mutex_destroy(&d->collect_mu);
    if (d->collect_efd >= 0) close(d->collect_efd);
    free(d);
}

/* Free deployments whose threads have all ended and, unless cancelled,
 * whose last buffers (end of partition included) are on the wire: the
 * consumers elsewhere may still be granting the credit they wait for. */
void tm_deploy_reap(tm_net *n)
{
    n->reap_pending = 0;
    for (tm_deploy *d = n->deploys; d;) {
        tm_deploy *next = d->next;
        int alive = 0;
        for (int i = 0; i < d->ntasks; i++) {
            tm_task *t = &d->tasks[i];
            if (t->started && pthread_tryjoin_np(t->thread, NULL) == 0) {
                t->started = 0;
                t->joined = 1;
            }
            /* a thread that ended before the inbox brought its final report
             * (another task's exit started this reap): the report needs the
             * task for its last figures, so the deployment waits for it */
            if (t->started || (t->joined && !t->final_seen)) alive++;
        }
        if (!alive && (d->cancelled || tm_exchange_sends_drained(d))) {
            sl_info(TAG, "job %s attempt %u: all local tasks ended", d->job_id, d->attempt);
            __atomic_store_n(&d->cancelled, 1, __ATOMIC_RELAXED);
            tm_deploy_free(n, d);
        } else if (!alive) {
            n->reap_pending = 1; /* look again when credit arrives */
        }
        d = next;
    }
}

/* Fail every deployment that talks to peer p (its connection broke). */
void tm_deploy_fail_peer(tm_net *n, tm_peer *p, const char *why)
{
    for (tm_deploy *d = n->deploys; d; d = d->next) {
        if (d->cancelled || !tm_exchange_uses_peer(d, p)) continue;
        char msg[512];
        snprintf(msg, sizeof msg, "data connection to TaskManager %s failed: %s", p->id, why);
        sl_warn(TAG, "job %s: %s", d->job_id, msg);
        tm_task *t = &d->tasks[0];
        if (d->session == n->jm_session)
            tm_net_report_direct(n, d->job_id, d->attempt, t->chain, t->subtask,
                                 SLUICE__TASK_STATE__TASK_FAILED, msg);
        tm_deploy_cancel(n, d);
    }
}
