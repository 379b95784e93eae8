/*
 * expr_str.c -- Flink's further string functions for the table in
 * expr_fn.c: LPAD, RPAD, REPEAT, REVERSE, INITCAP, LOCATE, INSTR, LEFT,
 * RIGHT, TRANSLATE, ELT, CONCAT_WS, ASCII, CHR, OVERLAY, URL_ENCODE,
 * URL_DECODE, PARSE_URL, STARTSWITH, ENDSWITH.
 *
 * Lengths and positions count characters (UTF-8 code points; Flink counts
 * UTF-16 units, the same outside the supplementary planes). Results are
 * written into the scratch arena, or are slices of an argument.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"

#define S(i) v[i].v.s.p, (size_t)v[i].v.s.len

/* Write `want` characters cycling through p[0..pn) into d; returns bytes. */
static size_t cycle(char *d, const char *p, size_t pn, int64_t want)
{
    size_t o = 0, i = 0;
    while (want-- > 0) {
        size_t l = sl_fnx_cplen(p + i, pn - i);
        memcpy(d + o, p + i, l);
        o += l;
        i += l;
        if (i >= pn) i = 0;
    }
    return o;
}

/* LPAD(s, len, pad) / RPAD(s, len, pad): s cut or padded to len characters;
 * NULL for a negative len or an empty pad (Flink's). */
int sl_fx_pad(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    int64_t len = v[1].v.i;
    if (len < 0 || v[2].v.s.len == 0) {
        out->isnull = true;
        return SL_OK;
    }
    int64_t have = sl_fnx_cpcount(S(0));
    int64_t keep = have < len ? have : len, fill = len - keep;
    size_t kb = sl_fnx_cpoff(S(0), keep);
    char *d = sl_fnx_alloc(n, cx, kb + (size_t)fill * 4);
    if (!d) return SL_ERR;
    size_t o = 0;
    if (n->fx->name[0] == 'L') {
        o = cycle(d, S(2), fill);
        memcpy(d + o, v[0].v.s.p, kb);
        o += kb;
    } else {
        memcpy(d, v[0].v.s.p, kb);
        o = kb + cycle(d + kb, S(2), fill);
    }
    fnx_set_s(out, d, o);
    return SL_OK;
}

/* REPEAT(s, n): s n times; empty for n <= 0. */
int sl_fx_repeat(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    int64_t k = v[1].v.i > 0 ? v[1].v.i : 0;
    size_t len = v[0].v.s.len;
    if (k && len > (size_t)UINT32_MAX / (uint64_t)k)
        return sl_fnx_err(n, cx, "REPEAT result too large (%zu bytes times %lld)", len,
                          (long long)k);
    char *d = sl_fnx_alloc(n, cx, len * (size_t)k);
    if (!d) return SL_ERR;
    for (int64_t i = 0; i < k; i++) memcpy(d + (size_t)i * len, v[0].v.s.p, len);
    fnx_set_s(out, d, len * (size_t)k);
    return SL_OK;
}

/* REVERSE(s): the characters in reverse order. */
int sl_fx_reverse(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    size_t len = v[0].v.s.len;
    char *d = sl_fnx_alloc(n, cx, len);
    if (!d) return SL_ERR;
    for (size_t i = 0; i < len;) {
        size_t l = sl_fnx_cplen(v[0].v.s.p + i, len - i);
        memcpy(d + len - i - l, v[0].v.s.p + i, l);
        i += l;
    }
    fnx_set_s(out, d, len);
    return SL_OK;
}

/* INITCAP(s): the first letter of each word upper case, the others lower
 * case; words are runs of ASCII letters and digits (Calcite's initcap,
 * which Flink calls). */
int sl_fx_initcap(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    size_t len = v[0].v.s.len;
    char *d = sl_fnx_alloc(n, cx, len);
    if (!d) return SL_ERR;
    bool start = true;
    for (size_t i = 0; i < len; i++) {
        char c = v[0].v.s.p[i];
        bool digit = c >= '0' && c <= '9', up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z';
        if (start) {
            if (lo) c = (char)(c - 32);
            if (digit || up || lo) start = false;
        } else if (up) {
            c = (char)(c + 32);
        } else if (!digit && !lo) {
            start = true;
        }
        d[i] = c;
    }
    fnx_set_s(out, d, len);
    return SL_OK;
}

