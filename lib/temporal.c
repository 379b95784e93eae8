/*
 * temporal.c -- date and time text and time zones (see temporal.h).
 *
 * Parsing walks the text with one cursor: blanks, then numbers of one or
 * more digits between fixed separators, then blanks; every field is range
 * checked before it is combined. Printing builds on lib/calendar.h's civil
 * split and Java's year form (sl_civil_format_year).
 *
 * Zones are ICU calendars (ucal): a UCalendar answers both questions we
 * ask -- the offset at an instant, and the instant of a wall-clock time --
 * with the gap and overlap rules set to java.time's. A fixed offset is an
 * ICU custom zone ("GMT+08:00") after the Java forms are read here.
 */
#include "temporal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ucal.h>
#include <unicode/ustring.h>

#include "calendar.h"
#include "sl.h"

/* ---------------------------------------------------------------- reading */

typedef struct cursor {
    const char *s;
    size_t i, n;
} cursor;

static void skip_blanks(cursor *c)
{
    while (c->i < c->n && (unsigned char)c->s[c->i] <= ' ') c->i++;
}

/* 1..max digits as a number; false when there are none or more */
static bool number(cursor *c, int max, int64_t *out)
{
    int64_t v = 0;
    int k = 0;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        if (++k > max) return false;
        v = v * 10 + (c->s[c->i++] - '0');
    }
    *out = v;
    return k > 0;
}

static bool expect(cursor *c, char ch)
{
    if (c->i < c->n && c->s[c->i] == ch) {
        c->i++;
        return true;
    }
    return false;
}

/* ".fffffffff": the fraction as nanoseconds, cut to `keep` digits; a '.'
 * without digits is 0 when bare_point */
static bool fraction(cursor *c, int keep, bool bare_point, int64_t *nanos)
{
    *nanos = 0;
    if (!expect(c, '.')) return true;
    int k = 0;
    int64_t v = 0;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        if (k < 9) v = v * 10 + (k < keep ? c->s[c->i] - '0' : 0);
        k++;
        c->i++;
    }
    if ((k == 0 && !bare_point) || k > 9) return false;
    for (; k < 9; k++) v *= 10;
    *nanos = v;
    return true;
}

static bool date_part(cursor *c, int64_t *days)
{
    int64_t y, m, d;
    if (!number(c, 4, &y) || !expect(c, '-') || !number(c, 2, &m) || !expect(c, '-') ||
        !number(c, 2, &d))
        return false;
    if (y < 1 || m < 1 || m > 12 || d < 1 || d > sl_days_in_month(y, (int)m)) return false;
    *days = sl_days_from_civil(y, (int)m, (int)d);
    return true;
}

/* "h:m[:s[.f]]" into nanoseconds of the day; a TIMESTAMP's time (ts) needs
 * the seconds and may end in a bare '.', as Flink reads them */
static bool time_part(cursor *c, int keep, bool ts, int64_t *nanos)
{
    int64_t h, m, s = 0, f = 0;
    if (!number(c, 2, &h) || !expect(c, ':') || !number(c, 2, &m)) return false;
    if (expect(c, ':')) {
        if (!number(c, 2, &s) || !fraction(c, keep, ts, &f)) return false;
    } else if (ts) {
        return false;
    }
    if (h > 23 || m > 59 || s > 59) return false;
    *nanos = ((h * 60 + m) * 60 + s) * 1000000000LL + f;
    return true;
}

static bool at_end(cursor *c)
{
    skip_blanks(c);
    return c->i == c->n;
}

int sl_date_parse(const char *s, size_t len, int32_t *days)
{
    cursor c = {s, 0, len};
    skip_blanks(&c);
    int64_t d, t;
    if (!date_part(&c, &d)) return SL_ERR;
    if (c.i < c.n && (c.s[c.i] == ' ' || c.s[c.i] == 'T')) { /* a time after it */
        cursor save = c;
        c.i++;
        if (!time_part(&c, 9, false, &t)) c = save;
    }
    if (!at_end(&c)) return SL_ERR;
    *days = (int32_t)d;
    return SL_OK;
}

