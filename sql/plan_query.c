/*
 * plan_query.c -- the query forms around a SELECT that Flink's streaming
 * planner accepts: VALUES and SELECT without FROM (a bounded `values`
 * source), SELECT DISTINCT and UNION without ALL (a GROUP BY on every column
 * without aggregates, as Flink plans them), INTERSECT and EXCEPT [ALL] (the
 * `set_op` operator), column aliases `(query) AS t(a, b)`, and ORDER BY /
 * LIMIT / OFFSET / FETCH (a global Top-N).
 *
 * Each function plans into a rel like the rest of the planner (plan_int.h)
 * and writes errors with the node's line and column.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan_int.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

/* ---- VALUES ---------------------------------------------------------------- */

static int numeric_rank(sl_type t)
{
    return t == SL_T_INT ? 1 : t == SL_T_BIGINT ? 2 : t == SL_T_DOUBLE ? 3 : 0;
}

/* The common type of two column types (Flink's least restrictive type among
 * INT, BIGINT and DOUBLE; others must be equal); SL_T_NULL when none. */
static sl_type common_type(sl_type a, sl_type b)
{
    if (a == SL_T_NULL) return b;
    if (b == SL_T_NULL || a == b) return a;
    int ra = numeric_rank(a), rb = numeric_rank(b);
    if (ra && rb) return ra > rb ? a : b;
    return SL_T_NULL;
}

/* A values vertex of `rows` (a LIST of LISTs of constant expressions), the
 * columns named by `names` (NULL: Flink's EXPR$0, EXPR$1, ...). */
