"""JobManager high availability against a real ZooKeeper ensemble.

A three-node ensemble (Debian's zookeeper package, zk_ensemble.py), three
JobManagers with high-availability.type zookeeper, three TaskManagers that
find the leader through ZooKeeper. The job: a seeded sequence 1..n through
a hash exchange into a keyed COUNT/SUM and the two-phase-commit file sink,
plus a second file sink fed straight from the source, checkpointing every
300 ms (test_checkpoints.agg_job). The committed output must hold every id
exactly once and the per-key COUNT/SUM worked out here.

- test_leader_killed_three_times: the leading JobManager is SIGKILLed three
  times while the job runs (each time once the job runs again on the new
  leader and has completed a checkpoint there); the killed one comes back
  as a standby. Prints the time from each kill to the job RUNNING again.
- test_zookeeper_node_killed: one ZooKeeper node is SIGKILLed mid-run, then
  the leader; the ensemble's majority carries on.
- test_zookeeper_quorum_lost_suspends_and_resumes: two of three nodes down
  within the session timeout: the leader is SUSPENDED (no checkpoint
  completes, the job keeps running), and resumes when they are back.
- test_paused_leader_is_fenced: the leader is SIGSTOPped past the session
  timeout, another JobManager takes over, then the old one gets SIGCONT:
  it must step down to standby without completing a checkpoint, deploying
  or writing _metadata, and the output stays exact.
- test_standby_rest_and_job_store: a standby answers REST with 503 and the
  leader's address, /sluice/ha says who leads; `sluice list` without -m finds
  the leader through ZooKeeper; a cancelled job leaves the
  high-availability store (its submitted graph is removed) and is not
  recovered by the next leader.
- test_rescaled_job_recovered_at_its_new_parallelism: a job rescaled 2 -> 4
  and the leader killed right after: the next leader runs it at 4, exactly.
"""
import glob
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BIN, Daemon, wait_for
from test_checkpoints import agg_job, apply_changelog, committed_files, expected_agg, raw_ids
from zk_ensemble import Ensemble, available

pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))

SESSION_TIMEOUT = "2 s"


