/*
 * blob.h -- little helpers for the versioned binary blobs operators write
 * as checkpoint state: little-endian integers and an FNV-1a checksum.
 */
#ifndef SL_BLOB_H
#define SL_BLOB_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t sl_blob_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Write v as `bytes` little-endian bytes; returns the position after. */
static inline unsigned char *sl_blob_put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int b = 0; b < bytes; b++) *p++ = (unsigned char)(v >> (8 * b));
    return p;
}

/* Read `bytes` little-endian bytes at *pp and advance it. */
static inline uint64_t sl_blob_get_le(const unsigned char **pp, int bytes)
{
    uint64_t v = 0;
    for (int b = 0; b < bytes; b++) v |= (uint64_t)(*pp)[b] << (8 * b);
    *pp += bytes;
    return v;
}

#endif
