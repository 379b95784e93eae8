"""The compose cluster end to end: Sluice in containers, driven from the host.

The image is built by tests/docker/run.sh (which first makes the Debian base
images with debootstrap when no registry can provide them) unless the caller
says it already did (SLUICE_DOCKER_IMAGE_BUILT=1, as run.sh does when it runs
this file). One cluster -- the shipped docker-compose.yml with two
TaskManagers of two slots, under a unique project name, its dashboard on a
random free host port -- serves every test here in order; it is removed with
its volumes at the end, also when a test fails. The compose tool is the
plugin (`docker compose`) when present, else the standalone `docker-compose`.

Scenarios: both TaskManagers register and turn healthy; a keyed job spread
over both containers writes exactly the rows computed here into the shared
volume; the demo job submitted with curl from the host prints to the
TaskManagers' logs and shows in `sluice list` run inside the JobManager's
container; stop-with-savepoint and restore at a higher parallelism; a
TaskManager killed with `docker kill` is noticed within the heartbeat timeout
and the job recovers from its checkpoint; scaling up adds TaskManagers. Every
step has a time limit; nothing waits forever.

docker-compose.s3.yml runs too, with its S3 service built from
deploy/s3/Dockerfile (this machine's CA certificates put in deploy/s3/ca/, as
a site behind an HTTPS proxy would): a killed TaskManager's job recovers from
its checkpoint on S3, and a job stopped with a savepoint on S3 restores at
parallelism 1, every row exactly once.
"""
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tarfile
import time
import urllib.error
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A tag of this run's own, so that runs at the same time never test each
# other's build; removed at the end unless the caller named the image.
IMAGE_GIVEN = os.environ.get("SLUICE_IMAGE")
IMAGE = IMAGE_GIVEN or f"sluice:test-{os.getpid()}"
REPORTS = os.path.join(ROOT, "build", "test-reports")

pytestmark = pytest.mark.release_only

HEARTBEAT_TIMEOUT_S = 5
CHECKPOINT_INTERVAL_S = 1
# Lines every daemon gets on top of the compose file's SLUICE_PROPERTIES.
EXTRA_PROPERTIES = "\n".join([
    "heartbeat.interval: 500 ms",
    f"heartbeat.timeout: {HEARTBEAT_TIMEOUT_S} s",
    f"execution.checkpointing.interval: {CHECKPOINT_INTERVAL_S} s",
    "restart-strategy.type: fixed-delay",
    "restart-strategy.fixed-delay.attempts: 5",
    "restart-strategy.fixed-delay.delay: 1 s",
    "slot.request.timeout: 60 s",
])
TEST_TIME_LIMIT_S = 300      # any single test
BUILD_TIME_LIMIT_S = 2400    # base images + docker build, first run


def wait_for(cond, timeout, what, interval=0.25):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, timeout, check=True, **kw):
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{' '.join(cmd)} did not finish within {timeout}s")
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} -> exit {r.returncode}\n"
                             f"{r.stdout.decode(errors='replace')[-3000:]}\n"
                             f"{r.stderr.decode(errors='replace')[-3000:]}")
    return r


def compose_tools():
    """Every compose command this machine has, the plugin first."""
    tools = []
    forced = os.environ.get("SLUICE_COMPOSE")
    candidates = [forced.split()] if forced else [["docker", "compose"], ["docker-compose"]]
    for c in candidates:
        if shutil.which(c[0]) is None:
            continue
        try:
            r = subprocess.run(c + ["version"], capture_output=True, timeout=30)
        except subprocess.TimeoutExpired:
            continue
        if r.returncode == 0:
            tools.append(c)
    return tools


