/*
 * catalog_jdbc.c -- Flink's JDBC catalog for PostgreSQL: CREATE CATALOG c
 * WITH ('type' = 'jdbc', 'base-url' = 'jdbc:postgresql://host:port',
 * 'default-database', 'username', 'password'). Its databases are the
 * server's databases (pg_database, less template0/template1), its tables
 * every base table of every non-system schema, named schema.table as Flink's
 * PostgresCatalog names them (a name without a schema is in `public`).
 *
 * Metadata is read with libpq where the statement is planned (the SQL client
 * or the gateway): a table a statement names is read from the server (its
 * columns from pg_attribute, their types mapped as Flink's PostgresTypeMapper
 * maps them, its primary key from pg_constraint) and put in the session's
 * table list as a 'connector' = 'jdbc' table (url base-url/database,
 * table-name schema.table, the catalog's username and password), built from
 * CREATE TABLE syntax and checked exactly as a written one, so the jdbc
 * connector's scan, sink and lookup join read and write it. It is read again
 * by every statement that names it (once per statement), as Flink's
 * JdbcCatalog reads the server's metadata on every getTable: a column added
 * in the database is there for the next statement. SHOW CREATE TABLE prints
 * its password as '******'. DDL inside the catalog is refused, as Flink's
 * JdbcCatalog refuses it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>

#include "sl.h"
#include "parse.h"
#include "ast.h"
#include "catalog_int.h"

struct sql_jcat {
    char *name, *base_url, *defdb, *user, *password;
    char *host, *port; /* from base-url */
};

const sql_jcat *sql_jcat_find(const sl_sql_session *s, const char *cat)
{
    for (int i = 0; cat && i < s->njcats; i++)
        if (!strcasecmp(s->jcats[i].name, cat)) return &s->jcats[i];
    return NULL;
}

static void jcat_clear(sql_jcat *c)
{
    free(c->name);
    free(c->base_url);
    free(c->defdb);
    free(c->user);
    free(c->password);
    free(c->host);
    free(c->port);
}

void sql_jcat_drop(sl_sql_session *s, const char *cat)
{
    for (int i = 0; i < s->njcats; i++)
        if (!strcasecmp(s->jcats[i].name, cat)) {
            jcat_clear(&s->jcats[i]);
            memmove(&s->jcats[i], &s->jcats[i + 1], sizeof(sql_jcat) * (size_t)(s->njcats - i - 1));
            s->njcats--;
            return;
        }
}

void sql_jcat_free_all(sl_sql_session *s)
{
    for (int i = 0; i < s->njcats; i++) jcat_clear(&s->jcats[i]);
    free(s->jcats);
    s->jcats = NULL;
    s->njcats = 0;
}

const char *sql_jcat_default_db(const sql_jcat *c)
{
    return c->defdb;
}

/* A connection to database db of catalog c, or NULL with the server's message. */
static PGconn *jcat_connect(const sql_jcat *c, const char *db, char *err, size_t errlen)
{
    const char *keys[] = {"host", "port", "dbname", "user", "password", "connect_timeout",
                          "application_name", NULL};
    const char *vals[] = {c->host, c->port, db, c->user, c->password, "10", "sluice-catalog",
                          NULL};
    PGconn *conn = PQconnectdbParams(keys, vals, 0);
    if (conn && PQstatus(conn) == CONNECTION_OK) return conn;
    const char *m = conn ? PQerrorMessage(conn) : "out of memory";
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", m);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
    sl_seterr(err, errlen, "catalog '%s': Failed connecting to %s/%s via JDBC: %s", c->name,
              c->base_url, db, msg);
    PQfinish(conn);
    return NULL;
}

/* Run a query with text parameters; NULL with the server's message. */
static PGresult *jcat_query(PGconn *conn, const sql_jcat *c, const char *q, int np,
                            const char *const *params, char *err, size_t errlen)
{
    PGresult *res = PQexecParams(conn, q, np, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(res) == PGRES_TUPLES_OK) return res;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", PQerrorMessage(conn));
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
    sl_seterr(err, errlen, "catalog '%s': reading the catalog from %s failed: %s", c->name,
              c->base_url, msg);
    PQclear(res);
    return NULL;
}

/* ---- CREATE CATALOG ---------------------------------------------------------- */

static const char *opt(const sql_node *with, const char *k)
{
    for (int i = 0; with && i < with->nkids; i++)
        if (!strcmp(with->kids[i]->s, k)) return with->kids[i]->s2;
    return NULL;
}

