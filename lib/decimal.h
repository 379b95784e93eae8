/*
 * decimal.h -- exact DECIMAL(p, s), p <= 38: the value is an unscaled
 * 128-bit two's-complement integer u, meaning u / 10^s; the type (p, s) is
 * kept beside the value by the caller (a column's type), never in it.
 *
 * Every operation is exact and rounds HALF_UP (away from zero at .5) once,
 * into the result type the caller names, as Flink SQL's DECIMAL does; a
 * result of more than p digits is SL_DEC_OVERFLOW, which Flink SQL turns
 * into NULL (arithmetic and CAST alike). Division first rounds the exact
 * quotient to 38 significant digits (HALF_UP), then to the result scale,
 * as Flink's division does; the difference shows only when the digits past
 * the scale are 4999...9 followed by a 5 or more within 38 digits.
 * Intermediate values that do not fit 128 bits (a product's 76 digits, a
 * dividend scaled up) are held in a fixed 512-bit magnitude on the stack:
 * nothing allocates, every function is reentrant.
 *
 * The result-type functions follow Flink's derivation (docs/SQL.md,
 * "DECIMAL arithmetic"): a result wider than 38 digits keeps 38 and gives
 * up scale, keeping at least min(scale, 6) fraction digits.
 */
#ifndef SL_DECIMAL_H
#define SL_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_DEC_MAX_PRECISION 38
/* the longest text sl_dec_format writes, without the NUL: a sign, "0.",
 * 38 digits */
#define SL_DEC_TEXT_MAX 41

/* The unscaled value, two's complement over (hi, lo). */
typedef struct sl_dec {
    uint64_t lo;
    int64_t hi;
} sl_dec;

/* A DECIMAL type: 1 <= p <= 38, 0 <= s <= p. */
typedef struct sl_dec_type {
    uint8_t p, s;
} sl_dec_type;

/* Statuses (0 or negative). Flink SQL makes OVERFLOW a NULL (CAST, TRY_CAST
 * and arithmetic alike), DIV_ZERO a failed job ("Division by zero"), SYNTAX
 * a failed CAST but a NULL TRY_CAST, NOT_FINITE (DOUBLE NaN or infinity
 * into a DECIMAL) a failed CAST. */
#define SL_DEC_OK 0
#define SL_DEC_OVERFLOW (-1)
#define SL_DEC_DIV_ZERO (-2)
#define SL_DEC_SYNTAX (-3)
#define SL_DEC_NOT_FINITE (-4)

/* The status's name ("overflow"), for messages. */
const char *sl_dec_status_text(int st);

/* ---- values ---- */

static inline sl_dec sl_dec_from_i128(__int128 v)
{
    sl_dec d = {(uint64_t)v, (int64_t)(v >> 64)};
    return d;
}
static inline __int128 sl_dec_i128(sl_dec d)
{
    return (__int128)(((unsigned __int128)(uint64_t)d.hi << 64) | d.lo);
}
static inline int sl_dec_sign(sl_dec d) /* -1, 0, 1 */
{
    return d.hi < 0 ? -1 : (d.hi == 0 && d.lo == 0) ? 0 : 1;
}

/* 10^n for 0 <= n <= 38. */
unsigned __int128 sl_dec_pow10(int n);

/* Does unscaled v have at most p digits (|v| < 10^p)? */
bool sl_dec_fits(sl_dec v, int p);

/* Text into DECIMAL(p, s), as Flink's CAST reads it: blanks (bytes <= ' ')
 * around it are ignored, then [+-] digits [. digits] [(e|E) [+-] digits],
 * at least one digit before or after the point and in an exponent (Java's
 * BigDecimal text) -- except that a text of at most 18 bytes into p <= 18
 * may leave the digits out (".", "e5" and "-." are 0, "1e" is 1; a sign
 * alone and an exponent's sign alone are still errors). Rounded HALF_UP to
 * s. SL_DEC_SYNTAX for anything else (nothing written); SL_DEC_OVERFLOW
 * when the rounded value has more than p digits, which Flink's CAST from
 * STRING makes an error (TRY_CAST a NULL), unlike a numeric CAST. */
int sl_dec_parse(const char *text, size_t len, sl_dec_type t, sl_dec *out);

/* v of scale s as Flink prints a DECIMAL (CAST to STRING, print, the SQL
 * client): plain notation, exactly s fraction digits ("0.00", "-0.50",
 * "12"). Returns the length (at most SL_DEC_TEXT_MAX); writes a NUL when
 * cap > length, nothing past cap. */
int sl_dec_format(char *dst, size_t cap, sl_dec v, int s);

/* An integer into DECIMAL(p, s); SL_DEC_OVERFLOW when it has more than
 * p - s digits. */
int sl_dec_from_i64(int64_t v, sl_dec_type t, sl_dec *out);

/* v of scale s to an integer, the fraction cut off (toward zero), as
 * CAST(d AS BIGINT). Beyond int64 it is SL_DEC_OVERFLOW and *out gets the
 * low 64 bits of the integer, which is what Flink's CAST returns then (it
 * narrows further to INT/SMALLINT/TINYINT the same way: (int32_t)*out). */
