/*
 * planner.c -- turns INSERT INTO ... SELECT (and statement sets of them)
 * into Sluice's JSON job graph (docs/JOBS.md), using only the operators
 * that exist: datagen, calc, watermark, window, group_aggregate, rank,
 * deduplicate, union, print, blackhole, file. Top-N and deduplication
 * (ROW_NUMBER() OVER ...) are planned in sql/plan_rank.c, which shares this
 * file's plan and helpers through sql/plan_int.h.
 *
 * A query is planned bottom-up into a `rel`: the vertex whose output it
 * is, its columns and types, whether it is a changelog (updating), and its
 * time attributes. Table scans become their source (datagen, nexmark,
 * file-source for a filesystem table, kafka) [-> calc for computed
 * columns] [-> watermark]; projections and filters become calc; window TVFs
 * grouped by window_start, window_end[, keys] become window (with a calc
 * before it for expression arguments and a calc after it for the SELECT
 * list and HAVING); GROUP BY becomes group_aggregate the same way; UNION
 * ALL becomes union. Expressions are written back as calc expression text
 * (sql_unparse) and type-checked with calc's own checker (lang/expr.h),
 * so a plan that passes here passes the JobManager's validation.
 *
 * Operator uids: stateful operators (sources, watermarks, windows,
 * aggregates, sinks) get uids made from what they are -- kind, input
 * tables, keys, window, aggregates -- so a savepoint keeps mapping after
 * edits that leave the stateful part alone (a changed projection, a new
 * filter after the aggregate). Stateless calc and union vertices have no
 * state and use their id.
 *
 * Unbounded state: a group_aggregate, rank, deduplicate or regular_join
 * without table.exec.state.ttl declares it in its own plan()
 * (sl_plan_unbounded), so JSON job graphs and SQL get the same warning.
 *
 * Kafka tables scan as the `kafka` / `upsert-kafka` source with their
 * METADATA columns marked in its schema; an upsert-kafka scan is followed by
 * `changelog-normalize` hashed on the primary key (Flink's
 * ChangelogNormalize), which makes the rel a full changelog.
 *
 * Changelog: group_aggregate makes a rel updating; calc and union keep the
 * mode; a window over an updating input is refused, and so is an updating
 * query into an append-only sink (a csv filesystem table), naming the sink
 * and the operator.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agg.h"
#include "decimal.h"
#include "expr.h"
#include "sl.h"
#include "udf_sig.h"
#include "parse.h"
#include "sql_int.h"
#include "plan_int.h"
#include "decimal.h"

/* ---- plans (struct rel, struct plan: sql/plan_int.h) ------------------------ */

void rel_free(rel *r)
{
    free(r->vid);
    sl_schema_free(&r->sch);
    free(r->updater);
    free(r->rowtime);
    free(r->proctime);
    free(r->rtalts);
    free(r->rtalts_of);
    free(r->ptalts);
    free(r->ptalts_of);
    free(r->mrowtime);
    free(r->mproctime);
    free(r->ident);
    free(r->alias);
    free(r->window);
    sql_join_map_free(r->jmap);
    memset(r, 0, sizeof *r);
}

char *dup0(const char *s) { return s ? sl_strdup(s) : NULL; }

void rel_copy(rel *dst, const rel *src)
{
    memset(dst, 0, sizeof *dst);
    dst->vid = dup0(src->vid);
    sl_schema_init(&dst->sch);
    sl_schema_copy(&dst->sch, &src->sch);
    dst->updating = src->updating;
    dst->updater = dup0(src->updater);
    dst->rowtime = dup0(src->rowtime);
    dst->proctime = dup0(src->proctime);
    dst->rtalts = dup0(src->rtalts);
    dst->rtalts_of = dup0(src->rtalts_of);
    dst->ptalts = dup0(src->ptalts);
    dst->ptalts_of = dup0(src->ptalts_of);
    dst->mrowtime = dup0(src->mrowtime);
    dst->mproctime = dup0(src->mproctime);
    dst->ident = dup0(src->ident);
    dst->alias = dup0(src->alias);
    dst->windowed = src->windowed;
    dst->window = dup0(src->window);
    dst->jmap = sql_join_map_copy(src->jmap);
}

static int vertex_exists(plan *p, const char *id, const char *field)
{
    size_t i;
    json_t *v;
    json_array_foreach(p->vertices, i, v) {
        const char *x = json_string_value(json_object_get(v, field));
        if (x && !strcmp(x, id)) return 1;
    }
    return 0;
}

/* A vertex id unique in the job, made of `base` (only [A-Za-z0-9_.-]). */
static char *unique(plan *p, const char *base, const char *field)
{
    sql_sbuf b = {0};
    for (const char *c = base; *c; c++) {
        char ch = isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.' ? *c : '_';
        sql_sb_put(&b, &ch, 1);
    }
    char *s = sql_sb_take(&b);
    if (!vertex_exists(p, s, field)) return s;
    for (int i = 2;; i++) {
        char *t = sl_sprintf("%s-%d", s, i);
        if (!vertex_exists(p, t, field)) {
            free(s);
            return t;
        }
        free(t);
    }
}

uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static json_t *schema_json(const sl_schema *s)
{
    json_t *a = json_array();
    for (int i = 0; i < s->n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s}", "name", s->fields[i].name, "type",
                                           s->fields[i].dt->text));
    return a;
}

/* Add a vertex; returns its id (caller frees). `config` is stolen. Its
 * changelog mode is not recorded here: EXPLAIN derives each vertex's from the
 * finished graph (sql/explain.c). */
char *add_vertex(plan *p, const char *base, const char *type, const char *uid_src,
                        json_t *config, const sl_schema *schema, int parallelism)
{
    char *id = unique(p, base, "id");
    json_t *v = json_object();
    json_object_set_new(v, "id", json_string(id));
    char *uid = NULL;
    if (uid_src) {
        uid = unique(p, uid_src, "uid");
        json_object_set_new(v, "uid", json_string(uid));
    }
    json_object_set_new(v, "type", json_string(type));
    if (parallelism > 0) json_object_set_new(v, "parallelism", json_integer(parallelism));
    if (schema) json_object_set_new(v, "schema", schema_json(schema));
    if (config && json_object_size(config)) json_object_set(v, "config", config);
    json_decref(config);
    json_array_append_new(p->vertices, v);
    free(uid);
    return id;
}

void add_edge(plan *p, const char *from, const char *to, const char *strategy,
                     json_t *keys, int input)
{
    json_t *e = json_pack("{s:s, s:s}", "from", from, "to", to);
    if (strategy) json_object_set_new(e, "strategy", json_string(strategy));
    if (keys) json_object_set(e, "keys", keys);
    if (input) json_object_set_new(e, "input", json_integer(input));
    json_array_append_new(p->edges, e);
}

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)
int plan_err(plan *p, const sql_node *at, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at && at->line)
        sl_seterr(p->err, p->errlen, "line %d, column %d: %s", at->line, at->col, msg);
    else
        sl_seterr(p->err, p->errlen, "%s", msg);
    return SL_ERR;
}

/* ---- expressions against a rel ------------------------------------------ */

/* A user-defined aggregate function of the session (CREATE FUNCTION), or NULL. */
static const sl_udf_sig *udf_agg(const char *s)
{
    const sl_udf_sig *u = sl_udf_set_find(sl_expr_session_functions(), s);
    return u && u->kind == SL_UDF_AGG_KIND ? u : NULL;
}

static int is_agg_name(const char *s)
{
    return !strcasecmp(s, "COUNT") || !strcasecmp(s, "SUM") || !strcasecmp(s, "MIN") ||
           !strcasecmp(s, "MAX") || !strcasecmp(s, "AVG") || !strcasecmp(s, "COLLECT") ||
           !strcasecmp(s, "JSON_ARRAYAGG") || !strcasecmp(s, "JSON_OBJECTAGG") ||
           udf_agg(s);
}

static int is_niladic(const char *s)
{
    return !strcasecmp(s, "CURRENT_TIMESTAMP") || !strcasecmp(s, "LOCALTIMESTAMP") ||
           !strcasecmp(s, "CURRENT_DATE") || !strcasecmp(s, "CURRENT_TIME") ||
           !strcasecmp(s, "LOCALTIME");
}

/* PROCTIME() as a whole SELECT item: a new processing-time attribute. */
static int is_proctime(const sql_node *e)
{
    return e && e->kind == SQL_FUNC && !strcasecmp(e->s, "PROCTIME") && e->nkids == 0;
}

static int has_agg(const sql_node *e)
{
    if (!e) return 0;
    if (e->kind == SQL_FUNC && is_agg_name(e->s)) return 1;
    for (int i = 0; i < e->nkids; i++)
        if (has_agg(e->kids[i])) return 1;
    return 0;
}

/* r.f where r is no table but a ROW column of sch: the grammar's SQL_COL
 * (f qualified by r) becomes the field access it means, SQL_FIELD over the
 * column r, in place (so the calc text says r.f). */
void fold_field(plan *p, sql_node *e, const sl_schema *sch)
{
    int rc = sl_schema_find(sch, e->s2);
    if (rc < 0 || sch->fields[rc].type != SL_T_ROW) return;
    sql_node *c = sql_node_new(p->arena, SQL_COL, e->line, e->col);
    c->s = e->s2;
    e->kind = SQL_FIELD;
    e->s2 = NULL;
    e->oline = e->line;
    e->ocol = e->col + (int)strlen(c->s) + 1;
    e->flags = 0;
    sql_node_add(p->arena, e, c);
}

/* fold_field over every column reference in e (not into subqueries). */
void fold_fields(plan *p, const sql_node *e, const rel *r)
{
    if (!e || e->kind == SQL_SUBQUERY || e->kind == SQL_SELECT) return;
    if (e->kind == SQL_COL && e->s2 && (!r->alias || strcasecmp(e->s2, r->alias)))
        fold_field(p, (sql_node *)e, &r->sch);
    for (int i = 0; i < e->nkids; i++) fold_fields(p, e->kids[i], r);
}

/* Check every column reference of e against r. */
int check_cols(plan *p, const sql_node *e, const rel *r)
{
    if (!e) return SL_OK;
    if (e->kind == SQL_COL && e->s2 && (!r->alias || strcasecmp(e->s2, r->alias)))
        fold_field(p, (sql_node *)e, &r->sch);
    if (e->kind == SQL_COL) {
        if (e->s2 && r->alias && strcasecmp(e->s2, r->alias) != 0)
            return PERR(e, "unknown table or alias '%s' (the FROM clause names '%s')", e->s2,
                        r->alias);
        if (sl_schema_find(&r->sch, e->s) >= 0) return SL_OK;
        if (!e->s2 && !(e->flags & SQL_F_QUOTED) && is_niladic(e->s)) return SL_OK;
        const char *best = NULL;
        int bd = 99;
        for (int i = 0; i < r->sch.n; i++) {
            int d = sl_edit_distance(r->sch.fields[i].name, e->s);
            if (d < bd) {
                bd = d;
                best = r->sch.fields[i].name;
            }
        }
        sql_sbuf cols = {0};
        for (int i = 0; i < r->sch.n; i++) sql_sb_fmt(&cols, "%s%s", i ? ", " : "", r->sch.fields[i].name);
        int rc;
        if (best && bd <= (int)strlen(e->s) / 2 + 1)
            rc = PERR(e, "unknown column '%s' (did you mean '%s'?)", e->s, best);
        else
            rc = PERR(e, "unknown column '%s' (the input has: %s)", e->s, cols.p ? cols.p : "");
        free(cols.p);
        return rc;
    }
    if (e->kind == SQL_FUNC && (!strcasecmp(e->s, "TIMESTAMPADD") || !strcasecmp(e->s, "TIMESTAMPDIFF"))) {
        for (int i = 1; i < e->nkids; i++)
            if (check_cols(p, e->kids[i], r) != SL_OK) return SL_ERR;
        return SL_OK;
    }
    if (e->kind == SQL_FUNC && !strcasecmp(e->s, "PROCTIME"))
        return PERR(e, "PROCTIME() makes a processing-time attribute as a SELECT item of its own "
                    "(SELECT *, PROCTIME() AS pt FROM t) or as a computed column in CREATE TABLE "
                    "(pt AS PROCTIME()); it cannot be used inside an expression, a condition or "
                    "an aggregation");
    if (e->kind == SQL_OVER)
        return PERR(e, "%s() OVER (...) is supported as Flink's Top-N and deduplication only: "
                    "SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) "
                    "AS rn FROM t) WHERE rn <= N", e->s);
    if (e->kind == SQL_FUNC && (e->flags & SQL_F_FILTER) && !is_agg_name(e->s))
        return PERR(e, "FILTER (WHERE ...) is only allowed on aggregate functions, not %s()",
                    e->s);
    for (int i = 0; i < e->nkids; i++)
        if (check_cols(p, e->kids[i], r) != SL_OK) return SL_ERR;
    return SL_OK;
}

/* Type e (after check_cols) against sch with calc's checker. */
int type_expr(plan *p, const sql_node *e, const sl_schema *sch, sl_type *t)
{
    return type_expr_dt(p, e, sch, t, NULL);
}

int type_expr_dt(plan *p, const sql_node *e, const sl_schema *sch, sl_type *t,
                 const sl_dtype **dt)
{
    char ebuf[512];
    sl_expr *x = sl_expr_from_sql(e, sch, ebuf, sizeof ebuf);
    if (!x) return sl_seterr(p->err, p->errlen, "%s", ebuf); /* names line and column */
    *t = sl_expr_type(x);
    if (dt) *dt = sl_expr_dtype(x);
    sl_expr_destroy(x);
    return SL_OK;
}

/* ---- calc --------------------------------------------------------------- */

sql_node *sqlp_binop(plan *p, const sql_node *at, const char *op, sql_node *a, sql_node *b)
{
    sql_node *n = sql_node_new(p->arena, SQL_BINOP, at ? at->line : 1, at ? at->col : 1);
    n->s = sql_arena_strndup(p->arena, op, strlen(op));
    sql_node_add(p->arena, n, a);
    sql_node_add(p->arena, n, b);
    return n;
}

/* One calc vertex over `in`: projection items (n) and an optional filter.
 * Replaces *in with the result. */
