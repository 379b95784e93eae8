/*
 * test_calendar.c -- unit tests for the one calendar (lib/calendar.c):
 * known dates written out by hand, month lengths, and a round trip over
 * every day of 1,200 years around the epoch; EXTRACT's fields against a table
 * written by Python's datetime (isocalendar, timetuple) and, day by day,
 * against the week's rules.
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

/* EXTRACT's fields of a few instants, in sl_extract_unit order (MILLENNIUM ..
 * MILLISECOND), as Python's datetime computes them: year // 10, ISO
 * calendar week and year, isoweekday % 7 + 1 for DOW, tm_yday. */
static const struct {
    const char *text;
    int64_t ms;
    int64_t f[SL_XU_N];
} extract_cases[] = {
    {"2026-12-31 23:59:58.123", 1798761598123LL, {3, 21, 202, 2026, 2026, 4, 12, 53, 31, 5, 4, 365, 23, 59, 58, 123}},
    {"2021-01-03 01:02:03.004", 1609635723004LL, {3, 21, 202, 2021, 2020, 1, 1, 53, 3, 1, 7, 3, 1, 2, 3, 4}},
    {"1969-12-31 23:59:59.999", -1LL, {2, 20, 196, 1969, 1970, 4, 12, 1, 31, 4, 3, 365, 23, 59, 59, 999}},
    {"2024-02-29 12:00:00.500", 1709208000500LL, {3, 21, 202, 2024, 2024, 1, 2, 9, 29, 5, 4, 60, 12, 0, 0, 500}},
    {"2020-12-31 00:00:00.000", 1609372800000LL, {3, 21, 202, 2020, 2020, 4, 12, 53, 31, 5, 4, 366, 0, 0, 0, 0}},
    {"2027-01-01 07:08:09.010", 1798787289010LL, {3, 21, 202, 2027, 2026, 1, 1, 53, 1, 6, 5, 1, 7, 8, 9, 10}},
    {"1900-03-01 00:00:00.000", -2203891200000LL, {2, 19, 190, 1900, 1900, 1, 3, 9, 1, 5, 4, 60, 0, 0, 0, 0}},
    {"0001-01-01 00:00:00.000", -62135596800000LL, {1, 1, 0, 1, 1, 1, 1, 1, 1, 2, 1, 1, 0, 0, 0, 0}},
    {"2000-01-01 00:00:00.000", 946684800000LL, {2, 20, 200, 2000, 1999, 1, 1, 52, 1, 7, 6, 1, 0, 0, 0, 0}},
    {"1999-12-31 23:00:00.000", 946681200000LL, {2, 20, 199, 1999, 1999, 4, 12, 52, 31, 6, 5, 365, 23, 0, 0, 0}},
};

static void test_extract_fields(void)
{
    for (size_t i = 0; i < sizeof extract_cases / sizeof extract_cases[0]; i++)
        for (int u = 0; u < SL_XU_N; u++) {
            int64_t got = sl_civil_extract((sl_extract_unit)u, extract_cases[i].ms);
            if (got != extract_cases[i].f[u]) {
                fprintf(stderr, "%s %s: got %lld, want %lld\n", extract_cases[i].text,
                        sl_extract_unit_name((sl_extract_unit)u), (long long)got,
                        (long long)extract_cases[i].f[u]);
                sl_test_failed_ = 1;
            }
        }
    CHECK_EQ_INT(sl_extract_unit_find("dow"), SL_XU_DOW);
    CHECK_EQ_INT(sl_extract_unit_find("Millisecond"), SL_XU_MILLISECOND);
    CHECK_EQ_INT(sl_extract_unit_find("EPOCH"), -1);
    /* before year 1 the centuries count down from -1, as Flink's do */
    int64_t bc = sl_days_from_civil(-150, 6, 1) * SL_MS_PER_DAY;
    CHECK_EQ_INT(sl_civil_extract(SL_XU_CENTURY, bc), -2);
    CHECK_EQ_INT(sl_civil_extract(SL_XU_MILLENNIUM, bc), -1);
    CHECK_EQ_INT(sl_civil_extract(SL_XU_DECADE, bc), -15);
}

