"""The JobManager's threads, restart policy, job store and configuration checks.

- 200 REST clients, each on its own keep-alive connection, send a mix of
  GETs (/overview, /jobs/overview, /jobs/:id, /jobs/:id/checkpoints) and a
  few savepoint triggers for 20 s against a JobManager whose jobs
  checkpoint every 200 ms; meanwhile the test stops one job with a
  savepoint and SIGKILLs the TaskManager of the other. Every request is
  answered with a status its route allows and a body of the right shape,
  each well within a generous bound (no deadlock); afterwards the stopped
  job is FINISHED with its savepoint on disk, the other has restarted on
  the surviving TaskManager and completes checkpoints again.
- 300 short bounded jobs with jobstore.max-capacity 10: /jobs/overview holds
  exactly the 10 newest finished jobs, the first ones are gone (404), and
  the JobManager's VmRSS after the last 100 jobs is within a small fixed
  margin of its VmRSS after the first 100.
- restart-strategy exponential-delay with jitter 0: a job whose checkpoints
  always fail restarts with backoffs 100, 200, 400, 800 and 1000 ms (capped
  by max-backoff), then fails once attempts-before-reset-backoff is used up;
  when failures come further apart than reset-backoff-threshold, every
  restart starts again at the initial backoff and attempt 1.
- heartbeat.timeout not larger than heartbeat.interval, and
  max-concurrent-checkpoints above 1, stop both daemons at start-up with a
  message naming the keys.
- The state backend shown is the one the TaskManagers use: per TaskManager,
  for a job (its TaskManager's), and in /jobmanager/config -- not the
  JobManager's own state.backend.type; a garbled name from a registration
  is shown as "unknown".
- pipeline.auto-watermark-interval is written into watermark operators that
  set no interval (as the checkpoint's _metadata records the job).
"""
import http.client
import json
import os
import random
import re
import socket
import struct
import subprocess
import threading
import time

import pytest

from conftest import BIN, wait_for
from test_checkpoints import agg_job, checkpoints, read_metadata, wait_completed


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def task_manager_of(c, jid):
    """The TaskManager id that runs subtask 0 of the job's first vertex."""
    v = c.job(jid)["vertices"][0]["id"]
    subs = c.get(f"/sluice/jobs/{jid}/vertices/{v}/subtasks")["subtasks"]
    return subs[0]["taskmanager-id"]


# ---- 200 clients ----------------------------------------------------------------------

ANSWER_BOUND_S = 15.0  # generous: a request never waits behind a lock, only behind the loop


class Client(threading.Thread):
    def __init__(self, port, seed, jobs, stop):
        super().__init__(daemon=True)
        self.port, self.rng, self.jobs, self.stop_event = port, random.Random(seed), jobs, stop
        self.done = 0
        self.problems = []
        self.slowest = 0.0

    def pick(self):
        a, b = self.jobs
        r = self.rng.random()
        if r < 0.02:  # a few savepoint triggers, on the job that is never stopped
            return "POST", f"/jobs/{b}/savepoints", {}
        paths = ["/overview", "/jobs/overview", f"/jobs/{a}", f"/jobs/{b}",
                 f"/jobs/{a}/checkpoints", f"/jobs/{b}/checkpoints"]
        return "GET", self.rng.choice(paths), None

    def check(self, method, path, status, body):
        if method == "POST":
            if status == 202:
                return isinstance(body.get("request-id"), str)
            # not RUNNING (restarting) or a savepoint still in progress
            return status == 409 and body["errors"][0].startswith("cannot take a savepoint: ")
        if status != 200:
            return False
        if path == "/overview":
            return "taskmanagers" in body and "slots-total" in body
        if path == "/jobs/overview":
            return isinstance(body.get("jobs"), list)
        if path.endswith("/checkpoints"):
            return "counts" in body and "history" in body
        return body.get("jid") == path.split("/")[2]

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        while not self.stop_event.is_set():
            method, path, body = self.pick()
            t0 = time.monotonic()
            try:
                data = json.dumps(body) if body is not None else None
                conn.request(method, path, body=data,
                             headers={} if method == "GET" else {"Content-Type": "application/json"})
                r = conn.getresponse()
                raw = r.read()
                status = r.status
                parsed = json.loads(raw)
            except Exception as e:  # noqa: BLE001 - every failure is a finding
                self.problems.append(f"{method} {path}: {type(e).__name__}: {e}")
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                continue
            elapsed = time.monotonic() - t0
            self.slowest = max(self.slowest, elapsed)
            if not self.check(method, path, status, parsed):
                self.problems.append(f"{method} {path} -> {status} {raw[:200]!r}")
            self.done += 1
        conn.close()


