/*
 * regular_join.c -- the `regular_join` operator: an equi-join of two
 * changelog inputs with no time bound (Flink SQL's streaming join of
 * `a JOIN b ON a.k = b.k`), inner, left, right or full outer.
 *
 * Config (plus join-type, left-keys, right-keys: operators/join.h):
 *   "condition": "num >= maxn"      optional: the rest of the ON condition,
 *                                   over the joined row's columns; two rows
 *                                   of a key join only where it is TRUE
 *   "state.ttl" (alias "table.exec.state.ttl"): "1 d"   both sides
 *   "left.state.ttl", "right.state.ttl"                 one side (the
 *                                   STATE_TTL hint); overrides the above
 *   "mode": "semi" | "anti"         a semi or anti join (join-type inner):
 *                                   the output is the left row alone, while
 *                                   it has a partner (semi) or has none
 *                                   (anti); the SQL planner's IN and EXISTS
 *   Without any TTL the state grows with every distinct row for as long
 *   as the job runs (the SQL planner warns at submission).
 *
 * Changelog, as Flink's join emits it (insert and delete only; an update
 * of an input, -U old / +U new, comes out as -D of the rows the old row
 * joined and +I of those the new one joins). With R the arriving row, O the
 * other side's rows of its key:
 *   +I/+U R: for each O row: +I[R, O] (an outer O row that had no partner
 *            yet is first withdrawn: -D[null, O]); with no O row and R on
 *            an outer side: +I[R, null]
 *   -D/-U R: for each O row: -D[R, O] (an outer O row left without
 *            partner comes back: +I[null, O]); with no O row and R on an
 *            outer side: -D[R, null]
 * "O rows" are those of its key for which the condition holds, as Flink
 * evaluates a join's non-equi condition in the join: so in an outer join it
 * decides which rows are outer, and an inner join emits only the pairs that
 * pass (no -D/+I of pairs a filter after the join would drop).
 * A row with a NULL key column matches nothing: on an outer side it goes
 * out padded at once (+I, or -D when retracted), else it is dropped.
 *
 * State, per key and side: a map state ("join-left", "join-right") from
 * the row's bytes (sl_row_encode of the row as an insert) to
 *     u32 count (identical rows) | u32 associations (rows of the other side
 *                                  it joins; kept for outer sides)
 * with the TTL of its side (processing time since the entry's last write;
 * an expired entry is never seen again). One entry per distinct row: an
 * arriving row finds its own entry with one map get (by its bytes) and
 * reads the other side's rows of its key with the backend's per-key scan
 * (sl_map_each), so a row costs O(1) state operations plus one per
 * matching row -- never a read or rewrite of everything its key holds.
 * Per key and side a value ("join-left-ttl", "join-right-ttl") holds the
 * last write and the pending clean-up timer: a processing-time timer clears
 * the side's rows of a key once the key has gone a whole TTL without a
 * write on that side, so the state is really freed, not just hidden.
 *
 * Older versions also kept, per key and side, an index value listing the
 * map's row keys ("join-left-index", "join-right-index"). Those names are
 * still registered, in their old places, so state ids stay what they were
 * and savepoints of that layout restore: the map entries are the same, and
 * the index values are never read. When the restored state holds any
 * (sl_kstate_restored), a key's index value is deleted at its first write
 * after the restore, and the clean-up timer deletes it with the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "expr.h"
#include "join.h"
#include "vstate.h"

typedef struct rj_plan {
    sl_join_spec js;
    int64_t ttl[2];
    sl_expr *cond;  /* "condition" over the joined row, or NULL */
    int semi;       /* "mode": 0 a join, 1 semi, 2 anti */
} rj_plan;

typedef struct rj_state {
    sl_vstate *rows[2];
    sl_vstate *meta[2];
    sl_vstate *index[2];        /* the old layout's per-key index values: never read */
    int legacy[2];              /* -1: not yet known; 1: restored index values to delete */
    sl_value *vals;             /* output row */
    sl_value *dec;              /* a stored row, decoded */
    sl_buf others;              /* the other side's entries, copied: (u32 len | row | u32 count | u32 assoc)* */
    sl_buf key;                 /* the arriving row's bytes */
} rj_state;

