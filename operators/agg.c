/*
 * agg.c -- the aggregate library (see agg.h for the accumulator layout and
 * the semantics): the parser for aggregate items, Flink's result types, and
 * add / retract / merge / result over the fixed-size accumulator.
 *
 * The parser accepts "FN([DISTINCT] arg) [FILTER (WHERE col)] [[AS] alias]"
 * with FN one of COUNT, SUM, MIN, MAX, AVG (any case, blanks allowed around
 * the parentheses), arg a column, bare or `quoted` (`` doubles a
 * backtick), or `*` / `1` for COUNT, and col a BOOLEAN column. Anything
 * else -- expressions, several arguments -- is refused with a message saying what to do instead. Which argument types
 * each function takes follows Flink (COUNT: any; SUM, AVG: numeric; MIN,
 * MAX: numeric, BOOLEAN, TIMESTAMP, STRING -- a string's extremum is kept
 * by the caller, see agg.h).
 */
#include "agg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "bytes.h"
#include "decimal.h"
#include "jobgraph.h"
#include "sl.h"
#include "udf_guard.h"
#include "udf_sig.h"

/* ---- names and parsing ---------------------------------------------------- */

const char *sl_agg_fn_name(sl_agg_fn fn)
{
    static const char *const names[] = {"COUNT", "COUNT", "SUM", "MIN", "MAX", "AVG", "UDF",
                                         "COLLECT", "JSON_ARRAYAGG", "JSON_OBJECTAGG"};
    return (unsigned)fn < sizeof names / sizeof names[0] ? names[fn] : "?";
}

void sl_agg_list_init(sl_agg_list *l)
{
    memset(l, 0, sizeof *l);
    l->size = SL_AGG_HDR;
}

void sl_agg_list_free(sl_agg_list *l)
{
    if (!l) return;
    for (int i = 0; i < l->n; i++) free(l->aggs[i].text);
    free(l->aggs);
    sl_udf_set_destroy(l->udfs);
    sl_agg_list_init(l);
}

