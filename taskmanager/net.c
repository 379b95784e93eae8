/*
 * net.c -- the TaskManager's network thread: the JobManager connection,
 * deployments, and the data connections to other TaskManagers.
 *
 * JobManager: connect, Hello, RegisterTaskManager, then a Heartbeat every
 * heartbeat.interval carrying every task's figures. When the JobManager
 * goes away, every task here is cancelled (its jobs are the JobManager's to
 * restart) and we keep trying to reconnect.
 *
 * Data connections: all channels between two TaskManagers share one TCP
 * connection, opened by the one whose id sorts lower. Frames (little
 * endian) have a 17-byte header: u8 type, u32 attempt, u32 channel,
 * u32 a, u32 b.
 *   DATA   a = sender's backlog (buffers queued behind this one), b = length,
 *          then b bytes: one network buffer.
 *   CREDIT a = number of buffers the receiver has made ready for the channel.
 *   HELLO  (first frame of the opener) attempt = magic, channel = version,
 *          a = id length, then the id.
 * A sender puts a buffer on the wire only against credit, so a channel
 * whose consumer is slow stops alone while the connection keeps serving
 * the others. The receiver grants buffers-per-channel exclusive credits per
 * channel, and lends floating buffers (floating-buffers-per-gate per gate)
 * to channels that announce a backlog. A damaged frame closes the
 * connection and fails the jobs that used it; nothing else is affected.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysinfo.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <event2/thread.h>

#include "tm.h"
#include "frame.h"
#include "listen.h"
#include "log.h"

#define TAG "tm:net"

#define DF_DATA 1
#define DF_CREDIT 2
#define DF_HELLO 3
#define DF_HDR 17
#define DF_MAGIC 0x534c4443u /* "SLDC" */
#define DF_VERSION 1

tm_outchan **tm_task_writer_slot(tm_task *t, int out_edge_index, int consumer);

static void deploy_cancel(tm_net *n, tm_deploy *d);
static void reap_deploys(tm_net *n);
static void send_ack(tm_net *n, tm_snap_job *job);
static void peer_flush(tm_peer *p);
static void peer_connect(tm_peer *p);

/* ---- small helpers ------------------------------------------------------ */

static void put_u32(uint8_t *p, uint32_t x) { memcpy(p, &x, 4); }
static uint32_t get_u32(const uint8_t *p) { uint32_t x; memcpy(&x, p, 4); return x; }

static void df_header(uint8_t *h, uint8_t type, uint32_t attempt, uint32_t chan, uint32_t a,
                      uint32_t b)
{
    h[0] = type;
    put_u32(h + 1, attempt);
    put_u32(h + 5, chan);
    put_u32(h + 9, a);
    put_u32(h + 13, b);
}

static tm_deploy *find_deploy(tm_net *n, uint32_t attempt)
{
    for (tm_deploy *d = n->deploys; d; d = d->next)
        if (d->attempt == attempt) return d;
    return NULL;
}

static void send_jm(tm_net *n, Sluice__Envelope *env)
{
    if (n->jm && n->jm_hello) sl_frame_push(bufferevent_get_output(n->jm), env);
}

/* ---- inbox from task threads -------------------------------------------- */

void tm_net_report(tm_net *n, tm_deploy *d, int chain, int subtask, Sluice__TaskState s,
                   const char *error)
{
    tm_status *st = sl_calloc(1, sizeof *st);
    memcpy(st->job_id, d->job_id, sizeof st->job_id);
    st->attempt = d->attempt;
    st->chain = chain;
    st->subtask = subtask;
    st->state = s;
    st->error = error ? sl_strdup(error) : NULL;
    pthread_mutex_lock(&n->mu);
    if (n->status_tail) n->status_tail->next = st;
    else n->status_head = st;
    n->status_tail = st;
    pthread_mutex_unlock(&n->mu);
    event_active(n->inbox, EV_TIMEOUT, 0);
}

void tm_net_task_exited(tm_net *n)
{
    pthread_mutex_lock(&n->mu);
    n->exited++;
    pthread_mutex_unlock(&n->mu);
    event_active(n->inbox, EV_TIMEOUT, 0);
}

/* Receive buffers come back from tasks as credit, via the inbox. */
void tm_net_recycle_recv(sl_buf *b)
{
    tm_net *n = b->recycle_ctx;
    pthread_mutex_lock(&n->mu);
    b->next = n->credit_head;
    n->credit_head = b;
    pthread_mutex_unlock(&n->mu);
    event_active(n->inbox, EV_TIMEOUT, 0);
}

void tm_peer_enqueue(tm_outchan *oc, sl_buf *b)
{
    tm_peer *p = oc->peer;
    b->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (oc->qtail) oc->qtail->next = b;
    else oc->qhead = b;
    oc->qtail = b;
    oc->qlen++;
    pthread_mutex_unlock(&p->mu);
    event_active(p->wake, EV_TIMEOUT, 0);
}

/* ---- credits (receiving side) ------------------------------------------- */

