/*
 * restore.c -- matching a savepoint (or retained checkpoint) to a job graph.
 *
 * State is mapped to operators by uid. Before anything runs we check that
 * the snapshot can be restored into the graph as submitted: its
 * _metadata reads and is a version we know; the job's maxParallelism (the
 * number of key groups) equals the snapshot's -- when the job does not set
 * one it adopts the snapshot's, so rescaling "just works"; and every
 * operator state finds a vertex with its uid, unless allowNonRestoredState
 * says to drop what does not map. The same check produces the report that
 * `sluice savepoint check` prints: which state goes where, what would be
 * dropped, which operators start empty. Every state file is also checked
 * against _metadata (snapshot_verify.c): a file swapped with another, or
 * from another job, is refused with a message naming both files. The check
 * (report wanted) also reads every byte of every state file -- each
 * section's CRC-32C, streamed -- and names every damaged file; a submission
 * leaves that to the tasks' restore, which reads the sections anyway.
 * A snapshot on S3 is checked the same way in a local copy of its files
 * (fetched into a temporary directory and removed after the check).
 * Runs on the JobManager's I/O worker (io.c), never on the loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jm.h"
#include "log.h"
#include "state.h"
#include "store.h"
#include "snapshot.h"
#include "snapshot.pb-c.h"

static void drop_copy(char *root)
{
    char err[300];
    if (root && sl_rm_tree(root, err, sizeof err) != SL_OK)
        sl_warn("jm:restore", "cannot remove %s: %s", root, err);
    free(root);
}

/* The savepoint's directory: "file:///x", "file:/x" or "/x" -> "/x"
 * (sl_config_local_path, the rule for every configured directory), into
 * buf; NULL for a relative path, one with "..", or another file system. */
static const char *local_path(const char *p, char *buf, size_t len)
{
    char why[256];
    if (sl_store_is_s3(p)) { /* an s3:// URL stays one, checked for its form */
        size_t n = strlen(p);
        while (n && p[n - 1] == '/') n--;
        if (sl_store_check_url(p, why, sizeof why) != SL_OK || n >= len) return NULL;
        snprintf(buf, len, "%.*s", (int)n, p);
        return buf;
    }
    char *lp = sl_config_local_path(p, why, sizeof why);
    int ok = lp && lp[0] == '/' && !strstr(lp, "..") && strlen(lp) < len;
    if (ok) snprintf(buf, len, "%s", lp);
    free(lp);
    return ok ? buf : NULL;
}

/* A local copy of the s3:// snapshot dir (its files as _metadata md names
 * them) in a new temporary directory: the copy's root (caller removes it
 * with drop_copy), the snapshot in "<root>/snapshot"; NULL with err. */
static char *fetch_copy(const char *dir, const Sluice__SnapshotMetadata *md, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    char *root = sl_sprintf("%s/sluice-jm-restore-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        sl_seterr(err, errlen, "cannot create a temporary directory %s: %s", root, strerror(errno));
        free(root);
        return NULL;
    }
    char *snap = sl_sprintf("%s/snapshot", root);
    int rc = sl_snapshot_fetch(dir, md, NULL, NULL, snap, err, errlen);
    free(snap);
    if (rc != SL_OK) {
        drop_copy(root);
        return NULL;
    }
    return root;
}

