/*
 * calc.c -- the `calc` operator: a filter and a projection over each row
 * (what a Flink SQL SELECT ... WHERE compiles to).
 *
 * Config:
 *   "projection": ["id", "id % 5 AS user_id", "TO_TIMESTAMP_LTZ(..., 3) AS ts"]
 *                 optional; absent = every input column passes through
 *   "filter":     "id % 2 = 0"    optional; a row passes only when TRUE
 *   "functions":  [{"name", "symbol", "library", "declaration"}]   optional: the
 *                 user-defined functions the expressions call (core/udf_sig.h);
 *                 their objects are loaded in open(), on the TaskManager only
 *
 * plan() parses every expression once against the input schema (expr.c does
 * the type checking) and derives the output schema from the items' names;
 * the parsed trees live in the plan, which is shared read-only by every
 * subtask. process() evaluates the filter, then the projection into a value
 * array the subtask allocated in open(), and emits one borrowed row with the
 * input's row kind and timestamp. Strings the expressions build come from
 * op->scratch, which the runtime resets before each process() call, so the
 * per-record path does not allocate. A runtime error (division by zero, a
 * bad CAST) fails the task with a message naming the vertex and the item.
 *
 * Bundles. When the expressions call a Python scalar function, rows are
 * buffered (their encodings) up to "python.fn-execution.bundle.size" and
 * evaluated together under one entry into the TaskManager's interpreter
 * (sl_udf_host's bundle_begin/end), then emitted with it released: nothing
 * downstream runs while this thread holds the GIL. The bundle is flushed
 * when full, "python.fn-execution.bundle.time" after its first row
 * (proc_time), before a watermark goes on, at a checkpoint barrier
 * (snapshot_state, as local_aggregate does) and at the end of input; each
 * row keeps the watermark it came with, for CURRENT_WATERMARK.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "expr.h"
#include "jobgraph.h"
#include "operator.h"
#include "udf_sig.h"

typedef struct calc_plan {
    char *vid;        /* vertex id, for runtime messages */
    int nproj;        /* 0: no projection, rows pass through unchanged */
    sl_expr **proj;   /* nproj parsed items, in output order */
    sl_expr *filter;  /* NULL: every row passes */
    sl_udf_set *fns;  /* user-defined functions the expressions call (may be empty) */
    int bundle;       /* rows per Python bundle; 0: rows are evaluated one at a time */
    int64_t bundle_ms; /* longest a row waits in a bundle */
} calc_plan;

/* A bundle's row: its kind, timestamp and where its encoding starts. */
typedef struct calc_brow {
    sl_rowkind kind;
    int64_t ts;
    int64_t wm;      /* the operator's watermark when the row came (CURRENT_WATERMARK) */
    size_t off, len;
} calc_brow;

typedef struct calc_state {
    sl_value *vals;   /* nproj output values, rewritten for every record */
    uint64_t rows;    /* rows this subtask has read: a failing row's position */
    /* the bundle (plan->bundle > 0): input rows encoded in in, their
     * results in out (after the filter), emitted once the interpreter is
     * released */
    calc_brow *bin, *bout;
    int nin, nout;
    sl_buf in, out;
    sl_value *dec;    /* a decoded row (input or output width) */
    int64_t wm_sent;  /* the last watermark passed on */
} calc_state;

static void calc_plan_free(void *p)
{
    calc_plan *pl = p;
    if (!pl) return;
    for (int i = 0; i < pl->nproj; i++) sl_expr_destroy(pl->proj[i]);
    free(pl->proj);
    sl_expr_destroy(pl->filter);
    sl_udf_set_destroy(pl->fns);
    free(pl->vid);
    free(pl);
}

/* Parse the config into a plan and fill `out` (which it overwrites). On
 * error returns NULL, leaves `out` empty and names the vertex in err. */
