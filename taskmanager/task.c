/*
 * task.c -- a task thread: one subtask of one chain, from input to output.
 *
 * The chain's operators are called directly, one after another: each
 * operator's emit goes straight into the next one's process(), with no copy
 * and no serialization. The tail's output goes to writers, one per outgoing
 * edge, which pick the consumer subtask (forward, rebalance, hash on the key
 * bytes' key group, broadcast) and serialize the row into that
 * subpartition's current 32 KiB buffer. A full buffer is handed on: into the
 * consumer's gate when it runs here, or onto the peer connection's send
 * queue (sent against credit by the network thread). Partly filled buffers
 * are flushed every execution.buffer-timeout.
 *
 * The thread's time is accounted as idle (waiting for input, or a source
 * sleeping to keep its rate), backpressured (waiting for an output buffer)
 * or busy (the rest); clocks are read per buffer or batch, never per record.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tm.h"
#include "log.h"
#include "keygroup.h"

#define TAG "tm:task"

typedef struct tm_writer {
    const sl_edge *e;
    const sl_schema *schema;
    int nsub;
    tm_outchan **chans;         /* per consumer subtask; NULL = not connected */
    sl_buf **cur;               /* buffer being filled, per subpartition */
    int rr;                     /* rebalance: next subpartition */
    int max_parallelism;
} tm_writer;

enum { WAIT_NONE = 0, WAIT_IDLE = 1, WAIT_BP = 2 };

/* Per-thread runtime state (lives on the task thread's stack). */
typedef struct run {
    tm_task *t;
    tm_deploy *d;
    const sl_chain *ch;
    sl_op *ops;
    int nops;
    sl_value *in_vals;          /* decode target for the head's input rows */
    int64_t *chan_wm;           /* per input channel */
    char *chan_ended;
    char *chan_idle;            /* per input channel: marked idle by upstream */
    int nended;
    int in_idle;                /* every live input channel is idle */
    int out_idle;               /* our output is marked idle downstream */
    int64_t in_wm;              /* combined input watermark */
    int64_t out_wm;
    int64_t start_ns;
    uint64_t idle_ns, bp_ns;
    int64_t next_flush_ns;
    int failed;                 /* an operator failed: t->err holds why */
    char err[600];
    uint8_t keybuf[4096];
} run;

/* ---- gates ------------------------------------------------------------ */

void tm_gate_init(tm_gate *g, int nchan)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->nchan = nchan;
}

