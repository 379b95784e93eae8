/*
 * expr_nest.c -- the value constructors ARRAY[...], MAP[...] and ROW(...),
 * element and field access (arr[i], m[k], r.f) and the CASTs to, from and
 * between ARRAY, MAP, MULTISET and ROW values, as Flink types and runs them.
 *
 * Each form is an entry of the function table's kind (sl_fnx) typed by
 * sl_nest_type: the grammar's SQL_CTOR, SQL_ELEMENT and SQL_FIELD nodes and
 * CASTs that involve a nested type become calls of the internal entries
 * SL_ARRAY, SL_MAP, SL_ELEMENT, SL_FIELD and SL_CAST (expr_check.c), ROW(...)
 * is a call of ROW. A constructor's element type is the least restrictive
 * type of its elements (Calcite's rule: integers widen, an integer beside a
 * DECIMAL(p, s) makes the DECIMAL wide enough for both, anything beside a
 * DOUBLE is a DOUBLE, TIMESTAMPs take the larger precision, nested types
 * field by field); each element is converted to it as it is stored.
 *
 * Values are read in place with core/row.h's nested readers and built with
 * sl_nested_build into the record's scratch arena; CAST to STRING writes
 * Flink's text (`[1, NULL]`, `{a=1}`, `(1, x)`) there too. No malloc.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"
#include "temporal.h"

static void set_null(sl_value *out) { *out = (sl_value){.isnull = true}; }

static const sl_dtype *kdt(const node *k) { return k->dt ? k->dt : sl_dtype_basic(k->type); }

static bool int_kind(sl_type t)
{
    return t == SL_T_TINYINT || t == SL_T_SMALLINT || t == SL_T_INT || t == SL_T_BIGINT;
}
static int int_rank(sl_type t)
{
    return t == SL_T_TINYINT ? 1 : t == SL_T_SMALLINT ? 2 : t == SL_T_INT ? 3 : 4;
}
static int int_digits(sl_type t)
{
    return t == SL_T_TINYINT ? 3 : t == SL_T_SMALLINT ? 5 : t == SL_T_INT ? 10 : 19;
}
static bool num_kind(sl_type t)
{
    return int_kind(t) || t == SL_T_DECIMAL || t == SL_T_FLOAT || t == SL_T_DOUBLE;
}

/* ---- types ------------------------------------------------------------------- */

/* The least restrictive type of a and b (nullable), or NULL. */
static const sl_dtype *common_dt(const sl_dtype *a, const sl_dtype *b)
{
    if (a->kind == SL_T_NULL) return b;
    if (b->kind == SL_T_NULL) return a;
    if (a->phys == b->phys && !sl_type_is_nested(a->kind)) {
        /* one length keeps it (MAP['a', 1, 'b', 2]: CHAR(1) keys); other lengths are
         * STRING, not Flink's padded CHAR of the longer (docs/SQL.md) */
        if ((a->kind == SL_T_STRING || a->kind == SL_T_BYTES) &&
            sl_dtype_nullable(a, false) != sl_dtype_nullable(b, false))
            return sl_dtype_basic(a->kind);
        return sl_dtype_nullable(a, false);
    }
    if (num_kind(a->kind) && num_kind(b->kind)) {
        if (a->kind == SL_T_DOUBLE || b->kind == SL_T_DOUBLE ||
            ((a->kind == SL_T_FLOAT) != (b->kind == SL_T_FLOAT)))
            return sl_dtype_basic(SL_T_DOUBLE);
        if (a->kind == SL_T_FLOAT) return sl_dtype_basic(SL_T_FLOAT);
        if (a->kind == SL_T_DECIMAL || b->kind == SL_T_DECIMAL) {
            int ia = a->kind == SL_T_DECIMAL ? a->p - a->s : int_digits(a->kind);
            int ib = b->kind == SL_T_DECIMAL ? b->p - b->s : int_digits(b->kind);
            int s = SL_MAX(a->kind == SL_T_DECIMAL ? a->s : 0, b->kind == SL_T_DECIMAL ? b->s : 0);
            int p = SL_MIN(SL_MAX(ia, ib) + s, SL_DECIMAL_MAX_PRECISION);
            return sl_dtype_decimal(p, SL_MIN(s, p), NULL, 0);
        }
        return sl_dtype_basic(int_rank(a->kind) >= int_rank(b->kind) ? a->kind : b->kind);
    }
    if (a->kind != b->kind) return NULL;
    switch (a->kind) {
    case SL_T_TIMESTAMP:
    case SL_T_TIME: {
        if (a->variant != b->variant) return NULL;
        return sl_dtype_nullable(a->p >= b->p ? a : b, false);
    }
    case SL_T_ARRAY:
    case SL_T_MULTISET: {
        const sl_dtype *e = common_dt(a->elem, b->elem);
        if (!e) return NULL;
        e = sl_dtype_nullable(e, a->elem->notnull && b->elem->notnull); /* NOT NULL if both */
        if (a->kind == SL_T_ARRAY) return sl_dtype_array(e, NULL, 0);
        char txt[600];
        const sl_dtype *m = NULL;
        snprintf(txt, sizeof txt, "MULTISET<%s>", e->text);
        return sl_dtype_parse(txt, &m, NULL, 0) == SL_OK ? m : NULL;
    }
    case SL_T_MAP: {
        const sl_dtype *k = common_dt(a->elem, b->elem), *v = common_dt(a->val, b->val);
        if (!k || !v) return NULL;
        return sl_dtype_map(sl_dtype_nullable(k, a->elem->notnull && b->elem->notnull),
                            sl_dtype_nullable(v, a->val->notnull && b->val->notnull), NULL, 0);
    }
    case SL_T_ROW: {
        if (a->nfields != b->nfields) return NULL;
        const sl_dtype *ft[SL_MAX_FIELDS_DT];
        for (int i = 0; i < a->nfields; i++)
            if (!(ft[i] = common_dt(a->ftypes[i], b->ftypes[i]))) return NULL;
            else ft[i] = sl_dtype_nullable(ft[i], a->ftypes[i]->notnull && b->ftypes[i]->notnull);
        return sl_dtype_row(a->nfields, a->names, ft, NULL, 0);
    }
    default: return NULL;
    }
}

