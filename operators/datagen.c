/*
 * datagen.c -- the `datagen` source: rows of generated values, with Flink's
 * options.
 *
 *   rows-per-second        rate of the whole source, shared by its subtasks
 *                          (default 10000, as in Flink)
 *   number-of-rows         total rows of a bounded source (default: none)
 *   seed                   same seed, same rows on every run
 *   fields.<f>.kind        random (default) | sequence
 *   fields.<f>.start/.end  sequence bounds, inclusive (the integer kinds,
 *                          DECIMAL, FLOAT, DOUBLE: whole numbers; STRING:
 *                          the numbers' text)
 *   fields.<f>.min/.max    random numbers, inclusive (the integer kinds,
 *                          FLOAT, DOUBLE, DECIMAL up to 18 digits); DATE,
 *                          TIME and TIMESTAMP(p) as text, uniform between;
 *                          INTERVAL YEAR TO MONTH in months (default
 *                          0..120000) and DAY TO SECOND in milliseconds
 *                          (default the whole BIGINT range), as Flink's
 *   fields.<f>.length      random STRING / BYTES length (default 100, or a
 *                          CHAR(n) / BINARY(n)'s n, at most the declared
 *                          length); ARRAY / MAP / MULTISET size (default 3)
 *   fields.<f>.max-past    random DATE / TIME / TIMESTAMP without min/max:
 *                          now minus up to this duration (none: now)
 *   fields.<f>.null-rate   the share of NULLs, 0..1 (default 0)
 * A nested value's parts take the same options under Flink's names:
 * fields.<row>.<field>.min, fields.<array>.element.length,
 * fields.<map>.key.max, fields.<map>.value.null-rate. A MAP key drawn twice
 * keeps its last value; a MULTISET counts equal elements.
 *
 * The output schema is the vertex's declared "schema". plan() checks every
 * option against it and fails with the vertex and option named.
 *
 * Parallel subtasks split the work so that their union is the source Flink
 * would produce: each sequence's range is cut into p contiguous chunks
 * (subtask i takes chunk i, so start..end appears exactly once), and
 * number-of-rows and rows-per-second are shared out likewise. A subtask
 * ends when its shortest sequence chunk or its share of number-of-rows is
 * used up.
 *
 * Randomness comes from one splitmix64 stream per field, seeded from
 * (seed, subtask, field index): a run is reproducible, subtasks do not
 * repeat each other, and adding a column does not change the others. A
 * nested value's parts draw from their column's stream, depth first.
 * Random strings are lowercase hex, as Flink's are.
 *
 * Pacing: row k of a subtask is due k / rate after the source started. Each
 * run() emits what is due (at most one batch of 1024) and returns SL_AGAIN
 * with op->wake_at_ms when it is ahead of schedule: the time the next row is
 * due, rounded up to a step of DATAGEN_STEP_MS after the pace's anchor. A
 * subtask thus wakes at most 100 times a second whatever its rate (pacing
 * to the millisecond woke it up to 1,000 times, and at a steady 100k rows/s
 * those wake-ups were a fifth of the TaskManager's CPU); a row leaves at most
 * one step after it is due, and the rate over any longer span is unchanged
 * (due times are counted from the anchor, so the rounding never drifts).
 * After a stall
 * (backpressure) at most one second's worth of rows is made up at once, as
 * Flink's rate limiter does. No memory is allocated per row: values live in
 * one row, strings and nested bytes in one arena sized at planning for the
 * largest row the options allow, reset per row.
 *
 * Checkpoints. A subtask's work is a list of shares ("segments"); a fresh
 * subtask has one, the chunk of 1/p described above. A segment holds all it
 * needs to go on: each sequence field's remaining range [next, end], each
 * random field's PRNG state, the rows it still owes (its share of
 * number-of-rows and of the sequences), the rows it has emitted, and the
 * fraction 1/rate_den of rows-per-second it was given. snapshot_state
 * writes the live segments into one blob; restore_state takes the segments
 * of every blob dealt to the subtask. With the same parallelism a subtask
 * gets its own blob back and continues its stream row for row. After
 * rescaling a subtask that gets several blobs serves all their segments,
 * one after the other in the order of the blobs (old subtask 0's first),
 * as Flink's split reader finishes one split before it takes the next;
 * each segment goes on exactly as its old subtask would have (so random
 * fields continue each old PRNG: the union of the new subtasks' rows is
 * exactly the rows the old ones still owed). Taking turns instead would
 * mix far-apart parts of a sequence into one stream, and a watermark
 * derived from it would run ahead of the earlier segment and make its
 * rows late. A subtask that gets no blob has no share and ends at once.
 * The rate stays that of the whole source: a subtask paces itself at the
 * sum of its live segments' fractions, and when a segment ends the others
 * keep theirs.
 *
 * Blob format (little-endian), version 1:
 *   u8 version, "SLDG", u32 nfields, u32 nsegs,
 *   nfields x { u8 kind, u8 type },
 *   nsegs x { u32 rate_den, u8 bounded, u64 remaining, u64 emitted,
 *             nfields x { u64 rng, i64 seq_next, i64 seq_end } },
 *   u64 FNV-1a of everything before it.
 * A blob of another version, another operator, another schema, or one that
 * is damaged or truncated fails the restore with a message saying which.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "jobgraph.h"
#include "operator.h"
#include "blob.h"
#include "splitmix.h"
#include "decimal.h"
#include "temporal.h"

#define DATAGEN_BATCH 1024
#define DATAGEN_STEP_MS 10 /* pacing step: at most 100 wake-ups a second */
#define DATAGEN_MAX_LENGTH (1 << 20)
#define DATAGEN_DEFAULT_LENGTH 100
#define DATAGEN_DEFAULT_COUNT 3           /* elements of an ARRAY/MULTISET, entries of a MAP */
#define DATAGEN_MAX_ROW_BYTES (64u << 20) /* the scratch a row may need at most */

typedef enum { GEN_RANDOM = 0, GEN_SEQUENCE } gen_kind;

/* Per-node options as found in the config, before validation (full keys). */
typedef struct field_opts {
    const char *kind, *start, *end, *min, *max, *length, *max_past, *null_rate;
} field_opts;

/* How one value is made: a column, or an element, key, value or field
 * inside one (kids). Nested nodes draw from their column's stream. */
typedef struct gen_node {
    gen_kind kind;
    const sl_dtype *dt;
    sl_type type;          /* dt->kind */
    const char *path;      /* "r.tags.element", for messages (owned) */
    int64_t start, end;    /* sequence, inclusive (DECIMAL, FLOAT, DOUBLE: whole numbers) */
    int64_t imin, imax;    /* random integers; DECIMAL unscaled; DATE days; TIME, TIMESTAMP ms */
    double dmin, dmax;     /* random FLOAT / DOUBLE */
    bool has_range;        /* DATE / TIME / TIMESTAMP: min and max given (else "now") */
    uint32_t length;       /* STRING / BYTES length; ARRAY, MAP, MULTISET element count */
    int64_t max_past;      /* random DATE / TIME / TIMESTAMP without a range, ms; -1: now */
    uint64_t null_below;   /* a draw below this is NULL (null-rate * 2^64); 0: never */
    int nkids;
    struct gen_node *kids; /* ARRAY/MULTISET: element; MAP: key, value; ROW: its fields */
    size_t scratch;        /* nested kinds: where the kids' values go in datagen_state.scratch
                            * (ARRAY/MAP/MULTISET: 2 x length, ROW: nfields) */
    field_opts o;          /* planning only */
} gen_node;