static bool is_id_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_id_char(unsigned char c)
{
    return is_id_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/* Read an identifier, bare or `quoted` (`` doubles a backtick), at *sp into
 * out[cap]. Returns false when there is none or it is too long. */
static bool read_ident(const char **sp, char *out, size_t cap)
{
    const char *s = *sp;
    size_t n = 0;
    if (*s == '`') {
        s++;
        for (;;) {
            if (!*s) return false;
            if (*s == '`') {
                if (s[1] != '`') break;
                s++;
            }
            if (n + 1 >= cap) return false;
            out[n++] = *s++;
        }
        s++;
        if (n == 0) return false;
    } else {
        if (!is_id_start((unsigned char)*s)) return false;
        while (is_id_char((unsigned char)*s)) {
            if (n + 1 >= cap) return false;
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    *sp = s;
    return true;
}

static bool is_numeric(sl_type t) { return t == SL_T_INT || t == SL_T_BIGINT || t == SL_T_DOUBLE; }
/* SUM and AVG also take these, each giving its own type as Flink's do:
 * integers summed in 64 bits and narrowed at the end (what wrapping at
 * every step, as Flink's byte/short sums do, comes to); a FLOAT SUM rounds
 * to float at every step, an AVG divides the double sum once. */
static bool is_small_num(sl_type t)
{
    return t == SL_T_TINYINT || t == SL_T_SMALLINT || t == SL_T_FLOAT;
}
static bool is_fp(sl_type t) { return t == SL_T_DOUBLE || t == SL_T_FLOAT; }
/* A FLOAT SUM's running value, rounded to float. */
static inline double fsum_round(const sl_agg *a, double s)
{
    return a->in_type == SL_T_FLOAT && a->fn == SL_AGG_SUM ? (double)(float)s : s;
}

/* Parse one item into a and its alias into name[cap] (empty: none). Errors
 * go to err without the "aggregate N" prefix. */
/* The arguments of user function a->udf from "(" at *sp: columns of `in`
 * of the declared types (INT widens to BIGINT, integers to DOUBLE). */
static int parse_udf_args(const char **sp, const sl_schema *in, sl_agg *a, char *err, size_t errlen)
{
    const sl_udf_sig *u = a->udf;
    const char *s = skip_ws(*sp + 1);
    char col[256];
    a->nargs = 0;
    while (*s != ')') {
        if (a->nargs && *s++ != ',')
            return sl_seterr(err, errlen, "expected ',' or ')' in the arguments of %s", u->name);
        s = skip_ws(s);
        if (!read_ident(&s, col, sizeof col))
            return sl_seterr(err, errlen, "the arguments of %s must be columns (compute "
                             "expressions in a calc vertex first)", u->name);
        s = skip_ws(s);
        if (a->nargs >= u->nargs)
            return sl_seterr(err, errlen, "%s takes %d argument%s", u->name, u->nargs,
                             u->nargs == 1 ? "" : "s");
        int c = sl_schema_find(in, col);
        if (c < 0) return sl_seterr(err, errlen, "unknown column '%s'", col);
        sl_type t = in->fields[c].type, want = u->args[a->nargs];
        const sl_dtype *cdt = in->fields[c].dt, *wdt = u->argdt[a->nargs];
        bool isint = t == SL_T_TINYINT || t == SL_T_SMALLINT || t == SL_T_INT || t == SL_T_BIGINT;
        bool fits = t == want || (t == SL_T_INT && want == SL_T_BIGINT) ||
                    ((t == SL_T_INT || t == SL_T_BIGINT) && want == SL_T_DOUBLE) ||
                    (isint && want == SL_T_DECIMAL);
        if (!fits)
            return sl_seterr(err, errlen, "argument %d of %s must be %s; '%s' is %s", a->nargs + 1,
                             u->name, want == SL_T_DECIMAL ? wdt->text : sl_type_name(want), col,
                             cdt->text);
        if (want == SL_T_DOUBLE && t != SL_T_DOUBLE) a->widen |= 1u << a->nargs;
        if (want == SL_T_DECIMAL && (isint || cdt->p != wdt->p || cdt->s != wdt->s)) {
            a->todec |= 1u << a->nargs;
            a->decsrc[a->nargs] = isint ? -1 : (int8_t)cdt->s;
        }
        a->cols[a->nargs++] = c;
    }
    if (a->nargs != u->nargs)
        return sl_seterr(err, errlen, "%s takes %d argument%s, not %d", u->name, u->nargs,
                         u->nargs == 1 ? "" : "s", a->nargs);
    a->col = a->nargs ? a->cols[0] : -1;
    a->in_type = a->nargs ? in->fields[a->cols[0]].type : SL_T_NULL;
    a->out_type = u->result;
    if (u->result == SL_T_DECIMAL) a->out_dt = u->resdt;
    *sp = skip_ws(s + 1);
    return SL_OK;
}

static int parse_item(const char *text, const sl_schema *in, const sl_udf_set *udfs, sl_agg *a,
                      char *name, size_t cap, char *err, size_t errlen)
{
    const char *s = skip_ws(text);
    char fn[16], col[256];
    const char *fn_start = s;
    while (is_id_char((unsigned char)*s)) s++;
    size_t fnlen = (size_t)(s - fn_start);
    int fnshow = (int)fnlen; /* the whole name, for the message */
    s = skip_ws(s);
    if (fnlen == 0 || *s != '(')
        return sl_seterr(err, errlen, "expected an aggregate call such as SUM(amount)");
    if (fnlen >= sizeof fn) fnlen = sizeof fn - 1;
    memcpy(fn, fn_start, fnlen);
    fn[fnlen] = '\0';
    if (strcasecmp(fn, "COUNT") == 0) a->fn = SL_AGG_COUNT;
    else if (strcasecmp(fn, "SUM") == 0) a->fn = SL_AGG_SUM;
    else if (strcasecmp(fn, "MIN") == 0) a->fn = SL_AGG_MIN;
    else if (strcasecmp(fn, "MAX") == 0) a->fn = SL_AGG_MAX;
    else if (strcasecmp(fn, "AVG") == 0) a->fn = SL_AGG_AVG;
    else if (strcasecmp(fn, "COLLECT") == 0) a->fn = SL_AGG_COLLECT;
    else if (strcasecmp(fn, "JSON_ARRAYAGG") == 0) a->fn = SL_AGG_JSON_ARRAYAGG;
    else if (strcasecmp(fn, "JSON_OBJECTAGG") == 0) a->fn = SL_AGG_JSON_OBJECTAGG;
    else {
        char uname[256];
        snprintf(uname, sizeof uname, "%.*s", fnshow, fn_start);
        a->udf = sl_udf_set_find(udfs, uname);
        if (!a->udf)
            return sl_seterr(err, errlen, "unknown aggregate function '%.*s' (expected COUNT, SUM, "
                             "MIN, MAX%s)", fnshow, fn_start,
                             udfs && udfs->n ? ", AVG or one of the vertex's 'functions'" : " or AVG");
        if (a->udf->kind != SL_UDF_AGG_KIND)
            return sl_seterr(err, errlen, "'%s' is not an aggregate function", a->udf->name);
        a->fn = SL_AGG_UDF;
        if (parse_udf_args(&s, in, a, err, errlen) != SL_OK) return SL_ERR;
    }
    const char *fname = sl_agg_fn_name(a->fn);
    if (a->fn == SL_AGG_UDF) goto filter;
    s = skip_ws(s + 1);
    a->col = -1;
    a->in_type = SL_T_NULL;
    if (*s == '*') {
        if (a->fn != SL_AGG_COUNT) return sl_seterr(err, errlen, "'*' is only allowed in COUNT(*)");
        a->fn = SL_AGG_COUNT_STAR;
        s++;
    } else if (a->fn == SL_AGG_COUNT && *s == '1' && !is_id_char((unsigned char)s[1])) {
        a->fn = SL_AGG_COUNT_STAR; /* COUNT(1) counts rows, as COUNT(*) (Flink rewrites it so) */
        s++;
    } else {
        const char *c0 = s;
        if (!read_ident(&s, col, sizeof col))
            return sl_seterr(err, errlen, "expected a column name inside %s( )", fname);
        if (strncasecmp(c0, "DISTINCT", 8) == 0 && s - c0 == 8 && *skip_ws(s) != ')') {
            s = skip_ws(s);
            if (*s == '*') return sl_seterr(err, errlen, "DISTINCT needs a column, not *");
            if (!read_ident(&s, col, sizeof col))
                return sl_seterr(err, errlen, "expected a column name after DISTINCT");
            /* MIN/MAX of the distinct values are MIN/MAX of all of them */
            a->distinct = a->fn != SL_AGG_MIN && a->fn != SL_AGG_MAX;
            if (a->fn == SL_AGG_COLLECT) {
                a->distinct = false;
                a->kept_distinct = true;
            } else if (sl_agg_kept(a)) {
                return sl_seterr(err, errlen, "%s(DISTINCT ...) is not supported yet", fname);
            }
        }
        a->col = sl_schema_find(in, col);
        if (a->col < 0) return sl_seterr(err, errlen, "unknown column '%s'", col);
        a->in_type = in->fields[a->col].type;
        a->in_dt = in->fields[a->col].dt;
    }
    s = skip_ws(s);
    if (a->fn == SL_AGG_JSON_OBJECTAGG) { /* k VALUE v */
        if (strncasecmp(s, "VALUE", 5) || is_id_char((unsigned char)s[5]))
            return sl_seterr(err, errlen, "expected JSON_OBJECTAGG(key VALUE value)");
        s = skip_ws(s + 5);
        if (!read_ident(&s, col, sizeof col))
            return sl_seterr(err, errlen, "expected a column name after VALUE");
        if ((a->vcol = sl_schema_find(in, col)) < 0)
            return sl_seterr(err, errlen, "unknown column '%s'", col);
        a->v_dt = in->fields[a->vcol].dt;
        a->null_on_null = true; /* Flink's default for JSON_OBJECTAGG */
        s = skip_ws(s);
    }
    if (a->fn == SL_AGG_JSON_ARRAYAGG || a->fn == SL_AGG_JSON_OBJECTAGG) {
        /* [NULL ON NULL | ABSENT ON NULL] */
        bool nul = !strncasecmp(s, "NULL", 4) && !is_id_char((unsigned char)s[4]);
        bool abs = !strncasecmp(s, "ABSENT", 6) && !is_id_char((unsigned char)s[6]);
        if (nul || abs) {
            const char *t = skip_ws(s + (nul ? 4 : 6));
            if (strncasecmp(t, "ON", 2) || is_id_char((unsigned char)t[2]) ||
                strncasecmp(t = skip_ws(t + 2), "NULL", 4) || is_id_char((unsigned char)t[4]))
                return sl_seterr(err, errlen, "expected NULL ON NULL or ABSENT ON NULL");
            a->null_on_null = nul;
            s = skip_ws(t + 4);
        }
    }
    if (*s != ')')
        return sl_seterr(err, errlen, "the argument of %s must be a single column (compute "
                         "expressions in a calc vertex first)", fname);
    s = skip_ws(s + 1);

    sl_type t = a->in_type;
    switch (a->fn) {
    case SL_AGG_COUNT_STAR:
    case SL_AGG_COUNT: a->out_type = SL_T_BIGINT; break;
    case SL_AGG_SUM:
    case SL_AGG_AVG:
        if (t == SL_T_DECIMAL) {
            sl_dec_type dt = {(uint8_t)a->in_dt->p, (uint8_t)a->in_dt->s};
            sl_dec_type r = a->fn == SL_AGG_SUM ? sl_dec_type_sum(dt) : sl_dec_type_avg(dt);
            if (!(a->out_dt = sl_dtype_decimal(r.p, r.s, err, errlen))) return SL_ERR;
            a->out_type = t;
            break;
        }
        if (!is_numeric(t) && !is_small_num(t))
            return sl_seterr(err, errlen, "%s needs a numeric column (TINYINT, SMALLINT, INT, "
                             "BIGINT, FLOAT, DOUBLE or DECIMAL); "
                             "'%s' is %s", fname, in->fields[a->col].name, sl_type_name(t));
        a->out_type = t;
        break;
    case SL_AGG_MIN:
    case SL_AGG_MAX:
        if (t == SL_T_DECIMAL && a->in_dt->p > 18)
            return sl_seterr(err, errlen, "%s of %s (precision above 18) is not supported yet; "
                             "'%s'", fname, a->in_dt->text, in->fields[a->col].name);
        if (t == SL_T_DECIMAL || t == SL_T_DATE || t == SL_T_TIME || t == SL_T_TINYINT ||
            t == SL_T_SMALLINT || t == SL_T_FLOAT) {
            if (sl_dtype_has_nanos(a->in_dt))
                return sl_seterr(err, errlen, "%s of %s is not supported yet; '%s'", fname,
                                 a->in_dt->text, in->fields[a->col].name);
            a->out_type = t;
            a->out_dt = sl_dtype_nullable(a->in_dt, false);
            break;
        }
        if (!is_numeric(t) && t != SL_T_TIMESTAMP && t != SL_T_BOOLEAN && t != SL_T_STRING)
            return sl_seterr(err, errlen, "%s needs an INT, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP "
                             "or STRING column; '%s' is %s", fname, in->fields[a->col].name,
                             in->fields[a->col].dt->text);
        if (sl_dtype_has_nanos(in->fields[a->col].dt))
            return sl_seterr(err, errlen, "%s needs an INT, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP "
                             "or STRING column; '%s' is %s", fname, in->fields[a->col].name,
                             sl_type_name(t));
        a->out_type = t;
        a->strval = t == SL_T_STRING;
        break;
    case SL_AGG_COLLECT: {
        if (a->col < 0) return sl_seterr(err, errlen, "COLLECT needs a column");
        char mt[1100];
        snprintf(mt, sizeof mt, "MULTISET<%s> NOT NULL", a->in_dt->text);
        if (strlen(mt) >= sizeof mt - 1 || sl_dtype_parse(mt, &a->out_dt, err, errlen) != SL_OK)
            return sl_seterr(err, errlen, "COLLECT of %s: the result type is too long",
                             a->in_dt->text);
        a->out_type = SL_T_MULTISET;
        break;
    }
    case SL_AGG_JSON_ARRAYAGG:
        if (a->col < 0) return sl_seterr(err, errlen, "JSON_ARRAYAGG needs a column");
        a->out_type = SL_T_STRING;
        a->out_dt = sl_dtype_nullable(sl_dtype_basic(SL_T_STRING), true);
        break;
    case SL_AGG_JSON_OBJECTAGG:
        if (a->col < 0) return sl_seterr(err, errlen, "JSON_OBJECTAGG needs a key column");
        if (t != SL_T_STRING)
            return sl_seterr(err, errlen, "the key of JSON_OBJECTAGG must be a STRING; '%s' is %s",
                             in->fields[a->col].name, a->in_dt->text);
        a->out_type = SL_T_STRING;
        a->out_dt = sl_dtype_nullable(sl_dtype_basic(SL_T_STRING), true);
        break;
    case SL_AGG_UDF: break;
    }

filter:
    a->filter = -1;
    if (strncasecmp(s, "FILTER", 6) == 0 && !is_id_char((unsigned char)s[6])) {
        s = skip_ws(s + 6);
        char fcol[256];
        if (*s != '(' || strncasecmp(s = skip_ws(s + 1), "WHERE", 5) != 0 ||
            is_id_char((unsigned char)s[5]))
            return sl_seterr(err, errlen, "expected FILTER (WHERE column)");
        s = skip_ws(s + 5);
        if (!read_ident(&s, fcol, sizeof fcol))
            return sl_seterr(err, errlen, "FILTER (WHERE ...) takes a BOOLEAN column (compute "
                             "conditions in a calc vertex first)");
        s = skip_ws(s);
        if (*s != ')') return sl_seterr(err, errlen, "expected ')' after FILTER (WHERE %s", fcol);
        s = skip_ws(s + 1);
        a->filter = sl_schema_find(in, fcol);
        if (a->filter < 0) return sl_seterr(err, errlen, "FILTER: unknown column '%s'", fcol);
        if (in->fields[a->filter].type != SL_T_BOOLEAN)
            return sl_seterr(err, errlen, "FILTER: column '%s' is %s, not BOOLEAN", fcol,
                             sl_type_name(in->fields[a->filter].type));
    }

    name[0] = '\0';
    if (*s) {
        const char *k = s;
        if (strncasecmp(k, "AS", 2) == 0 && !is_id_char((unsigned char)k[2])) {
            s = skip_ws(k + 2);
            if (!*s) return sl_seterr(err, errlen, "expected an alias after AS");
        }
        if (!read_ident(&s, name, cap))
            return sl_seterr(err, errlen, "expected an alias after the call, got '%s'", k);
        s = skip_ws(s);
        if (*s) return sl_seterr(err, errlen, "unexpected text '%s' after the alias", s);
    }
    return SL_OK;
}

static size_t slot_size(const sl_agg *a)
{
    switch (a->fn) {
    case SL_AGG_COUNT_STAR: return a->filter >= 0 ? 8 : 0;
    case SL_AGG_COUNT: return 8;
    case SL_AGG_SUM:
    case SL_AGG_AVG: return a->in_type == SL_T_DECIMAL ? 24 : 16;
    case SL_AGG_UDF: return 8 + (((size_t)a->udf->acc_size + 7) & ~(size_t)7);
    case SL_AGG_COLLECT: return 0; /* the caller keeps the values */
    case SL_AGG_JSON_ARRAYAGG: return 8; /* the next value's sequence number */
    case SL_AGG_JSON_OBJECTAGG: return 0; /* the caller keeps key -> value */
    default: return 16;
    }
}

int sl_agg_list_add(sl_agg_list *l, const char *text, int item, const sl_schema *in,
                    sl_schema *out, char *err, size_t errlen)
{
    sl_agg a = {0};
    char name[256], perr[300];
    if (parse_item(text, in, l->udfs, &a, name, sizeof name, perr, sizeof perr) != SL_OK)
        return sl_seterr(err, errlen, "aggregate %d '%s': %s", item, text, perr);
    if (sl_agg_kept(&a) && !l->allow_collect)
        return sl_seterr(err, errlen, "aggregate %d '%s': %s is only supported by the "
                         "group_aggregate, window and over_aggregate operators", item, text,
                         sl_agg_fn_name(a.fn));
    if (!name[0]) snprintf(name, sizeof name, "EXPR$%d", out->n);
    if (sl_schema_find(out, name) >= 0)
        return sl_seterr(err, errlen, "aggregate %d '%s': duplicate output column '%s' (rename "
                         "it with AS)", item, text, name);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->aggs = sl_realloc(l->aggs, (size_t)l->cap * sizeof *l->aggs);
    }
    a.off = l->size;
    a.text = sl_strdup(text);
    l->size += slot_size(&a);
    if ((a.fn == SL_AGG_MIN || a.fn == SL_AGG_MAX) && !a.strval) l->has_minmax = true;
    if (a.strval) l->has_strval = true;
    if (a.fn == SL_AGG_COLLECT) l->has_collect = true;
    if (a.fn == SL_AGG_JSON_ARRAYAGG || a.fn == SL_AGG_JSON_OBJECTAGG) l->has_jsonagg = true;
    if (a.distinct) l->has_distinct = true;
    if (a.udf) {
        l->has_udf = true;
        if (!a.udf->merge) l->udf_nomerge = true;
    }
    l->aggs[l->n++] = a;
    if (a.out_dt) sl_schema_add_dt(out, name, a.out_dt);
    else sl_schema_add(out, name, a.out_type);
    return SL_OK;
}

/* ---- order keys ------------------------------------------------------------- */

/* DOUBLE <-> an int64 whose signed order is Java's Double.compareTo order
 * (one NaN, sorted last; -0.0 before 0.0). The map is its own inverse on
 * the non-sign bits, so it can be undone. */
static inline int64_t dbl_key(double d)
{
    if (isnan(d)) d = NAN;
    int64_t b;
    memcpy(&b, &d, sizeof b);
    return b < 0 ? b ^ INT64_MAX : b;
}

static inline double key_dbl(int64_t k)
{
    int64_t b = k < 0 ? k ^ INT64_MAX : k;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

int64_t sl_agg_order_key(sl_type t, const sl_value *v)
{
    /* DECIMAL (p <= 18): the unscaled value; FLOAT is held as a double */
    return t == SL_T_DOUBLE || t == SL_T_FLOAT ? dbl_key(v->v.d)
         : t == SL_T_DECIMAL ? (int64_t)v->v.dec.lo : v->v.i;
}

/* A DECIMAL sum slot's 128 bits (lo at +8, hi at +16). */
static inline unsigned __int128 dsum_get(const uint8_t *slot)
{
    return ((unsigned __int128)sl_get_le64(slot + 16) << 64) | sl_get_le64(slot + 8);
}

static inline void dsum_put(uint8_t *slot, unsigned __int128 v)
{
    sl_put_le64(slot + 8, (uint64_t)v);
    sl_put_le64(slot + 16, (uint64_t)(v >> 64));
}

static inline unsigned __int128 dec_val(const sl_value *x)
{
    return (unsigned __int128)(((unsigned __int128)(uint64_t)x->v.dec.hi << 64) | x->v.dec.lo);
}

bool sl_agg_minmax_get(const sl_agg *a, const uint8_t *acc, int64_t *key)
{
    *key = sl_get_lei64(acc + a->off + 8);
    return sl_get_lei64(acc + a->off) != 0;
}

void sl_agg_minmax_set(const sl_agg *a, uint8_t *acc, bool has, int64_t key)
{
    sl_put_lei64(acc + a->off, has);
    sl_put_lei64(acc + a->off + 8, has ? key : 0);
}

/* ---- user-defined aggregate functions ---------------------------------------- */

static _Thread_local char udf_errbuf[768];

const char *sl_agg_error(void) { return udf_errbuf; }

static void *udf_no_alloc(sl_udf_ctx *ctx, size_t n)
{
    (void)ctx;
    (void)n;
    return NULL; /* aggregate results are not strings; nothing to allocate for */
}

static int udf_no_emit(sl_udf_ctx *ctx, const sl_value *row)
{
    (void)row;
    snprintf(ctx->err, sizeof ctx->err, "an aggregate function cannot emit rows");
    return 1;
}

/* The loaded table of a->udf, or NULL with the message set. */
static inline const sl_udf_aggregate *udf_table(const sl_agg *a)
{
    const sl_udf_aggregate *t = atomic_load_explicit(&((sl_udf_sig *)a->udf)->fn,
                                                     memory_order_acquire);
    if (SL_UNLIKELY(!t))
        snprintf(udf_errbuf, sizeof udf_errbuf, "function '%s' is not loaded here (user "
                 "functions run on TaskManagers only)", a->udf->name);
    return t;
}

/* Record the failure of a->udf's `what` (message msg) with the call's
 * arguments (args NULL: none of a row). Returns SL_ERR. */
static int udf_fail(const sl_agg *a, const char *what, const char *msg, const sl_value *args)
{
    size_t w = (size_t)snprintf(udf_errbuf, sizeof udf_errbuf, "function '%s' failed in %s: %s",
                                a->udf->name, what, msg[0] ? msg : "(no message)");
    for (int i = 0; args && i < a->nargs && w < sizeof udf_errbuf; i++) {
        const sl_value *v = &args[i];
        sl_type t = a->udf->args[i];
        const char *sep = i ? ", " : " (arguments: ";
        if (v->isnull)
            w += (size_t)snprintf(udf_errbuf + w, sizeof udf_errbuf - w, "%sNULL", sep);
        else if (t == SL_T_DOUBLE)
            w += (size_t)snprintf(udf_errbuf + w, sizeof udf_errbuf - w, "%s%.17g", sep, v->v.d);
        else if (t == SL_T_DECIMAL) {
            char dtext[SL_DEC_TEXT_MAX + 1];
            sl_dec d = {v->v.dec.lo, v->v.dec.hi};
            sl_dec_format(dtext, sizeof dtext, d, a->udf->argdt[i]->s);
            w += (size_t)snprintf(udf_errbuf + w, sizeof udf_errbuf - w, "%s%s", sep, dtext);
        } else if (t == SL_T_STRING || t == SL_T_BYTES)
            w += (size_t)snprintf(udf_errbuf + w, sizeof udf_errbuf - w, "%s'%.*s'", sep,
                                  (int)(v->v.s.len > 60 ? 60 : v->v.s.len), v->v.s.p);
        else
            w += (size_t)snprintf(udf_errbuf + w, sizeof udf_errbuf - w, "%s%lld", sep,
                                  (long long)v->v.i);
    }
    if (args && a->nargs && w < sizeof udf_errbuf)
        snprintf(udf_errbuf + w, sizeof udf_errbuf - w, ")");
    return SL_ERR;
}

static int udf_ctx_fail(const sl_agg *a, const char *what, sl_udf_ctx *ctx, const sl_value *args)
{
    ctx->err[sizeof ctx->err - 1] = 0;
    return udf_fail(a, what, ctx->err, args);
}

/* get_value's strings: the scratch arena the caller passed (ctx->host). */
static void *udf_res_alloc(sl_udf_ctx *ctx, size_t n)
{
    return ctx->host ? sl_arena_alloc(ctx->host, n) : NULL;
}

#define UDF_CTX {.abi = SL_UDF_ABI_VERSION, .alloc = udf_no_alloc, .emit = udf_no_emit}

/* The accumulator is copied to an aligned buffer around each call: state
 * bytes (and the window's entries) are not 8-byte aligned. */
typedef union {
    uint8_t b[SL_UDF_MAX_ACC];
    max_align_t align;
} udf_accbuf;

/* A Python aggregate function's step on the accumulator bytes at acc (the
 * TaskManager's embedded interpreter, taskmanager/pyhost.c). */
static int py_step(const sl_agg *a, sl_udf_agg_step step, uint8_t *acc, const uint8_t *other,
                   const sl_value *args, sl_arena *scratch, sl_value *out)
{
    static const char *const what[] = {"create", "accumulate", "retract", "merge", "get_value"};
    void *h = atomic_load_explicit(&((sl_udf_sig *)a->udf)->fn, memory_order_acquire);
    const sl_udf_host *host = sl_udf_host_get();
    if (SL_UNLIKELY(!h || !host)) {
        snprintf(udf_errbuf, sizeof udf_errbuf, "function '%s' is not loaded here (user "
                 "functions run on TaskManagers only)", a->udf->name);
        return SL_ERR;
    }
    char e2[600];
    if (host->agg(h, a->udf, step, acc, other, args, a->nargs, scratch, out, e2, sizeof e2) !=
        SL_OK)
        return udf_fail(a, what[step], e2, step == SL_UDF_AGG_ACCUMULATE ||
                                               step == SL_UDF_AGG_RETRACT ? args : NULL);
    return SL_OK;
}

/* Make sure the slot of a in acc holds a created accumulator, in *buf. */
static int udf_load(const sl_agg *a, const sl_udf_aggregate *t, const uint8_t *slot, udf_accbuf *buf)
{
    if (sl_get_lei64(slot) != 0) {
        memcpy(buf->b, slot + 8, a->udf->acc_size);
        return SL_OK;
    }
    memset(buf->b, 0, a->udf->acc_size);
    if (a->udf->python) return py_step(a, SL_UDF_AGG_CREATE, buf->b, NULL, NULL, NULL, NULL);
    sl_udf_ctx ctx = UDF_CTX;
    volatile int rc = 0;
    int crashed;
    SL_UDF_CALL(crashed, rc = t->create(&ctx, buf->b));
    if (crashed) return udf_fail(a, "create", sl_udf_crash_text(), NULL);
    if (rc != 0) return udf_ctx_fail(a, "create", &ctx, NULL);
    return SL_OK;
}

static void udf_store(const sl_agg *a, uint8_t *slot, const udf_accbuf *buf)
{
    sl_put_lei64(slot, 1);
    memcpy(slot + 8, buf->b, a->udf->acc_size);
}

/* accumulate (sign +1) or retract (-1) row's arguments into the slot. */
static int udf_step(const sl_agg *a, uint8_t *slot, const sl_row *row, int sign)
{
    const sl_udf_aggregate *t = udf_table(a);
    if (!t) return SL_ERR;
    sl_value args[SL_UDF_MAX_ARGS];
    for (int i = 0; i < a->nargs; i++) {
        args[i] = row->vals[a->cols[i]];
        if (args[i].isnull) {
            if (a->udf->strict) return SL_OK;
            continue;
        }
        if (a->udf->args[i] == SL_T_DOUBLE && ((a->widen >> i) & 1u))
            args[i].v.d = (double)args[i].v.i;
        if ((a->todec >> i) & 1u) { /* Flink's implicit CAST: NULL when it does not fit */
            const sl_dtype *w = a->udf->argdt[i];
            sl_dec_type dt = {(uint8_t)w->p, (uint8_t)w->s};
            sl_dec d = {args[i].v.dec.lo, args[i].v.dec.hi}, r;
            int st = a->decsrc[i] < 0 ? sl_dec_from_i64(args[i].v.i, dt, &r)
                                      : sl_dec_rescale(d, a->decsrc[i], dt, &r);
            if (st != SL_DEC_OK) {
                if (a->udf->strict) return SL_OK;
                memset(&args[i], 0, sizeof args[i]);
                args[i].isnull = true;
            } else {
                args[i].v.dec.lo = r.lo;
                args[i].v.dec.hi = r.hi;
            }
        }
    }
    if (sign < 0 && (!a->udf->retract || (!a->udf->python && !t->retract))) {
        snprintf(udf_errbuf, sizeof udf_errbuf, "function '%s' received a retraction but declares "
                 "no retract (its input must be insert-only, or give it retract)", a->udf->name);
        return SL_ERR;
    }
    if (a->udf->python) { /* in place: the slot's bytes are the pickled accumulator */
        if (sl_get_lei64(slot) == 0) {
            if (py_step(a, SL_UDF_AGG_CREATE, slot + 8, NULL, NULL, NULL, NULL) != SL_OK)
                return SL_ERR;
            sl_put_lei64(slot, 1);
        }
        return py_step(a, sign > 0 ? SL_UDF_AGG_ACCUMULATE : SL_UDF_AGG_RETRACT, slot + 8, NULL,
                       args, NULL, NULL);
    }
    udf_accbuf buf;
    if (udf_load(a, t, slot, &buf) != SL_OK) return SL_ERR;
    sl_udf_ctx ctx = UDF_CTX;
    volatile int rc = 0;
    int crashed;
    SL_UDF_CALL(crashed, rc = sign > 0 ? t->accumulate(&ctx, buf.b, args, a->nargs)
                                       : t->retract(&ctx, buf.b, args, a->nargs));
    if (crashed)
        return udf_fail(a, sign > 0 ? "accumulate" : "retract", sl_udf_crash_text(), args);
    if (rc != 0) return udf_ctx_fail(a, sign > 0 ? "accumulate" : "retract", &ctx, args);
    udf_store(a, slot, &buf);
    return SL_OK;
}

static int udf_merge(const sl_agg *a, uint8_t *d, const uint8_t *s)
{
    const sl_udf_aggregate *t = udf_table(a);
    if (!t) return SL_ERR;
    if (sl_get_lei64(s) == 0) return SL_OK; /* src never created: nothing to add */
    if (sl_get_lei64(d) == 0) {
        memcpy(d, s, 8 + a->udf->acc_size);
        return SL_OK;
    }
    if (!a->udf->merge || (!a->udf->python && !t->merge)) {
        snprintf(udf_errbuf, sizeof udf_errbuf, "function '%s' declares no merge", a->udf->name);
        return SL_ERR;
    }
    if (a->udf->python) return py_step(a, SL_UDF_AGG_MERGE, d + 8, s + 8, NULL, NULL, NULL);
    udf_accbuf db, sb;
    memcpy(db.b, d + 8, t->acc_size);
    memcpy(sb.b, s + 8, t->acc_size);
    sl_udf_ctx ctx = UDF_CTX;
    volatile int rc = 0;
    int crashed;
    SL_UDF_CALL(crashed, rc = t->merge(&ctx, db.b, sb.b));
    if (crashed) return udf_fail(a, "merge", sl_udf_crash_text(), NULL);
    if (rc != 0) return udf_ctx_fail(a, "merge", &ctx, NULL);
    udf_store(a, d, &db);
    return SL_OK;
}

static int udf_value(const sl_agg *a, const uint8_t *slot, sl_arena *scratch, sl_value *o)
{
    const sl_udf_aggregate *t = udf_table(a);
    udf_accbuf buf;
    if (!t || udf_load(a, t, slot, &buf) != SL_OK) return SL_ERR;
    memset(o, 0, sizeof *o);
    if (a->udf->python) return py_step(a, SL_UDF_AGG_VALUE, buf.b, NULL, NULL, scratch, o);
    sl_udf_ctx ctx = UDF_CTX;
    ctx.alloc = udf_res_alloc;
    ctx.host = scratch;
    volatile int rc = 0;
    int crashed;
    SL_UDF_CALL(crashed, rc = t->get_value(&ctx, buf.b, o));
    if (crashed) return udf_fail(a, "get_value", sl_udf_crash_text(), NULL);
    if (rc != 0) return udf_ctx_fail(a, "get_value", &ctx, NULL);
    char e2[200];
    if (a->udf->result == SL_T_DECIMAL && sl_udf_check_dec(a->udf->resdt, o, e2, sizeof e2) != SL_OK)
        return udf_fail(a, "get_value", e2, NULL);
    if (!o->isnull && (a->udf->result == SL_T_STRING || a->udf->result == SL_T_BYTES)) {
        const uint8_t *p = (const uint8_t *)o->v.s.p;
        if (!p && o->v.s.len)
            return udf_fail(a, "get_value", "returned a string without its bytes", NULL);
        if (p >= buf.b && p < buf.b + sizeof buf.b) {
            /* borrowed from the accumulator: the copy on this stack is going away */
            if ((size_t)(p - buf.b) + o->v.s.len > t->acc_size)
                return udf_fail(a, "get_value", "returned a string past its accumulator", NULL);
            char *c = o->v.s.len && scratch ? sl_arena_alloc(scratch, o->v.s.len) : (char *)"";
            if (!c)
                return udf_fail(a, "get_value", "its result is past the record's memory", NULL);
            if (o->v.s.len) memcpy(c, p, o->v.s.len);
            o->v.s.p = c;
        }
    }
    return SL_OK;
}

int sl_agg_list_functions(sl_agg_list *l, const char *vid, const json_t *config, char *err,
                          size_t errlen)
{
    char e2[500];
    sl_udf_set *set = sl_udf_set_from_json(json_object_get(config, "functions"), e2, sizeof e2);
    if (!set) return sl_seterr(err, errlen, "vertex '%s': %s", vid, e2);
    sl_udf_set_destroy(l->udfs);
    l->udfs = set;
    return SL_OK;
}

int sl_agg_open(const sl_agg_list *l, char *err, size_t errlen)
{
    if (!l->has_udf) return SL_OK;
    return sl_udf_set_resolve(l->udfs, err, errlen);
}

/* ---- add / retract / merge / result ----------------------------------------- */

int64_t sl_agg_rows(const uint8_t *acc) { return sl_get_lei64(acc); }

/* The running sum of SUM/AVG slot `slot` (non-NULL count n before this
 * value) plus or minus x. The first value is taken as it is (so SUM of a
 * single -0.0 is -0.0, as in Flink); integers wrap like Java's long. */
static inline void sum_step(const sl_agg *a, uint8_t *slot, int64_t n, const sl_value *x, int sign)
{
    if (a->in_type == SL_T_DECIMAL) { /* exact; wraps only far past 38 digits */
        unsigned __int128 s = n == 0 && sign > 0 ? 0 : dsum_get(slot);
        dsum_put(slot, sign > 0 ? s + dec_val(x) : s - dec_val(x));
        return;
    }
    if (is_fp(a->in_type)) {
        double s = sl_get_ledbl(slot + 8);
        sl_put_ledbl(slot + 8, n == 0 && sign > 0 ? x->v.d
                               : fsum_round(a, sign > 0 ? s + x->v.d : s - x->v.d));
    } else {
        uint64_t s = sl_get_le64(slot + 8), xi = (uint64_t)x->v.i;
        sl_put_le64(slot + 8, n == 0 && sign > 0 ? xi : sign > 0 ? s + xi : s - xi);
    }
}

/* Whether row counts for item a under its FILTER. */
static inline bool passes(const sl_agg *a, const sl_row *row)
{
    if (a->filter < 0) return true;
    const sl_value *f = &row->vals[a->filter];
    return !f->isnull && f->v.i != 0;
}

int sl_agg_add(const sl_agg_list *l, uint8_t *acc, const sl_row *row)
{
    sl_put_lei64(acc, sl_get_lei64(acc) + 1);
    for (int i = 0; i < l->n; i++) {
        const sl_agg *a = &l->aggs[i];
        if (a->distinct || !passes(a, row)) continue;
        if (a->fn == SL_AGG_UDF) {
            if (udf_step(a, acc + a->off, row, 1) != SL_OK) return SL_ERR;
            continue;
        }
        if (a->fn == SL_AGG_COUNT_STAR) {
            if (a->filter >= 0) sl_put_lei64(acc + a->off, sl_get_lei64(acc + a->off) + 1);
            continue;
        }
        if (sl_agg_kept(a)) continue;
        const sl_value *x = &row->vals[a->col];
        if (x->isnull) continue;
        uint8_t *slot = acc + a->off;
        int64_t n = sl_get_lei64(slot);
        switch (a->fn) {
        case SL_AGG_COUNT_STAR:
        case SL_AGG_COLLECT:
        case SL_AGG_JSON_ARRAYAGG:
        case SL_AGG_JSON_OBJECTAGG:
        case SL_AGG_UDF: break;
        case SL_AGG_COUNT: sl_put_lei64(slot, n + 1); break;
        case SL_AGG_SUM:
        case SL_AGG_AVG:
            sum_step(a, slot, n, x, 1);
            sl_put_lei64(slot, n + 1);
            break;
        case SL_AGG_MIN:
        case SL_AGG_MAX: {
            if (l->keep_values || a->strval) break;
            int64_t k = sl_agg_order_key(a->in_type, x);
            if (n == 0 || sl_agg_minmax_better(a, k, sl_get_lei64(slot + 8)))
                sl_agg_minmax_set(a, acc, true, k);
            break;
        }
        }
    }
    return SL_OK;
}

int sl_agg_retract(const sl_agg_list *l, uint8_t *acc, const sl_row *row)
{
    sl_put_lei64(acc, sl_get_lei64(acc) - 1);
    for (int i = 0; i < l->n; i++) {
        const sl_agg *a = &l->aggs[i];
        if (a->distinct || !passes(a, row)) continue;
        if (a->fn == SL_AGG_UDF) {
            if (udf_step(a, acc + a->off, row, -1) != SL_OK) return SL_ERR;
            continue;
        }
        if (a->fn == SL_AGG_COUNT_STAR) {
            if (a->filter >= 0) sl_put_lei64(acc + a->off, sl_get_lei64(acc + a->off) - 1);
            continue;
        }
        if (a->fn == SL_AGG_MIN || a->fn == SL_AGG_MAX || sl_agg_kept(a)) continue;
        const sl_value *x = &row->vals[a->col];
        if (x->isnull) continue;
        uint8_t *slot = acc + a->off;
        int64_t n = sl_get_lei64(slot);
        if (a->fn != SL_AGG_COUNT) sum_step(a, slot, n, x, -1);
        sl_put_lei64(slot, n - 1);
    }
    return SL_OK;
}

int sl_agg_merge(const sl_agg_list *l, uint8_t *dst, const uint8_t *src)
{
    sl_put_lei64(dst, sl_get_lei64(dst) + sl_get_lei64(src));
    for (int i = 0; i < l->n; i++) {
        const sl_agg *a = &l->aggs[i];
        if (sl_agg_kept(a)) continue; /* not mergeable: never here */
        uint8_t *d = dst + a->off;
        const uint8_t *s = src + a->off;
        int64_t dn = sl_get_lei64(d), sn = sl_get_lei64(s);
        switch (a->fn) {
        case SL_AGG_COLLECT:
        case SL_AGG_JSON_ARRAYAGG:
        case SL_AGG_JSON_OBJECTAGG: break;
        case SL_AGG_UDF:
            if (udf_merge(a, d, s) != SL_OK) return SL_ERR;
            break;
        case SL_AGG_COUNT_STAR:
            if (a->filter >= 0) sl_put_lei64(d, dn + sn);
            break;
        case SL_AGG_COUNT: sl_put_lei64(d, dn + sn); break;
        case SL_AGG_SUM:
        case SL_AGG_AVG:
            if (sn == 0) break;
            if (a->in_type == SL_T_DECIMAL) {
                dsum_put(d, (dn == 0 ? 0 : dsum_get(d)) + dsum_get(s));
            } else if (dn == 0) {
                memcpy(d + 8, s + 8, 8);
            } else if (is_fp(a->in_type)) {
                sl_put_ledbl(d + 8, fsum_round(a, sl_get_ledbl(d + 8) + sl_get_ledbl(s + 8)));
            } else {
                sl_put_le64(d + 8, sl_get_le64(d + 8) + sl_get_le64(s + 8));
            }
            sl_put_lei64(d, dn + sn);
            break;
        case SL_AGG_MIN:
        case SL_AGG_MAX: {
            int64_t sk, dk;
            if (a->strval || !sl_agg_minmax_get(a, src, &sk)) break;
            if (!sl_agg_minmax_get(a, dst, &dk) || sl_agg_minmax_better(a, sk, dk))
                sl_agg_minmax_set(a, dst, true, sk);
            break;
        }
        }
    }
    return SL_OK;
}

int sl_agg_result(const sl_agg_list *l, const uint8_t *acc, sl_value *out)
{
    return sl_agg_result_in(l, acc, NULL, out);
}

int sl_agg_result_in(const sl_agg_list *l, const uint8_t *acc, sl_arena *scratch, sl_value *out)
{
    for (int i = 0; i < l->n; i++) {
        const sl_agg *a = &l->aggs[i];
        const uint8_t *slot = acc + a->off;
        sl_value *o = &out[i];
        o->isnull = false;
        switch (a->fn) {
        case SL_AGG_UDF:
            if (udf_value(a, slot, scratch, o) != SL_OK) return SL_ERR;
            break;
        case SL_AGG_COUNT_STAR: o->v.i = sl_get_lei64(a->filter >= 0 ? slot : acc); break;
        case SL_AGG_COLLECT:
        case SL_AGG_JSON_ARRAYAGG:
        case SL_AGG_JSON_OBJECTAGG: o->v.s.p = "", o->v.s.len = 0; break; /* the caller's bytes */
        case SL_AGG_COUNT: o->v.i = sl_get_lei64(slot); break;
        case SL_AGG_SUM:
        case SL_AGG_AVG: {
            int64_t n = sl_get_lei64(slot);
            if (n <= 0) {
                o->isnull = true;
                break;
            }
            if (a->in_type == SL_T_DECIMAL) {
                sl_dec s = sl_dec_from_i128((__int128)dsum_get(slot)), r = s;
                sl_dec_type t = {(uint8_t)a->out_dt->p, (uint8_t)a->out_dt->s};
                int st = SL_DEC_OK;
                if (a->fn == SL_AGG_SUM) {
                    if (!sl_dec_fits(s, t.p)) st = SL_DEC_OVERFLOW;
                } else {
                    st = sl_dec_div(s, a->in_dt->s, sl_dec_from_i128(n), 0, t, &r);
                }
                if (st != SL_DEC_OK) {
                    o->isnull = true;
                    break;
                }
                o->v.dec.lo = r.lo;
                o->v.dec.hi = r.hi;
                break;
            }
            if (is_fp(a->in_type)) {
                double s = sl_get_ledbl(slot + 8);
                o->v.d = a->fn == SL_AGG_SUM ? s : s / (double)n;
                if (a->in_type == SL_T_FLOAT) o->v.d = (double)(float)o->v.d;
                break;
            }
            int64_t s = sl_get_lei64(slot + 8);
            int64_t r = a->fn == SL_AGG_SUM ? s : s / n; /* n > 0: truncates toward zero */
            uint64_t u = (uint64_t)r;
            o->v.i = a->in_type == SL_T_INT ? (int64_t)(int32_t)(uint32_t)u
                   : a->in_type == SL_T_SMALLINT ? (int64_t)(int16_t)(uint16_t)u
                   : a->in_type == SL_T_TINYINT ? (int64_t)(int8_t)(uint8_t)u : r;
            break;
        }
        case SL_AGG_MIN:
        case SL_AGG_MAX: {
            int64_t k;
            if (!sl_agg_minmax_get(a, acc, &k)) {
                o->isnull = true;
                break;
            }
            if (a->strval) o->v.s.p = "", o->v.s.len = 0; /* the caller's bytes go here */
            else if (a->in_type == SL_T_DOUBLE || a->in_type == SL_T_FLOAT) o->v.d = key_dbl(k);
            else if (a->in_type == SL_T_DECIMAL) o->v.dec.lo = (uint64_t)k, o->v.dec.hi = k < 0 ? -1 : 0;
            else {
                o->v.i = k;
                o->v.ts.nano = 0;
            }
            break;
        }
        }
    }
    return SL_OK;
}

bool sl_agg_results_equal(const sl_agg_list *l, const sl_value *a, const sl_value *b)
{
    for (int i = 0; i < l->n; i++) {
        if (a[i].isnull != b[i].isnull) return false;
        if (a[i].isnull) continue;
        if (l->aggs[i].out_type == SL_T_DOUBLE || l->aggs[i].out_type == SL_T_FLOAT) {
            if (dbl_key(a[i].v.d) != dbl_key(b[i].v.d)) return false;
        } else if (l->aggs[i].out_type == SL_T_DECIMAL) {
            if (a[i].v.dec.lo != b[i].v.dec.lo || a[i].v.dec.hi != b[i].v.dec.hi) return false;
        } else if (l->aggs[i].strval || l->aggs[i].out_type == SL_T_STRING ||
                   l->aggs[i].out_type == SL_T_BYTES || sl_agg_kept(&l->aggs[i])) {
            if (sl_agg_str_cmp(a[i].v.s.p, a[i].v.s.len, b[i].v.s.p, b[i].v.s.len)) return false;
        } else if (a[i].v.i != b[i].v.i) {
            return false;
        }
    }
    return true;
}

/* ---- STRING MIN/MAX --------------------------------------------------------------- */

bool sl_agg_str_value(const sl_agg *a, const sl_row *row, const void **p, size_t *len)
{
    const sl_value *x = &row->vals[a->col];
    if (!a->strval || x->isnull || !passes(a, row)) return false;
    *p = x->v.s.p;
    *len = x->v.s.len;
    return true;
}

int sl_agg_str_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0; /* memcmp compares unsigned bytes */
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

static int multiset_cmp(const void *x, const void *y, void *base)
{
    const uint8_t *a = (const uint8_t *)base + *(const size_t *)x;
    const uint8_t *b = (const uint8_t *)base + *(const size_t *)y;
    return sl_agg_str_cmp(a + 4, sl_get_le32(a), b + 4, sl_get_le32(b));
}

void sl_agg_multiset_sort(const uint8_t *base, size_t *ix, size_t n)
{
    if (n > 1) qsort_r(ix, n, sizeof *ix, multiset_cmp, (void *)base);
}

void sl_agg_multiset_build(const uint8_t *base, const size_t *ix, size_t n, bool once,
                           sl_buf *out)
{
    size_t live = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t l = sl_get_le32(base + ix[k]);
        live += sl_get_lei64(base + ix[k] + 4 + l) > 0;
    }
    size_t bm = (live + 7) / 8;
    sl_buf_reset(out);
    uint8_t hdr[4];
    sl_put_le32(hdr, (uint32_t)live);
    sl_buf_put(out, hdr, 4);
    for (size_t k = 0; k < bm; k++) sl_buf_putc(out, 0); /* no NULL elements */
    for (size_t k = 0; k < n; k++) {
        uint32_t l = sl_get_le32(base + ix[k]);
        if (sl_get_lei64(base + ix[k] + 4 + l) > 0) sl_buf_put(out, base + ix[k] + 4, l);
    }
    for (size_t k = 0; k < bm; k++) sl_buf_putc(out, 0);
    for (size_t k = 0; k < n; k++) {
        uint32_t l = sl_get_le32(base + ix[k]);
        int64_t c = sl_get_lei64(base + ix[k] + 4 + l);
        if (c <= 0) continue;
        if (once) c = 1;
        uint8_t cb[4];
        sl_put_le32(cb, (uint32_t)(c > INT32_MAX ? INT32_MAX : c));
        sl_buf_put(out, cb, 4);
    }
}

bool sl_agg_collect_value(const sl_agg *a, const sl_row *row, const sl_value **x)
{
    const sl_value *v = &row->vals[a->col];
    if ((a->fn != SL_AGG_COLLECT && a->fn != SL_AGG_JSON_ARRAYAGG) || v->isnull || !passes(a, row))
        return false;
    *x = v;
    return true;
}

bool sl_agg_minmax_value(const sl_agg *a, const sl_row *row, int64_t *key)
{
    const sl_value *x = &row->vals[a->col];
    if ((a->fn != SL_AGG_MIN && a->fn != SL_AGG_MAX) || a->strval || x->isnull || !passes(a, row))
        return false;
    *key = sl_agg_order_key(a->in_type, x);
    return true;
}

bool sl_agg_json_counts(const sl_agg *a, const sl_row *row)
{
    return passes(a, row);
}

/* ---- DISTINCT ------------------------------------------------------------------ */

bool sl_agg_distinct_value(const sl_agg *a, const sl_row *row, uint8_t tmp[8], const void **p,
                           size_t *len)
{
    const sl_value *x = &row->vals[a->col];
    if (!a->distinct || x->isnull || !passes(a, row)) return false;
    if (a->in_type == SL_T_STRING || a->in_type == SL_T_BYTES) {
        *p = x->v.s.p;
        *len = x->v.s.len;
    } else if (a->in_type == SL_T_DECIMAL) { /* the 16 bytes of the unscaled value */
        *p = &x->v.dec;
        *len = sizeof x->v.dec;
    } else {
        sl_put_lei64(tmp, sl_agg_order_key(a->in_type, x));
        *p = tmp;
        *len = 8;
    }
    return true;
}

void sl_agg_distinct_apply(const sl_agg_list *l, int i, uint8_t *acc, const sl_row *row, int sign)
{
    const sl_agg *a = &l->aggs[i];
    uint8_t *slot = acc + a->off;
    int64_t n = sl_get_lei64(slot);
    if (a->fn == SL_AGG_SUM || a->fn == SL_AGG_AVG) sum_step(a, slot, n, &row->vals[a->col], sign);
    sl_put_lei64(slot, n + sign);
}

bool sl_agg_mergeable(const sl_agg_list *l)
{
    return !l->has_distinct && !l->keep_values && !l->has_strval && !l->udf_nomerge &&
           !l->has_collect && !l->has_jsonagg;
}

int sl_agg_phase(const char *vid, const char *phase, bool *global, char *err, size_t errlen)
{
    *global = phase && strcasecmp(phase, "global") == 0;
    if (*global || !phase || strcasecmp(phase, "single") == 0) return SL_OK;
    return sl_seterr(err, errlen, "vertex '%s': option 'phase' must be 'single' or 'global', not "
                     "'%s'", vid, phase);
}

/* ---- the operators' options ------------------------------------------------- */

/* An option that is one item or a list of them: its items, or -1 when it is
 * neither a string nor an array. Absent and null are empty. */
static long option_items(const json_t *j)
{
    if (!j || json_is_null(j)) return 0;
    if (json_is_string(j)) return 1;
    return json_is_array(j) ? (long)json_array_size(j) : -1;
}

static const json_t *option_item(const json_t *j, long i)
{
    return json_is_string(j) ? j : json_array_get(j, (size_t)i);
}

int sl_agg_plan_options(const char *vid, const json_t *config, const sl_schema *in,
                        bool keys_required, sl_schema *out, sl_schema *agg_out, int **keys,
                        int *nkeys, sl_schema *key_schema, sl_agg_list *aggs, char *err,
                        size_t errlen)
{
    if (sl_agg_list_functions(aggs, vid, config, err, errlen) != SL_OK) return SL_ERR;
    const json_t *jg = json_object_get(config, "group-by");
    long ng = option_items(jg);
    *nkeys = 0;
    *keys = sl_calloc(ng > 0 ? (size_t)ng : 1, sizeof **keys);
    if (ng < 0)
        return sl_seterr(err, errlen, "vertex '%s': option 'group-by' must be an array of column "
                         "names, e.g. [\"user_id\"]", vid);
    if (ng == 0 && keys_required)
        return sl_seterr(err, errlen, "vertex '%s': option 'group-by' must list at least one "
                         "column (the key), e.g. [\"user_id\"]", vid);
    if (ng > SL_MAX_KEY_COLS)
        return sl_seterr(err, errlen, "vertex '%s': option 'group-by' lists %ld columns, the "
                         "limit is %d", vid, ng, SL_MAX_KEY_COLS);
    for (long i = 0; i < ng; i++) {
        const json_t *jk = option_item(jg, i);
        if (!json_is_string(jk))
            return sl_seterr(err, errlen, "vertex '%s': group-by item %ld must be a column name, "
                             "e.g. \"user_id\"", vid, i + 1);
        const char *name = json_string_value(jk);
        int c = sl_schema_find(in, name);
        if (c < 0)
            return sl_seterr(err, errlen, "vertex '%s': group-by column '%s' is not in the input",
                             vid, name);
        for (int q = 0; q < *nkeys; q++)
            if ((*keys)[q] == c)
                return sl_seterr(err, errlen, "vertex '%s': group-by column '%s' is listed twice",
                                 vid, name);
        if (sl_schema_find(out, in->fields[c].name) >= 0)
            return sl_seterr(err, errlen, "vertex '%s': group-by column '%s' clashes with the "
                             "output column of that name", vid, name);
        (*keys)[(*nkeys)++] = c;
        if (key_schema) sl_schema_add_dt(key_schema, in->fields[c].name, in->fields[c].dt);
        sl_schema_add_dt(out, in->fields[c].name, in->fields[c].dt);
    }

    const json_t *ja = json_object_get(config, "aggregates");
    long na = option_items(ja);
    if (na < 0)
        return sl_seterr(err, errlen, "vertex '%s': option 'aggregates' must be an array of "
                         "aggregate calls, e.g. [\"COUNT(*) AS cnt\"]", vid);
    if (na == 0 && ng == 0)
        return sl_seterr(err, errlen, "vertex '%s': option 'aggregates' must list at least one "
                         "aggregate when there is no group-by key, e.g. [\"COUNT(*) AS cnt\"]",
                         vid);
    if ((long)agg_out->n + na > SL_MAX_FIELDS)
        return sl_seterr(err, errlen, "vertex '%s': %ld output columns, the limit is %d", vid,
                         (long)agg_out->n + na, SL_MAX_FIELDS);
    for (long i = 0; i < na; i++) {
        const json_t *ji = option_item(ja, i);
        if (!json_is_string(ji))
            return sl_seterr(err, errlen, "vertex '%s': aggregate %ld must be a string, e.g. "
                             "\"SUM(amount) AS total\"", vid, i + 1);
        char aerr[600];
        if (sl_agg_list_add(aggs, json_string_value(ji), (int)i + 1, in, agg_out, aerr,
                            sizeof aerr) != SL_OK)
            return sl_seterr(err, errlen, "vertex '%s': %s", vid, aerr);
    }
    return SL_OK;
}
