/*
 * jdbc_common.c -- URL, connection and type helpers of the jdbc connector
 * (see jdbc_common.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar.h"
#include "decimal.h"
#include "jdbc_common.h"
#include "sl.h"

/* PostgreSQL's type oids (pg_type.dat) */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_NAME 19
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_TEXT 25
#define OID_FLOAT4 700
#define OID_FLOAT8 701
#define OID_BPCHAR 1042
#define OID_VARCHAR 1043
#define OID_TIMESTAMP 1114
#define OID_TIMESTAMPTZ 1184
#define OID_DATE 1082
#define OID_TIME 1083
#define OID_NUMERIC 1700
#define OID_NUMERIC_ARR 1231
/* microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch */
#define PG_EPOCH_US INT64_C(946684800000000)
#define PG_EPOCH_DAYS 10957
#define JDBC_ARENA_LIMIT ((size_t)64 << 20) /* bytes of one row's arrays */

static void kv(sl_buf *b, const char *k, const char *v, size_t n)
{
    sl_buf_fmt(b, "%s%s='", b->len ? " " : "", k);
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\'' || v[i] == '\\') sl_buf_putc(b, '\\');
        sl_buf_putc(b, v[i]);
    }
    sl_buf_putc(b, '\'');
}

int sl_jdbc_conninfo(const sl_vertex *v, char *out, size_t cap, char *err, size_t errlen)
{
    static const char pfx[] = "jdbc:postgresql://";
    const char *url = sl_vconf_str(v, "url", NULL);
    if (!url || strncmp(url, pfx, sizeof pfx - 1))
        return sl_seterr(err, errlen, "vertex '%s': 'url' must be a PostgreSQL JDBC URL "
                         "(jdbc:postgresql://host:port/database), not '%s'", v->id,
                         url ? url : "");
    const char *h = url + sizeof pfx - 1, *slash = strchr(h, '/');
    if (!slash || slash == h)
        return sl_seterr(err, errlen, "vertex '%s': url '%s' names no host and database "
                         "(jdbc:postgresql://host:port/database)", v->id, url);
    const char *q = strchr(slash, '?');
    const char *db = slash + 1, *dbend = q ? q : db + strlen(db);
    if (dbend == db)
        return sl_seterr(err, errlen, "vertex '%s': url '%s' names no database", v->id, url);
    const char *colon = memchr(h, ':', (size_t)(slash - h));
    if (h[0] == '[') colon = NULL; /* IPv6 literals keep the default port */
    sl_buf b = {0};
    kv(&b, "host", h, (size_t)((colon ? colon : slash) - h));
    if (colon) {
        for (const char *c = colon + 1; c < slash; c++)
            if (*c < '0' || *c > '9') {
                sl_buf_free(&b);
                return sl_seterr(err, errlen, "vertex '%s': url '%s': the port is not a number",
                                 v->id, url);
            }
        kv(&b, "port", colon + 1, (size_t)(slash - colon - 1));
    }
    kv(&b, "dbname", db, (size_t)(dbend - db));
    /* URL parameters: the driver's sslmode; user and password as the options do */
    for (const char *p = q ? q + 1 : NULL; p && *p;) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        size_t kl = eq ? (size_t)(eq - p) : (size_t)(end - p);
        const char *val = eq ? eq + 1 : end;
        if (kl == 7 && !strncmp(p, "sslmode", 7)) kv(&b, "sslmode", val, (size_t)(end - val));
        else if (kl == 4 && !strncmp(p, "user", 4)) kv(&b, "user", val, (size_t)(end - val));
        else if (kl == 8 && !strncmp(p, "password", 8))
            kv(&b, "password", val, (size_t)(end - val));
        else {
            int rc = sl_seterr(err, errlen, "vertex '%s': url '%s': parameter '%.*s' is not "
                               "supported (sslmode, user and password are)", v->id, url, (int)kl, p);
            sl_buf_free(&b);
            return rc;
        }
        p = amp ? amp + 1 : NULL;
    }
    const char *user = sl_vconf_str(v, "username", NULL), *pw = sl_vconf_str(v, "password", NULL);
    if (user) kv(&b, "user", user, strlen(user));
    if (pw) kv(&b, "password", pw, strlen(pw));
    sl_buf_str(&b, " connect_timeout='10' application_name='sluice' options='-c TimeZone=UTC'");
    int rc = SL_OK;
    if (b.len + 1 > cap)
        rc = sl_seterr(err, errlen, "vertex '%s': the connection settings are too long", v->id);
    else
        memcpy(out, b.p, b.len + 1);
    sl_buf_free(&b);
    return rc;
}

