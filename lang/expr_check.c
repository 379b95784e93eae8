/*
 * expr_check.c -- the typed tree of a scalar expression, built from the SQL
 * grammar's syntax tree (lang/ast.h): every column is resolved to an index
 * and every operator's operands are checked and promoted here, once per job.
 *
 * A `calc` text is parsed by the SQL grammar in its expression-only mode
 * (sql_parse_expr), so calc and SQL share one syntax, one precedence table
 * and one set of syntax errors; the SQL planner hands its own trees to
 * sl_expr_from_sql. Messages say "line L, column C: ..." like the parser's.
 * Each node also keeps the 1-based byte offset of its first character in
 * the text, which run-time errors name ("at position N").
 */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"
#include "calendar.h"
#include "duration.h"
#include "parse.h"
#include "temporal.h"
#include "udf_sig.h"

typedef struct bld {
    const sl_schema *in;
    const char *text;  /* the calc text, or NULL for a planner's tree */
    size_t textlen;
    int *lines;        /* byte offset of each line's start in text */
    int nlines;
    int depth;         /* build recursion */
    bool failed;       /* an error is set: keep the first, it is the precise one */
    node *all;         /* every node built so far */
    char *err;
    size_t errlen;
    char names[4][40]; /* ntname()'s results, reused round robin */
    int nname;
    const sl_udf_set *fns; /* user-defined functions the tree may call, or NULL */
    bool exact;        /* the next node built may be an exact DECIMAL literal: its parent
                        * (arithmetic, a comparison, CAST, the root) takes DECIMALs */
    bool lit_exact;    /* `exact` as the node being built saw it */
} bld;

/* The SQL session's functions while this thread plans one of its statements. */
static _Thread_local const sl_udf_set *session_fns;
void sl_expr_set_session_functions(const struct sl_udf_set *fns) { session_fns = fns; }
const struct sl_udf_set *sl_expr_session_functions(void) { return session_fns; }

static int perr(bld *b, int line, int col, const char *fmt, ...) SL_PRINTF(4, 5);

/* Set an error (the first one wins) as "line L, column C: ...". */
static int perr(bld *b, int line, int col, const char *fmt, ...)
{
    if (b->err && b->errlen && !b->failed) {
        char msg[320];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(b->err, b->errlen, "line %d, column %d: %s", line, col, msg);
    }
    b->failed = true;
    return SL_ERR;
}
/* at a syntax node's first token, at its operator, at a typed node */
#define AT(e) (e)->line, (e)->col
#define OPAT(e) ((e)->oline ? (e)->oline : (e)->line), ((e)->oline ? (e)->ocol : (e)->col)
#define NAT(n) (n)->ln, (n)->cn

/* 1-based byte offset of line:col in the text (run-time messages). */
static int offset_of(const bld *b, int line, int col)
{
    if (line >= 1 && line <= b->nlines) return b->lines[line - 1] + col;
    return col;
}

static node *new_node(bld *b, n_op op, int line, int col, int nkids)
{
    node *n = sl_calloc(1, sizeof *n);
    n->op = op;
    n->ln = line;
    n->cn = col;
    n->pos = offset_of(b, line, col);
    n->nkids = nkids;
    n->kids = nkids ? sl_calloc((size_t)nkids, sizeof *n->kids) : NULL;
    n->height = 1;
    n->next_all = b->all;
    b->all = n;
    return n;
}

/* Recompute the height after children are in place; refuse deep trees. */
static int seal(bld *b, node *n)
{
    for (int i = 0; i < n->nkids; i++)
        if (n->kids[i] && n->kids[i]->height + 1 > n->height) n->height = n->kids[i]->height + 1;
    if (n->height > SL_EXPR_MAX_DEPTH)
        return perr(b, NAT(n), "expression nested too deeply (limit %d)", SL_EXPR_MAX_DEPTH);
    return SL_OK;
}

/* A node of one child and a result type, at e's position. */
static node *unary(bld *b, n_op op, const sql_node *e, node *kid, sl_type type)
{
    node *n = new_node(b, op, AT(e), 1);
    n->kids[0] = kid;
    n->type = type;
    return seal(b, n) ? NULL : n;
}

/* Grow a node's child array by one (variadic forms: IN, CASE, functions). */
static void add_kid(node *n, node *kid)
{
    n->kids = sl_realloc(n->kids, (size_t)(n->nkids + 1) * sizeof *n->kids);
    n->kids[n->nkids++] = kid;
}

static const char *tname(sl_type t) { return sl_type_name(t); }

/* A node's type for messages: its sl_type, or "INTERVAL SECOND",
 * "INTERVAL DAY TO SECOND" for an interval. Valid for the next 3 calls. */
static const char *ntname(bld *b, const node *n)
{
    /* a literal or a clock function as Calcite names it: 'ab' CHAR(2), NOW() TIMESTAMP_LTZ(3) */
    if (n->dt && (n->op == N_LIT || n->op == N_NOW)) return sl_dtype_nullable(n->dt, false)->text;
    if (n->dt) return n->dt->text; /* a column: its full type */
    if (!n->interval) return tname(n->type);
    char *s = b->names[b->nname++ % 4];
    const char *fs = iv_is_ym(n->ivs) ? (n->ivs == IV_YM_YEAR ? "YEAR" : "MONTH") : iv_name[n->ivs];
    const char *fe = iv_is_ym(n->ive) ? (n->ive == IV_YM_YEAR ? "YEAR" : "MONTH") : iv_name[n->ive];
    if (n->ivs == n->ive) snprintf(s, sizeof b->names[0], "INTERVAL %s", fe);
    else snprintf(s, sizeof b->names[0], "INTERVAL %s TO %s", fs, fe);
    return s;
}

static void set_iv(node *n, int first, int last)
{
    n->interval = true;
    n->ivs = (uint8_t)first;
    n->ive = (uint8_t)last;
}

/* n takes the fields of both a and b (an interval or a NULL each): the
 * widest span, as INTERVAL MINUTE + INTERVAL SECOND is MINUTE TO SECOND. */
static void join_iv(node *n, const node *a, const node *c)
{
    const node *x = a->interval ? a : c, *y = c->interval ? c : a;
    set_iv(n, x->ivs > y->ivs ? x->ivs : y->ivs, x->ive < y->ive ? x->ive : y->ive);
}

/* Fold branch `br` of a CASE / COALESCE / IF into the result node n: all
 * typed branches must be intervals or none may be. *first: the first typed
 * branch folded so far (NULL before). */
static int merge_branch_iv(bld *b, node *n, const node *br, const node **first, int line,
                           int col, const char *what)
{
    if (br->type == SL_T_NULL) return SL_OK;
    if (!*first) {
        *first = br;
        if (br->interval) set_iv(n, br->ivs, br->ive);
        return SL_OK;
    }
    if ((*first)->interval != br->interval ||
        (br->interval && iv_is_ym((*first)->ivs) != iv_is_ym(br->ivs)))
        return perr(b, line, col, "%s have incompatible types %s and %s", what,
                    ntname(b, *first), ntname(b, br));
    if (n->interval) join_iv(n, n, br);
    return SL_OK;
}

/* The type both a and b convert to, for CASE branches, COALESCE, IN, ... */
static bool common_type(sl_type a, sl_type c, sl_type *out)
{
    if (a == SL_T_NULL) *out = c;
    else if (c == SL_T_NULL || a == c) *out = a;
    else if (is_num_type(a) && is_num_type(c)) *out = num_rank(a) >= num_rank(c) ? a : c;
    else if ((a == SL_T_DECIMAL && is_num_type(c)) || (c == SL_T_DECIMAL && is_num_type(a)))
        *out = is_fp_type(a) || is_fp_type(c) ? SL_T_DOUBLE : SL_T_DECIMAL; /* see unify_dec */
    else return false;
    return true;
}

static node *wrap_cast(bld *b, node *x, sl_type to)
{
    node *c = new_node(b, N_CAST, NAT(x), 1);
    c->kids[0] = x;
    c->type = to;
    c->height = x->height + 1;
    return c;
}

static sl_dec_type dec_type_of(const node *n);

/* The branches kids[idx[0..cnt)] of node n (CASE, COALESCE, IF, GREATEST,
 * LEAST), whose common type (common_type) is n->type, converted to it when
 * a DECIMAL is among them: a DOUBLE result reads each DECIMAL as a DOUBLE;
 * a DECIMAL result is Flink's least-restrictive DECIMAL -- the most integer
 * digits and the largest scale of the branches (an integer counts as
 * DECIMAL(3|5|10|19, 0)), adjusted to 38 digits as arithmetic results are --
 * and every branch of another type is CAST to it. */
static int unify_dec(bld *b, node *n, const int *idx, int cnt)
{
    bool any = false;
    for (int j = 0; j < cnt; j++) any = any || n->kids[idx[j]]->type == SL_T_DECIMAL;
    if (!any || (n->type != SL_T_DECIMAL && n->type != SL_T_DOUBLE)) return SL_OK;
    if (n->type == SL_T_DOUBLE) {
        for (int j = 0; j < cnt; j++)
            if (n->kids[idx[j]]->type == SL_T_DECIMAL)
                n->kids[idx[j]] = wrap_cast(b, n->kids[idx[j]], SL_T_DOUBLE);
        return SL_OK;
    }
    int ip = 0, sc = 0;
    for (int j = 0; j < cnt; j++) {
        const node *k = n->kids[idx[j]];
        if (k->type == SL_T_NULL) continue;
        sl_dec_type t = dec_type_of(k);
        ip = SL_MAX(ip, t.p - t.s);
        sc = SL_MAX(sc, t.s);
    }
    sl_dec_type r = sl_dec_type_adjust(ip + sc, sc);
    char derr[160];
    if (!(n->dt = sl_dtype_decimal(r.p, r.s, derr, sizeof derr)))
        return perr(b, NAT(n), "%s", derr);
    for (int j = 0; j < cnt; j++) {
        node *k = n->kids[idx[j]];
        if (k->type == SL_T_NULL || ndt(k) == n->dt) continue;
        node *c = wrap_cast(b, k, SL_T_DECIMAL);
        c->dt = n->dt;
        n->kids[idx[j]] = c;
    }
    return SL_OK;
}

/* Flink's type of a text result n (a STRING) over the text operands
 * kids[idx[0..cnt)]: their least restrictive type as Calcite's -- CHAR(n)
 * when every one is a CHAR(n) of one n, else VARCHAR of the longest (STRING
 * when one is) -- NOT NULL when notnull says so. NULL operands take no part;
 * with none left, or a nullable STRING, n->dt stays NULL (plain STRING). The
 * values need no conversion: none is longer than the type, and a CHAR result
 * has operands of exactly its length. */
static int text_lrt(bld *b, node *n, const int *idx, int cnt, bool notnull)
{
    if (n->type != SL_T_STRING) return SL_OK;
    int64_t len = -1;
    bool fixed = true;
    for (int j = 0; j < cnt; j++) {
        const node *k = n->kids[idx[j]];
        if (k->type == SL_T_NULL) continue;
        if (k->type != SL_T_STRING) return SL_OK; /* not text: as it was */
        const sl_dtype *d = ndt(k);
        if (len >= 0 && (d->variant != SL_DV_CHAR || !fixed || d->p != len)) fixed = false;
        if (d->variant != SL_DV_CHAR) fixed = false;
        len = SL_MAX(len, (int64_t)d->p);
    }
    if (len < 0 || (len >= SL_DTYPE_MAX_LEN && !notnull)) return SL_OK;
    char derr[160];
    if (!(n->dt = sl_dtype_text(true, fixed, len, notnull, derr, sizeof derr)))
        return perr(b, NAT(n), "%s", derr);
    return SL_OK;
}

/* Are kids[idx[0..cnt)] all NOT NULL (a NULL literal is not)? */
static bool all_notnull(const node *n, const int *idx, int cnt)
{
    for (int j = 0; j < cnt; j++)
        if (n->kids[idx[j]]->type == SL_T_NULL || !ndt(n->kids[idx[j]])->notnull) return false;
    return true;
}

/* Does built-in `name` keep a DECIMAL argument (`arg`, 0-based) a DECIMAL,
 * as Flink does? The others read a DECIMAL as a DOUBLE. */
static bool keeps_dec(n_op op, const char *name, int arg)
{
    switch (op) {
    case N_ABS:
    case N_FLOOR:
    case N_CEIL:
    case N_MOD:
    case N_COALESCE:
    case N_NULLIF: return true;
    case N_IF: return arg > 0;
    case N_SINGLE_VALUE: return arg == 1;
    case N_FNX:
        return (arg == 0 && (!strcasecmp(name, "SIGN") || !strcasecmp(name, "ROUND") ||
                             !strcasecmp(name, "TRUNCATE"))) ||
               !strcasecmp(name, "GREATEST") || !strcasecmp(name, "LEAST") ||
               (!strcasecmp(name, "SL_JSON_VALUE") && (arg == 4 || arg == 6)); /* DEFAULTs */
    default: return false;
    }
}

/* x converted to nested type dt (a CAST that cannot fail: dt is the least
 * restrictive type of x's and another's). */
static node *wrap_nest_cast(bld *b, node *x, const sl_dtype *dt)
{
    node *n = new_node(b, N_FNX, NAT(x), 0);
    n->fx = sl_nest_find("SL_CAST");
    add_kid(n, x);
    n->dt = dt;
    char why[300];
    if (sl_nest_type(n, NULL, why, sizeof why) != SL_OK) {
        perr(b, NAT(x), "%s", why);
        return NULL;
    }
    return seal(b, n) ? NULL : n;
}

/* make_comparable for ARRAY, MAP, MULTISET and ROW values: equality only (Flink
 * has no order on them), between values of one kind with a least restrictive
 * type, which each side is converted to when its own differs. */
static int nested_comparable(bld *b, node **a, node **c, int line, int col, const char *op,
                             bool ordered)
{
    const sl_dtype *da = ndt(*a), *dc = ndt(*c), *t = NULL;
    if ((*a)->type == SL_T_NULL || (*c)->type == SL_T_NULL) t = (*a)->type == SL_T_NULL ? dc : da;
    else if (!(*a)->interval && !(*c)->interval) t = sl_nest_common(da, dc);
    if (!t)
        return perr(b, line, col, "cannot compare %s with %s in '%s'", ntname(b, *a),
                    ntname(b, *c), op);
    if (ordered) /* Flink's words (its code generator's, which refuses them) */
        return perr(b, line, col, "Comparable type expected, but was '%s' ('%s' needs an order)",
                    sl_type_is_nested((*a)->type) ? da->text : dc->text, op);
    if ((*a)->type != SL_T_NULL && da->phys != t->phys && !(*a = wrap_nest_cast(b, *a, t)))
        return SL_ERR;
    if ((*c)->type != SL_T_NULL && dc->phys != t->phys && !(*c = wrap_nest_cast(b, *c, t)))
        return SL_ERR;
    return SL_OK;
}

/* Make *a and *c comparable: numbers of any width; equal types; STRING
 * with BYTES; TIMESTAMP with STRING (the string side gets a CAST). An
 * `ordered` comparison refuses BOOLEAN, which has no order. */
static int make_comparable(bld *b, node **a, node **c, int line, int col, const char *op,
                           bool ordered)
{
    sl_type ta = (*a)->type, tc = (*c)->type, t;
    if (sl_type_is_nested(ta) || sl_type_is_nested(tc))
        return nested_comparable(b, a, c, line, col, op, ordered);
    if (((*a)->interval != (*c)->interval && ta != SL_T_NULL && tc != SL_T_NULL) ||
        ((*a)->interval && (*c)->interval && iv_is_ym((*a)->ivs) != iv_is_ym((*c)->ivs)))
        return perr(b, line, col, "cannot compare %s with %s in '%s'", ntname(b, *a),
                    ntname(b, *c), op);
    /* a DATE beside a TIMESTAMP is its midnight, as in Flink */
    if (ta == SL_T_DATE && tc == SL_T_TIMESTAMP && !ndt(*c)->variant) {
        *a = wrap_cast(b, *a, SL_T_TIMESTAMP);
        return SL_OK;
    }
    if (tc == SL_T_DATE && ta == SL_T_TIMESTAMP && !ndt(*a)->variant) {
        *c = wrap_cast(b, *c, SL_T_TIMESTAMP);
        return SL_OK;
    }
    bool exact_a = is_num_type(ta) || ta == SL_T_DECIMAL, exact_c = is_num_type(tc) || tc == SL_T_DECIMAL;
    if ((ta == SL_T_DECIMAL && (exact_c || tc == SL_T_NULL)) ||
        (tc == SL_T_DECIMAL && (exact_a || ta == SL_T_NULL)))
        return SL_OK; /* compared exactly (or as DOUBLE beside a DOUBLE) */
    if ((ta == SL_T_DATE || ta == SL_T_TIME) && (ta == tc || tc == SL_T_NULL)) return SL_OK;
    if ((tc == SL_T_DATE || tc == SL_T_TIME) && ta == SL_T_NULL) return SL_OK;
    if (ta == SL_T_TIMESTAMP && tc == SL_T_STRING) *c = wrap_cast(b, *c, SL_T_TIMESTAMP);
    else if (tc == SL_T_TIMESTAMP && ta == SL_T_STRING) *a = wrap_cast(b, *a, SL_T_TIMESTAMP);
    else if (!common_type(ta, tc, &t) && !(is_str_type(ta) && is_str_type(tc)))
        return perr(b, line, col, "cannot compare %s with %s in '%s'", ntname(b, *a),
                    ntname(b, *c), op);
    else if (ordered && (ta == SL_T_BOOLEAN || tc == SL_T_BOOLEAN))
        return perr(b, line, col, "BOOLEAN values have no order: '%s' is not allowed", op);
    return SL_OK;
}

