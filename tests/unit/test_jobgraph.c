/* Unit tests for job-graph parsing, validation and chaining (core/jobgraph.c). */
#include "sl_test.h"
#include "jobgraph.h"

static const char *GOOD =
    "{\"name\": \"t\", \"parallelism\": 2, \"vertices\": ["
    " {\"id\": \"gen\", \"type\": \"datagen\", \"parallelism\": 1,"
    "  \"schema\": [{\"name\": \"id\", \"type\": \"BIGINT\"}],"
    "  \"config\": {\"fields.id.kind\": \"sequence\", \"fields.id.start\": \"1\", \"fields.id.end\": \"9\"}},"
    " {\"id\": \"calc\", \"type\": \"calc\", \"config\": {\"projection\": [\"id\", \"id % 5 AS k\"]}},"
    " {\"id\": \"agg\", \"uid\": \"agg-v1\", \"type\": \"group_aggregate\","
    "  \"config\": {\"group-by\": [\"k\"], \"aggregates\": [\"COUNT(*) AS c\"]}},"
    " {\"id\": \"out\", \"type\": \"print\"}],"
    " \"edges\": [{\"from\": \"gen\", \"to\": \"calc\", \"strategy\": \"rebalance\"},"
    "  {\"from\": \"calc\", \"to\": \"agg\", \"strategy\": \"hash\", \"keys\": [\"k\"]},"
    "  {\"from\": \"agg\", \"to\": \"out\"}]}";

static void test_parse_schemas_chains_and_defaults(void)
{
    char err[512] = "";
    sl_jobgraph *g = sl_jobgraph_parse(GOOD, strlen(GOOD), 1, 0, err, sizeof err);
    if (!g) fprintf(stderr, "%s\n", err);
    CHECK(g != NULL);
    CHECK_EQ_INT(g->nv, 4);
    CHECK_EQ_INT(g->parallelism, 2);
    CHECK_EQ_INT(g->max_vertex_parallelism, 2);
    CHECK_EQ_INT(g->max_parallelism, 128); /* min(max(roundUp(2 + 1), 128), 32768) */
    /* schemas flow: calc's output is id, k; agg adds c */
    const sl_vertex *agg = &g->v[2];
    CHECK_EQ_INT(agg->in[0].n, 2);
    CHECK_EQ_STR(agg->in[0].fields[1].name, "k");
    CHECK_EQ_INT(agg->out.n, 2);
    CHECK_EQ_STR(agg->out.fields[1].name, "c");
    CHECK_EQ_STR(agg->uid, "agg-v1");
    CHECK_EQ_STR(g->v[1].uid, "calc"); /* uid defaults to id */
    /* the default strategy between equal parallelisms is forward: agg -> out chains */
    CHECK_EQ_INT(g->e[2].strategy, SL_PART_FORWARD);
    CHECK_EQ_INT(g->nchains, 3);
    CHECK_EQ_STR(g->chains[g->v[3].chain].name, "agg -> out");
    CHECK_EQ_INT(g->v[3].chain_pos, 1);
    CHECK_EQ_INT(g->e[1].nkeys, 1);
    CHECK_EQ_INT(g->e[1].keys[0], 1);
    /* chain ids are 32 hex and stable for the same head uid */
    CHECK_EQ_INT(strlen(g->chains[0].id), 32);
    char *dump = sl_jobgraph_dump(g);
    sl_jobgraph *g2 = sl_jobgraph_parse(dump, strlen(dump), 1, 0, err, sizeof err);
    CHECK(g2 != NULL);
    for (int c = 0; c < g->nchains; c++) CHECK_EQ_STR(g->chains[c].id, g2->chains[c].id);
    CHECK_EQ_INT(g2->max_parallelism, 128);
    free(dump);
    sl_jobgraph_destroy(g2);
    sl_jobgraph_destroy(g);
}

