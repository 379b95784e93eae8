/*
 * hybrid.c -- the hybrid pipeline: a C parser -> SQL TUMBLE per user -> a C
 * anomaly detector -> sink, in one job (one graph, one checkpoint).
 *
 * Build and run (a local cluster, e.g. from `make run`, must be up):
 *     make examples
 *     build/bin/sluice run build/examples/hybrid.so /tmp/hybrid-out 3000
 * It writes windows/, anomalies/ and malformed/ under the directory given;
 * a third argument sets the source's rows per second (default 20000).
 *
 * The raw input: a sequence 1..N made into CSV lines "user,ts_ms,id" by a
 * calc: user u<i % 5>, except that in every 7th window (w % 7 == 3) the
 * first four ids of every ten go to user u<w % 5> (a burst); event time
 * BASE + 100 ms per id, every 50th line 700 ms behind; every 97th line is
 * garbage. Then:
 *   1. the parser (a ProcessFunction) types each line into (user_id,
 *      ts_ms, id); what does not parse goes to the `malformed` side output;
 *   2. fromDataStream makes that the table parsed_clicks, with the seed's
 *      explicit schema: a computed event-time column and a watermark 2 s
 *      behind it; a TUMBLE of 10 s counts clicks per user and window, and
 *      toDataStream makes the (append-only) result a stream again;
 *   3. the detector (a KeyedProcessFunction by user) keeps the user's
 *      previous count in ValueState and raises an anomaly when a window's
 *      count is JUMP or more above it (a burst: about 50 against about 20;
 *      a user's recovery after the burst of another, about 10 back to 20,
 *      is not one).
 */
#include <stdlib.h>
#include <string.h>

#include "datastream.h"

#define JUMP 20

/* ---- the parser ------------------------------------------------------------ */

static int parse_line(sl_op *ctx, int input, const sl_row *row)
{
    (void)input;
    const sl_value *line = &row->vals[0];
    char buf[128], user[32];
    long long ts, id;
    int used = 0;
    if (line->isnull || line->v.s.len >= sizeof buf) return sl_ds_output(ctx, "malformed", row);
    memcpy(buf, line->v.s.p, line->v.s.len);
    buf[line->v.s.len] = '\0';
    if (sscanf(buf, "%31[^,],%lld,%lld%n", user, &ts, &id, &used) != 3 || buf[used] != '\0')
        return sl_ds_output(ctx, "malformed", row);
    sl_value out[3] = {{.v.s = {user, strlen(user)}}, {.v.i = ts}, {.v.i = id}};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 3, .vals = out, .ts = row->ts};
    return sl_op_emit(ctx, &r);
}

const sl_process_fn click_parser = {
    .abi = SL_DS_ABI_VERSION,
    .process_element = parse_line,
};

/* ---- the anomaly detector ----------------------------------------------------- */

static int det_open(sl_op *ctx)
{
    ctx->priv = sl_op_state(ctx, "previous-count", SL_STATE_VALUE, 0); /* ValueState<Long> */
    return ctx->priv ? SL_OK : SL_ERR;
}

/* One window of one user: user_id, window_start, window_end, cnt. */
static int det_process(sl_op *ctx, int input, const sl_row *row)
{
    (void)input;
    sl_vstate *prev_state = ctx->priv;
    int64_t cnt = row->vals[3].v.i, prev = 0;
    const void *v;
    size_t len;
    int rc = sl_value_get(prev_state, NULL, 0, &v, &len);
    if (rc == SL_ERR) return rc;
    if (rc == SL_OK && len == sizeof prev) memcpy(&prev, v, sizeof prev);
    if (rc == SL_OK && cnt >= prev + JUMP) {
        sl_value out[4] = {row->vals[0], row->vals[1], {.v.i = cnt}, {.v.i = prev}};
        sl_row alert = {.kind = SL_KIND_INSERT, .n = 4, .vals = out, .ts = row->ts};
        if (sl_op_emit(ctx, &alert) != SL_OK) return SL_ERR;
    }
    return sl_value_put(prev_state, NULL, 0, &cnt, sizeof cnt);
}

const sl_process_fn anomaly_detector = {
    .abi = SL_DS_ABI_VERSION,
    .open = det_open,
    .process_element = det_process,
};

/* ---- the job -------------------------------------------------------------------- */

static void file_sink(sl_ds_stream *s, const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (!path) return;
    snprintf(path, n, "%s/%s", dir, name);
    const char *opts[] = {"path", path, "format", "json", NULL};
    sl_ds_sink(s, name, "file", opts);
    free(path);
}

int sluice_job_main(sl_ds_env *env, int argc, char **argv);
int sluice_job_main(sl_ds_env *env, int argc, char **argv)
{
    const char *out = argc > 0 ? argv[0] : "/tmp/hybrid-out";
    const char *n = argc > 1 ? argv[1] : "3000";
    const char *rate = argc > 2 ? argv[2] : "20000";
    sl_ds_set_parallelism(env, 2);
    const char *gen_opts[] = {"rows-per-second", rate, "fields.id.kind", "sequence",
                              "fields.id.start", "1", "fields.id.end", n, NULL};
    sl_ds_stream *gen = sl_ds_source(env, "gen", "datagen", "id BIGINT", gen_opts);
    sl_ds_parallelism(gen, 1);
    /* the raw lines: window w = (id * 100) / 10000 = id / 100 */
    const char *line[] = {
        "CASE WHEN id % 97 = 0 THEN 'garbage-' || CAST(id AS STRING) ELSE "
        "'u' || CAST(CASE WHEN (id / 100) % 7 = 3 AND id % 10 < 4 THEN (id / 100) % 5 "
        "ELSE id % 5 END AS STRING) || ',' || "
        "CAST(1767225600000 + id * 100 - CASE WHEN id % 50 = 0 THEN 700 ELSE 0 END AS STRING) "
        "|| ',' || CAST(id AS STRING) END AS line", NULL};
    sl_ds_stream *lines = sl_ds_map(gen, "lines", line);
    sl_ds_parallelism(lines, 1);
    const char *sides[] = {"malformed", NULL, NULL};
    sl_ds_stream *parsed = sl_ds_process(lines, "parser", "click_parser",
                                         "user_id STRING, ts_ms BIGINT, id BIGINT", sides);
    sl_ds_parallelism(parsed, 1);
    sl_ds_uid(parsed, "click-parser");
    file_sink(sl_ds_side_output(parsed, "malformed"), out, "malformed");

    sl_ds_sql(env, "SET 'pipeline.auto-watermark-interval' = '0 ms'"); /* a watermark per row */
    sl_ds_from_data_stream(parsed, "parsed_clicks",
                           "event_time AS TO_TIMESTAMP_LTZ(ts_ms, 3), "
                           "WATERMARK FOR event_time AS event_time - INTERVAL '2' SECOND");
    sl_ds_stream *windows = sl_ds_to_data_stream(
        env, "SELECT user_id, window_start, window_end, COUNT(*) AS cnt "
             "FROM TABLE(TUMBLE(TABLE parsed_clicks, DESCRIPTOR(event_time), INTERVAL '10' SECOND)) "
             "GROUP BY window_start, window_end, user_id");
    file_sink(windows, out, "windows");

    const char *keys[] = {"user_id", NULL};
    sl_ds_stream *alerts = sl_ds_process(sl_ds_key_by(windows, keys), "detector", "anomaly_detector",
                                         "user_id STRING, window_start TIMESTAMP(3), cnt BIGINT, "
                                         "prev BIGINT", NULL);
    sl_ds_uid(alerts, "anomaly-detector");
    file_sink(alerts, out, "anomalies");
    return 0;
}
