/*
 * decimal.c -- exact DECIMAL(p, s) (see decimal.h).
 *
 * A value is a sign and a magnitude while it is computed. A magnitude that
 * fits 128 bits takes the fast path (unsigned __int128); anything wider --
 * a product of two 38-digit numbers, a dividend scaled up by 10^77 -- is a
 * `wide`, eight 64-bit limbs (512 bits, enough for 10^154), on the stack.
 * Rounding to a scale is one routine: divide by 10^(k-1), keep the last
 * digit, divide by 10, add one when that digit is 5 or more (HALF_UP needs
 * no more than the first dropped digit).
 */
#include "decimal.h"

#include "sl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;
typedef __int128 i128;

#define WL 8 /* limbs of a wide magnitude, least significant first */

typedef struct wide {
    uint64_t w[WL];
} wide;

/* 10^0 .. 10^38 (10^19 is the largest power of ten an unsigned long long
 * holds; the rest are products of two constants) */
static const u128 POW10[39] = {
    1,
    10ULL,
    100ULL,
    1000ULL,
    10000ULL,
    100000ULL,
    1000000ULL,
    10000000ULL,
    100000000ULL,
    1000000000ULL,
    10000000000ULL,
    100000000000ULL,
    1000000000000ULL,
    10000000000000ULL,
    100000000000000ULL,
    1000000000000000ULL,
    10000000000000000ULL,
    100000000000000000ULL,
    1000000000000000000ULL,
    10000000000000000000ULL,
    (u128)10000000000000000000ULL * 10ULL,
    (u128)10000000000000000000ULL * 100ULL,
    (u128)10000000000000000000ULL * 1000ULL,
    (u128)10000000000000000000ULL * 10000ULL,
    (u128)10000000000000000000ULL * 100000ULL,
    (u128)10000000000000000000ULL * 1000000ULL,
    (u128)10000000000000000000ULL * 10000000ULL,
    (u128)10000000000000000000ULL * 100000000ULL,
    (u128)10000000000000000000ULL * 1000000000ULL,
    (u128)10000000000000000000ULL * 10000000000ULL,
    (u128)10000000000000000000ULL * 100000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000ULL,
    (u128)10000000000000000000ULL * 100000000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000000ULL,
    (u128)10000000000000000000ULL * 100000000000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000000000ULL,
};

u128 sl_dec_pow10(int n) { return POW10[n]; }

const char *sl_dec_status_text(int st)
{
    switch (st) {
    case SL_DEC_OK: return "ok";
    case SL_DEC_OVERFLOW: return "numeric overflow";
    case SL_DEC_DIV_ZERO: return "division by zero";
    case SL_DEC_SYNTAX: return "not a decimal number";
    case SL_DEC_NOT_FINITE: return "not a finite number";
    default: return "unknown status";
    }
}

/* ---------------------------------------------------------------- wide */

static void w_set(wide *a, u128 v)
{
    memset(a, 0, sizeof *a);
    a->w[0] = (uint64_t)v;
    a->w[1] = (uint64_t)(v >> 64);
}

static bool w_is_zero(const wide *a)
{
    for (int i = 0; i < WL; i++)
        if (a->w[i]) return false;
    return true;
}

static bool w_fits128(const wide *a)
{
    for (int i = 2; i < WL; i++)
        if (a->w[i]) return false;
    return true;
}

static u128 w_get128(const wide *a) { return ((u128)a->w[1] << 64) | a->w[0]; }

