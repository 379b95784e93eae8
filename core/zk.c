/*
 * zk.c -- shared ZooKeeper pieces (zk.h): paths, the leader znode, and the
 * leader retriever used by TaskManagers and the CLI.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "log.h"
#include "sl.h"
#include "zk.h"

#define TAG "zk"

int sl_ha_enabled(const sl_config *c)
{
    const char *t = sl_config_str(c, "high-availability.type");
    return t && !strcmp(t, "zookeeper");
}

/* Append `part` to buf as one or more "/x" segments (no doubled or trailing '/'). */
static void append_segments(char *buf, size_t cap, const char *part)
{
    size_t used = strlen(buf);
    for (const char *p = part; *p;) {
        while (*p == '/') p++;
        if (!*p) break;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (used + n + 2 < cap) {
            buf[used++] = '/';
            memcpy(buf + used, p, n);
            used += n;
            buf[used] = '\0';
        }
        p += n;
    }
}

char *sl_zk_path(const sl_config *c, const char *sub)
{
    char buf[1024] = "";
    append_segments(buf, sizeof buf, sl_config_str(c, "high-availability.zookeeper.path.root"));
    append_segments(buf, sizeof buf, sl_config_str(c, "high-availability.cluster-id"));
    append_segments(buf, sizeof buf, sub ? sub : "");
    return sl_strdup(buf[0] ? buf : "/");
}

static void set_log(void)
{
    zoo_set_log_stream(stderr);
    zoo_set_debug_level(sl_log_level <= SL_LOG_DEBUG ? ZOO_LOG_LEVEL_INFO : ZOO_LOG_LEVEL_WARN);
}

void sl_zk_quiet_log(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, set_log);
}

char *sl_zk_leader_json(const sl_zk_leader *l)
{
    char sess[17];
    snprintf(sess, sizeof sess, "%016llx", (unsigned long long)l->session);
    json_t *o = json_pack("{s:s,s:i,s:s,s:s}", "rpc-address", l->rpc_host, "rpc-port", l->rpc_port,
                          "rest-url", l->rest_url, "session", sess);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

int sl_zk_leader_parse(const char *data, int len, sl_zk_leader *out)
{
    if (!data || len <= 0) return SL_ERR;
    json_error_t je;
    json_t *o = json_loadb(data, (size_t)len, 0, &je);
    const char *host = json_string_value(json_object_get(o, "rpc-address"));
    const char *rest = json_string_value(json_object_get(o, "rest-url"));
    const char *sess = json_string_value(json_object_get(o, "session"));
    json_int_t port = json_integer_value(json_object_get(o, "rpc-port"));
    int rc = SL_ERR;
    if (host && rest && sess && port > 0 && port < 65536 && strlen(host) < sizeof out->rpc_host &&
        strlen(rest) < sizeof out->rest_url) {
        memset(out, 0, sizeof *out);
        snprintf(out->rpc_host, sizeof out->rpc_host, "%s", host);
        snprintf(out->rest_url, sizeof out->rest_url, "%s", rest);
        out->rpc_port = (int)port;
        out->session = strtoull(sess, NULL, 16);
        rc = out->session ? SL_OK : SL_ERR;
    }
    json_decref(o);
    return rc;
}

/* ---- retriever -------------------------------------------------------------- */

struct sl_zk_retriever {
    const sl_config *conf;
    char *quorum;
    char *leader_path;
    int timeout_ms;
    void (*changed)(void *);
    void *arg;
    pthread_mutex_t mu;         /* guards everything below */
    zhandle_t *zh;
    int has_leader;
    sl_zk_leader leader;
    int64_t disconnected_since; /* 0 while connected */
    int stopping;
    int expired;                /* the session expired: a new handle is needed */
};

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* The leader appeared meanwhile (the exists call raced with its creation):
 * read it; else the watch set by the call tells us when it comes. */
static void on_leader_exists(int rc, const struct Stat *stat, const void *data);

/* Completion of the leader read (ZooKeeper's completion thread). */
static void on_leader_data(int rc, const char *value, int value_len, const struct Stat *stat,
                           const void *data)
{
    sl_zk_retriever *r = (sl_zk_retriever *)data;
    sl_zk_leader l;
    int ok = rc == ZOK && sl_zk_leader_parse(value, value_len, &l) == SL_OK;
    pthread_mutex_lock(&r->mu);
    int was = r->has_leader;
    if (ok) r->leader = l;
    r->has_leader = ok;
    int nonode = rc == ZNONODE && !r->stopping;
    zhandle_t *zh = r->zh;
    pthread_mutex_unlock(&r->mu);
    if (nonode && zh) /* no leader right now: watch for one to appear */
        zoo_awexists(zh, r->leader_path, watcher, r, on_leader_exists, r);
    if (ok || was) r->changed(r->arg);
}

static void read_leader(sl_zk_retriever *r, zhandle_t *zh)
{
    zoo_awget(zh, r->leader_path, watcher, r, on_leader_data, r);
}

static void on_leader_exists(int rc, const struct Stat *stat, const void *data)
{
    sl_zk_retriever *r = (sl_zk_retriever *)data;
    pthread_mutex_lock(&r->mu);
    zhandle_t *zh = r->stopping ? NULL : r->zh;
    pthread_mutex_unlock(&r->mu);
    if (rc == ZOK && zh) read_leader(r, zh);
}

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    sl_zk_retriever *r = ctx;
    if (type == ZOO_SESSION_EVENT) {
        pthread_mutex_lock(&r->mu);
        if (state == ZOO_CONNECTED_STATE) {
            r->disconnected_since = 0;
        } else if (!r->disconnected_since) {
            r->disconnected_since = sl_mono_ms();
        }
        if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            r->expired = 1;
            r->has_leader = 0;
        }
        pthread_mutex_unlock(&r->mu);
        if (state == ZOO_CONNECTED_STATE) read_leader(r, zh);
        r->changed(r->arg);
        return;
    }
    /* created, deleted or changed: read it again (and watch again) */
    read_leader(r, zh);
}

