/*
 * Layer core/ (docs/ARCHITECTURE.md, "Layers"): the model, over lib/. Rows
 * and schemas, key groups, the state backends and timers, snapshots and
 * their verification, frames and the cluster secret, configuration, the job
 * graph, and this header: the operator ABI and the registry of operator
 * types. Knows no operator by name, no SQL and no daemon.
 *
 * operator.h -- the contract between the runtime and an operator (v6: v5
 * with sl_op_def.options a typed table (sl_op_option) that the registry
 * parses before plan(), read through sl_plan_opt_*; sl_op_def.check_job and
 * SL_OPF_COLLECT; sl_plan_ctx.opts. v5 was v4 plus
 * sl_op_metrics.records_in_errors; v4 was v3 plus sl_op_def.ready with
 * descriptors watched by any operator, and sl_plan_ctx.unbounded; v3 was v2
 * plus sl_op.final_checkpoint).
 *
 * This header is Sluice's operator ABI: built-in operators (operators/, one
 * file each, listed in operators/builtin.c) and plugins (shared objects
 * loaded through `sluice.operator-plugins`, see docs/OPERATORS.md) are
 * written against it alone. SL_OP_ABI_VERSION changes whenever a struct
 * below changes shape or meaning; the registry refuses a table built for
 * another version.
 *
 * An operator type is a static sl_op_def table of callbacks. A running
 * instance is an sl_op: one per vertex per subtask, owned by the task thread
 * that runs its chain, so an operator never needs a lock.
 *
 * Lifecycle, all on the task thread except plan:
 *   plan()      validate the vertex's config against its inputs (schema and
 *               partitioning of each), declare per input which columns are
 *               the key (sl_plan_key), derive the main output schema and
 *               declare named side outputs (sl_plan_output). Runs on the
 *               JobManager at submission and again on each TaskManager at
 *               deployment; pure, no I/O.
 *   open()      allocate per-subtask state, open files, register state
 *               handles and the descriptors a source waits on.
 *   process()   one row of input `input` (borrowed: copy what you keep). On a
 *               keyed input the runtime has already set the current key
 *               (op->key, op->klen, op->kg and the state backend's key).
 *   run()       sources only: emit a batch of rows; return SL_OK when more are
 *               ready, SL_AGAIN to wait until op->wake_at_ms (sl_mono_ms), a
 *               watched descriptor is ready or mail arrives, SL_DONE when a
 *               bounded source is exhausted.
 *   watermark() input `input`'s watermark advanced to wm; op->input_wm[]
 *               holds every input's, op->current_watermark their minimum
 *               (already advanced, event timers up to it already fired).
 *               NULL means "forward the combined watermark when it advances".
 *   on_timer()  a timer registered with sl_op_timer_* is due; the runtime has
 *               set the timer's key as the current key.
 *   proc_time() non-keyed processing-time callback at op->proc_time_at.
 *   ready()     non-sources: one of the descriptors the operator watches
 *               (sl_op_watch_fd) may be ready -- also called now and then
 *               without one being ready, so it must not block (read
 *               non-blocking descriptors). The task waits on these
 *               descriptors as well as on its input, so an operator woken
 *               by another thread (an eventfd) emits without new input.
 *   end_input() input `input` has ended. When the last one ends the runtime
 *               first delivers the maximum watermark (every event timer fires).
 *   close()     free everything (also called after a failed open).
 * Callbacks that fail return SL_ERR with a message in op->err (sl_op_fail);
 * the task then fails and the message becomes the job's exception.
 */
#ifndef SL_OPERATOR_H
#define SL_OPERATOR_H

/* Bumped whenever sl_op_def, sl_op or sl_plan_ctx changes shape or meaning. */
#define SL_OP_ABI_VERSION 6u

#include <stdio.h>
#include <jansson.h>
#include "config.h"
#include "row.h"
#include "state.h"
#include "timers.h"

typedef struct sl_op sl_op;
typedef struct sl_vertex sl_vertex;
typedef struct sl_vstate sl_vstate;

#define SL_MAX_INPUTS 16        /* logical inputs of one operator */
#define SL_MAX_OUTPUTS 8        /* main output + named side outputs */
#define SL_MAX_KEY_COLS 32      /* key columns per input */
#define SL_MAX_WATCH_FDS 8      /* descriptors one source may wait on */

