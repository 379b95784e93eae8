/*
 * grammar.y -- the one lemon grammar of Sluice's Flink SQL dialect:
 * statements, queries and expressions. lemon turns it into
 * $(B)/gen/grammar.c and grammar.h at build time (never committed).
 *
 * Tokens come from lang/tokenize.c. Keywords that Flink does not reserve
 * (TABLES, WATERMARK, SECOND, TEMPORARY, ...) fall back to ID, so they stay
 * usable as column and table names. Precedence, lowest first: OR, AND, NOT,
 * IS / LIKE / BETWEEN / IN, comparisons, + - , * / % ||, unary minus.
 *
 * The same grammar parses the `calc` expressions of JSON job graphs: the
 * driver (sql_parse_expr) feeds EXPR_START or ITEM_START first, so `input`
 * is then one expression, or one projection item "expr [AS alias]"
 * (lang/expr_check.c types the tree).
 *
 * On the first syntax error %syntax_error writes "line L, column C:
 * unexpected X, expected Y" (Y from the parser state's shift actions) into
 * the context and the driver stops feeding tokens.
 */
%name sqlParse
%token_prefix TK_
%token_type {sql_tok}
%default_type {sql_node *}
%extra_argument {sql_pctx *ctx}
%start_symbol input

%include {
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <assert.h>

#include "sl.h"
#include "ast.h"
#include "parse.h"

#define YYNOERRORRECOVERY 1
#define YYSTACKDEPTH 400

static int sql_would_accept(const int *stk, int n, int tok);

static sql_node *MK(sql_pctx *c, sql_kind k, sql_tok t)
{
    return sql_node_new(c->a, k, t.line, t.col);
}
static sql_node *NAT(sql_pctx *c, sql_kind k, const sql_node *at)
{
    return sql_node_new(c->a, k, at ? at->line : 0, at ? at->col : 0);
}
static char *TXT(sql_pctx *c, sql_tok t)
{
    return sql_arena_strndup(c->a, t.z, (size_t)t.n);
}
static char *UPSTR(sql_pctx *c, const char *in)
{
    char *s = sql_arena_strndup(c->a, in, strlen(in));
    for (char *p = s; *p; p++) if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 32);
    return s;
}
static char *UPPER(sql_pctx *c, sql_tok t)
{
    return UPSTR(c, TXT(c, t));
}
/* The value of a '...' literal: quotes off, '' -> '. */
static char *STRVAL(sql_pctx *c, sql_tok t)
{
    char *s = sql_arena_alloc(c->a, (size_t)t.n + 1);
    size_t o = 0;
    for (int i = 1; i < t.n - 1; i++) {
        s[o++] = t.z[i];
        if (t.z[i] == '\'' && i + 1 < t.n - 1 && t.z[i + 1] == '\'') i++;
    }
    s[o] = '\0';
    return s;
}
/* The name of an identifier token: `quoted` ones lose their quotes. */
static char *IDVAL(sql_pctx *c, sql_tok t)
{
    if (t.n >= 2 && t.z[0] == '`') {
        char *s = sql_arena_alloc(c->a, (size_t)t.n + 1);
        size_t o = 0;
        for (int i = 1; i < t.n - 1; i++) {
            s[o++] = t.z[i];
            if (t.z[i] == '`' && i + 1 < t.n - 1 && t.z[i + 1] == '`') i++;
        }
        s[o] = '\0';
        return s;
    }
    return TXT(c, t);
}
/* A name -- a column, an alias, a table, a view -- in a script: a word Flink
 * SQL reserves is one only back-quoted (lang/reserved.c). Returns x. */
static sql_node *NAMEOK(sql_pctx *c, sql_node *x)
{
    if (!c->names || !x || !x->s || (x->flags & SQL_F_QUOTED) || c->failed) return x;
    if (!sql_flink_reserved(x->s, strlen(x->s))) return x;
    c->failed = 1;
    sl_seterr(c->err, c->errlen, "line %d, column %d: Encountered \"%s\": a reserved keyword in "
              "Flink SQL; back-quote it (`%s`) to use it as a name", x->line, x->col, x->s, x->s);
    return x;
}
/* An alias without AS: a reserved word there is more likely syntax Sluice
 * does not know (AVG(x) OVER (...)) than a name. */
static sql_node *ALIASOK(sql_pctx *c, sql_node *x)
{
    if (!c->names || !x || !x->s || (x->flags & SQL_F_QUOTED) || c->failed) return x;
    if (!sql_flink_reserved(x->s, strlen(x->s))) return x;
    c->failed = 1;
    sl_seterr(c->err, c->errlen, "line %d, column %d: Encountered \"%s\": a reserved keyword in "
              "Flink SQL, not supported here (as an alias it is back-quoted: `%s`)", x->line,
              x->col, x->s, x->s);
    return x;
}
/* A column in an expression: the reserved words an expression takes bare
 * (CURRENT_TIMESTAMP, SECOND in TIMESTAMPDIFF) are no names. */
static sql_node *COLOK(sql_pctx *c, sql_node *x)
{
    if (x && x->s && !sql_flink_reserved_column(x->s, strlen(x->s))) return x;
    return NAMEOK(c, x);
}
/* TABLE(F(DATA => TABLE t [PARTITION BY k], TIMECOL => DESCRIPTOR(c), SIZE => i, ...)):
 * the named arguments of a window TVF (list L of ITEMs: s the name, s2 "TABLE" or
 * "DESCRIPTOR" for those forms) put into the positional SQL_FROM_TVF node, in
 * Flink's parameter order. Names are matched as Flink matches them, exactly
 * (unquoted words keep their case); an unknown, repeated or missing name is an
 * error here, where Flink ignores the first two. */
static sql_node *TVFNAMED(sql_pctx *c, sql_node *f, sql_node *l, sql_node *al)
{
    static const char *const params[4][6] = {
        {"TUMBLE", "DATA", "TIMECOL", "SIZE", "OFFSET", NULL},
        {"HOP", "DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
        {"CUMULATE", "DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
        {"SESSION", "DATA", "TIMECOL", "GAP", "OFFSET", NULL},
    };
    sql_node *a = NAT(c, SQL_FROM_TVF, f);
    a->s = f->s;
    a->s2 = al ? al->s : NULL;
    if (c->failed) return a;
    const char *const *ps = NULL;
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(f->s, params[i][0])) ps = params[i];
    if (!ps) {
        c->failed = 1;
        sl_seterr(c->err, c->errlen, "line %d, column %d: unknown window function '%s' (TUMBLE, "
                  "HOP, CUMULATE or SESSION)", f->line, f->col, f->s);
        return a;
    }
    int np = ps[5] ? 5 : 4, nreq = np - 1; /* OFFSET, the last, is optional */
    const sql_node *by[5] = {0};
    for (int i = 0; i < l->nkids; i++) {
        const sql_node *x = l->kids[i];
        int k = -1, near = -1;
        for (int j = 0; j < np; j++) {
            if (!strcmp(x->s, ps[j + 1])) k = j;
            else if (!strcasecmp(x->s, ps[j + 1])) near = j;
        }
        char msg[200] = "";
        if (k < 0 && near >= 0)
            snprintf(msg, sizeof msg, "Param '%s' not found in function '%s'; did you mean '%s'?",
                     x->s, ps[0], ps[near + 1]);
        else if (k < 0)
            snprintf(msg, sizeof msg, "Param '%s' not found in function '%s' (its parameters: "
                     "DATA, TIMECOL, %s%s%s, OFFSET)", x->s, ps[0], ps[3], ps[5] ? ", " : "",
                     ps[5] ? ps[4] : "");
        else if (by[k])
            snprintf(msg, sizeof msg, "Duplicate argument name '%s'", x->s);
        else if (k == 0 && (!x->s2 || strcmp(x->s2, "TABLE")))
            snprintf(msg, sizeof msg, "the argument DATA of %s is a table: DATA => TABLE t", ps[0]);
        else if (k == 1 && (!x->s2 || strcmp(x->s2, "DESCRIPTOR")))
            snprintf(msg, sizeof msg, "the argument TIMECOL of %s is a time column: TIMECOL => "
                     "DESCRIPTOR(c)", ps[0]);
        else if (k > 1 && x->s2)
            snprintf(msg, sizeof msg, "the argument %s of %s is an interval such as INTERVAL '10' "
                     "MINUTES", x->s, ps[0]);
        if (msg[0]) {
            c->failed = 1;
            sl_seterr(c->err, c->errlen, "line %d, column %d: %s", x->line, x->col, msg);
            return a;
        }
        by[k] = x;
    }
    for (int j = 0; j < nreq; j++)
        if (!by[j]) {
            c->failed = 1;
            sl_seterr(c->err, c->errlen, "line %d, column %d: Invalid number of arguments to "
                      "function '%s'. Was expecting %d arguments (%s is missing)", f->line, f->col,
                      ps[0], nreq, ps[j + 1]);
            return a;
        }
    sql_node_add(c->a, a, by[0]->kids[0]);
    sql_node_add(c->a, a, by[1]->kids[0]);
    sql_node *args = NAT(c, SQL_LIST, f);
    int session = !strcasecmp(ps[0], "SESSION");
    for (int j = 2; j < np; j++) /* SESSION's OFFSET: Flink 2.3 takes it and ignores it */
        if (by[j] && !(session && j == 3)) sql_node_add(c->a, args, by[j]->kids[0]);
    sql_node_add(c->a, a, args);
    sql_node_add(c->a, a, sql_kid(by[0], 1));
    return a;
}
/* Record the position of an operator's token (messages about the operator). */
static sql_node *OPAT(sql_node *n, sql_tok t)
{
    n->oline = t.line;
    n->ocol = t.col;
    return n;
}
static sql_node *BIN(sql_pctx *c, sql_node *a, const char *op, sql_tok t, sql_node *b)
{
    sql_node *n = OPAT(NAT(c, SQL_BINOP, a), t);
    n->s = sql_arena_strndup(c->a, op, strlen(op));
    sql_node_add(c->a, n, a);
    sql_node_add(c->a, n, b);
    return n;
}
/* fn(...) OVER w: the window node w becomes the call's SQL_OVER (ast.h), named
 * and placed as the function, with the call c as its kid [3] (placed at the
 * keyword OVER in its oline/ocol). */
static sql_node *OVERCALL(sql_pctx *c, const sql_node *f, sql_node *w, sql_node *call, sql_tok kw)
{
    w->s = UPSTR(c, f->s);
    w->oline = w->line;
    w->ocol = w->col;
    w->line = f->line;
    w->col = f->col;
    call->s = f->s;
    call->oline = kw.line;
    call->ocol = kw.col;
    return sql_node_add(c->a, w, call);
}
/* Put the named windows of `defs` (SQL_OVER nodes, s the name) into every OVER
 * w under e that names one of them. */
static void NAMEDWIN(sql_pctx *c, sql_node *e, const sql_node *defs)
{
    if (!e) return;
    if (e->kind == SQL_OVER && e->s2 && e->nkids >= 3 && !e->kids[1]) {
        for (int i = 0; i < defs->nkids; i++)
            if (!strcasecmp(defs->kids[i]->s, e->s2))
                for (int k = 0; k < 3; k++) e->kids[k] = defs->kids[i]->kids[k];
    }
    for (int i = 0; i < e->nkids; i++) NAMEDWIN(c, e->kids[i], defs);
}
static sql_node *LIST1(sql_pctx *c, sql_node *x)
{
    sql_node *l = NAT(c, SQL_LIST, x);
    return sql_node_add(c->a, l, x);
}
static sql_node *ADD(sql_pctx *c, sql_node *l, sql_node *x)
{
    return sql_node_add(c->a, l, x);
}
/* One part of a path: back-quoted (`` for a quote) when it holds '.' or '`'. */
static char *PATHPART(sql_pctx *c, const char *p)
{
    if (!strchr(p, '.') && !strchr(p, '`')) return (char *)p;
    size_t n = strlen(p), o = 0;
    char *s = sql_arena_alloc(c->a, 2 * n + 3);
    s[o++] = '`';
    for (size_t i = 0; i < n; i++) {
        s[o++] = p[i];
        if (p[i] == '`') s[o++] = '`';
    }
    s[o++] = '`';
    return s;
}
static char *CAT(sql_pctx *c, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = sql_arena_alloc(c->a, la + lb + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    return s;
}
/* `name` with a backquote inside doubled (a ROW field in a type's text) */
/* A word of a clause that is not one the clause takes: a syntax error naming it. */
static void WORDERR(sql_pctx *c, const sql_node *x, const char *want)
{
    if (c->failed) return;
    c->failed = 1;
    sl_seterr(c->err, c->errlen, "line %d, column %d: expected %s, found %s", x->line, x->col,
              want, x->s ? x->s : "?");
}
static int WORDIS(const sql_node *x, const char *w) { return x && x->s && !strcasecmp(x->s, w); }
/* A JSON aggregate call with its clauses: fn(x [n ON NULL]) or fn(k VALUE v [n ON NULL]). */
static sql_node *JAGG(sql_pctx *c, const sql_node *f, sql_node *x, sql_node *v, const char *n,
                      int kv)
{
    sql_node *a = NAT(c, SQL_FUNC, f);
    a->s = f->s;
    ADD(c, a, x);
    if (v) ADD(c, a, v);
    if (n) a->s2 = CAT(c, n, " ON NULL");
    if (!WORDIS(f, kv ? "JSON_OBJECTAGG" : "JSON_ARRAYAGG"))
        WORDERR(c, f, kv ? "JSON_OBJECTAGG before (key VALUE value)"
                         : "JSON_ARRAYAGG or JSON_OBJECTAGG before an ON NULL clause");
    return a;
}

/* fn(DISTINCT ...) of a JSON aggregate: Flink's grammar has none, its parser's words */
static void JDISTINCT(sql_pctx *c, const sql_node *f, sql_tok d)
{
    if (c->failed || !(WORDIS(f, "JSON_ARRAYAGG") || WORDIS(f, "JSON_OBJECTAGG"))) return;
    c->failed = 1;
    sl_seterr(c->err, c->errlen, "line %d, column %d: SQL parse failed. Incorrect syntax near the "
              "keyword 'DISTINCT'", d.line, d.col);
}
/* A string literal node made by the parser (the JSON functions' clauses). */
static sql_node *LIT(sql_pctx *c, const sql_node *at, const char *s)
{
    sql_node *n = NAT(c, SQL_STR, at);
    n->s = (char *)s;
    return n;
}
/* The ON EMPTY / ON ERROR clauses of JSON_VALUE, JSON_QUERY and JSON_EXISTS, and
 * JSON_VALUE's RETURNING, gathered into a LIST of IDENTs: s the clause ("EMPTY",
 * "ERROR", "RETURNING", "WRAPPER"), s2 its mode, kids[0] a DEFAULT's expression. */
static sql_node *JCL(sql_pctx *c, const sql_node *at, const char *mode, const sql_node *on,
                     sql_node *dflt)
{
    sql_node *n = NAT(c, SQL_IDENT, at);
    n->s2 = (char *)mode;
    n->s = on ? UPSTR(c, on->s) : "";
    if (on && !WORDIS(on, "EMPTY") && !WORDIS(on, "ERROR")) WORDERR(c, on, "ON EMPTY or ON ERROR");
    ADD(c, n, dflt);
    return n;
}
/* Build the call of a JSON function with clauses (see lang/expr_json.c). */
static sql_node *JCALL(sql_pctx *c, sql_tok t, const char *fn, sql_node *x, sql_node *p,
                       const sql_node *cl)
{
    sql_node *a = MK(c, SQL_FUNC, t);
    a->s = (char *)fn;
    ADD(c, a, x);
    ADD(c, a, p);
    const char *ret = NULL, *wrap = "WITHOUT", *em = "NULL", *er = NULL;
    sql_node *ed = NULL, *erd = NULL;
    int vfn = !strcmp(fn, "SL_JSON_VALUE"), qfn = !strcmp(fn, "SL_JSON_QUERY");
    er = vfn || qfn ? "NULL" : "FALSE";
    for (int i = 0; cl && i < cl->nkids; i++) {
        const sql_node *k = cl->kids[i];
        if (!strcmp(k->s, "RETURNING")) ret = k->s2;
        else if (!strcmp(k->s, "WRAPPER")) wrap = k->s2;
        else if (!strcmp(k->s, "EMPTY")) { em = k->s2; ed = sql_kid(k, 0); }
        else { er = k->s2; erd = sql_kid(k, 0); }
        if (!vfn && (!strcmp(k->s, "RETURNING") || sql_kid(k, 0)))
            WORDERR(c, k, "a clause this function takes (RETURNING and DEFAULT belong to JSON_VALUE)");
        if (!qfn && !strcmp(k->s, "WRAPPER")) WORDERR(c, k, "no WRAPPER clause (JSON_QUERY takes it)");
        if (!strcmp(fn, "SL_JSON_EXISTS") && !strcmp(k->s, "EMPTY")) WORDERR(c, k, "ON ERROR");
    }
    if (vfn) {
        ADD(c, a, LIT(c, x, ret ? ret : "STRING"));
        ADD(c, a, LIT(c, x, em));
        ADD(c, a, ed ? ed : NAT(c, SQL_NULL, x));
        ADD(c, a, LIT(c, x, er));
        ADD(c, a, erd ? erd : NAT(c, SQL_NULL, x));
    } else if (qfn) {
        ADD(c, a, LIT(c, x, wrap));
        ADD(c, a, LIT(c, x, em));
        ADD(c, a, LIT(c, x, er));
    } else {
        ADD(c, a, LIT(c, x, er));
    }
    return a;
}

static char *QUOTEID(sql_pctx *c, const char *name)
{
    size_t n = strlen(name), k = 0;
    char *s = sql_arena_alloc(c->a, 2 * n + 3);
    s[k++] = '`';
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '`') s[k++] = '`';
        s[k++] = name[i];
    }
    s[k++] = '`';
    s[k] = 0;
    return s;
}
}