class HACluster:
    def __init__(self, workdir, zk, njm=3, ntm=3, slots=2, jm_conf=None,
                 session_timeout=SESSION_TIMEOUT):
        import urllib.request  # noqa: F401  (the conftest helpers use it)
        self.workdir = workdir
        self.zk = zk
        self.ha = {
            "high-availability.type": "zookeeper",
            "high-availability.zookeeper.quorum": zk.quorum,
            "high-availability.cluster-id": "/test-cluster",
            "high-availability.storageDir": "file://" + os.path.join(workdir, "ha"),
            "high-availability.zookeeper.client.session-timeout": session_timeout,
            "high-availability.zookeeper.client.connection-timeout": "10 s",
            "heartbeat.interval": "200 ms",
            "heartbeat.timeout": "3 s",
        }
        self.jm_conf = {
            "rest.port": "0", "jobmanager.rpc.port": "0",
            "rest.address": "127.0.0.1", "jobmanager.rpc.address": "127.0.0.1",
            "slot.request.timeout": "60 s",
            "state.checkpoints.dir": os.path.join(workdir, "chk"),
            "execution.checkpointing.interval": "300 ms",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": "10",
            "restart-strategy.fixed-delay.delay": "200 ms",
        }
        self.jm_conf.update(jm_conf or {})
        self.jms = []   # every JobManager started, in order (dead ones stay listed)
        self.tms = []
        for _ in range(njm):
            self.start_jm()
        for i in range(ntm):
            self.add_tm(slots)

    def start_jm(self):
        name = f"jobmanager{len(self.jms)}"
        args = [os.path.join(BIN, "sluice-jobmanager")]
        for k, v in {**self.ha, **self.jm_conf}.items():
            args += ["-D", f"{k}={v}"]
        jm = Daemon(name, args, self.workdir)
        m = wait_for(lambda: re.search(r"RPC port (\d+), REST port (\d+)", jm.log_text())
                     or (not jm.alive() and "dead"), what=f"{name} start")
        assert m != "dead", f"{name} exited:\n" + jm.log_text()
        jm.rest_port = int(m.group(2))
        jm.url = f"http://127.0.0.1:{jm.rest_port}"
        self.jms.append(jm)
        return jm

    def add_tm(self, slots):
        name = f"taskmanager{len(self.tms)}"
        conf = {**self.ha, "taskmanager.numberOfTaskSlots": str(slots),
                "taskmanager.resource-id": f"tm-{len(self.tms)}"}
        args = [os.path.join(BIN, "sluice-taskmanager")]
        for k, v in conf.items():
            args += ["-D", f"{k}={v}"]
        tm = Daemon(name, args, self.workdir)
        tm.id = conf["taskmanager.resource-id"]
        self.tms.append(tm)
        return tm

    # --- REST ---
    def request(self, jm, method, path, body=None):
        import json
        import urllib.error
        import urllib.request
        data = None
        if body is not None:
            data = json.dumps(body).encode()
        req = urllib.request.Request(jm.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode("utf-8", "replace")
        except OSError as e:
            return None, str(e)

    def role(self, jm):
        if not jm.alive():
            return None
        status, body = self.request(jm, "GET", "/sluice/ha")
        if status != 200:
            return None
        return body["role"]

    def leader(self, timeout=60, exclude=()):
        def find():
            leaders = [jm for jm in self.jms if jm not in exclude and self.role(jm) == "LEADER"]
            return leaders[0] if len(leaders) == 1 else None
        return wait_for(find, timeout=timeout, interval=0.1, what="one leading JobManager")

    def get(self, path, jm=None):
        jm = jm or self.leader()
        status, body = self.request(jm, "GET", path)
        assert status == 200, f"GET {path} on {jm.name} -> {status} {body}"
        return body

    def job_state(self, jid, jm):
        status, body = self.request(jm, "GET", f"/jobs/{jid}")
        return body["state"] if status == 200 else None

    def wait_state(self, jid, states, jm, timeout=60):
        states = (states,) if isinstance(states, str) else tuple(states)
        return wait_for(lambda: self.job_state(jid, jm) in states and self.job_state(jid, jm),
                        timeout=timeout, interval=0.05, what=f"job {jid} {states} on {jm.name}")

    def completed(self, jid, jm):
        status, body = self.request(jm, "GET", f"/jobs/{jid}/checkpoints")
        return body["counts"]["completed"] if status == 200 else 0

    def shutdown(self):
        problems = []
        for d in self.tms + self.jms:
            try:
                os.kill(d.proc.pid, signal.SIGCONT)
            except OSError:
                pass
            if not d.alive() and d.proc.returncode not in (0, -9, -15):
                problems.append(f"{d.name} exited with {d.proc.returncode}")
            elif d.alive():
                rc = d.stop()
                if rc != 0:
                    problems.append(f"{d.name} exited with {rc} on SIGTERM")
            text = d.log_text()
            for marker in ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer"):
                if marker in text:
                    problems.append(f"{d.name}: {marker}\n{text[-4000:]}")
        return problems


@pytest.fixture
def zk(workdir):
    z = Ensemble(workdir, n=3)
    yield z
    z.stop()


@pytest.fixture
def ha_cluster(workdir, zk):
    made = []

    def make(**kw):
        c = HACluster(workdir, zk, **kw)
        made.append(c)
        return c

    yield make
    problems = []
    for c in made:
        problems += c.shutdown()
    assert not problems, "\n".join(problems)


def check_exact(out, raw, n, keys):
    ids = raw_ids(committed_files(raw))
    dup = {i: m for i, m in ids.items() if m != 1}
    missing = sorted(set(range(1, n + 1)) - set(ids))
    assert not dup and not missing and len(ids) == n, \
        f"duplicated {list(dup.items())[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)})"
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)


