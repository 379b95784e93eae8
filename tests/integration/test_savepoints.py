"""Savepoints, stop-with-savepoint and rescaling, driven through the CLI.

- The operational recipe verbatim: `sluice list`, `sluice stop --savepoint
  file://<dir> <JOB_ID>` ("Savepoint completed. Path: file:<dir>/savepoint-
  <first 6 of the id>-<12 hex>"), the job FINISHED, then `sluice run -s
  <path> -p 4 job.json` carries on. Proof: a sequence source into a keyed
  COUNT/SUM, restored 2 -> 4, and a windowed job restored 4 -> 2 from a
  savepoint moved to another directory, each on both state backends; the
  committed output of both runs together equals what is worked out here
  from the sequence, every id of the source exactly once, nothing lost or
  repeated at the seam.
- `sluice savepoint JOBID` into state.savepoints.dir while the job runs,
  then cancel: restoring from that savepoint still gives every row once.
- `stop --drain` fires every window before the savepoint.
- Refusals: a renamed uid (named in the error; accepted with -n, where that
  operator starts empty), another maxParallelism, a truncated _metadata, a
  damaged state file (refused at submission, naming it). `sluice savepoint
  check` for a rescale and for a renamed uid; `sluice savepoint -d` removes
  the directory.
- `savepoint check` reads every byte of every state file: a flipped byte in
  a section's payload (which the restore would find only on a TaskManager)
  and a truncated file are each named with what is wrong (the CRCs worked
  out here), by the CLI (exit 1) and by POST /savepoints/check (400); an
  intact savepoint passes.

Output is read with the helpers of test_checkpoints.py: committed part
files in write order, the aggregate's changelog applied with every -U
checked against the value it retracts.
"""
import collections
import datetime
import glob
import json
import os
import re
import shutil
import struct

import pytest

from conftest import wait_for
from test_checkpoints import (PART, agg_job, apply_changelog, check_snapshot_files,
                              committed_files, expected_agg, raw_ids, read_metadata, read_rows,
                              vertex_records_out)

BASE = 1767225600000  # 2026-01-01T00:00:00Z
NO_PERIODIC = {"execution.checkpointing.interval": "1 h"}  # sinks stage; only savepoints commit


def write_job(workdir, name, job):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        json.dump(job, f)
    return path


def exactly_once(ids, n):
    """Every id of 1..n exactly once; a readable failure otherwise."""
    dup = sorted(i for i, m in ids.items() if m != 1)
    missing = sorted(set(range(1, n + 1)) - set(ids))
    extra = sorted(set(ids) - set(range(1, n + 1)))
    assert not dup and not missing and not extra, \
        f"duplicated {dup[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)}), extra {extra[:10]}"


def new_files(directory, before):
    return [p for p in committed_files(directory) if p not in before]


def wait_progress(c, jid, rows, timeout=20):
    """Until the source has emitted at least `rows` rows (from its metrics)."""
    return wait_for(lambda: vertex_records_out(c, jid, "gen") >= rows, timeout=timeout,
                    what=f"{rows} rows out of the source of {jid}")


def stop_with_savepoint(c, jid, target, drain=False):
    """`sluice stop [--drain] --savepoint target JOBID`; checks Flink's two lines
    and returns the savepoint's local path."""
    args = ["stop", "--savepoint", target] + (["--drain"] if drain else []) + [jid]
    r = c.cli(*args, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    base = target[len("file://"):] if target.startswith("file://") else target
    m = re.fullmatch(
        rf'{"Draining" if drain else "Suspending"} job "{jid}" with a CANONICAL savepoint\.\n'
        rf"Savepoint completed\. Path: file:({re.escape(base)}/savepoint-{jid[:6]}-[0-9a-f]{{12}})\n",
        r.stdout)
    assert m, r.stdout
    assert r.stderr == ""
    path = m.group(1)
    assert os.path.isfile(os.path.join(path, "_metadata"))
    # the tasks end once the savepoint's completion reaches them; a sink's
    # last flush to a loaded broker can take a while (a failure prints the
    # daemons' logs: tests/conftest.py)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=45)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    return path


def run_detached(c, *args):
    r = c.cli("run", "-d", *args)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.fullmatch(r"Job has been submitted with JobID ([0-9a-f]{32})\n", r.stdout)
    assert m, r.stdout
    return m.group(1)


def human_size(n):
    """The CLI's size wording: bytes below 1 KiB, else one decimal in the
    largest unit of 1024 that keeps the figure under 1024."""
    if n < 1024:
        return f"{n} B"
    v, units = n / 1024, ["KB", "MB", "GB", "TB"]
    u = 0
    while v >= 1023.95 and u + 1 < len(units):
        v, u = v / 1024, u + 1
    return f"{v:.1f} {units[u]}"


def state_size_on_disk(sp, uid):
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(sp, f"{uid}-*.state")))


