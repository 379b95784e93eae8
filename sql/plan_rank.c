/*
 * plan_rank.c -- plans Flink's Top-N and deduplication queries:
 *
 *     SELECT cols FROM (
 *         SELECT ..., ROW_NUMBER() OVER ([PARTITION BY k, ...] ORDER BY x [ASC|DESC], ...) AS rn
 *         FROM t [WHERE ...]) [alias]
 *     WHERE rn <= N [AND other conditions]
 *
 * (the inner query may also be a CTE or a view that the outer one reads).
 * The inner SELECT without its ROW_NUMBER item is planned as any query;
 * the ranking becomes one keyed vertex hashed on the partition columns, and
 * the outer SELECT list and the other conditions a calc after it (Flink
 * applies them after ranking too). The rank range may be written rn <= N,
 * rn < N, rn = N, rn >= M, rn > M (and mirrored), rn BETWEEN M AND N, or
 * several of these ANDed; a range starting after 1 is the rank operator's
 * "rank-start".
 *
 * Which operator (operators/rank.c), as Flink's planner chooses:
 *   rn = 1 (or <= 1) ordered by a single time attribute, the row number not
 *     selected: `deduplicate`, keep first (ASC) or last (DESC) row, on
 *     processing time or event time; append-only for keep-first on
 *     processing time, updating for keep-last. Keep-first on event time is
 *     `rowtime_deduplicate` (Flink 2.x's): rows wait for the watermark, late
 *     ones are dropped, the output is insert-only. The input must be
 *     insert-only.
 *   anything else: `rank` (Top-N), updating; an updating input makes it keep
 *     every row so a retraction can promote the next ("input-changelog":
 *     "retract"); "row-number" when the outer query selects rn.
 *   PARTITION BY window_start, window_end[, keys] over the result of an
 *     event-time window aggregation: Flink's window Top-N, a
 *     `rank` with "window-end" that emits each window's final rows as +I
 *     when the watermark passes its end -- append-only, its state bounded
 *     by the window.
 * Without PARTITION BY the ranking is global: one subtask (parallelism 1).
 * The partition and ORDER BY expressions must be columns of the inner
 * query's output. table.exec.state.ttl reaches both operators; without it
 * the operators declare their state unbounded (sl_plan_unbounded).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sl.h"
#include "parse.h"
#include "plan_int.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

/* A ranking call over a window without a frame: ROW_NUMBER(), RANK(),
 * DENSE_RANK() OVER (...). */
static int is_rank_call(const sql_node *e)
{
    return e && e->kind == SQL_OVER && !sql_kid(e, 2) && e->s &&
           (!strcmp(e->s, "ROW_NUMBER") || !strcmp(e->s, "RANK") || !strcmp(e->s, "DENSE_RANK"));
}

/* The ROW_NUMBER() item of a SELECT, or -1 (-2 when there are several); -1
 * too when another item is an OVER aggregation (sql/plan_over.c). */
static int over_item(const sql_node *sel)
{
    const sql_node *items = sql_kid(sel, 0);
    int at = -1;
    for (int i = 0; items && i < items->nkids; i++) {
        const sql_node *e = sql_kid(items->kids[i], 0);
        if (is_rank_call(e)) at = at == -1 ? i : -2;
        else if (e && e->kind == SQL_OVER) return -1;
    }
    return at;
}

/* The query the FROM item f reads when it is a subquery, a CTE or a view
 * (NULL otherwise), and the CTE scope it is planned in (*view: a view,
 * planned with no CTEs in scope). */
static const sql_node *from_query(const plan *p, const sql_node *f, const cte_scope **scope,
                                  int *view)
{
    *scope = p->scope;
    *view = 0;
    if (f && f->kind == SQL_FROM_QUERY) return sql_kid(f, 0);
    if (!f || f->kind != SQL_FROM_TABLE) return NULL;
    for (const cte_scope *c = p->scope; c; c = c->outer)
        if (!strcasecmp(c->cte->s, f->s)) {
            *scope = c->outer; /* a CTE sees only the ones before it */
            return sql_kid(c->cte, 0);
        }
    const sql_table *t = sql_catalog_find(p->cat, f->s);
    if (!t || !t->is_view) return NULL;
    *scope = NULL;
    *view = 1;
    return t->query;
}

