/*
 * window.c -- the `window` operator: windowed aggregation by key, in event
 * time or processing time (what Flink SQL's TUMBLE / HOP / SESSION /
 * CUMULATE window aggregations compile to).
 *
 * Config:
 *   "time-column":      "ts"        TIMESTAMP column with the event time
 *                                   (required in event time)
 *   "window":           "TUMBLE(INTERVAL '10' SECOND)"
 *                       TUMBLE(size [, offset]) | HOP(slide, size [, offset]) |
 *                       SESSION(gap) | CUMULATE(step, max size [, offset])
 *                       (an offset may be negative: INTERVAL '-1' SECOND)
 *   "group-by":         ["user_id"] key columns; empty or absent = one
 *                                   global window per period
 *   "aggregates":       ["COUNT(*) AS cnt", "SUM(price) AS total"]
 *                       COUNT(*), COUNT(1), COUNT(col), SUM, MIN, MAX,
 *                       AVG, COLLECT, JSON_ARRAYAGG, JSON_OBJECTAGG,
 *                       user functions (operators/agg.c parses them, with
 *                       "group-by": sl_agg_plan_options); empty or absent
 *                       with group-by keys: one row per key and window, a
 *                       distinct per window (Flink's window aggregate with
 *                       no aggregate calls, as Nexmark q8 plans)
 *   "allowed-lateness": "0 s"
 *   "time":             "event" (default) | "processing" (TUMBLE, HOP and
 *                                   SESSION)
 *   "input-changelog":  "insert-only" (default) | "retract": -U/-D rows
 *                                   take rows out again (see "Retractions")
 *   "time-attribute":   "timestamp" (default) | "ltz": the time attribute
 *                                   is a TIMESTAMP_LTZ (or processing
 *                                   time); see "Zones" below
 *   "table.local-time-zone": the session zone (SL_OP_OPTION_LOCAL_TIME_ZONE)
 *
 * Output: window_start, window_end, window_time (= window_end - 1 ms, the
 * rowtime of the result), the group-by columns, then the aggregates, typed
 * as Flink types them (see operators/agg.h). Result rows carry
 * ts = window_time.
 *
 * State. Aggregation is incremental: each (key, window) has one entry in
 * op->kstate, namespace = the window's [start, end) (16 bytes, big-endian
 * with the sign flipped so byte order is time order), value =
 *     u8 flags (bit 0: fired; bit 1: set, the accumulator layout of
 *     operators/agg.h -- entries without it come from an older layout and
 *     are refused) | the aggregate list's fixed-size accumulator
 *     (operators/agg.h) | the group-by values as a binary row (sl_row_encode)
 * The key's values are kept in the entry because a timer knows only the key
 * bytes. MIN/MAX of a STRING keep their extremum in that row too: one more
 * STRING column per such aggregate after the group-by values (NULL until a
 * value came), updated when a row's value beats it and merged with the
 * same rule when sessions or slices merge (operators/agg.h "STRING
 * MIN/MAX"; the input is insert-only, so the extremum never has to be
 * retracted). Session windows also keep,
 * per key, the list of its live sessions (state "window-sessions", empty
 * namespace, pairs of i64 start/end) -- Flink's merging window set.
 *
 * Time. A window [start, end) has maxTimestamp = end - 1. Event time: its
 * timer is at maxTimestamp in op->event_timers and fires once the watermark
 * reaches it (watermark >= end - 1); its state is removed at
 * maxTimestamp + allowed-lateness (the same timer when lateness is 0).
 * A row is late for window w when
 *     w.maxTimestamp + allowedLateness <= currentWatermark
 * (Flink's WindowOperator.isWindowLate); a row all of whose windows are
 * late is dropped and counted once in op->metrics.late_dropped, so every row
 * in is either in some window result or counted. A row for a window that
 * already fired but is within the allowed lateness updates it at once:
 * -U[old result] then +U[new result]; a row for a window past its end that
 * had not fired yet (only possible with lateness) emits +I at once.
 * Processing time: a row's windows are those of sl_now_ms() at arrival,
 * timers are in op->proc_timers and fire from proc_time(); nothing is late,
 * and end_input fires every open window so a bounded job loses nothing. A
 * processing-time session fires when the clock reaches its end - 1 and is
 * forgotten then (no lateness), so a row after that opens a new one.
 *
 * Sessions. A row at t opens [t, t + gap); every live session of the key
 * that intersects it (touching counts, as in Flink) is merged into one
 * window by combining accumulators (sl_agg_merge). If the merged window is late the row is
 * dropped. When a merge changes the bounds of a session that already fired,
 * its old result is retracted with -D (its window_start / window_end no
 * longer exist) and the merged window fires as +I when due.
 *
 * Slices. Event-time HOP (whose size is a whole multiple of its slide; Flink's
 * group-window HOP need not be, and then keeps one entry per window) and
 * CUMULATE without allowed lateness keep one entry
 * per (key, slice) instead of one per (key, window), as Flink's slicing
 * window aggregation does: a slice is [s, s + slide) (HOP) or
 * [s, s + step) (CUMULATE), each row updates exactly one slice, and a
 * window's result merges the accumulators of its slices when it fires. A
 * slice entry is registered with one timer, for the first window not yet
 * late that ends with or after it (namespace = that window); firing a
 * window registers the timer of the next window of the key when that one
 * still holds data (HOP: any slice but the fired window's oldest;
 * CUMULATE: always, up to the period's end), and deletes the slices no
 * later window needs (HOP: the oldest; CUMULATE: all, at the period's end).
 * State and timer work per row drop from size/slide to one; a row is late
 * only when the last window containing its slice is.
 *
 * DISTINCT aggregates (COUNT/SUM/AVG(DISTINCT col)) keep each window's set
 * of values per key in "window-distinct" (namespace = window | aggregate
 * index | value; over retractions -> the value's copies, see
 * "Retractions"); the accumulator takes a value in when it is new to the
 * window's set; the sets go with the window's entry at cleanup. Windows
 * with DISTINCT are not sliced (slices would merge accumulators whose sets
 * overlap) and SESSION windows refuse DISTINCT. FILTER (WHERE flag) items
 * count only rows whose flag is TRUE.
 *
 * Kept values. COLLECT [DISTINCT], JSON_ARRAYAGG (TUMBLE windows only, as
 * Flink: its values keep their arrival order, which no merge could keep) and
 * JSON_OBJECTAGG keep their values in "window-kept", per key: namespace =
 * window | aggregate index u8 | the value's bytes (COLLECT, -> i64 copies),
 * its sequence number (JSON_ARRAYAGG, u64 big endian, the next one in the
 * accumulator's slot, -> the value's JSON text) or the JSON key (-> the
 * member's text); operators/agg_kept.c reads them back and builds the
 * result when the window fires (one scan of the key's entries). A row costs
 * one get and put per item. Such windows are not sliced. Merging sessions
 * move the merged windows' entries into the new one (COLLECT's copies add
 * up; a JSON_OBJECTAGG key present in two sessions keeps one of the
 * members, as Flink's merge puts one map into the other); a row whose key is
 * already in the window fails the job, as in Flink. They go with the
 * window's entry.
 *
 * Retractions. With "input-changelog": "retract" (a group window over an
 * anti join, which Flink 2.3 plans) a -U/-D row is assigned to its windows
 * like any row and taken out of their accumulators (sl_agg_retract) and
 * COLLECT's copies; +U adds. A window whose row count is 0 when it fires
 * emits nothing (Flink's record counter). COUNT, SUM, AVG and COLLECT
 * [DISTINCT] (its copies are counted) retract so. MIN/MAX (retract_minmax)
 * keep their values in "window-kept" too: namespace = window | item u8 |
 * the value (its order key, 8 bytes big endian with the sign flipped, or a
 * STRING's bytes) -> i64 copies; the accumulator's slot (a STRING's: the
 * key row's column) holds the extremum, and when its last copy goes the
 * item's entries are read back for the next one (kept_minmax). DISTINCT
 * items count each value's copies in their "window-distinct" entry (i64;
 * insert-only windows keep writing empty values, so their state is as
 * before), a value leaving the accumulator with its last copy. A
 * JSON_ARRAYAGG retraction deletes the earliest entry of equal text (Flink's
 * list remove), a JSON_OBJECTAGG one the key's member when it is the same
 * member. Only windows that use them register the states, so savepoints of
 * other jobs restore unchanged.
 *
 * Two phases. With "phase": "global" the input is a local_aggregate's
 * (operators/local_aggregate.c): per key and slice a partial accumulator
 * (column SL_AGG_ACC_COL) and the slice's end (SL_AGG_SLICE_COL), which
 * stands for the event time (end - 1 lies in the same slice and window).
 * The partial is merged (sl_agg_merge) where a row would be added; a late
 * one counts all its rows as dropped. Only event-time TUMBLE and sliced
 * HOP / CUMULATE without lateness and DISTINCT take partials, and there is
 * no "late" output (the rows are gone). "group-by" and "aggregates" are the
 * local phase's: the partial rows carry the argument columns' names and
 * types, so the accumulator layout is the same.
 *
 * Zones. With "time-attribute": "ltz" and a zone other than UTC, windows
 * align in the zone, as Flink's do over a TIMESTAMP_LTZ (or PROCTIME())
 * attribute: a row's instant becomes its local wall-clock time
 * (sl_tz_to_local), windows, slices and sessions are computed, kept in
 * state and emitted (window_start, window_end) in local time, so a day
 * window starts at local midnight and spans 23 or 25 hours across a DST
 * change. Timers, watermarks and lateness stay instants: a window is due
 * at win_due(end), the instant of its last local millisecond (an overlap
 * takes the later one, Flink's toEpochMillsForTimer), and window_time (a
 * TIMESTAMP_LTZ(3), the result's rowtime) is that millisecond's instant
 * with the earlier offset (Flink's toEpochMills). Without a zone (UTC) the
 * local time is the instant and everything is as above, so state from
 * before zones restores unchanged.
 *
 * Memory: the per-record path reuses buffers held in op->priv (key bytes,
 * the working copy of an entry, the window list, the output values); they
 * grow to the largest entry seen and are never freed per record.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "expr.h"
#include "jobgraph.h"
#include "keygroup.h"
#include "operator.h"
#include "runtime.h"
#include "agg.h"
#include "bytes.h"
#include "temporal.h"
#include "format_json.h"

/* Event timestamps and window bounds must stay within +-2^62 ms and window
 * sizes within 2^40 ms (~35 years), so window arithmetic cannot overflow. */
#define WIN_TS_LIMIT ((int64_t)1 << 62)
#define WIN_SIZE_LIMIT ((int64_t)1 << 40)
#define WIN_MAX_PER_ROW 1000   /* HOP size/slide, CUMULATE size/step */
#define WIN_NS_LEN 16
#define WIN_FIRED 1u
#define WIN_AGG_LAYOUT 2u      /* flags: the entry holds an operators/agg.h accumulator */

typedef enum { WIN_TUMBLE, WIN_HOP, WIN_SESSION, WIN_CUMULATE } win_kind;

