/*
 * plan_match.c -- FROM t MATCH_RECOGNIZE (...) AS m: a `match_recognize`
 * vertex (operators/match_recognize.c) hashed on the PARTITION BY columns,
 * then a calc for the MEASURES.
 *
 * The operator knows nothing of SQL expressions over a match: what a DEFINE
 * condition or a measure reads of the match -- PREV(col, n), LAST/FIRST(v.col,
 * n), v.col of another variable, SUM/COUNT/AVG/MIN/MAX(v.col) or of an
 * expression of one variable (its text goes along, the operator evaluates it
 * per row), CLASSIFIER(), MATCH_ROWTIME(), MATCH_PROCTIME() -- is taken out of the expression here
 * and replaced by a column `mr$<i>` (a "reference" the operator computes).
 * A condition then is an ordinary expression over the input row plus its
 * references; the operator emits the partition key and every measure's
 * references, and the calc after it computes each measure's expression
 * (LAST(b.price) - FIRST(a.price) is `mr$1` - `mr$0`). Flink's refusals
 * (ALL ROWS PER MATCH, an ORDER BY not led by a time attribute, PREV/NEXT in
 * MEASURES, physical offsets, aggregates over two variables, the pattern's
 * limits) are given at their position. ORDER BY's further columns become
 * the operator's "order-by"; without AFTER MATCH the skip is TO NEXT ROW.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "plan_int.h"
#include "match_recognize.h"
#include "parse.h"
#include "duration.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

typedef struct mr_ctx {
    plan *p;
    const sl_mr_pattern *pat;
    const rel *in;
    int define_var;          /* the variable whose condition this is; -1: a measure */
    json_t *refs;            /* the references collected */
    sl_schema *sch;          /* the schema the expression is typed against (gains the refs) */
    const char *prefix;      /* "mr$" */
} mr_ctx;

static sql_node *copy_node(plan *p, const sql_node *n)
{
    sql_node *c = sql_arena_alloc(p->arena, sizeof *c);
    *c = *n;
    if (n->nkids) {
        c->kids = sql_arena_alloc(p->arena, sizeof *c->kids * (size_t)n->nkids);
        c->cap = n->nkids;
    }
    return c;
}

/* Add a reference; returns the COL node that reads it. An aggregate over an
 * expression has expr (its text over the input row) and its type in at. */
static sql_node *add_ref_x(mr_ctx *c, const sql_node *at, sl_mr_fn fn, int var, const char *col, int n,
                           const char *expr, sl_type at_type)
{
    sl_type ct = at_type;
    int ci = col ? sl_schema_find(&c->in->sch, col) : -1;
    if (ci >= 0) ct = c->in->sch.fields[ci].type;
    char name[32];
    snprintf(name, sizeof name, "%s%zu", c->prefix, json_array_size(c->refs));
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", name, "fn", sl_mr_fn_name(fn), "var",
                          var >= 0 ? sl_mr_pattern_var(c->pat, var) : "", "col",
                          ci >= 0 ? c->in->sch.fields[ci].name : "", "n", n);
    if (expr) json_object_set_new(r, "expr", json_string(expr));
    json_array_append_new(c->refs, r);
    sl_schema_add(c->sch, name, sl_mr_fn_type(fn, ct));
    sql_node *e = sql_node_new(c->p->arena, SQL_COL, at->line, at->col);
    e->s = sql_arena_strndup(c->p->arena, name, strlen(name));
    return e;
}

static sql_node *add_ref(mr_ctx *c, const sql_node *at, sl_mr_fn fn, int var, const char *col, int n)
{
    return add_ref_x(c, at, fn, var, col, n, NULL, SL_T_NULL);
}

/* e as the SQL standard's validator writes it in its messages: columns as
 * `V`.`col` (`*` for no variable), navigation with its offset. */
