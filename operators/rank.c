/*
 * rank.c -- the `rank` operator (Flink's Top-N: ROW_NUMBER() OVER (PARTITION
 * BY ... ORDER BY ...) ... WHERE rn <= N) and the `deduplicate` operator
 * (the rn = 1 special case ordered by a time attribute), both keyed by the
 * partition columns and both emitting Flink's changelog.
 *
 * rank config:
 *   "partition-by":  ["category"]              key columns; [] = one global ranking
 *                    (run it with parallelism 1)
 *   "order-by":      ["sales DESC", "id"]      sort columns, ASC (default) or
 *                    DESC each; ASC puts NULLs first, DESC last (Flink's
 *                    defaults)
 *   "limit":         N                         rank end, 1..SL_RANK_MAX_N
 *   "rank-start":    M                         optional rank start, 1..N (default
 *                    1): only ranks M..N go out (Flink's `rn BETWEEN M AND N`;
 *                    the state still holds ranks 1..N)
 *   "row-number":    "rn"                      optional: append the rank as a
 *                    BIGINT column of that name; absent = no rank column
 *   "input-changelog": "insert-only" (default) | "retract"
 *   "state.ttl" / "table.exec.state.ttl": idle-state retention, as
 *                    group_aggregate's (0 or absent: forever)
 *   "window-end":    "window_end"              optional: a window Top-N (see below)
 * Output: the input's columns [+ the row number].
 *
 * Window Top-N ("window-end" names a TIMESTAMP partition column, Flink's
 * Top-N over a window TVF result partitioned by window_start, window_end
 * and keys): the list is kept as for insert-only input but nothing is
 * emitted until the watermark passes the window's end - 1, when an
 * event-time timer emits the final list as +I rows (append-only output) and
 * the partition's state is deleted. A row whose window already fired is
 * late: dropped and counted in numLateRecordsDropped.
 *
 * Order. Rows compare by their sort columns; rows that tie keep arrival
 * order (the earlier row ranks higher), as Flink's Top-N does. Each stored
 * row is named by an order-preserving byte string, its "rank key": the sort
 * columns encoded so that memcmp order is the ORDER BY order, then an 8-byte
 * big-endian arrival number per partition. Both state backends scan a key's
 * entries in namespace order, so the rank key is also the namespace of the
 * full-row store below.
 *
 * Changelog. Each input row changes a partition's Top-N list from `old` to
 * `new`; what goes out is the difference:
 *   without a row number: every row that left the list as -D, then every
 *     row that entered it as +I (an insert into a full list: -D[evicted],
 *     +I[row]; a retraction from it: -D[row], +I[promoted]);
 *   with a row number: per rank position whose row changed, -U[old, i] then
 *     +U[new, i]; a position that is new +I[new, i], one that is gone
 *     -D[old, i] (rows after an inserted one shift down one position each,
 *     as Flink emits them).
 * With a rank start M > 1 both forms look at positions M..N only: a row
 * that moves within 1..M-1 changes nothing outside, one pushed from M-1 to
 * M enters the output.
 *
 * State per partition key, in op->kstate:
 *   "top"   the list as one value: i64 last update, i64 TTL timer time, u64
 *           next arrival number, u32 count, u64 live rows of the partition
 *           (retract mode), then per row in rank order u32 rank-key length,
 *           rank key, u32 row length, row (sl_row_encode of the input
 *           schema). It holds the cap best rows: N, and with "retract" as
 *           many again (at least 16) as a cache of the next best, so that
 *           retractions from the Top-N rarely need the store below.
 *   "rows"  only with "input-changelog": "retract": every live row of the
 *           partition (namespace = rank key, value = the encoded row). The
 *           "top" value is always the first min(cap, rows) entries of this
 *           store in rank-key order; when a retraction leaves fewer than N
 *           and the partition has more, one scan refills it.
 *   "index" only with "retract": namespace = the sort prefix and the row's
 *           bytes, value = the arrival numbers of its live copies (u64
 *           each, ascending), so a retraction finds its row's rank key
 *           without a scan; it retracts the earliest copy.
 * Insert-only input keeps no rows beyond the N best: an append-only
 * Top-N's state is bounded by N per partition, an updating one's by the
 * live rows of the input. A retraction that matches no live row is ignored
 * (Flink does the same once state has expired). Cost per row: the "top"
 * value is read and written whole (O(cap)), plus in retract mode one
 * "rows" and one "index" write; a refill scans the partition's rows (on
 * the hashmap backend, its key group's table).
 *
 * deduplicate config:
 *   "key":        ["user_id"]                 key columns
 *   "time-column": "ts" (a rowtime attribute) or "time": "processing"
 *   "keep":       "first" | "last"
 *   "state.ttl" / "table.exec.state.ttl"
 * Output: the input's columns. Changelog, as Flink's deduplication:
 *   keep first on processing time: +I for a key's first row, later rows are
 *     dropped (append-only; state is one marker per key);
 *   keep last on processing time: +I, then -U[previous] +U[row] per row;
 *   keep first on event time: +I, and -U/+U when a row with an earlier
 *     rowtime arrives (out of order); others are dropped;
 *   keep last on event time: -U/+U when a row's rowtime is >= the kept
 *     one's; earlier ones are dropped.
 * State "last" per key: i64 last update, i64 TTL timer time, i64 rowtime,
 * then the encoded row (keep-first on processing time: no row).
 *
 * State TTL for both operators follows group_aggregate.c: one
 * processing-time timer per live key at last update + TTL; when it fires
 * the key is forgotten if idle (nothing emitted), else the timer moves.
 *
 * No allocation per record once the per-subtask buffers have grown to the
 * largest list seen (they only grow).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agg.h"
#include "buf.h"
#include "bytes.h"
#include "jobgraph.h"
#include "operator.h"
#include "temporal.h"

#define SL_RANK_MAX_N 10000     /* the list is read and written whole per record */
#define TOP_HDR 36              /* i64 last update, i64 timer, u64 next seq, u32 count,
                                   u64 live rows of the partition (retract mode) */
#define DD_HDR 24               /* i64 last update, i64 timer, i64 rowtime */

static const uint8_t no_ns[1];

static inline int64_t add_sat(int64_t a, int64_t b) /* b >= 0 */
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* ---- clock ----------------------------------------------------------------- */

static int64_t (*rank_clock)(void) = sl_now_ms;

void sl_rank_set_clock(int64_t (*fn)(void));

