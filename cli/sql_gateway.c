/*
 * sql_gateway.c -- `sluice sql-gateway`: Flink's SQL Gateway REST API on
 * Sluice, so tools written for Flink's gateway (and `sluice sql --endpoint`)
 * submit SQL over HTTP.
 *
 * Each session holds a SQL session of its own (sql/sql.h: catalog and SET
 * options); a statement runs at once as an operation, planned here and
 * submitted to the JobManager over its REST API like `sluice sql` does. A
 * query's rows are read from the JobManager (GET /jobs/:id/results) as the
 * client fetches them, so the gateway holds one page per operation: tokens
 * follow Flink's protocol (fetching token t+1 acknowledges token t's rows;
 * token t may be fetched again until then).
 *
 * Served with libmicrohttpd on sql-gateway.endpoint.rest.address:port
 * (127.0.0.1:8083), under /v1/ and /v2/ (and without a version). One lock
 * serializes requests: a statement plans in microseconds and everything
 * else waits on the JobManager anyway. At most MAX_SESSIONS sessions of
 * MAX_OPS operations each; a session idle for sql-gateway.session.idle-timeout
 * (10 min) is closed, cancelling its running queries.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <jansson.h>
#include <microhttpd.h>
#include "http_reply.h"
#include "http_server.h"
#include <event2/http.h>

#include "cli.h"
#include "dtype.h"
#include "expr.h"
#include "parse.h"
#include "sql.h"
#include "text.h"
#include "temporal.h"


#define MAX_BODY (1u << 20)
#define MAX_SESSIONS 1000
#define MAX_OPS 1000
#define PAGE_ROWS 512

enum { OP_RUNNING, OP_FINISHED, OP_ERROR, OP_CANCELED };
static const char *const op_status[] = {"RUNNING", "FINISHED", "ERROR", "CANCELED"};

typedef struct gw_op {
    char id[37];
    int status;
    char *error;          /* OP_ERROR: why */
    json_t *columns;      /* ColumnInfo[] */
    int ncols;
    char **types;         /* Sluice type names, for JSON values */
    int query;            /* a SELECT reading the JobManager's results */
    int content;          /* resultKind SUCCESS_WITH_CONTENT */
    char jid[40];         /* the job of an INSERT or a SELECT, or "" */
    json_t *rows;         /* not a query: every row, [["+I", "v"], ...] */
    /* a query's paging */
    uint64_t next_token;  /* the token the next JobManager read serves */
    uint64_t jm_offset;   /* JobManager token of the first row not yet handed out */
    int have_last;
    uint64_t last_token;
    json_t *last_rows;    /* the page of last_token */
    struct gw_op *next;
} gw_op;

typedef struct gw_session {
    char id[37];
    char *name;
    sl_sql_session *s;
    int64_t last_ms;
    gw_op *ops;
    int nops;
    struct gw_session *next;
} gw_session;

typedef struct gw {
    pthread_mutex_t mu;
    sl_cli_http *jm;
    gw_session *sessions;
    int nsessions;
    int64_t idle_ms;
} gw;

