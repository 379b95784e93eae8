/*
 * checkpoint.c -- the checkpoint coordinator.
 *
 * Every execution.checkpointing.interval (after min-pause since the last
 * one ended, and once every task of the job runs or has finished) the
 * coordinator triggers checkpoint n at the TaskManagers that run the job.
 * Barriers then travel in-band from the sources still running; a task
 * whose inputs have all ended (its upstream finished) takes the trigger
 * itself, as Flink's checkpoints after tasks finish (FLIP-147) trigger the
 * first running tasks behind finished ones. Tasks that finished count as
 * acknowledged and _metadata records them finished, so a restored finished
 * source ends at once instead of reading its input again. A task that
 * finishes while n is in progress counts as finished in n. Every subtask
 * that runs snapshots when the barriers pass and
 * acknowledges with the handles of the state files it wrote into
 * <state.checkpoints.dir>/<job id>/chk-<n>/. When all subtasks have
 * acknowledged, the coordinator packs _metadata (sluice.SnapshotMetadata)
 * and hands it to the I/O worker, which writes it atomically (write, fsync,
 * rename) and answers with a JM_OP_CP_WRITTEN op; only then is the
 * checkpoint COMPLETED: the TaskManagers are told (two-phase-commit sinks
 * publish now), the scheduler is told (its next restart restores from it)
 * and checkpoints beyond state.checkpoints.num-retained are deleted, again
 * by the worker. A decline, a timeout or a failed write fails the
 * checkpoint, which is reported and counted; more than
 * tolerable-failed-checkpoints in a row are reported to the scheduler,
 * which fails or restarts the job -- the coordinator never changes a job's
 * state itself.
 *
 * Savepoints are checkpoints with their own directory
 * (savepoint-<6 hex of job id>-<12 hex>) that are never retained away. A
 * savepoint asked for while a checkpoint's _metadata is being written does
 * not wait for it: that checkpoint completes on its own when written.
 *
 * Runs on the loop thread (tick, acks, write results, REST triggers).
 */
#include <string.h>

#include "jm.h"
#include "store.h"
#include "ha.h"
#include "log.h"
#include "snapshot.h"
#include "snapshot_inc.h"
#include "snapshot.pb-c.h"

#define TAG "jm:cp"

static int job_tasks(const jm_job *job)
{
    int n = 0;
    for (int c = 0; c < job->g->nchains; c++) n += job->g->chains[c].parallelism;
    return n;
}

static int task_index(const jm_job *job, uint32_t chain, uint32_t subtask)
{
    if (chain >= (uint32_t)job->g->nchains || subtask >= (uint32_t)job->g->chains[chain].parallelism)
        return -1;
    int idx = 0;
    for (uint32_t c = 0; c < chain; c++) idx += job->g->chains[c].parallelism;
    return idx + (int)subtask;
}

void jm_cp_configure(jm *j)
{
    j->cp_retained = (int)sl_config_int(j->conf, "state.checkpoints.num-retained");
    j->cp_delete_on_cancel = strcmp(sl_config_str(j->conf, "execution.checkpointing.externalized-checkpoint-retention"),
                                    "RETAIN_ON_CANCELLATION") != 0;
    if (j->cp_retained < 1) j->cp_retained = 1;
    j->rescale_sp_retain = sl_config_bool(j->conf, "state.savepoints.rescale.retain");
    j->cp_history = (int)sl_config_int(j->conf, "web.checkpoints.history");
    j->cp_dir = sl_config_str(j->conf, "state.checkpoints.dir");
    if (!j->cp_dir || !*j->cp_dir) j->cp_dir = "/tmp/sluice-checkpoints";
    j->sp_dir = sl_config_str(j->conf, "state.savepoints.dir");
}

static void cp_destroy(jm_checkpoint *cp)
{
    if (!cp) return;
    for (int i = 0; i < cp->nhandles; i++) {
        jm_cp_handle *h = &cp->handles[i];
        free(h->file);
        for (size_t k = 0; k < h->nshared; k++) free(h->shared[k]);
        for (size_t k = 0; k < h->npriv; k++) free(h->priv[k]);
        free(h->shared);
        free(h->priv);
    }
    free(cp->handles);
    for (int i = 0; i < cp->nchans; i++) {
        free(cp->chans[i].head_uid);
        free(cp->chans[i].file);
    }
    free(cp->chans);
    free(cp->acked);
    free(cp->finished);
    free(cp->acks);
    free(cp->par);
    free(cp->dir);
    free(cp->failure);
    free(cp);
}