def test_200_rest_clients_during_checkpoints_stop_and_taskmanager_kill(make_cluster, workdir):
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "restart-strategy.type": "fixed-delay",
                              "restart-strategy.fixed-delay.attempts": "100",
                              "restart-strategy.fixed-delay.delay": "200 ms"})
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    jobs = []
    for name in ("a", "b"):
        jid = c.submit(agg_job(os.path.join(workdir, "out-" + name), os.path.join(workdir, "raw-" + name),
                               10**9, 10, rate=500, p=1, name="stress " + name))
        jobs.append(jid)
    a, b = jobs
    for jid in jobs:
        c.wait_state(jid, "RUNNING")
        wait_completed(c, jid, 1)
    tm_a, tm_b = task_manager_of(c, a), task_manager_of(c, b)
    assert tm_a != tm_b  # spread: each TaskManager had the most free slots in turn

    stop = threading.Event()
    clients = [Client(c.rest_port, seed, jobs, stop) for seed in range(200)]
    t0 = time.monotonic()
    for cl in clients:
        cl.start()
    # stop-with-savepoint of a while the clients run (the CLI has its own connection)
    target = os.path.join(workdir, "stopped")
    r = c.cli("stop", "--savepoint", target, a, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"Savepoint completed\. Path: file:(\S+)", r.stdout)
    assert m, r.stdout
    assert os.path.isfile(os.path.join(m.group(1), "_metadata"))
    # then kill b's TaskManager
    victim = next(t for t in c.tms if t.id == tm_b)
    victim.kill()
    restarted = wait_for(lambda: (lambda j: j["timestamps"]["RESTARTING"] > 0 and j["state"] == "RUNNING"
                                  and j)(c.job(b)), timeout=20, what="b to restart")
    assert restarted
    time.sleep(max(0.0, 20.0 - (time.monotonic() - t0)))  # the clients' 20 s, not a condition
    stop.set()
    for cl in clients:
        cl.join(timeout=ANSWER_BOUND_S + 60)
    assert all(not cl.is_alive() for cl in clients), "a client never got its answer"
    problems = [p for cl in clients for p in cl.problems]
    assert problems == [], problems[:20]
    assert all(cl.done > 0 for cl in clients)
    slowest = max(cl.slowest for cl in clients)
    print(f"{sum(cl.done for cl in clients)} requests answered, slowest {slowest:.3f} s")
    assert slowest < ANSWER_BOUND_S, slowest

    # the cluster still serves
    assert c.job(a)["state"] == "FINISHED"
    ov = c.get("/overview")
    assert ov["taskmanagers"] == 1 and ov["slots-total"] == 2
    assert [t["id"] for t in c.get("/taskmanagers")["taskmanagers"]] == [tm_a]
    assert task_manager_of(c, b) == tm_a
    before = checkpoints(c, b)["counts"]["completed"]
    wait_completed(c, b, before + 2)
    status, body = c.request("PATCH", f"/jobs/{b}?mode=cancel")
    assert status == 202, body
    assert c.wait_state(b, ["CANCELED", "FAILED", "FINISHED"])["state"] == "CANCELED"


# ---- job store ------------------------------------------------------------------------


def short_job(i):
    return {"name": f"short {i}", "parallelism": 1,
            "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}],
                          "config": {"number-of-rows": "5"}},
                         {"id": "s", "type": "blackhole"}],
            "edges": [{"from": "g", "to": "s"}]}


