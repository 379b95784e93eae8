/*
 * rules.c -- broadcast state: thresholds that arrive as a stream of rules,
 * broadcast to every subtask of a KeyedBroadcastProcessFunction that
 * checks each sensor's readings against them.
 *
 * Build and run (a local cluster must be up):
 *     make examples
 *     build/bin/sluice run build/examples/rules.so /tmp/rules-out 3000 2000
 * (output directory, readings, rows per second) writes alerts/: a reading
 * above the threshold of its kind.
 *
 * Rules: three, kind k = 0, 1, 2 with threshold 60 + 10 k, all at event
 * time BASE (before every reading). Readings: id 1..N, sensor = id % 5 (the
 * key), kind = id % 3, value = id * 37 % 100, event time BASE + id ms.
 *
 * Which arrives first, a rule or a reading, is up to the network. So a
 * reading is not judged when it arrives: it waits in keyed list state
 * (namespaced by its time) until the watermark -- the minimum of both
 * inputs -- passes it; by then every rule up to that time is in the
 * broadcast state, whichever way the inputs interleaved. The broadcast
 * state is written only in process_broadcast_element and read by on_timer.
 */
#include <stdlib.h>
#include <string.h>

#include "datastream.h"

typedef struct checker {
    sl_bstate *thresholds;      /* kind (i64) -> threshold (i64), broadcast */
    sl_vstate *pending;         /* ListState of readings, namespace = their time */
} checker;

typedef struct reading {
    int64_t id, kind, value;
} reading;

static int ck_open(sl_op *ctx)
{
    checker *c = sl_calloc(1, sizeof *c);
    ctx->priv = c;
    c->thresholds = sl_ds_broadcast_state(ctx, "thresholds");
    c->pending = sl_op_state(ctx, "pending", SL_STATE_LIST, 0);
    return c->thresholds && c->pending ? SL_OK : SL_ERR;
}

/* rules: kind, threshold, ts */
static int ck_rule(sl_op *ctx, const sl_row *row)
{
    checker *c = ctx->priv;
    int64_t kind = row->vals[0].v.i, threshold = row->vals[1].v.i;
    return sl_bstate_put(c->thresholds, &kind, sizeof kind, &threshold, sizeof threshold);
}

/* readings: id, sensor, kind, value, ts */
static int ck_reading(sl_op *ctx, int input, const sl_row *row)
{
    checker *c = ctx->priv;
    (void)input;
    int64_t ts = row->vals[4].v.i;
    reading r = {row->vals[0].v.i, row->vals[2].v.i, row->vals[3].v.i};
    if (sl_list_add(c->pending, &ts, sizeof ts, &r, sizeof r) != SL_OK) return SL_ERR;
    return sl_op_timer_register(ctx, SL_TIME_EVENT, ts, &ts, sizeof ts);
}

typedef struct judge_ctx {
    sl_op *op;
    checker *c;
    int64_t sensor, ts;
    int rc;
} judge_ctx;

static int judge(void *arg, const void *val, size_t len)
{
    judge_ctx *j = arg;
    reading r;
    if (len != sizeof r) return 0;
    memcpy(&r, val, sizeof r);
    const void *tv;
    size_t tl;
    int64_t threshold;
    if (sl_bstate_get(j->c->thresholds, &r.kind, sizeof r.kind, &tv, &tl) != SL_OK || tl != sizeof threshold)
        return 0; /* no rule for this kind: nothing to say */
    memcpy(&threshold, tv, sizeof threshold);
    if (r.value <= threshold) return 0;
    sl_value out[5] = {{.v.i = r.id}, {.v.i = j->sensor}, {.v.i = r.kind}, {.v.i = r.value}, {.v.i = threshold}};
    sl_row alert = {.kind = SL_KIND_INSERT, .n = 5, .vals = out, .ts = j->ts};
    j->rc = sl_op_emit(j->op, &alert);
    return j->rc != SL_OK;
}

static int ck_timer(sl_op *ctx, sl_time_domain domain, int64_t time)
{
    checker *c = ctx->priv;
    (void)domain;
    sl_value key;
    if (sl_ds_key(ctx, &key, 1) != SL_OK) return SL_ERR;
    judge_ctx j = {ctx, c, key.v.i, time, SL_OK};
    if (sl_list_each(c->pending, &time, sizeof time, judge, &j) != SL_OK || j.rc != SL_OK) return SL_ERR;
    return sl_state_clear(c->pending, &time, sizeof time);
}

static void ck_close(sl_op *ctx)
{
    free(ctx->priv);
    ctx->priv = NULL;
}

const sl_process_fn threshold_checker = {
    .abi = SL_DS_ABI_VERSION,
    .open = ck_open,
    .process_element = ck_reading,
    .process_broadcast_element = ck_rule,
    .on_timer = ck_timer,
    .close = ck_close,
};

#define BASE_MS "1767225600000"

int sluice_job_main(sl_ds_env *env, int argc, char **argv);
int sluice_job_main(sl_ds_env *env, int argc, char **argv)
{
    const char *out = argc > 0 ? argv[0] : "/tmp/rules-out";
    const char *n = argc > 1 ? argv[1] : "3000", *rate = argc > 2 ? argv[2] : "2000";
    sl_ds_set_parallelism(env, 2);
    const char *ropt[] = {"fields.id.kind", "sequence", "fields.id.start", "0", "fields.id.end", "2", NULL};
    sl_ds_stream *r = sl_ds_source(env, "rule_gen", "datagen", "id BIGINT", ropt);
    sl_ds_uid(r, "rule-gen");
    sl_ds_parallelism(r, 1);
    const char *rproj[] = {"id AS kind", "60 + 10 * id AS threshold", "TO_TIMESTAMP_LTZ(" BASE_MS ", 3) AS ts", NULL};
    r = sl_ds_map(r, "rules", rproj);
    sl_ds_parallelism(r, 1);
    r = sl_ds_watermarks(r, "rules_wm", "ts", "0 ms", NULL);
    sl_ds_parallelism(r, 1);

    const char *gopt[] = {"rows-per-second", rate, "fields.id.kind", "sequence", "fields.id.start", "1",
                          "fields.id.end", n, NULL};
    sl_ds_stream *g = sl_ds_source(env, "reading_gen", "datagen", "id BIGINT", gopt);
    sl_ds_uid(g, "reading-gen");
    sl_ds_parallelism(g, 1);
    const char *gproj[] = {"id", "id % 5 AS sensor", "id % 3 AS kind", "id * 37 % 100 AS level",
                           "TO_TIMESTAMP_LTZ(" BASE_MS " + id, 3) AS ts", NULL};
    g = sl_ds_map(g, "readings", gproj);
    sl_ds_parallelism(g, 1);
    g = sl_ds_watermarks(g, "readings_wm", "ts", "0 ms", NULL);
    sl_ds_parallelism(g, 1);

    const char *keys[] = {"sensor", NULL};
    sl_ds_stream *a = sl_ds_process(sl_ds_connect(sl_ds_key_by(g, keys), sl_ds_broadcast(r)), "checker",
                                    "threshold_checker",
                                    "id BIGINT, sensor BIGINT, kind BIGINT, level BIGINT, threshold BIGINT", NULL);
    sl_ds_uid(a, "threshold-checker");
    size_t len = strlen(out) + 16;
    char *path = malloc(len);
    if (!path) return 1;
    snprintf(path, len, "%s/alerts", out);
    const char *fopt[] = {"path", path, "format", "json", NULL};
    sl_ds_sink(a, "alerts", "file", fopt);
    free(path);
    return 0;
}