static void std_text(sql_sbuf *b, const sql_node *e)
{
    if (!e) return;
    if (e->kind == SQL_COL) {
        sql_sb_fmt(b, "`%s`.`%s`", e->s2 ? e->s2 : "*", e->s);
    } else if (e->kind == SQL_BINOP) {
        std_text(b, e->kids[0]);
        sql_sb_fmt(b, " %s ", e->s);
        std_text(b, e->kids[1]);
    } else if (e->kind == SQL_FUNC) {
        int nav = !strcasecmp(e->s, "PREV") || !strcasecmp(e->s, "NEXT"),
            fl = !strcasecmp(e->s, "FIRST") || !strcasecmp(e->s, "LAST");
        sql_sb_fmt(b, "%s(", e->s);
        for (char *q = b->p + b->len - strlen(e->s) - 1; *q && *q != '('; q++)
            *q = (char)toupper((unsigned char)*q);
        if (e->flags & SQL_F_STAR_ARG) sql_sb_str(b, "*");
        for (int i = 0; i < e->nkids; i++) {
            if (i) sql_sb_str(b, ", ");
            std_text(b, e->kids[i]);
        }
        if (e->nkids == 1 && (nav || fl)) sql_sb_str(b, nav ? ", 1" : ", 0");
        sql_sb_str(b, ")");
    } else {
        char *t = sql_unparse(e);
        sql_sb_str(b, t);
        free(t);
    }
}

static char *std_text_of(plan *p, const sql_node *e)
{
    sql_sbuf b = {0};
    std_text(&b, e);
    char *t = sql_sb_take(&b);
    char *r = sql_arena_strndup(p->arena, t, strlen(t));
    free(t);
    return r;
}

/* A column argument "v.col" or "col": its variable (-1 none) and column, checked. */
static int col_arg(mr_ctx *c, const sql_node *a, int *var, const char **col)
{
    plan *p = c->p;
    if (!a || a->kind != SQL_COL) return PERR(a, "expected a column, or a pattern variable's column (A.price)");
    *var = -1;
    if (a->s2 && (*var = sl_mr_pattern_find_var(c->pat, a->s2)) < 0)
        return PERR(a, "unknown pattern variable '%s'", a->s2);
    if (sl_schema_find(&c->in->sch, a->s) < 0) return PERR(a, "unknown column '%s'", a->s);
    *col = a->s;
    return SL_OK;
}

static int offset_arg(mr_ctx *c, const sql_node *f, int i, int *n)
{
    plan *p = c->p;
    const sql_node *a = sql_kid(f, i);
    *n = 0;
    if (!a) return SL_OK;
    if (a->kind != SQL_NUM || strchr(a->s, '.') || atol(a->s) < 0 || atol(a->s) > 100000)
        return PERR(a, "the offset of %s must be a non-negative integer literal", f->s);
    *n = (int)atol(a->s);
    return SL_OK;
}

static sql_node *rewrite(mr_ctx *c, const sql_node *e, int *rc);

/* The one variable an aggregate's argument reads (*vname, "*" for columns
 * without one) and how many columns it reads; *multi when it reads two.
 * Navigation and aggregates inside the argument are refused. */
static int agg_walk(mr_ctx *c, const sql_node *e, const char **vname, int *ncols, int *multi)
{
    plan *p = c->p;
    if (!e) return SL_OK;
    if (e->kind == SQL_COL) {
        const char *v = e->s2 ? e->s2 : "*";
        if (e->s2 && sl_mr_pattern_find_var(c->pat, e->s2) < 0)
            return PERR(e, "unknown pattern variable '%s'", e->s2);
        if (sl_schema_find(&c->in->sch, e->s) < 0) return PERR(e, "unknown column '%s'", e->s);
        if (*vname && strcasecmp(*vname, v)) *multi = 1;
        if (!*vname) *vname = v;
        (*ncols)++;
        return SL_OK;
    }
    if (e->kind == SQL_OVER || e->kind == SQL_STAR) return PERR(e, "not allowed in MATCH_RECOGNIZE");
    if (e->kind == SQL_FUNC && (sl_mr_fn_parse(e->s) >= 0 || !strcasecmp(e->s, "NEXT")))
        return PERR(e, "%s inside an aggregate of MATCH_RECOGNIZE is not supported", e->s);
    for (int i = 0; i < e->nkids; i++)
        if (agg_walk(c, e->kids[i], vname, ncols, multi) != SL_OK) return SL_ERR;
    return SL_OK;
}

