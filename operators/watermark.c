/*
 * watermark.c -- the `watermark` operator: a bounded out-of-orderness
 * watermark assigner on a TIMESTAMP column (Flink's
 * WatermarkStrategy.forBoundedOutOfOrderness, with withIdleness).
 *
 * Config:
 *   "column":       "ts"     the event-time column; must be TIMESTAMP
 *   "delay":        "5 s"    how far events may arrive out of order
 *                            (default 0; "INTERVAL '5' SECOND" works too)
 *   "idle-timeout": "30 s"   mark the output idle after this long without a
 *                            row (default 0 = never)
 *   "library", "function"    instead of "column": a timestamp assigner
 *                            (sl_timestamp_assigner, api/datastream.h)
 *                            in a C job's shared object, called per row
 *   "rule":         "datastream" (default) or "sql": how the watermark
 *                            follows the largest timestamp (below)
 *   "interval":     "200 ms" how often the watermark is emitted
 *                            (pipeline.auto-watermark-interval; the operator
 *                            cannot read daemon configuration, so the job
 *                            carries it; "0 ms" = after every row that
 *                            advances it)
 *
 * process() stamps each row's event timestamp from the column and forwards
 * the row unchanged; a NULL timestamp fails the task, as a NULL rowtime does
 * in Flink. It only remembers the largest timestamp seen and counts rows, so
 * the per-record path reads no clock and allocates nothing.
 *
 * Emission is periodic, driven by the runtime's processing-time callback
 * (op->proc_time_at / proc_time()): each tick emits
 *     watermark = max timestamp seen - delay - 1 ms
 * when that is larger than the last one emitted. The "- 1 ms" is Flink's
 * DataStream rule (forBoundedOutOfOrderness): a watermark W promises no more
 * rows with timestamp <= W, and a row exactly `delay` behind the maximum is
 * still on time. With "rule": "sql" (what the SQL planner sets) it is Flink
 * SQL's instead: `WATERMARK FOR ts AS ts - INTERVAL '5' SECOND` evaluates
 * the expression on the largest timestamp, watermark = max - delay, so a
 * row exactly `delay` behind the maximum is late. Idleness is judged at the
 * same ticks (so to the resolution of "interval"): no row since the last
 * tick for idle-timeout → sl_op_emit_idle(op, 1); the next row →
 * sl_op_emit_idle(op, 0) before it is forwarded. Watermarks arriving from
 * upstream are ignored except the end-of-input maximum (INT64_MAX), which is
 * forwarded so every downstream window fires.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsfn.h"
#include "expr.h"
#include "jobgraph.h"
#include "operator.h"
#include "userfn.h"

typedef struct wm_plan {
    char *vid;            /* vertex id, for runtime messages */
    char *colname;        /* the time column's name, for messages */
    int col;              /* its index in the input; -1 with an assigner */
    char *library, *function; /* the timestamp assigner, or NULL */
    int64_t delay_ms;     /* bounded out-of-orderness */
    int64_t idle_ms;      /* 0: idleness detection off */
    int64_t interval_ms;  /* 0: emit after every advancing row */
    int64_t slack_ms;     /* 1 (DataStream rule: max - delay - 1) or 0 (SQL: max - delay) */
} wm_plan;

typedef struct wm_state {
    int64_t max_ts;       /* largest event timestamp seen (INT64_MIN: none) */
    int64_t emitted;      /* last watermark emitted (INT64_MIN: none) */
    uint64_t rows_since_tick; /* rows since the last periodic tick */
    int64_t last_active;  /* wall-clock ms of the last tick that saw rows
                             (INT64_MIN before the first tick) */
    int idle;             /* the output is currently marked idle */
    int ended;            /* the end-of-input watermark went out */
    const sl_timestamp_assigner *assigner; /* loaded from the plan's library, or NULL */
    void *dl;             /* its dlopen handle */
} wm_state;

static void wm_plan_free(void *p)
{
    wm_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->colname);
    free(pl->library);
    free(pl->function);
    free(pl);
}

