/*
 * jdbc_lookup.c -- the `jdbc-lookup-join` operator: Flink SQL's
 * processing-time lookup join against a PostgreSQL table
 * (`s JOIN t FOR SYSTEM_TIME AS OF s.proc_time AS d ON s.x = d.k`, t a
 * 'connector' = 'jdbc' table; docs/CONNECTORS.md).
 *
 * Config: join-type, left-keys, right-keys, left-columns and table as the
 * `lookup_join` operator's (lookup_join.c); url, table-name, username,
 * password (jdbc_common.h); the vertex's "schema" is the table's columns.
 *   lookup.cache                      NONE (default) | PARTIAL
 *   lookup.partial-cache.max-rows     keys the cache holds (PARTIAL needs it)
 *   lookup.partial-cache.expire-after-write / -access   durations (0 = never)
 *   lookup.partial-cache.cache-missing-key              true (default)
 *   lookup.cache.max-rows, lookup.cache.ttl, lookup.cache.caching-missing-key
 *                                     Flink's older names of the same (max-rows
 *                                     alone turns the cache on)
 *   lookup.max-retries                attempts after a failed query (3)
 *
 * Rows. For each input row the key's matches come from the cache or from
 * one prepared statement (SELECT columns FROM table WHERE k1 = $1 AND ...,
 * binary parameters and results): a round trip per row the cache does not
 * answer, as Flink's synchronous JDBC lookup. The matches are decoded into
 * one scratch buffer (per row: per column a null byte, then 8 bytes or a
 * length and the bytes), which the output rows borrow from; a cached key
 * keeps a copy of that buffer in its entry, whose allocation is reused when
 * the entry is. The cache is bounded: max-rows entries in one array, an
 * index of chained buckets, and a least-recently-used list that evicts the
 * oldest when it is full; an entry past expire-after-write (since loaded) or
 * expire-after-access (since last used) is loaded again. A NULL key column
 * matches nothing; a left join emits the row with NULLs when nothing
 * matches.
 *
 * check_job (the JobManager's REST thread): connects and prepares the
 * statement, so a wrong URL or credentials, a missing table or column, and
 * a column whose PostgreSQL type does not map to the declared one refuse
 * the job with the server's message (or the column and both types).
 *
 * Checkpoints: no state. The cache starts empty after a restore, as Flink's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "jdbc_common.h"
#include "log.h"
#include "operator.h"

#define LK_NONE UINT32_MAX

typedef struct lk_plan {
    char *vid;
    char *who;              /* "lookup join 'x': jdbc table 'dim'" */
    char *table;
    char conninfo[SL_JDBC_CONNINFO_MAX];
    char *sql;              /* the lookup statement */
    int left;
    int nkeys;
    int lkeys[SL_MAX_KEY_COLS], rkeys[SL_MAX_KEY_COLS];
    Oid ktypes[SL_MAX_KEY_COLS];
    int nleft, nright;
    sl_schema right;
    int64_t cache_rows;     /* 0 = no cache */
    int64_t expire_write_ms, expire_access_ms;
    int cache_missing;
    int64_t max_retries;
} lk_plan;

typedef struct lk_entry {
    uint32_t hash, next;    /* bucket chain */
    uint32_t lru_prev, lru_next;
    int64_t written, accessed; /* wall-clock ms */
    char *data;             /* key bytes, then the encoded matches */
    size_t klen, dlen, cap;
    uint32_t nrows;
} lk_entry;

typedef struct lk_state {
    PGconn *conn;
    int prepared;
    sl_buf key;             /* the current row's encoded key */
    sl_buf res;             /* encoded matches of one lookup */
    sl_jdbc_scratch sc;     /* arrays being decoded */
    uint32_t nres;
    sl_value *out;
    const char *pv[SL_MAX_KEY_COLS];
    int pl[SL_MAX_KEY_COLS], pf[SL_MAX_KEY_COLS];
    /* the cache */
    lk_entry *e;
    uint32_t n, *heads, mask;
    uint32_t lru_head, lru_tail; /* most and least recently used */
    uint64_t hits, misses, queries;
    int64_t published_at;
} lk_state;

