/*
 * expr_datefmt.c -- DATE_FORMAT's patterns: Flink formats a TIMESTAMP with
 * java.time's DateTimeFormatter.ofPattern (in UTC, for TIMESTAMP(3)), and
 * these are its pattern letters, in English.
 *
 * A pattern is compiled once (at check time when it is a constant) into a
 * list of ops: a field is a letter and how often it is repeated, literal text
 * is a slice of the pattern. Writing walks the ops with the date split out
 * by lib/calendar.c; it allocates nothing. The letters are those whose
 * output does not depend on a locale's week rules or on a time zone (a
 * TIMESTAMP has none): G y Q M d D E a h K k H m s S. Every other ASCII
 * letter is refused with a message, as DateTimeFormatter refuses unknown
 * ones, and so are the counts it refuses ("Too many pattern letters").
 * Quoted text ('T', with '' for a quote) and any other byte are copied;
 * optional sections [...] always print, since a TIMESTAMP has every field.
 */
#include <stdio.h>
#include <string.h>

#include "expr_int.h"
#include "calendar.h"

static const char *const month_full[12] = {"January", "February", "March",     "April",
                                           "May",     "June",     "July",      "August",
                                           "September", "October", "November", "December"};
/* Monday first, as java.time's DayOfWeek */
static const char *const dow_full[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                        "Friday", "Saturday", "Sunday"};
static const char *const quarter_full[4] = {"1st quarter", "2nd quarter", "3rd quarter",
                                            "4th quarter"};

/* The largest count each supported letter takes (DateTimeFormatter's). */
static int max_count(char c)
{
    switch (c) {
    case 'y': return 19;
    case 'S': return 9;
    case 'G': case 'Q': case 'M': case 'E': return 5;
    case 'D': return 3;
    case 'd': case 'h': case 'K': case 'k': case 'H': case 'm': case 's': return 2;
    case 'a': return 1;
    default: return 0;
    }
}

static size_t max_width(char c, int count)
{
    switch (c) {
    case 'y': return (size_t)(count > 12 ? count : 12) + 1; /* a sign, 9 digits of years */
    case 'S': return (size_t)count;
    case 'G': return 13;  /* "Before Christ" */
    case 'Q': return 11;  /* "4th quarter" */
    case 'M': case 'E': return 9; /* "September", "Wednesday" */
    default: return 3;
    }
}

int sl_dfmt_compile(const char *pat, size_t n, bool sdf, sl_dfmt_op *ops, int cap, int *nops,
                    size_t *maxlen, char *err, size_t errlen)
{
    int k = 0, depth = 0;
    size_t total = 0;
#define EMIT(L, C, O, N)                                                                       \
    do {                                                                                       \
        if (k == cap) return sl_seterr(err, errlen, "format has more than %d fields", cap);   \
        ops[k++] = (sl_dfmt_op){.letter = (L), .count = (uint8_t)(C), .off = (uint32_t)(O),   \
                                .len = (uint32_t)(N)};                                         \
    } while (0)
    if (n > UINT32_MAX / 2) return sl_seterr(err, errlen, "format too long");
    for (size_t i = 0; i < n;) {
        char c = pat[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t j = i;
            while (j < n && pat[j] == c) j++;
            size_t count = j - i;
            int mc = max_count(c);
            if (!mc) {
                if (strchr("VzOXxZv", c))
                    return sl_seterr(err, errlen, "pattern letter '%c' is a time zone; a "
                                     "TIMESTAMP has none", c);
                if (strchr("uwWYecFgnNAL", c))
                    return sl_seterr(err, errlen, "pattern letter '%c' is not supported", c);
                return sl_seterr(err, errlen, "unknown pattern letter '%c'", c);
            }
            if (count > (size_t)mc)
                return sl_seterr(err, errlen, "too many pattern letters '%c' (at most %d)", c,
                                 mc);
            /* SimpleDateFormat (the STRING form) has no quarter, and the
             * five-letter narrow forms ("J" for January) print in full there */
            if (sdf && (c == 'Q' || ((c == 'M' || c == 'E' || c == 'G') && count >= 4)))
                return sl_seterr(err, errlen, "pattern '%.*s' is not supported when "
                                 "formatting a STRING (Flink's SimpleDateFormat differs)",
                                 (int)count, pat + i);
            EMIT(c, count, 0, 0);
            total += max_width(c, (int)count);
            i = j;
        } else if (c == '\'') {
            if (i + 1 < n && pat[i + 1] == '\'') { /* '' is a quote */
                EMIT(0, 0, i, 1);
                total += 1;
                i += 2;
                continue;
            }
            size_t j = ++i;
            for (;;) {
                while (j < n && pat[j] != '\'') j++;
                if (j >= n)
                    return sl_seterr(err, errlen, "format ends inside quoted text");
                if (j > i) {
                    EMIT(0, 0, i, j - i);
                    total += j - i;
                }
                if (j + 1 < n && pat[j + 1] == '\'') { /* a quote inside the text */
                    EMIT(0, 0, j, 1);
                    total += 1;
                    i = j += 2;
                    continue;
                }
                i = j + 1;
                break;
            }
        } else if (c == '[' || c == ']') {
            if (c == ']' && depth == 0)
                return sl_seterr(err, errlen, "format has ']' without '['");
            depth += c == '[' ? 1 : -1;
            i++;
        } else if (c == '{' || c == '}' || c == '#') {
            return sl_seterr(err, errlen, "format uses reserved character '%c' (quote it)", c);
        } else {
            size_t j = i;
            while (j < n && !strchr("[]{}#'", pat[j]) &&
                   !((pat[j] >= 'a' && pat[j] <= 'z') || (pat[j] >= 'A' && pat[j] <= 'Z')))
                j++;
            EMIT(0, 0, i, j - i);
            total += j - i;
            i = j;
        }
    }
#undef EMIT
    *nops = k;
    *maxlen = total;
    return SL_OK;
}

