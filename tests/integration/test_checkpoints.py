"""Checkpoints and failover against real daemons.

- Periodic checkpoints: counts rise, history is newest first, the latest
  completed checkpoint lives at <state.checkpoints.dir>/<jobid>/chk-<n> with a
  _metadata that names the job, the checkpoint and state files (relative
  paths, sizes as on disk, key-group ranges as Flink assigns them); only
  state.checkpoints.num-retained chk-* directories stay; /checkpoints/config
  echoes the configuration; /checkpoints/details/<id> covers every vertex.
- Failover exactly-once: a sequence source through a hash exchange into a
  keyed COUNT/SUM and the two-phase-commit file sink, checkpointing every
  300 ms; one TaskManager is killed with SIGKILL mid-run and replaced. The
  committed output, read as a changelog, equals the per-key COUNT/SUM worked
  out here from the sequence, and a second sink fed straight from the source
  holds every id exactly once. On both state backends.
- A checkpoint that cannot be written (its directory lies under a regular
  file) fails with its reason in latest.failed.failure_message; with
  tolerable-failed-checkpoints 0 the job fails (no restart strategy) or
  restarts once and then fails (fixed-delay, 1 attempt); the failed job's
  exception history carries that cause.
- A cancelled job keeps its latest checkpoint, and `sluice run -s` on it
  carries on exactly where it left off.

Helpers here (job builders, reading committed output, decoding _metadata)
are imported by test_savepoints.py.
"""
import collections
import json
import os
import re
import signal
import struct

import pytest

from conftest import failover_conf, wait_for

# ---- jobs -------------------------------------------------------------------


