/*
 * correlate.c -- the `correlate` operator: a user-defined table function's
 * rows for each input row (Flink's LATERAL TABLE(f(x)): CROSS JOIN LATERAL
 * and LEFT JOIN LATERAL ... ON TRUE).
 *
 * Config:
 *   "function":  "split"            the table function (one of "functions")
 *   "args":      ["s", "id + 1"]    its arguments, expressions over the input
 *   "columns":   ["w", "p"]         optional: names of the function's columns
 *                                   (default: as declared)
 *   "join-type": "inner" | "left"   left: an input row the function gives no
 *                                   row for is emitted once with NULLs
 *   "functions": [...]              the user functions called (core/udf_sig.h)
 *   "max-rows-per-call": 100000     the bound of one call's output
 *
 * Output: the input's columns, then the function's. process() evaluates the
 * arguments and calls the function once; each row it emits (ctx->emit) is
 * completed with the input's values in a value array allocated in open()
 * and sent downstream at once, with the input's row kind and timestamp, so
 * nothing is buffered and nothing allocated per record. Stateless: nothing
 * to snapshot. A call that emits more than max-rows-per-call rows, or
 * returns an error, fails the task naming the function and the row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "jobgraph.h"
#include "operator.h"
#include "udf_sig.h"

typedef struct corr_plan {
    char *vid;
    sl_udf_set *fns;
    sl_udf_sig *fn;       /* the table function (in fns) */
    int nargs;
    sl_expr **args;
    bool left;
    int nin, ncols;       /* input columns, function columns */
    int64_t max_rows;
} corr_plan;

typedef struct corr_state {
    sl_op *op;
    const sl_row *in;     /* the row being processed */
    sl_value *vals;       /* nin + ncols output values */
    sl_value args[SL_UDF_MAX_ARGS];
    int64_t emitted;      /* rows of the current call */
    uint64_t rows;        /* input rows so far: a failing row's position */
    int emit_rc;          /* the first downstream error of the current call */
} corr_state;

static void corr_plan_free(void *p)
{
    corr_plan *pl = p;
    if (!pl) return;
    for (int i = 0; i < pl->nargs; i++) sl_expr_destroy(pl->args[i]);
    free(pl->args);
    sl_udf_set_destroy(pl->fns);
    free(pl->vid);
    free(pl);
}