typedef enum {
    SL_PART_FORWARD = 0,
    SL_PART_REBALANCE,
    SL_PART_HASH,
    SL_PART_BROADCAST
} sl_partitioning;

enum {
    SL_OPF_SOURCE = 1 << 0, /* has no inputs; driven by run() */
    SL_OPF_SINK = 1 << 1,   /* has no main output (side outputs still may exist) */
    SL_OPF_KEYED = 1 << 2,  /* keeps keyed state: the runtime opens op->kstate and
                               the timer service for the key groups it owns */
    SL_OPF_UNION_STATE = 1 << 3, /* operator state is a union (Flink's union list
                               state): on restore every subtask gets the blobs
                               of all old subtasks and keeps its own share */
    SL_OPF_COLLECT = 1 << 4, /* a sink whose rows go to the client that submitted
                               the job (a SELECT's results): the JobManager
                               holds them for GET /jobs/:id/results */
};

typedef enum { SL_TIME_EVENT = 0, SL_TIME_PROCESSING = 1 } sl_time_domain;

/* One logical input, as plan() sees it. All edges into one input carry the
 * same schema (several edges into one input are a UNION ALL). */
typedef struct sl_plan_input {
    const sl_schema *schema;
    sl_partitioning strategy;   /* of its edges; SL_PART_HASH only when every
                                   edge hashes on the same columns */
    int nkeys;                  /* hash: the columns its edges hash on */
    const int *keys;
    int parallel;               /* the operator runs with parallelism > 1 */
} sl_plan_input;

typedef struct sl_plan_outdecl {
    char name[32];              /* "" for the main output */
    sl_schema schema;
} sl_plan_outdecl;

/* State that nothing bounds (sl_plan_unbounded). */
typedef struct sl_plan_unbounded_decl {
    char what[48];              /* "regular join", "GROUP BY" */
    char key[256];              /* what the state is keyed by, as the user wrote it */
    char setting[64];           /* the option that would bound it */
} sl_plan_unbounded_decl;

/* One option of an operator type: a row of the same shape as the cluster
 * configuration's (core/config.h) and checked by the same parser, before
 * plan() runs: name, type, default in its textual form (NULL = none: the
 * option is unset unless given), ENUM choices ("a,b,c") and a one-line
 * description (docs/OPERATORS.md's option tables are generated from it).
 * A name ending in ".*" is a prefix: every key starting with what precedes
 * the '*' is an option of that type ("fields.*"). A table ends with a row
 * whose name is NULL (SL_OP_OPTIONS_END). */
typedef sl_conf_key sl_op_option;
#define SL_OP_OPTIONS_END {NULL, SL_CT_STRING, NULL, NULL, NULL}

/* The session time zone (SQL's SET 'table.local-time-zone', a
 * java.time.ZoneId name). One way carries it: an operator type whose
 * expressions read it (clock functions, TIMESTAMP_LTZ casts, FROM_UNIXTIME,
 * DATE_FORMAT, ...) lists this row in its table and hands the option's value
 * to each tree it parses (sl_expr_set_zone); the SQL planner copies the
 * session's zone into the config of every vertex whose type lists the row,
 * so a job keeps the zone it was planned in across restores. Unset: UTC. */
#define SL_OPT_LOCAL_TIME_ZONE "table.local-time-zone"
#define SL_OP_OPTION_LOCAL_TIME_ZONE                                                             \
    {SL_OPT_LOCAL_TIME_ZONE, SL_CT_STRING, NULL, NULL,                                           \
     "The session time zone the vertex's expressions evaluate in (a java.time.ZoneId name; "     \
     "default UTC): the SQL planner's copy of SET 'table.local-time-zone'."}

/* The options of one vertex, parsed against its type's table (opaque). */
typedef struct sl_plan_opts sl_plan_opts;

