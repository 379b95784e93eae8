/*
 * duration.c -- the one duration parser (see duration.h): a number, then a
 * time unit from one table, checked for sign and int64 overflow.
 */
#include "duration.h"

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
