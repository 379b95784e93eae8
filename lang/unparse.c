/*
 * unparse.c -- writes SQL expressions back as calc expression text (the
 * "projection" and "filter" strings of a job graph), and the small text
 * buffer the planner builds its strings with.
 *
 * The output is fully determined by the tree: a child that is itself an
 * operator expression is parenthesized, so the text means the same under
 * calc's precedence rules whatever they are; identifiers that are not plain
 * (or are keywords, Sluice's or Flink's reserved words) are back-quoted;
 * CAST targets Sluice stores alike get calc's canonical type name.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sl.h"
#include "parse.h"


static int plain_ident(const char *s)
{
    if (!s[0] || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') return 0;
    return sql_keyword(s, (int)strlen(s)) == 0 && !sql_flink_reserved_column(s, strlen(s));
}

/* Set while sql_unparse_written runs (on this thread): columns keep their
 * table qualifier and ROW field names are quoted only when they must be. */
static _Thread_local int g_written;

static void put_ident(sql_sbuf *b, const char *s, int quoted)
{
    if (!quoted && plain_ident(s)) {
        sql_sb_str(b, s);
        return;
    }
    sql_sb_str(b, "`");
    for (const char *p = s; *p; p++) {
        if (*p == '`') sql_sb_str(b, "`");
        sql_sb_put(b, p, 1);
    }
    sql_sb_str(b, "`");
}

char *sql_quote_ident(const char *s)
{
    sql_sbuf b = {0};
    put_ident(&b, s, 0);
    return sql_sb_take(&b);
}

static int compound(const sql_node *e)
{
    switch (e->kind) {
    case SQL_BINOP: case SQL_BETWEEN: case SQL_IN: case SQL_LIKE: case SQL_IS: return 1;
    case SQL_UNOP: return 1;
    default: return 0;
    }
}

static void unparse(sql_sbuf *b, const sql_node *e);

static void unparse_sub(sql_sbuf *b, const sql_node *e)
{
    if (compound(e)) {
        sql_sb_str(b, "(");
        unparse(b, e);
        sql_sb_str(b, ")");
    } else {
        unparse(b, e);
    }
}

static void put_string(sql_sbuf *b, const char *s)
{
    sql_sb_str(b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'') sql_sb_str(b, "'");
        sql_sb_put(b, p, 1);
    }
    sql_sb_str(b, "'");
}

/* A CAST target as calc names it: synonyms Sluice stores the same way
 * become the canonical name (VARCHAR -> STRING, REAL -> FLOAT); DECIMAL(p, s), DATE, TIME, TIMESTAMP and INTERVAL
 * targets stay as written, and so do CHAR(n) and VARCHAR(n). */
const char *sql_cast_type(const char *t)
{
    static const struct {
        const char *name, *as;
    } syn[] = {{"INTEGER", "INT"},     {"REAL", "FLOAT"},     {"VARCHAR", "STRING"},
               {"CHAR", "STRING"},     {"BOOL", "BOOLEAN"},   {"VARBINARY", "BYTES"},
               {"BINARY", "BYTES"}};
    size_t n = 0;
    if (strchr(t, '<') || strstr(t, " ARRAY") || strstr(t, " MULTISET") || !strncasecmp(t, "ROW(", 4))
        return t; /* a nested type: written as it is */
    while (t[n] && t[n] != '(' && t[n] != ' ') n++;
    /* CHAR(n) and VARCHAR(n) keep their length: a CAST pads or cuts to it */
    if (t[n] == '(' && ((n == 4 && !strncasecmp(t, "CHAR", 4)) || (n == 7 && !strncasecmp(t, "VARCHAR", 7))))
        return t;
    for (size_t i = 0; i < SL_ARRAY_LEN(syn); i++)
        if (strlen(syn[i].name) == n && !strncasecmp(syn[i].name, t, n)) return syn[i].as;
    return t;
}