static void *wm_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->nin ? pc->in[0].schema : NULL;
    sl_schema *out = pc->out;
    const char *vid = v->id ? v->id : "?";
    wm_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(vid);
    sl_schema_init(out);

    json_t *jc = json_object_get(v->config, "column");
    const char *fn = sl_vconf_str(v, "function", NULL), *lib = sl_vconf_str(v, "library", NULL);
    if (fn && jc) {
        sl_seterr(err, errlen, "vertex '%s': a timestamp comes from 'column' or from a "
                  "'function', not both", vid);
        goto fail;
    }
    if (fn) { /* withTimestampAssigner */
        if (!*fn || !lib || (lib[0] != '/' && !sl_ds_jar_ref_ok(lib))) {
            sl_seterr(err, errlen, "vertex '%s': a timestamp assigner needs 'function' and "
                      "'library' (the absolute path of the job's shared object, or jar:<id>)", vid);
            goto fail;
        }
        pl->col = -1;
        pl->library = sl_strdup(lib);
        pl->function = sl_strdup(fn);
        pl->colname = sl_sprintf("%s()", fn);
    } else if (!json_is_string(jc)) {
        sl_seterr(err, errlen, "vertex '%s': option 'column' (the TIMESTAMP column that holds "
                  "event time) is required", vid);
        goto fail;
    }
    const char *cname = fn ? NULL : json_string_value(jc);
    pl->col = fn ? -1 : sl_schema_find(in, cname);
    if (!fn && pl->col < 0) {
        sl_seterr(err, errlen, "vertex '%s': column '%s' is not in the input", vid, cname);
        goto fail;
    }
    if (!fn && in->fields[pl->col].type != SL_T_TIMESTAMP) {
        sl_seterr(err, errlen, "vertex '%s': column '%s' is %s; a watermark needs a TIMESTAMP "
                  "column (use TO_TIMESTAMP_LTZ(x, 3) in a calc first)", vid, cname,
                  sl_type_name(in->fields[pl->col].type));
        goto fail;
    }
    if (!fn) pl->colname = sl_strdup(in->fields[pl->col].name);
    if (sl_vconf_interval(v, "delay", 0, &pl->delay_ms, err, errlen) != SL_OK ||
        sl_vconf_interval(v, "idle-timeout", 0, &pl->idle_ms, err, errlen) != SL_OK ||
        sl_vconf_interval(v, "interval", 200, &pl->interval_ms, err, errlen) != SL_OK)
        goto fail;
    pl->slack_ms = strcmp(sl_vconf_str(v, "rule", "datastream"), "sql") ? 1 : 0;
    sl_schema_copy(out, in);
    return pl;
fail:
    wm_plan_free(pl);
    sl_schema_free(out);
    return NULL;
}

/* When the next periodic tick is due (wall clock), or none once ended. */
static void wm_schedule(sl_op *op, int64_t now)
{
    const wm_plan *pl = op->plan;
    wm_state *st = op->priv;
    if (st->ended || pl->interval_ms == 0) {
        /* interval 0 emits inline; a tick is still needed for idleness */
        op->proc_time_at = (!st->ended && pl->idle_ms > 0) ? now + pl->idle_ms : INT64_MAX;
        return;
    }
    op->proc_time_at = now + pl->interval_ms;
}

static int wm_open(sl_op *op)
{
    wm_state *st = sl_calloc(1, sizeof *st);
    st->max_ts = INT64_MIN;
    st->emitted = INT64_MIN;
    st->last_active = INT64_MIN;
    op->priv = st;
    const wm_plan *pl = op->plan;
    if (pl->function) {
        st->assigner = sl_ds_load_user(op, pl->library, pl->function, &st->dl);
        if (!st->assigner) return SL_ERR;
        if (!st->assigner->extract_timestamp)
            return sl_op_fail(op, "vertex '%s': '%s' has no extract_timestamp", pl->vid, pl->function);
    }
    wm_schedule(op, sl_now_ms());
    return SL_OK;
}

/* max_ts - delay - slack (1 ms, or 0 for SQL), saturating at the int64 floor. */
static int64_t wm_candidate(const wm_plan *pl, const wm_state *st)
{
    if (st->max_ts == INT64_MIN) return INT64_MIN;
    if (st->max_ts < INT64_MIN + pl->delay_ms + pl->slack_ms) return INT64_MIN;
    return st->max_ts - pl->delay_ms - pl->slack_ms;
}

static int wm_emit_if_advanced(sl_op *op)
{
    const wm_plan *pl = op->plan;
    wm_state *st = op->priv;
    int64_t wm = wm_candidate(pl, st);
    if (wm <= st->emitted || st->ended) return SL_OK;
    st->emitted = wm;
    return sl_op_emit_watermark(op, wm);
}