/* Can a value of type `from` become one of type `to`? `cast`: an explicit
 * CAST (also narrowing numbers, text to numbers, anything to STRING);
 * otherwise only what a constructor or a MAP key lookup widens. */
static bool conv_ok(const sl_dtype *from, const sl_dtype *to, bool cast)
{
    if (from->kind == SL_T_NULL || from->phys == to->phys) return true;
    if (num_kind(from->kind) && num_kind(to->kind)) return true;
    if (from->kind == to->kind && (from->kind == SL_T_TIMESTAMP || from->kind == SL_T_TIME))
        return from->variant == to->variant;
    if (to->kind == SL_T_STRING)
        return cast || from->kind == SL_T_STRING;
    if (cast && from->kind == SL_T_STRING && (int_kind(to->kind) || to->kind == SL_T_DECIMAL ||
                                              to->kind == SL_T_DOUBLE || to->kind == SL_T_FLOAT))
        return true;
    if (from->kind != to->kind) return false;
    switch (from->kind) {
    case SL_T_ARRAY:
    case SL_T_MULTISET: return conv_ok(from->elem, to->elem, cast);
    case SL_T_MAP: return conv_ok(from->elem, to->elem, cast) && conv_ok(from->val, to->val, cast);
    case SL_T_ROW:
        if (from->nfields != to->nfields) return false;
        for (int i = 0; i < from->nfields; i++)
            if (!conv_ok(from->ftypes[i], to->ftypes[i], cast)) return false;
        return true;
    default: return false;
    }
}

/* ---- values ------------------------------------------------------------------- */

/* A growing text in the scratch arena. */
typedef struct tbuf {
    sl_arena *a;
    char *p;
    size_t len, cap;
    bool full; /* the arena said no */
} tbuf;

