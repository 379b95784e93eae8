/*
 * runtime.c -- the runtime's side of the operator contract (runtime.h).
 *
 * Per operator the runtime keeps a small rt_data: the declared key columns
 * of each input (from the vertex's plan), one key buffer the current key is
 * encoded into, which inputs have ended, the state handles to free and the
 * deferred snapshot work. Keys are encoded with sl_row_key_encode -- the
 * bytes the hash exchange hashed upstream -- so the key group computed here
 * is the one that routed the row, and a row that reaches the wrong subtask
 * (an input not hashed on the key) fails the task instead of corrupting
 * state. Nothing here allocates per record.
 */
#include <poll.h>
#include <string.h>

#include "runtime.h"
#include "log.h"
#include "keygroup.h"
#include "vstate.h"

typedef struct rt_data {
    uint8_t *keybuf;            /* the current key, encoded */
    int nkeys[SL_MAX_INPUTS];
    const int *keys[SL_MAX_INPUTS];
    unsigned char ended[SL_MAX_INPUTS];
    unsigned char idle[SL_MAX_INPUTS];   /* every channel of the input is idle */
    int any_keyed;              /* some input declares key columns */
    sl_vstate *states;          /* handles made by sl_op_state */
    sl_deferred *deferred, **deferred_tail;
    const sl_rt_host *host;     /* sl_rt_set_host, or NULL */
    void *host_ctx;
    int host_pos;               /* the operator's position in its chain */
    int closed;
} rt_data;

void sl_rt_init(sl_op *op, const sl_vertex *v, int subtask, int max_parallelism)
{
    rt_data *rt = sl_calloc(1, sizeof *rt);
    if (v->def->flags & SL_OPF_KEYED) rt->keybuf = sl_malloc(SL_MAX_KEY_BYTES); /* keyed only */
    rt->deferred_tail = &rt->deferred;
    op->rt = rt;
    op->def = v->def;
    op->vertex = v;
    op->plan = v->plan;
    op->subtask = subtask;
    op->parallelism = v->parallelism;
    op->max_parallelism = max_parallelism;
    op->nin = v->ninputs;
    for (int i = 0; i < v->ninputs; i++) {
        op->ins[i] = &v->in[i];
        rt->nkeys[i] = v->pc ? v->pc->nkeys[i] : 0;
        rt->keys[i] = v->pc ? v->pc->keys[i] : NULL;
        if (rt->nkeys[i]) rt->any_keyed = 1;
    }
    op->in = v->ninputs ? &v->in[0] : NULL;
    op->out = (v->def->flags & SL_OPF_SINK) ? NULL : &v->out;
    op->nout = v->pc ? v->pc->nout : 1;
    op->out_names[0] = "";
    for (int o = 1; o < op->nout; o++) op->out_names[o] = v->pc->outputs[o].name;
    sl_kg_range(subtask, v->parallelism, max_parallelism, &op->kg_first, &op->kg_last);
    op->proc_time_at = INT64_MAX;
    op->current_watermark = INT64_MIN;
    for (int i = 0; i < SL_MAX_INPUTS; i++) op->input_wm[i] = INT64_MIN;
    op->out_stream = stdout;
    sl_arena_init(&op->scratch, 1u << 20);
}

int sl_rt_open(sl_op *op, sl_backend_kind bk, const char *dir)
{
    if (op->def->flags & SL_OPF_KEYED) {
        op->kstate = sl_kstate_open(bk, dir, op->max_parallelism, op->kg_first, op->kg_last, op->err,
                                    sizeof op->err);
        if (!op->kstate) return SL_ERR;
        op->event_timers = sl_timers_new();
        op->proc_timers = sl_timers_new();
    }
    return op->def->open ? op->def->open(op) : SL_OK;
}

/* Make key (encoded, klen bytes, group kg) the current key. */
static void set_key(sl_op *op, const void *key, size_t klen, int kg)
{
    op->key = key;
    op->klen = klen;
    op->kg = kg;
    if (op->kstate) sl_kstate_set_key(op->kstate, key, klen, kg);
}

