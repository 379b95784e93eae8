/*
 * kafka_common.c -- librdkafka configuration and the json / csv / raw record
 * formats shared by the Kafka source and sink (see kafka_common.h).
 *
 * The json decoder is a small hand-written parser rather than jansson: it
 * reads one flat object per record, finds each field's column by name and
 * converts the value in place, so the hot path allocates nothing (strings
 * without escapes point into the record, escaped ones are unescaped into the
 * codec buffer, which is grown to the record's size before parsing so that
 * pointers into it stay valid). Nested objects and arrays are skipped, or
 * kept as their JSON text for a STRING column; nesting deeper than 64 is an
 * error rather than a deep recursion. Values follow Flink's json format:
 * a missing field or null is NULL, numbers may also come as strings, a
 * TIMESTAMP is "yyyy-MM-dd HH:mm:ss[.fff]" (SQL) or ISO-8601 with 'T' (and
 * here also epoch milliseconds as a number), BYTES are base64.
 *
 * csv is RFC 4180 as the file sink writes it: quoted fields with doubled
 * quotes, an empty unquoted field is NULL, no header; a record must have
 * exactly as many fields as the format has columns.
 *
 * raw carries one STRING or BYTES column as the record's bytes; a NULL value
 * is a record without a value (a tombstone).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kafka_common.h"
#include "base64.h"
#include "format_csv.h"
#include "bytes.h"
#include "calendar.h"
#include "format_avro.h"
#include "format_json.h"
#include "bytes.h"
#include "calendar.h"
#include "json_escape.h"

#define KF_MAX_DEPTH 64

int kf_format_parse(const char *s, kf_format *out)
{
    if (!strcasecmp(s, "json")) *out = KF_JSON;
    else if (!strcasecmp(s, "csv")) *out = KF_CSV;
    else if (!strcasecmp(s, "raw")) *out = KF_RAW;
    else if (!strcasecmp(s, "debezium-json")) *out = KF_DEBEZIUM;
    else if (!strcasecmp(s, "avro")) *out = KF_AVRO;
    else if (!strcasecmp(s, "avro-confluent")) *out = KF_AVRO_CONFLUENT;
    else return SL_ERR;
    return SL_OK;
}

const char *kf_format_name(kf_format f)
{
    static const char *const names[] = {"json", "csv", "raw", "debezium-json", "avro",
                                         "avro-confluent"};
    return names[f];
}

int kf_codec_init(kf_codec *c, kf_format fmt, const sl_schema *s, const int *cols, int n,
                  const char *vid, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (fmt == KF_RAW && (n != 1 || (s->fields[cols[0]].type != SL_T_STRING &&
                                     s->fields[cols[0]].type != SL_T_BYTES)))
        return sl_seterr(err, errlen,
                         "vertex '%s': format raw carries exactly one STRING or BYTES column, "
                         "the schema has %d physical column%s%s%s", vid, n, n == 1 ? " of type " : "s",
                         n == 1 ? sl_type_name(s->fields[cols[0]].type) : "", "");
    c->fmt = fmt;
    c->n = n;
    c->slot = sl_calloc((size_t)n + 1, sizeof *c->slot);
    c->type = sl_calloc((size_t)n + 1, sizeof *c->type);
    c->dt = sl_calloc((size_t)n + 1, sizeof *c->dt);
    c->name = sl_calloc((size_t)n + 1, sizeof *c->name);
    c->namelen = sl_calloc((size_t)n + 1, sizeof *c->namelen);
    for (int i = 0; i < n; i++) {
        c->slot[i] = cols[i];
        c->type[i] = s->fields[cols[i]].type;
        c->dt[i] = s->fields[cols[i]].dt;
        if ((!sl_type_is_classic(c->type[i]) || sl_dtype_has_nanos(c->dt[i])) &&
            fmt != KF_AVRO && fmt != KF_AVRO_CONFLUENT) { /* avro: sl_avro_fmt_new checks */
            bool csv_ok = fmt == KF_CSV && sl_type_is_scalar(c->dt[i]->kind);
            /* debezium-json's images are json objects: every type too */
            if (fmt != KF_JSON && fmt != KF_DEBEZIUM && !csv_ok) {
                sl_seterr(err, errlen, "vertex '%s': column '%s': the %s format cannot carry %s "
                          "values yet (json can)", vid, s->fields[cols[i]].name,
                          kf_format_name(fmt), c->dt[i]->text);
                kf_codec_free(c);
                return SL_ERR;
            }
            if (fmt == KF_JSON || fmt == KF_DEBEZIUM) c->wide = true;
        }
        c->name[i] = sl_strdup(s->fields[cols[i]].name);
        c->namelen[i] = strlen(c->name[i]);
    }
    return SL_OK;
}

/* A boolean option "true" / "false" (any case); absent: dflt. */
static int opt_bool(const json_t *config, const char *key, bool dflt, bool *out, const char *vid,
                    char *err, size_t errlen)
{
    json_t *j = json_object_get(config, key);
    *out = dflt;
    if (!j || json_is_null(j)) return SL_OK;
    if (json_is_boolean(j)) {
        *out = json_is_true(j);
        return SL_OK;
    }
    const char *s = json_is_string(j) ? json_string_value(j) : "";
    if (!strcasecmp(s, "true")) *out = true;
    else if (!strcasecmp(s, "false")) *out = false;
    else
        return sl_seterr(err, errlen, "vertex '%s': option '%s' must be 'true' or 'false'", vid,
                         key);
    return SL_OK;
}

int kf_json_opts_read(kf_codec *c, const json_t *config, const char *vid, char *err,
                      size_t errlen)
{
    kf_json_opts *o = &c->json;
    free(o->null_literal);
    memset(o, 0, sizeof *o);
    o->null_literal = sl_strdup("null");
    const char *ts = json_string_value(json_object_get(config, "json.timestamp-format.standard"));
    if (ts && !strcasecmp(ts, "ISO-8601")) o->ts_iso = true;
    else if (ts && strcasecmp(ts, "SQL"))
        return sl_seterr(err, errlen, "vertex '%s': option 'json.timestamp-format.standard' must "
                         "be 'SQL' or 'ISO-8601', not '%s'", vid, ts);
    const char *mn = json_string_value(json_object_get(config, "json.map-null-key.mode"));
    if (mn && !strcasecmp(mn, "DROP")) o->map_null = KF_MAPNULL_DROP;
    else if (mn && !strcasecmp(mn, "LITERAL")) o->map_null = KF_MAPNULL_LITERAL;
    else if (mn && strcasecmp(mn, "FAIL"))
        return sl_seterr(err, errlen, "vertex '%s': option 'json.map-null-key.mode' must be "
                         "'FAIL', 'DROP' or 'LITERAL', not '%s'", vid, mn);
    const char *lit = json_string_value(json_object_get(config, "json.map-null-key.literal"));
    if (lit) {
        free(o->null_literal);
        o->null_literal = sl_strdup(lit);
    }
    return opt_bool(config, "json.encode.decimal-as-plain-number", false, &o->dec_plain, vid,
                    err, errlen) == SL_OK &&
                   opt_bool(config, "json.fail-on-missing-field", false, &o->fail_missing, vid,
                            err, errlen) == SL_OK
               ? SL_OK
               : SL_ERR;
}

void kf_codec_free(kf_codec *c)
{
    free(c->json.null_literal);
    for (int i = 0; c->name && i < c->n; i++) free(c->name[i]);
    free(c->slot);
    free(c->type);
    free(c->dt);
    free(c->name);
    free(c->namelen);
    sl_avro_fmt_free(c->avro);
    memset(c, 0, sizeof *c);
}