typedef struct win_plan {
    char *vid;          /* vertex id, for runtime messages */
    win_kind kind;
    int proctime;       /* 1: processing-time windows */
    int64_t size;       /* TUMBLE, HOP: window size; CUMULATE: max size */
    int64_t slide;      /* HOP slide, CUMULATE step, TUMBLE = size */
    int64_t offset;     /* the window starts modulo the period, in [0, period): TUMBLE's
                           and CUMULATE's period is the size, HOP's the slide */
    int64_t gap;        /* SESSION */
    int64_t lateness;   /* allowed lateness, ms */
    int tcol;           /* time column, -1 in processing time */
    char *tcolname;
    int nkeys;
    int *keys;          /* group-by column indices */
    sl_schema key_schema; /* the group-by columns, then one STRING per STRING MIN/MAX
                             (its extremum): the entry's key row */
    sl_agg_list aggs;   /* the aggregates; their accumulator is in every entry */
    int nout;           /* 3 + nkeys + aggs.n */
    int sliced;         /* HOP / CUMULATE in event time without lateness: state
                           and timers by slice (see "Slices" above) */
    int global;         /* "phase": "global": the input is local_aggregate's
                           partial accumulators (see "Two phases" above) */
    int acccol;         /* global: the accumulator column */
    char *zone;         /* "time-attribute": "ltz" in a zone other than UTC: the
                           session zone windows align in (see "Zones" above) */
    int retract_input;  /* "input-changelog": "retract": -U/-D rows retract (see
                           "Retractions" above) */
    int kept;           /* some item is COLLECT, JSON_ARRAYAGG or JSON_OBJECTAGG, or
                           retract_minmax: "window-kept" holds values */
    int retract_minmax; /* retract_input and a MIN or MAX: their values kept (see
                           "Retractions" above) */
} win_plan;

typedef struct win_range {
    int64_t start, end;
} win_range;

typedef struct win_state {
    int sid_acc;          /* state id of the window entries */
    int sid_sess;         /* state id of the session lists (sessions only) */
    int late_out;         /* index of the "late" side output */
    sl_buf cur;             /* working copy of the entry being updated */
    sl_buf other;           /* a second entry (a session being merged in) */
    sl_buf list;            /* the key's session list */
    sl_buf keyrow;          /* the current record's group-by values, encoded */
    int keyrow_ok;        /* keyrow holds the current record's values */
    win_range *wins;      /* the current record's windows */
    int wcap;
    sl_value *kin;        /* group-by values of the record (for encoding) */
    sl_value *keyv;       /* group-by values decoded from an entry */
    sl_value *outv;       /* the output row's values */
    uint8_t ns[WIN_NS_LEN];
    int sid_distinct;     /* "window-distinct" (DISTINCT aggregates), or -1 */
    const uint8_t *partial; /* global phase: the record's accumulator */
    sl_buf dns;             /* a "window-distinct" namespace, or the ones to delete */
    sl_value *sv2;        /* STRING MIN/MAX: a second entry's key row, decoded */
    sl_buf snew;            /* STRING MIN/MAX: an entry being rewritten */
    sl_tz *tz;            /* pl->zone, opened for this subtask; NULL: UTC */
    int sid_kept;         /* "window-kept" (COLLECT, JSON_ARRAYAGG, JSON_OBJECTAGG), or -1 */
    sl_buf kns;             /* a "window-kept" namespace being built */
    sl_buf kscan;           /* one item's entries read back (operators/agg_kept.c) */
    sl_buf kidx;            /* ... their offsets, in the item's order */
    sl_buf kmove;           /* a session's entries being moved: [u32 nslen][ns][u32 vlen][val] */
    sl_buf kval;            /* a JSON item's value text */
    sl_buf *kout;           /* per aggregate: a kept item's result bytes */
} win_state;

/* ---- small helpers ------------------------------------------------------ */

/* The session list's little-endian i64 fields. */
static inline void put_i64(uint8_t *p, int64_t v) { sl_put_lei64(p, v); }
static inline int64_t get_i64(const uint8_t *p) { return sl_get_lei64(p); }

/* Namespace bytes: start then end, big-endian, sign bit flipped. */
static void ns_encode(uint8_t *ns, int64_t start, int64_t end)
{
    uint64_t a = (uint64_t)start ^ ((uint64_t)1 << 63), b = (uint64_t)end ^ ((uint64_t)1 << 63);
    for (int i = 0; i < 8; i++) {
        ns[i] = (uint8_t)(a >> (56 - 8 * i));
        ns[8 + i] = (uint8_t)(b >> (56 - 8 * i));
    }
}

static int ns_decode(const void *nsv, size_t len, int64_t *start, int64_t *end)
{
    const uint8_t *ns = nsv;
    if (len != WIN_NS_LEN) return SL_ERR;
    uint64_t a = 0, b = 0;
    for (int i = 0; i < 8; i++) {
        a = (a << 8) | ns[i];
        b = (b << 8) | ns[8 + i];
    }
    *start = (int64_t)(a ^ ((uint64_t)1 << 63));
    *end = (int64_t)(b ^ ((uint64_t)1 << 63));
    return SL_OK;
}

static inline int64_t sat_add(int64_t a, int64_t b) /* b >= 0 */
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* Flink's TimeWindow.getWindowStartWithOffset. */
static inline int64_t window_start(int64_t ts, int64_t offset, int64_t size)
{
    int64_t rem = (ts - offset) % size;
    return rem < 0 ? ts - (rem + size) : ts - rem;
}

/* The instant a window ending at local time `end` is due: its last
 * millisecond end - 1 as an instant -- in UTC end - 1 itself; in a zone
 * Flink's TimeWindowUtil.toEpochMillsForTimer: a local time in a DST
 * overlap takes the later of its two instants (so that both hours are in
 * the window before it fires), one in a gap the first instant after it. */
int64_t sl_window_due(sl_tz *tz, int64_t end)
{
    int64_t local = end - 1;
    if (!tz) return local;
    int64_t t = sl_tz_to_utc(tz, local);
    static const int64_t around[2] = {-86400000, 86400000};
    for (int i = 0; i < 2; i++) {
        int64_t c = local - sl_tz_offset(tz, t + around[i]);
        if (c > t && sl_tz_to_local(tz, c) == local) t = c;
    }
    return t;
}

#define win_due sl_window_due

/* window_time of a window ending at local time `end`: its last millisecond
 * as an instant (Flink's TimeWindowUtil.toEpochMills: an overlap takes the
 * earlier offset). */
static inline int64_t win_time(sl_tz *tz, int64_t end)
{
    return tz ? sl_tz_to_utc(tz, end - 1) : end - 1;
}

/* The most windows a row of a HOP or CUMULATE window falls into: HOP's
 * ceil(size / slide) (a size need not be a multiple of the slide),
 * CUMULATE's size / step. */
static inline int64_t per_row(const win_plan *pl)
{
    return (pl->size + pl->slide - 1) / pl->slide;
}

/* ---- plan: parsing the config ------------------------------------------- */

static void win_plan_free(void *p)
{
    win_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->tcolname);
    free(pl->zone);
    free(pl->keys);
    sl_agg_list_free(&pl->aggs);
    sl_schema_free(&pl->key_schema);
    free(pl);
}

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return s;
}

/* Length of an identifier at s (letters, digits, _, $). */
static size_t ident_len(const char *s)
{
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '$') n++;
    return n;
}

static bool word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

/* a mod m in [0, m), m > 0 */
static inline int64_t floor_mod(int64_t a, int64_t m)
{
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}

/* An interval argument; an offset (may_be_neg) may be negative,
 * INTERVAL '-1' SECOND (sl_interval_parse takes none). */
static int parse_arg(const char *arg, bool may_be_neg, int64_t *ms, char *err, size_t errlen)
{
    const char *q = strchr(arg, '\'');
    if (!may_be_neg || !q || q[1] != '-') return sl_interval_parse(arg, ms, err, errlen);
    char pos[128];
    snprintf(pos, sizeof pos, "%.*s%s", (int)(q + 1 - arg), arg, q + 2);
    if (sl_interval_parse(pos, ms, err, errlen) != SL_OK) return SL_ERR;
    *ms = -*ms;
    return SL_OK;
}

/* Parse "NAME(arg, arg[, offset])" into the kind and its intervals. As
 * Flink's TimeWindow.getWindowStartWithOffset, an offset counts modulo the
 * period it shifts (TUMBLE's and CUMULATE's size, HOP's slide), so one
 * larger than it or negative is as good as its remainder. */
static int parse_window(win_plan *pl, const char *text, char *err, size_t errlen)
{
    static const char usage[] = "expected TUMBLE(size [, offset]), HOP(slide, size [, offset]), "
                                "SESSION(gap) or CUMULATE(step, max size [, offset]) with sizes "
                                "like INTERVAL '10' SECOND";
    const char *vid = pl->vid;
    const char *s = skip_space(text);
    size_t n = ident_len(s);
    int minargs, maxargs;
    if (word_is(s, n, "TUMBLE")) pl->kind = WIN_TUMBLE, minargs = 1, maxargs = 2;
    else if (word_is(s, n, "HOP")) pl->kind = WIN_HOP, minargs = 2, maxargs = 3;
    else if (word_is(s, n, "SESSION")) pl->kind = WIN_SESSION, minargs = 1, maxargs = 1;
    else if (word_is(s, n, "CUMULATE")) pl->kind = WIN_CUMULATE, minargs = 2, maxargs = 3;
    else return sl_seterr(err, errlen, "vertex '%s': window '%s': %s", vid, text, usage);
    const char *p = skip_space(s + n);
    if (*p != '(') return sl_seterr(err, errlen, "vertex '%s': window '%s': %s", vid, text, usage);
    p++;
    int64_t args[3];
    int nargs = 0;
    for (;;) {
        /* one argument: up to a ',' or ')' outside quotes */
        const char *a = p;
        bool quoted = false;
        while (*p && (quoted || (*p != ',' && *p != ')'))) {
            if (*p == '\'') quoted = !quoted;
            p++;
        }
        if (!*p) return sl_seterr(err, errlen, "vertex '%s': window '%s': missing ')'", vid, text);
        if (nargs == maxargs)
            return sl_seterr(err, errlen, "vertex '%s': window '%s': too many arguments; %s", vid,
                             text, usage);
        char arg[128], perr[200];
        size_t alen = (size_t)(p - a);
        if (alen >= sizeof arg)
            return sl_seterr(err, errlen, "vertex '%s': window '%s': argument %d is too long",
                             vid, text, nargs + 1);
        memcpy(arg, a, alen);
        arg[alen] = 0;
        if (parse_arg(arg, nargs == minargs, &args[nargs], perr, sizeof perr) != SL_OK)
            return sl_seterr(err, errlen, "vertex '%s': window '%s': argument %d: %s", vid, text,
                             nargs + 1, perr);
        nargs++;
        if (*p++ == ')') break;
    }
    if (*skip_space(p))
        return sl_seterr(err, errlen, "vertex '%s': window '%s': unexpected text after ')'", vid,
                         text);
    if (nargs < minargs)
        return sl_seterr(err, errlen, "vertex '%s': window '%s': too few arguments; %s", vid, text,
                         usage);
    for (int i = 0; i < nargs; i++) {
        bool offset = i == minargs;
        if ((args[i] <= 0 && !offset) || args[i] > WIN_SIZE_LIMIT || args[i] < -WIN_SIZE_LIMIT)
            return sl_seterr(err, errlen, "vertex '%s': window '%s': argument %d must be between "
                             "1 ms and %lld ms", vid, text, i + 1, (long long)WIN_SIZE_LIMIT);
    }
    switch (pl->kind) {
    case WIN_TUMBLE:
        pl->size = pl->slide = args[0];
        pl->offset = nargs > 1 ? floor_mod(args[1], args[0]) : 0;
        break;
    case WIN_HOP: /* a size that is no multiple of the slide: windows, not slices */
        pl->slide = args[0];
        pl->size = args[1];
        pl->offset = nargs > 2 ? floor_mod(args[2], args[0]) : 0;
        break;
    case WIN_SESSION:
        pl->gap = args[0];
        break;
    case WIN_CUMULATE:
        pl->slide = args[0];
        pl->size = args[1];
        if (pl->size % pl->slide != 0)
            return sl_seterr(err, errlen, "vertex '%s': window '%s': CUMULATE needs the max size "
                             "(%lld ms) to be a whole multiple of the step (%lld ms)", vid, text,
                             (long long)pl->size, (long long)pl->slide);
        pl->offset = nargs > 2 ? floor_mod(args[2], args[1]) : 0;
        break;
    }
    if ((pl->kind == WIN_HOP || pl->kind == WIN_CUMULATE) &&
        per_row(pl) > WIN_MAX_PER_ROW)
        return sl_seterr(err, errlen, "vertex '%s': window '%s': %lld windows per row; the limit "
                         "is %d", vid, text, (long long)per_row(pl), WIN_MAX_PER_ROW);
    return SL_OK;
}

