/*
 * ha.c -- leader election, job persistence and recovery through ZooKeeper.
 *
 * Nodes, under <path.root>/<cluster-id> (docs/HA.md):
 *   leaderlatch/latch-<seq>   one ephemeral sequential node per JobManager;
 *                             the lowest sequence leads, each other one
 *                             watches its predecessor
 *   leader                    ephemeral, the leader's RPC and REST addresses
 *                             and its leader session (the fencing token
 *                             every DeployJob and RegisterAck carries)
 *   jobgraphs/<job id>        path of the submitted job in storageDir
 *   checkpoints/<job id>/<id> path of a completed checkpoint (its _metadata)
 *   checkpoint-counter/<job id>  the last checkpoint id handed out; set
 *                             with its version (compare-and-set), so no id
 *                             is ever used twice
 * Every write a leader makes is a multi-op that first checks that its
 * latch node still exists: a leader whose session ended cannot write.
 *
 * Threads: the watcher runs on the client's event thread and only posts a
 * JM_OP_HA op (type, state, path, handle generation); the ping completion
 * runs on its completion thread and only stores a time. The loop does the
 * rest, with the client's synchronous calls. `role` and `confirmed_ms` are
 * read by other threads (REST, the I/O worker) with atomics; the leader's
 * address for standby answers is copied under `mu`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ha.h"
#include "log.h"
#include "snapshot.h"
#include "store.h"
#include "zk.h"

#define TAG "jm:ha"

typedef struct jm_ha jm_ha;

/* The watcher's context: which handle generation an event comes from. */
typedef struct {
    jm_ha *h;
    int gen;
} watch_ctx;

struct jm_ha {
    jm *j;
    char *quorum;
    char *base, *latch_dir, *leader_path, *jobgraphs, *checkpoints, *counters;
    char *storage;              /* <storageDir>/<cluster-id> */
    int session_timeout_ms;
    zhandle_t *zh;              /* loop only */
    int gen;                    /* of zh: ops from an older handle are ignored */
    watch_ctx wctx[2];          /* the current handle's, and the one before (closed, but
                                   its last events may still be queued as ops) */
    char *latch_node;           /* our latch node (full path), or NULL */
    int last_rc;                /* of the last fenced() write */
    int role;                   /* jm_ha_role, atomic */
    int connected;              /* atomic */
    int64_t confirmed_ms;       /* atomic: send time of the last request the server answered */
    int64_t ping_sent_ms;       /* atomic */
    int64_t last_ping_ms;       /* loop */
    pthread_mutex_t mu;         /* guards leader_url */
    char leader_url[300];       /* the current leader's REST URL ("" unknown) */
    sl_zk_leader me;            /* what we publish when we lead */
};

static const char *role_names[] = {"OFF", "CONNECTING", "STANDBY", "LEADER", "SUSPENDED"};
const char *jm_ha_role_name(jm_ha_role r) { return role_names[r]; }

static int role_of(const jm_ha *h) { return __atomic_load_n(&h->role, __ATOMIC_ACQUIRE); }

static void set_role(jm_ha *h, jm_ha_role r, const char *why)
{
    int old = role_of(h);
    if (old == (int)r) return;
    __atomic_store_n(&h->role, (int)r, __ATOMIC_RELEASE);
    sl_info(TAG, "High availability: %s -> %s (%s)", role_names[old], role_names[r], why);
}

static void confirm(jm_ha *h, int64_t at)
{
    __atomic_store_n(&h->confirmed_ms, at, __ATOMIC_RELEASE);
}

int jm_ha_may_act(const jm *j)
{
    const jm_ha *h = j->ha;
    if (!h) return 1;
    if (role_of(h) != JM_HA_LEADER || !__atomic_load_n(&h->connected, __ATOMIC_ACQUIRE)) return 0;
    int64_t confirmed = __atomic_load_n(&h->confirmed_ms, __ATOMIC_ACQUIRE);
    /* the server expires the session session-timeout after it last heard
     * from us, which is no earlier than `confirmed`: stop acting well before */
    return sl_mono_ms() - confirmed < (int64_t)h->session_timeout_ms * 3 / 4;
}

/* ---- the watcher (ZooKeeper's thread): hand the event to the loop -------------- */

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    watch_ctx *w = ctx;
    jm_op *op = sl_calloc(1, sizeof *op);
    op->qm.type = JM_OP_HA;
    op->u.ha.type = type;
    op->u.ha.state = state;
    op->u.ha.gen = w->gen;
    snprintf(op->u.ha.path, sizeof op->u.ha.path, "%s", path ? path : "");
    jm_op_post(w->h->j, op);
}

static watch_ctx *wctx(jm_ha *h)
{
    /* the handle calls back only until zookeeper_close returns, so the
     * context of the handle before the current one is never used again */
    watch_ctx *w = &h->wctx[h->gen % 2];
    w->h = h;
    w->gen = h->gen;
    return w;
}

