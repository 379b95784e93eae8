/*
 * expr_eval.c -- evaluation of Sluice's typed scalar expressions (the tree
 * expr_check.c builds; see expr.c for the semantics).
 *
 * Evaluation (data plane) never mallocs (but glibc's regexec does inside
 * when REGEXP_EXTRACT asks for a group of a match, or the pattern has back
 * references) and never writes to the tree:
 * children are evaluated into sl_values on the C stack, string results are
 * carved from the caller's scratch arena, and results that are a slice of
 * an input (SUBSTRING, TRIM) borrow it without copying. Integer arithmetic
 * wraps like Java's int/long (what Flink does); integer `/` truncates toward
 * zero and `%` takes the sign of the dividend, as C99 defines them.
 * Recursion is bounded by the tree's height (SL_EXPR_MAX_DEPTH).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"
#include "calendar.h"
#include "temporal.h"
#include "udf.h"

static const char *tname(sl_type t) { return sl_type_name(t); }

/* Length of the UTF-8 sequence starting at s (at least 1, at most what is left). */
static size_t cp_len(const char *s, size_t left)
{
    unsigned char c = (unsigned char)s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return n > left ? left : n;
}

static int64_t cp_count(const char *s, size_t n)
{
    int64_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) k++;
    return k;
}

/* Byte offset of code point `k` (0-based) in s; n if past the end. */
static size_t cp_offset(const char *s, size_t n, int64_t k)
{
    size_t i = 0;
    while (k > 0 && i < n) {
        i += cp_len(s + i, n - i);
        k--;
    }
    return i;
}

/* ---- calendar: ms since the epoch <-> civil UTC time ---------------------- */

/* The calendar itself is lib/calendar.c. */

/* "YYYY-MM-DD HH:MM:SS.mmm" -- the SQL form CAST(ts AS STRING) gives -- or,
 * without `frac`, "YYYY-MM-DD HH:MM:SS" (FROM_UNIXTIME's default format). */
static int ts_to_sql(char *dst, size_t cap, int64_t ms, bool frac)
{
    sl_civil c = sl_civil_from_ms(ms);
    int n = snprintf(dst, cap, "%04lld-%02d-%02d %02d:%02d:%02d", (long long)c.year, c.month,
                     c.day, c.hour, c.minute, c.second);
    if (frac && n > 0 && (size_t)n < cap) n += snprintf(dst + n, cap - (size_t)n, ".%03d", c.milli);
    return n;
}

/* Add `months` to a timestamp the way java.time's plusMonths does (what
 * Flink's TIMESTAMPADD does): the day of month is kept, or clamped to the

 * last day of a shorter month; the time of day is kept. False if the result
 * does not fit a TIMESTAMP. */
static bool add_months(int64_t ms, int64_t months, int64_t *out)
{
    int64_t days = sl_floor_div(ms, 86400000), tod = ms - days * 86400000, y;
    int m, d;
    sl_civil_from_days(days, &y, &m, &d);
    int64_t total; /* months since year 0 */
    if (__builtin_mul_overflow(y, 12, &total) || __builtin_add_overflow(total, m - 1, &total) ||
        __builtin_add_overflow(total, months, &total))
        return false;
    int64_t y2 = sl_floor_div(total, 12);
    int m2 = (int)(total - y2 * 12) + 1;
    if (y2 < -292000000 || y2 > 292000000) return false; /* beyond the int64 ms range */
    int d2 = d <= sl_days_in_month(y2, m2) ? d : sl_days_in_month(y2, m2);
    int64_t r;
    if (__builtin_mul_overflow(sl_days_from_civil(y2, m2, d2), 86400000, &r) ||
        __builtin_add_overflow(r, tod, &r))
        return false;
    *out = r;
    return true;
}

/* Whole months from a to b (negative when b < a): the largest m with
 * add_months(a, m) <= b, so Jan 31 -> Feb 28 (same time) is one month. */
static int64_t months_between(int64_t a, int64_t b)
{
    if (b < a) return -months_between(b, a);
    int64_t ya, yb, r;
    int ma, mb, d;
    sl_civil_from_days(sl_floor_div(a, 86400000), &ya, &ma, &d);
    sl_civil_from_days(sl_floor_div(b, 86400000), &yb, &mb, &d);
    int64_t m = (yb - ya) * 12 + (mb - ma); /* at most one too many */
    if (m > 0 && (!add_months(a, m, &r) || r > b)) m--;
    return m;
}

/* A day-time interval as Flink's CAST(... AS STRING) writes it, whatever its
 * fields: "+0 00:00:05.000", "-1 02:03:04.005" (days, then the time). */
static int iv_to_sql(char *dst, size_t cap, int64_t ms)
{
    uint64_t u = ms < 0 ? 0 - (uint64_t)ms : (uint64_t)ms; /* INT64_MIN has no positive */
    return snprintf(dst, cap, "%c%llu %02d:%02d:%02d.%03d", ms < 0 ? '-' : '+',
                    (unsigned long long)(u / 86400000), (int)(u / 3600000 % 24),
                    (int)(u / 60000 % 60), (int)(u / 1000 % 60), (int)(u % 1000));
}


/* A DOUBLE as Java's Double.toString writes it (what Flink's CAST gives):
 * the shortest digits that read back exactly, plain between 1e-3 and 1e7
 * ("0.1", "100.0"), else scientific ("1.0E10", "1.5E-5"). */
