/*
 * catalog_int.h -- what sql/catalog.c (the session, CREATE TABLE's checks,
 * SET, SHOW, DESCRIBE) and sql/catalog_ddl.c (catalogs and databases, name
 * resolution, CREATE TABLE ... LIKE / AS, ALTER, SHOW CREATE, OPTIONS
 * hints) share. Private to those two files.
 */
#ifndef SL_CATALOG_INT_H
#define SL_CATALOG_INT_H

#include "sql_int.h"

#define SQL_DEFAULT_CATALOG "default_catalog"
#define SQL_DEFAULT_DATABASE "default_database"

typedef struct sql_jcat sql_jcat; /* a JDBC catalog (catalog_jdbc.c) */

typedef struct sql_dbref {
    char *catalog, *name;
} sql_dbref;

struct sl_sql_session {
    sql_catalog cat;       /* every table and view of every catalog, keyed by
                              sql_table.name (catalog_ddl.c) */
    char **okeys, **ovals; /* SET options, in the order first set */
    int nopts;
    sql_arena **arenas;    /* kept parses */
    int narenas;
    int in_set;            /* between BEGIN STATEMENT SET and END */
    sql_node *set;         /* the collected INSERTs (a STMT_SET node) */
    sql_arena *set_arena;
    int bridging;          /* api/bridge.c is registering a C job's stream: WITH
                              ('connector' = 'datastream', ...) is its own, not checked */
    sql_udfs *udfs;        /* CREATE FUNCTION, ADD JAR (catalog_udf.c) */
    char **cats;           /* catalogs, in the order created; [0] default_catalog */
    int ncats;
    sql_dbref *dbs;        /* databases of every catalog, in the order created */
    int ndbs;
    char *cur_cat, *cur_db; /* USE CATALOG / USE */
    sql_jcat *jcats;        /* the catalogs of cats backed by PostgreSQL (type 'jdbc') */
    int njcats;
    int jcat_loading;       /* catalog_jdbc.c is building a table read from the server */
    long stmt_seq;          /* statements executed (a JDBC catalog's tables are read once
                               per statement, catalog_jdbc.c) */
    const char *stmt_text; /* the statement being executed (borrowed during
                              sl_sql_execute), from line:col of the script */
    size_t stmt_len;
    int stmt_line, stmt_col;
};

/* Where a name points: its catalog, database and own name, and the key the
 * catalog stores it under (sql_table.name). All four owned. */
typedef struct sql_loc {
    char *cat, *db, *obj, *key;
} sql_loc;
void sql_loc_free(sql_loc *l);

/* ---- catalog.c ---------------------------------------------------------- */

void sql_cat_table_free(sql_table *t); /* NULL is a no-op */
/* Build and check a table from a CREATE TABLE node's elements (kid 0, may be
 * NULL), WITH options (kid 1), PARTITIONED BY (kid 4) and COMMENT (s2),
 * named `key` in messages. Returns it (caller owns) or NULL with err. */
sql_table *sql_cat_build_table(sl_sql_session *s, const sql_node *st, const char *key, char *err,
                               size_t errlen);
/* The connector checks of CREATE TABLE on t's options; `with` a LIST whose
 * kid i gives option i's position. */
int sql_cat_check_options(sql_table *t, const sql_node *with, char *err, size_t errlen);
void sql_cat_add(sl_sql_session *s, sql_table *t); /* the catalog takes t */
/* DESCRIBE st->s (Flink's six columns) */
int sql_cat_describe(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                     size_t errlen);

/* ---- catalog_ddl.c ------------------------------------------------------ */

void sql_ddl_init(sl_sql_session *s);    /* default_catalog.default_database */
void sql_ddl_destroy(sl_sql_session *s);
/* Resolve a path as the grammar writes it ("t", "db.t", "cat.`d.b`.t") against the
 * current catalog and database. need_db: the database must exist (else an error
 * at line:col). */
int sql_ddl_locate(const sl_sql_session *s, const char *path, int line, int col, int need_db,
                   sql_loc *out, char *err, size_t errlen);
