/*
 * match_recognize.h -- the row-pattern language of the `match_recognize`
 * operator (operators/match_recognize.c), shared with the SQL planner
 * (sql/plan_match.c), which checks a PATTERN with the same compiler the
 * operator runs, and with the unit tests.
 *
 * A pattern is the text of Flink SQL's PATTERN clause: variables
 * (identifiers), concatenation, alternation `|`, grouping `( )` and the
 * quantifiers `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, `{,m}`, each greedy or,
 * followed by `?`, reluctant; and, from the C pattern API only, `!v`: the
 * next row must not be v (a look at the row, which stays for what follows;
 * no quantifier), and `$`: the WITHIN window is over (a row at or past its
 * end, or the watermark past it). It compiles into a small backtracking program
 * whose order of exploration is the SQL standard's preference order: a
 * greedy quantifier tries one more iteration before leaving, a reluctant one
 * leaves first, an alternation tries its left branch first.
 */
#ifndef SL_MATCH_RECOGNIZE_H
#define SL_MATCH_RECOGNIZE_H

#include <stddef.h>

#include "row.h"

typedef struct sl_mr_pattern sl_mr_pattern;

#define SL_MR_MAX_VARS 64
#define SL_MR_MAX_PROGRAM 4096 /* instructions after {n,m} are expanded */

/* Compile pattern text. NULL with err ("column C of the pattern: ...") when
 * it does not parse or is one Flink refuses: a greedy quantifier on the last
 * element, a reluctant optional `??`, a pattern that can match no rows.
 * Caller frees with sl_mr_pattern_free (NULL is a no-op). */
sl_mr_pattern *sl_mr_pattern_compile(const char *text, char *err, size_t errlen);
void sl_mr_pattern_free(sl_mr_pattern *p);
/* Its variables in order of first appearance (names as written). */
int sl_mr_pattern_nvars(const sl_mr_pattern *p);
const char *sl_mr_pattern_var(const sl_mr_pattern *p, int i);
int sl_mr_pattern_find_var(const sl_mr_pattern *p, const char *name); /* -1: none; case-insensitive */

/* What a DEFINE condition or a measure reads of the match (a "reference"):
 * each is a column appended to the row a condition sees, or an output
 * column of the operator. */
typedef enum {
    SL_MR_PREV = 0,   /* PREV(col, n): the row n before the current one in the match */
    SL_MR_LAST,       /* LAST(v.col, n): the n-th last row of v (var -1: of any variable) */
    SL_MR_FIRST,      /* FIRST(v.col, n) */
    SL_MR_SUM,        /* aggregates over the rows of v, of a column or an expression */
    SL_MR_COUNT,
    SL_MR_AVG,
    SL_MR_MIN,
    SL_MR_MAX,
    SL_MR_CLASSIFIER, /* the variable of the current (DEFINE) or last (MEASURES) row */
    SL_MR_ROWTIME,    /* MATCH_ROWTIME(): the last row's time */
    SL_MR_PROCTIME    /* MATCH_PROCTIME(): the processing time of the match */
} sl_mr_fn;

/* The function of a name ("LAST", "MATCH_ROWTIME"), or -1. */
int sl_mr_fn_parse(const char *name);
const char *sl_mr_fn_name(sl_mr_fn fn);
/* The type a reference has over a column of type t (t ignored where none):
 * navigation, SUM, AVG, MIN, MAX keep t (Flink: SUM(INT) is INT, AVG of
 * an integer type truncates), COUNT is BIGINT, CLASSIFIER STRING, the
 * times TIMESTAMP. SL_T_NULL when fn does not take a column of type t. */
sl_type sl_mr_fn_type(sl_mr_fn fn, sl_type t);

#endif