def agg_job(out, raw, n, keys, rate, p=2, agg_uid="agg", name="count and sum per key",
            max_parallelism=None):
    """datagen 1..n -> (k = id % keys) -> hash -> COUNT/SUM per k -> file(out),
    and datagen -> file(raw) with the ids themselves."""
    job = {"name": name, "parallelism": p,
           "vertices": [
               {"id": "gen", "uid": "gen", "type": "datagen",
                "schema": [{"name": "id", "type": "BIGINT"}],
                "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                           "fields.id.start": "1", "fields.id.end": str(n)}},
               {"id": "keyed", "type": "calc",
                "config": {"projection": [f"id % {keys} AS k", "id AS amount"]}},
               {"id": "agg", "uid": agg_uid, "type": "group_aggregate",
                "config": {"group-by": ["k"],
                           "aggregates": ["COUNT(*) AS cnt", "SUM(amount) AS total"]}},
               {"id": "out", "uid": "out", "type": "file",
                "config": {"path": out, "format": "json"}},
               {"id": "raw", "uid": "raw", "type": "file",
                "config": {"path": raw, "format": "json"}}],
           "edges": [{"from": "gen", "to": "keyed", "strategy": "forward"},
                     {"from": "gen", "to": "raw", "strategy": "forward"},
                     {"from": "keyed", "to": "agg", "strategy": "hash", "keys": ["k"]},
                     {"from": "agg", "to": "out", "strategy": "forward"}]}
    if max_parallelism:
        job["maxParallelism"] = max_parallelism
    return job


def expected_agg(ids, keys):
    """{k: (count, sum)} over the given ids, k = id % keys."""
    exp = {}
    for i in ids:
        c, s = exp.get(i % keys, (0, 0))
        exp[i % keys] = (c + 1, s + i)
    return exp


# ---- committed output ---------------------------------------------------------

PART = re.compile(r"^part-(\d+)(?:-(\d+))?$")


def committed_files(directory):
    """Visible part files (in-progress ones are hidden dot files), in write
    order per subtask: part-<i>-<n> by (i, n)."""
    if not os.path.isdir(directory):
        return []
    found = []
    for name in os.listdir(directory):
        m = PART.match(name)
        if m:
            found.append((int(m.group(1)), int(m.group(2) or -1), name))
    return [os.path.join(directory, name) for _, _, name in sorted(found)]


def read_rows(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                rows.append(json.loads(line))
    return rows


def apply_changelog(paths, table=None):
    """Apply the agg changelog in `paths` (in order) to `table` {k: (cnt, total)}.
    A -U must retract exactly the value the key holds; +I must be a new key."""
    table = {} if table is None else table
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                r = json.loads(line)
                op = r.pop("op", "+I")
                k, v = r["k"], (r["cnt"], r["total"])
                where = f"{os.path.basename(path)}:{n}"
                if op == "+I":
                    assert k not in table, f"{where}: +I for key {k} which holds {table[k]}"
                    table[k] = v
                elif op == "+U":
                    assert k not in table, f"{where}: +U for key {k} without a -U first"
                    table[k] = v
                elif op in ("-U", "-D"):
                    assert table.get(k) == v, f"{where}: {op} {v} for key {k} holding {table.get(k)}"
                    del table[k]
                else:
                    raise AssertionError(f"{where}: unknown op {op!r}")
    return table


def raw_ids(paths):
    return collections.Counter(r["id"] for r in read_rows(paths))


# ---- _metadata ------------------------------------------------------------------


def _varint(b, i):
    shift = v = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def _fields(b):
    """Protobuf wire format -> [(field number, value)]; length-delimited as bytes."""
    out, i = [], 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise AssertionError(f"wire type {wt} in _metadata")
        out.append((num, v))
    return out


def read_metadata(snapshot_dir):
    """Decode <dir>/_metadata (24-byte header: "SLMETA\\0\\0", u32 version,
    u32 crc, u64 length; then sluice.SnapshotMetadata) into a dict."""
    with open(os.path.join(snapshot_dir, "_metadata"), "rb") as f:
        data = f.read()
    assert data[:8] == b"SLMETA\0\0", data[:8]
    version, _crc, length = struct.unpack("<IIQ", data[8:24])
    assert length == len(data) - 24
    md = {"header_version": version, "operators": []}
    names = {1: "format_version", 2: "job_id", 3: "job_name", 4: "checkpoint_id",
             5: "timestamp", 6: "is_savepoint", 7: "max_parallelism", 9: "graph_json"}
    for num, v in _fields(data[24:]):
        if num == 8:
            op = {"subtasks": [], "keyed": 0, "type": "", "parallelism": 0}
            for onum, ov in _fields(v):
                if onum == 5:
                    st = {"subtask": 0, "file": "", "kg_first": 0, "kg_last": 0, "size": 0,
                          "has_opstate": 0, "finished": 0, "shared_files": [],
                          "private_files": [], "checkpointed_size": 0}
                    snames = {1: "subtask", 2: "file", 3: "kg_first", 4: "kg_last", 5: "size",
                              6: "has_opstate", 7: "finished", 8: "shared_files",
                              9: "private_files", 10: "checkpointed_size"}
                    for snum, sv in _fields(ov):
                        sv = sv.decode() if isinstance(sv, bytes) else sv
                        if snum in (8, 9):
                            st[snames[snum]].append(sv)  # repeated
                        else:
                            st[snames[snum]] = sv
                    op["subtasks"].append(st)
                else:
                    key = {1: "uid", 2: "type", 3: "parallelism", 4: "keyed"}[onum]
                    op[key] = ov.decode() if isinstance(ov, bytes) else ov
            md["operators"].append(op)
        elif num in names:
            md[names[num]] = v.decode() if isinstance(v, bytes) else v
    return md


def kg_range(i, p, max_p):
    """Flink's KeyGroupRangeAssignment: subtask i of p owns these key groups."""
    return (i * max_p + p - 1) // p, ((i + 1) * max_p - 1) // p


def check_snapshot_files(snapshot_dir, md):
    """Every state file _metadata names is relative, inside the directory, and
    as large as recorded."""
    for op in md["operators"]:
        for st in op["subtasks"]:
            if not st["file"]:
                continue
            assert not st["file"].startswith("/") and ".." not in st["file"], st
            path = os.path.join(snapshot_dir, st["file"])
            assert os.path.getsize(path) == st["size"], (path, st)


# ---- polling ----------------------------------------------------------------------


def checkpoints(c, jid):
    return c.get(f"/jobs/{jid}/checkpoints")


def wait_completed(c, jid, n, timeout=20):
    return wait_for(lambda: (lambda cp: cp["counts"]["completed"] >= n and cp)(checkpoints(c, jid)),
                    timeout=timeout, what=f"{n} completed checkpoints of {jid}")


def vertex_records_out(c, jid, name):
    for v in c.job(jid)["vertices"]:
        if v["name"] == name:
            return v["metrics"]["write-records"]
    raise AssertionError(f"no vertex {name}")


# ---- tests -------------------------------------------------------------------------


def test_checkpoints_complete_periodically(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "execution.checkpointing.timeout": "20 s",
                              "execution.checkpointing.min-pause": "50 ms",
                              "execution.checkpointing.tolerable-failed-checkpoints": "2",
                              "state.checkpoints.dir": chk,
                              "state.checkpoints.num-retained": "2"})
    c.add_tm(slots=2)
    n, keys = 1_000_000, 10
    jid = c.submit(agg_job(os.path.join(workdir, "out"), os.path.join(workdir, "raw"), n, keys,
                           rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)

    first = wait_completed(c, jid, 2)["counts"]["completed"]
    later = wait_completed(c, jid, first + 3)
    assert later["counts"]["completed"] > first

    def stable():
        """Checkpoint info and the directory listing of one quiet moment."""
        a = checkpoints(c, jid)
        dirs = sorted(os.listdir(os.path.join(chk, jid)))
        b = checkpoints(c, jid)
        same = a["counts"] == b["counts"] and a["counts"]["in_progress"] == 0
        # a subsumed checkpoint's directory goes a moment after the next completes
        n = a["counts"]["completed"]
        return same and dirs == sorted([f"chk-{n}", f"chk-{n - 1}"]) and (a, dirs)

    cp, dirs = wait_for(stable, timeout=20, what="a moment without a checkpoint in flight")
    counts = cp["counts"]
    assert counts["total"] == counts["completed"] + counts["failed"] + counts["in_progress"]
    assert counts["failed"] == 0 and counts["restored"] == 0
    hist = cp["history"]
    ids = [h["id"] for h in hist]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids), ids
    latest = cp["latest"]["completed"]
    n_latest = counts["completed"]  # ids count from 1 and none failed
    assert latest["id"] == n_latest == ids[0]
    assert latest["status"] == "COMPLETED" and latest["checkpoint_type"] == "CHECKPOINT"
    assert latest["is_savepoint"] is False and latest["discarded"] is False
    assert latest["num_subtasks"] == latest["num_acknowledged_subtasks"]
    cp_dir = os.path.join(chk, jid, f"chk-{n_latest}")
    assert latest["external_path"] == f"file:{cp_dir}"
    # only the two newest remain on disk; older ones are marked discarded
    assert dirs == sorted([f"chk-{n_latest}", f"chk-{n_latest - 1}"]), dirs
    for h in hist:
        assert h["discarded"] is (h["id"] <= n_latest - 2), h
    for d in dirs:
        assert os.path.isfile(os.path.join(chk, jid, d, "_metadata"))

    # _metadata: this job, this checkpoint, every stateful uid, relative files
    md = read_metadata(cp_dir)
    assert md["format_version"] == 1 and md["job_id"] == jid
    assert md["checkpoint_id"] == n_latest and not md.get("is_savepoint")
    assert md["max_parallelism"] == 128  # roundUpToPowerOfTwo(2 + 1) < 128
    ops = {op["uid"]: op for op in md["operators"]}
    assert {"gen", "agg", "out", "raw"} <= set(ops), sorted(ops)
    check_snapshot_files(cp_dir, md)
    agg = ops["agg"]
    assert agg["keyed"] and agg["type"] == "group_aggregate" and agg["parallelism"] == 2
    assert sorted((s["subtask"], s["kg_first"], s["kg_last"]) for s in agg["subtasks"]) == \
        [(i,) + kg_range(i, 2, 128) for i in range(2)]
    total = sum(s["size"] for op in md["operators"] for s in op["subtasks"])
    assert total == latest["state_size"]

    # details: every vertex of the job, all subtasks acknowledged
    details = c.get(f"/jobs/{jid}/checkpoints/details/{n_latest}")
    assert details["id"] == n_latest and details["status"] == "COMPLETED"
    vertices = {v["id"]: v for v in c.job(jid)["vertices"]}
    assert set(details["tasks"]) == set(vertices)
    for vid, t in details["tasks"].items():
        assert t["num_subtasks"] == t["num_acknowledged_subtasks"] == vertices[vid]["parallelism"]
        assert details["trigger_timestamp"] <= t["latest_ack_timestamp"] <= details["latest_ack_timestamp"]
        # Flink's per-subtask statistics: every subtask acknowledged, its state
        # adding up to the vertex's, the files _metadata lists for it
        sub = c.get(f"/jobs/{jid}/checkpoints/details/{n_latest}/subtasks/{vid}")
        assert [s["index"] for s in sub["subtasks"]] == list(range(vertices[vid]["parallelism"]))
        assert all(s["status"] == "completed" for s in sub["subtasks"]), sub
        assert sum(s["state_size"] for s in sub["subtasks"]) == t["state_size"] == sub["state_size"]
        assert max(s["ack_timestamp"] for s in sub["subtasks"]) == t["latest_ack_timestamp"]
        assert sub["summary"]["state_size"]["max"] == max(s["state_size"] for s in sub["subtasks"])
        nodes = {n["id"]: n for n in c.get(f"/sluice/jobs/{jid}")["plan"]["nodes"]}
        uids = [o["uid"] for o in nodes[vid]["operators"]]
        for s in sub["subtasks"]:
            files = [f["size"] for u in uids if u in ops for f in ops[u]["subtasks"] if f["subtask"] == s["index"]]
            assert s["state_size"] == sum(files), (vid, s, files)
    assert sum(t["state_size"] for t in details["tasks"].values()) == latest["state_size"]
    status, body = c.request("GET", f"/jobs/{jid}/checkpoints/details/999999")
    assert status == 404

    conf = c.get(f"/jobs/{jid}/checkpoints/config")
    assert {k: conf[k] for k in ("mode", "interval", "timeout", "min_pause", "max_concurrent",
                                 "tolerable_failed_checkpoints")} == \
        {"mode": "exactly_once", "interval": 200, "timeout": 20000, "min_pause": 50,
         "max_concurrent": 1, "tolerable_failed_checkpoints": 2}

    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_failover_exactly_once(make_cluster, workdir, backend):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk))
    extra = {"state.backend.type": backend}
    c.add_tm(slots=2, extra=extra)
    c.add_tm(slots=2, extra=extra)
    n, keys = 16000, 20  # 2000 rows/s: about 8 s
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    # one subtask of every vertex on each TaskManager
    for v in c.job(jid)["vertices"]:
        subs = c.get(f"/sluice/jobs/{jid}/vertices/{v['id']}/subtasks")["subtasks"]
        assert sorted(s["taskmanager-id"] for s in subs) == ["tm-0", "tm-1"], (v["name"], subs)

    # mid-run: some checkpoints done and their output committed
    wait_completed(c, jid, 3)
    wait_for(lambda: committed_files(out) and committed_files(raw), timeout=10,
             what="committed output")
    before = c.job(jid)
    assert before["state"] == "RUNNING", before["state"]
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra=extra)

    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=40)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    ts = job["timestamps"]
    assert 0 < ts["RESTARTING"] < ts["RUNNING"] < ts["FINISHED"], ts  # RESTARTING -> RUNNING
    cp = checkpoints(c, jid)
    assert cp["counts"]["restored"] == 1, cp["counts"]
    restored = cp["latest"]["restored"]
    assert restored["is_savepoint"] is False and restored["id"] >= 3
    assert restored["external_path"] == f"file:{chk}/{jid}/chk-{restored['id']}"
    exc = c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
    assert any("tm-0" in json.dumps(e) for e in exc), exc

    # nothing lost, nothing duplicated
    ids = raw_ids(committed_files(raw))
    dup = {i: m for i, m in ids.items() if m != 1}
    missing = sorted(set(range(1, n + 1)) - set(ids))
    assert not dup and not missing and len(ids) == n, \
        f"duplicated {list(dup.items())[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)})"
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)
    # no in-progress leftovers once the job finished
    for d in (out, raw):
        assert [f for f in os.listdir(d) if not PART.match(f)] == []


