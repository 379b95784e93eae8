/*
 * plan_join.c -- planning FROM a [INNER|LEFT|RIGHT|FULL] JOIN b ON ... (and
 * FROM a, b WHERE ... is refused: Sluice has no cross join).
 *
 * The ON condition is split at AND into conjuncts:
 *   - `x = y` with x a column of one side and y of the other: an equi-key
 *     (the join is hashed on these columns; at least one is needed);
 *   - comparisons of the two sides' event-time attributes, possibly shifted
 *     by interval literals (`p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND
 *     o.ts + INTERVAL '1' MINUTE`, `p.ts >= o.ts - ...`, `o.ts < p.ts`):
 *     each is turned into a bound on right.time - left.time;
 *   - anything else: a residual condition. A regular join evaluates it
 *     itself, per pair of rows of a key (its "condition", as Flink's join
 *     does), so an outer join pads exactly the rows it leaves unmatched and
 *     an inner join emits no pair it would drop; an interval, window or
 *     temporal join applies it in a calc after an inner join and refuses it
 *     in an outer one (it would decide which rows are outer).
 * With a lower and an upper time bound the join is an interval_join
 * (operators/interval_join.c: append-only inputs, state bounded by the
 * interval, the left time attribute stays a time attribute); otherwise it
 * is a regular_join (operators/regular_join.c: state bounded only by
 * table.exec.state.ttl: the operator declares its state unbounded without one
 * (sl_plan_unbounded), and the submission warns; its
 * output has no time attribute and is a changelog when an input is or the
 * join is outer). Two windowed inputs (window TVFs, window aggregations)
 * whose keys include both window bounds make a window_join instead, keyed by
 * the other keys (window_start when there are none).
 *
 * Window TVFs read without aggregation are planned here too
 * (sql_plan_window_tvf): a window_tvf vertex appending the window columns.
 *
 * Filters before the join (Flink's FilterIntoJoin): a conjunct of the
 * enclosing SELECT's WHERE that reads the columns of one table of the join
 * only -- qualified by its alias, or unqualified and not a column of the
 * other side -- through operators whose result depends on their operands
 * alone (no function calls, no subqueries, no processing-time attribute) is
 * also applied in a calc between that table's scan and the join, when the
 * table's rows can only reach the output with their own values: either
 * side of an inner join, the left side of a LEFT, semi or anti join, the
 * right side of a RIGHT join (never a side whose rows decide whether the
 * other side's are padded). The rows it drops are rows the WHERE would drop
 * after the join anyway, and the WHERE still runs there, so the result is
 * the same; the join just keeps fewer rows in its state. The join's uid
 * does not depend on it, so a savepoint keeps mapping.
 *
 * Names: the joined row carries the left columns, then the right ones, a
 * right name already taken getting a numeric suffix (operators/join.h).
 * The query above the join names columns as `alias.column` or, when
 * unambiguous, `column`; sql_join_resolve_select rewrites every reference
 * into the joined row's name before the rest of the planner sees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "expr.h"
#include "operator.h"
#include "sl.h"
#include "parse.h"
#include "plan_int.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

/* ---- column maps ------------------------------------------------------------ */

typedef struct jcol {
    char *qual;     /* the alias that names it (NULL: none) */
    char *name;     /* its name under that alias */
    int col;        /* its column in the joined row */
} jcol;

struct sql_join_map {
    jcol *c;
    int n;
    char **quals;   /* every alias of the join, for messages */
    int nquals;
};

void sql_join_map_free(sql_join_map *m)
{
    if (!m) return;
    for (int i = 0; i < m->n; i++) {
        free(m->c[i].qual);
        free(m->c[i].name);
    }
    for (int i = 0; i < m->nquals; i++) free(m->quals[i]);
    free(m->quals);
    free(m->c);
    free(m);
}

static void map_add(sql_join_map *m, const char *qual, const char *name, int col)
{
    m->c = sl_realloc(m->c, sizeof *m->c * (size_t)(m->n + 1));
    m->c[m->n++] = (jcol){dup0(qual), sl_strdup(name), col};
}

static void map_qual(sql_join_map *m, const char *q)
{
    if (!q) return;
    for (int i = 0; i < m->nquals; i++)
        if (!strcasecmp(m->quals[i], q)) return;
    m->quals = sl_realloc(m->quals, sizeof *m->quals * (size_t)(m->nquals + 1));
    m->quals[m->nquals++] = sl_strdup(q);
}

sql_join_map *sql_join_map_copy(const sql_join_map *m)
{
    if (!m) return NULL;
    sql_join_map *c = sl_calloc(1, sizeof *c);
    for (int i = 0; i < m->n; i++) map_add(c, m->c[i].qual, m->c[i].name, m->c[i].col);
    for (int i = 0; i < m->nquals; i++) map_qual(c, m->quals[i]);
    return c;
}

/* One side's names: a nested join's map, or its columns under its alias. */
static void side_names(const rel *r, sql_join_map *into, int offset)
{
    if (r->jmap) {
        for (int i = 0; i < r->jmap->n; i++)
            map_add(into, r->jmap->c[i].qual, r->jmap->c[i].name, r->jmap->c[i].col + offset);
        for (int i = 0; i < r->jmap->nquals; i++) map_qual(into, r->jmap->quals[i]);
        return;
    }
    for (int i = 0; i < r->sch.n; i++) map_add(into, r->alias, r->sch.fields[i].name, i + offset);
    map_qual(into, r->alias);
}

static void quals_text(const sql_join_map *m, sql_sbuf *b)
{
    for (int i = 0; i < m->nquals; i++) sql_sb_fmt(b, "%s'%s'", i ? ", " : "", m->quals[i]);
}

/* The joined-row column a reference names: SL_OK with *col, SL_DONE when no
 * such name exists (unqualified: it may be a function such as
 * CURRENT_TIMESTAMP), SL_ERR for a wrong qualifier or an ambiguous name. */
static int resolve(plan *p, const sql_join_map *m, const sql_node *e, int *col)
{
    int found = -1, qual_known = 0;
    for (int i = 0; i < m->n; i++) {
        const jcol *c = &m->c[i];
        if (e->s2 && (!c->qual || strcasecmp(c->qual, e->s2))) continue;
        qual_known = 1;
        if (strcasecmp(c->name, e->s)) continue;
        if (found >= 0 && found != c->col) {
            return PERR(e, "column '%s' is ambiguous: both sides of the join have it; qualify it "
                        "(%s.%s or %s.%s)", e->s, m->c[found].qual ? m->c[found].qual : "?", e->s,
                        c->qual ? c->qual : "?", e->s);
        }
        if (found < 0) found = i;
    }
    if (found >= 0) {
        *col = m->c[found].col;
        return SL_OK;
    }
    if (e->s2 && !qual_known) {
        sql_sbuf b = {0};
        quals_text(m, &b);
        int rc = PERR(e, "unknown table or alias '%s' (the join names %s)", e->s2, b.p ? b.p : "");
        free(b.p);
        return rc;
    }
    if (e->s2) return PERR(e, "unknown column '%s' in '%s'", e->s, e->s2);
    return SL_DONE;
}

/* A copy of e with every column reference renamed to its joined-row name. */
static int rewrite(plan *p, const sql_join_map *m, const sl_schema *sch, const sql_node *e,
                   sql_node **out)
{
    if (!e) {
        *out = NULL;
        return SL_OK;
    }
    sql_node *n = sql_node_new(p->arena, e->kind, e->line, e->col);
    n->flags = e->flags;
    n->s = e->s;
    n->s2 = e->s2;
    n->src = e->src;
    n->srclen = e->srclen;
    *out = n;
    if (e->kind == SQL_COL && e->s2) { /* r.f: no table r, but a ROW column r of one side */
        bool qual = false;
        for (int i = 0; i < m->n && !qual; i++)
            qual = m->c[i].qual && !strcasecmp(m->c[i].qual, e->s2);
        sql_node base = {.kind = SQL_COL, .line = e->line, .col = e->col, .s = e->s2};
        int col;
        if (!qual && resolve(p, m, &base, &col) == SL_OK && sch->fields[col].type == SL_T_ROW) {
            sql_node *c = sql_node_new(p->arena, SQL_COL, e->line, e->col);
            const char *nm = sch->fields[col].name;
            c->s = sql_arena_strndup(p->arena, nm, strlen(nm));
            c->flags = SQL_F_QUOTED;
            n->kind = SQL_FIELD;
            n->s2 = NULL;
            n->flags = 0;
            n->oline = e->line;
            n->ocol = e->col + (int)strlen(e->s2) + 1;
            sql_node_add(p->arena, n, c);
            return SL_OK;
        }
    }
    if (e->kind == SQL_COL) {
        int col;
        int rc = resolve(p, m, e, &col);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_OK) {
            const char *nm = sch->fields[col].name;
            n->s = sql_arena_strndup(p->arena, nm, strlen(nm));
            n->s2 = NULL;
            n->flags |= SQL_F_QUOTED;
        }
        return SL_OK;
    }
    for (int i = 0; i < e->nkids; i++) {
        sql_node *k;
        if (rewrite(p, m, sch, e->kids[i], &k) != SL_OK) return SL_ERR;
        sql_node_add(p->arena, n, k);
    }
    return SL_OK;
}

/* ---- the joins planned in this job ------------------------------------------- */

struct plan_joins {
    const sql_node **node;
    rel *r;
    int n;
};

void sql_plan_joins_free(plan *p)
{
    plan_joins *j = p->joins;
    if (!j) return;
    for (int i = 0; i < j->n; i++) rel_free(&j->r[i]);
    free(j->r);
    free(j->node);
    free(j);
    p->joins = NULL;
}

static const rel *joins_find(plan *p, const sql_node *f)
{
    for (int i = 0; p->joins && i < p->joins->n; i++)
        if (p->joins->node[i] == f) return &p->joins->r[i];
    return NULL;
}

static void joins_add(plan *p, const sql_node *f, const rel *r)
{
    if (!p->joins) p->joins = sl_calloc(1, sizeof *p->joins);
    plan_joins *j = p->joins;
    j->node = sl_realloc(j->node, sizeof *j->node * (size_t)(j->n + 1));
    j->r = sl_realloc(j->r, sizeof *j->r * (size_t)(j->n + 1));
    j->node[j->n] = f;
    rel_copy(&j->r[j->n], r);
    j->n++;
}

/* ---- the ON condition --------------------------------------------------------- */

typedef struct jside {
    rel r;
    int off;            /* its first column in the joined row */
} jside;

typedef struct jplan {
    jside s[2];
    sql_join_map *map;  /* both sides' names */
    sl_schema out;      /* the joined row */
    int nkeys;
    int kcol[2][SL_MAX_KEY_COLS];
    int has_lo, has_hi;
    int64_t lo, hi;     /* bounds on right.time - left.time */
    int tcol[2];        /* the time columns the bounds use (-1: none yet) */
    const sql_node **resid;
    int nresid;
    int semi;           /* 1 semi, 2 anti join (plan_subquery.c): time comparisons stay conditions */
    int added[2];       /* key columns access_keys computed at the end of each side */
} jplan;

