/*
 * test_sql_rank.c -- the SQL front end for Top-N, deduplication, DISTINCT
 * aggregates, FILTER, window TVFs without aggregation and window joins: what the grammar parses and what the planner
 * (sql/plan_rank.c, sql/planner.c) makes of it -- the operators, their
 * configuration, the changelog mode, the unbounded-state warning -- and the
 * errors for what it refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobgraph.h"
#include "operator.h"
#include "sql_run.h"
#include "sl_test.h"
#include "ast.h"
#include "parse.h"
#include "sql.h"

static const char *expr(const char *e)
{
    static char out[4096];
    char sql[2048], err[512];
    snprintf(sql, sizeof sql, "SELECT %s FROM t", e);
    sql_arena *a = sql_arena_new();
    sql_node *l = sql_parse(a, sql, strlen(sql), 1, 1, err, sizeof err);
    if (!l) snprintf(out, sizeof out, "ERR: %s", err);
    else sql_node_dump(l->kids[0]->kids[0]->kids[0]->kids[0]->kids[0], out, sizeof out);
    sql_arena_destroy(a);
    return out;
}

static char warning[4096];

/* The unbounded-state warnings the job's operators declare (as the
 * JobManager and the SQL client report them), appended to `warning`. */
static void job_warnings(const char *job)
{
    static int registered;
    if (!registered) sl_ops_register_builtin(), registered = 1;
    char err[512];
    sl_jobgraph *g = sl_jobgraph_parse(job, strlen(job), 1, 0, err, sizeof err);
    if (!g) return;
    json_t *ws = sl_jobgraph_warnings(g);
    size_t i;
    json_t *w;
    json_array_foreach(ws, i, w) {
        size_t at = strlen(warning);
        snprintf(warning + at, sizeof warning - at, "%s%s", at ? "\n" : "",
                 json_string_value(json_object_get(w, "message")));
    }
    json_decref(ws);
    sl_jobgraph_destroy(g);
}

/* What a statement's result prints as; its warning, and the warnings of the
 * job it planned, go into `warning`. */
static void fmt_result(const sl_sql_result *r, char *out, size_t cap)
{
    warning[0] = '\0';
    if (r->kind == SL_SQL_TEXT) snprintf(out, cap, "%s", r->text);
    else if (r->kind == SL_SQL_JOB) snprintf(out, cap, "%s", r->job);
    else snprintf(out, cap, "OK");
    if (r->warning) snprintf(warning, sizeof warning, "%s", r->warning);
    if (r->job) job_warnings(r->job);
}

/* Run a script; the last result's text or job, "OK", or "ERR: ..."; its
 * warning (or "") into `warning`. */
static const char *run(sl_sql_session *s, const char *script)
{
    static char out[65536];
    warning[0] = '\0';
    return sql_run_script(s, script, out, sizeof out, fmt_result);
}

static const char *TABLES =
    "CREATE TABLE sales (id BIGINT, cat AS CAST(id % 3 AS INT), amount AS CAST(id * 7 % 10 AS INT),"
    " pt AS PROCTIME()) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',"
    " 'fields.id.start' = '1', 'fields.id.end' = '100');\n"
    "CREATE TABLE ev (id BIGINT, k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' "
    "SECOND) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE out_json (cat INT, id BIGINT, amount INT, rn BIGINT) WITH ('connector' = "
    "'filesystem', 'path' = '/tmp/x', 'format' = 'json');\n"
    "CREATE TABLE out2 (cat INT, id BIGINT) WITH ('connector' = 'filesystem', 'path' = '/tmp/y',"
    " 'format' = 'csv');\n"
    "CREATE TABLE out2j (cat INT, id BIGINT) WITH ('connector' = 'print');\n";

static char errbuf[4096];

/* Plan `insert` in a fresh session (after the SET statements in `pre`,
 * may be NULL); the job, or NULL with the error in errbuf. */
