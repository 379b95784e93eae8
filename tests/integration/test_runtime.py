"""The operator contract on a cluster: several inputs (UNION ALL of sources
with different parallelism), named side outputs, and operators from a
plugin (a shared object built by the suite) loaded by both daemons, one of
them a source that waits on a descriptor while checkpoints pass."""
import collections
import glob
import json
import os

import pytest

from conftest import wait_for, BUILD

BASE = 1767225600000  # 2026-01-01T00:00:00Z
PLUGIN = os.path.join(BUILD, "plugins", "test_ops.so")
WITH_PLUGIN = {"sluice.operator-plugins": PLUGIN}


def rows(out):
    got = []
    for path in glob.glob(os.path.join(out, "part-*")):
        with open(path) as f:
            got += [json.loads(line) for line in f]
    return got


def seq_source(vid, n, p, rate):
    return {"id": vid, "uid": vid, "type": "datagen", "parallelism": p,
            "schema": [{"name": "id", "type": "BIGINT"}],
            "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                       "fields.id.start": "1", "fields.id.end": str(n)}}


def timed(vid, p, scale):
    """id * scale, user = id % 5, event time 100 ms per id, in order."""
    return {"id": vid, "uid": vid, "type": "calc", "parallelism": p,
            "config": {"projection": [f"id * {scale} AS id", "CAST(id % 5 AS INT) AS user_id",
                                      f"TO_TIMESTAMP_LTZ({BASE} + id * 100, 3) AS ts"]}}


@pytest.mark.parametrize("shape", ["union-vertex", "edges-into-one-input"])
def test_union_of_sources_with_different_parallelism(cluster, workdir, shape):
    """Source A (p=1) runs at full speed, source B (p=2) at 4,000 rows/s
    over the same event-time range. The union's watermark is the minimum of
    both, so B's rows are never late for the windows after it; were it the
    maximum, A would push it 400 s ahead and B's rows would be dropped.
    The union is a `union` vertex with two inputs, or simply two hash edges
    into the window's one input (UNION ALL needs no operator)."""
    cluster.add_tm(slots=2)
    n = 4000
    out = os.path.join(workdir, "out")
    job = {"name": "union", "parallelism": 2,
           "vertices": [seq_source("a", n, 1, 1000000), timed("ta", 1, 1),
                        {"id": "wa", "type": "watermark", "parallelism": 1,
                         "config": {"column": "ts", "interval": "0 ms"}},
                        seq_source("b", n, 2, 4000), timed("tb", 2, 1000000),
                        {"id": "wb", "type": "watermark", "parallelism": 2,
                         "config": {"column": "ts", "interval": "0 ms"}},
                        {"id": "u", "uid": "u", "type": "union"},
                        {"id": "win", "uid": "win", "type": "window",
                         "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '10' SECOND)",
                                    "group-by": ["user_id"],
                                    "aggregates": ["COUNT(*) AS cnt", "SUM(id) AS s"]}},
                        {"id": "out", "type": "file", "config": {"path": out, "format": "json"}}],
           "edges": [{"from": "a", "to": "ta"}, {"from": "ta", "to": "wa"},
                     {"from": "b", "to": "tb"}, {"from": "tb", "to": "wb"},
                     {"from": "wa", "to": "u", "strategy": "rebalance", "input": 0},
                     {"from": "wb", "to": "u", "input": 1},
                     {"from": "u", "to": "win", "strategy": "hash", "keys": ["user_id"]},
                     {"from": "win", "to": "out"}]}
    if shape == "edges-into-one-input":
        job["vertices"] = [v for v in job["vertices"] if v["id"] != "u"]
        job["edges"] = [e for e in job["edges"] if "u" not in (e["from"], e["to"])] + [
            {"from": "wa", "to": "win", "strategy": "hash", "keys": ["user_id"]},
            {"from": "wb", "to": "win", "strategy": "hash", "keys": ["user_id"]}]
    jid = cluster.submit(job)
    cluster.wait_state(jid, {"FINISHED"}, timeout=120)
    want = collections.defaultdict(lambda: [0, 0])
    for i in range(1, n + 1):
        ts = BASE + i * 100
        for scale in (1, 1000000):
            acc = want[(ts - ts % 10000, i % 5)]
            acc[0] += 1
            acc[1] += i * scale
    import datetime
    got = {}
    for r in rows(out):
        d = datetime.datetime.strptime(r["window_start"] + ".0", "%Y-%m-%d %H:%M:%S.%f")
        key = (int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000), r["user_id"])
        assert key not in got
        got[key] = [r["cnt"], r["s"]]
    assert got == dict(want)
    late = sum(v["metrics"].get("numLateRecordsDropped", 0) for v in cluster.job(jid)["vertices"])
    assert late == 0