def test_finished_jobs_are_evicted_and_memory_stays_flat(make_cluster, monkeypatch):
    # ASan's quarantine would keep freed memory resident: measure the allocator, not it
    monkeypatch.setenv("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0:quarantine_size_mb=0")
    cap = 10
    c = make_cluster(jm_conf={"jobstore.max-capacity": str(cap)})
    c.add_tm(slots=4)
    pid = c.jm.proc.pid
    ids = []
    rss = {}
    wave = 4
    for start in range(0, 300, wave):
        batch = [c.submit(short_job(i)) for i in range(start, start + wave)]
        for jid in batch:
            assert c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"])["state"] == "FINISHED"
        ids += batch
        if len(ids) in (100, 200, 300):
            rss[len(ids)] = rss_kb(pid)
    # eviction runs on the JobManager's 20 ms tick: the newest job may still be one too many
    finished = wait_for(lambda: (lambda f: len(f) == cap and f)(
        [j for j in c.get("/jobs/overview")["jobs"] if j["state"] == "FINISHED"]),
        what=f"{cap} finished jobs in the store")
    assert [j["jid"] for j in finished] == list(reversed(ids[-cap:]))  # newest first
    assert [j["id"] for j in c.get("/jobs")["jobs"]] == list(reversed(ids[-cap:]))
    for jid in ids[:-cap]:
        status, _ = c.request("GET", f"/jobs/{jid}")
        assert status == 404
    assert c.get("/overview")["jobs-finished"] == cap
    assert c.jm.log_text().count("leaves the job store (jobstore.max-capacity)") == 300 - cap
    # without eviction 200 more jobs add about 1,300 kB (optimised build); ASan's
    # allocator settles more slowly (about 750 kB over the same 200 jobs with eviction)
    print("VmRSS kB after 100/200/300 jobs:", rss)
    # ASan's allocator keeps its own pools (and moves with the machine's load:
    # 450 to 1,400 kB over these 200 jobs in sanitized runs); the figure is
    # the optimised build's
    if "san" not in os.environ.get("SLUICE_BUILD", ""):
        assert rss[300] <= rss[100] + 512, rss


# ---- exponential-delay ----------------------------------------------------------------


def test_exponential_delay_backoff_grows_until_attempts_are_used(make_cluster, workdir):
    blocker = os.path.join(workdir, "a-file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    p = "restart-strategy.exponential-delay."
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "100 ms",
                              "execution.checkpointing.tolerable-failed-checkpoints": "0",
                              "state.checkpoints.dir": os.path.join(blocker, "chk"),
                              "restart-strategy.type": "exponential-delay",
                              p + "initial-backoff": "100 ms",
                              p + "max-backoff": "1 s",
                              p + "backoff-multiplier": "2",
                              p + "jitter-factor": "0",
                              p + "attempts-before-reset-backoff": "5"})
    c.add_tm(slots=2)
    jid = c.submit(agg_job(os.path.join(workdir, "out"), os.path.join(workdir, "raw"), 10**9, 10,
                           rate=1000, p=1))
    job = c.wait_state(jid, ["FAILED", "FINISHED", "CANCELED"], timeout=60)
    assert job["state"] == "FAILED"
    why = c.get(f"/sluice/jobs/{jid}")["state-reason"]
    assert why.endswith("(restart attempts exhausted: 5)"), why
    log = c.jm.log_text()
    delays = [(int(a), int(n), int(d)) for a, n, d in
              re.findall(r"restarts \(attempt (\d+) of (\d+)\) in (\d+) ms", log)]
    assert delays == [(1, 5, 100), (2, 5, 200), (3, 5, 400), (4, 5, 800), (5, 5, 1000)], delays
    metrics = c.get(f"/jobs/{jid}/metrics?get=numRestarts")
    assert metrics == [{"id": "numRestarts", "value": "5"}]
    assert checkpoints(c, jid)["counts"]["failed"] == 6  # one per deployment