/* v in decimal, zero-padded to at least `width` digits (v >= 0). */
static size_t put_num(char *dst, uint64_t v, int width)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    size_t o = 0;
    for (int i = n; i < width; i++) dst[o++] = '0';
    while (n) dst[o++] = tmp[--n];
    return o;
}

static size_t put_str(char *dst, const char *s, size_t n)
{
    memcpy(dst, s, n);
    return n;
}

/* Text fields: count 1-3 short ("Jan"), 4 full ("January"), 5 narrow ("J"). */
static size_t put_text(char *dst, const char *full, int count)
{
    size_t len = strlen(full);
    return put_str(dst, full, count == 4 ? len : count == 5 ? 1 : 3 < len ? 3 : len);
}

size_t sl_dfmt_write(const sl_dfmt_op *ops, int nops, const char *pat, int64_t ms, char *dst)
{
    sl_civil c = sl_civil_from_ms(ms);
    size_t o = 0;
    for (int i = 0; i < nops; i++) {
        const sl_dfmt_op *op = &ops[i];
        int n = op->count;
        switch (op->letter) {
        case 0: o += put_str(dst + o, pat + op->off, op->len); break;
        case 'G': {
            bool ad = c.year >= 1;
            o += n == 4 ? put_str(dst + o, ad ? "Anno Domini" : "Before Christ", ad ? 11 : 13)
                 : n == 5 ? put_str(dst + o, ad ? "A" : "B", 1)
                          : put_str(dst + o, ad ? "AD" : "BC", 2);
            break;
        }
        case 'y': { /* the year of the era: 1 BC is 1 */
            uint64_t yoe = c.year >= 1 ? (uint64_t)c.year : (uint64_t)(1 - c.year);
            if (n == 2) {
                o += put_num(dst + o, yoe % 100, 2);
                break;
            }
            uint64_t lim = 1; /* 10^n: a wider year takes a '+' from 4 letters on */
            for (int k = 0; k < n && lim <= yoe; k++) lim *= 10;
            if (n >= 4 && yoe >= lim) dst[o++] = '+';
            o += put_num(dst + o, yoe, n);
            break;
        }
        case 'Q': {
            int q = (c.month - 1) / 3 + 1;
            if (n <= 2 || n == 5) o += put_num(dst + o, (uint64_t)q, n == 2 ? 2 : 1);
            else if (n == 3) dst[o++] = 'Q', o += put_num(dst + o, (uint64_t)q, 1);
            else o += put_str(dst + o, quarter_full[q - 1], strlen(quarter_full[q - 1]));
            break;
        }
        case 'M':
            if (n <= 2) o += put_num(dst + o, (uint64_t)c.month, n);
            else o += put_text(dst + o, month_full[c.month - 1], n);
            break;
        case 'd': o += put_num(dst + o, (uint64_t)c.day, n); break;
        case 'D':
            o += put_num(dst + o, (uint64_t)sl_civil_extract(SL_XU_DOY, ms), n);
            break;
        case 'E':
            o += put_text(dst + o, dow_full[sl_civil_extract(SL_XU_ISODOW, ms) - 1], n);
            break;
        case 'a': o += put_str(dst + o, c.hour < 12 ? "AM" : "PM", 2); break;
        case 'h': o += put_num(dst + o, (uint64_t)(c.hour % 12 ? c.hour % 12 : 12), n); break;
        case 'K': o += put_num(dst + o, (uint64_t)(c.hour % 12), n); break;
        case 'k': o += put_num(dst + o, (uint64_t)(c.hour ? c.hour : 24), n); break;
        case 'H': o += put_num(dst + o, (uint64_t)c.hour, n); break;
        case 'm': o += put_num(dst + o, (uint64_t)c.minute, n); break;
        case 's': o += put_num(dst + o, (uint64_t)c.second, n); break;
        case 'S': { /* the first n digits of the fraction of the second */
            char frac[9];
            put_num(frac, (uint64_t)c.milli, 3);
            for (int k = 0; k < n; k++) dst[o++] = k < 3 ? frac[k] : '0';
            break;
        }
        }
    }
    return o;
}