static int w_cmp(const wide *a, const wide *b)
{
    for (int i = WL - 1; i >= 0; i--)
        if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

/* a *= m; the caller keeps the product under 2^512 */
static void w_mul_small(wide *a, uint64_t m)
{
    u128 carry = 0;
    for (int i = 0; i < WL; i++) {
        u128 t = (u128)a->w[i] * m + carry;
        a->w[i] = (uint64_t)t;
        carry = t >> 64;
    }
}

static void w_mul_pow10(wide *a, int n)
{
    for (; n >= 19; n -= 19) w_mul_small(a, 10000000000000000000ULL);
    if (n > 0) w_mul_small(a, (uint64_t)sl_dec_pow10(n));
}

/* a /= d, returns the remainder */
static uint64_t w_div_small(wide *a, uint64_t d)
{
    u128 r = 0;
    for (int i = WL - 1; i >= 0; i--) {
        u128 cur = (r << 64) | a->w[i];
        a->w[i] = (uint64_t)(cur / d);
        r = cur % d;
    }
    return (uint64_t)r;
}

/* a = floor(a / 10^n) */
static void w_div_pow10(wide *a, int n)
{
    for (; n >= 19; n -= 19) w_div_small(a, 10000000000000000000ULL);
    if (n > 0) w_div_small(a, (uint64_t)sl_dec_pow10(n));
}

static void w_add(wide *a, const wide *b)
{
    u128 carry = 0;
    for (int i = 0; i < WL; i++) {
        u128 t = (u128)a->w[i] + b->w[i] + carry;
        a->w[i] = (uint64_t)t;
        carry = t >> 64;
    }
}

/* a -= b, a >= b */
static void w_sub(wide *a, const wide *b)
{
    uint64_t borrow = 0;
    for (int i = 0; i < WL; i++) {
        uint64_t x = a->w[i], y = b->w[i];
        uint64_t d = x - y - borrow;
        borrow = (x < y) || (x - y < borrow);
        a->w[i] = d;
    }
}

static int w_bits(const wide *a)
{
    for (int i = WL - 1; i >= 0; i--)
        if (a->w[i]) return i * 64 + 64 - __builtin_clzll(a->w[i]);
    return 0;
}

static void w_shl1(wide *a)
{
    for (int i = WL - 1; i > 0; i--) a->w[i] = (a->w[i] << 1) | (a->w[i - 1] >> 63);
    a->w[0] <<= 1;
}

/* q = floor(n / d), r = n mod d; d != 0. Short division when d fits a
 * limb, else shift-and-subtract over n's bits. */
static void w_divmod(const wide *n, const wide *d, wide *q, wide *r)
{
    if (w_bits(d) <= 64) {
        *q = *n;
        w_set(r, w_div_small(q, d->w[0]));
        return;
    }
    if (w_fits128(n) && w_fits128(d)) {
        u128 nn = w_get128(n), dd = w_get128(d);
        w_set(q, nn / dd);
        w_set(r, nn % dd);
        return;
    }
    memset(q, 0, sizeof *q);
    memset(r, 0, sizeof *r);
    for (int i = w_bits(n) - 1; i >= 0; i--) {
        w_shl1(r);
        r->w[0] |= (n->w[i / 64] >> (i % 64)) & 1;
        if (w_cmp(r, d) >= 0) {
            w_sub(r, d);
            q->w[i / 64] |= 1ULL << (i % 64);
        }
    }
}

/* u_finish for a magnitude in 128 bits, |to - from| small enough for the
 * table: the common case, without the wide arithmetic */
static int u_finish(u128 u, int from, int to, int p, bool neg, bool half_up, sl_dec *out)
{
    if (to >= from) {
        int k = to - from;
        if (u != 0 && (k > p || u >= POW10[p - k])) return SL_DEC_OVERFLOW;
        u *= POW10[k];
    } else {
        int k = from - to;
        u /= POW10[k - 1];
        int digit = (int)(u % 10);
        u = u / 10 + (half_up && digit >= 5);
        if (u >= POW10[p]) return SL_DEC_OVERFLOW;
    }
    *out = sl_dec_from_i128(neg ? -(i128)u : (i128)u);
    return SL_DEC_OK;
}

/* Magnitude m at scale `from` rounded HALF_UP (or cut, half_up false) to
 * scale `to`, checked against p digits, into *out with sign neg. */
static int w_finish(wide *m, int from, int to, int p, bool neg, bool half_up, sl_dec *out)
{
    if (w_fits128(m) && to - from <= 38 && from - to <= 39)
        return u_finish(w_get128(m), from, to, p, neg, half_up, out);
    if (to >= from) {
        if (to - from > 38 && !w_is_zero(m)) return SL_DEC_OVERFLOW;
        w_mul_pow10(m, to - from);
    } else {
        int k = from - to;
        if (k > 120) { /* nothing of m is left at this scale */
            memset(m, 0, sizeof *m);
        } else {
            w_div_pow10(m, k - 1);
            uint64_t digit = w_div_small(m, 10);
            if (half_up && digit >= 5) {
                wide one;
                w_set(&one, 1);
                w_add(m, &one);
            }
        }
    }
    if (!w_fits128(m)) return SL_DEC_OVERFLOW;
    u128 u = w_get128(m);
    if (u >= sl_dec_pow10(p)) return SL_DEC_OVERFLOW;
    *out = sl_dec_from_i128(neg ? -(i128)u : (i128)u);
    return SL_DEC_OK;
}

/* |v| and whether v < 0 */
static u128 mag(sl_dec v, bool *neg)
{
    i128 x = sl_dec_i128(v);
    *neg = x < 0;
    return x < 0 ? (u128)0 - (u128)x : (u128)x;
}

/* ---------------------------------------------------------------- values */

bool sl_dec_fits(sl_dec v, int p)
{
    bool neg;
    return mag(v, &neg) < sl_dec_pow10(p);
}

int sl_dec_rescale(sl_dec v, int from, sl_dec_type t, sl_dec *out)
{
    bool neg;
    u128 m = mag(v, &neg);
    if (from == t.s) {
        if (m >= sl_dec_pow10(t.p)) return SL_DEC_OVERFLOW;
        *out = v;
        return SL_DEC_OK;
    }
    wide w;
    w_set(&w, m);
    return w_finish(&w, from, t.s, t.p, neg, true, out);
}

int sl_dec_parse(const char *text, size_t len, sl_dec_type t, sl_dec *out)
{
    /* Flink reads a short text (at most 18 bytes, blanks included) into a
     * DECIMAL of at most 18 digits with a lenient reader of its own, any
     * other with Java's BigDecimal; they differ in what may be missing */
    bool lenient = t.p <= 18 && len <= 18;
    size_t i = 0, j = len;
    while (i < j && (unsigned char)text[i] <= ' ') i++;
    while (j > i && (unsigned char)text[j - 1] <= ' ') j--;
    if (i == j) return SL_DEC_SYNTAX;
    bool neg = false;
    if (text[i] == '+' || text[i] == '-') {
        neg = text[i++] == '-';
        if (i == j) return SL_DEC_SYNTAX; /* a sign alone */
    }
    /* the significant digits (leading zeros dropped) as a wide, the count
     * of fraction digits, digits beyond 120 significant ones only counted */
    wide m;
    w_set(&m, 0);
    int sig = 0, frac = 0, ndigits = 0;
    u128 acc = 0; /* the first 38 significant digits; m holds more */
    long extra = 0; /* integer digits past what m holds: scale down */
    bool point = false;
    for (; i < j; i++) {
        char c = text[i];
        if (c == '.' && !point) {
            point = true;
            continue;
        }
        if (c < '0' || c > '9') break;
        ndigits++;
        if (sig == 0 && c == '0') {
            if (point) frac++;
            continue;
        }
        if (sig < 38) {
            acc = acc * 10 + (unsigned)(c - '0');
            sig++;
            if (point) frac++;
        } else if (sig < 120) {
            if (sig == 38) w_set(&m, acc); /* past 128 bits: on in the wide */
            w_mul_small(&m, 10);
            wide d;
            w_set(&d, (u128)(c - '0'));
            w_add(&m, &d);
            sig++;
            if (point) frac++;
        } else if (!point) {
            extra++; /* only its magnitude matters: it overflows */
        }
    }
    if (ndigits == 0 && !lenient) return SL_DEC_SYNTAX; /* ".", "e5" are 0 when lenient */
    long exp = 0;
    if (i < j && (text[i] == 'e' || text[i] == 'E')) {
        i++;
        bool eneg = false, esign = false;
        if (i < j && (text[i] == '+' || text[i] == '-')) eneg = text[i++] == '-', esign = true;
        size_t first = i;
        for (; i < j && text[i] >= '0' && text[i] <= '9'; i++)
            if (exp < 100000) exp = exp * 10 + (text[i] - '0');
        if (i == first && (esign || !lenient)) return SL_DEC_SYNTAX; /* "1e" is 1 when lenient */
        if (eneg) exp = -exp;
    }
    if (i != j) return SL_DEC_SYNTAX;
    /* value = m * 10^(extra + exp - frac) */
    long scale = (long)frac - exp - extra;
    if (sig <= 38) {
        if (acc == 0) {
            *out = sl_dec_from_i128(0);
            return SL_DEC_OK;
        }
        if (scale >= (long)t.s - 38 && scale <= (long)t.s + 39)
            return u_finish(acc, (int)scale, t.s, t.p, neg, true, out);
        w_set(&m, acc);
    }
    if (w_is_zero(&m)) {
        *out = sl_dec_from_i128(0);
        return SL_DEC_OK;
    }
    if (scale < (long)t.s - 200) return SL_DEC_OVERFLOW;
    if (scale > (long)t.s + 200) { /* far below one unit of scale s */
        *out = sl_dec_from_i128(0);
        return SL_DEC_OK;
    }
    if (scale < t.s && (long)t.s - scale + sig > 150) return SL_DEC_OVERFLOW;
    return w_finish(&m, (int)scale, t.s, t.p, neg, true, out);
}

int sl_dec_format(char *dst, size_t cap, sl_dec v, int s)
{
    bool neg;
    u128 m = mag(v, &neg);
    /* the digits, least significant first, 19 at a time in 64 bits */
    char digits[48];
    int n = 0;
    while (m >> 64) {
        uint64_t part = (uint64_t)(m % POW10[19]);
        m /= POW10[19];
        for (int i = 0; i < 19; i++, part /= 10) digits[n++] = (char)('0' + part % 10);
    }
    for (uint64_t low = (uint64_t)m; low; low /= 10) digits[n++] = (char)('0' + low % 10);
    if (n == 0) digits[n++] = '0';
    while (n <= s) digits[n++] = '0'; /* at least one integer digit */
    char buf[SL_DEC_TEXT_MAX + 1];
    int k = 0;
    if (neg) buf[k++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        buf[k++] = digits[i];
        if (i == s && s > 0) buf[k++] = '.';
    }
    buf[k] = '\0';
    if (cap > 0) {
        size_t c = (size_t)k < cap ? (size_t)k : cap - 1;
        memcpy(dst, buf, c);
        dst[c] = '\0';
    }
    return k;
}

int sl_dec_from_i64(int64_t v, sl_dec_type t, sl_dec *out)
{
    u128 m = v < 0 ? (u128)0 - (u128)(i128)v : (u128)v;
    if (t.p - t.s < 20 && m >= sl_dec_pow10(t.p - t.s)) return SL_DEC_OVERFLOW;
    i128 r = (i128)v * (i128)sl_dec_pow10(t.s);
    *out = sl_dec_from_i128(r);
    return SL_DEC_OK;
}

int sl_dec_to_i64(sl_dec v, int s, int64_t *out)
{
    i128 x = sl_dec_i128(v) / (i128)sl_dec_pow10(s); /* toward zero */
    *out = (int64_t)(uint64_t)(u128)x;
    return (x < INT64_MIN || x > INT64_MAX) ? SL_DEC_OVERFLOW : SL_DEC_OK;
}

int sl_dec_from_double(double x, sl_dec_type t, sl_dec *out)
{
    if (!isfinite(x)) return SL_DEC_NOT_FINITE;
    /* the shortest %.*e text that reads back to x */
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (strtod(buf, NULL) == x) break;
    }
    return sl_dec_parse(buf, strlen(buf), t, out);
}

