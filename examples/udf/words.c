/*
 * words.c -- an example of user-defined SQL functions in C (docs/UDF.md),
 * used by examples/udf/words.sql. Build:
 *
 *   cc -O2 -fPIC -shared -Icore -Ilib -o /tmp/words.so examples/udf/words.c
 */
#include <stdio.h>
#include <string.h>

#include "udf.h"

/* shout(s): s in upper case with a '!' */
SL_UDF_SCALAR(shout, "STRING", "STRING", SL_UDF_DEFAULT)
int shout(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)nargs;
    uint32_t n = args[0].v.s.len;
    char *buf = ctx->alloc(ctx, (size_t)n + 1);
    if (!buf) {
        snprintf(ctx->err, sizeof ctx->err, "out of record memory");
        return 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        char c = args[0].v.s.p[i];
        buf[i] = c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
    }
    buf[n] = '!';
    out->v.s.p = buf;
    out->v.s.len = n + 1;
    return 0;
}

/* words(s): one row (word, position) per space-separated word of s */
SL_UDF_TABLE(words, "word STRING, pos INT", "STRING", SL_UDF_DEFAULT)
int words(sl_udf_ctx *ctx, const sl_value *args, int nargs)
{
    (void)nargs;
    const char *p = args[0].v.s.p, *end = p + args[0].v.s.len;
    int pos = 0;
    for (;;) {
        while (p < end && *p == ' ') p++;
        const char *w = p;
        while (p < end && *p != ' ') p++;
        if (p == w) return 0;
        sl_value row[2] = {{.v.s = {w, (uint32_t)(p - w)}}, {.v.i = ++pos}};
        if (ctx->emit(ctx, row)) return 1;
    }
}

/* An aggregate: the mean length of the strings seen (retract and merge, so it
 * works over updating input and in every window). Its accumulator is two
 * integers -- keyed state, so no pointers. */
typedef struct { int64_t chars, n; } mean_len_acc;

static int mean_len_create(sl_udf_ctx *ctx, void *acc)
{
    (void)ctx;
    memset(acc, 0, sizeof(mean_len_acc));
    return 0;
}

static int mean_len_add(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx, (void)nargs;
    mean_len_acc *a = acc;
    a->chars += args[0].v.s.len;
    a->n++;
    return 0;
}

static int mean_len_sub(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs)
{
    (void)ctx, (void)nargs;
    mean_len_acc *a = acc;
    a->chars -= args[0].v.s.len;
    a->n--;
    return 0;
}

static int mean_len_merge(sl_udf_ctx *ctx, void *acc, const void *other)
{
    (void)ctx;
    mean_len_acc *a = acc;
    const mean_len_acc *b = other;
    a->chars += b->chars;
    a->n += b->n;
    return 0;
}

static int mean_len_value(sl_udf_ctx *ctx, const void *acc, sl_value *out)
{
    (void)ctx;
    const mean_len_acc *a = acc;
    out->isnull = a->n == 0;
    out->v.d = a->n ? (double)a->chars / (double)a->n : 0;
    return 0;
}

SL_UDF_AGGREGATE(mean_len, "DOUBLE", "STRING", 16, "deterministic strict retract merge")
const sl_udf_aggregate mean_len = {SL_UDF_ABI_VERSION, sizeof(mean_len_acc), mean_len_create,
                                   mean_len_add, mean_len_sub, mean_len_merge, mean_len_value};