static int double_to_str(char *dst, size_t cap, double x)
{
    if (isnan(x)) return snprintf(dst, cap, "NaN");
    if (isinf(x)) return snprintf(dst, cap, x < 0 ? "-Infinity" : "Infinity");
    if (x == 0) return snprintf(dst, cap, signbit(x) ? "-0.0" : "0.0");
    char sci[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(sci, sizeof sci, "%.*e", p - 1, x);
        if (strtod(sci, NULL) == x) break;
    }
    /* sci is "-d.ddde+XX": gather the digits and the exponent */
    char digits[24];
    int nd = 0;
    const char *c = sci;
    bool minus = *c == '-';
    if (minus) c++;
    for (; *c && *c != 'e'; c++)
        if (is_digit((unsigned char)*c) && nd < (int)sizeof digits - 1) digits[nd++] = *c;
    int exp10 = *c == 'e' ? atoi(c + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';

    char out[64];
    size_t o = 0;
    if (minus) out[o++] = '-';
    double ax = fabs(x);
    if (ax >= 1e-3 && ax < 1e7) {
        if (exp10 >= 0) {
            for (int k = 0; k <= exp10; k++) out[o++] = k < nd ? digits[k] : '0';
            out[o++] = '.';
            if (nd > exp10 + 1)
                for (int k = exp10 + 1; k < nd; k++) out[o++] = digits[k];
            else
                out[o++] = '0';
        } else {
            out[o++] = '0';
            out[o++] = '.';
            for (int k = 0; k < -exp10 - 1; k++) out[o++] = '0';
            for (int k = 0; k < nd; k++) out[o++] = digits[k];
        }
        out[o] = '\0';
    } else {
        out[o++] = digits[0];
        out[o++] = '.';
        if (nd > 1)
            for (int k = 1; k < nd; k++) out[o++] = digits[k];
        else
            out[o++] = '0';
        snprintf(out + o, sizeof out - o, "E%d", exp10);
    }
    return snprintf(dst, cap, "%s", out);
}

/* ---- evaluation ---------------------------------------------------------------- */

typedef struct evctx {
    const sl_row *row;
    sl_arena *scratch;
    char *err;
    size_t errlen;
    int64_t watermark; /* CURRENT_WATERMARK's value; INT64_MIN: none yet */
    const char *zone;  /* the session time zone; NULL: UTC */
} evctx;

static inline bool is_ltz(const node *n)
{
    return n->type == SL_T_TIMESTAMP && n->dt && n->dt->variant == SL_DV_LTZ;
}

static int ev(const node *n, evctx *cx, sl_value *out);

static int everr(evctx *cx, const node *n, const char *fmt, ...) SL_PRINTF(3, 4);

static int everr(evctx *cx, const node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl_expr_verr(cx->err, cx->errlen, n->pos, fmt, ap);
    va_end(ap);
    return SL_ERR;
}

/* Room for a string result, or NULL with the error set. */
static char *salloc(evctx *cx, const node *n, size_t len)
{
    static char empty[1];
    if (len == 0) return empty;
    char *s = len <= UINT32_MAX ? sl_arena_alloc(cx->scratch, len) : NULL;
    if (!s) everr(cx, n, "string result too large (%zu bytes; scratch space exhausted)", len);
    return s;
}

static void set_null(sl_value *out) { out->isnull = true; }
static void set_i(sl_value *out, int64_t i) { out->isnull = false, out->v.i = i; }
static void set_d(sl_value *out, double d) { out->isnull = false, out->v.d = d; }
static void set_s(sl_value *out, const char *p, size_t len)
{
    out->isnull = false;
    out->v.s.p = p;
    out->v.s.len = (uint32_t)len;
}

static double as_d(const sl_value *v, sl_type t) { return is_fp_type(t) ? v->v.d : (double)v->v.i; }

/* An integer as Java converts it to float: rounded once, from the integer. */
static double int_to_float(int64_t i) { return (double)(float)i; }

/* Convert a value of a child's type to the node's (wider) numeric type. */
static void widen(sl_value *v, sl_type from, sl_type to)
{
    if (v->isnull || !is_int_type(from)) return;
    if (to == SL_T_DOUBLE) v->v.d = (double)v->v.i;
    else if (to == SL_T_FLOAT) v->v.d = int_to_float(v->v.i);
}

/* Total order on two comparable non-NULL values: -1, 0, 1. NaN sorts after
 * every number and equals itself, as Java's Double.compare. */
static int cmpv(const sl_value *a, sl_type ta, const sl_value *b, sl_type tb)
{
    if (is_str_type(ta)) {
        uint32_t n = SL_MIN(a->v.s.len, b->v.s.len);
        int c = n ? memcmp(a->v.s.p, b->v.s.p, n) : 0;
        if (c) return c < 0 ? -1 : 1;
        return a->v.s.len < b->v.s.len ? -1 : a->v.s.len > b->v.s.len;
    }
    if (is_fp_type(ta) || is_fp_type(tb)) {
        /* FLOAT against an integer: the integer as a float first, as Java */
        double x = ta == SL_T_FLOAT && is_int_type(tb) ? a->v.d
                   : tb == SL_T_FLOAT && is_int_type(ta) ? int_to_float(a->v.i) : as_d(a, ta);
        double y = tb == SL_T_FLOAT && is_int_type(ta) ? b->v.d
                   : ta == SL_T_FLOAT && is_int_type(tb) ? int_to_float(b->v.i) : as_d(b, tb);
        if (x < y) return -1;
        if (x > y) return 1;
        if (x == y) return 0;
        return isnan(x) ? (isnan(y) ? 0 : 1) : -1;
    }
    return a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
}

/* A non-NULL exact value (DECIMAL or integer) of node n as an unscaled
 * DECIMAL and its scale. */
static sl_dec dec_of(const sl_value *v, const node *n, int *scale)
{
    if (n->type == SL_T_DECIMAL) {
        *scale = ndt(n)->s;
        sl_dec d = {v->v.dec.lo, v->v.dec.hi};
        return d;
    }
    *scale = 0;
    return sl_dec_from_i128(v->v.i);
}

static void put_dec(sl_value *out, sl_dec d)
{
    out->isnull = false;
    out->v.dec.lo = d.lo;
    out->v.dec.hi = d.hi;
}

/* cmpv for the children na, nb of a node: DECIMAL exactly against DECIMAL
 * and integers (as DOUBLE against a DOUBLE), TIME and TIMESTAMP with their
 * nanoseconds; nested values 0 when equal, else 1 (they have no order). */
static int cmpn(const sl_value *a, const node *na, const sl_value *b, const node *nb)
{
    sl_type ta = na->type, tb = nb->type;
    if (sl_type_is_nested(ta)) /* equality only: the checker made both sides one type */
        return sl_nest_equal(ndt(na), a, b) ? 0 : 1;
    if (ta == SL_T_DECIMAL || tb == SL_T_DECIMAL) {
        if (is_fp_type(ta) || is_fp_type(tb)) {
            int s;
            sl_value x = *a, y = *b;
            if (ta == SL_T_DECIMAL) {
                sl_dec d = dec_of(a, na, &s);
                sl_dec_type t = {(uint8_t)ndt(na)->p, (uint8_t)s};
                x.v.d = sl_dec_to_double(d, t);
            }
            if (tb == SL_T_DECIMAL) {
                sl_dec d = dec_of(b, nb, &s);
                sl_dec_type t = {(uint8_t)ndt(nb)->p, (uint8_t)s};
                y.v.d = sl_dec_to_double(d, t);
            }
            return cmpv(&x, is_fp_type(ta) ? ta : SL_T_DOUBLE, &y, is_fp_type(tb) ? tb : SL_T_DOUBLE);
        }
        int sa, sb;
        sl_dec x = dec_of(a, na, &sa), y = dec_of(b, nb, &sb);
        int c = sl_dec_cmp(x, sa, y, sb);
        return c < 0 ? -1 : c > 0;
    }
    if ((ta == SL_T_TIMESTAMP || ta == SL_T_TIME) && ta == tb) {
        if (a->v.i != b->v.i) return a->v.i < b->v.i ? -1 : 1;
        int32_t x = sl_dtype_has_nanos(ndt(na)) ? a->v.ts.nano : 0;
        int32_t y = sl_dtype_has_nanos(ndt(nb)) ? b->v.ts.nano : 0;
        return x < y ? -1 : x > y;
    }
    return cmpv(a, ta, b, tb);
}

/* DECIMAL arithmetic into node n's type: an overflow is NULL, as in Flink. */
static int eval_dec_arith(const node *n, evctx *cx, const sl_value *a, const sl_value *b,
                          sl_value *out);

/* Three-valued logic: 0 FALSE, 1 TRUE, 2 UNKNOWN. */
enum { F3 = 0, T3 = 1, U3 = 2 };
static int and3(int a, int b) { return a == F3 || b == F3 ? F3 : a == U3 || b == U3 ? U3 : T3; }
static int not3(int a) { return a == U3 ? U3 : !a; }
static void set3(sl_value *out, int t)
{
    if (t == U3) set_null(out);
    else set_i(out, t);
}

/* TIMESTAMP(p), DATE or TIME +/- an interval (expr_check.c's make_temporal
 * says which), as Flink's generated code computes it. */
static int eval_temporal(const node *n, evctx *cx, const sl_value *a, const sl_value *b,
                         sl_value *out)
{
    bool first = !n->kids[0]->interval;
    const sl_value *t = first ? a : b;
    int64_t d = (first ? b : a)->v.i, r = t->v.i;
    int32_t nano = sl_dtype_has_nanos(ndt(n)) ? t->v.ts.nano : 0;
    if (n->op == N_SUB) d = wrap64(0 - (uint64_t)d);
    switch (n->type) {
    case SL_T_DATE:
        if (n->flags & AR_MONTHS) {
            if (!add_months(r * 86400000, d, &r)) return everr(cx, n, "DATE out of range");
            r /= 86400000;
        } else {
            r += d / 86400000; /* whole days, cut toward zero */
        }
        break;
    case SL_T_TIME: /* modulo a day */
        r = (r + 86400000 + d % 86400000) % 86400000;
        break;
    default:
        if (n->flags & AR_MONTHS) {
            if (!add_months(r, d, &r)) return everr(cx, n, "TIMESTAMP out of range");
        } else {
            r = wrap64((uint64_t)r + (uint64_t)d);
        }
        break;
    }
    out->isnull = false;
    out->v.ts.ms = r;
    out->v.ts.nano = nano;
    return SL_OK;
}

/* (a - b) qualifier: a day-time interval of the milliseconds between them
 * (whatever the qualifier's fields, as Flink keeps them), or a year-month
 * one of Calcite's whole months: the largest m with b + m months <= a on
 * their days, one less when that lands on a's day but a's time of day is
 * the earlier (so 2024-02-01 00:00 - 2024-03-01 10:00 is -2 months). */
static void eval_dt_diff(const node *n, const sl_value *a, const sl_value *b, sl_value *out)
{
    int64_t day = n->kids[0]->type == SL_T_DATE ? 86400000 : 1;
    int64_t t0 = a->v.i * day, t1 = b->v.i * day, r;
    if (iv_is_ym(n->ivs)) {
        int64_t d0 = sl_floor_div(t0, 86400000), d1 = sl_floor_div(t1, 86400000);
        int64_t x = months_between(d1 * 86400000, d0 * 86400000);
        if (add_months(d1 * 86400000, x, &r) && r == d0 * 86400000 &&
            t0 - d0 * 86400000 < t1 - d1 * 86400000)
            x--;
        set_i(out, x);
        return;
    }
    set_i(out, wrap64((uint64_t)t0 - (uint64_t)t1));
}

static int eval_arith(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    if (a.isnull || b.isnull) {
        set_null(out);
        return SL_OK;
    }
    sl_type ta = n->kids[0]->type, tb = n->kids[1]->type;
    if (n->ctype == SL_T_DECIMAL) return eval_dec_arith(n, cx, &a, &b, out);
    if (n->flags & AR_DIFF) return eval_dt_diff(n, &a, &b, out), SL_OK;
    if (n->type == SL_T_TIMESTAMP || n->type == SL_T_DATE || n->type == SL_T_TIME)
        return eval_temporal(n, cx, &a, &b, out);
    if (is_fp_type(n->ctype)) {
        /* FLOAT: both operands as floats, the exact result rounded once to a
         * float (a double holds every sum, difference, product and quotient
         * of two floats closely enough for that single rounding) */
        bool f = n->ctype == SL_T_FLOAT; /* a DOUBLE operand becomes a float first */
        double x = f && is_int_type(ta) ? int_to_float(a.v.i) : f ? (double)(float)a.v.d : as_d(&a, ta);
        double y = f && is_int_type(tb) ? int_to_float(b.v.i) : f ? (double)(float)b.v.d : as_d(&b, tb), r;
        switch (n->op) {
        case N_ADD: r = x + y; break;
        case N_SUB: r = x - y; break;
        case N_MUL: r = x * y; break;
        /* IEEE 754 as Java's float and double: x / 0 is an infinity or
         * NaN and x % 0 NaN, never an error (Flink's generated code) */
        case N_DIV: r = x / y; break;
        default: r = fmod(x, y); break;
        }
        set_d(out, f ? (double)(float)r : r);
        return SL_OK;
    }
    int64_t x = a.v.i, y = b.v.i;
    if ((n->op == N_DIV || n->op == N_MOD) && y == 0)
        return everr(cx, n, n->op == N_DIV ? "division by zero" : "division by zero (modulo)");
    if (n->ctype != SL_T_BIGINT) { /* operands fit 32 bits: exact in 64, then wrap */
        int64_t r = n->op == N_ADD ? x + y : n->op == N_SUB ? x - y : n->op == N_MUL ? x * y
                  : n->op == N_DIV ? x / y : x % y;
        set_i(out, wrap_int(r, n->ctype));
        return SL_OK;
    }
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (n->op) {
    case N_ADD: set_i(out, wrap64(ux + uy)); break;
    case N_SUB: set_i(out, wrap64(ux - uy)); break;
    case N_MUL: set_i(out, wrap64(ux * uy)); break;
    case N_DIV: set_i(out, y == -1 ? wrap64(0 - ux) : x / y); break;
    default: set_i(out, y == -1 ? 0 : x % y); break;
    }
    return SL_OK;
}

static int eval_dec_arith(const node *n, evctx *cx, const sl_value *a, const sl_value *b,
                          sl_value *out)
{
    int sa, sb;
    sl_dec x = dec_of(a, n->kids[0], &sa), y = dec_of(b, n->kids[1], &sb), r;
    sl_dec_type t = {(uint8_t)n->dt->p, (uint8_t)n->dt->s};
    int st;
    switch (n->op) {
    case N_ADD: st = sl_dec_add(x, sa, y, sb, t, &r); break;
    case N_SUB: st = sl_dec_sub(x, sa, y, sb, t, &r); break;
    case N_MUL: st = sl_dec_mul(x, sa, y, sb, t, &r); break;
    case N_DIV: st = sl_dec_div(x, sa, y, sb, t, &r); break;
    default: st = sl_dec_mod(x, sa, y, sb, t, &r); break;
    }
    if (st == SL_DEC_DIV_ZERO)
        return everr(cx, n, n->op == N_DIV ? "division by zero" : "division by zero (modulo)");
    if (st != SL_DEC_OK) set_null(out); /* overflow */
    else put_dec(out, r);
    return SL_OK;
}

/* Evaluate a node's children into vals (a caller-provided array). */
static int eval_kids(const node *n, evctx *cx, sl_value *vals)
{
    for (int i = 0; i < n->nkids; i++)
        if (ev(n->kids[i], cx, &vals[i])) return SL_ERR;
    return SL_OK;
}

/* A function that is NULL when any argument is: the arguments into v, and
 * SL_DONE with out set to NULL when one of them is. */
static int eval_strict(const node *n, evctx *cx, sl_value *v, sl_value *out)
{
    if (eval_kids(n, cx, v)) return SL_ERR;
    for (int i = 0; i < n->nkids; i++)
        if (v[i].isnull) {
            set_null(out);
            return SL_DONE;
        }
    return SL_OK;
}

static int eval_concat(const node *n, evctx *cx, sl_value *out)
{
    sl_value local[4], *vals = local;
    if (n->nkids > (int)SL_ARRAY_LEN(local)) {
        /* many arguments: a value array from the scratch arena, aligned by hand */
        size_t al = _Alignof(sl_value), need = (size_t)n->nkids * sizeof(sl_value) + al;
        char *raw = sl_arena_alloc(cx->scratch, need);
        if (!raw) return everr(cx, n, "scratch space exhausted evaluating CONCAT");
        vals = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al);
    }
    if (eval_kids(n, cx, vals)) return SL_ERR;
    size_t total = 0;
    for (int i = 0; i < n->nkids; i++) {
        if (vals[i].isnull) {
            set_null(out);
            return SL_OK;
        }
        total += vals[i].v.s.len;
    }
    char *d = salloc(cx, n, total);
    if (!d) return SL_ERR;
    size_t o = 0;
    for (int i = 0; i < n->nkids; i++) {
        if (vals[i].v.s.len) memcpy(d + o, vals[i].v.s.p, vals[i].v.s.len);
        o += vals[i].v.s.len;
    }
    set_s(out, d, total);
    return SL_OK;
}

