/*
 * test_temporal.c -- unit tests for date and time text and time zones
 * (lib/temporal.c): about 33,000 cases Python's datetime and zoneinfo
 * compute (tests/tools/gen_temporal_vectors.py, run through popen: dates of
 * years 1..9999, TIMESTAMP(0..9) both ways, TIME(p), intervals, zone
 * offsets and the wall-clock times around every daylight-saving change of
 * 2000..2030 in nine zones), then the forms Flink 2.3 printed for the same
 * values, written out by hand.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar.h"
#include "sl_test.h"
#include "temporal.h"

/* '_' in a vector's text stands for a blank */
static void blanks(char *s)
{
    for (; *s; s++)
        if (*s == '_') *s = ' ';
}

/* the last zone opened, kept across lines (the vectors come zone by zone) */
static sl_tz *zone_for(const char *name)
{
    static sl_tz *tz;
    static char open_name[64];
    if (tz && !strcmp(open_name, name)) return tz;
    sl_tz_destroy(tz);
    char err[128];
    tz = sl_tz_open(name, SL_TZ_JAVA_TIME, err, sizeof err);
    if (!tz) fprintf(stderr, "%s\n", err);
    snprintf(open_name, sizeof open_name, "%s", name);
    return tz;
}

static int bad(int lineno, const char *line, const char *got)
{
    fprintf(stderr, "vector line %d: %s -> got %s\n", lineno, line, got);
    return 1;
}

static int check_line(int lineno, char *line)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", line);
    char *tok[8];
    int n = 0;
    for (char *sv, *t = strtok_r(line, " \n", &sv); t && n < 8; t = strtok_r(NULL, " \n", &sv))
        tok[n++] = t;
    if (n == 0) return 0;
    const char *op = tok[0];
    char buf[128];
    if (!strcmp(op, "date")) {
        int32_t days = (int32_t)strtoll(tok[1], NULL, 10), back = 0;
        sl_date_format(buf, sizeof buf, days);
        if (strcmp(buf, tok[2])) return bad(lineno, copy, buf);
        if (sl_date_parse(tok[2], strlen(tok[2]), &back) != SL_OK || back != days)
            return bad(lineno, copy, "parse");
        return 0;
    }
    if (!strcmp(op, "ts")) {
        sl_ts v = {strtoll(tok[1], NULL, 10), (int32_t)atoi(tok[2])};
        int p = atoi(tok[3]);
        blanks(tok[4]);
        sl_timestamp_format(buf, sizeof buf, v, p, SL_TT_SQL);
        if (strcmp(buf, tok[4])) return bad(lineno, copy, buf);
        sl_timestamp_format(buf, sizeof buf, v, p, SL_TT_JAVA);
        if (strcmp(buf, tok[5])) return bad(lineno, copy, buf);
        sl_timestamp_format(buf, sizeof buf, v, p, SL_TT_INSTANT);
        if (strcmp(buf, tok[6])) return bad(lineno, copy, buf);
        return 0;
    }
    if (!strcmp(op, "tsparse")) {
        blanks(tok[2]);
        sl_ts v;
        int rc = sl_timestamp_parse(tok[2], strlen(tok[2]), atoi(tok[1]), &v);
        if (!strcmp(tok[3], "ERR")) return rc == SL_OK ? bad(lineno, copy, "accepted") : 0;
        if (rc != SL_OK) return bad(lineno, copy, "refused");
        snprintf(buf, sizeof buf, "%" PRId64 " %d", v.ms, v.nano);
        char want[64];
        snprintf(want, sizeof want, "%s %s", tok[3], tok[4]);
        return strcmp(buf, want) ? bad(lineno, copy, buf) : 0;
    }
    if (!strcmp(op, "time")) {
        int32_t ms = atoi(tok[1]), back;
        int p = atoi(tok[2]);
        sl_time_format(buf, sizeof buf, ms, p, SL_TT_SQL);
        if (strcmp(buf, tok[3])) return bad(lineno, copy, buf);
        sl_time_format(buf, sizeof buf, ms, p, SL_TT_JAVA);
        if (strcmp(buf, tok[4])) return bad(lineno, copy, buf);
        if (sl_time_parse(tok[3], strlen(tok[3]), p, &back) != SL_OK) return bad(lineno, copy, "parse");
        int32_t want = p == 0 ? ms / 1000 * 1000 : p == 1 ? ms / 100 * 100 : p == 2 ? ms / 10 * 10 : ms;
        return back != want ? bad(lineno, copy, "read back") : 0;
    }
    if (!strcmp(op, "ym")) {
        int32_t m = (int32_t)strtol(tok[1], NULL, 10), back;
        sl_interval_ym_format(buf, sizeof buf, m);
        if (strcmp(buf, tok[2])) return bad(lineno, copy, buf);
        if (sl_interval_ym_parse(buf, strlen(buf), &back) != SL_OK || back != m)
            return bad(lineno, copy, "parse");
        return 0;
    }
    if (!strcmp(op, "dt")) {
        int64_t ms = strtoll(tok[1], NULL, 10), back;
        char want[64];
        snprintf(want, sizeof want, "%s %s", tok[2], tok[3]);
        sl_interval_dt_format(buf, sizeof buf, ms);
        if (strcmp(buf, want)) return bad(lineno, copy, buf);
        if (sl_interval_dt_parse(buf, strlen(buf), &back) != SL_OK || back != ms)
            return bad(lineno, copy, "parse");
        return 0;
    }
    if (!strcmp(op, "tzoff") || !strcmp(op, "tzlocal")) {
        sl_tz *tz = zone_for(tok[1]);
        if (!tz) return bad(lineno, copy, "no zone");
        int64_t in = strtoll(tok[2], NULL, 10), want = strtoll(tok[3], NULL, 10);
        int64_t got = op[2] == 'o' ? sl_tz_offset(tz, in) : sl_tz_to_utc(tz, in);
        snprintf(buf, sizeof buf, "%" PRId64, got);
        return got != want ? bad(lineno, copy, buf) : 0;
    }
    return bad(lineno, copy, "unknown op");
}