%syntax_error {
    if (ctx->failed) return;
    ctx->failed = 1;
    /* The expected tokens: each one the parser, in its state before the offending
     * token, would accept (the table's default reductions hide them afterwards).
     * A non-reserved keyword counts only where an identifier would not do. */
    int exp[128], nexp = 0, expr_like = 0, op_only = 0;
    int id_ok = sql_would_accept(ctx->snap, ctx->nsnap, TK_ID);
    for (int i = 1; i < YYNTOKEN && nexp < 128; i++) {
        if (i == TK_UMINUS || i == TK_EXPR_START || i == TK_ITEM_START) continue;
        if (yyFallback[i] != 0 && id_ok) continue;
        if (!sql_would_accept(ctx->snap, ctx->nsnap, i)) continue;
        if (i == TK_INTEGER || i == TK_CASE) expr_like = 1;
        exp[nexp++] = i;
    }
    /* operators that would continue an expression say little next to the clause
     * keywords that could follow it: list them only when nothing else fits */
    if (!expr_like) {
        static const int ops[] = {TK_AND, TK_OR, TK_NOT, TK_IS, TK_IN, TK_LIKE, TK_SIMILAR, TK_BETWEEN,
                                  TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_PLUS, TK_MINUS,
                                  TK_STAR, TK_SLASH, TK_PERCENT, TK_CONCAT};
        int keep[128], nkeep = 0, any_op = 0;
        for (int i = 0; i < nexp; i++)
            for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
                if (exp[i] == ops[k]) any_op = 1;
        /* after an operand, '(', '.' and '[' (a call, a qualified name or field, an element)
         * continue it too */
        for (int i = 0; i < nexp; i++) {
            int op = any_op && (exp[i] == TK_LP || exp[i] == TK_DOT || exp[i] == TK_LBRACKET ||
                                  exp[i] == TK_STRING); /* DATE '...' after a name */
            for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
                if (exp[i] == ops[k]) op = 1;
            if (!op) keep[nkeep++] = exp[i];
        }
        if (nkeep == 0 && any_op && nexp > 3) { /* nothing but an operator would do */
            exp[0] = TK_PLUS;
            nexp = 1;
            op_only = 1;
        }
        if (nkeep > 0 && nkeep < nexp) {
            memcpy(exp, keep, sizeof(int) * (size_t)nkeep);
            nexp = nkeep;
        }
    }
    /* a stable order: names and literals, then keywords, then punctuation */
    for (int i = 1; i < nexp; i++)
        for (int j = i; j > 0; j--) {
            const char *a = sql_token_display(exp[j - 1]), *b = sql_token_display(exp[j]);
            int ca = a[0] == '\'' ? 2 : (a[0] >= 'a' && a[0] <= 'z') ? 0 : 1;
            int cb = b[0] == '\'' ? 2 : (b[0] >= 'a' && b[0] <= 'z') ? 0 : 1;
            if (ca < cb || (ca == cb && strcmp(a, b) <= 0)) break;
            int t = exp[j - 1];
            exp[j - 1] = exp[j];
            exp[j] = t;
        }
    char want[400] = "";
    size_t w = 0;
    if (expr_like) {
        w = (size_t)snprintf(want, sizeof want, "an expression");
    } else if (op_only) {
        w = (size_t)snprintf(want, sizeof want, "an operator");
    } else {
        for (int i = 0; i < nexp && i < 8; i++) {
            const char *sep = i == 0 ? "" : (i == nexp - 1 || i == 7) && nexp <= 8 ? " or " : ", ";
            w += (size_t)snprintf(want + w, sizeof want - w, "%s%s", sep,
                                  sql_token_display(exp[i]));
            if (w >= sizeof want) break;
        }
        if (nexp > 8 && w < sizeof want) snprintf(want + w, sizeof want - w, ", ...");
    }
    char got[80];
    if (yymajor == 0) snprintf(got, sizeof got, "end of input");
    else if (TOKEN.n > 40) snprintf(got, sizeof got, "'%.37s...'", TOKEN.z);
    else snprintf(got, sizeof got, "'%.*s'", TOKEN.n, TOKEN.z);
    int line = yymajor == 0 ? TOKEN.line : TOKEN.line, col = TOKEN.col;
    if (nexp)
        sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: unexpected %s, expected %s", line,
                  col, got, want);
    else
        sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: unexpected %s", line, col, got);
}

%stack_overflow {
    ctx->failed = 1;
    sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: the statement is nested too deeply",
              ctx->line, ctx->col);
}

%parse_failure {
    if (!ctx->failed)
        sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: syntax error", ctx->line, ctx->col);
    ctx->failed = 1;
}

/* Non-reserved keywords. */
%fallback ID TEMPORARY TABLES VIEWS WATERMARK SECOND MINUTE HOUR DAY MONTH YEAR ENFORCED KEY
    DESCRIPTOR STATEMENT IF EXISTS TIMESTAMP LOCAL TIME ZONE WITHOUT PARTITION RESET SHOW
    DESCRIBE DESC EXPLAIN BEGIN TO FUNCTIONS JOBS CHANGELOG_MODE PLAN COMMENT OVERWRITE
    OUTER STOP JOB SAVEPOINT DRAIN ASC FILTER OVER ESCAPE UNKNOWN BOTH LEADING TRAILING POSITION
    METADATA VIRTUAL FIRST NEXT ROW ROWS ONLY SIMILAR PLACING MEASURES PATTERN DEFINE WITHIN AFTER
    SKIP PER ONE ADD JAR JARS LANGUAGE REMOVE SYSTEM USER ARRAY MULTISET ALTER CASCADE CATALOG
    CATALOGS COLUMNS CURRENT DATABASE DATABASES MODIFY PARTITIONED RENAME RESTRICT USE CONSTRAINT
    JSON OBJECT RETURNING SCALAR VALUE WRAPPER SETS.

/* COMMA and RP only decide POSITION(a IN (b)): the haystack in parentheses,
 * not an IN list (see exprlist). */
%left COMMA.

%left OR.
%left AND.
%right NOT.
%nonassoc IS LIKE BETWEEN IN SIMILAR.
%left EQ NE LT LE GT GE.
%left PLUS MINUS.
%left STAR SLASH PERCENT CONCAT.
%right UMINUS.
%nonassoc ESCAPE.
%nonassoc RP.
/* INTERVAL '1' DAY TO SECOND inside FLOOR( ... TO unit): the qualifier's TO wins */
%nonassoc TO.
/* IS JSON VALUE: VALUE belongs to the predicate (not to a JSON_OBJECT pair after it) */
%nonassoc VALUE.
/* a.b, x[i] bind tightest: -a.b is -(a.b) */
%left DOT LBRACKET.

/* ---- scripts ------------------------------------------------------------ */

input ::= stmtlist(L). { ctx->result = L; }
input ::= EXPR_START expr(E). { ctx->result = E; }
input ::= ITEM_START expr(E) alias_opt(AL). { ctx->result = NAT(ctx, SQL_ITEM, E); ctx->result->s = AL ? AL->s : NULL; if (AL) OPAT(ctx->result, (sql_tok){.line = AL->line, .col = AL->col}); ADD(ctx, ctx->result, E); }

%type stmtlist {sql_node *}
stmtlist(A) ::= stmt_opt(X). { A = sql_node_new(ctx->a, SQL_LIST, 1, 1); if (X) ADD(ctx, A, X); }
stmtlist(A) ::= stmtlist(L) SEMI stmt_opt(X). { A = L; if (X) ADD(ctx, A, X); }

stmt_opt(A) ::= . { A = NULL; }
stmt_opt(A) ::= stmt(X). { A = X; }

stmt(A) ::= create_table(X). { A = X; }
stmt(A) ::= create_view(X). { A = X; }
stmt(A) ::= drop(X). { A = X; }
stmt(A) ::= SHOW(T) TABLES show_from(F) show_like(L). { A = MK(ctx, SQL_SHOW, T); A->s = "TABLES"; A->s2 = F; if (L) ADD(ctx, A, L); }
stmt(A) ::= SHOW(T) VIEWS show_from(F) show_like(L). { A = MK(ctx, SQL_SHOW, T); A->s = "VIEWS"; A->s2 = F; if (L) ADD(ctx, A, L); }
stmt(A) ::= catalog_stmt(X). { A = X; }
stmt(A) ::= alter_stmt(X). { A = X; }
stmt(A) ::= SHOW(T) FUNCTIONS. { A = MK(ctx, SQL_SHOW, T); A->s = "FUNCTIONS"; }
stmt(A) ::= SHOW(T) JOBS. { A = MK(ctx, SQL_SHOW, T); A->s = "JOBS"; }
stmt(A) ::= describe_kw(T) name(X). { A = NAT(ctx, SQL_DESCRIBE, T); A->s = X->s; }
stmt(A) ::= SET(T). { A = MK(ctx, SQL_SET, T); }
stmt(A) ::= SET(T) STRING(K) EQ STRING(V). { A = MK(ctx, SQL_SET, T); A->s = STRVAL(ctx, K); A->s2 = STRVAL(ctx, V); }
stmt(A) ::= RESET(T). { A = MK(ctx, SQL_RESET, T); }
stmt(A) ::= RESET(T) STRING(K). { A = MK(ctx, SQL_RESET, T); A->s = STRVAL(ctx, K); }
stmt(A) ::= insert(X). { A = X; }
stmt(A) ::= EXECUTE(T) STATEMENT SET BEGIN insertlist(L) END. {
    A = MK(ctx, SQL_STMT_SET, T);
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
}
stmt(A) ::= BEGIN(T) STATEMENT SET. { A = MK(ctx, SQL_BEGIN_SET, T); }
stmt(A) ::= END(T). { A = MK(ctx, SQL_END_SET, T); }
stmt(A) ::= EXPLAIN(T) explain_opt(F) explainable(X). { A = MK(ctx, SQL_EXPLAIN, T); A->flags = F; ADD(ctx, A, X); }
stmt(A) ::= query(Q). { A = NAT(ctx, SQL_QUERY_STMT, Q); ADD(ctx, A, Q); }
stmt(A) ::= function_stmt(X). { A = X; }
stmt(A) ::= STOP(T) JOB STRING(J) stop_opts(F). { A = MK(ctx, SQL_STOP_JOB, T); A->s = STRVAL(ctx, J); A->flags = F; }

%type stop_opts {int}
stop_opts(A) ::= . { A = 0; }
stop_opts(A) ::= WITH SAVEPOINT. { A = SQL_F_SAVEPOINT; }
stop_opts(A) ::= WITH DRAIN. { A = SQL_F_DRAIN; }
stop_opts(A) ::= WITH SAVEPOINT WITH DRAIN. { A = SQL_F_SAVEPOINT | SQL_F_DRAIN; }

%type describe_kw {sql_node *}
describe_kw(A) ::= DESCRIBE(T). { A = MK(ctx, SQL_IDENT, T); }
describe_kw(A) ::= DESC(T). { A = MK(ctx, SQL_IDENT, T); }

%type explain_opt {int}
explain_opt(A) ::= . { A = 0; }
explain_opt(A) ::= PLAN FOR. { A = 0; }
explain_opt(A) ::= explain_details(D). { A = D; }
/* EXPLAIN ESTIMATED_COST, CHANGELOG_MODE, JSON_EXECUTION_PLAN, PLAN_ADVICE: Flink's
 * ExplainDetail words; only CHANGELOG_MODE changes what is shown */
%type explain_details {int}
%type explain_detail {int}
explain_details(A) ::= explain_detail(D). { A = D; }
explain_details(A) ::= explain_details(L) COMMA explain_detail(D). { A = L | D; }
explain_detail(A) ::= CHANGELOG_MODE. { A = SQL_F_CHANGELOG; }
explain_detail(A) ::= ident(X). {
    A = 0;
    if (strcasecmp(X->s, "ESTIMATED_COST") && strcasecmp(X->s, "JSON_EXECUTION_PLAN") &&
        strcasecmp(X->s, "PLAN_ADVICE") && !ctx->failed) {
        ctx->failed = 1;
        sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: unknown EXPLAIN detail '%s' "
                  "(ESTIMATED_COST, CHANGELOG_MODE, JSON_EXECUTION_PLAN or PLAN_ADVICE)",
                  X->line, X->col, X->s);
    }
}

explainable(A) ::= insert(X). { A = X; }
explainable(A) ::= query(Q). { A = NAT(ctx, SQL_QUERY_STMT, Q); ADD(ctx, A, Q); }
explainable(A) ::= STATEMENT(T) SET BEGIN insertlist(L) END. {
    A = MK(ctx, SQL_STMT_SET, T);
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
}

insertlist(A) ::= insert(X) SEMI. { A = LIST1(ctx, X); }
insertlist(A) ::= insertlist(L) insert(X) SEMI. { A = ADD(ctx, L, X); }