/* ---- plan ------------------------------------------------------------------ */

static void lk_plan_free(void *p)
{
    lk_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->who);
    free(pl->table);
    free(pl->sql);
    sl_schema_free(&pl->right);
    free(pl);
}

static int keys_of(const sl_vertex *v, const char *opt, const sl_schema *s, int *cols, int *n,
                   char *err, size_t errlen)
{
    json_t *a = sl_vconf_array(v, opt), *it;
    size_t i;
    *n = 0;
    if (!a || !json_array_size(a))
        return sl_seterr(err, errlen, "vertex '%s': '%s' must list key columns", v->id, opt);
    json_array_foreach(a, i, it) {
        const char *c = json_string_value(it);
        int col = c ? sl_schema_find(s, c) : -1;
        if (col < 0 || *n == SL_MAX_KEY_COLS)
            return sl_seterr(err, errlen, "vertex '%s': %s column '%s' is not there", v->id, opt,
                             c ? c : "?");
        cols[(*n)++] = col;
    }
    return SL_OK;
}

static int opt_bool(const sl_vertex *v, const char *k1, const char *k2, int dflt)
{
    const char *s = sl_vconf_str(v, k1, NULL);
    if (!s) s = sl_vconf_str(v, k2, NULL);
    return s ? !strcasecmp(s, "true") : dflt;
}