static void *calc_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->nin ? pc->in[0].schema : NULL;
    sl_schema *out = pc->out;
    const char *vid = v->id ? v->id : "?";
    calc_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(vid);
    sl_schema_init(out);
    char perr[600];
    if (!(pl->fns = sl_udf_set_from_json(json_object_get(v->config, "functions"), perr, sizeof perr))) {
        sl_seterr(err, errlen, "vertex '%s': %s", vid, perr);
        goto fail;
    }

    /* the session zone the job was planned in (sql/: table.local-time-zone) */
    const char *zone = sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE);
    json_t *jf = json_object_get(v->config, "filter");
    if (jf && !json_is_null(jf)) {
        if (!json_is_string(jf)) {
            sl_seterr(err, errlen, "vertex '%s': filter must be a string expression", vid);
            goto fail;
        }
        pl->filter = sl_expr_parse_fns(json_string_value(jf), in, pl->fns, perr, sizeof perr);
        if (!pl->filter || sl_expr_set_zone(pl->filter, zone, perr, sizeof perr)) {
            sl_seterr(err, errlen, "vertex '%s': filter: %s", vid, perr);
            goto fail;
        }
        sl_type ft = sl_expr_type(pl->filter);
        if (ft != SL_T_BOOLEAN && ft != SL_T_NULL) {
            sl_seterr(err, errlen, "vertex '%s': filter must be a BOOLEAN condition, got %s", vid,
                      sl_type_name(ft));
            goto fail;
        }
    }

    json_t *jp = json_object_get(v->config, "projection");
    if (!jp || json_is_null(jp)) {
        for (int i = 0; i < in->n; i++) sl_schema_add_dt(out, in->fields[i].name, in->fields[i].dt);
        return pl;
    }
    if (!json_is_array(jp)) {
        sl_seterr(err, errlen, "vertex '%s': projection must be an array of expressions", vid);
        goto fail;
    }
    size_t n = json_array_size(jp);
    if (n == 0) {
        sl_seterr(err, errlen, "vertex '%s': projection must list at least one item", vid);
        goto fail;
    }
    if (n > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': projection has %zu items, the limit is %d", vid, n,
                  SL_MAX_FIELDS);
        goto fail;
    }
    pl->proj = sl_calloc(n, sizeof *pl->proj);
    for (size_t i = 0; i < n; i++) {
        int item = (int)i + 1;
        json_t *ji = json_array_get(jp, i);
        if (!json_is_string(ji)) {
            sl_seterr(err, errlen, "vertex '%s': projection item %d must be a string", vid, item);
            goto fail;
        }
        char *name = NULL;
        sl_expr *e = sl_expr_parse_item_fns(json_string_value(ji), in, (int)i, &name, pl->fns,
                                            perr, sizeof perr);
        if (e) pl->proj[pl->nproj++] = e;
        if (!e || sl_expr_set_zone(e, zone, perr, sizeof perr)) {
            sl_seterr(err, errlen, "vertex '%s': projection item %d: %s", vid, item, perr);
            free(name);
            goto fail;
        }
        sl_type t = sl_expr_type(e);
        bool dup = sl_schema_find(out, name) >= 0;
        if (t == SL_T_NULL || dup) {
            if (dup)
                sl_seterr(err, errlen, "vertex '%s': projection item %d: duplicate output column "
                          "'%s' (rename it with AS)", vid, item, name);
            else
                sl_seterr(err, errlen, "vertex '%s': projection item %d: the type of '%s' is "
                          "unknown (a bare NULL); use CAST(NULL AS <type>)", vid, item, name);
            free(name);
            goto fail;
        }
        sl_schema_add_dt(out, name, sl_expr_dtype(e));
        free(name);
    }
    for (int i = 0; i < pl->fns->n; i++)
        if (pl->fns->f[i]->python && pl->fns->f[i]->kind == SL_UDF_SCALAR_KIND) {
            int64_t b = sl_plan_opt_int(pc, "python.fn-execution.bundle.size");
            if (b < 1 || b > 100000) {
                sl_seterr(err, errlen, "vertex '%s': python.fn-execution.bundle.size must be from "
                          "1 to 100000, not %lld", vid, (long long)b);
                goto fail;
            }
            pl->bundle = b > 1 ? (int)b : 0;
            pl->bundle_ms = sl_plan_opt_int(pc, "python.fn-execution.bundle.time");
        }
    return pl;
fail:
    calc_plan_free(pl);
    sl_schema_free(out);
    return NULL;
}

