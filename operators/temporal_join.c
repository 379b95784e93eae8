/*
 * temporal_join.c -- the `temporal_join` operator: an event-time join of an
 * append-only stream (input 0) with a versioned table (input 1), Flink SQL's
 * `o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency`.
 *
 * Config (plus join-type -- inner or left --, left-keys, right-keys:
 * operators/join.h; the right keys are the versioned table's primary key, and
 * any further equalities of the ON condition, as Flink keys them):
 *   "left-time":  "ts"        the stream's event time (TIMESTAMP or BIGINT ms)
 *   "right-time": "rate_ts"   each version's time
 *
 * The versioned table: every +I / +U row of the right input is the version
 * of its key from its time on; a -D ends the key's versions from its time
 * (a tombstone); -U rows are ignored (the +U after them is the version).
 * Versions of one key and time: the last to arrive wins.
 *
 * A stream row at time t waits in state until the watermark (the minimum of
 * both inputs') reaches t, then joins the version of its key valid at t:
 * the one with the largest time <= t among the versions that have arrived.
 * With none (or a tombstone) an inner join emits nothing and a left join
 * emits the row with NULLs. A stream row that arrives with t <= watermark
 * is late: dropped and counted in numLateRecordsDropped. The output is
 * append-only; a row's timestamp is its stream time, and rows go out before
 * the watermark that released them, so the watermark is forwarded as is.
 *
 * State, per key: "temporal-left" maps a stream time (8 bytes, big-endian,
 * sign flipped) to the rows of that time ((u32 length | row)*), with an
 * event-time timer at that time (namespace 'L' + time); "temporal-right"
 * maps a version time to u8 live (0 = tombstone) | row, its times listed in
 * order in "temporal-right-times" (read instead of scanning), with a timer at the
 * version time (namespace 'R' + time). When a timer at T fires (timers
 * fire in time order, so every stream row still waiting is later than T),
 * versions older than the key's latest version at or before T are
 * unreachable and are deleted, so a key keeps one version at or before the
 * watermark plus the ones after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "join.h"

#define TS_LIMIT (INT64_C(1) << 62)
#define NS_LEN 9

typedef struct tj_plan {
    sl_join_spec js;
    int tcol[2];
} tj_plan;

typedef struct tj_state {
    sl_vstate *left, *right, *rtimes;
    sl_buf times;                   /* the key's version times being read or changed */
    sl_value *vals, *dec, *rdec;
    sl_buf entry, version;
} tj_state;

static void tj_plan_free(void *p)
{
    tj_plan *pl = p;
    if (!pl) return;
    sl_join_spec_free(&pl->js);
    free(pl);
}

static int time_col(sl_plan_ctx *pc, int side, const char *opt, char *err, size_t errlen)
{
    const char *c = sl_vconf_str(pc->v, opt, NULL);
    int col = c ? sl_schema_find(pc->in[side].schema, c) : -1;
    if (col < 0) {
        sl_seterr(err, errlen, "vertex '%s': '%s' must name the TIMESTAMP column of the %s input",
                  pc->v->id, opt, side ? "right (versioned table)" : "left (stream)");
        return -1;
    }
    sl_type t = pc->in[side].schema->fields[col].type;
    if (t != SL_T_TIMESTAMP && t != SL_T_BIGINT) {
        sl_seterr(err, errlen, "vertex '%s': %s '%s' is %s; a temporal join needs a TIMESTAMP (or "
                  "BIGINT milliseconds) time column", pc->v->id, opt, c, sl_type_name(t));
        return -1;
    }
    return col;
}

static void *tj_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    tj_plan *pl = sl_calloc(1, sizeof *pl);
    if (sl_join_plan(pc, &pl->js, err, errlen) != SL_OK) goto fail;
    if (pl->js.type != SL_JOIN_INNER && pl->js.type != SL_JOIN_LEFT) {
        sl_seterr(err, errlen, "vertex '%s': a temporal join is inner or left, not %s", pc->v->id,
                  sl_join_type_name(pl->js.type));
        goto fail;
    }
    if ((pl->tcol[0] = time_col(pc, 0, "left-time", err, errlen)) < 0) goto fail;
    if ((pl->tcol[1] = time_col(pc, 1, "right-time", err, errlen)) < 0) goto fail;
    return pl;
