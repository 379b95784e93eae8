/*
 * ast.h -- the syntax tree of Sluice's Flink SQL dialect.
 *
 * One generic node type serves statements, queries and expressions: a kind,
 * the position of its first token (1-based line and column in the script),
 * up to two strings and an ordered list of children. The lemon grammar
 * (lang/grammar.y) builds it; the catalog and planner read it. Every node and
 * string of one parse is owned by an sql_arena and freed with it, so error
 * paths in the grammar never leak and never double-free.
 *
 * Child layout per kind is documented at each kind below; a missing
 * optional child is NULL.
 */
#ifndef SL_SQL_AST_H
#define SL_SQL_AST_H

#include <stddef.h>

typedef enum {
    /* statements */
    SQL_CREATE_TABLE, /* s name; s2 COMMENT or NULL; flags TEMP|IFNE; kids: [0] LIST of elements (NULL: none written),
                         [1] LIST of OPTs, [2] LIKE source (IDENT s name, kids: like options,
                         IDENTs s "INCLUDING ALL" ...) or NULL, [3] AS query or NULL, [4]
                         PARTITIONED BY LIST of IDENTs or NULL (sql/catalog_ddl.c) */
    SQL_CREATE_VIEW,  /* s name; flags TEMP|IFNE; kids: [0] query, [1] LIST of column IDENTs or absent */
    SQL_DROP,         /* s name; flags VIEW|IFEX|TEMP */
    SQL_SHOW,         /* s "TABLES" | "VIEWS" | "FUNCTIONS" | "JOBS" | "COLUMNS" | "CREATE TABLE" |
                         "CREATE VIEW" | "CATALOGS" | "DATABASES" | "CURRENT CATALOG" | "CURRENT
                         DATABASE"; s2 the table (COLUMNS, CREATE) or FROM database; kids: [0] LIKE
                         pattern (IDENT s, flags NOT) or absent */
    SQL_DESCRIBE,     /* s name */
    SQL_SET,          /* s key or NULL (list all); s2 value */
    SQL_RESET,        /* s key or NULL (all) */
    SQL_INSERT,       /* s table; kids: [0] query, [1] LIST of IDENT target columns or absent,
                         [2] LIST of hints (INSERT INTO t with an OPTIONS hint) or absent */
    SQL_STMT_SET,     /* kids: INSERTs */
    SQL_BEGIN_SET,    /* the SQL client's BEGIN STATEMENT SET; */
    SQL_END_SET,      /* ... END; */
    SQL_EXPLAIN,      /* flags CHANGELOG; kids: [0] statement or query */
    SQL_QUERY_STMT,   /* a plain query; kids: [0] query */
    SQL_STOP_JOB,     /* s job id; flags SAVEPOINT|DRAIN */
    /* table elements */
    SQL_COLUMN,       /* s name; s2 type text ("TIMESTAMP(3)"); flags NOTNULL | METADATA | VIRTUAL;
                         kids: [0] METADATA FROM key (IDENT) or absent, [1] an inline PRIMARY KEY
                         NOT ENFORCED (PKEY without kids) or absent */
    SQL_COMPUTED,     /* s name; kids: [0] expr */
    SQL_WATERMARK,    /* s column; kids: [0] expr */
    SQL_PKEY,         /* s the CONSTRAINT name or NULL; flags ENFORCED (refused); kids: IDENTs */
    SQL_OPTION,       /* s key; s2 value */
    /* queries */
    SQL_SELECT,       /* flags DISTINCT; kids: [0] LIST items, [1] from, [2] where, [3] LIST group, [4] having,
                         [5] LIST of hints (IDENT s = name, kids: OPTIONs) or absent */
    SQL_UNION,        /* s NULL (UNION), "INTERSECT" or "EXCEPT"; flags ALL; kids: [0] left, [1] right */
    SQL_WITH,         /* kids: [0] LIST of CTEs, [1] body */
    SQL_CTE,          /* s name; kids: [0] query */
    SQL_ITEM,         /* s alias or NULL; kids: [0] expr (or SQL_STAR) */
    SQL_FROM_TABLE,   /* s name; s2 alias; t FOR SYSTEM_TIME AS OF e: kids [0] e, [1] IDENT
                         SYSTEM_TIME, [2] IDENT OF (the words as written, checked by the planner);
                         [3] LIST of hints (an OPTIONS hint after the name, sql/catalog_ddl.c) */
    SQL_FROM_QUERY,   /* s2 alias; kids: [0] query, [1] LIST of column alias IDENTs or absent */
    SQL_FROM_TVF,     /* s TUMBLE|HOP|CUMULATE|SESSION; s2 alias; kids: [0] FROM_TABLE, [1] IDENT
                         time column, [2] LIST of argument exprs, [3] LIST partition keys or NULL */
    SQL_FROM_JOIN,    /* s INNER|LEFT|RIGHT|FULL (NULL: a comma); kids: [0] left, [1] right, [2] condition or NULL */
    /* expressions */
    SQL_COL,          /* s name; s2 qualifier or NULL; flags QUOTED */
    SQL_NUM,          /* s text as written */
    SQL_STR,          /* s value, quotes removed and '' unescaped */
    SQL_BOOL,         /* flags 1 = TRUE */
    SQL_NULL,
    SQL_INTERVAL,     /* s value text; s2 qualifier ("SECOND", "MINUTE TO SECOND", "SECOND(3)");
                         kids: [0] LIST of the qualifier's IDENT units (s2: precision) */
    SQL_TS_LIT,       /* s value text */
    SQL_BINOP,        /* s operator ("+", "AND", "||", "<>"); kids: a, b */
    SQL_UNOP,         /* s "-" | "+" | "NOT"; kids: a */
    SQL_IS,           /* s "NULL" | "UNKNOWN" | "TRUE" | "FALSE"; flags NOT; kids: a */
    SQL_BETWEEN,      /* flags NOT; kids: a, lo, hi */
    SQL_IN,           /* flags NOT; kids: a, LIST */
    SQL_LIKE,         /* flags NOT; kids: a, pattern[, escape] */
    SQL_CASE,         /* kids: [0] operand or NULL, [1] LIST of WHENs, [2] else or NULL */
    SQL_WHEN,         /* kids: cond, result */
    SQL_CAST,         /* s type text; flags TRY; kids: a[, LIST qualifier of CAST AS INTERVAL] */
    SQL_FUNC,         /* s name as written; flags DISTINCT|STAR_ARG|FILTER|FROM; kids: args
                         (FROM: see grammar.y; then the FILTER condition); s2 TRIM's side, a JSON aggregate's
                         "NULL ON NULL" / "ABSENT ON NULL", or NULL */
    SQL_POSITION,     /* kids: needle, haystack */
    SQL_STAR,         /* s qualifier or NULL */
    /* helpers */
    SQL_LIST,
    SQL_IDENT,        /* s name */
    SQL_OVER,         /* s function ("ROW_NUMBER", "SUM"); kids: [0] LIST partition exprs
                         or NULL, [1] LIST of ORDERs, [2] the frame (a LIST, see
                         grammar.y's frame_opt) or NULL, [3] the call (a FUNC with
                         its arguments); s2 the window's name for OVER w (kids
                         [0..2] NULL while no WINDOW clause defines it); oline/ocol
                         the window's position */
    SQL_ORDER,        /* flags DESC; kids: [0] expr */
    SQL_VALUES,       /* kids: [0] LIST of rows, each a LIST of exprs */
    SQL_LIMIT,        /* kids: [0] query, [1] LIST of ORDERs or NULL, [2] LIMIT / FETCH count
                         or NULL, [3] OFFSET or NULL */
    SQL_FROM_MATCH,   /* MATCH_RECOGNIZE: s2 alias; kids: see grammar.y */
    /* user-defined functions (sql/catalog_udf.c, sql/plan_lateral.c) */
    SQL_CREATE_FUNCTION, /* s name; s2 identifier; flags TEMP|SYSTEM|IFNE (ALTER|IFEX); kids: [0] LANGUAGE
                            IDENT or NULL, [1] USING JAR IDENT (s path) or NULL */
    SQL_DROP_FUNCTION,   /* s name; flags TEMP|SYSTEM|IFEX */
    SQL_DESCRIBE_FUNCTION, /* s name */
    SQL_JAR,             /* s "ADD" | "REMOVE"; s2 path */
    SQL_FROM_LATERAL,    /* s2 alias; kids: [0] the call (FUNC), [1] LIST of column IDENTs or NULL */
    SQL_SUBQUERY,        /* an expression over a query (sql/plan_subquery.c): s "IN" | "EXISTS" |
                            "SCALAR"; flags NOT; kids: [0] the operand of IN or NULL, [1] query */
    /* catalogs, databases, ALTER (sql/catalog_ddl.c) */
    SQL_ALTER,        /* s name; s2 what: "RENAME" (kids [0] IDENT new name), "RENAME COLUMN"
                         (kids [0] old, [1] new IDENT), "SET" (kids [0] LIST of OPTs), "RESET"
                         (kids [0] LIST of IDENT keys), "ADD" / "MODIFY" (kids [0] LIST of IDENTs
                         s "FIRST" / "AFTER" / NULL, s2 the AFTER column, kids [0] the element),
                         "DROP" (kids [0] LIST of IDENT columns), "DROP PRIMARY KEY", "DROP
                         WATERMARK", "AS" (views; kids [0] query); flags VIEW|IFEX */
    SQL_CATALOG_STMT, /* s "CREATE DATABASE" | "DROP DATABASE" | "USE" | "USE CATALOG" | "CREATE
                         CATALOG" | "DROP CATALOG"; s2 name; flags IFNE|IFEX|CASCADE; kids: [0]
                         LIST of OPTs or absent */
    SQL_FROM_UNNEST      /* s2 alias; kids: [0] LIST of exprs, [1] LIST of column IDENTs or NULL,
                            [2] the IDENT after WITH (ORDINALITY) or NULL */,
    /* constructors and access (issue 29) */
    SQL_FIELD,        /* x.name of a ROW: s the field name; kids: [0] x; oline/ocol the name's */
    SQL_ELEMENT,      /* x[i]: an ARRAY's element i (1-based) or a MAP's value at key i;
                         kids: [0] x, [1] i; oline/ocol the '[' */
    SQL_CTOR,         /* s "ARRAY" | "MAP": ARRAY[e, ...], MAP[k, v, ...]; kids: the elements
                         (ROW(...) is a FUNC named ROW) */
    SQL_GSETS         /* an item of GROUP BY (sql/plan_gsets.c): s "GROUPING SETS" | "ROLLUP" |
                         "CUBE" | "()" (the empty set); kids: the elements -- expressions, (a, b)
                         as a FUNC named ROW, nested GSETS */
} sql_kind;

