/*
 * rest_checkpoints.c -- the JSON of GET /jobs/:id/checkpoints and of
 * .../checkpoints/details/:cpid, in Flink's shape (CheckpointingStatistics,
 * CheckpointStatistics, TaskCheckpointStatistics; docs/REST.md): counts,
 * a summary with Flink's percentiles over the completed checkpoints in the
 * history, the latest of each kind, the history newest first, and per
 * vertex the subtasks acknowledged and the state written. Loop thread only,
 * like the rest of rest.c's handlers, which call it.
 */
#include <stdlib.h>
#include <string.h>

#include "jm.h"
#include "store.h"

static const char *cp_status_name(jm_cp_status s)
{
    return s == CP_COMPLETED ? "COMPLETED" : s == CP_FAILED ? "FAILED" : "IN_PROGRESS";
}

static const char *cp_type_name(const jm_checkpoint *cp)
{
    jm_cp_type t = cp->type;
    return t == CP_SAVEPOINT ? "SAVEPOINT" : t == CP_SYNC_SAVEPOINT ? "SYNC_SAVEPOINT"
           : cp->unaligned   ? "UNALIGNED_CHECKPOINT" : "CHECKPOINT";
}

static json_t *cp_json(const jm_checkpoint *cp)
{
    int64_t end = cp->end_ms ? cp->end_ms : (cp->latest_ack_ms ? cp->latest_ack_ms : sl_now_ms());
    json_t *o = json_pack("{s:s,s:I,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:s}", "className",
                          cp->status == CP_COMPLETED ? "completed" : cp->status == CP_FAILED ? "failed" : "in_progress",
                          "id", (json_int_t)cp->id, "status", cp_status_name(cp->status),
                          "is_savepoint", cp->type != CP_CHECKPOINT, "trigger_timestamp",
                          (json_int_t)cp->trigger_ms, "latest_ack_timestamp",
                          (json_int_t)(cp->latest_ack_ms ? cp->latest_ack_ms : -1), "state_size",
                          (json_int_t)cp->state_size, "checkpointed_size", (json_int_t)cp->checkpointed_size,
                          "end_to_end_duration", (json_int_t)(end - cp->trigger_ms), "num_subtasks",
                          cp->num_subtasks, "num_acknowledged_subtasks", cp->num_acked,
                          "checkpoint_type", cp_type_name(cp));
    json_object_set_new(o, "alignment_buffered", json_integer(0));
    /* in-flight bytes processed between a task's first and last barrier,
     * and persisted as channel state (unaligned checkpoints) */
    json_object_set_new(o, "processed_data", json_integer((json_int_t)cp->processed));
    json_object_set_new(o, "persisted_data", json_integer((json_int_t)cp->persisted));
    json_object_set_new(o, "savepointFormat", cp->type != CP_CHECKPOINT ? json_string("CANONICAL") : json_null());
    json_object_set_new(o, "tasks", json_object()); /* per vertex: .../checkpoints/details/:id */
    if (cp->status == CP_COMPLETED) {
        json_object_set_new(o, "discarded", json_boolean(cp->discarded));
        char *path = sl_store_uri(cp->dir);
        json_object_set_new(o, "external_path", json_string(path));
        free(path);
    }
    if (cp->status == CP_FAILED) {
        json_object_set_new(o, "failure_timestamp", json_integer(cp->end_ms));
        json_object_set_new(o, "failure_message", json_string(cp->failure ? cp->failure : ""));
    }
    return o;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile (0 < p < 100) of n sorted values, estimated as
 * Flink's histograms do (Apache Commons Math's default: position p(n+1)/100,
 * interpolated between neighbours, clamped to the ends). */
static double percentile(const int64_t *v, int n, double p)
{
    if (n == 0) return 0;
    double pos = p * (n + 1) / 100.0;
    if (pos < 1) return (double)v[0];
    if (pos >= n) return (double)v[n - 1];
    int lo = (int)pos;
    return (double)v[lo - 1] + (pos - lo) * (double)(v[lo] - v[lo - 1]);
}