static void rj_plan_free(void *p)
{
    rj_plan *pl = p;
    if (!pl) return;
    sl_join_spec_free(&pl->js);
    sl_expr_destroy(pl->cond);
    free(pl);
}

static void *rj_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    rj_plan *pl = sl_calloc(1, sizeof *pl);
    const sl_vertex *v = pc->v;
    if (sl_join_plan(pc, &pl->js, err, errlen) != SL_OK) goto fail;
    json_t *jc = json_object_get(v->config, "condition");
    if (jc) {
        char cerr[512];
        if (!json_is_string(jc)) {
            sl_seterr(err, errlen, "vertex '%s': condition must be a string expression", v->id);
            goto fail;
        }
        pl->cond = sl_expr_parse(json_string_value(jc), pc->out, cerr, sizeof cerr);
        if (!pl->cond ||
            sl_expr_set_zone(pl->cond, sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE), cerr,
                             sizeof cerr)) {
            sl_seterr(err, errlen, "vertex '%s': condition: %s", v->id, cerr);
            goto fail;
        }
        if (sl_expr_type(pl->cond) != SL_T_BOOLEAN) {
            sl_seterr(err, errlen, "vertex '%s': condition must be a BOOLEAN expression, got %s",
                      v->id, sl_type_name(sl_expr_type(pl->cond)));
            goto fail;
        }
    }
    const char *mode = sl_vconf_str(v, "mode", NULL);
    if (mode) {
        pl->semi = !strcmp(mode, "semi") ? 1 : !strcmp(mode, "anti") ? 2 : 0;
        if (!pl->semi || pl->js.type != SL_JOIN_INNER) {
            sl_seterr(err, errlen, "vertex '%s': mode '%s': semi or anti, with join-type inner",
                      v->id, mode);
            goto fail;
        }
        /* the left rows alone; the condition (parsed above) sees the joined row */
        sl_schema_free(pc->out);
        sl_schema_init(pc->out);
        sl_schema_copy(pc->out, &pl->js.left);
    }
    json_t *jt = json_object_get(v->config, "state.ttl"), *jf = json_object_get(v->config, "table.exec.state.ttl");
    if (jt && jf) {
        sl_seterr(err, errlen, "vertex '%s': set either 'state.ttl' or its alias 'table.exec.state.ttl', "
                  "not both", v->id);
        goto fail;
    }
    int64_t both = 0;
    if ((jt || jf) && sl_vconf_duration(v, jt ? "state.ttl" : "table.exec.state.ttl", 0, &both, err,
                                        errlen) != SL_OK)
        goto fail;
    if (sl_vconf_duration(v, "left.state.ttl", both, &pl->ttl[0], err, errlen) != SL_OK ||
        sl_vconf_duration(v, "right.state.ttl", both, &pl->ttl[1], err, errlen) != SL_OK)
        goto fail;
    for (int s = 0; s < 2; s++)
        if (pl->ttl[s] < 0) {
            sl_seterr(err, errlen, "vertex '%s': a negative state TTL", v->id);
            goto fail;
        }
    if (pl->ttl[0] == 0 || pl->ttl[1] == 0) {
        char kt[256];
        size_t at = 0;
        kt[0] = 0;
        for (int k = 0; k < pl->js.nkeys && at < sizeof kt; k++) {
            const char *a = pl->js.left.fields[pl->js.lkeys[k]].name;
            const char *b = pl->js.right.fields[pl->js.rkeys[k]].name;
            at += (size_t)snprintf(kt + at, sizeof kt - at, "%s%s%s%s", k ? ", " : "", a,
                                   strcmp(a, b) ? " = " : "", strcmp(a, b) ? b : "");
        }
        sl_plan_unbounded(pc, "regular join", kt,
                          pl->ttl[0] || pl->ttl[1] ? (pl->ttl[0] ? "right.state.ttl" : "left.state.ttl")
                                                   : "table.exec.state.ttl");
    }
    return pl;
fail:
    rj_plan_free(pl);
    return NULL;
}

