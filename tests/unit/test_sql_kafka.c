/*
 * test_sql_kafka.c -- the SQL face of the Kafka connector without a broker:
 * METADATA columns (the grammar, the catalog's checks, DESCRIBE, the
 * source's schema and the sink's "metadata" option) and the reading of
 * upsert-kafka tables (the changelog-normalize step the planner puts after
 * the source, hashed on the primary key). Every job the planner makes is
 * also parsed as a job graph, so each operator's plan() accepts it.
 * Expected configurations and messages are written out by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobgraph.h"
#include "operator.h"
#include "sl_test.h"
#include "parse.h"
#include "sql.h"
#include "sql_run.h"

static char graph_err[512];

/* A result: its text or job, or "OK"; a job that sl_jobgraph_parse refuses
 * gives "GRAPH: <why>". */
static void graph_result(const sl_sql_result *r, char *out, size_t cap)
{
    if (r->kind == SL_SQL_TEXT) snprintf(out, cap, "%s", r->text);
    else if (r->kind == SL_SQL_JOB) snprintf(out, cap, "%s", r->job);
    else snprintf(out, cap, "OK");
    if (r->job) {
        sl_jobgraph *g = sl_jobgraph_parse(r->job, strlen(r->job), 2, 0, graph_err,
                                           sizeof graph_err);
        if (!g) snprintf(out, cap, "GRAPH: %s", graph_err);
        sl_jobgraph_destroy(g);
    }
}

static const char *run(sl_sql_session *s, const char *script)
{
    static char out[65536];
    return sql_run_script(s, script, out, sizeof out, graph_result);
}

#define KAFKA_WITH(topic)                                                                     \
    "'connector' = 'kafka', 'topic' = '" topic "', 'properties.bootstrap.servers' = "          \
    "'127.0.0.1:9', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset'"

static const char *TABLES =
    "CREATE TABLE src (id BIGINT, name STRING,\n"
    "  `offset` BIGINT METADATA VIRTUAL,\n"
    "  part INT METADATA FROM 'partition' VIRTUAL,\n"
    "  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',\n"
    "  tp STRING METADATA FROM 'topic' VIRTUAL,\n"
    "  hdrs MAP<STRING, BYTES> METADATA FROM 'headers'\n"
    ") WITH (" KAFKA_WITH("in") ");\n"
    "CREATE TABLE dst (id BIGINT, name STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',\n"
    "  headers MAP<STRING, BYTES> METADATA, `offset` BIGINT METADATA VIRTUAL\n"
    ") WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9', 'format' = 'json');\n"
    "CREATE TABLE ups (k BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ("
    "'connector' = 'upsert-kafka', 'topic' = 'u', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9', 'key.format' = 'json', 'value.format' = 'json');\n"
    "CREATE TABLE ups_out (k BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ("
    "'connector' = 'upsert-kafka', 'topic' = 'u2', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9', 'key.format' = 'json', 'value.format' = 'json');\n"
    "CREATE TABLE counts (v STRING, n BIGINT, PRIMARY KEY (v) NOT ENFORCED) WITH ("
    "'connector' = 'upsert-kafka', 'topic' = 'c', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9', 'key.format' = 'json', 'value.format' = 'json');\n"
    "CREATE TABLE bh (id BIGINT, o BIGINT, part INT, ts TIMESTAMP(3), tp STRING, h STRING) "
    "WITH ('connector' = 'blackhole');\n";

static sl_sql_session *session(void)
{
    sl_sql_session *s = sl_sql_session_new();
    const char *r = run(s, TABLES);
    if (strcmp(r, "OK")) fprintf(stderr, "setup: %s\n", r);
    return s;
}

/* The vertex of type `type` in job text j, compact JSON of `field` (static). */
static const char *vertex_field(const char *j, const char *type, const char *field)
{
    static char out[4096];
    snprintf(out, sizeof out, "(no %s vertex)", type);
    json_t *job = json_loads(j, 0, NULL);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(job, "vertices"), i, v) {
        if (strcmp(json_string_value(json_object_get(v, "type")), type)) continue;
        char *d = json_dumps(json_object_get(v, field), JSON_COMPACT | JSON_PRESERVE_ORDER |
                                                            JSON_ENCODE_ANY);
        snprintf(out, sizeof out, "%s", d ? d : "null");
        free(d);
        break;
    }
    json_decref(job);
    return out;
}

