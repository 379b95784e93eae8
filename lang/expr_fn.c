/*
 * expr_fn.c -- the table of Flink's further built-in scalar functions (math
 * in expr_math.c, strings in expr_str.c, the rest here: GREATEST / LEAST,
 * the digests MD5 / SHA1 / SHA2, base64, UUID) and what they share.
 *
 * A function is one sl_fnx entry: its argument classes and result type are
 * applied by the checker (expr_check.c, once per job); its eval function
 * gets the arguments evaluated and writes the result, allocating only from
 * the record's scratch arena. Digests use OpenSSL's libcrypto through one
 * EVP_MD_CTX per thread, reused, so a record costs no allocation. Also
 * here: SIMILAR TO patterns rewritten as POSIX regular expressions.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "expr_int.h"
#include "base64.h"

/* ---- shared helpers ---------------------------------------------------------- */

int sl_expr_verr(char *err, size_t errlen, int pos, const char *fmt, va_list ap)
{
    if (err && errlen) {
        char msg[256];
        vsnprintf(msg, sizeof msg, fmt, ap);
        snprintf(err, errlen, "%s at position %d", msg, pos);
    }
    return SL_ERR;
}

int sl_fnx_err(const node *n, sl_fnx_cx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl_expr_verr(cx->err, cx->errlen, n->pos, fmt, ap);
    va_end(ap);
    return SL_ERR;
}

char *sl_fnx_alloc(const node *n, sl_fnx_cx *cx, size_t len)
{
    static char empty[1];
    if (len == 0) return empty;
    char *s = len <= UINT32_MAX ? sl_arena_alloc(cx->scratch, len) : NULL;
    if (!s) sl_fnx_err(n, cx, "string result too large (%zu bytes; scratch space exhausted)", len);
    return s;
}

double sl_fnx_num(const node *n, const sl_value *v, int i)
{
    return is_fp_type(n->kids[i]->type) ? v[i].v.d : (double)v[i].v.i;
}

size_t sl_fnx_cplen(const char *s, size_t left)
{
    unsigned char c = (unsigned char)s[0];
    size_t k = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return k > left ? left : k;
}

int64_t sl_fnx_cpcount(const char *s, size_t n)
{
    int64_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) k++;
    return k;
}

size_t sl_fnx_cpoff(const char *s, size_t n, int64_t k)
{
    size_t i = 0;
    while (k > 0 && i < n) {
        i += sl_fnx_cplen(s + i, n - i);
        k--;
    }
    return i;
}

/* ---- GREATEST / LEAST ------------------------------------------------------------ */

/* NULL when any argument is (Flink's); numbers compare as the common type. */
static int fx_greatest_least(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    bool greatest = n->fx->name[0] == 'G';
    int best = 0;
    for (int i = 1; i < n->nkids; i++) {
        int c;
        if (n->type == SL_T_STRING || n->type == SL_T_BYTES) {
            uint32_t m = SL_MIN(v[i].v.s.len, v[best].v.s.len);
            c = m ? memcmp(v[i].v.s.p, v[best].v.s.p, m) : 0;
            if (!c) c = v[i].v.s.len < v[best].v.s.len ? -1 : v[i].v.s.len > v[best].v.s.len;
        } else if (n->type == SL_T_DECIMAL) { /* every argument CAST to the one type */
            sl_dec x = {v[i].v.dec.lo, v[i].v.dec.hi}, y = {v[best].v.dec.lo, v[best].v.dec.hi};
            c = sl_dec_cmp(x, n->dt->s, y, n->dt->s);
        } else if (is_fp_type(n->type)) {
            double x = sl_fnx_num(n, v, i), y = sl_fnx_num(n, v, best);
            c = x < y ? -1 : x > y ? 1 : x == y ? 0 : isnan(x) ? (isnan(y) ? 0 : 1) : -1;
        } else {
            c = v[i].v.i < v[best].v.i ? -1 : v[i].v.i > v[best].v.i;
        }
        if (greatest ? c > 0 : c < 0) best = i;
    }
    *out = v[best];
    if (n->type == SL_T_DOUBLE) out->v.d = sl_fnx_num(n, v, best);
    else if (n->type == SL_T_FLOAT) /* an integer argument as Java's float of it */
        out->v.d = is_int_type(n->kids[best]->type) ? (double)(float)v[best].v.i : v[best].v.d;
    return SL_OK;
}

/* ---- digests ------------------------------------------------------------------- */

static pthread_key_t md_key;
static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static void md_free(void *p) { EVP_MD_CTX_free(p); }
static void md_init(void) { pthread_key_create(&md_key, md_free); }