static int mentions(const sql_node *e, const char *col);

/* A Top-N: the outer query bounds the row number (WHERE names it); a row
 * number nothing bounds is an OVER aggregation's ROW_NUMBER(). */
int sql_is_rank_query(const plan *p, const sql_node *sel)
{
    const cte_scope *scope;
    int view;
    const sql_node *q = from_query(p, sql_kid(sel, 1), &scope, &view);
    if (!q || q->kind != SQL_SELECT) return 0;
    int oi = over_item(q);
    if (oi == -1) return 0;
    const sql_node *where = sql_kid(sel, 2);
    if (oi == -2 || !where) return where != NULL;
    const sql_node *it = sql_kid(q, 0)->kids[oi];
    return it->s ? mentions(where, it->s) : 1;
}

/* The inner SELECT without its ROW_NUMBER item oi, in p's arena. */
static sql_node *without_over(plan *p, const sql_node *sel, int oi)
{
    const sql_node *items = sql_kid(sel, 0);
    sql_node *syn = sql_node_new(p->arena, SQL_SELECT, sel->line, sel->col);
    syn->flags = sel->flags;
    sql_node *list = sql_node_new(p->arena, SQL_LIST, items->line, items->col);
    for (int i = 0; i < items->nkids; i++)
        if (i != oi) sql_node_add(p->arena, list, items->kids[i]);
    sql_node_add(p->arena, syn, list);
    for (int k = 1; k <= 4; k++) sql_node_add(p->arena, syn, sql_kid(sel, k));
    return syn;
}

int sql_rank_view_columns(plan *p, const sql_node *sel, rel *out)
{
    int oi = over_item(sel);
    if (oi == -1) return SL_DONE;
    const sql_node *it = sql_kid(sel, 0)->kids[oi < 0 ? 0 : oi];
    if (oi == -2 || !it->s || strcmp(sql_kid(it, 0)->s, "ROW_NUMBER"))
        return PERR(sel, "a view with ROW_NUMBER() OVER (...) needs one ROW_NUMBER() item with a "
                    "name (AS rn), for a Top-N query over it");
    if (sqlp_plan_query(p, without_over(p, sel, oi), out) != SL_OK) return SL_ERR;
    sl_schema_add(&out->sch, it->s, SL_T_BIGINT);
    return SL_OK;
}

/* Conjuncts of an AND tree into c[] (at most cap). */
static int conjuncts(const sql_node *e, const sql_node **c, int n, int cap)
{
    if (!e) return n;
    if (e->kind == SQL_BINOP && !strcmp(e->s, "AND")) {
        n = conjuncts(e->kids[0], c, n, cap);
        return conjuncts(e->kids[1], c, n, cap);
    }
    if (n < cap) c[n] = e;
    return n + 1;
}

static int mentions(const sql_node *e, const char *col)
{
    if (!e) return 0;
    if (e->kind == SQL_COL && !strcasecmp(e->s, col)) return 1;
    for (int i = 0; i < e->nkids; i++)
        if (mentions(e->kids[i], col)) return 1;
    return 0;
}

/* The integer literal of a rank bound, 0..10000 (SL_ERR otherwise). */
static int bound_num(plan *p, const sql_node *b, int64_t *n)
{
    char *end;
    long long v = b->kind == SQL_NUM ? strtoll(b->s, &end, 10) : -1;
    if (b->kind != SQL_NUM || *end || v < 0 || v > 10000)
        return PERR(b, "the rank bound must be an integer between 1 and 10000, not %s",
                    b->kind == SQL_NUM ? b->s : "an expression");
    *n = v;
    return SL_OK;
}

/* A condition on the row number narrowing the range [*lo, *hi] (*hi 0: no
 * upper bound yet): rn <= N, rn < N, rn = N, rn >= M, rn > M, their mirror
 * forms (N >= rn), and rn BETWEEN M AND N. SL_ERR for anything else. */
