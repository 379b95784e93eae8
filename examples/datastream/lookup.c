/*
 * lookup.c -- async I/O: each id is enriched by a request to a lookup
 * service over TCP (one line "ID\n" out, "OK VALUE\n" or "ERR WHY\n" back),
 * without the task waiting for any one answer.
 *
 * Build and run (a local cluster and the service must be up):
 *     make examples
 *     build/bin/sluice run build/examples/lookup.so OUT_DIR 127.0.0.1:PORT N RATE \
 *         [ordered|unordered] [CAPACITY] [TIMEOUT] [ATTEMPTS]
 * writes OUT_DIR/lookups: (id, value, status) per id, status "ok", or
 * "timeout" (value -1) when the service did not answer within TIMEOUT over
 * all attempts; a request the service answers with ERR is retried with a
 * fixed 50 ms delay, up to ATTEMPTS attempts in all.
 *
 * The function keeps a pool of worker threads, each with its own
 * connection. async_invoke only queues the request; a worker sends it,
 * blocks for the answer and completes the handle from its own thread.
 * close() shuts the connections down (so blocked reads return) and joins
 * the workers: after it no handle is completed.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "datastream.h"

#define WORKERS_MAX 32

typedef struct request {
    sl_async_req req;
    int64_t id;
} request;

typedef struct lookup {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    request *ring;              /* queued requests */
    int cap, head, len;
    int stop;
    struct sockaddr_in addr;
    int nworkers;
    pthread_t workers[WORKERS_MAX];
    int fds[WORKERS_MAX];       /* each worker's connection (-1 none), under mu */
} lookup;

static int connect_to(lookup *lk)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&lk->addr, sizeof lk->addr) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One answer line into buf; -1 on a closed or broken connection. */
static int read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, 1);
        if (r <= 0) return -1;
        if (buf[n] == '\n') break;
        n++;
    }
    buf[n] = 0;
    return (int)n;
}

static void answer(const request *rq, int64_t value)
{
    sl_value out[3] = {{.v.i = rq->id}, {.v.i = value}, {.v.s = {"ok", 2}}};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 3, .vals = out};
    sl_async_complete(rq->req, &r, 1);
}

static void *worker(void *arg)
{
    lookup *lk = arg;
    pthread_mutex_lock(&lk->mu);
    int me = 0;
    while (me < lk->nworkers && !pthread_equal(lk->workers[me], pthread_self())) me++;
    for (;;) {
        while (!lk->len && !lk->stop) pthread_cond_wait(&lk->cv, &lk->mu);
        if (lk->stop) break;
        request rq = lk->ring[lk->head];
        lk->head = (lk->head + 1) % lk->cap;
        lk->len--;
        int fd = lk->fds[me];
        pthread_mutex_unlock(&lk->mu);
        if (fd < 0) fd = connect_to(lk);
        char line[128];
        int n = snprintf(line, sizeof line, "%lld\n", (long long)rq.id);
        if (fd < 0 || write(fd, line, (size_t)n) != n || read_line(fd, line, sizeof line) < 0) {
            if (fd >= 0) close(fd);
            fd = -1;
            sl_async_fail(rq.req, "lookup service: connection lost");
        } else if (!strncmp(line, "OK ", 3)) {
            answer(&rq, atoll(line + 3));
        } else {
            sl_async_fail(rq.req, line);
        }
        pthread_mutex_lock(&lk->mu);
        if (lk->stop && fd >= 0) {
            close(fd);
            fd = -1;
        }
        lk->fds[me] = fd;
    }
    pthread_mutex_unlock(&lk->mu);
    return NULL;
}

static int lk_open(sl_op *ctx)
{
    const char *addr = sl_ds_param(ctx, "address", NULL);
    int workers = atoi(sl_ds_param(ctx, "workers", "8"));
    int cap = atoi(sl_ds_param(ctx, "queue", "1024"));
    char host[64];
    int port = 0;
    if (!addr || sscanf(addr, "%63[^:]:%d", host, &port) != 2 || port <= 0 || port > 65535)
        return sl_op_fail(ctx, "lookup: 'user.address' must be HOST:PORT, not '%s'", addr ? addr : "");
    if (workers < 1 || workers > WORKERS_MAX || cap < 1)
        return sl_op_fail(ctx, "lookup: 'user.workers' must be 1 to %d", WORKERS_MAX);
    lookup *lk = sl_calloc(1, sizeof *lk);
    ctx->priv = lk;
    lk->addr.sin_family = AF_INET;
    lk->addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &lk->addr.sin_addr) != 1)
        return sl_op_fail(ctx, "lookup: '%s' is not an IPv4 address", host);
    pthread_mutex_init(&lk->mu, NULL);
    pthread_cond_init(&lk->cv, NULL);
    lk->cap = cap;
    lk->ring = sl_calloc((size_t)cap, sizeof *lk->ring);
    pthread_mutex_lock(&lk->mu); /* the workers find their index once all exist */
    for (int i = 0; i < workers; i++) {
        lk->fds[i] = -1;
        if (pthread_create(&lk->workers[i], NULL, worker, lk) != 0) break;
        lk->nworkers++;
    }
    pthread_mutex_unlock(&lk->mu);
    return lk->nworkers == workers ? SL_OK : sl_op_fail(ctx, "lookup: cannot start its workers");
}

