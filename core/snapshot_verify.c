/*
 * snapshot_verify.c -- checking a snapshot's state files against its
 * _metadata before anything is restored from them.
 *
 * _metadata says, per operator uid and subtask, which file holds that
 * subtask's state and which key groups it covers. Each state file records
 * its own identity (job, uid, subtask: the IDNT section, snapshot.c) and
 * key-group range. A restore that trusted _metadata alone would load a
 * file swapped with another one into the wrong subtask -- and keyed state
 * outside a subtask's key groups is silently skipped, so the job would run
 * with empty state. Here every file is opened (header, identity, trailer,
 * index; not the sections) and compared; a mismatch is an error naming the
 * file, what it holds, what _metadata expected, and which file _metadata
 * gives for what it holds. Files written without an identity (older
 * writers) are checked for their key-group range only.
 *
 * sl_snapshot_check goes further, for POST /savepoints/check: it reads
 * every byte of every state file (each section's CRC-32C, streamed in
 * bounded pieces: sl_snapr_check) and the size _metadata recorded for it,
 * and goes on past a damaged file, so that its answer names each damaged
 * file and what is wrong with it -- what a restore would otherwise find
 * one file at a time, on the TaskManagers, after the job was made.
 *
 * Any thread; reads files (the JobManager calls it on its I/O worker, a
 * task on its own thread before it restores).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot.h"
#include "snapshot_inc.h"
#include "snapshot.pb-c.h"

/* Which file _metadata names for (uid, subtask); NULL if none. */
static const char *file_of(const Sluice__SnapshotMetadata *md, const char *uid, int subtask)
{
    for (size_t i = 0; i < md->n_operators; i++) {
        const Sluice__OperatorState *os = md->operators[i];
        if (strcmp(os->uid, uid)) continue;
        for (size_t k = 0; k < os->n_subtasks; k++)
            if (os->subtasks[k]->subtask == (uint32_t)subtask && os->subtasks[k]->file &&
                *os->subtasks[k]->file)
                return os->subtasks[k]->file;
    }
    return NULL;
}

int sl_snapshot_verify_file(const char *dir, const Sluice__SnapshotMetadata *md,
                            const Sluice__OperatorState *os, const Sluice__SubtaskState *ss,
                            char *err, size_t errlen)
{
    const char *f = ss->file;
    if (!f || !*f) return SL_OK;
    if (strchr(f, '/') || !strcmp(f, ".") || !strcmp(f, ".."))
        return sl_seterr(err, errlen, "_metadata names the state file '%s' of operator '%s' subtask %u, "
                         "which is not a plain file name in %s", f, os->uid, ss->subtask, dir);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, f) >= (int)sizeof path)
        return sl_seterr(err, errlen, "%s/%s: path too long", dir, f);
    sl_snap_ident *id = sl_calloc(1, sizeof *id);
    int maxp = 0, first = 0, last = 0, rc = SL_OK;
    char rerr[600];
    if (sl_snapr_ident(path, id, &maxp, &first, &last, rerr, sizeof rerr) != SL_OK) {
        rc = sl_seterr(err, errlen, "%s", rerr);
    } else if (id->known && (strcmp(id->uid, os->uid) || id->subtask != (int)ss->subtask)) {
        const char *other = file_of(md, id->uid, id->subtask);
        rc = sl_seterr(err, errlen,
                       "state file %s holds the state of operator '%s' subtask %d, but _metadata "
                       "gives it as the state of operator '%s' subtask %u%s%s%s: the snapshot's "
                       "files do not match its _metadata (moved or swapped); refusing to restore",
                       path, id->uid, id->subtask, os->uid, ss->subtask,
                       other ? " (and names " : "", other ? other : "",
                       other ? " for what this file holds)" : "");
    } else if (id->known && strcmp(id->job_id, md->job_id)) {
        rc = sl_seterr(err, errlen,
                       "state file %s holds state of job %s, but its _metadata is of job %s: the "
                       "file comes from another snapshot; refusing to restore",
                       path, id->job_id, md->job_id);
    } else if (maxp != (int)md->max_parallelism || first != (int)ss->kg_first ||
               last != (int)ss->kg_last) {
        rc = sl_seterr(err, errlen,
                       "state file %s covers key groups [%d, %d] of %d, but _metadata gives "
                       "operator '%s' subtask %u key groups [%u, %u] of %u; refusing to restore",
                       path, first, last, maxp, os->uid, ss->subtask, ss->kg_first, ss->kg_last,
                       md->max_parallelism);
    }
    free(id);
    /* an incremental RocksDB state's files: names it writes, all present */
    char *shared = rc == SL_OK && ss->n_shared_files ? sl_inc_shared_dir(dir) : NULL;
    for (size_t i = 0; rc == SL_OK && i < ss->n_shared_files + ss->n_private_files; i++) {
        int priv = i >= ss->n_shared_files;
        const char *name = priv ? ss->private_files[i - ss->n_shared_files] : ss->shared_files[i];
        if (!sl_inc_name_ok(name, priv)) {
            rc = sl_seterr(err, errlen, "_metadata names the %s file '%s' of operator '%s' subtask "
                           "%u, which is not a name incremental checkpoints write",
                           priv ? "private" : "shared", name, os->uid, ss->subtask);
            break;
        }
        snprintf(path, sizeof path, "%s/%s", priv ? dir : shared, name);
        if (access(path, R_OK) != 0)
            rc = sl_seterr(err, errlen, "the incremental checkpoint file %s of operator '%s' "
                           "subtask %u is missing or unreadable: %s; refusing to restore",
                           path, os->uid, ss->subtask, strerror(errno));
    }
    free(shared);
    return rc;
}

