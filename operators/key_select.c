/*
 * key_select.c -- the `key_select` operator: Flink's KeySelector for a C
 * job (sl_ds_key_by_fn). A user function computes each row's key; the key's
 * values travel appended to the row, so the edge after this vertex hashes
 * on them like on any key columns and the keyed operator behind it reads
 * them with sl_ds_key.
 *
 * Config:
 *   "library", "function"   an sl_key_selector table in a C job's object
 *   "schema"                the key's columns, "name TYPE, ..."
 *
 * Output: the input's columns, then the key's. The row buffer is sized at
 * open (input + key columns), so the per-record path allocates nothing; the
 * key's strings are the function's, borrowed until the row is emitted.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "dsfn.h"
#include "jobgraph.h"
#include "operator.h"
#include "userfn.h"

typedef struct ks_plan {
    char *vid;
    char *library, *function;
    int nin, nkey;            /* input columns, key columns */
} ks_plan;

typedef struct ks_state {
    const sl_key_selector *fn;
    void *dl;
    sl_value *vals;           /* nin + nkey: the output row */
} ks_state;

static void ks_plan_free(void *p)
{
    ks_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->library);
    free(pl->function);
    free(pl);
}

static void *ks_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    if (sl_ds_plan_user(pc, "sl_key_selector", err, errlen) != SL_OK) return NULL; /* out = key */
    sl_schema key;
    sl_schema_init(&key);
    sl_schema_copy(&key, pc->out);
    sl_schema_free(pc->out);
    sl_schema_init(pc->out);
    sl_schema_copy(pc->out, in);
    int rc = key.n ? SL_OK : sl_seterr(err, errlen, "vertex '%s': the key needs at least one column", v->id);
    for (int i = 0; rc == SL_OK && i < key.n; i++) {
        if (sl_schema_find(in, key.fields[i].name) >= 0)
            rc = sl_seterr(err, errlen, "vertex '%s': key column '%s' is also a column of the "
                           "input (name the key's columns apart)", v->id, key.fields[i].name);
        else
            sl_schema_add_dt(pc->out, key.fields[i].name, key.fields[i].dt);
    }
    ks_plan *pl = NULL;
    if (rc == SL_OK) {
        pl = sl_calloc(1, sizeof *pl);
        pl->vid = sl_strdup(v->id);
        pl->library = sl_strdup(sl_vconf_str(v, "library", ""));
        pl->function = sl_strdup(sl_vconf_str(v, "function", ""));
        pl->nin = in->n;
        pl->nkey = key.n;
    }
    sl_schema_free(&key);
    return pl;
}

static int ks_open(sl_op *op)
{
    const ks_plan *pl = op->plan;
    ks_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)(pl->nin + pl->nkey), sizeof *st->vals);
    st->fn = sl_ds_load_user(op, pl->library, pl->function, &st->dl);
    if (!st->fn) return SL_ERR;
    if (!st->fn->get_key)
        return sl_op_fail(op, "vertex '%s': '%s' has no get_key", pl->vid, pl->function);
    return SL_OK;
}

static int ks_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    const ks_plan *pl = op->plan;
    ks_state *st = op->priv;
    memcpy(st->vals, row->vals, sizeof *st->vals * (size_t)pl->nin);
    memset(st->vals + pl->nin, 0, sizeof *st->vals * (size_t)pl->nkey);
    if (st->fn->get_key(row, st->vals + pl->nin) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s() failed on a row", pl->vid, pl->function);
    sl_row out = *row;
    out.n = pl->nin + pl->nkey;
    out.vals = st->vals;
    return sl_op_emit(op, &out);
}

static void ks_close(sl_op *op)
{
    ks_state *st = op->priv;
    if (!st) return;
    if (st->dl) dlclose(st->dl);
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static const sl_op_option ks_options[] = {
    {"library", SL_CT_STRING, NULL, NULL,
     "Shared object (an uploaded C job's id or a path) holding the user function."},
    {"function", SL_CT_STRING, NULL, NULL,
     "Name of the function table the library exports."},
    {"schema", SL_CT_JSON, NULL, NULL,
     "Output columns: a list of {\"name\", \"type\"}."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_key_select = {
    .abi = SL_OP_ABI_VERSION,
    .name = "key_select",
    .options = ks_options,
    .plan = ks_plan_new,
    .plan_free = ks_plan_free,
    .open = ks_open,
    .process = ks_process,
    .close = ks_close,
};
