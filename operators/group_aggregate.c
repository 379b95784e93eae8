/*
 * group_aggregate.c -- the `group_aggregate` operator: an unbounded GROUP BY
 * that emits a changelog, as Flink's GroupAggFunction does.
 *
 * Config (SQL terms):
 *   "group-by":   ["user_id"]                one or more input columns
 *   "aggregates": ["COUNT(*) AS cnt", "COUNT(amount) AS n", "SUM(amount)",
 *                  "MIN(amount) AS lo", "MAX(amount)", "AVG(amount) AS a"]
 *                 function names are case-insensitive; without an alias an
 *                 item is named EXPR$<output position>, as Flink names it.
 *                 Optional: no aggregates is a SELECT DISTINCT.
 *   "input-changelog": "insert-only" (default) | "retract"
 *                 whether the input may carry -U/-D rows that MIN/MAX must
 *                 undo (see below). COUNT, SUM and AVG retract either way.
 *   "state.ttl":  "1 h" (alias: Flink's "table.exec.state.ttl") idle-state
 *                 retention in processing time; "0" or absent keeps state
 *                 forever. See "State TTL" below.
 * Output schema: the group-by columns, then one column per aggregate, typed
 * as Flink types them: COUNT -> BIGINT; SUM, MIN, MAX, AVG -> the input's
 * type (AVG of an integer type truncates toward zero, as Flink's does).
 * MIN/MAX also take STRING (as `window` does), ordered as Flink orders
 * StringData: unsigned bytes, then length.
 * Parsing, result types and the accumulator are operators/agg.c's, shared
 * with `window`; COUNT(1) is COUNT(*), MIN/MAX also take BOOLEAN.
 *
 * Semantics. The first row of a key emits +I[key, aggs]; a later row emits
 * -U[old] then +U[new], or nothing when the aggregate values did not change;
 * when a key's row count falls to 0 it emits -D[old] and its state is
 * deleted. Input rows +I/+U accumulate, -U/-D retract; a retraction for a
 * key without state is ignored (Flink does the same). NULLs are skipped by
 * every aggregate but COUNT(*) / COUNT(1); SUM/MIN/MAX/AVG of no non-NULL value
 * is NULL.
 *
 * State, in op->kstate (opened by the runtime for key groups
 * [kg_first, kg_last]):
 *   "acc"    per key, empty namespace: the aggregate list's fixed
 *            little-endian accumulator (operators/agg.h), i64 row count,
 *            then one slot per aggregate -- COUNT(*): none
 *            (it is the row count); COUNT(col): i64 count; SUM and AVG:
 *            i64 non-NULL count + 8-byte sum (wrapping u64 for integers,
 *            double for DOUBLE); MIN and MAX: i64 has-value + i64 order key
 *            (the value itself for BOOLEAN, integers and TIMESTAMP; for DOUBLE its
 *            bits mapped so that integer order is Java's Double.compareTo
 *            order: -0.0 < 0.0, NaN above everything).
 *   "minmax" only with "input-changelog": "retract" and a MIN or MAX: the
 *            multiset of each MIN/MAX's values, one entry per distinct value
 *            (namespace = aggregate index u8 + order key i64, value = i64
 *            count). Retracting the last copy of the current extremum
 *            rescans the key's entries for the next one. Insert-only input
 *            keeps just the running extremum, and a retraction reaching a
 *            MIN/MAX there fails the task with a message saying what to set.
 *   "distinct-calls" only with DISTINCT aggregates (COUNT/SUM/AVG(DISTINCT
 *            col)): the calls are grouped by column (in order of first
 *            appearance; within a group in list order), and all calls over
 *            one column share one entry per value: namespace = group u8 +
 *            the value's bytes, value = one i64 count of copies per call of
 *            the group. A call counts a row when the value is not NULL and
 *            its FILTER (WHERE flag), if any, is TRUE; the value enters that
 *            call's accumulator slot with its first copy and leaves with its
 *            last, so retractions work on either input-changelog. An entry
 *            whose counts are all 0 is deleted. One get + put per row and
 *            distinct column, however many calls read the column.
 *   "distinct" the layout before "distinct-calls": one entry per call and
 *            value (namespace = aggregate index u8 + the value's bytes,
 *            value = i64 copies). Still registered (in its old place, so
 *            the state ids of old snapshots line up) only to restore old
 *            snapshots and savepoints: restore_state moves every such entry
 *            into its "distinct-calls" entry and deletes it; one for an
 *            aggregate that is not DISTINCT here fails the restore.
 *   "minmax-str" only with MIN/MAX of a STRING column, whose value the
 *            fixed accumulator cannot hold (it keeps has-value): per
 *            aggregate (index u8 + 0) the current extremum's bytes, and with
 *            "input-changelog": "retract" the multiset of its values (index
 *            u8 + 1 + the value's bytes -> i64 copies), rescanned for the
 *            successor when the extremum's last copy is retracted. Every
 *            record reads the current string (the output shows it).
 *   "collect" only with COLLECT items (registered after the others): per
 *            item and value, namespace = aggregate index u8 + the value's
 *            binary form, value = i64 copies; an entry whose count falls to
 *            0 is deleted. A record reads the item's entries, sorts them by
 *            their bytes (so both backends give the same MULTISET bytes) and
 *            builds the MULTISET before and after its value: O(distinct
 *            values of the key) per record, as Flink's MapView iteration.
 *            COLLECT(DISTINCT x) counts copies the same way and writes
 *            each value once.
 *   "json-arrayagg" only with JSON_ARRAYAGG / JSON_OBJECTAGG items (after
 *            "collect"): see those sections below.
 *            With a state TTL the accumulator ends with two more i64s: the
 *            key's last update (wall-clock ms) and the time of its expiry
 *            timer (see below).
 * The accumulator's size is checked on every read, so state from a job with
 * other aggregates, or written with a TTL by a job now without one (or the
 * other way round), is refused rather than misread.
 *
 * State TTL, as Flink's idle-state retention (table.exec.state.ttl): a key
 * not updated for the TTL is forgotten -- its state is deleted without
 * emitting anything (Flink does not retract expired results), and a later
 * row for it starts from empty and emits +I again. Every row that reaches a
 * key's state counts as an update. The clock is wall-clock processing time
 * (sl_now_ms, read once per record only when a TTL is set). Expiry runs on
 * the processing-time timers, one timer per live key: registered when the
 * key's state is created, at last update + TTL. When it fires, a key
 * updated since then gets its timer moved to its new last update + TTL
 * instead of being deleted, so a busy key costs one timer firing per TTL
 * period rather than one timer per record. A row that finds its key's state
 * expired before the timer came round treats it as absent (Flink's
 * NeverReturnExpired), and a retraction that deletes the key removes its
 * timer too. Timers are checkpointed with the keyed state by the runtime;
 * restore_state re-arms op->proc_time_at from the restored ones.
 * Tests replace the clock with sl_group_aggregate_set_clock().
 *
 * Two phases. With "phase": "global" the input is a local_aggregate's
 * (operators/local_aggregate.c): per key a partial accumulator of several
 * rows (column SL_AGG_ACC_COL), merged in with sl_agg_merge where a row
 * would be added, so one partial makes one -U/+U pair (Flink's mini-batch
 * does the same: fewer intermediate updates, the same final values). Only
 * insert-only partials without DISTINCT are taken.
 *
 * Per record the path is: encode the key exactly as the hash partitioner
 * does, find its key group, read the accumulator into a buffer owned by the
 * subtask, update, write back, emit. Output rows borrow the input's key
 * values and a value array the subtask allocated in open(): no allocation
 * per record (the state backend allocates only for a new or grown entry).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobgraph.h"
#include "keygroup.h"
#include "operator.h"
#include "agg.h"
#include "udf_sig.h"
#include "buf.h"
#include "format_json.h"
#include "bytes.h"

#define GA_MM_NSLEN 9   /* "minmax" namespace: aggregate index + order key */

