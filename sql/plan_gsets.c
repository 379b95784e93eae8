/*
 * plan_gsets.c -- GROUP BY GROUPING SETS, ROLLUP and CUBE, planned as Flink
 * plans them: Expand, then one aggregate.
 *
 * sql_gsets_of reads GROUP BY's items (grammar.y's groupitem: expressions
 * and SQL_GSETS nodes, nested) into the distinct group expressions and the
 * list of grouping sets over them, each a bitmap of the expressions it
 * holds. GROUP BY's items multiply (GROUP BY a, ROLLUP(b, c) is the sets of
 * ROLLUP each with a); GROUPING SETS concatenates its elements' sets;
 * ROLLUP(a, b) is (a, b), (a), (); CUBE(a, b) is (a, b), (a), (b), (); an
 * element (a, b) -- the parser's ROW -- is one composite element. A set
 * repeated keeps its place, as in Flink: its rows come out once per
 * occurrence, told apart by GROUP_ID().
 *
 * planner.c's plan_aggregate then pre-projects each group expression into a
 * column of its own (an aggregate's argument keeps the value a set nulls),
 * puts an `expand` vertex (operators/expand.c) after it that turns each row
 * into one row per set with the keys outside the set NULL and the set's id
 * in the column $e, and groups by the keys and $e. The id of set s is
 * (the number of earlier equal sets << n) | (the bitmap of the n expressions
 * it leaves out), so equal sets stay apart and GROUPING(...), GROUPING_ID(...)
 * and GROUP_ID() are CASE expressions over $e, written here
 * (sql_gsets_functions) into the SELECT list and HAVING after their
 * arguments were rewritten to the aggregate's key columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sl.h"
#include "sql_int.h"
#include "plan_int.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

#define GSETS_MAX_EXPRS 62   /* a set is a bitmap in a uint64_t, the id one bit per expression */
#define GSETS_MAX_SETS 4096  /* CUBE of 12 expressions */

void sql_gsets_free(sql_gsets *g)
{
    if (!g) return;
    free(g->exprs);
    free(g->sets);
    free(g->ids);
    memset(g, 0, sizeof *g);
}

/* The index of expression e among g's (added on first use); -1 after an error. */
static int expr_index(plan *p, sql_gsets *g, const sql_node *e)
{
    char *t = sql_unparse(e);
    for (int i = 0; i < g->nexprs; i++) {
        char *u = sql_unparse(g->exprs[i]);
        int same = !strcmp(t, u);
        free(u);
        if (same) {
            free(t);
            return i;
        }
    }
    free(t);
    if (g->nexprs == GSETS_MAX_EXPRS) {
        PERR(e, "GROUP BY: more than %d distinct expressions in grouping sets", GSETS_MAX_EXPRS);
        return -1;
    }
    g->exprs = sl_realloc(g->exprs, sizeof *g->exprs * (size_t)(g->nexprs + 1));
    g->exprs[g->nexprs] = e;
    return g->nexprs++;
}

/* A list of sets (bitmaps), grown by push. */
typedef struct setlist {
    uint64_t *v;
    int n;
} setlist;

static int push(plan *p, const sql_node *at, setlist *l, uint64_t s)
{
    if (l->n == GSETS_MAX_SETS)
        return PERR(at, "GROUP BY: more than %d grouping sets", GSETS_MAX_SETS);
    l->v = sl_realloc(l->v, sizeof *l->v * (size_t)(l->n + 1));
    l->v[l->n++] = s;
    return SL_OK;
}

/* The bitmap of one element of ROLLUP / CUBE / GROUPING SETS: an expression,
 * or (a, b) -- the parser's ROW -- as the set of its fields. */
static int element(plan *p, sql_gsets *g, const sql_node *e, uint64_t *bits)
{
    *bits = 0;
    int composite = e->kind == SQL_FUNC && !strcasecmp(e->s, "ROW");
    for (int i = 0; i < (composite ? e->nkids : 1); i++) {
        const sql_node *x = composite ? e->kids[i] : e;
        if (x->kind == SQL_GSETS)
            return PERR(x, "%s inside %s: only GROUPING SETS nests grouping sets", x->s,
                        composite ? "(...)" : "ROLLUP or CUBE");
        int k = expr_index(p, g, x);
        if (k < 0) return SL_ERR;
        *bits |= (uint64_t)1 << k;
    }
    return SL_OK;
}

