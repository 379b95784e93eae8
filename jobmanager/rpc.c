/*
 * rpc.c -- the JobManager's RPC side: TaskManager connections on
 * jobmanager.rpc.port, registration, heartbeats, and the timers that notice
 * lost TaskManagers and jobs waiting too long for slots.
 *
 * Everything here runs on the loop thread, which owns the state it changes,
 * so no callback takes a lock. A connection must open with a Hello of our
 * protocol version; garbage, an oversized frame or a wrong version closes
 * that connection with a logged reason and nothing else.
 *
 * Until a connection has proven itself -- Hello, the cluster secret's proof
 * when one is set, and an accepted registration -- it is held to little:
 * frames of at most SL_MAX_PREAUTH_FRAME_BYTES (refused from their length
 * alone, and the socket is not read beyond one such frame), a handshake
 * deadline of SL_HANDSHAKE_TIMEOUT_MS from accept (checked on the tick), and
 * at most SL_MAX_PREAUTH_CONNECTIONS such connections at once, the oldest
 * closed first when another arrives. So silent or dribbling peers cost a
 * bounded few MiB and cannot keep a TaskManager from registering.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <event2/listener.h>
#include <event2/buffer.h>
#include <event2/thread.h>

#include "jm.h"
#include "proc_info.h"
#include "ha.h"
#include "frame.h"
#include "listen.h"
#include "log.h"

#define TAG "jm:rpc"

static void conn_close(jm_conn *c, const char *why)
{
    jm *j = c->jm;
    if (why) sl_warn(TAG, "closing connection from %s: %s", c->peer, why);
    if (c->tm) {
        jm_tm *tm = c->tm;
        tm->conn = NULL;
        c->tm = NULL;
        jm_on_tm_lost(j, tm, why ? why : "connection closed");
    }
    for (jm_conn **p = &j->conns; *p; p = &(*p)->next)
        if (*p == c) { *p = c->next; break; }
    bufferevent_free(c->bev);
    free(c->peer_id);
    free(c);
}

static void send_env(jm_conn *c, Sluice__Envelope *env) { jm_send_conn(c, env); }
static void on_event(struct bufferevent *bev, short what, void *arg);

/* The state backend a TaskManager reports, if it is a plausible name
 * (letters, digits, '-', '_'; at most 32): it ends up in REST's JSON. An
 * older TaskManager sends none. */
