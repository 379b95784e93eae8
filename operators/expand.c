/*
 * expand.c -- the `expand` operator: each input row becomes one row per
 * grouping set, Flink's Expand under GROUPING SETS, ROLLUP and CUBE
 * (sql/plan_gsets.c plans it before the aggregate).
 *
 * Config:
 *   "keys":      ["k0", "k1"]          the grouping columns (input columns; may be
 *                                      empty: GROUP BY (), GROUPING SETS ((), ()))
 *   "sets":      [["k0", "k1"], ["k0"], []]   per grouping set, the keys it keeps;
 *                                      the other keys are NULL in its row
 *   "ids":       [0, 1, 3]             per set, the value of the id column
 *   "id-column": "$e"                  the BIGINT column appended to the row
 *
 * Output: the input's columns (the keys made nullable), then the id column.
 * The aggregate behind groups by the keys and the id, so two sets that null
 * the same keys (GROUPING SETS ((a), (a))) or a key that is NULL in the data
 * keep apart. Each row keeps the input's row kind and timestamp, so a
 * retraction expands into the retractions of every set's row. The plan holds
 * per set a bitmap of the columns it nulls; the subtask's one output buffer
 * is rewritten for every emitted row, so the per-record path allocates
 * nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "jobgraph.h"
#include "operator.h"

typedef struct ex_plan {
    int nin;          /* input columns; the id column is at nin */
    int nsets;
    int nkeys;
    int *keycol;      /* nkeys input column indexes */
    unsigned char *nulls; /* nsets * nkeys: 1 = key k is NULL in set s's row */
    int64_t *ids;     /* nsets id values */
} ex_plan;

static void ex_plan_free(void *p)
{
    ex_plan *pl = p;
    if (!pl) return;
    free(pl->keycol);
    free(pl->nulls);
    free(pl->ids);
    free(pl);
}

static void *ex_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    json_t *keys = sl_vconf_array(v, "keys");
    json_t *sets = json_object_get(v->config, "sets");
    json_t *ids = json_object_get(v->config, "ids");
    const char *idcol = sl_vconf_str(v, "id-column", "$e");
    if (!json_is_array(keys) || !json_is_array(sets) ||
        !json_array_size(sets) || !json_is_array(ids) || json_array_size(ids) != json_array_size(sets)) {
        sl_seterr(err, errlen, "vertex '%s': expand needs \"keys\" (columns), \"sets\" (a list of "
                  "lists of keys) and \"ids\" (one integer per set)", v->id);
        return NULL;
    }
    if (sl_schema_find(in, idcol) >= 0) {
        sl_seterr(err, errlen, "vertex '%s': the id column '%s' is also an input column", v->id, idcol);
        return NULL;
    }
    ex_plan *pl = sl_calloc(1, sizeof *pl);
    pl->nin = in->n;
    pl->nkeys = (int)json_array_size(keys);
    pl->nsets = (int)json_array_size(sets);
    pl->keycol = sl_calloc((size_t)pl->nkeys + 1, sizeof *pl->keycol); /* none: GROUP BY () */
    pl->nulls = sl_calloc((size_t)pl->nsets * (size_t)pl->nkeys + 1, 1);
    pl->ids = sl_calloc((size_t)pl->nsets, sizeof *pl->ids);
    int rc = SL_OK;
    for (int k = 0; rc == SL_OK && k < pl->nkeys; k++) {
        const char *kn = json_string_value(json_array_get(keys, (size_t)k));
        pl->keycol[k] = kn ? sl_schema_find(in, kn) : -1;
        if (pl->keycol[k] < 0)
            rc = sl_seterr(err, errlen, "vertex '%s': key %s is not a column of the input", v->id,
                           kn ? kn : "(not a string)");
    }
    for (int s = 0; rc == SL_OK && s < pl->nsets; s++) {
        json_t *set = json_array_get(sets, (size_t)s), *id = json_array_get(ids, (size_t)s);
        if (!json_is_array(set) || !json_is_integer(id)) {
            rc = sl_seterr(err, errlen, "vertex '%s': set %d is not a list of keys with an "
                           "integer id", v->id, s);
            break;
        }
        pl->ids[s] = json_integer_value(id);
        memset(pl->nulls + (size_t)s * (size_t)pl->nkeys, 1, (size_t)pl->nkeys);
        for (size_t j = 0; rc == SL_OK && j < json_array_size(set); j++) {
            const char *kn = json_string_value(json_array_get(set, j));
            int k = 0;
            while (k < pl->nkeys && (!kn || strcmp(json_string_value(json_array_get(keys, (size_t)k)), kn)))
                k++;
            if (k == pl->nkeys)
                rc = sl_seterr(err, errlen, "vertex '%s': set %d names %s, which is not one of "
                               "\"keys\"", v->id, s, kn ? kn : "(not a string)");
            else
                pl->nulls[(size_t)s * (size_t)pl->nkeys + (size_t)k] = 0;
        }
    }
    if (rc != SL_OK) {
        ex_plan_free(pl);
        return NULL;
    }
    sl_schema_copy(pc->out, in);
    for (int k = 0; k < pl->nkeys; k++) { /* a key NULL in some set's row is nullable */
        sl_field *f = &pc->out->fields[pl->keycol[k]];
        f->dt = sl_dtype_nullable(f->dt, false);
    }
    sl_schema_add(pc->out, idcol, SL_T_BIGINT);
    return pl;
}

static int ex_open(sl_op *op)
{
    const ex_plan *pl = op->plan;
    op->priv = sl_calloc((size_t)pl->nin + 1, sizeof(sl_value));
    return SL_OK;
}

static int ex_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    const ex_plan *pl = op->plan;
    sl_value *vals = op->priv;
    for (int s = 0; s < pl->nsets; s++) {
        memcpy(vals, row->vals, sizeof *vals * (size_t)pl->nin);
        const unsigned char *nulls = pl->nulls + (size_t)s * (size_t)pl->nkeys;
        for (int k = 0; k < pl->nkeys; k++)
            if (nulls[k]) {
                memset(&vals[pl->keycol[k]], 0, sizeof *vals);
                vals[pl->keycol[k]].isnull = true;
            }
        vals[pl->nin].isnull = false;
        vals[pl->nin].v.i = pl->ids[s];
        sl_row out = *row;
        out.n = pl->nin + 1;
        out.vals = vals;
        int rc = sl_op_emit(op, &out);
        if (rc != SL_OK) return rc;
    }
    return SL_OK;
}

static void ex_close(sl_op *op)
{
    free(op->priv);
    op->priv = NULL;
}

static const sl_op_option ex_options[] = {
    {"keys", SL_CT_JSON, NULL, NULL, "The grouping columns: a list of input column names."},
    {"sets", SL_CT_JSON, NULL, NULL,
     "Per grouping set, the list of keys it keeps; its row has the other keys NULL."},
    {"ids", SL_CT_JSON, NULL, NULL, "Per grouping set, the integer in the id column of its row."},
    {"id-column", SL_CT_STRING, "$e", NULL, "Name of the BIGINT id column appended to the row."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_expand = {
    .abi = SL_OP_ABI_VERSION,
    .name = "expand",
    .options = ex_options,
    .plan = ex_plan_new,
    .plan_free = ex_plan_free,
    .open = ex_open,
    .process = ex_process,
    .close = ex_close,
};
