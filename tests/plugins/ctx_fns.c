/*
 * ctx_fns.c -- process functions that exercise every DataStream context
 * call, for tests/unit/test_dsctx.c, which hosts them in the real process
 * operators and reads what they saw from ctx_trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datastream.h"

char ctx_trace[8192];

#include <stdarg.h>

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    size_t o = strlen(ctx_trace);
    snprintf(ctx_trace + o, sizeof ctx_trace - o, "%s", o ? " " : "");
    o = strlen(ctx_trace);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx_trace + o, sizeof ctx_trace - o, fmt, ap);
    va_end(ap);
}

typedef struct st {
    sl_vstate *count, *items, *index;
} st;

static int c_open(sl_op *ctx)
{
    st *s = sl_calloc(1, sizeof *s);
    ctx->priv = s;
    s->count = sl_op_state(ctx, "count", SL_STATE_VALUE, 0);
    s->items = sl_op_state(ctx, "items", SL_STATE_LIST, 0);
    s->index = sl_op_state(ctx, "index", SL_STATE_MAP, 0);
    say("open tag=%s", sl_ds_param(ctx, "tag", "none"));
    return s->count && s->items && s->index ? SL_OK : SL_ERR;
}

static int emit2(sl_op *ctx, int64_t a, int64_t b, int64_t ts)
{
    sl_value v[2] = {{.v.i = a}, {.v.i = b}};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 2, .vals = v, .ts = ts};
    return sl_op_emit(ctx, &r);
}

/* input: k BIGINT, x BIGINT */
static int c_process(sl_op *ctx, int input, const sl_row *row)
{
    st *s = ctx->priv;
    sl_value key;
    if (sl_ds_key(ctx, &key, 1) != SL_OK) return SL_ERR;
    int64_t x = row->vals[1].v.i, n = 0;
    int64_t wm = sl_op_current_watermark(ctx);
    say("p%d k=%lld ts=%lld wm=%lld", input, (long long)key.v.i, (long long)row->ts,
        wm == INT64_MIN ? -1LL : (long long)wm);
    const void *v;
    size_t len;
    int rc = sl_value_get(s->count, NULL, 0, &v, &len);
    if (rc == SL_OK) memcpy(&n, v, sizeof n);
    n++;
    if (sl_value_put(s->count, NULL, 0, &n, sizeof n) != SL_OK) return SL_ERR;
    if (sl_list_add(s->items, NULL, 0, &x, sizeof x) != SL_OK) return SL_ERR;
    if (sl_map_put(s->index, NULL, 0, &x, sizeof x, &n, sizeof n) != SL_OK) return SL_ERR;
    if (sl_op_timer_register(ctx, SL_TIME_EVENT, row->ts + 10, NULL, 0) != SL_OK) return SL_ERR;
    int64_t far = sl_op_processing_time(ctx) + 3600000;
    if (sl_op_timer_register(ctx, SL_TIME_PROCESSING, far, NULL, 0) != SL_OK ||
        sl_op_timer_delete(ctx, SL_TIME_PROCESSING, far, NULL, 0) != SL_OK)
        return SL_ERR;
    /* x == 2: a processing-time timer already due (wall-clock ms 1) */
    if (x == 2 && sl_op_timer_register(ctx, SL_TIME_PROCESSING, 1, NULL, 0) != SL_OK) return SL_ERR;
    if (x % 2 && sl_ds_output(ctx, "odd", row) != SL_OK) return SL_ERR;
    return emit2(ctx, key.v.i, n, row->ts);
}

static int sum_items(void *arg, const void *v, size_t len)
{
    int64_t x;
    if (len == sizeof x) memcpy(&x, v, sizeof x), *(int64_t *)arg += x;
    return 0;
}

static int count_map(void *arg, const void *k, size_t klen, const void *v, size_t vlen)
{
    (void)k; (void)klen; (void)v; (void)vlen;
    ++*(int *)arg;
    return 0;
}

static int c_timer(sl_op *ctx, sl_time_domain d, int64_t time)
{
    st *s = ctx->priv;
    sl_value key;
    if (sl_ds_key(ctx, &key, 1) != SL_OK) return SL_ERR;
    int64_t sum = 0;
    int entries = 0;
    if (sl_list_each(s->items, NULL, 0, sum_items, &sum) != SL_OK) return SL_ERR;
    if (sl_map_each(s->index, NULL, 0, count_map, &entries) != SL_OK) return SL_ERR;
    say("t k=%lld @%lld d=%d map=%d", (long long)key.v.i, (long long)time, (int)d, entries);
    if (sl_state_clear(s->items, NULL, 0) != SL_OK || sl_state_clear(s->index, NULL, 0) != SL_OK)
        return SL_ERR;
    return emit2(ctx, key.v.i, 1000 + sum, time);
}

static void c_close(sl_op *ctx)
{
    free(ctx->priv);
    ctx->priv = NULL;
}

const sl_process_fn ctx_fn = {
    .abi = SL_DS_ABI_VERSION, .open = c_open, .process_element = c_process, .on_timer = c_timer,
    .close = c_close,
};

/* broadcast: input 0 (k, x) data, input 1 (k, x) rules: k -> x */
static int b_open(sl_op *ctx)
{
    ctx->priv = sl_ds_broadcast_state(ctx, "rules");
    return ctx->priv ? SL_OK : SL_ERR;
}

