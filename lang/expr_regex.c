/*
 * expr_regex.c -- Flink's regular expressions (java.util.regex syntax) on
 * the C library's POSIX extended regular expressions (regcomp/regexec).
 *
 * A pattern is rewritten once, at check time, into the ERE that means the
 * same thing, then compiled: \d \w \s and their negations become bracket
 * expressions, `.` stops at line breaks as Java's does, escapes inside
 * [...] (which POSIX reads literally) are resolved, and \t \n \r \f \e
 * become their bytes. What POSIX cannot honour is refused with a message
 * instead of being left to match something else: lazy (*?) and possessive
 * (*+) quantifiers, (?...) groups, \p{..}, \Q..\E and the other escapes,
 * nested classes and && in [...], non-ASCII characters inside [...] or
 * under a quantifier (matching is byte-wise). Differences that remain are
 * documented in docs/SQL.md (POSIX takes the longest of the leftmost
 * matches, Java the first alternative that matches).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_int.h"

typedef struct rx_out {
    char *p;
    size_t n, cap;
} rx_out;

static void put(rx_out *o, const char *s, size_t n)
{
    if (o->n + n + 1 > o->cap) {
        o->cap = (o->n + n + 1) * 2;
        o->p = sl_realloc(o->p, o->cap);
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = '\0';
}
static void putc1(rx_out *o, char c) { put(o, &c, 1); }
static void puts0(rx_out *o, const char *s) { put(o, s, strlen(s)); }

static bool is_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c);
}

/* \t \n \r \f \a \e: the byte, or 0 */
static char ctl_escape(char c)
{
    switch (c) {
    case 't': return '\t';
    case 'n': return '\n';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'a': return '\a';
    case 'e': return 0x1b;
    default: return 0;
    }
}

/* Translate the class starting after '[' at pat[*i]; *i ends after its ']'. */
static int tr_class(const char *pat, size_t n, size_t *i, rx_out *o, char *err, size_t errlen)
{
    size_t k = *i;
    bool rbr = false, dash = false, caret = false, lbr = false; /* escaped specials */
    putc1(o, '[');
    if (k < n && pat[k] == '^') putc1(o, '^'), k++;
    size_t body = o->n;
    for (;;) {
        if (k >= n) return sl_seterr(err, errlen, "unclosed character class '['");
        unsigned char c = (unsigned char)pat[k];
        if (c == ']') {
            if (o->n == body && !rbr && !dash && !caret && !lbr)
                return sl_seterr(err, errlen, "empty character class '[]'");
            k++;
            break;
        }
        if (c >= 0x80)
            return sl_seterr(err, errlen, "non-ASCII character inside [...] (matching is "
                             "byte-wise)");
        if (c == '\0') return sl_seterr(err, errlen, "pattern contains a NUL byte");
        if (c == '[') return sl_seterr(err, errlen, "nested character classes are not supported");
        if (c == '&' && k + 1 < n && pat[k + 1] == '&')
            return sl_seterr(err, errlen, "class intersection '&&' is not supported");
        if (c != '\\') {
            putc1(o, (char)c);
            k++;
            continue;
        }
        if (k + 1 >= n) return sl_seterr(err, errlen, "pattern ends with '\\'");
        char e = pat[k + 1];
        k += 2;
        if (e == '\0') return sl_seterr(err, errlen, "pattern contains a NUL byte");
        if (e == 'd') puts0(o, "0-9");
        else if (e == 's') puts0(o, "[:space:]");
        else if (e == 'w') puts0(o, "[:alnum:]_");
        else if (ctl_escape(e)) putc1(o, ctl_escape(e));
        else if (e == ']') rbr = true;
        else if (e == '-') dash = true;
        else if (e == '^') caret = true;
        else if (e == '[') lbr = true;
        else if (is_alnum((unsigned char)e) || (unsigned char)e >= 0x80)
            return sl_seterr(err, errlen, "'\\%c' inside [...] is not supported", e);
        else putc1(o, e); /* an escaped punctuation character: itself */
    }
    if (caret && o->n == body && !rbr && !lbr && !dash)
        return sl_seterr(err, errlen, "write '\\^' instead of a class of '^' alone");
    if (rbr) { /* POSIX: a literal ']' comes first */
        put(o, "]", 1);
        memmove(o->p + body + 1, o->p + body, o->n - body - 1);
        o->p[body] = ']';
    }
    if (lbr) putc1(o, '[');
    if (caret && dash && o->n == body) puts0(o, "-^"); /* '-' first is literal too */
    else {
        if (caret) putc1(o, '^');
        if (dash) putc1(o, '-'); /* and a literal '-' last */
    }
    putc1(o, ']');
    *i = k;
    return SL_OK;
}

