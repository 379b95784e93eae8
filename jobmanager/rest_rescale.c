/*
 * rest_rescale.c -- rescaling a running job over REST: GET and PUT
 * /jobs/:id/resource-requirements (the parallelism bounds of each job
 * vertex, as Flink's adaptive scheduler takes them) and the rescale history
 * under /jobs/:id/rescales/{config,history,overview,summary,details/:uuid}
 * in Flink's shapes. The rescale itself (a stop-with-savepoint and a
 * restore at the new parallelism) is scheduler.c's. Runs on the loop
 * thread, called from rest.c's route.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "jm.h"
#include "rest_int.h"

/* Sluice has one slot-sharing group per job */
#define SSG_NAME "default"

static const char *status_name(jm_rescale_status s)
{
    return s == RS_COMPLETED ? "COMPLETED" : s == RS_FAILED ? "FAILED" : s == RS_IGNORED ? "IGNORED"
                                                                                          : NULL;
}

static json_t *int_or_null(int v) { return v > 0 ? json_integer(v) : json_null(); }
static json_t *ms_or_null(int64_t v) { return v > 0 ? json_integer(v) : json_null(); }

/* Flink's JobRescaleDetails of one rescale. */
static json_t *rescale_json(const jm_job *job, const jm_rescale *rs)
{
    const char *ssg = job->id; /* as /jobs/:id's vertices: one group per job, named by it */
    json_t *vs = json_object();
    int desired = 0, minimal = 0;
    for (int c = 0; c < rs->nchains && c < job->g->nchains; c++) {
        const sl_chain *ch = &job->g->chains[c];
        json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i}", "jobVertexId", ch->id, "jobVertexName",
                              ch->name, "slotSharingGroupId", ssg, "slotSharingGroupName", SSG_NAME,
                              "desiredParallelism", rs->upper[c], "sufficientParallelism",
                              rs->lower[c], "preRescaleParallelism", rs->pre[c]);
        json_object_set_new(v, "postRescaleParallelism", int_or_null(rs->post[c]));
        json_object_set_new(vs, ch->id, v);
        desired = SL_MAX(desired, rs->upper[c]);
        minimal = SL_MAX(minimal, rs->lower[c]);
    }
    json_t *slot = json_pack("{s:s,s:s,s:n,s:i,s:i,s:i,s:n}", "slotSharingGroupId", ssg,
                             "slotSharingGroupName", SSG_NAME, "requestResourceProfile", "desiredSlots",
                             desired, "minimalRequiredSlots", minimal, "preRescaleSlots", rs->pre_slots,
                             "acquiredResourceProfile");
    json_object_set_new(slot, "postRescaleSlots", int_or_null(rs->post_slots));
    json_t *spans = json_array();
    for (int i = 0; i < rs->nspans; i++) {
        int64_t in = rs->spans[i].enter_ms, out = rs->spans[i].leave_ms;
        json_t *s = json_pack("{s:s,s:I}", "state", rs->spans[i].state, "enterTimestampInMillis",
                              (json_int_t)in);
        json_object_set_new(s, "leaveTimestampInMillis", ms_or_null(out));
        json_object_set_new(s, "durationInMillis", out ? json_integer(out - in) : json_null());
        json_object_set_new(s, "stringifiedException", rs->spans[i].exception
                                                           ? json_string(rs->spans[i].exception)
                                                           : json_null());
        json_array_append_new(spans, s);
    }
    json_t *o = json_pack("{s:s,s:s,s:I,s:o,s:{s:o},s:o,s:I,s:s}", "rescaleUuid", rs->uuid,
                          "resourceRequirementsUuid", rs->req_uuid, "rescaleAttemptId",
                          (json_int_t)rs->attempt, "vertices", vs, "slots", ssg, slot,
                          "schedulerStates", spans, "startTimestampInMillis",
                          (json_int_t)rs->start_ms, "triggerCause", "UPDATE_REQUIREMENT");
    json_object_set_new(o, "endTimestampInMillis", ms_or_null(rs->end_ms));
    const char *st = status_name(rs->status);
    json_object_set_new(o, "terminalState", st ? json_string(st) : json_null());
    json_object_set_new(o, "terminatedReason", rs->reason ? json_string(rs->reason) : json_null());
    return o;
}