void jm_cp_free(jm_job *job)
{
    while (job->cps) {
        jm_checkpoint *cp = job->cps;
        job->cps = cp->next;
        if (cp == job->latest_completed) job->latest_completed = NULL;
        cp_destroy(cp);
    }
    cp_destroy(job->latest_completed);
    job->latest_completed = NULL;
    job->pending = NULL;
    sl_shared_refs_free(job->shared_refs);
    job->shared_refs = NULL;
    free(job->shared_dir);
    job->shared_dir = NULL;
    while (job->sp_ops) {
        jm_savepoint_op *op = job->sp_ops;
        job->sp_ops = op->next;
        free(op->location);
        free(op->failure);
        free(op);
    }
    free(job->restored_path);
    free(job->restore_dir);
}

static jm_savepoint_op *sp_op_find(jm_job *job, const char *rid)
{
    for (jm_savepoint_op *op = job->sp_ops; op; op = op->next)
        if (!strcmp(op->request_id, rid)) return op;
    return NULL;
}

static void notify(jm *j, jm_job *job, uint64_t id, int completed)
{
    jm_send_notify(j, job, id, completed);
}

/* Keep the history bounded: drop the oldest entries beyond the limit, but
 * never the latest completed checkpoint (restores need it). */
static void trim_history(jm *j, jm_job *job)
{
    int n = 0;
    jm_checkpoint **pp = &job->cps;
    while (*pp) {
        jm_checkpoint *cp = *pp;
        if (++n > SL_MAX(j->cp_history, j->cp_retained) && cp != job->latest_completed &&
            cp != job->pending && !cp->writing) {
            *pp = cp->next;
            cp_destroy(cp);
            continue;
        }
        pp = &cp->next;
    }
}

/* A completed checkpoint is retained: count its references to shared files. */
static void refs_add(jm_job *job, jm_checkpoint *cp)
{
    if (cp->refs_counted) return;
    if (!job->shared_refs) job->shared_refs = sl_shared_refs_new();
    for (int h = 0; h < cp->nhandles; h++)
        sl_shared_refs_add(job->shared_refs, cp->handles[h].shared, cp->handles[h].nshared);
    cp->refs_counted = 1;
}

/* A checkpoint is dropped: delete the shared files no retained checkpoint
 * needs any more. The next checkpoint can never reference one of them: an
 * SST file that is in no retained checkpoint was compacted away before the
 * latest one was taken, and its instance never writes that name again. */
static void refs_release(jm *j, jm_job *job, jm_checkpoint *cp)
{
    if (!cp->refs_counted) return;
    cp->refs_counted = 0;
    char *shared = sl_inc_shared_dir(cp->dir);
    for (int h = 0; h < cp->nhandles; h++) {
        size_t ndead = 0;
        char **dead = sl_shared_refs_release(job->shared_refs, cp->handles[h].shared,
                                             cp->handles[h].nshared, &ndead);
        for (size_t k = 0; k < ndead; k++) {
            char *path = sl_sprintf("%s/%s", shared, dead[k]);
            jm_io_unlink(j, path);
            free(path);
            free(dead[k]);
        }
        free(dead);
    }
    free(shared);
}

/* Delete completed checkpoints (not savepoints) beyond num-retained, and the
 * shared files that only they needed. */
static void retain(jm *j, jm_job *job)
{
    int kept = 0;
    for (jm_checkpoint *cp = job->cps; cp; cp = cp->next) {
        if (cp->status != CP_COMPLETED || cp->type != CP_CHECKPOINT || cp->discarded) continue;
        if (++kept <= j->cp_retained) continue;
        jm_io_remove(j, cp->dir);
        refs_release(j, job, cp);
        cp->discarded = 1;
    }
}

