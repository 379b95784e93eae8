/*
 * text.h -- small text helpers every layer shares: the edit distance behind
 * "did you mean" hints, and the one timestamp formatter.
 *
 * The edit distance is Levenshtein's (insert, delete, substitute, each 1),
 * compared case-insensitively in ASCII, as both of its callers (option keys
 * in core/config.c, tables, columns, options and connectors in sql/) want
 * their hints. It uses one row on the stack: no allocation.
 *
 * Timestamps are milliseconds since the epoch, in the proleptic Gregorian
 * calendar (lib/calendar.h), written in one of the forms Sluice shows them
 * in; every form is total over int64 (years past 9999 get a '+', years
 * before 0 a '-', as java.time writes them) and allocates nothing.
 */
#ifndef SL_TEXT_H
#define SL_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The longest string sl_edit_distance measures; a longer one is "far". */
#define SL_EDIT_MAX_LEN 200
/* What sl_edit_distance returns for a string longer than SL_EDIT_MAX_LEN. */
#define SL_EDIT_FAR 0x7fffffff

/* Levenshtein distance between a and b, ASCII case-insensitive (so "Kitten"
 * and "kitten" are 0 apart); SL_EDIT_FAR when either is longer than
 * SL_EDIT_MAX_LEN. Any thread. */
int sl_edit_distance(const char *a, const char *b);

/* The forms of timestamp text (2026-08-19 15:00:10.000 in each): */
typedef enum sl_ts_style {
    SL_TS_ISO,   /* 2026-08-19T15:00:10.000  ISO-8601 without zone, always ms */
    SL_TS_SPACE, /* 2026-08-19 15:00:10.000  the SQL client's form, log lines */
    SL_TS_SQL,   /* 2026-08-19 15:00:10      Flink's json/csv formats: the
                                             fraction without trailing zeros
                                             (.020 -> .02, .000 -> none) */
    SL_TS_JAVA,  /* 2026-08-19T15:00:10      java.time.LocalDateTime.toString:
                                             seconds only when they or the
                                             ms are not 0 (15:00), ms as 3
                                             digits when not 0 */
} sl_ts_style;

/* ms since the epoch (UTC) as text of the given style into dst (NUL
 * terminated when cap > 0). Returns what snprintf returns: the length of the
 * whole text, which is >= cap when it was cut. At most 40 characters. */
int sl_ts_text(char *dst, size_t cap, int64_t ms, sl_ts_style style);

/* The ISO form, "YYYY-MM-DDTHH:MM:SS.mmm" (SL_TS_ISO). */
static inline int sl_ts_format(char *dst, size_t cap, int64_t ms)
{
    return sl_ts_text(dst, cap, ms, SL_TS_ISO);
}

#endif
