/*
 * jdbc_scan.c -- the `jdbc-scan` operator: a jdbc table read once, bounded,
 * as Flink's JDBC source scans it (without `scan.partition.*`: one subtask).
 *
 * Config: url, table-name, username, password (jdbc_common.h); the vertex's
 * "schema" is the table's columns, read by name.
 *
 * Subtask 0 opens a REPEATABLE READ, READ ONLY transaction, declares a cursor
 * over SELECT "col", ... FROM table-name and fetches it 1000 rows at a time
 * in binary (so memory is bounded by a batch), emitting each row as an
 * insert without event time, then commits and ends (SL_DONE); other subtasks
 * end at once. A column whose server type does not map to the schema's type
 * fails the job naming both. The position (rows emitted) is the operator
 * state: a restore reads the table again and skips that many rows, which
 * gives the rows not emitted yet when the table has not changed in between
 * (PostgreSQL returns an unchanged table's rows in one order to one plan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdbc_common.h"
#include "jobgraph.h"
#include "operator.h"
#include "sl.h"

#define SCAN_FETCH 1000

typedef struct scan_plan {
    char *vid, *who;
    char conninfo[2048];
    char *query;  /* SELECT "col", ... FROM table-name */
    char *select; /* DECLARE sl_scan ... CURSOR FOR query */
    int ncols;
} scan_plan;

typedef struct scan_state {
    PGconn *conn;
    PGresult *res;  /* the current batch */
    int at;         /* its next row */
    int64_t emitted, skip;
    int done;
    sl_value *vals;
} scan_state;

static void scan_plan_free(void *p)
{
    scan_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->who);
    free(pl->query);
    free(pl->select);
    free(pl);
}

static void *scan_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    scan_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    const char *tn = sl_vconf_str(v, "table-name", NULL);
    if (!tn || !*tn) {
        sl_seterr(err, errlen, "vertex '%s': option 'table-name' is required", pl->vid);
        goto fail;
    }
    if (v->declared.n == 0) {
        sl_seterr(err, errlen, "vertex '%s': jdbc-scan needs a \"schema\" (the table's columns)",
                  pl->vid);
        goto fail;
    }
    pl->who = sl_sprintf("source '%s': jdbc table '%s'", pl->vid, tn);
    if (sl_jdbc_conninfo(v, pl->conninfo, sizeof pl->conninfo, err, errlen) != SL_OK) goto fail;
    for (int i = 0; i < v->declared.n; i++) {
        sl_type t = v->declared.fields[i].type;
        if (!sl_type_is_classic(t) || sl_dtype_has_nanos(v->declared.fields[i].dt)) {
            sl_seterr(err, errlen, "vertex '%s': column '%s' is %s; the jdbc connector cannot "
                      "carry that type yet", pl->vid, v->declared.fields[i].name,
                      sl_type_name(t));
            goto fail;
        }
    }
    sl_buf b = {0};
    sl_buf_str(&b, "SELECT ");
    for (int i = 0; i < v->declared.n; i++) {
        if (i) sl_buf_str(&b, ", ");
        sl_jdbc_quote(&b, v->declared.fields[i].name);
    }
    sl_buf_fmt(&b, " FROM %s", tn); /* as given, as the sink writes it (may be schema.table) */
    pl->query = sl_buf_take(&b);
    pl->select = sl_sprintf("DECLARE sl_scan NO SCROLL CURSOR FOR %s", pl->query);
    pl->ncols = v->declared.n;
    sl_schema_copy(pc->out, &v->declared);
    return pl;
fail:
    sl_schema_free(pc->out);
    scan_plan_free(pl);
    return NULL;
}

static int scan_open(sl_op *op)
{
    const scan_plan *pl = op->plan;
    scan_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)pl->ncols + 1, sizeof *st->vals);
    st->done = op->subtask != 0; /* the rows are subtask 0's */
    return SL_OK;
}

