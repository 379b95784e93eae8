/*
 * window_tvf.c -- the `window_tvf` operator: Flink's windowing table-valued
 * functions without aggregation (`SELECT * FROM TABLE(TUMBLE(TABLE t,
 * DESCRIPTOR(ts), INTERVAL '10' SECOND))`): each row goes out once per
 * event-time window it falls into, with three columns appended --
 * window_start, window_end (TIMESTAMP) and window_time (window_end - 1 ms,
 * the output's time attribute). A window join (window_join.c) or a window
 * Top-N reads this.
 *
 * Config:
 *   "window": "TUMBLE" | "HOP" | "CUMULATE"
 *   "time":   the input's event-time column (TIMESTAMP)
 *   "size":   the window size (CUMULATE: the largest window), e.g. "10 s"
 *   "slide":  HOP: the distance between window starts (size need not be a
 *             multiple of it)
 *   "step":   CUMULATE: the distance between window ends; divides size
 *   "offset": shifts the window starts: 0 <= offset < the period, which is
 *             the size (TUMBLE, CUMULATE) or the slide (HOP); the planner
 *             reduces Flink's offset (any, also negative) modulo it
 *
 * Windows are aligned to the epoch plus the offset, as Flink's
 * TimeWindow.getWindowStartWithOffset: a TUMBLE window starts at ts - ((ts
 * - offset) mod size); HOP windows are the ones of size `size` starting on
 * offset + multiples of `slide` that contain ts; CUMULATE windows start at
 * ts - ((ts - offset) mod size) and end at each multiple of `step` after
 * that start past ts, up to size. As Flink 2.x's AlignedWindowTableFunctionOperator
 * does, every row goes out for every window it falls into, also when the
 * watermark has passed that window already: lateness is for the operator
 * that reads the windows (a window join or a window Top-N drops and counts
 * a late row). Output rows keep the input's kind (append-only input
 * required) and carry window_end - 1 as their timestamp; the watermark
 * passes through. Stateless.
 *
 * "time-attribute": "ltz" (the time column is a TIMESTAMP_LTZ) with the
 * session zone ("table.local-time-zone"): windows align in the zone as the
 * window operator's do (window.c "Zones"): window_start and window_end are
 * local times, window_time (a TIMESTAMP_LTZ(3)) the instant of the last
 * local millisecond.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobgraph.h"
#include "operator.h"
#include "agg.h"
#include "temporal.h"

typedef enum { TVF_TUMBLE, TVF_HOP, TVF_CUMULATE } tvf_kind;

typedef struct tvf_plan {
    char *vid;
    tvf_kind kind;
    int tcol;           /* the event-time column */
    int nin;            /* input columns; the window's three follow */
    int64_t size, slide, offset; /* ms; slide = CUMULATE's step, TUMBLE's size */
    char *zone;         /* "time-attribute": "ltz" outside UTC: windows align here */
} tvf_plan;

typedef struct tvf_state {
    sl_value *vals;     /* the output row */
    sl_tz *tz;          /* pl->zone, opened; NULL: UTC */
} tvf_state;

static void tvf_plan_free(void *p)
{
    tvf_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->zone);
    free(pl);
}

static const char *const appended[] = {"window_start", "window_end", "window_time"};

