/*
 * slab.h -- small pieces of memory carved from 64 KiB blocks, for structures
 * that allocate many of them one at a time on one thread (keyed-state
 * entries, timer nodes): no malloc per piece and no malloc header beside
 * it. Sizes are multiples of 8; a piece of up to SL_SLAB_MAX bytes comes
 * from the free list of its size or the current block's tail, a larger one
 * from malloc. The owning thread frees into the free lists; another thread
 * pushes the piece onto a lock-free stack, which the owner takes whole when
 * a free list is empty. Blocks go back only when the slab is released.
 */
#ifndef SL_SLAB_H
#define SL_SLAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SL_SLAB_MAX 256
#define SL_SLAB_BLOCK (64 * 1024)

typedef struct sl_slab_piece {
    struct sl_slab_piece *next;
    uint32_t size;
} sl_slab_piece;

typedef struct sl_slab {
    _Atomic(sl_slab_piece *) remote;           /* freed off the owning thread */
    sl_slab_piece *free[SL_SLAB_MAX / 8 + 1];  /* per size / 8 (owning thread) */
    uint8_t *cur;                             /* the current block's unused tail */
    size_t left;
    void *blocks;                             /* every block, linked through its first word */
} sl_slab;

void sl_slab_init(sl_slab *sb);
/* size: a multiple of 8, at least sizeof(sl_slab_piece). */
void *sl_slab_alloc(sl_slab *sb, size_t size);
/* p of `size` back, on the owning thread / on any other. */
void sl_slab_free(sl_slab *sb, void *p, size_t size);
void sl_slab_free_remote(sl_slab *sb, void *p, size_t size);
/* Every block back (pieces larger than SL_SLAB_MAX are the caller's to free). */
void sl_slab_release(sl_slab *sb);

#endif
