/*
 * tls.c -- see tls.h.
 */
#include <stdio.h>
#include <string.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls.h"

static int fail(char *err, size_t errlen, const char *what, const char *path)
{
    char why[256];
    ERR_error_string_n(ERR_get_error(), why, sizeof why);
    ERR_clear_error();
    return sl_seterr(err, errlen, "%s %s: %s", what, path, why);
}

int sl_tls_internal(const sl_config *c, SSL_CTX **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!sl_config_bool(c, "security.ssl.internal.enabled")) return SL_OK;
    const char *ks = sl_config_str(c, "security.ssl.internal.keystore");
    const char *ts = sl_config_str(c, "security.ssl.internal.truststore");
    if (!*ks || !*ts)
        return sl_seterr(err, errlen, "security.ssl.internal.enabled needs "
                         "security.ssl.internal.keystore and security.ssl.internal.truststore "
                         "(PEM files)");
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    if (!ctx) return fail(err, errlen, "cannot make a TLS context for", "internal connections");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    int rc = SL_OK;
    if (SSL_CTX_use_certificate_chain_file(ctx, ks) != 1)
        rc = fail(err, errlen, "security.ssl.internal.keystore: no certificate in", ks);
    else if (SSL_CTX_use_PrivateKey_file(ctx, ks, SSL_FILETYPE_PEM) != 1)
        rc = fail(err, errlen, "security.ssl.internal.keystore: no private key in", ks);
    else if (SSL_CTX_check_private_key(ctx) != 1)
        rc = fail(err, errlen, "security.ssl.internal.keystore: the key does not match the certificate in", ks);
    else if (SSL_CTX_load_verify_locations(ctx, ts, NULL) != 1)
        rc = fail(err, errlen, "security.ssl.internal.truststore: no CA certificates in", ts);
    if (rc != SL_OK) {
        SSL_CTX_free(ctx);
        return rc;
    }
    /* both ends must present a certificate the truststore vouches for */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    *out = ctx;
    return SL_OK;
}

void sl_tls_free(SSL_CTX *ctx) { SSL_CTX_free(ctx); }

struct bufferevent *sl_tls_bev(struct event_base *base, SSL_CTX *ctx, evutil_socket_t fd, int server,
                               int options)
{
    if (!ctx) return bufferevent_socket_new(base, fd, options);
    SSL *ssl = SSL_new(ctx);
    SL_ASSERT(ssl);
    struct bufferevent *bev = bufferevent_openssl_socket_new(
        base, fd, ssl, server ? BUFFEREVENT_SSL_ACCEPTING : BUFFEREVENT_SSL_CONNECTING, options);
    SL_ASSERT(bev);
    /* a peer that just closes its socket is end of file, as without TLS */
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}

const char *sl_tls_error(struct bufferevent *bev, char *buf, size_t len)
{
    unsigned long e = bufferevent_get_openssl_error(bev);
    if (!e) return evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR());
    ERR_error_string_n(e, buf, len);
    while (bufferevent_get_openssl_error(bev)) {
    }
    return buf;
}