fail:
    tj_plan_free(pl);
    return NULL;
}

static int tj_open(sl_op *op)
{
    const tj_plan *pl = op->plan;
    if (!op->kstate || !op->event_timers)
        return sl_op_fail(op, "vertex '%s': the temporal join needs keyed state and timers from the "
                          "runtime", pl->js.vid);
    tj_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->left = sl_op_state(op, "temporal-left", SL_STATE_MAP, 0);
    st->right = sl_op_state(op, "temporal-right", SL_STATE_MAP, 0);
    st->rtimes = sl_op_state(op, "temporal-right-times", SL_STATE_VALUE, 0);
    if (!st->left || !st->right || !st->rtimes) return SL_ERR;
    st->vals = sl_calloc((size_t)(pl->js.nleft + pl->js.nright), sizeof *st->vals);
    st->dec = sl_calloc((size_t)pl->js.nleft + 1, sizeof *st->dec);
    st->rdec = sl_calloc((size_t)pl->js.nright + 1, sizeof *st->rdec);
    return SL_OK;
}

static void tj_close(sl_op *op)
{
    tj_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st->dec);
    free(st->rdec);
    sl_buf_free(&st->entry);
    sl_buf_free(&st->version);
    sl_buf_free(&st->times);
    free(st);
    op->priv = NULL;
}

#define time_key sl_join_time_key
#define time_of sl_join_time_of

static int check_time(sl_op *op, int side, const sl_row *row, int64_t *t)
{
    const tj_plan *pl = op->plan;
    const sl_value *tv = &row->vals[pl->tcol[side]];
    if (SL_UNLIKELY(tv->isnull))
        return sl_op_fail(op, "vertex '%s': the %s time column '%s' is NULL in a row", pl->js.vid,
                          side ? "right" : "left",
                          (side ? &pl->js.right : &pl->js.left)->fields[pl->tcol[side]].name);
    if (SL_UNLIKELY(tv->v.i < -TS_LIMIT || tv->v.i > TS_LIMIT))
        return sl_op_fail(op, "vertex '%s': event time %lld ms is out of the supported range", pl->js.vid,
                          (long long)tv->v.i);
    *t = tv->v.i;
    return SL_OK;
}

static int emit(sl_op *op, const sl_row *l, const sl_row *r)
{
    const tj_plan *pl = op->plan;
    return sl_join_emit(op, &pl->js, ((tj_state *)op->priv)->vals, SL_KIND_INSERT, l, r,
                        l->vals[pl->tcol[0]].v.i);
}

/* ---- versions ------------------------------------------------------------------- */

/* A key's version times are kept in order in a value ("temporal-right-times"),
 * so finding the version valid at a time reads that value and one entry,
 * never a scan of the backend (which on the hashmap backend walks the whole
 * key group). */

static int times_load(sl_op *op)
{
    tj_state *st = op->priv;
    const void *v;
    size_t len;
    st->times.len = 0;
    int rc = sl_value_get(st->rtimes, NULL, 0, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK) sl_buf_put(&st->times, v, len);
    return SL_OK;
}

static int times_store(sl_op *op)
{
    tj_state *st = op->priv;
    if (!st->times.len) return sl_state_clear(st->rtimes, NULL, 0);
    return sl_value_put(st->rtimes, NULL, 0, st->times.p, st->times.len);
}

/* Index in st->times of the largest version time <= at, or -1. */
static long best_at(const tj_state *st, int64_t at)
{
    long best = -1;
    for (size_t i = 0; i < st->times.len / 8 && time_of(sl_buf_u8(&st->times) + i * 8) <= at; i++) best = (long)i;
    return best;
}

/* Delete the current key's versions no stream row can reach any more: every
 * stream row still waiting or to come is later than `horizon` (a timer's
 * time: timers fire in time order; or the watermark). */
