/*
 * calendar.c -- the one calendar (see calendar.h): civil dates from days
 * and back, month lengths, and the split of milliseconds into a UTC date
 * and time, for expression functions, casts and every timestamp printer.
 */
#include "calendar.h"

#include <stdbool.h>
#include <stdio.h>
#include <strings.h>

int64_t sl_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = sl_floor_div(y, 400);
    int64_t yoe = y - era * 400;                         /* [0, 399] */
    int mp = (m + 9) % 12;                               /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + d - 1;            /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

void sl_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468; /* count from 0000-03-01 */
    int64_t era = sl_floor_div(z, 146097);
    int64_t doe = z - era * 146097;                                      /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                    /* March = 0 */
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

int sl_days_in_month(int64_t y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

sl_civil sl_civil_from_ms(int64_t ms)
{
    sl_civil c;
    int64_t days = ms / SL_MS_PER_DAY, rem = ms % SL_MS_PER_DAY; /* no overflow at INT64_MIN */
    if (rem < 0) {
        rem += SL_MS_PER_DAY;
        days--;
    }
    c.milli = (int)(rem % 1000);
    c.second = (int)(rem / 1000 % 60);
    c.minute = (int)(rem / 60000 % 60);
    c.hour = (int)(rem / 3600000);
    sl_civil_from_days(days, &c.year, &c.month, &c.day);
    return c;
}

int sl_civil_format_year(char *dst, size_t cap, int64_t y)
{
    if (y > 9999) return snprintf(dst, cap, "+%lld", (long long)y);
    if (y < 0) return snprintf(dst, cap, "-%04lld", (long long)-y);
    return snprintf(dst, cap, "%04lld", (long long)y);
}

static const char *const xu_names[SL_XU_N] = {
    "MILLENNIUM", "CENTURY", "DECADE", "YEAR", "ISOYEAR", "QUARTER", "MONTH", "WEEK", "DAY",
    "DOW", "ISODOW", "DOY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"};

const char *sl_extract_unit_name(sl_extract_unit u)
{
    return u < SL_XU_N ? xu_names[u] : "?";
}

int sl_extract_unit_find(const char *s)
{
    for (int i = 0; i < SL_XU_N; i++)
        if (!strcasecmp(s, xu_names[i])) return i;
    return -1;
}

/* Monday 1 .. Sunday 7 of day z since 1970-01-01 (a Thursday). */
static int iso_dow(int64_t z)
{
    return (int)((z % 7 + 7 + 3) % 7) + 1;
}

/* The ISO 8601 week of day z (weeks start on Monday; week 1 holds the
 * year's first Thursday) and its week-based year. */
static int iso_week(int64_t z, int64_t *wyear)
{
    int m, d;
    int64_t thursday = z - iso_dow(z) + 4; /* the Thursday of z's week decides its year */
    int64_t ty;
    sl_civil_from_days(thursday, &ty, &m, &d);
    *wyear = ty;
    return (int)((thursday - sl_days_from_civil(ty, 1, 1)) / 7) + 1;
}

int64_t sl_civil_extract(sl_extract_unit u, int64_t ms)
{
    sl_civil c = sl_civil_from_ms(ms);
    int64_t days = sl_floor_div(ms, SL_MS_PER_DAY), wy;
    switch (u) {
    case SL_XU_MILLENNIUM: return c.year > 0 ? (c.year + 999) / 1000 : (c.year - 999) / 1000;
    case SL_XU_CENTURY: return c.year > 0 ? (c.year + 99) / 100 : (c.year - 99) / 100;
    case SL_XU_DECADE: return c.year / 10;
    case SL_XU_YEAR: return c.year;
    case SL_XU_ISOYEAR: iso_week(days, &wy); return wy;
    case SL_XU_QUARTER: return (c.month + 2) / 3;
    case SL_XU_MONTH: return c.month;
    case SL_XU_WEEK: return iso_week(days, &wy);
    case SL_XU_DAY: return c.day;
    case SL_XU_DOW: return iso_dow(days) % 7 + 1;
    case SL_XU_ISODOW: return iso_dow(days);
    case SL_XU_DOY: return days - sl_days_from_civil(c.year, 1, 1) + 1;
    case SL_XU_HOUR: return c.hour;
    case SL_XU_MINUTE: return c.minute;
    case SL_XU_SECOND: return c.second;
    case SL_XU_MILLISECOND: return c.milli;
    case SL_XU_N: break;
    }
    return 0;
}

/* ---- FLOOR / CEIL (ts TO unit) ----------------------------------------------------- */

int sl_civil_floor_unit(sl_extract_unit u)
{
    switch (u) {
    case SL_XU_MILLISECOND: case SL_XU_SECOND: case SL_XU_MINUTE: case SL_XU_HOUR:
    case SL_XU_DAY: case SL_XU_WEEK: case SL_XU_MONTH: case SL_XU_QUARTER: case SL_XU_YEAR:
        return 1;
    default: return 0;
    }
}

int64_t sl_civil_floor(sl_extract_unit u, int64_t ms, int ceil)
{
    int64_t unit = u == SL_XU_SECOND ? 1000 : u == SL_XU_MINUTE ? 60000
                 : u == SL_XU_HOUR ? 3600000 : u == SL_XU_DAY ? SL_MS_PER_DAY : 0;
    if (u == SL_XU_MILLISECOND || !sl_civil_floor_unit(u)) return ms;
    if (unit) {
        int64_t f = sl_floor_div(ms, unit) * unit;
        if (!ceil || f == ms) return f;
        return f > INT64_MAX - unit ? INT64_MAX : f + unit;
    }
    /* WEEK, MONTH, QUARTER, YEAR: from the date (Calcite's julianDateFloor), whose day
     * Flink takes by Java's division, toward zero (so FLOOR(-1 ms TO YEAR) is 1970) */
    int64_t z = ms / SL_MS_PER_DAY, y, day;
    int m, d;
    sl_civil_from_days(z, &y, &m, &d);
    if (u == SL_XU_WEEK) {
        int dow = (int)((z % 7 + 7 + 4) % 7); /* Sunday 0; 1970-01-01 was a Thursday */
        day = z - dow + (ceil && dow > 0 ? 7 : 0);
    } else {
        int first = u == SL_XU_YEAR ? 1 : u == SL_XU_QUARTER ? (m - 1) / 3 * 3 + 1 : m;
        int step = u == SL_XU_YEAR ? 12 : u == SL_XU_QUARTER ? 3 : 1;
        if (ceil && (m > first || d > 1)) first += step;
        day = sl_days_from_civil(y + (first - 1) / 12, (first - 1) % 12 + 1, 1);
    }
    if (day > INT64_MAX / SL_MS_PER_DAY) return INT64_MAX;
    if (day < INT64_MIN / SL_MS_PER_DAY) return INT64_MIN;
    return day * SL_MS_PER_DAY;
}
