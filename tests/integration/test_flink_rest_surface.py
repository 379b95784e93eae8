"""Every GET endpoint of Flink 2.3's REST API, taken from Flink's own jar, against Sluice.

FlinkRestEndpoints.java lists the endpoints by reflection over the MessageHeaders
classes in flink-dist (method, URL template, response class and its type
parameter), so the list is Flink's, not ours. Each GET is called for four jobs --
one running (with a checkpoint, a savepoint and a disposal behind it), one
finished, one failed and one waiting for slots -- and every JSON answer is read
with Flink's response class and strict mapper (FlinkRestParse.java, as Flink's
REST client reads it). Answers that are files (logs, stdout) are compared with
the daemon's files. Endpoints for what a Flink cluster would not have either
answer 404 as such a cluster does; those are listed below with the reason.
Then the answers' contents are checked against what the test knows: the
JobManager's threads (its /proc), its log file and command line, each job's
end, its parallelism.
"""
import glob
import json
import os
import re
import subprocess
import urllib.request

import pytest

from conftest import wait_for
from test_datastream import JOB as SILENCE
from test_jars import jar_conf, upload_file
from test_flink_cli import ENDLESS, ROOT, flink_home, run_harness  # noqa: F401 (fixture)

# What Flink itself answers with 404 here, and why (the same cluster in Flink)
FLINK_404 = {
    "/jobmanager/profiler": "rest.profiling.enabled is false (Flink's default): no profiler handlers",
    "/jobmanager/profiler/:filename": "the same",
    "/taskmanagers/:taskmanagerid/profiler": "the same",
    "/taskmanagers/:taskmanagerid/profiler/:filename": "the same",
    "/jobs/:jobid/jobmanager/log-url": "no historyserver.log.jobmanager.url-pattern configured",
    "/jobs/:jobid/taskmanagers/:taskmanagerid/log-url": "no historyserver.log.taskmanager.url-pattern",
    "/applications/:applicationid": "no such application: Sluice's jobs belong to none",
    "/applications/:applicationid/exceptions": "the same",
    "/applications/:applicationid/jobmanager/config": "the same",
    "/datasets/delete/:triggerid": "no such trigger: a streaming cluster has no data sets",
    "/jobs/:jobid/rescales/details/:rescaleuuid": "no such rescale: the job was never rescaled",
    "/jobs/:jobid/rescaling/:triggerid": "no such rescaling trigger",
}


def flink_endpoints(flink_home, workdir):
    jar = glob.glob(os.path.join(flink_home, "lib", "flink-dist-*.jar"))[0]
    classes = os.path.join(workdir, "endpoint-classes")
    subprocess.run(["javac", "-d", classes, "-cp", jar,
                    os.path.join(ROOT, "tests", "integration", "FlinkRestEndpoints.java")],
                   check=True, capture_output=True, timeout=120)
    r = subprocess.run(["java", "-cp", f"{jar}:{classes}", "FlinkRestEndpoints", jar],
                       capture_output=True, text=True, timeout=120, check=True)
    rows = [l.split("\t") for l in r.stdout.splitlines() if l.strip()]
    return [(url, cls, param) for method, url, cls, param, _ in rows if method == "GET"]