insert(A) ::= INSERT(T) INTO name(X) query(Q). { A = MK(ctx, SQL_INSERT, T); A->s = X->s; ADD(ctx, A, Q); }
insert(A) ::= INSERT(T) INTO name(X) LP identlist(L) RP query(Q). {
    A = MK(ctx, SQL_INSERT, T); A->s = X->s; ADD(ctx, A, Q); ADD(ctx, A, L);
}
/* INSERT INTO t / *+ OPTIONS('k' = 'v') * / ...: the hints are kid [2] */
insert(A) ::= INSERT(T) INTO name(X) HINT hints(H) STAR SLASH query(Q). {
    A = MK(ctx, SQL_INSERT, T); A->s = X->s; ADD(ctx, A, Q); ADD(ctx, A, NULL); ADD(ctx, A, H);
}
insert(A) ::= INSERT(T) INTO name(X) HINT hints(H) STAR SLASH LP identlist(L) RP query(Q). {
    A = MK(ctx, SQL_INSERT, T); A->s = X->s; ADD(ctx, A, Q); ADD(ctx, A, L); ADD(ctx, A, H);
}

/* ---- DDL ---------------------------------------------------------------- */

%type temp_opt {int}
temp_opt(A) ::= . { A = 0; }
temp_opt(A) ::= TEMPORARY. { A = SQL_F_TEMP; }

%type ifne_opt {int}
ifne_opt(A) ::= . { A = 0; }
ifne_opt(A) ::= IF NOT EXISTS. { A = SQL_F_IFNE; }

%type ifex_opt {int}
ifex_opt(A) ::= . { A = 0; }
ifex_opt(A) ::= IF EXISTS. { A = SQL_F_IFEX; }

/* CREATE TABLE t [(elements)] [COMMENT '...'] [PARTITIONED BY (a, b)] [WITH (...)]
 * [LIKE s [(like options)] | AS query] (sql/catalog_ddl.c merges LIKE, runs AS) */
create_table(A) ::= CREATE(T) temp_opt(F) TABLE ifne_opt(G) name(X) tbl_cols(E) comment_opt(C) part_by(P) with_opt(W) tbl_source(S). {
    A = MK(ctx, SQL_CREATE_TABLE, T);
    A->flags = F | G;
    A->s = X->s;
    A->s2 = C;
    ADD(ctx, A, E);
    ADD(ctx, A, W);
    if (S || P) { /* kids [2..4] only when written: dumps stay as they were */
        ADD(ctx, A, S && S->kind == SQL_IDENT ? S : NULL);
        ADD(ctx, A, S && S->kind != SQL_IDENT ? S : NULL);
        ADD(ctx, A, P);
    }
}
tbl_cols(A) ::= . { A = NULL; }
tbl_cols(A) ::= LP tbl_elems(E) RP. { A = E; }
part_by(A) ::= . { A = NULL; }
part_by(A) ::= PARTITIONED(T) BY LP identlist(L) RP. { A = L; A->line = T.line; A->col = T.col; }
tbl_source(A) ::= . { A = NULL; }
tbl_source(A) ::= LIKE(T) name(X) like_opts(O). {
    A = MK(ctx, SQL_IDENT, T); A->s = X->s;
    for (int i = 0; O && i < O->nkids; i++) ADD(ctx, A, O->kids[i]);
}
tbl_source(A) ::= AS query(Q). { A = Q; }
like_opts(A) ::= . { A = NULL; }
like_opts(A) ::= LP like_list(L) RP. { A = L; }
like_list(A) ::= like_opt(X). { A = LIST1(ctx, X); }
like_list(A) ::= like_list(L) COMMA like_opt(X). { A = ADD(ctx, L, X); }
/* INCLUDING | EXCLUDING | OVERWRITING  ALL | CONSTRAINTS | PARTITIONS | GENERATED | OPTIONS |
 * WATERMARKS | METADATA: the words are checked by sql/catalog_ddl.c */
like_opt(A) ::= ident(K) ALL. { A = K; A->s = UPSTR(ctx, CAT(ctx, K->s, " ALL")); }
like_opt(A) ::= ident(K) ident(W). { A = K; A->s = UPSTR(ctx, CAT(ctx, CAT(ctx, K->s, " "), W->s)); }

create_view(A) ::= CREATE(T) temp_opt(F) VIEW ifne_opt(G) name(X) AS query(Q). {
    A = MK(ctx, SQL_CREATE_VIEW, T);
    A->flags = F | G;
    A->s = X->s;
    ADD(ctx, A, Q);
}
/* CREATE VIEW v (a, b) AS ...: the column names are kid [1] */
create_view(A) ::= CREATE(T) temp_opt(F) VIEW ifne_opt(G) name(X) LP identlist(L) RP AS query(Q). {
    A = MK(ctx, SQL_CREATE_VIEW, T);
    A->flags = F | G;
    A->s = X->s;
    ADD(ctx, A, Q);
    ADD(ctx, A, L);
}

drop(A) ::= DROP(T) temp_opt(F) TABLE ifex_opt(G) name(X). { A = MK(ctx, SQL_DROP, T); A->flags = F | G; A->s = X->s; }
drop(A) ::= DROP(T) temp_opt(F) VIEW ifex_opt(G) name(X). { A = MK(ctx, SQL_DROP, T); A->flags = F | G | SQL_F_VIEW; A->s = X->s; }

tbl_elems(A) ::= tbl_elem(X). { A = LIST1(ctx, X); }
tbl_elems(A) ::= tbl_elems(L) COMMA tbl_elem(X). { A = ADD(ctx, L, X); }

tbl_elem(A) ::= ident(X) coltype(T) notnull_opt(F) comment_opt. {
    NAMEOK(ctx, X);
    A = NAT(ctx, SQL_COLUMN, X); A->s = X->s; A->s2 = T->s; A->flags = F;
}
/* user_id INT [NOT NULL] [CONSTRAINT c] PRIMARY KEY NOT ENFORCED: the key is kid [1] */
tbl_elem(A) ::= ident(X) coltype(T) notnull_opt(F) constraint_opt(C) PRIMARY(P) KEY enforced_opt(E) comment_opt. {
    NAMEOK(ctx, X);
    A = NAT(ctx, SQL_COLUMN, X); A->s = X->s; A->s2 = T->s; A->flags = F;
    sql_node *k = MK(ctx, SQL_PKEY, P); k->s = C; k->flags = E;
    ADD(ctx, A, NULL); ADD(ctx, A, k);
}
%type constraint_opt {char *}
constraint_opt(A) ::= . { A = NULL; }
constraint_opt(A) ::= CONSTRAINT ident(N). { A = N->s; }
%type enforced_opt {int}
enforced_opt(A) ::= . { A = SQL_F_ENFORCED; }
enforced_opt(A) ::= ENFORCED. { A = SQL_F_ENFORCED; }
enforced_opt(A) ::= NOT ENFORCED. { A = 0; }
/* A metadata column: s2 the type, kids [0] the FROM key (an IDENT) or NULL,
 * flags METADATA [| VIRTUAL]. */
tbl_elem(A) ::= ident(X) coltype(T) METADATA meta_from(K) virtual_opt(V) comment_opt. {
    NAMEOK(ctx, X);
    A = NAT(ctx, SQL_COLUMN, X); A->s = X->s; A->s2 = T->s; A->flags = SQL_F_METADATA | V; ADD(ctx, A, K);
}
meta_from(A) ::= . { A = NULL; }
meta_from(A) ::= FROM STRING(K). { A = MK(ctx, SQL_IDENT, K); A->s = STRVAL(ctx, K); }
%type virtual_opt {int}
virtual_opt(A) ::= . { A = 0; }
virtual_opt(A) ::= VIRTUAL. { A = SQL_F_VIRTUAL; }
tbl_elem(A) ::= ident(X) AS expr(E) comment_opt. { NAMEOK(ctx, X); A = NAT(ctx, SQL_COMPUTED, X); A->s = X->s; ADD(ctx, A, E); }
tbl_elem(A) ::= WATERMARK(T) FOR ident(X) AS expr(E). { NAMEOK(ctx, X); A = MK(ctx, SQL_WATERMARK, T); A->s = X->s; ADD(ctx, A, E); }
tbl_elem(A) ::= PRIMARY(T) KEY LP identlist(L) RP enforced_opt(E). {
    A = MK(ctx, SQL_PKEY, T); A->flags = E;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
}
tbl_elem(A) ::= CONSTRAINT(T) ident(N) PRIMARY KEY LP identlist(L) RP enforced_opt(E). {
    A = MK(ctx, SQL_PKEY, T); A->flags = E; A->s = N->s;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
}

%type notnull_opt {int}
notnull_opt(A) ::= . { A = 0; }
notnull_opt(A) ::= NOT NULL. { A = SQL_F_NOTNULL; }
notnull_opt(A) ::= NULL. { A = 0; }

%type comment_opt {char *}
comment_opt(A) ::= . { A = NULL; }
comment_opt(A) ::= COMMENT STRING(S). { A = STRVAL(ctx, S); }

with_opt(A) ::= . { A = NULL; }
with_opt(A) ::= WITH(T) LP optlist(L) RP. { A = L; A->line = T.line; A->col = T.col; }

optlist(A) ::= option(X). { A = LIST1(ctx, X); }
optlist(A) ::= optlist(L) COMMA option(X). { A = ADD(ctx, L, X); }
option(A) ::= STRING(K) EQ STRING(V). { A = MK(ctx, SQL_OPTION, K); A->s = STRVAL(ctx, K); A->s2 = STRVAL(ctx, V); }

/* Types: a name, an optional (n) or (p, s), WITH[OUT] TIME ZONE. */
typename(A) ::= ident(X) tlen_opt(L) tz_opt(Z). {
    A = X;
    A->s = CAT(ctx, CAT(ctx, UPSTR(ctx, X->s), L), Z);
}
/* ARRAY<t>, MULTISET<t>, MAP<k, v>, ROW<name t, ...>: the text is read by
 * sl_dtype_parse (core/dtype.c), which checks names and arity. */
typename(A) ::= ident(X) LT typeargs(L) GT. {
    A = X;
    A->s = CAT(ctx, CAT(ctx, CAT(ctx, UPSTR(ctx, X->s), "<"), L), ">");
}
typename(A) ::= ROW(X) LT typeargs(L) GT. {
    A = MK(ctx, SQL_IDENT, X);
    A->s = CAT(ctx, CAT(ctx, "ROW<", L), ">");
}
typename(A) ::= ROW(X) LP typeargs(L) RP. {
    A = MK(ctx, SQL_IDENT, X);
    A->s = CAT(ctx, CAT(ctx, "ROW(", L), ")");
}
typename(A) ::= typename(T) ARRAY. { A = T; A->s = CAT(ctx, T->s, " ARRAY"); }
typename(A) ::= typename(T) MULTISET. { A = T; A->s = CAT(ctx, T->s, " MULTISET"); }
/* A column's type: any type, or an interval (which CAST spells its own way) */
coltype(A) ::= typename(T). { A = T; }
coltype(A) ::= INTERVAL(X) iv_unit(U). { A = MK(ctx, SQL_IDENT, X); A->s = CAT(ctx, "INTERVAL ", U->s); }
%type typeargs {char *}
typeargs(A) ::= typearg(X). { A = X; }
typeargs(A) ::= typeargs(L) COMMA typearg(X). { A = CAT(ctx, CAT(ctx, L, ", "), X); }
%type typearg {char *}
typearg(A) ::= coltype(T) notnull_opt(F). { A = F ? CAT(ctx, T->s, " NOT NULL") : T->s; }
typearg(A) ::= ident(N) coltype(T) notnull_opt(F) comment_opt. {
    A = CAT(ctx, CAT(ctx, CAT(ctx, QUOTEID(ctx, N->s), " "), T->s), F ? " NOT NULL" : "");
}
%type tlen_opt {char *}
tlen_opt(A) ::= . { A = ""; }
tlen_opt(A) ::= LP INTEGER(N) RP. { A = CAT(ctx, CAT(ctx, "(", TXT(ctx, N)), ")"); }
tlen_opt(A) ::= LP INTEGER(N) COMMA INTEGER(M) RP. { A = CAT(ctx, CAT(ctx, CAT(ctx, CAT(ctx, "(", TXT(ctx, N)), ", "), TXT(ctx, M)), ")"); }
%type tz_opt {char *}
tz_opt(A) ::= . { A = ""; }
tz_opt(A) ::= WITH LOCAL TIME ZONE. { A = " WITH LOCAL TIME ZONE"; }
tz_opt(A) ::= WITHOUT TIME ZONE. { A = ""; }

ident(A) ::= ID(T). { A = MK(ctx, SQL_IDENT, T); A->s = IDVAL(ctx, T); if (T.z[0] == '`') A->flags = SQL_F_QUOTED; }

/* [catalog.][database.]name: s the path as written, its parts joined by '.' (a part
 * holding '.' or '`' back-quoted, sql/catalog_ddl.c splits it), s2 the last part */
name(A) ::= ident(X). { A = NAMEOK(ctx, X); A->s2 = A->s; A->s = PATHPART(ctx, X->s); }
name(A) ::= ident(C) DOT ident(X). {
    NAMEOK(ctx, C); A = NAMEOK(ctx, X); A->s2 = A->s;
    A->s = CAT(ctx, CAT(ctx, PATHPART(ctx, C->s), "."), PATHPART(ctx, X->s));
    A->line = C->line; A->col = C->col; /* the name starts at its first part */
}
name(A) ::= ident(C) DOT ident(D) DOT ident(X). {
    NAMEOK(ctx, C); NAMEOK(ctx, D); A = NAMEOK(ctx, X); A->s2 = A->s;
    A->s = CAT(ctx, CAT(ctx, CAT(ctx, CAT(ctx, PATHPART(ctx, C->s), "."), PATHPART(ctx, D->s)), "."),
               PATHPART(ctx, X->s));
    A->line = C->line; A->col = C->col;
}

identlist(A) ::= ident(X). { A = LIST1(ctx, NAMEOK(ctx, X)); }
identlist(A) ::= identlist(L) COMMA ident(X). { A = ADD(ctx, L, NAMEOK(ctx, X)); }

/* ---- catalogs, databases, ALTER, SHOW (sql/catalog_ddl.c) --------------- */

%type show_from {char *}
show_from(A) ::= . { A = NULL; }
show_from(A) ::= FROM name(X). { A = X->s; }
show_from(A) ::= IN name(X). { A = X->s; }
show_like(A) ::= . { A = NULL; }
show_like(A) ::= LIKE(T) STRING(P). { A = MK(ctx, SQL_IDENT, T); A->s = STRVAL(ctx, P); }
show_like(A) ::= NOT(T) LIKE STRING(P). { A = MK(ctx, SQL_IDENT, T); A->s = STRVAL(ctx, P); A->flags = SQL_F_NOT; }
stmt(A) ::= SHOW(T) COLUMNS from_in name(X) show_like(L). { A = MK(ctx, SQL_SHOW, T); A->s = "COLUMNS"; A->s2 = X->s; if (L) ADD(ctx, A, L); }
from_in ::= FROM.
from_in ::= IN.
stmt(A) ::= SHOW(T) CREATE TABLE name(X). { A = MK(ctx, SQL_SHOW, T); A->s = "CREATE TABLE"; A->s2 = X->s; }
stmt(A) ::= SHOW(T) CREATE VIEW name(X). { A = MK(ctx, SQL_SHOW, T); A->s = "CREATE VIEW"; A->s2 = X->s; }
stmt(A) ::= SHOW(T) CATALOGS show_like(L). { A = MK(ctx, SQL_SHOW, T); A->s = "CATALOGS"; if (L) ADD(ctx, A, L); }
stmt(A) ::= SHOW(T) DATABASES show_from(F) show_like(L). { A = MK(ctx, SQL_SHOW, T); A->s = "DATABASES"; A->s2 = F; if (L) ADD(ctx, A, L); }
stmt(A) ::= SHOW(T) CURRENT CATALOG. { A = MK(ctx, SQL_SHOW, T); A->s = "CURRENT CATALOG"; }
stmt(A) ::= SHOW(T) CURRENT DATABASE. { A = MK(ctx, SQL_SHOW, T); A->s = "CURRENT DATABASE"; }

