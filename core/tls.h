/*
 * tls.h -- mutual TLS on the cluster's internal connections (RPC and data),
 * Flink's security.ssl.internal.*: with security.ssl.internal.enabled every
 * connection is TLS (1.2 or later), and both ends present a certificate
 * (security.ssl.internal.keystore: a PEM file holding the certificate chain
 * and its private key) that must chain to the CA certificates in
 * security.ssl.internal.truststore (PEM). A peer without such a
 * certificate fails the handshake and never gets to send a message.
 * OpenSSL through libevent's bufferevent_openssl.
 */
#ifndef SL_TLS_H
#define SL_TLS_H

#include <event2/bufferevent.h>
#include "config.h"

typedef struct ssl_ctx_st SSL_CTX;

/* The context the configuration asks for: *out NULL when internal TLS is
 * off. SL_ERR with err (naming the file and OpenSSL's reason) when a file
 * is missing or does not hold what it should. */
int sl_tls_internal(const sl_config *c, SSL_CTX **out, char *err, size_t errlen);
void sl_tls_free(SSL_CTX *ctx);
/* A bufferevent on fd (-1: to connect later): a plain socket one without
 * ctx, else TLS, accepting (server) or connecting. */
struct bufferevent *sl_tls_bev(struct event_base *base, SSL_CTX *ctx, evutil_socket_t fd, int server,
                               int options);
/* Why a connection failed: OpenSSL's error for a TLS bufferevent, else the
 * socket error. */
const char *sl_tls_error(struct bufferevent *bev, char *buf, size_t len);

#endif