static int values_vertex(plan *p, const sql_node *at, const sql_node *rows, char **names,
                         rel *out)
{
    int ncols = rows->kids[0]->nkids, rc = SL_OK;
    sl_type *types = sl_calloc((size_t)ncols + 1, sizeof *types);
    sl_type *cell = sl_calloc((size_t)rows->nkids * (size_t)ncols + 1, sizeof *cell);
    const sl_dtype **tdt = sl_calloc((size_t)ncols + 1, sizeof *tdt);   /* DECIMAL columns */
    const sl_dtype **cdt = sl_calloc((size_t)rows->nkids * (size_t)ncols + 1, sizeof *cdt);
    rel none = {0};
    sl_schema_init(&none.sch);
    for (int r = 0; rc == SL_OK && r < rows->nkids; r++) {
        const sql_node *row = rows->kids[r];
        if (row->nkids != ncols) {
            rc = PERR(row, "VALUES: this row has %d values, the first has %d (all rows must "
                      "have the same number of columns)", row->nkids, ncols);
            break;
        }
        for (int c = 0; rc == SL_OK && c < ncols; c++) {
            const sql_node *e = row->kids[c];
            if (check_cols(p, e, &none) != SL_OK ||
                type_expr_dt(p, e, &none.sch, &cell[r * ncols + c], &cdt[r * ncols + c]) !=
                    SL_OK) {
                rc = SL_ERR;
                break;
            }
            sl_type t = cell[r * ncols + c], u = common_type(types[c], t);
            if ((t == SL_T_DECIMAL || types[c] == SL_T_DECIMAL) && t != SL_T_NULL &&
                types[c] != SL_T_NULL) {
                /* DECIMAL with an integer or a DECIMAL: the DECIMAL that holds both
                 * (integer digits and scale of the wider); with a DOUBLE: DOUBLE */
                const sl_dtype *x = cdt[r * ncols + c], *y = tdt[c] ? tdt[c] : sl_dtype_basic(types[c]);
                if (t == SL_T_DOUBLE || types[c] == SL_T_DOUBLE) {
                    u = SL_T_DOUBLE;
                    tdt[c] = NULL;
                } else if (numeric_rank(t) == 3 || numeric_rank(types[c]) == 3 ||
                           (t != SL_T_DECIMAL && !numeric_rank(t)) ||
                           (types[c] != SL_T_DECIMAL && !numeric_rank(types[c]))) {
                    u = SL_T_NULL;
                } else {
                    int xp = t == SL_T_DECIMAL ? x->p : t == SL_T_INT ? 10 : 19;
                    int xs = t == SL_T_DECIMAL ? x->s : 0;
                    int yp = types[c] == SL_T_DECIMAL ? y->p : types[c] == SL_T_INT ? 10 : 19;
                    int ys = types[c] == SL_T_DECIMAL ? y->s : 0;
                    int sc = xs > ys ? xs : ys, ip = xp - xs > yp - ys ? xp - xs : yp - ys;
                    if (ip + sc > 38) ip = 38 - sc;
                    u = SL_T_DECIMAL;
                    tdt[c] = sl_dtype_decimal(ip + sc, sc, NULL, 0);
                }
            }
            if (u == SL_T_NULL && t != SL_T_NULL && types[c] != SL_T_NULL) {
                rc = PERR(e, "Values passed to VALUES operator must have compatible types: "
                          "column %d is %s here and %s above; CAST one of them", c + 1,
                          sl_type_name(t), sl_type_name(types[c]));
                break;
            }
            if (u == SL_T_DECIMAL && !tdt[c])
                tdt[c] = sl_dtype_nullable(cdt[r * ncols + c], false);
            /* a kind with parameters of its own (ARRAY, MAP, ROW, ...): the
             * first row's type; later rows of another shape are CAST to it */
            if (u != SL_T_NULL && u != SL_T_DECIMAL && !sl_dtype_basic(u) && !tdt[c] &&
                cdt[r * ncols + c])
                tdt[c] = sl_dtype_nullable(cdt[r * ncols + c], false);
            types[c] = u;
        }
    }
    /* a column of TIMESTAMP_LTZ values in every row stays one (its values show in
     * the session zone), rather than the basic TIMESTAMP(3) */
    for (int c = 0; rc == SL_OK && c < ncols; c++) {
        if (types[c] != SL_T_TIMESTAMP || tdt[c]) continue;
        const sl_dtype *first = NULL;
        bool ltz = true;
        for (int r = 0; ltz && r < rows->nkids; r++) {
            const sl_dtype *d = cdt[r * ncols + c];
            if (cell[r * ncols + c] == SL_T_NULL) continue;
            if (!d || d->variant != SL_DV_LTZ || (first && d->p != first->p)) ltz = false;
            else if (!first) first = d;
        }
        if (ltz && first) tdt[c] = sl_dtype_nullable(first, false);
    }
    for (int c = 0; rc == SL_OK && c < ncols; c++)
        if (types[c] == SL_T_NULL)
            rc = PERR(rows->kids[0]->kids[c], "Illegal use of 'NULL': column %d of VALUES is "
                      "NULL in every row; CAST(NULL AS type) gives it a type", c + 1);
        else if (!tdt[c] && !sl_dtype_basic(types[c]))
            rc = PERR(rows->kids[0]->kids[c], "VALUES: column %d has no type every row can "
                      "take; CAST its values", c + 1);
    if (rc == SL_OK) {
        json_t *jrows = json_array();
        sql_sbuf id = {0};
        sql_sb_str(&id, "values|");
        for (int r = 0; r < rows->nkids; r++) {
            json_t *jr = json_array();
            for (int c = 0; c < ncols; c++) {
                char *x = sql_unparse(rows->kids[r]->kids[c]);
                if (cell[r * ncols + c] != types[c] ||
                    (tdt[c] && cdt[r * ncols + c] != tdt[c])) {
                    char *y = sl_sprintf("CAST(%s AS %s)", x,
                                         tdt[c] ? tdt[c]->text : sl_type_name(types[c]));
                    free(x);
                    x = y;
                }
                sql_sb_fmt(&id, "%s,", x);
                json_array_append_new(jr, json_string(x));
                free(x);
            }
            json_array_append_new(jrows, jr);
        }
        sl_schema sch;
        sl_schema_init(&sch);
        for (int c = 0; c < ncols; c++) {
            char *nm = names ? sl_strdup(names[c]) : sl_sprintf("EXPR$%d", c);
            if (tdt[c]) sl_schema_add_dt(&sch, nm, tdt[c]);
            else sl_schema_add(&sch, nm, types[c]);
            free(nm);
        }
        json_t *cfg = json_object();
        json_object_set_new(cfg, "rows", jrows);
        char *uid = sl_sprintf("values-%08x", fnv1a(id.p));
        free(id.p);
        memset(out, 0, sizeof *out);
        out->vid = add_vertex(p, "values", "values", uid, cfg, &sch, 1);
        free(uid);
        out->sch = sch;
        out->ident = sl_strdup("values");
    }
    SL_UNUSED(at);
    free(types);
    free(cell);
    free(tdt);
    free(cdt);
    return rc;
}