static int wm_process(sl_op *op, int input, sl_row *row)
{
    const wm_plan *pl = op->plan;
    wm_state *st = op->priv;
    int64_t ts;
    if (st->assigner) {
        ts = st->assigner->extract_timestamp(row, row->ts);
    } else {
        const sl_value *v = &row->vals[pl->col];
        if (v->isnull)
            return sl_op_fail(op, "vertex '%s': column '%s' is NULL in a row; an event-time "
                              "column must not be NULL (filter such rows out or COALESCE the "
                              "column upstream)", pl->vid, pl->colname);
        ts = v->v.i;
    }
    if (st->idle) {
        st->idle = 0;
        if (sl_op_emit_idle(op, 0) != SL_OK) return SL_ERR;
    }
    if (SL_UNLIKELY(op->proc_time_at == INT64_MAX && !st->ended && pl->interval_ms > 0))
        wm_schedule(op, sl_now_ms()); /* the runtime reset it after open() */
    st->rows_since_tick++;
    if (ts > st->max_ts) st->max_ts = ts;
    sl_row out = *row;
    out.ts = ts;
    int rc = sl_op_emit(op, &out);
    if (rc == SL_OK && pl->interval_ms == 0) rc = wm_emit_if_advanced(op);
    return rc;
}

/* The periodic tick: emit an advanced watermark, judge idleness. */
static int wm_proc_time(sl_op *op, int64_t now)
{
    const wm_plan *pl = op->plan;
    wm_state *st = op->priv;
    int rc = SL_OK;
    if (st->ended) {
        op->proc_time_at = INT64_MAX;
        return SL_OK;
    }
    if (st->rows_since_tick > 0 || st->last_active == INT64_MIN) st->last_active = now;
    st->rows_since_tick = 0;
    if (!st->idle) rc = wm_emit_if_advanced(op);
    if (rc == SL_OK && pl->idle_ms > 0 && !st->idle && now - st->last_active >= pl->idle_ms) {
        st->idle = 1;
        rc = sl_op_emit_idle(op, 1);
    }
    wm_schedule(op, now);
    return rc;
}

/* Upstream watermarks are superseded by ours, except the end of input. */
static int wm_watermark(sl_op *op, int input, int64_t wm)
{
    wm_state *st = op->priv;
    op->current_watermark = wm;
    if (wm != INT64_MAX || st->ended) return SL_OK;
    st->ended = 1;
    op->proc_time_at = INT64_MAX;
    if (st->idle) {
        st->idle = 0;
        if (sl_op_emit_idle(op, 0) != SL_OK) return SL_ERR;
    }
    st->emitted = INT64_MAX;
    return sl_op_emit_watermark(op, INT64_MAX);
}

static void wm_close(sl_op *op)
{
    wm_state *st = op->priv;
    if (st && st->dl) dlclose(st->dl);
    free(op->priv);
    op->priv = NULL;
}

static const sl_op_option wm_options[] = {
    {"column", SL_CT_STRING, NULL, NULL,
     "Column the operator reads."},
    {"delay", SL_CT_STRING, NULL, NULL,
     "Bounded out-of-orderness: the watermark trails the largest timestamp by this."},
    {"idle-timeout", SL_CT_STRING, NULL, NULL,
     "Silence after which the input is marked idle (a duration; 0: never)."},
    {"interval", SL_CT_STRING, NULL, NULL,
     "Watermark emission interval; the JobManager fills in pipeline.auto-watermark-interval."},
    {"rule", SL_CT_ENUM, "datastream", "datastream,sql",
     "datastream: max - delay - 1 ms (forBoundedOutOfOrderness); sql: max - delay (WATERMARK FOR ... AS ts - INTERVAL)."},
    {"library", SL_CT_STRING, NULL, NULL,
     "Shared object (an uploaded C job's id or a path) holding the user function."},
    {"function", SL_CT_STRING, NULL, NULL,
     "Name of the function table the library exports."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_watermark = {
    .abi = SL_OP_ABI_VERSION,
    .name = "watermark",
    .options = wm_options,
    .plan = wm_plan_new,
    .plan_free = wm_plan_free,
    .open = wm_open,
    .process = wm_process,
    .watermark = wm_watermark,
    .close = wm_close,
    .proc_time = wm_proc_time,
};