static void tput(tbuf *t, const char *s, size_t n)
{
    if (t->full) return;
    if (t->len + n > t->cap) {
        size_t cap = SL_MAX(t->cap * 2, t->len + n + 64);
        char *np = sl_arena_alloc(t->a, cap);
        if (!np) {
            t->full = true;
            return;
        }
        if (t->len) memcpy(np, t->p, t->len);
        t->p = np;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
}
static void tstr(tbuf *t, const char *s) { tput(t, s, strlen(s)); }

/* v (non-null, of type dt) as Flink's CAST(... AS STRING) writes it. */
static void to_text(tbuf *t, const sl_dtype *dt, const sl_value *v)
{
    char buf[96];
    int n = 0;
    switch (dt->kind) {
    case SL_T_BOOLEAN: tstr(t, v->v.i ? "TRUE" : "FALSE"); return;
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
    case SL_T_INT:
    case SL_T_BIGINT: n = snprintf(buf, sizeof buf, "%lld", (long long)v->v.i); break;
    case SL_T_FLOAT:
    case SL_T_DOUBLE: n = sl_value_format(buf, sizeof buf, v, dt->kind); break;
    case SL_T_DECIMAL: {
        sl_dec d = {v->v.dec.lo, v->v.dec.hi};
        n = sl_dec_format(buf, sizeof buf, d, dt->s);
        break;
    }
    case SL_T_DATE: n = sl_date_format(buf, sizeof buf, (int32_t)v->v.i); break;
    case SL_T_TIME: n = sl_time_format(buf, sizeof buf, (int32_t)v->v.i, dt->p, SL_TT_SQL); break;
    case SL_T_TIMESTAMP: {
        sl_ts ts = {v->v.ts.ms, sl_dtype_has_nanos(dt) ? v->v.ts.nano : 0};
        n = sl_timestamp_format(buf, sizeof buf, ts, dt->p, SL_TT_SQL);
        break;
    }
    case SL_T_INTERVAL_YM: n = sl_interval_ym_format(buf, sizeof buf, (int32_t)v->v.i); break;
    case SL_T_INTERVAL_DT: n = sl_interval_dt_format(buf, sizeof buf, v->v.i); break;
    case SL_T_STRING:
    case SL_T_BYTES: tput(t, v->v.s.p, v->v.s.len); return;
    case SL_T_ARRAY:
    case SL_T_MULTISET:
    case SL_T_MAP:
    case SL_T_ROW: {
        sl_nested_reader r;
        sl_value e, mv;
        bool map = dt->kind == SL_T_MAP || dt->kind == SL_T_MULTISET;
        sl_nested_open(&r, dt, v);
        tstr(t, dt->kind == SL_T_ROW ? "(" : map ? "{" : "[");
        for (uint32_t i = 0; sl_nested_next(&r, &e, map ? &mv : NULL); i++) {
            if (i) tstr(t, ", ");
            const sl_dtype *et = sl_nested_elem_type(dt, i);
            if (dt->kind == SL_T_MULTISET) { /* an element once per occurrence */
                for (int64_t k = 0; k < mv.v.i; k++) {
                    if (k) tstr(t, ", ");
                    if (e.isnull) tstr(t, "NULL");
                    else to_text(t, et, &e);
                }
                continue;
            }
            if (e.isnull) tstr(t, "NULL");
            else to_text(t, et, &e);
            if (dt->kind == SL_T_MAP) {
                tstr(t, "=");
                if (mv.isnull) tstr(t, "NULL");
                else to_text(t, dt->val, &mv);
            }
        }
        tstr(t, dt->kind == SL_T_ROW ? ")" : map ? "}" : "]");
        return;
    }
    default: tstr(t, "?"); return;
    }
    if (n > 0) tput(t, buf, SL_MIN((size_t)n, sizeof buf - 1));
}

/* Convert non-null *v of type `from` into type `to` (conv_ok said yes).
 * SL_DONE: text that is no number under TRY_CAST (the caller's result is NULL). */
static int conv(const node *n, sl_fnx_cx *cx, const sl_dtype *from, const sl_dtype *to,
                sl_value *v, bool try_cast)
{
    if (from->phys == to->phys || from->kind == SL_T_NULL) return SL_OK;
    sl_type f = from->kind, k = to->kind;
    if (k == SL_T_STRING) {
        tbuf t = {.a = cx->scratch};
        to_text(&t, from, v);
        if (t.full) return sl_fnx_err(n, cx, "CAST: scratch space exhausted");
        fnx_set_s(v, t.p ? t.p : "", t.len);
        return SL_OK;
    }
    if (f == SL_T_STRING) { /* CAST of text to a number */
        char buf[128];
        size_t len = SL_MIN((size_t)v->v.s.len, sizeof buf - 1);
        memcpy(buf, v->v.s.p, len);
        buf[len] = '\0';
        char *s = buf, *end;
        while (*s == ' ') s++;
        size_t sl = strlen(s);
        while (sl && s[sl - 1] == ' ') s[--sl] = '\0';
        bool ok = v->v.s.len < sizeof buf && sl > 0;
        if (ok && int_kind(k)) {
            int64_t x;
            ok = sl_expr_parse_i64(s, sl, &x);
            if (ok) v->v.i = x;
            from = sl_dtype_basic(SL_T_BIGINT);
        } else if (ok && k == SL_T_DECIMAL) {
            sl_dec_type dt = {(uint8_t)to->p, (uint8_t)to->s};
            sl_dec r;
            ok = sl_dec_parse(s, sl, dt, &r) == SL_DEC_OK;
            v->v.dec.lo = r.lo;
            v->v.dec.hi = r.hi;
            if (ok) return SL_OK;
        } else if (ok) {
            double d = strtod(s, &end);
            ok = *end == '\0';
            v->v.d = k == SL_T_FLOAT ? (double)(float)d : d;
            if (ok) return SL_OK;
        }
        if (!ok) {
            if (try_cast) return SL_DONE; /* TRY_CAST: the whole value is NULL */
            return sl_fnx_err(n, cx, "cannot CAST '%s' to %s", s, to->text);
        }
        f = SL_T_BIGINT;
    }
    if (num_kind(f) && num_kind(k)) {
        if (k == SL_T_DOUBLE || k == SL_T_FLOAT) {
            double d = f == SL_T_DOUBLE || f == SL_T_FLOAT ? v->v.d : (double)v->v.i;
            if (f == SL_T_DECIMAL) {
                sl_dec x = {v->v.dec.lo, v->v.dec.hi};
                sl_dec_type t = {(uint8_t)from->p, (uint8_t)from->s};
                d = sl_dec_to_double(x, t);
            }
            v->v.d = k == SL_T_FLOAT ? (double)(float)d : d;
            return SL_OK;
        }
        if (k == SL_T_DECIMAL) {
            sl_dec_type t = {(uint8_t)to->p, (uint8_t)to->s};
            sl_dec r;
            int st;
            if (f == SL_T_DOUBLE || f == SL_T_FLOAT) {
                st = sl_dec_from_double(v->v.d, t, &r);
            } else {
                sl_dec x = f == SL_T_DECIMAL ? (sl_dec){v->v.dec.lo, v->v.dec.hi}
                                             : sl_dec_from_i128(v->v.i);
                st = sl_dec_rescale(x, f == SL_T_DECIMAL ? from->s : 0, t, &r);
            }
            if (st != SL_DEC_OK) set_null(v); /* an overflow is NULL, as a numeric CAST */
            else v->v.dec.lo = r.lo, v->v.dec.hi = r.hi;
            return SL_OK;
        }
        /* to an integer: the fraction cut, the low bits kept (Java's narrowing) */
        int64_t x;
        if (f == SL_T_DECIMAL) sl_dec_to_i64((sl_dec){v->v.dec.lo, v->v.dec.hi}, from->s, &x);
        else if (f == SL_T_DOUBLE || f == SL_T_FLOAT)
            x = isnan(v->v.d) ? 0 : v->v.d >= 9.2e18 ? INT64_MAX : v->v.d <= -9.2e18 ? INT64_MIN
                                                                             : (int64_t)v->v.d;
        else x = v->v.i;
        switch (k) {
        case SL_T_TINYINT: x = (int8_t)(uint8_t)(uint64_t)x; break;
        case SL_T_SMALLINT: x = (int16_t)(uint16_t)(uint64_t)x; break;
        case SL_T_INT: x = (int32_t)(uint32_t)(uint64_t)x; break;
        default: break;
        }
        v->v.i = x;
        return SL_OK;
    }
    if (k == SL_T_TIMESTAMP || k == SL_T_TIME) { /* another precision: cut the fraction */
        int32_t nano = sl_dtype_has_nanos(from) ? v->v.ts.nano : 0;
        if (to->p <= 3) {
            int64_t unit = to->p >= 3 ? 1 : to->p == 2 ? 10 : to->p == 1 ? 100 : 1000;
            int64_t ms = v->v.ts.ms;
            ms -= ((ms % unit) + unit) % unit;
            v->v.ts.ms = ms;
            v->v.ts.nano = 0;
        } else {
            int32_t unit = 1;
            for (int i = to->p; i < 9; i++) unit *= 10;
            v->v.ts.nano = nano - nano % unit;
        }
        return SL_OK;
    }
    /* nested: element by element into a new value of type `to` */
    sl_nested_reader r;
    uint32_t cnt = sl_nested_open(&r, from, v);
    bool map = k == SL_T_MAP || k == SL_T_MULTISET;
    size_t al = _Alignof(sl_value);
    char *raw = sl_arena_alloc(cx->scratch, ((size_t)cnt + 1) * 2 * sizeof(sl_value) + al);
    if (!raw) return sl_fnx_err(n, cx, "CAST: scratch space exhausted");
    sl_value *vals = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al);
    sl_value *mv = vals + cnt + 1;
    for (uint32_t i = 0; sl_nested_next(&r, &vals[i], map ? &mv[i] : NULL); i++) {
        const sl_dtype *fe = sl_nested_elem_type(from, i), *te = sl_nested_elem_type(to, i);
        int rc = vals[i].isnull ? SL_OK : conv(n, cx, fe, te, &vals[i], try_cast);
        if (rc == SL_OK && k == SL_T_MAP && !mv[i].isnull)
            rc = conv(n, cx, from->val, to->val, &mv[i], try_cast);
        if (rc != SL_OK) return rc;
    }
    if (sl_nested_build(to, vals, cnt, map ? mv : NULL, cx->scratch, v) != SL_OK)
        return sl_fnx_err(n, cx, "CAST: scratch space exhausted");
    v->isnull = false;
    return SL_OK;
}

