/*
 * over_aggregate.c -- Flink's OVER aggregation: every input row goes out
 * once, with the values of aggregates over a frame of the rows of its
 * partition that precede it in time order and itself:
 *
 *     agg(x) OVER (PARTITION BY k ORDER BY ts
 *                  ROWS|RANGE BETWEEN n|INTERVAL|UNBOUNDED PRECEDING AND CURRENT ROW)
 *
 * Keyed by the partition columns (none: one global partition, which the
 * planner runs at parallelism 1). The aggregates are operators/agg.c's
 * (COUNT, SUM, MIN, MAX, AVG, also DISTINCT, with FILTER), the same
 * accumulator as `window` and `group_aggregate`; ROW_NUMBER() is the row's
 * position in its partition; RANK() and DENSE_RANK() (the default RANGE
 * frame only) its rank among the partition's order times so far, peers
 * sharing it; FIRST_VALUE(c) and LAST_VALUE(c) the first and last non-NULL
 * value of c in the frame (Flink's FirstValue/LastValueAggFunction); LAG(c,
 * n, d) -- UNBOUNDED frames only, as in Flink -- the value of c n rows before
 * the last row added to the frame (with RANGE peers: the last peer), else
 * column d's value of the row or NULL; LISTAGG([DISTINCT] c[, 'sep']) the
 * frame's non-NULL values of c in the order they entered it (DISTINCT: each
 * value once, in the order its copy entered when the frame had none, as
 * Flink's distinct view feeds ListAggWithRetractAggFunction). Output: the
 * input's columns, then one per aggregate; insert-only.
 *
 * Event time ("time": "event"): a row is held in keyed state until the
 * watermark passes its time, so rows are aggregated in time order whatever
 * order they arrive in; a row whose time the watermark has already passed
 * is late: dropped and counted in numLateRecordsDropped. Processing time: a
 * row is aggregated as it arrives, at the wall clock's time.
 *
 * State, version 2 (per key; version 1's savepoints -- one entry per held
 * row -- are refused on restore with a message saying so):
 *   "over-key" (no namespace), the meta value: a fixed part of pl->metalen
 *     bytes -- i64 rows emitted (ROW_NUMBER), i64 clean-up timer armed (0/1)
 *     and its time, i64 the frame's last time, i64 the earliest held time,
 *     i64 the frame's first time, i64 frame head and tail (record numbers),
 *     the running accumulator (agg.c's layout), i64 per value function
 *     (unbounded: FIRST_VALUE/LAST_VALUE set, LAG values added; bounded
 *     FIRST_VALUE/LAST_VALUE: 1 + the record number holding the value, 0
 *     none) -- then u32 tail chunk length, u32 held rows length, the frame's
 *     tail chunk and the held rows: records of u32 row length, i64 time and
 *     the encoded row, in arrival order;
 *   "over-frame" (namespace: u64 big-endian chunk number), bounded frames
 *     only: the rows in the frame, a FIFO numbered head .. tail - 1 in the
 *     order they entered it (time, then arrival); record i is in chunk
 *     i / OV_CHUNK, which is its own entry once full and the meta value's
 *     tail chunk before. A frame record keeps only the columns the
 *     aggregates read (others NULL). An emptied frame starts again at 0;
 *   "over-values" (u16 function, u32 slot): an unbounded frame's first /
 *     last value and LAG's ring of its last n + 1 values; its LISTAGG's
 *     list text (u16 LA_NS | the LISTAGG's index, u32 0); its STRING
 *     MIN/MAX's extremum (u16 SX_NS | the aggregate's index, u32 0: u8 1 and
 *     the bytes, or u8 0 for none yet);
 *   "over-distinct" (u16 item, the value's bytes), DISTINCT aggregates,
 *     COLLECT, MIN/MAX of a STRING over a bounded frame and LISTAGG
 *     (DISTINCT): the i64 number of the frame's rows holding the value
 *     (bounded LISTAGG (DISTINCT): then i64 the frame record number of the
 *     copy that brought it in, the list's order; its item LA_NS | index); a
 *     DISTINCT value is folded into the accumulator at its first copy and
 *     out when its last copy leaves a bounded frame (the entry then goes),
 *     so the state is the frame's distinct values (an UNBOUNDED frame's: all
 *     of them). A bounded frame's STRING MIN/MAX is the least / greatest of
 *     its item's entries (the string's bytes), read by a scan of the key's
 *     entries for each row emitted; an UNBOUNDED frame's keeps only its
 *     extremum ("over-values"), and its entries here -- as builds before
 *     2026-12-08 wrote them -- are read into that at the key's next row
 *     and deleted. A bounded frame's LISTAGG without DISTINCT is read from
 *     the frame's records.
 * RANK() and DENSE_RANK() keep two i64 slots each among the value
 * functions' in the meta value: the last order time and its rank.
 * Ids 0 and 1 ("over-rows", "over-meta") are version 1's, registered only
 * to recognise its savepoints.
 *
 * A key has one event-time timer at its earliest held time; when it fires
 * every held row the watermark has passed goes out, time by time:
 *   - UNBOUNDED PRECEDING: the rows go into the accumulator (RANGE: all rows
 *     of T first, so peers share their values; ROWS: one at a time) and
 *     leave the state -- only the accumulator stays;
 *   - RANGE p PRECEDING: rows of time < T - p leave the frame (their rows
 *     retracted from the accumulator), the rows of T enter it together and
 *     go out with its values; one clean-up timer per key (event or
 *     processing time, as the order), at the frame's last time + p + 1,
 *     empties the frame of a key that went quiet;
 *   - ROWS n PRECEDING: each row enters the frame, goes out with it, and
 *     the frame keeps the last n rows.
 * COUNT, SUM, AVG and user functions that declare retract are retracted
 * (agg.c); MIN and MAX are rebuilt from the frame's records only when a row
 * holding the extremum leaves; with a user function that declares no
 * retract the whole accumulator is rebuilt from the frame whenever rows
 * leave it (pl->rebuild);
 * FIRST_VALUE moves to the next non-NULL record when its record leaves,
 * LAST_VALUE becomes NULL. So a row costs its key's meta value read and
 * written (with the rows held for it, bounded by the watermark's delay)
 * and the frame records entering and leaving, not the frame. Everything is
 * keyed state and timers: snapshotted, restored and re-split by key group
 * by the runtime on either backend; per-record work uses buffers reused
 * across records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agg.h"
#include "buf.h"
#include "udf_sig.h"
#include "bytes.h"
#include "jobgraph.h"
#include "operator.h"

#define OV_TNS 8        /* namespace of a frame chunk: its number */
#define OV_CHUNK 32     /* frame records per chunk entry */
#define OV_REC 12       /* a frame record's header: u32 row length, i64 time */
#define OV_META 64      /* i64 rows emitted, clean-up armed, its time, the frame's last
                           time, the earliest held time, the frame's first time,
                           head, tail */

/* One output column after the input's: an aggregate of the list, ROW_NUMBER,
 * or a value function of column col. */
enum { OUT_AGG, OUT_ROWNUM, OUT_RANK, OUT_DENSE, OUT_FIRST, OUT_LAST, OUT_LAG, OUT_LISTAGG };

/* "over-distinct" and "over-values" item numbers of a LISTAGG (its index
 * among them | LA_NS), and of an UNBOUNDED frame's STRING MIN/MAX extremum
 * ("over-values", the aggregate's index | SX_NS): above any aggregate's or
 * value function's. */
#define LA_NS 0x8000
#define SX_NS 0x4000

typedef struct ov_out {
    int kind;
    int agg;            /* OUT_AGG: index in aggs */
    int col;            /* FIRST_VALUE, LAST_VALUE, LAG: the input column */
    int dcol;           /* LAG: the default's column, -1 = NULL */
    int64_t offset;     /* LAG */
    int vi;             /* value functions: index among them (meta slot, state namespace);
                           LISTAGG: its index | LA_NS */
    int fcol;           /* LISTAGG: its FILTER column, -1 none */
    bool distinct;      /* LISTAGG (DISTINCT ...) */
    char *sep;          /* LISTAGG: the separator */
    size_t seplen;
} ov_out;

typedef struct ov_plan {
    char *vid;
    int npart;
    int part[SL_MAX_KEY_COLS];
    int tcol;           /* ORDER BY column (event time: its value orders the rows) */
    int proc;           /* processing time */
    int rows;           /* ROWS frame (else RANGE) */
    int64_t preceding;  /* rows or ms; -1 = UNBOUNDED */
    sl_agg_list aggs;
    int nout;
    ov_out *outs;
    int nval;           /* value functions */
    size_t metalen;     /* OV_META + accumulator + 8 per value function */
    uint8_t *need;      /* per input column: a frame record keeps it (aggregate
                           argument, FILTER, FIRST_VALUE/LAST_VALUE column) */
    bool has_minmax;    /* some aggregate is MIN or MAX (not of a STRING) */
    bool counted;       /* some item counts its values in "over-distinct": DISTINCT,
                           COLLECT, MIN/MAX of a STRING */
    bool rebuild;       /* some user function declares no retract: a bounded frame's
                           accumulator is rebuilt from its rows when rows leave it */
    int nlist;          /* LISTAGG outputs */
    bool list_counted;  /* some LISTAGG (DISTINCT) counts its values in "over-distinct" */
} ov_plan;

typedef struct ov_state {
    int sid_old_rows, sid_old_meta; /* state version 1's, only to refuse its savepoints */
    int sid_vals, sid_held, sid_frame, sid_meta, sid_dist;
    uint8_t *meta;      /* the key's meta value's fixed part (reused) */
    uint8_t *meta0;     /* as read, to tell whether a timer changed it */
    uint8_t *tailc;     /* its frame tail chunk (reused) */
    size_t tlen, tcap;
    uint8_t *pend;      /* its held rows (reused) */
    size_t plen, pcap;
    uint8_t *wbuf;      /* the meta value being written (reused) */
    size_t wcap;
    uint8_t *held;      /* the held rows being emitted, in time order (reused) */
    size_t heldlen, heldcap;
    size_t *due;        /* offsets of due held rows in pend (reused) */
    size_t duecap;
    uint8_t *scratch;   /* an accumulator for a MIN/MAX rebuild */
    uint8_t *enc;       /* one encoded row (reused) */
    size_t enccap;
    sl_value *vals;     /* a decoded held row */
    sl_value *fvals;    /* a decoded frame record */
    sl_value *pvals;    /* a row projected to what a frame record keeps */
    sl_value *outv;     /* an output row: input columns then results */
    sl_value *res;      /* aggregate results */
    sl_value *vres;     /* per output: a value function's value in the frame */
    char **vcopy;       /* per output: its bytes, read from state (reused) */
    size_t *vcap;
    uint8_t *venc;      /* one encoded value (reused) */
    size_t venccap;
    uint8_t *dns;       /* a DISTINCT value's namespace (reused) */
    size_t dnscap;
    struct ov_dval *dout; /* DISTINCT values of the rows leaving a frame (reused) */
    size_t ndout, doutcap;
    uint8_t *dbytes;    /* ... their bytes (reused) */
    size_t dblen, dbcap;
    sl_buf *coll;       /* per aggregate: a COLLECT's MULTISET bytes (reused) */
    sl_buf cscan, cidx; /* a COLLECT's scanned values and their order (reused) */
    sl_buf lbuf;        /* a LISTAGG's list being built (reused) */
} ov_state;

/* A DISTINCT item's value of a row leaving the frame, copied out of the
 * frame record (which is borrowed from state) before its count is read. */
typedef struct ov_dval {
    int item;           /* an aggregate's index, or -1 - a LISTAGG output's */
    sl_value v;         /* v.s.p an offset into dbytes until the walk ends */
} ov_dval;

static const uint8_t no_ns[1];

/* ---- plan ---------------------------------------------------------------------- */

static void ov_plan_free(void *p)
{
    ov_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    sl_agg_list_free(&pl->aggs);
    for (int i = 0; pl->outs && i < pl->nout; i++) free(pl->outs[i].sep);
    free(pl->outs);
    free(pl->need);
    free(pl);
}

/* "ROW_NUMBER()", "FIRST_VALUE(c)", "LAST_VALUE(c)", "LAG(c[, n[, d]])", then
 * "[AS] alias": its kind, its arguments (column names unquoted, or a number)
 * and the alias (NULL: none). 0 when text is none of them (an aggregate). */
