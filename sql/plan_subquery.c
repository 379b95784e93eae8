/*
 * plan_subquery.c -- subqueries in WHERE and in the SELECT list, and
 * FROM a, b, c WHERE <join conditions>, as rewrites of the SELECT into joins
 * that the rest of the planner (sql/plan_join.c) plans as usual.
 *
 *   FROM a, b WHERE a.k = b.k AND ...   the conditions that name only the
 *       tables of a comma (or CROSS JOIN) step and name its right table
 *       become that step's ON: an inner join.
 *   x IN (SELECT y FROM s WHERE ...)   a semi join: an inner join with
 *       (SELECT DISTINCT y AS __k0 FROM s WHERE ... AND y IS NOT NULL) ON
 *       x = __k0; each outer row meets at most one row of it, so it passes
 *       once while a match exists and is retracted when the last one goes.
 *   EXISTS (SELECT ... FROM s WHERE s.c = outer.c AND ...)   the same
 *       keyed by the correlation columns (equalities between an expression
 *       of the subquery and one of the outer query).
 *   NOT EXISTS   an anti join: a LEFT join with that DISTINCT side and
 *       `__k0 IS NULL` after it.
 *   x NOT IN (SELECT y ...)   the anti join with SQL's NULL rules: true when
 *       the subquery is empty, else only when x is not NULL, no y equals x
 *       and no y is NULL. A second LEFT join with the subquery's
 *       COUNT(*) and COUNT(y) (per correlation key) tells "empty" and "has a
 *       NULL" apart.
 *   (SELECT AVG(x) FROM t)   a scalar subquery: a global aggregate (one row)
 *       LEFT-joined to every row on a constant key (the join's flag
 *       SQL_F_ALL: plan_join.c adds the key), the subquery replaced by its
 *       column; NULL while the aggregate has no row, as in SQL.
 *   Correlated other than by equalities inner = outer column (or naming the
 *       outer query in the SELECT list): IN / EXISTS / NOT EXISTS / NOT IN
 *       ANDed in WHERE are semi / anti joins checking those conditions (and
 *       NOT IN's `x = y OR x IS NULL OR y IS NULL`) per pair; scalar,
 *       LATERAL and IN / EXISTS inside expressions go over a value
 *       generator (see "value generators" below).
 *   ... GROUP BY ... HAVING <subquery> (or a subquery in an aggregation's
 *       SELECT list): the grouped query moves into FROM and the HAVING
 *       becomes its WHERE (group_wrap).
 *   GROUP BY <expression with a subquery>: the subquery joined before the
 *       grouping, as in the SELECT list; the SELECT list's same expression
 *       reads the key (group_keys).
 *   a JOIN b ON ... AND <subquery>: an inner join's conditions with
 *       subqueries move to WHERE (lift_on).
 * The joins and aggregates are the existing operators, so the results are
 * changelogs wherever a side can change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "operator.h"
#include "sl.h"
#include "parse.h"
#include "plan_int.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

/* ---- building nodes ------------------------------------------------------------ */

static sql_node *mk(plan *p, sql_kind k, const sql_node *at)
{
    return sql_node_new(p->arena, k, at ? at->line : 1, at ? at->col : 1);
}

static char *astr(plan *p, const char *s) { return sql_arena_strndup(p->arena, s, strlen(s)); }

static sql_node *col(plan *p, const sql_node *at, const char *qual, const char *name)
{
    sql_node *c = mk(p, SQL_COL, at);
    c->s = astr(p, name);
    c->s2 = qual ? astr(p, qual) : NULL;
    c->flags = SQL_F_QUOTED;
    return c;
}

static sql_node *is_null(plan *p, const sql_node *at, sql_node *e, int neg)
{
    sql_node *n = mk(p, SQL_IS, at);
    n->s = "NULL";
    n->flags = neg ? SQL_F_NOT : 0;
    sql_node_add(p->arena, n, e);
    return n;
}

/* x IN (...)'s three-valued answer over a LEFT join's columns: TRUE when
 * `matched` is not NULL (a row matched), FALSE when `empty` (the subquery
 * has no row), NULL when x is NULL or the subquery has a NULL (its row
 * count `c` above its non-NULL count `cv`), else FALSE; NOT of it for NOT IN. */
static sql_node *in_answer(plan *p, const sql_node *sub, sql_node *matched, sql_node *empty,
                           const sql_node *x, sql_node *c, sql_node *cv)
{
    sql_node *cs = mk(p, SQL_CASE, sub), *whens = mk(p, SQL_LIST, sub);
    sql_node *t = mk(p, SQL_BOOL, sub), *f = mk(p, SQL_BOOL, sub);
    t->flags = SQL_F_TRUE;
    sql_node *unk = mk(p, SQL_CAST, sub);
    unk->s = "BOOLEAN";
    sql_node_add(p->arena, unk, mk(p, SQL_NULL, sub));
    sql_node *w[3][2] = {
        {is_null(p, sub, matched, 1), t},
        {empty, f},
        {sqlp_binop(p, sub, "OR", is_null(p, sub, (sql_node *)x, 0), sqlp_binop(p, sub, ">", c, cv)), unk}};
    for (int i = 0; i < 3; i++) {
        sql_node *wn = mk(p, SQL_WHEN, sub);
        sql_node_add(p->arena, wn, w[i][0]);
        sql_node_add(p->arena, wn, w[i][1]);
        sql_node_add(p->arena, whens, wn);
    }
    sql_node_add(p->arena, cs, NULL);
    sql_node_add(p->arena, cs, whens);
    sql_node_add(p->arena, cs, mk(p, SQL_BOOL, sub));
    if (!(sub->flags & SQL_F_NOT)) return cs;
    sql_node *n = mk(p, SQL_UNOP, sub);
    n->s = "NOT";
    sql_node_add(p->arena, n, cs);
    return n;
}

static sql_node *and_all(plan *p, const sql_node *at, sql_node **c, int n)
{
    sql_node *r = NULL;
    for (int i = 0; i < n; i++) r = r ? sqlp_binop(p, at, "AND", r, c[i]) : c[i];
    if (!r) {
        r = mk(p, SQL_BOOL, at);
        r->flags = SQL_F_TRUE;
    }
    return r;
}

static sql_node *mkitem(plan *p, sql_node *e, const char *alias)
{
    sql_node *it = mk(p, SQL_ITEM, e);
    it->s = alias ? astr(p, alias) : NULL;
    sql_node_add(p->arena, it, e);
    return it;
}

static sql_node *func(plan *p, const sql_node *at, const char *name, sql_node *arg)
{
    sql_node *f = mk(p, SQL_FUNC, at);
    f->s = astr(p, name);
    if (arg) sql_node_add(p->arena, f, arg);
    else f->flags = SQL_F_STAR_ARG;
    return f;
}

/* SELECT [DISTINCT] items FROM from [WHERE where] [GROUP BY group] */
static sql_node *select_of(plan *p, const sql_node *at, int distinct, sql_node *items,
                           const sql_node *from, sql_node *where, sql_node *group)
{
    sql_node *s = mk(p, SQL_SELECT, at);
    s->flags = distinct ? SQL_F_DISTINCT : 0;
    sql_node_add(p->arena, s, items);
    sql_node_add(p->arena, s, (sql_node *)from);
    sql_node_add(p->arena, s, where);
    sql_node_add(p->arena, s, group);
    sql_node_add(p->arena, s, NULL);
    return s;
}

/* (q) AS alias [(cols)] */
static sql_node *from_query(plan *p, const sql_node *at, sql_node *q, const char *alias,
                            const char *colname)
{
    sql_node *f = mk(p, SQL_FROM_QUERY, at);
    f->s2 = astr(p, alias);
    sql_node_add(p->arena, f, q);
    if (colname) {
        sql_node *l = mk(p, SQL_LIST, at), *id = mk(p, SQL_IDENT, at);
        id->s = astr(p, colname);
        sql_node_add(p->arena, l, id);
        sql_node_add(p->arena, f, l);
    }
    return f;
}

/* left <kind> JOIN right ON cond; `constant`: joined on a constant key (plan_join.c) */
static sql_node *join(plan *p, const sql_node *at, const char *kind, const sql_node *left,
                      sql_node *right, sql_node *cond, int constant)
{
    sql_node *j = mk(p, SQL_FROM_JOIN, at);
    j->s = astr(p, kind);
    j->flags = constant ? SQL_F_ALL : 0;
    sql_node_add(p->arena, j, (sql_node *)left);
    sql_node_add(p->arena, j, right);
    sql_node_add(p->arena, j, cond);
    return j;
}

/* ---- looking at trees ------------------------------------------------------------ */

static int has_sub(const sql_node *e)
{
    if (!e) return 0;
    if (e->kind == SQL_SUBQUERY) return 1;
    if (e->kind == SQL_SELECT || e->kind == SQL_UNION || e->kind == SQL_WITH) return 0;
    for (int i = 0; i < e->nkids; i++)
        if (has_sub(e->kids[i])) return 1;
    return 0;
}

/* The first subquery in e (not looking into nested queries), or NULL. */
static const sql_node *first_sub(const sql_node *e)
{
    if (!e) return NULL;
    if (e->kind == SQL_SUBQUERY) return e;
    for (int i = 0; i < e->nkids; i++) {
        const sql_node *s = first_sub(e->kids[i]);
        if (s) return s;
    }
    return NULL;
}

static int is_agg(const char *s)
{
    static const char *const names[] = {"COUNT", "SUM", "MIN", "MAX", "AVG", "STDDEV_POP",
                                        "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "COLLECT",
                                        "LISTAGG", "FIRST_VALUE", "LAST_VALUE"};
    for (size_t i = 0; i < SL_ARRAY_LEN(names); i++)
        if (!strcasecmp(s, names[i])) return 1;
    return 0;
}

static int has_agg_call(const sql_node *e)
{
    if (!e) return 0;
    if (e->kind == SQL_SUBQUERY) return 0;
    if (e->kind == SQL_FUNC && is_agg(e->s)) return 1;
    for (int i = 0; i < e->nkids; i++)
        if (has_agg_call(e->kids[i])) return 1;
    return 0;
}

static void conjuncts(const sql_node *e, const sql_node ***c, int *n)
{
    if (!e) return;
    if (e->kind == SQL_BINOP && !strcasecmp(e->s, "AND")) {
        conjuncts(e->kids[0], c, n);
        conjuncts(e->kids[1], c, n);
        return;
    }
    *c = sl_realloc(*c, sizeof **c * (size_t)(*n + 1));
    (*c)[(*n)++] = e;
}

/* ---- the tables of a FROM and the names they give -------------------------------- */

typedef struct leaf {
    const char *alias;  /* NULL: none */
    const sql_table *t; /* its columns when known (a table or view of the catalog) */
    const sql_node *cols; /* (query) AS t(a, b): the LIST of names */
    const sql_node *lateral; /* LATERAL (query): the FROM_QUERY */
    int known;          /* its column names are known */
} leaf;

typedef struct leaves {
    leaf *l;
    int n;
} leaves;

static int is_cte(const plan *p, const char *name)
{
    for (const cte_scope *s = p->scope; s; s = s->outer)
        if (!strcasecmp(s->cte->s, name)) return 1;
    return 0;
}

static void leaves_of(const plan *p, const sql_node *f, leaves *out)
{
    if (!f) return;
    if (f->kind == SQL_FROM_JOIN) {
        leaves_of(p, sql_kid(f, 0), out);
        leaves_of(p, sql_kid(f, 1), out);
        return;
    }
    leaf lf = {0};
    if (f->kind == SQL_FROM_TABLE) {
        lf.alias = f->s2 ? f->s2 : f->s;
        if (!is_cte(p, f->s)) {
            lf.t = sql_catalog_find(p->cat, f->s);
            lf.known = lf.t && lf.t->ncols > 0;
        }
    } else if (f->kind == SQL_FROM_QUERY) {
        lf.alias = f->s2;
        lf.cols = sql_kid(f, 1);
        if (f->flags & SQL_F_LATERAL) lf.lateral = f;
        lf.known = lf.cols != NULL;
    } else if (f->kind == SQL_FROM_TVF) {
        lf.alias = f->s2 ? f->s2 : sql_kid(f, 0)->s;
    } else {
        lf.alias = f->s2;
    }
    out->l = sl_realloc(out->l, sizeof *out->l * (size_t)(out->n + 1));
    out->l[out->n++] = lf;
}

static int leaf_has(const leaf *lf, const char *name)
{
    if (lf->t) {
        for (int i = 0; i < lf->t->ncols; i++)
            if (!strcasecmp(lf->t->cols[i].name, name)) return 1;
        return 0;
    }
    for (int i = 0; lf->cols && i < lf->cols->nkids; i++)
        if (!strcasecmp(lf->cols->kids[i]->s, name)) return 1;
    return 0;
}

/* The leaf a column reference names: its index, -1 when none of ls does,
 * -2 when it cannot be told (an unqualified name and a leaf of unknown
 * columns). */
static int leaf_of(const leaves *ls, const sql_node *c)
{
    if (c->s2) {
        for (int i = 0; i < ls->n; i++)
            if (ls->l[i].alias && !strcasecmp(ls->l[i].alias, c->s2)) return i;
        return -1;
    }
    int found = -1;
    for (int i = 0; i < ls->n; i++) {
        if (!ls->l[i].known) return -2;
        if (leaf_has(&ls->l[i], c->s) && found < 0) found = i;
    }
    return found;
}

/* ---- FROM a, b WHERE ... ---------------------------------------------------------- */

