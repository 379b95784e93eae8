"""Rescaling a running job: PUT /jobs/:id/resource-requirements and `sluice rescale`.

A sequence source (ids 1..n) into a keyed COUNT/SUM and into a raw sink, both
exactly-once file sinks that commit only on savepoints and the final
checkpoint, runs at parallelism 2; it is rescaled to 4 through the REST API
(Flink's body) and then to 1 through `sluice rescale -p 1`, while the source
still emits. The JobManager stops it with a savepoint and restores it each
time under the same job id. Proof, computed here from the sequence alone:
the raw sink holds every id once (nothing lost or repeated at either seam),
and the changelog of each run applied in turn gives COUNT/SUM per key over
1..n. The job's REST answers show the new parallelism, the rescale history
lists both rescales (and an ignored request that changed nothing) in Flink's
shape, read with Flink's own response classes. Bad bodies are refused with
400 and a message naming what is wrong.
"""
import os
import re

from conftest import wait_for
from test_checkpoints import (agg_job, apply_changelog, committed_files, expected_agg, raw_ids,
                              vertex_records_out)
from test_flink_cli import flink_home, run_harness  # noqa: F401 (fixture)
from test_savepoints import exactly_once, new_files, wait_progress

NO_PERIODIC = {"execution.checkpointing.interval": "1 h"}  # sinks stage; savepoints commit
HIST = "org.apache.flink.runtime.rest.messages.job.rescales."


def requirements(c, jid, p):
    return {v["id"]: {"parallelism": {"lowerBound": p, "upperBound": p}} for v in c.job(jid)["vertices"]}


def put(c, jid, body):
    return c.request("PUT", f"/jobs/{jid}/resource-requirements", body)


def parallelisms(c, jid):
    return {v["name"]: v["parallelism"] for v in c.job(jid)["vertices"]}


def wait_rescaled(c, jid, count):
    """Until the history holds `count` entries and the newest has ended."""
    def done():
        h = c.get(f"/jobs/{jid}/rescales/history")
        return len(h) == count and h[0]["terminalState"] is not None and h
    return wait_for(done, timeout=60, what=f"rescale {count} of {jid} to end")


