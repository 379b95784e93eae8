/*
 * interval_join.c -- the `interval_join` operator: an event-time join of two
 * append-only inputs on an equi-key and a time interval (what Flink SQL
 * plans for `a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts - X AND a.ts + Y`).
 *
 * Config (plus join-type, left-keys, right-keys: operators/join.h):
 *   "left-time":   "ts"     TIMESTAMP (or BIGINT) column of the left input
 *   "right-time":  "ts"     the same on the right input
 *   "lower-bound": -60000   ms; rows match when
 *   "upper-bound":  60000       left.time + lower <= right.time <= left.time + upper
 *
 * Output: left columns, right columns (join.h). Append-only: an outer row
 * (a left row without partner in a left/full join, the same for right)
 * goes out with NULLs once its bound has passed, and only then. Both time
 * columns keep being event-time attributes; the row's timestamp is the left
 * time (the right time for a right outer row), and the output watermark is
 * the input watermark held back by the largest amount a row can be behind
 * it, max(upper - lower, upper, -lower) + 1 ms, so no output row is ever
 * behind the watermark downstream (Flink delays the watermark the same way).
 *
 * Time. W is the operator's watermark (the minimum of both inputs'). With
 * width = upper - lower:
 *   - a left row at t is late when t + upper <= W, a right row at s when
 *     s - lower <= W: every row of the other side that it could still match
 *     is behind the watermark. A late row is dropped and counted in
 *     numLateRecordsDropped (op->metrics.late_dropped);
 *   - any other row probes the other side's rows of its key, emits a row per
 *     match, and is kept until W >= its time + width (an event-time timer):
 *     after that no row that is not late can match it.
 * These two rules make the result exact: the output is the join of every
 * row that was not late, whatever the order and the watermarks (a row's
 * partners that arrived earlier are still kept when it arrives, as both
 * bounds show), which is what the unit test checks against a brute-force
 * model.
 *
 * State, per key and side: a map state ("interval-join-left",
 * "interval-join-right") from the row time (8 bytes, big-endian with the
 * sign flipped: byte order is time order) to an entry
 *     u8 matched | (u32 length | binary row)...
 * and a value ("interval-join-left-times", "...-right-times") listing the
 * times the map holds, in order, through which a probe reads just the
 * entries in its range (never a scan of the backend);
 * All rows of one time share an entry and have the same partners, so one
 * `matched` flag serves them; an outer side's flag is set when a row of the
 * other side first matches the entry. The timer (namespace: side byte +
 * the time) removes the entry and emits its outer rows if unmatched.
 * State and timers are checkpointed and rescaled by key group by the
 * runtime; the operator keeps nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "join.h"

#define TS_LIMIT (INT64_C(1) << 62)
#define NS_LEN 9

typedef struct ij_plan {
    sl_join_spec js;
    int tcol[2];
    int64_t lower, upper, width, delay;
} ij_plan;

typedef struct ij_state {
    sl_vstate *side[2];
    sl_vstate *times[2];        /* per key and side: the times its map holds */
    sl_buf idx;                 /* a times value being read or changed */
    sl_value *vals;             /* output row */
    sl_value *dec;              /* a stored row, decoded */
    sl_buf entry;               /* working copy of an entry */
    sl_buf marks;               /* times of entries to mark matched */
    int64_t wm_out;             /* last watermark emitted */
} ij_state;

static void ij_plan_free(void *p)
{
    ij_plan *pl = p;
    if (!pl) return;
    sl_join_spec_free(&pl->js);
    free(pl);
}