/* ---- text to values ----------------------------------------------------- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, size_t n, size_t at, int count, int *out)
{
    if (at + (size_t)count > n) return SL_ERR;
    int v = 0;
    for (int i = 0; i < count; i++) {
        char ch = s[at + (size_t)i];
        if (ch < '0' || ch > '9') return SL_ERR;
        v = v * 10 + (ch - '0');
    }
    *out = v;
    return SL_OK;
}

int kf_parse_timestamp(const char *s, size_t n, int64_t *ms)
{
    int y, mo, d, h, mi, se, frac = 0;
    if (digits(s, n, 0, 4, &y) || n < 19 || s[4] != '-' || digits(s, n, 5, 2, &mo) ||
        s[7] != '-' || digits(s, n, 8, 2, &d) || (s[10] != ' ' && s[10] != 'T') ||
        digits(s, n, 11, 2, &h) || s[13] != ':' || digits(s, n, 14, 2, &mi) || s[16] != ':' ||
        digits(s, n, 17, 2, &se))
        return SL_ERR;
    size_t i = 19;
    if (i < n && s[i] == '.') {
        i++;
        int nd = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (nd < 3) frac = frac * 10 + (s[i] - '0');
            nd++;
            i++;
        }
        if (nd == 0 || nd > 9) return SL_ERR;
        for (; nd < 3; nd++) frac *= 10;
    }
    if (i < n && s[i] == 'Z') i++;
    if (i != n || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return SL_ERR;
    int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    *ms = ((days * 24 + h) * 60 + mi) * 60000LL + se * 1000LL + frac;
    return SL_OK;
}

/* base64 (standard or URL alphabet, padding optional) into str. */
static int b64_decode(const char *s, size_t n, sl_buf *str, const char **out, uint32_t *outlen)
{
    /* str has room (reserved for the whole record): decode in place, no
     * reallocation while pointers into str exist */
    char *dst = str->p + str->len;
    size_t k;
    if (sl_base64_decode_to((uint8_t *)dst, s, n, &k) != SL_OK) return SL_ERR;
    *out = dst;
    *outlen = (uint32_t)k;
    str->len += k;
    return SL_OK;
}

/* A number's text (at most 63 chars) NUL-terminated into tmp. */
static int token(const char *s, size_t n, char *tmp, size_t cap)
{
    while (n > 0 && (*s == ' ' || *s == '\t')) s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (n == 0 || n >= cap) return SL_ERR;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    return SL_OK;
}

/* Text s[0..n) as a value of type t. STRING points at s (the caller keeps
 * s valid); BYTES are base64-decoded into str. */
static int parse_text(sl_type t, const char *s, size_t n, sl_value *v, sl_buf *str, char *why,
                      size_t whylen)
{
    char tmp[64], *end;
    v->isnull = false;
    switch (t) {
    case SL_T_STRING:
        v->v.s.p = s;
        v->v.s.len = (uint32_t)n;
        return SL_OK;
    case SL_T_BYTES:
        if (b64_decode(s, n, str, &v->v.s.p, &v->v.s.len) != SL_OK)
            return sl_seterr(why, whylen, "'%.*s' is not base64", (int)SL_MIN(n, 40), s);
        return SL_OK;
    case SL_T_BOOLEAN:
        if (token(s, n, tmp, sizeof tmp) == SL_OK && !strcasecmp(tmp, "true")) v->v.i = 1;
        else if (token(s, n, tmp, sizeof tmp) == SL_OK && !strcasecmp(tmp, "false")) v->v.i = 0;
        else return sl_seterr(why, whylen, "'%.*s' is not a BOOLEAN", (int)SL_MIN(n, 40), s);
        return SL_OK;
    case SL_T_INT:
    case SL_T_BIGINT: {
        if (token(s, n, tmp, sizeof tmp) != SL_OK) goto badint;
        errno = 0;
        long long x = strtoll(tmp, &end, 10);
        if (*end || end == tmp || errno) goto badint;
        if (t == SL_T_INT && (x < INT32_MIN || x > INT32_MAX))
            return sl_seterr(why, whylen, "%lld does not fit an INT", x);
        v->v.i = x;
        return SL_OK;
    badint:
        return sl_seterr(why, whylen, "'%.*s' is not %s", (int)SL_MIN(n, 40), s,
                         t == SL_T_INT ? "an INT" : "a BIGINT");
    }
    case SL_T_DOUBLE:
        if (token(s, n, tmp, sizeof tmp) != SL_OK) goto baddouble;
        errno = 0;
        v->v.d = strtod(tmp, &end);
        if (*end || end == tmp) goto baddouble;
        return SL_OK;
    baddouble:
        return sl_seterr(why, whylen, "'%.*s' is not a DOUBLE", (int)SL_MIN(n, 40), s);
    case SL_T_TIMESTAMP:
        if (kf_parse_timestamp(s, n, &v->v.i) == SL_OK) return SL_OK;
        return sl_seterr(why, whylen, "'%.*s' is not a TIMESTAMP (yyyy-MM-dd HH:mm:ss[.SSS])",
                         (int)SL_MIN(n, 40), s);
    case SL_T_NULL:
        v->isnull = true;
        return SL_OK;
    default: break;
    }
    return sl_seterr(why, whylen, "the format cannot read %s values yet", sl_type_name(t));
}

/* ---- json decoding -------------------------------------------------------- */

typedef struct jcur {
    const char *p, *e;
    bool fail_missing; /* json.fail-on-missing-field: a ROW's field absent from its object
                        * (at any depth) is an error; cursors made from this one keep it */
    bool lenient;      /* json.ignore-parse-errors, as Flink reads it: a scalar whose text
                        * is not of its type is NULL where it stands (a column, a ROW field,
                        * an element, a MAP value); any other value not of its type (an
                        * object for an INT, a number for a ROW) makes the nearest column or
                        * ROW field holding it NULL. Malformed JSON still fails the record. */
} jcur;