static int rank_bound(plan *p, const sql_node *e, const char *rn, int64_t *lo, int64_t *hi)
{
    const char *how = "the row number may only be bounded by constants: rn <= N, rn < N, "
                      "rn = N, rn >= M, rn > M or rn BETWEEN M AND N";
    int64_t a1, a2;
    if (e->kind == SQL_BETWEEN && !(e->flags & SQL_F_NOT) && e->kids[0]->kind == SQL_COL &&
        !strcasecmp(e->kids[0]->s, rn)) {
        if (bound_num(p, e->kids[1], &a1) != SL_OK || bound_num(p, e->kids[2], &a2) != SL_OK)
            return SL_ERR;
        if (a1 > *lo) *lo = a1;
        if (a2 < 1) a2 = -1;
        if (!*hi || a2 < *hi) *hi = a2;
        return SL_OK;
    }
    if (e->kind != SQL_BINOP || e->nkids != 2) return PERR(e, "%s", how);
    const sql_node *a = e->kids[0], *b = e->kids[1];
    const char *op = e->s;
    if (b->kind == SQL_COL && !strcasecmp(b->s, rn)) { /* N >= rn is rn <= N */
        const sql_node *t = a;
        a = b;
        b = t;
        op = !strcmp(op, ">=") ? "<=" : !strcmp(op, ">") ? "<" : !strcmp(op, "<=") ? ">="
             : !strcmp(op, "<") ? ">" : op;
    }
    if (a->kind != SQL_COL || strcasecmp(a->s, rn) || b->kind != SQL_NUM) return PERR(e, "%s", how);
    int64_t n;
    if (bound_num(p, b, &n) != SL_OK) return SL_ERR;
    int64_t l = 1, h = -2; /* -2: no upper bound */
    if (!strcmp(op, "<=")) h = n;
    else if (!strcmp(op, "<")) h = n - 1;
    else if (!strcmp(op, "=")) l = h = n;
    else if (!strcmp(op, ">=")) l = n;
    else if (!strcmp(op, ">")) l = n + 1;
    else return PERR(e, "%s", how);
    if (l > *lo) *lo = l;
    if (h != -2) {
        if (h < 1) h = -1; /* no rank at all: refused by the caller */
        if (!*hi || h < *hi) *hi = h;
    }
    return SL_OK;
}

/* Whether the outer SELECT list gives the row number `rn`. */
static int selects_rn(const sql_node *items, const char *rn)
{
    for (int i = 0; i < items->nkids; i++) {
        const sql_node *e = sql_kid(items->kids[i], 0);
        if (e->kind == SQL_STAR || mentions(e, rn)) return 1;
    }
    return 0;
}

/* The outer query's WHERE split into the bound on the row number rn
 * (*start..*limit, rank_bound) and the rest of its conditions (*rest, ANDed
 * back together; NULL when none). */
static int rank_bounds(plan *p, const sql_node *sel, const char *rn, int64_t *start,
                       int64_t *limit, sql_node **rest)
{
    const sql_node *where = sql_kid(sel, 2);
    const sql_node *conj[64];
    int nc = conjuncts(where, conj, 0, 64);
    if (nc > 64) return PERR(where, "too many conditions (more than 64 ANDed)");
    for (int i = 0; i < nc; i++) {
        if (!mentions(conj[i], rn)) {
            *rest = *rest ? sqlp_binop(p, *rest, "AND", *rest, (sql_node *)conj[i])
                          : (sql_node *)conj[i];
            continue;
        }
        if (rank_bound(p, conj[i], rn, start, limit) != SL_OK) return SL_ERR;
    }
    if (!*limit)
        return PERR(sel, "ROW_NUMBER() needs an upper bound in the outer query: WHERE %s <= N "
                    "(Top-N), %s BETWEEN M AND N or %s = 1 (deduplication)", rn, rn, rn);
    if (*limit < 1 || *start > *limit)
        return PERR(where, "the conditions on %s select no rank (from %lld to %lld)", rn,
                    (long long)*start, (long long)*limit);
    return SL_OK;
}

