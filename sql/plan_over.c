/*
 * plan_over.c -- plans Flink's OVER aggregation:
 *
 *     SELECT cols, agg(x) OVER (PARTITION BY k ORDER BY ts
 *                               ROWS|RANGE BETWEEN ... PRECEDING AND CURRENT ROW) [AS a], ...
 *     FROM t [WHERE ...] [WINDOW w AS (...)]
 *
 * into [calc: WHERE, expression arguments, FILTER conditions] ->
 * over_aggregate (operators/over_aggregate.c, keyed by the partition
 * columns; without PARTITION BY one subtask) -> calc (the SELECT list, each
 * OVER call replaced by the operator's column for it).
 *
 * Flink's rules, with its messages: every OVER call of a SELECT uses the same
 * window; ORDER BY is one time attribute (event or processing time),
 * ascending; the frame ends at CURRENT ROW (FOLLOWING is refused); the input
 * is insert-only. Without a frame the window is Flink's default, RANGE
 * BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (ROWS for ROW_NUMBER(), as
 * Calcite makes it, when windows are compared). ROWS n PRECEDING counts rows;
 * RANGE takes an INTERVAL. The calls: COUNT, SUM, MIN, MAX (also of a
 * STRING), AVG (also DISTINCT), VAR_POP, VAR_SAMP, STDDEV_POP and
 * STDDEV_SAMP (also DISTINCT; expanded here into SUM and COUNT over the
 * window, as Calcite does), ROW_NUMBER(), RANK(),
 * DENSE_RANK(), FIRST_VALUE, LAST_VALUE and LAG; LEAD, NTILE, PERCENT_RANK
 * and CUME_DIST are refused with the words of Flink's streaming planner,
 * which refuses them too, and so are what Flink's parser and validator
 * refuse: a frame written for the ranking and offset functions, FILTER on an
 * OVER call, OVER after JSON_ARRAYAGG / JSON_OBJECTAGG. The ROW_NUMBER()
 * queries that an outer query bounds are Top-N / deduplication
 * (sql/plan_rank.c), decided before this file is asked.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "expr.h"
#include "sl.h"
#include "parse.h"
#include "plan_int.h"
#include "udf_sig.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)
#define MAX_OVER 64

typedef struct over_ctx {
    const sql_node *calls[MAX_OVER]; /* the SQL_OVER nodes of the SELECT list */
    const sql_node *extra;           /* the first one past MAX_OVER, for the error */
    int n;
} over_ctx;

static void collect(const sql_node *e, over_ctx *c)
{
    if (!e) return;
    if (e->kind == SQL_OVER) {
        if (c->n < MAX_OVER) c->calls[c->n] = e;
        else if (c->n == MAX_OVER) c->extra = e;
        c->n++;
        return;
    }
    for (int i = 0; i < e->nkids; i++) collect(e->kids[i], c);
}

int sql_select_has_over(const sql_node *sel)
{
    const sql_node *items = sql_kid(sel, 0);
    over_ctx c = {.n = 0, .extra = NULL};
    for (int i = 0; items && i < items->nkids; i++) collect(items->kids[i], &c);
    return c.n > 0;
}

/* The window of an OVER call as text, to compare two calls' windows: its
 * frame as Calcite makes it -- none written is RANGE BETWEEN UNBOUNDED
 * PRECEDING AND CURRENT ROW, but ROWS for ROW_NUMBER() (so Flink plans
 * ROW_NUMBER() and SUM(x) over one written window as two windows, and
 * refuses them) -- and `ROWS x` is `ROWS BETWEEN x AND CURRENT ROW`. */
static char *window_text(const sql_node *o)
{
    sql_sbuf b = {0};
    for (int k = 0; k < 3; k++) {
        const sql_node *x = sql_kid(o, k);
        sql_sb_str(&b, "|");
        if (k == 2 && !x) {
            sql_sb_fmt(&b, "%s UNBOUNDED PRECEDING;CURRENT ROW;",
                       !strcasecmp(o->s, "ROW_NUMBER") ? "ROWS" : "RANGE");
            continue;
        }
        if (!x) continue;
        if (k == 2) {
            sql_sb_fmt(&b, "%s ", x->s);
            for (int i = 0; i < 2; i++) {
                const sql_node *bd = i < x->nkids ? x->kids[i] : NULL;
                char *t = bd && bd->nkids ? sql_unparse(bd->kids[0]) : NULL;
                sql_sb_fmt(&b, "%s%s%s;", t ? t : "", t ? " " : "", bd ? bd->s : "CURRENT ROW");
                free(t);
            }
            continue;
        }
        for (int i = 0; i < x->nkids; i++) {
            const sql_node *e = x->kids[i];
            char *t = sql_unparse(e->kind == SQL_ORDER ? e->kids[0] : e);
            sql_sb_fmt(&b, "%s%s,", t, e->kind == SQL_ORDER && (e->flags & SQL_F_DESC) ? " DESC" : "");
            free(t);
        }
    }
    return sql_sb_take(&b);
}

