/*
 * plan_groupwin.c -- Flink's group-window functions (the form older than the
 * window TVFs):
 *
 *   SELECT k, TUMBLE_START(ts, INTERVAL '1' MINUTE) AS ws, COUNT(*)
 *   FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), k
 *
 * with TUMBLE(ts, size), HOP(ts, slide, size), SESSION(ts, gap) in GROUP BY
 * and the auxiliary functions <W>_START, <W>_END, <W>_ROWTIME and
 * <W>_PROCTIME in the SELECT list and HAVING. There is no second window
 * engine: such a SELECT is rewritten into the window TVF aggregation the
 * planner already has (planner.c's plan_aggregate onto the `window`
 * operator), before it is planned:
 *
 *   FROM t                       -> FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))
 *   GROUP BY TUMBLE(ts, size), k -> GROUP BY window_start, window_end, k
 *   TUMBLE_START(ts, size)       -> window_start
 *   TUMBLE_END(ts, size)         -> window_end (exclusive)
 *   TUMBLE_ROWTIME(ts, size)     -> window_time (window_end - 1 ms, the
 *                                   result's event-time attribute)
 *   TUMBLE_PROCTIME(ts, size)    -> PROCTIME() on a processing-time window
 *                                   (the result's processing-time attribute);
 *                                   window_time on an event-time one, as Flink
 *
 * The FROM item is planned here first, once (to know its time attributes
 * and types for the checks), and left in the planner's cache of planned
 * FROM items (sqlp_joins_add) where the TVF aggregation picks it up, so it
 * may be a table, a view, a subquery (a cascade over TUMBLE_ROWTIME) or a
 * join. An unaliased auxiliary call keeps Flink's column name EXPR$i.
 * The checks and their messages are Flink's: an auxiliary call without the
 * same window call in GROUP BY, a window function outside GROUP BY, more
 * than one window, a window over a column that is no time attribute,
 * TUMBLE with an alignment, a rowtime from a processing-time window.
 * A group window's HOP size need not be a multiple of its slide; a HOP
 * TVF aggregation's must (sql_tvf_hop_check, Flink's rule for each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "parse.h"
#include "plan_int.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

typedef enum { GW_TUMBLE, GW_HOP, GW_SESSION } gw_kind;
typedef enum { AUX_NONE, AUX_START, AUX_END, AUX_ROWTIME, AUX_PROCTIME } gw_aux;

static const char *const gw_names[] = {"TUMBLE", "HOP", "SESSION"};
static const char *const aux_suffix[] = {"", "_START", "_END", "_ROWTIME", "_PROCTIME"};

/* The group window a SELECT groups by, once found. */
typedef struct groupwin {
    const sql_node *call; /* TUMBLE/HOP/SESSION(...) in GROUP BY, or NULL */
    gw_kind kind;
    int proctime;         /* the time column is a processing-time attribute */
    const rel *in;        /* the planned FROM item */
} groupwin;

/* Whether `name` is a window function (*aux = AUX_NONE) or one of its
 * auxiliary functions; its window in *kind. */
static int gw_name(const char *name, gw_kind *kind, gw_aux *aux)
{
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(gw_names[k]);
        if (strncasecmp(name, gw_names[k], n)) continue;
        for (int a = 0; a < 5; a++)
            if (!strcasecmp(name + n, aux_suffix[a])) {
                *kind = (gw_kind)k;
                *aux = (gw_aux)a;
                return 1;
            }
    }
    return 0;
}

static int is_window_call(const sql_node *e, gw_kind *kind)
{
    gw_aux aux;
    return e && e->kind == SQL_FUNC && gw_name(e->s, kind, &aux) && aux == AUX_NONE;
}

/* Whether the subtree mentions a window or auxiliary function (not inside
 * a nested query, which is its own SELECT). */
