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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
} calc_plan;

typedef struct calc_state {
    sl_value *vals;   /* nproj output values, rewritten for every record */
    uint64_t rows;    /* rows this subtask has read: a failing row's position */
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

    json_t *jf = json_object_get(v->config, "filter");
    if (jf && !json_is_null(jf)) {
        if (!json_is_string(jf)) {
            sl_seterr(err, errlen, "vertex '%s': filter must be a string expression", vid);
            goto fail;
        }
        pl->filter = sl_expr_parse_fns(json_string_value(jf), in, pl->fns, perr, sizeof perr);
        if (!pl->filter) {
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
        if (!e) {
            sl_seterr(err, errlen, "vertex '%s': projection item %d: %s", vid, item, perr);
            goto fail;
        }
        pl->proj[pl->nproj++] = e;
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
    op->priv = st;
    return SL_OK;
}

static int calc_process(sl_op *op, int input, sl_row *row)
{
    const calc_plan *pl = op->plan;
    calc_state *st = op->priv;
    char err[400];
    st->rows++;
    /* CURRENT_WATERMARK(ts) reads the operator's watermark */
    int64_t wm = op->current_watermark;
    if (pl->filter) {
        sl_value pass;
        if (sl_expr_eval_wm(pl->filter, row, wm, &op->scratch, &pass, err, sizeof err) != SL_OK)
            return sl_op_fail(op, "vertex '%s': filter: %s (row %llu of subtask %d)", pl->vid, err,
                              (unsigned long long)st->rows, op->subtask);
        if (pass.isnull || !pass.v.i) return SL_OK;
    }
    if (pl->nproj == 0) return sl_op_emit(op, row);
    for (int i = 0; i < pl->nproj; i++)
        if (sl_expr_eval_wm(pl->proj[i], row, wm, &op->scratch, &st->vals[i], err, sizeof err) !=
            SL_OK)
            return sl_op_fail(op, "vertex '%s': projection item %d: %s (row %llu of subtask %d)",
                              pl->vid, i + 1, err, (unsigned long long)st->rows, op->subtask);
    sl_row outrow = {.kind = row->kind, .n = pl->nproj, .vals = st->vals, .ts = row->ts};
    return sl_op_emit(op, &outrow);
}

static void calc_close(sl_op *op)
{
    calc_state *st = op->priv;
    if (!st) return;
    free(st->vals);
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
    .close = calc_close,
};
