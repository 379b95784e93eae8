/*
 * snapshot_inc.c -- the files of incremental RocksDB checkpoints (layout
 * and names: snapshot_inc.h), and the reference counts of shared files.
 *
 * Uploading a file is a hard link from the local RocksDB checkpoint (itself
 * hard links of the live instance's SST files) into the snapshot storage,
 * or a copy when that is another file system; either way into a ".tmp" name
 * first and renamed, so a name in shared/ is always a whole file. An SST
 * file already in shared/ under its name is the same file (SST files never
 * change and the name carries the writing instance), so it is referenced,
 * not written again.
 *
 * The reference counts are a sorted array of (name, count), binary
 * searched; a job's shared directory holds a few files per subtask per
 * retained checkpoint, so this stays small.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sl.h"
#include "snapshot.h"
#include "snapshot.pb-c.h"
#include "snapshot_inc.h"
#include "store.h"

void sl_inc_files_free(sl_inc_files *f)
{
    for (size_t i = 0; i < f->nshared; i++) free(f->shared[i]);
    for (size_t i = 0; i < f->npriv; i++) free(f->priv[i]);
    free(f->shared);
    free(f->priv);
    memset(f, 0, sizeof *f);
}

char *sl_inc_shared_dir(const char *snap_dir)
{
    size_t n = strlen(snap_dir);
    while (n > 1 && snap_dir[n - 1] == '/') n--; /* "chk-5/" is "chk-5" */
    const char *slash = NULL;
    for (size_t i = 0; i < n; i++)
        if (snap_dir[i] == '/') slash = snap_dir + i;
    if (!slash) return sl_strdup(SL_INC_SHARED);
    return sl_sprintf("%.*s/%s", (int)(slash - snap_dir), snap_dir, SL_INC_SHARED);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

int sl_inc_name_ok(const char *name, int priv)
{
    size_t n = strlen(name);
    if (n < 18 || name[16] != '-' || strchr(name, '/')) return 0;
    for (int i = 0; i < 16; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return 0;
    if (!strcmp(name + 17, ".") || !strcmp(name + 17, "..")) return 0;
    return priv ? has_suffix(name, SL_INC_PRIVATE_SUFFIX) && n > 17 + strlen(SL_INC_PRIVATE_SUFFIX)
                : has_suffix(name, ".sst");
}

/* Copy src to dst (created, truncated), fsynced. */
static int copy_file(const char *src, const char *dst, char *err, size_t errlen)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return sl_seterr(err, errlen, "cannot open %s: %s", src, strerror(errno));
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        close(in);
        return sl_seterr(err, errlen, "cannot create %s: %s", dst, strerror(errno));
    }
    char buf[1 << 16];
    int rc = SL_OK;
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = sl_seterr(err, errlen, "reading %s: %s", src, strerror(errno));
            break;
        }
        if (r == 0) break;
        for (ssize_t off = 0; off < r;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                rc = sl_seterr(err, errlen, "writing %s: %s", dst, strerror(errno));
                break;
            }
            off += w;
        }
        if (rc != SL_OK) break;
    }
    if (rc == SL_OK && fsync(out) != 0) rc = sl_seterr(err, errlen, "fsync %s: %s", dst, strerror(errno));
    close(in);
    close(out);
    if (rc != SL_OK) unlink(dst);
    return rc;
}

