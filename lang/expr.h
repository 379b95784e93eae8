/*
 * expr.h -- Flink SQL scalar expressions: parse, type-check, evaluate.
 *
 * Used by the `calc` operator (projection and filter) and by the SQL
 * planner, which type-checks every expression it writes. An expression is parsed against an input schema into a typed
 * tree; every column reference is resolved to an index and every operator's
 * types are checked at parse time, so evaluation cannot meet a type error.
 *
 * Supported: literals (integers, decimals, 'strings' with '' escape, TRUE,
 * FALSE, NULL, TIMESTAMP '2026-01-01 00:00:00', INTERVAL '5' SECOND),
 * column names (case-insensitive, optionally `back-quoted`), + - * / %,
 * unary -, = <> != < <= > >=, AND OR NOT, IS [NOT] NULL, IS [NOT] TRUE/FALSE,
 * BETWEEN, IN (list), LIKE, CASE WHEN .. THEN .. [ELSE ..] END, CASE x WHEN,
 * CAST(x AS type), and functions TO_TIMESTAMP_LTZ(n, 0|3), TO_TIMESTAMP(str),
 * CONCAT, UPPER, LOWER, CHAR_LENGTH, ABS, MOD, COALESCE, IF... (see expr.c).
 * SQL three-valued logic: NULL propagates; a filter passes only on TRUE.
 *
 * Thread safety: a parsed sl_expr is immutable; evaluation writes only into
 * the caller's output value and scratch arena, so one tree may be evaluated
 * from several threads.
 */
#ifndef SL_EXPR_H
#define SL_EXPR_H

#include "row.h"
#include "duration.h" /* sl_interval_parse */

typedef struct sl_expr sl_expr;

/* Parse `text` against `in` (through the SQL grammar, lang/grammar.y).
 * Returns a tree (caller frees with sl_expr_destroy) or NULL with a message
 * in err naming the position and the problem, e.g. "line 1, column 5:
 * unknown column 'usr_id'" or "line 1, column 8: unexpected end of input,
 * expected ')'". */
sl_expr *sl_expr_parse(const char *text, const sl_schema *in, char *err, size_t errlen);

/* Parse a projection item "expr [AS name]". When no alias is given the name
 * is the column name for a bare column, else "EXPR$<index>". *name is
 * caller-freed. */
sl_expr *sl_expr_parse_item(const char *text, const sl_schema *in, int index, char **name,
                            char *err, size_t errlen);

/* Type a node of the SQL grammar's tree (lang/ast.h) against `in`: the SQL
 * planner's check of the expressions it writes into calc vertices. Errors
 * name the node's line and column in the script; qualified column names are
 * looked up by their last part (the planner has resolved them). */
struct sql_node;
sl_expr *sl_expr_from_sql(const struct sql_node *e, const sl_schema *in, char *err,
                          size_t errlen);

/* User-defined functions (core/udf_sig.h): sl_expr_parse and
 * sl_expr_parse_item with the functions a tree may call (`fns` must
 * outlive the tree; NULL: none); and the functions of the SQL session
 * whose statement this thread is planning, which sl_expr_from_sql sees
 * (NULL: none; the planner sets and clears it around one statement). */
struct sl_udf_set;
sl_expr *sl_expr_parse_fns(const char *text, const sl_schema *in, const struct sl_udf_set *fns,
                           char *err, size_t errlen);
sl_expr *sl_expr_parse_item_fns(const char *text, const sl_schema *in, int index, char **name,
                                const struct sl_udf_set *fns, char *err, size_t errlen);
void sl_expr_set_session_functions(const struct sl_udf_set *fns);
const struct sl_udf_set *sl_expr_session_functions(void);

sl_type sl_expr_type(const sl_expr *e);
/* The full type of the result: a column reference's own descriptor
 * (DECIMAL(10, 2), ROW<...>), else the basic one of sl_expr_type (NULL
 * for a bare NULL literal's type). */
const sl_dtype *sl_expr_dtype(const sl_expr *e);
void sl_expr_destroy(sl_expr *e);
/* The session time zone (Flink's table.local-time-zone, a java.time.ZoneId
 * name) the tree evaluates in: CURRENT_DATE, CURRENT_TIME, LOCALTIME,
 * LOCALTIMESTAMP, FROM_UNIXTIME, UNIX_TIMESTAMP(s), DATE_FORMAT of a
 * TIMESTAMP_LTZ and CASTs to and from TIMESTAMP_LTZ read it. NULL (the
 * default) is UTC. SL_ERR with a message for a name that is no zone. */
int sl_expr_set_zone(sl_expr *e, const char *zone, char *err, size_t errlen);
const char *sl_expr_zone(const sl_expr *e); /* NULL: UTC */

/* Evaluate against `row`. Strings the result needs are allocated from
 * `scratch` (reset by the caller per record). Returns SL_OK, or SL_ERR on a
 * runtime error (division by zero, scratch exhausted, bad CAST) with a
 * message in err. */
int sl_expr_eval(const sl_expr *e, const sl_row *row, sl_arena *scratch, sl_value *out,
                 char *err, size_t errlen);

/* sl_expr_eval for an operator that has a watermark: CURRENT_WATERMARK(ts)
 * gives `watermark` (INT64_MIN: none yet, NULL). */
int sl_expr_eval_wm(const sl_expr *e, const sl_row *row, int64_t watermark, sl_arena *scratch,
                    sl_value *out, char *err, size_t errlen);

/* Does e use CURRENT_WATERMARK? */
bool sl_expr_reads_watermark(const sl_expr *e);

/* Convenience for filters: *pass is true only when the value is TRUE. */
int sl_expr_eval_bool(const sl_expr *e, const sl_row *row, sl_arena *scratch, bool *pass,
                      char *err, size_t errlen);


#endif
