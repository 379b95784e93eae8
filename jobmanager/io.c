/*
 * io.c -- the JobManager's file worker.
 *
 * Everything that waits on a disk runs here, on one thread, in the order it
 * was asked for: writing a checkpoint's _metadata (write, fsync, rename),
 * deleting checkpoints that retention dropped or that failed, reading a
 * savepoint's _metadata to check it against a job, disposing of a
 * savepoint. Jobs from the loop are fire-and-forget; a write's result goes
 * back to the loop as a JM_OP_CP_WRITTEN op. Jobs from REST threads are
 * waited for (jm_io_call). FIFO order matters: a failed checkpoint's
 * directory is removed after its _metadata write, if one was still queued.
 *
 * The job carries copies of everything it needs (directory, packed bytes,
 * job id), never pointers into the loop's state, so the loop may forget a
 * job while its files are still being written. The jobs travel on j->io, an
 * sl_queue (lib/queue.h) the worker sleeps on; its lock is a leaf, never
 * held during file work.
 *
 * Unbounded: the loop must never block, and the loop's jobs are bounded by
 * the checkpoints they serve (one _metadata write per checkpoint, one at a
 * time per job; removals as retention drops checkpoints); a REST thread's
 * job is waited for, so at most one per REST thread.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jm.h"
#include "ha.h"
#include "log.h"
#include "snapshot.h"
#include "snapshot.pb-c.h"
#include "snapshot_inc.h"
#include "store.h"

#define TAG "jm:io"

static void io_job_free(jm_io_job *job)
{
    if (!job) return;
    free(job->dir);
    free(job->data);
    free(job);
}

/* Remove job->dir only if its _metadata says it is a Sluice savepoint
 * (not a checkpoint, not anything else); not_found when there is no
 * _metadata at all. */
static int dispose(jm_io_job *job)
{
    char path[PATH_MAX], why[600];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/_metadata", job->dir) >= (int)sizeof path)
        return sl_seterr(job->err, sizeof job->err, "'%s': path too long", job->dir);
    if (sl_store_is_s3(job->dir)) {
        int rc = sl_store_size(path, NULL, why, sizeof why);
        job->not_found = rc == SL_DONE;
        if (rc != SL_OK)
            return sl_seterr(job->err, sizeof job->err, "'%s' is not a savepoint directory: %s", job->dir,
                             job->not_found ? "there is no _metadata in it" : why);
    } else if (stat(path, &st) != 0) {
        job->not_found = errno == ENOENT || errno == ENOTDIR;
        return sl_seterr(job->err, sizeof job->err, "'%s' is not a savepoint directory: %s", job->dir,
                         job->not_found ? "there is no _metadata in it" : strerror(errno));
    }
    void *packed = NULL;
    size_t len = 0;
    if (sl_snapshot_read_metadata(job->dir, &packed, &len, why, sizeof why) != SL_OK)
        return sl_seterr(job->err, sizeof job->err, "'%s' is not a savepoint directory: %s", job->dir, why);
    Sluice__SnapshotMetadata *md = sluice__snapshot_metadata__unpack(NULL, len, packed);
    free(packed);
    if (!md)
        return sl_seterr(job->err, sizeof job->err,
                         "'%s' is not a savepoint directory: its _metadata does not decode", job->dir);
    int is_savepoint = md->is_savepoint;
    sluice__snapshot_metadata__free_unpacked(md, NULL);
    if (!is_savepoint)
        return sl_seterr(job->err, sizeof job->err,
                         "'%s' is not a savepoint directory: its _metadata is a checkpoint's", job->dir);
    return sl_snapshot_remove(job->dir, job->err, sizeof job->err);
}