typedef struct datagen_plan {
    int n;
    gen_node *fields;        /* n entries, in schema order */
    int64_t rows_per_second; /* > 0, whole source */
    int64_t number_of_rows;  /* -1: unbounded */
    bool has_seed;
    uint64_t seed;
    size_t row_bytes;        /* arena bytes one row can need at most */
    size_t nscratch;         /* values of scratch the nested nodes need */
    bool need_wall_clock;    /* some value is "now" */
} datagen_plan;

/* One share of the source's work (see the checkpoint note above). */
typedef struct dg_seg {
    uint64_t *rng;      /* per field: splitmix64 state */
    int64_t *seq_next;  /* per field: next sequence value */
    int64_t *seq_end;   /* per field: last sequence value of this share */
    bool bounded;       /* some sequence or number-of-rows limits the share */
    uint64_t remaining; /* rows this share still owes, when bounded */
    uint64_t emitted;   /* rows of this share emitted so far, over restores */
    uint32_t rate_den;  /* this share paces at rows-per-second / rate_den */
} dg_seg;

typedef struct datagen_state {
    const datagen_plan *plan;
    dg_seg *segs;         /* live shares, served in order */
    int nsegs;
    double rows_per_ms;   /* this subtask's rate: the sum of its shares' */
    int64_t base_ms;      /* schedule anchor, sl_mono_ms clock */
    uint64_t base_count;  /* rows allowed at base_ms */
    uint64_t emitted;     /* rows emitted since the schedule's start */
    sl_value *vals;       /* the one row, reused */
    sl_arena arena;       /* strings and nested bytes of the current row */
    sl_value *scratch;    /* the nested nodes' element values (plan->nscratch) */
} datagen_state;

/* ---- plan ------------------------------------------------------------- */

static int conf_double(const sl_vertex *v, const char *key, double *out, char *err,
                       size_t errlen)
{
    json_t *j = json_object_get(v->config, key);
    if (json_is_number(j)) {
        *out = json_number_value(j);
        return SL_OK;
    }
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        char *end;
        errno = 0;
        double d = strtod(s, &end);
        while (*end == ' ') end++;
        if (end != s && *end == '\0' && errno == 0 && isfinite(d)) {
            *out = d;
            return SL_OK;
        }
    }
    return sl_seterr(err, errlen, "vertex '%s': option '%s' must be a finite number", v->id, key);
}

/* The range of an integer kind (DECIMAL: 18 digits, what a draw covers). */
static void int_bounds(sl_type t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case SL_T_TINYINT: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case SL_T_SMALLINT: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case SL_T_INT: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case SL_T_DECIMAL: *lo = -999999999999999999LL, *hi = 999999999999999999LL; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* An integer option that must also fit type t. */
static int conf_int_for(const sl_vertex *v, const char *key, sl_type t, int64_t *out, char *err,
                        size_t errlen)
{
    if (sl_vconf_int(v, key, 0, out, err, errlen) != SL_OK) return SL_ERR;
    int64_t lo, hi;
    int_bounds(t, &lo, &hi);
    if (*out < lo || *out > hi)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': %lld does not fit a%s %s column",
                         v->id, key, (long long)*out, t == SL_T_INT ? "n" : "", sl_type_name(t));
    return SL_OK;
}

/* The text of an option (a number given as JSON is printed). */
static const char *conf_text(const sl_vertex *v, const char *key, char *buf, size_t cap)
{
    json_t *j = json_object_get(v->config, key);
    if (json_is_string(j)) return json_string_value(j);
    if (json_is_integer(j)) snprintf(buf, cap, "%lld", (long long)json_integer_value(j));
    else if (json_is_real(j)) snprintf(buf, cap, "%.17g", json_real_value(j));
    else buf[0] = '\0';
    return buf;
}

/* A DECIMAL bound: its unscaled value at the node's scale, within 18 digits. */
static int conf_decimal(const sl_vertex *v, const char *key, const gen_node *g, int64_t *out,
                        char *err, size_t errlen)
{
    char buf[64];
    const char *s = conf_text(v, key, buf, sizeof buf);
    sl_dec_type t = {(uint8_t)g->dt->p, (uint8_t)g->dt->s};
    sl_dec d;
    if (sl_dec_parse(s, strlen(s), t, &d) != SL_DEC_OK)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': '%s' is no %s value", v->id,
                         key, s, g->dt->text);
    __int128 x = sl_dec_i128(d);
    if (x < -999999999999999999LL || x > 999999999999999999LL)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': a random DECIMAL's bounds may "
                         "have at most 18 digits", v->id, key);
    *out = (int64_t)x;
    return SL_OK;
}

/* A DATE / TIME / TIMESTAMP bound as text, into days / ms of the day / ms. */
static int conf_temporal(const sl_vertex *v, const char *key, const gen_node *g, int64_t *out,
                         char *err, size_t errlen)
{
    char buf[64];
    const char *s = conf_text(v, key, buf, sizeof buf);
    int rc = SL_ERR;
    if (g->type == SL_T_DATE) {
        int32_t d;
        if ((rc = sl_date_parse(s, strlen(s), &d)) == SL_OK) *out = d;
    } else if (g->type == SL_T_TIME) {
        int32_t ms;
        if ((rc = sl_time_parse(s, strlen(s), 3, &ms)) == SL_OK) *out = ms;
    } else {
        sl_ts ts;
        if ((rc = sl_timestamp_parse(s, strlen(s), 3, &ts)) == SL_OK) *out = ts.ms;
    }
    if (rc != SL_OK)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': '%s' is no %s value", v->id,
                         key, s, g->dt->text);
    return SL_OK;
}

static bool is_int_kind(sl_type t)
{
    return t == SL_T_TINYINT || t == SL_T_SMALLINT || t == SL_T_INT || t == SL_T_BIGINT;
}
static bool is_temporal(sl_type t)
{
    return t == SL_T_DATE || t == SL_T_TIME || t == SL_T_TIMESTAMP;
}

/* The declared length of CHAR(n) / VARCHAR(n) / BINARY(n) / VARBINARY(n). */
static uint32_t declared_len(const sl_dtype *dt)
{
    return dt->p > 0 && dt->p < DATAGEN_MAX_LENGTH ? (uint32_t)dt->p : DATAGEN_MAX_LENGTH;
}

