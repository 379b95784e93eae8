/*
 * task.c -- a task thread: one subtask of one chain, from input to output.
 *
 * The chain's operators are called directly, one after another: each
 * operator's emit goes straight into the next one's process(), with no copy
 * and no serialization. The tail's output goes to the exchange
 * (exchange.c): tm_exchange_emit routes and serializes each row into its
 * writers' buffers, tm_exchange_broadcast sends watermarks, idleness,
 * barriers and end of partition, tm_exchange_flush hands on partly filled
 * buffers every execution.buffer-timeout; input buffers are read element
 * by element with tm_exchange_read (which reassembles spanning records).
 *
 * Time on the input side goes through the valve (runtime/valve.h): every
 * task's first word on its outputs is its watermark status, before any
 * record (a source's after its first run(), a consumer's once every input
 * channel has spoken), and a consumer holds a channel that has spoken until
 * all have, as exactly-once alignment holds a channel that delivered its
 * barrier.
 *
 * Unaligned checkpoints (a barrier overtaking queued buffers, which become
 * channel state, replayed on restore) are unaligned.c's; the state both
 * files work on is task_int.h's `run`.
 *
 * The thread's time is accounted as idle (waiting for input, or a source
 * sleeping to keep its rate), backpressured (waiting for an output buffer)
 * or busy (the rest); clocks are read per buffer or batch, never per record.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "task_int.h"
#include "stack_sample.h"
#include "log.h"
#include "keygroup.h"
#include "runtime.h"
#include "valve.h"
#include "bytes.h"
#include "store.h"
#include "latency.h"
#include "debloat.h"

#define TAG "tm:task"

enum { WAIT_NONE = 0, WAIT_IDLE = 1, WAIT_BP = 2 };


/* ---- figures ------------------------------------------------------------ */

#define ST(field, v) __atomic_store_n(&t->m.field, (v), __ATOMIC_RELAXED)