static int parse_valfn(const char *text, int *kind, char args[3][256], int *nargs,
                       const char **alias)
{
    static const struct {
        const char *name;
        int kind;
    } fns[] = {{"ROW_NUMBER", OUT_ROWNUM}, {"RANK", OUT_RANK},        {"DENSE_RANK", OUT_DENSE},
               {"FIRST_VALUE", OUT_FIRST}, {"LAST_VALUE", OUT_LAST}, {"LAG", OUT_LAG}};
    const char *s = text;
    while (*s == ' ') s++;
    size_t f = 0;
    for (; f < sizeof fns / sizeof fns[0]; f++) {
        size_t l = strlen(fns[f].name);
        if (!strncasecmp(s, fns[f].name, l) && (s[l] == '(' || s[l] == ' ')) break;
    }
    if (f == sizeof fns / sizeof fns[0]) return 0;
    *kind = fns[f].kind;
    s += strlen(fns[f].name);
    while (*s == ' ') s++;
    if (*s++ != '(') return 0;
    *nargs = 0;
    while (*s == ' ') s++;
    while (*s && *s != ')') {
        if (*nargs == 3) return 0;
        char *a = args[(*nargs)++];
        size_t n = 0;
        if (*s == '`') { /* `quoted`, `` for a backquote */
            for (s++; *s && !(*s == '`' && s[1] != '`'); s++) {
                if (*s == '`') s++;
                if (n < 255) a[n++] = *s;
            }
            if (*s++ != '`') return 0;
        } else {
            while (*s && *s != ',' && *s != ')' && *s != ' ')
                if (n < 255) a[n++] = *s++;
                else s++;
        }
        a[n] = '\0';
        while (*s == ' ') s++;
        if (*s == ',') s++;
        while (*s == ' ') s++;
    }
    if (*s++ != ')') return 0;
    while (*s == ' ') s++;
    if (!strncasecmp(s, "AS ", 3)) s += 3;
    while (*s == ' ') s++;
    *alias = *s ? s : NULL;
    return 1;
}

/* The value functions' arguments into o (the output's type is its column's). */
static int valfn_args(ov_plan *pl, const sl_schema *in, ov_out *o, char args[3][256], int nargs,
                      int item, char *err, size_t errlen)
{
    static const char *const names[] = {"",           "ROW_NUMBER", "RANK", "DENSE_RANK",
                                        "FIRST_VALUE", "LAST_VALUE", "LAG"};
    const char *fn = names[o->kind];
    bool nullary = o->kind == OUT_ROWNUM || o->kind == OUT_RANK || o->kind == OUT_DENSE;
    int want_lo = nullary ? 0 : 1, want_hi = o->kind == OUT_LAG ? 3 : want_lo;
    if (nargs < want_lo || nargs > want_hi)
        return sl_seterr(err, errlen, "vertex '%s': aggregate %d: %s takes %d%s argument%s",
                         pl->vid, item, fn, want_lo, want_hi > want_lo ? " to 3" : "",
                         want_hi == 1 ? "" : "s");
    o->dcol = -1;
    o->offset = 1;
    if (o->kind == OUT_ROWNUM) return SL_OK;
    if (nullary) { /* RANK, DENSE_RANK: Flink's default frame only (the planner's check) */
        if (pl->rows || pl->preceding >= 0)
            return sl_seterr(err, errlen, "vertex '%s': aggregate %d: %s needs the frame RANGE "
                             "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", pl->vid, item, fn);
        o->vi = pl->nval;
        pl->nval += 2; /* two meta slots: the last order time, the rank */
        return SL_OK;
    }
    o->col = sl_schema_find(in, args[0]);
    if (o->col < 0)
        return sl_seterr(err, errlen, "vertex '%s': aggregate %d: %s(%s): no such column",
                         pl->vid, item, fn, args[0]);
    if (!sl_type_is_classic(in->fields[o->col].type) || sl_dtype_has_nanos(in->fields[o->col].dt))
        return sl_seterr(err, errlen, "vertex '%s': aggregate %d: %s(%s): a column of type %s "
                         "is not supported yet", pl->vid, item, fn, args[0],
                         in->fields[o->col].dt->text);
    if (nargs >= 2) {
        char *end;
        long long n = strtoll(args[1], &end, 10);
        if (end == args[1] || *end || n < 0 || n > 10000)
            return sl_seterr(err, errlen, "vertex '%s': aggregate %d: LAG's offset must be a "
                             "number of rows from 0 to 10000, not '%s'", pl->vid, item, args[1]);
        o->offset = n;
    }
    if (nargs == 3) {
        o->dcol = sl_schema_find(in, args[2]);
        sl_type a = in->fields[o->col].type, d = o->dcol < 0 ? a : in->fields[o->dcol].type;
        bool ints = (a == SL_T_INT || a == SL_T_BIGINT) && (d == SL_T_INT || d == SL_T_BIGINT);
        if (o->dcol < 0 || (a != d && !ints))
            return sl_seterr(err, errlen, "vertex '%s': aggregate %d: LAG's default must be a "
                             "column of the type of its expression (%s)", pl->vid, item,
                             sl_type_name(a));
    }
    if (o->kind == OUT_LAG && pl->preceding >= 0) /* Flink's words */
        return sl_seterr(err, errlen, "LAG Function with retraction is not supported in stream "
                         "mode.");
    o->vi = pl->nval++;
    return SL_OK;
}

/* A column name at *s -- `quoted` (`` a backquote) or bare -- into a; *s
 * past it. 0 when there is none. */
static int ident_at(const char **s, char a[256])
{
    const char *p = *s;
    size_t n = 0;
    if (*p == '`') {
        for (p++; *p && !(*p == '`' && p[1] != '`'); p++) {
            if (*p == '`') p++;
            if (n < 255) a[n++] = *p;
        }
        if (*p++ != '`') return 0;
    } else {
        while (*p && *p != ',' && *p != ')' && *p != ' ')
            if (n < 255) a[n++] = *p++;
            else p++;
    }
    a[n] = '\0';
    *s = p;
    return n > 0;
}

/* "LISTAGG([DISTINCT ]c[, 'separator'])[ FILTER (WHERE f)][ [AS ]alias]"
 * into o (c a STRING column, f a BOOLEAN one) and *alias: 1, 0 when text is
 * no LISTAGG item, -1 with err set when it is a bad one. */
static int parse_listagg(ov_plan *pl, const sl_schema *in, const char *text, ov_out *o,
                         const char **alias, int item, char *err, size_t errlen)
{
    const char *s = text;
    while (*s == ' ') s++;
    if (strncasecmp(s, "LISTAGG", 7) || (s[7] != '(' && s[7] != ' ')) return 0;
    s += 7;
    while (*s == ' ') s++;
    char a[256];
    o->kind = OUT_LISTAGG;
    o->fcol = -1;
    if (*s++ != '(') goto bad;
    while (*s == ' ') s++;
    if (!strncasecmp(s, "DISTINCT ", 9)) {
        o->distinct = true;
        for (s += 9; *s == ' ';) s++;
    }
    if (!ident_at(&s, a)) goto bad;
    o->col = sl_schema_find(in, a);
    if (o->col < 0 || in->fields[o->col].type != SL_T_STRING) {
        sl_seterr(err, errlen, "vertex '%s': aggregate %d: LISTAGG(%s): a STRING column of the "
                  "input is expected", pl->vid, item, a);
        return -1;
    }
    while (*s == ' ') s++;
    sl_buf sep = {0};
    if (*s == ',') {
        for (s++; *s == ' ';) s++;
        if (*s++ != '\'') goto bad;
        for (; *s && !(*s == '\'' && s[1] != '\''); s++) {
            if (*s == '\'') s++;
            sl_buf_put(&sep, s, 1);
        }
        if (*s++ != '\'') {
            sl_buf_free(&sep);
            goto bad;
        }
        o->seplen = sep.len;
        o->sep = sl_calloc(1, sep.len + 1);
        if (sep.len) memcpy(o->sep, sep.p, sep.len);
        sl_buf_free(&sep);
    } else {
        o->sep = sl_strdup(",");
        o->seplen = 1;
    }
    while (*s == ' ') s++;
    if (*s++ != ')') goto bad;
    while (*s == ' ') s++;
    if (!strncasecmp(s, "FILTER", 6) && (s[6] == ' ' || s[6] == '(')) {
        for (s += 6; *s == ' ';) s++;
        if (*s++ != '(') goto bad;
        while (*s == ' ') s++;
        if (strncasecmp(s, "WHERE ", 6)) goto bad;
        for (s += 6; *s == ' ';) s++;
        if (!ident_at(&s, a)) goto bad;
        o->fcol = sl_schema_find(in, a);
        if (o->fcol < 0 || in->fields[o->fcol].type != SL_T_BOOLEAN) {
            sl_seterr(err, errlen, "vertex '%s': aggregate %d: FILTER (WHERE %s): a BOOLEAN "
                      "column of the input is expected", pl->vid, item, a);
            return -1;
        }
        while (*s == ' ') s++;
        if (*s++ != ')') goto bad;
        while (*s == ' ') s++;
    }
    if (!strncasecmp(s, "AS ", 3)) s += 3;
    while (*s == ' ') s++;
    *alias = *s ? s : NULL;
    o->vi = LA_NS | pl->nlist++;
    if (o->distinct) pl->list_counted = true;
    return 1;
bad:
    sl_seterr(err, errlen, "vertex '%s': aggregate %d: '%s': expected LISTAGG([DISTINCT] column "
              "[, 'separator']) [FILTER (WHERE column)] [AS name]", pl->vid, item, text);
    return -1;
}