/* The rank (Top-N, window Top-N) or deduplicate vertex over *in, ordered
 * and partitioned as `over` says, keeping ranks start..limit; *in becomes
 * its output (with the row number when the outer query selects rn). */
static int rank_vertex(plan *p, const sql_node *over, const sql_node *items, const char *rn,
                       int64_t start, int64_t limit, rel *in)
{
    int rc = SL_OK;
    const sql_node *part = sql_kid(over, 0), *order = sql_kid(over, 1);
    json_t *keys = json_array(), *ord = json_array(), *cfg = json_object();
    sql_sbuf id = {0}, keytext = {0};
    char *vid = NULL;
    for (int i = 0; rc == SL_OK && part && i < part->nkids; i++) {
        const sql_node *e = part->kids[i];
        int c = e->kind == SQL_COL ? sl_schema_find(&in->sch, e->s) : -1;
        if (c < 0) {
            rc = PERR(e, "PARTITION BY: a column of the query's output is expected (compute "
                      "expressions in the inner SELECT list and name them)");
            break;
        }
        json_array_append_new(keys, json_string(in->sch.fields[c].name));
        sql_sb_fmt(&keytext, "%s%s", i ? ", " : "", in->sch.fields[c].name);
    }
    const char *tcol = NULL;
    int desc0 = 0;
    for (int i = 0; rc == SL_OK && i < order->nkids; i++) {
        const sql_node *o = order->kids[i], *e = sql_kid(o, 0);
        int c = e->kind == SQL_COL ? sl_schema_find(&in->sch, e->s) : -1;
        if (c < 0) {
            rc = PERR(e, "ORDER BY: a column of the query's output is expected (compute "
                      "expressions in the inner SELECT list and name them)");
            break;
        }
        const char *name = in->sch.fields[c].name;
        char *entry = sl_sprintf("%s%s", name, o->flags & SQL_F_DESC ? " DESC" : "");
        json_array_append_new(ord, json_string(entry));
        free(entry);
        if (i == 0) {
            tcol = name;
            desc0 = (o->flags & SQL_F_DESC) != 0;
        }
    }
    /* Flink's window Top-N: over a windowed table, partitioned by its window */
    int ws = sl_schema_find(&in->sch, "window_start"), we = sl_schema_find(&in->sch, "window_end");
    int has_ws = 0, has_we = 0;
    for (int i = 0; part && i < part->nkids; i++) {
        const sql_node *e = part->kids[i];
        if (e->kind != SQL_COL) continue;
        if (!strcasecmp(e->s, "window_start")) has_ws = 1;
        if (!strcasecmp(e->s, "window_end")) has_we = 1;
    }
    int windowed = rc == SL_OK && has_ws && has_we && in->windowed && !in->updating &&
                   in->sch.fields[ws].type == SL_T_TIMESTAMP &&
                   in->sch.fields[we].type == SL_T_TIMESTAMP;
    if (windowed && in->windowed >= 3) { /* SESSION (3) or processing-time (4) TVF rows */
        rc = PERR(part->kids[0], in->windowed == 4
                  ? "Processing time Window TopN is not supported yet." /* Flink's words */
                  : "a window Top-N over SESSION window TVF rows is not supported yet");
        windowed = 0;
    }
    int rn_out = selects_rn(items, rn);
    int is_rowtime = tcol && in->rowtime && !strcasecmp(tcol, in->rowtime);
    int is_proctime = tcol && in->proctime && !strcasecmp(tcol, in->proctime);
    int dedup = rc == SL_OK && !windowed && limit == 1 && start == 1 && !rn_out && order->nkids == 1 &&
                (is_rowtime || is_proctime);
    int updating = 1, first_rowtime = 0;
    if (rc == SL_OK && dedup) {
        if (in->updating) {
            rc = PERR(over, "deduplication over an updating input (produced by %s) is not "
                      "supported", in->updater);
        } else {
            json_object_set(cfg, "key", keys);
            if (is_rowtime) json_object_set_new(cfg, "time-column", json_string(tcol));
            else json_object_set_new(cfg, "time", json_string("processing"));
            /* keep first on event time: Flink 2.x's insert-only form, rows
             * held until the watermark (rowtime_deduplicate) */
            if (!(is_rowtime && !desc0))
                json_object_set_new(cfg, "keep", json_string(desc0 ? "last" : "first"));
            first_rowtime = is_rowtime && !desc0;
            updating = desc0;
        }
    } else if (rc == SL_OK) {
        json_object_set(cfg, "partition-by", keys);
        json_object_set(cfg, "order-by", ord);
        json_object_set_new(cfg, "limit", json_integer(limit));
        if (start > 1) json_object_set_new(cfg, "rank-start", json_integer(start));
        if (rn_out) json_object_set_new(cfg, "row-number", json_string(rn));
        if (in->updating) json_object_set_new(cfg, "input-changelog", json_string("retract"));
        if (windowed) {
            json_object_set_new(cfg, "window-end", json_string(in->sch.fields[we].name));
            if (in->windowed == 2) /* window_end is a local time of the session zone */
                json_object_set_new(cfg, "time-attribute", json_string("ltz"));
            updating = 0; /* final rows when the window fires */
        }
    }
    if (rc == SL_OK) {
        if (sqlp_ttl_set(p) && !windowed) json_object_set_new(cfg, "table.exec.state.ttl", json_string(p->ttl));
        char *o = json_dumps(ord, JSON_COMPACT), *k = json_dumps(keys, JSON_COMPACT);
        sql_sb_fmt(&id, "%s|%s|%s|%s|%lld|%d",
                   first_rowtime ? "rowtime_deduplicate" : dedup ? "deduplicate"
                   : windowed ? "window_rank" : "rank",
                   in->ident ? in->ident : "", k, o, (long long)limit, rn_out);
        if (start > 1) sql_sb_fmt(&id, "|from %lld", (long long)start);
        free(o);
        free(k);
        char *uid = sl_sprintf("%s-%s-%08x", dedup ? "dedup" : "rank", in->ident ? in->ident : "q",
                               sqlp_fnv1a(id.p));
        int global = json_array_size(keys) == 0;
        vid = sqlp_add_vertex(p, dedup ? "dedup" : "rank",
                              first_rowtime ? "rowtime_deduplicate" : dedup ? "deduplicate" : "rank",
                              uid, cfg, NULL, global ? 1 : 0);
        cfg = NULL;
        free(uid);
        if (global) sqlp_add_edge(p, in->vid, vid, "rebalance", NULL, 0);
        else sqlp_add_edge(p, in->vid, vid, "hash", keys, 0);
        free(in->vid);
        in->vid = vid;
        if (rn_out && !dedup) sl_schema_add(&in->sch, rn, SL_T_BIGINT);
        if (updating) {
            in->updating = 1;
            free(in->updater);
            in->updater = sl_sprintf("%s '%s' (%s)", dedup ? "deduplicate" : "rank", vid,
                                    dedup ? "keep the last row"
                                          : "Top-N");
        }
    }
    json_decref(cfg);
    json_decref(keys);
    json_decref(ord);
    free(id.p);
    free(keytext.p);

    return rc;
}

