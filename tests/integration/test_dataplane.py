"""The data plane under load: backpressure reaches the sources without
memory growth, metrics add up, and damaged frames on a data connection fail
only the jobs that used it."""
import os
import socket
import struct
import time

from conftest import wait_for


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def overload_job(sink_rate=2000, p=2):
    return {"name": "overload", "parallelism": p,
            "vertices": [
                {"id": "gen", "type": "datagen",
                 "schema": [{"name": "k", "type": "BIGINT"}, {"name": "s", "type": "STRING"}],
                 "config": {"rows-per-second": "5000000", "fields.k.min": "1",
                            "fields.k.max": "1000", "fields.s.length": "20"}},
                {"id": "mid", "type": "calc", "config": {"filter": "k > 0"}},
                {"id": "sink", "type": "blackhole", "config": {"sink.rows-per-second": str(sink_rate)}}],
            "edges": [{"from": "gen", "to": "mid", "strategy": "rebalance"},
                      {"from": "mid", "to": "sink", "strategy": "hash", "keys": ["k"]}]}


def vertex_ids(cluster, jid):
    return {v["name"]: v["id"] for v in cluster.job(jid)["vertices"]}


def test_slow_sink_backpressures_sources_with_flat_memory(cluster):
    tms = [cluster.add_tm(slots=2), cluster.add_tm(slots=2)]
    jid = cluster.submit(overload_job())
    cluster.wait_state(jid, "RUNNING")
    vids = vertex_ids(cluster, jid)
    assert set(vids) == {"gen", "mid", "sink"}

    def level(name):
        return cluster.get(f"/jobs/{jid}/vertices/{vids[name]}/backpressure")["backpressure-level"]

    wait_for(lambda: level("gen") == "high" and level("mid") == "high", timeout=20,
             what="upstream vertices to report high backpressure")
    rss0 = [rss_kb(t.proc.pid) for t in tms]
    # the sink is the bottleneck: busy, not backpressured
    def sink_busy():
        m = cluster.get(f"/jobs/{jid}/vertices/{vids['sink']}/subtasks/metrics"
                        "?get=busyTimeMsPerSecond,backPressuredTimeMsPerSecond&agg=max")
        d = {x["id"]: x["max"] for x in m}
        return d["busyTimeMsPerSecond"] > 500 and d["backPressuredTimeMsPerSecond"] < 100
    wait_for(sink_busy, timeout=10, what="sink busy")
    assert level("sink") == "ok"
    # per subtask the three times add up to about a second (once every
    # subtask has reported at least once)
    def totals():
        out = []
        for name in ("gen", "mid", "sink"):
            for s in cluster.get(f"/sluice/jobs/{jid}/vertices/{vids[name]}/subtasks")["subtasks"]:
                m = s["metrics"]
                out.append(m["busyTimeMsPerSecond"] + m["backPressuredTimeMsPerSecond"]
                           + m["idleTimeMsPerSecond"])
        return out
    wait_for(lambda: all(t > 0 for t in totals()), timeout=10, what="every subtask reporting")
    for t in totals():
        assert 990 <= t <= 1010, totals()
    # sustained overload: ~6 s at 5,000,000 offered vs 4,000 consumed rows per second
    t_end = time.monotonic() + 6
    while time.monotonic() < t_end:
        assert level("gen") == "high"
        time.sleep(0.5)
    rss1 = [rss_kb(t.proc.pid) for t in tms]
    for a, b in zip(rss0, rss1):
        assert b - a < 4096, f"TaskManager RSS grew from {a} kB to {b} kB under backpressure"
    # the records metrics agree: the sink consumed what mid sent it, up to in-flight buffers
    gen = cluster.get(f"/jobs/{jid}/vertices/{vids['gen']}/subtasks/metrics?get=numRecordsOut&agg=sum")
    sink = cluster.get(f"/jobs/{jid}/vertices/{vids['sink']}/subtasks/metrics?get=numRecordsIn,numRecordsOut&agg=sum")
    sums = {x["id"]: x["sum"] for x in sink}
    assert sums["numRecordsIn"] > 0 and sums["numRecordsOut"] == sums["numRecordsIn"]
    assert gen[0]["sum"] >= sums["numRecordsIn"]
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")


