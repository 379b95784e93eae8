"""Incremental RocksDB checkpoints (execution.checkpointing.incremental) on
real daemons.

- Failover: the keyed COUNT/SUM job of test_checkpoints.py on rocksdb with
  incremental checkpoints every 300 ms; a TaskManager is killed with SIGKILL
  and replaced; it restores from an incremental checkpoint (its _metadata
  lists shared SST files) and the committed output is exact.
- Sizes and shared files: with state that grows a little per checkpoint, a
  later checkpoint's checkpointed_size (REST) is below its state_size while
  the first one's equals it; once the bounded job has finished, the job's
  shared/ directory holds exactly the SST files the retained checkpoints'
  _metadata reference (dropped checkpoints took theirs along, nothing a
  retained one needs is missing); savepoints stay full (no shared files).
- Rescale 2 -> 3 from a retained incremental checkpoint: exact output.
- Cancelled with DELETE_ON_CANCELLATION: no checkpoint and no shared file is
  left behind.
"""
import json
import os
import re
import signal

from conftest import failover_conf, wait_for
from test_checkpoints import (agg_job, apply_changelog, checkpoints, committed_files,
                              expected_agg, raw_ids, read_metadata, wait_completed)

INC = {"state.backend.type": "rocksdb", "execution.checkpointing.incremental": "true"}


def shared_refs(snapshot_dir):
    md = read_metadata(snapshot_dir)
    refs, priv = set(), set()
    for op in md["operators"]:
        for st in op["subtasks"]:
            refs.update(st["shared_files"])
            priv.update(st["private_files"])
    return md, refs, priv


def test_incremental_failover_exactly_once(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk))
    c.add_tm(slots=2, extra=INC)
    c.add_tm(slots=2, extra=INC)
    n, keys = 16000, 2000
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    wait_for(lambda: committed_files(out) and committed_files(raw), timeout=10,
             what="committed output")
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra=INC)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    cp = checkpoints(c, jid)
    assert cp["counts"]["restored"] == 1, cp["counts"]
    ids = raw_ids(committed_files(raw))
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)
    # its checkpoints are incremental: the keyed state is SST files in shared/
    latest = cp["latest"]["completed"]
    _, refs, priv = shared_refs(f"{chk}/{jid}/chk-{latest['id']}")
    assert refs and priv
    for name in refs:
        assert os.path.isfile(os.path.join(chk, jid, "shared", name)), name
    assert cp["latest"]["restored"]["id"] >= 3


def test_incremental_sizes_and_shared_files(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "250 ms",
                              "state.checkpoints.dir": chk,
                              "state.checkpoints.num-retained": "2"})
    c.add_tm(slots=2, extra=INC)
    # every row a new key: the state grows by ~250 entries per checkpoint
    n = 6000
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, n, rate=1000))
    shared = os.path.join(chk, jid, "shared")
    wait_completed(c, jid, 3)
    early = set(os.listdir(shared))
    assert early
    # while the job runs, RocksDB compacts the early files away and, once no
    # retained checkpoint lists them, the JobManager deletes them
    def dropped_while_running():
        gone = early - set(os.listdir(shared))
        return gone and c.job(jid)["state"] == "RUNNING"
    wait_for(dropped_while_running, timeout=30, what="an early shared file deleted by retention")
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), n)
    cp = checkpoints(c, jid)
    assert cp["counts"]["completed"] >= 6, cp["counts"]
    # at most the one in flight when the job finished fails (its uploads are swept below)
    assert cp["counts"]["failed"] <= 1, cp["counts"]
    if cp["counts"]["failed"]:
        assert cp["latest"]["failed"]["failure_message"] == "the job's tasks stopped before it completed"

    done = sorted((h for h in cp["history"] if h["status"] == "COMPLETED"), key=lambda h: h["id"])
    first = done[0]
    if first["id"] == 1:  # still in the (bounded) history: everything in it was new
        assert first["checkpointed_size"] == first["state_size"], first
    later = [h for h in done[1:] if h["checkpointed_size"] < h["state_size"]]
    assert later, [(h["id"], h["checkpointed_size"], h["state_size"]) for h in done]
    s = cp["summary"]
    assert s["checkpointed_size"]["min"] < s["state_size"]["max"], s

    # the retained checkpoints and exactly their shared files are left
    jobdir = os.path.join(chk, jid)
    kept = sorted(d for d in os.listdir(jobdir) if d.startswith("chk-"))
    assert len(kept) == 2, kept
    want = set()
    for d in kept:
        md, refs, priv = shared_refs(os.path.join(jobdir, d))
        assert refs, f"{d}: no shared files in _metadata"
        for p in priv:
            assert os.path.isfile(os.path.join(jobdir, d, p)), p
        want |= refs
    # the JobManager sweeps what stopped or failed checkpoints uploaded once
    # the job has ended (on its file worker: awaited)
    wait_for(lambda: set(os.listdir(shared)) <= want, timeout=10,
             what="only referenced files in shared/")
    have = set(os.listdir(shared))
    assert have == want, (sorted(have - want)[:5], sorted(want - have)[:5])
    # over this many checkpoints RocksDB compacted, so some were dropped
    assert cp["counts"]["completed"] > len(kept)


