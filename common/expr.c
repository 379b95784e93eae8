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
 * [NOT] UNKNOWN, and TIMESTAMP +/- INTERVAL. Choices where SQL dialects
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"

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
    N_FLOOR, N_CEIL, N_TRIM, N_SUBSTRING, N_POSITION, N_TO_TS_LTZ, N_TO_TS
} n_op;

/* TRIM sides (node flags) */
enum { TRIM_BOTH = 3, TRIM_LEADING = 1, TRIM_TRAILING = 2 };
/* CASE shape (node flags) */
enum { CASE_OPERAND = 1, CASE_ELSE = 2 };

typedef struct node node;
struct node {
    n_op op;
    sl_type type;     /* result type */
    sl_type ctype;    /* arithmetic: INT (32-bit wrap), BIGINT (64-bit wrap) or DOUBLE */
    bool interval;    /* a BIGINT holding a span of milliseconds (INTERVAL literal) */
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

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. Shifting the year to
 * start in March puts the leap day last, so month lengths follow a fixed
 * 153-days-per-5-months pattern. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;                         /* [0, 399] */
    int mp = (m + 9) % 12;                               /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + d - 1;            /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

/* "YYYY-MM-DD HH:MM:SS.mmm" -- the SQL form CAST(ts AS STRING) gives. */
static int ts_to_sql(char *dst, size_t cap, int64_t ms)
{
    int64_t days = ms / 86400000, rem = ms % 86400000; /* no overflow even at INT64_MIN */
    if (rem < 0) rem += 86400000, days--;
    int64_t y;
    int mo, d;
    civil_from_days(days, &y, &mo, &d);
    return snprintf(dst, cap, "%04lld-%02d-%02d %02d:%02d:%02d.%03d", (long long)y, mo, d,
                    (int)(rem / 3600000), (int)(rem / 60000 % 60), (int)(rem / 1000 % 60),
                    (int)(rem % 1000));
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
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
        return false;
    *out = days_from_civil(y, mo, d) * 86400000 + (int64_t)h * 3600000 + (int64_t)mi * 60000 +
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

static bool interval_unit(const char *u, size_t n, int64_t *mult)
{
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {
        {"ms", 1},          {"milli", 1},        {"millis", 1},    {"millisecond", 1},
        {"milliseconds", 1}, {"s", 1000},         {"sec", 1000},    {"secs", 1000},
        {"second", 1000},   {"seconds", 1000},   {"m", 60000},     {"min", 60000},
        {"mins", 60000},    {"minute", 60000},   {"minutes", 60000}, {"h", 3600000},
        {"hour", 3600000},  {"hours", 3600000},  {"d", 86400000},  {"day", 86400000},
        {"days", 86400000},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(units); i++)
        if (word_eq(u, n, units[i].name)) {
            *mult = units[i].ms;
            return true;
        }
    return false;
}

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

static bool interval_scale(int64_t n, int64_t mult, int64_t *ms)
{
    return !__builtin_mul_overflow(n, mult, ms);
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
    } else {
        /* 5 s, 100ms, 50000 */
        size_t i = 0;
        while (i < n && (is_digit((unsigned char)s[i]) || (i == 0 && (s[i] == '-' || s[i] == '+'))))
            i++;
        num = s;
        num_len = i;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        unit = s + i;
        unit_len = n - i;
    }
    int64_t v, mult = 1;
    if (!parse_i64(num, num_len, &v)) goto bad;
    if (unit_len > 0 && !interval_unit(unit, unit_len, &mult))
        return sl_seterr(err, errlen,
                         "invalid interval '%s': unknown unit '%.*s' (use ms, s, min, h or d)",
                         text, (int)unit_len, unit);
    if (v < 0) return sl_seterr(err, errlen, "invalid interval '%s': must not be negative", text);
    if (!interval_scale(v, mult, ms))
        return sl_seterr(err, errlen, "invalid interval '%s': too large", text);
    return SL_OK;
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
        "ESCAPE", "CASE", "WHEN", "THEN", "ELSE", "END", "AS", "FROM", "FOR", "UNKNOWN"};
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
    if (ta == SL_T_TIMESTAMP && tb == SL_T_STRING) *b = wrap_cast(p, *b, SL_T_TIMESTAMP);
    else if (tb == SL_T_TIMESTAMP && ta == SL_T_STRING) *a = wrap_cast(p, *a, SL_T_TIMESTAMP);
    else if (!common_type(ta, tb, &t) && !(is_str_type(ta) && is_str_type(tb)))
        return perr(p, pos0, "cannot compare %s with %s in '%s'", tname(ta), tname(tb), op);
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

/* INTERVAL '5' SECOND -- a BIGINT of milliseconds flagged as an interval. */
static node *parse_interval(parser *p, const tok *kw)
{
    const tok *q = advance(p); /* the string, checked by the caller */
    const tok *u = peek(p);
    int64_t mult, v, ms;
    char *num = unquote(q, '\'', NULL);
    size_t nl = strlen(num);
    const char *ns = num;
    while (nl > 0 && *ns == ' ') ns++, nl--;
    while (nl > 0 && ns[nl - 1] == ' ') nl--;
    bool ok = parse_i64(ns, nl, &v);
    free(num);
    if (!ok) {
        perr(p, q->pos, "INTERVAL needs a whole number in quotes, e.g. INTERVAL '5' SECOND");
        return NULL;
    }
    if (u->kind != TK_IDENT || !interval_unit(u->s, u->len, &mult)) {
        unexpected(p, "an interval unit (SECOND, MINUTE, HOUR, DAY)");
        return NULL;
    }
    advance(p);
    if (!interval_scale(v, mult, &ms)) {
        perr(p, q->pos, "INTERVAL value out of range");
        return NULL;
    }
    node *n = lit_node(p, kw->pos, SL_T_BIGINT);
    n->interval = true;
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
    if (accept_kw(p, "WITH")) {
        if (expect_kw(p, "LOCAL") || expect_kw(p, "TIME") || expect_kw(p, "ZONE")) return NULL;
    }
    sl_type to;
    if (sl_type_parse(tbuf, &to) != SL_OK || to == SL_T_NULL) {
        perr(p, tk->pos, "unknown type '%s' in %s", tbuf, try_cast ? "TRY_CAST" : "CAST");
        return NULL;
    }
    if (expect_op(p, ")")) return NULL;
    if (!cast_allowed(x->type, to)) {
        perr(p, name->pos, "cannot CAST %s to %s", tname(x->type), tname(to));
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
                     tname(operand->type), tname(w->type));
                return NULL;
            }
        } else if (w->type != SL_T_BOOLEAN && w->type != SL_T_NULL) {
            perr(p, wt->pos, "WHEN condition must be BOOLEAN, got %s", tname(w->type));
            return NULL;
        }
        if (expect_kw(p, "THEN")) return NULL;
        const tok *tt = peek(p);
        node *th = parse_or(p);
        if (!th) return NULL;
        if (!common_type(rt, th->type, &rt)) {
            perr(p, tt->pos, "CASE branches have incompatible types %s and %s", tname(rt),
                 tname(th->type));
            return NULL;
        }
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
                 tname(el->type));
            return NULL;
        }
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
        perr(p, name->pos, "TRIM needs STRING arguments, got %s", tname(s->type));
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
             tname(s->type), tname(a->type), b ? ", " : "", b ? tname(b->type) : "");
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
        perr(p, name->pos, "POSITION needs STRING arguments, got %s and %s", tname(a->type),
             tname(b->type));
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