def test_rest_metrics_shapes(cluster):
    cluster.add_tm(slots=2)
    job = overload_job(sink_rate=100000, p=2)
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING")
    vids = vertex_ids(cluster, jid)
    vid = vids["gen"]
    wait_for(lambda: float(cluster.get(f"/jobs/{jid}/vertices/{vid}/metrics?get=0.numRecordsOut")[0]["value"]) > 0)
    listing = cluster.get(f"/jobs/{jid}/vertices/{vid}/metrics")
    ids = {x["id"] for x in listing}
    for name in ("numRecordsIn", "numRecordsOut", "numBytesOut", "numRecordsOutPerSecond",
                 "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond",
                 "buffers.inPoolUsage", "buffers.outPoolUsage", "currentOutputWatermark"):
        assert f"0.{name}" in ids and f"1.{name}" in ids, name
    vals = cluster.get(f"/jobs/{jid}/vertices/{vid}/metrics?get=numRecordsOut")
    assert sorted(v["id"] for v in vals) == ["0.numRecordsOut", "1.numRecordsOut"]
    # sources report what they read as records in (Flink shows 0 there)
    detail = cluster.job(jid)
    gen = [v for v in detail["vertices"] if v["name"] == "gen"][0]
    wait_for(lambda: [v for v in cluster.job(jid)["vertices"] if v["name"] == "gen"][0]["metrics"]["read-records"] > 0)
    agg = cluster.get(f"/jobs/{jid}/vertices/{vid}/subtasks/metrics?get=numRecordsOut&agg=min,max")
    assert set(agg[0]) == {"id", "min", "max"}
    status, body = cluster.request("GET", f"/jobs/{jid}/vertices/{'0' * 32}/backpressure")
    assert status == 404
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")
    assert gen["parallelism"] == 2


HELLO = 3
DATA = 1
# data frame header: type, JobManager session, attempt, channel, a, b
HDR = "<BQIIII"


def data_hello(peer_id):
    pid = peer_id.encode()
    return struct.pack(HDR, HELLO, 0, 0x534C4443, 2, len(pid), 0) + pid


def two_tm_job():
    return {"name": "cross", "parallelism": 2,
            "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                          "config": {"rows-per-second": "1000"}},
                         {"id": "s", "type": "blackhole"}],
            "edges": [{"from": "g", "to": "s", "strategy": "hash", "keys": ["k"]}]}


def local_job():
    return {"name": "local", "parallelism": 1,
            "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                          "config": {"rows-per-second": "1000"}},
                         {"id": "s", "type": "blackhole"}],
            "edges": [{"from": "g", "to": "s"}]}


def run_corruption(cluster, payload):
    a = cluster.add_tm(slots=2)   # tm-0: both jobs have a slot here
    cluster.add_tm(slots=1)       # tm-1
    cross = cluster.submit(two_tm_job())
    wait_for(lambda: cluster.job(cross)["status-counts"]["RUNNING"] == 2, what="cross job running")
    local = cluster.submit(local_job())
    wait_for(lambda: cluster.job(local)["status-counts"]["RUNNING"] == 1, what="local job running")
    # the cross job spans both TaskManagers, the local one runs on tm-0 alone
    cross_vid = [v["id"] for v in cluster.job(cross)["vertices"] if v["name"] == "s"][0]
    subs = cluster.get(f"/sluice/jobs/{cross}/vertices/{cross_vid}/subtasks")["subtasks"]
    assert sorted(x["taskmanager-id"] for x in subs) == ["tm-0", "tm-1"]
    ports = {t["id"]: t["dataPort"] for t in cluster.get("/taskmanagers")["taskmanagers"]}
    # impersonate tm-1 towards tm-0, then send a damaged frame
    s = socket.create_connection(("127.0.0.1", ports["tm-0"]))
    s.sendall(data_hello("tm-1") + payload)
    s.close()
    j = cluster.wait_state(cross, "FAILED", timeout=15)
    why = cluster.get(f"/sluice/jobs/{cross}")["state-reason"]
    assert "data connection" in why, why
    # the other job, which needs no data connection, runs on
    assert cluster.job(local)["state"] == "RUNNING"
    assert a.alive()
    return j


def test_garbage_frame_on_data_connection_fails_only_that_job(cluster):
    j = run_corruption(cluster, struct.pack(HDR, 99, 0, 1, 2, 3, 4))
    assert "unknown frame type 99" in cluster.tms[0].log_text()


def test_truncated_data_frame_fails_only_that_job(cluster):
    # a DATA header announcing 1000 bytes, then only 10, then the peer vanishes
    run_corruption(cluster, struct.pack(HDR, DATA, 0, 1, 0, 0, 1000) + b"x" * 10)