int emit_calc(plan *p, rel *in, item *items, int n, const sql_node *filter,
                     const char *base)
{
    json_t *cfg = json_object();
    if (filter) {
        if (check_cols(p, filter, in) != SL_OK) {
            json_decref(cfg);
            return SL_ERR;
        }
        sl_type ft;
        if (type_expr(p, filter, &in->sch, &ft) != SL_OK) {
            json_decref(cfg);
            return SL_ERR;
        }
        if (ft != SL_T_BOOLEAN && ft != SL_T_NULL) {
            json_decref(cfg);
            return PERR(filter, "the condition must be BOOLEAN, not %s", sl_type_name(ft));
        }
    }
    sl_schema out;
    sl_schema_init(&out);
    if (items) {
        json_t *proj = json_array();
        for (int i = 0; i < n; i++) {
            json_array_append_new(proj, json_string(items[i].text));
            sl_schema_add_dt(&out, items[i].name, item_dt(&items[i]));
        }
        json_object_set_new(cfg, "projection", proj);
    } else {
        sl_schema_copy(&out, &in->sch);
    }
    if (filter) {
        char *f = sql_unparse(filter);
        json_object_set_new(cfg, "filter", json_string(f));
        free(f);
        sqlp_prune_partitions(p, in, filter);
    }
    /* after a vertex of parallelism 1 (a global aggregate) the calc keeps it: a rebalance
     * would spread its -U and +U over subtasks and a keyed operator downstream could
     * receive them out of order */
    int par = 0;
    for (size_t i = 0; i < json_array_size(p->vertices); i++) {
        json_t *v = json_array_get(p->vertices, i);
        const char *vid = json_string_value(json_object_get(v, "id"));
        if (vid && !strcmp(vid, in->vid))
            par = json_integer_value(json_object_get(v, "parallelism")) == 1;
    }
    char *id = add_vertex(p, base, "calc", NULL, cfg, NULL, par);
    add_edge(p, in->vid, id, NULL, NULL, 0);
    free(in->vid);
    in->vid = id;
    sl_schema_free(&in->sch);
    in->sch = out;
    return SL_OK;
}

void items_free(item *it, int n)
{
    for (int i = 0; i < n; i++) {
        free(it[i].name);
        free(it[i].text);
    }
    free(it);
}

/* Make a projection item of expression e named `name` against sch. */
int make_item(plan *p, item *it, const sql_node *e, const char *name, const sl_schema *sch)
{
    if (is_proctime(e)) { /* a group window's *_PROCTIME (plan_groupwin.c): the wall clock */
        char *q = sql_quote_ident(name);
        it->name = sl_strdup(name);
        it->expr = e;
        it->type = SL_T_TIMESTAMP;
        it->dt = sql_proctime_dt();
        it->text = sl_sprintf("CURRENT_TIMESTAMP AS %s", q);
        free(q);
        return SL_OK;
    }
    if (type_expr_dt(p, e, sch, &it->type, &it->dt) != SL_OK) return SL_ERR;
    char *x = sql_unparse(e);
    it->name = sl_strdup(name);
    it->expr = e;
    if (e->kind == SQL_COL && !strcasecmp(e->s, name)) {
        it->text = x;
    } else {
        char *q = sql_quote_ident(name);
        it->text = sl_sprintf("%s AS %s", x, q);
        free(q);
        free(x);
    }
    return SL_OK;
}

/* ---- scans -------------------------------------------------------------- */

int plan_query(plan *p, const sql_node *q, rel *out);

/* Flink's ChangelogNormalize after an upsert-kafka source: the upserts and
 * tombstones keyed by the primary key become +I / -U +U / -D with full
 * rows; *out leaves from it. */
static void scan_normalize(plan *p, const sql_table *t, rel *out)
{
    /* Flink's ChangelogNormalize: the upserts and tombstones keyed by
     * the primary key become +I / -U +U / -D with full rows */
    json_t *keys = json_array();
    for (int k = 0; k < t->npk; k++) json_array_append_new(keys, json_string(t->pk[k]));
    json_t *ncfg = json_object();
    json_object_set(ncfg, "key", keys);
    if (sqlp_ttl_set(p)) json_object_set_new(ncfg, "table.exec.state.ttl", json_string(p->ttl));
    char *base = sl_sprintf("%s-normalize", t->name);
    char *nuid = sl_sprintf("normalize-%s", t->name);
    char *id = add_vertex(p, base, "changelog-normalize", nuid, ncfg, NULL, 0);
    add_edge(p, out->vid, id, "hash", keys, 0);
    json_decref(keys);
    free(out->vid);
    out->vid = id;
    free(base);
    free(nuid);
}

/* The table's computed columns (and PROCTIME()) as a calc after its source,
 * in declared order; *out leaves from it. */
static int scan_computed(plan *p, const sql_table *t, const sl_schema *phys, rel *out)
{
    item *its = sl_calloc((size_t)t->ncols, sizeof *its);
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < t->ncols; i++) {
        const sql_column *c = &t->cols[i];
        if (c->proctime) {
            its[i].name = sl_strdup(c->name);
            char *q = sql_quote_ident(c->name);
            its[i].text = sl_sprintf("CURRENT_TIMESTAMP AS %s", q);
            free(q);
            its[i].type = SL_T_TIMESTAMP;
            its[i].dt = sql_proctime_dt();
        } else if (c->expr) {
            rc = make_item(p, &its[i], c->expr, c->name, phys);
        } else {
            its[i].name = sl_strdup(c->name);
            its[i].text = sql_quote_ident(c->name);
            its[i].type = c->type;
            its[i].dt = sql_col_dt(c);
        }
    }
    char *base = sl_sprintf("%s-columns", t->name);
    if (rc == SL_OK) rc = emit_calc(p, out, its, t->ncols, NULL, base);
    free(base);
    items_free(its, t->ncols);
    if (rc != SL_OK) return SL_ERR;
    for (int i = 0; i < t->ncols; i++)
        if (t->cols[i].proctime) out->proctime = sl_strdup(t->cols[i].name);
    return SL_OK;
}

/* WATERMARK FOR on a table whose source does not make it itself: a
 * watermark vertex after the source (and its computed columns). */
static void scan_watermark(plan *p, const sql_table *t, const char *idle, rel *out)
{
    json_t *w = json_object();
    json_object_set_new(w, "column", json_string(t->wm_col));
    char d[64];
    snprintf(d, sizeof d, "%lld ms", (long long)t->wm_delay);
    json_object_set_new(w, "delay", json_string(d));
    json_object_set_new(w, "rule", json_string("sql")); /* max - delay, Flink SQL's */
    if (p->wm_interval) json_object_set_new(w, "interval", json_string(p->wm_interval));
    if (idle) json_object_set_new(w, "idle-timeout", json_string(idle));
    char *base = sl_sprintf("%s-watermark", t->name);
    char *wuid = sl_sprintf("watermark-%s", t->name);
    char *id = add_vertex(p, base, "watermark", wuid, w, NULL, 0);
    add_edge(p, out->vid, id, NULL, NULL, 0);
    free(out->vid);
    out->vid = id;
    free(base);
    free(wuid);
    out->rowtime = sl_strdup(t->wm_col);
}

static int scan_table(plan *p, const sql_node *at, const char *name, rel *out)
{
    for (const cte_scope *s = p->scope; s; s = s->outer) {
        if (strcasecmp(s->cte->s, name) != 0) continue;
        const cte_scope *saved = p->scope;
        p->scope = s->outer; /* a CTE sees only the ones before it */
        int rc = plan_query(p, sql_kid(s->cte, 0), out);
        p->scope = saved;
        return rc;
    }
    const sql_table *t = sql_catalog_find(p->cat, name);
    if (!t) {
        const char *best = NULL;
        int bd = 99;
        for (int i = 0; i < p->cat->n; i++) {
            int d = sl_edit_distance(p->cat->t[i]->name, name);
            if (d < bd) bd = d, best = p->cat->t[i]->name;
        }
        if (best && bd <= (int)strlen(name) / 2 + 1)
            return PERR(at, "table or view '%s' does not exist in this session (did you mean "
                        "'%s'?)", name, best);
        return PERR(at, "table or view '%s' does not exist in this session", name);
    }
    if (t->is_view) {
        if (p->depth > 32) return PERR(at, "views nested too deeply at '%s'", name);
        const cte_scope *saved = p->scope;
        p->scope = NULL;
        p->depth++;
        int rc = plan_query(p, t->query, out);
        p->depth--;
        p->scope = saved;
        return rc;
    }
    /* one source per table and job: a statement set's INSERTs (and a self-UNION) share it,
     * so they see the same rows and the source's uid does not depend on the order */
    for (int i = 0; i < p->nscans; i++)
        if (!strcasecmp(p->scans[i].ident, t->name)) {
            rel_copy(out, &p->scans[i]);
            sqlp_prune_shared(p, out->vid);
            return SL_OK;
        }
    /* a C job's stream (api/bridge.c): its rows already leave from a vertex */
    int stream = !strcmp(t->connector, "datastream");
    int files = !strcmp(t->connector, "filesystem"), nexmark = !strcmp(t->connector, "nexmark");
    int cdc = !strcmp(t->connector, "postgres-cdc");
    int jdbc = !strcmp(t->connector, "jdbc"); /* a bounded scan (operators/jdbc_scan.c) */
    const sql_column *unc = jdbc ? sql_jdbc_uncarried(t) : NULL;
    if (unc)
        return PERR(at, "table '%s' (connector 'jdbc'): column '%s' is %s; the jdbc connector "
                    "cannot carry that type yet", name, unc->name, sql_col_dt(unc)->text);
    if (!stream && strcmp(t->connector, "datagen") != 0 && !sql_table_is_kafka(t) && !files &&
        !nexmark && !cdc && !jdbc) {
        return PERR(at, "table '%s' (connector '%s') is a sink; it cannot be read", name,
                    t->connector);
    }
    sl_schema phys;
    sl_schema_init(&phys);
    int ncomp = 0;
    for (int i = 0; i < t->ncols; i++) {
        if (t->cols[i].expr) ncomp++;
        else sl_schema_add_dt(&phys, t->cols[i].name, sql_col_dt(&t->cols[i]));
    }
    int kafka = sql_table_is_kafka(t), changelog = sql_table_changelog(t);
    /* a kafka table's watermark on a physical column is the source's own,
     * per partition */
    int wm_in_source = 0;
    for (int i = 0; kafka && t->wm_col && i < phys.n; i++)
        wm_in_source |= !strcasecmp(phys.fields[i].name, t->wm_col);
    json_t *cfg = kafka ? sql_kafka_config(t, 0) : stream ? NULL : json_object();
    for (int i = 0; !kafka && !stream && i < t->nopts; i++)
        if (strcmp(t->keys[i], "connector") && strncmp(t->keys[i], "sink.", 5) &&
            strncmp(t->keys[i], "lookup.", 7)) /* lookup.*: a lookup join's (plan_join.c) */
            json_object_set_new(cfg, t->keys[i], json_string(t->vals[i]));
    if (t->npart && cfg) json_object_set_new(cfg, "partition-by", sql_table_partition_by(t));
    if (cdc && t->npk) { /* upserts by the key, through changelog-normalize (below) */
        sql_sbuf pk = {0};
        for (int i = 0; i < t->npk; i++) sql_sb_fmt(&pk, "%s%s", i ? ";" : "", t->pk[i]);
        json_object_set_new(cfg, "primary-key", json_string(pk.p));
        free(pk.p);
    }
    /* a silent source (partition) stops holding the watermark back after
     * Flink's scan.watermark.idle-timeout, else table.exec.source.idle-timeout */
    const char *idle = p->idle_timeout;
    for (int i = 0; i < t->nopts; i++)
        if (!strcmp(t->keys[i], "scan.watermark.idle-timeout")) idle = t->vals[i];
    if (wm_in_source) {
        char d[64];
        snprintf(d, sizeof d, "%lld ms", (long long)t->wm_delay);
        json_object_set_new(cfg, "watermark.column", json_string(t->wm_col));
        json_object_set_new(cfg, "watermark.delay", json_string(d));
        json_object_set_new(cfg, "watermark.rule", json_string("sql"));
        if (idle) json_object_set_new(cfg, "watermark.idle-timeout", json_string(idle));
        if (p->wm_interval) json_object_set_new(cfg, "watermark.interval", json_string(p->wm_interval));
    }
    char *uid = sl_sprintf("source-%s", t->name);
    memset(out, 0, sizeof *out);
    const char *type = kafka ? t->connector : files ? "file-source" : nexmark ? "nexmark"
                                                                : cdc ? "postgres-cdc"
                                                                : jdbc ? "jdbc-scan" : "datagen";
    /* postgres-cdc: one replication slot, one subtask; jdbc-scan: one cursor, unless
     * scan.partition.* splits it */
    out->vid = stream ? sl_strdup(sql_table_option(t, "vertex"))
                      : add_vertex(p, t->name, type, uid, cfg, &phys,
                                   cdc || (jdbc && !sql_table_option(t, "scan.partition.column"))
                                       ? 1 : 0);
    free(uid);
    if (kafka) { /* METADATA columns: "metadata": key in the source's schema */
        json_t *sj = json_object_get(json_array_get(p->vertices, json_array_size(p->vertices) - 1),
                                     "schema");
        for (int i = 0, k = 0; i < t->ncols; i++) {
            if (t->cols[i].expr) continue;
            if (t->cols[i].meta)
                json_object_set_new(json_array_get(sj, (size_t)k), "metadata",
                                    json_string(t->cols[i].meta));
            k++;
        }
    }
    if (!strcmp(t->connector, "upsert-kafka") || (cdc && t->npk)) scan_normalize(p, t, out);
    if (changelog) {
        out->updating = 1;
        out->updater = sl_sprintf("table '%s' (connector '%s')", t->name, t->connector);
    }
    out->sch = phys;
    out->ident = sl_strdup(t->name);
    if (ncomp && scan_computed(p, t, &phys, out) != SL_OK) return SL_ERR;
    if (t->wm_col && wm_in_source) {
        out->rowtime = sl_strdup(t->wm_col);
    } else if (stream && !t->wm_col) {
        out->rowtime = dup0(sql_table_option(t, "rowtime")); /* the stream's own watermarks */
    } else if (t->wm_col) {
        scan_watermark(p, t, idle, out);
    }
    p->scans = sl_realloc(p->scans, sizeof(rel) * (size_t)(p->nscans + 1));
    rel_copy(&p->scans[p->nscans++], out);
    return SL_OK;
}