static json_t *counts_json(const jm_job *job)
{
    return json_pack("{s:i,s:i,s:i,s:i}", "ignored", job->rescale_counts[RS_IGNORED], "inProgress",
                     job->rescaling ? 1 : 0, "completed", job->rescale_counts[RS_COMPLETED],
                     "failed", job->rescale_counts[RS_FAILED]);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Flink's StatsSummaryDto of the durations of the kept rescales that ended
 * with status st (st < 0: every ended one); nearest-rank quantiles. */
static json_t *duration_stats(const jm_job *job, int st)
{
    int64_t d[JM_RESCALE_HISTORY + 1];
    int n = 0;
    for (const jm_rescale *rs = job->rescales; rs && n < JM_RESCALE_HISTORY + 1; rs = rs->next)
        if (rs->end_ms && (st < 0 || (int)rs->status == st)) d[n++] = rs->end_ms - rs->start_ms;
    qsort(d, (size_t)n, sizeof d[0], cmp_i64);
    int64_t sum = 0;
    for (int i = 0; i < n; i++) sum += d[i];
    static const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};
    static const char *qn[] = {"p50", "p90", "p95", "p99", "p999"};
    json_t *o = json_pack("{s:I,s:I,s:I}", "min", (json_int_t)(n ? d[0] : 0), "max",
                          (json_int_t)(n ? d[n - 1] : 0), "avg", (json_int_t)(n ? sum / n : 0));
    for (int q = 0; q < 5; q++) {
        int k = n ? (int)(qs[q] * n + 0.999999) - 1 : 0;
        k = SL_MAX(0, SL_MIN(k, n - 1));
        json_object_set_new(o, qn[q], json_real(n ? (double)d[k] : 0.0));
    }
    return o;
}

static const jm_rescale *latest_with(const jm_job *job, jm_rescale_status st)
{
    for (const jm_rescale *rs = job->rescales; rs; rs = rs->next)
        if (rs->end_ms && rs->status == st) return rs;
    return NULL;
}

static json_t *latest_json(const jm_job *job, jm_rescale_status st)
{
    const jm_rescale *rs = latest_with(job, st);
    return rs ? rescale_json(job, rs) : json_null();
}

/* GET /jobs/:id/rescales/... */
static void rescales_get(route_ctx *rc, const jm_job *job, reply *r)
{
    const char *what = rc->seg[3];
    if (rc->nseg == 4 && !strcmp(what, "config")) {
        /* the adaptive scheduler's settings: Sluice has none of them but
         * the history's bound */
        reply_json(r, 200, json_pack("{s:i,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "rescaleHistoryMax",
                                     JM_RESCALE_HISTORY, "schedulerExecutionMode",
                                     "submissionResourceWaitTimeoutInMillis",
                                     "submissionResourceStabilizationTimeoutInMillis",
                                     "slotIdleTimeoutInMillis", "executingCooldownTimeoutInMillis",
                                     "executingResourceStabilizationTimeoutInMillis",
                                     "maximumDelayForTriggeringRescaleInMillis",
                                     "rescaleOnFailedCheckpointCount"));
    } else if (rc->nseg == 4 && !strcmp(what, "history")) {
        json_t *arr = json_array(); /* newest first */
        for (const jm_rescale *rs = job->rescales; rs; rs = rs->next)
            json_array_append_new(arr, rescale_json(job, rs));
        reply_json(r, 200, arr);
    } else if (rc->nseg == 4 && !strcmp(what, "overview")) {
        reply_json(r, 200, json_pack("{s:o,s:{s:o,s:o,s:o}}", "rescalesCounts", counts_json(job),
                                     "latest", "completed", latest_json(job, RS_COMPLETED), "failed",
                                     latest_json(job, RS_FAILED), "ignored",
                                     latest_json(job, RS_IGNORED)));
    } else if (rc->nseg == 4 && !strcmp(what, "summary")) {
        reply_json(r, 200, json_pack("{s:o,s:o,s:o,s:o,s:o}", "rescalesCounts", counts_json(job),
                                     "rescalesDurationStatsInMillis", duration_stats(job, -1),
                                     "completedRescalesDurationStatsInMillis",
                                     duration_stats(job, RS_COMPLETED),
                                     "ignoredRescalesDurationStatsInMillis",
                                     duration_stats(job, RS_IGNORED),
                                     "failedRescalesDurationStatsInMillis",
                                     duration_stats(job, RS_FAILED)));
    } else if (rc->nseg == 5 && !strcmp(what, "details")) {
        for (const jm_rescale *rs = job->rescales; rs; rs = rs->next)
            if (!strcmp(rs->uuid, rc->seg[4])) {
                reply_json(r, 200, rescale_json(job, rs));
                return;
            }
        reply_err(r, 404, "Rescale %s of job %s not found%s", rc->seg[4], job->id,
                  job->rescales ? "" : ": the job has not been rescaled");
    } else {
        reply_err(r, 404, "Not found: no such rescales resource '%s'", what);
    }
}

/* GET /jobs/:id/resource-requirements: Flink's JobResourceRequirementsBody,
 * the bounds last asked for (else 1 to the parallelism it runs at). */
static json_t *requirements_json(const jm_job *job)
{
    const jm_rescale *last = job->rescales;
    json_t *o = json_object();
    for (int c = 0; c < job->g->nchains; c++) {
        int lo = 1, hi = job->g->chains[c].parallelism;
        if (last && c < last->nchains) {
            lo = last->lower[c];
            hi = last->upper[c];
        }
        json_object_set_new(o, job->g->chains[c].id,
                            json_pack("{s:{s:i,s:i}}", "parallelism", "lowerBound", lo, "upperBound", hi));
    }
    return o;
}

