/*
 * expr_math.c -- Flink's math functions for the table in expr_fn.c: ROUND
 * and TRUNCATE (decimal rounding of the value Java's Double.toString
 * writes, as Flink's BigDecimal.valueOf does: ROUND(2.675, 2) is 2.68),
 * POWER, SQRT, LN, LOG, LOG10, LOG2, EXP, the trigonometric and hyperbolic
 * functions, DEGREES, RADIANS, SIGN, PI, E, BIN and HEX. Results follow
 * java.lang.Math (NaN for SQRT(-1), -Infinity for LN(0)), which the C
 * library's functions give too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_int.h"

/* x rounded to d decimal places, half away from zero (`trunc`: toward
 * zero), on the shortest decimal digits that read back as x. */
static double dec_round(double x, int64_t d, bool trunc)
{
    if (!isfinite(x) || x == 0) return x;
    char sci[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(sci, sizeof sci, "%.*e", p - 1, x);
        if (strtod(sci, NULL) == x) break;
    }
    char dig[24];
    int nd = 0;
    const char *c = sci + (sci[0] == '-');
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9') dig[nd++] = *c;
    int e10 = atoi(c + 1); /* x = d.ddd * 10^e10 */
    int64_t keep = (int64_t)e10 + 1 + d; /* digits that stay */
    if (keep >= nd) return x;
    bool up = !trunc && keep >= 0 && dig[keep] >= '5';
    if (keep <= 0) {
        if (!up) return 0.0;
        keep = 0;
    }
    /* round the kept digits up: carry to the left, a new leading 1 if it runs off */
    int k = (int)keep;
    int shift = 0;
    if (up) {
        int i = k - 1;
        while (i >= 0 && dig[i] == '9') dig[i--] = '0';
        if (i >= 0) dig[i]++;
        else shift = 1; /* 99.9 -> 100 */
    }
    char buf[64];
    int o = snprintf(buf, sizeof buf, "%s0.%s", x < 0 ? "-" : "", shift ? "1" : "");
    for (int i = 0; i < k && o < (int)sizeof buf - 8; i++) buf[o++] = dig[i];
    if (!shift && k == 0) buf[o++] = '0';
    snprintf(buf + o, sizeof buf - (size_t)o, "e%d", e10 + 1 + shift);
    return strtod(buf, NULL);
}

/* An integer rounded to d (< 0) decimal places: 10^-d's multiple. */
static int64_t int_round(int64_t x, int64_t d, bool trunc)
{
    if (d >= 0) return x;
    if (d < -18) return 0;
    int64_t p = 1;
    for (int64_t i = 0; i < -d; i++) p *= 10;
    int64_t q = x / p, r = x % p;
    if (!trunc && (r >= 0 ? r : -r) * 2 >= p) q += x < 0 ? -1 : 1;
    return wrap64((uint64_t)q * (uint64_t)p);
}

/* ROUND(x [, d]) and TRUNCATE(x [, d]): the type of x. */
int sl_fx_round(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    bool trunc = n->fx->name[0] == 'T';
    int64_t d = n->nkids == 2 ? v[1].v.i : 0;
    out->isnull = false;
    if (n->type == SL_T_DECIMAL) { /* HALF_UP / toward zero into the result's type */
        sl_dec x = {v[0].v.dec.lo, v[0].v.dec.hi}, r;
        sl_dec_type t = {(uint8_t)n->dt->p, (uint8_t)n->dt->s};
        int s = n->kids[0]->dt ? n->kids[0]->dt->s : 0;
        int st = trunc ? sl_dec_truncate(x, s, (int)d, t, &r) : sl_dec_round(x, s, (int)d, t, &r);
        if (st != SL_DEC_OK) out->isnull = true;
        else out->v.dec.lo = r.lo, out->v.dec.hi = r.hi;
        return SL_OK;
    }
    if (n->type == SL_T_DOUBLE) out->v.d = dec_round(v[0].v.d, d, trunc);
    else if (n->type == SL_T_FLOAT) out->v.d = (double)(float)dec_round(v[0].v.d, d, trunc);
    else out->v.i = wrap_int(int_round(v[0].v.i, d, trunc), n->type);
    return SL_OK;
}

