/*
 * jdbc_scan.c -- the `jdbc-scan` operator: a jdbc table read once, bounded,
 * as Flink's JDBC source scans it.
 *
 * Config: url, table-name, username, password (jdbc_common.h); the vertex's
 * "schema" is the table's columns, read by name (types: jdbc_common.h).
 *   scan.fetch-size                rows per round trip (0, the default: 1000)
 *   scan.partition.column / .num / .lower-bound / .upper-bound
 *       a partitioned scan, all four or none: Flink's
 *       JdbcNumericBetweenParametersProvider splits [lower, upper] into num
 *       ranges of ceil((upper - lower + 1) / num) values, the last ones one
 *       smaller so that they end at upper (num is at most upper - lower + 1),
 *       each read as SELECT ... WHERE "column" BETWEEN start AND end. As in
 *       Flink, rows whose column is NULL or outside the bounds are not read.
 *       Split i is subtask i % parallelism's (Flink hands them out on
 *       request; the rows are the same). The column may also be a DATE or a
 *       TIMESTAMP of the schema (Flink takes numeric, date and timestamp
 *       columns), the bounds then that type's literals ('2026-01-01',
 *       '2026-01-01 10:00:00.5'), split by days or milliseconds; a split is
 *       read as "column" >= DATE / TIMESTAMP 'start' AND "column" < 'next
 *       start' (the last: <= the upper bound as given), so a value between
 *       two milliseconds is read once.
 *   scan.auto-commit               Flink's option (default true): accepted;
 *       the scan reads through a cursor either way (Flink's PostgreSQL driver
 *       needs false for scan.fetch-size to stream; here memory is bounded by
 *       a batch whatever it says).
 *
 * A subtask opens one REPEATABLE READ, READ ONLY transaction (so its splits
 * see one snapshot) with synchronize_seqscans off (a sequential scan starts
 * at the table's first block), declares a cursor per split and fetches it
 * scan.fetch-size rows at a time in binary (memory is bounded by a batch),
 * emitting each row as an insert without event time; at the end it commits
 * and ends (SL_DONE). A column whose server type does not map to the
 * schema's type fails the job naming both; so does a value that does not
 * read (NaN into a DECIMAL).
 *
 * Checkpoints (SL_OPF_UNION_STATE): each split's position, the rows emitted
 * from it and whether it ended. A restore, at any parallelism, reads the
 * splits that had not ended again and skips the rows already emitted --
 * the rows not emitted yet when the table has not changed in between
 * (PostgreSQL returns an unchanged table's rows in one order to one plan);
 * as Flink's JdbcSource, whose split carries its offset.
 *
 * Blob, little-endian, version 2: u8 2, u32 nsplits, u32 n, n x (u32 split,
 * i64 rows emitted, u8 ended). The older 8-byte form (i64 rows emitted of
 * the one split, -1 for none) still restores.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdbc_common.h"
#include "temporal.h"
#include "jobgraph.h"
#include "operator.h"
#include "sl.h"

#define SCAN_FETCH_DEFAULT 1000
#define SCAN_FETCH_MAX 1000000
#define SCAN_SPLITS_MAX 65536

typedef struct scan_plan {
    char *vid, *who;
    char conninfo[SL_JDBC_CONNINFO_MAX];
    char *query;  /* SELECT "col", ... FROM table-name */
    char *pcol;   /* scan.partition.column, quoted; NULL: one split */
    sl_type pkind; /* its type: a DATE or TIMESTAMP, else (any other) a number */
    sl_ts plo, phi; /* a DATE / TIMESTAMP column's bounds as given (a DATE's days in ms) */
    int64_t lower, size; /* the first split's start; values per split (days, ms) */
    int64_t big;  /* splits of `size` values; the others have one fewer */
    int nsplits;
    int fetch;
    int ncols;
} scan_plan;

typedef struct scan_split {
    int index;
    int64_t emitted, skip; /* rows emitted; rows still to skip (restored) */
    int done;
} scan_split;

typedef struct scan_state {
    PGconn *conn;
    PGresult *res;  /* the current batch */
    int at;         /* its next row */
    int open;       /* the cursor of splits[cur] is declared */
    scan_split *splits; /* this subtask's, in order */
    int nsplits, cur;
    sl_value *vals;
    sl_jdbc_scratch sc;
} scan_state;

static void scan_plan_free(void *p)
{
    scan_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->who);
    free(pl->query);
    free(pl->pcol);
    free(pl);
}