def test_producer_finishing_first_still_delivers_everything(cluster, workdir):
    """Regression: a TaskManager whose tasks had all finished used to free
    its deployment while buffers still waited for credit from a slow
    consumer elsewhere, and the job never finished."""
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    out = workdir + "/slow"
    n = 60000
    job = {"name": "slow consumer", "parallelism": 2,
           "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                         "config": {"rows-per-second": "10000000", "fields.k.kind": "sequence",
                                    "fields.k.start": "1", "fields.k.end": str(n)}},
                        {"id": "slow", "type": "blackhole", "config": {"sink.rows-per-second": "20000"}},
                        {"id": "c", "type": "calc"},
                        {"id": "f", "type": "file", "config": {"path": out, "format": "csv"}}],
           "edges": [{"from": "g", "to": "slow", "strategy": "hash", "keys": ["k"]},
                     {"from": "g", "to": "c", "strategy": "hash", "keys": ["k"]},
                     {"from": "c", "to": "f"}]}
    jid = cluster.submit(job)
    j = cluster.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
    assert j["state"] == "FINISHED"
    rows = []
    for i in range(2):
        with open(f"{out}/part-{i}") as f:
            rows += [int(x) for x in f.read().split()]
    assert sorted(rows) == list(range(1, n + 1))
    slow = [v for v in j["vertices"] if v["name"] == "slow"][0]
    wait_for(lambda: cluster.get(f"/jobs/{jid}/vertices/{slow['id']}/subtasks/metrics?get=numRecordsIn&agg=sum")[0]["sum"] == n,
             what="the slow sink's final count")


def test_broadcast_sends_every_row_to_every_subtask(cluster, workdir):
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=2)
    out = workdir + "/b"
    job = {"name": "broadcast", "parallelism": 3,
           "vertices": [{"id": "g", "type": "datagen", "parallelism": 1,
                         "schema": [{"name": "k", "type": "BIGINT"}],
                         "config": {"rows-per-second": "1000000", "fields.k.kind": "sequence",
                                    "fields.k.start": "1", "fields.k.end": "5000"}},
                        {"id": "f", "type": "file", "config": {"path": out, "format": "csv"}}],
           "edges": [{"from": "g", "to": "f", "strategy": "broadcast"}]}
    jid = cluster.submit(job)
    assert cluster.wait_state(jid, ["FINISHED", "FAILED"])["state"] == "FINISHED"
    for i in range(3):
        with open(f"{out}/part-{i}") as fh:
            assert [int(x) for x in fh.read().split()] == list(range(1, 5001))


def test_a_stalled_channel_does_not_stall_the_connection(cluster, workdir):
    """Two jobs share the data connection between the same two TaskManagers;
    one is throttled to a crawl by its sink. The other still runs at full
    speed over the same TCP connection: a channel without credit stops alone."""
    cluster.add_tm(slots=2)
    cluster.add_tm(slots=2)
    slow = {"name": "slow", "parallelism": 2,
            "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                          "config": {"rows-per-second": "1000000"}},
                         {"id": "s", "type": "blackhole", "config": {"sink.rows-per-second": "100"}}],
            "edges": [{"from": "g", "to": "s", "strategy": "hash", "keys": ["k"]}]}
    sid = cluster.submit(slow)
    vids = vertex_ids(cluster, sid)
    wait_for(lambda: cluster.get(f"/jobs/{sid}/vertices/{vids['g']}/backpressure")["backpressure-level"] == "high",
             what="the slow job to be backpressured")
    out = workdir + "/fast"
    n = 300000
    fast = {"name": "fast", "parallelism": 2,
            "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                          "config": {"rows-per-second": "100000000", "fields.k.kind": "sequence",
                                     "fields.k.start": "1", "fields.k.end": str(n)}},
                         {"id": "f", "type": "file", "config": {"path": out, "format": "csv"}}],
            "edges": [{"from": "g", "to": "f", "strategy": "hash", "keys": ["k"]}]}
    fid = cluster.submit(fast)
    j = cluster.wait_state(fid, ["FINISHED", "FAILED"], timeout=30)
    assert j["state"] == "FINISHED"
    # both subtasks of each job span both TaskManagers, so both jobs used the one connection
    for jid in (sid, fid):
        for v in cluster.job(jid)["vertices"]:
            subs = cluster.get(f"/sluice/jobs/{jid}/vertices/{v['id']}/subtasks")["subtasks"]
            assert sorted(s["taskmanager-id"] for s in subs) == ["tm-0", "tm-1"]
    rows = []
    for i in range(2):
        with open(f"{out}/part-{i}") as fh:
            rows += [int(x) for x in fh.read().split()]
    assert sorted(rows) == list(range(1, n + 1))
    assert cluster.job(sid)["state"] == "RUNNING"
    cluster.request("PATCH", f"/jobs/{sid}?mode=cancel")
    cluster.wait_state(sid, "CANCELED")