static int rj_open(sl_op *op)
{
    const rj_plan *pl = op->plan;
    if (!op->kstate || !op->proc_timers)
        return sl_op_fail(op, "vertex '%s': the join needs keyed state and timers from the runtime",
                          pl->js.vid);
    rj_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    static const char *const names[2] = {"join-left", "join-right"};
    static const char *const metas[2] = {"join-left-ttl", "join-right-ttl"};
    static const char *const indexes[2] = {"join-left-index", "join-right-index"};
    for (int s = 0; s < 2; s++) {
        st->rows[s] = sl_op_state(op, names[s], SL_STATE_MAP, pl->ttl[s]);
        st->meta[s] = sl_op_state(op, metas[s], SL_STATE_VALUE, 0);
        st->index[s] = sl_op_state(op, indexes[s], SL_STATE_VALUE, 0);
        if (!st->rows[s] || !st->meta[s] || !st->index[s]) return SL_ERR;
    }
    st->legacy[0] = st->legacy[1] = -1; /* restore runs after open: known at the first record */
    int n = pl->js.nleft > pl->js.nright ? pl->js.nleft : pl->js.nright;
    st->vals = sl_calloc((size_t)(pl->js.nleft + pl->js.nright), sizeof *st->vals);
    st->dec = sl_calloc((size_t)n + 1, sizeof *st->dec);
    return SL_OK;
}

static void rj_close(sl_op *op)
{
    rj_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st->dec);
    sl_buf_free(&st->others);
    sl_buf_free(&st->key);
    free(st);
    op->priv = NULL;
}

/* ---- emitting ------------------------------------------------------------------ */

static int emit(sl_op *op, sl_rowkind kind, int side, const sl_row *mine, const sl_row *other)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    const sl_row *l = side ? other : mine, *r = side ? mine : other;
    int64_t ts = mine ? mine->ts : other->ts;
    return sl_join_emit(op, &pl->js, st->vals, kind, l, r, ts);
}

/* The join condition holds for the arriving row (of `side`) and a stored row
 * of the other side: TRUE only, NULL and FALSE alike fail, as in SQL's ON.
 * Its scratch strings are given back at once: a row may meet thousands. */
static int cond_holds(sl_op *op, int side, const sl_row *mine, const sl_row *other, bool *pass)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    const sl_row *l = side ? other : mine, *r = side ? mine : other;
    memcpy(st->vals, l->vals, sizeof *st->vals * (size_t)pl->js.nleft);
    memcpy(st->vals + pl->js.nleft, r->vals, sizeof *st->vals * (size_t)pl->js.nright);
    sl_row j = {.kind = SL_KIND_INSERT, .n = pl->js.nleft + pl->js.nright, .vals = st->vals,
                .ts = mine->ts};
    size_t mark = op->scratch.used;
    char err[256];
    int rc = sl_expr_eval_bool(pl->cond, &j, &op->scratch, pass, err, sizeof err);
    op->scratch.used = mark;
    if (rc != SL_OK) return sl_op_fail(op, "vertex '%s': condition: %s", pl->js.vid, err);
    return SL_OK;
}