int sl_window_zone(const sl_plan_ctx *pc, bool *ltz, char **zone, char *err, size_t errlen)
{
    const char *vid = pc->v->id ? pc->v->id : "?";
    const char *tattr = sl_vconf_str(pc->v, "time-attribute", "timestamp");
    *zone = NULL;
    *ltz = !strcasecmp(tattr, "ltz");
    if (!*ltz && strcasecmp(tattr, "timestamp"))
        return sl_seterr(err, errlen, "vertex '%s': option 'time-attribute' must be 'timestamp' "
                         "or 'ltz', not '%s'", vid, tattr);
    const char *name = sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE);
    if (!*ltz || !name || !strcmp(name, "UTC")) return SL_OK;
    char zerr[300];
    sl_tz *tz = sl_tz_open(name, SL_TZ_JAVA_TIME, zerr, sizeof zerr);
    if (!tz)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': %s", vid, SL_OPT_LOCAL_TIME_ZONE,
                         zerr);
    sl_tz_destroy(tz);
    *zone = sl_strdup(name);
    return SL_OK;
}

/* For local_aggregate: the slices of window spec `text` -- [s, s + *slide)
 * with s = *offset modulo *slide (a TUMBLE window, or a HOP / CUMULATE
 * slice as in "Slices" above; a CUMULATE's offset is its period's, which
 * modulo the step is its slices'). SESSION windows merge and have no slices:
 * SL_ERR. */
int sl_window_slicing(const char *vid, const char *text, int64_t *slide, int64_t *offset,
                      char *err, size_t errlen)
{
    win_plan pl = {.vid = (char *)vid};
    if (parse_window(&pl, text, err, errlen) != SL_OK) return SL_ERR;
    if (pl.kind == WIN_SESSION)
        return sl_seterr(err, errlen, "vertex '%s': window '%s': SESSION windows merge, so they "
                         "cannot be pre-aggregated in slices", vid, text);
    if (pl.kind == WIN_HOP && pl.size % pl.slide != 0)
        return sl_seterr(err, errlen, "vertex '%s': window '%s': a HOP size (%lld ms) that is no "
                         "whole multiple of the slide (%lld ms) has no slices", vid, text,
                         (long long)pl.size, (long long)pl.slide);
    *slide = pl.slide;
    *offset = pl.offset;
    return SL_OK;
}

static void *win_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->nin ? pc->in[0].schema : NULL;
    sl_schema *out = pc->out;
    const char *vid = v->id ? v->id : "?";
    win_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(vid);
    pl->tcol = -1;
    sl_agg_list_init(&pl->aggs);
    sl_schema_init(&pl->key_schema);
    sl_schema_init(out);

    bool global;
    if (sl_agg_phase(vid, sl_vconf_str(v, "phase", NULL), &global, err, errlen) != SL_OK)
        goto fail;
    pl->global = global;
    /* time */
    const char *tmode = sl_vconf_str(v, "time", "event");
    if (strcasecmp(tmode, "event") == 0) pl->proctime = 0;
    else if (strcasecmp(tmode, "processing") == 0) pl->proctime = 1;
    else {
        sl_seterr(err, errlen, "vertex '%s': option 'time' must be 'event' or 'processing', not "
                  "'%s'", vid, tmode);
        goto fail;
    }
    json_t *jt = pl->global ? json_string(SL_AGG_SLICE_COL)
                            : json_incref(json_object_get(v->config, "time-column"));
    if (jt && !json_is_string(jt)) {
        json_decref(jt);
        sl_seterr(err, errlen, "vertex '%s': option 'time-column' must be a column name", vid);
        goto fail;
    }
    if (!jt && !pl->proctime) {
        sl_seterr(err, errlen, "vertex '%s': option 'time-column' (the TIMESTAMP column with the "
                  "event time) is required for event-time windows", vid);
        goto fail;
    }
    if (jt) {
        char tname[256];
        snprintf(tname, sizeof tname, "%s", json_string_value(jt));
        json_decref(jt);
        int tc = sl_schema_find(in, tname);
        if (tc < 0) {
            sl_seterr(err, errlen, "vertex '%s': time-column '%s' is not in the input%s", vid,
                      tname, pl->global ? " (a global phase takes a local_aggregate's output)"
                                        : "");
            goto fail;
        }
        if (!pl->proctime) {
            if (in->fields[tc].type != SL_T_TIMESTAMP) {
                sl_seterr(err, errlen, "vertex '%s': time-column '%s' is %s; event-time windows "
                          "need a TIMESTAMP column", vid, tname, sl_type_name(in->fields[tc].type));
                goto fail;
            }
            pl->tcol = tc;
            pl->tcolname = sl_strdup(in->fields[tc].name);
        }
    }

    /* window */
    json_t *jw = json_object_get(v->config, "window");
    if (!json_is_string(jw)) {
        sl_seterr(err, errlen, "vertex '%s': option 'window' is required, e.g. "
                  "\"TUMBLE(INTERVAL '10' SECOND)\"", vid);
        goto fail;
    }
    if (parse_window(pl, json_string_value(jw), err, errlen) != SL_OK) goto fail;
    if (pl->proctime && pl->kind == WIN_CUMULATE) {
        sl_seterr(err, errlen, "vertex '%s': processing-time windows can be TUMBLE, HOP or "
                  "SESSION only", vid);
        goto fail;
    }
    if (sl_vconf_interval(v, "allowed-lateness", 0, &pl->lateness, err, errlen) != SL_OK)
        goto fail;
    if (pl->proctime && pl->lateness > 0) {
        sl_seterr(err, errlen, "vertex '%s': allowed-lateness applies to event time only", vid);
        goto fail;
    }

    /* the time attribute's kind: a TIMESTAMP_LTZ (or processing time) aligns
     * windows in the session zone the job was planned in */
    bool ltz;
    if (sl_window_zone(pc, &ltz, &pl->zone, err, errlen) != SL_OK) goto fail;
    const sl_dtype *wtdt = sl_dtype_basic(SL_T_TIMESTAMP);
    if (ltz && sl_dtype_parse("TIMESTAMP_LTZ(3)", &wtdt, err, errlen) != SL_OK) goto fail;
    sl_schema_add(out, "window_start", SL_T_TIMESTAMP);
    sl_schema_add(out, "window_end", SL_T_TIMESTAMP);
    sl_schema_add_dt(out, "window_time", wtdt);

    const char *chl = sl_vconf_str(v, "input-changelog", "insert-only");
    if (strcasecmp(chl, "retract") && strcasecmp(chl, "insert-only")) {
        sl_seterr(err, errlen, "vertex '%s': option 'input-changelog' must be 'insert-only' or "
                  "'retract', not '%s'", vid, chl);
        goto fail;
    }
    pl->retract_input = !strcasecmp(chl, "retract");

    /* the key columns, then the aggregates: no aggregate at all is a
     * distinct of the keys per window (operators/agg.h) */
    pl->aggs.allow_collect = true; /* their values in "window-kept" */
    if (sl_agg_plan_options(vid, v->config, in, false, out, out, &pl->keys, &pl->nkeys,
                            &pl->key_schema, &pl->aggs, err, errlen) != SL_OK)
        goto fail;
    for (int i = 0; i < pl->aggs.n; i++) /* STRING MIN/MAX: the extremum in the entry */
        if (pl->aggs.aggs[i].strval) {
            char nm[32];
            snprintf(nm, sizeof nm, "$str%d", i);
            sl_schema_add(&pl->key_schema, nm, SL_T_STRING);
        }
    pl->nout = out->n;
    /* over retractions MIN and MAX keep their values, from which a retracted
     * extremum's successor is found (operators/agg.h keep_values) */
    pl->retract_minmax = pl->retract_input && (pl->aggs.has_minmax || pl->aggs.has_strval);
    pl->aggs.keep_values = pl->retract_input && pl->aggs.has_minmax;
    pl->kept = pl->aggs.has_collect || pl->aggs.has_jsonagg || pl->retract_minmax;
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        /* JSON_ARRAYAGG keeps its values in arrival order, which windows that
         * merge (sessions) or share rows (HOP, CUMULATE) would have to merge;
         * Flink's has no merge and plans it in TUMBLE windows only */
        if (a->fn == SL_AGG_JSON_ARRAYAGG && pl->kind != WIN_TUMBLE) {
            sl_seterr(err, errlen, "vertex '%s': aggregate %d '%s': JSON_ARRAYAGG is supported in "
                      "TUMBLE windows only", vid, i + 1, a->text);
            goto fail;
        }
    }
    if (pl->aggs.has_distinct && pl->kind == WIN_SESSION) {
        sl_seterr(err, errlen, "vertex '%s': DISTINCT aggregates in SESSION windows are not "
                  "supported (merging sessions would have to merge their value sets)", vid);
        goto fail;
    }
    /* slices merge accumulators, which DISTINCT value sets do not survive:
     * with DISTINCT each window keeps its own entry and set */
    if (pl->aggs.udf_nomerge && pl->kind == WIN_SESSION) {
        sl_seterr(err, errlen, "vertex '%s': SESSION windows merge accumulators, and an aggregate "
                  "function here declares no merge", vid);
        goto fail;
    }
    pl->sliced = (pl->kind == WIN_HOP || pl->kind == WIN_CUMULATE) && !pl->proctime &&
                 pl->lateness == 0 && !pl->aggs.has_distinct && !pl->aggs.udf_nomerge &&
                 !pl->kept && pl->size % pl->slide == 0;
    if (pl->global) {
        pl->acccol = sl_schema_find(in, SL_AGG_ACC_COL);
        if (pl->acccol < 0 || in->fields[pl->acccol].type != SL_T_BYTES) {
            sl_seterr(err, errlen, "vertex '%s': a global phase takes a local_aggregate's output "
                      "(no BYTES column '%s' in the input)", vid, SL_AGG_ACC_COL);
            goto fail;
        }
        if (pl->proctime || pl->kind == WIN_SESSION || pl->lateness > 0 || pl->retract_input ||
            !sl_agg_mergeable(&pl->aggs) || (pl->kind != WIN_TUMBLE && !pl->sliced)) {
            sl_seterr(err, errlen, "vertex '%s': two-phase window aggregation needs event-time "
                      "TUMBLE, HOP or CUMULATE windows without allowed lateness and without "
                      "DISTINCT aggregates", vid);
            goto fail;
        }
        if (sl_plan_key(pc, 0, pl->keys, pl->nkeys, err, errlen) != SL_OK) goto fail;
        return pl;
    }
    /* the key is the group-by columns (none: one key for all rows), and
     * rows too late for every window may leave through "late" */
    if (sl_plan_key(pc, 0, pl->keys, pl->nkeys, err, errlen) != SL_OK ||
        sl_plan_output(pc, "late", in, err, errlen) < 0)
        goto fail;
    return pl;