int sql_plan_values(plan *p, const sql_node *q, rel *out)
{
    return values_vertex(p, q, sql_kid(q, 0), NULL, out);
}

/* SELECT items [WHERE c] without FROM: one row of the items' values. */
int sql_plan_nofrom(plan *p, const sql_node *sel, rel *out)
{
    const sql_node *items = sql_kid(sel, 0), *where = sql_kid(sel, 2);
    if (sql_kid(sel, 3) || sql_kid(sel, 4))
        return PERR(sel, "GROUP BY and HAVING need a FROM clause");
    sql_node *row = sql_node_new(p->arena, SQL_LIST, sel->line, sel->col);
    sql_node *rows = sql_node_new(p->arena, SQL_LIST, sel->line, sel->col);
    sql_node_add(p->arena, rows, row);
    char **names = sl_calloc((size_t)items->nkids + 1, sizeof *names);
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < items->nkids; i++) {
        const sql_node *it = items->kids[i], *e = it->kids[0];
        if (e->kind == SQL_STAR) {
            rc = PERR(e, "SELECT * needs a FROM clause");
            break;
        }
        sql_node_add(p->arena, row, (sql_node *)e);
        names[i] = it->s ? sl_strdup(it->s) : sl_sprintf("EXPR$%d", i);
        for (int j = 0; j < i; j++)
            if (!strcasecmp(names[i], names[j])) {
                rc = PERR(it, "the query has two columns named '%s'; give one an alias with AS",
                          names[i]);
                break;
            }
    }
    if (rc == SL_OK) rc = values_vertex(p, sel, rows, names, out);
    for (int i = 0; i < items->nkids; i++) free(names[i]);
    free(names);
    if (rc == SL_OK && where && (rc = emit_calc(p, out, NULL, 0, where, "calc")) != SL_OK)
        rel_free(out);
    return rc;
}

/* ---- (query) AS t(a, b) ------------------------------------------------------ */

int sql_plan_col_aliases(plan *p, const sql_node *list, rel *io)
{
    if (list->nkids != io->sch.n)
        return PERR(list, "List of column aliases must have same degree as table; table has %d "
                    "columns, whereas alias list has %d columns", io->sch.n, list->nkids);
    item *its = sl_calloc((size_t)io->sch.n + 1, sizeof *its);
    int rename = 0, rc = SL_OK;
    for (int c = 0; c < io->sch.n; c++) {
        for (int j = 0; j < c; j++)
            if (!strcasecmp(list->kids[c]->s, list->kids[j]->s))
                rc = PERR(list->kids[c], "Duplicate name '%s' in column alias list",
                          list->kids[c]->s);
        its[c].name = sl_strdup(list->kids[c]->s);
        char *a = sql_quote_ident(io->sch.fields[c].name), *b = sql_quote_ident(its[c].name);
        its[c].text = sl_sprintf("%s AS %s", a, b);
        free(a);
        free(b);
        its[c].type = io->sch.fields[c].type;
        its[c].dt = io->sch.fields[c].dt;
        if (strcmp(its[c].name, io->sch.fields[c].name)) rename = 1;
    }
    if (rc == SL_OK && rename) {
        /* a time attribute keeps its role under its new name */
        char *rt = NULL, *pt = NULL;
        for (int c = 0; c < io->sch.n; c++) {
            if (io->rowtime && !strcasecmp(io->rowtime, io->sch.fields[c].name)) rt = its[c].name;
            if (io->proctime && !strcasecmp(io->proctime, io->sch.fields[c].name)) pt = its[c].name;
        }
        rt = dup0(rt);
        pt = dup0(pt);
        rc = emit_calc(p, io, its, io->sch.n, NULL, "alias");
        free(io->rowtime);
        free(io->proctime);
        io->rowtime = rt;
        io->proctime = pt;
    }
    items_free(its, io->sch.n);
    return rc;
}

