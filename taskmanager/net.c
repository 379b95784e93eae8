/*
 * net.c -- the TaskManager's transport, on its network thread: the
 * JobManager connection and the data connections to other TaskManagers.
 * What travels on a data connection is the exchange's business
 * (exchange.c); building deployments is deploy.c's.
 *
 * JobManager: connect, Hello, RegisterTaskManager, then a Heartbeat every
 * heartbeat.interval carrying every task's figures. When the JobManager
 * goes away, every task here is cancelled (its jobs are the JobManager's to
 * restart) and we keep trying to reconnect. With high availability the
 * JobManager to connect to is the leader ZooKeeper names (core/zk.h); a
 * new leader replaces the connection (and cancels the old leader's tasks),
 * a RegisterAck or DeployJob whose session is not the published leader
 * session is refused (fencing), and a JobManager silent for longer than
 * heartbeat.timeout counts as gone.
 *
 * Data connections: all channels between two TaskManagers share one TCP
 * connection, opened by the one whose id sorts lower. Frames (little
 * endian) have a 25-byte header: u8 type, u64 session, u32 attempt,
 * u32 channel, u32 a, u32 b; (session, attempt) names the deployment.
 *   DATA   a = sender's backlog (buffers queued behind this one), b = length,
 *          then b bytes: one network buffer (at most SL_MAX_DATA_FRAME_BYTES).
 *   CREDIT a = number of buffers the receiver has made ready for the channel.
 *   HELLO  (first frame of the opener) attempt = magic, channel = version,
 *          a = id length, then the id.
 * Anything else -- an unknown type, a length out of range, data for an
 * unknown channel or without credit -- closes that connection.
 * A sender puts a buffer on the wire only against credit, so a channel
 * whose consumer is slow stops alone while the connection keeps serving
 * the others. The receiver grants buffers-per-channel exclusive credits per
 * channel, and lends floating buffers (floating-buffers-per-gate per gate)
 * to channels that announce a backlog. A damaged frame closes the
 * connection and fails the jobs that used it; nothing else is affected.
 *
 * An accepted connection is pending until its HELLO (and, with a cluster
 * secret, its proof): it is read no further than a HELLO can be long, must
 * complete within SL_HANDSHAKE_TIMEOUT_MS of accept, and at most
 * SL_MAX_PREAUTH_CONNECTIONS are pending at once (the oldest is closed to
 * make room), so idle or dribbling strangers cost a bounded few hundred KiB
 * and cannot crowd out the TaskManagers. After it, a data connection is
 * read no further than one frame (header and a network buffer).
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sysinfo.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <event2/thread.h>

#include "tm.h"
#include "latency.h"
#include "debloat.h"
#include "bytes.h"
#include "frame.h"
#include "listen.h"
#include "log.h"
#include "proc_info.h"
#include "zk.h"

#define TAG "tm:net"

#define DF_DATA 1
#define DF_CREDIT 2
#define DF_HELLO 3
#define DF_AUTH 4 /* the challenge-response after a HELLO (auth.h); a = its length */
#define DF_EVENT 5 /* a priority barrier (unaligned checkpoint), sent without credit */
#define DF_HDR 25
#define DF_MAGIC 0x534c4443u /* "SLDC" */
#define DF_VERSION 2 /* 2: the header carries the JobManager session */

static void send_ack(tm_net *n, tm_snap_job *job);
static void peer_flush(tm_peer *p);
static void peer_connect(tm_peer *p);

/* ---- small helpers ------------------------------------------------------ */

static void df_header(uint8_t *h, uint8_t type, uint64_t session, uint32_t attempt, uint32_t chan,
                      uint32_t a, uint32_t b)
{
    h[0] = type;
    sl_put_le64(h + 1, session);
    sl_put_le32(h + 9, attempt);
    sl_put_le32(h + 13, chan);
    sl_put_le32(h + 17, a);
    sl_put_le32(h + 21, b);
}

static void send_jm(tm_net *n, Sluice__Envelope *env)
{
    if (n->jm && n->jm_hello) sl_frame_push(bufferevent_get_output(n->jm), env);
}

/* ---- into the inbox, from task threads ----------------------------------- */

static void report_queue(tm_net *n, tm_deploy *d, int chain, int subtask, Sluice__TaskState s,
                         const char *error, int end_of_input)
{
    tm_status *st = sl_calloc(1, sizeof *st);
    memcpy(st->job_id, d->job_id, sizeof st->job_id);
    st->session = d->session;
    st->attempt = d->attempt;
    st->chain = chain;
    st->subtask = subtask;
    st->state = s;
    st->error = error ? sl_strdup(error) : NULL;
    st->end_of_input = end_of_input;
    st->qm.type = TM_OP_TASK_STATE;
    if (sl_queue_push(n->inbox, &st->qm) != SL_OK) { /* stopped: nobody to tell */
        free(st->error);
        free(st);
    }
}

void tm_net_report(tm_net *n, tm_deploy *d, int chain, int subtask, Sluice__TaskState s,
                   const char *error)
{
    report_queue(n, d, chain, subtask, s, error, 0);
}

void tm_net_report_end_of_input(tm_net *n, tm_deploy *d, int chain, int subtask)
{
    report_queue(n, d, chain, subtask, SLUICE__TASK_STATE__TASK_RUNNING, NULL, 1);
}

void tm_net_task_exited(tm_net *n)
{
    sl_qmsg *m = sl_calloc(1, sizeof *m);
    m->type = TM_OP_TASK_EXITED;
    if (sl_queue_push(n->inbox, m) != SL_OK) free(m);
}

void tm_net_peer_wake(tm_peer *p) { event_active(p->wake, EV_TIMEOUT, 0); }

/* ---- peers ---------------------------------------------------------------- */

static void on_peer_wake(evutil_socket_t fd, short what, void *arg);

tm_peer *tm_net_peer(tm_net *n, const char *id, const char *host, int port)
{
    for (tm_peer *p = n->peers; p; p = p->next)
        if (!strcmp(p->id, id)) {
            if (host && (!p->host || strcmp(p->host, host))) {
                free(p->host);
                p->host = sl_strdup(host);
            }
            if (port) p->port = port;
            return p;
        }
    tm_peer *p = sl_calloc(1, sizeof *p);
    p->id = sl_strdup(id);
    p->host = host ? sl_strdup(host) : NULL;
    p->port = port;
    p->net = n;
    p->initiator = strcmp(n->id, id) < 0;
    pthread_mutex_init(&p->mu, NULL);
    /* tasks may queue data before the connection exists */
    p->wake = event_new(n->base, -1, 0, on_peer_wake, p);
    p->next = n->peers;
    n->peers = p;
    return p;
}

static void on_peer_wake(evutil_socket_t fd, short what, void *arg) { peer_flush(arg); }

static void report_full(tm_net *n, const char *job_id, uint32_t attempt, int chain, int subtask,
                        Sluice__TaskState s, const char *error, Sluice__SubtaskMetrics *final,
                        int end_of_input)
{
    Sluice__TaskStatus ts = SLUICE__TASK_STATUS__INIT;
    ts.job_id = (char *)job_id;
    ts.attempt = attempt;
    ts.chain = (uint32_t)chain;
    ts.subtask = (uint32_t)subtask;
    ts.state = s;
    ts.error = (char *)(error ? error : "");
    ts.tm_id = n->id;
    ts.final_metrics = final;
    ts.end_of_input = end_of_input;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_TASK_STATUS;
    env.task_status = &ts;
    send_jm(n, &env);
}

void tm_net_report_direct(tm_net *n, const char *job_id, uint32_t attempt, int chain, int subtask,
                          Sluice__TaskState s, const char *error)
{
    report_full(n, job_id, attempt, chain, subtask, s, error, NULL, 0);
}