fail:
    win_plan_free(pl);
    sl_schema_free(out);
    return NULL;
}

/* ---- entries -------------------------------------------------------------- */

/* An entry is u8 flags | the aggregate accumulator (sl_agg) | key row. */
#define WIN_ACC_OFF 1
static inline size_t keyrow_off(const win_plan *pl) { return WIN_ACC_OFF + pl->aggs.size; }

/* ---- per-subtask state ---------------------------------------------------- */

static int win_open(sl_op *op)
{
    const win_plan *pl = op->plan;
    if (!op->kstate || (!pl->proctime && !op->event_timers) || (pl->proctime && !op->proc_timers))
        return sl_op_fail(op, "vertex '%s': the window operator needs keyed state and timers "
                          "from the runtime", pl->vid);
    win_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->sid_acc = sl_kstate_register(op->kstate, "window-acc");
    st->sid_sess = pl->kind == WIN_SESSION ? sl_kstate_register(op->kstate, "window-sessions")
                                           : -1;
    st->sid_distinct = pl->aggs.has_distinct ? sl_kstate_register(op->kstate, "window-distinct")
                                             : -1;
    st->sid_kept = pl->kept ? sl_kstate_register(op->kstate, "window-kept") : -1;
    if (st->sid_acc < 0 || (pl->kind == WIN_SESSION && st->sid_sess < 0) ||
        (pl->aggs.has_distinct && st->sid_distinct < 0) || (pl->kept && st->sid_kept < 0))
        return sl_op_fail(op, "vertex '%s': cannot register keyed state", pl->vid);
    int nwin = pl->kind == WIN_HOP || pl->kind == WIN_CUMULATE ? (int)per_row(pl) : 1;
    st->wcap = nwin;
    st->wins = sl_calloc((size_t)nwin, sizeof *st->wins);
    st->kin = sl_calloc((size_t)pl->key_schema.n + 1, sizeof *st->kin);
    st->keyv = sl_calloc((size_t)pl->key_schema.n + 1, sizeof *st->keyv);
    st->sv2 = sl_calloc((size_t)pl->key_schema.n + 1, sizeof *st->sv2);
    st->outv = sl_calloc((size_t)pl->nout, sizeof *st->outv);
    if (pl->kept) st->kout = sl_calloc((size_t)pl->aggs.n, sizeof *st->kout);
    st->late_out = sl_op_output(op, "late");
    char uerr[700];
    if (pl->zone && !(st->tz = sl_tz_open(pl->zone, SL_TZ_JAVA_TIME, uerr, sizeof uerr)))
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, uerr);
    if (sl_agg_open(&pl->aggs, uerr, sizeof uerr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, uerr);
    return SL_OK;
}

static void win_close(sl_op *op)
{
    win_state *st = op->priv;
    if (!st) return;
    sl_buf_free(&st->cur);
    sl_buf_free(&st->other);
    sl_buf_free(&st->list);
    sl_buf_free(&st->keyrow);
    sl_buf_free(&st->dns);
    sl_buf_free(&st->snew);
    sl_buf_free(&st->kns);
    sl_buf_free(&st->kscan);
    sl_buf_free(&st->kidx);
    sl_buf_free(&st->kmove);
    sl_buf_free(&st->kval);
    for (int i = 0; st->kout && i < ((const win_plan *)op->plan)->aggs.n; i++)
        sl_buf_free(&st->kout[i]);
    free(st->kout);
    free(st->sv2);
    free(st->wins);
    free(st->kin);
    free(st->keyv);
    free(st->outv);
    sl_tz_destroy(st->tz);
    free(st);
    op->priv = NULL;
}

/* ---- COLLECT, JSON_ARRAYAGG and JSON_OBJECTAGG ------------------------------ */

/* st->kns = window ns | item i | tail (see "Kept values" above). */
static void kept_ns(win_state *st, const uint8_t *ns, int i, const void *tail, size_t tlen)
{
    sl_buf_reset(&st->kns);
    uint8_t *d = (uint8_t *)sl_buf_room(&st->kns, WIN_NS_LEN + 1 + tlen);
    memcpy(d, ns, WIN_NS_LEN);
    d[WIN_NS_LEN] = (uint8_t)i;
    if (tlen) memcpy(d + WIN_NS_LEN + 1, tail, tlen);
    sl_buf_added(&st->kns, WIN_NS_LEN + 1 + tlen);
}

static int kept_state_failed(sl_op *op, const char *serr)
{
    return sl_op_fail(op, "vertex '%s': state: %s", ((const win_plan *)op->plan)->vid, serr);
}

/* The window-kept entry at st->kns: SL_OK with *val / *vlen, another code
 * when there is none; SL_ERR once the task failed. */
static int kept_get(sl_op *op, win_state *st, const void **val, size_t *vlen)
{
    char serr[256];
    int rc = sl_kstate_get(op->kstate, st->sid_kept, st->kns.p, st->kns.len, val, vlen, serr,
                           sizeof serr);
    return rc == SL_ERR ? kept_state_failed(op, serr) : rc;
}

/* COLLECT item i: the record's value's copies in window ns go up (sign 1)
 * or down (-1); an entry at 0 is deleted. */
static int kept_collect(sl_op *op, const sl_row *row, const uint8_t *ns, int i, int sign)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    const sl_agg *a = &pl->aggs.aggs[i];
    const sl_value *x;
    if (!sl_agg_collect_value(a, row, &x)) return SL_OK;
    size_t vl = sl_datum_size(x, a->in_dt);
    kept_ns(st, ns, i, NULL, 0);
    sl_datum_put((uint8_t *)sl_buf_room(&st->kns, vl), x, a->in_dt);
    sl_buf_added(&st->kns, vl);
    const void *val;
    size_t vlen;
    char serr[256];
    int rc = kept_get(op, st, &val, &vlen);
    if (rc == SL_ERR) return SL_ERR;
    int64_t c = (rc == SL_OK && vlen == 8 ? sl_get_lei64(val) : 0) + sign;
    uint8_t cb[8];
    sl_put_lei64(cb, c);
    rc = c ? sl_kstate_put(op->kstate, st->sid_kept, st->kns.p, st->kns.len, cb, 8, serr,
                           sizeof serr)
           : sl_kstate_del(op->kstate, st->sid_kept, st->kns.p, st->kns.len, serr, sizeof serr);
    return rc == SL_ERR ? kept_state_failed(op, serr) : SL_OK;
}

static int kept_minmax(sl_op *op, const sl_row *row, const uint8_t *ns, sl_buf *e, int i,
                       int sign);
static int kept_json_retract(sl_op *op, const sl_row *row, const uint8_t *ns, int i);

/* The record's values of the kept items into window ns, whose entry e (its
 * accumulator holds JSON_ARRAYAGG's next sequence number and the MIN/MAX
 * slots) may be rewritten; sign -1 retracts. */
static int kept_add(sl_op *op, const sl_row *row, const uint8_t *ns, sl_buf *e, int sign)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    char serr[256];
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (a->fn == SL_AGG_COLLECT) {
            if (kept_collect(op, row, ns, i, sign) != SL_OK) return SL_ERR;
            continue;
        }
        if (pl->retract_minmax && (a->fn == SL_AGG_MIN || a->fn == SL_AGG_MAX)) {
            if (kept_minmax(op, row, ns, e, i, sign) != SL_OK) return SL_ERR;
            continue;
        }
        if (!sl_agg_kept(a) || !sl_agg_json_counts(a, row)) continue;
        if (sign < 0) {
            if (kept_json_retract(op, row, ns, i) != SL_OK) return SL_ERR;
            continue;
        }
        uint8_t *acc = sl_buf_u8(e) + WIN_ACC_OFF;
        const sl_value *x = &row->vals[a->col];
        if (a->fn == SL_AGG_JSON_ARRAYAGG) {
            if (x->isnull && !a->null_on_null) continue; /* ABSENT ON NULL */
            sl_buf_reset(&st->kval);
            if (x->isnull) sl_buf_put(&st->kval, "null", 4);
            else sl_fmt_json_value_dt(&st->kval, x, a->in_dt);
            uint64_t seq = (uint64_t)sl_get_lei64(acc + a->off);
            sl_put_lei64(acc + a->off, (int64_t)(seq + 1));
            uint8_t be[8];
            for (int b = 0; b < 8; b++) be[b] = (uint8_t)(seq >> (56 - 8 * b));
            kept_ns(st, ns, i, be, 8);
        } else { /* JSON_OBJECTAGG: one member per key */
            const sl_value *v = &row->vals[a->vcol];
            if (x->isnull)
                return sl_op_fail(op, "vertex '%s': %s: the key is NULL (JSON_OBJECTAGG needs a "
                                  "non-NULL key)", pl->vid, a->text);
            kept_ns(st, ns, i, x->v.s.p, x->v.s.len);
            const void *val;
            size_t vlen;
            int rc = kept_get(op, st, &val, &vlen);
            if (rc == SL_ERR) return SL_ERR;
            if (rc == SL_OK)
                return sl_op_fail(op, "vertex '%s': %s: the key '%.*s' is already present; "
                                  "JSON_OBJECTAGG takes each key once (Flink fails the same way)",
                                  pl->vid, a->text, (int)(x->v.s.len > 200 ? 200 : x->v.s.len),
                                  x->v.s.p);
            if (v->isnull && !a->null_on_null) continue; /* ABSENT ON NULL */
            sl_buf_reset(&st->kval);
            sl_fmt_json_value_dt(&st->kval, x, a->in_dt);
            sl_buf_putc(&st->kval, ':');
            if (v->isnull) sl_buf_put(&st->kval, "null", 4);
            else sl_fmt_json_value_dt(&st->kval, v, a->v_dt);
        }
        if (sl_kstate_put(op->kstate, st->sid_kept, st->kns.p, st->kns.len, st->kval.p,
                          st->kval.len, serr, sizeof serr) == SL_ERR)
            return kept_state_failed(op, serr);
    }
    return SL_OK;
}

/* Kept item i's result in window ns into st->kout[i]. */
static int kept_result(sl_op *op, const uint8_t *ns, int i)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    const sl_agg *a = &pl->aggs.aggs[i];
    char serr[256];
    kept_ns(st, ns, i, NULL, 0);
    sl_agg_kept_scan cs = {a->fn, sl_buf_u8(&st->kns), st->kns.len, &st->kscan};
    sl_buf_reset(&st->kscan);
    if (sl_kstate_scan_key(op->kstate, st->sid_kept, sl_agg_kept_scan_fn, &cs, serr,
                           sizeof serr) == SL_ERR)
        return kept_state_failed(op, serr);
    sl_agg_kept_index(a->fn, &st->kscan, &st->kidx);
    sl_agg_kept_build(a, &st->kscan, &st->kidx, SIZE_MAX, &st->kout[i]);
    return SL_OK;
}

/* The entries of `sid` in window ns (namespace prefix), each as
 * [u32 nslen][ns][u32 vlen][val], appended to ctx's buffer. */
typedef struct ns_scan {
    sl_buf *b;
    const uint8_t *ns;
} ns_scan;

static int ns_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    ns_scan *c = ctx;
    if (nslen < WIN_NS_LEN || memcmp(ns, c->ns, WIN_NS_LEN)) return 0;
    uint8_t *d = (uint8_t *)sl_buf_room(c->b, 8 + nslen + vlen);
    sl_put_le32(d, (uint32_t)nslen);
    memcpy(d + 4, ns, nslen);
    sl_put_le32(d + 4 + nslen, (uint32_t)vlen);
    if (vlen) memcpy(d + 8 + nslen, val, vlen);
    sl_buf_added(c->b, 8 + nslen + vlen);
    return 0;
}

