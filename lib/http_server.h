/*
 * http_server.h -- the one libmicrohttpd server set-up: the JobManager's
 * REST API, the Prometheus reporter and the SQL gateway each describe their
 * server in an sl_http_conf and start it here, so the address parsing, the
 * TLS credentials, the thread model and the connection limits are written
 * once. The handlers stay the callers' (libmicrohttpd's callback types).
 */
#ifndef SL_HTTP_SERVER_H
#define SL_HTTP_SERVER_H

#include <microhttpd.h>

#include "sl.h"

typedef struct sl_http_conf {
    const char *what;       /* for messages: "the REST server", "rest.bind-address" */
    const char *bind_key;   /* the configuration key of the address, for messages */
    const char *bind;       /* IPv4 address or "localhost"; NULL or "" = 127.0.0.1;
                               "0.0.0.0" = every interface */
    int port;               /* 0: any free port */
    unsigned threads;       /* REST-style thread pool of this size (epoll); 0: one
                               internal polling thread */
    unsigned idle_timeout_s;        /* libmicrohttpd's idle limit (restarted by every byte) */
    unsigned connection_limit;      /* 0: libmicrohttpd's default */
    unsigned per_ip_limit;          /* 0: none */
    const char *tls_pem;    /* certificate chain and key in one PEM text, or NULL (HTTP) */
    MHD_AccessHandlerCallback handler;
    void *handler_cls;
    MHD_RequestCompletedCallback completed; /* or NULL */
    void *completed_cls;
    MHD_NotifyConnectionCallback notify_connection; /* or NULL */
    void *notify_connection_cls;
} sl_http_conf;

/* Start the server; *port gets the port it listens on (the one asked, or
 * the free one picked). NULL with err naming the address, the port and the
 * likely cause. */
struct MHD_Daemon *sl_http_start(const sl_http_conf *c, int *port, char *err, size_t errlen);

#endif