static int time_col(sl_plan_ctx *pc, int side, const char *opt, char *err, size_t errlen)
{
    const char *c = sl_vconf_str(pc->v, opt, NULL);
    int col = c ? sl_schema_find(pc->in[side].schema, c) : -1;
    if (col < 0) {
        sl_seterr(err, errlen, "vertex '%s': '%s' must name a TIMESTAMP column of the %s input%s%s%s",
                  pc->v->id, opt, side ? "right" : "left", c ? " ('" : "", c ? c : "", c ? "' is not one)" : "");
        return -1;
    }
    sl_type t = pc->in[side].schema->fields[col].type;
    if (t != SL_T_TIMESTAMP && t != SL_T_BIGINT) {
        sl_seterr(err, errlen, "vertex '%s': %s '%s' is %s; an interval join needs a TIMESTAMP (or "
                  "BIGINT milliseconds) time column", pc->v->id, opt, c, sl_type_name(t));
        return -1;
    }
    return col;
}

static void *ij_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    ij_plan *pl = sl_calloc(1, sizeof *pl);
    if (sl_join_plan(pc, &pl->js, err, errlen) != SL_OK) goto fail;
    if ((pl->tcol[0] = time_col(pc, 0, "left-time", err, errlen)) < 0) goto fail;
    if ((pl->tcol[1] = time_col(pc, 1, "right-time", err, errlen)) < 0) goto fail;
    if (!json_object_get(pc->v->config, "lower-bound") || !json_object_get(pc->v->config, "upper-bound")) {
        sl_seterr(err, errlen, "vertex '%s': 'lower-bound' and 'upper-bound' (ms, right time minus "
                  "left time) are required", pc->v->id);
        goto fail;
    }
    if (sl_vconf_int(pc->v, "lower-bound", 0, &pl->lower, err, errlen) != SL_OK ||
        sl_vconf_int(pc->v, "upper-bound", 0, &pl->upper, err, errlen) != SL_OK)
        goto fail;
    const int64_t lim = INT64_C(1) << 60;
    if (pl->lower < -lim || pl->lower > lim || pl->upper < -lim || pl->upper > lim) {
        sl_seterr(err, errlen, "vertex '%s': the bounds must lie within +-2^60 ms", pc->v->id);
        goto fail;
    }
    if (pl->lower > pl->upper) {
        sl_seterr(err, errlen, "vertex '%s': lower-bound %lld ms is above upper-bound %lld ms; no "
                  "row could ever match", pc->v->id, (long long)pl->lower, (long long)pl->upper);
        goto fail;
    }
    pl->width = pl->upper - pl->lower;
    int64_t d = pl->width;
    if (pl->upper > d) d = pl->upper;
    if (-pl->lower > d) d = -pl->lower;
    pl->delay = d + 1;
    return pl;
fail:
    ij_plan_free(pl);
    return NULL;
}

static int ij_open(sl_op *op)
{
    const ij_plan *pl = op->plan;
    if (!op->kstate || !op->event_timers)
        return sl_op_fail(op, "vertex '%s': the interval join needs keyed state and timers from the "
                          "runtime", pl->js.vid);
    ij_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->side[0] = sl_op_state(op, "interval-join-left", SL_STATE_MAP, 0);
    st->side[1] = sl_op_state(op, "interval-join-right", SL_STATE_MAP, 0);
    st->times[0] = sl_op_state(op, "interval-join-left-times", SL_STATE_VALUE, 0);
    st->times[1] = sl_op_state(op, "interval-join-right-times", SL_STATE_VALUE, 0);
    if (!st->side[0] || !st->side[1] || !st->times[0] || !st->times[1]) return SL_ERR;
    int n = pl->js.nleft > pl->js.nright ? pl->js.nleft : pl->js.nright;
    st->vals = sl_calloc((size_t)(pl->js.nleft + pl->js.nright), sizeof *st->vals);
    st->dec = sl_calloc((size_t)n + 1, sizeof *st->dec);
    st->wm_out = INT64_MIN;
    return SL_OK;
}

static void ij_close(sl_op *op)
{
    ij_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st->dec);
    sl_buf_free(&st->entry);
    sl_buf_free(&st->marks);
    sl_buf_free(&st->idx);
    free(st);
    op->priv = NULL;
}