/* Delete window ns's entries of state sid (the window is being cleaned or
 * merged away); with to (a session merged into window `to`) they move there
 * first: COLLECT's copies add up, a JSON_OBJECTAGG member of a key already
 * there replaces it (as Flink's merge puts the other accumulator's map). */
static int ns_clear(sl_op *op, int sid, const uint8_t *ns, const uint8_t *to)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    char serr[256];
    if (sid < 0) return SL_OK;
    sl_buf_reset(&st->kmove);
    ns_scan c = {&st->kmove, ns};
    if (sl_kstate_scan_key(op->kstate, sid, ns_scan_fn, &c, serr, sizeof serr) == SL_ERR)
        return kept_state_failed(op, serr);
    for (size_t pos = 0; pos < st->kmove.len;) {
        const uint8_t *e = sl_buf_u8(&st->kmove) + pos;
        uint32_t n = sl_get_le32(e), vl = sl_get_le32(e + 4 + n);
        pos += 8 + n + vl;
        if (sl_kstate_del(op->kstate, sid, e + 4, n, serr, sizeof serr) != SL_OK)
            return kept_state_failed(op, serr);
        if (!to || n <= WIN_NS_LEN) continue;
        const uint8_t *v = e + 8 + n;
        kept_ns(st, to, e[4 + WIN_NS_LEN], e + 4 + WIN_NS_LEN + 1, n - WIN_NS_LEN - 1);
        uint8_t cb[8];
        sl_agg_fn fn = pl->aggs.aggs[e[4 + WIN_NS_LEN]].fn;
        if ((fn == SL_AGG_COLLECT || fn == SL_AGG_MIN || fn == SL_AGG_MAX) && vl == 8) {
            const void *old;
            size_t olen;
            int rc = sl_kstate_get(op->kstate, sid, st->kns.p, st->kns.len, &old, &olen, serr,
                                   sizeof serr);
            if (rc == SL_ERR) return kept_state_failed(op, serr);
            sl_put_lei64(cb, sl_get_lei64(v) + (rc == SL_OK && olen == 8 ? sl_get_lei64(old) : 0));
            v = cb;
        }
        if (sl_kstate_put(op->kstate, sid, st->kns.p, st->kns.len, v, vl, serr, sizeof serr) !=
            SL_OK)
            return kept_state_failed(op, serr);
    }
    return SL_OK;
}

/* ---- emitting results ------------------------------------------------------ */

/* Fail the task with the message of the user function that failed. */
static int udf_failed(sl_op *op)
{
    const win_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s' (subtask %d): %s", pl->vid, op->subtask, sl_agg_error());
}

/* Emit the result of window [start, end) from an entry's bytes. */
static int emit_result(sl_op *op, sl_rowkind kind, int64_t start, int64_t end, const uint8_t *val,
                       size_t vlen)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    size_t ko = keyrow_off(pl);
    /* over retractions a window whose rows all went emits nothing (Flink's
     * record counter); the rows it did emit had rows, so pairs match */
    if (pl->retract_input && vlen >= ko && sl_agg_rows(val + WIN_ACC_OFF) <= 0) return SL_OK;
    sl_row keyrow = {.vals = st->keyv};
    char derr[256];
    if (vlen < ko || sl_row_decode(val + ko, vlen - ko, &pl->key_schema, &keyrow, derr,
                                   sizeof derr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': damaged window state (%zu bytes): %s", pl->vid, vlen,
                          vlen < ko ? "too short" : derr);
    sl_value *o = st->outv;
    o[0] = (sl_value){.v.i = start};
    o[1] = (sl_value){.v.i = end};
    o[2] = (sl_value){.v.i = win_time(st->tz, end)};
    for (int k = 0; k < pl->nkeys; k++) o[3 + k] = st->keyv[k];
    size_t mark = op->scratch.used; /* a function's string results, dropped once emitted */
    if (sl_agg_result_in(&pl->aggs, val + WIN_ACC_OFF, &op->scratch, &o[3 + pl->nkeys]) != SL_OK)
        return udf_failed(op);
    for (int i = 0, j = pl->nkeys; pl->aggs.has_strval && i < pl->aggs.n; i++)
        if (pl->aggs.aggs[i].strval) o[3 + pl->nkeys + i] = st->keyv[j++];
    for (int i = 0; pl->kept && i < pl->aggs.n; i++)
        if (sl_agg_kept(&pl->aggs.aggs[i])) {
            uint8_t ns[WIN_NS_LEN];
            ns_encode(ns, start, end);
            if (kept_result(op, ns, i) != SL_OK) {
                op->scratch.used = mark;
                return SL_ERR;
            }
            o[3 + pl->nkeys + i].v.s.p = st->kout[i].p;
            o[3 + pl->nkeys + i].v.s.len = (uint32_t)st->kout[i].len;
        }
    sl_row out = {.kind = kind, .n = pl->nout, .vals = o, .ts = o[2].v.i};
    int rc = sl_op_emit(op, &out);
    op->scratch.used = mark;
    return rc;
}

/* A -U or -D row (only with "input-changelog": "retract"). */
static inline bool row_retracts(const sl_row *row)
{
    return row->kind == SL_KIND_UPDATE_BEFORE || row->kind == SL_KIND_DELETE;
}

/* Fold the current record into acc: its row (a retraction takes it out),
 * or in a global phase its partial accumulator. */
static inline int acc_fold(const win_plan *pl, const win_state *st, uint8_t *acc,
                           const sl_row *row)
{
    if (st->partial) return sl_agg_merge(&pl->aggs, acc, st->partial);
    if (row_retracts(row)) return sl_agg_retract(&pl->aggs, acc, row);
    return sl_agg_add(&pl->aggs, acc, row);
}

/* ---- keys, state access --------------------------------------------------- */

/* Encode the record's group-by values (once per record, when needed). */
static void encode_keyrow(sl_op *op, const sl_row *row)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    if (st->keyrow_ok) return;
    for (int k = 0; k < pl->nkeys; k++) st->kin[k] = row->vals[pl->keys[k]];
    for (int k = pl->nkeys; k < pl->key_schema.n; k++) st->kin[k] = (sl_value){.isnull = true};
    sl_row kr = {.kind = SL_KIND_INSERT, .n = pl->key_schema.n, .vals = st->kin};
    size_t need = sl_row_size(&kr, &pl->key_schema);
    sl_buf_reset(&st->keyrow);
    uint8_t *kp = (uint8_t *)sl_buf_room(&st->keyrow, need);
    size_t klen = sl_row_encode(&kr, &pl->key_schema, kp, need);
    SL_ASSERT(klen == need);
    sl_buf_added(&st->keyrow, klen);
    st->keyrow_ok = 1;
}

/* A fresh entry for the current record's key in b: no rows yet. */
static void entry_init(sl_op *op, const sl_row *row, sl_buf *b)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    encode_keyrow(op, row);
    size_t ko = keyrow_off(pl);
    sl_buf_reset(b);
    uint8_t *e = (uint8_t *)sl_buf_room(b, ko + st->keyrow.len);
    memset(e, 0, ko);
    e[0] = WIN_AGG_LAYOUT;
    memcpy(e + ko, sl_buf_u8(&st->keyrow), st->keyrow.len);
    sl_buf_added(b, ko + st->keyrow.len);
}

/* ---- STRING MIN/MAX ------------------------------------------------------- */

/* Decode the key row of entry e (len bytes) into vals. */
static int entry_row(sl_op *op, const uint8_t *e, size_t len, sl_value *vals)
{
    const win_plan *pl = op->plan;
    size_t ko = keyrow_off(pl);
    sl_row r = {.vals = vals};
    char derr[256];
    if (len < ko || sl_row_decode(e + ko, len - ko, &pl->key_schema, &r, derr, sizeof derr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': damaged window state (%zu bytes): %s", pl->vid, len,
                          len < ko ? "too short" : derr);
    return SL_OK;
}

/* Rewrite entry *e with the key row vals (which may point into *e: the new
 * entry is written aside first). */
static void entry_rewrite(sl_op *op, sl_buf *e, const sl_value *vals)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    size_t ko = keyrow_off(pl);
    sl_row kr = {.kind = SL_KIND_INSERT, .n = pl->key_schema.n, .vals = (sl_value *)vals};
    size_t need = sl_row_size(&kr, &pl->key_schema);
    sl_buf_reset(&st->snew);
    uint8_t *d = (uint8_t *)sl_buf_room(&st->snew, ko + need);
    memcpy(d, sl_buf_u8(e), ko);
    size_t n = sl_row_encode(&kr, &pl->key_schema, d + ko, need);
    SL_ASSERT(n == need);
    sl_buf_added(&st->snew, ko + n);
    sl_buf_set(e, st->snew.p, st->snew.len);
}

/* Whether string value v beats the extremum cur of STRING MIN/MAX item a. */
static bool str_better(const sl_agg *a, const sl_value *v, const sl_value *cur)
{
    if (v->isnull) return false;
    if (cur->isnull) return true;
    int c = sl_agg_str_cmp(v->v.s.p, v->v.s.len, cur->v.s.p, cur->v.s.len);
    return a->fn == SL_AGG_MAX ? c > 0 : c < 0;
}

/* Fold the STRING MIN/MAX extrema of `src` -- a record (row) or a second
 * entry's bytes (sbytes/slen, a session or slice merged in) -- into entry
 * *e, rewriting its key row when one changed. */
static int str_fold(sl_op *op, sl_buf *e, const sl_row *row, const uint8_t *sbytes, size_t slen)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    sl_value *cur = st->keyv;
    if (entry_row(op, sl_buf_u8(e), e->len, cur) != SL_OK) return SL_ERR;
    if (sbytes && entry_row(op, sbytes, slen, st->sv2) != SL_OK) return SL_ERR;
    bool changed = false;
    for (int i = 0, j = pl->nkeys; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (!a->strval) continue;
        sl_value v = {.isnull = true};
        const void *p;
        size_t len;
        if (sbytes) v = st->sv2[j];
        else if (sl_agg_str_value(a, row, &p, &len)) v = (sl_value){.v.s = {p, (uint32_t)len}};
        if (str_better(a, &v, &cur[j])) {
            cur[j] = v;
            sl_agg_minmax_set(a, sl_buf_u8(e) + WIN_ACC_OFF, true, 0);
            changed = true;
        }
        j++;
    }
    if (changed) entry_rewrite(op, e, cur);
    return SL_OK;
}

/* The key-row column of STRING MIN/MAX item i. */
static int str_col(const win_plan *pl, int i)
{
    int j = pl->nkeys;
    for (int k = 0; k < i; k++) j += pl->aggs.aggs[k].strval;
    return j;
}

/* Set STRING MIN/MAX item i's extremum in entry *e to the len bytes at p
 * (NULL: no value), its has-value slot with it. */
static int str_set(sl_op *op, sl_buf *e, int i, const void *p, size_t len)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    if (entry_row(op, sl_buf_u8(e), e->len, st->keyv) != SL_OK) return SL_ERR;
    st->keyv[str_col(pl, i)] =
        p ? (sl_value){.v.s = {p, (uint32_t)len}} : (sl_value){.isnull = true};
    sl_agg_minmax_set(&pl->aggs.aggs[i], sl_buf_u8(e) + WIN_ACC_OFF, p != NULL, 0);
    entry_rewrite(op, e, st->keyv);
    return SL_OK;
}