/* Test hook: processing time for the TTL from fn (NULL: the wall clock). */
void sl_rank_set_clock(int64_t (*fn)(void)) { rank_clock = fn ? fn : sl_now_ms; }

/* ---- growable buffers --------------------------------------------------------- */

/* The buffers are sl_bufs (buf.h); these append fixed-width integers. */

static inline void gb_u32(sl_buf *b, uint32_t x)
{
    sl_put_le32((uint8_t *)sl_buf_room(b, 4), x);
    sl_buf_added(b, 4);
}

static inline void gb_be64(sl_buf *b, uint64_t x)
{
    sl_put_be64((uint8_t *)sl_buf_room(b, 8), x);
    sl_buf_added(b, 8);
}

/* ---- shared config -------------------------------------------------------------- */

/* Columns named by option `key` (an array of names, or one name) into
 * cols[] (at most SL_MAX_KEY_COLS; at least `min`); with `dirs` each name
 * may end in ASC or DESC (dirs[i] = 1 for DESC). */
static int parse_cols(const sl_vertex *v, const sl_schema *in, const char *key, int min, int *cols,
                      unsigned char *dirs, int *n, char *err, size_t errlen)
{
    const char *vid = v->id ? v->id : "?";
    json_t *j = sl_vconf_array(v, key);
    if (!j)
        return sl_seterr(err, errlen, "vertex '%s': option '%s' is required (an array of column "
                         "names%s)", vid, key, dirs ? ", each optionally followed by ASC or DESC" : "");
    size_t cnt = json_is_string(j) ? 1 : json_array_size(j);
    *n = 0;
    if (cnt < (size_t)min)
        return sl_seterr(err, errlen, "vertex '%s': '%s' must list at least one column", vid, key);
    if (cnt > SL_MAX_KEY_COLS)
        return sl_seterr(err, errlen, "vertex '%s': '%s' has %zu columns, the limit is %d", vid,
                         key, cnt, SL_MAX_KEY_COLS);
    *n = 0;
    for (size_t i = 0; i < cnt; i++) {
        json_t *ji = json_is_string(j) ? j : json_array_get(j, i);
        if (!json_is_string(ji))
            return sl_seterr(err, errlen, "vertex '%s': '%s' item %zu must be a column name", vid,
                             key, i + 1);
        char name[256];
        snprintf(name, sizeof name, "%s", json_string_value(ji));
        int desc = 0;
        if (dirs) {
            size_t l = strlen(name);
            while (l && name[l - 1] == ' ') name[--l] = '\0';
            if (l > 5 && !strcasecmp(name + l - 5, " DESC")) desc = 1, name[l - 5] = '\0';
            else if (l > 4 && !strcasecmp(name + l - 4, " ASC")) name[l - 4] = '\0';
            l = strlen(name);
            while (l && name[l - 1] == ' ') name[--l] = '\0';
        }
        int c = sl_schema_find(in, name);
        if (c < 0)
            return sl_seterr(err, errlen, "vertex '%s': %s: unknown column '%s'", vid, key, name);
        /* a key column of any type is its value's bytes; an ORDER BY column
         * needs an order key of a classic type, or a DECIMAL (its unscaled
         * value, one scale per column) */
        if (dirs && ((!sl_type_is_classic(in->fields[c].type) &&
                      in->fields[c].type != SL_T_DECIMAL) ||
                     sl_dtype_has_nanos(in->fields[c].dt)))
            return sl_seterr(err, errlen, "vertex '%s': %s: column '%s' is %s, which is not "
                             "supported here yet", vid, key, name, in->fields[c].dt->text);
        if (in->fields[c].type == SL_T_BYTES && dirs)
            return sl_seterr(err, errlen, "vertex '%s': %s: column '%s' is BYTES, which has no "
                             "order", vid, key, name);
        for (int q = 0; q < *n; q++)
            if (cols[q] == c)
                return sl_seterr(err, errlen, "vertex '%s': %s: column '%s' is listed twice", vid,
                                 key, name);
        if (dirs) dirs[*n] = (unsigned char)desc;
        cols[(*n)++] = c;
    }
    return SL_OK;
}

/* state.ttl or its Flink alias into *ttl_ms (0 = none). */
static int parse_ttl(const sl_vertex *v, int64_t *ttl_ms, char *err, size_t errlen)
{
    json_t *jt = json_object_get(v->config, "state.ttl");
    json_t *jf = json_object_get(v->config, "table.exec.state.ttl");
    *ttl_ms = 0;
    if (jt && jf)
        return sl_seterr(err, errlen, "vertex '%s': set either 'state.ttl' or its alias "
                         "'table.exec.state.ttl', not both", v->id ? v->id : "?");
    if ((jt && !json_is_null(jt)) || (jf && !json_is_null(jf)))
        return sl_vconf_duration(v, jt ? "state.ttl" : "table.exec.state.ttl", 0, ttl_ms, err,
                                 errlen);
    return SL_OK;
}

/* Rows may carry -U/-D: "insert-only" (0) or "retract" (1). */
static int parse_changelog(const sl_vertex *v, int *retract, char *err, size_t errlen)
{
    const char *m = sl_vconf_str(v, "input-changelog", "insert-only");
    if (!strcasecmp(m, "retract")) *retract = 1;
    else if (!strcasecmp(m, "insert-only")) *retract = 0;
    else
        return sl_seterr(err, errlen, "vertex '%s': input-changelog must be \"insert-only\" or "
                         "\"retract\"", v->id ? v->id : "?");
    return SL_OK;
}

/* ---- rank keys ------------------------------------------------------------------ */

/* Append value v of type t so that memcmp order of the bytes is the value
 * order: a NULL flag (0 NULL, 1 value), then the value (integers and
 * timestamps offset to unsigned big endian, DOUBLE by its order key,
 * DECIMAL's 128-bit unscaled value offset the same way in 16 bytes,
 * strings with 0x00 escaped as 00 FF and ended by 00 00). DESC inverts the
 * column's bytes, which also moves NULLs last. */