static void test_metadata_describe(void)
{
    sl_sql_session *s = session();
    const char *d = run(s, "DESCRIBE src;");
    CHECK(strstr(d, "| offset |             BIGINT | TRUE |") != NULL);
    CHECK(strstr(d, "METADATA FROM 'offset' VIRTUAL") != NULL);
    CHECK(strstr(d, "METADATA FROM 'partition' VIRTUAL") != NULL);
    CHECK(strstr(d, "METADATA FROM 'timestamp' ") != NULL);
    CHECK(strstr(d, "| MAP<STRING, BYTES> ") != NULL);
    /* METADATA and VIRTUAL stay usable as names */
    CHECK_EQ_STR(run(s, "CREATE TABLE m (metadata INT, virtual STRING) WITH ('connector' = "
                        "'datagen');"), "OK");
    sl_sql_session_destroy(s);
}

static void test_metadata_source_plan(void)
{
    sl_sql_session *s = session();
    const char *j = run(s, "INSERT INTO bh SELECT id, `offset`, part, ts, tp, hdrs FROM src;");
    CHECK(strncmp(j, "ERR", 3) && strncmp(j, "GRAPH", 5));
    CHECK_EQ_STR(vertex_field(j, "kafka", "schema"),
                 "[{\"name\":\"id\",\"type\":\"BIGINT\"},{\"name\":\"name\",\"type\":\"STRING\"},"
                 "{\"name\":\"offset\",\"type\":\"BIGINT\",\"metadata\":\"offset\"},"
                 "{\"name\":\"part\",\"type\":\"INT\",\"metadata\":\"partition\"},"
                 "{\"name\":\"ts\",\"type\":\"TIMESTAMP_LTZ(3)\",\"metadata\":\"timestamp\"},"
                 "{\"name\":\"tp\",\"type\":\"STRING\",\"metadata\":\"topic\"},"
                 "{\"name\":\"hdrs\",\"type\":\"STRING\",\"metadata\":\"headers\"}]");
    sl_sql_session_destroy(s);
}

static void test_metadata_sink_plan(void)
{
    sl_sql_session *s = session();
    /* the sink's columns: physical and writable metadata; `offset` is VIRTUAL */
    const char *j = run(s, "INSERT INTO dst SELECT id, name, ts, hdrs FROM src;");
    CHECK(strncmp(j, "ERR", 3) && strncmp(j, "GRAPH", 5));
    CHECK_EQ_STR(vertex_field(j, "kafka-sink", "config"),
                 "{\"topic\":\"out\",\"properties.bootstrap.servers\":\"127.0.0.1:9\","
                 "\"format\":\"json\",\"metadata.timestamp\":\"ts\",\"metadata.headers\":\"headers\"}");
    CHECK_EQ_STR(run(s, "INSERT INTO dst SELECT id, name FROM src;"),
                 "ERR: line 1, column 17: INSERT INTO dst: the query gives 2 columns, the table "
                 "has 4 (id, name, ts, headers)");
    /* a read-only key that is not VIRTUAL cannot be written */
    CHECK_EQ_STR(run(s, "CREATE TABLE w (id BIGINT, p INT METADATA FROM 'partition') WITH ("
                        KAFKA_WITH("w") ");"), "OK");
    CHECK_EQ_STR(run(s, "INSERT INTO w SELECT id, 1 FROM src;"),
                 "ERR: line 1, column 1: Invalid metadata key 'partition' in column 'p' of table "
                 "'w'. The kafka connector supports the following metadata keys for writing: "
                 "headers, timestamp (declare the column VIRTUAL to only read it)");
    /* ... but it can be read */
    j = run(s, "INSERT INTO bh SELECT id, 0, p, CAST(NULL AS TIMESTAMP(3)), '', '' FROM w;");
    CHECK(strncmp(j, "ERR", 3) && strncmp(j, "GRAPH", 5));
    sl_sql_session_destroy(s);
}