typedef struct ga_plan {
    char *vid;             /* vertex id, for runtime messages */
    int nkeys;
    int *keys;             /* group-by columns of the input */
    sl_agg_list aggs;      /* the aggregates; their accumulator opens the state value */
    bool retract_input;    /* "input-changelog": "retract" */
    bool retract_minmax;   /* keep MIN/MAX multisets (retract input with a MIN/MAX) */
    size_t acc_size;       /* bytes of one state value: aggs.size, then the TTL fields */
    int64_t ttl_ms;        /* state TTL; 0 = keep state forever */
    size_t ttl_off;        /* with a TTL: offset of last update, then timer time */
    int acccol;            /* "phase": "global": the partial accumulator column; -1 */
    /* DISTINCT aggregates grouped by column: every call over one column
     * shares one "distinct-calls" entry per value (see the layout above) */
    int ndg;               /* groups (distinct columns) */
    int *dg_start;         /* ndg + 1: group g's calls are dg_calls[dg_start[g] ..
                              dg_start[g + 1]) */
    int *dg_calls;         /* aggregate indices, in list order within a group */
    int *dg_of;            /* per aggregate: its group, or -1 (not DISTINCT) */
    int *dg_pos;           /* per aggregate: its position within its group */
    int dg_max;            /* calls of the largest group */
} ga_plan;

typedef struct ga_state {
    int sid_acc;           /* "acc" */
    int sid_mm;            /* "minmax", or -1 */
    int sid_distinct;      /* "distinct-calls" (DISTINCT aggregates), or -1 */
    int sid_dlegacy;       /* "distinct", the old layout: only migrated from */
    sl_buf dns;            /* a "distinct-calls" or "minmax-str" namespace or value being built */
    uint8_t *dval;         /* a "distinct-calls" value being built: dg_max i64s */
    bool *dpass;           /* dg_max: which calls of a group count this row */
    uint8_t *old_acc;      /* acc_size bytes: the accumulator before this record */
    uint8_t *new_acc;      /* acc_size bytes: after it */
    sl_value *vals_old;    /* nkeys + aggs.n output values */
    sl_value *vals_new;
    int sid_str;           /* "minmax-str" (STRING MIN/MAX), or -1 */
    sl_buf *str_old;       /* per aggregate: a STRING MIN/MAX's value before this record */
    sl_buf *str_new;       /* ... and after it */
    sl_buf nsbuf;          /* namespaces collected for deletion (rare path) */
    int sid_col;           /* "collect" (COLLECT items), or -1 */
    sl_buf *col_old;       /* per aggregate: a COLLECT's MULTISET bytes (a JSON_ARRAYAGG's
                            * text) before this record */
    sl_buf *col_new;       /* ... and after it */
    sl_buf cscan;          /* a COLLECT's entries read from state: [u32 len][value][i64 n] */
    sl_buf cidx;           /* offsets of those entries (size_t), sorted by value */
    int sid_jag;           /* "json-arrayagg" (JSON_ARRAYAGG, JSON_OBJECTAGG items), or -1 */
    sl_buf jval;           /* a value's JSON text */
    int64_t fire_now;      /* the `now` of the proc_time() call firing timers */
} ga_state;

/* ---- clock --------------------------------------------------------------- */

/* Where the operator reads processing time for the TTL. Tests point it at a
 * clock of their own; it is process-wide, so it is set before any task runs
 * and never changed under a running job. */
static int64_t (*ga_clock)(void) = sl_now_ms;

void sl_group_aggregate_set_clock(int64_t (*fn)(void));

/* Test hook: read processing time from fn (NULL: the wall clock again). */
void sl_group_aggregate_set_clock(int64_t (*fn)(void)) { ga_clock = fn ? fn : sl_now_ms; }

/* ---- little-endian fields of the accumulator ----------------------------- */

/* The accumulator is little endian everywhere (operators/agg.h), so a
 * savepoint reads the same on any host. */
static inline int64_t ld64(const uint8_t *p) { return sl_get_lei64(p); }
static inline void st64(uint8_t *p, int64_t v) { sl_put_lei64(p, v); }

/* ---- plan ----------------------------------------------------------------- */

static void ga_plan_free(void *p)
{
    ga_plan *pl = p;
    if (!pl) return;
    sl_agg_list_free(&pl->aggs);
    free(pl->dg_start);
    free(pl->dg_calls);
    free(pl->dg_of);
    free(pl->dg_pos);
    free(pl->keys);
    free(pl->vid);
    free(pl);
}

/* Group the DISTINCT aggregates by their column: COUNT(DISTINCT b),
 * COUNT(DISTINCT b) FILTER (...) and SUM(DISTINCT b) are one group, whose
 * value sets live in one state entry per value. At most 255 groups (the
 * namespace's first byte). */
static int plan_distinct_groups(ga_plan *pl, char *err, size_t errlen)
{
    int n = pl->aggs.n;
    pl->dg_of = sl_calloc((size_t)n, sizeof *pl->dg_of);
    pl->dg_pos = sl_calloc((size_t)n, sizeof *pl->dg_pos);
    pl->dg_calls = sl_calloc((size_t)n, sizeof *pl->dg_calls);
    pl->dg_start = sl_calloc((size_t)n + 1, sizeof *pl->dg_start);
    int *col = sl_calloc((size_t)n, sizeof *col); /* per group: its column */
    int *cnt = sl_calloc((size_t)n, sizeof *cnt); /* per group: its calls */
    for (int i = 0; i < n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        pl->dg_of[i] = -1;
        if (!a->distinct) continue;
        int g = 0;
        while (g < pl->ndg && col[g] != a->col) g++;
        if (g == pl->ndg) col[pl->ndg++] = a->col;
        pl->dg_of[i] = g;
        pl->dg_pos[i] = cnt[g]++;
    }
    for (int g = 0; g < pl->ndg; g++) {
        pl->dg_start[g + 1] = pl->dg_start[g] + cnt[g];
        if (cnt[g] > pl->dg_max) pl->dg_max = cnt[g];
    }
    for (int i = 0; i < n; i++)
        if (pl->dg_of[i] >= 0) pl->dg_calls[pl->dg_start[pl->dg_of[i]] + pl->dg_pos[i]] = i;
    free(col);
    free(cnt);
    if (pl->ndg > 255)
        return sl_seterr(err, errlen, "vertex '%s': DISTINCT aggregates over %d columns; at most "
                         "255", pl->vid, pl->ndg);
    return SL_OK;
}

/* Parse the config into a plan and fill `out` (which it overwrites). On
 * error returns NULL, leaves `out` empty and names the vertex in err. */