@pytest.fixture(autouse=True)
def time_limit():
    """Fail (never hang) a test that runs longer than TEST_TIME_LIMIT_S."""
    def on_alarm(signum, frame):
        raise AssertionError(f"test exceeded its time limit of {TEST_TIME_LIMIT_S}s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_TIME_LIMIT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def image():
    """The Sluice image, built here unless run.sh already did. Docker that
    cannot work on this machine is a failure with its reason, not a skip."""
    if shutil.which("docker") is None:
        pytest.fail("docker is not installed: the Docker test needs a Docker engine")
    r = run(["docker", "info"], timeout=60, check=False)
    if r.returncode != 0:
        pytest.fail("the Docker engine does not answer: " + r.stderr.decode(errors="replace")[-500:])
    if os.environ.get("SLUICE_DOCKER_IMAGE_BUILT") != "1":
        env = dict(os.environ, SLUICE_IMAGE=IMAGE)
        r = run([os.path.join(ROOT, "tests", "docker", "run.sh"), "build"], check=False,
                timeout=BUILD_TIME_LIMIT_S, env=env, cwd=ROOT)
        if r.returncode != 0:
            pytest.fail("building the image failed:\n" + r.stderr.decode(errors="replace")[-4000:])
    run(["docker", "image", "inspect", IMAGE], timeout=60)
    yield IMAGE
    if not IMAGE_GIVEN:
        run(["docker", "rmi", IMAGE], timeout=120, check=False)


class ComposeCluster:
    def __init__(self, tool, image_tag, compose_file="docker-compose.yml", env=None):
        self.tool = tool
        self.file = compose_file
        self.project = f"sluice-test-{os.getpid()}-{secrets.token_hex(3)}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, SLUICE_IMAGE=image_tag, SLUICE_REST_PORT=str(self.port),
                        SLUICE_REST_HOST="127.0.0.1", SLUICE_EXTRA_PROPERTIES=EXTRA_PROPERTIES)
        self.env.pop("SLUICE_PROPERTIES", None)
        self.env.update(env or {})

    def compose(self, *args, timeout=180, check=True, input=None):
        cmd = self.tool + ["-p", self.project, "-f", os.path.join(ROOT, self.file)] + list(args)
        return run(cmd, timeout=timeout, check=check, env=self.env, cwd=ROOT, input=input)

    def exec(self, service, *cmd, timeout=120, check=True, input=None):
        r = self.compose("exec", "-T", service, *cmd, timeout=timeout, check=check, input=input)
        return r

    def containers(self, service):
        out = self.compose("ps", "-q", service, timeout=60).stdout.decode()
        return [c for c in out.split() if c]

    def running_containers(self, service):
        ids = self.containers(service)
        if not ids:
            return []
        out = run(["docker", "inspect", "-f", "{{.Id}} {{.State.Running}}"] + ids, timeout=60,
                  check=False).stdout.decode()
        return [line.split()[0] for line in out.splitlines() if line.endswith(" true")]

    def health(self, container):
        r = run(["docker", "inspect", "-f", "{{if .State.Health}}{{.State.Health.Status}}{{end}}",
                 container], timeout=60, check=False)
        return r.stdout.decode().strip()

    # --- REST from the host ---
    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={} if method == "GET" else {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw = r.read()
                ctype = r.headers.get("Content-Type", "")
                return r.status, (json.loads(raw) if raw and "json" in ctype else raw)
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

    def try_get(self, path):
        try:
            status, body = self.request("GET", path)
        except (OSError, ValueError):
            return None
        return body if status == 200 else None

    def tm_ids(self):
        body = self.try_get("/taskmanagers")
        return sorted(t["id"] for t in body["taskmanagers"]) if body else []

    def job(self, jid):
        return self.get(f"/jobs/{jid}")

    def wait_state(self, jid, states, timeout=120):
        states = (states,) if isinstance(states, str) else tuple(states)
        return wait_for(lambda: (lambda j: j["state"] in states and j)(self.job(jid)),
                        timeout, f"job {jid} to reach {states}")

    def submit_with_curl(self, job_file):
        """POST the job file from the host exactly as a user would."""
        r = run(["curl", "-sS", "--max-time", "30", "-X", "POST", "-H", "Content-Type: application/json",
                 f"localhost:{self.port}/jobs", "-d", "@" + job_file], timeout=60, cwd=ROOT)
        body = json.loads(r.stdout)
        assert "jobid" in body, body
        return body["jobid"]

    def cli(self, *args, timeout=180, check=False, input=None):
        """The sluice CLI inside the JobManager's container."""
        r = self.exec("jobmanager", "sluice", *args, timeout=timeout, check=check, input=input)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    def read_output(self, directory):
        """The committed part files of a file sink under /data: {name: [rows]}.
        Hidden, in-progress and pending files are not output yet."""
        r = self.exec("jobmanager", "tar", "-C", directory, "-c", ".", timeout=120)
        files = {}
        with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tf:
            for m in tf.getmembers():
                name = os.path.basename(m.name)
                if not m.isfile() or not name.startswith("part-"):
                    continue
                if any(w in name for w in ("inprogress", "in-progress", "pending", ".tmp")):
                    continue
                text = tf.extractfile(m).read().decode()
                files[name] = [json.loads(line) for line in text.splitlines() if line.strip()]
        return files

    def put_file(self, path, text):
        self.exec("jobmanager", "sh", "-c", f"mkdir -p \"$(dirname '{path}')\" && cat > '{path}'",
                  input=text.encode())

    def logs(self, *services):
        r = self.compose("logs", "--no-color", *services, timeout=120, check=False)
        return r.stdout.decode(errors="replace")

    def down(self):
        r = self.compose("down", "-v", "--remove-orphans", "-t", "5", timeout=180, check=False)
        if r.returncode != 0:
            # last resort: whatever carries this project's label
            label = f"label=com.docker.compose.project={self.project}"
            for ls, rm in ((["docker", "ps", "-aq"], ["docker", "rm", "-f"]),
                           (["docker", "volume", "ls", "-q"], ["docker", "volume", "rm", "-f"]),
                           (["docker", "network", "ls", "-q"], ["docker", "network", "rm"])):
                ids = run(ls + ["--filter", label], timeout=60, check=False).stdout.decode().split()
                if ids:
                    run(rm + ids, timeout=120, check=False)


@pytest.fixture(scope="module")
def tools():
    t = compose_tools()
    if not t:
        pytest.fail("neither `docker compose` nor `docker-compose` works on this machine")
    return t


@pytest.fixture(scope="module")
def cluster(image, tools):
    c = ComposeCluster(tools[0], image)
    try:
        c.compose("up", "-d", "--no-build", "--scale", "taskmanager=2", timeout=300)
        wait_for(lambda: len(c.tm_ids()) == 2, 120, "two TaskManagers to register")
        yield c
    finally:
        os.makedirs(REPORTS, exist_ok=True)
        with open(os.path.join(REPORTS, f"docker-{c.project}.log"), "w") as f:
            f.write(c.logs())
        c.down()


def expected_keyed_rows(n):
    """What the keyed job must write, computed here: ids 1..n not divisible
    by 3, with k = id % 100 and v = 3 * id."""
    return sorted((i, i % 100, 3 * i) for i in range(1, n + 1) if i % 3 != 0)


def keyed_job(outdir, n, rate, p=2, name="keyed across containers"):
    return {
        "name": name, "parallelism": p,
        "vertices": [
            {"id": "gen", "uid": "gen", "type": "datagen",
             "schema": [{"name": "id", "type": "BIGINT"}],
             "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                        "fields.id.start": "1", "fields.id.end": str(n)}},
            {"id": "calc", "uid": "calc", "type": "calc",
             "config": {"projection": ["id", "id % 100 AS k", "id * 3 AS v"],
                        "filter": "id % 3 <> 0"}},
            {"id": "out", "uid": "out", "type": "file", "config": {"path": outdir, "format": "json"}}],
        "edges": [{"from": "gen", "to": "calc", "strategy": "forward"},
                  {"from": "calc", "to": "out", "strategy": "hash", "keys": ["k"]}]}


def rows_of(files):
    return sorted((r["id"], r["k"], r["v"]) for rows in files.values() for r in rows)


def write_job(tmp_path, job):
    path = os.path.join(str(tmp_path), "job.json")
    with open(path, "w") as f:
        json.dump(job, f)
    return path


# ---------------------------------------------------------------------------


@pytest.mark.parametrize("compose_file", ["docker-compose.yml", "docker-compose.ha.yml",
                                          "docker-compose.s3.yml"])
def test_compose_file_is_accepted_by_every_installed_tool(tools, compose_file):
    for tool in tools:
        r = run(tool + ["-f", os.path.join(ROOT, compose_file), "config", "-q"],
                timeout=60, check=False, cwd=ROOT)
        assert r.returncode == 0, f"{' '.join(tool)} rejects {compose_file}: {r.stderr.decode()}"


def test_taskmanagers_register_from_two_containers_and_turn_healthy(cluster):
    tms = cluster.get("/taskmanagers")["taskmanagers"]
    containers = cluster.containers("taskmanager")
    assert len(containers) == 2
    # a TaskManager's default id starts with its container's hostname (the short id)
    assert sorted(t["id"].split(":")[0] for t in tms) == sorted(c[:12] for c in containers)
    assert len({t["path"] for t in tms}) == 2, tms  # two addresses: two containers
    assert [t["slotsNumber"] for t in tms] == [2, 2]
    ov = cluster.get("/overview")
    assert (ov["taskmanagers"], ov["slots-total"]) == (2, 4)
    every = cluster.containers("jobmanager") + containers
    wait_for(lambda: all(cluster.health(c) == "healthy" for c in every), 90,
             "every container to be healthy")
    # the dashboard is served on the published port
    status, page = cluster.request("GET", "/")
    assert status == 200 and b"<html" in page.lower() and b"sluice" in page.lower()


def test_keyed_job_across_two_containers_writes_exactly_the_expected_rows(cluster, tmp_path):
    n = 30000
    out = f"/data/{cluster.project}/keyed"
    jid = cluster.submit_with_curl(write_job(tmp_path, keyed_job(out, n, rate=1000000)))
    job = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"])
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    files = cluster.read_output(out)
    assert rows_of(files) == expected_keyed_rows(n)
    # hash exchange: every key was written by exactly one sink subtask, and both wrote
    owners = {}
    for name, rows in files.items():
        for r in rows:
            owners.setdefault(r["k"], set()).add(name)
    assert all(len(o) == 1 for o in owners.values()), "a key reached two sink subtasks"
    assert len({next(iter(o)) for o in owners.values()}) == 2, sorted(files)
    # each parallel vertex ran one subtask in each container
    tm_ids = cluster.tm_ids()
    for v in job["vertices"]:
        subs = cluster.get(f"/sluice/jobs/{jid}/vertices/{v['id']}/subtasks")["subtasks"]
        assert sorted(s["taskmanager-id"] for s in subs) == tm_ids, (v["name"], subs)


def test_demo_job_from_the_host_prints_and_is_listed_by_the_cli(cluster):
    jid = cluster.submit_with_curl("examples/clicks-print.json")
    cluster.wait_state(jid, "RUNNING", timeout=60)
    rc, out, err = cluster.cli("list")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "Waiting for response..."
    assert lines[1] == "------------------ Running/Restarting Jobs -------------------"
    assert re.fullmatch(rf"\d\d\.\d\d\.\d{{4}} \d\d:\d\d:\d\d : {jid} : clicks by user \(demo\) \(RUNNING\)",
                        lines[2]), out
    assert lines[3] == "-" * 62 and lines[4] == "No scheduled jobs.", out
    # the CLI in a TaskManager's container reaches the JobManager too
    r = cluster.exec("taskmanager", "sluice", "list", "-r", timeout=120)
    assert jid in r.stdout.decode()

    # print rows land in the TaskManagers' logs, in Flink's format: click ids
    # 1, 2, ... without multiples of 10, tier from user_id
    row = re.compile(r"\+I\[(\d+), (\d+), (/page/[^,\]]*), (vip|regular)\]")

    def printed():
        rows = [m.groups() for m in row.finditer(cluster.logs("taskmanager"))]
        return rows if len(rows) >= 15 else None
    rows = wait_for(printed, 60, "15 printed rows in `logs taskmanager`", interval=1)
    expected_ids = [i for i in range(1, 10 * len(rows) + 10) if i % 10 != 0][:len(rows)]
    assert [int(r[0]) for r in rows] == expected_ids
    for click, user, page, tier in rows:
        assert 1 <= int(user) <= 5 and tier == ("vip" if int(user) <= 2 else "regular")
        assert len(page) == len("/page/") + 8 and page[6:] == page[6:].upper()

    rc, out, err = cluster.cli("cancel", jid)
    assert rc == 0 and f"Cancelled job {jid}." in out, out + err
    cluster.wait_state(jid, "CANCELED", timeout=60)


def test_stop_with_savepoint_then_restore_at_higher_parallelism(cluster):
    n = 40000
    base = f"/data/{cluster.project}/savepoint"
    # 40 s of input: the stop lands mid-stream even when `docker exec` is slow on a busy machine
    job = keyed_job(f"{base}/before", n, rate=1000, name="savepoint and rescale")
    cluster.put_file(f"{base}/job.json", json.dumps(job))
    rc, out, err = cluster.cli("run", "-d", f"{base}/job.json")
    assert rc == 0, out + err
    m = re.search(r"Job has been submitted with JobID ([0-9a-f]{32})", out)
    assert m, out
    jid = m.group(1)
    cluster.wait_state(jid, "RUNNING", timeout=60)
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 1, 60,
             "a first completed checkpoint: rows committed before the stop")

    rc, out, err = cluster.cli("stop", "--savepoint", "file:///savepoints", jid)
    assert rc == 0, out + err
    assert f'Suspending job "{jid}" with a CANONICAL savepoint.' in out, out
    m = re.search(rf"Savepoint completed\. Path: (file:(/savepoints/savepoint-{jid[:6]}-[0-9a-f]{{12}}))",
                  out)
    assert m, out
    path, local = m.group(1), m.group(2)
    assert cluster.wait_state(jid, ["FINISHED", "FAILED"])["state"] == "FINISHED"
    cluster.exec("jobmanager", "test", "-s", f"{local}/_metadata")  # on the shared volume
    before = rows_of(cluster.read_output(f"{base}/before"))
    assert 0 < len(before) < len(expected_keyed_rows(n)), "the stop came too late to test anything"

    # restore with twice the parallelism, at full speed, into a fresh directory
    job = keyed_job(f"{base}/after", n, rate=1000000, name="savepoint and rescale")
    cluster.put_file(f"{base}/job-restore.json", json.dumps(job))
    rc, out, err = cluster.cli("run", "-d", "-s", path, "-p", "4", f"{base}/job-restore.json")
    assert rc == 0, out + err
    jid2 = re.search(r"Job has been submitted with JobID ([0-9a-f]{32})", out).group(1)
    done = cluster.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=180)
    assert done["state"] == "FINISHED", cluster.get(f"/jobs/{jid2}/exceptions")
    assert {v["parallelism"] for v in done["vertices"]} == {4}
    # read both again: a restore may commit files its savepoint left pending
    before = rows_of(cluster.read_output(f"{base}/before"))
    after = rows_of(cluster.read_output(f"{base}/after"))
    # every row exactly once over both runs: nothing lost or repeated at the seam
    assert sorted(before + after) == expected_keyed_rows(n)