static int mentions(const sql_node *e)
{
    if (!e || e->kind == SQL_SELECT || e->kind == SQL_UNION || e->kind == SQL_WITH ||
        e->kind == SQL_LIMIT || e->kind == SQL_VALUES)
        return 0;
    gw_kind k;
    gw_aux a;
    if (e->kind == SQL_FUNC && gw_name(e->s, &k, &a)) return 1;
    for (int i = 0; i < e->nkids; i++)
        if (mentions(e->kids[i])) return 1;
    return 0;
}

static int is_window_col(const char *s)
{
    return !strcasecmp(s, "window_start") || !strcasecmp(s, "window_end") ||
           !strcasecmp(s, "window_time");
}

static sql_node *col(plan *p, const sql_node *at, const char *name)
{
    sql_node *n = sql_node_new(p->arena, SQL_COL, at->line, at->col);
    n->s = sql_arena_strndup(p->arena, name, strlen(name));
    return n;
}

/* Whether aux call e has the GROUP BY window's arguments: the same time
 * column (qualified or not, names in any case as columns are) and the same
 * intervals as written. */
static int same_args(const sql_node *e, const sql_node *call)
{
    if (e->nkids != call->nkids || (e->flags & (SQL_F_DISTINCT | SQL_F_STAR_ARG | SQL_F_FILTER)))
        return 0;
    for (int i = 0; i < e->nkids; i++) {
        const sql_node *x = e->kids[i], *y = call->kids[i];
        if (i == 0 && x->kind == SQL_COL && y->kind == SQL_COL) {
            if (strcasecmp(x->s, y->s)) return 0;
            continue;
        }
        char *a = sql_unparse(x), *b = sql_unparse(y);
        int same = !strcasecmp(a, b);
        free(a);
        free(b);
        if (!same) return 0;
    }
    return 1;
}

/* e with its auxiliary calls replaced by the window's columns (a copy of
 * the nodes on the way; subtrees without any are shared). `where`: e is the
 * WHERE clause, where no auxiliary function can be (the window does not
 * exist yet). */
static int rewrite_expr(plan *p, const groupwin *g, const sql_node *e, int where, sql_node **out)
{
    *out = (sql_node *)e;
    if (!e) return SL_OK;
    if (e->kind == SQL_COL && is_window_col(e->s))
        return PERR(e, "Column '%s' not found in any table (a query grouped by %s(...) names "
                    "the window's bounds %s_START(...) and %s_END(...))", e->s,
                    gw_names[g->kind], gw_names[g->kind], gw_names[g->kind]);
    if (!mentions(e)) return SL_OK;
    gw_kind kind;
    gw_aux aux;
    if (e->kind == SQL_FUNC && gw_name(e->s, &kind, &aux)) {
        if (aux == AUX_NONE)
            return PERR(e, "Group function '%s' can only appear in GROUP BY clause",
                        gw_names[kind]);
        if (kind != g->kind || !same_args(e, g->call))
            return PERR(e, "Call to auxiliary group function '%s%s' must have matching call to "
                        "group function '%s' in GROUP BY clause", gw_names[kind],
                        aux_suffix[aux], gw_names[kind]);
        if (where)
            return PERR(e, "%s%s cannot be used in WHERE: the window does not exist before "
                        "the aggregation (use HAVING)", gw_names[kind], aux_suffix[aux]);
        switch (aux) {
        case AUX_START: *out = col(p, e, "window_start"); break;
        case AUX_END: *out = col(p, e, "window_end"); break;
        case AUX_ROWTIME:
            if (g->proctime)
                return PERR(e, "A proctime window cannot provide a rowtime attribute.");
            *out = col(p, e, "window_time");
            break;
        case AUX_PROCTIME:
            if (g->proctime) {
                sql_node *f = sql_node_new(p->arena, SQL_FUNC, e->line, e->col);
                f->s = sql_arena_strndup(p->arena, "PROCTIME", 8);
                *out = f;
            } else {
                *out = col(p, e, "window_time"); /* Flink: the rowtime attribute */
            }
            break;
        case AUX_NONE: break;
        }
        return SL_OK;
    }
    sql_node *n = sql_node_like(p->arena, e);
    for (int i = 0; i < e->nkids; i++) {
        sql_node *k;
        if (rewrite_expr(p, g, e->kids[i], where, &k) != SL_OK) return SL_ERR;
        sql_node_add(p->arena, n, k);
    }
    *out = n;
    return SL_OK;
}