static void *ga_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->nin ? pc->in[0].schema : NULL;
    sl_schema *out = pc->out;
    const char *vid = v->id ? v->id : "?";
    ga_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(vid);
    pl->acccol = -1;
    sl_agg_list_init(&pl->aggs);
    pl->aggs.allow_collect = true;
    sl_schema_init(out);

    /* the key columns, then the aggregates (none: a SELECT DISTINCT) */
    if (sl_agg_plan_options(vid, v->config, in, true, out, out, &pl->keys, &pl->nkeys, NULL,
                            &pl->aggs, err, errlen) != SL_OK)
        goto fail;

    json_t *jm = json_object_get(v->config, "input-changelog");
    if (jm && !json_is_null(jm)) {
        const char *m = json_is_string(jm) ? json_string_value(jm) : "";
        if (strcasecmp(m, "retract") == 0) pl->retract_input = true;
        else if (strcasecmp(m, "insert-only") != 0) {
            sl_seterr(err, errlen, "vertex '%s': input-changelog must be \"insert-only\" or "
                      "\"retract\"", vid);
            goto fail;
        }
    }

    if (pl->aggs.has_distinct && plan_distinct_groups(pl, err, errlen) != SL_OK) goto fail;
    for (int i = 0; pl->retract_input && i < pl->aggs.n; i++)
        if (pl->aggs.aggs[i].udf && !pl->aggs.aggs[i].udf->retract) {
            sl_seterr(err, errlen, "vertex '%s': aggregate function '%s' declares no retract, "
                      "but the input is updating (give it retract, or aggregate an insert-only "
                      "input)", vid, pl->aggs.aggs[i].udf->name);
            goto fail;
        }

    pl->retract_minmax = pl->retract_input && pl->aggs.has_minmax;
    pl->aggs.keep_values = pl->retract_minmax;
    pl->acc_size = pl->aggs.size;
    bool two_phase;
    if (sl_agg_phase(vid, sl_vconf_str(v, "phase", NULL), &two_phase, err, errlen) != SL_OK)
        goto fail;
    if (two_phase) {
        pl->acccol = sl_schema_find(in, SL_AGG_ACC_COL);
        if (pl->acccol < 0 || in->fields[pl->acccol].type != SL_T_BYTES) {
            sl_seterr(err, errlen, "vertex '%s': a global phase takes a local_aggregate's output "
                      "(no BYTES column '%s' in the input)", vid, SL_AGG_ACC_COL);
            goto fail;
        }
        if (!sl_agg_mergeable(&pl->aggs) || pl->retract_minmax) {
            sl_seterr(err, errlen, "vertex '%s': two-phase GROUP BY needs insert-only input and "
                      "aggregates without DISTINCT or MIN/MAX of STRING", vid);
            goto fail;
        }
    }

    /* state.ttl, or the same under Flink's name */
    json_t *jt = json_object_get(v->config, "state.ttl");
    json_t *jf = json_object_get(v->config, "table.exec.state.ttl");
    if (jt && jf) {
        sl_seterr(err, errlen, "vertex '%s': set either 'state.ttl' or its alias "
                  "'table.exec.state.ttl', not both", vid);
        goto fail;
    }
    if (jt || jf) {
        const char *tkey = jt ? "state.ttl" : "table.exec.state.ttl";
        if (!json_is_null(jt ? jt : jf) &&
            sl_vconf_duration(v, tkey, 0, &pl->ttl_ms, err, errlen) != SL_OK)
            goto fail;
    }
    if (pl->ttl_ms > 0) {
        pl->ttl_off = pl->acc_size;
        pl->acc_size += 16;
    }
    if (sl_plan_key(pc, 0, pl->keys, pl->nkeys, err, errlen) != SL_OK) goto fail;
    /* unbounded state is declared (sl_plan_unbounded) unless a TTL bounds it,
     * or the group is the SQL planner's single constant one of GROUP BY
     * nothing (its key column "__global0"): one entry whatever comes */
    bool global = pl->nkeys == 1 && !strncmp(in->fields[pl->keys[0]].name, "__global", 8);
    if (pl->ttl_ms <= 0 && !global)
        sl_plan_unbounded_cols(pc, "GROUP BY", in, pl->keys, pl->nkeys, "table.exec.state.ttl");
    return pl;
fail:
    ga_plan_free(pl);
    sl_schema_free(out);
    return NULL;
}

/* ---- open / close ----------------------------------------------------------- */

static void ga_close(sl_op *op)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    if (!st) return;
    free(st->old_acc);
    free(st->new_acc);
    free(st->vals_old);
    free(st->vals_new);
    for (int i = 0; st->str_old && i < pl->aggs.n; i++) {
        sl_buf_free(&st->str_old[i]);
        sl_buf_free(&st->str_new[i]);
    }
    free(st->str_old);
    free(st->str_new);
    for (int i = 0; st->col_old && i < pl->aggs.n; i++) {
        sl_buf_free(&st->col_old[i]);
        sl_buf_free(&st->col_new[i]);
    }
    free(st->col_old);
    free(st->col_new);
    sl_buf_free(&st->cscan);
    sl_buf_free(&st->cidx);
    sl_buf_free(&st->jval);
    sl_buf_free(&st->nsbuf);
    sl_buf_free(&st->dns);
    free(st->dval);
    free(st->dpass);
    free(st);
    op->priv = NULL;
}

static int ga_open(sl_op *op)
{
    const ga_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened for this keyed "
                          "operator", pl->vid);
    ga_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->sid_mm = -1;
    st->sid_acc = sl_kstate_register(op->kstate, "acc");
    if (pl->retract_minmax) st->sid_mm = sl_kstate_register(op->kstate, "minmax");
    /* the old layout's state keeps its place in the registration order, so
     * that a snapshot taken before "distinct-calls" restores into it */
    st->sid_dlegacy = pl->aggs.has_distinct ? sl_kstate_register(op->kstate, "distinct") : -1;
    st->sid_str = pl->aggs.has_strval ? sl_kstate_register(op->kstate, "minmax-str") : -1;
    st->sid_distinct =
        pl->aggs.has_distinct ? sl_kstate_register(op->kstate, "distinct-calls") : -1;
    /* registered last, so that the state ids of snapshots from before it line up */
    st->sid_col = pl->aggs.has_collect ? sl_kstate_register(op->kstate, "collect") : -1;
    st->sid_jag = pl->aggs.has_jsonagg ? sl_kstate_register(op->kstate, "json-arrayagg") : -1;
    if (st->sid_acc < 0 || (pl->retract_minmax && st->sid_mm < 0) ||
        (pl->aggs.has_collect && st->sid_col < 0) || (pl->aggs.has_jsonagg && st->sid_jag < 0) ||
        (pl->aggs.has_distinct && (st->sid_distinct < 0 || st->sid_dlegacy < 0)) ||
        (pl->aggs.has_strval && st->sid_str < 0))
        return sl_op_fail(op, "vertex '%s': cannot register its keyed state (too many states)",
                          pl->vid);
    if (pl->ttl_ms > 0 && !op->proc_timers)
        return sl_op_fail(op, "vertex '%s': 'state.ttl' needs processing-time timers, but none "
                          "were set up for this operator", pl->vid);
    char uerr[700];
    if (sl_agg_open(&pl->aggs, uerr, sizeof uerr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, uerr);
    if (pl->aggs.has_distinct) {
        st->dval = sl_calloc((size_t)pl->dg_max, 8);
        st->dpass = sl_calloc((size_t)pl->dg_max, sizeof *st->dpass);
    }
    st->old_acc = sl_calloc(1, pl->acc_size);
    st->new_acc = sl_calloc(1, pl->acc_size);
    size_t nout = (size_t)(pl->nkeys + pl->aggs.n);
    st->vals_old = sl_calloc(nout, sizeof *st->vals_old);
    st->vals_new = sl_calloc(nout, sizeof *st->vals_new);
    if (pl->aggs.has_strval) {
        st->str_old = sl_calloc((size_t)pl->aggs.n, sizeof *st->str_old);
        st->str_new = sl_calloc((size_t)pl->aggs.n, sizeof *st->str_new);
    }
    if (pl->aggs.has_collect || pl->aggs.has_jsonagg) {
        st->col_old = sl_calloc((size_t)pl->aggs.n, sizeof *st->col_old);
        st->col_new = sl_calloc((size_t)pl->aggs.n, sizeof *st->col_new);
    }
    return SL_OK;
}

/* ---- MIN/MAX multisets ("input-changelog": "retract") --------------------- */

static inline void mm_ns(uint8_t ns[GA_MM_NSLEN], int agg, int64_t key)
{
    ns[0] = (uint8_t)agg;
    st64(ns + 1, key);
}

typedef struct mm_scan {
    int agg;
    bool is_max;
    bool has;
    int64_t best;
} mm_scan;

static int mm_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    mm_scan *m = ctx;
    const uint8_t *n = ns;
    if (nslen != GA_MM_NSLEN || vlen != 8 || n[0] != (uint8_t)m->agg) return 0;
    if (ld64(val) <= 0) return 0; /* retracted before it arrived: not present */
    int64_t k = ld64(n + 1);
    if (!m->has || (m->is_max ? k > m->best : k < m->best)) {
        m->has = true;
        m->best = k;
    }
    return 0;
}

/* Add `delta` (+1 or -1) copies of order key k to MIN/MAX aggregate i's
 * multiset, keeping its slot (has, extremum) in acc right. */
