/*
 * pg_cdc.c -- the `postgres-cdc` source: a PostgreSQL table as a changelog,
 * with Flink CDC's option names (docs/CONNECTORS.md).
 *
 * One subtask (the planner gives the vertex parallelism 1) holds two libpq
 * connections: a plain one for the catalog and the snapshot, and a
 * replication one (replication=database) that creates the logical slot and
 * streams the table's changes decoded by pgoutput (protocol 1: values as
 * text). At the first start with scan.startup.mode `initial` the slot is
 * created with an exported snapshot, the table is read in that snapshot
 * (a cursor, 1,000 rows a fetch) as +I rows, and replication starts at the
 * slot's consistent point, so nothing is read twice or missed; `latest-offset`
 * starts replication there without a snapshot.
 *
 * Changes: an insert is +I; an update -U (the old row) and +U (the new);
 * a delete -D (the old row). The old row is whole only under REPLICA
 * IDENTITY FULL; a table with a PRIMARY KEY (the planner's "primary-key")
 * is followed by changelog-normalize, so the source emits +U alone for an
 * update and -D with the key for a delete, and any replica identity serves.
 * Without a primary key the table must be REPLICA IDENTITY FULL (checked at
 * start).
 *
 * The position: the end LSN of the last transaction whose changes were all
 * emitted, and how many changes of the next transaction were emitted
 * already. A barrier may fall inside a transaction: the checkpoint keeps
 * (lsn, n), and a restore starts replication at lsn (PostgreSQL sends the
 * transactions that commit after it) and drops the first n changes of the
 * first transaction. The slot's flushed LSN is confirmed to the server only
 * when a checkpoint that holds it completes, so the server keeps the WAL a
 * restore needs. A checkpoint during the initial snapshot is declined (its
 * exported snapshot cannot be taken again).
 *
 * The slot is created when absent and kept when the job ends, as Flink CDC
 * keeps it (`debezium.slot.drop.on.stop` = true drops it at close); the
 * publication (`debezium.publication.name`, default dbz_publication) is
 * created FOR ALL TABLES when absent, as Debezium's default mode does.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>
#include <poll.h>

#include "bytes.h"
#include "decimal.h"
#include "jdbc_common.h"
#include "kafka_common.h"
#include "log.h"
#include "operator.h"
#include "sl.h"
#include "temporal.h"

#define PC_FETCH 1000
#define PC_STATUS_MS 10000 /* a standby status update at least this often */
static const char pc_magic[4] = {'S', 'L', 'P', 'C'};

typedef struct pc_plan {
    char *vid;
    char *conninfo;       /* the plain connection */
    char *schema, *table, *slot, *pub;
    bool initial;         /* scan.startup.mode initial */
    bool upsert;          /* a primary key: changelog-normalize follows */
    int pk[SL_MAX_FIELDS], npk; /* its columns */
    bool drop_slot;       /* debezium.slot.drop.on.stop */
    int n;                /* output columns */
    char **names;
    const sl_dtype **dt;
} pc_plan;

typedef enum { PC_START = 0, PC_SNAPSHOT, PC_STREAM } pc_phase;

typedef struct pc_pending { int64_t cpid; uint64_t lsn; } pc_pending;

#define PC_ARRAY_DEPTH 8 /* nesting of arrays (PostgreSQL allows 6 dimensions) */

typedef struct pc_state {
    PGconn *conn, *rconn;
    pc_phase phase;
    bool restored;
    bool snapshot_done;   /* restored: the snapshot was complete */
    uint64_t lsn;         /* end of the last transaction fully emitted (or the start) */
    uint32_t skip;        /* changes of the first transaction already emitted (restore) */
    uint32_t txn_changes; /* changes of the current transaction seen */
    bool in_txn;
    uint64_t received;    /* the last WAL position received */
    uint64_t confirmed;   /* flushed LSN confirmed to the server */
    uint32_t relid;       /* the table's relation id in the stream (0: not seen yet) */
    int wire_n;           /* columns of the relation on the wire */
    int *wire_slot;       /* per wire column: its output column, -1 none */
    char snapname[128];
    PGresult *batch;      /* the snapshot's current fetch */
    int batch_row;
    sl_value *vals, *old;
    sl_buf scratch;       /* decoded bytea, and text of values */
    sl_arena arena;       /* the row's arrays (canonical bytes), reset per row */
    sl_value *arr_el[PC_ARRAY_DEPTH + 1]; /* an array's elements being parsed, per */
    uint32_t arr_cap[PC_ARRAY_DEPTH + 1]; /* nesting depth: kept from row to row */
    pc_pending pend[16];
    int npend;
    int64_t last_status_ms;
    int fd;
} pc_state;

/* ---- plan ------------------------------------------------------------------ */

static void pc_plan_free(void *p)
{
    pc_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->conninfo);
    free(pl->schema);
    free(pl->table);
    free(pl->slot);
    free(pl->pub);
    for (int i = 0; i < pl->n; i++) free(pl->names[i]);
    free(pl->names);
    free(pl->dt);
    free(pl);
}

/* key='value' with ' and \ escaped, appended. */
static void ci_put(sl_buf *b, const char *key, const char *val)
{
    sl_buf_put(b, key, strlen(key));
    sl_buf_put(b, "='", 2);
    for (const char *p = val; *p; p++) {
        if (*p == '\'' || *p == '\\') sl_buf_putc(b, '\\');
        sl_buf_putc(b, *p);
    }
    sl_buf_put(b, "' ", 2);
}

static bool pc_type_ok(const sl_dtype *dt)
{
    switch (dt->kind) {
    case SL_T_BOOLEAN: case SL_T_INT: case SL_T_BIGINT: case SL_T_DOUBLE: case SL_T_STRING:
    case SL_T_BYTES: case SL_T_TINYINT: case SL_T_SMALLINT: case SL_T_FLOAT: case SL_T_DECIMAL:
    case SL_T_DATE: case SL_T_TIME: case SL_T_TIMESTAMP:
        return true;
    case SL_T_ARRAY: return pc_type_ok(dt->elem); /* int[], text[][], ... */
    default: return false;
    }
}