/* A CREDIT frame, when the connection is up (else the exchange announces
 * it again once it is: tm_exchange_peer_up). */
void tm_net_send_credit(tm_peer *p, uint64_t session, uint32_t attempt, uint32_t chan, int credits,
                        uint32_t buf_size)
{
    if (!p->bev || !p->hello_done) return;
    uint8_t h[DF_HDR];
    df_header(h, DF_CREDIT, session, attempt, chan, (uint32_t)credits, buf_size);
    evbuffer_add(bufferevent_get_output(p->bev), h, DF_HDR);
}

void tm_net_connect_peers(tm_net *n, tm_deploy *d)
{
    for (uint32_t id = 0; id < d->nchan; id++) {
        tm_peer *p = d->in_by_id[id] ? d->in_by_id[id]->peer
                     : d->out_by_id[id] ? d->out_by_id[id]->peer : NULL;
        if (p && !p->bev && p->initiator) peer_connect(p);
    }
    SL_UNUSED(n);
}

void tm_net_flush_peers(tm_net *n)
{
    for (tm_peer *p = n->peers; p; p = p->next) peer_flush(p);
}

/* ---- data connections ---------------------------------------------------- */

static void data_cleanup(const void *data, size_t len, void *arg)
{
    SL_UNUSED(data);
    SL_UNUSED(len);
    sl_buf_recycle((sl_netbuf *)arg);
}

/* Put queued buffers on the wire, as far as credit allows. */
static void peer_flush(tm_peer *p)
{
    if (!p->bev || !p->hello_done) return;
    struct evbuffer *out = bufferevent_get_output(p->bev);
    pthread_mutex_lock(&p->mu);
    for (tm_outchan *oc = p->chans; oc; oc = oc->peer_next) {
        /* priority barriers of unaligned checkpoints first, without credit
         * (the receiver takes them into buffers of their own) */
        while (oc->phead && !oc->d->cancelled) {
            sl_netbuf *b = oc->phead;
            oc->phead = b->next;
            if (!oc->phead) oc->ptail = NULL;
            uint8_t h[DF_HDR];
            df_header(h, DF_EVENT, oc->d->session, oc->d->attempt, oc->id, 0, b->len);
            evbuffer_add(out, h, DF_HDR);
            b->next = NULL;
            evbuffer_add_reference(out, b->data, b->len, data_cleanup, b);
        }
        while (oc->qhead && oc->credit > 0 && !oc->d->cancelled) {
            sl_netbuf *b = oc->qhead;
            oc->qhead = b->next;
            if (!oc->qhead) oc->qtail = NULL;
            oc->qlen--;
            oc->credit--;
            uint8_t h[DF_HDR];
            df_header(h, DF_DATA, oc->d->session, oc->d->attempt, oc->id, (uint32_t)oc->qlen, b->len);
            evbuffer_add(out, h, DF_HDR);
            b->next = NULL;
            evbuffer_add_reference(out, b->data, b->len, data_cleanup, b);
        }
    }
    pthread_mutex_unlock(&p->mu);
}

static void peer_close(tm_peer *p, const char *why)
{
    tm_net *n = p->net;
    if (p->bev) {
        sl_warn(TAG, "data connection to %s closed: %s", p->id, why);
        bufferevent_free(p->bev);
        p->bev = NULL;
    }
    p->hello_done = 0;
    p->auth_wait = 0;
    tm_deploy_fail_peer(n, p, why);
}

static int handle_data_frame(tm_peer *p, const uint8_t *h, struct evbuffer *in, char *err,
                             size_t errlen)
{
    tm_net *n = p->net;
    uint8_t type = h[0];
    uint64_t session = sl_get_le64(h + 1);
    uint32_t attempt = sl_get_le32(h + 9), chan = sl_get_le32(h + 13), a = sl_get_le32(h + 17), b = sl_get_le32(h + 21);
    tm_deploy *d = tm_deploy_find(n, session, attempt);
    if (type == DF_CREDIT) return tm_exchange_credit(p, d, session, attempt, chan, a, b, err, errlen);
    if (type == DF_EVENT) {
        if (b == 0 || b > SL_MAX_DATA_FRAME_BYTES)
            return sl_seterr(err, errlen, "bad event frame length %u (allowed 1..%u)", b,
                             SL_MAX_DATA_FRAME_BYTES);
        if (!d || d->cancelled) {
            evbuffer_drain(in, b);
            return SL_OK;
        }
        sl_netbuf *ev = tm_exchange_event_buffer(p, d, chan, b, err, errlen);
        if (!ev) return SL_ERR;
        evbuffer_remove(in, ev->data, b);
        ev->len = b;
        tm_exchange_deliver_priority(d, chan, ev);
        return SL_OK;
    }
    if (type != DF_DATA) return sl_seterr(err, errlen, "unknown frame type %u", type);
    if (b == 0 || b > SL_MAX_DATA_FRAME_BYTES)
        return sl_seterr(err, errlen, "bad data frame length %u (allowed 1..%u)", b, SL_MAX_DATA_FRAME_BYTES);
    if (!d || d->cancelled) {
        evbuffer_drain(in, b); /* a job that has ended here: its data is moot */
        return SL_OK;
    }
    sl_netbuf *buf = tm_exchange_recv_buffer(p, d, chan, b, err, errlen);
    if (!buf) return SL_ERR;
    evbuffer_remove(in, buf->data, b);
    buf->len = b;
    tm_exchange_deliver(d, chan, buf, a);
    return SL_OK;
}

static void peer_up(tm_peer *p)
{
    p->hello_done = 1;
    sl_info(TAG, "data connection to %s (%s:%d) established", p->id, p->host, p->port);
    /* credits announced before the connection existed */
    tm_exchange_peer_up(p->net, p);
    peer_flush(p);
}

/* We connected with a challenge: the acceptor answers with its nonce and
 * its proof; we check it and send ours. SL_AGAIN until it is all in. */
static int connector_auth(tm_peer *p, struct evbuffer *in, char *err, size_t errlen)
{
    tm_net *n = p->net;
    uint8_t h[DF_HDR + SL_AUTH_NONCE + SL_AUTH_MAC];
    if (evbuffer_get_length(in) < DF_HDR) return SL_AGAIN;
    evbuffer_copyout(in, h, DF_HDR);
    if (h[0] != DF_AUTH || sl_get_le32(h + 17) != SL_AUTH_NONCE + SL_AUTH_MAC)
        return sl_seterr(err, errlen, "refused: %s did not answer our challenge (has it the cluster "
                         "secret, security.cluster.secret?)", p->id);
    if (evbuffer_get_length(in) < sizeof h) return SL_AGAIN;
    evbuffer_remove(in, h, sizeof h);
    const uint8_t *theirs = h + DF_HDR;
    if (!sl_auth_check(&n->auth, "sluice-data-acceptor", p->nonce, theirs, n->id,
                       theirs + SL_AUTH_NONCE, SL_AUTH_MAC))
        return sl_seterr(err, errlen, "refused: %s did not prove the cluster secret", p->id);
    uint8_t out[DF_HDR + SL_AUTH_MAC];
    df_header(out, DF_AUTH, 0, DF_MAGIC, DF_VERSION, SL_AUTH_MAC, 0);
    sl_auth_mac(&n->auth, "sluice-data-connector", theirs, p->nonce, n->id, out + DF_HDR);
    evbuffer_add(bufferevent_get_output(p->bev), out, sizeof out);
    p->auth_wait = 0;
    peer_up(p);
    return SL_OK;
}