/* The output name of the inner SELECT's item i. */
static const char *item_out_name(plan *p, const sql_node *it, int i)
{
    if (it->s) return it->s;
    const sql_node *e = sql_kid(it, 0);
    if (e->kind == SQL_COL) return e->s;
    char nm[32];
    snprintf(nm, sizeof nm, "EXPR$%d", i);
    return sql_arena_strndup(p->arena, nm, strlen(nm));
}

/* Is column e among the inner query's output names (or may be: a `*`)? */
static int in_output(plan *p, const sql_node *inner, int oi, const sql_node *e)
{
    const sql_node *items = sql_kid(inner, 0);
    for (int i = 0; i < items->nkids; i++) {
        const sql_node *x = sql_kid(items->kids[i], 0);
        if (i == oi) continue;
        if (x->kind == SQL_STAR || !strcasecmp(item_out_name(p, items->kids[i], i), e->s)) return 1;
    }
    return 0;
}

/* e as a column of the inner query's output: an expression that is also an
 * item of it (ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC) beside COUNT(*) AS
 * cnt, in one SELECT with GROUP BY) becomes that item's column; anything else
 * (a column not selected, as Flink allows) becomes a hidden item `__o<n>` of
 * syn, projected away after the ranking. */
static const sql_node *as_output(plan *p, const sql_node *inner, int oi, const sql_node *e,
                                 sql_node *syn, int *nhidden)
{
    if (!e || (e->kind == SQL_COL && in_output(p, inner, oi, e))) return e;
    const sql_node *items = sql_kid(inner, 0);
    char *want = sql_unparse(e);
    const sql_node *r = e;
    for (int i = 0; i < items->nkids && r == e; i++) {
        const sql_node *x = sql_kid(items->kids[i], 0);
        if (i == oi || !x || x->kind == SQL_STAR) continue;
        char *t = sql_unparse(x);
        if (!strcmp(t, want)) {
            sql_node *c = sql_node_new(p->arena, SQL_COL, e->line, e->col);
            const char *nm = item_out_name(p, items->kids[i], i);
            c->s = sql_arena_strndup(p->arena, nm, strlen(nm));
            c->flags = SQL_F_QUOTED;
            r = c;
        }
        free(t);
    }
    free(want);
    if (r == e) {
        char nm[16];
        snprintf(nm, sizeof nm, "__o%d", (*nhidden)++);
        sql_node *hi = sql_node_new(p->arena, SQL_ITEM, e->line, e->col);
        hi->s = sql_arena_strndup(p->arena, nm, strlen(nm));
        sql_node_add(p->arena, hi, (sql_node *)e);
        sql_node_add(p->arena, sql_kid(syn, 0), hi);
        sql_node *c = sql_node_new(p->arena, SQL_COL, e->line, e->col);
        c->s = hi->s;
        c->flags = SQL_F_QUOTED;
        r = c;
    }
    return r;
}