/* ---- over retractions: MIN/MAX values, JSON retractions -------------------- */

/* A MIN/MAX value's bytes in "window-kept": the order key big-endian with
 * the sign bit flipped, so the entries lie in value order. */
static void mm_key_put(uint8_t *b, int64_t k)
{
    uint64_t u = (uint64_t)k ^ ((uint64_t)1 << 63);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(u >> (56 - 8 * i));
}

static int64_t mm_key_get(const uint8_t *b)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u = (u << 8) | b[i];
    return (int64_t)(u ^ ((uint64_t)1 << 63));
}

/* MIN/MAX item i over retractions (pl->retract_minmax): the record's value's
 * copies in window ns go up (sign 1) or down (-1) in "window-kept"
 * (namespace = window | item u8 | the value: mm_key_put's 8 bytes, or a
 * STRING's bytes -> i64 copies; an entry at 0 is deleted, a retraction of a
 * value not held is ignored, as the GROUP BY does). An added value that
 * beats the extremum in entry *e becomes it (a STRING's: str_fold did that
 * already); when the extremum's last copy goes, the window's values are
 * read back for the next one (Flink's retracting MIN/MAX keep such a map
 * too). */
static int kept_minmax(sl_op *op, const sl_row *row, const uint8_t *ns, sl_buf *e, int i,
                       int sign)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    const sl_agg *a = &pl->aggs.aggs[i];
    const void *vp;
    size_t vl = 8;
    int64_t key = 0;
    uint8_t kb[8];
    if (a->strval) {
        if (!sl_agg_str_value(a, row, &vp, &vl)) return SL_OK;
    } else {
        if (!sl_agg_minmax_value(a, row, &key)) return SL_OK;
        mm_key_put(kb, key);
        vp = kb;
    }
    kept_ns(st, ns, i, vp, vl);
    const void *val;
    size_t vlen;
    char serr[256];
    int rc = kept_get(op, st, &val, &vlen);
    if (rc == SL_ERR) return SL_ERR;
    int64_t c = rc == SL_OK && vlen == 8 ? sl_get_lei64(val) : 0;
    if (c == 0 && sign < 0) return SL_OK;
    c += sign;
    uint8_t cb[8];
    sl_put_lei64(cb, c);
    rc = c ? sl_kstate_put(op->kstate, st->sid_kept, st->kns.p, st->kns.len, cb, 8, serr,
                           sizeof serr)
           : sl_kstate_del(op->kstate, st->sid_kept, st->kns.p, st->kns.len, serr, sizeof serr);
    if (rc == SL_ERR) return kept_state_failed(op, serr);
    uint8_t *acc = sl_buf_u8(e) + WIN_ACC_OFF;
    int64_t cur;
    bool has = sl_agg_minmax_get(a, acc, &cur);
    if (sign > 0) {
        if (!a->strval && (!has || sl_agg_minmax_better(a, key, cur)))
            sl_agg_minmax_set(a, acc, true, key);
        return SL_OK;
    }
    if (c > 0 || !has) return SL_OK;
    if (a->strval) {
        if (entry_row(op, sl_buf_u8(e), e->len, st->keyv) != SL_OK) return SL_ERR;
        const sl_value *sv = &st->keyv[str_col(pl, i)];
        if (sv->isnull || sl_agg_str_cmp(vp, vl, sv->v.s.p, sv->v.s.len)) return SL_OK;
    } else if (cur != key) {
        return SL_OK;
    }
    /* the extremum's last copy went: the best of the values still held */
    kept_ns(st, ns, i, NULL, 0);
    sl_agg_kept_scan cs = {SL_AGG_COLLECT, sl_buf_u8(&st->kns), st->kns.len, &st->kscan};
    sl_buf_reset(&st->kscan);
    if (sl_kstate_scan_key(op->kstate, st->sid_kept, sl_agg_kept_scan_fn, &cs, serr,
                           sizeof serr) == SL_ERR)
        return kept_state_failed(op, serr);
    const uint8_t *b = sl_buf_u8(&st->kscan), *best = NULL;
    uint32_t blen = 0;
    int64_t bkey = 0;
    for (size_t pos = 0; pos < st->kscan.len; pos += sl_agg_kept_size(SL_AGG_COLLECT, b + pos)) {
        uint32_t tl = sl_get_le32(b + pos);
        const uint8_t *t = b + pos + 4;
        if (sl_get_lei64(t + tl) <= 0) continue;
        if (a->strval) {
            int cmp = best ? sl_agg_str_cmp(t, tl, best, blen) : 0;
            if (best && !(a->fn == SL_AGG_MAX ? cmp > 0 : cmp < 0)) continue;
        } else {
            if (tl != 8) continue;
            int64_t k = mm_key_get(t);
            if (best && !sl_agg_minmax_better(a, k, bkey)) continue;
            bkey = k;
        }
        best = t;
        blen = tl;
    }
    if (!a->strval) {
        sl_agg_minmax_set(a, acc, best != NULL, bkey);
        return SL_OK;
    }
    return str_set(op, e, i, best, blen);
}

/* A retraction reaching JSON item i in window ns: JSON_ARRAYAGG takes out
 * the earliest equal value (Flink's list remove), JSON_OBJECTAGG the key's
 * member when it is the same member (as the GROUP BY does). */
static int kept_json_retract(sl_op *op, const sl_row *row, const uint8_t *ns, int i)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    const sl_agg *a = &pl->aggs.aggs[i];
    const sl_value *x = &row->vals[a->col];
    char serr[256];
    sl_buf_reset(&st->kval);
    if (a->fn == SL_AGG_JSON_ARRAYAGG) {
        if (x->isnull && !a->null_on_null) return SL_OK; /* ABSENT ON NULL: never kept */
        if (x->isnull) sl_buf_put(&st->kval, "null", 4);
        else sl_fmt_json_value_dt(&st->kval, x, a->in_dt);
        kept_ns(st, ns, i, NULL, 0);
        sl_agg_kept_scan cs = {a->fn, sl_buf_u8(&st->kns), st->kns.len, &st->kscan};
        sl_buf_reset(&st->kscan);
        if (sl_kstate_scan_key(op->kstate, st->sid_kept, sl_agg_kept_scan_fn, &cs, serr,
                               sizeof serr) == SL_ERR)
            return kept_state_failed(op, serr);
        sl_agg_kept_index(a->fn, &st->kscan, &st->kidx); /* by sequence: the earliest first */
        const size_t *ix = (const size_t *)st->kidx.p;
        for (size_t k = 0; k < st->kidx.len / sizeof *ix; k++) {
            const uint8_t *en = sl_buf_u8(&st->kscan) + ix[k];
            if (sl_get_le32(en + 8) != st->kval.len || memcmp(en + 12, st->kval.p, st->kval.len))
                continue;
            kept_ns(st, ns, i, en, 8);
            if (sl_kstate_del(op->kstate, st->sid_kept, st->kns.p, st->kns.len, serr,
                              sizeof serr) == SL_ERR)
                return kept_state_failed(op, serr);
            break;
        }
        return SL_OK;
    }
    const sl_value *v = &row->vals[a->vcol];
    if (x->isnull || (v->isnull && !a->null_on_null)) return SL_OK; /* never kept */
    sl_fmt_json_value_dt(&st->kval, x, a->in_dt);
    sl_buf_putc(&st->kval, ':');
    if (v->isnull) sl_buf_put(&st->kval, "null", 4);
    else sl_fmt_json_value_dt(&st->kval, v, a->v_dt);
    kept_ns(st, ns, i, x->v.s.p, x->v.s.len);
    const void *val;
    size_t vlen;
    int rc = kept_get(op, st, &val, &vlen);
    if (rc == SL_ERR) return SL_ERR;
    if (rc != SL_OK || vlen != st->kval.len || memcmp(val, st->kval.p, vlen)) return SL_OK;
    if (sl_kstate_del(op->kstate, st->sid_kept, st->kns.p, st->kns.len, serr, sizeof serr) ==
        SL_ERR)
        return kept_state_failed(op, serr);
    return SL_OK;
}

/* Load the current key's entry of `sid` at ns into b: SL_OK, SL_DONE when
 * absent, SL_ERR with op->err set. */
static int state_load(sl_op *op, int sid, const uint8_t *ns, size_t nslen, sl_buf *b)
{
    const win_plan *pl = op->plan;
    const void *val;
    size_t vlen;
    char serr[256];
    int rc = sl_kstate_get(op->kstate, sid, ns, nslen, &val, &vlen, serr, sizeof serr);
    if (rc == SL_OK) {
        if (sid != ((win_state *)op->priv)->sid_sess && vlen < keyrow_off(pl))
            return sl_op_fail(op, "vertex '%s': damaged window state (%zu bytes)", pl->vid, vlen);
        if (sid != ((win_state *)op->priv)->sid_sess && !(*(const uint8_t *)val & WIN_AGG_LAYOUT))
            return sl_op_fail(op, "vertex '%s': the window state was written by an older Sluice, "
                              "whose accumulators are laid out differently; run the job without "
                              "restoring it", pl->vid);
        sl_buf_set(b, val, vlen);
        return SL_OK;
    }
    if (rc == SL_DONE) return SL_DONE;
    return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, serr);
}