def test_killed_taskmanager_is_noticed_within_the_heartbeat_timeout(cluster):
    n = 60000
    out = f"/data/{cluster.project}/recovery"
    job = keyed_job(out, n, rate=3000, name="recovery")  # about 20 s of input
    cluster.put_file(f"/data/{cluster.project}/recovery.json", json.dumps(job))
    rc, text, err = cluster.cli("run", "-d", f"/data/{cluster.project}/recovery.json")
    assert rc == 0, text + err
    jid = re.search(r"JobID ([0-9a-f]{32})", text).group(1)
    cluster.wait_state(jid, "RUNNING", timeout=60)

    # checkpointing is on (every CHECKPOINT_INTERVAL_S): the kill comes after
    # one completed, so the restart has a checkpoint to restore
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 1,
             8 * CHECKPOINT_INTERVAL_S, "a completed checkpoint", interval=0.5)

    # kill the TaskManager container running subtask 0 of the source
    vid = [v["id"] for v in cluster.job(jid)["vertices"] if v["name"].startswith("gen")][0]
    victim_id = cluster.get(f"/sluice/jobs/{jid}/vertices/{vid}/subtasks")["subtasks"][0]["taskmanager-id"]
    victim = [c for c in cluster.containers("taskmanager") if victim_id.startswith(c[:12] + ":")]
    assert len(victim) == 1, (victim_id, cluster.containers("taskmanager"))
    run(["docker", "kill", victim[0]], timeout=60)
    t0 = time.monotonic()
    wait_for(lambda: victim_id not in cluster.tm_ids(), HEARTBEAT_TIMEOUT_S + 10,
             f"{victim_id} to leave /taskmanagers", interval=0.1)
    elapsed = time.monotonic() - t0
    assert elapsed <= HEARTBEAT_TIMEOUT_S + 1.5, f"noticed after {elapsed:.1f}s"
    assert cluster.get("/overview")["slots-total"] == 2

    cluster.recovery = {"jid": jid, "victim": victim_id, "out": out, "n": n}
    # the job is not left running on a dead TaskManager: it fails or restarts
    # (which one is the next test's business), naming the lost TaskManager
    wait_for(lambda: victim_id in json.dumps(cluster.job(jid)) +
             json.dumps(cluster.get(f"/jobs/{jid}/exceptions")), 30,
             f"job {jid} to name the lost TaskManager {victim_id}")