static void sortkey_put(sl_buf *b, const sl_value *v, sl_type t, int desc)
{
    size_t start = b->len;
    if (v->isnull) {
        sl_buf_put(b, "\0", 1);
    } else {
        sl_buf_put(b, "\1", 1);
        if (t == SL_T_STRING || t == SL_T_BYTES) {
            const uint8_t *s = (const uint8_t *)v->v.s.p;
            for (uint32_t i = 0; i < v->v.s.len; i++) {
                if (s[i] == 0) sl_buf_put(b, "\0\377", 2);
                else sl_buf_put(b, &s[i], 1);
            }
            sl_buf_put(b, "\0\0", 2);
        } else if (t == SL_T_DECIMAL) {
            gb_be64(b, (uint64_t)v->v.dec.hi ^ (UINT64_C(1) << 63));
            gb_be64(b, v->v.dec.lo);
        } else {
            uint64_t k = (uint64_t)sl_agg_order_key(t, v) ^ (UINT64_C(1) << 63);
            gb_be64(b, k);
        }
    }
    if (desc)
        for (size_t i = start; i < b->len; i++) b->p[i] = (char)~b->p[i];
}

/* ==== rank ======================================================================= */

typedef struct rank_plan {
    char *vid;
    int npart, nord;
    int part[SL_MAX_KEY_COLS];
    int ord[SL_MAX_KEY_COLS];
    unsigned char desc[SL_MAX_KEY_COLS];
    int64_t limit;
    int64_t start;         /* the first rank that goes out (1..limit) */
    int row_number;        /* output the rank as the last column */
    int retract;           /* keep every row ("rows") so retractions can promote */
    int64_t ttl_ms;
    int wend;              /* window Top-N: the window_end column, else -1 */
    char *zone;            /* window Top-N of windows aligned in a zone (window.c
                              "Zones"): window_end is a local time there */
    int cap;               /* rows the "top" value holds: limit, and in retract mode
                              as many again (at least 16) of the next best */
} rank_plan;

/* One row of a Top-N list: its rank key and encoded row, pointing into a
 * buffer of the subtask. */
typedef struct rank_ent {
    const uint8_t *rk;
    uint32_t rklen;
    const uint8_t *row;
    uint32_t rowlen;
} rank_ent;

typedef struct rank_state {
    int sid_top, sid_rows, sid_idx;
    sl_buf cur;            /* the list as read from state */
    sl_buf next;           /* the list to write back */
    sl_buf in;             /* the input row's rank key, then its encoding */
    sl_buf scan;           /* rows collected by a scan of "rows" */
    sl_buf idx;            /* an "index" value being rebuilt */
    rank_ent *old, *new_;  /* cap + 1 entries each */
    sl_value *va, *vb;     /* decoded output rows: input columns + 1 */
    int64_t fire_now;
    sl_tz *tz;             /* pl->zone, opened; NULL: UTC */
} rank_state;

static void rank_plan_free(void *p)
{
    rank_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->zone);
    free(pl);
}

static void *rank_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    rank_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    if (parse_cols(v, in, "partition-by", 0, pl->part, NULL, &pl->npart, err, errlen) != SL_OK ||
        parse_cols(v, in, "order-by", 1, pl->ord, pl->desc, &pl->nord, err, errlen) != SL_OK ||
        parse_changelog(v, &pl->retract, err, errlen) != SL_OK ||
        parse_ttl(v, &pl->ttl_ms, err, errlen) != SL_OK)
        goto fail;
    if (!json_object_get(v->config, "limit")) {
        sl_seterr(err, errlen, "vertex '%s': option 'limit' is required (the N of Top-N)", pl->vid);
        goto fail;
    }
    if (sl_vconf_int(v, "limit", 0, &pl->limit, err, errlen) != SL_OK) goto fail;
    if (pl->limit < 1 || pl->limit > SL_RANK_MAX_N) {
        sl_seterr(err, errlen, "vertex '%s': limit must be between 1 and %d, not %lld", pl->vid,
                  SL_RANK_MAX_N, (long long)pl->limit);
        goto fail;
    }
    if (sl_vconf_int(v, "rank-start", 1, &pl->start, err, errlen) != SL_OK) goto fail;
    if (pl->start < 1 || pl->start > pl->limit) {
        sl_seterr(err, errlen, "vertex '%s': rank-start must be between 1 and limit (%lld), not "
                  "%lld", pl->vid, (long long)pl->limit, (long long)pl->start);
        goto fail;
    }
    pl->wend = -1;
    const char *we = sl_vconf_str(v, "window-end", NULL);
    if (we) {
        int c = sl_schema_find(in, we), part = 0;
        for (int i = 0; i < pl->npart; i++) part |= pl->part[i] == c;
        if (c < 0 || in->fields[c].type != SL_T_TIMESTAMP || !part) {
            sl_seterr(err, errlen, "vertex '%s': window-end '%s' must be a TIMESTAMP column listed "
                      "in partition-by", pl->vid, we);
            goto fail;
        }
        if (pl->retract || pl->ttl_ms > 0) {
            sl_seterr(err, errlen, "vertex '%s': a window Top-N (window-end) takes an insert-only "
                      "input and needs no state.ttl: the window's end bounds its state", pl->vid);
            goto fail;
        }
        pl->wend = c;
        bool ltz;
        if (sl_window_zone(pc, &ltz, &pl->zone, err, errlen) != SL_OK) goto fail;
    }
    /* a window Top-N's state ends with its window; otherwise only a TTL bounds it */
    if (pl->wend < 0 && pl->ttl_ms <= 0)
        sl_plan_unbounded_cols(pc, "Top-N", in, pl->part, pl->npart, "table.exec.state.ttl");
    pl->cap = (int)pl->limit;
    if (pl->retract) pl->cap += pl->limit > 16 ? (int)pl->limit : 16;
    sl_schema_copy(pc->out, in);
    const char *rn = sl_vconf_str(v, "row-number", NULL);
    if (rn && *rn) {
        if (sl_schema_find(in, rn) >= 0) {
            sl_seterr(err, errlen, "vertex '%s': row-number column '%s' is already an input "
                      "column", pl->vid, rn);
            goto fail;
        }
        if (in->n + 1 > SL_MAX_FIELDS) {
            sl_seterr(err, errlen, "vertex '%s': too many columns", pl->vid);
            goto fail;
        }
        sl_schema_add(pc->out, rn, SL_T_BIGINT);
        pl->row_number = 1;
    }
    if (sl_plan_key(pc, 0, pl->part, pl->npart, err, errlen) != SL_OK) goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    rank_plan_free(pl);
    return NULL;
}

static void rank_close(sl_op *op)
{
    rank_state *st = op->priv;
    if (!st) return;
    sl_buf_free(&st->cur);
    sl_buf_free(&st->next);
    sl_buf_free(&st->in);
    sl_buf_free(&st->scan);
    sl_buf_free(&st->idx);
    free(st->old);
    free(st->new_);
    free(st->va);
    free(st->vb);
    sl_tz_destroy(st->tz);
    free(st);
    op->priv = NULL;
}