/* One function per name: no dispatch on the name per record. */
#define MATH1(fname, expr)                                                                     \
    int sl_fx_##fname(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)          \
    {                                                                                          \
        (void)cx;                                                                              \
        double x = sl_fnx_num(n, v, 0);                                                        \
        out->isnull = false;                                                                   \
        out->v.d = (expr);                                                                     \
        return SL_OK;                                                                          \
    }
MATH1(sqrt, sqrt(x))
MATH1(ln, log(x))
MATH1(log10, log10(x))
MATH1(log2, log(x) / log(2.0)) /* Flink's Math.log(x) / Math.log(2) */
MATH1(exp, exp(x))
MATH1(sin, sin(x))
MATH1(cos, cos(x))
MATH1(tan, tan(x))
MATH1(cot, 1.0 / tan(x))
MATH1(asin, asin(x))
MATH1(acos, acos(x))
MATH1(atan, atan(x))
MATH1(sinh, sinh(x))
MATH1(cosh, cosh(x))
MATH1(tanh, tanh(x))
MATH1(degrees, x * 57.29577951308232)    /* Math.toDegrees */
MATH1(radians, x * 0.017453292519943295) /* Math.toRadians */
#undef MATH1

/* POWER(a, b), ATAN2(y, x), LOG(x) and LOG(base, x). */
int sl_fx_math2(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    double a = sl_fnx_num(n, v, 0), r;
    const char *f = n->fx->name;
    if (!strcmp(f, "LOG")) r = n->nkids == 1 ? log(a) : log(sl_fnx_num(n, v, 1)) / log(a);
    else if (!strcmp(f, "POWER")) r = pow(a, sl_fnx_num(n, v, 1));
    else r = atan2(a, sl_fnx_num(n, v, 1));
    out->isnull = false;
    out->v.d = r;
    return SL_OK;
}

int sl_fx_const(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)v, (void)cx;
    out->isnull = false;
    out->v.d = n->fx->name[0] == 'P' ? 3.141592653589793 : 2.718281828459045;
    return SL_OK;
}

/* SIGN(x): -1, 0 or 1 in the type of x (NaN stays NaN, as Math.signum). */
int sl_fx_sign(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    *out = v[0];
    if (n->type == SL_T_DECIMAL) { /* -1, 0 or 1 at the argument's scale: 1.00 */
        sl_dec x = {v[0].v.dec.lo, v[0].v.dec.hi}, r = {0, 0};
        sl_dec_type t = {(uint8_t)n->dt->p, (uint8_t)n->dt->s};
        if (sl_dec_from_i64(sl_dec_sign(x), t, &r) != SL_DEC_OK) /* DECIMAL(1, 1): no room */
            out->isnull = true;
        out->v.dec.lo = r.lo, out->v.dec.hi = r.hi;
        return SL_OK;
    }
    if (is_fp_type(n->type)) {
        double x = v[0].v.d;
        if (x > 0) out->v.d = 1.0;
        else if (x < 0) out->v.d = -1.0;
    } else {
        out->v.i = v[0].v.i > 0 ? 1 : v[0].v.i < 0 ? -1 : 0;
    }
    return SL_OK;
}

/* BIN(n): Long.toBinaryString (64-bit two's complement for a negative n);
 * HEX(n): Long.toHexString in upper case; HEX(s): s's bytes in hex. */
int sl_fx_bin_hex(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    static const char hx[] = "0123456789ABCDEF";
    if (n->kids[0]->type == SL_T_STRING) {
        size_t len = v[0].v.s.len;
        char *d = sl_fnx_alloc(n, cx, len * 2);
        if (!d) return SL_ERR;
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)v[0].v.s.p[i];
            d[2 * i] = hx[c >> 4], d[2 * i + 1] = hx[c & 15];
        }
        fnx_set_s(out, d, len * 2);
        return SL_OK;
    }
    uint64_t u = (uint64_t)v[0].v.i;
    int bits = n->fx->name[0] == 'B' ? 1 : 4;
    char tmp[64];
    int k = 0;
    do {
        tmp[k++] = hx[u & ((1u << bits) - 1)];
        u >>= bits;
    } while (u);
    char *d = sl_fnx_alloc(n, cx, (size_t)k);
    if (!d) return SL_ERR;
    for (int i = 0; i < k; i++) d[i] = tmp[k - 1 - i];
    fnx_set_s(out, d, (size_t)k);
    return SL_OK;
}