/* Build and type a binary arithmetic node (also MOD() and '||'). */
static node *make_arith(parser *p, n_op op, int pos0, node *a, node *b)
{
    sl_type ta = a->type, tb = b->type, t = SL_T_NULL;
    bool interval = false;
    if (op == N_CONCAT) {
        if ((ta != SL_T_STRING && ta != SL_T_NULL) || (tb != SL_T_STRING && tb != SL_T_NULL))
            goto bad;
        t = SL_T_STRING;
    } else if ((op == N_ADD || op == N_SUB) && ta == SL_T_TIMESTAMP && b->interval) {
        t = SL_T_TIMESTAMP;
    } else if (op == N_ADD && tb == SL_T_TIMESTAMP && a->interval) {
        t = SL_T_TIMESTAMP;
    } else if ((is_num_type(ta) || ta == SL_T_NULL) && (is_num_type(tb) || tb == SL_T_NULL)) {
        common_type(ta, tb, &t);
        if (op == N_ADD || op == N_SUB) interval = a->interval && b->interval;
        else if (op == N_MUL) interval = (a->interval && is_int_type(tb)) ||
                                         (b->interval && is_int_type(ta));
        else if (op == N_DIV) interval = a->interval && is_int_type(tb) && !b->interval;
    } else {
        goto bad;
    }
    node *n = new_node(p, op, pos0, 2);
    n->kids[0] = a;
    n->kids[1] = b;
    n->type = t;
    n->ctype = t == SL_T_TIMESTAMP ? SL_T_BIGINT : t;
    n->interval = interval;
    return seal(p, n) ? NULL : n;
bad:
    perr(p, pos0, "cannot apply '%s' to %s%s and %s%s", op_sym(op), tname(ta),
         a->interval ? " (interval)" : "", tname(tb), b->interval ? " (interval)" : "");
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
    {"TO_TIMESTAMP", N_TO_TS, 1, 1},
};

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
    sl_type t0 = n->kids[0]->type, t = SL_T_NULL;
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
                     tname(n->kids[i]->type),
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
    case N_CEIL:
        if (!is_num_type(t0) && t0 != SL_T_NULL) {
            perr(p, name->pos, "%s needs a number, got %s", f->name, tname(t0));
            return NULL;
        }
        t = t0;
        break;
    case N_COALESCE:
        for (int i = 0; i < n->nkids; i++)
            if (!common_type(t, n->kids[i]->type, &t)) {
                perr(p, n->kids[i]->pos - 1, "COALESCE arguments have incompatible types %s and %s",
                     tname(t), tname(n->kids[i]->type));
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
                 tname(n->kids[1]->type), tname(n->kids[2]->type));
            return NULL;
        }
        break;
    case N_NULLIF: {
        node *a = n->kids[0], *b = n->kids[1];
        if (make_comparable(p, &a, &b, name->pos, "NULLIF", false)) return NULL;
        n->kids[0] = a;
        n->kids[1] = b;
        t = a->type;
        break;
    }
    case N_TO_TS_LTZ: {
        node *prec = n->kids[1];
        if (!is_num_type(t0) && t0 != SL_T_NULL) {
            perr(p, name->pos, "TO_TIMESTAMP_LTZ needs a number of seconds or milliseconds, got %s",
                 tname(t0));
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
        perr(p, k->pos, "cannot apply unary '%c' to %s", k->s[0], tname(x->type));
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
    n->interval = x->interval;
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
            perr(p, k->pos, "LIKE needs STRING operands, got %s and %s", tname(x->type),
                 tname(pat->type));
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
                 op == N_IS_TRUE ? "TRUE" : "FALSE", tname(x->type));
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
        perr(p, k->pos, "NOT needs a BOOLEAN, got %s", tname(x->type));
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
                 tname(a->type), tname(b->type));
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

static int eval_cast(const node *n, evctx *cx, sl_value *out)
{
    const node *k = n->kids[0];
    sl_type from = k->type, to = n->type;
    if (ev(k, cx, out)) return SL_ERR;
    if (out->isnull || from == to) return SL_OK;
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
        case SL_T_TIMESTAMP: return put_text(n, cx, out, buf, ts_to_sql(buf, sizeof buf, v.v.i));
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