void tm_gate_push(tm_gate *g, sl_buf *b)
{
    b->next = NULL;
    pthread_mutex_lock(&g->mu);
    if (g->closed) {
        pthread_mutex_unlock(&g->mu);
        sl_buf_recycle(b);
        return;
    }
    if (g->tail) g->tail->next = b;
    else g->head = b;
    g->tail = b;
    g->queued++;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Wait for a buffer until deadline_ns (monotonic); NULL on timeout or close. */
static sl_buf *gate_take(tm_gate *g, int64_t deadline_ns)
{
    pthread_mutex_lock(&g->mu);
    while (!g->head && !g->closed) {
        struct timespec ts;
        int64_t now = sl_mono_ns();
        if (now >= deadline_ns) break;
        /* condition variables here wait on CLOCK_REALTIME: convert */
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t wake = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (deadline_ns - now);
        ts.tv_sec = wake / 1000000000;
        ts.tv_nsec = wake % 1000000000;
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
    }
    sl_buf *b = NULL;
    if (!g->closed && g->head) {
        b = g->head;
        g->head = b->next;
        if (!g->head) g->tail = NULL;
        g->queued--;
    }
    pthread_mutex_unlock(&g->mu);
    return b;
}

static sl_buf *gate_take_nowait(tm_gate *g)
{
    sl_buf *b = NULL;
    pthread_mutex_lock(&g->mu);
    if (!g->closed && g->head) {
        b = g->head;
        g->head = b->next;
        if (!g->head) g->tail = NULL;
        g->queued--;
    }
    pthread_mutex_unlock(&g->mu);
    return b;
}

void tm_gate_close(tm_gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->closed = 1;
    sl_buf *b = g->head;
    g->head = g->tail = NULL;
    g->queued = 0;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    while (b) {
        sl_buf *next = b->next;
        sl_buf_recycle(b);
        b = next;
    }
}

void tm_gate_destroy(tm_gate *g)
{
    tm_gate_close(g);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

void tm_task_wake(tm_task *t)
{
    pthread_mutex_lock(&t->wake_mu);
    pthread_cond_broadcast(&t->wake_cv);
    pthread_mutex_unlock(&t->wake_mu);
}

/* ---- figures ------------------------------------------------------------ */

#define ST(field, v) __atomic_store_n(&t->m.field, (v), __ATOMIC_RELAXED)

static void publish(run *r)
{
    tm_task *t = r->t;
    sl_op *head = &r->ops[0], *tail = &r->ops[r->nops - 1];
    int is_src = (head->def->flags & SL_OPF_SOURCE) != 0;
    int is_sink = (tail->def->flags & SL_OPF_SINK) != 0;
    /* sources count what they read as input and sinks what they write as
     * output, so neither end of a job shows zero */
    ST(records_in, is_src ? head->metrics.records_out : head->metrics.records_in);
    ST(records_out, is_sink ? tail->metrics.records_in : tail->metrics.records_out);
    uint64_t late = 0;
    for (int i = 0; i < r->nops; i++) late += r->ops[i].metrics.late_dropped;
    ST(late_dropped, late);
    ST(idle_ns, r->idle_ns);
    ST(bp_ns, r->bp_ns);
    ST(in_wm, r->in_wm);
    ST(out_wm, r->out_wm);
    if (t->out_pool) {
        float u = sl_pool_usage(t->out_pool);
        __atomic_store(&t->m.out_usage, &u, __ATOMIC_RELAXED);
    }
    SL_UNUSED(r->start_ns);
}

/* A wait the heartbeat can see while it lasts (see tm_task_metrics). */
static void wait_begin(run *r, int kind, int64_t now)
{
    tm_task *t = r->t;
    publish(r);
    __atomic_store_n(&t->m.wait_since, now, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.wait_kind, kind, __ATOMIC_RELAXED);
    __atomic_add_fetch(&t->m.wait_seq, 1, __ATOMIC_SEQ_CST);
}

static void wait_end(run *r, int kind, int64_t waited)
{
    tm_task *t = r->t;
    if (waited < 0) waited = 0;
    if (kind == WAIT_BP) {
        r->bp_ns += (uint64_t)waited;
        ST(bp_ns, r->bp_ns);
    } else {
        r->idle_ns += (uint64_t)waited;
        ST(idle_ns, r->idle_ns);
    }
    __atomic_add_fetch(&t->m.wait_seq, 1, __ATOMIC_SEQ_CST);
}

/* ---- writers ------------------------------------------------------------ */

static int cancelled(const run *r) { return __atomic_load_n(&r->d->cancelled, __ATOMIC_RELAXED); }

static sl_buf *get_buffer(run *r)
{
    int64_t waited = 0;
    sl_buf *b = sl_pool_tryget(r->t->out_pool);
    if (!b) {
        wait_begin(r, WAIT_BP, sl_mono_ns());
        b = sl_pool_get(r->t->out_pool, &waited);
        wait_end(r, WAIT_BP, waited);
    }
    return b;
}

static void hand_on(run *r, tm_outchan *oc, sl_buf *b)
{
    __atomic_add_fetch(&r->t->m.bytes_out, b->len, __ATOMIC_RELAXED);
    if (oc->local) {
        b->chan = oc->local_idx;
        tm_gate_push(oc->local, b);
    } else {
        tm_peer_enqueue(oc, b);
    }
}

static void flush_writers(run *r)
{
    tm_task *t = r->t;
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++)
            if (wr->cur[k] && wr->cur[k]->len) {
                hand_on(r, wr->chans[k], wr->cur[k]);
                wr->cur[k] = NULL;
            }
    }
}