static void one_line(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ')) s[--n] = '\0';
    for (char *p = s; *p; p++)
        if (*p == '\n') *p = ' ';
}

PGconn *sl_jdbc_connect(const char *conninfo, const char *who, char *err, size_t errlen)
{
    PGconn *c = PQconnectdb(conninfo);
    if (c && PQstatus(c) == CONNECTION_OK) return c;
    sl_jdbc_error(c, NULL, who, "cannot connect to PostgreSQL", err, errlen);
    PQfinish(c);
    return NULL;
}

int sl_jdbc_error(PGconn *conn, const PGresult *res, const char *who, const char *what,
                  char *err, size_t errlen)
{
    char msg[600];
    const char *m = res ? PQresultErrorMessage(res) : NULL;
    if (!m || !*m) m = conn ? PQerrorMessage(conn) : "out of memory";
    snprintf(msg, sizeof msg, "%s", m && *m ? m : "unknown error");
    one_line(msg);
    return sl_seterr(err, errlen, "%s: %s: %s", who, what, msg);
}

void sl_jdbc_quote(sl_buf *b, const char *ident)
{
    sl_buf_putc(b, '"');
    for (const char *p = ident; *p; p++) {
        if (*p == '"') sl_buf_putc(b, '"');
        sl_buf_putc(b, *p);
    }
    sl_buf_putc(b, '"');
}

/* arrays: the element type and its array type (pg_type.typarray) */
static const struct { Oid elem, arr; } arrays[] = {
    {OID_BOOL, 1000}, {OID_BYTEA, 1001}, {OID_NAME, 1003}, {OID_INT2, 1005}, {OID_INT4, 1007},
    {OID_TEXT, 1009}, {OID_BPCHAR, 1014}, {OID_VARCHAR, 1015}, {OID_INT8, 1016},
    {OID_FLOAT4, 1021}, {OID_FLOAT8, 1022}, {OID_TIMESTAMP, 1115}, {OID_DATE, 1182},
    {OID_TIME, 1183}, {OID_TIMESTAMPTZ, 1185}, {OID_NUMERIC, OID_NUMERIC_ARR}};

static Oid array_of(Oid elem)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(arrays); i++)
        if (arrays[i].elem == elem) return arrays[i].arr;
    return 0;
}

static Oid elem_of(Oid arr)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(arrays); i++)
        if (arrays[i].arr == arr) return arrays[i].elem;
    return 0;
}

int sl_jdbc_carries(const sl_dtype *dt)
{
    switch (dt->kind) {
    case SL_T_BOOLEAN: case SL_T_TINYINT: case SL_T_SMALLINT: case SL_T_INT: case SL_T_BIGINT:
    case SL_T_FLOAT: case SL_T_DOUBLE: case SL_T_DECIMAL: case SL_T_STRING: case SL_T_BYTES:
    case SL_T_DATE: case SL_T_TIME: case SL_T_TIMESTAMP:
        return 1;
    case SL_T_ARRAY: return dt->elem->kind != SL_T_ARRAY && sl_jdbc_carries(dt->elem);
    default: return 0;
    }
}

int sl_jdbc_check_columns(const char *vid, const sl_schema *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->n; i++)
        if (!sl_jdbc_carries(s->fields[i].dt))
            return sl_seterr(err, errlen, "vertex '%s': column '%s' is %s; the jdbc connector cannot "
                             "carry that type", vid, s->fields[i].name, s->fields[i].dt->text);
    return SL_OK;
}