/* flags */
#define SQL_F_TEMP 1
#define SQL_F_IFNE 2     /* IF NOT EXISTS */
#define SQL_F_IFEX 4     /* IF EXISTS */
#define SQL_F_VIEW 8
#define SQL_F_NOT 16
#define SQL_F_DISTINCT 32
#define SQL_F_ALL 64
#define SQL_F_TRY 128
#define SQL_F_STAR_ARG 256
#define SQL_F_QUOTED 512
#define SQL_F_NOTNULL 1024
#define SQL_F_CHANGELOG 2048
#define SQL_F_SAVEPOINT 4096
#define SQL_F_DRAIN 8192
#define SQL_F_FILTER 16384 /* FUNC: agg(...) FILTER (WHERE c), c the last child */
#define SQL_F_DESC 32768   /* ORDER: DESC */
#define SQL_F_FROM 65536  /* SUBSTRING(s FROM a FOR b), TRIM(c FROM s) */
#define SQL_F_METADATA 131072 /* COLUMN: a METADATA column (kids [0]: FROM key or NULL) */
#define SQL_F_VIRTUAL 262144  /* COLUMN: METADATA ... VIRTUAL (read-only) */
#define SQL_F_PLACING 524288  /* FUNC: OVERLAY(s PLACING r FROM p [FOR n]) */
#define SQL_F_SYSTEM (1 << 22) /* CREATE / DROP TEMPORARY SYSTEM FUNCTION */
#define SQL_F_LATERAL (1 << 24) /* FROM_QUERY: LATERAL (query) (sql/plan_subquery.c) */
#define SQL_F_TO (1 << 23)  /* FUNC: FLOOR(x TO unit) / CEIL(x TO unit), kids [x, IDENT unit] */
#define SQL_F_ALTER (1 << 24) /* CREATE_FUNCTION: ALTER FUNCTION (flags IFEX, not IFNE) */
#define SQL_F_ENFORCED (1 << 27) /* PKEY: PRIMARY KEY without NOT ENFORCED (refused) */
#define SQL_F_CASCADE (1 << 28)  /* DROP DATABASE ... CASCADE */
#define SQL_F_RESOLVED (1 << 29) /* FROM_TABLE / INSERT: s is the catalog's name (catalog_ddl.c) */
#define SQL_F_TRUE 1