/* SQL LIKE: '%' any run, '_' one code point, esc (or -1) quotes the next
 * character. Greedy with a single backtrack point -- the last '%' -- which
 * is enough for this pattern language and keeps the cost O(len * plen). */
static bool like_match(const char *s, size_t sn, const char *pt, size_t pn, int esc)
{
    size_t si = 0, pi = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        if (pi < pn) {
            unsigned char c = (unsigned char)pt[pi];
            if (esc >= 0 && c == esc) {
                if (pi + 1 < pn && pt[pi + 1] == s[si]) {
                    pi += 2, si++;
                    continue;
                }
            } else if (c == '%') {
                star_p = ++pi;
                star_s = si;
                continue;
            } else if (c == '_') {
                si += cp_len(s + si, sn - si);
                pi++;
                continue;
            } else if (c == (unsigned char)s[si]) {
                pi++, si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX) return false;
        star_s += cp_len(s + star_s, sn - star_s);
        si = star_s;
        pi = star_p;
    }
    while (pi < pn && pt[pi] == '%' && esc != '%') pi++;
    return pi == pn;
}

static int eval_like(const node *n, evctx *cx, sl_value *out)
{
    sl_value x, pt, es;
    es.isnull = false;
    if (ev(n->kids[0], cx, &x) || ev(n->kids[1], cx, &pt) ||
        (n->kids[2] && ev(n->kids[2], cx, &es)))
        return SL_ERR;
    if (x.isnull || pt.isnull || es.isnull) {
        set_null(out);
        return SL_OK;
    }
    int esc = -1;
    if (n->kids[2]) {
        if (es.v.s.len != 1)
            return everr(cx, n, "LIKE ESCAPE must be a single character, got %u bytes",
                         es.v.s.len);
        esc = (unsigned char)es.v.s.p[0];
        /* an escape must quote something */
        for (uint32_t i = 0; i < pt.v.s.len; i++) {
            if ((unsigned char)pt.v.s.p[i] != esc) continue;
            if (i + 1 == pt.v.s.len)
                return everr(cx, n, "LIKE pattern ends with the escape character");
            i++; /* skip the quoted character */
        }
    }
    bool m = like_match(x.v.s.p, x.v.s.len, pt.v.s.p, pt.v.s.len, esc);
    set_i(out, m != n->neg);
    return SL_OK;
}

static int eval_case(const node *n, evctx *cx, sl_value *out)
{
    int i = 0;
    sl_value opv, w;
    const node *operand = NULL;
    if (n->flags & CASE_OPERAND) {
        operand = n->kids[0];
        if (ev(operand, cx, &opv)) return SL_ERR;
        i = 1;
    }
    int end = n->nkids - ((n->flags & CASE_ELSE) ? 1 : 0);
    const node *pick = NULL;
    for (; i < end; i += 2) {
        if (ev(n->kids[i], cx, &w)) return SL_ERR;
        bool hit = operand ? !opv.isnull && !w.isnull &&
                                 cmpn(&opv, operand, &w, n->kids[i]) == 0
                           : !w.isnull && w.v.i;
        if (hit) {
            pick = n->kids[i + 1];
            break;
        }
    }
    if (!pick && (n->flags & CASE_ELSE)) pick = n->kids[n->nkids - 1];
    if (!pick) {
        set_null(out);
        return SL_OK;
    }
    if (ev(pick, cx, out)) return SL_ERR;
    widen(out, pick->type, n->type);
    return SL_OK;
}

/* Copy a formatted string into scratch. */
static int put_text(const node *n, evctx *cx, sl_value *out, const char *txt, int len)
{
    if (len < 0) len = 0;
    char *d = salloc(cx, n, (size_t)len);
    if (!d) return SL_ERR;
    memcpy(d, txt, (size_t)len);
    set_s(out, d, (size_t)len);
    return SL_OK;
}

/* Trim blanks around a string slice (for CAST from STRING). */
static void trim_blanks(const char **s, uint32_t *n)
{
    while (*n > 0 && (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r')) (*s)++, (*n)--;
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\n' ||
                      (*s)[*n - 1] == '\r'))
        (*n)--;
}

static bool str_to_double(const char *s, uint32_t n, double *out)
{
    char buf[128];
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    const char *b = buf + (buf[0] == '-' || buf[0] == '+');
    if (strcmp(b, "NaN") == 0) return *out = NAN, true;
    if (strcmp(b, "Infinity") == 0) return *out = buf[0] == '-' ? -INFINITY : INFINITY, true;
    for (const char *c = b; *c; c++) /* refuse hex floats, "inf", "nan(...)" */
        if (!is_digit((unsigned char)*c) && !strchr(".eE+-", *c)) return false;
    char *end;
    *out = strtod(buf, &end);
    return end != buf && *end == '\0';
}

/* Java's saturating double -> long / int conversion (what Flink's CAST does). */
static int64_t d_to_i(double d, sl_type to)
{
    double lo = to == SL_T_INT ? (double)INT32_MIN : -9223372036854775808.0;
    double hi = to == SL_T_INT ? (double)INT32_MAX : 9223372036854775807.0;
    if (isnan(d)) return 0;
    if (d <= lo) return to == SL_T_INT ? INT32_MIN : INT64_MIN;
    if (d >= hi) return to == SL_T_INT ? INT32_MAX : INT64_MAX;
    return (int64_t)d;
}

/* CASTs to and from intervals: a number to an interval counts the
 * interval's first field; an interval to a number counts its last field
 * (truncated), and to a STRING is Flink's "+d hh:mm:ss.fff". */
static int eval_cast_iv(const node *n, evctx *cx, sl_value *out)
{
    const node *k = n->kids[0];
    if (n->interval) {
        int64_t unit = n->ivs == IV_YM_YEAR ? 12 : n->ivs == IV_YM_MONTH ? 1 : iv_ms[n->ivs];
        if (!k->interval) set_i(out, wrap64((uint64_t)out->v.i * (uint64_t)unit));
        return SL_OK;
    }
    if (n->type == SL_T_STRING) {
        char buf[48];
        if (iv_is_ym(k->ivs))
            return put_text(n, cx, out, buf, sl_interval_ym_format(buf, sizeof buf, (int32_t)out->v.i));
        return put_text(n, cx, out, buf, iv_to_sql(buf, sizeof buf, out->v.i));
    }
    int64_t q = out->v.i / (k->ive == IV_YM_YEAR ? 12 : k->ive == IV_YM_MONTH ? 1 : iv_ms[k->ive]);
    set_i(out, n->type == SL_T_INT ? wrap32(q) : q);
    return SL_OK;
}

/* CASTs to and from DECIMAL, DATE and TIME (lib/decimal, lib/temporal
 * hold the text rules). A numeric overflow into a DECIMAL is NULL; text
 * that is no such value fails the CAST (TRY_CAST: NULL). */
