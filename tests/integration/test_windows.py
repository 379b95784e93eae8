"""Event time on a cluster: watermarks, windows over a hash exchange, and
late rows that are counted rather than lost."""
import collections
import glob
import json
import os

from conftest import wait_for, ROOT

BASE = 1767225600000  # 2026-01-01T00:00:00Z


def window_job(out, n, delay, disorder_ms=5000, p=2):
    """Rows id 1..n; event time goes up 100 ms per id, minus a scrambled
    lag of up to disorder_ms; user = id % 5."""
    return {"name": "tumbling counts", "parallelism": p,
            "vertices": [
                {"id": "gen", "uid": "gen", "type": "datagen", "parallelism": 1,
                 "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": "200000", "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(n)}},
                {"id": "ev", "uid": "ev", "type": "calc", "parallelism": 1,
                 "config": {"projection": [
                     "id", "CAST(id % 5 AS INT) AS user_id",
                     f"TO_TIMESTAMP_LTZ({BASE} + id * 100 - (id * 7919) % {disorder_ms}, 3) AS ts"]}},
                {"id": "wm", "uid": "wm", "type": "watermark", "parallelism": 1,
                 # a watermark after every row that advances it: the stream of
                 # rows and watermarks each window subtask sees is then
                 # fixed, and so is which rows are late
                 "config": {"column": "ts", "delay": delay, "interval": "0 ms"}},
                {"id": "win", "uid": "win", "type": "window",
                 "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '10' SECOND)",
                            "group-by": ["user_id"], "aggregates": ["COUNT(*) AS cnt", "SUM(id) AS s"]}},
                {"id": "out", "type": "file", "config": {"path": out, "format": "json"}}],
            "edges": [{"from": "gen", "to": "ev"}, {"from": "ev", "to": "wm"},
                      {"from": "wm", "to": "win", "strategy": "hash", "keys": ["user_id"]},
                      {"from": "win", "to": "out"}]}


def expected_windows(n, disorder_ms=5000, delay_ms=None):
    """Window results and the number of late rows, by replaying the
    watermark: max event time seen so far - delay - 1 ms; a row is late when
    its window's last millisecond is at or below the watermark."""
    w = collections.defaultdict(lambda: [0, 0])
    wm, max_ts, late = -2**63, -2**63, 0
    for i in range(1, n + 1):
        ts = BASE + i * 100 - (i * 7919) % disorder_ms
        start = ts - ts % 10000
        if delay_ms is not None and start + 10000 - 1 <= wm:
            late += 1
        else:
            acc = w[(start, i % 5)]
            acc[0] += 1
            acc[1] += i
        max_ts = max(max_ts, ts)
        if delay_ms is not None:
            wm = max(wm, max_ts - delay_ms - 1)
    return {k: tuple(v) for k, v in w.items()}, late


def read_windows(out):
    import datetime
    got = {}
    for path in glob.glob(os.path.join(out, "part-*")):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                assert r.get("op", "+I") == "+I", r
                ws = r["window_start"]
                d = datetime.datetime.strptime(ws + ("" if "." in ws else ".0"), "%Y-%m-%d %H:%M:%S.%f")
                start = int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
                key = (start, r["user_id"])
                assert key not in got, f"window {key} emitted twice"
                got[key] = (r["cnt"], r["s"])
    return got


def vertex_late(cluster, jid, vid):
    """numLateRecordsDropped of a vertex: the sum over its subtasks."""
    m = cluster.get(f"/jobs/{jid}/vertices/{vid}/subtasks/metrics?get=numLateRecordsDropped&agg=sum")
    return int(m[0]["sum"])


def late_dropped(cluster, jid):
    return sum(vertex_late(cluster, jid, v["id"]) for v in cluster.job(jid)["vertices"])


def test_tumbling_windows_exact_when_nothing_is_late(cluster, workdir):
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    n = 20000
    out = os.path.join(workdir, "w")
    jid = cluster.submit(window_job(out, n, delay="5 s"))
    job = cluster.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    exp, late = expected_windows(n, delay_ms=5000)
    assert late == 0
    assert read_windows(out) == exp
    assert late_dropped(cluster, jid) == 0
    # watermarks reached the end of time
    win = [v for v in job["vertices"] if v["name"].startswith("win")][0]
    wms = cluster.get(f"/jobs/{jid}/vertices/{win['id']}/watermarks")
    assert len(wms) == 2