int sl_time_parse(const char *s, size_t len, int p, int32_t *ms)
{
    cursor c = {s, 0, len};
    skip_blanks(&c);
    int64_t t;
    if (!time_part(&c, p < 3 ? p : 3, false, &t) || !at_end(&c)) return SL_ERR;
    *ms = (int32_t)(t / 1000000);
    return SL_OK;
}

int sl_timestamp_parse(const char *s, size_t len, int p, sl_ts *out)
{
    cursor c = {s, 0, len}; /* no blanks around it, unlike DATE and TIME */
    int64_t d, t = 0;
    if (!date_part(&c, &d)) return SL_ERR;
    if (expect(&c, ' ') && !time_part(&c, p, true, &t)) return SL_ERR;
    if (c.i != c.n) return SL_ERR;
    out->ms = d * SL_MS_PER_DAY + t / 1000000;
    out->nano = (int32_t)(t % 1000000);
    return SL_OK;
}

/* ---------------------------------------------------------------- printing */

/* buf[0..n) into dst as snprintf would */
static int put(char *dst, size_t cap, const char *buf, int n)
{
    if (cap > 0) {
        size_t k = (size_t)n < cap ? (size_t)n : cap - 1;
        memcpy(dst, buf, k);
        dst[k] = '\0';
    }
    return n;
}

int sl_date_format(char *dst, size_t cap, int32_t days)
{
    int64_t y;
    int m, d;
    sl_civil_from_days(days, &y, &m, &d);
    char ys[24], buf[40];
    sl_civil_format_year(ys, sizeof ys, y);
    return put(dst, cap, buf, snprintf(buf, sizeof buf, "%s-%02d-%02d", ys, m, d));
}

/* java.time's seconds-and-fraction tail of a time of day: ":ss" when the
 * seconds or the fraction are not 0, then ".fff", ".ffffff" or
 * ".fffffffff", the fewest groups of 3 that hold the nanoseconds */
static int java_tail(char *buf, size_t cap, int sec, int64_t nanos)
{
    int n = 0;
    if (sec == 0 && nanos == 0) return 0;
    n += snprintf(buf, cap, ":%02d", sec);
    if (nanos == 0) return n;
    if (nanos % 1000000 == 0) n += snprintf(buf + n, cap - (size_t)n, ".%03lld", (long long)(nanos / 1000000));
    else if (nanos % 1000 == 0) n += snprintf(buf + n, cap - (size_t)n, ".%06lld", (long long)(nanos / 1000));
    else n += snprintf(buf + n, cap - (size_t)n, ".%09lld", (long long)nanos);
    return n;
}

int sl_time_format(char *dst, size_t cap, int32_t ms, int p, sl_tt_style style)
{
    char buf[40];
    int h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, f = ms % 1000;
    int n = snprintf(buf, sizeof buf, "%02d:%02d", h, m);
    if (style == SL_TT_JAVA) {
        n += java_tail(buf + n, sizeof buf - (size_t)n, s, (int64_t)f * 1000000);
    } else {
        n += snprintf(buf + n, sizeof buf - (size_t)n, ":%02d", s);
        if (f && p > 0) {
            n += snprintf(buf + n, sizeof buf - (size_t)n, ".%03d", f);
            while (buf[n - 1] == '0') n--;
            buf[n] = '\0';
        }
    }
    return put(dst, cap, buf, n);
}