static int open_session(jm_ha *h, char *err, size_t errlen)
{
    h->gen++;
    h->zh = zookeeper_init(h->quorum, watcher, h->session_timeout_ms, NULL, wctx(h), 0);
    if (!h->zh)
        return sl_seterr(err, errlen, "high-availability.zookeeper.quorum '%s' is no usable server list (host:port,...): %s", h->quorum,
                         strerror(errno));
    return SL_OK;
}

/* ---- small synchronous helpers (loop) ----------------------------------------- */

static void note(jm_ha *h, int zrc, int64_t sent)
{
    if (zrc == ZOK || zrc == ZNONODE || zrc == ZNODEEXISTS || zrc == ZBADVERSION || zrc == ZNOTEMPTY)
        confirm(h, sent); /* the server answered on our session */
}

/* Create `path` and its parents (persistent, empty) where missing. */
static int ensure_path(jm_ha *h, const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = '\0';
        int64_t t = sl_mono_ms();
        int rc = zoo_create(h->zh, buf, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        note(h, rc, t);
        if (rc != ZOK && rc != ZNODEEXISTS) {
            sl_warn(TAG, "creating %s in ZooKeeper: %s", buf, zerror(rc));
            return SL_ERR;
        }
        *p = c;
        if (!c) break;
    }
    return SL_OK;
}

/* A write fenced on our leadership: check(latch) + the op. */
static int fenced(jm_ha *h, zoo_op_t *op, int nops, char *err, size_t errlen)
{
    if (!h->latch_node) return sl_seterr(err, errlen, "this JobManager is not the leader");
    zoo_op_t ops[4];
    zoo_op_result_t res[4];
    SL_ASSERT(nops <= 3);
    memset(res, 0, sizeof res); /* filled only when the server answered */
    zoo_check_op_init(&ops[0], h->latch_node, -1);
    memcpy(&ops[1], op, sizeof *op * (size_t)nops);
    int64_t t = sl_mono_ms();
    int rc = zoo_multi(h->zh, nops + 1, ops, res);
    note(h, rc, t);
    h->last_rc = rc;
    if (rc == ZOK) return SL_OK;
    if (res[0].err == ZNONODE)
        return sl_seterr(err, errlen, "leadership lost (the latch node %s is gone)", h->latch_node);
    return sl_seterr(err, errlen, "ZooKeeper: %s", zerror(rc));
}

static int get_data(jm_ha *h, const char *path, char *buf, int cap, struct Stat *st)
{
    int len = cap - 1;
    int64_t t = sl_mono_ms();
    int rc = zoo_get(h->zh, path, 0, buf, &len, st);
    note(h, rc, t);
    if (rc != ZOK) return rc;
    if (len < 0) len = 0;
    buf[len] = '\0';
    return ZOK;
}

/* ---- storageDir ----------------------------------------------------------------- */

/* storageDir is a local directory or an s3:// URL (core/store.h). These
 * four are the only places that tell the two apart. On S3 an object exists
 * only once its upload completed, which stands in for the local temp file
 * and rename. The calls are synchronous, as the ZooKeeper client's are:
 * they run at submission, rescale, recovery and a job's end, never per
 * record or per checkpoint, and s3.* timeouts bound them. */

/* Largest job file or C job object read back from storageDir. */
#define HA_MAX_OBJECT ((size_t)256 << 20)