static void *lk_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    lk_plan *pl = sl_calloc(1, sizeof *pl);
    sl_schema_init(&pl->right);
    pl->vid = sl_strdup(v->id);
    const char *tn = sl_vconf_str(v, "table-name", NULL);
    if (!tn || !*tn) {
        sl_seterr(err, errlen, "vertex '%s': option 'table-name' is required", v->id);
        goto fail;
    }
    pl->table = sl_strdup(tn);
    pl->who = sl_sprintf("lookup join '%s': jdbc table '%s'", v->id, tn);
    if (sl_jdbc_conninfo(v, pl->conninfo, sizeof pl->conninfo, err, errlen) != SL_OK) goto fail;
    if (pc->nin != 1 || v->declared.n == 0) {
        sl_seterr(err, errlen, "vertex '%s': a lookup join takes one input and the table's "
                  "columns as its 'schema'", v->id);
        goto fail;
    }
    sl_schema_copy(&pl->right, &v->declared);
    pl->nright = pl->right.n;
    const char *t = sl_vconf_str(v, "join-type", "inner");
    pl->left = !strcasecmp(t, "left");
    if (!pl->left && strcasecmp(t, "inner")) {
        sl_seterr(err, errlen, "vertex '%s': a lookup join is inner or left, not '%s'", v->id, t);
        goto fail;
    }
    int nl, nr;
    if (keys_of(v, "left-keys", in, pl->lkeys, &nl, err, errlen) != SL_OK ||
        keys_of(v, "right-keys", &pl->right, pl->rkeys, &nr, err, errlen) != SL_OK)
        goto fail;
    if (nl != nr) {
        sl_seterr(err, errlen, "vertex '%s': %d left-keys but %d right-keys", v->id, nl, nr);
        goto fail;
    }
    pl->nkeys = nl;
    if (sl_jdbc_check_columns(v->id, &pl->right, err, errlen) != SL_OK) goto fail;
    for (int k = 0; k < nl; k++) {
        sl_type a = in->fields[pl->lkeys[k]].type, b = pl->right.fields[pl->rkeys[k]].type;
        if (a != b) {
            sl_seterr(err, errlen, "vertex '%s': key %d pairs %s with %s; cast one", v->id, k + 1,
                      sl_type_name(a), sl_type_name(b));
            goto fail;
        }
        pl->ktypes[k] = sl_jdbc_param_type(pl->right.fields[pl->rkeys[k]].dt);
    }
    int64_t ncols;
    if (sl_vconf_int(v, "left-columns", in->n, &ncols, err, errlen) != SL_OK) goto fail;
    if (ncols < 0 || ncols > in->n || ncols + pl->nright > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': left-columns %lld does not fit", v->id,
                  (long long)ncols);
        goto fail;
    }
    pl->nleft = (int)ncols;
    /* the cache: Flink's current names, or the older ones */
    const char *cache = sl_vconf_str(v, "lookup.cache", NULL);
    int64_t rows_new = 0, rows_old = 0, ttl_old = 0;
    if (sl_vconf_int(v, "lookup.partial-cache.max-rows", 0, &rows_new, err, errlen) != SL_OK ||
        sl_vconf_int(v, "lookup.cache.max-rows", 0, &rows_old, err, errlen) != SL_OK ||
        sl_vconf_interval(v, "lookup.cache.ttl", 0, &ttl_old, err, errlen) != SL_OK ||
        sl_vconf_interval(v, "lookup.partial-cache.expire-after-write", ttl_old,
                          &pl->expire_write_ms, err, errlen) != SL_OK ||
        sl_vconf_interval(v, "lookup.partial-cache.expire-after-access", 0,
                          &pl->expire_access_ms, err, errlen) != SL_OK ||
        sl_vconf_int(v, "lookup.max-retries", 3, &pl->max_retries, err, errlen) != SL_OK)
        goto fail;
    if (cache && !strcasecmp(cache, "PARTIAL")) {
        if (rows_new <= 0) {
            sl_seterr(err, errlen, "vertex '%s': 'lookup.cache' = 'PARTIAL' needs "
                      "'lookup.partial-cache.max-rows' (the cache's bound)", v->id);
            goto fail;
        }
        pl->cache_rows = rows_new;
    } else if (!cache && rows_old > 0) {
        pl->cache_rows = rows_old;
    }
    if (pl->cache_rows > 10000000) pl->cache_rows = 10000000;
    pl->cache_missing = opt_bool(v, "lookup.partial-cache.cache-missing-key",
                                 "lookup.cache.caching-missing-key", 1);
    sl_buf b = {0};
    sl_buf_str(&b, "SELECT ");
    for (int c = 0; c < pl->nright; c++) {
        if (c) sl_buf_str(&b, ", ");
        sl_jdbc_quote(&b, pl->right.fields[c].name);
    }
    sl_buf_fmt(&b, " FROM %s WHERE ", tn);
    for (int k = 0; k < pl->nkeys; k++) {
        if (k) sl_buf_str(&b, " AND ");
        sl_jdbc_quote(&b, pl->right.fields[pl->rkeys[k]].name);
        sl_buf_fmt(&b, " = $%d", k + 1);
    }
    pl->sql = sl_buf_take(&b);
    sl_schema_init(pc->out);
    for (int i = 0; i < pl->nleft; i++) sl_schema_add_dt(pc->out, in->fields[i].name, in->fields[i].dt);
    for (int i = 0; i < pl->nright; i++) {
        const char *name = pl->right.fields[i].name;
        char alt[300];
        snprintf(alt, sizeof alt, "%s", name);
        for (int k = 0; sl_schema_find(pc->out, alt) >= 0; k++) snprintf(alt, sizeof alt, "%s%d", name, k);
        sl_schema_add_dt(pc->out, alt, pl->right.fields[i].dt);
    }
    return pl;
fail:
    lk_plan_free(pl);
    return NULL;
}

