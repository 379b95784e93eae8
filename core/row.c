/*
 * row.c -- type names, schemas, the binary row format, key bytes, value
 * formatting and the scratch arena.
 *
 * Encoding writes exactly the layout described in row.h; decoding reads it
 * in place and trusts nothing: every read is preceded by a check against the
 * bytes that remain, the row kind and BOOLEAN bytes must hold legal values,
 * the unused bits of the null bitmap must be zero and the row must end
 * exactly where the frame does. A damaged frame therefore yields a message
 * saying which field broke and at which offset, never an out-of-bounds read.
 *
 * Multi-byte numbers are little endian and are assembled byte by byte, so
 * the format does not depend on the host's byte order or on alignment.
 *
 * Formatting follows what Flink's print sink shows, which is Java's
 * toString of each value's external type: Double.toString for DOUBLE (the
 * shortest decimal that reads back to the same double, in plain notation for
 * 1e-3 <= |x| < 1e7 and as "1.0E7" otherwise), LocalDateTime.toString for
 * TIMESTAMP (seconds and millis are left out when they are zero, so
 * 2026-01-01T00:00 and 2026-01-01T00:00:00.020), Arrays.toString for BYTES
 * ([104, -1]) and "null" for NULL.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "row.h"
#include "bytes.h"
#include "calendar.h"

/* ---- types ------------------------------------------------------------ */

const char *sl_type_name(sl_type t)
{
    switch (t) {
    case SL_T_NULL: return "NULL";
    case SL_T_BOOLEAN: return "BOOLEAN";
    case SL_T_INT: return "INT";
    case SL_T_BIGINT: return "BIGINT";
    case SL_T_DOUBLE: return "DOUBLE";
    case SL_T_STRING: return "STRING";
    case SL_T_BYTES: return "BYTES";
    case SL_T_TIMESTAMP: return "TIMESTAMP(3)";
    }
    return "UNKNOWN";
}

/* Does s (length n) spell `word` case-insensitively? */
static bool word_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* Parse "(digits)" allowing blanks inside; *val gets the number. */
static bool parse_paren_int(const char *s, size_t n, long *val)
{
    size_t i = 0;
    if (i >= n || s[i] != '(') return false;
    i++;
    while (i < n && s[i] == ' ') i++;
    long x = 0;
    size_t start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        x = x * 10 + (s[i] - '0');
        if (x > 2147483647L) return false;
        i++;
    }
    if (i == start) return false;
    while (i < n && s[i] == ' ') i++;
    if (i + 1 != n || s[i] != ')') return false;
    *val = x;
    return true;
}

int sl_type_parse(const char *s, sl_type *out)
{
    if (!s) return SL_ERR;
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;

    /* Split a trailing "(...)" argument off the name. */
    size_t name_len = 0;
    while (name_len < n && s[name_len] != '(' && s[name_len] != ' ') name_len++;
    size_t arg_at = name_len;
    while (arg_at < n && s[arg_at] == ' ') arg_at++;
    bool has_arg = arg_at < n;
    long arg = 0;
    if (has_arg && !parse_paren_int(s + arg_at, n - arg_at, &arg)) return SL_ERR;

    sl_type t;
    if (word_is(s, name_len, "BOOLEAN")) t = SL_T_BOOLEAN;
    else if (word_is(s, name_len, "INT") || word_is(s, name_len, "INTEGER")) t = SL_T_INT;
    else if (word_is(s, name_len, "BIGINT")) t = SL_T_BIGINT;
    else if (word_is(s, name_len, "DOUBLE")) t = SL_T_DOUBLE;
    else if (word_is(s, name_len, "STRING")) t = SL_T_STRING;
    else if (word_is(s, name_len, "VARCHAR")) t = SL_T_STRING;
    else if (word_is(s, name_len, "BYTES")) t = SL_T_BYTES;
    else if (word_is(s, name_len, "TIMESTAMP")) t = SL_T_TIMESTAMP;
    else if (word_is(s, name_len, "TIMESTAMP_LTZ")) t = SL_T_TIMESTAMP;
    else return SL_ERR;

    if (has_arg) {
        /* Only VARCHAR takes a length; timestamps are stored in millis. */
        if (t == SL_T_STRING && word_is(s, name_len, "VARCHAR")) {
            if (arg < 1) return SL_ERR;
        } else if (t == SL_T_TIMESTAMP) {
            if (arg != 3) return SL_ERR;
        } else {
            return SL_ERR;
        }
    }
    *out = t;
    return SL_OK;
}

