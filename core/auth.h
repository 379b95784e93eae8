/*
 * auth.h -- the shared cluster secret and the challenge-response that
 * proves it at the start of every RPC and data connection.
 *
 * Each side sends a fresh random nonce; each answers with
 * HMAC-SHA256(secret, label || its peer's nonce || its own nonce || id),
 * where the label names the role (so one side's answer can never be
 * replayed as the other's) and id is the TaskManager the connection speaks
 * for. Neither the secret nor anything derived from it alone crosses the
 * wire. The secret comes from security.cluster.secret or the file named by
 * security.cluster.secret-file (docs/CONFIG.md); none configured means no
 * authentication, as before.
 */
#ifndef SL_AUTH_H
#define SL_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"

#define SL_AUTH_NONCE 32
#define SL_AUTH_MAC 32

typedef struct sl_auth {
    uint8_t *key;               /* NULL: no secret configured */
    size_t len;
} sl_auth;

/* The secret the configuration names; SL_ERR with err when the file cannot
 * be read, is empty, or both keys are set. */
int sl_auth_load(sl_auth *a, const sl_config *c, char *err, size_t errlen);
void sl_auth_free(sl_auth *a);
static inline int sl_auth_on(const sl_auth *a) { return a->key != NULL; }

/* SL_AUTH_NONCE random bytes (OpenSSL's generator). */
void sl_auth_nonce(uint8_t *out);
/* out = HMAC-SHA256(secret, label || theirs || ours || id). */
void sl_auth_mac(const sl_auth *a, const char *label, const uint8_t *theirs, const uint8_t *ours,
                 const char *id, uint8_t *out);
/* Whether mac[len] is that answer (constant time). */
int sl_auth_check(const sl_auth *a, const char *label, const uint8_t *theirs, const uint8_t *ours,
                  const char *id, const uint8_t *mac, size_t len);

#endif
