/*
 * buf.c -- the out-of-line half of the growable byte buffer (buf.h):
 * growth, printf-style appends, handing the text over and freeing.
 *
 * Growth doubles from 64 bytes until len + need + 1 fits, so n appends cost
 * O(log n) reallocations and a buffer reused record after record stops
 * allocating once warm.
 */
#include <stdio.h>
#include <stdlib.h>

#include "buf.h"

void sl_buf_grow(sl_buf *b, size_t need)
{
    SL_ASSERT(b->len <= b->cap);
    SL_ASSERT(need < SIZE_MAX - b->len - 1);
    size_t want = b->len + need + 1, c = b->cap ? b->cap : 64;
    while (c < want) c = c > SIZE_MAX / 2 ? want : c * 2;
    b->p = sl_realloc(b->p, c);
    b->cap = c;
}

void sl_buf_vfmt(sl_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    sl_buf_reserve(b, 64);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    if (n < 0) { /* an encoding error: nothing appended */
        b->p[b->len] = '\0';
        va_end(ap2);
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        sl_buf_reserve(b, (size_t)n);
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap2);
    }
    va_end(ap2);
    b->len += (size_t)n;
}

void sl_buf_fmt(sl_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl_buf_vfmt(b, fmt, ap);
    va_end(ap);
}

char *sl_buf_take(sl_buf *b)
{
    char *s = b->p ? b->p : sl_strdup("");
    b->p = NULL;
    b->len = b->cap = 0;
    return s;
}

void sl_buf_free(sl_buf *b)
{
    if (!b) return;
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