/* a handler's answer (lib/http_reply.h) */
typedef sl_reply reply;
#define reply_json sl_reply_json
#define reply_err sl_reply_err

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void new_uuid(char out[37])
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0) close(fd);
    if (got != (ssize_t)sizeof b) { /* never expected; still unique enough per process */
        static unsigned long long ctr;
        unsigned long long x = (unsigned long long)now_ms() ^ (++ctr << 40);
        for (int i = 0; i < 16; i++) b[i] = (unsigned char)(x >> (8 * (i % 8))) ^ (unsigned char)i;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

/* ---- the JobManager ------------------------------------------------------- */

static json_t *jm_call(gw *g, const char *method, const char *uri, const char *body, char *err,
                       size_t errlen)
{
    sl_cli_response resp;
    if (sl_cli_http_request(g->jm, method, uri, body, &resp, err, errlen) != SL_OK) return NULL;
    json_t *j = NULL;
    if (resp.status < 200 || resp.status > 299) {
        char *text = sl_cli_error_text(resp.status, resp.body, resp.len);
        size_t n = strlen(text);
        while (n && text[n - 1] == '\n') text[--n] = '\0';
        snprintf(err, errlen, "%s", !strncmp(text, "Error: ", 7) ? text + 7 : text);
        free(text);
    } else {
        json_error_t je;
        j = resp.len ? json_loadb(resp.body, resp.len, 0, &je) : json_object();
        if (!j) snprintf(err, errlen, "the JobManager's answer to %s %s is not JSON", method, uri);
    }
    sl_cli_response_clear(&resp);
    return j;
}

/* ---- operations ------------------------------------------------------------ */

/* Flink's LogicalType JSON (its gateway's LogicalTypeJsonSerializer
 * layout) of a type descriptor: "type" the type root's name, "nullable",
 * then per root "length"; "precision" and "scale"; "precision" of a TIME or
 * TIMESTAMP; an interval's "precision", "fractionalPrecision" and
 * "resolution"; "elementType"; "keyType" and "valueType"; "fields" of
 * {"name", "fieldType"}. */
static json_t *dtype_json(const sl_dtype *dt)
{
    static const char *const ym[] = {"YEAR", "YEAR_TO_MONTH", "MONTH"};
    static const char *const dts[] = {"DAY", "DAY_TO_HOUR", "DAY_TO_MINUTE", "DAY_TO_SECOND",
                                      "HOUR", "HOUR_TO_MINUTE", "HOUR_TO_SECOND", "MINUTE",
                                      "MINUTE_TO_SECOND", "SECOND"};
    const char *root = "NULL";
    switch (dt->kind) {
    case SL_T_NULL: return json_pack("{s:s}", "type", "NULL");
    case SL_T_BOOLEAN: root = "BOOLEAN"; break;
    case SL_T_TINYINT: root = "TINYINT"; break;
    case SL_T_SMALLINT: root = "SMALLINT"; break;
    case SL_T_INT: root = "INTEGER"; break;
    case SL_T_BIGINT: root = "BIGINT"; break;
    case SL_T_FLOAT: root = "FLOAT"; break;
    case SL_T_DOUBLE: root = "DOUBLE"; break;
    case SL_T_DATE: root = "DATE"; break;
    case SL_T_DECIMAL: root = "DECIMAL"; break;
    case SL_T_STRING: root = dt->variant == SL_DV_CHAR ? "CHAR" : "VARCHAR"; break;
    case SL_T_BYTES: root = dt->variant == SL_DV_BINARY ? "BINARY" : "VARBINARY"; break;
    case SL_T_TIME: root = "TIME_WITHOUT_TIME_ZONE"; break;
    case SL_T_TIMESTAMP:
        root = dt->variant == SL_DV_LTZ ? "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
                                        : "TIMESTAMP_WITHOUT_TIME_ZONE";
        break;
    case SL_T_INTERVAL_YM: root = "INTERVAL_YEAR_MONTH"; break;
    case SL_T_INTERVAL_DT: root = "INTERVAL_DAY_TIME"; break;
    case SL_T_ARRAY: root = "ARRAY"; break;
    case SL_T_MULTISET: root = "MULTISET"; break;
    case SL_T_MAP: root = "MAP"; break;
    case SL_T_ROW: root = "ROW"; break;
    }
    json_t *j = json_pack("{s:s,s:b}", "type", root, "nullable", !dt->notnull);
    switch (dt->kind) {
    case SL_T_STRING:
    case SL_T_BYTES: json_object_set_new(j, "length", json_integer(dt->p)); break;
    case SL_T_DECIMAL:
        json_object_set_new(j, "precision", json_integer(dt->p));
        json_object_set_new(j, "scale", json_integer(dt->s));
        break;
    case SL_T_TIME:
    case SL_T_TIMESTAMP: json_object_set_new(j, "precision", json_integer(dt->p)); break;
    case SL_T_INTERVAL_YM:
        json_object_set_new(j, "precision", json_integer(dt->p));
        json_object_set_new(j, "resolution", json_string(
            dt->variant >= SL_DV_YEAR && dt->variant <= SL_DV_MONTH ? ym[dt->variant - SL_DV_YEAR]
                                                                     : "YEAR_TO_MONTH"));
        break;
    case SL_T_INTERVAL_DT:
        json_object_set_new(j, "precision", json_integer(dt->p));
        json_object_set_new(j, "fractionalPrecision", json_integer(dt->s));
        json_object_set_new(j, "resolution", json_string(
            dt->variant >= SL_DV_DAY && dt->variant <= SL_DV_SECOND ? dts[dt->variant - SL_DV_DAY]
                                                                    : "DAY_TO_SECOND"));
        break;
    case SL_T_ARRAY:
    case SL_T_MULTISET: json_object_set_new(j, "elementType", dtype_json(dt->elem)); break;
    case SL_T_MAP:
        json_object_set_new(j, "keyType", dtype_json(dt->elem));
        json_object_set_new(j, "valueType", dtype_json(dt->val));
        break;
    case SL_T_ROW: {
        json_t *fs = json_array();
        for (int i = 0; i < dt->nfields; i++)
            json_array_append_new(fs, json_pack("{s:s,s:o}", "name", dt->names[i], "fieldType",
                                                dtype_json(dt->ftypes[i])));
        json_object_set_new(j, "fields", fs);
        break;
    }
    default: break;
    }
    return j;
}

/* The LogicalType JSON of a column's type text (DESCRIBE's form). A bare
 * TIMESTAMP / TIMESTAMP_LTZ column of a query is TIMESTAMP(3), as in
 * Sluice's rows. */
static json_t *logical_type(const char *t)
{
    const sl_dtype *dt = NULL;
    char *bare = NULL;
    if (!strcmp(t, "TIMESTAMP") || !strcmp(t, "TIMESTAMP_LTZ"))
        t = bare = sl_sprintf("%s(3)", t);
    if (sl_dtype_parse(t, &dt, NULL, 0) != SL_OK) dt = NULL;
    free(bare);
    if (dt) return dtype_json(dt);
    return json_pack("{s:s,s:b}", "type", t, "nullable", 1);
}

/* Is it a TIMESTAMP_LTZ(p) type name? */
static int is_ltz_type(const char *type)
{
    return !strncmp(type, "TIMESTAMP_LTZ", 13) || strstr(type, "WITH LOCAL TIME ZONE") != NULL;
}

/* A MAP whose keys are no character string, in dt at any depth (Flink's JSON
 * converters refuse them), or NULL. */
static const sl_dtype *nonstring_map_key(const sl_dtype *dt)
{
    if (!dt) return NULL;
    if (dt->kind == SL_T_MAP && dt->elem->kind != SL_T_STRING) return dt;
    const sl_dtype *m = NULL;
    if (dt->kind == SL_T_MAP) m = nonstring_map_key(dt->val);
    else if (dt->kind == SL_T_ARRAY || dt->kind == SL_T_MULTISET) m = nonstring_map_key(dt->elem);
    for (int i = 0; !m && dt->kind == SL_T_ROW && i < dt->nfields; i++)
        m = nonstring_map_key(dt->ftypes[i]);
    return m;
}

static void set_columns(gw_op *op, int n, char *const *names, char *const *types)
{
    op->columns = json_array();
    op->ncols = n;
    op->types = sl_calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++) {
        op->types[i] = sl_strdup(types[i]);
        json_array_append_new(op->columns, json_pack("{s:s,s:o,s:n}", "name", names[i],
                                                     "logicalType", logical_type(types[i]),
                                                     "comment"));
    }
}

/* A single-column text result ("result", "job id", ...). */
static void text_result(gw_op *op, const char *column, const char *const *vals, int n)
{
    char *names[1] = {(char *)column}, *types[1] = {(char *)"STRING"};
    set_columns(op, 1, names, types);
    op->rows = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(op->rows, json_pack("[s,s]", "+I", vals[i]));
}

static void op_free(gw_op *op)
{
    json_decref(op->columns);
    json_decref(op->rows);
    json_decref(op->last_rows);
    for (int i = 0; i < op->ncols; i++) free(op->types[i]);
    free(op->types);
    free(op->error);
    free(op);
}

static void op_fail(gw_op *op, const char *why)
{
    op->status = OP_ERROR;
    free(op->error);
    op->error = sl_strdup(why);
}