Oid sl_jdbc_param_type(const sl_dtype *dt)
{
    switch (dt->kind) {
    case SL_T_BOOLEAN: return OID_BOOL;
    case SL_T_TINYINT:
    case SL_T_SMALLINT: return OID_INT2;
    case SL_T_INT: return OID_INT4;
    case SL_T_BIGINT: return OID_INT8;
    case SL_T_FLOAT: return OID_FLOAT4;
    case SL_T_DOUBLE: return OID_FLOAT8;
    case SL_T_DECIMAL: return OID_NUMERIC;
    case SL_T_BYTES: return OID_BYTEA;
    case SL_T_DATE: return OID_DATE;
    case SL_T_TIME: return OID_TIME;
    case SL_T_TIMESTAMP: return OID_TIMESTAMP; /* LTZ too: the session's TimeZone is UTC */
    case SL_T_ARRAY: return array_of(sl_jdbc_param_type(dt->elem));
    default: return OID_TEXT;
    }
}

int sl_jdbc_result_maps(Oid oid, const sl_dtype *dt)
{
    switch (dt->kind) {
    case SL_T_BOOLEAN: return oid == OID_BOOL;
    case SL_T_TINYINT:
    case SL_T_SMALLINT: return oid == OID_INT2;
    case SL_T_INT: return oid == OID_INT2 || oid == OID_INT4;
    case SL_T_BIGINT: return oid == OID_INT2 || oid == OID_INT4 || oid == OID_INT8;
    case SL_T_FLOAT: return oid == OID_FLOAT4;
    case SL_T_DOUBLE: return oid == OID_FLOAT4 || oid == OID_FLOAT8;
    case SL_T_DECIMAL: return oid == OID_NUMERIC;
    case SL_T_STRING:
        return oid == OID_TEXT || oid == OID_VARCHAR || oid == OID_BPCHAR || oid == OID_NAME;
    case SL_T_BYTES: return oid == OID_BYTEA;
    case SL_T_DATE: return oid == OID_DATE;
    case SL_T_TIME: return oid == OID_TIME;
    case SL_T_TIMESTAMP: return oid == OID_TIMESTAMP || oid == OID_TIMESTAMPTZ;
    case SL_T_ARRAY:
        return dt->elem->kind != SL_T_ARRAY && elem_of(oid) &&
               sl_jdbc_result_maps(elem_of(oid), dt->elem);
    default: return 0;
    }
}

const char *sl_jdbc_type_name(Oid oid)
{
    static const struct { Oid oid; const char *name, *arr; } names[] = {
        {OID_BOOL, "boolean", "boolean[]"}, {OID_BYTEA, "bytea", "bytea[]"},
        {OID_NAME, "name", "name[]"}, {OID_INT8, "bigint", "bigint[]"},
        {OID_INT2, "smallint", "smallint[]"}, {OID_INT4, "integer", "integer[]"},
        {OID_TEXT, "text", "text[]"}, {OID_FLOAT4, "real", "real[]"},
        {OID_FLOAT8, "double precision", "double precision[]"},
        {OID_BPCHAR, "character", "character[]"},
        {OID_VARCHAR, "character varying", "character varying[]"},
        {OID_TIMESTAMP, "timestamp without time zone", "timestamp without time zone[]"},
        {OID_TIMESTAMPTZ, "timestamp with time zone", "timestamp with time zone[]"},
        {OID_NUMERIC, "numeric", "numeric[]"}, {OID_DATE, "date", "date[]"},
        {OID_TIME, "time", "time[]"}, {114, "json", NULL}, {3802, "jsonb", NULL},
        {2950, "uuid", NULL}};
    Oid elem = elem_of(oid);
    for (size_t i = 0; i < SL_ARRAY_LEN(names); i++)
        if (names[i].oid == (elem ? elem : oid)) return elem ? names[i].arr : names[i].name;
    return "another type";
}

static void put_be(sl_buf *b, uint64_t v, int n)
{
    char *p = sl_buf_room(b, (size_t)n);
    for (int i = 0; i < n; i++) p[i] = (char)(v >> (8 * (n - 1 - i)));
    sl_buf_added(b, (size_t)n);
}

static uint64_t get_be(const char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | (unsigned char)p[i];
    return v;
}

/* microseconds of a TIME / TIMESTAMP value: nanoseconds rounded HALF_UP, as
 * PostgreSQL's JDBC driver writes them */
static int64_t micros(const sl_value *v, const sl_dtype *dt)
{
    int64_t us = v->v.ts.ms * 1000;
    return dt->p > 3 ? us + (v->v.ts.nano + 500) / 1000 : us;
}