catalog_stmt(A) ::= CREATE(T) DATABASE ifne_opt(G) name(X) comment_opt with_opt(W). {
    A = MK(ctx, SQL_CATALOG_STMT, T); A->s = "CREATE DATABASE"; A->s2 = X->s; A->flags = G; ADD(ctx, A, W);
}
catalog_stmt(A) ::= DROP(T) DATABASE ifex_opt(G) name(X) drop_mode(M). {
    A = MK(ctx, SQL_CATALOG_STMT, T); A->s = "DROP DATABASE"; A->s2 = X->s; A->flags = G | M;
}
%type drop_mode {int}
drop_mode(A) ::= . { A = 0; }
drop_mode(A) ::= RESTRICT. { A = 0; }
drop_mode(A) ::= CASCADE. { A = SQL_F_CASCADE; }
catalog_stmt(A) ::= USE(T) name(X). { A = MK(ctx, SQL_CATALOG_STMT, T); A->s = "USE"; A->s2 = X->s; }
catalog_stmt(A) ::= USE(T) CATALOG ident(X). { A = MK(ctx, SQL_CATALOG_STMT, T); A->s = "USE CATALOG"; A->s2 = X->s; }
catalog_stmt(A) ::= CREATE(T) CATALOG ifne_opt(G) ident(X) comment_opt with_opt(W). {
    A = MK(ctx, SQL_CATALOG_STMT, T); A->s = "CREATE CATALOG"; A->s2 = X->s; A->flags = G; ADD(ctx, A, W);
}
catalog_stmt(A) ::= DROP(T) CATALOG ifex_opt(G) ident(X). {
    A = MK(ctx, SQL_CATALOG_STMT, T); A->s = "DROP CATALOG"; A->s2 = X->s; A->flags = G;
}

alter_stmt(A) ::= alter_head(H) RENAME TO name(Y). { A = H; A->s2 = "RENAME"; sql_node *n = NAT(ctx, SQL_IDENT, Y); n->s = Y->s; ADD(ctx, A, n); }
alter_stmt(A) ::= alter_head(H) RENAME ident(C) TO ident(D). { A = H; A->s2 = "RENAME COLUMN"; ADD(ctx, A, C); ADD(ctx, A, NAMEOK(ctx, D)); }
alter_stmt(A) ::= alter_head(H) SET LP optlist(L) RP. { A = H; A->s2 = "SET"; ADD(ctx, A, L); }
alter_stmt(A) ::= alter_head(H) RESET LP keylist(L) RP. { A = H; A->s2 = "RESET"; ADD(ctx, A, L); }
alter_stmt(A) ::= alter_head(H) ADD alter_elems(L). { A = H; A->s2 = "ADD"; ADD(ctx, A, L); }
alter_stmt(A) ::= alter_head(H) MODIFY alter_elems(L). { A = H; A->s2 = "MODIFY"; ADD(ctx, A, L); }
alter_stmt(A) ::= alter_head(H) DROP ident(C). { A = H; A->s2 = "DROP"; ADD(ctx, A, LIST1(ctx, C)); }
alter_stmt(A) ::= alter_head(H) DROP LP identlist(L) RP. { A = H; A->s2 = "DROP"; ADD(ctx, A, L); }
alter_stmt(A) ::= alter_head(H) DROP PRIMARY KEY. { A = H; A->s2 = "DROP PRIMARY KEY"; }
alter_stmt(A) ::= alter_head(H) DROP CONSTRAINT ident. { A = H; A->s2 = "DROP PRIMARY KEY"; }
alter_stmt(A) ::= alter_head(H) DROP WATERMARK. { A = H; A->s2 = "DROP WATERMARK"; }
alter_stmt(A) ::= ALTER(T) VIEW ifex_opt(G) name(X) RENAME TO name(Y). {
    A = MK(ctx, SQL_ALTER, T); A->s = X->s; A->flags = G | SQL_F_VIEW; A->s2 = "RENAME";
    sql_node *n = NAT(ctx, SQL_IDENT, Y); n->s = Y->s; ADD(ctx, A, n);
}
alter_stmt(A) ::= ALTER(T) VIEW ifex_opt(G) name(X) AS query(Q). { A = MK(ctx, SQL_ALTER, T); A->s = X->s; A->flags = G | SQL_F_VIEW; A->s2 = "AS"; ADD(ctx, A, Q); }
alter_head(A) ::= ALTER(T) TABLE ifex_opt(G) name(X). { A = MK(ctx, SQL_ALTER, T); A->s = X->s; A->flags = G; }
keylist(A) ::= STRING(K). { sql_node *k = MK(ctx, SQL_IDENT, K); k->s = STRVAL(ctx, K); A = LIST1(ctx, k); }
keylist(A) ::= keylist(L) COMMA STRING(K). { sql_node *k = MK(ctx, SQL_IDENT, K); k->s = STRVAL(ctx, K); A = ADD(ctx, L, k); }
alter_elems(A) ::= alter_elem(X). { A = LIST1(ctx, X); }
alter_elems(A) ::= LP alter_list(L) RP. { A = L; }
alter_list(A) ::= alter_elem(X). { A = LIST1(ctx, X); }
alter_list(A) ::= alter_list(L) COMMA alter_elem(X). { A = ADD(ctx, L, X); }
alter_elem(A) ::= tbl_elem(E) col_pos(P). { A = P; ADD(ctx, A, E); A->line = E->line; A->col = E->col; }
col_pos(A) ::= . { A = NAT(ctx, SQL_IDENT, NULL); }
col_pos(A) ::= FIRST(T). { A = MK(ctx, SQL_IDENT, T); A->s = "FIRST"; }
col_pos(A) ::= AFTER(T) ident(C). { A = MK(ctx, SQL_IDENT, T); A->s = "AFTER"; A->s2 = C->s; }

/* ---- user-defined functions and jars (sql/catalog_udf.c) ----------------- */

function_stmt(A) ::= CREATE(T) temp_opt(F) sys_opt(S) FUNCTION ifne_opt(G) name(X) AS STRING(I) lang_opt(L) using_opt(U). {
    A = MK(ctx, SQL_CREATE_FUNCTION, T); A->flags = F | S | G; A->s = X->s2; A->s2 = STRVAL(ctx, I);
    ADD(ctx, A, L); ADD(ctx, A, U);
}
function_stmt(A) ::= ALTER(T) temp_opt(F) sys_opt(S) FUNCTION ifex_opt(G) name(X) AS STRING(I) lang_opt(L) using_opt(U). {
    A = MK(ctx, SQL_CREATE_FUNCTION, T); A->flags = F | S | G | SQL_F_ALTER; A->s = X->s;
    A->s2 = STRVAL(ctx, I);
    ADD(ctx, A, L); ADD(ctx, A, U);
}
function_stmt(A) ::= DROP(T) temp_opt(F) sys_opt(S) FUNCTION ifex_opt(G) name(X). {
    A = MK(ctx, SQL_DROP_FUNCTION, T); A->flags = F | S | G; A->s = X->s2;
}
function_stmt(A) ::= describe_kw(T) FUNCTION name(X). { A = NAT(ctx, SQL_DESCRIBE_FUNCTION, T); A->s = X->s2; }
function_stmt(A) ::= SHOW(T) USER FUNCTIONS. { A = MK(ctx, SQL_SHOW, T); A->s = "USER FUNCTIONS"; }
function_stmt(A) ::= SHOW(T) JARS. { A = MK(ctx, SQL_SHOW, T); A->s = "JARS"; }
function_stmt(A) ::= ADD(T) JAR STRING(P). { A = MK(ctx, SQL_JAR, T); A->s = "ADD"; A->s2 = STRVAL(ctx, P); }
function_stmt(A) ::= REMOVE(T) JAR STRING(P). { A = MK(ctx, SQL_JAR, T); A->s = "REMOVE"; A->s2 = STRVAL(ctx, P); }

%type sys_opt {int}
sys_opt(A) ::= . { A = 0; }
sys_opt(A) ::= SYSTEM. { A = SQL_F_SYSTEM; }
lang_opt(A) ::= . { A = NULL; }
lang_opt(A) ::= LANGUAGE ident(X). { A = X; }
using_opt(A) ::= . { A = NULL; }
using_opt(A) ::= USING(T) JAR STRING(P). { A = MK(ctx, SQL_IDENT, T); A->s = STRVAL(ctx, P); }

/* ---- queries ------------------------------------------------------------ */

query(A) ::= WITH(T) ctelist(L) select_set(B) order_limit(O). { A = MK(ctx, SQL_WITH, T); ADD(ctx, A, L); ADD(ctx, A, B); if (O) { O->kids[0] = A; A = O; } }
query(A) ::= select_set(X) order_limit(O). { A = X; if (O) { O->kids[0] = X; A = O; } }

ctelist(A) ::= cte(X). { A = LIST1(ctx, X); }
ctelist(A) ::= ctelist(L) COMMA cte(X). { A = ADD(ctx, L, X); }
cte(A) ::= ident(X) AS LP query(Q) RP. { NAMEOK(ctx, X); A = NAT(ctx, SQL_CTE, X); A->s = X->s; ADD(ctx, A, Q); }

select_set(A) ::= select_int(X). { A = X; }
select_set(A) ::= select_set(L) UNION(T) ALL select_int(R). {
    A = MK(ctx, SQL_UNION, T); A->flags = SQL_F_ALL; ADD(ctx, A, L); ADD(ctx, A, R);
}
select_set(A) ::= select_set(L) UNION(T) setq_opt select_int(R). {
    A = MK(ctx, SQL_UNION, T); ADD(ctx, A, L); ADD(ctx, A, R);
}
/* EXCEPT binds like UNION, INTERSECT tighter (as in Calcite): s names them */
select_set(A) ::= select_set(L) EXCEPT(T) set_all(F) select_int(R). {
    A = MK(ctx, SQL_UNION, T); A->s = "EXCEPT"; A->flags = F; ADD(ctx, A, L); ADD(ctx, A, R);
}
select_int(A) ::= select_core(X). { A = X; }
select_int(A) ::= select_int(L) INTERSECT(T) set_all(F) select_core(R). {
    A = MK(ctx, SQL_UNION, T); A->s = "INTERSECT"; A->flags = F; ADD(ctx, A, L); ADD(ctx, A, R);
}
setq_opt ::= .
setq_opt ::= DISTINCT.
%type set_all {int}
set_all(A) ::= setq_opt. { A = 0; }
set_all(A) ::= ALL. { A = SQL_F_ALL; }

/* (query): a parenthesised branch of a set operation, e.g. (SELECT ...) UNION
 * (SELECT ... LIMIT 3); its ORDER BY / LIMIT stay inside */
select_core(A) ::= LP query(Q) RP. { A = Q; }
/* VALUES (1, 'a'), (2, 'b'): a LIST of rows, each a LIST of expressions */
select_core(A) ::= VALUES(T) values_rows(L). { A = MK(ctx, SQL_VALUES, T); ADD(ctx, A, L); }
values_rows(A) ::= values_row(X). { A = LIST1(ctx, X); }
values_rows(A) ::= values_rows(L) COMMA values_row(X). { A = ADD(ctx, L, X); }
values_row(A) ::= LP(T) exprlist(L) RP. { A = L; A->line = T.line; A->col = T.col; }
values_row(A) ::= ROW(T) LP exprlist(L) RP. { A = L; A->line = T.line; A->col = T.col; }

/* ORDER BY ... / LIMIT n / OFFSET m / FETCH FIRST n ROWS ONLY after a query:
 * an SQL_LIMIT node over it (kids[0] is set by the rule that uses it) */
order_limit(A) ::= . { A = NULL; }
order_limit(A) ::= ORDER(T) BY orderlist(O) limit_opt(L). {
    A = L;
    if (!A) { A = MK(ctx, SQL_LIMIT, T); for (int i = 0; i < 4; i++) ADD(ctx, A, NULL); }
    A->line = T.line; A->col = T.col; A->kids[1] = O;
}
order_limit(A) ::= limit(L). { A = L; }
limit_opt(A) ::= . { A = NULL; }
limit_opt(A) ::= limit(L). { A = L; }
limit(A) ::= LIMIT(T) expr(N). { A = MK(ctx, SQL_LIMIT, T); ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, N); ADD(ctx, A, NULL); }
limit(A) ::= LIMIT(T) expr(N) OFFSET expr(M) rows_opt. { A = MK(ctx, SQL_LIMIT, T); ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, N); ADD(ctx, A, M); }
limit(A) ::= OFFSET(T) expr(M) rows_opt. { A = MK(ctx, SQL_LIMIT, T); ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, M); }
limit(A) ::= OFFSET(T) expr(M) rows_opt FETCH first_next expr(N) row_rows ONLY. { A = MK(ctx, SQL_LIMIT, T); ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, N); ADD(ctx, A, M); }
limit(A) ::= FETCH(T) first_next expr(N) row_rows ONLY. { A = MK(ctx, SQL_LIMIT, T); ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, N); ADD(ctx, A, NULL); }
first_next ::= FIRST.
first_next ::= NEXT.
row_rows ::= ROW.
row_rows ::= ROWS.
rows_opt ::= .
rows_opt ::= row_rows.

select_core(A) ::= SELECT(T) hint_opt(HI) distinct_opt(D) selitems(I) from_opt(F) where_opt(W) group_opt(G) having_opt(H). {
    A = MK(ctx, SQL_SELECT, T);
    A->flags = D;
    ADD(ctx, A, I); ADD(ctx, A, F); ADD(ctx, A, W); ADD(ctx, A, G); ADD(ctx, A, H);
    if (HI) ADD(ctx, A, HI);
}

// Query hints after SELECT: the hint opener, NAME('k' = 'v', ...), ..., then star slash.
%type hint_opt {sql_node *}
hint_opt(A) ::= . { A = NULL; }
hint_opt(A) ::= HINT hints(L) STAR SLASH. { A = L; }
hints(A) ::= hint(X). { A = LIST1(ctx, X); }
hints(A) ::= hints(L) COMMA hint(X). { A = ADD(ctx, L, X); }
hint(A) ::= ident(N) LP hint_kvs(L) RP. { A = L; A->kind = SQL_IDENT; A->s = UPSTR(ctx, N->s); A->line = N->line; A->col = N->col; }
hint_kvs(A) ::= option(X). { A = LIST1(ctx, X); }
hint_kvs(A) ::= hint_kvs(L) COMMA option(X). { A = ADD(ctx, L, X); }

%type distinct_opt {int}
distinct_opt(A) ::= . { A = 0; }
distinct_opt(A) ::= ALL. { A = 0; }
distinct_opt(A) ::= DISTINCT. { A = SQL_F_DISTINCT; }

selitems(A) ::= selitem(X). { A = LIST1(ctx, X); }
selitems(A) ::= selitems(L) COMMA selitem(X). { A = ADD(ctx, L, X); }