static void send_credit(tm_inchan *ic, uint32_t attempt, int credits)
{
    if (!credits) return;
    ic->announced += credits;
    tm_peer *p = ic->peer;
    if (!p->bev || !p->hello_done) return; /* announced when the connection is up */
    uint8_t h[DF_HDR];
    df_header(h, DF_CREDIT, attempt, ic->id, (uint32_t)credits, 0);
    evbuffer_add(bufferevent_get_output(p->bev), h, DF_HDR);
}

/* A receive buffer came back: it becomes credit for its channel (exclusive)
 * or returns to the deployment's spare pool (floating). */
static void recv_buffer_back(tm_net *n, sl_buf *b)
{
    tm_deploy *d = NULL;
    for (tm_deploy *x = n->deploys; x; x = x->next)
        if (x->recv_pool == b->pool) d = x;
    if (!d || d->cancelled) {
        sl_pool_put(b);
        return;
    }
    tm_inchan *ic = NULL;
    if (b->owner >= 0 && (uint32_t)b->owner < d->nchan) ic = d->in_by_id[b->owner];
    if (ic) {
        b->next = ic->reserved;
        ic->reserved = b;
        ic->nreserved++;
        send_credit(ic, d->attempt, 1);
    } else {
        sl_pool_put(b);
    }
}

/* Lend floating buffers to a channel whose sender has more queued than it
 * has credit for. */
static void lend_floating(tm_deploy *d, tm_inchan *ic)
{
    int want = ic->backlog - ic->announced;
    int lent = 0;
    while (want-- > 0) {
        sl_buf *b = sl_pool_tryget(d->recv_pool);
        if (!b) break;
        b->owner = -1; /* floating: goes back to the pool */
        b->recycle = tm_net_recycle_recv;
        b->recycle_ctx = d->net;
        b->next = ic->reserved;
        ic->reserved = b;
        ic->nreserved++;
        lent++;
    }
    send_credit(ic, d->attempt, lent);
}

/* ---- deployments --------------------------------------------------------- */

static void on_peer_wake(evutil_socket_t fd, short what, void *arg);

static tm_peer *peer_get(tm_net *n, const char *id, const char *host, int port)
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

/* Which gate channel index producer subtask i of edge e has at consumer j. */
static int gate_index(const sl_jobgraph *g, const sl_vertex *head, int e_idx, int i)
{
    int idx = 0;
    for (int k = 0; k < head->nin; k++) {
        const sl_edge *e = &g->e[head->in_edges[k]];
        int np = g->v[e->from].parallelism;
        if (head->in_edges[k] == e_idx) return idx + (e->strategy == SL_PART_FORWARD ? 0 : i);
        idx += e->strategy == SL_PART_FORWARD ? 1 : np;
    }
    return -1;
}

static tm_task *local_task(tm_deploy *d, int chain, int subtask)
{
    for (int i = 0; i < d->ntasks; i++)
        if (d->tasks[i].chain == chain && d->tasks[i].subtask == subtask) return &d->tasks[i];
    return NULL;
}

static int build_channels(tm_net *n, tm_deploy *d, const Sluice__DeployJob *m, char *err,
                          size_t errlen)
{
    const sl_jobgraph *g = d->g;
    /* channel ids: per inter-chain edge, producer i x consumer j */
    uint32_t *base = sl_calloc((size_t)(g->ne ? g->ne : 1), sizeof(uint32_t));
    uint32_t next = 0;
    for (int e = 0; e < g->ne; e++) {
        base[e] = next;
        next += (uint32_t)(g->v[g->e[e].from].parallelism * g->v[g->e[e].to].parallelism);
    }
    d->nchan = next;
    d->out_by_id = sl_calloc(next ? next : 1, sizeof(tm_outchan *));
    d->in_by_id = sl_calloc(next ? next : 1, sizeof(tm_inchan *));
    int nremote_in = 0;
    for (int e = 0; e < g->ne; e++) {
        const sl_edge *ed = &g->e[e];
        const sl_vertex *from = &g->v[ed->from], *to = &g->v[ed->to];
        if (from->chain == to->chain) continue; /* chained: a function call */
        const sl_vertex *head = to;
        int out_idx = -1;
        for (int k = 0; k < from->nout; k++)
            if (from->out_edges[k] == e) out_idx = k;
        for (int i = 0; i < from->parallelism; i++)
            for (int j = 0; j < to->parallelism; j++) {
                if (ed->strategy == SL_PART_FORWARD && i != j) continue;
                uint32_t id = base[e] + (uint32_t)(i * to->parallelism + j);
                tm_task *prod = local_task(d, from->chain, i), *cons = local_task(d, to->chain, j);
                int gi = gate_index(g, head, e, i);
                if (prod) {
                    tm_outchan *oc = sl_calloc(1, sizeof *oc);
                    oc->id = id;
                    oc->d = d;
                    if (cons) {
                        oc->local = &cons->gate;
                        oc->local_idx = gi;
                    } else {
                        const Sluice__SlotLocation *loc = m->slots[j];
                        oc->peer = peer_get(n, loc->tm_id, loc->host, (int)loc->data_port);
                        pthread_mutex_lock(&oc->peer->mu);
                        oc->peer_next = oc->peer->chans;
                        oc->peer->chans = oc;
                        pthread_mutex_unlock(&oc->peer->mu);
                    }
                    d->out_by_id[id] = oc;
                    *tm_task_writer_slot(prod, out_idx, j) = oc;
                }
                if (cons && !prod) {
                    const Sluice__SlotLocation *loc = m->slots[i];
                    tm_inchan *ic = sl_calloc(1, sizeof *ic);
                    ic->id = id;
                    ic->gate = &cons->gate;
                    ic->gate_idx = gi;
                    ic->peer = peer_get(n, loc->tm_id, loc->host, (int)loc->data_port);
                    d->in_by_id[id] = ic;
                    nremote_in++;
                }
                if (cons) cons->chan_input[gi] = ed->to_input;
            }
    }
    free(base);
    /* receive buffers: exclusive per remote channel, plus floating per gate */
    int ngates = 0;
    for (int i = 0; i < d->ntasks; i++) ngates += d->tasks[i].ngate_chan > 0;
    int total = nremote_in * d->buffers_per_channel + (nremote_in ? ngates * d->floating_per_gate : 0);
    if (total) {
        d->recv_pool = sl_pool_new(total, d->seg_size);
        for (uint32_t id = 0; id < d->nchan; id++) {
            tm_inchan *ic = d->in_by_id[id];
            if (!ic) continue;
            for (int k = 0; k < d->buffers_per_channel; k++) {
                sl_buf *b = sl_pool_tryget(d->recv_pool);
                SL_ASSERT(b);
                b->owner = (int)id; /* returns as this channel's credit */
                b->recycle = tm_net_recycle_recv;
                b->recycle_ctx = n;
                b->next = ic->reserved;
                ic->reserved = b;
                ic->nreserved++;
            }
        }
    }
    SL_UNUSED(err);
    SL_UNUSED(errlen);
    return SL_OK;
}