/* Prepare the lookup statement on c and check its columns' types. */
static int prepare(const lk_plan *pl, PGconn *c, char *err, size_t errlen)
{
    PGresult *r = PQprepare(c, "lookup", pl->sql, pl->nkeys, pl->ktypes);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK
                 ? SL_OK : sl_jdbc_error(c, r, pl->who, "cannot look rows up", err, errlen);
    PQclear(r);
    if (rc != SL_OK) return rc;
    r = PQdescribePrepared(c, "lookup");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = sl_jdbc_error(c, r, pl->who, "describing the lookup", err, errlen);
    for (int i = 0; rc == SL_OK && i < pl->nright; i++)
        if (!sl_jdbc_result_maps(PQftype(r, i), pl->right.fields[i].dt))
            rc = sl_seterr(err, errlen, "%s: column '%s' is %s in PostgreSQL, which does not map "
                           "to %s (declare the column's type as it maps, see docs/CONNECTORS.md)",
                           pl->who, pl->right.fields[i].name, sl_jdbc_type_name(PQftype(r, i)),
                           pl->right.fields[i].dt->text);
    PQclear(r);
    return rc;
}

static int lk_check_job(const sl_vertex *v, const void *plan, const sl_job_check *jc, char *err,
                        size_t errlen)
{
    (void)v;
    (void)jc;
    const lk_plan *pl = plan;
    if (!pl) return SL_OK;
    PGconn *c = sl_jdbc_connect(pl->conninfo, pl->who, err, errlen);
    if (!c) return SL_ERR;
    int rc = prepare(pl, c, err, errlen);
    PQfinish(c);
    return rc;
}

/* ---- the cache ------------------------------------------------------------------ */