/* Append one element to subpartition k of writer wr. `row` NULL means the
 * payload is the 8-byte value `x` (watermark) or empty (end). */
static int put_element(run *r, tm_writer *wr, int k, int tag, const sl_row *row, int64_t x)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        sl_buf *b = wr->cur[k];
        if (!b) {
            b = get_buffer(r);
            if (!b) return sl_seterr(r->err, sizeof r->err, "cancelled");
            wr->cur[k] = b;
        }
        uint8_t *p = b->data + b->len;
        size_t room = b->cap - b->len;
        size_t n = 0;
        if (tag == SL_EL_RECORD) {
            if (room >= SL_EL_HDR + 8) {
                size_t body = sl_row_encode(row, wr->schema, p + SL_EL_HDR + 8, room - SL_EL_HDR - 8);
                if (body) {
                    n = SL_EL_HDR + 8 + body;
                    memcpy(p + SL_EL_HDR, &row->ts, 8);
                }
            }
        } else if (tag == SL_EL_WATERMARK) {
            if (room >= SL_EL_HDR + 8) {
                n = SL_EL_HDR + 8;
                memcpy(p + SL_EL_HDR, &x, 8);
            }
        } else if (tag == SL_EL_IDLE) {
            if (room >= SL_EL_HDR + 1) {
                n = SL_EL_HDR + 1;
                p[SL_EL_HDR] = (uint8_t)(x != 0);
            }
        } else if (room >= SL_EL_HDR) {
            n = SL_EL_HDR;
        }
        if (n) {
            uint32_t len = (uint32_t)(n - SL_EL_HDR);
            p[0] = (uint8_t)tag;
            memcpy(p + 1, &len, 4);
            b->len += (uint32_t)n;
            return SL_OK;
        }
        if (b->len == 0)
            return sl_seterr(r->err, sizeof r->err,
                             "a row of %zu bytes does not fit in a %u-byte network buffer",
                             sl_row_size(row, wr->schema), b->cap);
        hand_on(r, wr->chans[k], b);
        wr->cur[k] = NULL;
    }
    return sl_seterr(r->err, sizeof r->err, "internal: element does not fit");
}

static int route(run *r, tm_writer *wr, const sl_row *row)
{
    switch (wr->e->strategy) {
    case SL_PART_FORWARD:
        return r->t->subtask;
    case SL_PART_REBALANCE: {
        int k = wr->rr;
        wr->rr = (wr->rr + 1) % wr->nsub;
        return k;
    }
    case SL_PART_HASH: {
        size_t n = sl_row_key_encode(row, wr->schema, wr->e->keys, wr->e->nkeys, r->keybuf,
                                     sizeof r->keybuf);
        int kg = sl_kg_of_key(r->keybuf, n, wr->max_parallelism);
        return sl_kg_operator_index(kg, wr->nsub, wr->max_parallelism);
    }
    case SL_PART_BROADCAST:
        return -1;
    }
    return 0;
}

static int task_emit(void *ctx, sl_row *row)
{
    run *r = ctx;
    tm_task *t = r->t;
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        int k = route(r, wr, row);
        if (k >= 0) {
            if (put_element(r, wr, k, SL_EL_RECORD, row, 0)) return SL_ERR;
        } else {
            for (k = 0; k < wr->nsub; k++)
                if (put_element(r, wr, k, SL_EL_RECORD, row, 0)) return SL_ERR;
        }
    }
    if (r->d->buffer_timeout_ms == 0) flush_writers(r);
    return SL_OK;
}

static int writers_broadcast(run *r, int tag, int64_t x)
{
    tm_task *t = r->t;
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++) {
            if (wr->e->strategy == SL_PART_FORWARD && k != t->subtask) continue;
            if (put_element(r, wr, k, tag, NULL, x)) return SL_ERR;
        }
    }
    return SL_OK;
}

