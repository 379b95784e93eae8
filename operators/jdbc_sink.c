/*
 * jdbc_sink.c -- the `jdbc-sink` operator: rows into a PostgreSQL table
 * through libpq, with Flink's jdbc connector options (docs/CONNECTORS.md).
 *
 *   url, table-name, username, password   where (jdbc_common.h)
 *   primary-key                   the key columns (a list): upsert mode
 *   sink.buffer-flush.max-rows    rows buffered before a flush (100)
 *   sink.buffer-flush.interval    a flush at least this often (1 s; 0 = off)
 *   sink.max-retries              attempts after a failed flush (3)
 *   sink.delivery-guarantee       at-least-once (default) | exactly-once
 *   sink.transactional-id-prefix  exactly-once: names the prepared transactions
 *
 * Modes. Without a primary key the sink appends: each +I row is one row of
 * an INSERT. With one it upserts, as Flink's: +I and +U become INSERT ... ON
 * CONFLICT (key) DO UPDATE SET every other column, -D a DELETE by key, and
 * -U is skipped (the +U that follows carries the new row).
 *
 * Buffer. Rows are encoded once into one byte buffer in libpq's binary
 * parameter form (jdbc_common.h); in upsert mode an index from each key to
 * its slot keeps one change per key, the last (Flink's reduced buffer), so
 * one batch never touches a row twice. A flush sends the buffer as few
 * multi-row statements (at most 65535 parameters each): one INSERT of every
 * upsert and one DELETE ... WHERE (key) IN (...) of every delete: a round
 * trip per statement, never per row. The buffer, the index and the
 * parameter arrays are allocated at open and reused; the byte buffer grows
 * to its largest batch. A flush runs when max-rows rows arrived, when the
 * interval passed (proc_time), at every checkpoint barrier and at the end
 * of input.
 *
 * At-least-once (the default, Flink's): a flush that fails is retried up
 * to sink.max-retries times, 1 s, 2 s, ... apart, connecting again when the
 * connection was lost; then the task fails with the server's message and
 * restarts from the last checkpoint, whose barrier flushed everything
 * before it.
 *
 * Exactly-once (needs checkpoints): PostgreSQL's two-phase commit. The
 * first flush after a barrier opens a transaction (BEGIN) that every flush
 * until the next barrier writes into; at the barrier of checkpoint c the
 * buffer is flushed and the transaction prepared (PREPARE TRANSACTION
 * '<prefix>-<uid hash>-<subtask>-<c>'), and its checkpoint id goes into the
 * operator state. checkpoint_complete(c) commits (COMMIT PREPARED) every
 * transaction prepared at or before c, on a second connection (the first
 * may already hold the next transaction). restore_state commits the
 * transactions of the restored state -- their checkpoint completed; one
 * already committed is skipped -- and before the first transaction of an
 * attempt, the prepared transactions this subtask (or the old subtasks
 * whose state it got) left behind that no completed checkpoint covers are
 * rolled back (ROLLBACK PREPARED), so a failed attempt leaves nothing. A
 * lost connection loses the open transaction: the task fails and the job
 * restarts from its checkpoint.
 *
 * check_job (the JobManager's REST thread, at submission): connects and
 * prepares the sink's statements, so a wrong URL, wrong credentials, a
 * missing table or column, a type that does not map or a key the table has
 * no unique constraint on refuse the job with the server's message; for
 * exactly-once it also needs checkpoints and max_prepared_transactions > 0.
 *
 * Blob (exactly-once only), little-endian, version 1: u8 version, "SLPG",
 * u32 owner subtask, u32 npending, npending x i64 checkpoint id, u64 FNV-1a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "blob.h"
#include "jdbc_common.h"
#include "log.h"
#include "operator.h"

#define JS_MAX_PARAMS 65535
#define JS_BLOB_VERSION 1
#define JS_NONE UINT32_MAX

static const char js_magic[4] = {'S', 'L', 'P', 'G'};

typedef struct js_plan {
    char *vid;
    char *who;              /* "jdbc sink 'orders'" */
    char *table;            /* table-name, as given (may be schema.table) */
    char conninfo[SL_JDBC_CONNINFO_MAX];
    int ncols;
    int nkeys;
    int keys[SL_MAX_KEY_COLS];
    int64_t max_rows;
    int64_t interval_ms;
    int64_t max_retries;
    int eos;
    char *prefix;           /* exactly-once: "<prefix>-<uid hash>-" */
    Oid types[SL_MAX_FIELDS];
} js_plan;

