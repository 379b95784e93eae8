"""Latency markers (metrics.latency.interval) and buffer debloating
(taskmanager.network.memory.buffer-debloat.*) against real daemons.

- Markers on (the job's config, 50 ms) across two TaskManagers: a sequence
  source through a rebalance edge into a calc and a hash edge into a sink,
  checkpointing every 300 ms. REST's /jobs/:id/metrics lists Flink's
  histogram ids (latency.source_id.<uid>.operator_id.<uid>.
  operator_subtask_index.<n>.latency_<stat>) for every operator downstream of
  the source; the percentiles are ordered, non-negative and below the
  job's lifetime; the TaskManagers' Prometheus reporter shows the summary
  under Flink's job-scope name and labels, and its count grows across a
  completed checkpoint. Markers are no records: numRecordsIn/Out stay the
  sequence's length exactly, and the file sink holds every id once.
  A job without the setting (Flink's default, 0) has no latency metric.
- SET 'metrics.latency.interval' in a SQL script turns them on for its job
  (granularity subtask: ids per source subtask).
- Markers are not held by windows: a one-hour TUMBLE that holds every row
  until the end of input lets them through, so the sink behind it has a
  histogram while the window has emitted nothing; its output is exact
  (granularity single: ids without a source).
- Debloating: a fast source into a throttled sink (and a file sink) across
  two TaskManagers; the throttled sink's gate announces a smaller
  debloatedBufferSize than the 32 KiB segment, with an
  estimatedTimeToConsumeBuffersMs, and the output is exact. (That an
  aligned checkpoint under backpressure gets through faster with
  debloating is measured by bench/debloat.py, not asserted here.)
No timing is asserted beyond sanity bounds.
"""
import glob
import json
import re
import time

from conftest import wait_for
from test_checkpoints import committed_files
from test_prometheus import PROM, port_of, scrape

N = 6000


def seq_job(name, out, conf):
    return {"name": name, "parallelism": 2, "config": conf,
            "vertices": [{"id": "gen", "uid": "gen", "type": "datagen",
                          "schema": [{"name": "k", "type": "BIGINT"}],
                          "config": {"rows-per-second": "2000", "fields.k.kind": "sequence",
                                     "fields.k.start": "1", "fields.k.end": str(N)}},
                         {"id": "calc", "uid": "calc", "type": "calc", "config": {"filter": "k > 0"}},
                         {"id": "f", "uid": "f", "type": "file", "config": {"path": out, "format": "csv"}}],
            "edges": [{"from": "gen", "to": "calc", "strategy": "rebalance"},
                      {"from": "calc", "to": "f", "strategy": "hash", "keys": ["k"]}]}


def latency_ids(c, jid):
    return [m["id"] for m in c.get(f"/jobs/{jid}/metrics") if m["id"].startswith("latency.")]


def sink_counts(tms):
    """Summary counts of the file sink's latency histograms, over both TaskManagers."""
    total = 0
    for tm in tms:
        _, samples = scrape(tm.port)
        for name, labels, v in samples:
            if name == "flink_taskmanager_job_latency_source_id_operator_id_operator_subtask_index_latency_count" \
                    and labels["operator_id"] == "f":
                total += v
    return total


def read_ids(out):
    rows = []
    for path in committed_files(out):
        with open(path) as f:
            rows += [int(x) for x in f.read().split()]
    return sorted(rows)


