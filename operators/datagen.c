/*
 * datagen.c -- the `datagen` source: rows of generated values, with Flink's
 * options.
 *
 *   rows-per-second        rate of the whole source, shared by its subtasks
 *                          (default 10000, as in Flink)
 *   number-of-rows         total rows of a bounded source (default: none)
 *   seed                   same seed, same rows on every run
 *   fields.<f>.kind        random (default) | sequence
 *   fields.<f>.start/.end  sequence bounds, inclusive (INT, BIGINT)
 *   fields.<f>.min/.max    random numbers, inclusive (INT, BIGINT, DOUBLE)
 *   fields.<f>.length      random STRING / BYTES length (default 100)
 *   fields.<f>.max-past    random TIMESTAMP: now minus up to this duration
 *                          (without it the field is the current time)
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
 * repeat each other, and adding a column does not change the others.
 * Random strings are lowercase hex, as Flink's are.
 *
 * Pacing: row k of a subtask is due k / rate after the source started. Each
 * run() emits what is due (at most one batch of 1024) and returns SL_AGAIN
 * with op->wake_at_ms when it is ahead of schedule. After a stall
 * (backpressure) at most one second's worth of rows is made up at once, as
 * Flink's rate limiter does. No memory is allocated per row: values live in
 * one row and one string buffer, reused.
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

#define DATAGEN_BATCH 1024
#define DATAGEN_MAX_LENGTH (1 << 20)
#define DATAGEN_DEFAULT_LENGTH 100

typedef enum { GEN_RANDOM = 0, GEN_SEQUENCE } gen_kind;

typedef struct gen_field {
    gen_kind kind;
    sl_type type;
    int64_t start, end; /* sequence, inclusive */
    int64_t imin, imax; /* random INT / BIGINT, inclusive */
    double dmin, dmax;  /* random DOUBLE */
    uint32_t length;    /* random STRING / BYTES */
    int64_t max_past;   /* random TIMESTAMP, ms; -1: always "now" */
} gen_field;

typedef struct datagen_plan {
    int n;
    gen_field *fields;       /* n entries, in schema order */
    int64_t rows_per_second; /* > 0, whole source */
    int64_t number_of_rows;  /* -1: unbounded */
    bool has_seed;
    uint64_t seed;
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
    bool need_wall_clock; /* some field is a random TIMESTAMP */
    sl_value *vals;       /* the one row, reused */
    char *strbuf;         /* random strings of the current row */
} datagen_state;

/* ---- plan ------------------------------------------------------------- */

/* Per-field options as found in the config, before validation. */
typedef struct field_opts {
    const char *kind;
    const char *start, *end, *min, *max, *length, *max_past; /* full option keys */
} field_opts;

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

/* An integer option that must also fit type t. */
static int conf_int_for(const sl_vertex *v, const char *key, sl_type t, int64_t *out, char *err,
                        size_t errlen)
{
    if (sl_vconf_int(v, key, 0, out, err, errlen) != SL_OK) return SL_ERR;
    if (t == SL_T_INT && (*out < INT32_MIN || *out > INT32_MAX))
        return sl_seterr(err, errlen, "vertex '%s': option '%s': %lld does not fit an INT column",
                         v->id, key, (long long)*out);
    return SL_OK;
}

