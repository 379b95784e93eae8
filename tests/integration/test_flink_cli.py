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


def test_list_running_scheduled_and_terminated(flink_home, make_cluster, workdir):
    # the job waiting for slots must still wait after several JVM starts
    cluster = make_cluster(jm_conf={"slot.request.timeout": "10 min"})
    cluster.add_tm(slots=2)
    flink = FlinkCli(flink_home, cluster, workdir)
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
    assert features == {"web-submit": True, "web-cancel": True, "web-rescale": True, "web-history": False}
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


M = "org.apache.flink.runtime.rest.messages."
ASYNC = "org.apache.flink.runtime.rest.handler.async."
METRICS = M + "job.metrics.MetricCollectionResponseBody"
# (method, path, Flink's response class[, its type parameter[, JSON body]]): every
# endpoint of Flink's API that Sluice serves; each must parse under /v1 and without
GETS = [
    ("GET", "/config", M + "DashboardConfiguration"),
    ("GET", "/overview", "org.apache.flink.runtime.rest.handler.legacy.messages.ClusterOverviewWithVersion"),
    ("GET", "/jobmanager/config", M + "ConfigurationInfo"),
    ("GET", "/jobmanager/metrics", METRICS),
    ("GET", "/jobmanager/metrics?get=taskSlotsTotal,numRunningJobs", METRICS),
    ("GET", "/taskmanagers", M + "taskmanager.TaskManagersInfo"),
    ("GET", "/taskmanagers/{tm}", M + "taskmanager.TaskManagerDetailsInfo"),
    ("GET", "/taskmanagers/{tm}/metrics", METRICS),
    ("GET", "/jars", "org.apache.flink.runtime.webmonitor.handlers.JarListInfo"),
    ("GET", "/jobs", "org.apache.flink.runtime.messages.webmonitor.JobIdsWithStatusOverview"),
    ("GET", "/jobs/overview", "org.apache.flink.runtime.messages.webmonitor.MultipleJobsDetails"),
    ("GET", "/jobs/{jid}", M + "job.JobDetailsInfo"),
    ("GET", "/jobs/{waiting}", M + "job.JobDetailsInfo"),
    ("GET", "/jobs/{jid}/status", "org.apache.flink.runtime.messages.webmonitor.JobStatusInfo"),
    ("GET", "/jobs/{jid}/plan", M + "JobPlanInfo"),
    ("GET", "/jobs/{jid}/config", M + "JobConfigInfo"),
    ("GET", "/jobs/{jid}/exceptions", M + "JobExceptionsInfoWithHistory"),
    ("GET", "/jobs/{jid}/metrics", METRICS),
    ("GET", "/jobs/{jid}/metrics?get=numRestarts,lastCheckpointDuration", METRICS),
    ("GET", "/jobs/{jid}/checkpoints", M + "checkpoints.CheckpointingStatistics"),
    ("GET", "/jobs/{jid}/checkpoints/config", M + "checkpoints.CheckpointConfigInfo"),
    ("GET", "/jobs/{jid}/checkpoints/details/{cpid}", M + "checkpoints.CheckpointStatistics"),
    ("GET", "/jobs/{jid}/checkpoints/details/{failed}", M + "checkpoints.CheckpointStatistics"),
    ("GET", "/jobs/{jid}/checkpoints/details/{cpid}/subtasks/{vid}",
     M + "checkpoints.TaskCheckpointStatisticsWithSubtaskDetails"),
    ("GET", "/jobs/{jid}/checkpoints/details/{cpid}/subtasks/{vid2}",
     M + "checkpoints.TaskCheckpointStatisticsWithSubtaskDetails"),
    ("GET", "/jobs/{jid}/checkpoints/{ck}", ASYNC + "AsynchronousOperationResult", M + "checkpoints.CheckpointInfo"),
    ("GET", "/jobs/{jid}/savepoints/{sp}", ASYNC + "AsynchronousOperationResult", M + "job.savepoints.SavepointInfo"),
    ("GET", "/jobs/{jid}/savepoints/{spfail}", ASYNC + "AsynchronousOperationResult", M + "job.savepoints.SavepointInfo"),
    ("GET", "/jobs/{jid}/vertices/{vid}", M + "JobVertexDetailsInfo"),
    ("GET", "/jobs/{jid}/vertices/{vid}/backpressure", M + "JobVertexBackPressureInfo"),
    ("GET", "/jobs/{jid}/vertices/{vid}/metrics", METRICS),
    ("GET", "/jobs/{jid}/vertices/{vid}/metrics?get=0.numRecordsIn,0.numLateRecordsDropped", METRICS),
    ("GET", "/jobs/{jid}/vertices/{vid}/subtasks/metrics", M + "job.metrics.AggregatedMetricsResponseBody"),
    ("GET", "/jobs/{jid}/vertices/{vid}/subtasks/metrics?get=numRecordsIn&agg=sum,max",
     M + "job.metrics.AggregatedMetricsResponseBody"),
    ("GET", "/jobs/{jid}/vertices/{vid}/watermarks", METRICS),
    ("GET", "/savepoint-disposal/{dp}", ASYNC + "AsynchronousOperationResult", ASYNC + "AsynchronousOperationInfo"),
]
TRIGGER = ASYNC + "TriggerResponse"
POSTS = [
    ("POST", "/jobs/{jid}/savepoints", TRIGGER, "-", '{"target-directory": null, "cancel-job": false}'),
    ("POST", "/jobs/{jid}/checkpoints", TRIGGER, "-", '{"checkpointType": "FULL"}'),
    ("POST", "/savepoint-disposal", TRIGGER, "-", '{"savepoint-path": "{workdir}/savepoints/savepoint-000000-000000000000"}'),
    ("PATCH", "/jobs/{waiting}?mode=cancel", M + "EmptyResponseBody"),
    ("POST", "/jobs/{jid}/stop", TRIGGER, "-", '{"targetDirectory": null, "drain": false}'),
]


