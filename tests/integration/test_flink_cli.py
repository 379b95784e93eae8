"""Apache Flink's own `flink` command against a Sluice cluster.

The CLI comes from PyPI's `apache-flink` (2.3.0), installed once into the
venv bench/flink_vs_sluice.py keeps under ~/.cache/sluice-bench (or
$SLUICE_BENCH_CACHE) with the same helper; it needs Java 17. If it cannot
be installed the tests fail saying why -- they never skip. Each command runs
with `-m 127.0.0.1:<rest port>` and Flink's own log4j configuration, and
the tests assert its exit code and the lines it prints:

- `list`, `list -r`, `list -s`, `list -a`: running, scheduled (a job waiting
  for slots) and terminated sections with "<date> : <id> : <name> (STATE)".
- `savepoint <id>` (into state.savepoints.dir) and `savepoint <id> file://dir`:
  "Savepoint completed. Path: file:<dir>/savepoint-<6 of id>-<12 hex>", the
  directory with its _metadata exists; `savepoint -d <path>` removes it.
- a savepoint into a directory that cannot be created (below a plain file)
  fails at once (well within Flink's client timeout) printing the reason.
- `checkpoint <id>`, `checkpoint --full <id>`: "Checkpoint N for job <id>
  completed." / "Checkpoint(FULL) N ...", N the checkpoint REST reports; a
  checkpoint that fails (its directory cannot be created) prints the reason
  at once.
- `stop --savepointPath`, `stop --drain`, `stop --type native`: Flink's
  "Suspending"/"Draining" lines, the savepoint path, the job FINISHED.
- `cancel <id>`: "Cancelling job <id>." / "Cancelled job <id>.", CANCELED.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

ENDLESS = {"name": "endless", "parallelism": 1,
           "vertices": [{"id": "g", "uid": "g", "type": "datagen",
                         "schema": [{"name": "x", "type": "BIGINT"}],
                         "config": {"rows-per-second": "200"}},
                        {"id": "s", "uid": "s", "type": "blackhole"}],
           "edges": [{"from": "g", "to": "s"}]}
LINE = r"\d\d\.\d\d\.\d{4} \d\d:\d\d:\d\d : "


@pytest.fixture(scope="module")
def flink_home():
    """PyFlink's FLINK_HOME (bin/flink, lib/, conf/), installed on first use."""
    import flink_vs_sluice as bench  # the benchmark's venv and installer
    try:
        py = bench.ensure_flink()
    except SystemExit as e:
        pytest.fail(f"cannot install Flink's CLI (apache-flink=={bench.FLINK_VERSION}): {e}")
    venv = os.path.dirname(os.path.dirname(py))
    homes = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "pyflink"))
    if not homes or not os.path.exists(os.path.join(homes[0], "bin", "flink")):
        pytest.fail(f"apache-flink is installed in {venv} but has no pyflink/bin/flink")
    if shutil.which("java") is None:
        pytest.fail("Flink's CLI needs Java 17: `java` is not on PATH")
    return homes[0]


class FlinkCli:
    def __init__(self, home, cluster, workdir):
        self.home = home
        self.cluster = cluster
        # Flink's own conf/ (log4j-cli.properties, config.yaml), a copy per test
        self.conf = os.path.join(workdir, "flink-conf")
        shutil.copytree(os.path.join(home, "conf"), self.conf)

    def __call__(self, *args, timeout=90):
        cmd = [os.path.join(self.home, "bin", "flink"), args[0],
               "-m", f"127.0.0.1:{self.cluster.rest_port}"] + list(args[1:])
        env = dict(os.environ, FLINK_HOME=self.home, FLINK_CONF_DIR=self.conf)
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=self.cluster.workdir)
        r.seconds = time.monotonic() - t0
        r.text = r.stdout + r.stderr
        return r

    def ok(self, *args, **kw):
        r = self(*args, **kw)
        assert r.returncode == 0, f"flink {' '.join(args)} -> {r.returncode}\n{r.text}"
        return r


@pytest.fixture
def flink(flink_home, cluster, workdir):
    cluster.add_tm(slots=2)
    return FlinkCli(flink_home, cluster, workdir)