/* Without a window in GROUP BY: any window or auxiliary call is an error. */
static int refuse_stray(plan *p, const sql_node *e)
{
    if (!e || !mentions(e)) return SL_OK;
    gw_kind kind;
    gw_aux aux;
    if (e->kind == SQL_FUNC && gw_name(e->s, &kind, &aux)) {
        if (aux == AUX_NONE)
            return PERR(e, "Group function '%s' can only appear in GROUP BY clause",
                        gw_names[kind]);
        return PERR(e, "Call to auxiliary group function '%s%s' must have matching call to "
                    "group function '%s' in GROUP BY clause", gw_names[kind], aux_suffix[aux],
                    gw_names[kind]);
    }
    for (int i = 0; i < e->nkids; i++)
        if (refuse_stray(p, e->kids[i]) != SL_OK) return SL_ERR;
    return SL_OK;
}

/* The window call's own checks: its arguments, and its time column against
 * the planned input (a time attribute). */
static int check_call(plan *p, groupwin *g, const rel *in)
{
    const sql_node *c = g->call;
    int want = g->kind == GW_HOP ? 3 : 2;
    if (g->kind == GW_TUMBLE && c->nkids == 3)
        return PERR(c->kids[2], "TUMBLE window with alignment is not supported yet.");
    if (c->nkids != want || (c->flags & (SQL_F_DISTINCT | SQL_F_STAR_ARG | SQL_F_FILTER)))
        return PERR(c, "%s takes a time attribute and %s", gw_names[g->kind],
                    g->kind == GW_HOP ? "two intervals (slide, size)"
                    : g->kind == GW_TUMBLE ? "an interval (size)" : "an interval (gap)");
    for (int i = 1; i < c->nkids; i++)
        if (c->kids[i]->kind != SQL_INTERVAL)
            return PERR(c->kids[i], "%s: argument %d must be an interval literal such as "
                        "INTERVAL '10' SECOND", gw_names[g->kind], i + 1);
    const sql_node *t = c->kids[0];
    /* also a semi join's materialized ones, as Flink 2.3 plans them (rel.mrowtime) */
    if (t->kind == SQL_COL && (rel_is_attr(in, 1, t->s) ||
                               (in->mrowtime && !strcasecmp(t->s, in->mrowtime))))
        return SL_OK;
    if (t->kind == SQL_COL && (rel_is_attr(in, 0, t->s) ||
                               (in->mproctime && !strcasecmp(t->s, in->mproctime)))) {
        g->proctime = 1;
        return SL_OK;
    }
    if (t->kind == SQL_COL && check_cols(p, t, in) != SL_OK) return SL_ERR;
    sl_type ty;
    if (type_expr(p, t, &in->sch, &ty) != SL_OK) return SL_ERR;
    return PERR(t, "Window aggregate can only be defined over a time attribute column, but %s "
                "encountered.", ty == SL_T_TIMESTAMP ? "TIMESTAMP(3)" : sl_type_name(ty));
}

/* The window call of GROUP BY (the one, or an error for a second). */
static int find_call(plan *p, const sql_node *group, groupwin *g)
{
    for (int i = 0; group && i < group->nkids; i++) {
        gw_kind kind;
        const sql_node *e = group->kids[i];
        if (is_window_call(e, &kind)) {
            if (g->call) return PERR(e, "Only a single window group function may be used in GROUP BY");
            g->call = e;
            g->kind = kind;
        } else if (refuse_stray(p, e) != SL_OK) {
            return SL_ERR;
        }
    }
    return SL_OK;
}

