/*
 * base64.c -- base64 encoding and decoding (base64.h). Decoding goes
 * through a 256-entry table built at compile time: both alphabets map to
 * the same values, everything else to -1.
 */
#include "base64.h"

static const char enc_tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t sl_base64_encode_to(char *dst, const void *src, size_t n)
{
    const uint8_t *p = src;
    char *o = dst;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t x = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = enc_tab[x >> 18 & 63];
        *o++ = enc_tab[x >> 12 & 63];
        *o++ = enc_tab[x >> 6 & 63];
        *o++ = enc_tab[x & 63];
    }
    if (i < n) {
        uint32_t x = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = enc_tab[x >> 18 & 63];
        *o++ = enc_tab[x >> 12 & 63];
        *o++ = i + 1 < n ? enc_tab[x >> 6 & 63] : '=';
        *o++ = '=';
    }
    return (size_t)(o - dst);
}

void sl_base64_encode(sl_buf *b, const void *p, size_t n)
{
    char *dst = sl_buf_room(b, SL_BASE64_ENC_LEN(n));
    sl_buf_added(b, sl_base64_encode_to(dst, p, n));
}

#define X(c, v) [(unsigned char)(c)] = (v) + 1
/* value + 1 of each character of either alphabet; 0: not base64 */
static const uint8_t dec_tab[256] = {
    X('A', 0),  X('B', 1),  X('C', 2),  X('D', 3),  X('E', 4),  X('F', 5),  X('G', 6),
    X('H', 7),  X('I', 8),  X('J', 9),  X('K', 10), X('L', 11), X('M', 12), X('N', 13),
    X('O', 14), X('P', 15), X('Q', 16), X('R', 17), X('S', 18), X('T', 19), X('U', 20),
    X('V', 21), X('W', 22), X('X', 23), X('Y', 24), X('Z', 25), X('a', 26), X('b', 27),
    X('c', 28), X('d', 29), X('e', 30), X('f', 31), X('g', 32), X('h', 33), X('i', 34),
    X('j', 35), X('k', 36), X('l', 37), X('m', 38), X('n', 39), X('o', 40), X('p', 41),
    X('q', 42), X('r', 43), X('s', 44), X('t', 45), X('u', 46), X('v', 47), X('w', 48),
    X('x', 49), X('y', 50), X('z', 51), X('0', 52), X('1', 53), X('2', 54), X('3', 55),
    X('4', 56), X('5', 57), X('6', 58), X('7', 59), X('8', 60), X('9', 61), X('+', 62),
    X('-', 62), X('/', 63), X('_', 63),
};
#undef X

int sl_base64_decode_to(uint8_t *dst, const char *s, size_t n, size_t *outlen)
{
    while (n > 0 && s[n - 1] == '=') n--;
    if (n % 4 == 1) return SL_ERR;
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v = dec_tab[(unsigned char)s[i]];
        if (v == 0) return SL_ERR;
        acc = acc << 6 | (v - 1);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            dst[k++] = (uint8_t)(acc >> bits);
        }
    }
    *outlen = k;
    return SL_OK;
}

int sl_base64_decode(sl_buf *b, const char *s, size_t n)
{
    size_t k;
    uint8_t *dst = (uint8_t *)sl_buf_room(b, SL_BASE64_DEC_MAX(n));
    if (sl_base64_decode_to(dst, s, n, &k) != SL_OK) {
        b->p[b->len] = '\0';
        return SL_ERR;
    }
    sl_buf_added(b, k);
    return SL_OK;
}
