/*
 * match_pattern.c -- the row-pattern compiler of the `match_recognize`
 * operator (match_recognize.h describes the language): a recursive-descent
 * parser into a tree, Flink's checks on the tree, and code generation into
 * the backtracking program of match_pattern.h; also the table of the
 * functions a DEFINE condition or a measure reads of a match.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "match_pattern.h"

enum { PN_VAR, PN_SEQ, PN_ALT, PN_REP, PN_NOT, PN_WEND };

typedef struct pnode {
    int kind;
    int var;                 /* PN_VAR, PN_NOT */
    int min, max;            /* PN_REP; max -1 = unbounded */
    int greedy;
    int col;                 /* 1-based column in the pattern text */
    struct pnode **kids;
    int nkids;
} pnode;

typedef struct pparse {
    const char *s;
    size_t pos;
    sl_mr_pattern *p;
    char *err;
    size_t errlen;
    int failed;
} pparse;

static void pnode_free(pnode *n)
{
    if (!n) return;
    for (int i = 0; i < n->nkids; i++) pnode_free(n->kids[i]);
    free(n->kids);
    free(n);
}

static pnode *pnode_new(int kind, int col)
{
    pnode *n = sl_calloc(1, sizeof *n);
    n->kind = kind;
    n->col = col;
    return n;
}

static void pnode_add(pnode *n, pnode *k)
{
    n->kids = sl_realloc(n->kids, (size_t)(n->nkids + 1) * sizeof *n->kids);
    n->kids[n->nkids++] = k;
}

static void skip_ws(pparse *pp)
{
    while (pp->s[pp->pos] && isspace((unsigned char)pp->s[pp->pos])) pp->pos++;
}

static pnode *perr(pparse *pp, const char *msg)
{
    if (!pp->failed)
        sl_seterr(pp->err, pp->errlen, "%s", msg);
    pp->failed = 1;
    return NULL;
}

static pnode *parse_alt(pparse *pp);

static int parse_int(pparse *pp, int *out)
{
    skip_ws(pp);
    if (!isdigit((unsigned char)pp->s[pp->pos])) return 0;
    long v = 0;
    while (isdigit((unsigned char)pp->s[pp->pos])) {
        v = v * 10 + (pp->s[pp->pos++] - '0');
        if (v > 100000) v = 100000;
    }
    *out = (int)v;
    return 1;
}

static pnode *parse_primary(pparse *pp)
{
    skip_ws(pp);
    int col = (int)pp->pos + 1;
    char c = pp->s[pp->pos];
    if (c == '(') {
        pp->pos++;
        pnode *n = parse_alt(pp);
        if (!n) return NULL;
        skip_ws(pp);
        if (pp->s[pp->pos] != ')') {
            pnode_free(n);
            return perr(pp, "expected ')'");
        }
        pp->pos++;
        return n;
    }
    if (c == '$') { /* the end of the WITHIN window (the C API's not_followed_by at the end) */
        pp->pos++;
        pp->p->wend = 1;
        return pnode_new(PN_WEND, col);
    }
    int neg = c == '!'; /* !v: the next row must not be v; it is not taken (the C API's not_next) */
    if (neg) {
        pp->pos++;
        skip_ws(pp);
        c = pp->s[pp->pos];
        if (!(isalpha((unsigned char)c) || c == '_' || c == '`'))
            return perr(pp, "expected a pattern variable after '!'");
    }
    if (isalpha((unsigned char)c) || c == '_' || c == '`') {
        char name[128];
        size_t n = 0;
        if (c == '`') {
            pp->pos++;
            while (pp->s[pp->pos] && pp->s[pp->pos] != '`' && n + 1 < sizeof name) name[n++] = pp->s[pp->pos++];
            if (pp->s[pp->pos] != '`') return perr(pp, "unterminated `quoted` variable");
            pp->pos++;
        } else {
            while ((isalnum((unsigned char)pp->s[pp->pos]) || pp->s[pp->pos] == '_') && n + 1 < sizeof name)
                name[n++] = pp->s[pp->pos++];
        }
        name[n] = '\0';
        int v = sl_mr_pattern_find_var(pp->p, name);
        if (v < 0) {
            if (pp->p->nvars == SL_MR_MAX_VARS) return perr(pp, "too many pattern variables");
            v = pp->p->nvars++;
            pp->p->vars[v] = sl_strdup(name);
        }
        pnode *nd = pnode_new(neg ? PN_NOT : PN_VAR, col);
        nd->var = v;
        return nd;
    }
    return perr(pp, c ? "expected a pattern variable or '('" : "unexpected end of the pattern");
}