selitem(A) ::= expr(E) alias_opt(AL). { A = NAT(ctx, SQL_ITEM, E); A->s = AL ? AL->s : NULL; ADD(ctx, A, E); }
selitem(A) ::= STAR(T). { A = MK(ctx, SQL_ITEM, T); ADD(ctx, A, MK(ctx, SQL_STAR, T)); }
selitem(A) ::= expr(Q) DOT STAR. {
    A = NAT(ctx, SQL_ITEM, Q); sql_node *s = NAT(ctx, SQL_STAR, Q); s->s = Q->s; ADD(ctx, A, s);
    if (Q->kind != SQL_COL || Q->s2) {
        if (!ctx->failed) sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: syntax error", Q->line, Q->col);
        ctx->failed = 1;
    } else NAMEOK(ctx, Q);
}

alias_opt(A) ::= . { A = NULL; }
alias_opt(A) ::= AS ident(X). { A = NAMEOK(ctx, X); }
alias_opt(A) ::= ident(X). { A = ALIASOK(ctx, X); }

from_opt(A) ::= . { A = NULL; }
from_opt(A) ::= FROM fromexpr(X). { A = X; }

fromexpr(A) ::= fromitem(X). { A = X; }
fromexpr(A) ::= fromexpr(L) join_kw(T) fromitem(R) ON expr(E). { A = NAT(ctx, SQL_FROM_JOIN, T); A->s = T->s; ADD(ctx, A, L); ADD(ctx, A, R); ADD(ctx, A, E); }
fromexpr(A) ::= fromexpr(L) COMMA(T) fromitem(R). { A = MK(ctx, SQL_FROM_JOIN, T); ADD(ctx, A, L); ADD(ctx, A, R); ADD(ctx, A, NULL); }

fromexpr(A) ::= fromexpr(L) CROSS(T) JOIN fromitem(R). { A = MK(ctx, SQL_FROM_JOIN, T); A->s = "CROSS"; ADD(ctx, A, L); ADD(ctx, A, R); ADD(ctx, A, NULL); }
/* a parenthesised join as a join's side: a ( b JOIN c ON ... ) ON ... (plan_subquery.c) */
fromitem(A) ::= LP fromexpr(L) join_kw(T) fromitem(R) ON expr(E) RP. { A = NAT(ctx, SQL_FROM_JOIN, T); A->s = T->s; ADD(ctx, A, L); ADD(ctx, A, R); ADD(ctx, A, E); }

join_kw(A) ::= JOIN(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, "INNER"); }
join_kw(A) ::= INNER(T) JOIN. { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, "INNER"); }
join_kw(A) ::= LEFT(T) outer_opt JOIN. { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, "LEFT"); }
join_kw(A) ::= RIGHT(T) outer_opt JOIN. { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, "RIGHT"); }
join_kw(A) ::= FULL(T) outer_opt JOIN. { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, "FULL"); }
outer_opt ::= .
outer_opt ::= OUTER.

fromitem(A) ::= name(X) alias_opt(AL). { A = NAT(ctx, SQL_FROM_TABLE, X); A->s = X->s; A->s2 = AL ? AL->s : NULL; }
/* t / *+ OPTIONS('k' = 'v') * / [AS a]: dynamic table options, kid [3] */
fromitem(A) ::= name(X) HINT hints(H) STAR SLASH alias_opt(AL). {
    A = NAT(ctx, SQL_FROM_TABLE, X); A->s = X->s; A->s2 = AL ? AL->s : NULL;
    ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, H);
}
fromitem(A) ::= name(X) FOR ident(S) AS ident(O) expr(E) alias_opt(AL). {
    A = NAT(ctx, SQL_FROM_TABLE, X); A->s = X->s; A->s2 = AL ? AL->s : NULL;
    ADD(ctx, A, E); ADD(ctx, A, S); ADD(ctx, A, O);
}
fromitem(A) ::= LP(T) query(Q) RP alias_opt(AL). { A = MK(ctx, SQL_FROM_QUERY, T); A->s2 = AL ? AL->s : NULL; ADD(ctx, A, Q); }
/* (query) AS t(a, b): the column names in kids[1] */
fromitem(A) ::= LP(T) query(Q) RP ident(AL) LP identlist(C) RP. { NAMEOK(ctx, AL); A = MK(ctx, SQL_FROM_QUERY, T); A->s2 = AL->s; ADD(ctx, A, Q); ADD(ctx, A, C); }
fromitem(A) ::= LP(T) query(Q) RP AS ident(AL) LP identlist(C) RP. { NAMEOK(ctx, AL); A = MK(ctx, SQL_FROM_QUERY, T); A->s2 = AL->s; ADD(ctx, A, Q); ADD(ctx, A, C); }
/* TABLE(TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(c), SIZE => ...)): the named
 * arguments, put in their places by TVFNAMED into the positional node */
fromitem(A) ::= TABLE LP ident(F) LP tvf_nargs(L) RP RP alias_opt(AL). { A = TVFNAMED(ctx, F, L, AL); }
tvf_nargs(A) ::= tvf_narg(X). { A = LIST1(ctx, X); }
tvf_nargs(A) ::= tvf_nargs(L) COMMA tvf_narg(X). { A = ADD(ctx, L, X); }
tvf_narg(A) ::= ident(N) ARROW TABLE name(X) partition_opt(P). {
    A = NAT(ctx, SQL_ITEM, N); A->s = N->s; A->s2 = "TABLE";
    sql_node *t = NAT(ctx, SQL_FROM_TABLE, X); t->s = X->s; ADD(ctx, A, t); ADD(ctx, A, P);
}
tvf_narg(A) ::= ident(N) ARROW DESCRIPTOR LP ident(C) RP. { A = NAT(ctx, SQL_ITEM, N); A->s = N->s; A->s2 = "DESCRIPTOR"; ADD(ctx, A, NAMEOK(ctx, C)); }
tvf_narg(A) ::= ident(N) ARROW expr(E). { A = NAT(ctx, SQL_ITEM, N); A->s = N->s; ADD(ctx, A, E); }
fromitem(A) ::= TABLE LP ident(F) LP TABLE name(X) partition_opt(P) COMMA DESCRIPTOR LP ident(C) RP COMMA exprlist(L) RP RP alias_opt(AL). {
    NAMEOK(ctx, C);
    A = NAT(ctx, SQL_FROM_TVF, F);
    A->s = F->s;
    A->s2 = AL ? AL->s : NULL;
    sql_node *t = NAT(ctx, SQL_FROM_TABLE, X);
    t->s = X->s;
    ADD(ctx, A, t); ADD(ctx, A, C); ADD(ctx, A, L); ADD(ctx, A, P);
}

/* FROM t MATCH_RECOGNIZE (...) [AS] m (sql/plan_match.c). SQL_FROM_MATCH kids:
 * [0] source, [1] PARTITION BY LIST or NULL, [2] ORDER BY LIST, [3] LIST of measure
 * ITEMs or NULL, [4] IDENT "ONE ROW PER MATCH" (the words as written) or NULL,
 * [5] IDENT skip ("PAST LAST ROW", "TO NEXT ROW", "TO FIRST", "TO LAST"; s2 the
 * variable) or NULL, [6] IDENT the pattern's text, [7] WITHIN expr or NULL,
 * [8] LIST of DEFINE ITEMs (s the variable). Its words other than
 * MATCH_RECOGNIZE are non-reserved and checked by the planner; the clauses
 * start with keywords (ONE, ALL, AFTER, PATTERN...), as lemon tries a keyword's
 * fallback to ID before a state's default reduction. */
fromitem(A) ::= name(X) MATCH_RECOGNIZE(T) LP mr_body(B) RP alias_opt(AL). {
    A = B; A->line = T.line; A->col = T.col; A->s2 = AL ? AL->s : NULL;
    sql_node *t = NAT(ctx, SQL_FROM_TABLE, X); t->s = X->s; A->kids[0] = t;
}
fromitem(A) ::= LP(P) query(Q) RP MATCH_RECOGNIZE(T) LP mr_body(B) RP alias_opt(AL). {
    A = B; A->line = T.line; A->col = T.col; A->s2 = AL ? AL->s : NULL;
    sql_node *f = MK(ctx, SQL_FROM_QUERY, P); ADD(ctx, f, Q); A->kids[0] = f;
}
mr_body(A) ::= mr_part(P) ORDER BY orderlist(O) mr_measures(M) mr_rows(R) mr_skip(K) LP mr_pat(X) RP mr_within(W) DEFINE mr_defs(D). {
    A = NAT(ctx, SQL_FROM_MATCH, K); ADD(ctx, A, NULL); ADD(ctx, A, P); ADD(ctx, A, O); ADD(ctx, A, M); ADD(ctx, A, R); ADD(ctx, A, K->kids[0]);
    sql_node *pn = NAT(ctx, SQL_IDENT, K); pn->s = X->s; ADD(ctx, A, pn); ADD(ctx, A, W); ADD(ctx, A, D);
}
mr_part(A) ::= . { A = NULL; }
mr_part(A) ::= PARTITION BY exprlist(L). { A = L; }
mr_measures(A) ::= . { A = NULL; }
mr_measures(A) ::= MEASURES mr_items(L). { A = L; }
mr_items(A) ::= mr_item(X). { A = LIST1(ctx, X); }
mr_items(A) ::= mr_items(L) COMMA mr_item(X). { A = ADD(ctx, L, X); }
mr_item(A) ::= expr(E) AS ident(X). { A = NAT(ctx, SQL_ITEM, E); A->s = X->s; ADD(ctx, A, E); }
mr_rows(A) ::= . { A = NULL; }
mr_rows(A) ::= ONE(T) ident(R) PER ident(M). { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, CAT(ctx, "ONE ", CAT(ctx, CAT(ctx, R->s, " PER "), M->s))); }
mr_rows(A) ::= ALL(T) ident(R) PER ident(M). { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, CAT(ctx, "ALL ", CAT(ctx, CAT(ctx, R->s, " PER "), M->s))); }
/* mr_skip: [AFTER MATCH SKIP ...] PATTERN, one node at PATTERN whose kid is the
 * skip IDENT or NULL. PATTERN is in each rule so that after `SKIP TO v` it is
 * shifted, not taken as a further identifier through its fallback to ID. */
mr_skip(A) ::= PATTERN(PT). { A = MK(ctx, SQL_IDENT, PT); A->s = "PATTERN"; ADD(ctx, A, NULL); }
mr_skip(A) ::= mr_after(X) PATTERN(PT). { A = MK(ctx, SQL_IDENT, PT); A->s = "PATTERN"; ADD(ctx, A, X); }
mr_skip(A) ::= mr_after_to(X) ident(V) PATTERN(PT). { A = MK(ctx, SQL_IDENT, PT); A->s = "PATTERN"; ADD(ctx, A, X); if (strcmp(X->s, "?")) X->s = "TO LAST"; X->s2 = V->s; } /* SKIP TO v: TO LAST v */
mr_skip(A) ::= mr_after_to(X) ident(W) ident(V) PATTERN(PT). {
    A = MK(ctx, SQL_IDENT, PT); A->s = "PATTERN"; ADD(ctx, A, X); X->s2 = V->s;
    if (!strcmp(X->s, "?")) {} else if (!strcasecmp(W->s, "NEXT") && !strcasecmp(V->s, "ROW")) { X->s = "TO NEXT ROW"; X->s2 = NULL; } else X->s = UPSTR(ctx, CAT(ctx, "TO ", W->s));
}
mr_after(A) ::= AFTER(T) ident(M) SKIP ident(P) ident(L) ident(R). { A = MK(ctx, SQL_IDENT, T); A->s = UPSTR(ctx, CAT(ctx, CAT(ctx, P->s, " "), CAT(ctx, CAT(ctx, L->s, " "), R->s))); if (strcasecmp(M->s, "MATCH")) A->s = "?"; }
mr_after_to(A) ::= AFTER(T) ident(M) SKIP TO. { A = MK(ctx, SQL_IDENT, T); A->s = strcasecmp(M->s, "MATCH") ? "?" : "TO"; }
%type mr_pat {sql_node *}
mr_pat(A) ::= mr_seq(X). { A = X; }
mr_pat(A) ::= mr_pat(L) PIPE mr_seq(R). { A = L; A->s = CAT(ctx, L->s, CAT(ctx, " | ", R->s)); }
mr_seq(A) ::= mr_fac(X). { A = X; }
mr_seq(A) ::= mr_seq(L) mr_fac(R). { A = L; A->s = CAT(ctx, L->s, CAT(ctx, " ", R->s)); }
mr_fac(A) ::= mr_prim(X) mr_quant(Q). { A = X; A->s = CAT(ctx, X->s, Q->s); }
mr_prim(A) ::= ident(X). { A = X; A->s = X->s; }
mr_prim(A) ::= LP(T) mr_pat(X) RP. { A = MK(ctx, SQL_IDENT, T); A->s = CAT(ctx, "(", CAT(ctx, X->s, ")")); }
mr_quant(A) ::= . { A = NAT(ctx, SQL_IDENT, NULL); A->s = ""; }
mr_quant(A) ::= mr_q(Q). { A = Q; }
mr_quant(A) ::= mr_q(Q) QMARK. { A = Q; A->s = CAT(ctx, Q->s, "?"); }
mr_q(A) ::= STAR(T). { A = MK(ctx, SQL_IDENT, T); A->s = "*"; }
mr_q(A) ::= PLUS(T). { A = MK(ctx, SQL_IDENT, T); A->s = "+"; }
mr_q(A) ::= QMARK(T). { A = MK(ctx, SQL_IDENT, T); A->s = "?"; }
mr_q(A) ::= LBRACE(T) INTEGER(N) RBRACE. { A = MK(ctx, SQL_IDENT, T); A->s = CAT(ctx, CAT(ctx, "{", TXT(ctx, N)), "}"); }
mr_q(A) ::= LBRACE(T) INTEGER(N) COMMA RBRACE. { A = MK(ctx, SQL_IDENT, T); A->s = CAT(ctx, CAT(ctx, "{", TXT(ctx, N)), ",}"); }
mr_q(A) ::= LBRACE(T) INTEGER(N) COMMA INTEGER(M) RBRACE. { A = MK(ctx, SQL_IDENT, T); A->s = CAT(ctx, CAT(ctx, CAT(ctx, "{", TXT(ctx, N)), CAT(ctx, ",", TXT(ctx, M))), "}"); }
mr_q(A) ::= LBRACE(T) COMMA INTEGER(M) RBRACE. { A = MK(ctx, SQL_IDENT, T); A->s = CAT(ctx, CAT(ctx, "{,", TXT(ctx, M)), "}"); }
mr_within(A) ::= . { A = NULL; }
mr_within(A) ::= WITHIN expr(E). { A = E; }
mr_defs(A) ::= mr_def(X). { A = LIST1(ctx, X); }
mr_defs(A) ::= mr_defs(L) COMMA mr_def(X). { A = ADD(ctx, L, X); }
mr_def(A) ::= ident(V) AS expr(E). { A = NAT(ctx, SQL_ITEM, V); A->s = V->s; ADD(ctx, A, E); }

