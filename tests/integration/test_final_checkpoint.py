"""Checkpoints after tasks finish and final checkpoints (Flink's FLIP-147).

- Two branches, one bounded and fast (A), one slow (B); A's rows also meet
  B's in one sink through hash edges (its channels from A end early, so its
  barrier alignment runs over B's channels alone). Once A has finished,
  checkpoints go on completing; then a TaskManager is SIGKILLed, the job
  restarts from the latest checkpoint (which records A's sources finished,
  so they emit nothing again) and finishes. Every id of both branches is in
  the committed output exactly once, on both state backends.
- Stop-with-savepoint after one source finished succeeds; the job restored
  from it finishes, and the output of both runs together is exact.
- A bounded job with checkpointing commits its last rows only at a final
  checkpoint: no part file is visible before a completed checkpoint, every
  row is committed once the job is FINISHED, and the history shows the
  checkpoint that committed them. The interval is an hour: the final
  checkpoint is triggered because the tasks reported their end of input.
"""
import os
import signal

import pytest

from conftest import failover_conf, wait_for
from test_checkpoints import checkpoints, committed_files, raw_ids, read_metadata
from test_savepoints import stop_with_savepoint

A_START, B_START = 1, 1_000_001


def gen(vid, start, n, rate):
    return {"id": vid, "uid": vid, "type": "datagen",
            "schema": [{"name": "id", "type": "BIGINT"}],
            "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                       "fields.id.start": str(start), "fields.id.end": str(start + n - 1)}}


def sink(vid, path):
    return {"id": vid, "uid": vid, "type": "file", "config": {"path": path, "format": "json"}}


def two_branch_job(workdir, n_a, n_b, rate_b, p=2):
    """genA (fast, bounded) -> outA; genB (slow) -> outB; both -> hash -> both."""
    return {"name": "two branches", "parallelism": p,
            "vertices": [gen("genA", A_START, n_a, 1_000_000), gen("genB", B_START, n_b, rate_b),
                         sink("outA", os.path.join(workdir, "outA")),
                         sink("outB", os.path.join(workdir, "outB")),
                         sink("both", os.path.join(workdir, "both"))],
            "edges": [{"from": "genA", "to": "outA", "strategy": "forward"},
                      {"from": "genB", "to": "outB", "strategy": "forward"},
                      {"from": "genA", "to": "both", "strategy": "hash", "keys": ["id"]},
                      {"from": "genB", "to": "both", "strategy": "hash", "keys": ["id"]}]}


def vertex_status(c, jid, vid):
    """The status of the job vertex (chain) whose first operator is `vid`."""
    vertices = c.job(jid)["vertices"]
    for v in vertices:
        if v["name"].split(" -> ")[0] == vid:
            return v["status"]
    raise AssertionError(f"no vertex {vid} in {[v['name'] for v in vertices]}")


def assert_exactly_once(paths, ids):
    got = raw_ids(paths)
    want = set(ids)
    dup = {i: m for i, m in got.items() if m != 1}
    missing = sorted(want - set(got))
    extra = sorted(set(got) - want)
    assert not dup and not missing and not extra, \
        f"duplicated {list(dup.items())[:10]} ({len(dup)}), missing {missing[:10]} " \
        f"({len(missing)}), unexpected {extra[:10]} ({len(extra)})"


def check_outputs(workdir, n_a, n_b):
    ids_a = range(A_START, A_START + n_a)
    ids_b = range(B_START, B_START + n_b)
    assert_exactly_once(committed_files(os.path.join(workdir, "outA")), ids_a)
    assert_exactly_once(committed_files(os.path.join(workdir, "outB")), ids_b)
    assert_exactly_once(committed_files(os.path.join(workdir, "both")), list(ids_a) + list(ids_b))


def completed_after(c, jid, n):
    """Wait for a completed checkpoint with an id above n; return its id."""
    def newer():
        latest = checkpoints(c, jid)["latest"]["completed"]
        return latest and latest["id"] > n and latest["id"]
    return wait_for(newer, timeout=30, what=f"a checkpoint of {jid} after {n}")


def finished_subtasks(md, uid):
    for op in md["operators"]:
        if op["uid"] == uid:
            return sorted(s["subtask"] for s in op["subtasks"] if s.get("finished"))
    return []


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_failover_after_a_branch_finished(make_cluster, workdir, backend):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk))
    extra = {"state.backend.type": backend}
    c.add_tm(slots=2, extra=extra)
    c.add_tm(slots=2, extra=extra)
    n_a, n_b = 20_000, 12_000  # B: 2000 rows/s, about 6 s
    jid = c.submit(two_branch_job(workdir, n_a, n_b, rate_b=2000))
    c.wait_state(jid, "RUNNING", timeout=20)

    # A finishes (its sources and their sinks, after a final checkpoint)...
    wait_for(lambda: vertex_status(c, jid, "genA") == "FINISHED", timeout=30,
             what="branch A to finish")
    # ... all of A is committed in outA now, while B still runs
    assert_exactly_once(committed_files(os.path.join(workdir, "outA")),
                        range(A_START, A_START + n_a))
    # checkpoints go on over the running part, and record A finished
    first = checkpoints(c, jid)["latest"]["completed"]["id"]
    later = completed_after(c, jid, first)
    md = read_metadata(os.path.join(chk, jid, f"chk-{later}"))
    assert finished_subtasks(md, "genA") == [0, 1], md
    assert c.job(jid)["state"] == "RUNNING"
    # finished subtasks count as acknowledged, once each, per vertex too
    details = c.get(f"/jobs/{jid}/checkpoints/details/{later}")
    total = sum(v["parallelism"] for v in c.job(jid)["vertices"])
    assert details["num_subtasks"] == details["num_acknowledged_subtasks"] == total, details
    for t in details["tasks"].values():
        assert t["num_subtasks"] == t["num_acknowledged_subtasks"] == 2, details["tasks"]

    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra=extra)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    ts = job["timestamps"]
    assert 0 < ts["RESTARTING"] < ts["FINISHED"], ts
    cp = checkpoints(c, jid)
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["id"] >= later, cp["counts"]
    check_outputs(workdir, n_a, n_b)


