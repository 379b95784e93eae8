/*
 * latency.c -- latency histograms (latency.h): rings of the newest
 * latencies, summarized as Flink's DescriptiveStatisticsHistogram is (min,
 * max, mean, sample standard deviation, the legacy percentile estimate).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "latency.h"

int tm_latency_granularity(const char *name)
{
    if (name && !strcasecmp(name, "single")) return TM_LAT_SINGLE;
    if (name && !strcasecmp(name, "subtask")) return TM_LAT_SUBTASK;
    return TM_LAT_OPERATOR;
}

tm_latency *tm_latency_new(int granularity, int history)
{
    tm_latency *l = sl_calloc(1, sizeof *l);
    l->granularity = granularity;
    l->history = history > 0 ? history : 128;
    return l;
}

void tm_latency_free(tm_latency *l)
{
    if (!l) return;
    for (int i = 0; i < l->nh; i++) free(l->h[i].samples);
    free(l->h);
    free(l);
}

void tm_latency_record(tm_latency *l, int op, int source, int source_subtask, int64_t latency_ms)
{
    if (l->granularity == TM_LAT_SINGLE) source = -1;
    if (l->granularity != TM_LAT_SUBTASK) source_subtask = -1;
    tm_lat_hist *h = NULL;
    for (int i = 0; i < l->nh && !h; i++)
        if (l->h[i].op == op && l->h[i].source == source && l->h[i].source_subtask == source_subtask)
            h = &l->h[i];
    if (!h) {
        if (l->nh == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 4;
            l->h = sl_realloc(l->h, sizeof *l->h * (size_t)l->cap);
        }
        h = &l->h[l->nh++];
        *h = (tm_lat_hist){.op = op, .source = source, .source_subtask = source_subtask,
                           .samples = sl_malloc(sizeof(int64_t) * (size_t)l->history)};
    }
    h->samples[h->next] = latency_ms;
    h->next = (h->next + 1) % l->history;
    if (h->n < l->history) h->n++;
    h->count++;
}

tm_latency *tm_latency_copy(const tm_latency *l)
{
    tm_latency *c = tm_latency_new(l->granularity, l->history);
    c->nh = c->cap = l->nh;
    c->h = sl_calloc((size_t)(l->nh ? l->nh : 1), sizeof *c->h);
    for (int i = 0; i < l->nh; i++) {
        c->h[i] = l->h[i];
        c->h[i].samples = sl_malloc(sizeof(int64_t) * (size_t)l->history);
        memcpy(c->h[i].samples, l->h[i].samples, sizeof(int64_t) * (size_t)l->h[i].n);
    }
    return c;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tm_latency_quantile(const double *sorted, int n, double q)
{
    if (n <= 0) return 0;
    if (n == 1) return sorted[0];
    double pos = q * (n + 1);
    if (pos < 1) return sorted[0];
    if (pos >= n) return sorted[n - 1];
    double fpos = floor(pos);
    double lower = sorted[(int)fpos - 1], upper = sorted[(int)fpos];
    return lower + (pos - fpos) * (upper - lower);
}

size_t tm_latency_fill(const tm_latency *l, Sluice__LatencyHistogram **out, Sluice__LatencyHistogram ***ptrs)
{
    *out = NULL;
    *ptrs = NULL;
    if (!l || !l->nh) return 0;
    Sluice__LatencyHistogram *m = sl_calloc((size_t)l->nh, sizeof *m);
    Sluice__LatencyHistogram **p = sl_calloc((size_t)l->nh, sizeof *p);
    double *v = sl_malloc(sizeof(double) * (size_t)l->history);
    for (int i = 0; i < l->nh; i++) {
        const tm_lat_hist *h = &l->h[i];
        Sluice__LatencyHistogram *x = &m[i];
        sluice__latency_histogram__init(x);
        p[i] = x;
        x->op = (uint32_t)h->op;
        x->source = h->source;
        x->source_subtask = h->source_subtask;
        x->count = h->count;
        double sum = 0;
        for (int k = 0; k < h->n; k++) sum += v[k] = (double)h->samples[k];
        qsort(v, (size_t)h->n, sizeof *v, cmp_double);
        if (!h->n) continue;
        double mean = sum / h->n, sq = 0;
        for (int k = 0; k < h->n; k++) sq += (v[k] - mean) * (v[k] - mean);
        x->min = v[0];
        x->max = v[h->n - 1];
        x->mean = mean;
        x->stddev = h->n > 1 ? sqrt(sq / (h->n - 1)) : 0;
        x->median = tm_latency_quantile(v, h->n, 0.5);
        x->p75 = tm_latency_quantile(v, h->n, 0.75);
        x->p90 = tm_latency_quantile(v, h->n, 0.90);
        x->p95 = tm_latency_quantile(v, h->n, 0.95);
        x->p98 = tm_latency_quantile(v, h->n, 0.98);
        x->p99 = tm_latency_quantile(v, h->n, 0.99);
        x->p999 = tm_latency_quantile(v, h->n, 0.999);
    }
    free(v);
    *out = m;
    *ptrs = p;
    return (size_t)l->nh;
}