typedef struct js_slot {
    uint32_t off;           /* encoded values: per column i32 length (-1 NULL), bytes */
    uint32_t keyoff, keylen;
    uint32_t hash;
    uint8_t del;            /* upsert mode: a DELETE of the key */
} js_slot;

typedef struct js_state {
    PGconn *conn;           /* writes (and, exactly-once, the open transaction) */
    PGconn *ctl;            /* exactly-once: COMMIT / ROLLBACK PREPARED */
    sl_buf data;            /* encoded rows of the buffer */
    js_slot *slots;
    int nslots, cap;
    int64_t nrecords;       /* rows since the last flush (reduced ones too) */
    uint32_t *index, mask;  /* upsert: hash -> slot + 1 (open addressing) */
    sl_buf sql;
    const char **pv;        /* parameter arrays for one statement */
    int *pl, *pf;
    Oid *pt;
    int in_txn;             /* exactly-once: BEGIN sent */
    int recovered;          /* lingering transactions rolled back */
    int64_t *pend;          /* checkpoint ids of prepared, uncommitted transactions */
    int npend, cappend;
    int owners[64];         /* old subtasks whose prepared transactions are ours */
    int nowners;
    uint64_t flushes, rows;
} js_state;

/* ---- plan ------------------------------------------------------------------ */

static void js_plan_free(void *p)
{
    js_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->who);
    free(pl->table);
    free(pl->prefix);
    free(pl);
}

static uint32_t fnv32(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

static void *js_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    js_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id);
    const char *tn = sl_vconf_str(v, "table-name", NULL);
    if (!tn || !*tn) {
        sl_seterr(err, errlen, "vertex '%s': option 'table-name' is required", v->id);
        goto fail;
    }
    pl->table = sl_strdup(tn);
    pl->who = sl_sprintf("jdbc sink '%s'", tn);
    if (sl_jdbc_conninfo(v, pl->conninfo, sizeof pl->conninfo, err, errlen) != SL_OK) goto fail;
    pl->ncols = in->n;
    if (sl_jdbc_check_columns(v->id, in, err, errlen) != SL_OK) goto fail;
    for (int i = 0; i < in->n; i++) pl->types[i] = sl_jdbc_param_type(in->fields[i].dt);
    json_t *pk = sl_vconf_array(v, "primary-key");
    size_t i;
    json_t *it;
    json_array_foreach(pk, i, it) {
        const char *c = json_string_value(it);
        int col = c ? sl_schema_find(in, c) : -1;
        if (col < 0) {
            sl_seterr(err, errlen, "vertex '%s': primary-key column '%s' is not an input column",
                      v->id, c ? c : "?");
            goto fail;
        }
        if (pl->nkeys == SL_MAX_KEY_COLS) {
            sl_seterr(err, errlen, "vertex '%s': more than %d key columns", v->id, SL_MAX_KEY_COLS);
            goto fail;
        }
        pl->keys[pl->nkeys++] = col;
    }
    if (sl_vconf_int(v, "sink.buffer-flush.max-rows", 100, &pl->max_rows, err, errlen) != SL_OK ||
        sl_vconf_interval(v, "sink.buffer-flush.interval", 1000, &pl->interval_ms, err,
                          errlen) != SL_OK ||
        sl_vconf_int(v, "sink.max-retries", 3, &pl->max_retries, err, errlen) != SL_OK)
        goto fail;
    if (pl->max_rows < 1 || pl->max_rows > 1000000) {
        sl_seterr(err, errlen, "vertex '%s': sink.buffer-flush.max-rows must be between 1 and "
                  "1000000, not %lld", v->id, (long long)pl->max_rows);
        goto fail;
    }
    if (pl->max_retries < 0) {
        sl_seterr(err, errlen, "vertex '%s': sink.max-retries must not be negative", v->id);
        goto fail;
    }
    const char *g = sl_vconf_str(v, "sink.delivery-guarantee", "at-least-once");
    if (!strcasecmp(g, "exactly-once")) pl->eos = 1;
    else if (strcasecmp(g, "at-least-once") && strcasecmp(g, "none")) {
        sl_seterr(err, errlen, "vertex '%s': option 'sink.delivery-guarantee': '%s' is not "
                  "none, at-least-once or exactly-once", v->id, g);
        goto fail;
    }
    if (pl->eos) {
        const char *pre = sl_vconf_str(v, "sink.transactional-id-prefix", NULL);
        if (!pre || !*pre || strlen(pre) > 100 || strchr(pre, '\'')) {
            sl_seterr(err, errlen, "vertex '%s': exactly-once needs 'sink.transactional-id-prefix' "
                      "(at most 100 characters, no quote; unique to this job: its prepared "
                      "transactions are named after it)", v->id);
            goto fail;
        }
        const char *uid = v->uid ? v->uid : v->id;
        pl->prefix = sl_sprintf("%s-%08x-", pre, fnv32(uid, strlen(uid)));
    }
    return pl;