def raw_get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_every_flink_get_endpoint(flink_home, make_cluster, workdir):
    endpoints = flink_endpoints(flink_home, workdir)
    # Flink 2.3 has 73 GET endpoints; a change in the count means a new Flink
    assert len(endpoints) == 73, len(endpoints)
    templates = {u for u, _, _ in endpoints}
    assert set(FLINK_404) <= templates

    cluster = make_cluster(jm_conf=jar_conf(workdir, **{"slot.request.timeout": "1 h"}))
    cluster.add_tm(slots=2)
    json_hdr = {"Content-Type": "application/json"}
    # finished and failed jobs first, while the slots are free
    finished = cluster.submit({"name": "bounded", "parallelism": 2, "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
         "config": {"number-of-rows": "10"}},
        {"id": "s", "type": "blackhole"}], "edges": [{"from": "g", "to": "s"}]})
    assert cluster.wait_state(finished, ["FINISHED", "FAILED"])["state"] == "FINISHED"
    failed = cluster.submit({"name": "divide", "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}],
         "config": {"fields.x.kind": "sequence", "fields.x.start": "0", "fields.x.end": "10"}},
        {"id": "c", "type": "calc", "config": {"projection": ["10 / x AS y"]}},
        {"id": "s", "type": "blackhole"}], "edges": [{"from": "g", "to": "c"}, {"from": "c", "to": "s"}]})
    assert cluster.wait_state(failed, ["FAILED", "FINISHED"])["state"] == "FAILED"
    job = dict(ENDLESS, parallelism=2)
    job["edges"] = [{"from": "g", "to": "s", "strategy": "hash", "keys": ["x"]}]
    running = cluster.submit(job)
    cluster.wait_state(running, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in cluster.job(running)["vertices"]),
             what="the tasks to run")
    waiting = cluster.submit(dict(ENDLESS, name="too big", parallelism=5))
    wait_for(lambda: cluster.get(f"/sluice/jobs/{waiting}")["state-reason"], what="the waiting job's reason")
    _, sp = cluster.request("POST", f"/jobs/{running}/savepoints", {}, headers=json_hdr)
    wait_for(lambda: cluster.get(f"/jobs/{running}/savepoints/{sp['request-id']}")["status"]["id"] == "COMPLETED",
             what="the savepoint")
    _, ck = cluster.request("POST", f"/jobs/{running}/checkpoints", {}, headers=json_hdr)
    wait_for(lambda: cluster.get(f"/jobs/{running}/checkpoints/{ck['request-id']}")["status"]["id"] == "COMPLETED",
             what="the checkpoint")
    _, dp = cluster.request("POST", "/savepoint-disposal",
                            {"savepoint-path": os.path.join(workdir, "savepoints", "none")}, headers=json_hdr)
    jar_id, _ = upload_file(cluster, SILENCE)
    tm = cluster.get("/taskmanagers")["taskmanagers"][0]["id"]
    logs = cluster.get("/jobmanager/logs")["logs"]
    tm_logs = cluster.get(f"/taskmanagers/{tm}/logs")["logs"]

    def ids(jid):
        vid = cluster.job(jid)["vertices"][0]["id"]
        sub = cluster.get(f"/jobs/{jid}/vertices/{vid}")["subtasks"][0]
        latest = cluster.get(f"/jobs/{jid}/checkpoints")["latest"]["completed"]
        return {":jobid": jid, ":vertexid": vid, ":subtaskindex": "0", ":attempt": str(sub["attempt"]),
                ":checkpointid": str(latest["id"]) if latest else None,
                ":taskmanagerid": tm, ":filename": logs[0]["name"], ":applicationid": "0" * 32,
                ":rescaleuuid": "00000000-0000-4000-8000-000000000000",
                ":jarid": jar_id}

    def trigger(url, jid):
        if "/checkpoints/:triggerid" in url:
            return ck["request-id"] if jid == running else None
        if "/savepoints/:triggerid" in url:
            return sp["request-id"] if jid == running else None
        if url.startswith("/savepoint-disposal/"):
            return dp["request-id"]
        return "0" * 32

    lines, files, not_found, expect_404 = [], [], [], []
    for kind, jid in (("running", running), ("finished", finished), ("failed", failed),
                      ("waiting", waiting)):
        values = ids(jid)
        values[":triggerid"] = None
        for template, cls, param in endpoints:
            if ":jobid" not in template and kind != "running":
                continue  # one call is enough for what belongs to no job
            values[":triggerid"] = trigger(template, jid)
            values[":filename"] = (tm_logs if template.startswith("/taskmanagers/") else logs)[0]["name"]
            path, missing = template, None
            for key in sorted(values, key=len, reverse=True):
                if key in path:
                    if values[key] is None:
                        missing = key
                        break
                    path = path.replace(key, values[key])
            url = cluster.url + "/v1" + path
            if template == "/jars/:jarid/plan":  # the SilenceDetector's arguments
                url += "?programArg=" + os.path.join(workdir, "out") + "%203000"
            if template in FLINK_404 or missing:
                expect_404.append((kind, template, url))
            elif cls == "<file>":
                files.append((kind, template, url))
            else:
                lines.append("\t".join(["GET", url, cls, param]) + "\n")

    for kind, template, url in expect_404:
        status, body = raw_get(url)
        if status != 404 or not json.loads(body)["errors"]:
            not_found.append(f"{kind} {template}: {status} {body[:200]!r}")
    assert not not_found, "\n".join(not_found)

    results = run_harness(flink_home, workdir, lines)
    failures = [l for l in results if not l.startswith("OK")]
    assert not failures, "\n".join(failures)

    # the file endpoints: the daemons' log and stdout files themselves
    tmd = cluster.tms[0]
    paths = {"/taskmanagers/:taskmanagerid/log": tmd.log_path,
             "/taskmanagers/:taskmanagerid/stdout": tmd.out_path,
             "/taskmanagers/:taskmanagerid/logs/:filename": os.path.join(cluster.workdir, tm_logs[0]["name"]),
             "/jobmanager/logs/:filename": os.path.join(cluster.workdir, logs[0]["name"])}
    assert {t for _, t, _ in files} == set(paths), files
    for kind, template, url in files:
        status, body = raw_get(url)
        assert status == 200, (template, status, body[:200])
        with open(paths[template], "rb") as f:
            assert f.read().startswith(body[:1000]), template
        if template.endswith("/log"):
            assert b"registered at the JobManager as " + tm.encode() in body
    for path, want in (("/jobmanager/log", cluster.jm.log_path), ("/jobmanager/stdout", cluster.jm.out_path)):
        status, body = raw_get(cluster.url + path)  # Flink's static file handlers: not in the jar's list
        assert status == 200
        with open(want, "rb") as f:
            assert f.read().startswith(body[:1000]), path

    # contents, computed here
    assert [l["name"] for l in logs] == ["jobmanager.log", "jobmanager.out"]
    assert [l["name"] for l in tm_logs] == ["taskmanager0.log", "taskmanager0.out"]
    size = os.path.getsize(cluster.jm.log_path)
    assert 0 < logs[0]["size"] <= size
    for path, pid in (("/jobmanager/thread-dump", cluster.jm.proc.pid),
                      (f"/taskmanagers/{tm}/thread-dump", tmd.proc.pid)):
        def names(pid=pid):
            return sorted(open(f"/proc/{pid}/task/{t}/comm").read().strip()
                          for t in os.listdir(f"/proc/{pid}/task"))
        before = names()
        dump = cluster.get(path)["threadInfos"]
        # threads come and go (REST workers do not; task threads may): compare with
        # what /proc showed just before, which for these idle daemons is the same
        assert sorted(t["threadName"] for t in dump) in (before, names()), (path, dump)
        for t in dump:
            assert re.match(r'"[^"]*" Id=\d+ (RUNNABLE|WAITING|BLOCKED|TERMINATED) \(state [A-Za-z],',
                            t["stringifiedThreadInfo"]), t
        if path.startswith("/taskmanagers/"):
            # named threads: the workers, and the running job's 4 tasks ("<chain>.<subtask> <name>")
            got = [t["threadName"] for t in dump]
            assert {"snapshot-writer", "deploy-worker"} <= set(got), got
            assert sorted(n.split(" ")[0] for n in got if re.match(r"\d+\.\d+ ", n)) == \
                ["0.0", "0.1", "1.0", "1.1"], got
    env = cluster.get("/jobmanager/environment")
    with open(f"/proc/{cluster.jm.proc.pid}/cmdline", "rb") as f:
        assert env["jvm"]["options"] == [a.decode() for a in f.read().split(b"\0")[:-1]]
    assert env["jvm"]["arch"] == os.uname().machine
    assert any("libjansson" in p for p in env["classpath"]), env["classpath"]
    assert cluster.get(f"/jobs/{running}/execution-result") == {"status": {"id": "IN_PROGRESS"}}
    res = cluster.get(f"/jobs/{finished}/execution-result")["job-execution-result"]
    assert res["application-status"] == "SUCCEEDED" and res["id"] == finished and "failure-cause" not in res
    res = cluster.get(f"/jobs/{failed}/execution-result")["job-execution-result"]
    assert res["application-status"] == "FAILED" and "zero" in res["failure-cause"]["stack-trace"].lower()
    exc = cluster.get(f"/jobs/{failed}/exceptions")["exceptionHistory"]["entries"][0]
    assert exc["taskManagerId"] == tm and exc["failureLabels"] == {} and exc["concurrentExceptions"] == []
    tm_info = cluster.get(f"/taskmanagers/{tm}")
    assert exc["endpoint"].endswith(f":{tm_info['dataPort']}"), (exc, tm_info)
    req = cluster.get(f"/jobs/{running}/resource-requirements")
    assert {v: r["parallelism"] for v, r in req.items()} == \
        {v["id"]: {"lowerBound": 1, "upperBound": 2} for v in cluster.job(running)["vertices"]}
    vid = cluster.job(running)["vertices"][0]["id"]
    tms = cluster.get(f"/jobs/{running}/vertices/{vid}/taskmanagers")["taskmanagers"]
    assert [(t["taskmanager-id"], t["status-counts"]["RUNNING"]) for t in tms] == [(tm, 2)]
    times = cluster.get(f"/jobs/{running}/vertices/{vid}/subtasktimes")["subtasks"]
    assert [s["subtask"] for s in times] == [0, 1] and all(s["timestamps"]["RUNNING"] > 0 for s in times)
    assert cluster.get(f"/jobs/{running}/accumulators") == {
        "job-accumulators": [], "user-task-accumulators": [], "serialized-user-task-accumulators": {}}
    m = cluster.get("/jobs/metrics?get=numRestarts&agg=sum,max")
    assert m == [{"id": "numRestarts", "sum": 0.0, "max": 0.0}], m
    sub = cluster.get(f"/jobs/{running}/vertices/{vid}/subtasks/1")
    assert sub["subtask"] == 1 and sub["status"] == "RUNNING" and sub["taskmanager-id"] == tm
    for bad in ("2", "-1", "x"):
        status, body = raw_get(f"{cluster.url}/jobs/{running}/vertices/{vid}/subtasks/{bad}")
        assert status == 404 and "the vertex has subtasks 0 to 1" in json.loads(body)["errors"][0]
    for bad in ("..%2Fjobmanager.log", "nope.log"):
        assert raw_get(f"{cluster.url}/jobmanager/logs/{bad}")[0] == 404
        status, body = raw_get(f"{cluster.url}/taskmanagers/{tm}/logs/{bad}")
        assert status == 404 and (bad != "nope.log" or json.loads(body) == {
            "errors": ["no log file named 'nope.log'"]}), body
    status, body = raw_get(f"{cluster.url}/taskmanagers/nope/thread-dump")
    assert status == 404 and json.loads(body) == {"errors": ["TaskManager nope not found"]}
    cluster.request("PATCH", f"/jobs/{running}?mode=cancel")
    cluster.request("PATCH", f"/jobs/{waiting}?mode=cancel")
    cluster.wait_state(running, "CANCELED")
    cluster.wait_state(waiting, "CANCELED")


