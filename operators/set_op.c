/*
 * set_op.c -- the `set_op` operator: SQL's INTERSECT and EXCEPT, with and
 * without ALL, over two inputs of the same columns, as a changelog.
 *
 * Config:
 *   "op":        "intersect" | "except"
 *   "all":       true for INTERSECT ALL / EXCEPT ALL (multisets); false
 *                (default) for the set forms, which emit each row once
 *   "state.ttl" / "table.exec.state.ttl"  idle-state retention (processing
 *                time; absent or 0 = forever)
 * Input 0 is the left query, input 1 the right one; both are keyed by every
 * column (the planner hashes both edges on all of them), so equal rows meet
 * in one key. Output: the left input's columns.
 *
 * Per row (the key) the operator counts the copies present on each side: a
 * +I/+U adds one, a -U/-D takes one away (a retraction of a row that is not
 * there is ignored, as Flink ignores it). The row's multiplicity in the
 * result follows from the two counts l and r:
 *   INTERSECT      1 when l > 0 and r > 0, else 0
 *   INTERSECT ALL  min(l, r)
 *   EXCEPT         1 when l > 0 and r = 0, else 0
 *   EXCEPT ALL     max(l - r, 0)
 * Every input row changes one count by one, so the multiplicity changes by
 * at most one: a rise emits +I[row], a fall -D[row], with the input row's
 * event time. Over insert-only inputs INTERSECT [ALL] only ever rises
 * (insert-only output); EXCEPT [ALL] retracts a row when the right side
 * catches up. This is the changelog Flink's plans give (a semi or anti join
 * over distinct rows; for ALL, counts per side and REPLICATE_ROWS).
 *
 * State, in op->kstate (snapshotted, restored and re-dealt by key group by
 * the runtime, on either backend):
 *   "counts"  per key, empty namespace: two little-endian i64, l and r.
 *             A key whose counts both reach 0 is cleared.
 * With a TTL the entry expires after that long without a write (Flink's
 * idle-state retention); nothing else bounds it, and plan() declares the
 * state unbounded without one. No allocation per record.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobgraph.h"
#include "operator.h"
#include "sl.h"

typedef struct setop_plan {
    char *vid;
    int except;          /* 0: INTERSECT, 1: EXCEPT */
    int all;
    int64_t ttl_ms;
} setop_plan;

typedef struct setop_state {
    sl_vstate *counts;
} setop_state;

static void setop_plan_free(void *p)
{
    setop_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl);
}

static void *setop_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    setop_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    const char *what = sl_plan_opt_str(pc, "op");
    if (pc->nin != 2) {
        sl_seterr(err, errlen, "vertex '%s': set_op needs two inputs (0: left, 1: right), not %d",
                  pl->vid, pc->nin);
        goto fail;
    }
    if (!sl_schema_equal(pc->in[0].schema, pc->in[1].schema)) {
        sl_seterr(err, errlen, "vertex '%s': the inputs differ (%s needs the same columns and "
                  "types on both)", pl->vid, what ? what : "set_op");
        goto fail;
    }
    if (!what) {
        sl_seterr(err, errlen, "vertex '%s': option 'op' is required: intersect or except",
                  pl->vid);
        goto fail;
    }
    pl->except = !strcasecmp(what, "except");
    pl->all = sl_plan_opt_bool(pc, "all");
    if (sl_plan_opt_isset(pc, "state.ttl") && sl_plan_opt_isset(pc, "table.exec.state.ttl")) {
        sl_seterr(err, errlen, "vertex '%s': set either 'state.ttl' or its alias "
                  "'table.exec.state.ttl', not both", pl->vid);
        goto fail;
    }
    const char *ttl_key = sl_plan_opt_isset(pc, "state.ttl") ? "state.ttl" : "table.exec.state.ttl";
    if (sl_vconf_duration(v, ttl_key, 0, &pl->ttl_ms, err, errlen) != SL_OK) goto fail;
    const sl_schema *in = pc->in[0].schema;
    if (in->n > SL_MAX_KEY_COLS) {
        sl_seterr(err, errlen, "vertex '%s': %d columns; %s compares at most %d", pl->vid, in->n,
                  pl->except ? "EXCEPT" : "INTERSECT", SL_MAX_KEY_COLS);
        goto fail;
    }
    int cols[SL_MAX_KEY_COLS];
    for (int i = 0; i < in->n; i++) cols[i] = i;
    if (pl->ttl_ms <= 0)
        sl_plan_unbounded_cols(pc, pl->except ? "EXCEPT" : "INTERSECT", in, cols, in->n,
                               "table.exec.state.ttl");
    sl_schema_copy(pc->out, in);
    if (sl_plan_key(pc, 0, cols, in->n, err, errlen) != SL_OK ||
        sl_plan_key(pc, 1, cols, in->n, err, errlen) != SL_OK)
        goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    setop_plan_free(pl);
    return NULL;
}