fail:
    js_plan_free(pl);
    return NULL;
}

/* ---- statements ---------------------------------------------------------------- */

static void column_list(sl_buf *b, const sl_schema *s)
{
    for (int c = 0; c < s->n; c++) {
        if (c) sl_buf_str(b, ", ");
        sl_jdbc_quote(b, s->fields[c].name);
    }
}

/* INSERT of nrows rows (upsert mode: ON CONFLICT ... DO UPDATE) into b. */
static void insert_sql(sl_buf *b, const js_plan *pl, const sl_schema *s, int nrows)
{
    sl_buf_fmt(b, "INSERT INTO %s (", pl->table);
    column_list(b, s);
    sl_buf_str(b, ") VALUES ");
    int n = 1;
    for (int r = 0; r < nrows; r++) {
        sl_buf_str(b, r ? ", (" : "(");
        for (int c = 0; c < s->n; c++) sl_buf_fmt(b, "%s$%d", c ? ", " : "", n++);
        sl_buf_putc(b, ')');
    }
    if (!pl->nkeys) return;
    sl_buf_str(b, " ON CONFLICT (");
    for (int k = 0; k < pl->nkeys; k++) {
        if (k) sl_buf_str(b, ", ");
        sl_jdbc_quote(b, s->fields[pl->keys[k]].name);
    }
    sl_buf_str(b, ") DO ");
    int any = 0;
    for (int c = 0; c < s->n; c++) {
        int key = 0;
        for (int k = 0; k < pl->nkeys; k++) key |= pl->keys[k] == c;
        if (key) continue;
        sl_buf_str(b, any ? ", " : "UPDATE SET ");
        sl_jdbc_quote(b, s->fields[c].name);
        sl_buf_str(b, " = EXCLUDED.");
        sl_jdbc_quote(b, s->fields[c].name);
        any = 1;
    }
    if (!any) sl_buf_str(b, "NOTHING");
}

/* DELETE of nrows keys into b. */
static void delete_sql(sl_buf *b, const js_plan *pl, const sl_schema *s, int nrows)
{
    sl_buf_fmt(b, "DELETE FROM %s WHERE (", pl->table);
    for (int k = 0; k < pl->nkeys; k++) {
        if (k) sl_buf_str(b, ", ");
        sl_jdbc_quote(b, s->fields[pl->keys[k]].name);
    }
    sl_buf_str(b, ") IN (");
    int n = 1;
    for (int r = 0; r < nrows; r++) {
        sl_buf_str(b, r ? ", (" : "(");
        for (int k = 0; k < pl->nkeys; k++) sl_buf_fmt(b, "%s$%d", k ? ", " : "", n++);
        sl_buf_putc(b, ')');
    }
    sl_buf_putc(b, ')');
}

/* ---- check at submission ---------------------------------------------------------- */

/* Prepare sql and plan it (EXPLAIN EXECUTE with NULL parameters, which
 * runs nothing): preparing finds a missing table or column and a type that
 * does not map, planning an ON CONFLICT key without a unique constraint. */
static int check_stmt(PGconn *c, const js_plan *pl, const char *sql, int n, const Oid *types,
                      const char *what, char *err, size_t errlen)
{
    PGresult *r = PQprepare(c, "sl_check", sql, n, types);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK
                 ? SL_OK : sl_jdbc_error(c, r, pl->who, what, err, errlen);
    PQclear(r);
    if (rc != SL_OK) return rc;
    sl_buf b = {0};
    sl_buf_str(&b, "EXPLAIN EXECUTE sl_check(");
    for (int i = 0; i < n; i++) sl_buf_str(&b, i ? ", NULL" : "NULL");
    sl_buf_putc(&b, ')');
    r = PQexec(c, b.p);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) rc = sl_jdbc_error(c, r, pl->who, what, err, errlen);
    PQclear(r);
    sl_buf_free(&b);
    PQclear(PQexec(c, "DEALLOCATE sl_check"));
    return rc;
}

