/*
 * proc_info.h -- what Flink's REST API tells about a daemon's process, read
 * from the process itself: its log files (Flink's /jobmanager/logs, /log,
 * /stdout), a thread dump (/jobmanager/thread-dump) and its environment
 * (/jobmanager/environment), in the shapes of Flink's response classes.
 *
 * A daemon logs to its standard error and prints to its standard output;
 * when those are regular files (as the start scripts, Docker's log driver
 * aside, and the tests arrange) they are its log and stdout files, found
 * through /proc/self/fd and reopened from there, so no path a client names
 * is ever opened. Everything here reads only /proc/self and is safe on any
 * thread (nothing is cached).
 */
#ifndef SL_PROC_INFO_H
#define SL_PROC_INFO_H

#include <stdint.h>
#include <jansson.h>

enum { SL_PROC_LOG = 2, SL_PROC_STDOUT = 1 }; /* the descriptors they are read through */

/* Flink's LogListInfo: {"logs": [{"name", "size", "mtime"}]}, the log file
 * and the stdout file when each is a regular file (once if they are one). */
json_t *sl_proc_log_list(void);

/* Open the log (SL_PROC_LOG) or stdout (SL_PROC_STDOUT) file for reading, or
 * with which = 0 the one of those two whose file name is `name`. Returns the
 * descriptor (caller closes) with its size in *size, or -1 with the reason
 * in err when there is no such file. */
int sl_proc_log_open(int which, const char *name, uint64_t *size, char *err, size_t errlen);

/* Flink's ThreadDumpInfo: {"threadInfos": [{"threadName", "stringifiedThreadInfo"}]},
 * one per thread of the process (the calling one too): its name (comm), id,
 * state in Java's terms (RUNNABLE, WAITING, BLOCKED, TERMINATED) with the
 * kernel's state letter, CPU time, where in the kernel it waits (wchan),
 * then its user-space stack, innermost first, at most depth frames, named
 * by libdw (stack_sample.h: each thread is interrupted once by a signal).
 * A thread that gives no stack (it blocks signals, or ended) says why.
 * Blocks for about 50 us a thread (200 ms for one that does not answer). */
#define SL_PROC_STACK_DEPTH 50 /* cluster.thread-dump.stacktrace-max-depth, by default (Flink's too) */
json_t *sl_proc_thread_dump(int depth);

/* Flink's EnvironmentInfo with the process's equivalents of the JVM's fields:
 * jvm.version the program's version and the kernel and C library it runs
 * on, jvm.arch the machine, jvm.options the command line; classpath the
 * shared objects loaded. `program` names the program ("Sluice 0.9"). */
json_t *sl_proc_environment(const char *program);

/* What a daemon reports of its own process for Flink's Status.* metrics
 * (GET /jobmanager/metrics, /taskmanagers/:id/metrics), from
 * /proc/self/stat. */
typedef struct sl_proc_stats {
    uint64_t cpu_ns;            /* user + system CPU time since it started */
    uint64_t rss_bytes;         /* resident memory */
    uint64_t virtual_bytes;     /* address space */
    int threads;
} sl_proc_stats;

/* Fill *st (zeros where /proc says nothing). */
void sl_proc_stats_read(sl_proc_stats *st);

/* The CPU load between two readings of cpu_ns taken wall_ms apart: the
 * share of the machine's ncpu cores this process used, 0..1 (Flink's
 * Status.JVM.CPU.Load); 0 when wall_ms or ncpu is not positive. */
double sl_proc_cpu_load(uint64_t cpu_ns_before, uint64_t cpu_ns_after, int64_t wall_ms, int ncpu);

#endif