static pnode *parse_factor(pparse *pp)
{
    pnode *prim = parse_primary(pp);
    if (!prim) return NULL;
    skip_ws(pp);
    int col = (int)pp->pos + 1, min, max;
    char c = pp->s[pp->pos];
    if ((prim->kind == PN_NOT || prim->kind == PN_WEND) && (c == '*' || c == '+' || c == '?' || c == '{')) {
        const char *msg = prim->kind == PN_NOT ? "a negated variable (!v) takes no quantifier"
                                               : "'$' takes no quantifier";
        pnode_free(prim);
        return perr(pp, msg);
    }
    if (c == '*') min = 0, max = -1, pp->pos++;
    else if (c == '+') min = 1, max = -1, pp->pos++;
    else if (c == '?') min = 0, max = 1, pp->pos++;
    else if (c == '{') {
        pp->pos++;
        int have_min = parse_int(pp, &min);
        if (!have_min) min = 0;
        skip_ws(pp);
        if (pp->s[pp->pos] == ',') {
            pp->pos++;
            if (!parse_int(pp, &max)) max = -1;
            if (!have_min && max < 0) {
                pnode_free(prim);
                return perr(pp, "a quantifier {,} needs a bound");
            }
        } else {
            if (!have_min) {
                pnode_free(prim);
                return perr(pp, "expected a number in the quantifier");
            }
            max = min;
        }
        skip_ws(pp);
        if (pp->s[pp->pos] != '}') {
            pnode_free(prim);
            return perr(pp, "expected '}'");
        }
        pp->pos++;
        if (max >= 0 && max < min) {
            pnode_free(prim);
            return perr(pp, "the quantifier's upper bound is below its lower bound");
        }
        if (max == 0) {
            pnode_free(prim);
            return perr(pp, "a quantifier {0} matches nothing");
        }
    } else {
        return prim;
    }
    pnode *r = pnode_new(PN_REP, col);
    r->min = min;
    r->max = max;
    r->greedy = 1;
    pnode_add(r, prim);
    skip_ws(pp);
    if (pp->s[pp->pos] == '?') {
        pp->pos++;
        r->greedy = 0;
    }
    skip_ws(pp);
    c = pp->s[pp->pos];
    if (c == '*' || c == '+' || c == '{' || (c == '?' && !r->greedy)) {
        pnode_free(r);
        return perr(pp, "a quantifier cannot follow a quantifier; use parentheses");
    }
    return r;
}

static pnode *parse_seq(pparse *pp)
{
    pnode *seq = pnode_new(PN_SEQ, (int)pp->pos + 1);
    for (;;) {
        skip_ws(pp);
        char c = pp->s[pp->pos];
        if (!c || c == '|' || c == ')') break;
        pnode *f = parse_factor(pp);
        if (!f) {
            pnode_free(seq);
            return NULL;
        }
        pnode_add(seq, f);
    }
    if (!seq->nkids) {
        pnode_free(seq);
        return perr(pp, "expected a pattern variable or '('");
    }
    if (seq->nkids == 1) {
        pnode *k = seq->kids[0];
        seq->nkids = 0;
        pnode_free(seq);
        return k;
    }
    return seq;
}

static pnode *parse_alt(pparse *pp)
{
    pnode *first = parse_seq(pp);
    if (!first) return NULL;
    skip_ws(pp);
    if (pp->s[pp->pos] != '|') return first;
    pnode *alt = pnode_new(PN_ALT, first->col);
    pnode_add(alt, first);
    while (pp->s[pp->pos] == '|') {
        pp->pos++;
        pnode *n = parse_seq(pp);
        if (!n) {
            pnode_free(alt);
            return NULL;
        }
        pnode_add(alt, n);
        skip_ws(pp);
    }
    return alt;
}