static void unparse(sql_sbuf *b, const sql_node *e)
{
    switch (e->kind) {
    case SQL_COL:
        if (g_written && e->s2) {
            put_ident(b, e->s2, 0);
            sql_sb_str(b, ".");
        }
        put_ident(b, e->s, e->flags & SQL_F_QUOTED);
        break;
    case SQL_NUM: sql_sb_str(b, e->s); break;
    case SQL_STR: put_string(b, e->s); break;
    case SQL_BOOL: sql_sb_str(b, e->flags & SQL_F_TRUE ? "TRUE" : "FALSE"); break;
    case SQL_NULL: sql_sb_str(b, "NULL"); break;
    case SQL_INTERVAL:
        sql_sb_str(b, "INTERVAL ");
        put_string(b, e->s);
        sql_sb_fmt(b, " %s", e->s2);
        break;
    case SQL_TS_LIT:
        sql_sb_fmt(b, "%s ", e->s2 ? e->s2 : "TIMESTAMP");
        put_string(b, e->s);
        break;
    case SQL_BINOP:
        if (sql_kid(e, 2)) { /* (d1 - d2) DAY: a datetime difference as an interval */
            sql_sb_str(b, "(");
            unparse_sub(b, e->kids[0]);
            sql_sb_str(b, " - ");
            unparse_sub(b, e->kids[1]);
            sql_sb_fmt(b, ") %s", e->s2);
            break;
        }
        unparse_sub(b, e->kids[0]);
        sql_sb_fmt(b, " %s ", e->s);
        unparse_sub(b, e->kids[1]);
        break;
    case SQL_UNOP:
        sql_sb_str(b, e->s);
        if (!strcmp(e->s, "NOT")) sql_sb_str(b, " ");
        unparse_sub(b, e->kids[0]);
        break;
    case SQL_IS:
        unparse_sub(b, e->kids[0]);
        sql_sb_fmt(b, " IS %s%s", e->flags & SQL_F_NOT ? "NOT " : "", e->s);
        break;
    case SQL_BETWEEN:
        unparse_sub(b, e->kids[0]);
        sql_sb_str(b, e->flags & SQL_F_NOT ? " NOT BETWEEN " : " BETWEEN ");
        unparse_sub(b, e->kids[1]);
        sql_sb_str(b, " AND ");
        unparse_sub(b, e->kids[2]);
        break;
    case SQL_IN:
        unparse_sub(b, e->kids[0]);
        sql_sb_str(b, e->flags & SQL_F_NOT ? " NOT IN (" : " IN (");
        for (int i = 0; i < e->kids[1]->nkids; i++) {
            if (i) sql_sb_str(b, ", ");
            unparse(b, e->kids[1]->kids[i]);
        }
        sql_sb_str(b, ")");
        break;
    case SQL_LIKE:
        unparse_sub(b, e->kids[0]);
        sql_sb_fmt(b, " %s%s ", e->flags & SQL_F_NOT ? "NOT " : "", e->s ? e->s : "LIKE");
        unparse_sub(b, e->kids[1]);
        if (sql_kid(e, 2)) {
            sql_sb_str(b, " ESCAPE ");
            unparse_sub(b, e->kids[2]);
        }
        break;
    case SQL_POSITION:
        sql_sb_str(b, "POSITION(");
        unparse_sub(b, e->kids[0]);
        sql_sb_str(b, " IN ");
        unparse_sub(b, e->kids[1]);
        sql_sb_str(b, ")");
        break;
    case SQL_CASE:
        sql_sb_str(b, "CASE");
        if (e->kids[0]) {
            sql_sb_str(b, " ");
            unparse(b, e->kids[0]);
        }
        for (int i = 0; i < e->kids[1]->nkids; i++) {
            const sql_node *w = e->kids[1]->kids[i];
            sql_sb_str(b, " WHEN ");
            unparse(b, w->kids[0]);
            sql_sb_str(b, " THEN ");
            unparse(b, w->kids[1]);
        }
        if (e->kids[2]) {
            sql_sb_str(b, " ELSE ");
            unparse(b, e->kids[2]);
        }
        sql_sb_str(b, " END");
        break;
    case SQL_CAST:
        sql_sb_str(b, e->flags & SQL_F_TRY ? "TRY_CAST(" : "CAST(");
        unparse(b, e->kids[0]);
        sql_sb_fmt(b, " AS %s)", sql_cast_type(e->s));
        break;
    case SQL_FUNC:
        sql_sb_fmt(b, "%s(", e->s);
        for (char *p = b->p + b->len - strlen(e->s) - 1; *p && *p != '('; p++)
            *p = (char)toupper((unsigned char)*p);
        if (e->flags & SQL_F_FROM) { /* SUBSTRING(s FROM a FOR b), TRIM([side] [c] FROM s) */
            if (e->s2) sql_sb_fmt(b, "%s ", e->s2);
            if (e->kids[0]) {
                unparse(b, e->kids[0]);
                sql_sb_str(b, " ");
            }
            sql_sb_str(b, "FROM ");
            unparse(b, e->kids[1]);
            if (sql_kid(e, 2)) {
                sql_sb_str(b, " FOR ");
                unparse(b, e->kids[2]);
            }
            sql_sb_str(b, ")");
            break;
        }
        if (e->flags & SQL_F_TO) { /* FLOOR(ts TO unit), CEIL(ts TO unit) */
            unparse(b, e->kids[0]);
            sql_sb_fmt(b, " TO %s)", e->kids[1]->s);
            break;
        }
        if (e->flags & SQL_F_DISTINCT) sql_sb_str(b, "DISTINCT ");
        if (e->flags & SQL_F_STAR_ARG) sql_sb_str(b, "*");
        if (e->flags & SQL_F_PLACING) { /* OVERLAY(s PLACING r FROM p [FOR n]) */
            unparse(b, e->kids[0]);
            sql_sb_str(b, " PLACING ");
            unparse(b, e->kids[1]);
            sql_sb_str(b, " FROM ");
            unparse(b, e->kids[2]);
            if (sql_kid(e, 3)) {
                sql_sb_str(b, " FOR ");
                unparse(b, e->kids[3]);
            }
            sql_sb_str(b, ")");
            break;
        }
        for (int i = 0; i < e->nkids - (e->flags & SQL_F_FILTER ? 1 : 0); i++) {
            if (i) sql_sb_str(b, !strcasecmp(e->s, "JSON_OBJECTAGG") ? " VALUE " : ", ");
            /* a time unit (TIMESTAMPADD(SECOND, ...)) is a word, not a column to quote */
            if (i == 0 && e->kids[0]->kind == SQL_COL && !(e->kids[0]->flags & SQL_F_QUOTED) &&
                (!strcasecmp(e->s, "TIMESTAMPADD") || !strcasecmp(e->s, "TIMESTAMPDIFF")))
                sql_sb_str(b, e->kids[0]->s);
            else
                unparse(b, e->kids[i]);
        }
        if (e->s2) sql_sb_fmt(b, " %s", e->s2); /* JSON_ARRAYAGG(x NULL ON NULL) */
        sql_sb_str(b, ")");
        if (e->flags & SQL_F_FILTER) {
            sql_sb_str(b, " FILTER (WHERE ");
            unparse(b, e->kids[e->nkids - 1]);
            sql_sb_str(b, ")");
        }
        break;
    case SQL_CTOR: /* ARRAY[...], MAP[...] */
        sql_sb_fmt(b, "%s[", e->s);
        for (int i = 0; i < e->nkids; i++) {
            if (i) sql_sb_str(b, ", ");
            unparse(b, e->kids[i]);
        }
        sql_sb_str(b, "]");
        break;
    case SQL_GSETS: /* GROUP BY's ROLLUP(a, b), GROUPING SETS ((a), ()), () */
        if (!strcmp(e->s, "()")) {
            sql_sb_str(b, "()");
            break;
        }
        sql_sb_fmt(b, "%s(", e->s);
        for (int i = 0; i < e->nkids; i++) {
            if (i) sql_sb_str(b, ", ");
            unparse(b, e->kids[i]);
        }
        sql_sb_str(b, ")");
        break;
    case SQL_ELEMENT:
        unparse_sub(b, e->kids[0]);
        sql_sb_str(b, "[");
        unparse(b, e->kids[1]);
        sql_sb_str(b, "]");
        break;
    case SQL_FIELD: /* r.f, x.f.g: the base's own text, a name after the dot */
        unparse_sub(b, e->kids[0]);
        sql_sb_str(b, ".");
        put_ident(b, e->s, !g_written);
        break;
    case SQL_STAR: sql_sb_str(b, "*"); break;
    case SQL_IDENT: sql_sb_str(b, e->s); break; /* EXTRACT's unit */
    default: sql_sb_fmt(b, "<%s>", sql_kind_name(e->kind)); break;
    }
}

char *sql_unparse(const sql_node *e)
{
    sql_sbuf b = {0};
    unparse(&b, e);
    return sql_sb_take(&b);
}

char *sql_unparse_written(const sql_node *e)
{
    sql_sbuf b = {0};
    g_written = 1;
    unparse(&b, e);
    g_written = 0;
    return sql_sb_take(&b);
}

