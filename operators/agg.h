/*
 * agg.h -- the aggregate library shared by `window` and `group_aggregate`:
 * one parser for aggregate calls, one set of result types, one accumulator
 * layout, and the functions that add, retract, merge and read it.
 *
 * An aggregate list is parsed once at plan time (sl_agg_list_add per item)
 * and then describes a fixed-size accumulator of l->size bytes, little
 * endian, so a state value is compact and reads the same on any host:
 *
 *     i64 row count (rows added minus rows retracted; COUNT(*) reads it)
 *     then per aggregate, at a->off:
 *       COUNT(*), COUNT(1)  nothing
 *       COUNT(col)          i64 non-NULL count
 *       SUM, AVG            i64 non-NULL count, then the sum: a wrapping
 *                           64-bit integer (INT, BIGINT) or a double; of a
 *                           DECIMAL a 128-bit unscaled sum (lo, hi) at the
 *                           column's scale (this slot is 24 bytes; the
 *                           layouts of the other types are unchanged)
 *       MIN, MAX            i64 has-value (0/1), then the extremum as an
 *                           i64 order key (sl_agg_order_key); of a STRING
 *                           only has-value (see "STRING MIN/MAX")
 *
 * Semantics are Flink's: NULLs are skipped by every aggregate but COUNT(*)
 * and COUNT(1); SUM, MIN, MAX and AVG of no non-NULL value are NULL. Result
 * types: COUNT -> BIGINT; SUM of DECIMAL(p, s) -> DECIMAL(38, s), AVG of it
 * -> DECIMAL(38, max(s, 6)) (a sum past 38 digits, or an average that does
 * not fit, is NULL, as Flink's overflow); MIN and MAX of DECIMAL (p <= 18),
 * DATE, TIME(p <= 3), TINYINT, SMALLINT and FLOAT keep the type; SUM, MIN,
 * MAX, AVG of the other types -> the argument's type (SUM of
 * INT wraps at 32 bits, AVG of INT or BIGINT sums in 64 bits and truncates
 * toward zero, as Flink's IntAvgAggFunction does). MIN and MAX order DOUBLE
 * as Java's Double.compareTo (-0.0 < 0.0, NaN above everything) and BOOLEAN
 * as FALSE < TRUE.
 *
 * MIN and MAX cannot be retracted from the accumulator alone (the next
 * extremum is not in it): a caller with retracting input sets keep_values,
 * keeps the multiset of values itself, and maintains the slots with
 * sl_agg_minmax_get / sl_agg_minmax_set; sl_agg_add and sl_agg_retract then
 * leave MIN and MAX alone.
 *
 * FILTER. "FN(...) FILTER (WHERE flag)" names a BOOLEAN input column (the
 * SQL planner computes the condition into one); a row counts for that item
 * only when the column is TRUE. COUNT(*) with a FILTER has a slot of its
 * own (i64 count) instead of reading the row count.
 *
 * DISTINCT. "COUNT(DISTINCT col)", "SUM(DISTINCT col)", "AVG(DISTINCT
 * col)": the slot is the same as without DISTINCT, but holds only distinct
 * values. The caller keeps, per key (and window), a count per distinct
 * value of each such item -- sl_agg_distinct_value gives the value's bytes
 * -- and folds a value in with sl_agg_distinct_apply(+1) when its count
 * goes 0 -> 1 and out with (-1) when it goes 1 -> 0; sl_agg_add and
 * sl_agg_retract leave DISTINCT items alone. sl_agg_merge of two
 * accumulators with DISTINCT items is only right when their value sets are
 * disjoint, so callers that merge (session windows, slices) do not offer
 * DISTINCT.
 *
 * STRING MIN/MAX. A string does not fit the fixed accumulator, so for
 * MIN/MAX of a STRING column (a->strval) the caller keeps the extremum's
 * bytes -- and, with retracting input, the multiset of values -- in its
 * own state, and keeps the has-value slot with sl_agg_minmax_set (the key
 * unused). sl_agg_add, sl_agg_retract and sl_agg_merge leave the item
 * alone; sl_agg_result gives NULL or an empty string whose bytes the
 * caller fills in. Strings order as Flink's StringData: unsigned bytes,
 * then length (sl_agg_str_cmp). Such lists are not mergeable.
 *
 * USER FUNCTIONS. An item may call an aggregate function of the vertex's
 * "functions" (CREATE FUNCTION over a C object, core/udf.h): "f(a, b)
 * [FILTER (WHERE col)] [[AS] alias]", columns as arguments. Its slot is an
 * i64 created-flag (0 until the function's create ran) and the function's
 * accumulator, padded to 8 bytes; the operator keeps it in state like any
 * other slot. A Python function's accumulator (LANGUAGE PYTHON) is its
 * pickled bytes, a u32 length first, in a slot of the declared size; the
 * TaskManager's Python host steps it (core/udf_sig.h). Without a declared
 * "merge" such a list is not mergeable;
 * without "retract", sl_agg_retract fails. The functions are loaded by
 * sl_agg_open when the operator opens.
 *
 * COLLECT. "COLLECT(col)" is Flink's MULTISET<t> NOT NULL of the column's
 * non-NULL values (FILTER applies; no values: the empty multiset). Its slot
 * is empty: the caller keeps the multiset per key (sl_agg_collect_value
 * gives a row's value when it counts) and fills the result's bytes, as for
 * STRING MIN/MAX; sl_agg_add, sl_agg_retract and sl_agg_merge leave it
 * alone, and such lists are not mergeable. Only an operator that sets
 * allow_collect before parsing takes it (group_aggregate, window, over_aggregate;
 * operators/agg_kept.c reads kept values back). "COLLECT(DISTINCT
 * col)" sets kept_distinct: the caller writes each value once.
 * "JSON_ARRAYAGG(col)" (Flink's ABSENT ON NULL) is kept the same way: a
 * STRING NOT NULL, the JSON array of the non-NULL values in the order they
 * came, a retraction taking out the earliest equal one; its slot is the
 * i64 sequence number of the next value, which the caller keeps.
 * "JSON_ARRAYAGG(col NULL ON NULL)" keeps a NULL as the JSON null.
 * "JSON_OBJECTAGG(k VALUE v [NULL ON NULL | ABSENT ON NULL])" (Flink's
 * default NULL ON NULL): a STRING NOT NULL, the JSON object of key -> value;
 * k a STRING column, no slot, the caller keeps key -> value per key group
 * (a NULL key or a key already present fails the job, as Flink).
 *
 * ERRORS. sl_agg_add, sl_agg_retract, sl_agg_merge and sl_agg_result fail
 * only when a user function does (SL_ERR); the message -- the function's
 * name, its message and its arguments -- is then sl_agg_error()'s, kept per
 * thread until the next failure.
 *
 * Nothing here allocates after planning; every per-record function works
 * in the caller's buffers.
 */
