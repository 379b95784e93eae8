/*
 * kafka_txn.c -- EndTxn for a transaction whose producer is gone (see
 * kafka_txn.h): a minimal blocking Kafka protocol client for two requests.
 *
 * Frames are i32 length + request header v1 (api key, version, correlation
 * id, client id) + body; responses are i32 length + correlation id + body
 * (header v0: neither request is a flexible version). Every read is bounded
 * by the frame length and every socket call by the deadline, so a broker
 * that answers nonsense or not at all gives an error, never a hang or a
 * read out of bounds. Retriable coordinator errors (loading, not available,
 * not the coordinator, concurrent transactions) are retried until the
 * deadline.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "kafka_txn.h"
#include "sl.h"

#define API_FIND_COORDINATOR 10
#define API_END_TXN 26

typedef struct wbuf {
    unsigned char b[1024];
    size_t n;
} wbuf;

static void put16(wbuf *w, int v)
{
    w->b[w->n++] = (unsigned char)(v >> 8);
    w->b[w->n++] = (unsigned char)v;
}

static void put32(wbuf *w, int32_t v)
{
    for (int i = 3; i >= 0; i--) w->b[w->n++] = (unsigned char)((uint32_t)v >> (8 * i));
}

static void put64(wbuf *w, int64_t v)
{
    for (int i = 7; i >= 0; i--) w->b[w->n++] = (unsigned char)((uint64_t)v >> (8 * i));
}

static int putstr(wbuf *w, const char *s)
{
    size_t n = strlen(s);
    if (n > 512 || w->n + 2 + n > sizeof w->b) return SL_ERR;
    put16(w, (int)n);
    memcpy(w->b + w->n, s, n);
    w->n += n;
    return SL_OK;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short ev, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) return SL_ERR;
        struct pollfd pf = {.fd = fd, .events = ev};
        int r = poll(&pf, 1, (int)SL_MIN(left, 1000));
        if (r > 0) return SL_OK;
        if (r < 0 && errno != EINTR) return SL_ERR;
    }
}

static int dial(const char *host, const char *port, int64_t deadline, char *why, size_t whylen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    int e = getaddrinfo(host, port, &hints, &res);
    if (e) return sl_seterr(why, whylen, "cannot resolve %s:%s: %s", host, port, gai_strerror(e));
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
            close(fd);
            fd = -1;
            continue;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (wait_fd(fd, POLLOUT, deadline) != SL_OK ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) return sl_seterr(why, whylen, "cannot connect to %s:%s", host, port);
    return fd;
}

static int send_all(int fd, const unsigned char *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR) return SL_ERR;
        if (wait_fd(fd, POLLOUT, deadline) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

static int recv_all(int fd, unsigned char *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0) return SL_ERR;
        if (errno != EAGAIN && errno != EINTR) return SL_ERR;
        if (wait_fd(fd, POLLIN, deadline) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

/* One request; the response body (after the correlation id) into *resp
 * (caller frees), its length in *rlen. */
static int roundtrip(int fd, int api, int version, int32_t corr, const wbuf *body,
                     unsigned char **resp, size_t *rlen, int64_t deadline, char *why,
                     size_t whylen)
{
    wbuf w = {.n = 4};
    put16(&w, api);
    put16(&w, version);
    put32(&w, corr);
    putstr(&w, "sluice-txn-recovery");
    if (w.n + body->n > sizeof w.b) return sl_seterr(why, whylen, "request too large");
    memcpy(w.b + w.n, body->b, body->n);
    w.n += body->n;
    uint32_t len = (uint32_t)(w.n - 4);
    for (int i = 0; i < 4; i++) w.b[i] = (unsigned char)(len >> (24 - 8 * i));
    const char *name = api == API_END_TXN ? "EndTxn" : "FindCoordinator";
    if (send_all(fd, w.b, w.n, deadline) != SL_OK)
        return sl_seterr(why, whylen, "%s: cannot send the request: %s", name, strerror(errno));
    unsigned char hdr[8];
    if (recv_all(fd, hdr, 8, deadline) != SL_OK)
        return sl_seterr(why, whylen, "%s: no response (connection closed or timed out)", name);
    uint32_t n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    int32_t c = (int32_t)((uint32_t)hdr[4] << 24 | (uint32_t)hdr[5] << 16 | (uint32_t)hdr[6] << 8 |
                          hdr[7]);
    if (n < 4 || n > (1u << 20) || c != corr)
        return sl_seterr(why, whylen, "%s: bad response frame (length %u, correlation %d)", name,
                         n, c);
    *rlen = n - 4;
    *resp = sl_malloc(*rlen + 1);
    if (recv_all(fd, *resp, *rlen, deadline) != SL_OK) {
        free(*resp);
        *resp = NULL;
        return sl_seterr(why, whylen, "%s: response cut short", name);
    }
    return SL_OK;
}

typedef struct rcur {
    const unsigned char *p, *e;
    bool bad;
} rcur;