/* When path names a table of a JDBC catalog not read by this statement yet:
 * read it (sql_jcat_load); SL_OK otherwise. */
int sql_ddl_load(sl_sql_session *s, const char *path, int line, int col, char *err,
                 size_t errlen);
/* SL_ERR (Flink's "Could not execute <what> in path ...") when path is in a JDBC catalog. */
int sql_ddl_refuse_jdbc(const sl_sql_session *s, const char *path, const char *what, int line,
                        int col, char *err, size_t errlen);
/* The table a path names, or NULL. */
sql_table *sql_ddl_find(const sl_sql_session *s, const char *path);
/* Put every table reference of statement st (FROM, INSERT INTO, views' bodies
 * not) into the catalog's keys, once (SQL_F_RESOLVED). With `view` (zeroed by
 * the caller): when OPTIONS hints name tables, *view becomes a copy of the
 * catalog in which each hinted table is a copy with the hints' options
 * (sql_ddl_view_free), else it stays empty. */
int sql_ddl_refs(sl_sql_session *s, sql_arena *a, sql_node *st, sql_catalog *view, char *err,
                 size_t errlen);
void sql_ddl_view_free(sql_catalog *view, const sql_catalog *base);
/* CREATE TABLE (plain, LIKE, AS SELECT), ALTER, catalogs and databases, and the
 * SHOW forms below. */
int sql_ddl_create_table(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r,
                         char *err, size_t errlen);
int sql_ddl_execute(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r,
                    char *err, size_t errlen);
/* SHOW TABLES / VIEWS / COLUMNS / CREATE TABLE / CREATE VIEW / CATALOGS / DATABASES /
 * CURRENT ...: SL_OK / SL_ERR, or 1 when st is none of them */
int sql_ddl_show(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                 size_t errlen);
/* SELECT * FROM (q) AS name(cols...): a view's query under its column list (arena a). */
sql_node *sql_ddl_view_columns(sql_arena *a, sql_node *q, sql_node *cols, const char *name);
/* The statement's text from node n's first token to its end (a view's query as
 * written); caller frees. */
char *sql_ddl_text_from(const sl_sql_session *s, const sql_node *n);
/* catalog.c's plan_job for CTAS: plan INSERT `ins` into a job result */
int sql_cat_plan_job(sl_sql_session *s, const sql_node *ins, sl_sql_result *r, char *err,
                     size_t errlen);

/* ---- catalog_jdbc.c ----------------------------------------------------- */

/* The JDBC catalog named cat, or NULL (an in-memory one, or none). */
const sql_jcat *sql_jcat_find(const sl_sql_session *s, const char *cat);
const char *sql_jcat_default_db(const sql_jcat *c);
/* CREATE CATALOG st->s2 WITH ('type' = 'jdbc', ...): checks the options,
 * connects to the default database, adds it to s->jcats (the caller adds the
 * name to s->cats). */
int sql_jcat_create(sl_sql_session *s, const sql_node *st, char *err, size_t errlen);
void sql_jcat_drop(sl_sql_session *s, const char *cat);
void sql_jcat_free_all(sl_sql_session *s);
/* The server's databases / database db's tables (schema.table), sorted; the
 * caller frees each name and the array. */
int sql_jcat_databases(const sql_jcat *c, char ***names, int *n, char *err, size_t errlen);
int sql_jcat_tables(const sql_jcat *c, const char *db, char ***names, int *n, char *err,
                    size_t errlen);
/* 1 when the server has database db, 0 when not, -1 (err) when it cannot be asked */
int sql_jcat_has_db(const sql_jcat *c, const char *db, char *err, size_t errlen);
/* When l is in a JDBC catalog and this statement has not read it yet: read
 * its definition from the server into the session's tables, replacing the
 * one an earlier statement read (an error at line:col when it cannot). SL_OK
 * for other catalogs. */
int sql_jcat_load(sl_sql_session *s, const sql_loc *l, int line, int col, char *err,
                  size_t errlen);

#endif