# ---- windowed job ---------------------------------------------------------------


def window_job(out, raw, n, chunk, keys, rate, p):
    """datagen 1..n; event time BASE + ((id - 1) % chunk) ms, so that every
    source subtask (each owns a chunk of the sequence) walks through the same
    times at the same pace and no row is late, before or after rescaling;
    1-second tumbling windows of COUNT/SUM(id) per k = id % keys."""
    return {"name": "windowed counts", "parallelism": p,
            "vertices": [
                {"id": "gen", "uid": "gen", "type": "datagen",
                 "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(n)}},
                {"id": "ev", "type": "calc",
                 "config": {"projection": [
                     "id", f"CAST(id % {keys} AS INT) AS k",
                     f"TO_TIMESTAMP_LTZ({BASE} + (id - 1) % {chunk}, 3) AS ts"]}},
                {"id": "wm", "uid": "wm", "type": "watermark",
                 "config": {"column": "ts", "delay": "2 s"}},
                {"id": "win", "uid": "win", "type": "window",
                 "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '1' SECOND)",
                            "group-by": ["k"], "aggregates": ["COUNT(*) AS cnt", "SUM(id) AS s"]}},
                {"id": "out", "uid": "out", "type": "file",
                 "config": {"path": out, "format": "json"}},
                {"id": "raw", "uid": "raw", "type": "file",
                 "config": {"path": raw, "format": "json"}}],
            "edges": [{"from": "gen", "to": "ev", "strategy": "forward"},
                      {"from": "gen", "to": "raw", "strategy": "forward"},
                      {"from": "ev", "to": "wm", "strategy": "forward"},
                      {"from": "wm", "to": "win", "strategy": "hash", "keys": ["k"]},
                      {"from": "win", "to": "out", "strategy": "forward"}]}


