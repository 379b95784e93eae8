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
    case SL_T_ARRAY: return "ARRAY";
    case SL_T_MAP: return "MAP";
    case SL_T_MULTISET: return "MULTISET";
    case SL_T_ROW: return "ROW";
    default: {
        const sl_dtype *d = sl_dtype_basic(t);
        return d ? d->text : "UNKNOWN";
    }
    }
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

void sl_schema_add_dt(sl_schema *s, const char *name, const sl_dtype *dt)
{
    SL_ASSERT(dt);
    s->fields = sl_realloc(s->fields, (size_t)(s->n + 1) * sizeof *s->fields);
    s->fields[s->n].name = sl_strdup(name);
    s->fields[s->n].type = dt->kind;
    s->fields[s->n].dt = dt;
    s->n++;
}

void sl_schema_add(sl_schema *s, const char *name, sl_type t)
{
    const sl_dtype *dt = sl_dtype_basic(t);
    SL_ASSERT(dt); /* a nested kind needs its full descriptor: sl_schema_add_dt */
    sl_schema_add_dt(s, name, dt);
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
        dst->fields[i].dt = src->fields[i].dt;
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
        if (a->fields[i].type != b->fields[i].type ||
            a->fields[i].dt->phys != b->fields[i].dt->phys)
            return false;
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

/* Bytes a non-null value of type dt takes, not counting variable contents. */
static inline size_t fixed_width(const sl_dtype *dt)
{
    switch (dt->kind) {
    case SL_T_BOOLEAN:
    case SL_T_TINYINT: return 1;
    case SL_T_SMALLINT: return 2;
    case SL_T_INT:
    case SL_T_FLOAT:
    case SL_T_DATE:
    case SL_T_INTERVAL_YM: return 4;
    case SL_T_TIME: return dt->p > 3 ? 8 : 4;
    case SL_T_BIGINT:
    case SL_T_DOUBLE:
    case SL_T_INTERVAL_DT: return 8;
    case SL_T_TIMESTAMP: return dt->p > 3 ? 12 : 8;
    case SL_T_DECIMAL: return dt->p <= 18 ? 8 : 16;
    case SL_T_STRING:
    case SL_T_BYTES:
    case SL_T_ARRAY:
    case SL_T_MAP:
    case SL_T_MULTISET:
    case SL_T_ROW: return 4;
    case SL_T_NULL: return 0;
    }
    return 0;
}

size_t sl_datum_size(const sl_value *v, const sl_dtype *dt)
{
    return fixed_width(dt) + (sl_type_is_var(dt->kind) ? v->v.s.len : 0);
}

size_t sl_row_size(const sl_row *r, const sl_schema *s)
{
    SL_ASSERT(r->n == s->n);
    size_t size = 1 + ((size_t)s->n + 7) / 8;
    for (int i = 0; i < s->n; i++) {
        const sl_value *v = &r->vals[i];
        if (v->isnull) continue;
        size += sl_datum_size(v, s->fields[i].dt);
    }
    return size;
}

static inline uint32_t float_bits(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline double bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

size_t sl_datum_put(uint8_t *p, const sl_value *v, const sl_dtype *dt)
{
    switch (dt->kind) {
    case SL_T_BOOLEAN: p[0] = v->v.i ? 1 : 0; return 1;
    case SL_T_TINYINT: p[0] = (uint8_t)v->v.i; return 1;
    case SL_T_SMALLINT: p[0] = (uint8_t)v->v.i; p[1] = (uint8_t)((uint64_t)v->v.i >> 8); return 2;
    case SL_T_INT:
    case SL_T_DATE:
    case SL_T_INTERVAL_YM: sl_put_le32(p, (uint32_t)v->v.i); return 4;
    case SL_T_FLOAT: sl_put_le32(p, float_bits(v->v.d)); return 4;
    case SL_T_TIME:
        sl_put_le32(p, (uint32_t)v->v.i);
        if (dt->p <= 3) return 4;
        sl_put_le32(p + 4, (uint32_t)v->v.ts.nano);
        return 8;
    case SL_T_BIGINT:
    case SL_T_INTERVAL_DT: sl_put_le64(p, (uint64_t)v->v.i); return 8;
    case SL_T_TIMESTAMP:
        sl_put_le64(p, (uint64_t)v->v.i);
        if (dt->p <= 3) return 8;
        sl_put_le32(p + 8, (uint32_t)v->v.ts.nano);
        return 12;
    case SL_T_DOUBLE: sl_put_le64(p, double_bits(v->v.d)); return 8;
    case SL_T_DECIMAL:
        sl_put_le64(p, v->v.dec.lo);
        if (dt->p <= 18) return 8;
        sl_put_le64(p + 8, (uint64_t)v->v.dec.hi);
        return 16;
    case SL_T_STRING:
    case SL_T_BYTES:
    case SL_T_ARRAY:
    case SL_T_MAP:
    case SL_T_MULTISET:
    case SL_T_ROW:
        sl_put_le32(p, v->v.s.len);
        if (v->v.s.len) memcpy(p + 4, v->v.s.p, v->v.s.len);
        return 4 + (size_t)v->v.s.len;
    case SL_T_NULL: return 0;
    }
    return 0;
}

/* 10^k as an unsigned 128-bit number, k <= 38. */
static unsigned __int128 pow10_u128(int k)
{
    unsigned __int128 x = 1;
    while (k-- > 0) x *= 10;
    return x;
}

static inline __int128 dec_get(const sl_value *v)
{
    return (__int128)(((unsigned __int128)(uint64_t)v->v.dec.hi << 64) | v->v.dec.lo);
}

static int check_nested(const uint8_t *p, size_t len, const sl_dtype *dt, int depth, char *why,
                        size_t whylen);
static int datum_get_depth(const uint8_t *p, size_t avail, const sl_dtype *dt, sl_value *v,
                              size_t *used, int depth, char *why, size_t whylen);

int sl_datum_get(const uint8_t *p, size_t avail, const sl_dtype *dt, sl_value *v, size_t *used,
                 char *why, size_t whylen)
{
    return datum_get_depth(p, avail, dt, v, used, 0, why, whylen);
}

/* sl_datum_get at nesting depth `depth` (bounded: hostile bytes cannot
 * recurse past the type's own depth, which the type parser bounds); depth
 * < 0: the bytes are known valid, nested content is not checked again. */
static int datum_get_depth(const uint8_t *p, size_t avail, const sl_dtype *dt, sl_value *v,
                              size_t *used, int depth, char *why, size_t whylen)
{
    size_t w = fixed_width(dt);
    v->isnull = false;
    if (avail < w)
        return sl_seterr(why, whylen, "needs %zu bytes, only %zu remain", w, avail);
    switch (dt->kind) {
    case SL_T_BOOLEAN:
        if (p[0] > 1) return sl_seterr(why, whylen, "holds %u, not a BOOLEAN", p[0]);
        v->v.i = p[0];
        break;
    case SL_T_TINYINT: v->v.i = (int8_t)p[0]; break;
    case SL_T_SMALLINT: v->v.i = (int16_t)(uint16_t)(p[0] | (p[1] << 8)); break;
    case SL_T_INT:
    case SL_T_DATE:
    case SL_T_INTERVAL_YM: v->v.i = (int32_t)sl_get_le32(p); break;
    case SL_T_FLOAT: v->v.d = bits_float(sl_get_le32(p)); break;
    case SL_T_TIME: {
        int64_t ms = (int32_t)sl_get_le32(p);
        if (ms < 0 || ms >= 86400000)
            return sl_seterr(why, whylen, "holds %lld, not a time of day in ms", (long long)ms);
        v->v.ts.ms = ms;
        v->v.ts.nano = 0;
        if (dt->p > 3) {
            uint32_t ns = sl_get_le32(p + 4);
            if (ns > 999999) return sl_seterr(why, whylen, "holds %u nanoseconds of a ms", ns);
            v->v.ts.nano = (int32_t)ns;
        }
        break;
    }
    case SL_T_BIGINT:
    case SL_T_INTERVAL_DT: v->v.i = (int64_t)sl_get_le64(p); break;
    case SL_T_TIMESTAMP:
        v->v.ts.ms = (int64_t)sl_get_le64(p);
        v->v.ts.nano = 0;
        if (dt->p > 3) {
            uint32_t ns = sl_get_le32(p + 8);
            if (ns > 999999) return sl_seterr(why, whylen, "holds %u nanoseconds of a ms", ns);
            v->v.ts.nano = (int32_t)ns;
        }
        break;
    case SL_T_DOUBLE: v->v.d = bits_double(sl_get_le64(p)); break;
    case SL_T_DECIMAL: {
        v->v.dec.lo = sl_get_le64(p);
        v->v.dec.hi = dt->p <= 18 ? ((int64_t)v->v.dec.lo < 0 ? -1 : 0) : (int64_t)sl_get_le64(p + 8);
        __int128 x = dec_get(v);
        unsigned __int128 mag = x < 0 ? -(unsigned __int128)x : (unsigned __int128)x;
        if (mag >= pow10_u128(dt->p))
            return sl_seterr(why, whylen, "holds more than the %d digits of %s", (int)dt->p,
                             dt->text);
        break;
    }
    case SL_T_STRING:
    case SL_T_BYTES:
    case SL_T_ARRAY:
    case SL_T_MAP:
    case SL_T_MULTISET:
    case SL_T_ROW: {
        uint32_t n = sl_get_le32(p);
        if (avail - 4 < n)
            return sl_seterr(why, whylen, "claims %u bytes, only %zu remain", n, avail - 4);
        v->v.s.p = (const char *)p + 4;
        v->v.s.len = n;
        w += n;
        if (depth >= 0 && sl_type_is_nested(dt->kind) && check_nested(p + 4, n, dt, depth + 1, why, whylen))
            return SL_ERR;
        break;
    }
    case SL_T_NULL: return sl_seterr(why, whylen, "has no storable type");
    }
    *used = w;
    return SL_OK;
}

/* A bitmap + values sequence of n values at p[0..avail): element type et
 * (or ets[i] for a ROW). *used gets its size. */
static int check_seq(const uint8_t *p, size_t avail, uint32_t n, const sl_dtype *et,
                     const sl_dtype *const *ets, const char *const *names, size_t *used, int depth,
                     char *why, size_t whylen)
{
    size_t nb = ((size_t)n + 7) / 8;
    if (avail < nb)
        return sl_seterr(why, whylen, "a null bitmap of %zu bytes does not fit in %zu", nb, avail);
    if (n % 8 != 0 && (p[nb - 1] >> (n % 8)) != 0)
        return sl_seterr(why, whylen, "null bitmap has bits set beyond element %u", n);
    size_t pos = nb;
    for (uint32_t i = 0; i < n; i++) {
        if (p[i / 8] & (1u << (i % 8))) continue;
        sl_value tmp;
        size_t w;
        char sub[200];
        if (datum_get_depth(p + pos, avail - pos, ets ? ets[i] : et, &tmp, &w, depth, sub,
                               sizeof sub))
            return ets ? sl_seterr(why, whylen, "field '%s': %s", names[i], sub)
                       : sl_seterr(why, whylen, "element %u: %s", i + 1, sub);
        pos += w;
    }
    *used = pos;
    return SL_OK;
}

static int check_nested(const uint8_t *p, size_t len, const sl_dtype *dt, int depth, char *why,
                        size_t whylen)
{
    if (depth > SL_DTYPE_MAX_DEPTH + 1)
        return sl_seterr(why, whylen, "nested too deeply");
    size_t pos = 0, used = 0;
    char sub[240];
    if (dt->kind == SL_T_ROW) {
        if (check_seq(p, len, (uint32_t)dt->nfields, NULL, dt->ftypes, dt->names, &used, depth, sub,
                      sizeof sub))
            return sl_seterr(why, whylen, "%s: %s", dt->text, sub);
        pos = used;
    } else {
        if (len < 4) return sl_seterr(why, whylen, "%s: %zu bytes, too short", dt->text, len);
        uint32_t n = sl_get_le32(p);
        pos = 4;
        if ((uint64_t)n > (uint64_t)(len - 4) * 8)
            return sl_seterr(why, whylen, "%s: claims %u elements in %zu bytes", dt->text, n,
                             len - 4);
        if (check_seq(p + pos, len - pos, n, dt->elem, NULL, NULL, &used, depth, sub, sizeof sub))
            return sl_seterr(why, whylen, "%s%s: %s", dt->text,
                             dt->kind == SL_T_ARRAY ? "" : " keys", sub);
        pos += used;
        if (dt->kind != SL_T_ARRAY) {
            const sl_dtype *vt = dt->kind == SL_T_MAP ? dt->val : sl_dtype_basic(SL_T_INT);
            if (check_seq(p + pos, len - pos, n, vt, NULL, NULL, &used, depth, sub, sizeof sub))
                return sl_seterr(why, whylen, "%s values: %s", dt->text, sub);
            pos += used;
        }
    }
    if (pos != len)
        return sl_seterr(why, whylen, "%s: %zu unexpected bytes after its content", dt->text,
                         len - pos);
    return SL_OK;
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
        pos += sl_datum_put(dst + pos, v, s->fields[i].dt);
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
        if (bitmap[i / 8] & (1u << (i % 8))) {
            v->isnull = true;
            v->v.dec.lo = 0;
            v->v.dec.hi = 0;
            continue;
        }
        size_t w;
        char why[300];
        if (sl_datum_get(src + pos, len - pos, s->fields[i].dt, v, &w, why, sizeof why))
            return sl_seterr(err, errlen, "damaged row: field %d '%s' (%s) at offset %zu: %s", i,
                             s->fields[i].name, s->fields[i].dt->text, pos, why);
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
        const sl_dtype *dt = s->fields[i].dt;
        if (pos >= cap) return 0;
        if (v->isnull) {
            dst[pos++] = 0;
            continue;
        }
        dst[pos++] = 1;
        size_t w = sl_datum_size(v, dt);
        if (cap - pos < w) return 0;
        if (dt->kind == SL_T_DOUBLE || dt->kind == SL_T_FLOAT) {
            /* Equal keys must give equal bytes: one NaN, and 0.0 == -0.0. */
            sl_value c = *v;
            if (isnan(c.v.d)) c.v.d = NAN;
            else if (c.v.d == 0.0) c.v.d = 0.0;
            pos += sl_datum_put(dst + pos, &c, dt);
        } else {
            pos += sl_datum_put(dst + pos, v, dt);
        }
    }
    return pos;
}

size_t sl_row_key_size(const sl_row *r, const sl_schema *s, const int *keys, int nkeys)
{
    size_t n = 0;
    for (int k = 0; k < nkeys; k++) {
        const sl_value *v = &r->vals[keys[k]];
        n += 1 + (v->isnull ? 0 : sl_datum_size(v, s->fields[keys[k]].dt));
    }
    return n;
}

int sl_row_key_decode(const uint8_t *src, size_t len, const sl_schema *s, const int *keys,
                      int nkeys, sl_value *out)
{
    size_t pos = 0;
    for (int k = 0; k < nkeys; k++) {
        const sl_dtype *dt = s->fields[keys[k]].dt;
        sl_value *v = &out[k];
        memset(v, 0, sizeof *v);
        if (pos >= len) return SL_ERR;
        if (src[pos++] == 0) {
            v->isnull = true;
            continue;
        }
        size_t w;
        if (sl_datum_get(src + pos, len - pos, dt, v, &w, NULL, 0)) return SL_ERR;
        pos += w;
    }
    return pos == len ? SL_OK : SL_ERR;
}

/* ---- nested values ------------------------------------------------------ */

/* The size of a bitmap + values sequence (validated bytes). */
static size_t seq_skip(const uint8_t *p, uint32_t n, const sl_dtype *et)
{
    size_t pos = ((size_t)n + 7) / 8;
    for (uint32_t i = 0; i < n; i++) {
        if (p[i / 8] & (1u << (i % 8))) continue;
        size_t w = fixed_width(et);
        if (sl_type_is_var(et->kind)) w += sl_get_le32(p + pos);
        pos += w;
    }
    return pos;
}

const sl_dtype *sl_nested_elem_type(const sl_dtype *dt, uint32_t i)
{
    if (dt->kind == SL_T_ROW) return i < (uint32_t)dt->nfields ? dt->ftypes[i] : NULL;
    return dt->elem;
}

static const sl_dtype *nested_val_type(const sl_dtype *dt)
{
    return dt->kind == SL_T_MAP ? dt->val : sl_dtype_basic(SL_T_INT);
}

uint32_t sl_nested_open(sl_nested_reader *r, const sl_dtype *dt, const sl_value *v)
{
    const uint8_t *p = (const uint8_t *)v->v.s.p;
    memset(r, 0, sizeof *r);
    r->dt = dt;
    if (dt->kind == SL_T_ROW) {
        r->n = (uint32_t)dt->nfields;
        r->bm = p;
    } else {
        r->n = sl_get_le32(p);
        r->bm = p + 4;
    }
    r->p = r->bm + ((size_t)r->n + 7) / 8;
    if (dt->kind == SL_T_MAP || dt->kind == SL_T_MULTISET) {
        r->vbm = r->bm + seq_skip(r->bm, r->n, dt->elem);
        r->vp = r->vbm + ((size_t)r->n + 7) / 8;
    }
    return r->n;
}

/* Read a validated value of et at *pp (or NULL when its bit is set). */
static void seq_read(const uint8_t *bm, const uint8_t **pp, uint32_t i, const sl_dtype *et,
                     sl_value *out)
{
    if (bm[i / 8] & (1u << (i % 8))) {
        memset(out, 0, sizeof *out);
        out->isnull = true;
        return;
    }
    size_t w = 0;
    datum_get_depth(*pp, SIZE_MAX / 2, et, out, &w, -1, NULL, 0); /* validated bytes */
    *pp += w;
}

bool sl_nested_next(sl_nested_reader *r, sl_value *out, sl_value *mapval)
{
    if (r->i >= r->n) return false;
    uint32_t i = r->i++;
    seq_read(r->bm, &r->p, i, sl_nested_elem_type(r->dt, i), out);
    if (r->vbm) {
        sl_value tmp;
        seq_read(r->vbm, &r->vp, i, nested_val_type(r->dt), mapval ? mapval : &tmp);
    }
    return true;
}

bool sl_nested_get(const sl_dtype *dt, const sl_value *v, uint32_t i, sl_value *out,
                   sl_value *mapval)
{
    sl_nested_reader r;
    if (i >= sl_nested_open(&r, dt, v)) return false;
    for (uint32_t k = 0; k <= i; k++) sl_nested_next(&r, out, mapval);
    return true;
}

/* Size of a bitmap + values sequence about to be written. */
static size_t seq_size(const sl_value *vals, uint32_t n, const sl_dtype *et,
                       const sl_dtype *const *ets)
{
    size_t size = ((size_t)n + 7) / 8;
    for (uint32_t i = 0; i < n; i++)
        if (!vals[i].isnull) size += sl_datum_size(&vals[i], ets ? ets[i] : et);
    return size;
}

static size_t seq_put(uint8_t *p, const sl_value *vals, uint32_t n, const sl_dtype *et,
                      const sl_dtype *const *ets)
{
    size_t nb = ((size_t)n + 7) / 8;
    memset(p, 0, nb);
    size_t pos = nb;
    for (uint32_t i = 0; i < n; i++) {
        if (vals[i].isnull) p[i / 8] |= (uint8_t)(1u << (i % 8));
        else pos += sl_datum_put(p + pos, &vals[i], ets ? ets[i] : et);
    }
    return pos;
}

int sl_nested_build(const sl_dtype *dt, const sl_value *vals, uint32_t n, const sl_value *mapvals,
                    sl_arena *a, sl_value *out)
{
    size_t size;
    if (dt->kind == SL_T_ROW) {
        n = (uint32_t)dt->nfields;
        size = seq_size(vals, n, NULL, dt->ftypes);
    } else {
        size = 4 + seq_size(vals, n, dt->elem, NULL);
        if (dt->kind != SL_T_ARRAY) size += seq_size(mapvals, n, nested_val_type(dt), NULL);
    }
    if (size > UINT32_MAX) return SL_ERR;
    uint8_t *p = sl_arena_alloc(a, size ? size : 1);
    if (!p) return SL_ERR;
    size_t pos = 0;
    if (dt->kind == SL_T_ROW) {
        pos = seq_put(p, vals, n, NULL, dt->ftypes);
    } else {
        sl_put_le32(p, n);
        pos = 4 + seq_put(p + 4, vals, n, dt->elem, NULL);
        if (dt->kind != SL_T_ARRAY) pos += seq_put(p + pos, mapvals, n, nested_val_type(dt), NULL);
    }
    SL_ASSERT(pos == size);
    out->isnull = false;
    out->v.s.p = (const char *)p;
    out->v.s.len = (uint32_t)size;
    return SL_OK;
}

int sl_schema_parse(const char *text, sl_schema *s, char *err, size_t errlen)
{
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        /* the column ends at a comma outside <> and () */
        const char *end = p;
        int depth = 0;
        for (; *end && (depth > 0 || *end != ','); end++) {
            if (*end == '<' || *end == '(') depth++;
            else if ((*end == '>' || *end == ')') && depth > 0) depth--;
        }
        size_t n = (size_t)(end - p);
        char field[4096];
        if (n >= sizeof field) return sl_seterr(err, errlen, "a column is too long");
        memcpy(field, p, n);
        field[n] = 0;
        char *sp = strchr(field, ' ');
        if (sp) *sp++ = 0;
        while (sp && *sp == ' ') sp++;
        const sl_dtype *dt = NULL;
        char why[300];
        if (!sp || !*field || !*sp)
            return sl_seterr(err, errlen, "'%s' is not \"name TYPE\"", field);
        if (sl_dtype_parse(sp, &dt, why, sizeof why) != SL_OK)
            return sl_seterr(err, errlen, "column '%s': %s", field, why);
        if (sl_schema_find(s, field) >= 0)
            return sl_seterr(err, errlen, "column '%s' appears twice", field);
        if (s->n >= SL_MAX_FIELDS) return sl_seterr(err, errlen, "more than %d columns", SL_MAX_FIELDS);
        sl_schema_add_dt(s, field, dt);
        p = end;
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

/* The digits of printf's "%e" text buf ("D.DDDDe[+-]XX") into digits[] (no
 * dot, no trailing zeros, NUL-ended), the exponent of the first into *exp10;
 * returns how many. */
static int sci_digits(const char *buf, char *digits, int *exp10)
{
    int nd = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[nd++] = *p;
    *exp10 = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    return nd;
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
    return sci_digits(buf, digits, exp10);
}

int sl_value_cmp(const sl_dtype *dt, const sl_value *a, const sl_value *b)
{
    if (a->isnull || b->isnull) return a->isnull == b->isnull ? 0 : a->isnull ? -1 : 1;
    sl_type t = dt->kind;
    if (t == SL_T_DOUBLE || t == SL_T_FLOAT) return a->v.d < b->v.d ? -1 : a->v.d > b->v.d;
    if (sl_type_is_var(t) || sl_type_is_nested(t)) {
        uint32_t n = a->v.s.len < b->v.s.len ? a->v.s.len : b->v.s.len;
        int c = n ? memcmp(a->v.s.p, b->v.s.p, n) : 0;
        return c ? c : a->v.s.len < b->v.s.len ? -1 : a->v.s.len > b->v.s.len;
    }
    if (t == SL_T_DECIMAL) {
        if (a->v.dec.hi != b->v.dec.hi) return a->v.dec.hi < b->v.dec.hi ? -1 : 1;
        return a->v.dec.lo < b->v.dec.lo ? -1 : a->v.dec.lo > b->v.dec.lo;
    }
    if (a->v.i != b->v.i) return a->v.i < b->v.i ? -1 : 1;
    if (sl_dtype_has_nanos(dt)) return a->v.ts.nano < b->v.ts.nano ? -1 : a->v.ts.nano > b->v.ts.nano;
    return 0;
}

/* Java's Double/Float.toString layout of the digits dg[0..nd) with decimal
 * exponent e: plain ("123.45", "0.00123", "100.0") when `plain` (the
 * magnitude is in [1e-3, 1e7)), else "1.2345E10". */
static void put_java_digits(outbuf *o, const char *dg, int nd, int e, bool plain)
{
    if (plain) {
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
    put_java_digits(o, dg, nd, e, d >= 1e-3 && d < 1e7);
}

/* Java's Float.toString: the shortest digits that read back as the float. */
static void format_float(outbuf *o, double d)
{
    float f = (float)d;
    if (isnan(f) || isinf(f) || f == 0.0f) {
        format_double(o, (double)f);
        return;
    }
    if (f < 0) {
        ob_putc(o, '-');
        f = -f;
    }
    char buf[40], dg[24];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, (double)f);
        if (strtof(buf, NULL) == f) break;
    }
    int e;
    int nd = sci_digits(buf, dg, &e);
    put_java_digits(o, dg, nd, e, f >= 1e-3f && f < 1e7f);
}

/* Java's BigDecimal.toString of unscaled x with scale s: plain when the
 * scale is 0, or positive with an adjusted exponent >= -6, else
 * scientific (0E-10, 1.2E-8). */
static void format_decimal(outbuf *o, const sl_value *v, int s)
{
    __int128 x = dec_get(v);
    unsigned __int128 m = x < 0 ? -(unsigned __int128)x : (unsigned __int128)x;
    char dg[48];
    int nd = 0;
    do {
        dg[nd++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    /* dg holds the digits least significant first */
    if (x < 0) ob_putc(o, '-');
    int adjusted = nd - 1 - s;
    if (s == 0 || adjusted >= -6) {
        if (nd <= s) {
            ob_put(o, "0.", 2);
            for (int i = 0; i < s - nd; i++) ob_putc(o, '0');
            for (int i = nd - 1; i >= 0; i--) ob_putc(o, dg[i]);
        } else {
            for (int i = nd - 1; i >= 0; i--) {
                ob_putc(o, dg[i]);
                if (i == s && s > 0) ob_putc(o, '.');
            }
        }
    } else {
        ob_putc(o, dg[nd - 1]);
        if (nd > 1) {
            ob_putc(o, '.');
            for (int i = nd - 2; i >= 0; i--) ob_putc(o, dg[i]);
        }
        char eb[16];
        int en = snprintf(eb, sizeof eb, "E%d", adjusted);
        ob_put(o, eb, (size_t)en);
    }
}

/* java.time's LocalTime.toString tail: HH:mm, :ss when seconds or a
 * fraction are not zero, then the fraction in 3, 6 or 9 digits. */
static void format_time_of_day(outbuf *o, int64_t ms_of_day, int32_t nano_of_ms)
{
    char b[40];
    int h = (int)(ms_of_day / 3600000), mi = (int)(ms_of_day / 60000 % 60);
    int sec = (int)(ms_of_day / 1000 % 60);
    int64_t nanos = (ms_of_day % 1000) * 1000000 + nano_of_ms;
    int n = snprintf(b, sizeof b, "%02d:%02d", h, mi);
    ob_put(o, b, (size_t)n);
    if (sec == 0 && nanos == 0) return;
    n = snprintf(b, sizeof b, ":%02d", sec);
    ob_put(o, b, (size_t)n);
    if (nanos == 0) return;
    if (nanos % 1000000 == 0) n = snprintf(b, sizeof b, ".%03d", (int)(nanos / 1000000));
    else if (nanos % 1000 == 0) n = snprintf(b, sizeof b, ".%06d", (int)(nanos / 1000));
    else n = snprintf(b, sizeof b, ".%09d", (int)nanos);
    ob_put(o, b, (size_t)n);
}

static void format_date(outbuf *o, int64_t days)
{
    int64_t y;
    int m, d;
    sl_civil_from_days(days, &y, &m, &d);
    char yb[32], b[16];
    int n = sl_civil_format_year(yb, sizeof yb, y);
    ob_put(o, yb, (size_t)n);
    n = snprintf(b, sizeof b, "-%02d-%02d", m, d);
    ob_put(o, b, (size_t)n);
}

static void format_int(outbuf *o, int64_t x)
{
    char num[32];
    int n = snprintf(num, sizeof num, "%lld", (long long)x);
    ob_put(o, num, (size_t)n);
}

/* java.time.Period.toString of a number of months (P1Y2M, P0D). */
static void format_period(outbuf *o, int64_t months)
{
    ob_putc(o, 'P');
    if (months == 0) {
        ob_put(o, "0D", 2);
        return;
    }
    int64_t y = months / 12, m = months % 12;
    if (y) {
        format_int(o, y);
        ob_putc(o, 'Y');
    }
    if (m) {
        format_int(o, m);
        ob_putc(o, 'M');
    }
}

/* java.time.Duration.toString of milliseconds (PT26H3M4.5S, PT0S). */
static void format_duration(outbuf *o, int64_t ms)
{
    ob_put(o, "PT", 2);
    if (ms == 0) {
        ob_put(o, "0S", 2);
        return;
    }
    int64_t h = ms / 3600000, mi = ms / 60000 % 60, sms = ms % 60000;
    if (h) {
        format_int(o, h);
        ob_putc(o, 'H');
    }
    if (mi) {
        format_int(o, mi);
        ob_putc(o, 'M');
    }
    if (sms) {
        char b[32];
        int64_t a = sms < 0 ? -sms : sms;
        int n = snprintf(b, sizeof b, "%s%lld", sms < 0 ? "-" : "", (long long)(a / 1000));
        ob_put(o, b, (size_t)n);
        if (a % 1000) {
            n = snprintf(b, sizeof b, ".%03d", (int)(a % 1000));
            while (n > 1 && b[n - 1] == '0') n--;
            ob_put(o, b, (size_t)n);
        }
        ob_putc(o, 'S');
    }
}

static void format_value(outbuf *o, const sl_value *v, const sl_dtype *dt, int depth)
{
    char num[40];
    if (v->isnull || dt->kind == SL_T_NULL) {
        ob_put(o, "null", 4);
        return;
    }
    switch (dt->kind) {
    case SL_T_BOOLEAN:
        if (v->v.i) ob_put(o, "true", 4);
        else ob_put(o, "false", 5);
        break;
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
    case SL_T_INT:
    case SL_T_BIGINT: format_int(o, v->v.i); break;
    case SL_T_FLOAT: format_float(o, v->v.d); break;
    case SL_T_DOUBLE: format_double(o, v->v.d); break;
    case SL_T_DECIMAL: format_decimal(o, v, dt->s); break;
    case SL_T_STRING: ob_put(o, v->v.s.p, v->v.s.len); break;
    case SL_T_BYTES:
        /* Java bytes are signed. */
        ob_putc(o, '[');
        for (uint32_t i = 0; i < v->v.s.len; i++) {
            int n = snprintf(num, sizeof num, "%s%d", i ? ", " : "",
                             (int)(int8_t)(uint8_t)v->v.s.p[i]);
            ob_put(o, num, (size_t)n);
        }
        ob_putc(o, ']');
        break;
    case SL_T_TIMESTAMP: /* Java's LocalDateTime.toString */
        if (dt->p <= 3 || v->v.ts.nano == 0) {
            char ts[64];
            int n = sl_ts_text(ts, sizeof ts, v->v.i, SL_TS_JAVA);
            ob_put(o, ts, (size_t)n);
        } else {
            int64_t day = sl_floor_div(v->v.i, 86400000);
            format_date(o, day);
            ob_putc(o, 'T');
            format_time_of_day(o, (v->v.i % 86400000 + 86400000) % 86400000, v->v.ts.nano);
        }
        break;
    case SL_T_DATE: format_date(o, v->v.i); break;
    case SL_T_TIME: format_time_of_day(o, v->v.i, dt->p > 3 ? v->v.ts.nano : 0); break;
    case SL_T_INTERVAL_YM: format_period(o, v->v.i); break;
    case SL_T_INTERVAL_DT: format_duration(o, v->v.i); break;
    case SL_T_ARRAY:
    case SL_T_MULTISET:
    case SL_T_MAP:
    case SL_T_ROW: {
        if (depth > SL_DTYPE_MAX_DEPTH + 1) break;
        sl_nested_reader r;
        sl_value e, mv;
        uint32_t n = sl_nested_open(&r, dt, v);
        bool map = dt->kind == SL_T_MAP || dt->kind == SL_T_MULTISET;
        if (dt->kind == SL_T_ROW) ob_put(o, "+I[", 3);
        else ob_putc(o, map ? '{' : '[');
        for (uint32_t i = 0; i < n && sl_nested_next(&r, &e, &mv); i++) {
            if (i) ob_put(o, ", ", 2);
            format_value(o, &e, sl_nested_elem_type(dt, i), depth + 1);
            if (map) {
                ob_putc(o, '=');
                format_value(o, &mv, dt->kind == SL_T_MAP ? dt->val : sl_dtype_basic(SL_T_INT),
                             depth + 1);
            }
        }
        ob_putc(o, map ? '}' : ']');
        break;
    }
    case SL_T_NULL: break;
    }
}

int sl_value_format_dt(char *dst, size_t cap, const sl_value *v, const sl_dtype *dt)
{
    outbuf o = {dst, cap, 0};
    format_value(&o, v, dt, 0);
    return ob_finish(&o);
}

int sl_value_format(char *dst, size_t cap, const sl_value *v, sl_type t)
{
    outbuf o = {dst, cap, 0};
    const sl_dtype *dt = sl_dtype_basic(t);
    if (!dt || v->isnull) ob_put(&o, "null", 4);
    else format_value(&o, v, dt, 0);
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