static void *ov_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    ov_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_agg_list_init(&pl->aggs);
    sl_schema_init(pc->out);
    sl_schema_copy(pc->out, in);
    const char *vid = pl->vid;
    if (sl_agg_list_functions(&pl->aggs, vid, v->config, err, errlen) != SL_OK) goto fail;

    json_t *jp = sl_vconf_array(v, "partition-by");
    size_t np = !jp ? 0 : json_is_string(jp) ? 1 : json_array_size(jp);
    if (np > SL_MAX_KEY_COLS) {
        sl_seterr(err, errlen, "vertex '%s': too many partition-by columns", vid);
        goto fail;
    }
    for (size_t i = 0; i < np; i++) {
        json_t *ji = json_is_string(jp) ? jp : json_array_get(jp, i);
        int c = json_is_string(ji) ? sl_schema_find(in, json_string_value(ji)) : -1;
        if (c < 0) {
            sl_seterr(err, errlen, "vertex '%s': partition-by item %zu: a column of the input is "
                      "expected", vid, i + 1);
            goto fail;
        }
        pl->part[pl->npart++] = c;
    }
    const char *ob = sl_vconf_str(v, "order-by", NULL);
    pl->tcol = ob ? sl_schema_find(in, ob) : -1;
    if (pl->tcol < 0 || in->fields[pl->tcol].type != SL_T_TIMESTAMP) {
        sl_seterr(err, errlen, "vertex '%s': option 'order-by' must name a TIMESTAMP column of the "
                  "input (the time attribute)", vid);
        goto fail;
    }
    pl->proc = sl_plan_opt_int(pc, "time") == 1;
    pl->rows = sl_plan_opt_int(pc, "frame") == 0;
    const char *pre = sl_vconf_str(v, "preceding", "unbounded");
    if (!strcasecmp(pre, "unbounded")) {
        pl->preceding = -1;
    } else {
        char *end;
        long long n = strtoll(pre, &end, 10);
        if (end == pre || *end || n < 0) {
            sl_seterr(err, errlen, "vertex '%s': option 'preceding' must be \"unbounded\" or a "
                      "number of rows (ROWS) or milliseconds (RANGE) >= 0, not '%s'", vid, pre);
            goto fail;
        }
        pl->preceding = n;
    }
    pl->aggs.allow_collect = true; /* COLLECT's values: counted in "over-distinct" */
    json_t *ja = sl_vconf_array(v, "aggregates");
    size_t na = !ja ? 0 : json_is_string(ja) ? 1 : json_array_size(ja);
    if (!na) {
        sl_seterr(err, errlen, "vertex '%s': option 'aggregates' must list at least one "
                  "aggregate", vid);
        goto fail;
    }
    pl->outs = sl_calloc(na, sizeof *pl->outs);
    for (size_t i = 0; i < na; i++) {
        json_t *ji = json_is_string(ja) ? ja : json_array_get(ja, i);
        if (!json_is_string(ji)) {
            sl_seterr(err, errlen, "vertex '%s': aggregate %zu must be a string", vid, i + 1);
            goto fail;
        }
        const char *text = json_string_value(ji), *alias = NULL;
        char args[3][256];
        int kind = 0, nargs, la = parse_listagg(pl, in, text, &pl->outs[pl->nout], &alias, (int)i + 1,
                                            err, errlen);
        if (la < 0) {
            pl->nout++; /* its separator is freed with the plan */
            goto fail;
        }
        if (la || parse_valfn(text, &kind, args, &nargs, &alias)) {
            ov_out *o = &pl->outs[pl->nout];
            if (!la) o->kind = kind;
            if (!la && valfn_args(pl, in, o, args, nargs, (int)i + 1, err, errlen) != SL_OK)
                goto fail;
            char nm[256];
            if (!alias) {
                snprintf(nm, sizeof nm, "EXPR$%d", pc->out->n);
            } else if (*alias == '`') { /* `quoted` */
                size_t l = strlen(alias);
                if (l < 3 || alias[l - 1] != '`' || l - 2 >= sizeof nm) {
                    sl_seterr(err, errlen, "vertex '%s': aggregate %zu: bad alias %s", vid, i + 1,
                              alias);
                    goto fail;
                }
                memcpy(nm, alias + 1, l - 2);
                nm[l - 2] = '\0';
                alias = NULL;
            }
            if (sl_schema_find(pc->out, alias ? alias : nm) >= 0) {
                sl_seterr(err, errlen, "vertex '%s': aggregate %zu: column '%s' exists", vid,
                          i + 1, alias ? alias : nm);
                goto fail;
            }
            sl_schema_add_dt(pc->out, alias ? alias : nm,
                          la ? sl_dtype_basic(SL_T_STRING)
                          : kind <= OUT_DENSE ? sl_dtype_basic(SL_T_BIGINT) : in->fields[o->col].dt);
            pl->nout++;
            continue;
        }
        char e[256];
        if (sl_agg_list_add(&pl->aggs, text, (int)i + 1, in, pc->out, e, sizeof e) != SL_OK) {
            sl_seterr(err, errlen, "vertex '%s': %s", vid, e);
            goto fail;
        }
        const sl_agg *a = &pl->aggs.aggs[pl->aggs.n - 1];
        if (a->fn == SL_AGG_JSON_ARRAYAGG || a->fn == SL_AGG_JSON_OBJECTAGG) {
            sl_seterr(err, errlen, "vertex '%s': aggregate %zu '%s': %s is not supported in an "
                      "OVER aggregation yet", vid, i + 1, text, sl_agg_fn_name(a->fn));
            goto fail;
        }
        pl->outs[pl->nout].kind = OUT_AGG;
        pl->outs[pl->nout++].agg = pl->aggs.n - 1;
    }
    pl->metalen = OV_META + pl->aggs.size + 8 * (size_t)pl->nval;
    pl->need = sl_calloc((size_t)in->n + 1, 1);
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (a->col >= 0) pl->need[a->col] = 1;
        if (a->filter >= 0) pl->need[a->filter] = 1;
        for (int j = 0; a->fn == SL_AGG_UDF && j < a->nargs; j++) pl->need[a->cols[j]] = 1;
        if (a->fn == SL_AGG_UDF && !a->udf->retract) pl->rebuild = true;
        if ((a->fn == SL_AGG_MIN || a->fn == SL_AGG_MAX) && !a->strval) pl->has_minmax = true;
    }
    pl->counted = pl->aggs.has_distinct || pl->aggs.has_collect || pl->aggs.has_strval;
    if (pl->rebuild && pl->counted) {
        sl_seterr(err, errlen, "vertex '%s': a DISTINCT aggregate, COLLECT or MIN/MAX of a "
                  "STRING and a user-defined aggregate function without retract cannot share a "
                  "bounded OVER frame", vid);
        goto fail;
    }
    for (int i = 0; i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        if (o->kind == OUT_FIRST || o->kind == OUT_LAST || o->kind == OUT_LISTAGG)
            pl->need[o->col] = 1;
        if (o->kind == OUT_LISTAGG && o->fcol >= 0) pl->need[o->fcol] = 1;
    }
    if (pl->list_counted && pl->preceding >= 0) pl->counted = true;
    if (pl->rebuild && pl->counted) {
        sl_seterr(err, errlen, "vertex '%s': LISTAGG(DISTINCT ...) and a user-defined aggregate "
                  "function without retract cannot share a bounded OVER frame", vid);
        goto fail;
    }
    if (sl_plan_key(pc, 0, pl->part, pl->npart, err, errlen) != SL_OK) goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    ov_plan_free(pl);
    return NULL;
}

/* ---- open / close --------------------------------------------------------------- */

static void ov_close(sl_op *op)
{
    ov_state *st = op->priv;
    if (!st) return;
    free(st->meta);
    free(st->meta0);
    free(st->tailc);
    free(st->pend);
    free(st->wbuf);
    free(st->held);
    free(st->due);
    free(st->scratch);
    free(st->enc);
    free(st->vals);
    free(st->fvals);
    free(st->pvals);
    free(st->outv);
    free(st->res);
    free(st->vres);
    for (int i = 0; st->vcopy && i < ((const ov_plan *)op->plan)->nout; i++) free(st->vcopy[i]);
    free(st->vcopy);
    free(st->vcap);
    free(st->venc);
    free(st->dns);
    free(st->dout);
    free(st->dbytes);
    for (int i = 0; st->coll && i < ((const ov_plan *)op->plan)->aggs.n; i++) sl_buf_free(&st->coll[i]);
    free(st->coll);
    sl_buf_free(&st->cscan);
    sl_buf_free(&st->cidx);
    sl_buf_free(&st->lbuf);
    free(st);
    op->priv = NULL;
}

static int ov_open(sl_op *op)
{
    const ov_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    ov_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    /* registration order fixes the ids a snapshot carries: version 1's two
     * states keep theirs so that its savepoints are recognised and refused */
    st->sid_old_rows = sl_kstate_register(op->kstate, "over-rows");
    st->sid_old_meta = sl_kstate_register(op->kstate, "over-meta");
    st->sid_vals = sl_kstate_register(op->kstate, "over-values");
    st->sid_held = sl_kstate_register(op->kstate, "over-held");
    st->sid_frame = sl_kstate_register(op->kstate, "over-frame");
    st->sid_meta = sl_kstate_register(op->kstate, "over-key");
    st->sid_dist = sl_kstate_register(op->kstate, "over-distinct");
    if (st->sid_old_rows < 0 || st->sid_old_meta < 0 || st->sid_vals < 0 || st->sid_held < 0 ||
        st->sid_frame < 0 || st->sid_meta < 0 || st->sid_dist < 0)
        return sl_op_fail(op, "vertex '%s': cannot register its keyed state", pl->vid);
    char uerr[700];
    if (sl_agg_open(&pl->aggs, uerr, sizeof uerr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, uerr);
    st->meta = sl_calloc(1, pl->metalen);
    st->meta0 = sl_calloc(1, pl->metalen);
    st->scratch = sl_calloc(1, pl->aggs.size + 8);
    st->vals = sl_calloc((size_t)op->in->n + 1, sizeof *st->vals);
    st->fvals = sl_calloc((size_t)op->in->n + 1, sizeof *st->fvals);
    st->pvals = sl_calloc((size_t)op->in->n + 1, sizeof *st->pvals);
    st->outv = sl_calloc((size_t)op->out->n + 1, sizeof *st->outv);
    st->res = sl_calloc((size_t)pl->aggs.n + 1, sizeof *st->res);
    st->vres = sl_calloc((size_t)pl->nout + 1, sizeof *st->vres);
    st->vcopy = sl_calloc((size_t)pl->nout + 1, sizeof *st->vcopy);
    st->vcap = sl_calloc((size_t)pl->nout + 1, sizeof *st->vcap);
    if (pl->aggs.has_collect || pl->aggs.has_strval)
        st->coll = sl_calloc((size_t)pl->aggs.n, sizeof *st->coll);
    return SL_OK;
}

/* A savepoint of state version 1 (one entry per held row) is refused. */
static int ov_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    const ov_plan *pl = op->plan;
    ov_state *st = op->priv;
    if (sl_kstate_restored(op->kstate, st->sid_old_rows) ||
        sl_kstate_restored(op->kstate, st->sid_old_meta))
        return sl_op_fail(op, "vertex '%s': the snapshot holds this OVER aggregation's state in "
                          "version 1 (one entry per held row), which this build does not read "
                          "(it writes version 2); restore it with the build that took it and "
                          "stop that job with --drain, or start this job without it", pl->vid);
    return sl_op_restore_proc_timers(op, blobs, lens, nblobs);
}

/* ---- helpers -------------------------------------------------------------------- */

static int state_err(sl_op *op, const char *err)
{
    const ov_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
}

static int damaged(sl_op *op, const char *what)
{
    const ov_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s': its state is damaged (%s)", pl->vid, what);
}

/* Fail the task with the message of the user function that failed. */
static int udf_failed(sl_op *op)
{
    const ov_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s' (subtask %d): %s", pl->vid, op->subtask, sl_agg_error());
}

static void grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    *buf = sl_realloc(*buf, c);
    *cap = c;
}



static int64_t meta_i64(const ov_state *st, int slot) { return sl_get_lei64(st->meta + 8 * slot); }
static void meta_set(ov_state *st, int slot, int64_t v) { sl_put_lei64(st->meta + 8 * slot, v); }
enum { M_EMITTED, M_ARMED, M_CLEAN_AT, M_LAST, M_PMIN, M_FIRST, M_HEAD, M_TAIL };

static uint8_t *acc_of(ov_state *st) { return st->meta + OV_META; }

/* The key's meta value: the fixed part (pl->metalen) into st->meta, then
 * u32 tail chunk length, u32 held rows length, the tail chunk (st->tailc)
 * and the held rows (st->pend); all zero when absent. */