static int storage_put(const char *path, const void *data, size_t len, char *err,
                       size_t errlen)
{
    if (sl_store_is_s3(path)) return sl_store_put_mem(path, data, len, err, errlen);
    const char *text = data;
    char *tmp = sl_sprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = SL_ERR;
    if (fd < 0) {
        sl_seterr(err, errlen, "%s: %s", tmp, strerror(errno));
    } else {
        size_t off = 0;
        while (off < len) {
            ssize_t n = write(fd, text + off, len - off);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            off += (size_t)n;
        }
        if (off != len || fsync(fd) != 0) sl_seterr(err, errlen, "writing %s: %s", tmp, strerror(errno));
        else if (rename(tmp, path) != 0) sl_seterr(err, errlen, "renaming %s: %s", tmp, strerror(errno));
        else rc = SL_OK;
        close(fd);
        if (rc != SL_OK) unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* The whole object at path (*data malloc'ed). SL_DONE when it is absent. */
static int storage_get(const char *path, void **data, size_t *len, char *err, size_t errlen)
{
    if (sl_store_is_s3(path)) return sl_store_get_mem(path, HA_MAX_OBJECT, data, len, err, errlen);
    Sluice__UserLibrary lib;
    sluice__user_library__init(&lib);
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        sl_seterr(err, errlen, "%s: no such file", path);
        return SL_DONE;
    }
    if (jm_jars_read_object(path, &lib, "", err, errlen) != SL_OK) {
        free(lib.data.data);
        if (lib.id != protobuf_c_empty_string) free(lib.id);
        return SL_ERR;
    }
    free(lib.id);
    *data = lib.data.data;
    *len = lib.data.len;
    return SL_OK;
}

/* Remove the object at path: SL_OK when it was there, SL_DONE when it was
 * not, SL_ERR when removing failed. */
static int storage_remove(const char *path)
{
    char err[300];
    if (!sl_store_is_s3(path)) return unlink(path) == 0 ? SL_OK : errno == ENOENT ? SL_DONE : SL_ERR;
    int rc = sl_store_size(path, NULL, err, sizeof err);
    if (rc == SL_OK) rc = sl_store_delete(path, err, sizeof err);
    if (rc == SL_ERR) sl_warn(TAG, "removing %s: %s", path, err);
    return rc;
}

static int storage_prepare(const char *dir, char *err, size_t errlen)
{
    return sl_store_is_s3(dir) ? SL_OK : sl_mkdirs(dir, err, errlen);
}

static char *job_file(jm_ha *h, const char *job_id)
{
    return sl_sprintf("%s/submittedJobGraph-%s.json", h->storage, job_id);
}

/* The i-th C job object a job's deployments ship (POST /jars/:id/run). */
static char *lib_file(jm_ha *h, const char *job_id, size_t i)
{
    return sl_sprintf("%s/submittedJobLib-%s-%zu.so", h->storage, job_id, i);
}

/* ---- persistence (loop) ---------------------------------------------------------- */

static void remove_lib_files(jm_ha *h, const char *job_id)
{
    for (size_t i = 0;; i++) {
        char *lp = lib_file(h, job_id, i);
        int gone = storage_remove(lp) != SL_OK;
        free(lp);
        if (gone) break;
    }
}

/* The job's file in storageDir: its graph and submission settings (and its
 * C job objects next to it), written atomically. */
static int write_job(jm_ha *h, const jm_job *job, char *err, size_t errlen)
{
    if (storage_prepare(h->storage, err, errlen) != SL_OK) return SL_ERR;
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:b}", "job-id", job->id, "name", job->g->name,
                          "graph", job->graph_json, "submitted", (json_int_t)job->start_ms,
                          "restore-checkpoint-id", (json_int_t)job->cp_counter,
                          "restore-is-savepoint", job->restored_is_savepoint);
    if (job->restore_dir) json_object_set_new(o, "restore-dir", json_string(job->restore_dir));
    /* the C job objects first: the graph file names them */
    json_t *libs = json_array();
    int rc = SL_OK;
    for (size_t i = 0; rc == SL_OK && i < job->nlibs; i++) {
        char *lp = lib_file(h, job->id, i);
        rc = storage_put(lp, job->libs[i]->data.data, job->libs[i]->data.len, err, errlen);
        json_array_append_new(libs, json_pack("{s:s,s:s}", "id", job->libs[i]->id, "file", lp));
        free(lp);
    }
    json_object_set_new(o, "libraries", libs);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    char *path = job_file(h, job->id);
    if (rc == SL_OK) rc = storage_put(path, text, strlen(text), err, errlen);
    free(text);
    free(path);
    return rc;
}

int jm_ha_job_rescaled(jm *j, const jm_job *job, char *err, size_t errlen)
{
    jm_ha *h = j->ha;
    if (!h) return SL_OK;
    if (!jm_ha_may_act(j))
        return sl_seterr(err, errlen, "this JobManager may not act now (%s)", role_names[role_of(h)]);
    int rc = write_job(h, job, err, errlen); /* the pointer znode names the same file */
    if (rc == SL_OK) sl_info(TAG, "Job %s persisted at its new parallelism.", job->id);
    return rc;
}