#ifndef SL_AGG_H
#define SL_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "row.h"
#include "operator.h"

typedef enum {
    SL_AGG_COUNT_STAR, /* COUNT(*) and COUNT(1) */
    SL_AGG_COUNT,      /* COUNT(col) */
    SL_AGG_SUM,
    SL_AGG_MIN,
    SL_AGG_MAX,
    SL_AGG_AVG,
    SL_AGG_UDF,        /* a user-defined aggregate function (see USER FUNCTIONS) */
    SL_AGG_COLLECT,    /* COLLECT(col): the MULTISET of the non-NULL values (see COLLECT) */
    SL_AGG_JSON_ARRAYAGG, /* JSON_ARRAYAGG(col [NULL|ABSENT ON NULL]): a JSON array of the values */
    SL_AGG_JSON_OBJECTAGG /* JSON_OBJECTAGG(k VALUE v [NULL|ABSENT ON NULL]): a JSON object */
} sl_agg_fn;

struct sl_udf_sig;
struct sl_udf_set;
struct json_t;

typedef struct sl_agg {
    sl_agg_fn fn;
    int col;          /* input column; -1 for COUNT(*) */
    sl_type in_type;  /* of the column (SL_T_NULL for COUNT(*)) */
    sl_type out_type; /* Flink's result type */
    const sl_dtype *in_dt;  /* the column's full type (NULL for COUNT(*)) */
    const sl_dtype *out_dt; /* the result's full type (DECIMAL(38, s) of a SUM) */
    size_t off;       /* of its slot in the accumulator */
    char *text;       /* the item as configured, for messages (owned) */
    bool distinct;    /* FN(DISTINCT col): COUNT, SUM, AVG (MIN/MAX DISTINCT are
                         plain MIN/MAX) -- see "DISTINCT" above */
    int filter;       /* FILTER (WHERE col): a BOOLEAN input column, -1 = none */
    bool strval;      /* MIN/MAX of a STRING: the caller keeps the value (see
                         "STRING MIN/MAX" above) */
    const struct sl_udf_sig *udf; /* SL_AGG_UDF: the function (in the list's udfs) */
    int nargs;                    /* SL_AGG_UDF: its arguments, input columns in */
    int cols[16];                 /*   cols[0 .. nargs) (SL_UDF_MAX_ARGS) */
    unsigned widen;               /* SL_AGG_UDF: bit i: argument i is an integer to pass as DOUBLE */
    unsigned todec;               /* SL_AGG_UDF: bit i: argument i converts to the declared
                                     DECIMAL(p, s) (Flink's implicit cast: NULL when it does not
                                     fit) from decsrc[i]: a DECIMAL's scale, -1 an integer */
    int8_t decsrc[16];
    int vcol;                     /* JSON_OBJECTAGG: the value column (col is the key's) */
    const sl_dtype *v_dt;         /* ... its type */
    bool null_on_null;            /* JSON_ARRAYAGG/JSON_OBJECTAGG: NULL ON NULL (a JSON null) */
    bool kept_distinct;           /* COLLECT(DISTINCT col): each value once (not `distinct`:
                                     the caller's multiset counts the copies) */
} sl_agg;