static inline void jws(jcur *c)
{
    while (c->p < c->e && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int hex4(const char *p, const char *e, unsigned *out)
{
    if (e - p < 4) return SL_ERR;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        v <<= 4;
        if (ch >= '0' && ch <= '9') v |= (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f') v |= (unsigned)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F') v |= (unsigned)(ch - 'A' + 10);
        else return SL_ERR;
    }
    *out = v;
    return SL_OK;
}

static void put_utf8(sl_buf *str, unsigned cp)
{
    char *d = str->p + str->len;
    if (cp < 0x80) {
        d[0] = (char)cp;
        str->len += 1;
    } else if (cp < 0x800) {
        d[0] = (char)(0xC0 | cp >> 6);
        d[1] = (char)(0x80 | (cp & 0x3F));
        str->len += 2;
    } else if (cp < 0x10000) {
        d[0] = (char)(0xE0 | cp >> 12);
        d[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        str->len += 3;
    } else {
        d[0] = (char)(0xF0 | cp >> 18);
        d[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        d[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        d[3] = (char)(0x80 | (cp & 0x3F));
        str->len += 4;
    }
}

/* The first '"', '\\' or control character in [p, e), or e: eight bytes at a
 * time while a word holds none of them (the usual zero-byte and
 * less-than-byte tests: exact about whether a word holds one), then byte by
 * byte. String values are most of a JSON record's bytes. */
static inline const char *jplain(const char *p, const char *e)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    while (e - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        if (((q - ones) & ~q) & high || ((b - ones) & ~b) & high || ((w - ones * 0x20) & ~w) & high)
            break;
        p += 8;
    }
    while (p < e && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) p++;
    return p;
}

/* A string at c->p (on its opening quote). Without escapes *out points into
 * the record; with them the text is unescaped into str (which has room:
 * unescaped text is never longer than its escaped form). */
static int jstring(jcur *c, sl_buf *str, const char **out, size_t *outlen, char *why,
                   size_t whylen)
{
    const char *s = ++c->p;
    bool esc = false;
    for (;;) {
        c->p = jplain(c->p, c->e);
        if (c->p >= c->e || *c->p == '"') break;
        if (*c->p != '\\') return sl_seterr(why, whylen, "control character in a string");
        esc = true;
        if (c->e - c->p < 2) { /* a backslash as the last byte */
            c->p = c->e;
            break;
        }
        c->p += 2; /* the escaped character is checked when unescaped */
    }
    if (c->p >= c->e) return sl_seterr(why, whylen, "unterminated string");
    const char *end = c->p++;
    if (!esc) {
        *out = s;
        *outlen = (size_t)(end - s);
        return SL_OK;
    }
    size_t start = str->len;
    for (const char *q = s; q < end; q++) {
        if (*q != '\\') {
            str->p[str->len++] = *q;
            continue;
        }
        q++;
        switch (*q) {
        case '"': case '\\': case '/': str->p[str->len++] = *q; break;
        case 'b': str->p[str->len++] = '\b'; break;
        case 'f': str->p[str->len++] = '\f'; break;
        case 'n': str->p[str->len++] = '\n'; break;
        case 'r': str->p[str->len++] = '\r'; break;
        case 't': str->p[str->len++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(q + 1, end, &cp) != SL_OK) return sl_seterr(why, whylen, "bad \\u escape");
            q += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && end - q >= 7 && q[1] == '\\' && q[2] == 'u' &&
                hex4(q + 3, end, &lo) == SL_OK && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                q += 6;
            }
            put_utf8(str, cp); /* at most 4 bytes for at least 6 escaped */
            break;
        }
        default: return sl_seterr(why, whylen, "bad escape '\\%c'", *q);
        }
    }
    *out = str->p + start;
    *outlen = str->len - start;
    return SL_OK;
}

/* After a member of an object or array closed by `close`: 1 when a ','
 * announces another (consumed), 0 when `close` ends it (consumed), SL_ERR
 * otherwise. */
static int jnext(jcur *c, char close, char *why, size_t whylen)
{
    jws(c);
    if (c->p < c->e && *c->p == ',') {
        c->p++;
        return 1;
    }
    if (c->p < c->e && *c->p == close) {
        c->p++;
        return 0;
    }
    return sl_seterr(why, whylen, "expected ',' or '%c'", close);
}

/* An object member's name and its ':' (the name unescaped into str when it
 * has escapes). */
static int jname(jcur *c, sl_buf *str, const char **name, size_t *nlen, const char *what,
                 char *why, size_t whylen)
{
    jws(c);
    if (c->p >= c->e || *c->p != '"') return sl_seterr(why, whylen, "expected %s", what);
    if (jstring(c, str, name, nlen, why, whylen)) return SL_ERR;
    jws(c);
    if (c->p >= c->e || *c->p != ':') return sl_seterr(why, whylen, "expected ':'");
    c->p++;
    return SL_OK;
}

/* Past a bare token (number, true, false, null) at the cursor. */
static inline void jtoken(jcur *c)
{
    while (c->p < c->e && (isalnum((unsigned char)*c->p) || *c->p == '-' || *c->p == '+' ||
                           *c->p == '.'))
        c->p++;
}

/* Skip one value (any kind); its span is [*start, c->p). */
static int jskip(jcur *c, int depth, sl_buf *str, char *why, size_t whylen)
{
    if (depth > KF_MAX_DEPTH) return sl_seterr(why, whylen, "nested deeper than %d", KF_MAX_DEPTH);
    jws(c);
    if (c->p >= c->e) return sl_seterr(why, whylen, "unexpected end");
    char ch = *c->p;
    if (ch == '"') {
        const char *s;
        size_t n, mark = str->len;
        int rc = jstring(c, str, &s, &n, why, whylen);
        str->len = mark;
        return rc;
    }
    if (ch == '{' || ch == '[') {
        char close = ch == '{' ? '}' : ']';
        c->p++;
        jws(c);
        if (c->p < c->e && *c->p == close) {
            c->p++;
            return SL_OK;
        }
        for (;;) {
            if (ch == '{') {
                jws(c);
                if (c->p >= c->e || *c->p != '"') return sl_seterr(why, whylen, "expected a field name");
                if (jskip(c, depth + 1, str, why, whylen)) return SL_ERR;
                jws(c);
                if (c->p >= c->e || *c->p != ':') return sl_seterr(why, whylen, "expected ':'");
                c->p++;
            }
            if (jskip(c, depth + 1, str, why, whylen)) return SL_ERR;
            int more = jnext(c, close, why, whylen);
            if (more <= 0) return more;
        }
    }
    const char *s = c->p;
    jtoken(c);
    size_t n = (size_t)(c->p - s);
    if (n == 0) return sl_seterr(why, whylen, "unexpected character '%c'", ch);
    if ((n == 4 && !memcmp(s, "true", 4)) || (n == 5 && !memcmp(s, "false", 5)) ||
        (n == 4 && !memcmp(s, "null", 4)))
        return SL_OK;
    if (!(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return sl_seterr(why, whylen, "unexpected token '%.*s'", (int)SL_MIN(n, 20), s);
    char tmp[64], *end;
    if (token(s, n, tmp, sizeof tmp) != SL_OK) return sl_seterr(why, whylen, "bad number");
    (void)strtod(tmp, &end);
    if (*end) return sl_seterr(why, whylen, "bad number '%s'", tmp);
    return SL_OK;
}

/* ---- the types beyond the original seven (json) ------------------------- */

/* Exact decimal text ([-+]digits[.digits][e[-+]digits]) as the unscaled
 * value of DECIMAL(p, s), rounded half up to s digits (Java's HALF_UP, as
 * Flink's json format rounds). 1: fits; 0: more digits than p (Flink reads
 * such a value as NULL); -1: not a number. */
static int dec_parse(const char *s, size_t n, int p, int sc, sl_value *v)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    /* collect the significant digits and where the point is */
    char dg[96];
    int nd = 0, point = -1, lead = 1;
    size_t start = i;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '.' && point < 0) point = nd;
        else if (c >= '0' && c <= '9') {
            if (lead && c == '0' && (point < 0)) continue; /* leading zeros of the integer part */
            lead = 0;
            if (nd >= (int)sizeof dg) return 0;
            dg[nd++] = c;
        } else break;
    }
    if (i == start || (i == start + 1 && s[start] == '.')) return -1;
    if (point < 0) point = nd;
    long e = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
        size_t es = i;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (e < 100000) e = e * 10 + (s[i] - '0');
        if (i == es) return -1;
        if (eneg) e = -e;
    }
    if (i != n) return -1;
    /* value = 0.dg * 10^(point + e); unscaled = value * 10^sc */
    long intdigits = point + e + sc; /* digits of dg that land before the unscaled point */
    unsigned __int128 x = 0, lim = 1;
    for (int k = 0; k < p; k++) lim *= 10;
    for (long k = 0; k < intdigits; k++) {
        int d = k < nd ? dg[k] - '0' : 0;
        x = x * 10 + (unsigned)d;
        if (x >= lim) return 0;
    }
    if (intdigits >= 0 && intdigits < nd && dg[intdigits] >= '5') x += 1; /* HALF_UP */
    if (x >= lim) return 0;
    __int128 sx = neg ? -(__int128)x : (__int128)x;
    v->v.dec.lo = (uint64_t)(unsigned __int128)sx;
    v->v.dec.hi = (int64_t)((unsigned __int128)sx >> 64);
    return 1;
}

/* HH:mm[:ss[.fffffffff]] into ms of the day and nanos of the ms. */
static int parse_time_text(const char *s, size_t n, int64_t *ms, int32_t *nano)
{
    int h, mi, se = 0;
    if (digits(s, n, 0, 2, &h) || n < 5 || s[2] != ':' || digits(s, n, 3, 2, &mi)) return SL_ERR;
    size_t i = 5;
    int64_t ns = 0;
    if (i < n && s[i] == ':') {
        if (digits(s, n, 6, 2, &se)) return SL_ERR;
        i = 8;
        if (i < n && s[i] == '.') {
            i++;
            int nd = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9' && nd < 9) ns = ns * 10 + (s[i++] - '0'), nd++;
            if (nd == 0) return SL_ERR;
            for (; nd < 9; nd++) ns *= 10;
        }
    }
    if (i != n || h > 23 || mi > 59 || se > 59) return SL_ERR;
    *ms = (h * 3600 + mi * 60 + se) * 1000LL + ns / 1000000;
    *nano = (int32_t)(ns % 1000000);
    return SL_OK;
}

/* A scalar of a new type from its JSON text (a string's content or a bare
 * token). */