static void test_metadata_errors(void)
{
    sl_sql_session *s = session();
    CHECK_EQ_STR(run(s, "CREATE TABLE e1 (id BIGINT, x BIGINT METADATA FROM 'offsett') WITH ("
                        KAFKA_WITH("e") ");"),
                 "ERR: line 1, column 29: Invalid metadata key 'offsett' in column 'x' of table "
                 "'e1'. The kafka connector supports the following metadata keys for reading: "
                 "topic, partition, headers, offset, timestamp (and for writing: headers, "
                 "timestamp)");
    CHECK_EQ_STR(run(s, "CREATE TABLE e2 (id BIGINT, leader INT METADATA FROM 'leader-epoch') "
                        "WITH (" KAFKA_WITH("e") ");"),
                 "ERR: line 1, column 29: Invalid metadata key 'leader-epoch' in column 'leader' "
                 "of table 'e2'. The kafka connector supports the following metadata keys for "
                 "reading: topic, partition, headers, offset, timestamp (and for writing: "
                 "headers, timestamp)");
    CHECK_EQ_STR(run(s, "CREATE TABLE e3 (id BIGINT, `offset` STRING METADATA VIRTUAL) WITH ("
                        KAFKA_WITH("e") ");"),
                 "ERR: line 1, column 29: table 'e3': metadata column 'offset' ('offset') must "
                 "be BIGINT, not STRING");
    CHECK_EQ_STR(run(s, "CREATE TABLE e4 (id BIGINT, h MAP<STRING, STRING> METADATA FROM "
                        "'headers') WITH (" KAFKA_WITH("e") ");"),
                 "ERR: line 1, column 29: table 'e4': metadata column 'h' ('headers') must be "
                 "MAP<STRING, BYTES> (or STRING: its JSON text), not MAP<STRING, STRING>");
    CHECK_EQ_STR(run(s, "CREATE TABLE e5 (id BIGINT, m MAP<STRING, BYTES>) WITH ("
                        KAFKA_WITH("e") ");"),
                 "OK"); /* a MAP column of its own (the json format reads objects into it) */
    CHECK_EQ_STR(run(s, "CREATE TABLE e6 (id BIGINT, o BIGINT METADATA FROM 'offset') WITH ("
                        "'connector' = 'datagen');"),
                 "ERR: line 1, column 29: table 'e6': column 'o' is a METADATA column, but "
                 "connector 'datagen' has no metadata (kafka and upsert-kafka have)");
    CHECK_EQ_STR(run(s, "CREATE TABLE e7 (t STRING METADATA FROM 'topic', v STRING, PRIMARY KEY "
                        "(t) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'x', "
                        "'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', "
                        "'value.format' = 'json');"),
                 "ERR: line 1, column 18: table 'e7': PRIMARY KEY column 't' is a METADATA "
                 "column; the key is made of physical columns");
    CHECK_EQ_STR(run(s, "CREATE TABLE e8 (id BIGINT, x BIGINT METADATA FROM offset) WITH ("
                        KAFKA_WITH("e") ");"),
                 "ERR: line 1, column 52: unexpected 'offset', expected a string literal");
    sl_sql_session_destroy(s);
}

static void test_upsert_read_plan(void)
{
    sl_sql_session *s = session();
    const char *j = run(s, "INSERT INTO ups_out SELECT k, v FROM ups;");
    CHECK(strncmp(j, "ERR", 3) && strncmp(j, "GRAPH", 5));
    CHECK_EQ_STR(vertex_field(j, "changelog-normalize", "config"), "{\"key\":[\"k\"]}");
    CHECK_EQ_STR(vertex_field(j, "changelog-normalize", "uid"), "\"normalize-ups\"");
    json_t *job = json_loads(j, 0, NULL);
    size_t i;
    json_t *e;
    int hashed = 0;
    json_array_foreach(json_object_get(job, "edges"), i, e)
        if (!strcmp(json_string_value(json_object_get(e, "from")), "ups") &&
            !strcmp(json_string_value(json_object_get(e, "to")), "ups-normalize") &&
            !strcmp(json_string_value(json_object_get(e, "strategy")), "hash"))
            hashed = 1;
    json_decref(job);
    CHECK(hashed);
    /* a GROUP BY over it retracts */
    j = run(s, "INSERT INTO counts SELECT v, COUNT(*) FROM ups GROUP BY v;");
    CHECK(strncmp(j, "ERR", 3) && strncmp(j, "GRAPH", 5));
    CHECK(strstr(vertex_field(j, "group_aggregate", "config"),
                 "\"input-changelog\":\"retract\"") != NULL);
    /* an updating query into the append-only kafka sink is still refused */
    static const char refused[] = "ERR: line 1, column 1: Table sink 'dst' doesn't support "
                                  "consuming update and delete changes which is produced by "
                                  "table 'ups' (connector 'upsert-kafka')";
    CHECK(!strncmp(run(s, "INSERT INTO dst SELECT k, v, CAST(NULL AS TIMESTAMP(3)), "
                          "CAST(NULL AS STRING) FROM ups;"), refused, strlen(refused)));
    /* with a state TTL the normalization keeps state that long */
    CHECK_EQ_STR(run(s, "SET 'table.exec.state.ttl' = '1 h';"), "OK");
    j = run(s, "INSERT INTO ups_out SELECT k, v FROM ups;");
    CHECK_EQ_STR(vertex_field(j, "changelog-normalize", "config"),
                 "{\"key\":[\"k\"],\"table.exec.state.ttl\":\"1 h\"}");
    sl_sql_session_destroy(s);
}