/* LATERAL (query) [[AS] t [(a, b)]]: a correlated subquery of FROM (sql/plan_subquery.c) */
fromitem(A) ::= LATERAL(T) LP query(Q) RP alias_opt(AL). { A = MK(ctx, SQL_FROM_QUERY, T); A->flags = SQL_F_LATERAL; A->s2 = AL ? AL->s : NULL; ADD(ctx, A, Q); }
fromitem(A) ::= LATERAL(T) LP query(Q) RP ident(AL) LP identlist(C) RP. { NAMEOK(ctx, AL); A = MK(ctx, SQL_FROM_QUERY, T); A->flags = SQL_F_LATERAL; A->s2 = AL->s; ADD(ctx, A, Q); ADD(ctx, A, C); }
fromitem(A) ::= LATERAL(T) LP query(Q) RP AS ident(AL) LP identlist(C) RP. { NAMEOK(ctx, AL); A = MK(ctx, SQL_FROM_QUERY, T); A->flags = SQL_F_LATERAL; A->s2 = AL->s; ADD(ctx, A, Q); ADD(ctx, A, C); }
/* LATERAL TABLE(f(x)) [[AS] t(a, b)]: a table function's rows per row of the left side */
fromitem(A) ::= LATERAL(T) TABLE LP expr(E) RP alias_opt(AL). { A = MK(ctx, SQL_FROM_LATERAL, T); A->s2 = AL ? AL->s : NULL; ADD(ctx, A, E); ADD(ctx, A, NULL); }
fromitem(A) ::= LATERAL(T) TABLE LP expr(E) RP ident(AL) LP identlist(C) RP. { A = MK(ctx, SQL_FROM_LATERAL, T); A->s2 = AL->s; ADD(ctx, A, E); ADD(ctx, A, C); }
fromitem(A) ::= LATERAL(T) TABLE LP expr(E) RP AS ident(AL) LP identlist(C) RP. { A = MK(ctx, SQL_FROM_LATERAL, T); A->s2 = AL->s; ADD(ctx, A, E); ADD(ctx, A, C); }

/* UNNEST(a [, b ...]) [WITH ORDINALITY] [[AS] t(x, y)]: the elements of arrays, maps and
 * multisets of each row of the left side, as rows (sql/plan_lateral.c) */
%type unnest_ord {sql_node *}
unnest_ord(A) ::= . { A = NULL; }
unnest_ord(A) ::= WITH ident(O). { A = O; }
fromitem(A) ::= UNNEST(T) LP exprlist(L) RP unnest_ord(O) alias_opt(AL). { A = MK(ctx, SQL_FROM_UNNEST, T); A->s2 = AL ? AL->s : NULL; ADD(ctx, A, L); ADD(ctx, A, NULL); ADD(ctx, A, O); }
fromitem(A) ::= UNNEST(T) LP exprlist(L) RP unnest_ord(O) ident(AL) LP identlist(C) RP. { A = MK(ctx, SQL_FROM_UNNEST, T); A->s2 = ALIASOK(ctx, AL)->s; ADD(ctx, A, L); ADD(ctx, A, C); ADD(ctx, A, O); }
fromitem(A) ::= UNNEST(T) LP exprlist(L) RP unnest_ord(O) AS ident(AL) LP identlist(C) RP. { A = MK(ctx, SQL_FROM_UNNEST, T); A->s2 = NAMEOK(ctx, AL)->s; ADD(ctx, A, L); ADD(ctx, A, C); ADD(ctx, A, O); }

partition_opt(A) ::= . { A = NULL; }
partition_opt(A) ::= PARTITION BY ident(X). { A = LIST1(ctx, NAMEOK(ctx, X)); }
partition_opt(A) ::= PARTITION BY LP identlist(L) RP. { A = L; }

where_opt(A) ::= . { A = NULL; }
where_opt(A) ::= WHERE expr(E). { A = E; }

group_opt(A) ::= . { A = NULL; }
group_opt(A) ::= GROUP BY groupitems(L). { A = L; }

/* GROUP BY's items: expressions and the grouping-set forms (SQL_GSETS, ast.h),
 * nested as Flink nests them; sql/plan_gsets.c expands them into the sets. */
groupitems(A) ::= groupitem(X). { A = LIST1(ctx, X); }
groupitems(A) ::= groupitems(L) COMMA groupitem(X). { A = ADD(ctx, L, X); }
groupitem(A) ::= expr(X). { A = X; }
groupitem(A) ::= LP(T) RP. { A = MK(ctx, SQL_GSETS, T); A->s = "()"; }
groupitem(A) ::= GROUPING(T) SETS LP groupitems(L) RP. { A = MK(ctx, SQL_GSETS, T); A->s = "GROUPING SETS"; for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
groupitem(A) ::= ROLLUP(T) LP exprlist(L) RP. { A = MK(ctx, SQL_GSETS, T); A->s = "ROLLUP"; for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
groupitem(A) ::= CUBE(T) LP exprlist(L) RP. { A = MK(ctx, SQL_GSETS, T); A->s = "CUBE"; for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }

having_opt(A) ::= . { A = NULL; }
having_opt(A) ::= HAVING expr(E). { A = E; }

/* ---- expressions -------------------------------------------------------- */

exprlist(A) ::= expr(X). [COMMA] { A = LIST1(ctx, X); }
exprlist(A) ::= exprlist(L) COMMA expr(X). { A = ADD(ctx, L, X); }

expr(A) ::= ident(X). { COLOK(ctx, X); A = NAT(ctx, SQL_COL, X); A->s = X->s; A->flags = X->flags; }
/* a.b: a column b of table a (the SQL_COL form) or the field b of a ROW column a -- the
 * planner decides (sql/planner.c, fold_field); x.b of anything else, and a.b.c, are field
 * accesses (SQL_FIELD). x[i]: an ARRAY's element or a MAP's value (SQL_ELEMENT);
 * MAP[k, v, ...] and ARRAY[...] construct (SQL_CTOR); ROW(...) is a call. */
expr(A) ::= expr(Q) DOT ident(X). {
    NAMEOK(ctx, X);
    if (Q->kind == SQL_COL && !Q->s2) { NAMEOK(ctx, Q); A = Q; A->s2 = A->s; A->s = X->s; A->flags = X->flags; }
    else { A = NAT(ctx, SQL_FIELD, Q); A->oline = X->line; A->ocol = X->col; A->s = X->s; ADD(ctx, A, Q); }
}
expr(A) ::= expr(X) LBRACKET(T) exprlist(L) RBRACKET. {
    if (X->kind == SQL_COL && !X->s2 && !(X->flags & SQL_F_QUOTED) && !strcasecmp(X->s, "MAP")) {
        A = NAT(ctx, SQL_CTOR, X); A->s = "MAP";
        for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
    } else {
        A = OPAT(NAT(ctx, SQL_ELEMENT, X), T); ADD(ctx, A, X); ADD(ctx, A, L->kids[0]);
        if (L->nkids != 1 && !ctx->failed) {
            ctx->failed = 1;
            sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: an element access takes one index "
                      "(arr[1], m['k'])", T.line, T.col);
        }
    }
}
/* (a, b, ...): Flink's implicit ROW constructor (two fields or more) */
expr(A) ::= LP(T) expr(X) COMMA exprlist(L) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "ROW"; ADD(ctx, A, X); for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
expr(A) ::= ARRAY(T) LBRACKET exprlist(L) RBRACKET. { A = MK(ctx, SQL_CTOR, T); A->s = "ARRAY"; for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
/* DATE '2026-01-01' (DATE is no keyword of Sluice's: a name before a string) */
expr(A) ::= ID(T) STRING(V). {
    A = OPAT(MK(ctx, SQL_TS_LIT, T), V); A->s = STRVAL(ctx, V); A->s2 = "DATE";
    if (T.n != 4 || strncasecmp(T.z, "DATE", 4)) {
        if (!ctx->failed) sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: syntax error", V.line, V.col);
        ctx->failed = 1;
    }
}
expr(A) ::= INTEGER(T). { A = MK(ctx, SQL_NUM, T); A->s = TXT(ctx, T); }
expr(A) ::= DECIMAL(T). { A = MK(ctx, SQL_NUM, T); A->s = TXT(ctx, T); }
expr(A) ::= STRING(T). { A = MK(ctx, SQL_STR, T); A->s = STRVAL(ctx, T); }
expr(A) ::= TRUE(T). { A = MK(ctx, SQL_BOOL, T); A->flags = SQL_F_TRUE; }
expr(A) ::= FALSE(T). { A = MK(ctx, SQL_BOOL, T); }
expr(A) ::= NULL(T). { A = MK(ctx, SQL_NULL, T); }
expr(A) ::= INTERVAL(T) STRING(V) iv_unit(U). { A = OPAT(MK(ctx, SQL_INTERVAL, T), V); A->s = STRVAL(ctx, V); A->s2 = U->s; ADD(ctx, A, U); }
expr(A) ::= TIMESTAMP(T) STRING(V). { A = OPAT(MK(ctx, SQL_TS_LIT, T), V); A->s = STRVAL(ctx, V); }
expr(A) ::= TIME(T) STRING(V). { A = OPAT(MK(ctx, SQL_TS_LIT, T), V); A->s = STRVAL(ctx, V); A->s2 = "TIME"; }
expr(A) ::= LP expr(X) RP. { A = X; }
/* (d1 - d2) DAY, (t1 - t2) HOUR TO SECOND: the difference of two datetimes as
 * an interval (Calcite's form): a BINOP "-" whose s2 is the qualifier's text and
 * kid [2] the qualifier's LIST (as iv_unit's). Only the keyword units: a name
 * after a parenthesized select item is its alias. */
expr(A) ::= LP(T) expr(X) RP dq(U). {
    A = MK(ctx, SQL_BINOP, T); A->s = "-"; A->s2 = U->s;
    if (X->kind == SQL_BINOP && !strcmp(X->s, "-") && X->nkids == 2) {
        A->oline = X->oline; A->ocol = X->ocol; ADD(ctx, A, X->kids[0]); ADD(ctx, A, X->kids[1]);
    } else if (!ctx->failed) {
        ctx->failed = 1;
        sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: an interval qualifier after '( ... )' "
                  "needs the difference of two datetimes: (d1 - d2) %s", T.line, T.col, U->s);
    }
    ADD(ctx, A, U);
}
dq(A) ::= dq_unit(U). [COMMA] { A = LIST1(ctx, U); A->s = U->s; }
dq(A) ::= dq_unit(U) TO dq_unit(V). { A = LIST1(ctx, U); ADD(ctx, A, V); A->s = CAT(ctx, CAT(ctx, U->s, " TO "), V->s); }
dq_unit(A) ::= SECOND(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
dq_unit(A) ::= MINUTE(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
dq_unit(A) ::= HOUR(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
dq_unit(A) ::= DAY(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
dq_unit(A) ::= MONTH(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
dq_unit(A) ::= YEAR(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
/* TIMESTAMP WITH LOCAL TIME ZONE '2026-01-01 10:00:00': the wall-clock time in the
 * session time zone, as an instant (Flink 2.3 takes this literal, not TIMESTAMP_LTZ '...') */
expr(A) ::= TIMESTAMP(T) WITH LOCAL TIME ZONE STRING(V). { A = OPAT(MK(ctx, SQL_TS_LIT, T), V); A->s = STRVAL(ctx, V); A->s2 = "TIMESTAMP WITH LOCAL TIME ZONE"; }
expr(A) ::= MINUS(T) expr(X). [UMINUS] { A = MK(ctx, SQL_UNOP, T); A->s = "-"; ADD(ctx, A, X); }
expr(A) ::= PLUS(T) expr(X). [UMINUS] { A = MK(ctx, SQL_UNOP, T); A->s = "+"; ADD(ctx, A, X); }
expr(A) ::= NOT(T) expr(X). { A = MK(ctx, SQL_UNOP, T); A->s = "NOT"; ADD(ctx, A, X); }
expr(A) ::= expr(X) OR(T) expr(Y). { A = BIN(ctx, X, "OR", T, Y); }
expr(A) ::= expr(X) AND(T) expr(Y). { A = BIN(ctx, X, "AND", T, Y); }
expr(A) ::= expr(X) EQ(T) expr(Y). { A = BIN(ctx, X, "=", T, Y); }
expr(A) ::= expr(X) NE(T) expr(Y). { A = BIN(ctx, X, "<>", T, Y); }
expr(A) ::= expr(X) LT(T) expr(Y). { A = BIN(ctx, X, "<", T, Y); }
expr(A) ::= expr(X) LE(T) expr(Y). { A = BIN(ctx, X, "<=", T, Y); }
expr(A) ::= expr(X) GT(T) expr(Y). { A = BIN(ctx, X, ">", T, Y); }
expr(A) ::= expr(X) GE(T) expr(Y). { A = BIN(ctx, X, ">=", T, Y); }
expr(A) ::= expr(X) PLUS(T) expr(Y). { A = BIN(ctx, X, "+", T, Y); }
expr(A) ::= expr(X) MINUS(T) expr(Y). { A = BIN(ctx, X, "-", T, Y); }
expr(A) ::= expr(X) STAR(T) expr(Y). { A = BIN(ctx, X, "*", T, Y); }
expr(A) ::= expr(X) SLASH(T) expr(Y). { A = BIN(ctx, X, "/", T, Y); }
expr(A) ::= expr(X) PERCENT(T) expr(Y). { A = BIN(ctx, X, "%", T, Y); }
expr(A) ::= expr(X) CONCAT(T) expr(Y). { A = BIN(ctx, X, "||", T, Y); }
expr(A) ::= expr(X) IS(T) NULL. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "NULL"; ADD(ctx, A, X); }
expr(A) ::= expr(X) IS(T) NOT NULL. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "NULL"; A->flags = SQL_F_NOT; ADD(ctx, A, X); }
expr(A) ::= expr(X) IS(T) TRUE. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "TRUE"; ADD(ctx, A, X); }
expr(A) ::= expr(X) IS(T) NOT TRUE. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "TRUE"; A->flags = SQL_F_NOT; ADD(ctx, A, X); }
expr(A) ::= expr(X) IS(T) FALSE. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "FALSE"; ADD(ctx, A, X); }
expr(A) ::= expr(X) IS(T) NOT FALSE. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "FALSE"; A->flags = SQL_F_NOT; ADD(ctx, A, X); }
expr(A) ::= expr(X) BETWEEN(T) expr(L) AND expr(H). [BETWEEN] {
    A = OPAT(NAT(ctx, SQL_BETWEEN, X), T); ADD(ctx, A, X); ADD(ctx, A, L); ADD(ctx, A, H);
}
expr(A) ::= expr(X) NOT BETWEEN(T) expr(L) AND expr(H). [BETWEEN] {
    A = OPAT(NAT(ctx, SQL_BETWEEN, X), T); A->flags = SQL_F_NOT; ADD(ctx, A, X); ADD(ctx, A, L); ADD(ctx, A, H);
}
expr(A) ::= expr(X) IS(T) UNKNOWN. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "UNKNOWN"; ADD(ctx, A, X); }
expr(A) ::= expr(X) IS(T) NOT UNKNOWN. { A = OPAT(NAT(ctx, SQL_IS, X), T); A->s = "UNKNOWN"; A->flags = SQL_F_NOT; ADD(ctx, A, X); }
expr(A) ::= expr(X) IN(T) LP exprlist(L) RP. { A = OPAT(NAT(ctx, SQL_IN, X), T); ADD(ctx, A, X); ADD(ctx, A, L); }
expr(A) ::= expr(X) NOT IN(T) LP exprlist(L) RP. [IN] { A = OPAT(NAT(ctx, SQL_IN, X), T); A->flags = SQL_F_NOT; ADD(ctx, A, X); ADD(ctx, A, L); }
/* subqueries (sql/plan_subquery.c): x [NOT] IN (query), [NOT] EXISTS (query), (query) */
expr(A) ::= expr(X) IN(T) LP query(Q) RP. { A = OPAT(NAT(ctx, SQL_SUBQUERY, X), T); A->s = "IN"; ADD(ctx, A, X); ADD(ctx, A, Q); }
expr(A) ::= expr(X) NOT IN(T) LP query(Q) RP. [IN] { A = OPAT(NAT(ctx, SQL_SUBQUERY, X), T); A->s = "IN"; A->flags = SQL_F_NOT; ADD(ctx, A, X); ADD(ctx, A, Q); }
expr(A) ::= EXISTS(T) LP query(Q) RP. { A = MK(ctx, SQL_SUBQUERY, T); A->s = "EXISTS"; ADD(ctx, A, NULL); ADD(ctx, A, Q); }
expr(A) ::= LP(T) query(Q) RP. [COMMA] { A = MK(ctx, SQL_SUBQUERY, T); A->s = "SCALAR"; ADD(ctx, A, NULL); ADD(ctx, A, Q); }
expr(A) ::= expr(X) LIKE(T) expr(P). { A = OPAT(NAT(ctx, SQL_LIKE, X), T); ADD(ctx, A, X); ADD(ctx, A, P); }
expr(A) ::= expr(X) NOT LIKE(T) expr(P). [LIKE] { A = OPAT(NAT(ctx, SQL_LIKE, X), T); A->flags = SQL_F_NOT; ADD(ctx, A, X); ADD(ctx, A, P); }
expr(A) ::= expr(X) LIKE(T) expr(P) ESCAPE expr(E). [LIKE] { A = OPAT(NAT(ctx, SQL_LIKE, X), T); ADD(ctx, A, X); ADD(ctx, A, P); ADD(ctx, A, E); }
expr(A) ::= expr(X) NOT LIKE(T) expr(P) ESCAPE expr(E). [LIKE] { A = OPAT(NAT(ctx, SQL_LIKE, X), T); A->flags = SQL_F_NOT; ADD(ctx, A, X); ADD(ctx, A, P); ADD(ctx, A, E); }
/* x [NOT] SIMILAR TO p [ESCAPE e]: an SQL_LIKE named "SIMILAR TO" in s;
 * a IS [NOT] DISTINCT FROM b: a binary operator of that name */