/* `counts`: the failure counts toward tolerable-failed-checkpoints. */
static void cp_fail(jm *j, jm_job *job, jm_checkpoint *cp, const char *why, int counts)
{
    cp->status = CP_FAILED;
    cp->writing = 0;
    cp->end_ms = sl_now_ms();
    free(cp->failure);
    cp->failure = sl_strdup(why);
    job->cp_failed++;
    if (job->pending == cp) job->pending = NULL;
    job->next_cp_mono_ms = SL_MAX(job->next_cp_mono_ms, sl_mono_ms() + SL_MAX(job->set.cp_min_pause_ms, 0));
    job->cp_pause_mono_ms = sl_mono_ms() + SL_MAX(job->set.cp_min_pause_ms, 0);
    sl_warn(TAG, "Checkpoint %llu of job %s failed: %s", (unsigned long long)cp->id, job->id, why);
    if (cp->request_id[0]) {
        jm_savepoint_op *op = sp_op_find(job, cp->request_id);
        if (op) {
            op->done = -1;
            op->failure = sl_strdup(why);
        }
    }
    if (job->state == JOB_RUNNING) notify(j, job, cp->id, 0);
    if (cp->type != CP_CHECKPOINT) jm_sched_on_sp_failed(j, job, cp->id, why);
    jm_io_remove(j, cp->dir); /* partial files; after its _metadata write, if one is queued */
    for (int c = 0; c < job->g->nchains; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++)
            if (job->tasks[c][i].state == T_RUNNING && job->tasks[c][i].end_of_input)
                jm_cp_on_end_of_input(j, job); /* it still waits for a final checkpoint */
    if (counts && cp->type == CP_CHECKPOINT && ++job->cp_failed_in_a_row > job->set.cp_tolerable &&
        job->state == JOB_RUNNING) {
        char reason[600];
        snprintf(reason, sizeof reason,
                 "Exceeded checkpoint tolerable failure threshold (%d): checkpoint %llu: %s",
                 job->set.cp_tolerable, (unsigned long long)cp->id, why);
        jm_sched_on_cp_failed(j, job, reason);
    }
}

/* The job's tasks stopped (finished, cancelled, failed, restarting): what
 * is in progress fails, including checkpoints whose _metadata is still
 * being written (their files go once the write is done). */
static void sweep_shared(jm *j, jm_job *job)
{
    if (!job->shared_dir || job->shared_untracked) return;
    size_t n = job->shared_refs ? sl_shared_refs_size(job->shared_refs) : 0;
    const char **keep = sl_calloc(n + 1, sizeof *keep);
    for (size_t i = 0; i < n; i++) keep[i] = sl_shared_refs_name(job->shared_refs, i);
    jm_io_sweep(j, job->shared_dir, keep, n);
    free(keep);
}

void jm_cp_drop_rescale_savepoint(jm *j, jm_job *job)
{
    if (!job->rescale_sp) return;
    if (!j->rescale_sp_retain) {
        jm_io_remove(j, job->rescale_sp);
        for (jm_checkpoint *cp = job->cps; cp; cp = cp->next)
            if (cp->id == job->rescale_sp_id && cp->type != CP_CHECKPOINT) cp->discarded = 1;
        sl_info(TAG, "Job %s: the savepoint %llu of its rescale is deleted (%s).", job->id,
                (unsigned long long)job->rescale_sp_id, job->rescale_sp);
    }
    free(job->rescale_sp);
    job->rescale_sp = NULL;
}

void jm_cp_job_canceled(jm *j, jm_job *job)
{
    jm_cp_drop_rescale_savepoint(j, job);
    if (!j->cp_delete_on_cancel) return;
    for (jm_checkpoint *cp = job->cps; cp; cp = cp->next) {
        if (cp->status != CP_COMPLETED || cp->type != CP_CHECKPOINT || cp->discarded) continue;
        jm_io_remove(j, cp->dir);
        refs_release(j, job, cp);
        cp->discarded = 1;
    }
    jm_checkpoint *lc = job->latest_completed;
    if (lc && !lc->discarded && lc->type == CP_CHECKPOINT) {
        jm_io_remove(j, lc->dir);
        refs_release(j, job, lc);
        lc->discarded = 1;
    }
    sweep_shared(j, job); /* what is left: nothing a checkpoint references */
}

void jm_cp_job_ended(jm *j, jm_job *job)
{
    for (jm_checkpoint *cp = job->cps; cp; cp = cp->next) {
        if (cp->status != CP_IN_PROGRESS) continue;
        int was_writing = cp->writing;
        cp->status = CP_FAILED;
        cp->writing = 0;
        cp->end_ms = sl_now_ms();
        free(cp->failure);
        cp->failure = sl_strdup("the job's tasks stopped before it completed");
        job->cp_failed++;
        SL_UNUSED(was_writing);
        jm_io_remove(j, cp->dir); /* what its subtasks wrote; after its _metadata write, if queued */
        if (cp->type != CP_CHECKPOINT) jm_sched_on_sp_failed(j, job, cp->id, cp->failure);
        if (cp->request_id[0]) {
            jm_savepoint_op *op = sp_op_find(job, cp->request_id);
            if (op && !op->done) {
                op->done = -1;
                free(op->failure);
                op->failure = sl_strdup(cp->failure);
            }
        }
    }
    job->pending = NULL;
    /* no checkpoint of this attempt can come any more, and the next attempt's
     * RocksDB instances write new names: shared files no retained checkpoint
     * references (uploaded by ones that failed or stopped) go */
    sweep_shared(j, job);
}

