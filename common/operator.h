/*
 * operator.h -- the contract between the runtime and an operator.
 *
 * An operator type is a static sl_op_def table of callbacks (in
 * operators/, one file each, listed in registry.c). A running
 * instance is an sl_op: one per vertex per subtask, owned by the task thread
 * that runs its chain, so an operator never needs a lock.
 *
 * Lifecycle, all on the task thread except plan:
 *   plan()      validate the vertex's JSON config against the input schema and
 *               derive the output schema. Runs on the JobManager at submission
 *               and again on each TaskManager at deployment; pure, no I/O.
 *   open()      allocate per-subtask state, open files.
 *   process()   one input row (borrowed: copy what you keep). Emit with
 *               sl_op_emit(); each emitted row is also borrowed by the callee.
 *   run()       sources only: emit a batch of rows; return SL_OK when more are
 *               ready, SL_AGAIN to sleep until op->wake_at_ms (rate limit),
 *               SL_DONE when a bounded source is exhausted.
 *   watermark() a new input watermark; NULL means "forward it".
 *   end_input() every input has ended: emit what is pending.
 *   close()     free everything (also called after a failed open).
 * Callbacks that fail return SL_ERR with a message in op->err; the task then
 * fails and the message becomes the job's exception.
 */
#ifndef SL_OPERATOR_H
#define SL_OPERATOR_H

/* Bumped whenever sl_op_def or sl_op changes shape or meaning. */
#define SL_OP_ABI_VERSION 1u

#include <stdio.h>
#include <jansson.h>
#include "row.h"
#include "state.h"
#include "timers.h"

typedef struct sl_op sl_op;
typedef struct sl_vertex sl_vertex;

enum {
    SL_OPF_SOURCE = 1 << 0, /* has no inputs; driven by run() */
    SL_OPF_SINK = 1 << 1,   /* has no outputs */
    SL_OPF_KEYED = 1 << 2,  /* keeps keyed state: the runtime opens op->kstate
                               and op->event_timers / op->proc_timers */
    SL_OPF_LATE_OUTPUT = 1 << 3, /* may route late rows to a side output: an out
                                    edge with "output": "late", carrying the
                                    operator's *input* rows */
};

typedef struct sl_op_def {
    unsigned abi;                /* SL_OP_ABI_VERSION: the header it was built with */
    const char *name;            /* the vertex "type", e.g. "datagen" */
    unsigned flags;              /* SL_OPF_* */
    const char *const *options;  /* accepted config keys, NULL-terminated;
                                    "fields.*" matches any key with that prefix */
    void *(*plan)(const sl_vertex *v, const sl_schema *in, sl_schema *out, char *err,
                  size_t errlen);
    void (*plan_free)(void *plan);
    int (*open)(sl_op *op);
    int (*process)(sl_op *op, int input, sl_row *row);
    int (*run)(sl_op *op);
    int (*watermark)(sl_op *op, int64_t wm);
    int (*end_input)(sl_op *op);
    void (*close)(sl_op *op);
    /* keyed operators: the config option holding the key columns (e.g.
     * "group-by"); when the vertex runs with parallelism > 1 the job graph
     * requires its input edges to hash on exactly these columns */
    const char *key_option;
    /* processing time: called on the task thread once the wall clock
     * (sl_now_ms) reaches op->proc_time_at */
    int (*proc_time)(sl_op *op, int64_t now_ms);
    /* Checkpoints. Keyed state (op->kstate) and timers are snapshotted and
     * restored by the runtime; these hooks are for everything else.
     *   snapshot_state: operator state at the barrier of checkpoint `cpid`
     *     (e.g. a source's position), as one blob (*blob malloc'ed, caller
     *     frees; *len 0 = nothing). Task thread, synchronous: keep it quick.
     *   restore_state: after open(), before any input: the blobs this subtask
     *     gets. Same parallelism: exactly the blob its own index wrote. New
     *     parallelism: the old blobs dealt out round-robin (blob i goes to
     *     subtask i % parallelism), so the union is always the old state.
     *   checkpoint_complete: checkpoint `cpid` is durable everywhere: a
     *     two-phase-commit sink publishes what it staged up to it.
     *   checkpoint_abort: checkpoint `cpid` failed; staged data stays
     *     pending for the next one. */
    int (*snapshot_state)(sl_op *op, int64_t cpid, void **blob, size_t *len);
    int (*restore_state)(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs);
    int (*checkpoint_complete)(sl_op *op, int64_t cpid);
    int (*checkpoint_abort)(sl_op *op, int64_t cpid);
} sl_op_def;

/* Where an operator's output goes: the next operator in its chain, or the
 * runtime's network writer. Set up by the runtime. */
