/*
 * test_sql_subquery.c -- the planner's subqueries and multi-way joins
 * without a cluster (sql/plan_subquery.c): the job graph each form becomes
 * (which joins, of which type, on which keys) and the refusals, each with
 * its message and position (line and column counted by hand).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sl_test.h"
#include "sql.h"
#include "sql_run.h"

static void print_result(const sl_sql_result *r, char *out, size_t cap)
{
    if (r->kind == SL_SQL_JOB) snprintf(out, cap, "%s", r->job);
    else if (r->kind == SL_SQL_TEXT) snprintf(out, cap, "%s", r->text);
    else snprintf(out, cap, "OK");
}

static const char *TABLES =
    "CREATE TABLE t (id INT, pid INT, bid INT, amount INT) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE p (pid INT, pname STRING) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE b (bid INT, bname STRING) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE out1 (id INT) WITH ('connector' = 'blackhole');\n";

/* Plan `insert` after TABLES: the job's text or "ERR: ..." (static). */
static const char *plan(const char *insert)
{
    static char out[65536];
    sl_sql_session *s = sl_sql_session_new();
    char script[8192];
    snprintf(script, sizeof script, "%s%s", TABLES, insert);
    sql_run_script(s, script, out, sizeof out, print_result);
    sl_sql_session_destroy(s);
    return out;
}

/* The joins of a planned job: "type keys|keys; ..." in vertex order. */
static const char *joins(const char *insert)
{
    static char out[2048];
    const char *j = plan(insert);
    out[0] = '\0';
    json_error_t je;
    json_t *job = json_loads(j, 0, &je);
    if (!job) {
        snprintf(out, sizeof out, "%.500s", j);
        return out;
    }
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(job, "vertices"), i, v) {
        if (strcmp(json_string_value(json_object_get(v, "type")), "regular_join")) continue;
        json_t *cfg = json_object_get(v, "config");
        char *lk = json_dumps(json_object_get(cfg, "left-keys"), JSON_COMPACT);
        char *rk = json_dumps(json_object_get(cfg, "right-keys"), JSON_COMPACT);
        size_t n = strlen(out);
        const char *mode = json_string_value(json_object_get(cfg, "mode"));
        snprintf(out + n, sizeof out - n, "%s%s %s|%s", n ? "; " : "",
                 mode ? mode : json_string_value(json_object_get(cfg, "join-type")), lk, rk);
        free(lk);
        free(rk);
    }
    json_decref(job);
    return out;
}

static void test_multi_way_joins(void)
{
    /* a star join: the second step's ON names the first table */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT t.id FROM t JOIN b ON t.bid = b.bid "
                       "LEFT JOIN p ON p.pid = t.pid;"),
                 "inner [\"bid\"]|[\"bid\"]; left [\"pid\"]|[\"pid\"]");
    /* commas: each step takes the WHERE conditions that join it */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT t.id FROM t, b, p WHERE t.bid = b.bid "
                       "AND p.pid = t.pid AND amount > 3;"),
                 "inner [\"bid\"]|[\"bid\"]; inner [\"pid\"]|[\"pid\"]");
    /* a view over a join joins by its own name */
    CHECK_EQ_STR(joins("CREATE VIEW v AS SELECT t.id, b.bname FROM t JOIN b ON t.bid = b.bid;\n"
                       "INSERT INTO out1 SELECT v.id FROM v JOIN p ON v.id = p.pid;"),
                 "inner [\"bid\"]|[\"bid\"]; inner [\"id\"]|[\"pid\"]");
    CHECK_EQ_STR(plan("INSERT INTO out1 SELECT t.id FROM t, b, p WHERE t.bid = b.bid;"),
                 "ERR: line 5, column 39: FROM a, b (a cross join) is not supported; join on "
                 "keys: a JOIN b ON a.k = b.k");
}