/* Flink's JdbcNumericBetweenParametersProvider.ofBatchNum(num) */
static void split_range(const scan_plan *pl, int i, int64_t *start, int64_t *end)
{
    *start = pl->lower + pl->size * i - (i > pl->big ? i - pl->big : 0);
    *end = *start + pl->size - 1 - (i >= pl->big ? 1 : 0);
}

/* A literal of a DATE / TIMESTAMP partition column's type: x (days, or
 * a TIMESTAMP's ms and nanoseconds). */
static void split_literal(const scan_plan *pl, sl_ts x, char *buf, size_t cap)
{
    if (pl->pkind == SL_T_DATE) {
        int n = snprintf(buf, cap, "DATE '");
        n += sl_date_format(buf + n, cap - (size_t)n, (int32_t)x.ms);
        snprintf(buf + n, cap - (size_t)n, "'");
    } else {
        int n = snprintf(buf, cap, "TIMESTAMP '");
        n += sl_timestamp_format(buf + n, cap - (size_t)n, x, 9, SL_TT_SQL);
        snprintf(buf + n, cap - (size_t)n, "'");
    }
}

/* Split i of a DATE / TIMESTAMP column: from its start up to the next
 * split's start (the first from the lower bound, the last to the upper
 * bound, both as given). */
static char *split_where(const scan_plan *pl, int i)
{
    int64_t a, b;
    split_range(pl, i, &a, &b);
    char lo[96], hi[96];
    split_literal(pl, i == 0 ? pl->plo : (sl_ts){.ms = a}, lo, sizeof lo);
    if (i == pl->nsplits - 1) {
        split_literal(pl, pl->phi, hi, sizeof hi);
        return sl_sprintf("%s >= %s AND %s <= %s", pl->pcol, lo, pl->pcol, hi);
    }
    split_literal(pl, (sl_ts){.ms = b + 1}, hi, sizeof hi);
    return sl_sprintf("%s >= %s AND %s < %s", pl->pcol, lo, pl->pcol, hi);
}

static int partition_options(const sl_vertex *v, scan_plan *pl, char *err, size_t errlen)
{
    static const char *const keys[] = {"scan.partition.column", "scan.partition.num",
                                       "scan.partition.lower-bound",
                                       "scan.partition.upper-bound"};
    int n = 0;
    for (int k = 0; k < 4; k++) n += sl_vconf_str(v, keys[k], NULL) != NULL;
    pl->nsplits = 1;
    if (n == 0) return SL_OK;
    if (n != 4)
        return sl_seterr(err, errlen, "vertex '%s': Either all or none of the following options "
                         "should be provided: scan.partition.column, scan.partition.num, "
                         "scan.partition.lower-bound, scan.partition.upper-bound", pl->vid);
    int64_t num, lo, hi;
    const char *pc = sl_vconf_str(v, keys[0], "");
    pl->pkind = SL_T_BIGINT;
    for (int i = 0; i < v->declared.n; i++)
        if (!strcmp(v->declared.fields[i].name, pc)) {
            const sl_dtype *dt = v->declared.fields[i].dt;
            if (dt->kind == SL_T_DATE || (dt->kind == SL_T_TIMESTAMP && dt->variant != SL_DV_LTZ))
                pl->pkind = dt->kind;
        }
    if (sl_vconf_int(v, keys[1], 1, &num, err, errlen) != SL_OK) return SL_ERR;
    if (pl->pkind == SL_T_BIGINT) {
        if (sl_vconf_int(v, keys[2], 0, &lo, err, errlen) != SL_OK ||
            sl_vconf_int(v, keys[3], 0, &hi, err, errlen) != SL_OK)
            return SL_ERR;
    } else {
        const char *ls = sl_vconf_str(v, keys[2], ""), *us = sl_vconf_str(v, keys[3], "");
        for (int k = 0; k < 2; k++) {
            const char *t = k ? us : ls;
            int64_t *x = k ? &hi : &lo;
            int rc;
            sl_ts *b = k ? &pl->phi : &pl->plo;
            if (pl->pkind == SL_T_DATE) {
                int32_t d = 0;
                rc = sl_date_parse(t, strlen(t), &d);
                *x = d;
                b->ms = d;
            } else {
                rc = sl_timestamp_parse(t, strlen(t), 9, b);
                *x = b->ms;
            }
            if (rc != SL_OK)
                return sl_seterr(err, errlen, "vertex '%s': '%s'='%s' is not a %s (the type of "
                                 "'scan.partition.column' %s)", pl->vid, keys[2 + k], t,
                                 pl->pkind == SL_T_DATE ? "DATE" : "TIMESTAMP", pc);
        }
    }
    if (lo > hi)
        return sl_seterr(err, errlen, "vertex '%s': 'scan.partition.lower-bound'='%s' must not "
                         "be larger than 'scan.partition.upper-bound'='%s'.", pl->vid,
                         sl_vconf_str(v, keys[2], ""), sl_vconf_str(v, keys[3], ""));
    if (num < 1 || num > SCAN_SPLITS_MAX)
        return sl_seterr(err, errlen, "vertex '%s': 'scan.partition.num' is %lld; it is 1 to %d",
                         pl->vid, (long long)num, SCAN_SPLITS_MAX);
    if ((hi > 0 && lo < hi - INT64_MAX) || hi - lo == INT64_MAX)
        return sl_seterr(err, errlen, "vertex '%s': the partition bounds [%lld, %lld] span more "
                         "values than a BIGINT counts", pl->vid, (long long)lo, (long long)hi);
    int64_t count = hi - lo + 1;
    if (num > count) num = count;
    pl->nsplits = (int)num;
    pl->size = count / num + (count % num != 0);
    pl->big = count - (pl->size - 1) * num;
    pl->lower = lo;
    sl_buf b = {0};
    sl_jdbc_quote(&b, sl_vconf_str(v, keys[0], ""));
    pl->pcol = sl_buf_take(&b);
    return SL_OK;
}

