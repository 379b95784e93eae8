/*
 * temporal_sort.c -- the `temporal_sort` operator: Flink's streaming
 * ORDER BY, which sorts a stream only ascending on a time attribute,
 *
 *     SELECT * FROM t ORDER BY rowtime [, c [DESC], ...]
 *
 * planned by sql/plan_query.c at parallelism 1 behind a rebalance edge,
 * keyed by nothing (one key: the whole stream), as Flink's
 * StreamExecTemporalSort runs it.
 *
 * Event time ("time-column" set; Flink's RowTimeSortOperator): a row whose
 * rowtime is at or behind the current watermark is late: dropped and
 * counted in numLateRecordsDropped. Any other row is appended to the list
 * of its rowtime and an event-time timer at that rowtime is registered.
 * When the watermark reaches it the timer emits the list -- in arrival
 * order, or sorted by the "order-by" columns when there are any (rows equal
 * on them keep their arrival order) -- and removes it. So rows go out in
 * rowtime order and the state holds only rows ahead of the watermark.
 *
 * Processing time (no "time-column"; Flink's ProcTimeSortOperator without
 * further sort columns): rows go out in the order they arrive, at once.
 *
 * Config:
 *   "time-column": "ts"              the rowtime attribute (TIMESTAMP)
 *   "order-by":    ["id", "v DESC"]  further sort columns (event time only)
 *
 * State: a list state "rows" whose namespace is the rowtime (8 bytes,
 * big-endian, sign flipped), each element a row (sl_row_encode of the
 * input schema); the timers carry the same namespace. State and timers are
 * the runtime's, so both backends snapshot and restore them by key group.
 * Output is insert-only; the watermark passes through unchanged (a row
 * goes out when the watermark reaches its rowtime, before that watermark).
 *
 * No allocation per record: the encode buffer grows to the largest row;
 * sorting a timestamp's rows reuses buffers that grow to the most rows
 * one timestamp has held.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "jobgraph.h"
#include "operator.h"

#define TS_MAX_ORDER 16

typedef struct ts_plan {
    char *vid;
    int tcol;                  /* the rowtime column; -1: processing time */
    int norder;
    int ocol[TS_MAX_ORDER];    /* further sort columns */
    int odesc[TS_MAX_ORDER];
} ts_plan;

typedef struct ts_state {
    sl_vstate *rows;
    uint8_t *buf;              /* a row being encoded; grows only */
    size_t cap;
    sl_value *vals;            /* a decoded row */
    /* sorting the rows of one rowtime */
    uint8_t *blob;             /* their encodings, end to end */
    size_t blen, bcap;
    size_t *off;               /* where each starts */
    int *idx;                  /* the order to emit them in */
    sl_value *all;             /* all of them decoded, n * ncols */
    int nrows, rcap, acap;     /* acap: rows `all` has room for */
    char err[256];
} ts_state;

static void ts_ns(uint8_t ns[8], int64_t t)
{
    uint64_t u = (uint64_t)t ^ (UINT64_C(1) << 63);
    for (int i = 0; i < 8; i++) ns[i] = (uint8_t)(u >> (56 - 8 * i));
}

static void ts_plan_free(void *p)
{
    ts_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl);
}

