/*
 * test_http_server.c -- lib/'s one libmicrohttpd set-up (http_server.h):
 * a server on a free loopback port answers a real request over a socket,
 * with the completion callback called; a port in use, a bad address and a
 * limit of connections per address are refused with the messages the
 * REST server, the Prometheus reporter and the SQL gateway show.
 */
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "http_server.h"
#include "sl_test.h"

static int completed;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **ctx)
{
    static const char body[] = "hello";
    if (!*ctx) { /* first call: headers only */
        *ctx = (void *)1;
        return MHD_YES;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(sizeof body - 1, (void *)body,
                                                             MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc = MHD_queue_response(c, !strcmp(url, "/x") ? 200 : 404, r);
    MHD_destroy_response(r);
    return rc;
}

static void done(void *cls, struct MHD_Connection *c, void **ctx,
                 enum MHD_RequestTerminationCode toe)
{
    __atomic_add_fetch(&completed, 1, __ATOMIC_SEQ_CST);
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* GET path over a fresh connection; the response's text (at most cap - 1). */
static void get(int port, const char *path, char *out, size_t cap)
{
    int fd = connect_to(port);
    CHECK(fd >= 0);
    char req[128];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                     path);
    CHECK(write(fd, req, (size_t)n) == n);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < cap && (r = read(fd, out + got, cap - 1 - got)) > 0) got += (size_t)r;
    out[got] = '\0';
    close(fd);
}

static void test_serves_on_a_free_port(void)
{
    sl_http_conf c = {.what = "the test server", .bind_key = "test.address", .bind = "localhost",
                      .port = 0, .threads = 2, .idle_timeout_s = 5, .connection_limit = 8,
                      .handler = answer, .completed = done};
    char err[256] = "";
    int port = 0;
    struct MHD_Daemon *d = sl_http_start(&c, &port, err, sizeof err);
    CHECK(d != NULL);
    CHECK(port > 0);
    char text[1024];
    get(port, "/x", text, sizeof text);
    CHECK(!strncmp(text, "HTTP/1.1 200", 12));
    CHECK(strstr(text, "\r\n\r\nhello") != NULL);
    get(port, "/y", text, sizeof text);
    CHECK(!strncmp(text, "HTTP/1.1 404", 12));
    /* the same port again: in use */
    sl_http_conf c2 = c;
    c2.port = port;
    c2.bind = "127.0.0.1";
    CHECK(sl_http_start(&c2, NULL, err, sizeof err) == NULL);
    char want[128];
    snprintf(want, sizeof want, "cannot start the test server on 127.0.0.1:%d (port in use?)", port);
    CHECK_EQ_STR(err, want);
    MHD_stop_daemon(d);
    CHECK_EQ_INT(__atomic_load_n(&completed, __ATOMIC_SEQ_CST), 2);
}

static void test_refuses_a_bad_address(void)
{
    sl_http_conf c = {.what = "the test server", .bind_key = "test.address", .bind = "example.org",
                      .handler = answer};
    char err[256] = "";
    CHECK(sl_http_start(&c, NULL, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "test.address: 'example.org' is not an IPv4 address");
}

/* One internal polling thread and a per-address limit of one: a second
 * connection from the same address is closed by libmicrohttpd. */
static void test_per_address_limit(void)
{
    sl_http_conf c = {.what = "the test server", .bind_key = "test.address", .port = 0,
                      .per_ip_limit = 1, .handler = answer};
    int port = 0;
    struct MHD_Daemon *d = sl_http_start(&c, &port, NULL, 0);
    CHECK(d != NULL);
    int a = connect_to(port), b = connect_to(port);
    CHECK(a >= 0 && b >= 0);
    char buf[16];
    /* the second is refused: read sees its end (or a reset) */
    CHECK(read(b, buf, sizeof buf) <= 0);
    close(a);
    close(b);
    MHD_stop_daemon(d);
}

SL_TEST_MAIN(SL_TEST(test_serves_on_a_free_port), SL_TEST(test_refuses_a_bad_address),
             SL_TEST(test_per_address_limit))