int sl_dec_from_float(float x, sl_dec_type t, sl_dec *out)
{
    if (!isfinite(x)) return SL_DEC_NOT_FINITE;
    char buf[40];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, (double)x);
        if (strtof(buf, NULL) == x) break;
    }
    return sl_dec_parse(buf, strlen(buf), t, out);
}

double sl_dec_to_double(sl_dec v, sl_dec_type t)
{
    if (t.p <= 18)
        return (double)(int64_t)sl_dec_i128(v) / (double)(int64_t)sl_dec_pow10(t.s);
    char buf[SL_DEC_TEXT_MAX + 1];
    sl_dec_format(buf, sizeof buf, v, t.s);
    return strtod(buf, NULL); /* correctly rounded */
}

int sl_dec_cmp(sl_dec a, int sa, sl_dec b, int sb)
{
    i128 x = sl_dec_i128(a), y = sl_dec_i128(b);
    if (sa == sb) return x < y ? -1 : x > y;
    int sx = sl_dec_sign(a), sy = sl_dec_sign(b);
    if (sx != sy) return sx < sy ? -1 : 1;
    bool na, nb;
    wide wa, wb;
    w_set(&wa, mag(a, &na));
    w_set(&wb, mag(b, &nb));
    if (sa < sb) w_mul_pow10(&wa, sb - sa);
    else w_mul_pow10(&wb, sa - sb);
    int c = w_cmp(&wa, &wb);
    return sx < 0 ? -c : c;
}