/* e without its pattern variables (v.col is col of the row aggregated). */
static sql_node *strip_vars(plan *p, const sql_node *e)
{
    sql_node *cp = copy_node(p, e);
    if (cp->kind == SQL_COL) cp->s2 = NULL;
    for (int i = 0; i < e->nkids; i++)
        if (e->kids[i]) cp->kids[i] = strip_vars(p, e->kids[i]);
    return cp;
}

/* SUM(A.price * A.qty): the aggregate over an expression of one variable's
 * rows (of every row when its columns name none). */
static sql_node *agg_expr(mr_ctx *c, const sql_node *e, sl_mr_fn fn, int *rc)
{
    plan *p = c->p;
    const char *vname = NULL;
    int ncols = 0, multi = 0;
    sl_type t = SL_T_NULL;
    if (agg_walk(c, e->kids[0], &vname, &ncols, &multi) != SL_OK) goto err;
    if (multi) {
        PERR(e, "Multiple pattern variables in '%s'", std_text_of(p, e));
        goto err;
    }
    if (!ncols) {
        PERR(e, "No pattern variable specified in aggregate");
        goto err;
    }
    int var = strcmp(vname, "*") ? sl_mr_pattern_find_var(c->pat, vname) : -1;
    sql_node *arg = strip_vars(p, e->kids[0]);
    if (type_expr(p, arg, &c->in->sch, &t) != SL_OK) goto err;
    if (sl_mr_fn_type(fn, t) == SL_T_NULL) {
        PERR(e, "%s does not take a %s argument", sl_mr_fn_name(fn), sl_type_name(t));
        goto err;
    }
    char *text = sql_unparse(arg);
    sql_node *r = add_ref_x(c, e, fn, var, NULL, 0, text, t);
    free(text);
    return r;
err:
    *rc = SL_ERR;
    return NULL;
}

/* PREV / NEXT. In MEASURES both are refused, as Flink refuses them; in
 * DEFINE an offset 0 is its argument, and PREV(col, n) of a column without
 * a variable is the row n before the current one in the match; PREV of a
 * variable's column and NEXT with an offset are physical offsets, refused. */
static sql_node *rewrite_nav(mr_ctx *c, const sql_node *e, int *rc)
{
    plan *p = c->p;
    int n = 1, var = -1;
    const char *col = NULL;
    if (c->define_var < 0) {
        PERR(e, "Cannot use PREV/NEXT in MEASURE '%s'", std_text_of(p, e));
        goto err;
    }
    if (e->nkids < 1 || e->nkids > 2) {
        PERR(e, "wrong number of arguments to %s", e->s);
        goto err;
    }
    if (e->nkids == 2 && offset_arg(c, e, 1, &n) != SL_OK) goto err;
    if (n == 0) return rewrite(c, e->kids[0], rc);
    const sql_node *a = e->kids[0];
    if (!strcasecmp(e->s, "NEXT") || (a && a->kind != SQL_COL) || (a && a->s2)) {
        PERR(e, "Physical offsets within partition are not supported (NEXT, or PREV of an "
             "expression or of a pattern variable's column); PREV(col, n) is the row n before "
             "the current one in the match, LAST(V.col, n) the n-th last row of V");
        goto err;
    }
    if (col_arg(c, a, &var, &col) != SL_OK) goto err;
    return add_ref(c, e, SL_MR_PREV, -1, col, n);
err:
    *rc = SL_ERR;
    return NULL;
}

