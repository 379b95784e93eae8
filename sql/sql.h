/*
 * Layer sql/ (docs/ARCHITECTURE.md, "Layers"): over operators/: the SQL
 * session, catalog, validator and planner (window TVFs, GROUP BY, joins,
 * Top-N) turning statements into JSON job graphs, and EXPLAIN.
 *
 * sql.h -- Sluice's Flink SQL: a session (its catalog and SET options) that
 * executes statements one at a time, the way Flink's SQL client does.
 *
 * DDL, SET, SHOW and DESCRIBE change or read the session; INSERT INTO and
 * EXECUTE STATEMENT SET plan a JSON job graph (docs/JOBS.md) that the caller
 * submits with POST /jobs; a plain SELECT plans one with a `collect` sink
 * whose rows the caller reads back; EXPLAIN returns the plan as text. The catalog
 * lives in the session, i.e. in the client process: it is lost when the
 * session ends, exactly as Flink's in-memory catalog.
 *
 * Not thread-safe: one session belongs to one thread.
 */
#ifndef SL_SQL_H
#define SL_SQL_H

#include <stddef.h>

#include "row.h"

typedef struct sl_sql_session sl_sql_session;

typedef enum {
    SL_SQL_OK,   /* done; the client prints "[INFO] Execute statement succeed." */
    SL_SQL_TEXT, /* text to print (SHOW, DESCRIBE, SET, EXPLAIN) */
    SL_SQL_JOB,  /* a job graph to submit */
    SL_SQL_NONE, /* nothing to say (an empty statement) */
    SL_SQL_STOP_JOB, /* STOP JOB: the client stops `jobid` (REST) */
    SL_SQL_SHOW_JOBS, /* SHOW JOBS: the client lists the cluster's jobs (REST) */
    SL_SQL_QUERY      /* a plain SELECT: submit `job`, then read its rows back
                         (GET /jobs/:jobid/results) and show them in the result mode */
} sl_sql_kind;

typedef struct sl_sql_result {
    sl_sql_kind kind;
    char *text;       /* SL_SQL_TEXT: what to print, ending in '\n' */
    char *job;        /* SL_SQL_JOB: the job graph (JSON text); EXPLAIN (SL_SQL_TEXT) too */
    char *savepoint;  /* SL_SQL_JOB: execution.savepoint.path, or NULL */
    int allow_nonrestored; /* SL_SQL_JOB: execution.savepoint.ignore-unclaimed-state */
    char *warning;    /* SL_SQL_JOB: session options that do not reach the job, or NULL */
    char *message;    /* SL_SQL_OK: the [INFO] line without the prefix, or NULL */
    char *jobid;      /* SL_SQL_STOP_JOB: 32 lowercase hex digits */
    int with_savepoint, drain; /* SL_SQL_STOP_JOB */
    char *target_dir; /* SL_SQL_STOP_JOB: state.savepoints.dir of the session, or NULL */
    int ncols;        /* SL_SQL_QUERY: the result's columns; SL_SQL_TEXT of SHOW, DESCRIBE,
                         SET and EXPLAIN: the same text as a result set (Flink's columns) */
    char **col_names, **col_types; /* their names and types ("BIGINT", "TIMESTAMP(3)") */
    int nrows;        /* SL_SQL_TEXT with columns: the rows ... */
    char **cells;     /* ... nrows * ncols values, row by row; NULL is SQL NULL */
    int changelog;    /* SL_SQL_QUERY: the rows are a changelog with -U/+U */
    char *result_mode; /* SL_SQL_QUERY: sql-client.execution.result-mode (lower case) */
    long long max_table_rows; /* SL_SQL_QUERY: sql-client.execution.max-table-result.rows, 0 = default */
    long long limit_rows; /* SL_SQL_QUERY: LIMIT n without ORDER BY: the result ends after n rows
                             (the client then cancels the job); 0 = none */
} sl_sql_result;

sl_sql_session *sl_sql_session_new(void);
void sl_sql_session_destroy(sl_sql_session *s); /* NULL is a no-op */

/* Execute the statement(s) in text[0..len), whose first character is at
 * line:col of the script (for error positions). A chunk holds one
 * statement (see sql_split in lang/parse.h); several are refused. Returns
 * SL_OK with *r filled (clear it with sl_sql_result_clear), or SL_ERR with
 * the reason in err ("line 3, column 17: ..."); the session is unchanged by
 * a failed statement. */
int sl_sql_execute(sl_sql_session *s, const char *text, size_t len, int line, int col,
                   sl_sql_result *r, char *err, size_t errlen);
void sl_sql_result_clear(sl_sql_result *r);

/* Flink's boxed table ("+---+ | a | ... N rows in set"); caller frees. */
char *sl_sql_tableau(const char *const *head, int ncol, char ***rows, int nrows);

/* The session's SET options, in the order first set: returns their number;
 * keys and values borrowed until the next statement. */
int sl_sql_options(const sl_sql_session *s, char *const **keys, char *const **vals);

/* A session option (SET), or NULL; borrowed until it changes. */
const char *sl_sql_option(const sl_sql_session *s, const char *key);

/* What a query planned into a job graph gave. */
typedef struct sl_sql_stream {
    char *vertex;      /* the vertex the result leaves from */
    sl_schema cols;    /* its columns */
    int updating;      /* the rows are a changelog with -U/+U/-D */
    char *updater;     /* when updating: the operator that made it so */
    char *rowtime;     /* the result's event-time attribute, or NULL */
} sl_sql_stream;
void sl_sql_stream_clear(sl_sql_stream *o); /* frees what *o holds, zeroes it */

#endif