static void *pc_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    pc_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id);
    static const char *const req[] = {"hostname", "username", "database-name", "table-name",
                                      "slot.name"};
    for (size_t i = 0; i < SL_ARRAY_LEN(req); i++)
        if (!sl_vconf_str(v, req[i], NULL) || !*sl_vconf_str(v, req[i], "")) {
            sl_seterr(err, errlen, "vertex '%s': postgres-cdc needs '%s'", v->id, req[i]);
            goto fail;
        }
    const char *plugin = sl_vconf_str(v, "decoding.plugin.name", "pgoutput");
    if (strcmp(plugin, "pgoutput") != 0) {
        sl_seterr(err, errlen, "vertex '%s': option 'decoding.plugin.name': '%s' is not supported "
                  "(pgoutput is)", v->id, plugin);
        goto fail;
    }
    const char *mode = sl_vconf_str(v, "scan.startup.mode", "initial");
    if (!strcmp(mode, "initial")) pl->initial = true;
    else if (strcmp(mode, "latest-offset") != 0) {
        sl_seterr(err, errlen, "vertex '%s': option 'scan.startup.mode': '%s' is not initial or "
                  "latest-offset", v->id, mode);
        goto fail;
    }
    const char *slot = sl_vconf_str(v, "slot.name", "");
    for (const char *p = slot; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) {
            sl_seterr(err, errlen, "vertex '%s': option 'slot.name': '%s' may hold only lower "
                      "case letters, digits and '_' (PostgreSQL's rule for slot names)", v->id,
                      slot);
            goto fail;
        }
    const char *drop = sl_vconf_str(v, "debezium.slot.drop.on.stop", "false");
    pl->drop_slot = !strcasecmp(drop, "true");
    pl->slot = sl_strdup(slot);
    pl->schema = sl_strdup(sl_vconf_str(v, "schema-name", "public"));
    pl->table = sl_strdup(sl_vconf_str(v, "table-name", ""));
    pl->pub = sl_strdup(sl_vconf_str(v, "debezium.publication.name", "dbz_publication"));
    if (kf_fields(v, "primary-key", &v->declared, pl->pk, &pl->npk, err, errlen)) goto fail;
    pl->upsert = pl->npk > 0;
    sl_buf ci = {0};
    ci_put(&ci, "host", sl_vconf_str(v, "hostname", ""));
    ci_put(&ci, "port", sl_vconf_str(v, "port", "5432"));
    ci_put(&ci, "user", sl_vconf_str(v, "username", ""));
    ci_put(&ci, "password", sl_vconf_str(v, "password", ""));
    ci_put(&ci, "dbname", sl_vconf_str(v, "database-name", ""));
    ci_put(&ci, "connect_timeout", "10");
    ci_put(&ci, "options", "-c TimeZone=UTC -c DateStyle=ISO");
    pl->conninfo = sl_strdup(ci.p);
    sl_buf_free(&ci);
    const sl_schema *s = &v->declared;
    if (s->n == 0) {
        sl_seterr(err, errlen, "vertex '%s': postgres-cdc needs a \"schema\" (its columns)", v->id);
        goto fail;
    }
    pl->n = s->n;
    pl->names = sl_calloc((size_t)s->n, sizeof *pl->names);
    pl->dt = sl_calloc((size_t)s->n, sizeof *pl->dt);
    for (int i = 0; i < s->n; i++) {
        pl->names[i] = sl_strdup(s->fields[i].name);
        pl->dt[i] = s->fields[i].dt;
        if (!pc_type_ok(pl->dt[i])) {
            sl_seterr(err, errlen, "vertex '%s': column '%s': postgres-cdc cannot read %s values "
                      "yet", v->id, s->fields[i].name, pl->dt[i]->text);
            goto fail;
        }
    }
    sl_schema_copy(pc->out, s);
    return pl;
fail:
    pc_plan_free(pl);
    return NULL;
}

/* ---- values ---------------------------------------------------------------- */