/* The sets of one GROUP BY item into *out. */
static int item_sets(plan *p, sql_gsets *g, const sql_node *it, setlist *out)
{
    if (it->kind != SQL_GSETS) {
        uint64_t b;
        if (element(p, g, it, &b) != SL_OK) return SL_ERR;
        return push(p, it, out, b);
    }
    if (!strcmp(it->s, "()")) return push(p, it, out, 0);
    if (!strcmp(it->s, "GROUPING SETS")) {
        for (int i = 0; i < it->nkids; i++)
            if (item_sets(p, g, it->kids[i], out) != SL_OK) return SL_ERR;
        return SL_OK;
    }
    int n = it->nkids;
    uint64_t *el = sl_calloc((size_t)n + 1, sizeof *el);
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < n; i++) rc = element(p, g, it->kids[i], &el[i]);
    if (rc == SL_OK && !strcmp(it->s, "ROLLUP")) {
        for (int k = n; rc == SL_OK && k >= 0; k--) { /* (e1..en), (e1..en-1), ..., () */
            uint64_t b = 0;
            for (int i = 0; i < k; i++) b |= el[i];
            rc = push(p, it, out, b);
        }
    } else if (rc == SL_OK) { /* CUBE: every subset, the fullest first, as Flink lists them */
        if (n > 12) rc = PERR(it, "CUBE of more than 12 elements (%d grouping sets)", 1 << 12);
        for (int m = (1 << n) - 1; rc == SL_OK && m >= 0; m--) {
            uint64_t b = 0;
            for (int i = 0; i < n; i++)
                if (m & (1 << (n - 1 - i))) b |= el[i];
            rc = push(p, it, out, b);
        }
    }
    free(el);
    return rc;
}

int sql_gsets_of(plan *p, const sql_node *group, sql_gsets *g)
{
    memset(g, 0, sizeof *g);
    int any = 0;
    for (int i = 0; group && i < group->nkids; i++) any |= group->kids[i]->kind == SQL_GSETS;
    if (!any) { /* a plain GROUP BY: its items, for GROUPING's check (no sets, no limit) */
        g->exprs = sl_calloc((size_t)(group ? group->nkids : 0) + 1, sizeof *g->exprs);
        for (int i = 0; group && i < group->nkids; i++) g->exprs[g->nexprs++] = group->kids[i];
        return SL_DONE;
    }
    setlist acc = {0}; /* the product of the items so far */
    int rc = push(p, group, &acc, 0);
    for (int i = 0; rc == SL_OK && i < group->nkids; i++) {
        setlist one = {0}, prod = {0};
        rc = item_sets(p, g, group->kids[i], &one);
        for (int a = 0; rc == SL_OK && a < acc.n; a++)
            for (int b = 0; rc == SL_OK && b < one.n; b++) rc = push(p, group, &prod, acc.v[a] | one.v[b]);
        free(one.v);
        free(acc.v);
        acc = prod;
    }
    if (rc != SL_OK) {
        free(acc.v);
        sql_gsets_free(g);
        return SL_ERR;
    }
    g->sets = acc.v;
    g->nsets = acc.n;
    g->ids = sl_calloc((size_t)g->nsets + 1, sizeof *g->ids);
    uint64_t all = g->nexprs ? (((uint64_t)1 << g->nexprs) - 1) : 0;
    for (int s = 0; s < g->nsets; s++) {
        int64_t dup = 0;
        for (int t = 0; t < s; t++) dup += g->sets[t] == g->sets[s];
        if (dup >= (int64_t)1 << (62 - g->nexprs)) {
            PERR(group, "GROUP BY: a grouping set repeated %lld times, too often beside %d "
                 "expressions", (long long)dup + 1, g->nexprs);
            sql_gsets_free(g);
            return SL_ERR;
        }
        g->ids[s] = (int64_t)((uint64_t)dup << g->nexprs | (all & ~g->sets[s]));
    }
    return SL_OK;
}

/* ---- GROUPING(...), GROUPING_ID(...), GROUP_ID() --------------------------- */

static int is_gfunc(const sql_node *e)
{
    return e && e->kind == SQL_FUNC && e->s &&
           (!strcasecmp(e->s, "GROUPING") || !strcasecmp(e->s, "GROUPING_ID") ||
            !strcasecmp(e->s, "GROUP_ID"));
}

int sql_gsets_check_args(plan *p, const sql_gsets *g, const sql_node *e, int window)
{
    if (!e) return SL_OK;
    if (is_gfunc(e)) {
        int gid = !strcasecmp(e->s, "GROUP_ID");
        if (gid && e->nkids) return PERR(e, "GROUP_ID() takes no arguments");
        if (!gid && !e->nkids) return PERR(e, "%s takes at least one argument", e->s);
        if (e->flags & (SQL_F_DISTINCT | SQL_F_STAR_ARG | SQL_F_FILTER))
            return PERR(e, "%s takes grouped expressions only", e->s);
        for (int i = 0; i < e->nkids; i++) {
            const sql_node *a = e->kids[i];
            if (window && a->kind == SQL_COL &&
                (!strcasecmp(a->s, "window_start") || !strcasecmp(a->s, "window_end")))
                continue;
            char *t = sql_unparse(a);
            int found = 0;
            for (int k = 0; g && k < g->nexprs && !found; k++) {
                char *u = sql_unparse(g->exprs[k]);
                found = !strcmp(t, u);
                free(u);
            }
            free(t);
            if (!found) return PERR(a, "Argument to GROUPING operator must be a grouped expression");
        }
        return SL_OK;
    }
    for (int i = 0; i < e->nkids; i++)
        if (sql_gsets_check_args(p, g, e->kids[i], window) != SL_OK) return SL_ERR;
    return SL_OK;
}