static int meta_read(sl_op *op, ov_state *st)
{
    const ov_plan *pl = op->plan;
    char err[256];
    const void *val;
    size_t vlen, want = pl->metalen;
    int rc = sl_kstate_get(op->kstate, st->sid_meta, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    st->tlen = st->plen = 0;
    if (rc == SL_DONE) {
        memset(st->meta, 0, want);
        return SL_OK;
    }
    const uint8_t *p = val;
    if (vlen < want + 8) return damaged(op, "a key's meta value");
    size_t tl = sl_get_le32(p + want), hl = sl_get_le32(p + want + 4);
    if (tl + hl != vlen - want - 8) return damaged(op, "a key's meta value");
    memcpy(st->meta, p, want);
    grow(&st->tailc, &st->tcap, tl);
    grow(&st->pend, &st->pcap, hl);
    if (tl) memcpy(st->tailc, p + want + 8, tl);
    if (hl) memcpy(st->pend, p + want + 8 + tl, hl);
    st->tlen = tl;
    st->plen = hl;
    return SL_OK;
}

static int meta_write(sl_op *op, ov_state *st)
{
    const ov_plan *pl = op->plan;
    char err[256];
    size_t n = pl->metalen;
    grow(&st->wbuf, &st->wcap, n + 8 + st->tlen + st->plen);
    memcpy(st->wbuf, st->meta, n);
    sl_put_le32(st->wbuf + n, (uint32_t)st->tlen);
    sl_put_le32(st->wbuf + n + 4, (uint32_t)st->plen);
    if (st->tlen) memcpy(st->wbuf + n + 8, st->tailc, st->tlen);
    if (st->plen) memcpy(st->wbuf + n + 8 + st->tlen, st->pend, st->plen);
    if (sl_kstate_put(op->kstate, st->sid_meta, no_ns, 0, st->wbuf, n + 8 + st->tlen + st->plen,
                      err, sizeof err) != SL_OK)
        return state_err(op, err);
    return SL_OK;
}

/* Row into st->enc as an insert; its length, 0 after failing the job. */
static size_t encode(sl_op *op, ov_state *st, const sl_row *row)
{
    const ov_plan *pl = op->plan;
    size_t sz = sl_row_size(row, op->in);
    if (sz + OV_REC > st->enccap) {
        st->enccap = (sz + OV_REC) * 2;
        st->enc = sl_realloc(st->enc, st->enccap);
    }
    sl_row r = *row;
    r.kind = SL_KIND_INSERT;
    if (sl_row_encode(&r, op->in, st->enc + OV_REC, sz) != sz) {
        sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
        return 0;
    }
    return sz;
}

static int decode(sl_op *op, const uint8_t *p, size_t len, sl_value *vals, sl_row *r)
{
    const ov_plan *pl = op->plan;
    char err[256];
    memset(r, 0, sizeof *r);
    r->vals = vals;
    if (sl_row_decode(p, len, op->in, r, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, err);
    return SL_OK;
}

/* ---- held rows (event time): in the key's meta value ---------------------------- */

/* Row r of time t joins the key's held rows (a record as the frame's: u32
 * length, i64 time, the row), in arrival order; a timer at the earliest
 * held time. */
static int held_add(sl_op *op, ov_state *st, const sl_row *r, int64_t t)
{
    size_t sz = encode(op, st, r);
    if (!sz) return SL_ERR;
    sl_put_le32(st->enc, (uint32_t)sz);
    sl_put_lei64(st->enc + 4, t);
    grow(&st->pend, &st->pcap, st->plen + OV_REC + sz);
    memcpy(st->pend + st->plen, st->enc, OV_REC + sz);
    bool first = st->plen == 0;
    st->plen += OV_REC + sz;
    if (!first && t >= meta_i64(st, M_PMIN)) return SL_OK;
    meta_set(st, M_PMIN, t);
    return sl_op_timer_register(op, SL_TIME_EVENT, t, no_ns, 0);
}

static int64_t rec_time(const uint8_t *rec) { return sl_get_lei64(rec + 4); }

/* The held rows of time at most wm leave st->pend for st->held, sorted by
 * time (arrival order among peers); the timer moves to the earliest left. */
static int held_take(sl_op *op, ov_state *st, int64_t wm)
{
    size_t n = 0, off = 0, keep = 0;
    st->heldlen = 0;
    while (off < st->plen) {
        if (st->plen - off < OV_REC || sl_get_le32(st->pend + off) > st->plen - off - OV_REC)
            return damaged(op, "the held rows");
        size_t len = OV_REC + sl_get_le32(st->pend + off);
        if (rec_time(st->pend + off) <= wm) {
            if (n == st->duecap) {
                st->duecap = st->duecap ? st->duecap * 2 : 64;
                st->due = sl_realloc(st->due, st->duecap * sizeof *st->due);
            }
            st->due[n++] = off;
            st->heldlen += len;
        }
        off += len;
    }
    if (!n) return SL_OK;
    for (size_t i = 1; i < n; i++) { /* stable: insertion sort, times mostly in order */
        size_t x = st->due[i], j = i;
        int64_t t = rec_time(st->pend + x);
        for (; j > 0 && rec_time(st->pend + st->due[j - 1]) > t; j--) st->due[j] = st->due[j - 1];
        st->due[j] = x;
    }
    grow(&st->held, &st->heldcap, st->heldlen);
    size_t h = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = OV_REC + sl_get_le32(st->pend + st->due[i]);
        memcpy(st->held + h, st->pend + st->due[i], len);
        h += len;
    }
    int64_t pmin = INT64_MAX;
    for (off = 0; off < st->plen;) { /* the rest stay, in arrival order */
        size_t len = OV_REC + sl_get_le32(st->pend + off);
        int64_t t = rec_time(st->pend + off);
        if (t > wm) {
            if (keep != off) memmove(st->pend + keep, st->pend + off, len);
            keep += len;
            if (t < pmin) pmin = t;
        }
        off += len;
    }
    st->plen = keep;
    if (!keep) return SL_OK;
    meta_set(st, M_PMIN, pmin);
    return sl_op_timer_register(op, SL_TIME_EVENT, pmin, no_ns, 0);
}

/* The next held row of st->held at *off (before end) into r (st->vals); 0
 * at the end. */
static int held_next(sl_op *op, ov_state *st, size_t *off, size_t end, sl_row *r, int *rc)
{
    *rc = SL_OK;
    if (*off >= end) return 0;
    size_t len = sl_get_le32(st->held + *off);
    *rc = decode(op, st->held + *off + OV_REC, len, st->vals, r);
    *off += OV_REC + len;
    return *rc == SL_OK;
}

/* ---- DISTINCT aggregates and COLLECT: a count per item and value ------------------- */

/* "over-distinct", namespace u16 item then the value's bytes
 * (sl_agg_distinct_value's; COLLECT: the value's datum bytes): the i64
 * number of copies of the value in the frame, the entry deleted at 0. A
 * DISTINCT value is folded into the accumulator when its count goes 0 -> 1
 * and out when it goes 1 -> 0, as Flink's distinct MapView does; COLLECT's
 * MULTISET is the item's entries (collect_result). */
static int count_step(sl_op *op, ov_state *st, int i, const void *p, size_t len, int sign,
                      int64_t *now)
{
    char err[256];
    grow(&st->dns, &st->dnscap, len + 2);
    st->dns[0] = (uint8_t)(i >> 8);
    st->dns[1] = (uint8_t)i;
    if (len) memcpy(st->dns + 2, p, len);
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_dist, st->dns, len + 2, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    int64_t n = rc == SL_DONE ? 0 : vlen == 8 ? sl_get_lei64(val) : -1;
    if (n < 0 || (sign < 0 && n == 0)) return damaged(op, "a DISTINCT or COLLECT value's count");
    n += sign;
    *now = n;
    if (n == 0) {
        rc = sl_kstate_del(op->kstate, st->sid_dist, st->dns, len + 2, err, sizeof err);
    } else {
        uint8_t c[8];
        sl_put_lei64(c, n);
        rc = sl_kstate_put(op->kstate, st->sid_dist, st->dns, len + 2, c, 8, err, sizeof err);
    }
    return rc == SL_OK ? SL_OK : state_err(op, err);
}

/* A copy of row r's value of DISTINCT item i joins (+1) or leaves (-1) the
 * frame; the accumulator acc follows the value's first and last copy. */
static int dist_step(sl_op *op, ov_state *st, uint8_t *acc, int i, const sl_row *r, int sign)
{
    const ov_plan *pl = op->plan;
    uint8_t tmp[8];
    const void *p;
    size_t len;
    int64_t n;
    if (!sl_agg_distinct_value(&pl->aggs.aggs[i], r, tmp, &p, &len)) return SL_OK;
    if (count_step(op, st, i, p, len, sign, &n) != SL_OK) return SL_ERR;
    if ((sign > 0 && n == 1) || (sign < 0 && n == 0)) sl_agg_distinct_apply(&pl->aggs, i, acc, r, sign);
    return SL_OK;
}

/* A copy of row r's value of COLLECT item i joins (+1) or leaves (-1) the frame. */
static int collect_step(sl_op *op, ov_state *st, int i, const sl_row *r, int sign)
{
    const ov_plan *pl = op->plan;
    const sl_agg *a = &pl->aggs.aggs[i];
    const sl_value *x;
    int64_t n;
    if (!sl_agg_collect_value(a, r, &x)) return SL_OK;
    size_t len = sl_datum_size(x, a->in_dt);
    grow(&st->venc, &st->venccap, len);
    sl_datum_put(st->venc, x, a->in_dt);
    return count_step(op, st, i, st->venc, len, sign, &n);
}

typedef struct strmm_scan {
    int item, max;
    bool found;
    sl_buf *best;       /* the extremum's bytes so far */
} strmm_scan;

static int strmm_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen);
static int sx_step(sl_op *op, ov_state *st, int i, const sl_value *x);

/* A copy of row r's value of STRING MIN/MAX item i joins (+1) or leaves (-1)
 * a bounded frame: counted by its bytes, which order the entries as
 * sl_agg_str_cmp orders strings (unsigned bytes, then length). An UNBOUNDED
 * frame keeps the extremum only (sx_step). */
static int strmm_step(sl_op *op, ov_state *st, int i, const sl_row *r, int sign)
{
    const ov_plan *pl = op->plan;
    const sl_agg *a = &pl->aggs.aggs[i];
    const sl_value *x = &r->vals[a->col];
    int64_t n;
    bool none = x->isnull || (a->filter >= 0 && (r->vals[a->filter].isnull ||
                                                 !r->vals[a->filter].v.i));
    if (pl->preceding < 0) return sx_step(op, st, i, none ? NULL : x);
    if (none) return SL_OK;
    return count_step(op, st, i, x->v.s.p, x->v.s.len, sign, &n);
}

/* ---- STRING MIN/MAX over UNBOUNDED frames: the extremum only ----------------------- */

/* An UNBOUNDED frame never retracts, so its STRING MIN/MAX item i keeps only
 * the extremum, as Flink's MinAggFunction / MaxAggFunction do: "over-values",
 * namespace u16 SX_NS | i, u32 0: u8 1 and the string's bytes, or u8 0 while
 * no value came (written at the key's first row). Builds before 2026-12-08
 * counted every distinct value in "over-distinct" as bounded frames do; a key
 * restored with those and no extremum entry gets its extremum from them at
 * its next row, and they go (sx_migrate). */
static void sx_ns(uint8_t ns[6], int i)
{
    ns[0] = (uint8_t)((SX_NS | i) >> 8);
    ns[1] = (uint8_t)(SX_NS | i);
    sl_put_be32(ns + 2, 0);
}

typedef struct sx_old {
    int item;
    sl_buf *nss;        /* [u32 length][namespace] of each of the item's entries */
} sx_old;

static int sx_old_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    sx_old *c = ctx;
    const uint8_t *n = ns;
    SL_UNUSED(val);
    if (nslen < 2 || vlen != 8 || ((n[0] << 8) | n[1]) != c->item) return 0;
    uint8_t hdr[4];
    sl_put_le32(hdr, (uint32_t)nslen);
    sl_buf_put(c->nss, hdr, 4);
    sl_buf_put(c->nss, ns, nslen);
    return 0;
}

/* The old layout of item i for the current key: its extremum into
 * st->coll[i] (*found) and its "over-distinct" entries deleted. */
static int sx_migrate(sl_op *op, ov_state *st, int i, bool *found)
{
    const ov_plan *pl = op->plan;
    char err[256];
    strmm_scan c = {i, pl->aggs.aggs[i].fn == SL_AGG_MAX, false, &st->coll[i]};
    if (sl_kstate_scan_key(op->kstate, st->sid_dist, strmm_scan_fn, &c, err, sizeof err) == SL_ERR)
        return state_err(op, err);
    *found = c.found;
    if (!c.found) return SL_OK;
    sl_buf_reset(&st->cscan);
    sx_old o = {i, &st->cscan};
    if (sl_kstate_scan_key(op->kstate, st->sid_dist, sx_old_fn, &o, err, sizeof err) == SL_ERR)
        return state_err(op, err);
    const uint8_t *b = sl_buf_u8(&st->cscan);
    for (size_t pos = 0; pos < st->cscan.len; pos += 4 + sl_get_le32(b + pos))
        if (sl_kstate_del(op->kstate, st->sid_dist, b + pos + 4, sl_get_le32(b + pos), err,
                          sizeof err) != SL_OK)
            return state_err(op, err);
    return SL_OK;
}

/* Item i's extremum of the current key into st->coll[i]: *has 1 (a value),
 * 0 (none yet) or -1 (no entry: the key's first row, or the old layout,
 * which is then read and *has says what it held). */
static int sx_get(sl_op *op, ov_state *st, int i, int *has, bool migrate)
{
    char err[256];
    uint8_t ns[6];
    sx_ns(ns, i);
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_vals, ns, sizeof ns, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    sl_buf_reset(&st->coll[i]);
    if (rc == SL_OK) {
        const uint8_t *b = val;
        if (vlen < 1 || b[0] > 1 || (b[0] == 0 && vlen != 1))
            return damaged(op, "a STRING MIN/MAX extremum");
        *has = b[0];
        if (vlen > 1) sl_buf_put(&st->coll[i], b + 1, vlen - 1);
        return SL_OK;
    }
    *has = -1;
    bool found = false;
    if (migrate && sl_kstate_restored(op->kstate, st->sid_dist) &&
        sx_migrate(op, st, i, &found) != SL_OK)
        return SL_ERR;
    if (found) *has = 2; /* read from the old layout, not written yet */
    return SL_OK;
}