/* What plan() gets and fills. */
typedef struct sl_plan_ctx {
    const sl_vertex *v;
    const sl_plan_opts *opts;   /* the vertex's options, parsed: sl_plan_opt_* */
    int nin;                    /* logical inputs (0 for sources) */
    sl_plan_input in[SL_MAX_INPUTS];
    sl_schema *out;             /* = &outputs[0].schema: the main output to fill */
    /* declared by plan(): */
    int nkeys[SL_MAX_INPUTS];   /* key columns of each input (0 = not keyed) */
    int keys[SL_MAX_INPUTS][SL_MAX_KEY_COLS];
    int nout;                   /* 1 + side outputs */
    sl_plan_outdecl outputs[SL_MAX_OUTPUTS];
    sl_plan_unbounded_decl unbounded; /* sl_plan_unbounded: what[0] == 0 = bounded */
} sl_plan_ctx;

/* Declare input `input`'s key: the runtime encodes these columns once per
 * record (the bytes the hash exchange hashes), checks the key group and sets
 * the current key before process(). A parallel keyed input must be fed by
 * hash edges on exactly these columns. SL_ERR with err when out of range. */
int sl_plan_key(sl_plan_ctx *pc, int input, const int *cols, int ncols, char *err, size_t errlen);
/* Declare a named side output (Flink's OutputTag) with its schema (copied).
 * An edge with "output": name leaves from it. Returns its index (>= 1) or
 * SL_ERR with err. */
int sl_plan_output(sl_plan_ctx *pc, const char *name, const sl_schema *schema, char *err,
                   size_t errlen);

/* Declare that this vertex's keyed state grows without bound: `what` kind
 * of operator, keyed by `key`, and the `setting` (a config key of the
 * vertex, e.g. "table.exec.state.ttl") that would bound it. An operator
 * calls it from plan() exactly when that bounding setting is unset, so the
 * one decision lives with the operator; the job graph parser collects the
 * declarations (sl_jobgraph_warnings) for the REST submit response, the
 * SQL client, EXPLAIN and the dashboard. */
void sl_plan_unbounded(sl_plan_ctx *pc, const char *what, const char *key, const char *setting);
/* The same with the key given as input columns (their names, comma-separated). */
void sl_plan_unbounded_cols(sl_plan_ctx *pc, const char *what, const sl_schema *in,
                            const int *cols, int ncols, const char *setting);

/* The vertex's options, already checked against the type's table (an
 * unknown key, a value of the wrong type or not among the choices never
 * reaches plan()). `name` must be a row of the table (not a prefix row):
 * anything else is a bug and aborts.
 *   sl_plan_opt_isset: given in the vertex's config (not the default).
 *   sl_plan_opt_str:   the text (numbers and booleans as their text; ENUM
 *                      canonical; PATH plain), the default when unset, NULL
 *                      when unset without a default or of type JSON.
 *   sl_plan_opt_int:   INT/PORT the number, DURATION ms, MEMORY bytes, BOOL
 *                      0/1, ENUM the index of the choice; 0 when unset
 *                      without a default.
 *   sl_plan_opt_double, sl_plan_opt_bool: DOUBLE, BOOL.
 *   sl_plan_opt_json:  the value as given (any type), NULL when unset.
 * Borrowed for the life of the plan context. */
int sl_plan_opt_isset(const sl_plan_ctx *pc, const char *name);
const char *sl_plan_opt_str(const sl_plan_ctx *pc, const char *name);
int64_t sl_plan_opt_int(const sl_plan_ctx *pc, const char *name);
double sl_plan_opt_double(const sl_plan_ctx *pc, const char *name);
int sl_plan_opt_bool(const sl_plan_ctx *pc, const char *name);
const json_t *sl_plan_opt_json(const sl_plan_ctx *pc, const char *name);

/* What the job around a vertex is like, for check_job: the JobManager's
 * effective settings (the cluster's configuration with the job's "config"
 * over it). */
typedef struct sl_job_check {
    int64_t checkpoint_interval_ms;  /* 0 = no periodic checkpoints */
    int64_t checkpoint_timeout_ms;
    int64_t checkpoint_min_pause_ms;
    int exactly_once;                /* execution.checkpointing.mode */
    int max_parallelism;             /* key groups of the job */
    int unaligned;                   /* execution.checkpointing.unaligned.enabled (appended:
                                      * older operators never read it) */
} sl_job_check;