int sl_timestamp_format(char *dst, size_t cap, sl_ts v, int p, sl_tt_style style)
{
    sl_civil c = sl_civil_from_ms(v.ms);
    char ys[24], buf[64];
    sl_civil_format_year(ys, sizeof ys, c.year);
    int64_t nanos = (int64_t)c.milli * 1000000 + v.nano;
    int n = snprintf(buf, sizeof buf, "%s-%02d-%02d%c%02d:%02d", ys, c.month, c.day,
                     style == SL_TT_SQL ? ' ' : 'T', c.hour, c.minute);
    if (style == SL_TT_JAVA) {
        n += java_tail(buf + n, sizeof buf - (size_t)n, c.second, nanos);
    } else if (style == SL_TT_INSTANT) { /* ":ss" always, then the groups */
        if (c.second == 0 && nanos == 0) n += snprintf(buf + n, sizeof buf - (size_t)n, ":00");
        else n += java_tail(buf + n, sizeof buf - (size_t)n, c.second, nanos);
        n += snprintf(buf + n, sizeof buf - (size_t)n, "Z");
    } else {
        n += snprintf(buf + n, sizeof buf - (size_t)n, ":%02d", c.second);
        if (p > 0) {
            char f[24];
            snprintf(f, sizeof f, "%09lld", (long long)nanos);
            n += snprintf(buf + n, sizeof buf - (size_t)n, ".%.*s", p > 9 ? 9 : p, f);
        }
    }
    return put(dst, cap, buf, n);
}

int sl_interval_ym_format(char *dst, size_t cap, int32_t months)
{
    char buf[32];
    int64_t v = months;
    char sign = v < 0 ? '-' : '+';
    if (v < 0) v = -v;
    return put(dst, cap, buf,
               snprintf(buf, sizeof buf, "%c%lld-%02lld", sign, (long long)(v / 12), (long long)(v % 12)));
}

int sl_interval_dt_format(char *dst, size_t cap, int64_t ms)
{
    char buf[48];
    char sign = ms < 0 ? '-' : '+';
    uint64_t v = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    int n = snprintf(buf, sizeof buf, "%c%llu %02llu:%02llu:%02llu.%03llu", sign,
                     (unsigned long long)(v / 86400000), (unsigned long long)(v / 3600000 % 24),
                     (unsigned long long)(v / 60000 % 60), (unsigned long long)(v / 1000 % 60),
                     (unsigned long long)(v % 1000));
    return put(dst, cap, buf, n);
}

static int sign_of(cursor *c)
{
    if (expect(c, '-')) return -1;
    expect(c, '+');
    return 1;
}

int sl_interval_ym_parse(const char *s, size_t len, int32_t *months)
{
    cursor c = {s, 0, len};
    skip_blanks(&c);
    int sg = sign_of(&c);
    int64_t y, m;
    if (!number(&c, 9, &y) || !expect(&c, '-') || !number(&c, 2, &m) || m > 11 || !at_end(&c))
        return SL_ERR;
    int64_t v = y * 12 + m;
    if (v > INT32_MAX) return SL_ERR;
    *months = (int32_t)(sg * v);
    return SL_OK;
}

int sl_interval_dt_parse(const char *s, size_t len, int64_t *ms)
{
    cursor c = {s, 0, len};
    skip_blanks(&c);
    int sg = sign_of(&c);
    int64_t d, t;
    if (!number(&c, 9, &d) || !expect(&c, ' ') || !time_part(&c, 3, false, &t) || !at_end(&c))
        return SL_ERR;
    *ms = sg * (d * SL_MS_PER_DAY + t / 1000000);
    return SL_OK;
}

/* ---------------------------------------------------------------- zones */

struct sl_tz {
    UCalendar *cal;
    char name[64];
};

/* A java.time offset ("+8", "+08", "+08:00", "+0800", "+08:00:00") at s:
 * its seconds east of UTC; false if s is no such offset. */
