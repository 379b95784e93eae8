/*
 * enrich.c -- EnrichAndCorrelate: orders and payments joined by order id
 * through connect() and a KeyedCoProcessFunction.
 *
 * Build and run (a local cluster, e.g. from `make run`, must be up):
 *     make examples
 *     build/bin/sluice run build/examples/enrich.so /tmp/enrich-out 2000 2000
 * (output directory, number of orders, rows per second of each source). It
 * writes matches/ (a payment enriched with its order's customer) and
 * unmatched/ (every order and payment that found no partner) under the
 * directory given.
 *
 * Whoever comes first waits in state: an order waits for its payment until
 * order + TIMEOUT_MS of event time (an event timer), a payment waits for
 * its order until the watermark passes the payment's own time (after that
 * no order old enough to match it can arrive without being late). A match
 * needs order <= payment <= order + TIMEOUT_MS; a payment outside that
 * window is unmatched at once, whoever came first. Since both arrival
 * orders lead to the same result, the output depends on event times only,
 * not on how the two inputs interleave (or how a restore re-splits them).
 *
 * The generator (ids 1..N, an order every second of event time) shows the
 * cases: ids ending in 7 have no payment (the order times out), ids ending
 * in 3 are paid 100 s after the order (out of window: both unmatched), ids
 * ending in 5 are "paid" 2 s before the order (both unmatched), ids ending
 * in 9 exactly TIMEOUT_MS after (the edge of the window: a match), the rest
 * 0..49 s after; payments for N+1..N+5 have no order at all.
 */
#include <stdlib.h>
#include <string.h>

#include "datastream.h"

#define TIMEOUT_MS 60000

typedef struct pending {
    int64_t ts;                 /* event time of the waiting element */
    int64_t attr;               /* order: customer; payment: amount */
} pending;

typedef struct correlator {
    sl_vstate *order;           /* ValueState<pending>: an order waiting */
    sl_vstate *payment;         /* ValueState<pending>: a payment waiting */
} correlator;

static int co_open(sl_op *ctx)
{
    correlator *c = sl_calloc(1, sizeof *c);
    ctx->priv = c;
    c->order = sl_op_state(ctx, "order", SL_STATE_VALUE, 0);
    c->payment = sl_op_state(ctx, "payment", SL_STATE_VALUE, 0);
    return c->order && c->payment ? SL_OK : SL_ERR;
}

/* SL_OK with *p, SL_DONE when nothing waits, SL_ERR. */
static int get_pending(sl_vstate *s, pending *p)
{
    const void *v;
    size_t len;
    int rc = sl_value_get(s, NULL, 0, &v, &len);
    if (rc == SL_OK && len == sizeof *p) memcpy(p, v, sizeof *p);
    return rc;
}

static int key_of(sl_op *ctx, int64_t *id)
{
    sl_value k;
    if (sl_ds_key(ctx, &k, 1) != SL_OK) return SL_ERR;
    *id = k.v.i;
    return SL_OK;
}

static int emit_match(sl_op *ctx, const pending *order, const pending *pay)
{
    int64_t id;
    if (key_of(ctx, &id) != SL_OK) return SL_ERR;
    sl_value out[5] = {{.v.i = id}, {.v.i = order->attr}, {.v.i = pay->attr}, {.v.i = order->ts},
                       {.v.i = pay->ts}};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 5, .vals = out, .ts = pay->ts};
    return sl_op_emit(ctx, &r);
}

static int emit_unmatched(sl_op *ctx, const char *side, int64_t ts)
{
    int64_t id;
    if (key_of(ctx, &id) != SL_OK) return SL_ERR;
    sl_value out[3] = {{.v.i = id}, {.v.s = {side, (uint32_t)strlen(side)}}, {.v.i = ts}};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 3, .vals = out, .ts = ts};
    return sl_ds_output(ctx, "unmatched", &r);
}

static int in_window(const pending *order, const pending *pay)
{
    return order->ts <= pay->ts && pay->ts <= order->ts + TIMEOUT_MS;
}

static int wait_in(sl_op *ctx, sl_vstate *s, const pending *p, int64_t deadline)
{
    if (sl_value_put(s, NULL, 0, p, sizeof *p) != SL_OK) return SL_ERR;
    return sl_op_timer_register(ctx, SL_TIME_EVENT, deadline, NULL, 0);
}

/* orders: order_id, customer, ts */
static int on_order(sl_op *ctx, const sl_row *row)
{
    correlator *c = ctx->priv;
    pending o = {row->vals[2].v.i, row->vals[1].v.i}, p;
    int rc = get_pending(c->payment, &p);
    if (rc == SL_ERR) return rc;
    if (rc == SL_OK) {
        sl_op_timer_delete(ctx, SL_TIME_EVENT, p.ts, NULL, 0);
        if (sl_state_clear(c->payment, NULL, 0) != SL_OK) return SL_ERR;
        if (in_window(&o, &p)) return emit_match(ctx, &o, &p);
        if (emit_unmatched(ctx, "payment", p.ts) != SL_OK) return SL_ERR;
    }
    return wait_in(ctx, c->order, &o, o.ts + TIMEOUT_MS);
}

/* payments: order_id, amount, ts */
static int on_payment(sl_op *ctx, const sl_row *row)
{
    correlator *c = ctx->priv;
    pending p = {row->vals[2].v.i, row->vals[1].v.i}, o;
    int rc = get_pending(c->order, &o);
    if (rc == SL_ERR) return rc;
    if (rc == SL_OK && in_window(&o, &p)) {
        sl_op_timer_delete(ctx, SL_TIME_EVENT, o.ts + TIMEOUT_MS, NULL, 0);
        if (sl_state_clear(c->order, NULL, 0) != SL_OK) return SL_ERR;
        return emit_match(ctx, &o, &p);
    }
    /* outside its order's window: the order keeps waiting for its timer */
    if (rc == SL_OK) return emit_unmatched(ctx, "payment", p.ts);
    return wait_in(ctx, c->payment, &p, p.ts);
}

