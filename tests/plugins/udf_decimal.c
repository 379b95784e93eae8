/*
 * udf_decimal.c -- C functions over DECIMAL(p, s) for tests/integration/
 * test_sql_udf.py (core/udf.h: a DECIMAL is its unscaled value in v.dec):
 *
 *   fee(a DECIMAL(10, 2), r DECIMAL(5, 4))  DECIMAL(12, 2)   a * (1 + r), HALF_UP
 *   flip(x DECIMAL(38, 18))                 DECIMAL(38, 18)  -x
 *   shrink(x DECIMAL(10, 2))                DECIMAL(5, 2)    x as it is: more than
 *                                                            5 digits fails the task
 *   parts(a DECIMAL(10, 2), k INT)          TABLE(part DECIMAL(10, 2), idx INT)
 *                                           k rows: a / k truncated, the last
 *                                           taking the rest (none for k <= 0)
 *   dsum(a DECIMAL(10, 2))                  DECIMAL(38, 2)   the exact sum; retract, merge
 */
#include <stdint.h>
#include <string.h>

#include "udf.h"

typedef __int128 i128;

static i128 get(const sl_value *v)
{
    return (i128)(((unsigned __int128)(uint64_t)v->v.dec.hi << 64) | v->v.dec.lo);
}

static void put(sl_value *v, i128 x)
{
    v->v.dec.lo = (uint64_t)x;
    v->v.dec.hi = (int64_t)(x >> 64);
}

/* x / d rounded HALF_UP (away from zero at .5), d > 0 */
static i128 div_half_up(i128 x, i128 d)
{
    i128 q = x / d, r = x % d;
    if ((r < 0 ? -r : r) * 2 >= d) q += x < 0 ? -1 : 1;
    return q;
}

SL_UDF_SCALAR(fee, "DECIMAL(12, 2)", "DECIMAL(10, 2), DECIMAL(5, 4)", SL_UDF_DEFAULT)
int fee(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx, (void)nargs;
    /* scale 2 times scale 4 is scale 6: back to 2 */
    put(out, div_half_up(get(&args[0]) * (10000 + get(&args[1])), 10000));
    return 0;
}

SL_UDF_SCALAR(flip, "DECIMAL(38, 18)", "DECIMAL(38, 18)", SL_UDF_DEFAULT)
int flip(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx, (void)nargs;
    put(out, -get(&args[0]));
    return 0;
}

SL_UDF_SCALAR(shrink, "DECIMAL(5, 2)", "DECIMAL(10, 2)", SL_UDF_DEFAULT)
int shrink(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx, (void)nargs;
    put(out, get(&args[0]));
    return 0;
}

SL_UDF_TABLE(parts, "part DECIMAL(10, 2), idx INT", "DECIMAL(10, 2), INT", SL_UDF_DEFAULT)
int parts(sl_udf_ctx *ctx, const sl_value *args, int nargs)
{
    (void)nargs;
    i128 a = get(&args[0]);
    int64_t k = args[1].v.i;
    if (k <= 0) return 0;
    i128 each = a / k;
    for (int64_t i = 0; i < k; i++) {
        sl_value row[2] = {{.v.i = 0}, {.v.i = i}};
        put(&row[0], i + 1 < k ? each : a - each * (k - 1));
        if (ctx->emit(ctx, row)) return 1;
    }
    return 0;
}

/* ---- dsum ------------------------------------------------------------------ */

typedef struct { uint64_t lo; int64_t hi; int64_t n; } dsum_acc;

static i128 acc_get(const dsum_acc *a)
{
    return (i128)(((unsigned __int128)(uint64_t)a->hi << 64) | a->lo);
}

static void acc_put(dsum_acc *a, i128 x)
{
    a->lo = (uint64_t)x;
    a->hi = (int64_t)(x >> 64);
}

static int dsum_create(sl_udf_ctx *ctx, void *acc)
{
    (void)ctx;
    memset(acc, 0, sizeof(dsum_acc));
    return 0;
}

static int dsum_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx, (void)nargs;
    dsum_acc *a = acc;
    acc_put(a, acc_get(a) + get(&args[0]));
    a->n++;
    return 0;
}

static int dsum_sub(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx, (void)nargs;
    dsum_acc *a = acc;
    acc_put(a, acc_get(a) - get(&args[0]));
    a->n--;
    return 0;
}

static int dsum_merge(sl_udf_ctx *ctx, void *acc, const void *other)
{
    (void)ctx;
    dsum_acc *a = acc;
    const dsum_acc *b = other;
    acc_put(a, acc_get(a) + acc_get(b));
    a->n += b->n;
    return 0;
}

static int dsum_value(sl_udf_ctx *ctx, const void *acc, sl_value *out)
{
    (void)ctx;
    const dsum_acc *a = acc;
    out->isnull = a->n == 0;
    put(out, acc_get(a));
    return 0;
}

SL_UDF_AGGREGATE(dsum, "DECIMAL(38, 2)", "DECIMAL(10, 2)", 24, "deterministic strict retract merge")
const sl_udf_aggregate dsum = {SL_UDF_ABI_VERSION, sizeof(dsum_acc), dsum_create, dsum_add,
                               dsum_sub, dsum_merge, dsum_value};