static int rank_open(sl_op *op)
{
    const rank_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened for this keyed "
                          "operator", pl->vid);
    rank_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->sid_rows = st->sid_idx = -1;
    st->sid_top = sl_kstate_register(op->kstate, "top");
    if (pl->retract) {
        st->sid_rows = sl_kstate_register(op->kstate, "rows");
        st->sid_idx = sl_kstate_register(op->kstate, "index");
    }
    if (st->sid_top < 0 || (pl->retract && (st->sid_rows < 0 || st->sid_idx < 0)))
        return sl_op_fail(op, "vertex '%s': cannot register its keyed state", pl->vid);
    char zerr[300];
    if (pl->zone && !(st->tz = sl_tz_open(pl->zone, SL_TZ_JAVA_TIME, zerr, sizeof zerr)))
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, zerr);
    if (pl->ttl_ms > 0 && !op->proc_timers)
        return sl_op_fail(op, "vertex '%s': 'state.ttl' needs processing-time timers", pl->vid);
    st->old = sl_calloc((size_t)pl->cap + 1, sizeof *st->old);
    st->new_ = sl_calloc((size_t)pl->cap + 1, sizeof *st->new_);
    st->va = sl_calloc((size_t)op->in->n + 1, sizeof *st->va);
    st->vb = sl_calloc((size_t)op->in->n + 1, sizeof *st->vb);
    return SL_OK;
}

static int state_err(sl_op *op, const char *err)
{
    const rank_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
}

/* Parse the "top" value in st->cur into st->old; *count rows. */
static int top_parse(sl_op *op, int *count)
{
    const rank_plan *pl = op->plan;
    rank_state *st = op->priv;
    const uint8_t *p = sl_buf_u8(&st->cur), *end = sl_buf_u8(&st->cur) + st->cur.len;
    if (st->cur.len < TOP_HDR) goto bad;
    uint32_t n = sl_get_le32(p + 24);
    if (n > (uint32_t)pl->cap) goto bad;
    p += TOP_HDR;
    for (uint32_t i = 0; i < n; i++) {
        rank_ent *e = &st->old[i];
        if (end - p < 4) goto bad;
        e->rklen = sl_get_le32(p);
        p += 4;
        if ((size_t)(end - p) < (size_t)e->rklen + 4) goto bad;
        e->rk = p;
        p += e->rklen;
        e->rowlen = sl_get_le32(p);
        p += 4;
        if ((size_t)(end - p) < e->rowlen) goto bad;
        e->row = p;
        p += e->rowlen;
    }
    *count = (int)n;
    return SL_OK;
bad:
    return sl_op_fail(op, "vertex '%s': its \"top\" state is damaged or was written with "
                      "another limit or input-changelog (limit %lld now)", pl->vid,
                      (long long)pl->limit);
}

/* Emit row bytes e (+ rank when row-number is on) as kind. */
static int emit_ent(sl_op *op, sl_rowkind kind, const rank_ent *e, int64_t rank, sl_value *vals,
                    int64_t ts)
{
    const rank_plan *pl = op->plan;
    char err[256];
    sl_row r = {.vals = vals};
    if (sl_row_decode(e->row, e->rowlen, op->in, &r, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, err);
    r.kind = kind;
    r.ts = ts;
    if (pl->row_number) vals[r.n++] = (sl_value){.v.i = rank};
    return sl_op_emit(op, &r);
}

static inline bool ent_same(const rank_ent *a, const rank_ent *b)
{
    return a->rklen == b->rklen && !memcmp(a->rk, b->rk, a->rklen);
}

/* The changelog from list old[0..nold) to new[0..nnew) (see the top), over
 * the positions from the rank start on. */
static int emit_diff(sl_op *op, int nold, int nnew, int64_t ts)
{
    const rank_plan *pl = op->plan;
    rank_state *st = op->priv;
    int rc = SL_OK, first = (int)pl->start - 1;
    if (pl->row_number) {
        int n = nold > nnew ? nold : nnew;
        for (int i = first; rc == SL_OK && i < n; i++) {
            if (i < nold && i < nnew) {
                if (ent_same(&st->old[i], &st->new_[i])) continue;
                rc = emit_ent(op, SL_KIND_UPDATE_BEFORE, &st->old[i], i + 1, st->va, ts);
                if (rc == SL_OK) rc = emit_ent(op, SL_KIND_UPDATE_AFTER, &st->new_[i], i + 1, st->vb, ts);
            } else if (i < nnew) {
                rc = emit_ent(op, SL_KIND_INSERT, &st->new_[i], i + 1, st->vb, ts);
            } else {
                rc = emit_ent(op, SL_KIND_DELETE, &st->old[i], i + 1, st->va, ts);
            }
        }
        return rc;
    }
    /* both lists are in rank-key order: merge them */
    for (int pass = 0; pass < 2 && rc == SL_OK; pass++) {
        int i = first, j = first;
        while (rc == SL_OK && (i < nold || j < nnew)) {
            int c;
            if (i >= nold) c = 1;
            else if (j >= nnew) c = -1;
            else {
                const rank_ent *a = &st->old[i], *b = &st->new_[j];
                size_t m = a->rklen < b->rklen ? a->rklen : b->rklen;
                c = memcmp(a->rk, b->rk, m);
                if (!c) c = a->rklen < b->rklen ? -1 : a->rklen > b->rklen ? 1 : 0;
            }
            if (c == 0) i++, j++;
            else if (c < 0) { /* only in old: left the list */
                if (pass == 0) rc = emit_ent(op, SL_KIND_DELETE, &st->old[i], 0, st->va, ts);
                i++;
            } else { /* only in new */
                if (pass == 1) rc = emit_ent(op, SL_KIND_INSERT, &st->new_[j], 0, st->vb, ts);
                j++;
            }
        }
    }
    return rc;
}

static int rk_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    size_t m = al < bl ? al : bl;
    int c = memcmp(a, b, m);
    return c ? c : al < bl ? -1 : al > bl ? 1 : 0;
}