/* The OVER clause with its PARTITION BY and ORDER BY expressions as output
 * columns of the inner query where they are items of it. */
static const sql_node *over_on_output(plan *p, const sql_node *inner, int oi, const sql_node *over,
                                      sql_node *syn, int *nhidden)
{
    sql_node *o = sql_node_new(p->arena, SQL_OVER, over->line, over->col);
    *o = *over;
    o->kids = NULL;
    o->nkids = o->cap = 0;
    for (int k = 0; k < over->nkids; k++) {
        const sql_node *l = over->kids[k];
        if ((k != 0 && k != 1) || !l) {
            sql_node_add(p->arena, o, (sql_node *)l);
            continue;
        }
        sql_node *nl = sql_node_new(p->arena, SQL_LIST, l->line, l->col);
        for (int i = 0; i < l->nkids; i++) {
            const sql_node *x = l->kids[i];
            if (k == 1 && x->kind == SQL_ORDER) {
                sql_node *no = sql_node_new(p->arena, SQL_ORDER, x->line, x->col);
                no->flags = x->flags;
                sql_node_add(p->arena, no,
                             (sql_node *)as_output(p, inner, oi, sql_kid(x, 0), syn, nhidden));
                sql_node_add(p->arena, nl, no);
            } else {
                sql_node_add(p->arena, nl, (sql_node *)as_output(p, inner, oi, x, syn, nhidden));
            }
        }
        sql_node_add(p->arena, o, nl);
    }
    return o;
}

/* A calc without the hidden __o<n> columns as_output added. */
static int drop_hidden(plan *p, rel *in)
{
    item *its = sl_calloc((size_t)in->sch.n, sizeof *its);
    int n = 0, rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < in->sch.n; i++) {
        const char *nm = in->sch.fields[i].name;
        if (!strncmp(nm, "__o", 3)) continue;
        sql_node *c = sql_node_new(p->arena, SQL_COL, 1, 1);
        c->s = sql_arena_strndup(p->arena, nm, strlen(nm));
        c->flags = SQL_F_QUOTED;
        rc = sqlp_make_item(p, &its[n], c, nm, &in->sch);
        if (rc == SL_OK) n++;
    }
    if (rc == SL_OK) rc = sqlp_emit_calc(p, in, its, n, NULL, "rank-select");
    sqlp_items_free(its, n);
    return rc;
}