static int hexv(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int pc_text(pc_state *st, const sl_dtype *dt, const char *p, size_t n, sl_value *v,
                   char *why, size_t whylen);

#define PC_ARRAY_MAX 65536 /* elements of one array (of one dimension) */
#define PC_ARENA_LIMIT ((size_t)64 << 20) /* bytes of one row's arrays */

/* PostgreSQL's text form of an array, "{1,NULL,\"a \\\"b\\\"\"}" or
 * "{{1,2},{3,4}}" for ARRAY<ARRAY<...>>, from *pp (advanced past it) into
 * *v: each element parsed by pc_text (a quoted one unescaped into the
 * state's scratch, reserved by the caller), the value built in the state's
 * arena. A dimension header ("[0:2]={...}") or a malformed text is an error. */
static int pc_array(pc_state *st, const sl_dtype *dt, const char **pp, const char *e, sl_value *v,
                    int depth, char *why, size_t whylen)
{
    const char *p = *pp;
    if (depth > PC_ARRAY_DEPTH) return sl_seterr(why, whylen, "arrays nested too deeply");
    if (p >= e || *p != '{') return sl_seterr(why, whylen, "an array that does not start with '{'");
    p++;
    sl_value *el = st->arr_el[depth]; /* free again once this array is built */
    uint32_t n = 0;
    int rc = SL_OK;
    while (rc == SL_OK && p < e && *p != '}') {
        if (n == PC_ARRAY_MAX) {
            rc = sl_seterr(why, whylen, "an array of more than %d elements", PC_ARRAY_MAX);
            break;
        }
        if (n == st->arr_cap[depth]) {
            st->arr_cap[depth] = n ? n * 2 : 16;
            el = st->arr_el[depth] = sl_realloc(el, sizeof *el * st->arr_cap[depth]);
        }
        sl_value *x = &el[n++];
        memset(x, 0, sizeof *x);
        if (*p == '{') { /* an inner dimension */
            if (dt->elem->kind != SL_T_ARRAY)
                rc = sl_seterr(why, whylen, "a multi-dimensional array for %s", dt->text);
            else
                rc = pc_array(st, dt->elem, &p, e, x, depth + 1, why, whylen);
        } else if (*p == '"') { /* quoted: \ escapes the next character */
            p++;
            char *o = st->scratch.p + st->scratch.len, *o0 = o;
            while (p < e && *p != '"') {
                if (*p == '\\' && p + 1 < e) p++;
                *o++ = *p++;
            }
            if (p >= e) {
                rc = sl_seterr(why, whylen, "an unterminated quoted array element");
                break;
            }
            p++;
            st->scratch.len += (size_t)(o - o0);
            if (dt->elem->kind == SL_T_ARRAY)
                rc = sl_seterr(why, whylen, "a quoted element where %s has arrays", dt->text);
            else
                rc = pc_text(st, dt->elem, o0, (size_t)(o - o0), x, why, whylen);
        } else {
            const char *b = p;
            while (p < e && *p != ',' && *p != '}') p++;
            size_t len = (size_t)(p - b);
            if (len == 4 && !strncasecmp(b, "NULL", 4)) x->isnull = true;
            else if (dt->elem->kind == SL_T_ARRAY)
                rc = sl_seterr(why, whylen, "'%.*s' where %s has arrays", (int)SL_MIN(len, 40u), b,
                               dt->text);
            else rc = pc_text(st, dt->elem, b, len, x, why, whylen);
        }
        if (rc == SL_OK && x->isnull && dt->elem->notnull)
            rc = sl_seterr(why, whylen, "a NULL element in %s", dt->text);
        if (rc == SL_OK && p < e && *p == ',') p++;
        else if (rc == SL_OK && (p >= e || *p != '}'))
            rc = sl_seterr(why, whylen, "an array element not followed by ',' or '}'");
    }
    if (rc == SL_OK && (p >= e || *p != '}')) rc = sl_seterr(why, whylen, "an unterminated array");
    if (rc == SL_OK) {
        *pp = p + 1;
        v->isnull = false;
        if (sl_nested_build(dt, el, n, NULL, &st->arena, v) != SL_OK)
            rc = sl_seterr(why, whylen, "an array too large for one row");
    }
    return rc;
}

/* PostgreSQL's text form of a value (p, n; not NUL-terminated) as dt into
 * *v; strings borrow p, bytea is decoded into the state's scratch (reserved
 * by the caller). SL_ERR with why. */
static int pc_text(pc_state *st, const sl_dtype *dt, const char *p, size_t n, sl_value *v,
                   char *why, size_t whylen)
{
    char tmp[128];
    v->isnull = false;
    if (dt->kind == SL_T_STRING) {
        v->v.s.p = p;
        v->v.s.len = (uint32_t)n;
        return SL_OK;
    }
    if (dt->kind == SL_T_BYTES) {
        if (n < 2 || p[0] != '\\' || p[1] != 'x' || n % 2)
            return sl_seterr(why, whylen, "bytea not in hex form");
        size_t k = (n - 2) / 2;
        sl_buf_reserve(&st->scratch, k + 1);
        char *o = st->scratch.p + st->scratch.len;
        for (size_t i = 0; i < k; i++) {
            int hi = hexv(p[2 + 2 * i]), lo = hexv(p[3 + 2 * i]);
            if (hi < 0 || lo < 0) return sl_seterr(why, whylen, "bytea not in hex form");
            o[i] = (char)(hi * 16 + lo);
        }
        st->scratch.len += k;
        v->v.s.p = o;
        v->v.s.len = (uint32_t)k;
        return SL_OK;
    }
    if (dt->kind == SL_T_ARRAY) {
        const char *q = p;
        return pc_array(st, dt, &q, p + n, v, 0, why, whylen);
    }
    if (n >= sizeof tmp) return sl_seterr(why, whylen, "a %s value of %zu characters", dt->text, n);
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    char *end = NULL;
    errno = 0;
    switch (dt->kind) {
    case SL_T_BOOLEAN:
        if (n != 1 || (tmp[0] != 't' && tmp[0] != 'f')) break;
        v->v.i = tmp[0] == 't';
        return SL_OK;
    case SL_T_TINYINT: case SL_T_SMALLINT: case SL_T_INT: case SL_T_BIGINT: {
        long long x = strtoll(tmp, &end, 10);
        if (errno || *end || end == tmp) break;
        if ((dt->kind == SL_T_INT && (x < INT32_MIN || x > INT32_MAX)) ||
            (dt->kind == SL_T_SMALLINT && (x < -32768 || x > 32767)) ||
            (dt->kind == SL_T_TINYINT && (x < -128 || x > 127)))
            return sl_seterr(why, whylen, "%s is out of the range of %s", tmp, dt->text);
        v->v.i = x;
        return SL_OK;
    }
    case SL_T_DOUBLE: case SL_T_FLOAT: {
        double x = strtod(tmp, &end);
        if (*end || end == tmp) break;
        v->v.d = dt->kind == SL_T_FLOAT ? (double)(float)x : x;
        return SL_OK;
    }
    case SL_T_DECIMAL: {
        sl_dec d;
        sl_dec_type t = {(uint8_t)dt->p, (uint8_t)dt->s};
        if (sl_dec_parse(tmp, n, t, &d) != SL_DEC_OK) break;
        v->v.dec.lo = d.lo;
        v->v.dec.hi = d.hi;
        return SL_OK;
    }
    case SL_T_DATE: {
        int y, m, dd;
        if (sscanf(tmp, "%d-%d-%d", &y, &m, &dd) != 3) break;
        int64_t ms;
        char ts[64];
        snprintf(ts, sizeof ts, "%04d-%02d-%02d 00:00:00", y, m, dd);
        if (kf_parse_timestamp(ts, strlen(ts), &ms) != SL_OK) break;
        v->v.i = ms / 86400000;
        return SL_OK;
    }
    case SL_T_TIME: { /* "10:00:00.123456": PostgreSQL keeps microseconds */
        int32_t ms;
        if (sl_time_parse(tmp, n, dt->p, &ms) != SL_OK) break;
        v->v.ts.ms = ms;
        v->v.ts.nano = 0;
        return SL_OK;
    }
    case SL_T_TIMESTAMP: {
        /* timestamp "2026-01-01 10:00:00.123456", timestamptz with "+00" (the
         * session is UTC, so an LTZ column's instant is that text in UTC) */
        size_t k = n;
        if (k > 6 && tmp[k - 3] == ':' && (tmp[k - 6] == '+' || tmp[k - 6] == '-')) k -= 6;
        else if (k > 3 && (tmp[k - 3] == '+' || tmp[k - 3] == '-') && isdigit((unsigned char)tmp[k - 1]))
            k -= 3;
        sl_ts ts;
        if (sl_timestamp_parse(tmp, k, dt->p, &ts) != SL_OK) break;
        v->v.ts.ms = ts.ms;
        v->v.ts.nano = ts.nano;
        return SL_OK;
    }
    default: break;
    }
    return sl_seterr(why, whylen, "'%s' is not a %s", tmp, dt->text);
}

/* ---- the snapshot ---------------------------------------------------------- */

static void pc_quoted_table(const pc_plan *pl, sl_buf *b)
{
    sl_jdbc_quote(b, pl->schema);
    sl_buf_putc(b, '.');
    sl_jdbc_quote(b, pl->table);
}

static int pc_exec(sl_op *op, PGconn *c, const char *sql, ExecStatusType want, PGresult **out)
{
    const pc_plan *pl = op->plan;
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != want) {
        char who[300];
        snprintf(who, sizeof who, "postgres-cdc source '%s'", pl->vid);
        sl_jdbc_error(c, r, who, sql, op->err, sizeof op->err);
        PQclear(r);
        return SL_ERR;
    }
    if (out) *out = r;
    else PQclear(r);
    return SL_OK;
}