/* Write new[0..n) with header fields into "top" (or delete it when n = 0). */
static int top_write(sl_op *op, int n, int64_t last, int64_t timer, uint64_t seq, uint64_t total)
{
    rank_state *st = op->priv;
    char err[256];
    if (n == 0) {
        if (sl_kstate_del(op->kstate, st->sid_top, no_ns, 0, err, sizeof err) != SL_OK)
            return state_err(op, err);
        return SL_OK;
    }
    sl_buf_reset(&st->next);
    uint8_t *h = (uint8_t *)sl_buf_room(&st->next, TOP_HDR);
    sl_put_lei64(h, last);
    sl_put_lei64(h + 8, timer);
    sl_put_le64(h + 16, seq);
    sl_put_le32(h + 24, (uint32_t)n);
    sl_put_le64(h + 28, total);
    sl_buf_added(&st->next, TOP_HDR);
    for (int i = 0; i < n; i++) { /* entries point into cur, in or scan, never next */
        gb_u32(&st->next, st->new_[i].rklen);
        sl_buf_put(&st->next, st->new_[i].rk, st->new_[i].rklen);
        gb_u32(&st->next, st->new_[i].rowlen);
        sl_buf_put(&st->next, st->new_[i].row, st->new_[i].rowlen);
    }
    if (sl_kstate_put(op->kstate, st->sid_top, no_ns, 0, st->next.p, st->next.len, err,
                      sizeof err) != SL_OK)
        return state_err(op, err);
    return SL_OK;
}

/* ---- "rows" and "index" (retract mode) ------------------------------------------ */

typedef struct refill {
    rank_state *st;
    const uint8_t *after;   /* entries with a rank key > after (NULL: from the first) */
    size_t afterlen;
    int want, got;          /* how many to collect into st->scan */
} refill;

static int refill_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    refill *r = ctx;
    if (r->after && rk_cmp(ns, nslen, r->after, r->afterlen) <= 0) return 0;
    gb_u32(&r->st->scan, (uint32_t)nslen);
    sl_buf_put(&r->st->scan, ns, nslen);
    gb_u32(&r->st->scan, (uint32_t)vlen);
    sl_buf_put(&r->st->scan, val, vlen);
    return ++r->got >= r->want;
}

/* Append to new[*n..cap) the best rows of the partition after new[*n - 1]
 * (one scan of "rows", in rank-key order). */
static int rank_refill(sl_op *op, int *n)
{
    const rank_plan *pl = op->plan;
    rank_state *st = op->priv;
    char err[256];
    sl_buf_reset(&st->scan);
    refill r = {.st = st, .want = pl->cap - *n};
    if (*n > 0) r.after = st->new_[*n - 1].rk, r.afterlen = st->new_[*n - 1].rklen;
    if (sl_kstate_scan_key(op->kstate, st->sid_rows, refill_fn, &r, err, sizeof err) == SL_ERR)
        return state_err(op, err);
    for (size_t pos = 0; pos < st->scan.len;) {
        rank_ent *e = &st->new_[(*n)++];
        e->rklen = sl_get_le32(sl_buf_u8(&st->scan) + pos);
        e->rk = sl_buf_u8(&st->scan) + pos + 4;
        pos += 4 + e->rklen;
        e->rowlen = sl_get_le32(sl_buf_u8(&st->scan) + pos);
        e->row = sl_buf_u8(&st->scan) + pos + 4;
        pos += 4 + e->rowlen;
    }
    return SL_OK;
}

/* The "index" maps a row's sort prefix and bytes (the namespace k, klen) to
 * the arrival numbers of its live copies (u64 little endian each,
 * ascending). Add arrival `seq`, or (seq = NULL) take the earliest out into
 * *taken: SL_DONE when the row has no live copy. */
static int index_update(sl_op *op, const uint8_t *k, size_t klen, const uint64_t *seq,
                        uint64_t *taken)
{
    rank_state *st = op->priv;
    char err[256];
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_idx, k, klen, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    sl_buf_reset(&st->idx);
    if (rc == SL_OK) sl_buf_put(&st->idx, val, vlen - vlen % 8);
    if (seq) {
        sl_put_le64((uint8_t *)sl_buf_room(&st->idx, 8), *seq);
        sl_buf_added(&st->idx, 8);
    } else {
        if (st->idx.len == 0) return SL_DONE;
        *taken = sl_get_le64(sl_buf_u8(&st->idx));
        memmove(st->idx.p, st->idx.p + 8, st->idx.len - 8);
        sl_buf_truncate(&st->idx, st->idx.len - 8);
    }
    rc = st->idx.len ? sl_kstate_put(op->kstate, st->sid_idx, k, klen, st->idx.p, st->idx.len, err,
                                   sizeof err)
                   : sl_kstate_del(op->kstate, st->sid_idx, k, klen, err, sizeof err);
    return rc == SL_ERR ? state_err(op, err) : SL_OK;
}

static int collect_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    sl_buf *b = ctx;
    SL_UNUSED(val);
    SL_UNUSED(vlen);
    gb_u32(b, (uint32_t)nslen);
    sl_buf_put(b, ns, nslen);
    return 0;
}

/* Forget the current key: its list, its rows and its timer. The rows'
 * namespaces are collected in one scan (a scan may not modify the state),
 * then deleted. */
static int rank_drop_key(sl_op *op, int64_t timer)
{
    const rank_plan *pl = op->plan;
    rank_state *st = op->priv;
    char err[256];
    if (sl_kstate_del(op->kstate, st->sid_top, no_ns, 0, err, sizeof err) != SL_OK)
        return state_err(op, err);
    for (int k = 0; pl->retract && k < 2; k++) {
        int sid = k ? st->sid_idx : st->sid_rows;
        sl_buf_reset(&st->scan);
        if (sl_kstate_scan_key(op->kstate, sid, collect_fn, &st->scan, err, sizeof err) == SL_ERR)
            return state_err(op, err);
        for (size_t pos = 0; pos < st->scan.len;) {
            uint32_t n = sl_get_le32(sl_buf_u8(&st->scan) + pos);
            if (sl_kstate_del(op->kstate, sid, st->scan.p + pos + 4, n, err, sizeof err) != SL_OK)
                return state_err(op, err);
            pos += 4 + n;
        }
    }
    if (pl->ttl_ms > 0) sl_op_timer_delete(op, SL_TIME_PROCESSING, timer, no_ns, 0);
    return SL_OK;
}