static bool java_offset(const char *s, int *secs)
{
    if (*s != '+' && *s != '-') return false;
    int sg = *s == '-' ? -1 : 1;
    s++;
    int f[3] = {0, 0, 0}, nf = 0;
    size_t len = strlen(s);
    if (len == 1 || len == 2) { /* h or hh */
        for (size_t i = 0; i < len; i++)
            if (s[i] < '0' || s[i] > '9') return false;
        f[0] = atoi(s);
        nf = 1;
    } else {
        bool colon = len > 2 && s[2] == ':';
        size_t i = 0;
        while (i < len && nf < 3) {
            if (nf > 0 && colon && !(s[i] == ':' && i++ < len)) return false;
            if (i + 2 > len || s[i] < '0' || s[i] > '9' || s[i + 1] < '0' || s[i + 1] > '9')
                return false;
            f[nf++] = (s[i] - '0') * 10 + (s[i + 1] - '0');
            i += 2;
        }
        if (i != len || nf < 2) return false;
    }
    if (f[0] > 18 || f[1] > 59 || f[2] > 59) return false;
    int v = f[0] * 3600 + f[1] * 60 + f[2];
    if (v > 18 * 3600) return false;
    *secs = sg * v;
    return true;
}

/* The three-letter IDs java.util.TimeZone knows and java.time.ZoneId does
 * not (ZoneId.SHORT_IDS less the tz database's own EST, MST and HST). */
static bool legacy_short_id(const char *name)
{
    static const char *const ids[] = {"ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT",
                                      "CNT", "CST", "CTT", "EAT", "ECT", "IET", "IST", "JST",
                                      "MIT", "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST",
                                      "VST"};
    for (size_t i = 0; i < SL_ARRAY_LEN(ids); i++)
        if (!strcmp(name, ids[i])) return true;
    return false;
}

sl_tz *sl_tz_open(const char *name, sl_tz_rules rules, char *err, size_t errlen)
{
    char id[64];
    if (rules == SL_TZ_JAVA_UTIL) {
        if (strlen(name) >= sizeof id) name = "GMT"; /* no zone: GMT, as Java */
        snprintf(id, sizeof id, "%s", name);
        UChar uid[64];
        UErrorCode st = U_ZERO_ERROR;
        u_uastrcpy(uid, id);
        /* an ID ICU does not know is its "Etc/Unknown", which is GMT */
        UCalendar *cal = ucal_open(uid, -1, "en_US@calendar=gregorian", UCAL_GREGORIAN, &st);
        if (U_FAILURE(st) || !cal) {
            if (err) snprintf(err, errlen, "time zone '%s': %s", name, u_errorName(st));
            return NULL;
        }
        ucal_setGregorianChange(cal, -1e300, &st); /* proleptic, as the rest */
        ucal_setAttribute(cal, UCAL_REPEATED_WALL_TIME, UCAL_WALLTIME_LAST);
        ucal_setAttribute(cal, UCAL_SKIPPED_WALL_TIME, UCAL_WALLTIME_LAST);
        sl_tz *tz = sl_calloc(1, sizeof *tz);
        tz->cal = cal;
        snprintf(tz->name, sizeof tz->name, "%s", id);
        return tz;
    }
    int secs = 0;
    const char *rest = name;
    if (!strncmp(name, "UTC", 3)) rest = name + 3;
    else if (!strncmp(name, "GMT", 3)) rest = name + 3;
    else if (!strncmp(name, "UT", 2)) rest = name + 2;
    if (!strcmp(name, "Z") || (rest != name && *rest == '\0')) {
        snprintf(id, sizeof id, "UTC");
    } else if (java_offset(rest, &secs)) {
        int a = secs < 0 ? -secs : secs;
        if (a % 60) { /* ICU custom zones stop at minutes */
            if (err) snprintf(err, errlen, "time zone '%s': offsets with seconds are not supported", name);
            return NULL;
        }
        snprintf(id, sizeof id, "GMT%c%02d:%02d", secs < 0 ? '-' : '+', a / 3600, a / 60 % 60);
    } else if (rest != name || strlen(name) >= sizeof id || legacy_short_id(name)) {
        if (err) snprintf(err, errlen, "unknown time zone '%s'", name);
        return NULL;
    } else {
        snprintf(id, sizeof id, "%s", name);
    }
    UChar uid[64];
    UErrorCode st = U_ZERO_ERROR;
    u_uastrcpy(uid, id);
    if (strcmp(id, "UTC") && strncmp(id, "GMT", 3)) {
        /* a region: ICU must know it (it falls back to GMT quietly) */
        UBool system = 0;
        UChar canon[64];
        ucal_getCanonicalTimeZoneID(uid, -1, canon, 64, &system, &st);
        if (U_FAILURE(st) || !system) {
            if (err) snprintf(err, errlen, "unknown time zone '%s'", name);
            return NULL;
        }
    }
    UCalendar *cal = ucal_open(uid, -1, "en_US@calendar=gregorian", UCAL_GREGORIAN, &st);
    if (U_FAILURE(st) || !cal) {
        if (err) snprintf(err, errlen, "time zone '%s': %s", name, u_errorName(st));
        return NULL;
    }
    /* proleptic Gregorian, as java.time: no Julian calendar before 1582 */
    ucal_setGregorianChange(cal, -1e300, &st);
    ucal_setAttribute(cal, UCAL_REPEATED_WALL_TIME, UCAL_WALLTIME_FIRST);
    ucal_setAttribute(cal, UCAL_SKIPPED_WALL_TIME, UCAL_WALLTIME_LAST);
    sl_tz *tz = sl_calloc(1, sizeof *tz);
    tz->cal = cal;
    snprintf(tz->name, sizeof tz->name, "%s", id);
    return tz;
}

