/*
 * buffer.h -- network buffers and the bounded pools they come from.
 *
 * Every record that leaves a task is serialized into a fixed-size buffer
 * (taskmanager.memory.segment-size, 32 KiB) taken from a pool whose size is
 * fixed when the task is deployed. A producer that finds its pool empty
 * blocks in sl_pool_get() until a consumer recycles a buffer: that wait is
 * the task's backpressured time, and it is why a slow consumer costs time,
 * never memory.
 *
 * A buffer returns to where it came from through its recycle callback:
 * to its pool (producer buffers, also after a local consumer read them) or
 * to the network thread (receive buffers, which become credit again).
 *
 * A pool may be closed (job cancelled): waiters wake up and get NULL. Its
 * memory is freed when it is closed and every buffer has come back, so a
 * buffer still queued in a socket or a gate never points at freed memory.
 *
 * Elements inside a buffer: u8 tag, u32 length (little endian), payload.
 */
#ifndef SL_BUFFER_H
#define SL_BUFFER_H

#include <pthread.h>
#include "sl.h"
#include "queue.h"

enum {
    SL_EL_RECORD = 1,    /* i64 event timestamp, then the row encoding */
    SL_EL_WATERMARK = 2, /* i64 watermark */
    SL_EL_END = 3,       /* end of partition: no more data on this channel */
    SL_EL_IDLE = 4,      /* u8: 1 = the stream is idle (no watermarks for a while),
                            0 = active (again); also every channel's first
                            element, alone in its buffer (runtime/valve.h) */
    SL_EL_BARRIER = 5,   /* u64 checkpoint id, i64 trigger time, u8 flags,
                            u16 length + the snapshot directory; always the
                            last element of its buffer */
    SL_EL_LATENCY = 8,   /* a latency marker (metrics.latency.interval): i64
                            wall ms its source made it, u32 the source's
                            vertex index, u32 its subtask. Forwarded by
                            every task to one random channel, never held */
};

#define SL_EL_HDR 5

typedef struct sl_netbuf sl_netbuf;
typedef struct sl_pool sl_pool;

struct sl_netbuf {
    uint8_t *data;
    uint32_t len;        /* bytes used, 0 <= len <= cap */
    uint32_t cap;        /* its pool's size, or less while a producer fills it
                            to a debloated size (debloat.h) */
    int chan;            /* input channel index at the receiving gate */
    int owner;           /* receive buffers: id of the channel whose exclusive
                            buffer this is, or -1 when it is a floating one */
    sl_pool *pool;       /* owner */
    void (*recycle)(sl_netbuf *b); /* who takes it back; default sl_pool_put */
    void *recycle_ctx;
    sl_netbuf *next;        /* intrusive link for pools, gates and send queues */
    uint8_t prio;        /* an unaligned checkpoint's barrier: goes ahead of the
                            buffers queued at a gate or on a send queue */
    int overtaken;       /* prio at a gate: buffers of its channel it went ahead of */
    uint64_t barrier;    /* a producer's buffer ending with the in-band barrier
                            of this checkpoint, 0 = none (found in a remote send
                            queue when an aligned-checkpoint-timeout passes) */
    sl_qmsg qm;          /* receive buffers: TM_OP_RECV_BACK on the network
                            thread's inbox (tm.h) */
};

struct sl_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sl_netbuf *free;
    int nfree;
    int total;
    uint32_t size;       /* each buffer's full size: a buffer's cap again when taken */
    int cancelled;       /* waiters get NULL; the owner still closes it */
    int closed;          /* the owner is done: freed once every buffer is back */
    uint8_t *mem;        /* total * size bytes */
    sl_netbuf *bufs;        /* total headers */
};

sl_pool *sl_pool_new(int nbufs, uint32_t size);
/* Block until a buffer is free; *waited_ns gets the time spent blocked.
 * NULL when the pool is closed. */
sl_netbuf *sl_pool_get(sl_pool *p, int64_t *waited_ns);
sl_netbuf *sl_pool_tryget(sl_pool *p);
/* sl_pool_get that gives up after timeout_ns: NULL with *timed_out set
 * (else NULL means cancelled). */
sl_netbuf *sl_pool_get_timed(sl_pool *p, int64_t timeout_ns, int64_t *waited_ns, int *timed_out);
void sl_pool_put(sl_netbuf *b);
/* A buffer of its own (malloc'd, freed by its recycle) for a priority
 * barrier, which must not wait for a pool: at most one per channel and
 * checkpoint. */
sl_netbuf *sl_netbuf_heap(uint32_t size);
/* Cancel: wake waiters, who get NULL from now on (any thread). */
void sl_pool_cancel(sl_pool *p);
/* Close (owner, once): as cancel, and free the memory once every buffer is
 * back. The owner must not touch the pool afterwards. */
void sl_pool_close(sl_pool *p);
float sl_pool_usage(sl_pool *p); /* share of buffers in use, 0..1 */

static inline void sl_buf_recycle(sl_netbuf *b) { b->recycle(b); }

#endif