const char *sl_rowkind_short(sl_rowkind k)
{
    switch (k) {
    case SL_KIND_INSERT: return "+I";
    case SL_KIND_UPDATE_BEFORE: return "-U";
    case SL_KIND_UPDATE_AFTER: return "+U";
    case SL_KIND_DELETE: return "-D";
    }
    return "??";
}

/* ---- schemas ---------------------------------------------------------- */

void sl_schema_init(sl_schema *s)
{
    s->n = 0;
    s->fields = NULL;
}

void sl_schema_add(sl_schema *s, const char *name, sl_type t)
{
    s->fields = sl_realloc(s->fields, (size_t)(s->n + 1) * sizeof *s->fields);
    s->fields[s->n].name = sl_strdup(name);
    s->fields[s->n].type = t;
    s->n++;
}

int sl_schema_find(const sl_schema *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcasecmp(s->fields[i].name, name) == 0) return i;
    return -1;
}

void sl_schema_copy(sl_schema *dst, const sl_schema *src)
{
    sl_schema_init(dst);
    if (src->n == 0) return;
    dst->fields = sl_malloc((size_t)src->n * sizeof *dst->fields);
    for (int i = 0; i < src->n; i++) {
        dst->fields[i].name = sl_strdup(src->fields[i].name);
        dst->fields[i].type = src->fields[i].type;
    }
    dst->n = src->n;
}

void sl_schema_free(sl_schema *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) free(s->fields[i].name);
    free(s->fields);
    sl_schema_init(s);
}

bool sl_schema_equal(const sl_schema *a, const sl_schema *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        if (a->fields[i].type != b->fields[i].type) return false;
        if (strcmp(a->fields[i].name, b->fields[i].name) != 0) return false;
    }
    return true;
}

/* ---- binary form ------------------------------------------------------ */

static inline uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double bits_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Bytes a non-null value of type t takes, not counting string contents. */
static inline size_t fixed_width(sl_type t)
{
    switch (t) {
    case SL_T_BOOLEAN: return 1;
    case SL_T_INT: return 4;
    case SL_T_BIGINT:
    case SL_T_DOUBLE:
    case SL_T_TIMESTAMP: return 8;
    case SL_T_STRING:
    case SL_T_BYTES: return 4;
    case SL_T_NULL: return 0;
    }
    return 0;
}

static inline bool is_var(sl_type t) { return t == SL_T_STRING || t == SL_T_BYTES; }

size_t sl_row_size(const sl_row *r, const sl_schema *s)
{
    SL_ASSERT(r->n == s->n);
    size_t size = 1 + ((size_t)s->n + 7) / 8;
    for (int i = 0; i < s->n; i++) {
        const sl_value *v = &r->vals[i];
        if (v->isnull) continue;
        size += fixed_width(s->fields[i].type);
        if (is_var(s->fields[i].type)) size += v->v.s.len;
    }
    return size;
}

/* Write one non-null value at p (room already checked); returns its size. */
/* A fixed-width value of type t at p (BOOLEAN: any non-zero byte is TRUE). */
static void get_fixed(const uint8_t *p, sl_type t, sl_value *v)
{
    switch (t) {
    case SL_T_BOOLEAN: v->v.i = p[0] != 0; break;
    case SL_T_INT: v->v.i = (int32_t)sl_get_le32(p); break;
    case SL_T_BIGINT:
    case SL_T_TIMESTAMP: v->v.i = (int64_t)sl_get_le64(p); break;
    case SL_T_DOUBLE: v->v.d = bits_double(sl_get_le64(p)); break;
    default: break;
    }
}

static size_t put_value(uint8_t *p, const sl_value *v, sl_type t)
{
    switch (t) {
    case SL_T_BOOLEAN: p[0] = v->v.i ? 1 : 0; return 1;
    case SL_T_INT: sl_put_le32(p, (uint32_t)v->v.i); return 4;
    case SL_T_BIGINT:
    case SL_T_TIMESTAMP: sl_put_le64(p, (uint64_t)v->v.i); return 8;
    case SL_T_DOUBLE: sl_put_le64(p, double_bits(v->v.d)); return 8;
    case SL_T_STRING:
    case SL_T_BYTES:
        sl_put_le32(p, v->v.s.len);
        if (v->v.s.len) memcpy(p + 4, v->v.s.p, v->v.s.len);
        return 4 + (size_t)v->v.s.len;
    case SL_T_NULL: return 0;
    }
    return 0;
}