/* Flink's StatsSummaryDto of n values (sorted here, in place): min, max,
 * avg and percentiles; all 0 when there are none. */
static json_t *stats_json(int64_t *v, int n)
{
    double sum = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    for (int i = 0; i < n; i++) sum += (double)v[i];
    return json_pack("{s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f}", "min", (json_int_t)(n ? v[0] : 0), "max",
                     (json_int_t)(n ? v[n - 1] : 0), "avg", (json_int_t)(n ? sum / n : 0), "p50",
                     percentile(v, n, 50), "p90", percentile(v, n, 90), "p95", percentile(v, n, 95),
                     "p99", percentile(v, n, 99), "p999", percentile(v, n, 99.9));
}

json_t *jm_rest_checkpoints_json(const jm_job *job)
{
    json_t *hist = json_array();
    int ncp = 0;
    for (const jm_checkpoint *cp = job->cps; cp; cp = cp->next) ncp++;
    /* the completed ones' sizes, durations and alignments, for the summary */
    int64_t *sizes = sl_calloc((size_t)ncp + 1, sizeof *sizes);
    int64_t *csizes = sl_calloc((size_t)ncp + 1, sizeof *csizes);
    int64_t *durs = sl_calloc((size_t)ncp + 1, sizeof *durs);
    int64_t *aligns = sl_calloc((size_t)ncp + 1, sizeof *aligns);
    int64_t *procs = sl_calloc((size_t)ncp + 1, sizeof *procs);
    int64_t *pers = sl_calloc((size_t)ncp + 1, sizeof *pers);
    int n = 0;
    const jm_checkpoint *lc = NULL, *lf = NULL, *ls = NULL;
    int in_progress = 0;
    for (const jm_checkpoint *cp = job->cps; cp; cp = cp->next) {
        json_array_append_new(hist, cp_json(cp));
        if (cp->status == CP_IN_PROGRESS) in_progress++;
        if (cp->status == CP_FAILED && !lf) lf = cp;
        if (cp->status == CP_COMPLETED && cp->type != CP_CHECKPOINT && !ls) ls = cp;
        if (cp->status != CP_COMPLETED) continue;
        if (cp->type == CP_CHECKPOINT && !lc) lc = cp;
        sizes[n] = (int64_t)cp->state_size;
        csizes[n] = (int64_t)cp->checkpointed_size;
        durs[n] = cp->end_ms - cp->trigger_ms;
        aligns[n] = (int64_t)(cp->max_alignment_ns / 1000000);
        procs[n] = (int64_t)cp->processed;
        pers[n] = (int64_t)cp->persisted;
        n++;
    }
    if (!lc) lc = job->latest_completed;
    json_t *latest = json_object();
    json_object_set_new(latest, "completed", lc ? cp_json(lc) : json_null());
    json_object_set_new(latest, "savepoint", ls ? cp_json(ls) : json_null());
    json_object_set_new(latest, "failed", lf ? cp_json(lf) : json_null());
    if (job->cp_restored)
        json_object_set_new(latest, "restored",
                            json_pack("{s:I,s:I,s:b,s:s}", "id", (json_int_t)job->restored_id,
                                      "restore_timestamp", (json_int_t)job->restored_ms, "is_savepoint",
                                      job->restored_is_savepoint, "external_path",
                                      job->restored_path ? job->restored_path : ""));
    else
        json_object_set_new(latest, "restored", json_null());
    json_t *o = json_object();
    json_object_set_new(o, "counts", json_pack("{s:i,s:i,s:i,s:i,s:i}", "restored", job->cp_restored,
                                               "total", job->cp_total, "in_progress", in_progress,
                                               "completed", job->cp_completed, "failed", job->cp_failed));
    /* processed and persisted data: in-flight bytes (non-zero with
     * unaligned checkpoints only) */
    json_object_set_new(o, "summary",
                        json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "state_size", stats_json(sizes, n),
                                  "checkpointed_size", stats_json(csizes, n),
                                  "end_to_end_duration", stats_json(durs, n),
                                  "alignment_buffered", stats_json(aligns, n),
                                  "processed_data", stats_json(procs, n),
                                  "persisted_data", stats_json(pers, n)));
    free(procs);
    free(pers);
    free(sizes);
    free(csizes);
    free(durs);
    free(aligns);
    json_object_set_new(o, "latest", latest);
    json_object_set_new(o, "history", hist);
    return o;
}