typedef struct sl_op_def {
    unsigned abi;                /* SL_OP_ABI_VERSION: the header it was built with */
    const char *name;            /* the vertex "type", e.g. "datagen" */
    unsigned flags;              /* SL_OPF_* */
    const sl_op_option *options; /* its config keys, ended by SL_OP_OPTIONS_END;
                                    NULL = none */
    int max_inputs;              /* non-sources: logical inputs accepted (0 = 1) */
    void *(*plan)(sl_plan_ctx *pc, char *err, size_t errlen);
    void (*plan_free)(void *plan);
    /* Optional: at submission, once every vertex is planned, the JobManager
     * asks each vertex whether it can run in this job (e.g. a transactional
     * sink whose transaction timeout the checkpoint interval would outlast).
     * SL_ERR with err refuses the submission (400 with the message). */
    int (*check_job)(const sl_vertex *v, const void *plan, const sl_job_check *jc, char *err,
                     size_t errlen);
    int (*open)(sl_op *op);
    int (*process)(sl_op *op, int input, sl_row *row);
    int (*run)(sl_op *op);
    int (*watermark)(sl_op *op, int input, int64_t wm);
    int (*end_input)(sl_op *op, int input);
    int (*on_timer)(sl_op *op, sl_time_domain domain, int64_t time, const void *ns, size_t nslen);
    int (*proc_time)(sl_op *op, int64_t now_ms);
    int (*ready)(sl_op *op);
    void (*close)(sl_op *op);
    /* Checkpoints. Keyed state (op->kstate, state handles) and timers are
     * snapshotted and restored by the runtime, by key group; these hooks are
     * for everything else.
     *   snapshot_state: operator state at the barrier of checkpoint `cpid`
     *     (e.g. a source's position), as one blob (*blob malloc'ed, caller
     *     frees; *len 0 = nothing). Task thread, synchronous: keep it quick;
     *     slow work (fsync) goes to sl_op_defer.
     *   restore_state: after open(), before any input: the blobs this subtask
     *     gets. Same parallelism: exactly the blob its own index wrote. New
     *     parallelism: the old blobs dealt out round-robin (blob i goes to
     *     subtask i % parallelism), so the union is always the old state;
     *     a subtask gets its blobs in the order of the old subtasks' indexes.
     *     With SL_OPF_UNION_STATE: every subtask gets every old blob, at any
     *     parallelism, and picks what it owns (e.g. a source its partitions).
     *   checkpoint_complete: checkpoint `cpid` is durable everywhere: a
     *     two-phase-commit sink publishes what it staged up to it.
     *   checkpoint_abort: checkpoint `cpid` failed; staged data stays
     *     pending for the next one. */
    int (*snapshot_state)(sl_op *op, int64_t cpid, void **blob, size_t *len);
    int (*restore_state)(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs);
    int (*checkpoint_complete)(sl_op *op, int64_t cpid);
    int (*checkpoint_abort)(sl_op *op, int64_t cpid);
} sl_op_def;

/* The asynchronous part of a snapshot: runs on the TaskManager's snapshot
 * thread before the checkpoint is acknowledged; owns arg (frees it). Must not
 * touch the operator's live state. SL_ERR with err declines the checkpoint. */
typedef int (*sl_defer_fn)(void *arg, char *err, size_t errlen);

/* Where an operator's output goes: the next operator in its chain, or the
 * runtime's network writers. Set up by the runtime. */
typedef int (*sl_emit_fn)(void *ctx, int output, sl_row *row);
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
    uint64_t records_in_errors; /* numRecordsInErrors: input records skipped as undecodable */
} sl_op_metrics;