static int rank_process(sl_op *op, int input, sl_row *row)
{
    const rank_plan *pl = op->plan;
    rank_state *st = op->priv;
    sl_kstate *ks = op->kstate;
    char err[256];
    bool retract = row->kind == SL_KIND_UPDATE_BEFORE || row->kind == SL_KIND_DELETE;
    SL_UNUSED(input);
    if (retract && !pl->retract)
        return sl_op_fail(op, "vertex '%s': received a retraction (%s) but its input is "
                          "insert-only; set \"input-changelog\": \"retract\" on it (a Top-N over "
                          "an updating input keeps every row to promote the next one)", pl->vid,
                          sl_rowkind_short(row->kind));
    int64_t now = pl->ttl_ms > 0 ? rank_clock() : 0;
    int64_t wfire = 0; /* window Top-N: when the row's window fires */
    if (pl->wend >= 0) {
        const sl_value *we = &row->vals[pl->wend];
        if (we->isnull)
            return sl_op_fail(op, "vertex '%s': window-end column '%s' is NULL in a row", pl->vid,
                              op->in->fields[pl->wend].name);
        wfire = sl_window_due(st->tz, we->v.i); /* its last ms as an instant */
        if (wfire <= op->current_watermark) { /* its window already fired */
            op->metrics.late_dropped++;
            return SL_OK;
        }
    }

    /* the current list */
    const void *val;
    size_t vlen;
    int count = 0;
    int64_t last = 0, timer = 0;
    uint64_t seq = 0, total = 0;
    int rc = sl_kstate_get(ks, st->sid_top, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    sl_buf_reset(&st->cur);
    if (rc == SL_OK) {
        sl_buf_put(&st->cur, val, vlen);
        if (top_parse(op, &count) != SL_OK) return SL_ERR;
        last = sl_get_lei64(sl_buf_u8(&st->cur));
        timer = sl_get_lei64(sl_buf_u8(&st->cur) + 8);
        seq = sl_get_le64(sl_buf_u8(&st->cur) + 16);
        total = sl_get_le64(sl_buf_u8(&st->cur) + 28);
        if (pl->ttl_ms > 0 && add_sat(last, pl->ttl_ms) <= now) { /* expired, not yet swept */
            if (rank_drop_key(op, timer) != SL_OK) return SL_ERR;
            count = 0;
            seq = total = 0;
            rc = SL_DONE;
        }
    }
    bool fresh = rc == SL_DONE;
    if (fresh && retract) return SL_OK; /* nothing to retract from */

    /* the row's rank key (sort columns, then an arrival number) and encoding */
    sl_buf_reset(&st->in);
    for (int i = 0; i < pl->nord; i++)
        sortkey_put(&st->in, &row->vals[pl->ord[i]], op->in->fields[pl->ord[i]].type, pl->desc[i]);
    size_t prefix = st->in.len;
    gb_be64(&st->in, seq);
    size_t rsz = sl_row_size(row, op->in);
    size_t roff = st->in.len;
    uint8_t *rp = (uint8_t *)sl_buf_room(&st->in, rsz);
    if (sl_row_encode(row, op->in, rp, rsz) != rsz)
        return sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
    rp[0] = SL_KIND_INSERT; /* stored rows compare by their values alone */
    sl_buf_added(&st->in, rsz);
    uint8_t *in = sl_buf_u8(&st->in);
    rank_ent me = {in, (uint32_t)(prefix + 8), in + roff, (uint32_t)rsz};
    if (pl->retract) { /* the index key: sort prefix, then the row (after it in st->in) */
        /* appended from the buffer itself: make the room first, so that the
           sources do not move under the copies */
        sl_buf_reserve(&st->in, prefix + rsz);
        sl_buf_put(&st->in, st->in.p, prefix);
        sl_buf_put(&st->in, st->in.p + roff, rsz);
        me.rk = sl_buf_u8(&st->in); /* the reserve may have moved the buffer */
        me.row = sl_buf_u8(&st->in) + roff;
    }
    const uint8_t *ikey = sl_buf_u8(&st->in) + roff + rsz;
    size_t iklen = prefix + rsz;

    int nnew = 0;
    if (!retract) {
        int pos = count;
        for (int i = 0; i < count; i++)
            if (rk_cmp(me.rk, me.rklen, st->old[i].rk, st->old[i].rklen) < 0) {
                pos = i;
                break;
            }
        /* the "top" value holds the cap best rows, all of them while there are fewer */
        bool keep = pos < count ||
                    (count < pl->cap && (!pl->retract || total == (uint64_t)count));
        if (!pl->retract && !keep) return SL_OK; /* never in the Top-N: not kept */
        if (pl->retract) {
            if (sl_kstate_put(ks, st->sid_rows, me.rk, me.rklen, me.row, me.rowlen, err,
                              sizeof err) != SL_OK)
                return state_err(op, err);
            if (index_update(op, ikey, iklen, &seq, NULL) != SL_OK) return SL_ERR;
            total++;
        }
        seq++;
        for (int i = 0; i < pos; i++) st->new_[nnew++] = st->old[i];
        if (keep) st->new_[nnew++] = me;
        for (int i = pos; i < count && nnew < pl->cap; i++) st->new_[nnew++] = st->old[i];
    } else {
        uint64_t s0;
        rc = index_update(op, ikey, iklen, NULL, &s0);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_DONE) return SL_OK; /* no such live row: ignored */
        sl_put_be64(sl_buf_u8(&st->in) + prefix, s0); /* the rank key of its earliest copy */
        if (sl_kstate_del(ks, st->sid_rows, me.rk, me.rklen, err, sizeof err) != SL_OK)
            return state_err(op, err);
        total--;
        for (int i = 0; i < count; i++)
            if (!ent_same(&st->old[i], &me)) st->new_[nnew++] = st->old[i];
        /* the visible list lost a row and the partition has more: refill */
        if (nnew < pl->limit && total > (uint64_t)nnew && rank_refill(op, &nnew) != SL_OK)
            return SL_ERR;
    }

    /* state: the new list, its TTL fields */
    if (fresh && pl->wend >= 0) sl_op_timer_register(op, SL_TIME_EVENT, wfire, no_ns, 0);
    if (pl->ttl_ms > 0) {
        if (fresh) {
            timer = add_sat(now, pl->ttl_ms);
            sl_op_timer_register(op, SL_TIME_PROCESSING, timer, no_ns, 0);
        }
        last = now;
    }
    if (nnew == 0 && pl->ttl_ms > 0) sl_op_timer_delete(op, SL_TIME_PROCESSING, timer, no_ns, 0);
    if (top_write(op, nnew, last, timer, seq, total) != SL_OK) return SL_ERR;
    if (pl->wend >= 0) return SL_OK; /* emitted when the window fires */
    int lim = (int)pl->limit;
    return emit_diff(op, count < lim ? count : lim, nnew < lim ? nnew : lim, row->ts);
}