static void *tvf_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    tvf_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    const sl_schema *in = pc->in[0].schema;
    const char *kind = sl_vconf_str(v, "window", NULL), *time = sl_vconf_str(v, "time", NULL);
    if (!kind || (strcasecmp(kind, "TUMBLE") && strcasecmp(kind, "HOP") &&
                  strcasecmp(kind, "CUMULATE"))) {
        sl_seterr(err, errlen, "vertex '%s': 'window' must be TUMBLE, HOP or CUMULATE, not '%s'",
                  pl->vid, kind ? kind : "(absent)");
        goto fail;
    }
    pl->kind = !strcasecmp(kind, "TUMBLE") ? TVF_TUMBLE : !strcasecmp(kind, "HOP") ? TVF_HOP
                                                                                  : TVF_CUMULATE;
    pl->tcol = time ? sl_schema_find(in, time) : -1;
    if (pl->tcol < 0 || in->fields[pl->tcol].type != SL_T_TIMESTAMP) {
        sl_seterr(err, errlen, "vertex '%s': 'time' must name a TIMESTAMP column of the input, not "
                  "'%s'", pl->vid, time ? time : "(absent)");
        goto fail;
    }
    const char *second = pl->kind == TVF_HOP ? "slide" : pl->kind == TVF_CUMULATE ? "step" : NULL;
    const char *unused[] = {pl->kind == TVF_HOP ? NULL : "slide",
                            pl->kind == TVF_CUMULATE ? NULL : "step"};
    for (int i = 0; i < 2; i++)
        if (unused[i] && json_object_get(v->config, unused[i])) {
            sl_seterr(err, errlen, "vertex '%s': option '%s' does not apply to %s windows", pl->vid,
                      unused[i], kind);
            goto fail;
        }
    if (sl_vconf_interval(v, "size", 0, &pl->size, err, errlen) != SL_OK) goto fail;
    if (pl->size <= 0) {
        sl_seterr(err, errlen, "vertex '%s': 'size' must be a positive interval", pl->vid);
        goto fail;
    }
    pl->slide = pl->size;
    if (second) {
        if (sl_vconf_interval(v, second, 0, &pl->slide, err, errlen) != SL_OK) goto fail;
        if (pl->slide <= 0 || pl->slide > pl->size) {
            sl_seterr(err, errlen, "vertex '%s': '%s' must be positive and at most 'size'", pl->vid,
                      second);
            goto fail;
        }
    }
    if (pl->kind == TVF_CUMULATE && pl->size % pl->slide) {
        sl_seterr(err, errlen, "vertex '%s': a CUMULATE window's size (%lld ms) must be a multiple "
                  "of its step (%lld ms)", pl->vid, (long long)pl->size, (long long)pl->slide);
        goto fail;
    }
    if (sl_vconf_interval(v, "offset", 0, &pl->offset, err, errlen) != SL_OK) goto fail;
    if (pl->offset >= (pl->kind == TVF_HOP ? pl->slide : pl->size)) {
        sl_seterr(err, errlen, "vertex '%s': 'offset' must be less than '%s'", pl->vid,
                  pl->kind == TVF_HOP ? "slide" : "size");
        goto fail;
    }
    if (in->n + 3 > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': the input has too many columns to add the window's",
                  pl->vid);
        goto fail;
    }
    bool ltz;
    if (sl_window_zone(pc, &ltz, &pl->zone, err, errlen) != SL_OK) goto fail;
    const sl_dtype *wtdt = sl_dtype_basic(SL_T_TIMESTAMP);
    if (ltz && sl_dtype_parse("TIMESTAMP_LTZ(3)", &wtdt, err, errlen) != SL_OK) goto fail;
    sl_schema_copy(pc->out, in);
    for (int i = 0; i < 3; i++) {
        if (sl_schema_find(in, appended[i]) >= 0) {
            sl_seterr(err, errlen, "vertex '%s': the input already has a column '%s'", pl->vid,
                      appended[i]);
            sl_schema_free(pc->out);
            goto fail;
        }
        if (i == 2) sl_schema_add_dt(pc->out, appended[i], wtdt);
        else sl_schema_add(pc->out, appended[i], SL_T_TIMESTAMP);
    }
    pl->nin = in->n;
    return pl;
fail:
    tvf_plan_free(pl);
    return NULL;
}

static int tvf_open(sl_op *op)
{
    const tvf_plan *pl = op->plan;
    tvf_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)pl->nin + 3, sizeof(sl_value));
    char zerr[300];
    if (pl->zone && !(st->tz = sl_tz_open(pl->zone, SL_TZ_JAVA_TIME, zerr, sizeof zerr)))
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, zerr);
    return SL_OK;
}