/* Validate one node's options (and its kids') and fill it. */
static int plan_node(const sl_vertex *v, gen_node *g, bool top, char *err, size_t errlen)
{
    const char *id = v->id;
    const field_opts *o = &g->o;
    g->type = g->dt->kind;
    g->kind = GEN_RANDOM;
    g->max_past = -1;
    if (o->kind) {
        const char *k = sl_vconf_str(v, o->kind, NULL);
        if (k && !strcasecmp(k, "sequence")) g->kind = GEN_SEQUENCE;
        else if (!k || strcasecmp(k, "random") != 0)
            return sl_seterr(err, errlen,
                             "vertex '%s': option '%s' must be 'random' or 'sequence'", id,
                             o->kind);
    }
    if (o->null_rate) {
        double r;
        if (conf_double(v, o->null_rate, &r, err, errlen)) return SL_ERR;
        if (r < 0 || r > 1)
            return sl_seterr(err, errlen, "vertex '%s': option '%s' must be in 0..1", id,
                             o->null_rate);
        g->null_below = r >= 1 ? UINT64_MAX : (uint64_t)(r * 18446744073709551616.0);
    }
    sl_type t = g->type;

    if (g->kind == GEN_SEQUENCE) {
        if (!top)
            return sl_seterr(err, errlen, "vertex '%s': option '%s': only a column can be a "
                             "sequence, not a nested field", id, o->kind);
        const char *stray = o->min ? o->min : o->max ? o->max : o->length ? o->length
                                                                            : o->max_past;
        if (stray)
            return sl_seterr(err, errlen, "vertex '%s': option '%s' does not apply to a sequence "
                                          "field (use start and end)", id, stray);
        if (!is_int_kind(t) && t != SL_T_DECIMAL && t != SL_T_FLOAT && t != SL_T_DOUBLE &&
            t != SL_T_STRING)
            return sl_seterr(err, errlen,
                             "vertex '%s': option '%s': a sequence needs a number or string "
                             "column, '%s' is %s", id, o->kind, g->path, g->dt->text);
        if (!o->start || !o->end)
            return sl_seterr(err, errlen,
                             "vertex '%s': sequence field '%s' needs both 'fields.%s.start' and "
                             "'fields.%s.end'", id, g->path, g->path, g->path);
        sl_type bt = is_int_kind(t) ? t : SL_T_BIGINT;
        if (conf_int_for(v, o->start, bt, &g->start, err, errlen) ||
            conf_int_for(v, o->end, bt, &g->end, err, errlen))
            return SL_ERR;
        if (g->start > g->end)
            return sl_seterr(err, errlen, "vertex '%s': option '%s': start %lld is after end %lld",
                             id, o->start, (long long)g->start, (long long)g->end);
        if (t == SL_T_DECIMAL) {
            /* every value of the sequence must fit the column */
            sl_dec_type dt = {(uint8_t)g->dt->p, (uint8_t)g->dt->s};
            sl_dec d;
            if (sl_dec_from_i64(g->start, dt, &d) != SL_DEC_OK ||
                sl_dec_from_i64(g->end, dt, &d) != SL_DEC_OK)
                return sl_seterr(err, errlen, "vertex '%s': sequence field '%s': %lld..%lld does "
                                 "not fit %s", id, g->path, (long long)g->start,
                                 (long long)g->end, g->dt->text);
        }
        return SL_OK;
    }

    if (o->start || o->end)
        return sl_seterr(err, errlen,
                         "vertex '%s': option '%s' only applies to kind 'sequence'", id,
                         o->start ? o->start : o->end);
    bool ranged = is_int_kind(t) || t == SL_T_DOUBLE || t == SL_T_FLOAT || t == SL_T_DECIMAL ||
                  is_temporal(t) || t == SL_T_INTERVAL_YM || t == SL_T_INTERVAL_DT;
    bool sized = t == SL_T_STRING || t == SL_T_BYTES || t == SL_T_ARRAY || t == SL_T_MAP ||
                 t == SL_T_MULTISET;
    const char *bad = NULL;
    if (!ranged && (o->min || o->max)) bad = o->min ? o->min : o->max;
    else if (!sized && o->length) bad = o->length;
    else if (!is_temporal(t) && o->max_past) bad = o->max_past;
    if (bad)
        return sl_seterr(err, errlen, "vertex '%s': option '%s' does not apply to %s column '%s'",
                         id, bad, g->dt->text, g->path);

    switch (t) {
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
    case SL_T_INT:
    case SL_T_BIGINT:
        int_bounds(t, &g->imin, &g->imax);
        if (o->min && conf_int_for(v, o->min, t, &g->imin, err, errlen)) return SL_ERR;
        if (o->max && conf_int_for(v, o->max, t, &g->imax, err, errlen)) return SL_ERR;
        if (g->imin > g->imax)
            return sl_seterr(err, errlen, "vertex '%s': field '%s': min %lld is above max %lld", id,
                             g->path, (long long)g->imin, (long long)g->imax);
        break;
    case SL_T_INTERVAL_YM:
    case SL_T_INTERVAL_DT: {
        /* Flink's: months as an INT in 0..120000 (10,000 years), milliseconds as a
         * BIGINT over its whole range; min/max in those units, whatever the
         * interval's precision */
        sl_type unit = t == SL_T_INTERVAL_YM ? SL_T_INT : SL_T_BIGINT;
        g->imin = t == SL_T_INTERVAL_YM ? 0 : INT64_MIN;
        g->imax = t == SL_T_INTERVAL_YM ? 120000 : INT64_MAX;
        if (o->min && conf_int_for(v, o->min, unit, &g->imin, err, errlen)) return SL_ERR;
        if (o->max && conf_int_for(v, o->max, unit, &g->imax, err, errlen)) return SL_ERR;
        if (g->imin > g->imax)
            return sl_seterr(err, errlen, "vertex '%s': field '%s': min %lld is above max %lld", id,
                             g->path, (long long)g->imin, (long long)g->imax);
        break;
    }
    case SL_T_DECIMAL: {
        /* default: every value of DECIMAL(p, s) up to 18 digits */
        int digits = g->dt->p < 18 ? g->dt->p : 18;
        int64_t lim = (int64_t)sl_dec_pow10(digits) - 1;
        g->imin = -lim;
        g->imax = lim;
        if (o->min && conf_decimal(v, o->min, g, &g->imin, err, errlen)) return SL_ERR;
        if (o->max && conf_decimal(v, o->max, g, &g->imax, err, errlen)) return SL_ERR;
        if (g->imin > g->imax)
            return sl_seterr(err, errlen, "vertex '%s': field '%s': min is above max", id,
                             g->path);
        break;
    }
    case SL_T_DOUBLE:
    case SL_T_FLOAT:
        /* Flink's defaults: Double/Float.MIN_VALUE .. MAX_VALUE. */
        g->dmin = t == SL_T_DOUBLE ? 4.9e-324 : 1.4e-45;
        g->dmax = t == SL_T_DOUBLE ? DBL_MAX : FLT_MAX;
        if (o->min && conf_double(v, o->min, &g->dmin, err, errlen)) return SL_ERR;
        if (o->max && conf_double(v, o->max, &g->dmax, err, errlen)) return SL_ERR;
        if (g->dmin > g->dmax)
            return sl_seterr(err, errlen, "vertex '%s': field '%s': min %g is above max %g", id,
                             g->path, g->dmin, g->dmax);
        if (t == SL_T_FLOAT && (g->dmin < -FLT_MAX || g->dmax > FLT_MAX))
            return sl_seterr(err, errlen, "vertex '%s': field '%s': min and max must fit a FLOAT",
                             id, g->path);
        break;
    case SL_T_STRING:
    case SL_T_BYTES:
    case SL_T_ARRAY:
    case SL_T_MAP:
    case SL_T_MULTISET: {
        bool coll = sl_type_is_nested(t);
        uint32_t cap = coll ? DATAGEN_MAX_LENGTH : declared_len(g->dt);
        int64_t len = coll ? DATAGEN_DEFAULT_COUNT
                           : (g->dt->variant == SL_DV_CHAR || g->dt->variant == SL_DV_BINARY)
                                 ? (int64_t)cap
                                 : (DATAGEN_DEFAULT_LENGTH < cap ? DATAGEN_DEFAULT_LENGTH : cap);
        if (o->length && sl_vconf_int(v, o->length, 0, &len, err, errlen)) return SL_ERR;
        if (len < 0 || len > cap)
            return sl_seterr(err, errlen, "vertex '%s': option '%s': length %lld is not in 0..%u",
                             id, o->length, (long long)len, cap);
        g->length = (uint32_t)len;
        break;
    }
    case SL_T_DATE:
    case SL_T_TIME:
    case SL_T_TIMESTAMP:
        if ((o->min || o->max) && o->max_past)
            return sl_seterr(err, errlen, "vertex '%s': field '%s': give min and max, or "
                             "max-past, not both", id, g->path);
        if (o->min || o->max) {
            if (!o->min || !o->max)
                return sl_seterr(err, errlen, "vertex '%s': field '%s' needs both min and max",
                                 id, g->path);
            if (conf_temporal(v, o->min, g, &g->imin, err, errlen) ||
                conf_temporal(v, o->max, g, &g->imax, err, errlen))
                return SL_ERR;
            if (g->imin > g->imax)
                return sl_seterr(err, errlen, "vertex '%s': field '%s': min is after max", id,
                                 g->path);
            g->has_range = true;
        } else if (o->max_past) {
            if (sl_vconf_duration(v, o->max_past, 0, &g->max_past, err, errlen)) return SL_ERR;
            if (g->max_past < 0)
                return sl_seterr(err, errlen, "vertex '%s': option '%s' must not be negative", id,
                                 o->max_past);
        }
        break;
    case SL_T_BOOLEAN:
    case SL_T_ROW:
    case SL_T_NULL:
        break;
    default:
        return sl_seterr(err, errlen, "vertex '%s': datagen cannot generate %s column '%s' yet",
                         id, g->dt->text, g->path);
    }
    for (int k = 0; k < g->nkids; k++)
        if (plan_node(v, &g->kids[k], false, err, errlen)) return SL_ERR;
    return SL_OK;
}

