/*
 * Layer runtime/ (docs/ARCHITECTURE.md, "Layers"): over lang/: what hosts an
 * operator. Sets keys, fires timers, keeps watermarks, makes state handles,
 * and passes an operator's calls to its host through sl_rt_host; the
 * TaskManager and the unit tests drive operators through it alone.
 *
 * runtime.h -- hosting an operator: the runtime's side of operator.h.
 *
 * The TaskManager's task thread (taskmanager/task.c) and the unit tests
 * drive operators through these calls only, so both see the same contract:
 * the runtime encodes and hashes a keyed input's key once per record and
 * sets it as the current key, keeps each input's watermark and their
 * minimum, fires event-time timers as that minimum passes them and
 * processing-time timers as the wall clock does (with the timer's key set),
 * and orders end of input after the final watermark.
 *
 * All calls are for the thread that owns the operator.
 */
#ifndef SL_RUNTIME_H
#define SL_RUNTIME_H

#include "operator.h"
#include "jobgraph.h"

#include "sl_limits.h"

/* Asynchronous snapshot work collected by sl_op_defer, in order. */
typedef struct sl_deferred {
    sl_defer_fn fn;
    void *arg;
    struct sl_deferred *next;
} sl_deferred;

/* Bind op (zeroed by the caller) to the planned vertex v as subtask
 * `subtask` of a job with max_parallelism key groups: definition, plan,
 * schemas, declared outputs, owned key groups, watermarks at INT64_MIN.
 * The caller then sets emit/emit_wm/emit_idle/emit_ctx, out_connected[],
 * out_stream, checkpointing and task_name. */
void sl_rt_init(sl_op *op, const sl_vertex *v, int subtask, int max_parallelism);
/* Keyed operators get their state backend (kind bk; rocksdb in dir) and
 * timers, then def->open runs. SL_ERR with op->err. */
int sl_rt_open(sl_op *op, sl_backend_kind bk, const char *dir);
/* One row of input `input`: key context, counters, scratch, process(). */
int sl_rt_process(sl_op *op, int input, sl_row *row);
/* Input `input`'s watermark is now wm (ignored unless it advances). */
int sl_rt_watermark(sl_op *op, int input, int64_t wm);
/* Every channel of input `input` went idle (1) or one speaks again (0):
 * an idle input does not hold the combined watermark back. */
int sl_rt_input_idle(sl_op *op, int input, int idle);
/* Input `input` has ended; when it is the last, the maximum watermark
 * comes first. */
int sl_rt_end_input(sl_op *op, int input);
/* Every input that has not ended ends now (a source: the maximum
 * watermark goes out). */
int sl_rt_end_all(sl_op *op);
/* Wall-clock ms of the next processing-time timer or proc_time() call,
 * INT64_MAX when none. */
int64_t sl_rt_next_proc(const sl_op *op);
/* Fire what is due at wall-clock now_ms. */
int sl_rt_fire_proc(sl_op *op, int64_t now_ms);
/* A watched descriptor of a non-source operator may be ready: ready(). */
int sl_rt_ready(sl_op *op);
/* The deferred work registered by the last snapshot_state (caller owns). */
sl_deferred *sl_rt_take_deferred(sl_op *op);
/* Run and free a list of deferred work; the first failure's message goes to
 * err and the rest are freed without running (their fn gets arg NULL? no:
 * each fn is called, so each frees its arg; only the first error is kept). */
int sl_rt_run_deferred(sl_deferred *d, char *err, size_t errlen);
/* What the host (the TaskManager, or a unit test) gives the operators it
 * runs: the calls behind sl_op_set_info and the collect channel
 * (core/collect.h), each with the host's own context for the subtask. A
 * call left NULL behaves as outside a TaskManager: info is dropped, a
 * collect sink has no credit and cannot send. The table is borrowed for
 * the operator's life. */
typedef struct sl_rt_host {
    /* sl_op_set_info of the operator at chain position pos (task thread;
     * the host keeps a copy of json) */
    void (*set_info)(void *ctx, int pos, const char *json);
    /* the collect channel: see sl_op_collect_send and its neighbours */
    int (*collect_send)(void *ctx, const char *rows, size_t len, int nrows, uint64_t offset,
                        int end, char *err, size_t errlen);
    int (*collect_credit_now)(void *ctx);
    int (*collect_credit_fd)(void *ctx);
} sl_rt_host;
/* Bind op to its host: host (borrowed), ctx handed to each call, pos the
 * operator's position in its chain. */
void sl_rt_set_host(sl_op *op, const sl_rt_host *host, void *ctx, int pos);
/* def->close, then state handles, state backend and timers. Idempotent. */
void sl_rt_close(sl_op *op);

#endif
