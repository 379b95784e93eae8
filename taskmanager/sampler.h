/*
 * sampler.h -- stack samples of task threads, for Flink's flame graphs
 * (GET /jobs/:id/vertices/:vid/flamegraph). A real-time signal sent to one
 * thread (tgkill) runs a handler there that records backtrace()'s return
 * addresses into one preallocated buffer; the sampling thread waits for it,
 * notes the thread's scheduler state (/proc/self/task/<tid>/stat: R is on
 * CPU, anything else off CPU), and names every address with elfutils'
 * libdw (the .symtab names static functions too, where dladdr
 * sees only exported ones).
 */
#ifndef SL_TM_SAMPLER_H
#define SL_TM_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

/* Install the signal handler and load what backtrace() needs (it may
 * allocate on its first call, which a signal handler must not); once per
 * process, before any sample. SL_OK or SL_ERR with err. */
int tm_sampler_init(char *err, size_t errlen);

/* The calling thread's kernel id (what tm_sampler_sample takes). */
pid_t tm_sampler_self(void);

/* Sample the threads tids[0..n) of this process num times, delay_ms apart,
 * keeping the innermost depth frames of each stack; blocks for about
 * num * delay_ms (any thread but those sampled; one sampling at a time,
 * others wait). A thread gone meanwhile is skipped. Returns (caller owns)
 *   {"threads": n, "samples": [{"state": "R"|"S"|"D"|..., "count": k,
 *                               "frames": ["outermost", ..., "innermost"]}]}
 * with equal stacks in equal states merged, or NULL with err. A non-NULL
 * *cancel (read atomically) that becomes nonzero ends it after the round. */
json_t *tm_sampler_sample(const pid_t *tids, int n, int num, int64_t delay_ms, int depth,
                          const int *cancel, char *err, size_t errlen);

#endif