/* Row value x (NULL: none) of STRING MIN/MAX item i joins an UNBOUNDED frame. */
static int sx_step(sl_op *op, ov_state *st, int i, const sl_value *x)
{
    const ov_plan *pl = op->plan;
    char err[256];
    int has;
    if (sx_get(op, st, i, &has, true) != SL_OK) return SL_ERR;
    bool better = false;
    if (x) {
        int cmp = has > 0 ? sl_agg_str_cmp(x->v.s.p, x->v.s.len, st->coll[i].p, st->coll[i].len) : 0;
        better = has <= 0 || (pl->aggs.aggs[i].fn == SL_AGG_MAX ? cmp > 0 : cmp < 0);
    }
    if (!better && has >= 0 && has < 2) return SL_OK; /* unchanged */
    sl_buf_reset(&st->lbuf);
    uint8_t flag = better || has > 0;
    sl_buf_put(&st->lbuf, &flag, 1);
    if (better) sl_buf_put(&st->lbuf, x->v.s.p, x->v.s.len);
    else if (flag) sl_buf_put(&st->lbuf, st->coll[i].p, st->coll[i].len);
    uint8_t ns[6];
    sx_ns(ns, i);
    if (sl_kstate_put(op->kstate, st->sid_vals, ns, sizeof ns, st->lbuf.p, st->lbuf.len, err,
                      sizeof err) != SL_OK)
        return state_err(op, err);
    return SL_OK;
}

static int strmm_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    strmm_scan *c = ctx;
    const uint8_t *n = ns;
    if (nslen < 2 || vlen != 8 || ((n[0] << 8) | n[1]) != c->item) return 0;
    int cmp = c->found ? sl_agg_str_cmp(n + 2, nslen - 2, c->best->p, c->best->len) : 0;
    if (!c->found || (c->max ? cmp > 0 : cmp < 0)) {
        sl_buf_reset(c->best);
        sl_buf_put(c->best, n + 2, nslen - 2);
        c->found = true;
    }
    return 0;
}

/* STRING MIN/MAX item i of the current key's frame: the least or greatest of
 * its counted values (NULL: none), its bytes in st->coll[i] until the next
 * call. The scan reads the frame's distinct values. */
static int strmm_result(sl_op *op, ov_state *st, int i, sl_value *res)
{
    const sl_agg *a = &((const ov_plan *)op->plan)->aggs.aggs[i];
    char err[256];
    if (((const ov_plan *)op->plan)->preceding < 0) { /* the extremum kept */
        int has;
        if (sx_get(op, st, i, &has, false) != SL_OK) return SL_ERR;
        res->isnull = has <= 0;
        res->v.s.p = has > 0 ? (st->coll[i].len ? (const char *)st->coll[i].p : "") : NULL;
        res->v.s.len = has > 0 ? (uint32_t)st->coll[i].len : 0;
        return SL_OK;
    }
    strmm_scan c = {i, a->fn == SL_AGG_MAX, false, &st->coll[i]};
    if (sl_kstate_scan_key(op->kstate, st->sid_dist, strmm_scan_fn, &c, err, sizeof err) == SL_ERR)
        return state_err(op, err);
    res->isnull = !c.found;
    res->v.s.p = c.found ? (const char *)st->coll[i].p : NULL;
    res->v.s.len = c.found ? (uint32_t)st->coll[i].len : 0;
    if (c.found && !res->v.s.p) res->v.s.p = ""; /* the empty string */
    return SL_OK;
}

typedef struct coll_scan {
    int item;
    sl_buf *out;
} coll_scan;

/* An "over-distinct" entry of the COLLECT item into the scan: [u32 length]
 * [the value's bytes][i64 copies], as sl_agg_multiset_build reads it. */
static int coll_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    coll_scan *c = ctx;
    const uint8_t *n = ns;
    if (nslen < 2 || vlen != 8 || ((n[0] << 8) | n[1]) != c->item) return 0;
    uint8_t hdr[4];
    sl_put_le32(hdr, (uint32_t)(nslen - 2));
    sl_buf_put(c->out, hdr, 4);
    sl_buf_put(c->out, n + 2, nslen - 2);
    sl_buf_put(c->out, val, 8);
    return 0;
}

/* COLLECT item i's MULTISET of the current key's frame into st->coll[i]
 * and *res (borrowing its bytes until the next call). */
static int collect_result(sl_op *op, ov_state *st, int i, sl_value *res)
{
    const ov_plan *pl = op->plan;
    char err[256];
    sl_buf_reset(&st->cscan);
    sl_buf_reset(&st->cidx);
    coll_scan c = {i, &st->cscan};
    if (sl_kstate_scan_key(op->kstate, st->sid_dist, coll_scan_fn, &c, err, sizeof err) == SL_ERR)
        return state_err(op, err);
    const uint8_t *b = sl_buf_u8(&st->cscan);
    for (size_t pos = 0; pos < st->cscan.len; pos += 4 + sl_get_le32(b + pos) + 8)
        sl_buf_put(&st->cidx, &pos, sizeof pos);
    size_t n = st->cidx.len / sizeof(size_t);
    sl_agg_multiset_sort(b, (size_t *)st->cidx.p, n);
    sl_agg_multiset_build(b, (const size_t *)st->cidx.p, n, pl->aggs.aggs[i].kept_distinct,
                          &st->coll[i]);
    res->isnull = false;
    res->v.s.p = (const char *)st->coll[i].p;
    res->v.s.len = (uint32_t)st->coll[i].len;
    return SL_OK;
}

/* LISTAGG (below, with the value functions' state) */
static int list_add(sl_op *op, ov_state *st, const ov_out *o, const sl_row *r);
static int list_result(sl_op *op, ov_state *st, int i);
static const sl_value *list_value(const ov_out *o, const sl_row *r);
static int lcount_step(sl_op *op, ov_state *st, const ov_out *o, const void *p, size_t len,
                       int sign, int64_t seq);

/* Row r joins the accumulator acc: every aggregate (agg.c), the DISTINCT
 * ones' and COLLECT's value counts. */
static int acc_add(sl_op *op, ov_state *st, uint8_t *acc, const sl_row *r)
{
    const ov_plan *pl = op->plan;
    if (sl_agg_add(&pl->aggs, acc, r) != SL_OK) return udf_failed(op);
    for (int i = 0; pl->counted && i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (a->strval) {
            if (strmm_step(op, st, i, r, +1) != SL_OK) return SL_ERR;
            continue;
        }
        if (a->distinct && dist_step(op, st, acc, i, r, +1) != SL_OK) return SL_ERR;
        if (a->fn == SL_AGG_COLLECT && collect_step(op, st, i, r, +1) != SL_OK) return SL_ERR;
    }
    for (int i = 0; pl->nlist && i < pl->nout; i++)
        if (pl->outs[i].kind == OUT_LISTAGG && list_add(op, st, &pl->outs[i], r) != SL_OK)
            return SL_ERR;
    return SL_OK;
}

/* ---- the frame (bounded frames): a FIFO of records ------------------------------ */

/* Rows that entered a bounded frame and have not left it, in the order they
 * entered (time, then arrival), numbered head .. tail - 1 (meta). Record i
 * is in chunk i / OV_CHUNK, the chunk's records concatenated from slot 0:
 * entry "over-frame" / chunk number once full, the meta value's tail chunk
 * until then. A record is u32 row length, i64 time, then the row with only
 * the columns the frame reads (pl->need; others NULL). */
static void chunk_ns(uint8_t ns[OV_TNS], int64_t c) { sl_put_be64(ns, (uint64_t)c); }

typedef int (*rec_fn)(sl_op *op, ov_state *st, int64_t idx, int64_t t, const sl_row *r,
                      void *ctx);

/* Visit records [from, to) in order until fn returns non-zero; *stop is the
 * index it stopped at (to: none). Rows are borrowed from state until fn
 * returns; fn makes no state call. */
static int frame_walk(sl_op *op, ov_state *st, int64_t from, int64_t to, rec_fn fn, void *ctx,
                      int64_t *stop)
{
    char err[256];
    int64_t i = from;
    while (i < to) {
        uint8_t ns[OV_TNS];
        const void *val = st->tailc;
        size_t len = st->tlen, off = 0;
        if (i / OV_CHUNK != meta_i64(st, M_TAIL) / OV_CHUNK) {
            chunk_ns(ns, i / OV_CHUNK);
            int rc = sl_kstate_get(op->kstate, st->sid_frame, ns, OV_TNS, &val, &len, err,
                                   sizeof err);
            if (rc == SL_ERR) return state_err(op, err);
            if (rc == SL_DONE) return damaged(op, "a frame chunk is missing");
        }
        const uint8_t *p = val;
        for (int64_t s = 0; s <= i % OV_CHUNK; s++) {
            if (len - off < OV_REC || sl_get_le32(p + off) > len - off - OV_REC)
                return damaged(op, "a frame chunk");
            if (s == i % OV_CHUNK) break;
            off += OV_REC + sl_get_le32(p + off);
        }
        do {
            if (len - off < OV_REC || sl_get_le32(p + off) > len - off - OV_REC)
                return damaged(op, "a frame chunk");
            size_t rl = sl_get_le32(p + off);
            int64_t t = sl_get_lei64(p + off + 4);
            sl_row r;
            if (decode(op, p + off + OV_REC, rl, st->fvals, &r) != SL_OK) return SL_ERR;
            if (fn(op, st, i, t, &r, ctx)) {
                if (stop) *stop = i;
                return SL_OK;
            }
            off += OV_REC + rl;
            i++;
        } while (i < to && i % OV_CHUNK);
    }
    if (stop) *stop = to;
    return SL_OK;
}

/* Row r of time t enters the frame (its accumulator is the caller's). */
static int frame_push(sl_op *op, ov_state *st, const sl_row *r, int64_t t)
{
    const ov_plan *pl = op->plan;
    char err[256];
    for (int c = 0; c < op->in->n; c++)
        st->pvals[c] = pl->need[c] ? r->vals[c] : (sl_value){.isnull = true};
    sl_row pr = *r;
    pr.vals = st->pvals;
    size_t sz = encode(op, st, &pr);
    if (!sz) return SL_ERR;
    sl_put_le32(st->enc, (uint32_t)sz);
    sl_put_lei64(st->enc + 4, t);
    int64_t idx = meta_i64(st, M_TAIL);
    grow(&st->tailc, &st->tcap, st->tlen + OV_REC + sz);
    memcpy(st->tailc + st->tlen, st->enc, OV_REC + sz);
    st->tlen += OV_REC + sz;
    if (idx == meta_i64(st, M_HEAD)) meta_set(st, M_FIRST, t);
    meta_set(st, M_TAIL, idx + 1);
    meta_set(st, M_LAST, t);
    if ((idx + 1) % OV_CHUNK == 0) { /* full: its own entry */
        uint8_t ns[OV_TNS];
        chunk_ns(ns, idx / OV_CHUNK);
        if (sl_kstate_put(op->kstate, st->sid_frame, ns, OV_TNS, st->tailc, st->tlen, err,
                          sizeof err) != SL_OK)
            return state_err(op, err);
        st->tlen = 0;
    }
    /* FIRST_VALUE / LAST_VALUE: the record of the first / last non-NULL value */
    for (int i = 0; i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        if ((o->kind != OUT_FIRST && o->kind != OUT_LAST) || r->vals[o->col].isnull) continue;
        uint8_t *pos = st->meta + OV_META + pl->aggs.size + 8 * (size_t)o->vi;
        if (o->kind == OUT_LAST || sl_get_lei64(pos) == 0) sl_put_lei64(pos, idx + 1);
    }
    return SL_OK;
}

/* Whether record r counts for MIN/MAX item a and its value is the extremum. */
static bool is_extremum(const sl_agg *a, const uint8_t *acc, const sl_row *r)
{
    if (a->filter >= 0 && (r->vals[a->filter].isnull || !r->vals[a->filter].v.i)) return false;
    const sl_value *x = &r->vals[a->col];
    int64_t cur;
    if (x->isnull || !sl_agg_minmax_get(a, acc, &cur)) return false;
    return sl_agg_order_key(a->in_type, x) == cur;
}

typedef struct evict_ctx {
    int64_t lo, keep, tail, stop_t; /* stop_t: the time of the record it stopped at */
    bool dirty;     /* an extremum left: MIN/MAX are rebuilt */
    bool failed;    /* a user function's retract failed */
} evict_ctx;

static int evict_one(sl_op *op, ov_state *st, int64_t idx, int64_t t, const sl_row *r, void *ctx)
{
    const ov_plan *pl = op->plan;
    evict_ctx *e = ctx;
    if (e->keep >= 0 ? e->tail - idx <= e->keep : t >= e->lo) {
        e->stop_t = t;
        return 1;
    }
    uint8_t *acc = acc_of(st);
    if (pl->rebuild) return 0;
    if (pl->has_minmax)
        for (int i = 0; i < pl->aggs.n && !e->dirty; i++) {
            const sl_agg *a = &pl->aggs.aggs[i];
            if ((a->fn == SL_AGG_MIN || a->fn == SL_AGG_MAX) && is_extremum(a, acc, r))
                e->dirty = true;
        }
    if (sl_agg_retract(&pl->aggs, acc, r) != SL_OK) {
        e->failed = true;
        return 1;
    }
    return 0;
}

