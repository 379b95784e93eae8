/*
 * http_server.c -- the one libmicrohttpd server set-up (http_server.h).
 */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "http_server.h"

struct MHD_Daemon *sl_http_start(const sl_http_conf *c, int *port, char *err, size_t errlen)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)c->port);
    const char *bind = c->bind && *c->bind ? c->bind : "127.0.0.1";
    if (!strcmp(bind, "localhost")) bind = "127.0.0.1";
    if (inet_pton(AF_INET, bind, &sin.sin_addr) != 1) {
        sl_seterr(err, errlen, "%s: '%s' is not an IPv4 address", c->bind_key, bind);
        return NULL;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (c->threads) flags |= MHD_USE_AUTO; /* epoll: each thread serves hundreds */
    if (c->tls_pem) {
        if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
            sl_seterr(err, errlen, "%s: this libmicrohttpd has no TLS", c->what);
            return NULL;
        }
        flags |= MHD_USE_TLS;
    }
    /* options by need: libmicrohttpd refuses the HTTPS ones without TLS */
    struct MHD_OptionItem o[16];
    int n = 0;
#define OPT(k, v, p) (o[n++] = (struct MHD_OptionItem){(k), (intptr_t)(v), (p)})
    OPT(MHD_OPTION_SOCK_ADDR, 0, &sin);
    if (c->tls_pem) {
        OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)c->tls_pem); /* GnuTLS finds each block */
        OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)c->tls_pem);
    }
    if (c->threads) OPT(MHD_OPTION_THREAD_POOL_SIZE, c->threads, NULL);
    if (c->completed) OPT(MHD_OPTION_NOTIFY_COMPLETED, c->completed, c->completed_cls);
    if (c->notify_connection)
        OPT(MHD_OPTION_NOTIFY_CONNECTION, c->notify_connection, c->notify_connection_cls);
    if (c->idle_timeout_s) OPT(MHD_OPTION_CONNECTION_TIMEOUT, c->idle_timeout_s, NULL);
    if (c->connection_limit) OPT(MHD_OPTION_CONNECTION_LIMIT, c->connection_limit, NULL);
    if (c->per_ip_limit) OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_ip_limit, NULL);
    OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
    struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, c->handler, c->handler_cls,
                                            MHD_OPTION_ARRAY, o, MHD_OPTION_END);
    if (!d) {
        sl_seterr(err, errlen, "cannot start %s on %s:%d (port in use%s?)", c->what, bind, c->port,
                  c->tls_pem ? ", or a keystore GnuTLS cannot read" : "");
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    if (port) *port = info ? info->port : c->port;
    return d;
}
