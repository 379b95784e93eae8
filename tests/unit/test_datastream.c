/*
 * test_datastream.c -- the DataStream builder (api/datastream.c): the job
 * graph it writes parses and plans as the JobManager would, its mistakes
 * are reported once with what was wrong; and sl_row_key_decode inverts
 * sl_row_key_encode for every type.
 */
#include <stdlib.h>
#include <string.h>

#include "sl_test.h"
#include "datastream.h"
#include <jansson.h>

static void test_builder_graph_plans(void)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, "/opt/job.so");
    sl_ds_set_parallelism(env, 2);
    const char *gopt[] = {"fields.id.kind", "sequence", "fields.id.start", "1", "fields.id.end", "9", NULL};
    sl_ds_stream *g = sl_ds_source(env, "gen", "datagen", "id BIGINT, ts TIMESTAMP(3)", gopt);
    const char *proj[] = {"id", "id % 3 AS k", "ts", NULL};
    sl_ds_stream *m = sl_ds_map(g, "m", proj);
    sl_ds_stream *w = sl_ds_watermarks(m, "wm", "ts", "1 s", "5 s");
    const char *keys[] = {"k", NULL};
    const char *sides[] = {"late", NULL, "odd", "id BIGINT", NULL};
    sl_ds_stream *p = sl_ds_process(sl_ds_key_by(w, keys), "p", "fn", "k BIGINT, n BIGINT", sides);
    sl_ds_uid(p, "the-process");
    sl_ds_sink(p, "out", "print", NULL);
    sl_ds_sink(sl_ds_side_output(p, "odd"), "odd_out", "blackhole", NULL);
    char err[400];
    char *json = sl_ds_to_json(env, err, sizeof err);
    CHECK(json != NULL);
    sl_jobgraph *gr = json ? sl_jobgraph_parse(json, strlen(json), 1, 0, err, sizeof err) : NULL;
    if (!gr) fprintf(stderr, "  %s\n", err);
    CHECK(gr != NULL);
    if (gr) {
        const sl_vertex *pv = NULL;
        for (int i = 0; i < gr->nv; i++)
            if (!strcmp(gr->v[i].id, "p")) pv = &gr->v[i];
        CHECK(pv && !strcmp(pv->type, "keyed_process") && !strcmp(pv->uid, "the-process"));
        CHECK(pv && pv->pc->nkeys[0] == 1 && pv->pc->nout == 3);
        CHECK(pv && !strcmp(pv->pc->outputs[2].name, "odd") && pv->pc->outputs[2].schema.n == 1);
        CHECK(pv && pv->pc->outputs[1].schema.n == 3); /* "late": the input's columns */
        sl_jobgraph_destroy(gr);
    }
    free(json);
    sl_ds_env_free(env);
}

static void test_builder_reports_the_first_mistake(void)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_stream *g = sl_ds_source(env, "gen", "datagen", "id BIGNUM", NULL);
    sl_ds_map(g, "gen", NULL); /* the id again */
    char err[400];
    CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "source 'gen': schema must read \"name TYPE, name TYPE\"");
    sl_ds_env_free(env);
    env = sl_ds_env_new("t");
    g = sl_ds_source(env, "gen", "datagen", "id BIGINT", NULL);
    sl_ds_process(g, "p", "fn", "id BIGINT", NULL); /* no library set */
    CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
    CHECK(strstr(err, "process 'p': no library") != NULL);
    sl_ds_env_free(env);
}

/* The C pattern's negative elements: their refusals come out of the
 * builder; a valid pattern writes `!name` for not_next and a "skip-unless"
 * for followed_by and not_followed_by. */