static int64_t get(rcur *r, int bytes)
{
    if (r->e - r->p < bytes) {
        r->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | *r->p++;
    if (bytes == 2) return (int16_t)v;
    if (bytes == 4) return (int32_t)v;
    return (int64_t)v;
}

static void getstr(rcur *r, char *dst, size_t cap)
{
    int64_t n = get(r, 2);
    dst[0] = '\0';
    if (n < 0) return; /* null */
    if (r->e - r->p < n) {
        r->bad = true;
        return;
    }
    snprintf(dst, cap, "%.*s", (int)n, (const char *)r->p);
    r->p += n;
}

static const char *err_name(int code)
{
    switch (code) {
    case 14: return "COORDINATOR_LOAD_IN_PROGRESS";
    case 15: return "COORDINATOR_NOT_AVAILABLE";
    case 16: return "NOT_COORDINATOR";
    case 47: return "INVALID_PRODUCER_EPOCH (fenced by a newer producer)";
    case 48: return "INVALID_TXN_STATE";
    case 49: return "INVALID_PRODUCER_ID_MAPPING";
    case 51: return "CONCURRENT_TRANSACTIONS";
    case 53: return "TRANSACTIONAL_ID_AUTHORIZATION_FAILED";
    case 90: return "PRODUCER_FENCED";
    default: return "error";
    }
}

static bool retriable(int code) { return code == 14 || code == 15 || code == 16 || code == 51; }

int kf_txn_end(const char *bootstrap, const char *txn_id, int64_t producer_id, int16_t epoch,
               int commit, int timeout_ms, char *why, size_t whylen)
{
    int64_t deadline = now_ms() + timeout_ms;
    char first[256];
    snprintf(first, sizeof first, "%s", bootstrap);
    char *comma = strchr(first, ',');
    if (comma) *comma = '\0';
    char *colon = strrchr(first, ':');
    if (!colon) return sl_seterr(why, whylen, "bootstrap server '%s' is not host:port", first);
    *colon = '\0';
    int32_t corr = 1;
    for (;;) {
        int rc = SL_ERR, code = -1;
        unsigned char *resp = NULL;
        size_t rlen = 0;
        char host[256], port[16];
        int fd = dial(first, colon + 1, deadline, why, whylen);
        if (fd < 0) return SL_ERR;
        wbuf b = {.n = 0};
        putstr(&b, txn_id);
        b.b[b.n++] = 1; /* key type: transaction */
        if (roundtrip(fd, API_FIND_COORDINATOR, 1, corr++, &b, &resp, &rlen, deadline, why,
                      whylen) != SL_OK) {
            close(fd);
            return SL_ERR;
        }
        rcur r = {resp, resp + rlen, false};
        get(&r, 4); /* throttle */
        code = (int)get(&r, 2);
        char msg[256];
        getstr(&r, msg, sizeof msg);
        get(&r, 4); /* node id */
        getstr(&r, host, sizeof host);
        int32_t p = (int32_t)get(&r, 4);
        free(resp);
        resp = NULL;
        if (r.bad) {
            close(fd);
            return sl_seterr(why, whylen, "FindCoordinator: malformed response");
        }
        if (code == 0) {
            snprintf(port, sizeof port, "%d", p);
            int cfd = fd;
            if (strcmp(host, first) != 0 || strcmp(port, colon + 1) != 0) {
                close(fd);
                cfd = dial(host, port, deadline, why, whylen);
                if (cfd < 0) return SL_ERR;
            }
            wbuf e = {.n = 0};
            putstr(&e, txn_id);
            put64(&e, producer_id);
            put16(&e, epoch);
            e.b[e.n++] = commit ? 1 : 0;
            if (roundtrip(cfd, API_END_TXN, 1, corr++, &e, &resp, &rlen, deadline, why, whylen) !=
                SL_OK) {
                close(cfd);
                return SL_ERR;
            }
            rcur q = {resp, resp + rlen, false};
            get(&q, 4);
            code = (int)get(&q, 2);
            free(resp);
            close(cfd);
            if (q.bad) return sl_seterr(why, whylen, "EndTxn: malformed response");
            if (code == 0) rc = SL_OK;
            else if (!retriable(code))
                return sl_seterr(why, whylen, "EndTxn(%s): %s (%d)", commit ? "commit" : "abort",
                                 err_name(code), code);
        } else {
            close(fd);
            if (!retriable(code))
                return sl_seterr(why, whylen, "FindCoordinator: %s (%d)%s%s", err_name(code), code,
                                 msg[0] ? ": " : "", msg);
        }
        if (rc == SL_OK) return SL_OK;
        if (now_ms() + 200 >= deadline)
            return sl_seterr(why, whylen, "%s (%d), still after %d ms", err_name(code), code,
                             timeout_ms);
        sl_sleep_ms(200);
    }
}

/* ---- fencing through librdkafka ---------------------------------------------- */

int kf_txn_fence(const char *bootstrap, const char *txn_id, const char *const *props, int nprops,
                 int timeout_ms, char *why, size_t whylen)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char e[512];
    if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, e, sizeof e) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "transactional.id", txn_id, e, sizeof e) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "log_level", "3", e, sizeof e) != RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        return sl_seterr(why, whylen, "%s", e);
    }
    for (int i = 0; i < nprops; i++) {
        char name[256];
        const char *eq = strchr(props[i], '=');
        if (!eq || eq == props[i] || (size_t)(eq - props[i]) >= sizeof name) {
            rd_kafka_conf_destroy(conf);
            return sl_seterr(why, whylen, "property '%s' is not name=value", props[i]);
        }
        snprintf(name, sizeof name, "%.*s", (int)(eq - props[i]), props[i]);
        if (rd_kafka_conf_set(conf, name, eq + 1, e, sizeof e) != RD_KAFKA_CONF_OK) {
            rd_kafka_conf_destroy(conf);
            return sl_seterr(why, whylen, "property '%s': %s", name, e);
        }
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e);
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        return sl_seterr(why, whylen, "%s", e);
    }
    int rc = SL_OK;
    rd_kafka_error_t *err = rd_kafka_init_transactions(rk, timeout_ms);
    if (err) {
        rc = sl_seterr(why, whylen, "cannot initialise transactional.id '%s' at %s: %s", txn_id,
                       bootstrap, rd_kafka_error_string(err));
        rd_kafka_error_destroy(err);
    }
    rd_kafka_destroy(rk);
    return rc;
}