static int js_check_job(const sl_vertex *v, const void *plan, const sl_job_check *jc, char *err,
                        size_t errlen)
{
    const js_plan *pl = plan;
    if (!pl) return SL_OK;
    if (pl->eos && jc->checkpoint_interval_ms <= 0)
        return sl_seterr(err, errlen, "%s: sink.delivery-guarantee 'exactly-once' commits "
                         "transactions when checkpoints complete, but this job takes no "
                         "checkpoints (set execution.checkpointing.interval)", pl->who);
    PGconn *c = sl_jdbc_connect(pl->conninfo, pl->who, err, errlen);
    if (!c) return SL_ERR;
    int rc = SL_OK;
    sl_buf b = {0};
    const sl_schema *s = &v->in[0];
    insert_sql(&b, pl, s, 1);
    Oid types[SL_MAX_FIELDS], ktypes[SL_MAX_KEY_COLS];
    memcpy(types, pl->types, sizeof types);
    PGresult *r;
    rc = check_stmt(c, pl, b.p, s->n, types, "the table does not take the sink's rows", err,
                    errlen);
    if (rc == SL_OK && pl->nkeys) {
        sl_buf_reset(&b);
        delete_sql(&b, pl, s, 1);
        for (int k = 0; k < pl->nkeys; k++) ktypes[k] = pl->types[pl->keys[k]];
        rc = check_stmt(c, pl, b.p, pl->nkeys, ktypes, "cannot delete by key", err, errlen);
    }
    if (rc == SL_OK && pl->eos) {
        r = PQexec(c, "SHOW max_prepared_transactions");
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
            rc = sl_jdbc_error(c, r, pl->who, "reading max_prepared_transactions", err, errlen);
        else if (atoi(PQgetvalue(r, 0, 0)) <= 0)
            rc = sl_seterr(err, errlen, "%s: sink.delivery-guarantee 'exactly-once' prepares "
                           "transactions (two-phase commit), but the server's "
                           "max_prepared_transactions is %s: set it above the sink's parallelism",
                           pl->who, PQgetvalue(r, 0, 0));
        PQclear(r);
    }
    sl_buf_free(&b);
    PQfinish(c);
    return rc;
}

/* ---- connections and statements ---------------------------------------------------- */

static int ensure_conn(sl_op *op, PGconn **c)
{
    const js_plan *pl = op->plan;
    if (*c && PQstatus(*c) == CONNECTION_OK) return SL_OK;
    PQfinish(*c);
    *c = sl_jdbc_connect(pl->conninfo, pl->who, op->err, sizeof op->err);
    return *c ? SL_OK : SL_ERR;
}

/* A statement without parameters; SL_ERR with op->err. */
static int exec_simple(sl_op *op, PGconn *c, const char *sql, const char *what)
{
    const js_plan *pl = op->plan;
    PGresult *r = PQexec(c, sql);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK
                 ? SL_OK : sl_jdbc_error(c, r, pl->who, what, op->err, sizeof op->err);
    PQclear(r);
    return rc;
}

/* Parameters of slot s's columns cols[0..n) at position at. */
static int slot_params(js_state *st, const js_slot *s, const int *cols, int n, int ncols, int at)
{
    const char *base = st->data.p + s->off;
    /* the columns' offsets: walk the encoded values once */
    const char *colp[SL_MAX_FIELDS];
    int32_t lens[SL_MAX_FIELDS];
    const char *p = base;
    for (int c = 0; c < ncols; c++) {
        int32_t len;
        memcpy(&len, p, 4);
        p += 4;
        lens[c] = len;
        colp[c] = len < 0 ? NULL : p;
        if (len > 0) p += len;
    }
    for (int k = 0; k < n; k++) {
        int c = cols ? cols[k] : k;
        st->pv[at + k] = colp[c];
        st->pl[at + k] = lens[c] < 0 ? 0 : lens[c];
    }
    return at + n;
}

/* Send the buffer: the upserts (or inserts), then the deletes. */
static int flush_once(sl_op *op, js_state *st)
{
    const js_plan *pl = op->plan;
    const sl_schema *s = op->in;
    int per = JS_MAX_PARAMS / s->n;
    for (int pass = 0; pass < 2; pass++) {
        int del = pass == 1;
        if (del && !pl->nkeys) break;
        int width = del ? pl->nkeys : s->n;
        int i = 0;
        for (;;) {
            int nrows = 0, np = 0;
            for (; i < st->nslots && nrows < per; i++) {
                const js_slot *sl = &st->slots[i];
                if (sl->del != del) continue;
                for (int k = 0; k < width; k++) st->pt[np + k] = pl->types[del ? pl->keys[k] : k];
                np = slot_params(st, sl, del ? pl->keys : NULL, width, s->n, np);
                nrows++;
            }
            if (!nrows) break;
            sl_buf_reset(&st->sql);
            if (del) delete_sql(&st->sql, pl, s, nrows);
            else insert_sql(&st->sql, pl, s, nrows);
            PGresult *r = PQexecParams(st->conn, st->sql.p, np, st->pt, st->pv, st->pl, st->pf, 0);
            int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
            if (!ok) sl_jdbc_error(st->conn, r, pl->who, del ? "delete" : "write", op->err,
                                   sizeof op->err);
            PQclear(r);
            if (!ok) return SL_ERR;
        }
    }
    return SL_OK;
}

