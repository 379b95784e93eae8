/*
 * sql_results.h -- `sluice sql` reading a plain SELECT's rows back (cli/sql_results.c).
 */
#ifndef SL_CLI_SQL_RESULTS_H
#define SL_CLI_SQL_RESULTS_H

#include <signal.h>
#include <stdio.h>

#include <jansson.h>

#include "cli.h"
#include "sql.h"

/* Where the rows come from: pages of ["+I", "value", null, ...] rows. next()
 * gives the next page (borrowed until the next call; may be empty) and
 * whether the rows ended; cancel() stops the query. */
typedef struct sl_sql_rows_src {
    int (*next)(void *ctx, json_t **rows, int *end, char *err, size_t errlen);
    void (*cancel)(void *ctx);
    void *ctx;
} sl_sql_rows_src;

/* Show the rows of src on `out` in r->result_mode, with r's columns (ncols,
 * col_names, col_types), until they end or *stop is set (then cancel). */
int sl_sql_show_rows(const sl_sql_result *r, const sl_sql_rows_src *src,
                     volatile sig_atomic_t *stop, FILE *out, char *err, size_t errlen);

/* Submit the query's job (r->job), then show its rows on `out` in
 * r->result_mode until they end, the job fails, or *stop is set (Ctrl-C:
 * the job is cancelled). SL_OK, or SL_ERR with the reason in err. */
int sl_sql_show_query(sl_cli_http *http, const sl_sql_result *r, volatile sig_atomic_t *stop,
                      FILE *out, char *err, size_t errlen);

#endif
