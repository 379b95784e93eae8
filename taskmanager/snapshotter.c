/*
 * snapshotter.c -- the TaskManager's snapshot writer thread.
 *
 * At a checkpoint barrier a task takes only the cheap, synchronous part of
 * its snapshot on its own thread -- a copy-on-write view of its keyed state,
 * a copy of its timers, its operators' state blobs -- and submits it here.
 * This thread writes each operator's state file into the snapshot
 * directory (sl_snapw_*: temp file, fsync, rename), releases the views,
 * and hands the finished job to the network thread, which acknowledges it
 * to the JobManager. Jobs are written in submission order, one at a time,
 * so the disk sees one sequential writer.
 *
 * A snapshot directory on S3 (s3://, core/store.h) is written the same way
 * into a local staging directory under taskmanager.tmp.dirs, and each file
 * is then uploaded from there by this thread and removed; the incremental
 * RocksDB files go straight from the local RocksDB checkpoint. The task
 * threads never wait for the network: a slow or failing server delays or
 * declines the checkpoint, with the upload's error as the reason.
 *
 * Jobs arrive on tm_net.snaps (an sl_queue, TM_SNAP_WRITE) and leave on the
 * network thread's inbox (TM_OP_SNAPSHOT_WRITTEN), the same sl_qmsg moving
 * from one queue to the next. The queue is unbounded: it holds one job per
 * task and checkpoint, and checkpoints run one at a time.
 */
#include <string.h>
#include <unistd.h>

#include "tm.h"
#include "log.h"
#include "runtime.h"
#include "store.h"

#define TAG "tm:snap"

void tm_snap_job_free(tm_snap_job *job)
{
    if (!job) return;
    for (int i = 0; i < job->nparts; i++) {
        tm_snap_part *p = &job->parts[i];
        free(p->uid);
        free(p->file);
        if (p->ksnap) sl_ksnap_release(p->ksnap);
        if (p->rdb_local) {
            char err[8];
            (void)sl_rm_tree(p->rdb_local, err, sizeof err);
            free(p->rdb_local);
        }
        sl_inc_files_free(&p->inc);
        for (size_t k = 0; k < p->ntimers; k++) {
            free(p->timers[k].key);
            free(p->timers[k].ns);
        }
        free(p->timers);
        free(p->blob);
        char err[8];
        sl_rt_run_deferred(p->deferred, err, sizeof err); /* frees what did not run */
    }
    free(job->parts);
    sl_cs_abort(job->cs);
    if (job->cs_stage) unlink(job->cs_stage);
    free(job->cs_stage);
    free(job->cs_file);
    free(job->head_uid);
    free(job->dir);
    free(job);
}

/* The state file goes to stage (a local directory) when the snapshot
 * directory is on S3, and is uploaded from there. */
static int write_part(tm_snap_job *job, tm_snap_part *p, const char *stage, char *err, size_t errlen)
{
    char path[4096];
    int s3 = sl_store_is_s3(job->dir);
    int len = s3 ? snprintf(path, sizeof path, "%s/%s-%llu-%s", stage, job->job_id,
                            (unsigned long long)job->cpid, p->file)
                 : snprintf(path, sizeof path, "%s/%s", job->dir, p->file);
    if (len >= (int)sizeof path) return sl_seterr(err, errlen, "snapshot path too long");
    /* the operator's own asynchronous part first (e.g. a sink's fsync) */
    sl_deferred *d = p->deferred;
    p->deferred = NULL;
    if (sl_rt_run_deferred(d, err, errlen) != SL_OK) return SL_ERR;
    sl_snapw *w = sl_snapw_open(path, p->max_parallelism, p->kg_first, p->kg_last, err, errlen);
    if (!w) return SL_ERR;
    if (sl_snapw_identity(w, job->job_id, p->uid, job->subtask, err, errlen) != SL_OK ||
        (p->ksnap && sl_snapw_keyed(w, p->ksnap, err, errlen) != SL_OK) ||
        (p->ntimers && sl_snapw_timers(w, p->timers, p->ntimers, err, errlen) != SL_OK) ||
        (p->bloblen && sl_snapw_opstate(w, p->blob, p->bloblen, err, errlen) != SL_OK)) {
        sl_snapw_abort(w);
        return SL_ERR;
    }
    if (sl_snapw_finish(w, &p->size, err, errlen) != SL_OK) return SL_ERR;
    p->checkpointed_size = p->size;
    if (s3) {
        char *url = sl_sprintf("%s/%s", job->dir, p->file);
        int urc = sl_store_put_file(path, url, NULL, err, errlen);
        unlink(path);
        free(url);
        if (urc != SL_OK) return SL_ERR;
    }
    if (!p->rdb_local) return SL_OK;
    /* incremental: the RocksDB checkpoint's new SST files into shared/,
     * the rest next to the state file; then the local copy goes */
    int rc = sl_inc_upload(p->rdb_local, p->rdb_instance, job->dir, &p->inc, err, errlen);
    char rerr[300];
    if (sl_rm_tree(p->rdb_local, rerr, sizeof rerr) != SL_OK)
        sl_warn(TAG, "cannot remove local checkpoint %s: %s", p->rdb_local, rerr);
    free(p->rdb_local);
    p->rdb_local = NULL;
    if (rc != SL_OK) return SL_ERR;
    p->size += p->inc.size;
    p->checkpointed_size += p->inc.written;
    return SL_OK;
}