static void buffer_clear(js_state *st)
{
    st->nslots = 0;
    st->nrecords = 0;
    sl_buf_reset(&st->data);
    if (st->index) memset(st->index, 0, ((size_t)st->mask + 1) * sizeof *st->index);
}

static int recover_lingering(sl_op *op, js_state *st);

static int flush(sl_op *op, js_state *st)
{
    const js_plan *pl = op->plan;
    if (st->nslots == 0) {
        st->nrecords = 0;
        return SL_OK;
    }
    if (pl->eos) {
        /* into the open transaction; a failure loses it: the task fails */
        if (!st->in_txn) {
            if (recover_lingering(op, st) != SL_OK) return SL_ERR;
            if (ensure_conn(op, &st->conn) != SL_OK) return SL_ERR;
            if (exec_simple(op, st->conn, "BEGIN", "BEGIN") != SL_OK) return SL_ERR;
            st->in_txn = 1;
        }
        if (flush_once(op, st) != SL_OK) return SL_ERR;
    } else {
        for (int64_t attempt = 0;; attempt++) {
            if (ensure_conn(op, &st->conn) == SL_OK && flush_once(op, st) == SL_OK) break;
            if (attempt >= pl->max_retries) return SL_ERR;
            sl_warn("jdbc", "%s (%d/%d): flush attempt %lld of %lld failed (%s); retrying",
                    pl->who, op->subtask + 1, op->parallelism, (long long)attempt + 1,
                    (long long)pl->max_retries + 1, op->err);
            if (st->conn && PQstatus(st->conn) != CONNECTION_OK) {
                PQfinish(st->conn);
                st->conn = NULL;
            }
            sl_sleep_ms(1000 * SL_MIN(attempt + 1, 5));
        }
    }
    st->flushes++;
    st->rows += (uint64_t)st->nslots;
    buffer_clear(st);
    return SL_OK;
}

/* ---- exactly-once: transaction names, commit, recovery ------------------------------ */

static void gid_of(const js_plan *pl, int owner, int64_t cpid, char *buf, size_t len)
{
    snprintf(buf, len, "%s%d-%lld", pl->prefix, owner, (long long)cpid);
}

/* COMMIT PREPARED (or ROLLBACK); a transaction already gone is done. */
static int end_prepared(sl_op *op, js_state *st, const char *gid, int commit)
{
    const js_plan *pl = op->plan;
    char sql[320];
    snprintf(sql, sizeof sql, "%s PREPARED '%s'", commit ? "COMMIT" : "ROLLBACK", gid);
    for (int64_t attempt = 0;; attempt++) {
        if (ensure_conn(op, &st->ctl) == SL_OK) {
            PGresult *r = PQexec(st->ctl, sql);
            const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
            int ok = PQresultStatus(r) == PGRES_COMMAND_OK || (state && !strcmp(state, "42704"));
            if (!ok) sl_jdbc_error(st->ctl, r, pl->who, sql, op->err, sizeof op->err);
            PQclear(r);
            if (ok) return SL_OK;
        }
        if (attempt >= pl->max_retries) return SL_ERR;
        sl_sleep_ms(1000 * SL_MIN(attempt + 1, 5));
    }
}

static void publish(sl_op *op, js_state *st)
{
    char buf[512];
    snprintf(buf, sizeof buf, "{\"prepared\":%d,\"in-transaction\":%s,\"flushes\":%llu,"
             "\"rows\":%llu}", st->npend, st->in_txn ? "true" : "false",
             (unsigned long long)st->flushes, (unsigned long long)st->rows);
    sl_op_set_info(op, buf);
}

/* Before the first transaction of this attempt: roll back what this
 * subtask and the old subtasks whose state it got prepared and no
 * completed checkpoint covers. */