def test_the_job_recovers_from_its_checkpoint_after_the_kill(cluster):
    rec = getattr(cluster, "recovery", None)
    assert rec, "the TaskManager-kill scenario did not get as far as the kill"
    jid = rec["jid"]
    # the surviving TaskManager's two slots are enough: the job restarts
    # from its checkpoint and the committed output is exactly right
    done = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=180)
    assert done["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    assert cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] >= 1
    assert rows_of(cluster.read_output(rec["out"])) == expected_keyed_rows(rec["n"])


def test_scaling_up_adds_taskmanagers(cluster):
    before = cluster.tm_ids()
    cluster.compose("up", "-d", "--no-build", "--no-recreate", "--scale", "taskmanager=3",
                    timeout=300)
    running = cluster.running_containers("taskmanager")
    assert len(running) == 3
    want = sorted(c[:12] for c in running)
    wait_for(lambda: sorted(t.split(":")[0] for t in cluster.tm_ids()) == want, 90,
             "three TaskManagers to register")
    assert set(before) <= set(cluster.tm_ids())  # the survivors stayed registered
    assert cluster.get("/overview")["slots-total"] == 6


def test_frozen_taskmanager_is_dropped_after_the_heartbeat_timeout(cluster):
    # `docker pause` freezes the process but keeps its connections open, so
    # only the missing heartbeats can tell the JobManager
    victim = cluster.running_containers("taskmanager")[-1]
    victim_id = [t for t in cluster.tm_ids() if t.startswith(victim[:12] + ":")]
    assert len(victim_id) == 1, (victim, cluster.tm_ids())
    t0 = time.monotonic()  # the freeze happens between t0 and t1
    run(["docker", "pause", victim], timeout=60)
    t1 = time.monotonic()
    try:
        wait_for(lambda: victim_id[0] not in cluster.tm_ids(), HEARTBEAT_TIMEOUT_S + 10,
                 f"{victim_id[0]} to leave /taskmanagers", interval=0.1)
        t2 = time.monotonic()
        # its last heartbeat was at most one interval (0.5 s) before the freeze
        assert t2 - t0 >= HEARTBEAT_TIMEOUT_S - 1.0, \
            f"dropped {t2 - t0:.1f}s after the freeze, before heartbeat.timeout {HEARTBEAT_TIMEOUT_S} s"
        assert t2 - t1 <= HEARTBEAT_TIMEOUT_S + 1.5, \
            f"dropped {t2 - t1:.1f}s after the freeze with heartbeat.timeout {HEARTBEAT_TIMEOUT_S} s"
    finally:
        run(["docker", "unpause", victim], timeout=60, check=False)


# ---------------------------------------------------------------------------
# docker-compose.s3.yml: checkpoints and savepoints on an S3 service, no
# volume shared for state.


def site_cas():
    """This machine's own CA certificates (an HTTPS-intercepting proxy's),
    which the S3 image needs to reach PyPI here; none on most machines."""
    d = "/usr/local/share/ca-certificates"
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".crt")] \
        if os.path.isdir(d) else []


