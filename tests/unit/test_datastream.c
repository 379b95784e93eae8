/*
 * test_datastream.c -- the DataStream builder (common/datastream.c): the job
 * graph it writes parses and plans as the JobManager would, its mistakes
 * are reported once with what was wrong; and sl_row_key_decode inverts
 * sl_row_key_encode for every type.
 */
#include <stdlib.h>
#include <string.h>

#include "sl_test.h"
#include "datastream.h"

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
             SL_TEST(test_key_decode_round_trip))
