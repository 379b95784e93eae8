/*
 * base64.h -- the one base64 (RFC 4648).
 *
 * Encoding writes the standard alphabet with '=' padding. Decoding takes
 * the standard or the URL-safe alphabet (section 5), even mixed, with the
 * padding present or left out, as the formats Sluice reads accept it;
 * anything else -- another character, '=' inside the text, a length that
 * leaves a single 6-bit group -- is refused. Trailing bits of the last
 * group are not checked (as the JSON formats of Flink do not).
 */
#ifndef SL_BASE64_H
#define SL_BASE64_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Encoded length of n bytes (padding included). */
#define SL_BASE64_ENC_LEN(n) (((n) + 2) / 3 * 4)
/* At most this many bytes decode from n characters of text. */
#define SL_BASE64_DEC_MAX(n) ((n) / 4 * 3 + 3)

/* p[0..n) encoded into dst (SL_BASE64_ENC_LEN(n) bytes, no NUL); returns
 * the length written. */
size_t sl_base64_encode_to(char *dst, const void *p, size_t n);

/* p[0..n) encoded and appended to b. */
void sl_base64_encode(sl_buf *b, const void *p, size_t n);

/* s[0..n) decoded into dst (room for SL_BASE64_DEC_MAX(n) bytes), the
 * length into *outlen. SL_OK, or SL_ERR for text that is not base64 (dst
 * then holds garbage). */
int sl_base64_decode_to(uint8_t *dst, const char *s, size_t n, size_t *outlen);

/* s[0..n) decoded and appended to b; SL_ERR (b unchanged) if not base64. */
int sl_base64_decode(sl_buf *b, const char *s, size_t n);

#endif