static void *scan_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    scan_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    const char *tn = sl_vconf_str(v, "table-name", NULL);
    int64_t fetch;
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
    if (sl_jdbc_check_columns(pl->vid, &v->declared, err, errlen) != SL_OK) goto fail;
    if (sl_vconf_int(v, "scan.fetch-size", 0, &fetch, err, errlen) != SL_OK) goto fail;
    if (fetch < 0 || fetch > SCAN_FETCH_MAX) {
        sl_seterr(err, errlen, "vertex '%s': 'scan.fetch-size' is %lld; it is 0 (the default) "
                  "to %d", pl->vid, (long long)fetch, SCAN_FETCH_MAX);
        goto fail;
    }
    pl->fetch = fetch ? (int)fetch : SCAN_FETCH_DEFAULT;
    if (partition_options(v, pl, err, errlen) != SL_OK) goto fail;
    sl_buf b = {0};
    sl_buf_str(&b, "SELECT ");
    for (int i = 0; i < v->declared.n; i++) {
        if (i) sl_buf_str(&b, ", ");
        sl_jdbc_quote(&b, v->declared.fields[i].name);
    }
    sl_buf_fmt(&b, " FROM %s", tn); /* as given, as the sink writes it (may be schema.table) */
    pl->query = sl_buf_take(&b);
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
    sl_jdbc_scratch_init(&st->sc);
    st->splits = sl_calloc((size_t)pl->nsplits / (size_t)op->parallelism + 1, sizeof *st->splits);
    for (int i = op->subtask; i < pl->nsplits; i += op->parallelism)
        st->splits[st->nsplits++].index = i;
    return SL_OK;
}

static void scan_close(sl_op *op)
{
    scan_state *st = op->priv;
    if (!st) return;
    PQclear(st->res);
    PQfinish(st->conn);
    sl_jdbc_scratch_free(&st->sc);
    free(st->splits);
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

/* The next batch of split splits[cur] into st->res (declaring its cursor
 * first, connecting first). */
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
            exec_ok(op, "SET LOCAL synchronize_seqscans = off", PGRES_COMMAND_OK))
            return SL_ERR;
    }
    if (!st->open) {
        char *q;
        if (pl->pcol && pl->pkind != SL_T_BIGINT) {
            char *w = split_where(pl, st->splits[st->cur].index);
            q = sl_sprintf("DECLARE sl_scan NO SCROLL CURSOR FOR %s WHERE %s", pl->query, w);
            free(w);
        } else if (pl->pcol) {
            int64_t a, b;
            split_range(pl, st->splits[st->cur].index, &a, &b);
            q = sl_sprintf("DECLARE sl_scan NO SCROLL CURSOR FOR %s WHERE %s BETWEEN %lld AND "
                           "%lld", pl->query, pl->pcol, (long long)a, (long long)b);
        } else {
            q = sl_sprintf("DECLARE sl_scan NO SCROLL CURSOR FOR %s", pl->query);
        }
        int rc = exec_ok(op, q, PGRES_COMMAND_OK);
        free(q);
        if (rc != SL_OK) return SL_ERR;
        st->open = 1;
    }
    char q[64];
    snprintf(q, sizeof q, "FETCH %d FROM sl_scan", pl->fetch);
    st->res = PQexecParams(st->conn, q, 0, NULL, NULL, NULL, NULL, 1);
    if (PQresultStatus(st->res) != PGRES_TUPLES_OK) {
        sl_jdbc_error(st->conn, st->res, pl->who, "cannot scan", op->err, sizeof op->err);
        return sl_op_fail(op, "%s", op->err);
    }
    for (int c = 0; c < pl->ncols; c++)
        if (!sl_jdbc_result_maps(PQftype(st->res, c), op->out->fields[c].dt))
            return sl_op_fail(op, "%s: column '%s' (%s) does not map to %s", pl->who,
                              op->out->fields[c].name, sl_jdbc_type_name(PQftype(st->res, c)),
                              op->out->fields[c].dt->text);
    return SL_OK;
}