static void on_data_read(struct bufferevent *bev, void *arg)
{
    tm_peer *p = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    char err[256];
    if (p->auth_wait) {
        int rc = connector_auth(p, in, err, sizeof err);
        if (rc == SL_AGAIN) return;
        if (rc != SL_OK) {
            peer_close(p, err);
            return;
        }
    }
    for (;;) {
        uint8_t h[DF_HDR];
        if (evbuffer_get_length(in) < DF_HDR) break;
        evbuffer_copyout(in, h, DF_HDR);
        if (h[0] == DF_DATA || h[0] == DF_EVENT) {
            uint32_t len = sl_get_le32(h + 21);
            if (len <= SL_MAX_DATA_FRAME_BYTES && evbuffer_get_length(in) < DF_HDR + (size_t)len) break;
        }
        evbuffer_drain(in, DF_HDR);
        if (handle_data_frame(p, h, in, err, sizeof err) != SL_OK) {
            peer_close(p, err);
            return;
        }
    }
    peer_flush(p);
    /* credit may have let a finished deployment send its last buffers */
    if (p->net->reap_pending) tm_deploy_reap(p->net);
}

static void on_data_event(struct bufferevent *bev, short what, void *arg)
{
    tm_peer *p = arg;
    if (what & BEV_EVENT_CONNECTED) {
        uint8_t h[DF_HDR];
        size_t idlen = strlen(p->net->id);
        int auth = sl_auth_on(&p->net->auth);
        df_header(h, DF_HELLO, 0, DF_MAGIC, DF_VERSION, (uint32_t)idlen, auth ? SL_AUTH_NONCE : 0);
        evbuffer_add(bufferevent_get_output(bev), h, DF_HDR);
        evbuffer_add(bufferevent_get_output(bev), p->net->id, idlen);
        int one = 1;
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (auth) {
            /* nothing else until the acceptor has proved the secret */
            sl_auth_nonce(p->nonce);
            evbuffer_add(bufferevent_get_output(bev), p->nonce, SL_AUTH_NONCE);
            p->auth_wait = 1;
            return;
        }
        peer_up(p);
        return;
    }
    char why[256];
    if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF))
        peer_close(p, (what & BEV_EVENT_EOF) ? "closed by peer" : sl_tls_error(bev, why, sizeof why));
}

/* A data connection buffers at most one whole frame: header and buffer. */
#define DF_READ_HIGH (DF_HDR + SL_MAX_DATA_FRAME_BYTES + 64)
/* A pending one at most its HELLO and challenge (id <= 256 bytes), or its proof. */
#define DF_PENDING_READ_HIGH (DF_HDR + 256 + SL_AUTH_NONCE + SL_AUTH_MAC)

static void peer_attach(tm_peer *p, struct bufferevent *bev)
{
    p->bev = bev;
    bufferevent_setwatermark(bev, EV_READ, 0, DF_READ_HIGH);
    bufferevent_setcb(bev, on_data_read, NULL, on_data_event, p);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static void peer_connect(tm_peer *p)
{
    if (p->bev || !p->host || !p->port) return;
    struct bufferevent *bev = sl_tls_bev(p->net->base, p->net->tls, -1, 0, BEV_OPT_CLOSE_ON_FREE);
    peer_attach(p, bev);
    char port[16];
    snprintf(port, sizeof port, "%d", p->port);
    if (bufferevent_socket_connect_hostname(bev, NULL, AF_INET, p->host, p->port) < 0) {
        /* on_data_event reports the failure */
    }
}

/* An accepted data connection, until its HELLO says who it is; listed in
 * n->pending (newest first) until then. */
typedef struct pending_conn {
    tm_net *n;
    struct bufferevent *bev;
    struct event *deadline;     /* the handshake deadline (SL_HANDSHAKE_TIMEOUT_MS) */
    int64_t opened_ms;          /* accepted at (sl_mono_ms) */
    char addr[64];              /* for logs */
    int auth_wait;              /* our challenge sent, its proof not yet in */
    char id[257];               /* the id its HELLO claims */
    uint8_t theirs[SL_AUTH_NONCE], ours[SL_AUTH_NONCE];
    struct pending_conn *prev, *next;
} pending_conn;

/* Unlist pc and free it; its bufferevent too unless keep_bev (it became a
 * peer's). */
static void pending_free(pending_conn *pc, int keep_bev)
{
    tm_net *n = pc->n;
    if (pc->prev) pc->prev->next = pc->next;
    else n->pending = pc->next;
    if (pc->next) pc->next->prev = pc->prev;
    n->npending--;
    event_free(pc->deadline);
    if (!keep_bev) bufferevent_free(pc->bev);
    free(pc);
}

static void pending_refuse(pending_conn *pc, const char *fmt, const char *id)
{
    char why[400];
    snprintf(why, sizeof why, fmt, id);
    sl_warn(TAG, "refused a data connection from %s: %s", pc->addr, why);
    pending_free(pc, 0);
}

static void on_pending_deadline(evutil_socket_t fd, short what, void *arg)
{
    SL_UNUSED(fd);
    SL_UNUSED(what);
    char why[96];
    snprintf(why, sizeof why, "no hello within the handshake deadline (%d ms)",
             SL_HANDSHAKE_TIMEOUT_MS);
    pending_refuse(arg, "%s", why);
}

static void on_pending_read(struct bufferevent *bev, void *arg)
{
    pending_conn *pc = arg;
    tm_net *n = pc->n;
    struct evbuffer *in = bufferevent_get_input(bev);
    int auth = sl_auth_on(&n->auth);
    if (evbuffer_get_length(in) < DF_HDR) return;
    uint8_t h[DF_HDR + SL_AUTH_MAC];
    evbuffer_copyout(in, h, DF_HDR);
    if (pc->auth_wait) {
        /* the connector's proof, after our challenge */
        if (h[0] != DF_AUTH || sl_get_le32(h + 17) != SL_AUTH_MAC) {
            pending_refuse(pc, "%s did not answer our challenge", pc->id);
            return;
        }
        if (evbuffer_get_length(in) < sizeof h) return;
        evbuffer_remove(in, h, sizeof h);
        if (!sl_auth_check(&n->auth, "sluice-data-connector", pc->ours, pc->theirs, pc->id,
                           h + DF_HDR, SL_AUTH_MAC)) {
            pending_refuse(pc, "it claims to be %s but did not prove the cluster secret", pc->id);
            return;
        }
    } else {
        uint32_t idlen = sl_get_le32(h + 17), nlen = sl_get_le32(h + 21);
        if (h[0] != DF_HELLO || sl_get_le32(h + 9) != DF_MAGIC || sl_get_le32(h + 13) != DF_VERSION ||
            idlen == 0 || idlen > 256 || (nlen != 0 && nlen != SL_AUTH_NONCE)) {
            pending_refuse(pc, "%sit did not start with a valid hello", "");
            return;
        }
        if (evbuffer_get_length(in) < DF_HDR + idlen + nlen) return;
        evbuffer_drain(in, DF_HDR);
        evbuffer_remove(in, pc->id, idlen);
        pc->id[idlen] = '\0';
        if (auth != (nlen != 0)) {
            pending_refuse(pc, auth ? "it claims to be %s but sent no challenge (this cluster "
                                      "requires security.cluster.secret)"
                                    : "%s requires the cluster secret, which this TaskManager "
                                      "does not have (security.cluster.secret)", pc->id);
            return;
        }
        if (auth) {
            evbuffer_remove(in, pc->theirs, SL_AUTH_NONCE);
            sl_auth_nonce(pc->ours);
            uint8_t out[DF_HDR + SL_AUTH_NONCE + SL_AUTH_MAC];
            df_header(out, DF_AUTH, 0, DF_MAGIC, DF_VERSION, SL_AUTH_NONCE + SL_AUTH_MAC, 0);
            memcpy(out + DF_HDR, pc->ours, SL_AUTH_NONCE);
            sl_auth_mac(&n->auth, "sluice-data-acceptor", pc->theirs, pc->ours, pc->id,
                        out + DF_HDR + SL_AUTH_NONCE);
            evbuffer_add(bufferevent_get_output(bev), out, sizeof out);
            pc->auth_wait = 1;
            if (evbuffer_get_length(in)) on_pending_read(bev, pc);
            return;
        }
    }
    char id[257];
    memcpy(id, pc->id, sizeof id);
    tm_peer *p = tm_net_peer(n, id, NULL, 0);
    if (p->bev) {
        sl_warn(TAG, "TaskManager %s connected again; replacing its data connection", id);
        bufferevent_free(p->bev);
        p->bev = NULL;
    }
    pending_free(pc, 1);
    peer_attach(p, bev);
    p->hello_done = 1;
    tm_exchange_peer_up(n, p);
    if (evbuffer_get_length(in)) on_data_read(bev, p);
    else peer_flush(p);
}

static void on_pending_event(struct bufferevent *bev, short what, void *arg)
{
    pending_conn *pc = arg;
    if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
        char why[256];
        if (pc->n->tls && (what & BEV_EVENT_ERROR))
            sl_warn(TAG, "refused a data connection from %s: %s", pc->addr,
                    sl_tls_error(bev, why, sizeof why));
        pending_free(pc, 0);
    }
}