int plan_from(plan *p, const sql_node *f, rel *out)
{
    if (p->push_where && f->kind != SQL_FROM_JOIN) {
        /* a new scope (a table, view, subquery, ...): the WHERE whose conjuncts
         * a join pushes to its inputs (plan_join.c) is not its */
        const sql_node *w = p->push_where;
        p->push_where = NULL;
        int rc = plan_from(p, f, out);
        p->push_where = w;
        return rc;
    }
    switch (f->kind) {
    case SQL_FROM_TABLE:
        if (sql_kid(f, 0))
            return PERR(f, "FOR SYSTEM_TIME AS OF belongs to the right side of a join (a temporal "
                        "join: s JOIN t FOR SYSTEM_TIME AS OF s.ts ON ...)");
        if (scan_table(p, f, f->s, out) != SL_OK) return SL_ERR;
        /* a view over a join: its columns go by the view's name, not the join's aliases */
        sql_join_map_free(out->jmap);
        out->jmap = NULL;
        free(out->alias);
        out->alias = sl_strdup(f->s2 ? f->s2 : f->s);
        return SL_OK;
    case SQL_FROM_QUERY:
        if (plan_query(p, sql_kid(f, 0), out) != SL_OK) return SL_ERR;
        sql_join_map_free(out->jmap); /* a subquery's columns go by its alias */
        out->jmap = NULL;
        free(out->alias);
        out->alias = dup0(f->s2);
        if (sql_kid(f, 1) && sql_plan_col_aliases(p, sql_kid(f, 1), out) != SL_OK) {
            rel_free(out);
            return SL_ERR;
        }
        return SL_OK;
    case SQL_FROM_JOIN: return sql_plan_join(p, f, out);
    case SQL_FROM_TVF: return sql_plan_window_tvf(p, f, out);
    case SQL_FROM_MATCH: return sql_plan_match(p, f, out);
    default: return PERR(f, "unsupported FROM item");
    }
}

/* ---- SELECT without aggregation ------------------------------------------ */

/* Output name of select item i. */
static char *item_name(const sql_node *it, int i)
{
    if (it->s) return sl_strdup(it->s);
    const sql_node *e = it->kids[0];
    if (e->kind == SQL_COL) return sl_strdup(e->s);
    return sl_sprintf("EXPR$%d", i);
}

/* Expand the select list against `in` into items (* and t.*). */
int select_items(plan *p, const sql_node *list, rel *in, item **outp, int *np)
{
    int cap = list->nkids + (int)in->sch.n + 1, n = 0;
    item *its = sl_calloc((size_t)cap, sizeof *its);
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < list->nkids; i++) {
        const sql_node *it = list->kids[i];
        const sql_node *e = it->kids[0];
        if (e->kind == SQL_STAR) {
            if (e->s && in->alias && strcasecmp(e->s, in->alias)) {
                rc = PERR(e, "unknown table or alias '%s'", e->s);
                break;
            }
            if (n + (int)in->sch.n > cap) {
                cap = n + (int)in->sch.n + list->nkids;
                its = sl_realloc(its, sizeof *its * (size_t)cap);
            }
            for (int c = 0; c < in->sch.n; c++) {
                its[n].name = sl_strdup(in->sch.fields[c].name);
                its[n].text = sql_quote_ident(in->sch.fields[c].name);
                its[n].type = in->sch.fields[c].type;
                its[n].dt = in->sch.fields[c].dt;
                its[n].expr = NULL;
                n++;
            }
            continue;
        }
        if (has_agg(e)) {
            rc = PERR(e, "aggregate functions need GROUP BY (or a window TVF)");
            break;
        }
        if (is_proctime(e)) { /* a processing-time attribute: the wall clock per row */
            if (n == cap) {
                cap *= 2;
                its = sl_realloc(its, sizeof *its * (size_t)cap);
            }
            its[n].name = item_name(it, i);
            char *q = sql_quote_ident(its[n].name);
            its[n].text = sl_sprintf("CURRENT_TIMESTAMP AS %s", q);
            free(q);
            its[n].type = SL_T_TIMESTAMP;
            its[n].dt = sql_proctime_dt();
            its[n++].expr = e;
            continue;
        }
        if (check_cols(p, e, in) != SL_OK) {
            rc = SL_ERR;
            break;
        }
        if (n == cap) {
            cap *= 2;
            its = sl_realloc(its, sizeof *its * (size_t)cap);
        }
        memset(&its[n], 0, sizeof its[n]);
        char *nm = item_name(it, i);
        rc = make_item(p, &its[n], e, nm, &in->sch);
        free(nm);
        if (rc == SL_OK) n++;
    }
    for (int i = 0; rc == SL_OK && i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcasecmp(its[i].name, its[j].name)) {
                rc = PERR(list->kids[SL_MIN(i, list->nkids - 1)],
                          "the query has two columns named '%s'; give one an alias with AS",
                          its[i].name);
                break;
            }
    if (rc != SL_OK) {
        items_free(its, n);
        return SL_ERR;
    }
    *outp = its;
    *np = n;
    return SL_OK;
}

/* The valid aliases of r's event-time (rowtime 1) or processing-time
 * attribute (rel.rtalts), or NULL. */
static const char *attr_alts(const rel *r, int rowtime)
{
    const char *at = rowtime ? r->rowtime : r->proctime;
    const char *of = rowtime ? r->rtalts_of : r->ptalts_of;
    const char *alts = rowtime ? r->rtalts : r->ptalts;
    return at && of && alts && !strcasecmp(at, of) ? alts : NULL;
}

int rel_is_attr(const rel *r, int rowtime, const char *name)
{
    const char *at = rowtime ? r->rowtime : r->proctime;
    if (!name || !at) return 0;
    return !strcasecmp(at, name) || sql_names_have(attr_alts(r, rowtime), name);
}

void rel_use_attr(rel *r, const char *name)
{
    for (int rt = 1; rt >= 0; rt--) {
        char **at = rt ? &r->rowtime : &r->proctime;
        char **alts = rt ? &r->rtalts : &r->ptalts, **of = rt ? &r->rtalts_of : &r->ptalts_of;
        if (!name || !*at || !strcasecmp(*at, name) || !sql_names_have(attr_alts(r, rt), name))
            continue;
        sql_sbuf b = {0}; /* the other aliases and the old attribute column */
        for (const char *p = *alts; *p;) {
            const char *e = strchr(p, '\x1f');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len != strlen(name) || strncasecmp(p, name, len))
                sql_sb_fmt(&b, "%.*s\x1f", (int)len, p);
            p = e ? e + 1 : p + len;
        }
        sql_sb_fmt(&b, "%s", *at);
        free(*alts);
        *alts = sql_sb_take(&b);
        free(*at);
        *at = sl_strdup(name);
        free(*of);
        *of = sl_strdup(name);
        return;
    }
}

/* Time attributes survive a projection that keeps the column bare (so do
 * the materialized ones of a semi join, rel.mrowtime). As in Flink, every
 * item that keeps one (ts, ts AS ts2) and every PROCTIME() item is a time
 * attribute: the first names it (rel.rowtime, rel.proctime; a new
 * PROCTIME() item is the one a query names), the others are its aliases
 * (rel.rtalts, rel.ptalts). */
void carry_time_attrs(rel *r, item *its, int n)
{
    char *rt = NULL, *pt = NULL, *mrt = NULL, *mpt = NULL;
    sql_sbuf rta = {0}, pta = {0};
    int newpt = -1;
    for (int i = 0; i < n; i++)
        if (is_proctime(its[i].expr)) {
            newpt = i;
            pt = sl_strdup(its[i].name);
            break;
        }
    for (int i = 0; i < n; i++) {
        const sql_node *e = its[i].expr;
        const char *src = e ? (e->kind == SQL_COL ? e->s : NULL) : its[i].name;
        if (i != newpt && is_proctime(e)) {
            sql_sb_fmt(&pta, "%s%s", pta.len ? "\x1f" : "", its[i].name);
            continue;
        }
        if (!src) continue;
        if (rel_is_attr(r, 1, src)) {
            if (!rt) rt = sl_strdup(its[i].name);
            else sql_sb_fmt(&rta, "%s%s", rta.len ? "\x1f" : "", its[i].name);
        }
        if (i != newpt && rel_is_attr(r, 0, src)) {
            if (!pt) pt = sl_strdup(its[i].name);
            else sql_sb_fmt(&pta, "%s%s", pta.len ? "\x1f" : "", its[i].name);
        }
        if (r->mrowtime && !strcasecmp(src, r->mrowtime) && !mrt) mrt = sl_strdup(its[i].name);
        if (r->mproctime && !strcasecmp(src, r->mproctime) && !mpt) mpt = sl_strdup(its[i].name);
    }
    free(r->mrowtime);
    free(r->mproctime);
    r->mrowtime = mrt;
    r->mproctime = mpt;
    free(r->rowtime);
    free(r->proctime);
    free(r->rtalts);
    free(r->rtalts_of);
    free(r->ptalts);
    free(r->ptalts_of);
    r->rowtime = rt;
    r->proctime = pt;
    r->rtalts = rta.len ? sql_sb_take(&rta) : NULL;
    r->rtalts_of = r->rtalts ? dup0(rt) : NULL;
    r->ptalts = pta.len ? sql_sb_take(&pta) : NULL;
    r->ptalts_of = r->ptalts ? dup0(pt) : NULL;
}

int identity(const item *its, int n, const sl_schema *sch)
{
    if (n != sch->n) return 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(its[i].name, sch->fields[i].name)) return 0;
        if (its[i].expr && (its[i].expr->kind != SQL_COL || strcmp(its[i].expr->s, its[i].name)))
            return 0;
    }
    return 1;
}

/* ---- aggregation ---------------------------------------------------------- */

typedef struct agg {
    char *text;      /* the call as written back: "SUM(amount)" (dedup key) */
    char *name;      /* output column */
    char *spec;      /* operator entry "SUM(amount) AS total" */
    sl_type type;
    const sl_dtype *dt; /* the full result type (DECIMAL(38, s) of a SUM), or NULL */
    int nomerge;     /* a user-defined aggregate function without merge */
} agg;

typedef struct aggctx {
    agg *a;
    int n, cap;
    char **keys;     /* key column names (window: not window_start/end) */
    char **keytext;  /* group expressions as written back */
    int nkeys;
    item *pre;       /* pre-projection: expressions for keys and arguments */
    int npre;
    int need_pre;
    const rel *in;
    int window;      /* window_start/window_end/window_time are outputs */
    const char *wspec; /* the window ("HOP(...)"; borrowed), NULL for a GROUP BY */
    int groupwin;    /* the window is a group window (GROUP BY TUMBLE(...), plan_groupwin.c) */
} aggctx;

static void aggctx_free(aggctx *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->a[i].text);
        free(c->a[i].name);
        free(c->a[i].spec);
    }
    free(c->a);
    for (int i = 0; i < c->nkeys; i++) {
        free(c->keys[i]);
        free(c->keytext[i]);
    }
    free(c->keys);
    free(c->keytext);
    items_free(c->pre, c->npre);
}

/* The pre-projection column holding expression e (added on first use). */
static int pre_column(plan *p, aggctx *c, const sql_node *e, const char *prefix, char **name)
{
    if (e->kind == SQL_COL && sl_schema_find(&c->in->sch, e->s) >= 0) {
        *name = sl_strdup(c->in->sch.fields[sl_schema_find(&c->in->sch, e->s)].name);
        return SL_OK;
    }
    char *txt = sql_unparse(e);
    for (int i = c->in->sch.n; i < c->npre; i++) /* the same expression once */
        if (c->pre[i].expr) {
            char *t2 = sql_unparse(c->pre[i].expr);
            int same = !strcmp(t2, txt);
            free(t2);
            if (same) {
                free(txt);
                *name = sl_strdup(c->pre[i].name);
                return SL_OK;
            }
        }
    free(txt);
    if (check_cols(p, e, c->in) != SL_OK) return SL_ERR;
    c->pre = sl_realloc(c->pre, sizeof(item) * (size_t)(c->npre + 1));
    memset(&c->pre[c->npre], 0, sizeof(item));
    char *nm = sl_sprintf("%s%d", prefix, c->npre - (int)c->in->sch.n);
    int rc = make_item(p, &c->pre[c->npre], e, nm, &c->in->sch);
    free(nm);
    if (rc != SL_OK) return SL_ERR;
    *name = sl_strdup(c->pre[c->npre].name);
    c->npre++;
    c->need_pre = 1;
    return SL_OK;
}

static int add_agg(plan *p, aggctx *c, const sql_node *e, const char *alias, char **name);

/* Register a call e of user-defined aggregate function u (docs/UDF.md):
 * each argument becomes a pre-projection column of the declared type
 * (INT widens to BIGINT, integers to DOUBLE, as for scalar functions). */
static int add_udf_agg(plan *p, aggctx *c, const sql_node *e, const sl_udf_sig *u,
                       const sql_node *cond, int nargs, const char *alias, char **name)
{
    if (e->flags & (SQL_F_STAR_ARG | SQL_F_DISTINCT))
        return PERR(e, "%s is a user-defined aggregate function: it takes neither '*' nor "
                    "DISTINCT", e->s);
    if (nargs != u->nargs)
        return PERR(e, "%s takes %d argument%s, not %d", e->s, u->nargs,
                    u->nargs == 1 ? "" : "s", nargs);
    if (c->in->updating && !u->retract)
        return PERR(e, "%s declares no retract, so it cannot aggregate an updating input "
                    "(declare \"retract\" in SL_UDF_AGGREGATE and give it retract)", e->s);
    if (cond && has_agg(cond)) return PERR(cond, "aggregate functions are not allowed in FILTER (WHERE ...)");
    sql_sbuf b = {0};
    sql_sb_fmt(&b, "%s(", e->s);
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < nargs; i++) {
        char *arg = NULL;
        if (has_agg(e->kids[i])) {
            rc = PERR(e->kids[i], "aggregate functions cannot be nested");
            break;
        }
        if (pre_column(p, c, e->kids[i], "__arg", &arg) != SL_OK) {
            rc = SL_ERR;
            break;
        }
        sl_type at = SL_T_NULL;
        int ci = sl_schema_find(&c->in->sch, arg);
        if (ci >= 0) at = c->in->sch.fields[ci].type;
        else
            for (int k = 0; k < c->npre; k++)
                if (!strcmp(c->pre[k].name, arg)) at = c->pre[k].type;
        sl_type want = u->args[i];
        bool isint = at == SL_T_TINYINT || at == SL_T_SMALLINT || at == SL_T_INT || at == SL_T_BIGINT;
        if (!(at == want || (at == SL_T_INT && want == SL_T_BIGINT) ||
              ((at == SL_T_INT || at == SL_T_BIGINT) && want == SL_T_DOUBLE) ||
              (isint && want == SL_T_DECIMAL))) /* the aggregate casts to DECIMAL(p, s) */
            rc = PERR(e->kids[i], "argument %d of %s must be %s, not %s", i + 1, e->s,
                      want == SL_T_DECIMAL ? u->argdt[i]->text : sl_type_name(want),
                      sl_type_name(at));
        char *q = sql_quote_ident(arg);
        sql_sb_fmt(&b, "%s%s", i ? ", " : "", q);
        free(q);
        free(arg);
    }
    char *fcol = NULL;
    if (rc == SL_OK && cond) {
        rc = pre_column(p, c, cond, "__filter", &fcol);
        sl_type ft = SL_T_NULL;
        for (int i = 0; rc == SL_OK && i < c->npre; i++)
            if (!strcmp(c->pre[i].name, fcol)) ft = c->pre[i].type;
        if (rc == SL_OK && ft != SL_T_BOOLEAN)
            rc = PERR(cond, "the FILTER condition must be BOOLEAN, not %s", sl_type_name(ft));
    }
    if (rc != SL_OK) {
        free(b.p);
        free(fcol);
        return SL_ERR;
    }
    sql_sb_fmt(&b, ")");
    if (fcol) {
        char *q = sql_quote_ident(fcol);
        sql_sb_fmt(&b, " FILTER (WHERE %s)", q);
        free(q);
        free(fcol);
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->a = sl_realloc(c->a, sizeof(agg) * (size_t)c->cap);
    }
    agg *a = &c->a[c->n];
    a->text = sql_unparse(e);
    a->name = alias ? sl_strdup(alias) : sl_sprintf("__agg%d", c->n);
    char *qname = sql_quote_ident(a->name);
    a->spec = sl_sprintf("%s AS %s", b.p, qname);
    free(qname);
    free(b.p);
    a->type = u->result;
    a->dt = u->result == SL_T_DECIMAL ? u->resdt : NULL;
    a->nomerge = !u->merge;
    c->n++;
    *name = sl_strdup(a->name);
    return SL_OK;
}