static int recover_lingering(sl_op *op, js_state *st)
{
    const js_plan *pl = op->plan;
    if (st->recovered) return SL_OK;
    if (ensure_conn(op, &st->ctl) != SL_OK) return SL_ERR;
    PGresult *r = PQexec(st->ctl, "SELECT gid FROM pg_prepared_xacts "
                                  "WHERE database = current_database()");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        sl_jdbc_error(st->ctl, r, pl->who, "listing prepared transactions", op->err,
                      sizeof op->err);
        PQclear(r);
        return SL_ERR;
    }
    int owners[65], n = 0;
    owners[n++] = op->subtask;
    for (int i = 0; i < st->nowners; i++)
        if (st->owners[i] != op->subtask) owners[n++] = st->owners[i];
    size_t plen = strlen(pl->prefix);
    int rc = SL_OK;
    for (int t = 0; rc == SL_OK && t < PQntuples(r); t++) {
        const char *gid = PQgetvalue(r, t, 0);
        if (strncmp(gid, pl->prefix, plen)) continue;
        char *end;
        long owner = strtol(gid + plen, &end, 10);
        if (end == gid + plen || *end != '-') continue;
        int mine = 0;
        for (int i = 0; i < n; i++) mine |= owners[i] == owner;
        int64_t cpid = strtoll(end + 1, NULL, 10);
        for (int i = 0; i < st->npend; i++) mine &= !(owner == op->subtask && st->pend[i] == cpid);
        if (!mine) continue;
        rc = end_prepared(op, st, gid, 0);
        if (rc == SL_OK)
            sl_info("jdbc", "%s (%d/%d): rolled back prepared transaction '%s' of a failed "
                    "attempt", pl->who, op->subtask + 1, op->parallelism, gid);
    }
    PQclear(r);
    if (rc == SL_OK) st->recovered = 1;
    return rc;
}

/* ---- operator ---------------------------------------------------------------------- */

static int js_open(sl_op *op)
{
    const js_plan *pl = op->plan;
    js_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    if (pl->eos && !op->checkpointing)
        return sl_op_fail(op, "%s: sink.delivery-guarantee 'exactly-once' commits transactions "
                          "when checkpoints complete, but this job takes no checkpoints (set "
                          "execution.checkpointing.interval)", pl->who);
    st->cap = (int)pl->max_rows;
    st->slots = sl_calloc((size_t)st->cap, sizeof *st->slots);
    if (pl->nkeys) {
        uint32_t n = 16;
        while (n < 2u * (uint32_t)st->cap) n *= 2;
        st->mask = n - 1;
        st->index = sl_calloc(n, sizeof *st->index);
    }
    int maxp = SL_MIN(JS_MAX_PARAMS, st->cap * op->in->n);
    st->pv = sl_calloc((size_t)maxp, sizeof *st->pv);
    st->pl = sl_calloc((size_t)maxp, sizeof *st->pl);
    st->pf = sl_calloc((size_t)maxp, sizeof *st->pf);
    st->pt = sl_calloc((size_t)maxp, sizeof *st->pt);
    for (int i = 0; i < maxp; i++) st->pf[i] = 1; /* binary */
    sl_buf_reserve(&st->data, 64 * 1024);
    if (ensure_conn(op, &st->conn) != SL_OK) return SL_ERR;
    if (pl->interval_ms > 0) op->proc_time_at = sl_op_processing_time(op) + pl->interval_ms;
    return SL_OK;
}

static int js_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    const js_plan *pl = op->plan;
    js_state *st = op->priv;
    if (row->kind == SL_KIND_UPDATE_BEFORE && pl->nkeys) return SL_OK;
    int del = row->kind == SL_KIND_DELETE;
    if (!pl->nkeys && row->kind != SL_KIND_INSERT)
        return sl_op_fail(op, "%s: a %s row arrived, but a jdbc table without a PRIMARY KEY "
                          "takes inserts only (declare the key to write an updating query)",
                          pl->who, sl_rowkind_short(row->kind));
    js_slot *slot = NULL;
    uint32_t b = 0;
    size_t keyoff = st->data.len, keylen = 0, h = 0;
    if (pl->nkeys) {
        size_t need = sl_row_key_size(row, op->in, pl->keys, pl->nkeys);
        char *kp = sl_buf_room(&st->data, need);
        keylen = sl_row_key_encode(row, op->in, pl->keys, pl->nkeys, (uint8_t *)kp, need);
        sl_buf_added(&st->data, keylen);
        h = fnv32(kp, keylen);
        for (b = (uint32_t)h & st->mask; st->index[b]; b = (b + 1) & st->mask) {
            js_slot *s = &st->slots[st->index[b] - 1];
            if (s->hash == (uint32_t)h && s->keylen == keylen &&
                !memcmp(st->data.p + s->keyoff, st->data.p + keyoff, keylen)) {
                slot = s;
                break;
            }
        }
    }
    if (!slot) {
        slot = &st->slots[st->nslots++];
        slot->keyoff = (uint32_t)keyoff;
        slot->keylen = (uint32_t)keylen;
        slot->hash = (uint32_t)h;
        if (pl->nkeys) st->index[b] = (uint32_t)st->nslots;
    } else {
        st->data.len = keyoff; /* the slot keeps its first copy of the key */
    }
    slot->del = (uint8_t)del;
    slot->off = (uint32_t)st->data.len;
    for (int c = 0; c < op->in->n; c++) {
        const sl_value *v = &row->vals[c];
        size_t at = st->data.len;
        int32_t len = -1;
        sl_buf_put(&st->data, &len, 4);
        if (v->isnull) continue;
        sl_jdbc_encode(&st->data, v, op->in->fields[c].dt);
        len = (int32_t)(st->data.len - at - 4);
        memcpy(st->data.p + at, &len, 4);
    }
    st->nrecords++;
    if (st->nslots >= st->cap || st->nrecords >= pl->max_rows || st->data.len >= (64u << 20))
        return flush(op, st);
    return SL_OK;
}