static void on_data_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                           int salen, void *arg)
{
    tm_net *n = arg;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char addr[64] = "a peer";
    if (sa->sa_family == AF_INET) {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, ip, sizeof ip);
        snprintf(addr, sizeof addr, "%s:%d", ip, ntohs(((struct sockaddr_in *)sa)->sin_port));
    }
    tm_net_data_accepted(n, sl_tls_bev(n->base, n->tls, fd, 1, BEV_OPT_CLOSE_ON_FREE), addr);
}

void tm_net_data_accepted(tm_net *n, struct bufferevent *bev, const char *addr)
{
    if (n->npending >= SL_MAX_PREAUTH_CONNECTIONS) {
        pending_conn *oldest = n->pending;
        while (oldest->next) oldest = oldest->next;
        char why[160];
        snprintf(why, sizeof why, "%d connections have not completed their hello; the oldest "
                 "(%lld ms) makes room for a new one", n->npending,
                 (long long)(sl_mono_ms() - oldest->opened_ms));
        pending_refuse(oldest, "%s", why);
    }
    pending_conn *pc = sl_calloc(1, sizeof *pc);
    pc->n = n;
    snprintf(pc->addr, sizeof pc->addr, "%s", addr);
    pc->bev = bev;
    pc->opened_ms = sl_mono_ms();
    pc->deadline = evtimer_new(n->base, on_pending_deadline, pc);
    struct timeval tv = {SL_HANDSHAKE_TIMEOUT_MS / 1000, (SL_HANDSHAKE_TIMEOUT_MS % 1000) * 1000};
    evtimer_add(pc->deadline, &tv);
    pc->next = n->pending;
    if (pc->next) pc->next->prev = pc;
    n->pending = pc;
    n->npending++;
    bufferevent_setcb(pc->bev, on_pending_read, NULL, on_pending_event, pc);
    bufferevent_setwatermark(pc->bev, EV_READ, 0, DF_PENDING_READ_HIGH);
    bufferevent_enable(pc->bev, EV_READ | EV_WRITE);
}

/* ---- the JobManager connection ------------------------------------------ */

static void jm_connect(tm_net *n);

/* Retry soon at first (the JobManager may be starting right now), then
 * back off to min(heartbeat.interval, 1 s). */
static void schedule_reconnect(tm_net *n)
{
    int64_t cap = SL_MAX(SL_MIN(n->hb_interval_ms, 1000), 50);
    n->reconnect_ms = n->reconnect_ms ? SL_MIN(n->reconnect_ms * 2, cap) : SL_MIN(50, cap);
    struct timeval tv = {(time_t)(n->reconnect_ms / 1000), (suseconds_t)((n->reconnect_ms % 1000) * 1000)};
    event_add(n->reconnect, &tv);
}

static void jm_lost(tm_net *n, const char *why)
{
    if (n->jm_registered) sl_warn(TAG, "lost the JobManager (%s); cancelling local tasks", why);
    if (n->jm) bufferevent_free(n->jm);
    n->jm = NULL;
    n->jm_hello = n->jm_registered = 0;
    event_del(n->heartbeat);
    tm_deploy_cancel_all(n);
    if (!n->stopping) schedule_reconnect(n);
}

static void send_register(tm_net *n)
{
    Sluice__RegisterTaskManager r = SLUICE__REGISTER_TASK_MANAGER__INIT;
    struct sysinfo si;
    sysinfo(&si);
    r.id = n->id;
    r.host = n->host;
    r.data_port = (uint32_t)n->data_port;
    r.slots = (uint32_t)n->slots;
    r.cpu_cores = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    r.physical_memory = (uint64_t)si.totalram * si.mem_unit;
    r.free_memory = (uint64_t)si.freeram * si.mem_unit;
    r.managed_memory = (uint64_t)sl_config_int(n->conf, "taskmanager.memory.process.size");
    r.state_backend = (char *)sl_config_str(n->conf, "state.backend.type");
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_REGISTER;
    env.register_ = &r;
    send_jm(n, &env);
}

