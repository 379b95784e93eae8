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
 * async_invoke starts a thread per request (at most MAX_CALLS at once),
 * which connects, sends, blocks for the answer and completes the handle
 * from its own thread; finished threads are joined at the next invoke.
 * close() shuts the open connections down (so blocked reads return) and
 * joins every thread: after it no handle is completed.
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

#define MAX_CALLS 256 /* requests (threads) at once, stale ones included */

/* One request: a thread of its own with its own connection, so a slow
 * answer holds up nothing else (a pool of blocking workers would make a
 * fast request wait behind slow ones, and time out for their sake). */
typedef struct call {
    sl_async_req req;
    int64_t id;
    int used;                   /* slot taken (until joined) */
    int done;                   /* the thread has finished (join it) */
    int fd;                     /* its connection, -1 none */
    pthread_t thread;
    struct lookup *lk;
} call;

typedef struct lookup {
    pthread_mutex_t mu;
    int stop;
    struct sockaddr_in addr;
    call calls[MAX_CALLS];
} lookup;

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

static void *run_call(void *arg)
{
    call *c = arg;
    lookup *lk = c->lk;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    pthread_mutex_lock(&lk->mu);
    c->fd = lk->stop ? -1 : fd; /* close() shuts it down to end a blocked read */
    int stop = lk->stop;
    pthread_mutex_unlock(&lk->mu);
    char line[128];
    int n = snprintf(line, sizeof line, "%lld\n", (long long)c->id);
    if (stop || fd < 0 || connect(fd, (struct sockaddr *)&lk->addr, sizeof lk->addr) < 0 ||
        write(fd, line, (size_t)n) != n || read_line(fd, line, sizeof line) < 0) {
        sl_async_fail(c->req, "lookup service: connection lost");
    } else if (!strncmp(line, "OK ", 3)) {
        sl_value out[3] = {{.v.i = c->id}, {.v.i = atoll(line + 3)}, {.v.s = {"ok", 2}}};
        sl_row r = {.kind = SL_KIND_INSERT, .n = 3, .vals = out};
        sl_async_complete(c->req, &r, 1);
    } else {
        sl_async_fail(c->req, line);
    }
    pthread_mutex_lock(&lk->mu);
    c->fd = -1;
    c->done = 1;
    pthread_mutex_unlock(&lk->mu);
    if (fd >= 0) close(fd);
    return NULL;
}

static int lk_open(sl_op *ctx)
{
    const char *addr = sl_ds_param(ctx, "address", NULL);
    char host[64];
    int port = 0;
    if (!addr || sscanf(addr, "%63[^:]:%d", host, &port) != 2 || port <= 0 || port > 65535)
        return sl_op_fail(ctx, "lookup: 'user.address' must be HOST:PORT, not '%s'", addr ? addr : "");
    lookup *lk = sl_calloc(1, sizeof *lk);
    ctx->priv = lk;
    pthread_mutex_init(&lk->mu, NULL);
    lk->addr.sin_family = AF_INET;
    lk->addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &lk->addr.sin_addr) != 1)
        return sl_op_fail(ctx, "lookup: '%s' is not an IPv4 address", host);
    return SL_OK;
}

/* Join the calls that have finished; the index of a free slot, or -1. */
static int reap(lookup *lk)
{
    int free_slot = -1;
    for (int i = 0; i < MAX_CALLS; i++) {
        call *c = &lk->calls[i];
        pthread_mutex_lock(&lk->mu);
        int done = c->used && c->done;
        pthread_mutex_unlock(&lk->mu);
        if (done) {
            pthread_join(c->thread, NULL);
            c->used = 0;
        }
        if (!c->used && free_slot < 0) free_slot = i;
    }
    return free_slot;
}

static int lk_invoke(sl_op *ctx, sl_async_req req, const sl_row *row)
{
    lookup *lk = ctx->priv;
    int i = reap(lk);
    if (i < 0) return sl_async_fail(req, "lookup: too many requests at once") == SL_ERR ? SL_ERR : SL_OK;
    call *c = &lk->calls[i];
    *c = (call){.req = req, .id = row->vals[0].v.i, .used = 1, .fd = -1, .lk = lk};
    if (pthread_create(&c->thread, NULL, run_call, c) != 0) {
        c->used = 0;
        sl_async_fail(req, "lookup: cannot start a thread");
    }
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
    pthread_mutex_lock(&lk->mu);
    lk->stop = 1;
    for (int i = 0; i < MAX_CALLS; i++)
        if (lk->calls[i].used && lk->calls[i].fd >= 0) shutdown(lk->calls[i].fd, SHUT_RDWR);
    pthread_mutex_unlock(&lk->mu);
    for (int i = 0; i < MAX_CALLS; i++)
        if (lk->calls[i].used) pthread_join(lk->calls[i].thread, NULL);
    pthread_mutex_destroy(&lk->mu);
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
                          "retry.delay", "50 ms", "user.address", argv[1], NULL};
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