def test_exponential_delay_backoff_resets_after_the_threshold(make_cluster, workdir):
    """Checkpoints every second that always fail: each failure comes at least a
    second after the job was deployed, longer than reset-backoff-threshold
    (500 ms), so every restart starts over at the initial backoff and attempt 1,
    and the job never runs out of attempts."""
    blocker = os.path.join(workdir, "a-file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    p = "restart-strategy.exponential-delay."
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 s",
                              "execution.checkpointing.tolerable-failed-checkpoints": "0",
                              "state.checkpoints.dir": os.path.join(blocker, "chk"),
                              "restart-strategy.type": "exponential-delay",
                              p + "initial-backoff": "100 ms",
                              p + "backoff-multiplier": "2",
                              p + "jitter-factor": "0",
                              p + "reset-backoff-threshold": "500 ms",
                              p + "attempts-before-reset-backoff": "2"})
    c.add_tm(slots=2)
    jid = c.submit(agg_job(os.path.join(workdir, "out"), os.path.join(workdir, "raw"), 10**9, 10,
                           rate=1000, p=1))
    pattern = r"restarts \(attempt (\d+) of (\d+)\) in (\d+) ms"
    found = wait_for(lambda: (lambda d: len(d) >= 4 and d)(re.findall(pattern, c.jm.log_text())),
                     timeout=60, what="four restarts")
    assert found[:4] == [("1", "2", "100")] * 4, found
    assert c.job(jid)["state"] in ("RUNNING", "RESTARTING", "CREATED")
    status, body = c.request("PATCH", f"/jobs/{jid}?mode=cancel")
    assert status == 202, body
    assert c.wait_state(jid, ["CANCELED", "FAILED"])["state"] == "CANCELED"


# ---- start-up checks ------------------------------------------------------------------


@pytest.mark.parametrize("daemon", ["sluice-jobmanager", "sluice-taskmanager"])
@pytest.mark.parametrize("interval,timeout", [("10 s", "5 s"), ("2 s", "2000 ms")])
def test_heartbeat_timeout_not_above_interval_is_refused(workdir, daemon, interval, timeout):
    r = subprocess.run([os.path.join(BIN, daemon), "-D", f"heartbeat.interval={interval}",
                        "-D", f"heartbeat.timeout={timeout}", "-D", "rest.port=0",
                        "-D", "jobmanager.rpc.port=0"],
                       capture_output=True, text=True, timeout=30, cwd=workdir)
    assert r.returncode == 2, r.stderr
    ms = {"10 s": 10000, "5 s": 5000, "2 s": 2000, "2000 ms": 2000}
    assert r.stderr == (f"{daemon}: heartbeat.timeout ({ms[timeout]} ms) must be larger than "
                        f"heartbeat.interval ({ms[interval]} ms): a peer would be declared lost "
                        "between two heartbeats\n")


def test_more_than_one_concurrent_checkpoint_is_refused(workdir):
    r = subprocess.run([os.path.join(BIN, "sluice-jobmanager"),
                        "-D", "execution.checkpointing.max-concurrent-checkpoints=3"],
                       capture_output=True, text=True, timeout=30, cwd=workdir)
    assert r.returncode == 2
    assert r.stderr == ("sluice-jobmanager: execution.checkpointing.max-concurrent-checkpoints: 3 "
                        "is not supported: Sluice runs one checkpoint at a time (set it to 1)\n")


# ---- state backend --------------------------------------------------------------------


def test_reported_state_backend_is_the_taskmanagers(make_cluster, workdir):
    c = make_cluster(jm_conf={"state.backend.type": "hashmap",
                              "execution.checkpointing.interval": "200 ms"})
    conf = {k["key"]: k["value"] for k in c.get("/jobmanager/config")}
    assert conf["state.backend.type"] == ""  # no TaskManager yet: nothing to report
    c.add_tm(slots=1, extra={"state.backend.type": "rocksdb"})
    c.add_tm(slots=1, extra={"state.backend.type": "hashmap"})
    tms = {t["id"]: t["stateBackend"] for t in c.get("/sluice/taskmanagers")["taskmanagers"]}
    assert tms == {"tm-0": "rocksdb", "tm-1": "hashmap"}
    conf = {k["key"]: k["value"] for k in c.get("/jobmanager/config")}
    assert conf["state.backend.type"] == "rocksdb,hashmap"
    jid = c.submit(agg_job(os.path.join(workdir, "out"), os.path.join(workdir, "raw"), 10**9, 10,
                           rate=200, p=1))
    c.wait_state(jid, "RUNNING")
    where = task_manager_of(c, jid)
    expected = {"tm-0": "rocksdb", "tm-1": "hashmap"}[where]
    assert c.get(f"/jobs/{jid}/checkpoints/config")["state_backend"] == expected
    assert c.get(f"/sluice/jobs/{jid}")["state-backend"] == expected
    wait_completed(c, jid, 1)
    status, body = c.request("PATCH", f"/jobs/{jid}?mode=cancel")
    assert status == 202, body
    c.wait_state(jid, "CANCELED")