static sql_node *rewrite_func(mr_ctx *c, const sql_node *e, int *rc)
{
    plan *p = c->p;
    int fn = sl_mr_fn_parse(e->s), var = -1, n = 0;
    const char *col = NULL;
    if (fn == SL_MR_PREV || !strcasecmp(e->s, "NEXT")) return rewrite_nav(c, e, rc);
    switch (fn) {
    case SL_MR_LAST: case SL_MR_FIRST:
        if (e->nkids < 1 || e->nkids > 2) break;
        if (col_arg(c, e->kids[0], &var, &col) != SL_OK || offset_arg(c, e, 1, &n) != SL_OK) goto err;
        if (fn == SL_MR_LAST && var == -1 && n == 0 && c->define_var >= 0)
            return rewrite(c, e->kids[0], rc); /* LAST(col): the current row */
        return add_ref(c, e, (sl_mr_fn)fn, var, col, n);
    case SL_MR_SUM: case SL_MR_COUNT: case SL_MR_AVG: case SL_MR_MIN: case SL_MR_MAX:
        if (e->flags & (SQL_F_DISTINCT | SQL_F_FILTER)) {
            PERR(e, "DISTINCT and FILTER aggregations are not supported in MATCH_RECOGNIZE");
            goto err;
        }
        if (fn == SL_MR_COUNT && (e->flags & SQL_F_STAR_ARG))
            return add_ref(c, e, SL_MR_COUNT, -1, NULL, 0);
        if (e->nkids != 1) break;
        if (!e->kids[0] || e->kids[0]->kind != SQL_COL) return agg_expr(c, e, (sl_mr_fn)fn, rc);
        if (col_arg(c, e->kids[0], &var, &col) != SL_OK) goto err;
        {
            int ci = sl_schema_find(&c->in->sch, col);
            if (sl_mr_fn_type((sl_mr_fn)fn, c->in->sch.fields[ci].type) == SL_T_NULL) {
                PERR(e, "%s does not take a %s argument", sl_mr_fn_name((sl_mr_fn)fn),
                     sl_type_name(c->in->sch.fields[ci].type));
                goto err;
            }
        }
        return add_ref(c, e, (sl_mr_fn)fn, var, col, 0);
    case SL_MR_CLASSIFIER: case SL_MR_ROWTIME: case SL_MR_PROCTIME:
        if (e->nkids) break;
        if (fn != SL_MR_CLASSIFIER && c->define_var >= 0) {
            PERR(e, "%s() is allowed in MEASURES only", e->s);
            goto err;
        }
        return add_ref(c, e, (sl_mr_fn)fn, -1, NULL, 0);
    default: {
        sql_node *cp = copy_node(p, e);
        for (int i = 0; i < e->nkids; i++)
            if (e->kids[i] && !(cp->kids[i] = rewrite(c, e->kids[i], rc))) return NULL;
        return cp;
    }
    }
    PERR(e, "wrong number of arguments to %s", e->s);
err:
    *rc = SL_ERR;
    return NULL;
}

/* e with every reference to the match replaced by a reference column; NULL
 * with *rc = SL_ERR (the message in p->err) when e reads what it may not. */
static sql_node *rewrite(mr_ctx *c, const sql_node *e, int *rc)
{
    plan *p = c->p;
    if (e->kind == SQL_FUNC) return rewrite_func(c, e, rc);
    if (e->kind == SQL_OVER || e->kind == SQL_STAR) {
        PERR(e, "not allowed in MATCH_RECOGNIZE");
        *rc = SL_ERR;
        return NULL;
    }
    if (e->kind == SQL_COL) {
        int var = -1;
        if (e->s2 && (var = sl_mr_pattern_find_var(c->pat, e->s2)) < 0) {
            PERR(e, "unknown pattern variable '%s'", e->s2);
            *rc = SL_ERR;
            return NULL;
        }
        if (sl_schema_find(&c->in->sch, e->s) < 0) {
            PERR(e, "unknown column '%s'", e->s);
            *rc = SL_ERR;
            return NULL;
        }
        if (c->define_var >= 0 && (var < 0 || var == c->define_var)) { /* the current row */
            sql_node *cp = copy_node(p, e);
            cp->s2 = NULL;
            return cp;
        }
        return add_ref(c, e, SL_MR_LAST, var, e->s, 0); /* the last row of var (of the match) */
    }
    sql_node *cp = copy_node(p, e);
    for (int i = 0; i < e->nkids; i++)
        if (e->kids[i] && !(cp->kids[i] = rewrite(c, e->kids[i], rc))) return NULL;
    return cp;
}

