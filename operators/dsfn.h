/*
 * dsfn.h -- the DataStream API's function tables (public, versioned): what a
 * C job's shared object exports for the TaskManagers to run -- process
 * functions, timestamp assigners, key selectors, async functions -- and the
 * calls those functions make on the task thread (sl_ds_key, sl_ds_output,
 * broadcast state, async completion). The operators that host user code
 * (operators/process.c, async.c, key_select.c, watermark.c) implement it;
 * api/datastream.h, the job-building half, includes it, so a C job includes
 * datastream.h alone.
 */
#ifndef SL_DSFN_H
#define SL_DSFN_H

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

/* ---- complex event processing (Flink CEP: sl_ds_cep) ------------------------------ */

/* A match, whole (select) or partial (a condition's context, a timeout):
 * its rows by the name of the pattern element they were taken for. */
typedef struct sl_cep_match sl_cep_match;
/* Rows taken for `name` so far (0 for a name the pattern does not have). */
int sl_cep_count(const sl_cep_match *m, const char *name);
/* The i-th of them (0 the first; -1 the last, -2 the one before, ...), or
 * NULL; borrowed for the callback (each row its own). */
const sl_row *sl_cep_row(const sl_cep_match *m, const char *name, int i);
/* The match's rows in order, whatever element took them: n of them, the
 * element's name of row i by sl_cep_name. */
int sl_cep_length(const sl_cep_match *m);
const sl_row *sl_cep_at(const sl_cep_match *m, int i);
const char *sl_cep_name(const sl_cep_match *m, int i);

/* The functions of one pattern (Flink's IterativeCondition per element,
 * PatternSelectFunction and PatternTimeoutFunction in one table). Task
 * thread; no state of their own (the operator keeps the matches). */
typedef struct sl_cep_fn {
    unsigned abi;               /* SL_DS_ABI_VERSION */
    /* May `row` be taken for element `name`, after the rows of m? NULL:
     * every element takes every row. */
    bool (*condition)(const char *name, const sl_row *row, const sl_cep_match *m);
    /* A complete match into out->vals[0..out->n) (zeroed; the output
     * schema's columns; strings may point into the match's rows or into
     * scratch). SL_ERR fails the job. */
    int (*select)(const sl_cep_match *m, sl_row *out, sl_arena *scratch);
    /* A partial match that WITHIN ran out (timeout_ts: its first row's time
     * + the interval) into a row of the "timeout" side output's schema; NULL:
     * timed-out matches are dropped. */
    int (*timeout)(const sl_cep_match *m, int64_t timeout_ts, sl_row *out, sl_arena *scratch);
} sl_cep_fn;

#endif