static void publish(run *r)
{
    tm_task *t = r->t;
    sl_op *head = &r->ops[0], *tail = &r->ops[r->nops - 1];
    int is_src = (head->def->flags & SL_OPF_SOURCE) != 0;
    int is_sink = (tail->def->flags & SL_OPF_SINK) != 0;
    /* keyed state before the record count (released): a reader that sees
     * the count sees the state of at least those records */
    uint64_t se = 0, sb = 0;
    for (int i = 0; i < r->nops; i++)
        if (r->ops[i].kstate) {
            se += sl_kstate_entries(r->ops[i].kstate);
            sb += sl_kstate_bytes(r->ops[i].kstate);
        }
    ST(state_entries, se);
    ST(state_bytes, sb);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    /* sources count what they read as input and sinks what they write as
     * output, so neither end of a job shows zero */
    ST(records_in, is_src ? head->metrics.records_out : head->metrics.records_in);
    ST(records_out, is_sink ? tail->metrics.records_in : tail->metrics.records_out);
    uint64_t late = 0;
    for (int i = 0; i < r->nops; i++) late += r->ops[i].metrics.late_dropped;
    ST(late_dropped, late);
    for (int i = 0; i < r->nops && i < t->m.nops; i++) {
        const sl_op *op = &r->ops[i];
        tm_op_figures *f = &t->m.ops[i];
        __atomic_store_n(&f->records_in, op->metrics.records_in, __ATOMIC_RELAXED);
        __atomic_store_n(&f->records_out, op->metrics.records_out, __ATOMIC_RELAXED);
        __atomic_store_n(&f->late_dropped, op->metrics.late_dropped, __ATOMIC_RELAXED);
        __atomic_store_n(&f->records_in_errors, op->metrics.records_in_errors, __ATOMIC_RELAXED);
        __atomic_store_n(&f->in_wm, op->current_watermark, __ATOMIC_RELAXED);
        /* what it emitted is what the next one in the chain has seen */
        __atomic_store_n(&f->out_wm, i + 1 < r->nops ? r->ops[i + 1].current_watermark : r->out_wm,
                         __ATOMIC_RELAXED);
    }
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

/* ---- output (the exchange) -------------------------------------------- */

static int cancelled(const run *r) { return __atomic_load_n(&r->d->cancelled, __ATOMIC_RELAXED); }

/* Waiting for an output buffer is backpressured time. */
static void bp_begin(void *ctx, int64_t now) { wait_begin(ctx, WAIT_BP, now); }
static void bp_end(void *ctx, int64_t waited) { wait_end(ctx, WAIT_BP, waited); }

static void flush_writers(run *r) { tm_exchange_flush(&r->t->ws); }

static int emit_to(run *r, sl_row *row, int output)
{
    return tm_exchange_emit(&r->t->ws, output, row, r->err, sizeof r->err);
}

static int writers_broadcast(run *r, int tag, int64_t x)
{
    return tm_exchange_broadcast(&r->t->ws, tag, x, r->barrier_el, tag == SL_EL_BARRIER ? r->barrier_len : 0,
                                 r->err, sizeof r->err);
}

/* Our first word to every output channel: the watermark status (idle 1 or
 * active 0), alone in its buffer, before anything else we send, so the
 * consumer can hold the channel from there until every channel it reads has
 * spoken (valve.h). The end of input needs none: its maximum watermark and
 * end are words themselves. */
static int first_word(run *r, int idle)
{
    if (r->said) return SL_OK;
    r->said = 1;
    r->out_idle = !!idle;
    int rc = writers_broadcast(r, SL_EL_IDLE, idle);
    flush_writers(r);
    return rc;
}

static int task_emit(void *ctx, int output, sl_row *row)
{
    run *r = ctx;
    if (SL_UNLIKELY(!r->said) && first_word(r, 0) != SL_OK) return SL_ERR;
    return emit_to(r, row, output);
}

static int task_emit_wm(void *ctx, int64_t wm)
{
    run *r = ctx;
    if (wm <= r->out_wm) return SL_OK;
    if (!r->said) {
        if (wm == INT64_MAX) r->said = 1; /* the end of input: a word itself */
        else if (first_word(r, 0) != SL_OK) return SL_ERR;
    } else if (r->out_idle) {
        /* a watermark from an idle output (the maximum one at its end, or
         * with stop-with-drain) makes it active first: consumers ignore
         * watermarks on an idle channel */
        r->out_idle = 0;
        if (writers_broadcast(r, SL_EL_IDLE, 0) != SL_OK) return SL_ERR;
    }
    r->out_wm = wm;
    return writers_broadcast(r, SL_EL_WATERMARK, wm);
}

static int task_emit_idle(void *ctx, int idle)
{
    run *r = ctx;
    if (!r->said) return first_word(r, idle);
    if (r->out_idle == !!idle) return SL_OK;
    r->out_idle = !!idle;
    return writers_broadcast(r, SL_EL_IDLE, idle);
}

static int sink_emit(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(ctx);
    SL_UNUSED(output);
    SL_UNUSED(row);
    return SL_OK;
}

static int sink_emit_wm(void *ctx, int64_t wm)
{
    run *r = ctx;
    if (wm > r->out_wm) r->out_wm = wm;
    return SL_OK;
}

/* ---- latency markers and debloating ------------------------------------ */

/* A latency marker (SL_EL_LATENCY's payload) reached the chain: operators
 * from `from` on record its age, then it goes on to one random output
 * channel (none from a sink) -- straight through, never held by an
 * operator, and counted as no record. */
static int on_marker(run *r, const uint8_t *p, int from)
{
    tm_task *t = r->t;
    if (t->lat) {
        int64_t age = sl_now_ms() - sl_get_lei64(p);
        int src = (int)sl_get_le32(p + 8), sub = (int)sl_get_le32(p + 12);
        pthread_mutex_lock(&t->gate.mu);
        for (int i = from; i < r->nops; i++) tm_latency_record(t->lat, i, src, sub, age);
        pthread_mutex_unlock(&t->gate.mu);
    }
    if (!r->said || r->out_ended) return SL_OK; /* no marker before our first word, or after END */
    return tm_exchange_latency(&t->ws, p, 16, r->err, sizeof r->err);
}

/* A source's marker, every metrics.latency.interval: its wall time, its
 * vertex and subtask. */
static int source_marker(run *r, int64_t now)
{
    if (r->d->latency_ms <= 0 || now < r->next_marker_ns) return SL_OK;
    r->next_marker_ns = now + r->d->latency_ms * 1000000;
    uint8_t p[16];
    sl_put_lei64(p, sl_now_ms());
    sl_put_le32(p + 8, (uint32_t)r->ch->vertices[0]);
    sl_put_le32(p + 12, (uint32_t)r->t->subtask);
    return on_marker(r, p, 1);
}

/* Once a period: the gate's buffer size from the throughput measured
 * (debloat.h); announced to producers through the gate. */
static void debloat_tick(run *r, int64_t now)
{
    tm_task *t = r->t;
    pthread_mutex_lock(&t->gate.mu);
    int inuse = t->gate.queued + r->nheld;
    pthread_mutex_unlock(&t->gate.mu);
    uint32_t size = tm_debloat_tick(t->debloat, now, __atomic_load_n(&t->m.bytes_in, __ATOMIC_RELAXED),
                                    r->idle_ns, inuse);
    if (size)
        __atomic_store_n(&t->gate.buf_size, size >= t->debloat->max_size ? 0 : size, __ATOMIC_RELAXED);
}

/* ---- the chain ---------------------------------------------------------- */

/* Inside a chain only the main output is connected (a vertex with a side
 * output edge ends its chain), so output is always 0 here. */
static int chain_emit(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(output);
    return sl_rt_process((sl_op *)ctx, 0, row);
}

static int chain_emit_wm(void *ctx, int64_t wm)
{
    return sl_rt_watermark((sl_op *)ctx, 0, wm);
}

/* Idleness passes through a chain to its output: an operator with one idle
 * input has nothing to say about time either. */
static int chain_emit_idle(void *ctx, int idle)
{
    return sl_op_emit_idle((sl_op *)ctx, idle);
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

/* The RocksDB directory of a keyed operator subtask (unique per
 * TaskManager, job, attempt, uid and subtask). */
static void keyed_dir(run *r, const sl_op *op, char *dir, size_t cap)
{
    tm_deploy *d = r->d;
    snprintf(dir, cap, "%s/sluice-%s/job-%s-%u/%s-%d", sl_config_str(d->net->conf, "taskmanager.tmp.dirs"),
             d->net->id, d->job_id, d->attempt, op->vertex->uid, op->subtask);
    for (char *p = dir; *p; p++)
        if (*p == ':') *p = '_';
}

/* sl_op_set_info of the operator at chain position pos (task thread). */
static void task_info(void *ctx, int pos, const char *json)
{
    tm_task *t = ctx;
    pthread_mutex_lock(&t->gate.mu);
    if (pos < t->ninfo) snprintf(t->info[pos], SL_OP_INFO_MAX, "%s", json ? json : "");
    pthread_mutex_unlock(&t->gate.mu);
}

/* What the runtime's operators get from the TaskManager (runtime.h). */
static const sl_rt_host task_host = {
    .set_info = task_info,
    .collect_send = tm_collect_send,
    .collect_credit_now = tm_collect_credit_now,
    .collect_credit_fd = tm_collect_credit_fd,
};

static int open_chain(run *r)
{
    tm_task *t = r->t;
    const sl_jobgraph *g = r->d->g;
    r->nops = r->ch->n;
    r->ops = sl_calloc((size_t)r->nops, sizeof(sl_op));
    pthread_mutex_lock(&t->gate.mu);
    if (!t->info) {
        t->info = sl_calloc((size_t)r->nops, sizeof *t->info);
        t->ninfo = r->nops;
    }
    for (int k = 0; k < t->ninfo; k++) t->info[k][0] = '\0';
    pthread_mutex_unlock(&t->gate.mu);
    for (int k = 0; k < r->nops; k++) {
        const sl_vertex *v = &g->v[r->ch->vertices[k]];
        sl_op *op = &r->ops[k];
        sl_rt_init(op, v, t->subtask, g->max_parallelism);
        sl_rt_set_host(op, &task_host, t, k);
        op->out_stream = stdout;
        /* a restored job stages like a checkpointed one: its sinks' state
         * records what was pending */
        op->checkpointing = r->d->checkpointing || r->d->restore != NULL;
        op->final_checkpoint = r->d->checkpointing;
        op->task_name = sl_sprintf("%s (%d/%d)", v->name, t->subtask + 1, v->parallelism);
        if (k + 1 < r->nops) {
            op->out_connected[0] = 1;
            op->emit = chain_emit;
            op->emit_wm = chain_emit_wm;
            op->emit_idle = chain_emit_idle;
            op->emit_ctx = &r->ops[k + 1];
        } else if ((v->def->flags & SL_OPF_SINK) && !t->nwriters) {
            op->emit = sink_emit;
            op->emit_wm = sink_emit_wm;
            op->emit_ctx = r;
        } else {
            op->emit = task_emit;
            op->emit_wm = task_emit_wm;
            op->emit_idle = task_emit_idle;
            op->emit_ctx = r;
            for (int w = 0; w < t->nwriters; w++)
                if (t->writers[w].output < SL_MAX_OUTPUTS) op->out_connected[t->writers[w].output] = 1;
        }
    }
    for (int k = 0; k < r->nops; k++) {
        sl_op *op = &r->ops[k];
        char dir[1024];
        keyed_dir(r, op, dir, sizeof dir);
        /* the job's own state backend (its "config"), else this TaskManager's */
        const char *kind = sl_jobgraph_conf(r->d->g, "state.backend.type");
        if (!kind) kind = sl_config_str(r->d->net->conf, "state.backend.type");
        sl_backend_kind bk = strcmp(kind, "rocksdb") == 0 ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP;
        int rc = sl_rt_open(op, bk, dir);
        if (rc != SL_OK) {
            fail(r, op);
            for (int q = 0; q <= k; q++) sl_rt_close(&r->ops[q]);
            r->nops = 0; /* nothing left to close */
            return SL_ERR;
        }
    }
    return SL_OK;
}

/* ---- restore ------------------------------------------------------------ */

typedef struct restore_ctx {
    sl_op *op;
    char *err;
    size_t errlen;
} restore_ctx;

static int restore_entry(void *ctx, const sl_kentry *e)
{
    restore_ctx *rc = ctx;
    return sl_kstate_restore(rc->op->kstate, e, rc->err, rc->errlen) == SL_OK ? 0 : 1;
}

static int restore_timer(void *ctx, const sl_snap_timer *t)
{
    restore_ctx *rc = ctx;
    sl_timer tm = {t->time, t->kg, t->key, t->klen, t->ns, t->nslen};
    if (t->kg < rc->op->kg_first || t->kg > rc->op->kg_last) return 0;
    sl_timers_add(t->kind ? rc->op->proc_timers : rc->op->event_timers, &tm);
    return 0;
}

/* The keyed state of an incremental RocksDB checkpoint: its files put back
 * under RocksDB's names in a local directory, opened read-only, and the
 * entries of key groups [lo, hi] inserted as a full restore inserts them --
 * the same whether the key-group ranges changed (rescale) or not. */
static int restore_incremental(run *r, sl_op *op, const Sluice__SubtaskState *ss, int lo, int hi,
                               restore_ctx *ctx)
{
    char stage[1100];
    keyed_dir(r, op, stage, sizeof stage - 40);
    size_t n = strlen(stage);
    snprintf(stage + n, sizeof stage - n, ".restore-%u", ss->subtask);
    int rc = sl_inc_stage(r->d->restore_dir, ss, stage, op->err, sizeof op->err);
    if (rc == SL_OK)
        rc = sl_rocksdb_read_checkpoint(stage, lo, hi, restore_entry, ctx, op->err, sizeof op->err);
    char err[300];
    if (sl_rm_tree(stage, err, sizeof err) != SL_OK)
        sl_warn(TAG, "cannot remove restore directory %s: %s", stage, err);
    return rc;
}

/* Load this subtask's share of a snapshot into its operators: keyed
 * entries and timers of the key groups it owns now (from whichever old
 * files cover them), and the operator-state blobs dealt to it (every blob
 * for an operator with union state, SL_OPF_UNION_STATE). */
static int restore_chain(run *r)
{
    const Sluice__SnapshotMetadata *md = r->d->restore;
    if (!md) return SL_OK;
    for (int k = 0; k < r->nops; k++) {
        sl_op *op = &r->ops[k];
        const Sluice__OperatorState *os = NULL;
        for (size_t i = 0; i < md->n_operators; i++)
            if (!strcmp(md->operators[i]->uid, op->vertex->uid)) os = md->operators[i];
        if (!os) continue; /* a new operator: starts empty */
        const void **blobs = sl_calloc(os->n_subtasks + 1, sizeof(void *));
        size_t *lens = sl_calloc(os->n_subtasks + 1, sizeof(size_t));
        uint32_t *from = sl_calloc(os->n_subtasks + 1, sizeof(uint32_t));
        int nblobs = 0, rc = SL_OK;
        restore_ctx ctx = {op, op->err, sizeof op->err};
        for (size_t i = 0; i < os->n_subtasks && rc == SL_OK; i++) {
            const Sluice__SubtaskState *ss = os->subtasks[i];
            if (!ss->file || !*ss->file) continue;
            int share = sl_snapshot_share(ss, op->kstate != NULL, op->kg_first, op->kg_last,
                                          op->def->restore_state != NULL,
                                          (op->def->flags & SL_OPF_UNION_STATE) != 0, op->subtask,
                                          op->parallelism);
            if (!share) continue; /* nothing of it is ours (on S3 it was not even fetched) */
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", r->d->restore_dir, ss->file);
            /* a file that is not what _metadata says would restore silently
             * into the wrong subtask (or not at all): refuse it */
            if (sl_snapshot_verify_file(r->d->restore_dir, md, os, ss, op->err, sizeof op->err) != SL_OK) {
                rc = SL_ERR;
                break;
            }
            if (share & SL_SHARE_KEYED) {
                int lo = SL_MAX(op->kg_first, (int)ss->kg_first), hi = SL_MIN(op->kg_last, (int)ss->kg_last);
                if (sl_snapr_keyed(path, lo, hi, restore_entry, &ctx, op->err, sizeof op->err) != SL_OK ||
                    sl_snapr_timers(path, lo, hi, restore_timer, &ctx, op->err, sizeof op->err) != SL_OK)
                    rc = SL_ERR;
                if (rc == SL_OK && (ss->n_shared_files || ss->n_private_files))
                    rc = restore_incremental(r, op, ss, lo, hi, &ctx);
            }
            /* dealt round-robin, or all of them for union state */
            if (rc == SL_OK && (share & SL_SHARE_OPSTATE)) {
                void *blob = NULL;
                size_t len = 0;
                if (sl_snapr_opstate(path, &blob, &len, op->err, sizeof op->err) != SL_OK) rc = SL_ERR;
                else {
                    /* in the old subtasks' order (_metadata lists them as they
                     * acknowledged): a source serving several old shares takes
                     * them in that order, as Flink's split readers do */
                    int at = nblobs++;
                    for (; at > 0 && from[at - 1] > ss->subtask; at--) {
                        blobs[at] = blobs[at - 1];
                        lens[at] = lens[at - 1];
                        from[at] = from[at - 1];
                    }
                    blobs[at] = blob;
                    lens[at] = len;
                    from[at] = ss->subtask;
                }
            }
        }
        if (rc == SL_OK && op->def->restore_state && nblobs >= 0)
            rc = op->def->restore_state(op, (const void *const *)blobs, lens, nblobs);
        for (int i = 0; i < nblobs; i++) free((void *)blobs[i]);
        free(blobs);
        free(lens);
        free(from);
        if (rc != SL_OK) return fail(r, op);
    }
    return SL_OK;
}

static void close_chain(run *r)
{
    for (int k = 0; k < r->nops; k++) sl_rt_close(&r->ops[k]);
}

static void free_chain(run *r)
{
    for (int k = 0; k < r->ch->n && r->ops; k++) {
        sl_rt_close(&r->ops[k]); /* no-op when closed */
        free((char *)r->ops[k].task_name);
    }
    free(r->ops);
}

/* The end of every input through the whole chain, in order: the maximum
 * watermark fires every timer, then each operator's end_input. */
static int end_chain(run *r)
{
    for (int k = 0; k < r->nops; k++)
        if (sl_rt_end_all(&r->ops[k]) != SL_OK) return fail(r, &r->ops[k]);
    return SL_OK;
}

/* Everything upstream has ended: fire what is left, then end our outputs. */
static int finish_chain(run *r)
{
    if (end_chain(r) != SL_OK) return SL_ERR;
    r->out_ended = 1;
    r->said = 1;
    if (writers_broadcast(r, SL_EL_END, 1) != SL_OK) return SL_ERR;
    flush_writers(r);
    return SL_OK;
}

/* End the outputs after a stop-with-savepoint: `drained` says whether
 * everything already fired (then downstream drains too). */
static int finish_ends(run *r, int drained)
{
    r->out_ended = 1;
    r->said = 1;
    if (writers_broadcast(r, SL_EL_END, drained) != SL_OK) return SL_ERR;
    flush_writers(r);
    return SL_OK;
}

/* Stop-with-savepoint without drain: end the outputs without firing what
 * is pending (windows and timers stay in the savepoint). */
static int finish_stopped(run *r)
{
    r->out_ended = 1;
    r->said = 1;
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
    for (int k = 0; k < r->nops; k++) {
        int64_t at = sl_rt_next_proc(&r->ops[k]);
        if (at < wall) wall = at;
    }
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
        int64_t at = sl_rt_next_proc(op);
        if (at == INT64_MAX) continue;
        if (!wall) wall = sl_now_ms();
        if (wall < at) continue;
        if (sl_rt_fire_proc(op, wall) != SL_OK) return fail(r, op);
    }
    return SL_OK;
}

/* ---- checkpoints ---------------------------------------------------------- */

/* The maximum watermark and end of input through the whole chain, without
 * ending the outputs (stop with drain: the savepoint follows). */
static int drain_chain(run *r) { return end_chain(r); }

typedef struct timer_copy {
    sl_snap_timer *arr;
    size_t n, cap;
    int kind;
} timer_copy;

static void copy_timer(void *ctx, const sl_timer *tm)
{
    timer_copy *tc = ctx;
    if (tc->n == tc->cap) {
        tc->cap = tc->cap ? tc->cap * 2 : 64;
        tc->arr = sl_realloc(tc->arr, tc->cap * sizeof *tc->arr);
    }
    sl_snap_timer *st = &tc->arr[tc->n++];
    st->kind = tc->kind;
    st->time = tm->time;
    st->kg = tm->kg;
    st->klen = tm->klen;
    st->key = sl_malloc(tm->klen ? tm->klen : 1);
    memcpy(st->key, tm->key, tm->klen);
    st->nslen = tm->nslen;
    st->ns = sl_malloc(tm->nslen ? tm->nslen : 1);
    memcpy(st->ns, tm->ns, tm->nslen);
}

/* "<uid>-<subtask>.state" with anything but [A-Za-z0-9_.-] replaced. */
static char *state_file_name(const char *uid, int subtask)
{
    char *f = sl_sprintf("%s-%d.state", uid, subtask);
    for (char *p = f; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            *p = '_';
    return f;
}

/* The synchronous part of a checkpoint: views of keyed state, copies of
 * timers, operator-state blobs; then the barrier goes downstream and the
 * snapshot thread writes the files. An unaligned one (SL_CP_UNALIGNED)
 * sends its barrier ahead of the buffers queued on its outputs (the remote
 * ones' become output channel state) and, in a task with inputs, starts
 * capturing their in-flight data: its snapshot is submitted when that
 * ends (cap_maybe_done). */
static int take_snapshot(run *r, uint64_t cpid, int64_t ts, int flags, const char *dir,
                         uint64_t alignment_ns)
{
    tm_task *t = r->t;
    tm_out_poll(r, 1); /* an earlier one's barrier still queued: it goes now */
    int64_t t0 = sl_mono_ns();
    tm_snap_job *job = sl_calloc(1, sizeof *job);
    memcpy(job->job_id, r->d->job_id, sizeof job->job_id);
    job->attempt = r->d->attempt;
    job->cpid = cpid;
    job->chain = t->chain;
    job->subtask = t->subtask;
    job->dir = sl_strdup(dir);
    job->alignment_ns = alignment_ns;
    job->start_delay_ns = (uint64_t)SL_MAX(0, (sl_now_ms() - ts) * 1000000);
    job->parts = sl_calloc((size_t)r->nops, sizeof(tm_snap_part));
    job->unaligned = (flags & SL_CP_UNALIGNED) != 0;
    if (!job->unaligned && r->aligning == cpid) job->processed = r->window_bytes;
    job->head_uid = sl_strdup(r->ops[0].vertex->uid);
    for (int k = 0; k < r->nops; k++) {
        sl_op *op = &r->ops[k];
        if (!op->kstate && !op->def->snapshot_state) continue;
        tm_snap_part *p = &job->parts[job->nparts];
        void *blob = NULL;
        size_t len = 0;
        if (op->def->snapshot_state && op->def->snapshot_state(op, (int64_t)cpid, &blob, &len) != SL_OK) {
            snprintf(job->error, sizeof job->error, "%s: snapshot: %s", op->task_name, op->err);
            break;
        }
        if (!op->kstate && !op->def->restore_state) {
            /* it could restore nothing: a barrier hook only (local_aggregate
             * flushes its buffer), no state in the snapshot */
            free(blob);
            continue;
        }
        job->nparts++;
        p->deferred = sl_rt_take_deferred(op);
        p->uid = sl_strdup(op->vertex->uid);
        p->file = state_file_name(op->vertex->uid, op->subtask);
        p->blob = blob;
        p->bloblen = blob ? len : 0;
        p->max_parallelism = op->max_parallelism;
        if (op->kstate) {
            char err[300];
            p->keyed = 1;
            p->kg_first = op->kg_first;
            p->kg_last = op->kg_last;
            if (sl_kstate_kind(op->kstate) == SL_BACKEND_ROCKSDB && !(flags & SL_CP_SAVEPOINT) &&
                sl_config_bool(r->d->net->conf, "execution.checkpointing.incremental")) {
                /* incremental: a RocksDB checkpoint, whose new SST files the
                 * writer uploads (savepoints stay full, self-contained) */
                char local[1100];
                keyed_dir(r, op, local, sizeof local - 40);
                size_t ln = strlen(local);
                snprintf(local + ln, sizeof local - ln, ".chk-%llu", (unsigned long long)cpid);
                if (sl_kstate_rocksdb_checkpoint(op->kstate, local, err, sizeof err) != SL_OK) {
                    snprintf(job->error, sizeof job->error, "%s: snapshot: %s", op->task_name, err);
                    break;
                }
                p->rdb_local = sl_strdup(local);
                snprintf(p->rdb_instance, sizeof p->rdb_instance, "%s",
                         sl_kstate_rocksdb_instance(op->kstate));
            } else if (!(p->ksnap = sl_kstate_snapshot(op->kstate, err, sizeof err))) {
                snprintf(job->error, sizeof job->error, "%s: snapshot: %s", op->task_name, err);
                break;
            }
            timer_copy tc = {NULL, 0, 0, 0};
            for (int kg = op->kg_first; kg <= op->kg_last; kg++) {
                tc.kind = 0;
                sl_timers_each(op->event_timers, kg, copy_timer, &tc);
                tc.kind = 1;
                sl_timers_each(op->proc_timers, kg, copy_timer, &tc);
            }
            p->timers = tc.arr;
            p->ntimers = tc.n;
        } else {
            p->kg_first = 0;
            p->kg_last = op->max_parallelism - 1;
        }
    }
    job->sync_ns = (uint64_t)(sl_mono_ns() - t0);
    /* the barrier follows everything emitted before it, and is the last
     * element of its buffer */
    uint8_t *b = r->barrier_el;
    size_t dl = strlen(dir);
    if (dl > sizeof r->barrier_el - 27) dl = sizeof r->barrier_el - 27;
    sl_put_le64(b, cpid);
    sl_put_lei64(b + 8, ts);
    b[16] = (uint8_t)flags;
    sl_put_le16(b + 17, (uint16_t)dl);
    memcpy(b + 19, dir, dl);
    /* then the aligned-checkpoint-timeout, which ALIGN_TIMEOUT goes by */
    sl_put_lei64(b + 19 + dl, (flags & SL_CP_ALIGN_TIMEOUT) ? r->align_timeout_ms : 0);
    r->barrier_len = 27 + dl;
    int rc = SL_OK, inband = 0;
    if (!r->out_ended) {
        /* after END nothing follows downstream: it does not wait for us */
        rc = first_word(r, 0);
        if (rc == SL_OK && job->unaligned) {
            r->cap_job = job; /* for tm_cs_output */
            rc = tm_exchange_priority_barrier(&t->ws, r->barrier_el, r->barrier_len, tm_cs_output, r, r->err,
                                              sizeof r->err);
            r->cap_job = NULL;
        } else if (rc == SL_OK) {
            rc = writers_broadcast(r, SL_EL_BARRIER, 0);
            inband = rc == SL_OK;
        }
        flush_writers(r);
    } else if (!r->final_from) {
        r->final_from = cpid;
    }
    r->last_cp = cpid;
    if ((flags & SL_CP_STOP) && (cpid > r->last_aborted || (flags & SL_CP_DRAIN))) {
        /* (a stop's savepoint whose abort overtook its barrier: without drain
         * the task goes on as if it had seen the abort after it; with drain
         * it has drained, so it ends as a failed stop) */
        r->stop_cpid = cpid;
        r->stop_done = cpid > r->last_aborted ? 0 : -1;
        r->stop_drain = (flags & SL_CP_DRAIN) != 0;
    }
    if (job->unaligned && t->ngate_chan && rc == SL_OK) {
        tm_cap_start(r, cpid, job);
        tm_cap_maybe_done(r);
        return rc;
    }
    if (inband && (flags & SL_CP_ALIGN_TIMEOUT) && r->align_timeout_ms > 0 && tm_exchange_has_remote(t)) {
        /* its barrier may wait for credit behind queued buffers past the
         * aligned-checkpoint-timeout: the snapshot waits for it to leave */
        tm_out_hold(r, cpid, ts + r->align_timeout_ms, job);
        return rc;
    }
    tm_snapshotter_submit(r->d->net, job);
    return rc;
}

static void hold(run *r, sl_netbuf *b)
{
    int c = b->chan;
    b->next = NULL;
    if (r->held_tail[c]) r->held_tail[c]->next = b;
    else r->held_head[c] = b;
    r->held_tail[c] = b;
    r->nheld++;
}

/* A channel whose buffers wait: it delivered the barrier being aligned
 * (exactly once), or it said its first word and another has not yet
 * (valve.h: no row is judged before every channel has spoken). */
static int channel_blocked(const run *r, int c)
{
    if (!sl_valve_ready(&r->valve) && sl_valve_spoke(&r->valve, c)) return 1;
    return r->aligning && r->d->exactly_once && r->chan_barrier[c];
}

/* A held buffer whose channel is open again. */
static sl_netbuf *take_held(run *r)
{
    if (!r->nheld) return NULL;
    for (int c = 0; c < r->t->ngate_chan; c++) {
        if (channel_blocked(r, c)) continue;
        sl_netbuf *b = r->held_head[c];
        if (!b) continue;
        r->held_head[c] = b->next;
        if (!r->held_head[c]) r->held_tail[c] = NULL;
        r->nheld--;
        b->next = NULL;
        return b;
    }
    return NULL;
}

static sl_netbuf *take_all_held(run *r)
{
    sl_netbuf *all = NULL;
    for (int c = 0; c < r->t->ngate_chan; c++) {
        while (r->held_head[c]) {
            sl_netbuf *b = r->held_head[c];
            r->held_head[c] = b->next;
            b->next = all;
            all = b;
        }
        r->held_tail[c] = NULL;
    }
    r->nheld = 0;
    return all;
}

/* Barriers from every live channel: snapshot and forward. */
static int maybe_complete_alignment(run *r)
{
    if (!r->aligning) return SL_OK;
    int live = 0;
    for (int c = 0; c < r->t->ngate_chan; c++) live += !sl_valve_ended(&r->valve, c);
    if (r->nbarriers < live) return SL_OK;
    uint64_t cpid = r->aligning;
    uint64_t align_ns = (uint64_t)(sl_mono_ns() - r->align_start_ns);
    int rc = take_snapshot(r, cpid, r->align_ts, r->align_flags, r->align_dir, align_ns);
    r->aligning = 0;
    r->nbarriers = 0;
    memset(r->chan_barrier, 0, (size_t)r->t->ngate_chan);
    free(r->align_dir);
    r->align_dir = NULL;
    return rc;
}

static int on_barrier(run *r, int c, const sl_netbuf *b, const uint8_t *p, uint32_t len)
{
    if (len < 19) return sl_seterr(r->err, sizeof r->err, "damaged barrier");
    uint64_t cpid;
    int64_t ts;
    uint16_t dl;
    cpid = sl_get_le64(p);
    ts = sl_get_lei64(p + 8);
    dl = sl_get_le16(p + 17);
    if (19u + dl > len) return sl_seterr(r->err, sizeof r->err, "damaged barrier");
    int flags = p[16];
    int64_t timeout = len >= 27u + dl ? sl_get_lei64(p + 19 + dl) : 0;
    if (r->cap_cpid && cpid == r->cap_cpid) {
        tm_cap_channel(r, c, b);
        tm_cap_maybe_done(r);
        return SL_OK;
    }
    if (cpid <= r->last_cp) return SL_OK; /* an older checkpoint, already superseded */
    if ((flags & SL_CP_UNALIGNED) && r->aligning == cpid) {
        /* aligning it, and upstream's aligned-checkpoint-timeout passed
         * first: unaligned from now, the channels whose barrier came are
         * aligned */
        int rc = tm_align_switch(r);
        if (rc == SL_OK && r->cap_cpid == cpid) {
            tm_cap_channel(r, c, b);
            tm_cap_maybe_done(r);
        }
        return rc;
    }
    if (flags & SL_CP_UNALIGNED) {
        /* the first barrier of an unaligned checkpoint: snapshot now (an
         * older capture or alignment is abandoned: the coordinator times
         * that checkpoint out) */
        tm_cap_abandon(r);
        r->aligning = 0;
        r->nbarriers = 0;
        memset(r->chan_barrier, 0, (size_t)r->t->ngate_chan);
        char *dir = sl_strndup((const char *)p + 19, dl);
        int rc = take_snapshot(r, cpid, ts, flags, dir, 0);
        free(dir);
        if (rc == SL_OK && r->cap_cpid == cpid) {
            tm_cap_channel(r, c, b);
            tm_cap_maybe_done(r);
        }
        return rc;
    }
    if (r->cap_cpid) tm_cap_abandon(r); /* a savepoint after an unfinished unaligned checkpoint */
    if (cpid > r->aligning) {
        /* a newer checkpoint overtakes one still aligning: that one is
         * abandoned (the coordinator times it out) */
        r->aligning = cpid;
        r->align_ts = ts;
        r->align_flags = p[16];
        free(r->align_dir);
        r->align_dir = sl_strndup((const char *)p + 19, dl);
        r->align_start_ns = sl_mono_ns();
        r->align_timeout_ms = timeout;
        r->window_bytes = 0;
        r->nbarriers = 0;
        memset(r->chan_barrier, 0, (size_t)r->t->ngate_chan);
    }
    if (!r->chan_barrier[c]) {
        r->chan_barrier[c] = 1;
        r->nbarriers++;
    }
    if (maybe_complete_alignment(r) != SL_OK) return SL_ERR;
    return tm_align_timeout(r);
}

static void op_checkpoint_done(run *r, uint64_t cpid, int completed)
{
    for (int k = 0; k < r->nops; k++) {
        sl_op *op = &r->ops[k];
        int (*fn)(sl_op *, int64_t) = completed ? op->def->checkpoint_complete : op->def->checkpoint_abort;
        if (fn && fn(op, (int64_t)cpid) != SL_OK) {
            fail(r, op);
            return;
        }
    }
}

static int is_source(const run *r) { return (r->ops[0].def->flags & SL_OPF_SOURCE) != 0; }

/* Mail from the network thread. Sources take a checkpoint on TRIGGER, and
 * so do tasks whose outputs have ended (waiting for a final checkpoint). */
static int handle_mail(run *r, int *stop)
{
    tm_mail *m = tm_gate_take_mail(&r->t->gate);
    int rc = SL_OK;
    for (tm_mail *x = m; x && rc == SL_OK; x = x->next) {
        switch (x->kind) {
        case TM_MAIL_TRIGGER:
            if (x->cpid > r->last_cp && !r->out_ended && !is_source(r)) {
                /* a consumer still running takes it with its barriers; note
                 * it in case its inputs end without one (run_consumer) */
                if (x->cpid > r->trig_cpid) {
                    r->trig_cpid = x->cpid;
                    r->trig_ts = x->ts;
                    r->trig_flags = x->flags;
                    r->trig_timeout_ms = x->align_timeout_ms;
                    free(r->trig_dir);
                    r->trig_dir = sl_strdup(x->dir);
                }
            } else if (x->cpid > r->last_cp && r->out_ended) {
                r->align_timeout_ms = x->align_timeout_ms;
                /* ended, waiting for a final checkpoint: our state now */
                rc = take_snapshot(r, x->cpid, x->ts, x->flags, x->dir, 0);
            } else if (x->cpid > r->last_cp) {
                /* stop with drain: everything fires before the savepoint */
                if ((x->flags & SL_CP_STOP) && (x->flags & SL_CP_DRAIN)) rc = drain_chain(r);
                r->align_timeout_ms = x->align_timeout_ms;
                if (rc == SL_OK) rc = take_snapshot(r, x->cpid, x->ts, x->flags, x->dir, 0);
                if (x->flags & SL_CP_STOP) *stop = x->flags;
            }
            break;
        case TM_MAIL_COMPLETE:
            op_checkpoint_done(r, x->cpid, 1);
            if (r->failed) rc = SL_ERR;
            if (r->final_from && x->cpid >= r->final_from) r->final_done = 1;
            if (x->cpid == r->stop_cpid) r->stop_done = 1;
            break;
        case TM_MAIL_ABORT:
            if (x->cpid > r->last_aborted) r->last_aborted = x->cpid;
            if (r->cap_cpid && x->cpid >= r->cap_cpid) tm_cap_abandon(r);
            if (r->out_cpid && x->cpid >= r->out_cpid) tm_out_abandon(r);
            op_checkpoint_done(r, x->cpid, 0);
            if (r->failed) rc = SL_ERR;
            if (x->cpid == r->stop_cpid && !r->stop_drain && !r->out_ended) {
                /* a stop without drain whose savepoint failed: nothing has
                 * ended yet (sources end their outputs only once it
                 * completed), so the task goes on as before it */
                r->stop_cpid = 0;
                r->stop_done = 0;
            } else if (x->cpid == r->stop_cpid) {
                r->stop_done = -1;
            }
            break;
        }
    }
    tm_mail_free(m);
    return rc;
}

/* The descriptors operators k >= from of the chain watch, into pf[cap]. */
static int chain_fds(const run *r, int from, struct pollfd *pf, int cap)
{
    int n = 0;
    for (int k = from; k < r->nops; k++)
        for (int i = 0; i < r->ops[k].nwatch && n < cap; i++)
            pf[n++] = (struct pollfd){.fd = r->ops[k].watch_fd[i], .events = r->ops[k].watch_events[i]};
    return n;
}

/* Operators k >= from that watch descriptors look at them (non-blocking):
 * another thread may have handed them work (async I/O completions). */
static int chain_ready(run *r, int from)
{
    for (int k = from; k < r->nops; k++)
        if (r->ops[k].nwatch && sl_rt_ready(&r->ops[k]) != SL_OK) return fail(r, &r->ops[k]);
    return SL_OK;
}

/* A source that waits on descriptors (its own and those of the operators
 * chained after it): poll them and the gate's eventfd together, so mail (a
 * checkpoint trigger) ends the wait at once. */
static void source_poll(run *r, const sl_op *src, int64_t wait_ns)
{
    struct pollfd pf[SL_MAX_WATCH_FDS * 4 + 1];
    int n = 0;
    tm_gate *g = &r->t->gate;
    pf[n++] = (struct pollfd){.fd = g->efd, .events = POLLIN};
    for (int i = 0; i < src->nwatch; i++)
        pf[n++] = (struct pollfd){.fd = src->watch_fd[i], .events = src->watch_events[i]};
    n += chain_fds(r, 1, pf + n, (int)SL_ARRAY_LEN(pf) - n);
    int ms = (int)SL_MIN(wait_ns / 1000000 + 1, 1000); /* a second at most: cancellation */
    if (poll(pf, (nfds_t)n, ms) > 0 && (pf[0].revents & POLLIN)) {
        uint64_t x;
        if (read(g->efd, &x, sizeof x) < 0 && errno != EAGAIN)
            sl_warn(TAG, "task wake-up: %s", strerror(errno));
    }
}

/* A source took the savepoint of a stop without drain. As Flink's
 * synchronous savepoint, it emits nothing more until that savepoint ends:
 * completed, its outputs end (the caller sends END); aborted (handle_mail
 * cleared stop_cpid), it reads on, so a failed stop or rescale leaves the
 * job running as it was. SL_ERR when a checkpoint hook failed. */
static int await_stop(run *r)
{
    uint64_t cpid = r->stop_cpid;
    if (!cpid) /* no stop pending: its abort came in the same batch of mail as its trigger, or
                * before its barrier (take_snapshot) */
        return SL_OK;
    flush_writers(r); /* the barrier and what preceded it go out now */
    while (r->stop_cpid == cpid && !r->stop_done && !cancelled(r)) {
        int64_t now = sl_mono_ns();
        wait_begin(r, WAIT_IDLE, now);
        sl_netbuf *none = tm_gate_take(&r->t->gate, now + 100000000); /* a source's gate only brings mail */
        SL_ASSERT(none == NULL);
        wait_end(r, WAIT_IDLE, sl_mono_ns() - now);
        int stop = 0;
        if (handle_mail(r, &stop) != SL_OK) return SL_ERR;
        publish(r);
    }
    if (r->stop_cpid != cpid)
        sl_info(TAG, "task %s (%d/%d): savepoint %llu of a stop failed; reading on", r->ch->name,
                r->t->subtask + 1, r->ch->parallelism, (unsigned long long)cpid);
    return SL_OK;
}

static int run_source(run *r)
{
    tm_task *t = r->t;
    sl_op *head = &r->ops[0];
    for (;;) {
        if (cancelled(r)) return SL_DONE;
        int stop = 0;
        /* the first run() comes before any mail: a reader knows by its end
         * whether it has anything to read (no split: it says idle), and
         * that is its first word, before any barrier */
        if (r->said && handle_mail(r, &stop) != SL_OK) return SL_ERR;
        tm_out_poll(r, 0);
        if (stop & SL_CP_DRAIN) return finish_ends(r, 1);
        if (stop) {
            if (await_stop(r) != SL_OK) return SL_ERR;
            if (cancelled(r)) return SL_DONE;
            if (r->stop_done > 0) return finish_ends(r, 0);
            continue; /* its savepoint failed */
        }
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
        if (first_word(r, 0) != SL_OK) return fail(r, head); /* active, unless run() said idle */
        if (source_marker(r, now) != SL_OK) return fail(r, head);
        if (chain_ready(r, 1) != SL_OK) return SL_ERR;
        if (proc_time_due(r) != SL_OK) return SL_ERR;
        maybe_flush(r, now);
        if (rc == SL_AGAIN) {
            int64_t wake_ns = head->wake_at_ms > INT64_MAX / 1000000 ? INT64_MAX
                                                                     : head->wake_at_ms * 1000000;
            int64_t until = SL_MIN(wake_ns, flush_deadline(r, now));
            if (r->d->latency_ms > 0) until = SL_MIN(until, r->next_marker_ns);
            struct pollfd probe[1];
            if (until > now && (head->nwatch || chain_fds(r, 1, probe, 1))) {
                wait_begin(r, WAIT_IDLE, now);
                source_poll(r, head, until - now);
                int64_t after = sl_mono_ns();
                wait_end(r, WAIT_IDLE, after - now);
                maybe_flush(r, after);
            } else if (until > now) {
                wait_begin(r, WAIT_IDLE, now);
                sl_netbuf *none = tm_gate_take(&t->gate, until); /* a source's gate only brings mail */
                SL_ASSERT(none == NULL);
                int64_t after = sl_mono_ns();
                wait_end(r, WAIT_IDLE, after - now);
                maybe_flush(r, after);
            }
        }
        publish(r);
    }
}

/* What a channel said went through the valve (valve.h); the head failed
 * when rc is SL_ERR. Once every channel has spoken we say our own first
 * word: idle when every live input is (the valve said so through the
 * head), else active. */
static int after_word(run *r, int rc)
{
    if (rc != SL_OK) return fail(r, &r->ops[0]);
    __atomic_store_n(&r->t->m.wm_idle, r->valve.all_idle, __ATOMIC_RELAXED);
    r->in_wm = r->ops[0].current_watermark;
    if (!r->said && sl_valve_ready(&r->valve) && r->valve.nended < r->valve.nchan &&
        first_word(r, r->valve.all_idle) != SL_OK)
        return fail(r, &r->ops[0]);
    return SL_OK;
}

/* Every channel of input `in` has ended (and there are other inputs still
 * open): the operator hears of it now; the last input ends in finish_chain. */
static void maybe_end_input(run *r, int in, int *rc)
{
    int open = 0;
    for (int c = 0; c < r->t->ngate_chan; c++)
        if (!sl_valve_ended(&r->valve, c) && r->t->chan_input[c] == in) open++;
    if (open || r->valve.nended == r->t->ngate_chan || r->stopped) return;
    if (sl_rt_end_input(&r->ops[0], in) != SL_OK) *rc = fail(r, &r->ops[0]);
    r->in_wm = r->ops[0].current_watermark;
}

static int process_buffer(run *r, sl_netbuf *b)
{
    sl_op *head = &r->ops[0];
    int c = b->chan;
    int input = r->t->chan_input[c];
    const sl_schema *in = head->ins[input];
    size_t pos = 0;
    int rc = SL_OK;
    while (rc == SL_OK) {
        tm_element el;
        char xerr[200];
        int x = tm_exchange_read(&r->t->rd, b, &pos, &el, xerr, sizeof xerr);
        if (x == SL_DONE) break;
        if (x == SL_AGAIN) continue; /* a part of a spanning record */
        if (x != SL_OK) {
            rc = sl_seterr(r->err, sizeof r->err, "%s: damaged buffer from input channel %d: %s",
                           head->task_name, c, xerr);
            r->failed = 1;
            break;
        }
        int tag = el.tag;
        uint32_t len = el.len;
        const uint8_t *p = el.p;
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
            row.ts = sl_get_lei64(p);
            if (sl_rt_process(head, input, &row) != SL_OK) rc = fail(r, head);
        } else if (tag == SL_EL_WATERMARK && len == 8) {
            rc = after_word(r, sl_valve_watermark(&r->valve, head, c, sl_get_lei64(p)));
        } else if (tag == SL_EL_BARRIER) {
            if (pos != b->len) {
                rc = sl_seterr(r->err, sizeof r->err, "%s: damaged buffer: data after a barrier",
                               head->task_name);
                r->failed = 1;
            } else if (on_barrier(r, c, b, p, len) != SL_OK) {
                rc = SL_ERR;
                r->failed = 1;
            }
        } else if (tag == SL_EL_LATENCY && len == 16) {
            if (on_marker(r, p, 0) != SL_OK) rc = fail(r, &r->ops[r->nops - 1]);
        } else if (tag == SL_EL_IDLE && len == 1) {
            rc = after_word(r, sl_valve_status(&r->valve, head, c, p[0] != 0));
        } else if (tag == SL_EL_END && len <= 1) {
            if (!sl_valve_ended(&r->valve, c)) {
                if (len == 1 && p[0] == 0) r->stopped = 1; /* stopped upstream, not drained */
                if (r->chan_barrier[c]) { r->chan_barrier[c] = 0; r->nbarriers--; }
                if (r->cap_cpid) tm_cap_mark(r, c, 0); /* no barrier comes after END */
                rc = after_word(r, sl_valve_end(&r->valve, head, c));
                if (rc == SL_OK && r->valve.nended < r->t->ngate_chan) maybe_end_input(r, input, &rc);
                if (rc == SL_OK && maybe_complete_alignment(r) != SL_OK) rc = SL_ERR;
                tm_cap_maybe_done(r);
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
    while (r->valve.nended < t->ngate_chan) {
        if (cancelled(r)) return SL_DONE;
        int stop = 0;
        if (handle_mail(r, &stop) != SL_OK) return SL_ERR;
        if (tm_align_timeout(r) != SL_OK) return SL_ERR;
        tm_out_poll(r, 0);
        if (r->cap_scan && __atomic_load_n(&t->gate.pushed, __ATOMIC_RELAXED) != r->cap_scanned) {
            tm_cap_scan_gate(r, r->cap_cpid); /* in-band barriers queued since */
            tm_cap_maybe_done(r);
        }
        int64_t now = sl_mono_ns();
        /* a priority barrier before anything held: it went ahead of them */
        sl_netbuf *b = tm_gate_take_priority(&t->gate);
        if (!b) b = take_held(r);
        if (!b) b = tm_gate_take_nowait(&t->gate);
        int64_t after = now;
        if (!b) {
            struct pollfd pf[SL_MAX_WATCH_FDS * 4];
            int nfds = chain_fds(r, 0, pf, (int)SL_ARRAY_LEN(pf));
            wait_begin(r, WAIT_IDLE, now);
            b = nfds ? tm_gate_take_poll(&t->gate, flush_deadline(r, now), pf, nfds)
                     : tm_gate_take(&t->gate, flush_deadline(r, now));
            after = sl_mono_ns();
            wait_end(r, WAIT_IDLE, after - now);
        }
        if (chain_ready(r, 0) != SL_OK) return SL_ERR;
        if (!b) {
            if (proc_time_due(r) != SL_OK) return SL_ERR;
            maybe_flush(r, after);
            publish(r);
            continue;
        }
        if (channel_blocked(r, b->chan) && !b->prio) {
            hold(r, b); /* aligning: this channel already delivered the barrier */
            continue;
        }
        tm_cap_on_process(r, b);
        if (r->aligning) r->window_bytes += b->len; /* processed while aligning (processed_data) */
        if (process_buffer(r, b) != SL_OK) return cancelled(r) ? SL_DONE : SL_ERR;
        if (proc_time_due(r) != SL_OK) return SL_ERR;
        int64_t done = sl_mono_ns();
        maybe_flush(r, done);
        if (SL_UNLIKELY(t->debloat != NULL)) debloat_tick(r, done);
        publish(r);
    }
    if (r->stop_cpid) return finish_ends(r, !r->stopped); /* stop-with-savepoint passed here */
    int rc = r->stopped ? finish_stopped(r) : finish_chain(r);
    /* a checkpoint triggered while we ran whose barrier never came (every
     * input ended first, upstream took it after its end): take it now */
    if (rc == SL_OK && r->trig_cpid > r->last_cp && !r->failed)
        rc = take_snapshot(r, r->trig_cpid, r->trig_ts, r->trig_flags, r->trig_dir, 0);
    return rc;
}

/* Restored from a snapshot that records this subtask finished (its head
 * vertex's entry says so; after a change of parallelism only when every
 * old subtask had finished -- restore.c refuses a partly finished source
 * at another parallelism). Only sources care: everything downstream of a
 * finished task sees its input end at once and has no state to fire. */
static int restored_finished(const run *r)
{
    const Sluice__SnapshotMetadata *md = r->d->restore;
    if (!md || !is_source(r)) return 0;
    const sl_op *head = &r->ops[0];
    for (size_t i = 0; i < md->n_operators; i++) {
        const Sluice__OperatorState *os = md->operators[i];
        if (strcmp(os->uid, head->vertex->uid)) continue;
        int nfin = 0, mine = 0;
        for (size_t k = 0; k < os->n_subtasks; k++) {
            if (!os->subtasks[k]->finished) continue;
            nfin++;
            mine |= os->subtasks[k]->subtask == (uint32_t)head->subtask;
        }
        if (os->parallelism == (uint32_t)head->parallelism) return mine;
        return nfin > 0 && nfin == (int)os->parallelism;
    }
    return 0;
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
    {   /* its name in thread dumps (GET /taskmanagers/:id/thread-dump): chain and
         * subtask, as much of the chain's name as the kernel keeps (15 bytes) */
        char name[16];
        snprintf(name, sizeof name, "%d.%d %s", t->chain, t->subtask, r.ch->name);
        pthread_setname_np(pthread_self(), name);
    }
    __atomic_store_n(&t->tid, (int)sl_stack_self(), __ATOMIC_RELEASE); /* stack samples */
    r.in_wm = INT64_MIN;
    r.out_wm = INT64_MIN;
    r.start_ns = sl_mono_ns();
    tm_exchange_set_wait(&t->ws, bp_begin, bp_end, &r);
    r.next_flush_ns = r.start_ns + d->buffer_timeout_ms * 1000000;
    __atomic_store_n(&t->m.in_wm, INT64_MIN, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.out_wm, INT64_MIN, __ATOMIC_RELAXED);
    sl_valve_init(&r.valve, t->ngate_chan, t->chan_input);
    r.chan_barrier = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), 1);
    r.held_head = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), sizeof(sl_netbuf *));
    r.held_tail = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), sizeof(sl_netbuf *));
    r.cap_seen = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), 1);
    r.cap_skip = sl_calloc((size_t)(t->ngate_chan ? t->ngate_chan : 1), sizeof(int));
    tm_chan_map(&r);
    const sl_vertex *head = &d->g->v[r.ch->vertices[0]];
    int nvals = 1;
    for (int i = 0; i < head->ninputs; i++) nvals = SL_MAX(nvals, head->in[i].n);
    r.in_vals = sl_calloc((size_t)nvals, sizeof(sl_value));

    int rc = open_chain(&r);
    int restored = rc == SL_OK ? restore_chain(&r) : SL_OK;
    if (rc == SL_OK && restored == SL_OK) restored = tm_replay_channels(&r);
    tm_deploy_restored(d); /* the last one drops a local copy of an s3:// snapshot */
    if (rc == SL_OK && restored != SL_OK) {
        close_chain(&r);
        rc = SL_ERR;
    } else if (rc == SL_OK) {
        tm_net_report(d->net, d, t->chain, t->subtask, SLUICE__TASK_STATE__TASK_RUNNING, NULL);
        int finished = restored_finished(&r);
        if (finished) /* it had finished: emits nothing, ends at once */
            rc = finish_ends(&r, 1);
        else
            rc = (head->def->flags & SL_OPF_SOURCE) ? run_source(&r) : run_consumer(&r);
        /* stop-with-savepoint: finish only once the savepoint is complete,
         * so two-phase-commit sinks publish what it covers; with checkpoints
         * on, a task whose input ended finishes only once a checkpoint taken
         * after its end completed (its final checkpoint: two-phase-commit
         * sinks commit their last rows there) */
        int final_wait = rc == SL_OK && !finished && !r.stop_cpid && d->checkpointing;
        if (final_wait && !r.final_from) /* the coordinator need not wait a whole interval */
            tm_net_report_end_of_input(d->net, d, t->chain, t->subtask);
        while (rc == SL_OK && !cancelled(&r) &&
               ((r.stop_cpid && !r.stop_done) || (final_wait && !r.final_done))) {
            int stop = 0;
            sl_netbuf *late = tm_gate_take(&t->gate, sl_mono_ns() + 100000000);
            if (late) sl_buf_recycle(late); /* every input has ended: nothing can come */
            if (handle_mail(&r, &stop) != SL_OK) rc = SL_ERR;
            tm_out_poll(&r, 0);
        }
        if (rc == SL_OK && r.stop_done < 0)
            rc = sl_seterr(r.err, sizeof r.err, "the stop-with-savepoint savepoint failed");
        publish(&r);
        tm_cap_abandon(&r); /* a capture that did not finish: its views go before the state */
        tm_out_abandon(&r);
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
    sl_valve_free(&r.valve);
    free(r.chan_barrier);
    for (sl_netbuf *b = take_all_held(&r); b;) {
        sl_netbuf *next = b->next;
        sl_buf_recycle(b);
        b = next;
    }
    free(r.held_head);
    free(r.held_tail);
    tm_cap_abandon(&r);
    free(r.cap_seen);
    free(r.cap_skip);
    free(r.chan_edge);
    free(r.chan_from);
    free(r.align_dir);
    free(r.trig_dir);
    free(r.in_vals);
    fflush(stdout);
    __atomic_store_n(&t->tid, 0, __ATOMIC_RELEASE);
    tm_net_task_exited(d->net);
    return NULL;
}

/* For unaligned.c (task_int.h). */
int tm_run_fail(run *r, const sl_op *op) { return fail(r, op); }
int tm_run_snapshot(run *r, uint64_t cpid, int64_t ts, int flags, const char *dir, uint64_t alignment_ns)
{
    return take_snapshot(r, cpid, ts, flags, dir, alignment_ns);
}
char *tm_state_file_name(const char *uid, int subtask) { return state_file_name(uid, subtask); }

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