int sl_snapshot_verify(const char *dir, const Sluice__SnapshotMetadata *md, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < md->n_operators; i++)
        for (size_t k = 0; k < md->operators[i]->n_subtasks; k++)
            if (sl_snapshot_verify_file(dir, md, md->operators[i], md->operators[i]->subtasks[k], err,
                                        errlen) != SL_OK)
                return SL_ERR;
    return SL_OK;
}

/* One subtask's file in full: what sl_snapshot_verify_file checks, the size
 * _metadata recorded (a plain state file is all there is of it; an
 * incremental one's size counts its RocksDB files too) and every section. */
static int check_file(const char *dir, const Sluice__SnapshotMetadata *md,
                      const Sluice__OperatorState *os, const Sluice__SubtaskState *ss, char *err,
                      size_t errlen)
{
    char path[4096];
    int plain = ss->file && *ss->file && !strchr(ss->file, '/') &&
                snprintf(path, sizeof path, "%s/%s", dir, ss->file) < (int)sizeof path;
    struct stat st;
    /* the size first: it says "truncated" where the reader only sees a
     * trailer missing (verify_file names a bad name or path itself) */
    if (plain && !ss->n_shared_files && !ss->n_private_files && ss->size &&
        stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size != ss->size)
        return sl_seterr(err, errlen, "%s: %llu bytes, but _metadata records %llu for operator "
                         "'%s' subtask %u (%s)", path, (unsigned long long)st.st_size,
                         (unsigned long long)ss->size, os->uid, ss->subtask,
                         (uint64_t)st.st_size < ss->size ? "truncated" : "bytes added");
    if (sl_snapshot_verify_file(dir, md, os, ss, err, errlen) != SL_OK) return SL_ERR;
    return plain ? sl_snapr_check(path, err, errlen) : SL_OK;
}

int sl_snapshot_check(const char *dir, const Sluice__SnapshotMetadata *md, int *nbad,
                      int *nfiles, char *out, size_t outlen)
{
    size_t used = 0;
    int bad = 0, files = 0, listed = 0;
    if (outlen) out[0] = '\0';
    for (size_t i = 0; i < md->n_operators; i++) {
        /* an operator's subtasks in index order (_metadata lists them in
         * the order they acknowledged), so the answer does not depend on it */
        const Sluice__OperatorState *os = md->operators[i];
        size_t n = os->n_subtasks;
        const Sluice__SubtaskState **order = sl_calloc(n ? n : 1, sizeof *order);
        for (size_t k = 0; k < n; k++) {
            size_t at = k;
            while (at > 0 && order[at - 1]->subtask > os->subtasks[k]->subtask) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = os->subtasks[k];
        }
        for (size_t k = 0; k < n; k++) {
            const Sluice__SubtaskState *ss = order[k];
            if (!ss->file || !*ss->file) continue;
            files++;
            char e[1200];
            if (check_file(dir, md, md->operators[i], ss, e, sizeof e) == SL_OK) continue;
            bad++;
            /* whole lines only, and room kept for the count of the rest */
            size_t need = strlen(e) + 1;
            if (used + need + 48 < outlen) {
                used += (size_t)snprintf(out + used, outlen - used, "%s%s", listed ? "\n" : "", e);
                listed++;
            }
        }
        free(order);
    }
    if (bad > listed && used + 48 < outlen)
        snprintf(out + used, outlen - used, "%s(and %d more damaged files)", listed ? "\n" : "",
                 bad - listed);
    if (nbad) *nbad = bad;
    if (nfiles) *nfiles = files;
    return bad ? SL_ERR : SL_OK;
}
