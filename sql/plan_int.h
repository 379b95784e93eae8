/*
 * plan_int.h -- what the planner's files share: the plan being built, the
 * relation a query plans into, projection items, and the planner.c helpers
 * the other planner files (sql/plan_rank.c) build vertices with.
 *
 * Everything here runs on the thread planning one statement; a `plan` is
 * owned by sql_plan() for the length of the call.
 */
#ifndef SL_SQL_PLAN_INT_H
#define SL_SQL_PLAN_INT_H

#include <jansson.h>

#include "row.h"
#include "sql/ast.h"
#include "sql/sql_int.h"

typedef struct rel {
    char *vid;        /* the vertex whose output this is */
    sl_schema sch;    /* its columns */
    int updating;     /* a changelog with -U/+U */
    char *updater;    /* the operator that made it updating */
    char *rowtime;    /* event-time attribute column, or NULL */
    char *proctime;   /* processing-time attribute column, or NULL */
    char *ident;      /* what it reads, for uids: "clicks", "union(a,b)" */
    char *alias;      /* the name qualified columns use, or NULL */
    int windowed;     /* the result of an event-time window aggregation, whose
                         window_start / window_end columns a window Top-N uses */
} rel;

typedef struct cte_scope {
    const sql_node *cte;           /* SQL_CTE */
    const struct cte_scope *outer;
} cte_scope;

typedef struct plan {
    const sql_catalog *cat;
    json_t *vertices, *edges;
    sql_sbuf explain;
    sql_sbuf warnings;  /* submission warnings, one per line (sql_warn_unbounded) */
    sql_arena *arena;   /* rewritten expressions */
    char *err;
    size_t errlen;
    int depth;
    const char *ttl;    /* table.exec.state.ttl */
    const cte_scope *scope;
    struct rel *scans;  /* tables already read in this job, reused (a source per table) */
    int nscans;
    int schema_only;    /* sql_plan_schema (CREATE VIEW): only the columns matter */
} plan;

typedef struct item {
    char *name;       /* output column */
    char *text;       /* calc projection entry "expr AS name" */
    sl_type type;
    const sql_node *expr;
} item;

/* planner.c's helpers (see each one there). */
int sqlp_err(plan *p, const sql_node *at, const char *fmt, ...) SL_PRINTF(3, 4);
char *sqlp_add_vertex(plan *p, const char *base, const char *type, const char *uid_src,
                      json_t *config, const sl_schema *schema, int parallelism, int updating);
void sqlp_add_edge(plan *p, const char *from, const char *to, const char *strategy, json_t *keys,
                   int input);
int sqlp_plan_query(plan *p, const sql_node *q, rel *out);
int sqlp_plan_from(plan *p, const sql_node *f, rel *out);
int sqlp_emit_calc(plan *p, rel *in, item *items, int n, const sql_node *filter, const char *base);
int sqlp_select_items(plan *p, const sql_node *list, rel *in, item **outp, int *np);
void sqlp_items_free(item *it, int n);
int sqlp_check_cols(plan *p, const sql_node *e, const rel *r);
void sqlp_carry_time_attrs(rel *r, item *its, int n);
int sqlp_identity(const item *its, int n, const sl_schema *sch);
void sqlp_rel_free(rel *r);
uint32_t sqlp_fnv1a(const char *s);
int sqlp_ttl_set(const plan *p);  /* table.exec.state.ttl is set and not 0 */

/* plan_rank.c. A SELECT over a subquery, CTE or view with ROW_NUMBER()
 * OVER (...): Top-N or deduplication. sql_is_rank_query says whether sel
 * is one. */
int sql_is_rank_query(const plan *p, const sql_node *sel);
/* The columns of a SELECT with a ROW_NUMBER() item itself, for a view that
 * a Top-N query will read (p->schema_only); SL_DONE when sel has none. */
int sql_rank_view_columns(plan *p, const sql_node *sel, rel *out);
int sql_plan_rank(plan *p, const sql_node *sel, rel *out);

/* A stateful operator whose state nothing bounds (no window, interval or
 * TTL): a warning at submission naming the operator, its key and the
 * setting that would bound it. */
void sql_warn_unbounded(plan *p, const char *op, const char *vid, const char *key);

#endif