def run_harness(flink_home, workdir, lines):
    jars = glob.glob(os.path.join(flink_home, "lib", "flink-dist-*.jar"))
    assert jars, f"no flink-dist jar in {flink_home}/lib"
    classes = os.path.join(workdir, "classes")
    if not os.path.isdir(classes):
        subprocess.run(["javac", "-d", classes, "-cp", jars[0],
                        os.path.join(ROOT, "tests", "integration", "FlinkRestParse.java")], check=True,
                       capture_output=True, timeout=120)
    r = subprocess.run(["java", "-cp", f"{jars[0]}:{classes}", "FlinkRestParse"], input="".join(lines),
                       capture_output=True, text=True, timeout=120)
    results = [l for l in r.stdout.splitlines() if l.startswith(("OK", "FAIL", "HTTP-FAIL"))]
    assert len(results) == len(lines), r.stdout + r.stderr
    return results


def test_rest_responses_parse_with_flinks_own_classes(flink_home, make_cluster, workdir):
    """Flink's response classes and strict mapper read every answer of Flink's API that
    Sluice serves, with and without /v1: a running job with a keyed edge, a job waiting
    for slots, completed and failed checkpoints and savepoints, a disposal; then the
    trigger, stop and cancel answers themselves."""
    from conftest import wait_for
    # the job waiting for slots must still wait when it is cancelled at the end, however
    # long the Java harness takes on a busy machine: no slot request deadline in between
    cluster = make_cluster(jm_conf={"slot.request.timeout": "1 h"})
    cluster.add_tm(slots=1)
    job = dict(ENDLESS, parallelism=1)
    job["vertices"] = [dict(ENDLESS["vertices"][0], schema=[{"name": "x", "type": "BIGINT"}]),
                       ENDLESS["vertices"][1]]
    job["edges"] = [{"from": "g", "to": "s", "strategy": "hash", "keys": ["x"]}]
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in cluster.job(jid)["vertices"]),
             what="the tasks to run")
    waiting = cluster.submit(dict(ENDLESS, name="too big", parallelism=5))
    wait_for(lambda: cluster.get(f"/sluice/jobs/{waiting}")["state-reason"], what="the waiting job's reason")
    json_hdr = {"Content-Type": "application/json"}
    _, sp = cluster.request("POST", f"/jobs/{jid}/savepoints", {}, headers=json_hdr)
    wait_for(lambda: cluster.get(f"/jobs/{jid}/savepoints/{sp['request-id']}")["status"]["id"] == "COMPLETED",
             what="the savepoint")
    blocker = os.path.join(workdir, "savepoints", "a-file")
    open(blocker, "w").close()
    _, spfail = cluster.request("POST", f"/jobs/{jid}/savepoints", {"target-directory": blocker + "/x"},
                                headers=json_hdr)
    wait_for(lambda: cluster.get(f"/jobs/{jid}/savepoints/{spfail['request-id']}")["status"]["id"] == "COMPLETED",
             what="the failed savepoint")
    _, ck = cluster.request("POST", f"/jobs/{jid}/checkpoints", {"checkpointType": "FULL"}, headers=json_hdr)
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints/{ck['request-id']}")["status"]["id"] == "COMPLETED",
             what="the checkpoint")
    _, dp = cluster.request("POST", "/savepoint-disposal",
                            {"savepoint-path": os.path.join(workdir, "savepoints", "savepoint-abc")}, headers=json_hdr)
    st = cluster.get(f"/jobs/{jid}/checkpoints")
    assert st["latest"]["failed"] and st["latest"]["completed"] and st["latest"]["savepoint"]
    vids = [v["id"] for v in cluster.job(jid)["vertices"]]
    ids = {"jid": jid, "waiting": waiting, "vid": vids[0], "vid2": vids[1], "sp": sp["request-id"],
           "spfail": spfail["request-id"], "ck": ck["request-id"], "dp": dp["request-id"],
           "cpid": st["latest"]["completed"]["id"], "failed": st["latest"]["failed"]["id"],
           "tm": cluster.get("/taskmanagers")["taskmanagers"][0]["id"], "workdir": workdir}

    def line(e, prefix):
        fields = [e[0], cluster.url + prefix + e[1].format(**ids)] + list(e[2:])
        if len(fields) == 5:
            fields[4] = fields[4].replace("{workdir}", workdir)
        return "\t".join(fields) + "\n"

    lines = [line(e, p) for p in ("/v1", "") for e in GETS]
    results = run_harness(flink_home, workdir, lines)
    failed = [l for l in results if not l.startswith("OK")]
    assert not failed, "\n".join(failed)
    # the triggers' answers, once each (under /v1, as Flink's client sends them)
    results = run_harness(flink_home, workdir, [line(e, "/v1") for e in POSTS])
    failed = [l for l in results if not l.startswith("OK")]
    assert not failed, "\n".join(failed)
    cluster.wait_state(jid, "FINISHED")
    cluster.wait_state(waiting, "CANCELED")