static int task_emit_wm(void *ctx, int64_t wm)
{
    run *r = ctx;
    if (wm <= r->out_wm) return SL_OK;
    r->out_wm = wm;
    return writers_broadcast(r, SL_EL_WATERMARK, wm);
}

static int task_emit_idle(void *ctx, int idle)
{
    run *r = ctx;
    if (r->out_idle == !!idle) return SL_OK;
    r->out_idle = !!idle;
    return writers_broadcast(r, SL_EL_IDLE, idle);
}

static int sink_emit(void *ctx, sl_row *row)
{
    SL_UNUSED(ctx);
    SL_UNUSED(row);
    return SL_OK;
}

static int sink_emit_wm(void *ctx, int64_t wm)
{
    run *r = ctx;
    if (wm > r->out_wm) r->out_wm = wm;
    return SL_OK;
}

/* ---- the chain ---------------------------------------------------------- */

static int chain_emit(void *ctx, sl_row *row)
{
    sl_op *next = ctx;
    next->metrics.records_in++;
    sl_arena_reset(&next->scratch);
    return next->def->process(next, 0, row);
}

static int op_watermark(sl_op *op, int64_t wm)
{
    op->current_watermark = wm;
    if (op->def->watermark) return op->def->watermark(op, wm);
    return sl_op_emit_watermark(op, wm);
}

static int chain_emit_wm(void *ctx, int64_t wm)
{
    return op_watermark((sl_op *)ctx, wm);
}

/* Idleness passes through a chain to its output: an operator with one idle
 * input has nothing to say about time either. */
static int chain_emit_idle(void *ctx, int idle)
{
    return sl_op_emit_idle((sl_op *)ctx, idle);
}

int tm_task_build_outputs(tm_task *t, char *err, size_t errlen)
{
    tm_deploy *d = t->d;
    const sl_jobgraph *g = d->g;
    const sl_chain *ch = &g->chains[t->chain];
    const sl_vertex *tail = &g->v[ch->vertices[ch->n - 1]];
    t->nwriters = tail->nout;
    t->writers = sl_calloc((size_t)(tail->nout ? tail->nout : 1), sizeof(tm_writer));
    int nsubs = 0;
    for (int w = 0; w < tail->nout; w++) {
        tm_writer *wr = &t->writers[w];
        wr->e = &g->e[tail->out_edges[w]];
        wr->schema = &tail->out;
        wr->nsub = g->v[wr->e->to].parallelism;
        wr->chans = sl_calloc((size_t)wr->nsub, sizeof(tm_outchan *));
        wr->cur = sl_calloc((size_t)wr->nsub, sizeof(sl_buf *));
        wr->rr = t->subtask % wr->nsub;
        wr->max_parallelism = g->max_parallelism;
        nsubs += wr->e->strategy == SL_PART_FORWARD ? 1 : wr->nsub;
    }
    if (tail->nout) {
        /* enough for every subpartition to fill one buffer while another is
         * in flight, plus a few spare: the bound on what a task can have
         * outstanding */
        t->out_pool = sl_pool_new(2 * nsubs + 8, d->seg_size);
    }
    SL_UNUSED(err);
    SL_UNUSED(errlen);
    return SL_OK;
}

void tm_writer_destroy_all(tm_task *t)
{
    for (int w = 0; w < t->nwriters; w++) {
        tm_writer *wr = &t->writers[w];
        for (int k = 0; k < wr->nsub; k++)
            if (wr->cur[k]) sl_buf_recycle(wr->cur[k]);
        free(wr->chans);
        free(wr->cur);
    }
    free(t->writers);
    t->writers = NULL;
    t->nwriters = 0;
    if (t->out_pool) sl_pool_close(t->out_pool);
    t->out_pool = NULL;
}

/* The network thread wires channels after tm_task_build_outputs; this gives
 * it the slot to fill. */
tm_outchan **tm_task_writer_slot(tm_task *t, int out_edge_index, int consumer);
tm_outchan **tm_task_writer_slot(tm_task *t, int out_edge_index, int consumer)
{
    return &t->writers[out_edge_index].chans[consumer];
}