def test_incremental_restore_rescale_2_to_3(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "state.checkpoints.dir": chk})
    c.add_tm(slots=3, extra=INC)
    c.add_tm(slots=3, extra=INC)
    n, keys = 12000, 500
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=3000, p=2))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    latest = checkpoints(c, jid)["latest"]["completed"]
    path = f"{chk}/{jid}/chk-{latest['id']}"
    md, refs, _ = shared_refs(path)
    agg = [op for op in md["operators"] if op["uid"] == "agg"][0]
    assert all(st["shared_files"] or st["private_files"] for st in agg["subtasks"]), agg
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    assert 0 < len(raw_ids(run1_raw)) < n

    jf = os.path.join(workdir, "job3.json")
    with open(jf, "w") as f:
        json.dump(agg_job(out, raw, n, keys, rate=3000, p=3), f)
    r = c.cli("run", "-s", f"file:{path}", jf, timeout=90)
    m = re.fullmatch(r"Job has been submitted with JobID ([0-9a-f]{32})\n"
                     r"Job \1 finished with state FINISHED\.\n", r.stdout)
    assert r.returncode == 0 and m, r.stdout + r.stderr
    ids = raw_ids(committed_files(raw))
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    new_out = [p for p in committed_files(out) if p not in run1_out]
    assert apply_changelog(run1_out + new_out) == expected_agg(range(1, n + 1), keys)
    # the second run's subtasks were three
    j2 = c.job(m.group(1))
    assert {v["parallelism"] for v in j2["vertices"]} == {3}


def test_savepoint_of_incremental_job_is_full(make_cluster, workdir):
    chk, sp = os.path.join(workdir, "chk"), os.path.join(workdir, "sp")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "state.checkpoints.dir": chk, "state.savepoints.dir": sp})
    c.add_tm(slots=2, extra=INC)
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, 100_000, 100, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2)
    r = c.cli("savepoint", jid, sp, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    spdir = re.search(r"file:(\S+)", r.stdout).group(1)
    md, refs, priv = shared_refs(spdir)
    assert md.get("is_savepoint") and not refs and not priv, (refs, priv)
    c.cli("cancel", jid, check=True)


def test_cancel_without_retention_leaves_no_shared_file(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "state.checkpoints.dir": chk,
                              "execution.checkpointing.externalized-checkpoint-retention":
                                  "DELETE_ON_CANCELLATION"})
    c.add_tm(slots=2, extra=INC)
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, 100_000, 1000, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    jobdir = os.path.join(chk, jid)
    assert os.listdir(os.path.join(jobdir, "shared"))
    assert c.get(f"/jobs/{jid}/checkpoints/config")["externalization"]["delete_on_cancellation"]
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    wait_for(lambda: os.listdir(jobdir) == [], timeout=10,
             what="the job's checkpoints and shared files removed")
