/*
 * datastream.h -- Sluice's DataStream API in C (public, versioned).
 *
 * Two halves:
 *
 *  - A builder. A C job is a shared object exporting
 *        int sluice_job_main(sl_ds_env *env, int argc, char **argv);
 *    which builds a dataflow with the calls below; `sluice run job.so
 *    [args...]` loads it, runs the entry point, and submits the result --
 *    the same JSON job graph POST /jobs takes, so savepoints, rescaling,
 *    the dashboard and the CLI treat C jobs like any other.
 *
 *  - Process functions (Flink's KeyedProcessFunction / ProcessFunction):
 *    a static sl_process_fn table in the same object, named by
 *    sl_ds_process(). Its callbacks run on the task thread with the
 *    operator as the context (sl_op, common/operator.h): the current key
 *    (sl_ds_key), the element's timestamp (row->ts), the current
 *    watermark and processing time, timers in both time domains
 *    (sl_op_timer_register / _delete), value / list / map state with TTL
 *    (sl_op_state and its calls), the collector (sl_op_emit) and side
 *    outputs by name (sl_ds_output).
 *
 * With `sluice run` the TaskManagers load the object from the absolute
 * path the job names (a shared directory, or the same image); uploaded with
 * POST /jars/upload and run with POST /jars/:id/run it travels to them with
 * the deployment instead ("library": "jar:<id>"). SL_DS_ABI_VERSION is
 * checked for every function table a job names when it is built and when
 * a TaskManager loads it: one built against another version is refused with
 * both numbers.
 *
 * Besides process functions: connect (CoProcessFunction), broadcast state,
 * async I/O (sl_async_fn), timestamp assigners and key selectors, and the
 * bridges to SQL (fromDataStream / toDataStream / toChangelogStream) -- see
 * their sections below.
 */
#ifndef SL_DATASTREAM_H
#define SL_DATASTREAM_H

#include "operator.h"

/* 2: process_element1/2 (connect) and process_broadcast_element.
 * Bumped when the layout of a table below changes; new table types
 * (sl_timestamp_assigner, sl_key_selector) and new calls leave it as is. */
#define SL_DS_ABI_VERSION 2u

/* ---- process functions ------------------------------------------------------ */

/* One table serves Flink's ProcessFunction and KeyedProcessFunction (one
 * input), CoProcessFunction and KeyedCoProcessFunction (two connected
 * inputs: process_element1 for the first, process_element2 for the second,
 * sharing the key's state and timers), and BroadcastProcessFunction /
 * KeyedBroadcastProcessFunction (process_element for the data side,
 * process_broadcast_element for the broadcast side). A callback left NULL
 * falls back to process_element with the input's number (0, 1). */
typedef struct sl_process_fn {
    unsigned abi;               /* SL_DS_ABI_VERSION */
    /* per subtask: make state handles, allocate op->priv */
    int (*open)(sl_op *ctx);
    /* one element of input `input`; the key is set on keyed streams */
    int (*process_element)(sl_op *ctx, int input, const sl_row *row);
    /* connect(a, b): an element of a / of b (NULL: process_element) */
    int (*process_element1)(sl_op *ctx, const sl_row *row);
    int (*process_element2)(sl_op *ctx, const sl_row *row);
    /* broadcast: an element of the broadcast input; no current key, the
     * broadcast state is read-write here and read-only everywhere else */
    int (*process_broadcast_element)(sl_op *ctx, const sl_row *row);
    /* a timer of the current key is due (ns: what it was registered with) */
    int (*on_timer)(sl_op *ctx, sl_time_domain domain, int64_t time);
    void (*close)(sl_op *ctx);
} sl_process_fn;

/* The current key's column values (keyed streams), decoded into vals[n]
 * (n = the number of key columns); strings point into the key bytes,
 * borrowed for the callback. SL_ERR when the stream is not keyed. */
int sl_ds_key(sl_op *ctx, sl_value *vals, int n);

/* A row to the side output `name` declared with sl_ds_process; SL_OK also
 * when no edge leaves from it (then the row is dropped). */
int sl_ds_output(sl_op *ctx, const char *name, const sl_row *row);

/* A parameter of the function, from the vertex option "user.<name>" (set
 * with sl_ds_option(stream, "user.<name>", value) when building the job):
 * Flink's open(Configuration). Borrowed for the job's life; dflt when
 * absent. */