static int fail(run *r, const sl_op *op)
{
    r->failed = 1;
    /* A writer's error (set first) is the cause; else the operator furthest
     * down the chain that said why: upstream operators only see their emit
     * fail. */
    for (int k = r->nops - 1; k >= 0 && op; k--)
        if (r->ops[k].err[0]) {
            op = &r->ops[k];
            break;
        }
    if (op && !r->err[0])
        snprintf(r->err, sizeof r->err, "%s: %s", op->task_name, op->err[0] ? op->err : "failed");
    return SL_ERR;
}

/* Keyed operators get their state backend and timers from the runtime:
 * the backend holds exactly the key groups this subtask owns. */
static int open_keyed(run *r, sl_op *op)
{
    tm_deploy *d = r->d;
    const sl_vertex *v = op->vertex;
    sl_kg_range(op->subtask, op->parallelism, op->max_parallelism, &op->kg_first, &op->kg_last);
    const char *kind = sl_config_str(d->net->conf, "state.backend.type");
    sl_backend_kind bk = strcmp(kind, "rocksdb") == 0 ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/sluice-%s/job-%s-%u/%s-%d", sl_config_str(d->net->conf, "taskmanager.tmp.dirs"),
             d->net->id, d->job_id, d->attempt, v->uid, op->subtask);
    for (char *p = dir; *p; p++)
        if (*p == ':') *p = '_';
    op->kstate = sl_kstate_open(bk, dir, op->max_parallelism, op->kg_first, op->kg_last, op->err,
                                sizeof op->err);
    if (!op->kstate) return SL_ERR;
    op->event_timers = sl_timers_new();
    op->proc_timers = sl_timers_new();
    return SL_OK;
}

static void close_op(sl_op *op)
{
    if (op->def->close) op->def->close(op);
    sl_kstate_close(op->kstate);
    op->kstate = NULL;
    sl_timers_destroy(op->event_timers);
    sl_timers_destroy(op->proc_timers);
    op->event_timers = op->proc_timers = NULL;
}

static int open_chain(run *r)
{
    tm_task *t = r->t;
    const sl_jobgraph *g = r->d->g;
    r->nops = r->ch->n;
    r->ops = sl_calloc((size_t)r->nops, sizeof(sl_op));
    for (int k = 0; k < r->nops; k++) {
        const sl_vertex *v = &g->v[r->ch->vertices[k]];
        sl_op *op = &r->ops[k];
        op->def = v->def;
        op->vertex = v;
        op->plan = v->plan;
        op->subtask = t->subtask;
        op->parallelism = v->parallelism;
        op->max_parallelism = g->max_parallelism;
        op->in = v->nin ? &v->in : NULL;
        op->out = (v->def->flags & SL_OPF_SINK) ? NULL : &v->out;
        op->out_stream = stdout;
        op->proc_time_at = INT64_MAX;
        op->current_watermark = INT64_MIN;
        op->task_name = sl_sprintf("%s (%d/%d)", v->name, t->subtask + 1, v->parallelism);
        sl_arena_init(&op->scratch, 1u << 20);
        if (k + 1 < r->nops) {
            op->emit = chain_emit;
            op->emit_wm = chain_emit_wm;
            op->emit_idle = chain_emit_idle;
            op->emit_ctx = &r->ops[k + 1];
        } else if (v->def->flags & SL_OPF_SINK) {
            op->emit = sink_emit;
            op->emit_wm = sink_emit_wm;
            op->emit_ctx = r;
        } else {
            op->emit = task_emit;
            op->emit_wm = task_emit_wm;
            op->emit_idle = task_emit_idle;
            op->emit_ctx = r;
        }
    }
    for (int k = 0; k < r->nops; k++) {
        sl_op *op = &r->ops[k];
        int rc = SL_OK;
        if (op->def->flags & SL_OPF_KEYED) rc = open_keyed(r, op);
        if (rc == SL_OK && op->def->open) rc = op->def->open(op);
        if (rc != SL_OK) {
            fail(r, op);
            for (int q = 0; q <= k; q++) close_op(&r->ops[q]);
            r->nops = 0; /* nothing left to close */
            return SL_ERR;
        }
    }
    return SL_OK;
}

