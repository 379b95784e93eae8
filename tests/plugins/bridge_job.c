/*
 * bridge_job.c -- a C job for the SQL bridges' tests
 * (tests/integration/test_datastream.py): a stream of (k, v) becomes the
 * table `events`; an unbounded GROUP BY over it comes back as a stream
 * with toChangelogStream ("changelog") -- a process function writes each
 * row's kind as a column -- or, refused as Flink refuses it, with
 * toDataStream ("append"). "window": the table takes its columns and its
 * event time from a stream with watermarks (no schema given), and a TUMBLE
 * over it comes back with toDataStream.
 *
 *     sluice run bridge_job.so <out dir> <n> changelog|append|window
 */
#include <stdlib.h>
#include <string.h>

#include "datastream.h"

/* (k, cnt) with its kind -> (kind, k, cnt), an insert */
static int with_kind(sl_op *ctx, int input, const sl_row *row)
{
    (void)input;
    const char *kind = sl_rowkind_short(row->kind);
    sl_value out[3] = {{.v.s = {kind, strlen(kind)}}, row->vals[0], row->vals[1]};
    sl_row r = {.kind = SL_KIND_INSERT, .n = 3, .vals = out, .ts = row->ts};
    return sl_op_emit(ctx, &r);
}

const sl_process_fn kind_column = {.abi = SL_DS_ABI_VERSION, .process_element = with_kind};

int sluice_job_main(sl_ds_env *env, int argc, char **argv);
int sluice_job_main(sl_ds_env *env, int argc, char **argv)
{
    if (argc < 3) return 2;
    sl_ds_set_parallelism(env, 2);
    const char *gen_opts[] = {"fields.id.kind", "sequence", "fields.id.start", "1",
                              "fields.id.end", argv[1], NULL};
    sl_ds_stream *gen = sl_ds_source(env, "gen", "datagen", "id BIGINT", gen_opts);
    if (!strcmp(argv[2], "window")) {
        const char *cols[] = {"id % 3 AS k", "TO_TIMESTAMP_LTZ(1767225600000 + id * 100, 3) AS ts", NULL};
        sl_ds_stream *w = sl_ds_watermarks(sl_ds_map(gen, "events", cols), "wm", "ts", "0 ms", NULL);
        sl_ds_option(w, "interval", "0 ms");
        sl_ds_from_data_stream(w, "events", NULL);
        sl_ds_stream *t = sl_ds_to_data_stream(env, "SELECT k, window_start, COUNT(*) AS cnt FROM "
                                                    "TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
                                                    "INTERVAL '10' SECOND)) GROUP BY k, "
                                                    "window_start, window_end");
        const char *sink[] = {"path", argv[0], "format", "json", NULL};
        sl_ds_sink(t, "out", "file", sink);
        return 0;
    }
    const char *proj[] = {"id % 3 AS k", "id AS v", NULL};
    sl_ds_from_data_stream(sl_ds_map(gen, "pairs", proj), "events", NULL);
    const char *query = "SELECT k, COUNT(*) AS cnt FROM events GROUP BY k";
    sl_ds_stream *s = strcmp(argv[2], "append") ? sl_ds_to_changelog_stream(env, query)
                                                : sl_ds_to_data_stream(env, query);
    sl_ds_stream *rows = sl_ds_process(s, "kinds", "kind_column", "kind STRING, k BIGINT, cnt BIGINT",
                                       NULL);
    const char *sink[] = {"path", argv[0], "format", "json", NULL};
    sl_ds_sink(rows, "out", "file", sink);
    return 0;
}