/* The Java class Flink's legacy group window passes a value of type t in
 * (its default conversion class), for its messages. */
static const char *java_class(sl_type t)
{
    switch (t) {
    case SL_T_BOOLEAN: return "java.lang.Boolean";
    case SL_T_TINYINT: return "java.lang.Byte";
    case SL_T_SMALLINT: return "java.lang.Short";
    case SL_T_INT: return "java.lang.Integer";
    case SL_T_BIGINT: return "java.lang.Long";
    case SL_T_FLOAT: return "java.lang.Float";
    case SL_T_DOUBLE: return "java.lang.Double";
    case SL_T_DECIMAL: return "java.math.BigDecimal";
    case SL_T_DATE: return "java.time.LocalDate";
    case SL_T_TIME: return "java.time.LocalTime";
    case SL_T_TIMESTAMP: return "java.time.LocalDateTime";
    case SL_T_BYTES: return "byte[]";
    default: return sl_type_name(t);
    }
}

/* JSON_ARRAYAGG / JSON_OBJECTAGG call e in a window aggregation, its value
 * of type at (JSON_OBJECTAGG: the pre-projected column vcol): refused where
 * Flink 2.3 refuses it, with its words. A group window's code passes the
 * value as its Java class, for which the functions have no accumulate
 * unless it is a STRING; a window other than TUMBLE merges accumulators,
 * and JsonArrayAggFunction has no merge. */
static int json_agg_window_check(plan *p, const aggctx *c, const sql_node *e, int jobj,
                                 sl_type at, const char *vcol)
{
    static const char cls[] = "org.apache.flink.table.runtime.functions.aggregate.";
    const char *on = e->s2 ? (!strncasecmp(e->s2, "NULL", 4) ? "NULL" : "ABSENT")
                           : (jobj ? "NULL" : "ABSENT");
    if (jobj && vcol) { /* the value's type */
        int ci = sl_schema_find(&c->in->sch, vcol);
        at = ci >= 0 ? c->in->sch.fields[ci].type : SL_T_NULL;
        for (int i = 0; ci < 0 && i < c->npre; i++)
            if (!strcmp(c->pre[i].name, vcol)) at = c->pre[i].type;
    }
    const char *fn = jobj ? "JsonObjectAggFunction" : "JsonArrayAggFunction";
    if (c->groupwin && at != SL_T_STRING)
        return PERR(e, "Could not find an implementation method 'accumulate' in class '%s%s' for "
                    "function '%s_%s_ON_NULL' that matches the following signature: void "
                    "accumulate(%s%s.Accumulator, %s%s)", cls, fn,
                    jobj ? "JSON_OBJECTAGG" : "JSON_ARRAYAGG", on, cls, fn,
                    jobj ? "org.apache.flink.table.data.StringData, " : "", java_class(at));
    if (!jobj && strncasecmp(c->wspec, "TUMBLE", 6))
        /* Flink plans HOP, CUMULATE and SESSION windows with merged accumulators,
         * and its JsonArrayAggFunction has no merge */
        return PERR(e, "Could not find an implementation method 'merge' in class '%s%s' for "
                    "function 'JSON_ARRAYAGG_%s_ON_NULL' that matches the following signature: "
                    "void merge(%s%s.Accumulator, java.lang.Iterable)", cls, fn, on, cls, fn);
    return SL_OK;
}

/* Register aggregate call e; its output column name into *name. */
static int add_agg(plan *p, aggctx *c, const sql_node *e, const char *alias, char **name)
{
    char *txt = sql_unparse(e);
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->a[i].text, txt)) {
            free(txt);
            *name = sl_strdup(c->a[i].name);
            return SL_OK;
        }
    int star = e->flags & SQL_F_STAR_ARG;
    const sql_node *cond = e->flags & SQL_F_FILTER ? e->kids[e->nkids - 1] : NULL;
    int nargs = e->nkids - (cond ? 1 : 0);
    const sl_udf_sig *u = udf_agg(e->s);
    if (u) {
        free(txt);
        return add_udf_agg(p, c, e, u, cond, nargs, alias, name);
    }
    if (star && strcasecmp(e->s, "COUNT")) {
        free(txt);
        return PERR(e, "'*' is only allowed in COUNT(*)");
    }
    int jobj = !strcasecmp(e->s, "JSON_OBJECTAGG");
    if (!star && nargs != 1 + jobj) {
        free(txt);
        return PERR(e, jobj ? "%s takes a key and a value: %s(k VALUE v)" : "%s takes one argument",
                    e->s, e->s);
    }
    if (e->s2 && !jobj && strcasecmp(e->s, "JSON_ARRAYAGG")) {
        free(txt);
        return PERR(e, "%s takes no ON NULL clause", e->s);
    }
    if (cond && has_agg(cond)) {
        free(txt);
        return PERR(cond, "aggregate functions are not allowed in FILTER (WHERE ...)");
    }
    char *fcol = NULL; /* the pre-projection column holding the FILTER condition */
    if (cond) {
        if (pre_column(p, c, cond, "__filter", &fcol) != SL_OK) {
            free(txt);
            return SL_ERR;
        }
        sl_type ft = SL_T_NULL;
        for (int i = 0; i < c->npre; i++)
            if (!strcmp(c->pre[i].name, fcol)) ft = c->pre[i].type;
        if (ft != SL_T_BOOLEAN) {
            free(txt);
            free(fcol);
            return PERR(cond, "the FILTER condition must be BOOLEAN, not %s", sl_type_name(ft));
        }
    }
    if (!star && has_agg(e->kids[0])) {
        free(txt);
        free(fcol);
        return PERR(e->kids[0], "aggregate functions cannot be nested");
    }
    char *arg = NULL, *varg = NULL; /* varg: JSON_OBJECTAGG's value column */
    sl_type at = SL_T_BIGINT;
    const sl_dtype *adt = NULL;
    if (!star) {
        if (pre_column(p, c, e->kids[0], "__arg", &arg) != SL_OK) {
            free(txt);
            free(fcol);
            return SL_ERR;
        }
        int ci = sl_schema_find(&c->in->sch, arg);
        if (ci >= 0) {
            at = c->in->sch.fields[ci].type;
            adt = c->in->sch.fields[ci].dt;
        } else
            for (int i = 0; i < c->npre; i++)
                if (!strcmp(c->pre[i].name, arg)) {
                    at = c->pre[i].type;
                    adt = item_dt(&c->pre[i]);
                }
        /* what window and group_aggregate compute: SUM/AVG of numbers, MIN/MAX also of
         * TIMESTAMPs, BOOLEANs (FALSE < TRUE) and STRINGs, COUNT of anything */
        int minmax = !strcasecmp(e->s, "MIN") || !strcasecmp(e->s, "MAX");
        bool dec = at == SL_T_DECIMAL && (!minmax || (adt && adt->p <= 18));
        bool mmnew = (minmax && (at == SL_T_DATE || at == SL_T_TIME)) || at == SL_T_TINYINT ||
                     at == SL_T_SMALLINT || at == SL_T_FLOAT; /* SUM/AVG too: operators/agg.c */
        bool collect = !strcasecmp(e->s, "COLLECT") || !strcasecmp(e->s, "JSON_ARRAYAGG") ||
                       (jobj && at == SL_T_STRING);
        if ((jobj && !collect) || (strcasecmp(e->s, "COUNT") && !collect && !dec && !mmnew &&
            ((at != SL_T_INT && at != SL_T_BIGINT && at != SL_T_DOUBLE &&
              !(minmax && (at == SL_T_TIMESTAMP || at == SL_T_STRING || at == SL_T_BOOLEAN))) ||
             (adt && sl_dtype_has_nanos(adt))))) {
            free(txt);
            free(arg);
            free(fcol);
            free(varg);
            if (jobj)
                return PERR(e->kids[0], "the key of JSON_OBJECTAGG must be a STRING, not %s",
                            adt ? adt->text : sl_type_name(at));
            return PERR(e, "%s of %s is not supported%s", e->s,
                        adt ? adt->text : sl_type_name(at),
                        sl_type_is_classic(at) && !(adt && sl_dtype_has_nanos(adt)) ? "" : " yet");
        }
    }
    int vbad = !jobj                 ? 0
               : has_agg(e->kids[1]) ? 1
               : pre_column(p, c, e->kids[1], "__arg", &varg) != SL_OK ? 2
                                                                       : 0;
    if (vbad) {
        free(txt);
        free(fcol);
        free(arg);
        free(varg);
        return vbad == 2 ? SL_ERR : PERR(e->kids[1], "aggregate functions cannot be nested");
    }
    if (c->wspec && (jobj || !strcasecmp(e->s, "JSON_ARRAYAGG")) &&
        json_agg_window_check(p, c, e, jobj, at, varg) != SL_OK) {
        free(txt);
        free(fcol);
        free(arg);
        free(varg);
        return SL_ERR;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->a = sl_realloc(c->a, sizeof(agg) * (size_t)c->cap);
    }
    agg *a = &c->a[c->n];
    a->text = txt;
    a->name = alias ? sl_strdup(alias) : sl_sprintf("__agg%d", c->n);
    char *fn = sl_strdup(e->s);
    for (char *q = fn; *q; q++) *q = (char)toupper((unsigned char)*q);
    char *qarg = arg ? sql_quote_ident(arg) : NULL, *qname = sql_quote_ident(a->name);
    char *qf = fcol ? sql_quote_ident(fcol) : NULL;
    char *fl = qf ? sl_sprintf(" FILTER (WHERE %s)", qf) : sl_strdup("");
    char *qv = varg ? sql_quote_ident(varg) : NULL;
    char *cl = sl_sprintf("%s%s%s%s", qv ? " VALUE " : "", qv ? qv : "", e->s2 ? " " : "",
                          e->s2 ? e->s2 : "");
    a->spec = sl_sprintf("%s(%s%s%s)%s AS %s", fn, e->flags & SQL_F_DISTINCT ? "DISTINCT " : "",
                         star ? "*" : qarg, cl, fl, qname);
    free(qv);
    free(cl);
    free(varg);
    free(qf);
    free(fl);
    free(fcol);
    a->type = !strcasecmp(fn, "COUNT") ? SL_T_BIGINT : at;
    a->dt = NULL;
    a->nomerge = 0;
    if (!strcmp(fn, "COLLECT")) {
        /* MULTISET<t> NOT NULL; its values live in the GROUP BY's state: one phase */
        char *mt = sl_sprintf("MULTISET<%s> NOT NULL", adt ? adt->text : sl_type_name(at));
        if (sl_dtype_parse(mt, &a->dt, NULL, 0) != SL_OK) a->dt = NULL;
        free(mt);
        a->type = SL_T_MULTISET;
        a->nomerge = 1;
    } else if (!strcmp(fn, "JSON_ARRAYAGG") || !strcmp(fn, "JSON_OBJECTAGG")) {
        /* STRING NOT NULL, kept like COLLECT */
        a->type = SL_T_STRING;
        a->dt = sl_dtype_nullable(sl_dtype_basic(SL_T_STRING), true);
        a->nomerge = 1;
    } else if (strcasecmp(fn, "COUNT") && adt && !sl_type_is_classic(at)) {
        /* the aggregate library's result type (operators/agg.c) */
        sl_dec_type dt = {(uint8_t)adt->p, (uint8_t)adt->s}, r;
        if (at == SL_T_DECIMAL && (!strcmp(fn, "SUM") || !strcmp(fn, "AVG"))) {
            r = !strcmp(fn, "SUM") ? sl_dec_type_sum(dt) : sl_dec_type_avg(dt);
            a->dt = sl_dtype_decimal(r.p, r.s, NULL, 0);
        } else {
            a->dt = sl_dtype_nullable(adt, false);
        }
    }
    free(fn);
    free(qarg);
    free(qname);
    free(arg);
    c->n++;
    *name = sl_strdup(a->name);
    return SL_OK;
}

static sql_node *col_node(plan *p, const sql_node *at, const char *name)
{
    sql_node *n = sql_node_new(p->arena, SQL_COL, at->line, at->col);
    n->s = sql_arena_strndup(p->arena, name, strlen(name));
    return n;
}

/* Rewrite e over the aggregate's output: group expressions and aggregate
 * calls become columns; any other column is an error. */