static int forget_unreachable(sl_op *op, int64_t horizon)
{
    tj_state *st = op->priv;
    if (times_load(op) != SL_OK) return SL_ERR;
    long b = best_at(st, horizon);
    if (b < 0) return SL_OK;
    /* the latest at or before the horizon stays unless it is a tombstone: then
     * nothing before it matters and it says no more than an absent version */
    const void *v;
    size_t len;
    long keep = b;
    if (sl_map_get(st->right, NULL, 0, st->times.p + b * 8, 8, &v, &len) == SL_OK && len >= 1 &&
        !*(const uint8_t *)v)
        keep = b + 1;
    if (keep == 0) return SL_OK;
    for (long i = 0; i < keep; i++)
        if (sl_map_remove(st->right, NULL, 0, st->times.p + i * 8, 8) != SL_OK) return SL_ERR;
    memmove(st->times.p, st->times.p + keep * 8, st->times.len - (size_t)keep * 8);
    st->times.len -= (size_t)keep * 8;
    return times_store(op);
}

/* A version at time key k is new: add it to the key's times. */
static int times_add(sl_op *op, const uint8_t *k)
{
    tj_state *st = op->priv;
    if (times_load(op) != SL_OK) return SL_ERR;
    size_t n = st->times.len / 8, at = 0;
    while (at < n && memcmp(st->times.p + at * 8, k, 8) < 0) at++;
    if (at < n && !memcmp(st->times.p + at * 8, k, 8)) return SL_OK;
    sl_buf_reserve(&st->times, 8);
    memmove(st->times.p + at * 8 + 8, st->times.p + at * 8, (n - at) * 8);
    memcpy(st->times.p + at * 8, k, 8);
    st->times.len += 8;
    return times_store(op);
}

/* ---- callbacks ------------------------------------------------------------------- */

static int tj_process(sl_op *op, int input, sl_row *row)
{
    const tj_plan *pl = op->plan;
    tj_state *st = op->priv;
    int side = input ? 1 : 0;
    int64_t t = 0;
    if (check_time(op, side, row, &t) != SL_OK) return SL_ERR;
    uint8_t k[8], ns[NS_LEN];
    time_key(k, t);
    ns[0] = side ? 'R' : 'L';
    memcpy(ns + 1, k, 8);
    if (side == 0) {
        if (SL_UNLIKELY(row->kind != SL_KIND_INSERT))
            return sl_op_fail(op, "vertex '%s': the stream side of a temporal join is append-only, "
                              "got a %s row", pl->js.vid, sl_rowkind_short(row->kind));
        if (t <= op->current_watermark) {
            op->metrics.late_dropped++;
            return SL_OK;
        }
        if (sl_join_null_key(&pl->js, 0, row))
            return pl->js.type == SL_JOIN_LEFT ? emit(op, row, NULL) : SL_OK;
        const void *v;
        size_t len;
        st->entry.len = 0;
        int rc = sl_map_get(st->left, NULL, 0, k, 8, &v, &len);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_OK) sl_buf_put(&st->entry, v, len);
        sl_jbuf_put_row(&st->entry, row, &pl->js.left);
        if (sl_map_put(st->left, NULL, 0, k, 8, st->entry.p, st->entry.len) != SL_OK) return SL_ERR;
        return rc == SL_OK ? SL_OK : sl_op_timer_register(op, SL_TIME_EVENT, t, ns, NS_LEN);
    }
    if (row->kind == SL_KIND_UPDATE_BEFORE || sl_join_null_key(&pl->js, 1, row)) return SL_OK;
    st->version.len = 0;
    uint8_t live = row->kind != SL_KIND_DELETE;
    sl_buf_put(&st->version, &live, 1);
    if (live) {
        sl_row ins = *row;
        ins.kind = SL_KIND_INSERT;
        size_t need = sl_row_size(&ins, &pl->js.right);
        sl_buf_reserve(&st->version, need);
        st->version.len += sl_row_encode(&ins, &pl->js.right, sl_buf_u8(&st->version) + 1, need);
    }
    if (sl_map_put(st->right, NULL, 0, k, 8, st->version.p, st->version.len) != SL_OK) return SL_ERR;
    if (times_add(op, k) != SL_OK) return SL_ERR;
    if (t <= op->current_watermark) return forget_unreachable(op, op->current_watermark);
    return sl_op_timer_register(op, SL_TIME_EVENT, t, ns, NS_LEN);
}