/* DECIMAL -> numeric's binary form: int16 ndigits, weight, sign, dscale,
 * then ndigits base-10000 digits, the first of weight 10000^weight */
static void put_numeric(sl_buf *b, const sl_value *v, int scale)
{
    char t[SL_DEC_TEXT_MAX + 1];
    sl_dec d = {v->v.dec.lo, v->v.dec.hi};
    int n = sl_dec_format(t, sizeof t, d, scale);
    int neg = t[0] == '-';
    const char *ip = t + neg, *dot = memchr(ip, '.', (size_t)(n - neg));
    int il = dot ? (int)(dot - ip) : n - neg;
    while (il > 0 && *ip == '0') ip++, il--; /* "0.5": no integer digits */
    const char *fp = dot ? dot + 1 : "";
    int fl = (int)strlen(fp);
    /* digits in groups of 4: the integer part padded on the left, the
     * fraction on the right */
    int lead = (4 - il % 4) % 4, ng = (lead + il) / 4, nf = (fl + 3) / 4;
    int16_t g[24];
    int count = 0;
    for (int k = 0; k < ng + nf; k++) {
        int x = 0;
        for (int j = 0; j < 4; j++) {
            int pos = k * 4 + j - lead, dig = 0; /* position in integer digits, then fraction */
            if (pos >= 0 && pos < il) dig = ip[pos] - '0';
            else if (pos >= il && pos - il < fl) dig = fp[pos - il] - '0';
            x = x * 10 + dig;
        }
        g[count++] = (int16_t)x;
    }
    int first = 0, weight = ng - 1;
    while (first < count && g[first] == 0) first++, weight--;
    while (count > first && g[count - 1] == 0) count--;
    if (count == first) weight = 0;
    put_be(b, (uint16_t)(count - first), 2);
    put_be(b, (uint16_t)(int16_t)weight, 2);
    put_be(b, neg && count > first ? 0x4000 : 0, 2);
    put_be(b, (uint16_t)scale, 2);
    for (int k = first; k < count; k++) put_be(b, (uint16_t)g[k], 2);
}

void sl_jdbc_encode(sl_buf *b, const sl_value *v, const sl_dtype *dt)
{
    switch (dt->kind) {
    case SL_T_BOOLEAN: sl_buf_putc(b, v->v.i ? 1 : 0); break;
    case SL_T_TINYINT:
    case SL_T_SMALLINT: put_be(b, (uint16_t)v->v.i, 2); break;
    case SL_T_INT:
    case SL_T_DATE:
        put_be(b, (uint32_t)(dt->kind == SL_T_DATE ? v->v.i - PG_EPOCH_DAYS : v->v.i), 4);
        break;
    case SL_T_BIGINT: put_be(b, (uint64_t)v->v.i, 8); break;
    case SL_T_FLOAT: {
        float f = (float)v->v.d;
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(b, u, 4);
        break;
    }
    case SL_T_DOUBLE: {
        uint64_t u;
        memcpy(&u, &v->v.d, 8);
        put_be(b, u, 8);
        break;
    }
    case SL_T_DECIMAL: put_numeric(b, v, dt->s); break;
    case SL_T_TIME: put_be(b, (uint64_t)micros(v, dt), 8); break;
    case SL_T_TIMESTAMP: put_be(b, (uint64_t)(micros(v, dt) - PG_EPOCH_US), 8); break;
    case SL_T_ARRAY: { /* ndim, has-nulls flag, element type, (size, lower bound), elements */
        sl_nested_reader r;
        uint32_t n = sl_nested_open(&r, dt, v);
        put_be(b, n ? 1 : 0, 4);
        put_be(b, 0, 4);
        put_be(b, sl_jdbc_param_type(dt->elem), 4);
        if (n) {
            put_be(b, n, 4);
            put_be(b, 1, 4);
        }
        sl_value e;
        while (sl_nested_next(&r, &e, NULL)) {
            if (e.isnull) {
                put_be(b, UINT32_MAX, 4);
                continue;
            }
            size_t at = b->len;
            put_be(b, 0, 4);
            sl_jdbc_encode(b, &e, dt->elem);
            uint32_t len = (uint32_t)(b->len - at - 4);
            for (int i = 0; i < 4; i++) b->p[at + (size_t)i] = (char)(len >> (8 * (3 - i)));
        }
        break;
    }
    default: sl_buf_put(b, v->v.s.p, v->v.s.len); break;
    }
}

