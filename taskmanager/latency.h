/*
 * latency.h -- Flink's latency tracking on a TaskManager: the histograms of
 * the latency markers a task's operators see (metrics.latency.interval).
 *
 * A source task makes a marker every interval (its wall time, its vertex,
 * its subtask); every task forwards it to one random output channel
 * without holding it (exchange.c, tm_exchange_latency) and every operator
 * it passes records now - marked in a histogram chosen by
 * metrics.latency.granularity: per measuring operator (single), and per
 * source vertex (operator, Flink's default), and per source subtask
 * (subtask). A histogram keeps the newest metrics.latency.history-size
 * latencies in a ring and counts every one.
 *
 * Threads: the task thread records (tm_latency_record) and the network
 * thread copies the rings (tm_latency_copy), both under the task's gate
 * lock, a leaf held to write one sample or to copy; the network thread
 * summarizes its copy (tm_latency_fill) after releasing it. Markers come at the
 * interval, never per record; a new histogram (a source not seen before)
 * is the only allocation.
 */
#ifndef SL_TM_LATENCY_H
#define SL_TM_LATENCY_H

#include "sl.h"
#include "control.pb-c.h"

enum { TM_LAT_SINGLE = 0, TM_LAT_OPERATOR = 1, TM_LAT_SUBTASK = 2 };

typedef struct tm_lat_hist {
    int op;                     /* chain position of the measuring operator */
    int source, source_subtask; /* -1 = any (granularity) */
    uint64_t count;             /* latencies ever recorded */
    int n, next;                /* samples held; ring position of the next one */
    int64_t *samples;           /* history-size of them */
} tm_lat_hist;

typedef struct tm_latency {
    int granularity;            /* TM_LAT_* */
    int history;                /* metrics.latency.history-size */
    tm_lat_hist *h;
    int nh, cap;
} tm_latency;

/* The granularity named by metrics.latency.granularity's value. */
int tm_latency_granularity(const char *name);
tm_latency *tm_latency_new(int granularity, int history);
void tm_latency_free(tm_latency *l); /* NULL is a no-op */
/* Operator op saw a marker of source (vertex, subtask) that is latency_ms
 * old. Caller holds the gate lock. */
void tm_latency_record(tm_latency *l, int op, int source, int source_subtask, int64_t latency_ms);
/* A copy of l (caller frees it with tm_latency_free), taken under the gate
 * lock so that the summaries are worked out after it is released. */
tm_latency *tm_latency_copy(const tm_latency *l);
/* The histograms' summaries: *out gets an array of l->nh messages and
 * *ptrs the pointers to them (caller frees both with free()). Returns the
 * number. */
size_t tm_latency_fill(const tm_latency *l, Sluice__LatencyHistogram **out, Sluice__LatencyHistogram ***ptrs);
/* Flink's (commons-math's legacy) estimate of quantile q over sorted[n]. */
double tm_latency_quantile(const double *sorted, int n, double q);

#endif