static int mm_update(sl_op *op, int i, uint8_t *slot, int64_t k, int delta)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    bool is_max = pl->aggs.aggs[i].fn == SL_AGG_MAX;
    uint8_t ns[GA_MM_NSLEN], cbuf[8];
    char err[256];
    mm_ns(ns, i, k);
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_mm, ns, sizeof ns, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    int64_t count = rc == SL_OK && vlen == 8 ? ld64(val) : 0;
    count += delta;
    if (count == 0) rc = sl_kstate_del(op->kstate, st->sid_mm, ns, sizeof ns, err, sizeof err);
    else {
        st64(cbuf, count);
        rc = sl_kstate_put(op->kstate, st->sid_mm, ns, sizeof ns, cbuf, sizeof cbuf, err,
                           sizeof err);
    }
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);

    bool has = ld64(slot) != 0;
    int64_t cur = ld64(slot + 8);
    if (delta > 0 && count == 1) { /* a value newly present */
        if (!has || (is_max ? k > cur : k < cur)) {
            st64(slot, 1);
            st64(slot + 8, k);
        }
    } else if (delta < 0 && count == 0 && has && k == cur) { /* the extremum left */
        mm_scan m = {.agg = i, .is_max = is_max};
        if (sl_kstate_scan_key(op->kstate, st->sid_mm, mm_scan_fn, &m, err, sizeof err) ==
            SL_ERR)
            return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        st64(slot, m.has);
        st64(slot + 8, m.has ? m.best : 0);
    }
    return SL_OK;
}

typedef struct ns_collect {
    ga_state *st;
    size_t n; /* namespaces collected */
} ns_collect;

static int collect_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    ns_collect *c = ctx;
    ga_state *st = c->st;
    if (nslen != GA_MM_NSLEN) return 0;
    sl_buf_put(&st->nsbuf, ns, GA_MM_NSLEN);
    c->n++;
    return 0;
}

/* Delete what is left of the current key's multisets (normally nothing:
 * every value was retracted; entries remain only after retractions that
 * arrived before their inserts). */
static int mm_clear_key(sl_op *op)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    ns_collect c = {.st = st};
    sl_buf_reset(&st->nsbuf);
    if (sl_kstate_scan_key(op->kstate, st->sid_mm, collect_fn, &c, err, sizeof err) == SL_ERR)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    for (size_t i = 0; i < c.n; i++)
        if (sl_kstate_del(op->kstate, st->sid_mm, st->nsbuf.p + i * GA_MM_NSLEN, GA_MM_NSLEN,
                          err, sizeof err) == SL_ERR)
            return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    return SL_OK;
}

/* ---- DISTINCT value sets ---------------------------------------------------------- */

/* The "distinct-calls" namespace of group g and value (vp, vl) in st->dns. */
static void dns_build(ga_state *st, int g, const void *vp, size_t vl)
{
    sl_buf_reset(&st->dns);
    uint8_t *d = (uint8_t *)sl_buf_room(&st->dns, vl + 1);
    d[0] = (uint8_t)g;
    if (vl) memcpy(d + 1, vp, vl);
    sl_buf_added(&st->dns, vl + 1);
}

/* Read group g's entry for the value in st->dns into st->dval (absent: all
 * counts 0). SL_ERR (the task failed) on a backend error or an entry of
 * the wrong size. */
static int dval_read(sl_op *op, int g, size_t nslen)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    const void *val;
    size_t vlen, want = (size_t)(pl->dg_start[g + 1] - pl->dg_start[g]) * 8;
    int rc = sl_kstate_get(op->kstate, st->sid_distinct, st->dns.p, nslen, &val, &vlen, err,
                           sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    if (rc == SL_DONE) {
        memset(st->dval, 0, want);
        return SL_OK;
    }
    if (vlen != want)
        return sl_op_fail(op, "vertex '%s': a DISTINCT value set of the restored state holds %zu "
                          "counts where this vertex has %zu calls over the column; was it "
                          "written by a job with other aggregates?", pl->vid, vlen / 8, want / 8);
    memcpy(st->dval, val, want);
    return SL_OK;
}

/* Write st->dval back for the value in st->dns (all counts 0: delete it). */
static int dval_write(sl_op *op, int g, size_t nslen)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    int ncalls = pl->dg_start[g + 1] - pl->dg_start[g];
    bool any = false;
    for (int j = 0; j < ncalls && !any; j++) any = ld64(st->dval + 8 * j) != 0;
    int rc = any ? sl_kstate_put(op->kstate, st->sid_distinct, st->dns.p, nslen, st->dval,
                                 (size_t)ncalls * 8, err, sizeof err)
                 : sl_kstate_del(op->kstate, st->sid_distinct, st->dns.p, nslen, err, sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    return SL_OK;
}

/* The row's value of each DISTINCT aggregate goes into (sign +1) or out of
 * (-1) that aggregate's value set for the key. The calls over one column
 * share one entry per value (namespace = group u8 + the value's bytes,
 * value = one i64 count of copies per call of the group), so a row costs
 * one read and one write per column however many calls -- FILTER variants,
 * COUNT and SUM -- read it. A call counts the row when its FILTER passes;
 * the accumulator takes the value in for a call when that call's first
 * copy arrives and out when its last one leaves. A retraction of a value a
 * call does not hold is ignored for that call. */
static int distinct_update(sl_op *op, const sl_row *row, int sign)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    for (int g = 0; g < pl->ndg; g++) {
        const int *calls = pl->dg_calls + pl->dg_start[g];
        int ncalls = pl->dg_start[g + 1] - pl->dg_start[g];
        uint8_t tmp[8];
        const void *vp = NULL;
        size_t vl = 0;
        bool any = false;
        for (int j = 0; j < ncalls; j++) {
            uint8_t t2[8];
            const void *p2;
            size_t l2;
            /* every call of the group reads the same column: the same bytes */
            st->dpass[j] = any ? sl_agg_distinct_value(&pl->aggs.aggs[calls[j]], row, t2, &p2, &l2)
                               : sl_agg_distinct_value(&pl->aggs.aggs[calls[j]], row, tmp, &vp, &vl);
            any = any || st->dpass[j];
        }
        if (!any) continue;
        dns_build(st, g, vp, vl);
        if (dval_read(op, g, vl + 1) != SL_OK) return SL_ERR;
        bool changed = false;
        for (int j = 0; j < ncalls; j++) {
            if (!st->dpass[j]) continue;
            int64_t count = ld64(st->dval + 8 * j);
            if (count == 0 && sign < 0) continue;
            count += sign;
            st64(st->dval + 8 * j, count);
            changed = true;
            if ((sign > 0 && count == 1) || (sign < 0 && count == 0))
                sl_agg_distinct_apply(&pl->aggs, calls[j], st->new_acc, row, sign);
        }
        if (changed && dval_write(op, g, vl + 1) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

/* Snapshots taken before "distinct-calls" hold "distinct": one entry per
 * aggregate and value (namespace = aggregate index u8 + the value's bytes,
 * value = i64 copies). restore_state moves every such entry into its
 * group's "distinct-calls" entry and deletes it, so the record path only
 * ever sees the new layout. */
typedef struct dmigrate {
    sl_op *op;
    int kg;
    int64_t moved;
} dmigrate;

static int dmigrate_fn(void *ctx, const sl_kentry *e)
{
    dmigrate *m = ctx;
    sl_op *op = m->op;
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    if (e->sid != st->sid_dlegacy) return 0;
    const uint8_t *ns = e->ns;
    int i = e->nslen ? ns[0] : -1;
    if (i < 0 || i >= pl->aggs.n || pl->dg_of[i] < 0 || e->vlen != 8) {
        sl_op_fail(op, "vertex '%s': the restored state has a DISTINCT value set (old layout) "
                   "for aggregate %d, which is not a DISTINCT aggregate of this vertex; restore "
                   "it into a job with the same aggregates", pl->vid, i + 1);
        return SL_ERR;
    }
    int g = pl->dg_of[i];
    sl_kstate_set_key(op->kstate, e->key, e->klen, m->kg);
    dns_build(st, g, ns + 1, e->nslen - 1);
    if (dval_read(op, g, e->nslen) != SL_OK) return SL_ERR;
    st64(st->dval + 8 * pl->dg_pos[i], ld64(e->val));
    if (dval_write(op, g, e->nslen) != SL_OK) return SL_ERR;
    if (sl_kstate_del(op->kstate, st->sid_dlegacy, e->ns, e->nslen, err, sizeof err) == SL_ERR) {
        sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        return SL_ERR;
    }
    m->moved++;
    return 0;
}

static int distinct_migrate(sl_op *op)
{
    const ga_plan *pl = op->plan;
    char err[256];
    sl_ksnap *snap = sl_kstate_snapshot(op->kstate, err, sizeof err);
    if (!snap) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    dmigrate m = {.op = op};
    int rc = SL_OK;
    for (m.kg = op->kg_first; m.kg <= op->kg_last && rc == SL_OK; m.kg++) {
        err[0] = 0;
        if (sl_ksnap_each(snap, m.kg, dmigrate_fn, &m, err, sizeof err) != SL_OK) {
            rc = SL_ERR;
            if (err[0]) sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        }
    }
    sl_ksnap_release(snap);
    return rc;
}

static int vcollect_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    ns_collect *c = ctx;
    ga_state *st = c->st;
    SL_UNUSED(val);
    SL_UNUSED(vlen);
    uint8_t *d = (uint8_t *)sl_buf_room(&st->nsbuf, 4 + nslen);
    sl_put_le32(d, (uint32_t)nslen);
    memcpy(d + 4, ns, nslen);
    sl_buf_added(&st->nsbuf, 4 + nslen);
    c->n += 4 + nslen;
    return 0;
}

/* Delete every entry of the current key in state sid (-1: none). */
static int key_clear(sl_op *op, int sid)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    if (sid < 0) return SL_OK;
    ns_collect c = {.st = st}; /* here n counts bytes of [u32 len][ns] records */
    sl_buf_reset(&st->nsbuf);
    if (sl_kstate_scan_key(op->kstate, sid, vcollect_fn, &c, err, sizeof err) == SL_ERR)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    for (size_t pos = 0; pos < c.n;) {
        uint32_t n = sl_get_le32(sl_buf_u8(&st->nsbuf) + pos);
        if (sl_kstate_del(op->kstate, sid, st->nsbuf.p + pos + 4, n, err, sizeof err) == SL_ERR)
            return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        pos += 4 + n;
    }
    return SL_OK;
}