expr(A) ::= expr(X) SIMILAR(T) TO expr(P). [SIMILAR] { A = OPAT(NAT(ctx, SQL_LIKE, X), T); A->s = "SIMILAR TO"; ADD(ctx, A, X); ADD(ctx, A, P); }
expr(A) ::= expr(X) NOT SIMILAR(T) TO expr(P). [SIMILAR] { A = OPAT(NAT(ctx, SQL_LIKE, X), T); A->s = "SIMILAR TO"; A->flags = SQL_F_NOT; ADD(ctx, A, X); ADD(ctx, A, P); }
expr(A) ::= expr(X) SIMILAR(T) TO expr(P) ESCAPE expr(E). [SIMILAR] { A = OPAT(NAT(ctx, SQL_LIKE, X), T); A->s = "SIMILAR TO"; ADD(ctx, A, X); ADD(ctx, A, P); ADD(ctx, A, E); }
expr(A) ::= expr(X) NOT SIMILAR(T) TO expr(P) ESCAPE expr(E). [SIMILAR] { A = OPAT(NAT(ctx, SQL_LIKE, X), T); A->s = "SIMILAR TO"; A->flags = SQL_F_NOT; ADD(ctx, A, X); ADD(ctx, A, P); ADD(ctx, A, E); }
expr(A) ::= expr(X) IS(T) DISTINCT FROM expr(Y). [IS] { A = BIN(ctx, X, "IS DISTINCT FROM", T, Y); }
expr(A) ::= expr(X) IS(T) NOT DISTINCT FROM expr(Y). [IS] { A = BIN(ctx, X, "IS NOT DISTINCT FROM", T, Y); }
/* LEFT(s, n) and RIGHT(s, n): the join words as function names */
/* The JSON functions (lang/expr_json.c): the clause forms become calls of internal entries */
expr(A) ::= expr(X) IS(T) JSON. [IS] { A = OPAT(MK(ctx, SQL_FUNC, T), T); A->s = "SL_IS_JSON"; ADD(ctx, A, X); ADD(ctx, A, LIT(ctx, X, "VALUE")); }
expr(A) ::= expr(X) IS(T) JSON jkind(K). [IS] { A = OPAT(MK(ctx, SQL_FUNC, T), T); A->s = "SL_IS_JSON"; ADD(ctx, A, X); ADD(ctx, A, LIT(ctx, X, K)); }
expr(A) ::= expr(X) IS(T) NOT JSON. [IS] { sql_node *f = MK(ctx, SQL_FUNC, T); f->s = "SL_IS_JSON"; ADD(ctx, f, X); ADD(ctx, f, LIT(ctx, X, "VALUE")); A = MK(ctx, SQL_UNOP, T); A->s = "NOT"; ADD(ctx, A, f); }
expr(A) ::= expr(X) IS(T) NOT JSON jkind(K). [IS] { sql_node *f = MK(ctx, SQL_FUNC, T); f->s = "SL_IS_JSON"; ADD(ctx, f, X); ADD(ctx, f, LIT(ctx, X, K)); A = MK(ctx, SQL_UNOP, T); A->s = "NOT"; ADD(ctx, A, f); }
%type jkind {const char *}
jkind(A) ::= VALUE. { A = "VALUE"; }
jkind(A) ::= SCALAR. { A = "SCALAR"; }
jkind(A) ::= ARRAY. { A = "ARRAY"; }
jkind(A) ::= OBJECT. { A = "OBJECT"; }

expr(A) ::= JSON_VALUE(T) LP expr(X) COMMA expr(P) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "JSON_VALUE"; ADD(ctx, A, X); ADD(ctx, A, P); }
expr(A) ::= JSON_VALUE(T) LP expr(X) COMMA expr(P) jv_cls(C) RP. { A = JCALL(ctx, T, "SL_JSON_VALUE", X, P, C); }
expr(A) ::= JSON_QUERY(T) LP expr(X) COMMA expr(P) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "JSON_QUERY"; ADD(ctx, A, X); ADD(ctx, A, P); }
expr(A) ::= JSON_QUERY(T) LP expr(X) COMMA expr(P) jq_cls(C) RP. { A = JCALL(ctx, T, "SL_JSON_QUERY", X, P, C); }
expr(A) ::= JSON_EXISTS(T) LP expr(X) COMMA expr(P) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "JSON_EXISTS"; ADD(ctx, A, X); ADD(ctx, A, P); }
expr(A) ::= JSON_EXISTS(T) LP expr(X) COMMA expr(P) je_cls(C) RP. { A = JCALL(ctx, T, "SL_JSON_EXISTS", X, P, C); }
%type jv_cls {sql_node *}
%type jv_cl {sql_node *}
jv_cls(A) ::= jv_cl(X). { A = LIST1(ctx, X); }
jv_cls(A) ::= jv_cls(L) jv_cl(X). { A = ADD(ctx, L, X); }
jv_cl(A) ::= RETURNING(T) typename(Y). { A = MK(ctx, SQL_IDENT, T); A->s = "RETURNING"; A->s2 = Y->s; }
jv_cl(A) ::= NULL(T) ON ident(W). { A = JCL(ctx, W, "NULL", W, NULL); (void)T; }
jv_cl(A) ::= ident(M) ON ident(W). { if (!WORDIS(M, "ERROR")) WORDERR(ctx, M, "NULL, ERROR or DEFAULT"); A = JCL(ctx, M, "ERROR", W, NULL); }
jv_cl(A) ::= ident(M) expr(D) ON ident(W). { if (!WORDIS(M, "DEFAULT")) WORDERR(ctx, M, "DEFAULT"); A = JCL(ctx, M, "DEFAULT", W, D); }
%type jq_cls {sql_node *}
%type jq_cl {sql_node *}
%type jq_words {char *}
jq_cls(A) ::= jq_cl(X). { A = LIST1(ctx, X); }
jq_cls(A) ::= jq_cls(L) jq_cl(X). { A = ADD(ctx, L, X); }
jq_cl(A) ::= WITH(T) WRAPPER. { A = MK(ctx, SQL_IDENT, T); A->s = "WRAPPER"; A->s2 = "UNCONDITIONAL"; }
jq_cl(A) ::= WITH(T) jq_words(W) WRAPPER. { A = MK(ctx, SQL_IDENT, T); A->s = "WRAPPER"; A->s2 = "UNCONDITIONAL"; if (!strcasecmp(W, "CONDITIONAL") || !strcasecmp(W, "CONDITIONAL ARRAY")) A->s2 = "CONDITIONAL"; else if (strcasecmp(W, "UNCONDITIONAL") && strcasecmp(W, "UNCONDITIONAL ARRAY") && strcasecmp(W, "ARRAY")) WORDERR(ctx, A, "WITH [CONDITIONAL | UNCONDITIONAL] [ARRAY] WRAPPER"); }
jq_cl(A) ::= WITHOUT(T) WRAPPER. { A = MK(ctx, SQL_IDENT, T); A->s = "WRAPPER"; A->s2 = "WITHOUT"; }
jq_cl(A) ::= WITHOUT(T) jq_words(W) WRAPPER. { A = MK(ctx, SQL_IDENT, T); A->s = "WRAPPER"; A->s2 = "WITHOUT"; if (strcasecmp(W, "ARRAY")) WORDERR(ctx, A, "WITHOUT [ARRAY] WRAPPER"); }
jq_cl(A) ::= NULL(T) ON ident(W). { A = JCL(ctx, W, "NULL", W, NULL); (void)T; }
jq_cl(A) ::= jq_words(M) ON ident(W). {
    const char *m = !strcasecmp(M, "ERROR") ? "ERROR" : !strcasecmp(M, "EMPTY ARRAY") ? "EMPTY ARRAY" : !strcasecmp(M, "EMPTY OBJECT") ? "EMPTY OBJECT" : NULL;
    A = JCL(ctx, W, m ? m : "NULL", W, NULL);
    if (!m) { sql_node *x = NAT(ctx, SQL_IDENT, W); x->s = M; WORDERR(ctx, x, "NULL, ERROR, EMPTY ARRAY or EMPTY OBJECT before ON"); }
}
jq_words(A) ::= ident(X). { A = X->s; }
jq_words(A) ::= jq_words(L) ident(X). { A = CAT(ctx, CAT(ctx, L, " "), X->s); }
%type je_cl {sql_node *}
je_cl(A) ::= TRUE(T) ON ident(W). { A = JCL(ctx, W, "TRUE", W, NULL); (void)T; }
je_cl(A) ::= FALSE(T) ON ident(W). { A = JCL(ctx, W, "FALSE", W, NULL); (void)T; }
je_cl(A) ::= UNKNOWN(T) ON ident(W). { A = JCL(ctx, W, "UNKNOWN", W, NULL); (void)T; }
je_cl(A) ::= ident(M) ON ident(W). { if (!WORDIS(M, "ERROR")) WORDERR(ctx, M, "TRUE, FALSE, UNKNOWN or ERROR"); A = JCL(ctx, M, "ERROR", W, NULL); }
%type je_cls {sql_node *}
je_cls(A) ::= je_cl(X). { A = LIST1(ctx, X); }

expr(A) ::= JSON_OBJECT(T) LP RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_OBJECT"; ADD(ctx, A, LIT(ctx, A, "NULL")); }
expr(A) ::= JSON_OBJECT(T) LP jnull(N) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_OBJECT"; ADD(ctx, A, LIT(ctx, A, N)); }
expr(A) ::= JSON_OBJECT(T) LP jo_items(L) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_OBJECT"; ADD(ctx, A, LIT(ctx, A, "NULL")); for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
expr(A) ::= JSON_OBJECT(T) LP jo_items(L) jnull(N) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_OBJECT"; ADD(ctx, A, LIT(ctx, A, N)); for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
expr(A) ::= JSON_ARRAY(T) LP RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_ARRAY"; ADD(ctx, A, LIT(ctx, A, "ABSENT")); }
expr(A) ::= JSON_ARRAY(T) LP jnull(N) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_ARRAY"; ADD(ctx, A, LIT(ctx, A, N)); }
expr(A) ::= JSON_ARRAY(T) LP exprlist(L) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_ARRAY"; ADD(ctx, A, LIT(ctx, A, "ABSENT")); for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
expr(A) ::= JSON_ARRAY(T) LP exprlist(L) jnull(N) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "SL_JSON_ARRAY"; ADD(ctx, A, LIT(ctx, A, N)); for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
%type jnull {const char *}
jnull(A) ::= NULL ON NULL. { A = "NULL"; }
jnull(A) ::= ident(X) ON NULL. { A = "ABSENT"; if (!WORDIS(X, "ABSENT")) WORDERR(ctx, X, "NULL ON NULL or ABSENT ON NULL"); }
/* JSON_ARRAYAGG(x [NULL | ABSENT] ON NULL), JSON_OBJECTAGG([KEY] k VALUE v [... ON NULL]):
 * a call of the aggregate, the clause in s2 (sql/planner.c) */
%type jagg {sql_node *}
expr(A) ::= jagg(X). { A = X; }
expr(A) ::= jagg(X) FILTER LP WHERE expr(C) RP. { A = X; A->flags |= SQL_F_FILTER; ADD(ctx, A, C); }
/* Flink's grammar has no OVER after a JSON aggregate: its parser's words */
expr(A) ::= jagg(X) OVER(V) over_win(W). {
    A = X;
    (void)W;
    if (!ctx->failed) {
        ctx->failed = 1;
        sl_seterr(ctx->err, ctx->errlen, "line %d, column %d: SQL parse failed. Incorrect syntax "
                  "near the keyword 'OVER'", V.line, V.col);
    }
}
jagg(A) ::= ident(F) LP expr(X) jnull(N) RP. { A = JAGG(ctx, F, X, NULL, N, 0); }
jagg(A) ::= ident(F) LP KEY expr(K) VALUE expr(V) RP. { A = JAGG(ctx, F, K, V, NULL, 1); }
jagg(A) ::= ident(F) LP KEY expr(K) VALUE expr(V) jnull(N) RP. { A = JAGG(ctx, F, K, V, N, 1); }
jagg(A) ::= ident(F) LP expr(K) VALUE expr(V) RP. { A = JAGG(ctx, F, K, V, NULL, 1); }
jagg(A) ::= ident(F) LP expr(K) VALUE expr(V) jnull(N) RP. { A = JAGG(ctx, F, K, V, N, 1); }
%type jo_items {sql_node *}
jo_items(A) ::= jo_item(X). { A = X; }
jo_items(A) ::= jo_items(L) COMMA jo_item(X). { A = L; for (int i = 0; i < X->nkids; i++) ADD(ctx, A, X->kids[i]); }
%type jo_item {sql_node *}
jo_item(A) ::= KEY expr(K) VALUE expr(V). { A = LIST1(ctx, K); ADD(ctx, A, V); }
jo_item(A) ::= expr(K) VALUE expr(V). { A = LIST1(ctx, K); ADD(ctx, A, V); }

