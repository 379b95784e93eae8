/*
 * keygroup.h -- key groups: the unit of keyed state and of rescaling.
 *
 * A key's group is murmur3_32(serialized key bytes, seed 0) mod
 * maxParallelism. Subtask i of p owns the contiguous inclusive range
 * [(i*maxP + p - 1)/p, ((i+1)*maxP - 1)/p], and a group is routed to
 * subtask kg*p/maxP -- the same law as Flink's, so state written per key
 * group can be re-split for any parallelism <= maxParallelism.
 */
#ifndef SL_KEYGROUP_H
#define SL_KEYGROUP_H

#include "sl.h"

uint32_t sl_murmur3_32(const void *data, size_t len, uint32_t seed);

static inline int sl_kg_of_hash(uint32_t h, int max_parallelism)
{
    return (int)(h % (uint32_t)max_parallelism);
}

static inline int sl_kg_of_key(const void *key, size_t len, int max_parallelism)
{
    return sl_kg_of_hash(sl_murmur3_32(key, len, 0), max_parallelism);
}

static inline int sl_kg_operator_index(int kg, int parallelism, int max_parallelism)
{
    return (int)((int64_t)kg * parallelism / max_parallelism);
}

static inline void sl_kg_range(int subtask, int parallelism, int max_parallelism, int *first,
                               int *last)
{
    *first = (int)(((int64_t)subtask * max_parallelism + parallelism - 1) / parallelism);
    *last = (int)((((int64_t)subtask + 1) * max_parallelism - 1) / parallelism);
}

#endif