static uint32_t fnv32(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

static void lru_unlink(lk_state *st, uint32_t i)
{
    lk_entry *e = &st->e[i];
    if (e->lru_prev != LK_NONE) st->e[e->lru_prev].lru_next = e->lru_next;
    else st->lru_head = e->lru_next;
    if (e->lru_next != LK_NONE) st->e[e->lru_next].lru_prev = e->lru_prev;
    else st->lru_tail = e->lru_prev;
}

static void lru_front(lk_state *st, uint32_t i)
{
    lk_entry *e = &st->e[i];
    e->lru_prev = LK_NONE;
    e->lru_next = st->lru_head;
    if (st->lru_head != LK_NONE) st->e[st->lru_head].lru_prev = i;
    st->lru_head = i;
    if (st->lru_tail == LK_NONE) st->lru_tail = i;
}

static void bucket_remove(lk_state *st, uint32_t i)
{
    uint32_t *p = &st->heads[st->e[i].hash & st->mask];
    while (*p != i) p = &st->e[*p].next;
    *p = st->e[i].next;
}

static uint32_t cache_find(lk_state *st, uint32_t h, const char *key, size_t klen)
{
    for (uint32_t i = st->heads[h & st->mask]; i != LK_NONE; i = st->e[i].next)
        if (st->e[i].hash == h && st->e[i].klen == klen && !memcmp(st->e[i].data, key, klen))
            return i;
    return LK_NONE;
}

/* Keep the current lookup (st->res) under the key, evicting the least
 * recently used entry when the cache is full. */
static void cache_put(sl_op *op, lk_state *st, uint32_t h, int64_t now)
{
    const lk_plan *pl = op->plan;
    uint32_t i = cache_find(st, h, st->key.p, st->key.len);
    if (i != LK_NONE) {
        lru_unlink(st, i);
        bucket_remove(st, i);
    } else if (st->n < (uint32_t)pl->cache_rows) {
        i = st->n++;
    } else {
        i = st->lru_tail;
        lru_unlink(st, i);
        bucket_remove(st, i);
    }
    lk_entry *e = &st->e[i];
    size_t need = st->key.len + st->res.len;
    if (need > e->cap) {
        e->cap = need < 64 ? 64 : need;
        e->data = sl_realloc(e->data, e->cap);
    }
    memcpy(e->data, st->key.p, st->key.len);
    if (st->res.len) memcpy(e->data + st->key.len, st->res.p, st->res.len);
    e->klen = st->key.len;
    e->dlen = st->res.len;
    e->nrows = st->nres;
    e->hash = h;
    e->written = e->accessed = now;
    e->next = st->heads[h & st->mask];
    st->heads[h & st->mask] = i;
    lru_front(st, i);
}

/* ---- lookups --------------------------------------------------------------------- */

static int ensure_conn(sl_op *op, lk_state *st)
{
    const lk_plan *pl = op->plan;
    if (st->conn && PQstatus(st->conn) == CONNECTION_OK && st->prepared) return SL_OK;
    PQfinish(st->conn);
    st->prepared = 0;
    st->conn = sl_jdbc_connect(pl->conninfo, pl->who, op->err, sizeof op->err);
    if (!st->conn) return SL_ERR;
    if (prepare(pl, st->conn, op->err, sizeof op->err) != SL_OK) return SL_ERR;
    st->prepared = 1;
    return SL_OK;
}

/* The matches of the current row's key into st->res, from the database. */
static int query(sl_op *op, lk_state *st, const sl_row *row)
{
    const lk_plan *pl = op->plan;
    sl_buf_reset(&st->res);
    st->nres = 0;
    /* parameters: each key value encoded after the key bytes in st->key */
    size_t at[SL_MAX_KEY_COLS];
    size_t base = st->key.len;
    for (int k = 0; k < pl->nkeys; k++) {
        at[k] = st->key.len;
        sl_jdbc_encode(&st->key, &row->vals[pl->lkeys[k]], op->in->fields[pl->lkeys[k]].dt);
        st->pl[k] = (int)(st->key.len - at[k]);
        st->pf[k] = 1;
    }
    for (int k = 0; k < pl->nkeys; k++) st->pv[k] = st->key.p + at[k];
    PGresult *r = NULL;
    for (int64_t attempt = 0;; attempt++) {
        if (ensure_conn(op, st) == SL_OK) {
            r = PQexecPrepared(st->conn, "lookup", pl->nkeys, st->pv, st->pl, st->pf, 1);
            if (PQresultStatus(r) == PGRES_TUPLES_OK) break;
            sl_jdbc_error(st->conn, r, pl->who, "lookup", op->err, sizeof op->err);
            PQclear(r);
            r = NULL;
        }
        if (attempt >= pl->max_retries) {
            st->key.len = base;
            return SL_ERR;
        }
        sl_warn("jdbc", "%s (%d/%d): lookup attempt %lld failed (%s); retrying", pl->who,
                op->subtask + 1, op->parallelism, (long long)attempt + 1, op->err);
        st->prepared = 0;
        sl_sleep_ms(1000 * SL_MIN(attempt + 1, 5));
    }
    st->key.len = base;
    st->queries++;
    int nt = PQntuples(r), rc = SL_OK;
    for (int t = 0; rc == SL_OK && t < nt; t++) {
        sl_arena_reset(&st->sc.arena);
        for (int c = 0; c < pl->nright; c++) {
            const sl_dtype *dt = pl->right.fields[c].dt;
            sl_value v = {0};
            char why[256];
            if (!PQgetisnull(r, t, c) &&
                sl_jdbc_decode(PQgetvalue(r, t, c), PQgetlength(r, t, c), PQftype(r, c), dt, &v,
                               &st->sc, why, sizeof why) != SL_OK) {
                rc = sl_op_fail(op, "%s: column '%s': %s", pl->who, pl->right.fields[c].name,
                                why);
                break;
            }
            if (PQgetisnull(r, t, c) || v.isnull) { /* (a DECIMAL beyond its precision) */
                sl_buf_putc(&st->res, 1);
                continue;
            }
            sl_buf_putc(&st->res, 0);
            size_t n = sl_datum_size(&v, dt);
            sl_datum_put((uint8_t *)sl_buf_room(&st->res, n), &v, dt);
            sl_buf_added(&st->res, n);
        }
        st->nres++;
    }
    PQclear(r);
    return rc;
}

/* Emit the row joined with nrows encoded matches at p. */
static int emit_matches(sl_op *op, lk_state *st, const sl_row *row, const char *p, uint32_t nrows)
{
    const lk_plan *pl = op->plan;
    sl_value *out = st->out;
    memcpy(out, row->vals, (size_t)pl->nleft * sizeof *out);
    sl_row o = {.kind = row->kind, .n = pl->nleft + pl->nright, .vals = out, .ts = row->ts};
    for (uint32_t t = 0; t < nrows; t++) {
        for (int c = 0; c < pl->nright; c++) {
            sl_value *v = &out[pl->nleft + c];
            v->isnull = *p++ != 0;
            if (v->isnull) continue;
            size_t used = 0;
            char why[128];
            /* our own bytes: they read back */
            if (sl_datum_get((const uint8_t *)p, SIZE_MAX / 2, pl->right.fields[c].dt, v, &used,
                             why, sizeof why) != SL_OK)
                return sl_op_fail(op, "%s: a cached row does not read back: %s", pl->who, why);
            p += used;
        }
        int rc = sl_op_emit(op, &o);
        if (rc != SL_OK) return rc;
    }
    if (nrows || !pl->left) return SL_OK;
    for (int c = 0; c < pl->nright; c++) out[pl->nleft + c].isnull = true;
    return sl_op_emit(op, &o);
}

static void publish(sl_op *op, lk_state *st, int64_t now)
{
    if (now - st->published_at < 1000) return;
    st->published_at = now;
    char buf[256];
    snprintf(buf, sizeof buf, "{\"cached\":%u,\"hits\":%llu,\"misses\":%llu,\"queries\":%llu}",
             st->n, (unsigned long long)st->hits, (unsigned long long)st->misses,
             (unsigned long long)st->queries);
    sl_op_set_info(op, buf);
}

static int lk_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    const lk_plan *pl = op->plan;
    lk_state *st = op->priv;
    int nullkey = 0;
    for (int k = 0; k < pl->nkeys; k++) nullkey |= row->vals[pl->lkeys[k]].isnull;
    if (nullkey) return emit_matches(op, st, row, NULL, 0);
    sl_buf_reset(&st->key);
    size_t need = sl_row_key_size(row, op->in, pl->lkeys, pl->nkeys);
    char *kp = sl_buf_room(&st->key, need);
    sl_buf_added(&st->key, sl_row_key_encode(row, op->in, pl->lkeys, pl->nkeys, (uint8_t *)kp,
                                             need));
    if (!pl->cache_rows) {
        if (query(op, st, row) != SL_OK) return SL_ERR;
        return emit_matches(op, st, row, st->res.p, st->nres);
    }
    int64_t now = sl_op_processing_time(op);
    uint32_t h = fnv32(st->key.p, st->key.len);
    uint32_t i = cache_find(st, h, st->key.p, st->key.len);
    if (i != LK_NONE) {
        lk_entry *e = &st->e[i];
        int stale = (pl->expire_write_ms > 0 && now - e->written >= pl->expire_write_ms) ||
                    (pl->expire_access_ms > 0 && now - e->accessed >= pl->expire_access_ms);
        if (!stale) {
            st->hits++;
            e->accessed = now;
            lru_unlink(st, i);
            lru_front(st, i);
            publish(op, st, now);
            return emit_matches(op, st, row, e->data + e->klen, e->nrows);
        }
    }
    st->misses++;
    if (query(op, st, row) != SL_OK) return SL_ERR;
    if (st->nres || pl->cache_missing) cache_put(op, st, h, now);
    publish(op, st, now);
    return emit_matches(op, st, row, st->res.p, st->nres);
}