/* The TVF aggregation's SELECT for sel, whose group window is g->call and
 * whose FROM item has been planned into g->in. */
static int rewrite_select(plan *p, groupwin *g, const sql_node *sel, const sql_node **out)
{
    const sql_node *items = sql_kid(sel, 0), *from = sql_kid(sel, 1), *where = sql_kid(sel, 2),
                   *group = sql_kid(sel, 3), *having = sql_kid(sel, 4);
    for (int i = 0; i < g->in->sch.n; i++)
        if (is_window_col(g->in->sch.fields[i].name))
            return PERR(g->call, "the input's column '%s' has the name of a column the window "
                        "aggregation adds; rename it (AS) before grouping by %s(...)",
                        g->in->sch.fields[i].name, gw_names[g->kind]);
    /* FROM TABLE(<W>(TABLE <from>, DESCRIPTOR(ts), intervals)) */
    sql_node *tvf = sql_node_new(p->arena, SQL_FROM_TVF, g->call->line, g->call->col);
    tvf->s = sql_arena_strndup(p->arena, gw_names[g->kind], strlen(gw_names[g->kind]));
    tvf->s2 = from->s2; /* qualified names keep working */
    sql_node_add(p->arena, tvf, (sql_node *)from);
    sql_node *desc = sql_node_new(p->arena, SQL_IDENT, g->call->kids[0]->line, g->call->kids[0]->col);
    desc->s = g->call->kids[0]->s;
    sql_node_add(p->arena, tvf, desc);
    sql_node *args = sql_node_new(p->arena, SQL_LIST, g->call->line, g->call->col);
    for (int i = 1; i < g->call->nkids; i++) sql_node_add(p->arena, args, g->call->kids[i]);
    sql_node_add(p->arena, tvf, args);
    sql_node_add(p->arena, tvf, NULL);
    /* GROUP BY window_start, window_end, the other keys */
    sql_node *ng = sql_node_new(p->arena, SQL_LIST, group->line, group->col);
    for (int i = 0; i < group->nkids; i++) {
        const sql_node *e = group->kids[i];
        if (e == g->call) {
            sql_node_add(p->arena, ng, col(p, e, "window_start"));
            sql_node_add(p->arena, ng, col(p, e, "window_end"));
        } else {
            sql_node *k;
            if (rewrite_expr(p, g, e, 0, &k) != SL_OK) return SL_ERR;
            sql_node_add(p->arena, ng, k);
        }
    }
    sql_node *ni = sql_node_new(p->arena, SQL_LIST, items->line, items->col);
    for (int i = 0; i < items->nkids; i++) {
        const sql_node *it = items->kids[i];
        sql_node *e;
        if (rewrite_expr(p, g, it->kids[0], 0, &e) != SL_OK) return SL_ERR;
        sql_node *n = sql_node_new(p->arena, SQL_ITEM, it->line, it->col);
        n->s = it->s;
        if (!n->s && e != it->kids[0] && it->kids[0]->kind != SQL_COL) {
            char nm[32]; /* an unaliased expression keeps its EXPR$i name */
            snprintf(nm, sizeof nm, "EXPR$%d", i);
            n->s = sql_arena_strndup(p->arena, nm, strlen(nm));
        }
        sql_node_add(p->arena, n, e);
        sql_node_add(p->arena, ni, n);
    }
    sql_node *nw, *nh;
    if (rewrite_expr(p, g, where, 1, &nw) != SL_OK) return SL_ERR;
    if (rewrite_expr(p, g, having, 0, &nh) != SL_OK) return SL_ERR;
    sql_node *ns = sql_node_new(p->arena, SQL_SELECT, sel->line, sel->col);
    ns->flags = sel->flags;
    sql_node_add(p->arena, ns, ni);
    sql_node_add(p->arena, ns, tvf);
    sql_node_add(p->arena, ns, nw);
    sql_node_add(p->arena, ns, ng);
    sql_node_add(p->arena, ns, nh);
    for (int i = 5; i < sel->nkids; i++) sql_node_add(p->arena, ns, sel->kids[i]);
    *out = ns;
    return SL_OK;
}