char *jm_savepoint_dir(jm *j, jm_job *job, const char *target)
{
    const char *base = target && *target ? target : j->sp_dir;
    if (!base || !*base) return NULL;
    if (!strncmp(base, "file://", 7)) base += 7;
    else if (!strncmp(base, "file:", 5)) base += 5;
    char hex[13];
    sl_random_hex(hex, 12);
    return sl_sprintf("%s/savepoint-%.6s-%s", base, job->id, hex);
}

jm_checkpoint *jm_cp_trigger(jm *j, jm_job *job, jm_cp_type type, const char *dir, int stop,
                             int drain, char *err, size_t errlen)
{
    if (job->state != JOB_RUNNING) {
        sl_seterr(err, errlen, "job %s is %s, not RUNNING", job->id, jm_job_state_name(job->state));
        return NULL;
    }
    if (!jm_ha_may_act(j)) {
        sl_seterr(err, errlen, "this JobManager is not the confirmed leader (docs/HA.md)");
        return NULL;
    }
    if (job->pending && (type == CP_CHECKPOINT || job->pending->type != CP_CHECKPOINT)) {
        sl_seterr(err, errlen, "%s %llu of job %s is still in progress",
                  job->pending->type == CP_CHECKPOINT ? "checkpoint" : "savepoint",
                  (unsigned long long)job->pending->id, job->id);
        return NULL;
    }
    for (int c = 0; c < job->g->nchains; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++)
            if (job->tasks[c][i].state != T_RUNNING && job->tasks[c][i].state != T_FINISHED) {
                sl_seterr(err, errlen, "not all tasks of job %s are running yet", job->id);
                return NULL;
            }
    if (job->pending && job->pending->writing) {
        /* all acknowledged, only its _metadata is still being written: it
         * completes on its own (jm_cp_on_written finds it in the history) */
        job->pending = NULL;
    } else if (job->pending) {
        /* a savepoint is asked for: the periodic checkpoint in flight gives
         * way (its barriers are overtaken by the savepoint's) */
        jm_checkpoint *old = job->pending;
        cp_fail(j, job, old, "superseded by a savepoint", 0);
    }
    uint64_t id;
    if (jm_ha_next_checkpoint_id(j, job, &id, err, errlen) != SL_OK) return NULL;
    jm_checkpoint *cp = sl_calloc(1, sizeof *cp);
    cp->id = id;
    cp->type = type;
    cp->status = CP_IN_PROGRESS;
    cp->trigger_ms = sl_now_ms();
    cp->trigger_mono_ms = sl_mono_ms();
    cp->num_subtasks = job_tasks(job);
    cp->par = sl_calloc((size_t)job->g->nchains, sizeof *cp->par);
    for (int c = 0; c < job->g->nchains; c++) cp->par[c] = job->g->chains[c].parallelism;
    cp->acked = sl_calloc((size_t)cp->num_subtasks, 1);
    cp->finished = sl_calloc((size_t)cp->num_subtasks, 1);
    cp->acks = sl_calloc((size_t)cp->num_subtasks, sizeof *cp->acks);
    for (int c = 0, idx = 0; c < job->g->nchains; c++)
        for (int i = 0; i < job->g->chains[c].parallelism; i++, idx++)
            if (job->tasks[c][i].state == T_FINISHED) {
                cp->acked[idx] = cp->finished[idx] = 1;
                cp->num_acked++;
            }
    cp->stop = stop;
    cp->drain = drain;
    cp->dir = dir ? sl_strdup(dir) : sl_sprintf("%s/%s/chk-%llu", j->cp_dir, job->id, (unsigned long long)cp->id);
    cp->next = job->cps;
    job->cps = cp;
    job->pending = cp;
    job->cp_total++;
    jm_send_trigger(j, job, cp);
    sl_debug(TAG, "Triggering checkpoint %llu of job %s", (unsigned long long)cp->id, job->id);
    trim_history(j, job);
    return cp;
}