static void test_cep_negations(void)
{
    static const struct {
        int kind; /* 0: a quantifier on not_next, 1: next after not_followed_by, 2: ends with it
                   * without within, 3: a negation after an optional element */
        const char *want;
    } bad[] = {{0, "cep 'c': times of 'b': Option not applicable to NOT pattern"},
               {1, "cep 'c': 'd' follows a not_followed_by element: it must be followed_by or "
                   "followed_by_any"},
               {2, "cep 'c': NotFollowedBy is not supported without windowTime as a last part of "
                   "a Pattern!"},
               {3, "cep 'c': 'b': Specifying a pattern with an optional path to NOT condition is not "
                   "supported yet."}};
    const char *keys[] = {"id", NULL};
    char err[400];
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++) {
        sl_ds_env *env = sl_ds_env_new("t");
        sl_ds_set_library(env, "/opt/job.so");
        sl_ds_stream *g = sl_ds_source(env, "gen", "datagen", "id BIGINT", NULL);
        sl_cep_pattern *p = sl_cep_begin("a");
        if (bad[i].kind == 0) p = sl_cep_next(sl_cep_times(sl_cep_not_next(p, "b"), 1, 3), "d");
        if (bad[i].kind == 1) p = sl_cep_next(sl_cep_not_followed_by(p, "b"), "d");
        if (bad[i].kind == 2) p = sl_cep_not_followed_by(p, "b");
        if (bad[i].kind == 3)
            p = sl_cep_next(sl_cep_not_next(sl_cep_optional(sl_cep_next(p, "x")), "b"), "d");
        sl_ds_cep(sl_ds_key_by(g, keys), "c", p, "fns", "id BIGINT", NULL);
        sl_cep_pattern_free(p);
        CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
        if (strcmp(err, bad[i].want)) fprintf(stderr, "  got '%s'\n  want '%s'\n", err, bad[i].want);
        CHECK_EQ_STR(err, bad[i].want);
        sl_ds_env_free(env);
    }
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, "/opt/job.so");
    sl_ds_stream *g = sl_ds_source(env, "gen", "datagen", "id BIGINT", NULL);
    sl_cep_pattern *p = sl_cep_not_next(sl_cep_begin("a"), "b");
    p = sl_cep_followed_by(sl_cep_not_followed_by(p, "c"), "d");
    p = sl_cep_followed_by_any(p, "e");
    p = sl_cep_not_next(sl_cep_followed_by(p, "f"), "g");
    p = sl_cep_within(sl_cep_not_followed_by(p, "h"), 1000);
    sl_ds_cep(sl_ds_key_by(g, keys), "c", p, "fns", "id BIGINT", NULL);
    sl_cep_pattern_free(p);
    char *json = sl_ds_to_json(env, err, sizeof err);
    CHECK(json != NULL);
    if (json) {
        json_t *j = json_loads(json, 0, NULL), *v;
        size_t k;
        json_array_foreach(json_object_get(j, "vertices"), k, v) {
            if (strcmp(json_string_value(json_object_get(v, "type")), "match_recognize")) continue;
            json_t *cfg = json_object_get(v, "config");
            if (!cfg) cfg = v;
            CHECK_EQ_STR(json_string_value(json_object_get(cfg, "pattern")),
                         "`a` !`b` __skip3*? `d` __skip4*? `e` __skip5*? `f` !`g` __skip8* $");
            char *u = json_dumps(json_object_get(cfg, "skip-unless"), JSON_COMPACT);
            CHECK_EQ_STR(u, "[[\"__skip3\",\"c\",\"d\"],[\"__skip5\",\"f\"],[\"__skip8\",\"h\"]]");
            free(u);
        }
        json_decref(j);
    }
    free(json);
    sl_ds_env_free(env);
}

/* The graph parsed, or NULL with the reason printed. */
static sl_jobgraph *parse_env(sl_ds_env *env, char *err, size_t errlen)
{
    char *json = sl_ds_to_json(env, err, errlen);
    if (!json) {
        fprintf(stderr, "  %s\n", err);
        return NULL;
    }
    sl_jobgraph *g = sl_jobgraph_parse(json, strlen(json), 1, 0, err, errlen);
    if (!g) fprintf(stderr, "  %s\n", err);
    free(json);
    return g;
}

static const sl_vertex *vertex_of_type(const sl_jobgraph *g, const char *type)
{
    for (int i = 0; i < g->nv; i++)
        if (!strcmp(g->v[i].type, type)) return &g->v[i];
    return NULL;
}

/* fromDataStream with an explicit schema (a computed column and a
 * watermark), a TUMBLE query, toDataStream into a process function: one
 * graph, the SQL vertices reading the C vertex, the window's output columns
 * what the process function gets. */