static void close_chain(run *r)
{
    for (int k = 0; k < r->nops; k++) close_op(&r->ops[k]);
}

static void free_chain(run *r)
{
    for (int k = 0; k < r->ch->n && r->ops; k++) {
        free((char *)r->ops[k].task_name);
        sl_arena_free(&r->ops[k].scratch);
    }
    free(r->ops);
}

/* Everything upstream has ended: fire what is left, then end our outputs. */
static int finish_chain(run *r)
{
    if (op_watermark(&r->ops[0], INT64_MAX) != SL_OK) return fail(r, &r->ops[0]);
    for (int k = 0; k < r->nops; k++) {
        sl_op *op = &r->ops[k];
        sl_arena_reset(&op->scratch);
        if (op->def->end_input && op->def->end_input(op) != SL_OK) return fail(r, op);
    }
    if (writers_broadcast(r, SL_EL_END, 0) != SL_OK) return SL_ERR;
    flush_writers(r);
    return SL_OK;
}

static void maybe_flush(run *r, int64_t now)
{
    if (r->d->buffer_timeout_ms <= 0) return;
    if (now >= r->next_flush_ns) {
        flush_writers(r);
        fflush(stdout); /* the print sink's rows: no syscall when nothing is buffered */
        r->next_flush_ns = now + r->d->buffer_timeout_ms * 1000000;
    }
}

/* When the task loop must wake up next (monotonic ns): the buffer flush,
 * or the earliest processing-time callback an operator asked for. */
static int64_t flush_deadline(run *r, int64_t now)
{
    int64_t dl = r->d->buffer_timeout_ms <= 0 ? now + 100000000 : r->next_flush_ns;
    int64_t wall = INT64_MAX;
    for (int k = 0; k < r->nops; k++)
        if (r->ops[k].def->proc_time && r->ops[k].proc_time_at < wall) wall = r->ops[k].proc_time_at;
    if (wall != INT64_MAX) {
        int64_t in_ns = (wall - sl_now_ms()) * 1000000;
        if (now + in_ns < dl) dl = now + (in_ns > 0 ? in_ns : 0);
    }
    return dl;
}

/* Call the processing-time callbacks that are due. */
static int proc_time_due(run *r)
{
    int64_t wall = 0;
    for (int k = 0; k < r->nops; k++) {
        sl_op *op = &r->ops[k];
        if (!op->def->proc_time || op->proc_time_at == INT64_MAX) continue;
        if (!wall) wall = sl_now_ms();
        if (wall < op->proc_time_at) continue;
        sl_arena_reset(&op->scratch);
        if (op->def->proc_time(op, wall) != SL_OK) return fail(r, op);
    }
    return SL_OK;
}

static int run_source(run *r)
{
    tm_task *t = r->t;
    sl_op *head = &r->ops[0];
    for (;;) {
        if (cancelled(r)) return SL_DONE;
        sl_arena_reset(&head->scratch);
        int rc = head->def->run(head);
        int64_t now = sl_mono_ns();
        if (rc == SL_ERR) {
            if (cancelled(r)) return SL_DONE;
            return fail(r, head);
        }
        if (rc == SL_DONE) {
            publish(r);
            return finish_chain(r);
        }
        if (proc_time_due(r) != SL_OK) return SL_ERR;
        maybe_flush(r, now);
        if (rc == SL_AGAIN) {
            int64_t wake_ns = head->wake_at_ms * 1000000;
            int64_t until = SL_MIN(wake_ns, flush_deadline(r, now));
            if (until > now) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                int64_t abs = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (until - now);
                ts.tv_sec = abs / 1000000000;
                ts.tv_nsec = abs % 1000000000;
                wait_begin(r, WAIT_IDLE, now);
                pthread_mutex_lock(&t->wake_mu);
                if (!cancelled(r)) pthread_cond_timedwait(&t->wake_cv, &t->wake_mu, &ts);
                pthread_mutex_unlock(&t->wake_mu);
                int64_t after = sl_mono_ns();
                wait_end(r, WAIT_IDLE, after - now);
                maybe_flush(r, after);
            }
        }
        publish(r);
    }
}