/* Every column of e names a leaf of ls in [lo, hi): 1 and *right (a column
 * names a leaf at or past mid); 0 when one does not or cannot be told. */
static int refs_within(const leaves *ls, const sql_node *e, int lo, int mid, int hi, int *right,
                       int *cols)
{
    if (!e) return 1;
    if (e->kind == SQL_SUBQUERY) return 0;
    if (e->kind == SQL_COL) {
        int i = leaf_of(ls, e);
        if (i < lo || i >= hi) return 0;
        if (i >= mid) *right = 1;
        (*cols)++;
        return 1;
    }
    for (int i = 0; i < e->nkids; i++)
        if (!refs_within(ls, e->kids[i], lo, mid, hi, right, cols)) return 0;
    return 1;
}

typedef struct conj {
    const sql_node **c;
    int n;
    char *used;
} conj;

/* f with every comma step that WHERE conditions join turned into an inner
 * join ON them; *first: the index of f's first leaf in ls. */
static const sql_node *comma_joins(plan *p, const sql_node *f, const leaves *ls, conj *w, int *next)
{
    if (f->kind != SQL_FROM_JOIN) {
        (*next)++;
        return f;
    }
    int lo = *next;
    const sql_node *l = comma_joins(p, sql_kid(f, 0), ls, w, next);
    int mid = *next;
    const sql_node *r = sql_kid(f, 1);
    (*next)++;
    if (r->kind == SQL_FROM_JOIN) { /* not from the grammar; as is */
        *next = mid;
        r = comma_joins(p, r, ls, w, next);
    }
    int hi = *next;
    int comma = !sql_kid(f, 2) && r->kind != SQL_FROM_LATERAL &&
                (!f->s || !strcasecmp(f->s, "CROSS"));
    if (!comma) {
        if (l == sql_kid(f, 0)) return f;
        return join(p, f, f->s, l, (sql_node *)r, (sql_node *)sql_kid(f, 2), f->flags & SQL_F_ALL);
    }
    sql_node **on = NULL;
    int non = 0;
    for (int i = 0; i < w->n; i++) {
        int right = 0, cols = 0;
        if (w->used[i] || !refs_within(ls, w->c[i], lo, mid, hi, &right, &cols) || !right || !cols)
            continue;
        on = sl_realloc(on, sizeof *on * (size_t)(non + 1));
        on[non++] = (sql_node *)w->c[i];
        w->used[i] = 1;
    }
    if (!non) { /* nothing joins them: plan_join.c says a cross join is not supported */
        if (l == sql_kid(f, 0)) return f;
        return join(p, f, f->s ? f->s : "INNER", l, (sql_node *)r, NULL, 0);
    }
    sql_node *j = join(p, f, "INNER", l, (sql_node *)r, and_all(p, f, on, non), 0);
    free(on);
    return j;
}

static int has_comma(const sql_node *f)
{
    if (!f || f->kind != SQL_FROM_JOIN) return 0;
    if (!sql_kid(f, 2) && sql_kid(f, 1)->kind != SQL_FROM_LATERAL) return 1;
    return has_comma(sql_kid(f, 0)) || has_comma(sql_kid(f, 1));
}

/* ---- subqueries ------------------------------------------------------------------ */

typedef struct sq {
    plan *p;
    const sql_node *from;   /* the outer FROM as it grows */
    const sql_node *base;   /* the outer FROM before subqueries join it (value generators) */
    const sql_node *x;      /* IN's operand, an outer expression however its names read */
    const leaves *outer;    /* the outer query's tables */
    sql_node **keep;        /* the outer WHERE's conditions after the rewrite */
    int nkeep;
    int n;                  /* joins added */
} sq;

static void keep(sq *q, sql_node *c)
{
    q->keep = sl_realloc(q->keep, sizeof *q->keep * (size_t)(q->nkeep + 1));
    q->keep[q->nkeep++] = c;
}

/* Does e (inside a subquery whose tables are `in`) name a column of the
 * outer query? */
static int is_outer_col(const sq *q, const leaves *in, const sql_node *c)
{
    int i = leaf_of(in, c);
    if (i >= 0 || i == -2) return 0;
    if (c->s2) return leaf_of(q->outer, c) >= 0;
    return leaf_of(q->outer, c) != -1;
}

static int has_outer(const sq *q, const leaves *in, const sql_node *e)
{
    if (!e) return 0;
    if (e->kind == SQL_COL) return is_outer_col(q, in, e);
    if (e->kind == SQL_SUBQUERY || e->kind == SQL_SELECT) return 0;
    for (int i = 0; i < e->nkids; i++)
        if (has_outer(q, in, e->kids[i])) return 1;
    return 0;
}

static int all_outer(const sq *q, const leaves *in, const sql_node *e, int *cols)
{
    if (!e) return 1;
    if (e->kind == SQL_COL) {
        (*cols)++;
        return is_outer_col(q, in, e);
    }
    for (int i = 0; i < e->nkids; i++)
        if (!all_outer(q, in, e->kids[i], cols)) return 0;
    return 1;
}

/* A subquery taken apart: its FROM, the conditions on its own rows, and the
 * correlation equalities (inner expression = outer expression). */
typedef struct corr {
    const sql_node *from;
    sql_node **local;
    int nlocal;
    const sql_node **in_e, **out_e;
    int n;
    const sql_node *item; /* IN: the selected expression */
    const sql_node **resid; /* other conditions naming the outer query (a semi join's) */
    int nresid;
} corr;

static void corr_free(corr *c)
{
    free(c->local);
    free(c->in_e);
    free(c->out_e);
    free(c->resid);
}

/* Is item expression e one of GROUP BY g's columns, or a literal? */
static int grouped_or_literal(const sql_node *e, const sql_node *g)
{
    if (e->kind == SQL_NUM || e->kind == SQL_STR || e->kind == SQL_BOOL) return 1;
    if (e->kind != SQL_COL) return 0;
    for (int i = 0; i < g->nkids; i++)
        if (g->kids[i]->kind == SQL_COL && !strcasecmp(g->kids[i]->s, e->s) &&
            (!e->s2 || !g->kids[i]->s2 || !strcasecmp(g->kids[i]->s2, e->s2)))
            return 1;
    return 0;
}

/* A SELECT ... FROM ... [WHERE ...] without aggregates, GROUP BY, HAVING or
 * DISTINCT. With `exists` (the query of IN / EXISTS, whose rows count only
 * by whether one exists and whether its value is NULL), DISTINCT and a
 * GROUP BY that only removes duplicates (no aggregates or HAVING; the items
 * grouped columns or literals) change nothing and are taken too: the
 * rewrite reads the query's FROM and WHERE and makes its own DISTINCT side. */
static int simple_select(const sql_node *s, int exists)
{
    if (s->kind != SQL_SELECT || !sql_kid(s, 1) || sql_kid(s, 4)) return 0;
    if (!exists && ((s->flags & SQL_F_DISTINCT) || sql_kid(s, 3))) return 0;
    const sql_node *items = sql_kid(s, 0), *g = sql_kid(s, 3);
    for (int i = 0; i < items->nkids; i++) {
        const sql_node *e = items->kids[i]->kids[0];
        if (has_agg_call(e) || e->kind == SQL_OVER) return 0;
        if (g && !grouped_or_literal(e, g)) return 0;
    }
    return 1;
}

static const char *what(const sql_node *s)
{
    if (!strcmp(s->s, "LATERAL")) return "LATERAL";
    if (!strcmp(s->s, "EXISTS")) return s->flags & SQL_F_NOT ? "NOT EXISTS" : "EXISTS";
    if (!strcmp(s->s, "IN")) return s->flags & SQL_F_NOT ? "NOT IN" : "IN";
    return "scalar";
}

/* Take a simple SELECT apart into *c; SL_DONE when it names no outer column.
 * `resid`: conditions naming the outer query other than inner = outer column
 * go to c->resid (a semi or anti join checks them per pair), else they are
 * refused; `items_ok`: the SELECT list may name the outer query (the caller
 * handles it), else that is refused too. */
static int correlate(sq *q, const sql_node *s, const sql_node *sub, corr *c, int resid,
                     int items_ok)
{
    plan *p = q->p;
    memset(c, 0, sizeof *c);
    c->from = sql_kid(s, 1);
    leaves in = {0};
    leaves_of(p, c->from, &in);
    const sql_node **w = NULL;
    int nw = 0, rc = SL_OK;
    conjuncts(sql_kid(s, 2), &w, &nw);
    const sql_node *items = sql_kid(s, 0);
    /* EXISTS reads no item: outer columns there change nothing (Flink takes them) */
    int exists = !strcmp(sub->s, "EXISTS");
    for (int i = 0; i < items->nkids && rc == SL_OK && !exists && !items_ok; i++)
        if (has_outer(q, &in, items->kids[i]->kids[0]))
            rc = PERR(items->kids[i], "a %s subquery names a column of the outer query in its "
                      "SELECT list; Sluice supports outer columns only in equalities of its "
                      "WHERE clause (inner = outer)", what(sub));
    for (int i = 0; i < nw && rc == SL_OK; i++) {
        const sql_node *e = w[i];
        if (!has_outer(q, &in, e)) {
            c->local = sl_realloc(c->local, sizeof *c->local * (size_t)(c->nlocal + 1));
            c->local[c->nlocal++] = (sql_node *)e;
            continue;
        }
        int side = -1, n0 = 0, n1 = 0;
        if (e->kind == SQL_BINOP && !strcmp(e->s, "=")) {
            if (!has_outer(q, &in, e->kids[0]) && all_outer(q, &in, e->kids[1], &n1) && n1) side = 1;
            else if (!has_outer(q, &in, e->kids[1]) && all_outer(q, &in, e->kids[0], &n0) && n0)
                side = 0;
        }
        if (resid && (side < 0 || e->kids[side]->kind != SQL_COL)) { /* the semi join checks it */
            c->resid = sl_realloc(c->resid, sizeof *c->resid * (size_t)(c->nresid + 1));
            c->resid[c->nresid++] = e;
            continue;
        }
        if (side < 0) {
            rc = PERR(e, "a correlated %s subquery: this condition names the outer query and is "
                      "not an equality between an expression of the subquery and one of the outer "
                      "query; Sluice decorrelates such equalities only", what(sub));
            break;
        }
        c->in_e = sl_realloc(c->in_e, sizeof *c->in_e * (size_t)(c->n + 1));
        c->out_e = sl_realloc(c->out_e, sizeof *c->out_e * (size_t)(c->n + 1));
        c->in_e[c->n] = e->kids[1 - side];
        c->out_e[c->n++] = e->kids[side];
    }
    free(w);
    free(in.l);
    if (rc != SL_OK) {
        corr_free(c);
        return SL_ERR;
    }
    return c->n || c->nresid ? SL_OK : SL_DONE;
}

/* An outer expression as a join key: a column (joins equate columns). */
static int key_col(plan *p, const sql_node *e, const sql_node *sub)
{
    if (e->kind == SQL_COL) return SL_OK;
    char *t = sql_unparse(e);
    int rc = PERR(e, "%s subquery: %s is not a column; Sluice joins a subquery on columns of the "
                  "outer query (compute it in a subquery of the FROM clause and name it)",
                  what(sub), t);
    free(t);
    return rc;
}

/* A copy of e with each column of the subquery (tables `in`) made a column
 * of its side of the join: `alias.__r<n>`, selected into items. */
static sql_node *inner_cols(sq *q, const leaves *in, const sql_node *e, sql_node *items,
                            const char *alias, int *nr)
{
    plan *p = q->p;
    if (!e) return NULL;
    if (e == q->x) return (sql_node *)e;
    if (e->kind == SQL_COL && !is_outer_col(q, in, e)) {
        char rn[16];
        snprintf(rn, sizeof rn, "__r%d", (*nr)++);
        sql_node_add(p->arena, items, mkitem(p, (sql_node *)e, rn));
        return col(p, e, alias, rn);
    }
    sql_node *n = sql_node_like(p->arena, e);
    for (int i = 0; i < e->nkids; i++)
        sql_node_add(p->arena, n, inner_cols(q, in, e->kids[i], items, alias, nr));
    return n;
}

/* x IN (query), [NOT] EXISTS (query) ANDed in WHERE: a semi (anti) join
 * (operators/regular_join.c's mode) with the subquery's rows, on the
 * correlation equalities, checking the other correlated conditions per
 * pair; each outer row passes once while it has a partner (has none).
 * The IN comparison is one more key, or, when x is an expression or the
 * item names the outer query, a condition per pair. x NOT IN (query) comes
 * here when the query is correlated other than by equalities (or names the
 * outer query in its item): an anti join whose pair condition is SQL's
 * "x = y is not FALSE", `x = y OR x IS NULL OR y IS NULL`, as Flink plans it. */