static void *corr_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->nin ? pc->in[0].schema : NULL;
    corr_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    char perr[600];
    const char *fname = sl_vconf_str(v, "function", NULL), *jt = sl_vconf_str(v, "join-type", "inner");
    json_t *jargs = json_object_get(v->config, "args"), *jcols = json_object_get(v->config, "columns");
    if (!in) {
        sl_seterr(err, errlen, "vertex '%s': correlate needs an input", pl->vid);
        goto fail;
    }
    if (sl_vconf_int(v, "max-rows-per-call", 100000, &pl->max_rows, err, errlen) != SL_OK) goto fail;
    if (pl->max_rows < 1) {
        sl_seterr(err, errlen, "vertex '%s': max-rows-per-call must be at least 1", pl->vid);
        goto fail;
    }
    if (!(pl->fns = sl_udf_set_from_json(json_object_get(v->config, "functions"), perr, sizeof perr))) {
        sl_seterr(err, errlen, "vertex '%s': %s", pl->vid, perr);
        goto fail;
    }
    if (!fname || !(pl->fn = sl_udf_set_find(pl->fns, fname)) || pl->fn->kind != SL_UDF_TABLE_KIND) {
        sl_seterr(err, errlen, "vertex '%s': 'function' must name a table function of 'functions'",
                  pl->vid);
        goto fail;
    }
    if (strcmp(jt, "inner") && strcmp(jt, "left")) {
        sl_seterr(err, errlen, "vertex '%s': join-type is inner or left, not '%s'", pl->vid, jt);
        goto fail;
    }
    pl->left = !strcmp(jt, "left");
    if (!json_is_array(jargs) || (int)json_array_size(jargs) != pl->fn->nargs) {
        sl_seterr(err, errlen, "vertex '%s': 'args' must list the %d argument%s of '%s'", pl->vid,
                  pl->fn->nargs, pl->fn->nargs == 1 ? "" : "s", fname);
        goto fail;
    }
    pl->args = sl_calloc((size_t)pl->fn->nargs + 1, sizeof *pl->args);
    for (int i = 0; i < pl->fn->nargs; i++) {
        json_t *a = json_array_get(jargs, (size_t)i);
        sl_expr *x = json_is_string(a) ? sl_expr_parse_fns(json_string_value(a), in, pl->fns, perr,
                                                           sizeof perr) : NULL;
        if (!x) {
            sl_seterr(err, errlen, "vertex '%s': argument %d of '%s': %s", pl->vid, i + 1, fname,
                      json_is_string(a) ? perr : "not a string expression");
            goto fail;
        }
        pl->args[pl->nargs++] = x;
        sl_type got = sl_expr_type(x), want = pl->fn->args[i];
        bool ok = got == want || got == SL_T_NULL ||
                  ((got == SL_T_INT || got == SL_T_BIGINT) && (want == SL_T_BIGINT || want == SL_T_DOUBLE));
        if (!ok) {
            sl_seterr(err, errlen, "vertex '%s': argument %d of '%s' must be %s, got %s", pl->vid,
                      i + 1, fname, sl_type_name(want), sl_type_name(got));
            goto fail;
        }
    }
    pl->nin = in->n;
    pl->ncols = pl->fn->cols.n;
    if (jcols && (!json_is_array(jcols) || (int)json_array_size(jcols) != pl->ncols)) {
        sl_seterr(err, errlen, "vertex '%s': 'columns' must name the %d column%s of '%s'", pl->vid,
                  pl->ncols, pl->ncols == 1 ? "" : "s", fname);
        goto fail;
    }
    for (int i = 0; i < in->n; i++) sl_schema_add_dt(pc->out, in->fields[i].name, in->fields[i].dt);
    for (int i = 0; i < pl->ncols; i++) {
        const char *nm = jcols ? json_string_value(json_array_get(jcols, (size_t)i)) : pl->fn->cols.fields[i].name;
        if (!nm || !*nm || sl_schema_find(pc->out, nm) >= 0) {
            sl_seterr(err, errlen, "vertex '%s': column %d of '%s' needs a name of its own (%s)",
                      pl->vid, i + 1, fname, nm && *nm ? nm : "none given");
            goto fail;
        }
        sl_schema_add_dt(pc->out, nm, pl->fn->cols.fields[i].dt);
    }
    if (pc->out->n > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': more than %d columns", pl->vid, SL_MAX_FIELDS);
        goto fail;
    }
    return pl;
fail:
    corr_plan_free(pl);
    sl_schema_free(pc->out);
    return NULL;
}

