/*
 * auth.c -- see auth.h. HMAC-SHA256 and the nonces are OpenSSL's (libcrypto).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "auth.h"

#define SECRET_FILE_MAX 4096

int sl_auth_load(sl_auth *a, const sl_config *c, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    const char *text = sl_config_str(c, "security.cluster.secret");
    const char *path = sl_config_str(c, "security.cluster.secret-file");
    if (*text && *path)
        return sl_seterr(err, errlen, "security.cluster.secret and security.cluster.secret-file "
                         "are both set; set one");
    if (*text) {
        a->len = strlen(text);
        a->key = (uint8_t *)sl_strdup(text);
        return SL_OK;
    }
    if (!*path) return SL_OK;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sl_seterr(err, errlen, "security.cluster.secret-file: cannot open %s: %s", path,
                         strerror(errno));
    uint8_t *buf = sl_malloc(SECRET_FILE_MAX + 1);
    size_t n = fread(buf, 1, SECRET_FILE_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--; /* a trailing newline is not part of it */
    if (bad || n == 0 || n > SECRET_FILE_MAX) {
        free(buf);
        return sl_seterr(err, errlen, "security.cluster.secret-file: %s %s", path,
                         bad ? "cannot be read" : n ? "is longer than 4096 bytes" : "is empty");
    }
    a->key = buf;
    a->len = n;
    return SL_OK;
}

void sl_auth_free(sl_auth *a)
{
    if (a->key) OPENSSL_cleanse(a->key, a->len);
    free(a->key);
    a->key = NULL;
    a->len = 0;
}

void sl_auth_nonce(uint8_t *out)
{
    if (RAND_bytes(out, SL_AUTH_NONCE) != 1) SL_ASSERT(!"RAND_bytes failed");
}

void sl_auth_mac(const sl_auth *a, const char *label, const uint8_t *theirs, const uint8_t *ours,
                 const char *id, uint8_t *out)
{
    size_t ll = strlen(label) + 1, il = strlen(id);
    size_t n = ll + 2 * SL_AUTH_NONCE + il;
    uint8_t *msg = sl_malloc(n);
    memcpy(msg, label, ll); /* with its NUL: the label cannot run into the nonce */
    memcpy(msg + ll, theirs, SL_AUTH_NONCE);
    memcpy(msg + ll + SL_AUTH_NONCE, ours, SL_AUTH_NONCE);
    memcpy(msg + ll + 2 * SL_AUTH_NONCE, id, il);
    unsigned int outlen = 0;
    if (!HMAC(EVP_sha256(), a->key, (int)a->len, msg, n, out, &outlen) || outlen != SL_AUTH_MAC)
        SL_ASSERT(!"HMAC-SHA256 failed");
    free(msg);
}

int sl_auth_check(const sl_auth *a, const char *label, const uint8_t *theirs, const uint8_t *ours,
                  const char *id, const uint8_t *mac, size_t len)
{
    if (len != SL_AUTH_MAC) return 0;
    uint8_t want[SL_AUTH_MAC];
    sl_auth_mac(a, label, theirs, ours, id, want);
    return CRYPTO_memcmp(want, mac, SL_AUTH_MAC) == 0;
}