/* Which side a joined-row column belongs to, and its column there. */
static int side_of(const jplan *j, int col, int *c)
{
    int side = col >= j->s[1].off;
    *c = col - j->s[side].off;
    return side;
}

/* An interval literal (SQL_INTERVAL) in milliseconds. */
static int interval_ms(plan *p, const sql_node *e, int64_t *ms)
{
    char txt[256], ebuf[256];
    snprintf(txt, sizeof txt, "INTERVAL '%s' %s", e->s, e->s2);
    if (sl_interval_parse(txt, ms, ebuf, sizeof ebuf) != SL_OK) return PERR(e, "%s", ebuf);
    return SL_OK;
}

/* A term `col`, `col + INTERVAL`, `col - INTERVAL` over an event-time
 * attribute of one side: SL_OK with side, column and offset in ms; SL_DONE
 * when e is not such a term. */
static int time_term(plan *p, jplan *j, const sql_node *e, int *side, int *col, int64_t *off)
{
    if (e->kind == SQL_COL) {
        int jc;
        int rc = resolve(p, j->map, e, &jc);
        if (rc != SL_OK) return rc;
        *side = side_of(j, jc, col);
        const rel *r = &j->s[*side].r;
        if (!r->rowtime || strcasecmp(r->rowtime, r->sch.fields[*col].name)) return SL_DONE;
        *off = 0;
        return SL_OK;
    }
    if (e->kind == SQL_BINOP && (!strcmp(e->s, "+") || !strcmp(e->s, "-")) &&
        e->kids[1]->kind == SQL_INTERVAL) {
        int rc = time_term(p, j, e->kids[0], side, col, off);
        if (rc != SL_OK) return rc;
        int64_t ms;
        if (interval_ms(p, e->kids[1], &ms) != SL_OK) return SL_ERR;
        *off += e->s[0] == '+' ? ms : -ms;
        return SL_OK;
    }
    return SL_DONE;
}

/* a op b over the two sides' time attributes into a bound: SL_OK when
 * taken, SL_DONE when the comparison is not one. */
static int time_bound(plan *p, jplan *j, const sql_node *a, const char *op, const sql_node *b)
{
    int sa, sb, ca, cb;
    int64_t oa, ob;
    int rc = time_term(p, j, a, &sa, &ca, &oa);
    if (rc != SL_OK) return rc;
    if ((rc = time_term(p, j, b, &sb, &cb, &ob)) != SL_OK) return rc;
    if (sa == sb) return SL_DONE;
    /* (time_a + oa) op (time_b + ob), as right.time - left.time op c */
    int64_t c = ob - oa;
    char o0 = op[0];
    int eq = op[1] == '=';
    if (sa == 0) { /* left op right: right op' left */
        c = -c;
        o0 = o0 == '<' ? '>' : '<';
    }
    int lt = sa == 0 ? ca : cb, rt = sa == 0 ? cb : ca;
    if ((j->tcol[0] >= 0 && j->tcol[0] != lt) || (j->tcol[1] >= 0 && j->tcol[1] != rt)) return SL_DONE;
    j->tcol[0] = lt;
    j->tcol[1] = rt;
    if (o0 == '>') {
        int64_t lo = eq ? c : c + 1;
        if (!j->has_lo || lo > j->lo) j->lo = lo;
        j->has_lo = 1;
    } else {
        int64_t hi = eq ? c : c - 1;
        if (!j->has_hi || hi < j->hi) j->hi = hi;
        j->has_hi = 1;
    }
    return SL_OK;
}

static int conjunct(plan *p, jplan *j, const sql_node *e)
{
    if (e->kind == SQL_BOOL && (e->flags & SQL_F_TRUE)) return SL_OK; /* ON TRUE: nothing */
    if (e->kind == SQL_BINOP && !strcasecmp(e->s, "AND")) {
        if (conjunct(p, j, e->kids[0]) != SL_OK) return SL_ERR;
        return conjunct(p, j, e->kids[1]);
    }
    if (e->kind == SQL_BINOP && !strcmp(e->s, "=") && e->kids[0]->kind == SQL_COL &&
        e->kids[1]->kind == SQL_COL) {
        int a, b, rc;
        if ((rc = resolve(p, j->map, e->kids[0], &a)) == SL_ERR) return SL_ERR;
        int rc2 = resolve(p, j->map, e->kids[1], &b);
        if (rc2 == SL_ERR) return SL_ERR;
        int ca, cb;
        if (rc == SL_OK && rc2 == SL_OK) {
            int sa = side_of(j, a, &ca), sb = side_of(j, b, &cb);
            if (sa != sb) {
                if (j->nkeys == SL_MAX_KEY_COLS) return PERR(e, "too many join keys");
                j->kcol[sa][j->nkeys] = ca;
                j->kcol[sb][j->nkeys] = cb;
                sl_type ta = j->s[sa].r.sch.fields[ca].type, tb = j->s[sb].r.sch.fields[cb].type;
                if (ta != tb)
                    return PERR(e, "join key %s = %s compares %s with %s; CAST one side in a "
                                "subquery so both have the same type", e->kids[0]->s, e->kids[1]->s,
                                sl_type_name(ta), sl_type_name(tb));
                j->nkeys++;
                return SL_OK;
            }
        }
    }
    if (!j->semi && e->kind == SQL_BINOP && (!strcmp(e->s, ">=") || !strcmp(e->s, "<=") ||
                                             !strcmp(e->s, ">") || !strcmp(e->s, "<"))) {
        int rc = time_bound(p, j, e->kids[0], e->s, e->kids[1]);
        if (rc != SL_DONE) return rc;
    }
    if (!j->semi && e->kind == SQL_BETWEEN && !(e->flags & SQL_F_NOT)) {
        jplan save = *j;
        int rc = time_bound(p, j, e->kids[0], ">=", e->kids[1]);
        if (rc == SL_OK) rc = time_bound(p, j, e->kids[0], "<=", e->kids[2]);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_OK) return SL_OK;
        save.resid = j->resid; /* keep what was collected meanwhile */
        save.nresid = j->nresid;
        *j = save;
    }
    j->resid = sl_realloc(j->resid, sizeof *j->resid * (size_t)(j->nresid + 1));
    j->resid[j->nresid++] = e;
    return SL_OK;
}

/* ---- planning ------------------------------------------------------------------- */

/* Does alias q name (a table of) side s? */
static int names_side(const jplan *j, int s, const char *q)
{
    const rel *r = &j->s[s].r;
    if (r->alias && !strcasecmp(r->alias, q)) return 1;
    for (int i = 0; r->jmap && i < r->jmap->nquals; i++)
        if (!strcasecmp(r->jmap->quals[i], q)) return 1;
    return 0;
}

/* STATE_TTL('alias' = 'duration', ...) of the SELECT into per-side TTLs. */
static int state_ttl_hints(plan *p, const jplan *j, int interval, const char *ttl[2])
{
    const sql_node *hs = p->hints;
    for (int h = 0; hs && h < hs->nkids; h++) {
        const sql_node *hint = hs->kids[h];
        if (strcmp(hint->s, "STATE_TTL"))
            return PERR(hint, "unknown hint '%s' (Sluice knows STATE_TTL)", hint->s);
        if (interval)
            return PERR(hint, "STATE_TTL: this join is an interval join, whose state its time "
                        "bounds limit; the hint applies to regular joins");
        for (int i = 0; i < hint->nkids; i++) {
            const sql_node *o = hint->kids[i];
            int s = names_side(j, 0, o->s) ? 0 : names_side(j, 1, o->s) ? 1 : -1;
            if (s < 0) {
                sql_sbuf b = {0};
                quals_text(j->map, &b);
                int rc = PERR(o, "STATE_TTL: '%s' is not an input of the join (it reads %s)", o->s,
                              b.p ? b.p : "");
                free(b.p);
                return rc;
            }
            int64_t ms;
            char ebuf[256];
            if (sl_interval_parse(o->s2, &ms, ebuf, sizeof ebuf) != SL_OK || ms <= 0)
                return PERR(o, "STATE_TTL: '%s' for '%s' is not a positive duration such as '1 d' "
                            "or '12 h'", o->s2, o->s);
            ttl[s] = o->s2;
        }
    }
    return SL_OK;
}

static json_t *key_names(const jplan *j, int side)
{
    json_t *a = json_array();
    for (int k = 0; k < j->nkeys; k++)
        json_array_append_new(a, json_string(j->s[side].r.sch.fields[j->kcol[side][k]].name));
    return a;
}

static const char *type_name(const char *kw)
{
    if (!kw || !strcasecmp(kw, "INNER")) return "inner";
    if (!strcasecmp(kw, "LEFT")) return "left";
    if (!strcasecmp(kw, "RIGHT")) return "right";
    return "full";
}

/* The joined row's schema: the rule of operators/join.h. */
static void joined_schema(const sl_schema *l, const sl_schema *r, sl_schema *out)
{
    sl_schema_init(out);
    sl_schema_copy(out, l);
    for (int i = 0; i < r->n; i++) {
        const char *name = r->fields[i].name;
        if (sl_schema_find(out, name) < 0) {
            sl_schema_add_dt(out, name, r->fields[i].dt);
            continue;
        }
        char alt[300];
        for (int k = 0;; k++) {
            snprintf(alt, sizeof alt, "%s%d", name, k);
            if (sl_schema_find(out, alt) < 0) break;
        }
        sl_schema_add_dt(out, alt, r->fields[i].dt);
    }
}

static void jplan_free(jplan *j)
{
    rel_free(&j->s[0].r);
    rel_free(&j->s[1].r);
    sql_join_map_free(j->map);
    sl_schema_free(&j->out);
    free(j->resid);
}

/* The residual conditions (j->resid), ANDed, over the joined row's names. */
static int resid_cond(plan *p, const sql_join_map *map, const sl_schema *sch, const jplan *j,
                      sql_node **out)
{
    sql_node *cond = NULL;
    for (int i = 0; i < j->nresid; i++) {
        sql_node *r;
        if (rewrite(p, map, sch, j->resid[i], &r) != SL_OK) return SL_ERR;
        cond = cond ? sqlp_binop(p, r, "AND", cond, r) : r;
    }
    *out = cond;
    return SL_OK;
}

/* An inner join's residual conditions as a calc filtering its output:
 * out->vid becomes the calc's. */
static int resid_filter(plan *p, const jplan *j, rel *out)
{
    if (!j->nresid) return SL_OK;
    sql_node *cond;
    if (resid_cond(p, out->jmap, &out->sch, j, &cond) != SL_OK) return SL_ERR;
    sql_join_map *keep = out->jmap; /* the calc's input is the plain joined row */
    out->jmap = NULL;
    int rc = emit_calc(p, out, NULL, 0, cond, "join-filter");
    out->jmap = keep;
    return rc;
}

/* ---- filters pushed below the join ---------------------------------------------- */