#define time_key sl_join_time_key
#define time_of sl_join_time_of

static inline int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

/* Visit the rows of an entry: fn(ctx, row) for each. */
typedef int (*row_fn)(sl_op *op, void *ctx, const sl_row *row);

static int each_row(sl_op *op, int side, const uint8_t *val, size_t len, row_fn fn, void *ctx)
{
    const ij_plan *pl = op->plan;
    ij_state *st = op->priv;
    const sl_schema *s = side ? &pl->js.right : &pl->js.left;
    size_t pos = 1;
    while (pos < len) {
        char derr[200];
        uint32_t n = len - pos >= 4 ? sl_get_le32(val + pos) : 0;
        sl_row r = {.vals = st->dec};
        if (len - pos < 4 || n > len - pos - 4 ||
            sl_row_decode(val + pos + 4, n, s, &r, derr, sizeof derr) != SL_OK)
            return sl_op_fail(op, "vertex '%s': damaged interval-join state at byte %zu of an entry",
                              pl->js.vid, pos);
        if (fn(op, ctx, &r) != SL_OK) return SL_ERR;
        pos += 4 + n;
    }
    return SL_OK;
}

typedef struct probe {
    sl_op *op;
    int side;                   /* of the arriving row */
    const sl_row *row;
    int64_t lo, hi;             /* the other side's matching times */
    int mark;                   /* the other side is outer: note unmatched entries */
    int matched;
    int rc;
} probe;

static int emit_pair(sl_op *op, void *ctx, const sl_row *other)
{
    const ij_plan *pl = op->plan;
    probe *pr = ctx;
    const sl_row *l = pr->side ? other : pr->row, *r = pr->side ? pr->row : other;
    return sl_join_emit(op, &pl->js, ((ij_state *)op->priv)->vals, SL_KIND_INSERT, l, r,
                        l->vals[pl->tcol[0]].v.i);
}

static int probe_entry(void *ctx, const void *k, size_t klen, const void *val, size_t len)
{
    probe *pr = ctx;
    ij_state *st = pr->op->priv;
    if (klen != 8 || len < 1) {
        pr->rc = sl_op_fail(pr->op, "vertex '%s': damaged interval-join state",
                            ((const ij_plan *)pr->op->plan)->js.vid);
        return 1;
    }
    int64_t t = time_of(k);
    if (t < pr->lo || t > pr->hi) return 0;
    pr->matched = 1;
    if (pr->mark && !*(const uint8_t *)val) sl_buf_put(&st->marks, k, 8);
    if (each_row(pr->op, !pr->side, val, len, emit_pair, pr) != SL_OK) {
        pr->rc = SL_ERR;
        return 1;
    }
    return 0;
}

/* ---- the times of a key's side --------------------------------------------------------
 * A key's rows of one side are found through a value listing the times its
 * map holds (8-byte time keys, in order), so a probe reads the entries it
 * needs by key and never scans the backend (a scan of one key's entries
 * walks a whole key group on the hashmap backend). */

/* The times of `side` for the current key into st->idx (empty when none). */
static int times_load(sl_op *op, int side)
{
    ij_state *st = op->priv;
    const void *v;
    size_t len;
    st->idx.len = 0;
    int rc = sl_value_get(st->times[side], NULL, 0, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK) sl_buf_put(&st->idx, v, len);
    return SL_OK;
}

/* Add (add = 1) or remove time key k in the current key's list of `side`. */
static int times_change(sl_op *op, int side, const uint8_t *k, int add)
{
    ij_state *st = op->priv;
    if (times_load(op, side) != SL_OK) return SL_ERR;
    size_t n = st->idx.len / 8, at = 0;
    while (at < n && memcmp(st->idx.p + at * 8, k, 8) < 0) at++;
    int present = at < n && !memcmp(st->idx.p + at * 8, k, 8);
    if (add == present) return SL_OK;
    if (add) {
        sl_buf_reserve(&st->idx, 8);
        memmove(st->idx.p + at * 8 + 8, st->idx.p + at * 8, (n - at) * 8);
        memcpy(st->idx.p + at * 8, k, 8);
        st->idx.len += 8;
    } else {
        memmove(st->idx.p + at * 8, st->idx.p + at * 8 + 8, (n - at - 1) * 8);
        st->idx.len -= 8;
    }
    if (!st->idx.len) return sl_state_clear(st->times[side], NULL, 0);
    return sl_value_put(st->times[side], NULL, 0, st->idx.p, st->idx.len);
}