def thread_stacks(dump):
    """{thread name: [frame, ...] innermost first} from Flink's ThreadDumpInfo,
    with the first line (name, id, state) checked."""
    out = {}
    for t in dump["threadInfos"]:
        lines = t["stringifiedThreadInfo"].rstrip("\n").split("\n")
        assert re.match(r'"[^"]*" Id=\d+ (RUNNABLE|WAITING|BLOCKED|TERMINATED) \(state [A-Za-z],',
                        lines[0]), t
        assert lines[1].startswith("\tat (kernel) "), t
        out.setdefault(t["threadName"], []).append(
            [l[len("\tat "):] for l in lines[2:] if l.startswith("\tat ")] or lines[2:])
    return out


def test_thread_dumps_have_stacks(make_cluster, workdir):
    """Each thread's user-space stack in both daemons' thread dumps, named from
    the binaries' symbol tables: the TaskManager's task thread in its task loop
    (task_main) under the thread's start, its flame sampler taking the dump, the
    JobManager's main thread in its event loop and the REST thread answering."""
    from test_sql import job_ids, run_sql
    cluster = make_cluster()
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "dump.sql", """
CREATE TEMPORARY TABLE src (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TEMPORARY TABLE snk (y BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT x + 1 FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["RUNNING"])
    tm = cluster.get("/taskmanagers")["taskmanagers"][0]["id"]

    def task_thread():
        got = thread_stacks(cluster.get(f"/taskmanagers/{tm}/thread-dump"))
        tasks = [s for n, ss in got.items() if re.match(r"0\.0 ", n) for s in ss]
        return (got, tasks[0]) if tasks else None
    got, task = wait_for(task_thread, what="the task thread in the dump")
    assert "task_main" in task and task.index("task_main") < len(task) - 1, task  # start_thread outside it
    # a slow source waits in its mailbox (tm_gate_take) between its turns, or runs
    assert {"tm_gate_take", "datagen_run"} & set(task[:task.index("task_main")]), task
    sampler = got["flame-sampler"][0]
    assert sampler.index("sl_proc_thread_dump") < sampler.index("flame_main"), sampler
    assert "deploy-worker" in got and "snapshot-writer" in got, sorted(got)

    jm = thread_stacks(cluster.get("/jobmanager/thread-dump"))
    main = jm["sluice-jobmanag"][0]
    assert "main" in main and main.index("event_base_loop") < main.index("main"), main
    rest = [s for ss in jm.values() for s in ss if "sl_proc_thread_dump" in s]
    assert len(rest) == 1 and rest[0].index("sl_proc_thread_dump") < rest[0].index("jm_rest_process_routes"), rest
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")


def test_thread_dump_depth_is_configured(make_cluster):
    """cluster.thread-dump.stacktrace-max-depth (Flink's key): at 3 every
    thread of both daemons shows at most 3 user-space frames, a cut stack
    ending with "..." (the default, 50, is test_thread_dumps_have_stacks')."""
    cluster = make_cluster(jm_conf={"cluster.thread-dump.stacktrace-max-depth": "3"})
    cluster.add_tm(slots=1, extra={"cluster.thread-dump.stacktrace-max-depth": "3"})
    tm = cluster.get("/taskmanagers")["taskmanagers"][0]["id"]
    for path in ("/jobmanager/thread-dump", f"/taskmanagers/{tm}/thread-dump"):
        infos = cluster.get(path)["threadInfos"]
        cut = 0
        for t in infos:
            lines = t["stringifiedThreadInfo"].rstrip("\n").split("\n")
            frames = [l for l in lines[2:] if l.startswith("\tat ")]
            assert len(frames) <= 3, (path, t)
            if len(frames) == 3:
                assert lines[-1] == "\t...", (path, t)
                cut += 1
        assert cut >= 1, (path, infos)  # the event loops are deeper than 3