/* Window Top-N: the current partition's window fired at `time`; emit its
 * final list (+I rows) and forget it. */
static int rank_fire_window(sl_op *op, int64_t time)
{
    const rank_plan *pl = op->plan;
    rank_state *st = op->priv;
    char err[256];
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_top, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    if (rc == SL_DONE) return SL_OK;
    sl_buf_reset(&st->cur);
    sl_buf_put(&st->cur, val, vlen);
    int count;
    if (top_parse(op, &count) != SL_OK) return SL_ERR;
    if (sl_kstate_del(op->kstate, st->sid_top, no_ns, 0, err, sizeof err) != SL_OK)
        return state_err(op, err);
    for (int i = (int)pl->start - 1; i < count; i++) {
        rc = emit_ent(op, SL_KIND_INSERT, &st->old[i], i + 1, st->va, time);
        if (rc != SL_OK) return rc;
    }
    return SL_OK;
}

static int rank_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns,
                         size_t nslen)
{
    const rank_plan *pl = op->plan;
    rank_state *st = op->priv;
    char err[256];
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    if (!st) return SL_OK;
    if (domain == SL_TIME_EVENT) return pl->wend >= 0 ? rank_fire_window(op, time) : SL_OK;
    if (pl->ttl_ms <= 0) return SL_OK;
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_top, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    if (rc == SL_DONE) return SL_OK;
    sl_buf_reset(&st->cur);
    sl_buf_put(&st->cur, val, vlen);
    int count;
    if (top_parse(op, &count) != SL_OK) return SL_ERR;
    int64_t last = sl_get_lei64(sl_buf_u8(&st->cur)), at = sl_get_lei64(sl_buf_u8(&st->cur) + 8);
    if (add_sat(last, pl->ttl_ms) <= time) return rank_drop_key(op, at);
    if (at != time) return SL_OK;
    at = add_sat(last, pl->ttl_ms);
    sl_put_lei64(sl_buf_u8(&st->cur) + 8, at);
    if (sl_kstate_put(op->kstate, st->sid_top, no_ns, 0, st->cur.p, st->cur.len, err, sizeof err) !=
        SL_OK)
        return state_err(op, err);
    sl_op_timer_register(op, SL_TIME_PROCESSING, at, no_ns, 0);
    return SL_OK;
}

static const sl_op_option rank_options[] = {
    {"partition-by", SL_CT_JSON, NULL, NULL,
     "Partition columns (a list)."},
    {"order-by", SL_CT_JSON, NULL, NULL,
     "Ordering: a list of {\"column\", \"desc\"}."},
    {"limit", SL_CT_STRING, NULL, NULL,
     "Top-N: the largest rank emitted."},
    {"rank-start", SL_CT_STRING, NULL, NULL,
     "Smallest rank emitted."},
    {"row-number", SL_CT_STRING, NULL, NULL,
     "true: emit the rank as a column."},
    {"input-changelog", SL_CT_STRING, NULL, NULL,
     "What the input carries: insert-only or a changelog (retractions)."},
    {"state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of a key's state (a duration or interval; 0: none)."},
    {"table.exec.state.ttl", SL_CT_STRING, NULL, NULL,
     "Flink's name of state.ttl, as the SQL planner writes it."},
    {"window-end", SL_CT_STRING, NULL, NULL,
     "Window Top-N: the window_end column the ranking is per."},
    SL_WINDOW_ZONE_OPTIONS,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_rank = {
    .abi = SL_OP_ABI_VERSION,
    .name = "rank",
    .flags = SL_OPF_KEYED,
    .options = rank_options,
    .plan = rank_plan_new,
    .plan_free = rank_plan_free,
    .open = rank_open,
    .process = rank_process,
    .close = rank_close,
    .on_timer = rank_on_timer,
    .restore_state = sl_op_restore_proc_timers,
};

/* ==== deduplicate ================================================================ */

typedef struct dd_plan {
    char *vid;
    int nkeys;
    int keys[SL_MAX_KEY_COLS];
    int tcol;              /* rowtime column, -1 = processing time */
    int keep_last;
    int64_t ttl_ms;
} dd_plan;

typedef struct dd_state {
    int sid;
    sl_buf buf;            /* the new state value */
    sl_buf prev;           /* the previous row's encoding */
    sl_value *vals;
} dd_state;

static void dd_plan_free(void *p)
{
    dd_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl);
}

static void *dd_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    dd_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    pl->tcol = -1;
    sl_schema_init(pc->out);
    if (parse_cols(v, in, "key", 1, pl->keys, NULL, &pl->nkeys, err, errlen) != SL_OK ||
        parse_ttl(v, &pl->ttl_ms, err, errlen) != SL_OK)
        goto fail;
    if (pl->ttl_ms <= 0)
        sl_plan_unbounded_cols(pc, "deduplication", in, pl->keys, pl->nkeys, "table.exec.state.ttl");
    const char *keep = sl_vconf_str(v, "keep", NULL);
    if (!keep || (strcasecmp(keep, "first") && strcasecmp(keep, "last"))) {
        sl_seterr(err, errlen, "vertex '%s': option 'keep' must be \"first\" or \"last\"", pl->vid);
        goto fail;
    }
    pl->keep_last = !strcasecmp(keep, "last");
    const char *tc = sl_vconf_str(v, "time-column", NULL);
    const char *tm = sl_vconf_str(v, "time", NULL);
    if ((tc != NULL) == (tm != NULL) || (tm && strcasecmp(tm, "processing"))) {
        sl_seterr(err, errlen, "vertex '%s': set either 'time-column' (an event-time column) or "
                  "'time': \"processing\"", pl->vid);
        goto fail;
    }
    if (tc) {
        pl->tcol = sl_schema_find(in, tc);
        if (pl->tcol < 0 || in->fields[pl->tcol].type != SL_T_TIMESTAMP) {
            sl_seterr(err, errlen, "vertex '%s': time-column '%s' must be a TIMESTAMP column of "
                      "the input", pl->vid, tc);
            goto fail;
        }
    }
    sl_schema_copy(pc->out, in);
    if (sl_plan_key(pc, 0, pl->keys, pl->nkeys, err, errlen) != SL_OK) goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    dd_plan_free(pl);
    return NULL;
}