/* ---- DISTINCT, UNION ---------------------------------------------------------- */

/* A group_aggregate on every column of *io without aggregates: Flink's plan
 * of SELECT DISTINCT and of UNION. `what` names it in messages. */
static int distinct_vertex(plan *p, const sql_node *at, rel *io, const char *what)
{
    if (io->sch.n > 32)
        return PERR(at, "%s over %d columns: at most 32 are supported", what, io->sch.n);
    json_t *keys = json_array(), *cfg = json_object();
    sql_sbuf id = {0}, cols = {0};
    sql_sb_fmt(&id, "group_aggregate|%s|", io->ident ? io->ident : "");
    for (int c = 0; c < io->sch.n; c++) {
        json_array_append_new(keys, json_string(io->sch.fields[c].name));
        sql_sb_fmt(&id, "%s,", io->sch.fields[c].name);
        sql_sb_fmt(&cols, "%s%s", c ? ", " : "", io->sch.fields[c].name);
    }
    sql_sb_str(&id, "|");
    json_object_set(cfg, "group-by", keys);
    json_object_set_new(cfg, "aggregates", json_array());
    if (sqlp_ttl_set(p)) json_object_set_new(cfg, "table.exec.state.ttl", json_string(p->ttl));
    if (io->updating) json_object_set_new(cfg, "input-changelog", json_string("retract"));
    char *uid = sl_sprintf("agg-%s-%08x", io->ident ? io->ident : "q", fnv1a(id.p));
    char *vid = add_vertex(p, "distinct", "group_aggregate", uid, cfg, NULL, 0);
    add_edge(p, io->vid, vid, "hash", keys, 0);
    json_decref(keys);
    free(uid);
    free(id.p);
    free(io->vid);
    io->vid = vid;
    io->updating = 1;
    free(io->updater);
    io->updater = sl_sprintf("group_aggregate '%s' (%s %s)", vid, what, cols.p ? cols.p : "");
    free(cols.p);
    free(io->rowtime);
    free(io->proctime);
    io->rowtime = io->proctime = NULL;
    io->windowed = 0;
    free(io->window);
    io->window = NULL;
    return SL_OK;
}

int sql_plan_select_distinct(plan *p, const sql_node *sel, rel *out)
{
    sql_node *c = sql_arena_alloc(p->arena, sizeof *c);
    *c = *sel;
    c->flags &= ~SQL_F_DISTINCT;
    if (plan_query(p, c, out) != SL_OK) return SL_ERR;
    if (distinct_vertex(p, sel, out, "SELECT DISTINCT") != SL_OK) {
        rel_free(out);
        return SL_ERR;
    }
    return SL_OK;
}

/* ---- UNION, INTERSECT, EXCEPT ------------------------------------------------- */

/* Bring the n planned branches rs[] of a set operation (br[] their nodes)
 * to one row type, as Flink does: the first branch's column names, and per
 * column the least restrictive type of all branches (INT < BIGINT <
 * DOUBLE; other types must be equal: Calcite's "Type mismatch"). A branch
 * whose names or types differ gets a calc that renames and casts; a time
 * attribute keeps its role when its column is only renamed. `what` is the
 * operation's name in messages (UNION, INTERSECT, EXCEPT). */
