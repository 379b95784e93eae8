/*
 * calendar.c -- the one calendar (see calendar.h): civil dates from days
 * and back, month lengths, and the split of milliseconds into a UTC date
 * and time, for expression functions, casts and every timestamp printer.
 */
#include "calendar.h"

#include <stdbool.h>
#include <stdio.h>

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
