/*
 * local_aggregate.c -- the `local_aggregate` operator: the local phase of a
 * two-phase aggregation (Flink's LocalGroupAggregate and
 * LocalWindowAggregate), chained before the keyed exchange.
 *
 * Config:
 *   "group-by":   ["user_id"]          as the global operator's
 *   "aggregates": ["COUNT(*) AS cnt"]  as the global operator's; COUNT, SUM,
 *                                      MIN, MAX, AVG, FILTER; no DISTINCT;
 *                                      none with keys (a distinct: the
 *                                      partial is just the row count)
 * Both are parsed by sl_agg_plan_options (operators/agg.c), as the global
 * operator parses them.
 *   "window":     "TUMBLE(INTERVAL '10' SECOND)" | HOP | CUMULATE: window
 *                 mode, rows are combined per key and slice; absent: GROUP BY
 *   "time-column": the TIMESTAMP column (window mode)
 *   "time-attribute", "table.local-time-zone": as the window operator's:
 *                 a TIMESTAMP_LTZ attribute's slices align in the zone and
 *                 their ends (SL_AGG_SLICE_COL) are local times
 *   "table.exec.mini-batch.size":          entries buffered at most (1000)
 *   "table.exec.mini-batch.allow-latency": GROUP BY: how long a row may
 *                 wait in the buffer, processing time ("1 s"; 0 = until a
 *                 watermark, a barrier or a full buffer)
 *
 * Output (operators/agg.h, "Two-phase aggregation"): the group-by columns,
 * each aggregate's argument and FILTER column (NULL: only their names and
 * types matter, so the global operator plans the same accumulator), in
 * window mode SL_AGG_SLICE_COL, and SL_AGG_ACC_COL, the accumulator.
 *
 * The buffer. One entry per (key, slice) -- the encoded group-by values
 * (sl_row_encode, which also gives them back at the flush), the slice's end
 * and the accumulator -- in an arena with an open-addressing index, sized
 * at open for mini-batch.size entries: no allocation per record. A row
 * folds into its entry with sl_agg_add. The buffer flushes -- every entry
 * becomes one partial row, in the order the entries were made -- when it
 * is full, on a checkpoint barrier (snapshot_state: so the operator holds
 * no state and its snapshot is empty), at end of input, and:
 *   window mode: when the watermark reaches the end of a buffered slice,
 *     before the watermark goes on, so every partial reaches the global
 *     window before the watermark that fires it, as its rows would have; a
 *     row whose slice the watermark has already reached is passed on at
 *     once, alone, so lateness is judged downstream exactly as for a row;
 *   GROUP BY: on every watermark and when allow-latency has passed since
 *     the first buffered row (proc_time).
 * The input must be insert-only (retractions would need the count of every
 * buffered value of MIN/MAX).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "bytes.h"
#include "jobgraph.h"
#include "keygroup.h"
#include "operator.h"
#include "temporal.h"

#define LA_DEFAULT_SIZE 1000
#define LA_MAX_SIZE (1 << 20)
#define LA_KEY_BYTES 64 /* average key bytes the arena is sized for per entry */

typedef struct la_plan {
    char *vid;
    int window;           /* 1: per key and slice */
    int64_t slide;        /* window mode: slice length */
    int64_t offset;       /* slice start modulo slide */
    int tcol;             /* window mode: the time column */
    char *zone;           /* window mode, "time-attribute": "ltz" outside UTC: slices
                             align in this zone (window.c "Zones") */
    int nkeys;
    int *keys;            /* group-by columns of the input */
    sl_schema key_schema; /* the group-by columns, for the encoded key row */
    sl_agg_list aggs;
    int nout;             /* output columns */
    int nnull;            /* of which NULL placeholders */
    int64_t size;         /* mini-batch.size: entries */
    int64_t latency_ms;   /* GROUP BY: allow-latency; 0 = none */
} la_plan;

typedef struct la_ent {
    uint32_t hash;
    uint32_t klen;        /* encoded key row bytes */
    int64_t slice_end;    /* window mode; 0 otherwise */
    int64_t ts;           /* the last row's timestamp (GROUP BY output ts) */
} la_ent;                 /* then the accumulator, then the key (8-aligned) */