/* Character position (1-based) of `seek` in s at or after character
 * `from` (1-based); 0 when absent or `from` is out of range. */
static int64_t find_from(const char *s, size_t sn, const char *seek, size_t kn, int64_t from)
{
    int64_t chars = sl_fnx_cpcount(s, sn);
    if (from < 1 || from - 1 > chars) return 0;
    size_t i = sl_fnx_cpoff(s, sn, from - 1);
    int64_t pos = from;
    for (;;) {
        if (i + kn <= sn && (kn == 0 || !memcmp(s + i, seek, kn))) return pos;
        if (i >= sn) return 0;
        i += sl_fnx_cplen(s + i, sn - i);
        pos++;
    }
}

/* LOCATE(seek, s [, from]) and INSTR(s, seek). */
int sl_fx_locate(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    bool instr = n->fx->name[0] == 'I';
    const sl_value *s = instr ? &v[0] : &v[1], *k = instr ? &v[1] : &v[0];
    int64_t from = n->nkids == 3 ? v[2].v.i : 1;
    out->isnull = false;
    out->v.i = find_from(s->v.s.p, s->v.s.len, k->v.s.p, k->v.s.len, from);
    return SL_OK;
}

/* LEFT(s, n) / RIGHT(s, n): the first / last n characters; empty for n < 0. */
int sl_fx_left_right(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    int64_t k = v[1].v.i < 0 ? 0 : v[1].v.i, chars = sl_fnx_cpcount(S(0));
    if (k > chars) k = chars;
    if (n->fx->name[0] == 'L') {
        fnx_set_s(out, v[0].v.s.p, sl_fnx_cpoff(S(0), k));
    } else {
        size_t at = sl_fnx_cpoff(S(0), chars - k);
        fnx_set_s(out, v[0].v.s.p + at, v[0].v.s.len - at);
    }
    return SL_OK;
}

/* TRANSLATE(s, from, to): each character of s found in `from` replaced by
 * the character at the same place in `to`, or removed when `to` is shorter
 * (the first occurrence in `from` counts). NULL when s is NULL; a NULL or
 * empty `from` leaves s; a NULL `to` removes. */
int sl_fx_translate(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull) {
        out->isnull = true;
        return SL_OK;
    }
    if (v[1].isnull || v[1].v.s.len == 0) {
        *out = v[0];
        return SL_OK;
    }
    const char *to = v[2].isnull ? "" : v[2].v.s.p;
    size_t tn = v[2].isnull ? 0 : v[2].v.s.len, len = v[0].v.s.len;
    char *d = sl_fnx_alloc(n, cx, len * 4);
    if (!d) return SL_ERR;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t l = sl_fnx_cplen(v[0].v.s.p + i, len - i);
        int64_t at = -1, k = 0;
        for (size_t j = 0; j < v[1].v.s.len; k++) {
            size_t fl = sl_fnx_cplen(v[1].v.s.p + j, v[1].v.s.len - j);
            if (fl == l && !memcmp(v[1].v.s.p + j, v[0].v.s.p + i, l)) {
                at = k;
                break;
            }
            j += fl;
        }
        if (at < 0) {
            memcpy(d + o, v[0].v.s.p + i, l);
            o += l;
        } else {
            size_t ti = sl_fnx_cpoff(to, tn, at);
            if (ti < tn) {
                size_t tl = sl_fnx_cplen(to + ti, tn - ti);
                memcpy(d + o, to + ti, tl);
                o += tl;
            }
        }
        i += l;
    }
    fnx_set_s(out, d, o);
    return SL_OK;
}

/* ELT(k, e1, e2, ...): e_k; NULL when k is NULL or not in 1..count. */
int sl_fx_elt(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    if (v[0].isnull || v[0].v.i < 1 || v[0].v.i >= n->nkids) out->isnull = true;
    else *out = v[v[0].v.i];
    return SL_OK;
}

/* CONCAT_WS(sep, s1, ...): the non-NULL strings joined by sep; NULL when
 * sep is. */