/* The current split ended: close its cursor; after the last, commit. */
static int split_end(sl_op *op)
{
    scan_state *st = op->priv;
    PQclear(st->res);
    st->res = NULL;
    st->splits[st->cur].done = 1;
    st->open = 0;
    if (exec_ok(op, "CLOSE sl_scan", PGRES_COMMAND_OK) != SL_OK) return SL_ERR;
    while (st->cur < st->nsplits && st->splits[st->cur].done) st->cur++;
    if (st->cur < st->nsplits) return SL_OK;
    if (exec_ok(op, "COMMIT", PGRES_COMMAND_OK) != SL_OK) return SL_ERR;
    PQfinish(st->conn);
    st->conn = NULL;
    return SL_DONE;
}

static int scan_run(sl_op *op)
{
    const scan_plan *pl = op->plan;
    scan_state *st = op->priv;
    while (st->cur < st->nsplits && st->splits[st->cur].done) st->cur++;
    if (st->cur >= st->nsplits) return SL_DONE;
    if (!st->res || st->at >= PQntuples(st->res)) {
        if (fetch(op) != SL_OK) return SL_ERR;
        if (PQntuples(st->res) == 0) return split_end(op) == SL_ERR ? SL_ERR : SL_OK;
    }
    scan_split *sp = &st->splits[st->cur];
    for (int k = 0; k < 256 && st->at < PQntuples(st->res); st->at++) {
        if (sp->skip > 0) { /* emitted before the restore */
            sp->skip--;
            continue;
        }
        int r = st->at;
        sl_arena_reset(&st->sc.arena);
        for (int c = 0; c < pl->ncols; c++) {
            sl_value *v = &st->vals[c];
            memset(v, 0, sizeof *v);
            if (PQgetisnull(st->res, r, c)) {
                v->isnull = true;
                continue;
            }
            char why[256];
            if (sl_jdbc_decode(PQgetvalue(st->res, r, c), PQgetlength(st->res, r, c),
                               PQftype(st->res, c), op->out->fields[c].dt, v, &st->sc, why,
                               sizeof why) != SL_OK)
                return sl_op_fail(op, "%s: column '%s': %s", pl->who, op->out->fields[c].name,
                                  why);
        }
        sl_row row = {.kind = SL_KIND_INSERT, .n = pl->ncols, .ts = SL_TS_NONE, .vals = st->vals};
        sp->emitted++;
        k++;
        int rc = sl_op_emit(op, &row);
        if (rc != SL_OK) {
            st->at++;
            return rc;
        }
    }
    return SL_OK;
}

static void put_le(uint8_t **p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int scan_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    const scan_plan *pl = op->plan;
    scan_state *st = op->priv;
    SL_UNUSED(cpid);
    uint8_t *b = sl_malloc(9 + 13 * (size_t)st->nsplits), *p = b;
    put_le(&p, 2, 1);
    put_le(&p, (uint64_t)pl->nsplits, 4);
    put_le(&p, (uint64_t)st->nsplits, 4);
    for (int i = 0; i < st->nsplits; i++) {
        const scan_split *sp = &st->splits[i];
        put_le(&p, (uint64_t)sp->index, 4);
        put_le(&p, (uint64_t)(sp->emitted + sp->skip), 8);
        put_le(&p, (uint64_t)sp->done, 1);
    }
    *blob = b;
    *len = (size_t)(p - b);
    return SL_OK;
}