int sql_setop_align(plan *p, const char *what, rel *rs, const sql_node **br, int n)
{
    for (int i = 1; i < n; i++)
        if (rs[i].sch.n != rs[0].sch.n)
            return PERR(br[i], "Column count mismatch in %s: this branch gives %d columns, the "
                        "first gives %d", what, rs[i].sch.n, rs[0].sch.n);
    int ncols = rs[0].sch.n;
    sl_type *want = sl_calloc((size_t)ncols + 1, sizeof *want);
    int rc = SL_OK;
    for (int c = 0; rc == SL_OK && c < ncols; c++) {
        want[c] = rs[0].sch.fields[c].type;
        for (int i = 1; i < n; i++) {
            sl_type u = common_type(want[c], rs[i].sch.fields[c].type);
            if (u == SL_T_NULL) {
                rc = PERR(br[i], "Type mismatch in column %d of %s: %s here, %s before; CAST "
                          "one of them", c + 1, what, sl_type_name(rs[i].sch.fields[c].type),
                          sl_type_name(want[c]));
                break;
            }
            want[c] = u;
        }
    }
    for (int i = 0; rc == SL_OK && i < n; i++) {
        int change = 0;
        for (int c = 0; c < ncols; c++)
            if (rs[i].sch.fields[c].type != want[c] ||
                strcmp(rs[i].sch.fields[c].name, rs[0].sch.fields[c].name))
                change = 1;
        if (!change) continue;
        item *its = sl_calloc((size_t)ncols + 1, sizeof(item));
        char *rt = NULL, *pt = NULL;
        for (int c = 0; c < ncols; c++) {
            const sl_field *f = &rs[i].sch.fields[c];
            its[c].name = sl_strdup(rs[0].sch.fields[c].name);
            char *a = sql_quote_ident(f->name), *b = sql_quote_ident(its[c].name);
            its[c].text = f->type == want[c] ? sl_sprintf("%s AS %s", a, b)
                        : sl_sprintf("CAST(%s AS %s) AS %s", a, sl_type_name(want[c]), b);
            free(a);
            free(b);
            its[c].type = want[c];
            if (f->type == want[c] && rs[i].rowtime && !strcasecmp(rs[i].rowtime, f->name))
                rt = its[c].name;
            if (f->type == want[c] && rs[i].proctime && !strcasecmp(rs[i].proctime, f->name))
                pt = its[c].name;
        }
        rt = dup0(rt);
        pt = dup0(pt);
        rc = emit_calc(p, &rs[i], its, ncols, NULL, i ? "setop-align" : "setop-cast");
        free(rs[i].rowtime);
        free(rs[i].proctime);
        rs[i].rowtime = rt;
        rs[i].proctime = pt;
        items_free(its, ncols);
    }
    free(want);
    return rc;
}

/* Plan both sides of a set operation into rs[0..1] with the left side's
 * column names and the same types. */
static int set_sides(plan *p, const sql_node *q, const char *what, rel *rs)
{
    if (plan_query(p, sql_kid(q, 0), &rs[0]) != SL_OK) return SL_ERR;
    if (plan_query(p, sql_kid(q, 1), &rs[1]) != SL_OK) {
        rel_free(&rs[0]);
        return SL_ERR;
    }
    const sql_node *br[2] = {sql_kid(q, 0), sql_kid(q, 1)};
    char op[32];
    snprintf(op, sizeof op, "%s", what);
    if (strchr(op, ' ')) *strchr(op, ' ') = 0; /* Calcite names the operation without ALL */
    int rc = sql_setop_align(p, op, rs, br, 2);
    if (rc == SL_OK && !strcmp(rs[0].vid, rs[1].vid))
        /* a self-intersection reads one vertex twice: the right side gets a calc of its own */
        rc = emit_calc(p, &rs[1], NULL, 0, NULL, "setop-branch");
    if (rc != SL_OK) {
        rel_free(&rs[0]);
        rel_free(&rs[1]);
    }
    return rc;
}

/* UNION (distinct): UNION ALL of the sides, then DISTINCT, as Flink plans it. */
static int plan_union_distinct(plan *p, const sql_node *q, rel *out)
{
    sql_node *c = sql_arena_alloc(p->arena, sizeof *c);
    *c = *q;
    c->flags |= SQL_F_ALL;
    if (plan_query(p, c, out) != SL_OK) return SL_ERR;
    if (distinct_vertex(p, q, out, "UNION") != SL_OK) {
        rel_free(out);
        return SL_ERR;
    }
    return SL_OK;
}