typedef int (*sl_emit_fn)(void *ctx, sl_row *row);
typedef int (*sl_emit_wm_fn)(void *ctx, int64_t wm);
/* Watermark status: idle = 1 when the operator's output will carry no rows
 * or watermarks for a while (a silent input past its idle timeout), so the
 * runtime excludes this stream from downstream minimum watermarks; idle = 0
 * when it speaks again. */
typedef int (*sl_emit_idle_fn)(void *ctx, int idle);

/* Counters an operator may bump; the runtime reports them. */
typedef struct sl_op_metrics {
    uint64_t records_in;
    uint64_t records_out;
    uint64_t late_dropped; /* numLateRecordsDropped */
} sl_op_metrics;

struct sl_op {
    const sl_op_def *def;
    const sl_vertex *vertex;
    const void *plan;           /* from def->plan, shared read-only */
    void *priv;                 /* the operator's own per-subtask state */
    int subtask;                /* 0-based index of this subtask */
    int parallelism;            /* of this vertex */
    int max_parallelism;        /* of the job: number of key groups */
    const sl_schema *in;        /* input schema (NULL for sources) */
    const sl_schema *out;       /* output schema (NULL for sinks) */
    sl_emit_fn emit;            /* downstream */
    sl_emit_wm_fn emit_wm;
    sl_emit_idle_fn emit_idle;  /* NULL: the runtime does not track idleness here */
    sl_emit_fn emit_late;       /* the late side output, or NULL when none is declared */
    void *emit_ctx;
    sl_arena scratch;           /* reset by the runtime before each process() */
    sl_op_metrics metrics;
    int64_t wake_at_ms;         /* sources: when run() wants to be called again
                                   (sl_mono_ms clock) after SL_AGAIN */
    FILE *out_stream;           /* where print writes (the TaskManager's stdout) */
    sl_kstate *kstate;          /* keyed operators: their state backend */
    sl_timers *event_timers;    /* keyed operators: fired by the operator on watermarks */
    sl_timers *proc_timers;     /* keyed operators: processing-time timers */
    int kg_first, kg_last;      /* key groups this subtask owns */
    int64_t proc_time_at;       /* wall-clock ms for the next proc_time() call;
                                   INT64_MAX (the runtime's initial value) = none */
    int64_t current_watermark;  /* the last input watermark (INT64_MIN before any) */
    const char *task_name;      /* "calc (2/4)" for messages */
    int checkpointing;          /* set by the runtime before open(): 1 when the
                                   job takes checkpoints (the hooks above will be
                                   called), so a two-phase-commit sink stages its
                                   output instead of writing it straight out */
    char err[512];              /* failure message for SL_ERR returns */
};

static inline int sl_op_emit(sl_op *op, sl_row *row)
{
    op->metrics.records_out++;
    return op->emit(op->emit_ctx, row);
}

static inline int sl_op_emit_watermark(sl_op *op, int64_t wm)
{
    return op->emit_wm ? op->emit_wm(op->emit_ctx, wm) : SL_OK;
}

/* A late input row to the declared late side output. Returns SL_DONE when
 * there is none (the caller drops and counts the row). */
static inline int sl_op_emit_late(sl_op *op, sl_row *row)
{
    return op->emit_late ? op->emit_late(op->emit_ctx, row) : SL_DONE;
}

static inline int sl_op_emit_idle(sl_op *op, int idle)
{
    return op->emit_idle ? op->emit_idle(op->emit_ctx, idle) : SL_OK;
}

/* Set op->err and return SL_ERR. */
int sl_op_fail(sl_op *op, const char *fmt, ...) SL_PRINTF(2, 3);

/* ---- the registry (common/opregistry.c) ---------------------------------- */

/* Add an operator type. The table must stay valid for the life of the
 * process. Fails (with err) when def->abi is not this header's
 * SL_OP_ABI_VERSION, the name is not [A-Za-z0-9_.-]{1,64}, a callback the
 * kind requires is missing, or the name is taken. Registering the same
 * table twice is a no-op. */
int sl_op_register(const sl_op_def *def, char *err, size_t errlen);
const sl_op_def *sl_op_find(const char *type);
/* Names of all types, comma-separated, into buf; returns how many. */
int sl_op_type_list(char *buf, size_t len);
/* The built-in operators (operators/builtin.c). Call once at start-up. */
void sl_ops_register_builtin(void);

/* A plugin is a shared object exporting
 *     int sl_plugin_init(unsigned abi, char *err, size_t errlen);
 * which checks abi == SL_OP_ABI_VERSION and calls sl_op_register() for each
 * of its operators. sl_op_plugins_load dlopens every path of a comma- or
 * semicolon-separated list and calls its init; the first failure is
 * returned with the path in err. */
#define SL_PLUGIN_INIT_SYMBOL "sl_plugin_init"
typedef int (*sl_plugin_init_fn)(unsigned abi, char *err, size_t errlen);
int sl_op_plugins_load(const char *list, char *err, size_t errlen);

#endif