static char *submit_job(gw *g, const sl_sql_result *r, char *err, size_t errlen)
{
    char *uri;
    if (r->savepoint) {
        char *enc = evhttp_uriencode(r->savepoint, -1, 0);
        uri = sl_sprintf("/jobs?savepointPath=%s%s", enc ? enc : "",
                         r->allow_nonrestored ? "&allowNonRestoredState=true" : "");
        free(enc);
    } else {
        uri = sl_strdup("/jobs");
    }
    json_t *j = jm_call(g, "POST", uri, r->job, err, errlen);
    free(uri);
    if (!j) return NULL;
    const char *jid = json_string_value(json_object_get(j, "jobid"));
    char *out = jid ? sl_strdup(jid) : NULL;
    if (!out) sl_seterr(err, errlen, "unexpected answer to POST /jobs: no \"jobid\"");
    json_decref(j);
    return out;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* STOP JOB: a cancel, or stop-with-savepoint and the savepoint's path. */
static void stop_job(gw *g, gw_op *op, const sl_sql_result *r)
{
    char uri[160], err[1024];
    if (!r->with_savepoint && !r->drain) {
        snprintf(uri, sizeof uri, "/jobs/%s?mode=cancel", r->jobid);
        json_t *j = jm_call(g, "PATCH", uri, NULL, err, sizeof err);
        if (!j) return op_fail(op, err);
        json_decref(j);
        const char *ok[] = {"OK"};
        text_result(op, "result", ok, 1);
        return;
    }
    json_t *req = json_object();
    if (r->target_dir) json_object_set_new(req, "targetDirectory", json_string(r->target_dir));
    json_object_set_new(req, "drain", json_boolean(r->drain));
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    snprintf(uri, sizeof uri, "/jobs/%s/stop", r->jobid);
    json_t *resp = jm_call(g, "POST", uri, body, err, sizeof err);
    free(body);
    if (!resp) return op_fail(op, err);
    const char *trig = json_string_value(json_object_get(resp, "request-id"));
    if (!trig) {
        json_decref(resp);
        return op_fail(op, "unexpected answer to POST /jobs/:jobid/stop: no \"request-id\"");
    }
    snprintf(uri, sizeof uri, "/jobs/%s/savepoints/%s", r->jobid, trig);
    json_decref(resp);
    for (int64_t until = now_ms() + 600000; now_ms() < until;) {
        json_t *st = jm_call(g, "GET", uri, NULL, err, sizeof err);
        if (!st) return op_fail(op, err);
        const char *loc;
        char *failure = NULL;
        int rc = sl_cli_async_status(st, &loc, &failure);
        if (rc == SL_OK) {
            const char *v[] = {loc ? loc : ""};
            text_result(op, "savepoint path", v, 1);
            json_decref(st);
            return;
        }
        json_decref(st);
        if (rc == SL_ERR) {
            op_fail(op, failure ? failure : "the savepoint failed");
            free(failure);
            return;
        }
        sleep_ms(100);
    }
    op_fail(op, "the savepoint did not complete within 10 minutes");
}

static void show_jobs(gw *g, gw_op *op)
{
    char err[1024];
    json_t *ov = jm_call(g, "GET", "/jobs/overview", NULL, err, sizeof err);
    if (!ov) return op_fail(op, err);
    char *names[] = {"job id", "job name", "status", "start time"};
    char *types[] = {"STRING", "STRING", "STRING", "STRING"};
    set_columns(op, 4, names, types);
    op->rows = json_array();
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(ov, "jobs"), i, j) {
        long long start = (long long)json_integer_value(json_object_get(j, "start-time"));
        char when[64] = "";
        if (start > 0) sl_ts_text(when, sizeof when, start, SL_TS_ISO);
        const char *id = json_string_value(json_object_get(j, "jid"));
        const char *name = json_string_value(json_object_get(j, "name"));
        const char *state = json_string_value(json_object_get(j, "state"));
        json_array_append_new(op->rows, json_pack("[s,s,s,s,s]", "+I", id ? id : "",
                                                  name ? name : "", state ? state : "", when));
    }
    json_decref(ov);
}

/* Run one statement as operation op. */
static void run_statement(gw *g, gw_session *se, gw_op *op, const char *text)
{
    sl_sql_result r;
    char err[2048];
    op->status = OP_FINISHED;
    if (sl_sql_execute(se->s, text, strlen(text), 1, 1, &r, err, sizeof err) != SL_OK)
        return op_fail(op, err);
    /* user functions' objects travel with the job (cli/ship.c) */
    if ((r.kind == SL_SQL_JOB || r.kind == SL_SQL_QUERY) &&
        sl_cli_ship_functions(g->jm, &r.job, err, sizeof err) != SL_OK) {
        sl_sql_result_clear(&r);
        return op_fail(op, err);
    }
    switch (r.kind) {
    case SL_SQL_OK:
    case SL_SQL_NONE: {
        const char *ok[] = {"OK"};
        text_result(op, "result", ok, 1);
        break;
    }
    case SL_SQL_TEXT: /* SHOW, DESCRIBE, SET, EXPLAIN: Flink's result sets */
        if (r.ncols > 0) {
            set_columns(op, r.ncols, r.col_names, r.col_types);
            op->rows = json_array();
            for (int i = 0; i < r.nrows; i++) {
                json_t *row = json_array();
                json_array_append_new(row, json_string("+I"));
                for (int c = 0; c < r.ncols; c++) {
                    const char *v = r.cells[(size_t)i * (size_t)r.ncols + (size_t)c];
                    json_array_append_new(row, v ? json_string(v) : json_null());
                }
                json_array_append_new(op->rows, row);
            }
        } else {
            size_t n = strlen(r.text);
            while (n && r.text[n - 1] == '\n') r.text[--n] = '\0';
            const char *v[] = {r.text};
            text_result(op, "result", v, 1);
        }
        op->content = 1;
        break;
    case SL_SQL_JOB: {
        char *jid = submit_job(g, &r, err, sizeof err);
        if (!jid) {
            op_fail(op, err);
            break;
        }
        snprintf(op->jid, sizeof op->jid, "%s", jid);
        const char *v[] = {jid};
        text_result(op, "job id", v, 1);
        op->content = 1;
        free(jid);
        break;
    }
    case SL_SQL_QUERY: {
        char *jid = submit_job(g, &r, err, sizeof err);
        if (!jid) {
            op_fail(op, err);
            break;
        }
        snprintf(op->jid, sizeof op->jid, "%s", jid);
        free(jid);
        set_columns(op, r.ncols, r.col_names, r.col_types);
        op->query = 1;
        op->content = 1;
        op->status = OP_RUNNING;
        break;
    }
    case SL_SQL_STOP_JOB: stop_job(g, op, &r); break;
    case SL_SQL_SHOW_JOBS:
        show_jobs(g, op);
        op->content = 1;
        break;
    }
    sl_sql_result_clear(&r);
}