/* One subtask's figures as of now (network thread). */
static void fill_metrics(tm_deploy *d, tm_task *t, Sluice__SubtaskMetrics *m, int64_t now)
{
    sluice__subtask_metrics__init(m);
    m->job_id = d->job_id;
    m->attempt = d->attempt;
    m->chain = (uint32_t)t->chain;
    m->subtask = (uint32_t)t->subtask;
#define LD(f) __atomic_load_n(&t->m.f, __ATOMIC_RELAXED)
    m->records_in = LD(records_in);
    m->records_out = LD(records_out);
    m->bytes_in = LD(bytes_in);
    m->bytes_out = LD(bytes_out);
    m->late_dropped = LD(late_dropped);
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* after records_in: see publish() */
    m->state_entries = LD(state_entries);
    m->state_bytes = LD(state_bytes);
    m->input_watermark = LD(in_wm);
    m->output_watermark = LD(out_wm);
    for (int k = 0; k < t->m.nops; k++) {
        const tm_op_figures *f = &t->m.ops[k];
        Sluice__OperatorMetrics *o = &t->hb_ops[k];
        o->records_in = __atomic_load_n(&f->records_in, __ATOMIC_RELAXED);
        o->records_out = __atomic_load_n(&f->records_out, __ATOMIC_RELAXED);
        o->late_dropped = __atomic_load_n(&f->late_dropped, __ATOMIC_RELAXED);
        o->records_in_errors = __atomic_load_n(&f->records_in_errors, __ATOMIC_RELAXED);
        o->input_watermark = __atomic_load_n(&f->in_wm, __ATOMIC_RELAXED);
        o->output_watermark = __atomic_load_n(&f->out_wm, __ATOMIC_RELAXED);
    }
    m->n_operators = (size_t)t->m.nops;
    m->operators = t->hb_op_ptrs;
    /* totals plus a wait still in progress, read consistently */
    uint64_t idle, bp, seq;
    do {
        seq = __atomic_load_n(&t->m.wait_seq, __ATOMIC_SEQ_CST);
        idle = LD(idle_ns);
        bp = LD(bp_ns);
        if (seq & 1) {
            int64_t since = LD(wait_since);
            uint64_t ongoing = now > since ? (uint64_t)(now - since) : 0;
            if (LD(wait_kind) == 2) bp += ongoing;
            else idle += ongoing;
        }
    } while (seq != __atomic_load_n(&t->m.wait_seq, __ATOMIC_SEQ_CST));
#undef LD
    float ou;
    __atomic_load(&t->m.out_usage, &ou, __ATOMIC_RELAXED);
    m->out_pool_usage = ou;
    pthread_mutex_lock(&t->gate.mu);
    m->in_pool_usage = t->gate.queued ? SL_MIN(1.0f, (float)t->gate.queued / (float)(t->ngate_chan * 2 + 8)) : 0.0f;
    /* the operators' published info: {"<vertex id>": {...}, ...} */
    const sl_chain *ch = &d->g->chains[t->chain];
    json_t *info = NULL;
    for (int k = 0; k < t->ninfo && k < ch->n; k++) {
        json_t *one = t->info[k][0] ? json_loads(t->info[k], 0, NULL) : NULL;
        if (!one) continue;
        if (!info) info = json_object();
        json_object_set_new(info, d->g->v[ch->vertices[k]].id, one);
    }
    tm_latency *lat = t->lat ? tm_latency_copy(t->lat) : NULL; /* summarized outside the lock */
    pthread_mutex_unlock(&t->gate.mu);
    if (lat) {
        Sluice__LatencyHistogram *arr;
        m->n_latency = tm_latency_fill(lat, &arr, &m->latency); /* freed by free_metrics */
        tm_latency_free(lat);
    }
    if (t->debloat) {
        m->debloated_buffer_size = __atomic_load_n(&t->debloat->size_pub, __ATOMIC_RELAXED);
        m->time_to_consume_ms = __atomic_load_n(&t->debloat->ttc_ms_pub, __ATOMIC_RELAXED);
    }
    if (info) {
        m->operator_info = json_dumps(info, JSON_COMPACT); /* freed by free_metrics */
        json_decref(info);
    }
    if (!t->hb_at_ns) t->hb_at_ns = now;
    int64_t span = now - t->hb_at_ns;
    if (span > 0) {
        double di = (double)(idle - t->hb_idle_ns), db = (double)(bp - t->hb_bp_ns);
        double per = 1000.0 / (double)span;
        double idle_ms = SL_MIN(1000.0, SL_MAX(0.0, di * per));
        double bp_ms = SL_MIN(1000.0 - idle_ms, SL_MAX(0.0, db * per));
        t->idle_per_s = idle_ms;
        t->bp_per_s = bp_ms;
        t->busy_per_s = SL_MAX(0.0, 1000.0 - idle_ms - bp_ms);
        t->hb_busy_ns += (uint64_t)SL_MAX(0.0, (double)span - di - db);
        t->hb_idle_ns = idle;
        t->hb_bp_ns = bp;
        t->hb_at_ns = now;
    }
    m->idle_ms_per_s = t->idle_per_s;
    m->backpressured_ms_per_s = t->bp_per_s;
    m->busy_ms_per_s = t->busy_per_s;
    m->idle_ms = idle / 1000000;
    m->backpressured_ms = bp / 1000000;
    m->busy_ms = t->hb_busy_ns / 1000000;
}

/* What fill_metrics allocated in m. */
static void free_metrics(Sluice__SubtaskMetrics *m)
{
    if (m->operator_info != protobuf_c_empty_string) free(m->operator_info);
    m->operator_info = NULL;
    if (m->n_latency) free(m->latency[0]); /* the array of them (tm_latency_fill) */
    free(m->latency);
    m->latency = NULL;
    m->n_latency = 0;
}

/* Fills hb->metrics; returns the array of records behind it (caller frees). */
static Sluice__SubtaskMetrics *heartbeat_metrics(tm_net *n, Sluice__Heartbeat *hb)
{
    int total = 0;
    for (tm_deploy *d = n->deploys; d; d = d->next) total += d->cancelled ? 0 : d->ntasks;
    hb->metrics = sl_calloc((size_t)(total ? total : 1), sizeof(Sluice__SubtaskMetrics *));
    Sluice__SubtaskMetrics *ms = sl_calloc((size_t)(total ? total : 1), sizeof *ms);
    int64_t now = sl_mono_ns();
    for (tm_deploy *d = n->deploys; d; d = d->next) {
        if (d->cancelled) continue;
        for (int i = 0; i < d->ntasks; i++) {
            tm_task *t = &d->tasks[i];
            Sluice__SubtaskMetrics *m = &ms[hb->n_metrics];
            hb->metrics[hb->n_metrics++] = m;
            fill_metrics(d, t, m, now);
        }
    }
    return ms;
}

static void on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
    tm_net *n = arg;
    if (!n->jm_registered) return;
    /* a partition sends no reset: silence is how a lost JobManager shows */
    if (sl_mono_ms() - n->jm_heard_ms > n->hb_timeout_ms) {
        char why[96];
        snprintf(why, sizeof why, "no answer to heartbeats for %lld ms (heartbeat.timeout)",
                 (long long)(sl_mono_ms() - n->jm_heard_ms));
        jm_lost(n, why);
        return;
    }
    Sluice__Heartbeat hb = SLUICE__HEARTBEAT__INIT;
    struct sysinfo si;
    sysinfo(&si);
    hb.tm_id = n->id;
    hb.free_memory = (uint64_t)si.freeram * si.mem_unit;
    sl_proc_stats ps;
    sl_proc_stats_read(&ps); /* a few small /proc reads per heartbeat */
    Sluice__ProcessStats pst = SLUICE__PROCESS_STATS__INIT;
    pst.cpu_ns = ps.cpu_ns;
    pst.rss_bytes = ps.rss_bytes;
    pst.virtual_bytes = ps.virtual_bytes;
    pst.threads = (uint32_t)ps.threads;
    hb.process = &pst;
    Sluice__SubtaskMetrics *ms = heartbeat_metrics(n, &hb);
    if (n->prom) tm_prom_publish(n, &hb);
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    send_jm(n, &env);
    for (size_t i = 0; i < hb.n_metrics; i++) free_metrics(&ms[i]);
    free(ms);
    free(hb.metrics);
}

/* A JobManager message names the job as well as the attempt: both must match. */
static int same_job(const tm_deploy *d, const char *job_id)
{
    return job_id && strcmp(d->job_id, job_id) == 0;
}

/* With a cluster secret the JobManager's Hello answers our challenge with
 * its own nonce and proof; we check the proof and answer with ours in a
 * second Hello. SL_ERR (the connection dropped, the reason logged) when it
 * cannot prove the secret. */
static int jm_auth(tm_net *n, const Sluice__Hello *h)
{
    if (!sl_auth_on(&n->auth)) {
        if (h->nonce.len)
            sl_error(TAG, "the JobManager requires the cluster secret (security.cluster.secret), "
                          "which this TaskManager does not have");
        return SL_OK; /* it refuses us then, and says so in its log */
    }
    if (h->nonce.len != SL_AUTH_NONCE ||
        !sl_auth_check(&n->auth, "sluice-rpc-jobmanager", n->jm_nonce, h->nonce.data, n->id,
                       h->proof.data, h->proof.len)) {
        sl_error(TAG, "the JobManager did not prove the cluster secret (security.cluster.secret); "
                      "not registering");
        jm_lost(n, "JobManager not authenticated");
        return SL_ERR;
    }
    uint8_t proof[SL_AUTH_MAC];
    sl_auth_mac(&n->auth, "sluice-rpc-taskmanager", h->nonce.data, n->jm_nonce, n->id, proof);
    Sluice__Hello out = SLUICE__HELLO__INIT;
    out.version = SL_PROTOCOL_VERSION;
    out.role = "taskmanager";
    out.peer_id = n->id;
    out.proof.data = proof;
    out.proof.len = SL_AUTH_MAC;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
    env.hello = &out;
    sl_frame_push(bufferevent_get_output(n->jm), &env);
    return SL_OK;
}

