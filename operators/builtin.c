/*
 * Layer operators/ (docs/ARCHITECTURE.md, "Layers"): over runtime/: one file
 * per operator type, each a static sl_op_def, and the operators' shared
 * helpers (aggregates, joins, Kafka, the DataStream function tables in
 * dsfn.h). An operator reaches its host only through the runtime.
 *
 * builtin.c -- registers the operators that ship with Sluice.
 *
 * Adding a built-in operator means writing its file in this folder and
 * listing its sl_op_def here; nothing else refers to operators by name.
 * Both daemons, the CLI and the unit tests call sl_ops_register_builtin()
 * once before they parse a job graph.
 */
#include "operator.h"
#include "log.h"

extern const sl_op_def sl_op_datagen;
extern const sl_op_def sl_op_calc;
extern const sl_op_def sl_op_print;
extern const sl_op_def sl_op_blackhole;
extern const sl_op_def sl_op_file;
extern const sl_op_def sl_op_partition_commit;
extern const sl_op_def sl_op_watermark;
extern const sl_op_def sl_op_window;
extern const sl_op_def sl_op_group_aggregate;
extern const sl_op_def sl_op_local_aggregate;
extern const sl_op_def sl_op_union;
extern const sl_op_def sl_op_process;
extern const sl_op_def sl_op_keyed_process;
extern const sl_op_def sl_op_kafka_source;
extern const sl_op_def sl_op_kafka_sink;
extern const sl_op_def sl_op_rank;
extern const sl_op_def sl_op_deduplicate;
extern const sl_op_def sl_op_over_aggregate;
extern const sl_op_def sl_op_async_wait;
extern const sl_op_def sl_op_collect;
extern const sl_op_def sl_op_upsert_kafka_source;
extern const sl_op_def sl_op_upsert_kafka_sink;
extern const sl_op_def sl_op_interval_join;
extern const sl_op_def sl_op_regular_join;
extern const sl_op_def sl_op_temporal_join;
extern const sl_op_def sl_op_window_join;
extern const sl_op_def sl_op_changelog_normalize;
extern const sl_op_def sl_op_window_tvf;
extern const sl_op_def sl_op_session_tvf;
extern const sl_op_def sl_op_key_select;
extern const sl_op_def sl_op_file_source;
extern const sl_op_def sl_op_nexmark;
extern const sl_op_def sl_op_lookup_join;
extern const sl_op_def sl_op_rowtime_deduplicate;
extern const sl_op_def sl_op_values;
extern const sl_op_def sl_op_set_op;
extern const sl_op_def sl_op_match_recognize;
extern const sl_op_def sl_op_temporal_sort;
extern const sl_op_def sl_op_limit;
extern const sl_op_def sl_op_jdbc_sink;
extern const sl_op_def sl_op_jdbc_scan;
extern const sl_op_def sl_op_jdbc_lookup_join;
extern const sl_op_def sl_op_postgres_cdc;
extern const sl_op_def sl_op_correlate;
extern const sl_op_def sl_op_expand;

static const sl_op_def *const builtin[] = {
    &sl_op_datagen,   &sl_op_calc,         &sl_op_print,           &sl_op_blackhole,
    &sl_op_file,      &sl_op_watermark,    &sl_op_window,          &sl_op_group_aggregate,
    &sl_op_partition_commit,
    &sl_op_union,     &sl_op_process,      &sl_op_keyed_process,   &sl_op_kafka_source,
    &sl_op_kafka_sink, &sl_op_rank,         &sl_op_deduplicate,     &sl_op_async_wait,
    &sl_op_collect,    &sl_op_upsert_kafka_source, &sl_op_upsert_kafka_sink,
    &sl_op_interval_join, &sl_op_regular_join, &sl_op_temporal_join, &sl_op_window_join,
    &sl_op_changelog_normalize,
    &sl_op_window_tvf,
    &sl_op_session_tvf,
    &sl_op_over_aggregate,
    &sl_op_key_select,
    &sl_op_local_aggregate,
    &sl_op_file_source, &sl_op_nexmark,
    &sl_op_lookup_join,
    &sl_op_rowtime_deduplicate,
    &sl_op_values, &sl_op_set_op,
    &sl_op_match_recognize,
    &sl_op_temporal_sort, &sl_op_limit,
    &sl_op_jdbc_sink, &sl_op_jdbc_scan, &sl_op_jdbc_lookup_join, &sl_op_postgres_cdc,
    &sl_op_correlate, &sl_op_expand,
};

void sl_ops_register_builtin(void)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(builtin); i++) {
        char err[300];
        /* a built-in table that does not register is a bug in this file */
        if (sl_op_register(builtin[i], err, sizeof err) != SL_OK) {
            sl_error("ops", "built-in operator: %s", err);
            SL_ASSERT(0);
        }
    }
}