#define LA_ALIGN(n) (((n) + 7u) & ~(size_t)7u)

typedef struct la_state {
    uint8_t *arena;
    size_t arena_cap, arena_used;
    uint32_t *slots;      /* arena offset + 1, 0 = empty */
    uint32_t nslots;      /* power of two, >= 2 * size */
    int64_t nent;
    int64_t min_end;      /* window mode: the earliest buffered slice end */
    sl_tz *tz;            /* pl->zone opened for this subtask; NULL: UTC */
    uint8_t *key;         /* the record's encoded key row */
    size_t key_cap;
    sl_value *kin;        /* group-by values of the record */
    sl_value *outv;       /* a partial row's values */
    uint8_t *one;         /* a single row's accumulator (late rows) */
} la_state;

/* ---- plan -------------------------------------------------------------------- */

static void la_plan_free(void *p)
{
    la_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->zone);
    free(pl->keys);
    sl_schema_free(&pl->key_schema);
    sl_agg_list_free(&pl->aggs);
    free(pl);
}

/* Add input column c to out as a NULL placeholder unless a column of that
 * name is there already. */
static void add_placeholder(la_plan *pl, const sl_schema *in, int c, sl_schema *out)
{
    if (c < 0 || sl_schema_find(out, in->fields[c].name) >= 0) return;
    sl_schema_add_dt(out, in->fields[c].name, in->fields[c].dt);
    pl->nnull++;
}

static void *la_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->nin ? pc->in[0].schema : NULL;
    sl_schema *out = pc->out;
    const char *vid = v->id ? v->id : "?";
    la_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(vid);
    pl->tcol = -1;
    sl_agg_list_init(&pl->aggs);
    sl_schema_init(&pl->key_schema);
    sl_schema_init(out);
    sl_schema scratch;
    sl_schema_init(&scratch);

    /* the aggregates' own columns are the global phase's business: here they
     * only lay out the accumulator, so their output goes to a scratch schema */
    if (sl_agg_plan_options(vid, v->config, in, false, out, &scratch, &pl->keys, &pl->nkeys,
                            &pl->key_schema, &pl->aggs, err, errlen) != SL_OK)
        goto fail;
    if (!sl_agg_mergeable(&pl->aggs)) {
        if (pl->aggs.has_distinct)
            sl_seterr(err, errlen, "vertex '%s': DISTINCT aggregates cannot be pre-aggregated "
                      "(their partial value sets would overlap); plan them in one phase", vid);
        else
            sl_seterr(err, errlen, "vertex '%s': MIN/MAX of a STRING column cannot be "
                      "pre-aggregated (the accumulator does not hold strings); plan it in one "
                      "phase", vid);
        goto fail;
    }
    for (int i = 0; i < pl->aggs.n; i++) {
        add_placeholder(pl, in, pl->aggs.aggs[i].col, out);
        add_placeholder(pl, in, pl->aggs.aggs[i].filter, out);
    }

    json_t *jw = json_object_get(v->config, "window");
    if (jw) {
        if (!json_is_string(jw) ||
            sl_window_slicing(vid, json_string_value(jw), &pl->slide, &pl->offset, err,
                              errlen) != SL_OK) {
            if (!json_is_string(jw))
                sl_seterr(err, errlen, "vertex '%s': option 'window' must be a string such as "
                          "\"TUMBLE(INTERVAL '10' SECOND)\"", vid);
            goto fail;
        }
        pl->window = 1;
        const char *tname = sl_vconf_str(v, "time-column", NULL);
        pl->tcol = tname ? sl_schema_find(in, tname) : -1;
        if (pl->tcol < 0 || in->fields[pl->tcol].type != SL_T_TIMESTAMP) {
            sl_seterr(err, errlen, "vertex '%s': option 'time-column' must name a TIMESTAMP "
                      "column of the input", vid);
            goto fail;
        }
        sl_schema_add(out, SL_AGG_SLICE_COL, SL_T_TIMESTAMP);
        bool ltz;
        if (sl_window_zone(pc, &ltz, &pl->zone, err, errlen) != SL_OK) goto fail;
    }
    sl_schema_add(out, SL_AGG_ACC_COL, SL_T_BYTES);
    pl->nout = out->n;
    if (pl->nout > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': %d output columns (keys, aggregate arguments and "
                  "the accumulator), the limit is %d", vid, pl->nout, SL_MAX_FIELDS);
        goto fail;
    }
    if (sl_vconf_int(v, "table.exec.mini-batch.size", LA_DEFAULT_SIZE, &pl->size, err,
                     errlen) != SL_OK)
        goto fail;
    if (pl->size < 1 || pl->size > LA_MAX_SIZE) {
        sl_seterr(err, errlen, "vertex '%s': option 'table.exec.mini-batch.size' must be from 1 "
                  "to %d, not %lld", vid, LA_MAX_SIZE, (long long)pl->size);
        goto fail;
    }
    if (sl_vconf_duration(v, "table.exec.mini-batch.allow-latency", 1000, &pl->latency_ms, err,
                          errlen) != SL_OK)
        goto fail;
    sl_schema_free(&scratch);
    return pl;
