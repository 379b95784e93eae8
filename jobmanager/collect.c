/*
 * collect.c -- the JobManager's side of a SELECT's results: the rows a job's
 * `collect` sinks send (CollectRows, core/collect.h) wait here for the
 * client, which reads them page by page (GET /jobs/:jobid/results).
 *
 * A job's rows form one numbered sequence; a client asks for the rows from
 * a token (the number of the first row it has not seen yet), which also
 * acknowledges every row before it: those are dropped and their credit goes
 * back to the sinks (CollectCredit). Rows handed out but not acknowledged
 * stay, so a lost answer can be fetched again with the same token. The
 * buffer is a ring of SL_COLLECT_CREDIT rows -- the credit the sinks hold --
 * so a client that does not read stops the job, never grows the JobManager.
 *
 * Every batch carries the number of its first row. With checkpointing the
 * results survive restarts exactly once: the sinks send only rows that a
 * completed checkpoint covers, and a sink restored from one sends again the
 * rows the JobManager may lack (operators/collect.c); rows it has already
 * are dropped here, their credit returned at once, and batches of a
 * deployment other than the job's current one are ignored (the current one
 * sends them again). Without checkpointing a restart replays nothing: rows
 * of a later deployment than the one that sent the first ones end the
 * results with an error. Loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "jm.h"
#include "log.h"

#define TAG "collect"

struct jm_results {
    uint32_t attempt;   /* the deployment whose rows these are, 0 before any */
    char *ring[SL_COLLECT_CREDIT];
    int head, n;        /* oldest row held, rows held */
    uint64_t base;      /* token of ring[head] */
    int ends, sinks;    /* end marks received, collect subtasks in the job */
    char *error;        /* the results broke off: why */
};

static jm_results *results_of(jm_job *job)
{
    if (job->results) return job->results;
    jm_results *r = sl_calloc(1, sizeof *r);
    for (int i = 0; i < job->g->nv; i++)
        if (job->g->v[i].def->flags & SL_OPF_COLLECT) r->sinks += job->g->v[i].parallelism;
    job->results = r;
    return r;
}

void jm_results_free(jm_job *job)
{
    jm_results *r = job->results;
    if (!r) return;
    for (int i = 0; i < r->n; i++) free(r->ring[(r->head + i) % SL_COLLECT_CREDIT]);
    free(r->error);
    free(r);
    job->results = NULL;
}

static void broke_off(jm_results *r, const char *why)
{
    if (r->error) return;
    r->error = sl_strdup(why);
}

static void give_credit(jm *j, jm_job *job, int rows);

uint32_t jm_results_room(jm_job *job)
{
    return (uint32_t)(SL_COLLECT_CREDIT - (job->results ? job->results->n : 0));
}

void jm_collect_on_rows(jm *j, const Sluice__CollectRows *m)
{
    jm_job *job = jm_job_find(j, m->job_id);
    if (!job) return; /* a job that is gone */
    jm_results *r = results_of(job);
    int exact = job->set.cp_interval_ms > 0; /* results survive restarts */
    uint32_t skip = 0;
    if (exact) {
        if (m->attempt != job->attempt) return; /* a deployment that is gone */
        r->attempt = m->attempt;
        uint64_t next = r->base + (uint64_t)r->n;
        if (m->offset > next) {
            char why[160];
            snprintf(why, sizeof why, "rows %llu to %llu of the results are missing",
                     (unsigned long long)next, (unsigned long long)m->offset - 1);
            broke_off(r, why);
            return;
        }
        skip = (uint32_t)SL_MIN(next - m->offset, (uint64_t)m->nrows); /* rows we have */
        if (skip) give_credit(j, job, (int)skip);
    }
    if (!r->attempt) r->attempt = m->attempt;
    if (m->attempt != r->attempt) {
        char why[160];
        snprintf(why, sizeof why, "the job restarted (deployment %u after %u); results are not "
                 "replayed across a restart", m->attempt, r->attempt);
        broke_off(r, why);
        return;
    }
    const char *p = (const char *)m->rows.data, *end = p + m->rows.len;
    uint32_t got = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        if (got < skip) {
            got++;
            p = nl + 1;
            continue;
        }
        if (r->n == SL_COLLECT_CREDIT) { /* the sink sent beyond its credit */
            broke_off(r, "a collect sink sent more rows than its credit");
            sl_warn(TAG, "job %s: a collect sink sent more rows than its credit", job->id);
            return;
        }
        r->ring[(r->head + r->n) % SL_COLLECT_CREDIT] = sl_strndup(p, (size_t)(nl - p));
        r->n++;
        got++;
        p = nl + 1;
    }
    if (got != m->nrows) sl_warn(TAG, "job %s: a batch said %u rows and held %u", job->id,
                                 m->nrows, got);
    if (m->end) r->ends++;
}

static void give_credit(jm *j, jm_job *job, int rows)
{
    Sluice__CollectCredit cc = SLUICE__COLLECT_CREDIT__INIT;
    cc.job_id = job->id;
    cc.attempt = job->results->attempt;
    cc.rows = (uint32_t)rows;
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_COLLECT_CREDIT;
    env.collect_credit = &cc;
    jm_send_job(j, job, &env);
}

json_t *jm_results_fetch(jm *j, jm_job *job, uint64_t token, int max, int *status, char *err,
                         size_t errlen)
{
    jm_results *r = results_of(job);
    *status = 200;
    if (!r->sinks) {
        *status = 400;
        sl_seterr(err, errlen, "job %s has no collect sink: its results go to its own sinks",
                  job->id);
        return NULL;
    }
    if (token < r->base) {
        *status = 410;
        sl_seterr(err, errlen, "token %llu was acknowledged already: the results continue at "
                  "token %llu", (unsigned long long)token, (unsigned long long)r->base);
        return NULL;
    }
    if (token > r->base + (uint64_t)r->n) {
        *status = 400;
        sl_seterr(err, errlen, "token %llu is beyond the results (the next row is token %llu)",
                  (unsigned long long)token, (unsigned long long)(r->base + (uint64_t)r->n));
        return NULL;
    }
    int drop = (int)(token - r->base);
    for (int i = 0; i < drop; i++) {
        free(r->ring[r->head]);
        r->ring[r->head] = NULL;
        r->head = (r->head + 1) % SL_COLLECT_CREDIT;
    }
    r->n -= drop;
    r->base = token;
    if (drop && r->attempt == job->attempt && !jm_job_state_terminal(job->state))
        give_credit(j, job, drop);
    json_t *rows = json_array();
    int k = 0;
    for (; k < r->n && k < max; k++) {
        json_error_t je;
        json_t *row = json_loads(r->ring[(r->head + k) % SL_COLLECT_CREDIT], 0, &je);
        json_array_append_new(rows, row ? row : json_null());
    }
    int ended = r->ends >= r->sinks && k == r->n;
    json_t *o = json_pack("{s:I,s:I,s:o,s:b,s:s}", "token", (json_int_t)token, "nextToken",
                          (json_int_t)(token + (uint64_t)k), "rows", rows, "end", ended, "status",
                          jm_job_state_name(job->state));
    if (r->error) json_object_set_new(o, "error", json_string(r->error));
    return o;
}
