"""Whole-cluster tests of the skeleton: registration and heartbeats,
scheduling with slot sharing, the waiting reason, REST errors, the CLI, and
robustness against garbage on the RPC port."""
import copy
import datetime
import glob
import json
import os
import socket
import struct
import time

import pytest

from conftest import ROOT, wait_for


def load_example(name):
    with open(os.path.join(ROOT, "examples", name)) as f:
        return json.load(f)


def even_ids_job(outdir, n=100000, p=2):
    job = load_example("even-ids.json")
    job["parallelism"] = p
    gen = job["vertices"][0]
    gen["config"]["fields.id.end"] = str(n)
    gen["config"]["rows-per-second"] = "1000000"
    job["vertices"][2]["config"]["path"] = outdir
    return job


def read_json_lines(outdir):
    rows = []
    for path in sorted(glob.glob(os.path.join(outdir, "part-*"))):
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def ts_ms(text):
    """'2026-01-01 00:00:00.02' -> epoch ms (UTC); a TIMESTAMP_LTZ's trailing 'Z'
    (the json format writes the instant in UTC, as Flink's) is the same."""
    text = text[:-1] if text.endswith("Z") else text
    d = datetime.datetime.strptime(text + ("" if "." in text else ".0"), "%Y-%m-%d %H:%M:%S.%f")
    return int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + 0.5)


def test_taskmanagers_register_and_overview(cluster):
    cluster.add_tm(slots=2)
    cluster.add_tm(slots=3)
    tms = cluster.get("/taskmanagers")["taskmanagers"]
    assert sorted((t["id"], t["slotsNumber"], t["freeSlots"]) for t in tms) == [
        ("tm-0", 2, 2), ("tm-1", 3, 3)]
    for t in tms:
        assert t["dataPort"] > 0 and t["hardware"]["cpuCores"] >= 1
        assert t["hardware"]["physicalMemory"] > 0
    ov = cluster.get("/overview")
    assert (ov["taskmanagers"], ov["slots-total"], ov["slots-available"]) == (2, 5, 5)
    assert ov["jobs-running"] == 0
    detail = cluster.get("/taskmanagers/tm-1")
    assert detail["allocatedSlots"] == []
    status, body = cluster.request("GET", "/taskmanagers/nope")
    assert status == 404 and "nope" in body["errors"][0]


def test_parallel_job_exact_output_one_subtask_per_taskmanager(cluster, workdir):
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    n = 100000
    jid = cluster.submit(even_ids_job(out, n=n, p=2))
    job = cluster.wait_state(jid, ["FINISHED", "FAILED"])
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    rows = read_json_lines(out)
    # expected, computed independently: every even id, user = id % 5, ts = base + 10 ms * id
    base = 1767225600000
    got = sorted((r["id"], r["user_id"], ts_ms(r["ts"])) for r in rows)
    assert got == [(i, i % 5, base + 10 * i) for i in range(2, n + 1, 2)]
    # calc -> out ran with parallelism 2: one file per subtask (round-robin
    # hands all odd ids to subtask 0, so its file is empty after the filter)
    parts = sorted(glob.glob(os.path.join(out, "part-*")))
    assert [os.path.basename(p) for p in parts] == ["part-0", "part-1"]
    # chaining: calc -> out is one vertex; gen is its own
    names = sorted(v["name"] for v in job["vertices"])
    assert names == ["calc -> out", "gen"]
    plan = {n["description"]: n for n in job["plan"]["nodes"]}
    assert plan["calc -> out"]["inputs"][0]["ship_strategy"] == "REBALANCE"
    # one subtask of the parallel vertex on each TaskManager
    vid = [v["id"] for v in job["vertices"] if v["name"] == "calc -> out"][0]
    subs = cluster.get(f"/sluice/jobs/{jid}/vertices/{vid}/subtasks")["subtasks"]
    assert sorted(s["taskmanager-id"] for s in subs) == ["tm-0", "tm-1"]
    # slots are free again
    assert cluster.get("/overview")["slots-available"] == 2
    ov = cluster.get("/jobs/overview")["jobs"][0]
    assert ov["jid"] == jid and ov["state"] == "FINISHED" and ov["tasks"]["finished"] == 3


