/*
 * fuzz_sql.c -- libFuzzer target for the SQL front end: the tokenizer, the
 * lemon parser, the splitter and a session that executes what parses
 * (DDL, SET, planning of INSERTs against a catalog made up front), and
 * the same input as a calc expression and projection item (the grammar's
 * expression-only mode and lang/expr_check.c, then one evaluation). Any
 * crash, sanitizer report or leak is a bug; errors are the expected
 * outcome for almost every input.
 *
 * `make fuzz` builds it with clang (-fsanitize=fuzzer,address,undefined)
 * and runs it for FUZZ_SECONDS (default 5) from tests/fuzz/corpus/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "parse.h"
#include "sql.h"

static const char setup[] =
    "CREATE TABLE clicks (user_id INT, url STRING, ts AS CAST(CURRENT_TIMESTAMP AS "
    "TIMESTAMP(3)), pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH "
    "('connector' = 'datagen');"
    "CREATE TABLE o1 (a TIMESTAMP(3), b TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print');"
    "CREATE TABLE o2 (k INT, c BIGINT) WITH ('connector' = 'filesystem', 'path' = '/x', "
    "'format' = 'json');"
    "CREATE VIEW v AS SELECT user_id, url FROM clicks WHERE user_id > 1;";

static void run_all(sl_sql_session *s, const char *text, size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        size_t end;
        int k = sql_split(text + pos, len - pos, &end);
        if (k < 0) break;
        if (k == 0) end = len - pos;
        sl_sql_result r;
        char err[1024];
        if (sl_sql_execute(s, text + pos, end, 1, 1, &r, err, sizeof err) == 0)
            sl_sql_result_clear(&r);
        else if (!err[0])
            abort(); /* every error says what is wrong */
        pos += end;
    }
}

/* The input as a calc expression over a small schema; what checks is evaluated once. */
static void run_expr(const char *text)
{
    static sl_schema in;
    if (!in.n) {
        sl_schema_add(&in, "id", SL_T_BIGINT);
        sl_schema_add(&in, "name", SL_T_STRING);
        sl_schema_add(&in, "ts", SL_T_TIMESTAMP);
        sl_schema_add(&in, "ok", SL_T_BOOLEAN);
    }
    char err[512];
    err[0] = '\0';
    sl_expr *e = sl_expr_parse(text, &in, err, sizeof err);
    if (!e && !err[0]) abort();
    if (e) {
        sl_arena scratch;
        sl_arena_init(&scratch, 4096);
        sl_value vals[4] = {{.v.i = 7}, {.v.s = {"abc", 3}}, {.v.i = 1767225600000}, {.v.i = 1}};
        sl_row row = {.n = 4, .vals = vals};
        sl_value out;
        sl_expr_eval(e, &row, &scratch, &out, err, sizeof err);
        sl_arena_free(&scratch);
        sl_expr_destroy(e);
    }
    char *name = NULL;
    e = sl_expr_parse_item(text, &in, 0, &name, err, sizeof err);
    free(name);
    sl_expr_destroy(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    sl_sql_session *s = sl_sql_session_new();
    run_all(s, setup, sizeof setup - 1);
    run_all(s, text, size);
    sl_sql_session_destroy(s);
    run_expr(text);
    free(text);
    return 0;
}
