/*
 * jdbc_common.c -- URL, connection and type helpers of the jdbc connector
 * (see jdbc_common.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar.h"
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
/* microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch */
#define PG_EPOCH_US INT64_C(946684800000000)

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

Oid sl_jdbc_param_type(sl_type t)
{
    switch (t) {
    case SL_T_BOOLEAN: return OID_BOOL;
    case SL_T_INT: return OID_INT4;
    case SL_T_BIGINT: return OID_INT8;
    case SL_T_DOUBLE: return OID_FLOAT8;
    case SL_T_BYTES: return OID_BYTEA;
    case SL_T_TIMESTAMP: return OID_TIMESTAMP;
    default: return OID_TEXT;
    }
}

int sl_jdbc_result_maps(Oid oid, sl_type t)
{
    switch (t) {
    case SL_T_BOOLEAN: return oid == OID_BOOL;
    case SL_T_INT: return oid == OID_INT2 || oid == OID_INT4;
    case SL_T_BIGINT: return oid == OID_INT2 || oid == OID_INT4 || oid == OID_INT8;
    case SL_T_DOUBLE: return oid == OID_FLOAT4 || oid == OID_FLOAT8;
    case SL_T_STRING:
        return oid == OID_TEXT || oid == OID_VARCHAR || oid == OID_BPCHAR || oid == OID_NAME;
    case SL_T_BYTES: return oid == OID_BYTEA;
    case SL_T_TIMESTAMP: return oid == OID_TIMESTAMP || oid == OID_TIMESTAMPTZ;
    default: return 0;
    }
}

const char *sl_jdbc_type_name(Oid oid)
{
    static const struct { Oid oid; const char *name; } names[] = {
        {OID_BOOL, "boolean"}, {OID_BYTEA, "bytea"}, {OID_NAME, "name"}, {OID_INT8, "bigint"},
        {OID_INT2, "smallint"}, {OID_INT4, "integer"}, {OID_TEXT, "text"}, {OID_FLOAT4, "real"},
        {OID_FLOAT8, "double precision"}, {OID_BPCHAR, "character"},
        {OID_VARCHAR, "character varying"}, {OID_TIMESTAMP, "timestamp without time zone"},
        {OID_TIMESTAMPTZ, "timestamp with time zone"}, {1700, "numeric"}, {1082, "date"},
        {1083, "time"}, {114, "json"}, {3802, "jsonb"}, {2950, "uuid"}};
    for (size_t i = 0; i < SL_ARRAY_LEN(names); i++)
        if (names[i].oid == oid) return names[i].name;
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

void sl_jdbc_encode(sl_buf *b, const sl_value *v, sl_type t)
{
    switch (t) {
    case SL_T_BOOLEAN: sl_buf_putc(b, v->v.i ? 1 : 0); break;
    case SL_T_INT: put_be(b, (uint32_t)v->v.i, 4); break;
    case SL_T_BIGINT: put_be(b, (uint64_t)v->v.i, 8); break;
    case SL_T_DOUBLE: {
        uint64_t u;
        memcpy(&u, &v->v.d, 8);
        put_be(b, u, 8);
        break;
    }
    case SL_T_TIMESTAMP: put_be(b, (uint64_t)(v->v.i * 1000 - PG_EPOCH_US), 8); break;
    default: sl_buf_put(b, v->v.s.p, v->v.s.len); break;
    }
}

int sl_jdbc_decode(const char *p, int len, Oid oid, sl_type t, sl_value *out)
{
    out->isnull = false;
    int64_t i;
    switch (oid) {
    case OID_BOOL:
        if (len != 1) return SL_ERR;
        out->v.i = p[0] != 0;
        return SL_OK;
    case OID_INT2: i = (int16_t)get_be(p, 2); goto integer;
    case OID_INT4: i = (int32_t)get_be(p, 4); goto integer;
    case OID_INT8: i = (int64_t)get_be(p, 8); goto integer;
    case OID_FLOAT4: {
        uint32_t u = (uint32_t)get_be(p, 4);
        float f;
        memcpy(&f, &u, 4);
        out->v.d = f;
        return len == 4 ? SL_OK : SL_ERR;
    }
    case OID_FLOAT8: {
        uint64_t u = get_be(p, 8);
        memcpy(&out->v.d, &u, 8);
        return len == 8 ? SL_OK : SL_ERR;
    }
    case OID_TIMESTAMP:
    case OID_TIMESTAMPTZ:
        if (len != 8) return SL_ERR;
        out->v.i = sl_floor_div((int64_t)get_be(p, 8) + PG_EPOCH_US, 1000);
        return SL_OK;
    default:
        out->v.s.p = p;
        out->v.s.len = (uint32_t)len;
        return sl_jdbc_result_maps(oid, t) ? SL_OK : SL_ERR;
    }
integer:
    out->v.i = i;
    return sl_jdbc_result_maps(oid, t) ? SL_OK : SL_ERR;
}
