/*
 * limit.c -- the `limit` operator: Flink's streaming LIMIT / OFFSET / FETCH
 * without ORDER BY (StreamExecLimit: the first rows that arrive),
 *
 *     SELECT * FROM t LIMIT n [OFFSET m]
 *
 * planned by sql/plan_query.c at parallelism 1 behind a rebalance edge,
 * keyed by nothing (one key: the whole stream). It counts the rows that
 * arrive, skips the first `offset` and forwards the next `limit`, as +I;
 * every later row is dropped. Output is insert-only. The job still ends
 * only when its sources do (a SELECT's client cancels it once it has the
 * rows, cli/sql_results.c).
 *
 * Config:
 *   "limit":  n   rows to forward (>= 1)
 *   "offset": m   rows to skip first (default 0)
 *
 * State: a value state "count" (i64, rows seen, capped at offset + limit),
 * keyed state of the one key, so both backends snapshot and restore it by
 * key group: after a restore the count goes on where it stopped.
 */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "jobgraph.h"
#include "operator.h"

typedef struct lim_plan {
    char *vid;
    int64_t limit, offset;
} lim_plan;

typedef struct lim_state {
    sl_vstate *count;
} lim_state;

static void lim_plan_free(void *p)
{
    lim_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl);
}

static void *lim_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    lim_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    pl->limit = sl_plan_opt_int(pc, "limit");
    pl->offset = sl_plan_opt_int(pc, "offset");
    if (pl->limit < 1 || pl->offset < 0) {
        sl_seterr(err, errlen, "vertex '%s': option 'limit' must be at least 1 and 'offset' at "
                  "least 0", pl->vid);
        goto fail;
    }
    sl_schema_copy(pc->out, pc->in[0].schema);
    if (sl_plan_key(pc, 0, NULL, 0, err, errlen) != SL_OK) goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    lim_plan_free(pl);
    return NULL;
}

static int lim_open(sl_op *op)
{
    const lim_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    lim_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->count = sl_op_state(op, "count", SL_STATE_VALUE, 0);
    return st->count ? SL_OK : SL_ERR;
}

static void lim_close(sl_op *op)
{
    free(op->priv);
    op->priv = NULL;
}

static int lim_process(sl_op *op, int input, sl_row *row)
{
    const lim_plan *pl = op->plan;
    lim_state *st = op->priv;
    SL_UNUSED(input);
    if (row->kind != SL_KIND_INSERT)
        return sl_op_fail(op, "vertex '%s': LIMIT without ORDER BY needs an insert-only input, "
                          "but a %s row arrived", pl->vid, sl_rowkind_short(row->kind));
    const void *v;
    size_t vlen;
    int64_t n = 0;
    int rc = sl_value_get(st->count, NULL, 0, &v, &vlen);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK) {
        if (vlen != 8)
            return sl_op_fail(op, "vertex '%s': the stored count has %zu bytes, not 8", pl->vid,
                              vlen);
        n = sl_get_lei64(v);
    }
    if (n >= pl->offset + pl->limit) return SL_OK; /* done: the state stays as it is */
    uint8_t b[8];
    sl_put_lei64(b, ++n);
    if (sl_value_put(st->count, NULL, 0, b, sizeof b) != SL_OK) return SL_ERR;
    return n > pl->offset ? sl_op_emit(op, row) : SL_OK;
}

static const sl_op_option lim_options[] = {
    {"limit", SL_CT_INT, NULL, NULL, "Rows to forward (at least 1)."},
    {"offset", SL_CT_INT, "0", NULL, "Rows to skip before those."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_limit = {
    .abi = SL_OP_ABI_VERSION,
    .name = "limit",
    .flags = SL_OPF_KEYED,
    .options = lim_options,
    .plan = lim_plan_new,
    .plan_free = lim_plan_free,
    .open = lim_open,
    .process = lim_process,
    .close = lim_close,
};