fail:
    sl_schema_free(&scratch);
    la_plan_free(pl);
    sl_schema_free(out);
    return NULL;
}

/* ---- open / close -------------------------------------------------------------- */

static int la_open(sl_op *op)
{
    const la_plan *pl = op->plan;
    la_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->nslots = 2;
    while (st->nslots < 2 * (uint32_t)pl->size) st->nslots *= 2;
    st->slots = sl_calloc(st->nslots, sizeof *st->slots);
    st->arena_cap = (size_t)pl->size * (sizeof(la_ent) + LA_ALIGN(pl->aggs.size) + LA_KEY_BYTES);
    st->arena = sl_malloc(st->arena_cap);
    st->key_cap = 256;
    st->key = sl_malloc(st->key_cap);
    char uerr[700];
    if (pl->zone && !(st->tz = sl_tz_open(pl->zone, SL_TZ_JAVA_TIME, uerr, sizeof uerr)))
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, uerr);
    if (sl_agg_open(&pl->aggs, uerr, sizeof uerr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, uerr);
    st->kin = sl_calloc((size_t)pl->nkeys + 1, sizeof *st->kin);
    st->outv = sl_calloc((size_t)pl->nout, sizeof *st->outv);
    st->one = sl_malloc(pl->aggs.size);
    st->min_end = INT64_MAX;
    return SL_OK;
}

static void la_close(sl_op *op)
{
    la_state *st = op->priv;
    if (!st) return;
    free(st->arena);
    free(st->slots);
    free(st->key);
    free(st->kin);
    free(st->outv);
    free(st->one);
    sl_tz_destroy(st->tz);
    free(st);
    op->priv = NULL;
}

/* ---- the buffer ------------------------------------------------------------------ */

static inline uint8_t *ent_acc(la_ent *e) { return (uint8_t *)(e + 1); }
static inline uint8_t *ent_key(const la_plan *pl, la_ent *e)
{
    return ent_acc(e) + LA_ALIGN(pl->aggs.size);
}
static inline size_t ent_size(const la_plan *pl, size_t klen)
{
    return sizeof(la_ent) + LA_ALIGN(pl->aggs.size) + LA_ALIGN(klen);
}