def submit(c, job):
    jm = c.leader()
    status, body = c.request(jm, "POST", "/jobs", job)
    assert status == 200, f"submit -> {status} {body}"
    return body["jobid"]


def kill_leader_and_wait(c, jid, restart=True):
    """SIGKILL the leader once the job runs there and has checkpointed; wait
    for the job to run on the next leader. Returns seconds from kill to RUNNING."""
    old = c.leader()
    c.wait_state(jid, "RUNNING", old)
    base = c.completed(jid, old)
    wait_for(lambda: c.completed(jid, old) > base, timeout=30, what="a checkpoint on the leader")
    t0 = time.monotonic()
    old.kill(signal.SIGKILL)
    new = c.leader(exclude=(old,))
    c.wait_state(jid, ["RUNNING", "FINISHED"], new, timeout=60)
    took = time.monotonic() - t0
    if restart:
        c.start_jm()  # back as a standby
    return took


def test_leader_killed_three_times(ha_cluster, workdir):
    c = ha_cluster(njm=3, ntm=3)
    n, keys = 24000, 16
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = submit(c, agg_job(out, raw, n, keys, rate=1200, p=3))
    times = []
    for _ in range(3):
        times.append(kill_leader_and_wait(c, jid))
    print("\nHA failover: leader SIGKILL -> job RUNNING again: " +
          ", ".join(f"{t:.2f} s" for t in times) +
          f" (session timeout {SESSION_TIMEOUT})")
    leader = c.leader()
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], leader, timeout=120)
    assert job == "FINISHED", c.get(f"/jobs/{jid}/exceptions", leader)
    check_exact(out, raw, n, keys)
    cp = c.get(f"/jobs/{jid}/checkpoints", leader)
    assert cp["latest"]["restored"] is not None and cp["latest"]["restored"]["is_savepoint"] is False
    # a finished job leaves the high-availability store
    wait_for(lambda: not os.path.exists(os.path.join(
        workdir, "ha", "test-cluster", f"submittedJobGraph-{jid}.json")),
        what="the finished job's graph to leave storageDir")


def test_zookeeper_node_killed(ha_cluster, workdir, zk):
    c = ha_cluster(njm=2, ntm=3)
    n, keys = 12000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = submit(c, agg_job(out, raw, n, keys, rate=1200, p=3))
    leader = c.leader()
    c.wait_state(jid, "RUNNING", leader)
    wait_for(lambda: c.completed(jid, leader) >= 2, timeout=30, what="checkpoints")
    # the ensemble's own leader: every client's server may change
    zk_leader = [i for i in range(zk.n) if zk.mode(i) == "leader"][0]
    zk.kill(zk_leader)
    took = kill_leader_and_wait(c, jid, restart=False)
    print(f"\nHA failover with a ZooKeeper node down: {took:.2f} s")
    leader = c.leader()
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], leader, timeout=120)
    assert job == "FINISHED", c.get(f"/jobs/{jid}/exceptions", leader)
    check_exact(out, raw, n, keys)


def test_zookeeper_quorum_lost_suspends_and_resumes(ha_cluster, workdir, zk):
    """Two of three ZooKeeper nodes down (no quorum) for less than the
    session timeout: the leader stays leader but SUSPENDED, the job keeps
    RUNNING and completes no checkpoint; with the nodes back it resumes,
    checkpoints again and finishes with exact output."""
    c = ha_cluster(njm=2, ntm=3, session_timeout="30 s")
    n, keys = 12000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = submit(c, agg_job(out, raw, n, keys, rate=800, p=3))
    leader = c.leader()
    c.wait_state(jid, "RUNNING", leader)
    wait_for(lambda: c.completed(jid, leader) >= 2, timeout=30, what="checkpoints")
    zk.kill(0)
    zk.kill(1)
    wait_for(lambda: c.role(leader) == "SUSPENDED", timeout=30, what="the leader to suspend")
    base = c.completed(jid, leader)
    # a window of several checkpoint intervals (300 ms): none may complete
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        assert c.job_state(jid, leader) == "RUNNING"
        assert c.completed(jid, leader) == base, "a checkpoint completed without ZooKeeper"
        time.sleep(0.1)
    assert "ZooKeeper connection suspended" in leader.log_text()
    zk.start(0, wait=False)
    zk.start(1, wait=False)
    wait_for(lambda: c.role(leader) == "LEADER", timeout=60, what="the leader to resume")
    wait_for(lambda: c.completed(jid, leader) > base, timeout=30, what="checkpoints to resume")
    assert "ZooKeeper connection resumed" in leader.log_text()
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], leader, timeout=120)
    assert job == "FINISHED", c.get(f"/jobs/{jid}/exceptions", leader)
    check_exact(out, raw, n, keys)