static int eval_cast_exact(const node *n, evctx *cx, sl_value *out)
{
    const node *k = n->kids[0];
    sl_type from = k->type, to = n->type;
    sl_value v = *out;
    char buf[64];
    int st = SL_DEC_OK;
    if (to == SL_T_DECIMAL) {
        sl_dec_type t = {(uint8_t)n->dt->p, (uint8_t)n->dt->s};
        sl_dec r = {0, 0};
        int s;
        if (from == SL_T_DECIMAL || is_int_type(from)) {
            sl_dec d = dec_of(&v, k, &s);
            st = sl_dec_rescale(d, s, t, &r);
        } else if (is_fp_type(from)) {
            st = from == SL_T_FLOAT ? sl_dec_from_float((float)v.v.d, t, &r)
                                    : sl_dec_from_double(v.v.d, t, &r);
            if (st == SL_DEC_NOT_FINITE) {
                if (n->neg) return set_null(out), SL_OK;
                return everr(cx, n, "cannot CAST %s to %s", isnan(v.v.d) ? "NaN" : "Infinity",
                             n->dt->text);
            }
        } else { /* STRING */
            st = sl_dec_parse(v.v.s.p, v.v.s.len, t, &r);
            if (st != SL_DEC_OK) goto bad_string;
        }
        if (st != SL_DEC_OK) set_null(out);
        else put_dec(out, r);
        return SL_OK;
    }
    if (from == SL_T_DECIMAL) {
        int s;
        sl_dec d = dec_of(&v, k, &s);
        if (to == SL_T_STRING) return put_text(n, cx, out, buf, sl_dec_format(buf, sizeof buf, d, s));
        if (is_fp_type(to)) { /* FLOAT: the double rounded to float, as Flink */
            sl_dec_type t = {(uint8_t)ndt(k)->p, (uint8_t)s};
            double x = sl_dec_to_double(d, t);
            set_d(out, to == SL_T_FLOAT ? (double)(float)x : x);
            return SL_OK;
        }
        int64_t i;
        sl_dec_to_i64(d, s, &i); /* beyond the range: its low bits, as Flink */
        set_i(out, wrap_int(i, to));
        return SL_OK;
    }
    if (to == SL_T_DATE) {
        int32_t days;
        if (from == SL_T_STRING) {
            if (sl_date_parse(v.v.s.p, v.v.s.len, &days) != SL_OK) goto bad_string;
        } else { /* TIMESTAMP: its day */
            int64_t ms = v.v.i;
            days = (int32_t)(ms / 86400000 - (ms % 86400000 < 0));
        }
        set_i(out, days);
        return SL_OK;
    }
    if (to == SL_T_TIME) {
        int32_t ms;
        if (from == SL_T_STRING) {
            if (sl_time_parse(v.v.s.p, v.v.s.len, n->dt->p, &ms) != SL_OK) goto bad_string;
        } else {
            int64_t m = v.v.i % 86400000;
            ms = (int32_t)(m < 0 ? m + 86400000 : m);
            if (n->dt->p == 0) ms -= ms % 1000;
        }
        set_i(out, ms);
        out->v.ts.nano = 0;
        return SL_OK;
    }
    if (from == SL_T_DATE) {
        if (to == SL_T_STRING)
            return put_text(n, cx, out, buf, sl_date_format(buf, sizeof buf, (int32_t)v.v.i));
        set_i(out, v.v.i * 86400000); /* TIMESTAMP: its midnight */
        out->v.ts.nano = 0;
        return SL_OK;
    }
    /* TIME to STRING */
    return put_text(n, cx, out, buf, sl_time_format(buf, sizeof buf, (int32_t)v.v.i,
                                                    ndt(k)->p, SL_TT_SQL));
bad_string:
    if (n->neg) { /* TRY_CAST */
        set_null(out);
        return SL_OK;
    }
    return everr(cx, n, "cannot CAST '%.*s' to %s", (int)SL_MIN(v.v.s.len, 40u), v.v.s.p,
                 n->dt->text);
}

static int eval_cast_value(const node *n, evctx *cx, sl_value *out);

/* A TIMESTAMP(p) value of node n's kid as n's TIMESTAMP(q): the fraction's
 * digits below q cut (before 1970 too: 23:59:59.987 is 23:59:59.9 at q = 1,
 * as Flink), nanoseconds beyond the millisecond kept only for q > 3. */
static int ts_precision(const node *n, sl_value *out)
{
    static const int64_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
    int q = ndt(n)->p, p = sl_dtype_has_nanos(ndt(n->kids[0])) ? 9 : 3;
    if (n->kids[0]->type != SL_T_TIMESTAMP) p = 3; /* parsed from text to milliseconds */
    if (q >= p) return SL_OK;
    if (q <= 3) {
        out->v.ts.nano = 0;
        int64_t u = pow10[3 - q], r = out->v.i % u;
        out->v.i -= r < 0 ? r + u : r;
    } else {
        out->v.ts.nano = (int32_t)(out->v.ts.nano / pow10[9 - q] * pow10[9 - q]);
    }
    return SL_OK;
}

/* CAST(x AS CHAR(n) | VARCHAR(n)): the text cut to n code points, a CHAR's
 * padded with blanks to n, as Flink's CAST does. */
static int eval_cast(const node *n, evctx *cx, sl_value *out)
{
    if (eval_cast_value(n, cx, out) != SL_OK) return SL_ERR;
    if (is_ltz(n) && !is_ltz(n->kids[0]) && !out->isnull) /* wall-clock time -> an instant */
        out->v.i = sl_expr_zone_utc(cx->zone, out->v.i);
    if (!n->dt || n->dt->kind != SL_T_STRING || n->dt->p >= SL_DTYPE_MAX_LEN || out->isnull)
        return SL_OK;
    int64_t want = n->dt->p, have = cp_count(out->v.s.p, out->v.s.len);
    if (have > want) {
        out->v.s.len = (uint32_t)cp_offset(out->v.s.p, out->v.s.len, want);
    } else if (have < want && n->dt->variant == SL_DV_CHAR) {
        size_t len = out->v.s.len + (size_t)(want - have);
        char *d = salloc(cx, n, len);
        if (!d) return SL_ERR;
        memcpy(d, out->v.s.p, out->v.s.len);
        memset(d + out->v.s.len, ' ', len - out->v.s.len);
        set_s(out, d, len);
    }
    return SL_OK;
}

static int eval_cast_value(const node *n, evctx *cx, sl_value *out)
{
    const node *k = n->kids[0];
    sl_type from = k->type, to = n->type;
    if (ev(k, cx, out)) return SL_ERR;
    if (out->isnull) return SL_OK;
    if (is_ltz(k) && !is_ltz(n)) /* an instant -> the session zone's wall-clock time */
        out->v.i = sl_expr_zone_local(cx->zone, out->v.i);
    if (n->interval || k->interval) return eval_cast_iv(n, cx, out);
    if (to == SL_T_DECIMAL || from == SL_T_DECIMAL || ((to == SL_T_DATE || to == SL_T_TIME ||
        from == SL_T_DATE || from == SL_T_TIME) && from != to))
        return eval_cast_exact(n, cx, out);
    if (from == SL_T_TIMESTAMP && to == SL_T_TIMESTAMP) return ts_precision(n, out);
    if (from == to) return SL_OK;
    sl_value v = *out;
    char buf[64];
    switch (to) {
    case SL_T_STRING:
        switch (from) {
        case SL_T_BOOLEAN: return put_text(n, cx, out, v.v.i ? "TRUE" : "FALSE", v.v.i ? 4 : 5);
        case SL_T_TINYINT:
        case SL_T_SMALLINT:
        case SL_T_INT:
        case SL_T_BIGINT:
            return put_text(n, cx, out, buf, snprintf(buf, sizeof buf, "%lld", (long long)v.v.i));
        case SL_T_DOUBLE: return put_text(n, cx, out, buf, double_to_str(buf, sizeof buf, v.v.d));
        case SL_T_FLOAT: /* Java's Float.toString */
            return put_text(n, cx, out, buf, sl_value_format(buf, sizeof buf, &v, SL_T_FLOAT));
        case SL_T_TIMESTAMP: { /* exactly p fraction digits */
            const sl_dtype *kt = ndt(k);
            sl_ts ts = {v.v.ts.ms, sl_dtype_has_nanos(kt) ? v.v.ts.nano : 0};
            if (kt->p == 3) return put_text(n, cx, out, buf, ts_to_sql(buf, sizeof buf, v.v.i, true));
            return put_text(n, cx, out, buf, sl_timestamp_format(buf, sizeof buf, ts, kt->p, SL_TT_SQL));
        }
        default: return SL_OK; /* BYTES: the same bytes */
        }
    case SL_T_BYTES: return SL_OK;
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
    case SL_T_INT:
    case SL_T_BIGINT:
        /* Java's casts: a double saturates to int (long for BIGINT), then
         * narrows to byte or short; an integer narrows (wraps) */
        if (is_fp_type(from)) set_i(out, wrap_int(d_to_i(v.v.d, to == SL_T_BIGINT ? to : SL_T_INT), to));
        else if (from == SL_T_STRING) {
            const char *s = v.v.s.p;
            uint32_t len = v.v.s.len;
            int64_t x;
            trim_blanks(&s, &len);
            /* a fraction is cut ('1.5' is 1, as Flink's reader); text beyond the
             * type's range fails (Flink's parse to byte/short/int) */
            uint32_t whole = 0;
            while (whole < len && s[whole] != '.') whole++;
            for (uint32_t q = whole + 1; q < len; q++)
                if (!is_digit((unsigned char)s[q])) whole = len; /* not a number: fails below */
            if (whole < len && whole > 0 && is_digit((unsigned char)s[whole - 1])) len = whole;
            if (!sl_expr_parse_i64(s, len, &x) || (to != SL_T_BIGINT && wrap_int(x, to) != x))
                goto bad_string;
            set_i(out, x);
        } else if (from != SL_T_BOOLEAN) {
            set_i(out, wrap_int(v.v.i, to));
        }
        /* BOOLEAN -> integer: the stored 0/1 is right */
        return SL_OK;
    case SL_T_FLOAT:
    case SL_T_DOUBLE:
        if (from == SL_T_STRING) {
            const char *s = v.v.s.p;
            uint32_t len = v.v.s.len;
            double d;
            trim_blanks(&s, &len);
            if (!str_to_double(s, len, &d)) goto bad_string;
            if (to == SL_T_FLOAT) { /* Float.parseFloat rounds the text once */
                char tb[128];
                memcpy(tb, s, len);
                tb[len] = '\0';
                d = isfinite(d) ? (double)strtof(tb, NULL) : d;
            }
            set_d(out, d);
        } else if (is_fp_type(from)) {
            set_d(out, to == SL_T_FLOAT ? (double)(float)v.v.d : v.v.d);
        } else {
            set_d(out, to == SL_T_FLOAT ? int_to_float(v.v.i) : (double)v.v.i);
        }
        return SL_OK;
    case SL_T_BOOLEAN:
        if (from == SL_T_STRING) {
            const char *s = v.v.s.p;
            uint32_t len = v.v.s.len;
            trim_blanks(&s, &len);
            static const char *const yes[] = {"true", "t", "yes", "y", "1"};
            static const char *const no[] = {"false", "f", "no", "n", "0"};
            for (size_t i = 0; i < SL_ARRAY_LEN(yes); i++) {
                if (word_eq(s, len, yes[i])) return set_i(out, 1), SL_OK;
                if (word_eq(s, len, no[i])) return set_i(out, 0), SL_OK;
            }
            goto bad_string;
        }
        set_i(out, is_fp_type(from) ? v.v.d != 0 : v.v.i != 0);
        return SL_OK;
    case SL_T_TIMESTAMP: {
        int64_t ms;
        sl_ts ts;
        int p = ndt(n)->p;
        if (p > 3 && sl_timestamp_parse(v.v.s.p, v.v.s.len, p, &ts) == SL_OK) {
            set_i(out, ts.ms);
            out->v.ts.nano = ts.nano;
            return SL_OK;
        }
        if (!sl_expr_ts_parse(v.v.s.p, v.v.s.len, &ms)) goto bad_string;
        set_i(out, ms);
        out->v.ts.nano = 0;
        return p < 3 ? ts_precision(n, out) : SL_OK;
    }
    case SL_T_NULL:
    default: break; /* the checker admits no other target */
    }
    return SL_OK;
bad_string:
    if (n->neg) { /* TRY_CAST */
        set_null(out);
        return SL_OK;
    }
    return everr(cx, n, "cannot CAST '%.*s' to %s", (int)SL_MIN(v.v.s.len, 40u), v.v.s.p,
                 tname(to));
}