/* All subtasks acknowledged: pack _metadata and have the I/O worker write
 * it; jm_cp_on_written completes the checkpoint. */
static void cp_write(jm *j, jm_job *job, jm_checkpoint *cp)
{
    const sl_jobgraph *g = job->g;
    Sluice__SnapshotMetadata md = SLUICE__SNAPSHOT_METADATA__INIT;
    md.format_version = SL_SNAPSHOT_FORMAT_VERSION;
    md.job_id = job->id;
    md.job_name = g->name;
    md.checkpoint_id = cp->id;
    md.timestamp = cp->trigger_ms;
    md.is_savepoint = cp->type != CP_CHECKPOINT;
    md.max_parallelism = (uint32_t)g->max_parallelism;
    md.graph_json = job->graph_json;
    Sluice__OperatorState *ops = sl_calloc((size_t)g->nv, sizeof *ops);
    Sluice__OperatorState **opp = sl_calloc((size_t)g->nv, sizeof *opp);
    /* finished subtasks, per vertex: every vertex of a finished task's chain */
    char **fin = sl_calloc((size_t)g->nv, sizeof *fin);
    int nfin = 0;
    for (int c = 0, idx = 0; c < g->nchains; c++)
        for (int i = 0; i < g->chains[c].parallelism; i++, idx++) {
            if (!cp->finished[idx]) continue;
            for (int k = 0; k < g->chains[c].n; k++) {
                int v = g->chains[c].vertices[k];
                if (!fin[v]) fin[v] = sl_calloc((size_t)g->v[v].parallelism, 1);
                fin[v][i] = 1;
                nfin++;
            }
        }
    size_t nslots = (size_t)(cp->nhandles + nfin) + 1;
    Sluice__SubtaskState *subs = sl_calloc(nslots, sizeof *subs);
    Sluice__SubtaskState **subp = sl_calloc(nslots, sizeof *subp);
    int nsub = 0;
    for (int v = 0; v < g->nv; v++) {
        int first = nsub, keyed = 0;
        for (int h = 0; h < cp->nhandles; h++) {
            jm_cp_handle *hd = &cp->handles[h];
            if (hd->vertex != v) continue;
            Sluice__SubtaskState *ss = &subs[nsub];
            sluice__subtask_state__init(ss);
            ss->subtask = (uint32_t)hd->subtask;
            ss->file = hd->file;
            ss->kg_first = (uint32_t)hd->kg_first;
            ss->kg_last = (uint32_t)hd->kg_last;
            ss->size = hd->size;
            ss->has_opstate = hd->has_opstate;
            ss->shared_files = hd->shared;
            ss->n_shared_files = hd->nshared;
            ss->private_files = hd->priv;
            ss->n_private_files = hd->npriv;
            ss->checkpointed_size = hd->checkpointed_size;
            keyed |= hd->keyed;
            subp[nsub++] = ss;
        }
        for (int i = 0; i < g->v[v].parallelism; i++) {
            if (!fin[v] || !fin[v][i]) continue;
            Sluice__SubtaskState *ss = &subs[nsub];
            sluice__subtask_state__init(ss);
            ss->subtask = (uint32_t)i;
            ss->file = (char *)"";
            ss->finished = 1;
            subp[nsub++] = ss;
        }
        if (nsub == first) continue;
        Sluice__OperatorState *os = &ops[md.n_operators];
        sluice__operator_state__init(os);
        os->uid = g->v[v].uid;
        os->type = g->v[v].type;
        os->parallelism = (uint32_t)g->v[v].parallelism;
        os->keyed = keyed;
        os->n_subtasks = (size_t)(nsub - first);
        os->subtasks = &subp[first];
        opp[md.n_operators++] = os;
    }
    md.operators = opp;
    md.unaligned = cp->unaligned;
    Sluice__ChannelState *css = sl_calloc((size_t)cp->nchans + 1, sizeof *css);
    Sluice__ChannelState **csp = sl_calloc((size_t)cp->nchans + 1, sizeof *csp);
    for (int i = 0; i < cp->nchans; i++) {
        sluice__channel_state__init(&css[i]);
        css[i].head_uid = cp->chans[i].head_uid;
        css[i].subtask = (uint32_t)cp->chans[i].subtask;
        css[i].file = cp->chans[i].file;
        css[i].size = cp->chans[i].size;
        css[i].parallelism = (uint32_t)cp->chans[i].parallelism;
        csp[i] = &css[i];
    }
    md.channel_states = csp;
    md.n_channel_states = (size_t)cp->nchans;
    size_t len = sluice__snapshot_metadata__get_packed_size(&md);
    uint8_t *buf = sl_malloc(len ? len : 1);
    sluice__snapshot_metadata__pack(&md, buf);
    free(ops);
    free(opp);
    free(css);
    free(csp);
    free(subs);
    free(subp);
    for (int v = 0; v < g->nv; v++) free(fin[v]);
    free(fin);
    jm_io_job *io = sl_calloc(1, sizeof *io);
    io->qm.type = JM_IO_WRITE_METADATA;
    io->dir = sl_strdup(cp->dir);
    io->data = buf;
    io->len = len;
    memcpy(io->job_id, job->id, sizeof io->job_id);
    io->attempt = job->attempt;
    io->cp_id = cp->id;
    cp->writing = 1;
    jm_io_submit(j, io);
}

