/*
 * calendar.h -- the one calendar: milliseconds since the epoch <-> the
 * proleptic Gregorian calendar in UTC, as java.time counts it (Flink's
 * TIMESTAMP(3) and TIMESTAMP_LTZ(3) values are such milliseconds).
 *
 * Days are converted with Howard Hinnant's civil-from-days algorithms: the
 * year is shifted to start in March, so the leap day ends a 400-year era
 * and month lengths follow a fixed 153-days-per-5-months pattern. Every
 * function is total over int64 milliseconds (no overflow, negative times
 * round toward the past) and allocates nothing.
 */
#ifndef SL_CALENDAR_H
#define SL_CALENDAR_H

#include <stddef.h>
#include <stdint.h>

/* A UTC date and time of day split out of milliseconds since the epoch. */
typedef struct sl_civil {
    int64_t year;  /* proleptic Gregorian; 0 is 1 BC, as java.time's */
    int month;     /* 1..12 */
    int day;       /* 1..31 */
    int hour, minute, second, milli;
} sl_civil;

#define SL_MS_PER_DAY 86400000LL

/* a / b rounded toward minus infinity (b != 0). */
static inline int64_t sl_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Days since 1970-01-01 of year y, month m (1..12), day d. */
int64_t sl_days_from_civil(int64_t y, int m, int d);

/* The date of day z since 1970-01-01. */
void sl_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

/* Days in month m (1..12) of year y. */
int sl_days_in_month(int64_t y, int m);

/* ms since the epoch as a UTC date and time. */
sl_civil sl_civil_from_ms(int64_t ms);

/* The fields EXTRACT(unit FROM ts) reads, as Flink numbers them. */
typedef enum {
    SL_XU_MILLENNIUM, SL_XU_CENTURY, SL_XU_DECADE, SL_XU_YEAR, SL_XU_ISOYEAR, SL_XU_QUARTER,
    SL_XU_MONTH, SL_XU_WEEK, SL_XU_DAY, SL_XU_DOW, SL_XU_ISODOW, SL_XU_DOY, SL_XU_HOUR,
    SL_XU_MINUTE, SL_XU_SECOND, SL_XU_MILLISECOND, SL_XU_N
} sl_extract_unit;

/* The unit's SQL name ("DOW"); the unit named s (case-insensitive), or -1. */
const char *sl_extract_unit_name(sl_extract_unit u);
int sl_extract_unit_find(const char *s);

/* EXTRACT(u FROM ms): YEAR, MONTH (1..12), DAY (1..31), HOUR, MINUTE,
 * SECOND (whole seconds, 0..59), MILLISECOND (0..999 within the second),
 * QUARTER (1..4), WEEK (ISO 8601 week of its week-based year, 1..53),
 * ISOYEAR (that week-based year), DOW (Sunday 1 .. Saturday 7), ISODOW
 * (Monday 1 .. Sunday 7), DOY (1..366), DECADE (year / 10 toward zero),
 * CENTURY and MILLENNIUM (year 1 starts the first; year 0 and before count
 * down from -1). */
int64_t sl_civil_extract(sl_extract_unit u, int64_t ms);

/* FLOOR(ms TO u) (ceil = 0) / CEIL(ms TO u) (ceil = 1), as Flink's
 * DateTimeUtils.timestampFloor / timestampCeil compute them in UTC, for u
 * one of MILLISECOND, SECOND, MINUTE, HOUR, DAY (ceil: the next boundary
 * unless ms is on one), WEEK (weeks start on Sunday), MONTH, QUARTER, YEAR
 * (ceil from the date alone, as Flink: CEIL of any time on the first day
 * of a month is that day's midnight; the day of a time before 1970 is
 * rounded toward 1970, as Java's division does). Saturates at the int64 range; any
 * other unit gives ms unchanged (callers check sl_civil_floor_unit). */
int64_t sl_civil_floor(sl_extract_unit u, int64_t ms, int ceil);
int sl_civil_floor_unit(sl_extract_unit u); /* 1: a unit sl_civil_floor takes */

/* Java's LocalDate year: 4 digits, "+" beyond 9999, "-" before year 0.
 * Returns what snprintf returns. */
int sl_civil_format_year(char *dst, size_t cap, int64_t y);

#endif