static int plan_order(plan *p, const sql_node *order, const rel *in, const char **tcol, int *proc,
                      json_t *cfg)
{
    const sql_node *o = sql_kid(order, 0), *e = o ? sql_kid(o, 0) : NULL;
    const char *name = e && e->kind == SQL_COL ? e->s : NULL;
    if (name && in->rowtime && !strcasecmp(name, in->rowtime)) *proc = 0;
    else if (name && in->proctime && !strcasecmp(name, in->proctime)) *proc = 1;
    else return PERR(o ? o : order, "You must specify either rowtime or proctime for order by as the first one.");
    if (o->flags & SQL_F_DESC)
        return PERR(o, "Primary sort order of a streaming table must be ascending on time.");
    *tcol = name;
    if (order->nkids > 1 && *proc)
        return PERR(order->kids[1], "ORDER BY a processing-time attribute with further columns is "
                    "not supported in MATCH_RECOGNIZE (rows are taken in their order of arrival)");
    json_t *more = json_array();
    for (int i = 1; i < order->nkids; i++) { /* they sort the rows of one time */
        const sql_node *x = order->kids[i], *c = sql_kid(x, 0);
        int ci = c && c->kind == SQL_COL ? sl_schema_find(&in->sch, c->s) : -1;
        if (ci < 0 || i > 16) {
            json_decref(more);
            return PERR(x, i > 16 ? "at most 16 ORDER BY columns follow the time attribute"
                                  : "ORDER BY: a column of the input is expected after the time attribute");
        }
        char *entry = sl_sprintf("%s%s", in->sch.fields[ci].name, x->flags & SQL_F_DESC ? " DESC" : "");
        json_array_append_new(more, json_string(entry));
        free(entry);
    }
    if (json_array_size(more)) json_object_set(cfg, "order-by", more);
    json_decref(more);
    return SL_OK;
}

static int plan_skip(plan *p, const sql_node *s, const sl_mr_pattern *pat, json_t *cfg)
{
    const char *what = NULL;
    if (!s) { /* without AFTER MATCH, as Flink: the next search starts at the match's second row */
        json_object_set_new(cfg, "skip", json_string("to-next-row"));
        return SL_OK;
    }
    if (!strcmp(s->s, "PAST LAST ROW")) what = "past-last-row";
    else if (!strcmp(s->s, "TO NEXT ROW")) what = "to-next-row";
    else if (!strcmp(s->s, "TO FIRST")) what = "to-first";
    else if (!strcmp(s->s, "TO LAST")) what = "to-last";
    if (!what)
        return PERR(s, "expected AFTER MATCH SKIP PAST LAST ROW, TO NEXT ROW, TO FIRST v or TO LAST v");
    if (s->s2) {
        if (sl_mr_pattern_find_var(pat, s->s2) < 0)
            return PERR(s, "unknown pattern variable '%s' in AFTER MATCH SKIP", s->s2);
        json_object_set_new(cfg, "skip-var", json_string(s->s2));
    }
    json_object_set_new(cfg, "skip", json_string(what));
    return SL_OK;
}

static int plan_defines(plan *p, const sql_node *defs, const sl_mr_pattern *pat, const rel *in,
                        json_t *cfg)
{
    json_t *list = json_array();
    json_object_set_new(cfg, "define", list);
    for (int i = 0; i < defs->nkids; i++) {
        const sql_node *d = defs->kids[i];
        int v = sl_mr_pattern_find_var(pat, d->s);
        if (v < 0) return PERR(d, "'%s' is defined but is no variable of the PATTERN", d->s);
        for (int j = 0; j < i; j++)
            if (!strcasecmp(defs->kids[j]->s, d->s)) return PERR(d, "'%s' is defined twice", d->s);
        sl_schema sch;
        sl_schema_copy(&sch, &in->sch);
        mr_ctx c = {.p = p, .pat = pat, .in = in, .define_var = v, .refs = json_array(), .sch = &sch,
                    .prefix = "mr$"};
        int rc = SL_OK;
        sql_node *e = rewrite(&c, d->kids[0], &rc);
        sl_type t = SL_T_NULL;
        if (e && rc == SL_OK) rc = type_expr(p, e, &sch, &t);
        if (e && rc == SL_OK && t != SL_T_BOOLEAN && t != SL_T_NULL)
            rc = PERR(d->kids[0], "the condition of '%s' must be BOOLEAN, not %s", d->s, sl_type_name(t));
        sl_schema_free(&sch);
        if (!e || rc != SL_OK) {
            json_decref(c.refs);
            return SL_ERR;
        }
        char *text = sql_unparse(e);
        json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "var", sl_mr_pattern_var(pat, v),
                                              "condition", text, "refs", c.refs));
        free(text);
    }
    return SL_OK;
}

#define MR_KEY "mr$key"

/* Without PARTITION BY every row has the one key MR_KEY = 0 (a calc
 * appends it) and the operator runs in one task. */