static int semi_join(sq *q, const sql_node *sub, int anti)
{
    plan *p = q->p;
    int in = !strcmp(sub->s, "IN"), notin = in && anti;
    const sql_node *x = sql_kid(sub, 0), *qry = sql_kid(sub, 1);
    int idx = ++q->n;
    char ma[32];
    snprintf(ma, sizeof ma, "__sq%d", idx);
    sql_node *items = mk(p, SQL_LIST, qry);
    sql_node *on[SL_MAX_KEY_COLS + 2];
    int non = 0;
    const sql_node *src_from;
    sql_node *local = NULL;
    corr c = {0};
    if (simple_select(qry, 1)) {
        if (correlate(q, qry, sub, &c, 1, in) == SL_ERR) return SL_ERR;
        const sql_node *its = sql_kid(qry, 0);
        if (in && (its->nkids != 1 || its->kids[0]->kids[0]->kind == SQL_STAR)) {
            corr_free(&c);
            return PERR(x, "Values passed to IN operator must have compatible types (the "
                        "subquery selects %s, IN needs one column)",
                        its->kids[0]->kids[0]->kind == SQL_STAR ? "*" : "several columns");
        }
        src_from = c.from;
        local = c.nlocal ? and_all(p, qry, c.local, c.nlocal) : NULL;
        if (in) c.item = its->kids[0]->kids[0];
        if (in && !notin && x->kind == SQL_COL) {
            leaves inl = {0};
            leaves_of(p, c.from, &inl);
            if (has_outer(q, &inl, c.item)) notin = -1; /* a condition per pair */
            free(inl.l);
        }
    } else {
        char qa[32];
        snprintf(qa, sizeof qa, "__sq%d_q", idx);
        src_from = from_query(p, qry, (sql_node *)qry, qa, in ? "__v" : NULL);
        if (in) c.item = col(p, qry, qa, "__v");
    }
    if (in && (notin || x->kind != SQL_COL)) { /* the comparison as a condition per pair */
        sql_node *eq = sqlp_binop(p, sub, "=", (sql_node *)x, (sql_node *)c.item);
        if (notin > 0)
            eq = sqlp_binop(p, sub, "OR", eq, sqlp_binop(p, sub, "OR", is_null(p, sub, (sql_node *)x, 0),
                                           is_null(p, sub, (sql_node *)c.item, 0)));
        c.resid = sl_realloc(c.resid, sizeof *c.resid * (size_t)(c.nresid + 1));
        c.resid[c.nresid++] = eq;
        c.item = NULL;
    }
    if (c.n + (c.item ? 1 : 0) > SL_MAX_KEY_COLS) {
        corr_free(&c);
        return PERR(sub, "too many correlation columns (at most %d)", SL_MAX_KEY_COLS);
    }
    int nk = 0;
    for (int i = -1; i < c.n; i++) {
        const sql_node *ie = i < 0 ? c.item : c.in_e[i], *oe = i < 0 ? x : c.out_e[i];
        if (!ie) continue;
        if (key_col(p, oe, sub) != SL_OK) {
            corr_free(&c);
            return SL_ERR;
        }
        char kn[16];
        snprintf(kn, sizeof kn, "__k%d", nk++);
        sql_node_add(p->arena, items, mkitem(p, (sql_node *)ie, kn));
        on[non++] = sqlp_binop(p, sub, "=", (sql_node *)oe, col(p, sub, ma, kn));
    }
    if (c.nresid) {
        leaves inl = {0};
        leaves_of(p, src_from, &inl);
        int nr = 0;
        sql_node **rs = sl_calloc((size_t)c.nresid, sizeof *rs);
        q->x = in ? x : NULL;
        for (int i = 0; i < c.nresid; i++) rs[i] = inner_cols(q, &inl, c.resid[i], items, ma, &nr);
        q->x = NULL;
        on[non++] = and_all(p, sub, rs, c.nresid);
        free(rs);
        free(inl.l);
    }
    if (!items->nkids) { /* EXISTS without correlation: any row of it */
        sql_node *t = mk(p, SQL_BOOL, qry);
        t->flags = SQL_F_TRUE;
        sql_node_add(p->arena, items, mkitem(p, t, "__k0"));
    }
    sql_node *m = select_of(p, qry, 0, items, src_from, local, NULL);
    q->from = join(p, sub, anti ? "ANTI" : "SEMI", q->from, from_query(p, qry, m, ma, NULL),
                   and_all(p, sub, on, non), nk == 0);
    corr_free(&c);
    return SL_OK;
}

static int vgen_mark(sq *q, const sql_node *sub, sql_node **mark);

/* Is the simple SELECT of subquery `sub` correlated other than by
 * equalities inner = outer column, or does its item name the outer query? */
static int pair_conditions(sq *q, const sql_node *sub)
{
    const sql_node *qry = sql_kid(sub, 1);
    corr c;
    if (correlate(q, qry, sub, &c, 1, 1) == SL_ERR) return 0; /* it refuses nothing so */
    int r = c.nresid > 0;
    leaves inl = {0};
    leaves_of(q->p, c.from, &inl);
    const sql_node *its = sql_kid(qry, 0);
    int exists = !strcmp(sub->s, "EXISTS"); /* reads no item */
    for (int i = 0; !r && !exists && i < its->nkids; i++)
        r = has_outer(q, &inl, its->kids[i]->kids[0]);
    free(inl.l);
    corr_free(&c);
    return r;
}

/* x [NOT] IN / [NOT] EXISTS (SELECT ... FROM s WHERE s.c = o.c AND ...
 * GROUP BY g [HAVING h]), correlated by equalities inner = outer column
 * only, as Flink decorrelates it: the groups are made per correlation value
 * (GROUP BY g, s.c: the WHERE keeps one value of s.c per outer row, so the
 * groups an outer row sees are the same) and *out is the subquery as a plain
 * SELECT over them, correlated on that value:
 *     x IN (SELECT __g.__v FROM (SELECT y AS __v, s.c AS __j0 ... GROUP BY g, s.c
 *           HAVING h) AS __g WHERE __g.__j0 = o.c)
 * which the semi / anti join rewrites take. *out is sub when the query is
 * not such a grouped query or not correlated. */
static int grouped_sub(sq *q, const sql_node *sub, const sql_node **out)
{
    plan *p = q->p;
    *out = sub;
    const sql_node *qry = sql_kid(sub, 1);
    if (!qry || qry->kind != SQL_SELECT || !sql_kid(qry, 1) || !sql_kid(qry, 3) ||
        simple_select(qry, 1))
        return SL_OK;
    int in = !strcmp(sub->s, "IN");
    const sql_node *its = sql_kid(qry, 0);
    corr c;
    int rc = correlate(q, qry, sub, &c, 1, 1);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_DONE) { /* not correlated: planned as any query */
        corr_free(&c);
        return SL_OK;
    }
    leaves inl = {0};
    leaves_of(p, c.from, &inl);
    const sql_node *bad = c.nresid ? c.resid[0] : NULL;
    for (int i = 0; !bad && i < its->nkids; i++)
        if ((in || i == 0) && has_outer(q, &inl, its->kids[i]->kids[0])) bad = its->kids[i];
    if (!bad && has_outer(q, &inl, sql_kid(qry, 3))) bad = sql_kid(qry, 3);
    if (!bad && has_outer(q, &inl, sql_kid(qry, 4))) bad = sql_kid(qry, 4);
    free(inl.l);
    if (bad) {
        corr_free(&c);
        return PERR(bad, "a correlated %s subquery with GROUP BY names the outer query other "
                    "than in equalities of its WHERE clause (inner = outer column); Sluice "
                    "decorrelates those only", what(sub));
    }
    if (in && (its->nkids != 1 || its->kids[0]->kids[0]->kind == SQL_STAR)) {
        corr_free(&c);
        return PERR(sql_kid(sub, 0), "Values passed to IN operator must have compatible types "
                    "(the subquery selects %s, IN needs one column)",
                    its->kids[0]->kids[0]->kind == SQL_STAR ? "*" : "several columns");
    }
    if (c.n > SL_MAX_KEY_COLS) {
        corr_free(&c);
        return PERR(sub, "too many correlation columns (at most %d)", SL_MAX_KEY_COLS);
    }
    char ga[32];
    snprintf(ga, sizeof ga, "__sq%d_g", ++q->n);
    sql_node *items = mk(p, SQL_LIST, qry), *group = mk(p, SQL_LIST, qry);
    sql_node *names = mk(p, SQL_LIST, qry), *on[SL_MAX_KEY_COLS + 1];
    const sql_node *g = sql_kid(qry, 3);
    for (int i = 0; i < g->nkids; i++) sql_node_add(p->arena, group, g->kids[i]);
    sql_node *v;
    if (in) {
        v = its->kids[0]->kids[0];
    } else {
        v = mk(p, SQL_BOOL, qry);
        v->flags = SQL_F_TRUE;
    }
    sql_node_add(p->arena, items, mkitem(p, v, "__v"));
    sql_node *id = mk(p, SQL_IDENT, qry);
    id->s = "__v";
    sql_node_add(p->arena, names, id);
    for (int i = 0; i < c.n; i++) {
        char kn[16];
        snprintf(kn, sizeof kn, "__j%d", i);
        sql_node_add(p->arena, items, mkitem(p, (sql_node *)c.in_e[i], kn));
        sql_node_add(p->arena, group, (sql_node *)c.in_e[i]);
        id = mk(p, SQL_IDENT, qry);
        id->s = astr(p, kn);
        sql_node_add(p->arena, names, id);
        on[i] = sqlp_binop(p, sub, "=", col(p, sub, ga, kn), (sql_node *)c.out_e[i]);
    }
    /* EXISTS reads no item, yet they are checked against the grouping as written */
    for (int i = 0; !in && i < its->nkids; i++) {
        if (its->kids[i]->kids[0]->kind == SQL_STAR) continue;
        char xn[16];
        snprintf(xn, sizeof xn, "__x%d", i);
        sql_node_add(p->arena, items, mkitem(p, its->kids[i]->kids[0], xn));
        id = mk(p, SQL_IDENT, qry);
        id->s = astr(p, xn);
        sql_node_add(p->arena, names, id);
    }
    sql_node *gq = sql_node_like(p->arena, qry);
    for (int i = 0; i < qry->nkids; i++)
        sql_node_add(p->arena, gq, i == 0 ? items : i == 2 ? (c.nlocal ? and_all(p, qry, c.local,
                                                                                  c.nlocal) : NULL)
                                          : i == 3 ? group : qry->kids[i]);
    sql_node *gf = from_query(p, qry, gq, ga, NULL);
    sql_node_add(p->arena, gf, names);
    sql_node *outer_items = mk(p, SQL_LIST, qry);
    sql_node_add(p->arena, outer_items, mkitem(p, col(p, qry, ga, "__v"), NULL));
    sql_node *nq = select_of(p, qry, 0, outer_items, gf, and_all(p, sub, on, c.n), NULL);
    sql_node *ns = sql_node_like(p->arena, sub);
    for (int i = 0; i < sub->nkids; i++)
        sql_node_add(p->arena, ns, i == 1 ? nq : sub->kids[i]);
    *out = ns;
    corr_free(&c);
    return SL_OK;
}