/* Digits s[*i..] (at most `max`, at least one) as a number. */
static bool digits(const char *s, size_t n, size_t *i, int max, int *out)
{
    int v = 0, k = 0;
    while (*i < n && k < max && is_digit((unsigned char)s[*i])) v = v * 10 + (s[(*i)++] - '0'), k++;
    *out = v;
    return k > 0;
}

bool sl_dfmt_parse_default(const char *s, size_t n, int64_t *ms)
{
    size_t i = 0;
    int y, mo, d, h, mi, sec;
    if (!digits(s, n, &i, 4, &y) || i != 4 || i >= n || s[i++] != '-' ||
        !digits(s, n, &i, 2, &mo) || i >= n || s[i++] != '-' || !digits(s, n, &i, 2, &d) ||
        i >= n || s[i++] != ' ' || !digits(s, n, &i, 2, &h) || i >= n || s[i++] != ':' ||
        !digits(s, n, &i, 2, &mi) || i >= n || s[i++] != ':' || !digits(s, n, &i, 2, &sec))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > sl_days_in_month(y, mo) || h > 23 || mi > 59 ||
        sec > 59)
        return false;
    *ms = sl_days_from_civil(y, mo, d) * SL_MS_PER_DAY + ((h * 60 + mi) * 60 + sec) * 1000LL;
    return true;
}

int sl_dfmt_parse_check(const sl_dfmt_op *ops, int nops, char *err, size_t errlen)
{
    for (int i = 0; i < nops; i++) {
        char c = ops[i].letter;
        if (!c) continue;
        if (!strchr("yMdHms", c) && !(c == 'S' && ops[i].count == 3))
            return sl_seterr(err, errlen, "pattern letter '%c'%s is not supported for parsing "
                             "(only y, M, d, H, m, s and SSS)", c, c == 'S' ? " other than SSS" : "");
        if ((c == 'M' && ops[i].count > 2) || (c == 'y' && ops[i].count == 2))
            return sl_seterr(err, errlen, "pattern '%.*s' is not supported for parsing",
                             (int)ops[i].count, c == 'M' ? "MMMMM" : "yy");
    }
    return SL_OK;
}

bool sl_dfmt_parse(const sl_dfmt_op *ops, int nops, const char *pat, const char *s, size_t n,
                   bool full, int64_t *ms)
{
    int f[7] = {1970, 1, 1, 0, 0, 0, 0}; /* y M d H m s S */
    size_t i = 0;
    for (int k = 0; k < nops; k++) {
        const sl_dfmt_op *op = &ops[k];
        if (!op->letter) {
            if (n - i < op->len || memcmp(s + i, pat + op->off, op->len)) return false;
            i += op->len;
            continue;
        }
        /* a field followed by another numeric field takes exactly its width */
        bool abut = k + 1 < nops && ops[k + 1].letter;
        int width = abut || op->letter == 'S' ? op->count : op->letter == 'y' ? 9 : 2, v;
        size_t at = i;
        if (!digits(s, n, &i, width, &v) || (abut && i - at != (size_t)op->count)) return false;
        f[strchr("yMdHmsS", op->letter) - "yMdHmsS"] = v;
    }
    if (full && i != n) return false;
    if (f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > sl_days_in_month(f[0], f[1]) || f[3] > 23 ||
        f[4] > 59 || f[5] > 59)
        return false;
    *ms = sl_days_from_civil(f[0], f[1], f[2]) * SL_MS_PER_DAY +
          ((f[3] * 60 + f[4]) * 60 + f[5]) * 1000LL + f[6];
    return true;
}