/* Validate one column's options and fill gf. */
static int plan_field(const sl_vertex *v, const sl_field *col, const field_opts *o,
                      gen_field *gf, char *err, size_t errlen)
{
    const char *id = v->id;
    gf->type = col->type;
    gf->kind = GEN_RANDOM;
    gf->max_past = -1;
    if (o->kind) {
        const char *k = sl_vconf_str(v, o->kind, NULL);
        if (k && !strcasecmp(k, "sequence")) gf->kind = GEN_SEQUENCE;
        else if (!k || strcasecmp(k, "random") != 0)
            return sl_seterr(err, errlen,
                             "vertex '%s': option '%s' must be 'random' or 'sequence'", id,
                             o->kind);
    }

    if (gf->kind == GEN_SEQUENCE) {
        const char *stray = o->min ? o->min : o->max ? o->max : o->length ? o->length
                                                                            : o->max_past;
        if (stray)
            return sl_seterr(err, errlen, "vertex '%s': option '%s' does not apply to a sequence "
                                          "field (use start and end)", id, stray);
        if (col->type != SL_T_INT && col->type != SL_T_BIGINT)
            return sl_seterr(err, errlen,
                             "vertex '%s': option '%s': a sequence needs an INT or BIGINT column, "
                             "'%s' is %s", id, o->kind, col->name, sl_type_name(col->type));
        if (!o->start || !o->end)
            return sl_seterr(err, errlen,
                             "vertex '%s': sequence field '%s' needs both 'fields.%s.start' and "
                             "'fields.%s.end'", id, col->name, col->name, col->name);
        if (conf_int_for(v, o->start, col->type, &gf->start, err, errlen) ||
            conf_int_for(v, o->end, col->type, &gf->end, err, errlen))
            return SL_ERR;
        if (gf->start > gf->end)
            return sl_seterr(err, errlen, "vertex '%s': option '%s': start %lld is after end %lld",
                             id, o->start, (long long)gf->start, (long long)gf->end);
        return SL_OK;
    }

    if (o->start || o->end)
        return sl_seterr(err, errlen,
                         "vertex '%s': option '%s' only applies to kind 'sequence'", id,
                         o->start ? o->start : o->end);
    bool numeric = col->type == SL_T_INT || col->type == SL_T_BIGINT || col->type == SL_T_DOUBLE;
    bool sized = col->type == SL_T_STRING || col->type == SL_T_BYTES;
    const char *bad = NULL;
    if (!numeric && (o->min || o->max)) bad = o->min ? o->min : o->max;
    else if (!sized && o->length) bad = o->length;
    else if (col->type != SL_T_TIMESTAMP && o->max_past) bad = o->max_past;
    if (bad)
        return sl_seterr(err, errlen, "vertex '%s': option '%s' does not apply to %s column '%s'",
                         id, bad, sl_type_name(col->type), col->name);

    switch (col->type) {
    case SL_T_INT:
    case SL_T_BIGINT:
        gf->imin = col->type == SL_T_INT ? INT32_MIN : INT64_MIN;
        gf->imax = col->type == SL_T_INT ? INT32_MAX : INT64_MAX;
        if (o->min && conf_int_for(v, o->min, col->type, &gf->imin, err, errlen)) return SL_ERR;
        if (o->max && conf_int_for(v, o->max, col->type, &gf->imax, err, errlen)) return SL_ERR;
        if (gf->imin > gf->imax)
            return sl_seterr(err, errlen, "vertex '%s': field '%s': min %lld is above max %lld", id,
                             col->name, (long long)gf->imin, (long long)gf->imax);
        break;
    case SL_T_DOUBLE:
        /* Flink's defaults: Double.MIN_VALUE .. Double.MAX_VALUE. */
        gf->dmin = 4.9e-324;
        gf->dmax = DBL_MAX;
        if (o->min && conf_double(v, o->min, &gf->dmin, err, errlen)) return SL_ERR;
        if (o->max && conf_double(v, o->max, &gf->dmax, err, errlen)) return SL_ERR;
        if (gf->dmin > gf->dmax)
            return sl_seterr(err, errlen, "vertex '%s': field '%s': min %g is above max %g", id,
                             col->name, gf->dmin, gf->dmax);
        break;
    case SL_T_STRING:
    case SL_T_BYTES: {
        int64_t len = DATAGEN_DEFAULT_LENGTH;
        if (o->length && sl_vconf_int(v, o->length, 0, &len, err, errlen)) return SL_ERR;
        if (len < 0 || len > DATAGEN_MAX_LENGTH)
            return sl_seterr(err, errlen, "vertex '%s': option '%s': length %lld is not in 0..%d",
                             id, o->length, (long long)len, DATAGEN_MAX_LENGTH);
        gf->length = (uint32_t)len;
        break;
    }
    case SL_T_TIMESTAMP:
        if (o->max_past) {
            if (sl_vconf_duration(v, o->max_past, 0, &gf->max_past, err, errlen)) return SL_ERR;
            if (gf->max_past < 0)
                return sl_seterr(err, errlen, "vertex '%s': option '%s' must not be negative", id,
                                 o->max_past);
        }
        break;
    case SL_T_BOOLEAN:
    case SL_T_NULL:
        break;
    default:
        return sl_seterr(err, errlen, "vertex '%s': datagen cannot generate %s column '%s' yet",
                         id, col->dt->text, col->name);
    }
    return SL_OK;
}