static int decode(sl_op *op, int side, const uint8_t *p, size_t n, sl_row *r)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    char derr[200];
    *r = (sl_row){.vals = st->dec, .ts = SL_TS_NONE};
    if (sl_row_decode(p, n, side ? &pl->js.right : &pl->js.left, r, derr, sizeof derr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': damaged join state: %s", pl->js.vid, derr);
    return SL_OK;
}

/* ---- state ---------------------------------------------------------------------- */

typedef struct others_ctx {
    sl_buf *out;
    int n;
} others_ctx;

static int others_visit(void *ctx, const void *k, size_t klen, const void *v, size_t len)
{
    others_ctx *oc = ctx;
    if (len != 8) return 0; /* not a count|associations entry: ignored */
    uint8_t hdr[4];
    sl_put_le32(hdr, (uint32_t)klen);
    sl_buf_put(oc->out, hdr, 4);
    sl_buf_put(oc->out, k, klen);
    sl_buf_put(oc->out, v, 8);
    oc->n++;
    return 0;
}

/* The other side's live entries of the current key, by the backend's
 * per-key scan, copied into st->others ((u32 length | row | u32 count |
 * u32 associations)*) as state changes while they are joined. Returns
 * their number, or -1 on error. */
static int collect_others(sl_op *op, int side)
{
    rj_state *st = op->priv;
    st->others.len = 0;
    others_ctx oc = {&st->others, 0};
    if (sl_map_each(st->rows[side], NULL, 0, others_visit, &oc) != SL_OK) return -1;
    return oc.n;
}

/* A savepoint of the old layout restored index values: delete the current
 * key's at its first write after the restore (absent afterwards). */
static int drop_legacy_index(sl_op *op, int side)
{
    rj_state *st = op->priv;
    if (st->legacy[side] < 0) {
        int sid = sl_kstate_register(op->kstate, side ? "join-right-index" : "join-left-index");
        st->legacy[side] = sl_kstate_restored(op->kstate, sid);
    }
    return st->legacy[side] ? sl_state_clear(st->index[side], NULL, 0) : SL_OK;
}

/* Note a write on `side` for the current key: its clean-up timer. */
static int touch(sl_op *op, int side)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    if (pl->ttl[side] <= 0) return SL_OK;
    int64_t now = sl_vstate_clock(), m[2] = {now, 0};
    const void *v;
    size_t len;
    int rc = sl_value_get(st->meta[side], NULL, 0, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK && len == sizeof m) memcpy(&m[1], (const int64_t *)v + 1, sizeof m[1]);
    int arm = m[1] == 0;
    if (arm) m[1] = now + pl->ttl[side];
    if (sl_value_put(st->meta[side], NULL, 0, m, sizeof m) != SL_OK) return SL_ERR;
    uint8_t ns = (uint8_t)side;
    return arm ? sl_op_timer_register(op, SL_TIME_PROCESSING, m[1], &ns, 1) : SL_OK;
}

static int put_counts(sl_op *op, int side, const void *k, size_t klen, uint32_t count, uint32_t assoc)
{
    rj_state *st = op->priv;
    if (count == 0) return sl_map_remove(st->rows[side], NULL, 0, k, klen);
    uint8_t v[8];
    sl_put_le32(v, count);
    sl_put_le32(v + 4, assoc);
    if (sl_map_put(st->rows[side], NULL, 0, k, klen, v, 8) != SL_OK) return SL_ERR;
    return touch(op, side);
}