def failing_job_cluster(make_cluster, workdir, strategy):
    blocker = os.path.join(workdir, "a-file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    conf = {"execution.checkpointing.interval": "200 ms",
            "execution.checkpointing.tolerable-failed-checkpoints": "0",
            "state.checkpoints.dir": os.path.join(blocker, "chk"),
            "restart-strategy.type": strategy}
    if strategy == "fixed-delay":
        conf.update({"restart-strategy.fixed-delay.attempts": "1",
                     "restart-strategy.fixed-delay.delay": "200 ms"})
    c = make_cluster(jm_conf=conf)
    c.add_tm(slots=2)
    jid = c.submit(agg_job(os.path.join(workdir, "out"), os.path.join(workdir, "raw"), 100_000, 10,
                           rate=2000))
    return c, jid, blocker


@pytest.mark.parametrize("strategy", ["none", "fixed-delay"])
def test_unwritable_checkpoint_fails_the_job(make_cluster, workdir, strategy):
    c, jid, blocker = failing_job_cluster(make_cluster, workdir, strategy)
    job = c.wait_state(jid, ["FAILED", "FINISHED", "CANCELED"], timeout=20)
    assert job["state"] == "FAILED"
    cp = checkpoints(c, jid)
    attempts = 1 if strategy == "none" else 2  # one checkpoint per attempt, each fails
    assert cp["counts"] == {"restored": 0, "total": attempts, "in_progress": 0, "completed": 0,
                            "failed": attempts}, cp["counts"]
    assert cp["latest"]["completed"] is None
    failed = cp["latest"]["failed"]
    assert failed["status"] == "FAILED" and failed["id"] == attempts
    why = failed["failure_message"]
    chk_dir = f"{blocker}/chk/{jid}/chk-{attempts}"
    assert re.fullmatch(rf"(gen|keyed|raw|agg -> out) \((1|2)/2\) declined: cannot create directory {re.escape(chk_dir)}: "
                        rf"{re.escape(blocker)} exists and is not a directory", why), why
    assert all(h["status"] == "FAILED" for h in cp["history"])
    restarted = job["timestamps"]["RESTARTING"] > 0
    assert restarted is (strategy == "fixed-delay"), job["timestamps"]
    log = c.jm.log_text()
    assert "Exceeded checkpoint tolerable failure threshold (0)" in log
    assert ("restarts (attempt 1 of 1)" in log) is (strategy == "fixed-delay")