/* The restored position of split `index` of ours */
static void restore_split(scan_state *st, int index, int64_t pos, int done)
{
    for (int i = 0; i < st->nsplits; i++)
        if (st->splits[i].index == index) {
            st->splits[i].skip = pos;
            st->splits[i].done = done;
        }
}

static int scan_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    const scan_plan *pl = op->plan;
    scan_state *st = op->priv;
    /* a split no blob names was not read yet (none, when every subtask wrote its own) */
    for (int i = 0; i < nblobs; i++) {
        const uint8_t *b = blobs[i];
        if (lens[i] == 8) { /* the one split's position; -1: a subtask without rows */
            int64_t x = (int64_t)get_le(b, 8);
            if (pl->nsplits != 1 && x >= 0)
                return sl_op_fail(op, "vertex '%s': the checkpoint's scan was not partitioned; "
                                  "this one has %d splits", pl->vid, pl->nsplits);
            if (x >= 0) restore_split(st, 0, x, 0);
            continue;
        }
        if (lens[i] < 9 || b[0] != 2)
            return sl_op_fail(op, "vertex '%s': the stored position (%zu bytes) is not one this "
                              "version reads", pl->vid, lens[i]);
        uint32_t total = (uint32_t)get_le(b + 1, 4), n = (uint32_t)get_le(b + 5, 4);
        if (lens[i] != 9 + 13 * (size_t)n)
            return sl_op_fail(op, "vertex '%s': the stored position has %zu bytes, not %zu",
                              pl->vid, lens[i], 9 + 13 * (size_t)n);
        if ((int)total != pl->nsplits)
            return sl_op_fail(op, "vertex '%s': the checkpoint's scan has %u splits, this one %d "
                              "(the scan.partition.* options changed)", pl->vid, total,
                              pl->nsplits);
        for (uint32_t k = 0; k < n; k++) {
            const uint8_t *e = b + 9 + 13 * k;
            restore_split(st, (int)get_le(e, 4), (int64_t)get_le(e + 4, 8), e[12] != 0);
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
    char *w = pl->pcol && pl->pkind != SL_T_BIGINT ? split_where(pl, 0) : NULL;
    char *q = w       ? sl_sprintf("%s WHERE %s", pl->query, w)
              : pl->pcol ? sl_sprintf("%s WHERE %s BETWEEN 0 AND 0", pl->query, pl->pcol)
                         : sl_strdup(pl->query);
    free(w);
    PGresult *r = PQprepare(c, "", q, 0, NULL);
    free(q);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK
                 ? SL_OK : sl_jdbc_error(c, r, pl->who, "cannot scan", err, errlen);
    PQclear(r);
    r = rc == SL_OK ? PQdescribePrepared(c, "") : NULL;
    if (r && PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = sl_jdbc_error(c, r, pl->who, "describing the scan", err, errlen);
    for (int i = 0; rc == SL_OK && i < pl->ncols; i++)
        if (!sl_jdbc_result_maps(PQftype(r, i), v->declared.fields[i].dt))
            rc = sl_seterr(err, errlen, "%s: column '%s' is %s in PostgreSQL, which does not map "
                           "to %s (declare the column's type as it maps, see docs/CONNECTORS.md)",
                           pl->who, v->declared.fields[i].name, sl_jdbc_type_name(PQftype(r, i)),
                           v->declared.fields[i].dt->text);
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
    {"scan.fetch-size", SL_CT_INT, "0", NULL, "Rows per round trip (0: 1000)."},
    {"scan.auto-commit", SL_CT_BOOL, "true", NULL,
     "Flink's auto-commit of the scan's statements; the scan reads through a cursor either way."},
    {"scan.partition.column", SL_CT_STRING, NULL, NULL,
     "The numeric, DATE or TIMESTAMP column a partitioned scan splits on."},
    {"scan.partition.num", SL_CT_INT, NULL, NULL, "The number of splits."},
    {"scan.partition.lower-bound", SL_CT_STRING, NULL, NULL,
     "The first split's smallest value (an integer, or the column's DATE / TIMESTAMP literal)."},
    {"scan.partition.upper-bound", SL_CT_STRING, NULL, NULL,
     "The last split's largest value (an integer, or the column's DATE / TIMESTAMP literal)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_jdbc_scan = {
    .abi = SL_OP_ABI_VERSION,
    .name = "jdbc-scan",
    .flags = SL_OPF_SOURCE | SL_OPF_UNION_STATE,
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
