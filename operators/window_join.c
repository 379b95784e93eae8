/*
 * window_join.c -- the `window_join` operator: Flink's window join, of two
 * windowed append-only inputs on their window bounds and keys (what
 * `L JOIN R ON L.window_start = R.window_start AND L.window_end =
 * R.window_end AND L.k = R.k` over two window TVFs computes).
 *
 * Config (plus join-type, left-keys, right-keys: operators/join.h; the keys
 * do not include the window columns):
 *   "left-window": ["window_start", "window_end"]   TIMESTAMP columns of the
 *   "right-window": ["window_start", "window_end"]  window each row is in
 *
 * Rows of one key and window wait until the watermark (the minimum of both
 * inputs') reaches the window's last millisecond (window_end - 1); then the
 * window's left and right rows are joined -- every pair, plus NULL-padded
 * rows of an outer side without partner -- emitted with timestamp
 * window_end - 1, and forgotten. A row whose window is already past
 * (window_end - 1 <= watermark) is late: dropped and counted in
 * numLateRecordsDropped. Output: append-only, left columns then right
 * columns (join.h); rows go out before the watermark that fires them.
 *
 * "time-attribute": "ltz" with the session zone ("table.local-time-zone"):
 * the windows were aligned in the zone (window.c "Zones"), so window_end
 * is a local time and the window fires at sl_window_due, the instant of
 * its last local millisecond.
 *
 * State, per key and window: two list states ("window-join-left",
 * "window-join-right") in the window's namespace (start and end, 8 bytes
 * each, byte order = time order), and one event-time timer at
 * window_end - 1 in the same namespace. What bounds it: the watermark; a
 * key holds only the rows of windows not yet fired.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "join.h"
#include "temporal.h"

#define NS_LEN 16

typedef struct wj_plan {
    sl_join_spec js;
    int wcol[2][2];             /* [side][start, end] */
    char *zone;                 /* windows aligned in this zone (window.c "Zones"):
                                   their bounds are local times; NULL: UTC */
} wj_plan;

typedef struct wj_state {
    sl_vstate *side[2];
    sl_value *vals, *dec[2];
    sl_buf rows[2];             /* a window's rows of each side, copied: (u32 len | row)* */
    sl_buf row;
    int nrows[2];
    sl_tz *tz;                  /* pl->zone, opened */
} wj_state;

static void wj_plan_free(void *p)
{
    wj_plan *pl = p;
    if (!pl) return;
    sl_join_spec_free(&pl->js);
    free(pl->zone);
    free(pl);
}

static int window_cols(sl_plan_ctx *pc, int side, int *cols, char *err, size_t errlen)
{
    const char *opt = side ? "right-window" : "left-window";
    json_t *a = sl_vconf_array(pc->v, opt);
    if (!a || json_array_size(a) != 2)
        return sl_seterr(err, errlen, "vertex '%s': '%s' must name the window's start and end "
                         "columns, e.g. [\"window_start\", \"window_end\"]", pc->v->id, opt);
    for (int i = 0; i < 2; i++) {
        const char *c = json_string_value(json_array_get(a, (size_t)i));
        int col = c ? sl_schema_find(pc->in[side].schema, c) : -1;
        if (col < 0 || pc->in[side].schema->fields[col].type != SL_T_TIMESTAMP)
            return sl_seterr(err, errlen, "vertex '%s': %s column '%s' is not a TIMESTAMP column of "
                             "the %s input", pc->v->id, opt, c ? c : "?", side ? "right" : "left");
        cols[i] = col;
    }
    return SL_OK;
}

static void *wj_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    wj_plan *pl = sl_calloc(1, sizeof *pl);
    if (sl_join_plan(pc, &pl->js, err, errlen) != SL_OK ||
        window_cols(pc, 0, pl->wcol[0], err, errlen) != SL_OK ||
        window_cols(pc, 1, pl->wcol[1], err, errlen) != SL_OK ||
        sl_window_zone(pc, &(bool){false}, &pl->zone, err, errlen) != SL_OK) {
        wj_plan_free(pl);
        return NULL;
    }
    return pl;
}

