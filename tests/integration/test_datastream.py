"""The DataStream API in C: the SilenceDetector example (a C job built as a
shared object, examples/datastream/silence.c) submitted with `sluice run
job.so args`, its KeyedProcessFunction run by the TaskManagers, and its
GAP / out-of-order / late counts compared with a replay of the same events
and watermarks computed here."""
import datetime
import glob
import json
import os
import re

import pytest

from conftest import BUILD, wait_for
from test_savepoints import NO_PERIODIC, stop_with_savepoint

BASE = 1767225600000
GAP_MS = 5000
DELAY_MS = 1000
JOB = os.path.join(BUILD, "examples", "silence.so")


def events(n):
    """What the job's source, calc and filter make of ids 1..n."""
    for i in range(1, n + 1):
        sensor = i % 3
        ts = BASE + i * 100 - (700 if i % 50 == 0 else 0)
        if sensor == 2 and 800 <= i <= 1200:
            continue
        yield i, sensor, ts


def replay(n):
    """The detector's results: a watermark (max seen - delay - 1) after every
    row that advances it, event timers firing as it passes them, and the
    final maximum watermark of a bounded source."""
    wm, seen = None, None
    max_ts, timers = {}, set()
    gaps, ooo, late = [], [], []

    def fire(upto):
        for t, k in sorted(x for x in timers if x[0] <= upto):
            timers.discard((t, k))
            if k in max_ts and t == max_ts[k] + GAP_MS:
                gaps.append((k, t))
                del max_ts[k]

    for i, k, ts in events(n):
        if wm is not None and ts <= wm:
            late.append(i)
        elif k in max_ts and ts <= max_ts[k]:
            ooo.append(i)
        else:
            if k in max_ts:
                timers.discard((max_ts[k] + GAP_MS, k))
            max_ts[k] = ts
            timers.add((ts + GAP_MS, k))
        seen = ts if seen is None else max(seen, ts)
        if wm is None or seen - DELAY_MS - 1 > wm:
            wm = seen - DELAY_MS - 1
            fire(wm)
    fire(float("inf"))
    return gaps, ooo, late


def read(out, name):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, name, "part-*"))):
        with open(path) as f:
            rows += [json.loads(line) for line in f]
    return rows


def ms(text):
    d = datetime.datetime.strptime(text + ("" if "." in text else ".0"), "%Y-%m-%d %H:%M:%S.%f")
    return int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def run_to_finish(cluster, *args):
    """`sluice run` a C job with its arguments; its JobID once it FINISHED."""
    r = cluster.cli("run", *args, check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    job = cluster.wait_state(jid, {"FINISHED", "FAILED"}, timeout=120)
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    return jid


def test_silence_detector(cluster, workdir):
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "out")
    n = 3000
    run_to_finish(cluster, JOB, out, str(n))
    gaps, ooo, late = replay(n)
    # the seed's reading: one real gap (sensor 2 goes silent mid-stream) and
    # one per sensor from the final watermark of the bounded source
    assert len(gaps) == 4 and len(late) == 0
    assert sorted((g["sensor"], ms(g["deadline"])) for g in read(out, "gaps")) == sorted(gaps)
    assert sorted(r["id"] for r in read(out, "out_of_order")) == sorted(ooo)
    assert len(ooo) == sum(1 for i, _, _ in events(n) if i % 50 == 0)
    assert read(out, "late") == []


def test_c_job_errors(cluster, workdir):
    cluster.add_tm(slots=1)
    plain = os.path.join(BUILD, "plugins", "test_ops.so")  # a shared object, not a C job
    r = cluster.cli("run", plain)
    assert r.returncode == 1 and "has no sluice_job_main() (is it a Sluice C job?)" in r.stderr
    r = cluster.cli("run", os.path.join(workdir, "missing.so"))
    assert r.returncode == 1 and "missing.so" in r.stderr


# ---- EnrichAndCorrelate (examples/datastream/enrich.c) -----------------------------

ENRICH = os.path.join(BUILD, "examples", "enrich.so")
TIMEOUT_MS = 60000


def orders(n):
    """(order_id, customer, ts) as the job's order source and calc make them."""
    return [(i, i % 17, BASE + i * 1000) for i in range(1, n + 1)]


