/*
 * timers.h -- event-time and processing-time timers of one keyed operator
 * subtask: a binary min-heap ordered by (time, key group, key, namespace),
 * with duplicates ignored (registering the same timer twice keeps one), as
 * Flink's timer service does.
 *
 * A timer is (time, key group, key bytes, namespace bytes). Firing pops
 * every timer with time <= the given bound, in time order, and hands it to
 * a callback, which may register new timers (fired in the same pass when
 * they are due too).
 *
 * Timers are part of an operator's state: sl_timers_each visits them by key
 * group for snapshots, and restoring re-adds them (sl_timers_add).
 * Memory: one allocation per distinct timer (bounded by the key count
 * times windows in flight), none per record.
 */
#ifndef SL_TIMERS_H
#define SL_TIMERS_H

#include "sl.h"

typedef struct sl_timers sl_timers;

typedef struct sl_timer {
    int64_t time;
    int kg;
    const void *key;
    size_t klen;
    const void *ns;
    size_t nslen;
} sl_timer;

sl_timers *sl_timers_new(void);
void sl_timers_destroy(sl_timers *t);
/* Add a timer (copied); a duplicate of an existing one is ignored. */
void sl_timers_add(sl_timers *t, const sl_timer *tm);
/* Remove a timer if present. */
void sl_timers_del(sl_timers *t, const sl_timer *tm);
/* Earliest time, or INT64_MAX when empty. */
int64_t sl_timers_next(const sl_timers *t);
size_t sl_timers_count(const sl_timers *t);
/* Pop and call fn for each timer with time <= bound, in order. fn's tm is
 * borrowed for the call. Stops at the first non-OK return, which it returns. */
int sl_timers_fire(sl_timers *t, int64_t bound, int (*fn)(void *ctx, const sl_timer *tm),
                   void *ctx);
/* Visit all timers of key group kg (any order is fine; snapshots sort). */
void sl_timers_each(const sl_timers *t, int kg, void (*fn)(void *ctx, const sl_timer *tm),
                    void *ctx);

#endif