static json_t *job_of(const char *pre, const char *insert)
{
    sl_sql_session *s = sl_sql_session_new();
    const char *r = run(s, TABLES);
    if (strcmp(r, "OK")) fprintf(stderr, "setup: %s\n", r);
    if (pre) run(s, pre);
    r = run(s, insert);
    json_t *j = NULL;
    errbuf[0] = '\0';
    if (!strncmp(r, "ERR: ", 5)) snprintf(errbuf, sizeof errbuf, "%s", r + 5);
    else if (!(j = json_loads(r, 0, NULL))) snprintf(errbuf, sizeof errbuf, "not a job: %.300s", r);
    sl_sql_session_destroy(s);
    return j;
}

static json_t *vertex(json_t *job, const char *type, int nth)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(job, "vertices"), i, v) {
        if (!strcmp(json_string_value(json_object_get(v, "type")), type) && nth-- == 0) return v;
    }
    return NULL;
}

static const char *cfg(json_t *v)
{
    static char out[2048];
    char *s = json_dumps(json_object_get(v, "config"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    snprintf(out, sizeof out, "%s", s ? s : "null");
    free(s);
    return out;
}

static const char *types(json_t *job)
{
    static char out[1024];
    size_t i, o = 0;
    json_t *v;
    out[0] = '\0';
    json_array_foreach(json_object_get(job, "vertices"), i, v) o += (size_t)snprintf(
        out + o, sizeof out - o, "%s%s", i ? " " : "", json_string_value(json_object_get(v, "type")));
    return out;
}

/* The edge into vertex id `to`: "strategy keys". */
static const char *edge_into(json_t *job, const char *to)
{
    static char out[256];
    size_t i;
    json_t *e;
    snprintf(out, sizeof out, "(none)");
    json_array_foreach(json_object_get(job, "edges"), i, e) {
        if (strcmp(json_string_value(json_object_get(e, "to")), to)) continue;
        char *k = json_dumps(json_object_get(e, "keys"), JSON_COMPACT);
        snprintf(out, sizeof out, "%s %s", json_string_value(json_object_get(e, "strategy")),
                 k ? k : "-");
        free(k);
    }
    return out;
}

static const char *vid(json_t *v) { return json_string_value(json_object_get(v, "id")); }

/* ---- grammar ---------------------------------------------------------------- */

static void test_parse_over_and_filter(void)
{
    CHECK_EQ_STR(expr("ROW_NUMBER() OVER (PARTITION BY a, b ORDER BY c DESC, d ASC, e) AS rn"),
                 "(OVER ROW_NUMBER (LIST (COL a) (COL b)) (LIST (ORDER (COL c)) (ORDER (COL d)) "
                 "(ORDER (COL e))) - (FUNC ROW_NUMBER))");
    CHECK_EQ_STR(expr("row_number() over (order by ts)"), "(OVER ROW_NUMBER - (LIST (ORDER "
                                                          "(COL ts))) - (FUNC row_number))");
    CHECK_EQ_STR(expr("COUNT(*) FILTER (WHERE x > 1)"), "(FUNC COUNT (BINOP > (COL x) (NUM 1)))");
    CHECK_EQ_STR(expr("SUM(DISTINCT a) FILTER (WHERE b)"), "(FUNC SUM (COL a) (COL b))");
    /* the new keywords stay usable as names */
    CHECK_EQ_STR(expr("`order` + asc + `filter`"), "(BINOP + (BINOP + (COL order) (COL asc)) "
                                                   "(COL filter))");
    CHECK_EQ_STR(expr("ROW_NUMBER() OVER (PARTITION BY a)"),
                 "ERR: line 1, column 41: unexpected ')', expected ORDER or ','");
}

/* ---- Top-N ------------------------------------------------------------------ */

static void test_plan_topn(void)
{
    json_t *j = job_of(NULL, "INSERT INTO out_json SELECT * FROM (SELECT cat, id, amount, "
                             "ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount DESC, id) AS rn "
                             "FROM sales) WHERE rn <= 3;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(types(j), "datagen calc calc rank file");
    json_t *r = vertex(j, "rank", 0);
    CHECK_EQ_STR(cfg(r), "{\"partition-by\":[\"cat\"],\"order-by\":[\"amount DESC\",\"id\"],"
                         "\"limit\":3,\"row-number\":\"rn\"}");
    CHECK_EQ_STR(edge_into(j, vid(r)), "hash [\"cat\"]");
    CHECK(strstr(warning, "Top-N 'rank' keeps state per key (cat) that nothing bounds") != NULL);
    CHECK(strstr(warning, "'table.exec.state.ttl'") != NULL);
    json_decref(j);

    /* the rank not selected, other conditions after the ranking, rn < N */
    j = job_of("SET 'table.exec.state.ttl' = '1 h';",
               "INSERT INTO out2j SELECT cat, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
               "cat ORDER BY amount) AS rn FROM sales) t WHERE rn < 3 AND t.id > 10;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    r = vertex(j, "rank", 0);
    CHECK_EQ_STR(cfg(r), "{\"partition-by\":[\"cat\"],\"order-by\":[\"amount\"],\"limit\":2,"
                         "\"table.exec.state.ttl\":\"1 h\"}");
    CHECK_EQ_STR(types(j), "datagen calc rank calc print");
    CHECK_EQ_STR(cfg(vertex(j, "calc", 1)), "{\"projection\":[\"cat\",\"id\"],\"filter\":\"id > "
                                            "10\"}");
    CHECK(!strstr(warning, "nothing bounds"));
    json_decref(j);

    /* over an updating input (a GROUP BY), no PARTITION BY: global, retracting */
    j = job_of(NULL, "INSERT INTO out2j SELECT cat, c FROM (SELECT cat, c, ROW_NUMBER() OVER "
                     "(ORDER BY c DESC) AS rn FROM (SELECT cat, COUNT(*) AS c FROM sales GROUP BY "
                     "cat)) WHERE 2 >= rn;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    r = vertex(j, "rank", 0);
    CHECK_EQ_STR(cfg(r), "{\"partition-by\":[],\"order-by\":[\"c DESC\"],\"limit\":2,"
                         "\"input-changelog\":\"retract\"}");
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "parallelism")), 1);
    CHECK_EQ_STR(edge_into(j, vid(r)), "rebalance -");
    CHECK(strstr(warning, "Top-N 'rank' keeps state per key (none (one global group))") != NULL);
    CHECK(strstr(warning, "GROUP BY 'agg' keeps state per key (cat)") != NULL);
    json_decref(j);

    /* the ranking query as a CTE and as a view */
    j = job_of(NULL, "INSERT INTO out2j WITH r AS (SELECT cat, id, ROW_NUMBER() OVER (PARTITION "
                     "BY cat ORDER BY id DESC) AS rn FROM sales) SELECT cat, id FROM r WHERE rn "
                     "<= 2 AND r.id > 5;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(cfg(vertex(j, "rank", 0)), "{\"partition-by\":[\"cat\"],\"order-by\":[\"id "
                                            "DESC\"],\"limit\":2}");
    json_decref(j);
    j = job_of("CREATE VIEW ranked AS SELECT cat, id, ROW_NUMBER() OVER (PARTITION BY cat ORDER "
               "BY id DESC) AS rn FROM sales;",
               "INSERT INTO out2j SELECT cat, id FROM ranked WHERE rn <= 2;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK(vertex(j, "rank", 0) != NULL);
    json_decref(j);

    /* EXPLAIN's job carries the operators' warnings (the client prints them before the plan) */
    sl_sql_session *s = sl_sql_session_new();
    run(s, TABLES);
    const char *text = run(s, "EXPLAIN CHANGELOG_MODE INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, "
                              "ROW_NUMBER() OVER (PARTITION BY cat ORDER BY id DESC) AS rn FROM "
                              "sales) WHERE rn <= 2;");
    CHECK(strstr(text, "rank[rank] uid=rank-sales-") != NULL);
    CHECK(strstr(text, "changelogMode=[I,D]") != NULL); /* no row number: -D/+I */
    CHECK(strstr(warning, "Top-N 'rank' keeps state per key (cat) that nothing bounds") != NULL);
    sl_sql_session_destroy(s);

    /* Top-N is updating: an append-only sink refuses it */
    CHECK(job_of(NULL, "INSERT INTO out2 SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER "
                       "(PARTITION BY cat ORDER BY id DESC) AS rn FROM sales) WHERE rn <= 2;") ==
          NULL);
    CHECK(strstr(errbuf, "produced by rank 'rank' (Top-N)") != NULL);
}

/* Window Top-N: over a window aggregation, partitioned by its window */
static void test_plan_window_topn(void)
{
    json_t *j = job_of(NULL, "INSERT INTO out2 SELECT k, c FROM (SELECT *, ROW_NUMBER() OVER "
                             "(PARTITION BY window_start, window_end ORDER BY c DESC) AS rn FROM "
                             "(SELECT window_start, window_end, k, COUNT(*) AS c FROM TABLE(TUMBLE("
                             "TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY "
                             "window_start, window_end, k)) WHERE rn <= 2;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL); /* append-only: the csv sink takes it */
    CHECK_EQ_STR(cfg(vertex(j, "rank", 0)), "{\"partition-by\":[\"window_start\",\"window_end\"],"
                                            "\"order-by\":[\"c DESC\"],\"limit\":2,"
                                            "\"window-end\":\"window_end\"}");
    CHECK(strstr(warning, "nothing bounds") == NULL);
    json_decref(j);
}

/* Rank ranges other than 1..N: the rank operator's rank-start. */
static void test_plan_topn_range(void)
{
    static const struct {
        const char *where;
        int start, limit;
    } cases[] = {
        {"rn BETWEEN 2 AND 5", 2, 5}, {"rn > 1 AND rn <= 3", 2, 3}, {"3 >= rn AND 2 <= rn", 2, 3},
        {"rn = 4", 4, 4}, {"rn >= 2 AND rn < 9 AND rn <= 6 AND cat > 0", 2, 6},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        char q[512], want[300];
        snprintf(q, sizeof q, "INSERT INTO out_json SELECT cat, id, amount, rn FROM (SELECT cat, "
                 "id, amount, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount DESC) AS rn FROM "
                 "sales) WHERE %s;", cases[i].where);
        json_t *j = job_of(NULL, q);
        if (!j) fprintf(stderr, "%s: %s\n", cases[i].where, errbuf);
        CHECK(j != NULL);
        snprintf(want, sizeof want, "{\"partition-by\":[\"cat\"],\"order-by\":[\"amount DESC\"],"
                 "\"limit\":%d,\"rank-start\":%d,\"row-number\":\"rn\"}", cases[i].limit,
                 cases[i].start);
        CHECK_EQ_STR(cfg(vertex(j, "rank", 0)), want);
        json_decref(j);
    }
    /* rn = 1 stays a Top-1 (or a deduplication), no rank-start */
    json_t *j = job_of(NULL, "INSERT INTO out_json SELECT cat, id, amount, rn FROM (SELECT cat, id, "
                             "amount, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount) AS rn "
                             "FROM sales) WHERE rn = 1;");
    CHECK(j != NULL && !strstr(cfg(vertex(j, "rank", 0)), "rank-start"));
    json_decref(j);
}

static void test_plan_topn_errors(void)
{
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER (ORDER BY id) "
         "AS rn FROM sales);", "line 1, column 84: OVER windows' ordering in stream mode must be "
         "defined on a time attribute."},
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER (ORDER BY id) "
         "AS rn FROM sales) WHERE rn > 2;", "line 1, column 19: ROW_NUMBER() needs an upper "
         "bound in the outer query: WHERE rn <= N (Top-N), rn BETWEEN M AND N or rn = 1 "
         "(deduplication)"},
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER (ORDER BY id) "
         "AS rn FROM sales) WHERE rn <> 2;", "line 1, column 112: the row number may only be "
         "bounded by constants: rn <= N, rn < N, rn = N, rn >= M, rn > M or rn BETWEEN M AND N"},
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER (ORDER BY id) "
         "AS rn FROM sales) WHERE rn > 3 AND rn <= 3;", "line 1, column 112: the conditions on "
         "rn select no rank (from 4 to 3)"},
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER (ORDER BY id) "
         "AS rn FROM sales) WHERE rn < 1;", "line 1, column 112: the conditions on rn select no "
         "rank (from 1 to -1)"},
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, RANK() OVER (ORDER BY id) AS rn "
         "FROM sales) WHERE rn <= 2;", "line 1, column 56: RANK() on streaming table is not supported "
         "currently; Top-N and deduplication use ROW_NUMBER()"},
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER (ORDER BY id) "
         "FROM sales) WHERE rn <= 2;", "line 1, column 56: name the row number (ROW_NUMBER() OVER "
         "(...) AS rn) so the outer query can bound it"},
        {"INSERT INTO out2j SELECT cat, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM sales;",
         "line 1, column 59: OVER windows' ordering in stream mode must be defined on a time "
         "attribute."},
        {"INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() OVER (ORDER BY id) "
         "AS rn FROM sales) WHERE rn <= 20000;", "line 1, column 118: the rank bound must be an "
         "integer between 1 and 10000, not 20000"},
    };
    /* an expression the inner query does not select is ranked on as a hidden column (as
     * Flink does), which a calc drops after the rank */
    json_t *h = job_of(NULL, "INSERT INTO out2j SELECT cat, id FROM (SELECT cat, id, ROW_NUMBER() "
                             "OVER (ORDER BY id + 1) AS rn FROM sales) WHERE rn <= 2;");
    CHECK(h != NULL && strstr(cfg(vertex(h, "rank", 0)), "\"order-by\":[\"__o0\"]"));
    json_decref(h);
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        json_t *j = job_of(NULL, cases[i].sql);
        if (j || strcmp(errbuf, cases[i].want))
            fprintf(stderr, "case %zu:\n  got  %s\n  want %s\n", i, errbuf, cases[i].want);
        CHECK(j == NULL);
        CHECK_EQ_STR(errbuf, cases[i].want);
    }
}