/* a + b (negate_b: a - b) */
static int add_sub(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, bool negate_b, sl_dec *out)
{
    if (sa == sb && sa == t.s) { /* |a|, |b| < 10^38: no i128 overflow */
        i128 r = negate_b ? sl_dec_i128(a) - sl_dec_i128(b) : sl_dec_i128(a) + sl_dec_i128(b);
        u128 m = r < 0 ? (u128)0 - (u128)r : (u128)r;
        if (m >= sl_dec_pow10(t.p)) return SL_DEC_OVERFLOW;
        *out = sl_dec_from_i128(r);
        return SL_DEC_OK;
    }
    bool na, nb;
    wide wa, wb;
    w_set(&wa, mag(a, &na));
    w_set(&wb, mag(b, &nb));
    if (negate_b) nb = !nb;
    int s = sa > sb ? sa : sb;
    w_mul_pow10(&wa, s - sa);
    w_mul_pow10(&wb, s - sb);
    bool neg;
    if (na == nb) {
        w_add(&wa, &wb);
        neg = na;
    } else if (w_cmp(&wa, &wb) >= 0) {
        w_sub(&wa, &wb);
        neg = na;
    } else {
        w_sub(&wb, &wa);
        wa = wb;
        neg = nb;
    }
    if (w_is_zero(&wa)) neg = false;
    return w_finish(&wa, s, t.s, t.p, neg, true, out);
}