/* Equal non-null values of one type (MAP keys): Java's equals. */
static bool same(const sl_dtype *dt, const sl_value *a, const sl_value *b)
{
    switch (dt->kind) {
    case SL_T_DOUBLE:
    case SL_T_FLOAT: return memcmp(&a->v.d, &b->v.d, sizeof a->v.d) == 0;
    case SL_T_DECIMAL: return a->v.dec.lo == b->v.dec.lo && a->v.dec.hi == b->v.dec.hi;
    default:
        if (sl_type_is_var(dt->kind))
            return a->v.s.len == b->v.s.len && (!a->v.s.len || !memcmp(a->v.s.p, b->v.s.p, a->v.s.len));
        if (sl_dtype_has_nanos(dt) && a->v.ts.nano != b->v.ts.nano) return false;
        return a->v.i == b->v.i;
    }
}

/* Equal non-null values of one type, as Flink's `=` compares values read
 * from a source: numbers by value (0.0 = -0.0, NaN unequal to itself), text
 * and bytes byte for byte, TIME/TIMESTAMP to the nanosecond; an ARRAY
 * element by element, where a NULL element on either side makes the arrays
 * unequal (Flink's generated loop compares elements with `=`); a ROW field
 * by field, two NULL fields being equal; a MAP or MULTISET entry by entry
 * whatever their order (a key found in both with equal values, two NULL
 * values equal, as java.util.Map.equals -- Flink's own answer for maps read
 * from a source is FALSE even for equal ones, docs/SQL.md). */