/* The table, its columns, its replica identity and the server's wal_level:
 * SL_ERR with err saying what is wrong. conn: a plain connection. */
static int pc_check_table(PGconn *conn, const pc_plan *pl, char *err, size_t errlen)
{
    char who[300];
    snprintf(who, sizeof who, "postgres-cdc source '%s'", pl->vid);
    PGresult *r = PQexec(conn, "SHOW wal_level");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        sl_jdbc_error(conn, r, who, "reading wal_level", err, errlen);
        PQclear(r);
        return SL_ERR;
    }
    if (strcmp(PQgetvalue(r, 0, 0), "logical") != 0) {
        sl_seterr(err, errlen, "%s: the server's wal_level is '%s'; logical replication needs "
                  "wal_level = logical", who, PQgetvalue(r, 0, 0));
        PQclear(r);
        return SL_ERR;
    }
    PQclear(r);
    const char *params[2] = {pl->schema, pl->table};
    r = PQexecParams(conn, "SELECT c.relreplident FROM pg_class c JOIN pg_namespace n "
                     "ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2 "
                     "AND c.relkind IN ('r', 'p')", 2, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        sl_jdbc_error(conn, r, who, "reading the catalog", err, errlen);
        PQclear(r);
        return SL_ERR;
    }
    if (PQntuples(r) != 1) {
        PQclear(r);
        return sl_seterr(err, errlen, "%s: no table \"%s\".\"%s\" in database", who,
                         pl->schema, pl->table);
    }
    char ident = PQgetvalue(r, 0, 0)[0];
    PQclear(r);
    if (!pl->upsert && ident != 'f')
        return sl_seterr(err, errlen, "%s: table \"%s\".\"%s\" has no PRIMARY KEY in its "
                         "Flink table and is not REPLICA IDENTITY FULL, so its updates and "
                         "deletes carry no whole old row: ALTER TABLE ... REPLICA IDENTITY FULL, "
                         "or declare the PRIMARY KEY", who, pl->schema, pl->table);
    /* every column must exist */
    r = PQexecParams(conn, "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = "
                     "a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = "
                     "$1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped", 2, NULL,
                     params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        sl_jdbc_error(conn, r, who, "reading the columns", err, errlen);
        PQclear(r);
        return SL_ERR;
    }
    for (int i = 0; i < pl->n; i++) {
        bool found = false;
        for (int k = 0; k < PQntuples(r) && !found; k++) found = !strcmp(PQgetvalue(r, k, 0),
                                                                          pl->names[i]);
        if (!found) {
            PQclear(r);
            return sl_seterr(err, errlen, "%s: table \"%s\".\"%s\" has no column \"%s\"", who,
                             pl->schema, pl->table, pl->names[i]);
        }
    }
    PQclear(r);
    return SL_OK;
}