static int nullable(const pnode *n)
{
    switch (n->kind) {
    case PN_VAR: return 0;
    case PN_NOT: case PN_WEND: return 1;
    case PN_SEQ:
        for (int i = 0; i < n->nkids; i++)
            if (!nullable(n->kids[i])) return 0;
        return 1;
    case PN_ALT:
        for (int i = 0; i < n->nkids; i++)
            if (nullable(n->kids[i])) return 1;
        return 0;
    default: return n->min == 0 || nullable(n->kids[0]);
    }
}

/* Flink's checks: no repetition of what can match nothing, no reluctant
 * optional, no greedy quantifier at the end. */
static int check_node(pparse *pp, const pnode *n)
{
    if (n->kind == PN_REP) {
        if (nullable(n->kids[0])) {
            pp->pos = (size_t)n->col - 1;
            perr(pp, "a quantified part of the pattern must not match an empty sequence of rows");
            return SL_ERR;
        }
        if (!n->greedy && n->min == 0 && n->max == 1) {
            pp->pos = (size_t)n->col - 1;
            perr(pp, "Reluctant optional variables are not supported yet.");
            return SL_ERR;
        }
    }
    for (int i = 0; i < n->nkids; i++)
        if (check_node(pp, n->kids[i]) != SL_OK) return SL_ERR;
    return SL_OK;
}

static int emit_inst(sl_mr_pattern *p, int op, int var, int x, int y)
{
    if (p->nprog == SL_MR_MAX_PROGRAM) return -1;
    if (p->nprog == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->prog = sl_realloc(p->prog, (size_t)p->cap * sizeof *p->prog);
    }
    p->prog[p->nprog] = (inst){op, var, x, y};
    return p->nprog++;
}

static int gen(sl_mr_pattern *p, const pnode *n)
{
    switch (n->kind) {
    case PN_VAR: return emit_inst(p, OP_CHAR, n->var, 0, 0) < 0 ? SL_ERR : SL_OK;
    case PN_NOT: return emit_inst(p, OP_NOT, n->var, 0, 0) < 0 ? SL_ERR : SL_OK;
    case PN_WEND: return emit_inst(p, OP_WEND, 0, 0, 0) < 0 ? SL_ERR : SL_OK;
    case PN_SEQ:
        for (int i = 0; i < n->nkids; i++)
            if (gen(p, n->kids[i]) != SL_OK) return SL_ERR;
        return SL_OK;
    case PN_ALT: {
        int jumps[SL_MR_MAX_PROGRAM / 2], nj = 0;
        for (int i = 0; i < n->nkids; i++) {
            int split = -1;
            if (i + 1 < n->nkids && (split = emit_inst(p, OP_SPLIT, 0, 0, 0)) < 0) return SL_ERR;
            if (split >= 0) p->prog[split].x = p->nprog;
            if (gen(p, n->kids[i]) != SL_OK) return SL_ERR;
            if (i + 1 < n->nkids) {
                int j = emit_inst(p, OP_JMP, 0, 0, 0);
                if (j < 0 || nj == SL_MR_MAX_PROGRAM / 2) return SL_ERR;
                jumps[nj++] = j;
                p->prog[split].y = p->nprog;
            }
        }
        for (int i = 0; i < nj; i++) p->prog[jumps[i]].x = p->nprog;
        return SL_OK;
    }
    default: {
        for (int i = 0; i < n->min; i++)
            if (gen(p, n->kids[0]) != SL_OK) return SL_ERR;
        if (n->max < 0) {
            int split = emit_inst(p, OP_SPLIT, 0, 0, 0);
            if (split < 0 || gen(p, n->kids[0]) != SL_OK) return SL_ERR;
            if (emit_inst(p, OP_JMP, 0, split, 0) < 0) return SL_ERR;
            int body = split + 1, out = p->nprog;
            p->prog[split].x = n->greedy ? body : out;
            p->prog[split].y = n->greedy ? out : body;
            return SL_OK;
        }
        int splits[SL_MR_MAX_PROGRAM], ns = 0;
        for (int i = n->min; i < n->max; i++) {
            int split = emit_inst(p, OP_SPLIT, 0, 0, 0);
            if (split < 0 || gen(p, n->kids[0]) != SL_OK) return SL_ERR;
            splits[ns++] = split;
        }
        for (int i = 0; i < ns; i++) {
            int body = splits[i] + 1, out = p->nprog;
            p->prog[splits[i]].x = n->greedy ? body : out;
            p->prog[splits[i]].y = n->greedy ? out : body;
        }
        return SL_OK;
    }
    }
}

