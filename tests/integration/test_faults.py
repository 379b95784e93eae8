"""Faults a bad day brings, against real daemons.

- The 20-kill burst: three TaskManagers run an exactly-once job (a seeded
  sequence source, a keyed COUNT/SUM and two two-phase-commit file sinks,
  checkpointing every 200 ms); 20 times in a row a TaskManager picked by a
  seeded generator is SIGKILLed and a replacement added -- most kills once
  the job runs again, every third one only 0.2 s after the one before, in
  the middle of the recovery. The job finishes; every id is in the raw
  sink exactly once and the aggregate's changelog adds up to the per-key
  COUNT/SUM worked out here. On both state backends.
- The restart strategy left unset: with checkpointing on, a SIGKILLed
  TaskManager makes the job restart (exponential-delay, Flink's defaults:
  the first restart 1 s +- 10 % later) on a second TaskManager and finish
  with exact output; with checkpointing off the same kill fails the job.
- A full disk under the checkpoint directory (a 1 MiB tmpfs mounted for the
  test, filled up): checkpoints fail with "No space left on device" in
  their failure_message while the job goes on running (the failures are
  tolerated); once space is freed checkpoints complete again, and the job
  finishes with exact output. Needs root to mount; skipped otherwise.
- A network partition: one TaskManager runs in its own network namespace,
  joined to the host by a veth pair; mid-run the pair is set down, cutting
  it off from the JobManager and its peers with no reset sent. Both sides
  find out by silence: the JobManager fails its tasks at heartbeat.timeout
  and the job restarts on the two TaskManagers left, the cut-off one
  cancels its tasks at its own heartbeat.timeout. The job finishes with
  exact output; the link set up again, the TaskManager registers again.
  Needs root for `ip netns`; skipped otherwise.
"""
import os
import random
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import BIN, Daemon, wait_for
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


# ---- the restart strategy nobody configured -------------------------------------


@pytest.mark.parametrize("checkpointing", [True, False])
def test_unset_restart_strategy_follows_checkpointing(make_cluster, workdir, checkpointing):
    """restart-strategy.type left unset, as Flink 1.19+/2.x: a job with
    checkpointing gets exponential-delay with Flink's defaults (first restart
    after 1 s +- 10 %, attempts unlimited), one without gets none. A SIGKILLed
    TaskManager, a second one with free slots standing by: with checkpointing
    the job restarts there and finishes with every id once and the exact
    per-key COUNT/SUM; without it the job fails and never restarts."""
    conf = {"execution.checkpointing.interval": "200 ms"} if checkpointing else {}
    c = make_cluster(jm_conf=conf)
    first = c.add_tm(slots=2)
    n, keys = 20000, 10  # 2000 rows/s: 10 s of input
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: all_running(c, jid), timeout=20, what="every task running")
    strategy = "exponential-delay" if checkpointing else "none"
    assert c.get(f"/jobs/{jid}/config")["execution-config"]["restart-strategy"] == strategy
    jm_conf = {e["key"]: e["value"] for e in c.get("/jobmanager/config")}
    assert jm_conf["restart-strategy.type"] == ""  # not set: the job's strategy follows checkpointing
    if checkpointing:
        wait_for(lambda: checkpoints(c, jid)["counts"]["completed"] >= 1, timeout=20,
                 what="a completed checkpoint")
    c.add_tm(slots=2)  # every task is on the first one; this one has room for them all
    assert c.job(jid)["state"] == "RUNNING"
    first.kill(signal.SIGKILL)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    log = c.jm.log_text()
    if not checkpointing:
        assert job["state"] == "FAILED", job
        assert job["timestamps"]["RESTARTING"] == 0, job["timestamps"]
        assert "restarts (attempt" not in log
        return
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert job["timestamps"]["RESTARTING"] > 0, job["timestamps"]
    # Flink's exponential-delay defaults: initial-backoff 1 s, jitter-factor
    # 0.1, attempts-before-reset-backoff Integer.MAX_VALUE
    m = re.search(r"restarts \(attempt 1 of (\d+)\) in (\d+) ms", log)
    assert m, log
    assert int(m.group(1)) == 2**31 - 1 and 900 <= int(m.group(2)) <= 1100, m.group(0)
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


# ---- a network partition ------------------------------------------------------------


