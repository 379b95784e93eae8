/*
 * Layer lib/ (docs/ARCHITECTURE.md, "Layers"): the bottom layer. What any C
 * program of Sluice needs and nothing of streams: allocation that aborts
 * only on out-of-memory, the SL_OK/SL_ERR error contract with a caller's
 * buffer, logging, byte order, the byte buffer (buf.h), the typed message
 * queue (queue.h), JSON escaping, base64, time text and edit distance
 * (text.h), durations, the calendar, exact DECIMAL (decimal.h), date and
 * time text and time zones (temporal.h), listening sockets, the HTTP server
 * set-up (http_server.h) and replies. Calls nothing of Sluice above it.
 *
 * sl.h -- the few definitions every Sluice file shares.
 *
 * Status codes: a function that can fail returns int: SL_OK on success,
 * SL_ERR on failure (with an explanation written into a caller-supplied
 * `char *err, size_t errlen`, which may be NULL), SL_AGAIN when it would
 * block (backpressure, no input yet), SL_DONE at the end of input.
 *
 * Control-plane allocations go through sl_malloc() and friends, which log and
 * abort on out-of-memory: there is nothing useful a daemon can do then.
 * Data-plane memory comes from bounded pools instead (see buffer.h).
 */
#ifndef SL_H
#define SL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define SL_OK 0
#define SL_ERR (-1)
#define SL_AGAIN (-2)
#define SL_DONE (-3)

#define SL_VERSION "0.1.0"

#define SL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SL_UNUSED(x) ((void)(x))

#if defined(__GNUC__)
#define SL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SL_LIKELY(x) __builtin_expect(!!(x), 1)
#define SL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SL_PRINTF(f, a)
#define SL_LIKELY(x) (x)
#define SL_UNLIKELY(x) (x)
#endif

/* Always-on invariant check: a breach would corrupt data, so log and abort.
 * Never use it on outside input. */
#define SL_ASSERT(cond)                                                        \
    do {                                                                       \
        if (SL_UNLIKELY(!(cond)))                                              \
            sl_assert_fail(#cond, __FILE__, __LINE__);                         \
    } while (0)

void sl_assert_fail(const char *cond, const char *file, int line);

void *sl_malloc(size_t n);
void *sl_calloc(size_t nmemb, size_t size);
void *sl_realloc(void *p, size_t n);
char *sl_strdup(const char *s);
char *sl_strndup(const char *s, size_t n);
char *sl_sprintf(const char *fmt, ...) SL_PRINTF(1, 2); /* caller frees */

/* Write a message into err (if err != NULL) and return SL_ERR. */
int sl_seterr(char *err, size_t errlen, const char *fmt, ...) SL_PRINTF(3, 4);

/* Milliseconds / nanoseconds on the monotonic clock, and wall-clock ms. */
int64_t sl_now_ms(void);
int64_t sl_mono_ms(void);
/* Sleep ms milliseconds whole: a signal handler that runs meanwhile (the
 * stack sampler's) does not cut it short, as it would sleep(3) or a bare
 * nanosleep(2). Any thread; ms <= 0 returns at once. */
void sl_sleep_ms(int64_t ms);
int64_t sl_mono_ns(void);

/* Random 32 lowercase hex digits into out[33] (ids for jobs, vertices). */
void sl_random_hex(char *out, size_t nhex);

#endif