static void report_full(tm_net *n, const char *job_id, uint32_t attempt, int chain, int subtask,
                        Sluice__TaskState s, const char *error, Sluice__SubtaskMetrics *final)
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
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_TASK_STATUS;
    env.task_status = &ts;
    send_jm(n, &env);
}

static void report_direct(tm_net *n, const char *job_id, uint32_t attempt, int chain, int subtask,
                          Sluice__TaskState s, const char *error)
{
    report_full(n, job_id, attempt, chain, subtask, s, error, NULL);
}

/* Credits that arrived before their deployment did (another TaskManager
 * deployed first). Bounded; applied when the deployment appears. */
typedef struct early_credit {
    uint32_t attempt, chan, credits;
    tm_peer *peer;
} early_credit;
static early_credit early[4096];
static int nearly;

static void deploy_job(tm_net *n, const Sluice__DeployJob *m)
{
    char err[1024];
    if (!m->job_id || strlen(m->job_id) != 32 || !m->graph_json || m->n_slots == 0) {
        sl_warn(TAG, "ignoring a malformed deployment");
        return;
    }
    sl_jobgraph *g = sl_jobgraph_parse(m->graph_json, strlen(m->graph_json), 1, 0, err, sizeof err);
    if (!g) {
        sl_error(TAG, "cannot deploy job %s: %s", m->job_id, err);
        report_direct(n, m->job_id, m->attempt, 0, 0, SLUICE__TASK_STATE__TASK_FAILED, err);
        return;
    }
    tm_deploy *d = sl_calloc(1, sizeof *d);
    if (m->attempt > n->max_attempt) n->max_attempt = m->attempt;
    memcpy(d->job_id, m->job_id, 32);
    d->attempt = m->attempt;
    d->g = g;
    d->net = n;
    d->nslots = (int)m->n_slots;
    d->buffer_timeout_ms = m->buffer_timeout_ms;
    d->checkpointing = m->checkpointing;
    d->exactly_once = m->exactly_once;
    if (m->restore_dir && *m->restore_dir) {
        void *packed = NULL;
        size_t plen = 0;
        d->restore_dir = sl_strdup(m->restore_dir);
        if (sl_snapshot_read_metadata(m->restore_dir, &packed, &plen, err, sizeof err) != SL_OK ||
            !(d->restore = sluice__snapshot_metadata__unpack(NULL, plen, packed))) {
            if (!packed) sl_warn(TAG, "job %s: cannot restore: %s", m->job_id, err);
            else snprintf(err, sizeof err, "%s/_metadata does not decode", m->restore_dir);
            free(packed);
            report_direct(n, m->job_id, m->attempt, 0, 0, SLUICE__TASK_STATE__TASK_FAILED, err);
            free(d->restore_dir);
            sl_jobgraph_destroy(g);
            free(d);
            return;
        }
        free(packed);
    }
    d->seg_size = (uint32_t)sl_config_int(n->conf, "taskmanager.memory.segment-size");
    d->buffers_per_channel = (int)sl_config_int(n->conf, "taskmanager.network.memory.buffers-per-channel");
    d->floating_per_gate = (int)sl_config_int(n->conf, "taskmanager.network.memory.floating-buffers-per-gate");
    if (d->buffers_per_channel < 1) d->buffers_per_channel = 1;
    /* tasks: every chain's subtask for each local slot */
    int ntasks = 0;
    for (size_t s = 0; s < m->n_local_slots; s++)
        for (int c = 0; c < g->nchains; c++)
            if (m->local_slots[s] < (uint32_t)g->chains[c].parallelism) ntasks++;
    d->tasks = sl_calloc((size_t)(ntasks ? ntasks : 1), sizeof(tm_task));
    for (size_t s = 0; s < m->n_local_slots; s++)
        for (int c = 0; c < g->nchains; c++) {
            if (m->local_slots[s] >= (uint32_t)g->chains[c].parallelism) continue;
            tm_task *t = &d->tasks[d->ntasks++];
            t->d = d;
            t->chain = c;
            t->subtask = (int)m->local_slots[s];
            t->hb_at_ns = sl_mono_ns(); /* the first heartbeat covers the time since now */
            const sl_vertex *head = &g->v[g->chains[c].vertices[0]];
            int nchan = 0;
            for (int k = 0; k < head->nin; k++) {
                const sl_edge *e = &g->e[head->in_edges[k]];
                nchan += e->strategy == SL_PART_FORWARD ? 1 : g->v[e->from].parallelism;
            }
            t->ngate_chan = nchan;
            t->chan_input = sl_calloc((size_t)(nchan ? nchan : 1), sizeof(int));
            tm_gate_init(&t->gate, nchan);
            tm_task_build_outputs(t, err, sizeof err);
        }
    build_channels(n, d, m, err, sizeof err);
    d->next = n->deploys;
    n->deploys = d;
    sl_info(TAG, "deploying job %s attempt %u: %d task%s", d->job_id, d->attempt, d->ntasks,
            d->ntasks == 1 ? "" : "s");
    /* connections and first credits */
    for (uint32_t id = 0; id < d->nchan; id++) {
        tm_inchan *ic = d->in_by_id[id];
        if (ic) {
            if (!ic->peer->bev && ic->peer->initiator) peer_connect(ic->peer);
            send_credit(ic, d->attempt, ic->nreserved);
        }
        tm_outchan *oc = d->out_by_id[id];
        if (oc && oc->peer && !oc->peer->bev && oc->peer->initiator) peer_connect(oc->peer);
    }
    for (int i = 0; i < nearly;) {
        if (early[i].attempt == d->attempt) {
            if (early[i].chan < d->nchan && d->out_by_id[early[i].chan])
                d->out_by_id[early[i].chan]->credit += (int)early[i].credits;
            early[i] = early[--nearly];
        } else {
            i++;
        }
    }
    for (int i = 0; i < d->ntasks; i++) {
        d->running_tasks++;
        if (tm_task_start(&d->tasks[i], err, sizeof err) != SL_OK) {
            d->running_tasks--;
            report_direct(n, d->job_id, d->attempt, d->tasks[i].chain, d->tasks[i].subtask,
                          SLUICE__TASK_STATE__TASK_FAILED, err);
        }
    }
    for (tm_peer *p = n->peers; p; p = p->next) peer_flush(p);
}

