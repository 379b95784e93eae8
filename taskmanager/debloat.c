/*
 * debloat.c -- the buffer debloater (debloat.h).
 */
#include <stdlib.h>

#include "debloat.h"

tm_debloat *tm_debloat_new(const sl_config *c, uint32_t seg_size)
{
    tm_debloat *db = sl_calloc(1, sizeof *db);
    db->target_ms = sl_config_int(c, "taskmanager.network.memory.buffer-debloat.target");
    db->period_ns = sl_config_int(c, "taskmanager.network.memory.buffer-debloat.period") * 1000000;
    db->alpha = 2.0 / ((double)sl_config_int(c, "taskmanager.network.memory.buffer-debloat.samples") + 1);
    db->threshold_pct = (int)sl_config_int(c, "taskmanager.network.memory.buffer-debloat.threshold-percentages");
    db->max_size = seg_size;
    db->min_size = (uint32_t)SL_MIN((int64_t)seg_size, sl_config_int(c, "taskmanager.memory.min-segment-size"));
    db->size_ema = seg_size;
    db->announced = seg_size;
    db->size_pub = seg_size;
    return db;
}

void tm_debloat_free(tm_debloat *db) { free(db); }

double tm_debloat_size(const tm_debloat *db, double old_size, double throughput, int buffers)
{
    if (buffers < 1) buffers = 1;
    double want = throughput * (double)db->target_ms / 1000.0 / buffers;
    want = SL_MAX((double)db->min_size, SL_MIN((double)db->max_size, want));
    double size = old_size + db->alpha * (want - old_size);
    return SL_MAX((double)db->min_size, SL_MIN((double)db->max_size, size));
}

uint32_t tm_debloat_tick(tm_debloat *db, int64_t now, uint64_t bytes, uint64_t idle_ns, int buffers)
{
    if (!db->start_ns) {
        db->start_ns = now;
        db->bytes0 = bytes;
        db->idle0 = idle_ns;
        return 0;
    }
    if (now - db->start_ns < db->period_ns) return 0;
    int64_t active = (now - db->start_ns) - (int64_t)(idle_ns - db->idle0);
    uint64_t consumed = bytes - db->bytes0;
    db->start_ns = now;
    db->bytes0 = bytes;
    db->idle0 = idle_ns;
    if (active <= 0) return 0; /* idle throughout: nothing measured */
    double throughput = (double)consumed * 1e9 / (double)active;
    db->size_ema = tm_debloat_size(db, db->size_ema, throughput, buffers);
    uint32_t size = (uint32_t)db->size_ema;
    if (buffers < 1) buffers = 1;
    int64_t ttc = throughput > 0 ? (int64_t)((double)size * buffers * 1000.0 / throughput) : 0;
    __atomic_store_n(&db->ttc_ms_pub, ttc, __ATOMIC_RELAXED);
    uint32_t last = db->announced;
    if (size == last) return 0;
    int bound = size == db->min_size || size == db->max_size;
    uint64_t diff = size > last ? size - last : last - size;
    if (!bound && diff * 100 < (uint64_t)last * (uint64_t)db->threshold_pct) return 0;
    db->announced = size;
    __atomic_store_n(&db->size_pub, (int64_t)size, __ATOMIC_RELAXED);
    return size;
}