/* Does conjunct e depend on its operands alone (no calls, subqueries, ...)? */
static int push_safe(const sql_node *e)
{
    if (!e) return 1;
    switch (e->kind) {
    case SQL_COL: case SQL_NUM: case SQL_STR: case SQL_BOOL: case SQL_NULL: case SQL_INTERVAL:
    case SQL_TS_LIT: case SQL_BINOP: case SQL_UNOP: case SQL_IS: case SQL_BETWEEN: case SQL_IN:
    case SQL_LIKE: case SQL_CASE: case SQL_WHEN: case SQL_CAST: case SQL_LIST: case SQL_FIELD:
    case SQL_ELEMENT: case SQL_POSITION:
        break;
    default:
        return 0;
    }
    for (int i = 0; i < e->nkids; i++)
        if (!push_safe(e->kids[i])) return 0;
    return 1;
}

/* Whether every column e reads is one of side r's (alias `alias`) and not
 * the other side's (o); *ncols counts them. */
static int push_reads_side(const sql_node *e, const rel *r, const char *alias, const rel *o,
                           int *ncols)
{
    if (!e) return 1;
    if (e->kind == SQL_COL) {
        if (e->s2 ? strcasecmp(e->s2, alias) != 0 : sl_schema_find(&o->sch, e->s) >= 0) return 0;
        if (o->jmap && !e->s2)
            for (int i = 0; i < o->jmap->n; i++)
                if (!strcasecmp(o->jmap->c[i].name, e->s)) return 0;
        if (sl_schema_find(&r->sch, e->s) < 0) return 0;
        if (r->proctime && !strcasecmp(r->proctime, e->s)) return 0; /* the wall clock */
        (*ncols)++;
        return 1;
    }
    for (int i = 0; i < e->nkids; i++)
        if (!push_reads_side(e->kids[i], r, alias, o, ncols)) return 0;
    return 1;
}

/* A copy of e with its columns unqualified (the side's own names). */
static sql_node *push_unqualify(plan *p, const sql_node *e)
{
    if (!e) return NULL;
    sql_node *n = sql_node_like(p->arena, e);
    if (n->kind == SQL_COL) n->s2 = NULL;
    for (int i = 0; i < e->nkids; i++) sql_node_add(p->arena, n, push_unqualify(p, e->kids[i]));
    return n;
}

static void push_collect(plan *p, const sql_node *w, const rel *r, const char *alias,
                         const rel *o, sql_node **cond)
{
    if (!w) return;
    if (w->kind == SQL_BINOP && !strcasecmp(w->s, "AND")) {
        push_collect(p, sql_kid(w, 0), r, alias, o, cond);
        push_collect(p, sql_kid(w, 1), r, alias, o, cond);
        return;
    }
    int ncols = 0;
    if (!push_safe(w) || !push_reads_side(w, r, alias, o, &ncols) || !ncols) return;
    sql_node *c = push_unqualify(p, w);
    *cond = *cond ? sqlp_binop(p, w, "AND", *cond, c) : c;
}

/* Side s of j, read from FROM item `node`: the WHERE conjuncts that only
 * read it, as a calc between its scan and the join (see the top). */
static int push_filters(plan *p, const sql_node *where, const sql_node *node, jplan *j, int s)
{
    rel *r = &j->s[s].r;
    if (!where || node->kind != SQL_FROM_TABLE || sql_kid(node, 0) || r->jmap || r->windowed)
        return SL_OK;
    sql_node *cond = NULL;
    push_collect(p, where, r, node->s2 ? node->s2 : node->s, &j->s[!s].r, &cond);
    if (!cond) return SL_OK;
    char *alias = r->alias; /* the calc's input goes by the table's own names */
    r->alias = NULL;
    int rc = emit_calc(p, r, NULL, 0, cond, "join-input-filter");
    r->alias = alias;
    return rc;
}

static int plan_temporal(plan *p, const sql_node *f, const sql_node *asof, jplan *j, const char *jt,
                         rel *out);
static int plan_window(plan *p, const sql_node *f, jplan *j, const char *jt, rel *out);
static int plan_lookup(plan *p, const sql_node *f, const sql_node *rnode, const sql_node *asof,
                       jplan *j, rel *out);
static int join_done(plan *p, const sql_node *f, jplan *j, rel *out);

/* FOR SYSTEM_TIME AS OF e names the left side's processing-time attribute:
 * a lookup join. */
static int asof_proctime(const jplan *j, const sql_node *asof)
{
    const rel *l = &j->s[0].r;
    if (asof->kind != SQL_COL || !l->proctime || strcasecmp(asof->s, l->proctime)) return 0;
    return !asof->s2 || names_side(j, 0, asof->s2);
}

/* The join vertex's config (*cfg) and key lists (*lk, *rk; caller
 * decrefs), and what its uid is made from (*id): the keys, an interval
 * join's time bounds, or a regular join's state TTLs and the rest of ON,
 * which the join then evaluates itself (j->nresid becomes 0). */
static int join_config(plan *p, jplan *j, const char *jt, int interval, const char *const *ttl_hint,
                       json_t **cfgp, json_t **lkp, json_t **rkp, sql_sbuf *id)
{
    json_t *cfg = json_object();
    json_object_set_new(cfg, "join-type", json_string(jt));
    json_t *lk = key_names(j, 0), *rk = key_names(j, 1);
    json_object_set(cfg, "left-keys", lk);
    json_object_set(cfg, "right-keys", rk);
    sql_sb_fmt(id, "%s|%s|%s|%s|", interval ? "interval" : "regular", jt,
               j->s[0].r.ident ? j->s[0].r.ident : "", j->s[1].r.ident ? j->s[1].r.ident : "");
    for (int k = 0; k < j->nkeys; k++)
        sql_sb_fmt(id, "%s=%s,", j->s[0].r.sch.fields[j->kcol[0][k]].name,
                   j->s[1].r.sch.fields[j->kcol[1][k]].name);
    if (interval) {
        json_object_set_new(cfg, "left-time", json_string(j->s[0].r.sch.fields[j->tcol[0]].name));
        json_object_set_new(cfg, "right-time", json_string(j->s[1].r.sch.fields[j->tcol[1]].name));
        json_object_set_new(cfg, "lower-bound", json_integer((json_int_t)j->lo));
        json_object_set_new(cfg, "upper-bound", json_integer((json_int_t)j->hi));
        sql_sb_fmt(id, "|%lld|%lld", (long long)j->lo, (long long)j->hi);
    } else {
        if (p->ttl && strcmp(p->ttl, "0"))
            json_object_set_new(cfg, "table.exec.state.ttl", json_string(p->ttl));
        if (ttl_hint[0]) json_object_set_new(cfg, "left.state.ttl", json_string(ttl_hint[0]));
        if (ttl_hint[1]) json_object_set_new(cfg, "right.state.ttl", json_string(ttl_hint[1]));
        sql_node *cond;
        if (j->nresid) { /* evaluated by the join itself */
            if (resid_cond(p, j->map, &j->out, j, &cond) != SL_OK) {
                json_decref(cfg);
                json_decref(lk);
                json_decref(rk);
                return SL_ERR;
            }
            char *txt = sql_unparse(cond);
            json_object_set_new(cfg, "condition", json_string(txt));
            free(txt);
            j->nresid = 0; /* no filter after it */
        }
    }
    *cfgp = cfg;
    *lkp = lk;
    *rkp = rk;
    return SL_OK;
}

const rel *sqlp_joins_find(plan *p, const sql_node *f) { return joins_find(p, f); }
void sqlp_joins_add(plan *p, const sql_node *f, const rel *r) { joins_add(p, f, r); }

sql_join_map *sqlp_lateral_map(const rel *l, const char *alias, const sl_schema *cols, int off)
{
    sql_join_map *m = sl_calloc(1, sizeof *m);
    side_names(l, m, 0);
    for (int i = 0; i < cols->n; i++) map_add(m, alias, cols->fields[i].name, off + i);
    map_qual(m, alias);
    return m;
}

/* A join the subquery rewrite made with SQL_F_ALL (plan_subquery.c) meets
 * every row of one side with the single row of the other: each side gets a
 * constant column, the join's key. */
static int const_key(plan *p, rel *r, const sql_node *at)
{
    int n = r->sch.n;
    item *its = sl_calloc((size_t)n + 1, sizeof *its);
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < n; i++) {
        sql_node *c = sql_node_new(p->arena, SQL_COL, at->line, at->col);
        c->s = sql_arena_strndup(p->arena, r->sch.fields[i].name, strlen(r->sch.fields[i].name));
        c->flags = SQL_F_QUOTED;
        rc = make_item(p, &its[i], c, r->sch.fields[i].name, &r->sch);
    }
    sql_node *zero = sql_node_new(p->arena, SQL_NUM, at->line, at->col);
    zero->s = "0";
    char name[32];
    snprintf(name, sizeof name, "__one%d", n);
    if (rc == SL_OK) rc = make_item(p, &its[n], zero, name, &r->sch);
    if (rc == SL_OK) rc = emit_calc(p, r, its, n + 1, NULL, "join-constant");
    items_free(its, n + 1);
    return rc;
}

/* ---- keys written as access expressions (a.r.id = b.id, a.arr[1] = b.k) ------------- */

/* Is qualifier q a table (not a ROW column) of the join? */
static int is_qual(const sql_join_map *m, const char *q)
{
    for (int i = 0; i < m->n; i++)
        if (m->c[i].qual && !strcasecmp(m->c[i].qual, q)) return 1;
    return 0;
}

/* The side whose columns e reads, into *side (-2: none yet; -1: both sides, or a
 * name that is no column). */
static int expr_side(plan *p, const jplan *j, const sql_node *e, int *side)
{
    if (!e || *side == -1) return SL_OK;
    if (e->kind == SQL_COL) {
        /* r.f with r a ROW column (no table r): the column r */
        sql_node base = {.kind = SQL_COL, .line = e->line, .col = e->col, .s = e->s2};
        const sql_node *c = e->s2 && !is_qual(j->map, e->s2) ? &base : e;
        int jc, sc, rc = resolve(p, j->map, c, &jc);
        if (rc == SL_ERR) return SL_ERR;
        int s = rc == SL_OK ? side_of(j, jc, &sc) : -1;
        *side = *side == -2 || *side == s ? s : -1;
        return SL_OK;
    }
    if (e->kind == SQL_SUBQUERY || e->kind == SQL_OVER) {
        *side = -1;
        return SL_OK;
    }
    for (int i = 0; i < e->nkids; i++)
        if (expr_side(p, j, e->kids[i], side) != SL_OK) return SL_ERR;
    return SL_OK;
}

/* A conjunct `x = y` whose x reads one side and y the other, one of them more
 * than a column (a ROW field, an element): *x gets side 0's expression, *y side 1's. */
static int access_key(plan *p, const jplan *j, const sql_node *e, const sql_node **x,
                      const sql_node **y)
{
    if (e->kind != SQL_BINOP || strcmp(e->s, "=") || e->nkids != 2) return SL_DONE;
    const sql_node *a = e->kids[0], *b = e->kids[1];
    int access = 0;
    for (int k = 0; k < 2; k++) {
        const sql_node *t = e->kids[k];
        access |= t->kind == SQL_FIELD || t->kind == SQL_ELEMENT ||
                  (t->kind == SQL_COL && t->s2 && !is_qual(j->map, t->s2));
    }
    int sa = -2, sb = -2;
    if (!access || expr_side(p, j, a, &sa) != SL_OK || expr_side(p, j, b, &sb) != SL_OK)
        return access ? SL_ERR : SL_DONE;
    if (sa < 0 || sb < 0 || sa == sb) return SL_DONE;
    *x = sa == 0 ? a : b;
    *y = sa == 0 ? b : a;
    return SL_OK;
}

