/*
 * test_latency.c -- latency histograms (taskmanager/latency.c) and the
 * buffer debloater's arithmetic (taskmanager/debloat.c). Expected values
 * are worked out by hand here: commons-math's legacy percentile estimate
 * (position q(n+1), interpolated between neighbours, clamped to the
 * ends), the sample standard deviation, and Flink's debloating formula
 * (throughput x target / buffers, an exponential moving average with alpha
 * 2 / (samples + 1), clamped, announced past a threshold).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "debloat.h"
#include "latency.h"
#include "sl_test.h"

#define NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-9)

static void test_quantile_legacy_estimate(void)
{
    double v[10];
    for (int i = 0; i < 10; i++) v[i] = i + 1;
    NEAR(tm_latency_quantile(v, 10, 0.5), 5.5);   /* pos 5.5: 5 + 0.5 x (6 - 5) */
    NEAR(tm_latency_quantile(v, 10, 0.75), 8.25); /* pos 8.25 */
    NEAR(tm_latency_quantile(v, 10, 0.05), 1);    /* pos 0.55 < 1: the minimum */
    NEAR(tm_latency_quantile(v, 10, 0.99), 10);   /* pos 10.89 >= n: the maximum */
    double one = 42;
    NEAR(tm_latency_quantile(&one, 1, 0.999), 42);
}

/* A ring of 4 after 10 latencies: count 10, statistics over 7..10. */
static void test_ring_keeps_the_newest(void)
{
    tm_latency *l = tm_latency_new(TM_LAT_OPERATOR, 4);
    for (int i = 1; i <= 10; i++) tm_latency_record(l, 0, 3, 1, i);
    Sluice__LatencyHistogram *m, **p;
    CHECK_EQ_INT(tm_latency_fill(l, &m, &p), 1);
    CHECK(p[0] == &m[0]);
    CHECK_EQ_INT(m[0].count, 10);
    CHECK_EQ_INT(m[0].source, 3);
    CHECK_EQ_INT(m[0].source_subtask, -1); /* operator granularity: any subtask */
    NEAR(m[0].min, 7);
    NEAR(m[0].max, 10);
    NEAR(m[0].mean, 8.5);
    NEAR(m[0].median, 8.5);              /* pos 2.5 over 7, 8, 9, 10 */
    NEAR(m[0].stddev, sqrt(5.0 / 3.0));  /* (2.25 + 0.25 + 0.25 + 2.25) / 3 */
    NEAR(m[0].p999, 10);
    free(m);
    free(p);
    tm_latency_free(l);
}

/* Which histograms the granularities tell apart: two operators, two
 * sources, two subtasks of each source. */
static void test_granularity(void)
{
    static const int want[] = {2, 4, 8}; /* single, operator, subtask */
    for (int g = TM_LAT_SINGLE; g <= TM_LAT_SUBTASK; g++) {
        tm_latency *l = tm_latency_new(g, 8);
        for (int op = 0; op < 2; op++)
            for (int src = 5; src < 7; src++)
                for (int sub = 0; sub < 2; sub++) tm_latency_record(l, op, src, sub, 1);
        CHECK_EQ_INT(l->nh, want[g]);
        uint64_t total = 0;
        for (int i = 0; i < l->nh; i++) {
            total += l->h[i].count;
            CHECK_EQ_INT(l->h[i].source, g == TM_LAT_SINGLE ? -1 : l->h[i].source);
            if (g != TM_LAT_SUBTASK) CHECK_EQ_INT(l->h[i].source_subtask, -1);
        }
        CHECK_EQ_INT(total, 8);
        tm_latency_free(l);
    }
    CHECK_EQ_INT(tm_latency_granularity("SUBTASK"), TM_LAT_SUBTASK);
    CHECK_EQ_INT(tm_latency_granularity("single"), TM_LAT_SINGLE);
    CHECK_EQ_INT(tm_latency_granularity("operator"), TM_LAT_OPERATOR);
}

static void debloater(tm_debloat **out, const char *samples, const char *period)
{
    sl_config *c = sl_config_new();
    *out = NULL;
    CHECK_EQ_INT(sl_config_set(c, "taskmanager.network.memory.buffer-debloat.samples", samples, NULL, NULL, 0), SL_OK);
    CHECK_EQ_INT(sl_config_set(c, "taskmanager.network.memory.buffer-debloat.period", period, NULL, NULL, 0), SL_OK);
    *out = tm_debloat_new(c, 32768);
    sl_config_destroy(c);
}

static void test_debloat_formula(void)
{
    tm_debloat *db;
    debloater(&db, "20", "200 ms");
    CHECK(db != NULL);
    CHECK_EQ_INT(db->target_ms, 1000);
    CHECK_EQ_INT(db->min_size, 256);
    double alpha = 2.0 / 21.0;
    /* 100 kB/s, 10 buffers: 10,000 bytes each wanted */
    NEAR(tm_debloat_size(db, 32768, 100000, 10), 32768 + alpha * (10000 - 32768));
    /* far more than a segment wanted: stays at the segment */
    NEAR(tm_debloat_size(db, 32768, 1e9, 1), 32768);
    /* nothing consumed: heads for the minimum, never below */
    NEAR(tm_debloat_size(db, 300, 0, 4), 300 + alpha * (256 - 300));
    NEAR(tm_debloat_size(db, 256, 0, 4), 256);
    tm_debloat_free(db);
}

/* Ticks: the first starts a period, one before the period is over does
 * nothing, then 10,000 bytes in 100 ms of which 50 ms idle are 200 kB/s;
 * with 1 sample (alpha 1) and 4 buffers the size is 50,000 -> clamped to
 * the segment: no change. Then 1,000 bytes in 100 busy ms with 4 buffers:
 * 2,500 bytes, announced (well past 25 %), and the time to consume them
 * is 2,500 x 4 / 10,000 B/s = 1 s. A step under the threshold is not
 * announced. */
static void test_debloat_ticks(void)
{
    tm_debloat *db;
    debloater(&db, "1", "100 ms");
    CHECK(db != NULL);
    int64_t ms = 1000000;
    CHECK_EQ_INT(tm_debloat_tick(db, 1000 * ms, 0, 0, 4), 0);
    CHECK_EQ_INT(tm_debloat_tick(db, 1050 * ms, 5000, 0, 4), 0);
    CHECK_EQ_INT(tm_debloat_tick(db, 1100 * ms, 10000, (uint64_t)(50 * ms), 4), 0);
    CHECK_EQ_INT(db->size_pub, 32768);
    CHECK_EQ_INT(tm_debloat_tick(db, 1200 * ms, 11000, (uint64_t)(50 * ms), 4), 2500);
    CHECK_EQ_INT(db->size_pub, 2500);
    CHECK_EQ_INT(db->ttc_ms_pub, 1000);
    /* 1,100 bytes per 100 ms: 2,750, 10 % more: kept quiet */
    CHECK_EQ_INT(tm_debloat_tick(db, 1300 * ms, 12100, (uint64_t)(50 * ms), 4), 0);
    CHECK_EQ_INT(db->size_pub, 2500);
    tm_debloat_free(db);
}

SL_TEST_MAIN(SL_TEST(test_quantile_legacy_estimate), SL_TEST(test_ring_keeps_the_newest),
             SL_TEST(test_granularity), SL_TEST(test_debloat_formula), SL_TEST(test_debloat_ticks))