static int scalar_dt(const sl_dtype *dt, const char *s, size_t n, bool quoted, sl_value *v,
                     char *why, size_t whylen)
{
    char tmp[64], *end;
    v->isnull = false;
    switch (dt->kind) {
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
    case SL_T_INTERVAL_YM: /* months, as written (format_json.c) */
    case SL_T_INTERVAL_DT: { /* milliseconds */
        if (token(s, n, tmp, sizeof tmp) != SL_OK) goto bad;
        errno = 0;
        long long x = strtoll(tmp, &end, 10);
        long long lim = dt->kind == SL_T_TINYINT ? 128 : dt->kind == SL_T_SMALLINT ? 32768
                        : dt->kind == SL_T_INTERVAL_YM ? 2147483648LL : 0;
        if (*end || end == tmp || errno || (lim && (x < -lim || x >= lim)))
            return sl_seterr(why, whylen, "'%.*s' is not a %s", (int)SL_MIN(n, 40), s, dt->text);
        v->v.i = x;
        return SL_OK;
    }
    case SL_T_FLOAT: {
        if (token(s, n, tmp, sizeof tmp) != SL_OK) goto bad;
        double d = strtod(tmp, &end);
        if (*end || end == tmp) goto bad;
        v->v.d = (double)(float)d;
        return SL_OK;
    }
    case SL_T_DECIMAL: {
        int rc = dec_parse(s, n, dt->p, dt->s, v);
        if (rc < 0) goto bad;
        if (rc == 0) v->isnull = true; /* beyond the precision: NULL, as Flink */
        return SL_OK;
    }
    case SL_T_DATE: {
        int y, mo, d;
        if (!quoted || n != 10 || digits(s, n, 0, 4, &y) || s[4] != '-' || digits(s, n, 5, 2, &mo) ||
            s[7] != '-' || digits(s, n, 8, 2, &d) || mo < 1 || mo > 12 || d < 1 ||
            d > sl_days_in_month(y, mo))
            goto bad;
        v->v.i = days_from_civil(y, (unsigned)mo, (unsigned)d);
        return SL_OK;
    }
    case SL_T_TIME: {
        int64_t ms;
        int32_t ns;
        if (!quoted || parse_time_text(s, n, &ms, &ns)) goto bad;
        v->v.ts.ms = ms;
        v->v.ts.nano = dt->p > 3 ? ns : 0;
        return SL_OK;
    }
    case SL_T_TIMESTAMP: { /* p > 3: the digits beyond the ms too */
        if (!quoted || n < 19) goto bad;
        size_t k = 19, cut = n;
        int32_t ns = 0;
        if (k < n && s[k] == '.') {
            size_t f = k + 1, nd = 0;
            while (f + nd < n && s[f + nd] >= '0' && s[f + nd] <= '9') nd++;
            if (nd > 3) {
                for (size_t q = 3; q < 9; q++) ns = ns * 10 + (q < nd ? s[f + q] - '0' : 0);
                memcpy(tmp, s, SL_MIN(n, sizeof tmp - 1));
                cut = f + 3;
            }
        }
        char b2[64];
        size_t m = 0;
        if (cut != n) { /* the text without the digits beyond the ms */
            if (n >= sizeof b2) goto bad;
            memcpy(b2, s, cut);
            size_t rest = cut;
            while (rest < n && s[rest] >= '0' && s[rest] <= '9') rest++;
            memcpy(b2 + cut, s + rest, n - rest);
            m = cut + (n - rest);
            if (kf_parse_timestamp(b2, m, &v->v.ts.ms) != SL_OK) goto bad;
        } else if (kf_parse_timestamp(s, n, &v->v.ts.ms) != SL_OK) {
            goto bad;
        }
        v->v.ts.nano = ns;
        return SL_OK;
    }
    default:
        return sl_seterr(why, whylen, "the json format cannot read %s values yet", dt->text);
    }
bad:
    return sl_seterr(why, whylen, "'%.*s' is not a %s", (int)SL_MIN(n, 40), s, dt->text);
}

/* Append n bytes to str, which must have room (reserved for the record):
 * pointers into str stay valid. */
static int sput(sl_buf *str, const void *p, size_t n, char *why, size_t whylen)
{
    if (str->cap - str->len <= n) return sl_seterr(why, whylen, "the record is too large to decode");
    if (n) memcpy(str->p + str->len, p, n);
    str->len += n;
    return SL_OK;
}

static int jnested(const sl_dtype *dt, jcur *c, sl_buf *str, int depth, char *why, size_t whylen);

/* One value of type dt at the cursor, written at the end of str in its
 * field encoding; *isnull when it is null (nothing written). */
static int jelem(const sl_dtype *dt, jcur *c, sl_buf *str, int depth, bool *isnull, char *why,
                 size_t whylen)
{
    jws(c);
    if (c->p >= c->e) return sl_seterr(why, whylen, "unexpected end");
    *isnull = false;
    const char *s = c->p;
    if (*s == 'n') {
        jtoken(c);
        if (c->p - s == 4 && !memcmp(s, "null", 4)) {
            *isnull = true;
            return SL_OK;
        }
        return sl_seterr(why, whylen, "unexpected token");
    }
    sl_value v = {0};
    if (sl_type_is_nested(dt->kind)) {
        size_t at = str->len;
        uint8_t len4[4] = {0};
        if (sput(str, len4, 4, why, whylen)) return SL_ERR;
        if (jnested(dt, c, str, depth + 1, why, whylen)) return SL_ERR;
        size_t blen = str->len - at - 4;
        if (blen > UINT32_MAX) return sl_seterr(why, whylen, "a value of %zu bytes", blen);
        sl_put_le32((uint8_t *)str->p + at, (uint32_t)blen);
        return SL_OK;
    }
    if (dt->kind == SL_T_STRING || dt->kind == SL_T_BYTES) {
        size_t at = str->len;
        uint8_t len4[4] = {0};
        if (sput(str, len4, 4, why, whylen)) return SL_ERR;
        const char *txt;
        size_t n;
        if (*s == '"') {
            if (jstring(c, str, &txt, &n, why, whylen)) return SL_ERR;
        } else {
            if (jskip(c, depth + 1, str, why, whylen)) return SL_ERR;
            txt = s;
            n = (size_t)(c->p - s);
            if (dt->kind == SL_T_BYTES) return sl_seterr(why, whylen, "BYTES must be a base64 string");
        }
        if (dt->kind == SL_T_BYTES) {
            /* decode after the text, then move the bytes to follow the length */
            const char *out;
            uint32_t k;
            if (str->cap - str->len <= n) return sl_seterr(why, whylen, "the record is too large");
            if (b64_decode(txt, n, str, &out, &k) != SL_OK) {
                if (!c->lenient) return sl_seterr(why, whylen, "not base64");
                str->len = at; /* json.ignore-parse-errors: NULL in place */
                *isnull = true;
                return SL_OK;
            }
            memmove(str->p + at + 4, out, k);
            str->len = at + 4 + k;
            sl_put_le32((uint8_t *)str->p + at, k);
            return SL_OK;
        }
        if (txt != str->p + at + 4 && sput(str, txt, n, why, whylen)) return SL_ERR;
        if (n > UINT32_MAX) return sl_seterr(why, whylen, "a value of %zu bytes", n);
        sl_put_le32((uint8_t *)str->p + at, (uint32_t)n);
        return SL_OK;
    }
    /* a scalar: its text, then its fixed-width bytes */
    const char *txt;
    size_t n, mark = str->len;
    bool quoted = *s == '"';
    if (quoted) {
        if (jstring(c, str, &txt, &n, why, whylen)) return SL_ERR;
    } else {
        if (*s == '{' || *s == '[') return sl_seterr(why, whylen, "a JSON %s for %s",
                                                     *s == '{' ? "object" : "array", dt->text);
        jtoken(c);
        txt = s;
        n = (size_t)(c->p - s);
    }
    int rc;
    switch (dt->kind) {
    case SL_T_BOOLEAN:
        if (n == 4 && !memcmp(txt, "true", 4)) v.v.i = 1;
        else if (n == 5 && !memcmp(txt, "false", 5)) v.v.i = 0;
        else v.isnull = true;
        rc = v.isnull ? sl_seterr(why, whylen, "'%.*s' is not a BOOLEAN", (int)SL_MIN(n, 40), txt)
                      : SL_OK;
        break;
    case SL_T_INT:
    case SL_T_BIGINT:
    case SL_T_DOUBLE:
        rc = parse_text(dt->kind, txt, n, &v, str, why, whylen);
        break;
    case SL_T_TIMESTAMP:
        if (dt->p <= 3) {
            rc = quoted ? parse_text(SL_T_TIMESTAMP, txt, n, &v, str, why, whylen)
                        : parse_text(SL_T_BIGINT, txt, n, &v, str, why, whylen);
            break;
        }
        /* fall through */
    default: rc = scalar_dt(dt, txt, n, quoted, &v, why, whylen); break;
    }
    str->len = mark; /* the unescaped text is no longer needed */
    if (rc && !c->lenient) return SL_ERR;
    if (rc || v.isnull) { /* json.ignore-parse-errors: NULL in place */
        *isnull = true;
        return SL_OK;
    }
    uint8_t fb[16];
    size_t w = sl_datum_put(fb, &v, dt);
    return sput(str, fb, w, why, whylen);
}

