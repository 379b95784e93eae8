/*
 * http.c -- a blocking HTTP client for the CLI, on libevent's evhttp.
 *
 * The CLI sends a handful of small requests, one at a time, so each request
 * gets its own event base and connection: make the request, run the base
 * until the answer's callback breaks the loop (or a deadline expires), copy
 * the answer out, free everything. No state survives between requests but
 * the resolved addresses, so polling loops never meet a stale keep-alive
 * connection.
 *
 * The host is resolved once with getaddrinfo(). "localhost" often resolves
 * to ::1 before 127.0.0.1 while the JobManager listens on 127.0.0.1 only,
 * so when connecting to one address fails the next is tried, and the one
 * that worked is used first from then on.
 *
 * evhttp reports a failed connect by calling the request's callback with a
 * response code of 0 and without calling the error callback; later
 * failures (timeout, EOF) call the error callback first and then the
 * callback with a NULL request. That is how "is the JobManager running?"
 * is told apart from "it went away".
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "cli.h"

struct sl_cli_http {
    char *host;       /* as given: for the Host header and messages */
    int port;
    char *auth;       /* "Bearer <token>", or NULL */
    int timeout_s;    /* per request */
    char url[300];    /* http://host:port */
    char **addrs;     /* numeric addresses of host, NULL until resolved */
    int naddrs;
    int first;        /* index of the address to try first */
};

sl_cli_http *sl_cli_http_new(const char *host, int port, const char *auth_token, int timeout_s)
{
    sl_cli_http *h = sl_calloc(1, sizeof *h);
    h->host = sl_strdup(host);
    h->port = port;
    h->auth = auth_token && *auth_token ? sl_sprintf("Bearer %s", auth_token) : NULL;
    h->timeout_s = timeout_s > 0 ? timeout_s : 60;
    snprintf(h->url, sizeof h->url, strchr(host, ':') ? "http://[%s]:%d" : "http://%s:%d", host,
             port);
    return h;
}

void sl_cli_http_destroy(sl_cli_http *h)
{
    if (!h) return;
    for (int i = 0; i < h->naddrs; i++) free(h->addrs[i]);
    free(h->addrs);
    free(h->host);
    free(h->auth);
    free(h);
}

const char *sl_cli_http_url(const sl_cli_http *h) { return h->url; }

void sl_cli_response_clear(sl_cli_response *r)
{
    if (!r) return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
    r->status = 0;
}

static int resolve(sl_cli_http *h, char *err, size_t errlen)
{
    if (h->addrs) return SL_OK;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(h->host, NULL, &hints, &res);
    if (rc != 0)
        return sl_seterr(err, errlen, "cannot resolve the JobManager's host '%s': %s", h->host,
                         gai_strerror(rc));
    int n = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) n++;
    h->addrs = sl_calloc((size_t)n, sizeof *h->addrs);
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        char buf[NI_MAXHOST];
        if (getnameinfo(a->ai_addr, a->ai_addrlen, buf, sizeof buf, NULL, 0, NI_NUMERICHOST))
            continue;
        int dup = 0;
        for (int i = 0; i < h->naddrs; i++) dup |= strcmp(h->addrs[i], buf) == 0;
        if (!dup) h->addrs[h->naddrs++] = sl_strdup(buf);
    }
    freeaddrinfo(res);
    if (h->naddrs == 0)
        return sl_seterr(err, errlen, "cannot resolve the JobManager's host '%s'", h->host);
    return SL_OK;
}

/* What one attempt came back with. */
enum { CALL_PENDING, CALL_ANSWERED, CALL_NO_CONNECT, CALL_FAILED };

typedef struct {
    struct event_base *base;
    int outcome;
    int error_seen;                 /* the error callback ran */
    enum evhttp_request_error error;
    sl_cli_response *resp;
} call_state;

static void on_error(enum evhttp_request_error error, void *arg)
{
    call_state *cs = arg;
    cs->error_seen = 1;
    cs->error = error;
}

static void on_done(struct evhttp_request *req, void *arg)
{
    call_state *cs = arg;
    int code = req ? evhttp_request_get_response_code(req) : 0;
    if (!req) {
        cs->outcome = CALL_FAILED;
    } else if (code == 0) {
        cs->outcome = cs->error_seen ? CALL_FAILED : CALL_NO_CONNECT;
    } else {
        struct evbuffer *in = evhttp_request_get_input_buffer(req);
        size_t n = evbuffer_get_length(in);
        cs->resp->status = code;
        cs->resp->body = sl_malloc(n + 1);
        evbuffer_remove(in, cs->resp->body, n);
        cs->resp->body[n] = '\0';
        cs->resp->len = n;
        cs->outcome = CALL_ANSWERED;
    }
    event_base_loopbreak(cs->base);
}