/* e (over the joined row's names) with its columns renamed to side s's own. */
static void to_side_names(const jplan *j, int s, sql_node *e)
{
    if (!e) return;
    if (e->kind == SQL_COL) {
        int jc = sl_schema_find(&j->out, e->s), c;
        if (jc >= 0 && side_of(j, jc, &c) == s) e->s = j->s[s].r.sch.fields[c].name;
        return;
    }
    for (int i = 0; i < e->nkids; i++) to_side_names(j, s, e->kids[i]);
}


/* The first "<prefix><n>", n = from, from + 1, ..., that names no column of
 * sch: a computed key column's name. */
static void free_key_name(const sl_schema *sch, const char *prefix, int from, char *out, size_t cap)
{
    for (int n = from;; n++) {
        snprintf(out, cap, "%s%d", prefix, n);
        if (sl_schema_find(sch, out) < 0) return;
    }
}

/* The ON condition's access-expression keys made columns: each side gets a
 * calc computing its key expressions (a plain column stays itself), the join
 * keys on them (j->kcol), and *on becomes the condition without them. The
 * joined row then has j->added[s] extra columns at the end of side s, which
 * join_done removes after the join. SL_DONE when there are none. */
static int access_keys(plan *p, jplan *j, const sql_node **on)
{
    const sql_node *xs[SL_MAX_KEY_COLS][2], *eqs[SL_MAX_KEY_COLS]; /* eqs: the conjuncts */
    int n = 0;
    /* the conjuncts, left to right; a copy of the AND tree with TRUE in their places */
    const sql_node *stack[64];
    int top = 0;
    sql_node *copy = NULL;
    stack[top++] = *on;
    while (top) {
        const sql_node *e = stack[--top];
        if (e->kind == SQL_BINOP && !strcasecmp(e->s, "AND") && top + 2 <= 64) {
            stack[top++] = e->kids[1];
            stack[top++] = e->kids[0];
            continue;
        }
        const sql_node *x, *y;
        int rc = n < SL_MAX_KEY_COLS ? access_key(p, j, e, &x, &y) : SL_DONE;
        if (rc == SL_ERR) return SL_ERR;
        sql_node *keep = (sql_node *)e;
        if (rc == SL_OK) {
            eqs[n] = e;
            xs[n][0] = x;
            xs[n++][1] = y;
            keep = sql_node_new(p->arena, SQL_BOOL, e->line, e->col);
            keep->flags = SQL_F_TRUE;
        }
        copy = copy ? sqlp_binop(p, e, "AND", copy, keep) : keep;
    }
    if (!n) return SL_DONE;
    int col[SL_MAX_KEY_COLS][2];
    sl_type typ[SL_MAX_KEY_COLS][2];
    for (int s = 0; s < 2; s++) {
        rel *r = &j->s[s].r;
        int nold = r->sch.n, nits = nold, rc = SL_OK;
        item *its = sl_calloc((size_t)nold + SL_MAX_KEY_COLS, sizeof *its);
        for (int c = 0; c < nold; c++) {
            its[c].name = sl_strdup(r->sch.fields[c].name);
            its[c].text = sql_quote_ident(r->sch.fields[c].name);
            its[c].type = r->sch.fields[c].type;
            its[c].dt = r->sch.fields[c].dt;
        }
        for (int k = 0; rc == SL_OK && k < n; k++) {
            sql_node *x;
            const sl_dtype *dt = NULL;
            if ((rc = rewrite(p, j->map, &j->out, xs[k][s], &x)) != SL_OK) break;
            to_side_names(j, s, x);
            if ((rc = type_expr_dt(p, x, &r->sch, &typ[k][s], &dt)) != SL_OK) break;
            int c = x->kind == SQL_COL ? sl_schema_find(&r->sch, x->s) : -1;
            if (c >= 0) {
                col[k][s] = c;
                continue;
            }
            char name[64];
            free_key_name(&r->sch, "join_key", nits, name, sizeof name);
            char *xt = sql_unparse(x), *qn = sql_quote_ident(name);
            its[nits].name = sl_strdup(name);
            its[nits].text = sl_sprintf("%s AS %s", xt, qn);
            its[nits].type = typ[k][s];
            its[nits].dt = dt;
            free(xt);
            free(qn);
            col[k][s] = nits++;
        }
        j->added[s] = nits - nold;
        if (rc == SL_OK && j->added[s]) {
            sql_join_map *keep = r->jmap; /* the calc's input is the plain side row */
            r->jmap = NULL;
            rc = emit_calc(p, r, its, nits, NULL, "join-keys");
            r->jmap = keep;
            if (rc == SL_OK) carry_time_attrs(r, its, nits);
        }
        items_free(its, nits);
        if (rc != SL_OK) return SL_ERR;
    }
    for (int k = 0; k < n; k++) {
        if (typ[k][0] != typ[k][1]) {
            /* the conjunct as written, its sides' types in its order */
            int sw = eqs[k]->kids[0] != xs[k][0];
            char *a = sql_unparse_written(eqs[k]->kids[0]), *b = sql_unparse_written(eqs[k]->kids[1]);
            int rc = PERR(eqs[k]->kids[0], "join key %s = %s compares %s with %s; CAST one side so "
                          "both have the same type", a, b, sl_type_name(typ[k][sw]),
                          sl_type_name(typ[k][!sw]));
            free(a);
            free(b);
            return rc;
        }
        if (j->nkeys == SL_MAX_KEY_COLS) return PERR(xs[k][0], "too many join keys");
        j->kcol[0][j->nkeys] = col[k][0];
        j->kcol[1][j->nkeys++] = col[k][1];
    }
    /* the sides' new widths: offsets, names and the joined row again */
    j->s[1].off = j->s[0].r.sch.n;
    sql_join_map_free(j->map);
    j->map = sl_calloc(1, sizeof *j->map);
    side_names(&j->s[0].r, j->map, 0);
    side_names(&j->s[1].r, j->map, j->s[1].off);
    sl_schema_free(&j->out);
    joined_schema(&j->s[0].r.sch, &j->s[1].r.sch, &j->out);
    *on = copy;
    return SL_OK;
}

/* The joined row without the key columns access_keys added (added[s] at the end
 * of side s, whose first column is at off1 for the right side): a calc. */
static int drop_key_cols(plan *p, rel *out, int off1, const int added[2])
{
    int n = out->sch.n, nits = 0, rc;
    int lend = off1 - added[0], rend = n - added[1];
    item *its = sl_calloc((size_t)n, sizeof *its);
    for (int c = 0; c < n; c++) {
        if ((c >= lend && c < off1) || c >= rend) continue;
        its[nits].name = sl_strdup(out->sch.fields[c].name);
        its[nits].text = sql_quote_ident(out->sch.fields[c].name);
        its[nits].type = out->sch.fields[c].type;
        its[nits++].dt = out->sch.fields[c].dt;
    }
    sql_join_map *m = out->jmap;
    out->jmap = NULL;
    rc = emit_calc(p, out, its, nits, NULL, "join-keys-drop");
    out->jmap = m;
    if (rc == SL_OK) carry_time_attrs(out, its, nits);
    items_free(its, nits);
    for (int i = 0; m && i < m->n; i++) { /* the names follow their columns */
        int c = m->c[i].col;
        if ((c >= lend && c < off1) || c >= rend) {
            free(m->c[i].qual);
            free(m->c[i].name);
            m->c[i--] = m->c[--m->n];
        } else if (c >= off1) {
            m->c[i].col = c - added[0];
        }
    }
    return rc;
}

/* After the join vertex (any kind): the conditions left over as a filter,
 * the key columns access_keys added dropped, and the join remembered. */
static int join_done(plan *p, const sql_node *f, jplan *j, rel *out)
{
    if (resid_filter(p, j, out) != SL_OK ||
        ((j->added[0] || j->added[1]) && drop_key_cols(p, out, j->s[1].off, j->added) != SL_OK)) {
        rel_free(out);
        return SL_ERR;
    }
    joins_add(p, f, out);
    return SL_OK;
}