/* A bound: a whole number (JSON integer) in 1..32768. */
static int bound(json_t *par, const char *key, const char *vid, int *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(par, key);
    if (!json_is_integer(v))
        return sl_seterr(err, errlen, "vertex %s: parallelism.%s must be a whole number%s", vid, key,
                         v ? "" : " (it is missing)");
    json_int_t x = json_integer_value(v);
    if (x < 1 || x > 32768)
        return sl_seterr(err, errlen, "vertex %s: parallelism.%s %lld is out of range (1 to 32768)",
                         vid, key, (long long)x);
    *out = (int)x;
    return SL_OK;
}

/* The PUT body into per-chain bounds: every vertex of the job once, with
 * {"parallelism": {"lowerBound": L, "upperBound": U}}, 1 <= L <= U <=
 * maxParallelism. */
static int parse_requirements(const jm_job *job, const req *rq, int *lower, int *upper, char *err,
                              size_t errlen)
{
    json_error_t jerr;
    json_t *body = rq->len ? json_loadb(rq->body, rq->len, 0, &jerr) : NULL;
    if (!body) {
        return sl_seterr(err, errlen, "the body must be a JSON object {\"<vertex id>\": {\"parallelism\": "
                         "{\"lowerBound\": L, \"upperBound\": U}}, ...}%s%s",
                         rq->len ? ": " : " (it is empty)", rq->len ? jerr.text : "");
    }
    int rc = SL_OK;
    const sl_jobgraph *g = job->g;
    for (int c = 0; c < g->nchains; c++) lower[c] = upper[c] = 0;
    const char *k;
    json_t *v;
    if (!json_is_object(body)) {
        rc = sl_seterr(err, errlen, "the body must be a JSON object of job vertex ids");
        goto out;
    }
    json_object_foreach(body, k, v) {
        int c = 0;
        while (c < g->nchains && strcmp(g->chains[c].id, k)) c++;
        if (c == g->nchains) {
            rc = sl_seterr(err, errlen, "job %s has no vertex %s (its vertices: GET /jobs/%s)", job->id,
                           k, job->id);
            goto out;
        }
        json_t *par = json_object_get(v, "parallelism");
        if (!json_is_object(v) || json_object_size(v) != 1 || !json_is_object(par)) {
            rc = sl_seterr(err, errlen, "vertex %s: expected {\"parallelism\": {\"lowerBound\": L, "
                           "\"upperBound\": U}}", k);
            goto out;
        }
        const char *pk;
        json_t *pv;
        json_object_foreach(par, pk, pv) {
            if (strcmp(pk, "lowerBound") && strcmp(pk, "upperBound")) {
                rc = sl_seterr(err, errlen, "vertex %s: unknown field parallelism.%s (lowerBound and "
                               "upperBound are known)", k, pk);
                goto out;
            }
        }
        if (bound(par, "lowerBound", k, &lower[c], err, errlen) != SL_OK ||
            bound(par, "upperBound", k, &upper[c], err, errlen) != SL_OK) {
            rc = SL_ERR;
            goto out;
        }
        if (lower[c] > upper[c]) {
            rc = sl_seterr(err, errlen, "vertex %s: lowerBound %d is above upperBound %d", k, lower[c],
                           upper[c]);
            goto out;
        }
        if (upper[c] > g->max_parallelism) {
            rc = sl_seterr(err, errlen, "vertex %s: upperBound %d is above the job's maxParallelism %d "
                           "(its number of key groups, fixed for the job's life)", k, upper[c],
                           g->max_parallelism);
            goto out;
        }
    }
    for (int c = 0; c < g->nchains; c++)
        if (!upper[c]) {
            rc = sl_seterr(err, errlen, "vertex %s (%s) is missing: give the bounds of every vertex of "
                           "the job", g->chains[c].id, g->chains[c].name);
            goto out;
        }
out:
    json_decref(body);
    return rc;
}

static void requirements_put(route_ctx *rc, jm_job *job, reply *r)
{
    int n = job->g->nchains;
    int *lower = sl_calloc((size_t)n, sizeof(int)), *upper = sl_calloc((size_t)n, sizeof(int));
    char err[1000];
    if (parse_requirements(job, rc->rq, lower, upper, err, sizeof err) != SL_OK) {
        reply_err(r, 400, "%s", err);
    } else {
        jm_rescale *rs;
        int st = jm_job_rescale(rc->j, job, lower, upper, &rs, err, sizeof err);
        if (st) reply_err(r, st, "%s", err);
        else reply_json(r, 200, json_object()); /* Flink's EmptyResponseBody */
    }
    free(lower);
    free(upper);
}

int jm_rest_rescale_routes(route_ctx *rc, jm_job *job, reply *r)
{
    int get = !strcmp(rc->method, "GET");
    if (rc->nseg == 3 && !strcmp(rc->seg[2], "resource-requirements")) {
        if (get) reply_json(r, 200, requirements_json(job));
        else if (!strcmp(rc->method, "PUT")) requirements_put(rc, job, r);
        else reply_err(r, 405, "%s is not allowed on /jobs/:jobid/resource-requirements (GET, PUT)",
                       rc->method);
        return 1;
    }
    if (rc->nseg >= 4 && get && !strcmp(rc->seg[2], "rescales")) {
        rescales_get(rc, job, r);
        return 1;
    }
    return 0;
}