static int b_rule(sl_op *ctx, const sl_row *row)
{
    int64_t k = row->vals[0].v.i, x = row->vals[1].v.i;
    sl_value key;
    int kr = sl_ds_key(ctx, &key, 1);
    say("rule k=%lld key=%d timer=%d", (long long)k, kr, sl_op_timer_register(ctx, SL_TIME_EVENT, 5, NULL, 0));
    ctx->err[0] = 0;
    if (x < 0) return sl_bstate_remove(ctx->priv, &k, sizeof k);
    return sl_bstate_put(ctx->priv, &k, sizeof k, &x, sizeof x);
}

static int b_list(void *arg, const void *k, size_t klen, const void *v, size_t vlen)
{
    int64_t a, b;
    (void)arg;
    if (klen != 8 || vlen != 8) return 1;
    memcpy(&a, k, 8);
    memcpy(&b, v, 8);
    say("%lld=%lld", (long long)a, (long long)b);
    return 0;
}

static int b_data(sl_op *ctx, const sl_row *row)
{
    int64_t k = row->vals[0].v.i, x = -1;
    const void *v;
    size_t len;
    if (sl_bstate_get(ctx->priv, &k, sizeof k, &v, &len) == SL_OK) memcpy(&x, v, sizeof x);
    int put = sl_bstate_put(ctx->priv, &k, sizeof k, &k, sizeof k);
    say("data k=%lld rule=%lld put=%d err=%s", (long long)k, (long long)x, put, ctx->err);
    ctx->err[0] = 0;
    return sl_bstate_each(ctx->priv, b_list, NULL);
}

const sl_process_fn bc_fn = {
    .abi = SL_DS_ABI_VERSION, .open = b_open, .process_element1 = b_data,
    .process_broadcast_element = b_rule,
};

/* ---- async: requests are only recorded; the test completes them from a
 * thread of its own with ctx_async_finish ---------------------------------- */

#include <pthread.h>

typedef struct pending_req {
    sl_async_req req;
    int64_t x;
} pending_req;

pending_req ctx_async_pending[64];
int ctx_async_n;
int ctx_async_fail_first; /* fail a request's first attempt */

static int a_invoke(sl_op *ctx, sl_async_req req, const sl_row *row)
{
    (void)ctx;
    if (ctx_async_n == 64) return SL_ERR;
    say("ask %lld", (long long)row->vals[0].v.i);
    ctx_async_pending[ctx_async_n++] = (pending_req){req, row->vals[0].v.i};
    return SL_OK;
}

static int a_timeout(sl_op *ctx, sl_async_req req, const sl_row *row)
{
    (void)ctx;
    sl_value v[2] = {{.v.i = row->vals[0].v.i}, {.v.i = -1}};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 2, .vals = v};
    return sl_async_complete(req, &r, 1) == SL_OK ? SL_OK : SL_ERR;
}

const sl_async_fn async_fn = {.abi = SL_DS_ABI_VERSION, .async_invoke = a_invoke, .timeout = a_timeout};

typedef struct finish_arg {
    int order[64];
    int n;
    int rc[64];
} finish_arg;

static void *finish_main(void *p)
{
    finish_arg *f = p;
    for (int i = 0; i < f->n; i++) {
        pending_req *q = &ctx_async_pending[f->order[i]];
        if (ctx_async_fail_first && q->x % 2 == 0) {
            f->rc[i] = sl_async_fail(q->req, "even, first time");
            continue;
        }
        sl_value v[2] = {{.v.i = q->x}, {.v.i = q->x * 10}};
        sl_row r = {.kind = SL_KIND_INSERT, .n = 2, .vals = v};
        f->rc[i] = sl_async_complete(q->req, &r, 1);
    }
    return NULL;
}

/* Complete the recorded requests order[0..n) from a new thread (joined);
 * rc[i] is what each completion returned. */
void ctx_async_finish(const int *order, int n, int *rc);
void ctx_async_finish(const int *order, int n, int *rc)
{
    finish_arg f = {.n = n};
    memcpy(f.order, order, (size_t)n * sizeof *order);
    pthread_t t;
    if (pthread_create(&t, NULL, finish_main, &f) != 0) return;
    pthread_join(t, NULL);
    memcpy(rc, f.rc, (size_t)n * sizeof *rc);
}

/* ---- timestamp assigner, key selector, flat map (test_dsctx.c) ---------------------- */

/* event time: x seconds, plus the record's own timestamp in ms */
static int64_t ts_of(const sl_row *row, int64_t record_ts)
{
    return row->vals[1].v.i * 1000 + record_ts;
}
const sl_timestamp_assigner ts_fn = {.abi = SL_DS_ABI_VERSION, .extract_timestamp = ts_of};

/* key: ("even" | "odd", k / 10) of a row (k, x) */
static int key_of(const sl_row *row, sl_value *key)
{
    int64_t k = row->vals[0].v.i;
    if (k < 0) return SL_ERR;
    const char *parity = k % 2 ? "odd" : "even";
    key[0].v.s.p = parity;
    key[0].v.s.len = strlen(parity);
    key[1].v.i = k / 10;
    return SL_OK;
}
const sl_key_selector key_fn = {.abi = SL_DS_ABI_VERSION, .get_key = key_of};

/* flatMap: (k, x) -> x rows (k, 0), (k, 1), ... */
static int flat(sl_op *ctx, int input, const sl_row *row)
{
    (void)input;
    for (int64_t i = 0; i < row->vals[1].v.i; i++) {
        sl_value v[2] = {row->vals[0], {.v.i = i}};
        sl_row r = {.kind = SL_KIND_INSERT, .n = 2, .vals = v, .ts = row->ts};
        if (sl_op_emit(ctx, &r) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}
const sl_process_fn flat_fn = {.abi = SL_DS_ABI_VERSION, .process_element = flat};