def test_waiting_for_slots_is_explained_then_fails(make_cluster):
    c = make_cluster(jm_conf={"slot.request.timeout": "3 s"})
    c.add_tm(slots=2)
    job = {"name": "too wide", "parallelism": 3,
           "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}],
                         "config": {"number-of-rows": "10"}},
                        {"id": "s", "type": "blackhole"}],
           "edges": [{"from": "g", "to": "s"}]}
    jid = c.submit(job)
    reason = "waiting for 3 slots, 2 free"
    wait_for(lambda: c.get(f"/sluice/jobs/{jid}")["state-reason"] == reason, what="reason")
    assert c.job(jid)["state"] == "CREATED"
    ov = [x for x in c.get("/sluice/jobs/overview")["jobs"] if x["jid"] == jid][0]
    assert ov["state-reason"] == reason
    listing = c.cli("list", check=True).stdout
    assert jid in listing and reason in listing and "(CREATED)" in listing
    c.wait_state(jid, "FAILED", timeout=20)
    why = c.get(f"/sluice/jobs/{jid}")["state-reason"]
    assert "slot.request.timeout" in why and reason in why
    exc = c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
    assert exc and reason in exc[0]["stacktrace"]
    assert c.get("/overview")["slots-available"] == 2


def test_job_waits_then_runs_when_a_taskmanager_arrives(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "o")
    jid = cluster.submit(even_ids_job(out, n=1000, p=2))
    wait_for(lambda: cluster.get(f"/sluice/jobs/{jid}")["state-reason"] == "waiting for 2 slots, 1 free")
    cluster.add_tm(slots=1)
    job = cluster.wait_state(jid, ["FINISHED", "FAILED"])
    assert job["state"] == "FINISHED" and cluster.get(f"/sluice/jobs/{jid}")["state-reason"] is None
    assert len(read_json_lines(out)) == 500


def test_lost_taskmanager_is_removed_within_heartbeat_timeout(cluster):
    cluster.add_tm(slots=1)
    tm = cluster.add_tm(slots=2)
    tm.kill()
    t0 = time.monotonic()
    wait_for(lambda: [t["id"] for t in cluster.get("/taskmanagers")["taskmanagers"]] == ["tm-0"],
             timeout=10, what="tm-1 to disappear")
    assert time.monotonic() - t0 < 2.0 + 1.0  # heartbeat.timeout plus one check period
    assert cluster.get("/overview")["slots-total"] == 1


def test_lost_taskmanager_fails_its_running_job(cluster):
    cluster.add_tm(slots=1)
    tm = cluster.add_tm(slots=1)
    job = {"name": "forever", "parallelism": 2,
           "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
                         "config": {"rows-per-second": "1000"}},
                        {"id": "s", "type": "blackhole"}],
           "edges": [{"from": "g", "to": "s", "strategy": "rebalance"}]}
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: cluster.job(jid)["status-counts"]["RUNNING"] == 2, what="tasks running")
    tm.kill()
    cluster.wait_state(jid, "FAILED", timeout=15)
    assert "tm-1" in cluster.get(f"/sluice/jobs/{jid}")["state-reason"]
    assert cluster.get("/overview")["slots-available"] == 1


