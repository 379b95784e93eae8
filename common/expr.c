/*
 * expr.c -- Flink SQL scalar expressions: tokenizer, type-checking parser
 * and a tree-walking evaluator.
 *
 * Parsing happens once per job (control plane) and may allocate freely:
 * the text is cut into a token array, then a recursive-descent parser with
 * one function per precedence level builds a tree of nodes. Every node is
 * typed the moment it is built -- columns resolve to indices, operands are
 * checked and promoted (INT < BIGINT < DOUBLE), TIMESTAMP/STRING comparisons
 * get an implicit CAST -- so a tree that parses can only fail at run time for
 * data reasons (division by zero, a bad CAST, scratch exhausted). Every node
 * also records its height; parser recursion and tree height are both capped
 * at SL_EXPR_MAX_DEPTH so a pathological text gets an error, not a stack
 * overflow, and evaluation recursion is bounded the same way.
 *
 * Evaluation (data plane) never mallocs and never writes to the tree:
 * children are evaluated into sl_values on the C stack, string results are
 * carved from the caller's scratch arena, and results that are a slice of
 * an input (SUBSTRING, TRIM) borrow it without copying. Integer arithmetic
 * wraps like Java's int/long (what Flink does); integer `/` truncates toward
 * zero and `%` takes the sign of the dividend, as C99 defines them.
 *
 * Beyond the list in expr.h: `||`, NULLIF, TRY_CAST (NULL instead of an
 * error), LTRIM/RTRIM, CEILING, CHARACTER_LENGTH, LIKE .. ESCAPE, IS
 * [NOT] UNKNOWN; the clock: CURRENT_TIMESTAMP[(p)], LOCALTIMESTAMP, NOW(),
 * CURRENT_ROW_TIMESTAMP() (the wall clock read at each evaluation, UTC,
 * TIMESTAMP(3)), UNIX_TIMESTAMP([s]), FROM_UNIXTIME(n), TIMESTAMPADD(unit,
 * n, ts), TIMESTAMPDIFF(unit, t1, t2); RAND([seed]) and RAND_INTEGER([seed,]
 * bound) on java.util.Random's generator, with their state kept per thread
 * (see "RAND" below).
 *
 * Intervals are day-time only (there are no year-month ones): a node of type
 * BIGINT flagged `interval` holds milliseconds and records its fields
 * (INTERVAL '1:30' MINUTE TO SECOND). Literals follow Flink: '1.5' SECOND,
 * the 'D HH:MM:SS.fff' forms, and a leading field of at most 2 digits unless
 * a precision is written (INTERVAL '100' SECOND(3)). TIMESTAMP +/- INTERVAL
 * is a TIMESTAMP; INTERVAL +/- INTERVAL, INTERVAL * INT and INTERVAL / INT
 * are intervals; an interval mixes with no other number and compares only
 * with intervals. CAST(n AS INTERVAL SECOND) counts the first field, CAST of
 * an interval to INT/BIGINT counts its last field, to STRING gives Flink's
 * "+0 00:00:05.000". A projected interval is a BIGINT of milliseconds (rows
 * have no interval type). TIMESTAMP <-> number CASTs are refused, as Flink
 * refuses them, with the function to use instead. Choices where SQL dialects
 * differ follow Flink: SUBSTRING counts a negative start from the end and
 * gives NULL for a negative length; TO_TIMESTAMP gives NULL for an
 * unparsable string; CAST(DOUBLE AS STRING) writes Java's form ("1.0E10");
 * DOUBLE -> integer CASTs saturate and BIGINT -> INT wraps, as Java does.
 * UPPER/LOWER change ASCII letters only. A bare NULL has type SL_T_NULL,
 * which every operator accepts and which evaluates to NULL.
 *
 * Positions in messages are 1-based byte offsets into the text.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"
#include "calendar.h"
#include "duration.h"

#define SL_EXPR_MAX_DEPTH 256 /* parser recursion and tree height limit */
#define SL_EXPR_MAX_ARGS 1000 /* arguments to one function */

/* ---- tokens ------------------------------------------------------------ */

typedef enum {
    TK_END,
    TK_INT,    /* digits only */
    TK_DEC,    /* a number with '.' or an exponent */
    TK_STR,    /* 'text' -- raw, '' not yet unescaped */
    TK_IDENT,  /* bare word */
    TK_QIDENT, /* `word` -- raw, `` not yet unescaped */
    TK_OP      /* punctuation: + - * / % ( ) , = <> != < <= > >= || */
} tk_kind;

typedef struct tok {
    tk_kind kind;
    int pos;       /* 0-based byte offset of the token's first character */
    const char *s; /* token text; for TK_STR/TK_QIDENT the inside of the quotes */
    size_t len;
} tok;

/* ---- the tree ------------------------------------------------------------ */

typedef enum {
    N_LIT, N_COL,
    N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_MOD, N_CONCAT,
    N_EQ, N_NE, N_LT, N_LE, N_GT, N_GE,
    N_AND, N_OR, N_NOT,
    N_IS_NULL, N_IS_TRUE, N_IS_FALSE, /* `neg` makes them IS NOT ... */
    N_BETWEEN, N_IN, N_LIKE,           /* `neg` makes them NOT ... */
    N_CASE, N_CAST,
    N_UPPER, N_LOWER, N_CHAR_LENGTH, N_ABS, N_COALESCE, N_IF, N_NULLIF,
    N_FLOOR, N_CEIL, N_TRIM, N_SUBSTRING, N_POSITION, N_TO_TS_LTZ, N_TO_TS,
    N_NOW,          /* CURRENT_TIMESTAMP, LOCALTIMESTAMP, NOW(), CURRENT_ROW_TIMESTAMP() */
    N_UNIX_TS,      /* UNIX_TIMESTAMP([s]) */
    N_FROM_UNIXTIME,
    N_RAND,         /* RAND([seed]) */
    N_RAND_INT,     /* RAND_INTEGER([seed,] bound) */
    N_TS_ADD,       /* TIMESTAMPADD(unit, n, ts); flags: the TU_* unit */
    N_TS_DIFF       /* TIMESTAMPDIFF(unit, t1, t2); flags: the TU_* unit */
} n_op;

/* TRIM sides (node flags) */
enum { TRIM_BOTH = 3, TRIM_LEADING = 1, TRIM_TRAILING = 2 };
/* CASE shape (node flags) */
enum { CASE_OPERAND = 1, CASE_ELSE = 2 };
/* RAND / RAND_INTEGER (node flags): a seed argument, and whether it is a literal */
enum { RAND_SEEDED = 1, RAND_FIXED = 2 };

/* Fields of a day-time interval, smallest first; an interval node records its
 * first and last field (INTERVAL '1:30' MINUTE TO SECOND: MINUTE, SECOND).
 * MILLISECOND is a Sluice extension (Flink writes INTERVAL '0.02' SECOND). */
enum { IV_MS, IV_SECOND, IV_MINUTE, IV_HOUR, IV_DAY, IV_N };
static const int64_t iv_ms[IV_N] = {1, 1000, 60000, 3600000, 86400000};
static const char *const iv_name[IV_N] = {"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"};

/* TIMESTAMPADD / TIMESTAMPDIFF units (node flags) */
enum { TU_SECOND, TU_MINUTE, TU_HOUR, TU_DAY, TU_WEEK, TU_MONTH, TU_QUARTER, TU_YEAR, TU_N };
static const char *const tu_name[TU_N] = {"SECOND", "MINUTE", "HOUR", "DAY",
                                          "WEEK",   "MONTH",  "QUARTER", "YEAR"};
static const int64_t tu_ms[TU_N] = {1000, 60000, 3600000, 86400000, 604800000, 0, 0, 0};
static const int tu_months[TU_N] = {0, 0, 0, 0, 0, 1, 3, 12};

typedef struct node node;
struct node {
    n_op op;
    sl_type type;     /* result type */
    sl_type ctype;    /* arithmetic: INT (32-bit wrap), BIGINT (64-bit wrap) or DOUBLE */
    bool interval;    /* a BIGINT holding a span of milliseconds: an INTERVAL ivs TO ive */
    uint8_t ivs, ive; /* interval: first and last field (IV_*), ivs >= ive */
    bool neg;         /* IS NOT / NOT BETWEEN / NOT IN / NOT LIKE; TRY_CAST */
    int flags;        /* TRIM side, CASE shape, TO_TIMESTAMP_LTZ precision (0 or 3) */
    int pos;          /* 1-based position for messages */
    int height;       /* 1 for a leaf; bounds evaluation recursion */
    int col;          /* N_COL: index in the input schema */
    sl_value lit;     /* N_LIT: the value (a string points at `owned`) */
    char *owned;      /* N_LIT strings: the unescaped bytes */
    int nkids;
    node **kids;      /* owned array of nkids borrowed nodes */
    node *next_all;   /* every node of a tree, for freeing */
    uint64_t serial;  /* RAND with a literal seed: names its sequence (see rand_state) */
};

struct sl_expr {
    node *root;
    node *all; /* list through next_all: owns every node */
};

/* ---- small helpers ------------------------------------------------------- */

static bool is_int_type(sl_type t) { return t == SL_T_INT || t == SL_T_BIGINT; }
static bool is_num_type(sl_type t) { return is_int_type(t) || t == SL_T_DOUBLE; }
static bool is_str_type(sl_type t) { return t == SL_T_STRING || t == SL_T_BYTES; }

static int num_rank(sl_type t) { return t == SL_T_INT ? 1 : t == SL_T_BIGINT ? 2 : 3; }

/* Wrap to 32 / 64 bits the way Java's int and long overflow, without UB. */
static int64_t wrap32(int64_t x)
{
    uint32_t u = (uint32_t)(uint64_t)x;
    return u >= 0x80000000u ? (int64_t)u - 0x100000000LL : (int64_t)u;
}