int sql_plan_rank(plan *p, const sql_node *sel, rel *out)
{
    const sql_node *items = sql_kid(sel, 0), *from = sql_kid(sel, 1);
    const cte_scope *scope;
    int view;
    const sql_node *inner = from_query(p, from, &scope, &view), *iitems = sql_kid(inner, 0);
    if (sql_kid(sel, 3) || sql_kid(sel, 4))
        return PERR(sel, "a Top-N query cannot GROUP BY in the same SELECT; aggregate in an "
                    "outer query");
    int oi = over_item(inner);
    if (oi == -2)
        return PERR(inner, "one ROW_NUMBER() OVER (...) per query is supported");
    const sql_node *it = iitems->kids[oi], *over = sql_kid(it, 0);
    if (!strcmp(over->s, "RANK") || !strcmp(over->s, "DENSE_RANK")) /* Flink's words */
        return PERR(over, "%s() on streaming table is not supported currently; Top-N and "
                    "deduplication use ROW_NUMBER()", over->s);
    if (strcmp(over->s, "ROW_NUMBER"))
        return PERR(over, "%s() OVER (...) is not supported; Top-N and deduplication use "
                    "ROW_NUMBER()", over->s);
    if (!it->s)
        return PERR(over, "name the row number (ROW_NUMBER() OVER (...) AS rn) so the outer query "
                    "can bound it");
    const char *rn = it->s;

    /* the rank bound and the other conditions */
    int64_t limit = 0, start = 1;
    sql_node *rest = NULL;
    if (rank_bounds(p, sel, rn, &start, &limit, &rest) != SL_OK) return SL_ERR;

    /* the inner query without its ROW_NUMBER item */
    if (iitems->nkids == 1)
        return PERR(inner, "the ROW_NUMBER() query selects no columns besides the row number");
    sql_node *syn = without_over(p, inner, oi);
    int nhidden = 0;
    const sql_node *ov = over_on_output(p, inner, oi, over, syn, &nhidden);
    rel in;
    const cte_scope *saved = p->scope;
    p->scope = scope;
    if (view && p->depth > 32) {
        p->scope = saved;
        return PERR(from, "views nested too deeply at '%s'", from->s);
    }
    p->depth += view;
    int prc = sqlp_plan_query(p, syn, &in);
    p->depth -= view;
    p->scope = saved;
    if (prc != SL_OK) return SL_ERR;
    if (sl_schema_find(&in.sch, rn) >= 0) {
        sqlp_rel_free(&in);
        return PERR(it, "the row number '%s' has the name of another column", rn);
    }

    int rc = rank_vertex(p, ov, items, rn, start, limit, &in);
    if (rc == SL_OK && nhidden) rc = drop_hidden(p, &in);

    /* the outer SELECT list and the other conditions */
    if (rc == SL_OK) {
        free(in.alias);
        in.alias = from->s2                        ? sl_strdup(from->s2)
                   : from->kind == SQL_FROM_TABLE ? sl_strdup(from->s)
                                                  : NULL;
        item *its;
        int n;
        if (sqlp_select_items(p, items, &in, &its, &n) != SL_OK) {
            rc = SL_ERR;
        } else {
            int same = sqlp_identity(its, n, &in.sch);
            if (!same || rest) {
                if (rest && sqlp_check_cols(p, rest, &in) != SL_OK) rc = SL_ERR;
                else rc = sqlp_emit_calc(p, &in, same ? NULL : its, n, rest, "calc");
                if (rc == SL_OK) sqlp_carry_time_attrs(&in, its, n);
            }
            sqlp_items_free(its, n);
        }
    }
    if (rc != SL_OK) {
        sqlp_rel_free(&in);
        return SL_ERR;
    }
    *out = in;
    return SL_OK;
}