/* Delete the current key's DISTINCT value sets, STRING MIN/MAX values and
 * COLLECT multisets (the key is going). */
static int distinct_clear_key(sl_op *op)
{
    ga_state *st = op->priv;
    return key_clear(op, st->sid_distinct) == SL_OK && key_clear(op, st->sid_str) == SL_OK &&
                   key_clear(op, st->sid_col) == SL_OK && key_clear(op, st->sid_jag) == SL_OK
               ? SL_OK
               : SL_ERR;
}

/* ---- STRING MIN/MAX --------------------------------------------------------------- */

/* "minmax-str", per key: namespace = aggregate index u8 + 0 -> the current
 * extremum ('v' + its bytes, so never empty); with retracting input also
 * aggregate index u8 + 1 + a value's bytes -> i64 copies of it (the
 * multiset, from which a retracted extremum's successor is found). */
#define GA_STR_CUR 0
#define GA_STR_SET 1

typedef struct str_scan {
    const sl_agg *a;
    int agg;
    bool has;
    sl_buf *best;
} str_scan;

static int str_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    str_scan *m = ctx;
    const uint8_t *n = ns;
    if (nslen < 2 || n[0] != (uint8_t)m->agg || n[1] != GA_STR_SET || vlen != 8 || ld64(val) <= 0)
        return 0;
    int c = m->has ? sl_agg_str_cmp(n + 2, nslen - 2, m->best->p, m->best->len) : 0;
    if (!m->has || (m->a->fn == SL_AGG_MAX ? c > 0 : c < 0)) {
        sl_buf_set(m->best, n + 2, nslen - 2);
        m->has = true;
    }
    return 0;
}

/* The STRING MIN/MAX items for one record: each one's value before it
 * (from state, into st->str_old) and after it (st->str_new, written back
 * when it changed), its has-value slot in st->new_acc kept right. sign -1
 * retracts the row, which only retracting input may do. first: the key is
 * new (nothing to read). */
static int str_update(sl_op *op, const sl_row *row, bool first, int sign)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    sl_kstate *ks = op->kstate;
    char err[256];
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (!a->strval) continue;
        sl_buf *o = &st->str_old[i], *w = &st->str_new[i];
        int64_t unused;
        bool has = !first && sl_agg_minmax_get(a, st->old_acc, &unused);
        uint8_t ns[2] = {(uint8_t)i, GA_STR_CUR};
        sl_buf_reset(o);
        if (has) {
            const void *val;
            size_t vlen;
            int rc = sl_kstate_get(ks, st->sid_str, ns, 2, &val, &vlen, err, sizeof err);
            if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
            if (rc == SL_DONE || vlen < 1)
                return sl_op_fail(op, "vertex '%s': damaged state: aggregate %d '%s' has a value "
                                  "but its string is missing", pl->vid, i + 1, a->text);
            sl_buf_set(o, (const uint8_t *)val + 1, vlen - 1);
        }
        sl_buf_set(w, o->p, o->len);
        const void *vp;
        size_t vl;
        if (!sl_agg_str_value(a, row, &vp, &vl)) continue;
        if (sign < 0 && !pl->retract_input)
            return sl_op_fail(op, "vertex '%s': aggregate %d '%s' received a retraction (%s) but "
                              "the vertex's input is insert-only; set \"input-changelog\": "
                              "\"retract\" on it to keep the values MIN/MAX need",
                              pl->vid, i + 1, a->text, sl_rowkind_short(row->kind));
        bool now = has, changed = false;
        if (pl->retract_input) { /* the multiset */
            sl_buf_reset(&st->dns);
            uint8_t *d = (uint8_t *)sl_buf_room(&st->dns, vl + 2);
            d[0] = (uint8_t)i;
            d[1] = GA_STR_SET;
            if (vl) memcpy(d + 2, vp, vl);
            sl_buf_added(&st->dns, vl + 2);
            const void *val;
            size_t vlen;
            uint8_t cbuf[8];
            int rc =
                sl_kstate_get(ks, st->sid_str, st->dns.p, vl + 2, &val, &vlen, err, sizeof err);
            if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
            int64_t count = rc == SL_OK && vlen == 8 ? ld64(val) : 0;
            if (count == 0 && sign < 0) continue; /* not held: ignored, as for DISTINCT */
            count += sign;
            if (count == 0) {
                rc = sl_kstate_del(ks, st->sid_str, st->dns.p, vl + 2, err, sizeof err);
            } else {
                st64(cbuf, count);
                rc = sl_kstate_put(ks, st->sid_str, st->dns.p, vl + 2, cbuf, 8, err, sizeof err);
            }
            if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
            if (sign < 0 && count == 0 && now && sl_agg_str_cmp(vp, vl, w->p, w->len) == 0) {
                str_scan m = {.a = a, .agg = i, .best = w}; /* the extremum left */
                if (sl_kstate_scan_key(ks, st->sid_str, str_scan_fn, &m, err, sizeof err) ==
                    SL_ERR)
                    return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
                now = m.has;
                if (!now) sl_buf_reset(w);
                changed = true;
            }
        }
        if (sign > 0) {
            int c = now ? sl_agg_str_cmp(vp, vl, w->p, w->len) : 0;
            if (!now || (a->fn == SL_AGG_MAX ? c > 0 : c < 0)) {
                sl_buf_set(w, vp, vl);
                now = changed = true;
            }
        }
        if (!changed) continue;
        sl_agg_minmax_set(a, st->new_acc, now, 0);
        int rc;
        if (now) {
            sl_buf_reset(&st->dns);
            sl_buf_putc(&st->dns, 'v');
            sl_buf_put(&st->dns, w->p, w->len);
            rc = sl_kstate_put(ks, st->sid_str, ns, 2, st->dns.p, st->dns.len, err, sizeof err);
        } else {
            rc = sl_kstate_del(ks, st->sid_str, ns, 2, err, sizeof err);
        }
        if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    }
    return SL_OK;
}

/* ---- COLLECT --------------------------------------------------------------------- */

/* "collect", per key: namespace = aggregate index u8 + a value's bytes (its
 * binary form, row.h) -> i64 copies of it. A record reads the item's
 * entries, builds the MULTISET before it, applies its value, writes the
 * entry back and builds the MULTISET after it. Entries are ordered by their
 * bytes, so both backends give the same MULTISET bytes. */

/* Scan item i's entries of state sid (kstate) into st->cscan and index
 * them in the item's order into st->cidx (none when first: a new key). */
