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
 * Or, for UNNEST (no "function"):
 *   "unnest":     ["tags"]          the collection to unnest, an expression over
 *                                   the input (ARRAY, MAP or MULTISET)
 *   "ordinality": true              WITH ORDINALITY: the element's 1-based position
 *   "columns", "join-type"          as above
 * An ARRAY or MULTISET gives one column per element (a MULTISET's element as
 * often as it occurs), an ARRAY of ROWs the row's fields (a NULL element all
 * NULL), a MAP its key and value; a NULL or empty collection no row (left:
 * one padded with NULLs). Elements are read in place from the input's bytes.
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
#include "udf_guard.h"
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
    sl_expr *un;          /* UNNEST: the collection (else NULL) */
    const sl_dtype *udt;  /* its type */
    bool ord;             /* WITH ORDINALITY */
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
    sl_expr_destroy(pl->un);
    sl_udf_set_destroy(pl->fns);
    free(pl->vid);
    free(pl);
}

/* The output columns of an unnested value of type dt (after the input's). */
static int unnest_ncols(const sl_dtype *dt)
{
    if (dt->kind == SL_T_MAP) return 2;
    if (dt->kind == SL_T_ARRAY && dt->elem->kind == SL_T_ROW) return dt->elem->nfields;
    if (dt->kind == SL_T_ARRAY || dt->kind == SL_T_MULTISET) return 1;
    return -1;
}

static int unnest_plan(corr_plan *pl, sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    json_t *ju = json_object_get(v->config, "unnest"), *jcols = json_object_get(v->config, "columns");
    json_t *jord = json_object_get(v->config, "ordinality");
    const char *jt = sl_vconf_str(v, "join-type", "inner");
    char perr[600];
    if (json_is_array(ju) && json_array_size(ju) == 1) ju = json_array_get(ju, 0);
    if (!json_is_string(ju)) {
        sl_seterr(err, errlen, "vertex '%s': 'unnest' must be one expression (a string)", pl->vid);
        goto fail;
    }
    if (jord && !json_is_boolean(jord)) {
        sl_seterr(err, errlen, "vertex '%s': 'ordinality' must be true or false", pl->vid);
        goto fail;
    }
    pl->ord = json_is_true(jord);
    if (strcmp(jt, "inner") && strcmp(jt, "left")) {
        sl_seterr(err, errlen, "vertex '%s': join-type is inner or left, not '%s'", pl->vid, jt);
        goto fail;
    }
    pl->left = !strcmp(jt, "left");
    if (!(pl->un = sl_expr_parse(json_string_value(ju), in, perr, sizeof perr)) ||
        sl_expr_set_zone(pl->un, sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE), perr, sizeof perr)) {
        sl_seterr(err, errlen, "vertex '%s': unnest: %s", pl->vid, perr);
        goto fail;
    }
    pl->udt = sl_expr_dtype(pl->un);
    int n = pl->udt ? unnest_ncols(pl->udt) : -1;
    if (n < 0) {
        sl_seterr(err, errlen, "vertex '%s': UNNEST takes an ARRAY, MAP or MULTISET, got %s",
                  pl->vid, pl->udt ? pl->udt->text : sl_type_name(sl_expr_type(pl->un)));
        goto fail;
    }
    pl->nin = in->n;
    pl->ncols = n + (pl->ord ? 1 : 0);
    if (!json_is_array(jcols) || (int)json_array_size(jcols) != pl->ncols) {
        sl_seterr(err, errlen, "vertex '%s': 'columns' must name the %d column%s of the unnested "
                  "value", pl->vid, pl->ncols, pl->ncols == 1 ? "" : "s");
        goto fail;
    }
    for (int i = 0; i < in->n; i++) sl_schema_add_dt(pc->out, in->fields[i].name, in->fields[i].dt);
    const sl_dtype *e = pl->udt->elem;
    for (int i = 0; i < pl->ncols; i++) {
        const char *nm = json_string_value(json_array_get(jcols, (size_t)i));
        const sl_dtype *dt;
        if (i == n) dt = sl_dtype_nullable(sl_dtype_basic(SL_T_INT), true);
        else if (pl->udt->kind == SL_T_MAP) dt = i == 0 ? e : pl->udt->val;
        else if (e->kind == SL_T_ROW && pl->udt->kind == SL_T_ARRAY) dt = e->ftypes[i];
        else dt = e;
        if (pl->left) dt = sl_dtype_nullable(dt, false);
        if (!nm || !*nm || sl_schema_find(pc->out, nm) >= 0) {
            sl_seterr(err, errlen, "vertex '%s': column %d of the unnested value needs a name of "
                      "its own (%s)", pl->vid, i + 1, nm && *nm ? nm : "none given");
            goto fail;
        }
        sl_schema_add_dt(pc->out, nm, dt);
    }
    if (pc->out->n > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': more than %d columns", pl->vid, SL_MAX_FIELDS);
        goto fail;
    }
    return SL_OK;
