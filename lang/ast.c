/*
 * ast.c -- allocation and dumping of SQL syntax trees.
 *
 * The arena is a chain of blocks; nodes, their child arrays and their
 * strings come from it and are never freed one by one. Child arrays grow by
 * copying into a fresh arena block (the old one is simply abandoned), which
 * wastes a little memory for statements but keeps ownership trivial.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl.h"
#include "ast.h"

typedef struct block {
    struct block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} block;

struct sql_arena {
    block *head;
};

sql_arena *sql_arena_new(void)
{
    return sl_calloc(1, sizeof(sql_arena));
}

void sql_arena_destroy(sql_arena *a)
{
    if (!a) return;
    for (block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a);
}

void *sql_arena_alloc(sql_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = n > 8192 ? n : 8192;
        b = sl_malloc(sizeof(block) + sz);
        b->used = 0;
        b->size = sz;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *sql_arena_strndup(sql_arena *a, const char *s, size_t n)
{
    char *p = sql_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

sql_node *sql_node_new(sql_arena *a, sql_kind kind, int line, int col)
{
    sql_node *n = sql_arena_alloc(a, sizeof(sql_node));
    n->kind = kind;
    n->line = line;
    n->col = col;
    return n;
}

sql_node *sql_node_like(sql_arena *a, const sql_node *e)
{
    sql_node *n = sql_node_new(a, e->kind, e->line, e->col);
    n->oline = e->oline;
    n->ocol = e->ocol;
    n->flags = e->flags;
    n->s = e->s;
    n->s2 = e->s2;
    return n;
}

sql_node *sql_node_add(sql_arena *a, sql_node *n, sql_node *kid)
{
    if (n->nkids == n->cap) {
        int cap = n->cap ? n->cap * 2 : 4;
        sql_node **k = sql_arena_alloc(a, sizeof(sql_node *) * (size_t)cap);
        if (n->nkids) memcpy(k, n->kids, sizeof(sql_node *) * (size_t)n->nkids);
        n->kids = k;
        n->cap = cap;
    }
    n->kids[n->nkids++] = kid;
    return n;
}

sql_node *sql_kid(const sql_node *n, int i)
{
    return n && i >= 0 && i < n->nkids ? n->kids[i] : NULL;
}

static const char *const kind_names[] = {
    "CREATE_TABLE", "CREATE_VIEW", "DROP", "SHOW", "DESCRIBE", "SET", "RESET", "INSERT",
    "STMT_SET", "BEGIN_SET", "END_SET", "EXPLAIN", "QUERY", "STOP_JOB", "COLUMN", "COMPUTED", "WATERMARK",
    "PKEY", "OPTION", "SELECT", "UNION", "WITH", "CTE", "ITEM", "TABLE", "SUBQUERY", "TVF",
    "JOIN", "COL", "NUM", "STR", "BOOL", "NULL", "INTERVAL", "TS", "BINOP", "UNOP", "IS",
    "BETWEEN", "IN", "LIKE", "CASE", "WHEN", "CAST", "FUNC", "POSITION", "STAR", "LIST",
    "IDENT", "OVER", "ORDER", "VALUES", "LIMIT", "FROM_MATCH",
    "CREATE_FUNCTION", "DROP_FUNCTION", "DESCRIBE_FUNCTION", "JAR", "LATERAL", "SUBQUERY",
    "ALTER", "CATALOG_STMT", "UNNEST", "FIELD", "ELEMENT", "CTOR", "GSETS"};

const char *sql_kind_name(sql_kind k)
{
    return (size_t)k < SL_ARRAY_LEN(kind_names) ? kind_names[k] : "?";
}

typedef struct {
    char *buf;
    size_t len, pos;
} dumpbuf;

static void put(dumpbuf *d, const char *s)
{
    while (*s && d->pos + 1 < d->len) d->buf[d->pos++] = *s++;
    d->buf[d->pos] = '\0';
}

static void dump(dumpbuf *d, const sql_node *n)
{
    if (!n) {
        put(d, "-");
        return;
    }
    put(d, "(");
    put(d, sql_kind_name(n->kind));
    if (n->flags & SQL_F_NOT && n->kind >= SQL_IS) put(d, " NOT");
    if (n->s) {
        put(d, " ");
        put(d, n->s);
    }
    if (n->s2) {
        put(d, " ");
        put(d, n->s2);
    }
    /* an interval's qualifier units are in s2 already */
    int nk = n->kind == SQL_INTERVAL ? 0 : n->kind == SQL_CAST && n->nkids > 1 ? 1 : n->nkids;
    for (int i = 0; i < nk; i++) {
        put(d, " ");
        dump(d, n->kids[i]);
    }
    put(d, ")");
}

char *sql_node_dump(const sql_node *n, char *buf, size_t len)
{
    dumpbuf d = {buf, len, 0};
    if (len) buf[0] = '\0';
    dump(&d, n);
    return buf;
}