def test_job_failed_by_checkpoints_records_its_cause(make_cluster, workdir):
    """The job's exception history says why it failed, as for any failure:
    GET /jobs/:id/exceptions is where `sluice run` finds the root cause."""
    c, jid, blocker = failing_job_cluster(make_cluster, workdir, "none")
    c.wait_state(jid, ["FAILED", "FINISHED", "CANCELED"], timeout=20)
    entries = c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
    assert entries, "the job FAILED but its exception history is empty"
    text = json.dumps(entries)
    assert "Exceeded checkpoint tolerable failure threshold (0)" in text, text
    assert "is not a directory" in text, text


def test_restore_from_retained_checkpoint(make_cluster, workdir):
    """A cancelled job keeps its latest checkpoint; `sluice run -s` on it
    carries on exactly where that checkpoint left off."""
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms",
                              "state.checkpoints.dir": chk})
    c.add_tm(slots=2)
    n, keys = 12000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = agg_job(out, raw, n, keys, rate=3000)
    jf = os.path.join(workdir, "job.json")
    with open(jf, "w") as f:
        json.dump(job, f)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    latest = checkpoints(c, jid)["latest"]["completed"]
    path = f"{chk}/{jid}/chk-{latest['id']}"
    assert latest["external_path"] == f"file:{path}"
    assert os.path.isfile(os.path.join(path, "_metadata"))  # retained on cancellation
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    assert 0 < len(raw_ids(run1_raw)) < n

    r = c.cli("savepoint", "check", f"file:{path}", jf)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Retained checkpoint file:{path} (checkpoint {latest['id']}, "
                               "maxParallelism 128)\n"), r.stdout

    r = c.cli("run", "-s", f"file:{path}", jf, timeout=60)
    m = re.fullmatch(r"Job has been submitted with JobID ([0-9a-f]{32})\n"
                     r"Job \1 finished with state FINISHED\.\n", r.stdout)
    assert r.returncode == 0 and m, r.stdout + r.stderr
    restored = checkpoints(c, m.group(1))["latest"]["restored"]
    assert restored["external_path"] == f"file:{path}" and restored["id"] == latest["id"]
    all_raw = committed_files(raw)
    ids = raw_ids(all_raw)
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    new_out = [p for p in committed_files(out) if p not in run1_out]
    assert apply_changelog(run1_out + new_out) == expected_agg(range(1, n + 1), keys)
    # what it was restored from is a checkpoint, not a savepoint (as _metadata says)
    assert not read_metadata(path).get("is_savepoint")  # proto3 leaves a false out
    assert restored["is_savepoint"] is False, restored