/* A copy of e with every OVER call i replaced by the column `$ov<i>`. */
static sql_node *replace_over(plan *p, const sql_node *e, const over_ctx *c)
{
    if (!e) return NULL;
    if (e->kind == SQL_OVER) {
        for (int i = 0; i < c->n && i < MAX_OVER; i++)
            if (c->calls[i] == e) {
                sql_node *col = sql_node_new(p->arena, SQL_COL, e->line, e->col);
                char nm[24];
                snprintf(nm, sizeof nm, "$ov%d", i);
                col->s = sql_arena_strndup(p->arena, nm, strlen(nm));
                col->flags = SQL_F_QUOTED;
                return col;
            }
    }
    sql_node *n = sql_node_like(p->arena, e);
    for (int i = 0; i < e->nkids; i++) sql_node_add(p->arena, n, replace_over(p, e->kids[i], c));
    return n;
}

static sql_node *col_node(plan *p, const sql_node *at, const char *name)
{
    sql_node *col = sql_node_new(p->arena, SQL_COL, at->line, at->col);
    col->s = sql_arena_strndup(p->arena, name, strlen(name));
    col->flags = SQL_F_QUOTED;
    return col;
}

/* The frame of window o into *rows and *preceding (-1: UNBOUNDED). */
static int frame_of(plan *p, const sql_node *o, int *rows, int64_t *preceding)
{
    const sql_node *f = sql_kid(o, 2);
    *rows = 0;
    *preceding = -1;
    if (!f) return SL_OK; /* RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW */
    if (strcmp(f->s, "ROWS") && strcmp(f->s, "RANGE"))
        return PERR(f, "a window frame starts with ROWS or RANGE, not '%s'", f->s);
    *rows = !strcmp(f->s, "ROWS");
    const sql_node *lo = sql_kid(f, 0), *hi = sql_kid(f, 1);
    if (hi && strcmp(hi->s, "CURRENT ROW")) {
        if (!strcmp(hi->s, "FOLLOWING") || !strcmp(hi->s, "UNBOUNDED FOLLOWING"))
            return PERR(hi, "OVER %s FOLLOWING windows are not supported yet.",
                        *rows ? "ROW" : "RANGE");
        return PERR(hi, "a frame bound is UNBOUNDED PRECEDING, n PRECEDING, CURRENT ROW or n "
                    "FOLLOWING, not '%s'", hi->s);
    }
    if (!strcmp(lo->s, "UNBOUNDED PRECEDING")) return SL_OK;
    if (!strcmp(lo->s, "CURRENT ROW")) {
        *preceding = 0;
        return SL_OK;
    }
    if (!strcmp(lo->s, "FOLLOWING") || !strcmp(lo->s, "UNBOUNDED FOLLOWING"))
        return PERR(lo, "OVER %s FOLLOWING windows are not supported yet.", *rows ? "ROW" : "RANGE");
    if (strcmp(lo->s, "PRECEDING") || !lo->nkids)
        return PERR(lo, "a frame bound is UNBOUNDED PRECEDING, n PRECEDING, CURRENT ROW or n "
                    "FOLLOWING, not '%s'", lo->s);
    const sql_node *x = lo->kids[0];
    if (*rows) {
        char *end;
        long long n = x->kind == SQL_NUM ? strtoll(x->s, &end, 10) : -1;
        if (x->kind != SQL_NUM || *end || n < 0)
            return PERR(x, "ROWS n PRECEDING takes a non-negative integer literal");
        *preceding = n;
        return SL_OK;
    }
    if (x->kind != SQL_INTERVAL)
        return PERR(x, "RANGE on a time attribute takes an interval: RANGE BETWEEN INTERVAL '1' "
                    "MINUTE PRECEDING AND CURRENT ROW");
    char *txt = sl_sprintf("INTERVAL '%s' %s", x->s, x->s2);
    int64_t ms;
    char e[256];
    int rc = sl_interval_parse(txt, &ms, e, sizeof e);
    free(txt);
    if (rc != SL_OK || ms < 0) return PERR(x, "RANGE PRECEDING: %s", rc != SL_OK ? e : "negative interval");
    *preceding = ms;
    return SL_OK;
}

/* Argument a of call o as a column of sch (or of the pre-calc, named
 * <prefix><i>) into *name; its type into *type. */
static int arg_column(plan *p, const sql_node *a, const char *prefix, int i, const sl_schema *sch,
                      item *pre, int *npre, const char **name, sl_type *type)
{
    if (a->kind == SQL_COL && !a->s2) {
        int c = sl_schema_find(sch, a->s);
        if (c < 0) return check_cols(p, a, &(rel){.sch = *sch});
        *name = sch->fields[c].name;
        *type = sch->fields[c].type;
        return SL_OK;
    }
    char nm[32];
    snprintf(nm, sizeof nm, "%s%d", prefix, i);
    rel tmp = {.sch = *sch};
    if (check_cols(p, a, &tmp) != SL_OK || make_item(p, &pre[*npre], a, nm, sch) != SL_OK)
        return SL_ERR;
    *name = pre[*npre].name;
    *type = pre[(*npre)++].type;
    return SL_OK;
}

/* FIRST_VALUE(x), LAST_VALUE(x), LAG(x [, offset [, default]]): the operator's
 * item, x and default as columns (computed in the pre-calc when they are
 * expressions), the offset a literal. */