def run_endless(cluster, name="endless"):
    jid = cluster.submit(dict(ENDLESS, name=name))
    cluster.wait_state(jid, "RUNNING")
    # every task running, so a savepoint is not refused as too early
    from conftest import wait_for
    wait_for(lambda: all(v["status"] == "RUNNING" for v in cluster.job(jid)["vertices"]),
             what=f"the tasks of {jid} to run")
    return jid


def savepoint_path(out, base, jid):
    m = re.search(rf"^Savepoint completed\. Path: file:({re.escape(base)}/savepoint-{jid[:6]}-[0-9a-f]{{12}})$",
                  out, re.M)
    assert m, out
    assert os.path.isfile(os.path.join(m.group(1), "_metadata")), m.group(1)
    return m.group(1)


def test_list_running_scheduled_and_terminated(flink, cluster):
    jid = run_endless(cluster)
    waiting = cluster.submit(dict(ENDLESS, name="too big", parallelism=5))  # 2 slots only
    cluster.wait_state(waiting, "CREATED")

    out = flink.ok("list").stdout
    assert out.startswith("Waiting for response...\n"), out
    assert re.search(r"-{18} Running/Restarting Jobs -{19}\n" + LINE + jid + r" : endless \(RUNNING\)\n-{62}\n", out), out
    assert re.search(r"-{23} Scheduled Jobs -{23}\n" + LINE + waiting + r" : too big \(CREATED\)\n", out), out

    out = flink.ok("list", "-r").stdout
    assert f" : {jid} : endless (RUNNING)" in out and waiting not in out, out
    out = flink.ok("list", "-s").stdout
    assert f" : {waiting} : too big (CREATED)" in out and jid not in out, out

    r = flink.ok("cancel", jid)
    assert f"Cancelling job {jid}.\nCancelled job {jid}.\n" in r.stdout, r.stdout
    cluster.wait_state(jid, "CANCELED")
    out = flink.ok("list", "-a").stdout
    assert re.search(r"-{22} Terminated Jobs -{23}\n" + LINE + jid + r" : endless \(CANCELED\)\n", out), out
    assert f" : {waiting} : too big (CREATED)" in out, out


def test_savepoint_default_and_uri_targets_then_dispose(flink, cluster, workdir):
    jid = run_endless(cluster)
    r = flink.ok("savepoint", jid)
    assert r.stdout.startswith(f"Triggering savepoint for job {jid}.\nWaiting for response...\n"), r.stdout
    assert "You can resume your program from this savepoint with the run command." in r.stdout
    first = savepoint_path(r.stdout, os.path.join(workdir, "savepoints"), jid)

    target = os.path.join(workdir, "flink-sp")
    r = flink.ok("savepoint", jid, "file://" + target)
    second = savepoint_path(r.stdout, target, jid)
    st = cluster.get(f"/jobs/{jid}/checkpoints")
    assert st["latest"]["savepoint"]["external_path"] == "file:" + second

    r = flink.ok("savepoint", "-d", "file:" + first)
    assert f"Disposing savepoint 'file:{first}'." in r.stdout, r.stdout
    assert f"Savepoint 'file:{first}' disposed." in r.stdout, r.stdout
    assert not os.path.exists(first) and os.path.isdir(second)

    # disposing of something that is not a savepoint: the reason, exit 1
    r = flink("savepoint", "-d", os.path.join(workdir, "not-one"))
    assert r.returncode == 1, r.text
    assert "is not a savepoint directory" in r.text, r.text


def test_savepoint_into_an_unwritable_directory_prints_the_reason_at_once(flink, cluster, workdir):
    jid = run_endless(cluster)
    blocker = os.path.join(workdir, "a-file")
    open(blocker, "w").close()
    r = flink("savepoint", jid, os.path.join(blocker, "sp"))
    assert r.returncode == 1, r.text
    assert r.seconds < 30, f"took {r.seconds:.1f} s: Flink's client waited instead of failing"
    assert "Failed to trigger a savepoint for the job " + jid in r.text, r.text
    assert re.search(r"Caused by: org\.apache\.flink\.runtime\.checkpoint\.CheckpointException: .*"
                     r"cannot create directory " + re.escape(os.path.join(blocker, "sp")), r.text), r.text
    assert cluster.job(jid)["state"] == "RUNNING"
    # the JobManager log names the failure too
    assert "failed" in cluster.jm.log_text()