def sh(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def test_partitioned_taskmanager_is_replaced_and_rejoins(make_cluster, workdir):
    # names and a /30 of this process's own: parallel workers and other runs
    # on the machine may do the same at the same time
    pid = os.getpid()
    ns, host_if, ns_if = f"slpart{pid}", f"slh{pid}", f"sln{pid}"
    net = 4 * (pid % 16384)  # one of the 16384 /30s in 10.213.0.0/16
    host_ip, ns_ip = f"10.213.{net // 256}.{net % 256 + 1}", f"10.213.{net // 256}.{net % 256 + 2}"
    r = sh("ip", "netns", "add", ns)
    if r.returncode != 0:
        pytest.skip(f"cannot make a network namespace ({r.stderr.strip()}); needs root")
    try:
        for cmd in (["ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if],
                    ["ip", "link", "set", ns_if, "netns", ns],
                    ["ip", "addr", "add", f"{host_ip}/30", "dev", host_if],
                    ["ip", "link", "set", host_if, "up"],
                    ["ip", "netns", "exec", ns, "ip", "addr", "add", f"{ns_ip}/30", "dev", ns_if],
                    ["ip", "netns", "exec", ns, "ip", "link", "set", ns_if, "up"],
                    ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]):
            r = sh(*cmd)
            assert r.returncode == 0, (cmd, r.stderr)
        c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                                  "heartbeat.timeout": "1500 ms",
                                  "restart-strategy.type": "fixed-delay",
                                  "restart-strategy.fixed-delay.attempts": "10",
                                  "restart-strategy.fixed-delay.delay": "100 ms"})
        # every TaskManager reaches the JobManager and its peers over the veth
        # address, so the one in the namespace can reach them and they it
        hb = {"heartbeat.timeout": "1500 ms", "jobmanager.rpc.address": host_ip}
        conf = {"jobmanager.rpc.port": str(c.rpc_port), "taskmanager.numberOfTaskSlots": "1",
                "heartbeat.interval": "200 ms", "taskmanager.resource-id": "tm-cut", **hb}
        args = ["ip", "netns", "exec", ns, os.path.join(BIN, "sluice-taskmanager")]
        for k, v in conf.items():
            args += ["-D", f"{k}={v}"]
        cut = Daemon("taskmanager-cut", args, workdir)
        cut.id = "tm-cut"
        c.tms.append(cut)
        wait_for(lambda: any(t["id"] == "tm-cut" for t in c.get("/taskmanagers")["taskmanagers"]),
                 what="tm-cut to register from its namespace")
        c.add_tm(slots=2, extra={**hb, "taskmanager.host": host_ip})
        n, keys = 16000, 20  # 2000 rows/s: 8 s
        out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
        jid = c.submit(agg_job(out, raw, n, keys, rate=2000, p=3))
        c.wait_state(jid, "RUNNING", timeout=20)
        c.add_tm(slots=2, extra={**hb, "taskmanager.host": host_ip})  # room to recover in
        subs = c.get(f"/sluice/jobs/{jid}/vertices/{c.job(jid)['vertices'][0]['id']}/subtasks")["subtasks"]
        assert "tm-cut" in {s["taskmanager-id"] for s in subs}, subs
        wait_for(lambda: checkpoints(c, jid)["counts"]["completed"] >= 2, timeout=20,
                 what="two completed checkpoints")

        assert sh("ip", "link", "set", host_if, "down").returncode == 0
        wait_for(lambda: "lost the JobManager (no answer to heartbeats" in cut.log_text(),
                 timeout=10, what="the cut-off TaskManager to cancel its tasks")
        wait_for(lambda: all(t["id"] != "tm-cut" for t in c.get("/taskmanagers")["taskmanagers"]),
                 timeout=10, what="the JobManager to give tm-cut up")
        job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
        assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
        assert job["timestamps"]["RESTARTING"] > 0, job["timestamps"]
        exc = c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
        assert any("tm-cut" in str(e) for e in exc), exc
        exact_output(out, raw, n, keys)

        assert sh("ip", "link", "set", host_if, "up").returncode == 0
        wait_for(lambda: any(t["id"] == "tm-cut" for t in c.get("/taskmanagers")["taskmanagers"]),
                 timeout=30, what="tm-cut to register again once the partition healed")
    finally:
        sh("ip", "link", "del", host_if)
        sh("ip", "netns", "del", ns)