int sql_plan_join(plan *p, const sql_node *f, rel *out)
{
    if (sql_kid(f, 1) && sql_kid(f, 1)->kind == SQL_FROM_LATERAL) return sql_plan_lateral(p, f, out);
    if (sql_kid(f, 1) && sql_kid(f, 1)->kind == SQL_FROM_UNNEST) return sql_plan_unnest(p, f, out);
    const rel *done = joins_find(p, f);
    if (done) {
        rel_copy(out, done);
        return SL_OK;
    }
    const sql_node *on = sql_kid(f, 2);
    if (!on)
        return PERR(f, "FROM a, b (a cross join) is not supported; join on keys: a JOIN b ON "
                    "a.k = b.k");
    jplan j = {.tcol = {-1, -1}};
    sl_schema_init(&j.out);
    int rc = SL_ERR;
    const sql_node *rnode = sql_kid(f, 1), *asof = NULL;
    /* SEMI / ANTI: the subquery rewrite's (plan_subquery.c) */
    j.semi = !f->s ? 0 : !strcasecmp(f->s, "SEMI") ? 1 : !strcasecmp(f->s, "ANTI") ? 2 : 0;
    if (rnode->kind == SQL_FROM_TABLE && sql_kid(rnode, 0)) {
        /* t FOR SYSTEM_TIME AS OF e: a temporal join; the table itself is read as usual */
        asof = sql_kid(rnode, 0);
        const sql_node *w1 = sql_kid(rnode, 1), *w2 = sql_kid(rnode, 2);
        if (strcasecmp(w1->s, "SYSTEM_TIME") || strcasecmp(w2->s, "OF"))
            return PERR(w1, "expected FOR SYSTEM_TIME AS OF, found FOR %s AS %s", w1->s, w2->s);
        sql_node *plain = sql_node_new(p->arena, SQL_FROM_TABLE, rnode->line, rnode->col);
        plain->s = rnode->s;
        plain->s2 = rnode->s2;
        rnode = plain;
    }
    /* the WHERE's conjuncts of one side may filter it first where its rows
     * can only reach the output with their own values (see the top) */
    const sql_node *where = p->push_where;
    int push[2] = {0, 0};
    if (where && !asof) {
        const char *t = f->s;
        push[0] = !t || !strcasecmp(t, "INNER") || !strcasecmp(t, "LEFT") || j.semi;
        push[1] = !t || !strcasecmp(t, "INNER") || !strcasecmp(t, "RIGHT");
    }
    p->push_where = push[0] ? where : NULL;
    int frc = plan_from(p, sql_kid(f, 0), &j.s[0].r);
    p->push_where = where;
    if (frc != SL_OK) goto done;
    if (asof && asof_proctime(&j, asof)) { /* the table is looked up, not read as a stream */
        rc = plan_lookup(p, f, rnode, asof, &j, out);
        goto done;
    }
    p->push_where = push[1] ? where : NULL;
    frc = plan_from(p, rnode, &j.s[1].r);
    p->push_where = where;
    if (frc != SL_OK) goto done;
    for (int s = 0; s < 2; s++)
        if (push[s] && push_filters(p, where, s ? rnode : sql_kid(f, 0), &j, s) != SL_OK) goto done;
    if (rnode->kind == SQL_FROM_TABLE || rnode->s2) {
        free(j.s[1].r.alias);
        j.s[1].r.alias = sl_strdup(rnode->s2 ? rnode->s2 : rnode->s);
    }
    int constant = (f->flags & SQL_F_ALL) != 0;
    if (constant && (const_key(p, &j.s[0].r, f) != SL_OK || const_key(p, &j.s[1].r, f) != SL_OK))
        goto done;
    j.s[1].off = j.s[0].r.sch.n;
    j.map = sl_calloc(1, sizeof *j.map);
    side_names(&j.s[0].r, j.map, 0);
    side_names(&j.s[1].r, j.map, j.s[1].off);
    joined_schema(&j.s[0].r.sch, &j.s[1].r.sch, &j.out);
    if (!constant && !j.semi && access_keys(p, &j, &on) == SL_ERR) goto done;
    if (j.out.n > SL_MAX_FIELDS) {
        rc = PERR(f, "the joined row would have %d columns (at most %d)", j.out.n, SL_MAX_FIELDS);
        goto done;
    }
    if (conjunct(p, &j, on) != SL_OK) goto done;
    if (constant) {
        if (j.nkeys == SL_MAX_KEY_COLS) {
            rc = PERR(on, "too many join keys");
            goto done;
        }
        j.kcol[0][j.nkeys] = j.s[0].r.sch.n - 1;
        j.kcol[1][j.nkeys] = j.s[1].r.sch.n - 1;
        j.nkeys++;
    }
    const char *jt = j.semi ? "inner" : type_name(f->s);
    int outer = strcmp(jt, "inner") != 0;
    if (j.nkeys == 0) {
        rc = PERR(on, "the join condition needs an equality between a column of each side (e.g. "
                  "o.id = p.id): Sluice joins on keys and has no cross join");
        goto done;
    }
    if (asof) {
        rc = plan_temporal(p, f, asof, &j, jt, out);
        goto done;
    }
    int interval = j.has_lo && j.has_hi;
    if (!interval && (j.has_lo || j.has_hi)) {
        rc = PERR(on, "the join condition bounds the time of one side against the other only from "
                  "%s; an interval join needs both bounds (b.ts BETWEEN a.ts - INTERVAL ... AND "
                  "a.ts + INTERVAL ...)", j.has_lo ? "below" : "above");
        goto done;
    }
    int both_windowed = !j.semi && j.s[0].r.windowed && j.s[1].r.windowed;
    if (outer && j.nresid && (interval || both_windowed)) { /* a regular join takes it */
        char *t = sql_unparse_written(j.resid[0]);
        rc = PERR(j.resid[0], "%s OUTER JOIN: the condition %s is neither an equality of keys nor "
                  "a time bound; Sluice supports such conditions in outer regular joins and inner joins only",
                  f->s, t);
        free(t);
        goto done;
    }
    if (!interval && both_windowed) {
        rc = plan_window(p, f, &j, jt, out);
        if (rc != SL_DONE) goto done;
        rc = SL_ERR; /* not on the windows: a regular join, as in Flink */
    }
    if (interval) {
        for (int s = 0; s < 2; s++)
            if (j.s[s].r.updating) {
                rc = PERR(sql_kid(f, s), "an interval join takes append-only inputs; the %s input is "
                          "a changelog (produced by %s)", s ? "right" : "left", j.s[s].r.updater);
                goto done;
            }
        if (j.lo > j.hi) {
            rc = PERR(on, "the time bounds leave no room: right.time - left.time between %lld and "
                      "%lld ms", (long long)j.lo, (long long)j.hi);
            goto done;
        }
    }
    const char *ttl_hint[2] = {NULL, NULL};
    if (state_ttl_hints(p, &j, interval, ttl_hint) != SL_OK) goto done;
    /* a self-join reads one vertex on both inputs: the right one through a calc of its own */
    if (!strcmp(j.s[0].r.vid, j.s[1].r.vid) && emit_calc(p, &j.s[1].r, NULL, 0, NULL, "join-right") != SL_OK)
        goto done;
    json_t *cfg, *lk, *rk;
    sql_sbuf id = {0};
    if (join_config(p, &j, jt, interval, ttl_hint, &cfg, &lk, &rk, &id) != SL_OK) {
        free(id.p);
        goto done;
    }
    if (j.semi) {
        json_object_set_new(cfg, "mode", json_string(j.semi == 2 ? "anti" : "semi"));
        sql_sb_fmt(&id, "|%s", j.semi == 2 ? "anti" : "semi");
    }
    /* a semi join of append-only inputs only adds rows; an anti join withdraws them */
    int updating = !interval && (outer || j.semi == 2 || j.s[0].r.updating || j.s[1].r.updating);
    sql_sbuf ident = {0};
    sql_sb_fmt(&ident, "join(%s,%s)", j.s[0].r.ident ? j.s[0].r.ident : "",
               j.s[1].r.ident ? j.s[1].r.ident : "");
    char *uid = sl_sprintf("join-%s-%08x", interval ? "interval" : "regular", fnv1a(id.p));
    free(id.p);
    const char *type = interval ? "interval_join" : "regular_join";
    char *vid = add_vertex(p, interval ? "interval-join" : "join", type, uid, cfg, NULL, 0);
    free(uid);
    add_edge(p, j.s[0].r.vid, vid, "hash", lk, 0);
    add_edge(p, j.s[1].r.vid, vid, "hash", rk, 1);
    json_decref(lk);
    json_decref(rk);

    memset(out, 0, sizeof *out);
    out->vid = vid;
    out->sch = j.out;
    sl_schema_init(&j.out);
    out->ident = sql_sb_take(&ident);
    out->jmap = j.map;
    j.map = NULL;
    if (j.semi) { /* the left rows alone, by the left side's names */
        sl_schema_free(&out->sch);
        sl_schema_init(&out->sch);
        sl_schema_copy(&out->sch, &j.s[0].r.sch);
        sql_join_map_free(out->jmap);
        out->jmap = sl_calloc(1, sizeof *out->jmap);
        side_names(&j.s[0].r, out->jmap, 0);
        if (constant) /* the constant key column goes by no name */
            for (int i = 0; i < out->jmap->n; i++)
                if (out->jmap->c[i].col == out->sch.n - 1) {
                    free(out->jmap->c[i].qual);
                    free(out->jmap->c[i].name);
                    out->jmap->c[i--] = out->jmap->c[--out->jmap->n];
                }
        /* Flink materializes the left side's time attributes before the join
         * (a regular join) and still plans group windows on them */
        const rel *l = &j.s[0].r;
        out->mrowtime = dup0(l->rowtime ? l->rowtime : l->mrowtime);
        out->mproctime = dup0(l->proctime ? l->proctime : l->mproctime);
    }
    out->updating = updating;
    if (updating) {
        out->updater = j.s[0].r.updating ? dup0(j.s[0].r.updater)
                       : j.s[1].r.updating ? dup0(j.s[1].r.updater)
                                           : sl_sprintf("%s join '%s'", jt, vid);
    }
    if (interval) {
        /* the left time attribute stays one (the right one too in Flink; Sluice tracks one) */
        out->rowtime = sl_strdup(out->sch.fields[j.s[0].off + j.tcol[0]].name);
    } else if (!j.semi) {
        /* a regular join materializes its inputs' time attributes, and Flink still plans
         * group windows on them: the left side's, else the right side's, one kept under
         * its own name in the joined row (rel.mrowtime) */
        for (int s = 0; s < 2; s++) {
            const rel *r = &j.s[s].r;
            const char *rt = r->rowtime ? r->rowtime : r->mrowtime;
            const char *pt = r->proctime ? r->proctime : r->mproctime;
            const sl_schema *other = &j.s[!s].r.sch;
            if (!out->mrowtime && rt && sl_schema_find(other, rt) < 0) out->mrowtime = sl_strdup(rt);
            if (!out->mproctime && pt && sl_schema_find(other, pt) < 0)
                out->mproctime = sl_strdup(pt);
        }
    }
    rc = join_done(p, f, &j, out);
done:
    jplan_free(&j);
    return rc;
}

/* s JOIN t FOR SYSTEM_TIME AS OF s.ts ON s.k = t.k: a temporal_join vertex.
 * t must be a versioned table: a primary key (the join's keys) and a
 * watermark (each version's time). */
static int plan_temporal(plan *p, const sql_node *f, const sql_node *asof, jplan *j, const char *jt,
                         rel *out)
{
    const sql_node *rnode = sql_kid(f, 1);
    const sql_table *t = sql_catalog_find(p->cat, rnode->s);
    if (strcmp(jt, "inner") && strcmp(jt, "left"))
        return PERR(f, "a temporal join is an inner or LEFT join, not %s", f->s);
    int tl, c;
    if (asof->kind != SQL_COL || resolve(p, j->map, asof, &tl) != SL_OK || side_of(j, tl, &c) != 0 ||
        !j->s[0].r.rowtime || strcasecmp(j->s[0].r.rowtime, j->s[0].r.sch.fields[c].name))
        return PERR(asof, "FOR SYSTEM_TIME AS OF needs a time attribute of the left side: its "
                    "processing-time attribute (a lookup join: s JOIN t FOR SYSTEM_TIME AS OF "
                    "s.proc_time, with proc_time AS PROCTIME()) or its event-time attribute (its "
                    "watermarked column: a temporal join with a versioned table)");
    if (!t || t->is_view || !t->npk || !j->s[1].r.rowtime)
        return PERR(rnode, "FOR SYSTEM_TIME AS OF: '%s' is not a versioned table (it needs a "
                    "PRIMARY KEY and a WATERMARK in CREATE TABLE)", rnode->s);
    /* the keys: exactly the primary key */
    for (int k = 0; k < t->npk; k++) {
        int found = 0;
        for (int q = 0; q < j->nkeys; q++)
            if (!strcasecmp(j->s[1].r.sch.fields[j->kcol[1][q]].name, t->pk[k])) found = 1;
        if (!found)
            return PERR(sql_kid(f, 2), "Temporal table's primary key [%s] must be included in the "
                        "equivalence condition of temporal join: '%s' has no equality in the ON "
                        "condition (a temporal join must join on the versioned table's whole "
                        "primary key)", t->pk[k], t->pk[k]);
    }
    /* Equalities beyond the primary key (columns or access expressions such as
     * v.r.id, computed by a calc before the join) are join keys too, as Flink
     * plans them: the versions are then those of each whole key. */
    if (j->has_lo || j->has_hi || j->nresid) {
        if (strcmp(jt, "inner") || j->has_lo || j->has_hi)
            return PERR(sql_kid(f, 2), "a temporal join takes equalities on the primary key%s",
                        strcmp(jt, "inner") ? "" : " and non-time conditions");
    }
    if (j->s[0].r.updating)
        return PERR(sql_kid(f, 0), "the left side of a temporal join must be append-only (it is "
                    "a changelog produced by %s)", j->s[0].r.updater);
    json_t *cfg = json_object();
    json_object_set_new(cfg, "join-type", json_string(jt));
    json_t *lk = key_names(j, 0), *rk = key_names(j, 1);
    json_object_set(cfg, "left-keys", lk);
    json_object_set(cfg, "right-keys", rk);
    json_object_set_new(cfg, "left-time", json_string(j->s[0].r.sch.fields[c].name));
    json_object_set_new(cfg, "right-time", json_string(j->s[1].r.rowtime));
    sql_sbuf id = {0};
    sql_sb_fmt(&id, "temporal|%s|%s|%s|", jt, j->s[0].r.ident ? j->s[0].r.ident : "", t->name);
    for (int k = 0; k < j->nkeys; k++)
        sql_sb_fmt(&id, "%s=%s,", j->s[0].r.sch.fields[j->kcol[0][k]].name,
                   j->s[1].r.sch.fields[j->kcol[1][k]].name);
    char *uid = sl_sprintf("join-temporal-%08x", fnv1a(id.p));
    free(id.p);
    if (!strcmp(j->s[0].r.vid, j->s[1].r.vid) &&
        emit_calc(p, &j->s[1].r, NULL, 0, NULL, "join-right") != SL_OK) {
        json_decref(cfg);
        json_decref(lk);
        json_decref(rk);
        free(uid);
        return SL_ERR;
    }
    char *vid = add_vertex(p, "temporal-join", "temporal_join", uid, cfg, NULL, 0);
    free(uid);
    add_edge(p, j->s[0].r.vid, vid, "hash", lk, 0);
    add_edge(p, j->s[1].r.vid, vid, "hash", rk, 1);
    json_decref(lk);
    json_decref(rk);
    memset(out, 0, sizeof *out);
    out->vid = vid;
    out->sch = j->out;
    sl_schema_init(&j->out);
    sql_sbuf ident = {0};
    sql_sb_fmt(&ident, "temporal(%s,%s)", j->s[0].r.ident ? j->s[0].r.ident : "", t->name);
    out->ident = sql_sb_take(&ident);
    out->jmap = j->map;
    j->map = NULL;
    out->rowtime = sl_strdup(out->sch.fields[c].name);
    return join_done(p, f, j, out);
}

