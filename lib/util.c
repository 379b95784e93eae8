/*
 * util.c -- allocation wrappers, error strings, clocks, ids and the logger.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/random.h>

#include "sl.h"
#include "log.h"
#include "text.h"

int sl_log_level = SL_LOG_INFO;

static void sl_oom(size_t n)
{
    char buf[96];
    int len = snprintf(buf, sizeof buf, "out of memory allocating %zu bytes\n", n);
    if (len > 0 && write(2, buf, (size_t)len) < 0) { /* nothing to do */ }
    abort();
}

void *sl_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) sl_oom(n);
    return p;
}

void *sl_calloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p) sl_oom(nmemb * size);
    return p;
}

void *sl_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) sl_oom(n);
    return q;
}

char *sl_strdup(const char *s)
{
    size_t n = strlen(s);
    char *d = sl_malloc(n + 1);
    memcpy(d, s, n + 1);
    return d;
}

char *sl_strndup(const char *s, size_t n)
{
    char *d = sl_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *sl_sprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) sl_oom(0);
    return s;
}

int sl_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return SL_ERR;
}

void sl_assert_fail(const char *cond, const char *file, int line)
{
    sl_log_write(SL_LOG_ERROR, "assert", "%s:%d: assertion failed: %s", file, line, cond);
    abort();
}

int64_t sl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sl_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t sl_mono_ms(void) { return sl_mono_ns() / 1000000; }

void sl_sleep_ms(int64_t ms)
{
    if (ms <= 0) return;
    int64_t at = sl_mono_ns() + ms * 1000000; /* an absolute end: EINTR resumes toward it */
    struct timespec ts = {(time_t)(at / 1000000000), (long)(at % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void sl_random_hex(char *out, size_t nhex)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[64];
    size_t nbytes = (nhex + 1) / 2;
    if (nbytes > sizeof raw) nbytes = sizeof raw;
    if (getrandom(raw, nbytes, 0) != (ssize_t)nbytes) {
        /* getrandom cannot fail for small requests once the pool is seeded;
         * fall back to the clock so ids are at least unique per process. */
        uint64_t x = (uint64_t)sl_mono_ns() ^ ((uint64_t)getpid() << 32);
        for (size_t i = 0; i < nbytes; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            raw[i] = (unsigned char)x;
        }
    }
    for (size_t i = 0; i < nhex; i++)
        out[i] = hex[(raw[i / 2] >> ((i & 1) ? 0 : 4)) & 15];
    out[nhex] = '\0';
}

static const char *level_names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};

void sl_log_write(int level, const char *tag, const char *fmt, ...)
{
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    /* local time: the wall clock shifted by the zone's offset, then as UTC */
    int64_t local_ms = ((int64_t)ts.tv_sec + tm.tm_gmtoff) * 1000 + ts.tv_nsec / 1000000;
    int n = sl_ts_text(line, sizeof line, local_ms, SL_TS_SPACE);
    n += snprintf(line + n, sizeof line - (size_t)n, " %s [%s] ",
                  level_names[level < 0 ? 0 : level > 3 ? 3 : level], tag);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : SL_MIN((size_t)m, sizeof line - (size_t)n - 2));
    line[len++] = '\n';
    if (write(2, line, len) < 0) { /* stderr gone: nowhere to report */ }
}

int sl_log_parse_level(const char *s)
{
    if (!strcasecmp(s, "debug")) return SL_LOG_DEBUG;
    if (!strcasecmp(s, "info")) return SL_LOG_INFO;
    if (!strcasecmp(s, "warn") || !strcasecmp(s, "warning")) return SL_LOG_WARN;
    if (!strcasecmp(s, "error")) return SL_LOG_ERROR;
    return -1;
}