static int wj_open(sl_op *op)
{
    const wj_plan *pl = op->plan;
    if (!op->kstate || !op->event_timers)
        return sl_op_fail(op, "vertex '%s': the window join needs keyed state and timers from the "
                          "runtime", pl->js.vid);
    wj_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->side[0] = sl_op_state(op, "window-join-left", SL_STATE_LIST, 0);
    st->side[1] = sl_op_state(op, "window-join-right", SL_STATE_LIST, 0);
    if (!st->side[0] || !st->side[1]) return SL_ERR;
    st->vals = sl_calloc((size_t)(pl->js.nleft + pl->js.nright), sizeof *st->vals);
    st->dec[0] = sl_calloc((size_t)pl->js.nleft + 1, sizeof(sl_value));
    st->dec[1] = sl_calloc((size_t)pl->js.nright + 1, sizeof(sl_value));
    char zerr[300];
    if (pl->zone && !(st->tz = sl_tz_open(pl->zone, SL_TZ_JAVA_TIME, zerr, sizeof zerr)))
        return sl_op_fail(op, "vertex '%s': %s", pl->js.vid, zerr);
    return SL_OK;
}

static void wj_close(sl_op *op)
{
    wj_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st->dec[0]);
    free(st->dec[1]);
    for (int s = 0; s < 2; s++) sl_buf_free(&st->rows[s]);
    sl_buf_free(&st->row);
    sl_tz_destroy(st->tz);
    free(st);
    op->priv = NULL;
}

static int wj_process(sl_op *op, int input, sl_row *row)
{
    const wj_plan *pl = op->plan;
    wj_state *st = op->priv;
    int side = input ? 1 : 0;
    if (SL_UNLIKELY(row->kind != SL_KIND_INSERT))
        return sl_op_fail(op, "vertex '%s': a window join takes append-only inputs, got a %s row",
                          pl->js.vid, sl_rowkind_short(row->kind));
    const sl_value *ws = &row->vals[pl->wcol[side][0]], *we = &row->vals[pl->wcol[side][1]];
    if (SL_UNLIKELY(ws->isnull || we->isnull || we->v.i <= ws->v.i))
        return sl_op_fail(op, "vertex '%s': a %s row without a window (window_start and window_end "
                          "must be set, start before end)", pl->js.vid, side ? "right" : "left");
    int64_t fire = sl_window_due(st->tz, we->v.i); /* the last ms's instant */
    if (fire <= op->current_watermark) {
        op->metrics.late_dropped++;
        return SL_OK;
    }
    if (sl_join_null_key(&pl->js, side, row)) {
        if (!sl_join_outer(&pl->js, side)) return SL_OK;
        /* matches nothing, but goes out when its window does: keep it under its own window
         * on a key no row of the other side has (the NULL key) */
    }
    uint8_t ns[NS_LEN];
    sl_join_time_key(ns, ws->v.i);
    sl_join_time_key(ns + 8, we->v.i);
    st->row.len = 0;
    sl_row ins = *row;
    size_t need = sl_row_size(&ins, side ? &pl->js.right : &pl->js.left);
    sl_buf_reserve(&st->row, need);
    st->row.len = sl_row_encode(&ins, side ? &pl->js.right : &pl->js.left, sl_buf_u8(&st->row), need);
    if (sl_list_add(st->side[side], ns, NS_LEN, st->row.p, st->row.len) != SL_OK) return SL_ERR;
    return sl_op_timer_register(op, SL_TIME_EVENT, fire, ns, NS_LEN);
}

typedef struct copy_ctx {
    sl_buf *b;
    int n;
} copy_ctx;