static int rewrite(plan *p, aggctx *c, const sql_node *e, sql_node **out)
{
    if (!e) {
        *out = NULL;
        return SL_OK;
    }
    char *txt = sql_unparse(e);
    for (int i = 0; i < c->nkeys; i++)
        if (!strcmp(c->keytext[i], txt)) {
            free(txt);
            *out = col_node(p, e, c->keys[i]);
            return SL_OK;
        }
    free(txt);
    if (e->kind == SQL_FUNC && is_agg_name(e->s)) {
        char *nm;
        if (add_agg(p, c, e, NULL, &nm) != SL_OK) return SL_ERR;
        *out = col_node(p, e, nm);
        free(nm);
        return SL_OK;
    }
    if (e->kind == SQL_COL) {
        if (c->window && (!strcasecmp(e->s, "window_start") || !strcasecmp(e->s, "window_end") ||
                          !strcasecmp(e->s, "window_time"))) {
            *out = col_node(p, e, e->s);
            return SL_OK;
        }
        if (!e->s2 && is_niladic(e->s)) {
            *out = (sql_node *)e;
            return SL_OK;
        }
        if (sl_schema_find(&c->in->sch, e->s) < 0) {
            if (check_cols(p, e, c->in) != SL_OK) return SL_ERR;
            if (e->kind != SQL_COL) return rewrite(p, c, e, out); /* folded into r.f */
            *out = (sql_node *)e;
            return SL_OK;
        }
        return PERR(e, "column '%s' must be in GROUP BY or inside an aggregate function", e->s);
    }
    sql_node *n = sql_node_new(p->arena, e->kind, e->line, e->col);
    n->flags = e->flags;
    n->s = e->s;
    n->s2 = e->s2;
    for (int i = 0; i < e->nkids; i++) {
        sql_node *k;
        if (rewrite(p, c, e->kids[i], &k) != SL_OK) return SL_ERR;
        sql_node_add(p->arena, n, k);
    }
    *out = n;
    return SL_OK;
}

/* Window TVF spec "TUMBLE(INTERVAL '10' SECOND)" from the TVF's arguments. */
static int window_spec(plan *p, const sql_node *tvf, char **spec)
{
    const sql_node *args = sql_kid(tvf, 2);
    const char *fn = tvf->s;
    int lo, hi;
    if (!strcasecmp(fn, "TUMBLE")) lo = 1, hi = 2;
    else if (!strcasecmp(fn, "HOP")) lo = 2, hi = 3;
    else if (!strcasecmp(fn, "CUMULATE")) lo = 2, hi = 3;
    else if (!strcasecmp(fn, "SESSION")) lo = 1, hi = 1;
    else return PERR(tvf, "unknown window function '%s' (TUMBLE, HOP, CUMULATE or SESSION)", fn);
    if (!strcasecmp(fn, "SESSION") && args->nkids > hi) /* Flink's validator's words */
        return PERR(tvf, "Invalid number of arguments to function 'SESSION'. Was expecting 3 "
                    "arguments");
    if (args->nkids < lo || args->nkids > hi)
        return PERR(tvf, "%s takes TABLE t, DESCRIPTOR(time column) and %d%s interval%s", fn, lo,
                    hi > lo ? " or more" : "", lo > 1 ? "s" : "");
    if (sql_tvf_offset_check(p, tvf) != SL_OK) return SL_ERR;
    sql_sbuf b = {0};
    char *u = sl_strdup(fn);
    for (char *q = u; *q; q++) *q = (char)toupper((unsigned char)*q);
    sql_sb_fmt(&b, "%s(", u);
    free(u);
    for (int i = 0; i < args->nkids; i++) {
        const sql_node *a = args->kids[i];
        if (a->kind != SQL_INTERVAL) {
            free(b.p);
            return PERR(a, "%s: argument %d must be an interval literal such as INTERVAL '10' "
                        "SECOND", fn, i + 3);
        }
        char *t = sql_unparse(a);
        sql_sb_fmt(&b, "%s%s", i ? ", " : "", t);
        free(t);
    }
    sql_sb_str(&b, ")");
    *spec = sql_sb_take(&b);
    return SL_OK;
}

/* Two-phase aggregation, as Flink plans it with mini-batch on: a
 * local_aggregate before the exchange when table.exec.mini-batch.enabled is
 * true, table.optimizer.agg-phase-strategy is not ONE_PHASE, the input is
 * insert-only, no aggregate is DISTINCT (nor MIN/MAX of a STRING, which the
 * caller checks) and the window (if any) is an
 * event-time TUMBLE, HOP or CUMULATE. Returns the local vertex's config
 * (NULL: one phase). */
static const char *const two_phase_keys[4] = {
    "table.exec.mini-batch.enabled", "table.exec.mini-batch.allow-latency",
    "table.exec.mini-batch.size", "table.optimizer.agg-phase-strategy"};

static json_t *two_phase_local(const plan *p, json_t *cfg, int window, int proctime,
                               const char *spec, int updating)
{
    if (!p->mb[0] || strcasecmp(p->mb[0], "true") || (p->mb[3] && !strcasecmp(p->mb[3], "ONE_PHASE")))
        return NULL;
    if (updating || (window && (proctime || !strncasecmp(spec, "SESSION", 7)))) return NULL;
    int64_t slide, offset; /* a HOP whose size is no multiple of its slide has no slices */
    if (window && sl_window_slicing("local", spec, &slide, &offset, NULL, 0) != SL_OK) return NULL;
    json_t *aggs = json_object_get(cfg, "aggregates"); /* none (a distinct): partial row counts */
    for (size_t i = 0; i < json_array_size(aggs); i++)
        if (strcasestr(json_string_value(json_array_get(aggs, i)), "DISTINCT")) return NULL;
    json_t *l = json_object();
    json_object_set(l, "group-by", json_object_get(cfg, "group-by"));
    json_object_set(l, "aggregates", aggs);
    if (window) {
        json_object_set(l, "window", json_object_get(cfg, "window"));
        json_object_set(l, "time-column", json_object_get(cfg, "time-column"));
        if (json_object_get(cfg, "time-attribute"))
            json_object_set(l, "time-attribute", json_object_get(cfg, "time-attribute"));
    }
    if (p->mb[1]) json_object_set_new(l, two_phase_keys[1], json_string(p->mb[1]));
    if (p->mb[2]) json_object_set_new(l, two_phase_keys[2], json_string(p->mb[2]));
    return l;
}

/* Does tree e, the window TVF `from` left out, name column `name` (the
 * TVF's DESCRIPTOR names a column of its input, which is never ambiguous)? */
static bool names_column(const sql_node *e, const sql_node *from, const char *name)
{
    if (!e || e == from) return false;
    if (e->kind == SQL_COL && e->s && !strcasecmp(e->s, name)) return true;
    for (int i = 0; i < e->nkids; i++)
        if (names_column(e->kids[i], from, name)) return true;
    return false;
}

/* The input of a window TVF aggregation (FROM TABLE(TUMBLE(...))): the
 * scanned table as *in, the window spec, and its time attribute -- the
 * event-time column (*tcol) or processing time (*proctime). */
static int agg_window_input(plan *p, const sql_node *sel, const sql_node *from, rel *in,
                            char **spec, char **tcol, int *proctime)
{
    const sql_node *tref = sql_kid(from, 0), *desc = sql_kid(from, 1), *group = sql_kid(sel, 3);
    if (window_spec(p, from, spec) != SL_OK) return SL_ERR;
    const rel *done = sqlp_joins_find(p, tref); /* planned already (plan_groupwin.c) */
    if (done) {
        rel_copy(in, done);
    } else {
        if (sql_tvf_hop_check(p, from) != SL_OK) return SL_ERR;
        if (scan_table(p, tref, tref->s, in) != SL_OK) return SL_ERR;
        free(in->alias);
        in->alias = sl_strdup(from->s2 ? from->s2 : tref->s);
    }
    rel_use_attr(in, desc->s); /* a copy of the attribute (ts AS ts2) is one too */
    /* a group window takes the retractions, as Flink 2.3's does (the window
     * operator's "input-changelog": "retract"); a TVF over a join's
     * materialized time attribute gets Flink's words below */
    bool mat = (in->mrowtime && !strcasecmp(in->mrowtime, desc->s)) ||
               (in->mproctime && !strcasecmp(in->mproctime, desc->s));
    if (in->updating && !done && !mat)
        return PERR(from, "a window TVF over an updating input (produced by %s) is not "
                    "supported", in->updater);
    static const char *const added[] = {"window_start", "window_end", "window_time"};
    for (int i = 0; i < 3; i++) /* Flink: the names the query uses are ambiguous then */
        if (sl_schema_find(&in->sch, added[i]) >= 0 && names_column(sel, from, added[i]))
            return PERR(from, "Column '%s' is ambiguous: '%s' already has a column '%s', which "
                        "the window TVF adds", added[i], tref->s, added[i]);
    /* a group window's input (done) may window on a semi join's materialized
     * time attributes, as Flink 2.3 plans it; a window TVF may not, as there */
    const char *rt = in->rowtime, *pt = in->proctime;
    if (done && !rt) rt = in->mrowtime;
    if (done && !pt) pt = in->mproctime;
    if (rt && !strcasecmp(rt, desc->s)) {
        *tcol = sl_strdup(rt);
    } else if (pt && !strcasecmp(pt, desc->s)) {
        *proctime = 1;
        if (!strcasecmp(from->s, "CUMULATE"))
            return PERR(from, "processing-time windows can be TUMBLE, HOP or SESSION only");
    } else if ((in->mrowtime && !strcasecmp(in->mrowtime, desc->s)) ||
               (in->mproctime && !strcasecmp(in->mproctime, desc->s))) {
        return PERR(desc, "The window function requires the timecol is a time attribute type, "
                    "but is TIMESTAMP(3). ('%s' passed a regular, semi or anti join, which makes "
                    "it a plain column, as in Flink; a group window, GROUP BY TUMBLE(%s, ...), "
                    "still takes it)", desc->s, desc->s);
    } else {
        return PERR(desc, "DESCRIPTOR(%s): '%s' is not a time attribute of '%s' (declare "
                    "WATERMARK FOR %s AS %s - INTERVAL '5' SECOND, or %s AS PROCTIME(), in "
                    "CREATE TABLE)", desc->s, desc->s, tref->s, desc->s, desc->s, desc->s);
    }
    if (!group) return PERR(sel, "a window TVF must be aggregated: GROUP BY window_start, window_end");
    return SL_OK;
}

/* GROUP BY's keys into c->keys (pre-projected columns) and c->keytext (what
 * each key is, for the uid); a window aggregation's window_start and
 * window_end are checked, not keys, and its PARTITION BY must be among them;
 * no keys at all is one constant key. */
static int agg_group_keys(plan *p, aggctx *c, const sql_node *sel)
{
    const sql_node *from = sql_kid(sel, 1), *group = sql_kid(sel, 3);
    int window = c->window;
    int has_ws = 0, has_we = 0;
    c->keys = sl_calloc((size_t)(group ? group->nkids : 0) + 1, sizeof(char *));
    c->keytext = sl_calloc((size_t)(group ? group->nkids : 0) + 1, sizeof(char *));
    for (int i = 0; group && i < group->nkids; i++) {
        const sql_node *g = group->kids[i];
        if (has_agg(g)) return PERR(g, "aggregate functions are not allowed in GROUP BY");
        if (window && g->kind == SQL_COL &&
            (!strcasecmp(g->s, "window_start") || !strcasecmp(g->s, "window_end"))) {
            if (!strcasecmp(g->s, "window_start")) has_ws = 1;
            else has_we = 1;
            continue;
        }
        /* Flink's cascading form: window_time (window_end - 1 ms) adds nothing to the group */
        if (window && g->kind == SQL_COL && !strcasecmp(g->s, "window_time")) continue;
        char *kn;
        if (pre_column(p, c, g, "__key", &kn) != SL_OK) return SL_ERR;
        c->keys[c->nkeys] = kn;
        c->keytext[c->nkeys++] = sql_unparse(g);
    }
    if (!window && c->nkeys == 0) {
        /* GROUP BY nothing: group_aggregate needs a key, so one constant key holds the
         * single group (it never matches an expression: its text is empty) */
        sql_node *zero = sql_node_new(p->arena, SQL_NUM, sel->line, sel->col);
        zero->s = "0";
        char *kn;
        if (pre_column(p, c, zero, "__global", &kn) != SL_OK) return SL_ERR;
        c->keys[c->nkeys] = kn;
        c->keytext[c->nkeys++] = sl_strdup("");
    }
    if (window && (!has_ws || !has_we))
        return PERR(group, "a window TVF aggregation must GROUP BY window_start, window_end "
                    "(and optionally keys)");
    const sql_node *part = sql_kid(from, 3);
    for (int i = 0; window && part && i < part->nkids; i++) {
        int found = 0;
        for (int k = 0; k < c->nkeys; k++)
            if (!strcasecmp(c->keys[k], part->kids[i]->s)) found = 1;
        if (!found)
            return PERR(part->kids[i], "PARTITION BY %s: the column must also be in GROUP BY",
                        part->kids[i]->s);
    }
    return SL_OK;
}

/* GROUP BY with grouping sets (sql/plan_gsets.c): each distinct group
 * expression pre-projected into a key column of its own (gkeys[k], so that an
 * aggregate's argument keeps the value the expand vertex nulls), then the id
 * column $e; a window aggregation's window_start and window_end (gkeys[k]
 * NULL) must be in every set. */
