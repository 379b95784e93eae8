/*
 * union.c -- the `union` operator: Flink's UNION ALL of several inputs.
 *
 * Each logical input (edge "input": 0, 1, ...) carries rows of the same
 * schema; every row goes out unchanged, with its event timestamp. Time is
 * the runtime's business: the output watermark is the minimum of the
 * inputs' watermarks (an input that ended or went idle no longer holds it
 * back), so a union never makes rows of a slower input late. Several edges
 * into one input of any operator are a union too; this operator is for
 * when the union should be a vertex of its own (its own parallelism, a
 * name in the plan).
 */
#include <stdlib.h>

#include "jobgraph.h"
#include "operator.h"

static void *union_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    if (pc->nin < 1) {
        sl_seterr(err, errlen, "vertex '%s': union needs at least one input", pc->v->id);
        return NULL;
    }
    for (int i = 1; i < pc->nin; i++)
        if (!sl_schema_equal(pc->in[0].schema, pc->in[i].schema)) {
            sl_seterr(err, errlen, "vertex '%s': input %d has another schema than input 0 (UNION ALL "
                      "needs the same columns and types on every input)", pc->v->id, i);
            return NULL;
        }
    sl_schema_copy(pc->out, pc->in[0].schema);
    return sl_calloc(1, 1); /* no configuration: a non-NULL plan */
}

static void union_plan_free(void *p) { free(p); }

static int union_process(sl_op *op, int input, sl_row *row)
{
    SL_UNUSED(input);
    return sl_op_emit(op, row);
}

static const sl_op_option union_options[] = {
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_union = {
    .abi = SL_OP_ABI_VERSION,
    .name = "union",
    .options = union_options,
    .max_inputs = SL_MAX_INPUTS,
    .plan = union_plan_new,
    .plan_free = union_plan_free,
    .process = union_process,
};
