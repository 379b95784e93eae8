/*
 * keygroup.c -- the key hash and the default number of key groups.
 *
 * sl_murmur3_32 is MurmurHash3's 32-bit x86 variant: the input is consumed
 * four bytes at a time as little-endian words (read byte by byte, so any
 * alignment and any host byte order give the same hash), each word is mixed
 * into the state, the 1-3 trailing bytes are mixed in last, and a final
 * avalanche spreads every input bit over the result. The hash must never
 * change: key groups, and therefore where keyed state lives in checkpoints
 * and savepoints, are derived from it.
 *
 * The range/ownership arithmetic itself is inline in keygroup.h.
 */
#include "bytes.h"
#include "keygroup.h"
#include "jobgraph.h"

static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static inline uint32_t mix_word(uint32_t k)
{
    k *= 0xcc9e2d51u;
    k = rotl32(k, 15);
    k *= 0x1b873593u;
    return k;
}

uint32_t sl_murmur3_32(const void *data, size_t len, uint32_t seed)
{
    const uint8_t *p = data;
    uint32_t h = seed;
    size_t nblocks = len / 4;

    for (size_t i = 0; i < nblocks; i++, p += 4) {
        uint32_t k = sl_get_le32(p);
        h ^= mix_word(k);
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }

    uint32_t k = 0;
    switch (len & 3) {
    case 3: k ^= (uint32_t)p[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)p[1] << 8;  /* fall through */
    case 1:
        k ^= p[0];
        h ^= mix_word(k);
        break;
    default: break;
    }

    /* The input length is mixed in (modulo 2^32, as the algorithm defines). */
    h ^= (uint32_t)len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* Flink's default: min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768). */
int sl_kg_default_max_parallelism(int p)
{
    int64_t want = (int64_t)p + p / 2;
    int64_t pow2 = 1;
    while (pow2 < want && pow2 < 32768) pow2 <<= 1;
    if (pow2 < 128) pow2 = 128;
    if (pow2 > 32768) pow2 = 32768;
    return (int)pow2;
}