typedef struct sl_agg_list {
    int n;
    sl_agg *aggs;     /* n items (owned) */
    int cap;
    size_t size;      /* bytes of one accumulator */
    bool has_minmax;  /* some item is MIN or MAX of a non-STRING column */
    bool has_strval;  /* some item is MIN or MAX of a STRING (a->strval) */
    bool keep_values; /* the caller maintains MIN/MAX from values it keeps */
    bool has_distinct; /* some item is DISTINCT (the caller keeps value sets) */
    struct sl_udf_set *udfs; /* the vertex's "functions" (owned; NULL: none) */
    bool has_udf;     /* some item is a user-defined aggregate function */
    bool udf_nomerge; /* ... one that declares no merge (the list is not mergeable) */
    bool allow_collect; /* set before parsing by an operator that keeps COLLECT's values */
    bool has_collect; /* some item is COLLECT */
    bool has_jsonagg; /* some item is JSON_ARRAYAGG or JSON_OBJECTAGG */
} sl_agg_list;

#define SL_AGG_HDR 8 /* the row count that opens every accumulator */

/* Plan time. ------------------------------------------------------------------ */

void sl_agg_list_init(sl_agg_list *l);
void sl_agg_list_free(sl_agg_list *l); /* frees the items; l may be reused after init */

/* Parse aggregate item number `item` (1-based, for messages) "FN([DISTINCT]
 * arg) [FILTER (WHERE col)] [[AS] alias]" against the input schema, append it to l and its output column to
 * `out` (named by the alias, else EXPR$<its position in out>, as Flink names
 * it). FN is COUNT, SUM, MIN, MAX or AVG in any case; arg is a column (bare
 * or `quoted`), or * / 1 for COUNT. On error returns SL_ERR with
 * "aggregate N 'text': why" in err (the caller adds its vertex) and leaves
 * l and out unchanged. */
int sl_agg_list_add(sl_agg_list *l, const char *text, int item, const sl_schema *in,
                    sl_schema *out, char *err, size_t errlen);

const char *sl_agg_fn_name(sl_agg_fn fn); /* "COUNT" */

/* Read the vertex's "functions" (absent: none) into l->udfs, so that items
 * may call them; before sl_agg_list_add. SL_ERR with "vertex 'vid': ...". */