int jm_restore_plan(sl_jobgraph *g, const char *path, int allow_non_restored, json_t **report,
                    char **dir_out, uint64_t *cpid, int *is_savepoint, char *err, size_t errlen)
{
    char lpbuf[4096];
    const char *lp = local_path(path, lpbuf, sizeof lpbuf);
    if (!lp) return sl_seterr(err, errlen, "savepoint path '%s' must be an absolute path, a file: URL "
                              "or an s3://bucket/path URL", path);
    void *packed = NULL;
    size_t len = 0;
    char rerr[600];
    if (sl_snapshot_read_metadata(lp, &packed, &len, rerr, sizeof rerr) != SL_OK)
        return sl_seterr(err, errlen, "cannot read savepoint '%s': %s", path, rerr);
    Sluice__SnapshotMetadata *md = sluice__snapshot_metadata__unpack(NULL, len, packed);
    free(packed);
    if (!md) return sl_seterr(err, errlen, "savepoint '%s': _metadata does not decode", path);
    int rc = SL_OK;
    if (md->format_version != SL_SNAPSHOT_FORMAT_VERSION) {
        rc = sl_seterr(err, errlen, "savepoint '%s' has format version %u; this Sluice reads version %d",
                       path, md->format_version, SL_SNAPSHOT_FORMAT_VERSION);
        goto out;
    }
    /* key groups: adopt the snapshot's unless the job pins its own */
    if (!json_object_get(g->json, "maxParallelism")) {
        if ((int)md->max_parallelism < g->max_vertex_parallelism) {
            rc = sl_seterr(err, errlen,
                           "savepoint '%s' has maxParallelism %u, below the job's largest parallelism %d",
                           path, md->max_parallelism, g->max_vertex_parallelism);
            goto out;
        }
        g->max_parallelism = (int)md->max_parallelism;
    } else if ((uint32_t)g->max_parallelism != md->max_parallelism) {
        rc = sl_seterr(err, errlen,
                       "the job sets maxParallelism %d but savepoint '%s' was taken with %u: keyed "
                       "state is split into that many key groups and cannot be restored with another "
                       "number (remove maxParallelism from the job, or set it to %u)",
                       g->max_parallelism, path, md->max_parallelism, md->max_parallelism);
        goto out;
    }
    {
        /* every state file must be the one _metadata says it is */
        char *dir = sl_strdup(lp);
        size_t dl = strlen(dir);
        if (dl > 10 && !strcmp(dir + dl - 10, "/_metadata")) dir[dl - 10] = '\0';
        char verr[1200];
        char *copy = NULL; /* an s3:// snapshot is checked in a local copy */
        if (sl_store_is_s3(dir) && !(copy = fetch_copy(dir, md, verr, sizeof verr))) {
            free(dir);
            rc = sl_seterr(err, errlen, "cannot restore from savepoint '%s': %s", path, verr);
            goto out;
        }
        if (copy) {
            free(dir);
            dir = sl_sprintf("%s/snapshot", copy);
        }
        if (report) {
            /* the check reads every byte of every file, past a damaged one */
            int nbad = 0, nfiles = 0;
            /* the list gets what err holds after the sentence before it:
             * whole lines, never one cut off */
            size_t room = errlen > strlen(path) + 100 ? errlen - strlen(path) - 100 : 1;
            rc = sl_snapshot_check(dir, md, &nbad, &nfiles, verr, SL_MIN(room, sizeof verr));
            free(dir);
            drop_copy(copy);
            if (rc != SL_OK) {
                rc = sl_seterr(err, errlen, "savepoint '%s' is damaged: %d of its %d state files "
                               "would fail the restore:\n%s", path, nbad, nfiles, verr);
                goto out;
            }
        } else {
            rc = sl_snapshot_verify(dir, md, verr, sizeof verr);
            free(dir);
            drop_copy(copy);
            if (rc != SL_OK) {
                rc = sl_seterr(err, errlen, "cannot restore from savepoint '%s': %s", path, verr);
                goto out;
            }
        }
    }
    json_t *mapped = json_array(), *dropped = json_array(), *fresh = json_array();
    char unmatched[600] = "";
    size_t used = 0;
    for (size_t i = 0; i < md->n_operators; i++) {
        const Sluice__OperatorState *os = md->operators[i];
        const sl_vertex *v = NULL;
        for (int q = 0; q < g->nv; q++)
            if (!strcmp(g->v[q].uid, os->uid)) v = &g->v[q];
        uint64_t size = 0;
        for (size_t k = 0; k < os->n_subtasks; k++) size += os->subtasks[k]->size;
        if (!v) {
            json_array_append_new(dropped, json_pack("{s:s,s:s,s:i,s:I}", "uid", os->uid, "type",
                                                     os->type ? os->type : "", "parallelism",
                                                     (int)os->parallelism, "state-size", (json_int_t)size));
            if (used < sizeof unmatched - 80)
                used += (size_t)snprintf(unmatched + used, sizeof unmatched - used, "%s'%s'",
                                         used ? ", " : "", os->uid);
            continue;
        }
        int nfin = 0;
        for (size_t k = 0; k < os->n_subtasks; k++) nfin += os->subtasks[k]->finished;
        if (nfin && nfin < (int)os->parallelism && (v->def->flags & SL_OPF_SOURCE) &&
            (int)os->parallelism != v->parallelism) {
            /* which new subtask would own a finished old one's input? */
            rc = sl_seterr(err, errlen,
                           "savepoint '%s': %d of the %u subtasks of source '%s' had finished; a "
                           "partly finished source cannot be restored at another parallelism "
                           "(%d): restore it with parallelism %u",
                           path, nfin, os->parallelism, os->uid, v->parallelism, os->parallelism);
            json_decref(mapped);
            json_decref(dropped);
            json_decref(fresh);
            goto out;
        }
        json_array_append_new(mapped, json_pack("{s:s,s:s,s:i,s:s,s:i,s:b,s:I}", "uid", os->uid, "type",
                                                os->type ? os->type : "", "from-parallelism",
                                                (int)os->parallelism, "vertex", v->id, "parallelism",
                                                v->parallelism, "keyed", os->keyed, "state-size",
                                                (json_int_t)size));
    }
    for (int q = 0; q < g->nv; q++) {
        int found = 0;
        for (size_t i = 0; i < md->n_operators; i++) found |= !strcmp(g->v[q].uid, md->operators[i]->uid);
        if (!found)
            json_array_append_new(fresh, json_pack("{s:s,s:s,s:s}", "vertex", g->v[q].id, "uid",
                                                   g->v[q].uid, "type", g->v[q].type));
    }
    if (report) {
        *report = json_pack("{s:s,s:I,s:b,s:i,s:o,s:o,s:o}", "savepoint", path, "checkpoint-id",
                            (json_int_t)md->checkpoint_id, "is-savepoint", md->is_savepoint,
                            "maxParallelism", (int)md->max_parallelism, "mapped", mapped, "dropped",
                            dropped, "new", fresh);
    } else {
        json_decref(mapped);
        json_decref(dropped);
        json_decref(fresh);
    }
    if (unmatched[0] && !allow_non_restored) {
        rc = sl_seterr(err, errlen,
                       "Cannot map savepoint state for operator uid(s) %s to the new job: no vertex "
                       "has that uid. Give the vertex that should own it that \"uid\", or resubmit "
                       "with allowNonRestoredState (sluice run -n) to drop that state.",
                       unmatched);
        if (report) {
            json_decref(*report);
            *report = NULL;
        }
        goto out;
    }
    if (dir_out) *dir_out = sl_strdup(lp[strlen(lp) - 1] == '/' ? lp : lp);
    if (dir_out && strlen(*dir_out) > 10 && !strcmp(*dir_out + strlen(*dir_out) - 10, "/_metadata"))
        (*dir_out)[strlen(*dir_out) - 10] = '\0';
    if (cpid) *cpid = md->checkpoint_id;
    if (is_savepoint) *is_savepoint = md->is_savepoint;
out:
    sluice__snapshot_metadata__free_unpacked(md, NULL);
    return rc;
}
