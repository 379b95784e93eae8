/*
 * listen.c -- see listen.h.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "listen.h"

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
    struct evconnlistener *l = evconnlistener_new_bind(
        base, cb, arg, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64, (struct sockaddr *)&sin,
        sizeof sin);
    if (!l) {
        sl_seterr(err, errlen, "cannot listen on %s %s:%d: %s", what, bind, port, strerror(errno));
        return NULL;
    }
    struct sockaddr_in got;
    socklen_t len = sizeof got;
    getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&got, &len);
    *bound_port = ntohs(got.sin_port);
    return l;
}