static int value_item(plan *p, const sql_node *o, const char *fn, int i, const sl_schema *sch,
                      item *pre, int *npre, sql_sbuf *out)
{
    const sql_node *call = sql_kid(o, 3);
    int lag = !strcmp(fn, "LAG"), n = call ? call->nkids : 0;
    if (call && (call->flags & (SQL_F_DISTINCT | SQL_F_FILTER | SQL_F_STAR_ARG)))
        return PERR(o, "%s does not take %s", fn, (call->flags & SQL_F_DISTINCT) ? "DISTINCT" :
                    (call->flags & SQL_F_FILTER) ? "FILTER" : "*");
    if (n < 1 || n > (lag ? 3 : 1))
        return PERR(o, lag ? "LAG takes one to three arguments: LAG(expression [, offset [, "
                             "default]])" : "%s takes one argument", fn);
    const char *x = NULL, *d = NULL;
    sl_type xt = SL_T_NULL, dt = SL_T_NULL;
    if (arg_column(p, call->kids[0], "$a", i, sch, pre, npre, &x, &xt) != SL_OK) return SL_ERR;
    long long off = 1;
    if (n >= 2) {
        const sql_node *a = call->kids[1];
        char *end = NULL;
        if (a->kind == SQL_NUM) off = strtoll(a->s, &end, 10);
        if (a->kind != SQL_NUM || *end || off < 0 || off > 10000)
            return PERR(a, "LAG's offset must be an integer literal from 0 to 10000");
    }
    if (n == 3 && call->kids[2]->kind != SQL_NULL) {
        if (arg_column(p, call->kids[2], "$d", i, sch, pre, npre, &d, &dt) != SL_OK) return SL_ERR;
        int ints = (xt == SL_T_INT || xt == SL_T_BIGINT) && (dt == SL_T_INT || dt == SL_T_BIGINT);
        if (dt != xt && !ints)
            return PERR(call->kids[2], "LAG's default must have the type of its expression (%s), "
                        "not %s", sl_type_name(xt), sl_type_name(dt));
    }
    char *qx = sql_quote_ident(x);
    sql_sb_fmt(out, "%s(%s", fn, qx);
    free(qx);
    if (lag) sql_sb_fmt(out, ", %lld", off);
    if (d) {
        char *qd = sql_quote_ident(d);
        sql_sb_fmt(out, ", %s", qd);
        free(qd);
    }
    sql_sb_fmt(out, ") AS `$ov%d`", i);
    return SL_OK;
}

/* LISTAGG([DISTINCT] x [, 'separator']): the operator's item without its
 * FILTER and alias, x a STRING column (computed in the pre-calc when it is an
 * expression), the separator a string literal (default ','). */
static int listagg_item(plan *p, const sql_node *o, int i, const sl_schema *sch, item *pre,
                        int *npre, sql_sbuf *out)
{
    const sql_node *call = sql_kid(o, 3);
    if (!call || (call->flags & SQL_F_STAR_ARG))
        return PERR(o, "LISTAGG takes a STRING expression, not '*'");
    int n = call->nkids - ((call->flags & SQL_F_FILTER) ? 1 : 0);
    if (n < 1 || n > 2)
        return PERR(o, "LISTAGG takes one or two arguments: LISTAGG([DISTINCT] expression [, "
                    "separator])");
    const char *x = NULL;
    sl_type xt = SL_T_NULL;
    if (arg_column(p, call->kids[0], "$a", i, sch, pre, npre, &x, &xt) != SL_OK) return SL_ERR;
    if (xt != SL_T_STRING)
        return PERR(call->kids[0], "LISTAGG takes a STRING expression, not %s (CAST it to "
                    "STRING)", sl_type_name(xt));
    if (n == 2 && call->kids[1]->kind != SQL_STR)
        return PERR(call->kids[1], "LISTAGG's separator must be a string literal");
    char *qx = sql_quote_ident(x);
    sql_sb_fmt(out, "LISTAGG(%s%s", (call->flags & SQL_F_DISTINCT) ? "DISTINCT " : "", qx);
    free(qx);
    if (n == 2) {
        sql_sb_str(out, ", '");
        for (const char *c = call->kids[1]->s; *c; c++) sql_sb_fmt(out, *c == '\'' ? "''" : "%c", *c);
        sql_sb_str(out, "'");
    }
    sql_sb_str(out, ")");
    return SL_OK;
}

/* A user-defined aggregate function of the session named s, or NULL. */
static const sl_udf_sig *over_udf(const char *s)
{
    const sl_udf_sig *u = sl_udf_set_find(sl_expr_session_functions(), s);
    return u && u->kind == SL_UDF_AGG_KIND ? u : NULL;
}

/* "f(`a`, `b`)" for a call of user-defined aggregate function u: each
 * argument a column, or a pre-calc item $a<i>_<j>, of the declared type
 * (INT widens to BIGINT, integers to DOUBLE). */
