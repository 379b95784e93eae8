/*
 * udf_aggs.c -- user-defined aggregate functions for
 * tests/integration/test_sql_udf_agg.py (core/udf.h):
 *
 *   wsum(v BIGINT, w BIGINT)  BIGINT  sum of v * w, NULL before the first row;
 *                                     retract and merge
 *   top2(v BIGINT)            BIGINT  the second-largest value seen (NULL below
 *                                     two values); merge, no retract
 *   fussy(v BIGINT)           BIGINT  a count that fails on 13; neither
 *   badsize(v BIGINT)         BIGINT  declares 8 accumulator bytes, its table 16
 */
#include <stdint.h>
#include <string.h>
#include <stdio.h>

#include "udf.h"

/* ---- wsum ------------------------------------------------------------------ */

typedef struct { int64_t sum, n; } wsum_acc;

static int wsum_create(sl_udf_ctx *ctx, void *acc)
{
    (void)ctx;
    memset(acc, 0, sizeof(wsum_acc));
    return 0;
}

static int wsum_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx, (void)nargs;
    wsum_acc *a = acc;
    a->sum += args[0].v.i * args[1].v.i;
    a->n++;
    return 0;
}

static int wsum_sub(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx, (void)nargs;
    wsum_acc *a = acc;
    a->sum -= args[0].v.i * args[1].v.i;
    a->n--;
    return 0;
}

static int wsum_merge(sl_udf_ctx *ctx, void *acc, const void *other)
{
    (void)ctx;
    wsum_acc *a = acc;
    const wsum_acc *b = other;
    a->sum += b->sum;
    a->n += b->n;
    return 0;
}

static int wsum_value(sl_udf_ctx *ctx, const void *acc, sl_value *out)
{
    (void)ctx;
    const wsum_acc *a = acc;
    out->isnull = a->n == 0;
    out->v.i = a->sum;
    return 0;
}

SL_UDF_AGGREGATE(wsum, "BIGINT", "BIGINT, BIGINT", 16, "deterministic strict retract merge")
const sl_udf_aggregate wsum = {SL_UDF_ABI_VERSION, sizeof(wsum_acc), wsum_create, wsum_add,
                               wsum_sub, wsum_merge, wsum_value};

/* ---- top2 ------------------------------------------------------------------ */

typedef struct { int64_t n, hi, lo; } top2_acc;

static int top2_create(sl_udf_ctx *ctx, void *acc)
{
    (void)ctx;
    memset(acc, 0, sizeof(top2_acc));
    return 0;
}

static void top2_put(top2_acc *a, int64_t v)
{
    if (a->n == 0) {
        a->hi = v;
        a->n = 1;
    } else if (v > a->hi) {
        a->lo = a->hi;
        a->hi = v;
        a->n = 2;
    } else if (a->n == 1 || v > a->lo) {
        a->lo = v;
        a->n = 2;
    }
}

static int top2_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx, (void)nargs;
    top2_put(acc, args[0].v.i);
    return 0;
}

static int top2_merge(sl_udf_ctx *ctx, void *acc, const void *other)
{
    (void)ctx;
    const top2_acc *b = other;
    if (b->n > 0) top2_put(acc, b->hi);
    if (b->n > 1) top2_put(acc, b->lo);
    return 0;
}

static int top2_value(sl_udf_ctx *ctx, const void *acc, sl_value *out)
{
    (void)ctx;
    const top2_acc *a = acc;
    out->isnull = a->n < 2;
    out->v.i = a->lo;
    return 0;
}

SL_UDF_AGGREGATE(top2, "BIGINT", "BIGINT", 24, "deterministic strict merge")
const sl_udf_aggregate top2 = {SL_UDF_ABI_VERSION, sizeof(top2_acc), top2_create, top2_add, NULL,
                               top2_merge, top2_value};

/* ---- fussy ----------------------------------------------------------------- */

static int fussy_create(sl_udf_ctx *ctx, void *acc)
{
    (void)ctx;
    memset(acc, 0, 8);
    return 0;
}

static int fussy_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)nargs;
    if (args[0].v.i == 13) {
        snprintf(ctx->err, sizeof ctx->err, "thirteen is unlucky");
        return 1;
    }
    ++*(int64_t *)acc;
    return 0;
}