/* x [NOT] IN (query), [NOT] EXISTS (query) as a condition ANDed in WHERE. */
static int semi_anti(sq *q, const sql_node *sub, int neg, sql_node **mark)
{
    plan *p = q->p;
    if (grouped_sub(q, sub, &sub) != SL_OK) return SL_ERR;
    int in = !strcmp(sub->s, "IN");
    /* mark: the subquery anywhere in an expression; both joins LEFT, *mark its value */
    int anti = mark || neg != !!(sub->flags & SQL_F_NOT);
    if (!mark && !(in && anti)) return semi_join(q, sub, anti);
    const sql_node *x = sql_kid(sub, 0), *qry = sql_kid(sub, 1);
    if (!mark && (x->kind != SQL_COL || (simple_select(qry, 1) && pair_conditions(q, sub))))
        return semi_join(q, sub, 1);
    if (mark && simple_select(qry, 1) && pair_conditions(q, sub)) return vgen_mark(q, sub, mark);
    if (in && key_col(p, x, sub) != SL_OK) return SL_ERR;
    corr c = {0};
    int simple = simple_select(qry, 1), rc = SL_DONE;
    if (simple) {
        if ((rc = correlate(q, qry, sub, &c, 0, 0)) == SL_ERR) return SL_ERR;
        if (in) {
            const sql_node *items = sql_kid(qry, 0);
            if (items->nkids != 1 || items->kids[0]->kids[0]->kind == SQL_STAR) {
                corr_free(&c);
                return PERR(x, "Values passed to IN operator must have compatible types (the "
                            "subquery selects %s, IN needs one column)",
                            items->kids[0]->kids[0]->kind == SQL_STAR ? "*" : "several columns");
            }
            c.item = items->kids[0]->kids[0];
        }
    }
    for (int i = 0; i < c.n; i++)
        if (key_col(p, c.out_e[i], sub) != SL_OK) {
            corr_free(&c);
            return SL_ERR;
        }
    int idx = ++q->n;
    char ma[32], sa[32];
    snprintf(ma, sizeof ma, "__sq%d", idx);
    snprintf(sa, sizeof sa, "__sq%d_n", idx);
    /* the distinct keys: [the IN value,] the correlation expressions */
    const sql_node *src_from;
    sql_node *local, *val;
    if (simple) {
        src_from = c.from;
        local = c.nlocal ? and_all(p, qry, c.local, c.nlocal) : NULL;
        val = (sql_node *)c.item;
    } else { /* any other query, uncorrelated: over its one column */
        char qa[32];
        snprintf(qa, sizeof qa, "__sq%d_q", idx);
        src_from = from_query(p, qry, (sql_node *)qry, qa, in ? "__v" : NULL);
        local = NULL;
        val = in ? col(p, qry, qa, "__v") : NULL;
    }
    sql_node *items = mk(p, SQL_LIST, qry), *nn[SL_MAX_KEY_COLS + 1], *on[SL_MAX_KEY_COLS + 1];
    int nk = 0;
    if (c.n + (in ? 1 : 0) > SL_MAX_KEY_COLS) {
        corr_free(&c);
        return PERR(sub, "too many correlation columns (at most %d)", SL_MAX_KEY_COLS);
    }
    for (int i = -1; i < c.n; i++) {
        const sql_node *ie = i < 0 ? val : c.in_e[i], *oe = i < 0 ? x : c.out_e[i];
        if (!ie) continue;
        char kn[16];
        snprintf(kn, sizeof kn, "__k%d", nk);
        sql_node_add(p->arena, items, mkitem(p, (sql_node *)ie, kn));
        nn[nk] = is_null(p, ie, (sql_node *)ie, 1);
        on[nk] = sqlp_binop(p, sub, "=", (sql_node *)oe, col(p, sub, ma, kn));
        nk++;
    }
    int constant = nk == 0;
    if (constant) { /* EXISTS without correlation: one row when the subquery has any */
        sql_node *t = mk(p, SQL_BOOL, qry);
        t->flags = SQL_F_TRUE;
        sql_node_add(p->arena, items, mkitem(p, t, "__k0"));
    }
    sql_node *where = local;
    for (int i = 0; i < nk; i++) where = where ? sqlp_binop(p, sub, "AND", where, nn[i]) : nn[i];
    sql_node *m = select_of(p, qry, 1, items, src_from, where, NULL);
    sql_node *cond = constant ? and_all(p, sub, NULL, 0) : and_all(p, sub, on, nk);
    q->from = join(p, sub, anti ? "LEFT" : "INNER", q->from, from_query(p, qry, m, ma, NULL), cond,
                   constant);
    if (!anti) {
        corr_free(&c);
        return SL_OK;
    }
    sql_node *unmatched = is_null(p, sub, col(p, sub, ma, "__k0"), 0);
    if (!in) {
        if (mark) {
            *mark = is_null(p, sub, col(p, sub, ma, "__k0"), !(sub->flags & SQL_F_NOT));
        } else {
            keep(q, unmatched);
        }
        corr_free(&c);
        return SL_OK;
    }
    /* NOT IN: COUNT(*) and COUNT(value) per correlation key tell an empty
     * subquery (true) and one with a NULL (never true) apart */
    sql_node *sitems = mk(p, SQL_LIST, qry), *group = c.n ? mk(p, SQL_LIST, qry) : NULL;
    sql_node *son[SL_MAX_KEY_COLS];
    for (int i = 0; i < c.n; i++) {
        char kn[16];
        snprintf(kn, sizeof kn, "__j%d", i);
        sql_node_add(p->arena, sitems, mkitem(p, (sql_node *)c.in_e[i], kn));
        sql_node_add(p->arena, group, (sql_node *)c.in_e[i]);
        son[i] = sqlp_binop(p, sub, "=", (sql_node *)c.out_e[i], col(p, sub, sa, kn));
    }
    sql_node_add(p->arena, sitems, mkitem(p, func(p, qry, "COUNT", NULL), "__c"));
    sql_node_add(p->arena, sitems, mkitem(p, func(p, qry, "COUNT", val), "__cv"));
    sql_node *st = select_of(p, qry, 0, sitems, src_from, local, group);
    q->from = join(p, sub, "LEFT", q->from, from_query(p, qry, st, sa, NULL),
                   c.n ? and_all(p, sub, son, c.n) : and_all(p, sub, NULL, 0), c.n == 0);
    sql_node *zero = mk(p, SQL_NUM, sub);
    zero->s = "0";
    sql_node *empty = sqlp_binop(p, sub, "OR", is_null(p, sub, col(p, sub, sa, "__c"), 0),
                          sqlp_binop(p, sub, "=", col(p, sub, sa, "__c"), zero));
    if (mark) {
        /* x IN (...): TRUE on a match; FALSE for an empty subquery; else NULL when x is
         * NULL or the subquery has a NULL; else FALSE */
        *mark = in_answer(p, sub, col(p, sub, ma, "__k0"), empty, x, col(p, sub, sa, "__c"),
                          col(p, sub, sa, "__cv"));
        corr_free(&c);
        return SL_OK;
    }
    sql_node *clean = sqlp_binop(p, sub, "AND", is_null(p, sub, (sql_node *)x, 1),
                          sqlp_binop(p, sub, "AND", sqlp_binop(p, sub, "=", col(p, sub, sa, "__c"),
                                                 col(p, sub, sa, "__cv")),
                              unmatched));
    keep(q, sqlp_binop(p, sub, "OR", empty, clean));
    corr_free(&c);
    return SL_OK;
}

/* ---- value generators ------------------------------------------------------------ */

static const char *item_name(plan *p, const sql_node *it, int i, const sql_node *cols);

/* A subquery correlated other than by equalities inner = outer column, or
 * naming the outer query in its SELECT list (scalar and LATERAL), is
 * decorrelated as Calcite does, with a value generator: the distinct values
 * of the outer columns it names,
 *     (SELECT DISTINCT o1 AS __o0, o2 AS __o1 ... FROM <outer FROM>) AS __sqN_d,
 * joined (inner) with the subquery's FROM on its correlated conditions, the
 * outer columns read from __sqN_d; the subquery's result per outer value
 * (grouped by __o0.. for an aggregate) is then joined back to the outer
 * FROM on o1 = __o0 AND ... A NULL outer value meets nothing there, which
 * is right when a NULL makes the subquery empty: when the column appears in
 * a condition that is not TRUE for NULL (a comparison of plain columns,
 * literals and arithmetic), or, for an aggregate, only under MIN/MAX/SUM/AVG
 * of such an expression (NULL over no rows as over NULLs). Any other outer
 * column is joined back null-safely, `(o = __o OR o IS NULL AND __o IS
 * NULL)`, a condition per pair of the join's key (a constant key when no
 * column is joined on `=`). */
typedef struct vgen {
    const sql_node *oc[SL_MAX_KEY_COLS]; /* the outer columns, first occurrences */
    char strict[SL_MAX_KEY_COLS];        /* a NULL there makes the subquery empty */
    int n;
    char da[32];                         /* the value generator's alias */
} vgen;

static int same_col(const sql_node *a, const sql_node *b)
{
    if (strcasecmp(a->s, b->s)) return 0;
    if (!a->s2 || !b->s2) return !a->s2 && !b->s2;
    return !strcasecmp(a->s2, b->s2);
}

static int vgen_index(const vgen *g, const sql_node *c)
{
    for (int i = 0; i < g->n; i++)
        if (same_col(g->oc[i], c)) return i;
    return -1;
}

static int vgen_collect(sq *q, const leaves *in, const sql_node *e, vgen *g)
{
    if (!e || e->kind == SQL_SUBQUERY || e->kind == SQL_SELECT) return SL_OK;
    if (e->kind == SQL_COL) {
        if (!is_outer_col(q, in, e) || vgen_index(g, e) >= 0) return SL_OK;
        if (g->n == SL_MAX_KEY_COLS)
            return plan_err(q->p, e, "a correlated subquery naming more than %d columns of the "
                            "outer query is not supported", SL_MAX_KEY_COLS);
        g->oc[g->n++] = e;
        return SL_OK;
    }
    for (int i = 0; i < e->nkids; i++)
        if (vgen_collect(q, in, e->kids[i], g) != SL_OK) return SL_ERR;
    return SL_OK;
}

/* A copy of e with each outer column read from the value generator. */
static sql_node *vgen_subst(sq *q, const leaves *in, const sql_node *e, const vgen *g)
{
    if (!e) return NULL;
    if (e->kind == SQL_COL && is_outer_col(q, in, e)) {
        char on[16];
        snprintf(on, sizeof on, "__o%d", vgen_index(g, e));
        return col(q->p, e, g->da, on);
    }
    if (e->kind == SQL_SUBQUERY || e->kind == SQL_SELECT) return (sql_node *)e;
    sql_node *n = sql_node_like(q->p->arena, e);
    for (int i = 0; i < e->nkids; i++) sql_node_add(q->p->arena, n, vgen_subst(q, in, e->kids[i], g));
    return n;
}

/* NULL in, NULL out: columns, literals, arithmetic, casts. */
static int strict_expr(const sql_node *e)
{
    if (!e) return 0;
    switch (e->kind) {
    case SQL_COL: case SQL_NUM: case SQL_STR: return 1;
    case SQL_CAST: case SQL_UNOP: return !strcmp(e->s ? e->s : "", "NOT") ? 0 : strict_expr(e->kids[0]);
    case SQL_BINOP: {
        static const char *const ops[] = {"+", "-", "*", "/", "%", "||"};
        for (size_t i = 0; i < SL_ARRAY_LEN(ops); i++)
            if (!strcmp(e->s, ops[i])) return strict_expr(e->kids[0]) && strict_expr(e->kids[1]);
        return 0;
    }
    default: return 0;
    }
}

static int strict_cond(const sql_node *e)
{
    static const char *const ops[] = {"=", "<>", "!=", "<", ">", "<=", ">="};
    if (e->kind != SQL_BINOP) return 0;
    for (size_t i = 0; i < SL_ARRAY_LEN(ops); i++)
        if (!strcmp(e->s, ops[i])) return strict_expr(e->kids[0]) && strict_expr(e->kids[1]);
    return 0;
}

/* Does column c occur in e other than under MIN/MAX/SUM/AVG of a strict expression? */
static int loose_use(const sql_node *e, const sql_node *c)
{
    if (!e) return 0;
    if (e->kind == SQL_COL) return same_col(e, c);
    if (e->kind == SQL_FUNC && e->nkids == 1 && strict_expr(e->kids[0]) &&
        (!strcasecmp(e->s, "MIN") || !strcasecmp(e->s, "MAX") || !strcasecmp(e->s, "SUM") ||
         !strcasecmp(e->s, "AVG")))
        return 0;
    for (int i = 0; i < e->nkids; i++)
        if (loose_use(e->kids[i], c)) return 1;
    return 0;
}

/* The subquery `qry` (a simple SELECT) over its value generator: *from its
 * FROM joined with the generator, *where its own conditions; g the outer
 * columns. `agg`: its items are aggregates (one row per outer value). */
static int vgen_from(sq *q, const sql_node *sub, const sql_node *qry, const sql_node *outer_from,
                     int agg, vgen *g, leaves *in, const sql_node **from, sql_node **where)
{
    plan *p = q->p;
    memset(g, 0, sizeof *g);
    snprintf(g->da, sizeof g->da, "__sq%d_d", ++q->n);
    leaves_of(p, sql_kid(qry, 1), in);
    const sql_node **w = NULL;
    int nw = 0, rc = SL_OK;
    conjuncts(sql_kid(qry, 2), &w, &nw);
    const sql_node *items = sql_kid(qry, 0);
    for (int i = 0; rc == SL_OK && i < nw; i++) rc = vgen_collect(q, in, w[i], g);
    int exists = sub->kind == SQL_SUBQUERY && sub->s && !strcmp(sub->s, "EXISTS");
    for (int i = 0; rc == SL_OK && !exists && i < items->nkids; i++)
        rc = vgen_collect(q, in, items->kids[i]->kids[0], g);
    for (int k = 0; rc == SL_OK && k < g->n; k++) { /* a NULL outer value must mean "empty" */
        int ok = 0;
        for (int i = 0; !ok && i < nw; i++)
            ok = strict_cond(w[i]) && loose_use(w[i], g->oc[k]);
        if (!ok && agg) {
            ok = 1;
            for (int i = 0; ok && i < items->nkids; i++)
                ok = !loose_use(items->kids[i]->kids[0], g->oc[k]);
            for (int i = 0; ok && i < nw; i++) ok = !loose_use(w[i], g->oc[k]);
        }
        g->strict[k] = (char)ok;
    }
    sql_node **on = NULL, **loc = NULL;
    int non = 0, nloc = 0, equi = 0;
    for (int i = 0; rc == SL_OK && i < nw; i++) {
        if (!has_outer(q, in, w[i])) {
            loc = sl_realloc(loc, sizeof *loc * (size_t)(nloc + 1));
            loc[nloc++] = (sql_node *)w[i];
            continue;
        }
        if (w[i]->kind == SQL_BINOP && !strcmp(w[i]->s, "=") && w[i]->kids[0]->kind == SQL_COL &&
            w[i]->kids[1]->kind == SQL_COL &&
            is_outer_col(q, in, w[i]->kids[0]) != is_outer_col(q, in, w[i]->kids[1]))
            equi = 1;
        on = sl_realloc(on, sizeof *on * (size_t)(non + 1));
        on[non++] = vgen_subst(q, in, w[i], g);
    }
    if (rc == SL_OK) {
        sql_node *ditems = mk(p, SQL_LIST, qry);
        for (int k = 0; k < g->n; k++) {
            char on_[16];
            snprintf(on_, sizeof on_, "__o%d", k);
            sql_node_add(p->arena, ditems, mkitem(p, (sql_node *)g->oc[k], on_));
        }
        sql_node *d = select_of(p, sub, 1, ditems, outer_from, NULL, NULL);
        *from = join(p, sub, "INNER", sql_kid(qry, 1), from_query(p, sub, d, g->da, NULL),
                     and_all(p, sub, on, non), !equi);
        *where = nloc ? and_all(p, qry, loc, nloc) : NULL;
    }
    free(on);
    free(loc);
    free(w);
    return rc;
}

/* ON o1 = a.__o0 AND ... (and `extra`), null-safe for the columns that are
 * not strict; *constant: no column is joined on `=` (a constant key). */