/* The input watermark is the minimum over channels that have neither ended
 * nor gone idle; when every live channel is idle, our output is idle too. */
static void advance_watermark(run *r, int *rc)
{
    int64_t minwm = INT64_MAX;
    int live = 0, idle = 0;
    for (int c = 0; c < r->t->ngate_chan; c++) {
        if (r->chan_ended[c]) continue;
        live++;
        if (r->chan_idle[c]) { idle++; continue; }
        if (r->chan_wm[c] < minwm) minwm = r->chan_wm[c];
    }
    int all_idle = live > 0 && idle == live;
    __atomic_store_n(&r->t->m.wm_idle, all_idle, __ATOMIC_RELAXED);
    if (all_idle != r->in_idle) {
        r->in_idle = all_idle;
        /* the head's output goes quiet with its input */
        if (sl_op_emit_idle(&r->ops[0], all_idle) != SL_OK) *rc = SL_ERR;
    }
    if (minwm > r->in_wm && minwm != INT64_MAX) {
        r->in_wm = minwm;
        if (op_watermark(&r->ops[0], minwm) != SL_OK) *rc = fail(r, &r->ops[0]);
    }
}

static int process_buffer(run *r, sl_buf *b)
{
    sl_op *head = &r->ops[0];
    const sl_schema *in = head->in;
    int c = b->chan;
    size_t pos = 0;
    int rc = SL_OK;
    while (pos < b->len && rc == SL_OK) {
        if (b->len - pos < SL_EL_HDR) {
            rc = sl_seterr(r->err, sizeof r->err, "%s: damaged buffer: truncated element header",
                           head->task_name);
            r->failed = 1;
            break;
        }
        uint8_t tag = b->data[pos];
        uint32_t len;
        memcpy(&len, b->data + pos + 1, 4);
        const uint8_t *p = b->data + pos + SL_EL_HDR;
        if (len > b->len - pos - SL_EL_HDR) {
            rc = sl_seterr(r->err, sizeof r->err, "%s: damaged buffer: element of %u bytes overruns it",
                           head->task_name, len);
            r->failed = 1;
            break;
        }
        pos += SL_EL_HDR + len;
        if (tag == SL_EL_RECORD) {
            sl_row row;
            char derr[200];
            row.vals = r->in_vals;
            if (len < 8 || sl_row_decode(p + 8, len - 8, in, &row, derr, sizeof derr) != SL_OK) {
                rc = sl_seterr(r->err, sizeof r->err, "%s: damaged record from input channel %d: %s",
                               head->task_name, c, len < 8 ? "too short" : derr);
                r->failed = 1;
                break;
            }
            memcpy(&row.ts, p, 8);
            head->metrics.records_in++;
            sl_arena_reset(&head->scratch);
            if (head->def->process(head, r->t->chan_input[c], &row) != SL_OK) rc = fail(r, head);
        } else if (tag == SL_EL_WATERMARK && len == 8) {
            int64_t wm;
            memcpy(&wm, p, 8);
            if (wm > r->chan_wm[c]) {
                r->chan_wm[c] = wm;
                advance_watermark(r, &rc);
            }
        } else if (tag == SL_EL_IDLE && len == 1) {
            char idle = p[0] != 0;
            if (idle != r->chan_idle[c]) {
                r->chan_idle[c] = idle;
                advance_watermark(r, &rc);
            }
        } else if (tag == SL_EL_END && len == 0) {
            if (!r->chan_ended[c]) {
                r->chan_ended[c] = 1;
                r->nended++;
                if (r->nended < r->t->ngate_chan) advance_watermark(r, &rc);
            }
        } else {
            rc = sl_seterr(r->err, sizeof r->err, "%s: damaged buffer: unknown element tag %u",
                           head->task_name, tag);
            r->failed = 1;
        }
    }
    __atomic_add_fetch(&r->t->m.bytes_in, b->len, __ATOMIC_RELAXED);
    sl_buf_recycle(b);
    return rc;
}

