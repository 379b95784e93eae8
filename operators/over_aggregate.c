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
 * (COUNT, SUM, MIN, MAX, AVG with FILTER), the same accumulator as
 * `window` and `group_aggregate`; ROW_NUMBER() is the row's position in its
 * partition; FIRST_VALUE(c) and LAST_VALUE(c) the first and last non-NULL
 * value of c in the frame (Flink's FirstValue/LastValueAggFunction); LAG(c,
 * n, d) -- UNBOUNDED frames only, as in Flink -- the value of c n rows before
 * the last row added to the frame (with RANGE peers: the last peer), else
 * column d's value of the row or NULL. Output: the input's columns, then one
 * per aggregate; insert-only.
 *
 * Event time ("time": "event"): a row is held in keyed state until the
 * watermark passes its time (an event-time timer at that time), so rows are
 * aggregated in time order whatever order they arrive in; a row whose time
 * the watermark has already passed is late: dropped and counted in
 * numLateRecordsDropped. Processing time: a row is aggregated as it arrives,
 * at the wall clock's time.
 *
 * State per key: "over-rows", the rows held -- pending (not yet emitted) and
 * the frame's history -- under a namespace that sorts by (time, arrival):
 * 8 bytes big-endian time with the sign bit flipped, 8 bytes big-endian
 * arrival number; the value is the encoded row. "over-meta": i64 next
 * arrival number, i64 rows emitted (ROW_NUMBER), then for an unbounded
 * frame the accumulator, then i64 per value function (FIRST_VALUE,
 * LAST_VALUE: set; LAG: values added); "over-values": an unbounded frame's
 * first / last value and LAG's ring of its last n + 1 values. Bounded
 * frames find the value functions' values among the frame's rows. When rows
 * of time T are emitted:
 *   - UNBOUNDED PRECEDING: the rows go into the accumulator (RANGE: all rows
 *     of T first, so peers share their values; ROWS: one at a time) and
 *     leave the state -- only the accumulator stays;
 *   - RANGE p PRECEDING: the accumulator is built from the held rows with
 *     time in [T - p, T] (peers share their values); rows at or before
 *     T - p are evicted then, as no later time reaches them, and a clean-up
 *     timer at T + p + 1 (event or processing time, as the order) evicts the
 *     rows of T when the key goes quiet;
 *   - ROWS n PRECEDING: each row's frame is the n rows before it and itself;
 *     only the last n emitted rows stay.
 * Bounded frames rebuild the accumulator from the frame's rows, so MIN and
 * MAX need no retraction. Everything is keyed state and timers: snapshotted,
 * restored and re-split by key group by the runtime on either backend. The
 * per-timer scan copies the key's rows into buffers reused across records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agg.h"
#include "bytes.h"
#include "jobgraph.h"
#include "operator.h"

#define OV_NS 16        /* namespace of a held row: time, arrival */
#define OV_META 16      /* i64 next arrival number, i64 rows emitted */

/* One output column after the input's: an aggregate of the list, ROW_NUMBER,
 * or a value function of column col. */
enum { OUT_AGG, OUT_ROWNUM, OUT_FIRST, OUT_LAST, OUT_LAG };

typedef struct ov_out {
    int kind;
    int agg;            /* OUT_AGG: index in aggs */
    int col;            /* FIRST_VALUE, LAST_VALUE, LAG: the input column */
    int dcol;           /* LAG: the default's column, -1 = NULL */
    int64_t offset;     /* LAG */
    int vi;             /* value functions: index among them (meta slot, state namespace) */
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
} ov_plan;

typedef struct ov_ent {
    int64_t t;
    uint64_t seq;
    size_t off, len;    /* of the row's bytes in st->rowbuf */
} ov_ent;