static bool is_bool_or_null(sl_type t) { return t == SL_T_BOOLEAN || t == SL_T_NULL; }

static node *build(bld *b, const sql_node *e);
static node *build_nest(bld *b, const sql_node *e, const sl_dtype *cast_to, node *x);

/* ---- literals ------------------------------------------------------------ */

static node *lit_node(bld *b, const sql_node *at, sl_type t)
{
    node *n = new_node(b, N_LIT, AT(at), 0);
    n->type = t;
    n->lit.isnull = t == SL_T_NULL;
    return n;
}

static node *build_number(bld *b, const sql_node *e)
{
    const char *s = e->s;
    size_t len = strlen(s);
    if (strcspn(s, ".eE") == len) {
        int64_t v;
        if (!sl_expr_parse_i64(s, len, &v)) {
            perr(b, AT(e), "integer literal %.*s is out of range", (int)SL_MIN(len, 40), s);
            return NULL;
        }
        node *n = lit_node(b, e, v <= INT32_MAX ? SL_T_INT : SL_T_BIGINT);
        n->lit.v.i = v;
        return n;
    }
    if (len >= 64) {
        perr(b, AT(e), "decimal literal is too long");
        return NULL;
    }
    if (strcspn(s, "eE") == len && b->lit_exact) {
        /* an exact literal is a DECIMAL(p, s): s the digits after the point, p the
         * digits of the unscaled value (leading zeros left out), at least s and 1 */
        const char *dot = strchr(s, '.');
        int scale = (int)strlen(dot + 1), prec = 0;
        bool lead = true;
        for (const char *q = s; *q; q++) {
            if (!is_digit((unsigned char)*q) || (lead && *q == '0')) continue;
            lead = false;
            prec++;
        }
        if (prec < scale) prec = scale;
        if (prec < 1) prec = 1;
        char derr[160];
        const sl_dtype *dt = prec <= SL_DECIMAL_MAX_PRECISION
                                 ? sl_dtype_decimal(prec, scale, derr, sizeof derr) : NULL;
        sl_dec v;
        sl_dec_type t = {(uint8_t)(dt ? prec : 38), (uint8_t)(dt ? scale : 0)};
        if (!dt || sl_dec_parse(s, len, t, &v) != SL_DEC_OK) {
            perr(b, AT(e), "decimal literal %s has more than %d digits", s,
                 SL_DECIMAL_MAX_PRECISION);
            return NULL;
        }
        node *n = lit_node(b, e, SL_T_DECIMAL);
        n->dt = dt;
        n->lit.v.dec.lo = v.lo;
        n->lit.v.dec.hi = v.hi;
        return n;
    }
    double d = strtod(s, NULL);
    if (isinf(d)) {
        perr(b, AT(e), "decimal literal %s is out of range", s);
        return NULL;
    }
    node *n = lit_node(b, e, SL_T_DOUBLE);
    n->lit.v.d = d;
    return n;
}

static node *build_string(bld *b, const sql_node *e)
{
    node *n = lit_node(b, e, SL_T_STRING);
    size_t len = strlen(e->s);
    if (len > UINT32_MAX) {
        perr(b, AT(e), "string literal too long");
        return NULL;
    }
    n->owned = sl_strndup(e->s, len);
    n->lit.v.s.p = n->owned;
    n->lit.v.s.len = (uint32_t)len;
    /* CHAR(n) NOT NULL, n its code points, as Flink types a literal (the value is
     * exactly n long: nothing to pad); '' is Flink's CHAR(0) NOT NULL */
    char derr[160];
    if (!(n->dt = sl_dtype_text(true, true, sl_fnx_cpcount(n->owned, len), true, derr,
                                sizeof derr))) {
        perr(b, AT(e), "%s", derr);
        return NULL;
    }
    return n;
}

/* An interval field: SECOND, MINUTE, HOUR, DAY, the Sluice extension
 * MILLISECOND, and the spellings sl_interval_parse takes; -1 otherwise. */
static int iv_field(const char *s)
{
    int64_t mult;
    if (!sl_duration_unit(s, strlen(s), &mult)) return -1;
    for (int i = 0; i < IV_N; i++)
        if (iv_ms[i] == mult) return i;
    return -1;
}

/* A precision written in a qualifier ("3" or "3,6"): the first number in
 * lo..hi, the second (fractional seconds) in 0..9 and only after SECOND. */
static int iv_precision(bld *b, const sql_node *u, int field, int lo, int hi, int *out)
{
    const char *s = u->s2, *comma = strchr(s, ',');
    int64_t v, f;
    size_t n1 = comma ? (size_t)(comma - s) : strlen(s);
    if (!sl_expr_parse_i64(s, n1, &v) || v < lo || v > hi)
        return perr(b, AT(u), "interval precision must be a number from %d to %d", lo, hi);
    if (comma) {
        if (field != IV_SECOND || lo == 0)
            return perr(b, AT(u), "only a leading SECOND field takes a fractional precision");
        if (!sl_expr_parse_i64(comma + 1, strlen(comma + 1), &f) || f < 0 || f > 9)
            return perr(b, AT(u), "interval precision must be a number from 0 to 9");
    }
    *out = (int)v;
    return SL_OK;
}

/* qualifier := field [(p [, f])] [TO field [(f)]], as in INTERVAL '1:30'
 * MINUTE TO SECOND or CAST(n AS INTERVAL SECOND(3)) -- a LIST of one or two
 * IDENT units. *lead_prec is the leading field's precision in digits: 2
 * unless written (Flink's default), 0 (unchecked) for MILLISECOND.
 * Fractional-second precisions are accepted; values keep milliseconds. */
static int iv_qualifier(bld *b, const sql_node *q, int *first, int *last, int *lead_prec)
{
    const sql_node *u = sql_kid(q, 0), *u2 = sql_kid(q, 1);
    if (!u) return perr(b, AT(q), "missing interval unit");
    int a = iv_field(u->s), c, frac;
    if (a < 0 && (!strcasecmp(u->s, "YEAR") || !strcasecmp(u->s, "MONTH"))) {
        /* YEAR [(p)] [TO MONTH], MONTH [(p)] */
        a = !strcasecmp(u->s, "YEAR") ? IV_YM_YEAR : IV_YM_MONTH;
        *lead_prec = 2;
        if (u->s2 && iv_precision(b, u, a, 1, 10, lead_prec)) return SL_ERR;
        c = a;
        if (u2) {
            if (a != IV_YM_YEAR || strcasecmp(u2->s, "MONTH") || u2->s2)
                return perr(b, AT(u2), "invalid interval qualifier: only MONTH follows TO after "
                            "YEAR (INTERVAL '1-2' YEAR TO MONTH)");
            c = IV_YM_MONTH;
        }
        *first = a;
        *last = c;
        return SL_OK;
    }
    if (a < 0) {
        return perr(b, AT(u), "unexpected '%s', expected an interval unit (SECOND, MINUTE, "
                    "HOUR, DAY)", u->s);
    }
    *lead_prec = a == IV_MS ? 0 : 2;
    if (u->s2 && iv_precision(b, u, a, 1, 10, lead_prec)) return SL_ERR;
    c = a;
    if (u2) {
        c = iv_field(u2->s);
        if (c < IV_SECOND || c >= a)
            return perr(b, AT(u2), "invalid interval qualifier: expected HOUR, MINUTE or SECOND "
                        "finer than %s after TO", iv_name[a]);
        if (u2->s2 && (c != IV_SECOND || strchr(u2->s2, ',')))
            return perr(b, AT(u2), "only a trailing SECOND field takes a precision");
        if (u2->s2 && iv_precision(b, u2, c, 0, 9, &frac)) return SL_ERR;
    }
    *first = a;
    *last = c;
    return SL_OK;
}

/* The milliseconds an interval literal's text stands for under the
 * qualifier first..last: '[+|-]N' for one field (SECOND also 'N.fff'), and
 * for several 'D H', 'D H:M', 'D H:M:S[.f]', 'H:M', 'H:M:S[.f]', 'M:S[.f]'.
 * Fields after the first are one or two digits in their range (HOUR 0-23,
 * MINUTE and SECOND 0-59). Returns SL_OK, or SL_ERR with the message in why. */
static int iv_text(const char *t, int first, int last, int lead_prec, int64_t *ms, char *why,
                   size_t whylen)
{
    static const int maxv[IV_N] = {999, 59, 59, 23, 0};
    size_t n = strlen(t), i = 0;
    while (n > 0 && t[n - 1] == ' ') n--;
    while (i < n && t[i] == ' ') i++;
    bool neg = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
    int64_t total = 0;
    for (int f = first; f >= last; f--) {
        if (f != first) { /* the separator before this field */
            char sep = f == IV_HOUR ? ' ' : ':';
            if (i >= n || t[i] != sep) goto malformed;
            while (sep == ' ' && i + 1 < n && t[i + 1] == ' ') i++;
            i++;
        }
        size_t d0 = i;
        int64_t v = 0;
        while (i < n && is_digit((unsigned char)t[i]) && i - d0 < 18) v = v * 10 + (t[i++] - '0');
        size_t nd = i - d0;
        if (nd == 0 || (i < n && is_digit((unsigned char)t[i]))) goto malformed;
        if (f == first) {
            if (lead_prec > 0 && nd > (size_t)lead_prec) {
                /* leading zeros do not count */
                size_t sig = nd;
                for (size_t k = d0; k < i - 1 && t[k] == '0'; k++) sig--;
                if (sig > (size_t)lead_prec) {
                    snprintf(why, whylen, "interval field value %.*s exceeds precision of %s(%d) "
                             "field (write %s(%d))", (int)nd, t + d0, iv_name[f], lead_prec,
                             iv_name[f], (int)sig);
                    return SL_ERR;
                }
            }
        } else if (nd > 2 || v > maxv[f]) {
            snprintf(why, whylen, "invalid INTERVAL literal '%s': %s must be 0 to %d", t,
                     iv_name[f], maxv[f]);
            return SL_ERR;
        }
        int64_t part;
        if (__builtin_mul_overflow(v, iv_ms[f], &part) || __builtin_add_overflow(total, part, &total))
            goto range;
    }
    if (last == IV_SECOND && i < n && t[i] == '.') { /* fraction of a second: keep ms */
        i++;
        int nd = 0, frac = 0;
        for (; i < n && is_digit((unsigned char)t[i]); i++, nd++)
            if (nd < 3) frac = frac * 10 + (t[i] - '0');
        if (nd == 0) goto malformed;
        for (; nd < 3; nd++) frac *= 10;
        if (__builtin_add_overflow(total, frac, &total)) goto range;
    }
    if (i != n) goto malformed;
    *ms = neg ? -total : total;
    return SL_OK;
malformed:
    if (first == last) {
        snprintf(why, whylen, "INTERVAL needs a whole number in quotes, e.g. INTERVAL '5' SECOND");
    } else {
        static const char *const form[IV_N] = {"", "SS[.fff]", "MM", "HH", "D"};
        char want[40] = "";
        size_t o = 0;
        for (int f = first; f >= last && o < sizeof want; f--)
            o += (size_t)snprintf(want + o, sizeof want - o, "%s%s",
                                  f == first ? "" : f == IV_HOUR ? " " : ":", form[f]);
        snprintf(why, whylen, "invalid INTERVAL literal '%s' for INTERVAL %s TO %s (expected '%s')",
                 t, iv_name[first], iv_name[last], want);
    }
    return SL_ERR;
range:
    snprintf(why, whylen, "INTERVAL value out of range");
    return SL_ERR;
}

/* The months a year-month interval literal's text stands for: '[+|-]N' for
 * YEAR or MONTH, '[+|-]Y-M' for YEAR TO MONTH (M 0..11); the leading field has
 * at most lead_prec digits (leading zeros not counted), as in Flink. */
static int ym_text(const char *t, int first, int last, int lead_prec, int64_t *months,
                   char *why, size_t whylen)
{
    size_t n = strlen(t), i = 0;
    while (n > 0 && t[n - 1] == ' ') n--;
    while (i < n && t[i] == ' ') i++;
    bool neg = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
    int64_t v[2] = {0, 0};
    int nf = first == last ? 1 : 2;
    for (int f = 0; f < nf; f++) {
        if (f && (i >= n || t[i++] != '-')) goto malformed;
        size_t d0 = i, sig = 0;
        while (i < n && is_digit((unsigned char)t[i]) && i - d0 < 18) {
            if (sig || t[i] != '0') sig++;
            v[f] = v[f] * 10 + (t[i++] - '0');
        }
        if (i == d0 || (i < n && is_digit((unsigned char)t[i]))) goto malformed;
        if (f == 0 && lead_prec > 0 && sig > (size_t)lead_prec) {
            const char *fn = first == IV_YM_YEAR ? "YEAR" : "MONTH";
            snprintf(why, whylen, "interval field value %.*s exceeds precision of %s(%d) field "
                     "(write %s(%d))", (int)(i - d0), t + d0, fn, lead_prec, fn, (int)sig);
            return SL_ERR;
        }
        if (f == 1 && (i - d0 > 2 || v[1] > 11)) {
            snprintf(why, whylen, "invalid INTERVAL literal '%s': MONTH must be 0 to 11", t);
            return SL_ERR;
        }
    }
    if (i != n) goto malformed;
    int64_t m = first == IV_YM_YEAR ? v[0] * 12 + v[1] : v[0];
    *months = neg ? -m : m;
    return SL_OK;
malformed:
    if (nf == 1)
        snprintf(why, whylen, "INTERVAL needs a whole number in quotes, e.g. INTERVAL '2' %s",
                 first == IV_YM_YEAR ? "YEAR" : "MONTH");
    else
        snprintf(why, whylen, "invalid INTERVAL literal '%s' for INTERVAL YEAR TO MONTH "
                 "(expected 'Y-M')", t);
    return SL_ERR;
}

/* INTERVAL 'text' qualifier -- a BIGINT of milliseconds (months for YEAR /
 * MONTH qualifiers) flagged as an interval of the qualifier's fields. */
static node *build_interval(bld *b, const sql_node *e)
{
    int first, last, lead;
    if (iv_qualifier(b, sql_kid(e, 0), &first, &last, &lead)) return NULL;
    char why[200];
    int64_t ms;
    if (iv_is_ym(first) ? ym_text(e->s, first, last, lead, &ms, why, sizeof why)
                        : iv_text(e->s, first, last, lead, &ms, why, sizeof why)) {
        perr(b, OPAT(e), "%s", why);
        return NULL;
    }
    node *n = lit_node(b, e, SL_T_BIGINT);
    set_iv(n, first, last);
    n->lit.v.i = ms;
    return n;
}

/* DATE '2026-01-01' and TIME '10:00:00[.fff]' (TIME(0), or TIME(3) with a
 * fraction), as Flink types them. */