/* Mark element i of a bitmap at str offset bm as NULL. */
static inline void set_null_bit(sl_buf *str, size_t bm, uint32_t i)
{
    str->p[bm + i / 8] = (char)((uint8_t)str->p[bm + i / 8] | (1u << (i % 8)));
}

/* A JSON array's elements / an object's keys or values (which = 0 keys,
 * 1 values) as a bitmap + values sequence appended to str. */
static int jseq(const sl_dtype *et, jcur *c, sl_buf *str, int depth, uint32_t count, int which,
                char *why, size_t whylen)
{
    size_t bm = str->len, nb = ((size_t)count + 7) / 8;
    static const uint8_t zero[64];
    for (size_t k = 0; k < nb; k += sizeof zero)
        if (sput(str, zero, SL_MIN(sizeof zero, nb - k), why, whylen)) return SL_ERR;
    char close = which < 0 ? ']' : '}';
    c->p++; /* [ or { */
    jws(c);
    if (c->p < c->e && *c->p == close) {
        c->p++;
        return SL_OK;
    }
    for (uint32_t i = 0;; i++) {
        bool isnull = false;
        if (which >= 0) { /* an object member: its key, then its value */
            jws(c);
            if (c->p >= c->e || *c->p != '"') return sl_seterr(why, whylen, "expected a key");
            if (which == 0) {
                /* the key is a JSON string: read it as the key type */
                jcur one = *c;
                if (jelem(et, &one, str, depth, &isnull, why, whylen)) return SL_ERR;
                c->p = one.p;
                jws(c);
                if (c->p >= c->e || *c->p != ':') return sl_seterr(why, whylen, "expected ':'");
                c->p++;
                if (jskip(c, depth + 1, str, why, whylen)) return SL_ERR;
            } else {
                size_t mark = str->len;
                if (jskip(c, depth + 1, str, why, whylen)) return SL_ERR;
                str->len = mark;
                jws(c);
                if (c->p >= c->e || *c->p != ':') return sl_seterr(why, whylen, "expected ':'");
                c->p++;
                if (jelem(et, c, str, depth, &isnull, why, whylen)) return SL_ERR;
            }
        } else if (jelem(et, c, str, depth, &isnull, why, whylen)) {
            char tmp[300];
            snprintf(tmp, sizeof tmp, "element %u: %s", i + 1, why);
            return sl_seterr(why, whylen, "%s", tmp);
        }
        if (isnull) set_null_bit(str, bm, i);
        int more = jnext(c, close, why, whylen);
        if (more < 0) return SL_ERR;
        if (!more) break;
    }
    return SL_OK;
}

/* Elements of the array / members of the object at the cursor. */
static int jcount(const jcur *c0, sl_buf *str, int depth, uint32_t *count, char *why, size_t whylen)
{
    jcur c = *c0;
    size_t mark = str->len;
    char open = *c.p, close = open == '[' ? ']' : '}';
    uint32_t n = 0;
    c.p++;
    jws(&c);
    if (c.p < c.e && *c.p == close) {
        *count = 0;
        return SL_OK;
    }
    for (;;) {
        if (open == '{') {
            if (jskip(&c, depth + 1, str, why, whylen)) return SL_ERR;
            jws(&c);
            if (c.p >= c.e || *c.p != ':') return sl_seterr(why, whylen, "expected ':'");
            c.p++;
        }
        if (jskip(&c, depth + 1, str, why, whylen)) return SL_ERR;
        str->len = mark;
        n++;
        int more = jnext(&c, close, why, whylen);
        if (more < 0) return SL_ERR;
        if (!more) break;
    }
    *count = n;
    return SL_OK;
}

/* An ARRAY / MAP / MULTISET / ROW at the cursor as its canonical bytes
 * appended to str. */
static int jnested(const sl_dtype *dt, jcur *c, sl_buf *str, int depth, char *why, size_t whylen)
{
    if (depth > KF_MAX_DEPTH) return sl_seterr(why, whylen, "nested deeper than %d", KF_MAX_DEPTH);
    jws(c);
    char want = dt->kind == SL_T_ARRAY ? '[' : '{';
    if (c->p >= c->e || *c->p != want)
        return sl_seterr(why, whylen, "%s must be a JSON %s", dt->text,
                         want == '[' ? "array" : "object");
    if (dt->kind == SL_T_ROW) {
        /* where each field's value is, then the fields in order */
        const char *at[SL_MAX_FIELDS_DT];
        memset(at, 0, sizeof at);
        jcur o = *c;
        o.p++;
        jws(&o);
        if (o.p < o.e && *o.p == '}') o.p++;
        else
            for (int more = 1; more;) {
                const char *key;
                size_t klen, mark = str->len;
                if (jname(&o, str, &key, &klen, "a field name", why, whylen)) return SL_ERR;
                for (int i = 0; i < dt->nfields; i++)
                    if (strlen(dt->names[i]) == klen && !memcmp(dt->names[i], key, klen)) {
                        jws(&o);
                        at[i] = o.p;
                    }
                str->len = mark;
                if (jskip(&o, depth + 1, str, why, whylen)) return SL_ERR;
                str->len = mark;
                if ((more = jnext(&o, '}', why, whylen)) < 0) return SL_ERR;
            }
        size_t bm = str->len, nb = ((size_t)dt->nfields + 7) / 8;
        static const uint8_t zero[SL_MAX_FIELDS_DT / 8];
        if (sput(str, zero, nb, why, whylen)) return SL_ERR;
        for (int i = 0; i < dt->nfields; i++) {
            bool isnull = true;
            if (at[i]) {
                jcur fc = {at[i], c->e, c->fail_missing, c->lenient};
                size_t fmark = str->len;
                int rc = jelem(dt->ftypes[i], &fc, str, depth, &isnull, why, whylen);
                if (rc != SL_OK && c->lenient) { /* json.ignore-parse-errors: the field is NULL */
                    str->len = fmark;
                    isnull = true;
                } else if (rc != SL_OK) {
                    char tmp[300];
                    snprintf(tmp, sizeof tmp, "field '%s': %s", dt->names[i], why);
                    return sl_seterr(why, whylen, "%s", tmp);
                }
            } else if (c->fail_missing) {
                return sl_seterr(why, whylen, "field '%s' is missing (json.fail-on-missing-field)",
                                 dt->names[i]);
            }
            if (isnull) set_null_bit(str, bm, (uint32_t)i);
        }
        c->p = o.p;
        return SL_OK;
    }
    uint32_t n = 0;
    if (jcount(c, str, depth, &n, why, whylen)) return SL_ERR;
    uint8_t n4[4];
    sl_put_le32(n4, n);
    if (sput(str, n4, 4, why, whylen)) return SL_ERR;
    if (dt->kind == SL_T_ARRAY) return jseq(dt->elem, c, str, depth, n, -1, why, whylen);
    jcur again = *c;
    if (jseq(dt->elem, &again, str, depth, n, 0, why, whylen)) return SL_ERR;
    const sl_dtype *vt = dt->kind == SL_T_MAP ? dt->val : sl_dtype_basic(SL_T_INT);
    return jseq(vt, c, str, depth, n, 1, why, whylen);
}

/* A column of a new type (not one of the original seven). */
static int jvalue_dt(const sl_dtype *dt, jcur *c, sl_value *v, sl_buf *str, char *why,
                     size_t whylen)
{
    jws(c);
    if (c->p >= c->e) return sl_seterr(why, whylen, "unexpected end");
    if (sl_type_is_nested(dt->kind) && *c->p != 'n') {
        size_t at = str->len;
        if (jnested(dt, c, str, 1, why, whylen)) return SL_ERR;
        if (str->len - at > UINT32_MAX) return sl_seterr(why, whylen, "a value too large");
        v->isnull = false;
        v->v.s.p = str->p + at;
        v->v.s.len = (uint32_t)(str->len - at);
        return SL_OK;
    }
    /* a scalar (or null): its field encoding, read back */
    size_t at = str->len;
    bool isnull;
    if (jelem(dt, c, str, 1, &isnull, why, whylen)) return SL_ERR;
    if (isnull) {
        v->isnull = true;
        return SL_OK;
    }
    size_t w;
    int rc = sl_datum_get((const uint8_t *)str->p + at, str->len - at, dt, v, &w, why, whylen);
    str->len = at;
    return rc;
}