static bool value_eq(const sl_dtype *dt, const sl_value *a, const sl_value *b)
{
    switch (dt->kind) {
    case SL_T_DOUBLE:
    case SL_T_FLOAT: return a->v.d == b->v.d;
    case SL_T_ARRAY:
    case SL_T_ROW: {
        sl_nested_reader ra, rb;
        if (sl_nested_open(&ra, dt, a) != sl_nested_open(&rb, dt, b)) return false;
        sl_value x, y;
        for (uint32_t i = 0; sl_nested_next(&ra, &x, NULL) && sl_nested_next(&rb, &y, NULL); i++) {
            if (x.isnull != y.isnull || (x.isnull && dt->kind == SL_T_ARRAY)) return false;
            if (!x.isnull && !value_eq(sl_nested_elem_type(dt, i), &x, &y)) return false;
        }
        return true;
    }
    case SL_T_MAP:
    case SL_T_MULTISET: {
        sl_nested_reader ra, rb;
        uint32_t cnt = sl_nested_open(&ra, dt, a);
        if (cnt != sl_nested_open(&rb, dt, b)) return false;
        const sl_dtype *vt = dt->kind == SL_T_MAP ? dt->val : NULL;
        sl_value k, x, k2, x2;
        while (sl_nested_next(&ra, &k, &x)) {
            bool found = false;
            sl_nested_open(&rb, dt, b);
            while (!found && sl_nested_next(&rb, &k2, &x2))
                found = k.isnull ? k2.isnull : !k2.isnull && value_eq(dt->elem, &k, &k2);
            if (!found || x.isnull != x2.isnull) return false;
            if (!x.isnull && (vt ? !value_eq(vt, &x, &x2) : x.v.i != x2.v.i)) return false;
        }
        return true;
    }
    default: return same(dt, a, b);
    }
}

bool sl_nest_equal(const sl_dtype *dt, const sl_value *a, const sl_value *b)
{
    return value_eq(dt, a, b);
}