static int64_t wrap64(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

static bool word_eq(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

static bool is_ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_ident_char(unsigned char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Length of the UTF-8 sequence starting at s (at least 1, at most what is left). */
static size_t cp_len(const char *s, size_t left)
{
    unsigned char c = (unsigned char)s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return n > left ? left : n;
}

static int64_t cp_count(const char *s, size_t n)
{
    int64_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) k++;
    return k;
}

/* Byte offset of code point `k` (0-based) in s; n if past the end. */
static size_t cp_offset(const char *s, size_t n, int64_t k)
{
    size_t i = 0;
    while (k > 0 && i < n) {
        i += cp_len(s + i, n - i);
        k--;
    }
    return i;
}

/* ---- calendar: ms since the epoch <-> civil UTC time ---------------------- */

/* The calendar itself is common/calendar.c. */

/* "YYYY-MM-DD HH:MM:SS.mmm" -- the SQL form CAST(ts AS STRING) gives -- or,
 * without `frac`, "YYYY-MM-DD HH:MM:SS" (FROM_UNIXTIME's default format). */
static int ts_to_sql(char *dst, size_t cap, int64_t ms, bool frac)
{
    sl_civil c = sl_civil_from_ms(ms);
    int n = snprintf(dst, cap, "%04lld-%02d-%02d %02d:%02d:%02d", (long long)c.year, c.month,
                     c.day, c.hour, c.minute, c.second);
    if (frac && n > 0 && (size_t)n < cap) n += snprintf(dst + n, cap - (size_t)n, ".%03d", c.milli);
    return n;
}

/* Add `months` to a timestamp the way java.time's plusMonths does (what
 * Flink's TIMESTAMPADD does): the day of month is kept, or clamped to the
 * last day of a shorter month; the time of day is kept. False if the result
 * does not fit a TIMESTAMP. */
static bool add_months(int64_t ms, int64_t months, int64_t *out)
{
    int64_t days = sl_floor_div(ms, 86400000), tod = ms - days * 86400000, y;
    int m, d;
    sl_civil_from_days(days, &y, &m, &d);
    int64_t total; /* months since year 0 */
    if (__builtin_mul_overflow(y, 12, &total) || __builtin_add_overflow(total, m - 1, &total) ||
        __builtin_add_overflow(total, months, &total))
        return false;
    int64_t y2 = sl_floor_div(total, 12);
    int m2 = (int)(total - y2 * 12) + 1;
    if (y2 < -292000000 || y2 > 292000000) return false; /* beyond the int64 ms range */
    int d2 = d <= sl_days_in_month(y2, m2) ? d : sl_days_in_month(y2, m2);
    int64_t r;
    if (__builtin_mul_overflow(sl_days_from_civil(y2, m2, d2), 86400000, &r) ||
        __builtin_add_overflow(r, tod, &r))
        return false;
    *out = r;
    return true;
}

/* Whole months from a to b (negative when b < a): the largest m with
 * add_months(a, m) <= b, so Jan 31 -> Feb 28 (same time) is one month. */
static int64_t months_between(int64_t a, int64_t b)
{
    if (b < a) return -months_between(b, a);
    int64_t ya, yb, r;
    int ma, mb, d;
    sl_civil_from_days(sl_floor_div(a, 86400000), &ya, &ma, &d);
    sl_civil_from_days(sl_floor_div(b, 86400000), &yb, &mb, &d);
    int64_t m = (yb - ya) * 12 + (mb - ma); /* at most one too many */
    if (m > 0 && (!add_months(a, m, &r) || r > b)) m--;
    return m;
}

/* A day-time interval as Flink's CAST(... AS STRING) writes it, whatever its
 * fields: "+0 00:00:05.000", "-1 02:03:04.005" (days, then the time). */
static int iv_to_sql(char *dst, size_t cap, int64_t ms)
{
    uint64_t u = ms < 0 ? 0 - (uint64_t)ms : (uint64_t)ms; /* INT64_MIN has no positive */
    return snprintf(dst, cap, "%c%llu %02d:%02d:%02d.%03d", ms < 0 ? '-' : '+',
                    (unsigned long long)(u / 86400000), (int)(u / 3600000 % 24),
                    (int)(u / 60000 % 60), (int)(u / 1000 % 60), (int)(u % 1000));
}

/* Read exactly `w` digits. */
static bool read_digits(const char *s, size_t n, size_t *i, int w, int *out)
{
    int v = 0;
    for (int k = 0; k < w; k++) {
        if (*i >= n || !is_digit((unsigned char)s[*i])) return false;
        v = v * 10 + (s[(*i)++] - '0');
    }
    *out = v;
    return true;
}

/* Parse 'YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]]' (blanks around are allowed; digits
 * beyond milliseconds are dropped) into ms since the epoch, UTC. */
static bool ts_parse(const char *s, size_t n, int64_t *out)
{
    while (n > 0 && (s[0] == ' ' || s[0] == '\t')) s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    size_t i = 0;
    int y, mo, d, h = 0, mi = 0, sec = 0, frac = 0;
    if (!read_digits(s, n, &i, 4, &y) || i >= n || s[i++] != '-') return false;
    if (!read_digits(s, n, &i, 2, &mo) || i >= n || s[i++] != '-') return false;
    if (!read_digits(s, n, &i, 2, &d)) return false;
    if (i < n) {
        if (s[i] != ' ' && s[i] != 'T') return false;
        i++;
        if (!read_digits(s, n, &i, 2, &h) || i >= n || s[i++] != ':') return false;
        if (!read_digits(s, n, &i, 2, &mi)) return false;
        if (i < n && s[i] == ':') {
            i++;
            if (!read_digits(s, n, &i, 2, &sec)) return false;
            if (i < n && s[i] == '.') {
                i++;
                int nd = 0;
                while (i < n && is_digit((unsigned char)s[i])) {
                    if (nd < 3) frac = frac * 10 + (s[i] - '0');
                    nd++, i++;
                }
                if (nd == 0) return false;
                for (; nd < 3; nd++) frac *= 10;
            }
        }
    }
    if (i != n) return false;
    if (mo < 1 || mo > 12 || d < 1 || d > sl_days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
        return false;
    *out = sl_days_from_civil(y, mo, d) * 86400000 + (int64_t)h * 3600000 + (int64_t)mi * 60000 +
           (int64_t)sec * 1000 + frac;
    return true;
}

/* A DOUBLE as Java's Double.toString writes it (what Flink's CAST gives):
 * the shortest digits that read back exactly, plain between 1e-3 and 1e7
 * ("0.1", "100.0"), else scientific ("1.0E10", "1.5E-5"). */
static int double_to_str(char *dst, size_t cap, double x)
{
    if (isnan(x)) return snprintf(dst, cap, "NaN");
    if (isinf(x)) return snprintf(dst, cap, x < 0 ? "-Infinity" : "Infinity");
    if (x == 0) return snprintf(dst, cap, signbit(x) ? "-0.0" : "0.0");
    char sci[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(sci, sizeof sci, "%.*e", p - 1, x);
        if (strtod(sci, NULL) == x) break;
    }
    /* sci is "-d.ddde+XX": gather the digits and the exponent */
    char digits[24];
    int nd = 0;
    const char *c = sci;
    bool minus = *c == '-';
    if (minus) c++;
    for (; *c && *c != 'e'; c++)
        if (is_digit((unsigned char)*c) && nd < (int)sizeof digits - 1) digits[nd++] = *c;
    int exp10 = *c == 'e' ? atoi(c + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';

    char out[64];
    size_t o = 0;
    if (minus) out[o++] = '-';
    double ax = fabs(x);
    if (ax >= 1e-3 && ax < 1e7) {
        if (exp10 >= 0) {
            for (int k = 0; k <= exp10; k++) out[o++] = k < nd ? digits[k] : '0';
            out[o++] = '.';
            if (nd > exp10 + 1)
                for (int k = exp10 + 1; k < nd; k++) out[o++] = digits[k];
            else
                out[o++] = '0';
        } else {
            out[o++] = '0';
            out[o++] = '.';
            for (int k = 0; k < -exp10 - 1; k++) out[o++] = '0';
            for (int k = 0; k < nd; k++) out[o++] = digits[k];
        }
        out[o] = '\0';
    } else {
        out[o++] = digits[0];
        out[o++] = '.';
        if (nd > 1)
            for (int k = 1; k < nd; k++) out[o++] = digits[k];
        else
            out[o++] = '0';
        snprintf(out + o, sizeof out - o, "E%d", exp10);
    }
    return snprintf(dst, cap, "%s", out);
}

/* ---- intervals ----------------------------------------------------------- */

/* Parse an optionally signed decimal integer s[0..n) into *out (no overflow). */
static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i >= n) return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (!is_digit((unsigned char)s[i])) return false;
        unsigned dgt = (unsigned)(s[i] - '0');
        if (v > (lim - dgt) / 10) return false;
        v = v * 10 + dgt;
    }
    *out = neg ? wrap64(0 - v) : (int64_t)v;
    return true;
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

/* ---- tokenizer ----------------------------------------------------------- */

typedef struct parser {
    const char *text;
    const sl_schema *in;
    tok *toks;
    int ntok, cap;
    int i;         /* current token */
    int depth;     /* parser recursion */
    bool failed;   /* an error is set: keep the first, it is the precise one */
    node *all;     /* every node built so far */
    char *err;
    size_t errlen;
    char names[4][40]; /* ntname()'s results, reused round robin */
    int nname;
} parser;

static int perr(parser *p, int pos0, const char *fmt, ...) SL_PRINTF(3, 4);

/* Set a parse error (first one wins) with " at position N" appended. */
static int perr(parser *p, int pos0, const char *fmt, ...)
{
    if (p->err && p->errlen && !p->failed) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(p->err, p->errlen, "%s at position %d", msg, pos0 + 1);
    }
    p->failed = true;
    return SL_ERR;
}

static void push_tok(parser *p, tk_kind k, int pos, const char *s, size_t len)
{
    if (p->ntok == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->toks = sl_realloc(p->toks, (size_t)p->cap * sizeof *p->toks);
    }
    p->toks[p->ntok++] = (tok){k, pos, s, len};
}

static int tokenize(parser *p)
{
    const char *t = p->text;
    size_t i = 0;
    for (;;) {
        unsigned char c = (unsigned char)t[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
            continue;
        }
        int pos = (int)i;
        if (c == '\0') {
            push_tok(p, TK_END, pos, t + i, 0);
            return SL_OK;
        }
        if (c == '-' && t[i + 1] == '-') { /* comment to end of line */
            while (t[i] && t[i] != '\n') i++;
            continue;
        }
        if (is_digit(c) || (c == '.' && is_digit((unsigned char)t[i + 1]))) {
            bool dec = false;
            while (is_digit((unsigned char)t[i])) i++;
            if (t[i] == '.') {
                dec = true;
                i++;
                while (is_digit((unsigned char)t[i])) i++;
            }
            if (t[i] == 'e' || t[i] == 'E') {
                size_t j = i + 1;
                if (t[j] == '+' || t[j] == '-') j++;
                if (!is_digit((unsigned char)t[j]))
                    return perr(p, (int)i, "malformed number '%.*s'", (int)(j - (size_t)pos),
                                t + pos);
                while (is_digit((unsigned char)t[j])) j++;
                i = j;
                dec = true;
            }
            if (is_ident_char((unsigned char)t[i]))
                return perr(p, pos, "malformed number starting '%.*s'", (int)(i + 1 - (size_t)pos),
                            t + pos);
            push_tok(p, dec ? TK_DEC : TK_INT, pos, t + pos, i - (size_t)pos);
            continue;
        }
        if (c == '\'' || c == '`') {
            /* a doubled quote is an escaped quote */
            size_t j = i + 1;
            for (;;) {
                if (t[j] == '\0')
                    return perr(p, pos, "unterminated %s",
                                c == '\'' ? "string literal" : "quoted identifier");
                if ((unsigned char)t[j] == c) {
                    if ((unsigned char)t[j + 1] == c) {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j++;
            }
            push_tok(p, c == '\'' ? TK_STR : TK_QIDENT, pos, t + i + 1, j - i - 1);
            i = j + 1;
            continue;
        }
        if (is_ident_start(c)) {
            while (is_ident_char((unsigned char)t[i])) i++;
            push_tok(p, TK_IDENT, pos, t + pos, i - (size_t)pos);
            continue;
        }
        static const char *const two[] = {"<>", "!=", "<=", ">=", "||"};
        size_t olen = 0;
        for (size_t k = 0; k < SL_ARRAY_LEN(two); k++)
            if (t[i] == two[k][0] && t[i + 1] == two[k][1]) olen = 2;
        if (!olen && strchr("+-*/%(),=<>", c)) olen = 1;
        if (!olen) {
            if (c >= 0x20 && c < 0x7F) return perr(p, pos, "unexpected character '%c'", c);
            return perr(p, pos, "unexpected byte 0x%02x", c);
        }
        push_tok(p, TK_OP, pos, t + i, olen);
        i += olen;
    }
}

/* Copy a quoted token's inside, turning doubled quotes into one. Caller frees. */
static char *unquote(const tok *k, char q, size_t *len)
{
    char *d = sl_malloc(k->len + 1);
    size_t o = 0;
    for (size_t j = 0; j < k->len; j++) {
        d[o++] = k->s[j];
        if (k->s[j] == q && j + 1 < k->len && k->s[j + 1] == q) j++;
    }
    d[o] = '\0';
    if (len) *len = o;
    return d;
}

/* ---- parser plumbing ------------------------------------------------------ */

static const tok *peek(parser *p) { return &p->toks[p->i]; }
static const tok *peek_at(parser *p, int ahead)
{
    int j = p->i + ahead;
    return &p->toks[j < p->ntok ? j : p->ntok - 1];
}
static const tok *advance(parser *p)
{
    const tok *k = &p->toks[p->i];
    if (k->kind != TK_END) p->i++;
    return k;
}

static bool tok_is_op(const tok *k, const char *op)
{
    return k->kind == TK_OP && k->len == strlen(op) && memcmp(k->s, op, k->len) == 0;
}

static bool tok_is_kw(const tok *k, const char *kw)
{
    return k->kind == TK_IDENT && word_eq(k->s, k->len, kw);
}

static bool accept_op(parser *p, const char *op)
{
    if (!tok_is_op(peek(p), op)) return false;
    advance(p);
    return true;
}

static bool accept_kw(parser *p, const char *kw)
{
    if (!tok_is_kw(peek(p), kw)) return false;
    advance(p);
    return true;
}

/* Describe the current token for "expected X, found Y" messages. */
static int unexpected(parser *p, const char *expected)
{
    const tok *k = peek(p);
    if (k->kind == TK_END)
        return perr(p, k->pos, "expected %s but the expression ended", expected);
    int n = k->len > 40 ? 40 : (int)k->len;
    const char *q = k->kind == TK_STR ? "'" : k->kind == TK_QIDENT ? "`" : "";
    return perr(p, k->pos, "expected %s, found '%s%.*s%s'", expected, q, n, k->s, q);
}

static int expect_op(parser *p, const char *op)
{
    if (accept_op(p, op)) return SL_OK;
    char what[16];
    snprintf(what, sizeof what, "'%s'", op);
    return unexpected(p, what);
}

static int expect_kw(parser *p, const char *kw)
{
    if (accept_kw(p, kw)) return SL_OK;
    return unexpected(p, kw);
}

/* Words that end or join expressions and so cannot name a column unquoted. */
static bool is_reserved(const tok *k)
{
    static const char *const words[] = {
        "AND", "OR", "NOT", "IS", "NULL", "TRUE", "FALSE", "BETWEEN", "IN", "LIKE",
        "ESCAPE", "CASE", "WHEN", "THEN", "ELSE", "END", "AS", "FROM", "FOR", "UNKNOWN",
        "CURRENT_TIMESTAMP", "LOCALTIMESTAMP"};
    if (k->kind != TK_IDENT) return false;
    for (size_t i = 0; i < SL_ARRAY_LEN(words); i++)
        if (word_eq(k->s, k->len, words[i])) return true;
    return false;
}

static node *new_node(parser *p, n_op op, int pos0, int nkids)
{
    node *n = sl_calloc(1, sizeof *n);
    n->op = op;
    n->pos = pos0 + 1;
    n->nkids = nkids;
    n->kids = nkids ? sl_calloc((size_t)nkids, sizeof *n->kids) : NULL;
    n->height = 1;
    n->next_all = p->all;
    p->all = n;
    return n;
}

static void free_nodes(node *all)
{
    while (all) {
        node *next = all->next_all;
        free(all->kids);
        free(all->owned);
        free(all);
        all = next;
    }
}

/* Recompute the height after children are in place; refuse deep trees. */
static int seal(parser *p, node *n)
{
    for (int i = 0; i < n->nkids; i++)
        if (n->kids[i] && n->kids[i]->height + 1 > n->height) n->height = n->kids[i]->height + 1;
    if (n->height > SL_EXPR_MAX_DEPTH)
        return perr(p, n->pos - 1, "expression nested too deeply (limit %d)", SL_EXPR_MAX_DEPTH);
    return SL_OK;
}

/* Grow a node's child array by one (variadic forms: IN, CASE, functions). */
static void add_kid(node *n, node *kid)
{
    n->kids = sl_realloc(n->kids, (size_t)(n->nkids + 1) * sizeof *n->kids);
    n->kids[n->nkids++] = kid;
}

static const char *tname(sl_type t) { return sl_type_name(t); }

/* A node's type for messages: its sl_type, or "INTERVAL SECOND",
 * "INTERVAL DAY TO SECOND" for an interval. Valid for the next 3 calls. */
static const char *ntname(parser *p, const node *n)
{
    if (!n->interval) return tname(n->type);
    char *b = p->names[p->nname++ % 4];
    if (n->ivs == n->ive) snprintf(b, sizeof p->names[0], "INTERVAL %s", iv_name[n->ive]);
    else snprintf(b, sizeof p->names[0], "INTERVAL %s TO %s", iv_name[n->ivs], iv_name[n->ive]);
    return b;
}

static void set_iv(node *n, int first, int last)
{
    n->interval = true;
    n->ivs = (uint8_t)first;
    n->ive = (uint8_t)last;
}

/* n takes the fields of both a and b (an interval or a NULL each): the
 * widest span, as INTERVAL MINUTE + INTERVAL SECOND is MINUTE TO SECOND. */
static void join_iv(node *n, const node *a, const node *b)
{
    const node *x = a->interval ? a : b, *y = b->interval ? b : a;
    set_iv(n, x->ivs > y->ivs ? x->ivs : y->ivs, x->ive < y->ive ? x->ive : y->ive);
}

/* Fold branch `br` of a CASE / COALESCE / IF into the result node n: all
 * typed branches must be intervals or none may be. *first: the first typed
 * branch folded so far (NULL before). */
static int merge_branch_iv(parser *p, node *n, const node *br, const node **first, int pos0,
                           const char *what)
{
    if (br->type == SL_T_NULL) return SL_OK;
    if (!*first) {
        *first = br;
        if (br->interval) set_iv(n, br->ivs, br->ive);
        return SL_OK;
    }
    if ((*first)->interval != br->interval)
        return perr(p, pos0, "%s have incompatible types %s and %s", what, ntname(p, *first),
                    ntname(p, br));
    if (n->interval) join_iv(n, n, br);
    return SL_OK;
}

/* The type both a and b convert to, for CASE branches, COALESCE, IN, ... */
static bool common_type(sl_type a, sl_type b, sl_type *out)
{
    if (a == SL_T_NULL) *out = b;
    else if (b == SL_T_NULL || a == b) *out = a;
    else if (is_num_type(a) && is_num_type(b)) *out = num_rank(a) >= num_rank(b) ? a : b;
    else return false;
    return true;
}

static node *wrap_cast(parser *p, node *x, sl_type to)
{
    node *c = new_node(p, N_CAST, x->pos - 1, 1);
    c->kids[0] = x;
    c->type = to;
    c->height = x->height + 1;
    return c;
}

/* Make *a and *b comparable: numbers of any width; equal types; STRING
 * with BYTES; TIMESTAMP with STRING (the string side gets a CAST). An
 * `ordered` comparison refuses BOOLEAN, which has no order. */
static int make_comparable(parser *p, node **a, node **b, int pos0, const char *op, bool ordered)
{
    sl_type ta = (*a)->type, tb = (*b)->type, t;
    if ((*a)->interval != (*b)->interval && ta != SL_T_NULL && tb != SL_T_NULL)
        return perr(p, pos0, "cannot compare %s with %s in '%s'", ntname(p, *a), ntname(p, *b),
                    op);
    if (ta == SL_T_TIMESTAMP && tb == SL_T_STRING) *b = wrap_cast(p, *b, SL_T_TIMESTAMP);
    else if (tb == SL_T_TIMESTAMP && ta == SL_T_STRING) *a = wrap_cast(p, *a, SL_T_TIMESTAMP);
    else if (!common_type(ta, tb, &t) && !(is_str_type(ta) && is_str_type(tb)))
        return perr(p, pos0, "cannot compare %s with %s in '%s'", ntname(p, *a), ntname(p, *b),
                    op);
    else if (ordered && (ta == SL_T_BOOLEAN || tb == SL_T_BOOLEAN))
        return perr(p, pos0, "BOOLEAN values have no order: '%s' is not allowed", op);
    return SL_OK;
}

/* ---- grammar --------------------------------------------------------------
 *   or      := and (OR and)*
 *   and     := not (AND not)*
 *   not     := NOT not | is
 *   is      := cmp (IS [NOT] (NULL|TRUE|FALSE|UNKNOWN))*
 *   cmp     := pred ((= | <> | != | < | <= | > | >=) pred)*
 *   pred    := add [[NOT] (BETWEEN add AND add | IN (list) | LIKE add [ESCAPE add])]
 *   add     := mul ((+ | -) mul)*
 *   mul     := unary ((* | / | % | '||') unary)*
 *   unary   := (- | +) unary | primary
 */

static node *parse_or(parser *p);

static bool enter(parser *p, int pos0)
{
    if (++p->depth > SL_EXPR_MAX_DEPTH) {
        perr(p, pos0, "expression nested too deeply (limit %d)", SL_EXPR_MAX_DEPTH);
        return false;
    }
    return true;
}

static node *leave(parser *p, node *n)
{
    p->depth--;
    return n;
}

static node *lit_node(parser *p, int pos0, sl_type t)
{
    node *n = new_node(p, N_LIT, pos0, 0);
    n->type = t;
    n->lit.isnull = t == SL_T_NULL;
    return n;
}

static node *parse_number(parser *p)
{
    const tok *k = advance(p);
    if (k->kind == TK_INT) {
        int64_t v;
        if (!parse_i64(k->s, k->len, &v)) {
            perr(p, k->pos, "integer literal %.*s is out of range", (int)SL_MIN(k->len, 40),
                 k->s);
            return NULL;
        }
        node *n = lit_node(p, k->pos, v <= INT32_MAX ? SL_T_INT : SL_T_BIGINT);
        n->lit.v.i = v;
        return n;
    }
    char buf[64];
    if (k->len >= sizeof buf) {
        perr(p, k->pos, "decimal literal is too long");
        return NULL;
    }
    memcpy(buf, k->s, k->len);
    buf[k->len] = '\0';
    double d = strtod(buf, NULL);
    if (isinf(d)) {
        perr(p, k->pos, "decimal literal %s is out of range", buf);
        return NULL;
    }
    node *n = lit_node(p, k->pos, SL_T_DOUBLE);
    n->lit.v.d = d;
    return n;
}

static node *parse_string_lit(parser *p)
{
    const tok *k = advance(p);
    node *n = lit_node(p, k->pos, SL_T_STRING);
    size_t len;
    n->owned = unquote(k, '\'', &len);
    if (len > UINT32_MAX) {
        perr(p, k->pos, "string literal too long");
        return NULL;
    }
    n->lit.v.s.p = n->owned;
    n->lit.v.s.len = (uint32_t)len;
    return n;
}

/* An interval field: SECOND, MINUTE, HOUR, DAY, the Sluice extension
 * MILLISECOND, and the spellings sl_interval_parse takes; -1 otherwise. */
static int iv_field(const tok *k)
{
    int64_t mult;
    if (k->kind != TK_IDENT || !sl_duration_unit(k->s, k->len, &mult)) return -1;
    for (int i = 0; i < IV_N; i++)
        if (iv_ms[i] == mult) return i;
    return -1;
}

/* A precision in an interval qualifier: "(" already consumed up to the number. */
static int iv_precision(parser *p, int lo, int hi, int *out)
{
    const tok *k = peek(p);
    int64_t v;
    if (k->kind != TK_INT || !parse_i64(k->s, k->len, &v) || v < lo || v > hi)
        return perr(p, k->pos, "interval precision must be a number from %d to %d", lo, hi);
    advance(p);
    *out = (int)v;
    return SL_OK;
}

/* qualifier := field [(p [, f])] [TO field [(f)]], as in INTERVAL '1:30'
 * MINUTE TO SECOND or CAST(n AS INTERVAL SECOND(3)). *lead_prec is the
 * leading field's precision in digits: 2 unless written (Flink's default),
 * 0 (unchecked) for MILLISECOND. Fractional-second precisions are accepted;
 * values keep milliseconds. */
static int parse_iv_qualifier(parser *p, int *first, int *last, int *lead_prec)
{
    const tok *u = peek(p);
    int a = iv_field(u), b, frac;
    if (a < 0) {
        if (tok_is_kw(u, "YEAR") || tok_is_kw(u, "MONTH"))
            return perr(p, u->pos, "year-month intervals (%.*s) are not supported, only "
                        "day-time ones; add months with TIMESTAMPADD(MONTH, n, ts)",
                        (int)u->len, u->s);
        return unexpected(p, "an interval unit (SECOND, MINUTE, HOUR, DAY)");
    }
    advance(p);
    *lead_prec = a == IV_MS ? 0 : 2;
    if (accept_op(p, "(")) {
        if (iv_precision(p, 1, 10, lead_prec)) return SL_ERR;
        if (a == IV_SECOND && accept_op(p, ",") && iv_precision(p, 0, 9, &frac)) return SL_ERR;
        if (expect_op(p, ")")) return SL_ERR;
    }
    b = a;
    if (accept_kw(p, "TO")) {
        const tok *u2 = peek(p);
        b = iv_field(u2);
        if (b < IV_SECOND || b >= a)
            return perr(p, u2->pos, "invalid interval qualifier: expected HOUR, MINUTE or SECOND "
                        "finer than %s after TO", iv_name[a]);
        advance(p);
        if (b == IV_SECOND && accept_op(p, "(") &&
            (iv_precision(p, 0, 9, &frac) || expect_op(p, ")")))
            return SL_ERR;
    }
    *first = a;
    *last = b;
    return SL_OK;
}

/* The milliseconds an interval literal's text stands for under the
 * qualifier first..last: '[+|-]N' for one field (SECOND also 'N.fff'), and
 * for several 'D H', 'D H:M', 'D H:M:S[.f]', 'H:M', 'H:M:S[.f]', 'M:S[.f]'.
 * Fields after the first are one or two digits in their range (HOUR 0-23,
 * MINUTE and SECOND 0-59). Returns SL_OK, or SL_ERR with the message in why. */
static int iv_text(const char *t, int first, int last, int lead_prec, int64_t *ms, char *why,
                   size_t whylen)
{
    static const int maxv[IV_N] = {999, 59, 59, 23, 0};
    size_t n = strlen(t), i = 0;
    while (n > 0 && t[n - 1] == ' ') n--;
    while (i < n && t[i] == ' ') i++;
    bool neg = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
    int64_t total = 0;
    for (int f = first; f >= last; f--) {
        if (f != first) { /* the separator before this field */
            char sep = f == IV_HOUR ? ' ' : ':';
            if (i >= n || t[i] != sep) goto malformed;
            while (sep == ' ' && i + 1 < n && t[i + 1] == ' ') i++;
            i++;
        }
        size_t d0 = i;
        int64_t v = 0;
        while (i < n && is_digit((unsigned char)t[i]) && i - d0 < 18) v = v * 10 + (t[i++] - '0');
        size_t nd = i - d0;
        if (nd == 0 || (i < n && is_digit((unsigned char)t[i]))) goto malformed;
        if (f == first) {
            if (lead_prec > 0 && nd > (size_t)lead_prec) {
                /* leading zeros do not count */
                size_t sig = nd;
                for (size_t k = d0; k < i - 1 && t[k] == '0'; k++) sig--;
                if (sig > (size_t)lead_prec) {
                    snprintf(why, whylen, "interval field value %.*s exceeds precision of %s(%d) "
                             "field (write %s(%d))", (int)nd, t + d0, iv_name[f], lead_prec,
                             iv_name[f], (int)sig);
                    return SL_ERR;
                }
            }
        } else if (nd > 2 || v > maxv[f]) {
            snprintf(why, whylen, "invalid INTERVAL literal '%s': %s must be 0 to %d", t,
                     iv_name[f], maxv[f]);
            return SL_ERR;
        }
        int64_t part;
        if (__builtin_mul_overflow(v, iv_ms[f], &part) || __builtin_add_overflow(total, part, &total))
            goto range;
    }
    if (last == IV_SECOND && i < n && t[i] == '.') { /* fraction of a second: keep ms */
        i++;
        int nd = 0, frac = 0;
        for (; i < n && is_digit((unsigned char)t[i]); i++, nd++)
            if (nd < 3) frac = frac * 10 + (t[i] - '0');
        if (nd == 0) goto malformed;
        for (; nd < 3; nd++) frac *= 10;
        if (__builtin_add_overflow(total, frac, &total)) goto range;
    }
    if (i != n) goto malformed;
    *ms = neg ? -total : total;
    return SL_OK;
malformed:
    if (first == last) {
        snprintf(why, whylen, "INTERVAL needs a whole number in quotes, e.g. INTERVAL '5' SECOND");
    } else {
        static const char *const form[IV_N] = {"", "SS[.fff]", "MM", "HH", "D"};
        char want[40] = "";
        size_t o = 0;
        for (int f = first; f >= last && o < sizeof want; f--)
            o += (size_t)snprintf(want + o, sizeof want - o, "%s%s",
                                  f == first ? "" : f == IV_HOUR ? " " : ":", form[f]);
        snprintf(why, whylen, "invalid INTERVAL literal '%s' for INTERVAL %s TO %s (expected '%s')",
                 t, iv_name[first], iv_name[last], want);
    }
    return SL_ERR;
range:
    snprintf(why, whylen, "INTERVAL value out of range");
    return SL_ERR;
}

/* INTERVAL 'text' qualifier -- a BIGINT of milliseconds flagged as an
 * interval of the qualifier's fields. */
static node *parse_interval(parser *p, const tok *kw)
{
    const tok *q = advance(p); /* the string, checked by the caller */
    int first, last, lead;
    if (parse_iv_qualifier(p, &first, &last, &lead)) return NULL;
    char *txt = unquote(q, '\'', NULL), why[200];
    int64_t ms;
    int rc = iv_text(txt, first, last, lead, &ms, why, sizeof why);
    free(txt);
    if (rc) {
        perr(p, q->pos, "%s", why);
        return NULL;
    }
    node *n = lit_node(p, kw->pos, SL_T_BIGINT);
    set_iv(n, first, last);
    n->lit.v.i = ms;
    return n;
}

static node *parse_timestamp_lit(parser *p, const tok *kw)
{
    const tok *q = advance(p);
    size_t len;
    char *s = unquote(q, '\'', &len);
    int64_t ms;
    bool ok = ts_parse(s, len, &ms);
    free(s);
    if (!ok) {
        perr(p, q->pos, "invalid TIMESTAMP literal '%.*s' (expected 'YYYY-MM-DD HH:MM:SS[.fff]')",
             (int)SL_MIN(q->len, 40), q->s);
        return NULL;
    }
    node *n = lit_node(p, kw->pos, SL_T_TIMESTAMP);
    n->lit.v.i = ms;
    return n;
}

static node *parse_column(parser *p)
{
    const tok *k = advance(p);
    char *name = k->kind == TK_QIDENT ? unquote(k, '`', NULL) : sl_strndup(k->s, k->len);
    int idx = p->in ? sl_schema_find(p->in, name) : -1;
    if (idx < 0) {
        perr(p, k->pos, "unknown column '%s'", name);
        free(name);
        return NULL;
    }
    free(name);
    node *n = new_node(p, N_COL, k->pos, 0);
    n->col = idx;
    n->type = p->in->fields[idx].type;
    return n;
}

/* CAST(x AS type) and TRY_CAST(x AS type); the name and '(' are consumed. */
static bool cast_allowed(sl_type from, sl_type to)
{
    if (from == to || from == SL_T_NULL) return true;
    switch (to) {
    case SL_T_STRING: return true;
    case SL_T_BYTES: return from == SL_T_STRING;
    case SL_T_INT:
    case SL_T_BIGINT:
    case SL_T_DOUBLE:
    case SL_T_BOOLEAN: return is_num_type(from) || from == SL_T_BOOLEAN || from == SL_T_STRING;
    case SL_T_TIMESTAMP: return from == SL_T_STRING;
    case SL_T_NULL: return false;
    }
    return false;
}

/* CAST(x AS INTERVAL qualifier): from an integer (a count of the
 * qualifier's first field, as Flink's CAST(5 AS INTERVAL SECOND)), from
 * another interval, or from NULL. After AS; the ')' is consumed here. */
static node *parse_cast_iv(parser *p, const tok *name, bool try_cast, node *x)
{
    int first, last, lead;
    if (parse_iv_qualifier(p, &first, &last, &lead) || expect_op(p, ")")) return NULL;
    node *n = new_node(p, N_CAST, name->pos, 1);
    n->kids[0] = x;
    n->type = SL_T_BIGINT;
    n->neg = try_cast;
    set_iv(n, first, last);
    if (!x->interval && !is_int_type(x->type) && x->type != SL_T_NULL) {
        perr(p, name->pos, "cannot CAST %s to %s (only an integer or an interval can be)",
             ntname(p, x), ntname(p, n));
        return NULL;
    }
    return seal(p, n) ? NULL : n;
}

static node *parse_cast(parser *p, const tok *name, bool try_cast)
{
    node *x = parse_or(p);
    if (!x) return NULL;
    if (expect_kw(p, "AS")) return NULL;
    const tok *tk = peek(p);
    if (tk->kind != TK_IDENT) {
        unexpected(p, "a type name");
        return NULL;
    }
    advance(p);
    if (tok_is_kw(tk, "INTERVAL")) return parse_cast_iv(p, name, try_cast, x);
    char tbuf[64];
    int tn = snprintf(tbuf, sizeof tbuf, "%.*s", (int)SL_MIN(tk->len, 40), tk->s);
    if (accept_op(p, "(")) {
        const tok *a = peek(p);
        if (a->kind != TK_INT || a->len > 9) {
            unexpected(p, "a type length");
            return NULL;
        }
        advance(p);
        snprintf(tbuf + tn, sizeof tbuf - (size_t)tn, "(%.*s)", (int)a->len, a->s);
        if (expect_op(p, ")")) return NULL;
    }
    /* TIMESTAMP(3) WITH LOCAL TIME ZONE is TIMESTAMP_LTZ(3) */
    bool ltz = tk->len >= 13 && strncasecmp(tk->s, "TIMESTAMP_LTZ", 13) == 0;
    if (accept_kw(p, "WITH")) {
        if (expect_kw(p, "LOCAL") || expect_kw(p, "TIME") || expect_kw(p, "ZONE")) return NULL;
        ltz = true;
    }
    sl_type to;
    if (sl_type_parse(tbuf, &to) != SL_OK || to == SL_T_NULL) {
        perr(p, tk->pos, "unknown type '%s' in %s", tbuf, try_cast ? "TRY_CAST" : "CAST");
        return NULL;
    }
    if (expect_op(p, ")")) return NULL;
    /* Flink refuses TIMESTAMP <-> number casts and names the function to use */
    if (x->type == SL_T_TIMESTAMP && is_num_type(to)) {
        perr(p, name->pos, "cannot CAST TIMESTAMP(3) to %s: a TIMESTAMP does not convert to a "
             "number; use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds",
             tname(to));
        return NULL;
    }
    if (is_num_type(x->type) && !x->interval && to == SL_T_TIMESTAMP) {
        if (ltz)
            perr(p, name->pos, "cannot CAST %s to TIMESTAMP_LTZ(3): a number does not convert "
                 "to a TIMESTAMP_LTZ; use TO_TIMESTAMP_LTZ(n, 0) for epoch seconds or "
                 "TO_TIMESTAMP_LTZ(n, 3) for milliseconds", tname(x->type));
        else
            perr(p, name->pos, "cannot CAST %s to TIMESTAMP(3): a number does not convert to a "
                 "TIMESTAMP; use TO_TIMESTAMP(FROM_UNIXTIME(n)) for epoch seconds",
                 tname(x->type));
        return NULL;
    }
    /* an interval becomes text, or a count of its last field */
    if (x->interval ? to != SL_T_STRING && !is_int_type(to) : !cast_allowed(x->type, to)) {
        perr(p, name->pos, "cannot CAST %s to %s", ntname(p, x), tname(to));
        return NULL;
    }
    node *n = new_node(p, N_CAST, name->pos, 1);
    n->kids[0] = x;
    n->type = to;
    n->neg = try_cast;
    return seal(p, n) ? NULL : n;
}

static node *parse_case(parser *p, const tok *kw)
{
    node *n = new_node(p, N_CASE, kw->pos, 0);
    node *operand = NULL;
    if (!tok_is_kw(peek(p), "WHEN") && !tok_is_kw(peek(p), "END")) {
        if (!(operand = parse_or(p))) return NULL;
        add_kid(n, operand);
        n->flags |= CASE_OPERAND;
    }
    sl_type rt = SL_T_NULL;
    const node *first = NULL; /* the first typed branch */
    int nwhen = 0;
    if (!operand && !tok_is_kw(peek(p), "WHEN")) {
        unexpected(p, "WHEN");
        return NULL;
    }
    while (accept_kw(p, "WHEN")) {
        const tok *wt = peek(p);
        node *w = parse_or(p);
        if (!w) return NULL;
        if (operand) {
            node *a = operand;
            if (make_comparable(p, &a, &w, wt->pos, "CASE .. WHEN", false)) return NULL;
            if (a != operand) {
                perr(p, wt->pos, "CASE operand of type %s cannot be matched against %s",
                     ntname(p, operand), ntname(p, w));
                return NULL;
            }
        } else if (w->type != SL_T_BOOLEAN && w->type != SL_T_NULL) {
            perr(p, wt->pos, "WHEN condition must be BOOLEAN, got %s", ntname(p, w));
            return NULL;
        }
        if (expect_kw(p, "THEN")) return NULL;
        const tok *tt = peek(p);
        node *th = parse_or(p);
        if (!th) return NULL;
        if (!common_type(rt, th->type, &rt)) {
            perr(p, tt->pos, "CASE branches have incompatible types %s and %s", tname(rt),
                 ntname(p, th));
            return NULL;
        }
        if (merge_branch_iv(p, n, th, &first, tt->pos, "CASE branches")) return NULL;
        add_kid(n, w);
        add_kid(n, th);
        nwhen++;
    }
    if (nwhen == 0) {
        unexpected(p, "WHEN");
        return NULL;
    }
    if (accept_kw(p, "ELSE")) {
        const tok *et = peek(p);
        node *el = parse_or(p);
        if (!el) return NULL;
        if (!common_type(rt, el->type, &rt)) {
            perr(p, et->pos, "CASE branches have incompatible types %s and %s", tname(rt),
                 ntname(p, el));
            return NULL;
        }
        if (merge_branch_iv(p, n, el, &first, et->pos, "CASE branches")) return NULL;
        add_kid(n, el);
        n->flags |= CASE_ELSE;
    }
    if (expect_kw(p, "END")) return NULL;
    n->type = rt;
    return seal(p, n) ? NULL : n;
}

/* TRIM([[BOTH|LEADING|TRAILING] [chars] FROM] s); '(' consumed. kids: s, chars */
static node *parse_trim(parser *p, const tok *name)
{
    int side = TRIM_BOTH;
    bool has_from = false;
    if (accept_kw(p, "BOTH")) side = TRIM_BOTH, has_from = true;
    else if (accept_kw(p, "LEADING")) side = TRIM_LEADING, has_from = true;
    else if (accept_kw(p, "TRAILING")) side = TRIM_TRAILING, has_from = true;
    node *chars = NULL, *s;
    if (has_from && accept_kw(p, "FROM")) {
        if (!(s = parse_or(p))) return NULL;
    } else {
        node *first = parse_or(p);
        if (!first) return NULL;
        if (accept_kw(p, "FROM")) {
            chars = first;
            if (!(s = parse_or(p))) return NULL;
        } else if (has_from) {
            unexpected(p, "FROM");
            return NULL;
        } else {
            s = first;
        }
    }
    if (expect_op(p, ")")) return NULL;
    if (!((s->type == SL_T_STRING || s->type == SL_T_NULL) &&
          (!chars || chars->type == SL_T_STRING || chars->type == SL_T_NULL))) {
        perr(p, name->pos, "TRIM needs STRING arguments, got %s", ntname(p, s));
        return NULL;
    }
    node *n = new_node(p, N_TRIM, name->pos, 2);
    n->kids[0] = s;
    n->kids[1] = chars;
    n->flags = side;
    n->type = SL_T_STRING;
    return seal(p, n) ? NULL : n;
}

/* SUBSTRING(s FROM i [FOR n]) or SUBSTRING(s, i [, n]); '(' consumed. */
static node *parse_substring(parser *p, const tok *name)
{
    node *n = new_node(p, N_SUBSTRING, name->pos, 0);
    node *s = parse_or(p), *a = NULL, *b = NULL;
    if (!s) return NULL;
    if (accept_kw(p, "FROM")) {
        if (!(a = parse_or(p))) return NULL;
        if (accept_kw(p, "FOR") && !(b = parse_or(p))) return NULL;
    } else if (accept_op(p, ",")) {
        if (!(a = parse_or(p))) return NULL;
        if (accept_op(p, ",") && !(b = parse_or(p))) return NULL;
    } else {
        unexpected(p, "FROM or ','");
        return NULL;
    }
    if (expect_op(p, ")")) return NULL;
    if ((s->type != SL_T_STRING && s->type != SL_T_NULL) ||
        (!is_int_type(a->type) && a->type != SL_T_NULL) ||
        (b && !is_int_type(b->type) && b->type != SL_T_NULL)) {
        perr(p, name->pos, "SUBSTRING needs (STRING, INT[, INT]), got (%s, %s%s%s)",
             ntname(p, s), ntname(p, a), b ? ", " : "", b ? ntname(p, b) : "");
        return NULL;
    }
    add_kid(n, s);
    add_kid(n, a);
    if (b) add_kid(n, b);
    n->type = SL_T_STRING;
    return seal(p, n) ? NULL : n;
}


static node *parse_add(parser *p);

/* POSITION(needle IN haystack); '(' consumed. The needle is read below the
 * predicate level so its IN is not taken for an IN list. */
static node *parse_position(parser *p, const tok *name)
{
    node *a = parse_add(p), *b;
    if (!a || expect_kw(p, "IN") || !(b = parse_or(p)) || expect_op(p, ")")) return NULL;
    if ((a->type != SL_T_STRING && a->type != SL_T_NULL) ||
        (b->type != SL_T_STRING && b->type != SL_T_NULL)) {
        perr(p, name->pos, "POSITION needs STRING arguments, got %s and %s", ntname(p, a),
             ntname(p, b));
        return NULL;
    }
    node *n = new_node(p, N_POSITION, name->pos, 2);
    n->kids[0] = a;
    n->kids[1] = b;
    n->type = SL_T_INT;
    return seal(p, n) ? NULL : n;
}

static const char *op_sym(n_op op)
{
    switch (op) {
    case N_ADD: return "+";
    case N_SUB: return "-";
    case N_MUL: return "*";
    case N_DIV: return "/";
    case N_MOD: return "%";
    case N_CONCAT: return "||";
    case N_EQ: return "=";
    case N_NE: return "<>";
    case N_LT: return "<";
    case N_LE: return "<=";
    case N_GT: return ">";
    case N_GE: return ">=";
    default: return "?";
    }
}

/* Build and type a binary arithmetic node (also MOD() and '||'). Intervals
 * follow Flink: TIMESTAMP +/- INTERVAL and INTERVAL + TIMESTAMP give a
 * TIMESTAMP; INTERVAL +/- INTERVAL an interval; an interval times or divided
 * by an INT an interval (Flink's code generator refuses BIGINT and DOUBLE
 * factors); nothing else mixes intervals with numbers. */
static node *make_arith(parser *p, n_op op, int pos0, node *a, node *b)
{
    sl_type ta = a->type, tb = b->type, t = SL_T_NULL;
    int iv = 0; /* 1: the result is an interval */
    if (op == N_CONCAT) {
        if ((ta != SL_T_STRING && ta != SL_T_NULL) || (tb != SL_T_STRING && tb != SL_T_NULL))
            goto bad;
        t = SL_T_STRING;
    } else if ((op == N_ADD || op == N_SUB) && ta == SL_T_TIMESTAMP && b->interval) {
        t = SL_T_TIMESTAMP;
    } else if (op == N_ADD && tb == SL_T_TIMESTAMP && a->interval) {
        t = SL_T_TIMESTAMP;
    } else if (a->interval || b->interval) {
        node *num = a->interval ? b : a; /* the other operand */
        if ((op == N_ADD || op == N_SUB) && (num->interval || num->type == SL_T_NULL)) {
            iv = 1;
        } else if ((op == N_MUL || (op == N_DIV && a->interval)) && !num->interval &&
                   (num->type == SL_T_INT || num->type == SL_T_NULL)) {
            iv = 1;
        } else if ((op == N_MUL || (op == N_DIV && a->interval)) && !num->interval &&
                   is_num_type(num->type)) {
            perr(p, pos0, "cannot apply '%s' to %s and %s: an interval is scaled by an INT only; "
                 "use CAST(.. AS INT)", op_sym(op), ntname(p, a), ntname(p, b));
            return NULL;
        } else {
            goto bad;
        }
        t = SL_T_BIGINT;
    } else if ((is_num_type(ta) || ta == SL_T_NULL) && (is_num_type(tb) || tb == SL_T_NULL)) {
        common_type(ta, tb, &t);
    } else {
        goto bad;
    }
    node *n = new_node(p, op, pos0, 2);
    n->kids[0] = a;
    n->kids[1] = b;
    n->type = t;
    n->ctype = t == SL_T_TIMESTAMP ? SL_T_BIGINT : t;
    if (iv) join_iv(n, a, b);
    return seal(p, n) ? NULL : n;
bad:
    if (ta == SL_T_TIMESTAMP && tb == SL_T_TIMESTAMP && op == N_SUB)
        perr(p, pos0, "cannot apply '-' to TIMESTAMP(3) and TIMESTAMP(3); use "
             "TIMESTAMPDIFF(SECOND, t1, t2) for the time between them");
    else
        perr(p, pos0, "cannot apply '%s' to %s and %s", op_sym(op), ntname(p, a), ntname(p, b));
    return NULL;
}

static const struct fn_def {
    const char *name;
    n_op op;
    int min, max; /* argument counts */
} fn_defs[] = {
    {"CONCAT", N_CONCAT, 1, SL_EXPR_MAX_ARGS},        {"UPPER", N_UPPER, 1, 1},
    {"LOWER", N_LOWER, 1, 1},            {"CHAR_LENGTH", N_CHAR_LENGTH, 1, 1},
    {"CHARACTER_LENGTH", N_CHAR_LENGTH, 1, 1}, {"ABS", N_ABS, 1, 1},
    {"MOD", N_MOD, 2, 2},                {"COALESCE", N_COALESCE, 1, SL_EXPR_MAX_ARGS},
    {"IF", N_IF, 3, 3},                  {"NULLIF", N_NULLIF, 2, 2},
    {"FLOOR", N_FLOOR, 1, 1},            {"CEIL", N_CEIL, 1, 1},
    {"CEILING", N_CEIL, 1, 1},           {"LTRIM", N_TRIM, 1, 1},
    {"RTRIM", N_TRIM, 1, 1},             {"TO_TIMESTAMP_LTZ", N_TO_TS_LTZ, 2, 2},
    {"TO_TIMESTAMP", N_TO_TS, 1, 1},     {"NOW", N_NOW, 0, 0},
    {"CURRENT_ROW_TIMESTAMP", N_NOW, 0, 0}, {"UNIX_TIMESTAMP", N_UNIX_TS, 0, 2},
    {"FROM_UNIXTIME", N_FROM_UNIXTIME, 1, 2}, {"RAND", N_RAND, 0, 1},
    {"RAND_INTEGER", N_RAND_INT, 1, 2},
};

/* Keys of RAND sequences: one per RAND node with a literal seed, unique for
 * the life of the process (see rand_state). */
static _Atomic uint64_t rand_serials;

/* RAND([seed]) / RAND_INTEGER([seed,] bound): type the arguments. */
static int type_rand(parser *p, node *n, const char *fname)
{
    int nseed = n->nkids - (n->op == N_RAND_INT ? 1 : 0);
    if (nseed) {
        node *seed = n->kids[0];
        if (seed->interval || (!is_int_type(seed->type) && seed->type != SL_T_NULL))
            return perr(p, seed->pos - 1, "%s seed must be an INT, got %s", fname,
                        ntname(p, seed));
        n->flags |= RAND_SEEDED;
        if (seed->op == N_LIT && !seed->lit.isnull) {
            n->flags |= RAND_FIXED;
            n->lit.v.i = seed->lit.v.i;
            n->serial = atomic_fetch_add(&rand_serials, 1) + 1;
        }
    }
    if (n->op == N_RAND_INT) {
        node *bound = n->kids[n->nkids - 1];
        if (bound->interval || (bound->type != SL_T_INT && bound->type != SL_T_NULL))
            return perr(p, bound->pos - 1, "RAND_INTEGER bound must be an INT, got %s",
                        ntname(p, bound));
    }
    n->type = n->op == N_RAND ? SL_T_DOUBLE : SL_T_INT;
    return SL_OK;
}

/* TIMESTAMPADD(unit, n, ts) and TIMESTAMPDIFF(unit, t1, t2); the name and
 * '(' are consumed. */
static node *parse_tsfn(parser *p, const tok *name, n_op op)
{
    const char *fname = op == N_TS_ADD ? "TIMESTAMPADD" : "TIMESTAMPDIFF";
    const tok *u = peek(p);
    int unit = -1;
    for (int i = 0; i < TU_N; i++)
        if (tok_is_kw(u, tu_name[i])) unit = i;
    if (unit < 0) {
        unexpected(p, "a time unit (SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR)");
        return NULL;
    }
    advance(p);
    node *a, *b;
    if (expect_op(p, ",") || !(a = parse_or(p)) || expect_op(p, ",") || !(b = parse_or(p)) ||
        expect_op(p, ")"))
        return NULL;
    if (op == N_TS_ADD && (a->interval || (a->type != SL_T_INT && a->type != SL_T_NULL))) {
        perr(p, a->pos - 1, "TIMESTAMPADD needs an INT count, got %s (use CAST(.. AS INT))",
             ntname(p, a));
        return NULL;
    }
    const node *ts[2] = {op == N_TS_ADD ? b : a, b};
    for (int i = 0; i < 2; i++)
        if (ts[i]->type != SL_T_TIMESTAMP && ts[i]->type != SL_T_NULL) {
            perr(p, ts[i]->pos - 1, "%s needs a TIMESTAMP, got %s", fname, ntname(p, ts[i]));
            return NULL;
        }
    node *n = new_node(p, op, name->pos, 2);
    n->kids[0] = a;
    n->kids[1] = b;
    n->flags = unit;
    n->type = op == N_TS_ADD ? SL_T_TIMESTAMP : SL_T_INT;
    return seal(p, n) ? NULL : n;
}

/* A function in plain call syntax; the name and '(' are consumed. */
static node *parse_call(parser *p, const tok *name)
{
    const struct fn_def *f = NULL;
    for (size_t i = 0; i < SL_ARRAY_LEN(fn_defs); i++)
        if (word_eq(name->s, name->len, fn_defs[i].name)) f = &fn_defs[i];
    if (!f) {
        perr(p, name->pos, "unknown function '%.*s'", (int)SL_MIN(name->len, 40), name->s);
        return NULL;
    }
    node *n = new_node(p, f->op, name->pos, 0);
    if (!tok_is_op(peek(p), ")")) {
        do {
            node *a = parse_or(p);
            if (!a) return NULL;
            if (n->nkids == SL_EXPR_MAX_ARGS) {
                perr(p, a->pos - 1, "too many arguments to %s (limit %d)", f->name,
                     SL_EXPR_MAX_ARGS);
                return NULL;
            }
            add_kid(n, a);
        } while (accept_op(p, ","));
    }
    if (expect_op(p, ")")) return NULL;
    if (n->nkids < f->min || n->nkids > f->max) {
        const char *qual = f->min == f->max ? "" : n->nkids < f->min ? "at least " : "at most ";
        int want = n->nkids < f->min ? f->min : f->max;
        perr(p, name->pos, "%s takes %s%d argument%s, got %d", f->name, qual, want,
             want == 1 ? "" : "s", n->nkids);
        return NULL;
    }
    sl_type t0 = n->nkids ? n->kids[0]->type : SL_T_NULL, t = SL_T_NULL;
    const node *first = NULL; /* COALESCE / IF: the first typed branch */
    switch (f->op) {
    case N_CONCAT:
    case N_UPPER:
    case N_LOWER:
    case N_CHAR_LENGTH:
    case N_TRIM:
    case N_TO_TS:
        for (int i = 0; i < n->nkids; i++)
            if (n->kids[i]->type != SL_T_STRING && n->kids[i]->type != SL_T_NULL) {
                perr(p, n->kids[i]->pos - 1, "%s needs STRING arguments, got %s%s", f->name,
                     ntname(p, n->kids[i]),
                     f->op == N_CONCAT ? " (use CAST(x AS STRING))" : "");
                return NULL;
            }
        t = f->op == N_CHAR_LENGTH ? SL_T_INT : f->op == N_TO_TS ? SL_T_TIMESTAMP : SL_T_STRING;
        if (f->op == N_TRIM) {
            add_kid(n, NULL); /* default characters: a blank */
            n->flags = word_eq(name->s, name->len, "LTRIM") ? TRIM_LEADING : TRIM_TRAILING;
        }
        break;
    case N_MOD: /* MOD(a, b) is a % b; the call node stays unused in p->all */
        return make_arith(p, N_MOD, name->pos, n->kids[0], n->kids[1]);
    case N_ABS:
    case N_FLOOR:
    case N_CEIL: /* ABS also takes an interval, as in Flink */
        if ((!is_num_type(t0) && t0 != SL_T_NULL) || (f->op != N_ABS && n->kids[0]->interval)) {
            perr(p, name->pos, "%s needs a number, got %s", f->name, ntname(p, n->kids[0]));
            return NULL;
        }
        if (n->kids[0]->interval) set_iv(n, n->kids[0]->ivs, n->kids[0]->ive);
        t = t0;
        break;
    case N_COALESCE:
        for (int i = 0; i < n->nkids; i++) {
            if (!common_type(t, n->kids[i]->type, &t)) {
                perr(p, n->kids[i]->pos - 1, "COALESCE arguments have incompatible types %s and %s",
                     tname(t), ntname(p, n->kids[i]));
                return NULL;
            }
            if (merge_branch_iv(p, n, n->kids[i], &first, n->kids[i]->pos - 1,
                                "COALESCE arguments"))
                return NULL;
        }
        break;
    case N_IF:
        if (t0 != SL_T_BOOLEAN && t0 != SL_T_NULL) {
            perr(p, name->pos, "IF condition must be BOOLEAN, got %s", tname(t0));
            return NULL;
        }
        if (!common_type(n->kids[1]->type, n->kids[2]->type, &t)) {
            perr(p, name->pos, "IF branches have incompatible types %s and %s",
                 ntname(p, n->kids[1]), ntname(p, n->kids[2]));
            return NULL;
        }
        if (merge_branch_iv(p, n, n->kids[1], &first, name->pos, "IF branches") ||
            merge_branch_iv(p, n, n->kids[2], &first, name->pos, "IF branches"))
            return NULL;
        break;
    case N_NULLIF: {
        node *a = n->kids[0], *b = n->kids[1];
        if (make_comparable(p, &a, &b, name->pos, "NULLIF", false)) return NULL;
        n->kids[0] = a;
        n->kids[1] = b;
        t = a->type;
        if (a->interval) set_iv(n, a->ivs, a->ive);
        break;
    }
    case N_TO_TS_LTZ: {
        node *prec = n->kids[1];
        if ((!is_num_type(t0) && t0 != SL_T_NULL) || n->kids[0]->interval) {
            perr(p, name->pos, "TO_TIMESTAMP_LTZ needs a number of seconds or milliseconds, got %s",
                 ntname(p, n->kids[0]));
            return NULL;
        }
        if (prec->op != N_LIT || prec->type != SL_T_INT ||
            (prec->lit.v.i != 0 && prec->lit.v.i != 3)) {
            perr(p, prec->pos - 1, "TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds)");
            return NULL;
        }
        n->flags = (int)prec->lit.v.i;
        t = SL_T_TIMESTAMP;
        break;
    }
    case N_NOW:
        n->flags = 3; /* precision: milliseconds */
        t = SL_T_TIMESTAMP;
        break;
    case N_UNIX_TS:
    case N_FROM_UNIXTIME: {
        bool unix_ts = f->op == N_UNIX_TS;
        if (n->nkids == 2) {
            perr(p, n->kids[1]->pos - 1, "%s: only the default format 'yyyy-MM-dd HH:mm:ss' is "
                 "supported; leave out the format argument", f->name);
            return NULL;
        }
        if (n->nkids == 1 && (unix_ts ? t0 != SL_T_STRING && t0 != SL_T_NULL
                                      : n->kids[0]->interval || (!is_int_type(t0) &&
                                                                 t0 != SL_T_NULL))) {
            perr(p, n->kids[0]->pos - 1, "%s needs %s, got %s", f->name,
                 unix_ts ? "a STRING" : "an integer number of seconds", ntname(p, n->kids[0]));
            return NULL;
        }
        t = unix_ts ? SL_T_BIGINT : SL_T_STRING;
        break;
    }
    case N_RAND:
    case N_RAND_INT:
        if (type_rand(p, n, f->name)) return NULL;
        t = n->type;
        break;
    default:
        break;
    }
    n->type = t;
    return seal(p, n) ? NULL : n;
}

static node *parse_primary(parser *p)
{
    const tok *k = peek(p);
    switch (k->kind) {
    case TK_INT:
    case TK_DEC: return parse_number(p);
    case TK_STR: return parse_string_lit(p);
    case TK_QIDENT: return parse_column(p);
    case TK_OP:
        if (accept_op(p, "(")) {
            node *n = parse_or(p);
            if (!n || expect_op(p, ")")) return NULL;
            return n;
        }
        unexpected(p, "an expression");
        return NULL;
    case TK_END: unexpected(p, "an expression"); return NULL;
    case TK_IDENT: break;
    }
    if (accept_kw(p, "TRUE") || accept_kw(p, "FALSE")) {
        node *n = lit_node(p, k->pos, SL_T_BOOLEAN);
        n->lit.v.i = tok_is_kw(k, "TRUE");
        return n;
    }
    if (accept_kw(p, "NULL")) return lit_node(p, k->pos, SL_T_NULL);
    if (accept_kw(p, "CASE")) return parse_case(p, k);
    if (accept_kw(p, "CURRENT_TIMESTAMP") || accept_kw(p, "LOCALTIMESTAMP")) {
        node *n = new_node(p, N_NOW, k->pos, 0);
        n->type = SL_T_TIMESTAMP;
        n->flags = 3;
        if (accept_op(p, "(")) { /* CURRENT_TIMESTAMP(p): precision 0..3 */
            const tok *a = peek(p);
            int64_t prec;
            if (a->kind != TK_INT || !parse_i64(a->s, a->len, &prec) || prec > 3) {
                perr(p, a->pos, "%.*s precision must be 0 to 3", (int)k->len, k->s);
                return NULL;
            }
            advance(p);
            if (expect_op(p, ")")) return NULL;
            n->flags = (int)prec;
        }
        return n;
    }
    const tok *next = peek_at(p, 1);
    if (tok_is_kw(k, "INTERVAL") && next->kind == TK_STR) {
        advance(p);
        return parse_interval(p, k);
    }
    if (tok_is_kw(k, "TIMESTAMP") && next->kind == TK_STR) {
        advance(p);
        return parse_timestamp_lit(p, k);
    }
    if (tok_is_op(next, "(") && !is_reserved(k)) {
        advance(p);
        advance(p);
        if (tok_is_kw(k, "CAST")) return parse_cast(p, k, false);
        if (tok_is_kw(k, "TRY_CAST")) return parse_cast(p, k, true);
        if (tok_is_kw(k, "TRIM")) return parse_trim(p, k);
        if (tok_is_kw(k, "SUBSTRING")) return parse_substring(p, k);
        if (tok_is_kw(k, "POSITION")) return parse_position(p, k);
        if (tok_is_kw(k, "TIMESTAMPADD")) return parse_tsfn(p, k, N_TS_ADD);
        if (tok_is_kw(k, "TIMESTAMPDIFF")) return parse_tsfn(p, k, N_TS_DIFF);
        return parse_call(p, k);
    }
    if (is_reserved(k)) {
        unexpected(p, "an expression");
        return NULL;
    }
    return parse_column(p);
}

static node *parse_unary(parser *p)
{
    const tok *k = peek(p);
    if (!tok_is_op(k, "-") && !tok_is_op(k, "+")) return parse_primary(p);
    advance(p);
    if (!enter(p, k->pos)) return NULL;
    node *x = parse_unary(p);
    p->depth--;
    if (!x) return NULL;
    if (!is_num_type(x->type) && x->type != SL_T_NULL) {
        perr(p, k->pos, "cannot apply unary '%c' to %s", k->s[0], ntname(p, x));
        return NULL;
    }
    if (k->s[0] == '+') return x;
    if (x->op == N_LIT && !x->lit.isnull) { /* fold: -2147483648 is an INT literal */
        if (x->type == SL_T_DOUBLE) {
            x->lit.v.d = -x->lit.v.d;
        } else {
            x->lit.v.i = wrap64(0 - (uint64_t)x->lit.v.i);
            if (!x->interval)
                x->type = x->lit.v.i >= INT32_MIN && x->lit.v.i <= INT32_MAX ? SL_T_INT
                                                                            : SL_T_BIGINT;
        }
        x->pos = k->pos + 1;
        return x;
    }
    node *n = new_node(p, N_NEG, k->pos, 1);
    n->kids[0] = x;
    n->type = n->ctype = x->type;
    if (x->interval) set_iv(n, x->ivs, x->ive);
    return seal(p, n) ? NULL : n;
}

static node *parse_mul(parser *p)
{
    node *a = parse_unary(p);
    while (a) {
        const tok *k = peek(p);
        n_op op;
        if (tok_is_op(k, "*")) op = N_MUL;
        else if (tok_is_op(k, "/")) op = N_DIV;
        else if (tok_is_op(k, "%")) op = N_MOD;
        else if (tok_is_op(k, "||")) op = N_CONCAT;
        else break;
        advance(p);
        node *b = parse_unary(p);
        a = b ? make_arith(p, op, k->pos, a, b) : NULL;
    }
    return a;
}

static node *parse_add(parser *p)
{
    node *a = parse_mul(p);
    while (a) {
        const tok *k = peek(p);
        n_op op;
        if (tok_is_op(k, "+")) op = N_ADD;
        else if (tok_is_op(k, "-")) op = N_SUB;
        else break;
        advance(p);
        node *b = parse_mul(p);
        a = b ? make_arith(p, op, k->pos, a, b) : NULL;
    }
    return a;
}

static bool is_bool_or_null(sl_type t) { return t == SL_T_BOOLEAN || t == SL_T_NULL; }

static node *parse_pred(parser *p)
{
    node *x = parse_add(p);
    if (!x) return NULL;
    const tok *k = peek(p);
    bool neg = false;
    if (tok_is_kw(k, "NOT")) {
        const tok *k2 = peek_at(p, 1);
        if (!tok_is_kw(k2, "BETWEEN") && !tok_is_kw(k2, "IN") && !tok_is_kw(k2, "LIKE"))
            return x;
        advance(p);
        neg = true;
        k = k2;
    }
    if (accept_kw(p, "BETWEEN")) {
        node *lo = parse_add(p), *hi;
        if (!lo || expect_kw(p, "AND") || !(hi = parse_add(p))) return NULL;
        /* twice: a CAST put on x by the second pair must reach the first */
        for (int pass = 0; pass < 2; pass++)
            if (make_comparable(p, &x, &lo, k->pos, "BETWEEN", true) ||
                make_comparable(p, &x, &hi, k->pos, "BETWEEN", true))
                return NULL;
        node *n = new_node(p, N_BETWEEN, k->pos, 3);
        n->kids[0] = x, n->kids[1] = lo, n->kids[2] = hi;
        n->neg = neg;
        n->type = SL_T_BOOLEAN;
        return seal(p, n) ? NULL : n;
    }
    if (accept_kw(p, "IN")) {
        if (expect_op(p, "(")) return NULL;
        node *n = new_node(p, N_IN, k->pos, 0);
        add_kid(n, x);
        do {
            const tok *et = peek(p);
            node *e = parse_or(p);
            if (!e) return NULL;
            if (make_comparable(p, &n->kids[0], &e, et->pos, "IN", false)) return NULL;
            add_kid(n, e);
        } while (accept_op(p, ","));
        if (expect_op(p, ")")) return NULL;
        /* a CAST put on x by a later item must reach the earlier ones */
        for (int i = 1; i < n->nkids; i++)
            if (make_comparable(p, &n->kids[0], &n->kids[i], k->pos, "IN", false)) return NULL;
        n->neg = neg;
        n->type = SL_T_BOOLEAN;
        return seal(p, n) ? NULL : n;
    }
    if (accept_kw(p, "LIKE")) {
        node *pat = parse_add(p), *esc = NULL;
        if (!pat) return NULL;
        if (accept_kw(p, "ESCAPE") && !(esc = parse_add(p))) return NULL;
        if ((x->type != SL_T_STRING && x->type != SL_T_NULL) ||
            (pat->type != SL_T_STRING && pat->type != SL_T_NULL) ||
            (esc && esc->type != SL_T_STRING && esc->type != SL_T_NULL)) {
            perr(p, k->pos, "LIKE needs STRING operands, got %s and %s", ntname(p, x),
                 ntname(p, pat));
            return NULL;
        }
        node *n = new_node(p, N_LIKE, k->pos, 3);
        n->kids[0] = x, n->kids[1] = pat, n->kids[2] = esc;
        n->neg = neg;
        n->type = SL_T_BOOLEAN;
        return seal(p, n) ? NULL : n;
    }
    return x;
}

static node *parse_cmp(parser *p)
{
    node *a = parse_pred(p);
    while (a) {
        const tok *k = peek(p);
        n_op op;
        if (tok_is_op(k, "=")) op = N_EQ;
        else if (tok_is_op(k, "<>") || tok_is_op(k, "!=")) op = N_NE;
        else if (tok_is_op(k, "<")) op = N_LT;
        else if (tok_is_op(k, "<=")) op = N_LE;
        else if (tok_is_op(k, ">")) op = N_GT;
        else if (tok_is_op(k, ">=")) op = N_GE;
        else break;
        advance(p);
        node *b = parse_pred(p);
        if (!b || make_comparable(p, &a, &b, k->pos, op_sym(op), op != N_EQ && op != N_NE))
            return NULL;
        node *n = new_node(p, op, k->pos, 2);
        n->kids[0] = a, n->kids[1] = b;
        n->type = SL_T_BOOLEAN;
        a = seal(p, n) ? NULL : n;
    }
    return a;
}

static node *parse_is(parser *p)
{
    node *x = parse_cmp(p);
    while (x && tok_is_kw(peek(p), "IS")) {
        const tok *k = advance(p);
        bool neg = accept_kw(p, "NOT");
        n_op op;
        if (accept_kw(p, "NULL")) op = N_IS_NULL;
        else if (accept_kw(p, "UNKNOWN")) op = N_IS_NULL;
        else if (accept_kw(p, "TRUE")) op = N_IS_TRUE;
        else if (accept_kw(p, "FALSE")) op = N_IS_FALSE;
        else {
            unexpected(p, "NULL, TRUE, FALSE or UNKNOWN after IS");
            return NULL;
        }
        if (op != N_IS_NULL && !is_bool_or_null(x->type)) {
            perr(p, k->pos, "IS %s%s needs a BOOLEAN, got %s", neg ? "NOT " : "",
                 op == N_IS_TRUE ? "TRUE" : "FALSE", ntname(p, x));
            return NULL;
        }
        node *n = new_node(p, op, k->pos, 1);
        n->kids[0] = x;
        n->neg = neg;
        n->type = SL_T_BOOLEAN;
        x = seal(p, n) ? NULL : n;
    }
    return x;
}

static node *parse_not(parser *p)
{
    const tok *k = peek(p);
    if (!tok_is_kw(k, "NOT")) return parse_is(p);
    advance(p);
    if (!enter(p, k->pos)) return NULL;
    node *x = parse_not(p);
    p->depth--;
    if (!x) return NULL;
    if (!is_bool_or_null(x->type)) {
        perr(p, k->pos, "NOT needs a BOOLEAN, got %s", ntname(p, x));
        return NULL;
    }
    node *n = new_node(p, N_NOT, k->pos, 1);
    n->kids[0] = x;
    n->type = SL_T_BOOLEAN;
    return seal(p, n) ? NULL : n;
}

static node *parse_logic(parser *p, bool is_or)
{
    node *a = is_or ? parse_logic(p, false) : parse_not(p);
    while (a) {
        const tok *k = peek(p);
        if (!tok_is_kw(k, is_or ? "OR" : "AND")) break;
        advance(p);
        node *b = is_or ? parse_logic(p, false) : parse_not(p);
        if (!b) return NULL;
        if (!is_bool_or_null(a->type) || !is_bool_or_null(b->type)) {
            perr(p, k->pos, "%s needs BOOLEAN operands, got %s and %s", is_or ? "OR" : "AND",
                 ntname(p, a), ntname(p, b));
            return NULL;
        }
        node *n = new_node(p, is_or ? N_OR : N_AND, k->pos, 2);
        n->kids[0] = a, n->kids[1] = b;
        n->type = SL_T_BOOLEAN;
        a = seal(p, n) ? NULL : n;
    }
    return a;
}

static node *parse_or(parser *p)
{
    if (!enter(p, peek(p)->pos)) return NULL;
    return leave(p, parse_logic(p, true));
}

/* ---- public parse ------------------------------------------------------------ */

static sl_expr *parse_text(const char *text, const sl_schema *in, bool item, int index,
                           char **name, char *err, size_t errlen)
{
    if (name) *name = NULL;
    if (!text) {
        sl_seterr(err, errlen, "missing expression");
        return NULL;
    }
    parser p = {.text = text, .in = in, .err = err, .errlen = errlen};
    node *root = NULL;
    char *alias = NULL;
    if (tokenize(&p) == SL_OK) {
        if (p.toks[0].kind == TK_END) {
            perr(&p, 0, "empty expression");
        } else if ((root = parse_or(&p)) != NULL && item) {
            bool as = accept_kw(&p, "AS");
            const tok *k = peek(&p);
            if (k->kind == TK_QIDENT || (k->kind == TK_IDENT && (as || !is_reserved(k)))) {
                advance(&p);
                alias = k->kind == TK_QIDENT ? unquote(k, '`', NULL) : sl_strndup(k->s, k->len);
                if (!alias[0]) {
                    perr(&p, k->pos, "empty column alias");
                    root = NULL;
                }
            } else if (as) {
                unexpected(&p, "a column alias after AS");
                root = NULL;
            }
        }
        if (root && peek(&p)->kind != TK_END) {
            unexpected(&p, item ? "AS or the end of the item" : "an operator or the end");
            root = NULL;
        }
    }
    free(p.toks);
    if (!root) {
        free(alias);
        free_nodes(p.all);
        return NULL;
    }
    sl_expr *e = sl_malloc(sizeof *e);
    e->root = root;
    e->all = p.all;
    if (name) {
        if (alias) *name = alias, alias = NULL;
        else if (root->op == N_COL) *name = sl_strdup(in->fields[root->col].name);
        else *name = sl_sprintf("EXPR$%d", index);
    }
    free(alias);
    return e;
}

sl_expr *sl_expr_parse(const char *text, const sl_schema *in, char *err, size_t errlen)
{
    return parse_text(text, in, false, 0, NULL, err, errlen);
}

sl_expr *sl_expr_parse_item(const char *text, const sl_schema *in, int index, char **name,
                            char *err, size_t errlen)
{
    return parse_text(text, in, true, index, name, err, errlen);
}

sl_type sl_expr_type(const sl_expr *e) { return e->root->type; }

void sl_expr_destroy(sl_expr *e)
{
    if (!e) return;
    free_nodes(e->all);
    free(e);
}

/* ---- evaluation ---------------------------------------------------------------- */

typedef struct evctx {
    const sl_row *row;
    sl_arena *scratch;
    char *err;
    size_t errlen;
} evctx;

static int ev(const node *n, evctx *cx, sl_value *out);

static int everr(evctx *cx, const node *n, const char *fmt, ...) SL_PRINTF(3, 4);

static int everr(evctx *cx, const node *n, const char *fmt, ...)
{
    if (cx->err && cx->errlen) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(cx->err, cx->errlen, "%s at position %d", msg, n->pos);
    }
    return SL_ERR;
}

/* Room for a string result, or NULL with the error set. */
static char *salloc(evctx *cx, const node *n, size_t len)
{
    static char empty[1];
    if (len == 0) return empty;
    char *s = len <= UINT32_MAX ? sl_arena_alloc(cx->scratch, len) : NULL;
    if (!s) everr(cx, n, "string result too large (%zu bytes; scratch space exhausted)", len);
    return s;
}

static void set_null(sl_value *out) { out->isnull = true; }
static void set_i(sl_value *out, int64_t i) { out->isnull = false, out->v.i = i; }
static void set_d(sl_value *out, double d) { out->isnull = false, out->v.d = d; }
static void set_s(sl_value *out, const char *p, size_t len)
{
    out->isnull = false;
    out->v.s.p = p;
    out->v.s.len = (uint32_t)len;
}

static double as_d(const sl_value *v, sl_type t) { return t == SL_T_DOUBLE ? v->v.d : (double)v->v.i; }

/* Convert a value of a child's type to the node's (wider) numeric type. */
static void widen(sl_value *v, sl_type from, sl_type to)
{
    if (!v->isnull && to == SL_T_DOUBLE && is_int_type(from)) v->v.d = (double)v->v.i;
}

/* Total order on two comparable non-NULL values: -1, 0, 1. NaN sorts after
 * every number and equals itself, as Java's Double.compare. */
static int cmpv(const sl_value *a, sl_type ta, const sl_value *b, sl_type tb)
{
    if (is_str_type(ta)) {
        uint32_t n = SL_MIN(a->v.s.len, b->v.s.len);
        int c = n ? memcmp(a->v.s.p, b->v.s.p, n) : 0;
        if (c) return c < 0 ? -1 : 1;
        return a->v.s.len < b->v.s.len ? -1 : a->v.s.len > b->v.s.len;
    }
    if (ta == SL_T_DOUBLE || tb == SL_T_DOUBLE) {
        double x = as_d(a, ta), y = as_d(b, tb);
        if (x < y) return -1;
        if (x > y) return 1;
        if (x == y) return 0;
        return isnan(x) ? (isnan(y) ? 0 : 1) : -1;
    }
    return a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
}

/* Three-valued logic: 0 FALSE, 1 TRUE, 2 UNKNOWN. */
enum { F3 = 0, T3 = 1, U3 = 2 };
static int and3(int a, int b) { return a == F3 || b == F3 ? F3 : a == U3 || b == U3 ? U3 : T3; }
static int not3(int a) { return a == U3 ? U3 : !a; }
static void set3(sl_value *out, int t)
{
    if (t == U3) set_null(out);
    else set_i(out, t);
}

static int eval_arith(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    if (a.isnull || b.isnull) {
        set_null(out);
        return SL_OK;
    }
    sl_type ta = n->kids[0]->type, tb = n->kids[1]->type;
    if (n->ctype == SL_T_DOUBLE) {
        double x = as_d(&a, ta), y = as_d(&b, tb);
        switch (n->op) {
        case N_ADD: set_d(out, x + y); break;
        case N_SUB: set_d(out, x - y); break;
        case N_MUL: set_d(out, x * y); break;
        case N_DIV:
            if (y == 0) return everr(cx, n, "division by zero");
            set_d(out, x / y);
            break;
        default:
            if (y == 0) return everr(cx, n, "division by zero (modulo)");
            set_d(out, fmod(x, y));
            break;
        }
        return SL_OK;
    }
    int64_t x = a.v.i, y = b.v.i;
    if ((n->op == N_DIV || n->op == N_MOD) && y == 0)
        return everr(cx, n, n->op == N_DIV ? "division by zero" : "division by zero (modulo)");
    if (n->ctype == SL_T_INT) { /* both operands fit 32 bits: exact in 64, then wrap */
        int64_t r = n->op == N_ADD ? x + y : n->op == N_SUB ? x - y : n->op == N_MUL ? x * y
                  : n->op == N_DIV ? x / y : x % y;
        set_i(out, wrap32(r));
        return SL_OK;
    }
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (n->op) {
    case N_ADD: set_i(out, wrap64(ux + uy)); break;
    case N_SUB: set_i(out, wrap64(ux - uy)); break;
    case N_MUL: set_i(out, wrap64(ux * uy)); break;
    case N_DIV: set_i(out, y == -1 ? wrap64(0 - ux) : x / y); break;
    default: set_i(out, y == -1 ? 0 : x % y); break;
    }
    return SL_OK;
}

/* Evaluate a node's children into vals (a caller-provided array). */
static int eval_kids(const node *n, evctx *cx, sl_value *vals)
{
    for (int i = 0; i < n->nkids; i++)
        if (ev(n->kids[i], cx, &vals[i])) return SL_ERR;
    return SL_OK;
}

static int eval_concat(const node *n, evctx *cx, sl_value *out)
{
    sl_value local[4], *vals = local;
    if (n->nkids > (int)SL_ARRAY_LEN(local)) {
        /* many arguments: a value array from the scratch arena, aligned by hand */
        size_t al = _Alignof(sl_value), need = (size_t)n->nkids * sizeof(sl_value) + al;
        char *raw = sl_arena_alloc(cx->scratch, need);
        if (!raw) return everr(cx, n, "scratch space exhausted evaluating CONCAT");
        vals = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al);
    }
    if (eval_kids(n, cx, vals)) return SL_ERR;
    size_t total = 0;
    for (int i = 0; i < n->nkids; i++) {
        if (vals[i].isnull) {
            set_null(out);
            return SL_OK;
        }
        total += vals[i].v.s.len;
    }
    char *d = salloc(cx, n, total);
    if (!d) return SL_ERR;
    size_t o = 0;
    for (int i = 0; i < n->nkids; i++) {
        if (vals[i].v.s.len) memcpy(d + o, vals[i].v.s.p, vals[i].v.s.len);
        o += vals[i].v.s.len;
    }
    set_s(out, d, total);
    return SL_OK;
}

/* SQL LIKE: '%' any run, '_' one code point, esc (or -1) quotes the next
 * character. Greedy with a single backtrack point -- the last '%' -- which
 * is enough for this pattern language and keeps the cost O(len * plen). */
static bool like_match(const char *s, size_t sn, const char *pt, size_t pn, int esc)
{
    size_t si = 0, pi = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        if (pi < pn) {
            unsigned char c = (unsigned char)pt[pi];
            if (esc >= 0 && c == esc) {
                if (pi + 1 < pn && pt[pi + 1] == s[si]) {
                    pi += 2, si++;
                    continue;
                }
            } else if (c == '%') {
                star_p = ++pi;
                star_s = si;
                continue;
            } else if (c == '_') {
                si += cp_len(s + si, sn - si);
                pi++;
                continue;
            } else if (c == (unsigned char)s[si]) {
                pi++, si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX) return false;
        star_s += cp_len(s + star_s, sn - star_s);
        si = star_s;
        pi = star_p;
    }
    while (pi < pn && pt[pi] == '%' && esc != '%') pi++;
    return pi == pn;
}

static int eval_like(const node *n, evctx *cx, sl_value *out)
{
    sl_value x, pt, es;
    es.isnull = false;
    if (ev(n->kids[0], cx, &x) || ev(n->kids[1], cx, &pt) ||
        (n->kids[2] && ev(n->kids[2], cx, &es)))
        return SL_ERR;
    if (x.isnull || pt.isnull || es.isnull) {
        set_null(out);
        return SL_OK;
    }
    int esc = -1;
    if (n->kids[2]) {
        if (es.v.s.len != 1)
            return everr(cx, n, "LIKE ESCAPE must be a single character, got %u bytes",
                         es.v.s.len);
        esc = (unsigned char)es.v.s.p[0];
        /* an escape must quote something */
        for (uint32_t i = 0; i < pt.v.s.len; i++) {
            if ((unsigned char)pt.v.s.p[i] != esc) continue;
            if (i + 1 == pt.v.s.len)
                return everr(cx, n, "LIKE pattern ends with the escape character");
            i++; /* skip the quoted character */
        }
    }
    bool m = like_match(x.v.s.p, x.v.s.len, pt.v.s.p, pt.v.s.len, esc);
    set_i(out, m != n->neg);
    return SL_OK;
}

static int eval_case(const node *n, evctx *cx, sl_value *out)
{
    int i = 0;
    sl_value opv, w;
    const node *operand = NULL;
    if (n->flags & CASE_OPERAND) {
        operand = n->kids[0];
        if (ev(operand, cx, &opv)) return SL_ERR;
        i = 1;
    }
    int end = n->nkids - ((n->flags & CASE_ELSE) ? 1 : 0);
    const node *pick = NULL;
    for (; i < end; i += 2) {
        if (ev(n->kids[i], cx, &w)) return SL_ERR;
        bool hit = operand ? !opv.isnull && !w.isnull &&
                                 cmpv(&opv, operand->type, &w, n->kids[i]->type) == 0
                           : !w.isnull && w.v.i;
        if (hit) {
            pick = n->kids[i + 1];
            break;
        }
    }
    if (!pick && (n->flags & CASE_ELSE)) pick = n->kids[n->nkids - 1];
    if (!pick) {
        set_null(out);
        return SL_OK;
    }
    if (ev(pick, cx, out)) return SL_ERR;
    widen(out, pick->type, n->type);
    return SL_OK;
}

/* Copy a formatted string into scratch. */
static int put_text(const node *n, evctx *cx, sl_value *out, const char *txt, int len)
{
    if (len < 0) len = 0;
    char *d = salloc(cx, n, (size_t)len);
    if (!d) return SL_ERR;
    memcpy(d, txt, (size_t)len);
    set_s(out, d, (size_t)len);
    return SL_OK;
}

/* Trim blanks around a string slice (for CAST from STRING). */
static void trim_blanks(const char **s, uint32_t *n)
{
    while (*n > 0 && (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r')) (*s)++, (*n)--;
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\n' ||
                      (*s)[*n - 1] == '\r'))
        (*n)--;
}

static bool str_to_double(const char *s, uint32_t n, double *out)
{
    char buf[128];
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    const char *b = buf + (buf[0] == '-' || buf[0] == '+');
    if (strcmp(b, "NaN") == 0) return *out = NAN, true;
    if (strcmp(b, "Infinity") == 0) return *out = buf[0] == '-' ? -INFINITY : INFINITY, true;
    for (const char *c = b; *c; c++) /* refuse hex floats, "inf", "nan(...)" */
        if (!is_digit((unsigned char)*c) && !strchr(".eE+-", *c)) return false;
    char *end;
    *out = strtod(buf, &end);
    return end != buf && *end == '\0';
}

/* Java's saturating double -> long / int conversion (what Flink's CAST does). */
static int64_t d_to_i(double d, sl_type to)
{
    double lo = to == SL_T_INT ? (double)INT32_MIN : -9223372036854775808.0;
    double hi = to == SL_T_INT ? (double)INT32_MAX : 9223372036854775807.0;
    if (isnan(d)) return 0;
    if (d <= lo) return to == SL_T_INT ? INT32_MIN : INT64_MIN;
    if (d >= hi) return to == SL_T_INT ? INT32_MAX : INT64_MAX;
    return (int64_t)d;
}

/* CASTs to and from intervals: a number to an interval counts the
 * interval's first field; an interval to a number counts its last field
 * (truncated), and to a STRING is Flink's "+d hh:mm:ss.fff". */
static int eval_cast_iv(const node *n, evctx *cx, sl_value *out)
{
    const node *k = n->kids[0];
    if (n->interval) {
        if (!k->interval) set_i(out, wrap64((uint64_t)out->v.i * (uint64_t)iv_ms[n->ivs]));
        return SL_OK;
    }
    if (n->type == SL_T_STRING) {
        char buf[48];
        return put_text(n, cx, out, buf, iv_to_sql(buf, sizeof buf, out->v.i));
    }
    int64_t q = out->v.i / iv_ms[k->ive];
    set_i(out, n->type == SL_T_INT ? wrap32(q) : q);
    return SL_OK;
}

static int eval_cast(const node *n, evctx *cx, sl_value *out)
{
    const node *k = n->kids[0];
    sl_type from = k->type, to = n->type;
    if (ev(k, cx, out)) return SL_ERR;
    if (out->isnull) return SL_OK;
    if (n->interval || k->interval) return eval_cast_iv(n, cx, out);
    if (from == to) return SL_OK;
    sl_value v = *out;
    char buf[64];
    switch (to) {
    case SL_T_STRING:
        switch (from) {
        case SL_T_BOOLEAN: return put_text(n, cx, out, v.v.i ? "TRUE" : "FALSE", v.v.i ? 4 : 5);
        case SL_T_INT:
        case SL_T_BIGINT:
            return put_text(n, cx, out, buf, snprintf(buf, sizeof buf, "%lld", (long long)v.v.i));
        case SL_T_DOUBLE: return put_text(n, cx, out, buf, double_to_str(buf, sizeof buf, v.v.d));
        case SL_T_TIMESTAMP: return put_text(n, cx, out, buf, ts_to_sql(buf, sizeof buf, v.v.i, true));
        default: return SL_OK; /* BYTES: the same bytes */
        }
    case SL_T_BYTES: return SL_OK;
    case SL_T_INT:
    case SL_T_BIGINT:
        if (from == SL_T_DOUBLE) set_i(out, d_to_i(v.v.d, to));
        else if (from == SL_T_BIGINT) set_i(out, wrap32(v.v.i)); /* to INT: Java narrowing */
        else if (from == SL_T_STRING) {
            const char *s = v.v.s.p;
            uint32_t len = v.v.s.len;
            int64_t x;
            trim_blanks(&s, &len);
            if (!parse_i64(s, len, &x) || (to == SL_T_INT && (x < INT32_MIN || x > INT32_MAX)))
                goto bad_string;
            set_i(out, x);
        }
        /* INT -> BIGINT and BOOLEAN -> integer: the stored 0/1 or value is right */
        return SL_OK;
    case SL_T_DOUBLE:
        if (from == SL_T_STRING) {
            const char *s = v.v.s.p;
            uint32_t len = v.v.s.len;
            double d;
            trim_blanks(&s, &len);
            if (!str_to_double(s, len, &d)) goto bad_string;
            set_d(out, d);
        } else {
            set_d(out, (double)v.v.i);
        }
        return SL_OK;
    case SL_T_BOOLEAN:
        if (from == SL_T_STRING) {
            const char *s = v.v.s.p;
            uint32_t len = v.v.s.len;
            trim_blanks(&s, &len);
            static const char *const yes[] = {"true", "t", "yes", "y", "1"};
            static const char *const no[] = {"false", "f", "no", "n", "0"};
            for (size_t i = 0; i < SL_ARRAY_LEN(yes); i++) {
                if (word_eq(s, len, yes[i])) return set_i(out, 1), SL_OK;
                if (word_eq(s, len, no[i])) return set_i(out, 0), SL_OK;
            }
            goto bad_string;
        }
        set_i(out, from == SL_T_DOUBLE ? v.v.d != 0 : v.v.i != 0);
        return SL_OK;
    case SL_T_TIMESTAMP: {
        int64_t ms;
        if (!ts_parse(v.v.s.p, v.v.s.len, &ms)) goto bad_string;
        set_i(out, ms);
        return SL_OK;
    }
    case SL_T_NULL: break;
    }
    return SL_OK;
bad_string:
    if (n->neg) { /* TRY_CAST */
        set_null(out);
        return SL_OK;
    }
    return everr(cx, n, "cannot CAST '%.*s' to %s", (int)SL_MIN(v.v.s.len, 40u), v.v.s.p,
                 tname(to));
}

/* Does the code point at s[0..cl) occur in set? */
static bool in_set(const char *s, size_t cl, const char *set, size_t sn)
{
    for (size_t i = 0; i < sn;) {
        size_t l = cp_len(set + i, sn - i);
        if (l == cl && memcmp(set + i, s, cl) == 0) return true;
        i += l;
    }
    return false;
}

static int eval_trim(const node *n, evctx *cx, sl_value *out)
{
    sl_value s, c;
    if (ev(n->kids[0], cx, &s)) return SL_ERR;
    if (n->kids[1]) {
        if (ev(n->kids[1], cx, &c)) return SL_ERR;
    } else {
        set_s(&c, " ", 1);
    }
    if (s.isnull || c.isnull) {
        set_null(out);
        return SL_OK;
    }
    const char *p = s.v.s.p;
    size_t len = s.v.s.len;
    if (n->flags & TRIM_LEADING)
        while (len > 0) {
            size_t cl = cp_len(p, len);
            if (!in_set(p, cl, c.v.s.p, c.v.s.len)) break;
            p += cl, len -= cl;
        }
    if (n->flags & TRIM_TRAILING)
        while (len > 0) {
            size_t b = len - 1; /* back up to the start of the last code point */
            while (b > 0 && ((unsigned char)p[b] & 0xC0) == 0x80) b--;
            if (!in_set(p + b, len - b, c.v.s.p, c.v.s.len)) break;
            len = b;
        }
    set_s(out, p, len); /* a slice of the input: nothing to copy */
    return SL_OK;
}

static int eval_substring(const node *n, evctx *cx, sl_value *out)
{
    sl_value v[3];
    if (eval_kids(n, cx, v)) return SL_ERR;
    for (int i = 0; i < n->nkids; i++)
        if (v[i].isnull) {
            set_null(out);
            return SL_OK;
        }
    if (n->nkids == 3 && v[2].v.i < 0) { /* a negative length gives NULL, as in Flink */
        set_null(out);
        return SL_OK;
    }
    const char *s = v[0].v.s.p;
    size_t len = v[0].v.s.len;
    int64_t nch = cp_count(s, len), pos = v[1].v.i;
    /* 1-based; 0 is read as 1; a negative start counts from the end */
    int64_t start = pos > 0 ? pos - 1 : pos < 0 ? nch + pos : 0;
    int64_t end = nch;
    if (n->nkids == 3 && __builtin_add_overflow(start, v[2].v.i, &end)) end = INT64_MAX;
    if (start < 0) start = 0;
    if (end > nch) end = nch;
    if (end <= start) {
        set_s(out, s, 0);
        return SL_OK;
    }
    size_t b0 = cp_offset(s, len, start);
    size_t b1 = b0 + cp_offset(s + b0, len - b0, end - start);
    set_s(out, s + b0, b1 - b0);
    return SL_OK;
}

static int eval_position(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    if (a.isnull || b.isnull) {
        set_null(out);
        return SL_OK;
    }
    if (a.v.s.len == 0) {
        set_i(out, 1);
        return SL_OK;
    }
    const char *hit = b.v.s.len >= a.v.s.len ? memmem(b.v.s.p, b.v.s.len, a.v.s.p, a.v.s.len)
                                             : NULL;
    set_i(out, hit ? cp_count(b.v.s.p, (size_t)(hit - b.v.s.p)) + 1 : 0);
    return SL_OK;
}

static int eval_case_map(const node *n, evctx *cx, sl_value *out, bool upper)
{
    int rc = ev(n->kids[0], cx, out);
    if (rc || out->isnull) return rc;
    uint32_t len = out->v.s.len;
    char *d = salloc(cx, n, len);
    if (!d) return SL_ERR;
    for (uint32_t i = 0; i < len; i++) {
        char c = out->v.s.p[i];
        if (upper && c >= 'a' && c <= 'z') c = (char)(c - 32);
        else if (!upper && c >= 'A' && c <= 'Z') c = (char)(c + 32);
        d[i] = c;
    }
    set_s(out, d, len);
    return SL_OK;
}

/* ---- RAND: java.util.Random's generator ---------------------------------
 * RAND and RAND_INTEGER draw from the 48-bit linear congruential generator
 * that java.util.Random specifies, so RAND(seed) yields the sequence Flink's
 * RAND(seed) does. The parsed tree is shared read-only by every subtask's
 * thread, so the generators' states live outside it, in thread-local
 * storage:
 *   - RAND() / RAND_INTEGER(bound): one generator per thread, seeded from
 *     the monotonic clock, the thread and a process-wide counter;
 *   - a literal seed: one generator per RAND node per thread, found by the
 *     node's serial in a table of RAND_SLOTS slots and started from the
 *     seed at the node's first evaluation on that thread. The sequence runs
 *     on across records, as Flink's does per operator instance (two subtasks
 *     on two threads each get the whole sequence). When the table is full,
 *     the least recently used slot is taken over -- a destroyed tree's slot
 *     first, as it is never used again -- so a sequence starts again only
 *     when one thread evaluates more than RAND_SLOTS seeded RAND calls in
 *     turn;
 *   - a seed that is not a literal (RAND(id)): a fresh generator from that
 *     value at every evaluation, so the result is a function of the seed.
 * No allocation, no lock, no system call. */
#define JR_MULT 0x5DEECE66DULL
#define JR_MASK ((1ULL << 48) - 1)
#define RAND_SLOTS 64

typedef struct rand_slot {
    uint64_t serial; /* the RAND node's serial; 0: free */
    uint64_t state;  /* its generator */
    uint64_t used;   /* rand_tick at its last use */
} rand_slot;

static _Thread_local rand_slot rand_slots[RAND_SLOTS];
static _Thread_local uint64_t rand_tick;
static _Thread_local uint64_t rand_free_state; /* unseeded calls' generator */
static _Thread_local bool rand_free_ready;
static _Atomic uint64_t rand_threads;          /* tells threads' unseeded generators apart */

/* A generator started from `seed` (a Java long, taken as its 64 bits). */
static uint64_t jr_seed(uint64_t seed) { return (seed ^ JR_MULT) & JR_MASK; }

/* The next `bits` (<= 31) random bits. */
static int32_t jr_next(uint64_t *st, int bits)
{
    *st = (*st * JR_MULT + 0xB) & JR_MASK;
    return (int32_t)(*st >> (48 - bits));
}

/* Uniform in [0, 1) with 53 random bits. */
static double jr_double(uint64_t *st)
{
    int64_t hi = jr_next(st, 26), lo = jr_next(st, 27);
    return (double)((hi << 27) + lo) * 0x1.0p-53;
}

/* Uniform in [0, bound), bound > 0: a power of two takes the high bits;
 * otherwise a draw is rejected when it falls in the incomplete last run of
 * `bound` values (in Java's int arithmetic: when u - r + (bound - 1)
 * overflows), so every result is equally likely. */
static int32_t jr_int(uint64_t *st, int32_t bound)
{
    int32_t r = jr_next(st, 31), m = bound - 1;
    if ((bound & m) == 0) return (int32_t)(((int64_t)bound * r) >> 31);
    for (int32_t u = r; (int64_t)u - (r = u % bound) + m > INT32_MAX; u = jr_next(st, 31)) {
    }
    return r;
}

/* The generator a RAND node draws from on this thread (see above). */
static uint64_t *rand_state(const node *n)
{
    if (!(n->flags & RAND_FIXED)) {
        if (!rand_free_ready) {
            uint64_t x = (uint64_t)sl_mono_ns() ^ (uint64_t)(uintptr_t)&rand_free_state ^
                         (atomic_fetch_add(&rand_threads, 1) + 1) * 0x9E3779B97F4A7C15ULL;
            x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29; /* spread the bits */
            rand_free_state = jr_seed(x);
            rand_free_ready = true;
        }
        return &rand_free_state;
    }
    size_t home = (size_t)((n->serial * 0x9E3779B97F4A7C15ULL) >> 58); /* 6 bits */
    rand_slot *sl = NULL, *lru = &rand_slots[home];
    rand_tick++;
    for (size_t i = 0; i < RAND_SLOTS; i++) {
        rand_slot *x = &rand_slots[(home + i) % RAND_SLOTS];
        if (x->serial == n->serial) {
            x->used = rand_tick;
            return &x->state;
        }
        if (x->serial == 0) {
            sl = x;
            break;
        }
        if (x->used < lru->used) lru = x;
    }
    if (!sl) sl = lru; /* full: a taken-over slot stays in its probe chain, so none is lost */
    sl->serial = n->serial;
    sl->state = jr_seed((uint64_t)n->lit.v.i);
    sl->used = rand_tick;
    return &sl->state;
}

static int eval_rand(const node *n, evctx *cx, sl_value *out)
{
    sl_value seed, bound;
    uint64_t local, *st;
    if (n->op == N_RAND_INT && ev(n->kids[n->nkids - 1], cx, &bound)) return SL_ERR;
    if ((n->flags & RAND_SEEDED) && !(n->flags & RAND_FIXED)) {
        if (ev(n->kids[0], cx, &seed)) return SL_ERR;
        if (seed.isnull) {
            set_null(out);
            return SL_OK;
        }
        local = jr_seed((uint64_t)seed.v.i);
        st = &local;
    } else {
        st = rand_state(n);
    }
    if (n->op == N_RAND) {
        set_d(out, jr_double(st));
        return SL_OK;
    }
    if (bound.isnull) {
        set_null(out);
        return SL_OK;
    }
    if (bound.v.i <= 0)
        return everr(cx, n, "RAND_INTEGER bound must be positive, got %lld", (long long)bound.v.i);
    set_i(out, jr_int(st, (int32_t)bound.v.i));
    return SL_OK;
}

/* TIMESTAMPADD(unit, n, ts) and TIMESTAMPDIFF(unit, t1, t2). DIFF counts
 * whole units from t1 to t2, truncated toward zero; MONTH, QUARTER and YEAR
 * count calendar months (see months_between). */
static int eval_tsfn(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
    if (a.isnull || b.isnull) {
        set_null(out);
        return SL_OK;
    }
    int u = n->flags;
    int64_t r;
    if (n->op == N_TS_ADD) {
        bool ok = tu_ms[u] ? !__builtin_mul_overflow(a.v.i, tu_ms[u], &r) &&
                                 !__builtin_add_overflow(b.v.i, r, &r)
                           : add_months(b.v.i, a.v.i * tu_months[u], &r);
        if (!ok)
            return everr(cx, n, "TIMESTAMPADD: adding %lld %s gives a TIMESTAMP out of range",
                         (long long)a.v.i, tu_name[u]);
        set_i(out, r);
        return SL_OK;
    }
    if (tu_ms[u]) {
        if (__builtin_sub_overflow(b.v.i, a.v.i, &r))
            return everr(cx, n, "TIMESTAMPDIFF: the difference is out of range");
        r /= tu_ms[u];
    } else {
        r = months_between(a.v.i, b.v.i) / tu_months[u];
    }
    set_i(out, wrap32(r)); /* an INT, narrowed as Java narrows */
    return SL_OK;
}

/* UNIX_TIMESTAMP([s]) and FROM_UNIXTIME(n): epoch seconds <-> 'yyyy-MM-dd
 * HH:mm:ss' (UTC). A string UNIX_TIMESTAMP cannot read gives
 * -9223372036854775808, as Flink's does. */
static int eval_unix(const node *n, evctx *cx, sl_value *out)
{
    if (n->op == N_UNIX_TS && n->nkids == 0) {
        set_i(out, sl_floor_div(sl_now_ms(), 1000));
        return SL_OK;
    }
    int rc = ev(n->kids[0], cx, out);
    if (rc || out->isnull) return rc;
    int64_t ms;
    if (n->op == N_UNIX_TS) {
        set_i(out, ts_parse(out->v.s.p, out->v.s.len, &ms) ? sl_floor_div(ms, 1000) : INT64_MIN);
        return SL_OK;
    }
    if (__builtin_mul_overflow(out->v.i, 1000, &ms))
        return everr(cx, n, "FROM_UNIXTIME: %lld seconds is out of range", (long long)out->v.i);
    char buf[48];
    return put_text(n, cx, out, buf, ts_to_sql(buf, sizeof buf, ms, false));
}

static int ev(const node *n, evctx *cx, sl_value *out)
{
    sl_value a, b;
    int rc;
    switch (n->op) {
    case N_LIT: *out = n->lit; return SL_OK;
    case N_COL:
        if (n->col >= cx->row->n)
            return everr(cx, n, "row has %d values, expression reads column %d", cx->row->n,
                         n->col + 1);
        *out = cx->row->vals[n->col];
        return SL_OK;
    case N_NEG:
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        if (n->ctype == SL_T_DOUBLE) out->v.d = -out->v.d;
        else if (n->ctype == SL_T_INT) out->v.i = wrap32(-out->v.i);
        else out->v.i = wrap64(0 - (uint64_t)out->v.i);
        return SL_OK;
    case N_ADD:
    case N_SUB:
    case N_MUL:
    case N_DIV:
    case N_MOD: return eval_arith(n, cx, out);
    case N_CONCAT: return eval_concat(n, cx, out);
    case N_EQ:
    case N_NE:
    case N_LT:
    case N_LE:
    case N_GT:
    case N_GE: {
        if (ev(n->kids[0], cx, &a) || ev(n->kids[1], cx, &b)) return SL_ERR;
        if (a.isnull || b.isnull) {
            set_null(out);
            return SL_OK;
        }
        int c = cmpv(&a, n->kids[0]->type, &b, n->kids[1]->type);
        bool r = n->op == N_EQ ? c == 0 : n->op == N_NE ? c != 0 : n->op == N_LT ? c < 0
               : n->op == N_LE ? c <= 0 : n->op == N_GT ? c > 0 : c >= 0;
        set_i(out, r);
        return SL_OK;
    }
    case N_AND:
    case N_OR: {
        /* the left side decides alone when it can (FALSE for AND, TRUE for OR) */
        bool dominant = n->op == N_OR;
        if (ev(n->kids[0], cx, &a)) return SL_ERR;
        if (a.isnull || (a.v.i != 0) != dominant) {
            if (ev(n->kids[1], cx, &b)) return SL_ERR;
            a = !b.isnull && (b.v.i != 0) == dominant ? b : a.isnull || b.isnull ? a : b;
            if (b.isnull && !a.isnull) set_null(&a);
        }
        if (a.isnull) set_null(out);
        else set_i(out, a.v.i != 0);
        return SL_OK;
    }
    case N_NOT:
        if (ev(n->kids[0], cx, out)) return SL_ERR;
        if (!out->isnull) out->v.i = !out->v.i;
        return SL_OK;
    case N_IS_NULL:
    case N_IS_TRUE:
    case N_IS_FALSE: {
        if (ev(n->kids[0], cx, &a)) return SL_ERR;
        bool r = n->op == N_IS_NULL ? a.isnull
               : n->op == N_IS_TRUE ? !a.isnull && a.v.i : !a.isnull && !a.v.i;
        set_i(out, r != n->neg);
        return SL_OK;
    }
    case N_BETWEEN: {
        sl_value v[3];
        if (eval_kids(n, cx, v)) return SL_ERR;
        sl_type tx = n->kids[0]->type;
        int ge = v[0].isnull || v[1].isnull ? U3 : cmpv(&v[0], tx, &v[1], n->kids[1]->type) >= 0;
        int le = v[0].isnull || v[2].isnull ? U3 : cmpv(&v[0], tx, &v[2], n->kids[2]->type) <= 0;
        int r = and3(ge, le);
        set3(out, n->neg ? not3(r) : r);
        return SL_OK;
    }
    case N_IN: {
        if (ev(n->kids[0], cx, &a)) return SL_ERR;
        if (a.isnull) {
            set_null(out);
            return SL_OK;
        }
        int r = F3;
        for (int i = 1; i < n->nkids && r != T3; i++) {
            if (ev(n->kids[i], cx, &b)) return SL_ERR;
            if (b.isnull) r = U3;
            else if (cmpv(&a, n->kids[0]->type, &b, n->kids[i]->type) == 0) r = T3;
        }
        set3(out, n->neg ? not3(r) : r);
        return SL_OK;
    }
    case N_LIKE: return eval_like(n, cx, out);
    case N_CASE: return eval_case(n, cx, out);
    case N_CAST: return eval_cast(n, cx, out);
    case N_UPPER:
    case N_LOWER: return eval_case_map(n, cx, out, n->op == N_UPPER);
    case N_CHAR_LENGTH:
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        set_i(out, cp_count(out->v.s.p, out->v.s.len));
        return SL_OK;
    case N_ABS:
    case N_FLOOR:
    case N_CEIL:
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        if (n->type == SL_T_DOUBLE)
            out->v.d = n->op == N_ABS ? fabs(out->v.d) : n->op == N_FLOOR ? floor(out->v.d)
                                                                         : ceil(out->v.d);
        else if (n->op == N_ABS && out->v.i < 0) /* ABS(INT_MIN) wraps, as Java's Math.abs */
            out->v.i = n->type == SL_T_INT ? wrap32(-out->v.i) : wrap64(0 - (uint64_t)out->v.i);
        return SL_OK;
    case N_COALESCE:
        for (int i = 0; i < n->nkids; i++) {
            if (ev(n->kids[i], cx, out)) return SL_ERR;
            if (!out->isnull) {
                widen(out, n->kids[i]->type, n->type);
                return SL_OK;
            }
        }
        return SL_OK;
    case N_IF: {
        if (ev(n->kids[0], cx, &a)) return SL_ERR;
        const node *pick = !a.isnull && a.v.i ? n->kids[1] : n->kids[2];
        if (ev(pick, cx, out)) return SL_ERR;
        widen(out, pick->type, n->type);
        return SL_OK;
    }
    case N_NULLIF:
        if (ev(n->kids[0], cx, out) || ev(n->kids[1], cx, &b)) return SL_ERR;
        if (!out->isnull && !b.isnull &&
            cmpv(out, n->kids[0]->type, &b, n->kids[1]->type) == 0)
            set_null(out);
        return SL_OK;
    case N_TRIM: return eval_trim(n, cx, out);
    case N_SUBSTRING: return eval_substring(n, cx, out);
    case N_POSITION: return eval_position(n, cx, out);
    case N_TO_TS_LTZ: {
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        int64_t scale = n->flags == 0 ? 1000 : 1, ms;
        if (n->kids[0]->type == SL_T_DOUBLE) {
            double d = out->v.d * (double)scale;
            if (!(d > -9.2e18 && d < 9.2e18))
                return everr(cx, n, "TO_TIMESTAMP_LTZ: %g is out of range", out->v.d);
            ms = (int64_t)d;
        } else if (__builtin_mul_overflow(out->v.i, scale, &ms)) {
            return everr(cx, n, "TO_TIMESTAMP_LTZ: %lld seconds is out of range",
                         (long long)out->v.i);
        }
        set_i(out, ms);
        return SL_OK;
    }
    case N_NOW: { /* the wall clock at this evaluation, as TIMESTAMP(flags) */
        static const int64_t unit[4] = {1000, 100, 10, 1};
        int64_t ms = sl_now_ms();
        set_i(out, ms - (ms % unit[n->flags] + unit[n->flags]) % unit[n->flags]);
        return SL_OK;
    }
    case N_UNIX_TS:
    case N_FROM_UNIXTIME: return eval_unix(n, cx, out);
    case N_RAND:
    case N_RAND_INT: return eval_rand(n, cx, out);
    case N_TS_ADD:
    case N_TS_DIFF: return eval_tsfn(n, cx, out);
    case N_TO_TS: {
        int64_t ms;
        if ((rc = ev(n->kids[0], cx, out)) || out->isnull) return rc;
        /* an unparsable string gives NULL, as Flink's TO_TIMESTAMP does */
        if (ts_parse(out->v.s.p, out->v.s.len, &ms)) set_i(out, ms);
        else set_null(out);
        return SL_OK;
    }
    }
    return everr(cx, n, "internal error: unknown node %d", (int)n->op);
}

int sl_expr_eval(const sl_expr *e, const sl_row *row, sl_arena *scratch, sl_value *out,
                 char *err, size_t errlen)
{
    evctx cx = {row, scratch, err, errlen};
    return ev(e->root, &cx, out);
}

int sl_expr_eval_bool(const sl_expr *e, const sl_row *row, sl_arena *scratch, bool *pass,
                      char *err, size_t errlen)
{
    sl_value v;
    *pass = false;
    if (e->root->type != SL_T_BOOLEAN && e->root->type != SL_T_NULL)
        return sl_seterr(err, errlen, "condition is %s, not BOOLEAN", tname(e->root->type));
    if (sl_expr_eval(e, row, scratch, &v, err, errlen)) return SL_ERR;
    *pass = !v.isnull && v.v.i != 0;
    return SL_OK;
}