def test_latency_markers_histograms_rest_prometheus_and_exact_counts(make_cluster, workdir):
    c = make_cluster()
    tms = [c.add_tm(slots=2, extra=PROM), c.add_tm(slots=2, extra=PROM)]
    for tm in tms:
        tm.port = port_of(tm)
    conf = {"metrics.latency.interval": "50 ms", "execution.checkpointing.interval": "300 ms"}
    jid = c.submit(seq_job("latency on", workdir + "/on", conf))
    c.wait_state(jid, "RUNNING")
    t0 = c.job(jid)["start-time"]
    # the calc (both subtasks) and the sink record latency; the source does not
    ids = wait_for(lambda: (lambda ids: len({i.split(".operator_id.")[1].split(".latency")[0] for i in ids}) == 4
                            and ids)(latency_ids(c, jid)), what="latency histograms of calc and sink")
    ops = {i.split(".operator_id.")[1].split(".")[0] for i in ids}
    assert ops == {"calc", "f"}, ids
    for i in ids:
        assert i.startswith("latency.source_id.gen.operator_id."), i
    stats = {i.rsplit("_", 1)[1] for i in ids}
    assert stats == {"min", "max", "mean", "median", "stddev", "p75", "p90", "p95", "p98", "p99", "p999"}
    base = "latency.source_id.gen.operator_id.f.operator_subtask_index.0.latency"
    got = {m["id"]: float(m["value"]) for m in c.get(
        f"/jobs/{jid}/metrics?get={base}_min,{base}_median,{base}_p99,{base}_max,{base}_mean")}
    lifetime = int(time.time() * 1000) - t0
    assert 0 <= got[base + "_min"] <= got[base + "_median"] <= got[base + "_p99"] <= got[base + "_max"] <= lifetime, got
    assert got[base + "_min"] <= got[base + "_mean"] <= got[base + "_max"]

    # Prometheus: Flink's summary, its count growing across a checkpoint
    text, samples = scrape(tms[0].port)
    name = "flink_taskmanager_job_latency_source_id_operator_id_operator_subtask_index_latency"
    assert f"# TYPE {name} summary" in text or f"# TYPE {name} summary" in scrape(tms[1].port)[0]
    for n, labels, v in samples + scrape(tms[1].port)[1]:
        if n == name:
            assert set(labels) == {"host", "tm_id", "job_id", "job_name", "source_id", "operator_id",
                                   "operator_subtask_index", "quantile"}, labels
            assert labels["source_id"] == "gen" and labels["job_id"] == jid
            assert labels["quantile"] in ("0.5", "0.75", "0.95", "0.98", "0.99", "0.999")
            assert 0 <= v <= lifetime
    before = sink_counts(tms)
    cps = c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] > cps, what="a checkpoint")
    wait_for(lambda: sink_counts(tms) > before, what="markers after the checkpoint")

    # markers are not records
    j = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=30)
    assert j["state"] == "FINISHED"
    assert read_ids(workdir + "/on") == list(range(1, N + 1))
    vids = {v["name"]: v["id"] for v in j["vertices"]}
    for v, metric in (("gen", "numRecordsOut"), ("calc", "numRecordsIn"), ("calc", "numRecordsOut"),
                      ("f", "numRecordsIn")):
        wait_for(lambda: c.get(f"/jobs/{jid}/vertices/{vids[v]}/subtasks/metrics?get={metric}&agg=sum")[0]["sum"] == N,
                 what=f"{v}'s {metric}")

    # off by default
    jid2 = c.submit(seq_job("latency off", workdir + "/off", {}))
    j2 = c.wait_state(jid2, ["FINISHED", "FAILED"], timeout=30)
    assert j2["state"] == "FINISHED"
    assert latency_ids(c, jid2) == []
    assert read_ids(workdir + "/off") == list(range(1, N + 1))