static int agg_gsets_keys(plan *p, aggctx *c, const sql_node *sel, const sql_gsets *g, char **gkeys)
{
    const sql_node *from = sql_kid(sel, 1), *group = sql_kid(sel, 3);
    int has_ws = 0, has_we = 0;
    c->keys = sl_calloc((size_t)g->nexprs + 2, sizeof(char *));
    c->keytext = sl_calloc((size_t)g->nexprs + 2, sizeof(char *));
    for (int k = 0; k < g->nexprs; k++) {
        const sql_node *e = g->exprs[k];
        if (has_agg(e)) return PERR(e, "aggregate functions are not allowed in GROUP BY");
        if (c->window && e->kind == SQL_COL &&
            (!strcasecmp(e->s, "window_start") || !strcasecmp(e->s, "window_end") ||
             !strcasecmp(e->s, "window_time"))) {
            for (int s = 0; s < g->nsets; s++)
                if (!(g->sets[s] >> k & 1))
                    return PERR(e, "a grouping set without %s: over a window TVF every grouping "
                                "set must hold window_start and window_end", e->s);
            if (!strcasecmp(e->s, "window_start")) has_ws = 1;
            if (!strcasecmp(e->s, "window_end")) has_we = 1;
            continue;
        }
        if (check_cols(p, e, c->in) != SL_OK) return SL_ERR;
        char *nm = sl_sprintf("__gk%d", k);
        c->pre = sl_realloc(c->pre, sizeof(item) * (size_t)(c->npre + 1));
        memset(&c->pre[c->npre], 0, sizeof(item));
        int rc = make_item(p, &c->pre[c->npre], e, nm, &c->in->sch);
        if (rc != SL_OK) {
            free(nm);
            return SL_ERR;
        }
        c->npre++;
        c->need_pre = 1;
        gkeys[k] = nm;
        c->keys[c->nkeys] = sl_strdup(nm);
        c->keytext[c->nkeys++] = sql_unparse(e);
    }
    if (c->window && (!has_ws || !has_we))
        return PERR(group, "a window TVF aggregation must GROUP BY window_start, window_end "
                    "(and optionally keys)");
    char *gt = sql_unparse(group); /* the id column: what the sets are, for the uid */
    c->keys[c->nkeys] = sl_strdup("$e");
    c->keytext[c->nkeys++] = sl_sprintf("$e %s", gt);
    free(gt);
    const sql_node *part = sql_kid(from, 3);
    for (int i = 0; c->window && part && i < part->nkids; i++) {
        int found = -1;
        for (int k = 0; k < g->nexprs; k++)
            if (gkeys[k] && g->exprs[k]->kind == SQL_COL && !strcasecmp(g->exprs[k]->s, part->kids[i]->s))
                found = k;
        for (int s = 0; found >= 0 && s < g->nsets; s++)
            if (!(g->sets[s] >> found & 1)) found = -1;
        if (found < 0)
            return PERR(part->kids[i], "PARTITION BY %s: the column must be in every grouping set",
                        part->kids[i]->s);
    }
    return SL_OK;
}

/* The aggregation's stateful vertex (window or group_aggregate, with a
 * local phase before it under mini-batch) over *in, whose vertex, schema
 * (the window columns, the keys, the aggregates) and
 * time attributes become the aggregate's. */
static void agg_vertex(plan *p, const aggctx *c, rel *in, int window, const char *spec,
                       const char *tcol, int proctime)
{
    sl_schema aggout;
    sl_schema_init(&aggout);
    json_t *keys = json_array();
    sql_sbuf id = {0};
    sql_sb_fmt(&id, "%s|%s|", window ? "window" : "group_aggregate", in->ident ? in->ident : "");
    for (int k = 0; k < c->nkeys; k++) {
        json_array_append_new(keys, json_string(c->keys[k]));
        sql_sb_fmt(&id, "%s,", c->keytext[k]); /* what the key is, not its column name */
    }
    json_t *aggs = json_array();
    sql_sb_str(&id, "|");
    for (int k = 0; k < c->n; k++) {
        json_array_append_new(aggs, json_string(c->a[k].spec));
        sql_sb_fmt(&id, "%s,", c->a[k].text);
    }
    json_t *cfg = json_object();
    int ltz = 0;
    if (window) {
        sql_sb_fmt(&id, "|%s|%s", spec, proctime ? "proctime" : tcol);
        if (proctime) json_object_set_new(cfg, "time", json_string("processing"));
        else json_object_set_new(cfg, "time-column", json_string(tcol));
        json_object_set_new(cfg, "window", json_string(spec));
        /* over a TIMESTAMP_LTZ or processing-time attribute the windows align in
         * the session zone (which add_job_config copies into the vertex) and
         * window_time is a TIMESTAMP_LTZ(3), as in Flink */
        int ti = proctime ? -1 : sl_schema_find(&in->sch, tcol);
        const sl_dtype *wtdt = sl_dtype_basic(SL_T_TIMESTAMP);
        if (proctime || (ti >= 0 && in->sch.fields[ti].dt->variant == SL_DV_LTZ)) {
            ltz = 1;
            json_object_set_new(cfg, "time-attribute", json_string("ltz"));
            char derr[100];
            if (sl_dtype_parse("TIMESTAMP_LTZ(3)", &wtdt, derr, sizeof derr) != SL_OK)
                wtdt = sl_dtype_basic(SL_T_TIMESTAMP);
        }
        sl_schema_add(&aggout, "window_start", SL_T_TIMESTAMP);
        sl_schema_add(&aggout, "window_end", SL_T_TIMESTAMP);
        sl_schema_add_dt(&aggout, "window_time", wtdt);
    }
    json_object_set(cfg, "group-by", keys);
    json_object_set_new(cfg, "aggregates", aggs);
    if (window && !proctime) json_object_set_new(cfg, "allowed-lateness", json_string("0 s"));
    if (!window && sqlp_ttl_set(p)) json_object_set_new(cfg, "table.exec.state.ttl", json_string(p->ttl));
    if (in->updating) json_object_set_new(cfg, "input-changelog", json_string("retract"));
    for (int k = 0; k < c->nkeys; k++) {
        int ci = sl_schema_find(&in->sch, c->keys[k]);
        sl_schema_add_dt(&aggout, c->keys[k],
                         ci >= 0 ? in->sch.fields[ci].dt : sl_dtype_basic(SL_T_STRING));
    }
    for (int k = 0; k < c->n; k++)
        if (c->a[k].dt) sl_schema_add_dt(&aggout, c->a[k].name, c->a[k].dt);
        else sl_schema_add(&aggout, c->a[k].name, c->a[k].type);
    char *uid = sl_sprintf("%s-%s-%08x", window ? "window" : "agg", in->ident ? in->ident : "q",
                           fnv1a(id.p));
    free(id.p);
    int strval = 0; /* a MIN/MAX of STRING, or a user function without merge: one phase */
    for (int k = 0; k < c->n; k++) strval |= c->a[k].type == SL_T_STRING || c->a[k].nomerge;
    json_t *local = strval ? NULL : two_phase_local(p, cfg, window, proctime, spec, in->updating);
    char *lvid = NULL;
    if (local) { /* the local phase, chained to the input; the global one merges */
        lvid = add_vertex(p, window ? "local-window" : "local-agg", "local_aggregate", NULL, local,
                          NULL, 0);
        add_edge(p, in->vid, lvid, NULL, NULL, 0);
        json_object_set_new(cfg, "phase", json_string("global"));
    }
    char *vid = add_vertex(p, window ? "window" : "agg", window ? "window" : "group_aggregate", uid,
                           cfg, NULL, c->nkeys && (window || c->keytext[0][0]) ? 0 : 1);
    free(uid);
    const char *feed = lvid ? lvid : in->vid;
    if (c->nkeys) add_edge(p, feed, vid, "hash", keys, 0);
    else add_edge(p, feed, vid, "rebalance", NULL, 0);
    free(lvid);
    json_decref(keys);
    free(in->vid);
    in->vid = vid;
    sl_schema_free(&in->sch);
    in->sch = aggout;
    free(in->rowtime);
    free(in->proctime);
    in->rowtime = window ? sl_strdup("window_time") : NULL;
    in->proctime = NULL;
    in->windowed = window && !proctime ? 1 + ltz : 0;
    if (window) { /* a window's results are final: insert-only */
        in->updating = 0;
        free(in->updater);
        in->updater = NULL;
    } else {
        in->updating = 1;
        free(in->updater);
        sql_sbuf u = {0};
        sql_sb_fmt(&u, "group_aggregate '%s' (GROUP BY", vid);
        int global = c->nkeys == 1 && !c->keytext[0][0];
        for (int k = 0; !global && k < c->nkeys; k++) sql_sb_fmt(&u, "%s %s", k ? "," : "", c->keytext[k]);
        sql_sb_str(&u, global ? " nothing)" : ")");
        in->updater = sql_sb_take(&u);
    }
}

/* Grouping sets over a window TVF of which some set leaves out window_start
 * or window_end: Flink's window aggregation rule does not match them, so it
 * aggregates the TVF's rows (every row once per window, none dropped as
 * late) as a plain table, window_start and window_end ordinary keys, and the
 * result is an updating one. 1 for such a GROUP BY. */
static int gsets_leave_window(plan *p, const sql_node *group)
{
    sql_gsets g = {0};
    int leave = 0;
    if (group && sql_gsets_of(p, group, &g) == SL_OK)
        for (int k = 0; k < g.nexprs; k++) {
            const sql_node *e = g.exprs[k];
            if (e->kind != SQL_COL || (strcasecmp(e->s, "window_start") &&
                                       strcasecmp(e->s, "window_end")))
                continue;
            for (int s = 0; s < g.nsets; s++)
                if (!(g.sets[s] >> k & 1)) leave = 1;
        }
    sql_gsets_free(&g);
    if (p->err && p->errlen) p->err[0] = '\0'; /* an error comes again where it is planned */
    return leave;
}

static int plan_aggregate(plan *p, const sql_node *sel, rel *out)
{
    const sql_node *items = sql_kid(sel, 0), *from = sql_kid(sel, 1), *where = sql_kid(sel, 2),
                   *having = sql_kid(sel, 4);
    int window = from->kind == SQL_FROM_TVF && !gsets_leave_window(p, sql_kid(sel, 3));
    rel in = {0};
    char *spec = NULL, *tcol = NULL;
    int proctime = 0;
    aggctx c = {0};
    sql_gsets g = {0};
    char **gkeys = NULL; /* per group expression of g, its key column (grouping sets) */
    int rc = SL_OK;
    if (window) rc = agg_window_input(p, sel, from, &in, &spec, &tcol, &proctime);
    else rc = plan_from(p, from, &in);
    if (rc != SL_OK) goto done;
    /* r.f over ROW columns, before group keys and items are matched by their text */
    for (int i = 0; i < 5; i++)
        if (i != 1) fold_fields(p, sql_kid(sel, i), &in);
    c.in = &in;
    c.window = window;
    c.wspec = window ? spec : NULL;
    c.groupwin = window && sqlp_joins_find(p, sql_kid(from, 0)) != NULL;
    /* the pre-projection starts as all input columns */
    c.npre = (int)in.sch.n;
    c.pre = sl_calloc(in.sch.n + 1, sizeof(item));
    for (int i = 0; i < in.sch.n; i++) {
        c.pre[i].name = sl_strdup(in.sch.fields[i].name);
        c.pre[i].text = sql_quote_ident(in.sch.fields[i].name);
        c.pre[i].type = in.sch.fields[i].type;
        c.pre[i].dt = in.sch.fields[i].dt;
    }
    int gs = sql_gsets_of(p, sql_kid(sel, 3), &g);
    if (gs == SL_ERR) {
        rc = SL_ERR;
        goto done;
    }
    gkeys = sl_calloc((size_t)g.nexprs + 1, sizeof(char *));
    if (gs == SL_OK) rc = agg_gsets_keys(p, &c, sel, &g, gkeys);
    else rc = agg_group_keys(p, &c, sel);
    if (rc == SL_OK) rc = sql_gsets_check_args(p, &g, items, window);
    if (rc == SL_OK) rc = sql_gsets_check_args(p, &g, having, window);
    if (rc != SL_OK) goto done;
    /* aggregates named by their select alias when the item is just the call */
    for (int i = 0; i < items->nkids; i++) {
        const sql_node *it = items->kids[i], *e = it->kids[0];
        if (e->kind == SQL_STAR) {
            rc = PERR(e, "SELECT * cannot be used with GROUP BY");
            goto done;
        }
        if (e->kind == SQL_FUNC && is_agg_name(e->s) && it->s) {
            int clash = 0;
            for (int k = 0; k < c.nkeys; k++)
                if (!strcasecmp(c.keys[k], it->s)) clash = 1;
            if (sl_schema_find(&in.sch, it->s) >= 0) clash = 1;
            char *nm;
            if ((rc = add_agg(p, &c, e, clash ? NULL : it->s, &nm)) != SL_OK) goto done;
            free(nm);
        }
    }
    /* post-projection over the aggregate's output */
    sql_node **post = sl_calloc((size_t)items->nkids + 1, sizeof(sql_node *));
    sql_node *post_having = NULL;
    for (int i = 0; rc == SL_OK && i < items->nkids; i++)
        rc = rewrite(p, &c, items->kids[i]->kids[0], &post[i]);
    if (rc == SL_OK && having) {
        rc = rewrite(p, &c, having, &post_having);
    }
    /* GROUPING(...), GROUPING_ID(...), GROUP_ID(): their values over the id column */
    for (int i = 0; rc == SL_OK && i < items->nkids; i++)
        rc = sql_gsets_functions(p, &g, gkeys, gs == SL_OK ? "$e" : NULL, &post[i]);
    if (rc == SL_OK) rc = sql_gsets_functions(p, &g, gkeys, gs == SL_OK ? "$e" : NULL, &post_having);
    if (rc != SL_OK) {
        free(post);
        goto done;
    }
    /* the pre-projection: only when a key or argument is an expression or WHERE filters */
    if (where && has_agg(where)) {
        rc = PERR(where, "aggregate functions are not allowed in WHERE (use HAVING)");
    } else if (c.need_pre || where) {
        if (where && check_cols(p, where, &in) != SL_OK) rc = SL_ERR;
        else rc = emit_calc(p, &in, c.need_pre ? c.pre : NULL, c.need_pre ? c.npre : 0, where,
                            window ? "window-input" : "agg-input");
    }
    if (rc != SL_OK) {
        free(post);
        goto done;
    }
    /* each row once per grouping set, then the stateful operator */
    if (gs == SL_OK) sql_gsets_expand_vertex(p, &g, gkeys, "$e", &in);
    agg_vertex(p, &c, &in, window, spec, tcol, proctime);
    /* the SELECT list and HAVING */
    item *its = sl_calloc((size_t)items->nkids + 1, sizeof(item));
    rel tmp = {.sch = in.sch, .alias = NULL};
    for (int i = 0; rc == SL_OK && i < items->nkids; i++) {
        char *nm = item_name(items->kids[i], i);
        rc = make_item(p, &its[i], post[i], nm, &tmp.sch);
        free(nm);
    }
    if (rc == SL_OK) {
        rc = emit_calc(p, &in, its, items->nkids, post_having, window ? "window-select" : "agg-select");
        if (rc == SL_OK) carry_time_attrs(&in, its, items->nkids);
    }
    items_free(its, items->nkids);
    free(post);
done:
    free(spec);
    free(tcol);
    for (int k = 0; gkeys && k < g.nexprs; k++) free(gkeys[k]);
    free(gkeys);
    sql_gsets_free(&g);
    aggctx_free(&c);
    if (rc != SL_OK) {
        rel_free(&in);
        return SL_ERR;
    }
    *out = in;
    return SL_OK;
}

