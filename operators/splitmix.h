/*
 * splitmix.h -- the generators' randomness (datagen, nexmark): splitmix64,
 * a Weyl sequence through a strong finaliser; one uint64_t of state, so a
 * stream is cheap to keep per field or per event and to checkpoint.
 */
#ifndef SL_SPLITMIX_H
#define SL_SPLITMIX_H

#include <stdint.h>

/* The finaliser: a well-mixed 64-bit hash of z. */
static inline uint64_t sl_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t sl_rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    return sl_mix64(*s);
}

/* Uniform in [0, range) without modulo bias; range 0 means all 2^64. */
static inline uint64_t sl_rng_below(uint64_t *s, uint64_t range)
{
    uint64_t r = sl_rng_next(s);
    if (range == 0) return r;
    uint64_t threshold = -range % range; /* 2^64 mod range */
    while (r < threshold) r = sl_rng_next(s);
    return r % range;
}

#endif