static int emit_outer(sl_op *op, void *ctx, const sl_row *row)
{
    const ij_plan *pl = op->plan;
    int side = *(const int *)ctx;
    return sl_join_emit(op, &pl->js, ((ij_state *)op->priv)->vals, SL_KIND_INSERT, side ? NULL : row,
                        side ? row : NULL, row->vals[pl->tcol[side]].v.i);
}

static int ij_process(sl_op *op, int input, sl_row *row)
{
    const ij_plan *pl = op->plan;
    ij_state *st = op->priv;
    int side = input ? 1 : 0;
    if (SL_UNLIKELY(row->kind != SL_KIND_INSERT))
        return sl_op_fail(op, "vertex '%s': an interval join takes append-only inputs, got a %s row "
                          "on the %s input", pl->js.vid, sl_rowkind_short(row->kind),
                          side ? "right" : "left");
    const sl_value *tv = &row->vals[pl->tcol[side]];
    if (SL_UNLIKELY(tv->isnull))
        return sl_op_fail(op, "vertex '%s': the %s time column '%s' is NULL in a row; an interval join "
                          "needs a time on every row", pl->js.vid, side ? "right" : "left",
                          (side ? &pl->js.right : &pl->js.left)->fields[pl->tcol[side]].name);
    int64_t t = tv->v.i;
    if (SL_UNLIKELY(t < -TS_LIMIT || t > TS_LIMIT))
        return sl_op_fail(op, "vertex '%s': event time %lld ms is out of the supported range (+-2^62 ms)",
                          pl->js.vid, (long long)t);
    int outer = sl_join_outer(&pl->js, side);
    int64_t W = op->current_watermark;
    /* the latest time of the other side this row can match, in the other side's terms */
    int64_t reach = side ? t - pl->lower : t + pl->upper;
    if (reach <= W) {
        op->metrics.late_dropped++;
        return SL_OK;
    }
    if (sl_join_null_key(&pl->js, side, row)) /* matches nothing, ever */
        return outer ? emit_outer(op, &side, row) : SL_OK;
    probe pr = {.op = op, .side = side, .row = row, .mark = sl_join_outer(&pl->js, !side)};
    pr.lo = side ? t - pl->upper : t + pl->lower;
    pr.hi = side ? t - pl->lower : t + pl->upper;
    st->marks.len = 0;
    if (times_load(op, !side) != SL_OK) return SL_ERR;
    /* the times are copied out of idx: reading an entry reuses no buffer of ours */
    size_t nt = st->idx.len / 8;
    uint8_t tk[8];
    for (size_t i = 0; i < nt; i++) {
        int64_t t2 = time_of(sl_buf_u8(&st->idx) + i * 8);
        if (t2 < pr.lo) continue;
        if (t2 > pr.hi) break;
        memcpy(tk, st->idx.p + i * 8, 8);
        const void *v;
        size_t len;
        int rc = sl_map_get(st->side[!side], NULL, 0, tk, 8, &v, &len);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_DONE) continue;
        probe_entry(&pr, tk, 8, v, len);
        if (pr.rc != SL_OK) return SL_ERR;
    }
    for (size_t i = 0; i < st->marks.len; i += 8) {
        const void *v;
        size_t len;
        const uint8_t *k = sl_buf_u8(&st->marks) + i;
        if (sl_map_get(st->side[!side], NULL, 0, k, 8, &v, &len) != SL_OK) continue;
        st->entry.len = 0;
        sl_buf_put(&st->entry, v, len);
        st->entry.p[0] = 1;
        if (sl_map_put(st->side[!side], NULL, 0, k, 8, st->entry.p, st->entry.len) != SL_OK)
            return SL_ERR;
    }
    int64_t cleanup = t + pl->width;
    if (cleanup <= W) /* nothing that is not late can match it any more */
        return outer && !pr.matched ? emit_outer(op, &side, row) : SL_OK;
    uint8_t k[8];
    time_key(k, t);
    const void *v;
    size_t len;
    st->entry.len = 0;
    int rc = sl_map_get(st->side[side], NULL, 0, k, 8, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK) sl_buf_put(&st->entry, v, len);
    else sl_buf_put(&st->entry, &(uint8_t){(uint8_t)pr.matched}, 1);
    sl_jbuf_put_row(&st->entry, row, side ? &pl->js.right : &pl->js.left);
    if (sl_map_put(st->side[side], NULL, 0, k, 8, st->entry.p, st->entry.len) != SL_OK) return SL_ERR;
    if (rc == SL_OK) return SL_OK; /* the entry's timer exists */
    if (times_change(op, side, k, 1) != SL_OK) return SL_ERR;
    uint8_t ns[NS_LEN];
    ns[0] = (uint8_t)side;
    memcpy(ns + 1, k, 8);
    return sl_op_timer_register(op, SL_TIME_EVENT, cleanup, ns, NS_LEN);
}