/* Build node g for type dt at `path` (and its kids). */
static void node_init(gen_node *g, const sl_dtype *dt, const char *path)
{
    memset(g, 0, sizeof *g);
    g->dt = dt;
    g->path = sl_strdup(path);
    const sl_dtype *kt[2] = {NULL, NULL};
    const char *kn[2] = {"element", NULL};
    switch (dt->kind) {
    case SL_T_ARRAY:
    case SL_T_MULTISET: g->nkids = 1, kt[0] = dt->elem; break;
    case SL_T_MAP: g->nkids = 2, kt[0] = dt->elem, kt[1] = dt->val, kn[0] = "key", kn[1] = "value";
        break;
    case SL_T_ROW: g->nkids = dt->nfields; break;
    default: return;
    }
    g->kids = sl_calloc((size_t)g->nkids, sizeof *g->kids);
    for (int k = 0; k < g->nkids; k++) {
        const sl_dtype *t = dt->kind == SL_T_ROW ? dt->ftypes[k] : kt[k];
        const char *name = dt->kind == SL_T_ROW ? dt->names[k] : kn[k];
        size_t n = strlen(path) + strlen(name) + 2;
        char *p = sl_malloc(n);
        snprintf(p, n, "%s.%s", path, name);
        node_init(&g->kids[k], t, p);
        free(p);
    }
}

static void node_free(gen_node *g)
{
    for (int k = 0; k < g->nkids; k++) node_free(&g->kids[k]);
    free(g->kids);
    free((char *)g->path);
}

/* The node for path "a.b.c" under the columns (NULL if none). */
static gen_node *node_find(gen_node *fields, int n, const char *path, size_t len)
{
    for (int f = 0; f < n; f++) {
        gen_node *g = &fields[f];
        size_t pl = strlen(g->path);
        if (pl == len && !strncasecmp(g->path, path, len)) return g;
        if (pl < len && path[pl] == '.' && !strncasecmp(g->path, path, pl)) {
            gen_node *in = node_find(g->kids, g->nkids, path, len);
            if (in) return in;
        }
    }
    return NULL;
}

/* Arena bytes one value of g can take at most (its kids' values, then its
 * own canonical bytes); gives each nested node its scratch values.
 * Saturates at SIZE_MAX / 4. */
static size_t node_bytes(gen_node *g, size_t *nscratch)
{
    const size_t big = SIZE_MAX / 4;
    size_t per = 0;
    switch (g->type) {
    case SL_T_STRING: /* + 8: the arena aligns each allocation to 8 bytes */
        return (g->kind == GEN_SEQUENCE ? 24 : g->length) + 8;
    case SL_T_BYTES:
        return g->length + 8;
    case SL_T_ARRAY:
    case SL_T_MULTISET:
    case SL_T_MAP:
        for (int k = 0; k < g->nkids; k++) {
            size_t kb = node_bytes(&g->kids[k], nscratch);
            /* a kid's bytes go to the arena and again into the built value */
            per += 2 * kb + 24;
        }
        g->scratch = *nscratch;
        *nscratch += 2 * (size_t)g->length;
        if (g->length && per > big / g->length) return big;
        return 16 + 2 * (size_t)g->length + per * g->length;
    case SL_T_ROW:
        for (int k = 0; k < g->nkids; k++) {
            size_t kb = node_bytes(&g->kids[k], nscratch);
            per += 2 * kb + 24;
            if (per > big) return big;
        }
        g->scratch = *nscratch;
        *nscratch += (size_t)g->nkids;
        return 40 + per;
    default:
        return 0;
    }
}

static bool node_needs_clock(const gen_node *g)
{
    if (is_temporal(g->type) && g->kind == GEN_RANDOM && !g->has_range) return true;
    for (int k = 0; k < g->nkids; k++)
        if (node_needs_clock(&g->kids[k])) return true;
    return false;
}

static void datagen_plan_free(void *p)
{
    datagen_plan *pl = p;
    if (!pl) return;
    for (int f = 0; f < pl->n && pl->fields; f++) node_free(&pl->fields[f]);
    free(pl->fields);
    free(pl);
}

