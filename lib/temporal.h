/*
 * temporal.h -- the text of Flink SQL's date and time values, and time
 * zones.
 *
 * Values, as the rows will hold them:
 *   DATE                      int32 days since 1970-01-01
 *   TIME(p)                   int32 milliseconds of the day (Flink keeps no
 *                             more than milliseconds in a TIME, whatever p)
 *   TIMESTAMP(p), p = 0..9    sl_ts: milliseconds since 1970-01-01 00:00
 *                             plus nanoseconds within that millisecond
 *   TIMESTAMP_LTZ(p)          the same sl_ts, counted in UTC; shown in the
 *                             session time zone (sl_tz)
 *   INTERVAL YEAR TO MONTH    int32 months
 *   INTERVAL DAY TO SECOND    int64 milliseconds
 * The calendar is the proleptic Gregorian one of lib/calendar.h; parsing
 * and printing allocate nothing and are reentrant.
 *
 * Parsing accepts what Flink's CAST from STRING accepts (docs/SQL.md, "Date
 * and time values"): one- or two-digit months, days, hours, minutes and
 * seconds; blanks around a DATE or TIME (not a TIMESTAMP); a TIMESTAMP's
 * date and time apart by one ' ' (not 'T'), the time with its seconds
 * ("10:00" alone is refused, "10:00:00." read), or a date alone as
 * midnight; at most 9 fraction digits, those past the precision cut, not
 * rounded.
 * Each parser returns SL_OK, or SL_ERR for text that is no such value
 * (Flink's CAST fails, TRY_CAST gives NULL).
 *
 * Time zones (sl_tz) are ICU's (libicu: its time-zone database and rules),
 * named and resolved by one of the two rule sets Flink uses (sl_tz_rules).
 * A local time in a daylight-saving gap moves forward by the gap's length
 * under both.
 */
#ifndef SL_TEMPORAL_H
#define SL_TEMPORAL_H

#include <stddef.h>
#include <stdint.h>

/* A TIMESTAMP(p) or TIMESTAMP_LTZ(p) value. */
typedef struct sl_ts {
    int64_t ms;   /* since 1970-01-01T00:00 (UTC for LTZ), floor */
    int32_t nano; /* 0..999999 within the millisecond */
} sl_ts;

#define SL_MS_PER_DAY_I32 86400000
/* The longest text any formatter here writes, without the NUL. */
#define SL_TEMPORAL_TEXT_MAX 48

/* How a value is shown. */
typedef enum sl_tt_style {
    SL_TT_SQL,  /* CAST(... AS STRING), the SQL client: "2026-01-01 10:00:00.120"
                   (TIMESTAMP: exactly p fraction digits) */
    SL_TT_JAVA, /* the print sink and Row.toString (java.time's toString):
                   "2026-01-01T10:00:00.120", seconds left out when they
                   and the fraction are 0, the fraction in groups of 3 */
    SL_TT_INSTANT, /* the print sink's TIMESTAMP_LTZ (java.time.Instant's
                   toString, in UTC): "2026-01-01T00:00:00.123Z", the
                   seconds always, the fraction in groups of 3 */
} sl_tt_style;

/* ---- DATE ---- */

/* "2026-01-01" (also "2026-1-1", " 2026-01-01 ", and a time after the date,
 * which is dropped) into days; years 1..9999 (Flink refuses year 0). */
int sl_date_parse(const char *s, size_t len, int32_t *days);
/* days as "yyyy-MM-dd" (Java's year form beyond 0..9999); returns the
 * length, writes at most cap bytes with the NUL. */
int sl_date_format(char *dst, size_t cap, int32_t days);

/* ---- TIME(p) ---- */

/* "10:00:00", "10:00", "10:00:00.123456789" into milliseconds of the day
 * (the fraction cut to min(p, 3) digits). Hours 0..23. */
int sl_time_parse(const char *s, size_t len, int p, int32_t *ms);
/* ms of the day as Flink shows a TIME(p): SL_TT_SQL "10:00:00", with the
 * milliseconds ("10:00:00.5", trailing zeros left out) when not 0 and p > 0;
 * SL_TT_JAVA java.time.LocalTime's "10:00", "10:00:01", "10:00:00.500". */
