/*
 * blob.h -- the checksum of the versioned binary blobs operators write as
 * checkpoint state (the last 8 bytes of each blob: FNV-1a 64 of all before
 * them). The blobs' fields are written and read with bytes.h's cursors
 * (sl_put_le_n, sl_get_le_n), included here for them.
 */
#ifndef SL_BLOB_H
#define SL_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

static inline uint64_t sl_blob_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

#endif
