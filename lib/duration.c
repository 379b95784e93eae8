/*
 * duration.c -- the one duration parser (see duration.h): a number, then a
 * time unit from one table, checked for sign and int64 overflow.
 */
#include "duration.h"
#include "sl.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    int64_t ms;
} units[] = {
    {"ms", 1},           {"milli", 1},        {"millis", 1},      {"millisecond", 1},
    {"milliseconds", 1}, {"s", 1000},         {"sec", 1000},      {"secs", 1000},
    {"second", 1000},    {"seconds", 1000},   {"m", 60000},       {"min", 60000},
    {"mins", 60000},     {"minute", 60000},   {"minutes", 60000}, {"h", 3600000},
    {"hour", 3600000},   {"hours", 3600000},  {"d", 86400000},    {"day", 86400000},
    {"days", 86400000},
};

bool sl_duration_unit(const char *u, size_t n, int64_t *ms)
{
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && strncasecmp(u, units[i].name, n) == 0) {
            *ms = units[i].ms;
            return true;
        }
    return false;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

sl_dur_rc sl_duration_value(const char *num, size_t num_len, const char *unit, size_t unit_len,
                            int64_t *ms)
{
    size_t i = 0;
    bool neg = false;
    if (i < num_len && (num[i] == '-' || num[i] == '+')) neg = num[i++] == '-';
    if (i >= num_len) return SL_DUR_FORM;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < num_len; i++) {
        if (num[i] < '0' || num[i] > '9') return SL_DUR_FORM;
        unsigned dgt = (unsigned)(num[i] - '0');
        if (v > (lim - dgt) / 10) return SL_DUR_FORM; /* not an int64 */
        v = v * 10 + dgt;
    }
    int64_t mult = 1;
    if (unit_len > 0 && !sl_duration_unit(unit, unit_len, &mult)) return SL_DUR_UNIT;
    if (neg && v > 0) return SL_DUR_NEGATIVE;
    if (v > (uint64_t)INT64_MAX / (uint64_t)mult) return SL_DUR_RANGE;
    *ms = (int64_t)v * mult;
    return SL_DUR_OK;
}

sl_dur_rc sl_duration_parse(const char *s, size_t n, int64_t *ms, const char **unit,
                            size_t *unit_len)
{
    while (n > 0 && is_blank(*s)) s++, n--;
    while (n > 0 && is_blank(s[n - 1])) n--;
    size_t i = 0;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || (i == 0 && (s[i] == '-' || s[i] == '+'))))
        i++;
    size_t num_len = i;
    while (i < n && is_blank(s[i])) i++;
    *unit = s + i;
    *unit_len = n - i;
    return sl_duration_value(s, num_len, s + i, n - i, ms);
}

int sl_interval_parse(const char *text, int64_t *ms, char *err, size_t errlen)
{
    if (!text) return sl_seterr(err, errlen, "missing interval");
    const char *s = text;
    size_t n = strlen(s);
    while (n > 0 && (*s == ' ' || *s == '\t')) s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;

    const char *num, *unit;
    size_t num_len, unit_len = 0;
    sl_dur_rc rc;
    if (n > 8 && strncasecmp(s, "INTERVAL", 8) == 0 && (s[8] == ' ' || s[8] == '\t')) {
        /* INTERVAL '10' SECOND */
        size_t i = 8;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= n || s[i] != '\'') goto bad;
        num = s + ++i;
        while (i < n && s[i] != '\'') i++;
        if (i >= n) goto bad;
        num_len = (size_t)(s + i - num);
        i++;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        unit = s + i;
        unit_len = n - i;
        if (unit_len == 0) goto bad;
        while (num_len > 0 && *num == ' ') num++, num_len--;
        while (num_len > 0 && num[num_len - 1] == ' ') num_len--;
        rc = sl_duration_value(num, num_len, unit, unit_len, ms);
    } else {
        rc = sl_duration_parse(s, n, ms, &unit, &unit_len); /* 5 s, 100ms, 50000 */
    }
    switch (rc) {
    case SL_DUR_OK: return SL_OK;
    case SL_DUR_FORM: goto bad;
    case SL_DUR_UNIT:
        return sl_seterr(err, errlen,
                         "invalid interval '%s': unknown unit '%.*s' (use ms, s, min, h or d)",
                         text, (int)unit_len, unit);
    case SL_DUR_NEGATIVE:
        return sl_seterr(err, errlen, "invalid interval '%s': must not be negative", text);
    case SL_DUR_RANGE: return sl_seterr(err, errlen, "invalid interval '%s': too large", text);
    }
bad:
    return sl_seterr(err, errlen,
                     "invalid interval '%s': expected a form like '5 s', '100 ms' or "
                     "INTERVAL '10' SECOND",
                     text);
}