static int udf_call(plan *p, const sql_node *o, const sl_udf_sig *u, int i, const sl_schema *sch,
                    item *pre, int *npre, sql_sbuf *out)
{
    const sql_node *call = sql_kid(o, 3);
    if (call->flags & (SQL_F_STAR_ARG | SQL_F_DISTINCT))
        return PERR(o, "%s is a user-defined aggregate function: it takes neither '*' nor "
                    "DISTINCT", o->s);
    int nargs = call->nkids - ((call->flags & SQL_F_FILTER) ? 1 : 0);
    if (nargs != u->nargs)
        return PERR(o, "%s takes %d argument%s, not %d", o->s, u->nargs, u->nargs == 1 ? "" : "s",
                    nargs);
    sql_sb_fmt(out, "%s(", o->s);
    for (int j = 0; j < nargs; j++) {
        const sql_node *a = call->kids[j];
        const char *arg = NULL;
        sl_type at = SL_T_NULL;
        int c = a->kind == SQL_COL && !a->s2 ? sl_schema_find(sch, a->s) : -1;
        if (c >= 0) {
            arg = sch->fields[c].name;
            at = sch->fields[c].type;
        } else {
            char name[32];
            snprintf(name, sizeof name, "$a%d_%d", i, j);
            rel tmp = {.sch = *sch};
            if (check_cols(p, a, &tmp) != SL_OK || make_item(p, &pre[*npre], a, name, sch) != SL_OK)
                return SL_ERR;
            arg = pre[*npre].name;
            at = pre[(*npre)++].type;
        }
        sl_type want = u->args[j];
        bool isint = at == SL_T_TINYINT || at == SL_T_SMALLINT || at == SL_T_INT || at == SL_T_BIGINT;
        if (!(at == want || (at == SL_T_INT && want == SL_T_BIGINT) ||
              ((at == SL_T_INT || at == SL_T_BIGINT) && want == SL_T_DOUBLE) ||
              (isint && want == SL_T_DECIMAL))) /* the aggregate casts to DECIMAL(p, s) */
            return PERR(a, "argument %d of %s must be %s, not %s", j + 1, o->s,
                        want == SL_T_DECIMAL ? u->argdt[j]->text : sl_type_name(want),
                        sl_type_name(at));
        char *q = sql_quote_ident(arg);
        sql_sb_fmt(out, "%s%s", j ? ", " : "", q);
        free(q);
    }
    sql_sb_fmt(out, ")");
    return SL_OK;
}

/* The aggregate item text of OVER call o (number i) over input schema sch;
 * an argument or FILTER that is not a column goes into the pre-calc
 * (*pre, named $a<i> / $f<i>). */
static int agg_item(plan *p, const sql_node *o, int i, const sl_schema *sch, item *pre, int *npre,
                    sql_sbuf *out)
{
    const sql_node *call = sql_kid(o, 3);
    char *fn = sl_strdup(o->s);
    for (char *q = fn; *q; q++) *q = (char)toupper((unsigned char)*q);
    int rc = SL_OK;
    if (!strcmp(fn, "ROW_NUMBER")) {
        if (call && call->nkids)
            rc = PERR(o, "ROW_NUMBER() takes no arguments");
        else
            sql_sb_fmt(out, "ROW_NUMBER() AS `$ov%d`", i);
        free(fn);
        return rc;
    }
    if (!strcmp(fn, "LEAD")) { /* Flink's streaming planner refuses it so */
        free(fn);
        return PERR(o, "LEAD Function is not supported in stream mode.");
    }
    if (!strcmp(fn, "FIRST_VALUE") || !strcmp(fn, "LAST_VALUE") || !strcmp(fn, "LAG")) {
        rc = value_item(p, o, fn, i, sch, pre, npre, out);
        free(fn);
        return rc;
    }
    if (!strcmp(fn, "PERCENT_RANK") || !strcmp(fn, "CUME_DIST") || !strcmp(fn, "NTILE")) {
        rc = PERR(o, "%s Function is not supported in stream mode.", fn); /* Flink's words */
        free(fn);
        return rc;
    }
    if (!strcmp(fn, "RANK") || !strcmp(fn, "DENSE_RANK")) {
        if (call && call->nkids)
            rc = PERR(o, "%s() takes no arguments", fn);
        else
            sql_sb_fmt(out, "%s() AS `$ov%d`", fn, i);
        free(fn);
        return rc;
    }
    if (!strcmp(fn, "LISTAGG")) {
        rc = listagg_item(p, o, i, sch, pre, npre, out);
        goto filter;
    }
    const sl_udf_sig *u = over_udf(o->s);
    if (u) {
        rc = udf_call(p, o, u, i, sch, pre, npre, out);
        goto filter;
    }
    if (strcmp(fn, "COUNT") && strcmp(fn, "SUM") && strcmp(fn, "MIN") && strcmp(fn, "MAX") &&
        strcmp(fn, "AVG") && strcmp(fn, "COLLECT")) {
        rc = PERR(o, "%s() is not an aggregate function that OVER aggregation supports; OVER "
                  "aggregation takes COUNT, SUM, MIN, MAX, AVG (also with DISTINCT), VAR_POP, "
                  "VAR_SAMP, STDDEV_POP, STDDEV_SAMP, COLLECT, LISTAGG, FIRST_VALUE, LAST_VALUE, "
                  "LAG, ROW_NUMBER, RANK and DENSE_RANK", o->s);
        free(fn);
        return rc;
    }
    int distinct = (call->flags & SQL_F_DISTINCT) != 0;
    if (distinct && (call->flags & SQL_F_STAR_ARG)) {
        rc = PERR(o, "%s(DISTINCT *) is not an aggregate call; name a column", fn);
        free(fn);
        return rc;
    }
    int nargs = call->nkids - ((call->flags & SQL_F_FILTER) ? 1 : 0);
    const char *arg = NULL;
    char name[32];
    if (call->flags & SQL_F_STAR_ARG) {
        arg = "*";
    } else if (nargs != 1) {
        rc = PERR(o, "%s takes one argument", fn);
    } else {
        const sql_node *a = call->kids[0];
        if (a->kind == SQL_COL && !a->s2) {
            int c = sl_schema_find(sch, a->s);
            if (c < 0) rc = check_cols(p, a, &(rel){.sch = *sch});
            else arg = sch->fields[c].name;
        } else if (a->kind == SQL_NUM && !strcmp(a->s, "1") && !strcmp(fn, "COUNT")) {
            arg = "1";
        } else {
            snprintf(name, sizeof name, "$a%d", i);
            rel tmp = {.sch = *sch};
            if (check_cols(p, a, &tmp) != SL_OK ||
                make_item(p, &pre[(*npre)], a, name, sch) != SL_OK)
                rc = SL_ERR;
            else
                arg = pre[(*npre)++].name;
        }
    }
    if (rc == SL_OK) {
        char *qa = strcmp(arg, "*") && strcmp(arg, "1") ? sql_quote_ident(arg) : sl_strdup(arg);
        sql_sb_fmt(out, "%s(%s%s)", fn, distinct ? "DISTINCT " : "", qa);
        free(qa);
    }
filter:
    if (rc == SL_OK && (call->flags & SQL_F_FILTER)) {
        const sql_node *cond = call->kids[call->nkids - 1];
        char fname[32];
        snprintf(fname, sizeof fname, "$f%d", i);
        rel tmp = {.sch = *sch};
        if (check_cols(p, cond, &tmp) != SL_OK || make_item(p, &pre[*npre], cond, fname, sch) != SL_OK) {
            rc = SL_ERR;
        } else if (pre[*npre].type != SL_T_BOOLEAN) {
            rc = PERR(cond, "FILTER (WHERE ...) needs a BOOLEAN condition");
            (*npre)++;
        } else {
            sql_sb_fmt(out, " FILTER (WHERE `%s`)", fname);
            (*npre)++;
        }
    }
    if (rc == SL_OK) sql_sb_fmt(out, " AS `$ov%d`", i);
    free(fn);
    return rc;
}

