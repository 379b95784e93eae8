/*
 * dedup_rowtime.c -- the `rowtime_deduplicate` operator: Flink 2.x's
 * event-time keep-first deduplication,
 *
 *     SELECT ... FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k
 *         ORDER BY rowtime ASC) AS rn FROM t) WHERE rn = 1
 *
 * which the SQL planner (sql/plan_rank.c) plans here. Output is
 * insert-only: each key's row with the smallest rowtime goes out once, as
 * +I, when the watermark passes that rowtime, so an append-only sink takes
 * it.
 *
 * Config:
 *   "key":          ["user_id"]   key columns (the input is hashed on them)
 *   "time-column":  "ts"          the rowtime attribute (TIMESTAMP)
 *   "state.ttl" / "table.exec.state.ttl": idle-state retention (0 or
 *                   absent: forever; the state is then one marker per key)
 *
 * Per row (keyed by the key columns):
 *   rowtime <= current watermark: late -- dropped and counted in
 *     numLateRecordsDropped, as Flink drops rows behind the watermark;
 *   the key already emitted its row: dropped (that row's rowtime is behind
 *     the watermark, so every later row is later in event time);
 *   no pending row, or this one is earlier than the pending one: it becomes
 *     the pending row and an event-time timer at its rowtime is registered
 *     (the previous pending row's timer is deleted); a tie keeps the row
 *     that arrived first.
 * The timer fires when the watermark reaches the rowtime: the pending row
 * goes out as +I and the state shrinks to the marker.
 *
 * State "first" per key: u8 status (1 pending, 2 emitted), i64 rowtime,
 * i64 last update (processing time), i64 TTL timer time, then for a pending
 * row its encoding (sl_row_encode of the input schema). Keyed state and
 * timers are the runtime's, so both backends snapshot and restore them by
 * key group and a restore at another parallelism moves them with the keys.
 * With a TTL a processing-time timer at last update + TTL forgets an idle
 * emitted key (a pending key always fires first: the watermark reaches it).
 *
 * No allocation per record once the state buffer has grown to the largest
 * row seen.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "jobgraph.h"
#include "operator.h"

#define RD_HDR 25              /* u8 status, i64 rowtime, i64 last update, i64 TTL timer */
#define RD_PENDING 1
#define RD_EMITTED 2

static const uint8_t rd_no_ns[1];

typedef struct rd_plan {
    char *vid;
    int nkeys;
    int keys[SL_MAX_KEY_COLS];
    int tcol;              /* the rowtime column */
    int64_t ttl_ms;        /* 0: no TTL */
} rd_plan;

typedef struct rd_state {
    int sid;
    uint8_t *buf;          /* the state value being written; grows only */
    size_t cap;
    sl_value *vals;        /* a decoded pending row */
} rd_state;

static inline int64_t rd_add_sat(int64_t a, int64_t b) /* b >= 0 */
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static uint8_t *rd_room(rd_state *st, size_t n)
{
    if (n > st->cap) {
        size_t c = st->cap ? st->cap : 256;
        while (c < n) c *= 2;
        st->buf = sl_realloc(st->buf, c);
        st->cap = c;
    }
    return st->buf;
}

static void rd_plan_free(void *p)
{
    rd_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl);
}

