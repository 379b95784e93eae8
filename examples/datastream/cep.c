/*
 * cep.c -- complex event processing with the C pattern API (Flink CEP):
 * per sensor, a reading of 80 or more, later one or more readings of 60 or
 * more each higher than the one before, then at once a reading under 50 --
 * all within 1.2 seconds of event time. Partial matches that ran out of time
 * go to the "timeout" side output.
 *
 * Build and run (a local cluster, e.g. from `make run`, must be up):
 *     make examples
 *     build/bin/sluice run build/examples/cep.so /tmp/cep-out 3000
 * (output directory, number of readings). It writes alerts/ (one row per
 * match: sensor, the high reading's id, how many rises, the drop's id, the
 * first rise's temperature) and timeouts/ (sensor, the high reading's id,
 * the rows the partial match had, when it timed out) under the directory.
 *
 *     high     = sl_cep_begin("high")                  temp >= 80
 *     rise     = sl_cep_followed_by_any(.., "rise")     temp > the previous rise's (the first >= 60;
 *                                                       a later one when the first leads nowhere)
 *                sl_cep_one_or_more(..)
 *     drop     = sl_cep_next(.., "drop")                temp < 50
 *     sl_cep_within(.., 1200)
 *
 * A second pattern over the same readings, per zone (id * id) % 7 (cooling/:
 * zone, the hot reading's id, the cool one's, the warm one's, the rows of
 * the match):
 *
 *     hot      = sl_cep_begin("hot")                    temp >= 80
 *                sl_cep_not_next(.., "hot2")            the next reading is not >= 80
 *                sl_cep_not_followed_by(.., "spike")    no reading >= 89 before the cool one
 *     cool     = sl_cep_followed_by(.., "cool")         temp < 40 (the first such reading)
 *     warm     = sl_cep_next(.., "warm")                temp >= 70
 *                sl_cep_not_followed_by(.., "hot3")     and no reading >= 80 until the window ends
 *     sl_cep_within(.., 3000)
 *
 * Readings: ids 1..N every 100 ms of event time, sensor id % 3, temperature
 * 30 + (id * 7919) % 61.
 */
#include <stdlib.h>
#include <string.h>

#include "datastream.h"

/* readings: sensor, ts, id, temp, zone */
enum { C_SENSOR, C_TS, C_ID, C_TEMP, C_ZONE };

static bool condition(const char *name, const sl_row *row, const sl_cep_match *m)
{
    int64_t temp = row->vals[C_TEMP].v.i;
    if (!strcmp(name, "high")) return temp >= 80;
    if (!strcmp(name, "drop")) return temp < 50;
    /* rise: above the last rise; the first one 60 or more */
    const sl_row *prev = sl_cep_row(m, "rise", -1);
    return prev ? temp > prev->vals[C_TEMP].v.i : temp >= 60;
}

static int select_fn(const sl_cep_match *m, sl_row *out, sl_arena *scratch)
{
    (void)scratch;
    const sl_row *high = sl_cep_row(m, "high", 0), *drop = sl_cep_row(m, "drop", 0);
    out->vals[0] = high->vals[C_SENSOR];
    out->vals[1] = high->vals[C_ID];
    out->vals[3] = drop->vals[C_ID];
    out->vals[2].v.i = sl_cep_count(m, "rise");
    out->vals[4] = sl_cep_row(m, "rise", 0)->vals[C_TEMP];
    return SL_OK;
}

static int timeout_fn(const sl_cep_match *m, int64_t timeout_ts, sl_row *out, sl_arena *scratch)
{
    (void)scratch;
    const sl_row *high = sl_cep_at(m, 0);
    out->vals[0] = high->vals[C_SENSOR];
    out->vals[1] = high->vals[C_ID];
    out->vals[2].v.i = sl_cep_length(m);
    out->vals[3].v.i = timeout_ts;
    return SL_OK;
}

const sl_cep_fn overheating = {
    .abi = SL_DS_ABI_VERSION,
    .condition = condition,
    .select = select_fn,
    .timeout = timeout_fn,
};