def payments(n):
    """(order_id, amount, ts) of the payment source, filter and calc."""
    out = []
    for i in range(1, n + 6):
        if i % 10 == 7:
            continue
        delta = {3: 100000, 5: -2000, 9: 60000}.get(i % 10, (i * 7919 % 50) * 1000)
        out.append((i, i * 7 % 1000, BASE + i * 1000 + delta))
    return out


def correlate(n):
    """The join by its definition: an order and a payment of one id match
    when order <= payment <= order + timeout; everything else is unmatched."""
    by_id = {i: (cust, ts) for i, cust, ts in orders(n)}
    matches, unmatched, paired = [], [], set()
    for i, amount, pts in payments(n):
        o = by_id.get(i)
        if o and o[1] <= pts <= o[1] + TIMEOUT_MS:
            matches.append((i, o[0], amount, o[1], pts))
            paired.add(i)
        else:
            unmatched.append((i, "payment", pts))
    unmatched += [(i, "order", ts) for i, (_, ts) in by_id.items() if i not in paired]
    return sorted(matches), sorted(unmatched)


def enrich_rows(out):
    m = sorted((r["order_id"], r["customer"], r["amount"], ms(r["order_ts"]), ms(r["pay_ts"]))
               for r in read(out, "matches"))
    u = sorted((r["order_id"], r["side"], ms(r["ts"])) for r in read(out, "unmatched"))
    return m, u


def check_enrich_counts(n, matches, unmatched):
    """The seed's reading of the numbers, per ten ids: seven matches (0, 1, 2,
    4, 6, 8 and 9 -- 9 is paid exactly at the timeout, inside the window),
    three orders unmatched (7 never paid, 3 paid 100 s late, 5 paid 2 s
    early) and two payments unmatched (3 and 5); plus the five payments of
    orders that never existed (n + 1 .. n + 5)."""
    assert n % 10 == 0
    assert len(matches) == 7 * n // 10
    assert sum(1 for u in unmatched if u[1] == "order") == 3 * n // 10
    assert sum(1 for u in unmatched if u[1] == "payment") == 2 * n // 10 + 5


def test_enrich_and_correlate(cluster, workdir):
    cluster.add_tm(slots=4)
    out = os.path.join(workdir, "out")
    n = 2000
    run_to_finish(cluster, ENRICH, out, str(n), "20000")
    matches, unmatched = correlate(n)
    check_enrich_counts(n, matches, unmatched)
    assert enrich_rows(out) == (matches, unmatched)


def correlator_records_in(c, jid):
    return sum(v["metrics"]["read-records"] for v in c.job(jid)["vertices"] if v["name"] == "correlate")


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_enrich_and_correlate_across_savepoint_rescale(make_cluster, workdir, backend):
    """Stopped with a savepoint mid-stream at parallelism 2 (orders and
    payments waiting in state, their timers pending), restored at 3: both
    runs together give exactly the join worked out above."""
    c = make_cluster(jm_conf=NO_PERIODIC)  # sinks stage; the savepoint commits
    c.add_tm(slots=4, extra={"state.backend.type": backend})
    out = os.path.join(workdir, "out")
    n = 3000
    # 200 rows/s: a third of the input in 5 s, 7/10 of it only after 10.5 s
    r = c.cli("run", "-d", ENRICH, out, str(n), "200", check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: correlator_records_in(c, jid) >= n // 3, timeout=30, what="a third of the input")
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    m1, u1 = enrich_rows(out)
    assert 0 < len(m1) < 7 * n // 10  # stopped mid-stream

    r = c.cli("run", "-s", f"file:{sp}", "-p", "3", ENRICH, out, str(n), "20000", timeout=120)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    jid2 = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    assert {v["parallelism"] for v in c.job(jid2)["vertices"] if v["name"] == "correlate"} == {3}
    matches, unmatched = correlate(n)
    check_enrich_counts(n, matches, unmatched)
    assert enrich_rows(out) == (matches, unmatched)


# ---- broadcast state (examples/datastream/rules.c) -----------------------------------

RULES = os.path.join(BUILD, "examples", "rules.so")


def expected_alerts(n):
    threshold = {k: 60 + 10 * k for k in range(3)}
    return sorted((i, i % 5, i % 3, i * 37 % 100, threshold[i % 3])
                  for i in range(1, n + 1) if i * 37 % 100 > threshold[i % 3])


def alerts(out):
    return sorted((r["id"], r["sensor"], r["kind"], r["level"], r["threshold"]) for r in read(out, "alerts"))


def test_broadcast_rules(cluster, workdir):
    cluster.add_tm(slots=4)
    out = os.path.join(workdir, "out")
    run_to_finish(cluster, RULES, out, "3000", "100000")
    assert alerts(out) == expected_alerts(3000)


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_broadcast_state_restored_on_rescale(make_cluster, workdir, backend):
    """Stopped with a savepoint at parallelism 2 after the rules source has
    finished, restored at 3: the new third subtask has never seen a rule
    arrive, only the broadcast state every subtask restores -- and still
    judges its readings by it."""
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=4, extra={"state.backend.type": backend})
    out = os.path.join(workdir, "out")
    n = 3000
    r = c.cli("run", "-d", RULES, out, str(n), "600", check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: sum(v["metrics"]["read-records"] for v in c.job(jid)["vertices"]
                         if v["name"].startswith("checker")) >= 600, timeout=30, what="600 readings in")
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    first = alerts(out)
    assert 0 < len(first) < len(expected_alerts(n))
    r = c.cli("run", "-s", f"file:{sp}", "-p", "3", RULES, out, str(n), "100000", timeout=120)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    jid2 = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    # the rules source was restored finished: not one rule travelled in this run
    assert [v["metrics"]["write-records"] for v in c.job(jid2)["vertices"]
            if v["name"].startswith("rule_gen")] == [0]
    got = alerts(out)
    assert got == expected_alerts(n)
    # the third subtask wrote alerts (part-2-*): it judged with restored rules only
    assert glob.glob(os.path.join(out, "alerts", "part-2-*"))