/* The left row `times` times as it is (a semi or anti join's output). */
static int emit_left(sl_op *op, sl_rowkind kind, const sl_row *l, uint32_t times)
{
    const rj_plan *pl = op->plan;
    for (uint32_t i = 0; i < times; i++) {
        sl_row out = {.kind = kind, .n = pl->js.nleft, .vals = l->vals, .ts = l->ts};
        if (sl_op_emit(op, &out) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

/* This row's entry: its count and (left rows) how many right rows it meets. */
static int own_entry(sl_op *op, int side, int acc, uint32_t matches)
{
    rj_state *st = op->priv;
    const void *v;
    size_t len;
    uint32_t cnt = 0;
    int rc = sl_map_get(st->rows[side], NULL, 0, st->key.p, st->key.len, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK && len == 8) cnt = sl_get_le32(v);
    if (drop_legacy_index(op, side) != SL_OK) return SL_ERR;
    if (acc) return put_counts(op, side, st->key.p, st->key.len, cnt + 1, matches);
    if (cnt == 0) return SL_OK; /* never seen, or expired: nothing to retract from state */
    return put_counts(op, side, st->key.p, st->key.len, cnt - 1, matches);
}

static void own_key(sl_op *op, int side, const sl_row *row)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    sl_row ins = *row;
    ins.kind = SL_KIND_INSERT;
    const sl_schema *sch = side ? &pl->js.right : &pl->js.left;
    size_t need = sl_row_size(&ins, sch);
    st->key.len = 0;
    sl_buf_reserve(&st->key, need);
    st->key.len = sl_row_encode(&ins, sch, sl_buf_u8(&st->key), need);
    SL_ASSERT(st->key.len == need);
}

/* A semi (anti) join: a left row goes out while at least one right row of
 * its key meets the condition (while none does). Each left entry counts
 * its partners ("associations"); a right row that takes one from 0 to 1 or
 * back turns those left rows on or off. */
static int semi_process(sl_op *op, int side, sl_row *row)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    int acc = row->kind == SL_KIND_INSERT || row->kind == SL_KIND_UPDATE_AFTER;
    int anti = pl->semi == 2;
    if (sl_join_null_key(&pl->js, side, row)) /* meets nothing */
        return side == 0 && anti ? emit_left(op, acc ? SL_KIND_INSERT : SL_KIND_DELETE, row, 1)
                                 : SL_OK;
    int nothers = collect_others(op, !side);
    if (nothers < 0) return SL_ERR;
    own_key(op, side, row);
    uint32_t matches = 0;
    for (size_t pos = 0; pos < st->others.len;) {
        uint32_t kl = sl_get_le32(st->others.p + pos);
        const uint8_t *k = sl_buf_u8(&st->others) + pos + 4;
        uint32_t cnt = sl_get_le32(k + kl), assoc = sl_get_le32(k + kl + 4);
        pos += 4 + kl + 8;
        sl_row o;
        if (decode(op, !side, k, kl, &o) != SL_OK) return SL_ERR;
        if (pl->cond) {
            bool pass;
            if (cond_holds(op, side, row, &o, &pass) != SL_OK) return SL_ERR;
            if (!pass) continue;
        }
        matches += cnt;
        if (side == 0) continue;
        /* a right row: the left rows it meets gain or lose a partner */
        if (acc) {
            if (assoc == 0 &&
                emit_left(op, anti ? SL_KIND_DELETE : SL_KIND_INSERT, &o, cnt) != SL_OK)
                return SL_ERR;
            if (put_counts(op, 0, k, kl, cnt, assoc + 1) != SL_OK) return SL_ERR;
        } else {
            if (assoc == 1 &&
                emit_left(op, anti ? SL_KIND_INSERT : SL_KIND_DELETE, &o, cnt) != SL_OK)
                return SL_ERR;
            if (put_counts(op, 0, k, kl, cnt, assoc ? assoc - 1 : 0) != SL_OK) return SL_ERR;
        }
    }
    if (side == 0 && (matches > 0) != anti &&
        emit_left(op, acc ? SL_KIND_INSERT : SL_KIND_DELETE, row, 1) != SL_OK)
        return SL_ERR;
    return own_entry(op, side, acc, matches);
}

/* ---- callbacks ------------------------------------------------------------------- */

static int rj_process(sl_op *op, int input, sl_row *row)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    if (pl->semi) return semi_process(op, input ? 1 : 0, row);
    int side = input ? 1 : 0, other = !side;
    int acc = row->kind == SL_KIND_INSERT || row->kind == SL_KIND_UPDATE_AFTER;
    int outer = sl_join_outer(&pl->js, side), oouter = sl_join_outer(&pl->js, other);
    if (sl_join_null_key(&pl->js, side, row))
        return outer ? emit(op, acc ? SL_KIND_INSERT : SL_KIND_DELETE, side, row, NULL) : SL_OK;

    /* the other side's rows of this key, copied: state changes as we go */
    int nothers = collect_others(op, other);
    if (nothers < 0) return SL_ERR;
    uint32_t matches = 0;

    /* this row's own entry */
    own_key(op, side, row);

    for (size_t pos = 0; pos < st->others.len;) {
        uint32_t kl = sl_get_le32(st->others.p + pos);
        const uint8_t *k = sl_buf_u8(&st->others) + pos + 4;
        uint32_t cnt = sl_get_le32(k + kl), assoc = sl_get_le32(k + kl + 4);
        pos += 4 + kl + 8;
        sl_row o;
        if (decode(op, other, k, kl, &o) != SL_OK) return SL_ERR;
        if (pl->cond) {
            bool pass;
            if (cond_holds(op, side, row, &o, &pass) != SL_OK) return SL_ERR;
            if (!pass) continue;
        }
        matches += cnt;
        if (acc) {
            if (oouter && assoc == 0)
                for (uint32_t i = 0; i < cnt; i++)
                    if (emit(op, SL_KIND_DELETE, other, &o, NULL) != SL_OK) return SL_ERR;
            for (uint32_t i = 0; i < cnt; i++)
                if (emit(op, SL_KIND_INSERT, side, row, &o) != SL_OK) return SL_ERR;
            if (oouter && put_counts(op, other, k, kl, cnt, assoc + 1) != SL_OK) return SL_ERR;
        } else {
            for (uint32_t i = 0; i < cnt; i++)
                if (emit(op, SL_KIND_DELETE, side, row, &o) != SL_OK) return SL_ERR;
            if (oouter) {
                if (assoc == 1)
                    for (uint32_t i = 0; i < cnt; i++)
                        if (emit(op, SL_KIND_INSERT, other, &o, NULL) != SL_OK) return SL_ERR;
                if (put_counts(op, other, k, kl, cnt, assoc ? assoc - 1 : 0) != SL_OK) return SL_ERR;
            }
        }
    }
    if (matches == 0 && outer && emit(op, acc ? SL_KIND_INSERT : SL_KIND_DELETE, side, row, NULL) != SL_OK)
        return SL_ERR;
    return own_entry(op, side, acc, matches);
}

