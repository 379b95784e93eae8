/*
 * bridge.c -- SQL over a C job's streams (api/bridge.h).
 *
 * Registering a stream writes the CREATE TEMPORARY TABLE a user would have
 * written -- the stream's columns, then what the explicit schema adds
 * (computed columns, a WATERMARK) -- with WITH ('connector' = 'datastream',
 * 'vertex' = <id>), and runs it through the session, so the catalog checks
 * computed columns and watermarks exactly as for any table. The planner
 * reads such a table from its vertex (no source vertex is added: the rows
 * are already flowing there). Planning a query goes through
 * sql_plan_into, which appends the query's vertices to the C job's graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sl.h"
#include "parse.h"
#include "sql_int.h"

/* s as a SQL string literal's body: quotes doubled. */
static void put_literal(sql_sbuf *b, const char *s)
{
    for (; *s; s++) sql_sb_put(b, *s == '\'' ? "''" : s, 1 + (*s == '\''));
}

/* How many physical columns the schema text declares: -1 when it does not
 * parse (the CREATE TABLE run later reports where). */
static int declared_columns(const char *schema)
{
    sql_sbuf b = {0};
    sql_sb_fmt(&b, "CREATE TEMPORARY TABLE t (%s\n) WITH ('connector' = 'datastream')", schema);
    sql_arena *a = sql_arena_new();
    char err[256];
    sql_node *list = sql_parse(a, b.p, b.len, 1, 1, err, sizeof err);
    int n = -1;
    const sql_node *st = list && list->nkids == 1 ? list->kids[0] : NULL;
    if (st && st->kind == SQL_CREATE_TABLE) {
        const sql_node *elems = sql_kid(st, 0);
        n = 0;
        for (int i = 0; elems && i < elems->nkids; i++) n += elems->kids[i]->kind == SQL_COLUMN;
    }
    sql_arena_destroy(a);
    free(b.p);
    return n;
}

/* The table's physical columns must be the stream's, in order. */
static int check_physical(const sql_table *t, const sl_schema *cols, char *err, size_t errlen)
{
    int k = 0;
    for (int i = 0; i < t->ncols; i++) {
        const sql_column *c = &t->cols[i];
        if (c->expr || c->proctime) continue;
        if (k >= cols->n)
            return sl_seterr(err, errlen, "fromDataStream '%s': column '%s' is not a column of the "
                             "stream (it has %d)", t->name, c->name, cols->n);
        const sl_field *f = &cols->fields[k++];
        if (strcasecmp(c->name, f->name) != 0 || c->type != f->type)
            return sl_seterr(err, errlen, "fromDataStream '%s': physical column %d is declared "
                             "'%s' %s but the stream's is '%s' %s (declare the stream's columns "
                             "in order, or none)", t->name, k, c->name, sl_type_name(c->type),
                             f->name, sl_type_name(f->type));
    }
    if (k != cols->n)
        return sl_seterr(err, errlen, "fromDataStream '%s': the schema declares %d of the "
                         "stream's %d columns (declare all, in order, or none)", t->name, k,
                         cols->n);
    return SL_OK;
}

int sl_sql_bridge_register(sl_sql_session *s, const char *name, const char *vertex,
                           const sl_schema *cols, const char *rowtime, const char *schema,
                           char *err, size_t errlen)
{
    if (!name || !*name) return sl_seterr(err, errlen, "fromDataStream: the table needs a name");
    if (!schema) schema = "";
    int declared = *schema ? declared_columns(schema) : 0; /* -1: the CREATE below says why */
    sql_sbuf b = {0};
    char *q = sql_quote_ident(name);
    sql_sb_fmt(&b, "CREATE TEMPORARY TABLE %s (", q);
    free(q);
    for (int i = 0; declared <= 0 && i < cols->n; i++) {
        q = sql_quote_ident(cols->fields[i].name);
        sql_sb_fmt(&b, "%s%s %s", i ? ", " : "", q, sl_type_name(cols->fields[i].type));
        free(q);
    }
    if (*schema) sql_sb_fmt(&b, "%s%s", declared <= 0 && cols->n ? ", " : "", schema);
    sql_sb_str(&b, "\n) WITH ('connector' = 'datastream', 'vertex' = '"); /* past a -- comment */
    put_literal(&b, vertex);
    if (rowtime) {
        sql_sb_str(&b, "', 'rowtime' = '");
        put_literal(&b, rowtime);
    }
    sql_sb_str(&b, "')");
    char why[768];
    int rc = sql_session_create_stream_table(s, b.p, why, sizeof why);
    free(b.p);
    if (rc != SL_OK)
        return sl_seterr(err, errlen, "fromDataStream '%s': %s", name, why);
    const sql_table *t = sql_catalog_find(sql_session_catalog(s), name);
    if (check_physical(t, cols, err, errlen) != SL_OK) {
        q = sql_quote_ident(name);
        char *drop = sl_sprintf("DROP TEMPORARY TABLE %s", q);
        sl_sql_result r;
        if (sl_sql_execute(s, drop, strlen(drop), 1, 1, &r, NULL, 0) == SL_OK) sl_sql_result_clear(&r);
        free(drop);
        free(q);
        return SL_ERR;
    }
    return SL_OK;
}

int sl_sql_bridge_plan(sl_sql_session *s, const char *query, json_t *vertices, json_t *edges,
                       sl_sql_stream *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    sl_schema_init(&out->cols);
    sql_arena *a = sql_arena_new();
    sql_node *list = sql_parse(a, query, strlen(query), 1, 1, err, errlen);
    int rc = list ? SL_OK : SL_ERR;
    if (rc == SL_OK && (list->nkids != 1 || list->kids[0]->kind != SQL_QUERY_STMT))
        rc = sl_seterr(err, errlen, "line 1, column 1: a stream is made of one query (SELECT ...), "
                       "not %s", list->nkids ? "this statement" : "nothing");
    if (rc == SL_OK) {
        char *const *keys, *const *vals;
        int n = sl_sql_options(s, &keys, &vals);
        rc = sql_plan_into(sql_session_catalog(s), (char **)keys, (char **)vals, n,
                           sql_kid(list->kids[0], 0), vertices, edges, out, err, errlen);
    }
    sql_arena_destroy(a);
    return rc;
}