int sql_plan_setop(plan *p, const sql_node *q, rel *out)
{
    if (!q->s) return plan_union_distinct(p, q, out);
    int except = !strcasecmp(q->s, "EXCEPT"), all = (q->flags & SQL_F_ALL) != 0;
    char what[24];
    snprintf(what, sizeof what, "%s%s", except ? "EXCEPT" : "INTERSECT", all ? " ALL" : "");
    rel rs[2] = {{0}, {0}};
    if (set_sides(p, q, what, rs) != SL_OK) return SL_ERR;
    int rc = SL_OK;
    if (rs[0].sch.n > 32) rc = PERR(q, "%s over %d columns: at most 32 are supported", what, rs[0].sch.n);
    if (rc == SL_OK) {
        json_t *keys = json_array(), *cfg = json_object();
        sql_sbuf id = {0};
        sql_sb_fmt(&id, "set_op|%s|%s|%s|", what, rs[0].ident ? rs[0].ident : "",
                   rs[1].ident ? rs[1].ident : "");
        for (int c = 0; c < rs[0].sch.n; c++) {
            json_array_append_new(keys, json_string(rs[0].sch.fields[c].name));
            sql_sb_fmt(&id, "%s,", rs[0].sch.fields[c].name);
        }
        json_object_set_new(cfg, "op", json_string(except ? "except" : "intersect"));
        if (all) json_object_set_new(cfg, "all", json_true());
        if (sqlp_ttl_set(p)) json_object_set_new(cfg, "table.exec.state.ttl", json_string(p->ttl));
        char *ident = sl_sprintf("%s(%s,%s)", except ? "except" : "intersect",
                                 rs[0].ident ? rs[0].ident : "", rs[1].ident ? rs[1].ident : "");
        char *uid = sl_sprintf("setop-%s-%08x", ident, fnv1a(id.p));
        char *vid = add_vertex(p, except ? "except" : "intersect", "set_op", uid, cfg, NULL, 0);
        add_edge(p, rs[0].vid, vid, "hash", keys, 0);
        add_edge(p, rs[1].vid, vid, "hash", keys, 1);
        json_decref(keys);
        free(uid);
        free(id.p);
        memset(out, 0, sizeof *out);
        out->vid = vid;
        sl_schema_copy(&out->sch, &rs[0].sch);
        out->ident = ident;
        /* INTERSECT of insert-only inputs only ever adds rows; the rest retract */
        out->updating = except || rs[0].updating || rs[1].updating;
        if (out->updating) out->updater = sl_sprintf("set_op '%s' (%s)", vid, what);
    }
    rel_free(&rs[0]);
    rel_free(&rs[1]);
    return rc;
}

/* ---- ORDER BY, LIMIT, OFFSET, FETCH ------------------------------------------- */

/* A constant non-negative integer: LIMIT's and OFFSET's argument. */
static int limit_value(plan *p, const sql_node *e, const char *what, int64_t *v)
{
    if (!e || e->kind != SQL_NUM || strchr(e->s, '.') || strchr(e->s, 'e') || strchr(e->s, 'E'))
        return PERR(e, "%s: an integer literal is expected", what);
    char *end;
    long long x = strtoll(e->s, &end, 10);
    if (*end || x < 0 || x > 10000) return PERR(e, "%s: %s is out of range (0 to 10000)", what, e->s);
    *v = x;
    return SL_OK;
}

/* A vertex at parallelism 1 behind a rebalance edge, keyed by nothing:
 * the whole stream in one place, as Flink's global exchange. */