/* A side's clean-up timer: clear its rows of the key when idle for the TTL. */
static int rj_on_timer(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen)
{
    const rj_plan *pl = op->plan;
    rj_state *st = op->priv;
    SL_UNUSED(d);
    if (nslen != 1 || *(const uint8_t *)ns > 1)
        return sl_op_fail(op, "vertex '%s': damaged join timer", pl->js.vid);
    int side = *(const uint8_t *)ns;
    const void *v;
    size_t len;
    int rc = sl_value_get(st->meta[side], NULL, 0, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_DONE || len != 16) return SL_OK;
    int64_t m[2];
    memcpy(m, v, sizeof m);
    if (m[1] != time) return SL_OK; /* not the pending one */
    if (m[0] + pl->ttl[side] <= time) {
        if (sl_state_clear(st->rows[side], NULL, 0) != SL_OK) return SL_ERR;
        if (drop_legacy_index(op, side) != SL_OK) return SL_ERR;
        return sl_state_clear(st->meta[side], NULL, 0);
    }
    m[1] = m[0] + pl->ttl[side];
    if (sl_value_put(st->meta[side], NULL, 0, m, sizeof m) != SL_OK) return SL_ERR;
    uint8_t nsb = (uint8_t)side;
    return sl_op_timer_register(op, SL_TIME_PROCESSING, m[1], &nsb, 1);
}

static const sl_op_option rj_options[] = {
    SL_OP_OPTION_LOCAL_TIME_ZONE,
    {"join-type", SL_CT_STRING, NULL, NULL,
     "inner, left, right or full."},
    {"left-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the left input (a list)."},
    {"right-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the right input (a list)."},
    {"condition", SL_CT_STRING, NULL, NULL,
     "The rest of ON: a boolean SQL expression over both sides."},
    {"state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of a key's state (a duration or interval; 0: none)."},
    {"table.exec.state.ttl", SL_CT_STRING, NULL, NULL,
     "Flink's name of state.ttl, as the SQL planner writes it."},
    {"left.state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of the left side's state; overrides state.ttl."},
    {"right.state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of the right side's state; overrides state.ttl."},
    {"mode", SL_CT_STRING, NULL, NULL,
     "semi or anti: the left rows alone, while they have a partner (semi) or none (anti)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_regular_join = {
    .abi = SL_OP_ABI_VERSION,
    .name = "regular_join",
    .flags = SL_OPF_KEYED,
    .options = rj_options,
    .max_inputs = 2,
    .plan = rj_plan_new,
    .plan_free = rj_plan_free,
    .open = rj_open,
    .process = rj_process,
    .on_timer = rj_on_timer,
    .close = rj_close,
};
