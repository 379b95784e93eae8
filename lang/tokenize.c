/*
 * tokenize.c -- the hand-written tokenizer of Sluice's Flink SQL, the
 * driver that feeds its tokens to the lemon parser, and the client's
 * statement splitter.
 *
 * Tokens: identifiers (letters, digits, '_', '$'; `back-quoted` with ``
 * for a quote), 'strings' ('' for a quote), integers and decimals (1, 1.5,
 * .5, 1e3), the operators ( ) , ; . = => <> != < <= > >= + - * / % ||, and
 * whitespace and comments (-- to the end of the line, / * ... * /) that
 * separate them. Identifiers that are keywords get their keyword's token
 * type; the grammar lets non-reserved ones fall back to ID.
 *
 * Positions are 1-based lines and columns, counted in bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sl.h"
#include "parse.h"
#include "grammar.h"

static const struct kw {
    const char *name;
    int type;
} keywords[] = {
    {"ADD", TK_ADD}, {"AFTER", TK_AFTER}, {"ALL", TK_ALL}, {"ALTER", TK_ALTER}, {"AND", TK_AND},
    {"ARRAY", TK_ARRAY}, {"AS", TK_AS}, {"ASC", TK_ASC}, {"BEGIN", TK_BEGIN},
    {"BETWEEN", TK_BETWEEN}, {"BOTH", TK_BOTH}, {"BY", TK_BY}, {"CASCADE", TK_CASCADE},
    {"CASE", TK_CASE}, {"CAST", TK_CAST}, {"CATALOG", TK_CATALOG}, {"CATALOGS", TK_CATALOGS},
    {"CHANGELOG_MODE", TK_CHANGELOG_MODE}, {"COLUMNS", TK_COLUMNS}, {"COMMENT", TK_COMMENT},
    {"CONSTRAINT", TK_CONSTRAINT}, {"CREATE", TK_CREATE}, {"CROSS", TK_CROSS},
    {"CUBE", TK_CUBE}, {"CURRENT", TK_CURRENT}, {"DATABASE", TK_DATABASE}, {"DATABASES", TK_DATABASES},
    {"DAY", TK_DAY}, {"DEFINE", TK_DEFINE}, {"DESC", TK_DESC}, {"DESCRIBE", TK_DESCRIBE},
    {"DESCRIPTOR", TK_DESCRIPTOR}, {"DISTINCT", TK_DISTINCT}, {"DRAIN", TK_DRAIN},
    {"DROP", TK_DROP}, {"ELSE", TK_ELSE}, {"END", TK_END}, {"ENFORCED", TK_ENFORCED},
    {"ESCAPE", TK_ESCAPE}, {"EXCEPT", TK_EXCEPT}, {"EXECUTE", TK_EXECUTE}, {"EXISTS", TK_EXISTS},
    {"EXPLAIN", TK_EXPLAIN}, {"FALSE", TK_FALSE}, {"FETCH", TK_FETCH}, {"FILTER", TK_FILTER},
    {"FIRST", TK_FIRST}, {"FOR", TK_FOR}, {"FROM", TK_FROM}, {"FULL", TK_FULL},
    {"FUNCTION", TK_FUNCTION}, {"FUNCTIONS", TK_FUNCTIONS}, {"GROUP", TK_GROUP},
    {"GROUPING", TK_GROUPING},    {"HAVING", TK_HAVING}, {"HOUR", TK_HOUR}, {"IF", TK_IF}, {"IN", TK_IN}, {"INNER", TK_INNER},
    {"INSERT", TK_INSERT}, {"INTERSECT", TK_INTERSECT}, {"INTERVAL", TK_INTERVAL},
    {"INTO", TK_INTO}, {"IS", TK_IS}, {"JAR", TK_JAR}, {"JARS", TK_JARS}, {"JOB", TK_JOB},
    {"JOBS", TK_JOBS}, {"JOIN", TK_JOIN}, {"JSON", TK_JSON}, {"JSON_ARRAY", TK_JSON_ARRAY},
    {"JSON_EXISTS", TK_JSON_EXISTS}, {"JSON_OBJECT", TK_JSON_OBJECT}, {"JSON_QUERY", TK_JSON_QUERY},
    {"JSON_VALUE", TK_JSON_VALUE}, {"KEY", TK_KEY}, {"LANGUAGE", TK_LANGUAGE},
    {"LATERAL", TK_LATERAL}, {"LEADING", TK_LEADING}, {"LEFT", TK_LEFT}, {"LIKE", TK_LIKE},
    {"LIMIT", TK_LIMIT}, {"LOCAL", TK_LOCAL}, {"MATCH_RECOGNIZE", TK_MATCH_RECOGNIZE},
    {"MEASURES", TK_MEASURES}, {"METADATA", TK_METADATA}, {"MINUTE", TK_MINUTE},
    {"MODIFY", TK_MODIFY}, {"MONTH", TK_MONTH}, {"MULTISET", TK_MULTISET}, {"NEXT", TK_NEXT},
    {"NOT", TK_NOT}, {"NULL", TK_NULL}, {"OBJECT", TK_OBJECT}, {"OFFSET", TK_OFFSET}, {"ON", TK_ON},
    {"ONE", TK_ONE}, {"ONLY", TK_ONLY}, {"OR", TK_OR}, {"ORDER", TK_ORDER}, {"OUTER", TK_OUTER},
    {"OVER", TK_OVER}, {"OVERWRITE", TK_OVERWRITE}, {"PARTITION", TK_PARTITION},
    {"PARTITIONED", TK_PARTITIONED}, {"PATTERN", TK_PATTERN}, {"PER", TK_PER},
    {"PLACING", TK_PLACING}, {"PLAN", TK_PLAN}, {"POSITION", TK_POSITION}, {"PRIMARY", TK_PRIMARY},
    {"REMOVE", TK_REMOVE}, {"RENAME", TK_RENAME}, {"RESET", TK_RESET}, {"RESTRICT", TK_RESTRICT},
    {"RETURNING", TK_RETURNING}, {"RIGHT", TK_RIGHT}, {"ROLLUP", TK_ROLLUP}, {"ROW", TK_ROW}, {"ROWS", TK_ROWS},
    {"SAVEPOINT", TK_SAVEPOINT}, {"SCALAR", TK_SCALAR}, {"SECOND", TK_SECOND},
    {"SELECT", TK_SELECT}, {"SET", TK_SET}, {"SETS", TK_SETS}, {"SHOW", TK_SHOW}, {"SIMILAR", TK_SIMILAR},
    {"SKIP", TK_SKIP}, {"STATEMENT", TK_STATEMENT}, {"STOP", TK_STOP}, {"SYSTEM", TK_SYSTEM},
    {"TABLE", TK_TABLE}, {"TABLES", TK_TABLES}, {"TEMPORARY", TK_TEMPORARY}, {"THEN", TK_THEN},
    {"TIME", TK_TIME}, {"TIMESTAMP", TK_TIMESTAMP}, {"TO", TK_TO}, {"TRAILING", TK_TRAILING},
    {"TRUE", TK_TRUE}, {"TRY_CAST", TK_TRY_CAST}, {"UNION", TK_UNION}, {"UNKNOWN", TK_UNKNOWN},
    {"UNNEST", TK_UNNEST}, {"USE", TK_USE}, {"USER", TK_USER}, {"USING", TK_USING},
    {"VALUE", TK_VALUE}, {"VALUES", TK_VALUES}, {"VIEW", TK_VIEW}, {"VIEWS", TK_VIEWS},
    {"VIRTUAL", TK_VIRTUAL}, {"WATERMARK", TK_WATERMARK}, {"WHEN", TK_WHEN}, {"WHERE", TK_WHERE},
    {"WINDOW", TK_WINDOW}, {"WITH", TK_WITH}, {"WITHIN", TK_WITHIN}, {"WITHOUT", TK_WITHOUT},
    {"WRAPPER", TK_WRAPPER}, {"YEAR", TK_YEAR}, {"ZONE", TK_ZONE},
};

int sql_keyword(const char *z, int n)
{
    size_t lo = 0, hi = SL_ARRAY_LEN(keywords);
    while (lo < hi) { /* the table is sorted */
        size_t mid = (lo + hi) / 2;
        int c = strncasecmp(keywords[mid].name, z, (size_t)n);
        if (c == 0 && keywords[mid].name[n] != '\0') c = 1;
        if (c == 0) return keywords[mid].type;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