/* Answer the JobManager's ProcessInfoRequest from this process's /proc/self
 * (lib/proc_info.h). A file is read here, its last PROCESS_FILE_MAX bytes:
 * a bounded read of a local file, like the snapshot writer's. */
#define PROCESS_FILE_MAX (8u << 20)
static void process_info(tm_net *n, const Sluice__ProcessInfoRequest *rq)
{
    Sluice__ProcessInfoReply out = SLUICE__PROCESS_INFO_REPLY__INIT;
    out.id = rq->id;
    char err[300] = "", *text = NULL;
    uint8_t *data = NULL;
    if (rq->kind == SLUICE__PROCESS_INFO_REQUEST__KIND__STACK_SAMPLES) {
        if (tm_flame_request(n, rq, err, sizeof err) == SL_OK) return; /* answered when sampled */
    } else if (rq->kind == SLUICE__PROCESS_INFO_REQUEST__KIND__THREAD_DUMP) {
        if (tm_flame_dump(n, rq->id, err, sizeof err) == SL_OK) return; /* answered when taken */
    } else if (rq->kind == SLUICE__PROCESS_INFO_REQUEST__KIND__LOG_LIST) {
        json_t *j = sl_proc_log_list();
        text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        out.json = text ? text : (char *)"{}";
    } else {
        int which = rq->kind == SLUICE__PROCESS_INFO_REQUEST__KIND__LOG_FILE      ? SL_PROC_LOG
                    : rq->kind == SLUICE__PROCESS_INFO_REQUEST__KIND__STDOUT_FILE ? SL_PROC_STDOUT
                                                                                  : 0;
        uint64_t size = 0;
        int fd = sl_proc_log_open(which, rq->name, &size, err, sizeof err);
        if (fd >= 0) {
            size_t want = size > PROCESS_FILE_MAX ? PROCESS_FILE_MAX : (size_t)size, got = 0;
            data = sl_malloc(want ? want : 1);
            off_t at = (off_t)(size - want);
            while (got < want) {
                ssize_t r = pread(fd, data + got, want - got, at + (off_t)got);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) break;
                got += (size_t)r;
            }
            close(fd);
            out.data.data = data;
            out.data.len = got;
        }
    }
    out.error = err;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_PROCESS_INFO_REPLY;
    env.process_info_reply = &out;
    sl_frame_push(bufferevent_get_output(n->jm), &env);
    free(text);
    free(data);
}

static void handle_jm(tm_net *n, Sluice__Envelope *env)
{
    switch (env->msg_case) {
    case SLUICE__ENVELOPE__MSG_HELLO:
        if (env->hello->version != SL_PROTOCOL_VERSION) {
            char why[96];
            snprintf(why, sizeof why, "JobManager speaks protocol %u, we speak %u",
                     env->hello->version, SL_PROTOCOL_VERSION);
            jm_lost(n, why);
            return;
        }
        if (jm_auth(n, env->hello) != SL_OK) return;
        n->jm_hello = 1;
        send_register(n);
        break;
    case SLUICE__ENVELOPE__MSG_REGISTER_ACK:
        if (!env->register_ack->accepted) {
            sl_error(TAG, "the JobManager refused our registration: %s", env->register_ack->reason);
            jm_lost(n, "registration refused");
            return;
        }
        if (n->leader_rt && env->register_ack->session != n->leader_session) {
            sl_warn(TAG, "refusing a JobManager whose session %016llx is not the leader's (%016llx)",
                    (unsigned long long)env->register_ack->session,
                    (unsigned long long)n->leader_session);
            jm_lost(n, "stale leader session");
            return;
        }
        n->jm_registered = 1;
        n->jm_heard_ms = sl_mono_ms();
        n->jm_session = env->register_ack->session;
        n->reconnect_ms = 0;
        if (env->register_ack->heartbeat_interval_ms)
            n->hb_interval_ms = (int64_t)env->register_ack->heartbeat_interval_ms;
        sl_info(TAG, "registered at the JobManager as %s (%d slots, data port %d, session %016llx)",
                n->id, n->slots, n->data_port, (unsigned long long)n->jm_session);
        {
            struct timeval tv = {(time_t)(n->hb_interval_ms / 1000),
                                 (suseconds_t)((n->hb_interval_ms % 1000) * 1000)};
            event_add(n->heartbeat, &tv);
        }
        break;
    case SLUICE__ENVELOPE__MSG_HEARTBEAT_ACK:
        n->jm_heard_ms = sl_mono_ms();
        if (!env->heartbeat_ack->known && n->jm_registered) {
            sl_warn(TAG, "the JobManager no longer knows us; registering again");
            tm_deploy_cancel_all(n);
            send_register(n);
        }
        break;
    case SLUICE__ENVELOPE__MSG_CANCEL:
        tm_deploy_cancel_attempt(n, n->jm_session, env->cancel->job_id, env->cancel->attempt);
        break;
    case SLUICE__ENVELOPE__MSG_TRIGGER: {
        const Sluice__TriggerCheckpoint *tc = env->trigger;
        tm_deploy *d = tm_deploy_find(n, n->jm_session, tc->attempt);
        if (!d || d->cancelled || !tc->dir || !same_job(d, tc->job_id)) break;
        /* every task hears of it: sources take it now; a task whose inputs
         * have all ended takes it too (nothing upstream sends it a barrier
         * any more); the others note it and take it with their barriers,
         * or at their end of input if no barrier comes (task.c) */
        for (int i = 0; i < d->ntasks; i++) {
            tm_task *t = &d->tasks[i];
            tm_mail *ml = sl_calloc(1, sizeof *ml);
            ml->kind = TM_MAIL_TRIGGER;
            ml->cpid = tc->checkpoint_id;
            ml->ts = tc->timestamp;
            ml->flags = (tc->is_savepoint ? SL_CP_SAVEPOINT : 0) | (tc->stop ? SL_CP_STOP : 0) |
                        (tc->drain ? SL_CP_DRAIN : 0) |
                        (tc->unaligned ? (tc->aligned_timeout_ms > 0 ? SL_CP_ALIGN_TIMEOUT : SL_CP_UNALIGNED) : 0);
            ml->align_timeout_ms = tc->unaligned ? tc->aligned_timeout_ms : 0;
            ml->dir = sl_strdup(tc->dir);
            tm_task_mail(t, ml);
        }
        break;
    }
    case SLUICE__ENVELOPE__MSG_NOTIFY: {
        const Sluice__NotifyCheckpoint *nc = env->notify;
        tm_deploy *d = tm_deploy_find(n, n->jm_session, nc->attempt);
        if (!d || d->cancelled || !same_job(d, nc->job_id)) break;
        for (int i = 0; i < d->ntasks; i++) {
            tm_mail *ml = sl_calloc(1, sizeof *ml);
            ml->kind = nc->completed ? TM_MAIL_COMPLETE : TM_MAIL_ABORT;
            ml->cpid = nc->checkpoint_id;
            tm_task_mail(&d->tasks[i], ml);
        }
        break;
    }
    case SLUICE__ENVELOPE__MSG_COLLECT_CREDIT: {
        const Sluice__CollectCredit *cc = env->collect_credit;
        tm_deploy *d = tm_deploy_find(n, n->jm_session, cc->attempt);
        if (d && same_job(d, cc->job_id)) tm_collect_credit(d, (int)SL_MIN(cc->rows, 1u << 20));
        break;
    }
    case SLUICE__ENVELOPE__MSG_PROCESS_INFO_REQUEST:
        process_info(n, env->process_info_request);
        break;
    default:
        sl_warn(TAG, "unexpected message %d from the JobManager; ignored", (int)env->msg_case);
    }
}