static void *datagen_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    sl_schema *out = pc->out;
    const sl_schema *decl = &v->declared;
    if (decl->n == 0) {
        sl_seterr(err, errlen, "vertex '%s': datagen needs a 'schema' with at least one column",
                  v->id);
        return NULL;
    }
    datagen_plan *pl = sl_calloc(1, sizeof *pl);
    pl->n = decl->n;
    pl->fields = sl_calloc((size_t)decl->n, sizeof *pl->fields);
    for (int f = 0; f < decl->n; f++)
        node_init(&pl->fields[f], decl->fields[f].dt, decl->fields[f].name);

    /* Sort the fields.<path>.<option> keys onto their nodes: a column, its
     * ROW fields by name, an ARRAY's or MULTISET's "element", a MAP's "key"
     * and "value" (Flink's names). */
    const char *key;
    json_t *val;
    json_object_foreach(v->config, key, val) {
        if (strncmp(key, "fields.", 7) != 0) continue;
        const char *name = key + 7, *dot = strrchr(name, '.');
        if (!dot || dot == name || dot[1] == '\0') {
            sl_seterr(err, errlen, "vertex '%s': option '%s' should be fields.<column>.<option>",
                      v->id, key);
            goto fail;
        }
        gen_node *g = node_find(pl->fields, pl->n, name, (size_t)(dot - name));
        if (!g) {
            const char *d1 = memchr(name, '.', (size_t)(dot - name));
            size_t cl = (size_t)((d1 ? d1 : dot) - name);
            char col[256];
            snprintf(col, sizeof col, "%.*s", (int)(cl < 255 ? cl : 255), name);
            if (sl_schema_find(decl, col) < 0)
                sl_seterr(err, errlen, "vertex '%s': option '%s': no column '%s' in the schema",
                          v->id, key, col);
            else
                sl_seterr(err, errlen, "vertex '%s': option '%s': column '%s' has no nested "
                          "field '%.*s' (a ROW's field names, an ARRAY's 'element', a MAP's "
                          "'key' and 'value')", v->id, key, col, (int)(dot - name), name);
            goto fail;
        }
        const char *opt = dot + 1;
        field_opts *o = &g->o;
        const char **slot = !strcmp(opt, "kind")        ? &o->kind
                            : !strcmp(opt, "start")     ? &o->start
                            : !strcmp(opt, "end")       ? &o->end
                            : !strcmp(opt, "min")       ? &o->min
                            : !strcmp(opt, "max")       ? &o->max
                            : !strcmp(opt, "length")    ? &o->length
                            : !strcmp(opt, "max-past")  ? &o->max_past
                            : !strcmp(opt, "null-rate") ? &o->null_rate
                                                        : NULL;
        if (!slot) {
            sl_seterr(err, errlen,
                      "vertex '%s': unknown option '%s' (a field takes kind, start, end, min, "
                      "max, length, max-past, null-rate)", v->id, key);
            goto fail;
        }
        *slot = key;
    }
    size_t bytes = 64;
    for (int f = 0; f < decl->n; f++) {
        gen_node *g = &pl->fields[f];
        if (plan_node(v, g, true, err, errlen)) goto fail;
        size_t nb = node_bytes(g, &pl->nscratch);
        bytes = nb > DATAGEN_MAX_ROW_BYTES ? nb : bytes + nb;
        if (bytes > DATAGEN_MAX_ROW_BYTES) {
            sl_seterr(err, errlen, "vertex '%s': a generated row could take more than %u MiB "
                      "(column '%s'); lower the lengths", v->id, DATAGEN_MAX_ROW_BYTES >> 20,
                      g->path);
            goto fail;
        }
        if (node_needs_clock(g)) pl->need_wall_clock = true;
    }
    pl->row_bytes = bytes;

    pl->rows_per_second = sl_plan_opt_int(pc, "rows-per-second");
    if (pl->rows_per_second <= 0) {
        sl_seterr(err, errlen, "vertex '%s': option 'rows-per-second' must be positive, not %lld",
                  v->id, (long long)pl->rows_per_second);
        goto fail;
    }
    pl->number_of_rows = sl_plan_opt_isset(pc, "number-of-rows")
                             ? sl_plan_opt_int(pc, "number-of-rows") : -1;
    if (pl->number_of_rows < -1 ||
        (pl->number_of_rows == -1 && sl_plan_opt_isset(pc, "number-of-rows"))) {
        sl_seterr(err, errlen, "vertex '%s': option 'number-of-rows' must not be negative",
                  v->id);
        goto fail;
    }
    pl->has_seed = sl_plan_opt_isset(pc, "seed");
    pl->seed = (uint64_t)sl_plan_opt_int(pc, "seed");

    sl_schema_copy(out, decl);
    return pl;
fail:
    datagen_plan_free(pl);
    return NULL;
}

/* ---- randomness ------------------------------------------------------- */

static uint64_t fresh_seed(void)
{
    uint64_t s;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s) s = (uint64_t)sl_mono_ns();
    return s;
}

/* ---- running ---------------------------------------------------------- */

/* Split `total` items (total = span + 1, up to 2^64) into p contiguous
 * chunks; chunk i starts at *offset and has *count items. */
static void split_chunk(uint64_t span, int p, int i, uint64_t *offset, uint64_t *count)
{
    uint64_t up = (uint64_t)p, ui = (uint64_t)i;
    uint64_t q = span / up, r = span % up + 1; /* total = q*p + r, 1 <= r <= p */
    if (r == up) {
        q++;
        r = 0;
    }
    *count = q + (ui < r ? 1 : 0);
    *offset = ui * q + (ui < r ? ui : r);
}

/* A share with its per-field arrays in one allocation (seg_free frees it). */
static void seg_init(dg_seg *sg, int nfields)
{
    memset(sg, 0, sizeof *sg);
    uint64_t *mem = sl_calloc((size_t)nfields * 3 + 1, sizeof *mem);
    sg->rng = mem;
    sg->seq_next = (int64_t *)(mem + nfields);
    sg->seq_end = (int64_t *)(mem + 2 * (size_t)nfields);
}

static void seg_free(dg_seg *sg)
{
    free(sg->rng);
    sg->rng = NULL;
}

static inline bool seg_done(const dg_seg *sg)
{
    return sg->bounded && sg->remaining == 0;
}

static void segs_free(dg_seg *segs, int n)
{
    for (int k = 0; k < n; k++) seg_free(&segs[k]);
    free(segs);
}

/* When a subtask ahead of schedule wakes next: the time its next row is
 * due, rounded up to a multiple of DATAGEN_STEP_MS after base_ms. */
static int64_t next_wake_ms(const datagen_state *st)
{
    double wait = ((double)(st->emitted + 1 - st->base_count)) / st->rows_per_ms;
    int64_t ms = (int64_t)ceil(wait + 1e-9);
    return st->base_ms + (ms + DATAGEN_STEP_MS - 1) / DATAGEN_STEP_MS * DATAGEN_STEP_MS;
}

/* Pace at the sum of the live shares' rates, anchored at `now`. With
 * due_now the next row is due at once (a start), else one interval on. */
static void set_rate(datagen_state *st, int64_t now, bool due_now)
{
    double share = 0;
    for (int k = 0; k < st->nsegs; k++) share += 1.0 / st->segs[k].rate_den;
    st->rows_per_ms = (double)st->plan->rows_per_second * share / 1000.0;
    if (st->rows_per_ms <= 0) st->rows_per_ms = 1e-9; /* no shares: never due */
    st->base_ms = now;
    st->base_count = st->emitted + (due_now ? 1 : 0);
}

/* Forget the shares that have nothing left; the others keep their pace. */
static void drop_done(datagen_state *st, int64_t now)
{
    int keep = 0;
    for (int k = 0; k < st->nsegs; k++) {
        if (seg_done(&st->segs[k])) {
            seg_free(&st->segs[k]);
            continue;
        }
        st->segs[keep++] = st->segs[k];
    }
    if (keep == st->nsegs) return;
    st->nsegs = keep;
    if (keep) set_rate(st, now, false);
}

static void datagen_close(sl_op *op)
{
    datagen_state *st = op->priv;
    if (!st) return;
    segs_free(st->segs, st->nsegs);
    free(st->vals);
    sl_arena_free(&st->arena);
    free(st->scratch);
    free(st);
    op->priv = NULL;
}