typedef struct ov_state {
    int sid_rows, sid_meta, sid_vals;
    ov_ent *ents;       /* the key's held rows, in order (reused) */
    int nents, capents;
    uint8_t *rowbuf;    /* their bytes (reused) */
    size_t rowlen, rowcap;
    uint8_t *meta;      /* OV_META + accumulator (reused) */
    uint8_t *acc;       /* an accumulator being built */
    uint8_t *enc;       /* one encoded row (reused) */
    size_t enccap;
    sl_value *vals;     /* a decoded row */
    sl_value *outv;     /* an output row: input columns then results */
    sl_value *res;      /* aggregate results */
    sl_value *vres;     /* per output: a value function's value in the frame */
    char **vcopy;       /* per output: its bytes, read from state (reused) */
    size_t *vcap;
    uint8_t *venc;      /* one encoded value (reused) */
    size_t venccap;
} ov_state;

static const uint8_t no_ns[1];

/* ---- plan ---------------------------------------------------------------------- */

static void ov_plan_free(void *p)
{
    ov_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    sl_agg_list_free(&pl->aggs);
    free(pl->outs);
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
    } fns[] = {{"ROW_NUMBER", OUT_ROWNUM}, {"FIRST_VALUE", OUT_FIRST}, {"LAST_VALUE", OUT_LAST},
               {"LAG", OUT_LAG}};
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
    static const char *const names[] = {"", "ROW_NUMBER", "FIRST_VALUE", "LAST_VALUE", "LAG"};
    const char *fn = names[o->kind];
    int want_lo = o->kind == OUT_ROWNUM ? 0 : 1, want_hi = o->kind == OUT_LAG ? 3 : want_lo;
    if (nargs < want_lo || nargs > want_hi)
        return sl_seterr(err, errlen, "vertex '%s': aggregate %d: %s takes %d%s argument%s",
                         pl->vid, item, fn, want_lo, want_hi > want_lo ? " to 3" : "",
                         want_hi == 1 ? "" : "s");
    o->dcol = -1;
    o->offset = 1;
    if (o->kind == OUT_ROWNUM) return SL_OK;
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
        int kind, nargs;
        if (parse_valfn(text, &kind, args, &nargs, &alias)) {
            ov_out *o = &pl->outs[pl->nout];
            o->kind = kind;
            if (valfn_args(pl, in, o, args, nargs, (int)i + 1, err, errlen) != SL_OK) goto fail;
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
                          kind == OUT_ROWNUM ? sl_dtype_basic(SL_T_BIGINT) : in->fields[o->col].dt);
            pl->nout++;
            continue;
        }
        char e[256];
        if (sl_agg_list_add(&pl->aggs, text, (int)i + 1, in, pc->out, e, sizeof e) != SL_OK) {
            sl_seterr(err, errlen, "vertex '%s': %s", vid, e);
            goto fail;
        }
        const sl_agg *a = &pl->aggs.aggs[pl->aggs.n - 1];
        if (a->distinct || a->strval) {
            sl_seterr(err, errlen, "vertex '%s': aggregate %zu '%s': %s is not supported in an "
                      "OVER aggregation yet", vid, i + 1, text,
                      a->distinct ? "DISTINCT" : "MIN/MAX of a STRING");
            goto fail;
        }
        pl->outs[pl->nout].kind = OUT_AGG;
        pl->outs[pl->nout++].agg = pl->aggs.n - 1;
    }
    pl->metalen = OV_META + pl->aggs.size + 8 * (size_t)pl->nval;
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
    free(st->ents);
    free(st->rowbuf);
    free(st->meta);
    free(st->acc);
    free(st->enc);
    free(st->vals);
    free(st->outv);
    free(st->res);
    free(st->vres);
    for (int i = 0; st->vcopy && i < ((const ov_plan *)op->plan)->nout; i++) free(st->vcopy[i]);
    free(st->vcopy);
    free(st->vcap);
    free(st->venc);
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
    st->sid_rows = sl_kstate_register(op->kstate, "over-rows");
    st->sid_meta = sl_kstate_register(op->kstate, "over-meta");
    st->sid_vals = sl_kstate_register(op->kstate, "over-values");
    if (st->sid_rows < 0 || st->sid_meta < 0 || st->sid_vals < 0)
        return sl_op_fail(op, "vertex '%s': cannot register its keyed state", pl->vid);
    char uerr[700];
    if (sl_agg_open(&pl->aggs, uerr, sizeof uerr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, uerr);
    st->meta = sl_calloc(1, pl->metalen);
    st->acc = sl_calloc(1, pl->aggs.size + 8);
    st->vals = sl_calloc((size_t)op->in->n + 1, sizeof *st->vals);
    st->outv = sl_calloc((size_t)op->out->n + 1, sizeof *st->outv);
    st->res = sl_calloc((size_t)pl->aggs.n + 1, sizeof *st->res);
    st->vres = sl_calloc((size_t)pl->nout + 1, sizeof *st->vres);
    st->vcopy = sl_calloc((size_t)pl->nout + 1, sizeof *st->vcopy);
    st->vcap = sl_calloc((size_t)pl->nout + 1, sizeof *st->vcap);
    return SL_OK;
}