sl_zk_retriever *sl_zk_retriever_start(const sl_config *c, void (*changed)(void *), void *arg,
                                       char *err, size_t errlen)
{
    const char *quorum = sl_config_str(c, "high-availability.zookeeper.quorum");
    if (!quorum || !*quorum) {
        sl_seterr(err, errlen, "high-availability.type is zookeeper but high-availability.zookeeper.quorum is empty");
        return NULL;
    }
    sl_zk_quiet_log();
    sl_zk_retriever *r = sl_calloc(1, sizeof *r);
    r->conf = c;
    r->quorum = sl_strdup(quorum);
    r->leader_path = sl_zk_path(c, "leader");
    r->timeout_ms = (int)sl_config_int(c, "high-availability.zookeeper.client.session-timeout");
    r->changed = changed;
    r->arg = arg;
    r->disconnected_since = sl_mono_ms();
    pthread_mutex_init(&r->mu, NULL);
    r->zh = zookeeper_init(r->quorum, watcher, r->timeout_ms, NULL, r, 0);
    if (!r->zh) {
        sl_seterr(err, errlen, "high-availability.zookeeper.quorum '%s' is no usable server list (host:port,...): %s", quorum, strerror(errno));
        sl_zk_retriever_stop(r);
        return NULL;
    }
    return r;
}

int sl_zk_retriever_get(sl_zk_retriever *r, sl_zk_leader *out)
{
    pthread_mutex_lock(&r->mu);
    int expired = r->expired && !r->stopping;
    zhandle_t *old = expired ? r->zh : NULL;
    if (expired) {
        r->expired = 0;
        r->zh = NULL;
    }
    int rc = r->has_leader ? SL_OK : SL_AGAIN;
    if (r->has_leader) *out = r->leader;
    pthread_mutex_unlock(&r->mu);
    if (expired) {
        /* a new session (from the owner's thread, never a ZooKeeper one) */
        sl_warn(TAG, "ZooKeeper session expired; opening a new one");
        zookeeper_close(old);
        zhandle_t *zh = zookeeper_init(r->quorum, watcher, r->timeout_ms, NULL, r, 0);
        pthread_mutex_lock(&r->mu);
        r->zh = zh;
        pthread_mutex_unlock(&r->mu);
    }
    return rc;
}

int64_t sl_zk_retriever_disconnected_ms(sl_zk_retriever *r)
{
    pthread_mutex_lock(&r->mu);
    int64_t since = r->disconnected_since;
    pthread_mutex_unlock(&r->mu);
    return since ? sl_mono_ms() - since : 0;
}

void sl_zk_retriever_stop(sl_zk_retriever *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stopping = 1;
    zhandle_t *zh = r->zh;
    r->zh = NULL;
    pthread_mutex_unlock(&r->mu);
    if (zh) zookeeper_close(zh); /* joins the client's threads: no callback runs after */
    pthread_mutex_destroy(&r->mu);
    free(r->quorum);
    free(r->leader_path);
    free(r);
}

/* ---- one-shot ------------------------------------------------------------------ */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int state;
} once_ctx;

static void once_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    once_ctx *o = ctx;
    if (type != ZOO_SESSION_EVENT) return;
    pthread_mutex_lock(&o->mu);
    o->state = state;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->mu);
}

int sl_zk_leader_once(const sl_config *c, sl_zk_leader *out, char *err, size_t errlen)
{
    const char *quorum = sl_config_str(c, "high-availability.zookeeper.quorum");
    if (!quorum || !*quorum)
        return sl_seterr(err, errlen, "high-availability.type is zookeeper but high-availability.zookeeper.quorum is empty");
    sl_zk_quiet_log();
    once_ctx o = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int64_t timeout = sl_config_int(c, "high-availability.zookeeper.client.connection-timeout");
    zhandle_t *zh = zookeeper_init(quorum, once_watcher, (int)sl_config_int(c, "high-availability.zookeeper.client.session-timeout"), NULL, &o, 0);
    if (!zh) return sl_seterr(err, errlen, "high-availability.zookeeper.quorum '%s' is no usable server list (host:port,...): %s", quorum, strerror(errno));
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)(timeout / 1000);
    deadline.tv_nsec += (long)(timeout % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&o.mu);
    while (o.state != ZOO_CONNECTED_STATE)
        if (pthread_cond_timedwait(&o.cond, &o.mu, &deadline) == ETIMEDOUT) break;
    int connected = o.state == ZOO_CONNECTED_STATE;
    pthread_mutex_unlock(&o.mu);
    int rc = SL_ERR;
    if (!connected) {
        sl_seterr(err, errlen, "cannot connect to ZooKeeper (%s) within %lld ms", quorum, (long long)timeout);
    } else {
        char *path = sl_zk_path(c, "leader");
        char buf[2048];
        int len = sizeof buf;
        int zrc = zoo_get(zh, path, 0, buf, &len, NULL);
        if (zrc == ZNONODE) sl_seterr(err, errlen, "no JobManager leads the cluster (%s is absent)", path);
        else if (zrc != ZOK) sl_seterr(err, errlen, "reading %s from ZooKeeper: %s", path, zerror(zrc));
        else if (sl_zk_leader_parse(buf, len, out) != SL_OK) sl_seterr(err, errlen, "%s holds no leader address", path);
        else rc = SL_OK;
        free(path);
    }
    zookeeper_close(zh);
    return rc;
}