static int setop_open(sl_op *op)
{
    const setop_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    setop_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->counts = sl_op_state(op, "counts", SL_STATE_VALUE, pl->ttl_ms);
    return st->counts ? SL_OK : SL_ERR;
}

static void setop_close(sl_op *op)
{
    free(op->priv);
    op->priv = NULL;
}

static int64_t setop_mult(const setop_plan *pl, int64_t l, int64_t r)
{
    if (pl->except) return pl->all ? (l > r ? l - r : 0) : (l > 0 && r == 0);
    return pl->all ? (l < r ? l : r) : (l > 0 && r > 0);
}

static void put64(uint8_t *b, int64_t x)
{
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)x >> (8 * i));
}

static int64_t get64(const uint8_t *b)
{
    uint64_t x = 0;
    for (int i = 0; i < 8; i++) x |= (uint64_t)b[i] << (8 * i);
    return (int64_t)x;
}

static int setop_process(sl_op *op, int input, sl_row *row)
{
    const setop_plan *pl = op->plan;
    setop_state *st = op->priv;
    int64_t c[2] = {0, 0};
    const void *v;
    size_t vlen;
    int rc = sl_value_get(st->counts, NULL, 0, &v, &vlen);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK) {
        if (vlen != 16)
            return sl_op_fail(op, "vertex '%s': a stored count has %zu bytes, not 16", pl->vid,
                              vlen);
        c[0] = get64(v);
        c[1] = get64((const uint8_t *)v + 8);
    }
    int side = input ? 1 : 0;
    int64_t before = setop_mult(pl, c[0], c[1]);
    if (row->kind == SL_KIND_DELETE || row->kind == SL_KIND_UPDATE_BEFORE) {
        if (c[side] == 0) return SL_OK; /* not there: ignored */
        c[side]--;
    } else {
        c[side]++;
    }
    int64_t after = setop_mult(pl, c[0], c[1]);
    if (c[0] == 0 && c[1] == 0) {
        rc = sl_state_clear(st->counts, NULL, 0);
    } else {
        uint8_t b[16];
        put64(b, c[0]);
        put64(b + 8, c[1]);
        rc = sl_value_put(st->counts, NULL, 0, b, sizeof b);
    }
    if (rc != SL_OK) return rc;
    if (after == before) return SL_OK;
    sl_row out = *row;
    out.kind = after > before ? SL_KIND_INSERT : SL_KIND_DELETE;
    return sl_op_emit(op, &out);
}

static const sl_op_option setop_options[] = {
    {"op", SL_CT_ENUM, NULL, "intersect,except", "INTERSECT or EXCEPT."},
    {"all", SL_CT_BOOL, "false", NULL, "true: the multiset forms INTERSECT ALL / EXCEPT ALL."},
    {"state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of a row's counts (a duration or interval; 0: none)."},
    {"table.exec.state.ttl", SL_CT_STRING, NULL, NULL,
     "Flink's name of state.ttl, as the SQL planner writes it."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_set_op = {
    .abi = SL_OP_ABI_VERSION,
    .name = "set_op",
    .flags = SL_OPF_KEYED,
    .options = setop_options,
    .max_inputs = 2,
    .plan = setop_plan_new,
    .plan_free = setop_plan_free,
    .open = setop_open,
    .process = setop_process,
    .close = setop_close,
};