static void deploy_cancel(tm_net *n, tm_deploy *d)
{
    if (d->cancelled) return;
    __atomic_store_n(&d->cancelled, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < d->ntasks; i++) {
        tm_task *t = &d->tasks[i];
        pthread_mutex_lock(&t->gate.mu);
        t->gate.closed = 1;
        pthread_cond_broadcast(&t->gate.cv);
        pthread_mutex_unlock(&t->gate.mu);
        if (t->out_pool) sl_pool_cancel(t->out_pool);
        tm_task_wake(t);
    }
    SL_UNUSED(n);
}

static void deploy_free(tm_net *n, tm_deploy *d)
{
    for (int i = 0; i < d->ntasks; i++)
        if (d->tasks[i].started) pthread_join(d->tasks[i].thread, NULL);
    for (tm_deploy **pp = &n->deploys; *pp; pp = &(*pp)->next)
        if (*pp == d) { *pp = d->next; break; }
    for (uint32_t id = 0; id < d->nchan; id++) {
        tm_outchan *oc = d->out_by_id[id];
        if (oc) {
            if (oc->peer) {
                tm_peer *p = oc->peer;
                pthread_mutex_lock(&p->mu);
                for (tm_outchan **q = &p->chans; *q; q = &(*q)->peer_next)
                    if (*q == oc) { *q = oc->peer_next; break; }
                sl_buf *b = oc->qhead;
                oc->qhead = oc->qtail = NULL;
                pthread_mutex_unlock(&p->mu);
                while (b) { sl_buf *nx = b->next; sl_buf_recycle(b); b = nx; }
            }
            free(oc);
        }
        tm_inchan *ic = d->in_by_id[id];
        if (ic) {
            sl_buf *b = ic->reserved;
            while (b) { sl_buf *nx = b->next; sl_pool_put(b); b = nx; }
            free(ic);
        }
    }
    for (int i = 0; i < d->ntasks; i++) {
        tm_task *t = &d->tasks[i];
        tm_gate_destroy(&t->gate);
        tm_writer_destroy_all(t);
        free(t->chan_input);
    }
    /* receive buffers still on their way back are in the inbox: take them */
    pthread_mutex_lock(&n->mu);
    sl_buf **pb = &n->credit_head;
    while (*pb) {
        if ((*pb)->pool == d->recv_pool) {
            sl_buf *b = *pb;
            *pb = b->next;
            sl_pool_put(b);
        } else {
            pb = &(*pb)->next;
        }
    }
    pthread_mutex_unlock(&n->mu);
    if (d->recv_pool) sl_pool_close(d->recv_pool);
    free(d->out_by_id);
    free(d->in_by_id);
    free(d->tasks);
    sl_jobgraph_destroy(d->g);
    if (d->restore) sluice__snapshot_metadata__free_unpacked(d->restore, NULL);
    free(d->restore_dir);
    free(d);
}

