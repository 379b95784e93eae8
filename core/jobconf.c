/*
 * jobconf.c -- what a job graph's "config" object may set and how each value
 * is checked (core/jobgraph.h). Apart from the job-graph parser so that the
 * SQL session (SET) checks values the same way without the operators.
 */
#include <string.h>
#include <strings.h>

#include "config.h"
#include "duration.h"
#include "jobgraph.h"

/* What a job's "config" may set: its own parallelism, name, state TTL, state
 * backend, checkpointing and restart strategy. The rest is the cluster's. */
static const char *const job_conf_keys[] = {
    "parallelism.default", "pipeline.name", "table.exec.state.ttl", "state.backend.type",
    "execution.checkpointing.interval", "execution.checkpointing.timeout",
    "execution.checkpointing.min-pause", "execution.checkpointing.mode",
    "execution.checkpointing.unaligned.enabled", "execution.checkpointing.aligned-checkpoint-timeout",
    "execution.checkpointing.tolerable-failed-checkpoints", "restart-strategy.type",
    "restart-strategy.fixed-delay.attempts", "restart-strategy.fixed-delay.delay",
    "restart-strategy.exponential-delay.initial-backoff",
    "restart-strategy.exponential-delay.max-backoff",
    "restart-strategy.exponential-delay.backoff-multiplier",
    "restart-strategy.exponential-delay.reset-backoff-threshold",
    "restart-strategy.exponential-delay.jitter-factor",
    "restart-strategy.exponential-delay.attempts-before-reset-backoff",
    "table.exec.mini-batch.enabled", "table.exec.mini-batch.allow-latency",
    "table.exec.mini-batch.size", "table.optimizer.agg-phase-strategy", "metrics.latency.interval", NULL};

const char *const *sl_jobgraph_conf_keys(void) { return job_conf_keys; }

int sl_jobgraph_conf_check(const char *key, const char *value, char *err, size_t errlen)
{
    if (!strcmp(key, "pipeline.name")) return SL_OK;
    if (!strcmp(key, "table.exec.state.ttl")) {
        int64_t ms;
        char e2[256];
        if (strcmp(value, "0") && sl_interval_parse(value, &ms, e2, sizeof e2) != SL_OK)
            return sl_seterr(err, errlen, "'table.exec.state.ttl': %s", e2);
        return SL_OK;
    }
    if (!strcmp(key, "table.exec.mini-batch.enabled")) {
        if (strcasecmp(value, "true") && strcasecmp(value, "false"))
            return sl_seterr(err, errlen, "'table.exec.mini-batch.enabled' must be true or false, "
                             "not '%s'", value);
        return SL_OK;
    }
    if (!strcmp(key, "table.exec.mini-batch.allow-latency")) {
        int64_t ms;
        char e2[256];
        if (sl_interval_parse(value, &ms, e2, sizeof e2) != SL_OK)
            return sl_seterr(err, errlen, "'table.exec.mini-batch.allow-latency': %s", e2);
        return SL_OK;
    }
    if (!strcmp(key, "table.exec.mini-batch.size")) {
        int64_t n;
        if (sl_parse_int(value, &n) != SL_OK || n < 1 || n > (1 << 20))
            return sl_seterr(err, errlen, "'table.exec.mini-batch.size' must be a number from 1 "
                             "to 1048576, not '%s'", value);
        return SL_OK;
    }
    if (!strcmp(key, "table.optimizer.agg-phase-strategy")) {
        if (strcasecmp(value, "AUTO") && strcasecmp(value, "ONE_PHASE") &&
            strcasecmp(value, "TWO_PHASE"))
            return sl_seterr(err, errlen, "'table.optimizer.agg-phase-strategy' must be AUTO, "
                             "ONE_PHASE or TWO_PHASE, not '%s'", value);
        return SL_OK;
    }
    if (!strcmp(key, "parallelism.default")) {
        int64_t p;
        if (sl_parse_int(value, &p) != SL_OK || p < 1 || p > 32768)
            return sl_seterr(err, errlen, "'parallelism.default' must be a number from 1 to "
                             "32768, not '%s'", value);
        return SL_OK;
    }
    sl_config *c = sl_config_new();
    int rc = sl_config_set(c, key, value, NULL, err, errlen);
    sl_config_destroy(c);
    return rc;
}