static void *ts_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    ts_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    pl->tcol = -1;
    sl_schema_init(pc->out);
    const char *tc = sl_plan_opt_str(pc, "time-column");
    if (tc) {
        pl->tcol = sl_schema_find(in, tc);
        if (pl->tcol < 0 || in->fields[pl->tcol].type != SL_T_TIMESTAMP) {
            sl_seterr(err, errlen, "vertex '%s': option 'time-column' must name a TIMESTAMP "
                      "column of the input (the rowtime attribute)", pl->vid);
            goto fail;
        }
    }
    const json_t *j = sl_plan_opt_json(pc, "order-by");
    if (j && !json_is_array(j)) {
        sl_seterr(err, errlen, "vertex '%s': option 'order-by' must be a list of columns",
                  pl->vid);
        goto fail;
    }
    size_t cnt = j ? json_array_size(j) : 0;
    if (cnt > TS_MAX_ORDER) {
        sl_seterr(err, errlen, "vertex '%s': 'order-by' has %zu columns, at most %d are supported",
                  pl->vid, cnt, TS_MAX_ORDER);
        goto fail;
    }
    if (cnt && pl->tcol < 0) {
        sl_seterr(err, errlen, "vertex '%s': 'order-by' needs 'time-column' (the rows of one "
                  "rowtime are what it sorts)", pl->vid);
        goto fail;
    }
    for (size_t i = 0; i < cnt; i++) {
        const char *s = json_string_value(json_array_get(j, i));
        char name[256];
        int desc = 0;
        if (!s || strlen(s) >= sizeof name) goto bad_item;
        snprintf(name, sizeof name, "%s", s);
        char *sp = strchr(name, ' ');
        if (sp) {
            if (!strcasecmp(sp + 1, "DESC")) desc = 1;
            else if (strcasecmp(sp + 1, "ASC")) goto bad_item;
            *sp = 0;
        }
        int c = sl_schema_find(in, name);
        if (c < 0) goto bad_item;
        pl->ocol[pl->norder] = c;
        pl->odesc[pl->norder++] = desc;
        continue;
    bad_item:
        sl_seterr(err, errlen, "vertex '%s': order-by item %zu must be a column of the input, "
                  "optionally followed by ASC or DESC", pl->vid, i + 1);
        goto fail;
    }
    sl_schema_copy(pc->out, in);
    if (sl_plan_key(pc, 0, NULL, 0, err, errlen) != SL_OK) goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    ts_plan_free(pl);
    return NULL;
}

static void ts_close(sl_op *op)
{
    ts_state *st = op->priv;
    if (!st) return;
    free(st->buf);
    free(st->vals);
    free(st->blob);
    free(st->off);
    free(st->idx);
    free(st->all);
    free(st);
    op->priv = NULL;
}

static int ts_open(sl_op *op)
{
    const ts_plan *pl = op->plan;
    ts_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)op->in->n + 1, sizeof *st->vals);
    if (pl->tcol < 0) return SL_OK;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    st->rows = sl_op_state(op, "rows", SL_STATE_LIST, 0);
    return st->rows ? SL_OK : SL_ERR;
}

static int ts_process(sl_op *op, int input, sl_row *row)
{
    const ts_plan *pl = op->plan;
    ts_state *st = op->priv;
    SL_UNUSED(input);
    if (row->kind != SL_KIND_INSERT)
        return sl_op_fail(op, "vertex '%s': ORDER BY a time attribute needs an insert-only "
                          "input, but a %s row arrived", pl->vid, sl_rowkind_short(row->kind));
    if (pl->tcol < 0) return sl_op_emit(op, row);
    if (row->vals[pl->tcol].isnull)
        return sl_op_fail(op, "vertex '%s': the time attribute '%s' is NULL in a row", pl->vid,
                          op->in->fields[pl->tcol].name);
    int64_t t = row->vals[pl->tcol].v.i;
    if (t <= op->current_watermark) {
        op->metrics.late_dropped++;
        return SL_OK;
    }
    size_t n = sl_row_size(row, op->in);
    if (n > st->cap) {
        size_t c = st->cap ? st->cap : 256;
        while (c < n) c *= 2;
        st->buf = sl_realloc(st->buf, c);
        st->cap = c;
    }
    if (sl_row_encode(row, op->in, st->buf, st->cap) != n)
        return sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
    uint8_t ns[8];
    ts_ns(ns, t);
    if (sl_list_add(st->rows, ns, sizeof ns, st->buf, n) != SL_OK) return SL_ERR;
    /* registering (time, key, ns) again keeps one timer */
    return sl_op_timer_register(op, SL_TIME_EVENT, t, ns, sizeof ns);
}

/* Emit one stored row as it is (no further sort columns). */
static int ts_emit_one(void *ctx, const void *val, size_t len)
{
    sl_op *op = ctx;
    const ts_plan *pl = op->plan;
    ts_state *st = op->priv;
    sl_row out = {.vals = st->vals};
    if (sl_row_decode(val, len, op->in, &out, st->err, sizeof st->err) != SL_OK) {
        sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, st->err);
        return 1;
    }
    out.kind = SL_KIND_INSERT;
    out.ts = out.vals[pl->tcol].v.i;
    if (sl_op_emit(op, &out) != SL_OK) {
        if (!op->err[0]) sl_op_fail(op, "vertex '%s': cannot emit a row", pl->vid);
        return 1;
    }
    return 0;
}