static int datagen_open(sl_op *op)
{
    const datagen_plan *pl = op->plan;
    int p = op->parallelism > 0 ? op->parallelism : 1;
    int i = op->subtask;
    if (i < 0 || i >= p)
        return sl_op_fail(op, "datagen: subtask %d out of range for parallelism %d", i, p);
    datagen_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->plan = pl;
    st->vals = sl_calloc((size_t)pl->n, sizeof *st->vals);
    st->segs = sl_calloc(1, sizeof *st->segs);
    st->nsegs = 1;
    dg_seg *sg = &st->segs[0];
    seg_init(sg, pl->n);
    sg->rate_den = (uint32_t)p;

    uint64_t base = sl_mix64((pl->has_seed ? pl->seed : fresh_seed()) ^ 0x6a09e667f3bcc909ULL);
    sg->bounded = false;
    sg->remaining = UINT64_MAX;
    for (int f = 0; f < pl->n; f++) {
        const gen_node *gf = &pl->fields[f];
        sg->rng[f] = sl_mix64(base + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL +
                           (uint64_t)(f + 1) * 0xd1b54a32d192ed03ULL);
        if (gf->kind == GEN_SEQUENCE) {
            uint64_t off, cnt;
            split_chunk((uint64_t)gf->end - (uint64_t)gf->start, p, i, &off, &cnt);
            sg->seq_next[f] = (int64_t)((uint64_t)gf->start + off);
            sg->seq_end[f] = (int64_t)((uint64_t)sg->seq_next[f] + cnt - 1);
            sg->bounded = true;
            if (cnt < sg->remaining) sg->remaining = cnt;
        }
    }
    if (pl->number_of_rows >= 0) {
        uint64_t total = (uint64_t)pl->number_of_rows, up = (uint64_t)p, ui = (uint64_t)i;
        uint64_t share = total / up + (ui < total % up ? 1 : 0);
        sg->bounded = true;
        if (share < sg->remaining) sg->remaining = share;
    }
    sl_arena_init(&st->arena, pl->row_bytes);
    st->scratch = sl_calloc(pl->nscratch ? pl->nscratch : 1, sizeof *st->scratch);
    set_rate(st, sl_mono_ms(), true); /* the first row is due at once */
    return SL_OK;
}

/* Cut ms / nanos to precision p (TIME, TIMESTAMP): p < 3 drops digits of
 * the millisecond, p in 4..8 digits of the nanos. */
static void cut_precision(sl_value *v, int p)
{
    if (p < 3) {
        int64_t unit = p == 2 ? 10 : p == 1 ? 100 : 1000;
        int64_t r = v->v.ts.ms % unit;
        v->v.ts.ms -= r < 0 ? r + unit : r;
    } else if (p > 3 && p < 9) {
        int32_t unit = 1;
        for (int k = p; k < 9; k++) unit *= 10;
        v->v.ts.nano -= v->v.ts.nano % unit;
    }
}

static void gen_value(const datagen_plan *pl, const gen_node *g, uint64_t *rng, int64_t now_wall,
                      datagen_state *st, sl_value *v);

/* A temporal value: uniform in [min, max] when given, else "now" minus up
 * to max-past. */
static void gen_temporal(const gen_node *g, uint64_t *rng, int64_t now_wall, sl_value *v)
{
    int64_t x;
    if (g->has_range) {
        x = (int64_t)((uint64_t)g->imin + sl_rng_below(rng, (uint64_t)g->imax - (uint64_t)g->imin + 1));
    } else {
        int64_t ms = now_wall;
        if (g->max_past > 0) ms -= (int64_t)sl_rng_below(rng, (uint64_t)g->max_past + 1);
        int64_t day = ms / 86400000, rem = ms % 86400000;
        if (rem < 0) day--, rem += 86400000;
        x = g->type == SL_T_DATE ? day : g->type == SL_T_TIME ? rem : ms;
    }
    v->v.ts.ms = x;
    v->v.ts.nano = 0;
    if (g->type == SL_T_DATE) return;
    if (sl_dtype_has_nanos(g->dt)) v->v.ts.nano = (int32_t)sl_rng_below(rng, 1000000);
    cut_precision(v, g->dt->p);
}

/* Is vals[0..n) holding a value equal to x (of type dt)? Its index or -1. */
static int find_equal(const sl_dtype *dt, const sl_value *vals, uint32_t n, const sl_value *x)
{
    for (uint32_t k = 0; k < n; k++)
        if (sl_value_cmp(dt, &vals[k], x) == 0) return (int)k;
    return -1;
}

/* A collection or ROW value of node g, built into the arena. */
static void gen_nested(const datagen_plan *pl, const gen_node *g, uint64_t *rng, int64_t now_wall,
                       datagen_state *st, sl_value *v)
{
    sl_value *a = st->scratch + g->scratch, *b = a + g->length;
    uint32_t n = 0;
    if (g->type == SL_T_ROW) {
        for (int k = 0; k < g->nkids; k++) gen_value(pl, &g->kids[k], rng, now_wall, st, &a[k]);
    } else if (g->type == SL_T_ARRAY) {
        for (n = 0; n < g->length; n++) gen_value(pl, &g->kids[0], rng, now_wall, st, &a[n]);
    } else {
        /* MAP: a key drawn twice keeps its first place and its last value
         * (a Java map's put); MULTISET: equal elements count up. */
        for (uint32_t k = 0; k < g->length; k++) {
            gen_value(pl, &g->kids[0], rng, now_wall, st, &a[n]);
            sl_value val;
            if (g->type == SL_T_MAP) gen_value(pl, &g->kids[1], rng, now_wall, st, &val);
            int at = find_equal(g->dt->elem, a, n, &a[n]);
            if (at < 0) {
                at = (int)n++;
                b[at].isnull = false;
                b[at].v.i = 0;
            }
            if (g->type == SL_T_MAP) b[at] = val;
            else b[at].v.i++;
        }
    }
    int rc = sl_nested_build(g->dt, a, n, b, &st->arena, v);
    SL_ASSERT(rc == SL_OK); /* the arena holds plan->row_bytes, the most a row takes */
}

static void gen_value(const datagen_plan *pl, const gen_node *g, uint64_t *rng, int64_t now_wall,
                      datagen_state *st, sl_value *v)
{
    static const char hex[] = "0123456789abcdef";
    v->isnull = false;
    if (g->null_below && sl_rng_next(rng) < g->null_below) {
        v->isnull = true;
        return;
    }
    switch (g->type) {
    case SL_T_BOOLEAN: v->v.i = (int64_t)(sl_rng_next(rng) >> 63); break;
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
    case SL_T_INT:
    case SL_T_BIGINT:
    case SL_T_INTERVAL_YM:
    case SL_T_INTERVAL_DT:
        v->v.i = (int64_t)((uint64_t)g->imin +
                           sl_rng_below(rng, (uint64_t)g->imax - (uint64_t)g->imin + 1));
        break;
    case SL_T_DECIMAL: {
        int64_t x = (int64_t)((uint64_t)g->imin +
                              sl_rng_below(rng, (uint64_t)g->imax - (uint64_t)g->imin + 1));
        v->v.dec.lo = (uint64_t)x;
        v->v.dec.hi = x < 0 ? -1 : 0;
        break;
    }
    case SL_T_DOUBLE:
    case SL_T_FLOAT: {
        double u = (double)(sl_rng_next(rng) >> 11) * 0x1.0p-53; /* [0, 1) */
        /* Weighted form: cannot overflow even for -DBL_MAX..DBL_MAX. */
        v->v.d = g->dmin * (1.0 - u) + g->dmax * u;
        if (g->type == SL_T_FLOAT) v->v.d = (double)(float)v->v.d;
        break;
    }
    case SL_T_STRING:
    case SL_T_BYTES: {
        uint32_t len = g->length, k = 0;
        char *sp = sl_arena_alloc(&st->arena, len ? len : 1);
        SL_ASSERT(sp);
        while (k < len) {
            uint64_t r = sl_rng_next(rng);
            if (g->type == SL_T_STRING)
                for (int b = 0; b < 16 && k < len; b++, r >>= 4) sp[k++] = hex[r & 15];
            else
                for (int b = 0; b < 8 && k < len; b++, r >>= 8) sp[k++] = (char)(r & 255);
        }
        v->v.s.p = sp;
        v->v.s.len = len;
        break;
    }
    case SL_T_DATE:
    case SL_T_TIME:
    case SL_T_TIMESTAMP: gen_temporal(g, rng, now_wall, v); break;
    case SL_T_ARRAY:
    case SL_T_MAP:
    case SL_T_MULTISET:
    case SL_T_ROW: gen_nested(pl, g, rng, now_wall, st, v); break;
    case SL_T_NULL:
    default: v->isnull = true; break; /* refused at planning */
    }
}