static int state_store(sl_op *op, int sid, const uint8_t *ns, size_t nslen, const sl_buf *b)
{
    char serr[256];
    if (sl_kstate_put(op->kstate, sid, ns, nslen, b->p, b->len, serr, sizeof serr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': state: %s", ((const win_plan *)op->plan)->vid, serr);
    return SL_OK;
}

static int state_delete(sl_op *op, int sid, const uint8_t *ns, size_t nslen)
{
    char serr[256];
    if (sl_kstate_del(op->kstate, sid, ns, nslen, serr, sizeof serr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': state: %s", ((const win_plan *)op->plan)->vid, serr);
    return SL_OK;
}

/* Register (add = 1) or remove a timer for window ns of the current key. */
static void timer_set(sl_op *op, sl_time_domain d, int64_t time, const uint8_t *ns, int add)
{
    if (add) sl_op_timer_register(op, d, time, ns, WIN_NS_LEN);
    else sl_op_timer_delete(op, d, time, ns, WIN_NS_LEN);
}

/* ---- event-time and processing-time windows that do not merge ------------ */

static inline bool window_late(const win_plan *pl, const win_state *st, int64_t end, int64_t wm)
{
    return sat_add(win_due(st->tz, end), pl->lateness) <= wm;
}

/* The record's windows at time ts into st->wins, ascending by end. */
static int assign_windows(const win_plan *pl, win_state *st, int64_t ts)
{
    int n = 0;
    switch (pl->kind) {
    case WIN_TUMBLE: {
        int64_t s = window_start(ts, pl->offset, pl->size);
        st->wins[n++] = (win_range){s, s + pl->size};
        break;
    }
    case WIN_HOP: { /* starts: offset + the multiples of the slide in (ts - size, ts] */
        int64_t last = window_start(ts, pl->offset, pl->slide);
        int64_t first = window_start(ts - pl->size, pl->offset, pl->slide) + pl->slide;
        for (int64_t s = first; s <= last; s += pl->slide)
            st->wins[n++] = (win_range){s, s + pl->size};
        break;
    }
    case WIN_CUMULATE: {
        int64_t s = window_start(ts, pl->offset, pl->size);
        for (int64_t e = s + pl->slide; e <= s + pl->size; e += pl->slide)
            if (e > ts) st->wins[n++] = (win_range){s, e};
        break;
    }
    case WIN_SESSION: break;
    }
    SL_ASSERT(n <= st->wcap);
    return n;
}

/* DISTINCT aggregates: the record's value of each goes into window ns's
 * value set (namespace = window | aggregate index u8 | the value's bytes);
 * a value new to the set enters the accumulator acc. Over an insert-only
 * input sets only grow until the window is cleaned, and an entry's value
 * is empty; over retractions (sign -1 takes a copy out) it is the value's
 * i64 copies, and the value leaves acc with its last copy. */
static int distinct_add(sl_op *op, const sl_row *row, const uint8_t *ns, uint8_t *acc, int sign)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    char serr[256];
    for (int i = 0; i < pl->aggs.n; i++) {
        uint8_t tmp[8];
        const void *vp, *val;
        size_t vl, vlen;
        if (!sl_agg_distinct_value(&pl->aggs.aggs[i], row, tmp, &vp, &vl)) continue;
        size_t dl = WIN_NS_LEN + 1 + vl;
        sl_buf_reset(&st->dns);
        uint8_t *d = (uint8_t *)sl_buf_room(&st->dns, dl);
        memcpy(d, ns, WIN_NS_LEN);
        d[WIN_NS_LEN] = (uint8_t)i;
        if (vl) memcpy(d + WIN_NS_LEN + 1, vp, vl);
        sl_buf_added(&st->dns, dl);
        int rc = sl_kstate_get(op->kstate, st->sid_distinct, d, dl, &val, &vlen, serr, sizeof serr);
        if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, serr);
        if (pl->retract_input) {
            int64_t c = rc == SL_OK ? (vlen == 8 ? sl_get_lei64(val) : 1) : 0;
            if (c == 0 && sign < 0) continue; /* not held: ignored, as the GROUP BY does */
            uint8_t cb[8];
            sl_put_lei64(cb, c + sign);
            rc = c + sign ? sl_kstate_put(op->kstate, st->sid_distinct, d, dl, cb, 8, serr,
                                          sizeof serr)
                          : sl_kstate_del(op->kstate, st->sid_distinct, d, dl, serr, sizeof serr);
            if (rc == SL_ERR) return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, serr);
            if (c == 0 || c + sign == 0) sl_agg_distinct_apply(&pl->aggs, i, acc, row, sign);
            continue;
        }
        if (rc == SL_OK) continue; /* seen in this window */
        if (sl_kstate_put(op->kstate, st->sid_distinct, d, dl, "", 0, serr, sizeof serr) != SL_OK)
            return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, serr);
        sl_agg_distinct_apply(&pl->aggs, i, acc, row, 1);
    }
    return SL_OK;
}

/* Add the record to window w of the current key. */
static int add_to_window(sl_op *op, const sl_row *row, win_range w)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    int64_t wm = op->current_watermark;
    ns_encode(st->ns, w.start, w.end);
    int rc = state_load(op, st->sid_acc, st->ns, WIN_NS_LEN, &st->cur);
    if (rc == SL_ERR) return rc;
    bool fresh = rc == SL_DONE;
    if (fresh) entry_init(op, row, &st->cur);
    bool fired = sl_buf_u8(&st->cur)[0] & WIN_FIRED;
    int64_t wdue = win_due(st->tz, w.end);
    bool due = !pl->proctime && wdue <= wm;
    if (fired && emit_result(op, SL_KIND_UPDATE_BEFORE, w.start, w.end, sl_buf_u8(&st->cur),
                             st->cur.len) != SL_OK)
        return SL_ERR;
    if (acc_fold(pl, st, sl_buf_u8(&st->cur) + WIN_ACC_OFF, row) != SL_OK) return udf_failed(op);
    int sign = row_retracts(row) ? -1 : 1;
    if (pl->aggs.has_strval && sign > 0 && str_fold(op, &st->cur, row, NULL, 0) != SL_OK)
        return SL_ERR;
    if (pl->aggs.has_distinct || pl->kept) {
        uint8_t dns[WIN_NS_LEN];
        ns_encode(dns, w.start, w.end);
        if (pl->aggs.has_distinct &&
            distinct_add(op, row, dns, sl_buf_u8(&st->cur) + WIN_ACC_OFF, sign) != SL_OK)
            return SL_ERR;
        if (pl->kept && kept_add(op, row, dns, &st->cur, sign) != SL_OK) return SL_ERR;
    }
    if (due) {
        rc = emit_result(op, fired ? SL_KIND_UPDATE_AFTER : SL_KIND_INSERT, w.start, w.end,
                         sl_buf_u8(&st->cur), st->cur.len);
        if (rc != SL_OK) return rc;
        sl_buf_u8(&st->cur)[0] |= WIN_FIRED;
    }
    /* emit may have reached other code; the namespace buffer is ours */
    ns_encode(st->ns, w.start, w.end);
    if (state_store(op, st->sid_acc, st->ns, WIN_NS_LEN, &st->cur) != SL_OK) return SL_ERR;
    if (!fresh) return SL_OK;
    if (pl->proctime) {
        timer_set(op, SL_TIME_PROCESSING, wdue, st->ns, 1);
        return SL_OK;
    }
    if (!due) timer_set(op, SL_TIME_EVENT, wdue, st->ns, 1);
    if (pl->lateness > 0)
        timer_set(op, SL_TIME_EVENT, sat_add(wdue, pl->lateness), st->ns, 1);
    return SL_OK;
}

/* ---- session windows ------------------------------------------------------ */

static int sessions_store(sl_op *op)
{
    win_state *st = op->priv;
    if (st->list.len == 0) return state_delete(op, st->sid_sess, NULL, 0);
    return state_store(op, st->sid_sess, NULL, 0, &st->list);
}

/* A row too late for every window it belongs to: to the late side output
 * when the job declares one, else dropped and counted. */
static int late_row(sl_op *op, const sl_row *row)
{
    win_state *st = op->priv;
    if (st->partial) { /* a global phase: every row of the partial */
        op->metrics.late_dropped += (uint64_t)sl_agg_rows(st->partial);
        return SL_OK;
    }
    /* emit borrows the row and only reads it */
    int rc = sl_op_emit_to(op, ((win_state *)op->priv)->late_out, (sl_row *)row);
    if (rc == SL_DONE) {
        op->metrics.late_dropped++;
        return SL_OK;
    }
    return rc;
}

static int add_to_session(sl_op *op, const sl_row *row, int64_t ts)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    int64_t wm = op->current_watermark;
    /* processing time: ts is the clock at arrival, nothing is late, the
     * session fires (and is forgotten) when the clock reaches its end - 1 */
    sl_time_domain dom = pl->proctime ? SL_TIME_PROCESSING : SL_TIME_EVENT;
    int rc = state_load(op, st->sid_sess, NULL, 0, &st->list);
    if (rc == SL_ERR) return rc;
    if (rc == SL_DONE) sl_buf_reset(&st->list);
    if (st->list.len % 16 != 0)
        return sl_op_fail(op, "vertex '%s': damaged session list (%zu bytes)", pl->vid,
                          st->list.len);
    size_t nsess = st->list.len / 16;

    /* the hull of the row's own window and every session it touches */
    win_range m = {ts, ts + pl->gap};
    int nhit = 0;
    win_range same = {0, 0};
    for (size_t i = 0; i < nsess; i++) {
        const uint8_t *lp = sl_buf_u8(&st->list) + 16 * i;
        int64_t s = get_i64(lp), e = get_i64(lp + 8);
        if (s <= ts + pl->gap && e >= ts) {
            nhit++;
            same = (win_range){s, e};
            if (s < m.start) m.start = s;
            if (e > m.end) m.end = e;
        }
    }
    if (!pl->proctime && window_late(pl, st, m.end, wm)) return late_row(op, row);
    if (nhit == 1 && same.start == m.start && same.end == m.end)
        return add_to_window(op, row, m); /* inside one session: no merge */

    /* merge: a fresh entry absorbs every touched session */
    uint8_t mns[WIN_NS_LEN];
    ns_encode(mns, m.start, m.end);
    entry_init(op, row, &st->cur);
    size_t keep = 0;
    for (size_t i = 0; i < nsess; i++) {
        uint8_t *pair = sl_buf_u8(&st->list) + 16 * i;
        int64_t s = get_i64(pair), e = get_i64(pair + 8);
        if (!(s <= ts + pl->gap && e >= ts)) {
            if (keep != i) memmove(sl_buf_u8(&st->list) + 16 * keep, pair, 16);
            keep++;
            continue;
        }
        ns_encode(st->ns, s, e);
        rc = state_load(op, st->sid_acc, st->ns, WIN_NS_LEN, &st->other);
        if (rc == SL_ERR) return rc;
        if (rc == SL_OK) {
            if ((sl_buf_u8(&st->other)[0] & WIN_FIRED) &&
                emit_result(op, SL_KIND_DELETE, s, e, sl_buf_u8(&st->other), st->other.len) !=
                    SL_OK)
                return SL_ERR;
            if (sl_agg_merge(&pl->aggs, sl_buf_u8(&st->cur) + WIN_ACC_OFF,
                             sl_buf_u8(&st->other) + WIN_ACC_OFF) != SL_OK)
                return udf_failed(op);
            if (pl->aggs.has_strval &&
                str_fold(op, &st->cur, NULL, sl_buf_u8(&st->other), st->other.len) != SL_OK)
                return SL_ERR;
            ns_encode(st->ns, s, e);
            if (state_delete(op, st->sid_acc, st->ns, WIN_NS_LEN) != SL_OK) return SL_ERR;
            if (pl->kept && ns_clear(op, st->sid_kept, st->ns, mns) != SL_OK) return SL_ERR;
        }
        int64_t edue = win_due(st->tz, e);
        timer_set(op, dom, edue, st->ns, 0);
        if (pl->lateness > 0)
            timer_set(op, SL_TIME_EVENT, sat_add(edue, pl->lateness), st->ns, 0);
    }
    sl_buf_truncate(&st->list, keep * 16);
    uint8_t *np = (uint8_t *)sl_buf_room(&st->list, 16);
    put_i64(np, m.start);
    put_i64(np + 8, m.end);
    sl_buf_added(&st->list, 16);
    if (sessions_store(op) != SL_OK) return SL_ERR;

    if (acc_fold(pl, st, sl_buf_u8(&st->cur) + WIN_ACC_OFF, row) != SL_OK)
        return udf_failed(op);
    int sign = row_retracts(row) ? -1 : 1;
    if (pl->aggs.has_strval && sign > 0 && str_fold(op, &st->cur, row, NULL, 0) != SL_OK)
        return SL_ERR;
    if (pl->kept && kept_add(op, row, mns, &st->cur, sign) != SL_OK) return SL_ERR;
    int64_t mdue = win_due(st->tz, m.end);
    bool due = !pl->proctime && mdue <= wm;
    if (due) {
        if (emit_result(op, SL_KIND_INSERT, m.start, m.end, sl_buf_u8(&st->cur), st->cur.len) !=
            SL_OK)
            return SL_ERR;
        sl_buf_u8(&st->cur)[0] |= WIN_FIRED;
    }
    ns_encode(st->ns, m.start, m.end);
    if (state_store(op, st->sid_acc, st->ns, WIN_NS_LEN, &st->cur) != SL_OK) return SL_ERR;
    if (!due) timer_set(op, dom, mdue, st->ns, 1);
    if (pl->lateness > 0)
        timer_set(op, SL_TIME_EVENT, sat_add(mdue, pl->lateness), st->ns, 1);
    return SL_OK;
}