/* Does the code point at s[0..cl) occur in set? */
static bool in_set(const char *s, size_t cl, const char *set, size_t sn)
{
    for (size_t i = 0; i < sn;) {
        size_t l = cp_len(set + i, sn - i);
        if (l == cl && memcmp(set + i, s, cl) == 0) return true;
        i += l;
    }
    return false;
}

static int eval_trim(const node *n, evctx *cx, sl_value *out)
{
    sl_value s, c;
    if (ev(n->kids[0], cx, &s)) return SL_ERR;
    if (n->kids[1]) {
        if (ev(n->kids[1], cx, &c)) return SL_ERR;
    } else {
        set_s(&c, " ", 1);
    }
    if (s.isnull || c.isnull) {
        set_null(out);
        return SL_OK;
    }
    const char *p = s.v.s.p;
    size_t len = s.v.s.len;
    if (n->flags & TRIM_LEADING)
        while (len > 0) {
            size_t cl = cp_len(p, len);
            if (!in_set(p, cl, c.v.s.p, c.v.s.len)) break;
            p += cl, len -= cl;
        }
    if (n->flags & TRIM_TRAILING)
        while (len > 0) {
            size_t b = len - 1; /* back up to the start of the last code point */
            while (b > 0 && ((unsigned char)p[b] & 0xC0) == 0x80) b--;
            if (!in_set(p + b, len - b, c.v.s.p, c.v.s.len)) break;
            len = b;
        }
    set_s(out, p, len); /* a slice of the input: nothing to copy */
    return SL_OK;
}

/* REPLACE(s, search, replacement): every non-overlapping occurrence of
 * search, left to right; an empty search leaves s as it is. */
static int eval_replace(const node *n, evctx *cx, sl_value *out)
{
    sl_value v[3];
    int rc = eval_strict(n, cx, v, out);
    if (rc != SL_OK) return rc == SL_DONE ? SL_OK : rc;
    const char *s = v[0].v.s.p, *f = v[1].v.s.p, *r = v[2].v.s.p;
    size_t sl = v[0].v.s.len, fl = v[1].v.s.len, rl = v[2].v.s.len, hits = 0;
    if (fl == 0 || fl > sl) {
        *out = v[0];
        return SL_OK;
    }
    for (size_t i = 0; i + fl <= sl;)
        if (!memcmp(s + i, f, fl)) hits++, i += fl;
        else i++;
    if (!hits) {
        *out = v[0];
        return SL_OK;
    }
    size_t len = sl - hits * fl + hits * rl;
    char *d = salloc(cx, n, len);
    if (!d) return SL_ERR;
    size_t o = 0, i = 0;
    while (i < sl) {
        if (i + fl <= sl && !memcmp(s + i, f, fl)) {
            if (rl) memcpy(d + o, r, rl);
            o += rl, i += fl;
        } else {
            d[o++] = s[i++];
        }
    }
    set_s(out, d, len);
    return SL_OK;
}

/* SPLIT_INDEX(s, sep, k): the k-th (from 0) of the pieces s splits into at
 * each occurrence of sep (empty pieces kept); NULL when k is negative or
 * past the last piece. An empty sep splits at runs of blanks, tabs and line
 * breaks. The piece is a slice of s: nothing is copied. */
static int eval_split_index(const node *n, evctx *cx, sl_value *out)
{
    sl_value v[3];
    if (eval_kids(n, cx, v)) return SL_ERR;
    if (v[0].isnull || v[1].isnull || v[2].isnull || v[2].v.i < 0 || v[0].v.s.len == 0) {
        set_null(out); /* an empty string has no pieces */
        return SL_OK;
    }
    const char *s = v[0].v.s.p, *sep = v[1].v.s.p;
    size_t len = v[0].v.s.len, sl = v[1].v.s.len, start = 0, i = 0;
    int64_t k = v[2].v.i;
    if (sl == 0) { /* whitespace-separated words */
#define SP(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\r' || (c) == '\f' || (c) == '\v')
        for (;;) {
            while (i < len && SP(s[i])) i++;
            if (i >= len) break;
            start = i;
            while (i < len && !SP(s[i])) i++;
            if (k-- == 0) {
                set_s(out, s + start, i - start);
                return SL_OK;
            }
        }
#undef SP
        set_null(out);
        return SL_OK;
    }
    for (;;) {
        size_t end = start;
        while (end + sl <= len && memcmp(s + end, sep, sl)) end++;
        if (end + sl > len) end = len; /* the last piece */
        if (k-- == 0) {
            set_s(out, s + start, end - start);
            return SL_OK;
        }
        if (end >= len) break;
        start = end + sl;
    }
    set_null(out);
    return SL_OK;
}

/* Give back the unused tail of the scratch string d (room `cap`, `len`
 * used) when it is still the arena's last allocation. */
static void strim(evctx *cx, const char *d, size_t cap, size_t len)
{
    sl_arena *a = cx->scratch;
    if (cap > len && a->buf && d + cap == a->buf + a->used) a->used -= cap - len;
}

/* DATE_FORMAT(ts | s, format): a constant format was compiled at check
 * time; another is compiled here into ops on the stack. */
#define DFMT_STACK_OPS 64
static int eval_date_format(const node *n, evctx *cx, sl_value *out)
{
    sl_value v[2];
    int rc = eval_strict(n, cx, v, out);
    if (rc != SL_OK) return rc == SL_DONE ? SL_OK : rc;
    int64_t ms = v[0].v.i;
    if (is_ltz(n->kids[0])) ms = sl_expr_zone_local(cx->zone, ms); /* an instant: local time */
    if (n->kids[0]->type == SL_T_STRING && !sl_dfmt_parse_default(v[0].v.s.p, v[0].v.s.len, &ms)) {
        set_null(out); /* not 'yyyy-MM-dd HH:mm:ss': NULL, as Flink's parse failure */
        return SL_OK;
    }
    const sl_dfmt *f = n->aux;
    sl_dfmt_op stack[DFMT_STACK_OPS];
    const sl_dfmt_op *ops;
    const char *pat;
    int nops;
    size_t maxlen;
    if (f) {
        ops = f->ops, pat = f->pat, nops = f->nops, maxlen = f->maxlen;
    } else {
        char msg[200];
        pat = v[1].v.s.p;
        if (sl_dfmt_compile(pat, v[1].v.s.len, n->kids[0]->type == SL_T_STRING, stack,
                            DFMT_STACK_OPS, &nops, &maxlen, msg, sizeof msg))
            return everr(cx, n, "DATE_FORMAT format '%.*s': %s", (int)SL_MIN(v[1].v.s.len, 60u),
                         pat, msg);
        ops = stack;
    }
    char *d = salloc(cx, n, maxlen);
    if (!d) return SL_ERR;
    size_t len = sl_dfmt_write(ops, nops, pat, ms, d);
    strim(cx, d, maxlen, len);
    set_s(out, d, len);
    return SL_OK;
}

/* Find the first match of re in s[from..len) (the whole of s is the
 * subject: '^' matches only at 0, \b sees the byte before `from`). */
static bool re_find(const regex_t *re, const char *s, size_t from, size_t len, regmatch_t *m,
                    size_t nm)
{
    regmatch_t whole[1];
    if (!nm) m = whole, nm = 1;
    m[0].rm_so = (regoff_t)from;
    m[0].rm_eo = (regoff_t)len;
    return regexec(re, s, nm, m, REG_STARTEND | (from ? REG_NOTBOL : 0)) == 0;
}

/* REGEXP(s, p): does p match anywhere in s. REGEXP_EXTRACT(s, p [, g]): the
 * text group g (0: the whole match, the default) of the first match, a
 * slice of s; NULL when there is no match, no group g, or g did not take
 * part. REGEXP_REPLACE(s, p, r): every match replaced by r taken literally,
 * an empty match advancing by one character, as Java's replaceAll does. */