def test_paused_leader_is_fenced(ha_cluster, workdir):
    c = ha_cluster(njm=2, ntm=3)
    n, keys = 16000, 12
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = submit(c, agg_job(out, raw, n, keys, rate=1200, p=3))
    old = c.leader()
    c.wait_state(jid, "RUNNING", old)
    wait_for(lambda: c.completed(jid, old) >= 2, timeout=30, what="checkpoints")
    os.kill(old.proc.pid, signal.SIGSTOP)
    try:
        new = c.leader(exclude=(old,))
        c.wait_state(jid, "RUNNING", new, timeout=60)
        base = c.completed(jid, new)
        wait_for(lambda: c.completed(jid, new) > base, timeout=30, what="a checkpoint on the new leader")
        mark = len(old.log_text())
    finally:
        os.kill(old.proc.pid, signal.SIGCONT)
    wait_for(lambda: c.role(old) in ("STANDBY", "CONNECTING"), timeout=30,
             what="the paused leader to step down")
    after = old.log_text()[mark:]
    assert "lost its leadership" in after, after
    for bad in ("Completed checkpoint", "to RUNNING", "Triggering checkpoint"):
        assert bad not in after, f"the deposed leader did '{bad}' after SIGCONT:\n{after}"
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], new, timeout=120)
    assert job == "FINISHED", c.get(f"/jobs/{jid}/exceptions", new)
    check_exact(out, raw, n, keys)
    assert c.role(old) == "STANDBY"