def test_taskmanager_retries_until_the_jobmanager_is_up(make_cluster, workdir):
    from conftest import Cluster, Daemon, BIN
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    tm = Daemon("early-tm", [os.path.join(BIN, "sluice-taskmanager"),
                             "-D", "jobmanager.rpc.address=127.0.0.1",
                             "-D", f"jobmanager.rpc.port={port}",
                             "-D", "heartbeat.interval=200 ms",
                             "-D", "taskmanager.resource-id=early"], workdir)
    try:
        time.sleep(0.5)  # the TaskManager is up and failing to connect
        assert tm.alive()
        c = make_cluster(jm_conf={"jobmanager.rpc.port": str(port)})
        wait_for(lambda: [t["id"] for t in c.get("/taskmanagers")["taskmanagers"]] == ["early"],
                 what="early TaskManager to register")
        # the JobManager goes away and comes back: the TaskManager registers again
        c.jm.kill()
        assert tm.alive()
        c2 = make_cluster(jm_conf={"jobmanager.rpc.port": str(port)})
        wait_for(lambda: [t["id"] for t in c2.get("/taskmanagers")["taskmanagers"]] == ["early"],
                 what="re-registration")
    finally:
        assert tm.stop() == 0


BAD_GRAPHS = [
    ("{not json", "not valid JSON"),
    ("[]", "must be a JSON object"),
    ({"vertices": []}, "'vertices' must be a non-empty array"),
    ({"vertices": [{"id": "a", "type": "nosuch"}]}, "vertex 'a': unknown type 'nosuch'"),
    ({"vertices": [{"type": "print"}]}, "vertex 1: missing string 'id'"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}],
                    "config": {"rows-per-secnd": "5"}}, {"id": "p", "type": "print"}],
      "edges": [{"from": "g", "to": "p"}]}, "vertex 'g': unknown option 'rows-per-secnd'"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}]},
                   {"id": "c", "type": "calc", "config": {"projection": ["y + 1"]}},
                   {"id": "p", "type": "print"}],
      "edges": [{"from": "g", "to": "c"}, {"from": "c", "to": "p"}]}, "unknown column 'y'"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}]},
                   {"id": "c", "type": "calc", "config": {"filter": "x + 'a' = 1"}},
                   {"id": "p", "type": "print"}],
      "edges": [{"from": "g", "to": "c"}, {"from": "c", "to": "p"}]}, "vertex 'c'"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}]},
                   {"id": "a", "type": "calc"}, {"id": "b", "type": "calc"},
                   {"id": "p", "type": "print"}],
      "edges": [{"from": "g", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "a"},
                {"from": "b", "to": "p"}]}, "cycle"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}],
                    "parallelism": 1},
                   {"id": "p", "type": "print", "parallelism": 2}],
      "edges": [{"from": "g", "to": "p", "strategy": "forward"}]}, "forward needs equal parallelism"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}]},
                   {"id": "p", "type": "print"}],
      "edges": [{"from": "g", "to": "p", "strategy": "hash", "keys": ["nope"]}]}, "key nope"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}]},
                   {"id": "p", "type": "print"}],
      "edges": [{"from": "g", "to": "q"}]}, "unknown vertex 'q'"),
    ({"vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}]}]},
     "vertex 'g': its output goes nowhere"),
    ({"vertices": [{"id": "p", "type": "print"}]}, "vertex 'p': has no input edge"),
]


@pytest.mark.parametrize("body,needle", BAD_GRAPHS, ids=[n for _, n in BAD_GRAPHS])
def test_bad_job_graph_gets_400_naming_the_problem(cluster, body, needle):
    cluster.add_tm(slots=1)
    status, resp = cluster.request("POST", "/jobs", body if isinstance(body, str) else json.dumps(body))
    assert status == 400, resp
    assert needle in resp["errors"][0], resp
    assert cluster.get("/jobs")["jobs"] == []