static int add_constant_key(plan *p, rel *in)
{
    int n = in->sch.n, rc = SL_OK;
    item *its = sl_calloc((size_t)n + 2, sizeof *its);
    for (int i = 0; rc == SL_OK && i < n; i++) {
        sql_node *c = sql_node_new(p->arena, SQL_COL, 0, 0);
        c->s = sql_arena_strndup(p->arena, in->sch.fields[i].name, strlen(in->sch.fields[i].name));
        rc = make_item(p, &its[i], c, in->sch.fields[i].name, &in->sch);
    }
    sql_node *zero = sql_node_new(p->arena, SQL_NUM, 0, 0);
    zero->s = sql_arena_strndup(p->arena, "0", 1);
    if (rc == SL_OK) rc = make_item(p, &its[n], zero, MR_KEY, &in->sch);
    if (rc == SL_OK) rc = emit_calc(p, in, its, n + 1, NULL, "match_key");
    items_free(its, n + 1);
    return rc;
}

int sql_plan_match(plan *p, const sql_node *f, rel *out)
{
    const sql_node *part = sql_kid(f, 1), *order = sql_kid(f, 2), *meas = sql_kid(f, 3),
                   *rows = sql_kid(f, 4), *skip = sql_kid(f, 5), *patn = sql_kid(f, 6),
                   *within = sql_kid(f, 7), *defs = sql_kid(f, 8);
    rel in = {0};
    json_t *cfg = json_object(), *keys = json_array();
    sl_mr_pattern *pat = NULL;
    item *its = NULL;
    int nits = 0, rc = SL_ERR;
    sl_schema opsch;
    sl_schema_init(&opsch);
    if (plan_from(p, sql_kid(f, 0), &in) != SL_OK) goto done;
    if (in.updating) {
        PERR(f, "Match Recognize doesn't support consuming update changes which is produced by %s",
             in.updater ? in.updater : "its input");
        goto done;
    }
    if (rows && strcmp(rows->s, "ONE ROW PER MATCH")) {
        if (!strcmp(rows->s, "ALL ROWS PER MATCH")) PERR(rows, "All rows per match mode is not supported yet.");
        else PERR(rows, "expected ONE ROW PER MATCH or ALL ROWS PER MATCH");
        goto done;
    }
    const char *tcol = NULL;
    int proc = 0;
    if (plan_order(p, order, &in, &tcol, &proc, cfg) != SL_OK) goto done;
    char perr[300];
    if (!(pat = sl_mr_pattern_compile(patn->s, perr, sizeof perr))) {
        PERR(patn, "%s", perr);
        goto done;
    }
    json_object_set_new(cfg, "pattern", json_string(patn->s));
    if (proc) json_object_set_new(cfg, "time-domain", json_string("processing"));
    else json_object_set_new(cfg, "time", json_string(tcol));
    int npart = part ? part->nkids : 0;
    if (!npart && add_constant_key(p, &in) != SL_OK) goto done; /* one task, as Flink */
    if (!npart) {
        json_array_append_new(keys, json_string(MR_KEY));
        sl_schema_add(&opsch, MR_KEY, SL_T_INT);
    }
    for (int i = 0; i < npart; i++) {
        const sql_node *k = part->kids[i];
        int c = k->kind == SQL_COL ? sl_schema_find(&in.sch, k->s) : -1;
        if (c < 0) {
            PERR(k, k->kind == SQL_COL ? "unknown column '%s'" : "PARTITION BY takes columns%s",
                 k->kind == SQL_COL ? k->s : "");
            goto done;
        }
        json_array_append_new(keys, json_string(in.sch.fields[c].name));
        sl_schema_add_dt(&opsch, in.sch.fields[c].name, in.sch.fields[c].dt);
    }
    json_object_set(cfg, "partition-keys", keys);
    if (plan_skip(p, skip, pat, cfg) != SL_OK) goto done;
    if (within) {
        char txt[256], ebuf[256];
        int64_t ms = 0;
        snprintf(txt, sizeof txt, "INTERVAL '%s' %s", within->s ? within->s : "", within->s2 ? within->s2 : "");
        if (within->kind != SQL_INTERVAL || sl_interval_parse(txt, &ms, ebuf, sizeof ebuf) != SL_OK || ms <= 0) {
            PERR(within, "Only constant intervals with millisecond resolution are supported as time "
                 "constraints of patterns.");
            goto done;
        }
        char wtxt[48];
        snprintf(wtxt, sizeof wtxt, "%lld ms", (long long)ms);
        json_object_set_new(cfg, "within", json_string(wtxt));
    }
    if (plan_defines(p, defs, pat, &in, cfg) != SL_OK) goto done;

    /* MEASURES: their references are the operator's output after the key */
    json_t *mrefs = json_array();
    json_object_set_new(cfg, "measures", mrefs);
    int nm = meas ? meas->nkids : 0;
    its = sl_calloc((size_t)(npart + nm) + 1, sizeof *its);
    mr_ctx mc = {.p = p, .pat = pat, .in = &in, .define_var = -1, .refs = mrefs, .sch = &opsch,
                 .prefix = "mr$"};
    sql_node *mexpr[256];
    if (nm > 256) {
        PERR(meas, "too many measures");
        goto done;
    }
    for (int i = 0; i < nm; i++) {
        int rrc = SL_OK;
        for (int j = 0; j < i; j++)
            if (!strcasecmp(meas->kids[j]->s, meas->kids[i]->s)) {
                PERR(meas->kids[i], "measure '%s' is named twice", meas->kids[i]->s);
                goto done;
            }
        if (!(mexpr[i] = rewrite(&mc, meas->kids[i]->kids[0], &rrc)) || rrc != SL_OK) goto done;
    }
    for (int i = 0; i < npart; i++) {
        const char *kn = opsch.fields[i].name;
        sql_node *col = sql_node_new(p->arena, SQL_COL, part->kids[i]->line, part->kids[i]->col);
        col->s = sql_arena_strndup(p->arena, kn, strlen(kn));
        if (make_item(p, &its[nits], col, kn, &opsch) != SL_OK) goto done;
        nits++;
    }
    for (int i = 0; i < nm; i++) {
        for (int k = 0; k < npart; k++)
            if (!strcasecmp(opsch.fields[k].name, meas->kids[i]->s)) {
                PERR(meas->kids[i], "measure '%s' has the name of a PARTITION BY column", meas->kids[i]->s);
                goto done;
            }
        if (make_item(p, &its[nits], mexpr[i], meas->kids[i]->s, &opsch) != SL_OK) goto done;
        nits++;
    }

    /* the vertex, hashed on the partition columns */
    char *k = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
    char *uid = sl_sprintf("match-%s-%08x", in.ident ? in.ident : "q", fnv1a(k));
    free(k);
    char *vid = add_vertex(p, "match", "match_recognize", uid, cfg, NULL, npart ? 0 : 1);
    cfg = NULL;
    free(uid);
    add_edge(p, in.vid, vid, "hash", keys, 0);
    free(in.vid);
    in.vid = vid;
    sl_schema_free(&in.sch);
    sl_schema_copy(&in.sch, &opsch);
    free(in.rowtime);
    free(in.proctime);
    in.rowtime = in.proctime = NULL;
    if (emit_calc(p, &in, its, nits, NULL, "match_measures") != SL_OK) goto done;
    for (int i = 0; i < nm; i++) { /* MATCH_ROWTIME() / MATCH_PROCTIME() are time attributes */
        const sql_node *e = meas->kids[i]->kids[0];
        int fn = e->kind == SQL_FUNC && !e->nkids ? sl_mr_fn_parse(e->s) : -1;
        if (fn == SL_MR_ROWTIME && !in.rowtime) in.rowtime = sl_strdup(meas->kids[i]->s);
        if (fn == SL_MR_PROCTIME && !in.proctime) in.proctime = sl_strdup(meas->kids[i]->s);
    }
    free(in.alias);
    in.alias = dup0(f->s2);
    char *ident = sl_sprintf("match(%s)", in.ident ? in.ident : "");
    free(in.ident);
    in.ident = ident;
    *out = in;
    memset(&in, 0, sizeof in);
    rc = SL_OK;
done:
    rel_free(&in);
    json_decref(cfg);
    json_decref(keys);
    sl_mr_pattern_free(pat);
    items_free(its, nits);
    sl_schema_free(&opsch);
    return rc;
}