typedef struct join_ctx {
    sl_op *op;
    const sl_row *version; /* NULL: none */
} join_ctx;

static int tj_on_timer(sl_op *op, sl_time_domain d, int64_t time, const void *nsv, size_t nslen)
{
    const tj_plan *pl = op->plan;
    tj_state *st = op->priv;
    SL_UNUSED(d);
    const uint8_t *ns = nsv;
    if (nslen != NS_LEN || (ns[0] != 'L' && ns[0] != 'R'))
        return sl_op_fail(op, "vertex '%s': damaged temporal-join timer", pl->js.vid);
    if (ns[0] == 'L') {
        const void *v;
        size_t len;
        int rc = sl_map_get(st->left, NULL, 0, ns + 1, 8, &v, &len);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_OK) {
            st->entry.len = 0; /* copies: state calls follow */
            sl_buf_put(&st->entry, v, len);
            if (times_load(op) != SL_OK) return SL_ERR;
            long b = best_at(st, time);
            sl_row ver = {.vals = st->rdec, .ts = SL_TS_NONE};
            const sl_row *vp = NULL;
            st->version.len = 0;
            if (b >= 0) {
                uint8_t k[8];
                memcpy(k, st->times.p + b * 8, 8);
                if (sl_map_get(st->right, NULL, 0, k, 8, &v, &len) == SL_OK && len > 1 &&
                    *(const uint8_t *)v) {
                    sl_buf_put(&st->version, (const uint8_t *)v + 1, len - 1);
                    char derr[200];
                    if (sl_row_decode(sl_buf_u8(&st->version), st->version.len, &pl->js.right, &ver, derr,
                                      sizeof derr) != SL_OK)
                        return sl_op_fail(op, "vertex '%s': damaged temporal-join state: %s",
                                          pl->js.vid, derr);
                    vp = &ver;
                }
            }
            for (size_t pos = 0; pos < st->entry.len;) {
                uint32_t n = st->entry.len - pos >= 4 ? sl_get_le32(st->entry.p + pos) : 0;
                sl_row l = {.vals = st->dec};
                char derr[200];
                if (st->entry.len - pos < 4 || n > st->entry.len - pos - 4 ||
                    sl_row_decode(sl_buf_u8(&st->entry) + pos + 4, n, &pl->js.left, &l, derr, sizeof derr) != SL_OK)
                    return sl_op_fail(op, "vertex '%s': damaged temporal-join state", pl->js.vid);
                pos += 4 + n;
                if (vp) {
                    if (emit(op, &l, vp) != SL_OK) return SL_ERR;
                } else if (pl->js.type == SL_JOIN_LEFT && emit(op, &l, NULL) != SL_OK) {
                    return SL_ERR;
                }
            }
            if (sl_map_remove(st->left, NULL, 0, ns + 1, 8) != SL_OK) return SL_ERR;
        }
    }
    return forget_unreachable(op, time);
}

static const sl_op_option tj_options[] = {
    {"join-type", SL_CT_STRING, NULL, NULL,
     "inner, left, right or full."},
    {"left-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the left input (a list)."},
    {"right-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the right input (a list)."},
    {"left-time", SL_CT_STRING, NULL, NULL,
     "Event-time column of the left input."},
    {"right-time", SL_CT_STRING, NULL, NULL,
     "Event-time column of the right input."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_temporal_join = {
    .abi = SL_OP_ABI_VERSION,
    .name = "temporal_join",
    .flags = SL_OPF_KEYED,
    .options = tj_options,
    .max_inputs = 2,
    .plan = tj_plan_new,
    .plan_free = tj_plan_free,
    .open = tj_open,
    .process = tj_process,
    .on_timer = tj_on_timer,
    .close = tj_close,
};