const char *sql_keyword_name(size_t i)
{
    return i < SL_ARRAY_LEN(keywords) ? keywords[i].name : NULL;
}

const char *sql_token_display(int type)
{
    switch (type) {
    case 0: return "end of input";
    case TK_ID: return "an identifier";
    case TK_STRING: return "a string literal";
    case TK_INTEGER: return "an integer";
    case TK_DECIMAL: return "a number";
    case TK_LP: return "'('";
    case TK_RP: return "')'";
    case TK_COMMA: return "','";
    case TK_SEMI: return "';'";
    case TK_DOT: return "'.'";
    case TK_EQ: return "'='";
    case TK_NE: return "'<>'";
    case TK_LT: return "'<'";
    case TK_LE: return "'<='";
    case TK_GT: return "'>'";
    case TK_GE: return "'>='";
    case TK_ARROW: return "'=>'";
    case TK_PLUS: return "'+'";
    case TK_MINUS: return "'-'";
    case TK_STAR: return "'*'";
    case TK_SLASH: return "'/'";
    case TK_PERCENT: return "'%'";
    case TK_CONCAT: return "'||'";
    case TK_PIPE: return "'|'";
    case TK_QMARK: return "'?'";
    case TK_LBRACE: return "'{'";
    case TK_RBRACE: return "'}'";
    case TK_LBRACKET: return "'['";
    case TK_RBRACKET: return "']'";
    case TK_HINT: return "'/*+'";
    }
    for (size_t i = 0; i < SL_ARRAY_LEN(keywords); i++)
        if (keywords[i].type == type) return keywords[i].name;
    return "a token";
}