const sl_dtype *sl_nest_common(const sl_dtype *a, const sl_dtype *b) { return common_dt(a, b); }

/* ---- the entries ------------------------------------------------------------------ */

static int ev_array(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    size_t al = _Alignof(sl_value);
    char *raw = sl_arena_alloc(cx->scratch, ((size_t)n->nkids + 1) * sizeof(sl_value) + al);
    if (!raw) return sl_fnx_err(n, cx, "ARRAY: scratch space exhausted");
    sl_value *vals = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al);
    for (int i = 0; i < n->nkids; i++) {
        vals[i] = v[i];
        if (!vals[i].isnull && conv(n, cx, kdt(n->kids[i]), n->dt->elem, &vals[i], false))
            return SL_ERR;
    }
    if (sl_nested_build(n->dt, vals, (uint32_t)n->nkids, NULL, cx->scratch, out) != SL_OK)
        return sl_fnx_err(n, cx, "ARRAY: scratch space exhausted");
    out->isnull = false;
    return SL_OK;
}

/* MAP[k1, v1, ...]: a key given twice keeps its first place and its last value
 * (Java's HashMap.put). */
static int ev_map(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    int pairs = n->nkids / 2;
    size_t al = _Alignof(sl_value);
    char *raw = sl_arena_alloc(cx->scratch, ((size_t)pairs + 1) * 2 * sizeof(sl_value) + al);
    if (!raw) return sl_fnx_err(n, cx, "MAP: scratch space exhausted");
    sl_value *keys = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al);
    sl_value *vals = keys + pairs + 1;
    uint32_t cnt = 0;
    const sl_dtype *kt = n->dt->elem, *vt = n->dt->val;
    for (int i = 0; i < pairs; i++) {
        sl_value k = v[2 * i], x = v[2 * i + 1];
        if (!k.isnull && conv(n, cx, kdt(n->kids[2 * i]), kt, &k, false)) return SL_ERR;
        if (!x.isnull && conv(n, cx, kdt(n->kids[2 * i + 1]), vt, &x, false)) return SL_ERR;
        uint32_t j = 0;
        while (j < cnt && !(keys[j].isnull ? k.isnull : !k.isnull && same(kt, &keys[j], &k))) j++;
        keys[j] = k;
        vals[j] = x;
        if (j == cnt) cnt++;
    }
    if (sl_nested_build(n->dt, keys, cnt, vals, cx->scratch, out) != SL_OK)
        return sl_fnx_err(n, cx, "MAP: scratch space exhausted");
    out->isnull = false;
    return SL_OK;
}

static int ev_row(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (sl_nested_build(n->dt, v, (uint32_t)n->nkids, NULL, cx->scratch, out) != SL_OK)
        return sl_fnx_err(n, cx, "ROW: scratch space exhausted");
    out->isnull = false;
    return SL_OK;
}

/* arr[i] (1-based; NULL outside 1..CARDINALITY) and m[k] (NULL when absent). */
static int ev_element(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    const sl_dtype *ct = kdt(n->kids[0]);
    if (v[0].isnull || v[1].isnull) return set_null(out), SL_OK;
    if (ct->kind == SL_T_ARRAY) {
        sl_nested_reader r;
        uint32_t cnt = sl_nested_open(&r, ct, &v[0]);
        int64_t i = v[1].v.i;
        if (i < 1 || i > (int64_t)cnt) return set_null(out), SL_OK;
        sl_nested_get(ct, &v[0], (uint32_t)(i - 1), out, NULL);
        return SL_OK;
    }
    sl_value key = v[1], k, x;
    /* integers of any width share v.i: compared as they are, never narrowed */
    if (!(int_kind(kdt(n->kids[1])->kind) && int_kind(ct->elem->kind)) &&
        conv(n, cx, kdt(n->kids[1]), ct->elem, &key, false))
        return SL_ERR;
    sl_nested_reader r;
    sl_nested_open(&r, ct, &v[0]);
    while (sl_nested_next(&r, &k, &x))
        if (!k.isnull && same(ct->elem, &k, &key)) {
            *out = x;
            return SL_OK;
        }
    set_null(out);
    return SL_OK;
}

/* r.f: field n->flags of the ROW (NULL when the row is). */
static int ev_field(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    if (v[0].isnull) return set_null(out), SL_OK;
    sl_nested_get(kdt(n->kids[0]), &v[0], (uint32_t)n->flags, out, NULL);
    return SL_OK;
}