static int kept_load(sl_op *op, int sid, int i, bool first)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    uint8_t prefix[1] = {(uint8_t)i};
    sl_agg_kept_scan cs = {pl->aggs.aggs[i].fn, prefix, 1, &st->cscan};
    sl_buf_reset(&st->cscan);
    if (!first &&
        sl_kstate_scan_key(op->kstate, sid, sl_agg_kept_scan_fn, &cs, err, sizeof err) == SL_ERR)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    sl_agg_kept_index(cs.fn, &st->cscan, &st->cidx);
    return SL_OK;
}

/* The COLLECT items for one record: st->col_old / st->col_new get each
 * one's MULTISET before and after it; sign -1 retracts (a value not held
 * is ignored, as Flink's retract of a missing element). */
static int collect_update(sl_op *op, const sl_row *row, bool first, int sign)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    sl_kstate *ks = op->kstate;
    char err[256];
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (a->fn != SL_AGG_COLLECT) continue;
        if (kept_load(op, st->sid_col, i, first) != SL_OK) return SL_ERR;
        const sl_value *x;
        bool has = sl_agg_collect_value(a, row, &x);
        /* the row's value, as one more entry (count 0) when it is new */
        size_t at = SIZE_MAX;
        if (has) {
            size_t vl = sl_datum_size(x, a->in_dt);
            sl_buf_reset(&st->dns);
            uint8_t *d = (uint8_t *)sl_buf_room(&st->dns, 1 + vl);
            d[0] = (uint8_t)i;
            sl_datum_put(d + 1, x, a->in_dt);
            sl_buf_added(&st->dns, 1 + vl);
            const uint8_t *e = sl_buf_u8(&st->cscan);
            for (size_t pos = 0; pos < st->cscan.len;) {
                uint32_t l = sl_get_le32(e + pos);
                if (l == vl && !memcmp(e + pos + 4, st->dns.p + 1, vl)) at = pos;
                pos += 4 + l + 8;
            }
            if (at == SIZE_MAX && sign > 0) {
                at = st->cscan.len;
                uint8_t *w = (uint8_t *)sl_buf_room(&st->cscan, 4 + vl + 8);
                sl_put_le32(w, (uint32_t)vl);
                memcpy(w + 4, st->dns.p + 1, vl);
                st64(w + 4 + vl, 0);
                sl_buf_added(&st->cscan, 4 + vl + 8);
            }
        }
        sl_agg_kept_index(SL_AGG_COLLECT, &st->cscan, &st->cidx);
        sl_agg_kept_build(a, &st->cscan, &st->cidx, SIZE_MAX, &st->col_old[i]);
        if (at == SIZE_MAX) {
            sl_buf_set(&st->col_new[i], st->col_old[i].p, st->col_old[i].len);
            continue;
        }
        uint8_t *cnt = (uint8_t *)st->cscan.p + at + 4 + sl_get_le32(sl_buf_u8(&st->cscan) + at);
        int64_t c = ld64(cnt) + sign;
        st64(cnt, c);
        uint8_t cb[8];
        st64(cb, c);
        int rc = c > 0 ? sl_kstate_put(ks, st->sid_col, st->dns.p, st->dns.len, cb, 8, err,
                                       sizeof err)
                       : sl_kstate_del(ks, st->sid_col, st->dns.p, st->dns.len, err, sizeof err);
        if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        sl_agg_kept_build(a, &st->cscan, &st->cidx, SIZE_MAX, &st->col_new[i]);
    }
    return SL_OK;
}

/* ---- JSON_ARRAYAGG ------------------------------------------------------------------ */

/* "json-arrayagg", per key: namespace = aggregate index u8 + the value's
 * sequence number (u64, big endian) -> the value's JSON text (the json
 * format's, format_json.h). The accumulator's slot holds the next sequence
 * number. A record reads the item's entries, puts them in sequence order
 * and writes the array before and after it; a retraction deletes the
 * earliest entry of an equal text (Flink's list remove). */

/* ---- JSON_OBJECTAGG ----------------------------------------------------------------- */

/* Also in "json-arrayagg" (the aggregate index tells the entries apart), per
 * key: namespace = aggregate index u8 + the JSON key's bytes -> the member's
 * text, `"key":value` (value `null` for a NULL with NULL ON NULL). A record
 * reads the item's members, sorts them by key bytes (both backends give the
 * same text) and writes the object before and after it. A key already
 * present fails the job, as a NULL key does (Flink); a retraction deletes
 * the key's member when it is equal, else it is ignored. */

static int jobj_update(sl_op *op, int i, const sl_row *row, bool first, int sign)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    sl_kstate *ks = op->kstate;
    const sl_agg *a = &pl->aggs.aggs[i];
    char err[256];
    if (kept_load(op, st->sid_jag, i, first) != SL_OK) return SL_ERR;
    sl_agg_kept_build(a, &st->cscan, &st->cidx, SIZE_MAX, &st->col_old[i]);
    const sl_value *k = &row->vals[a->col], *v = &row->vals[a->vcol];
    if (!sl_agg_json_counts(a, row) || (sign < 0 && k->isnull)) {
        sl_buf_set(&st->col_new[i], st->col_old[i].p, st->col_old[i].len);
        return SL_OK;
    }
    if (k->isnull)
        return sl_op_fail(op, "vertex '%s': %s: the key is NULL (JSON_OBJECTAGG needs a "
                          "non-NULL key)", pl->vid, a->text);
    /* the key's member, if any */
    const size_t *ix = (const size_t *)st->cidx.p;
    size_t n = st->cidx.len / sizeof *ix, hit = SIZE_MAX;
    const uint8_t *b = sl_buf_u8(&st->cscan);
    for (size_t q = 0; q < n && hit == SIZE_MAX; q++)
        if (sl_get_le32(b + ix[q]) == k->v.s.len && !memcmp(b + ix[q] + 4, k->v.s.p, k->v.s.len))
            hit = ix[q];
    if (sign > 0 && hit != SIZE_MAX)
        return sl_op_fail(op, "vertex '%s': %s: the key '%.*s' is already present; "
                          "JSON_OBJECTAGG takes each key once (Flink fails the same way)",
                          pl->vid, a->text, (int)(k->v.s.len > 200 ? 200 : k->v.s.len),
                          k->v.s.p);
    sl_buf_reset(&st->jval);
    sl_fmt_json_value_dt(&st->jval, k, a->in_dt);
    sl_buf_putc(&st->jval, ':');
    if (v->isnull) sl_buf_put(&st->jval, "null", 4);
    else sl_fmt_json_value_dt(&st->jval, v, a->v_dt);
    sl_buf_reset(&st->dns);
    uint8_t *ns = (uint8_t *)sl_buf_room(&st->dns, 1 + k->v.s.len);
    ns[0] = (uint8_t)i;
    if (k->v.s.len) memcpy(ns + 1, k->v.s.p, k->v.s.len);
    sl_buf_added(&st->dns, 1 + k->v.s.len);
    if (sign > 0) {
        if (v->isnull && !a->null_on_null) { /* ABSENT ON NULL */
            sl_buf_set(&st->col_new[i], st->col_old[i].p, st->col_old[i].len);
            return SL_OK;
        }
        if (sl_kstate_put(ks, st->sid_jag, st->dns.p, st->dns.len, st->jval.p, st->jval.len, err,
                          sizeof err) == SL_ERR)
            return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        /* the new member joins the scanned ones, then the object is rebuilt in key order */
        sl_agg_kept_scan cs = {a->fn, NULL, 0, &st->cscan};
        sl_agg_kept_append(&cs, st->dns.p + 1, st->dns.len - 1, st->jval.p, st->jval.len);
        sl_agg_kept_index(a->fn, &st->cscan, &st->cidx);
        sl_agg_kept_build(a, &st->cscan, &st->cidx, SIZE_MAX, &st->col_new[i]);
        return SL_OK;
    }
    /* a retraction: the key's member goes when it is the same member */
    if (hit != SIZE_MAX) {
        uint32_t kl = sl_get_le32(b + hit);
        if (sl_get_le32(b + hit + 4 + kl) != st->jval.len ||
            memcmp(b + hit + 8 + kl, st->jval.p, st->jval.len))
            hit = SIZE_MAX;
    }
    if (hit != SIZE_MAX &&
        sl_kstate_del(ks, st->sid_jag, st->dns.p, st->dns.len, err, sizeof err) == SL_ERR)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    sl_agg_kept_build(a, &st->cscan, &st->cidx, hit, &st->col_new[i]);
    return SL_OK;
}