# ---- the hybrid pipeline (examples/datastream/hybrid.c) -------------------------------

HYBRID = os.path.join(BUILD, "examples", "hybrid.so")
WINDOW_MS = 10000
JUMP = 20


def clicks(n):
    """The lines the job's generator makes, typed as the parser types them:
    (user, ts) of every line that parses, and the ids of those that do not."""
    good, bad = [], []
    for i in range(1, n + 1):
        if i % 97 == 0:
            bad.append(i)
            continue
        w = i // 100
        user = w % 5 if w % 7 == 3 and i % 10 < 4 else i % 5
        good.append((f"u{user}", BASE + i * 100 - (700 if i % 50 == 0 else 0)))
    return good, bad


def hybrid_expected(n):
    """TUMBLE(10 s) counts per user, by their definition, and the anomalies:
    a user's window with JUMP or more clicks above that user's previous
    window (in window order)."""
    good, bad = clicks(n)
    counts = {}
    for user, ts in good:
        start = ts - ts % WINDOW_MS
        counts[(user, start)] = counts.get((user, start), 0) + 1
    windows = sorted((u, s, s + WINDOW_MS, c) for (u, s), c in counts.items())
    anomalies, prev = [], {}
    for u, s, _, c in windows:  # sorted by user, then window start
        if u in prev and c >= prev[u] + JUMP:
            anomalies.append((u, s, c, prev[u]))
        prev[u] = c
    return windows, anomalies, bad


def hybrid_rows(out):
    w = sorted((r["user_id"], ms(r["window_start"]), ms(r["window_end"]), r["cnt"])
               for r in read(out, "windows"))
    a = sorted((r["user_id"], ms(r["window_start"]), r["cnt"], r["prev"]) for r in read(out, "anomalies"))
    bad = sorted(int(r["line"].split("-")[1]) for r in read(out, "malformed"))
    return w, a, bad


