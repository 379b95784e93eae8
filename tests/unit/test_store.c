/*
 * test_store.c -- unit tests for core/store.c: the form of s3:// URLs, the
 * s3.endpoint setting, how a directory is shown, and that a request to a
 * server that is not there fails with a message naming the URL, the
 * server and libs3's status (the requests themselves are tested against
 * a real S3-compatible server in tests/integration/test_s3.py).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "snapshot.h"
#include "sl_test.h"
#include "store.h"

static void test_urls(void)
{
    char err[300];
    CHECK(sl_store_is_s3("s3://bucket/x"));
    CHECK(!sl_store_is_s3("/tmp/x") && !sl_store_is_s3("file:///x") && !sl_store_is_s3(NULL));
    CHECK_EQ_INT(sl_store_check_url("s3://my-bucket.1/a/b", err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_store_check_url("s3://my-bucket", err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_store_check_url("s3://ab/x", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "'s3://ab/x': a bucket name has 3 to 63 characters");
    CHECK_EQ_INT(sl_store_check_url("s3://My_Bucket/x", err, sizeof err), SL_ERR);
    CHECK(strstr(err, "lower-case letters") != NULL);
    CHECK_EQ_INT(sl_store_check_url("s3://bucket/a//b", err, sizeof err), SL_ERR);
    CHECK_EQ_INT(sl_store_check_url("s3://bucket/a/./b", err, sizeof err), SL_ERR);
    CHECK_EQ_INT(sl_store_check_url("s3://bucket/../b", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "'s3://bucket/../b': empty, '.' and '..' path segments are not allowed");
    CHECK_EQ_INT(sl_store_check_url("/local", err, sizeof err), SL_ERR);
    char *u = sl_store_uri("/data/sp");
    CHECK_EQ_STR(u, "file:/data/sp");
    free(u);
    u = sl_store_uri("s3://bucket/sp");
    CHECK_EQ_STR(u, "s3://bucket/sp");
    free(u);
}

static int set_endpoint(const char *ep, char *err, size_t errlen)
{
    sl_config *c = sl_config_new();
    int rc = sl_config_set(c, "s3.endpoint", ep, NULL, err, errlen);
    if (rc == SL_OK) rc = sl_store_configure(c, err, errlen);
    sl_config_destroy(c);
    return rc;
}

/* A loopback port nobody listens on (bound, then closed). */
static int dead_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &len);
    close(s);
    return ntohs(a.sin_port);
}

static void test_endpoint_and_unreachable_server(void)
{
    char err[600], ep[64];
    CHECK_EQ_INT(set_endpoint("ftp://host", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "s3.endpoint: 'ftp://host' is neither http:// nor https://");
    CHECK_EQ_INT(set_endpoint("http://host:9000/path", err, sizeof err), SL_ERR);
    CHECK(strstr(err, "without a path") != NULL);
    int port = dead_port();
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    CHECK_EQ_INT(set_endpoint(ep, err, sizeof err), SL_OK);
    char want[200];
    snprintf(want, sizeof want, "uploading s3://bucket/chk-1/_metadata at 127.0.0.1:%d: ", port);
    CHECK_EQ_INT(sl_snapshot_write_metadata("s3://bucket/chk-1", "x", 1, err, sizeof err), SL_ERR);
    CHECK(strncmp(err, want, strlen(want)) == 0);
    void *data;
    size_t len;
    CHECK_EQ_INT(sl_snapshot_read_metadata("s3://bucket/chk-1", &data, &len, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "reading s3://bucket/chk-1/_metadata at 127.0.0.1:") != NULL);
    CHECK_EQ_INT(sl_snapshot_remove("s3://bucket/chk-1", err, sizeof err), SL_ERR);
    CHECK(strstr(err, "listing s3://bucket/chk-1 at 127.0.0.1:") != NULL);
    CHECK_EQ_INT(sl_mkdirs("s3://bucket/chk-1", err, sizeof err), SL_OK); /* no directories */
}

SL_TEST_MAIN(SL_TEST(test_urls), SL_TEST(test_endpoint_and_unreachable_server))