static const char *kind_name(const char *k)
{
    if (!strcmp(k, "-U")) return "UPDATE_BEFORE";
    if (!strcmp(k, "+U")) return "UPDATE_AFTER";
    if (!strcmp(k, "-D")) return "DELETE";
    return "INSERT";
}

/* A TIMESTAMP text as ISO-8601 in place, as Flink's gateway writes it (its JSON
 * converters, ISO_LOCAL_DATE_TIME): a 'T', the fraction to its last non-zero
 * digit, none when zero. */
static void iso_timestamp(char *ts)
{
    size_t n = strlen(ts);
    if (n > 10 && ts[10] == ' ') ts[10] = 'T';
    char *dot = n > 19 ? strchr(ts + 19, '.') : NULL;
    if (dot) {
        while (n > (size_t)(dot - ts) + 1 && ts[n - 1] == '0') ts[--n] = '\0';
        if (ts[n - 1] == '.') ts[--n] = '\0';
    }
}

/* A value as Flink's JSON row format writes it. A TIMESTAMP_LTZ is its UTC
 * instant with a 'Z' (Flink's ISO-8601 form for it): the JobManager's rows
 * show it as the session zone's wall-clock time, and carry the instant itself
 * in their JSON element for every non-NULL one (operators/collect.c), which
 * data_of takes, so the text here is read as UTC only as a fallback. */
static json_t *json_value(const gw_op *op, const char *type, json_t *v)
{
    const char *s = json_string_value(v);
    if (!s) return json_null();
    char *end;
    if (!strcmp(type, "INT") || !strcmp(type, "BIGINT") || !strncmp(type, "TINYINT", 7) ||
        !strncmp(type, "SMALLINT", 8)) {
        long long x = strtoll(s, &end, 10);
        if (*s && !*end) return json_integer(x);
    } else if (!strcmp(type, "DOUBLE") || !strncmp(type, "FLOAT", 5) ||
               !strncmp(type, "DECIMAL", 7)) { /* a DECIMAL as a JSON number, to 17 digits */
        double d = strtod(s, &end);
        if (*s && !*end) return json_real(d);
    } else if (!strcmp(type, "BOOLEAN")) {
        return json_boolean(!strcasecmp(s, "true"));
    } else if (is_ltz_type(type)) {
        sl_ts t;
        if (sl_timestamp_parse(s, strlen(s), 9, &t) != SL_OK) return json_string(s);
        char ts[72];
        int n = sl_timestamp_format(ts, sizeof ts - 1, t, 9, SL_TT_SQL);
        if (n < 0 || (size_t)n >= sizeof ts - 1) return json_string(s);
        ts[n] = '\0';
        iso_timestamp(ts);
        strcat(ts, "Z");
        return json_string(ts);
    } else if (!strncmp(type, "TIMESTAMP", 9)) {
        char ts[64];
        snprintf(ts, sizeof ts, "%s", s);
        iso_timestamp(ts);
        return json_string(ts);
    }
    return json_string(s);
}

static json_t *data_of(const gw_op *op, json_t *rows, int plain)
{
    json_t *data = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        json_t *fields = json_array();
        /* nested values and TIMESTAMP_LTZ instants come as JSON in the row's last
         * element (operators/format_json.c) */
        json_t *nested = json_object_get(json_array_get(row, (size_t)op->ncols + 1), "json");
        for (int c = 0; c < op->ncols; c++) {
            json_t *v = json_array_get(row, (size_t)c + 1);
            char key[16];
            snprintf(key, sizeof key, "%d", c);
            json_t *nv = plain || !json_is_string(v) ? NULL : json_object_get(nested, key);
            json_array_append_new(fields, nv ? json_incref(nv)
                                  : plain ? (json_is_string(v) ? json_incref(v) : json_null())
                                          : json_value(op, op->types[c], v));
        }
        const char *k = json_string_value(json_array_get(row, 0));
        json_array_append_new(data, json_pack("{s:s,s:o}", "kind", kind_name(k ? k : "+I"),
                                              "fields", fields));
    }
    return data;
}