static int jsonagg_update(sl_op *op, const sl_row *row, bool first, int sign)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    sl_kstate *ks = op->kstate;
    char err[256];
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (a->fn == SL_AGG_JSON_OBJECTAGG) {
            if (jobj_update(op, i, row, first, sign) != SL_OK) return SL_ERR;
            continue;
        }
        if (a->fn != SL_AGG_JSON_ARRAYAGG) continue;
        if (kept_load(op, st->sid_jag, i, first) != SL_OK) return SL_ERR;
        sl_agg_kept_build(a, &st->cscan, &st->cidx, SIZE_MAX, &st->col_old[i]);
        const sl_value *x = &row->vals[a->col];
        if (!sl_agg_json_counts(a, row) || (x->isnull && !a->null_on_null)) {
            sl_buf_set(&st->col_new[i], st->col_old[i].p, st->col_old[i].len);
            continue; /* FILTER, or NULL with ABSENT ON NULL */
        }
        sl_buf_reset(&st->jval);
        if (x->isnull) sl_buf_put(&st->jval, "null", 4); /* NULL ON NULL */
        else sl_fmt_json_value_dt(&st->jval, x, a->in_dt);
        uint8_t ns[9];
        ns[0] = (uint8_t)i;
        int rc = SL_OK;
        if (sign > 0) {
            uint8_t *slot = st->new_acc + a->off;
            uint64_t seq = (uint64_t)ld64(slot);
            st64(slot, (int64_t)(seq + 1));
            for (int b = 0; b < 8; b++) ns[1 + b] = (uint8_t)(seq >> (56 - 8 * b));
            rc = sl_kstate_put(ks, st->sid_jag, ns, 9, st->jval.p, st->jval.len, err, sizeof err);
            if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
            sl_buf_set(&st->col_new[i], st->col_old[i].p, st->col_old[i].len - 1);
            if (st->col_new[i].len > 1) sl_buf_putc(&st->col_new[i], ',');
            sl_buf_put(&st->col_new[i], st->jval.p, st->jval.len);
            sl_buf_putc(&st->col_new[i], ']');
            continue;
        }
        /* a retraction: the earliest equal value goes (none held: ignored) */
        const size_t *ix = (const size_t *)st->cidx.p;
        size_t n = st->cidx.len / sizeof *ix, hit = SIZE_MAX;
        const uint8_t *b = sl_buf_u8(&st->cscan);
        for (size_t k = 0; k < n && hit == SIZE_MAX; k++)
            if (sl_get_le32(b + ix[k] + 8) == st->jval.len &&
                !memcmp(b + ix[k] + 12, st->jval.p, st->jval.len))
                hit = ix[k];
        if (hit != SIZE_MAX) {
            memcpy(ns + 1, b + hit, 8);
            rc = sl_kstate_del(ks, st->sid_jag, ns, 9, err, sizeof err);
            if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        }
        sl_agg_kept_build(a, &st->cscan, &st->cidx, hit, &st->col_new[i]);
    }
    return SL_OK;
}

/* ---- state TTL ------------------------------------------------------------------ */

static const uint8_t no_ns[1]; /* the empty namespace of "acc" and of TTL timers */

static inline int64_t add_sat(int64_t a, int64_t b) /* b >= 0 */
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int acc_size_error(sl_op *op, size_t vlen)
{
    const ga_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s': its state holds a %zu-byte accumulator where %zu bytes "
                      "were expected (the aggregates%s differ from those the state was written "
                      "with)", pl->vid, vlen, pl->acc_size,
                      pl->ttl_ms > 0 ? " or the use of 'state.ttl'" : "");
}

static inline bool ttl_expired(const ga_plan *pl, const uint8_t *acc, int64_t now)
{
    return add_sat(ld64(acc + pl->ttl_off), pl->ttl_ms) <= now;
}

/* Register (add) or remove the current key's expiry timer at `at`. */
static void ttl_timer(sl_op *op, bool add, int64_t at)
{
    if (add) sl_op_timer_register(op, SL_TIME_PROCESSING, at, no_ns, 0);
    else sl_op_timer_delete(op, SL_TIME_PROCESSING, at, no_ns, 0);
}

/* Forget the current key (already set on op->kstate), whose accumulator is
 * acc: its state and its expiry timer go, nothing is emitted. */
static int ttl_drop(sl_op *op, const uint8_t *acc)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    int64_t at = ld64(acc + pl->ttl_off + 8);
    if (sl_kstate_del(op->kstate, st->sid_acc, no_ns, 0, err, sizeof err) == SL_ERR)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    if (pl->retract_minmax && mm_clear_key(op) != SL_OK) return SL_ERR;
    if (distinct_clear_key(op) != SL_OK) return SL_ERR;
    ttl_timer(op, false, at);
    return SL_OK;
}

/* A key's expiry timer is due: forget the key if it was not updated for the
 * TTL, else move its timer to last update + TTL. */
static int ga_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns, size_t nslen)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    char err[256];
    SL_UNUSED(domain);
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    if (pl->ttl_ms <= 0 || !st) return SL_OK;
    /* the timer's time is when it was due: judge expiry as of then (the
     * runtime calls us at or after it) */
    st->fire_now = time;
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_acc, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    if (rc == SL_DONE) return SL_OK; /* already gone */
    if (vlen != pl->acc_size) return acc_size_error(op, vlen);
    memcpy(st->old_acc, val, vlen);
    if (ttl_expired(pl, st->old_acc, st->fire_now))
        return ttl_drop(op, st->old_acc);
    uint8_t *t = st->old_acc + pl->ttl_off;
    if (ld64(t + 8) != time) return SL_OK; /* not the key's own timer: that one stands */
    int64_t at = add_sat(ld64(t), pl->ttl_ms);
    st64(t + 8, at);
    if (sl_kstate_put(op->kstate, st->sid_acc, no_ns, 0, st->old_acc, pl->acc_size, err,
                      sizeof err) == SL_ERR)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    ttl_timer(op, true, at);
    return SL_OK;
}

/* After a restore: the runtime has loaded the keyed state and its timers
 * (this operator keeps no operator state, so there are no blobs). Check the
 * TTL setting agrees with the state's, and arm the earliest timer. */
static int ga_restore_state(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    const ga_plan *pl = op->plan;
    size_t ntimers = op->proc_timers ? sl_timers_count(op->proc_timers) : 0;
    if (pl->ttl_ms <= 0 && ntimers > 0)
        return sl_op_fail(op, "vertex '%s': the restored state was written with 'state.ttl' set "
                          "(expiry timers: %zu); set 'state.ttl' on the vertex to "
                          "restore it", pl->vid, ntimers);
    if (pl->ttl_ms > 0 && ntimers == 0 && sl_kstate_entries(op->kstate) > 0)
        return sl_op_fail(op, "vertex '%s': the restored state was written without "
                          "'state.ttl'; remove 'state.ttl' from the vertex to restore it",
                          pl->vid);
    sl_op_arm_restored_proc_timers(op);
    if (pl->aggs.has_distinct && distinct_migrate(op) != SL_OK) return SL_ERR;
    return SL_OK;
}

/* ---- process ----------------------------------------------------------------- */

/* The MIN/MAX part of a row that needs more than the accumulator: with
 * "input-changelog": "retract" each non-NULL value goes into (sign +1) or
 * out of (-1) its multiset, which keeps the slot right; on insert-only
 * input a retraction that reaches a MIN/MAX fails the task. */
static int minmax_update(sl_op *op, const sl_row *row, int sign)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        int64_t key;
        if (!sl_agg_minmax_value(a, row, &key)) continue; /* not MIN/MAX, NULL or filtered out */
        if (!pl->retract_minmax)
            return sl_op_fail(op, "vertex '%s': aggregate %d '%s' received a retraction (%s) but "
                              "the vertex's input is insert-only; set \"input-changelog\": "
                              "\"retract\" on it to keep the values MIN/MAX need",
                              pl->vid, i + 1, a->text, sl_rowkind_short(row->kind));
        if (mm_update(op, i, st->new_acc + a->off, key, sign) != SL_OK)
            return SL_ERR;
    }
    return SL_OK;
}