int sl_dec_add(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out)
{
    return add_sub(a, sa, b, sb, t, false, out);
}

int sl_dec_sub(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out)
{
    return add_sub(a, sa, b, sb, t, true, out);
}

int sl_dec_mul(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out)
{
    bool na, nb;
    u128 x = mag(a, &na), y = mag(b, &nb);
    if (sa + sb == t.s && (x >> 64) == 0 && (y >> 64) == 0) { /* exact in 128 bits */
        u128 m = x * y;
        if (m >= POW10[t.p]) return SL_DEC_OVERFLOW;
        *out = sl_dec_from_i128(na != nb ? -(i128)m : (i128)m);
        return SL_DEC_OK;
    }
    wide w;
    /* the 256-bit product from four 64x64 products */
    uint64_t x0 = (uint64_t)x, x1 = (uint64_t)(x >> 64), y0 = (uint64_t)y, y1 = (uint64_t)(y >> 64);
    u128 p00 = (u128)x0 * y0, p01 = (u128)x0 * y1, p10 = (u128)x1 * y0, p11 = (u128)x1 * y1;
    memset(&w, 0, sizeof w);
    w.w[0] = (uint64_t)p00;
    u128 mid = (p00 >> 64) + (uint64_t)p01 + (uint64_t)p10;
    w.w[1] = (uint64_t)mid;
    u128 hi = (mid >> 64) + (p01 >> 64) + (p10 >> 64) + (uint64_t)p11;
    w.w[2] = (uint64_t)hi;
    w.w[3] = (uint64_t)((hi >> 64) + (p11 >> 64));
    bool neg = (na != nb) && !w_is_zero(&w);
    return w_finish(&w, sa + sb, t.s, t.p, neg, true, out);
}