/* The last element of a pattern: a greedy quantifier there is refused. */
static const pnode *last_element(const pnode *n)
{
    while (n->kind == PN_SEQ) n = n->kids[n->nkids - 1];
    return n;
}

sl_mr_pattern *sl_mr_pattern_compile(const char *text, char *err, size_t errlen)
{
    sl_mr_pattern *p = sl_calloc(1, sizeof *p);
    pparse pp = {.s = text ? text : "", .p = p, .err = err, .errlen = errlen};
    pnode *root = parse_alt(&pp);
    if (root) {
        skip_ws(&pp);
        if (pp.s[pp.pos]) {
            perr(&pp, pp.s[pp.pos] == ')' ? "unbalanced ')'" : "unexpected character");
        } else if (check_node(&pp, root) == SL_OK) {
            const pnode *last = last_element(root);
            if (nullable(root)) {
                pp.pos = 0;
                perr(&pp, "the pattern must not match an empty sequence of rows");
            } else if (last->kind == PN_REP && last->greedy && last->min != last->max) {
                pp.pos = (size_t)last->col - 1;
                perr(&pp, "Greedy quantifiers are not allowed as the last element of a Pattern "
                          "yet. Finish your pattern with either a simple variable or reluctant "
                          "quantifier.");
            } else if (gen(p, root) != SL_OK || emit_inst(p, OP_MATCH, 0, 0, 0) < 0) {
                pp.pos = 0;
                perr(&pp, "the pattern is too large once its quantifiers are expanded");
            }
        }
    }
    pnode_free(root);
    if (pp.failed) {
        sl_mr_pattern_free(p);
        return NULL;
    }
    return p;
}

void sl_mr_pattern_free(sl_mr_pattern *p)
{
    if (!p) return;
    for (int i = 0; i < p->nvars; i++) free(p->vars[i]);
    free(p->prog);
    free(p);
}

int sl_mr_pattern_nvars(const sl_mr_pattern *p) { return p->nvars; }
const char *sl_mr_pattern_var(const sl_mr_pattern *p, int i) { return p->vars[i]; }
int sl_mr_pattern_find_var(const sl_mr_pattern *p, const char *name)
{
    for (int i = 0; i < p->nvars; i++)
        if (!strcasecmp(p->vars[i], name)) return i;
    return -1;
}

static const char *const fn_names[] = {"PREV", "LAST", "FIRST", "SUM", "COUNT", "AVG", "MIN", "MAX",
                                       "CLASSIFIER", "MATCH_ROWTIME", "MATCH_PROCTIME"};

int sl_mr_fn_parse(const char *name)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(fn_names); i++)
        if (!strcasecmp(fn_names[i], name)) return (int)i;
    return -1;
}

const char *sl_mr_fn_name(sl_mr_fn fn) { return fn_names[fn]; }

sl_type sl_mr_fn_type(sl_mr_fn fn, sl_type t)
{
    switch (fn) {
    case SL_MR_PREV: case SL_MR_LAST: case SL_MR_FIRST: return t;
    case SL_MR_COUNT: return SL_T_BIGINT;
    case SL_MR_SUM: case SL_MR_AVG:
        return t == SL_T_INT || t == SL_T_BIGINT || t == SL_T_DOUBLE ? t : SL_T_NULL;
    case SL_MR_MIN: case SL_MR_MAX:
        return t == SL_T_INT || t == SL_T_BIGINT || t == SL_T_DOUBLE || t == SL_T_TIMESTAMP ? t : SL_T_NULL;
    case SL_MR_CLASSIFIER: return SL_T_STRING;
    default: return SL_T_TIMESTAMP;
    }
}