/* The output row of accumulator acc into vals; strs: the STRING MIN/MAX
 * values that go with acc (st->str_old or st->str_new), NULL if none. */
static int fill_row(const ga_plan *pl, sl_op *op, const sl_row *in, const uint8_t *acc,
                    const sl_buf *strs, const sl_buf *cols, sl_value *vals)
{
    for (int k = 0; k < pl->nkeys; k++) vals[k] = in->vals[pl->keys[k]];
    sl_value *o = vals + pl->nkeys;
    if (sl_agg_result_in(&pl->aggs, acc, &op->scratch, o) != SL_OK) return SL_ERR;
    for (int i = 0; strs && i < pl->aggs.n; i++)
        if (pl->aggs.aggs[i].strval && !o[i].isnull) {
            o[i].v.s.p = (const char *)strs[i].p;
            o[i].v.s.len = (uint32_t)strs[i].len;
        }
    for (int i = 0; cols && i < pl->aggs.n; i++)
        if (sl_agg_kept(&pl->aggs.aggs[i])) {
            o[i].v.s.p = (const char *)cols[i].p;
            o[i].v.s.len = (uint32_t)cols[i].len;
        }
    return SL_OK;
}

/* Fail the task with the message of the user function that failed. */
static int udf_failed(sl_op *op)
{
    const ga_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s' (subtask %d): %s", pl->vid, op->subtask, sl_agg_error());
}

static int emit_row(sl_op *op, sl_rowkind kind, sl_value *vals, int64_t ts)
{
    const ga_plan *pl = op->plan;
    sl_row r = {.kind = kind, .n = pl->nkeys + pl->aggs.n, .vals = vals, .ts = ts};
    return sl_op_emit(op, &r);
}

static int ga_process(sl_op *op, int input, sl_row *row)
{
    const ga_plan *pl = op->plan;
    ga_state *st = op->priv;
    sl_kstate *ks = op->kstate;
    char err[256];
    bool retract = row->kind == SL_KIND_UPDATE_BEFORE || row->kind == SL_KIND_DELETE;

    /* the runtime has set the row's key */
    int64_t now = pl->ttl_ms > 0 ? ga_clock() : 0;

    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(ks, st->sid_acc, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    bool first = rc == SL_DONE;
    if (!first) {
        if (vlen != pl->acc_size) return acc_size_error(op, vlen);
        memcpy(st->old_acc, val, vlen);
        if (pl->ttl_ms > 0 && ttl_expired(pl, st->old_acc, now)) {
            /* expired, its timer not yet run: the row finds no state */
            if (ttl_drop(op, st->old_acc) != SL_OK) return SL_ERR;
            first = true;
        }
    }
    if (first) {
        if (retract) return SL_OK; /* nothing to retract from (Flink ignores it too) */
        memset(st->new_acc, 0, pl->acc_size);
    } else {
        memcpy(st->new_acc, st->old_acc, pl->acc_size);
    }

    if (pl->acccol >= 0) {
        const sl_value *av = &row->vals[pl->acccol];
        if (SL_UNLIKELY(retract || av->isnull || av->v.s.len != pl->aggs.size))
            return sl_op_fail(op, "vertex '%s': a partial accumulator must be an insert of %zu "
                              "bytes, got a %s row of %u bytes", pl->vid, pl->aggs.size,
                              sl_rowkind_short(row->kind), av->isnull ? 0u : av->v.s.len);
        if (sl_agg_merge(&pl->aggs, st->new_acc, (const uint8_t *)av->v.s.p) != SL_OK)
            return udf_failed(op);
    } else if (retract) {
        if (sl_agg_retract(&pl->aggs, st->new_acc, row) != SL_OK) return udf_failed(op);
    } else {
        if (sl_agg_add(&pl->aggs, st->new_acc, row) != SL_OK) return udf_failed(op);
    }
    if (pl->aggs.has_minmax && (retract || pl->retract_minmax) &&
        minmax_update(op, row, retract ? -1 : 1) != SL_OK)
        return SL_ERR;
    if (pl->aggs.has_distinct && distinct_update(op, row, retract ? -1 : 1) != SL_OK)
        return SL_ERR;
    if (pl->aggs.has_strval && str_update(op, row, first, retract ? -1 : 1) != SL_OK)
        return SL_ERR;
    if (pl->aggs.has_collect && collect_update(op, row, first, retract ? -1 : 1) != SL_OK)
        return SL_ERR;
    if (pl->aggs.has_jsonagg && jsonagg_update(op, row, first, retract ? -1 : 1) != SL_OK)
        return SL_ERR;

    if (!first && sl_agg_rows(st->new_acc) <= 0) { /* the key's last row was retracted */
        if (sl_kstate_del(ks, st->sid_acc, no_ns, 0, err, sizeof err) == SL_ERR)
            return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
        if (pl->retract_minmax && mm_clear_key(op) != SL_OK) return SL_ERR;
        if (distinct_clear_key(op) != SL_OK) return SL_ERR;
        if (pl->ttl_ms > 0) ttl_timer(op, false, ld64(st->old_acc + pl->ttl_off + 8));
        if (fill_row(pl, op, row, st->old_acc, st->str_old, st->col_old, st->vals_old) != SL_OK)
            return udf_failed(op);
        return emit_row(op, SL_KIND_DELETE, st->vals_old, row->ts);
    }
    if (pl->ttl_ms > 0) {
        uint8_t *t = st->new_acc + pl->ttl_off;
        st64(t, now); /* last update */
        if (first) { /* a new key: its expiry timer */
            int64_t at = add_sat(now, pl->ttl_ms);
            st64(t + 8, at);
            ttl_timer(op, true, at);
        }
    }
    if (sl_kstate_put(ks, st->sid_acc, no_ns, 0, st->new_acc, pl->acc_size, err, sizeof err) ==
        SL_ERR)
        return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
    if (fill_row(pl, op, row, st->new_acc, st->str_new, st->col_new, st->vals_new) != SL_OK)
        return udf_failed(op);
    if (first) return emit_row(op, SL_KIND_INSERT, st->vals_new, row->ts);
    if (fill_row(pl, op, row, st->old_acc, st->str_old, st->col_old, st->vals_old) != SL_OK)
        return udf_failed(op);
    if (sl_agg_results_equal(&pl->aggs, st->vals_old + pl->nkeys, st->vals_new + pl->nkeys))
        return SL_OK;
    rc = emit_row(op, SL_KIND_UPDATE_BEFORE, st->vals_old, row->ts);
    if (rc != SL_OK) return rc;
    return emit_row(op, SL_KIND_UPDATE_AFTER, st->vals_new, row->ts);
}

static const sl_op_option ga_options[] = {
    {"group-by", SL_CT_JSON, NULL, NULL,
     "Grouping columns: a list of names."},
    {"aggregates", SL_CT_JSON, NULL, NULL,
     "Aggregate calls: a list of {\"name\", \"fn\", \"arg\", ...}."},
    {"input-changelog", SL_CT_STRING, NULL, NULL,
     "What the input carries: insert-only or a changelog (retractions)."},
    {"state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of a key's state (a duration or interval; 0: none)."},
    {"table.exec.state.ttl", SL_CT_STRING, NULL, NULL,
     "Flink's name of state.ttl, as the SQL planner writes it."},
    {"phase", SL_CT_STRING, NULL, NULL,
     "one, local or global: the phase of a two-phase aggregation."},
    SL_AGG_FUNCTIONS_OPTION,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_group_aggregate = {
    .abi = SL_OP_ABI_VERSION,
    .name = "group_aggregate",
    .flags = SL_OPF_KEYED,
    .options = ga_options,
    .plan = ga_plan_new,
    .plan_free = ga_plan_free,
    .open = ga_open,
    .process = ga_process,
    .close = ga_close,
    .on_timer = ga_on_timer,
    .restore_state = ga_restore_state,
};