# ---- pipeline.auto-watermark-interval -------------------------------------------------


def test_auto_watermark_interval_is_the_watermark_operators_default(make_cluster, workdir):
    """The job the TaskManagers plan (the one _metadata records) carries the
    configured interval for the watermark that sets none, and its own for the other."""
    c = make_cluster(jm_conf={"pipeline.auto-watermark-interval": "50 ms",
                              "execution.checkpointing.interval": "200 ms",
                              # the checkpoint read below must outlive the next ones
                              "state.checkpoints.num-retained": "1000"})
    c.add_tm(slots=1)
    ts = "TO_TIMESTAMP_LTZ(1700000000000 + id * 10, 3) AS ts"
    job = {"name": "watermarks", "parallelism": 1,
           "vertices": [{"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
                         "config": {"rows-per-second": "100", "fields.id.kind": "sequence",
                                    "fields.id.start": "1", "fields.id.end": "1000000000"}},
                        {"id": "ev", "type": "calc", "config": {"projection": ["id", ts]}},
                        {"id": "wm1", "type": "watermark", "config": {"column": "ts"}},
                        {"id": "wm2", "type": "watermark",
                         "config": {"column": "ts", "interval": "300 ms"}},
                        {"id": "out", "type": "blackhole"}],
           "edges": [{"from": "gen", "to": "ev"}, {"from": "ev", "to": "wm1"},
                     {"from": "wm1", "to": "wm2"}, {"from": "wm2", "to": "out"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")
    cp = wait_completed(c, jid, 1)["latest"]["completed"]
    md = read_metadata(cp["external_path"][len("file:"):])
    graph = json.loads(md["graph_json"])
    config = {v["id"]: v["config"] for v in graph["vertices"]}
    assert config["wm1"] == {"column": "ts", "interval": "50 ms"}
    assert config["wm2"] == {"column": "ts", "interval": "300 ms"}
    status, body = c.request("PATCH", f"/jobs/{jid}?mode=cancel")
    assert status == 202, body
    c.wait_state(jid, "CANCELED")


def _pb_varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _pb_field(num, value):
    if isinstance(value, int):
        return _pb_varint(num << 3) + _pb_varint(value)
    return _pb_varint(num << 3 | 2) + _pb_varint(len(value)) + value


def _frame(envelope_field, body):
    msg = _pb_field(envelope_field, body)
    return struct.pack(">I", len(msg)) + msg


def test_a_garbled_state_backend_name_is_shown_as_unknown(cluster):
    """A registration is outside input: a backend name that is not a plain
    word (here invalid UTF-8 and markup) is reported as 'unknown'."""
    s = socket.create_connection(("127.0.0.1", cluster.rpc_port))
    try:
        s.sendall(_frame(1, _pb_field(1, 1) + _pb_field(2, b"taskmanager")))
        reg = (_pb_field(1, b"fake-tm") + _pb_field(2, b"127.0.0.1") + _pb_field(3, 9)
               + _pb_field(4, 1) + _pb_field(9, b"\xff<b>rocks</b>"))
        s.sendall(_frame(2, reg))
        tms = wait_for(lambda: (lambda t: t and t)(
            [t for t in cluster.get("/sluice/taskmanagers")["taskmanagers"] if t["id"] == "fake-tm"]),
            what="fake-tm to register")
        assert tms[0]["stateBackend"] == "unknown"
    finally:
        s.close()
    assert cluster.jm.alive()