const char *sl_ds_param(sl_op *ctx, const char *name, const char *dflt);

/* ---- timestamp assigners and key selectors ----------------------------------------- */

/* Flink's TimestampAssigner (sl_ds_watermarks_with_assigner): the event
 * time of a row, in ms since the epoch; record_ts is the timestamp the row
 * carries (row->ts). Task thread, once per row; no state, no context. */
typedef struct sl_timestamp_assigner {
    unsigned abi;               /* SL_DS_ABI_VERSION */
    int64_t (*extract_timestamp)(const sl_row *row, int64_t record_ts);
} sl_timestamp_assigner;

/* Flink's KeySelector (sl_ds_key_by_fn): the row's key into key[0..n) (n =
 * the key's columns, zeroed before the call; a string may point into the
 * row or into memory of the function's own, read before the next call).
 * SL_OK, or SL_ERR to fail the job. Task thread; no state, no context. */
typedef struct sl_key_selector {
    unsigned abi;               /* SL_DS_ABI_VERSION */
    int (*get_key)(const sl_row *row, sl_value *key);
} sl_key_selector;

/* ---- broadcast state (BroadcastProcessFunction, KeyedBroadcastProcessFunction) -- */

/* Operator state of a process function fed by a broadcast stream: a map of
 * bytes to bytes, one per name (Flink's MapStateDescriptor), the same on
 * every subtask because every subtask sees every broadcast element.
 * Read-write in process_broadcast_element, read-only everywhere else (a
 * write there fails the job). Checkpointed with the operator; at restore
 * every subtask gets it, whatever the new parallelism. Make the handles in
 * open(); they live until close. */
typedef struct sl_bstate sl_bstate;
sl_bstate *sl_ds_broadcast_state(sl_op *ctx, const char *name);
/* SL_OK with *v, *vlen borrowed until the next write; SL_DONE when absent. */
int sl_bstate_get(sl_bstate *s, const void *k, size_t klen, const void **v, size_t *vlen);
int sl_bstate_put(sl_bstate *s, const void *k, size_t klen, const void *v, size_t vlen);
int sl_bstate_remove(sl_bstate *s, const void *k, size_t klen);
/* Every entry in key order (bytes compared as unsigned, shorter first on a
 * tie); fn returns non-zero to stop. */
int sl_bstate_each(sl_bstate *s, int (*fn)(void *ctx, const void *k, size_t klen, const void *v, size_t vlen),
                   void *ctx);

/* ---- async I/O (Flink's AsyncFunction) ------------------------------------------- */

/* One request in flight: a handle the user function keeps (by value) and
 * completes from any thread. A handle whose request already ended (timed
 * out, failed, or was completed once) is stale: completing it does nothing. */
typedef struct sl_async_req {
    struct sl_async_slot *slot;
    uint64_t gen;               /* which use of the slot this request is */
} sl_async_req;

typedef struct sl_async_fn {
    unsigned abi;               /* SL_DS_ABI_VERSION */
    /* per subtask: allocate ctx->priv, start worker threads */
    int (*open)(sl_op *ctx);
    /* Start the request for `row` (borrowed: copy what the request needs)
     * and return at once; complete it later with sl_async_complete or
     * sl_async_fail, from any thread. Task thread. A retry calls it again
     * with a new handle. SL_ERR fails the job. */
    int (*async_invoke)(sl_op *ctx, sl_async_req req, const sl_row *row);
    /* The request for `row` ran past the timeout: complete `req` here (a
     * fallback result, or none) or return SL_ERR to fail the job. NULL: the
     * job fails with "Async function call has timed out." Task thread. */
    int (*timeout)(sl_op *ctx, sl_async_req req, const sl_row *row);
    /* Stop every thread that could complete a request and wait for them:
     * after close returns no handle of this subtask may be completed. */
    void (*close)(sl_op *ctx);
} sl_async_fn;

/* Complete a request with n rows of the operator's output schema (copied;
 * n = 0: no output for this input). Any thread. SL_OK, SL_DONE when the
 * handle is stale (the row is dropped), SL_ERR when the rows do not fit
 * the operator's max-result-bytes (the request then fails). */
int sl_async_complete(sl_async_req req, const sl_row *rows, int n);
/* The request failed: retried per the retry strategy while attempts
 * remain, else the job fails with `message`. Any thread. */