static int calc_open(sl_op *op)
{
    const calc_plan *pl = op->plan;
    char err[700];
    if (pl->fns->n && sl_udf_set_resolve(pl->fns, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, err);
    calc_state *st = sl_calloc(1, sizeof *st);
    if (pl->nproj) st->vals = sl_calloc((size_t)pl->nproj, sizeof *st->vals);
    if (pl->bundle) {
        st->bin = sl_calloc((size_t)pl->bundle, sizeof *st->bin);
        st->bout = sl_calloc((size_t)pl->bundle, sizeof *st->bout);
        st->dec = sl_calloc((size_t)SL_MAX(op->in->n, pl->nproj) + 1, sizeof *st->dec);
    }
    st->wm_sent = INT64_MIN;
    op->priv = st;
    op->proc_time_at = INT64_MAX;
    return SL_OK;
}

/* Filter and project row (number `rowno` of this subtask): *out is the
 * result row (borrowing st->vals and scratch), or 0 when the filter drops
 * it. SL_ERR with the task failed. */
static int calc_eval(sl_op *op, const sl_row *row, uint64_t rowno, int64_t wm, sl_row *out)
{
    const calc_plan *pl = op->plan;
    calc_state *st = op->priv;
    char err[400];
    if (pl->filter) {
        sl_value pass;
        if (sl_expr_eval_wm(pl->filter, row, wm, &op->scratch, &pass, err, sizeof err) != SL_OK)
            return sl_op_fail(op, "vertex '%s': filter: %s (row %llu of subtask %d)", pl->vid, err,
                              (unsigned long long)rowno, op->subtask);
        if (pass.isnull || !pass.v.i) return 0;
    }
    if (pl->nproj == 0) {
        *out = *row;
        return 1;
    }
    for (int i = 0; i < pl->nproj; i++)
        if (sl_expr_eval_wm(pl->proj[i], row, wm, &op->scratch, &st->vals[i], err, sizeof err) !=
            SL_OK)
            return sl_op_fail(op, "vertex '%s': projection item %d: %s (row %llu of subtask %d)",
                              pl->vid, i + 1, err, (unsigned long long)rowno, op->subtask);
    *out = (sl_row){.kind = row->kind, .n = pl->nproj, .vals = st->vals, .ts = row->ts};
    return 1;
}

/* Append row r (of schema s) to buf, its place in *b. */
static void bundle_put(sl_buf *buf, calc_brow *b, const sl_row *r, const sl_schema *s)
{
    size_t n = sl_row_size(r, s);
    uint8_t *dst = (uint8_t *)sl_buf_room(buf, n);
    size_t w = sl_row_encode(r, s, dst, n);
    SL_ASSERT(w == n);
    sl_buf_added(buf, w);
    *b = (calc_brow){.kind = r->kind, .ts = r->ts, .off = buf->len - w, .len = w};
}

/* Evaluate the bundle's rows under one entry into the interpreter, then
 * emit the results with it released (downstream may wait on another
 * subtask's Python). */
static int bundle_flush(sl_op *op)
{
    const calc_plan *pl = op->plan;
    calc_state *st = op->priv;
    op->proc_time_at = INT64_MAX;
    if (!st->nin) return SL_OK;
    const sl_schema *os = pl->nproj ? op->out : op->in;
    const sl_udf_host *h = sl_udf_host_get();
    uint64_t first = st->rows - (uint64_t)st->nin + 1;
    int rc = SL_OK;
    char err[256];
    st->out.len = 0;
    st->nout = 0;
    if (h) h->bundle_begin();
    for (int i = 0; rc == SL_OK && i < st->nin; i++) {
        calc_brow *b = &st->bin[i];
        sl_row r = {.vals = st->dec};
        if (sl_row_decode((const uint8_t *)st->in.p + b->off, b->len, op->in, &r, err,
                          sizeof err) != SL_OK) {
            rc = sl_op_fail(op, "vertex '%s': bundle: %s", pl->vid, err);
            break;
        }
        r.kind = b->kind;
        r.ts = b->ts;
        size_t mark = op->scratch.used;
        sl_row o;
        int k = calc_eval(op, &r, first + (uint64_t)i, b->wm, &o);
        if (k < 0) rc = SL_ERR;
        else if (k > 0) bundle_put(&st->out, &st->bout[st->nout++], &o, os);
        op->scratch.used = mark;
    }
    if (h) h->bundle_end();
    st->nin = 0;
    st->in.len = 0;
    for (int i = 0; rc == SL_OK && i < st->nout; i++) {
        calc_brow *b = &st->bout[i];
        sl_row r = {.vals = st->dec};
        if (sl_row_decode((const uint8_t *)st->out.p + b->off, b->len, os, &r, err, sizeof err) !=
            SL_OK)
            return sl_op_fail(op, "vertex '%s': bundle: %s", pl->vid, err);
        r.kind = b->kind;
        r.ts = b->ts;
        rc = sl_op_emit(op, &r);
    }
    st->nout = 0;
    return rc;
}

static int calc_watermark(sl_op *op, int input, int64_t wm);

static int calc_process(sl_op *op, int input, sl_row *row)
{
    const calc_plan *pl = op->plan;
    calc_state *st = op->priv;
    /* a watermark the runtime advanced without calling calc_watermark (an
     * input's idleness ending) goes on before this row */
    if (SL_UNLIKELY(op->current_watermark > st->wm_sent) && calc_watermark(op, input, 0) != SL_OK)
        return SL_ERR;
    st->rows++;
    if (pl->bundle) {
        bundle_put(&st->in, &st->bin[st->nin], row, op->in);
        st->bin[st->nin++].wm = op->current_watermark;
        if (st->nin == 1 && pl->bundle_ms > 0) op->proc_time_at = sl_now_ms() + pl->bundle_ms;
        return st->nin >= pl->bundle ? bundle_flush(op) : SL_OK;
    }
    sl_row out;
    /* CURRENT_WATERMARK(ts) reads the operator's watermark */
    int k = calc_eval(op, row, st->rows, op->current_watermark, &out);
    if (k <= 0) return k;
    return sl_op_emit(op, &out);
}

static int calc_watermark(sl_op *op, int input, int64_t wm)
{
    const calc_plan *pl = op->plan;
    calc_state *st = op->priv;
    if (pl->bundle && bundle_flush(op) != SL_OK) return SL_ERR;
    if (op->current_watermark <= st->wm_sent) return SL_OK; /* what the runtime would pass on */
    st->wm_sent = op->current_watermark;
    return sl_op_emit_watermark(op, st->wm_sent);
}

static int calc_proc_time(sl_op *op, int64_t now_ms)
{
    return bundle_flush(op);
}

static int calc_end_input(sl_op *op, int input)
{
    const calc_plan *pl = op->plan;
    return pl->bundle ? bundle_flush(op) : SL_OK;
}

/* A barrier: the bundle's rows go before it, so there is nothing to snapshot. */
static int calc_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    const calc_plan *pl = op->plan;
    *blob = NULL;
    *len = 0;
    return pl->bundle ? bundle_flush(op) : SL_OK;
}

