"""A damaged snapshot never restores in silence; failed checkpoints leave
nothing behind.

- Two subtasks' .state files of a savepoint swapped: each file records its
  job, uid and subtask, so the restore is refused (REST 400) with a
  message naming the file, what it holds and the file _metadata gives for
  that; no job is created. The CLI's `run -s` says the same. Put back, the
  savepoint restores and the job runs.
- Checkpoints that expire (a 1 ms timeout) while their subtasks still
  write: every failed checkpoint's directory is removed, also when files
  arrive after the failure and when the job is cancelled with one in
  progress; only the retained completed checkpoint stays.
"""
import os
import re

from conftest import wait_for
from test_checkpoints import agg_job, checkpoints, read_metadata
from test_savepoints import NO_PERIODIC, stop_with_savepoint, wait_progress, write_job


def test_swapped_state_files_are_refused(make_cluster, workdir):
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2)
    n, keys = 40_000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = agg_job(out, raw, n, keys, rate=2000, p=2)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_progress(c, jid, 2000)
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    md = read_metadata(sp)
    agg = next(op for op in md["operators"] if op["uid"] == "agg")
    files = {s["subtask"]: s["file"] for s in agg["subtasks"]}
    assert files == {0: "agg-0.state", 1: "agg-1.state"}, files
    a, b = (os.path.join(sp, files[i]) for i in (0, 1))
    os.rename(a, a + ".x")
    os.rename(b, a)
    os.rename(a + ".x", b)
    jobs_before = len(c.get("/jobs")["jobs"])

    # _metadata lists agg's subtasks in acknowledgement order: the first
    # one checked is the first listed
    first = agg["subtasks"][0]["subtask"]
    other = 1 - first
    want = (f"cannot restore from savepoint 'file:{sp}': state file {sp}/agg-{first}.state holds "
            f"the state of operator 'agg' subtask {other}, but _metadata gives it as the state of "
            f"operator 'agg' subtask {first} (and names agg-{other}.state for what this file "
            f"holds): the snapshot's files do not match its _metadata (moved or swapped); "
            f"refusing to restore")
    status, body = c.request("POST", f"/jobs?savepointPath=file:{sp}", job)
    assert status == 400, (status, body)
    assert want in str(body), body
    jf = write_job(workdir, "job.json", job)
    r = c.cli("run", "-d", "-s", f"file:{sp}", jf)
    assert r.returncode == 1 and r.stdout == "" and want in r.stderr, r.stderr
    assert len(c.get("/jobs")["jobs"]) == jobs_before

    # put back, it restores
    os.rename(a, a + ".x")
    os.rename(b, a)
    os.rename(a + ".x", b)
    status, body = c.request("POST", f"/jobs?savepointPath=file:{sp}", job)
    assert status == 200, body
    jid2 = body["jobid"]
    c.wait_state(jid2, "RUNNING", timeout=20)
    c.cli("cancel", jid2, check=True)
    c.wait_state(jid2, "CANCELED", timeout=20)


def test_failed_checkpoints_leave_no_directories(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "100 ms",
                              "execution.checkpointing.timeout": "1 ms",
                              "execution.checkpointing.tolerable-failed-checkpoints": "1000000",
                              "state.checkpoints.dir": chk})
    c.add_tm(slots=2)
    jid = c.submit(agg_job(os.path.join(workdir, "out"), os.path.join(workdir, "raw"), 1_000_000,
                           10, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: checkpoints(c, jid)["counts"]["failed"] >= 5, timeout=30,
             what="five failed checkpoints")
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    cp = checkpoints(c, jid)
    assert cp["counts"]["failed"] >= 5, cp["counts"]
    failed = [h for h in cp["history"] if h["status"] == "FAILED"]
    assert failed and all(re.match(r"Checkpoint expired before completing|the job's tasks stopped",
                                   h["failure_message"]) for h in failed), failed
    # an expired one names the subtasks it still waited for
    expired = [h["failure_message"] for h in failed if h["failure_message"].startswith("Checkpoint expired")]
    assert expired and all(re.fullmatch(
        r"Checkpoint expired before completing \(timeout \d+ ms, (\d+) of (\d+) subtasks acknowledged; "
        r"not acknowledged: [^()]+ \(\d/2\)(, [^()]+ \(\d/2\))*( and \d+ more)?\)", m) for m in expired), expired
    # some may complete within the tick; the newest completed one is retained
    # (num-retained 1), every other directory goes
    latest = cp["latest"]["completed"]
    want = [f"chk-{latest['id']}"] if latest else []
    job_dir = os.path.join(chk, jid)
    wait_for(lambda: (sorted(os.listdir(job_dir)) if os.path.isdir(job_dir) else []) == want,
             timeout=20, what=f"only {want} left in {job_dir}")