int sl_async_fail(sl_async_req req, const char *message);

/* ---- building a job ----------------------------------------------------------- */

typedef struct sl_ds_env sl_ds_env;
typedef struct sl_ds_stream sl_ds_stream;

/* Options are NULL-terminated lists of "key", "value" pairs. */
sl_ds_env *sl_ds_env_new(const char *job_name);
void sl_ds_env_free(sl_ds_env *env);
void sl_ds_set_parallelism(sl_ds_env *env, int parallelism);
/* The library the process functions of this job live in (sluice run sets
 * it to the job's own object). */
void sl_ds_set_library(sl_ds_env *env, const char *path);

/* A source vertex of operator `type` (e.g. "datagen"), its schema as
 * "name TYPE, name TYPE". */
sl_ds_stream *sl_ds_source(sl_ds_env *env, const char *id, const char *type, const char *schema,
                           const char *const *options);
/* calc: project with SQL expressions (NULL: keep all) and/or filter. */
sl_ds_stream *sl_ds_map(sl_ds_stream *in, const char *id, const char *const *projection);
sl_ds_stream *sl_ds_filter(sl_ds_stream *in, const char *id, const char *condition);
/* Bounded out-of-orderness watermarks on a TIMESTAMP column. */
sl_ds_stream *sl_ds_watermarks(sl_ds_stream *in, const char *id, const char *column,
                               const char *delay, const char *idle_timeout);
/* Watermarks with a timestamp assigner (WatermarkStrategy
 * .forBoundedOutOfOrderness(delay).withTimestampAssigner(...).withIdleness(...)):
 * `symbol` is an sl_timestamp_assigner in the job's library. */
sl_ds_stream *sl_ds_watermarks_with_assigner(sl_ds_stream *in, const char *id, const char *symbol,
                                             const char *delay, const char *idle_timeout);
/* The next operator gets this stream hashed on the columns (keyBy). */
sl_ds_stream *sl_ds_key_by(sl_ds_stream *in, const char *const *columns);
/* keyBy(KeySelector): an sl_key_selector `symbol` in the job's library
 * computes each row's key, of columns key_schema ("name TYPE, ..."; names
 * apart from the row's). A `key_select` vertex `id` appends the key's
 * columns to the row, and the next operator gets the stream hashed on them:
 * it sees them after the row's own columns, and sl_ds_key returns them. */
sl_ds_stream *sl_ds_key_by_fn(sl_ds_stream *in, const char *id, const char *symbol,
                              const char *key_schema);
/* flatMap: zero, one or more rows per input row -- an sl_process_fn whose
 * process_element emits them with sl_op_emit (no key, state or timers
 * needed; side outputs as with sl_ds_process). On a keyed stream it is keyed
 * like sl_ds_process. */
sl_ds_stream *sl_ds_flat_map(sl_ds_stream *in, const char *id, const char *symbol,
                             const char *out_schema);
/* A process function `symbol` (an sl_process_fn in the job's library) with
 * output schema out_schema; side_outputs lists "name" and "schema" pairs
 * (NULL-terminated; a NULL schema means the input's). Keyed when `in`
 * came from sl_ds_key_by. */
sl_ds_stream *sl_ds_process(sl_ds_stream *in, const char *id, const char *symbol,
                            const char *out_schema, const char *const *side_outputs);
/* Two streams connected for one process function (Flink's connect):
 * sl_ds_process on the result makes a co-process vertex whose input 0 is a
 * and input 1 is b. Keyed (KeyedCoProcessFunction) when both came from
 * sl_ds_key_by, on key columns of the same types; neither keyed makes a
 * CoProcessFunction; one keyed and not the other is an error. */
sl_ds_stream *sl_ds_connect(sl_ds_stream *a, sl_ds_stream *b);
/* The stream sent whole to every subtask of what it is connected to
 * (Flink's broadcast(descriptor)): sl_ds_connect(data, sl_ds_broadcast(rules))
 * then sl_ds_process makes a (keyed) broadcast process function, input 1 the
 * broadcast side. Only for sl_ds_connect's second stream. */
sl_ds_stream *sl_ds_broadcast(sl_ds_stream *in);
/* Async I/O on `in` (AsyncDataStream.orderedWait / unorderedWait): an
 * sl_async_fn `symbol` in the job's library, output schema out_schema.
 * options: "mode" ("ordered" | "unordered"), "capacity", "timeout",
 * "retry-strategy" ("no-retry" | "fixed-delay" | "exponential-delay"),
 * "retry.max-attempts", "retry.delay", "retry.max-delay",
 * "retry.multiplier", "max-result-bytes" (docs/DATASTREAM.md). */