static int lk_invoke(sl_op *ctx, sl_async_req req, const sl_row *row)
{
    lookup *lk = ctx->priv;
    pthread_mutex_lock(&lk->mu);
    int full = lk->len == lk->cap;
    if (!full) {
        lk->ring[(lk->head + lk->len++) % lk->cap] = (request){req, row->vals[0].v.i};
        pthread_cond_signal(&lk->cv);
    }
    pthread_mutex_unlock(&lk->mu);
    if (full) sl_async_fail(req, "lookup: request queue full");
    return SL_OK;
}

static int lk_timeout(sl_op *ctx, sl_async_req req, const sl_row *row)
{
    sl_value out[3] = {{.v.i = row->vals[0].v.i}, {.v.i = -1}, {.v.s = {"timeout", 7}}};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 3, .vals = out};
    return sl_async_complete(req, &r, 1) == SL_ERR ? SL_ERR : SL_OK;
}

static void lk_close(sl_op *ctx)
{
    lookup *lk = ctx->priv;
    if (!lk) return;
    if (lk->ring) { /* open got as far as the workers */
        pthread_mutex_lock(&lk->mu);
        lk->stop = 1;
        for (int i = 0; i < lk->nworkers; i++)
            if (lk->fds[i] >= 0) shutdown(lk->fds[i], SHUT_RDWR); /* a blocked read returns */
        pthread_cond_broadcast(&lk->cv);
        pthread_mutex_unlock(&lk->mu);
        for (int i = 0; i < lk->nworkers; i++) pthread_join(lk->workers[i], NULL);
        for (int i = 0; i < lk->nworkers; i++)
            if (lk->fds[i] >= 0) close(lk->fds[i]);
        pthread_mutex_destroy(&lk->mu);
        pthread_cond_destroy(&lk->cv);
    }
    free(lk->ring);
    free(lk);
    ctx->priv = NULL;
}

const sl_async_fn lookup_fn = {
    .abi = SL_DS_ABI_VERSION,
    .open = lk_open,
    .async_invoke = lk_invoke,
    .timeout = lk_timeout,
    .close = lk_close,
};

int sluice_job_main(sl_ds_env *env, int argc, char **argv);
int sluice_job_main(sl_ds_env *env, int argc, char **argv)
{
    if (argc < 4) return 2; /* OUT_DIR HOST:PORT N RATE [mode] [capacity] [timeout] [attempts] */
    const char *mode = argc > 4 ? argv[4] : "ordered", *capacity = argc > 5 ? argv[5] : "10";
    const char *timeout = argc > 6 ? argv[6] : "1 s", *attempts = argc > 7 ? argv[7] : "3";
    sl_ds_set_parallelism(env, 1);
    const char *gen_opts[] = {"rows-per-second", argv[3], "fields.id.kind", "sequence",
                              "fields.id.start", "1", "fields.id.end", argv[2], NULL};
    sl_ds_stream *gen = sl_ds_source(env, "gen", "datagen", "id BIGINT", gen_opts);
    sl_ds_uid(gen, "gen");
    const char *opts[] = {"mode", mode, "capacity", capacity, "timeout", timeout,
                          "retry-strategy", "fixed-delay", "retry.max-attempts", attempts,
                          "retry.delay", "50 ms", "user.address", argv[1], "user.workers", "16", NULL};
    sl_ds_stream *res = sl_ds_async(gen, "lookup", "lookup_fn", "id BIGINT, value BIGINT, status STRING", opts);
    sl_ds_uid(res, "lookup");
    size_t n = strlen(argv[0]) + 16;
    char *path = malloc(n);
    if (!path) return 1;
    snprintf(path, n, "%s/lookups", argv[0]);
    const char *fopt[] = {"path", path, "format", "json", NULL};
    sl_ds_sink(res, "sink", "file", fopt);
    free(path);
    return 0;
}
