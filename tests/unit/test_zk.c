/*
 * test_zk.c -- the pure parts of core/zk.c: the cluster's node paths and
 * the leader znode's JSON (what TaskManagers and the CLI trust to find the
 * leader, so malformed contents must be refused, not half-read). The
 * ZooKeeper parts proper run against a real ensemble in
 * tests/integration/test_ha.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zk.h"
#include "sl_test.h"

static sl_config *conf(const char *root, const char *cid)
{
    char err[256];
    sl_config *c = sl_config_new();
    if ((root && sl_config_set(c, "high-availability.zookeeper.path.root", root, NULL, err, sizeof err) != SL_OK) ||
        (cid && sl_config_set(c, "high-availability.cluster-id", cid, NULL, err, sizeof err) != SL_OK)) {
        fprintf(stderr, "config: %s\n", err);
        abort();
    }
    return c;
}

static void test_paths(void)
{
    static const char *const cases[][4] = {
        /* path.root, cluster-id, sub, expected */
        {NULL, NULL, "leader", "/flink/default/leader"},
        {NULL, NULL, "", "/flink/default"},
        {"/flink/", "default/", "jobgraphs", "/flink/default/jobgraphs"},
        {"a//b", "/c", "leaderlatch", "/a/b/c/leaderlatch"},
        {"/", "/", "leader", "/leader"},
        {"/", "/", "", "/"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        sl_config *c = conf(cases[i][0], cases[i][1]);
        char *p = sl_zk_path(c, cases[i][2]);
        CHECK_EQ_STR(p, cases[i][3]);
        free(p);
        sl_config_destroy(c);
    }
    sl_config *c = conf(NULL, NULL);
    CHECK(!sl_ha_enabled(c));
    char err[256];
    CHECK(sl_config_set(c, "high-availability", "zookeeper", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_ha_enabled(c));
    sl_config_destroy(c);
}

static void test_leader_json(void)
{
    sl_zk_leader l, back;
    memset(&l, 0, sizeof l);
    strcpy(l.rpc_host, "10.0.0.7");
    l.rpc_port = 6123;
    strcpy(l.rest_url, "http://jm-a:8081");
    l.session = 0x96bad910da30cbdfULL;
    char *j = sl_zk_leader_json(&l);
    CHECK_EQ_STR(j, "{\"rpc-address\":\"10.0.0.7\",\"rpc-port\":6123,\"rest-url\":\"http://jm-a:8081\","
                    "\"session\":\"96bad910da30cbdf\"}");
    CHECK(sl_zk_leader_parse(j, (int)strlen(j), &back) == SL_OK);
    CHECK_EQ_STR(back.rpc_host, "10.0.0.7");
    CHECK_EQ_INT(back.rpc_port, 6123);
    CHECK_EQ_STR(back.rest_url, "http://jm-a:8081");
    CHECK(back.session == 0x96bad910da30cbdfULL);
    free(j);
    static const char *const bad[] = {
        "",
        "not json",
        "{\"rpc-address\":\"h\",\"rpc-port\":6123,\"rest-url\":\"http://h:1\"}",              /* no session */
        "{\"rpc-address\":\"h\",\"rpc-port\":0,\"rest-url\":\"http://h:1\",\"session\":\"1\"}",   /* port 0 */
        "{\"rpc-address\":\"h\",\"rpc-port\":70000,\"rest-url\":\"http://h:1\",\"session\":\"1\"}",
        "{\"rpc-address\":\"h\",\"rpc-port\":1,\"rest-url\":\"http://h:1\",\"session\":\"0\"}",   /* no token */
        "{\"rpc-address\":5,\"rpc-port\":1,\"rest-url\":\"http://h:1\",\"session\":\"1\"}",
        "[1,2]",
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++)
        CHECK(sl_zk_leader_parse(bad[i], (int)strlen(bad[i]), &back) == SL_ERR);
    CHECK(sl_zk_leader_parse(NULL, 0, &back) == SL_ERR);
}

SL_TEST_MAIN(SL_TEST(test_paths), SL_TEST(test_leader_json))