/* GET .../result/:token */
static void fetch(gw *g, gw_session *se, gw_op *op, uint64_t token, const char *fmt,
                  const char *base, reply *r)
{
    int plain = fmt && !strcmp(fmt, "PLAIN_TEXT");
    if (fmt && !plain && strcmp(fmt, "JSON"))
        return reply_err(r, 400, "rowFormat must be JSON or PLAIN_TEXT, got '%s'", fmt);
    if (op->status == OP_ERROR)
        return reply_err(r, 500, "Failed to execute the statement: %s", op->error);
    if (op->status == OP_CANCELED)
        return reply_err(r, 400, "operation %s was canceled; it has no more results", op->id);
    for (int c = 0; !plain && c < op->ncols; c++) { /* Flink's JSON converters refuse them */
        const sl_dtype *dt = NULL, *m;
        if (sl_dtype_parse(op->types[c], &dt, NULL, 0) == SL_OK && (m = nonstring_map_key(dt)))
            return reply_err(r, 500, "JSON format doesn't support non-string as key type of "
                             "map. The type is: %s (rowFormat PLAIN_TEXT shows it)",
                             sl_dtype_nullable(m, false)->text);
    }
    json_t *rows = NULL;
    const char *type = "PAYLOAD";
    if (!op->query) {
        if (token > 1) return reply_err(r, 400, "token %llu: this result has tokens 0 and 1",
                                        (unsigned long long)token);
        if (token == 0) rows = json_incref(op->rows);
        else type = "EOS";
    } else if (op->have_last && token == op->last_token) {
        rows = json_incref(op->last_rows);
    } else if (token == op->next_token && op->status == OP_RUNNING) {
        char uri[160], err[1024];
        snprintf(uri, sizeof uri, "/jobs/%s/results?token=%llu&max=%d", op->jid,
                 (unsigned long long)op->jm_offset, PAGE_ROWS);
        json_t *page = jm_call(g, "GET", uri, NULL, err, sizeof err);
        if (!page) {
            op_fail(op, err);
            return reply_err(r, 500, "Failed to fetch the results: %s", err);
        }
        json_t *got = json_object_get(page, "rows");
        const char *broke = json_string_value(json_object_get(page, "error"));
        const char *status = json_string_value(json_object_get(page, "status"));
        if (broke) {
            op_fail(op, broke);
        } else if (json_array_size(got)) {
            rows = json_incref(got);
            json_decref(op->last_rows);
            op->last_rows = json_incref(got);
            op->last_token = token;
            op->have_last = 1;
            op->next_token = token + 1;
            op->jm_offset += json_array_size(got);
        } else if (json_is_true(json_object_get(page, "end"))) {
            op->status = OP_FINISHED;
            type = "EOS";
        } else if (status && (!strcmp(status, "FAILED") || !strcmp(status, "CANCELED"))) {
            op_fail(op, !strcmp(status, "FAILED") ? "the query's job failed (see the "
                        "JobManager's /jobs/:id/exceptions)" : "the query's job was canceled");
        } else {
            type = "NOT_READY";
        }
        json_decref(page);
        if (op->status == OP_ERROR)
            return reply_err(r, 500, "Failed to fetch the results: %s", op->error);
    } else if (token == op->next_token && op->status == OP_FINISHED) {
        type = "EOS";
    } else {
        if (op->have_last)
            return reply_err(r, 400, "token %llu is not available: fetch %llu (the next page) or "
                             "%llu (the last page again)", (unsigned long long)token,
                             (unsigned long long)op->next_token,
                             (unsigned long long)op->last_token);
        return reply_err(r, 400, "token %llu is not available: fetch %llu (the next page)",
                         (unsigned long long)token, (unsigned long long)op->next_token);
    }
    json_t *res = json_pack("{s:O,s:s,s:o}", "columns", op->columns, "rowFormat",
                            plain ? "PLAIN_TEXT" : "JSON", "data",
                            rows ? data_of(op, rows, plain) : json_array());
    json_decref(rows);
    json_t *o = json_pack("{s:s,s:b,s:s,s:o}", "resultType", type, "isQueryResult", op->query,
                          "resultKind", op->content ? "SUCCESS_WITH_CONTENT" : "SUCCESS",
                          "results", res);
    /* Flink's gateway leaves jobID out when there is no job: its client reads any
     * jobID present, null too, as a job id (`Cannot parse JobID from "null"`) */
    if (op->jid[0]) json_object_set_new(o, "jobID", json_string(op->jid));
    if (strcmp(type, "EOS")) {
        uint64_t next = !strcmp(type, "NOT_READY") ? token : token + 1;
        char *uri = sl_sprintf("%s/sessions/%s/operations/%s/result/%llu?rowFormat=%s", base,
                               se->id, op->id, (unsigned long long)next,
                               plain ? "PLAIN_TEXT" : "JSON");
        json_object_set_new(o, "nextResultUri", json_string(uri));
        free(uri);
    }
    reply_json(r, 200, o);
}

static void op_cancel(gw *g, gw_op *op)
{
    if (op->query && op->status == OP_RUNNING && op->jid[0]) {
        char uri[96], err[512];
        snprintf(uri, sizeof uri, "/jobs/%s?mode=cancel", op->jid);
        json_decref(jm_call(g, "PATCH", uri, NULL, err, sizeof err));
    }
    if (op->status == OP_RUNNING) op->status = OP_CANCELED;
}

/* ---- sessions ---------------------------------------------------------------- */

static void session_close(gw *g, gw_session *se)
{
    for (gw_session **pp = &g->sessions; *pp; pp = &(*pp)->next)
        if (*pp == se) {
            *pp = se->next;
            break;
        }
    g->nsessions--;
    while (se->ops) {
        gw_op *next = se->ops->next;
        op_cancel(g, se->ops);
        op_free(se->ops);
        se->ops = next;
    }
    sl_sql_session_destroy(se->s);
    free(se->name);
    free(se);
}

static void expire(gw *g)
{
    int64_t now = now_ms();
    for (gw_session *se = g->sessions, *next; se; se = next) {
        next = se->next;
        if (now - se->last_ms > g->idle_ms) session_close(g, se);
    }
}

static gw_session *session_find(gw *g, const char *id)
{
    for (gw_session *se = g->sessions; se; se = se->next)
        if (!strcmp(se->id, id)) return se;
    return NULL;
}

static gw_op *op_find(gw_session *se, const char *id)
{
    for (gw_op *op = se->ops; op; op = op->next)
        if (!strcmp(op->id, id)) return op;
    return NULL;
}

/* SET 'key' = 'value' with the quotes doubled. */
static int set_option(gw_session *se, const char *k, const char *v, char *err, size_t errlen)
{
    char *qk = sl_malloc(2 * strlen(k) + 1), *qv = sl_malloc(2 * strlen(v) + 1), *o = qk;
    for (const char *p = k; *p; p++) {
        if (*p == '\'') *o++ = '\'';
        *o++ = *p;
    }
    *o = '\0';
    o = qv;
    for (const char *p = v; *p; p++) {
        if (*p == '\'') *o++ = '\'';
        *o++ = *p;
    }
    *o = '\0';
    char *stmt = sl_sprintf("SET '%s' = '%s'", qk, qv);
    free(qk);
    free(qv);
    sl_sql_result r;
    int rc = sl_sql_execute(se->s, stmt, strlen(stmt), 1, 1, &r, err, errlen);
    if (rc == SL_OK) sl_sql_result_clear(&r);
    free(stmt);
    return rc;
}

/* The body as a JSON object (absent: {}); NULL with a 400 reply. */
static json_t *body_object(const char *body, size_t len, const char *what, reply *r)
{
    if (!body || !len) return json_object();
    json_error_t je;
    json_t *j = json_loadb(body, len, 0, &je);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        reply_err(r, 400, "Request did not match expected format %s: %s", what,
                  j ? "not a JSON object" : je.text);
        return NULL;
    }
    return j;
}

