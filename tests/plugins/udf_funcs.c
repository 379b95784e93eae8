/*
 * udf_funcs.c -- user-defined SQL functions for the tests (tests/integration/
 * test_sql_udf.py): scalar and table functions declared with core/udf.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udf.h"

/* mix(x) = x * 31 + 7, wrapping like BIGINT */
SL_UDF_SCALAR(mix, "BIGINT", "BIGINT", SL_UDF_DEFAULT)
int mix(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx;
    (void)nargs;
    out->v.i = (int64_t)((uint64_t)args[0].v.i * 31u + 7u);
    return 0;
}

/* tag(s, n) = s || '#' || n */
SL_UDF_SCALAR(tag, "STRING", "STRING, BIGINT", SL_UDF_DEFAULT)
int tag(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)nargs;
    char *buf = ctx->alloc(ctx, args[0].v.s.len + 24);
    if (!buf) {
        snprintf(ctx->err, sizeof ctx->err, "out of record memory");
        return 1;
    }
    memcpy(buf, args[0].v.s.p, args[0].v.s.len);
    int n = snprintf(buf + args[0].v.s.len, 24, "#%lld", (long long)args[1].v.i);
    out->v.s.p = buf;
    out->v.s.len = args[0].v.s.len + (uint32_t)n;
    return 0;
}

/* nvl_neg(x): x, or -1 for NULL (called on NULL input) */
SL_UDF_SCALAR(nvl_neg, "BIGINT", "BIGINT", "deterministic nullable")
int nvl_neg(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx;
    (void)nargs;
    out->v.i = args[0].isnull ? -1 : args[0].v.i;
    return 0;
}

/* half(x) = x / 2.0 (a DOUBLE argument: BIGINT columns widen) */
SL_UDF_SCALAR(half, "DOUBLE", "DOUBLE", SL_UDF_DEFAULT)
int half(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx;
    (void)nargs;
    out->v.d = args[0].v.d / 2.0;
    return 0;
}

/* unlucky(x) = x, failing on 13 */
SL_UDF_SCALAR(unlucky, "BIGINT", "BIGINT", SL_UDF_DEFAULT)
int unlucky(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)nargs;
    if (args[0].v.i == 13) {
        snprintf(ctx->err, sizeof ctx->err, "%lld is unlucky", (long long)args[0].v.i);
        return 1;
    }
    out->v.i = args[0].v.i;
    return 0;
}

/* split_words(s): one row per space-separated word and its 1-based position */
SL_UDF_TABLE(split_words, "word STRING, pos INT", "STRING", SL_UDF_DEFAULT)
int split_words(sl_udf_ctx *ctx, const sl_value *args, int nargs)
{
    (void)nargs;
    const char *p = args[0].v.s.p, *end = p + args[0].v.s.len;
    int pos = 0;
    while (p < end) {
        while (p < end && *p == ' ') p++;
        const char *w = p;
        while (p < end && *p != ' ') p++;
        if (p == w) break;
        sl_value row[2] = {{.v.s = {w, (uint32_t)(p - w)}}, {.v.i = ++pos}};
        if (ctx->emit(ctx, row)) return 1;
    }
    return 0;
}

/* upto(n): the rows 0 .. n-1 (none for n <= 0) */
SL_UDF_TABLE(upto, "i BIGINT", "BIGINT", SL_UDF_DEFAULT)
int upto(sl_udf_ctx *ctx, const sl_value *args, int nargs)
{
    (void)nargs;
    for (int64_t i = 0; i < args[0].v.i; i++) {
        sl_value row[1] = {{.v.i = i}};
        if (ctx->emit(ctx, row)) return 1;
    }
    return 0;
}

/* crash(x, how) = x, but at x = 13 it crashes as `how` says: 'segv' (a
 * write to address 13), 'fpe' (an integer division by zero), 'abort'
 * (abort()), 'stack' (unbounded recursion) -- for the guard of
 * core/udf_guard.h */
static volatile int64_t zero;
static volatile uintptr_t bad_addr = 13;          /* volatile: the compiler cannot see it */
static volatile int64_t deep_limit = INT64_MAX;

static int64_t deep(volatile char *p, int64_t n)
{
    volatile char buf[512];
    buf[0] = (char)n;
    if (n >= deep_limit) return p ? p[0] : 0;
    return deep(buf, n + 1) + (p ? p[0] : 0);
}

SL_UDF_SCALAR(crash, "BIGINT", "BIGINT, STRING", SL_UDF_DEFAULT)
/* undefined behaviour on purpose: not caught by UBSan before it faults */
__attribute__((no_sanitize("undefined"))) int crash(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx;
    (void)nargs;
    int64_t x = args[0].v.i;
    const char *how = args[1].v.s.p;
    size_t hl = args[1].v.s.len;
    out->v.i = x;
    if (x != 13) return 0;
    if (hl == 4 && !memcmp(how, "segv", 4)) *(volatile int *)bad_addr = 1;
    else if (hl == 3 && !memcmp(how, "fpe", 3)) out->v.i = x / zero;
    else if (hl == 5 && !memcmp(how, "abort", 5)) abort();
    else if (hl == 5 && !memcmp(how, "stack", 5)) out->v.i = deep(NULL, 0);
    return 0;
}

/* crash_rows(x): the row x, then (at x = 13) a write to address 13 */
SL_UDF_TABLE(crash_rows, "v BIGINT", "BIGINT", SL_UDF_DEFAULT)
/* undefined behaviour on purpose: not caught by UBSan before it faults */
__attribute__((no_sanitize("undefined"))) int crash_rows(sl_udf_ctx *ctx, const sl_value *args, int nargs)
{
    (void)nargs;
    sl_value row[1] = {{.v.i = args[0].v.i}};
    if (ctx->emit(ctx, row)) return 1;
    if (args[0].v.i == 13) *(volatile int *)bad_addr = 1;
    return 0;
}