static node *build_date_time(bld *b, const sql_node *e)
{
    bool date = !strcmp(e->s2, "DATE");
    size_t len = strlen(e->s);
    const char *dot = strchr(e->s, '.');
    int p = date || !dot ? 0 : 3;
    int32_t v;
    if (date ? sl_date_parse(e->s, len, &v) : sl_time_parse(e->s, len, p, &v)) {
        perr(b, OPAT(e), "invalid %s literal '%.*s' (expected '%s')", e->s2,
             (int)SL_MIN(len, 40), e->s, date ? "YYYY-MM-DD" : "HH:MM:SS[.fff]");
        return NULL;
    }
    node *n = lit_node(b, e, date ? SL_T_DATE : SL_T_TIME);
    char derr[120];
    if (!date && sl_dtype_parse(p ? "TIME(3)" : "TIME(0)", &n->dt, derr, sizeof derr)) {
        perr(b, OPAT(e), "%s", derr);
        return NULL;
    }
    n->lit.v.i = v;
    n->lit.v.ts.nano = 0;
    return n;
}

/* TIMESTAMP 'yyyy-MM-dd HH:mm:ss[.f...]': a TIMESTAMP(p), p the fraction's
 * digits (0..9), as Flink types it; TIMESTAMP WITH LOCAL TIME ZONE '...' the
 * same text as a TIMESTAMP_LTZ(p). */
static node *build_timestamp(bld *b, const sql_node *e)
{
    bool ltz = e->s2 && !strcmp(e->s2, "TIMESTAMP WITH LOCAL TIME ZONE");
    if (e->s2 && !ltz) return build_date_time(b, e);
    size_t len = strlen(e->s);
    const char *dot = strchr(e->s, '.');
    int p = 0;
    while (dot && is_digit((unsigned char)dot[1 + p])) p++;
    sl_ts ts = {0, 0};
    int64_t ms;
    bool ok = p <= 9 && sl_timestamp_parse(e->s, len, p, &ts) == SL_OK;
    if (!ok && p <= 3 && sl_expr_ts_parse(e->s, len, &ms)) { /* 'T', blanks: read as before */
        ts.ms = ms;
        ts.nano = 0;
        ok = true;
    }
    if (!ok) {
        perr(b, OPAT(e), "invalid TIMESTAMP literal '%.*s' (expected 'YYYY-MM-DD "
             "HH:MM:SS[.fff]')", (int)SL_MIN(len, 40), e->s);
        return NULL;
    }
    node *n = lit_node(b, e, SL_T_TIMESTAMP);
    char tt[48], derr[120];
    snprintf(tt, sizeof tt, "TIMESTAMP(%d)", p);
    if (p != 3 && sl_dtype_parse(tt, &n->dt, derr, sizeof derr)) {
        perr(b, OPAT(e), "%s", derr);
        return NULL;
    }
    n->lit.v.ts.ms = ts.ms;
    n->lit.v.ts.nano = ts.nano;
    if (ltz) { /* TIMESTAMP WITH LOCAL TIME ZONE '...': the wall-clock time in the session
                * zone (known when the tree is evaluated), a CAST to TIMESTAMP_LTZ(p) */
        node *c = wrap_cast(b, n, SL_T_TIMESTAMP);
        snprintf(tt, sizeof tt, "TIMESTAMP_LTZ(%d) NOT NULL", p);
        if (sl_dtype_parse(tt, &c->dt, derr, sizeof derr)) {
            perr(b, OPAT(e), "%s", derr);
            return NULL;
        }
        return c;
    }
    return n;
}

/* ---- columns --------------------------------------------------------------- */

/* The NOT NULL type of a clock function, as Flink types them: TIMESTAMP_LTZ(p)
 * (CURRENT_TIMESTAMP[(p)], NOW(), CURRENT_ROW_TIMESTAMP(): an instant read in
 * the session zone), TIMESTAMP(p) (LOCALTIMESTAMP[(p)]), DATE (CURRENT_DATE),
 * TIME(0) (CURRENT_TIME, LOCALTIME); p 0..3. */
static const sl_dtype *clock_dtype(sl_type t, bool ltz, int p)
{
    char text[48];
    p = p >= 0 && p <= 3 ? p : 3;
    if (t == SL_T_DATE) snprintf(text, sizeof text, "DATE NOT NULL");
    else if (t == SL_T_TIME) snprintf(text, sizeof text, "TIME(0) NOT NULL");
    else snprintf(text, sizeof text, "%s(%d) NOT NULL", ltz ? "TIMESTAMP_LTZ" : "TIMESTAMP", p);
    const sl_dtype *dt = NULL;
    sl_dtype_parse(text, &dt, NULL, 0);
    return dt; /* a dozen, interned at their first use (the table has room for them) */
}

static bool is_clock_word(const sql_node *e)
{
    return !(e->flags & SQL_F_QUOTED) && !e->s2 &&
           (!strcasecmp(e->s, "CURRENT_TIMESTAMP") || !strcasecmp(e->s, "LOCALTIMESTAMP") ||
            !strcasecmp(e->s, "CURRENT_DATE") || !strcasecmp(e->s, "CURRENT_TIME") ||
            !strcasecmp(e->s, "LOCALTIME"));
}

static node *build_column(bld *b, const sql_node *e)
{
    if (is_clock_word(e)) { /* CURRENT_TIMESTAMP, LOCALTIMESTAMP: milliseconds; CURRENT_DATE:
                               * a DATE; CURRENT_TIME, LOCALTIME: a TIME(0) (Flink's types) */
        node *n = new_node(b, N_NOW, AT(e), 0);
        n->type = !strcasecmp(e->s, "CURRENT_DATE") ? SL_T_DATE
                : strcasecmp(e->s, "CURRENT_TIME") && strcasecmp(e->s, "LOCALTIME") ? SL_T_TIMESTAMP
                : SL_T_TIME;
        n->flags = n->type == SL_T_TIME ? 0 : 3;
        n->neg = strcasecmp(e->s, "CURRENT_TIMESTAMP") != 0; /* the session zone's wall clock */
        n->dt = clock_dtype(n->type, !n->neg, 3); /* CURRENT_TIMESTAMP: an instant */
        return n;
    }
    /* r.f: the field f of a ROW column r (a calc text has no tables; a planner's
     * tree means a column of a table when there is one of that name) */
    int rc = e->s2 && b->in ? sl_schema_find(b->in, e->s2) : -1;
    if (rc >= 0 && b->in->fields[rc].type == SL_T_ROW &&
        (b->text || sl_schema_find(b->in, e->s) < 0)) {
        sql_node base = {.kind = SQL_COL, .line = e->line, .col = e->col, .s = e->s2};
        sql_node *kid = &base;
        sql_node fe = {.kind = SQL_FIELD, .line = e->line, .col = e->col, .s = e->s,
                       .kids = &kid, .nkids = 1};
        return build_nest(b, &fe, NULL, NULL);
    }
    /* a calc text names its input's columns alone; the planner has
     * resolved qualified names already */
    if (e->s2 && b->text) {
        perr(b, AT(e), "unknown column '%s.%s' (a calc expression names columns without a "
             "table)", e->s2, e->s);
        return NULL;
    }
    int idx = b->in ? sl_schema_find(b->in, e->s) : -1;
    if (idx < 0) {
        perr(b, AT(e), "unknown column '%s'", e->s);
        return NULL;
    }
    node *n = new_node(b, N_COL, AT(e), 0);
    n->col = idx;
    n->type = b->in->fields[idx].type;
    n->dt = b->in->fields[idx].dt;
    if (n->type == SL_T_INTERVAL_DT || n->type == SL_T_INTERVAL_YM) { /* as a literal's */
        static const struct { uint8_t v, s, e; } q[] = {
            {SL_DV_YEAR, IV_YM_YEAR, IV_YM_YEAR}, {SL_DV_YEAR_TO_MONTH, IV_YM_YEAR, IV_YM_MONTH},
            {SL_DV_MONTH, IV_YM_MONTH, IV_YM_MONTH}, {SL_DV_DAY, IV_DAY, IV_DAY},
            {SL_DV_DAY_TO_HOUR, IV_DAY, IV_HOUR}, {SL_DV_DAY_TO_MINUTE, IV_DAY, IV_MINUTE},
            {SL_DV_DAY_TO_SECOND, IV_DAY, IV_SECOND}, {SL_DV_HOUR, IV_HOUR, IV_HOUR},
            {SL_DV_HOUR_TO_MINUTE, IV_HOUR, IV_MINUTE}, {SL_DV_HOUR_TO_SECOND, IV_HOUR, IV_SECOND},
            {SL_DV_MINUTE, IV_MINUTE, IV_MINUTE}, {SL_DV_MINUTE_TO_SECOND, IV_MINUTE, IV_SECOND},
            {SL_DV_SECOND, IV_SECOND, IV_SECOND}};
        const sl_dtype *d = ndt(n);
        bool ym = n->type == SL_T_INTERVAL_YM;
        set_iv(n, ym ? IV_YM_YEAR : IV_DAY, ym ? IV_YM_MONTH : IV_SECOND);
        for (size_t i = 0; i < SL_ARRAY_LEN(q); i++)
            if (q[i].v == d->variant) set_iv(n, q[i].s, q[i].e);
        n->type = SL_T_BIGINT; /* months or milliseconds, as an interval node holds them */
    }
    return n;
}

/* ---- CAST ------------------------------------------------------------------ */

static bool cast_allowed(sl_type from, sl_type to)
{
    if (from == to || from == SL_T_NULL) return true;
    switch (to) {
    case SL_T_STRING: return true;
    case SL_T_BYTES: return from == SL_T_STRING;
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
    case SL_T_INT:
    case SL_T_BIGINT:
    case SL_T_FLOAT:
    case SL_T_DOUBLE:
        if (from == SL_T_DECIMAL) return true;
        /* fall through */
    case SL_T_BOOLEAN: return is_num_type(from) || from == SL_T_BOOLEAN || from == SL_T_STRING;
    case SL_T_TIMESTAMP: return from == SL_T_STRING || from == SL_T_DATE || from == SL_T_TIMESTAMP;
    case SL_T_DECIMAL: return is_num_type(from) || from == SL_T_STRING;
    case SL_T_DATE:
    case SL_T_TIME: return from == SL_T_STRING || from == SL_T_TIMESTAMP;
    case SL_T_NULL:
    default: return false;
    }
    return false;
}

/* CAST(x AS INTERVAL qualifier): from an integer (a count of the
 * qualifier's first field, as Flink's CAST(5 AS INTERVAL SECOND)), from
 * another interval, or from NULL. */
static node *build_cast_iv(bld *b, const sql_node *e, node *x)
{
    int first, last, lead;
    if (iv_qualifier(b, sql_kid(e, 1), &first, &last, &lead)) return NULL;
    node *n = new_node(b, N_CAST, AT(e), 1);
    n->kids[0] = x;
    n->type = SL_T_BIGINT;
    n->neg = e->flags & SQL_F_TRY;
    set_iv(n, first, last);
    if ((!x->interval && !is_int_type(x->type) && x->type != SL_T_NULL) ||
        (x->interval && iv_is_ym(x->ivs) != iv_is_ym(first))) {
        perr(b, AT(e), "cannot CAST %s to %s (only an integer or an interval%s can be)",
             ntname(b, x), ntname(b, n), x->interval ? " of the same kind" : "");
        return NULL;
    }
    return seal(b, n) ? NULL : n;
}

static node *build_cast(bld *b, const sql_node *e)
{
    bool try_cast = e->flags & SQL_F_TRY;
    b->exact = true;
    node *x = build(b, sql_kid(e, 0));
    if (!x) return NULL;
    if (!strncmp(e->s, "INTERVAL ", 9)) return build_cast_iv(b, e, x);
    { /* to, from or between ARRAY, MAP, MULTISET and ROW: element by element */
        const sl_dtype *nt = NULL;
        char derr[200];
        if (sl_dtype_parse(e->s, &nt, derr, sizeof derr) == SL_OK &&
            (sl_type_is_nested(nt->kind) || sl_type_is_nested(x->type)))
            return build_nest(b, e, sl_dtype_nullable(nt, false), x);
    }
    /* TIMESTAMP(3) WITH LOCAL TIME ZONE is TIMESTAMP_LTZ(3) */
    char tbuf[64];
    snprintf(tbuf, sizeof tbuf, "%s", e->s);
    char *wl = strstr(tbuf, " WITH LOCAL TIME ZONE");
    bool ltz = !strncasecmp(tbuf, "TIMESTAMP_LTZ", 13) || wl;
    if (wl) *wl = '\0';
    sl_type to;
    const sl_dtype *tdt = NULL; /* DECIMAL(p, s), DATE, TIME(p), TINYINT, SMALLINT, FLOAT */
    size_t tw = strcspn(tbuf, "( ");
    if ((tw == 7 && !strncasecmp(tbuf, "DECIMAL", 7)) || (tw == 3 && !strncasecmp(tbuf, "DEC", 3)) ||
        (tw == 7 && !strncasecmp(tbuf, "NUMERIC", 7)) || (tw == 4 && !strncasecmp(tbuf, "DATE", 4)) ||
        (tw == 4 && !strncasecmp(tbuf, "TIME", 4)) || (tw == 7 && !strncasecmp(tbuf, "TINYINT", 7)) ||
        (tw == 8 && !strncasecmp(tbuf, "SMALLINT", 8)) || (tw == 5 && !strncasecmp(tbuf, "FLOAT", 5)) ||
        (tw == 4 && !strncasecmp(tbuf, "REAL", 4)) ||
        (((tw == 4 && !strncasecmp(tbuf, "CHAR", 4)) || (tw == 7 && !strncasecmp(tbuf, "VARCHAR", 7))) &&
         tbuf[tw] == '(')) { /* CHAR(n) pads and cuts, VARCHAR(n) cuts (n code points) */
        char derr[200];
        if (sl_dtype_parse(tbuf, &tdt, derr, sizeof derr) != SL_OK) {
            perr(b, OPAT(e), "bad type '%s' in %s: %s", tbuf, try_cast ? "TRY_CAST" : "CAST",
                 derr);
            return NULL;
        }
        tdt = sl_dtype_nullable(tdt, false);
        to = tdt->kind;
    } else if ((tw == 9 && !strncasecmp(tbuf, "TIMESTAMP", 9)) ||
               (tw == 13 && !strncasecmp(tbuf, "TIMESTAMP_LTZ", 13))) {
        /* TIMESTAMP(p), TIMESTAMP_LTZ(p), TIMESTAMP(p) WITH LOCAL TIME ZONE: p 0..9 */
        char derr[200];
        if (sl_dtype_parse(e->s, &tdt, derr, sizeof derr) != SL_OK) {
            perr(b, OPAT(e), "bad type '%s' in %s: %s", e->s, try_cast ? "TRY_CAST" : "CAST",
                 derr);
            return NULL;
        }
        tdt = sl_dtype_nullable(tdt, false);
        to = tdt->kind;
    } else if (sl_type_parse(sql_cast_type(tbuf), &to) != SL_OK || to == SL_T_NULL) {
        perr(b, OPAT(e), "unknown type '%s' in %s", tbuf, try_cast ? "TRY_CAST" : "CAST");
        return NULL;
    }
    /* Flink refuses TIMESTAMP <-> number casts (in its own words for a TIMESTAMP_LTZ)
     * and names the function to use */
    if (x->type == SL_T_TIMESTAMP && (is_num_type(to) || to == SL_T_DECIMAL) &&
        ndt(x)->variant == SL_DV_LTZ) {
        perr(b, AT(e), "The cast from TIMESTAMP_LTZ type to NUMERIC type is not allowed "
             "(%s to %s); use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds",
             ntname(b, x), tdt ? tdt->text : tname(to));
        return NULL;
    }
    if (x->type == SL_T_TIMESTAMP && is_num_type(to)) {
        perr(b, AT(e), "cannot CAST %s to %s: a TIMESTAMP does not convert to a "
             "number; use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds",
             ntname(b, x), tname(to));
        return NULL;
    }
    if (is_num_type(x->type) && !x->interval && to == SL_T_TIMESTAMP) {
        if (ltz)
            perr(b, AT(e), "cannot CAST %s to TIMESTAMP_LTZ(3): a number does not convert "
                 "to a TIMESTAMP_LTZ; use TO_TIMESTAMP_LTZ(n, 0) for epoch seconds or "
                 "TO_TIMESTAMP_LTZ(n, 3) for milliseconds", tname(x->type));
        else
            perr(b, AT(e), "cannot CAST %s to TIMESTAMP(3): a number does not convert to a "
                 "TIMESTAMP; use TO_TIMESTAMP(FROM_UNIXTIME(n)) for epoch seconds",
                 tname(x->type));
        return NULL;
    }
    /* an interval becomes text, or a count of its last field */
    if (x->interval ? to != SL_T_STRING && !is_int_type(to) : !cast_allowed(x->type, to)) {
        perr(b, AT(e), "cannot CAST %s to %s", ntname(b, x), tdt ? tdt->text : tname(to));
        return NULL;
    }
    node *n = unary(b, N_CAST, e, x, to);
    if (n) {
        n->neg = try_cast;
        n->dt = tdt;
        if (ltz && to == SL_T_TIMESTAMP && !tdt) { /* an instant: converted in the session zone */
            char lt[80];
            snprintf(lt, sizeof lt, "TIMESTAMP_LTZ%s", wl ? tbuf + 9 : tbuf + 13);
            const sl_dtype *d = NULL;
            if (sl_dtype_parse(lt, &d, NULL, 0) == SL_OK) n->dt = sl_dtype_nullable(d, false);
        }
    }
    return n;
}