/* What Flink's parser and Calcite's validator refuse, with their words: the
 * JSON aggregates take no OVER (Flink's grammar has no such call); an OVER
 * call takes no FILTER; the ranking and offset functions take no frame of
 * their own (their window is the default one). */
static int validate_calls(plan *p, const over_ctx *c)
{
    static const char *const noframe[] = {"ROW_NUMBER", "RANK",  "DENSE_RANK", "PERCENT_RANK",
                                          "CUME_DIST",  "NTILE", "LAG",        "LEAD"};
    for (int i = 0; i < c->n && i < MAX_OVER; i++) {
        const sql_node *o = c->calls[i], *call = sql_kid(o, 3);
        if (call && (!strcasecmp(o->s, "JSON_ARRAYAGG") || !strcasecmp(o->s, "JSON_OBJECTAGG")))
            return sl_seterr(p->err, p->errlen, "line %d, column %d: SQL parse failed. Incorrect "
                             "syntax near the keyword 'OVER'", call->oline, call->ocol);
        if (call && (call->flags & SQL_F_FILTER))
            return PERR(o, "OVER must be applied to aggregate function");
    }
    for (int i = 0; i < c->n && i < MAX_OVER; i++) {
        const sql_node *o = c->calls[i], *f = sql_kid(o, 2);
        if (!f) continue;
        for (size_t k = 0; k < sizeof noframe / sizeof noframe[0]; k++)
            if (!strcasecmp(o->s, noframe[k]))
                return PERR(f, "ROW/RANGE not allowed with RANK, DENSE_RANK or ROW_NUMBER "
                            "functions");
    }
    return SL_OK;
}

/* VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP: 0 for none, else 1 + bit 1
 * (sample) + bit 2 (square root). */
static int variance_kind(const sql_node *o)
{
    static const char *const fns[] = {"VAR_POP", "VAR_SAMP", "STDDEV_POP", "STDDEV_SAMP"};
    for (int k = 0; k < 4; k++)
        if (!strcasecmp(o->s, fns[k])) return 1 + k;
    return 0;
}

static sql_node *node_at(plan *p, sql_kind kind, const sql_node *at, const char *s)
{
    sql_node *n = sql_node_new(p->arena, kind, at->line, at->col);
    if (s) n->s = sql_arena_strndup(p->arena, s, strlen(s));
    return n;
}

static sql_node *binop_at(plan *p, const sql_node *at, const char *op, sql_node *a, sql_node *b)
{
    sql_node *n = node_at(p, SQL_BINOP, at, op);
    sql_node_add(p->arena, n, a);
    sql_node_add(p->arena, n, b);
    return n;
}

/* fn([DISTINCT] arg) [FILTER (WHERE ...)] OVER the window of o, with o's
 * DISTINCT and FILTER. */
static sql_node *over_like(plan *p, const sql_node *o, const char *fn, sql_node *arg)
{
    const sql_node *call = sql_kid(o, 3);
    sql_node *w = sql_node_like(p->arena, o), *f = sql_node_like(p->arena, call);
    w->s = f->s = sql_arena_strndup(p->arena, fn, strlen(fn));
    f->flags = call->flags & (SQL_F_FILTER | SQL_F_DISTINCT);
    sql_node_add(p->arena, f, arg);
    if (call->flags & SQL_F_FILTER) sql_node_add(p->arena, f, call->kids[call->nkids - 1]);
    for (int k = 0; k < 3; k++) sql_node_add(p->arena, w, (sql_node *)sql_kid(o, k));
    return sql_node_add(p->arena, w, f);
}