def test_checkpoint_and_full_checkpoint(flink, cluster):
    jid = run_endless(cluster)
    r = flink.ok("checkpoint", jid)
    m = re.search(rf"^Checkpoint (\d+) for job {jid} completed\.$", r.stdout, re.M)
    assert m, r.stdout
    completed = cluster.get(f"/jobs/{jid}/checkpoints")["latest"]["completed"]
    assert completed["id"] == int(m.group(1)) and completed["checkpoint_type"] == "CHECKPOINT"

    r = flink.ok("checkpoint", "--full", jid)
    m2 = re.search(rf"^Checkpoint\(FULL\) (\d+) for job {jid} completed\.$", r.stdout, re.M)
    assert m2 and int(m2.group(1)) > int(m.group(1)), r.stdout
    assert cluster.get(f"/jobs/{jid}/checkpoints")["latest"]["completed"]["id"] == int(m2.group(1))


def test_failed_checkpoint_prints_the_reason_at_once(flink_home, make_cluster, workdir):
    blocker = os.path.join(workdir, "a-file")
    open(blocker, "w").close()
    c = make_cluster(jm_conf={"state.checkpoints.dir": os.path.join(blocker, "ck")})
    c.add_tm(slots=1)
    flink = FlinkCli(flink_home, c, workdir)
    jid = run_endless(c)
    r = flink("checkpoint", jid)
    assert r.returncode == 1, r.text
    assert r.seconds < 30, f"took {r.seconds:.1f} s: Flink's client waited instead of failing"
    assert re.search(r"CheckpointException: .*cannot create directory " + re.escape(blocker), r.text), r.text


def test_stop_with_savepoint_drain_and_type(flink, cluster, workdir):
    for args, word, kind in ((["--savepointPath", os.path.join(workdir, "stop1")], "Suspending", "CANONICAL"),
                             (["--drain", "--savepointPath", os.path.join(workdir, "stop2")], "Draining", "CANONICAL"),
                             (["--type", "native", "--savepointPath", "file://" + os.path.join(workdir, "stop3")],
                              "Suspending", "NATIVE")):
        jid = run_endless(cluster)
        r = flink.ok("stop", *args, jid)
        assert r.stdout.startswith(f'{word} job "{jid}" with a {kind} savepoint.\n'), r.stdout
        base = args[-1][len("file://"):] if args[-1].startswith("file://") else args[-1]
        savepoint_path(r.stdout, base, jid)
        cluster.wait_state(jid, "FINISHED")


def test_rest_paths_answer_under_v1_too(flink, cluster):
    jid = run_endless(cluster)
    for path in ("/jobs/overview", f"/jobs/{jid}", f"/jobs/{jid}/status", "/jobmanager/metrics",
                 "/jars", "/config"):
        a, b = cluster.get("/v1" + path), cluster.get(path)  # times move on between the two
        assert (sorted(a) if isinstance(a, dict) else a) == (sorted(b) if isinstance(b, dict) else b), path
    assert cluster.get(f"/v1/jobs/{jid}/status") == {"status": "RUNNING"}
    overview = cluster.get("/v1/jobs/overview")["jobs"][0]
    assert overview["pending-operators"] == 0 and overview["tasks"]["reconciling"] == 0
    assert cluster.get("/jars") == {"address": f"http://localhost:{cluster.rest_port}", "files": []}
    features = cluster.get("/config")["features"]
    assert features == {"web-submit": True, "web-cancel": True, "web-rescale": False, "web-history": False}
    m = {x["id"]: x["value"] for x in cluster.get("/v1/jobmanager/metrics?get=numRegisteredTaskManagers,taskSlotsTotal,numRunningJobs")}
    assert m == {"numRegisteredTaskManagers": "1", "taskSlotsTotal": "2", "numRunningJobs": "1"}
    status, body = cluster.request("GET", "/v1/no/such/path")
    assert status == 404 and body["errors"], body
    assert "GET /v1/no/such/path -> 404" in cluster.jm.log_text()