int sl_fx_concat_ws(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull) {
        out->isnull = true;
        return SL_OK;
    }
    size_t total = 0, parts = 0;
    for (int i = 1; i < n->nkids; i++)
        if (!v[i].isnull) total += v[i].v.s.len, parts++;
    if (parts > 1) total += (parts - 1) * v[0].v.s.len;
    char *d = sl_fnx_alloc(n, cx, total);
    if (!d) return SL_ERR;
    size_t o = 0;
    bool first = true;
    for (int i = 1; i < n->nkids; i++) {
        if (v[i].isnull) continue;
        if (!first && v[0].v.s.len) memcpy(d + o, v[0].v.s.p, v[0].v.s.len), o += v[0].v.s.len;
        first = false;
        if (v[i].v.s.len) memcpy(d + o, v[i].v.s.p, v[i].v.s.len);
        o += v[i].v.s.len;
    }
    fnx_set_s(out, d, o);
    return SL_OK;
}

/* ASCII(s): the code of the first character; 0 for an empty string. */
int sl_fx_ascii(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)n, (void)cx;
    const unsigned char *s = (const unsigned char *)v[0].v.s.p;
    size_t len = v[0].v.s.len;
    int64_t c = 0;
    if (len) {
        size_t l = sl_fnx_cplen(v[0].v.s.p, len);
        c = l == 1 ? s[0] : s[0] & (0x7F >> l);
        for (size_t i = 1; i < l; i++) c = (c << 6) | (s[i] & 0x3F);
    }
    out->isnull = false;
    out->v.i = c;
    return SL_OK;
}

/* CHR(n): the character (n & 255), as Flink; empty for a negative n. */
int sl_fx_chr(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].v.i < 0) {
        fnx_set_s(out, "", 0);
        return SL_OK;
    }
    unsigned c = (unsigned)(v[0].v.i & 0xFF);
    char *d = sl_fnx_alloc(n, cx, c < 0x80 ? 1 : 2);
    if (!d) return SL_ERR;
    if (c < 0x80) {
        d[0] = (char)c;
        fnx_set_s(out, d, 1);
    } else {
        d[0] = (char)(0xC0 | (c >> 6));
        d[1] = (char)(0x80 | (c & 0x3F));
        fnx_set_s(out, d, 2);
    }
    return SL_OK;
}

/* OVERLAY(s PLACING r FROM p [FOR k]): characters p .. p+k-1 of s replaced
 * by r (k defaults to r's length); positions past the end clamp. */
int sl_fx_overlay(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    int64_t p = v[2].v.i, k = n->nkids == 4 ? v[3].v.i : sl_fnx_cpcount(S(1));
    if (p < 1) p = 1;
    if (k < 0) k = 0;
    int64_t end = k > INT64_MAX - p ? INT64_MAX : p - 1 + k;
    size_t a = sl_fnx_cpoff(S(0), p - 1), b = sl_fnx_cpoff(S(0), end);
    size_t len = a + v[1].v.s.len + (v[0].v.s.len - b);
    char *d = sl_fnx_alloc(n, cx, len);
    if (!d) return SL_ERR;
    memcpy(d, v[0].v.s.p, a);
    if (v[1].v.s.len) memcpy(d + a, v[1].v.s.p, v[1].v.s.len);
    memcpy(d + a + v[1].v.s.len, v[0].v.s.p + b, v[0].v.s.len - b);
    fnx_set_s(out, d, len);
    return SL_OK;
}

/* URL_ENCODE(s): java.net.URLEncoder with UTF-8 -- letters, digits and
 * ".-*_" stay, a blank becomes '+', every other byte %XX. */
int sl_fx_url_encode(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    static const char hx[] = "0123456789ABCDEF";
    size_t len = v[0].v.s.len, o = 0;
    char *d = sl_fnx_alloc(n, cx, len * 3);
    if (!d) return SL_ERR;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[0].v.s.p[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '-' || c == '*' || c == '_')
            d[o++] = (char)c;
        else if (c == ' ')
            d[o++] = '+';
        else
            d[o++] = '%', d[o++] = hx[c >> 4], d[o++] = hx[c & 15];
    }
    fnx_set_s(out, d, o);
    return SL_OK;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* URL_DECODE(s): java.net.URLDecoder with UTF-8; NULL for a malformed
 * escape, as Flink. */