/* The digest of s as lower-case hex (what Flink's MD5, SHA1, SHA2 give). */
static int digest_hex(const node *n, const EVP_MD *md, const sl_value *s, sl_value *out,
                      sl_fnx_cx *cx)
{
    pthread_once(&md_once, md_init);
    EVP_MD_CTX *c = pthread_getspecific(md_key);
    if (!c) {
        c = EVP_MD_CTX_new();
        if (!c) return sl_fnx_err(n, cx, "%s: out of memory", n->fx->name);
        pthread_setspecific(md_key, c);
    }
    unsigned char h[EVP_MAX_MD_SIZE];
    unsigned int hl = 0;
    if (!EVP_DigestInit_ex(c, md, NULL) || !EVP_DigestUpdate(c, s->v.s.p, s->v.s.len) ||
        !EVP_DigestFinal_ex(c, h, &hl))
        return sl_fnx_err(n, cx, "%s: the digest failed", n->fx->name);
    char *d = sl_fnx_alloc(n, cx, (size_t)hl * 2);
    if (!d) return SL_ERR;
    static const char hx[] = "0123456789abcdef";
    for (unsigned int i = 0; i < hl; i++) d[2 * i] = hx[h[i] >> 4], d[2 * i + 1] = hx[h[i] & 15];
    fnx_set_s(out, d, (size_t)hl * 2);
    return SL_OK;
}

static int fx_md5(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    return digest_hex(n, EVP_md5(), &v[0], out, cx);
}

static int fx_sha1(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    return digest_hex(n, EVP_sha1(), &v[0], out, cx);
}

static const EVP_MD *sha2_of(int64_t bits)
{
    switch (bits) {
    case 224: return EVP_sha224();
    case 256: return EVP_sha256();
    case 384: return EVP_sha384();
    case 512: return EVP_sha512();
    default: return NULL;
    }
}

/* SHA224(s) .. SHA512(s): the length in the name; SHA2(s, bits): NULL for a
 * length other than 224, 256, 384, 512, as Flink. */
static int fx_sha2(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    int64_t bits = n->nkids == 2 ? v[1].v.i : atoi(n->fx->name + 3);
    const EVP_MD *md = sha2_of(bits);
    if (!md) {
        out->isnull = true;
        return SL_OK;
    }
    return digest_hex(n, md, &v[0], out, cx);
}

/* ---- base64, UUID ---------------------------------------------------------------- */

static int fx_to_base64(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    char *d = sl_fnx_alloc(n, cx, SL_BASE64_ENC_LEN((size_t)v[0].v.s.len));
    if (!d) return SL_ERR;
    fnx_set_s(out, d, sl_base64_encode_to(d, v[0].v.s.p, v[0].v.s.len));
    return SL_OK;
}

/* Text that is not base64 gives NULL (Flink's decoder throws; a row must
 * not fail a job for its content). */
static int fx_from_base64(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    size_t len = 0;
    char *d = sl_fnx_alloc(n, cx, SL_BASE64_DEC_MAX((size_t)v[0].v.s.len));
    if (!d) return SL_ERR;
    if (sl_base64_decode_to((uint8_t *)d, v[0].v.s.p, v[0].v.s.len, &len)) {
        out->isnull = true;
        return SL_OK;
    }
    fnx_set_s(out, d, len);
    return SL_OK;
}

/* UUID(): a random (version 4) UUID as Java's UUID.randomUUID().toString()
 * writes it. A per-thread xorshift generator seeded from the clock and the
 * thread: no system call per record. */
static _Thread_local uint64_t uuid_state;
static uint64_t uuid_next(void)
{
    if (!uuid_state) {
        uint64_t x = (uint64_t)sl_mono_ns() ^ (uint64_t)(uintptr_t)&uuid_state ^
                     ((uint64_t)sl_now_ms() << 20);
        x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29;
        uuid_state = x ? x : 0x9E3779B97F4A7C15ULL;
    }
    uint64_t x = uuid_state; /* xorshift64* */
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    uuid_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static int fx_uuid(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)v;
    uint8_t b[16];
    uint64_t hi = uuid_next(), lo = uuid_next();
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(hi >> (56 - 8 * i)), b[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
    b[6] = (uint8_t)((b[6] & 0x0F) | 0x40); /* version 4 */
    b[8] = (uint8_t)((b[8] & 0x3F) | 0x80); /* IETF variant */
    char *d = sl_fnx_alloc(n, cx, 36);
    if (!d) return SL_ERR;
    static const char hx[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) d[o++] = '-';
        d[o++] = hx[b[i] >> 4];
        d[o++] = hx[b[i] & 15];
    }
    fnx_set_s(out, d, 36);
    return SL_OK;
}