static int copy_row(void *ctx, const void *val, size_t len)
{
    copy_ctx *c = ctx;
    uint8_t hdr[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    sl_buf_put(c->b, hdr, 4);
    sl_buf_put(c->b, val, len);
    c->n++;
    return 0;
}

/* Row i of side s's copy (decoded into dec[s]; strings point into the copy). */
static int row_at(sl_op *op, int s, size_t *pos, sl_row *r)
{
    const wj_plan *pl = op->plan;
    wj_state *st = op->priv;
    const uint8_t *p = sl_buf_u8(&st->rows[s]) + *pos;
    uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    *r = (sl_row){.vals = st->dec[s]};
    char derr[200];
    if (sl_row_decode(p + 4, n, s ? &pl->js.right : &pl->js.left, r, derr, sizeof derr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': damaged window-join state: %s", pl->js.vid, derr);
    *pos += 4 + n;
    return SL_OK;
}

static int wj_on_timer(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen)
{
    const wj_plan *pl = op->plan;
    wj_state *st = op->priv;
    SL_UNUSED(d);
    if (nslen != NS_LEN) return sl_op_fail(op, "vertex '%s': damaged window-join timer", pl->js.vid);
    for (int s = 0; s < 2; s++) {
        st->rows[s].len = 0;
        copy_ctx c = {&st->rows[s], 0};
        if (sl_list_each(st->side[s], ns, nslen, copy_row, &c) != SL_OK) return SL_ERR;
        st->nrows[s] = c.n;
        if (sl_state_clear(st->side[s], ns, nslen) != SL_OK) return SL_ERR;
    }
    /* a NULL-keyed row (kept only on an outer side) never pairs */
    int null_key = 0;
    if (st->nrows[0] || st->nrows[1]) {
        int s = st->nrows[0] ? 0 : 1;
        size_t pos = 0;
        sl_row r;
        if (row_at(op, s, &pos, &r) != SL_OK) return SL_ERR;
        null_key = sl_join_null_key(&pl->js, s, &r);
    }
    for (int s = 0; s < 2; s++) {
        if (!sl_join_outer(&pl->js, s) || (st->nrows[!s] && !null_key)) continue;
        size_t pos = 0;
        for (int i = 0; i < st->nrows[s]; i++) {
            sl_row r;
            if (row_at(op, s, &pos, &r) != SL_OK) return SL_ERR;
            if (sl_join_emit(op, &pl->js, st->vals, SL_KIND_INSERT, s ? NULL : &r, s ? &r : NULL,
                             time) != SL_OK)
                return SL_ERR;
        }
    }
    if (null_key || !st->nrows[0] || !st->nrows[1]) return SL_OK;
    /* every pair: the right rows decoded afresh for each left row */
    size_t lpos = 0;
    for (int i = 0; i < st->nrows[0]; i++) {
        sl_row l;
        if (row_at(op, 0, &lpos, &l) != SL_OK) return SL_ERR;
        size_t rpos = 0;
        for (int j = 0; j < st->nrows[1]; j++) {
            sl_row r;
            if (row_at(op, 1, &rpos, &r) != SL_OK) return SL_ERR;
            if (sl_join_emit(op, &pl->js, st->vals, SL_KIND_INSERT, &l, &r, time) != SL_OK) return SL_ERR;
        }
    }
    return SL_OK;
}

static const sl_op_option wj_options[] = {
    {"join-type", SL_CT_STRING, NULL, NULL,
     "inner, left, right or full."},
    {"left-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the left input (a list)."},
    {"right-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the right input (a list)."},
    {"left-window", SL_CT_JSON, NULL, NULL,
     "Window of the left input."},
    {"right-window", SL_CT_JSON, NULL, NULL,
     "Window of the right input."},
    SL_WINDOW_ZONE_OPTIONS,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_window_join = {
    .abi = SL_OP_ABI_VERSION,
    .name = "window_join",
    .flags = SL_OPF_KEYED,
    .options = wj_options,
    .max_inputs = 2,
    .plan = wj_plan_new,
    .plan_free = wj_plan_free,
    .open = wj_open,
    .process = wj_process,
    .on_timer = wj_on_timer,
    .close = wj_close,
};