static void test_bridge_from_and_to_data_stream(void)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, "/opt/job.so");
    sl_ds_stream *g = sl_ds_source(env, "gen", "datagen", "id BIGINT, ts TIMESTAMP(3)", NULL);
    sl_ds_stream *p = sl_ds_process(g, "parse", "parser", "user_id STRING, ts TIMESTAMP(3)", NULL);
    sl_ds_from_data_stream(p, "clicks", "user_id STRING, ts TIMESTAMP(3), u AS UPPER(user_id), "
                                        "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND");
    sl_ds_stream *w = sl_ds_to_data_stream(
        env, "SELECT u, window_start, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE clicks, "
             "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY u, window_start, window_end");
    CHECK(w != NULL);
    const char *keys[] = {"u", NULL};
    sl_ds_stream *a = sl_ds_process(sl_ds_key_by(w, keys), "detect", "detector", "u STRING", NULL);
    sl_ds_sink(a, "out", "print", NULL);
    char err[600];
    sl_jobgraph *gr = parse_env(env, err, sizeof err);
    CHECK(gr != NULL);
    if (gr) {
        const sl_vertex *wm = vertex_of_type(gr, "watermark"), *win = vertex_of_type(gr, "window");
        const sl_vertex *det = NULL;
        for (int i = 0; i < gr->nv; i++)
            if (!strcmp(gr->v[i].id, "detect")) det = &gr->v[i];
        CHECK(wm && win && det);
        CHECK(vertex_of_type(gr, "datagen") == &gr->v[0]); /* no source added for the stream */
        /* the table's first vertex (a calc for the computed column) reads "parse" */
        int reads_parse = 0;
        for (int i = 0; i < gr->ne; i++)
            reads_parse += !strcmp(gr->v[gr->e[i].from].id, "parse");
        CHECK_EQ_INT(reads_parse, 1);
        CHECK(det && det->in[0].n == 3 && !strcmp(det->in[0].fields[0].name, "u") &&
              det->in[0].fields[2].type == SL_T_BIGINT);
        sl_jobgraph_destroy(gr);
    }
    sl_ds_env_free(env);
}

/* The stream's schema and event time without an explicit schema; an
 * updating query refused by toDataStream naming the operator, accepted by
 * toChangelogStream; a schema that declares other columns than the
 * stream's refused. */