/* src at dst: a hard link, or a copy where links cannot go; through dst.tmp. */
static int place(const char *src, const char *dst, char *err, size_t errlen)
{
    char *tmp = sl_sprintf("%s.tmp", dst);
    unlink(tmp);
    int rc = SL_OK;
    if (link(src, tmp) != 0) {
        if (errno == EXDEV || errno == EPERM || errno == EMLINK || errno == ENOTSUP)
            rc = copy_file(src, tmp, err, errlen);
        else
            rc = sl_seterr(err, errlen, "cannot link %s to %s: %s", src, tmp, strerror(errno));
    }
    if (rc == SL_OK && rename(tmp, dst) != 0) {
        rc = sl_seterr(err, errlen, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

static int fsync_dir(const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = SL_OK;
    if (fd < 0 || fsync(fd) != 0) rc = sl_seterr(err, errlen, "fsync of directory %s: %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    return rc;
}

static void push(char ***arr, size_t *n, char *s)
{
    *arr = sl_realloc(*arr, sizeof **arr * (*n + 1));
    (*arr)[(*n)++] = s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sl_inc_upload(const char *local_dir, const char *instance, const char *snap_dir,
                  sl_inc_files *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *shared = sl_inc_shared_dir(snap_dir);
    int s3 = sl_store_is_s3(snap_dir);
    int rc = sl_mkdirs(shared, err, errlen);
    DIR *d = rc == SL_OK ? opendir(local_dir) : NULL;
    if (rc == SL_OK && !d) rc = sl_seterr(err, errlen, "cannot read %s: %s", local_dir, strerror(errno));
    struct dirent *de;
    while (rc == SL_OK && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char src[4096], dst[4096];
        snprintf(src, sizeof src, "%s/%s", local_dir, de->d_name);
        struct stat st;
        if (stat(src, &st) != 0) {
            rc = sl_seterr(err, errlen, "cannot inspect %s: %s", src, strerror(errno));
            break;
        }
        if (!S_ISREG(st.st_mode)) continue;
        int sst = has_suffix(de->d_name, ".sst");
        char *name = sl_sprintf("%s-%s%s", instance, de->d_name, sst ? "" : SL_INC_PRIVATE_SUFFIX);
        snprintf(dst, sizeof dst, "%s/%s", sst ? shared : snap_dir, name);
        struct stat have;
        uint64_t had = 0;
        if (s3 && sst && (rc = sl_store_size(dst, &had, err, errlen)) == SL_ERR) {
            free(name);
            break;
        }
        if (s3 && sst && rc == SL_OK && had == (uint64_t)st.st_size) {
            /* uploaded by an earlier checkpoint: referenced, not uploaded again */
        } else if (!s3 && sst && stat(dst, &have) == 0 && have.st_size == st.st_size) {
            /* uploaded by an earlier checkpoint: referenced, not copied */
        } else {
            rc = s3 ? sl_store_put_file(src, dst, NULL, err, errlen) : place(src, dst, err, errlen);
            out->written += (uint64_t)st.st_size;
        }
        rc = rc == SL_DONE ? SL_OK : rc;
        out->size += (uint64_t)st.st_size;
        if (sst) push(&out->shared, &out->nshared, name);
        else push(&out->priv, &out->npriv, name);
    }
    if (d) closedir(d);
    if (rc == SL_OK && !s3) rc = fsync_dir(shared, err, errlen);
    if (rc == SL_OK && !s3) rc = fsync_dir(snap_dir, err, errlen);
    free(shared);
    if (rc != SL_OK) {
        sl_inc_files_free(out);
        return rc;
    }
    /* a canonical order: the same state lists the same files the same way */
    if (out->nshared) qsort(out->shared, out->nshared, sizeof *out->shared, cmp_str);
    if (out->npriv) qsort(out->priv, out->npriv, sizeof *out->priv, cmp_str);
    return SL_OK;
}

static int empty_dir(const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return sl_mkdirs(dir, err, errlen);
        return sl_seterr(err, errlen, "cannot read %s: %s", dir, strerror(errno));
    }
    struct dirent *de;
    int rc = SL_OK;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
            unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT)
            rc = sl_seterr(err, errlen, "cannot empty %s: %s: %s", dir, de->d_name, strerror(errno));
    closedir(d);
    return rc;
}

int sl_inc_stage(const char *snap_dir, const Sluice__SubtaskState *ss, const char *stage_dir,
                 char *err, size_t errlen)
{
    if (empty_dir(stage_dir, err, errlen) != SL_OK) return SL_ERR;
    char *shared = sl_inc_shared_dir(snap_dir);
    int rc = SL_OK;
    for (size_t i = 0; rc == SL_OK && i < ss->n_shared_files + ss->n_private_files; i++) {
        int priv = i >= ss->n_shared_files;
        const char *name = priv ? ss->private_files[i - ss->n_shared_files] : ss->shared_files[i];
        if (!sl_inc_name_ok(name, priv)) {
            rc = sl_seterr(err, errlen, "_metadata names the %s file '%s' of subtask %u, which is "
                           "not a name incremental checkpoints write", priv ? "private" : "shared",
                           name, ss->subtask);
            break;
        }
        char src[4096], dst[4096];
        snprintf(src, sizeof src, "%s/%s", priv ? snap_dir : shared, name);
        size_t n = strlen(name + 17) - (priv ? strlen(SL_INC_PRIVATE_SUFFIX) : 0);
        snprintf(dst, sizeof dst, "%s/%.*s", stage_dir, (int)n, name + 17);
        if (access(src, R_OK) != 0)
            rc = sl_seterr(err, errlen, "the incremental checkpoint file %s of subtask %u is "
                           "missing or unreadable: %s", src, ss->subtask, strerror(errno));
        else
            rc = place(src, dst, err, errlen);
    }
    free(shared);
    return rc;
}

/* ---- reference counts ------------------------------------------------------- */

typedef struct ref { char *name; int count; } ref;

struct sl_shared_refs {
    ref *v;
    size_t n, cap;
};

sl_shared_refs *sl_shared_refs_new(void) { return sl_calloc(1, sizeof(sl_shared_refs)); }

void sl_shared_refs_free(sl_shared_refs *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) free(r->v[i].name);
    free(r->v);
    free(r);
}

/* Index of name, or where it would go (*found 0). */
static size_t find(const sl_shared_refs *r, const char *name, int *found)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->v[mid].name, name);
        if (!c) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

static int seen_before(char *const *names, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (!strcmp(names[k], names[i])) return 1;
    return 0;
}

void sl_shared_refs_add(sl_shared_refs *r, char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (seen_before(names, i)) continue;
        int found;
        size_t at = find(r, names[i], &found);
        if (found) {
            r->v[at].count++;
            continue;
        }
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 16;
            r->v = sl_realloc(r->v, r->cap * sizeof *r->v);
        }
        memmove(&r->v[at + 1], &r->v[at], (r->n - at) * sizeof *r->v);
        r->v[at].name = sl_strdup(names[i]);
        r->v[at].count = 1;
        r->n++;
    }
}