def test_flink_2_names_and_file_uris_for_directories(flink_home, make_cluster, workdir):
    """execution.checkpointing.dir / savepoint-dir as file:// URIs: checkpoints and
    savepoints land in those directories, not in a relative 'file:' directory."""
    ck, sp = os.path.join(workdir, "ck2"), os.path.join(workdir, "sp2")
    c = make_cluster(jm_conf={"execution.checkpointing.dir": "file://" + ck,
                              "execution.checkpointing.savepoint-dir": "file:" + sp})
    c.add_tm(slots=1)
    flink = FlinkCli(flink_home, c, workdir)
    jid = run_endless(c)
    r = flink.ok("checkpoint", jid)
    n = int(re.search(rf"^Checkpoint (\d+) for job {jid} completed\.$", r.stdout, re.M).group(1))
    assert os.path.isfile(os.path.join(ck, jid, f"chk-{n}", "_metadata"))
    savepoint_path(flink.ok("savepoint", jid).stdout, sp, jid)
    assert not os.path.exists(os.path.join(workdir, "file:"))
    conf = {e["key"]: e["value"] for e in c.get("/jobmanager/config")}
    assert conf["state.checkpoints.dir"] == ck and conf["state.savepoints.dir"] == sp


def test_flinks_own_config_yaml_loads_with_one_warning(flink_home, workdir):
    """Flink's conf/config.yaml, as shipped, starts a JobManager; the keys Sluice does
    not use are named in one warning line; a misspelt key still stops it."""
    from conftest import BIN, Daemon, wait_for
    path = os.path.join(flink_home, "conf", "config.yaml")
    args = [os.path.join(BIN, "sluice-jobmanager"), "--config", path,
            "-D", "rest.port=0", "-D", "jobmanager.rpc.port=0"]
    jm = Daemon("jm-flink-conf", args, workdir)
    try:
        wait_for(lambda: "REST port" in jm.log_text() or not jm.alive(), what="JobManager start")
        log = jm.log_text()
        assert jm.alive(), log
        warnings = [l for l in log.splitlines() if "Accepted but not used" in l]
        assert len(warnings) == 1, log
        assert "WARN" in warnings[0]
        for key in ("env.java.opts.all", "jobmanager.memory.process.size",
                    "jobmanager.execution.failover-strategy"):
            assert key in warnings[0], warnings[0]
    finally:
        assert jm.stop() == 0
    bad = os.path.join(workdir, "bad.yaml")
    with open(path) as f, open(bad, "w") as g:
        g.write(f.read() + "\ntaskmanager.numberOfTaskSlot: 2\n")
    r = subprocess.run([os.path.join(BIN, "sluice-jobmanager"), "--config", bad], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode != 0
    assert "unknown configuration key 'taskmanager.numberOfTaskSlot'; did you mean " \
           "'taskmanager.numberOfTaskSlots'?" in r.stderr, r.stderr


# (path under /v1, Flink's response class[, its type parameter]) that must parse
PARSES = [
    ("/config", "org.apache.flink.runtime.rest.messages.DashboardConfiguration"),
    ("/jobs", "org.apache.flink.runtime.messages.webmonitor.JobIdsWithStatusOverview"),
    ("/jobs/overview", "org.apache.flink.runtime.messages.webmonitor.MultipleJobsDetails"),
    ("/jobs/{jid}/status", "org.apache.flink.runtime.messages.webmonitor.JobStatusInfo"),
    ("/jobs/{jid}/config", "org.apache.flink.runtime.rest.messages.JobConfigInfo"),
    ("/jobs/{jid}/exceptions", "org.apache.flink.runtime.rest.messages.JobExceptionsInfoWithHistory"),
    ("/jobs/{jid}/checkpoints/config", "org.apache.flink.runtime.rest.messages.checkpoints.CheckpointConfigInfo"),
    ("/jobs/{jid}/vertices/{vid}/backpressure", "org.apache.flink.runtime.rest.messages.JobVertexBackPressureInfo"),
    ("/jobs/{jid}/vertices/{vid}/metrics?get=0.numRecordsIn",
     "org.apache.flink.runtime.rest.messages.job.metrics.MetricCollectionResponseBody"),
    ("/jobs/{jid}/vertices/{vid}/subtasks/metrics?get=numRecordsIn",
     "org.apache.flink.runtime.rest.messages.job.metrics.AggregatedMetricsResponseBody"),
    ("/jobs/{jid}/metrics?get=numRestarts", "org.apache.flink.runtime.rest.messages.job.metrics.MetricCollectionResponseBody"),
    ("/jobmanager/metrics?get=taskSlotsTotal", "org.apache.flink.runtime.rest.messages.job.metrics.MetricCollectionResponseBody"),
    ("/taskmanagers/{tm}/metrics", "org.apache.flink.runtime.rest.messages.job.metrics.MetricCollectionResponseBody"),
    ("/jobs/{jid}/savepoints/{sp}", "org.apache.flink.runtime.rest.handler.async.AsynchronousOperationResult",
     "org.apache.flink.runtime.rest.messages.job.savepoints.SavepointInfo"),
    ("/jobs/{jid}/checkpoints/{ck}", "org.apache.flink.runtime.rest.handler.async.AsynchronousOperationResult",
     "org.apache.flink.runtime.rest.messages.checkpoints.CheckpointInfo"),
    ("/savepoint-disposal/{dp}", "org.apache.flink.runtime.rest.handler.async.AsynchronousOperationResult",
     "org.apache.flink.runtime.rest.handler.async.AsynchronousOperationInfo"),
]


def test_rest_responses_parse_with_flinks_own_classes(flink_home, cluster, workdir):
    """Flink's response classes and strict mapper read these answers (docs/REST.md lists
    the endpoints whose Sluice-only fields still stop them)."""
    from conftest import wait_for
    cluster.add_tm(slots=1)
    jid = run_endless(cluster)
    jars = glob.glob(os.path.join(flink_home, "lib", "flink-dist-*.jar"))
    assert jars, f"no flink-dist jar in {flink_home}/lib"
    jar = jars[0]
    classes = os.path.join(workdir, "classes")
    subprocess.run(["javac", "-d", classes, "-cp", jar,
                    os.path.join(ROOT, "tests", "integration", "FlinkRestParse.java")], check=True,
                   capture_output=True, timeout=120)
    _, sp = cluster.request("POST", f"/jobs/{jid}/savepoints", {})
    wait_for(lambda: cluster.get(f"/jobs/{jid}/savepoints/{sp['request-id']}")["status"]["id"] == "COMPLETED",
             what="the savepoint")
    _, ck = cluster.request("POST", f"/jobs/{jid}/checkpoints", {"checkpointType": "FULL"})
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints/{ck['request-id']}")["status"]["id"] == "COMPLETED",
             what="the checkpoint")
    _, dp = cluster.request("POST", "/savepoint-disposal", {"savepoint-path": "/nowhere/savepoint-abc"})
    ids = {"jid": jid, "vid": cluster.job(jid)["vertices"][0]["id"], "sp": sp["request-id"],
           "ck": ck["request-id"], "dp": dp["request-id"],
           "tm": cluster.get("/taskmanagers")["taskmanagers"][0]["id"]}
    lines = "".join(" ".join([cluster.url + "/v1" + e[0].format(**ids)] + list(e[1:])) + "\n" for e in PARSES)
    r = subprocess.run(["java", "-cp", f"{jar}:{classes}", "FlinkRestParse"], input=lines,
                       capture_output=True, text=True, timeout=120)
    results = [l for l in r.stdout.splitlines() if l.startswith(("OK", "FAIL", "HTTP-FAIL"))]
    assert len(results) == len(PARSES), r.stdout + r.stderr
    failed = [l for l in results if not l.startswith("OK")]
    assert not failed, "\n".join(failed)