/* Drop [start, end) from the current key's session list. */
static int session_forget(sl_op *op, int64_t start, int64_t end)
{
    win_state *st = op->priv;
    int rc = state_load(op, st->sid_sess, NULL, 0, &st->list);
    if (rc == SL_ERR) return rc;
    if (rc == SL_DONE) return SL_OK;
    size_t n = st->list.len / 16, keep = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *pair = sl_buf_u8(&st->list) + 16 * i;
        if (get_i64(pair) == start && get_i64(pair + 8) == end) continue;
        if (keep != i) memmove(sl_buf_u8(&st->list) + 16 * keep, pair, 16);
        keep++;
    }
    sl_buf_truncate(&st->list, keep * 16);
    return sessions_store(op);
}

/* ---- sliced HOP and CUMULATE --------------------------------------------- */

/* The end of the last window that contains slice [ss, se). */
static int64_t slice_last_end(const win_plan *pl, int64_t ss, int64_t se)
{
    if (pl->kind == WIN_HOP) return se + pl->size - pl->slide;
    return window_start(ss, pl->offset, pl->size) + pl->size;
}

/* The start of the window ending at `end` that contains slice ss. */
static int64_t slice_window_start(const win_plan *pl, int64_t ss, int64_t end)
{
    return pl->kind == WIN_HOP ? end - pl->size : window_start(ss, pl->offset, pl->size);
}

static int add_to_slice(sl_op *op, const sl_row *row, int64_t ts)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    int64_t wm = op->current_watermark;
    int64_t ss = window_start(ts, pl->offset, pl->slide), se = ss + pl->slide;
    int64_t last = slice_last_end(pl, ss, se);
    if (window_late(pl, st, last, wm)) return late_row(op, row);
    ns_encode(st->ns, ss, se);
    int rc = state_load(op, st->sid_acc, st->ns, WIN_NS_LEN, &st->cur);
    if (rc == SL_ERR) return rc;
    bool fresh = rc == SL_DONE;
    if (fresh) entry_init(op, row, &st->cur);
    if (acc_fold(pl, st, sl_buf_u8(&st->cur) + WIN_ACC_OFF, row) != SL_OK) return udf_failed(op);
    if (pl->aggs.has_strval && str_fold(op, &st->cur, row, NULL, 0) != SL_OK) return SL_ERR;
    if (state_store(op, st->sid_acc, st->ns, WIN_NS_LEN, &st->cur) != SL_OK) return SL_ERR;
    if (!fresh) return SL_OK; /* its window's timer, or the chain, is already set */
    /* the first window containing the slice that is not late yet (those
     * before it fired without this row, as they must) */
    int64_t end = se;
    if (!st->tz && end - 1 <= wm) {
        int64_t k = (wm + 2 - se + pl->slide - 1) / pl->slide;
        end = se + k * pl->slide;
    }
    while (st->tz && win_due(st->tz, end) <= wm) end += pl->slide; /* < last: not late */
    SL_ASSERT(end <= last);
    uint8_t wns[WIN_NS_LEN];
    ns_encode(wns, slice_window_start(pl, ss, end), end);
    return sl_op_timer_register(op, SL_TIME_EVENT, win_due(st->tz, end), wns, WIN_NS_LEN);
}

/* The timer of window [start, end) of the current key: merge its slices,
 * emit, chain the next window's timer and drop the slices no window needs. */
static int fire_sliced(sl_op *op, int64_t start, int64_t end)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    int found = 0, later = 0;
    for (int64_t ss = start; ss < end; ss += pl->slide) {
        ns_encode(st->ns, ss, ss + pl->slide);
        int rc = state_load(op, st->sid_acc, st->ns, WIN_NS_LEN, found ? &st->other : &st->cur);
        if (rc == SL_ERR) return rc;
        if (rc == SL_DONE) continue;
        if (found) {
            if (sl_agg_merge(&pl->aggs, sl_buf_u8(&st->cur) + WIN_ACC_OFF,
                             sl_buf_u8(&st->other) + WIN_ACC_OFF) != SL_OK)
                return udf_failed(op);
            if (pl->aggs.has_strval &&
                str_fold(op, &st->cur, NULL, sl_buf_u8(&st->other), st->other.len) != SL_OK)
                return SL_ERR;
        }
        found++;
        if (ss > start) later = 1;
    }
    if (!found) return SL_OK; /* nothing left (restored from an older chain) */
    if (emit_result(op, SL_KIND_INSERT, start, end, sl_buf_u8(&st->cur), st->cur.len) != SL_OK)
        return SL_ERR;
    uint8_t wns[WIN_NS_LEN];
    if (pl->kind == WIN_HOP) {
        ns_encode(st->ns, start, start + pl->slide);
        if (state_delete(op, st->sid_acc, st->ns, WIN_NS_LEN) != SL_OK) return SL_ERR;
        if (!later) return SL_OK;
        ns_encode(wns, start + pl->slide, end + pl->slide);
        return sl_op_timer_register(op, SL_TIME_EVENT, win_due(st->tz, end + pl->slide), wns,
                                    WIN_NS_LEN);
    }
    if (end < start + pl->size) { /* CUMULATE: the next, larger window of the period */
        ns_encode(wns, start, end + pl->slide);
        return sl_op_timer_register(op, SL_TIME_EVENT, win_due(st->tz, end + pl->slide), wns,
                                    WIN_NS_LEN);
    }
    for (int64_t ss = start; ss < end; ss += pl->slide) {
        ns_encode(st->ns, ss, ss + pl->slide);
        if (state_delete(op, st->sid_acc, st->ns, WIN_NS_LEN) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

/* ---- callbacks ---------------------------------------------------------------- */

static int win_process(sl_op *op, int input, sl_row *row)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    if (SL_UNLIKELY(row->kind != SL_KIND_INSERT && !pl->retract_input))
        return sl_op_fail(op, "vertex '%s': window aggregation takes an insert-only stream, got "
                          "a %s row", pl->vid, sl_rowkind_short(row->kind));
    int64_t ts;
    if (pl->proctime) {
        ts = sl_now_ms();
        if (st->tz) ts = sl_tz_to_local(st->tz, ts);
    } else {
        const sl_value *tv = &row->vals[pl->tcol];
        if (SL_UNLIKELY(tv->isnull))
            return sl_op_fail(op, "vertex '%s': time-column '%s' is NULL in a row; event-time "
                              "windows need a timestamp on every row", pl->vid, pl->tcolname);
        ts = tv->v.i;
        if (pl->global) { /* the slice's end: its last ms stands for its rows */
            const sl_value *av = &row->vals[pl->acccol];
            if (SL_UNLIKELY(av->isnull || av->v.s.len != pl->aggs.size))
                return sl_op_fail(op, "vertex '%s': a partial accumulator of %u bytes where %zu "
                                  "were expected (the local phase plans other aggregates)",
                                  pl->vid, av->isnull ? 0u : av->v.s.len, pl->aggs.size);
            st->partial = (const uint8_t *)av->v.s.p;
            ts--; /* a local slice end when windows align in a zone */
        } else if (st->tz) {
            ts = sl_tz_to_local(st->tz, ts); /* windows align in the zone */
        }
    }
    if (SL_UNLIKELY(ts < -WIN_TS_LIMIT || ts > WIN_TS_LIMIT))
        return sl_op_fail(op, "vertex '%s': event time %lld ms is out of the range windows "
                          "support (+-2^62 ms)", pl->vid, (long long)ts);
    st->keyrow_ok = 0; /* the runtime has set the row's key */
    if (pl->kind == WIN_SESSION) return add_to_session(op, row, ts);
    if (pl->sliced) return add_to_slice(op, row, ts);

    int n = assign_windows(pl, st, ts);
    bool kept = false;
    for (int i = 0; i < n; i++) {
        if (!pl->proctime && window_late(pl, st, st->wins[i].end, op->current_watermark)) continue;
        kept = true;
        if (add_to_window(op, row, st->wins[i]) != SL_OK) return SL_ERR;
    }
    if (!kept) return late_row(op, row);
    return SL_OK;
}

/* A timer of window ns for the timer's key: fire, clean up, or both. */
static int win_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *tns,
                        size_t nslen)
{
    const win_plan *pl = op->plan;
    win_state *st = op->priv;
    int64_t start, end;
    SL_UNUSED(domain);
    if (ns_decode(tns, nslen, &start, &end) != SL_OK)
        return sl_op_fail(op, "vertex '%s': damaged window timer", pl->vid);
    if (pl->sliced) return fire_sliced(op, start, end);
    uint8_t ns[WIN_NS_LEN];
    memcpy(ns, tns, WIN_NS_LEN);
    int rc = state_load(op, st->sid_acc, ns, WIN_NS_LEN, &st->cur);
    if (rc == SL_ERR) return rc;
    if (rc == SL_DONE) return SL_OK; /* merged away or already cleaned */
    int64_t max_ts = win_due(st->tz, end);
    int64_t cleanup = pl->proctime ? max_ts : sat_add(max_ts, pl->lateness);
    if (!(sl_buf_u8(&st->cur)[0] & WIN_FIRED) && time >= max_ts) {
        if (emit_result(op, SL_KIND_INSERT, start, end, sl_buf_u8(&st->cur), st->cur.len) != SL_OK)
            return SL_ERR;
        sl_buf_u8(&st->cur)[0] |= WIN_FIRED;
    }
    if (time >= cleanup) {
        if (state_delete(op, st->sid_acc, ns, WIN_NS_LEN) != SL_OK) return SL_ERR;
        if (ns_clear(op, st->sid_distinct, ns, NULL) != SL_OK ||
            ns_clear(op, st->sid_kept, ns, NULL) != SL_OK)
            return SL_ERR;
        if (pl->kind == WIN_SESSION) return session_forget(op, start, end);
        return SL_OK;
    }
    return state_store(op, st->sid_acc, ns, WIN_NS_LEN, &st->cur);
}

/* Every input ended: nothing more can arrive. Event-time windows have
 * fired with the maximum watermark the runtime delivered first; processing-
 * time windows fire now. */
static int win_end_input(sl_op *op, int input)
{
    const win_plan *pl = op->plan;
    if (pl->proctime) return sl_rt_fire_proc(op, INT64_MAX);
    return SL_OK;
}

static const sl_op_option win_options[] = {
    {"time-column", SL_CT_STRING, NULL, NULL,
     "Event-time column (rowtime) the operator reads."},
    {"window", SL_CT_JSON, NULL, NULL,
     "The window: {\"type\": TUMBLE|HOP|CUMULATE|SESSION, \"size\", ...}."},
    {"group-by", SL_CT_JSON, NULL, NULL,
     "Grouping columns: a list of names."},
    {"aggregates", SL_CT_JSON, NULL, NULL,
     "Aggregate calls: a list of {\"name\", \"fn\", \"arg\", ...}."},
    {"allowed-lateness", SL_CT_STRING, NULL, NULL,
     "How long after the watermark passes a window's end late rows still update it."},
    {"time", SL_CT_STRING, NULL, NULL,
     "Time attribute: event (a column) or processing time."},
    {"phase", SL_CT_STRING, NULL, NULL,
     "one, local or global: the phase of a two-phase aggregation."},
    {"input-changelog", SL_CT_STRING, NULL, NULL,
     "What the input carries: insert-only or a changelog (retractions)."},
    SL_WINDOW_ZONE_OPTIONS,
    SL_AGG_FUNCTIONS_OPTION,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_window = {
    .abi = SL_OP_ABI_VERSION,
    .name = "window",
    .flags = SL_OPF_KEYED,
    .options = win_options,
    .plan = win_plan_new,
    .plan_free = win_plan_free,
    .open = win_open,
    .process = win_process,
    .end_input = win_end_input,
    .on_timer = win_on_timer,
    .close = win_close,
};