static void test_subqueries_become_joins(void)
{
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE pid IN (SELECT pid FROM p);"),
                 "semi [\"pid\"]|[\"__k0\"]");
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE NOT EXISTS "
                       "(SELECT 1 FROM p WHERE p.pid = t.pid AND p.pname <> 'x');"),
                 "anti [\"pid\"]|[\"__k0\"]");
    /* correlated IN: the value and the correlation column */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE bid IN "
                       "(SELECT b.bid FROM b WHERE b.bid = t.pid);"),
                 "semi [\"bid\",\"pid\"]|[\"__k0\",\"__k1\"]");
    /* other correlated conditions: checked by the semi join per pair */
    const char *j = plan("INSERT INTO out1 SELECT id FROM t WHERE bid IN "
                         "(SELECT b.bid FROM b WHERE b.bname = CAST(t.pid AS STRING));");
    CHECK(strstr(j, "\"condition\": \"`__r0` = CAST(`pid` AS STRING)\"") != NULL);
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE EXISTS "
                       "(SELECT 1 FROM b WHERE b.bid > t.pid);"),
                 "semi [\"__one4\"]|[\"__one1\"]");
    /* NOT IN with a correlated condition other than an equality: an anti join checking
     * it and "x = y is not FALSE" per pair (on a constant key: no equality) */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE bid NOT IN "
                       "(SELECT b.bid FROM b WHERE b.bid > t.pid);"),
                 "anti [\"__one4\"]|[\"__one3\"]");
    j = plan("INSERT INTO out1 SELECT id FROM t WHERE bid NOT IN "
             "(SELECT b.bid FROM b WHERE b.bid > t.pid);");
    CHECK(strstr(j, "\"condition\": \"(`__r0` > `pid`) AND ((`bid` = `__r1`) OR ((`bid` IS NULL) "
                    "OR (`__r2` IS NULL)))\"") != NULL);
    /* a scalar subquery correlated other than by equalities: its value generator (the
     * distinct outer values joined with b), the aggregate per value joined back */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE amount > "
                       "(SELECT MAX(b.bid) FROM b WHERE b.bid < t.pid);"),
                 "inner [\"__one2\"]|[\"__one1\"]; left [\"pid\"]|[\"__o0\"]");
    /* NOT IN: the anti join and the counts on a constant key */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE pid NOT IN (SELECT pid FROM p);"),
                 "left [\"pid\"]|[\"__k0\"]; left [\"__one5\"]|[\"__one2\"]");
    /* inside OR: both sides LEFT-joined, the value of IN computed after them */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE pid = 1 OR pid IN "
                       "(SELECT pid FROM p);"),
                 "left [\"pid\"]|[\"__k0\"]; left [\"__one5\"]|[\"__one2\"]");
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE amount > "
                       "(SELECT AVG(amount) FROM t);"),
                 "left [\"__one4\"]|[\"__one1\"]");
    /* correlated: the aggregate grouped by the correlation column, joined on it */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE amount > "
                       "(SELECT MAX(p.pid) FROM p WHERE p.pid = t.pid);"),
                 "left [\"pid\"]|[\"__j0\"]");
}