void sql_lexer_init(sql_lexer *lx, const char *text, size_t len, int line, int col)
{
    lx->p = text;
    lx->end = text + len;
    lx->line = line;
    lx->col = col;
}

static void adv(sql_lexer *lx, size_t n)
{
    for (size_t i = 0; i < n && lx->p < lx->end; i++, lx->p++) {
        if (*lx->p == '\n') {
            lx->line++;
            lx->col = 1;
        } else {
            lx->col++;
        }
    }
}

static int is_id0(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (unsigned char)c >= 0x80;
}
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Sets *unterminated when the error is an unclosed quote or comment. */
static int next_token(sql_lexer *lx, sql_tok *t, int *unterminated, char *err, size_t errlen)
{
    *unterminated = 0;
    for (;;) { /* whitespace and comments */
        while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' ||
                                    *lx->p == '\r' || *lx->p == '\f'))
            adv(lx, 1);
        if (lx->end - lx->p >= 2 && lx->p[0] == '-' && lx->p[1] == '-') {
            while (lx->p < lx->end && *lx->p != '\n') adv(lx, 1);
            continue;
        }
        if (lx->end - lx->p >= 3 && lx->p[0] == '/' && lx->p[1] == '*' && lx->p[2] == '+')
            break; /* a hint opener (slash, star, plus) is a token; star, slash end it */
        if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '*') {
            int l = lx->line, c = lx->col;
            adv(lx, 2);
            while (lx->end - lx->p >= 2 && !(lx->p[0] == '*' && lx->p[1] == '/')) adv(lx, 1);
            if (lx->end - lx->p < 2) {
                adv(lx, 2);
                *unterminated = 1;
                return sl_seterr(err, errlen, "line %d, column %d: unterminated comment", l, c);
            }
            adv(lx, 2);
            continue;
        }
        break;
    }
    t->z = lx->p;
    t->line = lx->line;
    t->col = lx->col;
    t->n = 0;
    t->type = 0;
    if (lx->p >= lx->end) return SL_DONE;
    const char *p = lx->p;
    size_t left = (size_t)(lx->end - p);
    size_t n = 1;
    char c = *p;
    if (left >= 3 && c == '/' && p[1] == '*' && p[2] == '+') {
        t->type = TK_HINT;
        t->n = 3;
        adv(lx, 3);
        return SL_OK;
    }
    if (is_id0(c)) {
        while (n < left && (is_id0(p[n]) || is_digit(p[n]) || p[n] == '$')) n++;
        t->type = sql_keyword(p, (int)n);
        if (!t->type) t->type = TK_ID;
    } else if (c == '`' || c == '\'') {
        for (;;) {
            if (n >= left) {
                *unterminated = 1;
                return sl_seterr(err, errlen, "line %d, column %d: unterminated %s", t->line,
                                 t->col, c == '`' ? "quoted identifier" : "string literal");
            }
            if (p[n] == c) {
                if (n + 1 < left && p[n + 1] == c) {
                    n += 2;
                    continue;
                }
                n++;
                break;
            }
            n++;
        }
        t->type = c == '`' ? TK_ID : TK_STRING;
        if (c == '`' && n == 2)
            return sl_seterr(err, errlen, "line %d, column %d: empty quoted identifier", t->line,
                             t->col);
    } else if (is_digit(c) || (c == '.' && left > 1 && is_digit(p[1]))) {
        int dec = 0;
        while (n < left && is_digit(p[n])) n++;
        if (c == '.' || (n < left && p[n] == '.')) {
            dec = 1;
            if (c != '.') n++;
            while (n < left && is_digit(p[n])) n++;
        }
        if (n < left && (p[n] == 'e' || p[n] == 'E')) {
            size_t m = n + 1;
            if (m < left && (p[m] == '+' || p[m] == '-')) m++;
            if (m < left && is_digit(p[m])) {
                while (m < left && is_digit(p[m])) m++;
                n = m;
                dec = 1;
            }
        }
        if (n < left && is_id0(p[n]))
            return sl_seterr(err, errlen, "line %d, column %d: malformed number '%.*s'", t->line,
                             t->col, (int)(n + 1), p);
        t->type = dec ? TK_DECIMAL : TK_INTEGER;
    } else {
        char d = left > 1 ? p[1] : '\0';
        switch (c) {
        case '(': t->type = TK_LP; break;
        case ')': t->type = TK_RP; break;
        case ',': t->type = TK_COMMA; break;
        case ';': t->type = TK_SEMI; break;
        case '.': t->type = TK_DOT; break;
        case '+': t->type = TK_PLUS; break;
        case '-': t->type = TK_MINUS; break;
        case '*': t->type = TK_STAR; break;
        case '/': t->type = TK_SLASH; break;
        case '%': t->type = TK_PERCENT; break;
        case '=':
            t->type = TK_EQ;
            if (d == '=') n = 2;
            else if (d == '>') { t->type = TK_ARROW; n = 2; } /* a named argument */
            break;
        case '<':
            if (d == '>') { t->type = TK_NE; n = 2; }
            else if (d == '=') { t->type = TK_LE; n = 2; }
            else t->type = TK_LT;
            break;
        case '>':
            if (d == '=') { t->type = TK_GE; n = 2; }
            else t->type = TK_GT;
            break;
        case '!':
            if (d == '=') { t->type = TK_NE; n = 2; }
            break;
        case '|':
            if (d == '|') { t->type = TK_CONCAT; n = 2; }
            else t->type = TK_PIPE; /* MATCH_RECOGNIZE's alternation */
            break;
        case '?': t->type = TK_QMARK; break;
        case '{': t->type = TK_LBRACE; break;
        case '}': t->type = TK_RBRACE; break;
        case '[': t->type = TK_LBRACKET; break;
        case ']': t->type = TK_RBRACKET; break;
        default: break;
        }
        if (!t->type) {
            if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
                return sl_seterr(err, errlen, "line %d, column %d: unexpected character 0x%02x",
                                 t->line, t->col, (unsigned char)c);
            return sl_seterr(err, errlen, "line %d, column %d: unexpected character '%c'",
                             t->line, t->col, c);
        }
    }
    t->n = (int)n;
    adv(lx, n);
    return SL_OK;
}

