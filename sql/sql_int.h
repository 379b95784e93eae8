/*
 * sql_int.h -- what the SQL catalog (sql/catalog.c) and planner
 * (sql/planner.c) share inside the sql/ module.
 */
#ifndef SL_SQL_INT_H
#define SL_SQL_INT_H

#include <jansson.h>

#include "row.h"
#include "sl.h"
#include "ast.h"
#include "parse.h"
#include "sql.h"
#include "text.h" /* sl_edit_distance, for did-you-mean */

typedef struct sql_column {
    char *name;
    char *type_text;  /* as declared, "TIMESTAMP(3)"; NULL for computed columns */
    sl_type type;
    const sl_dtype *dt; /* the declared full type (physical and metadata columns; NULL for
                         * computed ones: the basic one of type) */
    sql_node *expr;   /* computed column's expression, or NULL */
    int proctime;     /* computed as PROCTIME() */
    int notnull;      /* declared NOT NULL (or in the primary key) */
    char *meta;       /* METADATA [FROM 'key']: the key (kafka: offset, partition,
                         timestamp, topic, headers); NULL for a physical column */
    int virt;         /* METADATA ... VIRTUAL: read only, not a sink column */
    int view_attr;    /* a view's column that is its query's time attribute: 1 event time
                       * (*ROWTIME*), 2 processing time (*PROCTIME*), as DESCRIBE shows */
} sql_column;

/* The type of PROCTIME(), as Flink's: TIMESTAMP_LTZ(3) NOT NULL (an instant,
 * read in the session time zone; DESCRIBE adds *PROCTIME*). */
static inline const sl_dtype *sql_proctime_dt(void)
{
    const sl_dtype *dt = NULL;
    sl_dtype_parse("TIMESTAMP_LTZ(3) NOT NULL", &dt, NULL, 0);
    return dt; /* interned by the first call (the table has room for it) */
}

/* A column's full type. */
static inline const sl_dtype *sql_col_dt(const sql_column *c)
{
    return c->dt ? c->dt : sl_dtype_basic(c->type);
}

/* Is c a column an INSERT writes (physical, or metadata that is not VIRTUAL)? */
static inline int sql_column_written(const sql_column *c) { return !c->expr && !c->virt; }

typedef struct sql_table {
    char *name;
    int is_view, temporary;
    sql_column *cols;
    int ncols;
    char *wm_col;     /* WATERMARK FOR column, or NULL */
    int64_t wm_delay; /* its delay in ms */
    char *wm_text;    /* the watermark expression as written back */
    char **pk;
    int npk;
    char **keys, **vals; /* WITH options, in order */
    int nopts;
    const char *connector; /* borrowed from vals */
    sql_node *query;  /* views: the query (in the session's arenas) */
    char *query_text; /* views: the query as written */
    char *catalog, *database, *obj; /* where it lives and its own name; `name` is the
                                       catalog's key: obj in default_catalog.default_database,
                                       else db.obj or cat.db.obj (sql/catalog_ddl.c) */
    char **part;      /* PARTITIONED BY columns, in order */
    int npart;
    sql_node *wm_expr; /* the WATERMARK expression (in the session's arenas) */
    char *pk_name;    /* CONSTRAINT name of the primary key, or NULL */
    char *comment;    /* COMMENT '...' of the table, or NULL */
    long jcat_stmt;   /* a JDBC catalog's table: the statement that read it (catalog_jdbc.c) */
} sql_table;

typedef struct sql_catalog {
    sql_table **t;
    int n;
} sql_catalog;

sql_table *sql_catalog_find(const sql_catalog *c, const char *name);
/* PARTITIONED BY of a filesystem table as its vertices' "partition-by" ("dt;hr"). */
json_t *sql_table_partition_by(const sql_table *t);
/* A WITH option of t, or NULL; borrowed. */
const char *sql_table_option(const sql_table *t, const char *key);

/* For the DataStream bridge (api/bridge.c): the session's catalog, and
 * CREATE TABLE `ddl` run with WITH ('connector' = 'datastream', 'vertex' =
 * ..., 'rowtime' = ...) accepted -- a table whose rows are a C job's stream,
 * which the planner reads from that vertex instead of adding a source. */
const sql_catalog *sql_session_catalog(const sl_sql_session *s);
int sql_session_create_stream_table(sl_sql_session *s, const char *ddl, char *err, size_t errlen);

/* Kafka tables (connector kafka or upsert-kafka), for the planner: whether
 * t is one, whether reading it gives a changelog (upsert-kafka, or kafka
 * with debezium-json), and the vertex config of its source (sink 0) or
 * sink (sink 1): the WITH options of that direction as Flink names them,
 * the PRIMARY KEY as "primary-key". */
int sql_table_is_kafka(const sql_table *t);
int sql_table_changelog(const sql_table *t);
json_t *sql_kafka_config(const sql_table *t, int sink);
/* jdbc tables (sql/jdbc_table.c): the catalog's check of a table's options
 * (line, col: its WITH clause), and the vertex config of its sink (sink 1:
 * url, table-name, credentials, sink.*, the PRIMARY KEY as "primary-key")
 * or of a lookup join against it (sink 0: the lookup.* options). */