static void test_refusals(void)
{
    CHECK_EQ_STR(plan("INSERT INTO out1 SELECT id FROM t WHERE pid IN (SELECT pid, pname FROM p);"),
                 "ERR: line 5, column 41: Values passed to IN operator must have compatible "
                 "types (the subquery selects several columns, IN needs one column)");
    /* an expression as IN's operand: the comparison is the semi join's pair condition */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE pid + 1 IN (SELECT pid FROM p);"),
                 "semi [\"__one4\"]|[\"__one1\"]");
    CHECK_EQ_STR(plan("INSERT INTO out1 SELECT id FROM t WHERE amount > (SELECT pid FROM p "
                      "GROUP BY pid);"),
                 "ERR: line 5, column 50: a scalar subquery with GROUP BY, DISTINCT or without "
                 "FROM is not supported yet (an aggregate without GROUP BY, or a SELECT ... FROM "
                 "... WHERE giving at most one row, is)");
    /* a non-aggregate scalar: its one row checked at run time, on a constant key */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE amount > (SELECT pid FROM p);"),
                 "left [\"__one4\"]|[\"__one1\"]");
    /* EXISTS reads no item: an outer column there plans as the semi join */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE EXISTS "
                       "(SELECT t.amount FROM p WHERE p.pid = t.pid);"),
                 "semi [\"pid\"]|[\"__k0\"]");
    /* IN naming the outer query in its item: the comparison checked per pair */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE pid IN "
                       "(SELECT t.amount FROM p WHERE p.pid = t.pid);"),
                 "semi [\"pid\"]|[\"__k0\"]");
    /* a correlated EXISTS / IN over DISTINCT or a duplicate-removing GROUP BY */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT id FROM t WHERE EXISTS "
                       "(SELECT DISTINCT pname FROM p WHERE p.pid = t.pid);"),
                 "semi [\"pid\"]|[\"__k0\"]");
    CHECK_EQ_STR(plan("INSERT INTO out1 SELECT id FROM t WHERE EXISTS "
                      "(SELECT pname FROM p WHERE p.pid = t.pid GROUP BY pid);"),
                 "ERR: line 5, column 56: column 'pname' must be in GROUP BY or inside an "
                 "aggregate function");
    /* a subquery in HAVING: the grouped query in FROM, the scalar LEFT-joined to it */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT pid FROM t GROUP BY pid HAVING COUNT(*) > "
                       "(SELECT COUNT(*) FROM p);"),
                 "left [\"__one2\"]|[\"__one1\"]");
    /* a subquery in GROUP BY, and COUNT inside a correlated scalar subquery's expression,
     * plan now: tests/integration/test_sql_subquery.py runs them against its model */
    /* LATERAL (query) */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT t.id FROM t, LATERAL (SELECT pname FROM p "
                       "WHERE p.pid = t.pid) AS x;"),
                 "inner [\"pid\"]|[\"__j0\"]");
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT t.id FROM t CROSS JOIN LATERAL (SELECT MAX(pid) "
                       "AS m FROM p WHERE p.pname = CAST(t.bid AS STRING)) x;"),
                 "inner [\"__one2\"]|[\"__one1\"]; inner [\"bid\"]|[\"__o0\"]");
    CHECK_EQ_STR(plan("INSERT INTO out1 SELECT t.id FROM t, LATERAL (SELECT pname FROM p "
                      "WHERE p.pid = t.pid);"),
                 "ERR: line 5, column 38: LATERAL (query) needs an alias: LATERAL (SELECT ...) "
                 "AS t");
    CHECK_EQ_STR(plan("INSERT INTO out1 SELECT x.pid FROM LATERAL (SELECT pid FROM p) x;"),
                 "ERR: line 5, column 36: LATERAL (query) joins the tables before it: FROM t, "
                 "LATERAL (SELECT ... WHERE ... = t.c) AS x");
    CHECK_EQ_STR(plan("INSERT INTO out1 SELECT t.id FROM t, LATERAL (SELECT pid FROM p "
                      "WHERE p.pid = t.pid GROUP BY pid) x;"),
                 "ERR: line 5, column 38: LATERAL (query): Sluice decorrelates a SELECT ... FROM "
                 "... WHERE, with aggregates or without, not GROUP BY, HAVING, DISTINCT or set "
                 "operations");
    /* an aggregating LATERAL in a comma join: grouped by the correlation column and
     * inner-joined, as Flink 2.3 (a row without rows to count is dropped) */
    CHECK_EQ_STR(joins("INSERT INTO out1 SELECT t.id FROM t, LATERAL (SELECT COUNT(*) AS n FROM p "
                       "WHERE p.pid = t.pid) x;"),
                 "inner [\"pid\"]|[\"__j0\"]");
    /* no crash on garbage around subqueries */
    CHECK(!strncmp(plan("INSERT INTO out1 SELECT id FROM t WHERE EXISTS (SELECT);"), "ERR: ", 5));
    CHECK(!strncmp(plan("INSERT INTO out1 SELECT id FROM t WHERE pid IN (SELECT x FROM nope);"),
                   "ERR: ", 5));
}

SL_TEST_MAIN(SL_TEST(test_multi_way_joins), SL_TEST(test_subqueries_become_joins),
             SL_TEST(test_refusals))