static void test_override_parallelism(void)
{
    char err[512];
    sl_jobgraph *g = sl_jobgraph_parse(GOOD, strlen(GOOD), 1, 4, err, sizeof err);
    CHECK(g != NULL);
    CHECK_EQ_INT(g->v[0].parallelism, 1); /* pinned */
    CHECK_EQ_INT(g->v[1].parallelism, 4);
    CHECK_EQ_INT(g->max_vertex_parallelism, 4);
    CHECK_EQ_INT(g->max_parallelism, 128);
    sl_jobgraph_destroy(g);
}

/* Parsing `json` fails with a message containing `needle`. */
static int fails(const char *json, const char *needle)
{
    char err[512] = "";
    sl_jobgraph *g = sl_jobgraph_parse(json, strlen(json), 1, 0, err, sizeof err);
    if (g || !strstr(err, needle)) {
        fprintf(stderr, "for %s\n  got '%s', wanted '%s'\n", json, g ? "(accepted)" : err, needle);
        sl_jobgraph_destroy(g);
        return 0;
    }
    return 1;
}

#define SRC "{\"id\": \"g\", \"type\": \"datagen\", \"schema\": [{\"name\": \"x\", \"type\": \"INT\"}]}"

static void test_errors_name_the_problem(void)
{
    CHECK(fails("", "not valid JSON"));
    CHECK(fails("{\"vertices\": [" SRC "], \"bogus\": 1}", "job: unknown field 'bogus'"));
    CHECK(fails("{\"parallelism\": 0, \"vertices\": [" SRC "]}", "'parallelism' must be between 1 and 32768"));
    CHECK(fails("{\"vertices\": [" SRC ", " SRC "]}", "vertex 'g': duplicate id"));
    CHECK(fails("{\"vertices\": [{\"id\": \"a b\", \"type\": \"print\"}]}", "may only use letters"));
    CHECK(fails("{\"vertices\": [{\"id\": \"g\", \"type\": \"datagen\", \"schema\": [{\"name\": \"x\", \"type\": \"FLOATY\"}]}]}",
                "vertex 'g': schema field 'x': unknown type 'FLOATY'"));
    CHECK(fails("{\"vertices\": [" SRC ", {\"id\": \"p\", \"type\": \"print\"}],"
                " \"edges\": [{\"from\": \"g\", \"to\": \"p\", \"strategy\": \"sideways\"}]}",
                "strategy must be forward, rebalance, hash or broadcast"));
    CHECK(fails("{\"vertices\": [" SRC ", {\"id\": \"p\", \"type\": \"print\"}],"
                " \"edges\": [{\"from\": \"g\", \"to\": \"p\", \"strategy\": \"rebalance\", \"keys\": [\"x\"]}]}",
                "'keys' only applies to the hash strategy"));
    CHECK(fails("{\"vertices\": [" SRC ", {\"id\": \"p\", \"type\": \"print\"}],"
                " \"edges\": [{\"from\": \"p\", \"to\": \"g\"}]}", "'p' is a sink and has no output"));
    CHECK(fails("{\"maxParallelism\": 2, \"parallelism\": 4, \"vertices\": [" SRC ", {\"id\": \"p\", \"type\": \"print\"}],"
                " \"edges\": [{\"from\": \"g\", \"to\": \"p\"}]}", "maxParallelism 2 is below the largest parallelism 4"));
    CHECK(fails("{\"parallelism\": 2, \"vertices\": [" SRC ", {\"id\": \"a\", \"type\": \"group_aggregate\","
                " \"config\": {\"group-by\": [\"x\"], \"aggregates\": [\"COUNT(*)\"]}}, {\"id\": \"p\", \"type\": \"print\"}],"
                " \"edges\": [{\"from\": \"g\", \"to\": \"a\", \"strategy\": \"rebalance\"}, {\"from\": \"a\", \"to\": \"p\"}]}",
                "a keyed operator with parallelism 2 needs its input from 'g' hashed on its key: "
                "use {\"strategy\": \"hash\", \"keys\": [\"x\"]}"));
    CHECK(fails("{\"vertices\": [" SRC ", {\"id\": \"p\", \"type\": \"print\"}],"
                " \"edges\": [{\"from\": \"g\", \"to\": \"p\", \"output\": \"late\"}]}",
                "'g' (datagen) has no side output 'late' (it declares: none)"));
}

