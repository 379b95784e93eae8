/*
 * log.h -- the one logger: levels, timestamps and a component tag.
 *
 * Lines look like `2026-11-29 11:07:27.123 INFO  [jm:rpc] TaskManager registered`.
 * The level is checked before the arguments are formatted, so a disabled
 * DEBUG line costs one comparison. Output goes to stderr, one write(2) per
 * line so lines from several threads never interleave.
 */
#ifndef SL_LOG_H
#define SL_LOG_H

#include "sl.h"

enum { SL_LOG_DEBUG = 0, SL_LOG_INFO, SL_LOG_WARN, SL_LOG_ERROR };

extern int sl_log_level;

void sl_log_write(int level, const char *tag, const char *fmt, ...) SL_PRINTF(3, 4);
int sl_log_parse_level(const char *s); /* -1 if unknown */

#define SL_LOG(level, tag, ...)                                                \
    do {                                                                       \
        if ((level) >= sl_log_level)                                           \
            sl_log_write((level), (tag), __VA_ARGS__);                         \
    } while (0)

#define sl_debug(tag, ...) SL_LOG(SL_LOG_DEBUG, tag, __VA_ARGS__)
#define sl_info(tag, ...) SL_LOG(SL_LOG_INFO, tag, __VA_ARGS__)
#define sl_warn(tag, ...) SL_LOG(SL_LOG_WARN, tag, __VA_ARGS__)
#define sl_error(tag, ...) SL_LOG(SL_LOG_ERROR, tag, __VA_ARGS__)

#endif