/* ---- complete-statement -------------------------------------------------------- */

/* The rows' first cells of a SHOW or DESCRIBE run on the session (which neither
 * changes): appended to `out` as strings. */
static void first_cells(gw_session *se, const char *stmt, json_t *out)
{
    sl_sql_result res = {0};
    char err[256];
    if (sl_sql_execute(se->s, stmt, strlen(stmt), 1, 1, &res, err, sizeof err) == SL_OK &&
        res.ncols > 0)
        for (int i = 0; i < res.nrows; i++)
            if (res.cells[i * res.ncols]) json_array_append_new(out, json_string(res.cells[i * res.ncols]));
    sl_sql_result_clear(&res);
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Does `word` occur in text as a whole word (case-insensitively)? */
static int mentions(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; n && (p = strcasestr(p, word)); p++)
        if ((p == text || !is_word(p[-1])) && !is_word(p[n])) return 1;
    return 0;
}

static void add_candidate(json_t *out, const char *c, const char *prefix, size_t plen)
{
    if (strncasecmp(c, prefix, plen)) return;
    size_t i, n = json_array_size(out);
    for (i = 0; i < n; i++)
        if (!strcmp(json_string_value(json_array_get(out, i)), c)) return;
    json_array_append_new(out, json_string(c));
}

/* The columns of table `t`, each offered when it starts with prefix. */
static void add_columns(gw_session *se, const char *t, json_t *out, const char *prefix, size_t plen)
{
    sl_buf q = {0};
    sl_buf_str(&q, "DESCRIBE `");
    for (const char *p = t; *p; p++) {
        if (*p == '`') sl_buf_putc(&q, '`');
        sl_buf_putc(&q, *p);
    }
    sl_buf_str(&q, "`");
    char *stmt = sl_buf_take(&q);
    json_t *cols = json_array();
    first_cells(se, stmt, cols);
    free(stmt);
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c) add_candidate(out, json_string_value(c), prefix, plen);
    json_decref(cols);
}

/* Flink's complete-statement: {"statement", "position"} -> {"candidates"}, the words
 * that may stand where the word ending at `position` is: after FROM, JOIN, INTO,
 * TABLE, DESCRIBE the session's tables and views; after `t.` the columns of t;
 * elsewhere the columns of the tables the statement names, the tables and the
 * keywords -- each starting with what is typed so far (case-insensitively). */
static void complete_statement(gw_session *se, const char *body, size_t len, reply *r)
{
    json_t *b = body_object(body, len, "CompleteStatementRequestBody", r);
    if (!b) return;
    json_t *st = json_object_get(b, "statement"), *pos = json_object_get(b, "position");
    if (!json_is_string(st) || !json_is_integer(pos)) {
        json_decref(b);
        return reply_err(r, 400, "Request did not match expected format "
                         "CompleteStatementRequestBody: \"statement\" (a string) and "
                         "\"position\" (an integer) are required");
    }
    const char *text = json_string_value(st);
    size_t tlen = strlen(text);
    json_int_t at = json_integer_value(pos);
    if (at < 0 || (size_t)at > tlen) {
        json_decref(b);
        return reply_err(r, 400, "position %lld is outside the statement (0 to %zu)",
                         (long long)at, tlen);
    }
    size_t start = (size_t)at;
    while (start > 0 && is_word(text[start - 1])) start--;
    char *prefix = sl_strndup(text + start, (size_t)at - start);
    size_t plen = strlen(prefix);
    /* the word before it, and whether a dot joins them */
    size_t e = start;
    int dotted = e > 0 && text[e - 1] == '.';
    if (dotted) e--;
    else while (e > 0 && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n' ||
                          text[e - 1] == '\r')) e--;
    size_t s0 = e;
    while (s0 > 0 && is_word(text[s0 - 1])) s0--;
    char *prev = sl_strndup(text + s0, e - s0);

    json_t *tables = json_array(), *out = json_array();
    first_cells(se, "SHOW TABLES", tables);
    size_t i;
    json_t *t;
    if (dotted) {
        json_array_foreach(tables, i, t)
            if (!strcasecmp(json_string_value(t), prev))
                add_columns(se, json_string_value(t), out, prefix, plen);
    } else if (!strcasecmp(prev, "FROM") || !strcasecmp(prev, "JOIN") ||
               !strcasecmp(prev, "INTO") || !strcasecmp(prev, "TABLE") ||
               !strcasecmp(prev, "DESCRIBE") || !strcasecmp(prev, "DESC")) {
        json_array_foreach(tables, i, t) add_candidate(out, json_string_value(t), prefix, plen);
    } else {
        json_array_foreach(tables, i, t)
            if (mentions(text, json_string_value(t)))
                add_columns(se, json_string_value(t), out, prefix, plen);
        json_array_foreach(tables, i, t) add_candidate(out, json_string_value(t), prefix, plen);
        const char *k;
        for (size_t n = 0; (k = sql_keyword_name(n)); n++) add_candidate(out, k, prefix, plen);
    }
    json_decref(tables);
    free(prefix);
    free(prev);
    json_decref(b);
    reply_json(r, 200, json_pack("{s:o}", "candidates", out));
}

static void open_session(gw *g, const char *body, size_t len, reply *r)
{
    json_t *b = body_object(body, len, "OpenSessionRequestBody", r);
    if (!b) return;
    json_t *props = json_object_get(b, "properties"), *name = json_object_get(b, "sessionName");
    if ((props && !json_is_object(props) && !json_is_null(props)) ||
        (name && !json_is_string(name) && !json_is_null(name))) {
        json_decref(b);
        return reply_err(r, 400, "Request did not match expected format OpenSessionRequestBody: "
                         "\"properties\" is an object of strings, \"sessionName\" a string");
    }
    if (g->nsessions >= MAX_SESSIONS) {
        json_decref(b);
        return reply_err(r, 503, "the gateway already holds %d sessions; close some first",
                         MAX_SESSIONS);
    }
    gw_session *se = sl_calloc(1, sizeof *se);
    new_uuid(se->id);
    se->s = sl_sql_session_new();
    se->name = json_is_string(name) ? sl_strdup(json_string_value(name)) : NULL;
    const char *k;
    json_t *v;
    char err[1024];
    json_object_foreach(props, k, v) {
        if (!json_is_string(v) || set_option(se, k, json_string_value(v), err, sizeof err)) {
            if (!json_is_string(v)) snprintf(err, sizeof err, "property '%s' must be a string", k);
            sl_sql_session_destroy(se->s);
            free(se->name);
            free(se);
            json_decref(b);
            return reply_err(r, 400, "%s", err);
        }
    }
    json_decref(b);
    se->last_ms = now_ms();
    se->next = g->sessions;
    g->sessions = se;
    g->nsessions++;
    reply_json(r, 200, json_pack("{s:s}", "sessionHandle", se->id));
}