int sl_dec_div(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out)
{
    bool na, nb;
    u128 x = mag(a, &na), y = mag(b, &nb);
    if (y == 0) return SL_DEC_DIV_ZERO;
    /* Q = floor(|a/b| * 10^(s+1)) = floor(x * 10^(sb + s + 1 - sa) / y) */
    int e = sb + t.s + 1 - sa;
    wide n, d, q, r;
    w_set(&n, x);
    w_set(&d, y);
    if (e >= 0) w_mul_pow10(&n, e);
    else w_mul_pow10(&d, -e);
    w_divmod(&n, &d, &q, &r);
    /* Q with more than p + 1 digits overflows; keep the work bounded */
    if (w_bits(&q) > 140) return SL_DEC_OVERFLOW;
    int last = (int)w_div_small(&q, 10); /* q: the quotient cut at scale s */
    if (!w_fits128(&q)) return SL_DEC_OVERFLOW;
    u128 qq = w_get128(&q);
    bool up = last >= 5;
    if (last == 4) {
        /* The quotient is first rounded to 38 significant digits: when
         * those reach past the digit after the scale (Q = 10 qq + last has
         * nq < 39 digits) and the k = 38 - nq digits after Q round up into
         * it, that 4 becomes a 5. They do when (d - r) 10^(k+1) <= 5 d. */
        int nq = 1;
        for (u128 v = qq; v; v /= 10) nq++;
        int k = 38 - nq;
        if (k >= 0) {
            wide lhs = d, five = d;
            w_sub(&lhs, &r);
            if (w_bits(&lhs) + 4 * (k + 1) <= 8 * 64 - 8) {
                w_mul_pow10(&lhs, k + 1);
                w_mul_small(&five, 5);
                up = w_cmp(&lhs, &five) <= 0;
            }
        }
    }
    qq += up ? 1 : 0;
    if (qq >= sl_dec_pow10(t.p)) return SL_DEC_OVERFLOW;
    bool neg = (na != nb) && qq != 0;
    *out = sl_dec_from_i128(neg ? -(i128)qq : (i128)qq);
    return SL_DEC_OK;
}

int sl_dec_mod(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out)
{
    bool na, nb;
    u128 x = mag(a, &na), y = mag(b, &nb);
    if (y == 0) return SL_DEC_DIV_ZERO;
    int s = sa > sb ? sa : sb;
    wide n, d, q, r;
    w_set(&n, x);
    w_set(&d, y);
    w_mul_pow10(&n, s - sa);
    w_mul_pow10(&d, s - sb);
    w_divmod(&n, &d, &q, &r);
    return w_finish(&r, s, t.s, t.p, na && !w_is_zero(&r), true, out);
}

sl_dec sl_dec_neg(sl_dec v) { return sl_dec_from_i128(-sl_dec_i128(v)); }

sl_dec sl_dec_abs(sl_dec v) { return v.hi < 0 ? sl_dec_neg(v) : v; }

/* v at scale s to scale `to` (to < s) with the given rounding: 0 toward
 * zero, 1 HALF_UP, 2 floor, 3 ceiling. */