def check_hybrid_counts(n, windows, anomalies, bad):
    """The numbers read the way the generator was built: five users in each
    of n / 100 windows (id n, a multiple of 50, is 700 ms early: it falls in
    the window before); one burst every seventh window, each an anomaly
    (about 50 clicks against about 20 the window before), and nothing else
    is one -- not the other users' return from about 10 in a burst window
    to about 20 in the next."""
    assert n % 100 == 0 and len(bad) == n // 97
    bursts = [w for w in range(n // 100) if w % 7 == 3]
    assert [(a[0], (a[1] - BASE) // WINDOW_MS) for a in anomalies] == \
        sorted((f"u{w % 5}", w) for w in bursts)
    assert len(windows) == 5 * (n // 100)


def test_hybrid_pipeline(cluster, workdir):
    cluster.add_tm(slots=4)
    out = os.path.join(workdir, "out")
    n = 3000
    jid = run_to_finish(cluster, HYBRID, out, str(n))
    windows, anomalies, bad = hybrid_expected(n)
    check_hybrid_counts(n, windows, anomalies, bad)
    assert hybrid_rows(out) == (windows, anomalies, bad)
    # one job, one graph: the SQL operators are vertices of the C job
    names = " ".join(v["name"] for v in cluster.job(jid)["vertices"])
    assert "parser" in names and "window" in names and "detector" in names


def detector_records_in(c, jid):
    return sum(v["metrics"]["read-records"] for v in c.job(jid)["vertices"]
               if v["name"].startswith("detector"))


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_hybrid_pipeline_across_savepoint_rescale(make_cluster, workdir, backend):
    """Stopped with a savepoint mid-stream at parallelism 2 (open windows in
    the SQL window operator, previous counts in the detector's state, the
    parser's source position), restored at 3: both runs together give
    exactly the windows and anomalies worked out above."""
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=4, extra={"state.backend.type": backend})
    out = os.path.join(workdir, "out")
    n = 3000
    r = c.cli("run", "-d", HYBRID, out, str(n), "500", check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: detector_records_in(c, jid) >= 40, timeout=30, what="40 windows in the detector")
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    windows, anomalies, bad = hybrid_expected(n)
    w1, _, _ = hybrid_rows(out)
    assert 0 < len(w1) < len(windows)  # stopped mid-stream

    r = c.cli("run", "-s", f"file:{sp}", "-p", "3", HYBRID, out, str(n), "20000", timeout=120)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    jid2 = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    assert {v["parallelism"] for v in c.job(jid2)["vertices"] if v["name"].startswith("detector")} == {3}
    check_hybrid_counts(n, windows, anomalies, bad)
    assert hybrid_rows(out) == (windows, anomalies, bad)


# ---- toChangelogStream / toDataStream of an updating query (tests/plugins/bridge_job.c) --

BRIDGE = os.path.join(BUILD, "plugins", "bridge_job.so")


def test_to_changelog_stream_rows_carry_their_kind(cluster, workdir):
    """COUNT(*) GROUP BY k as a changelog: per key +I[k, 1], then -U[k, c-1]
    and +U[k, c] for each further row -- read by a C process function as
    each row's kind."""
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "out")
    n = 300
    run_to_finish(cluster, BRIDGE, out, str(n), "changelog")
    expected = []
    for k in range(3):
        c = sum(1 for i in range(1, n + 1) if i % 3 == k)
        expected += [("+I", k, 1)] + [x for j in range(2, c + 1) for x in (("-U", k, j - 1), ("+U", k, j))]
    got = [(r["kind"], r["k"], r["cnt"]) for r in read(out, "")]
    assert sorted(got) == sorted(expected)
    # and in each key's order: the changelog of one key is one sequence
    for k in range(3):
        assert [g for g in got if g[1] == k] == [e for e in expected if e[1] == k]


def test_to_data_stream_refuses_an_updating_query(cluster, workdir):
    r = cluster.cli("run", BRIDGE, os.path.join(workdir, "out"), "10", "append")
    assert r.returncode == 1
    assert ("toDataStream: Table sink '*anonymous_datastream_sink$1*' doesn't support consuming "
            "update changes which is produced by group_aggregate '") in r.stderr, r.stderr
    assert "(GROUP BY k)" in r.stderr and "sl_ds_to_changelog_stream" in r.stderr


def test_from_data_stream_takes_the_streams_event_time(cluster, workdir):
    """No schema given: the table's columns and its event-time attribute are
    the stream's (it came from a watermark vertex), so TUMBLE runs on the
    watermarks the stream already carries: 100 ids per 10 s window, split
    by id % 3."""
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "out")
    n = 1000
    run_to_finish(cluster, BRIDGE, out, str(n), "window")
    counts = {}
    for i in range(1, n + 1):
        ts = BASE + i * 100
        key = (i % 3, ts - ts % 10000)
        counts[key] = counts.get(key, 0) + 1
    got = sorted((r["k"], ms(r["window_start"]), r["cnt"]) for r in read(out, ""))
    assert got == sorted((k, s, c) for (k, s), c in counts.items())