/* ---- CASE ------------------------------------------------------------------ */

/* CASE x WHEN v1 ... over a nested x: x and the WHEN values converted to
 * their least restrictive type (x once), compared with Flink's nested `=`. */
static int case_nested_operand(bld *b, node *n)
{
    int end = n->nkids - ((n->flags & CASE_ELSE) ? 1 : 0);
    const sl_dtype *t = ndt(n->kids[0]);
    for (int i = 1; t && i < end; i += 2)
        if (n->kids[i]->type != SL_T_NULL) t = sl_nest_common(t, ndt(n->kids[i]));
    if (!t)
        return perr(b, NAT(n->kids[0]), "CASE operand of type %s has no type in common with "
                    "its WHEN values", ntname(b, n->kids[0]));
    for (int i = 0; i < end; i += i ? 2 : 1) {
        node *k = n->kids[i];
        if (k->type != SL_T_NULL && ndt(k)->phys != t->phys &&
            !(n->kids[i] = wrap_nest_cast(b, k, t)))
            return SL_ERR;
    }
    return SL_OK;
}

static node *build_case(bld *b, const sql_node *e)
{
    node *n = new_node(b, N_CASE, AT(e), 0);
    node *operand = NULL;
    if (sql_kid(e, 0)) {
        b->exact = true;
        if (!(operand = build(b, e->kids[0]))) return NULL;
        add_kid(n, operand);
        n->flags |= CASE_OPERAND;
    }
    sl_type rt = SL_T_NULL;
    const node *first = NULL; /* the first typed branch */
    const sql_node *whens = sql_kid(e, 1);
    for (int i = 0; whens && i < whens->nkids; i++) {
        const sql_node *wn = whens->kids[i], *we = sql_kid(wn, 0), *te = sql_kid(wn, 1);
        b->exact = operand != NULL;
        node *w = build(b, we);
        if (!w) return NULL;
        if (operand && sl_type_is_nested(operand->type)) {
            /* ARRAY, MAP, MULTISET, ROW: equality; the operand and every WHEN value take
             * their least restrictive type below, once all are known */
            if (w->type != SL_T_NULL && (w->interval || !sl_nest_common(ndt(operand), ndt(w)))) {
                perr(b, AT(we), "CASE operand of type %s cannot be matched against %s",
                     ntname(b, operand), ntname(b, w));
                return NULL;
            }
        } else if (operand) {
            node *a = operand;
            if (make_comparable(b, &a, &w, AT(we), "CASE .. WHEN", false)) return NULL;
            if (a != operand) {
                perr(b, AT(we), "CASE operand of type %s cannot be matched against %s",
                     ntname(b, operand), ntname(b, w));
                return NULL;
            }
        } else if (w->type != SL_T_BOOLEAN && w->type != SL_T_NULL) {
            perr(b, AT(we), "WHEN condition must be BOOLEAN, got %s", ntname(b, w));
            return NULL;
        }
        b->exact = true;
        node *th = build(b, te);
        if (!th) return NULL;
        if (!common_type(rt, th->type, &rt)) {
            perr(b, AT(te), "CASE branches have incompatible types %s and %s", tname(rt),
                 ntname(b, th));
            return NULL;
        }
        if (merge_branch_iv(b, n, th, &first, AT(te), "CASE branches")) return NULL;
        add_kid(n, w);
        add_kid(n, th);
    }
    if (sql_kid(e, 2)) {
        const sql_node *ee = e->kids[2];
        b->exact = true;
        node *el = build(b, ee);
        if (!el) return NULL;
        if (!common_type(rt, el->type, &rt)) {
            perr(b, AT(ee), "CASE branches have incompatible types %s and %s", tname(rt),
                 ntname(b, el));
            return NULL;
        }
        if (merge_branch_iv(b, n, el, &first, AT(ee), "CASE branches")) return NULL;
        add_kid(n, el);
        n->flags |= CASE_ELSE;
    }
    n->type = rt;
    if (operand && sl_type_is_nested(operand->type) && case_nested_operand(b, n)) return NULL;
    int *idx = sl_malloc(sizeof *idx * (size_t)(n->nkids + 1)), cnt = 0;
    int k0 = (n->flags & CASE_OPERAND) ? 1 : 0;
    for (int i = k0 + 1; i < n->nkids; i += 2) idx[cnt++] = i; /* the THEN branches */
    if (n->flags & CASE_ELSE) idx[cnt++] = n->nkids - 1;
    int rc = unify_dec(b, n, idx, cnt);
    /* text: NOT NULL with an ELSE and every branch NOT NULL, as Flink types it */
    if (!rc) rc = text_lrt(b, n, idx, cnt, (n->flags & CASE_ELSE) && all_notnull(n, idx, cnt));
    free(idx);
    if (rc) return NULL;
    return seal(b, n) ? NULL : n;
}

/* ---- operators ------------------------------------------------------------- */

static const char *op_sym(n_op op)
{
    switch (op) {
    case N_ADD: return "+";
    case N_SUB: return "-";
    case N_MUL: return "*";
    case N_DIV: return "/";
    case N_MOD: return "%";
    case N_CONCAT: return "||";
    case N_EQ: return "=";
    case N_NE: return "<>";
    case N_LT: return "<";
    case N_LE: return "<=";
    case N_GT: return ">";
    case N_GE: return ">=";
    default: return "?";
    }
}

/* The DECIMAL type an exact operand counts as: its own, or an integer's
 * (INT (10, 0), BIGINT (19, 0)); a NULL literal as DECIMAL(1, 0). */
static sl_dec_type dec_type_of(const node *n)
{
    if (n->type == SL_T_DECIMAL) {
        sl_dec_type t = {(uint8_t)ndt(n)->p, (uint8_t)ndt(n)->s};
        return t;
    }
    if (n->type == SL_T_NULL) {
        sl_dec_type t = {1, 0};
        return t;
    }
    return sl_dec_type_of_int(n->type == SL_T_INT ? 4 : n->type == SL_T_TINYINT ? 1
                              : n->type == SL_T_SMALLINT ? 2 : 8);
}

static bool is_datetime(sl_type t)
{
    return t == SL_T_TIMESTAMP || t == SL_T_DATE || t == SL_T_TIME;
}

/* TIMESTAMP(p), DATE or TIME +/- an interval, INTERVAL + one of them, as
 * Flink: the result has the date-time operand's type. A year-month interval
 * adds months (the day clamped to the month's end: Jan 31 + 1 month is Feb
 * 28/29); a day-time one milliseconds (to a DATE whole days, the rest cut
 * toward zero; to a TIME modulo one day). Refused: DATE +/- an interval that
 * starts below DAY (Flink makes that a TIMESTAMP) and TIME +/- a year-month
 * interval. */
static node *make_temporal(bld *b, n_op op, int line, int col, node *a, node *c)
{
    node *dtn = a->interval ? c : a, *ivn = a->interval ? a : c;
    bool ym = iv_is_ym(ivn->ivs);
    if ((dtn->type == SL_T_DATE && !ym && ivn->ivs != IV_DAY) ||
        (dtn->type == SL_T_TIME && ym)) {
        perr(b, line, col, "cannot apply '%s' to %s and %s%s", op_sym(op), ntname(b, a),
             ntname(b, c), dtn->type == SL_T_DATE ? " (Flink makes a DATE with hours, minutes or "
             "seconds a TIMESTAMP: CAST the DATE AS TIMESTAMP first)" : "");
        return NULL;
    }
    node *n = new_node(b, op, line, col, 2);
    n->kids[0] = a;
    n->kids[1] = c;
    n->type = dtn->type;
    n->ctype = SL_T_BIGINT;
    n->dt = dtn->dt ? sl_dtype_nullable(dtn->dt, false) : NULL;
    if (n->dt == sl_dtype_basic(n->type)) n->dt = NULL;
    n->flags = ym ? AR_MONTHS : 0;
    return seal(b, n) ? NULL : n;
}

/* Build and type a binary arithmetic node (also MOD() and '||'). Intervals
 * follow Flink: TIMESTAMP +/- INTERVAL and INTERVAL + TIMESTAMP give a
 * TIMESTAMP; INTERVAL +/- INTERVAL an interval; an interval times or divided
 * by an INT an interval (Flink's code generator refuses BIGINT and DOUBLE
 * factors); nothing else mixes intervals with numbers. */
static node *make_arith(bld *b, n_op op, int line, int col, node *a, node *c)
{
    sl_type ta = a->type, tc = c->type, t = SL_T_NULL;
    int iv = 0; /* 1: the result is an interval */
    if (op == N_CONCAT) {
        if ((ta != SL_T_STRING && ta != SL_T_NULL) || (tc != SL_T_STRING && tc != SL_T_NULL))
            goto bad;
        if (ta == SL_T_STRING && tc == SL_T_STRING && (a->dt || c->dt)) {
            /* Flink's type: CHAR(n1 + n2) of two CHARs, else VARCHAR(n1 + n2) (STRING
             * past the longest length); NOT NULL when both are */
            const sl_dtype *da = ndt(a), *dc = ndt(c);
            node *n = new_node(b, op, line, col, 2);
            n->kids[0] = a;
            n->kids[1] = c;
            n->type = n->ctype = SL_T_STRING;
            bool nn = da->notnull && dc->notnull;
            int64_t len = (int64_t)da->p + dc->p;
            if (len < SL_DTYPE_MAX_LEN || nn) {
                char derr[160];
                if (!(n->dt = sl_dtype_text(true, da->variant == SL_DV_CHAR &&
                                            dc->variant == SL_DV_CHAR, len, nn, derr,
                                            sizeof derr))) {
                    perr(b, line, col, "%s", derr);
                    return NULL;
                }
            }
            return seal(b, n) ? NULL : n;
        }
        t = SL_T_STRING;
    } else if (((op == N_ADD || op == N_SUB) && is_datetime(ta) && c->interval) ||
               (op == N_ADD && is_datetime(tc) && a->interval)) {
        return make_temporal(b, op, line, col, a, c);
    } else if (a->interval || c->interval) {
        node *num = a->interval ? c : a; /* the other operand */
        if (a->interval && c->interval && iv_is_ym(a->ivs) != iv_is_ym(c->ivs)) goto bad;
        if ((op == N_ADD || op == N_SUB) && (num->interval || num->type == SL_T_NULL)) {
            iv = 1;
        } else if ((op == N_MUL || (op == N_DIV && a->interval)) && !num->interval &&
                   (num->type == SL_T_INT || num->type == SL_T_NULL)) {
            iv = 1;
        } else if ((op == N_MUL || (op == N_DIV && a->interval)) && !num->interval &&
                   is_num_type(num->type)) {
            perr(b, line, col, "cannot apply '%s' to %s and %s: an interval is scaled by an INT "
                 "only; use CAST(.. AS INT)", op_sym(op), ntname(b, a), ntname(b, c));
            return NULL;
        } else {
            goto bad;
        }
        t = SL_T_BIGINT;
    } else if ((ta == SL_T_DECIMAL || tc == SL_T_DECIMAL) && op != N_CONCAT &&
               (is_num_type(ta) || ta == SL_T_DECIMAL || ta == SL_T_NULL) &&
               (is_num_type(tc) || tc == SL_T_DECIMAL || tc == SL_T_NULL)) {
        /* DECIMAL with FLOAT or DOUBLE is a DOUBLE; with an integer or a DECIMAL exact,
         * of the type Flink derives (an integer counts as DECIMAL(10|19, 0)) */
        if (is_fp_type(ta) || is_fp_type(tc)) {
            if (ta == SL_T_DECIMAL) a = wrap_cast(b, a, SL_T_DOUBLE);
            if (tc == SL_T_DECIMAL) c = wrap_cast(b, c, SL_T_DOUBLE);
            t = SL_T_DOUBLE;
        } else {
            sl_dec_type x = dec_type_of(a), y = dec_type_of(c), r;
            r = op == N_ADD || op == N_SUB ? sl_dec_type_add(x, y)
              : op == N_MUL ? sl_dec_type_mul(x, y)
              : op == N_DIV ? sl_dec_type_div(x, y) : sl_dec_type_mod(x, y);
            node *n = new_node(b, op, line, col, 2);
            n->kids[0] = a;
            n->kids[1] = c;
            n->type = n->ctype = SL_T_DECIMAL;
            char derr[160];
            if (!(n->dt = sl_dtype_decimal(r.p, r.s, derr, sizeof derr))) {
                perr(b, line, col, "%s", derr);
                return NULL;
            }
            return seal(b, n) ? NULL : n;
        }
    } else if ((is_num_type(ta) || ta == SL_T_NULL) && (is_num_type(tc) || tc == SL_T_NULL)) {
        common_type(ta, tc, &t);
        /* FLOAT with DOUBLE: Flink types the result as the left operand (its
         * least-restrictive type ranks the two alike) */
        if (is_fp_type(ta) && is_fp_type(tc)) t = ta;
    } else {
        goto bad;
    }
    node *n = new_node(b, op, line, col, 2);
    n->kids[0] = a;
    n->kids[1] = c;
    n->type = t;
    n->ctype = t == SL_T_TIMESTAMP ? SL_T_BIGINT : t;
    /* MOD / % of integers is typed as the divisor, as in Flink (Calcite's
     * NULLABLE_MOD): BIGINT % INT is an INT, computed in BIGINT (|r| < |divisor|) */
    if (op == N_MOD && !iv && is_int_type(ta) && is_int_type(tc)) n->type = tc;
    if (iv) join_iv(n, a, c);
    return seal(b, n) ? NULL : n;
bad:
    if (ta == SL_T_TIMESTAMP && tc == SL_T_TIMESTAMP && op == N_SUB)
        perr(b, line, col, "cannot apply '-' to TIMESTAMP(3) and TIMESTAMP(3); use "
             "TIMESTAMPDIFF(SECOND, t1, t2) for the time between them");
    else
        perr(b, line, col, "cannot apply '%s' to %s and %s", op_sym(op), ntname(b, a),
             ntname(b, c));
    return NULL;
}

static node *build_unary(bld *b, const sql_node *e)
{
    b->exact = b->lit_exact; /* -1.5 is exact where 1.5 would be */
    node *x = build(b, sql_kid(e, 0));
    if (!x) return NULL;
    if (!strcmp(e->s, "NOT")) {
        if (!is_bool_or_null(x->type)) {
            perr(b, AT(e), "NOT needs a BOOLEAN, got %s", ntname(b, x));
            return NULL;
        }
        node *n = new_node(b, N_NOT, AT(e), 1);
        n->kids[0] = x;
        n->type = SL_T_BOOLEAN;
        return seal(b, n) ? NULL : n;
    }
    if (!is_num_type(x->type) && x->type != SL_T_NULL && x->type != SL_T_DECIMAL) {
        perr(b, AT(e), "cannot apply unary '%s' to %s", e->s, ntname(b, x));
        return NULL;
    }
    if (e->s[0] == '+') return x;
    if (x->op == N_LIT && !x->lit.isnull) { /* fold: -2147483648 is an INT literal */
        if (x->type == SL_T_DECIMAL) {
            sl_dec d = {x->lit.v.dec.lo, x->lit.v.dec.hi};
            d = sl_dec_neg(d);
            x->lit.v.dec.lo = d.lo;
            x->lit.v.dec.hi = d.hi;
        } else if (x->type == SL_T_DOUBLE) {
            x->lit.v.d = -x->lit.v.d;
        } else {
            x->lit.v.i = wrap64(0 - (uint64_t)x->lit.v.i);
            if (!x->interval)
                x->type = x->lit.v.i >= INT32_MIN && x->lit.v.i <= INT32_MAX ? SL_T_INT
                                                                            : SL_T_BIGINT;
        }
        x->ln = e->line;
        x->cn = e->col;
        x->pos = offset_of(b, e->line, e->col);
        return x;
    }
    node *n = new_node(b, N_NEG, AT(e), 1);
    n->kids[0] = x;
    n->type = n->ctype = x->type;
    if (x->type == SL_T_DECIMAL) n->dt = x->dt;
    if (x->interval) set_iv(n, x->ivs, x->ive);
    return seal(b, n) ? NULL : n;
}

