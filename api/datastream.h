/*
 * Layer api/ (docs/ARCHITECTURE.md, "Layers"): over sql/: the public APIs
 * that build jobs -- the DataStream builder for C jobs and its bridges to
 * SQL (api/bridge.c). Used by the JobManager's job-building child, the CLI
 * and C jobs.
 *
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
 *    operator as the context (sl_op, core/operator.h): the current key
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

#include "dsfn.h"

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

/* ---- complex event processing (Flink CEP) ----------------------------------------- */

/* A pattern in the spirit of Flink CEP's Pattern API, built element by
 * element (names are identifiers; "__" starts none of them):
 *   p = sl_cep_begin("start");
 *   p = sl_cep_followed_by(p, "middle"); p = sl_cep_one_or_more(p);
 *   p = sl_cep_next(p, "end"); p = sl_cep_within(p, 10000);
 * next: strict contiguity (the element takes the row right after the
 * previous one); followed_by: relaxed (rows that do not fit are skipped
 * until the first that does); followed_by_any: non-deterministic relaxed
 * (rows that fit may be skipped too, when the rest of the pattern needs a
 * later one). not_next(name): the row right after the previous element
 * must not fit name (it is not taken); not_followed_by(name): no row that
 * fits name between the previous element and the next, which must be a
 * followed_by (_any) one; at the end of a pattern with within, none until
 * the window is over (the match then ends with the window).
 * A quantifier applies to the element last
 * added: times(lo, hi) (hi -1: lo or more; times(n, n) exactly n),
 * one_or_more, optional (0 or its count), greedy (take as many rows as fit;
 * by default a looping element takes as few as the next element allows).
 * The conditions, the output rows and the timed-out partial matches come
 * from an sl_cep_fn table of the job's library (dsfn.h). The pattern is
 * the same engine as SQL's MATCH_RECOGNIZE (docs/DATASTREAM.md); one match
 * per start row, the next search after a match's last row. Caller frees
 * with sl_cep_pattern_free (NULL is a no-op); a NULL p passes through. */
typedef struct sl_cep_pattern sl_cep_pattern;
sl_cep_pattern *sl_cep_begin(const char *name);
sl_cep_pattern *sl_cep_next(sl_cep_pattern *p, const char *name);
sl_cep_pattern *sl_cep_followed_by(sl_cep_pattern *p, const char *name);
sl_cep_pattern *sl_cep_followed_by_any(sl_cep_pattern *p, const char *name);
sl_cep_pattern *sl_cep_not_next(sl_cep_pattern *p, const char *name);
sl_cep_pattern *sl_cep_not_followed_by(sl_cep_pattern *p, const char *name);
sl_cep_pattern *sl_cep_times(sl_cep_pattern *p, int lo, int hi);
sl_cep_pattern *sl_cep_one_or_more(sl_cep_pattern *p);
sl_cep_pattern *sl_cep_optional(sl_cep_pattern *p);
sl_cep_pattern *sl_cep_greedy(sl_cep_pattern *p);
sl_cep_pattern *sl_cep_within(sl_cep_pattern *p, int64_t ms);
void sl_cep_pattern_free(sl_cep_pattern *p);
/* CEP.pattern(keyed, p) with select (and a timeout side output): a
 * match_recognize vertex on a keyed stream (sl_ds_key_by), in event time
 * when the stream has watermarks (sl_ds_watermarks), else in processing
 * time. `symbol` names the sl_cep_fn table; out_schema its select rows'
 * columns; timeout_schema, when not NULL, the columns of the side output
 * "timeout" (sl_ds_side_output(stream, "timeout")). The pattern is copied. */
sl_ds_stream *sl_ds_cep(sl_ds_stream *keyed, const char *id, const sl_cep_pattern *p,
                        const char *symbol, const char *out_schema, const char *timeout_schema);

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