/* The next value of a sequence column. */
static void gen_sequence(datagen_state *st, const gen_node *g, int64_t x, sl_value *v)
{
    v->isnull = false;
    switch (g->type) {
    case SL_T_DECIMAL: {
        __int128 u = (__int128)x * (__int128)sl_dec_pow10(g->dt->s); /* fits: checked at plan */
        v->v.dec.lo = (uint64_t)u;
        v->v.dec.hi = (int64_t)(u >> 64);
        break;
    }
    case SL_T_FLOAT:
    case SL_T_DOUBLE:
        v->v.d = g->type == SL_T_FLOAT ? (double)(float)x : (double)x;
        break;
    case SL_T_STRING: {
        char *sp = sl_arena_alloc(&st->arena, 24);
        SL_ASSERT(sp);
        int n = snprintf(sp, 24, "%lld", (long long)x);
        v->v.s.p = sp;
        v->v.s.len = (uint32_t)n;
        break;
    }
    default: v->v.i = x; break;
    }
}

/* Fill st->vals with the next row of share sg. */
static void gen_row(datagen_state *st, dg_seg *sg, int64_t now_wall)
{
    const datagen_plan *pl = st->plan;
    sl_arena_reset(&st->arena);
    for (int f = 0; f < pl->n; f++) {
        const gen_node *g = &pl->fields[f];
        sl_value *v = &st->vals[f];
        if (g->kind == GEN_SEQUENCE) {
            gen_sequence(st, g, sg->seq_next[f], v);
            sg->seq_next[f] = (int64_t)((uint64_t)sg->seq_next[f] + 1);
            continue;
        }
        gen_value(pl, g, &sg->rng[f], now_wall, st, v);
    }
}

static int datagen_run(sl_op *op)
{
    datagen_state *st = op->priv;
    int64_t now = sl_mono_ms();
    if (st->nsegs > 0 && seg_done(&st->segs[0])) drop_done(st, now);
    if (st->nsegs == 0) return SL_DONE;
    dg_seg *sg = &st->segs[0]; /* the first live share, until it is done */

    double burst = st->rows_per_ms * 1000.0; /* one second's worth */
    if (burst < 1) burst = 1;
    double due = (double)st->base_count + floor((double)(now - st->base_ms) * st->rows_per_ms);
    if (due > (double)st->emitted + burst) {
        /* Stalled (backpressure, a paused machine): forget the backlog
         * beyond one second's worth instead of bursting it all out. */
        st->base_ms = now;
        st->base_count = st->emitted + (uint64_t)burst;
        due = (double)st->base_count;
    }
    uint64_t n = 0;
    if (due > (double)st->emitted) n = (uint64_t)(due - (double)st->emitted);
    if (n > DATAGEN_BATCH) n = DATAGEN_BATCH;
    if (sg->bounded && n > sg->remaining) n = sg->remaining;

    if (n == 0) {
        /* Ahead of schedule: sleep until the next row is due (in steps). */
        op->wake_at_ms = next_wake_ms(st);
        if (op->wake_at_ms <= now) op->wake_at_ms = now + 1;
        return SL_AGAIN;
    }

    int64_t now_wall = st->plan->need_wall_clock ? sl_now_ms() : 0;
    sl_row row = {SL_KIND_INSERT, st->plan->n, st->vals, SL_TS_NONE};
    for (uint64_t k = 0; k < n; k++) {
        gen_row(st, sg, now_wall);
        st->emitted++;
        sg->emitted++;
        if (sg->bounded) sg->remaining--;
        /* A row handed to emit counts as emitted whatever emit says. */
        int rc = sl_op_emit(op, &row);
        if (rc != SL_OK) {
            if (rc == SL_ERR && !op->err[0]) sl_op_fail(op, "datagen: downstream failed");
            if (rc == SL_AGAIN) op->wake_at_ms = now;
            return rc;
        }
    }
    if (seg_done(sg)) {
        drop_done(st, now);
        if (st->nsegs == 0) return SL_DONE;
    }
    if ((double)st->emitted >= due) {
        op->wake_at_ms = next_wake_ms(st);
        if (op->wake_at_ms > now) return SL_AGAIN;
    }
    return SL_OK;
}

/* ---- checkpoints ------------------------------------------------------ */

#define DG_BLOB_VERSION 1
static const unsigned char dg_magic[4] = {'S', 'L', 'D', 'G'};
#define DG_HEAD (1 + 4 + 4 + 4)         /* version, magic, nfields, nsegs */
#define DG_SEG_HEAD (4 + 1 + 8 + 8)     /* rate_den, bounded, remaining, emitted */
#define DG_SEG_FIELD (8 + 8 + 8)        /* rng, seq_next, seq_end */

/* The live shares, as one blob (malloc'ed; the runtime frees it). */
static int datagen_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    datagen_state *st = op->priv;
    const datagen_plan *pl = st->plan;
    size_t nlive = 0;
    for (int k = 0; k < st->nsegs; k++) nlive += !seg_done(&st->segs[k]);
    size_t n = (size_t)pl->n;
    size_t total = DG_HEAD + 2 * n + nlive * (DG_SEG_HEAD + DG_SEG_FIELD * n) + 8;
    unsigned char *b = sl_malloc(total), *p = b;
    *p++ = DG_BLOB_VERSION;
    memcpy(p, dg_magic, 4);
    p += 4;
    p = sl_put_le_n(p, n, 4);
    p = sl_put_le_n(p, nlive, 4);
    for (size_t f = 0; f < n; f++) {
        *p++ = (unsigned char)pl->fields[f].kind;
        *p++ = (unsigned char)pl->fields[f].type;
    }
    for (int k = 0; k < st->nsegs; k++) {
        const dg_seg *sg = &st->segs[k];
        if (seg_done(sg)) continue;
        p = sl_put_le_n(p, sg->rate_den, 4);
        *p++ = sg->bounded ? 1 : 0;
        p = sl_put_le_n(p, sg->remaining, 8);
        p = sl_put_le_n(p, sg->emitted, 8);
        for (size_t f = 0; f < n; f++) {
            p = sl_put_le_n(p, sg->rng[f], 8);
            p = sl_put_le_n(p, (uint64_t)sg->seq_next[f], 8);
            p = sl_put_le_n(p, (uint64_t)sg->seq_end[f], 8);
        }
    }
    p = sl_put_le_n(p, sl_blob_fnv1a(b, (size_t)(p - b)), 8);
    SL_ASSERT((size_t)(p - b) == total);
    *blob = b;
    *len = total;
    return SL_OK;
}