size_t sl_row_encode(const sl_row *r, const sl_schema *s, uint8_t *dst, size_t cap)
{
    size_t need = sl_row_size(r, s);
    if (need > cap) return 0;
    size_t nb = ((size_t)s->n + 7) / 8;
    dst[0] = (uint8_t)r->kind;
    memset(dst + 1, 0, nb);
    size_t pos = 1 + nb;
    for (int i = 0; i < s->n; i++) {
        const sl_value *v = &r->vals[i];
        if (v->isnull) {
            dst[1 + i / 8] |= (uint8_t)(1u << (i % 8));
            continue;
        }
        pos += put_value(dst + pos, v, s->fields[i].type);
    }
    SL_ASSERT(pos == need);
    return pos;
}

int sl_row_decode(const uint8_t *src, size_t len, const sl_schema *s, sl_row *out, char *err,
                  size_t errlen)
{
    size_t nb = ((size_t)s->n + 7) / 8;
    if (len < 1 + nb)
        return sl_seterr(err, errlen,
                         "damaged row: %zu bytes, too short for the header of %d fields (%zu)",
                         len, s->n, 1 + nb);
    if (src[0] > SL_KIND_DELETE)
        return sl_seterr(err, errlen, "damaged row: invalid row kind %u at offset 0", src[0]);
    if (s->n % 8 != 0 && (src[nb] >> (s->n % 8)) != 0)
        return sl_seterr(err, errlen, "damaged row: null bitmap has bits set beyond field %d",
                         s->n);
    out->kind = (sl_rowkind)src[0];
    out->n = s->n;

    const uint8_t *bitmap = src + 1;
    size_t pos = 1 + nb;
    for (int i = 0; i < s->n; i++) {
        sl_value *v = &out->vals[i];
        sl_type t = s->fields[i].type;
        if (bitmap[i / 8] & (1u << (i % 8))) {
            v->isnull = true;
            v->v.i = 0;
            continue;
        }
        v->isnull = false;
        size_t w = fixed_width(t);
        if (len - pos < w)
            return sl_seterr(err, errlen,
                             "damaged row: field %d '%s' (%s) needs %zu bytes at offset %zu, "
                             "only %zu remain",
                             i, s->fields[i].name, sl_type_name(t), w, pos, len - pos);
        const uint8_t *p = src + pos;
        switch (t) {
        case SL_T_BOOLEAN:
            if (p[0] > 1)
                return sl_seterr(err, errlen,
                                 "damaged row: field %d '%s' (BOOLEAN) holds %u at offset %zu",
                                 i, s->fields[i].name, p[0], pos);
            v->v.i = p[0];
            break;
        case SL_T_INT:
        case SL_T_BIGINT:
        case SL_T_TIMESTAMP:
        case SL_T_DOUBLE: get_fixed(p, t, v); break;
        case SL_T_STRING:
        case SL_T_BYTES: {
            uint32_t slen = sl_get_le32(p);
            if (len - pos - 4 < slen)
                return sl_seterr(err, errlen,
                                 "damaged row: field %d '%s' (%s) claims %u bytes at offset %zu, "
                                 "only %zu remain",
                                 i, s->fields[i].name, sl_type_name(t), slen, pos,
                                 len - pos - 4);
            v->v.s.p = (const char *)p + 4;
            v->v.s.len = slen;
            w += slen;
            break;
        }
        case SL_T_NULL:
            return sl_seterr(err, errlen, "row schema: field %d '%s' has no storable type", i,
                             s->fields[i].name);
        }
        pos += w;
    }
    if (pos != len)
        return sl_seterr(err, errlen, "damaged row: %zu unexpected bytes after the last field",
                         len - pos);
    return SL_OK;
}

size_t sl_row_key_encode(const sl_row *r, const sl_schema *s, const int *keys, int nkeys,
                         uint8_t *dst, size_t cap)
{
    size_t pos = 0;
    for (int k = 0; k < nkeys; k++) {
        int i = keys[k];
        SL_ASSERT(i >= 0 && i < s->n && i < r->n);
        const sl_value *v = &r->vals[i];
        sl_type t = s->fields[i].type;
        if (pos >= cap) return 0;
        if (v->isnull) {
            dst[pos++] = 0;
            continue;
        }
        dst[pos++] = 1;
        size_t w = fixed_width(t) + (is_var(t) ? v->v.s.len : 0);
        if (cap - pos < w) return 0;
        if (t == SL_T_DOUBLE) {
            /* Equal keys must give equal bytes: one NaN, and 0.0 == -0.0. */
            sl_value c = *v;
            if (isnan(c.v.d)) c.v.d = NAN;
            else if (c.v.d == 0.0) c.v.d = 0.0;
            pos += put_value(dst + pos, &c, t);
        } else {
            pos += put_value(dst + pos, v, t);
        }
    }
    return pos;
}

