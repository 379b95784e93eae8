/*
 * duration.h -- the one duration parser: "N [unit]" with Flink's time-unit
 * spellings (ms, s, min, h, d and their long forms, any case), into
 * milliseconds. It serves the configuration's duration type
 * (sl_parse_duration_ms), the interval literals of SQL and of operator
 * options (sl_interval_parse, which adds INTERVAL 'N' UNIT) and through
 * them every vertex option; each caller words its own messages from the
 * result code and keeps its own syntax on top (a sign, INTERVAL).
 */
#ifndef SL_DURATION_H
#define SL_DURATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SL_DUR_OK = 0,
    SL_DUR_FORM,     /* not a number followed by a unit */
    SL_DUR_UNIT,     /* an unknown unit */
    SL_DUR_NEGATIVE, /* a negative number */
    SL_DUR_RANGE     /* more milliseconds than an int64 holds */
} sl_dur_rc;

/* The milliseconds of time unit u[0..n) ("s", "Minutes", ...), or false. */
bool sl_duration_unit(const char *u, size_t n, int64_t *ms);

/* num[0..num_len) -- an optionally signed decimal integer -- times unit
 * unit[0..unit_len) (empty: milliseconds) into *ms. */
sl_dur_rc sl_duration_value(const char *num, size_t num_len, const char *unit, size_t unit_len,
                            int64_t *ms);

/* "[+|-]N [unit]" in s[0..n), blanks (spaces, tabs) around and between
 * allowed, into *ms. The unit as written (what follows the number) is
 * returned through unit/unit_len, for a message about SL_DUR_UNIT. */
sl_dur_rc sl_duration_parse(const char *s, size_t n, int64_t *ms, const char **unit,
                            size_t *unit_len);

/* Parse an interval literal as used in configs: "5 s", "100 ms", "10 min",
 * "INTERVAL '10' SECOND", "2 h". Returns SL_OK with milliseconds in *ms. */
int sl_interval_parse(const char *text, int64_t *ms, char *err, size_t errlen);

#endif