int sl_agg_list_functions(sl_agg_list *l, const char *vid, const struct json_t *config, char *err,
                          size_t errlen);

/* On the TaskManager, when the operator opens: load the user functions the
 * items call (idempotent; subtasks may race). SL_ERR with err. */
int sl_agg_open(const sl_agg_list *l, char *err, size_t errlen);

/* The "functions" row of an aggregating operator's option table. */
#define SL_AGG_FUNCTIONS_OPTION                                                                   \
    {"functions", SL_CT_JSON, NULL, NULL,                                                         \
     "User-defined aggregate functions the aggregates call: a list of {\"name\", \"symbol\", "   \
     "\"library\", \"declaration\"} (docs/UDF.md)."}

/* The message of this thread's last failed user-function call. */
const char *sl_agg_error(void);

/* The "group-by" and "aggregates" options of an aggregating vertex
 * (window, group_aggregate, local_aggregate), one parser and one set of
 * messages for all three:
 *   "group-by":   column names of `in` (an array, or one name as a string),
 *                 none twice, at most SL_MAX_KEY_COLS; absent, null or []
 *                 is no key -- one group -- which keys_required refuses;
 *   "aggregates": items for sl_agg_list_add (an array, or one as a
 *                 string); absent, null or [] only with a key: the result
 *                 is then one row per distinct key (SELECT DISTINCT, or per
 *                 key and window).
 * The key columns are appended to `out` (a key whose name is already there,
 * such as window_start, is refused) and, when key_schema is not NULL, to
 * key_schema; their input indices go to *keys (allocated, caller frees),
 * their number to *nkeys. The aggregates' output columns are appended to
 * agg_out (`out` itself, or a scratch schema) and the items to aggs.
 * SL_ERR with "vertex 'vid': ..." in err; what was filled is the caller's
 * to free either way. */
int sl_agg_plan_options(const char *vid, const struct json_t *config, const sl_schema *in,
                        bool keys_required, sl_schema *out, sl_schema *agg_out, int **keys,
                        int *nkeys, sl_schema *key_schema, sl_agg_list *aggs, char *err,
                        size_t errlen);

/* Per record. ------------------------------------------------------------------ */

static inline void sl_agg_init(const sl_agg_list *l, uint8_t *acc) { memset(acc, 0, l->size); }

/* The row count of an accumulator. */
int64_t sl_agg_rows(const uint8_t *acc);

/* Fold one input row into acc. SL_ERR: a user function failed (ERRORS). */
int sl_agg_add(const sl_agg_list *l, uint8_t *acc, const sl_row *row);

/* Take one input row (that was added before) back out of acc: the counts
 * and sums go down; MIN and MAX are not touched (see keep_values). SL_ERR:
 * a user function failed or has no retract. */
int sl_agg_retract(const sl_agg_list *l, uint8_t *acc, const sl_row *row);

/* Combine accumulator src into dst, as if dst had seen src's rows too
 * (merging session windows, combining slices). SL_ERR: a user function
 * failed. */
int sl_agg_merge(const sl_agg_list *l, uint8_t *dst, const uint8_t *src);

/* The l->n result values of acc into out[0 .. l->n). out borrows nothing
 * but scratch: a STRING MIN/MAX that has a value is an empty string, for
 * the caller to point at the bytes it keeps; a user function's STRING or
 * BYTES result is in scratch (the operator's, reset per callback).
 * SL_ERR: a user function failed. */
int sl_agg_result_in(const sl_agg_list *l, const uint8_t *acc, sl_arena *scratch, sl_value *out);
/* The same without scratch (a function's string result fails). */
int sl_agg_result(const sl_agg_list *l, const uint8_t *acc, sl_value *out);

/* Result rows equal as Flink compares them (Double.equals for DOUBLE):
 * a and b are l->n values each, as sl_agg_result fills them. */
bool sl_agg_results_equal(const sl_agg_list *l, const sl_value *a, const sl_value *b);

/* DISTINCT helpers. ----------------------------------------------------------- */