/* The catalog checks, the publication and the slot. */
static int pc_start(sl_op *op)
{
    const pc_plan *pl = op->plan;
    pc_state *st = op->priv;
    char who[300];
    snprintf(who, sizeof who, "postgres-cdc source '%s'", pl->vid);
    if (!(st->conn = sl_jdbc_connect(pl->conninfo, who, op->err, sizeof op->err))) return SL_ERR;
    if (pc_check_table(st->conn, pl, op->err, sizeof op->err)) return SL_ERR;
    PGresult *r;
    const char *pp[1] = {pl->pub};
    r = PQexecParams(st->conn, "SELECT 1 FROM pg_publication WHERE pubname = $1", 1, NULL, pp,
                     NULL, NULL, 0);
    bool has_pub = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    PQclear(r);
    sl_buf q = {0};
    int rc = SL_OK;
    if (!has_pub) {
        sl_buf_put(&q, "CREATE PUBLICATION ", 19);
        sl_jdbc_quote(&q, pl->pub);
        sl_buf_put(&q, " FOR ALL TABLES", 15);
        rc = pc_exec(op, st->conn, q.p, PGRES_COMMAND_OK, NULL);
        q.len = 0;
    }
    /* the slot: kept from the run a restore resumes, made anew otherwise */
    const char *sp[1] = {pl->slot};
    r = PQexecParams(st->conn, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", 1,
                     NULL, sp, NULL, NULL, 0);
    bool has_slot = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    bool active = has_slot && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    bool resume = st->restored && st->snapshot_done;
    if (rc == SL_OK && resume && !has_slot)
        rc = sl_op_fail(op, "%s: the replication slot '%s' the checkpoint resumes from is gone "
                        "(dropped?): its changes since LSN %X/%X are lost to this job", who,
                        pl->slot, (unsigned)(st->lsn >> 32), (unsigned)st->lsn);
    if (rc == SL_OK && active)
        rc = sl_op_fail(op, "%s: the replication slot '%s' is in use by another connection", who,
                        pl->slot);
    if (rc == SL_OK && !resume && has_slot) {
        /* a new start (no snapshot completed): a slot of that name left by an
         * earlier run is dropped and made again at a new consistent point */
        const char *dp[1] = {pl->slot};
        r = PQexecParams(st->conn, "SELECT pg_drop_replication_slot($1)", 1, NULL, dp, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            rc = sl_jdbc_error(st->conn, r, who, "dropping the old slot", op->err, sizeof op->err);
        PQclear(r);
    }
    if (rc == SL_OK) {
        sl_buf rci = {0};
        sl_buf_put(&rci, pl->conninfo, strlen(pl->conninfo));
        sl_buf_put(&rci, " replication='database'", 23);
        st->rconn = sl_jdbc_connect(rci.p, who, op->err, sizeof op->err);
        sl_buf_free(&rci);
        if (!st->rconn) rc = SL_ERR;
    }
    if (rc == SL_OK && !resume) {
        sl_buf_put(&q, "CREATE_REPLICATION_SLOT ", 24);
        sl_jdbc_quote(&q, pl->slot);
        sl_buf_put(&q, " LOGICAL pgoutput ", 18);
        const char *how = pl->initial ? "EXPORT_SNAPSHOT" : "NOEXPORT_SNAPSHOT";
        sl_buf_put(&q, how, strlen(how));
        r = NULL;
        rc = pc_exec(op, st->rconn, q.p, PGRES_TUPLES_OK, &r);
        if (rc == SL_OK) {
            unsigned hi, lo;
            if (sscanf(PQgetvalue(r, 0, 1), "%X/%X", &hi, &lo) != 2)
                rc = sl_op_fail(op, "%s: CREATE_REPLICATION_SLOT answered no LSN", who);
            st->lsn = ((uint64_t)hi << 32) | lo;
            if (pl->initial && !PQgetisnull(r, 0, 2))
                snprintf(st->snapname, sizeof st->snapname, "%s", PQgetvalue(r, 0, 2));
            PQclear(r);
            sl_info("cdc", "%s: slot '%s' created at %X/%X", who, pl->slot, hi, lo);
        }
        st->skip = 0;
    }
    if (rc == SL_OK && !resume && pl->initial) {
        q.len = 0;
        sl_buf_put(&q, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 47);
        rc = pc_exec(op, st->conn, q.p, PGRES_COMMAND_OK, NULL);
        q.len = 0;
        char set[200];
        snprintf(set, sizeof set, "SET TRANSACTION SNAPSHOT '%s'", st->snapname);
        if (rc == SL_OK) rc = pc_exec(op, st->conn, set, PGRES_COMMAND_OK, NULL);
        sl_buf_put(&q, "DECLARE sl_cdc CURSOR FOR SELECT ", 33);
        for (int i = 0; i < pl->n; i++) {
            if (i) sl_buf_putc(&q, ',');
            sl_jdbc_quote(&q, pl->names[i]);
        }
        sl_buf_put(&q, " FROM ", 6);
        pc_quoted_table(pl, &q);
        if (rc == SL_OK) rc = pc_exec(op, st->conn, q.p, PGRES_COMMAND_OK, NULL);
        st->phase = PC_SNAPSHOT;
    } else {
        st->phase = PC_STREAM;
    }
    sl_buf_free(&q);
    return rc;
}

/* Emit the snapshot's rows; SL_DONE when it is complete. */
static int pc_snapshot(sl_op *op)
{
    const pc_plan *pl = op->plan;
    pc_state *st = op->priv;
    char why[300];
    for (int emitted = 0; emitted < 1024;) {
        if (!st->batch || st->batch_row >= PQntuples(st->batch)) {
            bool last = st->batch && PQntuples(st->batch) < PC_FETCH;
            PQclear(st->batch);
            st->batch = NULL;
            if (last) {
                if (pc_exec(op, st->conn, "COMMIT", PGRES_COMMAND_OK, NULL)) return SL_ERR;
                return SL_DONE;
            }
            char f[64];
            snprintf(f, sizeof f, "FETCH %d FROM sl_cdc", PC_FETCH);
            if (pc_exec(op, st->conn, f, PGRES_TUPLES_OK, &st->batch)) return SL_ERR;
            st->batch_row = 0;
            continue;
        }
        int k = st->batch_row++;
        /* room for every bytea and unescaped array element at once (each at
         * most its text's length, a bytea in an array both): pointers into
         * it stay valid */
        size_t total = 64;
        for (int i = 0; i < pl->n; i++) total += 2 * (size_t)PQgetlength(st->batch, k, i) + 1;
        st->scratch.len = 0;
        sl_buf_reserve(&st->scratch, total);
        sl_arena_reset(&st->arena);
        for (int i = 0; i < pl->n; i++) {
            if (PQgetisnull(st->batch, k, i)) {
                st->vals[i].isnull = true;
                continue;
            }
            if (pc_text(st, pl->dt[i], PQgetvalue(st->batch, k, i),
                        (size_t)PQgetlength(st->batch, k, i), &st->vals[i], why, sizeof why))
                return sl_op_fail(op, "postgres-cdc source '%s': snapshot of \"%s\".\"%s\", "
                                  "column '%s': %s", pl->vid, pl->schema, pl->table,
                                  pl->names[i], why);
        }
        sl_row row = {SL_KIND_INSERT, pl->n, st->vals, SL_TS_NONE};
        emitted++;
        int rc = sl_op_emit(op, &row);
        if (rc != SL_OK) return rc;
    }
    return SL_OK;
}

/* ---- streaming ------------------------------------------------------------- */

static uint64_t be64(const uint8_t *p) { return ((uint64_t)sl_get_be32(p) << 32) | sl_get_be32(p + 4); }

static int pc_send_status(sl_op *op, bool force)
{
    pc_state *st = op->priv;
    int64_t now = sl_mono_ms();
    if (!force && now - st->last_status_ms < PC_STATUS_MS) return SL_OK;
    st->last_status_ms = now;
    uint8_t m[34];
    m[0] = 'r';
    uint64_t w = st->received, f = st->confirmed;
    /* microseconds since 2000-01-01 */
    int64_t t = (sl_now_ms() - INT64_C(946684800000)) * 1000;
    uint64_t vals[4] = {w, f, f, (uint64_t)t};
    for (int i = 0; i < 4; i++) {
        sl_put_be32(m + 1 + 8 * i, (uint32_t)(vals[i] >> 32));
        sl_put_be32(m + 5 + 8 * i, (uint32_t)vals[i]);
    }
    m[33] = 0;
    if (PQputCopyData(st->rconn, (const char *)m, sizeof m) != 1 || PQflush(st->rconn) < 0)
        return sl_op_fail(op, "postgres-cdc source '%s': sending the standby status: %s",
                          ((const pc_plan *)op->plan)->vid, PQerrorMessage(st->rconn));
    return SL_OK;
}

static int pc_start_stream(sl_op *op)
{
    const pc_plan *pl = op->plan;
    pc_state *st = op->priv;
    sl_buf q = {0};
    sl_buf_put(&q, "START_REPLICATION SLOT ", 23);
    sl_jdbc_quote(&q, pl->slot);
    char pos[200];
    snprintf(pos, sizeof pos, " LOGICAL %X/%X (proto_version '1', publication_names '",
             (unsigned)(st->lsn >> 32), (unsigned)st->lsn);
    sl_buf_put(&q, pos, strlen(pos));
    sl_jdbc_quote(&q, pl->pub);
    sl_buf_put(&q, "')", 2);
    int rc = pc_exec(op, st->rconn, q.p, PGRES_COPY_BOTH, NULL);
    sl_buf_free(&q);
    if (rc) return SL_ERR;
    if (PQsetnonblocking(st->rconn, 1))
        return sl_op_fail(op, "postgres-cdc source '%s': cannot make the connection non-blocking",
                          pl->vid);
    st->fd = PQsocket(st->rconn);
    st->received = st->lsn;
    if (st->confirmed == 0) st->confirmed = st->restored ? st->lsn : 0;
    sl_op_watch_fd(op, st->fd, POLLIN);
    sl_info("cdc", "postgres-cdc source '%s': streaming slot '%s' from %X/%X (skipping %u "
            "change%s of the first transaction)", pl->vid, pl->slot, (unsigned)(st->lsn >> 32),
            (unsigned)st->lsn, st->skip, st->skip == 1 ? "" : "s");
    return SL_OK;
}

/* A TupleData at *p (end e) into vals (output columns); old (may be NULL)
 * supplies unchanged TOASTed values. */
static int pc_tuple(sl_op *op, const uint8_t **pp, const uint8_t *e, sl_value *vals,
                    const sl_value *old, char *why, size_t whylen)
{
    const pc_plan *pl = op->plan;
    pc_state *st = op->priv;
    const uint8_t *p = *pp;
    if (e - p < 2) return sl_seterr(why, whylen, "a short tuple");
    int n = (int)((p[0] << 8) | p[1]);
    p += 2;
    for (int i = 0; i < pl->n; i++) vals[i].isnull = true;
    for (int c = 0; c < n; c++) {
        if (p >= e) return sl_seterr(why, whylen, "a short tuple");
        int slot = c < st->wire_n ? st->wire_slot[c] : -1;
        char kind = (char)*p++;
        if (kind == 'n') continue;
        if (kind == 'u') {
            if (slot >= 0) {
                if (!old || old[slot].isnull)
                    return sl_seterr(why, whylen, "column '%s' is an unchanged TOASTed value "
                                     "that the change does not carry (REPLICA IDENTITY FULL "
                                     "carries it)", pl->names[slot]);
                vals[slot] = old[slot];
            }
            continue;
        }
        if (kind != 't' || e - p < 4) return sl_seterr(why, whylen, "a tuple column of kind '%c'", kind);
        uint32_t len = sl_get_be32(p);
        p += 4;
        if ((size_t)(e - p) < len) return sl_seterr(why, whylen, "a short tuple");
        if (slot >= 0 && pc_text(st, pl->dt[slot], (const char *)p, len, &vals[slot], why, whylen)) {
            char tmp[300];
            snprintf(tmp, sizeof tmp, "column '%s': %s", pl->names[slot], why);
            return sl_seterr(why, whylen, "%s", tmp);
        }
        p += len;
    }
    *pp = p;
    return SL_OK;
}

/* Do the primary key's columns differ between old and new? */
static bool pc_key_changed(const pc_plan *pl, const sl_value *old, const sl_value *new_)
{
    for (int i = 0; i < pl->npk; i++)
        if (sl_value_cmp(pl->dt[pl->pk[i]], &old[pl->pk[i]], &new_[pl->pk[i]]) != 0) return true;
    return false;
}

/* One pgoutput message. */
static int pc_message(sl_op *op, const uint8_t *p, size_t n, int *emit_rc)
{
    const pc_plan *pl = op->plan;
    pc_state *st = op->priv;
    const uint8_t *e = p + n;
    char why[400];
    if (n < 1) return SL_OK;
    char type = (char)p[0];
    p++;
    switch (type) {
    case 'B':
        st->in_txn = true;
        st->txn_changes = 0;
        return SL_OK;
    case 'C':
        if (e - p < 25) goto short_msg;
        st->lsn = be64(p + 9); /* the transaction's end */
        st->in_txn = false;
        st->txn_changes = 0;
        st->skip = 0;
        return SL_OK;
    case 'R': {
        if (e - p < 4) goto short_msg;
        uint32_t relid = sl_get_be32(p);
        p += 4;
        const char *ns = (const char *)p;
        const uint8_t *z = memchr(p, 0, (size_t)(e - p));
        if (!z) goto short_msg;
        const char *rel = (const char *)z + 1;
        z = memchr(z + 1, 0, (size_t)(e - z - 1));
        if (!z || e - z < 4) goto short_msg;
        if (strcmp(ns, pl->schema) || strcmp(rel, pl->table)) return SL_OK;
        p = z + 1 + 1; /* replica identity */
        int nc = (int)((p[0] << 8) | p[1]);
        p += 2;
        st->relid = relid;
        free(st->wire_slot);
        st->wire_slot = sl_calloc((size_t)nc + 1, sizeof *st->wire_slot);
        st->wire_n = nc;
        for (int c = 0; c < nc; c++) {
            if (p >= e) goto short_msg;
            p++; /* flags */
            const char *name = (const char *)p;
            z = memchr(p, 0, (size_t)(e - p));
            if (!z || e - z < 9) goto short_msg;
            st->wire_slot[c] = -1;
            for (int i = 0; i < pl->n; i++)
                if (!strcmp(pl->names[i], name)) st->wire_slot[c] = i;
            p = z + 1 + 8; /* type oid, typmod */
        }
        for (int i = 0; i < pl->n; i++) {
            bool found = false;
            for (int c = 0; c < nc; c++) found |= st->wire_slot[c] == i;
            if (!found)
                return sl_op_fail(op, "postgres-cdc source '%s': table \"%s\".\"%s\" no longer "
                                  "has column \"%s\"", pl->vid, pl->schema, pl->table, pl->names[i]);
        }
        return SL_OK;
    }
    case 'I': case 'U': case 'D': {
        if (e - p < 5) goto short_msg;
        uint32_t relid = sl_get_be32(p);
        p += 4;
        if (relid != st->relid || st->relid == 0) return SL_OK;
        st->txn_changes++;
        if (st->txn_changes <= st->skip) return SL_OK; /* emitted before the restore */
        st->scratch.len = 0;
        sl_buf_reserve(&st->scratch, 2 * n + 16); /* as for the snapshot's rows */
        sl_arena_reset(&st->arena);
        bool has_old = false;
        if (type != 'I' && (*p == 'K' || *p == 'O')) {
            p++;
            if (pc_tuple(op, &p, e, st->old, NULL, why, sizeof why)) goto bad;
            has_old = true;
        }
        if (type != 'D') {
            if (p >= e || *p != 'N') goto short_msg;
            p++;
            if (pc_tuple(op, &p, e, st->vals, has_old ? st->old : NULL, why, sizeof why)) goto bad;
        }
        int rc = SL_OK, r2;
        if (type == 'I') {
            sl_row row = {SL_KIND_INSERT, pl->n, st->vals, SL_TS_NONE};
            rc = sl_op_emit(op, &row);
        } else if (type == 'U') {
            if (!pl->upsert) {
                if (!has_old)
                    return sl_op_fail(op, "postgres-cdc source '%s': an update of \"%s\".\"%s\" "
                                      "without its old row: the table must be REPLICA IDENTITY "
                                      "FULL (or declare a PRIMARY KEY)", pl->vid, pl->schema,
                                      pl->table);
                sl_row before = {SL_KIND_UPDATE_BEFORE, pl->n, st->old, SL_TS_NONE};
                rc = sl_op_emit(op, &before);
            } else if (has_old && pc_key_changed(pl, st->old, st->vals)) {
                /* the key changed: the old key's row is gone */
                sl_row del = {SL_KIND_DELETE, pl->n, st->old, SL_TS_NONE};
                rc = sl_op_emit(op, &del);
            }
            sl_row after = {SL_KIND_UPDATE_AFTER, pl->n, st->vals, SL_TS_NONE};
            r2 = sl_op_emit(op, &after);
            if (rc == SL_OK) rc = r2;
        } else {
            if (!has_old) goto short_msg;
            sl_row del = {SL_KIND_DELETE, pl->n, st->old, SL_TS_NONE};
            rc = sl_op_emit(op, &del);
        }
        if (rc == SL_ERR) return SL_ERR;
        if (rc != SL_OK) *emit_rc = rc;
        return SL_OK;
    }
    case 'T':
        sl_warn("cdc", "postgres-cdc source '%s': a TRUNCATE in the stream is ignored (as Flink "
                "CDC does)", pl->vid);
        return SL_OK;
    default: /* Y type, O origin, M message */
        return SL_OK;
    }
short_msg:
    return sl_op_fail(op, "postgres-cdc source '%s': a short or malformed pgoutput '%c' "
                      "message at %X/%X", pl->vid, type, (unsigned)(st->received >> 32),
                      (unsigned)st->received);
bad:
    return sl_op_fail(op, "postgres-cdc source '%s': a change of \"%s\".\"%s\" at %X/%X: %s",
                      pl->vid, pl->schema, pl->table, (unsigned)(st->received >> 32),
                      (unsigned)st->received, why);
}

static int pc_stream(sl_op *op)
{
    const pc_plan *pl = op->plan;
    pc_state *st = op->priv;
    if (!PQconsumeInput(st->rconn))
        return sl_op_fail(op, "postgres-cdc source '%s': the replication connection: %s", pl->vid,
                          PQerrorMessage(st->rconn));
    int emit_rc = SL_OK;
    for (int k = 0; k < 1024 && emit_rc == SL_OK; k++) {
        char *buf = NULL;
        int n = PQgetCopyData(st->rconn, &buf, 1);
        if (n == 0) break;
        if (n == -1) {
            PGresult *r = PQgetResult(st->rconn);
            char msg[300];
            sl_jdbc_error(st->rconn, r, "replication", "ended", msg, sizeof msg);
            PQclear(r);
            return sl_op_fail(op, "postgres-cdc source '%s': the server ended replication: %s",
                              pl->vid, msg);
        }
        if (n < 0)
            return sl_op_fail(op, "postgres-cdc source '%s': the replication connection: %s",
                              pl->vid, PQerrorMessage(st->rconn));
        const uint8_t *m = (const uint8_t *)buf;
        int rc = SL_OK;
        if (m[0] == 'w' && n >= 25) {
            uint64_t start = be64(m + 1);
            if (start > st->received) st->received = start;
            rc = pc_message(op, m + 25, (size_t)n - 25, &emit_rc);
        } else if (m[0] == 'k' && n >= 18) {
            uint64_t end = be64(m + 1);
            if (!st->in_txn && end > st->received) st->received = end;
            if (m[17]) rc = pc_send_status(op, true);
        }
        PQfreemem(buf);
        if (rc) return SL_ERR;
    }
    if (pc_send_status(op, false)) return SL_ERR;
    if (emit_rc != SL_OK) {
        op->wake_at_ms = sl_mono_ms();
        return emit_rc;
    }
    op->wake_at_ms = sl_mono_ms() + 1000;
    return SL_AGAIN;
}

/* ---- the operator ---------------------------------------------------------- */

static int pc_open(sl_op *op)
{
    const pc_plan *pl = op->plan;
    pc_state *st = sl_calloc(1, sizeof *st);
    sl_arena_init(&st->arena, PC_ARENA_LIMIT);
    op->priv = st;
    st->fd = -1;
    st->vals = sl_calloc((size_t)pl->n + 1, sizeof *st->vals);
    st->old = sl_calloc((size_t)pl->n + 1, sizeof *st->old);
    if (op->subtask > 0)
        return sl_op_fail(op, "postgres-cdc source '%s' runs at parallelism 1 (one replication "
                          "slot), not %d", pl->vid, op->parallelism);
    return SL_OK;
}

static int pc_run(sl_op *op)
{
    pc_state *st = op->priv;
    if (st->phase == PC_START && pc_start(op)) return SL_ERR;
    if (st->phase == PC_SNAPSHOT) {
        int rc = pc_snapshot(op);
        if (rc != SL_DONE) {
            if (rc == SL_AGAIN) op->wake_at_ms = sl_mono_ms();
            return rc;
        }
        st->phase = PC_STREAM;
        st->snapshot_done = true;
        sl_info("cdc", "postgres-cdc source '%s': snapshot done",
                ((const pc_plan *)op->plan)->vid);
    }
    if (st->fd < 0) {
        st->snapshot_done = true;
        if (pc_start_stream(op)) return SL_ERR;
    }
    return pc_stream(op);
}

static int pc_decline(void *arg, char *err, size_t errlen)
{
    sl_seterr(err, errlen, "postgres-cdc source '%s' is taking its initial snapshot (a checkpoint "
              "cannot hold its place in it)", (const char *)arg);
    free(arg);
    return SL_ERR;
}

static int pc_snapshot_state(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    pc_state *st = op->priv;
    const pc_plan *pl = op->plan;
    *blob = NULL;
    *len = 0;
    if (op->subtask > 0) return SL_OK;
    if (st->phase == PC_SNAPSHOT) return sl_op_defer(op, pc_decline, sl_strdup(pl->vid));
    uint8_t *b = malloc(21);
    memcpy(b, pc_magic, 4);
    b[4] = st->snapshot_done ? 1 : 0; /* streaming, or resuming a stream */
    sl_put_be32(b + 5, (uint32_t)(st->lsn >> 32));
    sl_put_be32(b + 9, (uint32_t)st->lsn);
    sl_put_be32(b + 13, st->in_txn ? st->txn_changes : st->skip);
    sl_put_be32(b + 17, 0);
    *blob = b;
    *len = 21;
    if (b[4]) {
        if (st->npend == (int)SL_ARRAY_LEN(st->pend)) {
            memmove(st->pend, st->pend + 1, sizeof st->pend[0] * (SL_ARRAY_LEN(st->pend) - 1));
            st->npend--;
        }
        st->pend[st->npend++] = (pc_pending){cpid, st->lsn};
    }
    return SL_OK;
}

static int pc_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    pc_state *st = op->priv;
    for (int i = 0; i < nblobs; i++) {
        const uint8_t *b = blobs[i];
        if (lens[i] == 0) continue;
        if (lens[i] != 21 || memcmp(b, pc_magic, 4))
            return sl_op_fail(op, "postgres-cdc source '%s': the checkpoint's state is not this "
                              "source's", ((const pc_plan *)op->plan)->vid);
        st->restored = true;
        st->snapshot_done = b[4] != 0;
        st->lsn = ((uint64_t)sl_get_be32(b + 5) << 32) | sl_get_be32(b + 9);
        st->skip = sl_get_be32(b + 13);
    }
    if (st->restored && !st->snapshot_done) st->restored = false; /* start anew */
    return SL_OK;
}