static void datagen_plan_free(void *p)
{
    datagen_plan *pl = p;
    if (!pl) return;
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
    field_opts *opts = sl_calloc((size_t)decl->n, sizeof *opts);

    /* Sort the fields.<f>.<option> keys onto their columns. */
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
        char col[256];
        size_t nlen = (size_t)(dot - name);
        if (nlen >= sizeof col) nlen = sizeof col - 1;
        memcpy(col, name, nlen);
        col[nlen] = '\0';
        int f = sl_schema_find(decl, col);
        if (f < 0) {
            sl_seterr(err, errlen, "vertex '%s': option '%s': no column '%s' in the schema", v->id,
                      key, col);
            goto fail;
        }
        const char *opt = dot + 1;
        field_opts *o = &opts[f];
        const char **slot = !strcmp(opt, "kind")       ? &o->kind
                            : !strcmp(opt, "start")    ? &o->start
                            : !strcmp(opt, "end")      ? &o->end
                            : !strcmp(opt, "min")      ? &o->min
                            : !strcmp(opt, "max")      ? &o->max
                            : !strcmp(opt, "length")   ? &o->length
                            : !strcmp(opt, "max-past") ? &o->max_past
                                                       : NULL;
        if (!slot) {
            sl_seterr(err, errlen,
                      "vertex '%s': unknown option '%s' (a field takes kind, start, end, min, "
                      "max, length, max-past)", v->id, key);
            goto fail;
        }
        *slot = key;
    }
    for (int f = 0; f < decl->n; f++)
        if (plan_field(v, &decl->fields[f], &opts[f], &pl->fields[f], err, errlen)) goto fail;

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

    free(opts);
    sl_schema_copy(out, decl);
    return pl;
fail:
    free(opts);
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
    free(st->strbuf);
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
    size_t strbytes = 0;
    sg->bounded = false;
    sg->remaining = UINT64_MAX;
    for (int f = 0; f < pl->n; f++) {
        const gen_field *gf = &pl->fields[f];
        sg->rng[f] = sl_mix64(base + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL +
                           (uint64_t)(f + 1) * 0xd1b54a32d192ed03ULL);
        if (gf->kind == GEN_SEQUENCE) {
            uint64_t off, cnt;
            split_chunk((uint64_t)gf->end - (uint64_t)gf->start, p, i, &off, &cnt);
            sg->seq_next[f] = (int64_t)((uint64_t)gf->start + off);
            sg->seq_end[f] = (int64_t)((uint64_t)sg->seq_next[f] + cnt - 1);
            sg->bounded = true;
            if (cnt < sg->remaining) sg->remaining = cnt;
        } else if (gf->type == SL_T_STRING || gf->type == SL_T_BYTES) {
            strbytes += gf->length;
        } else if (gf->type == SL_T_TIMESTAMP) {
            st->need_wall_clock = true;
        }
    }
    if (pl->number_of_rows >= 0) {
        uint64_t total = (uint64_t)pl->number_of_rows, up = (uint64_t)p, ui = (uint64_t)i;
        uint64_t share = total / up + (ui < total % up ? 1 : 0);
        sg->bounded = true;
        if (share < sg->remaining) sg->remaining = share;
    }
    st->strbuf = sl_malloc(strbytes ? strbytes : 1);
    set_rate(st, sl_mono_ms(), true); /* the first row is due at once */
    return SL_OK;
}

