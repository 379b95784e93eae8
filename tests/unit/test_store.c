/*
 * test_store.c -- unit tests for core/store.c: the form of s3:// URLs, the
 * s3.endpoint setting, how a directory is shown, and that a request to a
 * server that is not there fails with a message naming the URL, the
 * server and curl's reason; against a canned HTTP server on a loopback
 * socket: listing pages joined by continuation tokens (and the query that
 * asks for them), malformed ListObjectsV2 answers refused with a clear
 * error, an S3 error answer's code and message in the error, and a server
 * that accepts and never answers given up after s3.low-speed.time. The
 * requests themselves are tested against a real S3-compatible server in
 * tests/integration/test_s3.py.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <time.h>
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

/* A loopback HTTP server answering each connection's request with the next
 * canned answer (then closing it); NULL: accept and never answer. */
typedef struct canned {
    int fd, port;
    const char **answers;
    int n;
    char requests[8][512]; /* the request lines seen */
    int seen;
    pthread_t th;
} canned;

static void *canned_run(void *arg)
{
    canned *c = arg;
    for (int i = 0; i < c->n; i++) {
        int s = accept(c->fd, NULL, NULL);
        if (s < 0) return NULL;
        char buf[4096];
        size_t len = 0;
        while (len < sizeof buf - 1) {
            ssize_t r = read(s, buf + len, sizeof buf - 1 - len);
            if (r <= 0) break;
            len += (size_t)r;
            buf[len] = '\0';
            if (strstr(buf, "\r\n\r\n")) break;
        }
        buf[len] = '\0';
        /* read the body too (a part is megabytes): answering before would break the upload */
        const char *cl = strcasestr(buf, "\r\ncontent-length:");
        char *eoh = strstr(buf, "\r\n\r\n");
        if (cl && eoh) {
            long left = strtol(cl + 17, NULL, 10) - (long)(buf + len - (eoh + 4));
            char sink[65536];
            while (left > 0) {
                ssize_t r = read(s, sink, (size_t)SL_MIN(left, (long)sizeof sink));
                if (r <= 0) break;
                left -= r;
            }
        }
        if (c->seen < 8) snprintf(c->requests[c->seen++], 512, "%.*s", (int)strcspn(buf, "\r"), buf);
        if (!c->answers[i]) { /* hang: keep the connection open, send nothing */
            char sink[256];
            while (read(s, sink, sizeof sink) > 0) {}
            close(s);
            continue;
        }
        char head[200];
        int hn = snprintf(head, sizeof head, "HTTP/1.1 %.3s X\r\nETag: \"e%d\"\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\n\r\n", c->answers[i], i, strlen(c->answers[i] + 4));
        if (write(s, head, (size_t)hn) < 0 || write(s, c->answers[i] + 4, strlen(c->answers[i] + 4)) < 0) {}
        close(s);
    }
    return NULL;
}