static int pc_checkpoint_complete(sl_op *op, int64_t cpid)
{
    pc_state *st = op->priv;
    int k = -1;
    for (int i = 0; i < st->npend; i++)
        if (st->pend[i].cpid <= cpid) k = i;
    if (k < 0) return SL_OK;
    if (st->pend[k].lsn > st->confirmed) st->confirmed = st->pend[k].lsn;
    memmove(st->pend, st->pend + k + 1, sizeof st->pend[0] * (size_t)(st->npend - k - 1));
    st->npend -= k + 1;
    return st->rconn && st->fd >= 0 ? pc_send_status(op, true) : SL_OK;
}

/* debezium.slot.drop.on.stop: drop the slot once the server's walsender of
 * the replication connection just closed has let go of it (until then the
 * drop fails with "is active"), for at most PC_DROP_WAIT_MS; a slot that
 * cannot be dropped is logged, never ignored in silence. */
#define PC_DROP_WAIT_MS 10000
static void pc_drop_slot(PGconn *c, const pc_plan *pl)
{
    const char *dp[1] = {pl->slot};
    int64_t until = sl_mono_ms() + PC_DROP_WAIT_MS;
    for (;;) {
        PGresult *r = PQexecParams(c, "SELECT pg_drop_replication_slot($1)", 1, NULL, dp, NULL,
                                   NULL, 0);
        bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        /* 55006 object_in_use: the walsender still holds it */
        bool busy = !ok && state && !strcmp(state, "55006") && sl_mono_ms() < until;
        if (!ok && !busy)
            sl_warn("cdc", "postgres-cdc source '%s': cannot drop replication slot '%s': %s", pl->vid,
                    pl->slot, PQresultErrorMessage(r));
        PQclear(r);
        if (!busy) return;
        sl_sleep_ms(20);
    }
}