/* A job's "config": per-job keys only, each checked like the cluster's, kept
 * as strings; it names and sizes the job and gives GROUP BY state its TTL. */
static void test_job_config(void)
{
    char err[512] = "";
    const char *j =
        "{\"config\": {\"execution.checkpointing.interval\": \"100 ms\", \"parallelism.default\": 3,"
        " \"pipeline.name\": \"mine\", \"table.exec.state.ttl\": \"1 h\","
        " \"restart-strategy.type\": \"fixed-delay\", \"state.backend.type\": \"rocksdb\"},"
        " \"vertices\": [" SRC ", {\"id\": \"a\", \"type\": \"group_aggregate\","
        " \"config\": {\"group-by\": [\"x\"], \"aggregates\": [\"COUNT(*)\"]}}, {\"id\": \"p\", \"type\": \"print\"}],"
        " \"edges\": [{\"from\": \"g\", \"to\": \"a\", \"strategy\": \"hash\", \"keys\": [\"x\"]}, {\"from\": \"a\", \"to\": \"p\"}]}";
    sl_jobgraph *g = sl_jobgraph_parse(j, strlen(j), 1, 0, err, sizeof err);
    if (!g) fprintf(stderr, "%s\n", err);
    CHECK(g != NULL);
    CHECK_EQ_STR(sl_jobgraph_conf(g, "execution.checkpointing.interval"), "100 ms");
    CHECK_EQ_STR(sl_jobgraph_conf(g, "parallelism.default"), "3");
    CHECK_EQ_STR(sl_jobgraph_conf(g, "state.backend.type"), "rocksdb");
    CHECK(sl_jobgraph_conf(g, "execution.checkpointing.timeout") == NULL);
    CHECK_EQ_STR(g->name, "mine");
    CHECK_EQ_INT(g->parallelism, 3);
    CHECK_EQ_STR(json_string_value(json_object_get(g->v[1].config, "state.ttl")), "1 h");
    sl_jobgraph_destroy(g);

    CHECK(fails("{\"config\": {\"execution.checkpointing.intervl\": \"1 s\"}, \"vertices\": [" SRC "]}",
                "job: config: unknown key 'execution.checkpointing.intervl'; did you mean "
                "'execution.checkpointing.interval'?"));
    CHECK(fails("{\"config\": {\"taskmanager.numberOfTaskSlots\": \"4\"}, \"vertices\": [" SRC "]}",
                "job: config: 'taskmanager.numberOfTaskSlots' cannot be set per job"));
    CHECK(fails("{\"config\": {\"state.backend.type\": \"memory\"}, \"vertices\": [" SRC "]}",
                "job: config: "));
    CHECK(fails("{\"config\": {\"table.exec.state.ttl\": \"soon\"}, \"vertices\": [" SRC "]}",
                "job: config: 'table.exec.state.ttl': invalid interval 'soon'"));
    CHECK(fails("{\"config\": {\"parallelism.default\": \"0\"}, \"vertices\": [" SRC "]}",
                "job: config: 'parallelism.default' must be a number from 1 to 32768, not '0'"));
    CHECK(fails("{\"config\": [1], \"vertices\": [" SRC "]}", "job: 'config' must be an object"));
    CHECK(fails("{\"config\": {\"execution.checkpointing.interval\": [1]}, \"vertices\": [" SRC "]}",
                "job: config: 'execution.checkpointing.interval' must be a string or a number"));
}

SL_TEST_MAIN(SL_TEST(test_parse_schemas_chains_and_defaults), SL_TEST(test_override_parallelism),
             SL_TEST(test_errors_name_the_problem), SL_TEST(test_job_config))