/* The I/O worker wrote (or failed to write) a checkpoint's _metadata. */
void jm_cp_on_written(jm *j, const jm_op *op)
{
    jm_job *job = jm_job_find(j, op->u.written.job_id);
    jm_checkpoint *cp = NULL;
    if (job && job->attempt == op->u.written.attempt)
        for (jm_checkpoint *x = job->cps; x; x = x->next)
            if (x->id == op->u.written.cp_id) cp = x;
    if (!cp || cp->status != CP_IN_PROGRESS || !cp->writing)
        return; /* abandoned while it was written (its files are being removed) */
    cp->writing = 0;
    if (op->u.written.rc != SL_OK) {
        char why[500];
        snprintf(why, sizeof why, "writing _metadata: %s", op->u.written.err);
        cp_fail(j, job, cp, why, 1);
        return;
    }
    char herr[400];
    if (jm_ha_checkpoint_completed(j, job, cp->id, cp->dir, herr, sizeof herr) != SL_OK) {
        char why[500];
        snprintf(why, sizeof why, "recording it in ZooKeeper: %s", herr);
        cp_fail(j, job, cp, why, 0); /* not the job's fault: it does not count */
        return;
    }
    cp->status = CP_COMPLETED;
    cp->end_ms = sl_now_ms();
    if (job->pending == cp) job->pending = NULL;
    job->cp_completed++;
    job->cp_failed_in_a_row = 0;
    job->next_cp_mono_ms = SL_MAX(job->next_cp_mono_ms, sl_mono_ms() + SL_MAX(job->set.cp_min_pause_ms, 0));
    job->cp_pause_mono_ms = sl_mono_ms() + SL_MAX(job->set.cp_min_pause_ms, 0);
    if (cp->type == CP_CHECKPOINT) {
        jm_checkpoint *old = job->latest_completed;
        job->latest_completed = cp;
        /* the previous latest may have left the history list already */
        int listed = 0;
        for (jm_checkpoint *x = job->cps; x; x = x->next) listed |= x == old;
        if (old && !listed) cp_destroy(old);
    }
    sl_info(TAG, "Completed %s %llu for job %s (%llu bytes, %llu written, %lld ms).",
            cp->type == CP_CHECKPOINT ? "checkpoint" : "savepoint", (unsigned long long)cp->id,
            job->id, (unsigned long long)cp->state_size, (unsigned long long)cp->checkpointed_size,
            (long long)(cp->end_ms - cp->trigger_ms));
    if (cp->request_id[0]) {
        jm_savepoint_op *sop = sp_op_find(job, cp->request_id);
        if (sop) {
            sop->done = 1;
            sop->location = sl_store_uri(cp->dir);
        }
    }
    notify(j, job, cp->id, 1);
    jm_sched_on_cp_completed(j, job, cp);
    if (cp->type == CP_CHECKPOINT) refs_add(job, cp); /* before retain releases older ones */
    retain(j, job);
    trim_history(j, job);
}

