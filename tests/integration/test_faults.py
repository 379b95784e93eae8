"""Faults a bad day brings, against real daemons.

- The 20-kill burst: three TaskManagers run an exactly-once job (a seeded
  sequence source, a keyed COUNT/SUM and two two-phase-commit file sinks,
  checkpointing every 200 ms); 20 times in a row a TaskManager picked by a
  seeded generator is SIGKILLed and a replacement added -- most kills once
  the job runs again, every third one only 0.2 s after the one before, in
  the middle of the recovery. The job finishes; every id is in the raw
  sink exactly once and the aggregate's changelog adds up to the per-key
  COUNT/SUM worked out here. On both state backends.
- A full disk under the checkpoint directory (a 1 MiB tmpfs mounted for the
  test, filled up): checkpoints fail with "No space left on device" in
  their failure_message while the job goes on running (the failures are
  tolerated); once space is freed checkpoints complete again, and the job
  finishes with exact output. Needs root to mount; skipped otherwise.
"""
import os
import random
import shutil
import signal
import subprocess
import time

import pytest

from conftest import wait_for
from test_checkpoints import (agg_job, apply_changelog, checkpoints, committed_files,
                              expected_agg, raw_ids)


def exact_output(out, raw, n, keys):
    ids = raw_ids(committed_files(raw))
    dup = {i: m for i, m in ids.items() if m != 1}
    missing = sorted(set(range(1, n + 1)) - set(ids))
    assert not dup and not missing and len(ids) == n, \
        f"duplicated {list(dup.items())[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)})"
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)


def all_running(c, jid):
    job = c.job(jid)
    return job["state"] == "RUNNING" and all(
        v["status"] == "RUNNING" or v["status"] == "FINISHED" for v in job["vertices"])


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_twenty_kills_in_a_row(make_cluster, workdir, backend):
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "restart-strategy.type": "fixed-delay",
                              "restart-strategy.fixed-delay.attempts": "1000",
                              "restart-strategy.fixed-delay.delay": "50 ms"})
    extra = {"state.backend.type": backend}
    for _ in range(3):
        c.add_tm(slots=2, extra=extra)
    n, keys = 30000, 20  # 2000 rows/s: 15 s of input
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    rng = random.Random(18)
    killed = []
    for i in range(20):
        if i % 3 == 2:
            time.sleep(0.2)  # in the middle of the recovery from the kill before
        else:
            wait_for(lambda: all_running(c, jid) or c.job(jid)["state"] == "FINISHED",
                     timeout=30, what=f"the job running again before kill {i + 1}")
        live = [t for t in c.tms if t.alive()]
        victim = rng.choice(live)
        victim.kill(signal.SIGKILL)
        killed.append(victim.id)
        c.add_tm(slots=2, extra=extra)
    assert len(killed) == 20 and len({t.id for t in c.tms if t.alive()}) == 3
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert job["timestamps"]["RESTARTING"] > 0, job["timestamps"]
    exact_output(out, raw, n, keys)


# ---- a full disk ----------------------------------------------------------------


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for a full disk ({r.stderr.strip() or r.returncode}); "
                    "needs root or CAP_SYS_ADMIN")


def fill(path):
    """Write into path until the file system is full; returns the file."""
    filler = os.path.join(path, "filler")
    with open(filler, "wb", buffering=0) as f:
        block = b"\0" * 4096
        try:
            while True:
                f.write(block)
        except OSError:
            pass
    return filler


def test_disk_full_fails_checkpoints_not_the_job(make_cluster, workdir):
    chk = os.path.join(workdir, "small")
    mount_tmpfs(chk, "1m")
    try:
        c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                                  "execution.checkpointing.tolerable-failed-checkpoints": "1000",
                                  "state.checkpoints.dir": chk})
        c.add_tm(slots=2)
        c.add_tm(slots=2)
        n, keys = 24000, 20  # 2000 rows/s: 12 s
        out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
        jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
        c.wait_state(jid, "RUNNING", timeout=20)
        wait_for(lambda: checkpoints(c, jid)["counts"]["completed"] >= 1, timeout=20,
                 what="a first completed checkpoint")
        filler = fill(chk)

        def failed_for_space():
            f = checkpoints(c, jid)["latest"]["failed"]
            return f and "No space left on device" in (f.get("failure_message") or "") and f
        failed = wait_for(failed_for_space, timeout=20, what="a checkpoint failed for space")
        # a few more fail the same way; the job is not touched
        wait_for(lambda: checkpoints(c, jid)["counts"]["failed"] >= 3, timeout=20,
                 what="three failed checkpoints")
        job = c.job(jid)
        assert job["state"] == "RUNNING" and job["timestamps"]["RESTARTING"] == 0, job
        completed_before = checkpoints(c, jid)["counts"]["completed"]

        os.unlink(filler)
        wait_for(lambda: checkpoints(c, jid)["counts"]["completed"] >= completed_before + 2,
                 timeout=20, what="checkpoints completing again once space is freed")
        job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
        assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
        assert job["timestamps"]["RESTARTING"] == 0, job["timestamps"]
        assert c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"] == []
        exact_output(out, raw, n, keys)
        # failed checkpoints leave no directories behind
        left = sorted(os.listdir(os.path.join(chk, jid)))
        assert all(d.startswith("chk-") for d in left), left
        assert f"chk-{failed['id']}" not in left, (failed["id"], left)
    finally:
        subprocess.run(["umount", "-l", chk], capture_output=True)
        shutil.rmtree(chk, ignore_errors=True)
