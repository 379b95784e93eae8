/*
 * test_calendar.c -- unit tests for the one calendar (common/calendar.c):
 * known dates written out by hand, month lengths, and a round trip over
 * every day of 1,200 years around the epoch.
 */
#include <stdio.h>

#include "calendar.h"
#include "sl_test.h"

static void test_known_dates(void)
{
    CHECK_EQ_INT(sl_days_from_civil(1970, 1, 1), 0);
    CHECK_EQ_INT(sl_days_from_civil(1969, 12, 31), -1);
    CHECK_EQ_INT(sl_days_from_civil(2000, 3, 1), 11017);
    CHECK_EQ_INT(sl_days_from_civil(2026, 8, 19), 20684);
    CHECK_EQ_INT(sl_days_from_civil(0, 1, 1), -719528);
    int64_t y;
    int m, d;
    sl_civil_from_days(-719529, &y, &m, &d); /* the day before year 0 */
    CHECK_EQ_INT(y, -1);
    CHECK_EQ_INT(m, 12);
    CHECK_EQ_INT(d, 31);
    /* 2026-08-19T15:00:00.123Z and one ms before the epoch */
    sl_civil c = sl_civil_from_ms(1787151600123LL);
    CHECK(c.year == 2026 && c.month == 8 && c.day == 19 && c.hour == 15 && c.minute == 0 &&
          c.second == 0 && c.milli == 123);
    c = sl_civil_from_ms(-1);
    CHECK(c.year == 1969 && c.month == 12 && c.day == 31 && c.hour == 23 && c.minute == 59 &&
          c.second == 59 && c.milli == 999);
    c = sl_civil_from_ms(INT64_MIN); /* total: no overflow */
    CHECK(c.year == -292275055 && c.month == 5 && c.day == 16);
    char buf[32];
    sl_civil_format_year(buf, sizeof buf, 12345);
    CHECK_EQ_STR(buf, "+12345");
    sl_civil_format_year(buf, sizeof buf, -44);
    CHECK_EQ_STR(buf, "-0044");
    sl_civil_format_year(buf, sizeof buf, 7);
    CHECK_EQ_STR(buf, "0007");
    CHECK_EQ_INT(sl_floor_div(-1, 86400000), -1);
    CHECK_EQ_INT(sl_floor_div(86400000, 86400000), 1);
}

static void test_month_lengths(void)
{
    CHECK_EQ_INT(sl_days_in_month(2024, 2), 29);
    CHECK_EQ_INT(sl_days_in_month(2023, 2), 28);
    CHECK_EQ_INT(sl_days_in_month(1900, 2), 28);
    CHECK_EQ_INT(sl_days_in_month(2000, 2), 29);
    CHECK_EQ_INT(sl_days_in_month(2026, 4), 30);
    CHECK_EQ_INT(sl_days_in_month(2026, 12), 31);
}

/* Every day from 1370 to 2570 maps to a valid date and back, one after the
 * other. */
static void test_round_trip(void)
{
    int64_t first = sl_days_from_civil(1370, 1, 1), last = sl_days_from_civil(2570, 1, 1);
    int64_t py = 1369;
    int pm = 12, pd = 31;
    for (int64_t z = first; z < last; z++) {
        int64_t y;
        int m, d;
        sl_civil_from_days(z, &y, &m, &d);
        CHECK(m >= 1 && m <= 12 && d >= 1 && d <= sl_days_in_month(y, m));
        bool next = (y == py && m == pm && d == pd + 1) ||
                    (y == py && m == pm + 1 && d == 1 && pd == sl_days_in_month(py, pm)) ||
                    (y == py + 1 && m == 1 && d == 1 && pm == 12 && pd == 31);
        CHECK(next);
        CHECK_EQ_INT(sl_days_from_civil(y, m, d), z);
        py = y, pm = m, pd = d;
    }
}

SL_TEST_MAIN(SL_TEST(test_known_dates), SL_TEST(test_month_lengths), SL_TEST(test_round_trip))