/* (a - c) qualifier, Calcite's difference of two datetimes as an interval:
 * both DATE, both TIME or both TIMESTAMP(p) of one kind (Flink refuses the
 * others with "Parameters must be of the same type"); a TIME takes day-time
 * qualifiers only. The result is the qualifier's interval type. */
static node *build_dt_diff(bld *b, const sql_node *e, node *a, node *c)
{
    int first, last, lead;
    if (iv_qualifier(b, sql_kid(e, 2), &first, &last, &lead)) return NULL;
    if (!is_datetime(a->type) || !is_datetime(c->type) || a->interval || c->interval) {
        perr(b, OPAT(e), "cannot apply '(.. - ..) %s' to %s and %s: it takes two DATEs, TIMEs "
             "or TIMESTAMPs", e->s2, ntname(b, a), ntname(b, c));
        return NULL;
    }
    if (a->type != c->type || ndt(a)->variant != ndt(c)->variant) {
        perr(b, OPAT(e), "Parameters must be of the same type: %s and %s", ntname(b, a),
             ntname(b, c));
        return NULL;
    }
    if (a->type == SL_T_TIME && iv_is_ym(first)) {
        perr(b, OPAT(e), "cannot apply '(.. - ..) %s' to two TIMEs: a TIME difference takes a "
             "day-time qualifier", e->s2);
        return NULL;
    }
    node *n = new_node(b, N_SUB, OPAT(e), 2);
    n->kids[0] = a, n->kids[1] = c;
    n->type = n->ctype = SL_T_BIGINT;
    n->flags = AR_DIFF;
    set_iv(n, first, last);
    return seal(b, n) ? NULL : n;
}

static node *build_binop(bld *b, const sql_node *e)
{
    static const struct {
        const char *sym;
        n_op op;
    } ops[] = {{"+", N_ADD},  {"-", N_SUB}, {"*", N_MUL}, {"/", N_DIV},  {"%", N_MOD},
               {"||", N_CONCAT}, {"=", N_EQ}, {"<>", N_NE}, {"<", N_LT}, {"<=", N_LE},
               {">", N_GT},   {">=", N_GE}, {"AND", N_AND}, {"OR", N_OR},
               {"IS DISTINCT FROM", N_DISTINCT}, {"IS NOT DISTINCT FROM", N_DISTINCT}};
    n_op op = N_LIT;
    for (size_t i = 0; i < SL_ARRAY_LEN(ops); i++)
        if (!strcmp(e->s, ops[i].sym)) op = ops[i].op;
    if (op == N_LIT) {
        perr(b, OPAT(e), "unknown operator '%s'", e->s);
        return NULL;
    }
    b->exact = true;
    node *a = build(b, sql_kid(e, 0)), *c;
    b->exact = true;
    if (!a || !(c = build(b, sql_kid(e, 1)))) return NULL;
    if (op == N_SUB && sql_kid(e, 2)) return build_dt_diff(b, e, a, c);
    if (op == N_AND || op == N_OR) {
        if (!is_bool_or_null(a->type) || !is_bool_or_null(c->type)) {
            perr(b, OPAT(e), "%s needs BOOLEAN operands, got %s and %s", e->s, ntname(b, a),
                 ntname(b, c));
            return NULL;
        }
    } else if (op == N_DISTINCT) {
        if (make_comparable(b, &a, &c, OPAT(e), e->s, false)) return NULL;
    } else if (op >= N_EQ && op <= N_GE) {
        if (make_comparable(b, &a, &c, OPAT(e), op_sym(op), op != N_EQ && op != N_NE))
            return NULL;
    } else {
        return make_arith(b, op, OPAT(e), a, c);
    }
    node *n = new_node(b, op, OPAT(e), 2);
    n->kids[0] = a, n->kids[1] = c;
    n->neg = op == N_DISTINCT && strstr(e->s, "NOT") != NULL;
    n->type = SL_T_BOOLEAN;
    return seal(b, n) ? NULL : n;
}

static node *build_is(bld *b, const sql_node *e)
{
    b->exact = true;
    node *x = build(b, sql_kid(e, 0));
    if (!x) return NULL;
    bool neg = e->flags & SQL_F_NOT;
    n_op op = !strcmp(e->s, "TRUE") ? N_IS_TRUE : !strcmp(e->s, "FALSE") ? N_IS_FALSE : N_IS_NULL;
    if (op != N_IS_NULL && !is_bool_or_null(x->type)) {
        perr(b, OPAT(e), "IS %s%s needs a BOOLEAN, got %s", neg ? "NOT " : "", e->s,
             ntname(b, x));
        return NULL;
    }
    node *n = new_node(b, op, OPAT(e), 1);
    n->kids[0] = x;
    n->neg = neg;
    n->type = SL_T_BOOLEAN;
    return seal(b, n) ? NULL : n;
}

static node *build_between(bld *b, const sql_node *e)
{
    b->exact = true;
    node *x = build(b, sql_kid(e, 0)), *lo = NULL, *hi = NULL;
    if (x) b->exact = true;
    if (x && (lo = build(b, sql_kid(e, 1)))) b->exact = true;
    if (!x || !lo || !(hi = build(b, sql_kid(e, 2)))) return NULL;
    /* twice: a CAST put on x by the second pair must reach the first */
    for (int pass = 0; pass < 2; pass++)
        if (make_comparable(b, &x, &lo, OPAT(e), "BETWEEN", true) ||
            make_comparable(b, &x, &hi, OPAT(e), "BETWEEN", true))
            return NULL;
    node *n = new_node(b, N_BETWEEN, OPAT(e), 3);
    n->kids[0] = x, n->kids[1] = lo, n->kids[2] = hi;
    n->neg = e->flags & SQL_F_NOT;
    n->type = SL_T_BOOLEAN;
    return seal(b, n) ? NULL : n;
}

static node *build_in(bld *b, const sql_node *e)
{
    b->exact = true;
    node *x = build(b, sql_kid(e, 0));
    if (!x) return NULL;
    node *n = new_node(b, N_IN, OPAT(e), 0);
    add_kid(n, x);
    const sql_node *list = sql_kid(e, 1);
    for (int i = 0; list && i < list->nkids; i++) {
        b->exact = true;
        node *it = build(b, list->kids[i]);
        if (!it) return NULL;
        if (make_comparable(b, &n->kids[0], &it, AT(list->kids[i]), "IN", false)) return NULL;
        add_kid(n, it);
    }
    /* a CAST put on x by a later item must reach the earlier ones */
    for (int i = 1; i < n->nkids; i++)
        if (make_comparable(b, &n->kids[0], &n->kids[i], OPAT(e), "IN", false)) return NULL;
    n->neg = e->flags & SQL_F_NOT;
    n->type = SL_T_BOOLEAN;
    return seal(b, n) ? NULL : n;
}

/* x SIMILAR TO p [ESCAPE c]: p and c must be constants; the pattern is
 * compiled here, once (aux stays NULL when either is the NULL literal). */
static int compile_similar(bld *b, node *n)
{
    node *pat = n->kids[1], *esc = n->kids[2];
    if (pat->op != N_LIT || (esc && esc->op != N_LIT))
        return perr(b, NAT(pat->op != N_LIT ? pat : esc), "SIMILAR TO needs a constant pattern "
                    "and escape (string literals)");
    if (pat->lit.isnull || (esc && esc->lit.isnull)) return SL_OK;
    int c = -1;
    if (esc) {
        if (esc->lit.v.s.len != 1)
            return perr(b, NAT(esc), "SIMILAR TO ESCAPE must be a single character");
        c = (unsigned char)esc->lit.v.s.p[0];
    }
    sl_rx *rx = sl_malloc(sizeof *rx);
    char msg[200];
    if (sl_expr_similar_compile(rx, pat->lit.v.s.p, pat->lit.v.s.len, c, msg, sizeof msg)) {
        free(rx);
        return perr(b, NAT(pat), "SIMILAR TO pattern '%.*s': %s",
                    (int)SL_MIN(pat->lit.v.s.len, 60u), pat->lit.v.s.p, msg);
    }
    n->aux = rx;
    return SL_OK;
}

static node *build_like(bld *b, const sql_node *e)
{
    node *x = build(b, sql_kid(e, 0)), *pat, *esc = NULL;
    if (!x || !(pat = build(b, sql_kid(e, 1)))) return NULL;
    if (sql_kid(e, 2) && !(esc = build(b, e->kids[2]))) return NULL;
    if ((x->type != SL_T_STRING && x->type != SL_T_NULL) ||
        (pat->type != SL_T_STRING && pat->type != SL_T_NULL) ||
        (esc && esc->type != SL_T_STRING && esc->type != SL_T_NULL)) {
        perr(b, OPAT(e), "%s needs STRING operands, got %s and %s", e->s ? e->s : "LIKE", ntname(b, x),
             ntname(b, pat));
        return NULL;
    }
    node *n = new_node(b, e->s ? N_SIMILAR : N_LIKE, OPAT(e), 3);
    n->kids[0] = x, n->kids[1] = pat, n->kids[2] = esc;
    n->neg = e->flags & SQL_F_NOT;
    n->type = SL_T_BOOLEAN;
    if (e->s && compile_similar(b, n)) return NULL;
    return seal(b, n) ? NULL : n;
}

/* ---- functions ------------------------------------------------------------- */

/* TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) and TRIM(s). kids: s, chars */
static node *build_trim(bld *b, const sql_node *e)
{
    const sql_node *ce = NULL, *se;
    int side = TRIM_BOTH;
    if (e->flags & SQL_F_FROM) {
        if (e->nkids != 2) {
            perr(b, AT(e), "TRIM takes ([BOTH | LEADING | TRAILING] [characters] FROM string)");
            return NULL;
        }
        ce = e->kids[0];
        se = e->kids[1];
        if (e->s2) side = !strcmp(e->s2, "LEADING") ? TRIM_LEADING
                          : !strcmp(e->s2, "TRAILING") ? TRIM_TRAILING : TRIM_BOTH;
    } else if (e->nkids == 1) {
        se = e->kids[0];
    } else {
        perr(b, AT(e), "TRIM takes 1 argument, got %d", e->nkids);
        return NULL;
    }
    node *chars = NULL, *s;
    if (ce && !(chars = build(b, ce))) return NULL;
    if (!(s = build(b, se))) return NULL;
    if (!((s->type == SL_T_STRING || s->type == SL_T_NULL) &&
          (!chars || chars->type == SL_T_STRING || chars->type == SL_T_NULL))) {
        perr(b, AT(e), "TRIM needs STRING arguments, got %s", ntname(b, s));
        return NULL;
    }
    node *n = new_node(b, N_TRIM, AT(e), 2);
    n->kids[0] = s;
    n->kids[1] = chars;
    n->flags = side;
    n->type = SL_T_STRING;
    return seal(b, n) ? NULL : n;
}

/* SUBSTRING(s FROM i [FOR n]) or SUBSTRING(s, i [, n]). */
static node *build_substring(bld *b, const sql_node *e)
{
    if (e->nkids < 2 || e->nkids > 3 || !e->kids[0]) {
        perr(b, AT(e), "SUBSTRING takes (string FROM start [FOR length]) or (string, start "
             "[, length]), got %d argument%s", e->nkids, e->nkids == 1 ? "" : "s");
        return NULL;
    }
    node *s = build(b, e->kids[0]), *a, *c = NULL;
    if (!s || !(a = build(b, e->kids[1]))) return NULL;
    if (e->nkids == 3 && !(c = build(b, e->kids[2]))) return NULL;
    if ((s->type != SL_T_STRING && s->type != SL_T_NULL) ||
        (!is_int_type(a->type) && a->type != SL_T_NULL) ||
        (c && !is_int_type(c->type) && c->type != SL_T_NULL)) {
        perr(b, AT(e), "SUBSTRING needs (STRING, INT[, INT]), got (%s, %s%s%s)", ntname(b, s),
             ntname(b, a), c ? ", " : "", c ? ntname(b, c) : "");
        return NULL;
    }
    node *n = new_node(b, N_SUBSTRING, AT(e), 0);
    add_kid(n, s);
    add_kid(n, a);
    if (c) add_kid(n, c);
    n->type = SL_T_STRING;
    return seal(b, n) ? NULL : n;
}

/* POSITION(needle IN haystack) */
static node *build_position(bld *b, const sql_node *e)
{
    node *a = build(b, sql_kid(e, 0)), *c;
    if (!a || !(c = build(b, sql_kid(e, 1)))) return NULL;
    if ((a->type != SL_T_STRING && a->type != SL_T_NULL) ||
        (c->type != SL_T_STRING && c->type != SL_T_NULL)) {
        perr(b, AT(e), "POSITION needs STRING arguments, got %s and %s", ntname(b, a),
             ntname(b, c));
        return NULL;
    }
    node *n = new_node(b, N_POSITION, AT(e), 2);
    n->kids[0] = a;
    n->kids[1] = c;
    n->type = SL_T_INT;
    return seal(b, n) ? NULL : n;
}

static const struct fn_def {
    const char *name;
    n_op op;
    int min, max; /* argument counts */
} fn_defs[] = {
    {"CONCAT", N_CONCAT, 1, SL_EXPR_MAX_ARGS},        {"UPPER", N_UPPER, 1, 1},
    {"LOWER", N_LOWER, 1, 1},            {"CHAR_LENGTH", N_CHAR_LENGTH, 1, 1},
    {"CHARACTER_LENGTH", N_CHAR_LENGTH, 1, 1}, {"ABS", N_ABS, 1, 1},
    {"MOD", N_MOD, 2, 2},                {"COALESCE", N_COALESCE, 1, SL_EXPR_MAX_ARGS},
    {"IF", N_IF, 3, 3},                  {"NULLIF", N_NULLIF, 2, 2},
    {"SL_SINGLE_VALUE", N_SINGLE_VALUE, 2, 2},
    {"FLOOR", N_FLOOR, 1, 1},            {"CEIL", N_CEIL, 1, 1},
    {"CEILING", N_CEIL, 1, 1},           {"LTRIM", N_TRIM, 1, 2},
    {"RTRIM", N_TRIM, 1, 2},             {"BTRIM", N_TRIM, 1, 2},
    {"IFNULL", N_COALESCE, 2, 2},        {"TO_TIMESTAMP_LTZ", N_TO_TS_LTZ, 2, 2},
    {"TO_TIMESTAMP", N_TO_TS, 1, 2},     {"NOW", N_NOW, 0, 0},
    {"CURRENT_ROW_TIMESTAMP", N_NOW, 0, 0}, {"UNIX_TIMESTAMP", N_UNIX_TS, 0, 2},
    {"FROM_UNIXTIME", N_FROM_UNIXTIME, 1, 2}, {"RAND", N_RAND, 0, 1},
    {"RAND_INTEGER", N_RAND_INT, 1, 2},  {"REPLACE", N_REPLACE, 3, 3},
    {"SPLIT_INDEX", N_SPLIT_INDEX, 3, 3}, {"DATE_FORMAT", N_DATE_FORMAT, 2, 2},
    {"REGEXP", N_REGEXP, 2, 2},          {"REGEXP_EXTRACT", N_REGEXP_EXTRACT, 2, 3},
    {"REGEXP_REPLACE", N_REGEXP_REPLACE, 3, 3}, {"TO_DATE", N_TO_DATE, 1, 2},
};

/* DATE_FORMAT(ts | s, format): a constant format is compiled here, once. */
static int type_date_format(bld *b, node *n)
{
    node *ts = n->kids[0], *fmt = n->kids[1];
    if (ts->interval || (ts->type != SL_T_TIMESTAMP && ts->type != SL_T_STRING &&
                         ts->type != SL_T_NULL))
        return perr(b, NAT(ts), "DATE_FORMAT needs a TIMESTAMP or a STRING 'yyyy-MM-dd "
                    "HH:mm:ss' first, got %s", ntname(b, ts));
    if (fmt->type != SL_T_STRING && fmt->type != SL_T_NULL)
        return perr(b, NAT(fmt), "DATE_FORMAT needs a STRING format, got %s", ntname(b, fmt));
    n->type = SL_T_STRING;
    if (fmt->op != N_LIT || fmt->lit.isnull) return SL_OK; /* compiled per record */
    const char *p = fmt->lit.v.s.p;
    size_t len = fmt->lit.v.s.len;
    int cap = (int)SL_MIN(len, (size_t)INT32_MAX / 2) + 1, nops;
    sl_dfmt *f = sl_malloc(sizeof *f + sizeof f->ops[0] * (size_t)cap);
    char msg[200];
    if (sl_dfmt_compile(p, len, ts->type == SL_T_STRING, f->ops, cap, &nops, &f->maxlen, msg,
                        sizeof msg)) {
        free(f);
        return perr(b, NAT(fmt), "DATE_FORMAT format '%.*s': %s", (int)SL_MIN(len, 60u), p,
                    msg);
    }
    f->pat = p;
    f->nops = nops;
    n->aux = f;
    return SL_OK;
}