int sql_jcat_create(sl_sql_session *s, const sql_node *st, char *err, size_t errlen)
{
    const sql_node *with = sql_kid(st, 0);
    static const char *const known[] = {"type", "base-url", "default-database", "username",
                                        "password", NULL};
    for (int i = 0; with && i < with->nkids; i++) {
        int ok = 0;
        for (int k = 0; known[k]; k++) ok |= !strcmp(with->kids[i]->s, known[k]);
        if (!ok)
            return sl_seterr(err, errlen, "line %d, column %d: catalog '%s': Unsupported options "
                             "found for 'jdbc': %s (supported: base-url, default-database, "
                             "password, type, username)", with->kids[i]->line,
                             with->kids[i]->col, st->s2, with->kids[i]->s);
    }
    static const char *const req[] = {"base-url", "default-database", "password", "username",
                                      NULL};
    char missing[256] = "";
    for (int k = 0; req[k]; k++)
        if (!opt(with, req[k]))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     *missing ? ", " : "", req[k]);
    if (*missing)
        return sl_seterr(err, errlen, "line %d, column %d: catalog '%s': One or more required "
                         "options are missing. Missing required options are: %s", st->line,
                         st->col, st->s2, missing);
    const char *url = opt(with, "base-url");
    static const char pfx[] = "jdbc:postgresql://";
    const char *h = url + sizeof pfx - 1;
    size_t hl = strncmp(url, pfx, sizeof pfx - 1) ? 0 : strlen(h);
    while (hl && h[hl - 1] == '/') hl--;
    if (!hl || memchr(h, '/', hl) || memchr(h, '?', hl))
        return sl_seterr(err, errlen, "line %d, column %d: catalog '%s': 'base-url' '%s' is not "
                         "a PostgreSQL JDBC base URL without a database: "
                         "jdbc:postgresql://host[:port] (Sluice's JDBC catalog speaks to "
                         "PostgreSQL)", st->line, st->col, st->s2, url);
    sql_jcat c = {0};
    c.name = sl_strdup(st->s2);
    c.base_url = sl_strndup(url, (size_t)(h - url) + hl);
    c.defdb = sl_strdup(opt(with, "default-database"));
    c.user = sl_strdup(opt(with, "username"));
    c.password = sl_strdup(opt(with, "password"));
    const char *colon = memchr(h, ':', hl);
    if (h[0] == '[') { /* [ipv6]:port */
        const char *rb = memchr(h, ']', hl);
        colon = rb && rb + 1 < h + hl && rb[1] == ':' ? rb + 1 : NULL;
        c.host = sl_strndup(h + 1, rb ? (size_t)(rb - h - 1) : hl - 1);
    } else {
        c.host = sl_strndup(h, colon ? (size_t)(colon - h) : hl);
    }
    c.port = sl_strdup(colon ? colon + 1 : "5432");
    for (const char *p = c.port; *p; p++)
        if (*p < '0' || *p > '9') {
            jcat_clear(&c);
            return sl_seterr(err, errlen, "line %d, column %d: catalog '%s': 'base-url' '%s': "
                             "the port is not a number", st->line, st->col, st->s2, url);
        }
    /* as Flink's open(): the default database must be reachable */
    char e2[1024];
    PGconn *conn = jcat_connect(&c, c.defdb, e2, sizeof e2);
    if (!conn) {
        jcat_clear(&c);
        return sl_seterr(err, errlen, "line %d, column %d: %s", st->line, st->col, e2);
    }
    PQfinish(conn);
    s->jcats = sl_realloc(s->jcats, sizeof(sql_jcat) * (size_t)(s->njcats + 1));
    s->jcats[s->njcats++] = c;
    return SL_OK;
}

/* ---- databases and tables ---------------------------------------------------- */

static char **take_names(PGresult *res, int *n)
{
    *n = PQntuples(res);
    char **names = sl_calloc((size_t)*n + 1, sizeof(char *));
    for (int i = 0; i < *n; i++) names[i] = sl_strdup(PQgetvalue(res, i, 0));
    PQclear(res);
    return names;
}

int sql_jcat_databases(const sql_jcat *c, char ***names, int *n, char *err, size_t errlen)
{
    PGconn *conn = jcat_connect(c, c->defdb, err, errlen);
    if (!conn) return SL_ERR;
    PGresult *res = jcat_query(conn, c, "SELECT datname FROM pg_database WHERE datname NOT IN "
                               "('template0', 'template1') ORDER BY datname", 0, NULL, err,
                               errlen);
    PQfinish(conn);
    if (!res) return SL_ERR;
    *names = take_names(res, n);
    return SL_OK;
}

/* 1 when database db exists, 0 when not, -1 on error */
int sql_jcat_has_db(const sql_jcat *c, const char *db, char *err, size_t errlen)
{
    char **names;
    int n;
    if (sql_jcat_databases(c, &names, &n, err, errlen) != SL_OK) return -1;
    int found = 0;
    for (int i = 0; i < n; i++) {
        found |= !strcmp(names[i], db);
        free(names[i]);
    }
    free(names);
    return found;
}

