/*
 * silence.c -- the SilenceDetector: a KeyedProcessFunction that raises GAP
 * when a sensor's events stop for longer than GAP_MS of event time.
 *
 * Build and run (a local cluster, e.g. from `make run`, must be up):
 *     make examples
 *     build/bin/sluice run build/examples/silence.so /tmp/silence-out 3000
 * It writes gaps/, out_of_order/ and late/ under the directory given.
 *
 * The job: a sequence 1..N; sensor = id % 3; event time 100 ms per id, every
 * 50th event 700 ms behind (out of order, not late under a 1 s watermark
 * delay); sensor 2 silent for ids 800..1200. The detector keeps the largest
 * event time per sensor (not the last), guards against late events before
 * it touches state (a timer in the past would raise a false GAP at once),
 * deletes the previous deadline's timer when a newer event moves it, and
 * fires only for the current deadline (null-safe after clear). Expect one
 * real GAP (sensor 2 going silent mid-stream) and one per sensor from the
 * final watermark of the bounded source, which closes every key.
 */
#include <stdlib.h>
#include <string.h>

#include "datastream.h"

#define GAP_MS 5000

typedef struct detector {
    sl_vstate *max_ts;          /* ValueState<Long>: the largest event time seen */
} detector;

static int det_open(sl_op *ctx)
{
    detector *d = sl_calloc(1, sizeof *d);
    ctx->priv = d;
    d->max_ts = sl_op_state(ctx, "max-ts", SL_STATE_VALUE, 0);
    return d->max_ts ? SL_OK : SL_ERR;
}

static int get_max(detector *d, int64_t *max)
{
    const void *v;
    size_t len;
    int rc = sl_value_get(d->max_ts, NULL, 0, &v, &len);
    if (rc == SL_OK && len == sizeof *max) memcpy(max, v, sizeof *max);
    return rc;
}

static int det_process(sl_op *ctx, int input, const sl_row *row)
{
    detector *d = ctx->priv;
    int64_t ts = row->vals[1].v.i; /* events: sensor, ts, id */
    int64_t wm = sl_op_current_watermark(ctx);
    if (wm != INT64_MIN && ts <= wm) return sl_ds_output(ctx, "late", row);
    int64_t max = 0;
    int rc = get_max(d, &max);
    if (rc == SL_ERR) return rc;
    if (rc == SL_OK && ts <= max) return sl_ds_output(ctx, "out_of_order", row);
    if (rc == SL_OK) sl_op_timer_delete(ctx, SL_TIME_EVENT, max + GAP_MS, NULL, 0);
    if (sl_value_put(d->max_ts, NULL, 0, &ts, sizeof ts) != SL_OK) return SL_ERR;
    return sl_op_timer_register(ctx, SL_TIME_EVENT, ts + GAP_MS, NULL, 0);
}

static int det_timer(sl_op *ctx, sl_time_domain domain, int64_t time)
{
    detector *d = ctx->priv;
    int64_t max = 0;
    int rc = get_max(d, &max);
    if (rc == SL_ERR) return rc;
    if (rc != SL_OK || time != max + GAP_MS) return SL_OK; /* not the current deadline */
    sl_value key;
    if (sl_ds_key(ctx, &key, 1) != SL_OK) return SL_ERR;
    sl_value out[2] = {key, {.v.i = time}};
    sl_row gap = {.kind = SL_KIND_INSERT, .n = 2, .vals = out, .ts = time};
    if (sl_op_emit(ctx, &gap) != SL_OK) return SL_ERR;
    return sl_state_clear(d->max_ts, NULL, 0);
}

static void det_close(sl_op *ctx)
{
    free(ctx->priv);
    ctx->priv = NULL;
}

const sl_process_fn silence_detector = {
    .abi = SL_DS_ABI_VERSION,
    .open = det_open,
    .process_element = det_process,
    .on_timer = det_timer,
    .close = det_close,
};

static char *sub(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int sluice_job_main(sl_ds_env *env, int argc, char **argv);
int sluice_job_main(sl_ds_env *env, int argc, char **argv)
{
    const char *out = argc > 0 ? argv[0] : "/tmp/silence-out";
    const char *n = argc > 1 ? argv[1] : "3000";
    sl_ds_set_parallelism(env, 2);
    const char *gen_opts[] = {"rows-per-second", "20000", "fields.id.kind", "sequence",
                              "fields.id.start", "1", "fields.id.end", n, NULL};
    sl_ds_stream *gen = sl_ds_source(env, "gen", "datagen", "id BIGINT", gen_opts);
    sl_ds_parallelism(gen, 1);
    const char *proj[] = {"id % 3 AS sensor",
                          "TO_TIMESTAMP_LTZ(1767225600000 + id * 100 - "
                          "CASE WHEN id % 50 = 0 THEN 700 ELSE 0 END, 3) AS ts",
                          "id", NULL};
    sl_ds_stream *ev = sl_ds_map(gen, "events", proj);
    sl_ds_parallelism(ev, 1);
    ev = sl_ds_filter(ev, "silence", "NOT (sensor = 2 AND id BETWEEN 800 AND 1200)");
    sl_ds_parallelism(ev, 1);
    sl_ds_stream *wm = sl_ds_watermarks(ev, "wm", "ts", "1 s", NULL);
    sl_ds_option(wm, "interval", "0 ms"); /* a watermark after every row: deterministic */
    sl_ds_parallelism(wm, 1);
    const char *keys[] = {"sensor", NULL};
    const char *sides[] = {"late", NULL, "out_of_order", NULL, NULL};
    sl_ds_stream *gaps = sl_ds_process(sl_ds_key_by(wm, keys), "detector", "silence_detector",
                                       "sensor BIGINT, deadline TIMESTAMP(3)", sides);
    sl_ds_uid(gaps, "silence-detector");
    char *g = sub(out, "gaps"), *o = sub(out, "out_of_order"), *l = sub(out, "late");
    const char *gopt[] = {"path", g, "format", "json", NULL};
    const char *oopt[] = {"path", o, "format", "json", NULL};
    const char *lopt[] = {"path", l, "format", "json", NULL};
    sl_ds_sink(gaps, "gaps", "file", gopt);
    sl_ds_sink(sl_ds_side_output(gaps, "out_of_order"), "ooo", "file", oopt);
    sl_ds_sink(sl_ds_side_output(gaps, "late"), "late_rows", "file", lopt);
    free(g);
    free(o);
    free(l);
    return 0;
}