static void statement(gw *g, gw_session *se, const char *body, size_t len, int configure,
                      reply *r)
{
    json_t *b = body_object(body, len, configure ? "ConfigureSessionRequestBody"
                                                 : "ExecuteStatementRequestBody", r);
    if (!b) return;
    json_t *st = json_object_get(b, "statement"), *cfg = json_object_get(b, "executionConfig");
    if (!json_is_string(st) || (cfg && !json_is_object(cfg) && !json_is_null(cfg))) {
        json_decref(b);
        return reply_err(r, 400, "Request did not match expected format %s: \"statement\" (a "
                         "string) is required%s", configure ? "ConfigureSessionRequestBody"
                         : "ExecuteStatementRequestBody",
                         configure ? "" : ", \"executionConfig\" is an object of strings");
    }
    char err[1024];
    const char *k;
    json_t *v;
    json_object_foreach(cfg, k, v) { /* Flink: options of this statement; here, of the session */
        if (!json_is_string(v) || set_option(se, k, json_string_value(v), err, sizeof err)) {
            json_decref(b);
            return reply_err(r, 400, "executionConfig '%s': %s", k,
                             json_is_string(v) ? err : "must be a string");
        }
    }
    if (se->nops >= MAX_OPS) { /* the oldest finished operation makes room */
        gw_op **pp = &se->ops, **victim = NULL;
        for (; *pp; pp = &(*pp)->next)
            if ((*pp)->status != OP_RUNNING) victim = pp;
        if (!victim) {
            json_decref(b);
            return reply_err(r, 503, "session %s has %d running operations; close some first",
                             se->id, MAX_OPS);
        }
        gw_op *dead = *victim;
        *victim = dead->next;
        op_free(dead);
        se->nops--;
    }
    gw_op *op = sl_calloc(1, sizeof *op);
    new_uuid(op->id);
    run_statement(g, se, op, json_string_value(st));
    json_decref(b);
    if (configure) {
        int failed = op->status == OP_ERROR;
        if (failed) reply_err(r, 400, "%s", op->error);
        else reply_json(r, 200, json_object());
        op_cancel(g, op);
        op_free(op);
        return;
    }
    op->next = se->ops;
    se->ops = op;
    se->nops++;
    reply_json(r, 200, json_pack("{s:s}", "operationHandle", op->id));
}

/* ---- routing ------------------------------------------------------------------ */

typedef struct req {
    char *body;
    size_t len;
    int too_big;
} req;

static void route(gw *g, struct MHD_Connection *conn, const char *url, const char *method,
                  const req *rq, reply *r)
{
    const char *path = url, *base = "/v2";
    if (!strncmp(url, "/v1/", 4) || !strcmp(url, "/v1")) path = url + 3, base = "/v1";
    else if (!strncmp(url, "/v2/", 4) || !strcmp(url, "/v2")) path = url + 3;
    char *copy = sl_strdup(path), *save = NULL, *seg[8];
    int n = 0;
    for (char *s = strtok_r(copy, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (n == 8) { n = -1; break; }
        seg[n++] = s;
    }
    int get = !strcmp(method, "GET"), post = !strcmp(method, "POST"),
        del = !strcmp(method, "DELETE");
    expire(g);
    if (n == 1 && get && !strcmp(seg[0], "api_versions")) {
        reply_json(r, 200, json_pack("{s:[s,s]}", "versions", "V1", "V2"));
    } else if (n == 1 && get && !strcmp(seg[0], "info")) {
        reply_json(r, 200, json_pack("{s:s,s:s}", "productName", "Sluice", "version", SL_VERSION));
    } else if (n == 1 && post && !strcmp(seg[0], "sessions")) {
        open_session(g, rq->body, rq->len, r);
    } else if (n >= 2 && !strcmp(seg[0], "sessions")) {
        gw_session *se = session_find(g, seg[1]);
        if (!se) {
            reply_err(r, 404, "Session '%s' does not exist.", seg[1]);
        } else {
            se->last_ms = now_ms();
            if (n == 2 && get) {
                json_t *props = json_object();
                char *const *k, *const *v;
                int nopts = sl_sql_options(se->s, &k, &v);
                for (int i = 0; i < nopts; i++) json_object_set_new(props, k[i], json_string(v[i]));
                reply_json(r, 200, json_pack("{s:o}", "properties", props));
            } else if (n == 2 && del) {
                session_close(g, se);
                reply_json(r, 200, json_pack("{s:s}", "status", "CLOSED"));
            } else if (n == 3 && post && !strcmp(seg[2], "heartbeat")) {
                reply_json(r, 200, json_object());
            } else if (n == 3 && post && (!strcmp(seg[2], "configure-session") ||
                                          !strcmp(seg[2], "configure_session"))) {
                statement(g, se, rq->body, rq->len, 1, r);
            } else if (n == 3 && (get || post) && !strcmp(seg[2], "complete-statement")) {
                complete_statement(se, rq->body, rq->len, r);
            } else if (n == 3 && post && !strcmp(seg[2], "statements")) {
                statement(g, se, rq->body, rq->len, 0, r);
            } else if (n >= 4 && !strcmp(seg[2], "operations")) {
                gw_op *op = op_find(se, seg[3]);
                if (!op) {
                    reply_err(r, 404, "Operation '%s' does not exist in session '%s'.", seg[3],
                              se->id);
                } else if (n == 5 && get && !strcmp(seg[4], "status")) {
                    reply_json(r, 200, json_pack("{s:s}", "status", op_status[op->status]));
                } else if (n == 5 && post && !strcmp(seg[4], "cancel")) {
                    op_cancel(g, op);
                    reply_json(r, 200, json_pack("{s:s}", "status", op_status[op->status]));
                } else if (n == 5 && del && !strcmp(seg[4], "close")) {
                    op_cancel(g, op);
                    for (gw_op **pp = &se->ops; *pp; pp = &(*pp)->next)
                        if (*pp == op) {
                            *pp = op->next;
                            break;
                        }
                    se->nops--;
                    op_free(op);
                    reply_json(r, 200, json_pack("{s:s}", "status", "CLOSED"));
                } else if (n == 6 && get && !strcmp(seg[4], "result")) {
                    char *end;
                    errno = 0;
                    unsigned long long token = strtoull(seg[5], &end, 10);
                    if (!*seg[5] || *end || seg[5][0] == '-' || errno)
                        reply_err(r, 400, "token '%s' is not a whole number", seg[5]);
                    else
                        fetch(g, se, op, token,
                              MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "rowFormat"),
                              base, r);
                } else {
                    reply_err(r, 404, "Not found: %s %s", method, url);
                }
            } else {
                reply_err(r, 404, "Not found: %s %s", method, url);
            }
        }
    } else {
        reply_err(r, 404, "Not found: %s %s", method, url);
    }
    free(copy);
}

