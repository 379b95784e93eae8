/*
 * plan_int.h -- what the planner's files share: the plan being built, the
 * relation a query plans into, projection items, and the helpers of
 * sql/planner.c (queries, aggregates, INSERT) that sql/plan_join.c (joins)
 * and sql/plan_rank.c (Top-N, deduplication) build vertices with.
 *
 * The planner's helpers keep their short names in the source; the macros
 * below give them a prefixed symbol so they stay private to the planner.
 * Everything here runs on the thread planning one statement; a `plan` is
 * owned by sql_plan() for the length of the call.
 */
#ifndef SL_SQL_PLAN_INT_H
#define SL_SQL_PLAN_INT_H

#include <jansson.h>

#include "row.h"
#include "ast.h"
#include "sql_int.h"

#define rel_free sqlp_rel_free
#define rel_copy sqlp_rel_copy
#define dup0 sqlp_dup0
#define add_vertex sqlp_add_vertex
#define add_edge sqlp_add_edge
#define plan_err sqlp_plan_err
#define check_cols sqlp_check_cols
#define type_expr sqlp_type_expr
#define emit_calc sqlp_emit_calc
#define items_free sqlp_items_free
#define make_item sqlp_make_item
#define plan_from sqlp_plan_from
#define plan_query sqlp_plan_query
#define fnv1a sqlp_fnv1a
#define select_items sqlp_select_items
#define carry_time_attrs sqlp_carry_time_attrs
#define rel_is_attr sqlp_rel_is_attr
#define rel_use_attr sqlp_rel_use_attr
#define identity sqlp_identity

/* A join's columns by the names the query uses: (qualifier, column) -> the
 * column of the joined row (plan_join.c). */
typedef struct sql_join_map sql_join_map;

typedef struct rel {
    char *vid;        /* the vertex whose output this is */
    sl_schema sch;    /* its columns */
    int updating;     /* a changelog with -U/+U */
    char *updater;    /* the operator that made it updating */
    char *rowtime;    /* event-time attribute column, or NULL */
    char *proctime;   /* processing-time attribute column, or NULL */
    char *rtalts;     /* further columns that are the same event-time attribute (SELECT ts,
                         ts AS ts2, as Flink marks every one), '\x1f'-separated, or NULL; */
    char *rtalts_of;  /* valid while rowtime is still this (code that renames or drops the
                         attribute without knowing them leaves them stale: ignored then) */
    char *ptalts;     /* the same for proctime: its copies and further PROCTIME() items */
    char *ptalts_of;
    char *mrowtime;   /* after a regular, semi or anti join (IN / EXISTS): a side's event- */
    char *mproctime;  /* and processing-time attributes, materialized: Flink 2.3 still
                         plans group windows (TUMBLE(ts, ...) in GROUP BY) on them, on the
                         values under the watermarks that pass the join, but nothing else
                         that needs a time attribute (window TVFs, ORDER BY, interval joins,
                         deduplication; OVER orders them as plain values, a non-time sort),
                         so only the group-window planning reads these */
    char *ident;      /* what it reads, for uids: "clicks", "union(a,b)" */
    char *alias;      /* the name qualified columns use, or NULL */
    int windowed;     /* 2 when its windows align in the session zone (a
                         TIMESTAMP_LTZ attribute's), else 1: the result of an
                         event-time window aggregation or window
                         TVF, whose window_start / window_end columns a window
                         Top-N or window join uses */
    char *window;     /* a window TVF's windows, "HOP(5000,10000)" (ms), or NULL */
    sql_join_map *jmap; /* a join's: its inputs' qualified names, or NULL */
} rel;

typedef struct cte_scope {
    const sql_node *cte;           /* SQL_CTE */
    const struct cte_scope *outer;
} cte_scope;

typedef struct plan_joins plan_joins; /* joins planned in this job (plan_join.c) */

typedef struct plan {
    const sql_catalog *cat;
    json_t *vertices, *edges;
    sql_arena *arena;   /* rewritten expressions */
    char *err;
    size_t errlen;
    int depth;
    const char *ttl;    /* table.exec.state.ttl */
    const char *mb[4];  /* table.exec.mini-batch.enabled, .allow-latency, .size,
                           table.optimizer.agg-phase-strategy (planner.c: two phases) */
    const char *wm_interval; /* pipeline.auto-watermark-interval, or NULL */
    const char *idle_timeout; /* table.exec.source.idle-timeout, or NULL */
    const cte_scope *scope;
    struct rel *scans;  /* tables already read in this job, reused (a source per table) */
    int nscans;
    int schema_only;    /* sql_plan_schema (CREATE VIEW): only the columns matter */
    plan_joins *joins;
    const sql_node *hints; /* the hints of the SELECT whose join is being planned */
    const sql_node *push_where; /* its WHERE, whose one-side conjuncts filter that
                                   side before the join (plan_join.c), or NULL */
} plan;

typedef struct item {
    char *name;       /* output column */
    char *text;       /* calc projection entry "expr AS name" */
    sl_type type;
    const sql_node *expr;
    const sl_dtype *dt; /* the full type when it is not the basic one of `type` (a column
                         * passed through), else NULL */
} item;