static const char *backend_name(const char *b)
{
    if (!b || !*b || strlen(b) > 32) return "unknown";
    for (const char *p = b; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return "unknown";
    return b;
}

static void on_register(jm_conn *c, const Sluice__RegisterTaskManager *r)
{
    jm *j = c->jm;
    Sluice__RegisterAck ack = SLUICE__REGISTER_ACK__INIT;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_REGISTER_ACK;
    env.register_ack = &ack;
    if (!r->id || !*r->id || !r->host || r->slots < 1 || r->slots > 1024 || r->data_port == 0 ||
        r->data_port > 65535) {
        ack.accepted = 0;
        ack.reason = "registration needs an id, a host, a data port and 1..1024 slots";
        send_env(c, &env);
        return;
    }
    if (!jm_ha_may_act(j)) {
        ack.accepted = 0;
        ack.reason = "this JobManager is not the leader";
        send_env(c, &env);
        return;
    }
    jm_tm *old = jm_tm_find(j, r->id);
    if (old) {
        /* The same TaskManager again (it restarted, or lost us): forget the
         * old incarnation and everything that ran there. */
        if (old->conn && old->conn != c) {
            jm_conn *oc = old->conn;
            old->conn = NULL;
            oc->tm = NULL;
        }
        jm_on_tm_lost(j, old, "registered again");
    }
    jm_tm *tm = sl_calloc(1, sizeof *tm);
    tm->id = sl_strdup(r->id);
    tm->host = sl_strdup(r->host);
    tm->data_port = (int)r->data_port;
    tm->slots = (int)r->slots;
    tm->cpu_cores = (int)r->cpu_cores;
    tm->physical_memory = r->physical_memory;
    tm->free_memory = r->free_memory;
    tm->managed_memory = r->managed_memory;
    tm->state_backend = sl_strdup(backend_name(r->state_backend));
    tm->last_heartbeat_ms = sl_mono_ms();
    tm->registered_ms = sl_now_ms();
    tm->slot_job = sl_calloc((size_t)tm->slots, sizeof(jm_job *));
    tm->conn = c;
    c->tm = tm;
    if (!c->proven) {
        /* from now on it may send what a TaskManager sends */
        c->proven = 1;
        bufferevent_setwatermark(c->bev, EV_READ, 0, SL_FRAME_MAX + 8);
    }
    /* keep registration order: append */
    jm_tm **p = &j->tms;
    while (*p) p = &(*p)->next;
    *p = tm;
    sl_info(TAG, "TaskManager %s registered from %s (%d slots, data port %d, state backend %s)",
            tm->id, c->peer, tm->slots, tm->data_port, tm->state_backend);
    ack.accepted = 1;
    ack.heartbeat_interval_ms = (uint64_t)j->heartbeat_interval_ms;
    ack.session = j->session;
    send_env(c, &env);
    jm_schedule(j);
}

/* Keep a subtask's latest figures and derive its rates. */
void jm_apply_metrics(jm *j, const Sluice__SubtaskMetrics *m)
{
    int64_t now = sl_mono_ms();
    jm_job *job = m->job_id ? jm_job_find(j, m->job_id) : NULL;
    if (!job || job->attempt != m->attempt || !job->tasks || m->chain >= (uint32_t)job->g->nchains ||
        m->subtask >= (uint32_t)job->g->chains[m->chain].parallelism)
        return;
    jm_metrics *jmm = &job->tasks[m->chain][m->subtask].metrics;
    /* rates over at least a second: heartbeats come every few hundred ms,
     * and a rate over one interval jumps with every full buffer */
    if (!jmm->has) {
        jmm->ref_at_ms = now;
    } else if (now - jmm->ref_at_ms >= 1000) {
        double dt = (double)(now - jmm->ref_at_ms) / 1000.0;
        jmm->in_rate = (double)(m->records_in - jmm->ref_in) / dt;
        jmm->out_rate = (double)(m->records_out - jmm->ref_out) / dt;
        jmm->in_bytes_rate = (double)(m->bytes_in - jmm->ref_bin) / dt;
        jmm->out_bytes_rate = (double)(m->bytes_out - jmm->ref_bout) / dt;
        jmm->ref_at_ms = now;
    }
    if (jmm->ref_at_ms == now) {
        jmm->ref_in = m->records_in;
        jmm->ref_out = m->records_out;
        jmm->ref_bin = m->bytes_in;
        jmm->ref_bout = m->bytes_out;
    }
    /* one figure per operator of the chain, or none */
    size_t nops = m->n_operators == (size_t)job->g->chains[m->chain].n ? m->n_operators : 0;
    if (jmm->nops != (int)nops) {
        jmm->ops = sl_realloc(jmm->ops, sizeof *jmm->ops * (nops ? nops : 1));
        jmm->nops = (int)nops;
    }
    for (size_t k = 0; k < nops; k++) {
        const Sluice__OperatorMetrics *o = m->operators[k];
        jmm->ops[k] = (struct jm_op_metrics){o->records_in, o->records_out, o->late_dropped,
                                             o->input_watermark, o->output_watermark,
                                             o->records_in_errors};
    }
    free(jmm->info);
    jmm->info = m->operator_info && *m->operator_info ? sl_strdup(m->operator_info) : NULL;
    if (jmm->nlat != (int)m->n_latency) {
        jmm->lat = sl_realloc(jmm->lat, sizeof *jmm->lat * (m->n_latency ? m->n_latency : 1));
        jmm->nlat = (int)m->n_latency;
    }
    for (size_t k = 0; k < m->n_latency; k++) {
        jmm->lat[k] = *m->latency[k];
        jmm->lat[k].base.unknown_fields = NULL;
        jmm->lat[k].base.n_unknown_fields = 0;
    }
    jmm->m = *m;
    jmm->m.operators = NULL;
    jmm->m.n_operators = 0;
    jmm->m.latency = NULL;
    jmm->m.n_latency = 0;
    jmm->m.job_id = NULL;
    jmm->m.operator_info = NULL;
    jmm->m.base.unknown_fields = NULL;
    jmm->m.base.n_unknown_fields = 0;
    jmm->at_ms = now;
    jmm->has = 1;
}

static void on_heartbeat(jm_conn *c, const Sluice__Heartbeat *hb)
{
    jm *j = c->jm;
    Sluice__HeartbeatAck ack = SLUICE__HEARTBEAT_ACK__INIT;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HEARTBEAT_ACK;
    env.heartbeat_ack = &ack;
    jm_tm *tm = c->tm;
    ack.known = tm != NULL && hb->tm_id && !strcmp(hb->tm_id, tm->id);
    send_env(c, &env);
    if (!ack.known) return;
    tm->last_heartbeat_ms = sl_mono_ms();
    tm->free_memory = hb->free_memory;
    if (hb->process) {
        const Sluice__ProcessStats *ps = hb->process;
        if (tm->cpu_at_ms)
            tm->cpu_load = sl_proc_cpu_load(tm->cpu_ns, ps->cpu_ns, tm->last_heartbeat_ms - tm->cpu_at_ms,
                                            tm->cpu_cores);
        tm->cpu_ns = ps->cpu_ns;
        tm->cpu_at_ms = tm->last_heartbeat_ms;
        tm->rss_bytes = ps->rss_bytes;
        tm->virtual_bytes = ps->virtual_bytes;
        tm->threads = (int)ps->threads;
    }
    for (size_t i = 0; i < hb->n_metrics; i++) jm_apply_metrics(j, hb->metrics[i]);
}

static void send_hello(jm_conn *c, const uint8_t *nonce, const uint8_t *proof)
{
    Sluice__Hello h = SLUICE__HELLO__INIT;
    h.version = SL_PROTOCOL_VERSION;
    h.role = "jobmanager";
    if (nonce) {
        h.nonce.data = (uint8_t *)nonce;
        h.nonce.len = SL_AUTH_NONCE;
    }
    if (proof) {
        h.proof.data = (uint8_t *)proof;
        h.proof.len = SL_AUTH_MAC;
    }
    Sluice__Envelope out = SLUICE__ENVELOPE__INIT;
    out.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
    out.hello = &h;
    send_env(c, &out);
}

static void on_drained(struct bufferevent *bev, void *arg) { conn_close(arg, NULL); }

/* Refuse c, but let what we queued for it (why it is refused) go out first. */
static void close_after_flush(jm_conn *c, const char *why)
{
    sl_warn(TAG, "closing connection from %s: %s", c->peer, why);
    c->closing = 1;
    bufferevent_disable(c->bev, EV_READ);
    bufferevent_setcb(c->bev, NULL, on_drained, on_event, c);
    if (!evbuffer_get_length(bufferevent_get_output(c->bev))) conn_close(c, NULL);
}

/* With a cluster secret: the TaskManager's first Hello carries its nonce;
 * we answer with ours and our proof, and wait for its proof in a second
 * Hello. Nothing else is accepted before (the connection is closed and the
 * refusal logged), so a peer without the secret never registers. */
static void auth_hello(jm_conn *c, const Sluice__Hello *h)
{
    jm *j = c->jm;
    if (!c->auth_wait) {
        if (h->nonce.len != SL_AUTH_NONCE) {
            /* a TaskManager without the secret: our nonce tells it one is needed */
            sl_auth_nonce(c->nonce);
            send_hello(c, c->nonce, NULL);
            close_after_flush(c, "refused: it sent no challenge (this cluster requires "
                                 "security.cluster.secret)");
            return;
        }
        free(c->peer_id);
        c->peer_id = sl_strdup(h->peer_id ? h->peer_id : "");
        memcpy(c->peer_nonce, h->nonce.data, SL_AUTH_NONCE);
        sl_auth_nonce(c->nonce);
        uint8_t proof[SL_AUTH_MAC];
        sl_auth_mac(&j->cluster_auth, "sluice-rpc-jobmanager", c->peer_nonce, c->nonce, c->peer_id,
                    proof);
        c->auth_wait = 1;
        send_hello(c, c->nonce, proof);
        return;
    }
    if (!sl_auth_check(&j->cluster_auth, "sluice-rpc-taskmanager", c->nonce, c->peer_nonce,
                       c->peer_id, h->proof.data, h->proof.len)) {
        conn_close(c, "refused: it did not prove the cluster secret (security.cluster.secret)");
        return;
    }
    c->auth_wait = 0;
    c->hello_done = 1;
}

static void handle(jm_conn *c, Sluice__Envelope *env)
{
    if (c->closing) return;
    if (!c->hello_done) {
        if (env->msg_case != SLUICE__ENVELOPE__MSG_HELLO) {
            conn_close(c, c->auth_wait ? "refused: a message before it proved the cluster secret"
                                       : "first message is not a Hello");
            return;
        }
        if (c->auth_wait) {
            auth_hello(c, env->hello);
            return;
        }
        if (env->hello->version != SL_PROTOCOL_VERSION) {
            char why[96];
            snprintf(why, sizeof why, "protocol version %u, expected %u", env->hello->version,
                     SL_PROTOCOL_VERSION);
            conn_close(c, why);
            return;
        }
        if (sl_auth_on(&c->jm->cluster_auth)) {
            auth_hello(c, env->hello);
            return;
        }
        c->hello_done = 1;
        send_hello(c, NULL, NULL);
        return;
    }
    switch (env->msg_case) {
    case SLUICE__ENVELOPE__MSG_REGISTER: on_register(c, env->register_); break;
    case SLUICE__ENVELOPE__MSG_HEARTBEAT: on_heartbeat(c, env->heartbeat); break;
    case SLUICE__ENVELOPE__MSG_TASK_STATUS: {
        const Sluice__TaskStatus *ts = env->task_status;
        if (!c->tm) break;
        if (!jm_task_runs_on(c->jm, ts->job_id, ts->attempt, ts->chain, ts->subtask, c->tm))
            sl_warn(TAG, "TaskManager %s reported the state of a task that does not run there "
                         "(job %.32s chain %u subtask %u); ignored",
                    c->tm->id, ts->job_id, ts->chain, ts->subtask);
        else
            jm_on_task_status(c->jm, ts);
        break;
    }
    case SLUICE__ENVELOPE__MSG_ACK: {
        const Sluice__AcknowledgeCheckpoint *a = env->ack;
        if (!c->tm) break;
        if (!jm_task_runs_on(c->jm, a->job_id, a->attempt, a->chain, a->subtask, c->tm))
            sl_warn(TAG, "TaskManager %s acknowledged a checkpoint for a task that does not run "
                         "there (job %.32s chain %u subtask %u); ignored",
                    c->tm->id, a->job_id, a->chain, a->subtask);
        else
            jm_cp_on_ack(c->jm, a);
        break;
    }
    case SLUICE__ENVELOPE__MSG_COLLECT_ROWS:
        if (c->tm) jm_collect_on_rows(c->jm, env->collect_rows);
        break;
    case SLUICE__ENVELOPE__MSG_PROCESS_INFO_REPLY:
        if (c->tm) jm_rest_on_process_info(c->jm, c->tm, env->process_info_reply);
        break;
    default:
        sl_warn(TAG, "%s sent an unexpected message (%d); ignored", c->peer, (int)env->msg_case);
    }
}

void jm_rpc_input(jm_conn *c)
{
    jm *j = c->jm;
    for (;;) {
        Sluice__Envelope *env = NULL;
        char err[160];
        int rc = sl_frame_pull_max(bufferevent_get_input(c->bev),
                                   c->proven ? SL_FRAME_MAX : SL_MAX_PREAUTH_FRAME_BYTES, &env, err,
                                   sizeof err);
        if (rc == SL_AGAIN) break;
        if (rc != SL_OK) {
            conn_close(c, err);
            break;
        }
        /* handle() may close c: remember whether it is still listed */
        jm_conn *before = c;
        handle(c, env);
        sluice__envelope__free_unpacked(env, NULL);
        int alive = 0;
        for (jm_conn *p = j->conns; p; p = p->next)
            if (p == before) { alive = 1; break; }
        if (!alive || c->closing) break;
    }
}

static void on_read(struct bufferevent *bev, void *arg) { jm_rpc_input(arg); }

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    jm_conn *c = arg;
    char why[256];
    if (what & BEV_EVENT_ERROR)
        conn_close(c, sl_tls_error(bev, why, sizeof why));
    else if (what & BEV_EVENT_EOF)
        conn_close(c, c->tm ? "TaskManager disconnected" : NULL);
}

