"""Shared test fixtures: real Sluice daemons on loopback with ephemeral ports.

A `Cluster` starts a JobManager (RPC and REST on port 0; the ports are read
from its log) and any number of TaskManagers, and offers small helpers to
call the REST API, run the CLI and wait for conditions. Binaries come from
$SLUICE_BUILD (default build/), so the same tests run against the sanitized
build (build-san/).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("SLUICE_BUILD", "build"))
BIN = os.path.join(BUILD, "bin")
# Leaks inside third-party libraries that no change of ours can free
# (tests/lsan.supp says which and why); inherited by every process started.
os.environ.setdefault("LSAN_OPTIONS", "suppressions=" + os.path.join(ROOT, "tests", "lsan.supp")
                      + ":print_suppressions=0")


# ---- parallel runs ------------------------------------------------------------
# scripts/run-tests.sh runs the suite on several pytest-xdist workers with
# `--dist loadgroup`: every test is its own unit of work, except the modules
# below, whose tests share state from test to test (one browser gathering the
# console of every page for the last test; one compose cluster serving the
# tests in order; the sampling storm's totals over every stormed test, checked
# by its last test) and so run in order on one worker.
SERIAL_MODULES = {"test_dashboard.py": "dashboard", "test_docker.py": "docker",
                  "test_sampling_storm.py": "storm", "test_sampling_storm_kafka.py": "storm"}
# The longest modules first (the Docker image build, the fuzz targets' clang
# build, the Kafka broker tests, the ZooKeeper ensembles, ...), so that no
# worker picks a long one up at the end while the others idle; the many short
# C unit tests come last and fill the gaps. Within a module the order stays.
LONG_FIRST = ["test_docker.py", "test_flink_oracle.py", "test_fuzz.py", "test_kafka.py", "test_ha.py", "test_faults.py",
              "test_dashboard.py", "test_flink_cli.py", "test_bench_smoke.py"]
SHORT_LAST = ["test_unit.py"]


def storm_reruns(config, items):
    """The tests the sampling-storm modules import and run again under the
    storm, when this run includes the storm (the optimised half: the storm
    is release_only): their plain runs in the same half are left out. Each
    such test still runs in both halves -- stormed against the optimised
    build, plain against the sanitized one -- with the same assertions; a
    run of one module alone (no storm collected) keeps all of its tests."""
    if "release_only" in (config.getoption("markexpr", "") or ""):
        return []
    stormed = {id(item.function) for item in items if item.path.name in SERIAL_MODULES
               and SERIAL_MODULES[item.path.name] == "storm"}
    return [item for item in items if id(getattr(item, "function", None)) in stormed
            and SERIAL_MODULES.get(item.path.name) != "storm"]


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups in the node ids
def pytest_collection_modifyitems(config, items):
    plain = storm_reruns(config, items)
    if plain:
        gone = set(map(id, plain))
        items[:] = [item for item in items if id(item) not in gone]
        config.hook.pytest_deselected(items=plain)
    for item in items:
        group = SERIAL_MODULES.get(item.path.name)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))

    def rank(item):
        name = item.path.name
        if name in LONG_FIRST:
            return LONG_FIRST.index(name)
        return len(LONG_FIRST) + 1 if name in SHORT_LAST else len(LONG_FIRST)
    items.sort(key=rank)  # stable


def failover_conf(chk=None, interval="300 ms"):
    """JobManager settings of a job that checkpoints every `interval` (into
    `chk` when given) and restarts up to three times, 200 ms apart: what the
    tests that kill a TaskManager mid-job run with."""
    conf = {"execution.checkpointing.interval": interval}
    if chk:
        conf["state.checkpoints.dir"] = chk
    conf.update({"restart-strategy.type": "fixed-delay",
                 "restart-strategy.fixed-delay.attempts": "3",
                 "restart-strategy.fixed-delay.delay": "200 ms"})
    return conf


def wait_for(cond, timeout=20.0, interval=0.05, what="condition"):
    """Poll cond() until it returns a truthy value; return that value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Daemon:
    def __init__(self, name, args, workdir, env=None):
        self.name = name
        self.log_path = os.path.join(workdir, name + ".log")
        self.out_path = os.path.join(workdir, name + ".out")
        self.log = open(self.log_path, "wb")
        self.out = open(self.out_path, "wb")
        e = dict(os.environ)
        e.pop("SLUICE_PROPERTIES", None)
        e.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        e.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        if env:
            e.update(env)
        self.proc = subprocess.Popen(args, stdout=self.out, stderr=self.log, cwd=workdir, env=e)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def out_text(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def alive(self):
        return self.proc.poll() is None

    def kill(self, sig=signal.SIGKILL):
        if self.alive():
            self.proc.send_signal(sig)
        self.proc.wait(timeout=30)

    def stop(self):
        """SIGTERM and wait; returns the exit status."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"{self.name} did not stop on SIGTERM")
        self.log.close()
        self.out.close()
        return self.proc.returncode


# The clusters a test has started and not yet shut down: a failed test's
# report ends with the tail of each of their daemons' logs (what the
# JobManager and TaskManagers said is what a CI failure needs most).
LIVE_CLUSTERS = []
LOG_TAIL = 6000


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "teardown":
        LIVE_CLUSTERS.clear()  # a cluster whose start failed is never shut down
    if rep.when != "call" or not rep.failed:
        return
    for c in LIVE_CLUSTERS:
        for d in [getattr(c, "jm", None)] + c.tms:
            if d is None:
                continue
            try:
                text = d.log_text()
            except OSError as e:
                text = f"(log unreadable: {e})"
            rep.sections.append((f"{d.name} log (last {LOG_TAIL} chars)", text[-LOG_TAIL:]))


class Cluster:
    def __init__(self, workdir, jm_conf=None):
        LIVE_CLUSTERS.append(self)
        self.workdir = workdir
        self.tms = []
        conf = {
            "rest.port": "0",
            "jobmanager.rpc.port": "0",
            "heartbeat.interval": "200 ms",
            "heartbeat.timeout": "2 s",
            "slot.request.timeout": "30 s",
            "state.checkpoints.dir": os.path.join(workdir, "checkpoints"),
            "state.savepoints.dir": os.path.join(workdir, "savepoints"),
            # tests name savepoint targets and restore paths anywhere in their
            # scratch directory; the REST API refuses paths outside these roots
            "rest.allowed-dirs": workdir,
        }
        conf.update(jm_conf or {})
        self.conf = conf
        args = [os.path.join(BIN, "sluice-jobmanager")]
        for k, v in conf.items():
            args += ["-D", f"{k}={v}"]
        self.jm = Daemon("jobmanager", args, workdir)
        m = wait_for(lambda: re.search(r"RPC port (\d+), REST port (\d+)", self.jm.log_text())
                     or (not self.jm.alive() and "dead"), what="JobManager start")
        assert m != "dead", "JobManager exited:\n" + self.jm.log_text()
        self.rpc_port = int(m.group(1))
        self.rest_port = int(m.group(2))
        self.url = f"http://127.0.0.1:{self.rest_port}"

    def add_tm(self, slots=1, extra=None, wait=True):
        name = f"taskmanager{len(self.tms)}"
        conf = {
            "jobmanager.rpc.address": "127.0.0.1",
            "jobmanager.rpc.port": str(self.rpc_port),
            "taskmanager.numberOfTaskSlots": str(slots),
            "heartbeat.interval": "200 ms",
            "taskmanager.resource-id": f"tm-{len(self.tms)}",
        }
        conf.update(extra or {})
        args = [os.path.join(BIN, "sluice-taskmanager")]
        for k, v in conf.items():
            args += ["-D", f"{k}={v}"]
        tm = Daemon(name, args, self.workdir)
        tm.id = conf["taskmanager.resource-id"]
        self.tms.append(tm)
        if wait:
            wait_for(lambda: any(t["id"] == tm.id for t in self.get("/taskmanagers")["taskmanagers"]),
                     what=f"{tm.id} to register")
        return tm

    # --- REST ---
    def request(self, method, path, body=None, headers=None, timeout=30):
        """A REST call; mutating ones go as application/json (the JobManager
        refuses any other Content-Type) unless headers say otherwise."""
        headers = dict(headers or {})
        if method not in ("GET", "HEAD"):
            headers.setdefault("Content-Type", "application/json")
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            if isinstance(data, str):
                data = data.encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode("utf-8", "replace")

    def get(self, path):
        status, body = self.request("GET", path)
        assert status == 200, f"GET {path} -> {status} {body}"
        return body

    def submit(self, job, parallelism=None):
        path = "/jobs" + (f"?parallelism={parallelism}" if parallelism else "")
        status, body = self.request("POST", path, job)
        assert status == 200, f"submit -> {status} {body}"
        return body["jobid"]

    def job(self, jid):
        return self.get(f"/jobs/{jid}")

    def wait_state(self, jid, states, timeout=60):
        states = (states,) if isinstance(states, str) else tuple(states)
        return wait_for(lambda: self.job(jid)["state"] in states and self.job(jid),
                        timeout=timeout, what=f"job {jid} to reach {states}")

    def records_written(self, jid, prefix):
        """write-records of the job's vertices whose name starts with prefix."""
        return sum(v["metrics"].get("write-records", 0) for v in self.job(jid)["vertices"]
                   if v["name"].startswith(prefix))

    def stop_after_progress(self, jid, prefix, at_least, target, timeout=60):
        """Once the job runs and its vertices named prefix... have written
        at_least records, stop it with a savepoint into target (a directory)
        and await FINISHED; returns the savepoint's path."""
        self.wait_state(jid, "RUNNING", timeout=30)
        wait_for(lambda: self.records_written(jid, prefix) >= at_least, timeout=timeout,
                 what="the source to make progress")
        r = self.cli("stop", "--savepoint", "file://" + target, jid, timeout=90)
        assert r.returncode == 0, r.stdout + r.stderr
        sp = re.search(r"Savepoint completed\. Path: (\S+)", r.stdout).group(1)
        job = self.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
        assert job["state"] == "FINISHED", self.get(f"/jobs/{jid}/exceptions")
        return sp

    def cli(self, *args, check=False, timeout=120):
        cmd = [os.path.join(BIN, "sluice"), "-m", f"127.0.0.1:{self.rest_port}"] + list(args)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.workdir)
        if check:
            assert r.returncode == 0, f"{cmd} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
        return r

    def shutdown(self):
        """Stop every daemon with SIGTERM; a crash or sanitizer report fails the test."""
        if self in LIVE_CLUSTERS:
            LIVE_CLUSTERS.remove(self)
        problems = []
        for d in self.tms + [self.jm]:
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
def workdir():
    d = tempfile.mkdtemp(prefix="sluice-test-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def cluster(workdir):
    c = Cluster(workdir)
    yield c
    problems = c.shutdown()
    assert not problems, "\n".join(problems)


@pytest.fixture
def make_cluster(workdir):
    made = []

    def make(**kw):
        c = Cluster(workdir, **kw)
        made.append(c)
        return c

    yield make
    problems = []
    for c in made:
        problems += c.shutdown()
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def pg():
    """A PostgreSQL server of its own for a test module (tests/pgserver.py):
    Debian's postgresql, started in a temporary directory and stopped after
    the module's tests."""
    import pgserver
    assert pgserver.available(), "PostgreSQL is not installed (scripts/install-deps.sh)"
    server = pgserver.PgServer()
    yield server
    server.stop()