static int round_to(sl_dec v, int s, int to, int mode, sl_dec_type t, sl_dec *out)
{
    bool neg;
    u128 m = mag(v, &neg);
    wide w;
    w_set(&w, m);
    if (to >= s) return w_finish(&w, s, t.s, t.p, neg, false, out);
    int k = s - to;
    u128 q, rem;
    if (k > 38) {
        q = 0;
        rem = m;
    } else {
        u128 p = sl_dec_pow10(k);
        q = m / p;
        rem = m % p;
    }
    if (mode == 1) q += (k <= 38 && rem >= sl_dec_pow10(k) / 2) ? 1 : 0;
    else if (mode == 2 && neg && rem) q += 1;
    else if (mode == 3 && !neg && rem) q += 1;
    /* q is at scale `to`; the result's scale t.s >= to (to < 0: t.s = 0) */
    wide r;
    w_set(&r, q);
    int qs = to;
    if (to < 0) {
        w_mul_pow10(&r, -to);
        qs = 0;
    }
    return w_finish(&r, qs, t.s, t.p, neg && !w_is_zero(&r), false, out);
}

int sl_dec_floor(sl_dec v, int s, sl_dec_type t, sl_dec *out) { return round_to(v, s, 0, 2, t, out); }
int sl_dec_ceil(sl_dec v, int s, sl_dec_type t, sl_dec *out) { return round_to(v, s, 0, 3, t, out); }
int sl_dec_round(sl_dec v, int s, int n, sl_dec_type t, sl_dec *out)
{
    return round_to(v, s, n < -38 ? -39 : n, 1, t, out);
}
int sl_dec_truncate(sl_dec v, int s, int n, sl_dec_type t, sl_dec *out)
{
    return round_to(v, s, n < -38 ? -39 : n, 0, t, out);
}

/* ---------------------------------------------------------------- types */

static sl_dec_type mk(int p, int s)
{
    sl_dec_type t = {(uint8_t)p, (uint8_t)s};
    return t;
}

sl_dec_type sl_dec_type_adjust(int p, int s)
{
    if (p <= SL_DEC_MAX_PRECISION) return mk(p, s);
    int whole = p - s;
    int keep = s < 6 ? s : 6;
    int ns = SL_DEC_MAX_PRECISION - whole;
    return mk(SL_DEC_MAX_PRECISION, ns > keep ? ns : keep);
}

sl_dec_type sl_dec_type_of_int(int bytes)
{
    return mk(bytes == 1 ? 3 : bytes == 2 ? 5 : bytes == 4 ? 10 : 19, 0);
}

sl_dec_type sl_dec_type_add(sl_dec_type a, sl_dec_type b)
{
    int s = SL_MAX(a.s, b.s);
    return sl_dec_type_adjust(SL_MAX(a.p - a.s, b.p - b.s) + s + 1, s);
}

sl_dec_type sl_dec_type_mul(sl_dec_type a, sl_dec_type b)
{
    return sl_dec_type_adjust(a.p + b.p + 1, a.s + b.s);
}

sl_dec_type sl_dec_type_div(sl_dec_type a, sl_dec_type b)
{
    int s = SL_MAX(6, a.s + b.p + 1);
    return sl_dec_type_adjust(a.p - a.s + b.s + s, s);
}

sl_dec_type sl_dec_type_mod(sl_dec_type a, sl_dec_type b)
{
    int s = SL_MAX(a.s, b.s);
    return sl_dec_type_adjust(SL_MIN(a.p - a.s, b.p - b.s) + s, s);
}

sl_dec_type sl_dec_type_sum(sl_dec_type a) { return mk(SL_DEC_MAX_PRECISION, a.s); }

sl_dec_type sl_dec_type_avg(sl_dec_type a) { return mk(SL_DEC_MAX_PRECISION, SL_MAX(a.s, 6)); }

sl_dec_type sl_dec_type_round(sl_dec_type a, int n)
{
    if (n >= a.s) return a;
    if (n < 0) return mk(SL_MIN(SL_DEC_MAX_PRECISION, a.p - a.s + 1), 0);
    return mk(a.p - a.s + n + 1, n);
}

sl_dec_type sl_dec_type_floor(sl_dec_type a) { return mk(a.p, 0); }