void jm_cp_on_ack(jm *j, const Sluice__AcknowledgeCheckpoint *a)
{
    jm_job *job = a->job_id ? jm_job_find(j, a->job_id) : NULL;
    if (job && (!job->pending || job->pending->id != a->checkpoint_id)) {
        /* late: the checkpoint ended already. If it failed, this subtask
         * wrote its files after the directory was removed: remove it again,
         * so a failed checkpoint leaves nothing behind. */
        int failed = 0;
        for (jm_checkpoint *cp = job->cps; cp; cp = cp->next)
            if (cp->id == a->checkpoint_id && cp->status == CP_FAILED) {
                jm_io_remove(j, cp->dir);
                failed = 1;
            }
        /* and the shared files it uploaded after the job's last sweep: once
         * the job has ended no checkpoint can take them up any more (while it
         * runs, the next one might, so they wait for the sweep at its end) */
        int ended = job->state == JOB_CANCELED || job->state == JOB_FINISHED || job->state == JOB_FAILED;
        if (failed && ended) sweep_shared(j, job); /* an ack or a decline: either may have uploaded */
        return;
    }
    if (!job || job->attempt != a->attempt || job->pending->writing)
        return; /* late: the checkpoint ended already */
    jm_checkpoint *cp = job->pending;
    int idx = task_index(job, a->chain, a->subtask);
    if (idx < 0 || cp->acked[idx]) return; /* twice, or it finished before its ack came */
    if (a->error && *a->error) {
        char why[1300];
        const sl_chain *ch = &job->g->chains[a->chain];
        snprintf(why, sizeof why, "%s (%u/%d) declined: %s", ch->name, a->subtask + 1,
                 ch->parallelism, a->error);
        cp_fail(j, job, cp, why, 1);
        return;
    }
    cp->acked[idx] = 1;
    job->tasks[a->chain][a->subtask].last_alignment_ns = a->alignment_ns;
    job->tasks[a->chain][a->subtask].last_start_delay_ns = a->start_delay_ns;
    cp->num_acked++;
    cp->latest_ack_ms = sl_now_ms();
    if (a->alignment_ns > cp->max_alignment_ns) cp->max_alignment_ns = a->alignment_ns;
    if (a->sync_ns > cp->max_sync_ns) cp->max_sync_ns = a->sync_ns;
    if (a->async_ns > cp->max_async_ns) cp->max_async_ns = a->async_ns;
    jm_cp_ack *ack = &cp->acks[idx];
    ack->ack_ms = cp->latest_ack_ms;
    ack->alignment_ns = a->alignment_ns;
    ack->sync_ns = a->sync_ns;
    ack->async_ns = a->async_ns;
    ack->start_delay_ns = a->start_delay_ns;
    for (size_t i = 0; i < a->n_handles; i++) ack->state_size += a->handles[i]->size;
    ack->unaligned = a->unaligned;
    ack->persisted = a->persisted_bytes;
    ack->processed = a->processed_bytes;
    cp->unaligned |= a->unaligned;
    cp->persisted += a->persisted_bytes;
    cp->processed += a->processed_bytes;
    if (a->channel_file && *a->channel_file && a->head_uid) {
        cp->chans = sl_realloc(cp->chans, sizeof *cp->chans * (size_t)(cp->nchans + 1));
        jm_cp_chan *ch = &cp->chans[cp->nchans++];
        ch->head_uid = sl_strdup(a->head_uid);
        ch->subtask = (int)a->subtask;
        ch->parallelism = a->chain < (uint32_t)job->g->nchains ? cp->par[a->chain] : 0;
        ch->file = sl_strdup(a->channel_file);
        ch->size = a->channel_size;
        cp->state_size += ch->size;
        cp->checkpointed_size += ch->size;
        ack->state_size += ch->size;
    }
    for (size_t i = 0; i < a->n_handles; i++) {
        const Sluice__OperatorSubtaskHandle *h = a->handles[i];
        int v = -1;
        for (int q = 0; q < job->g->nv; q++)
            if (h->uid && !strcmp(job->g->v[q].uid, h->uid)) v = q;
        if (v < 0 || !h->file) continue;
        cp->handles = sl_realloc(cp->handles, sizeof *cp->handles * (size_t)(cp->nhandles + 1));
        jm_cp_handle *hd = &cp->handles[cp->nhandles++];
        hd->vertex = v;
        hd->subtask = (int)a->subtask;
        hd->file = sl_strdup(h->file);
        hd->kg_first = (int)h->kg_first;
        hd->kg_last = (int)h->kg_last;
        hd->size = h->size;
        hd->keyed = h->keyed;
        hd->has_opstate = h->has_opstate;
        hd->nshared = h->n_shared_files;
        hd->shared = hd->nshared ? sl_calloc(hd->nshared, sizeof *hd->shared) : NULL;
        for (size_t k = 0; k < hd->nshared; k++) hd->shared[k] = sl_strdup(h->shared_files[k]);
        hd->npriv = h->n_private_files;
        hd->priv = hd->npriv ? sl_calloc(hd->npriv, sizeof *hd->priv) : NULL;
        for (size_t k = 0; k < hd->npriv; k++) hd->priv[k] = sl_strdup(h->private_files[k]);
        hd->checkpointed_size = h->checkpointed_size;
        if (hd->nshared && !job->shared_dir) job->shared_dir = sl_inc_shared_dir(cp->dir);
        cp->state_size += h->size;
        cp->checkpointed_size += h->checkpointed_size;
    }
    if (cp->num_acked == cp->num_subtasks) {
        if (jm_ha_may_act(j)) cp_write(j, job, cp);
        else cp_fail(j, job, cp, "this JobManager is not the confirmed leader", 0);
    }
}