/* ---- lookup joins -------------------------------------------------------------- */

/* Which sides e reads: bit 0 left, bit 1 right. SL_ERR for a bad reference. */
static int sides_of(plan *p, const jplan *j, const sql_node *e, int *mask)
{
    if (!e) return SL_OK;
    if (e->kind == SQL_COL) {
        int col, c;
        int rc = resolve(p, j->map, e, &col);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_OK) *mask |= 1 << side_of(j, col, &c);
        return SL_OK;
    }
    for (int i = 0; i < e->nkids; i++)
        if (sides_of(p, j, e->kids[i], mask) != SL_OK) return SL_ERR;
    return SL_OK;
}

static int numeric(sl_type t) { return t == SL_T_INT || t == SL_T_BIGINT || t == SL_T_DOUBLE; }

/* One lookup key: an expression of the left side equal to a table column. */
typedef struct lkey {
    const sql_node *expr;  /* over the left side */
    int rcol;              /* the table's column */
} lkey;

/* ON split at AND: `expr(left) = t.col` conjuncts are keys, the rest goes to
 * j->resid. */
static int lookup_conjuncts(plan *p, jplan *j, const sql_node *e, lkey *keys, int *nkeys)
{
    if (e->kind == SQL_BINOP && !strcasecmp(e->s, "AND")) {
        if (lookup_conjuncts(p, j, e->kids[0], keys, nkeys) != SL_OK) return SL_ERR;
        return lookup_conjuncts(p, j, e->kids[1], keys, nkeys);
    }
    if (e->kind == SQL_BINOP && !strcmp(e->s, "=")) {
        for (int k = 0; k < 2; k++) {
            const sql_node *a = e->kids[k], *b = e->kids[1 - k];
            int ma = 0, mb = 0, col, c;
            if (b->kind != SQL_COL) continue; /* the table's side must be a column */
            if (sides_of(p, j, a, &ma) != SL_OK || sides_of(p, j, b, &mb) != SL_OK) return SL_ERR;
            if (ma != 1 || mb != 2 || resolve(p, j->map, b, &col) != SL_OK) continue;
            if (*nkeys == SL_MAX_KEY_COLS) return PERR(e, "too many join keys");
            side_of(j, col, &c);
            keys[*nkeys] = (lkey){a, c};
            (*nkeys)++;
            return SL_OK;
        }
    }
    j->resid = sl_realloc(j->resid, sizeof *j->resid * (size_t)(j->nresid + 1));
    j->resid[j->nresid++] = e;
    return SL_OK;
}

/* s JOIN t FOR SYSTEM_TIME AS OF s.proc_time AS d ON f(s) = d.k: a
 * lookup_join vertex after s (operators/lookup_join.c), which loads t
 * itself; t is not read as a stream. Keys that are expressions of s, or
 * columns of another numeric type than t's, are computed by a calc before
 * the join and dropped by it ("left-columns"). */
/* The lookup keys as the left side's columns (*lkp) and the table's
 * (*rkp): a left column of the key's type as it is, anything else computed
 * by a calc added before the join ("lookup-keys"), CAST to the table
 * column's type; nleft is the left side's width before that calc. */
static int lookup_keys(plan *p, jplan *j, const lkey *keys, int nkeys, int nleft, json_t **lkp,
                       json_t **rkp)
{
    rel *l = &j->s[0].r, *r = &j->s[1].r;
    json_t *lk = json_array(), *rk = json_array();
    item *its = NULL;
    int nits = 0, rc = SL_OK;
    for (int k = 0; rc == SL_OK && k < nkeys; k++) {
        const char *rname = r->sch.fields[keys[k].rcol].name;
        sl_type rt = r->sch.fields[keys[k].rcol].type, lt;
        json_array_append_new(rk, json_string(rname));
        sql_node *x;
        if ((rc = rewrite(p, j->map, &j->out, keys[k].expr, &x)) != SL_OK) break;
        if ((rc = type_expr(p, x, &l->sch, &lt)) != SL_OK) break;
        int lc = x->kind == SQL_COL ? sl_schema_find(&l->sch, x->s) : -1;
        if (lc >= 0 && lt == rt) {
            json_array_append_new(lk, json_string(l->sch.fields[lc].name));
            continue;
        }
        if (lt != rt && !(numeric(lt) && numeric(rt))) {
            char *txt = sql_unparse_written(keys[k].expr);
            rc = PERR(keys[k].expr, "lookup key %s = %s.%s compares %s with %s; CAST one side",
                      txt, r->alias, rname, sl_type_name(lt), sl_type_name(rt));
            free(txt);
            break;
        }
        if (!its) { /* the left columns as they are, then the computed keys */
            its = sl_calloc((size_t)nleft + SL_MAX_KEY_COLS, sizeof *its);
            for (int c = 0; c < nleft; c++) {
                its[c].name = sl_strdup(l->sch.fields[c].name);
                its[c].text = sql_quote_ident(l->sch.fields[c].name);
                its[c].type = l->sch.fields[c].type;
                its[c].dt = l->sch.fields[c].dt;
            }
            nits = nleft;
        }
        char name[64];
        free_key_name(&l->sch, "lookup_key", k, name, sizeof name);
        char *xt = sql_unparse(x), *q = sql_quote_ident(name);
        its[nits].name = sl_strdup(name);
        its[nits].text = lt == rt ? sl_sprintf("%s AS %s", xt, q)
                                  : sl_sprintf("CAST(%s AS %s) AS %s", xt, sl_type_name(rt), q);
        its[nits].type = rt;
        nits++;
        free(xt);
        free(q);
        json_array_append_new(lk, json_string(name));
    }
    if (rc == SL_OK && its) {
        sql_join_map *keep = l->jmap; /* the calc's input is the plain left row */
        l->jmap = NULL;
        rc = emit_calc(p, l, its, nits, NULL, "lookup-keys");
        l->jmap = keep;
        if (rc == SL_OK) carry_time_attrs(l, its, nits);
    }
    items_free(its, nits);
    if (rc != SL_OK) {
        json_decref(lk);
        json_decref(rk);
        return SL_ERR;
    }
    *lkp = lk;
    *rkp = rk;
    return SL_OK;
}