/* A copy of e whose variance calls over a window are Calcite's expansion of
 * them (its AvgVarianceConvertlet, which Flink plans OVER windows with):
 *
 *     VAR_POP(x)     (SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / COUNT(x)
 *     VAR_SAMP(x)    ... / CASE WHEN COUNT(x) = 1 THEN NULL ELSE COUNT(x) - 1 END
 *     STDDEV_*(x)    POWER(VAR_*(x), 0.5)
 *
 * each CAST to the call's type (x's, as AVG's), every aggregate OVER the
 * call's window with its FILTER: so they run on the OVER operator's SUM and
 * COUNT, retracted as rows leave a bounded frame, computed in x's type
 * (INT arithmetic on an INT column) as Flink computes them. A DISTINCT
 * variance makes each of them DISTINCT, as Calcite's window conversion does
 * (its HistogramShuttle applies the call's DISTINCT to every aggregate of
 * the expansion): SUM(DISTINCT x * x) counts a square once even when two
 * distinct values (-2 and 2) give it, as in Flink. */
static sql_node *expand_variance(plan *p, const sql_node *e, const sl_schema *sch, int *rc)
{
    if (!e || *rc != SL_OK) return (sql_node *)e;
    int vk = e->kind == SQL_OVER ? variance_kind(e) : 0;
    if (!vk) {
        sql_node *n = sql_node_like(p->arena, e);
        for (int i = 0; i < e->nkids; i++)
            sql_node_add(p->arena, n, expand_variance(p, e->kids[i], sch, rc));
        return n;
    }
    const sql_node *call = sql_kid(e, 3);
    int nargs = call ? call->nkids - ((call->flags & SQL_F_FILTER) ? 1 : 0) : 0;
    if (!call || nargs != 1 || (call->flags & SQL_F_STAR_ARG)) {
        *rc = PERR(e, "%s takes one argument", e->s);
        return NULL;
    }
    sql_node *x = call->kids[0];
    rel tmp = {.sch = *sch};
    sl_type t;
    const sl_dtype *dt = NULL;
    if (check_cols(p, x, &tmp) != SL_OK || type_expr_dt(p, x, sch, &t, &dt) != SL_OK) {
        *rc = SL_ERR;
        return NULL;
    }
    if (!sl_type_num_order(t) && t != SL_T_DECIMAL) {
        *rc = PERR(x, "%s takes a number, not %s", e->s, dt ? dt->text : sl_type_name(t));
        return NULL;
    }
    char type[64];
    if (t == SL_T_DECIMAL && dt) /* as AVG of a DECIMAL(p, s): DECIMAL(38, max(s, 6)) */
        snprintf(type, sizeof type, "DECIMAL(38, %d)", dt->s > 6 ? (int)dt->s : 6);
    else
        snprintf(type, sizeof type, "%s", dt ? dt->text : sl_type_name(t));
    char *nn = strstr(type, " NOT NULL");
    if (nn) *nn = '\0';
    sql_node *sumsq = over_like(p, e, "SUM", binop_at(p, x, "*", x, x));
    sql_node *sq = binop_at(p, e, "*", over_like(p, e, "SUM", x), over_like(p, e, "SUM", x));
    sql_node *diff = binop_at(p, e, "-", sumsq, binop_at(p, e, "/", sq, over_like(p, e, "COUNT", x)));
    sql_node *den = over_like(p, e, "COUNT", x);
    if ((vk - 1) & 1) { /* sample: n - 1, NULL for one row */
        sql_node *cs = node_at(p, SQL_CASE, e, NULL), *whens = node_at(p, SQL_LIST, e, NULL);
        sql_node *w = node_at(p, SQL_WHEN, e, NULL);
        sql_node_add(p->arena, w, binop_at(p, e, "=", den, node_at(p, SQL_NUM, e, "1")));
        sql_node_add(p->arena, w, node_at(p, SQL_NULL, e, NULL));
        sql_node_add(p->arena, whens, w);
        sql_node_add(p->arena, cs, NULL);
        sql_node_add(p->arena, cs, whens);
        sql_node_add(p->arena, cs, binop_at(p, e, "-", over_like(p, e, "COUNT", x),
                                            node_at(p, SQL_NUM, e, "1")));
        den = cs;
    }
    sql_node *r = binop_at(p, e, "/", diff, den);
    if ((vk - 1) & 2) {
        sql_node *pw = node_at(p, SQL_FUNC, e, "POWER");
        sql_node_add(p->arena, pw, r);
        sql_node_add(p->arena, pw, node_at(p, SQL_NUM, e, "0.5"));
        r = pw;
    }
    sql_node *cast = node_at(p, SQL_CAST, e, type);
    return sql_node_add(p->arena, cast, r);
}