int sl_time_format(char *dst, size_t cap, int32_t ms, int p, sl_tt_style style);

/* ---- TIMESTAMP(p) ---- */

/* "2026-01-01 10:00:00.123456789", "2026-1-1 1:2:3" or a date alone into
 * a TIMESTAMP(p) (the fraction cut to p digits). Years 1..9999. */
int sl_timestamp_parse(const char *s, size_t len, int p, sl_ts *out);
/* v as a TIMESTAMP(p): SL_TT_SQL "2026-01-01 10:00:00.123400" (exactly p
 * fraction digits, none for p = 0); SL_TT_JAVA java.time.LocalDateTime's
 * "2026-01-01T10:00:00.123400" (the digits of v, groups of 3);
 * SL_TT_INSTANT "2026-01-01T10:00:00.123400Z". */
int sl_timestamp_format(char *dst, size_t cap, sl_ts v, int p, sl_tt_style style);

/* ---- intervals ---- */

/* months as Flink shows INTERVAL YEAR TO MONTH: "+1-02", "-0-05". */
int sl_interval_ym_format(char *dst, size_t cap, int32_t months);
/* ms as Flink shows INTERVAL DAY TO SECOND(3): "+3 04:05:06.789". */
int sl_interval_dt_format(char *dst, size_t cap, int64_t ms);
/* The literal texts: INTERVAL '1-2' YEAR TO MONTH ("[+-]y-m", m 0..11);
 * INTERVAL '3 04:05:06.789' DAY TO SECOND ("[+-]d h:m:s[.fff]", h 0..23,
 * m and s 0..59, at most 9 fraction digits, cut to ms). */
int sl_interval_ym_parse(const char *s, size_t len, int32_t *months);
int sl_interval_dt_parse(const char *s, size_t len, int64_t *ms);

/* ---- time zones ---- */

typedef struct sl_tz sl_tz;

/* How a zone's name is read and a wall-clock time in an overlap resolved:
 * Flink has two rules. */
typedef enum sl_tz_rules {
    SL_TZ_JAVA_TIME, /* java.time.ZoneId (table.local-time-zone, TIMESTAMP_LTZ
                        casts): region names, "UTC"/"GMT"/"UT"/"Z", offsets
                        "+08:00", "GMT+8", "UTC-05:30"; anything else is an
                        error. An overlap takes the earlier offset. */
    SL_TZ_JAVA_UTIL, /* java.util.TimeZone (CONVERT_TZ): region names and
                        ICU's (= Java's) "GMT+8"-style and three-letter IDs;
                        a name it does not know is UTC, quietly, and so is
                        "+05:00". An overlap takes the later (standard-time)
                        offset. (Java would read dates before 1582-10-15
                        as Julian ones; here the calendar is proleptic
                        Gregorian throughout.) */
} sl_tz_rules;

/* The zone named `name` (NUL-terminated) under the given rules, or NULL
 * with a message in err ("unknown time zone 'No/Such'"). Caller frees with
 * sl_tz_destroy. One sl_tz is for one thread at a time. */
sl_tz *sl_tz_open(const char *name, sl_tz_rules rules, char *err, size_t errlen);
void sl_tz_destroy(sl_tz *tz);
/* The zone's ID as opened ("Asia/Shanghai", "GMT+08:00"). */
const char *sl_tz_name(const sl_tz *tz);

/* The zone's offset from UTC, in ms, at the instant utc_ms. */
int64_t sl_tz_offset(sl_tz *tz, int64_t utc_ms);
/* The instant of local wall-clock time local_ms in the zone (a gap moves
 * forward by its length, an overlap takes the earlier offset). */
int64_t sl_tz_to_utc(sl_tz *tz, int64_t local_ms);
/* utc_ms as local wall-clock time in the zone (saturating at the int64
 * range). */
int64_t sl_tz_to_local(sl_tz *tz, int64_t utc_ms);

#endif