def test_job_and_subtask_checkpoint_metrics(make_cluster, workdir):
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms"})
    c.add_tm(slots=2)
    job = {"name": "metrics", "parallelism": 2,
           "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                         "config": {"rows-per-second": "2000", "fields.k.min": "1", "fields.k.max": "50"}},
                        {"id": "a", "type": "group_aggregate",
                         "config": {"group-by": ["k"], "aggregates": ["COUNT(*) AS n"]}},
                        {"id": "s", "type": "blackhole"}],
           "edges": [{"from": "g", "to": "a", "strategy": "hash", "keys": ["k"]},
                     {"from": "a", "to": "s"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 2, timeout=20)
    names = {m["id"] for m in c.get(f"/jobs/{jid}/metrics")}
    assert {"lastCheckpointDuration", "lastCheckpointSize", "numberOfCompletedCheckpoints",
            "numberOfFailedCheckpoints", "numberOfInProgressCheckpoints"} <= names
    got = {m["id"]: float(m["value"]) for m in
           c.get(f"/jobs/{jid}/metrics?get=lastCheckpointSize,numberOfCompletedCheckpoints,lastCompletedCheckpointId")}
    assert set(got) == {"lastCheckpointSize", "numberOfCompletedCheckpoints", "lastCompletedCheckpointId"}
    cps = c.get(f"/jobs/{jid}/checkpoints")
    assert got["numberOfCompletedCheckpoints"] <= cps["counts"]["completed"]
    assert got["numberOfCompletedCheckpoints"] >= 2 and got["lastCheckpointSize"] > 0
    # per subtask: the alignment time of the last checkpoint (ns), on the keyed vertex with 2 inputs
    vid = [v["id"] for v in c.job(jid)["vertices"] if v["name"] == "a -> s"][0]
    al = c.get(f"/jobs/{jid}/vertices/{vid}/metrics?get=checkpointAlignmentTime")
    assert sorted(x["id"] for x in al) == ["0.checkpointAlignmentTime", "1.checkpointAlignmentTime"]
    assert all(float(x["value"]) >= 0 for x in al)
    c.request("PATCH", f"/jobs/{jid}?mode=cancel")
    c.wait_state(jid, "CANCELED")
