/*
 * sql_run.h -- the SQL unit tests' driver: a script run statement by
 * statement in a session, as the SQL client splits it, each statement at
 * its own line and column so that error positions are the script's.
 */
#ifndef SL_TEST_SQL_RUN_H
#define SL_TEST_SQL_RUN_H

#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "sql.h"

/* What one statement's result prints as (a job, text, OK...). */
typedef void (*sql_run_fmt)(const sl_sql_result *r, char *out, size_t cap);

/* Run `script` in s; out gets the last result as fmt prints it, or
 * "ERR: <message>" for the first statement that fails (the rest are not
 * run), "(nothing)" for an empty script. Returns out. */
static inline const char *sql_run_script(sl_sql_session *s, const char *script, char *out,
                                         size_t cap, sql_run_fmt fmt)
{
    size_t pos = 0, len = strlen(script);
    int line = 1, col = 1;
    snprintf(out, cap, "(nothing)");
    while (pos < len) {
        size_t end;
        int k = sql_split(script + pos, len - pos, &end);
        if (k < 0) break;
        if (k == 0) end = len - pos;
        sl_sql_result r;
        char err[2048];
        if (sl_sql_execute(s, script + pos, end, line, col, &r, err, sizeof err) != SL_OK) {
            snprintf(out, cap, "ERR: %s", err);
            return out;
        }
        fmt(&r, out, cap);
        sl_sql_result_clear(&r);
        for (size_t i = 0; i < end; i++) {
            if (script[pos + i] == '\n') line++, col = 1;
            else col++;
        }
        pos += end;
    }
    return out;
}

#endif