/* Whether row counts for DISTINCT item a (its value is not NULL and its
 * FILTER, if any, is TRUE); then *p / *len are the bytes its value set is
 * keyed by: the 8-byte little-endian order key, or a string's bytes
 * (borrowed from row, or from tmp). */
bool sl_agg_distinct_value(const sl_agg *a, const sl_row *row, uint8_t tmp[8], const void **p,
                           size_t *len);

/* Fold row's value of DISTINCT item i into acc (sign +1: the value is new
 * to the set) or out of it (-1: its last copy left). */
void sl_agg_distinct_apply(const sl_agg_list *l, int i, uint8_t *acc, const sl_row *row, int sign);

/* MIN / MAX helpers. --------------------------------------------------------- */

/* A non-NULL value of type t as an int64 whose signed order is the
 * aggregate's order (the value for BOOLEAN, INT, BIGINT and TIMESTAMP; for
 * DOUBLE its bits mapped to Double.compareTo order). */
int64_t sl_agg_order_key(sl_type t, const sl_value *v);

/* Read (returns has-value, the key in *key) / write the slot of MIN/MAX
 * item a in acc. */
bool sl_agg_minmax_get(const sl_agg *a, const uint8_t *acc, int64_t *key);
void sl_agg_minmax_set(const sl_agg *a, uint8_t *acc, bool has, int64_t key);

/* STRING MIN/MAX: whether the row counts for item a (its value is not NULL
 * and its FILTER, if any, is TRUE); then *p / *len are the value's bytes,
 * borrowed from row. */
bool sl_agg_str_value(const sl_agg *a, const sl_row *row, const void **p, size_t *len);

/* MIN/MAX item a of a non-STRING column: whether the row counts (its value
 * is not NULL and its FILTER, if any, is TRUE); then *key is the value's
 * order key (sl_agg_order_key). */
bool sl_agg_minmax_value(const sl_agg *a, const sl_row *row, int64_t *key);

/* COLLECT item a: the row's value (into *x, borrowed from row) when it
 * counts (not NULL, FILTER passed). */
bool sl_agg_collect_value(const sl_agg *a, const sl_row *row, const sl_value **x);

/* JSON_ARRAYAGG / JSON_OBJECTAGG item a: whether the row counts (its FILTER,
 * if any, passed) whatever its value. */
bool sl_agg_json_counts(const sl_agg *a, const sl_row *row);

/* COLLECT, JSON_ARRAYAGG or JSON_OBJECTAGG: kept by the caller, no accumulator. */
static inline bool sl_agg_kept(const sl_agg *a)
{
    return a->fn == SL_AGG_COLLECT || a->fn == SL_AGG_JSON_ARRAYAGG ||
           a->fn == SL_AGG_JSON_OBJECTAGG;
}

/* Flink's StringData order: unsigned bytes, then the shorter first. */
int sl_agg_str_cmp(const void *a, size_t alen, const void *b, size_t blen);

/* COLLECT's result. Entries are [u32 length][the value's datum bytes][i64
 * copies] at base + ix[k] for k < n (ix sorted by sl_agg_multiset_sort:
 * the values' bytes, as sl_agg_str_cmp orders them, so every backend and
 * subtask writes the same MULTISET); sl_agg_multiset_build writes the
 * MULTISET bytes of those with copies > 0 into out (once: COLLECT(DISTINCT
 * x), each value counted once). */
struct sl_buf;
void sl_agg_multiset_sort(const uint8_t *base, size_t *ix, size_t n);
void sl_agg_multiset_build(const uint8_t *base, const size_t *ix, size_t n, bool once,
                           struct sl_buf *out);

/* Kept values read back from state (operators/agg_kept.c says how they are
 * laid out): a keyed-state scan callback (sl_kstate_scan_key) that appends
 * the entries of one item -- those whose namespace starts with prefix --
 * to out; sl_agg_kept_append does the same for one entry (tail: the
 * namespace after the prefix). */
typedef struct sl_agg_kept_scan {
    sl_agg_fn fn;          /* the item's function: the layout of its entries */
    const uint8_t *prefix; /* the item's entries' namespaces start with it */
    size_t plen;
    struct sl_buf *out;    /* where the entries go */
} sl_agg_kept_scan;
int sl_agg_kept_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen);
void sl_agg_kept_append(const sl_agg_kept_scan *c, const void *tail, size_t tlen,
                        const void *val, size_t vlen);