static sql_node *vgen_on(sq *q, const sql_node *at, const vgen *g, const char *a, sql_node *extra,
                         int *constant)
{
    plan *p = q->p;
    sql_node *r = extra;
    *constant = 1;
    for (int k = g->n - 1; k >= 0; k--) {
        char on[16];
        snprintf(on, sizeof on, "__o%d", k);
        sql_node *eq = sqlp_binop(p, at, "=", (sql_node *)g->oc[k], col(p, at, a, on));
        if (g->strict[k]) *constant = 0;
        else
            eq = sqlp_binop(p, at, "OR", eq,
                     sqlp_binop(p, at, "AND", is_null(p, at, (sql_node *)g->oc[k], 0),
                         is_null(p, at, col(p, at, a, on), 0)));
        r = r ? sqlp_binop(p, at, "AND", eq, r) : eq;
    }
    return r;
}

/* A correlated scalar subquery's one item, an expression of aggregates. */
static const sql_node *scalar_item(const sql_node *qry)
{
    return sql_kid(qry, 0)->kids[0]->kids[0];
}

/* A correlated scalar subquery's item over the groups LEFT-joined as `a`:
 * each aggregate call of e becomes a column __a<i> of the groups (the calls
 * appended to *calls), a COUNT COALESCE(__a<i>, 0) -- SQL's value over no
 * rows, for an outer row without a group -- and the expression is computed
 * over them after the join (COUNT(*) + 1 is 1 there). With HAVING (`having`)
 * an outer row without a group gets NULL, as Flink 2.3 decorrelates it (the
 * groups filtered by HAVING, then LEFT-joined), so COUNT stays a column. */
static sql_node *agg_split(plan *p, const sql_node *e, const char *a, sql_node ***calls, int *n,
                           int having)
{
    if (!e || e->kind == SQL_SUBQUERY || e->kind == SQL_SELECT) return (sql_node *)e;
    /* a non-aggregate scalar's checked value (single_value) is computed with the groups,
     * so its check runs whether or not an outer row meets the group, as Flink's */
    int single = e->kind == SQL_FUNC && !strcasecmp(e->s, "SL_SINGLE_VALUE");
    if (e->kind == SQL_FUNC && (is_agg(e->s) || single)) {
        char nm[16];
        snprintf(nm, sizeof nm, "__a%d", *n);
        *calls = sl_realloc(*calls, sizeof **calls * (size_t)(*n + 1));
        (*calls)[(*n)++] = (sql_node *)e;
        sql_node *c = col(p, e, a, nm);
        if (having || single || strcasecmp(e->s, "COUNT")) return c;
        sql_node *zero = mk(p, SQL_NUM, e);
        zero->s = "0";
        sql_node *co = func(p, e, "COALESCE", c);
        sql_node_add(p->arena, co, zero);
        return co;
    }
    sql_node *r = sql_node_like(p->arena, e);
    for (int k = 0; k < e->nkids; k++)
        sql_node_add(p->arena, r, agg_split(p, e->kids[k], a, calls, n, having));
    return r;
}

/* A scalar subquery (an aggregate) over its value generator, grouped by the
 * outer values and LEFT-joined back on them. */
static int vgen_scalar(sq *q, const sql_node *e, const sql_node *qry, sql_node **out)
{
    plan *p = q->p;
    const sql_node *agg = scalar_item(qry), *having = sql_kid(qry, 4);
    vgen g;
    leaves in = {0};
    const sql_node *from;
    sql_node *where;
    int rc = vgen_from(q, e, qry, q->base, 1, &g, &in, &from, &where);
    if (rc == SL_OK) {
        char a[32];
        snprintf(a, sizeof a, "__sq%d", ++q->n);
        sql_node *items = mk(p, SQL_LIST, qry), *group = mk(p, SQL_LIST, qry);
        for (int k = 0; k < g.n; k++) {
            char on[16];
            snprintf(on, sizeof on, "__o%d", k);
            sql_node_add(p->arena, items, mkitem(p, col(p, e, g.da, on), on));
            sql_node_add(p->arena, group, col(p, e, g.da, on));
        }
        sql_node **calls = NULL;
        int ncalls = 0;
        *out = agg_split(p, agg, a, &calls, &ncalls, having != NULL);
        for (int k = 0; k < ncalls; k++) {
            char nm[16];
            snprintf(nm, sizeof nm, "__a%d", k);
            sql_node_add(p->arena, items, mkitem(p, vgen_subst(q, &in, calls[k], &g), nm));
        }
        free(calls);
        sql_node *s = select_of(p, qry, 0, items, from, where, group);
        if (having) s->kids[4] = vgen_subst(q, &in, having, &g);
        int cst;
        sql_node *on = vgen_on(q, e, &g, a, NULL, &cst);
        q->from = join(p, e, "LEFT", q->from, from_query(p, e, s, a, NULL), on, cst);
    }
    free(in.l);
    return rc;
}

/* l <kind> JOIN LATERAL (SELECT ...) AS r over its value generator (over l):
 * its rows (or its aggregate grouped by the outer values, LEFT-joined) per
 * outer value, joined back on them. */
static int vgen_lateral(sq *q, const sql_node *f, const sql_node *l, const sql_node *r, int agg,
                        const sql_node **out)
{
    plan *p = q->p;
    const sql_node *qry = sql_kid(r, 0), *cols = sql_kid(r, 1), *its = sql_kid(qry, 0);
    vgen g;
    leaves in = {0};
    const sql_node *from;
    sql_node *where;
    int rc = vgen_from(q, r, qry, l, agg, &g, &in, &from, &where);
    if (rc == SL_OK) {
        sql_node *items = mk(p, SQL_LIST, qry), *group = agg ? mk(p, SQL_LIST, qry) : NULL;
        for (int i = 0; i < its->nkids; i++)
            sql_node_add(p->arena, items, mkitem(p, vgen_subst(q, &in, its->kids[i]->kids[0], &g),
                                                 item_name(p, its->kids[i], i, cols)));
        for (int k = 0; k < g.n; k++) {
            char on[16];
            snprintf(on, sizeof on, "__o%d", k);
            sql_node_add(p->arena, items, mkitem(p, col(p, r, g.da, on), on));
            if (group) sql_node_add(p->arena, group, col(p, r, g.da, on));
        }
        sql_node *s = select_of(p, qry, 0, items, from, where, group);
        const sql_node *won = sql_kid(f, 2);
        sql_node *extra = won && !(won->kind == SQL_BOOL && (won->flags & SQL_F_TRUE))
                              ? (sql_node *)won : NULL;
        const char *kind = f->s && strcasecmp(f->s, "CROSS") ? f->s : "INNER";
        int cst;
        sql_node *on = vgen_on(q, f, &g, r->s2, extra, &cst);
        *out = join(p, f, kind, l, from_query(p, r, s, r->s2, NULL), on, cst);
    }
    free(in.l);
    return rc;
}

/* [NOT] EXISTS (query), x [NOT] IN (query) inside an expression (under OR,
 * in CASE, in the SELECT list), the query correlated other than by
 * equalities: over its value generator, COUNT(*) and COUNT(y) per outer
 * value (the subquery's rows: any? a NULL among them?) and, for IN, its
 * distinct y per outer value, both LEFT-joined back (the latter also on
 * x = y); *mark the three-valued result. */
static int vgen_mark(sq *q, const sql_node *sub, sql_node **mark)
{
    plan *p = q->p;
    int in = !strcmp(sub->s, "IN");
    const sql_node *x = sql_kid(sub, 0), *qry = sql_kid(sub, 1);
    if (in) {
        const sql_node *its = sql_kid(qry, 0);
        if (its->nkids != 1 || its->kids[0]->kids[0]->kind == SQL_STAR)
            return PERR(x, "Values passed to IN operator must have compatible types (the "
                        "subquery selects %s, IN needs one column)",
                        its->kids[0]->kids[0]->kind == SQL_STAR ? "*" : "several columns");
    }
    vgen g;
    leaves in_l = {0};
    const sql_node *from;
    sql_node *where;
    int rc = vgen_from(q, sub, qry, q->base, 0, &g, &in_l, &from, &where);
    if (rc != SL_OK) {
        free(in_l.l);
        return rc;
    }
    sql_node *yv = in ? vgen_subst(q, &in_l, sql_kid(qry, 0)->kids[0]->kids[0], &g) : NULL;
    char ca[32], ma[32];
    snprintf(ca, sizeof ca, "__sq%d", ++q->n);
    snprintf(ma, sizeof ma, "__sq%d", ++q->n);
    sql_node *citems = mk(p, SQL_LIST, qry), *group = mk(p, SQL_LIST, qry);
    sql_node *mitems = mk(p, SQL_LIST, qry);
    for (int k = 0; k < g.n; k++) {
        char on[16];
        snprintf(on, sizeof on, "__o%d", k);
        sql_node_add(p->arena, citems, mkitem(p, col(p, sub, g.da, on), on));
        sql_node_add(p->arena, mitems, mkitem(p, col(p, sub, g.da, on), on));
        sql_node_add(p->arena, group, col(p, sub, g.da, on));
    }
    sql_node_add(p->arena, citems, mkitem(p, func(p, qry, "COUNT", NULL), "__c"));
    if (in) sql_node_add(p->arena, citems, mkitem(p, func(p, qry, "COUNT", yv), "__cv"));
    sql_node *cs_q = select_of(p, qry, 0, citems, from, where, group);
    int cst;
    sql_node *on = vgen_on(q, sub, &g, ca, NULL, &cst);
    q->from = join(p, sub, "LEFT", q->from, from_query(p, qry, cs_q, ca, NULL), on, cst);
    sql_node *any = is_null(p, sub, col(p, sub, ca, "__c"), 1);
    if (!in) {
        *mark = (sub->flags & SQL_F_NOT) ? is_null(p, sub, col(p, sub, ca, "__c"), 0) : any;
        free(in_l.l);
        return SL_OK;
    }
    sql_node_add(p->arena, mitems, mkitem(p, yv, "__m"));
    sql_node *m_q = select_of(p, qry, 1, mitems, from, where ? sqlp_binop(p, qry, "AND", where,
                              is_null(p, qry, yv, 1)) : is_null(p, qry, yv, 1), NULL);
    /* x = __m is the key when no outer column is */
    on = vgen_on(q, sub, &g, ma, sqlp_binop(p, sub, "=", (sql_node *)x, col(p, sub, ma, "__m")), &cst);
    q->from = join(p, sub, "LEFT", q->from, from_query(p, qry, m_q, ma, NULL), on,
                   cst && x->kind != SQL_COL);
    /* TRUE on a match; FALSE for an empty subquery; NULL when x is NULL or
     * the subquery has a NULL; else FALSE */
    *mark = in_answer(p, sub, col(p, sub, ma, "__m"), is_null(p, sub, col(p, sub, ca, "__c"), 0), x,
                      col(p, sub, ca, "__c"), col(p, sub, ca, "__cv"));
    free(in_l.l);
    return SL_OK;
}

/* (SELECT agg FROM s WHERE s.c = o.c AND ...): a LEFT join with the
 * aggregate grouped by the correlation expressions, on them. An outer row
 * without a group gets NULL, or 0 for COUNT (SQL's value over no rows). */
static int correlated_scalar(sq *q, const sql_node *e, const sql_node *qry, const corr *c,
                             sql_node **out)
{
    plan *p = q->p;
    const sql_node *agg = scalar_item(qry), *having = sql_kid(qry, 4);
    if (c->n > SL_MAX_KEY_COLS) return PERR(e, "too many correlation columns");
    for (int i = 0; i < c->n; i++)
        if (key_col(p, c->out_e[i], e) != SL_OK) return SL_ERR;
    char a[32];
    snprintf(a, sizeof a, "__sq%d", ++q->n);
    sql_node *items = mk(p, SQL_LIST, qry), *group = mk(p, SQL_LIST, qry);
    sql_node *on[SL_MAX_KEY_COLS];
    for (int i = 0; i < c->n; i++) {
        char kn[16];
        snprintf(kn, sizeof kn, "__j%d", i);
        sql_node_add(p->arena, items, mkitem(p, (sql_node *)c->in_e[i], kn));
        sql_node_add(p->arena, group, (sql_node *)c->in_e[i]);
        on[i] = sqlp_binop(p, e, "=", (sql_node *)c->out_e[i], col(p, e, a, kn));
    }
    sql_node **calls = NULL;
    int ncalls = 0;
    *out = agg_split(p, agg, a, &calls, &ncalls, having != NULL);
    for (int k = 0; k < ncalls; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "__a%d", k);
        sql_node_add(p->arena, items, mkitem(p, calls[k], nm));
    }
    free(calls);
    sql_node *where = c->nlocal ? and_all(p, qry, c->local, c->nlocal) : NULL;
    sql_node *g = select_of(p, qry, 0, items, c->from, where, group);
    g->kids[4] = (sql_node *)having;
    q->from = join(p, e, "LEFT", q->from, from_query(p, e, g, a, NULL), and_all(p, e, on, c->n), 0);
    return SL_OK;
}

/* A scalar subquery that does not aggregate, (SELECT v FROM s WHERE ...),
 * may give one row at most: as Flink's SINGLE_VALUE aggregate, it becomes
 * (SELECT SL_SINGLE_VALUE(COUNT(*), MAX(v)) FROM s WHERE ...) -- per
 * correlation value once decorrelated -- which is v for one row, NULL for
 * none, and fails the job when a value has more than one row. */