/* Fill st->vals with the next row of share sg. */
static void gen_row(datagen_state *st, dg_seg *sg, int64_t now_wall)
{
    const datagen_plan *pl = st->plan;
    static const char hex[] = "0123456789abcdef";
    char *sp = st->strbuf;
    for (int f = 0; f < pl->n; f++) {
        const gen_field *gf = &pl->fields[f];
        sl_value *v = &st->vals[f];
        uint64_t *rng = &sg->rng[f];
        v->isnull = false;
        if (gf->kind == GEN_SEQUENCE) {
            v->v.i = sg->seq_next[f];
            sg->seq_next[f] = (int64_t)((uint64_t)sg->seq_next[f] + 1);
            continue;
        }
        switch (gf->type) {
        case SL_T_BOOLEAN: v->v.i = (int64_t)(sl_rng_next(rng) >> 63); break;
        case SL_T_INT:
        case SL_T_BIGINT:
            v->v.i = (int64_t)((uint64_t)gf->imin +
                               sl_rng_below(rng, (uint64_t)gf->imax - (uint64_t)gf->imin + 1));
            break;
        case SL_T_DOUBLE: {
            double u = (double)(sl_rng_next(rng) >> 11) * 0x1.0p-53; /* [0, 1) */
            /* Weighted form: cannot overflow even for -DBL_MAX..DBL_MAX. */
            v->v.d = gf->dmin * (1.0 - u) + gf->dmax * u;
            break;
        }
        case SL_T_STRING:
        case SL_T_BYTES: {
            uint32_t len = gf->length, k = 0;
            while (k < len) {
                uint64_t r = sl_rng_next(rng);
                if (gf->type == SL_T_STRING)
                    for (int b = 0; b < 16 && k < len; b++, r >>= 4) sp[k++] = hex[r & 15];
                else
                    for (int b = 0; b < 8 && k < len; b++, r >>= 8) sp[k++] = (char)(r & 255);
            }
            v->v.s.p = sp;
            v->v.s.len = len;
            sp += len;
            break;
        }
        case SL_T_TIMESTAMP:
            v->v.i = now_wall;
            if (gf->max_past > 0)
                v->v.i -= (int64_t)sl_rng_below(rng, (uint64_t)gf->max_past + 1);
            break;
        case SL_T_NULL:
        default: v->isnull = true; break; /* refused at planning */
        }
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
        /* Ahead of schedule: sleep until the next row is due. */
        double wait = ((double)(st->emitted + 1 - st->base_count)) / st->rows_per_ms;
        op->wake_at_ms = st->base_ms + (int64_t)ceil(wait + 1e-9);
        if (op->wake_at_ms <= now) op->wake_at_ms = now + 1;
        return SL_AGAIN;
    }

    int64_t now_wall = st->need_wall_clock ? sl_now_ms() : 0;
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
        double wait = ((double)(st->emitted + 1 - st->base_count)) / st->rows_per_ms;
        op->wake_at_ms = st->base_ms + (int64_t)ceil(wait + 1e-9);
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
        const gen_field *gf = &pl->fields[f];
        unsigned kind = *p++, type = *p++;
        if (kind != (unsigned)gf->kind || type != (unsigned)gf->type)
            return sl_seterr(why, whylen,
                             "column %zu was a %s %s when the state was taken, but is a %s %s now",
                             f + 1, kind <= GEN_SEQUENCE ? kind_name((int)kind) : "?",
                             type <= SL_T_TIMESTAMP ? sl_type_name((sl_type)type) : "?",
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
            const gen_field *gf = &pl->fields[f];
            sg->rng[f] = sl_get_le_n(&p, 8);
            sg->seq_next[f] = (int64_t)sl_get_le_n(&p, 8);
            sg->seq_end[f] = (int64_t)sl_get_le_n(&p, 8);
            if (gf->kind != GEN_SEQUENCE) continue;
            /* The rows still owed must fit in [next, end] and the column. */
            int64_t lo = sg->seq_next[f], hi = sg->seq_end[f];
            bool ok = sg->bounded;
            if (ok && sg->remaining > 0)
                ok = lo <= hi && (uint64_t)hi - (uint64_t)lo >= sg->remaining - 1 &&
                     (gf->type != SL_T_INT || (lo >= INT32_MIN && hi <= INT32_MAX));
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
