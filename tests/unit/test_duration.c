/*
 * test_duration.c -- unit tests for the one duration parser
 * (lib/duration.c) that the configuration's durations and the interval
 * literals of SQL and vertex options share.
 */
#include <string.h>

#include "duration.h"
#include "sl_test.h"

static sl_dur_rc parse(const char *s, int64_t *ms)
{
    const char *unit;
    size_t unit_len;
    return sl_duration_parse(s, strlen(s), ms, &unit, &unit_len);
}

static void test_values(void)
{
    int64_t ms = -1;
    CHECK_EQ_INT(parse("5 s", &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, 5000);
    CHECK_EQ_INT(parse("\t100ms ", &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, 100);
    CHECK_EQ_INT(parse("50000", &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, 50000);
    CHECK_EQ_INT(parse("+2 Minutes", &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, 120000);
    CHECK_EQ_INT(parse("1 d", &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, 86400000);
    CHECK_EQ_INT(parse("-0 s", &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, 0);
    CHECK_EQ_INT(parse("9223372036854775807", &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, INT64_MAX);
    CHECK_EQ_INT(sl_duration_value("3", 1, "HOURS", 5, &ms), SL_DUR_OK);
    CHECK_EQ_INT(ms, 10800000);
}

static void test_errors(void)
{
    int64_t ms = 7;
    const char *unit;
    size_t unit_len;
    CHECK_EQ_INT(parse("", &ms), SL_DUR_FORM);
    CHECK_EQ_INT(parse("s", &ms), SL_DUR_FORM);
    CHECK_EQ_INT(parse("+", &ms), SL_DUR_FORM);
    CHECK_EQ_INT(parse("99999999999999999999 ms", &ms), SL_DUR_FORM);
    CHECK_EQ_INT(parse("-5 s", &ms), SL_DUR_NEGATIVE);
    CHECK_EQ_INT(parse("9223372036854775807 s", &ms), SL_DUR_RANGE);
    CHECK_EQ_INT(sl_duration_parse("1.5 s", 5, &ms, &unit, &unit_len), SL_DUR_UNIT);
    CHECK(unit_len == 4 && strncmp(unit, ".5 s", 4) == 0);
    CHECK_EQ_INT(parse("10 s x", &ms), SL_DUR_UNIT);
    CHECK_EQ_INT(parse("5 parsecs", &ms), SL_DUR_UNIT);
    CHECK_EQ_INT(ms, 7); /* untouched on error */
    CHECK(!sl_duration_unit("sx", 2, &ms));
}

SL_TEST_MAIN(SL_TEST(test_values), SL_TEST(test_errors))