/* One field's value into column i. */
static int jvalue(const kf_codec *cd, int i, jcur *c, sl_value *v, sl_buf *str, char *why,
                  size_t whylen)
{
    sl_type t = cd->type[i];
    if (!sl_type_is_classic(t) || sl_dtype_has_nanos(cd->dt[i])) {
        if (jvalue_dt(cd->dt[i], c, v, str, why, whylen) == SL_OK) return SL_OK;
        char tmp[300];
        snprintf(tmp, sizeof tmp, "field '%s': %s", cd->name[i], why);
        snprintf(why, whylen, "%s", tmp);
        return SL_ERR;
    }
    jws(c);
    if (c->p >= c->e) return sl_seterr(why, whylen, "unexpected end");
    const char *s = c->p;
    char ch = *s;
    if (ch == '"') {
        const char *txt;
        size_t n;
        if (jstring(c, str, &txt, &n, why, whylen)) return SL_ERR;
        if (parse_text(t, txt, n, v, str, why, whylen) != SL_OK) goto bad;
        return SL_OK;
    }
    if ((ch == '-' || (ch >= '0' && ch <= '9')) &&
        (t == SL_T_INT || t == SL_T_BIGINT || t == SL_T_TIMESTAMP))
        jtoken(c); /* an integer: parse_text's strtoll below checks it, no strtod pass first */
    else if (jskip(c, 1, str, why, whylen))
        return SL_ERR;
    size_t n = (size_t)(c->p - s);
    if (n == 4 && !memcmp(s, "null", 4)) {
        v->isnull = true;
        return SL_OK;
    }
    if (t == SL_T_STRING) { /* a number, boolean, object or array as its text */
        v->isnull = false;
        v->v.s.p = s;
        v->v.s.len = (uint32_t)n;
        return SL_OK;
    }
    if (ch == '{' || ch == '[') {
        sl_seterr(why, whylen, "a JSON %s for a %s column", ch == '{' ? "object" : "array",
                  sl_type_name(t));
        goto bad;
    }
    if (t == SL_T_TIMESTAMP) {
        sl_value x;
        if (parse_text(SL_T_BIGINT, s, n, &x, str, why, whylen) != SL_OK) {
            sl_seterr(why, whylen, "'%.*s' is not a TIMESTAMP", (int)SL_MIN(n, 40), s);
            goto bad;
        }
        *v = x;
        return SL_OK;
    }
    if (parse_text(t, s, n, v, str, why, whylen) != SL_OK) goto bad;
    return SL_OK;
bad:;
    char tmp[300];
    snprintf(tmp, sizeof tmp, "field '%s': %s", cd->name[i], why);
    snprintf(why, whylen, "%s", tmp);
    return SL_ERR;
}

/* One flat object at the cursor into the codec's columns. */
static int decode_json_obj(const kf_codec *cd, jcur *cur, sl_value *vals, sl_buf *str, char *why,
                           size_t whylen)
{
    jcur c = *cur;
    c.fail_missing = cd->json.fail_missing; /* read by nested ROWs too */
    c.lenient = cd->fmt == KF_JSON && cd->ignore_errors;
    uint64_t seen[(SL_MAX_FIELDS + 63) / 64] = {0}; /* json.fail-on-missing-field */
    jws(&c);
    if (c.p >= c.e || *c.p != '{') return sl_seterr(why, whylen, "not a JSON object");
    c.p++;
    jws(&c);
    if (c.p < c.e && *c.p == '}') {
        c.p++;
    } else {
        for (int more = 1; more;) {
            const char *key;
            size_t klen, mark = str->len;
            if (jname(&c, str, &key, &klen, "a field name", why, whylen)) return SL_ERR;
            int col = -1;
            for (int i = 0; i < cd->n; i++)
                if (cd->namelen[i] == klen && !memcmp(cd->name[i], key, klen)) {
                    col = i;
                    break;
                }
            str->len = mark; /* the key's unescaped copy is no longer needed */
            if (col >= 0) {
                if (col < SL_MAX_FIELDS) seen[col / 64] |= UINT64_C(1) << (col % 64);
                jcur at = c;
                size_t vmark = str->len;
                if (jvalue(cd, col, &c, &vals[cd->slot[col]], str, why, whylen)) {
                    /* json.ignore-parse-errors: the column is NULL, the rest is read */
                    if (!c.lenient) return SL_ERR;
                    c = at;
                    str->len = vmark;
                    if (jskip(&c, 1, str, why, whylen)) return SL_ERR;
                    str->len = vmark;
                    vals[cd->slot[col]].isnull = true;
                }
            } else if (jskip(&c, 1, str, why, whylen)) {
                return SL_ERR;
            }
            if ((more = jnext(&c, '}', why, whylen)) < 0) return SL_ERR;
        }
    }
    for (int i = 0; cd->json.fail_missing && i < cd->n && i < SL_MAX_FIELDS; i++)
        if (!(seen[i / 64] & (UINT64_C(1) << (i % 64))))
            return sl_seterr(why, whylen, "field '%s' is missing (json.fail-on-missing-field)",
                             cd->name[i]);
    *cur = c;
    return SL_OK;
}

static int decode_json(const kf_codec *cd, const char *p, size_t n, sl_value *vals, sl_buf *str,
                       char *why, size_t whylen)
{
    jcur c = {.p = p, .e = p + n};
    if (decode_json_obj(cd, &c, vals, str, why, whylen) != SL_OK) return SL_ERR;
    jws(&c);
    if (c.p != c.e) return sl_seterr(why, whylen, "trailing characters after the object");
    return SL_OK;
}

/* ---- headers -------------------------------------------------------------- */

int kf_headers_parse(const char *p, size_t n, sl_buf *str,
                     int (*fn)(void *ctx, const char *name, size_t nlen, const char *val,
                               size_t vlen),
                     void *ctx, char *why, size_t whylen)
{
    jcur c = {.p = p, .e = p + n};
    str->len = 0;
    sl_buf_reserve(str, n + 1); /* unescaped text is never longer: no realloc below */
    jws(&c);
    if (c.p >= c.e || *c.p != '{') return sl_seterr(why, whylen, "the headers are not a JSON object");
    c.p++;
    jws(&c);
    if (c.p < c.e && *c.p == '}') c.p++;
    else
        for (int more = 1; more;) {
            const char *name, *val = NULL;
            size_t nlen, vlen = 0;
            if (jname(&c, str, &name, &nlen, "a header name", why, whylen)) return SL_ERR;
            jws(&c);
            if (c.p < c.e && *c.p == '"') {
                if (jstring(&c, str, &val, &vlen, why, whylen) != SL_OK) return SL_ERR;
            } else if (c.e - c.p >= 4 && !memcmp(c.p, "null", 4)) {
                c.p += 4;
            } else {
                return sl_seterr(why, whylen, "header '%.*s': the value must be a string or null",
                                 (int)SL_MIN(nlen, 64), name);
            }
            if (fn(ctx, name, nlen, val, vlen) != SL_OK)
                return sl_seterr(why, whylen, "header '%.*s' cannot be added",
                                 (int)SL_MIN(nlen, 64), name);
            if ((more = jnext(&c, '}', why, whylen)) < 0) return SL_ERR;
        }
    jws(&c);
    if (c.p != c.e) return sl_seterr(why, whylen, "trailing characters after the headers");
    return SL_OK;
}

/* ---- debezium-json decoding ------------------------------------------------ */

typedef struct dbz_out {
    sl_value *before, *after;
    bool has_before, has_after;
    char op;
} dbz_out;

static bool key_is(const char *k, size_t n, const char *want)
{
    return n == strlen(want) && !memcmp(k, want, n);
}

/* The envelope {"before": {..}|null, "after": {..}|null, "op": "c", ...}, or
 * the same inside {"schema": .., "payload": {..}} (schema included). */