static int corr_open(sl_op *op)
{
    const corr_plan *pl = op->plan;
    char err[700];
    if (sl_udf_set_resolve(pl->fns, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, err);
    corr_state *st = sl_calloc(1, sizeof *st);
    st->op = op;
    st->vals = sl_calloc((size_t)(pl->nin + pl->ncols), sizeof *st->vals);
    op->priv = st;
    return SL_OK;
}

static void *corr_alloc(sl_udf_ctx *ctx, size_t n)
{
    corr_state *st = ctx->host;
    return sl_arena_alloc(&st->op->scratch, n);
}

static int send(corr_state *st, const sl_value *fnrow)
{
    const corr_plan *pl = st->op->plan;
    memcpy(st->vals, st->in->vals, sizeof *st->vals * (size_t)pl->nin);
    for (int i = 0; i < pl->ncols; i++) {
        if (fnrow) st->vals[pl->nin + i] = fnrow[i];
        else st->vals[pl->nin + i] = (sl_value){.isnull = true};
    }
    sl_row out = {.kind = st->in->kind, .n = pl->nin + pl->ncols, .vals = st->vals, .ts = st->in->ts};
    return sl_op_emit(st->op, &out);
}

static int corr_emit(sl_udf_ctx *ctx, const sl_value *row)
{
    corr_state *st = ctx->host;
    const corr_plan *pl = st->op->plan;
    if (st->emit_rc != SL_OK) return 1;
    if (++st->emitted > pl->max_rows) {
        snprintf(ctx->err, sizeof ctx->err, "emitted more than max-rows-per-call (%lld) rows for "
                 "one input row", (long long)pl->max_rows);
        return 1;
    }
    int rc = send(st, row);
    if (rc != SL_OK) {
        st->emit_rc = rc;
        return 1;
    }
    return 0;
}

static int corr_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    const corr_plan *pl = op->plan;
    corr_state *st = op->priv;
    char err[400];
    st->rows++;
    st->in = row;
    st->emitted = 0;
    st->emit_rc = SL_OK;
    bool skip = false;
    for (int i = 0; i < pl->nargs; i++) {
        if (sl_expr_eval(pl->args[i], row, &op->scratch, &st->args[i], err, sizeof err) != SL_OK)
            return sl_op_fail(op, "vertex '%s': argument %d of '%s': %s (row %llu of subtask %d)",
                              pl->vid, i + 1, pl->fn->name, err, (unsigned long long)st->rows,
                              op->subtask);
        if (st->args[i].isnull) {
            skip = skip || pl->fn->strict;
        } else if (pl->fn->args[i] == SL_T_DOUBLE && sl_expr_type(pl->args[i]) != SL_T_DOUBLE) {
            st->args[i].v.d = (double)st->args[i].v.i;
        }
    }
    if (!skip) {
        void *fp = atomic_load_explicit(&pl->fn->fn, memory_order_acquire);
        sl_udf_ctx ctx = {.abi = SL_UDF_ABI_VERSION, .alloc = corr_alloc, .emit = corr_emit, .host = st};
        /* a Python function goes through the TaskManager's Python host (core/udf_sig.h) */
        int frc = pl->fn->python
                      ? sl_udf_host_get()->call_table(fp, pl->fn, &ctx, st->args, pl->nargs)
                      : ((sl_udf_table_fn)fp)(&ctx, st->args, pl->nargs);
        if (st->emit_rc != SL_OK) return st->emit_rc; /* downstream failed: its message stands */
        if (frc != 0 || st->emitted > pl->max_rows) {
            ctx.err[sizeof ctx.err - 1] = 0;
            return sl_op_fail(op, "vertex '%s': function '%s' failed: %s (row %llu of subtask %d)",
                              pl->vid, pl->fn->name, ctx.err[0] ? ctx.err : "(no message)",
                              (unsigned long long)st->rows, op->subtask);
        }
    }
    if (st->emitted == 0 && pl->left) return send(st, NULL);
    return SL_OK;
}

static void corr_close(sl_op *op)
{
    corr_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static const sl_op_option corr_options[] = {
    {"function", SL_CT_STRING, NULL, NULL, "The table function (a name in 'functions')."},
    {"args", SL_CT_JSON, NULL, NULL, "Its arguments: a list of SQL expressions over the input."},
    {"columns", SL_CT_JSON, NULL, NULL,
     "Names of the function's output columns (default: as declared)."},
    {"join-type", SL_CT_ENUM, "inner", "inner,left",
     "left: an input row the function gives no row for is emitted once, padded with NULLs."},
    {"functions", SL_CT_JSON, NULL, NULL,
     "User-defined functions called: a list of {\"name\", \"symbol\", \"library\", "
     "\"declaration\"} (docs/UDF.md)."},
    {"max-rows-per-call", SL_CT_INT, "100000", NULL,
     "Most rows one call may emit; more fails the task."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_correlate = {
    .abi = SL_OP_ABI_VERSION,
    .name = "correlate",
    .options = corr_options,
    .plan = corr_plan_new,
    .plan_free = corr_plan_free,
    .open = corr_open,
    .process = corr_process,
    .close = corr_close,
};