static void write_job(tm_net *n, tm_snap_job *job)
{
    int64_t t0 = sl_mono_ns();
    char err[400];
    char *stage = sl_sprintf("%s/sluice-%s/s3-upload", sl_config_str(n->conf, "taskmanager.tmp.dirs"),
                             n->id ? n->id : "tm");
    if (job->nparts && sl_store_is_s3(job->dir) && sl_mkdirs(stage, err, sizeof err) != SL_OK) {
        snprintf(job->error, sizeof job->error, "%s", err);
    } else if (job->nparts && sl_mkdirs(job->dir, err, sizeof err) != SL_OK) {
        snprintf(job->error, sizeof job->error, "%s", err);
    } else {
        for (int i = 0; i < job->nparts && !job->error[0]; i++)
            if (write_part(job, &job->parts[i], stage, err, sizeof err) != SL_OK)
                snprintf(job->error, sizeof job->error, "writing state of '%s': %s", job->parts[i].uid,
                         err);
    }
    free(stage);
    if (job->cs) {
        /* the channel state the task wrote: into place (or up to S3) */
        sl_cs_writer *cs = job->cs;
        job->cs = NULL;
        int rc = job->error[0] ? (sl_cs_abort(cs), SL_ERR) : sl_cs_finish(cs, &job->cs_size, err, sizeof err);
        if (rc == SL_OK && job->cs_stage) {
            char *url = sl_sprintf("%s/%s", job->dir, job->cs_file);
            rc = sl_store_put_file(job->cs_stage, url, NULL, err, sizeof err);
            free(url);
        }
        if (job->cs_stage) {
            unlink(job->cs_stage);
            free(job->cs_stage);
            job->cs_stage = NULL;
        }
        if (rc != SL_OK && !job->error[0])
            snprintf(job->error, sizeof job->error, "writing channel state: %s", err);
    }
    /* the views are no longer needed: let the live state stop copying */
    for (int i = 0; i < job->nparts; i++)
        if (job->parts[i].ksnap) {
            sl_ksnap_release(job->parts[i].ksnap);
            job->parts[i].ksnap = NULL;
        }
    job->async_ns = (uint64_t)(sl_mono_ns() - t0);
    if (job->error[0])
        sl_warn(TAG, "checkpoint %llu of job %s, subtask %d of chain %d: %s",
                (unsigned long long)job->cpid, job->job_id, job->subtask, job->chain, job->error);
    job->qm.type = TM_OP_SNAPSHOT_WRITTEN;
    if (sl_queue_push(n->inbox, &job->qm) != SL_OK) tm_snap_job_free(job); /* stopped */
}

static void *snap_main(void *arg)
{
    tm_net *n = arg;
    sl_qmsg *list;
    pthread_setname_np(pthread_self(), "snapshot-writer"); /* its name in thread dumps */
    while ((list = sl_queue_wait(n->snaps))) { /* NULL: stopped, and all written */
        while (list) {
            tm_snap_job *job = SL_QMSG_OF(list, tm_snap_job, qm);
            list = list->next;
            write_job(n, job);
        }
    }
    return NULL;
}

int tm_snapshotter_start(tm_net *n, char *err, size_t errlen)
{
    if (!(n->snaps = sl_queue_new("snapshot writer", SL_QUEUE_COND, 0, err, errlen))) return SL_ERR;
    int e = pthread_create(&n->snap_thread, NULL, snap_main, n);
    if (e) return sl_seterr(err, errlen, "cannot start the snapshot thread: %s", strerror(e));
    n->snap_started = 1;
    return SL_OK;
}

void tm_snapshotter_stop(tm_net *n)
{
    if (!n->snap_started) return;
    sl_queue_close(n->snaps);
    pthread_join(n->snap_thread, NULL); /* writes what is queued, then ends */
    n->snap_started = 0;
    sl_queue_destroy(n->snaps);
    n->snaps = NULL;
}

void tm_snapshotter_submit(tm_net *n, tm_snap_job *job)
{
    job->qm.type = TM_SNAP_WRITE;
    if (sl_queue_push(n->snaps, &job->qm) != SL_OK) tm_snap_job_free(job); /* stopped */
}