static void *rd_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    rd_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    json_t *j = sl_vconf_array(v, "key");
    size_t cnt = !j ? 0 : json_is_string(j) ? 1 : json_array_size(j);
    if (cnt < 1 || cnt > SL_MAX_KEY_COLS) {
        sl_seterr(err, errlen, "vertex '%s': option 'key' must list 1 to %d key columns", pl->vid,
                  SL_MAX_KEY_COLS);
        goto fail;
    }
    for (size_t i = 0; i < cnt; i++) {
        json_t *ji = json_is_string(j) ? j : json_array_get(j, i);
        int c = json_is_string(ji) ? sl_schema_find(in, json_string_value(ji)) : -1;
        if (c < 0) {
            sl_seterr(err, errlen, "vertex '%s': key item %zu is not a column of the input",
                      pl->vid, i + 1);
            goto fail;
        }
        pl->keys[pl->nkeys++] = c;
    }
    const char *tc = sl_vconf_str(v, "time-column", NULL);
    pl->tcol = tc ? sl_schema_find(in, tc) : -1;
    if (pl->tcol < 0 || in->fields[pl->tcol].type != SL_T_TIMESTAMP) {
        sl_seterr(err, errlen, "vertex '%s': option 'time-column' must name a TIMESTAMP column "
                  "of the input (the rowtime attribute)", pl->vid);
        goto fail;
    }
    json_t *jt = json_object_get(v->config, "state.ttl");
    const char *ttl_key = jt ? "state.ttl" : "table.exec.state.ttl";
    if (sl_vconf_duration(v, ttl_key, 0, &pl->ttl_ms, err, errlen) != SL_OK) goto fail;
    if (pl->ttl_ms <= 0)
        sl_plan_unbounded_cols(pc, "deduplication", in, pl->keys, pl->nkeys, "table.exec.state.ttl");
    sl_schema_copy(pc->out, in);
    if (sl_plan_key(pc, 0, pl->keys, pl->nkeys, err, errlen) != SL_OK) goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    rd_plan_free(pl);
    return NULL;
}