void sl_tz_destroy(sl_tz *tz)
{
    if (!tz) return;
    ucal_close(tz->cal);
    free(tz);
}

const char *sl_tz_name(const sl_tz *tz) { return tz->name; }

int64_t sl_tz_offset(sl_tz *tz, int64_t utc_ms)
{
    UErrorCode st = U_ZERO_ERROR; /* (a UDate is a double: exact to 2^53 ms) */
    ucal_setMillis(tz->cal, (UDate)utc_ms, &st);
    int32_t zone = ucal_get(tz->cal, UCAL_ZONE_OFFSET, &st);
    int32_t dst = ucal_get(tz->cal, UCAL_DST_OFFSET, &st);
    return U_FAILURE(st) ? 0 : (int64_t)zone + dst;
}

int64_t sl_tz_to_utc(sl_tz *tz, int64_t local_ms)
{
    /* ICU resolves the wall-clock fields (gaps and overlaps as set at
     * open); the extended year counts 0 and before as java.time does */
    UErrorCode st = U_ZERO_ERROR;
    sl_civil c = sl_civil_from_ms(local_ms);
    ucal_clear(tz->cal);
    ucal_set(tz->cal, UCAL_EXTENDED_YEAR, (int32_t)c.year);
    ucal_set(tz->cal, UCAL_MONTH, c.month - 1);
    ucal_set(tz->cal, UCAL_DATE, c.day);
    ucal_set(tz->cal, UCAL_HOUR_OF_DAY, c.hour);
    ucal_set(tz->cal, UCAL_MINUTE, c.minute);
    ucal_set(tz->cal, UCAL_SECOND, c.second);
    ucal_set(tz->cal, UCAL_MILLISECOND, c.milli);
    UDate t = ucal_getMillis(tz->cal, &st);
    if (U_FAILURE(st) || !(t > -9.2e18 && t < 9.2e18)) { /* out of ICU's range */
        int64_t off = sl_tz_offset(tz, local_ms);
        if ((off > 0 && local_ms < INT64_MIN + off) || (off < 0 && local_ms > INT64_MAX + off))
            return local_ms;
        return local_ms - off;
    }
    return (int64_t)t;
}

int64_t sl_tz_to_local(sl_tz *tz, int64_t utc_ms)
{
    int64_t off = sl_tz_offset(tz, utc_ms);
    if (off > 0 && utc_ms > INT64_MAX - off) return INT64_MAX;
    if (off < 0 && utc_ms < INT64_MIN - off) return INT64_MIN;
    return utc_ms + off;
}
