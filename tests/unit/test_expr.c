/*
 * test_expr.c -- unit tests for lang/expr.c: parsing, type checking,
 * evaluation of every operator and function, SQL three-valued logic, CAST,
 * intervals, limits, and a fuzz loop over broken texts.
 *
 * Every case goes through run(), which parses a text against one fixed
 * schema, evaluates it against one fixed row and renders the outcome as
 * "<TYPE> <value>", "<TYPE> NULL", "PARSE: <message>" or "EVAL: <message>",
 * so each expectation below is a literal string worked out by hand (dates
 * were checked with an independent calendar).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "expr.h"
#include "sl_test.h"

/* The row every case reads:
 *   id BIGINT 7, n INT 3, name STRING 'Alice', price DOUBLE 2.5, ok BOOLEAN TRUE,
 *   ts TIMESTAMP 2026-01-01 00:00:00.020, nul_i INT NULL, nul_s STRING NULL,
 *   nul_b BOOLEAN NULL, `my col` STRING 'x y', neg INT -7 */
static sl_schema S;
static sl_value V[11];
static sl_row R;
static char OUT[512];

static void setup(void)
{
    if (S.n) return;
    sl_schema_init(&S);
    sl_schema_add(&S, "id", SL_T_BIGINT);
    sl_schema_add(&S, "n", SL_T_INT);
    sl_schema_add(&S, "name", SL_T_STRING);
    sl_schema_add(&S, "price", SL_T_DOUBLE);
    sl_schema_add(&S, "ok", SL_T_BOOLEAN);
    sl_schema_add(&S, "ts", SL_T_TIMESTAMP);
    sl_schema_add(&S, "nul_i", SL_T_INT);
    sl_schema_add(&S, "nul_s", SL_T_STRING);
    sl_schema_add(&S, "nul_b", SL_T_BOOLEAN);
    sl_schema_add(&S, "my col", SL_T_STRING);
    sl_schema_add(&S, "neg", SL_T_INT);
    V[0].v.i = 7;
    V[1].v.i = 3;
    V[2].v.s.p = "Alice";
    V[2].v.s.len = 5;
    V[3].v.d = 2.5;
    V[4].v.i = 1;
    V[5].v.i = 1767225600020LL;
    V[6].isnull = V[7].isnull = V[8].isnull = true;
    V[9].v.s.p = "x y";
    V[9].v.s.len = 3;
    V[10].v.i = -7;
    R.kind = SL_KIND_INSERT;
    R.n = 11;
    R.vals = V;
    R.ts = SL_TS_NONE;
}

static const char *type_word(sl_type t)
{
    static const char *const w[] = {"NULL",   "BOOLEAN", "INT",   "BIGINT",
                                    "DOUBLE", "STRING",  "BYTES", "TIMESTAMP"};
    return w[t];
}

/* Render a value by hand so the test does not lean on row.c's formatter
 * (a DECIMAL as its type and lib/decimal's plain text). */
static void render_dec(char *dst, size_t cap, const sl_dtype *dt, const sl_value *v)
{
    char num[64] = "NULL";
    if (!v->isnull) {
        sl_dec d = {v->v.dec.lo, v->v.dec.hi};
        sl_dec_format(num, sizeof num, d, dt->s);
    }
    snprintf(dst, cap, "%s %s", dt->text, num);
}

static void render(char *dst, size_t cap, sl_type t, const sl_value *v)
{
    if (v->isnull) {
        snprintf(dst, cap, "%s NULL", type_word(t));
        return;
    }
    switch (t) {
    case SL_T_BOOLEAN: snprintf(dst, cap, "BOOLEAN %s", v->v.i ? "TRUE" : "FALSE"); break;
    case SL_T_DOUBLE: snprintf(dst, cap, "DOUBLE %.17g", v->v.d); break;
    case SL_T_STRING:
    case SL_T_BYTES:
        snprintf(dst, cap, "%s %.*s", type_word(t), (int)v->v.s.len, v->v.s.p);
        break;
    default: snprintf(dst, cap, "%s %lld", type_word(t), (long long)v->v.i); break;
    }
}

/* Parse and evaluate with a scratch arena of `limit` bytes. */
static const char *run_limit(const char *text, size_t limit)
{
    setup();
    char err[256] = "";
    sl_expr *e = sl_expr_parse(text, &S, err, sizeof err);
    if (!e) {
        snprintf(OUT, sizeof OUT, "PARSE: %s", err);
        return OUT;
    }
    sl_arena a;
    sl_arena_init(&a, limit);
    sl_value v;
    memset(&v, 0xA5, sizeof v); /* garbage: eval must set every field it reports */
    if (sl_expr_eval(e, &R, &a, &v, err, sizeof err) != SL_OK)
        snprintf(OUT, sizeof OUT, "EVAL: %s", err);
    else if (sl_expr_type(e) == SL_T_DECIMAL)
        render_dec(OUT, sizeof OUT, sl_expr_dtype(e), &v);
    else if (sl_expr_type(e) == SL_T_INTERVAL_DT || sl_expr_type(e) == SL_T_INTERVAL_YM)
        /* an interval's value: milliseconds or months, under Flink's type for the result */
        snprintf(OUT, sizeof OUT, v.isnull ? "%s NULL" : "%s %lld", sl_expr_dtype(e)->text,
                 (long long)v.v.i);
    else
        render(OUT, sizeof OUT, sl_expr_type(e), &v);
    sl_arena_free(&a);
    sl_expr_destroy(e);
    return OUT;
}

static const char *run(const char *text) { return run_limit(text, 1 << 16); }

#define EXPECT(text, want) do { const char *r_ = run(text); if (strcmp(r_, want)) { fprintf(stderr, "%s:%d: GOT \"%s\"\n", __FILE__, __LINE__, r_); sl_test_failed_ = 1; } } while (0)

static void test_literals(void)
{
    EXPECT("42", "INT 42");
    EXPECT("2147483647", "INT 2147483647");
    EXPECT("2147483648", "BIGINT 2147483648");
    EXPECT("-2147483648", "INT -2147483648");
    EXPECT("9223372036854775807", "BIGINT 9223372036854775807");
    EXPECT("9223372036854775808",
           "PARSE: line 1, column 1: integer literal 9223372036854775808 is out of range");
    EXPECT("1.5", "DECIMAL(2, 1) 1.5"); /* an exact literal is a DECIMAL */
    EXPECT(".25", "DECIMAL(2, 2) 0.25");
    EXPECT("-0.050", "DECIMAL(3, 3) -0.050");
    EXPECT("007.10", "DECIMAL(3, 2) 7.10");
    EXPECT("1e3", "DOUBLE 1000");
    EXPECT("2.5E-1", "DOUBLE 0.25");
    EXPECT("'it''s'", "STRING it's");
    EXPECT("''", "STRING ");
    EXPECT("TRUE", "BOOLEAN TRUE");
    EXPECT("false", "BOOLEAN FALSE");
    EXPECT("NULL", "NULL NULL");
    EXPECT("TIMESTAMP '2026-01-01 00:00:00'", "TIMESTAMP 1767225600000");
    EXPECT("timestamp '2024-02-29 12:00:00'", "TIMESTAMP 1709208000000");
    EXPECT("TIMESTAMP '2025-02-29 12:00:00'",
           "PARSE: line 1, column 11: invalid TIMESTAMP literal '2025-02-29 12:00:00' (expected "
           "'YYYY-MM-DD HH:MM:SS[.fff]')");
    EXPECT("INTERVAL '5' SECOND", "INTERVAL SECOND(3) 5000");
    EXPECT("INTERVAL '2' HOUR", "INTERVAL SECOND(3) 7200000");
    EXPECT("INTERVAL 'x' SECOND",
           "PARSE: line 1, column 10: INTERVAL needs a whole number in quotes, e.g. INTERVAL '5' SECOND");
    EXPECT("  42  -- the answer", "INT 42");
    EXPECT("12abc",
           "PARSE: line 1, column 1: malformed number '12a'");
}