char **sl_shared_refs_release(sl_shared_refs *r, char *const *names, size_t n, size_t *ndead)
{
    char **dead = NULL;
    *ndead = 0;
    for (size_t i = 0; i < n; i++) {
        if (seen_before(names, i)) continue;
        int found;
        size_t at = find(r, names[i], &found);
        if (!found) continue; /* never counted (a checkpoint this JobManager did not see complete) */
        if (--r->v[at].count > 0) continue;
        push(&dead, ndead, r->v[at].name);
        memmove(&r->v[at], &r->v[at + 1], (r->n - at - 1) * sizeof *r->v);
        r->n--;
    }
    return dead;
}

int sl_shared_refs_count(const sl_shared_refs *r, const char *name)
{
    int found;
    size_t at = find(r, name, &found);
    return found ? r->v[at].count : 0;
}

size_t sl_shared_refs_size(const sl_shared_refs *r) { return r->n; }

const char *sl_shared_refs_name(const sl_shared_refs *r, size_t i) { return r->v[i].name; }

/* sl_inc_sweep of an s3:// shared directory (listing callback). */
typedef struct sweep_s3 {
    const char *dir;
    const char *const *keep;
    size_t n;
    char *err;
    size_t errlen;
} sweep_s3;

static int sweep_one(void *ctx, const char *name, uint64_t size)
{
    sweep_s3 *w = ctx;
    SL_UNUSED(size);
    const char *key = name;
    if (!sl_inc_name_ok(name, 0) || (w->n && bsearch(&key, w->keep, w->n, sizeof *w->keep, cmp_str)))
        return SL_OK;
    char *url = sl_sprintf("%s/%s", w->dir, name);
    int rc = sl_store_delete(url, w->err, w->errlen);
    free(url);
    return rc;
}

int sl_inc_sweep(const char *shared_dir, const char *const *keep, size_t n, char *err,
                 size_t errlen)
{
    if (sl_store_is_s3(shared_dir)) {
        sweep_s3 w = {shared_dir, keep, n, err, errlen};
        return sl_store_list(shared_dir, sweep_one, &w, err, errlen);
    }
    DIR *d = opendir(shared_dir);
    if (!d) {
        if (errno == ENOENT) return SL_OK;
        return sl_seterr(err, errlen, "cannot read %s: %s", shared_dir, strerror(errno));
    }
    int rc = SL_OK, left = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        int ours = sl_inc_name_ok(name, 0);
        if (!ours && has_suffix(name, ".tmp")) {
            char *base = sl_strndup(name, strlen(name) - 4);
            ours = sl_inc_name_ok(base, 0);
            free(base);
        }
        const char *key = name;
        if (!ours || (n && bsearch(&key, keep, n, sizeof *keep, cmp_str))) {
            left++;
            continue;
        }
        if (unlinkat(dirfd(d), name, 0) != 0 && errno != ENOENT) {
            rc = sl_seterr(err, errlen, "cannot remove %s/%s: %s", shared_dir, name, strerror(errno));
            left++;
        }
    }
    closedir(d);
    if (rc == SL_OK && !left && rmdir(shared_dir) != 0 && errno != ENOENT && errno != ENOTEMPTY)
        rc = sl_seterr(err, errlen, "cannot remove %s: %s", shared_dir, strerror(errno));
    return rc;
}