int sl_rt_process(sl_op *op, int input, sl_row *row)
{
    rt_data *rt = op->rt;
    if (input < 0 || input >= SL_MAX_INPUTS) input = 0;
    if (op->kstate && !rt->nkeys[input] && rt->any_keyed) {
        /* the unkeyed input of a keyed operator (a broadcast side): no
         * current key; keyed state calls fail, timers are refused */
        set_key(op, NULL, 0, -1);
    } else if (op->kstate) {
        /* no key columns: every row has the empty key */
        size_t n = rt->nkeys[input] ? sl_row_key_encode(row, op->ins[input], rt->keys[input],
                                                        rt->nkeys[input], rt->keybuf,
                                                        SL_MAX_KEY_BYTES)
                                    : 0;
        if (n == 0 && rt->nkeys[input])
            return sl_op_fail(op, "%s: a key of more than %u bytes (the limit for keys)", op->task_name,
                              SL_MAX_KEY_BYTES);
        int kg = sl_kg_of_key(rt->keybuf, n, op->max_parallelism);
        if (kg < op->kg_first || kg > op->kg_last)
            return sl_op_fail(op,
                              "%s: a row of key group %d reached the subtask owning key groups %d-%d "
                              "(input %d is not partitioned by its key)",
                              op->task_name, kg, op->kg_first, op->kg_last, input);
        set_key(op, rt->keybuf, n, kg);
    }
    op->metrics.records_in++;
    sl_arena_reset(&op->scratch);
    return op->def->process(op, input, row);
}

typedef struct fire_ctx {
    sl_op *op;
    sl_time_domain domain;
} fire_ctx;

static int fire_one(void *ctx, const sl_timer *tm)
{
    fire_ctx *fc = ctx;
    sl_op *op = fc->op;
    set_key(op, tm->key, tm->klen, tm->kg);
    sl_arena_reset(&op->scratch);
    return op->def->on_timer(op, fc->domain, tm->time, tm->ns, tm->nslen);
}

/* The combined watermark moved to wm: event timers up to it fire. */
static int fire_event_timers(sl_op *op, int64_t wm)
{
    if (!op->event_timers || !op->def->on_timer) return SL_OK;
    fire_ctx fc = {op, SL_TIME_EVENT};
    return sl_timers_fire(op->event_timers, wm, fire_one, &fc);
}

static int64_t combined_watermark(const sl_op *op)
{
    const rt_data *rt = op->rt;
    if (op->nin == 0) return op->input_wm[0];
    int64_t m = INT64_MAX;
    int open = 0, speaking = 0;
    for (int i = 0; i < op->nin; i++) {
        if (rt->ended[i]) continue;
        open++;
        if (rt->idle[i]) continue;
        speaking++;
        if (op->input_wm[i] < m) m = op->input_wm[i];
    }
    /* every open input idle: nobody says anything about time */
    if (open && !speaking) return op->current_watermark;
    return m;
}

static int advance(sl_op *op, int input, int64_t wm, int call_op)
{
    if (wm > op->input_wm[input]) op->input_wm[input] = wm;
    int64_t comb = combined_watermark(op);
    int advanced = comb > op->current_watermark;
    int rc = SL_OK;
    if (advanced) {
        op->current_watermark = comb;
        rc = fire_event_timers(op, comb);
    }
    if (rc != SL_OK) return rc;
    sl_arena_reset(&op->scratch);
    if (op->def->watermark) return call_op ? op->def->watermark(op, input, wm) : SL_OK;
    return advanced ? sl_op_emit_watermark(op, comb) : SL_OK;
}

int sl_rt_watermark(sl_op *op, int input, int64_t wm)
{
    if (input < 0 || input >= SL_MAX_INPUTS) input = 0;
    if (wm <= op->input_wm[input]) return SL_OK;
    return advance(op, input, wm, 1);
}

int sl_rt_input_idle(sl_op *op, int input, int idle)
{
    rt_data *rt = op->rt;
    if (input < 0 || input >= SL_MAX_INPUTS || rt->idle[input] == !!idle) return SL_OK;
    rt->idle[input] = !!idle;
    return advance(op, input, op->input_wm[input], 0);
}

int sl_rt_end_input(sl_op *op, int input)
{
    rt_data *rt = op->rt;
    if (input < 0 || input >= SL_MAX_INPUTS || rt->ended[input]) return SL_OK;
    int rc;
    if (op->inputs_ended + 1 >= op->nin) {
        /* the last input: the maximum watermark first, so every timer fires */
        rc = op->input_wm[input] < INT64_MAX ? advance(op, input, INT64_MAX, 1) : SL_OK;
        rt->ended[input] = 1;
    } else {
        /* an ended input no longer holds the others back */
        rt->ended[input] = 1;
        rc = advance(op, input, op->input_wm[input], 0);
    }
    op->inputs_ended++;
    if (rc == SL_OK && op->def->end_input) {
        sl_arena_reset(&op->scratch);
        rc = op->def->end_input(op, input);
    }
    return rc;
}