fail:
    corr_plan_free(pl);
    sl_schema_free(pc->out);
    return SL_ERR;
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
    if (json_object_get(v->config, "unnest")) return unnest_plan(pl, pc, err, errlen) == SL_OK ? pl : NULL;
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
        if (x) pl->args[pl->nargs++] = x;
        if (!x || sl_expr_set_zone(x, sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE), perr,
                                   sizeof perr)) {
            sl_seterr(err, errlen, "vertex '%s': argument %d of '%s': %s", pl->vid, i + 1, fname,
                      json_is_string(a) ? perr : "not a string expression");
            goto fail;
        }
        sl_type got = sl_expr_type(x), want = pl->fn->args[i];
        bool ok = got == want || got == SL_T_NULL ||
                  ((got == SL_T_INT || got == SL_T_BIGINT) && (want == SL_T_BIGINT || want == SL_T_DOUBLE));
        if (ok && want == SL_T_DECIMAL && got == SL_T_DECIMAL) /* of the declared scale, too */
            ok = sl_expr_dtype(x)->p == pl->fn->argdt[i]->p && sl_expr_dtype(x)->s == pl->fn->argdt[i]->s;
        if (!ok) {
            sl_seterr(err, errlen, "vertex '%s': argument %d of '%s' must be %s, got %s", pl->vid,
                      i + 1, fname, want == SL_T_DECIMAL ? pl->fn->argdt[i]->text : sl_type_name(want),
                      sl_expr_dtype(x)->text);
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
    if (pl->fns && sl_udf_set_resolve(pl->fns, err, sizeof err) != SL_OK)
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
    for (int i = 0; i < pl->ncols; i++) {
        const sl_field *f = &pl->fn->cols.fields[i];
        char e2[200];
        if (f->type == SL_T_DECIMAL && sl_udf_check_dec(f->dt, &row[i], e2, sizeof e2) != SL_OK) {
            snprintf(ctx->err, sizeof ctx->err, "column '%s': %s", f->name, e2);
            return 1;
        }
    }
    sigjmp_buf *g = sl_udf_unguard(); /* downstream's crashes are not the function's */
    int rc = send(st, row);
    sl_udf_reguard(g);
    if (rc != SL_OK) {
        st->emit_rc = rc;
        return 1;
    }
    return 0;
}

/* UNNEST: one output row per element of the row's collection. */
static int unnest_process(sl_op *op, corr_state *st, const sl_row *row)
{
    const corr_plan *pl = op->plan;
    char err[400];
    sl_value c;
    if (sl_expr_eval(pl->un, row, &op->scratch, &c, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': unnest: %s (row %llu of subtask %d)", pl->vid, err,
                          (unsigned long long)st->rows, op->subtask);
    sl_value *o = st->vals + pl->nin;
    int n = pl->ncols - (pl->ord ? 1 : 0);
    bool rows_of_row = pl->udt->kind == SL_T_ARRAY && pl->udt->elem->kind == SL_T_ROW;
    memcpy(st->vals, row->vals, sizeof *st->vals * (size_t)pl->nin);
    sl_row out = {.kind = row->kind, .n = pl->nin + pl->ncols, .vals = st->vals, .ts = row->ts};
    int64_t pos = 0;
    if (!c.isnull) {
        sl_nested_reader r;
        sl_nested_open(&r, pl->udt, &c);
        sl_value e, mv;
        while (sl_nested_next(&r, &e, &mv)) {
            int64_t times = 1;
            if (pl->udt->kind == SL_T_MAP) {
                o[0] = e;
                o[1] = mv;
            } else if (pl->udt->kind == SL_T_MULTISET) {
                o[0] = e;
                times = mv.isnull ? 0 : mv.v.i;
            } else if (rows_of_row) {
                if (e.isnull) {
                    for (int i = 0; i < n; i++) o[i] = (sl_value){.isnull = true};
                } else {
                    sl_nested_reader fr;
                    sl_nested_open(&fr, pl->udt->elem, &e);
                    for (int i = 0; i < n && sl_nested_next(&fr, &o[i], NULL); i++) {}
                }
            } else {
                o[0] = e;
            }
            for (int64_t t = 0; t < times; t++) {
                if (pl->ord) o[n] = (sl_value){.v.i = ++pos};
                else pos++;
                int rc = sl_op_emit(op, &out);
                if (rc != SL_OK) return rc;
            }
        }
    }
    if (pos == 0 && pl->left) {
        for (int i = 0; i < pl->ncols; i++) o[i] = (sl_value){.isnull = true};
        return sl_op_emit(op, &out);
    }
    return SL_OK;
}

static int corr_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    if (((const corr_plan *)op->plan)->un) {
        corr_state *st = op->priv;
        st->rows++;
        return unnest_process(op, st, row);
    }
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
        volatile int frc = 0;
        int crashed = 0;
        if (pl->fn->python)
            frc = sl_udf_host_get()->call_table(fp, pl->fn, &ctx, st->args, pl->nargs);
        else
            SL_UDF_CALL(crashed, frc = ((sl_udf_table_fn)fp)(&ctx, st->args, pl->nargs));
        if (crashed)
            return sl_op_fail(op, "vertex '%s': function '%s' %s (row %llu of subtask %d)", pl->vid,
                              pl->fn->name, sl_udf_crash_text(), (unsigned long long)st->rows,
                              op->subtask);
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
    SL_OP_OPTION_LOCAL_TIME_ZONE,
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
    {"unnest", SL_CT_JSON, NULL, NULL,
     "UNNEST instead of a function: the ARRAY, MAP or MULTISET expression over the input whose "
     "elements become rows."},
    {"ordinality", SL_CT_BOOL, "false", NULL,
     "UNNEST ... WITH ORDINALITY: append each element's 1-based position (INT)."},
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