typedef struct sql_node sql_node;
struct sql_node {
    sql_kind kind;
    int line, col;      /* of the node's first token, 1-based */
    int oline, ocol;    /* of the operator's token (BINOP, IS, IN, LIKE, BETWEEN) or the
                           literal's string (INTERVAL, TIMESTAMP); 0 when none */
    int flags;          /* SQL_F_* */
    char *s, *s2;       /* see sql_kind; arena-owned */
    sql_node **kids;    /* arena-owned array */
    int nkids, cap;
    const char *src;    /* start of the node's text in the script (statements only) */
    size_t srclen;
};

/* Everything one parse allocates. */
typedef struct sql_arena sql_arena;
sql_arena *sql_arena_new(void);
void sql_arena_destroy(sql_arena *a); /* NULL is a no-op */
void *sql_arena_alloc(sql_arena *a, size_t n); /* zeroed; aborts on OOM */
char *sql_arena_strndup(sql_arena *a, const char *s, size_t n);

sql_node *sql_node_new(sql_arena *a, sql_kind kind, int line, int col);
/* A new node like e -- its kind, positions, flags and strings -- without
 * kids: what a rewrite starts from before it adds e's kids rewritten. */
sql_node *sql_node_like(sql_arena *a, const sql_node *e);
/* Append `kid` (may be NULL, keeping the slot) and return n. */
sql_node *sql_node_add(sql_arena *a, sql_node *n, sql_node *kid);
sql_node *sql_kid(const sql_node *n, int i); /* NULL when out of range */

/* The node kind's name, for tests and error messages ("SELECT"). */
const char *sql_kind_name(sql_kind k);

/* Write a compact S-expression of the tree into buf (tests): e.g.
 * "(BINOP + (COL a) (BINOP * (NUM 2) (COL b)))". Returns buf. */
char *sql_node_dump(const sql_node *n, char *buf, size_t len);

#endif
