"""A damaged snapshot never restores in silence.

- Two subtasks' .state files of a savepoint swapped: each file records its
  job, uid and subtask, so the restore is refused (REST 400) with a
  message naming the file, what it holds and the file _metadata gives for
  that; no job is created. The CLI's `run -s` says the same. Put back, the
  savepoint restores and the job runs.
"""
import os

from test_checkpoints import agg_job, read_metadata
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