static bool cooling_condition(const char *name, const sl_row *row, const sl_cep_match *m)
{
    (void)m;
    int64_t temp = row->vals[C_TEMP].v.i;
    if (!strcmp(name, "hot") || !strcmp(name, "hot2") || !strcmp(name, "hot3")) return temp >= 80;
    if (!strcmp(name, "spike")) return temp >= 89;
    if (!strcmp(name, "cool")) return temp < 40;
    return temp >= 70; /* warm */
}

static int cooling_select(const sl_cep_match *m, sl_row *out, sl_arena *scratch)
{
    (void)scratch;
    const sl_row *hot = sl_cep_row(m, "hot", 0);
    out->vals[0] = hot->vals[C_ZONE];
    out->vals[1] = hot->vals[C_ID];
    out->vals[2] = sl_cep_row(m, "cool", 0)->vals[C_ID];
    out->vals[3] = sl_cep_row(m, "warm", 0)->vals[C_ID];
    out->vals[4].v.i = sl_cep_length(m);
    return SL_OK;
}

const sl_cep_fn cooling = {
    .abi = SL_DS_ABI_VERSION,
    .condition = cooling_condition,
    .select = cooling_select,
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
    const char *out = argc > 0 ? argv[0] : "/tmp/cep-out";
    const char *n = argc > 1 ? argv[1] : "3000";
    sl_ds_set_parallelism(env, 2);
    const char *gen_opts[] = {"rows-per-second", "20000", "fields.id.kind", "sequence",
                              "fields.id.start", "1", "fields.id.end", n, NULL};
    sl_ds_stream *gen = sl_ds_source(env, "gen", "datagen", "id BIGINT", gen_opts);
    sl_ds_parallelism(gen, 1);
    const char *proj[] = {"id % 3 AS sensor", "TO_TIMESTAMP_LTZ(1767225600000 + id * 100, 3) AS ts",
                          "id", "30 + (id * 7919) % 61 AS temp", "(id * id) % 7 AS zone", NULL};
    sl_ds_stream *ev = sl_ds_map(gen, "readings", proj);
    sl_ds_parallelism(ev, 1);
    sl_ds_stream *wm = sl_ds_watermarks(ev, "wm", "ts", "1 s", NULL);
    sl_ds_parallelism(wm, 1);
    const char *keys[] = {"sensor", NULL};
    sl_cep_pattern *p = sl_cep_begin("high");
    p = sl_cep_one_or_more(sl_cep_followed_by_any(p, "rise"));
    p = sl_cep_within(sl_cep_next(p, "drop"), 1200);
    sl_ds_stream *alerts = sl_ds_cep(sl_ds_key_by(wm, keys), "overheating", p, "overheating",
                                     "sensor BIGINT, high_id BIGINT, rises BIGINT, drop_id BIGINT, "
                                     "first_rise BIGINT",
                                     "sensor BIGINT, high_id BIGINT, rows BIGINT, timeout_ts BIGINT");
    sl_cep_pattern_free(p);
    sl_ds_uid(alerts, "overheating");
    sl_cep_pattern *q = sl_cep_not_next(sl_cep_begin("hot"), "hot2");
    q = sl_cep_followed_by(sl_cep_not_followed_by(q, "spike"), "cool");
    q = sl_cep_within(sl_cep_not_followed_by(sl_cep_next(q, "warm"), "hot3"), 3000);
    const char *zone[] = {"zone", NULL};
    sl_ds_stream *cool = sl_ds_cep(sl_ds_key_by(wm, zone), "cooling", q, "cooling",
                                   "zone BIGINT, hot_id BIGINT, cool_id BIGINT, warm_id BIGINT, "
                                   "rows BIGINT", NULL);
    sl_cep_pattern_free(q);
    sl_ds_uid(cool, "cooling");
    char *a = sub(out, "alerts"), *t = sub(out, "timeouts"), *c = sub(out, "cooling");
    const char *aopt[] = {"path", a, "format", "json", NULL};
    const char *topt[] = {"path", t, "format", "json", NULL};
    const char *copt[] = {"path", c, "format", "json", NULL};
    sl_ds_sink(alerts, "alerts", "file", aopt);
    sl_ds_sink(sl_ds_side_output(alerts, "timeout"), "timeouts", "file", topt);
    sl_ds_sink(cool, "cool-out", "file", copt);
    free(a);
    free(t);
    free(c);
    return 0;
}