static int plan_select(plan *p, const sql_node *sel, rel *out)
{
    if (sql_subquery_rewrite(p, sel, &sel) != SL_OK) return SL_ERR;
    if (sel->flags & SQL_F_DISTINCT) return sql_plan_select_distinct(p, sel, out);
    if (!sql_kid(sel, 1)) return sql_plan_nofrom(p, sel, out);
    if (sql_join_resolve_select(p, sel, &sel) != SL_OK) return SL_ERR;
    if (sql_groupwin_rewrite(p, sel, &sel) != SL_OK) return SL_ERR;
    const sql_node *items = sql_kid(sel, 0), *from = sql_kid(sel, 1), *where = sql_kid(sel, 2),
                   *group = sql_kid(sel, 3), *having = sql_kid(sel, 4);
    if (sql_is_rank_query(p, sel)) return sql_plan_rank(p, sel, out);
    if (p->schema_only) {
        int rc = sql_rank_view_columns(p, sel, out);
        if (rc != SL_DONE) return rc;
    }
    if (sql_select_has_over(sel)) return sql_plan_over(p, sel, out);
    int is_agg = group || having;
    for (int i = 0; i < items->nkids; i++)
        if (has_agg(items->kids[i]->kids[0])) is_agg = 1;
    if (is_agg) return plan_aggregate(p, sel, out);
    rel in = {0};
    if (plan_from(p, from, &in) != SL_OK) return SL_ERR;
    if (where && has_agg(where)) {
        rel_free(&in);
        return PERR(where, "aggregate functions are not allowed in WHERE");
    }
    item *its;
    int n;
    if (select_items(p, items, &in, &its, &n) != SL_OK) {
        rel_free(&in);
        return SL_ERR;
    }
    int rc = SL_OK;
    if (!identity(its, n, &in.sch) || where) {
        if (where && check_cols(p, where, &in) != SL_OK) rc = SL_ERR;
        else rc = emit_calc(p, &in, identity(its, n, &in.sch) ? NULL : its, n, where, "calc");
        if (rc == SL_OK) carry_time_attrs(&in, its, n);
    }
    items_free(its, n);
    if (rc != SL_OK) {
        rel_free(&in);
        return SL_ERR;
    }
    *out = in;
    return SL_OK;
}

static void union_branches(const sql_node *q, const sql_node ***b, int *n, int *cap)
{
    if (q->kind == SQL_UNION && !q->s && (q->flags & SQL_F_ALL)) {
        union_branches(q->kids[0], b, n, cap);
        union_branches(q->kids[1], b, n, cap);
        return;
    }
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *b = sl_realloc(*b, sizeof(sql_node *) * (size_t)*cap);
    }
    (*b)[(*n)++] = q;
}

static int plan_union(plan *p, const sql_node *q, rel *out)
{
    if (q->s || !(q->flags & SQL_F_ALL)) return sql_plan_setop(p, q, out);
    const sql_node **br = NULL;
    int n = 0, cap = 0;
    union_branches(q, &br, &n, &cap);
    rel *rs = sl_calloc((size_t)n, sizeof(rel));
    int rc = SL_OK, done = 0;
    for (int i = 0; rc == SL_OK && i < n; i++) {
        rc = plan_query(p, br[i], &rs[i]);
        if (rc == SL_OK) done++;
    }
    if (rc == SL_OK) rc = sql_setop_align(p, "UNION", rs, br, n);
    /* two branches that are the same vertex (a self-UNION of a table) would be two edges
     * between the same pair: the later ones pass through a calc of their own */
    for (int i = 1; rc == SL_OK && i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(rs[i].vid, rs[j].vid)) {
                rc = emit_calc(p, &rs[i], NULL, 0, NULL, "union-branch");
                break;
            }
    if (rc == SL_OK) {
        sql_sbuf ident = {0};
        int upd = 0;
        sql_sb_str(&ident, "union(");
        for (int i = 0; i < n; i++) {
            sql_sb_fmt(&ident, "%s%s", i ? "," : "", rs[i].ident ? rs[i].ident : "");
            if (rs[i].updating) upd = 1;
        }
        sql_sb_str(&ident, ")");
        char *id = add_vertex(p, "union", "union", NULL, NULL, NULL, 0);
        for (int i = 0; i < n; i++) add_edge(p, rs[i].vid, id, NULL, NULL, i);
        memset(out, 0, sizeof *out);
        out->vid = id;
        sl_schema_copy(&out->sch, &rs[0].sch);
        out->ident = sql_sb_take(&ident);
        out->updating = upd;
        for (int i = 0; i < n; i++)
            if (rs[i].updating && !out->updater) out->updater = dup0(rs[i].updater);
        int same_rt = rs[0].rowtime != NULL;
        for (int i = 1; i < n; i++)
            if (!rs[i].rowtime || !rs[0].rowtime || strcasecmp(rs[i].rowtime, rs[0].rowtime)) same_rt = 0;
        if (same_rt) out->rowtime = sl_strdup(rs[0].rowtime);
    }
    for (int i = 0; i < n; i++) rel_free(&rs[i]);
    free(rs);
    free(br);
    return rc;
}

int plan_query(plan *p, const sql_node *q, rel *out)
{
    if (++p->depth > 64) {
        p->depth--;
        return PERR(q, "query nested too deeply");
    }
    int rc;
    memset(out, 0, sizeof *out);
    switch (q->kind) {
    case SQL_SELECT: rc = plan_select(p, q, out); break;
    case SQL_UNION: rc = plan_union(p, q, out); break;
    case SQL_VALUES: rc = sql_plan_values(p, q, out); break;
    case SQL_LIMIT: rc = sql_plan_limit(p, q, out); break;
    case SQL_WITH: {
        const sql_node *ctes = sql_kid(q, 0);
        cte_scope *sc = sl_calloc((size_t)ctes->nkids, sizeof *sc);
        const cte_scope *saved = p->scope;
        for (int i = 0; i < ctes->nkids; i++) {
            sc[i].cte = ctes->kids[i];
            sc[i].outer = i ? &sc[i - 1] : saved;
        }
        p->scope = &sc[ctes->nkids - 1];
        rc = plan_query(p, sql_kid(q, 1), out);
        p->scope = saved;
        free(sc);
        break;
    }
    default: rc = PERR(q, "unsupported query"); break;
    }
    p->depth--;
    return rc;
}

/* ---- INSERT ------------------------------------------------------------- */

static int widen_ok(sl_type from, sl_type to)
{
    if (from == to || from == SL_T_NULL) return 1;
    if (to == SL_T_BIGINT && from == SL_T_INT) return 1;
    if (to == SL_T_DOUBLE && (from == SL_T_INT || from == SL_T_BIGINT)) return 1;
    if (to == SL_T_INT && from == SL_T_BIGINT) return 1; /* Flink narrows implicitly too */
    return 0;
}

/* Does a TINYINT, SMALLINT or FLOAT value convert implicitly into a column
 * of type `to` (or a value into a TINYINT, SMALLINT or FLOAT column)? Only
 * widening, as Flink's implicit casts: TINYINT into SMALLINT .. DOUBLE and
 * DECIMAL, INT into FLOAT, FLOAT into DOUBLE. */
static bool small_widens(sl_type from, sl_type to)
{
    bool small = from == SL_T_TINYINT || from == SL_T_SMALLINT || from == SL_T_FLOAT ||
                 to == SL_T_TINYINT || to == SL_T_SMALLINT || to == SL_T_FLOAT;
    if (!small || from == to) return false;
    if (to == SL_T_DECIMAL) return from == SL_T_TINYINT || from == SL_T_SMALLINT;
    return sl_type_num_order(from) && sl_type_num_order(to) > sl_type_num_order(from);
}

/* A calc that gives the query's columns (*r) the sink's names and types:
 * src[k] is the query column for the table's k-th written column (-1:
 * NULL); none when they already match. */
static int insert_shape(plan *p, const sql_node *ins, const sql_table *t, const int *src,
                        int nphys, rel *r)
{
    const sql_column *unc = !strcmp(t->connector, "jdbc") ? sql_jdbc_uncarried(t) : NULL;
    if (unc)
        return PERR(ins, "INSERT INTO %s: column '%s' is %s; the jdbc connector cannot carry "
                    "that type yet", t->name, unc->name, sql_col_dt(unc)->text);
    int rc = SL_OK;
    item *its = sl_calloc((size_t)nphys + 1, sizeof(item));
    int need = 0, k = 0;
    for (int i = 0; rc == SL_OK && i < t->ncols; i++) {
        const sql_column *c = &t->cols[i];
        if (!sql_column_written(c)) continue;
        if (src[k] < 0 && (c->notnull || sql_col_dt(c)->notnull)) { /* Flink's words */
            rc = PERR(sql_kid(ins, 0), "INSERT INTO %s: Column '%s' has no default value and does "
                      "not allow NULLs", t->name, c->name);
            break;
        }
        if (src[k] < 0) { /* not listed: a NULL of the column's whole type */
            const sl_dtype *ndt = sl_dtype_nullable(sql_col_dt(c), false);
            char *dst = sql_quote_ident(c->name);
            its[k].name = sl_strdup(c->name);
            its[k].type = c->type;
            its[k].dt = ndt;
            its[k].text = sl_sprintf("CAST(NULL AS %s) AS %s", ndt->text, dst);
            free(dst);
            need = 1;
            k++;
            continue;
        }
        const sl_field *f = &r->sch.fields[src[k]];
        if (src[k] != k) need = 1;
        /* exact numbers convert implicitly into a DECIMAL column of another
         * precision or scale (an overflow is NULL, as Flink's CAST), a DECIMAL
         * into a DOUBLE column */
        const sl_dtype *cdt = sql_col_dt(c);
        bool dec = (c->type == SL_T_DECIMAL &&
                    (f->type == SL_T_DECIMAL || f->type == SL_T_INT || f->type == SL_T_BIGINT)) ||
                   (f->type == SL_T_DECIMAL && c->type == SL_T_DOUBLE) ||
                   /* a nested value of other field names or element types: element-wise */
                   (sl_type_is_nested(c->type) && f->type == c->type && f->dt->phys != cdt->phys) ||
                   small_widens(f->type, c->type) ||
                   /* a TIMESTAMP_LTZ (PROCTIME()) into a TIMESTAMP column and back: Flink's
                    * implicit CAST, through the session time zone */
                   (f->type == SL_T_TIMESTAMP && c->type == SL_T_TIMESTAMP &&
                    (f->dt->variant == SL_DV_LTZ) != (cdt->variant == SL_DV_LTZ)) ||
                   /* text into a VARCHAR(n) column is cut to n code points, into a
                    * CHAR(n) one also padded (what Flink's sink writes) */
                   (f->type == SL_T_STRING && c->type == SL_T_STRING && cdt->p < SL_DTYPE_MAX_LEN &&
                    (f->dt->p > cdt->p || (cdt->variant == SL_DV_CHAR &&
                                           !(f->dt->variant == SL_DV_CHAR && f->dt->p == cdt->p))));
        if (dec && sl_dtype_nullable(f->dt, false) != sl_dtype_nullable(cdt, false)) {
            char *from = sql_quote_ident(f->name), *dst = sql_quote_ident(c->name);
            its[k].name = sl_strdup(c->name);
            its[k].type = c->type;
            its[k].dt = cdt;
            its[k].text = sl_sprintf("CAST(%s AS %s) AS %s", from,
                                     sl_dtype_nullable(cdt, false)->text, dst);
            free(from);
            free(dst);
            need = 1;
            k++;
            continue;
        }
        if (!widen_ok(f->type, c->type)) {
            rc = PERR(sql_kid(ins, 0), "INSERT INTO %s: column %d ('%s') is %s, the table's "
                      "'%s' is %s; CAST it", t->name, src[k] + 1, f->name,
                      sl_dtype_nullable(f->dt, false)->text, c->name,
                      sl_dtype_nullable(cdt, false)->text);
            break;
        }
        if ((!sl_type_is_classic(f->type) || !sl_type_is_classic(c->type) ||
             sl_dtype_has_nanos(f->dt) || sl_dtype_has_nanos(sql_col_dt(c))) &&
            f->dt->phys != sql_col_dt(c)->phys) {
            rc = PERR(sql_kid(ins, 0), "INSERT INTO %s: column %d ('%s') is %s, the table's "
                      "'%s' is %s; converting between them is not supported yet", t->name,
                      src[k] + 1, f->name, f->dt->text, c->name, sql_col_dt(c)->text);
            break;
        }
        char *from = sql_quote_ident(f->name), *dst = sql_quote_ident(c->name);
        its[k].name = sl_strdup(c->name);
        its[k].type = c->type;
        its[k].dt = sql_col_dt(c);
        if (f->type != c->type && f->type != SL_T_NULL) {
            its[k].text = sl_sprintf("CAST(%s AS %s) AS %s", from, sl_type_name(c->type), dst);
            need = 1;
        } else if (strcmp(f->name, c->name)) {
            its[k].text = sl_sprintf("%s AS %s", from, dst);
            need = 1;
        } else {
            its[k].text = sl_strdup(from);
        }
        free(from);
        free(dst);
        k++;
    }
    if (rc == SL_OK && need) {
        char *base = sl_sprintf("%s-shape", t->name);
        rc = emit_calc(p, r, its, nphys, NULL, base);
        free(base);
    }
    items_free(its, nphys);
    return rc;
}