def test_rescale_2_4_1_exactly_once(make_cluster, workdir, flink_home):  # noqa: F811
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    n, keys = 40000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000, p=2))
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), what="tasks")
    names = parallelisms(c, jid)
    assert set(names.values()) == {2}
    vids = [v["id"] for v in c.job(jid)["vertices"]]
    gen = next(v["id"] for v in c.job(jid)["vertices"] if v["name"] == "gen")

    # ---- refusals: 400 and what is wrong; nothing happens -------------------------
    good = requirements(c, jid, 4)
    bad = [
        (b"{", "the body must be a JSON object"),
        ([1, 2], "the body must be a JSON object of job vertex ids"),
        (dict(good, **{"0" * 32: {"parallelism": {"lowerBound": 1, "upperBound": 2}}}),
         f"job {jid} has no vertex {'0' * 32}"),
        (dict(good, **{gen: {"parallelism": {"lowerBound": 3, "upperBound": 2}}}),
         f"vertex {gen}: lowerBound 3 is above upperBound 2"),
        (dict(good, **{gen: {"parallelism": {"lowerBound": 0, "upperBound": 2}}}),
         f"vertex {gen}: parallelism.lowerBound 0 is out of range (1 to 32768)"),
        (dict(good, **{gen: {"parallelism": {"lowerBound": 1, "upperBound": 129}}}),
         f"vertex {gen}: upperBound 129 is above the job's maxParallelism 128"),
        (dict(good, **{gen: {"parallelism": {"lowerBound": 1, "upperBound": "4"}}}),
         f"vertex {gen}: parallelism.upperBound must be a whole number"),
        (dict(good, **{gen: {"parallelism": {"lowerBound": 1, "upperBound": 4, "min": 1}}}),
         f"vertex {gen}: unknown field parallelism.min"),
        ({k: v for k, v in good.items() if k != gen}, f"vertex {gen} (gen) is missing"),
        # gen feeds calc and the raw sink by forward edges: they must move together
        (dict(good, **{gen: {"parallelism": {"lowerBound": 2, "upperBound": 2}}}),
         "the job cannot run at that parallelism: "),
    ]
    for body, message in bad:
        status, answer = put(c, jid, body)
        assert status == 400 and message in answer["errors"][0], (body, status, answer)
    assert "forward needs equal parallelism" in put(c, jid, bad[-1][0])[1]["errors"][0]
    status, answer = c.request("PUT", f"/jobs/{jid}/resource-requirements", good,
                               headers={"Content-Type": "text/plain"})
    assert status == 415, answer
    assert c.get(f"/jobs/{jid}/rescales/history") == []

    # a global (parallelism-1) keyed operator fed by rebalance cannot be spread
    glob_job = {"name": "global", "parallelism": 1, "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
         "config": {"rows-per-second": "10"}},
        {"id": "agg", "type": "group_aggregate",
         "config": {"group-by": ["x"], "aggregates": ["COUNT(*) AS n"]}},
        {"id": "s", "type": "blackhole"}],
        "edges": [{"from": "g", "to": "agg", "strategy": "rebalance"}, {"from": "agg", "to": "s"}]}
    other = c.submit(glob_job)
    c.wait_state(other, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(other)["vertices"]), what="tasks")
    status, answer = put(c, other, requirements(c, other, 2))
    assert status == 400 and answer["errors"][0].startswith(
        "the job cannot run at that parallelism: vertex 'agg': a keyed operator with parallelism 2 "
        "needs its input from 'g' hashed on its key"), answer
    c.request("PATCH", f"/jobs/{other}?mode=cancel")
    c.wait_state(other, "CANCELED")

    # ---- Flink's client: the same parallelism is an ignored rescale -------------
    url = f"{c.url}/jobs/{jid}"
    import json
    res = run_harness(flink_home, workdir, [
        f"PUT\t{url}/resource-requirements\torg.apache.flink.runtime.rest.messages.EmptyResponseBody"
        f"\t-\t{json.dumps(requirements(c, jid, 2))}\n"])
    assert res[0].startswith("OK"), res
    hist = wait_rescaled(c, jid, 1)
    assert hist[0]["terminalState"] == "IGNORED"
    assert hist[0]["terminatedReason"] == "NO_RESOURCES_OR_PARALLELISMS_CHANGE"

    # ---- 2 -> 4 through REST ---------------------------------------------------
    wait_progress(c, jid, n // 8)
    status, answer = put(c, jid, good)
    assert status == 200 and answer == {}, answer
    status, answer = put(c, jid, good)  # one at a time
    assert status == 409 and "still in progress" in answer["errors"][0], answer
    hist = wait_rescaled(c, jid, 2)
    assert hist[0]["terminalState"] == "COMPLETED", hist[0]
    c.wait_state(jid, "RUNNING")
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    ids1 = raw_ids(run1_raw)
    assert 0 < len(ids1) < n, len(ids1)
    table = apply_changelog(run1_out)
    assert table == expected_agg(ids1, keys)  # the savepoint committed exactly what it saw
    assert c.job(jid)["jid"] == jid and set(parallelisms(c, jid).values()) == {4}
    assert c.get(f"/jobs/{jid}/resource-requirements") == good
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), what="tasks")
    cps = c.get(f"/jobs/{jid}/checkpoints")
    assert cps["latest"]["restored"]["is_savepoint"] is True

    # ---- 4 -> 1 through `sluice rescale` ---------------------------------------
    base = vertex_records_out(c, jid, "gen")
    wait_for(lambda: vertex_records_out(c, jid, "gen") >= base + 4000, what="rows at parallelism 4")
    r = c.cli("rescale", "-p", "1", jid, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    hist = c.get(f"/jobs/{jid}/rescales/history")
    lines = "".join(f"  {name}: 4 -> 1\n" for name in
                    [hist[0]["vertices"][v]["jobVertexName"] for v in hist[0]["vertices"]])
    assert re.fullmatch(rf"Rescaling job {jid}\.\n(Job {jid} is [^\n]*\n)*"
                        rf"Job {jid} is rescaled \(rescale {hist[0]['rescaleUuid']}\):\n"
                        + re.escape(lines), r.stdout), r.stdout
    run2_out, run2_raw = new_files(out, run1_out), new_files(raw, run1_raw)
    ids2 = raw_ids(run2_raw)
    assert len(ids2) > 0 and len(ids1) + len(ids2) < n, (len(ids1), len(ids2))
    table = apply_changelog(run2_out, table)
    assert table == expected_agg(list(ids1) + list(ids2), keys)
    assert set(parallelisms(c, jid).values()) == {1}

    # ---- the end: every id once, every key's count and sum -----------------------
    assert c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)["state"] == "FINISHED"
    run3_out = [p for p in committed_files(out) if p not in run1_out + run2_out]
    all_raw = committed_files(raw)
    exactly_once(raw_ids(all_raw), n)
    assert apply_changelog(run3_out, table) == expected_agg(range(1, n + 1), keys)
    assert c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"] == []

    # ---- the history, in Flink's shape -----------------------------------------
    hist = c.get(f"/jobs/{jid}/rescales/history")
    assert [h["terminalState"] for h in hist] == ["COMPLETED", "COMPLETED", "IGNORED"]
    assert [h["rescaleAttemptId"] for h in hist] == [3, 2, 1]
    for h, pre, post in ((hist[0], 4, 1), (hist[1], 2, 4), (hist[2], 2, 2)):
        assert h["triggerCause"] == "UPDATE_REQUIREMENT"
        assert sorted(h["vertices"]) == sorted(vids)
        assert {(v["preRescaleParallelism"], v["postRescaleParallelism"]) for v in
                h["vertices"].values()} == {(pre, post)}
        assert h["endTimestampInMillis"] >= h["startTimestampInMillis"]
    assert [(h["slots"][jid]["preRescaleSlots"], h["slots"][jid]["postRescaleSlots"]) for h in hist] == \
        [(4, 1), (2, 4), (2, 2)]  # one slot-sharing group, named by the job
    assert [s["state"] for s in hist[1]["schedulerStates"]] == \
        ["StopWithSavepoint", "WaitingForResources", "Executing"]
    ov = c.get(f"/jobs/{jid}/rescales/overview")
    assert ov["rescalesCounts"] == {"ignored": 1, "inProgress": 0, "completed": 2, "failed": 0}
    assert ov["latest"]["completed"]["rescaleUuid"] == hist[0]["rescaleUuid"]
    assert ov["latest"]["failed"] is None
    durs = sorted(h["endTimestampInMillis"] - h["startTimestampInMillis"] for h in hist[:2])
    summ = c.get(f"/jobs/{jid}/rescales/summary")["completedRescalesDurationStatsInMillis"]
    assert (summ["min"], summ["max"], summ["avg"]) == (durs[0], durs[1], sum(durs) // 2)
    assert c.get(f"/jobs/{jid}/rescales/details/{hist[1]['rescaleUuid']}") == hist[1]
    res = run_harness(flink_home, workdir, [
        f"GET\t{url}/rescales/history\t{HIST}JobRescalesHistory\n",
        f"GET\t{url}/rescales/overview\t{HIST}JobRescalesOverview\n",
        f"GET\t{url}/rescales/summary\t{HIST}JobRescalesSummary\n",
        f"GET\t{url}/rescales/config\t{HIST}JobRescaleConfigInfo\n",
        f"GET\t{url}/rescales/details/{hist[1]['rescaleUuid']}\t{HIST}JobRescaleDetails\n",
        f"GET\t{url}/resource-requirements\torg.apache.flink.runtime.rest.messages.job."
        "JobResourceRequirementsBody\n"])
    assert all(x.startswith("OK") for x in res), res


def test_rescale_waits_for_slots_and_says_so(make_cluster, workdir):
    """With lowerBound 1 a rescale takes the slots there are (2 of the 3 asked
    for); `sluice rescale -p 3` asks for exactly 3, so the job waits, saying so in
    its state-reason and in the CLI's output, until a TaskManager brings a slot."""
    import subprocess
    import threading
    from conftest import BIN
    c = make_cluster()
    c.add_tm(slots=2)
    job = {"name": "endless", "parallelism": 1, "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
         "config": {"rows-per-second": "100"}},
        {"id": "s", "type": "blackhole"}], "edges": [{"from": "g", "to": "s", "strategy": "rebalance"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), what="tasks")
    body = {v["id"]: {"parallelism": {"lowerBound": 1, "upperBound": 3}} for v in c.job(jid)["vertices"]}
    assert put(c, jid, body) == (200, {})
    h = wait_rescaled(c, jid, 1)[0]
    assert h["terminalState"] == "COMPLETED"
    assert {(v["desiredParallelism"], v["sufficientParallelism"], v["preRescaleParallelism"],
             v["postRescaleParallelism"]) for v in h["vertices"].values()} == {(3, 1, 1, 2)}
    assert [v["parallelism"] for v in c.job(jid)["vertices"]] == [2, 2]
    assert c.get(f"/jobs/{jid}/resource-requirements") == body
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), what="tasks")

    cli = subprocess.Popen([os.path.join(BIN, "sluice"), "-m", f"127.0.0.1:{c.rest_port}", "rescale",
                            "--vertex", "g=3", "--vertex", "s=3", jid],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(60, cli.kill)  # a hung CLI fails the test, never hangs it
    watchdog.start()
    try:
        reason = "rescaling: waiting for 3 slots, 2 free"
        # the CLI says why it waits (its second line) before a slot comes
        first = cli.stdout.readline() + cli.stdout.readline()
        assert first == f"Rescaling job {jid}.\nJob {jid} is {reason}.\n", first
        assert c.get(f"/sluice/jobs/{jid}")["state-reason"] == reason
        assert c.job(jid)["state"] == "CREATED" and c.job(jid)["jid"] == jid
        assert c.get(f"/jobs/{jid}/rescales/history")[0]["terminalState"] is None
        assert c.get(f"/jobs/{jid}/rescales/overview")["rescalesCounts"]["inProgress"] == 1
        c.add_tm(slots=2)
        out, err = cli.communicate(timeout=60)
        out = first + out
    finally:
        watchdog.cancel()
        cli.kill()
    assert cli.returncode == 0, out + err
    h = c.get(f"/jobs/{jid}/rescales/history")[0]
    assert out == (f"Rescaling job {jid}.\nJob {jid} is {reason}.\n"
                   f"Job {jid} is rescaled (rescale {h['rescaleUuid']}):\n  g: 2 -> 3\n  s: 2 -> 3\n"), out
    assert [s["state"] for s in h["schedulerStates"]] == ["StopWithSavepoint", "WaitingForResources",
                                                          "Executing"]
    assert c.job(jid)["state"] == "RUNNING" and [v["parallelism"] for v in c.job(jid)["vertices"]] == [3, 3]
    # the CLI's own refusals
    r = c.cli("rescale", "--vertex", "nope=2", jid)
    assert r.returncode == 1 and f"job {jid} has no vertex 'nope'" in r.stderr, r.stderr
    r = c.cli("rescale", "-p", "0", jid)
    assert r.returncode == 2 and "-p needs a parallelism (1 to 32768)" in r.stderr, r.stderr
    r = c.cli("rescale", "-p", "200", jid)
    assert r.returncode == 1 and "upperBound 200 is above the job's maxParallelism 128" in r.stderr
    # a query whose rows go to a client cannot be rescaled
    sel = c.submit({"name": "select", "parallelism": 1, "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
         "config": {"rows-per-second": "10"}},
        {"id": "rows", "type": "collect"}], "edges": [{"from": "g", "to": "rows"}]})
    c.wait_state(sel, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(sel)["vertices"]), what="tasks")
    status, answer = put(c, sel, requirements(c, sel, 1))
    assert status == 400 and answer["errors"] == [
        f"job {sel} sends a query's rows to a client (collect sink 'rows'): it cannot be rescaled"]
    # and a job that is not running is refused with 409
    c.request("PATCH", f"/jobs/{sel}?mode=cancel")
    c.wait_state(sel, "CANCELED")
    status, answer = put(c, sel, requirements(c, sel, 1))
    assert status == 409 and answer["errors"] == [
        f"job {sel} is CANCELED: only a RUNNING job can be rescaled"], answer
    # cancelled while it waits for slots: the rescale ends FAILED, JOB_CANCELED
    assert put(c, jid, requirements(c, jid, 8)) == (200, {})
    wait_for(lambda: c.get(f"/sluice/jobs/{jid}")["state-reason"] == "rescaling: waiting for 8 slots, 4 free",
             what="the wait for 8 slots")
    c.request("PATCH", f"/jobs/{jid}?mode=cancel")
    c.wait_state(jid, "CANCELED")
    h = c.get(f"/jobs/{jid}/rescales/history")[0]
    assert (h["terminalState"], h["terminatedReason"]) == ("FAILED", "JOB_CANCELED"), h
    assert [(s["state"], s["stringifiedException"]) for s in h["schedulerStates"]] == \
        [("StopWithSavepoint", None), ("WaitingForResources", "the job was cancelled")]
    assert c.get(f"/jobs/{jid}/rescales/overview")["rescalesCounts"] == \
        {"ignored": 0, "inProgress": 0, "completed": 2, "failed": 1}
    assert c.get(f"/jobs/{jid}/rescales/overview")["latest"]["failed"]["rescaleUuid"] == h["rescaleUuid"]


