"""Two-phase (local/global) aggregation on a cluster: a local_aggregate
chained before the keyed exchange, the window merging partial
accumulators, at parallelism 2 on two TaskManagers, with most rows on one
key; stopped with a savepoint mid-run and restored, every window comes out
once with exactly the count and sum of its rows (computed here from the
generator's formula), on both state backends. And SQL plans the local phase
with Flink's mini-batch keys (EXPLAIN), with the same answers as one phase.
"""
import collections
import os

import pytest

from test_checkpoints import committed_files, raw_ids
from test_savepoints import (NO_PERIODIC, exactly_once, late_dropped,
                             new_files, stop_with_savepoint, wait_progress, window_job,
                             window_rows)

AGGS = ["COUNT(*) AS cnt", "SUM(id) AS s"]


def skewed(job, keys):
    """The windowed job with k skewed (5/8 of the rows on k = 0) and a local
    phase before the exchange."""
    ev = next(v for v in job["vertices"] if v["id"] == "ev")
    ev["config"]["projection"][1] = f"CAST((id % 8) / 5 * (id % {keys}) AS INT) AS k"
    win = next(v for v in job["vertices"] if v["id"] == "win")
    win["config"]["phase"] = "global"
    job["vertices"].append(
        {"id": "local", "type": "local_aggregate",
         "config": {"time-column": "ts", "window": win["config"]["window"], "group-by": ["k"],
                    "aggregates": AGGS, "table.exec.mini-batch.size": "50"}})
    job["edges"] = [e for e in job["edges"] if e["to"] != "win"]
    job["edges"] += [{"from": "wm", "to": "local", "strategy": "forward"},
                     {"from": "local", "to": "win", "strategy": "hash", "keys": ["k"]}]
    return job


def expected(n, chunk, keys):
    w = {}
    for i in range(1, n + 1):
        key = (((i - 1) % chunk) // 1000 * 1000, (i % 8) // 5 * (i % keys))
        c, s = w.get(key, (0, 0))
        w[key] = (c + 1, s + i)
    return w


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_two_phase_windows_savepoint_restore(make_cluster, workdir, backend):
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=1, extra={"state.backend.type": backend})
    c.add_tm(slots=1, extra={"state.backend.type": backend})
    n, keys, p = 12000, 7, 2
    chunk = n // p
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = skewed(window_job(out, raw, n, chunk, keys, rate=3000, p=p), keys)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_progress(c, jid, n // 3)
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    assert 0 < len(raw_ids(run1_raw)) < n

    status, body = c.request("POST", f"/jobs?savepointPath=file:{sp}", job)
    assert status == 200, body
    jid2 = body["jobid"]
    job2 = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=40)
    assert job2["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")

    exactly_once(raw_ids(run1_raw + new_files(raw, run1_raw)), n)
    assert late_dropped(c, jid) == 0 and late_dropped(c, jid2) == 0
    rows = window_rows(run1_out + new_files(out, run1_out))
    twice = [k for k, m in collections.Counter(k for k, _ in rows).items() if m > 1]
    assert not twice, f"windows emitted twice: {twice[:10]}"
    assert dict(rows) == expected(n, chunk, keys)
    # the local phase combined rows: the window took fewer records than the rows
    wins = [v for v in c.job(jid2)["vertices"] if v["name"].startswith("win")]
    assert len(wins) == 1, [v["name"] for v in c.job(jid2)["vertices"]]
    assert wins[0]["metrics"]["read-records"] < n - len(raw_ids(run1_raw))