int sl_dec_to_i64(sl_dec v, int s, int64_t *out);

/* A DOUBLE into DECIMAL(p, s) as Flink's CAST: the double's shortest
 * decimal text that reads back to it (so 1.005 is 1.005, not
 * 1.00499999999999989...), rounded HALF_UP. SL_DEC_NOT_FINITE for NaN and
 * infinities, SL_DEC_OVERFLOW past p digits. */
int sl_dec_from_double(double x, sl_dec_type t, sl_dec *out);

/* A FLOAT the same way, from the float's own shortest text (0.1f is 0.1). */
int sl_dec_from_float(float x, sl_dec_type t, sl_dec *out);

/* v of type t as a DOUBLE, as Flink's CAST: for p <= 18 the unscaled value
 * as a double divided by 10^s as a double; wider, the nearest double to the
 * exact value. */
double sl_dec_to_double(sl_dec v, sl_dec_type t);

/* v of scale `from` into type t: HALF_UP when t.s is smaller, exact when
 * larger; SL_DEC_OVERFLOW past t.p digits. CAST between DECIMAL types. */
int sl_dec_rescale(sl_dec v, int from, sl_dec_type t, sl_dec *out);

/* Compare a (scale sa) with b (scale sb) exactly: <0, 0, >0. */
int sl_dec_cmp(sl_dec a, int sa, sl_dec b, int sb);

/* a (scale sa) op b (scale sb) into type t (see the sl_dec_type_* rules):
 * the exact result rounded HALF_UP to t.s, SL_DEC_OVERFLOW past t.p
 * digits. div and mod give SL_DEC_DIV_ZERO for b = 0. mod's sign is the
 * dividend's (a - b * trunc(a / b)). */
int sl_dec_add(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out);
int sl_dec_sub(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out);
int sl_dec_mul(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out);
int sl_dec_div(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out);
int sl_dec_mod(sl_dec a, int sa, sl_dec b, int sb, sl_dec_type t, sl_dec *out);

/* -v and |v|, same type (cannot overflow). */
sl_dec sl_dec_neg(sl_dec v);
sl_dec sl_dec_abs(sl_dec v);

/* FLOOR / CEIL of v (scale s) into type t (t.s = 0: sl_dec_type_floor). */
int sl_dec_floor(sl_dec v, int s, sl_dec_type t, sl_dec *out);
int sl_dec_ceil(sl_dec v, int s, sl_dec_type t, sl_dec *out);

/* ROUND(v, n) HALF_UP / TRUNCATE(v, n) toward zero at 10^-n (n may be
 * negative: ROUND(15, -1) = 20) into type t (sl_dec_type_round). */
int sl_dec_round(sl_dec v, int s, int n, sl_dec_type t, sl_dec *out);
int sl_dec_truncate(sl_dec v, int s, int n, sl_dec_type t, sl_dec *out);

/* ---- result types (Flink's derivation) ---- */

/* An exact integer type as a DECIMAL: TINYINT (3, 0), SMALLINT (5, 0),
 * INT (10, 0), BIGINT (19, 0), by its width in bytes 1, 2, 4, 8. */
sl_dec_type sl_dec_type_of_int(int bytes);

/* a + b and a - b: scale max(s1, s2), precision max(p1 - s1, p2 - s2) +
 * scale + 1. */
sl_dec_type sl_dec_type_add(sl_dec_type a, sl_dec_type b);
/* a * b: scale s1 + s2, precision p1 + p2 + 1. */
sl_dec_type sl_dec_type_mul(sl_dec_type a, sl_dec_type b);
/* a / b: scale max(6, s1 + p2 + 1), precision p1 - s1 + s2 + scale. */
sl_dec_type sl_dec_type_div(sl_dec_type a, sl_dec_type b);
/* a % b: scale max(s1, s2), precision min(p1 - s1, p2 - s2) + scale. */
sl_dec_type sl_dec_type_mod(sl_dec_type a, sl_dec_type b);
/* SUM: (38, s). AVG: (38, max(s, 6)). MIN and MAX keep the type. AVG's
 * value is the SUM divided by the count: sl_dec_div(sum, s, count, 0,
 * sl_dec_type_avg(t), &avg), the count as an unscaled value (Flink:
 * AVG of 1.10, 2.25, 3.00 in DECIMAL(10, 2) is 2.116667). */
sl_dec_type sl_dec_type_sum(sl_dec_type a);
sl_dec_type sl_dec_type_avg(sl_dec_type a);
/* ROUND(a, n) and TRUNCATE(a, n): a itself when n >= s; (min(38, p - s +
 * 1), 0) when n < 0; else (p - s + n + 1, n). */
sl_dec_type sl_dec_type_round(sl_dec_type a, int n);
/* FLOOR(a), CEIL(a): (p, 0). */
sl_dec_type sl_dec_type_floor(sl_dec_type a);
/* A precision/scale pair past 38 brought to 38 digits (the rule every
 * derivation above ends with). */
sl_dec_type sl_dec_type_adjust(int p, int s);

#endif