/* ---- lifecycle ---------------------------------------------------------------------- */

static int lk_open(sl_op *op)
{
    const lk_plan *pl = op->plan;
    lk_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->out = sl_calloc((size_t)(pl->nleft + pl->nright), sizeof *st->out);
    st->lru_head = st->lru_tail = LK_NONE;
    if (pl->cache_rows) {
        st->e = sl_calloc((size_t)pl->cache_rows, sizeof *st->e);
        uint32_t nb = 16;
        while (nb < (uint64_t)pl->cache_rows) nb *= 2;
        st->mask = nb - 1;
        st->heads = sl_malloc((size_t)nb * sizeof *st->heads);
        for (uint32_t b = 0; b < nb; b++) st->heads[b] = LK_NONE;
    }
    sl_jdbc_scratch_init(&st->sc);
    sl_buf_reserve(&st->res, 4096);
    sl_buf_reserve(&st->key, 256);
    return ensure_conn(op, st);
}

static void lk_close(sl_op *op)
{
    const lk_plan *pl = op->plan;
    lk_state *st = op->priv;
    if (!st) return;
    PQfinish(st->conn);
    for (int64_t i = 0; st->e && i < pl->cache_rows; i++) free(st->e[i].data);
    free(st->e);
    free(st->heads);
    free(st->out);
    sl_buf_free(&st->key);
    sl_buf_free(&st->res);
    sl_jdbc_scratch_free(&st->sc);
    free(st);
    op->priv = NULL;
}