/* The index of chain c's first subtask in a checkpoint's per-task arrays. */
static int chain_offset(const jm_checkpoint *cp, int c)
{
    int idx = 0;
    for (int k = 0; k < c; k++) idx += cp->par[k];
    return idx;
}

/* One vertex's acknowledgements: how many, the latest, the state written. */
static void vertex_acks(const jm_job *job, const jm_checkpoint *cp, int c, int *acked,
                        int64_t *latest_ms, uint64_t *size, uint64_t *persisted, uint64_t *processed)
{
    SL_UNUSED(job);
    int idx = chain_offset(cp, c);
    *acked = 0;
    *latest_ms = -1;
    *size = *persisted = *processed = 0;
    for (int i = 0; i < cp->par[c]; i++) {
        const jm_cp_ack *a = &cp->acks[idx + i];
        *acked += cp->acked[idx + i];
        if (a->ack_ms > *latest_ms) *latest_ms = a->ack_ms;
        *size += a->state_size;
        *persisted += a->persisted;
        *processed += a->processed;
    }
    if (*latest_ms == 0) *latest_ms = -1;
}

/* Flink's TaskCheckpointStatistics fields of chain c in cp, into o. */
static void vertex_stats(json_t *o, const jm_job *job, const jm_checkpoint *cp, int c)
{
    int acked;
    int64_t latest;
    uint64_t size, persisted, processed;
    vertex_acks(job, cp, c, &acked, &latest, &size, &persisted, &processed);
    json_object_set_new(o, "id", json_integer((json_int_t)cp->id));
    json_object_set_new(o, "status", json_string(acked == cp->par[c] && cp->status != CP_FAILED
                                                     ? "COMPLETED" : cp_status_name(cp->status)));
    json_object_set_new(o, "latest_ack_timestamp", json_integer(latest));
    json_object_set_new(o, "end_to_end_duration",
                        json_integer(latest < 0 ? -1 : latest - cp->trigger_ms));
    /* what the chain's operators wrote anew (incremental checkpoints share
     * earlier files; a full one writes its whole state) */
    uint64_t csize = 0;
    for (int h = 0; h < cp->nhandles; h++)
        if (job->g->v[cp->handles[h].vertex].chain == c) csize += cp->handles[h].checkpointed_size;
    json_object_set_new(o, "state_size", json_integer((json_int_t)size));
    json_object_set_new(o, "checkpointed_size", json_integer((json_int_t)(cp->nhandles ? csize : size)));
    json_object_set_new(o, "alignment_buffered", json_integer(0));
    json_object_set_new(o, "processed_data", json_integer((json_int_t)processed));
    json_object_set_new(o, "persisted_data", json_integer((json_int_t)persisted));
    json_object_set_new(o, "num_subtasks", json_integer(cp->par[c]));
    json_object_set_new(o, "num_acknowledged_subtasks", json_integer(acked));
}

json_t *jm_rest_checkpoint_details(const jm_job *job, const jm_checkpoint *cp)
{
    json_t *o = cp_json(cp);
    json_t *tasks = json_object();
    for (int c = 0; c < job->g->nchains; c++) {
        json_t *t = json_object();
        vertex_stats(t, job, cp, c);
        json_object_set_new(tasks, job->g->chains[c].id, t);
    }
    json_object_set_new(o, "tasks", tasks);
    return o;
}

/* GET .../checkpoints/details/:cpid/subtasks/:vid: Flink's
 * TaskCheckpointStatisticsWithSubtaskDetails -- the vertex's statistics,
 * their summary over its acknowledged subtasks and each subtask's
 * acknowledgement (sync and async parts, alignment, start delay; ms). */