static void test_columns(void)
{
    EXPECT("id", "BIGINT 7");
    EXPECT("ID", "BIGINT 7");
    EXPECT("`name`", "STRING Alice");
    EXPECT("`my col`", "STRING x y");
    EXPECT("`usr`", "PARSE: line 1, column 1: unknown column 'usr'");
    EXPECT("usr_id", "PARSE: line 1, column 1: unknown column 'usr_id'");
    EXPECT("id + usr", "PARSE: line 1, column 6: unknown column 'usr'");
    EXPECT("`unterminated", "PARSE: line 1, column 1: unterminated quoted identifier");
    EXPECT("nul_i", "INT NULL");

    /* without a schema every column is unknown */
    char err[128];
    CHECK(sl_expr_parse("id", NULL, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "line 1, column 1: unknown column 'id'");
}

static void test_arithmetic(void)
{
    EXPECT("1 + 2", "INT 3");
    EXPECT("2 * 3 + 4", "INT 10");
    EXPECT("2 * (3 + 4)", "INT 14");
    EXPECT("10 - 4 - 3", "INT 3");
    EXPECT("-(3)", "INT -3");
    EXPECT("- -3", "INT 3");
    EXPECT("+n", "INT 3");
    EXPECT("-id", "BIGINT -7");
    EXPECT("id + 1", "BIGINT 8");
    EXPECT("n * 2", "INT 6");
    EXPECT("n + id", "BIGINT 10");
    EXPECT("1 + 2.5", "DECIMAL(12, 1) 3.5");
    EXPECT("price + 2.5", "DOUBLE 5");
    EXPECT("0.1 + 0.2 = 0.3", "BOOLEAN TRUE");
    EXPECT("n * 1.10", "DECIMAL(14, 2) 3.30");
    EXPECT("1.5 > n", "BOOLEAN FALSE");
    EXPECT("price * 2", "DOUBLE 5");
    EXPECT("n + price", "DOUBLE 5.5");
    EXPECT("-price", "DOUBLE -2.5");
    /* integer division truncates toward zero */
    EXPECT("7 / 2", "INT 3");
    EXPECT("-7 / 2", "INT -3");
    EXPECT("neg / 2", "INT -3");
    EXPECT("7 / -2", "INT -3");
    EXPECT("7.0 / 2", "DECIMAL(13, 12) 3.500000000000");
    EXPECT("1 / 3.0", "DECIMAL(17, 6) 0.333333");
    EXPECT("2 / 3.0", "DECIMAL(17, 6) 0.666667");
    EXPECT("id / 2", "BIGINT 3");
    /* the remainder takes the sign of the dividend */
    EXPECT("7 % 3", "INT 1");
    EXPECT("-7 % 3", "INT -1");
    EXPECT("neg % 3", "INT -1");
    EXPECT("7 % -3", "INT 1");
    EXPECT("MOD(-7, 3)", "INT -1");
    EXPECT("MOD(7, -3)", "INT 1");
    /* typed as the divisor, as in Flink: BIGINT % INT is an INT */
    EXPECT("MOD(id, 5)", "INT 2");
    EXPECT("id % 5", "INT 2");
    EXPECT("MOD(5, id)", "BIGINT 5");
    EXPECT("id % id", "BIGINT 0");
    EXPECT("7.5 % 2", "DECIMAL(2, 1) 1.5");
    /* overflow wraps as Java's int and long do */
    EXPECT("2147483647 + 1", "INT -2147483648");
    EXPECT("n * 1000000000", "INT -1294967296");
    EXPECT("9223372036854775807 + 1", "BIGINT -9223372036854775808");
    EXPECT("(-2147483647 - 1) / -1", "INT -2147483648");
    EXPECT("(-2147483647 - 1) % -1", "INT 0");
    EXPECT("(-9223372036854775807 - 1) / -1", "BIGINT -9223372036854775808");
    EXPECT("(-9223372036854775807 - 1) % -1", "INT 0");
    EXPECT("(-9223372036854775807 - 1) % CAST(-1 AS BIGINT)", "BIGINT 0");
    EXPECT("nul_i + 1", "INT NULL");
    EXPECT("NULL * 2.5", "DECIMAL(4, 1) NULL");
    EXPECT("NULL * CAST(2.5 AS DOUBLE)", "DOUBLE NULL");
    /* an exact result past 38 digits is NULL, as Flink's overflow */
    EXPECT("CAST('99999999999999999999999999999999999999' AS DECIMAL(38, 0)) + 1", "DECIMAL(38, 0) NULL");
    EXPECT("NULL + NULL", "NULL NULL");
    EXPECT("1 + -2147483648", "INT -2147483647");
}

static void test_division_by_zero(void)
{
    EXPECT("1 / 0", "EVAL: division by zero at position 3");
    EXPECT("id % 0", "EVAL: division by zero (modulo) at position 4");
    EXPECT("MOD(n, 0)", "EVAL: division by zero (modulo) at position 1");
    /* a DOUBLE divided by zero is an infinity or NaN, as Java's double (Flink) */
    EXPECT("price / 0", "DOUBLE inf");
    EXPECT("-price / 0", "DOUBLE -inf");
    EXPECT("(price - price) / 0 = 0", "BOOLEAN FALSE"); /* NaN */
    EXPECT("n / (id - 7)", "EVAL: division by zero at position 3");
    EXPECT("nul_i / 0", "INT NULL"); /* NULL wins: nothing is divided */
    /* AND stops at FALSE, so the division on the right never runs */
    EXPECT("FALSE AND 1 / 0 = 1", "BOOLEAN FALSE");
    EXPECT("TRUE AND 1 / 0 = 1", "EVAL: division by zero at position 12");
}

static void test_comparisons(void)
{
    EXPECT("1 < 2", "BOOLEAN TRUE");
    EXPECT("2 <= 2", "BOOLEAN TRUE");
    EXPECT("3 > 4", "BOOLEAN FALSE");
    EXPECT("4 >= 5", "BOOLEAN FALSE");
    EXPECT("2 != 3", "BOOLEAN TRUE");
    EXPECT("2 <> 2", "BOOLEAN FALSE");
    EXPECT("1 = 1.0", "BOOLEAN TRUE");
    EXPECT("id = 7", "BOOLEAN TRUE");
    EXPECT("n < price", "BOOLEAN FALSE");
    EXPECT("3000000000 > n", "BOOLEAN TRUE");
    EXPECT("'abc' < 'abd'", "BOOLEAN TRUE");
    EXPECT("'ab' < 'abc'", "BOOLEAN TRUE");
    EXPECT("'b' > 'abc'", "BOOLEAN TRUE");
    EXPECT("'\xc3\xa9' > 'z'", "BOOLEAN TRUE"); /* bytewise: 0xC3 > 'z' */
    EXPECT("name = 'Alice'", "BOOLEAN TRUE");
    EXPECT("name = 'alice'", "BOOLEAN FALSE");
    EXPECT("TRUE = ok", "BOOLEAN TRUE");
    EXPECT("TRUE <> FALSE", "BOOLEAN TRUE");
    EXPECT("ts = TIMESTAMP '2026-01-01 00:00:00.020'", "BOOLEAN TRUE");
    EXPECT("ts > TIMESTAMP '2026-01-01 00:00:00'", "BOOLEAN TRUE");
    EXPECT("ts > '2025-12-31 23:59:59'", "BOOLEAN TRUE"); /* the string is CAST */
    EXPECT("'2026-01-02' > ts", "BOOLEAN TRUE");
    EXPECT("ts < 'soon'", "EVAL: cannot CAST 'soon' to TIMESTAMP(3) at position 6");
    EXPECT("1 = 1 = TRUE", "BOOLEAN TRUE");
}

static void test_type_errors(void)
{
    EXPECT("'a' + 1", "PARSE: line 1, column 5: cannot apply '+' to CHAR(1) and INT");
    EXPECT("name * 2", "PARSE: line 1, column 6: cannot apply '*' to STRING and INT");
    EXPECT("ok - 1", "PARSE: line 1, column 4: cannot apply '-' to BOOLEAN and INT");
    EXPECT("-name", "PARSE: line 1, column 1: cannot apply unary '-' to STRING");
    EXPECT("1 = 'a'", "PARSE: line 1, column 3: cannot compare INT with CHAR(1) in '='");
    EXPECT("ts = 1", "PARSE: line 1, column 4: cannot compare TIMESTAMP(3) with INT in '='");
    EXPECT("TRUE < FALSE", "PARSE: line 1, column 6: BOOLEAN values have no order: '<' is not allowed");
    EXPECT("NOT 1", "PARSE: line 1, column 1: NOT needs a BOOLEAN, got INT");
    EXPECT("1 AND TRUE", "PARSE: line 1, column 3: AND needs BOOLEAN operands, got INT and BOOLEAN");
    EXPECT("ok OR name", "PARSE: line 1, column 4: OR needs BOOLEAN operands, got BOOLEAN and STRING");
    EXPECT("n IS TRUE", "PARSE: line 1, column 3: IS TRUE needs a BOOLEAN, got INT");
    EXPECT("ts + 1", "PARSE: line 1, column 4: cannot apply '+' to TIMESTAMP(3) and INT");
    EXPECT("ts - ts",
           "PARSE: line 1, column 4: cannot apply '-' to TIMESTAMP(3) and TIMESTAMP(3); use "
           "TIMESTAMPDIFF(SECOND, t1, t2) for the time between them");
    EXPECT("FOO(1)", "PARSE: line 1, column 1: unknown function 'FOO'");
    EXPECT("ABS(1, 2)", "PARSE: line 1, column 1: ABS takes 1 argument, got 2");
    EXPECT("ABS()", "PARSE: line 1, column 1: ABS takes 1 argument, got 0");
    EXPECT("IF(TRUE, 1)", "PARSE: line 1, column 1: IF takes 3 arguments, got 2");
    EXPECT("CONCAT()", "PARSE: line 1, column 1: CONCAT takes at least 1 argument, got 0");
    EXPECT("ABS('x')", "PARSE: line 1, column 1: ABS needs a number, got CHAR(1)");
    EXPECT("UPPER(1)", "PARSE: line 1, column 7: UPPER needs STRING arguments, got INT");
    EXPECT("CONCAT('a', n)",
           "PARSE: line 1, column 13: CONCAT needs STRING arguments, got INT (use CAST(x AS STRING))");
    EXPECT("'a' || 1", "PARSE: line 1, column 5: cannot apply '||' to CHAR(1) and INT");
    EXPECT("IF(1, 2, 3)", "PARSE: line 1, column 1: IF condition must be BOOLEAN, got INT");
    EXPECT("IF(ok, 2, 'x')",
           "PARSE: line 1, column 1: IF branches have incompatible types INT and CHAR(1)");
    EXPECT("COALESCE(n, 'x')",
           "PARSE: line 1, column 13: COALESCE arguments have incompatible types INT and CHAR(1)");
    EXPECT("CASE WHEN 1 THEN 2 END", "PARSE: line 1, column 11: WHEN condition must be BOOLEAN, got INT");
    EXPECT("CASE WHEN ok THEN 1 ELSE 'a' END",
           "PARSE: line 1, column 26: CASE branches have incompatible types INT and CHAR(1)");
    EXPECT("CASE n WHEN 'a' THEN 1 END",
           "PARSE: line 1, column 13: cannot compare INT with CHAR(1) in 'CASE .. WHEN'");
    EXPECT("CAST(1 AS FOO)", "PARSE: line 1, column 11: unknown type 'FOO' in CAST");
    EXPECT("CAST(ts AS INT)",
           "PARSE: line 1, column 1: cannot CAST TIMESTAMP(3) to INT: a TIMESTAMP does not convert to a number; "
           "use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds");
    EXPECT("CAST(1 AS TIMESTAMP(3))",
           "PARSE: line 1, column 1: cannot CAST INT to TIMESTAMP(3): a number does not convert to a TIMESTAMP; "
           "use TO_TIMESTAMP(FROM_UNIXTIME(n)) for epoch seconds");
    EXPECT("TO_TIMESTAMP_LTZ(1, 2)",
           "PARSE: line 1, column 21: TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds)");
    EXPECT("TO_TIMESTAMP_LTZ(1, n)",
           "PARSE: line 1, column 21: TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds)");
    EXPECT("TO_TIMESTAMP_LTZ('x', 3)",
           "PARSE: line 1, column 1: TO_TIMESTAMP_LTZ needs a number of seconds or milliseconds, got CHAR(1)");
    EXPECT("n LIKE 'a'", "PARSE: line 1, column 3: LIKE needs STRING operands, got INT and CHAR(1)");
    EXPECT("n BETWEEN 'a' AND 'b'",
           "PARSE: line 1, column 3: cannot compare INT with CHAR(1) in 'BETWEEN'");
    EXPECT("n IN (1, 'a')", "PARSE: line 1, column 10: cannot compare INT with CHAR(1) in 'IN'");
    EXPECT("SUBSTRING(n, 1)",
           "PARSE: line 1, column 1: SUBSTRING needs (STRING, INT[, INT]), got (INT, INT)");
    EXPECT("POSITION(1 IN name)",
           "PARSE: line 1, column 1: POSITION needs STRING arguments, got INT and STRING");
    EXPECT("TRIM(n)", "PARSE: line 1, column 1: TRIM needs STRING arguments, got INT");
}

static void test_syntax_errors(void)
{
    EXPECT("",
           "PARSE: line 1, column 1: unexpected end of input, expected an expression");
    EXPECT("   ",
           "PARSE: line 1, column 4: unexpected end of input, expected an expression");
    EXPECT("1 +",
           "PARSE: line 1, column 4: unexpected end of input, expected an expression");
    EXPECT("(1 + 2", /* ',' would make it a ROW (1 + 2, ...) */
           "PARSE: line 1, column 7: unexpected end of input, expected ')' or ','");
    EXPECT("CAST((1, 'x', (2, 3)) AS STRING)", "STRING (1, x, (2, 3))");
    EXPECT("1 2",
           "PARSE: line 1, column 3: unexpected '2', expected an operator");
    EXPECT("id)",
           "PARSE: line 1, column 3: unexpected ')', expected an operator");
    EXPECT("'abc", "PARSE: line 1, column 1: unterminated string literal");
    EXPECT("1 # 2", "PARSE: line 1, column 3: unexpected character '#'");
    EXPECT("1 + \x01",
           "PARSE: line 1, column 5: unexpected character 0x01");
    EXPECT("1e+",
           "PARSE: line 1, column 1: malformed number '1e'");
    EXPECT("AND",
           "PARSE: line 1, column 1: unexpected 'AND', expected an expression");
    EXPECT("CASE END",
           "PARSE: line 1, column 6: unexpected 'END', expected an expression");
    EXPECT("CASE WHEN ok THEN 1",
           "PARSE: line 1, column 20: unexpected end of input, expected ELSE, END or WHEN");
    EXPECT("CAST(1 INT)",
           "PARSE: line 1, column 8: unexpected 'INT', expected AS");
    EXPECT("n IS 5",
           "PARSE: line 1, column 6: unexpected '5', expected DISTINCT, FALSE, JSON, NULL, TRUE or UNKNOWN");
    EXPECT("n IN 1",
           "PARSE: line 1, column 6: unexpected '1', expected '('");
    EXPECT("n BETWEEN 1 OR 2",
           "PARSE: line 1, column 17: unexpected end of input, expected an operator");
    EXPECT("SUBSTRING(name)",
           "PARSE: line 1, column 1: SUBSTRING takes (string FROM start [FOR length]) or (string, start [, length]), got 1 argument");
    EXPECT("TRIM(LEADING 'x' name)",
           "PARSE: line 1, column 18: unexpected 'name', expected FROM");
}

static void test_logic_and_nulls(void)
{
    EXPECT("TRUE AND FALSE", "BOOLEAN FALSE");
    EXPECT("TRUE OR FALSE", "BOOLEAN TRUE");
    EXPECT("NOT TRUE", "BOOLEAN FALSE");
    EXPECT("NOT NOT ok", "BOOLEAN TRUE");
    EXPECT("TRUE OR FALSE AND FALSE", "BOOLEAN TRUE"); /* AND binds tighter */
    EXPECT("NOT FALSE AND FALSE", "BOOLEAN FALSE");    /* NOT binds tighter than AND */
    /* three-valued logic */
    EXPECT("nul_b AND FALSE", "BOOLEAN FALSE");
    EXPECT("FALSE AND nul_b", "BOOLEAN FALSE");
    EXPECT("nul_b AND TRUE", "BOOLEAN NULL");
    EXPECT("TRUE AND nul_b", "BOOLEAN NULL");
    EXPECT("nul_b OR TRUE", "BOOLEAN TRUE");
    EXPECT("TRUE OR nul_b", "BOOLEAN TRUE");
    EXPECT("nul_b OR FALSE", "BOOLEAN NULL");
    EXPECT("FALSE OR nul_b", "BOOLEAN NULL");
    EXPECT("nul_b AND nul_b", "BOOLEAN NULL");
    EXPECT("NULL AND FALSE", "BOOLEAN FALSE");
    EXPECT("NOT nul_b", "BOOLEAN NULL");
    EXPECT("nul_i = 1", "BOOLEAN NULL");
    EXPECT("nul_i = NULL", "BOOLEAN NULL");
    EXPECT("NULL = NULL", "BOOLEAN NULL");
    EXPECT("nul_i IS NULL", "BOOLEAN TRUE");
    EXPECT("id IS NULL", "BOOLEAN FALSE");
    EXPECT("id IS NOT NULL", "BOOLEAN TRUE");
    EXPECT("nul_b IS UNKNOWN", "BOOLEAN TRUE");
    EXPECT("nul_b IS TRUE", "BOOLEAN FALSE");
    EXPECT("nul_b IS NOT TRUE", "BOOLEAN TRUE");
    EXPECT("nul_b IS FALSE", "BOOLEAN FALSE");
    EXPECT("nul_b IS NOT FALSE", "BOOLEAN TRUE");
    EXPECT("ok IS TRUE", "BOOLEAN TRUE");
    EXPECT("ok IS NOT FALSE", "BOOLEAN TRUE");
    EXPECT("n = 3 IS TRUE", "BOOLEAN TRUE");
    EXPECT("Id Is Not Null", "BOOLEAN TRUE");
    /* IN */
    EXPECT("n IN (1, 2, 3)", "BOOLEAN TRUE");
    EXPECT("n IN (1, 2)", "BOOLEAN FALSE");
    EXPECT("n IN (1, NULL)", "BOOLEAN NULL");
    EXPECT("n IN (3, NULL)", "BOOLEAN TRUE");
    EXPECT("n NOT IN (1, 2)", "BOOLEAN TRUE");
    EXPECT("n NOT IN (1, NULL)", "BOOLEAN NULL");
    EXPECT("nul_i IN (1, 2)", "BOOLEAN NULL");
    EXPECT("id IN (7.0, 8)", "BOOLEAN TRUE");
    EXPECT("name IN ('Bob', 'Alice')", "BOOLEAN TRUE");
    EXPECT("ts IN ('2026-01-01 00:00:00.020')", "BOOLEAN TRUE");
    /* BETWEEN */
    EXPECT("n BETWEEN 1 AND 3", "BOOLEAN TRUE");
    EXPECT("n BETWEEN 4 AND 5", "BOOLEAN FALSE");
    EXPECT("n NOT BETWEEN 4 AND 5", "BOOLEAN TRUE");
    EXPECT("price BETWEEN 2 AND 3", "BOOLEAN TRUE");
    EXPECT("nul_i BETWEEN 1 AND 2", "BOOLEAN NULL");
    EXPECT("5 BETWEEN 1 AND NULL", "BOOLEAN NULL");
    EXPECT("0 BETWEEN 1 AND NULL", "BOOLEAN FALSE");
    EXPECT("0 NOT BETWEEN 1 AND NULL", "BOOLEAN TRUE");
    EXPECT("n BETWEEN 1 AND 5 AND ok", "BOOLEAN TRUE");
    EXPECT("'2026-01-01' BETWEEN '2025-01-01' AND ts", "BOOLEAN TRUE");
    /* functions on NULL */
    EXPECT("COALESCE(nul_i, 5)", "INT 5");
    EXPECT("COALESCE(nul_i, id)", "BIGINT 7");
    EXPECT("COALESCE(nul_i, 1.5)", "DECIMAL(11, 1) 1.5");
    EXPECT("COALESCE(n, 1.5)", "DECIMAL(11, 1) 3.0");
    EXPECT("COALESCE(nul_i, NULL)", "INT NULL");
    EXPECT("COALESCE(NULL, nul_s, 'z')", "STRING z");
    EXPECT("NULLIF(n, 3)", "INT NULL");
    EXPECT("NULLIF(n, 4)", "INT 3");
    EXPECT("NULLIF(nul_i, 4)", "INT NULL");
    EXPECT("IF(nul_b, 1, 2)", "INT 2");
    EXPECT("IF(ok, 1, 2.5)", "DECIMAL(11, 1) 1.0");
    EXPECT("IF(n > 5, 'big', 'small')", "STRING small");
    EXPECT("CONCAT('a', nul_s)", "STRING NULL");
    EXPECT("'a' || nul_s", "STRING NULL");
    EXPECT("UPPER(nul_s)", "STRING NULL");
    EXPECT("CHAR_LENGTH(nul_s)", "INT NULL");
    EXPECT("ABS(nul_i)", "INT NULL");
    EXPECT("CAST(NULL AS INT)", "INT NULL");
    EXPECT("CAST(nul_i AS STRING)", "STRING NULL");
}

static void test_case(void)
{
    EXPECT("CASE WHEN n > 5 THEN 'big' WHEN n > 1 THEN 'mid' ELSE 'small' END", "STRING mid");
    EXPECT("CASE WHEN n > 5 THEN 'big' END", "STRING NULL");
    EXPECT("CASE WHEN nul_b THEN 1 ELSE 2 END", "INT 2");
    EXPECT("case n when 1 then 'one' when 3 then 'three' else 'many' end", "STRING three");
    EXPECT("CASE n WHEN 1 THEN 'one' END", "STRING NULL");
    EXPECT("CASE nul_i WHEN NULL THEN 'x' ELSE 'y' END", "STRING y");
    EXPECT("CASE id WHEN 7.0 THEN 1 END", "INT 1");
    EXPECT("CASE WHEN ok THEN 1 ELSE 2.5 END", "DECIMAL(11, 1) 1.0");
    EXPECT("CASE WHEN ok THEN NULL ELSE id END", "BIGINT NULL");
    EXPECT("CASE WHEN NOT ok THEN NULL ELSE n END", "INT 3");
    EXPECT("CASE WHEN ok THEN CASE WHEN n = 3 THEN 'a' ELSE 'b' END END", "STRING a");
    EXPECT("CASE ts WHEN '2026-01-01 00:00:00.020' THEN 'hit' END", "STRING hit");
}

static void test_cast(void)
{
    EXPECT("CAST(1.9 AS INT)", "INT 1");
    EXPECT("CAST(-1.9 AS INT)", "INT -1");
    EXPECT("CAST(1e20 AS BIGINT)", "BIGINT 9223372036854775807");
    EXPECT("CAST(-1e20 AS INT)", "INT -2147483648");
    EXPECT("CAST(3000000000 AS INT)", "INT -1294967296");
    EXPECT("CAST(n AS BIGINT)", "BIGINT 3");
    EXPECT("CAST(n AS DOUBLE)", "DOUBLE 3");
    EXPECT("CAST(n AS INTEGER)", "INT 3");
    EXPECT("CAST('42' AS INT)", "INT 42");
    EXPECT("CAST(' -42 ' AS BIGINT)", "BIGINT -42");
    EXPECT("CAST('3000000000' AS INT)", "EVAL: cannot CAST '3000000000' to INT at position 1");
    EXPECT("CAST('abc' AS INT)", "EVAL: cannot CAST 'abc' to INT at position 1");
    EXPECT("CAST('1.5' AS INT)", "INT 1");
    EXPECT("TRY_CAST('abc' AS INT)", "INT NULL");
    EXPECT("TRY_CAST('12' AS INT)", "INT 12");
    EXPECT("CAST('1.5' AS DOUBLE)", "DOUBLE 1.5");
    EXPECT("CAST('-2e3' AS DOUBLE)", "DOUBLE -2000");
    EXPECT("CAST('0x10' AS DOUBLE)", "EVAL: cannot CAST '0x10' to DOUBLE at position 1");
    EXPECT("CAST('' AS DOUBLE)", "EVAL: cannot CAST '' to DOUBLE at position 1");
    EXPECT("CAST(42 AS STRING)", "STRING 42");
    EXPECT("CAST(-9223372036854775807 - 1 AS STRING)", "STRING -9223372036854775808");
    EXPECT("CAST(1.5 AS STRING)", "STRING 1.5");
    EXPECT("CAST(100.0 AS STRING)", "STRING 100.0");
    EXPECT("CAST(0.1 AS STRING)", "STRING 0.1");
    EXPECT("CAST(1e10 AS STRING)", "STRING 1.0E10");
    EXPECT("CAST(1234567.0 AS STRING)", "STRING 1234567.0");
    EXPECT("CAST(12345678.0 AS STRING)", "STRING 12345678.0");
    EXPECT("CAST(CAST(12345678.0 AS DOUBLE) AS STRING)", "STRING 1.2345678E7");
    EXPECT("CAST(0.001 AS STRING)", "STRING 0.001");
    EXPECT("CAST(0.0001 AS STRING)", "STRING 0.0001");
    EXPECT("CAST(CAST(0.0001 AS DOUBLE) AS STRING)", "STRING 1.0E-4");
    EXPECT("CAST(-0.00015 AS STRING)", "STRING -0.00015");
    /* DATE and TIME literals, CASTs and comparisons */
    EXPECT("CAST('2024-02-29' AS DATE) < CAST('2024-03-01' AS DATE)", "BOOLEAN TRUE");
    EXPECT("CAST(CAST('1970-01-02' AS DATE) AS TIMESTAMP)", "TIMESTAMP 86400000");
    EXPECT("CAST(ts AS DATE) = CAST(' 2026-1-1 ' AS DATE)", "BOOLEAN TRUE");
    EXPECT("CAST(TIME '10:11:12' AS STRING)", "STRING 10:11:12");
    EXPECT("TIME '10:00:00.5' > TIME '10:00:00'", "BOOLEAN TRUE");
    EXPECT("CAST(CAST(ts AS TIME) AS STRING)", "STRING 00:00:00");
    EXPECT("CAST(CAST(ts AS DATE) AS INT)", "PARSE: line 1, column 1: cannot CAST DATE to INT");
    EXPECT("TIME '25:00:00'", "PARSE: line 1, column 6: invalid TIME literal '25:00:00' (expected 'HH:MM:SS[.fff]')");
    EXPECT("CAST(ts AS DATE) + 1", "PARSE: line 1, column 18: cannot apply '+' to DATE and INT");
    EXPECT("CAST(1.005 AS DECIMAL(3, 2))", "DECIMAL(3, 2) 1.01");
    EXPECT("CAST(-1.005 AS DECIMAL(3, 2))", "DECIMAL(3, 2) -1.01");
    EXPECT("CAST(CAST(1.005 AS DOUBLE) AS DECIMAL(3, 2))", "DECIMAL(3, 2) 1.01");
    EXPECT("CAST(123.4 AS DECIMAL(3, 1))", "DECIMAL(3, 1) NULL");
    EXPECT("CAST('123.4' AS DECIMAL(3, 1))", "EVAL: cannot CAST '123.4' to DECIMAL(3, 1) at position 1");
    EXPECT("TRY_CAST('12.x' AS DECIMAL(3, 1))", "DECIMAL(3, 1) NULL");
    EXPECT("CAST(-2.7 AS INT)", "INT -2");
    EXPECT("CAST(ok AS DECIMAL(3, 1))", "PARSE: line 1, column 1: cannot CAST BOOLEAN to DECIMAL(3, 1)");
    EXPECT("CAST(0.0 AS STRING)", "STRING 0.0");
    EXPECT("CAST(TRUE AS STRING)", "STRING TRUE");
    EXPECT("CAST(nul_b IS NULL AND FALSE AS STRING)", "STRING FALSE");
    EXPECT("CAST(name AS VARCHAR(10))", "STRING Alice");
    EXPECT("CAST(ts AS STRING)", "STRING 2026-01-01 00:00:00.020");
    EXPECT("CAST(TIMESTAMP '1969-12-31 23:59:59.999' AS STRING)",
           "STRING 1969-12-31 23:59:59.999");
    /* a literal is a TIMESTAMP(p), p its fraction digits (Flink) */
    EXPECT("CAST(TIMESTAMP '1900-01-01 00:00:00' AS STRING)", "STRING 1900-01-01 00:00:00");
    EXPECT("CAST(TIMESTAMP '1900-01-01 00:00:00.000' AS STRING)", "STRING 1900-01-01 00:00:00.000");
    EXPECT("CAST(TIMESTAMP '2024-01-31 10:00:00.123456789' AS STRING)",
           "STRING 2024-01-31 10:00:00.123456789");
    EXPECT("CAST('2026-01-01 00:00:00.020' AS TIMESTAMP(3))", "TIMESTAMP 1767225600020");
    EXPECT("CAST('2026-01-01T00:00:00.02' AS TIMESTAMP)", "TIMESTAMP 1767225600020");
    EXPECT("CAST('2026-01-01' AS TIMESTAMP_LTZ(3))", "TIMESTAMP 1767225600000");
    EXPECT("CAST('2000-03-01 00:00' AS TIMESTAMP)", "TIMESTAMP 951868800000");
    EXPECT("CAST('1969-12-31 23:59:59.999' AS TIMESTAMP)", "TIMESTAMP -1");
    EXPECT("CAST('1900-01-01 00:00:00' AS TIMESTAMP)", "TIMESTAMP -2208988800000");
    EXPECT("CAST('2026-02-30 00:00:00' AS TIMESTAMP)",
           "EVAL: cannot CAST '2026-02-30 00:00:00' to TIMESTAMP(3) at position 1");
    EXPECT("CAST('2026-01-01 24:00:00' AS TIMESTAMP)",
           "EVAL: cannot CAST '2026-01-01 24:00:00' to TIMESTAMP(3) at position 1");
    EXPECT("CAST(ts AS TIMESTAMP(3) WITH LOCAL TIME ZONE)", "TIMESTAMP 1767225600020");
    EXPECT("CAST('true' AS BOOLEAN)", "BOOLEAN TRUE");
    EXPECT("CAST(' FALSE ' AS BOOLEAN)", "BOOLEAN FALSE");
    EXPECT("CAST('maybe' AS BOOLEAN)", "EVAL: cannot CAST 'maybe' to BOOLEAN at position 1");
    EXPECT("CAST(0 AS BOOLEAN)", "BOOLEAN FALSE");
    EXPECT("CAST(price AS BOOLEAN)", "BOOLEAN TRUE");
    EXPECT("CAST(TRUE AS INT)", "INT 1");
    EXPECT("CAST(ok AS DOUBLE)", "DOUBLE 1");
    EXPECT("CAST(name AS BYTES)", "BYTES Alice");
    EXPECT("cast(1 as bigint)", "BIGINT 1");
}

static void test_timestamps(void)
{
    EXPECT("TO_TIMESTAMP_LTZ(1767225600000 + id * 10, 3)", "TIMESTAMP 1767225600070");
    EXPECT("TO_TIMESTAMP_LTZ(1767225600, 0)", "TIMESTAMP 1767225600000");
    EXPECT("TO_TIMESTAMP_LTZ(1767225600.5, 0)", "TIMESTAMP 1767225600500");
    EXPECT("TO_TIMESTAMP_LTZ(n, 0)", "TIMESTAMP 3000");
    EXPECT("TO_TIMESTAMP_LTZ(nul_i, 3)", "TIMESTAMP NULL");
    EXPECT("TO_TIMESTAMP_LTZ(9223372036854775807, 0)",
           "EVAL: TO_TIMESTAMP_LTZ: 9223372036854775807 seconds is out of range at position 1");
    EXPECT("CAST(TO_TIMESTAMP_LTZ(1767225600000 + id * 10, 3) AS STRING)",
           "STRING 2026-01-01 00:00:00.070");
    EXPECT("CAST(TO_TIMESTAMP_LTZ(-9223372036854775807 - 1, 3) AS STRING)",
           "STRING -292275055-05-16 16:47:04.192");
    EXPECT("CAST(TO_TIMESTAMP_LTZ(9223372036854775807, 3) AS STRING)",
           "STRING 292278994-08-17 07:12:55.807");
    EXPECT("TO_TIMESTAMP('2026-01-01 00:00:01')", "TIMESTAMP 1767225601000");
    EXPECT("TO_TIMESTAMP('garbage')", "TIMESTAMP NULL");
    EXPECT("TO_TIMESTAMP(nul_s)", "TIMESTAMP NULL");
    EXPECT("ts + INTERVAL '5' SECOND", "TIMESTAMP 1767225605020");
    EXPECT("ts - INTERVAL '1' MINUTE", "TIMESTAMP 1767225540020");
    EXPECT("INTERVAL '2' HOUR + ts", "TIMESTAMP 1767232800020");
    EXPECT("ts + INTERVAL '1' DAY * 2", "TIMESTAMP 1767398400020");
    EXPECT("ts + -INTERVAL '20' MILLISECOND", "TIMESTAMP 1767225600000");
    EXPECT("ts + INTERVAL '1' FORTNIGHT",
           "PARSE: line 1, column 19: unexpected 'FORTNIGHT', expected an interval unit (SECOND, MINUTE, HOUR, DAY)");
    EXPECT("ts + -INTERVAL '1' SECOND", "TIMESTAMP 1767225599020");
    EXPECT("ts + (INTERVAL '1' SECOND + INTERVAL '1' MINUTE)", "TIMESTAMP 1767225661020");
    EXPECT("INTERVAL '1' SECOND - ts",
           "PARSE: line 1, column 21: cannot apply '-' to INTERVAL SECOND and TIMESTAMP(3)");
}

static void test_strings(void)
{
    EXPECT("UPPER('abc')", "STRING ABC");
    EXPECT("upper(name)", "STRING ALICE");
    EXPECT("LOWER(name)", "STRING alice");
    EXPECT("LOWER('\xc3\x80" "BC')", "STRING \xc3\x80" "bc"); /* ASCII letters only */
    EXPECT("CHAR_LENGTH('h\xc3\xa9llo')", "INT 5");
    EXPECT("CHARACTER_LENGTH('')", "INT 0");
    EXPECT("CHAR_LENGTH(name)", "INT 5");
    EXPECT("CONCAT('a', 'b', 'c')", "STRING abc");
    EXPECT("CONCAT(name)", "STRING Alice");
    EXPECT("CONCAT('a', 'b', 'c', 'd', 'e', 'f', name)", "STRING abcdefAlice");
    EXPECT("CONCAT('', '')", "STRING ");
    EXPECT("'a' || 'b' || name", "STRING abAlice");
    EXPECT("CONCAT(name, '-', CAST(id AS STRING))", "STRING Alice-7");
    EXPECT("TRIM('  x  ')", "STRING x");
    EXPECT("TRIM(BOTH FROM '  x  ')", "STRING x");
    EXPECT("TRIM(LEADING 'x' FROM 'xxaxx')", "STRING axx");
    EXPECT("TRIM(TRAILING 'x' FROM 'xxaxx')", "STRING xxa");
    EXPECT("TRIM(TRAILING FROM '  a  ')", "STRING   a");
    EXPECT("TRIM('xy' FROM 'xyyxaxy')", "STRING a");
    EXPECT("TRIM(BOTH '\xc3\xa9' FROM '\xc3\xa9\xc3\xa9" "a\xc3\xa9')", "STRING a");
    EXPECT("TRIM('   ')", "STRING ");
    EXPECT("LTRIM('  a  ')", "STRING a  ");
    EXPECT("RTRIM('  a  ')", "STRING   a");
    EXPECT("SUBSTRING('hello' FROM 2 FOR 3)", "STRING ell");
    EXPECT("SUBSTRING('hello' FROM 2)", "STRING ello");
    EXPECT("SUBSTRING('hello', 2, 3)", "STRING ell");
    EXPECT("SUBSTRING('hello', 2)", "STRING ello");
    EXPECT("SUBSTRING('hello', 0, 2)", "STRING he");
    EXPECT("SUBSTRING('hello', -3, 2)", "STRING ll");
    EXPECT("SUBSTRING('hello', -10, 2)", "STRING ");
    EXPECT("SUBSTRING('hello', 10)", "STRING ");
    EXPECT("SUBSTRING('hello', 5, 9223372036854775807)", "STRING o");
    EXPECT("SUBSTRING('h\xc3\xa9llo', 2, 2)", "STRING \xc3\xa9l");
    EXPECT("SUBSTRING('hello', 2, -1)", "STRING NULL");
    EXPECT("SUBSTRING(name FROM n)", "STRING ice");
    EXPECT("SUBSTRING(nul_s, 1)", "STRING NULL");
    EXPECT("SUBSTRING(name, nul_i)", "STRING NULL");
    EXPECT("POSITION('l' IN 'hello')", "INT 3");
    EXPECT("POSITION('lo' IN 'hello')", "INT 4");
    EXPECT("POSITION('z' IN 'hello')", "INT 0");
    EXPECT("POSITION('' IN 'abc')", "INT 1");
    EXPECT("POSITION('hello!' IN 'hello')", "INT 0");
    EXPECT("POSITION('l' IN 'h\xc3\xa9llo')", "INT 3");
    EXPECT("POSITION('ice' IN name)", "INT 3");
    EXPECT("POSITION(nul_s IN name)", "INT NULL");
    /* LIKE */
    EXPECT("'hello' LIKE 'h%o'", "BOOLEAN TRUE");
    EXPECT("'hello' LIKE 'h_llo'", "BOOLEAN TRUE");
    EXPECT("'hello' LIKE 'h_lo'", "BOOLEAN FALSE");
    EXPECT("'h\xc3\xa9llo' LIKE 'h_llo'", "BOOLEAN TRUE");
    EXPECT("'hello' LIKE 'HELLO'", "BOOLEAN FALSE");
    EXPECT("'hello' NOT LIKE '%z%'", "BOOLEAN TRUE");
    EXPECT("'' LIKE '%'", "BOOLEAN TRUE");
    EXPECT("'' LIKE '_'", "BOOLEAN FALSE");
    EXPECT("'abc' LIKE '%'", "BOOLEAN TRUE");
    EXPECT("'aaa' LIKE '%a%a%a%'", "BOOLEAN TRUE");
    EXPECT("'ab' LIKE '%a%a%'", "BOOLEAN FALSE");
    EXPECT("'mississippi' LIKE '%iss%ppi'", "BOOLEAN TRUE");
    EXPECT("'50%' LIKE '50!%' ESCAPE '!'", "BOOLEAN TRUE");
    EXPECT("'50x' LIKE '50!%' ESCAPE '!'", "BOOLEAN FALSE");
    EXPECT("'a_b' LIKE '%!_%' ESCAPE '!'", "BOOLEAN TRUE");
    EXPECT("'ab' LIKE '%!_%' ESCAPE '!'", "BOOLEAN FALSE");
    EXPECT("'a!' LIKE 'a!!' ESCAPE '!'", "BOOLEAN TRUE");
    EXPECT("'a' LIKE 'a!' ESCAPE '!'",
           "EVAL: LIKE pattern ends with the escape character at position 5");
    EXPECT("'a' LIKE 'a' ESCAPE '!!'",
           "EVAL: LIKE ESCAPE must be a single character, got 2 bytes at position 5");
    EXPECT("name LIKE 'A%'", "BOOLEAN TRUE");
    EXPECT("nul_s LIKE 'A%'", "BOOLEAN NULL");
}

/* A pattern that makes a naive backtracking matcher exponential. */
static void test_like_is_not_exponential(void)
{
    static char text[4200];
    size_t o = 0;
    o += (size_t)snprintf(text + o, sizeof text - o, "'");
    for (int i = 0; i < 4000; i++) text[o++] = 'a';
    snprintf(text + o, sizeof text - o, "' LIKE '%%a%%a%%a%%a%%a%%a%%a%%a%%b'");
    EXPECT(text, "BOOLEAN FALSE");
}

static void test_numeric_functions(void)
{
    EXPECT("ABS(-5)", "INT 5");
    EXPECT("ABS(neg)", "INT 7");
    EXPECT("ABS(-id)", "BIGINT 7");
    EXPECT("ABS(-1.5)", "DECIMAL(2, 1) 1.5");
    EXPECT("ABS(-2147483647 - 1)", "INT -2147483648");
    EXPECT("FLOOR(1.5)", "DECIMAL(2, 0) 1");
    EXPECT("FLOOR(-1.5)", "DECIMAL(2, 0) -2");
    EXPECT("CEIL(1.2)", "DECIMAL(2, 0) 2");
    EXPECT("CEILING(-1.2)", "DECIMAL(2, 0) -1");
    EXPECT("CEIL(id)", "BIGINT 7");
    EXPECT("FLOOR(price)", "DOUBLE 2");
}

/* Results that need more scratch than there is fail cleanly. */
static void test_scratch_exhausted(void)
{
    CHECK_EQ_STR(run_limit("UPPER(name)", 0),
                 "EVAL: string result too large (5 bytes; scratch space exhausted) at position 1");
    CHECK_EQ_STR(run_limit("CONCAT(name, name, name, name)", 16),
                 "EVAL: string result too large (20 bytes; scratch space exhausted) at position 1");
    CHECK_EQ_STR(run_limit("CONCAT(name, name, name)", 16), "STRING AliceAliceAlice");
    CHECK_EQ_STR(run_limit("CAST(id AS STRING)", 0),
                 "EVAL: string result too large (1 bytes; scratch space exhausted) at position 1");
    /* slices and empty strings need no scratch at all */
    CHECK_EQ_STR(run_limit("SUBSTRING(name, 2, 2)", 0), "STRING li");
    CHECK_EQ_STR(run_limit("TRIM(name)", 0), "STRING Alice");
    CHECK_EQ_STR(run_limit("CONCAT('', '')", 0), "STRING ");
    CHECK_EQ_STR(run_limit("CONCAT('a', 'b', 'c', 'd', 'e')", 0),
                 "EVAL: scratch space exhausted evaluating CONCAT at position 1");
}

static void test_parse_item(void)
{
    setup();
    char err[256], *name;
    sl_expr *e = sl_expr_parse_item("id", &S, 1, &name, err, sizeof err);
    CHECK(e != NULL);
    CHECK_EQ_STR(name, "id");
    CHECK(sl_expr_type(e) == SL_T_BIGINT);
    free(name);
    sl_expr_destroy(e);

    e = sl_expr_parse_item("ID", &S, 1, &name, err, sizeof err); /* the schema's spelling */
    CHECK(e != NULL);
    CHECK_EQ_STR(name, "id");
    free(name);
    sl_expr_destroy(e);

    e = sl_expr_parse_item("id % 5 AS user_id", &S, 2, &name, err, sizeof err);
    CHECK(e != NULL);
    CHECK_EQ_STR(name, "user_id");
    CHECK(sl_expr_type(e) == SL_T_INT); /* the divisor's type, as in Flink */
    free(name);
    sl_expr_destroy(e);

    e = sl_expr_parse_item("n + 1", &S, 3, &name, err, sizeof err);
    CHECK(e != NULL);
    CHECK_EQ_STR(name, "EXPR$3");
    CHECK(sl_expr_type(e) == SL_T_INT);
    free(name);
    sl_expr_destroy(e);

    e = sl_expr_parse_item("name AS `the name`", &S, 0, &name, err, sizeof err);
    CHECK(e != NULL);
    CHECK_EQ_STR(name, "the name");
    free(name);
    sl_expr_destroy(e);

    e = sl_expr_parse_item("n * 2 doubled", &S, 0, &name, err, sizeof err);
    CHECK(e != NULL);
    CHECK_EQ_STR(name, "doubled");
    free(name);
    sl_expr_destroy(e);

    e = sl_expr_parse_item("TO_TIMESTAMP_LTZ(1767225600000 + id * 10, 3) AS ts", &S, 0, &name,
                           err, sizeof err);
    CHECK(e != NULL);
    CHECK_EQ_STR(name, "ts");
    CHECK(sl_expr_type(e) == SL_T_TIMESTAMP);
    free(name);
    sl_expr_destroy(e);

    name = (char *)"untouched";
    CHECK(sl_expr_parse_item("id AS", &S, 0, &name, err, sizeof err) == NULL);
    CHECK(name == NULL);
    CHECK_EQ_STR(err, "line 1, column 6: unexpected end of input, expected an identifier");
    CHECK(sl_expr_parse_item("id AS 5", &S, 0, &name, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "line 1, column 7: unexpected '5', expected an identifier");
    CHECK(sl_expr_parse_item("id AS a b", &S, 0, &name, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "line 1, column 9: unexpected 'b'");
    CHECK(sl_expr_parse_item("id AS ``", &S, 0, &name, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "line 1, column 7: empty quoted identifier");
    CHECK(sl_expr_parse_item("usr_id % 5 AS user_id", &S, 0, &name, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "line 1, column 1: unknown column 'usr_id'");
    CHECK(sl_expr_parse_item(NULL, &S, 0, &name, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "missing expression");
    /* a NULL err buffer is allowed */
    CHECK(sl_expr_parse_item("id +", &S, 0, &name, NULL, 0) == NULL);
}

static void test_eval_bool(void)
{
    setup();
    char err[256];
    sl_arena a;
    sl_arena_init(&a, 1024);
    sl_expr *f = sl_expr_parse("id % 2 = 0", &S, err, sizeof err);
    CHECK(f != NULL);
    bool pass = true;
    int64_t kept = 0;
    for (int64_t i = 0; i < 10; i++) {
        sl_value v[1] = {{.v.i = i}};
        sl_row r = {SL_KIND_INSERT, 1, v, SL_TS_NONE};
        CHECK(sl_expr_eval_bool(f, &r, &a, &pass, err, sizeof err) == SL_OK);
        if (pass) kept += i;
    }
    CHECK_EQ_INT(kept, 0 + 2 + 4 + 6 + 8);
    sl_expr_destroy(f);

    /* NULL is not TRUE */
    f = sl_expr_parse("nul_b", &S, err, sizeof err);
    CHECK(sl_expr_eval_bool(f, &R, &a, &pass, err, sizeof err) == SL_OK);
    CHECK(!pass);
    sl_expr_destroy(f);
    f = sl_expr_parse("NULL", &S, err, sizeof err);
    CHECK(sl_expr_eval_bool(f, &R, &a, &pass, err, sizeof err) == SL_OK);
    CHECK(!pass);
    sl_expr_destroy(f);
    /* a runtime error is reported, and the row does not pass */
    f = sl_expr_parse("n / 0 = 1", &S, err, sizeof err);
    pass = true;
    CHECK(sl_expr_eval_bool(f, &R, &a, &pass, err, sizeof err) == SL_ERR);
    CHECK(!pass);
    CHECK_EQ_STR(err, "division by zero at position 3");
    sl_expr_destroy(f);
    /* a non-BOOLEAN expression is refused */
    f = sl_expr_parse("n", &S, err, sizeof err);
    CHECK(sl_expr_eval_bool(f, &R, &a, &pass, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "condition is INT, not BOOLEAN");
    sl_expr_destroy(f);
    /* a row shorter than the schema is an error, not a read out of bounds */
    f = sl_expr_parse("neg < 0", &S, err, sizeof err);
    sl_row shorter = R;
    shorter.n = 3;
    CHECK(sl_expr_eval_bool(f, &shorter, &a, &pass, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "row has 3 values, expression reads column 11 at position 1");
    sl_expr_destroy(f);
    sl_arena_free(&a);
}

static void test_intervals(void)
{
    static const struct {
        const char *text;
        int64_t ms;
    } ok[] = {
        {"5 s", 5000},
        {"100 ms", 100},
        {"10 min", 600000},
        {"INTERVAL '10' SECOND", 10000},
        {"interval '3' minutes", 180000},
        {"1 h", 3600000},
        {"2 h", 7200000},
        {"2 d", 172800000},
        {"5s", 5000},
        {"  7 seconds  ", 7000},
        {"1 day", 86400000},
        {"50000", 50000},
        {"0 s", 0},
        {"INTERVAL ' 4 ' HOUR", 14400000},
        {"3 MIN", 180000},
    };
    char err[256];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ms = -1;
        if (sl_interval_parse(ok[i].text, &ms, err, sizeof err) != SL_OK) {
            fprintf(stderr, "interval '%s': %s\n", ok[i].text, err);
            CHECK(0);
        }
        CHECK_EQ_INT(ms, ok[i].ms);
    }
    int64_t ms;
    CHECK(sl_interval_parse("5 parsecs", &ms, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "invalid interval '5 parsecs': unknown unit 'parsecs' (use ms, s, min, h "
                      "or d)");
    CHECK(sl_interval_parse("-5 s", &ms, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "invalid interval '-5 s': must not be negative");
    CHECK(sl_interval_parse("106751991167301 d", &ms, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "invalid interval '106751991167301 d': too large");
    const char *bad[] = {"", "s", "abc", "1.5 s", "INTERVAL", "INTERVAL '5'", "INTERVAL 5 SECOND",
                         "INTERVAL 'x' SECOND", "INTERVAL '5 SECOND", "99999999999999999999 ms",
                         "5 s s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (sl_interval_parse(bad[i], &ms, err, sizeof err) != SL_ERR) {
            fprintf(stderr, "interval '%s' was accepted\n", bad[i]);
            CHECK(0);
        }
        CHECK(strstr(err, "invalid interval") == err);
    }
    CHECK(sl_interval_parse(NULL, &ms, err, sizeof err) == SL_ERR);
    CHECK(sl_interval_parse("x", &ms, NULL, 0) == SL_ERR);
}

/* Deep nesting is an error, not a stack overflow. */
static void test_depth_limit(void)
{
    enum { N = 20000 };
    char *t = malloc(3 * N + 8);
    char err[256];
    setup();

    size_t o = 0;
    for (int i = 0; i < N; i++) t[o++] = '(';
    t[o++] = '1';
    for (int i = 0; i < N; i++) t[o++] = ')';
    t[o] = '\0';
    CHECK(sl_expr_parse(t, &S, err, sizeof err) == NULL);
    CHECK(strstr(err, "nested too deeply") != NULL);

    o = 0; /* "- - - 1" ("--" would start a comment) */
    for (int i = 0; i < N; i++) t[o++] = i % 2 ? ' ' : '-';
    t[o++] = '1';
    t[o] = '\0';
    CHECK(sl_expr_parse(t, &S, err, sizeof err) == NULL);
    CHECK(strstr(err, "nested too deeply") != NULL);

    o = 0;
    for (int i = 0; i < N / 4; i++) o += (size_t)sprintf(t + o, "NOT ");
    sprintf(t + o, "ok");
    CHECK(sl_expr_parse(t, &S, err, sizeof err) == NULL);
    CHECK(strstr(err, "nested too deeply") != NULL);

    /* a long flat chain builds a deep tree: refused by height */
    o = 0;
    for (int i = 0; i < N / 2; i++) o += (size_t)sprintf(t + o, "1+");
    sprintf(t + o, "1");
    CHECK(sl_expr_parse(t, &S, err, sizeof err) == NULL);
    CHECK(strstr(err, "nested too deeply") != NULL);

    o = 0;
    for (int i = 0; i < N / 8; i++) o += (size_t)sprintf(t + o, "ABS(");
    t[o++] = '1';
    for (int i = 0; i < N / 8; i++) t[o++] = ')';
    t[o] = '\0';
    CHECK(sl_expr_parse(t, &S, err, sizeof err) == NULL);
    CHECK(strstr(err, "nested too deeply") != NULL);

    /* moderate nesting is fine */
    o = 0;
    for (int i = 0; i < 50; i++) t[o++] = '(';
    o += (size_t)sprintf(t + o, "1+1");
    for (int i = 0; i < 50; i++) t[o++] = ')';
    t[o] = '\0';
    CHECK_EQ_STR(run(t), "INT 2");
    o = 0;
    for (int i = 0; i < 100; i++) o += (size_t)sprintf(t + o, "1+");
    sprintf(t + o, "1");
    CHECK_EQ_STR(run(t), "INT 101");

    /* a wide IN list is shallow */
    o = (size_t)sprintf(t, "n IN (");
    for (int i = 0; i < 2000; i++) o += (size_t)sprintf(t + o, "%d,", 1000 + i);
    sprintf(t + o, "3)");
    CHECK_EQ_STR(run(t), "BOOLEAN TRUE");
    free(t);
}

/* Every prefix of a set of valid expressions, and random mutations of them,
 * must parse or fail with a message -- never crash (run under SAN=1 this
 * also proves no out-of-bounds access). What parses must also evaluate
 * without crashing. */
static void test_fuzz(void)
{
    static const char *const seeds[] = {
        "TO_TIMESTAMP_LTZ(1767225600000 + id * 10, 3)",
        "CASE WHEN n > 5 THEN 'big' WHEN n IS NULL THEN NULL ELSE CONCAT(name, '!') END",
        "CAST(SUBSTRING(name FROM 2 FOR 3) AS STRING) LIKE '%l!_%' ESCAPE '!'",
        "TRIM(LEADING 'x' FROM name) || UPPER(`my col`) || LOWER(nul_s)",
        "n NOT BETWEEN -1 AND 2.5e3 OR id NOT IN (1, 2, NULL) AND NOT ok IS NOT TRUE",
        "POSITION('l' IN name) + CHAR_LENGTH(name) * MOD(id, 3) / ABS(neg) % 2",
        "ts + INTERVAL '5' SECOND > TIMESTAMP '2026-01-01 00:00:00' AND ts <> '2026-01-01'",
        "COALESCE(nul_i, NULLIF(n, 3), IF(ok, FLOOR(price), CEIL(-price)))",
        "TRY_CAST('12' AS INT) + CAST(' 4 ' AS BIGINT) - TO_TIMESTAMP(name) IS NULL",
    };
    static const char alphabet[] = "()',`%_-+*/=<>!|. \x01\xff\xc3" "0123456789aeINOTSLCAE";
    setup();
    char err[256], buf[256];
    sl_arena a;
    sl_arena_init(&a, 256);
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    int parsed = 0, refused = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        size_t len = strlen(seeds[s]);
        for (int round = 0; round < 400; round++) {
            if (round <= (int)len) { /* every prefix first */
                memcpy(buf, seeds[s], (size_t)round);
                buf[round] = '\0';
            } else { /* then random damage: replace, cut or insert bytes */
                snprintf(buf, sizeof buf, "%s", seeds[s]);
                int edits = 1 + (int)(rng % 4);
                for (int k = 0; k < edits; k++) {
                    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                    size_t cur = strlen(buf), at = (size_t)(rng >> 8) % (cur + 1);
                    char c = alphabet[(rng >> 40) % (sizeof alphabet - 1)];
                    switch (rng % 3) {
                    case 0: if (at < cur) buf[at] = c; break;
                    case 1: if (at < cur) memmove(buf + at, buf + at + 1, cur - at); break;
                    default:
                        if (cur + 1 < sizeof buf) {
                            memmove(buf + at + 1, buf + at, cur - at + 1);
                            buf[at] = c;
                        }
                    }
                }
            }
            err[0] = '\0';
            sl_expr *e = sl_expr_parse(buf, &S, err, sizeof err);
            if (!e) {
                refused++;
                CHECK(err[0] != '\0');
                CHECK(strncmp(err, "line ", 5) == 0 && strstr(err, ", column ") != NULL);
                continue;
            }
            parsed++;
            sl_value v;
            sl_arena_reset(&a);
            err[0] = '\0';
            if (sl_expr_eval(e, &R, &a, &v, err, sizeof err) != SL_OK) CHECK(err[0] != '\0');
            sl_expr_destroy(e);
        }
    }
    /* pure garbage */
    for (int round = 0; round < 3000; round++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        size_t len = (size_t)(rng % 40);
        for (size_t k = 0; k < len; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            buf[k] = alphabet[(rng >> 33) % (sizeof alphabet - 1)];
        }
        buf[len] = '\0';
        err[0] = '\0';
        sl_expr *e = sl_expr_parse(buf, &S, err, sizeof err);
        if (!e) {
            CHECK(err[0] != '\0');
            continue;
        }
        sl_value v;
        sl_arena_reset(&a);
        (void)sl_expr_eval(e, &R, &a, &v, err, sizeof err);
        sl_expr_destroy(e);
    }
    sl_arena_free(&a);
    CHECK(parsed > 50);   /* the loop really exercised both outcomes */
    CHECK(refused > 500);
}

static void test_keywords_and_quoting(void)
{
    EXPECT("CASE WHEN TRUE THEN 1 END", "INT 1");
    EXPECT("case when true then 1 end", "INT 1");
    EXPECT("Cast(n As Double)", "DOUBLE 3");
    EXPECT("n not in (1)", "BOOLEAN TRUE");
    EXPECT("`end`", "PARSE: line 1, column 1: unknown column 'end'");
    EXPECT("end",
           "PARSE: line 1, column 1: unexpected 'end', expected an expression");
    EXPECT("`n```", "PARSE: line 1, column 1: unknown column 'n`'");
    EXPECT("n\t+\n1", "INT 4");
}

/* ---- time, intervals and RAND ------------------------------------------------
 * Expected values: epoch milliseconds from Python's datetime (UTC); RAND's
 * from java.util.Random run by the JDK (new Random(seed).nextDouble(),
 * .nextInt(bound)); interval texts from Flink's documented CAST output. */

static void test_interval_literals(void)
{
    EXPECT("INTERVAL '0.003' SECOND", "INTERVAL SECOND(3) 3");
    EXPECT("INTERVAL '1.5' SECOND", "INTERVAL SECOND(3) 1500");
    EXPECT("INTERVAL '-1.5' SECOND", "INTERVAL SECOND(3) -1500");
    EXPECT("INTERVAL '+2' MINUTE", "INTERVAL SECOND(3) 120000");
    EXPECT("INTERVAL '1.23456' SECOND", "INTERVAL SECOND(3) 1234"); /* below a millisecond is dropped */
    EXPECT("INTERVAL '99' DAY", "INTERVAL SECOND(3) 8553600000");
    EXPECT("INTERVAL '007' SECOND", "INTERVAL SECOND(3) 7000");
    EXPECT("INTERVAL '100' SECOND",
           "PARSE: line 1, column 10: interval field value 100 exceeds precision of SECOND(2) field (write "
           "SECOND(3))");
    EXPECT("INTERVAL '100' SECOND(3)", "INTERVAL SECOND(3) 100000");
    EXPECT("INTERVAL '1.5' SECOND(2, 3)", "INTERVAL SECOND(3) 1500");
    EXPECT("INTERVAL '100' DAY(2)",
           "PARSE: line 1, column 10: interval field value 100 exceeds precision of DAY(2) field (write DAY(3))");
    EXPECT("INTERVAL '5' SECOND(11)",
           "PARSE: line 1, column 14: interval precision must be a number from 1 to 10");
    EXPECT("INTERVAL '1 02:03:04.005' DAY TO SECOND", "INTERVAL SECOND(3) 93784005");
    EXPECT("INTERVAL '-1 02:03:04' DAY TO SECOND", "INTERVAL SECOND(3) -93784000");
    EXPECT("INTERVAL '2 5' DAY TO HOUR", "INTERVAL SECOND(3) 190800000");
    EXPECT("INTERVAL '2 5:30' DAY TO MINUTE", "INTERVAL SECOND(3) 192600000");
    EXPECT("INTERVAL '10:30' HOUR TO MINUTE", "INTERVAL SECOND(3) 37800000");
    EXPECT("INTERVAL '1:02:03' HOUR TO SECOND", "INTERVAL SECOND(3) 3723000");
    EXPECT("INTERVAL '1:30' MINUTE TO SECOND", "INTERVAL SECOND(3) 90000");
    EXPECT("INTERVAL '1:30.25' MINUTE TO SECOND", "INTERVAL SECOND(3) 90250");
    EXPECT("INTERVAL '1:75' HOUR TO MINUTE",
           "PARSE: line 1, column 10: invalid INTERVAL literal '1:75': MINUTE must be 0 to 59");
    EXPECT("INTERVAL '1 24' DAY TO HOUR",
           "PARSE: line 1, column 10: invalid INTERVAL literal '1 24': HOUR must be 0 to 23");
    EXPECT("INTERVAL '1:30' MINUTE",
           "PARSE: line 1, column 10: INTERVAL needs a whole number in quotes, e.g. INTERVAL '5' SECOND");
    EXPECT("INTERVAL '1:30' DAY TO SECOND",
           "PARSE: line 1, column 10: invalid INTERVAL literal '1:30' for INTERVAL DAY TO SECOND (expected "
           "'D HH:MM:SS[.fff]')");
    EXPECT("INTERVAL '1.5' MINUTE",
           "PARSE: line 1, column 10: INTERVAL needs a whole number in quotes, e.g. INTERVAL '5' SECOND");
    EXPECT("INTERVAL '1' SECOND TO MINUTE",
           "PARSE: line 1, column 24: invalid interval qualifier: expected HOUR, MINUTE or SECOND finer than SECOND "
           "after TO");
    /* year-month intervals (issue 29): months, a result typed INTERVAL MONTH as Flink's */
    EXPECT("INTERVAL '1' MONTH", "INTERVAL MONTH 1");
    EXPECT("INTERVAL '1-2' YEAR TO MONTH", "INTERVAL MONTH 14");
    EXPECT("CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING)", "STRING +1-02");
    EXPECT("CAST(INTERVAL '-14' MONTH AS STRING)", "STRING -1-02");
    EXPECT("CAST(INTERVAL '1-12' YEAR TO MONTH AS STRING)",
           "PARSE: line 1, column 15: invalid INTERVAL literal '1-12': MONTH must be 0 to 11");
    EXPECT("CAST(INTERVAL '100' YEAR AS STRING)",
           "PARSE: line 1, column 15: interval field value 100 exceeds precision of YEAR(2) field (write YEAR(3))");
    EXPECT("INTERVAL '1' YEAR + INTERVAL '1' DAY",
           "PARSE: line 1, column 19: cannot apply '+' to INTERVAL YEAR and INTERVAL DAY");
    EXPECT("CAST(TIMESTAMP '2024-01-31 10:00:00.123456789' + INTERVAL '1' MONTH AS STRING)",
           "STRING 2024-02-29 10:00:00.123456789");
    EXPECT("CAST(DATE '2024-03-31' - INTERVAL '1-1' YEAR TO MONTH AS STRING)", "STRING 2023-02-28");
    EXPECT("CAST(DATE '2024-01-31' - INTERVAL '1 23:00:00' DAY TO SECOND AS STRING)", "STRING 2024-01-30");
    EXPECT("CAST(TIME '23:30:00' + INTERVAL '45' MINUTE AS STRING)", "STRING 00:15:00");
    EXPECT("DATE '2024-01-31' + INTERVAL '1' HOUR",
           "PARSE: line 1, column 19: cannot apply '+' to DATE and INTERVAL HOUR (Flink makes a DATE with hours, "
           "minutes or seconds a TIMESTAMP: CAST the DATE AS TIMESTAMP first)");
    EXPECT("INTERVAL '99999999999999999' SECOND(10)",
           "PARSE: line 1, column 10: interval field value 99999999999999999 exceeds precision of SECOND(10) field "
           "(write SECOND(17))");
    EXPECT("INTERVAL '999999999999999999' MILLISECOND", "INTERVAL SECOND(3) 999999999999999999");
    EXPECT("INTERVAL '9999999999999999' DAY(10)",
           "PARSE: line 1, column 10: interval field value 9999999999999999 exceeds precision of DAY(10) field "
           "(write DAY(16))");
    EXPECT("INTERVAL '9999999999' DAY(10)", "INTERVAL SECOND(3) 863999999913600000");
}

static void test_interval_arithmetic(void)
{
    EXPECT("INTERVAL '1' SECOND * 3", "INTERVAL SECOND(3) 3000");
    EXPECT("3 * INTERVAL '1' SECOND", "INTERVAL SECOND(3) 3000");
    EXPECT("INTERVAL '10' SECOND / 4", "INTERVAL SECOND(3) 2500");
    EXPECT("INTERVAL '10' SECOND * n - INTERVAL '1' MINUTE", "INTERVAL SECOND(3) -30000");
    EXPECT("INTERVAL '1' SECOND * nul_i", "INTERVAL SECOND(3) NULL");
    EXPECT("ts - INTERVAL '5' SECOND * n", "TIMESTAMP 1767225585020");
    EXPECT("ts - INTERVAL '0.001' SECOND * CAST(price * 1000 AS INT)", "TIMESTAMP 1767225597520");
    EXPECT("INTERVAL '1' SECOND * id",
           "PARSE: line 1, column 21: cannot apply '*' to INTERVAL SECOND and BIGINT: an interval is scaled by an "
           "INT only; use CAST(.. AS INT)");
    EXPECT("price * INTERVAL '1' SECOND",
           "PARSE: line 1, column 7: cannot apply '*' to DOUBLE and INTERVAL SECOND: an interval is scaled by an "
           "INT only; use CAST(.. AS INT)");
    EXPECT("INTERVAL '1' SECOND + 1",
           "PARSE: line 1, column 21: cannot apply '+' to INTERVAL SECOND and INT");
    EXPECT("2 / INTERVAL '1' SECOND",
           "PARSE: line 1, column 3: cannot apply '/' to INT and INTERVAL SECOND");
    EXPECT("INTERVAL '5' SECOND % 2",
           "PARSE: line 1, column 21: cannot apply '%' to INTERVAL SECOND and INT");
    EXPECT("INTERVAL '1' SECOND * INTERVAL '1' SECOND",
           "PARSE: line 1, column 21: cannot apply '*' to INTERVAL SECOND and INTERVAL SECOND");
    EXPECT("INTERVAL '1' SECOND / 0", "EVAL: division by zero at position 21");
    EXPECT("CAST(INTERVAL '1' MINUTE + INTERVAL '5' SECOND AS BIGINT)", "BIGINT 65");
    EXPECT("CAST(INTERVAL '1' DAY - INTERVAL '1' HOUR AS BIGINT)", "BIGINT 23");
    EXPECT("INTERVAL '1' MINUTE > INTERVAL '59' SECOND", "BOOLEAN TRUE");
    EXPECT("INTERVAL '60' SECOND = INTERVAL '1' MINUTE", "BOOLEAN TRUE");
    EXPECT("INTERVAL '1' SECOND > 5",
           "PARSE: line 1, column 21: cannot compare INTERVAL SECOND with INT in '>'");
    EXPECT("INTERVAL '2' SECOND BETWEEN INTERVAL '1' SECOND AND INTERVAL '3' SECOND",
           "BOOLEAN TRUE");
    EXPECT("INTERVAL '2' SECOND IN (2000, 3000)",
           "PARSE: line 1, column 25: cannot compare INTERVAL SECOND with INT in 'IN'");
    EXPECT("CASE WHEN ok THEN INTERVAL '1' SECOND ELSE 5 END",
           "PARSE: line 1, column 44: CASE branches have incompatible types INTERVAL SECOND and INT");
    EXPECT("CAST(CASE WHEN ok THEN INTERVAL '1' MINUTE ELSE INTERVAL '5' SECOND END AS BIGINT)",
           "BIGINT 60");
    EXPECT("CAST(COALESCE(NULL, INTERVAL '2' HOUR) AS BIGINT)", "BIGINT 2");
    EXPECT("COALESCE(INTERVAL '2' HOUR, 1)",
           "PARSE: line 1, column 29: COALESCE arguments have incompatible types INTERVAL HOUR and INT");
    EXPECT("IF(ok, INTERVAL '1' SECOND, 1)",
           "PARSE: line 1, column 1: IF branches have incompatible types INTERVAL SECOND and INT");
    EXPECT("CAST(ABS(-INTERVAL '2' SECOND) AS STRING)", "STRING +0 00:00:02.000");
    EXPECT("FLOOR(INTERVAL '2' SECOND)",
           "PARSE: line 1, column 1: FLOOR needs a number, got INTERVAL SECOND");
    EXPECT("TO_TIMESTAMP_LTZ(INTERVAL '2' SECOND, 3)",
           "PARSE: line 1, column 1: TO_TIMESTAMP_LTZ needs a number of seconds or milliseconds, got INTERVAL "
           "SECOND");
    EXPECT("CAST(NULLIF(INTERVAL '2' SECOND, INTERVAL '3' SECOND) AS BIGINT)", "BIGINT 2");
}

static void test_casts_time(void)
{
    EXPECT("CAST(INTERVAL '5' SECOND AS BIGINT)", "BIGINT 5");
    EXPECT("CAST(INTERVAL '1' MINUTE AS BIGINT)", "BIGINT 1");
    EXPECT("CAST(INTERVAL '1:30' MINUTE TO SECOND AS BIGINT)", "BIGINT 90");
    EXPECT("CAST(INTERVAL '1.5' SECOND AS BIGINT)", "BIGINT 1");
    EXPECT("CAST(-INTERVAL '1.5' SECOND AS BIGINT)", "BIGINT -1");
    EXPECT("CAST(INTERVAL '2' HOUR AS INT)", "INT 2");
    EXPECT("CAST(INTERVAL '5' SECOND AS STRING)", "STRING +0 00:00:05.000");
    EXPECT("CAST(INTERVAL '0.003' SECOND AS STRING)", "STRING +0 00:00:00.003");
    EXPECT("CAST(INTERVAL '1 02:03:04.005' DAY TO SECOND AS STRING)", "STRING +1 02:03:04.005");
    EXPECT("CAST(-INTERVAL '25' HOUR AS STRING)", "STRING -1 01:00:00.000");
    EXPECT("CAST(CAST(123456789 AS INTERVAL SECOND(9)) / 1000 AS STRING)",
           "STRING +1 10:17:36.789");
    EXPECT("CAST(5 AS INTERVAL SECOND)", "INTERVAL SECOND(3) 5000");
    EXPECT("CAST(id AS INTERVAL MINUTE)", "INTERVAL SECOND(3) 420000");
    EXPECT("ts + CAST(n AS INTERVAL MINUTE)", "TIMESTAMP 1767225780020");
    EXPECT("CAST(2 AS INTERVAL DAY TO HOUR)", "INTERVAL SECOND(3) 172800000");
    EXPECT("CAST(nul_i AS INTERVAL SECOND)", "INTERVAL SECOND(3) NULL");
    EXPECT("CAST(CAST(INTERVAL '90' SECOND AS INTERVAL MINUTE) AS BIGINT)", "BIGINT 1");
    EXPECT("CAST(price AS INTERVAL SECOND)",
           "PARSE: line 1, column 1: cannot CAST DOUBLE to INTERVAL SECOND (only an integer or an interval can be)");
    EXPECT("CAST('5' AS INTERVAL SECOND)",
           "PARSE: line 1, column 1: cannot CAST CHAR(1) to INTERVAL SECOND (only an integer or an interval can be)");
    EXPECT("CAST(INTERVAL '5' SECOND AS DOUBLE)",
           "PARSE: line 1, column 1: cannot CAST INTERVAL SECOND to DOUBLE");
    EXPECT("CAST(INTERVAL '5' SECOND AS TIMESTAMP(3))",
           "PARSE: line 1, column 1: cannot CAST INTERVAL SECOND to TIMESTAMP(3)");
    EXPECT("CAST(ts AS BIGINT)",
           "PARSE: line 1, column 1: cannot CAST TIMESTAMP(3) to BIGINT: a TIMESTAMP does not convert to a number; "
           "use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds");
    EXPECT("CAST(ts AS DOUBLE)",
           "PARSE: line 1, column 1: cannot CAST TIMESTAMP(3) to DOUBLE: a TIMESTAMP does not convert to a number; "
           "use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds");
    EXPECT("TRY_CAST(ts AS INT)",
           "PARSE: line 1, column 1: cannot CAST TIMESTAMP(3) to INT: a TIMESTAMP does not convert to a number; "
           "use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds");
    EXPECT("CAST(id AS TIMESTAMP(3))",
           "PARSE: line 1, column 1: cannot CAST BIGINT to TIMESTAMP(3): a number does not convert to a TIMESTAMP; "
           "use TO_TIMESTAMP(FROM_UNIXTIME(n)) for epoch seconds");
    EXPECT("CAST(id AS TIMESTAMP_LTZ(3))",
           "PARSE: line 1, column 1: cannot CAST BIGINT to TIMESTAMP_LTZ(3): a number does not convert to a "
           "TIMESTAMP_LTZ; use TO_TIMESTAMP_LTZ(n, 0) for epoch seconds or TO_TIMESTAMP_LTZ(n, 3) "
           "for milliseconds");
    EXPECT("CAST(price AS TIMESTAMP(3) WITH LOCAL TIME ZONE)",
           "PARSE: line 1, column 1: cannot CAST DOUBLE to TIMESTAMP_LTZ(3): a number does not convert to a "
           "TIMESTAMP_LTZ; use TO_TIMESTAMP_LTZ(n, 0) for epoch seconds or TO_TIMESTAMP_LTZ(n, 3) "
           "for milliseconds");
    EXPECT("CAST(ok AS TIMESTAMP)", "PARSE: line 1, column 1: cannot CAST BOOLEAN to TIMESTAMP(3)");
    EXPECT("CAST(ts AS BOOLEAN)", "PARSE: line 1, column 1: cannot CAST TIMESTAMP(3) to BOOLEAN");
    /* what the refusals point to works */
    EXPECT("UNIX_TIMESTAMP(CAST(ts AS STRING))", "BIGINT 1767225600");
    EXPECT("TO_TIMESTAMP(FROM_UNIXTIME(1767225601))", "TIMESTAMP 1767225601000");
    EXPECT("TO_TIMESTAMP_LTZ(id, 0)", "TIMESTAMP 7000");
}

static void test_unix_time(void)
{
    EXPECT("UNIX_TIMESTAMP('2026-01-01 00:00:01')", "BIGINT 1767225601");
    EXPECT("UNIX_TIMESTAMP('1969-12-31 23:59:59.5')", "BIGINT -1");
    EXPECT("UNIX_TIMESTAMP('garbage')", "BIGINT -9223372036854775808");
    EXPECT("UNIX_TIMESTAMP(nul_s)", "BIGINT NULL");
    EXPECT("UNIX_TIMESTAMP(5)", "PARSE: line 1, column 16: UNIX_TIMESTAMP needs a STRING, got INT");
    EXPECT("UNIX_TIMESTAMP(name, name)",
           "PARSE: line 1, column 22: UNIX_TIMESTAMP: the format must be a string literal");
    EXPECT("FROM_UNIXTIME(44)", "STRING 1970-01-01 00:00:44");
    EXPECT("FROM_UNIXTIME(-1)", "STRING 1969-12-31 23:59:59");
    EXPECT("FROM_UNIXTIME(1767225601)", "STRING 2026-01-01 00:00:01");
    EXPECT("FROM_UNIXTIME(nul_i)", "STRING NULL");
    EXPECT("FROM_UNIXTIME(1767225601, 'yyyy/MM/dd HH-mm-ss')", "STRING 2026/01/01 00-00-01");
    EXPECT("FROM_UNIXTIME(id, 'HH:mm:ss')", "STRING 00:00:07");
    EXPECT("FROM_UNIXTIME(nul_i, 'HH')", "STRING NULL");
    EXPECT("UNIX_TIMESTAMP('2026/01/01 00-00-01', 'yyyy/MM/dd HH-mm-ss')", "BIGINT 1767225601");
    EXPECT("UNIX_TIMESTAMP('20260101 000001 tail', 'yyyyMMdd HHmmss')", "BIGINT 1767225601");
    EXPECT("UNIX_TIMESTAMP('2026-1-2', 'yyyy-M-d')", "BIGINT 1767312000");
    EXPECT("UNIX_TIMESTAMP('2026-13-01', 'yyyy-MM-dd')", "BIGINT -9223372036854775808");
    EXPECT("UNIX_TIMESTAMP(nul_s, 'yyyy')", "BIGINT NULL");
    EXPECT("TO_TIMESTAMP('01.02.2026 03:04:05.678', 'dd.MM.yyyy HH:mm:ss.SSS')",
           "TIMESTAMP 1769915045678");
    EXPECT("TO_TIMESTAMP('2026', 'yyyy')", "TIMESTAMP 1767225600000");
    EXPECT("TO_TIMESTAMP('2026x', 'yyyy')", "TIMESTAMP NULL");
    EXPECT("TO_TIMESTAMP('2026-02-30', 'yyyy-MM-dd')", "TIMESTAMP NULL");
    EXPECT("TO_TIMESTAMP('x', 'hh a')",
           "PARSE: line 1, column 19: TO_TIMESTAMP format 'hh a': pattern letter 'h' is not "
           "supported for parsing (only y, M, d, H, m, s and SSS)");
    EXPECT("TO_TIMESTAMP(name, name)",
           "PARSE: line 1, column 20: TO_TIMESTAMP: the format must be a string literal");
    EXPECT("FROM_UNIXTIME(1, name)",
           "PARSE: line 1, column 18: FROM_UNIXTIME: the format must be a string literal");
    EXPECT("FROM_UNIXTIME(1, 'QQ')",
           "PARSE: line 1, column 18: FROM_UNIXTIME format 'QQ': pattern 'QQ' is not supported "
           "when formatting a STRING (Flink's SimpleDateFormat differs)");
    EXPECT("FROM_UNIXTIME(9223372036854775807)",
           "EVAL: FROM_UNIXTIME: 9223372036854775807 seconds is out of range at position 1");
    EXPECT("FROM_UNIXTIME(price)",
           "PARSE: line 1, column 15: FROM_UNIXTIME needs an integer number of seconds, got DOUBLE");
}

/* EXTRACT and its shorthands on ts = 2026-01-01 00:00:00.020 (a Thursday, ISO
 * week 1 of 2026) and literals; test_calendar.c checks every field. */
static void test_extract(void)
{
    EXPECT("EXTRACT(YEAR FROM ts)", "BIGINT 2026");
    EXPECT("extract(millisecond from ts)", "BIGINT 20");
    EXPECT("EXTRACT(DOW FROM ts)", "BIGINT 5");
    EXPECT("EXTRACT(WEEK FROM TIMESTAMP '2027-01-01 10:00:00')", "BIGINT 53");
    EXPECT("EXTRACT(HOUR FROM TIMESTAMP '2027-01-01 10:00:00') * 60", "BIGINT 600");
    EXPECT("EXTRACT(QUARTER FROM TIMESTAMPADD(MONTH, 7, ts))", "BIGINT 3");
    EXPECT("EXTRACT(DAY FROM CAST(NULL AS TIMESTAMP))", "BIGINT NULL");
    EXPECT("HOUR(TIMESTAMP '2026-03-04 05:06:07')", "BIGINT 5");
    EXPECT("DAYOFYEAR(TIMESTAMP '2026-03-04 05:06:07')", "BIGINT 63");
    EXPECT("DAYOFWEEK(TIMESTAMP '2026-03-08 05:06:07')", "BIGINT 1");
    EXPECT("YEAR(ts) + MONTH(ts) + SECOND(ts)", "BIGINT 2027");
    EXPECT("EXTRACT(FORTNIGHT FROM ts)",
           "PARSE: line 1, column 9: EXTRACT needs a time unit before FROM (YEAR, QUARTER, MONTH, "
           "WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, DOW, DOY, ISODOW, ISOYEAR, DECADE, "
           "CENTURY, MILLENNIUM)");
    EXPECT("EXTRACT(`YEAR` FROM ts)",
           "PARSE: line 1, column 9: EXTRACT needs a time unit before FROM (YEAR, QUARTER, MONTH, "
           "WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, DOW, DOY, ISODOW, ISOYEAR, DECADE, "
           "CENTURY, MILLENNIUM)");
    EXPECT("EXTRACT(EPOCH FROM ts)",
           "PARSE: line 1, column 9: EXTRACT(EPOCH FROM ...) is not supported (Flink neither); use "
           "UNIX_TIMESTAMP(CAST(ts AS STRING))");
    EXPECT("EXTRACT(YEAR FROM name)", "PARSE: line 1, column 19: EXTRACT needs a TIMESTAMP, DATE or TIME, got STRING");
    EXPECT("EXTRACT(YEAR, ts)", "PARSE: line 1, column 1: EXTRACT takes (unit FROM timestamp)");
    EXPECT("HOUR(ts, ts)", "PARSE: line 1, column 1: HOUR takes 1 argument, a TIMESTAMP");
    EXPECT("MONTH(INTERVAL '1' DAY)", "PARSE: line 1, column 7: MONTH needs a TIMESTAMP, DATE or TIME, got INTERVAL DAY");
}

static void test_replace_split_index(void)
{
    EXPECT("REPLACE('hello world', 'world', 'flink')", "STRING hello flink");
    EXPECT("REPLACE(name, 'l', 'LL')", "STRING ALLice");
    EXPECT("REPLACE('aaaa', 'aa', 'b')", "STRING bb");     /* non-overlapping, left to right */
    EXPECT("REPLACE('aaa', 'aa', '')", "STRING a");
    EXPECT("REPLACE('abc', '', 'x')", "STRING abc");       /* an empty search changes nothing */
    EXPECT("REPLACE('abc', 'abcd', 'x')", "STRING abc");
    EXPECT("REPLACE(nul_s, 'a', 'b')", "STRING NULL");
    EXPECT("REPLACE('a', 'a', nul_s)", "STRING NULL");
    EXPECT("REPLACE(n, 'a', 'b')",
           "PARSE: line 1, column 9: REPLACE needs (STRING, STRING, STRING), got INT as argument 1");
    EXPECT("SPLIT_INDEX('Jack,John,Mary', ',', 2)", "STRING Mary");
    EXPECT("SPLIT_INDEX('Jack,John,Mary', ',', 0)", "STRING Jack");
    EXPECT("SPLIT_INDEX('Jack,John,Mary', ',', 3)", "STRING NULL");
    EXPECT("SPLIT_INDEX('Jack,John,Mary', ',', -1)", "STRING NULL");
    EXPECT("SPLIT_INDEX('a,,b,', ',', 1)", "STRING ");      /* empty pieces are kept */
    EXPECT("SPLIT_INDEX('a,,b,', ',', 3)", "STRING ");
    EXPECT("SPLIT_INDEX('a,,b,', ',', 4)", "STRING NULL");
    EXPECT("SPLIT_INDEX('a::b::c', '::', 1)", "STRING b");
    EXPECT("SPLIT_INDEX('', ',', 0)", "STRING NULL");       /* no pieces */
    EXPECT("SPLIT_INDEX(`my col`, '', 1)", "STRING y");     /* an empty separator: blanks */
    EXPECT("SPLIT_INDEX('  two   words ', '', 1)", "STRING words");
    EXPECT("SPLIT_INDEX('  two   words ', '', 2)", "STRING NULL");
    EXPECT("SPLIT_INDEX(name, nul_s, 0)", "STRING NULL");
    EXPECT("SPLIT_INDEX(name, ',', n - 3)", "STRING Alice");
    EXPECT("SPLIT_INDEX(name, ',', 'x')",
           "PARSE: line 1, column 24: SPLIT_INDEX needs (STRING, STRING, INT), got CHAR(1) as "
           "argument 3");
}

static void test_timestampadd_diff(void)
{
    EXPECT("TIMESTAMPADD(SECOND, -5, ts)", "TIMESTAMP 1767225595020");
    EXPECT("TIMESTAMPADD(MINUTE, n, ts)", "TIMESTAMP 1767225780020");
    EXPECT("TIMESTAMPADD(WEEK, 2, ts)", "TIMESTAMP 1768435200020");
    EXPECT("TIMESTAMPADD(MONTH, 1, TIMESTAMP '2026-01-31 10:00:00')", "TIMESTAMP 1772272800000");
    EXPECT("TIMESTAMPADD(YEAR, 1, TIMESTAMP '2024-02-29 00:00:00')", "TIMESTAMP 1740700800000");
    EXPECT("TIMESTAMPADD(YEAR, 4, TIMESTAMP '2024-02-29 00:00:00')", "TIMESTAMP 1835395200000");
    EXPECT("TIMESTAMPADD(QUARTER, -1, ts)", "TIMESTAMP 1759276800020");
    EXPECT("TIMESTAMPADD(MONTH, -1, ts)", "TIMESTAMP 1764547200020");
    EXPECT("TIMESTAMPADD(DAY, nul_i, ts)", "TIMESTAMP NULL");
    EXPECT("TIMESTAMPADD(DAY, 1, NULL)", "TIMESTAMP NULL");
    EXPECT("TIMESTAMPADD(YEAR, 2147483647, ts)",
           "EVAL: TIMESTAMPADD: adding 2147483647 YEAR gives a TIMESTAMP out of range at "
           "position 1");
    EXPECT("TIMESTAMPADD(DAY, id, ts)",
           "PARSE: line 1, column 19: TIMESTAMPADD needs an INT count, got BIGINT (use CAST(.. AS INT))");
    EXPECT("TIMESTAMPADD(DAY, 1, name)",
           "PARSE: line 1, column 22: TIMESTAMPADD needs a TIMESTAMP, got STRING");
    EXPECT("TIMESTAMPADD(FORTNIGHT, 1, ts)",
           "PARSE: line 1, column 14: TIMESTAMPADD needs a time unit (SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR) first");
    EXPECT("TIMESTAMPDIFF(DAY, TIMESTAMP '2026-01-01 00:00:00', TIMESTAMP '2026-01-03 23:59:59')",
           "INT 2");
    EXPECT("TIMESTAMPDIFF(DAY, TIMESTAMP '2026-01-03 23:59:59', TIMESTAMP '2026-01-01 00:00:00')",
           "INT -2");
    EXPECT("TIMESTAMPDIFF(SECOND, ts, ts + INTERVAL '1.5' SECOND)", "INT 1");
    EXPECT("TIMESTAMPDIFF(MONTH, TIMESTAMP '2026-01-31 10:00:00', "
           "TIMESTAMP '2026-02-28 10:00:00')", "INT 1");
    EXPECT("TIMESTAMPDIFF(MONTH, TIMESTAMP '2026-01-31 10:00:00', "
           "TIMESTAMP '2026-02-28 09:59:59')", "INT 0");
    EXPECT("TIMESTAMPDIFF(MONTH, TIMESTAMP '2026-02-28 10:00:00', "
           "TIMESTAMP '2026-01-31 10:00:00')", "INT -1");
    EXPECT("TIMESTAMPDIFF(YEAR, TIMESTAMP '2024-02-29 00:00:00', TIMESTAMP '2025-02-28 00:00:00')",
           "INT 1");
    EXPECT("TIMESTAMPDIFF(QUARTER, TIMESTAMP '2025-01-15 00:00:00', ts)", "INT 3");
    EXPECT("TIMESTAMPDIFF(SECOND, TIMESTAMP '1970-01-01 00:00:00', TIMESTAMP '2100-01-01 "
           "00:00:00')", "INT -192522496"); /* 4102444800 narrowed to an INT */
    EXPECT("TIMESTAMPDIFF(HOUR, ts, nul_s)",
           "PARSE: line 1, column 25: TIMESTAMPDIFF needs a TIMESTAMP, got STRING");
}

/* The wall clock, read at each evaluation. */
static void test_current_timestamp(void)
{
    static const char *const now_exprs[] = {"CURRENT_TIMESTAMP", "localtimestamp", "NOW()",
                                            "CURRENT_ROW_TIMESTAMP()", "CURRENT_TIMESTAMP(3)"};
    setup();
    char err[256];
    sl_arena none;
    sl_arena_init(&none, 0); /* no scratch at all: the clock needs none */
    for (size_t i = 0; i < SL_ARRAY_LEN(now_exprs); i++) {
        sl_expr *e = sl_expr_parse(now_exprs[i], &S, err, sizeof err);
        CHECK(e != NULL);
        if (!e) continue;
        CHECK(sl_expr_type(e) == SL_T_TIMESTAMP);
        for (int k = 0; k < 3; k++) {
            sl_value v;
            int64_t before = sl_now_ms();
            CHECK(sl_expr_eval(e, &R, &none, &v, err, sizeof err) == SL_OK);
            int64_t after = sl_now_ms();
            CHECK(!v.isnull && v.v.i >= before && v.v.i <= after);
        }
        sl_expr_destroy(e);
    }
    /* precision 0 truncates to the second; arithmetic and comparisons work on it */
    sl_expr *e = sl_expr_parse("CURRENT_TIMESTAMP(0)", &S, err, sizeof err);
    sl_expr *past = sl_expr_parse("CURRENT_TIMESTAMP - INTERVAL '5' SECOND", &S, err, sizeof err);
    sl_expr *cmp = sl_expr_parse("CURRENT_TIMESTAMP > ts AND UNIX_TIMESTAMP() > 1767225600", &S,
                                 err, sizeof err);
    sl_expr *unix_now = sl_expr_parse("UNIX_TIMESTAMP()", &S, err, sizeof err);
    CHECK(e && past && cmp && unix_now);
    if (e && past && cmp && unix_now) {
        sl_value v;
        int64_t before = sl_now_ms();
        CHECK(sl_expr_eval(e, &R, &none, &v, err, sizeof err) == SL_OK);
        CHECK(v.v.i % 1000 == 0 && v.v.i >= before - before % 1000 && v.v.i <= sl_now_ms());
        before = sl_now_ms();
        CHECK(sl_expr_eval(past, &R, &none, &v, err, sizeof err) == SL_OK);
        CHECK(v.v.i >= before - 5000 && v.v.i <= sl_now_ms() - 5000);
        bool pass = false;
        CHECK(sl_expr_eval_bool(cmp, &R, &none, &pass, err, sizeof err) == SL_OK && pass);
        before = sl_now_ms();
        CHECK(sl_expr_eval(unix_now, &R, &none, &v, err, sizeof err) == SL_OK);
        CHECK(v.v.i >= before / 1000 && v.v.i <= sl_now_ms() / 1000);
    }
    sl_expr_destroy(e);
    sl_expr_destroy(past);
    sl_expr_destroy(cmp);
    sl_expr_destroy(unix_now);
    sl_arena_free(&none);
    EXPECT("CURRENT_TIMESTAMP(4)",
           "PARSE: line 1, column 19: CURRENT_TIMESTAMP precision must be 0 to 3");
    EXPECT("CURRENT_TIMESTAMP()",
           "PARSE: line 1, column 1: CURRENT_TIMESTAMP precision must be 0 to 3");
    EXPECT("NOW(1)", "PARSE: line 1, column 1: NOW takes 0 arguments, got 1");
    EXPECT("`current_timestamp`", "PARSE: line 1, column 1: unknown column 'current_timestamp'");
    EXPECT("CURRENT_TIMESTAMP + 1",
           "PARSE: line 1, column 19: cannot apply '+' to TIMESTAMP_LTZ(3) and INT");
}

/* Evaluate e `n` times and render each value into out, space-separated. */
static void draws(sl_expr *e, int n, char *out, size_t cap)
{
    char err[256];
    size_t o = 0;
    out[0] = '\0';
    sl_arena none;
    sl_arena_init(&none, 0);
    for (int i = 0; i < n && o < cap; i++) {
        sl_value v;
        if (sl_expr_eval(e, &R, &none, &v, err, sizeof err) != SL_OK)
            o += (size_t)snprintf(out + o, cap - o, "%sEVAL: %s", i ? " " : "", err);
        else if (v.isnull)
            o += (size_t)snprintf(out + o, cap - o, "%sNULL", i ? " " : "");
        else if (sl_expr_type(e) == SL_T_DOUBLE) { /* the shortest digits that read back */
            char d[32];
            for (int prec = 1; prec <= 17; prec++) {
                snprintf(d, sizeof d, "%.*g", prec, v.v.d);
                if (strtod(d, NULL) == v.v.d) break;
            }
            o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? " " : "", d);
        }
        else
            o += (size_t)snprintf(out + o, cap - o, "%s%lld", i ? " " : "", (long long)v.v.i);
    }
    sl_arena_free(&none);
}

static sl_expr *parse_ok(const char *text)
{
    char err[256];
    setup();
    sl_expr *e = sl_expr_parse(text, &S, err, sizeof err);
    if (!e) fprintf(stderr, "%s: %s\n", text, err);
    return e;
}

static void check_draws(const char *text, int n, const char *want)
{
    char got[512];
    sl_expr *e = parse_ok(text);
    CHECK(e != NULL);
    if (!e) return;
    draws(e, n, got, sizeof got);
    CHECK_EQ_STR(got, want);
    sl_expr_destroy(e);
}

static void test_rand_seeded(void)
{
    /* java.util.Random(seed): nextDouble() and nextInt(bound), in sequence */
    check_draws("RAND(42)", 3, "0.7275636800328681 0.6832234717598454 0.30871945533265976");
    check_draws("RAND(0)", 2, "0.730967787376657 0.24053641567148587");
    check_draws("RAND(-7)", 1, "0.2691218093260761");
    check_draws("RAND_INTEGER(42, 10)", 10, "0 3 8 4 0 5 5 8 9 3");
    check_draws("RAND_INTEGER(7, 16)", 5, "11 10 11 0 5");
    check_draws("RAND_INTEGER(1, 1000000007)", 3, "569548978 215764588 880641847");
    check_draws("RAND_INTEGER(5, 2147483647)", 1, "1568779487");
    /* a seed that is not a literal starts afresh every time: a function of the seed */
    check_draws("RAND(n)", 3, "0.731057369148862 0.731057369148862 0.731057369148862");
    check_draws("RAND_INTEGER(n, 100)", 2, "34 34");
    check_draws("RAND(nul_i)", 1, "NULL");
    check_draws("RAND_INTEGER(nul_i)", 1, "NULL");
    check_draws("RAND_INTEGER(0)", 1, "EVAL: RAND_INTEGER bound must be positive, got 0 at "
                                      "position 1");
    check_draws("RAND_INTEGER(3, -5)", 1, "EVAL: RAND_INTEGER bound must be positive, got -5 at "
                                          "position 1");
    /* two RAND calls with one seed give the same sequence, each its own */
    sl_expr *a = parse_ok("RAND(42)"), *b = parse_ok("RAND(42) * 2");
    char got[256];
    CHECK(a && b);
    if (a && b) {
        draws(a, 1, got, sizeof got);
        CHECK_EQ_STR(got, "0.7275636800328681");
        draws(b, 2, got, sizeof got);
        CHECK_EQ_STR(got, "1.4551273600657362 1.3664469435196909");
        draws(a, 1, got, sizeof got);
        CHECK_EQ_STR(got, "0.6832234717598454");
    }
    sl_expr_destroy(a);
    sl_expr_destroy(b);
    EXPECT("RAND(1.5)", "PARSE: line 1, column 6: RAND seed must be an INT, got DOUBLE");
    EXPECT("RAND('x')", "PARSE: line 1, column 6: RAND seed must be an INT, got CHAR(1)");
    EXPECT("RAND_INTEGER(id)",
           "PARSE: line 1, column 14: RAND_INTEGER bound must be an INT, got BIGINT");
    EXPECT("RAND(1, 2)", "PARSE: line 1, column 1: RAND takes at most 1 argument, got 2");
    EXPECT("RAND_INTEGER()", "PARSE: line 1, column 1: RAND_INTEGER takes at least 1 argument, got 0");
}

/* A thread keeps RAND_SLOTS (64) seeded sequences; a 65th takes over the
 * least recently used one, which then starts again. */
static void test_rand_many_sequences(void)
{
    enum { N = 64 };
    sl_expr *e[N + 1];
    char got[64];
    for (int i = 0; i <= N; i++) e[i] = parse_ok("RAND_INTEGER(42, 10)");
    for (int i = 0; i < N; i++) {
        draws(e[i], 1, got, sizeof got);
        CHECK_EQ_STR(got, "0");
    }
    for (int i = 0; i < N; i++) {
        draws(e[i], 1, got, sizeof got);
        CHECK_EQ_STR(got, "3");
    }
    draws(e[N], 1, got, sizeof got); /* takes over e[0]'s slot */
    CHECK_EQ_STR(got, "0");
    draws(e[1], 1, got, sizeof got);
    CHECK_EQ_STR(got, "8");
    draws(e[0], 2, got, sizeof got); /* starts again, taking over e[2]'s slot */
    CHECK_EQ_STR(got, "0 3");
    draws(e[N], 1, got, sizeof got);
    CHECK_EQ_STR(got, "3");
    for (int i = 0; i <= N; i++) sl_expr_destroy(e[i]);
}

static void test_rand_unseeded(void)
{
    sl_expr *d = parse_ok("RAND()"), *k = parse_ok("RAND_INTEGER(5)");
    CHECK(d && k);
    if (!d || !k) return;
    CHECK(sl_expr_type(d) == SL_T_DOUBLE && sl_expr_type(k) == SL_T_INT);
    sl_arena none;
    sl_arena_init(&none, 0);
    char err[256];
    double sum = 0, lo = 1, hi = 0;
    int seen[5] = {0};
    bool ok = true;
    for (int i = 0; i < 20000; i++) {
        sl_value v, w;
        ok &= sl_expr_eval(d, &R, &none, &v, err, sizeof err) == SL_OK && !v.isnull;
        ok &= sl_expr_eval(k, &R, &none, &w, err, sizeof err) == SL_OK && !w.isnull;
        ok &= w.v.i >= 0 && w.v.i < 5;
        if (w.v.i >= 0 && w.v.i < 5) seen[w.v.i]++;
        sum += v.v.d;
        lo = v.v.d < lo ? v.v.d : lo;
        hi = v.v.d > hi ? v.v.d : hi;
    }
    CHECK(ok);
    /* uniform on [0, 1): the mean of 20000 draws is 0.5 +- 0.002 (1 sigma) */
    CHECK(lo >= 0 && hi < 1 && lo < 0.001 && hi > 0.999);
    CHECK(sum / 20000 > 0.49 && sum / 20000 < 0.51);
    for (int i = 0; i < 5; i++) CHECK(seen[i] > 3600 && seen[i] < 4400); /* 4000 +- 63 */
    sl_arena_free(&none);
    sl_expr_destroy(d);
    sl_expr_destroy(k);
}

/* One parsed tree, two threads: each thread has its own generator, so each
 * draws RAND(42)'s whole sequence, whatever the other does. */
typedef struct rand_job {
    sl_expr *e;
    char got[256];
} rand_job;

static void *rand_thread(void *arg)
{
    rand_job *j = arg;
    draws(j->e, 4, j->got, sizeof j->got);
    return NULL;
}

static void test_rand_threads(void)
{
    sl_expr *e = parse_ok("RAND_INTEGER(42, 10)");
    CHECK(e != NULL);
    if (!e) return;
    rand_job j[2] = {{.e = e}, {.e = e}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, rand_thread, &j[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK_EQ_STR(j[0].got, "0 3 8 4");
    CHECK_EQ_STR(j[1].got, "0 3 8 4");
    sl_expr_destroy(e);
}

/* ---- DATE_FORMAT ------------------------------------------------------------
 * The table is computed by Python's datetime (not by lib/calendar.c):
 * DATE_FORMAT(TO_TIMESTAMP_LTZ(ms, 3), DF_PAT) must read `want`. Generated by
 *   import datetime; dt = datetime.datetime(1970, 1, 1) + timedelta(milliseconds=ms)
 * and f-strings / strftime('%a %A %b %B') per field (seeded random ms in
 * 1800..2300 plus edge cases: the epoch, leap days, years 1 and 9999). */
static const char DF_PAT[] = "yyyy-MM-dd HH:mm:ss.SSS|yy M d H h hh a|EEE EEEE MMM MMMM|D DDD k K S SSSSSS QQQ";
static const struct { long long ms; const char *want; } DF_CASES[] = {
    {0LL, "1970-01-01 00:00:00.000|70 1 1 0 12 12 AM|Thu Thursday Jan January|1 001 24 0 0 000000 Q1"},
    {-1LL, "1969-12-31 23:59:59.999|69 12 31 23 11 11 PM|Wed Wednesday Dec December|365 365 23 11 9 999000 Q4"},
    {951825600001LL, "2000-02-29 12:00:00.001|00 2 29 12 12 12 PM|Tue Tuesday Feb February|60 060 12 0 0 001000 Q1"},
    {1735605005020LL, "2024-12-31 00:30:05.020|24 12 31 0 12 12 AM|Tue Tuesday Dec December|366 366 24 0 0 020000 Q4"},
    {-62135553601000LL, "0001-01-01 11:59:59.000|01 1 1 11 11 11 AM|Mon Monday Jan January|1 001 11 11 0 000000 Q1"},
    {253402300799999LL, "9999-12-31 23:59:59.999|99 12 31 23 11 11 PM|Fri Friday Dec December|365 365 23 11 9 999000 Q4"},
    {-2203844337700LL, "1900-03-01 13:01:02.300|00 3 1 13 1 01 PM|Thu Thursday Mar March|60 060 13 1 3 300000 Q1"},
    {4107456000000LL, "2100-02-28 00:00:00.000|00 2 28 0 12 12 AM|Sun Sunday Feb February|59 059 24 0 0 000000 Q1"},
    {1921844037825LL, "2030-11-25 13:33:57.825|30 11 25 13 1 01 PM|Mon Monday Nov November|329 329 13 1 8 825000 Q4"},
    {-26848307872LL, "1969-02-24 06:08:12.128|69 2 24 6 6 06 AM|Mon Monday Feb February|55 055 6 6 1 128000 Q1"},
    {1069028935767LL, "2003-11-17 00:28:55.767|03 11 17 0 12 12 AM|Mon Monday Nov November|321 321 24 0 7 767000 Q4"},
    {-2292516851814LL, "1897-05-09 05:45:48.186|97 5 9 5 5 05 AM|Sun Sunday May May|129 129 5 5 1 186000 Q2"},
    {7042493557245LL, "2193-03-02 08:12:37.245|93 3 2 8 8 08 AM|Sat Saturday Mar March|61 061 8 8 2 245000 Q1"},
    {4138829860046LL, "2101-02-26 02:57:40.046|01 2 26 2 2 02 AM|Sat Saturday Feb February|57 057 2 2 0 046000 Q1"},
    {-469854031251LL, "1955-02-10 20:59:28.749|55 2 10 20 8 08 PM|Thu Thursday Feb February|41 041 20 8 7 749000 Q1"},
    {-987975032794LL, "1938-09-11 02:29:27.206|38 9 11 2 2 02 AM|Sun Sunday Sep September|254 254 2 2 2 206000 Q3"},
    {8977883403666LL, "2254-07-01 16:30:03.666|54 7 1 16 4 04 PM|Sat Saturday Jul July|182 182 16 4 6 666000 Q3"},
    {2017297157489LL, "2033-12-04 08:19:17.489|33 12 4 8 8 08 AM|Sun Sunday Dec December|338 338 8 8 4 489000 Q4"},
    {9759001429234LL, "2279-04-02 09:43:49.234|79 4 2 9 9 09 AM|Wed Wednesday Apr April|92 092 9 9 2 234000 Q2"},
    {8750754501703LL, "2247-04-20 21:08:21.703|47 4 20 21 9 09 PM|Tue Tuesday Apr April|110 110 21 9 7 703000 Q2"},
    {5902400190751LL, "2157-01-14 19:36:30.751|57 1 14 19 7 07 PM|Fri Friday Jan January|14 014 19 7 7 751000 Q1"},
    {6677765880933LL, "2181-08-10 22:58:00.933|81 8 10 22 10 10 PM|Fri Friday Aug August|222 222 22 10 9 933000 Q3"},
    {7378270176889LL, "2203-10-23 15:29:36.889|03 10 23 15 3 03 PM|Sun Sunday Oct October|296 296 15 3 8 889000 Q4"},
    {-2944870992390LL, "1876-09-05 20:16:47.610|76 9 5 20 8 08 PM|Tue Tuesday Sep September|249 249 20 8 6 610000 Q3"},
    {4333367084308LL, "2107-04-27 17:04:44.308|07 4 27 17 5 05 PM|Wed Wednesday Apr April|117 117 17 5 3 308000 Q2"},
    {-2907673990664LL, "1877-11-10 08:46:49.336|77 11 10 8 8 08 AM|Sat Saturday Nov November|314 314 8 8 3 336000 Q4"},
    {8563111702689LL, "2241-05-10 02:08:22.689|41 5 10 2 2 02 AM|Mon Monday May May|130 130 2 2 6 689000 Q2"},
    {-1903454270976LL, "1909-09-07 06:42:09.024|09 9 7 6 6 06 AM|Tue Tuesday Sep September|250 250 6 6 0 024000 Q3"},
    {10162292552079LL, "2292-01-12 03:02:32.079|92 1 12 3 3 03 AM|Tue Tuesday Jan January|12 012 3 3 0 079000 Q1"},
    {4009986634007LL, "2097-01-25 21:10:34.007|97 1 25 21 9 09 PM|Fri Friday Jan January|25 025 21 9 0 007000 Q1"},
    {8742410622361LL, "2247-01-14 07:23:42.361|47 1 14 7 7 07 AM|Thu Thursday Jan January|14 014 7 7 3 361000 Q1"},
    {6704003235093LL, "2182-06-10 15:07:15.093|82 6 10 15 3 03 PM|Mon Monday Jun June|161 161 15 3 0 093000 Q2"},
    {455920272196LL, "1984-06-12 20:31:12.196|84 6 12 20 8 08 PM|Tue Tuesday Jun June|164 164 20 8 1 196000 Q2"},
    {-3193384790563LL, "1868-10-21 12:40:09.437|68 10 21 12 12 12 PM|Wed Wednesday Oct October|295 295 12 0 4 437000 Q4"},
    {7227676864682LL, "2199-01-13 16:01:04.682|99 1 13 16 4 04 PM|Sun Sunday Jan January|13 013 16 4 6 682000 Q1"},
    {-4146443145312LL, "1838-08-09 18:14:14.688|38 8 9 18 6 06 PM|Thu Thursday Aug August|221 221 18 6 6 688000 Q3"},
    {1843620724572LL, "2028-06-03 04:52:04.572|28 6 3 4 4 04 AM|Sat Saturday Jun June|155 155 4 4 5 572000 Q2"},
    {3556336276369LL, "2082-09-11 07:11:16.369|82 9 11 7 7 07 AM|Fri Friday Sep September|254 254 7 7 3 369000 Q3"},
    {9744773887407LL, "2278-10-19 17:38:07.407|78 10 19 17 5 05 PM|Sat Saturday Oct October|292 292 17 5 4 407000 Q4"},
    {5898778087531LL, "2156-12-03 21:28:07.531|56 12 3 21 9 09 PM|Fri Friday Dec December|338 338 21 9 5 531000 Q4"},
    {5192351434625LL, "2134-07-16 15:50:34.625|34 7 16 15 3 03 PM|Fri Friday Jul July|197 197 15 3 6 625000 Q3"},
    {6640379390358LL, "2180-06-04 05:49:50.358|80 6 4 5 5 05 AM|Sun Sunday Jun June|156 156 5 5 3 358000 Q2"},
    {1824306276908LL, "2027-10-23 15:44:36.908|27 10 23 15 3 03 PM|Sat Saturday Oct October|296 296 15 3 9 908000 Q4"},
    {3538003269746LL, "2082-02-11 02:41:09.746|82 2 11 2 2 02 AM|Wed Wednesday Feb February|42 042 2 2 7 746000 Q1"},
    {553458829224LL, "1987-07-16 18:33:49.224|87 7 16 18 6 06 PM|Thu Thursday Jul July|197 197 18 6 2 224000 Q3"},
    {2246096246310LL, "2041-03-05 11:37:26.310|41 3 5 11 11 11 AM|Tue Tuesday Mar March|64 064 11 11 3 310000 Q1"},
    {4691454596028LL, "2118-09-01 05:49:56.028|18 9 1 5 5 05 AM|Thu Thursday Sep September|244 244 5 5 0 028000 Q3"},
    {10410974394822LL, "2299-11-29 09:19:54.822|99 11 29 9 9 09 AM|Wed Wednesday Nov November|333 333 9 9 8 822000 Q4"},
};

static void test_date_format_table(void)
{
    char text[256], want[256];
    for (size_t i = 0; i < SL_ARRAY_LEN(DF_CASES); i++) {
        snprintf(text, sizeof text, "DATE_FORMAT(TO_TIMESTAMP_LTZ(%lld, 3), '%s')",
                 DF_CASES[i].ms, DF_PAT);
        snprintf(want, sizeof want, "STRING %s", DF_CASES[i].want);
        EXPECT(text, want);
    }
}

static void test_date_format(void)
{
    /* ts is 2026-01-01 00:00:00.020, a Thursday */
    EXPECT("DATE_FORMAT(ts, 'yyyy-MM-dd')", "STRING 2026-01-01");
    EXPECT("DATE_FORMAT(ts, 'HH:mm')", "STRING 00:00");
    EXPECT("DATE_FORMAT(ts, 'yyyyMMdd''T''HHmmss')", "STRING 20260101T000000");
    EXPECT("DATE_FORMAT(ts, '''at'' h a, EEE')", "STRING at 12 AM, Thu");
    EXPECT("DATE_FORMAT(ts, 'h ''o''''clock''')", "STRING 12 o'clock");
    EXPECT("DATE_FORMAT(ts, 'y yyy yyyyy G GGGG GGGGG')", "STRING 2026 2026 02026 AD Anno Domini A");
    EXPECT("DATE_FORMAT(ts, 'MMMMM EEEEE Q QQ QQQQ')", "STRING J T 1 01 1st quarter");
    EXPECT("DATE_FORMAT(ts, '[yyyy[-MM]]')", "STRING 2026-01"); /* optional parts print */
    EXPECT("DATE_FORMAT(ts, 'SSS S SS SSSSSSSSS')", "STRING 020 0 02 020000000");
    EXPECT("DATE_FORMAT(ts, '')", "STRING ");
    EXPECT("DATE_FORMAT(ts, 'é ß 1.2/3_4')", "STRING é ß 1.2/3_4"); /* non-letters as they are */
    /* a year beyond 9999 takes a '+' from 4 letters on, as DateTimeFormatter's */
    EXPECT("DATE_FORMAT(TIMESTAMPADD(YEAR, 8000, ts), 'yyyy|yyy|yy|yyyyyy')",
           "STRING +10026|10026|26|010026");
    /* before year 1: the year of the era (1 BC is year 0) */
    EXPECT("DATE_FORMAT(TIMESTAMPADD(YEAR, -2026, ts), 'yyyy G')", "STRING 0001 BC");
    /* NULL in, NULL out */
    EXPECT("DATE_FORMAT(CAST(NULL AS TIMESTAMP), 'yyyy')", "STRING NULL");
    EXPECT("DATE_FORMAT(ts, nul_s)", "STRING NULL");
    EXPECT("DATE_FORMAT(NULL, 'yyyy')", "STRING NULL");
    EXPECT("DATE_FORMAT(ts, NULL)", "STRING NULL");
    /* the STRING form reads 'yyyy-MM-dd HH:mm:ss' (more text is ignored) */
    EXPECT("DATE_FORMAT('2017-09-15 23:00:00', 'yyMMdd')", "STRING 170915");
    EXPECT("DATE_FORMAT('2017-09-15 23:04:05.678', 'HH:mm:ss.SSS')", "STRING 23:04:05.000");
    EXPECT("DATE_FORMAT('2017-09-15', 'yyMMdd')", "STRING NULL");
    EXPECT("DATE_FORMAT('2017-02-29 00:00:00', 'yyMMdd')", "STRING NULL");
    EXPECT("DATE_FORMAT('garbage', 'yyMMdd')", "STRING NULL");
    EXPECT("DATE_FORMAT(nul_s, 'yyMMdd')", "STRING NULL");
    /* a format that is not a constant is compiled per record, errors at run time */
    EXPECT("DATE_FORMAT(ts, CONCAT('yyyy', '/MM'))", "STRING 2026/01");
    EXPECT("DATE_FORMAT(ts, name)",
           "EVAL: DATE_FORMAT format 'Alice': pattern letter 'A' is not supported at position 1");
    /* planning errors */
    EXPECT("DATE_FORMAT(ts, 'yyyy-bb')",
           "PARSE: line 1, column 17: DATE_FORMAT format 'yyyy-bb': unknown pattern letter 'b'");
    EXPECT("DATE_FORMAT(ts, 'ddd')",
           "PARSE: line 1, column 17: DATE_FORMAT format 'ddd': too many pattern letters 'd' "
           "(at most 2)");
    EXPECT("DATE_FORMAT(ts, 'HH:mm z')",
           "PARSE: line 1, column 17: DATE_FORMAT format 'HH:mm z': pattern letter 'z' is a "
           "time zone; a TIMESTAMP has none");
    EXPECT("DATE_FORMAT(ts, 'ww')",
           "PARSE: line 1, column 17: DATE_FORMAT format 'ww': pattern letter 'w' is not "
           "supported");
    EXPECT("DATE_FORMAT(ts, 'yyyy''T')",
           "PARSE: line 1, column 17: DATE_FORMAT format 'yyyy'T': format ends inside quoted "
           "text");
    EXPECT("DATE_FORMAT(ts, 'a]')",
           "PARSE: line 1, column 17: DATE_FORMAT format 'a]': format has ']' without '['");
    EXPECT("DATE_FORMAT(ts, '#')",
           "PARSE: line 1, column 17: DATE_FORMAT format '#': format uses reserved character "
           "'#' (quote it)");
    EXPECT("DATE_FORMAT('2017-09-15 23:00:00', 'QQ')",
           "PARSE: line 1, column 36: DATE_FORMAT format 'QQ': pattern 'QQ' is not supported "
           "when formatting a STRING (Flink's SimpleDateFormat differs)");
    EXPECT("DATE_FORMAT(id, 'yyyy')",
           "PARSE: line 1, column 13: DATE_FORMAT needs a TIMESTAMP or a STRING 'yyyy-MM-dd "
           "HH:mm:ss' first, got BIGINT");
    EXPECT("DATE_FORMAT(ts, 5)",
           "PARSE: line 1, column 17: DATE_FORMAT needs a STRING format, got INT");
    EXPECT("DATE_FORMAT(ts)", "PARSE: line 1, column 1: DATE_FORMAT takes 2 arguments, got 1");
}

/* ---- REGEXP, REGEXP_EXTRACT, REGEXP_REPLACE ----------------------------------
 * Expectations computed with Python's re (re.search(p, s).group(g) and
 * re.sub(p, lambda m: r, s)), whose syntax and results agree with Java's
 * for these patterns. Subjects and patterns are written as SQL literals. */
static const struct { const char *s, *pat; int g; const char *want; } RX_EXTRACT[] = {
    {"auction=1&channel_id=1234&x=y", "(&|^)channel_id=([^&]*)", 2, "1234"},
    {"channel_id=77", "(&|^)channel_id=([^&]*)", 2, "77"},
    {"xchannel_id=77&channel_id=", "(&|^)channel_id=([^&]*)", 2, ""},
    {"xchannel_id=77", "(&|^)channel_id=([^&]*)", 2, NULL},
    {"foothebar", "foo(.*)(bar)", 2, "bar"},
    {"foothebar", "foo(.*)(bar)", 1, "the"},
    {"foothebar", "foo(.*)(bar)", 0, "foothebar"},
    {"order 66 of 1138", "\\d+", 0, "66"},
    {"order 66 of 1138", "(\\d+)\\D+(\\d+)", 2, "1138"},
    {"mail bob_1@site.com now", "(\\w+)@(\\w+)\\.com", 1, "bob_1"},
    {"a  b\tc", "\\s+(\\S)", 1, "b"},
    {"x-]y", "[\\]\\-]+", 0, "-]"},
    {"a.b", "a\\.b", 0, "a.b"},
    {"axb", "a\\.b", 0, NULL},
    {"a\nb", "a.b", 0, NULL},
    {"aXXb", "a.{2}b", 0, "aXXb"},
    {"abab", "(ab)\\1", 1, "ab"},
    {"aaa", "a{2,3}", 0, "aaa"},
    {"tab\there", "\\t(h)", 1, "h"},
    {"no digits", "(\\d)?x?", 1, NULL},
    {"path/to/file.txt", "([^/]+)\\.([a-z]+)$", 1, "file"},
    {"ABC", "[^a-z]+", 0, "ABC"},
    {"a^b", "[x\\^]", 0, "^"},
};
static const struct { const char *s, *pat, *r, *want; } RX_REPLACE[] = {
    {"abc", "b*", "-", "-a--c-"},
    {"abc", "x*", "-", "-a-b-c-"},
    {"a1b22c333", "\\d+", "#", "a#b#c#"},
    {"a1b22c333", "\\d", "", "abc"},
    {"hello world", "o", "$1\\0", "hell$1\\0 w$1\\0rld"},
    {"aaa", "a", "bb", "bbbbbb"},
    {"", "x*", "-", "-"},
    {"nothing", "z", "y", "nothing"},
    {"  trim  me ", "^\\s+|\\s+$", "", "trim  me"},
};

static void test_regexp_table(void)
{
    char text[512], want[256];
    for (size_t i = 0; i < SL_ARRAY_LEN(RX_EXTRACT); i++) {
        snprintf(text, sizeof text, "REGEXP_EXTRACT('%s', '%s', %d)", RX_EXTRACT[i].s,
                 RX_EXTRACT[i].pat, RX_EXTRACT[i].g);
        snprintf(want, sizeof want, "STRING %s", RX_EXTRACT[i].want ? RX_EXTRACT[i].want : "NULL");
        EXPECT(text, want);
        snprintf(text, sizeof text, "REGEXP('%s', '%s')", RX_EXTRACT[i].s, RX_EXTRACT[i].pat);
        /* a match whose group did not take part is still a match */
        bool match = RX_EXTRACT[i].want || !strcmp(RX_EXTRACT[i].s, "no digits");
        EXPECT(text, match ? "BOOLEAN TRUE" : "BOOLEAN FALSE");
    }
    for (size_t i = 0; i < SL_ARRAY_LEN(RX_REPLACE); i++) {
        snprintf(text, sizeof text, "REGEXP_REPLACE('%s', '%s', '%s')", RX_REPLACE[i].s,
                 RX_REPLACE[i].pat, RX_REPLACE[i].r);
        snprintf(want, sizeof want, "STRING %s", RX_REPLACE[i].want);
        EXPECT(text, want);
    }
}

static void test_regexp(void)
{
    /* REGEXP_EXTRACT's group defaults to 0, the whole match (Flink's) */
    EXPECT("REGEXP_EXTRACT('foothebar', 'o+t')", "STRING oot");
    EXPECT("REGEXP_EXTRACT(name, 'l(i)', n - 2)", "STRING i");
    EXPECT("REGEXP_EXTRACT(name, 'l(i)', n)", "STRING NULL"); /* no group 3: NULL, as Flink */
    EXPECT("REGEXP_EXTRACT(name, 'l(i)', neg)", "STRING NULL");
    EXPECT("REGEXP_EXTRACT(nul_s, 'a')", "STRING NULL");
    EXPECT("REGEXP_EXTRACT(name, NULL)", "STRING NULL");
    EXPECT("REGEXP_EXTRACT(name, 'l', nul_i)", "STRING NULL");
    EXPECT("REGEXP_EXTRACT('', 'x*')", "STRING ");
    EXPECT("REGEXP('Alice', 'ice$')", "BOOLEAN TRUE");
    EXPECT("REGEXP(name, '^l')", "BOOLEAN FALSE");
    EXPECT("REGEXP(nul_s, 'a')", "BOOLEAN NULL");
    EXPECT("REGEXP_REPLACE(name, 'l|c', '_')", "STRING A_i_e");
    EXPECT("REGEXP_REPLACE(name, 'x', nul_s)", "STRING NULL");
    /* '^' anchors at the start of the subject only, also after a match */
    EXPECT("REGEXP_REPLACE('aaa', '^a', 'b')", "STRING baa");
    /* an empty match advances by a whole character, not a byte */
    EXPECT("REGEXP_REPLACE('é', 'x*', '-')", "STRING -é-");
    EXPECT("REGEXP_EXTRACT('caféx', 'f(é)x', 1)", "STRING é");
    /* Java's '.' stops at '\r' and '\n' */
    EXPECT("REGEXP('a\rb', 'a.b')", "BOOLEAN FALSE");
    EXPECT("REGEXP('a\tb', 'a.b')", "BOOLEAN TRUE");
    EXPECT("REGEXP_EXTRACT('scat cat', '\\bc(a)t', 0)", "STRING cat"); /* word boundary */
    EXPECT("REGEXP_EXTRACT('v 1.25.3;', '[\\d.]+')", "STRING 1.25.3");
    EXPECT("REGEXP_EXTRACT('a-b', '[\\w\\-]+$')", "STRING a-b");
    EXPECT("REGEXP_EXTRACT('xyz', '(a)', 1)", "STRING NULL");
    /* POSIX takes the longest of the leftmost matches (Java the first
     * alternative): a documented difference */
    EXPECT("REGEXP_EXTRACT('ab', 'a|ab')", "STRING ab");
    /* planning errors: the pattern is compiled once, so it must be a constant */
    EXPECT("REGEXP_EXTRACT(name, name)",
           "PARSE: line 1, column 22: REGEXP_EXTRACT needs a constant pattern (a string literal)");
    EXPECT("REGEXP_EXTRACT(name, 'a(b')",
           "PARSE: line 1, column 22: REGEXP_EXTRACT pattern 'a(b': Unmatched ( or \\(");
    EXPECT("REGEXP_EXTRACT(name, 'a*?')",
           "PARSE: line 1, column 22: REGEXP_EXTRACT pattern 'a*?': lazy quantifier '*?' is not "
           "supported");
    EXPECT("REGEXP(name, 'a++')",
           "PARSE: line 1, column 14: REGEXP pattern 'a++': possessive quantifier '++' is not "
           "supported");
    EXPECT("REGEXP(name, '(?:a)')",
           "PARSE: line 1, column 14: REGEXP pattern '(?:a)': '(?' groups (non-capturing, "
           "look-around, flags) are not supported");
    EXPECT("REGEXP(name, '\\p{Alpha}')",
           "PARSE: line 1, column 14: REGEXP pattern '\\p{Alpha}': '\\p' is not supported");
    EXPECT("REGEXP(name, '[a[b]]')",
           "PARSE: line 1, column 14: REGEXP pattern '[a[b]]': nested character classes are "
           "not supported");
    EXPECT("REGEXP(name, '[é]')",
           "PARSE: line 1, column 14: REGEXP pattern '[é]': non-ASCII character inside [...] "
           "(matching is byte-wise)");
    EXPECT("REGEXP(name, 'é+')",
           "PARSE: line 1, column 14: REGEXP pattern 'é+': quantifier after a non-ASCII "
           "character (matching is byte-wise; use a group (...))");
    EXPECT("REGEXP(name, 'a)')", "PARSE: line 1, column 14: REGEXP pattern 'a)': unmatched ')'");
    EXPECT("REGEXP(name, 'a\\')",
           "PARSE: line 1, column 14: REGEXP pattern 'a\\': pattern ends with '\\'");
    EXPECT("REGEXP_EXTRACT(name, '(a)', 2)",
           "PARSE: line 1, column 29: REGEXP_EXTRACT group 2 does not exist: the pattern has 1 "
           "group (0 is the whole match)");
    EXPECT("REGEXP_EXTRACT(name, 'a', 'b')",
           "PARSE: line 1, column 27: REGEXP_EXTRACT needs (STRING, STRING[, INT]), got CHAR(1) "
           "as argument 3");
    EXPECT("REGEXP(id, 'a')",
           "PARSE: line 1, column 8: REGEXP needs (STRING, STRING), got BIGINT as argument 1");
    EXPECT("REGEXP_REPLACE(name, 'a')",
           "PARSE: line 1, column 1: REGEXP_REPLACE takes 3 arguments, got 2");
    EXPECT("REGEXP_EXTRACT(name)",
           "PARSE: line 1, column 1: REGEXP_EXTRACT takes at least 2 arguments, got 1");
}

/* Random patterns from the letters that matter: every outcome is a value or
 * a message, never a crash (this runs under ASan/UBSan too). The REGEXP
 * functions must also give the same answer for p and for (p): a group at
 * the top hides p's required text from the no-match shortcut, so the two
 * take different paths to the same result. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

static void random_text(uint64_t *x, const char *const *alpha, size_t na, char *dst)
{
    size_t o = 0;
    int len = (int)(lcg(x) % 12);
    for (int k = 0; k < len; k++) {
        const char *a = alpha[lcg(x) % na];
        size_t al = strlen(a);
        memcpy(dst + o, a, al);
        o += al;
    }
    dst[o] = '\0';
}

static void test_fn_pattern_fuzz(void)
{
    static const char *const alpha[] = {"y", "M", "d", "H", "h", "S", "a", "E", "G", "Q", "z",
                                        "''", "[", "]", "{", "#", "\\", "(", ")", "|", "*", "+",
                                        "?", ".", "^", "$", "-", "&", "\xc3\xa9", "1", "b", " ",
                                        "\\d", "\\s", "\\w", "{2}", "A", "l", "ab", "ba"};
    static const char *const subj[] = {"a", "b", "ab", "1", " ", "-", "&", "\xc3\xa9", "y", "."};
    static const char *const dforms[] = {"DATE_FORMAT(ts, '%s')", "DATE_FORMAT(name, '%s')"};
    static const char *const rforms[] = {"REGEXP_EXTRACT('%s', '%s')", "REGEXP('%s', '%s')",
                                         "REGEXP_REPLACE('%s', '%s', '-')"};
    uint64_t x = 17;
    char pat[128], wrapped[140], t[64], text[256], first[512];
    int compared = 0;
    for (int i = 0; i < 4000; i++) {
        random_text(&x, alpha, SL_ARRAY_LEN(alpha), pat);
        const char *r;
        if (i % 3 == 0) {
            snprintf(text, sizeof text, dforms[i / 3 % 2], pat);
            r = run(text);
            CHECK(!strncmp(r, "STRING ", 7) || !strncmp(r, "PARSE: ", 7) ||
                  !strncmp(r, "EVAL: ", 6));
            continue;
        }
        random_text(&x, subj, SL_ARRAY_LEN(subj), t);
        const char *form = rforms[i % SL_ARRAY_LEN(rforms)];
        snprintf(text, sizeof text, form, t, pat);
        r = run(text);
        CHECK(!strncmp(r, "STRING ", 7) || !strncmp(r, "BOOLEAN ", 8) ||
              !strncmp(r, "PARSE: ", 7));
        if (!strncmp(r, "PARSE: ", 7)) continue;
        snprintf(first, sizeof first, "%s", r);
        snprintf(wrapped, sizeof wrapped, "(%s)", pat);
        snprintf(text, sizeof text, form, t, wrapped);
        r = run(text);
        if (!strncmp(r, "PARSE: ", 7)) continue;
        compared++;
        if (strcmp(r, first)) {
            fprintf(stderr, "'%s' on '%s': %s, but %s for (p)\n", pat, t, first, r);
            sl_test_failed_ = 1;
        }
    }
    CHECK(compared > 500);
}


/* Flink's math functions (expr_math.c): exact values, NULLs, the types. */
static void test_math_functions(void)
{
    EXPECT("ROUND(2.675, 2)", "DECIMAL(4, 2) 2.68");
    EXPECT("ROUND(-2.5)", "DECIMAL(2, 0) -3");
    EXPECT("ROUND(2.4)", "DECIMAL(2, 0) 2");
    EXPECT("ROUND(0.5)", "DECIMAL(1, 0) 1");
    EXPECT("ROUND(99.96, 1)", "DECIMAL(4, 1) 100.0");
    EXPECT("ROUND(1234.5, -2)", "DECIMAL(5, 0) 1200");
    EXPECT("ROUND(0.001, 1)", "DECIMAL(2, 1) 0.0");
    EXPECT("ROUND(0.06, 1)", "DECIMAL(2, 1) 0.1");
    EXPECT("ROUND(1250, -2)", "INT 1300");
    EXPECT("ROUND(-1250, -2)", "INT -1300");
    EXPECT("ROUND(id, -1)", "BIGINT 10");
    EXPECT("ROUND(n, 2)", "INT 3");
    EXPECT("ROUND(nul_i, 1)", "INT NULL");
    EXPECT("ROUND(price, nul_i)", "DOUBLE NULL");
    EXPECT("TRUNCATE(2.679, 2)", "DECIMAL(4, 2) 2.67");
    EXPECT("TRUNCATE(-2.679)", "DECIMAL(2, 0) -2");
    EXPECT("TRUNCATE(1299, -2)", "INT 1200");
    EXPECT("POWER(price, 2)", "DOUBLE 6.25");
    EXPECT("POWER(2, -1)", "DOUBLE 0.5");
    EXPECT("SQRT(price)", "DOUBLE 1.5811388300841898");
    EXPECT("CAST(SQRT(-1) AS STRING)", "STRING NaN");
    EXPECT("LN(1)", "DOUBLE 0");
    EXPECT("LN(0)", "DOUBLE -inf");
    EXPECT("LOG10(1000)", "DOUBLE 3");
    EXPECT("LOG2(8)", "DOUBLE 3");
    EXPECT("LOG(10, 100)", "DOUBLE 2");
    EXPECT("LOG(1)", "DOUBLE 0");
    EXPECT("EXP(0)", "DOUBLE 1");
    EXPECT("ATAN2(1, 1)", "DOUBLE 0.78539816339744828");
    EXPECT("COT(1)", "DOUBLE 0.64209261593433065");
    EXPECT("DEGREES(price)", "DOUBLE 143.23944878270581");
    EXPECT("RADIANS(180)", "DOUBLE 3.1415926535897931");
    EXPECT("SIN(0) + COS(0) + TAN(0) + ASIN(0) + ACOS(1) + ATAN(0)", "DOUBLE 1");
    EXPECT("SINH(0) + COSH(0) + TANH(0)", "DOUBLE 1");
    EXPECT("SIGN(neg)", "INT -1");
    EXPECT("SIGN(id)", "BIGINT 1");
    EXPECT("SIGN(-0.5)", "DECIMAL(1, 1) NULL"); /* -1 does not fit: NULL, as an overflow */
    EXPECT("SIGN(-1.5)", "DECIMAL(2, 1) -1.0");
    EXPECT("SIGN(0)", "INT 0");
    EXPECT("SIGN(nul_i)", "INT NULL");
    EXPECT("PI()", "DOUBLE 3.1415926535897931");
    EXPECT("E()", "DOUBLE 2.7182818284590451");
    EXPECT("BIN(12)", "STRING 1100");
    EXPECT("BIN(0)", "STRING 0");
    EXPECT("BIN(-1)", "STRING 1111111111111111111111111111111111111111111111111111111111111111");
    EXPECT("HEX(255)", "STRING FF");
    EXPECT("HEX(-1)", "STRING FFFFFFFFFFFFFFFF");
    EXPECT("HEX('hello,world')", "STRING 68656C6C6F2C776F726C64");
    EXPECT("HEX(nul_s)", "STRING NULL");
    EXPECT("SQRT(name)", "PARSE: line 1, column 6: SQRT needs a number as argument 1, got STRING");
    EXPECT("ROUND(price, 1.5)",
           "PARSE: line 1, column 14: ROUND needs an integer as argument 2, got DOUBLE");
    EXPECT("POWER(2)", "PARSE: line 1, column 1: POWER takes 2 arguments, got 1");
    EXPECT("PI(1)", "PARSE: line 1, column 1: PI takes 0 arguments, got 1");
}

/* Flink's further string functions (expr_str.c) and the digests. */
static void test_string_functions2(void)
{
    EXPECT("LPAD(name, 8, 'xy')", "STRING xyxAlice");
    EXPECT("LPAD(name, 2, 'xy')", "STRING Al");
    EXPECT("LPAD(name, 0, 'x')", "STRING ");
    EXPECT("LPAD(name, -1, 'x')", "STRING NULL");
    EXPECT("LPAD(name, 9, '')", "STRING NULL");
    EXPECT("RPAD(name, 7, '.')", "STRING Alice..");
    EXPECT("RPAD('h\xc3\xa9', 4, '\xc3\xa9')", "STRING h\xc3\xa9\xc3\xa9\xc3\xa9");
    EXPECT("REPEAT('ab', 3)", "STRING ababab");
    EXPECT("REPEAT('ab', -1)", "STRING ");
    EXPECT("REVERSE('h\xc3\xa9llo')", "STRING oll\xc3\xa9h");
    EXPECT("INITCAP('hello WORLD 2nd-try')", "STRING Hello World 2nd-Try");
    EXPECT("LOCATE('l', 'hello')", "INT 3");
    EXPECT("LOCATE('l', 'hello', 4)", "INT 4");
    EXPECT("LOCATE('l', 'hello', 5)", "INT 0");
    EXPECT("LOCATE('z', 'hello')", "INT 0");
    EXPECT("LOCATE('', 'hello', 2)", "INT 2");
    EXPECT("LOCATE('l', 'hello', 0)", "INT 0");
    EXPECT("INSTR('hello', 'lo')", "INT 4");
    EXPECT("INSTR(nul_s, 'lo')", "INT NULL");
    EXPECT("LEFT(name, 3)", "STRING Ali");
    EXPECT("LEFT(name, 30)", "STRING Alice");
    EXPECT("LEFT(name, -1)", "STRING ");
    EXPECT("RIGHT(name, 3)", "STRING ice");
    EXPECT("TRANSLATE('hello', 'el', 'ip')", "STRING hippo");
    EXPECT("TRANSLATE('hello', 'lo', 'x')", "STRING hexx");
    EXPECT("TRANSLATE(nul_s, 'a', 'b')", "STRING NULL");
    EXPECT("ELT(2, 'a', 'b', 'c')", "STRING b");
    EXPECT("ELT(4, 'a', 'b', 'c')", "STRING NULL");
    EXPECT("ELT(0, 'a')", "STRING NULL");
    EXPECT("ELT(1, nul_s, 'b')", "STRING NULL");
    EXPECT("CONCAT_WS('~', 'AA', nul_s, '', 'CC')", "STRING AA~~CC");
    EXPECT("CONCAT_WS(nul_s, 'a')", "STRING NULL");
    EXPECT("ASCII('abc')", "INT 97");
    EXPECT("ASCII('')", "INT 0");
    EXPECT("CHR(97)", "STRING a");
    EXPECT("CHR(353)", "STRING a");
    EXPECT("CHR(233)", "STRING \xc3\xa9");
    EXPECT("CHR(-1)", "STRING ");
    EXPECT("OVERLAY('This is an old string' PLACING ' new' FROM 10 FOR 5)",
           "STRING This is a new string");
    EXPECT("OVERLAY('abcdef' PLACING 'XY' FROM 3)", "STRING abXYef");
    EXPECT("OVERLAY('abc' PLACING 'XY' FROM 9)", "STRING abcXY");
    EXPECT("OVERLAY('abc', 'x', 1)",
           "PARSE: line 1, column 1: OVERLAY takes (s PLACING r FROM position [FOR length])");
    EXPECT("URL_ENCODE('a b&c=d/\xc3\xa9*')", "STRING a+b%26c%3Dd%2F%C3%A9*");
    EXPECT("URL_DECODE('a+b%26c%3Dd%2F%C3%A9')", "STRING a b&c=d/\xc3\xa9");
    EXPECT("URL_DECODE('%zz')", "STRING NULL");
    EXPECT("PARSE_URL('http://u:p@facebook.com:80/path1/p.php?k1=v1&k2=v2#Ref1', 'HOST')",
           "STRING facebook.com");
    EXPECT("PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'PATH')",
           "STRING /path1/p.php");
    EXPECT("PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY')",
           "STRING k1=v1&k2=v2");
    EXPECT("PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY', 'k2')",
           "STRING v2");
    EXPECT("PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY', 'k3')",
           "STRING NULL");
    EXPECT("PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'REF')", "STRING Ref1");
    EXPECT("PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'PROTOCOL')",
           "STRING http");
    EXPECT("PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'FILE')",
           "STRING /path1/p.php?k1=v1&k2=v2");
    EXPECT("PARSE_URL('http://u:p@facebook.com:80/p', 'AUTHORITY')", "STRING u:p@facebook.com:80");
    EXPECT("PARSE_URL('http://u:p@facebook.com:80/p', 'USERINFO')", "STRING u:p");
    EXPECT("PARSE_URL('no url', 'HOST')", "STRING NULL");
    EXPECT("STARTSWITH(name, 'Al')", "BOOLEAN TRUE");
    EXPECT("ENDSWITH(name, 'Al')", "BOOLEAN FALSE");
    EXPECT("MD5(name)", "STRING 64489c85dc2fe0787b85cd87214b3810");
    EXPECT("SHA1(name)", "STRING 35318264c9a98faf79965c270ac80c5606774df1");
    EXPECT("SHA256(name)", "STRING 3bc51062973c458d5a6f2d8d64a023246354ad7e064b1e4e009ec8a0699a3043");
    EXPECT("SHA2(name, 256)", "STRING 3bc51062973c458d5a6f2d8d64a023246354ad7e064b1e4e009ec8a0699a3043");
    EXPECT("SHA224('')", "STRING d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f");
    EXPECT("SHA2(name, 100)", "STRING NULL");
    EXPECT("MD5(nul_s)", "STRING NULL");
    EXPECT("TO_BASE64(name)", "STRING QWxpY2U=");
    EXPECT("FROM_BASE64('QWxpY2U=')", "STRING Alice");
    EXPECT("FROM_BASE64('!!')", "STRING NULL");
    EXPECT("CHAR_LENGTH(UUID())", "INT 36");
    EXPECT("SUBSTRING(UUID(), 15, 1)", "STRING 4");
    EXPECT("UUID() <> UUID()", "BOOLEAN TRUE");
    EXPECT("LTRIM('xxaxx', 'x')", "STRING axx");
    EXPECT("RTRIM('xxaxx', 'x')", "STRING xxa");
    EXPECT("BTRIM('  a  ')", "STRING a");
    EXPECT("BTRIM('xyaxy', 'yx')", "STRING a");
    EXPECT("LPAD(1, 2, 'x')", "PARSE: line 1, column 6: LPAD needs a STRING as argument 1, got INT");
}

/* IFNULL, GREATEST, LEAST, IS [NOT] DISTINCT FROM, SIMILAR TO. */
static void test_conditional_similar(void)
{
    EXPECT("IFNULL(nul_i, 5)", "INT 5");
    EXPECT("IFNULL(n, 5)", "INT 3");
    EXPECT("IFNULL(nul_i, price)", "DOUBLE 2.5");
    EXPECT("GREATEST(1, 5, 3)", "INT 5");
    EXPECT("GREATEST(n, id, price)", "DOUBLE 7");
    EXPECT("LEAST(n, id)", "BIGINT 3");
    EXPECT("LEAST('b', 'a', 'c')", "STRING a");
    EXPECT("GREATEST(1, nul_i)", "INT NULL");
    EXPECT("GREATEST(ts, TIMESTAMP '2030-01-01 00:00:00')", "TIMESTAMP 1893456000000");
    EXPECT("GREATEST(1, 'a')",
           "PARSE: line 1, column 13: GREATEST needs values of one comparable type as argument 2, got CHAR(1)");
    EXPECT("nul_i IS DISTINCT FROM NULL", "BOOLEAN FALSE");
    EXPECT("nul_i IS NOT DISTINCT FROM NULL", "BOOLEAN TRUE");
    EXPECT("n IS DISTINCT FROM nul_i", "BOOLEAN TRUE");
    EXPECT("n IS DISTINCT FROM 3", "BOOLEAN FALSE");
    EXPECT("n IS NOT DISTINCT FROM 3.0", "BOOLEAN TRUE");
    EXPECT("name IS DISTINCT FROM 1", "PARSE: line 1, column 6: cannot compare STRING with INT in 'IS DISTINCT FROM'");
    EXPECT("'abc' SIMILAR TO 'abc'", "BOOLEAN TRUE");
    EXPECT("'abc' SIMILAR TO 'a'", "BOOLEAN FALSE");
    EXPECT("'abc' SIMILAR TO '%(b|d)%'", "BOOLEAN TRUE");
    EXPECT("'abc' SIMILAR TO 'a_c'", "BOOLEAN TRUE");
    EXPECT("'aaab' SIMILAR TO 'a+b'", "BOOLEAN TRUE");
    EXPECT("'a.c' SIMILAR TO 'a.c'", "BOOLEAN TRUE");
    EXPECT("'abc' SIMILAR TO 'a.c'", "BOOLEAN FALSE");
    EXPECT("'ab' SIMILAR TO '[a-c]{2}'", "BOOLEAN TRUE");
    EXPECT("'a%' SIMILAR TO 'a!%' ESCAPE '!'", "BOOLEAN TRUE");
    EXPECT("'ab' SIMILAR TO 'a!%' ESCAPE '!'", "BOOLEAN FALSE");
    EXPECT("name NOT SIMILAR TO 'A%'", "BOOLEAN FALSE");
    EXPECT("nul_s SIMILAR TO 'A%'", "BOOLEAN NULL");
    EXPECT("name SIMILAR TO nul_s", "PARSE: line 1, column 17: SIMILAR TO needs a constant pattern and escape (string literals)");
    EXPECT("name SIMILAR TO 'a('", "PARSE: line 1, column 17: SIMILAR TO pattern 'a(': unterminated '('");
    EXPECT("CURRENT_WATERMARK(ts)", "TIMESTAMP NULL");
    EXPECT("CURRENT_WATERMARK(id)",
           "PARSE: line 1, column 19: CURRENT_WATERMARK needs a TIMESTAMP column (the rowtime attribute), got BIGINT");
}

/* ARRAY[...], MAP[...], ROW(...), (a, b), x[i], r.f and nested CASTs (expr_nest.c) */
static void test_constructors_and_access(void)
{
    EXPECT("CAST(ARRAY[1, NULL, 3] AS STRING)", "STRING [1, NULL, 3]");
    EXPECT("CAST(ARRAY[1, 2.5] AS STRING)", "STRING [1.0, 2.5]"); /* DECIMAL(11, 1) elements */
    EXPECT("CAST(MAP['a', 1, 'b', 2, 'a', 3] AS STRING)", "STRING {a=3, b=2}");
    EXPECT("CAST(ROW(1, 'x', (2, DATE '2024-01-31')) AS STRING)", "STRING (1, x, (2, 2024-01-31))");
    EXPECT("ARRAY[10, 20, 30][2]", "INT 20");
    EXPECT("ARRAY[10, 20, 30][0]", "INT NULL");
    EXPECT("ARRAY[10, 20, 30][4]", "INT NULL");
    EXPECT("ARRAY[10, 20, 30][CAST(NULL AS INT)]", "INT NULL");
    EXPECT("ARRAY[ARRAY[1], ARRAY[2, 3]][2][2]", "INT 3");
    EXPECT("MAP['a', 1]['a'] + 1", "INT 2");
    EXPECT("MAP['a', 1]['a'] + MAP[1, 'x'][1]",
           "PARSE: line 1, column 18: cannot apply '+' to INT and CHAR(1)");
    EXPECT("MAP[1, 'x', 2, 'y'][CAST(2 AS BIGINT)]", "STRING y");
    EXPECT("MAP['a', 1]['b']", "INT NULL");
    EXPECT("MAP[1, 'x'][4294967297]", "STRING NULL"); /* a BIGINT index is not narrowed */
    EXPECT("MAP[1.5, 'x'][1.5]", "STRING x");
    EXPECT("MAP[1, 'x'][1.0]",
           "PARSE: line 1, column 12: MAP<INT NOT NULL, CHAR(1) NOT NULL> NOT NULL has keys of type "
           "INT NOT NULL, not DECIMAL(2, 1)");
    EXPECT("ROW(1, 'x').EXPR$1", "STRING x");
    EXPECT("(1, (2, 'y')).EXPR$1.EXPR$1", "STRING y");
    EXPECT("CAST(ROW(1, 'a') AS ROW<n BIGINT, s STRING>).n", "BIGINT 1");
    EXPECT("CAST(CAST(ARRAY[1, 2] AS ARRAY<DECIMAL(4, 2)>) AS STRING)", "STRING [1.00, 2.00]");
    EXPECT("CAST(CAST(ARRAY['1', ' 2 '] AS ARRAY<INT>) AS STRING)", "STRING [1, 2]");
    EXPECT("CAST(ARRAY['1', 'x'] AS ARRAY<INT>)[1]", "EVAL: cannot CAST 'x' to INT at position 1");
    EXPECT("TRY_CAST(ARRAY['1', 'x'] AS ARRAY<INT>) IS NULL", "BOOLEAN TRUE");
    EXPECT("ARRAY[1, 'a']", "PARSE: line 1, column 1: ARRAY: INT and CHAR(1) NOT NULL have no common type");
    EXPECT("ARRAY[NULL]",
           "PARSE: line 1, column 1: ARRAY of NULLs only: Illegal use of 'NULL' (CAST one of them)");
    EXPECT("MAP['a']", "PARSE: line 1, column 1: MAP needs keys and values in pairs, got 1 arguments");
    EXPECT("ARRAY[1][1.5]", "PARSE: line 1, column 9: an ARRAY index must be an integer, got DECIMAL(2, 1)");
    EXPECT("MAP['a', 1][1]", "PARSE: line 1, column 12: MAP<CHAR(1) NOT NULL, INT NOT NULL> NOT NULL has keys "
           "of type CHAR(1) NOT NULL, not INT");
    EXPECT("ROW(1).x", "PARSE: line 1, column 8: unknown field 'x' of ROW<`EXPR$0` INT NOT NULL> NOT NULL");
    EXPECT("name[1]", "PARSE: line 1, column 5: '[...]' needs an ARRAY or a MAP, got STRING");
    EXPECT("ARRAY[1, 2][1, 2]",
           "PARSE: line 1, column 12: an element access takes one index (arr[1], m['k'])");
    EXPECT("CAST(ARRAY[1] AS INT)", "PARSE: line 1, column 1: cannot CAST ARRAY<INT NOT NULL> NOT NULL to INT");
    EXPECT("DATEX '1'", "PARSE: line 1, column 7: syntax error");
    /* a value larger than the scratch arena: an error, no overrun */
    CHECK_EQ_STR(run_limit("CAST(ARRAY['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', "
                           "'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'] AS STRING)", 64),
                 "EVAL: ARRAY: scratch space exhausted at position 6");
}

static void test_current_watermark(void)
{
    setup();
    char err[256] = "";
    sl_expr *e = sl_expr_parse("CURRENT_WATERMARK(ts) IS NULL OR ts > CURRENT_WATERMARK(ts)", &S,
                               err, sizeof err);
    CHECK(e != NULL);
    CHECK(sl_expr_reads_watermark(e));
    sl_arena a;
    sl_arena_init(&a, 1024);
    sl_value v;
    CHECK(sl_expr_eval_wm(e, &R, INT64_MIN, &a, &v, err, sizeof err) == SL_OK && v.v.i == 1);
    CHECK(sl_expr_eval_wm(e, &R, 1767225600019LL, &a, &v, err, sizeof err) == SL_OK && v.v.i == 1);
    CHECK(sl_expr_eval_wm(e, &R, 1767225600020LL, &a, &v, err, sizeof err) == SL_OK && v.v.i == 0);
    sl_arena_free(&a);
    sl_expr_destroy(e);
}

SL_TEST_MAIN(SL_TEST(test_literals), SL_TEST(test_columns), SL_TEST(test_arithmetic),
             SL_TEST(test_division_by_zero), SL_TEST(test_comparisons), SL_TEST(test_type_errors),
             SL_TEST(test_syntax_errors), SL_TEST(test_logic_and_nulls), SL_TEST(test_case),
             SL_TEST(test_cast), SL_TEST(test_timestamps), SL_TEST(test_strings),
             SL_TEST(test_like_is_not_exponential), SL_TEST(test_numeric_functions),
             SL_TEST(test_scratch_exhausted), SL_TEST(test_parse_item), SL_TEST(test_eval_bool),
             SL_TEST(test_intervals), SL_TEST(test_depth_limit), SL_TEST(test_fuzz),
             SL_TEST(test_keywords_and_quoting), SL_TEST(test_interval_literals),
             SL_TEST(test_interval_arithmetic), SL_TEST(test_casts_time),
             SL_TEST(test_unix_time), SL_TEST(test_timestampadd_diff), SL_TEST(test_extract), SL_TEST(test_replace_split_index),
             SL_TEST(test_current_timestamp), SL_TEST(test_rand_seeded),
             SL_TEST(test_rand_many_sequences), SL_TEST(test_rand_unseeded),
             SL_TEST(test_rand_threads), SL_TEST(test_date_format_table),
             SL_TEST(test_date_format), SL_TEST(test_regexp_table), SL_TEST(test_regexp),
             SL_TEST(test_fn_pattern_fuzz), SL_TEST(test_math_functions),
             SL_TEST(test_string_functions2), SL_TEST(test_conditional_similar),
             SL_TEST(test_constructors_and_access), SL_TEST(test_current_watermark))