/* ---- SIMILAR TO ------------------------------------------------------------------ */

/* SQL's regular expressions (ISO 9075 SIMILAR TO, as Calcite translates them
 * for Flink) into POSIX ERE: '%' any run, '_' one character, '|' '*' '+' '?'
 * '{m,n}' '(' ')' '[...]' as in regular expressions, the escape character
 * quoting the next one, every other character literal; the whole string
 * must match. */
int sl_expr_similar_compile(sl_rx *rx, const char *pat, size_t n, int esc, char *err,
                            size_t errlen)
{
    size_t cap = n * 2 + 8;
    char *re = sl_malloc(cap);
    size_t o = 0;
    int depth = 0;
    bool in_class = false;
    re[o++] = '^';
    re[o++] = '(';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)pat[i];
        if (esc >= 0 && c == esc) {
            if (i + 1 >= n) {
                free(re);
                return sl_seterr(err, errlen, "the pattern ends with the escape character");
            }
            c = (unsigned char)pat[++i];
            if (!in_class && strchr(".[]()*+?{}|^$\\", c)) re[o++] = '\\';
            else if (in_class && c == ']') { /* a ']' inside a class: only first is literal */
                free(re);
                return sl_seterr(err, errlen, "an escaped ']' inside [...] is not supported");
            }
            re[o++] = (char)c;
            continue;
        }
        if (in_class) {
            if (c == ']') in_class = false;
            re[o++] = (char)c;
            continue;
        }
        switch (c) {
        case '%': re[o++] = '.', re[o++] = '*'; break;
        case '_': re[o++] = '.'; break;
        case '[': in_class = true, re[o++] = '['; break;
        case '(': depth++, re[o++] = '('; break;
        case ')':
            if (--depth < 0) {
                free(re);
                return sl_seterr(err, errlen, "unmatched ')' at offset %zu", i + 1);
            }
            re[o++] = ')';
            break;
        case '|': case '*': case '+': case '?': case '{': case '}': re[o++] = (char)c; break;
        case '.': case '^': case '$': case '\\': case ']':
            re[o++] = '\\', re[o++] = (char)c;
            break;
        default: re[o++] = (char)c; break;
        }
    }
    if (in_class || depth) {
        free(re);
        return sl_seterr(err, errlen, "unterminated %s", in_class ? "[...]" : "'('");
    }
    re[o++] = ')';
    re[o++] = '$';
    re[o] = '\0';
    memset(rx, 0, sizeof *rx);
    int rc = regcomp(&rx->re, re, REG_EXTENDED | REG_NOSUB);
    free(re);
    if (rc) {
        char msg[160];
        regerror(rc, &rx->re, msg, sizeof msg);
        return sl_seterr(err, errlen, "invalid pattern: %s", msg);
    }
    return SL_OK;
}

/* ---- the table ------------------------------------------------------------------- */