size_t sl_row_key_size(const sl_row *r, const sl_schema *s, const int *keys, int nkeys)
{
    size_t n = 0;
    for (int k = 0; k < nkeys; k++) {
        const sl_value *v = &r->vals[keys[k]];
        sl_type t = s->fields[keys[k]].type;
        n += 1 + (v->isnull ? 0 : fixed_width(t) + (is_var(t) ? v->v.s.len : 0));
    }
    return n;
}

int sl_row_key_decode(const uint8_t *src, size_t len, const sl_schema *s, const int *keys,
                      int nkeys, sl_value *out)
{
    size_t pos = 0;
    for (int k = 0; k < nkeys; k++) {
        sl_type t = s->fields[keys[k]].type;
        sl_value *v = &out[k];
        memset(v, 0, sizeof *v);
        if (pos >= len) return SL_ERR;
        if (src[pos++] == 0) {
            v->isnull = true;
            continue;
        }
        size_t w = fixed_width(t);
        if (len - pos < w) return SL_ERR;
        const uint8_t *p = src + pos;
        switch (t) {
        case SL_T_BOOLEAN:
        case SL_T_INT:
        case SL_T_BIGINT:
        case SL_T_TIMESTAMP:
        case SL_T_DOUBLE: get_fixed(p, t, v); break;
        case SL_T_STRING:
        case SL_T_BYTES: {
            uint32_t n = sl_get_le32(p);
            if (len - pos - w < n) return SL_ERR;
            v->v.s.p = (const char *)p + 4;
            v->v.s.len = n;
            pos += n;
            break;
        }
        case SL_T_NULL: break;
        }
        pos += w;
    }
    return pos == len ? SL_OK : SL_ERR;
}

int sl_schema_parse(const char *text, sl_schema *s, char *err, size_t errlen)
{
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char field[256];
        if (n >= sizeof field) return sl_seterr(err, errlen, "a column is too long");
        memcpy(field, p, n);
        field[n] = 0;
        char *sp = strchr(field, ' ');
        sl_type t;
        if (sp) *sp++ = 0;
        while (sp && *sp == ' ') sp++;
        if (sp) {
            size_t tl = strlen(sp);
            while (tl && sp[tl - 1] == ' ') sp[--tl] = 0;
        }
        if (!sp || !*field || sl_type_parse(sp, &t) != SL_OK)
            return sl_seterr(err, errlen, "'%s' is not \"name TYPE\"", field);
        if (sl_schema_find(s, field) >= 0)
            return sl_seterr(err, errlen, "column '%s' appears twice", field);
        if (s->n >= SL_MAX_FIELDS) return sl_seterr(err, errlen, "more than %d columns", SL_MAX_FIELDS);
        sl_schema_add(s, field, t);
        p = end ? end : p + n;
    }
    if (s->n == 0) return sl_seterr(err, errlen, "no columns");
    return SL_OK;
}

/* ---- formatting ------------------------------------------------------- */

/* Append to a bounded buffer, counting what would have been written. */
typedef struct {
    char *dst;
    size_t cap;
    size_t n; /* chars produced so far (may exceed cap) */
} outbuf;

static void ob_putc(outbuf *o, char c)
{
    if (o->n + 1 < o->cap) o->dst[o->n] = c;
    o->n++;
}

static void ob_put(outbuf *o, const char *s, size_t len)
{
    if (o->n + 1 < o->cap) {
        size_t room = o->cap - 1 - o->n;
        memcpy(o->dst + o->n, s, len < room ? len : room);
    }
    o->n += len;
}

static int ob_finish(outbuf *o)
{
    if (o->cap) o->dst[o->n < o->cap ? o->n : o->cap - 1] = '\0';
    return (int)o->n;
}

/* Shortest decimal digits of a finite positive d that read back to d (at
 * least two, as Java asks, which only matters for subnormals: 4.9E-324):
 * digits[] gets them (no dot, no trailing zeros), *exp10 the exponent of the
 * first digit. For a normal double a 15-digit rounding that reads back is
 * the shortest form padded with zeros (every 15-digit decimal survives a
 * trip through double), so only 15, 16 and 17 digits need trying; a
 * subnormal has fewer bits and is searched from 2 digits up. */