struct sl_op {
    const sl_op_def *def;
    const sl_vertex *vertex;
    const void *plan;           /* from def->plan, shared read-only */
    void *priv;                 /* the operator's own per-subtask state */
    int subtask;                /* 0-based index of this subtask */
    int parallelism;            /* of this vertex */
    int max_parallelism;        /* of the job: number of key groups */
    int nin;                    /* logical inputs */
    const sl_schema *ins[SL_MAX_INPUTS]; /* schema per input */
    const sl_schema *in;        /* = ins[0] (NULL for sources) */
    const sl_schema *out;       /* main output schema (NULL for sinks) */
    int nout;                   /* declared outputs, main included */
    const char *out_names[SL_MAX_OUTPUTS]; /* "" = main */
    unsigned char out_connected[SL_MAX_OUTPUTS]; /* an edge leaves from it */
    sl_emit_fn emit;            /* downstream */
    sl_emit_wm_fn emit_wm;
    sl_emit_idle_fn emit_idle;  /* NULL: the runtime does not track idleness here */
    void *emit_ctx;
    sl_arena scratch;           /* reset by the runtime before each callback */
    sl_op_metrics metrics;
    int64_t wake_at_ms;         /* sources: when run() wants to be called again
                                   (sl_mono_ms clock) after SL_AGAIN */
    FILE *out_stream;           /* where print writes (the TaskManager's stdout) */
    /* keyed operators: the runtime's key context, state and timer service */
    sl_kstate *kstate;          /* their state backend */
    const void *key;            /* current key: encoded key columns (borrowed) */
    size_t klen;
    int kg;                     /* its key group */
    int kg_first, kg_last;      /* key groups this subtask owns */
    sl_timers *event_timers;    /* runtime-owned; use sl_op_timer_* */
    sl_timers *proc_timers;
    int64_t proc_time_at;       /* wall-clock ms for the next proc_time() call;
                                   INT64_MAX (the runtime's initial value) = none */
    int64_t input_wm[SL_MAX_INPUTS]; /* per input (INT64_MIN before any) */
    int64_t current_watermark;  /* min over inputs: the operator's event time */
    int inputs_ended;           /* how many inputs have ended */
    const char *task_name;      /* "calc (2/4)" for messages */
    int checkpointing;          /* set by the runtime before open(): 1 when the
                                   job takes checkpoints (the hooks above will be
                                   called), so a two-phase-commit sink stages its
                                   output instead of writing it straight out */
    int final_checkpoint;       /* set by the runtime before open(): 1 when the
                                   task, its inputs ended, waits for a checkpoint
                                   to complete before it finishes (a final
                                   checkpoint), so a two-phase-commit sink commits
                                   its last rows in checkpoint_complete, never in
                                   end_input */
    /* descriptors to wait on (sl_op_watch_fd) */
    int nwatch;
    int watch_fd[SL_MAX_WATCH_FDS];
    short watch_events[SL_MAX_WATCH_FDS];
    void *rt;                   /* the runtime's own per-operator data */
    char err[512];              /* failure message for SL_ERR returns */
};

/* ---- output ---------------------------------------------------------------- */

static inline int sl_op_emit(sl_op *op, sl_row *row)
{
    op->metrics.records_out++;
    return op->emit(op->emit_ctx, 0, row);
}

/* The index of declared output `name` ("" = main), or -1. */
int sl_op_output(const sl_op *op, const char *name);

/* A row to side output `output`. Returns SL_DONE when no edge leaves from it
 * (the caller decides: e.g. the window drops and counts a late row). */
static inline int sl_op_emit_to(sl_op *op, int output, sl_row *row)
{
    if (output < 0 || output >= op->nout || !op->out_connected[output]) return SL_DONE;
    if (output == 0) op->metrics.records_out++;
    return op->emit(op->emit_ctx, output, row);
}

static inline int sl_op_emit_watermark(sl_op *op, int64_t wm)
{
    return op->emit_wm ? op->emit_wm(op->emit_ctx, wm) : SL_OK;
}

static inline int sl_op_emit_idle(sl_op *op, int idle)
{
    return op->emit_idle ? op->emit_idle(op->emit_ctx, idle) : SL_OK;
}

/* Set op->err and return SL_ERR. */
int sl_op_fail(sl_op *op, const char *fmt, ...) SL_PRINTF(2, 3);

/* ---- timer service (keyed operators) ---------------------------------------- */

/* Register / delete a timer for the current key in namespace ns (copied):
 * on_timer(op, domain, time, ns) is called with the key set once the
 * watermark (event time) or the wall clock (processing time) reaches time.
 * Registering the same (time, key, ns) twice keeps one. Checkpointed and
 * restored with the key groups. */