/* A task of a running job finished: while a checkpoint is in progress
 * that it has not acknowledged, it counts as finished there (it took part
 * in an earlier checkpoint that completed after its end of input, which
 * committed its output; its state is needed no more). */
void jm_cp_on_task_finished(jm *j, jm_job *job, uint32_t chain, uint32_t subtask)
{
    jm_checkpoint *cp = job->pending;
    if (!cp || cp->writing) return;
    int idx = task_index(job, chain, subtask);
    if (idx < 0 || cp->acked[idx]) return;
    cp->acked[idx] = cp->finished[idx] = 1;
    cp->num_acked++;
    if (cp->num_acked == cp->num_subtasks) cp_write(j, job, cp);
}

/* A task's input ended and it waits for a final checkpoint: the next
 * checkpoint comes after min-pause rather than after the interval (with
 * execution.checkpointing.interval an hour, a bounded job would otherwise
 * wait that long to finish). One in progress may already be its final one
 * (if it was triggered after the task's end); if not, this asks for the
 * one after it. */
void jm_cp_on_end_of_input(jm *j, jm_job *job)
{
    if (job->set.cp_interval_ms > 0 && job->state == JOB_RUNNING) job->final_cp_wanted = 1;
}

/* The subtasks of cp that have not acknowledged it, "name (i/p), ..." (the
 * first four, then how many more), into out[cap]: where a stuck checkpoint
 * waits. cp's arrays are laid out by its parallelisms (cp->par). */
static void missing_acks(const jm_job *job, const jm_checkpoint *cp, char *out, size_t cap)
{
    size_t len = 0;
    int shown = 0, more = 0;
    out[0] = '\0';
    for (int c = 0, idx = 0; c < job->g->nchains; c++)
        for (int i = 0; i < cp->par[c]; i++, idx++) {
            if (cp->acked[idx]) continue;
            if (shown == 4) { more++; continue; }
            int n = snprintf(out + len, cap - len, "%s%s (%d/%d)", shown ? ", " : "", job->g->chains[c].name,
                             i + 1, cp->par[c]);
            if (n < 0 || (size_t)n >= cap - len) return;
            len += (size_t)n;
            shown++;
        }
    if (more) snprintf(out + len, cap - len, " and %d more", more);
}

void jm_cp_tick(jm *j)
{
    int64_t now = sl_mono_ms();
    for (jm_job *job = j->jobs; job; job = job->next) {
        if (job->state != JOB_RUNNING) continue;
        jm_checkpoint *cp = job->pending;
        if (cp && !cp->writing && now - cp->trigger_mono_ms > job->set.cp_timeout_ms) {
            char why[700];
            int len = snprintf(why, sizeof why, "Checkpoint expired before completing (timeout %lld ms, %d of %d subtasks "
                               "acknowledged; not acknowledged: ", (long long)job->set.cp_timeout_ms, cp->num_acked,
                               cp->num_subtasks);
            missing_acks(job, cp, why + len, sizeof why - (size_t)len - 1);
            strcat(why, ")");
            cp_fail(j, job, cp, why, 1);
            continue;
        }
        if (job->set.cp_interval_ms <= 0 || job->pending) continue;
        int final = job->final_cp_wanted && now >= job->cp_pause_mono_ms;
        if (!final && now < job->next_cp_mono_ms) continue;
        char err[200];
        if (jm_cp_trigger(j, job, CP_CHECKPOINT, NULL, 0, 0, err, sizeof err)) {
            job->next_cp_mono_ms = now + job->set.cp_interval_ms;
            job->final_cp_wanted = 0;
        }
    }
}