/* expr_math.c */
int sl_fx_round(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_sqrt(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_ln(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_log10(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_log2(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_exp(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_sin(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_cos(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_tan(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_cot(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_asin(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_acos(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_atan(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_sinh(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_cosh(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_tanh(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_degrees(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_radians(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_math2(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_const(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_sign(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_bin_hex(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
/* expr_str.c */
int sl_fx_pad(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_repeat(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_reverse(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_initcap(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_locate(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_left_right(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_translate(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_elt(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_concat_ws(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_ascii(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_chr(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_overlay(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_url_encode(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_url_decode(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_parse_url(const node *, const sl_value *, sl_value *, sl_fnx_cx *);
int sl_fx_starts_ends(const node *, const sl_value *, sl_value *, sl_fnx_cx *);

#define MANY SL_EXPR_MAX_ARGS
static const sl_fnx fnx_table[] = {
    /* math */
    {"ROUND", 1, 2, "ni", '0', true, sl_fx_round},
    {"TRUNCATE", 1, 2, "ni", '0', true, sl_fx_round},
    {"POWER", 2, 2, "n", 'D', true, sl_fx_math2},
    {"ATAN2", 2, 2, "n", 'D', true, sl_fx_math2},
    {"LOG", 1, 2, "n", 'D', true, sl_fx_math2},
    {"SQRT", 1, 1, "n", 'D', true, sl_fx_sqrt},
    {"LN", 1, 1, "n", 'D', true, sl_fx_ln},
    {"LOG10", 1, 1, "n", 'D', true, sl_fx_log10},
    {"LOG2", 1, 1, "n", 'D', true, sl_fx_log2},
    {"EXP", 1, 1, "n", 'D', true, sl_fx_exp},
    {"SIN", 1, 1, "n", 'D', true, sl_fx_sin},
    {"COS", 1, 1, "n", 'D', true, sl_fx_cos},
    {"TAN", 1, 1, "n", 'D', true, sl_fx_tan},
    {"COT", 1, 1, "n", 'D', true, sl_fx_cot},
    {"ASIN", 1, 1, "n", 'D', true, sl_fx_asin},
    {"ACOS", 1, 1, "n", 'D', true, sl_fx_acos},
    {"ATAN", 1, 1, "n", 'D', true, sl_fx_atan},
    {"SINH", 1, 1, "n", 'D', true, sl_fx_sinh},
    {"COSH", 1, 1, "n", 'D', true, sl_fx_cosh},
    {"TANH", 1, 1, "n", 'D', true, sl_fx_tanh},
    {"DEGREES", 1, 1, "n", 'D', true, sl_fx_degrees},
    {"RADIANS", 1, 1, "n", 'D', true, sl_fx_radians},
    {"SIGN", 1, 1, "n", '0', true, sl_fx_sign},
    {"PI", 0, 0, "", 'D', true, sl_fx_const},
    {"E", 0, 0, "", 'D', true, sl_fx_const},
    {"BIN", 1, 1, "i", 'S', true, sl_fx_bin_hex},
    {"HEX", 1, 1, "x", 'S', true, sl_fx_bin_hex},
    /* strings */
    {"LPAD", 3, 3, "sis", 'S', true, sl_fx_pad},
    {"RPAD", 3, 3, "sis", 'S', true, sl_fx_pad},
    {"REPEAT", 2, 2, "si", 'S', true, sl_fx_repeat},
    {"REVERSE", 1, 1, "s", 'S', true, sl_fx_reverse},
    {"INITCAP", 1, 1, "s", 'S', true, sl_fx_initcap},
    {"LOCATE", 2, 3, "ssi", 'I', true, sl_fx_locate},
    {"INSTR", 2, 2, "s", 'I', true, sl_fx_locate},
    {"LEFT", 2, 2, "si", 'S', true, sl_fx_left_right},
    {"RIGHT", 2, 2, "si", 'S', true, sl_fx_left_right},
    {"TRANSLATE", 3, 3, "s", 'S', false, sl_fx_translate},
    {"ELT", 2, MANY, "is", 'S', false, sl_fx_elt},
    {"CONCAT_WS", 1, MANY, "s", 'S', false, sl_fx_concat_ws},
    {"ASCII", 1, 1, "s", 'I', true, sl_fx_ascii},
    {"CHR", 1, 1, "i", 'S', true, sl_fx_chr},
    {"OVERLAY", 3, 4, "ssi", 'S', true, sl_fx_overlay},
    {"URL_ENCODE", 1, 1, "s", 'S', true, sl_fx_url_encode},
    {"URL_DECODE", 1, 1, "s", 'S', true, sl_fx_url_decode},
    {"PARSE_URL", 2, 3, "s", 'S', true, sl_fx_parse_url},
    {"STARTSWITH", 2, 2, "s", 'B', true, sl_fx_starts_ends},
    {"ENDSWITH", 2, 2, "s", 'B', true, sl_fx_starts_ends},
    {"MD5", 1, 1, "s", 'S', true, fx_md5},
    {"SHA1", 1, 1, "s", 'S', true, fx_sha1},
    {"SHA224", 1, 1, "s", 'S', true, fx_sha2},
    {"SHA256", 1, 1, "s", 'S', true, fx_sha2},
    {"SHA384", 1, 1, "s", 'S', true, fx_sha2},
    {"SHA512", 1, 1, "s", 'S', true, fx_sha2},
    {"SHA2", 2, 2, "si", 'S', true, fx_sha2},
    {"TO_BASE64", 1, 1, "s", 'S', true, fx_to_base64},
    {"FROM_BASE64", 1, 1, "s", 'S', true, fx_from_base64},
    {"UUID", 0, 0, "", 'S', true, fx_uuid},
    /* conditional */
    {"GREATEST", 1, MANY, "a", 'C', true, fx_greatest_least},
    {"LEAST", 1, MANY, "a", 'C', true, fx_greatest_least},
};

const sl_fnx *sl_fnx_find(const char *name)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(fnx_table); i++)
        if (!strcasecmp(name, fnx_table[i].name)) return &fnx_table[i];
    return NULL;
}