def test_union_inputs_must_agree(cluster):
    cluster.add_tm(slots=1)
    job = {"vertices": [seq_source("a", 10, 1, 10), seq_source("b", 10, 1, 10),
                        {"id": "tb", "type": "calc", "config": {"projection": ["id", "id AS x"]}},
                        {"id": "u", "type": "union"}, {"id": "p", "type": "print"}],
           "edges": [{"from": "a", "to": "u", "input": 0}, {"from": "b", "to": "tb"},
                     {"from": "tb", "to": "u", "input": 1}, {"from": "u", "to": "p"}]}
    status, body = cluster.request("POST", "/jobs", job)
    assert status == 400
    assert body["errors"][0] == ("vertex 'u': input 1 has another schema than input 0 (UNION ALL "
                                 "needs the same columns and types on every input)")
    job["edges"][2]["input"] = 3
    status, body = cluster.request("POST", "/jobs", job)
    assert status == 400
    assert body["errors"][0] == "vertex 'u': input 1 has no edge (inputs are numbered from 0)"
    job["edges"] = [{"from": "a", "to": "p", "input": 1}, {"from": "b", "to": "p"}]
    del job["vertices"][2:4]
    status, body = cluster.request("POST", "/jobs", job)
    assert status == 400
    assert body["errors"][0] == "edge a -> p: input 1 of 'p' (print), which takes 1 input"


def split_job(out_even, out_odd, n):
    return {"name": "plugin", "parallelism": 2,
            "vertices": [seq_source("gen", n, 2, 1000000),
                         {"id": "keyed", "type": "calc", "config": {"projection": ["id", "id % 7 AS k"]}},
                         {"id": "split", "uid": "split", "type": "test_split", "config": {"column": "id"}},
                         {"id": "count", "uid": "count", "type": "test_count", "config": {"key": "k"}},
                         {"id": "even", "type": "file", "config": {"path": out_even, "format": "json"}},
                         {"id": "odd", "type": "file", "parallelism": 1,
                          "config": {"path": out_odd, "format": "json"}}],
            "edges": [{"from": "gen", "to": "keyed"}, {"from": "keyed", "to": "split"},
                      {"from": "split", "to": "count", "strategy": "hash", "keys": ["k"]},
                      {"from": "count", "to": "even"},
                      {"from": "split", "to": "odd", "output": "odd", "strategy": "rebalance"}]}


def test_plugin_side_output_and_keyed_state(make_cluster, workdir):
    """test_split (a plugin) routes odd ids to its declared "odd" output;
    test_count (a plugin) counts per key in a value state: for each key k
    the counts seen are exactly 1..(number of even ids with id % 7 == k)."""
    cluster = make_cluster(jm_conf=WITH_PLUGIN)
    cluster.add_tm(slots=1, extra=WITH_PLUGIN)
    cluster.add_tm(slots=1, extra=WITH_PLUGIN)
    n = 20000
    even, odd = os.path.join(workdir, "even"), os.path.join(workdir, "odd")
    jid = cluster.submit(split_job(even, odd, n))
    cluster.wait_state(jid, {"FINISHED"}, timeout=120)
    assert sorted(r["id"] for r in rows(odd)) == list(range(1, n + 1, 2))
    got = collections.defaultdict(list)
    ids = []
    for r in rows(even):
        assert r["k"] == r["id"] % 7
        got[r["k"]].append(r["n"])
        ids.append(r["id"])
    assert sorted(ids) == list(range(2, n + 1, 2))
    for k in range(7):
        c = sum(1 for i in range(2, n + 1, 2) if i % 7 == k)
        assert sorted(got[k]) == list(range(1, c + 1)), k
    # the plan names the side output its edge leaves from
    plan = cluster.get(f"/sluice/jobs/{jid}")["plan"]
    sides = [i.get("side_output") for node in plan["nodes"] for i in node.get("inputs", [])]
    assert "odd" in sides