expr(A) ::= LEFT(T) LP exprlist(L) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "LEFT"; for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
expr(A) ::= RIGHT(T) LP exprlist(L) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "RIGHT"; for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
/* OVERLAY(s PLACING r FROM p [FOR n]) */
expr(A) ::= ident(F) LP expr(X) PLACING expr(R) FROM expr(P) RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_PLACING; ADD(ctx, A, X); ADD(ctx, A, R); ADD(ctx, A, P); }
expr(A) ::= ident(F) LP expr(X) PLACING expr(R) FROM expr(P) FOR expr(N) RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_PLACING; ADD(ctx, A, X); ADD(ctx, A, R); ADD(ctx, A, P); ADD(ctx, A, N); }
expr(A) ::= CASE(T) case_operand(O) whenlist(W) else_opt(E) END. {
    A = MK(ctx, SQL_CASE, T); ADD(ctx, A, O); ADD(ctx, A, W); ADD(ctx, A, E);
}
expr(A) ::= CAST(T) LP expr(X) AS typename(Y) RP. { A = MK(ctx, SQL_CAST, T); A->s = Y->s; A->oline = Y->line; A->ocol = Y->col; ADD(ctx, A, X); }
expr(A) ::= CAST(T) LP expr(X) AS INTERVAL iv_unit(U) RP. { A = MK(ctx, SQL_CAST, T); A->s = CAT(ctx, "INTERVAL ", U->s); ADD(ctx, A, X); ADD(ctx, A, U); }
expr(A) ::= TRY_CAST(T) LP expr(X) AS INTERVAL iv_unit(U) RP. { A = MK(ctx, SQL_CAST, T); A->s = CAT(ctx, "INTERVAL ", U->s); A->flags = SQL_F_TRY; ADD(ctx, A, X); ADD(ctx, A, U); }
expr(A) ::= TRY_CAST(T) LP expr(X) AS typename(Y) RP. { A = MK(ctx, SQL_CAST, T); A->s = Y->s; A->oline = Y->line; A->ocol = Y->col; A->flags = SQL_F_TRY; ADD(ctx, A, X); }
/* GROUPING(a, ...): a reserved word, so its own rule (sql/plan_gsets.c) */
expr(A) ::= GROUPING(T) LP exprlist(L) RP. { A = MK(ctx, SQL_FUNC, T); A->s = "GROUPING"; for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]); }
expr(A) ::= ident(F) LP RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; }
expr(A) ::= ident(F) LP STAR RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_STAR_ARG; }
expr(A) ::= ident(F) LP exprlist(L) RP. {
    A = NAT(ctx, SQL_FUNC, F); A->s = F->s;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
}
expr(A) ::= ident(F) LP DISTINCT(D) exprlist(L) RP. {
    JDISTINCT(ctx, F, D);
    A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_DISTINCT;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
}
/* agg(...) FILTER (WHERE cond): the condition is the call's last child */
expr(A) ::= ident(F) LP STAR RP FILTER LP WHERE expr(C) RP. {
    A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_STAR_ARG | SQL_F_FILTER; ADD(ctx, A, C);
}
expr(A) ::= ident(F) LP exprlist(L) RP FILTER LP WHERE expr(C) RP. {
    A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_FILTER;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
    ADD(ctx, A, C);
}
expr(A) ::= ident(F) LP DISTINCT(D) exprlist(L) RP FILTER LP WHERE expr(C) RP. {
    JDISTINCT(ctx, F, D);
    A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_DISTINCT | SQL_F_FILTER;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, A, L->kids[i]);
    ADD(ctx, A, C);
}
/* fn(...) OVER ([PARTITION BY ...] ORDER BY x [ASC|DESC], ... [frame]) and fn(...) OVER w:
 * an SQL_OVER (ast.h) with the call itself as kid [3] */
expr(A) ::= ident(F) LP RP OVER(V) over_win(W). { A = OVERCALL(ctx, F, W, NAT(ctx, SQL_FUNC, F), V); }
expr(A) ::= ident(F) LP STAR RP OVER(V) over_win(W). {
    sql_node *c = NAT(ctx, SQL_FUNC, F); c->flags = SQL_F_STAR_ARG; A = OVERCALL(ctx, F, W, c, V);
}
expr(A) ::= ident(F) LP exprlist(L) RP OVER(V) over_win(W). {
    sql_node *c = NAT(ctx, SQL_FUNC, F);
    for (int i = 0; i < L->nkids; i++) ADD(ctx, c, L->kids[i]);
    A = OVERCALL(ctx, F, W, c, V);
}
expr(A) ::= ident(F) LP DISTINCT(D) exprlist(L) RP OVER(V) over_win(W). {
    JDISTINCT(ctx, F, D);
    sql_node *c = NAT(ctx, SQL_FUNC, F); c->flags = SQL_F_DISTINCT;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, c, L->kids[i]);
    A = OVERCALL(ctx, F, W, c, V);
}
/* agg(...) FILTER (WHERE c) OVER w: parsed so that the planner refuses it with
 * Flink's (Calcite's) words and the call's position */
expr(A) ::= ident(F) LP STAR RP FILTER LP WHERE expr(C) RP OVER(V) over_win(W). {
    sql_node *c = NAT(ctx, SQL_FUNC, F); c->flags = SQL_F_STAR_ARG | SQL_F_FILTER; ADD(ctx, c, C);
    A = OVERCALL(ctx, F, W, c, V);
}
expr(A) ::= ident(F) LP exprlist(L) RP FILTER LP WHERE expr(C) RP OVER(V) over_win(W). {
    sql_node *c = NAT(ctx, SQL_FUNC, F); c->flags = SQL_F_FILTER;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, c, L->kids[i]);
    ADD(ctx, c, C);
    A = OVERCALL(ctx, F, W, c, V);
}
expr(A) ::= ident(F) LP DISTINCT(D) exprlist(L) RP FILTER LP WHERE expr(C) RP OVER(V) over_win(W). {
    JDISTINCT(ctx, F, D);
    sql_node *c = NAT(ctx, SQL_FUNC, F); c->flags = SQL_F_DISTINCT | SQL_F_FILTER;
    for (int i = 0; i < L->nkids; i++) ADD(ctx, c, L->kids[i]);
    ADD(ctx, c, C);
    A = OVERCALL(ctx, F, W, c, V);
}
over_win(A) ::= LP(T) over_part(P) ORDER BY orderlist(O) frame_opt(R) RP. {
    A = MK(ctx, SQL_OVER, T); ADD(ctx, A, P); ADD(ctx, A, O); ADD(ctx, A, R);
}
over_win(A) ::= ident(N). { A = NAT(ctx, SQL_OVER, N); A->s2 = N->s; ADD(ctx, A, NULL); ADD(ctx, A, NULL); ADD(ctx, A, NULL); }
/* ROWS|RANGE BETWEEN lower AND upper, or ROWS|RANGE lower: a LIST (s "ROWS"/"RANGE"
 * as written, checked by the planner) of its two bounds (the upper one NULL when
 * not written); a bound is an IDENT whose s is "UNBOUNDED PRECEDING", "CURRENT
 * ROW" or the word after an expression (kid [0]), "PRECEDING" / "FOLLOWING". The
 * words are not reserved: they are identifiers here. */
frame_opt(A) ::= . { A = NULL; }
frame_opt(A) ::= ident(K) BETWEEN frame_bound(L) AND frame_bound(U). {
    A = NAT(ctx, SQL_LIST, K); A->s = UPSTR(ctx, K->s); ADD(ctx, A, L); ADD(ctx, A, U);
}
frame_opt(A) ::= ident(K) frame_bound(L). { A = NAT(ctx, SQL_LIST, K); A->s = UPSTR(ctx, K->s); ADD(ctx, A, L); ADD(ctx, A, NULL); }
frame_bound(A) ::= expr(E) ident(W). {
    A = NAT(ctx, SQL_IDENT, E);
    const char *w = UPSTR(ctx, W->s);
    if (E->kind == SQL_COL && !E->s2 && !(E->flags & SQL_F_QUOTED) && !strcasecmp(E->s, "UNBOUNDED")) A->s = CAT(ctx, "UNBOUNDED ", w);
    else if (E->kind == SQL_COL && !E->s2 && !(E->flags & SQL_F_QUOTED) && !strcasecmp(E->s, "CURRENT")) A->s = CAT(ctx, "CURRENT ", w);
    else { A->s = (char *)w; ADD(ctx, A, E); }
    A->oline = W->line; A->ocol = W->col;
}
/* WINDOW w AS (...), ...: the named windows are put into the OVER w calls of the
 * SELECT list here (an unknown name is left for the planner to report). */
select_core(A) ::= SELECT(T) hint_opt(HI) distinct_opt(D) selitems(I) from_opt(F) where_opt(W) group_opt(G) having_opt(H) WINDOW windefs(L). {
    A = MK(ctx, SQL_SELECT, T);
    A->flags = D;
    ADD(ctx, A, I); ADD(ctx, A, F); ADD(ctx, A, W); ADD(ctx, A, G); ADD(ctx, A, H);
    if (HI) ADD(ctx, A, HI);
    for (int i = 0; i < I->nkids; i++) NAMEDWIN(ctx, I->kids[i], L);
}
windefs(A) ::= windef(X). { A = LIST1(ctx, X); }
windefs(A) ::= windefs(L) COMMA windef(X). { A = ADD(ctx, L, X); }
windef(A) ::= ident(N) AS over_win(W). { A = W; A->s = N->s; }
over_part(A) ::= . { A = NULL; }
over_part(A) ::= PARTITION BY exprlist(L). { A = L; }
orderlist(A) ::= orderitem(X). { A = LIST1(ctx, X); }
orderlist(A) ::= orderlist(L) COMMA orderitem(X). { A = ADD(ctx, L, X); }
orderitem(A) ::= expr(E) order_dir(D). { A = NAT(ctx, SQL_ORDER, E); A->flags = D; ADD(ctx, A, E); }
%type order_dir {int}
order_dir(A) ::= . { A = 0; }
order_dir(A) ::= ASC. { A = 0; }
order_dir(A) ::= DESC. { A = SQL_F_DESC; }

/* The special argument forms: SUBSTRING(s FROM a [FOR b]) and TRIM(c FROM s)
 * (FROM in the node's flags; kids: before FROM, after FROM, after FOR),
 * TRIM(BOTH|LEADING|TRAILING [c] FROM s) (the side in s2, kid 0 NULL without c),
 * POSITION(a IN b), EXTRACT(unit FROM ts) (the unit an IDENT, kid 0). */
expr(A) ::= ident(F) LP expr(X) FROM expr(Y) RP. {
    A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_FROM;
    /* EXTRACT(unit FROM ts): the unit is a name, not a column */
    if (!strcasecmp(F->s, "EXTRACT") && X->kind == SQL_COL && !X->s2 && !(X->flags & SQL_F_QUOTED)) X->kind = SQL_IDENT;
    ADD(ctx, A, X); ADD(ctx, A, Y);
}
expr(A) ::= ident(F) LP expr(X) FROM expr(Y) FOR expr(Z) RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_FROM; ADD(ctx, A, X); ADD(ctx, A, Y); ADD(ctx, A, Z); }
expr(A) ::= ident(F) LP trim_side(S) FROM expr(Y) RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->s2 = S; A->flags = SQL_F_FROM; ADD(ctx, A, NULL); ADD(ctx, A, Y); }
expr(A) ::= ident(F) LP trim_side(S) expr(X) FROM expr(Y) RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->s2 = S; A->flags = SQL_F_FROM; ADD(ctx, A, X); ADD(ctx, A, Y); }
/* FLOOR(ts TO unit), CEIL(ts TO unit): kids [ts, the unit (an IDENT)] */
expr(A) ::= ident(F) LP expr(X) TO unit_name(U) RP. { A = NAT(ctx, SQL_FUNC, F); A->s = F->s; A->flags = SQL_F_TO; ADD(ctx, A, X); ADD(ctx, A, U); }
expr(A) ::= POSITION(T) LP expr(X) IN expr(Y) RP. { A = MK(ctx, SQL_POSITION, T); A->s = "POSITION"; ADD(ctx, A, X); ADD(ctx, A, Y); }
expr(A) ::= POSITION(T). { A = MK(ctx, SQL_COL, T); A->s = IDVAL(ctx, T); }
%type trim_side {char *}
trim_side(A) ::= BOTH. { A = "BOTH"; }
trim_side(A) ::= LEADING. { A = "LEADING"; }
trim_side(A) ::= TRAILING. { A = "TRAILING"; }

case_operand(A) ::= . { A = NULL; }
case_operand(A) ::= expr(X). { A = X; }
whenlist(A) ::= WHEN(T) expr(C) THEN expr(R). { sql_node *w = MK(ctx, SQL_WHEN, T); ADD(ctx, w, C); ADD(ctx, w, R); A = LIST1(ctx, w); }
whenlist(A) ::= whenlist(L) WHEN(T) expr(C) THEN expr(R). { sql_node *w = MK(ctx, SQL_WHEN, T); ADD(ctx, w, C); ADD(ctx, w, R); A = ADD(ctx, L, w); }
else_opt(A) ::= . { A = NULL; }
else_opt(A) ::= ELSE expr(X). { A = X; }

/* An interval qualifier: a LIST of one or two IDENT units (s the unit in upper
 * case, s2 its precision "3" or "3,6" when written); the LIST's s is the
 * qualifier's text ("SECOND(3)", "MINUTE TO SECOND"). */
iv_unit(A) ::= unit(U). [COMMA] { A = LIST1(ctx, U); A->s = U->s2 ? CAT(ctx, CAT(ctx, CAT(ctx, U->s, "("), U->s2), ")") : U->s; }
iv_unit(A) ::= unit(U) TO unit(V). {
    A = LIST1(ctx, U); ADD(ctx, A, V);
    char *a = U->s2 ? CAT(ctx, CAT(ctx, CAT(ctx, U->s, "("), U->s2), ")") : U->s;
    char *b = V->s2 ? CAT(ctx, CAT(ctx, CAT(ctx, V->s, "("), V->s2), ")") : V->s;
    A->s = CAT(ctx, CAT(ctx, a, " TO "), b);
}
unit(A) ::= unit_name(U). { A = U; }
unit(A) ::= unit_name(U) LP INTEGER(N) RP. { A = U; A->s2 = TXT(ctx, N); }
unit(A) ::= unit_name(U) LP INTEGER(N) COMMA INTEGER(M) RP. { A = U; A->s2 = CAT(ctx, CAT(ctx, TXT(ctx, N), ","), TXT(ctx, M)); }
unit_name(A) ::= SECOND(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
unit_name(A) ::= MINUTE(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
unit_name(A) ::= HOUR(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
unit_name(A) ::= DAY(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
unit_name(A) ::= MONTH(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
unit_name(A) ::= YEAR(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }
unit_name(A) ::= ID(T). { A = MK(ctx, SQL_IDENT, T); A->s = UPPER(ctx, T); }

%code {
void sql_parse_snapshot(void *parser, sql_pctx *ctx)
{
    yyParser *p = parser;
    int n = (int)(p->yytos - p->yystack) + 1;
    if (n > (int)(sizeof ctx->snap / sizeof ctx->snap[0])) n = 0;
    for (int i = 0; i < n; i++) ctx->snap[i] = p->yystack[i].stateno;
    ctx->nsnap = n;
}

/* Would a parser with state stack stk[0..n) accept token `tok` next? Runs
 * the reductions it would make on a copy of the stack. */
static int sql_would_accept(const int *stk0, int n, int tok)
{
    int stk[YYSTACKDEPTH + 16];
    if (n <= 0 || n > YYSTACKDEPTH) return 0;
    memcpy(stk, stk0, sizeof(int) * (size_t)n);
    for (int guard = 0; guard < 100000; guard++) {
        YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)tok, (YYACTIONTYPE)stk[n - 1]);
        if (act >= YY_MIN_REDUCE && act <= YY_MAX_REDUCE) {
            int rule = act - YY_MIN_REDUCE;
            n += yyRuleInfoNRhs[rule];
            if (n < 1 || n >= YYSTACKDEPTH + 16) return 0;
            stk[n] = yy_find_reduce_action((YYACTIONTYPE)stk[n - 1], (YYCODETYPE)yyRuleInfoLhs[rule]);
            n++;
            continue;
        }
        return act <= YY_MAX_SHIFTREDUCE || act == YY_ACCEPT_ACTION;
    }
    return 0;
}
}