/* REGEXP(s, p), REGEXP_EXTRACT(s, p [, group]), REGEXP_REPLACE(s, p, r): the
 * pattern must be a constant (compiling one per record would allocate); it
 * is compiled here, once. */
static int type_regex(bld *b, node *n, const char *fname)
{
    for (int i = 0; i < n->nkids; i++) {
        node *a = n->kids[i];
        bool want_int = n->op == N_REGEXP_EXTRACT && i == 2;
        if (a->interval || (a->type != SL_T_NULL && (want_int ? !is_int_type(a->type)
                                                              : a->type != SL_T_STRING)))
            return perr(b, NAT(a), "%s needs (STRING, STRING%s), got %s as argument %d", fname,
                        n->op == N_REGEXP ? "" : n->op == N_REGEXP_EXTRACT ? "[, INT]"
                                                                           : ", STRING",
                        ntname(b, a), i + 1);
    }
    n->type = n->op == N_REGEXP ? SL_T_BOOLEAN : SL_T_STRING;
    node *pat = n->kids[1];
    if (pat->op != N_LIT)
        return perr(b, NAT(pat), "%s needs a constant pattern (a string literal)", fname);
    if (pat->lit.isnull) return SL_OK; /* the result is always NULL */
    const char *p = pat->lit.v.s.p;
    size_t len = pat->lit.v.s.len;
    sl_rx *rx = sl_malloc(sizeof *rx);
    regex_t *re = &rx->re;
    char msg[200];
    if (sl_expr_regex_compile(rx, p, len, n->op == N_REGEXP, msg, sizeof msg)) {
        free(rx);
        return perr(b, NAT(pat), "%s pattern '%.*s': %s", fname, (int)SL_MIN(len, 60u), p, msg);
    }
    n->aux = rx;
    if (n->op == N_REGEXP_EXTRACT && n->nkids == 3 && n->kids[2]->op == N_LIT &&
        !n->kids[2]->lit.isnull) {
        int64_t g = n->kids[2]->lit.v.i;
        if (g < 0 || g > (int64_t)re->re_nsub)
            return perr(b, NAT(n->kids[2]), "REGEXP_EXTRACT group %lld does not exist: the "
                        "pattern has %zu group%s (0 is the whole match)", (long long)g,
                        re->re_nsub, re->re_nsub == 1 ? "" : "s");
    }
    if (re->re_nsub >= SL_EXPR_MAX_GROUPS)
        return perr(b, NAT(pat), "%s pattern has %zu groups (limit %d)", fname, re->re_nsub,
                    SL_EXPR_MAX_GROUPS - 1);
    return SL_OK;
}

/* Keys of RAND sequences: one per RAND node with a literal seed, unique for
 * the life of the process (see rand_state in expr_eval.c). */
static _Atomic uint64_t rand_serials;

/* RAND([seed]) / RAND_INTEGER([seed,] bound): type the arguments. */
static int type_rand(bld *b, node *n, const char *fname)
{
    int nseed = n->nkids - (n->op == N_RAND_INT ? 1 : 0);
    if (nseed) {
        node *seed = n->kids[0];
        if (seed->interval || (!is_int_type(seed->type) && seed->type != SL_T_NULL))
            return perr(b, NAT(seed), "%s seed must be an INT, got %s", fname, ntname(b, seed));
        n->flags |= RAND_SEEDED;
        if (seed->op == N_LIT && !seed->lit.isnull) {
            n->flags |= RAND_FIXED;
            n->lit.v.i = seed->lit.v.i;
            n->serial = atomic_fetch_add(&rand_serials, 1) + 1;
        }
    }
    if (n->op == N_RAND_INT) {
        node *bound = n->kids[n->nkids - 1];
        if (bound->interval || (bound->type != SL_T_INT && bound->type != SL_T_NULL))
            return perr(b, NAT(bound), "RAND_INTEGER bound must be an INT, got %s",
                        ntname(b, bound));
    }
    n->type = n->op == N_RAND ? SL_T_DOUBLE : SL_T_INT;
    return SL_OK;
}

/* TIMESTAMPADD(unit, n, ts) and TIMESTAMPDIFF(unit, t1, t2). */
static node *build_tsfn(bld *b, const sql_node *e, n_op op)
{
    const char *fname = op == N_TS_ADD ? "TIMESTAMPADD" : "TIMESTAMPDIFF";
    const sql_node *u = sql_kid(e, 0);
    int unit = -1;
    if (u && u->kind == SQL_COL && !u->s2 && !(u->flags & SQL_F_QUOTED))
        for (int i = 0; i < TU_N; i++)
            if (!strcasecmp(u->s, tu_name[i])) unit = i;
    if (unit < 0) {
        perr(b, u ? u->line : e->line, u ? u->col : e->col,
             "%s needs a time unit (SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR) "
             "first", fname);
        return NULL;
    }
    if (e->nkids != 3) {
        perr(b, AT(e), "%s takes 3 arguments, got %d", fname, e->nkids);
        return NULL;
    }
    node *a = build(b, e->kids[1]), *c;
    if (!a || !(c = build(b, e->kids[2]))) return NULL;
    if (op == N_TS_ADD && (a->interval || (a->type != SL_T_INT && a->type != SL_T_NULL))) {
        perr(b, NAT(a), "TIMESTAMPADD needs an INT count, got %s (use CAST(.. AS INT))",
             ntname(b, a));
        return NULL;
    }
    const node *ts[2] = {op == N_TS_ADD ? c : a, c};
    for (int i = 0; i < 2; i++)
        if (ts[i]->type != SL_T_TIMESTAMP && ts[i]->type != SL_T_NULL) {
            perr(b, NAT(ts[i]), "%s needs a TIMESTAMP, got %s", fname, ntname(b, ts[i]));
            return NULL;
        }
    node *n = new_node(b, op, AT(e), 2);
    n->kids[0] = a;
    n->kids[1] = c;
    n->flags = unit;
    n->type = op == N_TS_ADD ? SL_T_TIMESTAMP : SL_T_INT;
    return seal(b, n) ? NULL : n;
}

/* Flink's shorthands for EXTRACT: YEAR(ts) is EXTRACT(YEAR FROM ts). */
static const struct {
    const char *name;
    sl_extract_unit unit;
} extract_fns[] = {
    {"YEAR", SL_XU_YEAR},           {"QUARTER", SL_XU_QUARTER},     {"MONTH", SL_XU_MONTH},
    {"WEEK", SL_XU_WEEK},           {"DAYOFYEAR", SL_XU_DOY},       {"DAYOFMONTH", SL_XU_DAY},
    {"DAYOFWEEK", SL_XU_DOW},       {"HOUR", SL_XU_HOUR},           {"MINUTE", SL_XU_MINUTE},
    {"SECOND", SL_XU_SECOND},
};

/* EXTRACT(unit FROM ts) (the grammar's FROM form: kids unit, ts) or a
 * shorthand YEAR(ts) (unit >= 0): a BIGINT, NULL when ts is. */
static node *build_extract(bld *b, const sql_node *e, int unit)
{
    const char *fname = unit >= 0 ? e->s : "EXTRACT";
    const sql_node *ts = NULL;
    if (unit < 0) {
        const sql_node *u = sql_kid(e, 0);
        if (u && u->kind == SQL_IDENT) unit = sl_extract_unit_find(u->s);
        if (unit < 0) {
            if (u && u->kind == SQL_IDENT && !strcasecmp(u->s, "EPOCH"))
                perr(b, AT(u), "EXTRACT(EPOCH FROM ...) is not supported (Flink neither); use "
                     "UNIX_TIMESTAMP(CAST(ts AS STRING))");
            else
                perr(b, u ? u->line : e->line, u ? u->col : e->col,
                     "EXTRACT needs a time unit before FROM (YEAR, QUARTER, MONTH, WEEK, DAY, "
                     "HOUR, MINUTE, SECOND, MILLISECOND, DOW, DOY, ISODOW, ISOYEAR, DECADE, "
                     "CENTURY, MILLENNIUM)");
            return NULL;
        }
        if (e->s2 || e->nkids != 2) {
            perr(b, AT(e), "EXTRACT takes (unit FROM timestamp)");
            return NULL;
        }
        ts = e->kids[1];
    } else {
        if (e->nkids != 1 || (e->flags & (SQL_F_DISTINCT | SQL_F_STAR_ARG))) {
            perr(b, AT(e), "%s takes 1 argument, a TIMESTAMP", fname);
            return NULL;
        }
        ts = e->kids[0];
    }
    node *a = build(b, ts);
    if (!a) return NULL;
    if (a->interval || (a->type != SL_T_TIMESTAMP && a->type != SL_T_NULL &&
                        a->type != SL_T_DATE && a->type != SL_T_TIME)) {
        perr(b, NAT(a), "%s needs a TIMESTAMP, DATE or TIME, got %s", fname, ntname(b, a));
        return NULL;
    }
    if (a->type == SL_T_TIME && unit != SL_XU_HOUR && unit != SL_XU_MINUTE &&
        unit != SL_XU_SECOND && unit != SL_XU_MILLISECOND) {
        perr(b, NAT(a), "%s: unit %s can not be applied to a TIME (only HOUR, MINUTE, SECOND "
             "and MILLISECOND can)", fname, sl_extract_unit_name((sl_extract_unit)unit));
        return NULL;
    }
    node *n = unary(b, N_EXTRACT, e, a, SL_T_BIGINT);
    if (n) n->flags = unit;
    return n;
}

/* CURRENT_TIMESTAMP(p) / LOCALTIMESTAMP(p): precision 0..3 */
static node *build_clock(bld *b, const sql_node *e)
{
    const sql_node *a = sql_kid(e, 0);
    int64_t prec;
    if (e->nkids != 1 || a->kind != SQL_NUM || !sl_expr_parse_i64(a->s, strlen(a->s), &prec) ||
        prec > 3) {
        perr(b, a ? a->line : e->line, a ? a->col : e->col, "%s precision must be 0 to 3",
             e->s);
        return NULL;
    }
    node *n = new_node(b, N_NOW, AT(e), 0);
    n->type = SL_T_TIMESTAMP;
    n->flags = (int)prec;
    n->neg = !strcasecmp(e->s, "LOCALTIMESTAMP"); /* the session zone's wall clock */
    n->dt = clock_dtype(SL_T_TIMESTAMP, !n->neg, n->flags);
    return n;
}

/* A function call. */
/* A call's DISTINCT, '*' and argument count against its definition. */
static int check_arity(bld *b, const sql_node *e, const struct fn_def *f)
{
    if (e->flags & (SQL_F_DISTINCT | SQL_F_STAR_ARG))
        return perr(b, AT(e), "%s takes no %s", f->name,
                    e->flags & SQL_F_DISTINCT ? "DISTINCT" : "'*'");
    if (e->nkids > SL_EXPR_MAX_ARGS)
        return perr(b, AT(e->kids[SL_EXPR_MAX_ARGS]), "too many arguments to %s (limit %d)",
                    f->name, SL_EXPR_MAX_ARGS);
    if (e->nkids < f->min || e->nkids > f->max) {
        const char *qual = f->min == f->max ? "" : e->nkids < f->min ? "at least " : "at most ";
        int want = e->nkids < f->min ? f->min : f->max;
        return perr(b, AT(e), "%s takes %s%d argument%s, got %d", f->name, qual, want,
                    want == 1 ? "" : "s", e->nkids);
    }
    return SL_OK;
}

static int compile_format(bld *b, node *n, const char *fname, bool parse);

/* CONCAT, UPPER, LOWER, CHAR_LENGTH, LTRIM/RTRIM, TO_TIMESTAMP: STRING
 * arguments. */
static int type_string_fn(bld *b, node *n, const struct fn_def *f)
{
    for (int i = 0; i < n->nkids; i++)
        if (n->kids[i]->type != SL_T_STRING && n->kids[i]->type != SL_T_NULL)
            return perr(b, NAT(n->kids[i]), "%s needs STRING arguments, got %s%s", f->name,
                        ntname(b, n->kids[i]),
                        f->op == N_CONCAT ? " (use CAST(x AS STRING))" : "");
    n->type = f->op == N_CHAR_LENGTH ? SL_T_INT : f->op == N_TO_TS ? SL_T_TIMESTAMP
            : f->op == N_TO_DATE ? SL_T_DATE : SL_T_STRING;
    if ((f->op == N_TO_TS || f->op == N_TO_DATE) && n->nkids == 2)
        return compile_format(b, n, f->name, true);
    if (f->op == N_TRIM) {
        if (n->nkids == 1) add_kid(n, NULL); /* default characters: a blank */
        n->flags = !strcasecmp(f->name, "LTRIM") ? TRIM_LEADING
                 : !strcasecmp(f->name, "RTRIM") ? TRIM_TRAILING : TRIM_BOTH;
    }
    return SL_OK;
}

/* REPLACE(s, from, to) and SPLIT_INDEX(s, sep, index). */
static int type_replace_split(bld *b, node *n, const struct fn_def *f)
{
    for (int i = 0; i < 3; i++) {
        sl_type ti = n->kids[i]->type;
        bool want_int = f->op == N_SPLIT_INDEX && i == 2;
        if (ti != SL_T_NULL && (want_int ? !is_int_type(ti) : ti != SL_T_STRING))
            return perr(b, NAT(n->kids[i]), "%s needs (STRING, STRING, %s), got %s as argument %d",
                        f->name, f->op == N_REPLACE ? "STRING" : "INT", ntname(b, n->kids[i]),
                        i + 1);
    }
    n->type = SL_T_STRING;
    return SL_OK;
}

/* COALESCE(a, ...) and IF(cond, a, b): the branches' common type (and
 * interval unit). */
static int type_branches(bld *b, node *n, const sql_node *e)
{
    sl_type t = SL_T_NULL;
    const node *first = NULL; /* the first typed branch */
    if (n->op == N_COALESCE) {
        for (int i = 0; i < n->nkids; i++) {
            if (!common_type(t, n->kids[i]->type, &t))
                return perr(b, NAT(n->kids[i]), "COALESCE arguments have incompatible types %s "
                            "and %s", tname(t), ntname(b, n->kids[i]));
            if (merge_branch_iv(b, n, n->kids[i], &first, NAT(n->kids[i]), "COALESCE arguments"))
                return SL_ERR;
        }
        n->type = t;
        int *idx = sl_malloc(sizeof *idx * (size_t)n->nkids);
        for (int i = 0; i < n->nkids; i++) idx[i] = i;
        int rc = unify_dec(b, n, idx, n->nkids);
        if (!rc && t == SL_T_STRING) {
            /* text: NOT NULL when one argument is (COALESCE); IFNULL(x, y) is x's own
             * type when x is NOT NULL, else NOT NULL when y is, as Flink types them */
            bool ifnull = e && e->s && !strcasecmp(e->s, "IFNULL");
            bool nn = false;
            for (int i = 0; i < n->nkids; i++) {
                int one[1] = {i};
                nn = nn || all_notnull(n, one, 1);
            }
            if (ifnull && all_notnull(n, idx, 1)) {
                if (n->kids[0]->dt) n->dt = n->kids[0]->dt;
            } else {
                rc = text_lrt(b, n, idx, n->nkids,
                              ifnull ? all_notnull(n, idx + 1, 1) : nn);
            }
        }
        free(idx);
        return rc;
    }
    sl_type t0 = n->kids[0]->type;
    if (t0 != SL_T_BOOLEAN && t0 != SL_T_NULL)
        return perr(b, AT(e), "IF condition must be BOOLEAN, got %s", tname(t0));
    if (!common_type(n->kids[1]->type, n->kids[2]->type, &t))
        return perr(b, AT(e), "IF branches have incompatible types %s and %s",
                    ntname(b, n->kids[1]), ntname(b, n->kids[2]));
    if (merge_branch_iv(b, n, n->kids[1], &first, AT(e), "IF branches") ||
        merge_branch_iv(b, n, n->kids[2], &first, AT(e), "IF branches"))
        return SL_ERR;
    n->type = t;
    static const int branches[] = {1, 2}, all[] = {0, 1, 2};
    if (unify_dec(b, n, branches, 2)) return SL_ERR;
    /* text: NOT NULL when the condition and both branches are, as Flink types IF */
    return text_lrt(b, n, branches, 2, all_notnull(n, all, 3));
}