/* Fail every deployment that talks to peer p (its connection broke). */
static void fail_deploys_of(tm_net *n, tm_peer *p, const char *why)
{
    for (tm_deploy *d = n->deploys; d; d = d->next) {
        if (d->cancelled) continue;
        int uses = 0;
        for (uint32_t id = 0; id < d->nchan && !uses; id++)
            uses = (d->out_by_id[id] && d->out_by_id[id]->peer == p) ||
                   (d->in_by_id[id] && d->in_by_id[id]->peer == p);
        if (!uses) continue;
        char msg[512];
        snprintf(msg, sizeof msg, "data connection to TaskManager %s failed: %s", p->id, why);
        sl_warn(TAG, "job %s: %s", d->job_id, msg);
        tm_task *t = &d->tasks[0];
        report_direct(n, d->job_id, d->attempt, t->chain, t->subtask, SLUICE__TASK_STATE__TASK_FAILED,
                      msg);
        deploy_cancel(n, d);
    }
}

/* ---- data connections ---------------------------------------------------- */

static void data_cleanup(const void *data, size_t len, void *arg)
{
    SL_UNUSED(data);
    SL_UNUSED(len);
    sl_buf_recycle((sl_buf *)arg);
}

/* Put queued buffers on the wire, as far as credit allows. */
static void peer_flush(tm_peer *p)
{
    if (!p->bev || !p->hello_done) return;
    struct evbuffer *out = bufferevent_get_output(p->bev);
    pthread_mutex_lock(&p->mu);
    for (tm_outchan *oc = p->chans; oc; oc = oc->peer_next) {
        while (oc->qhead && oc->credit > 0 && !oc->d->cancelled) {
            sl_buf *b = oc->qhead;
            oc->qhead = b->next;
            if (!oc->qhead) oc->qtail = NULL;
            oc->qlen--;
            oc->credit--;
            uint8_t h[DF_HDR];
            df_header(h, DF_DATA, oc->d->attempt, oc->id, (uint32_t)oc->qlen, b->len);
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
    fail_deploys_of(n, p, why);
}

static int handle_data_frame(tm_peer *p, const uint8_t *h, struct evbuffer *in, char *err,
                             size_t errlen)
{
    tm_net *n = p->net;
    uint8_t type = h[0];
    uint32_t attempt = get_u32(h + 1), chan = get_u32(h + 5), a = get_u32(h + 9), b = get_u32(h + 13);
    tm_deploy *d = find_deploy(n, attempt);
    if (type == DF_CREDIT) {
        if (a == 0 || a > 1u << 16) return sl_seterr(err, errlen, "bad credit count %u", a);
        if (!d) {
            if (attempt <= n->max_attempt) return SL_OK; /* its job has ended here */
            if (nearly < (int)SL_ARRAY_LEN(early))
                early[nearly++] = (early_credit){attempt, chan, a, p};
            else
                sl_warn(TAG, "too many early credits; dropping one for attempt %u", attempt);
            return SL_OK;
        }
        if (chan >= d->nchan || !d->out_by_id[chan] || d->out_by_id[chan]->peer != p)
            return sl_seterr(err, errlen, "credit for unknown channel %u of attempt %u", chan, attempt);
        d->out_by_id[chan]->credit += (int)a;
        return SL_OK;
    }
    if (type != DF_DATA) return sl_seterr(err, errlen, "unknown frame type %u", type);
    if (b == 0 || b > (1u << 20)) return sl_seterr(err, errlen, "bad data frame length %u", b);
    if (!d || d->cancelled) {
        evbuffer_drain(in, b); /* a job that has ended here: its data is moot */
        return SL_OK;
    }
    tm_inchan *ic = chan < d->nchan ? d->in_by_id[chan] : NULL;
    if (!ic || ic->peer != p)
        return sl_seterr(err, errlen, "data for unknown channel %u of job %s", chan, d->job_id);
    if (!ic->reserved) return sl_seterr(err, errlen, "data on channel %u without credit", chan);
    if (b > d->seg_size) return sl_seterr(err, errlen, "data frame of %u bytes exceeds the %u-byte buffer", b, d->seg_size);
    sl_buf *buf = ic->reserved;
    ic->reserved = buf->next;
    ic->nreserved--;
    ic->announced--;
    evbuffer_remove(in, buf->data, b);
    buf->len = b;
    buf->next = NULL;
    ic->backlog = (int)a;
    buf->chan = ic->gate_idx;
    tm_gate_push(ic->gate, buf);
    if (ic->backlog > ic->announced) lend_floating(d, ic);
    return SL_OK;
}

static void on_data_read(struct bufferevent *bev, void *arg)
{
    tm_peer *p = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    char err[256];
    for (;;) {
        uint8_t h[DF_HDR];
        if (evbuffer_get_length(in) < DF_HDR) break;
        evbuffer_copyout(in, h, DF_HDR);
        if (h[0] == DF_DATA) {
            uint32_t len = get_u32(h + 13);
            if (len <= (1u << 20) && evbuffer_get_length(in) < DF_HDR + (size_t)len) break;
        }
        evbuffer_drain(in, DF_HDR);
        if (handle_data_frame(p, h, in, err, sizeof err) != SL_OK) {
            peer_close(p, err);
            return;
        }
    }
    peer_flush(p);
    /* credit may have let a finished deployment send its last buffers */
    if (p->net->reap_pending) reap_deploys(p->net);
}

static void on_data_event(struct bufferevent *bev, short what, void *arg)
{
    tm_peer *p = arg;
    if (what & BEV_EVENT_CONNECTED) {
        uint8_t h[DF_HDR];
        size_t idlen = strlen(p->net->id);
        df_header(h, DF_HELLO, DF_MAGIC, DF_VERSION, (uint32_t)idlen, 0);
        evbuffer_add(bufferevent_get_output(bev), h, DF_HDR);
        evbuffer_add(bufferevent_get_output(bev), p->net->id, idlen);
        p->hello_done = 1;
        int one = 1;
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        sl_info(TAG, "data connection to %s (%s:%d) established", p->id, p->host, p->port);
        /* credits announced before the connection existed */
        for (tm_deploy *d = p->net->deploys; d; d = d->next)
            for (uint32_t id = 0; id < d->nchan; id++) {
                tm_inchan *ic = d->in_by_id[id];
                if (ic && ic->peer == p && ic->announced) {
                    int c = ic->announced;
                    ic->announced = 0;
                    send_credit(ic, d->attempt, c);
                }
            }
        peer_flush(p);
        return;
    }
    if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF))
        peer_close(p, (what & BEV_EVENT_EOF) ? "closed by peer"
                                             : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
}

static void peer_attach(tm_peer *p, struct bufferevent *bev)
{
    p->bev = bev;
    bufferevent_setcb(bev, on_data_read, NULL, on_data_event, p);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static void peer_connect(tm_peer *p)
{
    if (p->bev || !p->host || !p->port) return;
    struct bufferevent *bev = bufferevent_socket_new(p->net->base, -1, BEV_OPT_CLOSE_ON_FREE);
    peer_attach(p, bev);
    char port[16];
    snprintf(port, sizeof port, "%d", p->port);
    if (bufferevent_socket_connect_hostname(bev, NULL, AF_INET, p->host, p->port) < 0) {
        /* on_data_event reports the failure */
    }
}

/* An accepted data connection, until its HELLO says who it is. */
typedef struct pending_conn {
    tm_net *n;
    struct bufferevent *bev;
} pending_conn;

static void on_pending_read(struct bufferevent *bev, void *arg)
{
    pending_conn *pc = arg;
    tm_net *n = pc->n;
    struct evbuffer *in = bufferevent_get_input(bev);
    if (evbuffer_get_length(in) < DF_HDR) return;
    uint8_t h[DF_HDR];
    evbuffer_copyout(in, h, DF_HDR);
    uint32_t idlen = get_u32(h + 9);
    if (h[0] != DF_HELLO || get_u32(h + 1) != DF_MAGIC || get_u32(h + 5) != DF_VERSION ||
        idlen == 0 || idlen > 256) {
        sl_warn(TAG, "closing a data connection that did not start with a valid hello");
        bufferevent_free(bev);
        free(pc);
        return;
    }
    if (evbuffer_get_length(in) < DF_HDR + idlen) return;
    evbuffer_drain(in, DF_HDR);
    char id[257];
    evbuffer_remove(in, id, idlen);
    id[idlen] = '\0';
    tm_peer *p = peer_get(n, id, NULL, 0);
    if (p->bev) {
        sl_warn(TAG, "TaskManager %s connected again; replacing its data connection", id);
        bufferevent_free(p->bev);
        p->bev = NULL;
    }
    free(pc);
    peer_attach(p, bev);
    p->hello_done = 1;
    for (tm_deploy *d = n->deploys; d; d = d->next)
        for (uint32_t cid = 0; cid < d->nchan; cid++) {
            tm_inchan *ic = d->in_by_id[cid];
            if (ic && ic->peer == p && ic->announced) {
                int c = ic->announced;
                ic->announced = 0;
                send_credit(ic, d->attempt, c);
            }
        }
    if (evbuffer_get_length(in)) on_data_read(bev, p);
    else peer_flush(p);
}

static void on_pending_event(struct bufferevent *bev, short what, void *arg)
{
    if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
        bufferevent_free(bev);
        free(arg);
    }
}

static void on_data_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                           int salen, void *arg)
{
    tm_net *n = arg;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pending_conn *pc = sl_calloc(1, sizeof *pc);
    pc->n = n;
    pc->bev = bufferevent_socket_new(n->base, fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(pc->bev, on_pending_read, NULL, on_pending_event, pc);
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
    for (tm_deploy *d = n->deploys; d; d = d->next) deploy_cancel(n, d);
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
    m->input_watermark = LD(in_wm);
    m->output_watermark = LD(out_wm);
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
    pthread_mutex_unlock(&t->gate.mu);
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
    Sluice__Heartbeat hb = SLUICE__HEARTBEAT__INIT;
    struct sysinfo si;
    sysinfo(&si);
    hb.tm_id = n->id;
    hb.free_memory = (uint64_t)si.freeram * si.mem_unit;
    Sluice__SubtaskMetrics *ms = heartbeat_metrics(n, &hb);
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    send_jm(n, &env);
    free(ms);
    free(hb.metrics);
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
        n->jm_hello = 1;
        send_register(n);
        break;
    case SLUICE__ENVELOPE__MSG_REGISTER_ACK:
        if (!env->register_ack->accepted) {
            sl_error(TAG, "the JobManager refused our registration: %s", env->register_ack->reason);
            jm_lost(n, "registration refused");
            return;
        }
        n->jm_registered = 1;
        n->reconnect_ms = 0;
        if (env->register_ack->heartbeat_interval_ms)
            n->hb_interval_ms = (int64_t)env->register_ack->heartbeat_interval_ms;
        sl_info(TAG, "registered at the JobManager as %s (%d slots, data port %d)", n->id, n->slots,
                n->data_port);
        {
            struct timeval tv = {(time_t)(n->hb_interval_ms / 1000),
                                 (suseconds_t)((n->hb_interval_ms % 1000) * 1000)};
            event_add(n->heartbeat, &tv);
        }
        break;
    case SLUICE__ENVELOPE__MSG_HEARTBEAT_ACK:
        if (!env->heartbeat_ack->known && n->jm_registered) {
            sl_warn(TAG, "the JobManager no longer knows us; registering again");
            for (tm_deploy *d = n->deploys; d; d = d->next) deploy_cancel(n, d);
            send_register(n);
        }
        break;
    case SLUICE__ENVELOPE__MSG_DEPLOY:
        deploy_job(n, env->deploy);
        break;
    case SLUICE__ENVELOPE__MSG_CANCEL: {
        tm_deploy *d = find_deploy(n, env->cancel->attempt);
        if (d) deploy_cancel(n, d);
        break;
    }
    case SLUICE__ENVELOPE__MSG_TRIGGER: {
        const Sluice__TriggerCheckpoint *tc = env->trigger;
        tm_deploy *d = find_deploy(n, tc->attempt);
        if (!d || d->cancelled || !tc->dir) break;
        for (int i = 0; i < d->ntasks; i++) {
            tm_task *t = &d->tasks[i];
            const sl_vertex *head = &d->g->v[d->g->chains[t->chain].vertices[0]];
            if (!(head->def->flags & SL_OPF_SOURCE)) continue;
            tm_mail *ml = sl_calloc(1, sizeof *ml);
            ml->kind = TM_MAIL_TRIGGER;
            ml->cpid = tc->checkpoint_id;
            ml->ts = tc->timestamp;
            ml->flags = (tc->is_savepoint ? SL_CP_SAVEPOINT : 0) | (tc->stop ? SL_CP_STOP : 0) |
                        (tc->drain ? SL_CP_DRAIN : 0);
            ml->dir = sl_strdup(tc->dir);
            tm_task_mail(t, ml);
        }
        break;
    }
    case SLUICE__ENVELOPE__MSG_NOTIFY: {
        const Sluice__NotifyCheckpoint *nc = env->notify;
        tm_deploy *d = find_deploy(n, nc->attempt);
        if (!d || d->cancelled) break;
        for (int i = 0; i < d->ntasks; i++) {
            tm_mail *ml = sl_calloc(1, sizeof *ml);
            ml->kind = nc->completed ? TM_MAIL_COMPLETE : TM_MAIL_ABORT;
            ml->cpid = nc->checkpoint_id;
            tm_task_mail(&d->tasks[i], ml);
        }
        break;
    }
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
        handle_jm(n, env);
        sluice__envelope__free_unpacked(env, NULL);
        if (n->jm != bev) return; /* connection replaced or dropped */
    }
}