static int eval_regex(const node *n, evctx *cx, sl_value *out)
{
    sl_value v[3];
    int rc = eval_strict(n, cx, v, out);
    if (rc != SL_OK) return rc == SL_DONE ? SL_OK : rc;
    const sl_rx *rx = n->aux;
    const char *s = v[0].v.s.p ? v[0].v.s.p : "";
    size_t len = v[0].v.s.len;
    if (!rx) { /* the pattern is the NULL literal */
        set_null(out);
        return SL_OK;
    }
    const regex_t *re = &rx->re;
    if (rx->litlen && !memmem(s, len, rx->lit, rx->litlen)) { /* no match is possible */
        if (n->op == N_REGEXP) set_i(out, 0);
        else if (n->op == N_REGEXP_EXTRACT) set_null(out);
        else *out = v[0];
        return SL_OK;
    }
    /* regexec reads a C string (REG_STARTEND bounds the search, but not
     * every regexec, nor ASan's interceptor of it, stops there): a copy with
     * a NUL after it, from the scratch arena */
    char *c = salloc(cx, n, len + 1);
    if (!c) return SL_ERR;
    if (len) memcpy(c, s, len);
    c[len] = '\0';
    regmatch_t m[SL_EXPR_MAX_GROUPS];
    if (n->op == N_REGEXP) {
        set_i(out, re_find(re, c, 0, len, NULL, 0));
        strim(cx, c, len + 1, 0);
        return SL_OK;
    }
    if (n->op == N_REGEXP_EXTRACT) {
        int64_t g = n->nkids == 3 ? v[2].v.i : 0;
        /* glibc's regexec allocates when asked for groups, not when asked
         * for the whole match only: look for a match first, so a row that
         * has none costs no allocation */
        bool hit = g >= 0 && g <= (int64_t)re->re_nsub && re_find(re, c, 0, len, m, 1) &&
                   (g == 0 || re_find(re, c, 0, len, m, (size_t)g + 1)) && m[g].rm_so >= 0;
        strim(cx, c, len + 1, 0);
        if (!hit) set_null(out);
        else set_s(out, s + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so)); /* a slice of s */
        return SL_OK;
    }
    /* REGEXP_REPLACE: count the output, then write it */
    const char *r = v[2].v.s.p;
    size_t rl = v[2].v.s.len, total = 0, at = 0, from = 0;
    for (int pass = 0; pass < 2; pass++) {
        char *d = NULL;
        if (pass == 1 && !(d = salloc(cx, n, total))) return SL_ERR;
        size_t o = 0;
        at = from = 0;
        while (from <= len && re_find(re, c, from, len, m, 1)) {
            size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
            if (d) {
                memcpy(d + o, c + at, so - at);
                if (rl) memcpy(d + o + (so - at), r, rl);
            }
            o += so - at + rl;
            at = eo;
            from = eo > so ? eo : eo + (eo < len ? cp_len(c + eo, len - eo) : 1);
        }
        if (d && len > at) memcpy(d + o, c + at, len - at);
        o += len - at;
        if (pass == 0) total = o;
        else set_s(out, d, o);
    }
    return SL_OK;
}

static int eval_substring(const node *n, evctx *cx, sl_value *out)
{
    sl_value v[3];
    int rc = eval_strict(n, cx, v, out);
    if (rc != SL_OK) return rc == SL_DONE ? SL_OK : rc;
    if (n->nkids == 3 && v[2].v.i < 0) { /* a negative length gives NULL, as in Flink */
        set_null(out);
        return SL_OK;
    }
    const char *s = v[0].v.s.p;
    size_t len = v[0].v.s.len;
    int64_t nch = cp_count(s, len), pos = v[1].v.i;
    /* 1-based; 0 is read as 1; a negative start counts from the end */
    int64_t start = pos > 0 ? pos - 1 : pos < 0 ? nch + pos : 0;
    int64_t end = nch;
    if (n->nkids == 3 && __builtin_add_overflow(start, v[2].v.i, &end)) end = INT64_MAX;
    if (start < 0) start = 0;
    if (end > nch) end = nch;
    if (end <= start) {
        set_s(out, s, 0);
        return SL_OK;
    }
    size_t b0 = cp_offset(s, len, start);
    size_t b1 = b0 + cp_offset(s + b0, len - b0, end - start);
    set_s(out, s + b0, b1 - b0);
    return SL_OK;
}

static int eval_position(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    if (a.isnull || b.isnull) {
        set_null(out);
        return SL_OK;
    }
    if (a.v.s.len == 0) {
        set_i(out, 1);
        return SL_OK;
    }
    const char *hit = b.v.s.len >= a.v.s.len ? memmem(b.v.s.p, b.v.s.len, a.v.s.p, a.v.s.len)
                                             : NULL;
    set_i(out, hit ? cp_count(b.v.s.p, (size_t)(hit - b.v.s.p)) + 1 : 0);
    return SL_OK;
}

static int eval_case_map(const node *n, evctx *cx, sl_value *out, bool upper)
{
    int rc = ev(n->kids[0], cx, out);
    if (rc || out->isnull) return rc;
    uint32_t len = out->v.s.len;
    char *d = salloc(cx, n, len);
    if (!d) return SL_ERR;
    for (uint32_t i = 0; i < len; i++) {
        char c = out->v.s.p[i];
        if (upper && c >= 'a' && c <= 'z') c = (char)(c - 32);
        else if (!upper && c >= 'A' && c <= 'Z') c = (char)(c + 32);
        d[i] = c;
    }
    set_s(out, d, len);
    return SL_OK;
}

/* ---- RAND: java.util.Random's generator ---------------------------------
 * RAND and RAND_INTEGER draw from the 48-bit linear congruential generator
 * that java.util.Random specifies, so RAND(seed) yields the sequence Flink's
 * RAND(seed) does. The parsed tree is shared read-only by every subtask's
 * thread, so the generators' states live outside it, in thread-local
 * storage:
 *   - RAND() / RAND_INTEGER(bound): one generator per thread, seeded from
 *     the monotonic clock, the thread and a process-wide counter;
 *   - a literal seed: one generator per RAND node per thread, found by the
 *     node's serial in a table of RAND_SLOTS slots and started from the
 *     seed at the node's first evaluation on that thread. The sequence runs
 *     on across records, as Flink's does per operator instance (two subtasks
 *     on two threads each get the whole sequence). When the table is full,
 *     the least recently used slot is taken over -- a destroyed tree's slot
 *     first, as it is never used again -- so a sequence starts again only
 *     when one thread evaluates more than RAND_SLOTS seeded RAND calls in
 *     turn;
 *   - a seed that is not a literal (RAND(id)): a fresh generator from that
 *     value at every evaluation, so the result is a function of the seed.
 * No allocation, no lock, no system call. */
#define JR_MULT 0x5DEECE66DULL
#define JR_MASK ((1ULL << 48) - 1)
#define RAND_SLOTS 64

typedef struct rand_slot {
    uint64_t serial; /* the RAND node's serial; 0: free */
    uint64_t state;  /* its generator */
    uint64_t used;   /* rand_tick at its last use */
} rand_slot;

static _Thread_local rand_slot rand_slots[RAND_SLOTS];
static _Thread_local uint64_t rand_tick;
static _Thread_local uint64_t rand_free_state; /* unseeded calls' generator */
static _Thread_local bool rand_free_ready;
static _Atomic uint64_t rand_threads;          /* tells threads' unseeded generators apart */

/* A generator started from `seed` (a Java long, taken as its 64 bits). */
static uint64_t jr_seed(uint64_t seed) { return (seed ^ JR_MULT) & JR_MASK; }

/* The next `bits` (<= 31) random bits. */
static int32_t jr_next(uint64_t *st, int bits)
{
    *st = (*st * JR_MULT + 0xB) & JR_MASK;
    return (int32_t)(*st >> (48 - bits));
}

/* Uniform in [0, 1) with 53 random bits. */
static double jr_double(uint64_t *st)
{
    int64_t hi = jr_next(st, 26), lo = jr_next(st, 27);
    return (double)((hi << 27) + lo) * 0x1.0p-53;
}

/* Uniform in [0, bound), bound > 0: a power of two takes the high bits;
 * otherwise a draw is rejected when it falls in the incomplete last run of
 * `bound` values (in Java's int arithmetic: when u - r + (bound - 1)
 * overflows), so every result is equally likely. */
static int32_t jr_int(uint64_t *st, int32_t bound)
{
    int32_t r = jr_next(st, 31), m = bound - 1;
    if ((bound & m) == 0) return (int32_t)(((int64_t)bound * r) >> 31);
    for (int32_t u = r; (int64_t)u - (r = u % bound) + m > INT32_MAX; u = jr_next(st, 31)) {
    }
    return r;
}

/* The generator a RAND node draws from on this thread (see above). */
static uint64_t *rand_state(const node *n)
{
    if (!(n->flags & RAND_FIXED)) {
        if (!rand_free_ready) {
            uint64_t x = (uint64_t)sl_mono_ns() ^ (uint64_t)(uintptr_t)&rand_free_state ^
                         (atomic_fetch_add(&rand_threads, 1) + 1) * 0x9E3779B97F4A7C15ULL;
            x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29; /* spread the bits */
            rand_free_state = jr_seed(x);
            rand_free_ready = true;
        }
        return &rand_free_state;
    }
    size_t home = (size_t)((n->serial * 0x9E3779B97F4A7C15ULL) >> 58); /* 6 bits */
    rand_slot *sl = NULL, *lru = &rand_slots[home];
    rand_tick++;
    for (size_t i = 0; i < RAND_SLOTS; i++) {
        rand_slot *x = &rand_slots[(home + i) % RAND_SLOTS];
        if (x->serial == n->serial) {
            x->used = rand_tick;
            return &x->state;
        }
        if (x->serial == 0) {
            sl = x;
            break;
        }
        if (x->used < lru->used) lru = x;
    }
    if (!sl) sl = lru; /* full: a taken-over slot stays in its probe chain, so none is lost */
    sl->serial = n->serial;
    sl->state = jr_seed((uint64_t)n->lit.v.i);
    sl->used = rand_tick;
    return &sl->state;
}