#define USER_SCHEMAS                                                                   \
    "n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname " \
    "NOT LIKE 'pg_temp_%' AND n.nspname NOT LIKE 'pg_toast_temp_%'"

int sql_jcat_tables(const sql_jcat *c, const char *db, char ***names, int *n, char *err,
                    size_t errlen)
{
    PGconn *conn = jcat_connect(c, db, err, errlen);
    if (!conn) return SL_ERR;
    PGresult *res = jcat_query(conn, c, "SELECT n.nspname || '.' || c.relname FROM pg_class c "
                               "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN "
                               "('r', 'p') AND NOT c.relispartition AND " USER_SCHEMAS
                               " ORDER BY 1", 0, NULL, err, errlen);
    PQfinish(conn);
    if (!res) return SL_ERR;
    *names = take_names(res, n);
    return SL_OK;
}

/* ---- a table's definition ---------------------------------------------------- */

static void put_ident(sql_sbuf *b, const char *id)
{
    sql_sb_str(b, "`");
    for (const char *p = id; *p; p++) {
        if (*p == '`') sql_sb_str(b, "`");
        sql_sb_put(b, p, 1);
    }
    sql_sb_str(b, "`");
}

static void put_lit(sql_sbuf *b, const char *v)
{
    sql_sb_str(b, "'");
    for (const char *p = v; *p; p++) {
        if (*p == '\'') sql_sb_str(b, "'");
        sql_sb_put(b, p, 1);
    }
    sql_sb_str(b, "'");
}

/* Flink's type for PostgreSQL type `typ` (pg_type.typname) with modifier mod;
 * NULL when Flink maps none. */
static char *flink_type(const char *typ, int mod)
{
    if (typ[0] == '_') { /* an array of typ+1 */
        char *e = flink_type(typ + 1, mod);
        if (!e) return NULL;
        char *r = sl_sprintf("ARRAY<%s>", e);
        free(e);
        return r;
    }
    if (!strcmp(typ, "int2")) return sl_strdup("SMALLINT");
    if (!strcmp(typ, "int4") || !strcmp(typ, "serial")) return sl_strdup("INT");
    if (!strcmp(typ, "int8") || !strcmp(typ, "bigserial")) return sl_strdup("BIGINT");
    if (!strcmp(typ, "float4")) return sl_strdup("FLOAT");
    if (!strcmp(typ, "float8")) return sl_strdup("DOUBLE");
    if (!strcmp(typ, "bool")) return sl_strdup("BOOLEAN");
    if (!strcmp(typ, "text")) return sl_strdup("STRING");
    if (!strcmp(typ, "bytea")) return sl_strdup("BYTES");
    if (!strcmp(typ, "date")) return sl_strdup("DATE");
    if (!strcmp(typ, "numeric")) {
        /* numeric without a precision: DECIMAL(38, 18), as Flink */
        if (mod < 4) return sl_strdup("DECIMAL(38, 18)");
        return sl_sprintf("DECIMAL(%d, %d)", ((mod - 4) >> 16) & 0xffff, (mod - 4) & 0xffff);
    }
    if (!strcmp(typ, "varchar"))
        return mod < 4 ? sl_strdup("STRING") : sl_sprintf("VARCHAR(%d)", mod - 4);
    if (!strcmp(typ, "bpchar"))
        return mod < 4 ? sl_strdup("CHAR(1)") : sl_sprintf("CHAR(%d)", mod - 4);
    int p = mod < 0 ? 6 : mod;
    if (!strcmp(typ, "time")) return sl_sprintf("TIME(%d)", p);
    if (!strcmp(typ, "timestamp")) return sl_sprintf("TIMESTAMP(%d)", p);
    if (!strcmp(typ, "timestamptz")) return sl_sprintf("TIMESTAMP_LTZ(%d)", p);
    return NULL;
}

