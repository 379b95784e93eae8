/*
 * debloat.h -- buffer debloating (taskmanager.network.memory.buffer-debloat.*),
 * Flink's answer to in-flight data that makes barriers slow under
 * backpressure.
 *
 * Each consumer task measures, every `period`, the bytes it consumed over
 * the time it was not idle waiting for input (its throughput), and works
 * out the buffer size at which the buffers in use before its gate (queued
 * there) hold about `target` worth of that throughput:
 * throughput x target / buffers, smoothed by an exponential moving average
 * over `samples` periods and clamped to [min-segment-size, segment-size].
 * A size that moved by at least `threshold-percentages` (or reached a
 * bound) is announced: stored in the gate (tm_gate.buf_size), where
 * producers on this TaskManager read it for every new buffer they start,
 * and carried to remote producers in the `b` field of the CREDIT frames
 * the gate's channels send. A producer hands a buffer on once it holds that
 * many bytes, so a pool of a fixed number of buffers holds less data.
 *
 * The task thread owns the debloater; the figures it publishes
 * (debloatedBufferSize, estimatedTimeToConsumeBuffersMs) are relaxed
 * atomics read by the heartbeat. Nothing here runs per record: a tick per
 * period, from the loop that already reads the clock per buffer.
 */
#ifndef SL_TM_DEBLOAT_H
#define SL_TM_DEBLOAT_H

#include "sl.h"
#include "config.h"

typedef struct tm_debloat {
    int64_t target_ms, period_ns;
    double alpha;               /* 2 / (samples + 1) */
    int threshold_pct;
    uint32_t min_size, max_size;
    int64_t start_ns;           /* this period's start, 0 = not started */
    uint64_t bytes0, idle0;     /* bytes consumed and idle ns at its start */
    double size_ema;            /* the smoothed buffer size */
    uint32_t announced;         /* last size announced (max_size at first) */
    /* published (relaxed atomics) */
    int64_t size_pub;           /* debloatedBufferSize */
    int64_t ttc_ms_pub;         /* estimatedTimeToConsumeBuffersMs */
} tm_debloat;

tm_debloat *tm_debloat_new(const sl_config *c, uint32_t seg_size);
void tm_debloat_free(tm_debloat *db); /* NULL is a no-op */
/* At monotonic now, with the task's totals so far (bytes consumed, ns
 * idle) and the buffers in use before its gate: recompute once a period
 * has passed. Returns the size to announce, or 0 for no change. */
uint32_t tm_debloat_tick(tm_debloat *db, int64_t now, uint64_t bytes, uint64_t idle_ns, int buffers);
/* The size formula alone (for tests): the new smoothed size from the old
 * one for a throughput (bytes/s) and buffers in use. */
double tm_debloat_size(const tm_debloat *db, double old_size, double throughput, int buffers);

#endif