static int plan_lookup(plan *p, const sql_node *f, const sql_node *rnode, const sql_node *asof,
                       jplan *j, rel *out)
{
    const char *jt = type_name(f->s);
    const sql_node *on = sql_kid(f, 2);
    if (strcmp(jt, "inner") && strcmp(jt, "left"))
        return PERR(f, "a lookup join (FOR SYSTEM_TIME AS OF a processing-time attribute) is an "
                    "inner or LEFT join, not %s", f->s);
    if (p->hints && p->hints->nkids)
        return PERR(p->hints->kids[0], "hint '%s': a lookup join takes no hints (it keeps no "
                    "state)", p->hints->kids[0]->s);
    const sql_table *t = sql_catalog_find(p->cat, rnode->s);
    if (!t) return PERR(rnode, "table '%s' does not exist in this session", rnode->s);
    if (t->is_view)
        return PERR(rnode, "FOR SYSTEM_TIME AS OF %s%s%s makes a lookup join, and '%s' is a view; "
                    "a lookup join needs a table whose connector serves lookups ('filesystem')",
                    asof->s2 ? asof->s2 : "", asof->s2 ? "." : "", asof->s, t->name);
    int jdbc = !strcmp(t->connector, "jdbc");
    if (strcmp(t->connector, "filesystem") && !jdbc)
        return PERR(rnode, "FOR SYSTEM_TIME AS OF %s%s%s (processing time) makes a lookup join, "
                    "and table '%s' (connector '%s') cannot serve lookups: Sluice looks up "
                    "'filesystem' tables, which it loads into memory, and 'jdbc' tables", asof->s2 ? asof->s2 : "",
                    asof->s2 ? "." : "", asof->s, t->name, t->connector);
    if (t->npart)
        return PERR(rnode, "table '%s' is PARTITIONED BY: a lookup join does not read a "
                    "partitioned filesystem table yet", t->name);
    if (j->s[0].r.updating)
        return PERR(sql_kid(f, 0), "the left side of a lookup join must be append-only (it is a "
                    "changelog produced by %s)", j->s[0].r.updater);
    /* the table's side: its physical columns, no vertex */
    rel *r = &j->s[1].r;
    sl_schema_init(&r->sch);
    for (int i = 0; i < t->ncols; i++) {
        if (t->cols[i].expr || t->cols[i].meta)
            return PERR(rnode, "lookup table '%s': column '%s' is computed; a lookup join reads "
                        "a table's physical columns only", t->name, t->cols[i].name);
        sl_schema_add_dt(&r->sch, t->cols[i].name, sql_col_dt(&t->cols[i]));
    }
    r->alias = sl_strdup(rnode->s2 ? rnode->s2 : rnode->s);
    r->ident = sl_strdup(t->name);
    rel *l = &j->s[0].r;
    int nleft = l->sch.n;
    j->s[1].off = nleft;
    j->map = sl_calloc(1, sizeof *j->map);
    side_names(l, j->map, 0);
    side_names(r, j->map, j->s[1].off);
    joined_schema(&l->sch, &r->sch, &j->out);
    if (j->out.n > SL_MAX_FIELDS)
        return PERR(f, "the joined row would have %d columns (at most %d)", j->out.n, SL_MAX_FIELDS);
    lkey keys[SL_MAX_KEY_COLS];
    int nkeys = 0;
    if (lookup_conjuncts(p, j, on, keys, &nkeys) != SL_OK) return SL_ERR;
    if (nkeys == 0)
        return PERR(on, "Temporal table join requires an equality condition on fields of table "
                    "[%s]: a lookup join needs an equality between the left side and a column "
                    "of '%s' (e.g. ON MOD(s.id, 100) = %s.k); a ROW field or an element of the "
                    "table (%s.r.f, %s.a[1]) is not a column", t->name, t->name, r->alias,
                    r->alias, r->alias);
    if (strcmp(jt, "inner") && j->nresid) {
        char *txt = sql_unparse_written(j->resid[0]);
        int rc = PERR(j->resid[0], "LEFT lookup join: the condition %s is not an equality "
                      "between the left side and a column of '%s'; Sluice supports such "
                      "conditions in inner lookup joins only", txt, t->name);
        free(txt);
        return rc;
    }
    /* the keys: a left column of the same type as is, anything else computed */
    json_t *lk, *rk;
    if (lookup_keys(p, j, keys, nkeys, nleft, &lk, &rk) != SL_OK) return SL_ERR;
    json_t *cfg = json_object();
    json_object_set_new(cfg, "join-type", json_string(jt));
    json_object_set_new(cfg, "left-keys", lk);
    json_object_set_new(cfg, "right-keys", rk);
    if (l->sch.n != nleft) json_object_set_new(cfg, "left-columns", json_integer(nleft));
    json_object_set_new(cfg, "table", json_string(t->name));
    for (int i = 0; !jdbc && i < t->nopts; i++)
        if (strcmp(t->keys[i], "connector") && strncmp(t->keys[i], "sink.", 5))
            json_object_set_new(cfg, t->keys[i], json_string(t->vals[i]));
    const sql_column *unc = jdbc ? sql_jdbc_uncarried(t) : NULL;
    if (unc) {
        json_decref(cfg);
        return PERR(f, "lookup join on '%s': column '%s' is %s; the jdbc connector cannot "
                    "carry that type yet", t->name, unc->name, sql_col_dt(unc)->text);
    }
    if (jdbc) { /* operators/jdbc_lookup.c */
        json_t *jc = sql_jdbc_config(t, 0);
        json_object_update(cfg, jc);
        json_decref(jc);
    }
    sql_sbuf id = {0};
    sql_sb_fmt(&id, "lookup|%s|%s|%s|", jt, l->ident ? l->ident : "", t->name);
    for (int k = 0; k < nkeys; k++) {
        char *txt = sql_unparse(keys[k].expr);
        sql_sb_fmt(&id, "%s=%s,", txt, r->sch.fields[keys[k].rcol].name);
        free(txt);
    }
    char *uid = sl_sprintf("join-lookup-%08x", fnv1a(id.p));
    free(id.p);
    char *vid = add_vertex(p, "lookup-join", jdbc ? "jdbc-lookup-join" : "lookup_join", uid, cfg,
                           &r->sch, 0);
    free(uid);
    add_edge(p, l->vid, vid, NULL, NULL, 0);
    memset(out, 0, sizeof *out);
    out->vid = vid;
    out->sch = j->out;
    sl_schema_init(&j->out);
    sql_sbuf ident = {0};
    sql_sb_fmt(&ident, "lookup(%s,%s)", l->ident ? l->ident : "", t->name);
    out->ident = sql_sb_take(&ident);
    out->jmap = j->map;
    j->map = NULL;
    /* the left side's time attributes stay (its columns keep their names) */
    out->rowtime = dup0(l->rowtime);
    out->proctime = dup0(l->proctime);
    return join_done(p, f, j, out);
}

/* ---- window joins ------------------------------------------------------------ */

/* The key equality (index) between the two sides' columns named `name`, or -1. */
static int window_key(const jplan *j, const char *name)
{
    for (int k = 0; k < j->nkeys; k++)
        if (!strcasecmp(j->s[0].r.sch.fields[j->kcol[0][k]].name, name) &&
            !strcasecmp(j->s[1].r.sch.fields[j->kcol[1][k]].name, name))
            return k;
    return -1;
}

static void drop_key(jplan *j, int k)
{
    for (int s = 0; s < 2; s++) {
        memmove(&j->kcol[s][k], &j->kcol[s][k + 1], sizeof(int) * (size_t)(j->nkeys - k - 1));
    }
    j->nkeys--;
}

/* Two windowed inputs (window TVFs or window aggregations) joined ON
 * L.window_start = R.window_start AND L.window_end = R.window_end [AND keys]:
 * a window_join vertex, keyed by the other equalities (by window_start when
 * there are none). SL_DONE when the condition does not equate both window
 * bounds: the caller plans a regular join. */
static int plan_window(plan *p, const sql_node *f, jplan *j, const char *jt, rel *out)
{
    int ks = window_key(j, "window_start"), ke = window_key(j, "window_end");
    if (ks < 0 || ke < 0) return SL_DONE;
    const sql_node *on = sql_kid(f, 2);
    if (p->hints && p->hints->nkids)
        return PERR(p->hints->kids[0], "%s: this join is a window join, whose state its windows "
                    "bound; the hint applies to regular joins", p->hints->kids[0]->s);
    for (int s = 0; s < 2; s++)
        if (j->s[s].r.windowed >= 3) /* processing time: Flink's words */
            return PERR(sql_kid(f, s), j->s[s].r.windowed == 4
                        ? "Processing time Window Join is not supported yet."
                        : "a window join over SESSION window TVF rows is not supported yet");
    const char *lw = j->s[0].r.window, *rw = j->s[1].r.window;
    if (lw && rw && strcmp(lw, rw))
        return PERR(on, "a window join needs the same windows on both sides; the left input has "
                    "%s, the right %s (sizes in ms)", lw, rw);
    for (int s = 0; s < 2; s++)
        if (j->s[s].r.updating)
            return PERR(sql_kid(f, s), "a window join takes append-only inputs; the %s input is a "
                        "changelog (produced by %s)", s ? "right" : "left", j->s[s].r.updater);
    int wcol[2][2];
    for (int s = 0; s < 2; s++) {
        wcol[s][0] = j->kcol[s][ks];
        wcol[s][1] = j->kcol[s][ke];
    }
    drop_key(j, ks > ke ? ks : ke);
    drop_key(j, ks > ke ? ke : ks);
    if (j->nkeys == 0) { /* only the window: all of a window's rows meet on one subtask */
        j->kcol[0][0] = wcol[0][0];
        j->kcol[1][0] = wcol[1][0];
        j->nkeys = 1;
    }
    json_t *cfg = json_object();
    json_object_set_new(cfg, "join-type", json_string(jt));
    json_t *lk = key_names(j, 0), *rk = key_names(j, 1);
    json_object_set(cfg, "left-keys", lk);
    json_object_set(cfg, "right-keys", rk);
    for (int s = 0; s < 2; s++)
        json_object_set_new(cfg, s ? "right-window" : "left-window",
                            json_pack("[s, s]", j->s[s].r.sch.fields[wcol[s][0]].name,
                                      j->s[s].r.sch.fields[wcol[s][1]].name));
    if (j->s[0].r.windowed == 2 || j->s[1].r.windowed == 2) /* bounds in the session zone */
        json_object_set_new(cfg, "time-attribute", json_string("ltz"));
    sql_sbuf id = {0};
    sql_sb_fmt(&id, "window|%s|%s|%s|", jt, j->s[0].r.ident ? j->s[0].r.ident : "",
               j->s[1].r.ident ? j->s[1].r.ident : "");
    for (int k = 0; k < j->nkeys; k++)
        sql_sb_fmt(&id, "%s=%s,", j->s[0].r.sch.fields[j->kcol[0][k]].name,
                   j->s[1].r.sch.fields[j->kcol[1][k]].name);
    char *uid = sl_sprintf("join-window-%08x", fnv1a(id.p));
    free(id.p);
    int rc = SL_OK;
    if (!strcmp(j->s[0].r.vid, j->s[1].r.vid))
        rc = emit_calc(p, &j->s[1].r, NULL, 0, NULL, "join-right");
    if (rc == SL_OK) {
        char *vid = add_vertex(p, "window-join", "window_join", uid, cfg, NULL, 0);
        cfg = NULL;
        add_edge(p, j->s[0].r.vid, vid, "hash", lk, 0);
        add_edge(p, j->s[1].r.vid, vid, "hash", rk, 1);
        memset(out, 0, sizeof *out);
        out->vid = vid;
        out->sch = j->out;
        sl_schema_init(&j->out);
        sql_sbuf ident = {0};
        sql_sb_fmt(&ident, "wjoin(%s,%s)", j->s[0].r.ident ? j->s[0].r.ident : "",
                   j->s[1].r.ident ? j->s[1].r.ident : "");
        out->ident = sql_sb_take(&ident);
        out->jmap = j->map;
        j->map = NULL;
        rc = join_done(p, f, j, out);
    }
    json_decref(cfg);
    json_decref(lk);
    json_decref(rk);
    free(uid);
    return rc;
}

/* ---- window TVFs without aggregation --------------------------------------------- */