/* Gather one stored row for sorting. */
static int ts_gather(void *ctx, const void *val, size_t len)
{
    ts_state *st = ctx;
    if (st->nrows == st->rcap) {
        st->rcap = st->rcap ? st->rcap * 2 : 64;
        st->off = sl_realloc(st->off, sizeof *st->off * (size_t)st->rcap);
        st->idx = sl_realloc(st->idx, sizeof *st->idx * (size_t)st->rcap);
    }
    if (st->blen + len > st->bcap) {
        size_t c = st->bcap ? st->bcap : 4096;
        while (c < st->blen + len) c *= 2;
        st->blob = sl_realloc(st->blob, c);
        st->bcap = c;
    }
    memcpy(st->blob + st->blen, val, len);
    st->off[st->nrows] = st->blen;
    st->blen += len;
    st->idx[st->nrows] = st->nrows;
    st->nrows++;
    return 0;
}

/* Insertion sort of the gathered rows by the order-by columns: stable, so
 * rows equal on them keep their arrival order (and one rowtime rarely holds
 * many rows). */
static void ts_sort(const ts_plan *pl, const sl_schema *in, ts_state *st)
{
    int nc = in->n;
    for (int i = 1; i < st->nrows; i++) {
        int x = st->idx[i], j = i - 1;
        for (; j >= 0; j--) {
            int y = st->idx[j], c = 0;
            for (int k = 0; !c && k < pl->norder; k++) {
                int col = pl->ocol[k];
                c = sl_value_cmp(in->fields[col].dt, &st->all[y * nc + col],
                                 &st->all[x * nc + col]);
                if (pl->odesc[k]) c = -c;
            }
            if (c <= 0) break;
            st->idx[j + 1] = y;
        }
        st->idx[j + 1] = x;
    }
}

static int ts_fire_sorted(sl_op *op, const uint8_t *ns)
{
    const ts_plan *pl = op->plan;
    ts_state *st = op->priv;
    int nc = op->in->n;
    st->nrows = 0;
    st->blen = 0;
    if (sl_list_each(st->rows, ns, 8, ts_gather, st) != SL_OK) return SL_ERR;
    if (st->acap < st->rcap) {
        st->all = sl_realloc(st->all, sizeof *st->all * ((size_t)st->rcap * (size_t)nc + 1));
        st->acap = st->rcap;
    }
    for (int i = 0; i < st->nrows; i++) {
        size_t end = i + 1 < st->nrows ? st->off[i + 1] : st->blen;
        sl_row r = {.vals = st->all + (size_t)i * (size_t)nc};
        if (sl_row_decode(st->blob + st->off[i], end - st->off[i], op->in, &r, st->err,
                          sizeof st->err) != SL_OK)
            return sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, st->err);
    }
    ts_sort(pl, op->in, st);
    for (int i = 0; i < st->nrows; i++) {
        sl_row out = {.kind = SL_KIND_INSERT, .n = nc,
                      .vals = st->all + (size_t)st->idx[i] * (size_t)nc};
        out.ts = out.vals[pl->tcol].v.i;
        int rc = sl_op_emit(op, &out);
        if (rc != SL_OK) return rc;
    }
    return SL_OK;
}

/* The watermark reached `time`: its rows go out and leave the state. */
static int ts_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns,
                       size_t nslen)
{
    const ts_plan *pl = op->plan;
    ts_state *st = op->priv;
    if (!st || domain != SL_TIME_EVENT || nslen != 8) return SL_OK;
    SL_UNUSED(time);
    if (pl->norder) {
        if (ts_fire_sorted(op, ns) != SL_OK) return SL_ERR;
    } else {
        op->err[0] = 0;
        int rc = sl_list_each(st->rows, ns, nslen, ts_emit_one, op);
        if (rc != SL_OK || op->err[0]) return SL_ERR;
    }
    return sl_state_clear(st->rows, ns, nslen);
}

static const sl_op_option ts_options[] = {
    {"time-column", SL_CT_STRING, NULL, NULL,
     "Rowtime column (TIMESTAMP) the rows are sorted on; unset: processing time (arrival order)."},
    {"order-by", SL_CT_JSON, NULL, NULL,
     "Further sort columns for rows of one rowtime, each \"col\" or \"col DESC\"."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_temporal_sort = {
    .abi = SL_OP_ABI_VERSION,
    .name = "temporal_sort",
    .flags = SL_OPF_KEYED,
    .options = ts_options,
    .plan = ts_plan_new,
    .plan_free = ts_plan_free,
    .open = ts_open,
    .process = ts_process,
    .close = ts_close,
    .on_timer = ts_on_timer,
};