@pytest.fixture(scope="module")
def s3_image(tmp_path_factory):
    """deploy/s3/Dockerfile built as a user would, from a context holding the
    files it copies plus this machine's CAs in deploy/s3/ca/ (the folder a
    site behind a proxy fills)."""
    ctx = str(tmp_path_factory.mktemp("s3-image"))
    os.makedirs(os.path.join(ctx, "deploy", "s3", "ca"))
    os.makedirs(os.path.join(ctx, "scripts"))
    shutil.copy(os.path.join(ROOT, "deploy", "s3", "Dockerfile"), os.path.join(ctx, "deploy", "s3"))
    for f in [os.path.join(ROOT, "deploy", "s3", "ca", "README.md")] + site_cas():
        shutil.copy(f, os.path.join(ctx, "deploy", "s3", "ca"))
    for f in ("s3_server.py", "pyvenv.py"):
        shutil.copy(os.path.join(ROOT, "scripts", f), os.path.join(ctx, "scripts"))
    tag = f"sluice-s3:test-{os.getpid()}"
    r = run(["docker", "build", "-q", "-f", os.path.join(ctx, "deploy", "s3", "Dockerfile"), "-t", tag, ctx],
            timeout=BUILD_TIME_LIMIT_S, check=False)
    if r.returncode != 0:
        pytest.fail("building deploy/s3/Dockerfile failed:\n" + r.stderr.decode(errors="replace")[-4000:])
    yield tag
    run(["docker", "rmi", tag], timeout=120, check=False)