int sql_next_token(sql_lexer *lx, sql_tok *t, char *err, size_t errlen)
{
    int unterminated;
    int rc = next_token(lx, t, &unterminated, err, errlen);
    if (rc == SL_ERR && lx->p < lx->end && !unterminated) adv(lx, 1);
    return rc;
}

static void *parser_alloc(size_t n) { return sl_malloc(n); }

/* Feed the tokens of text to a fresh parser, after `start` (0, or the
 * EXPR_START / ITEM_START token that selects an expression-only parse). */
static sql_node *parse_from(sql_arena *a, int start, const char *text, size_t len, int line,
                            int col, char *err, size_t errlen)
{
    sql_pctx ctx = {.a = a, .err = err, .errlen = errlen, .names = !start};
    void *p = sqlParseAlloc(parser_alloc);
    sql_lexer lx;
    sql_lexer_init(&lx, text, len, line, col);
    sql_tok t = {.line = line, .col = col};
    int rc;
    if (start) {
        sql_parse_snapshot(p, &ctx);
        sqlParse(p, start, t, &ctx);
    }
    while ((rc = sql_next_token(&lx, &t, err, errlen)) == SL_OK) {
        ctx.line = t.line;
        ctx.col = t.col;
        sql_parse_snapshot(p, &ctx);
        sqlParse(p, t.type, t, &ctx);
        if (ctx.failed) break;
    }
    if (rc == SL_ERR) ctx.failed = 1;
    if (!ctx.failed) { /* t: the end position */
        ctx.line = t.line;
        ctx.col = t.col;
        sql_parse_snapshot(p, &ctx);
        sqlParse(p, 0, t, &ctx);
    }
    sqlParseFree(p, free);
    return ctx.failed ? NULL : ctx.result;
}