/* TO_TIMESTAMP_LTZ(number, 0 | 3). */
static int type_to_ts_ltz(bld *b, node *n, const sql_node *e)
{
    node *prec = n->kids[1];
    sl_type t0 = n->kids[0]->type;
    if ((!is_num_type(t0) && t0 != SL_T_NULL) || n->kids[0]->interval)
        return perr(b, AT(e), "TO_TIMESTAMP_LTZ needs a number of seconds or milliseconds, got %s",
                    ntname(b, n->kids[0]));
    if (prec->op != N_LIT || prec->type != SL_T_INT ||
        (prec->lit.v.i != 0 && prec->lit.v.i != 3))
        return perr(b, NAT(prec), "TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 "
                    "(milliseconds)");
    n->flags = (int)prec->lit.v.i;
    n->type = SL_T_TIMESTAMP;
    const sl_dtype *d = NULL;
    if (sl_dtype_parse("TIMESTAMP_LTZ(3)", &d, NULL, 0) == SL_OK) n->dt = d; /* an instant */
    return SL_OK;
}

/* A literal format (the node's second child) compiled once into aux; one
 * that parses (`parse`) takes only the letters sl_dfmt_parse reads. */
static int compile_format(bld *b, node *n, const char *fname, bool parse)
{
    node *fmt = n->kids[1];
    if (fmt->op != N_LIT || fmt->type != SL_T_STRING)
        return perr(b, NAT(fmt), "%s: the format must be a string literal", fname);
    const char *p = fmt->lit.v.s.p;
    size_t len = fmt->lit.v.s.len;
    int cap = (int)SL_MIN(len, (size_t)INT32_MAX / 2) + 1, nops;
    sl_dfmt *df = sl_malloc(sizeof *df + sizeof df->ops[0] * (size_t)cap);
    char msg[200];
    if (sl_dfmt_compile(p, len, true, df->ops, cap, &nops, &df->maxlen, msg, sizeof msg) ||
        (parse && sl_dfmt_parse_check(df->ops, nops, msg, sizeof msg))) {
        free(df);
        return perr(b, NAT(fmt), "%s format '%.*s': %s", fname, (int)SL_MIN(len, 60u), p, msg);
    }
    df->pat = p;
    df->nops = nops;
    n->aux = df;
    return SL_OK;
}

/* UNIX_TIMESTAMP([string [, format]]) and FROM_UNIXTIME(seconds [, format]). */
static int type_unix_time(bld *b, node *n, const struct fn_def *f)
{
    bool unix_ts = f->op == N_UNIX_TS;
    sl_type t0 = n->nkids ? n->kids[0]->type : SL_T_NULL;

    if (n->nkids == 1 && (unix_ts ? t0 != SL_T_STRING && t0 != SL_T_NULL
                                  : n->kids[0]->interval || (!is_int_type(t0) &&
                                                             t0 != SL_T_NULL)))
        return perr(b, NAT(n->kids[0]), "%s needs %s, got %s", f->name,
                    unix_ts ? "a STRING" : "an integer number of seconds", ntname(b, n->kids[0]));
    n->type = unix_ts ? SL_T_BIGINT : SL_T_STRING;
    /* FROM_UNIXTIME(n, format), UNIX_TIMESTAMP(s, format): SimpleDateFormat's letters */
    return n->nkids == 2 ? compile_format(b, n, f->name, unix_ts) : SL_OK;
}

/* CURRENT_WATERMARK(ts): the operator's current watermark as a TIMESTAMP,
 * NULL before the first one (Flink: the argument is the rowtime column). */
static node *build_watermark(bld *b, const sql_node *e)
{
    if (e->nkids != 1 || (e->flags & (SQL_F_DISTINCT | SQL_F_STAR_ARG))) {
        perr(b, AT(e), "CURRENT_WATERMARK takes 1 argument, the table's rowtime column");
        return NULL;
    }
    node *a = build(b, e->kids[0]);
    if (!a) return NULL;
    if (a->op != N_COL || a->type != SL_T_TIMESTAMP) {
        perr(b, NAT(a), "CURRENT_WATERMARK needs a TIMESTAMP column (the rowtime attribute), "
             "got %s", a->op == N_COL ? ntname(b, a) : "an expression");
        return NULL;
    }
    return unary(b, N_WATERMARK, e, a, SL_T_TIMESTAMP);
}

/* A call of table function fx: its arity checked, its arguments built. */
static node *fnx_node(bld *b, const sql_node *e, const sl_fnx *fx)
{
    struct fn_def fd = {fx->name, N_FNX, fx->min, fx->max};
    if (check_arity(b, e, &fd) != SL_OK) return NULL;
    node *n = new_node(b, N_FNX, AT(e), 0);
    n->fx = fx;
    for (int i = 0; i < e->nkids; i++) {
        b->exact = keeps_dec(N_FNX, fx->name, i);
        node *a = build(b, e->kids[i]);
        if (!a) return NULL;
        add_kid(n, a);
    }
    return n;
}

/* A function of the table in expr_fn.c: arguments checked against its
 * classes, the result typed. */
static node *build_fnx(bld *b, const sql_node *e, const sl_fnx *fx)
{
    node *n = fnx_node(b, e, fx);
    if (!n) return NULL;
    size_t nc = strlen(fx->args);
    sl_type common = SL_T_NULL;
    for (int i = 0; i < n->nkids; i++) {
        node *a = n->kids[i];
        char c = nc ? fx->args[(size_t)i < nc ? (size_t)i : nc - 1] : 'a';
        sl_type t = a->type;
        bool ok = t == SL_T_NULL && !a->interval;
        const char *want = "";
        switch (c) {
        case 'n': ok = ok || (is_num_type(t) && !a->interval) || t == SL_T_DECIMAL;
            want = "a number"; break;
        case 'i': ok = ok || (is_int_type(t) && !a->interval); want = "an integer"; break;
        case 's': ok = ok || t == SL_T_STRING; want = "a STRING"; break;
        case 'x': ok = ok || t == SL_T_STRING || (is_int_type(t) && !a->interval);
            want = "an integer or a STRING"; break;
        default:
            ok = !a->interval && common_type(common, t, &common) && t != SL_T_BOOLEAN;
            want = "values of one comparable type";
            break;
        }
        if (!ok) {
            perr(b, NAT(a), "%s needs %s as argument %d, got %s", fx->name, want, i + 1,
                 ntname(b, a));
            return NULL;
        }
    }
    switch (fx->result) {
    case 'D': n->type = SL_T_DOUBLE; break;
    case 'S': n->type = SL_T_STRING; break;
    case 'I': n->type = SL_T_INT; break;
    case 'L': n->type = SL_T_BIGINT; break;
    case 'B': n->type = SL_T_BOOLEAN; break;
    case '0': n->type = n->kids[0]->type == SL_T_NULL ? SL_T_DOUBLE : n->kids[0]->type; break;
    default: n->type = common == SL_T_NULL ? SL_T_STRING : common; break;
    }
    if (n->type == SL_T_DECIMAL && fx->result == '0') { /* SIGN, ROUND, TRUNCATE */
        sl_dec_type t0 = dec_type_of(n->kids[0]);
        if (strcasecmp(fx->name, "SIGN")) {
            node *d = n->nkids == 2 ? n->kids[1] : NULL;
            if (d && (d->op != N_LIT || d->lit.isnull)) {
                perr(b, NAT(d), "%s of a DECIMAL needs a constant number of digits (an "
                     "integer literal): it decides the result's type", fx->name);
                return NULL;
            }
            int64_t nd = d ? d->lit.v.i : 0;
            t0 = sl_dec_type_round(t0, (int)SL_MAX(SL_MIN(nd, 100), -100));
        }
        char derr[160];
        if (!(n->dt = sl_dtype_decimal(t0.p, t0.s, derr, sizeof derr))) {
            perr(b, AT(e), "%s", derr);
            return NULL;
        }
    } else if (n->type == SL_T_DECIMAL || (n->type == SL_T_DOUBLE && fx->result == 'C')) {
        int *idx = sl_malloc(sizeof *idx * (size_t)n->nkids); /* GREATEST, LEAST */
        for (int i = 0; i < n->nkids; i++) idx[i] = i;
        int rc = unify_dec(b, n, idx, n->nkids);
        free(idx);
        if (rc) return NULL;
    } else if (n->type == SL_T_STRING && fx->result == 'C') { /* GREATEST, LEAST of text */
        int *idx = sl_malloc(sizeof *idx * (size_t)n->nkids);
        for (int i = 0; i < n->nkids; i++) idx[i] = i;
        int rc = text_lrt(b, n, idx, n->nkids, all_notnull(n, idx, n->nkids));
        free(idx);
        if (rc) return NULL;
    }
    return seal(b, n) ? NULL : n;
}

/* A collection or JSON function (expr_coll.c, expr_json.c): typed by its own function. */
static node *build_coll(bld *b, const sql_node *e, const sl_fnx *fx,
                        int (*typer)(node *, char *, size_t))
{
    node *n = fnx_node(b, e, fx);
    if (!n) return NULL;
    char why[300];
    if (typer(n, why, sizeof why) != SL_OK) {
        perr(b, AT(e), "%s", why);
        return NULL;
    }
    return seal(b, n) ? NULL : n;
}

/* A call of user-defined scalar function u: the arguments must be of its
 * declared types, or numbers that widen to them (INT to BIGINT, integers to
 * DOUBLE), or NULL. */
static node *build_udf(bld *b, const sql_node *e, sl_udf_sig *u)
{
    if (u->kind != SL_UDF_SCALAR_KIND) {
        perr(b, AT(e), "'%s' is a table function: call it in FROM, as LATERAL TABLE(%s(...))",
             e->s, e->s);
        return NULL;
    }
    if (e->flags & (SQL_F_DISTINCT | SQL_F_STAR_ARG | SQL_F_FILTER)) {
        perr(b, AT(e), "'%s' is a scalar function: it takes no DISTINCT, * or FILTER", e->s);
        return NULL;
    }
    if (e->nkids != u->nargs) {
        char *sig = sl_udf_sig_text(u);
        perr(b, AT(e), "function '%s' takes %d argument%s (%s), got %d", e->s, u->nargs,
             u->nargs == 1 ? "" : "s", sig, e->nkids);
        free(sig);
        return NULL;
    }
    node *n = new_node(b, N_UDF, AT(e), 0);
    n->aux = u; /* borrowed: sl_expr_free_nodes must not free it (see there) */
    n->type = u->result;
    if (u->result == SL_T_DECIMAL) n->dt = u->resdt;
    for (int i = 0; i < e->nkids; i++) {
        b->exact = u->args[i] == SL_T_DECIMAL; /* a DECIMAL argument stays one */
        node *a = build(b, e->kids[i]);
        if (!a) return NULL;
        sl_type want = u->args[i], got = a->type;
        bool ok = got == want || got == SL_T_NULL ||
                  (!a->interval && is_int_type(got) && (want == SL_T_BIGINT || want == SL_T_DOUBLE) &&
                   num_rank(got) <= num_rank(want)) ||
                  (!a->interval && is_int_type(got) && want == SL_T_DECIMAL);
        if (ok && want == SL_T_DECIMAL && got != SL_T_NULL &&
            (ndt(a)->kind != SL_T_DECIMAL || ndt(a)->p != u->argdt[i]->p ||
             ndt(a)->s != u->argdt[i]->s)) {
            /* Flink's implicit cast to the declared DECIMAL(p, s): an integer, or a
             * DECIMAL of another precision or scale (one that does not fit is NULL) */
            node *c = wrap_cast(b, a, SL_T_DECIMAL);
            c->dt = u->argdt[i];
            a = c;
        }
        add_kid(n, a);
        if (!ok) {
            char *sig = sl_udf_sig_text(u);
            perr(b, NAT(a), "argument %d of '%s' must be %s, got %s (the function is %s)", i + 1,
                 e->s, want == SL_T_DECIMAL ? u->argdt[i]->text : tname(want), ntname(b, a), sig);
            free(sig);
            return NULL;
        }
    }
    return seal(b, n) ? NULL : n;
}

/* FLOOR(ts TO unit) / CEIL(ts TO unit) (the grammar's TO form: kids ts,
 * unit): a TIMESTAMP rounded as Flink rounds it (lib/calendar.h); the node
 * is N_FLOOR / N_CEIL typed TIMESTAMP, its flags the unit. */
static node *build_floor_to(bld *b, const sql_node *e)
{
    int ceil = !strcasecmp(e->s, "CEIL") || !strcasecmp(e->s, "CEILING");
    if (!ceil && strcasecmp(e->s, "FLOOR")) {
        perr(b, AT(e), "%s does not take the TO form (only FLOOR and CEIL do)", e->s);
        return NULL;
    }
    const sql_node *u = e->kids[1];
    int unit = sl_extract_unit_find(u->s);
    if (unit < 0 || !sl_civil_floor_unit((sl_extract_unit)unit)) {
        if (unit == SL_XU_DECADE || unit == SL_XU_CENTURY || unit == SL_XU_MILLENNIUM)
            perr(b, AT(u), "%s(... TO %s) is not supported yet", ceil ? "CEIL" : "FLOOR", u->s);
        else
            perr(b, AT(u), "%s(... TO unit): the unit must be YEAR, QUARTER, MONTH, WEEK, DAY, "
                 "HOUR, MINUTE, SECOND or MILLISECOND, not %s", ceil ? "CEIL" : "FLOOR", u->s);
        return NULL;
    }
    node *a = build(b, e->kids[0]);
    if (!a) return NULL;
    if (a->interval || (a->type != SL_T_TIMESTAMP && a->type != SL_T_NULL)) {
        perr(b, NAT(a), "%s(... TO %s) needs a TIMESTAMP, got %s", ceil ? "CEIL" : "FLOOR", u->s,
             ntname(b, a));
        return NULL;
    }
    node *n = unary(b, ceil ? N_CEIL : N_FLOOR, e, a, SL_T_TIMESTAMP);
    if (n) n->flags = unit;
    return n;
}

/* ARRAY[...], MAP[...], ROW(...), x[i], x.f (expr_nest.c), and a CAST to or
 * from a nested type (`cast_to`: its target; e the CAST, kid 0 built as x). The
 * elements of a constructor keep exact DECIMALs. */
static node *build_nest(bld *b, const sql_node *e, const sl_dtype *cast_to, node *x)
{
    const char *fn = cast_to ? "SL_CAST" : e->kind == SQL_FUNC ? "ROW"
                   : e->kind == SQL_FIELD ? "SL_FIELD" : e->kind == SQL_ELEMENT ? "SL_ELEMENT"
                   : !strcmp(e->s, "MAP") ? "SL_MAP" : "SL_ARRAY";
    node *n = new_node(b, N_FNX, AT(e), 0);
    n->fx = sl_nest_find(fn);
    if (x) add_kid(n, x);
    for (int i = 0; !x && i < e->nkids; i++) {
        b->exact = true;
        node *a = build(b, e->kids[i]);
        if (!a) return NULL;
        add_kid(n, a);
    }
    if (cast_to) {
        n->dt = cast_to;
        n->neg = e->flags & SQL_F_TRY;
    }
    char why[300];
    if (sl_nest_type(n, e->kind == SQL_FIELD ? e->s : NULL, why, sizeof why) != SL_OK) {
        if (e->kind == SQL_FIELD || e->kind == SQL_ELEMENT) perr(b, OPAT(e), "%s", why);
        else perr(b, AT(e), "%s", why);
        return NULL;
    }
    return seal(b, n) ? NULL : n;
}