static void dd_close(sl_op *op)
{
    dd_state *st = op->priv;
    if (!st) return;
    sl_buf_free(&st->buf);
    sl_buf_free(&st->prev);
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static int dd_open(sl_op *op)
{
    const dd_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    dd_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->sid = sl_kstate_register(op->kstate, "last");
    if (st->sid < 0) return sl_op_fail(op, "vertex '%s': cannot register its keyed state", pl->vid);
    if (pl->ttl_ms > 0 && !op->proc_timers)
        return sl_op_fail(op, "vertex '%s': 'state.ttl' needs processing-time timers", pl->vid);
    st->vals = sl_calloc((size_t)op->in->n + 1, sizeof *st->vals);
    return SL_OK;
}

static int dd_process(sl_op *op, int input, sl_row *row)
{
    const dd_plan *pl = op->plan;
    dd_state *st = op->priv;
    char err[256];
    SL_UNUSED(input);
    if (row->kind != SL_KIND_INSERT && row->kind != SL_KIND_UPDATE_AFTER)
        return sl_op_fail(op, "vertex '%s': deduplication needs an insert-only input, but a %s "
                          "row arrived", pl->vid, sl_rowkind_short(row->kind));
    int64_t t = 0;
    if (pl->tcol >= 0) {
        if (row->vals[pl->tcol].isnull)
            return sl_op_fail(op, "vertex '%s': the time attribute '%s' is NULL in a row", pl->vid,
                              op->in->fields[pl->tcol].name);
        t = row->vals[pl->tcol].v.i;
    }
    int64_t now = pl->ttl_ms > 0 ? rank_clock() : 0;
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    bool have = rc == SL_OK;
    int64_t timer = 0;
    if (have) {
        if (vlen < DD_HDR) return sl_op_fail(op, "vertex '%s': its state is damaged", pl->vid);
        timer = sl_get_lei64((const uint8_t *)val + 8);
        if (pl->ttl_ms > 0 && add_sat(sl_get_lei64(val), pl->ttl_ms) <= now) {
            if (sl_kstate_del(op->kstate, st->sid, no_ns, 0, err, sizeof err) != SL_OK)
                return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
            sl_op_timer_delete(op, SL_TIME_PROCESSING, timer, no_ns, 0);
            have = false;
        }
    }
    bool proc_first = pl->tcol < 0 && !pl->keep_last;
    if (have) {
        int64_t pt = sl_get_lei64((const uint8_t *)val + 16);
        bool replace = pl->tcol < 0 ? pl->keep_last : pl->keep_last ? t >= pt : t < pt;
        if (!replace) return SL_OK;
        sl_buf_reset(&st->prev);
        sl_buf_put(&st->prev, (const uint8_t *)val + DD_HDR, vlen - DD_HDR);
    }
    /* the new state value */
    if (!have && pl->ttl_ms > 0) {
        timer = add_sat(now, pl->ttl_ms);
        sl_op_timer_register(op, SL_TIME_PROCESSING, timer, no_ns, 0);
    }
    size_t rsz = proc_first ? 0 : sl_row_size(row, op->in);
    sl_buf_reset(&st->buf);
    uint8_t *b = (uint8_t *)sl_buf_room(&st->buf, DD_HDR + rsz);
    sl_put_lei64(b, now);
    sl_put_lei64(b + 8, timer);
    sl_put_lei64(b + 16, t);
    if (rsz && sl_row_encode(row, op->in, b + DD_HDR, rsz) != rsz)
        return sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
    sl_buf_added(&st->buf, DD_HDR + rsz);
    if (sl_kstate_put(op->kstate, st->sid, no_ns, 0, st->buf.p, st->buf.len, err, sizeof err) !=
        SL_OK)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    sl_row out = {.kind = SL_KIND_INSERT, .n = row->n, .vals = row->vals, .ts = row->ts};
    if (have) {
        sl_row old = {.vals = st->vals};
        if (sl_row_decode(sl_buf_u8(&st->prev), st->prev.len, op->in, &old, err, sizeof err) !=
            SL_OK)
            return sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, err);
        old.kind = SL_KIND_UPDATE_BEFORE;
        old.ts = row->ts;
        rc = sl_op_emit(op, &old);
        if (rc != SL_OK) return rc;
        out.kind = SL_KIND_UPDATE_AFTER;
    }
    return sl_op_emit(op, &out);
}

static int dd_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns,
                       size_t nslen)
{
    const dd_plan *pl = op->plan;
    dd_state *st = op->priv;
    char err[256];
    SL_UNUSED(domain);
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    if (pl->ttl_ms <= 0 || !st) return SL_OK;
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    if (rc == SL_DONE || vlen < DD_HDR) return SL_OK;
    int64_t last = sl_get_lei64(val), at = sl_get_lei64((const uint8_t *)val + 8);
    if (add_sat(last, pl->ttl_ms) <= time) {
        if (sl_kstate_del(op->kstate, st->sid, no_ns, 0, err, sizeof err) != SL_OK)
            return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        return SL_OK;
    }
    if (at != time) return SL_OK;
    at = add_sat(last, pl->ttl_ms);
    sl_buf_reset(&st->buf);
    sl_buf_put(&st->buf, val, vlen);
    sl_put_lei64(sl_buf_u8(&st->buf) + 8, at);
    if (sl_kstate_put(op->kstate, st->sid, no_ns, 0, st->buf.p, st->buf.len, err, sizeof err) !=
        SL_OK)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    sl_op_timer_register(op, SL_TIME_PROCESSING, at, no_ns, 0);
    return SL_OK;
}

static const sl_op_option dd_options[] = {
    {"key", SL_CT_JSON, NULL, NULL,
     "Key columns (a list or a comma-separated string)."},
    {"time-column", SL_CT_STRING, NULL, NULL,
     "Event-time column (rowtime) the operator reads."},
    {"time", SL_CT_STRING, NULL, NULL,
     "Time attribute: event (a column) or processing time."},
    {"keep", SL_CT_STRING, NULL, NULL,
     "first or last row per key."},
    {"state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of a key's state (a duration or interval; 0: none)."},
    {"table.exec.state.ttl", SL_CT_STRING, NULL, NULL,
     "Flink's name of state.ttl, as the SQL planner writes it."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_deduplicate = {
    .abi = SL_OP_ABI_VERSION,
    .name = "deduplicate",
    .flags = SL_OPF_KEYED,
    .options = dd_options,
    .plan = dd_plan_new,
    .plan_free = dd_plan_free,
    .open = dd_open,
    .process = dd_process,
    .close = dd_close,
    .on_timer = dd_on_timer,
    .restore_state = sl_op_restore_proc_timers,
};