static void on_jm_event(struct bufferevent *bev, short what, void *arg)
{
    tm_net *n = arg;
    if (what & BEV_EVENT_CONNECTED) {
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
        Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
        env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
        env.hello = &h;
        sl_frame_push(bufferevent_get_output(bev), &env);
        return;
    }
    if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
        if (n->jm_registered || n->jm_hello)
            jm_lost(n, (what & BEV_EVENT_EOF) ? "connection closed" : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        else
            jm_lost(n, "cannot connect");
    }
}

static void jm_connect(tm_net *n)
{
    const char *host = sl_config_str(n->conf, "jobmanager.rpc.address");
    int port = (int)sl_config_int(n->conf, "jobmanager.rpc.port");
    n->jm = bufferevent_socket_new(n->base, -1, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(n->jm, on_jm_read, NULL, on_jm_event, n);
    bufferevent_setwatermark(n->jm, EV_READ, 0, SL_FRAME_MAX + 8);
    bufferevent_enable(n->jm, EV_READ | EV_WRITE);
    if (bufferevent_socket_connect_hostname(n->jm, NULL, AF_INET, host, port) < 0) {
        /* reported through on_jm_event */
    }
}

static void on_reconnect(evutil_socket_t fd, short what, void *arg)
{
    tm_net *n = arg;
    if (!n->jm) jm_connect(n);
}

/* ---- inbox ---------------------------------------------------------------- */

static void on_inbox(evutil_socket_t fd, short what, void *arg)
{
    tm_net *n = arg;
    pthread_mutex_lock(&n->mu);
    tm_status *st = n->status_head;
    n->status_head = n->status_tail = NULL;
    sl_buf *credits = n->credit_head;
    n->credit_head = NULL;
    tm_snap_job *acks = n->acks_head;
    n->acks_head = NULL;
    int exited = n->exited;
    n->exited = 0;
    pthread_mutex_unlock(&n->mu);
    while (st) {
        tm_status *next = st->next;
        tm_deploy *d = find_deploy(n, st->attempt);
        tm_task *t = d ? local_task(d, st->chain, st->subtask) : NULL;
        if (t && st->state != SLUICE__TASK_STATE__TASK_RUNNING) {
            Sluice__SubtaskMetrics m;
            fill_metrics(d, t, &m, sl_mono_ns());
            report_full(n, st->job_id, st->attempt, st->chain, st->subtask, st->state, st->error, &m);
        } else {
            report_direct(n, st->job_id, st->attempt, st->chain, st->subtask, st->state, st->error);
        }
        free(st->error);
        free(st);
        st = next;
    }
    while (credits) {
        sl_buf *next = credits->next;
        recv_buffer_back(n, credits);
        credits = next;
    }
    while (acks) {
        tm_snap_job *next = acks->next;
        send_ack(n, acks);
        tm_snap_job_free(acks);
        acks = next;
    }
    for (tm_peer *p = n->peers; p; p = p->next) peer_flush(p);
    if (exited) reap_deploys(n);
}

/* Has every buffer of d's remote channels left for the wire? */
static int sends_drained(tm_deploy *d)
{
    for (uint32_t id = 0; id < d->nchan; id++) {
        tm_outchan *oc = d->out_by_id[id];
        if (oc && oc->peer) {
            pthread_mutex_lock(&oc->peer->mu);
            int empty = oc->qhead == NULL;
            pthread_mutex_unlock(&oc->peer->mu);
            if (!empty) return 0;
        }
    }
    return 1;
}

/* Free deployments whose threads have all ended and, unless cancelled,
 * whose last buffers (end of partition included) are on the wire: the
 * consumers elsewhere may still be granting the credit they wait for. */
static void reap_deploys(tm_net *n)
{
    n->reap_pending = 0;
    for (tm_deploy *d = n->deploys; d;) {
        tm_deploy *next = d->next;
        int alive = 0;
        for (int i = 0; i < d->ntasks; i++)
            if (d->tasks[i].started && pthread_tryjoin_np(d->tasks[i].thread, NULL) == 0)
                d->tasks[i].started = 0;
            else if (d->tasks[i].started)
                alive++;
        if (!alive && (d->cancelled || sends_drained(d))) {
            sl_info(TAG, "job %s attempt %u: all local tasks ended", d->job_id, d->attempt);
            __atomic_store_n(&d->cancelled, 1, __ATOMIC_RELAXED);
            deploy_free(n, d);
        } else if (!alive) {
            n->reap_pending = 1; /* look again when credit arrives */
        }
        d = next;
    }
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
        hp[i] = &hs[i];
    }
    a.n_handles = job->error[0] ? 0 : (size_t)job->nparts;
    a.handles = hp;
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
    pthread_mutex_init(&n->mu, NULL);
    n->listener = sl_listen(n->base, sl_config_str(n->conf, "taskmanager.bind-host"),
                            (int)sl_config_int(n->conf, "taskmanager.data.port"), "data port",
                            on_data_accept, n, &n->data_port, err, errlen);
    if (!n->listener) return SL_ERR;
    n->inbox = event_new(n->base, -1, 0, on_inbox, n);
    n->reconnect = event_new(n->base, -1, 0, on_reconnect, n);
    n->heartbeat = event_new(n->base, -1, EV_PERSIST, on_heartbeat, n);
    n->hb_interval_ms = sl_config_int(n->conf, "heartbeat.interval");
    if (tm_snapshotter_start(n, err, errlen) != SL_OK) return SL_ERR;
    jm_connect(n);
    return SL_OK;
}

void tm_net_stop(tm_net *n)
{
    n->stopping = 1;
    for (tm_deploy *d = n->deploys; d; d = d->next) deploy_cancel(n, d);
    while (n->deploys) deploy_free(n, n->deploys);
    tm_snapshotter_stop(n);
    on_inbox(-1, 0, n); /* statuses, credits and acks still queued */
    if (n->jm) bufferevent_free(n->jm);
    n->jm = NULL;
    while (n->peers) {
        tm_peer *p = n->peers;
        n->peers = p->next;
        if (p->bev) bufferevent_free(p->bev);
        if (p->wake) event_free(p->wake);
        pthread_mutex_destroy(&p->mu);
        free(p->id);
        free(p->host);
        free(p);
    }
    if (n->listener) evconnlistener_free(n->listener);
    if (n->inbox) event_free(n->inbox);
    if (n->reconnect) event_free(n->reconnect);
    if (n->heartbeat) event_free(n->heartbeat);
}