def test_rescale_whose_savepoint_fails_keeps_the_job_running(make_cluster, workdir):
    """A rescale whose savepoint fails (state.savepoints.dir lies under a
    regular file, so no subtask can write its state there) leaves the job
    running at its old parallelism, as Flink does: the sources, which stop
    emitting at a stop's savepoint, read on once it failed; no restart; the
    rescale history records the failure and its reason. The job then runs to
    its end and its exactly-once sinks hold every id once and every key's
    COUNT/SUM: the failed savepoint lost and repeated nothing."""
    blocker = os.path.join(workdir, "a-file")
    open(blocker, "w").close()
    c = make_cluster(jm_conf=dict(NO_PERIODIC, **{"state.savepoints.dir": os.path.join(blocker, "sp")}))
    c.add_tm(slots=4)
    n, keys = 20000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000, p=2))
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), what="tasks")
    wait_progress(c, jid, n // 10)
    assert put(c, jid, requirements(c, jid, 4)) == (200, {})
    h = wait_rescaled(c, jid, 1)[0]
    assert (h["terminalState"], h["terminatedReason"]) == ("FAILED", "EXCEPTION_OCCURRED"), h
    why = h["schedulerStates"][-1]["stringifiedException"]
    assert re.search(r"its savepoint \d+ failed: .* declined: .*a-file/sp", why), why
    assert [s["state"] for s in h["schedulerStates"]] == ["StopWithSavepoint"]
    ov = c.get(f"/jobs/{jid}/rescales/overview")
    assert ov["rescalesCounts"]["failed"] == 1 and ov["latest"]["failed"]["rescaleUuid"] == h["rescaleUuid"]
    # still running as before: no restart, the old parallelism, rows still coming
    assert c.job(jid)["state"] == "RUNNING" and set(parallelisms(c, jid).values()) == {2}
    assert c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"] == []
    assert "restarts (attempt" not in c.jm.log_text()
    base = vertex_records_out(c, jid, "gen")
    wait_for(lambda: vertex_records_out(c, jid, "gen") >= base + 2000, what="rows after the failed rescale")
    assert c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)["state"] == "FINISHED"
    exactly_once(raw_ids(committed_files(raw)), n)
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)
    assert c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"] == []