static int js_proc_time(sl_op *op, int64_t now_ms)
{
    const js_plan *pl = op->plan;
    op->proc_time_at = now_ms + pl->interval_ms;
    return flush(op, op->priv);
}

static int js_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    const js_plan *pl = op->plan;
    js_state *st = op->priv;
    *blob = NULL;
    *len = 0;
    if (flush(op, st) != SL_OK) return SL_ERR;
    if (!pl->eos) return SL_OK;
    if (recover_lingering(op, st) != SL_OK) return SL_ERR;
    if (st->in_txn) {
        char gid[256], sql[320];
        gid_of(pl, op->subtask, cpid, gid, sizeof gid);
        snprintf(sql, sizeof sql, "PREPARE TRANSACTION '%s'", gid);
        if (exec_simple(op, st->conn, sql, "PREPARE TRANSACTION") != SL_OK) return SL_ERR;
        st->in_txn = 0;
        if (st->npend == st->cappend) {
            st->cappend = st->cappend ? st->cappend * 2 : 4;
            st->pend = sl_realloc(st->pend, (size_t)st->cappend * sizeof *st->pend);
        }
        st->pend[st->npend++] = cpid;
    }
    size_t total = 1 + 4 + 4 + 4 + (size_t)st->npend * 8 + 8;
    unsigned char *bl = sl_malloc(total), *p = bl;
    *p++ = JS_BLOB_VERSION;
    memcpy(p, js_magic, 4);
    p += 4;
    p = sl_put_le_n(p, (uint32_t)op->subtask, 4);
    p = sl_put_le_n(p, (uint32_t)st->npend, 4);
    for (int i = 0; i < st->npend; i++) p = sl_put_le_n(p, (uint64_t)st->pend[i], 8);
    p = sl_put_le_n(p, sl_blob_fnv1a(bl, (size_t)(p - bl)), 8);
    SL_ASSERT((size_t)(p - bl) == total);
    *blob = bl;
    *len = total;
    publish(op, st);
    return SL_OK;
}

static int js_checkpoint_complete(sl_op *op, int64_t cpid)
{
    const js_plan *pl = op->plan;
    js_state *st = op->priv;
    if (!pl->eos) return SL_OK;
    int k = 0;
    for (; k < st->npend && st->pend[k] <= cpid; k++) {
        char gid[256];
        gid_of(pl, op->subtask, st->pend[k], gid, sizeof gid);
        if (end_prepared(op, st, gid, 1) != SL_OK) return SL_ERR;
    }
    if (k) {
        memmove(st->pend, st->pend + k, (size_t)(st->npend - k) * sizeof *st->pend);
        st->npend -= k;
        publish(op, st);
    }
    return SL_OK;
}

static int js_checkpoint_abort(sl_op *op, int64_t cpid)
{
    (void)op;
    (void)cpid;
    return SL_OK; /* prepared transactions wait for the next completed checkpoint */
}