int sql_jdbc_check(const sql_table *t, int line, int col, char *err, size_t errlen);
/* The first column of t the jdbc connector cannot carry (a type beyond the
 * classic seven, or TIME/TIMESTAMP beyond the millisecond), or NULL: a JDBC
 * catalog's table keeps Flink's types and is refused here when a job uses it. */
const sql_column *sql_jdbc_uncarried(const sql_table *t);
json_t *sql_jdbc_config(const sql_table *t, int sink);

/* The kafka connector's metadata keys a source reads (writable 0) or a sink
 * writes (1), as a list for messages; whether a sink writes `key`. */
const char *sql_kafka_meta_keys(int writable);
int sql_kafka_meta_writable(const char *key);

/* Plan INSERT / STMT_SET (stmt) into a job graph. `opts` are the session's
 * SET options (keys, vals, n). Returns the job (caller decrefs) or NULL with
 * err. What
 * the job's operators warn about (unbounded state) they declare themselves:
 * sl_jobgraph_warnings of the parsed job. */
json_t *sql_plan(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                 const sql_node *stmt, char *err, size_t errlen);

/* EXPLAIN's text of a planned job (sql/explain.c): "== Optimized Execution
 * Plan ==", then each vertex as `id[type] uid=... {config}`; with
 * changelog_mode, each one's changelogMode=[I,UB,UA,D] (NONE for sinks).
 * Caller frees. */
char *sql_explain_text(const json_t *job, int changelog_mode);

/* Plan a plain query (SQL_QUERY_STMT) whose rows go to the client: a job
 * whose `collect` sink the client reads through the JobManager. *cols gets
 * the result's columns (initialized by the caller; caller frees), *updating
 * whether they are a changelog with -U/+U. */
json_t *sql_plan_query(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                       const sql_node *stmt, sl_schema *cols, int *updating, char *err,
                       size_t errlen);

/* Plan `query` (a SQL_QUERY node) into an existing job graph: its vertices
 * and edges are appended to `vertices` and `edges` (ids kept unique among
 * what is there), and *out (zeroed by the caller; sl_sql_stream_clear) names
 * the vertex whose output is the query's result. For api/bridge.c. */
int sql_plan_into(const sql_catalog *cat, char **okeys, char **ovals, int nopts,
                  const sql_node *query, json_t *vertices, json_t *edges, sl_sql_stream *out,
                  char *err, size_t errlen);

/* Validate a query (for CREATE VIEW) and give its output columns; returns
 * SL_OK with *schema filled (caller frees with sl_schema_free). */
int sql_plan_schema(const sql_catalog *cat, const sql_node *query, sl_schema *schema, char *err,
                    size_t errlen);
/* sql_plan_schema with the query's time attributes: the names of its event-time
 * and processing-time columns (caller-freed; NULL: none), each list of the
 * attribute's column and the other columns that are the same attribute
 * (SELECT ts, ts AS ts2; PROCTIME() twice), '\x1f'-separated. */
int sql_plan_schema_attrs(const sql_catalog *cat, const sql_node *query, sl_schema *schema,
                          char **rowtime, char **proctime, char *err, size_t errlen);
/* Whether name is one of the '\x1f'-separated names of list (NULL: none),
 * case-insensitively (catalog.c). */
int sql_names_have(const char *list, const char *name);

/* plan_query.c: LIMIT n without ORDER BY at the top of a query: n (the rows
 * the query ends after, the client stops there); 0 for any other query. */
long long sql_query_row_limit(const sql_node *q);

/* ---- user-defined functions (catalog_udf.c) ---------------------------------- */

typedef struct sql_udfs sql_udfs;
sql_udfs *sql_udfs_new(void);
void sql_udfs_destroy(sql_udfs *u); /* NULL is a no-op */
/* CREATE / DROP / DESCRIBE FUNCTION, ADD / REMOVE JAR, SHOW JARS, SHOW USER FUNCTIONS */
int sql_udfs_execute(sql_udfs *u, const sql_node *st, sl_sql_result *r, char *err, size_t errlen);
const struct sl_udf_set *sql_udfs_set(const sql_udfs *u); /* for the expression checker */
char **sql_udfs_names(const sql_udfs *u, int *n); /* sorted; caller frees the array only */
/* List in each calc / correlate vertex of `job` the functions it calls
 * ("functions"), and the session's python.fn-execution.bundle.* options. */
void sql_udfs_attach(const sql_udfs *u, json_t *job, char *const *keys, char *const *vals,
                     int nopts);
/* catalog.c's result set of a SHOW or DESCRIBE (Flink's columns) */
void sql_table_result(sl_sql_result *r, int ncols, const char *const *names,
                      const char *const *types, char *const *cells, int nrows);

#endif