/* ---- helpers -------------------------------------------------------------------- */

static int state_err(sl_op *op, const char *err)
{
    const ov_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s': state: %s", pl->vid, err);
}

static void ns_put(uint8_t ns[OV_NS], int64_t t, uint64_t seq)
{
    sl_put_be64(ns, (uint64_t)t ^ 0x8000000000000000ull);
    sl_put_be64(ns + 8, seq);
}

/* The key's meta value into st->meta (zeros when absent). */
static int meta_read(sl_op *op, ov_state *st)
{
    const ov_plan *pl = op->plan;
    char err[256];
    const void *val;
    size_t vlen, want = pl->metalen;
    int rc = sl_kstate_get(op->kstate, st->sid_meta, no_ns, 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return state_err(op, err);
    if (rc == SL_DONE) {
        memset(st->meta, 0, want);
        return SL_OK;
    }
    if (vlen != want) return sl_op_fail(op, "vertex '%s': its state is damaged", pl->vid);
    memcpy(st->meta, val, want);
    return SL_OK;
}

static int meta_write(sl_op *op, ov_state *st)
{
    const ov_plan *pl = op->plan;
    char err[256];
    if (sl_kstate_put(op->kstate, st->sid_meta, no_ns, 0, st->meta, pl->metalen, err,
                      sizeof err) != SL_OK)
        return state_err(op, err);
    return SL_OK;
}

static int scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    ov_state *st = ctx;
    if (nslen != OV_NS) return 0;
    if (st->nents == st->capents) {
        st->capents = st->capents ? st->capents * 2 : 64;
        st->ents = sl_realloc(st->ents, sizeof *st->ents * (size_t)st->capents);
    }
    if (st->rowlen + vlen > st->rowcap) {
        size_t c = st->rowcap ? st->rowcap : 4096;
        while (c < st->rowlen + vlen) c *= 2;
        st->rowbuf = sl_realloc(st->rowbuf, c);
        st->rowcap = c;
    }
    ov_ent *e = &st->ents[st->nents++];
    e->t = (int64_t)(sl_get_be64(ns) ^ 0x8000000000000000ull);
    e->seq = sl_get_be64((const uint8_t *)ns + 8);
    e->off = st->rowlen;
    e->len = vlen;
    memcpy(st->rowbuf + st->rowlen, val, vlen);
    st->rowlen += vlen;
    return 0;
}

