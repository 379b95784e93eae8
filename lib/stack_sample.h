/*
 * stack_sample.h -- user-space stacks of this process's threads, for
 * Flink's flame graphs (the TaskManager's task threads, GET
 * /jobs/:id/vertices/:vid/flamegraph) and thread dumps (every thread of
 * either daemon, GET /jobmanager/thread-dump and
 * /taskmanagers/:id/thread-dump). A real-time signal sent to one thread
 * (tgkill) runs a handler there that records backtrace()'s return addresses
 * into one preallocated buffer; the sampling thread waits for it, and names
 * every address with elfutils' libdw (the .symtab names static functions
 * too, where dladdr sees only exported ones).
 *
 * The signal is installed with SA_RESTART, so the calls the kernel restarts
 * go on unnoticed; the ones it never restarts (poll, epoll_wait, nanosleep,
 * sem_timedwait, ...) return EINTR in the thread sampled, and every such
 * call in Sluice loops on it (docs/ARCHITECTURE.md, "Signals and EINTR").
 */
#ifndef SL_STACK_SAMPLE_H
#define SL_STACK_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

/* Install the signal handler and load what backtrace() needs (it may
 * allocate on its first call, which a signal handler must not); once per
 * process, before any sample (the other calls do it too). SL_OK or SL_ERR
 * with err. */
int sl_stack_init(char *err, size_t errlen);

/* The calling thread's kernel id (what the calls below take). */
pid_t sl_stack_self(void);

/* Sample the threads tids[0..n) of this process num times, delay_ms apart,
 * keeping the innermost depth frames of each stack; blocks for about
 * num * delay_ms (any thread but those sampled; one sampling at a time,
 * others wait). A thread gone meanwhile is skipped, and so is the calling
 * thread. Returns (caller owns)
 *   {"threads": n, "samples": [{"state": "R"|"S"|"D"|..., "count": k,
 *                               "frames": ["outermost", ..., "innermost"]}]}
 * with equal stacks in equal states merged, or NULL with err. A non-NULL
 * *cancel (read atomically) that becomes nonzero ends it after the round. */
json_t *sl_stack_sample(const pid_t *tids, int n, int num, int64_t delay_ms, int depth,
                        const int *cancel, char *err, size_t errlen);

/* Names for the stacks of one thread dump: this process's modules as they
 * are now, and every name looked up so far. NULL only if the handler
 * cannot be installed (err says why); a process whose modules libdw cannot
 * read gets unnamed frames ("[module+0xoffset]"). */
typedef struct sl_stack_names sl_stack_names;
sl_stack_names *sl_stack_names_new(char *err, size_t errlen);
void sl_stack_names_destroy(sl_stack_names *nm); /* NULL: nothing */

/* The stack of thread tid of this process (the calling thread too), its
 * innermost max frames named into frames[0..) innermost first (borrowed
 * from nm until it is destroyed). Returns the number of frames, or -1 with
 * err when the thread gives none: gone, blocking the signal (librdkafka's
 * threads do), or no answer within 200 ms. One thread at a time, as above. */
int sl_stack_of(sl_stack_names *nm, pid_t tid, const char **frames, int max, char *err,
                size_t errlen);

#endif