/* The sink vertex of table t, fed by *r. */
static void insert_sink(plan *p, const sql_table *t, const rel *r)
{
    json_t *cfg = json_object();
    const char *type = "print";
    int par = 0;
    for (int i = 0; i < t->nopts; i++) {
        const char *key = t->keys[i], *v = t->vals[i];
        if (!strcmp(key, "sink.parallelism")) par = atoi(v);
        else if (!strcmp(key, "print-identifier") || !strcmp(key, "sink.rows-per-second") ||
                 !strncmp(key, "sink.partition-commit.", 22) || /* file sink's commit */
                 !strncmp(key, "partition.time-extractor.", 25) ||
                 (!strncmp(key, "json.", 5) && strcmp(key, "json.ignore-parse-errors") &&
                  strcmp(key, "json.fail-on-missing-field"))) /* the writer's json options */
            json_object_set_new(cfg, key, json_string(v));
        else if (!strcmp(key, "path"))
            json_object_set_new(cfg, "path", json_string(!strncmp(v, "file://", 7) ? v + 7 : v));
        else if (!strcmp(key, "format")) {
            char low[16];
            snprintf(low, sizeof low, "%s", v);
            for (char *q = low; *q; q++) *q = (char)tolower((unsigned char)*q);
            json_object_set_new(cfg, "format", json_string(low));
        }
    }
    if (t->npart) json_object_set_new(cfg, "partition-by", sql_table_partition_by(t));
    if (!strcmp(t->connector, "blackhole")) type = "blackhole";
    else if (!strcmp(t->connector, "filesystem")) type = "file";
    else if (!strcmp(t->connector, "kafka")) type = "kafka-sink";
    else if (!strcmp(t->connector, "upsert-kafka")) type = "upsert-kafka-sink";
    else if (!strcmp(t->connector, "jdbc")) type = "jdbc-sink";
    if (sql_table_is_kafka(t) || !strcmp(t->connector, "jdbc")) {
        json_decref(cfg);
        cfg = sql_table_is_kafka(t) ? sql_kafka_config(t, 1) : sql_jdbc_config(t, 1);
    }
    char *uid = sl_sprintf("sink-%s", t->name);
    json_t *ccfg = NULL; /* a partition committer after a partitioned file sink */
    if (!strcmp(type, "file") && t->npart && json_object_get(cfg, "sink.partition-commit.policy.kind")) {
        ccfg = json_object();
        const char *k;
        json_t *val;
        json_object_foreach(cfg, k, val)
            if (!strcmp(k, "path") || !strncmp(k, "sink.partition-commit.", 22) ||
                !strncmp(k, "partition.time-extractor.", 25))
                json_object_set(ccfg, k, val);
    }
    char *id = add_vertex(p, t->name, type, uid, cfg, NULL, par);
    add_edge(p, r->vid, id, NULL, NULL, 0);
    if (ccfg) {
        /* Flink's PartitionCommitter: one for all the writers */
        char *cbase = sl_sprintf("%s-committer", t->name);
        char *cuid = sl_sprintf("sink-%s-partition-commit", t->name);
        char *cid = add_vertex(p, cbase, "partition_commit", cuid, ccfg, NULL, 1);
        add_edge(p, id, cid, NULL, NULL, 0);
        json_object_set_new(json_array_get(p->edges, json_array_size(p->edges) - 1), "output",
                            json_string("partition-commit"));
        free(cid);
        free(cuid);
        free(cbase);
    }
    free(id);
    free(uid);
}

static int plan_insert(plan *p, const sql_node *ins, char **names, int *nnames)
{
    const sql_table *t = sql_catalog_find(p->cat, ins->s);
    if (!t) return PERR(ins, "table '%s' does not exist in this session", ins->s);
    if (t->is_view) return PERR(ins, "'%s' is a view; INSERT INTO a table", ins->s);
    if (!strcmp(t->connector, "datagen") || !strcmp(t->connector, "nexmark"))
        return PERR(ins, "table '%s' (connector '%s') is a source; it cannot be written",
                    ins->s, t->connector);
    for (int i = 0; i < t->ncols; i++)
        if (sql_column_written(&t->cols[i]) && t->cols[i].meta &&
            !sql_kafka_meta_writable(t->cols[i].meta))
            return PERR(ins, "Invalid metadata key '%s' in column '%s' of table '%s'. The %s "
                        "connector supports the following metadata keys for writing: %s (declare "
                        "the column VIRTUAL to only read it)", t->cols[i].meta, t->cols[i].name,
                        t->name, t->connector, sql_kafka_meta_keys(1));
    rel r;
    if (plan_query(p, sql_kid(ins, 0), &r) != SL_OK) return SL_ERR;
    int rc = SL_OK;
    int nphys = 0;
    for (int i = 0; i < t->ncols; i++)
        if (sql_column_written(&t->cols[i])) nphys++;
    /* src[k]: the query column feeding the table's k-th physical column, -1 for NULL */
    int *src = sl_calloc((size_t)nphys + 1, sizeof(int));
    const sql_node *cols = sql_kid(ins, 1);
    for (int k = 0; k < nphys; k++) src[k] = cols ? -1 : k;
    for (int j = 0; cols && rc == SL_OK && j < cols->nkids; j++) {
        const sql_node *cn = cols->kids[j];
        int k = 0, found = -1;
        for (int i = 0; i < t->ncols; i++) {
            if (!sql_column_written(&t->cols[i])) continue;
            if (!strcasecmp(t->cols[i].name, cn->s)) found = k;
            k++;
        }
        if (found < 0)
            rc = PERR(cn, "INSERT INTO %s: the table has no column '%s'", t->name, cn->s);
        else if (src[found] >= 0)
            rc = PERR(cn, "INSERT INTO %s: column '%s' is listed twice", t->name, cn->s);
        else
            src[found] = j;
    }
    if (rc == SL_OK && cols && r.sch.n != cols->nkids) {
        rc = PERR(sql_kid(ins, 0), "INSERT INTO %s: the query gives %d column%s for %d listed "
                  "column%s", t->name, r.sch.n, r.sch.n == 1 ? "" : "s", cols->nkids,
                  cols->nkids == 1 ? "" : "s");
    } else if (rc == SL_OK && !cols && r.sch.n != nphys) {
        sql_sbuf have = {0};
        for (int i = 0; i < t->ncols; i++)
            if (sql_column_written(&t->cols[i])) sql_sb_fmt(&have, "%s%s", have.len ? ", " : "", t->cols[i].name);
        rc = PERR(sql_kid(ins, 0), "INSERT INTO %s: the query gives %d column%s, the table has "
                  "%d (%s)", t->name, r.sch.n, r.sch.n == 1 ? "" : "s", nphys,
                  have.p ? have.p : "");
        free(have.p);
    }
    const char *fmt = NULL;
    int csv = 0;
    if (!strcmp(t->connector, "filesystem")) {
        for (int i = 0; i < t->nopts; i++)
            if (!strcmp(t->keys[i], "format")) fmt = t->vals[i];
        csv = fmt && !strcasecmp(fmt, "csv");
    }
    if (rc == SL_OK && r.updating && !strcmp(t->connector, "kafka") && !sql_table_changelog(t))
        rc = PERR(ins, "Table sink '%s' doesn't support consuming update and delete changes "
                  "which is produced by %s: the 'kafka' connector is append-only (use "
                  "'upsert-kafka' with a PRIMARY KEY, or 'value.format' = 'debezium-json')",
                  t->name, r.updater);
    if (rc == SL_OK && r.updating && !strcmp(t->connector, "jdbc") && !t->npk)
        rc = PERR(ins, "Table sink '%s' doesn't support consuming update and delete changes "
                  "which is produced by %s: please declare primary key for sink table when "
                  "query contains update/delete record", t->name, r.updater);
    if (rc == SL_OK && r.updating && csv)
        rc = PERR(ins, "Table sink '%s' doesn't support consuming update changes which is "
                  "produced by %s: a 'filesystem' table with format 'csv' is append-only (format "
                  "'json' carries each row's kind, 'print' prints it)", t->name, r.updater);
    /* shape to the sink's names and types */
    if (rc == SL_OK) rc = insert_shape(p, ins, t, src, nphys, &r);
    free(src);
    if (rc == SL_OK) {
        insert_sink(p, t, &r);
        names[(*nnames)++] = sl_strdup(t->name);
    }
    rel_free(&r);
    return rc;
}

static json_t *plan_new(plan *p, const sql_catalog *cat, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cat = cat;
    p->vertices = json_array();
    p->edges = json_array();
    p->arena = sql_arena_new();
    p->err = err;
    p->errlen = errlen;
    return p->vertices;
}

static void plan_free(plan *p)
{
    for (int i = 0; i < p->nscans; i++) rel_free(&p->scans[i]);
    free(p->scans);
    sql_plan_joins_free(p);
    json_decref(p->vertices);
    json_decref(p->edges);
    sql_arena_destroy(p->arena);
}

static json_t *plan_stmt(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                         const sql_node *stmt, sl_schema *cols, int *updating, char *err,
                         size_t errlen);

json_t *sql_plan(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                 const sql_node *stmt, char *err, size_t errlen)
{
    return plan_stmt(cat, okeys, ovals, nopts, stmt, NULL, NULL, err, errlen);
}

json_t *sql_plan_query(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                       const sql_node *stmt, sl_schema *cols, int *updating, char *err,
                       size_t errlen)
{
    return plan_stmt(cat, okeys, ovals, nopts, stmt, cols, updating, err, errlen);
}

/* A plain query's rows go to the client: one `collect` sink (parallelism 1,
 * so the client sees one sequence), read through the JobManager. */
static int plan_collect(plan *p, const rel *r)
{
    char *id = add_vertex(p, "collect", "collect", "sink-collect", NULL, NULL, 1);
    add_edge(p, r->vid, id, NULL, NULL, 0);
    free(id);
    return SL_OK;
}

static json_t *plan_stmt(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                         const sql_node *stmt, sl_schema *cols, int *updating, char *err,
                         size_t errlen)
{
    plan p;
    plan_new(&p, cat, err, errlen);
    const char *pname = NULL, *par = NULL;
    int reuse = 1;
    for (int i = 0; i < nopts; i++) {
        if (!strcmp(okeys[i], "table.exec.state.ttl")) p.ttl = ovals[i];
        for (int k = 0; k < 4; k++)
            if (!strcmp(okeys[i], two_phase_keys[k])) p.mb[k] = ovals[i];
        if (!strcmp(okeys[i], "pipeline.auto-watermark-interval")) p.wm_interval = ovals[i];
        if (!strcmp(okeys[i], "table.exec.source.idle-timeout")) p.idle_timeout = ovals[i];
        if (!strcmp(okeys[i], "pipeline.name")) pname = ovals[i];
        if (!strcmp(okeys[i], "parallelism.default")) par = ovals[i];
        if (!strcmp(okeys[i], "table.optimizer.reuse-sub-plan-enabled"))
            reuse = strcasecmp(ovals[i], "false") != 0;
    }
    int rc = SL_OK;
    char *sinks[256];
    int nsinks = 0;
    if (stmt->kind == SQL_INSERT) {
        rc = plan_insert(&p, stmt, sinks, &nsinks);
    } else if (stmt->kind == SQL_STMT_SET) {
        for (int i = 0; rc == SL_OK && i < stmt->nkids; i++) {
            if (nsinks == 256) {
                rc = plan_err(&p, stmt->kids[i], "a statement set holds at most 256 INSERTs");
                break;
            }
            rc = plan_insert(&p, stmt->kids[i], sinks, &nsinks);
        }
    } else if (stmt->kind == SQL_QUERY_STMT) {
        rel r;
        rc = plan_query(&p, sql_kid(stmt, 0), &r);
        if (rc == SL_OK) rc = plan_collect(&p, &r);
        if (rc == SL_OK && cols) sl_schema_copy(cols, &r.sch);
        if (rc == SL_OK && updating) *updating = r.updating;
        if (rc == SL_OK) rel_free(&r);
    } else {
        rc = plan_err(&p, stmt, "EXPLAIN needs a query, an INSERT or a statement set");
    }
    json_t *job = NULL;
    if (rc == SL_OK && reuse) sqlp_reuse_common(p.vertices, p.edges);
    if (rc == SL_OK) {
        job = json_object();
        sql_sbuf name = {0};
        if (pname) sql_sb_str(&name, pname);
        else if (stmt->kind == SQL_QUERY_STMT)
            sql_sb_str(&name, "collect");
        else {
            sql_sb_str(&name, "insert-into");
            for (int i = 0; i < nsinks; i++) { /* the sink's catalog and database */
                const sql_table *st = sql_catalog_find(cat, sinks[i]);
                sql_sb_fmt(&name, "%s%s.%s.%s", i ? "," : "_",
                           st && st->catalog ? st->catalog : "default_catalog",
                           st && st->database ? st->database : "default_database",
                           st && st->obj ? st->obj : sinks[i]);
            }
        }
        json_object_set_new(job, "name", json_string(name.p ? name.p : "query"));
        free(name.p);
        if (par) json_object_set_new(job, "parallelism", json_integer(atoi(par)));
        json_object_set(job, "vertices", p.vertices);
        json_object_set(job, "edges", p.edges);
    }
    for (int i = 0; i < nsinks; i++) free(sinks[i]);
    plan_free(&p);
    return job;
}

void sl_sql_stream_clear(sl_sql_stream *o)
{
    if (!o) return;
    free(o->vertex);
    sl_schema_free(&o->cols);
    free(o->updater);
    free(o->rowtime);
    memset(o, 0, sizeof *o);
}

int sql_plan_into(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                  const sql_node *query, json_t *vertices, json_t *edges, sl_sql_stream *out,
                  char *err, size_t errlen)
{
    plan p;
    plan_new(&p, cat, err, errlen);
    json_decref(p.vertices);
    json_decref(p.edges);
    p.vertices = json_incref(vertices);
    p.edges = json_incref(edges);
    for (int i = 0; i < nopts; i++) {
        if (!strcmp(okeys[i], "table.exec.state.ttl")) p.ttl = ovals[i];
        if (!strcmp(okeys[i], "pipeline.auto-watermark-interval")) p.wm_interval = ovals[i];
    }
    rel r;
    int rc = plan_query(&p, query, &r);
    if (rc == SL_OK) {
        out->vertex = sl_strdup(r.vid);
        sl_schema_copy(&out->cols, &r.sch);
        out->updating = r.updating;
        out->updater = dup0(r.updater);
        out->rowtime = dup0(r.rowtime);
        rel_free(&r);
    }
    plan_free(&p);
    return rc;
}

int sql_plan_schema_attrs(const sql_catalog *cat, const sql_node *query, sl_schema *schema,
                          char **rowtime, char **proctime, char *err, size_t errlen)
{
    plan p;
    plan_new(&p, cat, err, errlen);
    p.schema_only = 1;
    rel r;
    int rc = plan_query(&p, query, &r);
    if (rc == SL_OK) {
        sl_schema_init(schema);
        sl_schema_copy(schema, &r.sch);
        for (int rt = 1; rt >= 0; rt--) {
            char **o = rt ? rowtime : proctime;
            const char *at = rt ? r.rowtime : r.proctime, *alts = attr_alts(&r, rt);
            if (o) *o = !at ? NULL : alts ? sl_sprintf("%s\x1f%s", at, alts) : sl_strdup(at);
        }
        rel_free(&r);
    }
    plan_free(&p);
    return rc;
}

int sql_plan_schema(const sql_catalog *cat, const sql_node *query, sl_schema *schema, char *err,
                    size_t errlen)
{
    return sql_plan_schema_attrs(cat, query, schema, NULL, NULL, err, errlen);
}

/* ---- for the other planner files (sql/plan_int.h) ------------------------ */

int sqlp_ttl_set(const plan *p) { return p->ttl && strcmp(p->ttl, "0") != 0; }