def test_undeclared_output_and_unknown_plugin_type(make_cluster, workdir):
    cluster = make_cluster()  # no plugin on this JobManager
    cluster.add_tm(slots=2)
    job = split_job(os.path.join(workdir, "e"), os.path.join(workdir, "o"), 10)
    status, body = cluster.request("POST", "/jobs", job)
    assert status == 400 and "vertex 'split': unknown type 'test_split'" in body["errors"][0]
    job = {"vertices": [seq_source("g", 10, 1, 10),
                        {"id": "c", "type": "calc", "config": {"projection": ["id"]}},
                        {"id": "p", "type": "print"}, {"id": "q", "type": "print"}],
           "edges": [{"from": "g", "to": "c"}, {"from": "c", "to": "p"},
                     {"from": "c", "to": "q", "output": "errors"}]}
    status, body = cluster.request("POST", "/jobs", job)
    assert status == 400
    assert body["errors"][0] == "edge c -> q: 'c' (calc) has no side output 'errors' (it declares: none)"


def test_plugin_missing_on_a_taskmanager_fails_the_job(make_cluster, workdir):
    cluster = make_cluster(jm_conf=WITH_PLUGIN)
    cluster.add_tm(slots=2)  # without it
    jid = cluster.submit(split_job(os.path.join(workdir, "e"), os.path.join(workdir, "o"), 10))
    cluster.wait_state(jid, {"FAILED"}, timeout=60)
    exc = cluster.get(f"/jobs/{jid}/exceptions")
    assert "unknown type 'test_split'" in json.dumps(exc)


def test_bad_plugin_stops_startup(workdir):
    import subprocess
    from conftest import BIN
    bad = os.path.join(workdir, "not-a-plugin.so")
    with open(bad, "w") as f:
        f.write("nothing")
    for daemon in ("sluice-jobmanager", "sluice-taskmanager"):
        p = subprocess.run([os.path.join(BIN, daemon), "-D", f"sluice.operator-plugins={bad}"],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2
        assert f"operator plugin {bad}:" in p.stderr


def test_source_waiting_on_a_descriptor_lets_checkpoints_through(make_cluster, workdir):
    """test_pipe_source waits on a FIFO with nothing in it. Checkpoint
    barriers still go out at once (mail wakes the task's poll), so
    checkpoints complete while it waits -- each in less than the one second
    the task's poll is capped at. Then the numbers written arrive exactly."""
    cluster = make_cluster(jm_conf=dict(WITH_PLUGIN, **{"execution.checkpointing.interval": "100 ms"}))
    cluster.add_tm(slots=1, extra=WITH_PLUGIN)
    fifo = os.path.join(workdir, "in.fifo")
    os.mkfifo(fifo)
    out = os.path.join(workdir, "out")
    job = {"name": "pipe", "parallelism": 1,
           "vertices": [{"id": "src", "uid": "src", "type": "test_pipe_source",
                         "schema": [{"name": "n", "type": "BIGINT"}], "config": {"path": fifo}},
                        {"id": "out", "type": "file", "config": {"path": out, "format": "json"}}],
           "edges": [{"from": "src", "to": "out"}]}
    jid = cluster.submit(job)
    cluster.wait_state(jid, {"RUNNING"})
    cps = wait_for(lambda: (c := cluster.get(f"/jobs/{jid}/checkpoints"))["counts"]["completed"] >= 5 and c,
                   timeout=60, what="5 checkpoints while the source waits")
    durations = [h["end_to_end_duration"] for h in cps["history"] if h["status"] == "COMPLETED"]
    assert durations and max(durations) < 1000, durations
    fd = os.open(fifo, os.O_WRONLY)
    os.write(fd, b"".join(b"%d\n" % i for i in range(1, 1001)) + b"end\n")
    os.close(fd)
    cluster.wait_state(jid, {"FINISHED"}, timeout=60)
    assert sorted(r["n"] for r in rows(out)) == list(range(1, 1001))