json_t *jm_rest_checkpoint_subtasks(const jm_job *job, const jm_checkpoint *cp, int c)
{
    int n = cp->par[c], idx = chain_offset(cp, c), k = 0;
    int64_t *v[9];
    for (int q = 0; q < 9; q++) v[q] = sl_calloc((size_t)n + 1, sizeof *v[q]);
    json_t *subs = json_array();
    for (int i = 0; i < n; i++) {
        const jm_cp_ack *a = &cp->acks[idx + i];
        if (!cp->acked[idx + i]) {
            json_array_append_new(subs, json_pack("{s:s,s:i,s:s}", "className", "pending", "index", i,
                                                  "status", "pending_or_failed"));
            continue;
        }
        /* a subtask that had finished before the checkpoint took no part in it */
        int64_t e2e = a->ack_ms ? a->ack_ms - cp->trigger_ms : 0;
        int64_t sync = (int64_t)(a->sync_ns / 1000000), async = (int64_t)(a->async_ns / 1000000);
        int64_t align = (int64_t)(a->alignment_ns / 1000000), delay = (int64_t)(a->start_delay_ns / 1000000);
        json_array_append_new(
            subs, json_pack("{s:s,s:i,s:s,s:I,s:I,s:I,s:I,s:{s:I,s:I},s:{s:i,s:i,s:i,s:I},s:I,s:b,s:b}",
                            "className", "completed", "index", i, "status", "completed", "ack_timestamp",
                            (json_int_t)(a->ack_ms ? a->ack_ms : -1), "end_to_end_duration",
                            (json_int_t)e2e, "state_size", (json_int_t)a->state_size,
                            "checkpointed_size", (json_int_t)a->state_size, "checkpoint", "sync",
                            (json_int_t)sync, "async", (json_int_t)async, "alignment", "buffered", 0,
                            "processed", (json_int_t)a->processed, "persisted", (json_int_t)a->persisted,
                            "duration", (json_int_t)align, "start_delay", (json_int_t)delay,
                            "unaligned_checkpoint", a->unaligned, "aborted", 0));
        int64_t row[9] = {(int64_t)a->state_size, (int64_t)a->state_size, e2e, sync, async, align, delay,
                          (int64_t)a->processed, (int64_t)a->persisted};
        for (int q = 0; q < 9; q++) v[q][k] = row[q];
        k++;
    }
    int64_t zero = 0;
    json_t *summary = json_pack(
        "{s:o,s:o,s:o,s:{s:o,s:o},s:{s:o,s:o,s:o,s:o},s:o}", "checkpointed_size", stats_json(v[0], k),
        "state_size", stats_json(v[1], k), "end_to_end_duration", stats_json(v[2], k),
        "checkpoint_duration", "sync", stats_json(v[3], k), "async", stats_json(v[4], k), "alignment",
        "buffered", stats_json(&zero, 0), "processed", stats_json(v[7], k), "persisted",
        stats_json(v[8], k), "duration", stats_json(v[5], k), "start_delay", stats_json(v[6], k));
    for (int q = 0; q < 9; q++) free(v[q]);
    json_t *o = json_object();
    vertex_stats(o, job, cp, c);
    json_object_set_new(o, "summary", summary);
    json_object_set_new(o, "subtasks", subs);
    return o;
}

/* GET /sluice/jobs/:id/checkpoints: what Flink's checkpoint statistics
 * have no field for -- per checkpoint the longest alignment, synchronous
 * and asynchronous part over its subtasks (ms), newest first. */
json_t *jm_rest_checkpoints_sluice(const jm_job *job)
{
    json_t *hist = json_array();
    for (const jm_checkpoint *cp = job->cps; cp; cp = cp->next)
        json_array_append_new(hist, json_pack("{s:I,s:I,s:I,s:I}", "id", (json_int_t)cp->id,
                                              "alignment_duration", (json_int_t)(cp->max_alignment_ns / 1000000),
                                              "sync_duration", (json_int_t)(cp->max_sync_ns / 1000000),
                                              "async_duration", (json_int_t)(cp->max_async_ns / 1000000)));
    return json_pack("{s:o}", "history", hist);
}
