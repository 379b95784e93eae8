/*
 * values.c -- the `values` operator: a bounded source of constant rows, what
 * Flink's SQL `VALUES (1, 'a'), (2, 'b')` and a `SELECT` without `FROM`
 * compile to (Flink's Values node).
 *
 * Config:
 *   "rows": [["1", "'a'"], ["2", "CAST(NULL AS STRING)"]]
 *           one array per row, one constant expression text per column
 *           (calc's expressions, lang/expr.h, over no columns).
 * Output: the vertex's declared "schema"; each expression must have its
 * column's type exactly (the SQL planner writes the CASTs to the column's
 * common type) or be NULL.
 *
 * plan() parses every expression once (a bad one is refused at submission
 * with the row and column). Subtask 0 emits the rows in order, in batches,
 * and then ends (SL_DONE), so a job of values alone is bounded and
 * FINISHES; other subtasks end at once. The position (rows emitted) is the
 * subtask's operator state: a restore goes on after the last row emitted
 * before the checkpoint, and a restored subtask with no blob has no rows.
 * Rows carry no event time (SL_TS_NONE): Flink's Values has no watermark
 * either, until the end of input brings the maximum one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "jobgraph.h"
#include "operator.h"

#define VALUES_BATCH 256 /* rows per run() call */

typedef struct values_plan {
    char *vid;
    int nrows, ncols;
    sl_expr **cells;     /* nrows * ncols parsed expressions, row-major */
} values_plan;

typedef struct values_state {
    int64_t next;        /* the next row to emit; nrows: done */
    sl_value *vals;      /* ncols output values */
} values_state;

static void values_plan_free(void *p)
{
    values_plan *pl = p;
    if (!pl) return;
    for (int i = 0; i < pl->nrows * pl->ncols; i++) sl_expr_destroy(pl->cells[i]);
    free(pl->cells);
    free(pl->vid);
    free(pl);
}

static void *values_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    values_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    sl_schema none;
    sl_schema_init(&none);
    const json_t *rows = sl_plan_opt_json(pc, "rows");
    if (v->declared.n == 0) {
        sl_seterr(err, errlen, "vertex '%s': values needs a \"schema\" (its columns)", pl->vid);
        goto fail;
    }
    if (!json_is_array(rows)) {
        sl_seterr(err, errlen, "vertex '%s': option 'rows' is required: an array of rows, each "
                  "an array of constant expressions", pl->vid);
        goto fail;
    }
    pl->ncols = v->declared.n;
    pl->nrows = (int)json_array_size(rows);
    pl->cells = sl_calloc((size_t)pl->nrows * (size_t)pl->ncols + 1, sizeof *pl->cells);
    for (int r = 0; r < pl->nrows; r++) {
        const json_t *row = json_array_get(rows, (size_t)r);
        if (!json_is_array(row) || (int)json_array_size(row) != pl->ncols) {
            sl_seterr(err, errlen, "vertex '%s': row %d must be an array of %d expressions (one "
                      "per column of the schema)", pl->vid, r + 1, pl->ncols);
            goto fail;
        }
        for (int c = 0; c < pl->ncols; c++) {
            const json_t *x = json_array_get(row, (size_t)c);
            char perr[400];
            if (!json_is_string(x)) {
                sl_seterr(err, errlen, "vertex '%s': row %d, column %d must be an expression "
                          "text", pl->vid, r + 1, c + 1);
                goto fail;
            }
            sl_expr *e = sl_expr_parse(json_string_value(x), &none, perr, sizeof perr);
            if (e && sl_expr_set_zone(e, sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE), perr,
                                      sizeof perr)) {
                sl_expr_destroy(e);
                e = NULL;
            }
            if (!e) {
                sl_seterr(err, errlen, "vertex '%s': row %d, column %d: %s", pl->vid, r + 1,
                          c + 1, perr);
                goto fail;
            }
            pl->cells[r * pl->ncols + c] = e;
            sl_type t = sl_expr_type(e), want = v->declared.fields[c].type;
            if (t != want && t != SL_T_NULL) {
                sl_seterr(err, errlen, "vertex '%s': row %d, column '%s' is %s, the schema says %s",
                          pl->vid, r + 1, v->declared.fields[c].name, sl_type_name(t),
                          sl_type_name(want));
                goto fail;
            }
        }
    }
    sl_schema_copy(pc->out, &v->declared);
    return pl;
fail:
    sl_schema_free(pc->out);
    values_plan_free(pl);
    return NULL;
}

static int values_open(sl_op *op)
{
    const values_plan *pl = op->plan;
    values_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)pl->ncols + 1, sizeof *st->vals);
    st->next = op->subtask == 0 ? 0 : pl->nrows; /* the rows are subtask 0's */
    return SL_OK;
}

static void values_close(sl_op *op)
{
    values_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static int values_run(sl_op *op)
{
    const values_plan *pl = op->plan;
    values_state *st = op->priv;
    sl_row none = {.kind = SL_KIND_INSERT, .ts = SL_TS_NONE};
    for (int k = 0; k < VALUES_BATCH && st->next < pl->nrows; k++) {
        int r = (int)st->next;
        for (int c = 0; c < pl->ncols; c++) {
            char err[300];
            if (sl_expr_eval(pl->cells[r * pl->ncols + c], &none, &op->scratch, &st->vals[c],
                             err, sizeof err) != SL_OK)
                return sl_op_fail(op, "vertex '%s': row %d, column '%s': %s", pl->vid, r + 1,
                                  op->out->fields[c].name, err);
        }
        sl_row row = {.kind = SL_KIND_INSERT, .n = pl->ncols, .ts = SL_TS_NONE, .vals = st->vals};
        st->next++; /* a row handed to emit counts as emitted */
        int rc = sl_op_emit(op, &row);
        if (rc != SL_OK) return rc;
        sl_arena_reset(&op->scratch);
    }
    return st->next < pl->nrows ? SL_OK : SL_DONE;
}

/* The position: 8 bytes, little-endian. */
static int values_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    values_state *st = op->priv;
    SL_UNUSED(cpid);
    uint8_t *b = sl_malloc(8);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)st->next >> (8 * i));
    *blob = b;
    *len = 8;
    return SL_OK;
}

/* Only subtask 0's blob holds rows still owed; every other ends at once. */
static int values_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    const values_plan *pl = op->plan;
    values_state *st = op->priv;
    st->next = pl->nrows;
    for (int i = 0; i < nblobs; i++) {
        if (lens[i] != 8)
            return sl_op_fail(op, "vertex '%s': the stored position has %zu bytes, not 8",
                              pl->vid, lens[i]);
        uint64_t x = 0;
        for (int k = 0; k < 8; k++) x |= (uint64_t)((const uint8_t *)blobs[i])[k] << (8 * k);
        if ((int64_t)x < st->next) st->next = (int64_t)x;
    }
    if (st->next < 0) st->next = pl->nrows;
    return SL_OK;
}

static const sl_op_option values_options[] = {
    {"rows", SL_CT_JSON, NULL, NULL,
     "The rows: an array of arrays of constant expressions, one per column of the schema."},
    SL_OP_OPTION_LOCAL_TIME_ZONE,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_values = {
    .abi = SL_OP_ABI_VERSION,
    .name = "values",
    .flags = SL_OPF_SOURCE,
    .options = values_options,
    .plan = values_plan_new,
    .plan_free = values_plan_free,
    .open = values_open,
    .run = values_run,
    .close = values_close,
    .snapshot_state = values_snapshot,
    .restore_state = values_restore,
};