sql_node *sql_parse(sql_arena *a, const char *text, size_t len, int line, int col, char *err,
                    size_t errlen)
{
    return parse_from(a, 0, text, len, line, col, err, errlen);
}

sql_node *sql_parse_expr(sql_arena *a, const char *text, size_t len, int item, char *err,
                         size_t errlen)
{
    return parse_from(a, item ? TK_ITEM_START : TK_EXPR_START, text, len, 1, 1, err, errlen);
}

int sql_split(const char *text, size_t len, size_t *end)
{
    sql_lexer lx;
    sql_lexer_init(&lx, text, len, 1, 1);
    int prev[3] = {0, 0, 0}, in_set = 0, any = 0;
    for (;;) {
        sql_tok t;
        int unterminated;
        int rc = next_token(&lx, &t, &unterminated, NULL, 0);
        if (rc == SL_DONE) return any ? 0 : -1;
        if (rc == SL_ERR) {
            if (unterminated) return 0;
            adv(&lx, 1); /* the parser will report it */
            any = 1;
            continue;
        }
        if (t.type == TK_SEMI && !in_set) {
            if (!any) continue; /* an empty statement */
            *end = (size_t)(lx.p - text);
            return 1;
        }
        any = 1;
        if (t.type == TK_BEGIN && prev[2] == TK_SET && prev[1] == TK_STATEMENT) in_set = 1;
        if (t.type == TK_END && in_set && prev[2] == TK_SEMI) in_set = 0;
        prev[0] = prev[1];
        prev[1] = prev[2];
        prev[2] = t.type;
    }
}