static int fussy_value(sl_udf_ctx *ctx, const void *acc, sl_value *out)
{
    (void)ctx;
    out->v.i = *(const int64_t *)acc;
    return 0;
}

SL_UDF_AGGREGATE(fussy, "BIGINT", "BIGINT", 8, SL_UDF_DEFAULT)
const sl_udf_aggregate fussy = {SL_UDF_ABI_VERSION, 8, fussy_create, fussy_add, NULL, NULL,
                                fussy_value};

/* ---- badsize --------------------------------------------------------------- */

SL_UDF_AGGREGATE(badsize, "BIGINT", "BIGINT", 8, SL_UDF_DEFAULT)
const sl_udf_aggregate badsize = {SL_UDF_ABI_VERSION, 16, fussy_create, fussy_add, NULL, NULL,
                                  fussy_value};

/* ---- longest: a STRING result borrowed from the accumulator --------------- */

typedef struct {
    uint32_t len;
    char s[60];
} longest_acc;

static int longest_create(sl_udf_ctx *ctx, void *acc)
{
    (void)ctx;
    memset(acc, 0, sizeof(longest_acc));
    return 0;
}

static int longest_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx;
    (void)nargs;
    longest_acc *a = acc;
    uint32_t n = args[0].v.s.len > sizeof a->s ? (uint32_t)sizeof a->s : args[0].v.s.len;
    /* the longer one; of equal lengths the smaller bytes (so the order of rows does not matter) */
    if (n > a->len || (n == a->len && memcmp(args[0].v.s.p, a->s, n) < 0)) {
        memcpy(a->s, args[0].v.s.p, n);
        a->len = n;
    }
    return 0;
}

static int longest_merge(sl_udf_ctx *ctx, void *acc, const void *other)
{
    const longest_acc *o = other;
    sl_value v = {.v.s = {o->s, o->len}};
    return longest_add(ctx, acc, &v, 1);
}

static int longest_value(sl_udf_ctx *ctx, const void *acc, sl_value *out)
{
    (void)ctx;
    const longest_acc *a = acc;
    out->isnull = a->len == 0;
    out->v.s.p = a->s; /* borrowed from the accumulator: the host copies it */
    out->v.s.len = a->len;
    return 0;
}

SL_UDF_AGGREGATE(longest, "STRING", "STRING", 64, "deterministic strict merge")
const sl_udf_aggregate longest = {SL_UDF_ABI_VERSION, sizeof(longest_acc), longest_create,
                                  longest_add, NULL, longest_merge, longest_value};

/* ---- tagsum: a STRING result from ctx->alloc ------------------------------ */

static int tagsum_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx;
    (void)nargs;
    *(int64_t *)acc += args[0].v.i;
    return 0;
}

static int tagsum_value(sl_udf_ctx *ctx, const void *acc, sl_value *out)
{
    char *buf = ctx->alloc(ctx, 32);
    if (!buf) {
        snprintf(ctx->err, sizeof ctx->err, "out of memory");
        return 1;
    }
    out->v.s.p = buf;
    out->v.s.len = (uint32_t)snprintf(buf, 32, "n=%lld", (long long)*(const int64_t *)acc);
    return 0;
}

SL_UDF_AGGREGATE(tagsum, "STRING", "BIGINT", 8, SL_UDF_DEFAULT)
const sl_udf_aggregate tagsum = {SL_UDF_ABI_VERSION, 8, fussy_create, tagsum_add, NULL, NULL,
                                 tagsum_value};

/* ---- crashsum: a write to address 13 when it accumulates 13 --------------- */

static volatile uintptr_t bad_addr = 13; /* volatile: the compiler cannot see it */

/* undefined behaviour on purpose: not caught by UBSan before it faults */
__attribute__((no_sanitize("undefined"))) static int crashsum_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx;
    (void)nargs;
    if (args[0].v.i == 13) *(volatile int *)bad_addr = 1;
    *(int64_t *)acc += args[0].v.i;
    return 0;
}

SL_UDF_AGGREGATE(crashsum, "BIGINT", "BIGINT", 8, SL_UDF_DEFAULT)
const sl_udf_aggregate crashsum = {SL_UDF_ABI_VERSION, 8, fussy_create, crashsum_add, NULL, NULL,
                                   fussy_value};