/* An item's full type. */
static inline const sl_dtype *item_dt(const item *it)
{
    return it->dt ? it->dt : sl_dtype_basic(it->type);
}

void rel_free(rel *r);
void rel_copy(rel *dst, const rel *src);
char *dup0(const char *s);
uint32_t fnv1a(const char *s);
/* Add a vertex; returns its id (caller frees). `config` is stolen. */
char *add_vertex(plan *p, const char *base, const char *type, const char *uid_src, json_t *config,
                 const sl_schema *schema, int parallelism);
void add_edge(plan *p, const char *from, const char *to, const char *strategy, json_t *keys,
              int input);
int plan_err(plan *p, const sql_node *at, const char *fmt, ...) SL_PRINTF(3, 4);
int check_cols(plan *p, const sql_node *e, const rel *r);
void fold_field(plan *p, sql_node *e, const sl_schema *sch);
void fold_fields(plan *p, const sql_node *e, const rel *r);
int type_expr_dt(plan *p, const sql_node *e, const sl_schema *sch, sl_type *t,
                 const sl_dtype **dt);
int type_expr(plan *p, const sql_node *e, const sl_schema *sch, sl_type *t);
int emit_calc(plan *p, rel *in, item *items, int n, const sql_node *filter, const char *base);
/* plan_prune.c: a WHERE over a partitioned file-source scan prunes its partitions */
void sqlp_prune_partitions(plan *p, const rel *in, const sql_node *filter);
void sqlp_prune_shared(plan *p, const char *vid); /* a scan read twice: no pruning */
void items_free(item *it, int n);
int make_item(plan *p, item *it, const sql_node *e, const char *name, const sl_schema *sch);
int plan_from(plan *p, const sql_node *f, rel *out);
int plan_query(plan *p, const sql_node *q, rel *out);
int select_items(plan *p, const sql_node *list, rel *in, item **outp, int *np);
void carry_time_attrs(rel *r, item *its, int n);
/* Whether column `name` is r's event-time (rowtime 1) or processing-time
 * attribute: the attribute's column or one of its aliases (rel.rtalts). */
int rel_is_attr(const rel *r, int rowtime, const char *name);
/* Make alias `name` r's attribute column (a window names it), the old one
 * an alias; nothing when it is none. */
void rel_use_attr(rel *r, const char *name);
int identity(const item *its, int n, const sl_schema *sch);

/* ---- plan_reuse.c ---------------------------------------------------------- */

/* Merge the vertices of a finished job graph that compute the same thing
 * from the same inputs (sub-plan reuse); returns how many went. */
int sqlp_reuse_common(json_t *vertices, json_t *edges);

/* ---- plan_join.c ----------------------------------------------------------- */

/* FROM a JOIN b ON ...: an interval_join, regular_join, temporal_join or
 * window_join vertex. */
int sql_plan_join(plan *p, const sql_node *f, rel *out);
/* A SELECT over a join, with every column reference resolved to the joined
 * row's names (o.order_id -> order_id, p.order_id -> order_id0): *out is the
 * rewritten SELECT (in p->arena) or sel itself when its FROM is no join. */
int sql_join_resolve_select(plan *p, const sql_node *sel, const sql_node **out);
sql_join_map *sql_join_map_copy(const sql_join_map *m);
void sql_join_map_free(sql_join_map *m);
void sql_plan_joins_free(plan *p);

/* TABLE(TUMBLE|HOP|CUMULATE(TABLE t, DESCRIPTOR(ts), ...)) read without
 * aggregation: a window_tvf vertex appending window_start, window_end and
 * window_time (the new time attribute); *out is windowed. */
int sql_plan_window_tvf(plan *p, const sql_node *f, rel *out);

int sqlp_ttl_set(const plan *p);  /* table.exec.state.ttl is set and not 0 */

/* plan_groupwin.c: a SELECT grouped by a group window -- GROUP BY
 * TUMBLE(ts, size) / HOP(ts, slide, size) / SESSION(ts, gap) with
 * TUMBLE_START etc. -- rewritten into its window TVF aggregation; its FROM
 * item planned (and cached for the aggregation). *out is sel itself when it
 * has none; an auxiliary or window call without a window in GROUP BY is an
 * error. */
int sql_groupwin_rewrite(plan *p, const sql_node *sel, const sql_node **out);
/* A HOP window TVF aggregation (not a group window's) whose size is no
 * multiple of its slide: Flink's refusal. */
int sql_tvf_hop_check(plan *p, const sql_node *tvf);
/* A TUMBLE window TVF whose offset is not within (-size, size): Flink's
 * refusal (HOP and CUMULATE take any offset, modulo their period). */
int sql_tvf_offset_check(plan *p, const sql_node *tvf);

/* plan_lateral.c: FROM l, LATERAL TABLE(f(x)) [AS t(a, b)] (also CROSS JOIN
 * LATERAL, [LEFT] JOIN LATERAL ... ON TRUE): a correlate vertex calling the
 * user-defined table function f per row of l. With plan_join.c's cache of
 * planned joins and a column map naming l's columns and t's. */