static int eval_rand(const node *n, evctx *cx, sl_value *out)
{
    sl_value seed, bound;
    uint64_t local, *st;
    if (n->op == N_RAND_INT && ev(n->kids[n->nkids - 1], cx, &bound)) return SL_ERR;
    if ((n->flags & RAND_SEEDED) && !(n->flags & RAND_FIXED)) {
        if (ev(n->kids[0], cx, &seed)) return SL_ERR;
        if (seed.isnull) {
            set_null(out);
            return SL_OK;
        }
        local = jr_seed((uint64_t)seed.v.i);
        st = &local;
    } else {
        st = rand_state(n);
    }
    if (n->op == N_RAND) {
        set_d(out, jr_double(st));
        return SL_OK;
    }
    if (bound.isnull) {
        set_null(out);
        return SL_OK;
    }
    if (bound.v.i <= 0)
        return everr(cx, n, "RAND_INTEGER bound must be positive, got %lld", (long long)bound.v.i);
    set_i(out, jr_int(st, (int32_t)bound.v.i));
    return SL_OK;
}

/* TIMESTAMPADD(unit, n, ts) and TIMESTAMPDIFF(unit, t1, t2). DIFF counts
 * whole units from t1 to t2, truncated toward zero; MONTH, QUARTER and YEAR
 * count calendar months (see months_between). */
static int eval_tsfn(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    if (a.isnull || b.isnull) {
        set_null(out);
        return SL_OK;
    }
    int u = n->flags;
    int64_t r;
    if (n->op == N_TS_ADD) {
        bool ok = tu_ms[u] ? !__builtin_mul_overflow(a.v.i, tu_ms[u], &r) &&
                                 !__builtin_add_overflow(b.v.i, r, &r)
                           : add_months(b.v.i, a.v.i * tu_months[u], &r);
        if (!ok)
            return everr(cx, n, "TIMESTAMPADD: adding %lld %s gives a TIMESTAMP out of range",
                         (long long)a.v.i, tu_name[u]);
        set_i(out, r);
        return SL_OK;
    }
    if (tu_ms[u]) {
        if (__builtin_sub_overflow(b.v.i, a.v.i, &r))
            return everr(cx, n, "TIMESTAMPDIFF: the difference is out of range");
        r /= tu_ms[u];
    } else {
        r = months_between(a.v.i, b.v.i) / tu_months[u];
    }
    set_i(out, wrap32(r)); /* an INT, narrowed as Java narrows */
    return SL_OK;
}

/* UNIX_TIMESTAMP([s]) and FROM_UNIXTIME(n): epoch seconds <-> 'yyyy-MM-dd
 * HH:mm:ss' in the session zone. A string UNIX_TIMESTAMP cannot read gives
 * -9223372036854775808, as Flink's does. */
static int eval_unix(const node *n, evctx *cx, sl_value *out)
{
    if (n->op == N_UNIX_TS && n->nkids == 0) {
        set_i(out, sl_floor_div(sl_now_ms(), 1000));
        return SL_OK;
    }
    int rc = ev(n->kids[0], cx, out);
    if (rc || out->isnull) return rc;
    int64_t ms;
    if (n->op == N_UNIX_TS) {
        const sl_dfmt *f = n->aux;
        bool ok = n->nkids == 2
            ? f && sl_dfmt_parse(f->ops, f->nops, f->pat, out->v.s.p, out->v.s.len, false, &ms)
            : sl_expr_ts_parse(out->v.s.p, out->v.s.len, &ms);
        if (ok) ms = sl_expr_zone_utc_sdf(cx->zone, ms); /* the session zone's time */
        set_i(out, ok ? sl_floor_div(ms, 1000) : INT64_MIN);
        return SL_OK;
    }
    if (__builtin_mul_overflow(out->v.i, 1000, &ms))
        return everr(cx, n, "FROM_UNIXTIME: %lld seconds is out of range", (long long)out->v.i);
    ms = sl_expr_zone_local(cx->zone, ms); /* written as the session zone's time */
    if (n->aux) { /* a format, compiled while checking */
        const sl_dfmt *f = n->aux;
        char *d = salloc(cx, n, f->maxlen);
        if (!d) return SL_ERR;
        size_t len = sl_dfmt_write(f->ops, f->nops, f->pat, ms, d);
        strim(cx, d, f->maxlen, len);
        set_s(out, d, len);
        return SL_OK;
    }
    char buf[48];
    return put_text(n, cx, out, buf, ts_to_sql(buf, sizeof buf, ms, false));
}

/* =, <>, <, <=, >, >=: NULL when either side is. */
static int eval_compare(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    if (a.isnull || b.isnull) {
        set_null(out);
        return SL_OK;
    }
    int c = cmpn(&a, n->kids[0], &b, n->kids[1]);
    bool r = n->op == N_EQ ? c == 0 : n->op == N_NE ? c != 0 : n->op == N_LT ? c < 0
           : n->op == N_LE ? c <= 0 : n->op == N_GT ? c > 0 : c >= 0;
    set_i(out, r);
    return SL_OK;
}

/* AND, OR in three-valued logic. */
static int eval_and_or(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    /* the left side decides alone when it can (FALSE for AND, TRUE for OR) */
    bool dominant = n->op == N_OR;
    if (ev(n->kids[0], cx, &a)) return SL_ERR;
    if (a.isnull || (a.v.i != 0) != dominant) {
        if (ev(n->kids[1], cx, &b)) return SL_ERR;
        a = !b.isnull && (b.v.i != 0) == dominant ? b : a.isnull || b.isnull ? a : b;
        if (b.isnull && !a.isnull) set_null(&a);
    }
    if (a.isnull) set_null(out);
    else set_i(out, a.v.i != 0);
    return SL_OK;
}

/* x [NOT] BETWEEN lo AND hi. */
static int eval_between(const node *n, evctx *cx, sl_value *out)
{
    sl_value v[3];
    if (eval_kids(n, cx, v)) return SL_ERR;
    int ge = v[0].isnull || v[1].isnull ? U3 : cmpn(&v[0], n->kids[0], &v[1], n->kids[1]) >= 0;
    int le = v[0].isnull || v[2].isnull ? U3 : cmpn(&v[0], n->kids[0], &v[2], n->kids[2]) <= 0;
    int r = and3(ge, le);
    set3(out, n->neg ? not3(r) : r);
    return SL_OK;
}

/* x [NOT] IN (v, ...): TRUE at the first equal value, NULL when none is
 * equal and one is NULL. */
static int eval_in(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a)) return SL_ERR;
    if (a.isnull) {
        set_null(out);
        return SL_OK;
    }
    int r = F3;
    for (int i = 1; i < n->nkids && r != T3; i++) {
        if (ev(n->kids[i], cx, &b)) return SL_ERR;
        if (b.isnull) r = U3;
        else if (cmpn(&a, n->kids[0], &b, n->kids[i]) == 0) r = T3;
    }
    set3(out, n->neg ? not3(r) : r);
    return SL_OK;
}

/* TO_TIMESTAMP_LTZ(seconds or milliseconds, 0 | 3). */
static int eval_to_ts_ltz(const node *n, evctx *cx, sl_value *out)
{
    int rc;
    if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
    int64_t scale = n->flags == 0 ? 1000 : 1, ms;
    if (is_fp_type(n->kids[0]->type)) {
        double d = out->v.d * (double)scale;
        if (!(d > -9.2e18 && d < 9.2e18))
            return everr(cx, n, "TO_TIMESTAMP_LTZ: %g is out of range", out->v.d);
        ms = (int64_t)d;
    } else if (__builtin_mul_overflow(out->v.i, scale, &ms)) {
        return everr(cx, n, "TO_TIMESTAMP_LTZ: %lld seconds is out of range",
                     (long long)out->v.i);
    }
    set_i(out, ms);
    return SL_OK;
}

/* x [NOT] SIMILAR TO p: the whole of x matches the compiled pattern. */
static int eval_similar(const node *n, evctx *cx, sl_value *out)
{
    sl_value x;
    if (ev(n->kids[0], cx, &x)) return SL_ERR;
    if (x.isnull || !n->aux) {
        set_null(out);
        return SL_OK;
    }
    char *c = salloc(cx, n, (size_t)x.v.s.len + 1); /* regexec reads a C string */
    if (!c) return SL_ERR;
    if (x.v.s.len) memcpy(c, x.v.s.p, x.v.s.len);
    c[x.v.s.len] = '\0';
    bool m = memchr(c, '\0', x.v.s.len) == NULL &&
             regexec(&((const sl_rx *)n->aux)->re, c, 0, NULL, 0) == 0;
    strim(cx, c, (size_t)x.v.s.len + 1, 0);
    set_i(out, m != n->neg);
    return SL_OK;
}

/* a IS [NOT] DISTINCT FROM b: equality in which NULL equals NULL; never NULL. */
static int eval_distinct(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    bool same = a.isnull || b.isnull ? a.isnull && b.isnull
                                     : cmpn(&a, n->kids[0], &b, n->kids[1]) == 0;
    set_i(out, same == n->neg);
    return SL_OK;
}

/* A function of expr_fn.c's table: the arguments on the stack (or, for
 * many, in the scratch arena), NULL out for a strict one given a NULL. */
static int eval_fnx(const node *n, evctx *cx, sl_value *out)
{
    sl_value local[6], *vals = local;
    if (n->nkids > (int)SL_ARRAY_LEN(local)) {
        size_t al = _Alignof(sl_value), need = (size_t)n->nkids * sizeof(sl_value) + al;
        char *raw = sl_arena_alloc(cx->scratch, need);
        if (!raw) return everr(cx, n, "scratch space exhausted evaluating %s", n->fx->name);
        vals = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al);
    }
    if (eval_kids(n, cx, vals)) return SL_ERR;
    if (n->fx->strict)
        for (int i = 0; i < n->nkids; i++)
            if (vals[i].isnull) {
                set_null(out);
                return SL_OK;
            }
    sl_fnx_cx fc = {cx->scratch, cx->err, cx->errlen};
    return n->fx->eval(n, vals, out, &fc);
}

