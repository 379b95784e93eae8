/*
 * plan_prune.c -- partition pruning for partitioned filesystem tables (Flink's
 * filesystem connector skips the partitions a WHERE rules out).
 *
 * When a WHERE is planned as a calc straight over a `file-source` scan (or
 * over the watermark vertex right after it), the conjuncts of the condition
 * (its top-level ANDs) that read only the table's partition columns, through
 * operators whose result depends on their operands alone (comparisons, IN
 * lists, BETWEEN, LIKE, IS, CASE, CAST, arithmetic; no function calls, no
 * subqueries), are written, ANDed, into the source's "partition-filter". The
 * source evaluates it once per partition directory and does not list the
 * files of a directory for which it is not TRUE (operators/file_source.c).
 * The calc still applies the whole WHERE to every row, so pruning only skips
 * files none of whose rows could pass: the result is the same.
 *
 * A scan is shared by every reader of the table in a job (a statement set, a
 * self-join); one reader's WHERE must not cut the rows another reads, so a
 * second reader sets the filter to "" (no pruning) for good.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan_int.h"

static json_t *vertex_by_id(const plan *p, const char *vid)
{
    for (size_t i = 0; vid && i < json_array_size(p->vertices); i++) {
        json_t *v = json_array_get(p->vertices, i);
        const char *id = json_string_value(json_object_get(v, "id"));
        if (id && !strcmp(id, vid)) return v;
    }
    return NULL;
}

static const char *vtype(json_t *v)
{
    return v ? json_string_value(json_object_get(v, "type")) : NULL;
}

/* The config of the partitioned file-source that rel vertex `vid` is (or
 * the watermark vertex right after it), or NULL. */
static json_t *file_source_config(const plan *p, const char *vid)
{
    json_t *v = vertex_by_id(p, vid);
    if (vtype(v) && !strcmp(vtype(v), "watermark")) {
        const char *from = NULL;
        int n = 0;
        for (size_t i = 0; i < json_array_size(p->edges); i++) {
            json_t *e = json_array_get(p->edges, i);
            const char *to = json_string_value(json_object_get(e, "to"));
            if (to && !strcmp(to, vid)) {
                from = json_string_value(json_object_get(e, "from"));
                n++;
            }
        }
        v = n == 1 ? vertex_by_id(p, from) : NULL;
    }
    if (!vtype(v) || strcmp(vtype(v), "file-source")) return NULL;
    json_t *cfg = json_object_get(v, "config");
    return json_is_string(json_object_get(cfg, "partition-by")) ? cfg : NULL;
}

/* Is `name` one of the ';'-separated columns of `pb`? */
static int is_partition_col(const char *pb, const char *name)
{
    size_t n = strlen(name);
    for (const char *c = pb; *c;) {
        const char *end = strchr(c, ';');
        size_t len = end ? (size_t)(end - c) : strlen(c);
        if (len == n && !strncasecmp(c, name, n)) return 1;
        if (!end) break;
        c = end + 1;
    }
    return 0;
}

/* Does e read only partition columns, and nothing but its operands? */
static int prunable(const sql_node *e, const char *pb)
{
    if (!e) return 1;
    switch (e->kind) {
    case SQL_COL: return e->s && is_partition_col(pb, e->s);
    case SQL_NUM: case SQL_STR: case SQL_BOOL: case SQL_NULL: case SQL_INTERVAL: case SQL_TS_LIT:
        return 1;
    case SQL_BINOP: case SQL_UNOP: case SQL_IS: case SQL_BETWEEN: case SQL_IN: case SQL_LIKE:
    case SQL_CASE: case SQL_WHEN: case SQL_CAST: case SQL_LIST:
        for (int i = 0; i < e->nkids; i++)
            if (!prunable(e->kids[i], pb)) return 0;
        return 1;
    default: return 0;
    }
}

/* Append the prunable conjuncts of e to *b ("(c1) AND (c2)"). */
static void conjuncts(const sql_node *e, const char *pb, sql_sbuf *b)
{
    if (e->kind == SQL_BINOP && e->s && !strcasecmp(e->s, "AND") && e->nkids == 2) {
        conjuncts(e->kids[0], pb, b);
        conjuncts(e->kids[1], pb, b);
        return;
    }
    /* a condition on nothing (a constant) prunes nothing useful: leave it */
    if (e->kind == SQL_BINOP || e->kind == SQL_UNOP || e->kind == SQL_IS ||
        e->kind == SQL_BETWEEN || e->kind == SQL_IN || e->kind == SQL_LIKE) {
        if (!prunable(e, pb)) return;
        char *t = sql_unparse(e);
        sql_sb_fmt(b, "%s(%s)", b->len ? " AND " : "", t);
        free(t);
    }
}

void sqlp_prune_partitions(plan *p, const rel *in, const sql_node *filter)
{
    json_t *cfg = file_source_config(p, in->vid);
    if (!cfg || !filter) return;
    if (json_object_get(cfg, "partition-filter")) { /* a second reader: no pruning */
        json_object_set_new(cfg, "partition-filter", json_string(""));
        return;
    }
    sql_sbuf b = {0};
    conjuncts(filter, json_string_value(json_object_get(cfg, "partition-by")), &b);
    if (b.len) json_object_set_new(cfg, "partition-filter", json_string(b.p));
    sl_buf_free(&b);
}

void sqlp_prune_shared(plan *p, const char *vid)
{
    json_t *cfg = file_source_config(p, vid);
    if (cfg) json_object_set_new(cfg, "partition-filter", json_string(""));
}