static sql_node *num(plan *p, const sql_node *at, int64_t v)
{
    sql_node *n = sql_node_new(p->arena, SQL_NUM, at->line, at->col);
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    n->s = sql_arena_strndup(p->arena, buf, strlen(buf));
    return n;
}

static sql_node *as_bigint(plan *p, const sql_node *at, sql_node *x)
{
    sql_node *c = sql_node_new(p->arena, SQL_CAST, at->line, at->col);
    c->s = "BIGINT";
    sql_node_add(p->arena, c, x);
    return c;
}

/* The value of call e (arguments rewritten to key columns) in set s. */
static int64_t gvalue(const sql_gsets *g, const sql_node *e, int s, char **keys)
{
    if (!strcasecmp(e->s, "GROUP_ID")) return (int64_t)((uint64_t)g->ids[s] >> g->nexprs);
    int64_t v = 0;
    for (int i = 0; i < e->nkids; i++) {
        const sql_node *a = e->kids[i];
        int out = 0; /* window_start / window_end are in every set */
        for (int k = 0; a->kind == SQL_COL && k < g->nexprs; k++)
            if (keys[k] && !strcmp(a->s, keys[k])) out = !(g->sets[s] >> k & 1);
        v = v << 1 | out;
    }
    return v;
}

int sql_gsets_functions(plan *p, const sql_gsets *g, char **keys, const char *idcol, sql_node **e)
{
    sql_node *x = *e;
    if (!x) return SL_OK;
    if (is_gfunc(x) && !idcol) { /* a plain GROUP BY: one set, every expression in it */
        *e = as_bigint(p, x, num(p, x, 0));
        return SL_OK;
    }
    if (is_gfunc(x)) {
        sql_node *c = sql_node_new(p->arena, SQL_CASE, x->line, x->col);
        sql_node *op = sql_node_new(p->arena, SQL_COL, x->line, x->col);
        op->s = sql_arena_strndup(p->arena, idcol, strlen(idcol));
        sql_node *whens = sql_node_new(p->arena, SQL_LIST, x->line, x->col);
        for (int s = 0; s < g->nsets; s++) {
            sql_node *w = sql_node_new(p->arena, SQL_WHEN, x->line, x->col);
            sql_node_add(p->arena, w, num(p, x, g->ids[s]));
            sql_node_add(p->arena, w, num(p, x, gvalue(g, x, s, keys)));
            sql_node_add(p->arena, whens, w);
        }
        sql_node_add(p->arena, c, op);
        sql_node_add(p->arena, c, whens);
        sql_node_add(p->arena, c, NULL);
        *e = as_bigint(p, x, c);
        return SL_OK;
    }
    for (int i = 0; i < x->nkids; i++)
        if (sql_gsets_functions(p, g, keys, idcol, &x->kids[i]) != SL_OK) return SL_ERR;
    return SL_OK;
}

void sql_gsets_expand_vertex(plan *p, const sql_gsets *g, char **keys, const char *idcol, rel *in)
{
    json_t *cfg = json_object(), *jk = json_array(), *js = json_array(), *ji = json_array();
    for (int k = 0; k < g->nexprs; k++)
        if (keys[k]) json_array_append_new(jk, json_string(keys[k]));
    for (int s = 0; s < g->nsets; s++) {
        json_t *set = json_array();
        for (int k = 0; k < g->nexprs; k++)
            if (keys[k] && (g->sets[s] >> k & 1)) json_array_append_new(set, json_string(keys[k]));
        json_array_append_new(js, set);
        json_array_append_new(ji, json_integer(g->ids[s]));
    }
    json_object_set_new(cfg, "keys", jk);
    json_object_set_new(cfg, "sets", js);
    json_object_set_new(cfg, "ids", ji);
    json_object_set_new(cfg, "id-column", json_string(idcol));
    char *id = add_vertex(p, "expand", "expand", NULL, cfg, NULL, 0);
    add_edge(p, in->vid, id, NULL, NULL, 0);
    free(in->vid);
    in->vid = id;
    for (int k = 0; k < g->nexprs; k++) {
        int ci = keys[k] ? sl_schema_find(&in->sch, keys[k]) : -1;
        if (ci >= 0) in->sch.fields[ci].dt = sl_dtype_nullable(in->sch.fields[ci].dt, false);
    }
    sl_schema_add(&in->sch, idcol, SL_T_BIGINT);
}