def test_markers_pass_a_window_that_holds_every_record(make_cluster, workdir):
    """A one-hour TUMBLE holds all 4,000 rows (400 s of event time) until the
    end of input; the markers go through it at once: the file sink behind
    it has latency histograms while the window has emitted nothing. With
    metrics.latency.granularity single the ids have no source group."""
    c = make_cluster()
    c.add_tm(slots=1, extra={"metrics.latency.granularity": "single"})
    base = 1767225600000  # 2026-01-01T00:00:00Z, an hour boundary
    n = 4000
    out = workdir + "/w"
    job = {"name": "window", "parallelism": 1, "config": {"metrics.latency.interval": "20 ms"},
           "vertices": [{"id": "gen", "uid": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
                         "config": {"rows-per-second": "1000", "fields.id.kind": "sequence",
                                    "fields.id.start": "1", "fields.id.end": str(n)}},
                        {"id": "t", "uid": "t", "type": "calc",
                         "config": {"projection": ["id", "CAST(id % 5 AS INT) AS user_id",
                                                   f"TO_TIMESTAMP_LTZ({base} + id * 100, 3) AS ts"]}},
                        {"id": "wm", "uid": "wm", "type": "watermark", "config": {"column": "ts", "interval": "0 ms"}},
                        {"id": "win", "uid": "win", "type": "window",
                         "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '1' HOUR)",
                                    "group-by": ["user_id"], "aggregates": ["COUNT(*) AS cnt"]}},
                        {"id": "out", "uid": "out", "type": "file", "config": {"path": out, "format": "json"}}],
           "edges": [{"from": "gen", "to": "t"}, {"from": "t", "to": "wm"},
                     {"from": "wm", "to": "win", "strategy": "hash", "keys": ["user_id"]},
                     {"from": "win", "to": "out"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")
    sink = "latency.operator_id.out.operator_subtask_index.0.latency_max"
    win = next(v["id"] for v in c.job(jid)["vertices"] if "win" in v["name"])
    ids = wait_for(lambda: (lambda ids: sink in ids and ids)(latency_ids(c, jid)),
                   what="the sink's latency histogram")
    # reported after the histogram, and the window had still emitted nothing
    assert c.get(f"/jobs/{jid}/vertices/{win}/metrics?get=0.win.numRecordsOut")[0]["value"] == "0"
    assert c.job(jid)["state"] == "RUNNING"
    ops = {i.split(".operator_id.")[1].split(".")[0] for i in ids}
    assert ops <= {"t", "wm", "win", "out"} and "out" in ops  # operators past the source
    assert c.wait_state(jid, ["FINISHED", "FAILED"], timeout=30)["state"] == "FINISHED"
    with open(out + "/part-0") as f:
        got = sorted((r["user_id"], r["cnt"]) for r in map(json.loads, f.read().split("\n")[:-1]))
    assert got == [(u, n // 5) for u in range(5)]


def test_sql_set_latency_interval(make_cluster, workdir):
    """SET 'metrics.latency.interval' in a SQL script reaches the job: the
    filesystem sink's latency histogram appears (granularity subtask: per
    source subtask too), and the rows are exact."""
    c = make_cluster()
    c.add_tm(slots=1, extra={"metrics.latency.granularity": "SUBTASK"})
    out = workdir + "/sql"
    path = workdir + "/lat.sql"
    with open(path, "w") as f:
        f.write(f"""
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
CREATE TABLE dst (id BIGINT, twice BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}',
    'format' = 'json');
SET 'metrics.latency.interval' = '20 ms';
INSERT INTO dst SELECT id, id * 2 FROM src WHERE id % 3 = 0;
""")
    r = c.cli("sql", "-f", path, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = re.findall(r"^Job ID: ([0-9a-f]{32})$", r.stdout, re.M)[0]
    ids = wait_for(lambda: latency_ids(c, jid), what="latency histograms of the SQL job")
    assert ids and all(re.match(r"latency\.source_id\.[^.]+\.source_subtask_index\.0\.operator_id\.[^.]+"
                                r"\.operator_subtask_index\.0\.latency_", i) for i in ids), ids
    assert c.wait_state(jid, ["FINISHED", "FAILED"], timeout=30)["state"] == "FINISHED"
    got = []
    for p in sorted(glob.glob(out + "/part-*")):
        with open(p) as f:
            got += [json.loads(x) for x in f if x.strip()]
    assert sorted((g["id"], g["twice"]) for g in got) == [(i, 2 * i) for i in range(3, 3001, 3)]


DEBLOAT = {"taskmanager.network.memory.buffer-debloat.enabled": "true",
           "taskmanager.network.memory.buffer-debloat.period": "100 ms",
           "taskmanager.network.memory.buffer-debloat.samples": "5"}


def test_debloating_shrinks_the_throttled_gates_buffers_with_exact_output(make_cluster, workdir):
    c = make_cluster()
    c.add_tm(slots=1, extra=DEBLOAT)
    c.add_tm(slots=1, extra=DEBLOAT)
    out = workdir + "/d"
    n = 30000
    job = {"name": "debloat", "parallelism": 2,
           "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                         "config": {"rows-per-second": "10000000", "fields.k.kind": "sequence",
                                    "fields.k.start": "1", "fields.k.end": str(n)}},
                        {"id": "slow", "type": "blackhole", "config": {"sink.rows-per-second": "5000"}},
                        {"id": "c", "type": "calc"},
                        {"id": "f", "type": "file", "config": {"path": out, "format": "csv"}}],
           "edges": [{"from": "g", "to": "slow", "strategy": "hash", "keys": ["k"]},
                     {"from": "g", "to": "c", "strategy": "hash", "keys": ["k"]},
                     {"from": "c", "to": "f"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")
    slow = next(v["id"] for v in c.job(jid)["vertices"] if v["name"] == "slow")

    def figures():
        m = c.get(f"/jobs/{jid}/vertices/{slow}/metrics"
                  "?get=0.debloatedBufferSize,1.debloatedBufferSize,0.estimatedTimeToConsumeBuffersMs")
        return {x["id"]: float(x["value"]) for x in m}
    got = wait_for(lambda: (lambda f: len(f) == 3 and 0 < f["0.debloatedBufferSize"] < 32768
                            and 0 < f["1.debloatedBufferSize"] < 32768 and f)(figures()),
                   what="the throttled sink's gates to announce smaller buffers")
    assert got["0.debloatedBufferSize"] >= 256  # taskmanager.memory.min-segment-size
    assert got["0.estimatedTimeToConsumeBuffersMs"] >= 0
    j = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
    assert j["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    rows = []
    for i in range(2):
        with open(f"{out}/part-{i}") as f:
            rows += [int(x) for x in f.read().split()]
    assert sorted(rows) == list(range(1, n + 1))
    wait_for(lambda: c.get(f"/jobs/{jid}/vertices/{slow}/subtasks/metrics?get=numRecordsIn&agg=sum")[0]["sum"] == n,
             what="the throttled sink's exact count")