static const sql_node *single_value(plan *p, const sql_node *qry)
{
    const sql_node *it = sql_kid(qry, 0)->kids[0];
    sql_node *f = func(p, it, "SL_SINGLE_VALUE", func(p, it, "COUNT", NULL));
    sql_node_add(p->arena, f, func(p, it, "MAX", it->kids[0]));
    sql_node *items = mk(p, SQL_LIST, qry);
    sql_node_add(p->arena, items, mkitem(p, f, it->s));
    sql_node *n = sql_node_like(p->arena, qry);
    for (int i = 0; i < qry->nkids; i++)
        sql_node_add(p->arena, n, i == 0 ? items : qry->kids[i]);
    return n;
}

/* A copy of e with each scalar subquery replaced by the column of a
 * single-row side joined to the FROM. */
static int scalars(sq *q, const sql_node *e, sql_node **out)
{
    plan *p = q->p;
    *out = (sql_node *)e;
    if (!e || !has_sub(e)) return SL_OK;
    if (e->kind == SQL_SUBQUERY) {
        if (strcmp(e->s, "SCALAR")) return semi_anti(q, e, 0, out);
        const sql_node *qry = sql_kid(e, 1);
        const sql_node *items = qry->kind == SQL_SELECT ? sql_kid(qry, 0) : NULL;
        if (!items || items->nkids != 1 || items->kids[0]->kids[0]->kind == SQL_STAR)
            return PERR(e, "a scalar subquery selects one column");
        int aggregate = has_agg_call(items->kids[0]->kids[0]);
        if (sql_kid(qry, 3) || (qry->flags & SQL_F_DISTINCT) ||
            (!aggregate && (!sql_kid(qry, 1) || sql_kid(qry, 4))))
            return PERR(e, "a scalar subquery with GROUP BY, DISTINCT or without FROM is not "
                        "supported yet (an aggregate without GROUP BY, or a SELECT ... FROM ... "
                        "WHERE giving at most one row, is)");
        if (!aggregate) qry = single_value(p, qry);
        if (sql_kid(qry, 1)) {
            corr c;
            if (pair_conditions(q, e)) return vgen_scalar(q, e, qry, out);
            int rc = correlate(q, qry, e, &c, 0, 0);
            if (rc == SL_ERR) return SL_ERR;
            if (rc == SL_OK) {
                rc = correlated_scalar(q, e, qry, &c, out);
                corr_free(&c);
                return rc;
            }
        }
        char a[32];
        snprintf(a, sizeof a, "__sq%d", ++q->n);
        q->from = join(p, e, "LEFT", q->from, from_query(p, e, (sql_node *)qry, a, "__v"),
                       and_all(p, e, NULL, 0), 1);
        *out = col(p, e, a, "__v");
        return SL_OK;
    }
    sql_node *n = sql_node_like(p->arena, e);
    for (int i = 0; i < e->nkids; i++) {
        sql_node *k;
        if (scalars(q, e->kids[i], &k) != SL_OK) return SL_ERR;
        sql_node_add(p->arena, n, k);
    }
    *out = n;
    return SL_OK;
}

/* The name of item i of a SELECT (`cols`: the column aliases given to it), NULL
 * for a star. */
static const char *item_name(plan *p, const sql_node *it, int i, const sql_node *cols)
{
    if (cols && i < cols->nkids) return cols->kids[i]->s;
    if (it->s) return it->s;
    const sql_node *e = sql_kid(it, 0);
    if (e->kind == SQL_STAR) return NULL;
    if (e->kind == SQL_COL) return e->s;
    char nm[32];
    snprintf(nm, sizeof nm, "EXPR$%d", i);
    return astr(p, nm);
}

static int has_lateral(const sql_node *f)
{
    if (!f) return 0;
    if (f->kind == SQL_FROM_QUERY) return (f->flags & SQL_F_LATERAL) != 0;
    if (f->kind != SQL_FROM_JOIN) return 0;
    return has_lateral(sql_kid(f, 0)) || has_lateral(sql_kid(f, 1));
}

/* One join step l <kind> JOIN LATERAL (SELECT ... FROM s WHERE s.c = l.c AND ...)
 * [ON cond]: a join of that kind with the subquery's rows and correlation
 * columns, on the correlation equalities. An aggregate is grouped by them, as
 * Flink 2.3 decorrelates it: a row of l without rows to aggregate meets no
 * group, so LEFT JOIN LATERAL gives it NULLs (COUNT too, not SQL's 0) and a
 * comma, CROSS or INNER JOIN LATERAL drops it. */
static int lateral_step(sq *q, const sql_node *f, const sql_node *l, const sql_node *r,
                        const sql_node **out)
{
    plan *p = q->p;
    const sql_node *qry = sql_kid(r, 0), *cols = sql_kid(r, 1);
    if (!r->s2) return PERR(r, "LATERAL (query) needs an alias: LATERAL (SELECT ...) AS t");
    if (qry->kind != SQL_SELECT || (qry->flags & SQL_F_DISTINCT) || sql_kid(qry, 3) ||
        sql_kid(qry, 4) || !sql_kid(qry, 1))
        return PERR(r, "LATERAL (query): Sluice decorrelates a SELECT ... FROM ... WHERE, with "
                    "aggregates or without, not GROUP BY, HAVING, DISTINCT or set operations");
    const sql_node *items = sql_kid(qry, 0);
    int agg = 0;
    for (int i = 0; i < items->nkids; i++) {
        const sql_node *e = sql_kid(items->kids[i], 0);
        if (e->kind == SQL_STAR) return PERR(items->kids[i], "LATERAL (query): name its columns "
                                             "instead of *");
        if (has_agg_call(e)) agg = 1;
    }
    if (cols && cols->nkids != items->nkids)
        return PERR(cols, "LATERAL (query) AS %s: %d column names for %d columns", r->s2,
                    cols->nkids, items->nkids);
    leaves outer = {0};
    leaves_of(p, l, &outer);
    const leaves *saved = q->outer;
    q->outer = &outer;
    sql_node tag = {.kind = SQL_SUBQUERY, .s = "LATERAL", .line = r->line, .col = r->col};
    sql_node_add(p->arena, &tag, NULL);
    sql_node_add(p->arena, &tag, (sql_node *)qry);
    corr c;
    int rc;
    if (pair_conditions(q, &tag)) {
        rc = vgen_lateral(q, f, l, r, agg, out);
        q->outer = saved;
        free(outer.l);
        return rc;
    }
    rc = correlate(q, qry, &tag, &c, 0, 0);
    q->outer = saved;
    free(outer.l);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_DONE) { /* not correlated: an ordinary join (a global aggregate on a constant key) */
        sql_node *plain = mk(p, SQL_FROM_QUERY, r);
        *plain = *r;
        plain->flags &= ~SQL_F_LATERAL;
        const sql_node *on = sql_kid(f, 2);
        *out = join(p, f, f->s && strcasecmp(f->s, "CROSS") ? f->s : "INNER", l, plain,
                    (sql_node *)(on ? on : agg ? and_all(p, f, NULL, 0) : NULL), agg && !on);
        return SL_OK;
    }
    for (int i = 0; i < c.n; i++)
        if (key_col(p, c.out_e[i], &tag) != SL_OK) {
            corr_free(&c);
            return SL_ERR;
        }
    sql_node *nitems = mk(p, SQL_LIST, qry), *group = agg ? mk(p, SQL_LIST, qry) : NULL;
    for (int i = 0; i < items->nkids; i++)
        sql_node_add(p->arena, nitems, mkitem(p, sql_kid(items->kids[i], 0),
                                              item_name(p, items->kids[i], i, cols)));
    sql_node **on = sl_calloc((size_t)c.n + 1, sizeof *on);
    for (int i = 0; i < c.n; i++) {
        char kn[16];
        snprintf(kn, sizeof kn, "__j%d", i);
        sql_node_add(p->arena, nitems, mkitem(p, (sql_node *)c.in_e[i], kn));
        if (group) sql_node_add(p->arena, group, (sql_node *)c.in_e[i]);
        on[i] = sqlp_binop(p, f, "=", (sql_node *)c.out_e[i], col(p, f, r->s2, kn));
    }
    int non = c.n;
    const sql_node *won = sql_kid(f, 2);
    if (won && !(won->kind == SQL_BOOL && (won->flags & SQL_F_TRUE))) on[non++] = (sql_node *)won;
    sql_node *g = select_of(p, qry, 0, nitems, c.from,
                            c.nlocal ? and_all(p, qry, c.local, c.nlocal) : NULL, group);
    const char *kind = f->s && strcasecmp(f->s, "CROSS") ? f->s : "INNER";
    *out = join(p, f, kind, l, from_query(p, r, g, r->s2, NULL), and_all(p, f, on, non), 0);
    free(on);
    corr_free(&c);
    return SL_OK;
}

/* LATERAL (SELECT *, t.* ... FROM ...) with its stars spelt out as the
 * columns of the subquery's tables (known from the catalog or a column list),
 * qualified by their aliases; *out is f with such subqueries replaced. */
static int lateral_stars(plan *p, const sql_node *f, const sql_node **out)
{
    *out = f;
    if (!f) return SL_OK;
    if (f->kind == SQL_FROM_JOIN) {
        const sql_node *l, *r;
        if (lateral_stars(p, sql_kid(f, 0), &l) != SL_OK ||
            lateral_stars(p, sql_kid(f, 1), &r) != SL_OK)
            return SL_ERR;
        if (l == sql_kid(f, 0) && r == sql_kid(f, 1)) return SL_OK;
        sql_node *j = sql_node_like(p->arena, f);
        for (int i = 0; i < f->nkids; i++)
            sql_node_add(p->arena, j, i == 0 ? (sql_node *)l : i == 1 ? (sql_node *)r : f->kids[i]);
        *out = j;
        return SL_OK;
    }
    if (f->kind != SQL_FROM_QUERY || !(f->flags & SQL_F_LATERAL)) return SL_OK;
    const sql_node *qry = sql_kid(f, 0);
    if (qry->kind != SQL_SELECT) return SL_OK;
    const sql_node *items = sql_kid(qry, 0);
    int star = 0;
    for (int i = 0; i < items->nkids; i++)
        if (sql_kid(items->kids[i], 0)->kind == SQL_STAR) star = 1;
    if (!star) return SL_OK;
    leaves in = {0};
    leaves_of(p, sql_kid(qry, 1), &in);
    sql_node *nitems = mk(p, SQL_LIST, items);
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < items->nkids; i++) {
        const sql_node *it = items->kids[i], *e = sql_kid(it, 0);
        if (e->kind != SQL_STAR) {
            sql_node_add(p->arena, nitems, (sql_node *)it);
            continue;
        }
        int found = 0;
        for (int k = 0; rc == SL_OK && k < in.n; k++) {
            const leaf *lf = &in.l[k];
            if (e->s && !(lf->alias && !strcasecmp(lf->alias, e->s))) continue;
            found = 1;
            if (!lf->alias || (!lf->t && !lf->cols) || (lf->t && lf->t->ncols == 0)) {
                rc = PERR(it, "LATERAL (query) selecting %s%s: name its columns instead (the "
                          "columns of %s are not known before planning)", e->s ? e->s : "",
                          e->s ? ".*" : "*", lf->alias ? lf->alias : "a table without alias");
                break;
            }
            int nc = lf->t ? lf->t->ncols : lf->cols->nkids;
            for (int c = 0; c < nc; c++)
                sql_node_add(p->arena, nitems,
                             mkitem(p, col(p, it, lf->alias, lf->t ? lf->t->cols[c].name
                                                                   : lf->cols->kids[c]->s), NULL));
        }
        if (rc == SL_OK && !found)
            rc = PERR(it, "unknown table or alias '%s' in LATERAL (query)", e->s);
    }
    free(in.l);
    if (rc != SL_OK) return rc;
    sql_node *nq = sql_node_like(p->arena, qry);
    for (int i = 0; i < qry->nkids; i++)
        sql_node_add(p->arena, nq, i == 0 ? nitems : qry->kids[i]);
    sql_node *nf = sql_node_like(p->arena, f);
    for (int i = 0; i < f->nkids; i++)
        sql_node_add(p->arena, nf, i == 0 ? nq : f->kids[i]);
    *out = nf;
    return SL_OK;
}

static int lateral_joins(sq *q, const sql_node *f, const sql_node **out)
{
    *out = f;
    if (f->kind == SQL_FROM_QUERY && (f->flags & SQL_F_LATERAL))
        return plan_err(q->p, f, "LATERAL (query) joins the tables before it: FROM t, LATERAL "
                        "(SELECT ... WHERE ... = t.c) AS x");
    if (f->kind != SQL_FROM_JOIN) return SL_OK;
    const sql_node *l;
    if (lateral_joins(q, sql_kid(f, 0), &l) != SL_OK) return SL_ERR;
    const sql_node *r = sql_kid(f, 1);
    if (r->kind == SQL_FROM_QUERY && (r->flags & SQL_F_LATERAL)) return lateral_step(q, f, l, r, out);
    if (l != sql_kid(f, 0))
        *out = join(q->p, f, f->s, l, (sql_node *)r, (sql_node *)sql_kid(f, 2), f->flags & SQL_F_ALL);
    return SL_OK;
}

/* Is `name` the alias of a LATERAL subquery of ls? */
static int lateral_named(const leaves *ls, const char *name)
{
    for (int k = 0; k < ls->n; k++)
        if (ls->l[k].lateral && ls->l[k].alias && !strcasecmp(ls->l[k].alias, name)) return 1;
    return 0;
}