sl_ds_stream *sl_ds_async(sl_ds_stream *in, const char *id, const char *symbol,
                          const char *out_schema, const char *const *options);
/* The side output `name` of a process stream, as a stream. */
sl_ds_stream *sl_ds_side_output(sl_ds_stream *in, const char *name);
/* UNION ALL of two streams of one schema. */
sl_ds_stream *sl_ds_union(sl_ds_stream *a, sl_ds_stream *b, const char *id);
/* A sink vertex of operator `type` ("print", "file", "blackhole"). */
void sl_ds_sink(sl_ds_stream *in, const char *id, const char *type, const char *const *options);
/* Per-vertex settings of the stream's operator: its uid (state mapping),
 * parallelism, and any operator option (docs/JOBS.md). */
void sl_ds_uid(sl_ds_stream *s, const char *uid);
void sl_ds_option(sl_ds_stream *s, const char *key, const char *value);
void sl_ds_parallelism(sl_ds_stream *s, int parallelism);

/* ---- the bridges to SQL (Flink's StreamTableEnvironment) ---------------------------- */

/* The job has a SQL session of its own (a catalog and SET options, as the
 * SQL client's): a stream becomes a table in it, a query over its tables
 * becomes a stream. The query's operators are vertices of this job's graph
 * -- one job, one graph, one checkpoint -- planned by the same planner as
 * the SQL client's. An error is kept and reported by sl_ds_to_json. */

/* A DDL statement or SET in the job's SQL session: CREATE TABLE (a datagen
 * or Kafka table the queries may join), CREATE VIEW, SET
 * 'table.exec.state.ttl' = ...; SL_ERR (kept for sl_ds_to_json) when it
 * fails or is a query or INSERT. */
int sl_ds_sql(sl_ds_env *env, const char *statement);
/* fromDataStream + createTemporaryView: `in` becomes the temporary table
 * `name`. schema NULL: the stream's columns, and its event-time attribute
 * when it came from sl_ds_watermarks (through filter, key_by or map(NULL)).
 * Otherwise the body of a CREATE TABLE (Flink's Schema): the stream's
 * columns (all, in order, with their types) or none of them, computed
 * columns ("amount_eur AS amount * 0.9", "proc AS PROCTIME()") and
 * "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND", e.g.
 *     sl_ds_from_data_stream(clicks, "clicks",
 *         "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND"); */
void sl_ds_from_data_stream(sl_ds_stream *in, const char *name, const char *schema);
/* toDataStream: a SELECT over the session's tables as a stream of its
 * rows (all +I). An updating query (GROUP BY without a window, Top-N, a
 * regular join...) is refused here, naming the operator that makes it
 * updating, as Flink does. The stream's vertex ids are the planner's. */
sl_ds_stream *sl_ds_to_data_stream(sl_ds_env *env, const char *query);
/* toChangelogStream: any query; each row carries its kind in row->kind
 * (+I, -U, +U, -D: sl_rowkind_short). */
sl_ds_stream *sl_ds_to_changelog_stream(sl_ds_env *env, const char *query);

/* The job graph as JSON text (caller frees), or NULL with err when a call
 * above was given something it could not use (the first such problem). */
char *sl_ds_to_json(sl_ds_env *env, char *err, size_t errlen);

/* The entry point a C job exports. */
#define SL_DS_JOB_MAIN "sluice_job_main"
typedef int (*sl_ds_job_main_fn)(sl_ds_env *env, int argc, char **argv);

/* Load the C job at path, run its entry point (`entry`, NULL: sluice_job_main) with argv and return the job
 * graph it built (caller frees), its process functions' "library" set to
 * `library` (where the TaskManagers find it: the absolute path, or
 * "jar:<id>" for an uploaded one). Every function table the graph names
 * must be in the object with this SL_DS_ABI_VERSION (else an error naming
 * both versions). NULL with err, which names the object as `shown`. The
 * object stays loaded. */
char *sl_ds_build(const char *path, const char *entry, const char *library, const char *shown,
                  int argc, char **argv, char *err, size_t errlen);

#endif