@pytest.fixture
def s3_cluster(image, tools, s3_image):
    c = ComposeCluster(tools[0], image, "docker-compose.s3.yml", env={"SLUICE_S3_IMAGE": s3_image})
    try:
        c.compose("up", "-d", "--no-build", "--scale", "taskmanager=2", timeout=300)
        wait_for(lambda: len(c.tm_ids()) == 2, 180, "two TaskManagers to register")
        yield c
    finally:
        os.makedirs(REPORTS, exist_ok=True)
        with open(os.path.join(REPORTS, f"docker-{c.project}.log"), "w") as f:
            f.write(c.logs())
        c.down()


def submit_cli(cluster, job, path, *flags):
    cluster.put_file(path, json.dumps(job))
    rc, out, err = cluster.cli("run", "-d", *flags, path)
    assert rc == 0, out + err
    return re.search(r"Job has been submitted with JobID ([0-9a-f]{32})", out).group(1)


def test_s3_cluster_recovers_and_restores_from_s3(s3_cluster):
    """The S3 compose cluster: a TaskManager container is killed and the job
    recovers from its checkpoint on S3; then a job stopped with a savepoint
    (on S3, the cluster's state.savepoints.dir) restores at parallelism 1;
    every row exactly once."""
    c = s3_cluster
    n = 30000
    base = f"/data/{c.project}"
    jid = submit_cli(c, keyed_job(f"{base}/recovery", n, rate=2000, name="recovery on s3"),
                     f"{base}/recovery.json")
    c.wait_state(jid, "RUNNING", timeout=60)
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 2, 60,
             "two completed checkpoints")
    latest = c.get(f"/jobs/{jid}/checkpoints")["latest"]["completed"]
    assert latest["external_path"].startswith(f"s3://sluice/checkpoints/{jid}/chk-"), latest
    run(["docker", "kill", c.running_containers("taskmanager")[0]], timeout=60)
    done = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=180)
    assert done["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    restored = c.get(f"/jobs/{jid}/checkpoints")["latest"]["restored"]
    assert restored and restored["external_path"].startswith(f"s3://sluice/checkpoints/{jid}/"), restored
    assert rows_of(c.read_output(f"{base}/recovery")) == expected_keyed_rows(n)

    jid = submit_cli(c, keyed_job(f"{base}/before", n, rate=1000, name="savepoint on s3"),
                     f"{base}/before.json")
    c.wait_state(jid, "RUNNING", timeout=60)
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 1, 60,
             "a completed checkpoint before the stop")
    rc, out, err = c.cli("stop", "--savepoint", "s3://sluice/savepoints", jid)
    assert rc == 0, out + err
    m = re.search(rf"Savepoint completed\. Path: (s3://sluice/savepoints/savepoint-{jid[:6]}-[0-9a-f]{{12}})", out)
    assert m, out
    assert c.wait_state(jid, ["FINISHED", "FAILED"])["state"] == "FINISHED"
    jid2 = submit_cli(c, keyed_job(f"{base}/after", n, rate=1000000, name="savepoint on s3"),
                      f"{base}/after.json", "-s", m.group(1), "-p", "1")
    done = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=180)
    assert done["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    before = rows_of(c.read_output(f"{base}/before"))
    after = rows_of(c.read_output(f"{base}/after"))
    assert before and sorted(before + after) == expected_keyed_rows(n)