int sl_op_timer_register(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen);
int sl_op_timer_delete(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen);
static inline int64_t sl_op_current_watermark(const sl_op *op) { return op->current_watermark; }
int64_t sl_op_processing_time(const sl_op *op); /* wall clock, ms */

/* ---- state handles (keyed operators, in open()) ------------------------------ */

typedef enum { SL_STATE_VALUE = 0, SL_STATE_LIST = 1, SL_STATE_MAP = 2 } sl_state_kind;

/* A named state of the current key, with an optional time-to-live in
 * processing time (ttl_ms 0 = none; Flink's StateTtlConfig with OnCreateAndWrite
 * and NeverReturnExpired: an expired value is never returned). Identical on
 * both backends and snapshotted by key group. Handles live until close. */
sl_vstate *sl_op_state(sl_op *op, const char *name, sl_state_kind kind, int64_t ttl_ms);

/* Flink's StateTtlConfig in full (sl_op_state_ttl): how long, what refreshes
 * the time-to-live, whether an expired value that is still stored may be
 * returned, and when expired entries are removed. {0} is no TTL. */
typedef enum {
    SL_TTL_ON_CREATE_AND_WRITE = 0, /* a write (re)starts the time-to-live */
    SL_TTL_ON_READ_AND_WRITE = 1    /* so does a read that returns the value */
} sl_ttl_update;
typedef enum {
    SL_TTL_NEVER_RETURN_EXPIRED = 0,        /* expired is absent, always */
    SL_TTL_RETURN_EXPIRED_IF_NOT_CLEANED_UP = 1 /* returned once more, then removed */
} sl_ttl_visibility;
enum {
    SL_TTL_CLEANUP_ON_READ = 1,       /* an expired entry read is removed (Flink's default) */
    SL_TTL_CLEANUP_FULL_SNAPSHOT = 2  /* expired entries are left out of checkpoints and
                                         savepoints (not RocksDB's incremental ones) */
};
typedef struct sl_state_ttl {
    int64_t ttl_ms;                 /* processing time; 0 = no TTL */
    sl_ttl_update update;
    sl_ttl_visibility visibility;
    unsigned cleanup;               /* SL_TTL_CLEANUP_* bits; 0 = ON_READ */
} sl_state_ttl;
/* sl_op_state with a whole StateTtlConfig (ttl NULL: none). */
sl_vstate *sl_op_state_ttl(sl_op *op, const char *name, sl_state_kind kind, const sl_state_ttl *ttl);
/* Value: SL_OK with *val and *len borrowed until the next state call, SL_DONE
 * when absent or expired. ns/nslen is a namespace (NULL/0 = none). */
int sl_value_get(sl_vstate *s, const void *ns, size_t nslen, const void **val, size_t *len);
int sl_value_put(sl_vstate *s, const void *ns, size_t nslen, const void *val, size_t len);
int sl_state_clear(sl_vstate *s, const void *ns, size_t nslen); /* value, list or map */
/* List: append one element; visit every element in insertion order (fn
 * returns non-zero to stop). */
int sl_list_add(sl_vstate *s, const void *ns, size_t nslen, const void *val, size_t len);
int sl_list_each(sl_vstate *s, const void *ns, size_t nslen,
                 int (*fn)(void *ctx, const void *val, size_t len), void *ctx);
/* Map: user key -> value under the current key. */
int sl_map_get(sl_vstate *s, const void *ns, size_t nslen, const void *k, size_t klen,
               const void **val, size_t *len);
int sl_map_put(sl_vstate *s, const void *ns, size_t nslen, const void *k, size_t klen,
               const void *val, size_t len);
int sl_map_remove(sl_vstate *s, const void *ns, size_t nslen, const void *k, size_t klen);
int sl_map_each(sl_vstate *s, const void *ns, size_t nslen,
                int (*fn)(void *ctx, const void *k, size_t klen, const void *val, size_t len),
                void *ctx);

/* ---- operators that wait on descriptors ----------------------------------------- */

/* Sources: wait on fd (POLLIN / POLLOUT) as well as on wake_at_ms when run()
 * returns SL_AGAIN; mail (checkpoint triggers) wakes the task at once
 * whatever the descriptors do, so barrier latency never depends on them.
 * Other operators: the task waits on fd as well as on its input, and
 * calls ready() when it may be ready. In open(). */