/* One partial row of key row `key`, slice end, accumulator acc. */
static int emit_partial(sl_op *op, const uint8_t *key, size_t klen, int64_t slice_end,
                        int64_t ts, const uint8_t *acc)
{
    const la_plan *pl = op->plan;
    la_state *st = op->priv;
    sl_row kr = {.vals = st->outv};
    char derr[200];
    if (sl_row_decode(key, klen, &pl->key_schema, &kr, derr, sizeof derr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': a buffered key does not decode: %s", pl->vid, derr);
    int c = pl->nkeys;
    for (int i = 0; i < pl->nnull; i++) st->outv[c++] = (sl_value){.isnull = true};
    if (pl->window) st->outv[c++] = (sl_value){.v.i = slice_end};
    st->outv[c].isnull = false;
    st->outv[c].v.s.p = (const char *)acc;
    st->outv[c].v.s.len = (uint32_t)pl->aggs.size;
    sl_row out = {.kind = SL_KIND_INSERT, .n = pl->nout, .vals = st->outv,
                  .ts = pl->window ? sl_window_due(st->tz, slice_end) : ts};
    return sl_op_emit(op, &out);
}

/* Every entry out as a partial row, in the order they were made; then empty. */
static int flush(sl_op *op)
{
    const la_plan *pl = op->plan;
    la_state *st = op->priv;
    int rc = SL_OK;
    for (size_t off = 0; rc == SL_OK && off < st->arena_used;) {
        la_ent *e = (la_ent *)(st->arena + off);
        rc = emit_partial(op, ent_key(pl, e), e->klen, e->slice_end, e->ts, ent_acc(e));
        off += ent_size(pl, e->klen);
    }
    memset(st->slots, 0, st->nslots * sizeof *st->slots);
    st->arena_used = 0;
    st->nent = 0;
    st->min_end = INT64_MAX;
    op->proc_time_at = INT64_MAX;
    return rc;
}

/* The current record's group-by values encoded into st->key; its length. */
static size_t encode_key(sl_op *op, const sl_row *row)
{
    const la_plan *pl = op->plan;
    la_state *st = op->priv;
    for (int k = 0; k < pl->nkeys; k++) st->kin[k] = row->vals[pl->keys[k]];
    sl_row kr = {.kind = SL_KIND_INSERT, .n = pl->nkeys, .vals = st->kin};
    size_t need = sl_row_size(&kr, &pl->key_schema);
    if (need > st->key_cap) { /* grows to the longest key seen, not per record */
        free(st->key);
        st->key_cap = need;
        st->key = sl_malloc(need);
    }
    return sl_row_encode(&kr, &pl->key_schema, st->key, st->key_cap);
}

/* Fail the task with the message of the user function that failed. */
static int udf_failed(sl_op *op)
{
    const la_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s' (subtask %d): %s", pl->vid, op->subtask, sl_agg_error());
}

static int la_process(sl_op *op, int input, sl_row *row)
{
    const la_plan *pl = op->plan;
    la_state *st = op->priv;
    SL_UNUSED(input);
    if (SL_UNLIKELY(row->kind != SL_KIND_INSERT))
        return sl_op_fail(op, "vertex '%s': local aggregation takes an insert-only stream, got a "
                          "%s row (set table.optimizer.agg-phase-strategy to ONE_PHASE)", pl->vid,
                          sl_rowkind_short(row->kind));
    int64_t slice_end = 0;
    if (pl->window) {
        const sl_value *tv = &row->vals[pl->tcol];
        if (SL_UNLIKELY(tv->isnull))
            return sl_op_fail(op, "vertex '%s': the time column is NULL in a row; event-time "
                              "windows need a timestamp on every row", pl->vid);
        int64_t ts = st->tz ? sl_tz_to_local(st->tz, tv->v.i) : tv->v.i;
        int64_t rem = (ts - pl->offset) % pl->slide;
        int64_t start = rem < 0 ? ts - (rem + pl->slide) : ts - rem;
        slice_end = start + pl->slide;
    }
    size_t klen = encode_key(op, row);
    if (pl->window && sl_window_due(st->tz, slice_end) <= op->current_watermark) {
        /* the watermark passed its slice: on at once, judged downstream */
        sl_agg_init(&pl->aggs, st->one);
        if (sl_agg_add(&pl->aggs, st->one, row) != SL_OK) return udf_failed(op);
        return emit_partial(op, st->key, klen, slice_end, row->ts, st->one);
    }
    uint32_t h = sl_murmur3_32(st->key, klen, (uint32_t)slice_end ^ (uint32_t)(slice_end >> 32));
    uint32_t i = h & (st->nslots - 1);
    for (;; i = (i + 1) & (st->nslots - 1)) {
        uint32_t off = st->slots[i];
        if (!off) break;
        la_ent *e = (la_ent *)(st->arena + off - 1);
        if (e->hash == h && e->slice_end == slice_end && e->klen == klen &&
            memcmp(ent_key(pl, e), st->key, klen) == 0) {
            if (sl_agg_add(&pl->aggs, ent_acc(e), row) != SL_OK) return udf_failed(op);
            e->ts = row->ts;
            return SL_OK;
        }
    }
    size_t need = ent_size(pl, klen);
    if (st->nent >= pl->size || need > st->arena_cap - st->arena_used) {
        if (flush(op) != SL_OK) return SL_ERR;
        if (need > st->arena_cap) { /* a key longer than the whole arena: alone */
            sl_agg_init(&pl->aggs, st->one);
            if (sl_agg_add(&pl->aggs, st->one, row) != SL_OK) return udf_failed(op);
            return emit_partial(op, st->key, klen, slice_end, row->ts, st->one);
        }
        i = h & (st->nslots - 1);
    }
    la_ent *e = (la_ent *)(st->arena + st->arena_used);
    e->hash = h;
    e->klen = (uint32_t)klen;
    e->slice_end = slice_end;
    e->ts = row->ts;
    sl_agg_init(&pl->aggs, ent_acc(e));
    if (sl_agg_add(&pl->aggs, ent_acc(e), row) != SL_OK) return udf_failed(op);
    memcpy(ent_key(pl, e), st->key, klen);
    st->slots[i] = (uint32_t)st->arena_used + 1;
    st->arena_used += need;
    if (st->nent++ == 0 && !pl->window && pl->latency_ms > 0)
        op->proc_time_at = sl_now_ms() + pl->latency_ms;
    if (slice_end < st->min_end) st->min_end = slice_end;
    return SL_OK;
}

static int la_watermark(sl_op *op, int input, int64_t wm)
{
    const la_plan *pl = op->plan;
    la_state *st = op->priv;
    SL_UNUSED(input);
    SL_UNUSED(wm);
    int64_t cur = op->current_watermark;
    if (st->nent && (!pl->window || sl_window_due(st->tz, st->min_end) <= cur) && flush(op) != SL_OK) return SL_ERR;
    return sl_op_emit_watermark(op, cur);
}

static int la_proc_time(sl_op *op, int64_t now_ms)
{
    SL_UNUSED(now_ms);
    return flush(op);
}

static int la_end_input(sl_op *op, int input)
{
    SL_UNUSED(input);
    return flush(op);
}

/* A barrier: everything buffered goes before it, so there is nothing to
 * snapshot. */
static int la_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    SL_UNUSED(cpid);
    *blob = NULL;
    *len = 0;
    return flush(op);
}

static const sl_op_option la_options[] = {
    {"group-by", SL_CT_JSON, NULL, NULL,
     "Grouping columns: a list of names."},
    {"aggregates", SL_CT_JSON, NULL, NULL,
     "Aggregate calls: a list of {\"name\", \"fn\", \"arg\", ...}."},
    {"window", SL_CT_JSON, NULL, NULL,
     "The window: {\"type\": TUMBLE|HOP|CUMULATE|SESSION, \"size\", ...}."},
    {"time-column", SL_CT_STRING, NULL, NULL,
     "Event-time column (rowtime) the operator reads."},
    SL_WINDOW_ZONE_OPTIONS,
    {"table.exec.mini-batch.size", SL_CT_STRING, NULL, NULL,
     "Entries the local phase buffers before it flushes."},
    {"table.exec.mini-batch.allow-latency", SL_CT_STRING, NULL, NULL,
     "Longest a row waits in the local buffer."},
    SL_AGG_FUNCTIONS_OPTION,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_local_aggregate = {
    .abi = SL_OP_ABI_VERSION,
    .name = "local_aggregate",
    .options = la_options,
    .plan = la_plan_new,
    .plan_free = la_plan_free,
    .open = la_open,
    .process = la_process,
    .watermark = la_watermark,
    .proc_time = la_proc_time,
    .end_input = la_end_input,
    .snapshot_state = la_snapshot,
    .close = la_close,
};