/* The length of laid-out entry e of an item of fn. */
size_t sl_agg_kept_size(sl_agg_fn fn, const uint8_t *e);
/* Offsets (size_t) of scan's entries into idx, in the item's order. */
void sl_agg_kept_index(sl_agg_fn fn, const struct sl_buf *scan, struct sl_buf *idx);
/* Item a's result from the entries of scan in idx's order into out (its
 * bytes: a MULTISET, or the JSON text), leaving out the entry at offset
 * skip (SIZE_MAX: none; JSON items only). */
void sl_agg_kept_build(const sl_agg *a, const struct sl_buf *scan, const struct sl_buf *idx,
                       size_t skip, struct sl_buf *out);

/* Whether order key k beats the current extremum cur of MIN/MAX item a. */
static inline bool sl_agg_minmax_better(const sl_agg *a, int64_t k, int64_t cur)
{
    return a->fn == SL_AGG_MAX ? k > cur : k < cur;
}

/* Two-phase aggregation. ---------------------------------------------------- */

/* A local_aggregate vertex (operators/local_aggregate.c) combines rows per
 * key (and slice) before the exchange and sends partial accumulators: rows
 * of the group-by columns, each aggregate's argument and FILTER column with
 * its name and type but always NULL (so that the global operator parses the
 * same aggregate list into the same accumulator layout), then for windows
 * SL_AGG_SLICE_COL (TIMESTAMP: the end of the slice), then SL_AGG_ACC_COL
 * (BYTES: the accumulator). A window or group_aggregate vertex with
 * "phase": "global" folds them in with sl_agg_merge. */
#define SL_AGG_SLICE_COL "$slice_end"
#define SL_AGG_ACC_COL "$acc"

/* The "phase" option of vertex vid ("single", the default, or "global"):
 * SL_OK with *global set, SL_ERR with a message naming the vertex. */
int sl_agg_phase(const char *vid, const char *phase, bool *global, char *err, size_t errlen);

/* Whether partial accumulators of l can be merged exactly: no DISTINCT
 * (merging value sets that overlap double-counts), no MIN/MAX kept from
 * retracting input (keep_values), no STRING MIN/MAX (not in the
 * accumulator) and no user function without merge. */
bool sl_agg_mergeable(const sl_agg_list *l);

/* The slices of window spec `text` (operators/window.c): [s, s + *slide)
 * with s = *offset modulo *slide; SL_ERR for SESSION windows, which merge. */
/* The instant a window or slice ending at local time `end` is due (the
 * instant of its last local millisecond; an overlap takes the later one, as
 * Flink's timers do); tz NULL: UTC, end - 1. See window.c "Zones". */
struct sl_tz;
int64_t sl_window_due(struct sl_tz *tz, int64_t end);

/* The window operators' zone options (window, local_aggregate, window_tvf,
 * window_join, window rank): "time-attribute" "timestamp" (default) or
 * "ltz" (a TIMESTAMP_LTZ or processing-time attribute: windows align in the
 * session zone) and the session zone row. sl_window_zone reads them: *ltz,
 * and in *zone (caller frees) the zone to align in, NULL for UTC or a
 * "timestamp" attribute; SL_ERR for a bad value or an unknown zone. */
#define SL_WINDOW_ZONE_OPTIONS                                                                   \
    {"time-attribute", SL_CT_STRING, NULL, NULL,                                                 \
     "timestamp (default) or ltz: a TIMESTAMP_LTZ or processing-time attribute, whose windows " \
     "align in table.local-time-zone (window_start / window_end local times, window_time a "     \
     "TIMESTAMP_LTZ(3))."},                                                                      \
        SL_OP_OPTION_LOCAL_TIME_ZONE
int sl_window_zone(const sl_plan_ctx *pc, bool *ltz, char **zone, char *err, size_t errlen);

int sl_window_slicing(const char *vid, const char *text, int64_t *slide, int64_t *offset,
                      char *err, size_t errlen);

#endif