def test_standby_rest_and_job_store(ha_cluster, workdir):
    c = ha_cluster(njm=2, ntm=1, slots=1)
    leader = c.leader()
    standby = [jm for jm in c.jms if jm is not leader][0]
    wait_for(lambda: c.role(standby) == "STANDBY", what="a standby")
    # the standby learns the leader's address from ZooKeeper (a watch)
    conf = wait_for(lambda: (lambda h: h["leader-rest-url"] == leader.url and h)(
        c.get("/sluice/ha", standby)), what="the standby to know the leader")
    assert conf["rest-url"] == standby.url and conf["zookeeper-connected"] is True, conf
    status, body = c.request(standby, "GET", "/overview")
    assert status == 503 and body["leader-rest-url"] == leader.url, (status, body)
    assert "leader election" in body["errors"][0]
    job = {"name": "endless", "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
         "config": {"rows-per-second": "10"}},
        {"id": "s", "type": "blackhole"}],
        "edges": [{"from": "g", "to": "s", "strategy": "forward"}]}
    jid = submit(c, job)
    c.wait_state(jid, "RUNNING", leader)
    graph = os.path.join(workdir, "ha", "test-cluster", f"submittedJobGraph-{jid}.json")
    assert os.path.exists(graph)
    # the CLI without -m finds the leader through ZooKeeper
    args = [os.path.join(BIN, "sluice")]
    for k, v in c.ha.items():
        args += ["-D", f"{k}={v}"]
    r = subprocess.run(args + ["list"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and jid in r.stdout, (r.returncode, r.stdout, r.stderr)
    status, _ = c.request(leader, "PATCH", f"/jobs/{jid}?mode=cancel")
    assert status == 202, status
    c.wait_state(jid, "CANCELED", leader)
    wait_for(lambda: not os.path.exists(graph), what="the cancelled job to leave storageDir")
    leader.kill(signal.SIGKILL)
    new = c.leader(exclude=(leader,))
    # the new leader recovers nothing: the cancelled job stays gone
    assert c.get("/jobs/overview", new)["jobs"] == []


def test_c_job_recovered_with_its_object(ha_cluster, workdir):
    """A C job run from POST /jars/:id/run: its object is written to
    storageDir with the graph, so a new leader can ship it again; the
    SilenceDetector's GAPs after a leader SIGKILL equal the uninterrupted
    replay (test_datastream's model)."""
    import urllib.request
    import uuid
    from test_datastream import JOB as SILENCE, ms, read, replay
    c = ha_cluster(njm=2, ntm=2, jm_conf={"web.upload.dir": os.path.join(workdir, "uploads")})
    leader = c.leader()
    boundary = uuid.uuid4().hex
    with open(SILENCE, "rb") as f:
        data = f.read()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"jarfile\"; "
            f"filename=\"silence.so\"\r\nContent-Type: application/x-sharedlib\r\n\r\n").encode() + \
        data + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(leader.url + "/jars/upload", data=body, method="POST",
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        jar = os.path.basename(json.loads(r.read())["filename"])
    n, out = 160000, os.path.join(workdir, "out")
    status, ans = c.request(leader, "POST", f"/jars/{jar}/run",
                            {"programArgsList": [out, str(n)], "parallelism": 2})
    assert status == 200, ans
    jid = ans["jobid"]
    libs = glob.glob(os.path.join(workdir, "ha", "test-cluster", f"submittedJobLib-{jid}-*.so"))
    assert len(libs) == 1 and open(libs[0], "rb").read() == data
    kill_leader_and_wait(c, jid, restart=False)
    new = c.leader(exclude=(leader,))
    assert c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], new, timeout=120) == "FINISHED", \
        c.get(f"/jobs/{jid}/exceptions", new)
    assert c.get(f"/jobs/{jid}/checkpoints", new)["latest"]["restored"] is not None
    gaps, _, _ = replay(n)
    assert sorted((g["sensor"], ms(g["deadline"])) for g in read(out, "gaps")) == sorted(gaps)
    wait_for(lambda: not glob.glob(os.path.join(workdir, "ha", "test-cluster", "submittedJobLib-*")),
             what="the finished job's object to leave storageDir")


def test_rescaled_job_recovered_at_its_new_parallelism(ha_cluster, workdir):
    """A job rescaled 2 -> 4 through the leader, then the leader SIGKILLed at
    once, before any checkpoint at the new parallelism: the next leader runs it
    at 4 from the rescale's savepoint, and the output is still exact."""
    c = ha_cluster(njm=2, ntm=2, slots=2)
    n, keys = 16000, 16
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = submit(c, agg_job(out, raw, n, keys, rate=1000, p=2))
    old = c.leader()
    c.wait_state(jid, "RUNNING", old)
    wait_for(lambda: c.completed(jid, old) > 0, timeout=30, what="a checkpoint")
    body = {v["id"]: {"parallelism": {"lowerBound": 4, "upperBound": 4}}
            for v in c.get(f"/jobs/{jid}", old)["vertices"]}
    assert c.request(old, "PUT", f"/jobs/{jid}/resource-requirements", body) == (200, {})
    wait_for(lambda: c.get(f"/jobs/{jid}/rescales/history", old)[0]["terminalState"] == "COMPLETED",
             timeout=30, what="the rescale")
    old.kill(signal.SIGKILL)
    new = c.leader(exclude=(old,))
    c.wait_state(jid, ["RUNNING", "FINISHED"], new, timeout=60)
    assert {v["parallelism"] for v in c.get(f"/jobs/{jid}", new)["vertices"]} == {4}
    restored = c.get(f"/jobs/{jid}/checkpoints", new)["latest"]["restored"]
    assert restored is not None
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], new, timeout=120)
    assert job == "FINISHED", c.get(f"/jobs/{jid}/exceptions", new)
    check_exact(out, raw, n, keys)