/* Idle sources: Flink's scan.watermark.idle-timeout on the table, else
 * table.exec.source.idle-timeout of the session, into the source's own
 * per-partition watermarks (or a datagen table's watermark vertex). */
static void test_idle_timeout(void)
{
    sl_sql_session *s = session();
    CHECK_EQ_STR(run(s, "CREATE TABLE w1 (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
                        "INTERVAL '2' SECOND) WITH (" KAFKA_WITH("w")
                        ", 'scan.watermark.idle-timeout' = '5 s');"), "OK");
    CHECK_EQ_STR(run(s, "CREATE TABLE w2 (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                        "WITH (" KAFKA_WITH("w") ");"), "OK");
    CHECK_EQ_STR(run(s, "CREATE TABLE g (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                        "WITH ('connector' = 'datagen');"), "OK");
    CHECK_EQ_STR(run(s, "CREATE TABLE out2 (id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = "
                        "'blackhole');"), "OK");
    const char *j = run(s, "INSERT INTO out2 SELECT id, ts FROM w1;");
    CHECK_EQ_STR(vertex_field(j, "kafka", "config"),
                 "{\"topic\":\"w\",\"properties.bootstrap.servers\":\"127.0.0.1:9\","
                 "\"format\":\"json\",\"scan.startup.mode\":\"earliest-offset\","
                 "\"watermark.column\":\"ts\",\"watermark.delay\":\"2000 ms\","
                 "\"watermark.rule\":\"sql\",\"watermark.idle-timeout\":\"5 s\"}");
    j = run(s, "INSERT INTO out2 SELECT id, ts FROM w2;");
    CHECK(strstr(vertex_field(j, "kafka", "config"), "idle-timeout") == NULL);
    CHECK_EQ_STR(run(s, "SET 'table.exec.source.idle-timeout' = '3 s';"), "OK");
    CHECK_EQ_STR(run(s, "SET 'pipeline.auto-watermark-interval' = '50 ms';"), "OK");
    j = run(s, "INSERT INTO out2 SELECT id, ts FROM w2;");
    CHECK(strstr(vertex_field(j, "kafka", "config"),
                 "\"watermark.idle-timeout\":\"3 s\",\"watermark.interval\":\"50 ms\"") != NULL);
    j = run(s, "INSERT INTO out2 SELECT id, ts FROM w1;"); /* the table's own wins */
    CHECK(strstr(vertex_field(j, "kafka", "config"), "\"watermark.idle-timeout\":\"5 s\""));
    j = run(s, "INSERT INTO out2 SELECT id, ts FROM g;");
    CHECK_EQ_STR(vertex_field(j, "watermark", "config"),
                 "{\"column\":\"ts\",\"delay\":\"0 ms\",\"rule\":\"sql\",\"interval\":\"50 ms\","
                 "\"idle-timeout\":\"3 s\"}");
    sl_sql_session_destroy(s);
}

SL_TEST_MAIN(SL_TEST(test_metadata_describe), SL_TEST(test_metadata_source_plan),
             SL_TEST(test_metadata_sink_plan), SL_TEST(test_metadata_errors),
             SL_TEST(test_upsert_read_plan), SL_TEST(test_idle_timeout))