static void test_vectors(void)
{
    FILE *f = popen("python3 tests/tools/gen_temporal_vectors.py", "r");
    CHECK(f != NULL);
    char line[512];
    int lines = 0, nbad = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        nbad += check_line(lines, line);
        if (nbad > 20) break;
    }
    int rc = pclose(f);
    zone_for("UTC");
    CHECK_EQ_INT(nbad, 0);
    CHECK_EQ_INT(rc, 0);
    CHECK(lines > 30000);
}

/* ms since the epoch of a UTC date and time */
static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
    return ((sl_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000LL + s * 1000LL;
}

/* What Flink 2.3 gave: CONVERT_TZ (java.util rules), and the session-zone
 * rules' names (java.time). */
static void test_flink_zones(void)
{
    char err[128];
    sl_tz *ny = sl_tz_open("America/New_York", SL_TZ_JAVA_UTIL, err, sizeof err);
    CHECK(ny != NULL);
    /* CONVERT_TZ('2026-11-01 01:30:00', 'America/New_York', 'UTC') = 06:30 */
    CHECK_EQ_INT(sl_tz_to_utc(ny, utc(2026, 11, 1, 1, 30, 0)), utc(2026, 11, 1, 6, 30, 0));
    /* the gap: '2026-03-08 02:30:00' = 07:30 */
    CHECK_EQ_INT(sl_tz_to_utc(ny, utc(2026, 3, 8, 2, 30, 0)), utc(2026, 3, 8, 7, 30, 0));
    sl_tz_destroy(ny);
    ny = sl_tz_open("America/New_York", SL_TZ_JAVA_TIME, err, sizeof err);
    CHECK(ny != NULL); /* java.time: the overlap's earlier offset */
    CHECK_EQ_INT(sl_tz_to_utc(ny, utc(2026, 11, 1, 1, 30, 0)), utc(2026, 11, 1, 5, 30, 0));
    sl_tz_destroy(ny);
    static const struct {
        const char *name;
        int64_t offset_ms; /* at 2026-01-01T00:00Z; INT64_MIN: refused */
        sl_tz_rules rules;
    } zones[] = {
        {"GMT+08:00", 8 * 3600000LL, SL_TZ_JAVA_UTIL},  /* 2025-12-31 16:00:00 */
        {"GMT-05:30", -19800000LL, SL_TZ_JAVA_UTIL},    /* 2025-12-31 18:30:00 */
        {"Asia/Shanghai", 8 * 3600000LL, SL_TZ_JAVA_UTIL},
        {"+05:00", 0, SL_TZ_JAVA_UTIL},                 /* unknown: GMT */
        {"No/Such_Zone", 0, SL_TZ_JAVA_UTIL},
        {"+05:00", 5 * 3600000LL, SL_TZ_JAVA_TIME},
        {"UTC+8", 8 * 3600000LL, SL_TZ_JAVA_TIME},
        {"GMT-05:30", -19800000LL, SL_TZ_JAVA_TIME},
        {"Z", 0, SL_TZ_JAVA_TIME},
        {"UTC", 0, SL_TZ_JAVA_TIME},
        {"No/Such_Zone", INT64_MIN, SL_TZ_JAVA_TIME},
        {"+25:00", INT64_MIN, SL_TZ_JAVA_TIME},
        {"PST", INT64_MIN, SL_TZ_JAVA_TIME},
        {"PST", -8 * 3600000LL, SL_TZ_JAVA_UTIL},
        {"Japan", 9 * 3600000LL, SL_TZ_JAVA_TIME},
        {"Nowhere", INT64_MIN, SL_TZ_JAVA_TIME},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(zones); i++) {
        sl_tz *tz = sl_tz_open(zones[i].name, zones[i].rules, err, sizeof err);
        if (zones[i].offset_ms == INT64_MIN) {
            CHECK(tz == NULL);
            CHECK(strstr(err, zones[i].name) != NULL);
            continue;
        }
        CHECK(tz != NULL);
        CHECK_EQ_INT(sl_tz_offset(tz, utc(2026, 1, 1, 0, 0, 0)), zones[i].offset_ms);
        sl_tz_destroy(tz);
    }
    /* CONVERT_TZ('1900-01-01 00:00:00', 'UTC', 'Asia/Shanghai') =
     * '1900-01-01 08:05:43': the zone's local mean time */
    sl_tz *sh = sl_tz_open("Asia/Shanghai", SL_TZ_JAVA_UTIL, err, sizeof err);
    CHECK(sh != NULL);
    CHECK_EQ_INT(sl_tz_to_local(sh, utc(1900, 1, 1, 0, 0, 0)), utc(1900, 1, 1, 8, 5, 43));
    /* the ends of the range answer without failing */
    int64_t ends[] = {INT64_MIN, INT64_MIN / 2, -62135596800000LL, 253402300799999LL,
                      INT64_MAX / 2, INT64_MAX};
    for (size_t i = 0; i < SL_ARRAY_LEN(ends); i++) {
        (void)sl_tz_offset(sh, ends[i]);
        (void)sl_tz_to_utc(sh, ends[i]);
    }
    sl_tz_destroy(sh);
    sl_tz_destroy(NULL);
}

/* The text Flink 2.3 printed (CAST to STRING) and the texts it read or
 * refused. */
static void test_flink_text(void)
{
    char buf[64];
    sl_ts v = {utc(2026, 1, 1, 10, 0, 0) + 100, 0};
    sl_timestamp_format(buf, sizeof buf, v, 3, SL_TT_SQL);
    CHECK_EQ_STR(buf, "2026-01-01 10:00:00.100");
    sl_timestamp_format(buf, sizeof buf, v, 0, SL_TT_SQL);
    CHECK_EQ_STR(buf, "2026-01-01 10:00:00");
    v.ms = utc(2026, 1, 1, 10, 0, 0) + 123, v.nano = 400000;
    sl_timestamp_format(buf, sizeof buf, v, 6, SL_TT_SQL);
    CHECK_EQ_STR(buf, "2026-01-01 10:00:00.123400");
    v.ms = utc(2026, 1, 1, 10, 0, 0), v.nano = 0;
    sl_timestamp_format(buf, sizeof buf, v, 9, SL_TT_SQL);
    CHECK_EQ_STR(buf, "2026-01-01 10:00:00.000000000");
    CHECK_EQ_INT(sl_timestamp_parse("2026-1-1 1:2:3", 14, 6, &v), SL_OK);
    CHECK_EQ_INT(v.ms, utc(2026, 1, 1, 1, 2, 3));
    CHECK_EQ_INT(sl_timestamp_parse("2026-01-01", 10, 6, &v), SL_OK);
    CHECK_EQ_INT(v.ms, utc(2026, 1, 1, 0, 0, 0));
    CHECK_EQ_INT(sl_timestamp_parse("2026-01-01T10:00:00", 19, 6, &v), SL_ERR);
    CHECK_EQ_INT(sl_timestamp_parse(" 2026-01-01 10:00:00 ", 21, 6, &v), SL_ERR);
    CHECK_EQ_INT(sl_timestamp_parse("2026-01-01 10:00:00.1234567891", 30, 9, &v), SL_ERR);
    int32_t ms;
    CHECK_EQ_INT(sl_time_parse(" 1:2:3 ", 7, 0, &ms), SL_OK);
    sl_time_format(buf, sizeof buf, ms, 0, SL_TT_SQL);
    CHECK_EQ_STR(buf, "01:02:03");
    CHECK_EQ_INT(sl_time_parse("10:00:00.5", 10, 3, &ms), SL_OK);
    sl_time_format(buf, sizeof buf, ms, 3, SL_TT_SQL);
    CHECK_EQ_STR(buf, "10:00:00.5");
    CHECK_EQ_INT(sl_time_parse("10:00:00.123456", 15, 6, &ms), SL_OK);
    sl_time_format(buf, sizeof buf, ms, 6, SL_TT_SQL);
    CHECK_EQ_STR(buf, "10:00:00.123");
    CHECK_EQ_INT(sl_time_parse("10:00:00.1", 10, 0, &ms), SL_OK);
    sl_time_format(buf, sizeof buf, ms, 0, SL_TT_SQL);
    CHECK_EQ_STR(buf, "10:00:00");
    CHECK_EQ_INT(sl_time_parse("10:00", 5, 0, &ms), SL_OK);
    CHECK_EQ_INT(ms, 36000000);
    CHECK_EQ_INT(sl_time_parse("25:00:00", 8, 0, &ms), SL_ERR);
    int32_t d;
    CHECK_EQ_INT(sl_date_parse(" 2026-01-01 ", 12, &d), SL_OK);
    CHECK_EQ_INT(d, sl_days_from_civil(2026, 1, 1));
    CHECK_EQ_INT(sl_date_parse("2026-1-1", 8, &d), SL_OK);
    CHECK_EQ_INT(sl_date_parse("2026-01-01 10:00:00", 19, &d), SL_OK);
    CHECK_EQ_INT(d, sl_days_from_civil(2026, 1, 1));
    CHECK_EQ_INT(sl_date_parse("2026-02-30", 10, &d), SL_ERR);
    CHECK_EQ_INT(sl_date_parse("10000-01-01", 11, &d), SL_ERR);
    CHECK_EQ_INT(sl_date_parse("0000-01-01", 10, &d), SL_ERR);
    /* the print sink's rows: TIME(0) '10:00:00' and TIME(3) '10:00:00.5',
     * TIMESTAMP(0), TIMESTAMP(9), TIMESTAMP_LTZ(3) of 0 and of ...123 */
    sl_time_format(buf, sizeof buf, 36000000, 0, SL_TT_JAVA);
    CHECK_EQ_STR(buf, "10:00");
    sl_time_format(buf, sizeof buf, 36000500, 3, SL_TT_JAVA);
    CHECK_EQ_STR(buf, "10:00:00.500");
    v.ms = utc(2026, 1, 1, 10, 0, 0), v.nano = 0;
    sl_timestamp_format(buf, sizeof buf, v, 0, SL_TT_JAVA);
    CHECK_EQ_STR(buf, "2026-01-01T10:00");
    v.ms = utc(2026, 1, 1, 10, 0, 1), v.nano = 1;
    sl_timestamp_format(buf, sizeof buf, v, 9, SL_TT_JAVA);
    CHECK_EQ_STR(buf, "2026-01-01T10:00:01.000000001");
    v.ms = 0, v.nano = 0;
    sl_timestamp_format(buf, sizeof buf, v, 3, SL_TT_INSTANT);
    CHECK_EQ_STR(buf, "1970-01-01T00:00:00Z");
    v.ms = 1767225600123LL;
    sl_timestamp_format(buf, sizeof buf, v, 3, SL_TT_INSTANT);
    CHECK_EQ_STR(buf, "2026-01-01T00:00:00.123Z");
    sl_interval_dt_format(buf, sizeof buf, 300000); /* INTERVAL '5' MINUTE */
    CHECK_EQ_STR(buf, "+0 00:05:00.000");
    sl_interval_dt_format(buf, sizeof buf, -(((3 * 24 + 4) * 60 + 5) * 60000LL + 6789));
    CHECK_EQ_STR(buf, "-3 04:05:06.789");
    sl_interval_ym_format(buf, sizeof buf, 120); /* INTERVAL '10' YEAR */
    CHECK_EQ_STR(buf, "+10-00");
    sl_interval_ym_format(buf, sizeof buf, -14);
    CHECK_EQ_STR(buf, "-1-02");
}

int main(int argc, char **argv)
{
    static const sl_test_case tests[] = {
        SL_TEST(test_vectors),
        SL_TEST(test_flink_zones),
        SL_TEST(test_flink_text),
    };
    return sl_test_run(tests, SL_ARRAY_LEN(tests), argc, argv);
}