static void pc_close(sl_op *op)
{
    pc_state *st = op->priv;
    if (!st) return;
    const pc_plan *pl = op->plan;
    if (st->fd >= 0) sl_op_unwatch_fd(op, st->fd);
    PQclear(st->batch);
    if (st->rconn) PQfinish(st->rconn);
    if (st->conn && pl->drop_slot && op->subtask == 0) pc_drop_slot(st->conn, pl);
    if (st->conn) PQfinish(st->conn);
    free(st->wire_slot);
    free(st->vals);
    free(st->old);
    sl_buf_free(&st->scratch);
    sl_arena_free(&st->arena);
    for (int d = 0; d <= PC_ARRAY_DEPTH; d++) free(st->arr_el[d]);
    free(st);
    op->priv = NULL;
}

/* At submission (the JobManager's REST thread): the server, the table and
 * its columns, so a bad host, credentials, table or column refuses the job
 * with the server's message. */
static int pc_check_job(const sl_vertex *v, const void *plan, const sl_job_check *jc, char *err,
                        size_t errlen)
{
    const pc_plan *pl = plan;
    if (!pl) return SL_OK;
    char who[300];
    snprintf(who, sizeof who, "postgres-cdc source '%s'", pl->vid);
    PGconn *c = sl_jdbc_connect(pl->conninfo, who, err, errlen);
    if (!c) return SL_ERR;
    int rc = pc_check_table(c, pl, err, errlen);
    PQfinish(c);
    return rc;
}

