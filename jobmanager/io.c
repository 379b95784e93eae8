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
 * job while its files are still being written. io_lock is a leaf: held to
 * link jobs and set flags, never during file work.
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
    if (stat(path, &st) != 0) {
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
    switch (job->kind) {
    case JM_IO_WRITE_METADATA: {
        jm_op *op = sl_calloc(1, sizeof *op);
        op->kind = JM_OP_CP_WRITTEN;
        memcpy(op->u.written.job_id, job->job_id, sizeof op->u.written.job_id);
        op->u.written.attempt = job->attempt;
        op->u.written.cp_id = job->cp_id;
        if (!jm_ha_may_act(j)) /* fenced: a deposed leader writes no metadata */
            op->u.written.rc = sl_seterr(op->u.written.err, sizeof op->u.written.err,
                                         "this JobManager is not the confirmed leader");
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
        if (unlink(job->dir) != 0 && errno != ENOENT)
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
    pthread_mutex_lock(&j->io_lock);
    for (;;) {
        while (!j->io_head && !j->io_stopping) pthread_cond_wait(&j->io_cond, &j->io_lock);
        jm_io_job *job = j->io_head;
        if (!job) break; /* stopping, and nothing left */
        j->io_head = job->next;
        if (!j->io_head) j->io_tail = NULL;
        pthread_mutex_unlock(&j->io_lock);
        run(j, job);
        pthread_mutex_lock(&j->io_lock);
        if (job->waited) {
            job->done = 1; /* the waiter owns it again */
            pthread_cond_broadcast(&j->io_cond);
        } else {
            io_job_free(job);
        }
    }
    pthread_mutex_unlock(&j->io_lock);
    return NULL;
}

int jm_io_start(jm *j, char *err, size_t errlen)
{
    pthread_mutex_init(&j->io_lock, NULL);
    pthread_cond_init(&j->io_cond, NULL);
    if (pthread_create(&j->io_thread, NULL, io_main, j) != 0)
        return sl_seterr(err, errlen, "cannot start the JobManager's I/O thread");
    j->io_started = 1;
    return SL_OK;
}

static void enqueue(jm *j, jm_io_job *job)
{
    job->next = NULL;
    if (j->io_tail) j->io_tail->next = job;
    else j->io_head = job;
    j->io_tail = job;
    pthread_cond_broadcast(&j->io_cond);
}

void jm_io_submit(jm *j, jm_io_job *job)
{
    job->waited = 0;
    pthread_mutex_lock(&j->io_lock);
    enqueue(j, job);
    pthread_mutex_unlock(&j->io_lock);
}

int jm_io_call(jm *j, jm_io_job *job)
{
    SL_ASSERT(!jm_on_loop(j)); /* the loop never waits for a disk */
    job->waited = 1;
    job->done = 0;
    pthread_mutex_lock(&j->io_lock);
    if (j->io_stopping) {
        pthread_mutex_unlock(&j->io_lock);
        sl_seterr(job->err, sizeof job->err, "the JobManager is shutting down");
        return job->rc = SL_ERR;
    }
    enqueue(j, job);
    while (!job->done) pthread_cond_wait(&j->io_cond, &j->io_lock);
    pthread_mutex_unlock(&j->io_lock);
    return job->rc;
}

void jm_io_remove(jm *j, const char *dir)
{
    jm_io_job *job = sl_calloc(1, sizeof *job);
    job->kind = JM_IO_REMOVE;
    job->dir = sl_strdup(dir);
    jm_io_submit(j, job);
}

void jm_io_unlink(jm *j, const char *path)
{
    jm_io_job *job = sl_calloc(1, sizeof *job);
    job->kind = JM_IO_UNLINK;
    job->dir = sl_strdup(path);
    jm_io_submit(j, job);
}

void jm_io_sweep(jm *j, const char *shared_dir, const char *const *keep, size_t n)
{
    jm_io_job *job = sl_calloc(1, sizeof *job);
    job->kind = JM_IO_SWEEP;
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
    pthread_mutex_lock(&j->io_lock);
    j->io_stopping = 1;
    pthread_cond_broadcast(&j->io_cond);
    pthread_mutex_unlock(&j->io_lock);
    pthread_join(j->io_thread, NULL);
    j->io_started = 0;
    pthread_cond_destroy(&j->io_cond);
    pthread_mutex_destroy(&j->io_lock);
}