static void rd_close(sl_op *op)
{
    rd_state *st = op->priv;
    if (!st) return;
    free(st->buf);
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static int rd_open(sl_op *op)
{
    const rd_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    rd_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->sid = sl_kstate_register(op->kstate, "first");
    if (st->sid < 0) return sl_op_fail(op, "vertex '%s': cannot register its keyed state", pl->vid);
    if (pl->ttl_ms > 0 && !op->proc_timers)
        return sl_op_fail(op, "vertex '%s': 'state.ttl' needs processing-time timers", pl->vid);
    st->vals = sl_calloc((size_t)op->in->n + 1, sizeof *st->vals);
    return SL_OK;
}

static int rd_state_err(sl_op *op, const char *err)
{
    const rd_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
}

static int rd_process(sl_op *op, int input, sl_row *row)
{
    const rd_plan *pl = op->plan;
    rd_state *st = op->priv;
    char err[256];
    SL_UNUSED(input);
    if (row->kind != SL_KIND_INSERT)
        return sl_op_fail(op, "vertex '%s': deduplication needs an insert-only input, but a %s "
                          "row arrived", pl->vid, sl_rowkind_short(row->kind));
    if (row->vals[pl->tcol].isnull)
        return sl_op_fail(op, "vertex '%s': the time attribute '%s' is NULL in a row", pl->vid,
                          op->in->fields[pl->tcol].name);
    int64_t t = row->vals[pl->tcol].v.i;
    if (t <= op->current_watermark) {
        op->metrics.late_dropped++;
        return SL_OK;
    }
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid, rd_no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return rd_state_err(op, err);
    int64_t ttl_timer = 0;
    if (rc == SL_OK) {
        if (vlen < RD_HDR) return sl_op_fail(op, "vertex '%s': its state is damaged", pl->vid);
        const uint8_t *b = val;
        if (b[0] == RD_EMITTED) return SL_OK;
        int64_t pt = sl_get_lei64(b + 1);
        if (t >= pt) return SL_OK; /* the pending row is earlier, or arrived first */
        ttl_timer = sl_get_lei64(b + 17);
        sl_op_timer_delete(op, SL_TIME_EVENT, pt, rd_no_ns, 0);
    }
    int64_t now = pl->ttl_ms > 0 ? sl_now_ms() : 0;
    size_t rsz = sl_row_size(row, op->in);
    uint8_t *b = rd_room(st, RD_HDR + rsz);
    b[0] = RD_PENDING;
    sl_put_lei64(b + 1, t);
    sl_put_lei64(b + 9, now);
    sl_put_lei64(b + 17, ttl_timer);
    if (sl_row_encode(row, op->in, b + RD_HDR, rsz) != rsz)
        return sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
    if (sl_kstate_put(op->kstate, st->sid, rd_no_ns, 0, b, RD_HDR + rsz, err, sizeof err) != SL_OK)
        return rd_state_err(op, err);
    sl_op_timer_register(op, SL_TIME_EVENT, t, rd_no_ns, 0);
    return SL_OK;
}

/* The watermark reached a pending row's rowtime: emit it, keep the marker. */
static int rd_fire(sl_op *op, int64_t time)
{
    const rd_plan *pl = op->plan;
    rd_state *st = op->priv;
    char err[256];
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid, rd_no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return rd_state_err(op, err);
    if (rc == SL_DONE) return SL_OK;
    const uint8_t *b = val;
    if (vlen < RD_HDR) return sl_op_fail(op, "vertex '%s': its state is damaged", pl->vid);
    if (b[0] != RD_PENDING || sl_get_lei64(b + 1) != time) return SL_OK;
    sl_row out = {.vals = st->vals};
    if (sl_row_decode(b + RD_HDR, vlen - RD_HDR, op->in, &out, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, err);
    out.kind = SL_KIND_INSERT;
    out.ts = time;
    /* the decoded row points into the state value: emit before rewriting it */
    rc = sl_op_emit(op, &out);
    if (rc != SL_OK) return rc;
    int64_t now = pl->ttl_ms > 0 ? sl_now_ms() : 0, ttl_timer = 0;
    if (pl->ttl_ms > 0) {
        ttl_timer = rd_add_sat(now, pl->ttl_ms);
        sl_op_timer_register(op, SL_TIME_PROCESSING, ttl_timer, rd_no_ns, 0);
    }
    uint8_t *w = rd_room(st, RD_HDR);
    w[0] = RD_EMITTED;
    sl_put_lei64(w + 1, time);
    sl_put_lei64(w + 9, now);
    sl_put_lei64(w + 17, ttl_timer);
    if (sl_kstate_put(op->kstate, st->sid, rd_no_ns, 0, w, RD_HDR, err, sizeof err) != SL_OK)
        return rd_state_err(op, err);
    return SL_OK;
}

static int rd_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns,
                       size_t nslen)
{
    const rd_plan *pl = op->plan;
    rd_state *st = op->priv;
    char err[256];
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    if (!st) return SL_OK;
    if (domain == SL_TIME_EVENT) return rd_fire(op, time);
    if (pl->ttl_ms <= 0) return SL_OK;
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid, rd_no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return rd_state_err(op, err);
    if (rc == SL_DONE || vlen < RD_HDR) return SL_OK;
    const uint8_t *b = val;
    /* only an emitted key is forgotten: a pending one still has its row to give */
    if (b[0] == RD_EMITTED && sl_get_lei64(b + 17) == time &&
        sl_kstate_del(op->kstate, st->sid, rd_no_ns, 0, err, sizeof err) != SL_OK)
        return rd_state_err(op, err);
    return SL_OK;
}

static const sl_op_option rd_options[] = {
    {"key", SL_CT_JSON, NULL, NULL,
     "Key columns (a list or a comma-separated string)."},
    {"time-column", SL_CT_STRING, NULL, NULL,
     "Event-time column (rowtime) the operator reads."},
    {"state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of an emitted key's marker (a duration or interval; 0: none)."},
    {"table.exec.state.ttl", SL_CT_STRING, NULL, NULL,
     "Flink's name of state.ttl, as the SQL planner writes it."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_rowtime_deduplicate = {
    .abi = SL_OP_ABI_VERSION,
    .name = "rowtime_deduplicate",
    .flags = SL_OPF_KEYED,
    .options = rd_options,
    .plan = rd_plan_new,
    .plan_free = rd_plan_free,
    .open = rd_open,
    .process = rd_process,
    .close = rd_close,
    .on_timer = rd_on_timer,
    .restore_state = sl_op_restore_proc_timers,
};