static int method_of(const char *method, enum evhttp_cmd_type *out)
{
    static const struct {
        const char *name;
        enum evhttp_cmd_type type;
    } methods[] = {{"GET", EVHTTP_REQ_GET},     {"POST", EVHTTP_REQ_POST},
                   {"PATCH", EVHTTP_REQ_PATCH}, {"PUT", EVHTTP_REQ_PUT},
                   {"DELETE", EVHTTP_REQ_DELETE}};
    for (size_t i = 0; i < SL_ARRAY_LEN(methods); i++) {
        if (strcmp(methods[i].name, method) == 0) {
            *out = methods[i].type;
            return SL_OK;
        }
    }
    return SL_ERR;
}

/* One request to one address. Returns the CALL_* outcome. */
static int attempt(sl_cli_http *h, const char *addr, enum evhttp_cmd_type type, const char *uri,
                   const char *ctype, const char *body, size_t blen, sl_cli_response *resp,
                   enum evhttp_request_error *error)
{
    call_state cs = {.outcome = CALL_PENDING, .resp = resp};
    cs.base = event_base_new();
    if (!cs.base) return CALL_FAILED;
    struct evhttp_connection *conn =
        evhttp_connection_base_new(cs.base, NULL, addr, (unsigned short)h->port);
    if (!conn) {
        event_base_free(cs.base);
        return CALL_NO_CONNECT;
    }
    evhttp_connection_set_timeout(conn, h->timeout_s);
    evhttp_connection_set_retries(conn, 0);

    struct evhttp_request *req = evhttp_request_new(on_done, &cs);
    evhttp_request_set_error_cb(req, on_error);
    struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
    char hostport[300];
    snprintf(hostport, sizeof hostport, strchr(h->host, ':') ? "[%s]:%d" : "%s:%d", h->host,
             h->port);
    evhttp_add_header(hdr, "Host", hostport);
    evhttp_add_header(hdr, "Accept", "application/json");
    evhttp_add_header(hdr, "User-Agent", "sluice-cli/" SL_VERSION);
    evhttp_add_header(hdr, "Connection", "close");
    if (h->auth) evhttp_add_header(hdr, "Authorization", h->auth);
    if (body) {
        char len[32];
        snprintf(len, sizeof len, "%zu", blen);
        evhttp_add_header(hdr, "Content-Type", ctype);
        evhttp_add_header(hdr, "Content-Length", len);
        evbuffer_add(evhttp_request_get_output_buffer(req), body, blen);
    } else if (type != EVHTTP_REQ_GET && type != EVHTTP_REQ_DELETE) {
        /* the JobManager takes mutating calls as JSON only, bodiless ones too */
        evhttp_add_header(hdr, "Content-Type", "application/json");
        evhttp_add_header(hdr, "Content-Length", "0");
    }

    if (evhttp_make_request(conn, req, type, uri) != 0) { /* evhttp freed req */
        cs.outcome = CALL_FAILED;
    } else {
        /* evhttp's own timeout ends the request; this deadline only makes
         * sure the loop cannot outlive it. */
        struct timeval deadline = {.tv_sec = h->timeout_s + 5};
        event_base_loopexit(cs.base, &deadline);
        event_base_dispatch(cs.base);
        if (cs.outcome == CALL_PENDING) {
            cs.outcome = CALL_FAILED;
            cs.error_seen = 1;
            cs.error = EVREQ_HTTP_TIMEOUT;
        }
    }
    evhttp_connection_free(conn);
    event_base_free(cs.base);
    *error = cs.error_seen ? cs.error : EVREQ_HTTP_EOF;
    return cs.outcome;
}

int sl_cli_http_request(sl_cli_http *h, const char *method, const char *uri, const char *body,
                        sl_cli_response *resp, char *err, size_t errlen)
{
    return sl_cli_http_request_raw(h, method, uri, "application/json", body, body ? strlen(body) : 0,
                                   resp, err, errlen);
}

int sl_cli_http_request_raw(sl_cli_http *h, const char *method, const char *uri, const char *ctype,
                            const char *body, size_t blen, sl_cli_response *resp, char *err,
                            size_t errlen)
{
    enum evhttp_cmd_type type;
    memset(resp, 0, sizeof *resp);
    if (method_of(method, &type) != SL_OK)
        return sl_seterr(err, errlen, "unsupported HTTP method '%s'", method);
    if (resolve(h, err, errlen) != SL_OK) return SL_ERR;

    for (int k = 0; k < h->naddrs; k++) {
        int i = (h->first + k) % h->naddrs;
        enum evhttp_request_error error;
        int outcome = attempt(h, h->addrs[i], type, uri, ctype, body, blen, resp, &error);
        if (outcome == CALL_ANSWERED) {
            h->first = i;
            return SL_OK;
        }
        if (outcome == CALL_NO_CONNECT) continue;
        /* Connected, then something went wrong: do not send it again. */
        if (error == EVREQ_HTTP_TIMEOUT)
            return sl_seterr(err, errlen, "the JobManager at %s did not answer %s %s within %d s",
                             h->url, method, uri, h->timeout_s);
        return sl_seterr(err, errlen,
                         "the JobManager at %s closed the connection without answering %s %s",
                         h->url, method, uri);
    }
    return sl_seterr(err, errlen, "could not connect to the JobManager at %s (is it running?)",
                     h->url);
}