static int shortest_digits(double d, char *digits, int *exp10)
{
    char buf[40];
    for (int prec = d < DBL_MIN ? 2 : 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (prec == 17 || strtod(buf, NULL) == d) break;
    }
    /* buf = "D.DDDDe[+-]XX" */
    int nd = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[nd++] = *p;
    *exp10 = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    return nd;
}

/* Java's Double.toString. */
static void format_double(outbuf *o, double d)
{
    if (isnan(d)) { ob_put(o, "NaN", 3); return; }
    if (isinf(d)) {
        if (d < 0) ob_put(o, "-Infinity", 9);
        else ob_put(o, "Infinity", 8);
        return;
    }
    if (d == 0.0) {
        if (signbit(d)) ob_put(o, "-0.0", 4);
        else ob_put(o, "0.0", 3);
        return;
    }
    if (d < 0) {
        ob_putc(o, '-');
        d = -d;
    }
    char dg[24];
    int e;
    int nd = shortest_digits(d, dg, &e);
    if (d >= 1e-3 && d < 1e7) {
        if (e >= 0) {
            for (int i = 0; i <= e; i++) ob_putc(o, i < nd ? dg[i] : '0');
            ob_putc(o, '.');
            if (nd > e + 1) ob_put(o, dg + e + 1, (size_t)(nd - e - 1));
            else ob_putc(o, '0');
        } else {
            ob_put(o, "0.", 2);
            for (int i = 0; i < -e - 1; i++) ob_putc(o, '0');
            ob_put(o, dg, (size_t)nd);
        }
    } else {
        ob_putc(o, dg[0]);
        ob_putc(o, '.');
        if (nd > 1) ob_put(o, dg + 1, (size_t)(nd - 1));
        else ob_putc(o, '0');
        char eb[16];
        int en = snprintf(eb, sizeof eb, "E%d", e);
        ob_put(o, eb, (size_t)en);
    }
}

int sl_value_format(char *dst, size_t cap, const sl_value *v, sl_type t)
{
    outbuf o = {dst, cap, 0};
    char num[32];
    if (v->isnull || t == SL_T_NULL) {
        ob_put(&o, "null", 4);
        return ob_finish(&o);
    }
    switch (t) {
    case SL_T_BOOLEAN:
        if (v->v.i) ob_put(&o, "true", 4);
        else ob_put(&o, "false", 5);
        break;
    case SL_T_INT:
    case SL_T_BIGINT: {
        int n = snprintf(num, sizeof num, "%lld", (long long)v->v.i);
        ob_put(&o, num, (size_t)n);
        break;
    }
    case SL_T_DOUBLE: format_double(&o, v->v.d); break;
    case SL_T_STRING: ob_put(&o, v->v.s.p, v->v.s.len); break;
    case SL_T_BYTES:
        /* Java bytes are signed. */
        ob_putc(&o, '[');
        for (uint32_t i = 0; i < v->v.s.len; i++) {
            int n = snprintf(num, sizeof num, "%s%d", i ? ", " : "",
                             (int)(int8_t)(uint8_t)v->v.s.p[i]);
            ob_put(&o, num, (size_t)n);
        }
        ob_putc(&o, ']');
        break;
    case SL_T_TIMESTAMP: { /* Java's LocalDateTime.toString */
        char ts[64];
        int n = sl_ts_text(ts, sizeof ts, v->v.i, SL_TS_JAVA);
        ob_put(&o, ts, (size_t)n);
        break;
    }
    case SL_T_NULL: break;
    }
    return ob_finish(&o);
}

/* ---- arena ------------------------------------------------------------ */

#define ARENA_ALIGN 8

void sl_arena_init(sl_arena *a, size_t limit)
{
    a->buf = NULL;
    a->used = 0;
    a->cap = 0;
    a->limit = limit;
}

void *sl_arena_alloc(sl_arena *a, size_t n)
{
    if (!a->buf) {
        /* One allocation for the arena's life: pointers handed out before a
         * reset must never move, so the buffer never grows. */
        if (a->limit == 0) return NULL;
        a->buf = sl_malloc(a->limit);
        a->cap = a->limit;
    }
    size_t off = (a->used + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1);
    if (off > a->cap || n > a->cap - off) return NULL;
    a->used = off + n;
    return a->buf + off;
}

void sl_arena_free(sl_arena *a)
{
    if (!a) return;
    free(a->buf);
    a->buf = NULL;
    a->used = a->cap = 0;
}