def test_stop_with_savepoint_after_a_source_finished(make_cluster, workdir):
    sp = os.path.join(workdir, "sp")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms",
                              "state.savepoints.dir": sp})
    c.add_tm(slots=2)
    n_a, n_b = 5_000, 12_000  # B: 2000 rows/s, about 6 s
    job = two_branch_job(workdir, n_a, n_b, rate_b=2000)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: vertex_status(c, jid, "genA") == "FINISHED", timeout=30,
             what="branch A to finish")
    path = stop_with_savepoint(c, jid, sp)
    md = read_metadata(path)
    assert md["is_savepoint"] and finished_subtasks(md, "genA") == [0, 1], md
    done_b = raw_ids(committed_files(os.path.join(workdir, "outB")))
    assert 0 < len(done_b) < n_b, len(done_b)

    # restored: A's sources emit nothing again, B carries on to its end
    status, body = c.request("POST", f"/jobs?savepointPath=file:{path}", job)
    assert status == 200, body
    jid2 = body["jobid"]
    state = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=60)["state"]
    assert state == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    check_outputs(workdir, n_a, n_b)


def test_bounded_job_commits_at_its_final_checkpoint(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    # an hour between periodic checkpoints: the final one comes because the
    # tasks said their input ended, not because the interval passed
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h",
                              "state.checkpoints.dir": chk})
    c.add_tm(slots=2)
    n = 3000
    out = os.path.join(workdir, "outA")
    job = {"name": "bounded", "parallelism": 2,
           "vertices": [gen("genA", A_START, n, 1_000_000), sink("outA", out)],
           "edges": [{"from": "genA", "to": "outA", "strategy": "hash", "keys": ["id"]}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    # the input is read at once; the sinks wait for a checkpoint to commit
    seen_uncommitted = []

    def poll():
        # files first: a checkpoint completing between the two reads then
        # shows as completed, never as files committed before it
        files = committed_files(out)
        cp = checkpoints(c, jid)
        if cp["counts"]["completed"] == 0:
            assert files == [], f"committed before any checkpoint completed: {files}"
            seen_uncommitted.append(1)
        return c.job(jid)["state"] in ("FINISHED", "FAILED", "CANCELED")
    wait_for(poll, timeout=30, what="the job to end")
    assert seen_uncommitted, "the job ended before the test looked"
    assert c.job(jid)["state"] == "FINISHED"
    cp = checkpoints(c, jid)
    assert cp["counts"]["completed"] >= 1 and cp["counts"]["failed"] == 0, cp["counts"]
    final = cp["latest"]["completed"]
    assert final["status"] == "COMPLETED"
    assert final["num_acknowledged_subtasks"] == final["num_subtasks"]
    assert_exactly_once(committed_files(out), range(A_START, A_START + n))