int sql_groupwin_rewrite(plan *p, const sql_node *sel, const sql_node **out)
{
    *out = sel;
    const sql_node *items = sql_kid(sel, 0), *from = sql_kid(sel, 1), *where = sql_kid(sel, 2),
                   *group = sql_kid(sel, 3), *having = sql_kid(sel, 4);
    if (!mentions(items) && !mentions(where) && !mentions(group) && !mentions(having))
        return SL_OK;
    groupwin g = {0};
    if (find_call(p, group, &g) != SL_OK) return SL_ERR;
    if (!g.call) {
        if (refuse_stray(p, items) != SL_OK || refuse_stray(p, where) != SL_OK ||
            refuse_stray(p, having) != SL_OK)
            return SL_ERR;
        return SL_OK;
    }
    if (!from) return PERR(g.call, "%s(...) in GROUP BY needs a FROM clause", gw_names[g.kind]);
    if (from->kind == SQL_FROM_TVF)
        return PERR(g.call, "%s(...) in GROUP BY over a window TVF: group by window_start, "
                    "window_end instead", gw_names[g.kind]);
    /* the FROM item, planned once: the TVF aggregation finds it in the cache */
    rel in = {0};
    const rel *done = sqlp_joins_find(p, from);
    if (!done) {
        if (plan_from(p, from, &in) != SL_OK) return SL_ERR;
        sqlp_joins_add(p, from, &in);
        rel_free(&in);
        done = sqlp_joins_find(p, from);
    }
    g.in = done;
    if (check_call(p, &g, done) != SL_OK) return SL_ERR;
    return rewrite_select(p, &g, sel, out);
}

int sql_tvf_offset_check(plan *p, const sql_node *tvf)
{
    const sql_node *args = sql_kid(tvf, 2);
    if (strcasecmp(tvf->s, "TUMBLE") || !args || args->nkids != 2) return SL_OK;
    const sql_node *o = args->kids[1];
    if (args->kids[0]->kind != SQL_INTERVAL || o->kind != SQL_INTERVAL || !o->s) return SL_OK;
    int64_t size, offset;
    char *a = sql_unparse(args->kids[0]);
    char *b = sl_sprintf("INTERVAL '%s' %s", o->s + (o->s[0] == '-'), o->s2 ? o->s2 : "");
    int ok = sl_interval_parse(a, &size, NULL, 0) == SL_OK &&
             sl_interval_parse(b, &offset, NULL, 0) == SL_OK;
    free(a);
    free(b);
    if (ok && o->s[0] == '-') offset = -offset;
    if (ok && (offset >= size || -offset >= size)) /* Flink's planner's words */
        return PERR(tvf, "TUMBLE table function parameters must satisfy abs(offset) < size, but "
                    "got size %lld ms and offset %lld ms.", (long long)size, (long long)offset);
    return SL_OK;
}

int sql_tvf_hop_check(plan *p, const sql_node *tvf)
{
    const sql_node *args = sql_kid(tvf, 2);
    if (strcasecmp(tvf->s, "HOP") || !args || args->nkids < 2) return SL_OK;
    int64_t slide, size;
    char *a = sql_unparse(args->kids[0]), *b = sql_unparse(args->kids[1]);
    int ok = sl_interval_parse(a, &slide, NULL, 0) == SL_OK &&
             sl_interval_parse(b, &size, NULL, 0) == SL_OK;
    free(a);
    free(b);
    if (ok && slide > 0 && size % slide != 0)
        return PERR(tvf, "HOP table function based aggregate requires size must be an integral "
                    "multiple of slide, but got size %lld ms and slide %lld ms", (long long)size,
                    (long long)slide);
    return SL_OK;
}