static int table_text(PGconn *conn, const sql_jcat *c, const char *db, const char *schema,
                      const char *rel, const char *shown, sql_sbuf *b, char *err, size_t errlen)
{
    const char *params[] = {schema, rel};
    PGresult *cols = jcat_query(conn, c,
        "SELECT a.attname, t.typname, a.atttypmod, a.attnotnull FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_type t ON t.oid = a.atttypid WHERE n.nspname = $1 AND c.relname = $2 AND "
        "c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        2, params, err, errlen);
    if (!cols) return SL_ERR;
    if (PQntuples(cols) == 0) {
        PQclear(cols);
        return sl_seterr(err, errlen, "catalog '%s': Table (or view) %s does not exist in "
                         "database %s (no base table %s.%s on %s)", c->name, shown, db, schema,
                         rel, c->base_url);
    }
    PGresult *pk = jcat_query(conn, c,
        "SELECT con.conname, a.attname FROM pg_constraint con JOIN pg_class c ON c.oid = "
        "con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace CROSS JOIN LATERAL "
        "unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute a ON "
        "a.attrelid = c.oid AND a.attnum = k.attnum WHERE con.contype = 'p' AND n.nspname = $1 "
        "AND c.relname = $2 ORDER BY k.ord", 2, params, err, errlen);
    if (!pk) {
        PQclear(cols);
        return SL_ERR;
    }
    sql_sb_str(b, "CREATE TABLE t (");
    int rc = SL_OK;
    for (int i = 0; i < PQntuples(cols); i++) {
        const char *typ = PQgetvalue(cols, i, 1);
        char *ft = flink_type(typ, atoi(PQgetvalue(cols, i, 2)));
        if (!ft) {
            rc = sl_seterr(err, errlen, "catalog '%s': table %s, column '%s': Doesn't support "
                           "Postgres type '%s' yet", c->name, shown, PQgetvalue(cols, i, 0), typ);
            break;
        }
        if (i) sql_sb_str(b, ", ");
        put_ident(b, PQgetvalue(cols, i, 0));
        sql_sb_fmt(b, " %s%s", ft, !strcmp(PQgetvalue(cols, i, 3), "t") ? " NOT NULL" : "");
        free(ft);
    }
    if (rc == SL_OK && PQntuples(pk) > 0) {
        sql_sb_str(b, ", CONSTRAINT ");
        put_ident(b, PQgetvalue(pk, 0, 0));
        sql_sb_str(b, " PRIMARY KEY (");
        for (int i = 0; i < PQntuples(pk); i++) {
            if (i) sql_sb_str(b, ", ");
            put_ident(b, PQgetvalue(pk, i, 1));
        }
        sql_sb_str(b, ") NOT ENFORCED");
    }
    sql_sb_str(b, ") WITH ('connector' = 'jdbc', 'url' = ");
    char *url = sl_sprintf("%s/%s", c->base_url, db);
    put_lit(b, url);
    free(url);
    sql_sb_str(b, ", 'table-name' = ");
    char *tn = sl_sprintf("%s.%s", schema, rel);
    put_lit(b, tn);
    free(tn);
    sql_sb_str(b, ", 'username' = ");
    put_lit(b, c->user);
    sql_sb_str(b, ", 'password' = ");
    put_lit(b, c->password);
    sql_sb_str(b, ")");
    PQclear(cols);
    PQclear(pk);
    return rc;
}

int sql_jcat_load(sl_sql_session *s, const sql_loc *l, int line, int col, char *err,
                  size_t errlen)
{
    const sql_jcat *c = sql_jcat_find(s, l->cat);
    sql_table *old = c ? sql_catalog_find(&s->cat, l->key) : NULL;
    if (!c || (old && old->jcat_stmt == s->stmt_seq)) return SL_OK;
    /* schema.table; a name without a schema is in public */
    const char *dot = strchr(l->obj, '.');
    char *schema = dot ? sl_strndup(l->obj, (size_t)(dot - l->obj)) : sl_strdup("public");
    const char *rel = dot ? dot + 1 : l->obj;
    char e2[1024];
    sql_sbuf b = {0};
    PGconn *conn = jcat_connect(c, l->db, e2, sizeof e2);
    int rc = conn ? table_text(conn, c, l->db, schema, rel, l->obj, &b, e2, sizeof e2) : SL_ERR;
    PQfinish(conn);
    free(schema);
    if (rc != SL_OK) {
        free(sl_buf_take(&b));
        return sl_seterr(err, errlen, "line %d, column %d: %s", line, col, e2);
    }
    char *text = sql_sb_take(&b);
    sql_arena *a = sql_arena_new();
    sql_node *list = sql_parse(a, text, strlen(text), 1, 1, e2, sizeof e2);
    s->jcat_loading = 1;
    sql_table *t = list && list->nkids == 1
                       ? sql_cat_build_table(s, list->kids[0], l->key, e2, sizeof e2)
                       : NULL;
    s->jcat_loading = 0;
    free(text);
    if (!t) {
        sql_arena_destroy(a);
        return sl_seterr(err, errlen, "line %d, column %d: catalog '%s': table %s: %s", line, col,
                         c->name, l->obj, e2);
    }
    free(t->name);
    t->name = sl_strdup(l->key);
    t->catalog = sl_strdup(l->cat);
    t->database = sl_strdup(l->db);
    t->obj = sl_strdup(l->obj);
    t->jcat_stmt = s->stmt_seq;
    /* nothing of the table points into the parse (no computed column, no watermark) */
    sql_arena_destroy(a);
    if (!old) {
        sql_cat_add(s, t);
        return SL_OK;
    }
    for (int i = 0; i < s->cat.n; i++) /* the definition read again replaces the last one */
        if (s->cat.t[i] == old) {
            sql_cat_table_free(old);
            s->cat.t[i] = t;
        }
    return SL_OK;
}