static int ij_on_timer(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen)
{
    const ij_plan *pl = op->plan;
    ij_state *st = op->priv;
    SL_UNUSED(d);
    SL_UNUSED(time);
    const uint8_t *n = ns;
    if (nslen != NS_LEN || n[0] > 1)
        return sl_op_fail(op, "vertex '%s': damaged interval-join timer", pl->js.vid);
    int side = n[0];
    const void *v;
    size_t len;
    int rc = sl_map_get(st->side[side], NULL, 0, n + 1, 8, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_DONE) return SL_OK;
    if (sl_join_outer(&pl->js, side) && len >= 1 && !*(const uint8_t *)v) {
        st->entry.len = 0; /* a copy: emitting may not keep the borrowed bytes valid */
        sl_buf_put(&st->entry, v, len);
        if (each_row(op, side, sl_buf_u8(&st->entry), st->entry.len, emit_outer, &side) != SL_OK) return SL_ERR;
    }
    if (sl_map_remove(st->side[side], NULL, 0, n + 1, 8) != SL_OK) return SL_ERR;
    return times_change(op, side, n + 1, 0);
}

static int ij_watermark(sl_op *op, int input, int64_t wm)
{
    const ij_plan *pl = op->plan;
    ij_state *st = op->priv;
    SL_UNUSED(input);
    SL_UNUSED(wm);
    int64_t W = op->current_watermark;
    int64_t out = W == INT64_MAX ? INT64_MAX : sat_add(W, -pl->delay);
    if (out <= st->wm_out) return SL_OK;
    st->wm_out = out;
    return sl_op_emit_watermark(op, out);
}

static const sl_op_option ij_options[] = {
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
    {"lower-bound", SL_CT_STRING, NULL, NULL,
     "right.time - left.time must be at least this (an interval)."},
    {"upper-bound", SL_CT_STRING, NULL, NULL,
     "right.time - left.time must be at most this (an interval)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_interval_join = {
    .abi = SL_OP_ABI_VERSION,
    .name = "interval_join",
    .flags = SL_OPF_KEYED,
    .options = ij_options,
    .max_inputs = 2,
    .plan = ij_plan_new,
    .plan_free = ij_plan_free,
    .open = ij_open,
    .process = ij_process,
    .watermark = ij_watermark,
    .on_timer = ij_on_timer,
    .close = ij_close,
};