static const sl_op_option pc_options[] = {
    {"hostname", SL_CT_STRING, NULL, NULL, "The PostgreSQL server's host (required)."},
    {"port", SL_CT_STRING, "5432", NULL, "Its port."},
    {"username", SL_CT_STRING, NULL, NULL, "The user (required; needs REPLICATION)."},
    {"password", SL_CT_STRING, NULL, NULL, "The password."},
    {"database-name", SL_CT_STRING, NULL, NULL, "The database (required)."},
    {"schema-name", SL_CT_STRING, "public", NULL, "The table's schema."},
    {"table-name", SL_CT_STRING, NULL, NULL, "The table (required)."},
    {"slot.name", SL_CT_STRING, NULL, NULL,
     "The logical replication slot (required): created when absent, kept when the job ends."},
    {"decoding.plugin.name", SL_CT_STRING, "pgoutput", NULL, "pgoutput (the only one)."},
    {"scan.startup.mode", SL_CT_STRING, "initial", NULL,
     "initial (a snapshot, then the changes) or latest-offset (the changes from the start)."},
    {"debezium.publication.name", SL_CT_STRING, "dbz_publication", NULL,
     "The publication pgoutput reads (created FOR ALL TABLES when absent)."},
    {"debezium.slot.drop.on.stop", SL_CT_STRING, "false", NULL,
     "true: drop the slot when the source closes."},
    {"primary-key", SL_CT_JSON, NULL, NULL,
     "The table's PRIMARY KEY (set by the SQL planner): upserts through changelog-normalize."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_postgres_cdc = {
    .abi = SL_OP_ABI_VERSION,
    .name = "postgres-cdc",
    .flags = SL_OPF_SOURCE,
    .options = pc_options,
    .plan = pc_plan_new,
    .plan_free = pc_plan_free,
    .check_job = pc_check_job,
    .open = pc_open,
    .run = pc_run,
    .close = pc_close,
    .snapshot_state = pc_snapshot_state,
    .restore_state = pc_restore,
    .checkpoint_complete = pc_checkpoint_complete,
};