/* Day by day over 400 years: DOW and ISODOW step through the week, the ISO
 * week number goes up by one each Monday and starts again at 1 in the week
 * holding January 4th, DOY restarts on January 1st. */
static void test_extract_week_rules(void)
{
    int64_t first = sl_days_from_civil(1800, 1, 1), last = sl_days_from_civil(2200, 1, 1);
    int64_t pw = sl_civil_extract(SL_XU_WEEK, (first - 1) * SL_MS_PER_DAY);
    int64_t pdow = sl_civil_extract(SL_XU_ISODOW, (first - 1) * SL_MS_PER_DAY);
    int64_t pdoy = sl_civil_extract(SL_XU_DOY, (first - 1) * SL_MS_PER_DAY);
    for (int64_t z = first; z < last; z++) {
        int64_t ms = z * SL_MS_PER_DAY + 43200000;
        int64_t dow = sl_civil_extract(SL_XU_ISODOW, ms), w = sl_civil_extract(SL_XU_WEEK, ms);
        int64_t doy = sl_civil_extract(SL_XU_DOY, ms);
        sl_civil c = sl_civil_from_ms(ms);
        CHECK_EQ_INT(dow, pdow % 7 + 1);
        CHECK_EQ_INT(sl_civil_extract(SL_XU_DOW, ms), dow % 7 + 1);
        CHECK_EQ_INT(doy, c.month == 1 && c.day == 1 ? 1 : pdoy + 1);
        if (dow != 1) CHECK_EQ_INT(w, pw);
        else if (c.month == 1 && c.day <= 4 && c.day >= 1) CHECK_EQ_INT(w, 1);
        else if (c.month == 12 && c.day >= 29) CHECK(w == 1 || w == pw + 1);
        else CHECK_EQ_INT(w, pw + 1);
        int64_t wy = sl_civil_extract(SL_XU_ISOYEAR, ms);
        CHECK(wy == c.year || (w == 1 && wy == c.year + 1 && c.month == 12) ||
              (w >= 52 && wy == c.year - 1 && c.month == 1));
        pw = w, pdow = dow, pdoy = doy;
    }
}

/* FLOOR / CEIL (ts TO unit): the values Flink 2.3's DateTimeUtils.timestampFloor
 * and timestampCeil (UTC) give for the same milliseconds, boundaries, the
 * first day of a year / quarter / month with a time of day, a Sunday, and
 * times before 1970 included. */