static void run(jm *j, jm_io_job *job)
{
    switch ((jm_io_kind)job->qm.type) {
    case JM_IO_WRITE_METADATA: {
        jm_op *op = sl_calloc(1, sizeof *op);
        op->qm.type = JM_OP_CP_WRITTEN;
        memcpy(op->u.written.job_id, job->job_id, sizeof op->u.written.job_id);
        op->u.written.attempt = job->attempt;
        op->u.written.cp_id = job->cp_id;
        if (!jm_ha_may_act(j)) /* fenced: a deposed leader writes no metadata */
            op->u.written.rc = sl_seterr(op->u.written.err, sizeof op->u.written.err,
                                         "this JobManager is not the confirmed leader");
        else if (!sl_store_is_s3(job->dir) &&
                 sl_mkdirs(job->dir, op->u.written.err, sizeof op->u.written.err) != SL_OK)
            /* no subtask wrote a file (every task had finished when it
             * was triggered): the directory is ours to make */
            op->u.written.rc = SL_ERR;
        else
            op->u.written.rc = sl_snapshot_write_metadata(job->dir, job->data, job->len,
                                                          op->u.written.err, sizeof op->u.written.err);
        jm_op_post(j, op);
        break;
    }
    case JM_IO_REMOVE:
        if (sl_snapshot_remove(job->dir, job->err, sizeof job->err) != SL_OK)
            sl_warn(TAG, "cannot remove %s: %s", job->dir, job->err);
        break;
    case JM_IO_UNLINK:
        if (sl_store_is_s3(job->dir)) {
            if (sl_store_delete(job->dir, job->err, sizeof job->err) != SL_OK)
                sl_warn(TAG, "cannot remove shared file: %s", job->err);
        } else if (unlink(job->dir) != 0 && errno != ENOENT)
            sl_warn(TAG, "cannot remove shared file %s: %s", job->dir, strerror(errno));
        break;
    case JM_IO_SWEEP: {
        /* data: the names to keep, each NUL-terminated, sorted */
        const char **keep = sl_calloc(job->len + 1, sizeof *keep);
        size_t n = 0;
        for (size_t off = 0; off < job->len; off += strlen((const char *)job->data + off) + 1)
            keep[n++] = (const char *)job->data + off;
        if (sl_inc_sweep(job->dir, keep, n, job->err, sizeof job->err) != SL_OK)
            sl_warn(TAG, "%s", job->err);
        free(keep);
        break;
    }
    case JM_IO_RESTORE_PLAN:
        job->rc = jm_restore_plan(job->g, job->path, job->allow_non_restored, job->report,
                                  job->dir_out, job->cpid_out, job->is_savepoint_out, job->err,
                                  sizeof job->err);
        break;
    case JM_IO_DISPOSE:
        job->rc = dispose(job);
        break;
    }
}

static void *io_main(void *arg)
{
    jm *j = arg;
    sl_qmsg *list;
    pthread_setname_np(pthread_self(), "io-worker"); /* its name in thread dumps */
    while ((list = sl_queue_wait(j->io))) { /* NULL: stopped, and nothing left */
        while (list) {
            jm_io_job *job = SL_QMSG_OF(list, jm_io_job, qm);
            list = list->next;
            run(j, job);
            if (!sl_queue_answer(j->io, &job->qm, SL_OK)) io_job_free(job); /* else the waiter's */
        }
    }
    return NULL;
}

int jm_io_start(jm *j, char *err, size_t errlen)
{
    j->io = sl_queue_new("JobManager I/O", SL_QUEUE_COND, 0, err, errlen);
    if (!j->io) return SL_ERR;
    if (pthread_create(&j->io_thread, NULL, io_main, j) != 0)
        return sl_seterr(err, errlen, "cannot start the JobManager's I/O thread");
    j->io_started = 1;
    return SL_OK;
}

void jm_io_submit(jm *j, jm_io_job *job)
{
    if (sl_queue_push(j->io, &job->qm) != SL_OK) io_job_free(job); /* stopping */
}

int jm_io_call(jm *j, jm_io_job *job)
{
    SL_ASSERT(!jm_on_loop(j)); /* the loop never waits for a disk */
    if (sl_queue_call(j->io, &job->qm) != SL_OK) {
        sl_seterr(job->err, sizeof job->err, "the JobManager is shutting down");
        return job->rc = SL_ERR;
    }
    return job->rc;
}

void jm_io_remove(jm *j, const char *dir)
{
    jm_io_job *job = sl_calloc(1, sizeof *job);
    job->qm.type = JM_IO_REMOVE;
    job->dir = sl_strdup(dir);
    jm_io_submit(j, job);
}

void jm_io_unlink(jm *j, const char *path)
{
    jm_io_job *job = sl_calloc(1, sizeof *job);
    job->qm.type = JM_IO_UNLINK;
    job->dir = sl_strdup(path);
    jm_io_submit(j, job);
}

void jm_io_sweep(jm *j, const char *shared_dir, const char *const *keep, size_t n)
{
    jm_io_job *job = sl_calloc(1, sizeof *job);
    job->qm.type = JM_IO_SWEEP;
    job->dir = sl_strdup(shared_dir);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += strlen(keep[i]) + 1;
    job->data = sl_malloc(len ? len : 1);
    for (size_t i = 0, off = 0; i < n; i++) {
        size_t l = strlen(keep[i]) + 1;
        memcpy(job->data + off, keep[i], l);
        off += l;
    }
    job->len = len;
    jm_io_submit(j, job);
}

void jm_io_stop(jm *j)
{
    if (!j->io_started) return;
    sl_queue_close(j->io); /* the worker runs what is queued, then ends */
    pthread_join(j->io_thread, NULL);
    j->io_started = 0;
    sl_queue_destroy(j->io);
    j->io = NULL;
}