void sl_jdbc_scratch_init(sl_jdbc_scratch *sc)
{
    memset(sc, 0, sizeof *sc);
    sl_arena_init(&sc->arena, JDBC_ARENA_LIMIT);
}

void sl_jdbc_scratch_free(sl_jdbc_scratch *sc)
{
    sl_arena_free(&sc->arena);
    free(sc->el);
    memset(sc, 0, sizeof *sc);
}

/* numeric's binary form as DECIMAL(p, s) through its text (at most 40
 * integer and 44 fraction digits are needed to round HALF_UP or overflow) */
static int get_numeric(const char *p, int len, const sl_dtype *dt, sl_value *out, char *why,
                       size_t whylen)
{
    if (len < 8) return sl_seterr(why, whylen, "a numeric of %d bytes", len);
    int nd = (int16_t)get_be(p, 2), weight = (int16_t)get_be(p + 2, 2);
    unsigned sign = (unsigned)get_be(p + 4, 2);
    if (sign == 0xC000) return sl_seterr(why, whylen, "NaN does not read as %s", dt->text);
    if (sign == 0xD000 || sign == 0xF000)
        return sl_seterr(why, whylen, "%sInfinity does not read as %s",
                         sign == 0xF000 ? "-" : "", dt->text);
    if (nd < 0 || len != 8 + 2 * nd || (sign != 0 && sign != 0x4000))
        return sl_seterr(why, whylen, "a malformed numeric");
    if (weight >= 10) { /* 41 or more integer digits: beyond DECIMAL(38) */
        out->isnull = true;
        return SL_OK;
    }
    char t[128];
    int n = 0;
    if (sign == 0x4000) t[n++] = '-';
    if (weight < 0) t[n++] = '0';
    for (int g = 0; g <= weight; g++) {
        int d = g < nd ? (int)get_be(p + 8 + 2 * g, 2) : 0;
        n += snprintf(t + n, sizeof t - (size_t)n, g ? "%04d" : "%d", d % 10000);
    }
    t[n++] = '.';
    for (int g = weight + 1, fd = 0; g < nd && fd < 44; g++, fd += 4) {
        int d = g < 0 ? 0 : (int)get_be(p + 8 + 2 * g, 2);
        n += snprintf(t + n, sizeof t - (size_t)n, "%04d", d % 10000);
    }
    t[n++] = '0';
    sl_dec d;
    sl_dec_type ty = {(uint8_t)dt->p, (uint8_t)dt->s};
    int st = sl_dec_parse(t, (size_t)n, ty, &d);
    if (st == SL_DEC_OVERFLOW) { /* Flink's DecimalData.fromBigDecimal: NULL */
        out->isnull = true;
        return SL_OK;
    }
    if (st != SL_DEC_OK) return sl_seterr(why, whylen, "a malformed numeric");
    out->v.dec.lo = d.lo;
    out->v.dec.hi = d.hi;
    return SL_OK;
}

/* elements of one array: the scratch holds 24 bytes per element, at most 6 times the
 * value's own size (each element takes at least its 4-byte length) */
#define ARRAY_MAX_ELEMS (1u << 24)