static void test_floor_ceil_as_flink(void)
{
    static const struct {
        sl_extract_unit u;
        int64_t ms, floor, ceil;
    } cases[] = {
        {SL_XU_YEAR, 0LL, 0LL, 0LL},
        {SL_XU_YEAR, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_YEAR, 1767225600001LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_YEAR, 1767268800123LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_YEAR, 1771234567890LL, 1767225600000LL, 1798761600000LL},
        {SL_XU_YEAR, -1LL, 0LL, 0LL},
        {SL_XU_YEAR, -34560012345LL, -63158400000LL, -31536000000LL},
        {SL_XU_YEAR, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_YEAR, 951786000000LL, 946684800000LL, 978307200000LL},
        {SL_XU_YEAR, 1735689599999LL, 1704067200000LL, 1735689600000LL},
        {SL_XU_YEAR, 1772323200000LL, 1767225600000LL, 1798761600000LL},
        {SL_XU_QUARTER, 0LL, 0LL, 0LL},
        {SL_XU_QUARTER, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_QUARTER, 1767225600001LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_QUARTER, 1767268800123LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_QUARTER, 1771234567890LL, 1767225600000LL, 1775001600000LL},
        {SL_XU_QUARTER, -1LL, 0LL, 0LL},
        {SL_XU_QUARTER, -34560012345LL, -39484800000LL, -31536000000LL},
        {SL_XU_QUARTER, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_QUARTER, 951786000000LL, 946684800000LL, 954547200000LL},
        {SL_XU_QUARTER, 1735689599999LL, 1727740800000LL, 1735689600000LL},
        {SL_XU_QUARTER, 1772323200000LL, 1767225600000LL, 1775001600000LL},
        {SL_XU_MONTH, 0LL, 0LL, 0LL},
        {SL_XU_MONTH, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_MONTH, 1767225600001LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_MONTH, 1767268800123LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_MONTH, 1771234567890LL, 1769904000000LL, 1772323200000LL},
        {SL_XU_MONTH, -1LL, 0LL, 0LL},
        {SL_XU_MONTH, -34560012345LL, -36806400000LL, -34214400000LL},
        {SL_XU_MONTH, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_MONTH, 951786000000LL, 949363200000LL, 951868800000LL},
        {SL_XU_MONTH, 1735689599999LL, 1733011200000LL, 1735689600000LL},
        {SL_XU_MONTH, 1772323200000LL, 1772323200000LL, 1772323200000LL},
        {SL_XU_WEEK, 0LL, -345600000LL, 259200000LL},
        {SL_XU_WEEK, 1767225600000LL, 1766880000000LL, 1767484800000LL},
        {SL_XU_WEEK, 1767225600001LL, 1766880000000LL, 1767484800000LL},
        {SL_XU_WEEK, 1767268800123LL, 1766880000000LL, 1767484800000LL},
        {SL_XU_WEEK, 1771234567890LL, 1771113600000LL, 1771718400000LL},
        {SL_XU_WEEK, -1LL, -345600000LL, 259200000LL},
        {SL_XU_WEEK, -34560012345LL, -34819200000LL, -34214400000LL},
        {SL_XU_WEEK, 946684800000LL, 946166400000LL, 946771200000LL},
        {SL_XU_WEEK, 951786000000LL, 951609600000LL, 952214400000LL},
        {SL_XU_WEEK, 1735689599999LL, 1735430400000LL, 1736035200000LL},
        {SL_XU_WEEK, 1772323200000LL, 1772323200000LL, 1772323200000LL},
        {SL_XU_DAY, 0LL, 0LL, 0LL},
        {SL_XU_DAY, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_DAY, 1767225600001LL, 1767225600000LL, 1767312000000LL},
        {SL_XU_DAY, 1767268800123LL, 1767225600000LL, 1767312000000LL},
        {SL_XU_DAY, 1771234567890LL, 1771200000000LL, 1771286400000LL},
        {SL_XU_DAY, -1LL, -86400000LL, 0LL},
        {SL_XU_DAY, -34560012345LL, -34646400000LL, -34560000000LL},
        {SL_XU_DAY, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_DAY, 951786000000LL, 951782400000LL, 951868800000LL},
        {SL_XU_DAY, 1735689599999LL, 1735603200000LL, 1735689600000LL},
        {SL_XU_DAY, 1772323200000LL, 1772323200000LL, 1772323200000LL},
        {SL_XU_HOUR, 0LL, 0LL, 0LL},
        {SL_XU_HOUR, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_HOUR, 1767225600001LL, 1767225600000LL, 1767229200000LL},
        {SL_XU_HOUR, 1767268800123LL, 1767268800000LL, 1767272400000LL},
        {SL_XU_HOUR, 1771234567890LL, 1771232400000LL, 1771236000000LL},
        {SL_XU_HOUR, -1LL, -3600000LL, 0LL},
        {SL_XU_HOUR, -34560012345LL, -34563600000LL, -34560000000LL},
        {SL_XU_HOUR, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_HOUR, 951786000000LL, 951786000000LL, 951786000000LL},
        {SL_XU_HOUR, 1735689599999LL, 1735686000000LL, 1735689600000LL},
        {SL_XU_HOUR, 1772323200000LL, 1772323200000LL, 1772323200000LL},
        {SL_XU_MINUTE, 0LL, 0LL, 0LL},
        {SL_XU_MINUTE, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_MINUTE, 1767225600001LL, 1767225600000LL, 1767225660000LL},
        {SL_XU_MINUTE, 1767268800123LL, 1767268800000LL, 1767268860000LL},
        {SL_XU_MINUTE, 1771234567890LL, 1771234560000LL, 1771234620000LL},
        {SL_XU_MINUTE, -1LL, -60000LL, 0LL},
        {SL_XU_MINUTE, -34560012345LL, -34560060000LL, -34560000000LL},
        {SL_XU_MINUTE, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_MINUTE, 951786000000LL, 951786000000LL, 951786000000LL},
        {SL_XU_MINUTE, 1735689599999LL, 1735689540000LL, 1735689600000LL},
        {SL_XU_MINUTE, 1772323200000LL, 1772323200000LL, 1772323200000LL},
        {SL_XU_SECOND, 0LL, 0LL, 0LL},
        {SL_XU_SECOND, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_SECOND, 1767225600001LL, 1767225600000LL, 1767225601000LL},
        {SL_XU_SECOND, 1767268800123LL, 1767268800000LL, 1767268801000LL},
        {SL_XU_SECOND, 1771234567890LL, 1771234567000LL, 1771234568000LL},
        {SL_XU_SECOND, -1LL, -1000LL, 0LL},
        {SL_XU_SECOND, -34560012345LL, -34560013000LL, -34560012000LL},
        {SL_XU_SECOND, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_SECOND, 951786000000LL, 951786000000LL, 951786000000LL},
        {SL_XU_SECOND, 1735689599999LL, 1735689599000LL, 1735689600000LL},
        {SL_XU_SECOND, 1772323200000LL, 1772323200000LL, 1772323200000LL},
        {SL_XU_MILLISECOND, 0LL, 0LL, 0LL},
        {SL_XU_MILLISECOND, 1767225600000LL, 1767225600000LL, 1767225600000LL},
        {SL_XU_MILLISECOND, 1767225600001LL, 1767225600001LL, 1767225600001LL},
        {SL_XU_MILLISECOND, 1767268800123LL, 1767268800123LL, 1767268800123LL},
        {SL_XU_MILLISECOND, 1771234567890LL, 1771234567890LL, 1771234567890LL},
        {SL_XU_MILLISECOND, -1LL, -1LL, -1LL},
        {SL_XU_MILLISECOND, -34560012345LL, -34560012345LL, -34560012345LL},
        {SL_XU_MILLISECOND, 946684800000LL, 946684800000LL, 946684800000LL},
        {SL_XU_MILLISECOND, 951786000000LL, 951786000000LL, 951786000000LL},
        {SL_XU_MILLISECOND, 1735689599999LL, 1735689599999LL, 1735689599999LL},
        {SL_XU_MILLISECOND, 1772323200000LL, 1772323200000LL, 1772323200000LL},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        CHECK(sl_civil_floor_unit(cases[i].u));
        CHECK_EQ_INT((long long)sl_civil_floor(cases[i].u, cases[i].ms, 0), (long long)cases[i].floor);
        CHECK_EQ_INT((long long)sl_civil_floor(cases[i].u, cases[i].ms, 1), (long long)cases[i].ceil);
    }
    CHECK(!sl_civil_floor_unit(SL_XU_DECADE) && !sl_civil_floor_unit(SL_XU_DOW));
    CHECK_EQ_INT((long long)sl_civil_floor(SL_XU_HOUR, INT64_MAX - 5, 1), (long long)INT64_MAX);
}

SL_TEST_MAIN(SL_TEST(test_floor_ceil_as_flink), SL_TEST(test_known_dates), SL_TEST(test_month_lengths), SL_TEST(test_round_trip),
             SL_TEST(test_extract_fields), SL_TEST(test_extract_week_rules))