typedef struct add_ctx {
    uint8_t *acc;
    bool failed;
} add_ctx;

static int add_rec(sl_op *op, ov_state *st, int64_t idx, int64_t t, const sl_row *r, void *ctx)
{
    const ov_plan *pl = op->plan;
    SL_UNUSED(idx);
    SL_UNUSED(t);
    add_ctx *a = ctx;
    if (sl_agg_add(&pl->aggs, a->acc, r) == SL_OK) return 0;
    a->failed = true;
    return 1;
}

/* The DISTINCT items' values of a record leaving the frame into st->dout
 * (strings' bytes into st->dbytes, their offsets in v.s.p until the walk
 * ends): the record is borrowed from state, the counts are read after. */
static int copy_distinct(sl_op *op, ov_state *st, int64_t idx, int64_t t, const sl_row *r,
                         void *ctx)
{
    const ov_plan *pl = op->plan;
    SL_UNUSED(idx);
    SL_UNUSED(t);
    SL_UNUSED(ctx);
    for (int i = 0; i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        uint8_t tmp[8];
        const void *p;
        size_t len;
        const sl_value *x;
        if (a->strval ? r->vals[a->col].isnull
            : a->fn == SL_AGG_COLLECT ? !sl_agg_collect_value(a, r, &x)
                                      : !a->distinct || !sl_agg_distinct_value(a, r, tmp, &p, &len))
            continue;
        if (st->ndout == st->doutcap) {
            st->doutcap = st->doutcap ? st->doutcap * 2 : 64;
            st->dout = sl_realloc(st->dout, st->doutcap * sizeof *st->dout);
        }
        ov_dval *d = &st->dout[st->ndout++];
        d->item = i;
        d->v = r->vals[a->col];
        if (sl_type_is_var(a->in_type)) {
            grow(&st->dbytes, &st->dbcap, st->dblen + d->v.v.s.len + 1);
            if (d->v.v.s.len) memcpy(st->dbytes + st->dblen, d->v.v.s.p, d->v.v.s.len);
            d->v.v.s.p = (const char *)(uintptr_t)st->dblen;
            st->dblen += d->v.v.s.len;
        }
    }
    for (int i = 0; pl->list_counted && i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        const sl_value *x = o->kind == OUT_LISTAGG && o->distinct ? list_value(o, r) : NULL;
        if (!x) continue;
        if (st->ndout == st->doutcap) {
            st->doutcap = st->doutcap ? st->doutcap * 2 : 64;
            st->dout = sl_realloc(st->dout, st->doutcap * sizeof *st->dout);
        }
        ov_dval *d = &st->dout[st->ndout++];
        d->item = -1 - i;
        d->v = *x;
        grow(&st->dbytes, &st->dbcap, st->dblen + x->v.s.len + 1);
        if (x->v.s.len) memcpy(st->dbytes + st->dblen, x->v.s.p, x->v.s.len);
        d->v.v.s.p = (const char *)(uintptr_t)st->dblen;
        st->dblen += x->v.s.len;
    }
    return 0;
}

/* The records [head, nhead) leave the frame: their DISTINCT values' counts
 * go down, a value whose last copy left is folded out of the accumulator. */
static int distinct_evict(sl_op *op, ov_state *st, int64_t head, int64_t nhead)
{
    const ov_plan *pl = op->plan;
    st->ndout = st->dblen = 0;
    if (frame_walk(op, st, head, nhead, copy_distinct, NULL, NULL) != SL_OK) return SL_ERR;
    for (int c = 0; c < op->in->n; c++) st->pvals[c] = (sl_value){.isnull = true};
    for (size_t k = 0; k < st->ndout; k++) {
        if (st->dout[k].item < 0) { /* a LISTAGG (DISTINCT) value */
            const sl_value *x = &st->dout[k].v;
            if (lcount_step(op, st, &pl->outs[-1 - st->dout[k].item],
                            st->dbytes + (uintptr_t)x->v.s.p, x->v.s.len, -1, 0) != SL_OK)
                return SL_ERR;
            continue;
        }
        const sl_agg *a = &pl->aggs.aggs[st->dout[k].item];
        sl_value v = st->dout[k].v;
        if (sl_type_is_var(a->in_type))
            v.v.s.p = (const char *)st->dbytes + (uintptr_t)v.v.s.p;
        st->pvals[a->col] = v;
        if (a->filter >= 0) st->pvals[a->filter] = (sl_value){.v.i = 1}; /* it counted */
        sl_row r = {.kind = SL_KIND_INSERT, .n = op->in->n, .vals = st->pvals};
        int rc = a->strval ? strmm_step(op, st, st->dout[k].item, &r, -1)
                 : a->fn == SL_AGG_COLLECT ? collect_step(op, st, st->dout[k].item, &r, -1)
                                           : dist_step(op, st, acc_of(st), st->dout[k].item, &r, -1);
        if (rc != SL_OK) return SL_ERR;
        st->pvals[a->col] = (sl_value){.isnull = true};
        if (a->filter >= 0) st->pvals[a->filter] = (sl_value){.isnull = true};
    }
    return SL_OK;
}

static int first_nonnull(sl_op *op, ov_state *st, int64_t idx, int64_t t, const sl_row *r,
                         void *ctx)
{
    SL_UNUSED(op);
    SL_UNUSED(st);
    SL_UNUSED(idx);
    SL_UNUSED(t);
    return !r->vals[*(const int *)ctx].isnull;
}

/* Records leave the frame from its head: those of time < lo (keep < 0, a
 * RANGE frame), or all but the last `keep` (ROWS). Their rows are retracted
 * from the accumulator; MIN and MAX are rebuilt from the rest when an
 * extremum left, FIRST_VALUE moves to the next non-NULL value. An emptied
 * frame starts again at 0 with a fresh accumulator. */
static int frame_evict(sl_op *op, ov_state *st, int64_t lo, int64_t keep)
{
    const ov_plan *pl = op->plan;
    char err[256];
    int64_t head = meta_i64(st, M_HEAD), tail = meta_i64(st, M_TAIL), nhead;
    if (head == tail || (keep >= 0 ? tail - head <= keep : meta_i64(st, M_FIRST) >= lo))
        return SL_OK;
    evict_ctx e = {.lo = lo, .keep = keep, .tail = tail};
    if (frame_walk(op, st, head, tail, evict_one, &e, &nhead) != SL_OK) return SL_ERR;
    if (e.failed) return udf_failed(op);
    if (nhead == head) return SL_OK;
    if (pl->counted && distinct_evict(op, st, head, nhead) != SL_OK)
        return SL_ERR;
    uint8_t ns[OV_TNS];
    for (int64_t c = head / OV_CHUNK; c < nhead / OV_CHUNK; c++) {
        chunk_ns(ns, c);
        if (sl_kstate_del(op->kstate, st->sid_frame, ns, OV_TNS, err, sizeof err) != SL_OK)
            return state_err(op, err);
    }
    if (nhead == tail) { /* empty */
        st->tlen = 0;
        memset(st->meta + 8 * M_HEAD, 0, pl->metalen - 8 * M_HEAD);
        return SL_OK;
    }
    meta_set(st, M_HEAD, nhead);
    meta_set(st, M_FIRST, e.stop_t);
    if (pl->rebuild) { /* the whole accumulator, from the rows left */
        add_ctx a = {acc_of(st), false};
        sl_agg_init(&pl->aggs, a.acc);
        if (frame_walk(op, st, nhead, tail, add_rec, &a, NULL) != SL_OK) return SL_ERR;
        if (a.failed) return udf_failed(op);
    } else if (e.dirty) {
        add_ctx sc = {st->scratch, false};
        sl_agg_init(&pl->aggs, st->scratch);
        if (frame_walk(op, st, nhead, tail, add_rec, &sc, NULL) != SL_OK) return SL_ERR;
        if (sc.failed) return udf_failed(op);
        for (int i = 0; i < pl->aggs.n; i++) {
            const sl_agg *a = &pl->aggs.aggs[i];
            if (a->fn != SL_AGG_MIN && a->fn != SL_AGG_MAX) continue;
            int64_t k = 0;
            bool has = sl_agg_minmax_get(a, st->scratch, &k);
            sl_agg_minmax_set(a, acc_of(st), has, k);
        }
    }
    for (int i = 0; i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        if (o->kind != OUT_FIRST && o->kind != OUT_LAST) continue;
        uint8_t *pos = st->meta + OV_META + pl->aggs.size + 8 * (size_t)o->vi;
        int64_t at = sl_get_lei64(pos) - 1;
        if (at < 0 || at >= nhead) continue;
        if (o->kind == OUT_LAST) { /* every later record's value is NULL */
            sl_put_lei64(pos, 0);
            continue;
        }
        int64_t next;
        if (frame_walk(op, st, nhead, tail, first_nonnull, (void *)&o->col, &next) != SL_OK)
            return SL_ERR;
        sl_put_lei64(pos, next < tail ? next + 1 : 0);
    }
    return SL_OK;
}

/* ---- value functions ------------------------------------------------------------ */

static bool is_bytes(sl_type t) { return t == SL_T_STRING || t == SL_T_BYTES; }

/* Output i's value x into st->vres[i], its bytes copied. */
static void vres_copy(ov_state *st, int i, const sl_value *x, sl_type type)
{
    st->vres[i] = *x;
    if (x->isnull || !is_bytes(type)) return;
    if (x->v.s.len > st->vcap[i]) {
        st->vcap[i] = (size_t)x->v.s.len * 2;
        st->vcopy[i] = sl_realloc(st->vcopy[i], st->vcap[i]);
    }
    if (x->v.s.len) memcpy(st->vcopy[i], x->v.s.p, x->v.s.len);
    st->vres[i].v.s.p = st->vcopy[i];
}

typedef struct vres_ctx {
    int out, col;
    sl_type type;
} vres_ctx;

static int take_value(sl_op *op, ov_state *st, int64_t idx, int64_t t, const sl_row *r, void *ctx)
{
    SL_UNUSED(op);
    SL_UNUSED(idx);
    SL_UNUSED(t);
    const vres_ctx *v = ctx;
    vres_copy(st, v->out, &r->vals[v->col], v->type);
    return 1;
}

/* Bounded frames: FIRST_VALUE / LAST_VALUE of the frame into st->vres, read
 * from the records meta points at. */