static void single_vertex(plan *p, const char *base, const char *type, const char *what,
                          json_t *cfg, rel *io)
{
    char *idsrc = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
    char *uidsrc = sl_sprintf("%s|%s|%s", type, io->ident ? io->ident : "", idsrc);
    char *uid = sl_sprintf("%s-%s-%08x", base, io->ident ? io->ident : "q", fnv1a(uidsrc));
    char *vid = add_vertex(p, base, type, uid, cfg, NULL, 1);
    add_edge(p, io->vid, vid, "rebalance", NULL, 0);
    free(idsrc);
    free(uidsrc);
    free(uid);
    free(io->vid);
    io->vid = vid;
    char *ident = sl_sprintf("%s(%s)", what, io->ident ? io->ident : "");
    free(io->ident);
    io->ident = ident;
}

/* LIMIT n [OFFSET m] without ORDER BY: Flink's StreamExecLimit, the first
 * rows that arrive (the `limit` operator). Insert-only in and out. */
static int plan_first_n(plan *p, const sql_node *q, int64_t n, int64_t m, rel *out)
{
    if (n < 0)
        return PERR(sql_kid(q, 3), "FETCH is missed, which on streaming table is not supported "
                    "currently.");
    if (n == 0) return PERR(sql_kid(q, 2), "LIMIT 0 is not supported (Flink plans no rows)");
    if (out->updating)
        return PERR(q, "LIMIT without ORDER BY over an updating input (%s) is not supported "
                    "yet; Flink keeps the first rows of its changelog", out->updater ?
                    out->updater : "an aggregation");
    json_t *cfg = json_object();
    json_object_set_new(cfg, "limit", json_integer(n));
    if (m > 0) json_object_set_new(cfg, "offset", json_integer(m));
    single_vertex(p, "limit", "limit", "limit", cfg, out);
    /* the rows keep their time attributes: a LIMIT only drops rows */
    return SL_OK;
}

/* ORDER BY an ascending time attribute [, further columns] without LIMIT:
 * Flink's temporal sort (the `temporal_sort` operator). */
static int plan_temporal_sort(plan *p, const sql_node *order, rel *out)
{
    const sql_node *e = sql_kid(order->kids[0], 0);
    int rt = e->kind == SQL_COL && out->rowtime && !strcasecmp(e->s, out->rowtime);
    int pt = e->kind == SQL_COL && out->proctime && !strcasecmp(e->s, out->proctime);
    if (e->kind == SQL_COL && sl_schema_find(&out->sch, e->s) < 0)
        return PERR(e, "ORDER BY: '%s' is not a column of the query's output (select it)", e->s);
    if (!rt && !pt) return PERR(e, "Sort on a non-time-attribute field is not supported.");
    if (order->kids[0]->flags & SQL_F_DESC)
        return PERR(e, "Sort on a non-time-attribute field is not supported. (Flink sorts a "
                    "stream only ascending on a time attribute)");
    if (out->updating)
        return PERR(e, "ORDER BY a time attribute needs an insert-only input, but %s updates "
                    "its rows", out->updater ? out->updater : "the query");
    if (pt && order->nkids > 1)
        return PERR(order->kids[1], "ORDER BY a processing-time attribute with further sort "
                    "columns is not supported yet (Flink sorts the rows of each millisecond "
                    "by them)");
    json_t *cfg = json_object(), *cols = json_array();
    int rc = SL_OK;
    for (int i = 1; i < order->nkids; i++) {
        const sql_node *o = order->kids[i], *x = sql_kid(o, 0);
        int c = x->kind == SQL_COL ? sl_schema_find(&out->sch, x->s) : -1;
        if (c < 0) {
            rc = PERR(x, "ORDER BY: a column of the query's output is expected (compute "
                      "expressions in the SELECT list and name them)");
            break;
        }
        char *entry = sl_sprintf("%s%s", out->sch.fields[c].name,
                                 o->flags & SQL_F_DESC ? " DESC" : "");
        json_array_append_new(cols, json_string(entry));
        free(entry);
    }
    if (rc != SL_OK) {
        json_decref(cols);
        json_decref(cfg);
        return rc;
    }
    if (rt) json_object_set_new(cfg, "time-column", json_string(out->rowtime));
    if (json_array_size(cols)) json_object_set(cfg, "order-by", cols);
    json_decref(cols);
    single_vertex(p, "sort", "temporal_sort", "sort", cfg, out);
    /* the output stays insert-only and keeps its time attributes */
    return SL_OK;
}