/* SELECT * (and x.* of a LATERAL subquery x) over the FROM before the
 * rewrite: each of its tables' columns. */
static int expand_star(plan *p, const leaves *ls, const sql_node *items, sql_node **out)
{
    *out = (sql_node *)items;
    int star = 0;
    for (int i = 0; i < items->nkids; i++)
        if (items->kids[i]->kids[0]->kind == SQL_STAR &&
            (!items->kids[i]->kids[0]->s || lateral_named(ls, items->kids[i]->kids[0]->s)))
            star = 1;
    if (!star) return SL_OK;
    sql_node *n = mk(p, SQL_LIST, items);
    for (int i = 0; i < items->nkids; i++) {
        const sql_node *it = items->kids[i];
        const char *q = it->kids[0]->s;
        if (it->kids[0]->kind != SQL_STAR || (q && !lateral_named(ls, q))) {
            sql_node_add(p->arena, n, (sql_node *)it);
            continue;
        }
        for (int k = 0; k < ls->n; k++) {
            /* x.* of a LATERAL subquery x: its columns only */
            if (q && !(ls->l[k].alias && !strcasecmp(ls->l[k].alias, q))) continue;
            if (!ls->l[k].alias)
                return PERR(it, "SELECT * with a subquery in WHERE: give every table of FROM an "
                            "alias, or name the columns");
            if (ls->l[k].lateral) { /* its columns, not the correlation columns it gets */
                const sql_node *lq = sql_kid(ls->l[k].lateral, 0), *li = sql_kid(lq, 0);
                for (int c = 0; lq->kind == SQL_SELECT && c < li->nkids; c++) {
                    const char *nm = item_name(p, li->kids[c], c, ls->l[k].cols);
                    if (!nm)
                        return PERR(it, "SELECT * over a LATERAL subquery that selects *: name "
                                    "its columns");
                    sql_node_add(p->arena, n, mkitem(p, col(p, it, ls->l[k].alias, nm), NULL));
                }
                continue;
            }
            sql_node *s = mk(p, SQL_STAR, it);
            s->s = astr(p, ls->l[k].alias);
            sql_node *ni = mk(p, SQL_ITEM, it);
            sql_node_add(p->arena, ni, s);
            sql_node_add(p->arena, n, ni);
        }
    }
    *out = n;
    return SL_OK;
}

/* ---- HAVING with a subquery ------------------------------------------------------ */

/* The grouped query's columns: its GROUP BY expressions and the aggregate
 * calls of its items and HAVING, each once (by its text). */
typedef struct hcols {
    const sql_node **e;
    char **text;
    int n, ngroup;
} hcols;

static int hcols_find(const hcols *h, const char *t)
{
    for (int i = 0; i < h->n; i++)
        if (!strcmp(h->text[i], t)) return i;
    return -1;
}

static void hcols_add(hcols *h, const sql_node *e)
{
    char *t = sql_unparse(e);
    if (hcols_find(h, t) >= 0) {
        free(t);
        return;
    }
    h->e = sl_realloc(h->e, sizeof *h->e * (size_t)(h->n + 1));
    h->text = sl_realloc(h->text, sizeof *h->text * (size_t)(h->n + 1));
    h->e[h->n] = e;
    h->text[h->n++] = t;
}

/* TUMBLE(...), HOP(...), SESSION(...): a group window in GROUP BY */
static int is_group_window(const sql_node *e)
{
    return e && e->kind == SQL_FUNC && (!strcasecmp(e->s, "TUMBLE") || !strcasecmp(e->s, "HOP") ||
                                        !strcasecmp(e->s, "SESSION"));
}

/* TUMBLE_START(...) and the other auxiliary functions of a group window */
static int is_window_aux(const sql_node *e)
{
    if (!e || e->kind != SQL_FUNC) return 0;
    static const char *const w[] = {"TUMBLE_", "HOP_", "SESSION_"};
    static const char *const f[] = {"START", "END", "ROWTIME", "PROCTIME"};
    for (size_t i = 0; i < SL_ARRAY_LEN(w); i++) {
        size_t n = strlen(w[i]);
        if (strncasecmp(e->s, w[i], n)) continue;
        for (size_t j = 0; j < SL_ARRAY_LEN(f); j++)
            if (!strcasecmp(e->s + n, f[j])) return 1;
    }
    return 0;
}

/* The aggregate calls of e (and a group window's auxiliary calls), outside
 * the grouped query's columns already taken (a GROUP BY expression with a
 * subquery is one: its text is found whole). */
static void hcols_aggs(hcols *h, const sql_node *e)
{
    if (!e || e->kind == SQL_SELECT) return;
    char *t = sql_unparse(e);
    int found = hcols_find(h, t) >= 0;
    free(t);
    if (found) return;
    if (e->kind == SQL_SUBQUERY) { /* IN's operand is the grouped query's */
        hcols_aggs(h, sql_kid(e, 0));
        return;
    }
    if (e->kind == SQL_FUNC && (is_agg(e->s) || is_window_aux(e))) {
        hcols_add(h, e);
        return;
    }
    for (int i = 0; i < e->nkids; i++) hcols_aggs(h, e->kids[i]);
}

/* A copy of e reading the grouped query's columns from __h (not looking
 * into subqueries, whose names are their own). */
static sql_node *hcols_subst(plan *p, const hcols *h, const sql_node *e)
{
    if (!e) return NULL;
    if (e->kind == SQL_SELECT || e->kind == SQL_STAR) return (sql_node *)e;
    char *t = sql_unparse(e);
    int i = hcols_find(h, t);
    free(t);
    if (i < 0 && e->kind == SQL_SUBQUERY) {
        if (!sql_kid(e, 0)) return (sql_node *)e;
        sql_node *n = sql_node_like(p->arena, e);
        sql_node_add(p->arena, n, hcols_subst(p, h, sql_kid(e, 0)));
        for (int k = 1; k < e->nkids; k++) sql_node_add(p->arena, n, e->kids[k]);
        return n;
    }
    for (int k = 0; i < 0 && e->kind == SQL_COL && k < h->ngroup; k++) /* k and t.k alike */
        if (h->e[k]->kind == SQL_COL && !strcasecmp(h->e[k]->s, e->s) &&
            (!e->s2 || !h->e[k]->s2 || !strcasecmp(e->s2, h->e[k]->s2)))
            i = k;
    if (i >= 0) {
        char nm[16];
        snprintf(nm, sizeof nm, "__h%d", i);
        return col(p, e, "__h", nm);
    }
    sql_node *n = sql_node_like(p->arena, e);
    for (int k = 0; k < e->nkids; k++) sql_node_add(p->arena, n, hcols_subst(p, h, e->kids[k]));
    return n;
}

/* Does e have a subquery other than one of GROUP BY g's expressions (which
 * the grouped query computes before grouping)? */
static int has_sub_beyond(const sql_node *e, const sql_node *g)
{
    if (!e || !has_sub(e)) return 0;
    char *t = sql_unparse(e);
    int key = 0;
    for (int i = 0; g && i < g->nkids && !key; i++) {
        char *gt = sql_unparse(g->kids[i]);
        key = !strcmp(gt, t);
        free(gt);
    }
    free(t);
    if (key) return 0;
    if (e->kind == SQL_SUBQUERY) return 1;
    for (int i = 0; i < e->nkids; i++)
        if (has_sub_beyond(e->kids[i], g)) return 1;
    return 0;
}

/* An aggregating SELECT (GROUP BY, HAVING or an aggregate in its items)
 * whose HAVING or SELECT list has a subquery other than a GROUP BY
 * expression: the subquery reads the groups, so it is answered after them. */
static int needs_group_wrap(const sql_node *sel)
{
    const sql_node *items = sql_kid(sel, 0), *group = sql_kid(sel, 3), *having = sql_kid(sel, 4);
    int agg = group || having, beyond = has_sub(having);
    for (int i = 0; items && i < items->nkids; i++) {
        const sql_node *e = items->kids[i]->kids[0];
        if (has_agg_call(e)) agg = 1;
        if (has_sub_beyond(e, group)) beyond = 1;
    }
    return agg && beyond;
}

/* SELECT items FROM f WHERE w GROUP BY g HAVING h, with a subquery in h or
 * in the items, becomes
 * SELECT items' FROM (SELECT g.., aggs.. FROM f WHERE w GROUP BY g) __h
 * WHERE h', the group expressions and aggregates read from __h: the
 * subqueries are then ones of WHERE and the SELECT list, rewritten as above
 * (WHERE's own stay in the grouped query). A group window (GROUP BY
 * TUMBLE(ts, ...), ...) stays in the grouped query's GROUP BY and its
 * auxiliary calls (TUMBLE_START(...), ...) become columns of __h. */
/* The first of e's subqueries (not one of GROUP BY g's expressions) whose
 * query names a column of the grouped query's tables `ls`. */
static const sql_node *grouped_corr(plan *p, const leaves *ls, const sql_node *e,
                                    const sql_node *g)
{
    if (!e || !has_sub_beyond(e, g)) return NULL;
    if (e->kind == SQL_SUBQUERY) {
        const sql_node *qry = sql_kid(e, 1);
        if (qry && qry->kind == SQL_SELECT) {
            leaves in = {0};
            leaves_of(p, sql_kid(qry, 1), &in);
            sq tq = {.p = p, .outer = ls};
            int outer = 0;
            for (int i = 0; i < qry->nkids && !outer; i++)
                if (i != 1) outer = has_outer(&tq, &in, qry->kids[i]);
            free(in.l);
            if (outer) return e;
        }
        return grouped_corr(p, ls, sql_kid(e, 0), g);
    }
    for (int i = 0; i < e->nkids; i++) {
        const sql_node *c = grouped_corr(p, ls, e->kids[i], g);
        if (c) return c;
    }
    return NULL;
}

/* A group window's auxiliary call in e (not looking into subqueries). */
static const sql_node *first_window_aux(const sql_node *e)
{
    if (!e || e->kind == SQL_SUBQUERY || e->kind == SQL_SELECT) return NULL;
    if (is_window_aux(e)) return e;
    for (int i = 0; i < e->nkids; i++) {
        const sql_node *a = first_window_aux(e->kids[i]);
        if (a) return a;
    }
    return NULL;
}

static int group_wrap(plan *p, const sql_node *sel, const sql_node **out)
{
    const sql_node *items = sql_kid(sel, 0), *group = sql_kid(sel, 3), *having = sql_kid(sel, 4);
    /* a subquery reading the grouped rows' columns: Flink 2.3 plans none
     * (NullPointerException, ArrayIndexOutOfBoundsException or "implicit type
     * conversion between ... is not supported on join's condition now",
     * depending on the query) */
    leaves ls = {0};
    leaves_of(p, sql_kid(sel, 1), &ls);
    const sql_node *cs = grouped_corr(p, &ls, having, group);
    for (int i = 0; !cs && i < items->nkids; i++)
        cs = grouped_corr(p, &ls, items->kids[i]->kids[0], group);
    free(ls.l);
    if (cs)
        return PERR(cs, "a subquery in HAVING or in the SELECT list of an aggregation that "
                    "reads the grouped tables' columns is not supported (Flink 2.3 fails to "
                    "plan it: \"implicit type conversion ... is not supported on join's "
                    "condition now\" or an internal error)");
    hcols h = {0};
    int window = 0;
    for (int i = 0; group && i < group->nkids; i++) {
        if (group->kids[i]->kind == SQL_GSETS)
            return PERR(group->kids[i], "a subquery in HAVING or the SELECT list of a query "
                        "with GROUPING SETS, ROLLUP or CUBE is not supported");
        if (is_group_window(group->kids[i])) window = 1;
        else hcols_add(&h, group->kids[i]);
    }
    /* Flink 2.3's code generator has no auxiliary call there */
    const sql_node *aux = window ? first_window_aux(having) : NULL;
    for (int i = 0; window && !aux && i < items->nkids; i++)
        aux = first_window_aux(items->kids[i]->kids[0]);
    if (aux) {
        for (int i = 0; i < h.n; i++) free(h.text[i]);
        free(h.text);
        free(h.e);
        char up[32];
        snprintf(up, sizeof up, "%s", aux->s);
        for (char *c = up; *c; c++) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        return PERR(aux, "Unsupported call: %s(TIMESTAMP(3)) (Flink 2.3 plans a group window "
                    "with a subquery in HAVING or the SELECT list only without its auxiliary "
                    "functions)", up);
    }
    h.ngroup = h.n;
    for (int i = 0; i < items->nkids; i++) hcols_aggs(&h, items->kids[i]->kids[0]);
    hcols_aggs(&h, having);
    sql_node *inner_items = mk(p, SQL_LIST, sel);
    for (int i = 0; i < h.n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "__h%d", i);
        sql_node_add(p->arena, inner_items, mkitem(p, (sql_node *)h.e[i], nm));
    }
    sql_node *inner = mk(p, SQL_SELECT, sel);
    for (int i = 0; i < sel->nkids; i++)
        sql_node_add(p->arena, inner, i == 0 ? inner_items : i == 4 ? NULL : sel->kids[i]);
    sql_node *outer_items = mk(p, SQL_LIST, items);
    int rc = SL_OK;
    for (int i = 0; i < items->nkids && rc == SL_OK; i++) {
        const sql_node *it = items->kids[i];
        if (it->kids[0]->kind == SQL_STAR) {
            rc = PERR(it, "SELECT * with GROUP BY and a subquery in HAVING: name the columns");
            break;
        }
        const char *nm = item_name(p, it, i, NULL);
        sql_node_add(p->arena, outer_items, mkitem(p, hcols_subst(p, &h, it->kids[0]), nm));
    }
    if (rc == SL_OK) {
        *out = select_of(p, sel, 0, outer_items, from_query(p, sel, inner, "__h", NULL),
                         having ? hcols_subst(p, &h, having) : NULL, NULL);
        ((sql_node *)*out)->flags = sel->flags;
    }
    for (int i = 0; i < h.n; i++) free(h.text[i]);
    free(h.text);
    free(h.e);
    return rc;
}