static node *build_call(bld *b, const sql_node *e)
{
    const char *name = e->s;
    if (e->flags & SQL_F_TO) return build_floor_to(b, e);
    if (!strcasecmp(name, "ROW") && !e->flags) return build_nest(b, e, NULL, NULL);
    if (!strcasecmp(name, "TRIM")) return build_trim(b, e);
    if (e->flags & SQL_F_FROM) {
        if (!strcasecmp(name, "SUBSTRING") && !e->s2) return build_substring(b, e);
        if (!strcasecmp(name, "EXTRACT")) return build_extract(b, e, -1);
        perr(b, AT(e), "%s does not take the FROM form (only SUBSTRING, TRIM and EXTRACT do)",
             name);
        return NULL;
    }
    if (!strcasecmp(name, "SUBSTRING") || !strcasecmp(name, "SUBSTR")) return build_substring(b, e);
    if (!strcasecmp(name, "EXTRACT")) {
        perr(b, AT(e), "EXTRACT takes (unit FROM timestamp)");
        return NULL;
    }
    for (size_t i = 0; i < SL_ARRAY_LEN(extract_fns); i++)
        if (!strcasecmp(name, extract_fns[i].name)) return build_extract(b, e, (int)extract_fns[i].unit);
    if (!strcasecmp(name, "TIMESTAMPADD")) return build_tsfn(b, e, N_TS_ADD);
    if (!strcasecmp(name, "TIMESTAMPDIFF")) return build_tsfn(b, e, N_TS_DIFF);
    if (!strcasecmp(name, "CURRENT_TIMESTAMP") || !strcasecmp(name, "LOCALTIMESTAMP"))
        return build_clock(b, e);
    if (!strcasecmp(name, "CURRENT_WATERMARK")) return build_watermark(b, e);
    if ((e->flags & SQL_F_PLACING) || !strcasecmp(name, "OVERLAY")) {
        if (strcasecmp(name, "OVERLAY") || !(e->flags & SQL_F_PLACING)) {
            perr(b, AT(e), "%s", strcasecmp(name, "OVERLAY")
                 ? "only OVERLAY takes the PLACING form"
                 : "OVERLAY takes (s PLACING r FROM position [FOR length])");
            return NULL;
        }
    }
    const struct fn_def *f = NULL;
    for (size_t i = 0; i < SL_ARRAY_LEN(fn_defs); i++)
        if (!strcasecmp(name, fn_defs[i].name)) f = &fn_defs[i];
    const sl_fnx *cfx = f ? NULL : sl_coll_find(name);
    if (cfx) return build_coll(b, e, cfx, sl_coll_type);
    cfx = f ? NULL : sl_json_fn_find(name);
    if (cfx) return build_coll(b, e, cfx, sl_json_fn_type);
    const sl_fnx *fx = f ? NULL : sl_fnx_find(name);
    if (fx) return build_fnx(b, e, fx);
    if (!f) {
        sl_udf_sig *u = sl_udf_set_find(b->fns, name);
        if (u) return build_udf(b, e, u);
        perr(b, AT(e), "unknown function '%.*s'", (int)SL_MIN(strlen(name), 40), name);
        return NULL;
    }
    if (check_arity(b, e, f) != SL_OK) return NULL;
    node *n = new_node(b, f->op, AT(e), 0);
    for (int i = 0; i < e->nkids; i++) {
        b->exact = keeps_dec(f->op, f->name, i);
        node *a = build(b, e->kids[i]);
        if (!a) return NULL;
        add_kid(n, a);
    }
    sl_type t0 = n->nkids ? n->kids[0]->type : SL_T_NULL;
    int rc = SL_OK;
    n->type = SL_T_NULL;
    switch (f->op) {
    case N_CONCAT:
    case N_UPPER:
    case N_LOWER:
    case N_CHAR_LENGTH:
    case N_TRIM:
    case N_TO_TS:
    case N_TO_DATE: rc = type_string_fn(b, n, f); break;
    case N_REPLACE:
    case N_SPLIT_INDEX: rc = type_replace_split(b, n, f); break;
    case N_MOD: /* MOD(a, b) is a % b; the call node stays unused in b->all */
        return make_arith(b, N_MOD, AT(e), n->kids[0], n->kids[1]);
    case N_ABS:
    case N_FLOOR:
    case N_CEIL: /* ABS also takes an interval, as in Flink */
        if ((!is_num_type(t0) && t0 != SL_T_NULL && t0 != SL_T_DECIMAL) ||
            (f->op != N_ABS && n->kids[0]->interval)) {
            perr(b, AT(e), "%s needs a number, got %s", f->name, ntname(b, n->kids[0]));
            return NULL;
        }
        if (n->kids[0]->interval) set_iv(n, n->kids[0]->ivs, n->kids[0]->ive);
        n->type = t0;
        if (t0 == SL_T_DECIMAL) { /* ABS keeps the type; FLOOR, CEIL: DECIMAL(p, 0) */
            sl_dec_type dt0 = dec_type_of(n->kids[0]);
            if (f->op != N_ABS) dt0 = sl_dec_type_floor(dt0);
            char derr[160];
            if (!(n->dt = sl_dtype_decimal(dt0.p, dt0.s, derr, sizeof derr))) {
                perr(b, AT(e), "%s", derr);
                return NULL;
            }
        }
        break;
    case N_COALESCE:
    case N_IF: rc = type_branches(b, n, e); break;
    case N_NULLIF: {
        node *a = n->kids[0], *c = n->kids[1];
        if (make_comparable(b, &a, &c, AT(e), "NULLIF", false)) return NULL;
        n->kids[0] = a;
        n->kids[1] = c;
        n->type = a->type;
        if (a->type == SL_T_DECIMAL || sl_type_is_nested(a->type) ||
            (a->type == SL_T_STRING && a->dt)) /* the first argument's type, nullable */
            n->dt = sl_dtype_nullable(ndt(a), false);
        if (n->dt == sl_dtype_basic(n->type)) n->dt = NULL;
        if (a->interval) set_iv(n, a->ivs, a->ive);
        break;
    }
    case N_SINGLE_VALUE: { /* the value's type, the count a BIGINT */
        const node *c = n->kids[0], *v = n->kids[1];
        if (c->type != SL_T_BIGINT) {
            perr(b, AT(e), "SL_SINGLE_VALUE needs a BIGINT count first, got %s", ntname(b, c));
            return NULL;
        }
        n->type = v->type;
        if (v->dt) n->dt = sl_dtype_nullable(v->dt, false);
        if (v->interval) set_iv(n, v->ivs, v->ive);
        break;
    }
    case N_TO_TS_LTZ: rc = type_to_ts_ltz(b, n, e); break;
    case N_NOW: /* NOW(), CURRENT_ROW_TIMESTAMP(): TIMESTAMP_LTZ(3), as Flink types them */
        n->flags = 3; /* precision: milliseconds */
        n->type = SL_T_TIMESTAMP;
        n->dt = clock_dtype(SL_T_TIMESTAMP, true, 3);
        break;
    case N_UNIX_TS:
    case N_FROM_UNIXTIME: rc = type_unix_time(b, n, f); break;
    case N_RAND:
    case N_RAND_INT: rc = type_rand(b, n, f->name); break;
    case N_DATE_FORMAT: rc = type_date_format(b, n); break;
    case N_REGEXP:
    case N_REGEXP_EXTRACT:
    case N_REGEXP_REPLACE: rc = type_regex(b, n, f->name); break;
    default:
        break;
    }
    if (rc != SL_OK) return NULL;
    return seal(b, n) ? NULL : n;
}

/* ---- the walk ---------------------------------------------------------------- */

static node *build_one(bld *b, const sql_node *e)
{
    switch (e->kind) {
    case SQL_NUM: return build_number(b, e);
    case SQL_STR: return build_string(b, e);
    case SQL_BOOL: {
        node *n = lit_node(b, e, SL_T_BOOLEAN);
        n->lit.v.i = (e->flags & SQL_F_TRUE) != 0;
        return n;
    }
    case SQL_NULL: return lit_node(b, e, SL_T_NULL);
    case SQL_INTERVAL: return build_interval(b, e);
    case SQL_TS_LIT: return build_timestamp(b, e);
    case SQL_COL: return build_column(b, e);
    case SQL_UNOP: return build_unary(b, e);
    case SQL_BINOP: return build_binop(b, e);
    case SQL_IS: return build_is(b, e);
    case SQL_BETWEEN: return build_between(b, e);
    case SQL_IN: return build_in(b, e);
    case SQL_LIKE: return build_like(b, e);
    case SQL_CASE: return build_case(b, e);
    case SQL_CAST: return build_cast(b, e);
    case SQL_FUNC: return build_call(b, e);
    case SQL_POSITION: return build_position(b, e);
    case SQL_CTOR:
    case SQL_ELEMENT:
    case SQL_FIELD: return build_nest(b, e, NULL, NULL);
    case SQL_STAR: perr(b, AT(e), "unexpected '*', expected an expression"); return NULL;
    default:
        perr(b, AT(e), "%s is not a scalar expression", sql_kind_name(e->kind));
        return NULL;
    }
}

/* Does node n take child k of one of the types beyond the original seven?
 * TINYINT, SMALLINT and FLOAT: wherever a number goes; DECIMAL: arithmetic,
 * negation, comparisons, CAST and the functions keeps_dec names; DATE and
 * TIME: comparisons, CAST and EXTRACT; ARRAY, MAP, MULTISET and ROW: `=`, `<>`,
 * IN and IS [NOT] DISTINCT FROM (the others are refused where they are built). */
static bool typed_here(const node *n, const node *k)
{
    if (n->op == N_UDF) return true; /* checked against the function's declaration */
    if (n->op == N_SINGLE_VALUE) return true; /* passes its value through */
    if (k->type == SL_T_TINYINT || k->type == SL_T_SMALLINT || k->type == SL_T_FLOAT) return true;
    bool cmp = (n->op >= N_EQ && n->op <= N_GE) || n->op == N_BETWEEN || n->op == N_IN ||
               n->op == N_DISTINCT || n->op == N_CAST;
    if (k->type == SL_T_DECIMAL)
        return cmp || (n->op >= N_NEG && n->op <= N_MOD) || n->op == N_CASE ||
               n->op == N_CAST || keeps_dec(n->op, n->fx ? n->fx->name : "", 0) ||
               (n->op == N_IF && k != n->kids[0]);
    if (sl_type_is_nested(k->type)) { /* equality (nested_comparable) */
        if (n->op == N_NULLIF) return true;
        if (n->op == N_CASE && (n->flags & CASE_OPERAND)) { /* the operand, a WHEN value */
            int end = n->nkids - ((n->flags & CASE_ELSE) ? 1 : 0);
            for (int i = 0; i < end; i += i ? 2 : 1)
                if (n->kids[i] == k) return true;
        }
        return cmp && n->op != N_CAST;
    }
    if (k->type == SL_T_DATE || k->type == SL_T_TIME)
        return (cmp && n->op != N_CASE) || n->op == N_EXTRACT ||
               ((n->op == N_ADD || n->op == N_SUB) && n->type == k->type) ||
               (n->op == N_SUB && (n->flags & AR_DIFF));
    return false;
}

static node *build(bld *b, const sql_node *e)
{
    if (!e) {
        perr(b, 1, 1, "missing expression");
        return NULL;
    }
    if (++b->depth > SL_EXPR_MAX_DEPTH) {
        perr(b, AT(e), "expression nested too deeply (limit %d)", SL_EXPR_MAX_DEPTH);
        b->depth--;
        return NULL;
    }
    bool exact = b->lit_exact = b->exact;
    b->exact = false;
    node *n = build_one(b, e);
    b->depth--;
    /* a function or CASE reads a DECIMAL as a DOUBLE (docs/SQL.md: they give
     * a DOUBLE where Flink keeps the DECIMAL) */
    if (n && !exact && n->type == SL_T_DECIMAL) n = wrap_cast(b, n, SL_T_DOUBLE);
    /* The types beyond the original seven pass through a column reference
     * and IS [NOT] NULL; operators and functions over them come later. */
    bool coll = n && n->op == N_FNX && (sl_coll_find(n->fx->name) == n->fx ||
                                        sl_json_fn_find(n->fx->name) == n->fx ||
                                        sl_nest_find(n->fx->name) == n->fx);
    for (int i = 0; n && !coll && n->op != N_COL && n->op != N_IS_NULL && i < n->nkids; i++) {
        const node *k = n->kids[i];
        if (k && !sl_type_is_classic(k->type) && !typed_here(n, k)) {
            perr(b, AT(e), "%s over %s is not supported yet (%s)",
                 k->type == SL_T_DECIMAL || k->type == SL_T_DATE || k->type == SL_T_TIME
                     ? "this function or operator" : "an operator or function",
                 k->dt ? k->dt->text : sl_type_name(k->type),
                 k->type == SL_T_DECIMAL ? "a DECIMAL takes arithmetic, comparisons and CAST"
                 : k->type == SL_T_DATE || k->type == SL_T_TIME
                     ? "it takes comparisons and CAST"
                     : "a column of that type can be selected as it is and tested with "
                       "IS [NOT] NULL");
            return NULL;
        }
    }
    return n;
}

/* An interval result's type, as Flink's planner derives it from Calcite's:
 * INTERVAL MONTH for a year-month one, INTERVAL SECOND(3) for a day-time one
 * (a column of an interval type keeps its own). */
static void interval_result(node *root)
{
    if (!root || !root->interval) return;
    bool ym = iv_is_ym(root->ivs);
    const sl_dtype *dt = NULL;
    if (root->dt && (root->dt->kind == SL_T_INTERVAL_YM || root->dt->kind == SL_T_INTERVAL_DT))
        dt = root->dt;
    else sl_dtype_parse(ym ? "INTERVAL MONTH" : "INTERVAL SECOND(3)", &dt, NULL, 0);
    root->dt = dt;
}

static sl_expr *finish(bld *b, node *root)
{
    interval_result(root);
    free(b->lines);
    if (!root) {
        sl_expr_free_nodes(b->all);
        return NULL;
    }
    sl_expr *x = sl_calloc(1, sizeof *x);
    x->root = root;
    x->all = b->all;
    return x;
}

/* ---- public ------------------------------------------------------------------ */

static sl_expr *parse_text(const char *text, const sl_schema *in, bool item, int index,
                           char **name, const sl_udf_set *fns, char *err, size_t errlen)
{
    if (name) *name = NULL;
    if (!text) {
        sl_seterr(err, errlen, "missing expression");
        return NULL;
    }
    bld b = {.in = in, .text = text, .textlen = strlen(text), .err = err, .errlen = errlen,
             .fns = fns};
    int cap = 8;
    b.lines = sl_malloc(sizeof *b.lines * (size_t)cap);
    b.lines[b.nlines++] = 0;
    for (size_t i = 0; i < b.textlen; i++)
        if (text[i] == '\n') {
            if (b.nlines == cap) b.lines = sl_realloc(b.lines, sizeof *b.lines * (size_t)(cap *= 2));
            b.lines[b.nlines++] = (int)SL_MIN(i + 1, (size_t)INT32_MAX / 2);
        }
    sql_arena *a = sql_arena_new();
    const sql_node *ast = sql_parse_expr(a, text, b.textlen, item, err, errlen);
    node *root = NULL;
    if (ast) {
        const sql_node *e = item ? sql_kid(ast, 0) : ast;
        b.exact = true;
        root = build(&b, e);
        if (root && item && ast->s && !ast->s[0]) {
            perr(&b, OPAT(ast), "empty column alias");
            root = NULL;
        }
        if (root && name) {
            if (ast->s) *name = sl_strdup(ast->s);
            else if (root->op == N_COL) *name = sl_strdup(in->fields[root->col].name);
            else *name = sl_sprintf("EXPR$%d", index);
        }
    }
    sql_arena_destroy(a);
    return finish(&b, root);
}

sl_expr *sl_expr_parse(const char *text, const sl_schema *in, char *err, size_t errlen)
{
    return parse_text(text, in, false, 0, NULL, NULL, err, errlen);
}

sl_expr *sl_expr_parse_fns(const char *text, const sl_schema *in, const struct sl_udf_set *fns,
                           char *err, size_t errlen)
{
    return parse_text(text, in, false, 0, NULL, fns, err, errlen);
}

sl_expr *sl_expr_parse_item_fns(const char *text, const sl_schema *in, int index, char **name,
                                const struct sl_udf_set *fns, char *err, size_t errlen)
{
    return parse_text(text, in, true, index, name, fns, err, errlen);
}

sl_expr *sl_expr_parse_item(const char *text, const sl_schema *in, int index, char **name,
                            char *err, size_t errlen)
{
    return parse_text(text, in, true, index, name, NULL, err, errlen);
}

sl_expr *sl_expr_from_sql(const struct sql_node *e, const sl_schema *in, char *err,
                          size_t errlen)
{
    bld b = {.in = in, .err = err, .errlen = errlen, .fns = session_fns, .exact = true};
    return finish(&b, build(&b, e));
}