/* Make room for one more unproven connection: at SL_MAX_PREAUTH_CONNECTIONS
 * the oldest unproven one is closed (the list is newest first, so it is the
 * last unproven one in it). */
static void preauth_make_room(jm *j)
{
    int n = 0;
    jm_conn *oldest = NULL;
    for (jm_conn *c = j->conns; c; c = c->next)
        if (!c->proven) {
            n++;
            oldest = c;
        }
    if (n >= SL_MAX_PREAUTH_CONNECTIONS && oldest) {
        char why[160];
        snprintf(why, sizeof why,
                 "%d connections have not completed the handshake; the oldest (%lld ms) makes room "
                 "for a new one",
                 n, (long long)(sl_mono_ms() - oldest->opened_ms));
        conn_close(oldest, why);
    }
}

/* On the tick: close connections that have not proven themselves within
 * SL_HANDSHAKE_TIMEOUT_MS of their accept. */
static void preauth_deadline(jm *j)
{
    int64_t now = sl_mono_ms();
    for (jm_conn *c = j->conns; c;) {
        jm_conn *next = c->next;
        if (!c->proven && !c->closing && now - c->opened_ms > SL_HANDSHAKE_TIMEOUT_MS) {
            char why[160];
            snprintf(why, sizeof why,
                     "no %s within the handshake deadline (%d ms)",
                     c->hello_done ? "registration" : "Hello", SL_HANDSHAKE_TIMEOUT_MS);
            conn_close(c, why);
        }
        c = next;
    }
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    jm *j = arg;
    preauth_make_room(j);
    jm_conn *c = sl_calloc(1, sizeof *c);
    c->jm = j;
    c->opened_ms = sl_mono_ms();
    if (sa->sa_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)sa;
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        snprintf(c->peer, sizeof c->peer, "%s:%d", ip, ntohs(in->sin_port));
    } else {
        snprintf(c->peer, sizeof c->peer, "peer");
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* only the loop thread touches this bufferevent (sender.c checks), so
     * it has no lock: nothing can be waited on while a callback runs.
     * Deferred callbacks let conn_close free it from inside one. */
    c->bev = sl_tls_bev(j->base, j->tls, fd, 1, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
    /* a peer may not make us buffer more than one maximal frame, and an
     * unproven one no more than one maximal Hello (on_register raises it) */
    bufferevent_setwatermark(c->bev, EV_READ, 0, SL_MAX_PREAUTH_FRAME_BYTES + 8);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    c->next = j->conns;
    j->conns = c;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    jm_check_timeouts(arg);
    preauth_deadline(arg);
}

static void on_cp_tick(evutil_socket_t fd, short what, void *arg)
{
    jm *j = arg;
    jm_ha_tick(j);
    jm_cp_tick(j);
    jm_sched_tick(j);
}

int jm_rpc_start(jm *j, char *err, size_t errlen)
{
    char sess[17];
    sl_random_hex(sess, 16);
    j->session = strtoull(sess, NULL, 16) | 1; /* never 0: 0 is "none" on the TaskManager */
    if (sl_auth_load(&j->cluster_auth, j->conf, err, errlen) != SL_OK) return SL_ERR;
    if (sl_tls_internal(j->conf, &j->tls, err, errlen) != SL_OK) return SL_ERR;
    if (j->tls) sl_info(TAG, "RPC connections use mutual TLS (security.ssl.internal.*)");
    if (sl_auth_on(&j->cluster_auth))
        sl_info(TAG, "TaskManagers must prove the cluster secret (security.cluster.secret)");
    j->listener = sl_listen(j->base, sl_config_str(j->conf, "jobmanager.bind-host"),
                            (int)sl_config_int(j->conf, "jobmanager.rpc.port"), "RPC port", on_accept,
                            j, &j->rpc_port, err, errlen);
    if (!j->listener) return SL_ERR;
    j->tick = event_new(j->base, -1, EV_PERSIST, on_tick, j);
    int64_t every = SL_MAX(SL_MIN(j->heartbeat_timeout_ms / 4, 1000), 20);
    struct timeval tv = {(time_t)(every / 1000), (suseconds_t)((every % 1000) * 1000)};
    event_add(j->tick, &tv);
    j->cp_tick = event_new(j->base, -1, EV_PERSIST, on_cp_tick, j);
    struct timeval cpt = {0, 20000};
    event_add(j->cp_tick, &cpt);
    return SL_OK;
}

void jm_rpc_close_all(jm *j, const char *why)
{
    while (j->conns) conn_close(j->conns, why);
}

void jm_rpc_stop(jm *j)
{
    while (j->conns) {
        jm_conn *c = j->conns;
        if (c->tm) c->tm->conn = NULL;
        c->tm = NULL;
        j->conns = c->next;
        bufferevent_free(c->bev);
        free(c->peer_id);
        free(c);
    }
    sl_listen_free(j->listener);
    sl_auth_free(&j->cluster_auth);
    sl_tls_free(j->tls);
    j->tls = NULL;
    if (j->tick) event_free(j->tick);
    if (j->cp_tick) event_free(j->cp_tick);
}