static void on_jm_read(struct bufferevent *bev, void *arg)
{
    tm_net *n = arg;
    for (;;) {
        Sluice__Envelope *env = NULL;
        char err[160];
        int rc = sl_frame_pull(bufferevent_get_input(bev), &env, err, sizeof err);
        if (rc == SL_AGAIN) break;
        if (rc != SL_OK) {
            jm_lost(n, err);
            return;
        }
        n->jm_heard_ms = sl_mono_ms();
        if (env->msg_case == SLUICE__ENVELOPE__MSG_DEPLOY) {
            if (n->jm_registered && env->deploy->session == n->jm_session)
                tm_deploy_request(n, env); /* takes env: planned off this thread */
            else
                sluice__envelope__free_unpacked(env, NULL); /* not our registration's session */
        } else {
            handle_jm(n, env);
            sluice__envelope__free_unpacked(env, NULL);
        }
        if (n->jm != bev) return; /* connection replaced or dropped */
    }
}

static void on_jm_event(struct bufferevent *bev, short what, void *arg)
{
    tm_net *n = arg;
    if (what & BEV_EVENT_CONNECTED) {
        bufferevent_set_timeouts(bev, NULL, NULL); /* the connect's, below */
        if (!*n->host) {
            /* the address the JobManager sees us at is the one others can use */
            struct sockaddr_in sin;
            socklen_t len = sizeof sin;
            char ip[INET_ADDRSTRLEN] = "127.0.0.1";
            if (getsockname(bufferevent_getfd(bev), (struct sockaddr *)&sin, &len) == 0)
                inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof ip);
            free(n->host);
            n->host = sl_strdup(ip);
        }
        Sluice__Hello h = SLUICE__HELLO__INIT;
        h.version = SL_PROTOCOL_VERSION;
        h.role = "taskmanager";
        h.peer_id = n->id;
        if (sl_auth_on(&n->auth)) {
            sl_auth_nonce(n->jm_nonce);
            h.nonce.data = n->jm_nonce;
            h.nonce.len = SL_AUTH_NONCE;
        }
        Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
        env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
        env.hello = &h;
        sl_frame_push(bufferevent_get_output(bev), &env);
        return;
    }
    if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF | BEV_EVENT_TIMEOUT)) {
        char why[256];
        const char *err = (what & BEV_EVENT_EOF) ? "connection closed"
                          : (what & BEV_EVENT_TIMEOUT) ? "timed out" : sl_tls_error(bev, why, sizeof why);
        if (n->tls && (what & BEV_EVENT_ERROR) && !n->jm_hello)
            sl_warn(TAG, "cannot connect to the JobManager over TLS: %s", err);
        jm_lost(n, n->jm_registered || n->jm_hello ? err : "cannot connect");
    }
}