static int frame_values(sl_op *op, ov_state *st)
{
    const ov_plan *pl = op->plan;
    for (int i = 0; i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        if (o->kind != OUT_FIRST && o->kind != OUT_LAST) continue;
        int64_t at = sl_get_lei64(st->meta + OV_META + pl->aggs.size + 8 * (size_t)o->vi) - 1;
        st->vres[i] = (sl_value){.isnull = true};
        if (at < 0) continue;
        vres_ctx v = {i, o->col, op->in->fields[o->col].type};
        if (frame_walk(op, st, at, at + 1, take_value, &v, NULL) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

/* Unbounded frames keep, per key, the first or last non-NULL value
 * ("over-values" namespace: u16 function, u32 0) and LAG's last n + 1
 * values (slot = position modulo n + 1); the meta value counts them. A value
 * is u8 NULL, then 8 bytes (number) or the bytes (STRING, BYTES). */
static void vals_ns(uint8_t ns[6], int vi, uint32_t slot)
{
    ns[0] = (uint8_t)(vi >> 8);
    ns[1] = (uint8_t)vi;
    sl_put_be32(ns + 2, slot);
}

static int val_put(sl_op *op, ov_state *st, const ov_out *o, uint32_t slot, const sl_value *x)
{
    char err[256];
    sl_type t = op->in->fields[o->col].type;
    size_t len = 1 + (x->isnull ? 0 : is_bytes(t) ? x->v.s.len : 8);
    if (len > st->venccap) {
        st->venccap = len * 2;
        st->venc = sl_realloc(st->venc, st->venccap);
    }
    st->venc[0] = x->isnull;
    if (!x->isnull && is_bytes(t)) memcpy(st->venc + 1, x->v.s.p, x->v.s.len);
    else if (!x->isnull) memcpy(st->venc + 1, &x->v, 8);
    uint8_t ns[6];
    vals_ns(ns, o->vi, slot);
    if (sl_kstate_put(op->kstate, st->sid_vals, ns, sizeof ns, st->venc, len, err, sizeof err) !=
        SL_OK)
        return state_err(op, err);
    return SL_OK;
}

/* Output i's stored value of slot into st->vres[i] (its bytes copied). */
static int val_get(sl_op *op, ov_state *st, int i, uint32_t slot)
{
    const ov_plan *pl = op->plan;
    const ov_out *o = &pl->outs[i];
    char err[256];
    const void *val;
    size_t vlen;
    uint8_t ns[6];
    vals_ns(ns, o->vi, slot);
    int rc = sl_kstate_get(op->kstate, st->sid_vals, ns, sizeof ns, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    sl_type t = op->in->fields[o->col].type;
    const uint8_t *b = val;
    if (rc == SL_DONE || vlen < 1 || (!b[0] && !is_bytes(t) && vlen != 9))
        return sl_op_fail(op, "vertex '%s': its state is damaged (a value of %s)", pl->vid,
                          op->out->fields[op->in->n + i].name);
    sl_value *x = &st->vres[i];
    memset(x, 0, sizeof *x);
    x->isnull = b[0];
    if (x->isnull) return SL_OK;
    if (!is_bytes(t)) {
        memcpy(&x->v, b + 1, 8);
        return SL_OK;
    }
    if (vlen - 1 > st->vcap[i]) {
        st->vcap[i] = (vlen - 1) * 2;
        st->vcopy[i] = sl_realloc(st->vcopy[i], st->vcap[i]);
    }
    if (vlen > 1) memcpy(st->vcopy[i], b + 1, vlen - 1);
    x->v.s.p = st->vcopy[i];
    x->v.s.len = (uint32_t)(vlen - 1);
    return SL_OK;
}

static uint8_t *val_count(const ov_plan *pl, ov_state *st, const ov_out *o)
{
    return st->meta + OV_META + pl->aggs.size + 8 * (size_t)o->vi;
}

/* Unbounded frames: row r joins the key's values. */
static int vals_add(sl_op *op, ov_state *st, const sl_row *r)
{
    const ov_plan *pl = op->plan;
    for (int i = 0; i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        if (o->kind < OUT_FIRST || o->kind == OUT_LISTAGG) continue;
        const sl_value *x = &r->vals[o->col];
        uint8_t *cnt = val_count(pl, st, o);
        int64_t c = sl_get_lei64(cnt);
        if (o->kind == OUT_LAG) {
            if (val_put(op, st, o, (uint32_t)(c % (o->offset + 1)), x) != SL_OK) return SL_ERR;
            sl_put_lei64(cnt, c + 1);
        } else if (!x->isnull && (o->kind == OUT_LAST || c == 0)) {
            if (val_put(op, st, o, 0, x) != SL_OK) return SL_ERR;
            sl_put_lei64(cnt, 1);
        }
    }
    return SL_OK;
}

/* Unbounded frames: the values for emitting row r into st->vres. LAG(x, n)
 * is the value n rows before the last one added (its default, or NULL,
 * while fewer were), as Flink's LagAggFunction keeps it. */
static int vals_get(sl_op *op, ov_state *st, const sl_row *r)
{
    const ov_plan *pl = op->plan;
    for (int i = 0; i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        if (o->kind < OUT_FIRST || o->kind == OUT_LISTAGG) continue;
        int64_t c = sl_get_lei64(val_count(pl, st, o));
        if (o->kind == OUT_LAG && c < o->offset + 1) {
            if (o->dcol >= 0) st->vres[i] = r->vals[o->dcol];
            else st->vres[i] = (sl_value){.isnull = true};
        } else if (o->kind != OUT_LAG && c == 0) {
            st->vres[i] = (sl_value){.isnull = true};
        } else if (val_get(op, st, i, o->kind == OUT_LAG ? (uint32_t)(c % (o->offset + 1)) : 0) !=
                   SL_OK) {
            return SL_ERR;
        }
    }
    return SL_OK;
}

/* RANK() and DENSE_RANK() of a row of order time t that is row number
 * rownum of its partition, as Flink's RankAggFunction and
 * DenseRankAggFunction step: a time other than the last one's starts a new
 * rank (RANK: the row number; DENSE_RANK: one more), peers -- rows of the
 * same time, which the RANGE frame emits together after adding them all --
 * share it. Two meta slots each: the last time, the rank (0: none yet). */
static int64_t rank_of(const ov_plan *pl, ov_state *st, const ov_out *o, int64_t rownum, int64_t t)
{
    uint8_t *last = st->meta + OV_META + pl->aggs.size + 8 * (size_t)o->vi, *rank = last + 8;
    int64_t rk = sl_get_lei64(rank);
    if (rk != 0 && sl_get_lei64(last) == t) return rk;
    rk = o->kind == OUT_RANK ? rownum : rk + 1;
    sl_put_lei64(last, t);
    sl_put_lei64(rank, rk);
    return rk;
}

/* Emit input row r (decoded into st->vals or borrowed) of order time t with
 * the results of acc; the output row's timestamp is ts. */
static int emit_with(sl_op *op, ov_state *st, const sl_row *r, const uint8_t *acc, int64_t rownum,
                     int64_t t, int64_t ts)
{
    const ov_plan *pl = op->plan;
    int n = op->in->n;
    memcpy(st->outv, r->vals, sizeof *st->outv * (size_t)n);
    size_t mark = op->scratch.used; /* a function's string results, dropped once emitted */
    if (sl_agg_result_in(&pl->aggs, acc, &op->scratch, st->res) != SL_OK) return udf_failed(op);
    for (int i = 0; (pl->aggs.has_collect || pl->aggs.has_strval) && i < pl->aggs.n; i++) {
        const sl_agg *a = &pl->aggs.aggs[i];
        if (a->fn == SL_AGG_COLLECT && collect_result(op, st, i, &st->res[i]) != SL_OK)
            return SL_ERR;
        if (a->strval && strmm_result(op, st, i, &st->res[i]) != SL_OK) return SL_ERR;
    }
    if (pl->nval && pl->preceding < 0 && vals_get(op, st, r) != SL_OK) return SL_ERR;
    for (int i = 0; pl->nlist && i < pl->nout; i++)
        if (pl->outs[i].kind == OUT_LISTAGG && list_result(op, st, i) != SL_OK) return SL_ERR;
    for (int i = 0; i < pl->nout; i++) {
        sl_value *o = &st->outv[n + i];
        switch (pl->outs[i].kind) {
        case OUT_AGG: *o = st->res[pl->outs[i].agg]; break;
        case OUT_ROWNUM:
            memset(o, 0, sizeof *o);
            o->v.i = rownum;
            break;
        case OUT_RANK:
        case OUT_DENSE:
            memset(o, 0, sizeof *o);
            o->v.i = rank_of(pl, st, &pl->outs[i], rownum, t);
            break;
        default: *o = st->vres[i]; break;
        }
    }
    sl_row out = {.kind = SL_KIND_INSERT, .n = n + pl->nout, .vals = st->outv, .ts = ts};
    int rc = sl_op_emit(op, &out);
    op->scratch.used = mark;
    return rc;
}

/* ---- LISTAGG: the frame's values in the order they entered it ------------------- */

/* Row r's value of LISTAGG o, NULL when it has none or its FILTER is not true. */
static const sl_value *list_value(const ov_out *o, const sl_row *r)
{
    const sl_value *x = &r->vals[o->col];
    if (x->isnull || (o->fcol >= 0 && (r->vals[o->fcol].isnull || !r->vals[o->fcol].v.i)))
        return NULL;
    return x;
}

/* Bounded frames, LISTAGG (DISTINCT): a copy of value p joins (+1) or leaves
 * (-1) the frame. "over-distinct" (u16 o->vi, the value's bytes): i64
 * copies in the frame, i64 the number of the frame record whose copy
 * entered when there was none -- the list's order, as Flink's distinct
 * view adds a value to its list at its first copy and takes it out at its
 * last. */
static int lcount_step(sl_op *op, ov_state *st, const ov_out *o, const void *p, size_t len,
                       int sign, int64_t seq)
{
    char err[256];
    grow(&st->dns, &st->dnscap, len + 2);
    st->dns[0] = (uint8_t)(o->vi >> 8);
    st->dns[1] = (uint8_t)o->vi;
    if (len) memcpy(st->dns + 2, p, len);
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_dist, st->dns, len + 2, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    if (rc == SL_OK && vlen != 16) return damaged(op, "a LISTAGG value's count");
    int64_t n = rc == SL_DONE ? 0 : sl_get_lei64(val);
    if (rc == SL_OK) seq = sl_get_lei64((const uint8_t *)val + 8);
    if (n < 0 || (sign < 0 && n == 0)) return damaged(op, "a LISTAGG value's count");
    n += sign;
    if (n == 0) {
        rc = sl_kstate_del(op->kstate, st->sid_dist, st->dns, len + 2, err, sizeof err);
    } else {
        uint8_t c[16];
        sl_put_lei64(c, n);
        sl_put_lei64(c + 8, seq);
        rc = sl_kstate_put(op->kstate, st->sid_dist, st->dns, len + 2, c, 16, err, sizeof err);
    }
    return rc == SL_OK ? SL_OK : state_err(op, err);
}

/* UNBOUNDED frames: x joins the end of LISTAGG o's list ("over-values",
 * namespace u16 o->vi, u32 0: the list's text; none while it is empty). */
static int list_append(sl_op *op, ov_state *st, const ov_out *o, const sl_value *x)
{
    char err[256];
    uint8_t ns[6];
    vals_ns(ns, o->vi, 0);
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_vals, ns, sizeof ns, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    sl_buf_reset(&st->lbuf);
    if (rc == SL_OK) {
        sl_buf_put(&st->lbuf, val, vlen);
        sl_buf_put(&st->lbuf, o->sep, o->seplen);
    }
    sl_buf_put(&st->lbuf, x->v.s.p, x->v.s.len);
    if (sl_kstate_put(op->kstate, st->sid_vals, ns, sizeof ns, st->lbuf.p, st->lbuf.len, err,
                      sizeof err) != SL_OK)
        return state_err(op, err);
    return SL_OK;
}

/* Row r enters the frame of LISTAGG o: an UNBOUNDED frame's list grows (with
 * DISTINCT, by a value's first copy only); a bounded frame's DISTINCT values
 * are counted (its list is read from the frame's records). */
static int list_add(sl_op *op, ov_state *st, const ov_out *o, const sl_row *r)
{
    const ov_plan *pl = op->plan;
    const sl_value *x = list_value(o, r);
    if (!x) return SL_OK;
    if (pl->preceding >= 0)
        return o->distinct ? lcount_step(op, st, o, x->v.s.p, x->v.s.len, +1,
                                         meta_i64(st, M_TAIL) - 1)
                           : SL_OK;
    if (o->distinct) {
        int64_t n;
        if (count_step(op, st, o->vi, x->v.s.p, x->v.s.len, +1, &n) != SL_OK) return SL_ERR;
        if (n > 1) return SL_OK;
    }
    return list_append(op, st, o, x);
}

typedef struct list_walk {
    const ov_out *o;
    sl_buf *out;
    bool any;
} list_walk;

static int list_walk_fn(sl_op *op, ov_state *st, int64_t idx, int64_t t, const sl_row *r,
                        void *ctx)
{
    SL_UNUSED(op);
    SL_UNUSED(st);
    SL_UNUSED(idx);
    SL_UNUSED(t);
    list_walk *w = ctx;
    const sl_value *x = list_value(w->o, r);
    if (!x) return 0;
    if (w->any) sl_buf_put(w->out, w->o->sep, w->o->seplen);
    sl_buf_put(w->out, x->v.s.p, x->v.s.len);
    w->any = true;
    return 0;
}

typedef struct list_scan {
    int item;
    sl_buf *out;        /* [i64 order][u32 length][bytes] per value */
} list_scan;

static int list_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    list_scan *c = ctx;
    const uint8_t *n = ns;
    if (nslen < 2 || vlen != 16 || ((n[0] << 8) | n[1]) != c->item) return 0;
    uint8_t hdr[12];
    memcpy(hdr, (const uint8_t *)val + 8, 8);
    sl_put_le32(hdr + 8, (uint32_t)(nslen - 2));
    sl_buf_put(c->out, hdr, 12);
    sl_buf_put(c->out, n + 2, nslen - 2);
    return 0;
}

typedef struct list_ent {
    int64_t seq;
    size_t off;
} list_ent;

static int list_ent_cmp(const void *a, const void *b)
{
    int64_t x = ((const list_ent *)a)->seq, y = ((const list_ent *)b)->seq;
    return (x > y) - (x < y);
}

/* LISTAGG output i of the current key's frame into st->vres[i] (its bytes
 * in st->vcopy[i]); NULL while the frame has no value. */
static int list_result(sl_op *op, ov_state *st, int i)
{
    const ov_plan *pl = op->plan;
    const ov_out *o = &pl->outs[i];
    char err[256];
    bool any = false;
    sl_buf_reset(&st->lbuf);
    if (pl->preceding < 0) { /* the stored list */
        uint8_t ns[6];
        vals_ns(ns, o->vi, 0);
        const void *val;
        size_t vlen;
        int rc = sl_kstate_get(op->kstate, st->sid_vals, ns, sizeof ns, &val, &vlen, err,
                               sizeof err);
        if (rc == SL_ERR) return state_err(op, err);
        if (rc == SL_OK) sl_buf_put(&st->lbuf, val, vlen);
        any = rc == SL_OK;
    } else if (!o->distinct) { /* the frame's records */
        list_walk w = {o, &st->lbuf, false};
        if (frame_walk(op, st, meta_i64(st, M_HEAD), meta_i64(st, M_TAIL), list_walk_fn, &w,
                       NULL) != SL_OK)
            return SL_ERR;
        any = w.any;
    } else { /* the counted values, in the order they entered */
        sl_buf_reset(&st->cscan);
        sl_buf_reset(&st->cidx);
        list_scan c = {o->vi, &st->cscan};
        if (sl_kstate_scan_key(op->kstate, st->sid_dist, list_scan_fn, &c, err, sizeof err) ==
            SL_ERR)
            return state_err(op, err);
        const uint8_t *b = sl_buf_u8(&st->cscan);
        for (size_t pos = 0; pos < st->cscan.len; pos += 12 + sl_get_le32(b + pos + 8)) {
            list_ent e = {sl_get_lei64(b + pos), pos};
            sl_buf_put(&st->cidx, &e, sizeof e);
        }
        size_t n = st->cidx.len / sizeof(list_ent);
        list_ent *es = (list_ent *)st->cidx.p;
        if (n > 1) qsort(es, n, sizeof *es, list_ent_cmp);
        for (size_t k = 0; k < n; k++) {
            if (k) sl_buf_put(&st->lbuf, o->sep, o->seplen);
            sl_buf_put(&st->lbuf, b + es[k].off + 12, sl_get_le32(b + es[k].off + 8));
        }
        any = n > 0;
    }
    if (!any) {
        st->vres[i] = (sl_value){.isnull = true};
        return SL_OK;
    }
    sl_value x = {.isnull = false};
    x.v.s.p = st->lbuf.len ? (const char *)st->lbuf.p : "";
    x.v.s.len = (uint32_t)st->lbuf.len;
    vres_copy(st, i, &x, SL_T_STRING);
    if (!st->vres[i].v.s.p) st->vres[i].v.s.p = ""; /* the empty string */
    return SL_OK;
}

/* ---- emitting ------------------------------------------------------------------- */

/* ROWS n PRECEDING: row r of time t enters the frame, goes out with it, and
 * the frame keeps its last n rows. */
static int rows_one(sl_op *op, ov_state *st, const sl_row *r, int64_t t, int64_t rownum)
{
    const ov_plan *pl = op->plan;
    if (frame_push(op, st, r, t) != SL_OK) return SL_ERR;
    if (acc_add(op, st, acc_of(st), r) != SL_OK) return SL_ERR;
    if (pl->nval && frame_values(op, st) != SL_OK) return SL_ERR;
    if (emit_with(op, st, r, acc_of(st), rownum, t, t) != SL_OK) return SL_ERR;
    return frame_evict(op, st, 0, pl->preceding);
}

/* RANGE p PRECEDING: a key has at most one clean-up timer, at the frame's
 * last time + p + 1, armed while the frame holds rows and none is armed; it
 * empties the frame of a key that went quiet (a later firing evicts anyway). */
static int arm_cleanup(sl_op *op, ov_state *st)
{
    const ov_plan *pl = op->plan;
    int64_t last = meta_i64(st, M_LAST), at = last + pl->preceding + 1;
    if (meta_i64(st, M_ARMED) || meta_i64(st, M_HEAD) == meta_i64(st, M_TAIL) || at <= last)
        return SL_OK;
    meta_set(st, M_ARMED, 1);
    meta_set(st, M_CLEAN_AT, at);
    return sl_op_timer_register(op, pl->proc ? SL_TIME_PROCESSING : SL_TIME_EVENT, at, no_ns, 0);
}

/* RANGE p PRECEDING: the rows of time t (st->held[from, to), or the one row
 * `one`) enter the frame together and go out with it, after what is older
 * than t - p has left it. */
static int range_rows(sl_op *op, ov_state *st, const sl_row *one, size_t from, size_t to,
                      int64_t t)
{
    const ov_plan *pl = op->plan;
    uint8_t *acc = acc_of(st);
    int64_t cnt = meta_i64(st, M_EMITTED);
    sl_row r;
    size_t off = from;
    int rc = frame_evict(op, st, t - pl->preceding, -1);
    if (rc == SL_OK && one) {
        rc = frame_push(op, st, one, t);
        if (rc == SL_OK) rc = acc_add(op, st, acc, one);
    } else {
        while (rc == SL_OK && held_next(op, st, &off, to, &r, &rc)) {
            rc = frame_push(op, st, &r, t);
            if (rc == SL_OK) rc = acc_add(op, st, acc, &r);
        }
    }
    if (rc == SL_OK && pl->nval) rc = frame_values(op, st);
    if (one) {
        if (rc == SL_OK) rc = emit_with(op, st, one, acc, ++cnt, t, t);
    } else {
        off = from;
        while (rc == SL_OK && held_next(op, st, &off, to, &r, &rc))
            rc = emit_with(op, st, &r, acc, ++cnt, t, t);
    }
    meta_set(st, M_EMITTED, cnt);
    return rc;
}

/* Event time: emit the held rows of time T (st->held[from, to)) of the
 * current key; the caller reads and writes st->meta. */
static int fire_held(sl_op *op, ov_state *st, size_t from, size_t to, int64_t T)
{
    const ov_plan *pl = op->plan;
    uint8_t *acc = acc_of(st);
    sl_row r;
    size_t off = from;
    int rc = SL_OK;
    if (pl->preceding >= 0 && !pl->rows) return range_rows(op, st, NULL, from, to, T);
    int64_t cnt = meta_i64(st, M_EMITTED);
    if (pl->preceding < 0 && !pl->rows) /* UNBOUNDED RANGE: the peers join first */
        while (rc == SL_OK && held_next(op, st, &off, to, &r, &rc)) {
            rc = acc_add(op, st, acc, &r);
            if (rc == SL_OK && pl->nval) rc = vals_add(op, st, &r);
        }
    off = from;
    while (rc == SL_OK && held_next(op, st, &off, to, &r, &rc)) {
        if (pl->preceding >= 0) { /* ROWS n */
            rc = rows_one(op, st, &r, T, ++cnt);
            continue;
        }
        if (pl->rows) {
            rc = acc_add(op, st, acc, &r);
            if (rc == SL_OK && pl->nval) rc = vals_add(op, st, &r);
        }
        if (rc == SL_OK) rc = emit_with(op, st, &r, acc, ++cnt, T, T);
    }
    meta_set(st, M_EMITTED, cnt);
    return rc;
}

/* ---- callbacks ------------------------------------------------------------------- */

static int ov_process(sl_op *op, int input, sl_row *row)
{
    const ov_plan *pl = op->plan;
    ov_state *st = op->priv;
    SL_UNUSED(input);
    if (row->kind != SL_KIND_INSERT)
        return sl_op_fail(op, "vertex '%s': OVER aggregation needs an insert-only input, but a %s "
                          "row arrived", pl->vid, sl_rowkind_short(row->kind));
    int64_t t;
    if (!pl->proc) {
        if (row->vals[pl->tcol].isnull)
            return sl_op_fail(op, "vertex '%s': the time attribute '%s' is NULL in a row", pl->vid,
                              op->in->fields[pl->tcol].name);
        t = row->vals[pl->tcol].v.i;
        if (t <= op->current_watermark) { /* its time has been emitted */
            op->metrics.late_dropped++;
            return SL_OK;
        }
    } else {
        t = sl_op_processing_time(op);
    }
    if (meta_read(op, st) != SL_OK) return SL_ERR;
    int rc;
    if (!pl->proc) { /* held until the watermark passes its time */
        rc = held_add(op, st, row, t);
    } else if (pl->preceding < 0) { /* nothing to hold */
        uint8_t *acc = acc_of(st);
        int64_t cnt = meta_i64(st, M_EMITTED) + 1;
        if (acc_add(op, st, acc, row) != SL_OK) return SL_ERR;
        meta_set(st, M_EMITTED, cnt);
        rc = pl->nval ? vals_add(op, st, row) : SL_OK;
        if (rc == SL_OK) rc = emit_with(op, st, row, acc, cnt, t, row->ts);
    } else if (pl->rows) {
        int64_t cnt = meta_i64(st, M_EMITTED) + 1;
        meta_set(st, M_EMITTED, cnt);
        rc = rows_one(op, st, row, t, cnt);
    } else {
        rc = range_rows(op, st, row, 0, 0, t);
        if (rc == SL_OK) rc = arm_cleanup(op, st);
    }
    if (rc == SL_OK) rc = meta_write(op, st);
    return rc;
}

/* A timer at `time`: event time, the held rows the watermark has passed go
 * out, time by time; RANGE, the frame drops what is older than time - p (a
 * clean-up when the key went quiet). */
static int ov_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns,
                       size_t nslen)
{
    ov_state *st = op->priv;
    const ov_plan *pl = op->plan;
    SL_UNUSED(domain);
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    bool range = pl->preceding >= 0 && !pl->rows;
    if (meta_read(op, st) != SL_OK) return SL_ERR;
    memcpy(st->meta0, st->meta, pl->metalen);
    size_t plen = st->plen, tlen = st->tlen;
    if (range && meta_i64(st, M_ARMED) && meta_i64(st, M_CLEAN_AT) == time)
        meta_set(st, M_ARMED, 0); /* this is the clean-up */
    if (range && frame_evict(op, st, time - pl->preceding, -1) != SL_OK) return SL_ERR;
    st->heldlen = 0;
    if (!pl->proc && held_take(op, st, op->current_watermark) != SL_OK) return SL_ERR;
    for (size_t off = 0; off < st->heldlen;) { /* time by time */
        int64_t T = rec_time(st->held + off);
        size_t end = off;
        while (end < st->heldlen && rec_time(st->held + end) == T)
            end += OV_REC + sl_get_le32(st->held + end);
        if (fire_held(op, st, off, end, T) != SL_OK) return SL_ERR;
        off = end;
    }
    if (range && arm_cleanup(op, st) != SL_OK) return SL_ERR;
    if (plen == st->plen && tlen == st->tlen && !memcmp(st->meta0, st->meta, pl->metalen))
        return SL_OK; /* nothing changed */
    return meta_write(op, st);
}

static const sl_op_option ov_options[] = {
    {"partition-by", SL_CT_JSON, NULL, NULL,
     "Partition columns (a list; none: one global partition)."},
    {"order-by", SL_CT_STRING, NULL, NULL,
     "The time attribute column the rows are ordered by (ascending)."},
    {"time", SL_CT_ENUM, "event", "event,processing",
     "Whether order-by is an event-time or a processing-time attribute."},
    {"frame", SL_CT_ENUM, "range", "rows,range",
     "ROWS (counted rows) or RANGE (time) frame, ending at the current row."},
    {"preceding", SL_CT_STRING, "unbounded", NULL,
     "The frame's start: unbounded, or rows (ROWS) or milliseconds (RANGE) before the row."},
    {"aggregates", SL_CT_JSON, NULL, NULL,
     "Aggregate items, as for group_aggregate, and ROW_NUMBER(), FIRST_VALUE(c), LAST_VALUE(c), "
     "LAG(c[, n[, default column]]), LISTAGG([DISTINCT] c[, 'separator']) AS name."},
    SL_AGG_FUNCTIONS_OPTION,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_over_aggregate = {
    .abi = SL_OP_ABI_VERSION,
    .name = "over_aggregate",
    .flags = SL_OPF_KEYED,
    .options = ov_options,
    .plan = ov_plan_new,
    .plan_free = ov_plan_free,
    .open = ov_open,
    .process = ov_process,
    .close = ov_close,
    .on_timer = ov_on_timer,
    .restore_state = ov_restore,
};