static int ev_cast(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    *out = v[0];
    if (out->isnull) return SL_OK;
    int rc = conv(n, cx, kdt(n->kids[0]), ndt(n), out, n->neg);
    if (rc == SL_DONE) set_null(out);
    return rc == SL_DONE ? SL_OK : rc;
}

static const sl_fnx nest_table[] = {
    {"SL_ARRAY", 1, SL_EXPR_MAX_ARGS, "a", 'a', false, ev_array},
    {"SL_MAP", 2, SL_EXPR_MAX_ARGS, "a", 'a', false, ev_map},
    {"ROW", 1, SL_EXPR_MAX_ARGS, "a", 'a', false, ev_row},
    {"SL_ELEMENT", 2, 2, "a", 'a', false, ev_element},
    {"SL_FIELD", 1, 1, "a", 'a', false, ev_field},
    {"SL_CAST", 1, 1, "a", 'a', false, ev_cast},
};

const sl_fnx *sl_nest_find(const char *name)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(nest_table); i++)
        if (!strcasecmp(name, nest_table[i].name)) return &nest_table[i];
    return NULL;
}

static const char *tn(const node *k) { return k->interval ? "an INTERVAL" : kdt(k)->text; }

static int no_interval(const node *n, char *why, size_t whylen)
{
    for (int i = 0; i < n->nkids; i++)
        if (n->kids[i]->interval) {
            snprintf(why, whylen, "%s: an INTERVAL inside a constructor or as an index is not "
                     "supported yet", n->fx->name + (n->fx->name[0] == 'S' ? 3 : 0));
            return SL_ERR;
        }
    return SL_OK;
}

/* The least restrictive type of kids from, from + step, ... (a type error names
 * both types). */
static const sl_dtype *common_of(const node *n, int from, int step, const char *what, char *why,
                                 size_t whylen)
{
    const sl_dtype *t = sl_dtype_basic(SL_T_NULL);
    for (int i = from; i < n->nkids; i += step) {
        const sl_dtype *c = common_dt(t, kdt(n->kids[i]));
        if (!c) {
            snprintf(why, whylen, "%s: %s and %s have no common type", what, t->text,
                     kdt(n->kids[i])->text);
            return NULL;
        }
        t = c;
    }
    if (t->kind == SL_T_NULL) {
        snprintf(why, whylen, "%s of NULLs only: Illegal use of 'NULL' (CAST one of them)", what);
        return NULL;
    }
    return t;
}

/* Is k never NULL, as far as its type says? A literal other than NULL, a
 * clock function, a constructor, a value of a NOT NULL type. */
static bool known_notnull(const node *k)
{
    if (k->op == N_LIT) return !k->lit.isnull && k->type != SL_T_NULL;
    return k->op == N_NOW || (k->dt && k->dt->notnull);
}

/* The kids from, from + step, ... never NULL? */
static bool all_notnull(const node *n, int from, int step)
{
    for (int i = from; i < n->nkids; i += step)
        if (!known_notnull(n->kids[i])) return false;
    return true;
}