def test_late_rows_are_counted_not_lost(cluster, workdir):
    cluster.add_tm(slots=2)
    n = 20000
    out = os.path.join(workdir, "w")
    jid = cluster.submit(window_job(out, n, delay="1 s"))
    job = cluster.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    got = read_windows(out)
    exp, late = expected_windows(n, delay_ms=1000)
    assert late > 0
    assert got == exp
    # every row is either in a window or counted as dropped
    assert late_dropped(cluster, jid) == late
    assert sum(c for c, _ in got.values()) + late == n
    # ... by the window operator itself (Flink's operator scope), no other
    vid = [v["id"] for v in job["vertices"] if v["name"].startswith("win")][0]
    per_op = lambda op: cluster.get(f"/jobs/{jid}/vertices/{vid}/subtasks/metrics"
                                    f"?get={op}.numLateRecordsDropped&agg=sum")[0]["sum"]
    assert per_op("win") == late and per_op("out") == 0


def test_seed_demo_job_prints_window_counts(cluster):
    cluster.add_tm(slots=1)
    with open(os.path.join(ROOT, "examples", "clicks-windowed.json")) as f:
        job = json.load(f)
    job["vertices"][0]["config"]["rows-per-second"] = "200"
    job["vertices"][1]["config"]["delay"] = "1 s"
    job["vertices"][2]["config"]["window"] = "TUMBLE(INTERVAL '1' SECOND)"
    job["vertices"][0]["config"]["fields.ts.max-past"] = "2 s"
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING")
    import re
    line = wait_for(lambda: re.search(r"^\+I\[(\S+), (\S+), (\d+)\]$", cluster.tms[0].out_text(), re.M),
                    timeout=20, what="a printed window")
    assert line.group(1) < line.group(2)
    vid = cluster.job(jid)["vertices"][0]["id"]
    wait_for(lambda: vertex_late(cluster, jid, vid) > 0,
             timeout=20, what="late rows counted (event time up to 2 s in the past, 1 s delay)")
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")
    assert vid


def half_silent_job(name, idle_timeout):
    """Two source subtasks with a sequence each; a filter keeps only the
    first one's rows, so one watermark subtask never sees a row. 1 s tumbling
    counts over all rows at parallelism 1, printed."""
    half = 500_000_000_000
    wm = {"column": "ts", "delay": "0 s", "interval": "50 ms"}
    if idle_timeout:
        wm["idle-timeout"] = idle_timeout
    return {"name": name, "parallelism": 2,
            "vertices": [
                {"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": "2000", "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(2 * half)}},
                {"id": "ev", "type": "calc",
                 "config": {"projection": ["id", f"TO_TIMESTAMP_LTZ({BASE} + id * 10, 3) AS ts"],
                            "filter": f"id <= {half}"}},
                {"id": "wm", "type": "watermark", "config": wm},
                {"id": "win", "type": "window", "parallelism": 1,
                 "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '1' SECOND)",
                            "group-by": [], "aggregates": ["COUNT(*) AS cnt"]}},
                {"id": "out", "type": "print", "parallelism": 1}],
            "edges": [{"from": "gen", "to": "ev"}, {"from": "ev", "to": "wm"},
                      {"from": "wm", "to": "win", "strategy": "rebalance"},
                      {"from": "win", "to": "out"}]}


def test_an_idle_input_does_not_hold_windows_back(cluster, workdir):
    """Two watermark subtasks; only one ever sees rows. After its idle
    timeout the silent one is left out of the window's minimum watermark,
    so windows fire while the job runs (without idleness they never would)."""
    cluster.add_tm(slots=2)
    job = half_silent_job("idle input", idle_timeout="500 ms")
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING")
    import re
    # 100 rows per event-time second from the live subtask; the first window
    # [00:00, 00:01) holds ids 1..99 (id 100 is 00:00:01.000)
    m = wait_for(lambda: re.search(r"^\+I\[(\S+), \S+, \S+, (\d+)\]$", cluster.tms[0].out_text(), re.M),
                 timeout=20, what="a window fired while the job runs")
    assert (m.group(1), int(m.group(2))) == ("2026-01-01T00:00", 99)
    vids = vertex_ids(cluster, jid)
    wms = cluster.get(f"/sluice/jobs/{jid}/vertices/{vids['gen -> ev -> wm']}/subtasks")["subtasks"]
    assert sorted(s["metrics"]["currentOutputWatermark"] > 0 for s in wms) == [False, True]
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")