static MHD_RESULT on_request(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload_data,
                             size_t *upload_size, void **con_cls)
{
    (void)version;
    gw *g = cls;
    req *rq = *con_cls;
    if (!rq) {
        *con_cls = sl_calloc(1, sizeof *rq);
        return MHD_YES;
    }
    if (*upload_size) {
        if (rq->len + *upload_size > MAX_BODY) rq->too_big = 1;
        else {
            rq->body = sl_realloc(rq->body, rq->len + *upload_size + 1);
            memcpy(rq->body + rq->len, upload_data, *upload_size);
            rq->len += *upload_size;
            rq->body[rq->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    reply r = {0, NULL};
    if (rq->too_big) {
        reply_err(&r, 413, "request body larger than %u bytes", MAX_BODY);
    } else {
        pthread_mutex_lock(&g->mu);
        route(g, conn, url, method, rq, &r);
        pthread_mutex_unlock(&g->mu);
    }
    return sl_reply_send(conn, &r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    req *rq = *con_cls;
    if (rq) {
        free(rq->body);
        free(rq);
    }
    *con_cls = NULL;
}

static volatile sig_atomic_t stopping;
static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

int sl_cli_sql_gateway_main(sl_cli_http *http, int argc, char **argv)
{
    const char *address = "127.0.0.1";
    long port = 8083;
    int64_t idle_ms = 600000;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "-D", 2) && !a[2] && i + 1 < argc) a = argv[++i];
        else if (!strncmp(a, "-D", 2)) a += 2;
        else {
            fprintf(stderr, "Error: sql-gateway: unexpected argument '%s' (sluice sql-gateway "
                    "[-Dsql-gateway.endpoint.rest.port=8083] "
                    "[-Dsql-gateway.endpoint.rest.address=127.0.0.1] "
                    "[-Dsql-gateway.session.idle-timeout=10 min])\n", a);
            return 2;
        }
        const char *eq = strchr(a, '=');
        if (!eq) {
            fprintf(stderr, "Error: sql-gateway: '-D%s' is not -Dkey=value\n", a);
            return 2;
        }
        size_t kl = (size_t)(eq - a);
        const char *v = eq + 1;
        char *end;
        if (kl == 30 && !strncmp(a, "sql-gateway.endpoint.rest.port", kl)) {
            port = strtol(v, &end, 10);
            if (!*v || *end || port < 0 || port > 65535) {
                fprintf(stderr, "Error: sql-gateway.endpoint.rest.port: '%s' is not a port\n", v);
                return 2;
            }
        } else if (kl == 33 && !strncmp(a, "sql-gateway.endpoint.rest.address", kl)) {
            address = !strcmp(v, "localhost") ? "127.0.0.1" : v;
        } else if (kl == 32 && !strncmp(a, "sql-gateway.session.idle-timeout", kl)) {
            char err[256];
            if (sl_interval_parse(v, &idle_ms, err, sizeof err) != SL_OK || idle_ms <= 0) {
                fprintf(stderr, "Error: sql-gateway.session.idle-timeout: %s\n",
                        idle_ms <= 0 ? "must be positive" : err);
                return 2;
            }
        } else {
            fprintf(stderr, "Error: sql-gateway: unknown option '%.*s' (known: "
                    "sql-gateway.endpoint.rest.address, sql-gateway.endpoint.rest.port, "
                    "sql-gateway.session.idle-timeout)\n", (int)kl, a);
            return 2;
        }
    }
    if (!http) {
        fprintf(stderr, "Error: sql-gateway: no JobManager (-m host:port)\n");
        return 2;
    }
    gw g = {.jm = http, .idle_ms = idle_ms};
    pthread_mutex_init(&g.mu, NULL);
    sl_http_conf hc = {
        .what = "the SQL gateway",
        .bind_key = "sql-gateway.endpoint.rest.address",
        .bind = address,
        .port = (int)port,
        .threads = 4,
        .idle_timeout_s = 60,
        .connection_limit = 1024,
        .handler = on_request,
        .handler_cls = &g,
        .completed = on_completed,
        .completed_cls = &g,
    };
    char herr[300];
    int bound = 0;
    struct MHD_Daemon *d = sl_http_start(&hc, &bound, herr, sizeof herr);
    if (!d) {
        fprintf(stderr, "Error: %s\n", herr);
        return strstr(herr, "is not an IPv4 address") ? 2 : 1;
    }
    printf("SQL gateway listening on http://%s:%d (JobManager %s)\n", address, bound,
           sl_cli_http_url(http));
    fflush(stdout);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    while (!stopping) pause();
    MHD_stop_daemon(d);
    pthread_mutex_lock(&g.mu);
    while (g.sessions) session_close(&g, g.sessions);
    pthread_mutex_unlock(&g.mu);
    pthread_mutex_destroy(&g.mu);
    return 0;
}