/* ---- a snapshot on S3, fetched for a restore --------------------------------- */

static int fetch_one(const char *url_dir, const char *name, const char *local_dir, char *err,
                     size_t errlen)
{
    char *dst = sl_sprintf("%s/%s", local_dir, name);
    int rc = SL_OK;
    if (access(dst, F_OK) != 0) { /* a shared file listed by several subtasks comes once */
        char *url = sl_sprintf("%s/%s", url_dir, name);
        rc = sl_store_get_file(url, dst, err, errlen);
        free(url);
    }
    free(dst);
    return rc;
}

int sl_snapshot_share(const Sluice__SubtaskState *ss, int keyed, int kg_first, int kg_last,
                      int takes_opstate, int union_state, int subtask, int parallelism)
{
    int share = 0;
    if (keyed && ss->kg_last >= (uint32_t)kg_first && ss->kg_first <= (uint32_t)kg_last)
        share |= SL_SHARE_KEYED;
    if (ss->has_opstate && takes_opstate &&
        (union_state || (int)(ss->subtask % (uint32_t)parallelism) == subtask))
        share |= SL_SHARE_OPSTATE;
    return share;
}

int sl_snapshot_fetch(const char *url, const Sluice__SnapshotMetadata *md,
                      int (*want)(void *ctx, const Sluice__OperatorState *os,
                                  const Sluice__SubtaskState *ss),
                      void *ctx, const char *local_dir, char *err, size_t errlen)
{
    char *shared_url = sl_inc_shared_dir(url), *shared = sl_inc_shared_dir(local_dir);
    int rc = sl_mkdirs(local_dir, err, errlen);
    for (size_t i = 0; rc == SL_OK && i < md->n_operators; i++) {
        const Sluice__OperatorState *os = md->operators[i];
        for (size_t k = 0; rc == SL_OK && k < os->n_subtasks; k++) {
            const Sluice__SubtaskState *ss = os->subtasks[k];
            if (want && !want(ctx, os, ss)) continue;
            if (ss->file && *ss->file) {
                if (strchr(ss->file, '/') || ss->file[0] == '.')
                    rc = sl_seterr(err, errlen, "%s/_metadata names the state file '%s', which is "
                                   "not a name snapshots write", url, ss->file);
                else
                    rc = fetch_one(url, ss->file, local_dir, err, errlen);
            }
            for (size_t f = 0; rc == SL_OK && f < ss->n_private_files; f++)
                rc = sl_inc_name_ok(ss->private_files[f], 1)
                         ? fetch_one(url, ss->private_files[f], local_dir, err, errlen)
                         : sl_seterr(err, errlen, "%s/_metadata names the private file '%s'", url,
                                     ss->private_files[f]);
            if (rc == SL_OK && ss->n_shared_files) rc = sl_mkdirs(shared, err, errlen);
            for (size_t f = 0; rc == SL_OK && f < ss->n_shared_files; f++)
                rc = sl_inc_name_ok(ss->shared_files[f], 0)
                         ? fetch_one(shared_url, ss->shared_files[f], shared, err, errlen)
                         : sl_seterr(err, errlen, "%s/_metadata names the shared file '%s'", url,
                                     ss->shared_files[f]);
        }
    }
    /* unaligned checkpoints: the in-flight data (chanstate.h) */
    for (size_t i = 0; rc == SL_OK && i < md->n_channel_states; i++) {
        const char *f = md->channel_states[i]->file;
        if (!f || !*f || strchr(f, '/') || f[0] == '.')
            rc = sl_seterr(err, errlen, "%s/_metadata names the channel-state file '%s', which is "
                           "not a name snapshots write", url, f ? f : "");
        else
            rc = fetch_one(url, f, local_dir, err, errlen);
    }
    free(shared_url);
    free(shared);
    return rc;
}