int sql_plan_window_tvf(plan *p, const sql_node *f, rel *out)
{
    const sql_node *tref = sql_kid(f, 0), *desc = sql_kid(f, 1), *args = sql_kid(f, 2),
                   *part = sql_kid(f, 3);
    const char *fn = f->s;
    int nargs, lo;
    if (!strcasecmp(fn, "TUMBLE")) lo = 1, nargs = args->nkids > 1 ? 2 : 1;
    else if (!strcasecmp(fn, "HOP") || !strcasecmp(fn, "CUMULATE"))
        lo = 2, nargs = args->nkids > 2 ? 3 : 2;
    else if (!strcasecmp(fn, "SESSION")) lo = 1, nargs = 1;
    else return PERR(f, "unknown window function '%s' (TUMBLE, HOP, CUMULATE or SESSION)", fn);
    int session = !strcasecmp(fn, "SESSION");
    if (session && args->nkids > 1) /* Flink's validator's words */
        return PERR(f, "Invalid number of arguments to function 'SESSION'. Was expecting 3 "
                    "arguments");
    if (args->nkids != nargs && session)
        return PERR(f, "SESSION takes TABLE t [PARTITION BY k], DESCRIPTOR(time column) and the "
                    "gap");
    if (args->nkids != nargs)
        return PERR(f, "%s takes TABLE t, DESCRIPTOR(time column) and %s", fn,
                    !strcasecmp(fn, "TUMBLE") ? "the size (and an offset)"
                    : !strcasecmp(fn, "HOP") ? "the slide and the size (and an offset)"
                                              : "the step and the size (and an offset)");
    if (part && !session) return PERR(part->kids[0], "PARTITION BY belongs to SESSION windows");
    if (sql_tvf_offset_check(p, f) != SL_OK) return SL_ERR;
    int64_t ms[3] = {0, 0, 0};
    for (int i = 0; i < nargs; i++) {
        const sql_node *a = args->kids[i];
        if (a->kind != SQL_INTERVAL)
            return PERR(a, "%s: argument %d must be an interval literal such as "
                        "INTERVAL '10' SECOND", fn, i + 3);
        int neg = i == lo && a->s && a->s[0] == '-'; /* an offset may be negative */
        sql_node pos = *a;
        if (neg) pos.s = a->s + 1;
        if (interval_ms(p, &pos, &ms[i]) != SL_OK) return SL_ERR;
        if (neg) ms[i] = -ms[i];
        if (i < lo && ms[i] <= 0) return PERR(a, "%s: argument %d must be positive", fn, i + 3);
    }
    /* the offset modulo the period it shifts (the size; HOP's slide), as
     * Flink's TimeWindow.getWindowStartWithOffset takes it */
    int64_t offset = 0;
    if (nargs > lo) {
        int64_t period = !strcasecmp(fn, "HOP") ? ms[0] : ms[lo - 1];
        offset = ms[lo] % period;
        if (offset < 0) offset += period;
    }
    rel in = {0};
    if (plan_from(p, tref, &in) != SL_OK) return SL_ERR;
    int rc = SL_ERR;
    if (in.updating) {
        PERR(f, "a window TVF over an updating input (produced by %s) is not supported", in.updater);
        goto done;
    }
    int proc = in.proctime && !strcasecmp(in.proctime, desc->s);
    if (!proc && (!in.rowtime || strcasecmp(in.rowtime, desc->s)) && in.mrowtime &&
        !strcasecmp(in.mrowtime, desc->s)) {
        PERR(desc, "The window function requires the timecol is a time attribute type, but is "
             "TIMESTAMP(3). ('%s' passed a regular, semi or anti join, which makes it a plain "
             "column, as in Flink)", desc->s);
        goto done;
    }
    if (!proc && (!in.rowtime || strcasecmp(in.rowtime, desc->s))) {
        PERR(desc, "DESCRIPTOR(%s): '%s' is not the event-time attribute of '%s' (declare "
             "WATERMARK FOR %s AS %s - INTERVAL '5' SECOND in CREATE TABLE)", desc->s, desc->s,
             tref->s, desc->s, desc->s);
        goto done;
    }
    static const char *const added[] = {"window_start", "window_end", "window_time"};
    for (int i = 0; i < 3; i++)
        if (sl_schema_find(&in.sch, added[i]) >= 0) {
            PERR(f, "'%s' already has a column '%s', which the window TVF adds", tref->s, added[i]);
            goto done;
        }
    char kind[16];
    snprintf(kind, sizeof kind, "%s", fn);
    for (char *c = kind; *c; c++) *c = (char)toupper((unsigned char)*c);
    const char *tname = proc ? in.proctime : in.rowtime;
    json_t *cfg = json_object();
    json_object_set_new(cfg, "window", json_string(kind));
    json_object_set_new(cfg, "time", json_string(tname));
    if (proc) json_object_set_new(cfg, "domain", json_string("processing"));
    /* over a TIMESTAMP_LTZ (PROCTIME() is one) the windows align in the
     * session zone (which add_job_config copies into the vertex) and
     * window_time is an LTZ */
    int tci = sl_schema_find(&in.sch, tname);
    const sl_dtype *wtdt = sl_dtype_basic(SL_T_TIMESTAMP);
    int ltz = tci >= 0 && in.sch.fields[tci].dt->variant == SL_DV_LTZ;
    if (ltz) {
        json_object_set_new(cfg, "time-attribute", json_string("ltz"));
        char derr[100];
        if (sl_dtype_parse("TIMESTAMP_LTZ(3)", &wtdt, derr, sizeof derr) != SL_OK)
            wtdt = sl_dtype_basic(SL_T_TIMESTAMP);
    }
    json_t *keys = json_array();
    if (session) {
        json_object_set_new(cfg, "gap", json_integer((json_int_t)ms[0]));
        for (int i = 0; part && i < part->nkids; i++) {
            const sql_node *e = part->kids[i];
            int col = e->s ? sl_schema_find(&in.sch, e->s) : -1;
            if (col < 0) {
                json_decref(cfg);
                json_decref(keys);
                PERR(e, "PARTITION BY %s: not a column of '%s'", e->s ? e->s : "?", tref->s);
                goto done;
            }
            json_array_append_new(keys, json_string(in.sch.fields[col].name));
        }
        json_object_set(cfg, "partition-by", keys);
    } else if (!strcmp(kind, "TUMBLE")) {
        json_object_set_new(cfg, "size", json_integer((json_int_t)ms[0]));
    } else {
        json_object_set_new(cfg, strcmp(kind, "HOP") ? "step" : "slide", json_integer((json_int_t)ms[0]));
        json_object_set_new(cfg, "size", json_integer((json_int_t)ms[1]));
    }
    if (nargs > lo) json_object_set_new(cfg, "offset", json_integer((json_int_t)offset));
    /* the uid of a window without an offset is as before offsets */
    char *uid_src = nargs > lo && strcmp(kind, "TUMBLE")
                        ? sl_sprintf("%s|%s|%s|%lld|%lld|%lld", kind, in.ident ? in.ident : "",
                                     in.rowtime, (long long)ms[0], (long long)ms[1],
                                     (long long)offset)
                        : sl_sprintf("%s|%s|%s|%lld|%lld", kind, in.ident ? in.ident : "",
                                     in.rowtime, (long long)ms[0],
                                     (long long)(nargs > lo ? offset : ms[1]));
    if (session || proc) { /* new kinds: their own uid text */
        char *k = json_dumps(keys, JSON_COMPACT);
        char *u = sl_sprintf("%s|%s|%s", uid_src, k, proc ? "proc" : "event");
        free(k);
        free(uid_src);
        uid_src = u;
    }
    char *uid = sl_sprintf("%s-%08x", session ? "session-tvf" : "window-tvf", fnv1a(uid_src));
    free(uid_src);
    int global = session && json_array_size(keys) == 0;
    char *vid = add_vertex(p, "window-tvf", session ? "session_tvf" : "window_tvf", uid, cfg, NULL,
                           global ? 1 : 0);
    free(uid);
    if (!session) add_edge(p, in.vid, vid, NULL, NULL, 0);
    else if (global) add_edge(p, in.vid, vid, "rebalance", NULL, 0);
    else add_edge(p, in.vid, vid, "hash", keys, 0);
    json_decref(keys);
    free(in.vid);
    in.vid = vid;
    for (int i = 0; i < 3; i++)
        if (i == 2) sl_schema_add_dt(&in.sch, added[i], wtdt);
        else sl_schema_add(&in.sch, added[i], SL_T_TIMESTAMP);
    /* as in Flink, window_time becomes the time attribute; the old one a plain
     * column (processing time: the PROCTIME() column stays one, and window_time
     * is a plain column). Window joins and window Top-N read TUMBLE, HOP and
     * CUMULATE on event time only: windowed 3 (SESSION) and 4 (processing
     * time) make them refuse. */
    if (!proc) {
        free(in.rowtime);
        in.rowtime = sl_strdup("window_time");
    }
    in.windowed = proc ? 4 : session ? 3 : 1 + ltz;
    /* what a window join compares: the sizes and the offset (when not 0), in ms */
    char off[32] = "";
    if (offset) snprintf(off, sizeof off, ",%lld", (long long)offset);
    in.window = lo == 1 ? sl_sprintf("%s(%lld%s)", kind, (long long)ms[0], off)
                        : sl_sprintf("%s(%lld,%lld%s)", kind, (long long)ms[0], (long long)ms[1],
                                     off);
    char *ident = sl_sprintf("%s(%s)", kind, in.ident ? in.ident : "");
    free(in.ident);
    in.ident = ident;
    free(in.alias);
    in.alias = sl_strdup(f->s2 ? f->s2 : tref->s);
    *out = in;
    return SL_OK;
done:
    rel_free(&in);
    return rc;
}

int sql_join_resolve_select(plan *p, const sql_node *sel, const sql_node **out)
{
    *out = sel;
    const sql_node *from = sql_kid(sel, 1), *hints = sql_kid(sel, 5);
    if (!from || from->kind != SQL_FROM_JOIN) {
        if (hints && hints->nkids)
            return PERR(hints->kids[0], "the %s hint applies to a SELECT over a regular join "
                        "(Sluice supports STATE_TTL there)", hints->kids[0]->s);
        return SL_OK;
    }
    rel r;
    const sql_node *saved = p->hints, *saved_where = p->push_where;
    p->hints = hints;
    p->push_where = sql_kid(sel, 2);
    int prc = sql_plan_join(p, from, &r);
    p->hints = saved;
    p->push_where = saved_where;
    if (prc != SL_OK) return SL_ERR;
    sql_node *n = sql_node_new(p->arena, SQL_SELECT, sel->line, sel->col);
    n->flags = sel->flags;
    n->s = sel->s;
    n->s2 = sel->s2;
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < sel->nkids; i++) {
        const sql_node *k = sel->kids[i];
        sql_node *nk = NULL;
        if (i == 1) {
            nk = (sql_node *)from; /* planned already: plan_from finds it */
        } else if (i == 0 && k) {
            /* the select list: alias.* becomes that side's columns */
            nk = sql_node_new(p->arena, k->kind, k->line, k->col);
            for (int it = 0; rc == SL_OK && it < k->nkids; it++) {
                const sql_node *si = k->kids[it], *e = si->kids[0];
                if (e->kind == SQL_STAR && e->s) {
                    int any = 0;
                    for (int c = 0; c < r.jmap->n; c++) {
                        const jcol *jc = &r.jmap->c[c];
                        if (!jc->qual || strcasecmp(jc->qual, e->s)) continue;
                        sql_node *ni = sql_node_new(p->arena, SQL_ITEM, e->line, e->col);
                        sql_node *col = sql_node_new(p->arena, SQL_COL, e->line, e->col);
                        const char *nm = r.sch.fields[jc->col].name;
                        col->s = sql_arena_strndup(p->arena, nm, strlen(nm));
                        col->flags = SQL_F_QUOTED;
                        sql_node_add(p->arena, ni, col);
                        sql_node_add(p->arena, nk, ni);
                        any = 1;
                    }
                    if (!any) {
                        sql_sbuf b = {0};
                        quals_text(r.jmap, &b);
                        rc = PERR(e, "unknown table or alias '%s' (the join names %s)", e->s, b.p ? b.p : "");
                        free(b.p);
                    }
                    continue;
                }
                sql_node *ni = sql_node_new(p->arena, SQL_ITEM, si->line, si->col);
                ni->s = si->s;
                sql_node *ne;
                if ((rc = rewrite(p, r.jmap, &r.sch, e, &ne)) == SL_OK) {
                    sql_node_add(p->arena, ni, ne);
                    sql_node_add(p->arena, nk, ni);
                }
            }
        } else {
            rc = rewrite(p, r.jmap, &r.sch, k, &nk);
        }
        if (rc == SL_OK) sql_node_add(p->arena, n, nk);
    }
    rel_free(&r);
    if (rc != SL_OK) return SL_ERR;
    *out = n;
    return SL_OK;
}