static const sl_op_option lk_options[] = {
    {"join-type", SL_CT_STRING, NULL, NULL, "inner or left."},
    {"left-keys", SL_CT_JSON, NULL, NULL, "Key columns of the input (a list)."},
    {"right-keys", SL_CT_JSON, NULL, NULL, "The table's key columns, paired with left-keys."},
    {"left-columns", SL_CT_JSON, NULL, NULL, "How many of the input's first columns go out."},
    {"table", SL_CT_JSON, NULL, NULL, "The table's name in SQL, for messages."},
    {"url", SL_CT_STRING, NULL, NULL, "The JDBC URL: jdbc:postgresql://host:port/database."},
    {"table-name", SL_CT_STRING, NULL, NULL, "The table looked up (may be schema.table)."},
    {"username", SL_CT_STRING, NULL, NULL, "The user name."},
    {"password", SL_CT_STRING, NULL, NULL, "The password."},
    {"lookup.cache", SL_CT_STRING, "NONE", NULL, "NONE or PARTIAL (a bounded cache of keys)."},
    {"lookup.partial-cache.max-rows", SL_CT_STRING, NULL, NULL,
     "Keys the PARTIAL cache holds at most."},
    {"lookup.partial-cache.expire-after-write", SL_CT_STRING, NULL, NULL,
     "A cached key is looked up again this long after it was loaded."},
    {"lookup.partial-cache.expire-after-access", SL_CT_STRING, NULL, NULL,
     "A cached key is looked up again when unused this long."},
    {"lookup.partial-cache.cache-missing-key", SL_CT_STRING, "true", NULL,
     "Whether a key without rows is cached too."},
    {"lookup.cache.max-rows", SL_CT_STRING, NULL, NULL,
     "Older name of lookup.partial-cache.max-rows (turns the cache on)."},
    {"lookup.cache.ttl", SL_CT_STRING, NULL, NULL,
     "Older name of lookup.partial-cache.expire-after-write."},
    {"lookup.cache.caching-missing-key", SL_CT_STRING, NULL, NULL,
     "Older name of lookup.partial-cache.cache-missing-key."},
    {"lookup.max-retries", SL_CT_STRING, "3", NULL, "Attempts after a failed lookup query."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_jdbc_lookup_join = {
    .abi = SL_OP_ABI_VERSION,
    .name = "jdbc-lookup-join",
    .options = lk_options,
    .plan = lk_plan_new,
    .plan_free = lk_plan_free,
    .check_job = lk_check_job,
    .open = lk_open,
    .process = lk_process,
    .close = lk_close,
};