static int decode_dbz_env(const kf_codec *cd, jcur *c, int depth, dbz_out *o, sl_buf *str,
                          char *why, size_t whylen)
{
    jws(c);
    if (c->p >= c->e || *c->p != '{') return sl_seterr(why, whylen, "not a JSON object");
    c->p++;
    jws(c);
    if (c->p < c->e && *c->p == '}') {
        c->p++;
        return SL_OK;
    }
    for (;;) {
        const char *key;
        size_t klen, mark = str->len;
        if (jname(c, str, &key, &klen, "a field name", why, whylen)) return SL_ERR;
        str->len = mark; /* the names compared below never need unescaping */
        jws(c);
        bool isobj = c->p < c->e && *c->p == '{';
        bool before = key_is(key, klen, "before"), after = key_is(key, klen, "after");
        if ((before || after) && isobj) {
            char inner[300];
            if (decode_json_obj(cd, c, before ? o->before : o->after, str, inner, sizeof inner)) {
                snprintf(why, whylen, "'%s': %s", before ? "before" : "after", inner);
                return SL_ERR;
            }
            if (before) o->has_before = true;
            else o->has_after = true;
        } else if (key_is(key, klen, "op") && c->p < c->e && *c->p == '"') {
            const char *opv;
            size_t on;
            if (jstring(c, str, &opv, &on, why, whylen)) return SL_ERR;
            if (on != 1 || !strchr("crud", opv[0]))
                return sl_seterr(why, whylen, "unknown 'op' '%.*s' (c, r, u or d)",
                                 (int)SL_MIN(on, 20), opv);
            o->op = opv[0];
        } else if (key_is(key, klen, "payload") && depth == 0 && isobj) {
            if (decode_dbz_env(cd, c, 1, o, str, why, whylen)) return SL_ERR;
        } else {
            if (before || after) {
                const char *s = c->p;
                if (jskip(c, 1, str, why, whylen)) return SL_ERR;
                if (!((size_t)(c->p - s) == 4 && !memcmp(s, "null", 4)))
                    return sl_seterr(why, whylen, "'%s' is neither an object nor null",
                                     before ? "before" : "after");
            } else if (jskip(c, 1, str, why, whylen)) {
                return SL_ERR;
            }
        }
        int more = jnext(c, '}', why, whylen);
        if (more <= 0) return more;
    }
}

int kf_decode_debezium(const kf_codec *c, const char *p, size_t n, sl_value *before,
                       sl_value *after, kf_change *out, sl_buf *str, char *why, size_t whylen)
{
    str->len = 0;
    /* as kf_decode: nested values are built in str too (both images share it) */
    sl_buf_reserve(str, c->wide ? 16 * n + 64 : n + 16);
    for (int i = 0; i < c->n; i++) before[c->slot[i]].isnull = after[c->slot[i]].isnull = true;
    dbz_out o = {before, after, false, false, 0};
    jcur cur = {.p = p, .e = p + n};
    if (decode_dbz_env(c, &cur, 0, &o, str, why, whylen) != SL_OK) return SL_ERR;
    jws(&cur);
    if (cur.p != cur.e) return sl_seterr(why, whylen, "trailing characters after the object");
    switch (o.op) {
    case 0: return sl_seterr(why, whylen, "no 'op' field (a Debezium change event has one)");
    case 'c':
    case 'r':
        if (!o.has_after) return sl_seterr(why, whylen, "op '%c' without an 'after' image", o.op);
        *out = KF_CHANGE_INSERT;
        return SL_OK;
    case 'u':
        if (!o.has_after) return sl_seterr(why, whylen, "op 'u' without an 'after' image");
        if (!o.has_before)
            return sl_seterr(why, whylen, "op 'u' without a 'before' image (the source table "
                             "must log full rows, e.g. REPLICA IDENTITY FULL)");
        *out = KF_CHANGE_UPDATE;
        return SL_OK;
    default:
        if (!o.has_before) return sl_seterr(why, whylen, "op 'd' without a 'before' image");
        *out = KF_CHANGE_DELETE;
        return SL_OK;
    }
}

/* ---- csv decoding ---------------------------------------------------------- */

static int decode_csv(const kf_codec *cd, const char *p, size_t n, sl_value *vals, sl_buf *str,
                      char *why, size_t whylen)
{
    while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r')) n--;
    const char *e = p + n, *q = p;
    int f = 0;
    for (;;) {
        const char *s;
        size_t len;
        bool quoted = q < e && *q == '"';
        if (quoted) {
            size_t start = str->len;
            q++;
            for (;;) {
                if (q >= e) return sl_seterr(why, whylen, "field %d: unterminated quote", f + 1);
                if (*q == '"') {
                    if (q + 1 < e && q[1] == '"') {
                        str->p[str->len++] = '"';
                        q += 2;
                        continue;
                    }
                    q++;
                    break;
                }
                str->p[str->len++] = *q++;
            }
            if (q < e && *q != ',')
                return sl_seterr(why, whylen, "field %d: text after the closing quote", f + 1);
            s = str->p + start;
            len = str->len - start;
        } else {
            s = q;
            while (q < e && *q != ',') q++;
            len = (size_t)(q - s);
        }
        if (f < cd->n) {
            sl_value *v = &vals[cd->slot[f]];
            if (len == 0 && (!quoted || cd->type[f] != SL_T_STRING)) {
                v->isnull = true;
            } else if ((sl_type_is_classic(cd->type[f]) && !sl_dtype_has_nanos(cd->dt[f]))
                           ? parse_text(cd->type[f], s, len, v, str, why, whylen) != SL_OK
                           : scalar_dt(cd->dt[f], s, len, true, v, why, whylen) != SL_OK) {
                char tmp[300];
                snprintf(tmp, sizeof tmp, "field %d ('%s'): %s", f + 1, cd->name[f], why);
                snprintf(why, whylen, "%s", tmp);
                return SL_ERR;
            }
        }
        f++;
        if (q >= e) break;
        q++; /* the comma */
    }
    if (f != cd->n)
        return sl_seterr(why, whylen, "%d field%s, but the format has %d column%s", f,
                         f == 1 ? "" : "s", cd->n, cd->n == 1 ? "" : "s");
    return SL_OK;
}

int kf_decode(const kf_codec *c, const char *p, size_t n, sl_value *vals, sl_buf *str, char *why,
              size_t whylen)
{
    str->len = 0;
    /* no reallocation while pointers into it exist; nested values are
     * built in it too, at most 16 bytes per byte of JSON text (a DECIMAL(38)
     * element "1," takes 16 bytes and a bitmap bit) */
    sl_buf_reserve(str, c->wide ? 16 * n + 64 : n + 16);
    for (int i = 0; i < c->n; i++) vals[c->slot[i]].isnull = true;
    switch (c->fmt) {
    case KF_JSON: return decode_json(c, p, n, vals, str, why, whylen);
    case KF_CSV: return decode_csv(c, p, n, vals, str, why, whylen);
    case KF_DEBEZIUM: return sl_seterr(why, whylen, "debezium-json decodes through kf_decode_debezium");
    case KF_AVRO:
    case KF_AVRO_CONFLUENT: return sl_seterr(why, whylen, "avro decodes through sl_avro_decode");
    case KF_RAW: {
        sl_value *v = &vals[c->slot[0]];
        if (!p) return SL_OK; /* NULL */
        if (n > UINT32_MAX) return sl_seterr(why, whylen, "a value of %zu bytes", n);
        v->isnull = false;
        v->v.s.p = p;
        v->v.s.len = (uint32_t)n;
        return SL_OK;
    }
    }
    return SL_ERR;
}

/* ---- encoding ------------------------------------------------------------------ */

void kf_json_string(sl_buf *b, const char *s, size_t n)
{
    sl_buf_putc(b, '"');
    sl_json_escape(b, s, n);
    sl_buf_putc(b, '"');
}

/* The codec's columns of row as a json object (format_json.c). */
static int encode_object(const kf_codec *c, const sl_row *row, sl_buf *out, char *why,
                         size_t whylen)
{
    sl_buf_putc(out, '{');
    if (sl_fmt_json_fields(out, c, row, why, whylen) != SL_OK) return SL_ERR;
    sl_buf_putc(out, '}');
    return SL_OK;
}

