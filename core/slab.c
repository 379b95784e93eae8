/*
 * slab.c -- see slab.h.
 */
#include <stdlib.h>
#include <string.h>

#include "sl.h"
#include "slab.h"

#define BLOCK_HEAD 16 /* the link to the next block, kept 16-byte aligned */

void sl_slab_init(sl_slab *sb)
{
    memset(sb, 0, sizeof *sb);
    atomic_init(&sb->remote, NULL);
}

static void file_piece(sl_slab *sb, sl_slab_piece *f, size_t size)
{
    f->size = (uint32_t)size;
    f->next = sb->free[size / 8];
    sb->free[size / 8] = f;
}

void *sl_slab_alloc(sl_slab *sb, size_t size)
{
    if (size > SL_SLAB_MAX) return sl_malloc(size);
    size_t c = size / 8;
    if (!sb->free[c] && atomic_load_explicit(&sb->remote, memory_order_relaxed)) {
        sl_slab_piece *f = atomic_exchange_explicit(&sb->remote, NULL, memory_order_acquire);
        while (f) {
            sl_slab_piece *next = f->next;
            file_piece(sb, f, f->size);
            f = next;
        }
    }
    if (sb->free[c]) {
        sl_slab_piece *f = sb->free[c];
        sb->free[c] = f->next;
        return f;
    }
    if (sb->left < size) {
        if (sb->left >= sizeof(sl_slab_piece)) /* the old block's tail, to the list of its size */
            file_piece(sb, (sl_slab_piece *)(void *)sb->cur, sb->left);
        uint8_t *b = sl_malloc(SL_SLAB_BLOCK);
        memcpy(b, &sb->blocks, sizeof sb->blocks);
        sb->blocks = b;
        sb->cur = b + BLOCK_HEAD;
        sb->left = SL_SLAB_BLOCK - BLOCK_HEAD;
    }
    void *p = sb->cur;
    sb->cur += size;
    sb->left -= size;
    return p;
}

void sl_slab_free(sl_slab *sb, void *p, size_t size)
{
    if (size > SL_SLAB_MAX) free(p);
    else file_piece(sb, p, size);
}

void sl_slab_free_remote(sl_slab *sb, void *p, size_t size)
{
    if (size > SL_SLAB_MAX) {
        free(p);
        return;
    }
    sl_slab_piece *f = p;
    f->size = (uint32_t)size;
    sl_slab_piece *head = atomic_load_explicit(&sb->remote, memory_order_relaxed);
    do f->next = head;
    while (!atomic_compare_exchange_weak_explicit(&sb->remote, &head, f, memory_order_release,
                                                  memory_order_relaxed));
}

void sl_slab_release(sl_slab *sb)
{
    void *b = sb->blocks;
    while (b) {
        void *next;
        memcpy(&next, b, sizeof next);
        free(b);
        b = next;
    }
    sb->blocks = NULL;
}