int sl_op_watch_fd(sl_op *op, int fd, short events);
void sl_op_unwatch_fd(sl_op *op, int fd);

/* ---- what an operator shows about itself -------------------------------------- */

#define SL_OP_INFO_MAX 2048     /* bytes of one operator's published info */

/* Publish a small JSON object describing the operator's live state (e.g. a
 * transactional sink's open transactions; at most SL_OP_INFO_MAX bytes, a
 * longer one is dropped with a warning). It replaces the previous one; the
 * TaskManager sends it with its heartbeats and the JobManager's REST API
 * shows it (GET /jobs/:jobid/operator-info). Task thread; not per record. */
void sl_op_set_info(sl_op *op, const char *json);

/* ---- asynchronous snapshot part ------------------------------------------------ */

/* ---- after a restore ------------------------------------------------------------ */

/* proc_time_at at the earliest restored processing-time timer (INT64_MAX
 * when none): for keyed operators whose proc_time() serves their timers
 * (TTL expiry, processing-time frames). sl_op_restore_proc_timers is the
 * same as a restore_state hook for operators with no operator state. */
void sl_op_arm_restored_proc_timers(sl_op *op);
int sl_op_restore_proc_timers(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs);

/* From snapshot_state: run fn(arg) on the snapshot thread before this
 * checkpoint is acknowledged (e.g. fsync what was staged). */
int sl_op_defer(sl_op *op, sl_defer_fn fn, void *arg);

/* ---- the registry (core/opregistry.c) ----------------------------------------- */

/* Add an operator type. The table must stay valid for the life of the
 * process. Fails (with err) when def->abi is not this header's
 * SL_OP_ABI_VERSION, the name is not [A-Za-z0-9_.-]{1,64}, a callback the
 * kind requires is missing, or the name is taken. Registering the same
 * table twice is a no-op. */
int sl_op_register(const sl_op_def *def, char *err, size_t errlen);
const sl_op_def *sl_op_find(const char *type);
/* Names of all types, comma-separated, into buf; returns how many. */
int sl_op_type_list(char *buf, size_t len);
/* The i-th registered type (registration order), NULL past the end. */
const sl_op_def *sl_op_nth(int i);

/* Options (core/opregistry.c). sl_op_option_find: the row of def's table
 * naming `key` (a prefix row matches every key it covers), or NULL.
 * sl_op_options_check_keys: every key of `config` is an option of def, or
 * SL_ERR naming the first that is not ("<what>: unknown option 'k' for type
 * 't'; did you mean 'x'?"). sl_op_options_parse: checks the keys, then
 * each value against its row, into *out (free with sl_op_options_free);
 * errors read "<what>: option 'k': 'v' is not an integer". */
const sl_op_option *sl_op_option_find(const sl_op_def *def, const char *key);
int sl_op_options_check_keys(const sl_op_def *def, const json_t *config, const char *what,
                             char *err, size_t errlen);
int sl_op_options_parse(const sl_op_def *def, const json_t *config, const char *what,
                        sl_plan_opts **out, char *err, size_t errlen);
void sl_op_options_free(sl_plan_opts *opts);
/* docs/OPERATORS.md's option table of one type, as markdown, to out. */
void sl_op_options_print_docs(const sl_op_def *def, FILE *out);
/* The built-in operators (operators/builtin.c). Call once at start-up. */
void sl_ops_register_builtin(void);

/* A plugin is a shared object exporting
 *     int sl_plugin_init(unsigned abi, char *err, size_t errlen)
 * which checks abi == SL_OP_ABI_VERSION and calls sl_op_register() for each
 * of its operators. sl_op_plugins_load dlopens every path of a comma- or
 * semicolon-separated list and calls its init; the first failure is
 * returned with the path in err. */
#define SL_PLUGIN_INIT_SYMBOL "sl_plugin_init"
typedef int (*sl_plugin_init_fn)(unsigned abi, char *err, size_t errlen);
int sl_op_plugins_load(const char *list, char *err, size_t errlen);

#endif