static int run_consumer(run *r)
{
    tm_task *t = r->t;
    while (r->nended < t->ngate_chan) {
        if (cancelled(r)) return SL_DONE;
        int64_t now = sl_mono_ns();
        sl_buf *b = gate_take_nowait(&t->gate);
        int64_t after = now;
        if (!b) {
            wait_begin(r, WAIT_IDLE, now);
            b = gate_take(&t->gate, flush_deadline(r, now));
            after = sl_mono_ns();
            wait_end(r, WAIT_IDLE, after - now);
        }
        if (!b) {
            if (proc_time_due(r) != SL_OK) return SL_ERR;
            maybe_flush(r, after);
            publish(r);
            continue;
        }
        if (process_buffer(r, b) != SL_OK) return cancelled(r) ? SL_DONE : SL_ERR;
        if (proc_time_due(r) != SL_OK) return SL_ERR;
        maybe_flush(r, sl_mono_ns());
        publish(r);
    }
    return finish_chain(r);
}

static void *task_main(void *arg)
{
    tm_task *t = arg;
    tm_deploy *d = t->d;
    run r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.d = d;
    r.ch = &d->g->chains[t->chain];
    r.in_wm = INT64_MIN;
    r.out_wm = INT64_MIN;
    r.start_ns = sl_mono_ns();
    r.next_flush_ns = r.start_ns + d->buffer_timeout_ms * 1000000;
    __atomic_store_n(&t->m.in_wm, INT64_MIN, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.out_wm, INT64_MIN, __ATOMIC_RELAXED);
    r.chan_wm = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), sizeof(int64_t));
    r.chan_ended = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), 1);
    r.chan_idle = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), 1);
    for (int c = 0; c < t->ngate_chan; c++) r.chan_wm[c] = INT64_MIN;
    const sl_vertex *head = &d->g->v[r.ch->vertices[0]];
    r.in_vals = sl_calloc((size_t)(head->in.n ? head->in.n : 1), sizeof(sl_value));

    int rc = open_chain(&r);
    if (rc == SL_OK) {
        tm_net_report(d->net, d, t->chain, t->subtask, SLUICE__TASK_STATE__TASK_RUNNING, NULL);
        rc = (head->def->flags & SL_OPF_SOURCE) ? run_source(&r) : run_consumer(&r);
        publish(&r);
        close_chain(&r);
    }
    Sluice__TaskState final;
    if (cancelled(&r)) final = SLUICE__TASK_STATE__TASK_CANCELED;
    else if (rc == SL_OK) final = SLUICE__TASK_STATE__TASK_FINISHED;
    else final = SLUICE__TASK_STATE__TASK_FAILED;
    if (final == SLUICE__TASK_STATE__TASK_FAILED)
        sl_warn(TAG, "task %s (%d/%d) of job %s failed: %s", r.ch->name, t->subtask + 1,
                r.ch->parallelism, d->job_id, r.err);
    tm_net_report(d->net, d, t->chain, t->subtask, final,
                  final == SLUICE__TASK_STATE__TASK_FAILED ? r.err : NULL);
    free_chain(&r);
    free(r.chan_wm);
    free(r.chan_ended);
    free(r.chan_idle);
    free(r.in_vals);
    fflush(stdout);
    tm_net_task_exited(d->net);
    return NULL;
}

int tm_task_start(tm_task *t, char *err, size_t errlen)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8u << 20);
    int e = pthread_create(&t->thread, &attr, task_main, t);
    pthread_attr_destroy(&attr);
    if (e) return sl_seterr(err, errlen, "cannot start a task thread: %s", strerror(e));
    t->started = 1;
    return SL_OK;
}