int sl_nest_type(node *n, const char *field, char *why, size_t whylen)
{
    const char *name = n->fx->name;
    char err[200] = "";
    if (no_interval(n, why, whylen)) return SL_ERR;
    if (!strcmp(name, "SL_ARRAY")) {
        const sl_dtype *e = common_of(n, 0, 1, "ARRAY", why, whylen);
        if (!e) return SL_ERR;
        /* ARRAY[1, 2] is ARRAY<INT NOT NULL> NOT NULL, ARRAY[x, 1] of a nullable x
         * ARRAY<INT> NOT NULL (Flink's types; the element's NOT NULL changes no bytes) */
        n->dt = sl_dtype_array(sl_dtype_nullable(e, all_notnull(n, 0, 1)), err, sizeof err);
    } else if (!strcmp(name, "SL_MAP")) {
        if (n->nkids % 2) {
            snprintf(why, whylen, "MAP needs keys and values in pairs, got %d arguments",
                     n->nkids);
            return SL_ERR;
        }
        const sl_dtype *k = common_of(n, 0, 2, "MAP keys", why, whylen), *v;
        if (!k || !(v = common_of(n, 1, 2, "MAP values", why, whylen))) return SL_ERR;
        n->dt = sl_dtype_map(sl_dtype_nullable(k, all_notnull(n, 0, 2)),
                             sl_dtype_nullable(v, all_notnull(n, 1, 2)), err, sizeof err);
    } else if (!strcmp(name, "ROW")) {
        if (n->nkids > SL_MAX_FIELDS_DT) {
            snprintf(why, whylen, "ROW takes at most %d fields", SL_MAX_FIELDS_DT);
            return SL_ERR;
        }
        char names[SL_MAX_FIELDS_DT][20];
        const char *np[SL_MAX_FIELDS_DT];
        const sl_dtype *ft[SL_MAX_FIELDS_DT];
        for (int i = 0; i < n->nkids; i++) {
            snprintf(names[i], sizeof names[i], "EXPR$%d", i);
            np[i] = names[i];
            ft[i] = sl_dtype_nullable(kdt(n->kids[i]), known_notnull(n->kids[i]));
            if (ft[i]->kind == SL_T_NULL) {
                snprintf(why, whylen, "ROW field %d is a bare NULL: Illegal use of 'NULL' "
                         "(CAST it)", i + 1);
                return SL_ERR;
            }
        }
        n->dt = sl_dtype_row(n->nkids, np, ft, err, sizeof err);
    } else if (!strcmp(name, "SL_ELEMENT")) {
        const sl_dtype *c = kdt(n->kids[0]), *i = kdt(n->kids[1]);
        if (c->kind == SL_T_ARRAY) {
            if (!int_kind(i->kind) && i->kind != SL_T_NULL) {
                snprintf(why, whylen, "an ARRAY index must be an integer, got %s", tn(n->kids[1]));
                return SL_ERR;
            }
            n->dt = sl_dtype_nullable(c->elem, false);
        } else if (c->kind == SL_T_MAP) {
            /* the key as it is, NULL, or an integer widened exactly (to a wider
             * integer, a DECIMAL or a DOUBLE key) */
            const sl_dtype *kt = c->elem;
            bool ok = i->kind == SL_T_NULL || i->phys == kt->phys ||
                      (kt->kind == SL_T_STRING && i->kind == SL_T_STRING) ||
                      (int_kind(i->kind) && (int_kind(kt->kind) || kt->kind == SL_T_DECIMAL ||
                                             kt->kind == SL_T_DOUBLE || kt->kind == SL_T_FLOAT));
            if (!ok) {
                snprintf(why, whylen, "%s has keys of type %s, not %s", c->text, c->elem->text,
                         i->text);
                return SL_ERR;
            }
            n->dt = sl_dtype_nullable(c->val, false);
        } else {
            snprintf(why, whylen, "'[...]' needs an ARRAY or a MAP, got %s", tn(n->kids[0]));
            return SL_ERR;
        }
    } else if (!strcmp(name, "SL_FIELD")) {
        const sl_dtype *r = kdt(n->kids[0]);
        if (r->kind != SL_T_ROW) {
            snprintf(why, whylen, "'.%s' needs a ROW, got %s", field, tn(n->kids[0]));
            return SL_ERR;
        }
        int f = -1;
        for (int i = 0; i < r->nfields && f < 0; i++)
            if (!strcmp(r->names[i], field)) f = i;
        for (int i = 0; i < r->nfields && f < 0; i++)
            if (!strcasecmp(r->names[i], field)) f = i;
        if (f < 0) {
            snprintf(why, whylen, "unknown field '%s' of %s", field, r->text);
            return SL_ERR;
        }
        n->flags = f;
        n->dt = sl_dtype_nullable(r->ftypes[f], false);
    } else { /* SL_CAST: n->dt is the target already */
        const sl_dtype *from = kdt(n->kids[0]);
        if (!conv_ok(from, n->dt, true) ||
            (from->kind == SL_T_TIMESTAMP && from->variant == SL_DV_LTZ && n->dt->kind == SL_T_STRING)) {
            snprintf(why, whylen, "cannot CAST %s to %s", tn(n->kids[0]), n->dt->text);
            return SL_ERR;
        }
    }
    if (!n->dt) {
        snprintf(why, whylen, "%s", err[0] ? err : "type table full");
        return SL_ERR;
    }
    if (!strcmp(name, "SL_ARRAY") || !strcmp(name, "SL_MAP") || !strcmp(name, "ROW"))
        n->dt = sl_dtype_nullable(n->dt, true); /* a constructor's value is never NULL */
    n->type = n->dt->kind;
    if (n->dt == sl_dtype_basic(n->type)) n->dt = NULL;
    return SL_OK;
}

/* Is dt (a CAST's source or target) one this file casts? */
bool sl_nest_casts(const sl_dtype *dt)
{
    return sl_type_is_nested(dt->kind);
}