/* ---- GROUP BY with a subquery ----------------------------------------------------- */

/* GROUP BY's expressions with a subquery, rewritten like the SELECT list's
 * (joins added to the FROM before the grouping; the expression then reads
 * their columns): the original text of each and what it became. */
typedef struct gkeys {
    char **text;
    sql_node **e;
    int n;
} gkeys;

static int group_keys(sq *q, const sql_node *group, sql_node **out, gkeys *gk)
{
    plan *p = q->p;
    sql_node *l = mk(p, SQL_LIST, group);
    for (int i = 0; i < group->nkids; i++) {
        const sql_node *g = group->kids[i];
        sql_node *e = (sql_node *)g;
        if (has_sub(g)) {
            if (g->kind == SQL_GSETS || is_group_window(g))
                return PERR(first_sub(g), "a subquery inside %s is not supported",
                            g->s);
            if (scalars(q, g, &e) != SL_OK) return SL_ERR;
            gk->text = sl_realloc(gk->text, sizeof *gk->text * (size_t)(gk->n + 1));
            gk->e = sl_realloc(gk->e, sizeof *gk->e * (size_t)(gk->n + 1));
            gk->text[gk->n] = sql_unparse(g);
            gk->e[gk->n++] = e;
        }
        sql_node_add(p->arena, l, e);
    }
    *out = l;
    return SL_OK;
}

/* A copy of e with each GROUP BY expression of gk (by its text) replaced by
 * what it became. */
static sql_node *gkeys_subst(plan *p, const gkeys *gk, const sql_node *e)
{
    if (!e || !has_sub(e)) return (sql_node *)e;
    char *t = sql_unparse(e);
    for (int i = 0; i < gk->n; i++)
        if (!strcmp(gk->text[i], t)) {
            free(t);
            return gk->e[i];
        }
    free(t);
    sql_node *n = sql_node_like(p->arena, e);
    for (int k = 0; k < e->nkids; k++) sql_node_add(p->arena, n, gkeys_subst(p, gk, e->kids[k]));
    return n;
}

/* ---- a subquery in a join's ON ----------------------------------------------------- */

/* An outer join's ON condition e with each scalar subquery (uncorrelated:
 * Flink 2.3 fails a correlated one) replaced by the column __v of it joined
 * to the join's left side *l on a constant key (a LEFT join: each row of *l
 * once, with the subquery's value or NULL -- the same rows, so the outer
 * join's answer is the same); *nscal counts them (the aliases __on<n>). IN
 * and EXISTS there are refused (Flink 2.3 fails them). */
static int on_scalars(plan *p, const sql_node *f, const sql_node *e, const sql_node **l,
                      sql_node **out, int *nscal)
{
    *out = (sql_node *)e;
    if (!e || !has_sub(e)) return SL_OK;
    if (e->kind == SQL_SUBQUERY) {
        if (strcmp(e->s, "SCALAR"))
            return PERR(e, "%s (subquery) in the ON clause of a %s JOIN is not supported (Flink "
                        "2.3 fails it too; in an inner join's ON it is)", what(e), f->s);
        const sql_node *qry = sql_kid(e, 1);
        const sql_node *items = qry->kind == SQL_SELECT ? sql_kid(qry, 0) : NULL;
        if (!items || items->nkids != 1 || items->kids[0]->kids[0]->kind == SQL_STAR)
            return PERR(e, "a scalar subquery selects one column");
        leaves jl = {0}, in = {0};
        leaves_of(p, f, &jl);
        leaves_of(p, sql_kid(qry, 1), &in);
        sq tmp = {.p = p, .outer = &jl};
        int named = 0;
        for (int i = 0; i < qry->nkids && !named; i++)
            if (i != 1) named = has_outer(&tmp, &in, qry->kids[i]);
        free(jl.l);
        free(in.l);
        if (named)
            return PERR(e, "a correlated scalar subquery in the ON clause of a %s JOIN is not "
                        "supported (Flink 2.3 fails it too; an uncorrelated one is)", f->s);
        if (qry->kind == SQL_SELECT && sql_kid(qry, 1) && !sql_kid(qry, 3) &&
            !(qry->flags & SQL_F_DISTINCT) && !has_agg_call(items->kids[0]->kids[0]))
            qry = single_value(p, qry);
        char a[32];
        snprintf(a, sizeof a, "__on%d", ++*nscal);
        *l = join(p, e, "LEFT", *l, from_query(p, e, (sql_node *)qry, a, "__v"),
                  and_all(p, e, NULL, 0), 1);
        *out = col(p, e, a, "__v");
        return SL_OK;
    }
    sql_node *n = sql_node_like(p->arena, e);
    for (int i = 0; i < e->nkids; i++) {
        sql_node *k;
        if (on_scalars(p, f, e->kids[i], l, &k, nscal) != SL_OK) return SL_ERR;
        sql_node_add(p->arena, n, k);
    }
    *out = n;
    return SL_OK;
}

/* f with the ON conditions of its inner joins that have a subquery taken
 * out into *lifted (for WHERE: the same rows, as an inner join's ON and
 * WHERE filter alike, also on the preserved side of a LEFT join); `inner`:
 * no outer join preserves rows above f other than as its left side. The
 * scalar subqueries in an outer join's ON are joined to its left side
 * (on_scalars; *nscal counts them). */
static int lift_on(plan *p, const sql_node *f, int inner, const sql_node **out, sql_node ***lifted,
                   int *n, int *nscal)
{
    *out = f;
    if (!f || f->kind != SQL_FROM_JOIN) return SL_OK;
    const sql_node *cond = sql_kid(f, 2);
    int is_inner = !f->s || !strcasecmp(f->s, "INNER") || !strcasecmp(f->s, "CROSS");
    int left = f->s && !strcasecmp(f->s, "LEFT");
    const sql_node *l, *r;
    if (lift_on(p, sql_kid(f, 0), inner && (is_inner || left), &l, lifted, n, nscal) != SL_OK ||
        lift_on(p, sql_kid(f, 1), inner && is_inner, &r, lifted, n, nscal) != SL_OK)
        return SL_ERR;
    sql_node *ncond = (sql_node *)cond;
    if (has_sub(cond) && !is_inner) {
        if (on_scalars(p, f, cond, &l, &ncond, nscal) != SL_OK) return SL_ERR;
    } else if (has_sub(cond)) {
        if (!inner)
            return PERR(first_sub(cond), "a subquery in the ON clause of a nested JOIN is not "
                        "supported (in an inner join's ON it is)");
        const sql_node **c = NULL;
        int nc = 0;
        conjuncts(cond, &c, &nc);
        sql_node **rest = sl_calloc((size_t)nc + 1, sizeof *rest);
        int nr = 0;
        for (int i = 0; i < nc; i++) {
            if (has_sub(c[i])) {
                *lifted = sl_realloc(*lifted, sizeof **lifted * (size_t)(*n + 1));
                (*lifted)[(*n)++] = (sql_node *)c[i];
            } else {
                rest[nr++] = (sql_node *)c[i];
            }
        }
        ncond = and_all(p, cond, rest, nr);
        free(rest);
        free(c);
    }
    if (l == sql_kid(f, 0) && r == sql_kid(f, 1) && ncond == cond) return SL_OK;
    sql_node *j = sql_node_like(p->arena, f);
    sql_node_add(p->arena, j, (sql_node *)l);
    sql_node_add(p->arena, j, (sql_node *)r);
    sql_node_add(p->arena, j, ncond);
    for (int i = 3; i < f->nkids; i++) sql_node_add(p->arena, j, f->kids[i]);
    *out = j;
    return SL_OK;
}

int sql_subquery_rewrite(plan *p, const sql_node *sel, const sql_node **out)
{
    *out = sel;
    const sql_node *items = sql_kid(sel, 0), *from = sql_kid(sel, 1), *where = sql_kid(sel, 2);
    if (!from) return SL_OK;
    sql_node **lifted = NULL;
    int nlifted = 0, nscal = 0;
    const sql_node *nfrom;
    if (lift_on(p, from, 1, &nfrom, &lifted, &nlifted, &nscal) != SL_OK) {
        free(lifted);
        return SL_ERR;
    }
    if (nlifted || nscal) { /* the same SELECT with those conditions ANDed to its WHERE */
        sql_node *w = nlifted ? and_all(p, sel, lifted, nlifted) : NULL;
        if (where) w = w ? sqlp_binop(p, where, "AND", (sql_node *)where, w) : (sql_node *)where;
        free(lifted);
        sql_node *nitems = (sql_node *)items;
        if (nscal) { /* SELECT * names the tables of FROM, not the joined subqueries */
            leaves ls = {0};
            leaves_of(p, from, &ls);
            int rc = expand_star(p, &ls, items, &nitems);
            free(ls.l);
            if (rc != SL_OK) return rc;
        }
        sql_node *n = sql_node_like(p->arena, sel);
        for (int i = 0; i < sel->nkids; i++)
            sql_node_add(p->arena, n, i == 0 ? nitems : i == 1 ? (sql_node *)nfrom
                                              : i == 2 ? w : sel->kids[i]);
        return sql_subquery_rewrite(p, n, out);
    }
    if (needs_group_wrap(sel)) {
        const sql_node *w = NULL;
        if (group_wrap(p, sel, &w) != SL_OK) return SL_ERR;
        return sql_subquery_rewrite(p, w, out);
    }
    int lateral = has_lateral(from);
    if (lateral && lateral_stars(p, from, &from) != SL_OK) return SL_ERR;
    const sql_node *group = sql_kid(sel, 3);
    int gsub = has_sub(group);
    int sub = has_sub(where) || has_sub(items) || lateral || gsub, comma = has_comma(from);
    if (!sub && !comma) return SL_OK;
    const sql_node **w = NULL;
    int nw = 0;
    conjuncts(where, &w, &nw);
    leaves ls = {0};
    leaves_of(p, from, &ls);
    sq q = {.p = p, .from = from, .outer = &ls};
    int rc = SL_OK;
    conj cw = {w, nw, sl_calloc((size_t)nw + 1, 1)};
    if (comma) {
        int next = 0;
        q.from = comma_joins(p, from, &ls, &cw, &next);
    }
    sql_node *nitems = (sql_node *)items;
    if (sub) rc = expand_star(p, &ls, items, &nitems);
    if (rc == SL_OK && lateral) rc = lateral_joins(&q, q.from, &q.from);
    q.base = q.from;
    for (int i = 0; rc == SL_OK && i < nw; i++) {
        if (cw.used[i]) continue;
        const sql_node *c = w[i];
        int neg = 0;
        if (c->kind == SQL_UNOP && !strcmp(c->s, "NOT") && c->kids[0]->kind == SQL_SUBQUERY) {
            neg = 1;
            c = c->kids[0];
        }
        if (c->kind == SQL_SUBQUERY && strcmp(c->s, "SCALAR")) {
            rc = semi_anti(&q, c, neg, NULL);
            continue;
        }
        sql_node *nc;
        if ((rc = scalars(&q, w[i], &nc)) == SL_OK) keep(&q, nc);
    }
    gkeys gk = {0};
    sql_node *ngroup = (sql_node *)group;
    if (rc == SL_OK && gsub) rc = group_keys(&q, group, &ngroup, &gk);
    if (rc == SL_OK && nitems != NULL && has_sub(nitems)) {
        sql_node *l = mk(p, SQL_LIST, items);
        for (int i = 0; rc == SL_OK && i < nitems->nkids; i++) {
            const sql_node *it = nitems->kids[i];
            sql_node *e;
            if ((rc = scalars(&q, gkeys_subst(p, &gk, it->kids[0]), &e)) != SL_OK) break;
            sql_node *ni = mk(p, SQL_ITEM, it);
            /* the item keeps the name it had: the subquery's text is no name */
            ni->s = it->s ? it->s : NULL;
            if (!ni->s && it->kids[0]->kind != SQL_COL) {
                char nm[32];
                snprintf(nm, sizeof nm, "EXPR$%d", i);
                ni->s = astr(p, nm);
            }
            sql_node_add(p->arena, ni, e);
            sql_node_add(p->arena, l, ni);
        }
        nitems = l;
    }
    if (rc == SL_OK) {
        sql_node *n = mk(p, SQL_SELECT, sel);
        n->flags = sel->flags;
        n->s = sel->s;
        n->s2 = sel->s2;
        for (int i = 0; i < sel->nkids; i++) {
            const sql_node *k = sel->kids[i];
            if (i == 0) k = nitems;
            else if (i == 1) k = q.from;
            else if (i == 2) k = q.nkeep ? and_all(p, sel, q.keep, q.nkeep) : NULL;
            else if (i == 3) k = ngroup;
            sql_node_add(p->arena, n, (sql_node *)k);
        }
        *out = n;
    }
    for (int i = 0; i < gk.n; i++) free(gk.text[i]);
    free(gk.text);
    free(gk.e);
    free(q.keep);
    free(cw.used);
    free(w);
    free(ls.l);
    return rc;
}