static void test_bridge_refusals_and_changelog(void)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_stream *g = sl_ds_source(env, "gen", "datagen", "k STRING, ts TIMESTAMP(3)", NULL);
    sl_ds_stream *w = sl_ds_watermarks(g, "wm", "ts", "1 s", NULL);
    sl_ds_from_data_stream(sl_ds_filter(w, "f", "k <> 'x'"), "events", NULL);
    /* the rowtime came with the stream: TUMBLE works without a WATERMARK */
    sl_ds_stream *t = sl_ds_to_data_stream(env, "SELECT k, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE "
                                                "events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
                                                "GROUP BY k, window_start, window_end");
    CHECK(t != NULL);
    sl_ds_sink(t, "windows", "blackhole", NULL);
    sl_ds_stream *c = sl_ds_to_changelog_stream(env, "SELECT k, COUNT(*) AS n FROM events GROUP BY k");
    CHECK(c != NULL);
    sl_ds_sink(c, "out", "print", NULL);
    char err[600];
    sl_jobgraph *gr = parse_env(env, err, sizeof err);
    CHECK(gr != NULL);
    if (gr) {
        CHECK(vertex_of_type(gr, "window") && vertex_of_type(gr, "group_aggregate"));
        sl_jobgraph_destroy(gr);
    }
    CHECK(sl_ds_to_data_stream(env, "SELECT k, COUNT(*) AS n FROM events GROUP BY k") == NULL);
    CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
    CHECK(strstr(err, "toDataStream: Table sink '*anonymous_datastream_sink$3*' doesn't support "
                      "consuming update changes which is produced by group_aggregate") != NULL);
    sl_ds_env_free(env);

    env = sl_ds_env_new("t");
    g = sl_ds_source(env, "gen", "datagen", "k STRING, ts TIMESTAMP(3)", NULL);
    sl_ds_from_data_stream(g, "events", "k STRING, ts BIGINT");
    CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "fromDataStream 'events': physical column 2 is declared 'ts' BIGINT but "
                      "the stream's is 'ts' TIMESTAMP(3) (declare the stream's columns in "
                      "order, or none)");
    sl_ds_env_free(env);

    env = sl_ds_env_new("t");
    g = sl_ds_source(env, "gen", "datagen", "k STRING, ts TIMESTAMP(3)", NULL);
    sl_ds_from_data_stream(g, "events", "WATERMARK FOR k AS k");
    CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
    CHECK(strstr(err, "fromDataStream 'events': ") == err && strstr(err, "TIMESTAMP(3)"));
    sl_ds_env_free(env);

    /* a schema that tries to close the column list and name a connector */
    const char *hostile[] = {"k2 AS k) WITH ('connector' = 'datagen') --",
                             "k2 AS k) WITH ('connector' = 'datastream', 'vertex' = 'gen', 'x' = 'y') --",
                             "k2 AS k -- the rest is a comment"};
    for (int i = 0; i < 3; i++) {
        env = sl_ds_env_new("t");
        g = sl_ds_source(env, "gen", "datagen", "k STRING", NULL);
        sl_ds_from_data_stream(g, "events", hostile[i]);
        sl_ds_stream *q = sl_ds_to_data_stream(env, "SELECT k2 FROM events");
        if (q) sl_ds_sink(q, "out", "blackhole", NULL);
        char *json = sl_ds_to_json(env, err, sizeof err);
        CHECK(i == 2 ? json != NULL : json == NULL); /* the comment ends at the line */
        if (i < 2) CHECK(strstr(err, "fromDataStream 'events': ") == err); /* refused, not obeyed */
        free(json);
        sl_ds_env_free(env);
    }

    env = sl_ds_env_new("t");
    g = sl_ds_source(env, "gen", "datagen", "k STRING", NULL);
    sl_ds_from_data_stream(g, "events", NULL);
    CHECK_EQ_INT(sl_ds_sql(env, "INSERT INTO events SELECT * FROM events"), SL_ERR);
    CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
    CHECK(strstr(err, "sl_ds_sql: ") == err);
    sl_ds_env_free(env);
}

static void test_key_decode_round_trip(void)
{
    sl_schema s;
    sl_schema_init(&s);
    sl_schema_add(&s, "b", SL_T_BOOLEAN);
    sl_schema_add(&s, "i", SL_T_INT);
    sl_schema_add(&s, "l", SL_T_BIGINT);
    sl_schema_add(&s, "d", SL_T_DOUBLE);
    sl_schema_add(&s, "s", SL_T_STRING);
    sl_schema_add(&s, "t", SL_T_TIMESTAMP);
    sl_value v[6] = {{.v.i = 1}, {.v.i = -7}, {.isnull = true}, {.v.d = 2.5},
                     {.v.s = {"hello", 5}}, {.v.i = 1767225600000}};
    sl_row r = {SL_KIND_INSERT, 6, v, 0};
    int keys[] = {4, 0, 1, 2, 3, 5};
    uint8_t buf[256];
    size_t n = sl_row_key_encode(&r, &s, keys, 6, buf, sizeof buf);
    CHECK(n > 0);
    sl_value out[6];
    CHECK_EQ_INT(sl_row_key_decode(buf, n, &s, keys, 6, out), SL_OK);
    CHECK(out[0].v.s.len == 5 && !memcmp(out[0].v.s.p, "hello", 5));
    CHECK(out[1].v.i == 1 && out[2].v.i == -7 && out[3].isnull && out[4].v.d == 2.5);
    CHECK(out[5].v.i == 1767225600000);
    CHECK_EQ_INT(sl_row_key_decode(buf, n - 1, &s, keys, 6, out), SL_ERR); /* truncated */
    CHECK_EQ_INT(sl_row_key_decode(buf, n, &s, keys, 5, out), SL_ERR);     /* bytes left over */
    sl_schema_free(&s);
}

SL_TEST_MAIN(SL_TEST(test_builder_graph_plans), SL_TEST(test_builder_reports_the_first_mistake),
             SL_TEST(test_cep_negations),
             SL_TEST(test_bridge_from_and_to_data_stream), SL_TEST(test_bridge_refusals_and_changelog),
             SL_TEST(test_key_decode_round_trip))