def vertex_ids(cluster, jid):
    return {v["name"]: v["id"] for v in cluster.job(jid)["vertices"]}


def test_late_rows_go_to_a_declared_side_output(cluster, workdir):
    """With a late side output declared, the rows too late for their window
    arrive there (with the window's input columns) instead of being dropped:
    window counts + side output = rows in, and nothing is counted as dropped."""
    cluster.add_tm(slots=2)
    n = 20000
    out, late_out = os.path.join(workdir, "w"), os.path.join(workdir, "late")
    job = window_job(out, n, delay="1 s")
    job["vertices"].append({"id": "late", "type": "file", "parallelism": 1,
                            "config": {"path": late_out, "format": "json"}})
    job["edges"].append({"from": "win", "to": "late", "output": "late", "strategy": "rebalance"})
    jid = cluster.submit(job)
    j = cluster.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
    assert j["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    exp, late = expected_windows(n, delay_ms=1000)
    assert read_windows(out) == exp
    with open(os.path.join(late_out, "part-0")) as f:
        late_rows = [json.loads(line) for line in f]
    assert len(late_rows) == late and late > 0
    assert set(late_rows[0]) == {"id", "user_id", "ts"}
    ids = sorted(r["id"] for r in late_rows)
    # exactly the rows the replayed watermark calls late
    wm, max_ts, want = -2**63, -2**63, []
    for i in range(1, n + 1):
        ts = BASE + i * 100 - (i * 7919) % 5000
        if ts - ts % 10000 + 10000 - 1 <= wm:
            want.append(i)
        max_ts = max(max_ts, ts)
        wm = max(wm, max_ts - 1000 - 1)
    assert ids == want
    assert late_dropped(cluster, jid) == 0
    names = {nd["id"]: nd["description"] for nd in j["plan"]["nodes"]}
    plan = {names[nd["id"]]: nd for nd in cluster.get(f"/sluice/jobs/{jid}")["plan"]["nodes"]}
    assert plan["late"]["inputs"][0]["side_output"] == "late"


def test_side_output_only_from_operators_that_have_one(cluster):
    cluster.add_tm(slots=1)
    job = window_job("/tmp/unused", 10, delay="1 s")
    job["edges"][1]["output"] = "late"  # ev -> wm: calc has no late output
    status, body = cluster.request("POST", "/jobs", job)
    assert status == 400 and body["errors"][0] == (
        "edge ev -> wm: 'ev' (calc) has no side output 'late' (it declares: none)")


def test_without_idle_timeout_a_silent_input_holds_windows_back(cluster):
    """The same job without an idle timeout: the window's input watermark
    stays at its minimum, and REST shows which upstream subtask holds it back
    (the one whose output watermark never moved)."""
    cluster.add_tm(slots=2)
    job = half_silent_job("held back", idle_timeout=None)
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING")
    vids = vertex_ids(cluster, jid)
    up = vids["gen -> ev -> wm"]

    def upstream_wms():
        return sorted(s["metrics"]["currentOutputWatermark"]
                      for s in cluster.get(f"/sluice/jobs/{jid}/vertices/{up}/subtasks")["subtasks"])
    # the live subtask's watermark is past the end of several windows ...
    wait_for(lambda: upstream_wms()[1] > BASE + 3000, timeout=20, what="the live watermark to advance")
    # ... the silent one never emitted one, so the window waits
    assert upstream_wms()[0] == -2**63
    win = cluster.get(f"/jobs/{jid}/vertices/{vids['win -> out']}/watermarks")
    assert [w["value"] for w in win] == ["-9223372036854775808"]
    subs = cluster.get(f"/sluice/jobs/{jid}/vertices/{vids['win -> out']}/subtasks")["subtasks"]
    assert [s["metrics"]["watermarkIdle"] for s in subs] == [False]
    assert "+I[" not in cluster.tms[0].out_text()
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")