int sql_plan_lateral(plan *p, const sql_node *f, rel *out);
/* FROM l CROSS JOIN UNNEST(a) [WITH ORDINALITY] [AS t(x)] (also a comma, [LEFT] JOIN
 * UNNEST ... ON TRUE): a correlate vertex in its unnest form. */
int sql_plan_unnest(plan *p, const sql_node *f, rel *out);
const rel *sqlp_joins_find(plan *p, const sql_node *f);
/* A new `a op b` (in p's arena) at at's position (planner.c). */
sql_node *sqlp_binop(plan *p, const sql_node *at, const char *op, sql_node *a, sql_node *b);
void sqlp_joins_add(plan *p, const sql_node *f, const rel *r);
sql_join_map *sqlp_lateral_map(const rel *l, const char *alias, const sl_schema *cols, int off);

/* plan_subquery.c: a SELECT with subqueries in WHERE or its list, or with
 * FROM a, b WHERE <join conditions>, rewritten into joins (*out in p->arena;
 * sel itself when it has neither). */
int sql_subquery_rewrite(plan *p, const sql_node *sel, const sql_node **out);

/* plan_rank.c. A SELECT over a subquery, CTE or view with ROW_NUMBER()
 * OVER (...): Top-N or deduplication. sql_is_rank_query says whether sel
 * is one. */
int sql_is_rank_query(const plan *p, const sql_node *sel);
/* The columns of a SELECT with a ROW_NUMBER() item itself, for a view that
 * a Top-N query will read (p->schema_only); SL_DONE when sel has none. */
int sql_rank_view_columns(plan *p, const sql_node *sel, rel *out);
int sql_plan_rank(plan *p, const sql_node *sel, rel *out);

/* plan_query.c: VALUES (SQL_VALUES), SELECT without FROM, SELECT DISTINCT,
 * UNION without ALL / INTERSECT / EXCEPT (SQL_UNION), column aliases
 * (query) AS t(a, b) over *io, ORDER BY / LIMIT (SQL_LIMIT). */
int sql_plan_values(plan *p, const sql_node *q, rel *out);
int sql_plan_nofrom(plan *p, const sql_node *sel, rel *out);
int sql_plan_select_distinct(plan *p, const sql_node *sel, rel *out);
int sql_plan_setop(plan *p, const sql_node *q, rel *out);
int sql_plan_col_aliases(plan *p, const sql_node *list, rel *io);
int sql_plan_limit(plan *p, const sql_node *q, rel *out);
/* plan_match.c. FROM t MATCH_RECOGNIZE (...): a match_recognize vertex and a
 * calc for its MEASURES. */
int sql_plan_match(plan *p, const sql_node *f, rel *out);
/* The branches of a set operation to one row type (names of the first,
 * least restrictive types), or Calcite's error at the branch. */
int sql_setop_align(plan *p, const char *what, rel *rs, const sql_node **br, int n);
/* plan_over.c. A SELECT whose list has OVER calls (that are no Top-N):
 * OVER aggregation. */
int sql_select_has_over(const sql_node *sel);
int sql_plan_over(plan *p, const sql_node *sel, rel *out);


/* plan_gsets.c. GROUP BY GROUPING SETS / ROLLUP / CUBE: the distinct group
 * expressions (borrowed from the tree) and the sets, each a bitmap of
 * exprs with the id its rows carry in the expand vertex's id column. */
typedef struct sql_gsets {
    const sql_node **exprs;
    int nexprs;
    uint64_t *sets;   /* nsets bitmaps: bit k = exprs[k] is in the set */
    int64_t *ids;     /* nsets ids: (GROUP_ID << nexprs) | the bitmap of exprs left out */
    int nsets;
} sql_gsets;
/* *g filled from GROUP BY `group` (may be NULL; sql_gsets_free): SL_OK, or
 * SL_DONE when it has no grouping-set item (a plain GROUP BY: g->exprs are
 * its items, and there are no sets); SL_ERR with the error set. */
int sql_gsets_of(plan *p, const sql_node *group, sql_gsets *g);
void sql_gsets_free(sql_gsets *g); /* NULL is a no-op */
/* Every GROUPING / GROUPING_ID / GROUP_ID call in e well formed, its
 * arguments among g's expressions (or window_start / window_end). */
int sql_gsets_check_args(plan *p, const sql_gsets *g, const sql_node *e, int window);
/* Replace, in *e (rewritten over the aggregate's output, keys[k] the key
 * column of exprs[k] or NULL for a window column), each such call with its
 * value: a CASE over the id column (idcol NULL: a plain GROUP BY, 0). */
int sql_gsets_functions(plan *p, const sql_gsets *g, char **keys, const char *idcol, sql_node **e);
/* The expand vertex after *in: keys[k] (NULL: none) per expression, the id
 * column appended; *in becomes its output. */
void sql_gsets_expand_vertex(plan *p, const sql_gsets *g, char **keys, const char *idcol, rel *in);

#endif