static void jm_connect(tm_net *n)
{
    const char *host = sl_config_str(n->conf, "jobmanager.rpc.address");
    int port = (int)sl_config_int(n->conf, "jobmanager.rpc.port");
    if (n->leader_rt) {
        if (!n->has_leader) return; /* on_leader connects once one is known */
        host = n->leader_host;
        port = n->leader_port;
    }
    n->jm_heard_ms = sl_mono_ms();
    n->jm = sl_tls_bev(n->base, n->tls, -1, 0, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(n->jm, on_jm_read, NULL, on_jm_event, n);
    bufferevent_setwatermark(n->jm, EV_READ, 0, SL_FRAME_MAX + 8);
    bufferevent_enable(n->jm, EV_READ | EV_WRITE);
    /* an unanswered connect (a partition) gives up after a heartbeat
     * timeout at most, and the reconnect backoff tries again */
    int64_t limit = SL_MIN(n->hb_timeout_ms, 5000);
    struct timeval ct = {(time_t)(limit / 1000), (suseconds_t)((limit % 1000) * 1000)};
    bufferevent_set_timeouts(n->jm, NULL, &ct);
    if (bufferevent_socket_connect_hostname(n->jm, NULL, AF_INET, host, port) < 0) {
        /* reported through on_jm_event */
    }
}

static void on_reconnect(evutil_socket_t fd, short what, void *arg)
{
    tm_net *n = arg;
    if (!n->jm) jm_connect(n);
}

/* ZooKeeper's thread: the leader may have changed; look on ours. */
static void leader_changed(void *arg)
{
    tm_net *n = arg;
    event_active(n->leader_ev, EV_TIMEOUT, 0);
}

static void on_leader(evutil_socket_t fd, short what, void *arg)
{
    tm_net *n = arg;
    sl_zk_leader l;
    if (n->stopping || sl_zk_retriever_get(n->leader_rt, &l) != SL_OK) return;
    if (n->has_leader && l.session == n->leader_session && l.rpc_port == n->leader_port &&
        !strcmp(l.rpc_host, n->leader_host))
        return;
    sl_info(TAG, "JobManager leader is %s:%d (leader session %016llx)", l.rpc_host, l.rpc_port,
            (unsigned long long)l.session);
    n->has_leader = 1;
    snprintf(n->leader_host, sizeof n->leader_host, "%s", l.rpc_host);
    n->leader_port = l.rpc_port;
    n->leader_session = l.session;
    if (n->jm) {
        jm_lost(n, "a new JobManager leader was elected"); /* reconnects to it */
    } else {
        n->reconnect_ms = 0;
        jm_connect(n);
    }
}

/* ---- inbox ---------------------------------------------------------------- */

static void on_task_state(tm_net *n, tm_status *st)
{
    tm_deploy *d = tm_deploy_find(n, st->session, st->attempt);
    tm_task *t = d ? tm_deploy_task(d, st->chain, st->subtask) : NULL;
    if (t && st->state != SLUICE__TASK_STATE__TASK_RUNNING) t->final_seen = 1; /* tm_deploy_reap */
    if (st->session != n->jm_session) {
        /* a deployment of a JobManager that is gone: nobody to tell */
    } else if (t && st->state != SLUICE__TASK_STATE__TASK_RUNNING) {
        Sluice__SubtaskMetrics m;
        fill_metrics(d, t, &m, sl_mono_ns());
        report_full(n, st->job_id, st->attempt, st->chain, st->subtask, st->state, st->error, &m, 0);
        free_metrics(&m);
    } else if (st->end_of_input) {
        report_full(n, st->job_id, st->attempt, st->chain, st->subtask, st->state, NULL, NULL, 1);
    } else {
        tm_net_report_direct(n, st->job_id, st->attempt, st->chain, st->subtask, st->state, st->error);
    }
}

static void send_collected(tm_net *n, const tm_collect_out *o)
{
    if (o->session != n->jm_session) return; /* its JobManager is gone */
    Sluice__CollectRows cr = SLUICE__COLLECT_ROWS__INIT;
    cr.job_id = (char *)o->job_id;
    cr.attempt = o->attempt;
    cr.rows.data = (uint8_t *)o->rows;
    cr.rows.len = o->len;
    cr.nrows = (uint32_t)o->nrows;
    cr.offset = o->offset;
    cr.end = o->end != 0;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_COLLECT_ROWS;
    env.collect_rows = &cr;
    send_jm(n, &env);
}

/* Run what the other threads handed over, in the order it came; then put
 * queued data on the wire and reap deployments whose threads ended. */
static void on_inbox(evutil_socket_t fd, short what, void *arg)
{
    tm_net *n = arg;
    int exited = 0;
    sl_qmsg *list = sl_queue_pop_all(n->inbox);
    while (list) {
        sl_qmsg *m = list;
        list = m->next;
        switch ((tm_op_kind)m->type) {
        case TM_OP_TASK_STATE: {
            tm_status *st = SL_QMSG_OF(m, tm_status, qm);
            on_task_state(n, st);
            free(st->error);
            free(st);
            break;
        }
        case TM_OP_TASK_EXITED:
            exited = 1;
            free(m);
            break;
        case TM_OP_RECV_BACK:
            tm_exchange_recv_back(n, SL_QMSG_OF(m, sl_netbuf, qm));
            break;
        case TM_OP_SNAPSHOT_WRITTEN: {
            tm_snap_job *job = SL_QMSG_OF(m, tm_snap_job, qm);
            send_ack(n, job);
            tm_snap_job_free(job);
            break;
        }
        case TM_OP_PLANNED:
            tm_deploy_planned(n, m);
            break;
        case TM_OP_COLLECT_OUT: {
            tm_collect_out *o = SL_QMSG_OF(m, tm_collect_out, qm);
            send_collected(n, o);
            tm_collect_out_free(o);
            break;
        }
        case TM_OP_SAMPLED:
            tm_flame_done(n, SL_QMSG_OF(m, tm_flame, qm));
            break;
        }
    }
    for (tm_peer *p = n->peers; p; p = p->next) peer_flush(p);
    if (exited) tm_deploy_reap(n);
}

/* Tell the JobManager a subtask's part of a checkpoint is written (or why not). */
static void send_ack(tm_net *n, tm_snap_job *job)
{
    Sluice__AcknowledgeCheckpoint a = SLUICE__ACKNOWLEDGE_CHECKPOINT__INIT;
    a.job_id = job->job_id;
    a.attempt = job->attempt;
    a.checkpoint_id = job->cpid;
    a.chain = (uint32_t)job->chain;
    a.subtask = (uint32_t)job->subtask;
    a.alignment_ns = job->alignment_ns;
    a.sync_ns = job->sync_ns;
    a.async_ns = job->async_ns;
    a.start_delay_ns = job->start_delay_ns;
    a.error = job->error;
    Sluice__OperatorSubtaskHandle *hs = sl_calloc((size_t)(job->nparts ? job->nparts : 1), sizeof *hs);
    Sluice__OperatorSubtaskHandle **hp = sl_calloc((size_t)(job->nparts ? job->nparts : 1), sizeof *hp);
    for (int i = 0; i < job->nparts; i++) {
        tm_snap_part *p = &job->parts[i];
        sluice__operator_subtask_handle__init(&hs[i]);
        hs[i].uid = p->uid;
        hs[i].file = p->file;
        hs[i].kg_first = (uint32_t)p->kg_first;
        hs[i].kg_last = (uint32_t)p->kg_last;
        hs[i].size = p->size;
        hs[i].keyed = p->keyed;
        hs[i].has_opstate = p->bloblen > 0;
        hs[i].shared_files = p->inc.shared;
        hs[i].n_shared_files = p->inc.nshared;
        hs[i].private_files = p->inc.priv;
        hs[i].n_private_files = p->inc.npriv;
        hs[i].checkpointed_size = p->checkpointed_size;
        hp[i] = &hs[i];
    }
    a.n_handles = job->error[0] ? 0 : (size_t)job->nparts;
    a.handles = hp;
    a.unaligned = job->unaligned;
    a.persisted_bytes = job->persisted;
    a.processed_bytes = job->processed;
    a.head_uid = job->head_uid;
    if (job->cs_file && !job->error[0]) {
        a.channel_file = job->cs_file;
        a.channel_size = job->cs_size;
    }
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_ACK;
    env.ack = &a;
    send_jm(n, &env);
    free(hs);
    free(hp);
}

/* ---- start and stop ------------------------------------------------------- */

int tm_net_start(tm_net *n, char *err, size_t errlen)
{
    if (!(n->inbox = sl_queue_new("TaskManager inbox", SL_QUEUE_EVENTFD, 0, err, errlen))) return SL_ERR;
    if (sl_auth_load(&n->auth, n->conf, err, errlen) != SL_OK) return SL_ERR;
    if (sl_tls_internal(n->conf, &n->tls, err, errlen) != SL_OK) return SL_ERR;
    n->listener = sl_listen(n->base, sl_config_str(n->conf, "taskmanager.bind-host"),
                            (int)sl_config_int(n->conf, "taskmanager.data.port"), "data port",
                            on_data_accept, n, &n->data_port, err, errlen);
    if (!n->listener) return SL_ERR;
    n->inbox_ev = event_new(n->base, sl_queue_fd(n->inbox), EV_READ | EV_PERSIST, on_inbox, n);
    if (!n->inbox_ev || event_add(n->inbox_ev, NULL) != 0)
        return sl_seterr(err, errlen, "cannot watch the TaskManager's inbox");
    n->reconnect = event_new(n->base, -1, 0, on_reconnect, n);
    n->heartbeat = event_new(n->base, -1, EV_PERSIST, on_heartbeat, n);
    n->hb_interval_ms = sl_config_int(n->conf, "heartbeat.interval");
    n->hb_timeout_ms = sl_config_int(n->conf, "heartbeat.timeout");
    if (tm_snapshotter_start(n, err, errlen) != SL_OK) return SL_ERR;
    if (tm_deploy_start(n, err, errlen) != SL_OK) return SL_ERR;
    if (tm_flame_start(n, err, errlen) != SL_OK) return SL_ERR;
    if (sl_ha_enabled(n->conf)) {
        n->leader_ev = event_new(n->base, -1, 0, on_leader, n);
        n->leader_rt = sl_zk_retriever_start(n->conf, leader_changed, n, err, errlen);
        if (!n->leader_rt) return SL_ERR;
        return SL_OK; /* on_leader connects */
    }
    jm_connect(n);
    return SL_OK;
}

void tm_net_stop(tm_net *n)
{
    n->stopping = 1;
    sl_zk_retriever_stop(n->leader_rt); /* no callback runs after this */
    n->leader_rt = NULL;
    tm_deploy_cancel_all(n);
    tm_deploy_stop(n);
    tm_flame_stop(n);
    while (n->deploys) tm_deploy_free(n, n->deploys);
    tm_snapshotter_stop(n);
    if (n->inbox) {
        sl_queue_close(n->inbox); /* every other thread has ended */
        on_inbox(-1, 0, n);       /* statuses, credits, acks and plans still queued */
    }
    if (n->jm) bufferevent_free(n->jm);
    n->jm = NULL;
    tm_net_free_peers(n);
    sl_listen_free(n->listener);
    sl_auth_free(&n->auth);
    sl_tls_free(n->tls);
    n->tls = NULL;
    if (n->inbox_ev) event_free(n->inbox_ev);
    sl_queue_destroy(n->inbox);
    n->inbox = NULL;
    if (n->reconnect) event_free(n->reconnect);
    if (n->heartbeat) event_free(n->heartbeat);
    if (n->leader_ev) event_free(n->leader_ev);
}

void tm_net_free_peers(tm_net *n)
{
    while (n->pending) pending_free(n->pending, 0);
    while (n->peers) {
        tm_peer *p = n->peers;
        n->peers = p->next;
        if (p->bev) bufferevent_free(p->bev);
        if (p->wake) event_free(p->wake);
        free(p->early);
        pthread_mutex_destroy(&p->mu);
        free(p->id);
        free(p->host);
        free(p);
    }
}