int jm_ha_job_submitted(jm *j, const jm_job *job, char *err, size_t errlen)
{
    jm_ha *h = j->ha;
    if (!h) return SL_OK;
    if (!jm_ha_may_act(j))
        return sl_seterr(err, errlen, "this JobManager cannot accept jobs now (%s)",
                         role_names[role_of(h)]);
    int rc = write_job(h, job, err, errlen);
    char *path = job_file(h, job->id);
    if (rc == SL_OK) {
        char *node = sl_sprintf("%s/%s", h->jobgraphs, job->id);
        zoo_op_t op;
        zoo_create_op_init(&op, node, path, (int)strlen(path), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        rc = fenced(h, &op, 1, err, errlen);
        free(node);
        if (rc == SL_OK) sl_info(TAG, "Job %s persisted: %s", job->id, path);
        else storage_remove(path);
    }
    if (rc != SL_OK) remove_lib_files(h, job->id);
    free(path);
    return rc;
}

/* A job that ended for good: nothing to recover any more. */
static void job_removed(jm_ha *h, const char *job_id)
{
    char err[300];
    char *node = sl_sprintf("%s/%s", h->jobgraphs, job_id);
    zoo_op_t op;
    zoo_delete_op_init(&op, node, -1);
    if (fenced(h, &op, 1, err, sizeof err) == SL_OK) {
        char *path = job_file(h, job_id);
        storage_remove(path);
        free(path);
        remove_lib_files(h, job_id);
        /* its checkpoint pointers and counter */
        char *cdir = sl_sprintf("%s/%s", h->checkpoints, job_id);
        struct String_vector kids = {0, NULL};
        if (zoo_get_children(h->zh, cdir, 0, &kids) == ZOK) {
            for (int i = 0; i < kids.count; i++) {
                char *k = sl_sprintf("%s/%s", cdir, kids.data[i]);
                zoo_delete(h->zh, k, -1);
                free(k);
            }
            deallocate_String_vector(&kids);
        }
        zoo_delete(h->zh, cdir, -1);
        char *ctr = sl_sprintf("%s/%s", h->counters, job_id);
        zoo_delete(h->zh, ctr, -1);
        free(ctr);
        free(cdir);
        sl_info(TAG, "Job %s removed from the high-availability store.", job_id);
    } else {
        sl_warn(TAG, "removing job %s from the high-availability store: %s", job_id, err);
    }
    free(node);
}

int jm_ha_next_checkpoint_id(jm *j, jm_job *job, uint64_t *id, char *err, size_t errlen)
{
    jm_ha *h = j->ha;
    if (!h) {
        *id = ++job->cp_counter;
        return SL_OK;
    }
    if (!jm_ha_may_act(j))
        return sl_seterr(err, errlen, "no checkpoint while this JobManager is %s", role_names[role_of(h)]);
    char *node = sl_sprintf("%s/%s", h->counters, job->id);
    int rc = SL_ERR;
    for (int attempt = 0; attempt < 5 && rc != SL_OK; attempt++) {
        char buf[64];
        struct Stat st;
        int zrc = get_data(h, node, buf, sizeof buf, &st);
        zoo_op_t op;
        uint64_t next;
        char val[32];
        if (zrc == ZNONODE) {
            next = job->cp_counter + 1;
            snprintf(val, sizeof val, "%llu", (unsigned long long)next);
            zoo_create_op_init(&op, node, val, (int)strlen(val), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        } else if (zrc == ZOK) {
            uint64_t cur = strtoull(buf, NULL, 10);
            next = SL_MAX(cur, job->cp_counter) + 1;
            snprintf(val, sizeof val, "%llu", (unsigned long long)next);
            zoo_set_op_init(&op, node, val, (int)strlen(val), st.version, NULL);
        } else {
            sl_seterr(err, errlen, "reading the checkpoint counter %s: %s", node, zerror(zrc));
            break;
        }
        if (fenced(h, &op, 1, err, errlen) == SL_OK) {
            job->cp_counter = next;
            *id = next;
            rc = SL_OK;
        } else if (h->last_rc != ZBADVERSION && h->last_rc != ZNODEEXISTS) {
            break; /* leadership lost or no connection: no retry */
        } /* else: a concurrent change (version or existence): read again */
    }
    free(node);
    return rc;
}

int jm_ha_checkpoint_completed(jm *j, const jm_job *job, uint64_t cp_id, const char *dir,
                               char *err, size_t errlen)
{
    jm_ha *h = j->ha;
    if (!h) return SL_OK;
    if (!jm_ha_may_act(j))
        return sl_seterr(err, errlen, "not recorded while this JobManager is %s", role_names[role_of(h)]);
    char *cdir = sl_sprintf("%s/%s", h->checkpoints, job->id);
    if (ensure_path(h, cdir) != SL_OK) {
        sl_seterr(err, errlen, "cannot create %s in ZooKeeper", cdir);
        free(cdir);
        return SL_ERR;
    }
    char *node = sl_sprintf("%s/%020llu", cdir, (unsigned long long)cp_id);
    zoo_op_t op;
    zoo_create_op_init(&op, node, dir, (int)strlen(dir), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    int rc = fenced(h, &op, 1, err, errlen);
    if (rc == SL_OK) {
        /* older pointers: the latest completed checkpoint is the one recovered */
        struct String_vector kids = {0, NULL};
        if (zoo_get_children(h->zh, cdir, 0, &kids) == ZOK) {
            for (int i = 0; i < kids.count; i++) {
                if (strtoull(kids.data[i], NULL, 10) >= cp_id) continue;
                char *k = sl_sprintf("%s/%s", cdir, kids.data[i]);
                zoo_delete(h->zh, k, -1);
                free(k);
            }
            deallocate_String_vector(&kids);
        }
    }
    free(node);
    free(cdir);
    return rc;
}

/* ---- recovery (loop, on becoming leader) ------------------------------------------- */

static void recover_job(jm_ha *h, const char *job_id)
{
    jm *j = h->j;
    if (jm_job_find(j, job_id)) return; /* still ours (leadership kept) */
    char *node = sl_sprintf("%s/%s", h->jobgraphs, job_id);
    char path[1024];
    int zrc = get_data(h, node, path, sizeof path, NULL);
    free(node);
    if (zrc != ZOK) {
        sl_error(TAG, "Job %s: reading its pointer: %s", job_id, zerror(zrc));
        return;
    }
    char err[1024];
    json_error_t je;
    void *text = NULL;
    size_t tlen = 0;
    json_t *o = NULL;
    if (storage_get(path, &text, &tlen, err, sizeof err) == SL_OK) {
        o = json_loadb(text, tlen, 0, &je);
        if (!o) snprintf(err, sizeof err, "line %d: %s", je.line, je.text);
    }
    free(text);
    const char *graph = json_string_value(json_object_get(o, "graph"));
    if (!graph) {
        sl_error(TAG, "Job %s cannot be recovered: %s: %s", job_id, path,
                 o ? "no \"graph\"" : err);
        json_decref(o);
        return;
    }
    sl_jobgraph *g = sl_jobgraph_parse(graph, strlen(graph), j->default_parallelism, 0, err, sizeof err);
    if (!g) {
        sl_error(TAG, "Job %s cannot be recovered: its graph in %s: %s", job_id, path, err);
        json_decref(o);
        return;
    }
    /* the C job objects its deployments ship */
    json_t *libs = json_object_get(o, "libraries");
    size_t nlibs = json_array_size(libs);
    Sluice__UserLibrary **lv = nlibs ? sl_calloc(nlibs, sizeof *lv) : NULL;
    for (size_t i = 0; i < nlibs; i++) {
        json_t *l = json_array_get(libs, i);
        const char *lid = json_string_value(json_object_get(l, "id"));
        const char *lp = json_string_value(json_object_get(l, "file"));
        lv[i] = sl_calloc(1, sizeof *lv[i]);
        sluice__user_library__init(lv[i]);
        void *data = NULL;
        size_t dlen = 0;
        int lrc = lid && lp ? storage_get(lp, &data, &dlen, err, sizeof err) : SL_ERR;
        if (lrc == SL_OK) {
            lv[i]->id = sl_strdup(lid);
            lv[i]->data.data = data;
            lv[i]->data.len = dlen;
        } else {
            free(data);
        }
        if (lrc != SL_OK) {
            sl_error(TAG, "Job %s cannot be recovered: its C job object: %s", job_id,
                     lid && lp ? err : "a library entry without \"id\" or \"file\"");
            for (size_t k = 0; k <= i; k++) jm_user_library_free(lv[k]);
            free(lv);
            sl_jobgraph_destroy(g);
            json_decref(o);
            return;
        }
    }
    jm_job *job = jm_job_recover(j, g, job_id);
    job->libs = lv;
    job->nlibs = nlibs;
    job->shared_untracked = 1; /* its retained checkpoints' shared files are not counted here */
    const char *rdir = json_string_value(json_object_get(o, "restore-dir"));
    if (rdir) { /* submitted with a savepoint: until a checkpoint completes */
        job->restore_dir = sl_strdup(rdir);
        job->cp_counter = (uint64_t)json_integer_value(json_object_get(o, "restore-checkpoint-id"));
        job->restored_is_savepoint = json_is_true(json_object_get(o, "restore-is-savepoint"));
    }
    json_decref(o);
    /* the latest completed checkpoint */
    char *cdir = sl_sprintf("%s/%s", h->checkpoints, job_id);
    struct String_vector kids = {0, NULL};
    uint64_t best = 0;
    if (zoo_get_children(h->zh, cdir, 0, &kids) == ZOK) {
        for (int i = 0; i < kids.count; i++) best = SL_MAX(best, strtoull(kids.data[i], NULL, 10));
        deallocate_String_vector(&kids);
    }
    if (best) {
        char *k = sl_sprintf("%s/%020llu", cdir, (unsigned long long)best);
        char dir[1024];
        if (get_data(h, k, dir, sizeof dir, NULL) == ZOK) {
            free(job->restore_dir);
            job->restore_dir = sl_strdup(dir);
            free(job->restore_point);
            job->restore_point = sl_strdup(dir);
            job->restore_point_id = best;
            job->cp_counter = SL_MAX(job->cp_counter, best);
            job->restored_is_savepoint = 0;
        }
        free(k);
    }
    free(cdir);
    sl_info(TAG, "Recovered job %s (%s)%s%s.", job_id, g->name,
            job->restore_dir ? ", restoring from " : ", from its start",
            job->restore_dir ? job->restore_dir : "");
}

static void recover_jobs(jm_ha *h)
{
    struct String_vector kids = {0, NULL};
    int64_t t = sl_mono_ms();
    int rc = zoo_get_children(h->zh, h->jobgraphs, 0, &kids);
    note(h, rc, t);
    if (rc != ZOK) {
        sl_error(TAG, "listing %s: %s", h->jobgraphs, zerror(rc));
        return;
    }
    for (int i = 0; i < kids.count; i++) recover_job(h, kids.data[i]);
    deallocate_String_vector(&kids);
}

/* ---- election (loop) -------------------------------------------------------------- */

static void publish(jm_ha *h)
{
    char err[300];
    char *json = sl_zk_leader_json(&h->me);
    struct Stat st;
    char buf[1024];
    zoo_op_t ops[2];
    int n = 0;
    /* a leader node left by our own earlier leadership (same session) */
    if (get_data(h, h->leader_path, buf, sizeof buf, &st) == ZOK) {
        zoo_delete_op_init(&ops[n++], h->leader_path, st.version);
    }
    zoo_create_op_init(&ops[n++], h->leader_path, json, (int)strlen(json), &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_EPHEMERAL, NULL, 0);
    if (fenced(h, ops, n, err, sizeof err) != SL_OK)
        sl_warn(TAG, "publishing the leader address: %s", err);
    pthread_mutex_lock(&h->mu);
    snprintf(h->leader_url, sizeof h->leader_url, "%s", h->me.rest_url);
    pthread_mutex_unlock(&h->mu);
    free(json);
}

static void grant(jm_ha *h)
{
    jm *j = h->j;
    char sess[17];
    sl_random_hex(sess, 16);
    j->session = strtoull(sess, NULL, 16) | 1;
    h->me.session = j->session;
    set_role(h, JM_HA_LEADER, "granted leadership");
    sl_info(TAG, "JobManager %s was granted leadership with leader session %016llx.", h->me.rest_url,
            (unsigned long long)j->session);
    publish(h);
    recover_jobs(h);
    jm_schedule(j);
}

/* Leadership is gone (session expired, latch node lost): stop at once.
 * TaskManagers are let go without being told anything (their tasks now
 * belong to the next leader); the jobs leave this JobManager's memory. */
static void step_down(jm_ha *h, const char *why)
{
    jm *j = h->j;
    int was = role_of(h);
    set_role(h, JM_HA_STANDBY, why);
    if (was != JM_HA_LEADER && was != JM_HA_SUSPENDED) return;
    sl_warn(TAG, "JobManager lost its leadership (%s): its jobs are suspended here.", why);
    jm_jobs_suspend_all(j);
    jm_rpc_close_all(j, "this JobManager lost its leadership");
    pthread_mutex_lock(&h->mu);
    h->leader_url[0] = '\0';
    pthread_mutex_unlock(&h->mu);
}

static void read_leader(jm_ha *h)
{
    char buf[2048];
    int len, rc;
    sl_zk_leader l;
    for (int round = 0; round < 3; round++) {
        len = sizeof buf - 1;
        int64_t t = sl_mono_ms();
        rc = zoo_wget(h->zh, h->leader_path, watcher, wctx(h), buf, &len, NULL);
        note(h, rc, t);
        /* none yet: watch for its creation, unless it was created meanwhile */
        if (rc != ZNONODE || zoo_wexists(h->zh, h->leader_path, watcher, wctx(h), NULL) != ZOK) break;
    }
    int ok = rc == ZOK && sl_zk_leader_parse(buf, len, &l) == SL_OK;
    pthread_mutex_lock(&h->mu);
    snprintf(h->leader_url, sizeof h->leader_url, "%s", ok ? l.rest_url : "");
    pthread_mutex_unlock(&h->mu);
}

static int seq_of(const char *name)
{
    const char *d = strrchr(name, '-');
    return d ? atoi(d + 1) : -1;
}

static void check_leadership(jm_ha *h)
{
    for (int round = 0; round < 10; round++) {
        if (!__atomic_load_n(&h->connected, __ATOMIC_ACQUIRE)) return;
        if (!h->latch_node) {
            if (ensure_path(h, h->latch_dir) != SL_OK || ensure_path(h, h->jobgraphs) != SL_OK ||
                ensure_path(h, h->checkpoints) != SL_OK || ensure_path(h, h->counters) != SL_OK)
                return;
            char *prefix = sl_sprintf("%s/latch-", h->latch_dir);
            char made[1024];
            int64_t t = sl_mono_ms();
            int rc = zoo_create(h->zh, prefix, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                                ZOO_EPHEMERAL | ZOO_SEQUENCE, made, sizeof made);
            note(h, rc, t);
            free(prefix);
            if (rc != ZOK) {
                sl_warn(TAG, "joining the election: %s", zerror(rc));
                return;
            }
            h->latch_node = sl_strdup(made);
            sl_info(TAG, "Joined the leader election as %s.", made);
        }
        struct String_vector kids = {0, NULL};
        int64_t t = sl_mono_ms();
        int rc = zoo_get_children(h->zh, h->latch_dir, 0, &kids);
        note(h, rc, t);
        if (rc != ZOK) {
            sl_warn(TAG, "listing %s: %s", h->latch_dir, zerror(rc));
            return;
        }
        const char *mine = strrchr(h->latch_node, '/') + 1;
        int my_seq = seq_of(mine), found = 0, pred_seq = -1;
        char pred[512] = "";
        for (int i = 0; i < kids.count; i++) {
            int s = seq_of(kids.data[i]);
            if (!strcmp(kids.data[i], mine)) found = 1;
            else if (s < my_seq && s > pred_seq) {
                pred_seq = s;
                snprintf(pred, sizeof pred, "%s/%s", h->latch_dir, kids.data[i]);
            }
        }
        deallocate_String_vector(&kids);
        if (!found) { /* our node is gone (it should not be while the session lives) */
            if (role_of(h) == JM_HA_LEADER || role_of(h) == JM_HA_SUSPENDED)
                step_down(h, "latch node vanished");
            free(h->latch_node);
            h->latch_node = NULL;
            continue;
        }
        if (!pred[0]) {
            if (role_of(h) != JM_HA_LEADER) grant(h);
            return;
        }
        if (role_of(h) == JM_HA_LEADER || role_of(h) == JM_HA_SUSPENDED)
            step_down(h, "a lower latch node appeared"); /* cannot happen with sequential nodes */
        t = sl_mono_ms();
        rc = zoo_wexists(h->zh, pred, watcher, wctx(h), NULL);
        note(h, rc, t);
        if (rc == ZNONODE) continue; /* gone meanwhile: look again */
        set_role(h, JM_HA_STANDBY, "another JobManager leads");
        read_leader(h);
        return;
    }
}

void jm_ha_on_loop(jm *j, const jm_op *op)
{
    jm_ha *h = j->ha;
    if (!h || op->u.ha.gen != h->gen || j->stopping) return; /* an older session's */
    int type = op->u.ha.type, state = op->u.ha.state;
    if (type != ZOO_SESSION_EVENT) {
        if (!strcmp(op->u.ha.path, h->leader_path) && role_of(h) != JM_HA_LEADER) read_leader(h);
        else check_leadership(h);
        return;
    }
    if (state == ZOO_CONNECTED_STATE) {
        __atomic_store_n(&h->connected, 1, __ATOMIC_RELEASE);
        confirm(h, sl_mono_ms());
        sl_info(TAG, "ZooKeeper connection established (%s).", h->quorum);
        if (role_of(h) == JM_HA_SUSPENDED) set_role(h, JM_HA_LEADER, "ZooKeeper connection resumed");
        check_leadership(h);
        if (role_of(h) == JM_HA_LEADER) jm_schedule(j);
    } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
        __atomic_store_n(&h->connected, 0, __ATOMIC_RELEASE);
        sl_warn(TAG, "ZooKeeper session %s; opening a new one.",
                state == ZOO_EXPIRED_SESSION_STATE ? "expired" : "failed authentication");
        step_down(h, "ZooKeeper session expired");
        set_role(h, JM_HA_CONNECTING, "new ZooKeeper session");
        free(h->latch_node);
        h->latch_node = NULL;
        zookeeper_close(h->zh);
        h->zh = NULL;
        char err[300];
        if (open_session(h, err, sizeof err) != SL_OK) sl_error(TAG, "%s", err);
    } else { /* CONNECTING / ASSOCIATING: suspended */
        __atomic_store_n(&h->connected, 0, __ATOMIC_RELEASE);
        sl_warn(TAG, "ZooKeeper connection suspended (state %d).", state);
        if (role_of(h) == JM_HA_LEADER)
            set_role(h, JM_HA_SUSPENDED, "ZooKeeper connection suspended: scheduling and checkpointing paused");
    }
}

/* ---- pings: keep the leadership confirmed (loop sends, completion thread records) ---- */

static void on_ping(int rc, const struct Stat *stat, const void *data)
{
    jm_ha *h = (jm_ha *)data;
    if (rc == ZOK) confirm(h, __atomic_load_n(&h->ping_sent_ms, __ATOMIC_ACQUIRE));
}

void jm_ha_tick(jm *j)
{
    jm_ha *h = j->ha;
    if (!h || !h->zh) return;
    int64_t now = sl_mono_ms();
    if (h->latch_node && __atomic_load_n(&h->connected, __ATOMIC_ACQUIRE) &&
        now - h->last_ping_ms >= h->session_timeout_ms / 6) {
        h->last_ping_ms = now;
        __atomic_store_n(&h->ping_sent_ms, now, __ATOMIC_RELEASE);
        zoo_aexists(h->zh, h->latch_node, 0, on_ping, h);
    }
    if (!jm_ha_may_act(j)) return;
    /* jobs that ended for good leave the store */
    for (jm_job *job = j->jobs; job; job = job->next)
        if (!job->ha_removed && (job->state == JOB_FINISHED || job->state == JOB_CANCELED ||
                                 job->state == JOB_FAILED)) {
            job->ha_removed = 1;
            job_removed(h, job->id);
        }
}

/* ---- start / stop ------------------------------------------------------------------ */

int jm_ha_start(jm *j, char *err, size_t errlen)
{
    if (!sl_ha_enabled(j->conf)) return SL_OK;
    const char *quorum = sl_config_str(j->conf, "high-availability.zookeeper.quorum");
    const char *storage = sl_config_str(j->conf, "high-availability.storageDir");
    if (!quorum || !*quorum)
        return sl_seterr(err, errlen, "high-availability.type is zookeeper: set high-availability.zookeeper.quorum");
    if (!storage || !*storage)
        return sl_seterr(err, errlen, "high-availability.type is zookeeper: set high-availability.storageDir");
    if (sl_store_is_s3(storage) && sl_store_check_url(storage, err, errlen) != SL_OK) return SL_ERR;
    sl_zk_quiet_log();
    jm_ha *h = sl_calloc(1, sizeof *h);
    h->j = j;
    h->quorum = sl_strdup(quorum);
    h->base = sl_zk_path(j->conf, "");
    h->latch_dir = sl_zk_path(j->conf, "leaderlatch");
    h->leader_path = sl_zk_path(j->conf, "leader");
    h->jobgraphs = sl_zk_path(j->conf, "jobgraphs");
    h->checkpoints = sl_zk_path(j->conf, "checkpoints");
    h->counters = sl_zk_path(j->conf, "checkpoint-counter");
    const char *cid = sl_config_str(j->conf, "high-availability.cluster-id");
    while (*cid == '/') cid++;
    h->storage = sl_sprintf("%s/%s", storage, *cid ? cid : "default");
    h->session_timeout_ms = (int)sl_config_int(j->conf, "high-availability.zookeeper.client.session-timeout");
    pthread_mutex_init(&h->mu, NULL);
    const char *host = sl_config_str(j->conf, "jobmanager.rpc.address");
    snprintf(h->me.rpc_host, sizeof h->me.rpc_host, "%s", host);
    h->me.rpc_port = j->rpc_port;
    snprintf(h->me.rest_url, sizeof h->me.rest_url, "%s://%s:%d",
             sl_config_bool(j->conf, "security.ssl.rest.enabled") ? "https" : "http",
             sl_config_str(j->conf, "rest.address"),
             j->rest_port);
    h->role = JM_HA_CONNECTING;
    j->ha = h;
    if (open_session(h, err, errlen) != SL_OK) {
        jm_ha_stop(j);
        return SL_ERR;
    }
    sl_info(TAG, "High availability through ZooKeeper %s at %s; storage %s.", quorum, h->base, h->storage);
    return SL_OK;
}

void jm_ha_stop(jm *j)
{
    jm_ha *h = j->ha;
    if (!h) return;
    if (h->zh) zookeeper_close(h->zh); /* our ephemeral nodes go at once: a standby takes over */
    j->ha = NULL;
    pthread_mutex_destroy(&h->mu);
    free(h->quorum);
    free(h->base);
    free(h->latch_dir);
    free(h->leader_path);
    free(h->jobgraphs);
    free(h->checkpoints);
    free(h->counters);
    free(h->storage);
    free(h->latch_node);
    free(h);
}

/* ---- REST ------------------------------------------------------------------------- */

json_t *jm_ha_json(const jm *j)
{
    jm_ha *h = j->ha;
    if (!h) return json_pack("{s:b,s:s}", "enabled", 0, "role", "leader");
    char url[300];
    pthread_mutex_lock(&h->mu);
    snprintf(url, sizeof url, "%s", h->leader_url);
    pthread_mutex_unlock(&h->mu);
    int r = role_of(h);
    return json_pack("{s:b,s:s,s:s,s:s,s:s,s:b}", "enabled", 1, "role", role_names[r],
                     "leader-rest-url", url, "rest-url", h->me.rest_url, "zookeeper", h->quorum,
                     "zookeeper-connected", __atomic_load_n(&h->connected, __ATOMIC_ACQUIRE) != 0);
}

int jm_ha_rest_refuse(const jm *j, int *status, json_t **json)
{
    jm_ha *h = j->ha;
    if (!h) return 0;
    int r = role_of(h);
    if (r == JM_HA_LEADER || r == JM_HA_SUSPENDED) return 0;
    char url[300];
    pthread_mutex_lock(&h->mu);
    snprintf(url, sizeof url, "%s", h->leader_url);
    pthread_mutex_unlock(&h->mu);
    *status = 503;
    *json = json_pack("{s:[s],s:s,s:s}", "errors",
                      "Service temporarily unavailable due to an ongoing leader election. Please refresh.",
                      "role", role_names[r], "leader-rest-url", url);
    return 1;
}