def endless_job(rate=100):
    return {"name": "endless", "parallelism": 1, "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
         "config": {"rows-per-second": str(rate)}},
        {"id": "s", "type": "blackhole"}], "edges": [{"from": "g", "to": "s", "strategy": "rebalance"}]}


def rescale_savepoint(c, jid):
    """The newest rescale's savepoint in the checkpoint history: (entry, local path)."""
    sp = next(h for h in c.get(f"/jobs/{jid}/checkpoints")["history"] if h["is_savepoint"])
    return sp, re.sub(r"^file:", "", sp["external_path"])


def rescale_to(c, jid, p, count):
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), what="tasks")
    body = {v["id"]: {"parallelism": {"lowerBound": p, "upperBound": p}} for v in c.job(jid)["vertices"]}
    assert put(c, jid, body) == (200, {})
    assert wait_rescaled(c, jid, count)[0]["terminalState"] == "COMPLETED"


def test_rescale_savepoints_are_deleted_once_replaced(make_cluster, workdir):
    """The savepoint a rescale takes is the job's restore point until a
    checkpoint at the new parallelism completes; then its directory is deleted
    (the history marks it discarded). Without periodic checkpoints it stays
    while the job runs, is deleted when a later rescale's savepoint replaces
    it, and the last one when the job is cancelled. state.savepoints.rescale.retain
    keeps them all."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "state.savepoints.dir": os.path.join(workdir, "sp")})
    c.add_tm(slots=4)
    jid = c.submit(endless_job())
    c.wait_state(jid, "RUNNING")
    rescale_to(c, jid, 2, 1)
    sp, path = rescale_savepoint(c, jid)
    assert os.path.isfile(os.path.join(path, "_metadata"))
    # a checkpoint at parallelism 2 completes: the savepoint goes
    wait_for(lambda: not os.path.exists(path), what=f"{path} deleted")
    done = c.get(f"/jobs/{jid}/checkpoints")
    assert done["latest"]["completed"]["id"] > sp["id"]
    assert next(h for h in done["history"] if h["id"] == sp["id"])["discarded"] is True
    assert f"the savepoint {sp['id']} of its rescale is deleted" in c.jm.log_text()
    c.request("PATCH", f"/jobs/{jid}?mode=cancel")
    c.wait_state(jid, "CANCELED")

    # no periodic checkpoints: kept while it is the restore point
    c2 = make_cluster(jm_conf={"state.savepoints.dir": os.path.join(workdir, "sp2")})
    c2.add_tm(slots=4)
    jid = c2.submit(endless_job())
    c2.wait_state(jid, "RUNNING")
    rescale_to(c2, jid, 2, 1)
    _, first = rescale_savepoint(c2, jid)
    rescale_to(c2, jid, 3, 2)
    _, second = rescale_savepoint(c2, jid)
    assert first != second and os.path.isfile(os.path.join(second, "_metadata"))
    wait_for(lambda: not os.path.exists(first), what=f"{first} deleted")
    c2.request("PATCH", f"/jobs/{jid}?mode=cancel")
    c2.wait_state(jid, "CANCELED")
    wait_for(lambda: not os.path.exists(second), what=f"{second} deleted")

    # retained
    c3 = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                               "state.savepoints.dir": os.path.join(workdir, "sp3"),
                               "state.savepoints.rescale.retain": "true"})
    c3.add_tm(slots=4)
    jid = c3.submit(endless_job())
    c3.wait_state(jid, "RUNNING")
    rescale_to(c3, jid, 2, 1)
    sp, path = rescale_savepoint(c3, jid)
    wait_for(lambda: (c3.get(f"/jobs/{jid}/checkpoints")["latest"]["completed"] or {"id": 0})["id"] > sp["id"],
             what="a checkpoint after the rescale")
    c3.request("PATCH", f"/jobs/{jid}?mode=cancel")
    c3.wait_state(jid, "CANCELED")
    assert os.path.isfile(os.path.join(path, "_metadata"))
    assert "of its rescale is deleted" not in c3.jm.log_text()
