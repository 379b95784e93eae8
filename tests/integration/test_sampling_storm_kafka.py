"""Kafka's operator kinds under the sampling storm (see test_sampling_storm.py):
the kafka source and kafka-sink, upsert-kafka and upsert-kafka-sink, with
changelog-normalize, through test_kafka's own tests and their exact
expectations, on storming clusters. librdkafka's own threads block every
signal; the task threads that call into it are the ones stormed."""
import pytest

from test_sampling_storm import cluster, make_cluster, TOTALS  # noqa: F401
from test_kafka import kafka_env, newer_librdkafka, broker  # noqa: F401
from test_kafka import (test_debezium_source_into_three_sinks,  # noqa: F401
                        test_sql_reads_upsert_kafka_through_changelog_normalize,
                        test_sink_partitioners_and_key, test_source_startup_modes)


def test_zz_the_storm_sampled_kafka_jobs():
    assert TOTALS["clusters"] >= 4 and TOTALS["dumps"] >= TOTALS["clusters"], TOTALS
    want = {"kafka", "kafka-sink", "upsert-kafka", "upsert-kafka-sink", "changelog-normalize"}
    assert want <= TOTALS["kinds"], sorted(want - TOTALS["kinds"])


# The release build only: the sanitized half runs these same tests unstormed
# (signals and EINTR are the same in both builds), which keeps CI short.
pytestmark = pytest.mark.release_only
