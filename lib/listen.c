/*
 * listen.c -- see listen.h.
 *
 * Accept errors. libevent's listener calls accept() while the socket is
 * readable; when accept() fails for want of descriptors (EMFILE, ENFILE) or
 * memory (ENOBUFS, ENOMEM) the pending connection stays in the backlog, the
 * socket stays readable, and the loop would call accept() again at once,
 * for ever: 100 % CPU and, with a log line per failure, a flood. So each
 * listener has a guard: on such an error it logs once for the episode,
 * disables the listener and re-enables it after SL_LISTEN_RETRY_MS (the
 * backlog keeps the connections waiting meanwhile); the first accept that
 * works with descriptors to spare ends the episode with one more line saying
 * how many attempts failed (an accept squeezed through by one freed
 * descriptor does not: the next would fail again). Runs on the listener's event-loop thread; the registry that maps
 * a listener to its guard (for sl_listen_free) is locked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <event2/event.h>

#include "listen.h"
#include "log.h"

#define TAG "net:listen"
#define SL_LISTEN_SPARE_FDS 8 /* descriptors free after an accept that ends an episode */

typedef struct guard {
    struct evconnlistener *l;
    evconnlistener_cb cb;       /* the caller's accept callback and argument */
    void *arg;
    char what[64];              /* "RPC port", for messages */
    struct event *retry;        /* re-enables the listener */
    int paused;                 /* in an episode of accept errors */
    uint64_t failures;          /* accept errors in this episode */
    struct guard *next;         /* registry */
} guard;

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static guard *registry;

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    guard *g = arg;
    if (g->failures) {
        /* One descriptor freed at the limit lets one accept through and the
         * next fail: that is the same episode. It is over once accepting
         * leaves descriptors to spare (they are allocated lowest first, so
         * the new one's number tells how many are open). */
        struct rlimit rl;
        int spare = getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
                    (rlim_t)fd + SL_LISTEN_SPARE_FDS < rl.rlim_cur;
        if (spare) {
            sl_info(TAG, "%s accepts connections again (%llu accept attempts failed meanwhile)",
                    g->what, (unsigned long long)g->failures);
            g->failures = 0;
        }
    }
    g->cb(l, fd, sa, salen, g->arg);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    SL_UNUSED(fd);
    SL_UNUSED(what);
    guard *g = arg;
    g->paused = 0;
    evconnlistener_enable(g->l);
}

static void on_error(struct evconnlistener *l, void *arg)
{
    guard *g = arg;
    int e = EVUTIL_SOCKET_ERROR();
    if (g->failures++ == 0) {
        struct rlimit rl;
        char lim[64] = "";
        if ((e == EMFILE || e == ENFILE) && getrlimit(RLIMIT_NOFILE, &rl) == 0)
            snprintf(lim, sizeof lim, " (descriptor limit %llu)", (unsigned long long)rl.rlim_cur);
        sl_warn(TAG,
                "%s cannot accept connections: %s%s; new connections wait in the backlog, retried "
                "every %d ms (said once until accepting works again)",
                g->what, strerror(e), lim, SL_LISTEN_RETRY_MS);
    }
    if (!g->paused) {
        g->paused = 1;
        evconnlistener_disable(l);
        struct timeval tv = {0, SL_LISTEN_RETRY_MS * 1000};
        event_add(g->retry, &tv);
    }
}

struct evconnlistener *sl_listen(struct event_base *base, const char *bind, int port,
                                 const char *what, evconnlistener_cb cb, void *arg,
                                 int *bound_port, char *err, size_t errlen)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    if (!bind || !*bind) bind = "0.0.0.0";
    /* Flink's shipped config.yaml binds to "localhost"; as the REST server does */
    if (!strcmp(bind, "localhost")) bind = "127.0.0.1";
    if (inet_pton(AF_INET, bind, &sin.sin_addr) != 1) {
        sl_seterr(err, errlen, "%s: bind address '%s' is not an IPv4 address", what, bind);
        return NULL;
    }
    guard *g = sl_calloc(1, sizeof *g);
    g->cb = cb;
    g->arg = arg;
    snprintf(g->what, sizeof g->what, "%s", what);
    struct evconnlistener *l = evconnlistener_new_bind(
        base, on_accept, g, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64, (struct sockaddr *)&sin,
        sizeof sin);
    if (!l) {
        sl_seterr(err, errlen, "cannot listen on %s %s:%d: %s", what, bind, port, strerror(errno));
        free(g);
        return NULL;
    }
    g->l = l;
    g->retry = evtimer_new(base, on_retry, g);
    evconnlistener_set_error_cb(l, on_error);
    pthread_mutex_lock(&registry_mu);
    g->next = registry;
    registry = g;
    pthread_mutex_unlock(&registry_mu);
    struct sockaddr_in got;
    socklen_t len = sizeof got;
    getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&got, &len);
    *bound_port = ntohs(got.sin_port);
    return l;
}

void sl_listen_free(struct evconnlistener *l)
{
    if (!l) return;
    guard *g = NULL;
    pthread_mutex_lock(&registry_mu);
    for (guard **pp = &registry; *pp; pp = &(*pp)->next)
        if ((*pp)->l == l) {
            g = *pp;
            *pp = g->next;
            break;
        }
    pthread_mutex_unlock(&registry_mu);
    evconnlistener_free(l);
    if (g) {
        event_free(g->retry);
        free(g);
    }
}