int kf_encode(const kf_codec *c, const sl_row *row, sl_buf *out, char *why, size_t whylen)
{
    switch (c->fmt) {
    case KF_RAW: {
        const sl_value *v = &row->vals[c->slot[0]];
        if (!v->isnull) sl_buf_put(out, v->v.s.p, v->v.s.len);
        return SL_OK;
    }
    case KF_DEBEZIUM: {
        /* as Flink writes it: an insert or update-after is a create with
         * its after image, an update-before or delete a delete with its
         * before image */
        bool add = row->kind == SL_KIND_INSERT || row->kind == SL_KIND_UPDATE_AFTER;
        sl_buf_put(out, "{\"before\":", 10);
        if (add) sl_buf_put(out, "null", 4);
        else if (encode_object(c, row, out, why, whylen) != SL_OK) return SL_ERR;
        sl_buf_put(out, ",\"after\":", 9);
        if (add && encode_object(c, row, out, why, whylen) != SL_OK) return SL_ERR;
        if (!add) sl_buf_put(out, "null", 4);
        sl_buf_put(out, add ? ",\"op\":\"c\"}" : ",\"op\":\"d\"}", 10);
        return SL_OK;
    }
    case KF_AVRO:
    case KF_AVRO_CONFLUENT: return sl_seterr(why, whylen, "avro encodes through sl_avro_encode");
    case KF_JSON:
    case KF_CSV:
        if (c->fmt == KF_CSV && row->kind != SL_KIND_INSERT)
            return sl_seterr(why, whylen, "a %s row cannot be written as csv, which carries no "
                             "row kind (use debezium-json)", sl_rowkind_short(row->kind));
        if (c->fmt == KF_JSON) return encode_object(c, row, out, why, whylen);
        sl_fmt_csv_fields(out, c, row);
        return SL_OK;
    }
    return SL_ERR;
}

/* ---- configuration ----------------------------------------------------------------- */

int kf_fields(const sl_vertex *v, const char *key, const sl_schema *s, int *cols, int *n,
              char *err, size_t errlen)
{
    *n = 0;
    json_t *j = json_object_get(v->config, key);
    if (!j) return SL_OK;
    if (json_is_string(j)) {
        const char *p = json_string_value(j);
        while (*p) {
            const char *e = strchr(p, ';');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            while (len && *p == ' ') p++, len--;
            while (len && p[len - 1] == ' ') len--;
            if (len) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)SL_MIN(len, (size_t)255), p);
                int c = sl_schema_find(s, name);
                if (c < 0 || *n >= SL_MAX_FIELDS)
                    return sl_seterr(err, errlen, "vertex '%s': option '%s': no column '%s'",
                                     v->id, key, name);
                cols[(*n)++] = c;
            }
            if (!e) break;
            p = e + 1;
        }
    } else if (json_is_array(j)) {
        size_t i;
        json_t *e;
        json_array_foreach(j, i, e) {
            int c = json_is_string(e) ? sl_schema_find(s, json_string_value(e)) : -1;
            if (c < 0 || *n >= SL_MAX_FIELDS)
                return sl_seterr(err, errlen, "vertex '%s': option '%s': item %zu is not a column",
                                 v->id, key, i + 1);
            cols[(*n)++] = c;
        }
    } else {
        return sl_seterr(err, errlen, "vertex '%s': option '%s' must be \"a;b\" or an array of "
                         "column names", v->id, key);
    }
    if (*n == 0) return sl_seterr(err, errlen, "vertex '%s': option '%s' is empty", v->id, key);
    for (int i = 0; i < *n; i++)
        for (int k = 0; k < i; k++)
            if (cols[i] == cols[k])
                return sl_seterr(err, errlen, "vertex '%s': option '%s' names column '%s' twice",
                                 v->id, key, s->fields[cols[i]].name);
    return SL_OK;
}

int kf_key_value_plan(const sl_vertex *v, const sl_schema *s, const int *phys, int nphys,
                      bool upsert, kf_format *vfmt, int *kcols, int *nk, int *vcols, int *nv,
                      char *err, size_t errlen)
{
    *nk = *nv = 0;
    const char *fmt = sl_vconf_str(v, "value.format", sl_vconf_str(v, "format", NULL));
    if (!fmt)
        return sl_seterr(err, errlen, "vertex '%s': option '%s' (json, csv, raw, debezium-json, avro or "
                         "avro-confluent) "
                         "is required", v->id, upsert ? "value.format" : "format");
    if (kf_format_parse(fmt, vfmt) != SL_OK)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': '%s' is not json, csv, raw, "
                         "debezium-json, avro or avro-confluent", v->id,
                         json_object_get(v->config, "value.format") ? "value.format" : "format", fmt);
    if (upsert && *vfmt == KF_DEBEZIUM)
        return sl_seterr(err, errlen, "vertex '%s': upsert-kafka needs an insert-only "
                         "'value.format' (json, csv, raw, avro or avro-confluent); debezium-json is a changelog format "
                         "for the kafka connector", v->id);
    const char *kfmt = sl_vconf_str(v, "key.format", NULL);
    const char *kopt = upsert ? "primary-key" : "key.fields";
    if (kf_fields(v, kopt, s, kcols, nk, err, errlen) != SL_OK) return SL_ERR;
    if (upsert && (!kfmt || *nk == 0))
        return sl_seterr(err, errlen, "vertex '%s': upsert-kafka needs 'key.format' and a "
                         "'primary-key' (the columns written as the record key)", v->id);
    if (!upsert && (kfmt != NULL) != (*nk > 0))
        return sl_seterr(err, errlen, "vertex '%s': 'key.format' and 'key.fields' go together",
                         v->id);
    kf_format kf;
    if (kfmt && (kf_format_parse(kfmt, &kf) != SL_OK || kf == KF_DEBEZIUM))
        return sl_seterr(err, errlen, "vertex '%s': option 'key.format': '%s' is not json, csv, "
                         "raw, avro or avro-confluent", v->id, kfmt);
    for (int i = 0; i < *nk; i++) {
        bool ok = false;
        for (int k = 0; k < nphys && !ok; k++) ok = phys[k] == kcols[i];
        if (!ok)
            return sl_seterr(err, errlen, "vertex '%s': option '%s': column '%s' is a metadata "
                             "column, not one the record carries", v->id, kopt,
                             s->fields[kcols[i]].name);
    }
    const char *inc = sl_vconf_str(v, "value.fields-include", "ALL");
    bool except_key;
    if (!strcasecmp(inc, "ALL")) except_key = false;
    else if (!strcasecmp(inc, "EXCEPT_KEY")) except_key = true;
    else
        return sl_seterr(err, errlen, "vertex '%s': option 'value.fields-include': '%s' is not "
                         "ALL or EXCEPT_KEY", v->id, inc);
    if (except_key && *nk == 0)
        return sl_seterr(err, errlen, "vertex '%s': value.fields-include 'EXCEPT_KEY' needs a "
                         "key ('key.format' and 'key.fields')", v->id);
    for (int k = 0; k < nphys; k++) {
        bool is_key = false;
        for (int i = 0; i < *nk && !is_key; i++) is_key = kcols[i] == phys[k];
        if (!(except_key && is_key)) vcols[(*nv)++] = phys[k];
    }
    return SL_OK;
}

const char *kf_prop(const sl_vertex *v, const char *name, const char *dflt)
{
    char key[300];
    snprintf(key, sizeof key, "properties.%s", name);
    return sl_vconf_str(v, key, dflt);
}

int kf_conf_build(const sl_vertex *v, const char *const *reserved, rd_kafka_conf_t **out,
                  char *err, size_t errlen)
{
    *out = NULL;
    const char *bs = kf_prop(v, "bootstrap.servers", NULL);
    if (!bs || !*bs)
        return sl_seterr(err, errlen,
                         "vertex '%s': option 'properties.bootstrap.servers' (the brokers, "
                         "host:port[,host:port]) is required", v->id);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    const char *key;
    json_t *val;
    json_object_foreach(v->config, key, val) {
        if (strncmp(key, "properties.", 11) != 0) continue;
        const char *name = key + 11;
        for (const char *const *r = reserved; r && *r; r++)
            if (!strcmp(*r, name)) {
                rd_kafka_conf_destroy(conf);
                return sl_seterr(err, errlen,
                                 "vertex '%s': option '%s' is set by the connector itself and "
                                 "cannot be given", v->id, key);
            }
        char num[64];
        const char *s;
        if (json_is_string(val)) s = json_string_value(val);
        else if (json_is_integer(val)) {
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(val));
            s = num;
        } else if (json_is_boolean(val)) {
            s = json_is_true(val) ? "true" : "false";
        } else {
            rd_kafka_conf_destroy(conf);
            return sl_seterr(err, errlen, "vertex '%s': option '%s' must be a string", v->id, key);
        }
        char why[512];
        if (rd_kafka_conf_set(conf, name, s, why, sizeof why) != RD_KAFKA_CONF_OK) {
            rd_kafka_conf_destroy(conf);
            return sl_seterr(err, errlen, "vertex '%s': option '%s': %s", v->id, key, why);
        }
    }
    *out = conf;
    return SL_OK;
}