static void scan_close(sl_op *op)
{
    scan_state *st = op->priv;
    if (!st) return;
    PQclear(st->res);
    PQfinish(st->conn);
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static int exec_ok(sl_op *op, const char *q, ExecStatusType want)
{
    const scan_plan *pl = op->plan;
    scan_state *st = op->priv;
    PGresult *r = PQexec(st->conn, q);
    int rc = PQresultStatus(r) == want
                 ? SL_OK
                 : sl_jdbc_error(st->conn, r, pl->who, "cannot scan", op->err, sizeof op->err);
    PQclear(r);
    return rc == SL_OK ? SL_OK : sl_op_fail(op, "%s", op->err);
}

static int fetch(sl_op *op)
{
    const scan_plan *pl = op->plan;
    scan_state *st = op->priv;
    PQclear(st->res);
    st->res = NULL;
    st->at = 0;
    if (!st->conn) {
        st->conn = sl_jdbc_connect(pl->conninfo, pl->who, op->err, sizeof op->err);
        if (!st->conn) return sl_op_fail(op, "%s", op->err);
        if (exec_ok(op, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", PGRES_COMMAND_OK) ||
            exec_ok(op, pl->select, PGRES_COMMAND_OK))
            return SL_ERR;
    }
    char q[64];
    snprintf(q, sizeof q, "FETCH %d FROM sl_scan", SCAN_FETCH);
    st->res = PQexecParams(st->conn, q, 0, NULL, NULL, NULL, NULL, 1);
    if (PQresultStatus(st->res) != PGRES_TUPLES_OK) {
        sl_jdbc_error(st->conn, st->res, pl->who, "cannot scan", op->err, sizeof op->err);
        return sl_op_fail(op, "%s", op->err);
    }
    for (int c = 0; c < pl->ncols; c++)
        if (!sl_jdbc_result_maps(PQftype(st->res, c), op->out->fields[c].type))
            return sl_op_fail(op, "%s: column '%s' (%s) does not map to %s", pl->who,
                              op->out->fields[c].name, sl_jdbc_type_name(PQftype(st->res, c)),
                              sl_type_name(op->out->fields[c].type));
    return SL_OK;
}

static int scan_run(sl_op *op)
{
    const scan_plan *pl = op->plan;
    scan_state *st = op->priv;
    if (st->done) return SL_DONE;
    if (!st->res || st->at >= PQntuples(st->res)) {
        if (fetch(op) != SL_OK) return SL_ERR;
        if (PQntuples(st->res) == 0) {
            if (exec_ok(op, "COMMIT", PGRES_COMMAND_OK) != SL_OK) return SL_ERR;
            PQclear(st->res);
            st->res = NULL;
            PQfinish(st->conn);
            st->conn = NULL;
            st->done = 1;
            return SL_DONE;
        }
    }
    for (int k = 0; k < 256 && st->at < PQntuples(st->res); st->at++) {
        if (st->skip > 0) { /* emitted before the restore */
            st->skip--;
            continue;
        }
        int r = st->at;
        for (int c = 0; c < pl->ncols; c++) {
            sl_value *v = &st->vals[c];
            memset(v, 0, sizeof *v);
            if (PQgetisnull(st->res, r, c)) {
                v->isnull = true;
                continue;
            }
            if (sl_jdbc_decode(PQgetvalue(st->res, r, c), PQgetlength(st->res, r, c),
                               PQftype(st->res, c), op->out->fields[c].type, v) != SL_OK)
                return sl_op_fail(op, "%s: column '%s': a value of %s does not read as %s",
                                  pl->who, op->out->fields[c].name,
                                  sl_jdbc_type_name(PQftype(st->res, c)),
                                  sl_type_name(op->out->fields[c].type));
        }
        sl_row row = {.kind = SL_KIND_INSERT, .n = pl->ncols, .ts = SL_TS_NONE, .vals = st->vals};
        st->emitted++;
        k++;
        int rc = sl_op_emit(op, &row);
        if (rc != SL_OK) {
            st->at++;
            return rc;
        }
    }
    return SL_OK;
}

static int scan_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    scan_state *st = op->priv;
    SL_UNUSED(cpid);
    uint8_t *b = sl_malloc(8);
    int64_t pos = st->done && op->subtask != 0 ? -1 : st->emitted + st->skip;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)pos >> (8 * i));
    *blob = b;
    *len = 8;
    return SL_OK;
}

static int scan_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    const scan_plan *pl = op->plan;
    scan_state *st = op->priv;
    st->done = 1;
    for (int i = 0; i < nblobs; i++) {
        if (lens[i] != 8)
            return sl_op_fail(op, "vertex '%s': the stored position has %zu bytes, not 8",
                              pl->vid, lens[i]);
        uint64_t x = 0;
        for (int k = 0; k < 8; k++) x |= (uint64_t)((const uint8_t *)blobs[i])[k] << (8 * k);
        if ((int64_t)x >= 0) { /* subtask 0's position */
            st->done = 0;
            st->skip = (int64_t)x;
        }
    }
    return SL_OK;
}

/* At submission: the table exists and each column maps to its declared type. */
static int scan_check_job(const sl_vertex *v, const void *plan, const sl_job_check *jc,
                          char *err, size_t errlen)
{
    (void)jc;
    const scan_plan *pl = plan;
    if (!pl) return SL_OK;
    PGconn *c = sl_jdbc_connect(pl->conninfo, pl->who, err, errlen);
    if (!c) return SL_ERR;
    PGresult *r = PQprepare(c, "", pl->query, 0, NULL);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK
                 ? SL_OK : sl_jdbc_error(c, r, pl->who, "cannot scan", err, errlen);
    PQclear(r);
    r = rc == SL_OK ? PQdescribePrepared(c, "") : NULL;
    if (r && PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = sl_jdbc_error(c, r, pl->who, "describing the scan", err, errlen);
    for (int i = 0; rc == SL_OK && i < pl->ncols; i++)
        if (!sl_jdbc_result_maps(PQftype(r, i), v->declared.fields[i].type))
            rc = sl_seterr(err, errlen, "%s: column '%s' is %s in PostgreSQL, which does not map "
                           "to %s (declare the column's type as it maps, see docs/CONNECTORS.md)",
                           pl->who, v->declared.fields[i].name, sl_jdbc_type_name(PQftype(r, i)),
                           sl_type_name(v->declared.fields[i].type));
    PQclear(r);
    PQfinish(c);
    return rc;
}

static const sl_op_option scan_options[] = {
    {"url", SL_CT_STRING, NULL, NULL, "jdbc:postgresql://host[:port]/database[?...]"},
    {"table-name", SL_CT_STRING, NULL, NULL, "The table read (may be schema.table)."},
    {"username", SL_CT_STRING, NULL, NULL, "The user."},
    {"password", SL_CT_STRING, NULL, NULL, "The user's password."},
    {"driver", SL_CT_STRING, NULL, NULL, "org.postgresql.Driver (libpq speaks for it)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_jdbc_scan = {
    .abi = SL_OP_ABI_VERSION,
    .name = "jdbc-scan",
    .flags = SL_OPF_SOURCE,
    .options = scan_options,
    .plan = scan_plan_new,
    .plan_free = scan_plan_free,
    .open = scan_open,
    .run = scan_run,
    .close = scan_close,
    .snapshot_state = scan_snapshot,
    .restore_state = scan_restore,
    .check_job = scan_check_job,
};