int sl_rt_end_all(sl_op *op)
{
    if (op->nin == 0) {
        rt_data *rt = op->rt;
        if (rt->ended[0]) return SL_OK;
        rt->ended[0] = 1;
        return advance(op, 0, INT64_MAX, 1);
    }
    for (int i = 0; i < op->nin; i++)
        if (sl_rt_end_input(op, i) != SL_OK) return SL_ERR;
    return SL_OK;
}

int64_t sl_rt_next_proc(const sl_op *op)
{
    int64_t at = op->def->proc_time ? op->proc_time_at : INT64_MAX;
    if (op->proc_timers && op->def->on_timer) {
        int64_t t = sl_timers_next(op->proc_timers);
        if (t < at) at = t;
    }
    return at;
}

int sl_rt_fire_proc(sl_op *op, int64_t now_ms)
{
    if (op->proc_timers && op->def->on_timer && sl_timers_next(op->proc_timers) <= now_ms) {
        fire_ctx fc = {op, SL_TIME_PROCESSING};
        if (sl_timers_fire(op->proc_timers, now_ms, fire_one, &fc) != SL_OK) return SL_ERR;
    }
    if (op->def->proc_time && op->proc_time_at <= now_ms) {
        sl_arena_reset(&op->scratch);
        return op->def->proc_time(op, now_ms);
    }
    return SL_OK;
}

int sl_rt_ready(sl_op *op)
{
    if (!op->def->ready || !op->nwatch) return SL_OK;
    sl_arena_reset(&op->scratch);
    return op->def->ready(op);
}

sl_deferred *sl_rt_take_deferred(sl_op *op)
{
    rt_data *rt = op->rt;
    sl_deferred *d = rt->deferred;
    rt->deferred = NULL;
    rt->deferred_tail = &rt->deferred;
    return d;
}

int sl_rt_run_deferred(sl_deferred *d, char *err, size_t errlen)
{
    int rc = SL_OK;
    while (d) {
        sl_deferred *next = d->next;
        char e[400] = "";
        if (d->fn(d->arg, e, sizeof e) != SL_OK && rc == SL_OK)
            rc = sl_seterr(err, errlen, "%s", e[0] ? e : "asynchronous snapshot part failed");
        free(d);
        d = next;
    }
    return rc;
}

void sl_rt_close(sl_op *op)
{
    rt_data *rt = op->rt;
    if (!rt || rt->closed) return;
    rt->closed = 1;
    if (op->def->close) op->def->close(op);
    sl_vstate_free_all(rt->states);
    rt->states = NULL;
    /* deferred work never handed to a snapshot: run it so it frees its arg */
    char err[8];
    sl_rt_run_deferred(sl_rt_take_deferred(op), err, sizeof err);
    sl_kstate_close(op->kstate);
    op->kstate = NULL;
    sl_timers_destroy(op->event_timers);
    sl_timers_destroy(op->proc_timers);
    op->event_timers = op->proc_timers = NULL;
    free(rt->keybuf);
    sl_arena_free(&op->scratch);
    free(rt);
    op->rt = NULL;
}

/* ---- the operator-facing services (operator.h) ------------------------------ */

int sl_op_output(const sl_op *op, const char *name)
{
    if (!name) return -1;
    for (int o = 0; o < op->nout; o++)
        if (!strcmp(op->out_names[o] ? op->out_names[o] : "", name)) return o;
    return -1;
}

int sl_op_timer_register(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen)
{
    sl_timers *t = d == SL_TIME_EVENT ? op->event_timers : op->proc_timers;
    if (!t) return sl_op_fail(op, "%s: timers need a keyed operator", op->task_name);
    if (op->kg < 0) return sl_op_fail(op, "%s: no current key here (the broadcast side): no timers", op->task_name);
    sl_timer tm = {time, op->kg, op->key, op->klen, ns, nslen};
    sl_timers_add(t, &tm);
    return SL_OK;
}

int sl_op_timer_delete(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen)
{
    sl_timers *t = d == SL_TIME_EVENT ? op->event_timers : op->proc_timers;
    if (!t) return SL_OK;
    sl_timer tm = {time, op->kg, op->key, op->klen, ns, nslen};
    sl_timers_del(t, &tm);
    return SL_OK;
}

int64_t sl_op_processing_time(const sl_op *op)
{
    SL_UNUSED(op);
    return sl_now_ms();
}