static int ev(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    int rc;
    switch (n->op) {
    case N_LIT: *out = n->lit; return SL_OK;
    case N_COL:
        if (n->col >= cx->row->n)
            return everr(cx, n, "row has %d values, expression reads column %d", cx->row->n,
                         n->col + 1);
        *out = cx->row->vals[n->col];
        return SL_OK;
    case N_NEG:
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        if (n->ctype == SL_T_DECIMAL) {
            sl_dec d = {out->v.dec.lo, out->v.dec.hi};
            put_dec(out, sl_dec_neg(d));
        } else if (is_fp_type(n->ctype)) out->v.d = -out->v.d;
        else if (n->ctype != SL_T_BIGINT) out->v.i = wrap_int(-out->v.i, n->ctype);
        else out->v.i = wrap64(0 - (uint64_t)out->v.i);
        return SL_OK;
    case N_ADD:
    case N_SUB:
    case N_MUL:
    case N_DIV:
    case N_MOD: return eval_arith(n, cx, out);
    case N_CONCAT: return eval_concat(n, cx, out);
    case N_EQ:
    case N_NE:
    case N_LT:
    case N_LE:
    case N_GT:
    case N_GE: return eval_compare(n, cx, out);
    case N_AND:
    case N_OR: return eval_and_or(n, cx, out);
    case N_NOT:
        if (ev(n->kids[0], cx, out)) return SL_ERR;
        if (!out->isnull) out->v.i = !out->v.i;
        return SL_OK;
    case N_IS_NULL:
    case N_IS_TRUE:
    case N_IS_FALSE: {
        if (ev(n->kids[0], cx, &a)) return SL_ERR;
        bool r = n->op == N_IS_NULL ? a.isnull
               : n->op == N_IS_TRUE ? !a.isnull && a.v.i : !a.isnull && !a.v.i;
        set_i(out, r != n->neg);
        return SL_OK;
    }
    case N_BETWEEN: return eval_between(n, cx, out);
    case N_IN: return eval_in(n, cx, out);
    case N_LIKE: return eval_like(n, cx, out);
    case N_CASE: return eval_case(n, cx, out);
    case N_CAST: return eval_cast(n, cx, out);
    case N_UPPER:
    case N_LOWER: return eval_case_map(n, cx, out, n->op == N_UPPER);
    case N_CHAR_LENGTH:
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        set_i(out, cp_count(out->v.s.p, out->v.s.len));
        return SL_OK;
    case N_ABS:
    case N_FLOOR:
    case N_CEIL:
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        if (n->type == SL_T_TIMESTAMP && n->op != N_ABS) /* FLOOR / CEIL (ts TO unit) */
            out->v.i = sl_civil_floor((sl_extract_unit)n->flags, out->v.i, n->op == N_CEIL);
        else if (n->type == SL_T_DECIMAL) {
            int s;
            sl_dec d = dec_of(out, n->kids[0], &s), r = d;
            sl_dec_type t = {(uint8_t)n->dt->p, (uint8_t)n->dt->s};
            if (n->op == N_ABS) r = sl_dec_abs(d);
            else if ((n->op == N_FLOOR ? sl_dec_floor(d, s, t, &r) : sl_dec_ceil(d, s, t, &r)) !=
                     SL_DEC_OK)
                return set_null(out), SL_OK; /* beyond the type: NULL, as an overflow */
            put_dec(out, r);
        }
        else if (is_fp_type(n->type))
            out->v.d = n->op == N_ABS ? fabs(out->v.d) : n->op == N_FLOOR ? floor(out->v.d)
                                                                         : ceil(out->v.d);
        else if (n->op == N_ABS && out->v.i < 0) /* ABS(INT_MIN) wraps, as Java's Math.abs */
            out->v.i = n->type != SL_T_BIGINT ? wrap_int(-out->v.i, n->type)
                                              : wrap64(0 - (uint64_t)out->v.i);
        return SL_OK;
    case N_COALESCE:
        for (int i = 0; i < n->nkids; i++) {
            if (ev(n->kids[i], cx, out)) return SL_ERR;
            if (!out->isnull) {
                widen(out, n->kids[i]->type, n->type);
                return SL_OK;
            }
        }
        return SL_OK;
    case N_IF: {
        if (ev(n->kids[0], cx, &a)) return SL_ERR;
        const node *pick = !a.isnull && a.v.i ? n->kids[1] : n->kids[2];
        if (ev(pick, cx, out)) return SL_ERR;
        widen(out, pick->type, n->type);
        return SL_OK;
    }
    case N_SINGLE_VALUE:
        if (ev(n->kids[0], cx, &a)) return SL_ERR;
        if (!a.isnull && a.v.i > 1)
            return everr(cx, n, "a scalar subquery gave %lld rows for one value; it may give at "
                         "most one (Flink: SingleValueAggFunction received more than one element.)",
                         (long long)a.v.i);
        return ev(n->kids[1], cx, out);
    case N_NULLIF:
        if (ev(n->kids[0], cx, out) || ev(n->kids[1], cx, &b)) return SL_ERR;
        if (!out->isnull && !b.isnull &&
            cmpn(out, n->kids[0], &b, n->kids[1]) == 0)
            set_null(out);
        return SL_OK;
    case N_TRIM: return eval_trim(n, cx, out);
    case N_SUBSTRING: return eval_substring(n, cx, out);
    case N_REPLACE: return eval_replace(n, cx, out);
    case N_SPLIT_INDEX: return eval_split_index(n, cx, out);
    case N_DATE_FORMAT: return eval_date_format(n, cx, out);
    case N_REGEXP:
    case N_REGEXP_EXTRACT:
    case N_REGEXP_REPLACE: return eval_regex(n, cx, out);
    case N_POSITION: return eval_position(n, cx, out);
    case N_TO_TS_LTZ: return eval_to_ts_ltz(n, cx, out);
    case N_NOW: { /* the wall clock at this evaluation, as TIMESTAMP(flags) */
        static const int64_t unit[4] = {1000, 100, 10, 1};
        int64_t ms = sl_now_ms();
        ms -= (ms % unit[n->flags] + unit[n->flags]) % unit[n->flags];
        if (n->neg) ms = sl_expr_zone_local(cx->zone, ms); /* the session zone's wall clock */
        if (n->type == SL_T_DATE) ms = ms / 86400000 - (ms % 86400000 < 0); /* today */
        else if (n->type == SL_T_TIME) ms = (ms % 86400000 + 86400000) % 86400000;
        set_i(out, ms);
        out->v.ts.nano = 0;
        return SL_OK;
    }
    case N_UNIX_TS:
    case N_FROM_UNIXTIME: return eval_unix(n, cx, out);
    case N_RAND:
    case N_RAND_INT: return eval_rand(n, cx, out);
    case N_UDF: {
        sl_value args[SL_UDF_MAX_ARGS]; /* the checker bounds nkids */
        if (eval_kids(n, cx, args)) return SL_ERR;
        return sl_expr_udf_call(n, args, cx->scratch, out, cx->err, cx->errlen);
    }
    case N_TS_ADD:
    case N_TS_DIFF: return eval_tsfn(n, cx, out);
    case N_EXTRACT: {
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        /* a DATE's date fields are its midnight's; its time fields read the
         * day count as milliseconds, as Flink's code does (HOUR is 0, SECOND
         * of 2024-02-29, day 19782, is 19); a TIME is ms of 1970-01-01 */
        sl_extract_unit u = (sl_extract_unit)n->flags;
        int64_t ms = out->v.i;
        if (n->kids[0]->type == SL_T_DATE && u < SL_XU_HOUR) ms *= 86400000;
        set_i(out, sl_civil_extract(u, ms));
        return SL_OK;
    }
    case N_SIMILAR: return eval_similar(n, cx, out);
    case N_DISTINCT: return eval_distinct(n, cx, out);
    case N_FNX: return eval_fnx(n, cx, out);
    case N_WATERMARK:
        if (cx->watermark == INT64_MIN) set_null(out);
        else set_i(out, cx->watermark);
        return SL_OK;
    case N_TO_TS: {
        int64_t ms;
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        /* an unparsable string gives NULL, as Flink's TO_TIMESTAMP does */
        const sl_dfmt *f = n->aux;
        if (f ? sl_dfmt_parse(f->ops, f->nops, f->pat, out->v.s.p, out->v.s.len, true, &ms)
              : sl_expr_ts_parse(out->v.s.p, out->v.s.len, &ms))
            set_i(out, ms);
        else set_null(out);
        return SL_OK;
    }
    case N_TO_DATE: {
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        /* NULL for text that does not parse, as Flink's TO_DATE */
        const sl_dfmt *f = n->aux;
        int64_t ms;
        int32_t days;
        if (f) {
            if (sl_dfmt_parse(f->ops, f->nops, f->pat, out->v.s.p, out->v.s.len, true, &ms))
                set_i(out, ms / 86400000 - (ms % 86400000 < 0));
            else set_null(out);
        } else if (sl_date_parse(out->v.s.p, out->v.s.len, &days) == SL_OK) {
            set_i(out, days);
        } else {
            set_null(out);
        }
        return SL_OK;
    }
    }
    return everr(cx, n, "internal error: unknown node %d", (int)n->op);
}

int sl_expr_eval(const sl_expr *e, const sl_row *row, sl_arena *scratch, sl_value *out,
                 char *err, size_t errlen)
{
    evctx cx = {row, scratch, err, errlen, INT64_MIN, e->zone};
    return ev(e->root, &cx, out);
}

int sl_expr_eval_wm(const sl_expr *e, const sl_row *row, int64_t watermark, sl_arena *scratch,
                    sl_value *out, char *err, size_t errlen)
{
    evctx cx = {row, scratch, err, errlen, watermark, e->zone};
    return ev(e->root, &cx, out);
}

bool sl_expr_reads_watermark(const sl_expr *e)
{
    for (const node *n = e->all; n; n = n->next_all)
        if (n->op == N_WATERMARK) return true;
    return false;
}

int sl_expr_eval_bool(const sl_expr *e, const sl_row *row, sl_arena *scratch, bool *pass,
                      char *err, size_t errlen)
{
    sl_value v;
    *pass = false;
    if (e->root->type != SL_T_BOOLEAN && e->root->type != SL_T_NULL)
        return sl_seterr(err, errlen, "condition is %s, not BOOLEAN", tname(e->root->type));
    if (sl_expr_eval(e, row, scratch, &v, err, errlen)) return SL_ERR;
    *pass = !v.isnull && v.v.i != 0;
    return SL_OK;
}