/* answers: "200 <body>" */
static void canned_start(canned *c, const char **answers, int n)
{
    memset(c, 0, sizeof *c);
    c->answers = answers;
    c->n = n;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(bind(c->fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(c->fd, 8) == 0);
    getsockname(c->fd, (struct sockaddr *)&a, &len);
    c->port = ntohs(a.sin_port);
    pthread_create(&c->th, NULL, canned_run, c);
}

static void canned_stop(canned *c)
{
    shutdown(c->fd, SHUT_RDWR);
    close(c->fd);
    pthread_join(c->th, NULL);
}

static int configure_part(int port, const char *low_speed, const char *part, char *err,
                          size_t errlen)
{
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    sl_config *c = sl_config_new();
    int rc = sl_config_set(c, "s3.endpoint", ep, NULL, err, errlen);
    if (rc == SL_OK) rc = sl_config_set(c, "s3.path.style.access", "true", NULL, err, errlen);
    if (rc == SL_OK) rc = sl_config_set(c, "s3.access-key", "k", NULL, err, errlen);
    if (rc == SL_OK) rc = sl_config_set(c, "s3.low-speed.time", low_speed, NULL, err, errlen);
    if (rc == SL_OK) rc = sl_config_set(c, "s3.multipart.part-size", part, NULL, err, errlen);
    if (rc == SL_OK) rc = sl_store_configure(c, err, errlen);
    sl_config_destroy(c);
    return rc;
}

static int configure(int port, const char *low_speed, char *err, size_t errlen)
{
    return configure_part(port, low_speed, "16mb", err, errlen);
}

typedef struct seen {
    char names[8][64];
    uint64_t sizes[8];
    int n;
} seen;

static int collect(void *ctx, const char *name, uint64_t size)
{
    seen *s = ctx;
    if (s->n < 8) {
        snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
        s->sizes[s->n++] = size;
    }
    return SL_OK;
}

static void test_options(void)
{
    char err[600];
    sl_config *c = sl_config_new();
    CHECK_EQ_INT(sl_config_set(c, "s3.multipart.part-size", "1mb", NULL, err, sizeof err), SL_ERR);
    CHECK_EQ_INT(sl_config_set(c, "s3.multipart.part-size", "5mb", NULL, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_config_set(c, "s3.region", "EU West", NULL, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_store_configure(c, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "s3.region: 'EU West' is not a region name (lower-case letters, digits and '-')");
    sl_config_destroy(c);
}

#define LIST_HEAD "200 <?xml version=\"1.0\"?><ListBucketResult><Name>bucket</Name>"

static void test_listing_pages_and_malformed_answers(void)
{
    char err[600];
    const char *pages[] = {
        LIST_HEAD "<IsTruncated>true</IsTruncated><Contents><Key>d/chk-1/_metadata</Key>"
        "<Size>12</Size></Contents><Contents><Key>d/a&amp;b</Key><Size>0</Size></Contents>"
        "<NextContinuationToken>t/1+=</NextContinuationToken></ListBucketResult>",
        LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>d/shared/x.sst</Key>"
        "<Size>5368709121</Size></Contents></ListBucketResult>"};
    canned c;
    canned_start(&c, pages, 2);
    CHECK_EQ_INT(configure(c.port, "30 s", err, sizeof err), SL_OK);
    seen s = {0};
    CHECK_EQ_INT(sl_store_list("s3://bucket/d", collect, &s, err, sizeof err), SL_OK);
    canned_stop(&c);
    CHECK_EQ_INT(s.n, 3);
    CHECK_EQ_STR(s.names[0], "chk-1/_metadata");
    CHECK(s.sizes[0] == 12);
    CHECK_EQ_STR(s.names[1], "a&b");
    CHECK_EQ_STR(s.names[2], "shared/x.sst");
    CHECK(s.sizes[2] == 5368709121ULL);
    CHECK_EQ_STR(c.requests[0], "GET /bucket?list-type=2&prefix=d%2F HTTP/1.1");
    CHECK_EQ_STR(c.requests[1], "GET /bucket?continuation-token=t%2F1%2B%3D&list-type=2&prefix=d%2F HTTP/1.1");

    static const struct { const char *answer, *why; } bad[] = {
        {"200 <html>hello</html>", "no ListBucketResult"},
        {LIST_HEAD "<Contents><Key>d/x</Key><Size>1</Size></Contents></ListBucketResult>",
         "no IsTruncated true or false"},
        {LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>d/x</Key></Contents>", "a Contents without a Size"},
        {LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>d/x</Key><Size>12x</Size></Contents>",
         "a Size that is not a number"},
        {LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>d/&bogus;</Key><Size>1</Size></Contents>",
         "a Contents without a readable Key"},
        {LIST_HEAD "<IsTruncated>true</IsTruncated></ListBucketResult>",
         "truncated without a NextContinuationToken"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *one[] = {bad[i].answer};
        canned_start(&c, one, 1);
        CHECK_EQ_INT(configure(c.port, "30 s", err, sizeof err), SL_OK);
        s.n = 0;
        CHECK_EQ_INT(sl_store_list("s3://bucket/d", collect, &s, err, sizeof err), SL_ERR);
        canned_stop(&c);
        char want[300];
        snprintf(want, sizeof want, "listing s3://bucket/d at 127.0.0.1:%d: malformed ListObjectsV2 "
                 "answer (%s)", c.port, bad[i].why);
        CHECK_EQ_STR(err, want);
    }

    /* the server's error: status, code and message */
    const char *denied[] = {"403 <?xml version=\"1.0\"?><Error><Code>AccessDenied</Code>"
                            "<Message>Access &lt;Denied&gt;</Message></Error>"};
    canned_start(&c, denied, 1);
    CHECK_EQ_INT(configure(c.port, "30 s", err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_store_put_mem("s3://bucket/d/x", "ab", 2, err, sizeof err), SL_ERR);
    canned_stop(&c);
    char want[300];
    snprintf(want, sizeof want, "uploading s3://bucket/d/x at 127.0.0.1:%d: HTTP 403 AccessDenied: "
             "Access <Denied>", c.port);
    CHECK_EQ_STR(err, want);
    CHECK_EQ_STR(c.requests[0], "PUT /bucket/d/x HTTP/1.1");
}

static void test_hung_server_times_out(void)
{
    char err[600];
    const char *hang[] = {NULL, NULL, NULL};
    canned c;
    canned_start(&c, hang, 3);
    CHECK_EQ_INT(configure(c.port, "1 s", err, sizeof err), SL_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ_INT(sl_store_size("s3://bucket/d/x", NULL, err, sizeof err), SL_ERR);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    /* three attempts of 1 s each and 0.5 s of back-off */
    CHECK(secs >= 3.0 && secs < 8.0);
    CHECK(strstr(err, "looking up s3://bucket/d/x at 127.0.0.1:") && strstr(err, "Operation too slow"));
    canned_stop(&c);
}

/* A file of a part and a byte: CreateMultipartUpload, two UploadParts in
 * order (queries in canonical form), CompleteMultipartUpload answered by a
 * 200 carrying an <Error> -- a failure -- and AbortMultipartUpload. */
static void test_multipart_failure_aborts(void)
{
    char err[600], path[] = "/tmp/sl-store-part-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && ftruncate(fd, (5 << 20) + 1) == 0);
    close(fd);
    const char *answers[] = {
        "200 <InitiateMultipartUploadResult><UploadId>u/1</UploadId></InitiateMultipartUploadResult>",
        "200 ", "200 ",
        "200 <Error><Code>InternalError</Code><Message>boom</Message></Error>",
        "204 "};
    canned c;
    canned_start(&c, answers, 5);
    CHECK_EQ_INT(configure_part(c.port, "30 s", "5mb", err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_store_put_file(path, "s3://bucket/d/big", NULL, err, sizeof err), SL_ERR);
    canned_stop(&c);
    unlink(path);
    char want[300];
    snprintf(want, sizeof want, "completing the multipart upload of s3://bucket/d/big at 127.0.0.1:%d: "
             "HTTP 200 InternalError: boom", c.port);
    CHECK_EQ_STR(err, want);
    CHECK_EQ_INT(c.seen, 5);
    CHECK_EQ_STR(c.requests[0], "POST /bucket/d/big?uploads= HTTP/1.1");
    CHECK_EQ_STR(c.requests[1], "PUT /bucket/d/big?partNumber=1&uploadId=u%2F1 HTTP/1.1");
    CHECK_EQ_STR(c.requests[2], "PUT /bucket/d/big?partNumber=2&uploadId=u%2F1 HTTP/1.1");
    CHECK_EQ_STR(c.requests[3], "POST /bucket/d/big?uploadId=u%2F1 HTTP/1.1");
    CHECK_EQ_STR(c.requests[4], "DELETE /bucket/d/big?uploadId=u%2F1 HTTP/1.1");
}

SL_TEST_MAIN(SL_TEST(test_urls), SL_TEST(test_endpoint_and_unreachable_server), SL_TEST(test_options),
             SL_TEST(test_listing_pages_and_malformed_answers), SL_TEST(test_hung_server_times_out),
             SL_TEST(test_multipart_failure_aborts))