static int js_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    const js_plan *pl = op->plan;
    js_state *st = op->priv;
    if (!pl->eos) return SL_OK;
    for (int k = 0; k < nblobs; k++) {
        const unsigned char *b = blobs[k], *p;
        size_t len = lens[k];
        if (len < 1 + 4 + 4 + 4 + 8 || memcmp(b + 1, js_magic, 4) || b[0] != JS_BLOB_VERSION)
            return sl_op_fail(op, "%s subtask %d: cannot restore state %d of %d: not jdbc sink "
                              "state of version %d", pl->who, op->subtask, k + 1, nblobs,
                              JS_BLOB_VERSION);
        p = b + len - 8;
        if (sl_get_le_n(&p, 8) != sl_blob_fnv1a(b, len - 8))
            return sl_op_fail(op, "%s subtask %d: cannot restore state %d of %d: damaged "
                              "(checksum)", pl->who, op->subtask, k + 1, nblobs);
        p = b + 5;
        int owner = (int)sl_get_le_n(&p, 4);
        uint64_t np = sl_get_le_n(&p, 4);
        if (np * 8 != len - (1 + 4 + 4 + 4 + 8))
            return sl_op_fail(op, "%s subtask %d: cannot restore state %d of %d: damaged "
                              "(length)", pl->who, op->subtask, k + 1, nblobs);
        /* their checkpoint completed: commit them */
        for (uint64_t i = 0; i < np; i++) {
            int64_t c = (int64_t)sl_get_le_n(&p, 8);
            char gid[256];
            gid_of(pl, owner, c, gid, sizeof gid);
            if (end_prepared(op, st, gid, 1) != SL_OK) return SL_ERR;
            sl_info("jdbc", "%s (%d/%d): prepared transaction '%s' committed on restore",
                    pl->who, op->subtask + 1, op->parallelism, gid);
        }
        if (st->nowners < (int)SL_ARRAY_LEN(st->owners)) st->owners[st->nowners++] = owner;
    }
    return SL_OK;
}

static int js_end_input(sl_op *op, int input)
{
    (void)input;
    const js_plan *pl = op->plan;
    js_state *st = op->priv;
    /* exactly-once with a final checkpoint: its barrier prepares the rest and
     * its completion commits it */
    if (pl->eos && op->final_checkpoint) return SL_OK;
    if (flush(op, st) != SL_OK) return SL_ERR;
    if (pl->eos) {
        if (st->in_txn && exec_simple(op, st->conn, "COMMIT", "COMMIT") != SL_OK) return SL_ERR;
        st->in_txn = 0;
        for (int i = 0; i < st->npend; i++) {
            char gid[256];
            gid_of(pl, op->subtask, st->pend[i], gid, sizeof gid);
            if (end_prepared(op, st, gid, 1) != SL_OK) return SL_ERR;
        }
        st->npend = 0;
    }
    publish(op, st);
    return SL_OK;
}

static void js_close(sl_op *op)
{
    js_state *st = op->priv;
    if (!st) return;
    /* an open transaction ends with the connection; prepared ones stay for
     * the next completed checkpoint or the next attempt's recovery */
    PQfinish(st->conn);
    PQfinish(st->ctl);
    sl_buf_free(&st->data);
    sl_buf_free(&st->sql);
    free(st->slots);
    free(st->index);
    free(st->pv);
    free(st->pl);
    free(st->pf);
    free(st->pt);
    free(st->pend);
    free(st);
    op->priv = NULL;
}

static const sl_op_option js_options[] = {
    {"url", SL_CT_STRING, NULL, NULL, "The JDBC URL: jdbc:postgresql://host:port/database."},
    {"table-name", SL_CT_STRING, NULL, NULL, "The table written (may be schema.table)."},
    {"username", SL_CT_STRING, NULL, NULL, "The user name."},
    {"password", SL_CT_STRING, NULL, NULL, "The password."},
    {"primary-key", SL_CT_JSON, NULL, NULL,
     "Key columns (a list): upsert mode (INSERT ... ON CONFLICT, DELETE by key)."},
    {"sink.buffer-flush.max-rows", SL_CT_STRING, "100", NULL,
     "Rows buffered before a flush."},
    {"sink.buffer-flush.interval", SL_CT_STRING, "1 s", NULL,
     "Longest time rows wait in the buffer (0 = only max-rows and checkpoints flush)."},
    {"sink.max-retries", SL_CT_STRING, "3", NULL, "Attempts after a failed flush."},
    {"sink.delivery-guarantee", SL_CT_STRING, "at-least-once", NULL,
     "at-least-once, or exactly-once through two-phase commit (PREPARE TRANSACTION)."},
    {"sink.transactional-id-prefix", SL_CT_STRING, NULL, NULL,
     "exactly-once: prefix of the prepared transactions' names, unique to the job."},
    {"sink.parallelism", SL_CT_STRING, NULL, NULL, "Parallelism of the sink."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_jdbc_sink = {
    .abi = SL_OP_ABI_VERSION,
    .name = "jdbc-sink",
    .flags = SL_OPF_SINK,
    .options = js_options,
    .plan = js_plan_new,
    .plan_free = js_plan_free,
    .check_job = js_check_job,
    .open = js_open,
    .process = js_process,
    .proc_time = js_proc_time,
    .end_input = js_end_input,
    .close = js_close,
    .snapshot_state = js_snapshot,
    .restore_state = js_restore,
    .checkpoint_complete = js_checkpoint_complete,
    .checkpoint_abort = js_checkpoint_abort,
};