int sl_fx_url_decode(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    size_t len = v[0].v.s.len, o = 0;
    const char *s = v[0].v.s.p;
    char *d = sl_fnx_alloc(n, cx, len);
    if (!d) return SL_ERR;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '+') {
            d[o++] = ' ';
        } else if (s[i] == '%') {
            int h = i + 2 < len ? hexval(s[i + 1]) : -1, l = h >= 0 ? hexval(s[i + 2]) : -1;
            if (h < 0 || l < 0) {
                out->isnull = true;
                return SL_OK;
            }
            d[o++] = (char)(h * 16 + l);
            i += 2;
        } else {
            d[o++] = s[i];
        }
    }
    fnx_set_s(out, d, o);
    return SL_OK;
}

/* PARSE_URL(url, part [, key]): a part of `url` as java.net.URL splits it --
 * PROTOCOL, AUTHORITY, USERINFO, HOST, PATH, QUERY, FILE (path and query),
 * REF -- or with QUERY and a key, that parameter's value. NULL for a part
 * the URL lacks, an unknown part, or a URL without "scheme:". A slice of
 * the URL: nothing is copied. */
int sl_fx_parse_url(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    const char *u = v[0].v.s.p, *part = v[1].v.s.p;
    size_t len = v[0].v.s.len, pl = v[1].v.s.len;
    out->isnull = true;
    size_t c = 0;
    while (c < len && u[c] != ':' && u[c] != '/' && u[c] != '?' && u[c] != '#') c++;
    if (c == 0 || c >= len || u[c] != ':') return SL_OK; /* no protocol: MalformedURL */
    size_t ref = c + 1;
    while (ref < len && u[ref] != '#') ref++;
    size_t q = c + 1;
    while (q < ref && u[q] != '?') q++;
    size_t as = c + 1, ae = as; /* authority */
    if (as + 1 < q && u[as] == '/' && u[as + 1] == '/') {
        as += 2;
        ae = as;
        while (ae < q && u[ae] != '/') ae++;
    }
    size_t ps = ae; /* path: up to the query */
#define PART(w) (pl == strlen(w) && !strncmp(part, w, pl))
#define SLICE(a, b) (fnx_set_s(out, u + (a), (b) - (a)), SL_OK)
    if (n->nkids == 3) {
        if (!PART("QUERY") || q >= ref) return SL_OK;
        const char *key = v[2].v.s.p;
        size_t kl = v[2].v.s.len;
        for (size_t i = q + 1; i < ref;) {
            size_t e = i;
            while (e < ref && u[e] != '&') e++;
            if (e - i > kl && u[i + kl] == '=' && !memcmp(u + i, key, kl)) return SLICE(i + kl + 1, e);
            i = e + 1;
        }
        return SL_OK;
    }
    if (PART("PROTOCOL")) return SLICE(0, c);
    if (PART("AUTHORITY")) return ae > as || as > c + 1 ? SLICE(as, ae) : SL_OK;
    if (PART("HOST") || PART("USERINFO")) {
        if (!(as > c + 1)) return SL_OK;
        size_t at = as;
        while (at < ae && u[at] != '@') at++;
        if (PART("USERINFO")) return at < ae ? SLICE(as, at) : SL_OK;
        size_t hs = at < ae ? at + 1 : as, he = hs;
        if (hs < ae && u[hs] == '[')
            while (he < ae && u[he] != ']') he++;
        while (he < ae && u[he] != ':') he++;
        return SLICE(hs, he);
    }
    if (PART("PATH")) return SLICE(ps, q);
    if (PART("QUERY")) return q < ref ? SLICE(q + 1, ref) : SL_OK;
    if (PART("FILE")) return SLICE(ps, ref);
    if (PART("REF")) return ref < len ? SLICE(ref + 1, len) : SL_OK;
#undef PART
#undef SLICE
    return SL_OK;
}

/* STARTSWITH(s, prefix) / ENDSWITH(s, suffix). */
int sl_fx_starts_ends(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    size_t a = v[0].v.s.len, b = v[1].v.s.len;
    bool r = b <= a && (b == 0 || !memcmp(v[0].v.s.p + (n->fx->name[0] == 'S' ? 0 : a - b),
                                          v[1].v.s.p, b));
    out->isnull = false;
    out->v.i = r;
    return SL_OK;
}