static void tvf_close(sl_op *op)
{
    tvf_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    sl_tz_destroy(st->tz);
    free(st);
    op->priv = NULL;
}

static int64_t floor_mod(int64_t x, int64_t m)
{
    int64_t r = x % m;
    return r < 0 ? r + m : r;
}

/* One window of the row into the output (late or not, as in Flink).
 * SL_OK, or SL_ERR from downstream. */
static int send(sl_op *op, const sl_row *row, int64_t start, int64_t end)
{
    const tvf_plan *pl = op->plan;
    tvf_state *st = op->priv;
    sl_value *vals = st->vals;
    memcpy(vals, row->vals, sizeof *vals * (size_t)pl->nin);
    /* in a zone: start and end are local times, window_time an instant */
    int64_t t[3] = {start, end, st->tz ? sl_tz_to_utc(st->tz, end - 1) : end - 1};
    for (int i = 0; i < 3; i++) vals[pl->nin + i] = (sl_value){.v.i = t[i]};
    sl_row out = {.kind = row->kind, .n = pl->nin + 3, .vals = vals, .ts = t[2]};
    return sl_op_emit(op, &out);
}

static int tvf_process(sl_op *op, int input, sl_row *row)
{
    const tvf_plan *pl = op->plan;
    SL_UNUSED(input);
    if (SL_UNLIKELY(row->kind != SL_KIND_INSERT))
        return sl_op_fail(op, "vertex '%s': a window TVF takes an append-only input, got a %s row",
                          pl->vid, sl_rowkind_short(row->kind));
    const sl_value *tv = &row->vals[pl->tcol];
    if (SL_UNLIKELY(tv->isnull))
        return sl_op_fail(op, "vertex '%s': the time attribute is NULL", pl->vid);
    tvf_state *st = op->priv;
    int64_t ts = st->tz ? sl_tz_to_local(st->tz, tv->v.i) : tv->v.i; /* align in the zone */
    int rc = SL_OK;
    switch (pl->kind) {
    case TVF_TUMBLE: {
        int64_t start = ts - floor_mod(ts - pl->offset, pl->size);
        rc = send(op, row, start, start + pl->size);
        break;
    }
    case TVF_HOP:
        /* the latest start at or before ts, then back while the window still holds ts */
        for (int64_t s = ts - floor_mod(ts - pl->offset, pl->slide); rc == SL_OK && s > ts - pl->size;
             s -= pl->slide)
            rc = send(op, row, s, s + pl->size);
        break;
    case TVF_CUMULATE: {
        int64_t start = ts - floor_mod(ts - pl->offset, pl->size);
        for (int64_t e = start + pl->slide; rc == SL_OK && e <= start + pl->size; e += pl->slide)
            if (e > ts) rc = send(op, row, start, e);
        break;
    }
    }
    return rc;
}

static const sl_op_option tvf_options[] = {
    {"window", SL_CT_JSON, NULL, NULL,
     "The window: {\"type\": TUMBLE|HOP|CUMULATE|SESSION, \"size\", ...}."},
    {"time", SL_CT_STRING, NULL, NULL,
     "Time attribute: event (a column) or processing time."},
    {"size", SL_CT_STRING, NULL, NULL,
     "Window size (an interval)."},
    {"slide", SL_CT_STRING, NULL, NULL,
     "HOP: the slide (an interval)."},
    {"step", SL_CT_STRING, NULL, NULL,
     "CUMULATE: the step (an interval)."},
    {"offset", SL_CT_STRING, NULL, NULL,
     "Window offset (an interval)."},
    SL_WINDOW_ZONE_OPTIONS,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_window_tvf = {
    .abi = SL_OP_ABI_VERSION,
    .name = "window_tvf",
    .options = tvf_options,
    .plan = tvf_plan_new,
    .plan_free = tvf_plan_free,
    .open = tvf_open,
    .process = tvf_process,
    .close = tvf_close,
};
