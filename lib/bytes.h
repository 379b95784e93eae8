/*
 * bytes.h -- the one set of byte-order helpers: fixed-width integers (and
 * doubles) stored at unaligned addresses in a chosen byte order.
 *
 * Everything Sluice writes that outlives a process or crosses a host -- row
 * bytes, state keys and values, snapshot files, frames on a socket -- is in
 * an explicit byte order, so it reads the same on any host. `le` is
 * little-endian (row format, accumulators, snapshot files, data-frame
 * headers), `be` big-endian (control-frame lengths, state keys, where byte
 * order must be numeric order). `sl_load_u32/u64` are native-order loads,
 * for hashing only, where the byte order of the host does not matter.
 *
 * Every function is a plain unaligned copy, plus a byte swap where the
 * host's order differs; compilers turn each into one load or store.
 */
#ifndef SL_BYTES_H
#define SL_BYTES_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define SL_HOST_BE 1
#else
#define SL_HOST_BE 0 /* little endian: every host Sluice is built for today */
#endif

static inline uint16_t sl_bswap16(uint16_t x) { return (uint16_t)(x >> 8 | x << 8); }
static inline uint32_t sl_bswap32(uint32_t x) { return __builtin_bswap32(x); }
static inline uint64_t sl_bswap64(uint64_t x) { return __builtin_bswap64(x); }

/* ---- native order (hashing) ------------------------------------------------ */

static inline uint32_t sl_load_u32(const void *p)
{
    uint32_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

static inline uint64_t sl_load_u64(const void *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

/* ---- little endian ----------------------------------------------------------- */

static inline void sl_put_le16(void *p, uint16_t x)
{
    if (SL_HOST_BE) x = sl_bswap16(x);
    memcpy(p, &x, sizeof x);
}

static inline void sl_put_le32(void *p, uint32_t x)
{
    if (SL_HOST_BE) x = sl_bswap32(x);
    memcpy(p, &x, sizeof x);
}

static inline void sl_put_le64(void *p, uint64_t x)
{
    if (SL_HOST_BE) x = sl_bswap64(x);
    memcpy(p, &x, sizeof x);
}

static inline uint16_t sl_get_le16(const void *p)
{
    uint16_t x;
    memcpy(&x, p, sizeof x);
    return SL_HOST_BE ? sl_bswap16(x) : x;
}

static inline uint32_t sl_get_le32(const void *p)
{
    uint32_t x;
    memcpy(&x, p, sizeof x);
    return SL_HOST_BE ? sl_bswap32(x) : x;
}

static inline uint64_t sl_get_le64(const void *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return SL_HOST_BE ? sl_bswap64(x) : x;
}

/* Signed and floating-point forms of the 64-bit little-endian field. */
static inline void sl_put_lei64(void *p, int64_t v) { sl_put_le64(p, (uint64_t)v); }
static inline int64_t sl_get_lei64(const void *p) { return (int64_t)sl_get_le64(p); }

static inline void sl_put_ledbl(void *p, double d)
{
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    sl_put_le64(p, x);
}

static inline double sl_get_ledbl(const void *p)
{
    uint64_t x = sl_get_le64(p);
    double d;
    memcpy(&d, &x, sizeof d);
    return d;
}

/* ---- big endian -------------------------------------------------------------- */

static inline void sl_put_be16(void *p, uint16_t x)
{
    if (!SL_HOST_BE) x = sl_bswap16(x);
    memcpy(p, &x, sizeof x);
}

static inline void sl_put_be32(void *p, uint32_t x)
{
    if (!SL_HOST_BE) x = sl_bswap32(x);
    memcpy(p, &x, sizeof x);
}

static inline void sl_put_be64(void *p, uint64_t x)
{
    if (!SL_HOST_BE) x = sl_bswap64(x);
    memcpy(p, &x, sizeof x);
}

static inline uint16_t sl_get_be16(const void *p)
{
    uint16_t x;
    memcpy(&x, p, sizeof x);
    return SL_HOST_BE ? x : sl_bswap16(x);
}

static inline uint32_t sl_get_be32(const void *p)
{
    uint32_t x;
    memcpy(&x, p, sizeof x);
    return SL_HOST_BE ? x : sl_bswap32(x);
}

static inline uint64_t sl_get_be64(const void *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return SL_HOST_BE ? x : sl_bswap64(x);
}

/* ---- cursors over little-endian fields of any width ------------------------------ */

/* Write the low `bytes` bytes (1..8) of v at p, least significant first;
 * returns the position after them. For blobs written field by field. */
static inline unsigned char *sl_put_le_n(unsigned char *p, uint64_t v, int bytes)
{
    for (int b = 0; b < bytes; b++) *p++ = (unsigned char)(v >> (8 * b));
    return p;
}

/* Read `bytes` bytes (1..8) at *pp as a little-endian number and advance
 * *pp past them. */
static inline uint64_t sl_get_le_n(const unsigned char **pp, int bytes)
{
    uint64_t v = 0;
    for (int b = 0; b < bytes; b++) v |= (uint64_t)(*pp)[b] << (8 * b);
    *pp += bytes;
    return v;
}

#endif