def test_garbage_on_rpc_port_does_not_hurt_the_jobmanager(cluster):
    cluster.add_tm(slots=1)
    payloads = [
        b"\x00\x00\x00\x00",                      # zero-length frame
        b"\xff\xff\xff\xff" + b"x" * 100,         # oversized length
        b"\x00\x00\x00\x05hello",                 # undecodable message
        b"GET / HTTP/1.1\r\n\r\n",                # wrong protocol
        struct.pack(">I", 4) + b"\x0a\x02\x08\x63",  # Hello with version 99
        os.urandom(4096),
    ]
    for p in payloads:
        s = socket.create_connection(("127.0.0.1", cluster.rpc_port))
        s.sendall(p)
        s.settimeout(5)
        try:
            while s.recv(4096):
                pass  # the JobManager closes the connection
        except (ConnectionResetError, socket.timeout):
            pass
        s.close()
    # a truncated frame from a peer that then vanishes
    s = socket.create_connection(("127.0.0.1", cluster.rpc_port))
    s.sendall(b"\x00\x00\x01\x00abc")
    s.close()
    assert cluster.jm.alive()
    log = cluster.jm.log_text()
    assert "bad frame length 0" in log and "protocol version 99" in log
    # still serving: the TaskManager is registered and a new one can join
    cluster.add_tm(slots=1)
    assert cluster.get("/overview")["taskmanagers"] == 2


def test_cli_run_list_cancel(cluster, workdir):
    cluster.add_tm(slots=1)
    job = {"name": "endless", "parallelism": 1,
           "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
                         "config": {"rows-per-second": "100"}},
                        {"id": "s", "type": "blackhole"}],
           "edges": [{"from": "g", "to": "s"}]}
    path = os.path.join(workdir, "endless.json")
    with open(path, "w") as f:
        json.dump(job, f)
    r = cluster.cli("run", "-d", path, check=True)
    assert r.stdout.startswith("Job has been submitted with JobID ")
    jid = r.stdout.split()[-1]
    assert len(jid) == 32
    cluster.wait_state(jid, "RUNNING")
    out = cluster.cli("list", check=True).stdout
    assert "------------------ Running/Restarting Jobs -------------------" in out
    assert f" : {jid} : endless (RUNNING)" in out
    r = cluster.cli("cancel", jid, check=True)
    assert f"Cancelling job {jid}." in r.stdout
    cluster.wait_state(jid, "CANCELED")
    out = cluster.cli("list", "-a", check=True).stdout
    assert f" : {jid} : endless (CANCELED)" in out and "No running jobs." in out
    # errors from the server are printed plainly, with a non-zero status
    r = cluster.cli("cancel", "0" * 32)
    assert r.returncode != 0 and "not found" in r.stderr


def test_cli_run_waits_for_the_result(cluster, workdir):
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "o")
    path = os.path.join(workdir, "job.json")
    with open(path, "w") as f:
        json.dump(even_ids_job(out, n=2000, p=2), f)
    r = cluster.cli("run", path, check=True)
    assert "Job has been submitted with JobID" in r.stdout and "FINISHED" in r.stdout
    assert len(read_json_lines(out)) == 1000
    # -p overrides the job's parallelism
    r = cluster.cli("run", "-p", "1", path, check=True)
    jid = r.stdout.split("JobID ")[1].split()[0]
    calc = [v for v in cluster.job(jid)["vertices"] if v["name"] == "calc -> out"][0]
    assert calc["parallelism"] == 1


def test_failing_task_fails_the_job_with_its_error(cluster):
    cluster.add_tm(slots=1)
    job = {"name": "divide", "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}],
         "config": {"fields.x.kind": "sequence", "fields.x.start": "0", "fields.x.end": "10"}},
        {"id": "c", "type": "calc", "config": {"projection": ["10 / x AS y"]}},
        {"id": "s", "type": "blackhole"}],
        "edges": [{"from": "g", "to": "c"}, {"from": "c", "to": "s"}]}
    jid = cluster.submit(job)
    j = cluster.wait_state(jid, ["FAILED", "FINISHED"])
    assert j["state"] == "FAILED"
    exc = cluster.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
    assert exc and "zero" in exc[0]["exceptionName"].lower()
    assert exc[0]["taskName"].startswith("g -> c -> s (1/1)")