static int get_array(const char *p, int len, Oid oid, const sl_dtype *dt, sl_value *out,
                     sl_jdbc_scratch *sc, char *why, size_t whylen)
{
    if (len < 12) return sl_seterr(why, whylen, "a malformed array");
    int ndim = (int32_t)get_be(p, 4);
    Oid elem = (Oid)get_be(p + 8, 4);
    if (elem != elem_of(oid) || ndim < 0) return sl_seterr(why, whylen, "a malformed array");
    if (ndim > 1)
        return sl_seterr(why, whylen, "a %d-dimensional array does not read as %s", ndim,
                         dt->text);
    uint32_t n = 0;
    const char *q = p + 12, *e = p + len;
    if (ndim == 1) {
        if (len < 20) return sl_seterr(why, whylen, "a malformed array");
        n = (uint32_t)get_be(q, 4);
        q += 8;
    }
    if (n > (uint32_t)(e - q) / 4) return sl_seterr(why, whylen, "a malformed array");
    if (n > ARRAY_MAX_ELEMS) return sl_seterr(why, whylen, "an array of %u elements", n);
    if (n > sc->elcap) {
        uint32_t cap = SL_MAX(n, sc->elcap * 2);
        sc->el = sl_realloc(sc->el, sizeof *sc->el * cap);
        sc->elcap = cap;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (e - q < 4) return sl_seterr(why, whylen, "a malformed array");
        int32_t el = (int32_t)get_be(q, 4);
        q += 4;
        sl_value *x = &sc->el[i];
        memset(x, 0, sizeof *x);
        if (el < 0) {
            x->isnull = true;
            continue;
        }
        if (e - q < el) return sl_seterr(why, whylen, "a malformed array");
        if (sl_jdbc_decode(q, el, elem, dt->elem, x, NULL, why, whylen) != SL_OK) return SL_ERR;
        q += el;
    }
    if (sl_nested_build(dt, sc->el, n, NULL, &sc->arena, out) != SL_OK)
        return sl_seterr(why, whylen, "an array too large for one row");
    return SL_OK;
}

int sl_jdbc_decode(const char *p, int len, Oid oid, const sl_dtype *dt, sl_value *out,
                   sl_jdbc_scratch *sc, char *why, size_t whylen)
{
    out->isnull = false;
    if (!sl_jdbc_result_maps(oid, dt))
        return sl_seterr(why, whylen, "%s does not map to %s", sl_jdbc_type_name(oid), dt->text);
    int64_t i;
    switch (oid) {
    case OID_BOOL:
        if (len != 1) break;
        out->v.i = p[0] != 0;
        return SL_OK;
    case OID_INT2:
        if (len != 2) break;
        i = (int16_t)get_be(p, 2);
        if (dt->kind == SL_T_TINYINT && (i < -128 || i > 127))
            return sl_seterr(why, whylen, "%lld is out of TINYINT's range", (long long)i);
        out->v.i = i;
        return SL_OK;
    case OID_INT4:
        if (len != 4) break;
        out->v.i = (int32_t)get_be(p, 4);
        return SL_OK;
    case OID_INT8:
        if (len != 8) break;
        out->v.i = (int64_t)get_be(p, 8);
        return SL_OK;
    case OID_FLOAT4: {
        if (len != 4) break;
        uint32_t u = (uint32_t)get_be(p, 4);
        float f;
        memcpy(&f, &u, 4);
        out->v.d = f;
        return SL_OK;
    }
    case OID_FLOAT8: {
        if (len != 8) break;
        uint64_t u = get_be(p, 8);
        memcpy(&out->v.d, &u, 8);
        return SL_OK;
    }
    case OID_NUMERIC: return get_numeric(p, len, dt, out, why, whylen);
    case OID_DATE: {
        if (len != 4) break;
        int32_t d = (int32_t)get_be(p, 4);
        if (d == INT32_MAX || d == INT32_MIN)
            return sl_seterr(why, whylen, "an infinite date does not read as DATE");
        out->v.i = (int64_t)d + PG_EPOCH_DAYS;
        return SL_OK;
    }
    case OID_TIME:
    case OID_TIMESTAMP:
    case OID_TIMESTAMPTZ: {
        if (len != 8) break;
        int64_t us = (int64_t)get_be(p, 8);
        if (oid != OID_TIME && (us == INT64_MAX || us == INT64_MIN))
            return sl_seterr(why, whylen, "an infinite timestamp does not read as %s", dt->text);
        if (oid != OID_TIME) us += PG_EPOCH_US;
        out->v.ts.ms = sl_floor_div(us, 1000);
        out->v.ts.nano = dt->p > 3 ? (int32_t)(us - out->v.ts.ms * 1000) * 1000 : 0;
        return SL_OK;
    }
    default:
        if (dt->kind == SL_T_ARRAY) {
            if (!sc) break;
            return get_array(p, len, oid, dt, out, sc, why, whylen);
        }
        out->v.s.p = p;
        out->v.s.len = (uint32_t)len;
        return SL_OK;
    }
    return sl_seterr(why, whylen, "a malformed %s value (%d bytes)", sl_jdbc_type_name(oid), len);
}