int sql_plan_over(plan *p, const sql_node *sel, rel *out)
{
    const sql_node *items = sql_kid(sel, 0), *from = sql_kid(sel, 1), *where = sql_kid(sel, 2);
    over_ctx c = {.n = 0, .extra = NULL};
    for (int i = 0; i < items->nkids; i++) collect(items->kids[i], &c);
    if (c.n > MAX_OVER) return PERR(c.extra, "more than %d OVER calls in one SELECT", MAX_OVER);
    if (sql_kid(sel, 3) || sql_kid(sel, 4))
        return PERR(sql_kid(sel, 3) ? sql_kid(sel, 3) : sql_kid(sel, 4),
                    "OVER aggregation and GROUP BY / HAVING in one SELECT are not supported yet; "
                    "aggregate in a subquery");
    if (validate_calls(p, &c) != SL_OK) return SL_ERR;
    /* one window for all (Flink's words) */
    char *w0 = NULL;
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < c.n; i++) {
        const sql_node *o = c.calls[i];
        if (!sql_kid(o, 1)) {
            rc = sl_seterr(p->err, p->errlen, "line %d, column %d: Window '%s' not found",
                           o->oline, o->ocol, o->s2 ? o->s2 : "?");
            break;
        }
        char *w = window_text(o);
        if (!w0) {
            w0 = w;
        } else {
            if (strcmp(w, w0))
                rc = PERR(o, "Over Agg: Unsupported use of OVER windows. All aggregates must be "
                          "computed on the same window.");
            free(w);
        }
    }
    free(w0);
    if (rc != SL_OK) return SL_ERR;
    const sql_node *win = c.calls[0];

    /* the input, its WHERE, computed arguments and FILTER conditions */
    rel in = {0};
    if (plan_from(p, from, &in) != SL_OK) return SL_ERR;
    if (in.updating) {
        rc = PERR(win, "OVER aggregation doesn't support consuming update and delete changes "
                  "which is produced by %s", in.updater ? in.updater : "its input");
        goto done_in;
    }
    /* variance calls: their expansion into SUM and COUNT over the same window */
    int nvar = 0;
    for (int i = 0; i < c.n; i++) nvar += variance_kind(c.calls[i]) != 0;
    if (nvar) {
        sql_node *list = sql_node_like(p->arena, items);
        for (int i = 0; i < items->nkids; i++)
            sql_node_add(p->arena, list, expand_variance(p, items->kids[i], &in.sch, &rc));
        if (rc != SL_OK) goto done_in;
        items = list;
        c.n = 0;
        for (int i = 0; i < items->nkids; i++) collect(items->kids[i], &c);
        if (c.n > MAX_OVER) {
            rc = PERR(c.extra, "more than %d OVER calls in one SELECT (a variance counts as "
                      "seven)", MAX_OVER);
            goto done_in;
        }
        win = c.calls[0];
    }
    sl_schema orig;
    sl_schema_copy(&orig, &in.sch);
    int npre = 0;
    item *pre = sl_calloc((size_t)((SL_UDF_MAX_ARGS + 1) * c.n + 1), sizeof *pre);
    json_t *aggs = json_array();
    for (int i = 0; rc == SL_OK && i < c.n; i++) {
        sql_sbuf t = {0};
        rc = agg_item(p, c.calls[i], i, &in.sch, pre, &npre, &t);
        if (rc == SL_OK) json_array_append_new(aggs, json_string(t.p));
        free(t.p);
    }
    if (rc == SL_OK && where && check_cols(p, where, &in) != SL_OK) rc = SL_ERR;
    if (rc == SL_OK && (npre || where)) {
        int n = (int)in.sch.n + npre;
        item *its = sl_calloc((size_t)n, sizeof *its);
        for (int k = 0; rc == SL_OK && k < (int)in.sch.n; k++)
            rc = make_item(p, &its[k], col_node(p, sel, in.sch.fields[k].name), in.sch.fields[k].name,
                           &in.sch);
        for (int k = 0; k < npre; k++) {
            its[in.sch.n + k] = pre[k];
            memset(&pre[k], 0, sizeof pre[k]);
        }
        if (rc == SL_OK) rc = emit_calc(p, &in, its, n, where, "over-input");
        items_free(its, n);
    }
    items_free(pre, 2 * c.n + 1);

    /* ORDER BY and PARTITION BY */
    const sql_node *part = sql_kid(win, 0), *order = sql_kid(win, 1);
    const char *tcol = NULL;
    int proc = 0;
    if (rc == SL_OK) {
        const sql_node *o0 = order->kids[0], *e = sql_kid(o0, 0);
        int col = e->kind == SQL_COL ? sl_schema_find(&in.sch, e->s) : -1;
        if (order->nkids != 1 || col < 0 ||
            !((in.rowtime && !strcasecmp(in.sch.fields[col].name, in.rowtime)) ||
              (in.proctime && !strcasecmp(in.sch.fields[col].name, in.proctime)))) {
            rc = PERR(order->nkids != 1 ? order->kids[1] : e,
                      "OVER windows' ordering in stream mode must be defined on a time attribute.");
        } else if (o0->flags & SQL_F_DESC) {
            rc = PERR(o0, "The window can only be ordered in ASCENDING mode.");
        } else {
            tcol = in.sch.fields[col].name;
            proc = !(in.rowtime && !strcasecmp(tcol, in.rowtime));
        }
    }
    json_t *keys = json_array();
    for (int i = 0; rc == SL_OK && part && i < part->nkids; i++) {
        const sql_node *e = part->kids[i];
        int col = e->kind == SQL_COL ? sl_schema_find(&in.sch, e->s) : -1;
        if (col < 0) {
            if (e->kind == SQL_COL) rc = check_cols(p, e, &in);
            if (rc == SL_OK)
                rc = PERR(e, "PARTITION BY: a column is expected (compute expressions in a "
                          "subquery and name them)");
            break;
        }
        json_array_append_new(keys, json_string(in.sch.fields[col].name));
    }
    int rows = 0;
    int64_t preceding = -1;
    if (rc == SL_OK) rc = frame_of(p, win, &rows, &preceding);
    if (!sql_kid(win, 2) && !strcasecmp(win->s, "ROW_NUMBER")) rows = 1; /* Calcite's frame */
    for (int i = 0; rc == SL_OK && preceding >= 0 && i < c.n; i++)
        if (!strcasecmp(c.calls[i]->s, "LAG")) /* a bounded frame retracts; Flink's words */
            rc = PERR(c.calls[i], "LAG Function with retraction is not supported in stream mode.");

    /* the over_aggregate vertex */
    if (rc == SL_OK) {
        json_t *cfg = json_object();
        json_object_set(cfg, "partition-by", keys);
        json_object_set_new(cfg, "order-by", json_string(tcol));
        json_object_set_new(cfg, "time", json_string(proc ? "processing" : "event"));
        json_object_set_new(cfg, "frame", json_string(rows ? "rows" : "range"));
        char pre_s[32];
        if (preceding < 0) snprintf(pre_s, sizeof pre_s, "unbounded");
        else snprintf(pre_s, sizeof pre_s, "%lld", (long long)preceding);
        json_object_set_new(cfg, "preceding", json_string(pre_s));
        json_object_set(cfg, "aggregates", aggs);
        char *k = json_dumps(keys, JSON_COMPACT), *a = json_dumps(aggs, JSON_COMPACT);
        char *id = sl_sprintf("over|%s|%s|%s|%s|%s|%s", in.ident ? in.ident : "", k, tcol,
                              rows ? "rows" : "range", pre_s, a);
        char *uid = sl_sprintf("over-%s-%08x", in.ident ? in.ident : "q", fnv1a(id));
        free(k);
        free(a);
        free(id);
        int global = json_array_size(keys) == 0;
        char *vid = add_vertex(p, "over", "over_aggregate", uid, cfg, NULL, global ? 1 : 0);
        free(uid);
        if (global) add_edge(p, in.vid, vid, "rebalance", NULL, 0);
        else add_edge(p, in.vid, vid, "hash", keys, 0);
        free(in.vid);
        in.vid = vid;
        for (int i = 0; i < c.n; i++) {
            char nm[24];
            snprintf(nm, sizeof nm, "$ov%d", i);
            const sql_node *o = c.calls[i];
            const char *fn = o->s;
            sl_type t = SL_T_BIGINT;
            const sl_dtype *dt = NULL;
            if (over_udf(fn)) {
                t = over_udf(fn)->result;
                if (t == SL_T_DECIMAL) dt = over_udf(fn)->resdt;
            } else if (strcasecmp(fn, "COUNT") && strcasecmp(fn, "ROW_NUMBER") &&
                       strcasecmp(fn, "RANK") && strcasecmp(fn, "DENSE_RANK")) {
                /* SUM, MIN, MAX, AVG: the argument's type */
                const sql_node *call = sql_kid(o, 3);
                char an[24];
                snprintf(an, sizeof an, "$a%d", i);
                int ac = sl_schema_find(&in.sch, an);
                if (ac < 0 && call->kids[0]->kind == SQL_COL) ac = sl_schema_find(&in.sch, call->kids[0]->s);
                if (ac >= 0) t = in.sch.fields[ac].type;
                if (ac >= 0 && !strcasecmp(fn, "COLLECT")) { /* MULTISET<t> NOT NULL */
                    char *mt = sl_sprintf("MULTISET<%s> NOT NULL", in.sch.fields[ac].dt->text);
                    if (sl_dtype_parse(mt, &dt, NULL, 0) != SL_OK) dt = NULL;
                    free(mt);
                    t = SL_T_MULTISET;
                }
            }
            if (dt) sl_schema_add_dt(&in.sch, nm, dt);
            else sl_schema_add(&in.sch, nm, t);
        }
    }
    json_decref(keys);
    json_decref(aggs);

    /* the SELECT list */
    if (rc == SL_OK) {
        sql_node *list = sql_node_new(p->arena, SQL_LIST, items->line, items->col);
        for (int i = 0; i < items->nkids; i++) {
            const sql_node *it = items->kids[i], *e = sql_kid(it, 0);
            if (e->kind == SQL_STAR) {
                if (e->s && in.alias && strcasecmp(e->s, in.alias)) {
                    rc = PERR(e, "unknown table or alias '%s'", e->s);
                    break;
                }
                for (int k = 0; k < (int)orig.n; k++) {
                    sql_node *ni = sql_node_new(p->arena, SQL_ITEM, it->line, it->col);
                    sql_node_add(p->arena, ni, col_node(p, it, orig.fields[k].name));
                    sql_node_add(p->arena, list, ni);
                }
                continue;
            }
            sql_node *ni = sql_node_new(p->arena, SQL_ITEM, it->line, it->col);
            ni->s = it->s;
            if (!ni->s && e->kind != SQL_COL) {
                char nm[24];
                snprintf(nm, sizeof nm, "EXPR$%d", i);
                ni->s = sql_arena_strndup(p->arena, nm, strlen(nm));
            }
            sql_node_add(p->arena, ni, replace_over(p, e, &c));
            sql_node_add(p->arena, list, ni);
        }
        item *its = NULL;
        int n = 0;
        if (rc == SL_OK && select_items(p, list, &in, &its, &n) != SL_OK) rc = SL_ERR;
        if (rc == SL_OK) {
            rc = emit_calc(p, &in, its, n, NULL, "over-select");
            if (rc == SL_OK) carry_time_attrs(&in, its, n);
        }
        if (its) items_free(its, n);
    }
    sl_schema_free(&orig);
done_in:
    if (rc != SL_OK) {
        rel_free(&in);
        return SL_ERR;
    }
    *out = in;
    return SL_OK;
}