int sql_plan_limit(plan *p, const sql_node *q, rel *out)
{
    const sql_node *order = sql_kid(q, 1), *lim = sql_kid(q, 2), *off = sql_kid(q, 3);
    int64_t n = -1, m = 0;
    if (lim && limit_value(p, lim, "LIMIT", &n) != SL_OK) return SL_ERR;
    if (off && limit_value(p, off, "OFFSET", &m) != SL_OK) return SL_ERR;
    if (plan_query(p, sql_kid(q, 0), out) != SL_OK) return SL_ERR;
    int rc = SL_OK;
    if (!order) {
        rc = plan_first_n(p, q, n, m, out);
    } else if (n < 0 && m > 0) {
        rc = PERR(off, "FETCH is missed, which on streaming table is not supported currently.");
    } else if (n < 0) {
        rc = plan_temporal_sort(p, order, out);
    } else if (n + m > 10000) {
        rc = PERR(lim, "LIMIT plus OFFSET is %lld; a Top-N keeps at most 10000 rows",
                  (long long)(n + m));
    } else if (n == 0) {
        rc = PERR(lim, "LIMIT 0 is not supported (Flink plans no rows)");
    } else {
        json_t *ord = json_array(), *cfg = json_object();
        sql_sbuf id = {0};
        for (int i = 0; rc == SL_OK && i < order->nkids; i++) {
            const sql_node *o = order->kids[i], *e = sql_kid(o, 0);
            int c = e->kind == SQL_COL ? sl_schema_find(&out->sch, e->s) : -1;
            if (c < 0) {
                rc = PERR(e, "ORDER BY: a column of the query's output is expected (compute "
                          "expressions in the SELECT list and name them)");
                break;
            }
            char *entry = sl_sprintf("%s%s", out->sch.fields[c].name,
                                     o->flags & SQL_F_DESC ? " DESC" : "");
            json_array_append_new(ord, json_string(entry));
            free(entry);
        }
        if (rc == SL_OK) {
            json_object_set_new(cfg, "partition-by", json_array());
            json_object_set(cfg, "order-by", ord);
            json_object_set_new(cfg, "limit", json_integer(n + m));
            if (m > 0) json_object_set_new(cfg, "rank-start", json_integer(m + 1));
            if (out->updating) json_object_set_new(cfg, "input-changelog", json_string("retract"));
            if (sqlp_ttl_set(p)) json_object_set_new(cfg, "table.exec.state.ttl", json_string(p->ttl));
            char *o = json_dumps(ord, JSON_COMPACT);
            sql_sb_fmt(&id, "rank|%s|[]|%s|%lld|0", out->ident ? out->ident : "", o,
                       (long long)(n + m));
            if (m > 0) sql_sb_fmt(&id, "|from %lld", (long long)(m + 1));
            free(o);
            char *uid = sl_sprintf("rank-%s-%08x", out->ident ? out->ident : "q", fnv1a(id.p));
            char *vid = add_vertex(p, "sort-limit", "rank", uid, cfg, NULL, 1);
            cfg = NULL;
            free(uid);
            add_edge(p, out->vid, vid, "rebalance", NULL, 0);
            free(out->vid);
            out->vid = vid;
            out->updating = 1;
            free(out->updater);
            out->updater = sl_sprintf("rank '%s' (ORDER BY ... LIMIT)", vid);
            free(out->rowtime);
            free(out->proctime);
            out->rowtime = out->proctime = NULL;
        }
        free(id.p);
        json_decref(ord);
        json_decref(cfg);
    }
    if (rc != SL_OK) rel_free(out);
    return rc;
}

long long sql_query_row_limit(const sql_node *q)
{
    if (!q || q->kind != SQL_LIMIT || sql_kid(q, 1)) return 0;
    const sql_node *lim = sql_kid(q, 2);
    if (!lim || lim->kind != SQL_NUM || strchr(lim->s, '.')) return 0;
    return strtoll(lim->s, NULL, 10);
}