/* ---- deduplication -------------------------------------------------------------- */

static void test_plan_dedup(void)
{
    /* keep first on processing time: append-only, a csv sink takes it */
    json_t *j = job_of(NULL, "INSERT INTO out2 SELECT cat, id FROM (SELECT *, ROW_NUMBER() OVER "
                             "(PARTITION BY cat ORDER BY pt) AS rn FROM sales) WHERE rn = 1;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(types(j), "datagen calc deduplicate calc file");
    json_t *d = vertex(j, "deduplicate", 0);
    CHECK_EQ_STR(cfg(d), "{\"key\":[\"cat\"],\"time\":\"processing\",\"keep\":\"first\"}");
    CHECK_EQ_STR(edge_into(j, vid(d)), "hash [\"cat\"]");
    CHECK(strstr(warning, "deduplication 'dedup' keeps state per key (cat) that nothing bounds") != NULL);
    json_decref(j);

    /* keep last: updating */
    CHECK(job_of(NULL, "INSERT INTO out2 SELECT cat, id FROM (SELECT *, ROW_NUMBER() OVER "
                       "(PARTITION BY cat ORDER BY pt DESC) AS rn FROM sales) WHERE rn = 1;") ==
          NULL);
    CHECK(strstr(errbuf, "produced by deduplicate 'dedup'") != NULL);

    /* event time, keep last */
    j = job_of(NULL, "INSERT INTO out2j SELECT k, id FROM (SELECT id, k, ts, ROW_NUMBER() OVER "
                     "(PARTITION BY k ORDER BY ts DESC) AS rn FROM ev) WHERE rn <= 1;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(cfg(vertex(j, "deduplicate", 0)), "{\"key\":[\"k\"],\"time-column\":\"ts\","
                                                   "\"keep\":\"last\"}");
    json_decref(j);

    /* with the row number selected it is a Top-1, as in Flink */
    j = job_of(NULL, "INSERT INTO out_json SELECT cat, id, amount, rn FROM (SELECT *, "
                     "ROW_NUMBER() OVER (PARTITION BY cat ORDER BY pt) AS rn FROM sales) WHERE rn "
                     "= 1;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK(vertex(j, "deduplicate", 0) == NULL);
    CHECK_EQ_STR(cfg(vertex(j, "rank", 0)), "{\"partition-by\":[\"cat\"],\"order-by\":[\"pt\"],"
                                            "\"limit\":1,\"row-number\":\"rn\"}");
    json_decref(j);

    /* ordered by a column that is no time attribute (an aggregate's): a Top-1, which
     * takes an updating input */
    j = job_of(NULL, "INSERT INTO out2j SELECT cat, c FROM (SELECT cat, c, pt, ROW_NUMBER() OVER "
                     "(PARTITION BY cat ORDER BY pt) AS rn FROM (SELECT cat, COUNT(*) AS c, "
                     "MAX(id) AS pt FROM sales GROUP BY cat)) WHERE rn = 1;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK(vertex(j, "deduplicate", 0) == NULL);
    CHECK_EQ_STR(cfg(vertex(j, "rank", 0)), "{\"partition-by\":[\"cat\"],\"order-by\":[\"pt\"],"
                                            "\"limit\":1,\"input-changelog\":\"retract\"}");
    json_decref(j);
}

/* ---- DISTINCT and FILTER ----------------------------------------------------------- */

static void test_plan_distinct_filter(void)
{
    json_t *j = job_of(NULL, "INSERT INTO out2j SELECT cat, COUNT(DISTINCT amount) FILTER (WHERE "
                             "id > 3) AS n FROM sales GROUP BY cat;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(types(j), "datagen calc calc group_aggregate calc calc print");
    CHECK_EQ_STR(cfg(vertex(j, "group_aggregate", 0)),
                 "{\"group-by\":[\"cat\"],\"aggregates\":[\"COUNT(DISTINCT amount) FILTER (WHERE "
                 "__filter0) AS n\"]}");
    CHECK(strstr(cfg(vertex(j, "calc", 1)), "\"id > 3 AS __filter0\"") != NULL);
    json_decref(j);

    /* in a window; the same call twice is one aggregate; SUM(DISTINCT) and a bare BOOLEAN */
    j = job_of(NULL, "INSERT INTO out2j SELECT k, COUNT(DISTINCT id) + SUM(DISTINCT id) FILTER "
                     "(WHERE k > 0) + COUNT(DISTINCT id) FROM TABLE(TUMBLE(TABLE ev, "
                     "DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK(strstr(cfg(vertex(j, "window", 0)), "\"aggregates\":[\"COUNT(DISTINCT id) AS __agg0\","
                 "\"SUM(DISTINCT id) FILTER (WHERE __filter0) AS __agg1\"]") != NULL);
    CHECK(strstr(warning, "nothing bounds") == NULL); /* windows bound their state */
    json_decref(j);

    CHECK(job_of(NULL, "INSERT INTO out2j SELECT cat, COUNT(*) FILTER (WHERE id) FROM sales GROUP "
                       "BY cat;") == NULL);
    CHECK_EQ_STR(errbuf, "line 1, column 54: the FILTER condition must be BOOLEAN, not BIGINT");
    CHECK(job_of(NULL, "INSERT INTO out2j SELECT cat, id FROM sales WHERE ABS(id) FILTER (WHERE "
                       "id > 1) > 0;") == NULL);
    CHECK_EQ_STR(errbuf, "line 1, column 51: FILTER (WHERE ...) is only allowed on aggregate "
                         "functions, not ABS()");
}

/* ---- window TVFs and window joins --------------------------------------------- */

static const char *WJ =
    "CREATE TABLE ev2 (id BIGINT, k INT, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS "
    "ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE wout (lid BIGINT, rid BIGINT, ws TIMESTAMP(3)) WITH ('connector' = 'print');\n";

static void test_plan_window_join(void)
{
    /* Flink's documented form: subqueries over the TVFs, FULL OUTER, a key */
    json_t *j = job_of(WJ, "INSERT INTO wout SELECT L.id, R.id, COALESCE(L.window_start, "
                           "R.window_start) FROM (SELECT * FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), "
                           "INTERVAL '10' SECOND))) L FULL OUTER JOIN (SELECT * FROM TABLE(TUMBLE("
                           "TABLE ev2, DESCRIPTOR(ts), INTERVAL '10' SECOND))) R ON L.window_start = "
                           "R.window_start AND L.window_end = R.window_end AND L.k = R.k;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(types(j), "datagen watermark window_tvf datagen calc watermark window_tvf "
                           "window_join calc calc print");
    CHECK_EQ_STR(cfg(vertex(j, "window_tvf", 0)), "{\"window\":\"TUMBLE\",\"time\":\"ts\",\"size\":10000}");
    json_t *w = vertex(j, "window_join", 0);
    CHECK_EQ_STR(cfg(w), "{\"join-type\":\"full\",\"left-keys\":[\"k\"],\"right-keys\":[\"k\"],"
                         "\"left-window\":[\"window_start\",\"window_end\"],"
                         "\"right-window\":[\"window_start\",\"window_end\"]}");
    CHECK_EQ_STR(edge_into(j, vid(w)), "hash [\"k\"]");
    /* the right side's window columns are window_start0 ...: the projection names them */
    CHECK_EQ_STR(cfg(vertex(j, "calc", 1)), "{\"projection\":[\"`id`\",\"`id0`\",\"COALESCE("
                                            "`window_start`, `window_start0`) AS `EXPR$2`\"]}");
    json_decref(j);

    /* TVFs straight in FROM, HOP and CUMULATE, no other key: keyed by the window; a residual
     * condition of an inner join filters after it */
    j = job_of(WJ, "INSERT INTO wout SELECT L.id, R.id, L.window_start FROM TABLE(HOP(TABLE ev, "
                   "DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' MINUTE)) AS L JOIN TABLE(HOP("
                   "TABLE ev2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' MINUTE)) R ON "
                   "L.window_end = R.window_end AND L.window_start = R.window_start AND L.id < R.id;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(cfg(vertex(j, "window_tvf", 1)), "{\"window\":\"HOP\",\"time\":\"ts\",\"slide\":5000,"
                                                  "\"size\":60000}");
    w = vertex(j, "window_join", 0);
    CHECK_EQ_STR(cfg(w), "{\"join-type\":\"inner\",\"left-keys\":[\"window_start\"],\"right-keys\":"
                         "[\"window_start\"],\"left-window\":[\"window_start\",\"window_end\"],"
                         "\"right-window\":[\"window_start\",\"window_end\"]}");
    CHECK_EQ_STR(cfg(vertex(j, "calc", 1)), "{\"filter\":\"`id` < `id0`\"}");
    json_decref(j);

    j = job_of(WJ, "INSERT INTO wout SELECT id AS a, id AS b, window_start FROM TABLE(CUMULATE(TABLE ev, "
                   "DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) WHERE k > 1;");
    if (!j) fprintf(stderr, "%s\n", errbuf);
    CHECK(j != NULL);
    CHECK_EQ_STR(types(j), "datagen watermark window_tvf calc calc print");
    CHECK_EQ_STR(cfg(vertex(j, "window_tvf", 0)), "{\"window\":\"CUMULATE\",\"time\":\"ts\",\"step\":2000,"
                                                  "\"size\":10000}");
    json_decref(j);

    /* only window_start equated: not a window join, a regular one (as in Flink) */
    j = job_of(WJ, "INSERT INTO wout SELECT L.id, R.id, L.window_start FROM TABLE(TUMBLE(TABLE ev, "
                   "DESCRIPTOR(ts), INTERVAL '10' SECOND)) L JOIN TABLE(TUMBLE(TABLE ev2, "
                   "DESCRIPTOR(ts), INTERVAL '10' SECOND)) R ON L.window_start = R.window_start;");
    CHECK(j != NULL && vertex(j, "regular_join", 0) && !vertex(j, "window_join", 0));
    json_decref(j);
}

/* TVF rows without aggregation on processing time and of SESSION windows plan
 * (window_tvf with domain processing, session_tvf keyed by PARTITION BY); a
 * window Top-N over them is refused (processing time: Flink's words). */
static void test_plan_session_and_proctime_tvf_rows(void)
{
    json_t *j = job_of(WJ, "INSERT INTO wout SELECT id, id AS id2, window_start FROM TABLE(SESSION("
                           "TABLE ev2 PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND));");
    CHECK(j != NULL && vertex(j, "session_tvf", 0) && !vertex(j, "window_tvf", 0));
    json_decref(j);
    j = job_of(WJ, "INSERT INTO wout SELECT id, id AS id2, window_start FROM TABLE(HOP(TABLE ev2, "
                   "DESCRIPTOR(pt), INTERVAL '5' SECOND, INTERVAL '10' SECOND));");
    CHECK(j != NULL && vertex(j, "window_tvf", 0));
    json_decref(j);
    static const struct {
        const char *tvf, *msg;
    } bad[] = {
        {"TUMBLE(TABLE ev2, DESCRIPTOR(pt), INTERVAL '5' SECOND)",
         "Processing time Window TopN is not supported yet."},
        {"SESSION(TABLE ev2 PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)",
         "a window Top-N over SESSION window TVF rows is not supported yet"},
        {"SESSION(TABLE ev2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' SECOND)",
         "Invalid number of arguments to function 'SESSION'. Was expecting 3 arguments"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++) {
        char q[1024];
        snprintf(q, sizeof q, "INSERT INTO wout SELECT id, id AS id2, window_start FROM (SELECT *, "
                 "ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY id DESC) AS rn "
                 "FROM TABLE(%s)) WHERE rn <= 1;", bad[i].tvf);
        j = job_of(WJ, q);
        CHECK(j == NULL);
        json_decref(j);
        if (!strstr(errbuf, bad[i].msg)) fprintf(stderr, "case %zu: %s\n", i, errbuf);
        CHECK(strstr(errbuf, bad[i].msg) != NULL);
    }
}

static void test_plan_window_join_errors(void)
{
    static const char *const tum = "TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) L";
    static const struct {
        const char *right, *on, *msg;
    } bad[] = {
        {"TABLE(HOP(TABLE ev2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) R", "",
         "a window join needs the same windows on both sides; the left input has TUMBLE(10000), "
         "the right HOP(5000,10000)"},
        {"TABLE(SESSION(TABLE ev2, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R", "",
         "a window join over SESSION window TVF rows is not supported yet"},
        {"TABLE(TUMBLE(TABLE ev2 PARTITION BY k, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R", "",
         "PARTITION BY belongs to SESSION windows"},
        {"TABLE(TUMBLE(TABLE ev2, DESCRIPTOR(pt), INTERVAL '10' SECOND)) R", "",
         "Processing time Window Join is not supported yet."},
        {"TABLE(TUMBLE(TABLE ev2, DESCRIPTOR(id), INTERVAL '10' SECOND)) R", "",
         "DESCRIPTOR(id): 'id' is not the event-time attribute of 'ev2'"},
        {"TABLE(HOP(TABLE ev2, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R", "",
         "HOP takes TABLE t, DESCRIPTOR(time column) and the slide and the size"},
        {"TABLE(TUMBLE(TABLE ev2, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R", " AND L.id < R.id",
         "FULL OUTER JOIN: the condition"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++) {
        char q[1024];
        snprintf(q, sizeof q, "INSERT INTO wout SELECT L.id, R.id, L.window_start FROM %s FULL JOIN "
                 "%s ON L.window_start = R.window_start AND L.window_end = R.window_end%s;", tum,
                 bad[i].right, bad[i].on);
        json_t *j = job_of(WJ, q);
        CHECK(j == NULL);
        json_decref(j);
        if (!strstr(errbuf, bad[i].msg)) fprintf(stderr, "case %zu: %s\n", i, errbuf);
        CHECK(strstr(errbuf, bad[i].msg) != NULL);
    }
    json_t *j = job_of(WJ, "INSERT INTO wout SELECT /*+ STATE_TTL('L' = '1 h') */ L.id, R.id, "
                           "L.window_start FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' "
                           "SECOND)) L JOIN TABLE(TUMBLE(TABLE ev2, DESCRIPTOR(ts), INTERVAL '10' "
                           "SECOND)) R ON L.window_start = R.window_start AND L.window_end = R.window_end;");
    CHECK(j == NULL && strstr(errbuf, "STATE_TTL: this join is a window join") != NULL);
    json_decref(j);
}

SL_TEST_MAIN(SL_TEST(test_parse_over_and_filter), SL_TEST(test_plan_topn), SL_TEST(test_plan_window_join),
             SL_TEST(test_plan_window_join_errors), SL_TEST(test_plan_session_and_proctime_tvf_rows),
             SL_TEST(test_plan_window_topn), SL_TEST(test_plan_topn_errors), SL_TEST(test_plan_topn_range), SL_TEST(test_plan_dedup),
             SL_TEST(test_plan_distinct_filter))