/* Rewrite a Java pattern as POSIX ERE into o. */
static int translate(const char *pat, size_t n, rx_out *o, char *err, size_t errlen)
{
    bool atom_ok = false;     /* a quantifier here applies to something */
    bool atom_ascii = true;   /* ... that is not a byte of a multi-byte character */
    int depth = 0;            /* open groups */
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)pat[i];
        if (c == '\0') return sl_seterr(err, errlen, "pattern contains a NUL byte");
        if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (atom_ok && !atom_ascii)
                return sl_seterr(err, errlen, "quantifier after a non-ASCII character "
                                 "(matching is byte-wise; use a group (...))");
            size_t j = i + 1;
            if (c == '{') {
                while (j < n && pat[j] != '}') j++;
                if (j >= n) return sl_seterr(err, errlen, "unclosed repetition '{'");
                j++;
            }
            put(o, pat + i, j - i);
            if (j < n && (pat[j] == '?' || pat[j] == '+'))
                return sl_seterr(err, errlen, "%s quantifier '%.*s' is not supported",
                                 pat[j] == '?' ? "lazy" : "possessive", (int)(j + 1 - i),
                                 pat + i);
            i = j;
            continue;
        }
        atom_ok = true;
        atom_ascii = true;
        if (c == '\\') {
            if (i + 1 >= n) return sl_seterr(err, errlen, "pattern ends with '\\'");
            char e = pat[i + 1];
            i += 2;
            if (e == '\0') return sl_seterr(err, errlen, "pattern contains a NUL byte");
            switch (e) {
            case 'd': puts0(o, "[0-9]"); break;
            case 'D': puts0(o, "[^0-9]"); break;
            case 'w': puts0(o, "[[:alnum:]_]"); break;
            case 'W': puts0(o, "[^[:alnum:]_]"); break;
            case 's': puts0(o, "[[:space:]]"); break;
            case 'S': puts0(o, "[^[:space:]]"); break;
            case 'b':
            case 'B': /* word boundaries: the same in glibc's ERE */
                putc1(o, '\\');
                putc1(o, e);
                atom_ok = false;
                break;
            default:
                if (ctl_escape(e)) {
                    putc1(o, ctl_escape(e));
                } else if (e >= '1' && e <= '9') { /* a back reference */
                    putc1(o, '\\');
                    putc1(o, e);
                } else if (is_alnum((unsigned char)e) || (unsigned char)e >= 0x80) {
                    return sl_seterr(err, errlen, "'\\%c' is not supported", e);
                } else if (strchr(".[]()*+?{}|^$\\", e)) {
                    putc1(o, '\\');
                    putc1(o, e);
                } else {
                    putc1(o, e); /* \- \/ \& ...: the character itself */
                }
            }
            continue;
        }
        if (c == '[') {
            i++;
            if (tr_class(pat, n, &i, o, err, errlen)) return SL_ERR;
            continue;
        }
        if (c == '(' && i + 1 < n && pat[i + 1] == '?')
            return sl_seterr(err, errlen, "'(?' groups (non-capturing, look-around, flags) are "
                             "not supported");
        if (c == '.') {
            puts0(o, "[^\n\r]"); /* Java's '.' stops at line breaks */
            i++;
            continue;
        }
        if (c == '(') depth++;
        if (c == ')' && depth-- == 0) /* glibc would take it as a character; Java refuses */
            return sl_seterr(err, errlen, "unmatched ')'");
        if (c == '(' || c == '|' || c == '^') atom_ok = false;
        if (c >= 0x80) { /* a whole UTF-8 sequence: a quantifier may not follow */
            size_t j = i + 1;
            while (j < n && ((unsigned char)pat[j] & 0xC0) == 0x80) j++;
            put(o, pat + i, j - i);
            atom_ascii = j - i == 1;
            i = j;
            continue;
        }
        putc1(o, (char)c);
        i++;
    }
    if (!o->p) put(o, "", 0);
    return SL_OK;
}

/* A text every match of the (already translated, so well-formed) Java
 * pattern contains: the longest run of literal characters, none of them
 * optional or repeated, outside any group, in a pattern with no '|' outside
 * groups. Conservative: any doubt ends a run. */
static void required_text(const char *pat, size_t n, sl_rx *rx)
{
    char cur[sizeof rx->lit];
    size_t cl = 0;
    int depth = 0;
    rx->litlen = 0;
#define COMMIT()                                                                              \
    do {                                                                                      \
        if (cl > rx->litlen) memcpy(rx->lit, cur, rx->litlen = cl);                          \
        cl = 0;                                                                               \
    } while (0)
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)pat[i];
        int lit = -1;  /* a literal character at depth 0, or -1 */
        size_t next = i + 1;
        if (c == '\\' && i + 1 < n) {
            unsigned char e = (unsigned char)pat[i + 1];
            next = i + 2;
            if (e < 0x80 && !is_alnum(e)) lit = e;
        } else if (c == '[') { /* skip the class, as tr_class reads it */
            size_t k = i + 1;
            if (k < n && pat[k] == '^') k++;
            while (k < n && pat[k] != ']') k += pat[k] == '\\' ? 2 : 1;
            next = k + 1;
        } else if (c == '{') {
            size_t k = i;
            while (k < n && pat[k] != '}') k++;
            next = k + 1;
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
        } else if (c == '|' && depth == 0) {
            rx->litlen = 0; /* alternatives at the top: no text is certain */
            return;
        } else if (c < 0x80 && !strchr(".^$*+?|", c)) {
            lit = c;
        }
        if (lit < 0 || depth > 0) {
            COMMIT();
        } else {
            char q = next < n ? pat[next] : 0;
            if (q == '*' || q == '?' || q == '{') {
                COMMIT(); /* optional or repeated: not certain */
            } else {
                if (cl < sizeof cur) cur[cl++] = (char)lit;
                if (q == '+') COMMIT(); /* once at least, then the run breaks */
            }
        }
        i = next;
    }
    COMMIT();
#undef COMMIT
}

int sl_expr_regex_compile(sl_rx *rx, const char *pat, size_t n, bool nosub, char *err,
                          size_t errlen)
{
    rx_out o = {0};
    int rc = translate(pat, n, &o, err, errlen);
    if (rc == SL_OK) {
        int r = regcomp(&rx->re, o.p, REG_EXTENDED | (nosub ? REG_NOSUB : 0));
        if (r) {
            char msg[160];
            regerror(r, &rx->re, msg, sizeof msg);
            rc = sl_seterr(err, errlen, "%s", msg);
        } else {
            required_text(pat, n, rx);
        }
    }
    free(o.p);
    return rc;
}