/* Only the deadline of what waits now counts: a timer deleted too late or
 * one of an element already matched finds nothing (null-safe). */
static int co_timer(sl_op *ctx, sl_time_domain domain, int64_t time)
{
    correlator *c = ctx->priv;
    pending x;
    int rc = get_pending(c->order, &x);
    if (rc == SL_ERR) return rc;
    if (rc == SL_OK && time == x.ts + TIMEOUT_MS) {
        if (sl_state_clear(c->order, NULL, 0) != SL_OK) return SL_ERR;
        return emit_unmatched(ctx, "order", x.ts);
    }
    rc = get_pending(c->payment, &x);
    if (rc == SL_ERR) return rc;
    if (rc == SL_OK && time == x.ts) {
        if (sl_state_clear(c->payment, NULL, 0) != SL_OK) return SL_ERR;
        return emit_unmatched(ctx, "payment", x.ts);
    }
    return SL_OK;
}

static void co_close(sl_op *ctx)
{
    free(ctx->priv);
    ctx->priv = NULL;
}

const sl_process_fn enrich_and_correlate = {
    .abi = SL_DS_ABI_VERSION,
    .open = co_open,
    .process_element1 = on_order,
    .process_element2 = on_payment,
    .on_timer = co_timer,
    .close = co_close,
};

static char *sub(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

#define BASE_MS "1767225600000" /* 2026-01-01T00:00:00Z */

int sluice_job_main(sl_ds_env *env, int argc, char **argv);
int sluice_job_main(sl_ds_env *env, int argc, char **argv)
{
    const char *out = argc > 0 ? argv[0] : "/tmp/enrich-out";
    long n = argc > 1 ? atol(argv[1]) : 2000;
    const char *rate = argc > 2 ? argv[2] : "2000";
    char last_order[32], last_payment[32];
    snprintf(last_order, sizeof last_order, "%ld", n);
    snprintf(last_payment, sizeof last_payment, "%ld", n + 5);
    sl_ds_set_parallelism(env, 2);

    const char *oopt[] = {"rows-per-second", rate, "fields.id.kind", "sequence", "fields.id.start", "1",
                          "fields.id.end", last_order, NULL};
    /* each source runs as one subtask (its chain too): a restore at another
     * parallelism re-splits the correlator, not the sequences */
    sl_ds_stream *o = sl_ds_source(env, "order_gen", "datagen", "id BIGINT", oopt);
    sl_ds_uid(o, "order-gen");
    sl_ds_parallelism(o, 1);
    const char *oproj[] = {"id AS order_id", "id % 17 AS customer",
                           "TO_TIMESTAMP_LTZ(" BASE_MS " + id * 1000, 3) AS ts", NULL};
    o = sl_ds_map(o, "orders", oproj);
    sl_ds_parallelism(o, 1);
    o = sl_ds_watermarks(o, "orders_wm", "ts", "0 ms", NULL);
    sl_ds_parallelism(o, 1);

    const char *popt[] = {"rows-per-second", rate, "fields.id.kind", "sequence", "fields.id.start", "1",
                          "fields.id.end", last_payment, NULL};
    sl_ds_stream *p = sl_ds_source(env, "payment_gen", "datagen", "id BIGINT", popt);
    sl_ds_uid(p, "payment-gen");
    sl_ds_parallelism(p, 1);
    p = sl_ds_filter(p, "paid", "id % 10 <> 7");
    sl_ds_parallelism(p, 1);
    const char *pproj[] = {"id AS order_id", "id * 7 % 1000 AS amount",
                           "TO_TIMESTAMP_LTZ(" BASE_MS " + id * 1000 + CASE"
                           " WHEN id % 10 = 3 THEN 100000 WHEN id % 10 = 5 THEN -2000"
                           " WHEN id % 10 = 9 THEN 60000 ELSE id * 7919 % 50 * 1000 END, 3) AS ts",
                           NULL};
    p = sl_ds_map(p, "payments", pproj);
    sl_ds_parallelism(p, 1);
    /* payments run up to 102 s out of order (2 s early .. 100 s late) */
    p = sl_ds_watermarks(p, "payments_wm", "ts", "2 min", NULL);
    sl_ds_parallelism(p, 1);

    const char *keys[] = {"order_id", NULL};
    const char *sides[] = {"unmatched", "order_id BIGINT, side STRING, ts TIMESTAMP(3)", NULL};
    sl_ds_stream *m = sl_ds_process(sl_ds_connect(sl_ds_key_by(o, keys), sl_ds_key_by(p, keys)),
                                    "correlate", "enrich_and_correlate",
                                    "order_id BIGINT, customer BIGINT, amount BIGINT, "
                                    "order_ts TIMESTAMP(3), pay_ts TIMESTAMP(3)",
                                    sides);
    sl_ds_uid(m, "enrich-and-correlate");
    char *mp = sub(out, "matches"), *up = sub(out, "unmatched");
    const char *mopt[] = {"path", mp, "format", "json", NULL};
    const char *uopt[] = {"path", up, "format", "json", NULL};
    sl_ds_sink(m, "matches", "file", mopt);
    sl_ds_sink(sl_ds_side_output(m, "unmatched"), "unmatched", "file", uopt);
    free(mp);
    free(up);
    return 0;
}