static void calc_close(sl_op *op)
{
    calc_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st->bin);
    free(st->bout);
    free(st->dec);
    sl_buf_free(&st->in);
    sl_buf_free(&st->out);
    free(st);
    op->priv = NULL;
}

static const sl_op_option calc_options[] = {
    {"projection", SL_CT_JSON, NULL, NULL,
     "Output expressions: a list of {\"name\", \"expr\"} (SQL expressions)."},
    {"filter", SL_CT_STRING, NULL, NULL,
     "A boolean SQL expression; rows for which it is not true are dropped."},
    {"functions", SL_CT_JSON, NULL, NULL,
     "User-defined functions the expressions call: a list of {\"name\", \"symbol\", "
     "\"library\", \"declaration\"} (docs/UDF.md)."},
    {"python.fn-execution.bundle.size", SL_CT_INT, "1000", NULL,
     "Rows whose Python function calls are made under one entry into the interpreter (1: row "
     "by row)."},
    {"python.fn-execution.bundle.time", SL_CT_DURATION, "1000", NULL,
     "Longest a row waits for its bundle to fill (ms)."},
    SL_OP_OPTION_LOCAL_TIME_ZONE,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_calc = {
    .abi = SL_OP_ABI_VERSION,
    .name = "calc",
    .options = calc_options,
    .plan = calc_plan_new,
    .plan_free = calc_plan_free,
    .open = calc_open,
    .process = calc_process,
    .watermark = calc_watermark,
    .end_input = calc_end_input,
    .proc_time = calc_proc_time,
    .close = calc_close,
    .snapshot_state = calc_snapshot,
};