sl_vstate *sl_op_state(sl_op *op, const char *name, sl_state_kind kind, int64_t ttl_ms)
{
    sl_state_ttl ttl = {.ttl_ms = ttl_ms};
    return sl_op_state_ttl(op, name, kind, &ttl);
}

sl_vstate *sl_op_state_ttl(sl_op *op, const char *name, sl_state_kind kind, const sl_state_ttl *ttl)
{
    rt_data *rt = op->rt;
    if (!op->kstate) {
        sl_op_fail(op, "%s: state '%s' needs a keyed operator", op->task_name, name);
        return NULL;
    }
    sl_state_ttl none = {0};
    sl_vstate *s = sl_vstate_new_ttl(op->kstate, name, kind, ttl ? ttl : &none, op->err,
                                     sizeof op->err);
    if (s) sl_vstate_link(&rt->states, s);
    return s;
}

int sl_op_watch_fd(sl_op *op, int fd, short events)
{
    if (fd < 0) return sl_op_fail(op, "%s: cannot watch descriptor %d", op->task_name, fd);
    for (int i = 0; i < op->nwatch; i++)
        if (op->watch_fd[i] == fd) {
            op->watch_events[i] = events;
            return SL_OK;
        }
    if (op->nwatch >= SL_MAX_WATCH_FDS)
        return sl_op_fail(op, "%s: at most %d watched descriptors", op->task_name, SL_MAX_WATCH_FDS);
    op->watch_fd[op->nwatch] = fd;
    op->watch_events[op->nwatch++] = events;
    return SL_OK;
}

void sl_op_unwatch_fd(sl_op *op, int fd)
{
    for (int i = 0; i < op->nwatch; i++)
        if (op->watch_fd[i] == fd) {
            op->watch_fd[i] = op->watch_fd[op->nwatch - 1];
            op->watch_events[i] = op->watch_events[op->nwatch - 1];
            op->nwatch--;
            return;
        }
}

void sl_rt_set_host(sl_op *op, const sl_rt_host *host, void *ctx, int pos)
{
    rt_data *rt = op->rt;
    rt->host = host;
    rt->host_ctx = ctx;
    rt->host_pos = pos;
}

void sl_op_arm_restored_proc_timers(sl_op *op)
{
    size_t ntimers = op->proc_timers ? sl_timers_count(op->proc_timers) : 0;
    op->proc_time_at = ntimers ? sl_timers_next(op->proc_timers) : INT64_MAX;
}

int sl_op_restore_proc_timers(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    SL_UNUSED(blobs);
    SL_UNUSED(lens);
    SL_UNUSED(nblobs);
    sl_op_arm_restored_proc_timers(op);
    return SL_OK;
}

void sl_op_set_info(sl_op *op, const char *json)
{
    rt_data *rt = op->rt;
    if (!rt || !rt->host || !rt->host->set_info) return;
    if (json && strlen(json) >= SL_OP_INFO_MAX) {
        sl_warn("runtime", "%s: published info of %zu bytes exceeds %d; dropped", op->task_name,
                strlen(json), SL_OP_INFO_MAX);
        return;
    }
    rt->host->set_info(rt->host_ctx, rt->host_pos, json);
}

int sl_op_collect_send(sl_op *op, const char *rows, size_t len, int nrows, uint64_t offset,
                       int end, char *err, size_t errlen)
{
    rt_data *rt = op->rt;
    if (!rt || !rt->host || !rt->host->collect_send)
        return sl_seterr(err, errlen, "the collect sink runs only in a TaskManager's task");
    return rt->host->collect_send(rt->host_ctx, rows, len, nrows, offset, end, err, errlen);
}

int sl_op_collect_credit_now(sl_op *op)
{
    rt_data *rt = op->rt;
    if (!rt || !rt->host || !rt->host->collect_credit_now) return 0;
    return rt->host->collect_credit_now(rt->host_ctx);
}

int sl_op_collect_credit_fd(sl_op *op)
{
    rt_data *rt = op->rt;
    if (!rt || !rt->host || !rt->host->collect_credit_fd) return -1;
    return rt->host->collect_credit_fd(rt->host_ctx);
}

int sl_op_defer(sl_op *op, sl_defer_fn fn, void *arg)
{
    rt_data *rt = op->rt;
    if (!rt) /* not hosted (a unit test calling hooks directly): now */
        return fn(arg, op->err, sizeof op->err);
    sl_deferred *d = sl_calloc(1, sizeof *d);
    d->fn = fn;
    d->arg = arg;
    *rt->deferred_tail = d;
    rt->deferred_tail = &d->next;
    return SL_OK;
}