static int ent_cmp(const void *a, const void *b)
{
    const ov_ent *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The current key's held rows into st->ents, in (time, arrival) order. */
static int scan_rows(sl_op *op, ov_state *st)
{
    char err[256];
    st->nents = 0;
    st->rowlen = 0;
    if (sl_kstate_scan_key(op->kstate, st->sid_rows, scan_fn, st, err, sizeof err) != SL_OK)
        return state_err(op, err);
    /* both backends scan in namespace order; sorting keeps that a local fact */
    qsort(st->ents, (size_t)st->nents, sizeof *st->ents, ent_cmp);
    return SL_OK;
}

static int del_row(sl_op *op, ov_state *st, int64_t t, uint64_t seq)
{
    char err[256];
    uint8_t ns[OV_NS];
    ns_put(ns, t, seq);
    if (sl_kstate_del(op->kstate, st->sid_rows, ns, OV_NS, err, sizeof err) != SL_OK)
        return state_err(op, err);
    return SL_OK;
}

static int decode(sl_op *op, ov_state *st, const uint8_t *p, size_t len, sl_row *r)
{
    const ov_plan *pl = op->plan;
    char err[256];
    r->vals = st->vals;
    if (sl_row_decode(p, len, op->in, r, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, err);
    return SL_OK;
}

/* ---- value functions ------------------------------------------------------------ */

/* Bounded frames: the frame is rebuilt for each output, so FIRST_VALUE and
 * LAST_VALUE are tracked over its rows as they are added (values borrowed
 * from st->rowbuf, which stays put while a key's rows are processed). */
static void vals_reset(const ov_plan *pl, ov_state *st)
{
    for (int i = 0; i < pl->nout; i++) st->vres[i].isnull = true;
}

static void vals_track(const ov_plan *pl, ov_state *st, const sl_row *r)
{
    for (int i = 0; i < pl->nout; i++) {
        const ov_out *o = &pl->outs[i];
        const sl_value *x = &r->vals[o->col];
        if ((o->kind == OUT_FIRST && st->vres[i].isnull && !x->isnull) ||
            (o->kind == OUT_LAST && !x->isnull))
            st->vres[i] = *x;
    }
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

static bool is_bytes(sl_type t) { return t == SL_T_STRING || t == SL_T_BYTES; }

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
        if (o->kind < OUT_FIRST) continue;
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
        if (o->kind < OUT_FIRST) continue;
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

/* Fail the task with the message of the user function that failed. */
static int udf_failed(sl_op *op)
{
    const ov_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s' (subtask %d): %s", pl->vid, op->subtask, sl_agg_error());
}

/* Emit input row r (decoded into st->vals or borrowed) with the results of acc. */
static int emit_with(sl_op *op, ov_state *st, const sl_row *r, const uint8_t *acc, int64_t rownum,
                     int64_t ts)
{
    const ov_plan *pl = op->plan;
    int n = op->in->n;
    memcpy(st->outv, r->vals, sizeof *st->outv * (size_t)n);
    if (sl_agg_result(&pl->aggs, acc, st->res) != SL_OK) return udf_failed(op);
    if (pl->nval && pl->preceding < 0 && vals_get(op, st, r) != SL_OK) return SL_ERR;
    for (int i = 0; i < pl->nout; i++) {
        sl_value *o = &st->outv[n + i];
        switch (pl->outs[i].kind) {
        case OUT_AGG: *o = st->res[pl->outs[i].agg]; break;
        case OUT_ROWNUM:
            memset(o, 0, sizeof *o);
            o->v.i = rownum;
            break;
        default: *o = st->vres[i]; break;
        }
    }
    sl_row out = {.kind = SL_KIND_INSERT, .n = n + pl->nout, .vals = st->outv, .ts = ts};
    return sl_op_emit(op, &out);
}

/* Fold held row e into acc. */
static int add_ent(sl_op *op, ov_state *st, const ov_ent *e, uint8_t *acc)
{
    const ov_plan *pl = op->plan;
    sl_row r = {0};
    if (decode(op, st, st->rowbuf + e->off, e->len, &r) != SL_OK) return SL_ERR;
    if (sl_agg_add(&pl->aggs, acc, &r) != SL_OK) return udf_failed(op);
    if (!pl->nval) return SL_OK;
    if (pl->preceding >= 0) vals_track(pl, st, &r);
    else return vals_add(op, st, &r);
    return SL_OK;
}

static int emit_ent(sl_op *op, ov_state *st, const ov_ent *e, const uint8_t *acc, int64_t rownum)
{
    sl_row r = {0};
    if (decode(op, st, st->rowbuf + e->off, e->len, &r) != SL_OK) return SL_ERR;
    return emit_with(op, st, &r, acc, rownum, e->t);
}

/* ---- the frame ------------------------------------------------------------------- */

/* Emit the held rows of time T of the current key (st->ents[from, to)) and
 * evict what no later time can reach. st->meta is read; the caller writes it. */
static int fire(sl_op *op, ov_state *st, int64_t T, int from, int to)
{
    const ov_plan *pl = op->plan;
    const sl_agg_list *l = &pl->aggs;
    int64_t cnt = sl_get_lei64(st->meta + 8);
    int rc = SL_OK;
    if (pl->preceding < 0) { /* UNBOUNDED: the accumulator only */
        uint8_t *acc = st->meta + OV_META;
        if (!pl->rows)
            for (int i = from; rc == SL_OK && i < to; i++) rc = add_ent(op, st, &st->ents[i], acc);
        for (int i = from; rc == SL_OK && i < to; i++) {
            if (pl->rows) rc = add_ent(op, st, &st->ents[i], acc);
            if (rc == SL_OK) rc = emit_ent(op, st, &st->ents[i], acc, ++cnt);
            if (rc == SL_OK) rc = del_row(op, st, st->ents[i].t, st->ents[i].seq);
        }
    } else if (!pl->rows) { /* RANGE p PRECEDING: rows with time in [T - p, T] */
        int64_t lo = T - pl->preceding;
        sl_agg_init(l, st->acc);
        vals_reset(pl, st);
        for (int i = 0; rc == SL_OK && i < to; i++)
            if (st->ents[i].t >= lo) rc = add_ent(op, st, &st->ents[i], st->acc);
        for (int i = from; rc == SL_OK && i < to; i++)
            rc = emit_ent(op, st, &st->ents[i], st->acc, ++cnt);
        /* a later time T' > T reaches back to T' - p > lo */
        for (int i = 0; rc == SL_OK && i < to; i++)
            if (st->ents[i].t <= lo) rc = del_row(op, st, st->ents[i].t, st->ents[i].seq);
        if (rc == SL_OK && to > from) {
            int64_t at = T + pl->preceding + 1;
            if (at > T) rc = sl_op_timer_register(op, pl->proc ? SL_TIME_PROCESSING : SL_TIME_EVENT,
                                                  at, no_ns, 0);
        }
    } else { /* ROWS n PRECEDING: the n rows before and the row */
        int64_t n = pl->preceding;
        for (int i = from; rc == SL_OK && i < to; i++) {
            sl_agg_init(l, st->acc);
            vals_reset(pl, st);
            int first = (int64_t)i - n < 0 ? 0 : i - (int)n;
            for (int j = first; rc == SL_OK && j <= i; j++) rc = add_ent(op, st, &st->ents[j], st->acc);
            if (rc == SL_OK) rc = emit_ent(op, st, &st->ents[i], st->acc, ++cnt);
        }
        /* keep the last n emitted rows */
        for (int i = 0; rc == SL_OK && i < to - n; i++)
            rc = del_row(op, st, st->ents[i].t, st->ents[i].seq);
    }
    sl_put_lei64(st->meta + 8, cnt);
    return rc;
}

/* ---- callbacks ------------------------------------------------------------------- */

static int put_row(sl_op *op, ov_state *st, const sl_row *row, int64_t t, uint64_t seq)
{
    const ov_plan *pl = op->plan;
    char err[256];
    size_t sz = sl_row_size(row, op->in);
    if (sz > st->enccap) {
        st->enccap = sz * 2;
        st->enc = sl_realloc(st->enc, st->enccap);
    }
    sl_row r = *row;
    r.kind = SL_KIND_INSERT;
    if (sl_row_encode(&r, op->in, st->enc, sz) != sz)
        return sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
    uint8_t ns[OV_NS];
    ns_put(ns, t, seq);
    if (sl_kstate_put(op->kstate, st->sid_rows, ns, OV_NS, st->enc, sz, err, sizeof err) != SL_OK)
        return state_err(op, err);
    return SL_OK;
}

static int ov_process(sl_op *op, int input, sl_row *row)
{
    const ov_plan *pl = op->plan;
    ov_state *st = op->priv;
    SL_UNUSED(input);
    if (row->kind != SL_KIND_INSERT)
        return sl_op_fail(op, "vertex '%s': OVER aggregation needs an insert-only input, but a %s "
                          "row arrived", pl->vid, sl_rowkind_short(row->kind));
    int64_t t;
    if (pl->proc) {
        t = sl_op_processing_time(op);
    } else {
        if (row->vals[pl->tcol].isnull)
            return sl_op_fail(op, "vertex '%s': the time attribute '%s' is NULL in a row", pl->vid,
                              op->in->fields[pl->tcol].name);
        t = row->vals[pl->tcol].v.i;
        if (t <= op->current_watermark) { /* its time has been emitted */
            op->metrics.late_dropped++;
            return SL_OK;
        }
    }
    if (meta_read(op, st) != SL_OK) return SL_ERR;
    uint64_t seq = (uint64_t)sl_get_lei64(st->meta);
    sl_put_lei64(st->meta, (int64_t)seq + 1);
    int rc;
    if (!pl->proc) {
        rc = put_row(op, st, row, t, seq);
        if (rc == SL_OK) rc = sl_op_timer_register(op, SL_TIME_EVENT, t, no_ns, 0);
    } else if (pl->preceding < 0) { /* nothing to hold */
        uint8_t *acc = st->meta + OV_META;
        int64_t cnt = sl_get_lei64(st->meta + 8) + 1;
        if (sl_agg_add(&pl->aggs, acc, row) != SL_OK) return udf_failed(op);
        sl_put_lei64(st->meta + 8, cnt);
        rc = pl->nval ? vals_add(op, st, row) : SL_OK;
        if (rc == SL_OK) rc = emit_with(op, st, row, acc, cnt, row->ts);
    } else {
        rc = put_row(op, st, row, t, seq);
        if (rc == SL_OK) rc = scan_rows(op, st);
        int at = -1;
        for (int i = 0; rc == SL_OK && i < st->nents; i++)
            if (st->ents[i].seq == seq && st->ents[i].t == t) at = i;
        if (rc == SL_OK && at < 0) rc = sl_op_fail(op, "vertex '%s': a held row is missing", pl->vid);
        if (rc == SL_OK) rc = fire(op, st, t, at, at + 1);
    }
    if (rc == SL_OK) rc = meta_write(op, st);
    return rc;
}

static int ov_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns,
                       size_t nslen)
{
    ov_state *st = op->priv;
    const ov_plan *pl = op->plan;
    SL_UNUSED(domain);
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    if (scan_rows(op, st) != SL_OK) return SL_ERR;
    int from = 0, to;
    while (from < st->nents && st->ents[from].t < time) from++;
    to = from;
    if (!pl->proc)
        while (to < st->nents && st->ents[to].t == time) to++;
    if (st->nents == 0) return SL_OK;
    if (meta_read(op, st) != SL_OK) return SL_ERR;
    if (pl->proc && pl->preceding >= 0 && !pl->rows) { /* a clean-up: evict only */
        int64_t lo = time - pl->preceding;
        for (int i = 0; i < st->nents; i++)
            if (st->ents[i].t <= lo && del_row(op, st, st->ents[i].t, st->ents[i].seq) != SL_OK)
                return SL_ERR;
        return SL_OK;
    }
    if (fire(op, st, time, from, to) != SL_OK) return SL_ERR;
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
     "LAG(c[, n[, default column]]) AS name."},
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
    .restore_state = sl_op_restore_proc_timers,
};