/* Do lo..hi fit the sequence column (its integer kind, or the DECIMAL's
 * whole digits)? */
static bool seq_fits(const gen_node *g, int64_t lo, int64_t hi)
{
    if (g->type == SL_T_DECIMAL) {
        sl_dec_type t = {(uint8_t)g->dt->p, (uint8_t)g->dt->s};
        sl_dec d;
        return sl_dec_from_i64(lo, t, &d) == SL_DEC_OK && sl_dec_from_i64(hi, t, &d) == SL_DEC_OK;
    }
    int64_t a, b;
    int_bounds(is_int_kind(g->type) ? g->type : SL_T_BIGINT, &a, &b);
    return lo >= a && hi <= b;
}

static const char *kind_name(int kind)
{
    return kind == GEN_SEQUENCE ? "sequence" : "random";
}

/* Check one blob and append its shares to *segs. On failure returns SL_ERR
 * with the reason in why (the shares appended so far stay in *segs). */
static int parse_blob(const datagen_plan *pl, const unsigned char *b, size_t len, dg_seg **segs,
                      int *nsegs, char *why, size_t whylen)
{
    size_t n = (size_t)pl->n;
    if (len < DG_HEAD + 8)
        return sl_seterr(why, whylen, "%zu bytes is too short to be datagen state", len);
    if (memcmp(b + 1, dg_magic, 4) != 0)
        return sl_seterr(why, whylen, "not datagen state (unknown header)");
    if (b[0] != DG_BLOB_VERSION)
        return sl_seterr(why, whylen, "format version %u, but this build reads version %d", b[0],
                         DG_BLOB_VERSION);
    const unsigned char *p = b + len - 8;
    if (sl_get_le_n(&p, 8) != sl_blob_fnv1a(b, len - 8))
        return sl_seterr(why, whylen, "damaged (checksum mismatch over %zu bytes)", len);
    p = b + 5;
    uint64_t nf = sl_get_le_n(&p, 4), ns = sl_get_le_n(&p, 4);
    if (nf != n)
        return sl_seterr(why, whylen, "taken with %llu fields, but the vertex has %zu",
                         (unsigned long long)nf, n);
    size_t per = DG_SEG_HEAD + DG_SEG_FIELD * n;
    if (len < DG_HEAD + 8 + 2 * n || (len - DG_HEAD - 8 - 2 * n) / per != ns ||
        (len - DG_HEAD - 8 - 2 * n) % per != 0)
        return sl_seterr(why, whylen, "damaged (%zu bytes do not hold %llu shares)", len,
                         (unsigned long long)ns);
    for (size_t f = 0; f < n; f++) {
        const gen_node *gf = &pl->fields[f];
        unsigned kind = *p++, type = *p++;
        if (kind != (unsigned)gf->kind || type != (unsigned)gf->type)
            return sl_seterr(why, whylen,
                             "column %zu was a %s %s when the state was taken, but is a %s %s now",
                             f + 1, kind <= GEN_SEQUENCE ? kind_name((int)kind) : "?",
                             type < SL_T_COUNT ? sl_type_name((sl_type)type) : "?",
                             kind_name(gf->kind), sl_type_name(gf->type));
    }
    for (uint64_t k = 0; k < ns; k++) {
        *segs = sl_realloc(*segs, (size_t)(*nsegs + 1) * sizeof **segs);
        dg_seg *sg = &(*segs)[*nsegs];
        seg_init(sg, (int)n);
        (*nsegs)++;
        uint64_t den = sl_get_le_n(&p, 4);
        unsigned bounded = *p++;
        sg->rate_den = (uint32_t)den;
        sg->bounded = bounded == 1;
        sg->remaining = sl_get_le_n(&p, 8);
        sg->emitted = sl_get_le_n(&p, 8);
        if (den == 0 || bounded > 1)
            return sl_seterr(why, whylen, "share %llu is damaged (rate 1/%llu, bounded %u)",
                             (unsigned long long)k, (unsigned long long)den, bounded);
        for (size_t f = 0; f < n; f++) {
            const gen_node *gf = &pl->fields[f];
            sg->rng[f] = sl_get_le_n(&p, 8);
            sg->seq_next[f] = (int64_t)sl_get_le_n(&p, 8);
            sg->seq_end[f] = (int64_t)sl_get_le_n(&p, 8);
            if (gf->kind != GEN_SEQUENCE) continue;
            /* The rows still owed must fit in [next, end] and the column. */
            int64_t lo = sg->seq_next[f], hi = sg->seq_end[f];
            bool ok = sg->bounded;
            if (ok && sg->remaining > 0)
                ok = lo <= hi && (uint64_t)hi - (uint64_t)lo >= sg->remaining - 1 &&
                     seq_fits(gf, lo, hi);
            if (!ok)
                return sl_seterr(why, whylen,
                                 "share %llu is damaged (column %zu: range %lld..%lld for %llu "
                                 "rows)", (unsigned long long)k, f + 1, (long long)lo,
                                 (long long)hi, (unsigned long long)sg->remaining);
        }
    }
    return SL_OK;
}

/* Take the shares of every blob dealt to this subtask (none: nothing to
 * do, the old subtasks' shares went elsewhere). */
static int datagen_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    datagen_state *st = op->priv;
    dg_seg *segs = NULL;
    int nsegs = 0;
    for (int k = 0; k < nblobs; k++) {
        char why[300];
        if (parse_blob(st->plan, blobs[k], lens[k], &segs, &nsegs, why, sizeof why) != SL_OK) {
            segs_free(segs, nsegs);
            return sl_op_fail(op, "datagen '%s' subtask %d: cannot restore state %d of %d: %s",
                              op->vertex ? op->vertex->id : "?", op->subtask, k + 1, nblobs,
                              why);
        }
    }
    segs_free(st->segs, st->nsegs);
    st->segs = segs;
    st->nsegs = nsegs;
    st->emitted = 0;
    drop_done(st, sl_mono_ms());
    set_rate(st, sl_mono_ms(), true);
    return SL_OK;
}

static const sl_op_option datagen_options[] = {
    {"rows-per-second", SL_CT_INT, "10000", NULL,
     "Rows per second over all subtasks (positive)."},
    {"number-of-rows", SL_CT_INT, NULL, NULL,
     "Rows to generate, then end; unset: unbounded."},
    {"seed", SL_CT_INT, NULL, NULL,
     "Seed of the random fields: the same seed gives the same rows; unset: a random seed."},
    {"fields.*", SL_CT_STRING, NULL, NULL,
     "Per column: fields.<column>.kind (random or sequence), .min, .max, .length, .start, .end, .null-rate, ..."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_datagen = {
    .abi = SL_OP_ABI_VERSION,
    .name = "datagen",
    .flags = SL_OPF_SOURCE,
    .options = datagen_options,
    .plan = datagen_plan_new,
    .plan_free = datagen_plan_free,
    .open = datagen_open,
    .run = datagen_run,
    .close = datagen_close,
    .snapshot_state = datagen_snapshot,
    .restore_state = datagen_restore,
};
