/*
 * buf.h -- the one growable byte buffer (sl_buf).
 *
 * A buffer is {p, len, cap}; {0} (or SL_BUF_INIT) is an empty buffer that
 * owns nothing. Appends grow it by doubling through sl_realloc, so a buffer
 * kept across records (and reset, not freed, between them) stops allocating
 * once it has grown to the largest record seen. The appends on per-record
 * paths are static inline here: when the room is there they cost a compare,
 * a copy and two stores; growing is out of line (buf.c).
 *
 * Every append also writes a NUL after the last byte (not counted in len),
 * so text built with these calls is a C string at p whenever p != NULL;
 * binary users simply ignore it. Code that writes at p + len itself takes
 * its room with sl_buf_room and ends with sl_buf_added, which keeps that.
 *
 * Invariant: 0 <= len <= cap; cap == 0 exactly when p == NULL; after any
 * sl_buf call other than sl_buf_take/sl_buf_free that left p != NULL,
 * len < cap and p[len] == '\0'.
 *
 * Ownership: the buffer owns p; sl_buf_take hands it to the caller.
 * A buffer belongs to one thread at a time.
 */
#ifndef SL_BUF_H
#define SL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sl.h"

typedef struct sl_buf {
    char *p;    /* the bytes, NUL after them; NULL until the first append */
    size_t len; /* bytes in use (the NUL not counted) */
    size_t cap; /* bytes allocated: 0 <= len <= cap */
} sl_buf;

#define SL_BUF_INIT {NULL, 0, 0}

/* The bytes as uint8_t, for binary users (NULL while empty and unallocated). */
static inline uint8_t *sl_buf_u8(const sl_buf *b) { return (uint8_t *)b->p; }

/* Out of line: make room for len + need + 1 bytes (doubling, from 64). */
void sl_buf_grow(sl_buf *b, size_t need);

/* Room for n more bytes (and the NUL) without another allocation. */
static inline void sl_buf_reserve(sl_buf *b, size_t n)
{
    if (SL_UNLIKELY(b->cap - b->len <= n)) sl_buf_grow(b, n);
}

/* Room for n bytes at the end: the caller writes up to n bytes at the
 * pointer returned and then calls sl_buf_added with how many it wrote.
 * The pointer is valid until the next call that may grow the buffer. */
static inline char *sl_buf_room(sl_buf *b, size_t n)
{
    sl_buf_reserve(b, n);
    return b->p + b->len;
}

/* n bytes written at sl_buf_room's pointer are now part of the buffer. */
static inline void sl_buf_added(sl_buf *b, size_t n)
{
    b->len += n;
    b->p[b->len] = '\0';
}

/* Append n bytes from p (p may be NULL when n == 0). */
static inline void sl_buf_put(sl_buf *b, const void *p, size_t n)
{
    sl_buf_reserve(b, n);
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static inline void sl_buf_putc(sl_buf *b, char c)
{
    if (SL_UNLIKELY(b->cap - b->len < 2)) sl_buf_grow(b, 1);
    b->p[b->len++] = c;
    b->p[b->len] = '\0';
}

/* Append the C string s (without its NUL). */
static inline void sl_buf_str(sl_buf *b, const char *s) { sl_buf_put(b, s, strlen(s)); }

/* Append printf-style text. */
void sl_buf_fmt(sl_buf *b, const char *fmt, ...) SL_PRINTF(2, 3);
void sl_buf_vfmt(sl_buf *b, const char *fmt, va_list ap) SL_PRINTF(2, 0);

/* The text, NUL-terminated, handed to the caller (who frees it; "" -- an
 * allocated empty string -- when nothing was appended); b is empty again
 * and owns nothing. */
char *sl_buf_take(sl_buf *b);

/* Empty the buffer, keeping its memory for the next appends. */
static inline void sl_buf_reset(sl_buf *b)
{
    b->len = 0;
    if (b->p) b->p[0] = '\0';
}

/* Keep the first n bytes (n <= len), dropping the rest; keeps the memory. */
static inline void sl_buf_truncate(sl_buf *b, size_t n)
{
    SL_ASSERT(n <= b->len);
    b->len = n;
    if (b->p) b->p[n] = '\0';
}

/* Replace the contents with n bytes from p (keeps the memory). */
static inline void sl_buf_set(sl_buf *b, const void *p, size_t n)
{
    b->len = 0;
    sl_buf_put(b, p, n);
}

/* Release the memory; b is empty and may be used again. NULL is a no-op. */
void sl_buf_free(sl_buf *b);

#endif