def expected_windows(ids, chunk, keys):
    """{(window start offset ms, k): (count, sum)} over the given ids."""
    w = {}
    for i in ids:
        key = (((i - 1) % chunk) // 1000 * 1000, i % keys)
        c, s = w.get(key, (0, 0))
        w[key] = (c + 1, s + i)
    return w


def window_rows(paths):
    """[((start offset ms, k), (cnt, s))] of committed window results."""
    rows = []
    for r in read_rows(paths):
        assert r.get("op", "+I") == "+I", r
        ws = r["window_start"]
        d = datetime.datetime.strptime(ws + ("" if "." in ws else ".0"), "%Y-%m-%d %H:%M:%S.%f")
        start = round(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000) - BASE
        rows.append(((start, r["k"]), (r["cnt"], r["s"])))
    return rows


def summed(rows):
    acc = {}
    for key, (c, s) in rows:
        a = acc.get(key, (0, 0))
        acc[key] = (a[0] + c, a[1] + s)
    return acc


def late_dropped(c, jid):
    return sum(v["metrics"].get("numLateRecordsDropped", 0) for v in c.job(jid)["vertices"])


# ---- tests -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_stop_with_savepoint_and_rescale_2_to_4_cli(make_cluster, workdir, backend):
    """The recipe, verbatim, on a keyed aggregate: stop at p=2, run -p 4."""
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n, keys = 16000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jf = write_job(workdir, "job.json", agg_job(out, raw, n, keys, rate=4000, p=2))
    jid = run_detached(c, jf)
    c.wait_state(jid, "RUNNING", timeout=20)

    r = c.cli("list", check=True)
    start = c.get("/jobs/overview")["jobs"][0]["start-time"]
    when = datetime.datetime.fromtimestamp(start / 1000).strftime("%d.%m.%Y %H:%M:%S")
    assert r.stdout == ("Waiting for response...\n"
                        "------------------ Running/Restarting Jobs -------------------\n"
                        f"{when} : {jid} : count and sum per key (RUNNING)\n"
                        "--------------------------------------------------------------\n"
                        "No scheduled jobs.\n"), r.stdout

    wait_progress(c, jid, n // 4)
    sp_base = os.path.join(workdir, "sluice-savepoints")
    sp = stop_with_savepoint(c, jid, "file://" + sp_base)
    md = read_metadata(sp)
    assert md["is_savepoint"] and md["job_id"] == jid and md["max_parallelism"] == 128
    check_snapshot_files(sp, md)

    run1_out, run1_raw = committed_files(out), committed_files(raw)
    ids1 = raw_ids(run1_raw)
    assert 0 < len(ids1) < n, len(ids1)  # stopped mid-stream
    table1 = apply_changelog(run1_out)
    assert table1 == expected_agg(ids1, keys)  # the savepoint committed exactly what it saw

    r = c.cli("run", "-s", f"file:{sp}", "-p", "4", jf, timeout=60)
    m = re.fullmatch(r"Job has been submitted with JobID ([0-9a-f]{32})\n"
                     r"Job \1 finished with state FINISHED\.\n", r.stdout)
    assert r.returncode == 0 and m, r.stdout + r.stderr
    jid2 = m.group(1)
    job2 = c.job(jid2)
    assert {v["parallelism"] for v in job2["vertices"]} == {4}
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1
    assert cp["latest"]["restored"]["is_savepoint"] is True
    assert cp["latest"]["restored"]["external_path"] == f"file:{sp}"

    ids = raw_ids(run1_raw + new_files(raw, run1_raw))
    exactly_once(ids, n)
    table = apply_changelog(new_files(out, run1_out), dict(table1))
    assert table == expected_agg(range(1, n + 1), keys)
    # the keyed state was spread over the four new subtasks
    subs = {int(PART.match(os.path.basename(p)).group(1)) for p in new_files(out, run1_out)}
    assert len(subs) > 1, subs


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_moved_savepoint_rescale_4_to_2_windows(make_cluster, workdir, backend):
    """Windows at p=4, stopped with a savepoint that is then moved; restored
    at p=2 over REST, every window is emitted once with its exact count."""
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n, keys, p1 = 16000, 5, 4
    chunk = n // p1
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = window_job(out, raw, n, chunk, keys, rate=4000, p=p1)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_progress(c, jid, n // 3)
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    ids1 = raw_ids(run1_raw)
    assert 0 < len(ids1) < n

    # the savepoint is self-contained: move it, then restore from the new place
    moved = os.path.join(workdir, "elsewhere", os.path.basename(sp))
    os.makedirs(os.path.dirname(moved))
    shutil.move(sp, moved)
    md = read_metadata(moved)
    check_snapshot_files(moved, md)
    win = {op["uid"]: op for op in md["operators"]}["win"]
    assert win["keyed"] and win["parallelism"] == 4

    status, body = c.request("POST", f"/jobs?savepointPath=file:{moved}&parallelism=2", job)
    assert status == 200, body
    jid2 = body["jobid"]
    job2 = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=30)
    assert job2["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    assert {v["parallelism"] for v in job2["vertices"]} == {2}
    assert c.get(f"/jobs/{jid2}/checkpoints")["latest"]["restored"]["external_path"] == \
        f"file:{moved}"

    exactly_once(raw_ids(run1_raw + new_files(raw, run1_raw)), n)
    assert late_dropped(c, jid) == 0 and late_dropped(c, jid2) == 0
    rows = window_rows(run1_out + new_files(out, run1_out))
    twice = [k for k, m in collections.Counter(k for k, _ in rows).items() if m > 1]
    assert not twice, f"windows emitted twice: {twice[:10]}"
    assert dict(rows) == expected_windows(range(1, n + 1), chunk, keys)


def test_savepoint_then_cancel_then_restore(make_cluster, workdir):
    """`sluice savepoint JOBID` (into state.savepoints.dir) keeps the job
    running; what it wrote after the savepoint is never committed once it is
    cancelled, so a restore from the savepoint gives every row once."""
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2)
    n, keys = 12000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jf = write_job(workdir, "job.json", agg_job(out, raw, n, keys, rate=3000, p=2))
    jid = run_detached(c, jf)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_progress(c, jid, n // 4)

    r = c.cli("savepoint", jid, timeout=60)
    default_dir = c.conf["state.savepoints.dir"]
    m = re.fullmatch(rf"Triggering savepoint for job {jid}\.\n"
                     r"Waiting for response\.\.\.\n"
                     rf"Savepoint completed\. Path: file:({re.escape(default_dir)}/savepoint-"
                     rf"{jid[:6]}-[0-9a-f]{{12}})\n"
                     r"You can resume your program from this savepoint with the run command\.\n",
                     r.stdout)
    assert r.returncode == 0 and m, r.stdout + r.stderr
    sp = m.group(1)
    assert c.job(jid)["state"] == "RUNNING"
    cp = c.get(f"/jobs/{jid}/checkpoints")
    assert cp["latest"]["savepoint"]["checkpoint_type"] == "SAVEPOINT"
    assert cp["latest"]["savepoint"]["external_path"] == f"file:{sp}"
    # let it run on well past the savepoint, then cancel; the rows since the
    # savepoint must stay uncommitted (the restore below writes them again)
    wait_progress(c, jid, vertex_records_out(c, jid, "gen") + n // 8)
    r = c.cli("cancel", jid, check=True)
    assert r.stdout == f"Cancelling job {jid}.\nCancelled job {jid}.\n"
    c.wait_state(jid, "CANCELED", timeout=20)

    run1_out, run1_raw = committed_files(out), committed_files(raw)
    assert 0 < len(raw_ids(run1_raw)) < n
    jid2 = run_detached(c, "-s", sp, jf)
    job2 = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=30)
    assert job2["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    exactly_once(raw_ids(run1_raw + new_files(raw, run1_raw)), n)
    table = apply_changelog(run1_out + new_files(out, run1_out))
    assert table == expected_agg(range(1, n + 1), keys)


def test_stop_with_drain_fires_windows(make_cluster, workdir):
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2)
    n, keys, p = 12000, 5, 2
    chunk = n // p
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = window_job(out, raw, n, chunk, keys, rate=3000, p=p)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_progress(c, jid, n // 3)
    sp = stop_with_savepoint(c, jid, "file://" + os.path.join(workdir, "sp"), drain=True)
    assert c.get(f"/jobs/{jid}/checkpoints")["latest"]["savepoint"]["checkpoint_type"] == \
        "SYNC_SAVEPOINT"

    run1_out, run1_raw = committed_files(out), committed_files(raw)
    ids1 = raw_ids(run1_raw)
    assert 0 < len(ids1) < n
    # every row the source emitted is in a fired window, the unfinished ones too
    rows1 = window_rows(run1_out)
    assert len({k for k, _ in rows1}) == len(rows1)
    assert dict(rows1) == expected_windows(ids1, chunk, keys)

    # a restore carries on: the windows cut short by the drain get a second
    # result with the rest of their rows
    status, body = c.request("POST", f"/jobs?savepointPath={sp}", job)
    assert status == 200, body
    jid2 = body["jobid"]
    job2 = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=30)
    assert job2["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    exactly_once(raw_ids(run1_raw + new_files(raw, run1_raw)), n)
    assert late_dropped(c, jid2) == 0
    rows2 = window_rows(new_files(out, run1_out))
    assert summed(rows1 + rows2) == expected_windows(range(1, n + 1), chunk, keys)


def test_restore_refusals_check_and_dispose(make_cluster, workdir):
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    n, keys = 12000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = agg_job(out, raw, n, keys, rate=2000, p=2)
    jf = write_job(workdir, "job.json", job)
    jid = run_detached(c, jf)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_progress(c, jid, n // 8)
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    ids1 = raw_ids(run1_raw)
    md = read_metadata(sp)
    order = [op["uid"] for op in md["operators"]]
    assert sorted(order) == ["agg", "gen", "out", "raw"]
    jobs_before = len(c.get("/jobs")["jobs"])

    # `savepoint check` for a rescale: every state maps, key groups re-split
    r = c.cli("savepoint", "check", sp, jf, "-p", "4")
    kinds = {"gen": ("datagen", "operator state"), "agg": ("group_aggregate", "keyed"),
             "out": ("file", "operator state"), "raw": ("file", "operator state")}
    mapped = "".join(f"  uid '{u}' ({kinds[u][0]}, {kinds[u][1]}, 2 -> 4 subtasks, "
                     f"{human_size(state_size_on_disk(sp, u))}) -> vertex '{u}'\n" for u in order)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"Savepoint {sp} (checkpoint {md['checkpoint_id']}, maxParallelism 128)\n"
                        "State restored by uid:\n" + mapped +
                        "Dropped (no vertex with this uid): none\n"
                        "Starts empty:\n"
                        "  vertex 'keyed' (calc)\n"), r.stdout

    # a renamed uid: refused, naming it -- by check and by run
    renamed = write_job(workdir, "renamed.json", agg_job(out, raw, n, keys, rate=2000, p=2,
                                                         agg_uid="agg-v2"))
    refusal = ("Error: Cannot map savepoint state for operator uid(s) 'agg' to the new job: no "
               "vertex has that uid. Give the vertex that should own it that \"uid\", or resubmit "
               "with allowNonRestoredState (sluice run -n) to drop that state.\n")
    r = c.cli("savepoint", "check", sp, renamed)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", refusal)
    r = c.cli("run", "-d", "-s", sp, renamed)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", refusal)
    assert len(c.get("/jobs")["jobs"]) == jobs_before

    r = c.cli("savepoint", "check", "-n", sp, renamed)
    assert r.returncode == 0, r.stderr
    mapped = "".join(f"  uid '{u}' ({kinds[u][0]}, {kinds[u][1]}, 2 subtasks, "
                     f"{human_size(state_size_on_disk(sp, u))}) -> vertex '{u}'\n"
                     for u in order if u != "agg")
    assert r.stdout == (f"Savepoint {sp} (checkpoint {md['checkpoint_id']}, maxParallelism 128)\n"
                        "State restored by uid:\n" + mapped +
                        "Dropped (no vertex with this uid):\n"
                        f"  uid 'agg' (group_aggregate, 2 subtasks, "
                        f"{human_size(state_size_on_disk(sp, 'agg'))})\n"
                        "Starts empty:\n"
                        "  vertex 'keyed' (calc)\n"
                        "  vertex 'agg' (uid 'agg-v2', group_aggregate)\n"), r.stdout

    # another maxParallelism: refused
    mp = write_job(workdir, "mp256.json", agg_job(out, raw, n, keys, rate=2000, p=2,
                                                  max_parallelism=256))
    r = c.cli("run", "-d", "-s", f"file://{sp}", mp)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"Error: the job sets maxParallelism 256 but savepoint 'file://{sp}' was "
                        "taken with 128: keyed state is split into that many key groups and cannot "
                        "be restored with another number (remove maxParallelism from the job, or "
                        "set it to 128)\n"), r.stderr

    # a truncated _metadata: refused, naming the file
    broken = os.path.join(workdir, "broken", os.path.basename(sp))
    shutil.copytree(sp, broken)
    meta = os.path.join(broken, "_metadata")
    size = os.path.getsize(meta)
    os.truncate(meta, size // 2)
    r = c.cli("run", "-d", "-s", broken, jf)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"Error: cannot read savepoint '{broken}': {meta}: the header announces "
                        f"{size - 24} bytes of metadata but the file holds {size // 2 - 24} "
                        "(truncated?)\n"), r.stderr
    assert len(c.get("/jobs")["jobs"]) == jobs_before

    # a damaged state file: the restore is refused naming it (every state
    # file is checked against _metadata before a job is made), never starts empty
    damaged = os.path.join(workdir, "damaged", os.path.basename(sp))
    shutil.copytree(sp, damaged)
    state = os.path.join(damaged, "agg-0.state")
    os.truncate(state, os.path.getsize(state) - 9)
    r = c.cli("run", "-d", "-s", damaged, jf)
    assert (r.returncode, r.stdout, r.stderr) == \
        (1, "", f"Error: cannot restore from savepoint '{damaged}': {state}: truncated or damaged: "
                "no trailer at the end of the file\n")
    assert len(c.get("/jobs")["jobs"]) == jobs_before
    assert committed_files(out) == run1_out  # the refused restore committed nothing

    # with -n the renamed aggregate starts empty and the rest carries on
    jid2 = run_detached(c, "-n", "-s", sp, renamed)
    job2 = c.wait_state(jid2, ["FINISHED", "FAILED", "CANCELED"], timeout=30)
    assert job2["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    exactly_once(raw_ids(run1_raw + new_files(raw, run1_raw)), n)
    rest = set(range(1, n + 1)) - set(ids1)
    assert apply_changelog(new_files(out, run1_out)) == expected_agg(rest, keys)

    # dispose
    r = c.cli("savepoint", "-d", sp)
    assert (r.returncode, r.stdout, r.stderr) == \
        (0, f"Disposing savepoint '{sp}'.\nSavepoint '{sp}' disposed.\n", "")
    assert not os.path.exists(sp)
    r = c.cli("run", "-d", "-s", sp, jf)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"Error: cannot read savepoint '{sp}': snapshot {sp}: No such file or directory\n"


def crc32c(data):
    """CRC-32C (Castagnoli, reflected 0x82f63b78), a bit at a time."""
    c = 0xffffffff
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82f63b78 if c & 1 else 0)
    return c ^ 0xffffffff


def first_keyed_section(path):
    """(offset, length, key group) of the first KEYS section of a version 2
    state file: after the 28-byte header and the IDNT section."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"SLSTATE\0" and struct.unpack("<I", data[8:12])[0] == 2
    off = 28
    while True:
        tag, kg, _count, plen = struct.unpack("<4sIQQ", data[off:off + 24])
        if tag == b"KEYS":
            return off, 24 + plen + 4, kg
        off += 24 + plen + 4


def test_check_reads_every_state_file(make_cluster, workdir):
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2)
    n, keys = 6000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = agg_job(out, raw, n, keys, rate=2000, p=2)
    jf = write_job(workdir, "job.json", job)
    jid = run_detached(c, jf)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_progress(c, jid, n // 8)
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    md = read_metadata(sp)
    nfiles = sum(1 for op in md["operators"] for st in op["subtasks"] if st["file"])
    sizes = {st["file"]: st["size"] for op in md["operators"] for st in op["subtasks"]}
    assert "agg-0.state" in sizes and "agg-1.state" in sizes

    # intact: the plan, exit 0
    r = c.cli("savepoint", "check", sp, jf)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.startswith(f"Savepoint {sp} (checkpoint {md['checkpoint_id']}, "), r.stdout

    def copy(name):
        d = os.path.join(workdir, name, os.path.basename(sp))
        shutil.copytree(sp, d)
        return d

    # one flipped byte inside the keyed entries of agg-0: its CRC no longer holds
    flipped = copy("flipped")
    state = os.path.join(flipped, "agg-0.state")
    off, slen, kg = first_keyed_section(state)
    with open(state, "r+b") as f:
        data = bytearray(f.read())
        data[off + 24 + 1] ^= 0x04
        f.seek(0)
        f.write(data)
    payload, header = bytes(data[off + 24:off + slen - 4]), bytes(data[off:off + 24])
    stored = struct.unpack("<I", data[off + slen - 4:off + slen])[0]
    computed = crc32c(payload + header)
    assert stored != computed
    crc_line = (f"{state}: the entries of key group {kg} (offset {off}, {slen} bytes) is damaged: "
                f"CRC-32C mismatch (stored {stored:08x}, computed {computed:08x})")
    r = c.cli("savepoint", "check", flipped, jf)
    assert (r.returncode, r.stdout, r.stderr) == \
        (1, "", f"Error: savepoint '{flipped}' is damaged: 1 of its {nfiles} state files would "
                f"fail the restore:\n{crc_line}\n")
    status, body = c.request("POST", f"/savepoints/check?savepointPath={flipped}", job)
    assert (status, body) == (400, {"errors": [f"savepoint '{flipped}' is damaged: 1 of its "
                                               f"{nfiles} state files would fail the restore:\n"
                                               f"{crc_line}"]})

    # a truncated file: named with both sizes
    truncated = copy("truncated")
    state1 = os.path.join(truncated, "agg-1.state")
    os.truncate(state1, sizes["agg-1.state"] - 9)
    trunc_line = (f"{state1}: {sizes['agg-1.state'] - 9} bytes, but _metadata records "
                  f"{sizes['agg-1.state']} for operator 'agg' subtask 1 (truncated)")
    r = c.cli("savepoint", "check", truncated, jf)
    assert (r.returncode, r.stdout, r.stderr) == \
        (1, "", f"Error: savepoint '{truncated}' is damaged: 1 of its {nfiles} state files "
                f"would fail the restore:\n{trunc_line}\n")

    # both at once: each named, in _metadata's order
    both = copy("both")
    shutil.copy(state, os.path.join(both, "agg-0.state"))
    shutil.copy(state1, os.path.join(both, "agg-1.state"))
    r = c.cli("savepoint", "check", both, jf)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"Error: savepoint '{both}' is damaged: 2 of its {nfiles} state files "
                        "would fail the restore:\n" + crc_line.replace(flipped, both) + "\n" +
                        trunc_line.replace(truncated, both) + "\n"), r.stderr
    assert c.get("/jobs")["jobs"] == [{"id": jid, "status": "FINISHED"}]  # no job was made


def test_stop_whose_savepoint_is_aborted_before_a_queued_barrier_arrives(make_cluster, workdir):
    """A stop-with-savepoint whose savepoint the sources fail at once (its
    directory would lie under a regular file) is aborted while its barrier
    still waits behind the buffers queued for a backpressured sink: the sink
    sees that barrier after the abort and reads on, as the sources do, so the
    bounded job ends with every row read (the sink used to wait for that
    savepoint's completion for ever)."""
    from test_unaligned import slow_job
    blocker = os.path.join(workdir, "a-file")
    open(blocker, "w").close()
    c = make_cluster()
    c.add_tm(slots=4)
    # more rows than the channels' buffers hold: the sources are still reading at the
    # stop (a source that has ended fails the task when a stop's savepoint fails)
    n = 60000
    job = slow_job(False, rate=20000)
    job["config"]["execution.checkpointing.interval"] = "1 h"  # the stop's savepoint only
    job["vertices"][0]["config"]["number-of-rows"] = str(n)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")

    def read(name):
        return sum(v["metrics"]["read-records"] for v in c.job(jid)["vertices"] if v["name"] == name)
    wait_for(lambda: read("slow") >= 1000, what="the sink reading")
    r = c.cli("stop", "--savepoint", "file://" + os.path.join(blocker, "sp"), jid, timeout=60)
    assert r.returncode != 0, r.stdout
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert read("slow") == n
    first = [h for h in c.get(f"/jobs/{jid}/checkpoints")["history"] if h["id"] == 1]
    assert first and first[0]["status"] == "FAILED" and "declined" in first[0]["failure_message"], first
