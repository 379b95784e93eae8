"""Unaligned checkpoints (execution.checkpointing.unaligned.enabled) against
real daemons.

- Under backpressure: a fast source feeds a throttled blackhole sink across
  two TaskManagers whose gates lend many floating buffers, so many buffers
  queue ahead of every barrier. With aligned checkpoints and a checkpoint
  timeout every checkpoint expires (a barrier waits behind the whole queue);
  the same job with unaligned checkpoints completes its checkpoints, which
  REST reports as UNALIGNED_CHECKPOINT with persisted in-flight data, and
  whose _metadata lists the channel-state files. With
  aligned-checkpoint-timeout the checkpoints start aligned and complete
  unaligned once the timeout passed.
- Exactly-once: a sequence source through a hash exchange into a keyed
  COUNT/SUM, its changelog into a two-phase-commit file sink and into a
  throttled sink (so in-flight data builds up at the aggregate's inputs),
  checkpointing unaligned every 300 ms; one TaskManager is killed with
  SIGKILL mid-run and replaced. The committed output, read as a changelog,
  equals the COUNT/SUM worked out here, and a file sink fed from the source
  holds every id exactly once. On both state backends.
- Rescale: the same job cancelled after unaligned checkpoints with
  in-flight data, restored from its retained checkpoint at another
  parallelism: the records in the channel state are re-partitioned by key
  group, and the output is again exactly the COUNT/SUM of the sequence.
- Aligned-checkpoint-timeout across TaskManagers: with small receive
  queues the remote channel's in-band barrier waits for credit in the
  sender's queue; once the timeout passed it overtakes the queued buffers,
  which become the sender's output channel state. The failover test runs in
  that mode too (on both backends).
- Rescale across a broadcast edge (p=2 -> 3): each old consumer's in-flight
  copy goes to one new subtask (Flink's ROUND_ROBIN), the new third subtask
  starts at the checkpoint; exact per-id counts.
- Watermarks in channel state: seeded event-time windows with late rows
  under backpressure, a TaskManager killed: the windows equal the model's.
- Stop-with-savepoint stays aligned (SYNC_SAVEPOINT, no channel state).
- On S3: channel-state files staged, uploaded, fetched back for a restore.

No timing is asserted: the queue is long enough that an aligned barrier
cannot make the timeout, and a priority barrier needs a buffer or two.
"""
import json
import os
import re
import signal

import pytest

from conftest import failover_conf, wait_for
from test_s3 import BUCKET, key_of, no_local_leftovers, objects, s3, s3_env  # noqa: F401 (fixtures)
from test_checkpoints import (PART, _fields, apply_changelog, checkpoints, committed_files,
                              expected_agg, raw_ids, wait_completed)


def channel_states(snapshot_dir):
    """_metadata's unaligned flag (field 11) and channel-state entries (field
    10: head_uid 1, subtask 2, file 3, size 4, parallelism 5)."""
    with open(os.path.join(snapshot_dir, "_metadata"), "rb") as f:
        data = f.read()
    unaligned, files = False, []
    for num, v in _fields(data[24:]):
        if num == 11:
            unaligned = bool(v)
        elif num == 10:
            e = {"head_uid": "", "subtask": 0, "file": "", "size": 0, "parallelism": 0}
            names = {1: "head_uid", 2: "subtask", 3: "file", 4: "size", 5: "parallelism"}
            for n2, v2 in _fields(v):
                e[names[n2]] = v2.decode() if isinstance(v2, bytes) else v2
            files.append(e)
    return unaligned, files


def slow_job(unaligned, timeout="4 s", aligned_timeout=None, p=2, rate=2000):
    """datagen (fast, ~40-byte rows) -> rebalance -> blackhole throttled to
    `rate` rows/s: backpressured, with buffers queued on every channel."""
    conf = {"execution.checkpointing.interval": "500 ms",
            "execution.checkpointing.timeout": timeout,
            "execution.checkpointing.tolerable-failed-checkpoints": "1000",
            "execution.checkpointing.unaligned.enabled": "true" if unaligned else "false"}
    if aligned_timeout:
        conf["execution.checkpointing.aligned-checkpoint-timeout"] = aligned_timeout
    return {"name": "slow sink", "parallelism": p, "config": conf,
            "vertices": [
                {"id": "gen", "uid": "gen", "type": "datagen",
                 "schema": [{"name": "id", "type": "BIGINT"}, {"name": "s", "type": "STRING"}],
                 "config": {"rows-per-second": "1000000", "fields.s.length": "20"}},
                {"id": "slow", "uid": "slow", "type": "blackhole",
                 "config": {"sink.rows-per-second": str(rate)}}],
            "edges": [{"from": "gen", "to": "slow", "strategy": "rebalance"}]}


QUEUE_TM = {"taskmanager.network.memory.buffers-per-channel": "32",
            "taskmanager.network.memory.floating-buffers-per-gate": "64"}


def backpressured_cluster(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"state.checkpoints.dir": chk})
    c.add_tm(slots=1, extra=QUEUE_TM)
    c.add_tm(slots=1, extra=QUEUE_TM)
    return c, chk


def test_aligned_checkpoints_expire_unaligned_complete(make_cluster, workdir):
    c, chk = backpressured_cluster(make_cluster, workdir)

    jid = c.submit(slow_job(unaligned=False))
    c.wait_state(jid, "RUNNING", timeout=20)
    cp = wait_for(lambda: (lambda x: x if x["counts"]["failed"] >= 2 else None)(checkpoints(c, jid)),
                  timeout=60, what="two aligned checkpoints to expire")
    assert cp["counts"]["completed"] == 0, cp["counts"]
    msg = cp["latest"]["failed"]["failure_message"]
    assert "expired" in msg or "timeout" in msg.lower(), msg
    conf = c.get(f"/jobs/{jid}/checkpoints/config")
    assert conf["unaligned_checkpoints"] is False
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)

    jid = c.submit(slow_job(unaligned=True))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3, timeout=60)
    cp = checkpoints(c, jid)
    assert cp["counts"]["failed"] == 0, cp["latest"]["failed"]
    conf = c.get(f"/jobs/{jid}/checkpoints/config")
    assert conf["unaligned_checkpoints"] is True and conf["aligned_checkpoint_timeout"] == 0
    done = [h for h in cp["history"] if h["status"] == "COMPLETED"]
    assert done and all(h["checkpoint_type"] == "UNALIGNED_CHECKPOINT" for h in done), done
    # the queues were full: some in-flight data was persisted, and every
    # persisted byte is in a channel-state file _metadata lists
    with_data = [h for h in done if h["persisted_data"] > 0]
    assert with_data, [(h["id"], h["persisted_data"]) for h in done]
    latest = cp["latest"]["completed"]
    unaligned, files = channel_states(latest["external_path"][len("file:"):])
    assert unaligned
    assert sum(f["size"] for f in files) >= latest["persisted_data"]
    for f in files:
        path = os.path.join(latest["external_path"][len("file:"):], f["file"])
        assert os.path.getsize(path) == f["size"], f
    det = c.get(f"/jobs/{jid}/checkpoints/details/{latest['id']}")
    assert sum(t["persisted_data"] for t in det["tasks"].values()) == latest["persisted_data"]
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)

    # starts aligned, turns unaligned once the aligned-checkpoint-timeout passed
    jid = c.submit(slow_job(unaligned=True, aligned_timeout="300 ms", timeout="30 s"))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2, timeout=60)
    cp = checkpoints(c, jid)
    assert cp["counts"]["failed"] == 0, cp["latest"]["failed"]
    assert c.get(f"/jobs/{jid}/checkpoints/config")["aligned_checkpoint_timeout"] == 300
    done = [h for h in cp["history"] if h["status"] == "COMPLETED"]
    assert any(h["checkpoint_type"] == "UNALIGNED_CHECKPOINT" for h in done), done
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)


def backpressured_agg_job(out, raw, n, keys, rate, slow_rate, p=2, aligned_timeout=None):
    """test_checkpoints.agg_job with unaligned checkpoints, and the
    aggregate's changelog also into a blackhole throttled to slow_rate rows/s:
    the aggregate is backpressured, so buffers queue at its inputs (the
    hash exchange) and checkpoints persist them."""
    job = {"name": "count and sum per key, backpressured", "parallelism": p,
           "config": {"execution.checkpointing.unaligned.enabled": "true"},
           "vertices": [
               {"id": "gen", "uid": "gen", "type": "datagen",
                "schema": [{"name": "id", "type": "BIGINT"}],
                "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                           "fields.id.start": "1", "fields.id.end": str(n)}},
               {"id": "keyed", "type": "calc",
                "config": {"projection": [f"id % {keys} AS k", "id AS amount"]}},
               {"id": "agg", "uid": "agg", "type": "group_aggregate",
                "config": {"group-by": ["k"],
                           "aggregates": ["COUNT(*) AS cnt", "SUM(amount) AS total"]}},
               {"id": "out", "uid": "out", "type": "file",
                "config": {"path": out, "format": "json"}},
               {"id": "slow", "uid": "slow", "type": "blackhole",
                "config": {"sink.rows-per-second": str(slow_rate)}},
               {"id": "raw", "uid": "raw", "type": "file",
                "config": {"path": raw, "format": "json"}}],
           "edges": [{"from": "gen", "to": "keyed", "strategy": "forward"},
                     {"from": "gen", "to": "raw", "strategy": "forward"},
                     {"from": "keyed", "to": "agg", "strategy": "hash", "keys": ["k"]},
                     {"from": "agg", "to": "out", "strategy": "forward"},
                     {"from": "agg", "to": "slow", "strategy": "rebalance"}]}
    if aligned_timeout:
        job["config"]["execution.checkpointing.aligned-checkpoint-timeout"] = aligned_timeout
    return job


def wait_persisted(c, jid, timeout=30):
    """A completed checkpoint that persisted in-flight data."""
    def found():
        for h in checkpoints(c, jid)["history"]:
            if h["status"] == "COMPLETED" and h["persisted_data"] > 0:
                assert h["checkpoint_type"] == "UNALIGNED_CHECKPOINT", h
                return h
        return None
    return wait_for(found, timeout=timeout, what="a checkpoint with in-flight data")


def check_exact(out_paths, raw, n, keys):
    ids = raw_ids(committed_files(raw))
    dup = {i: m for i, m in ids.items() if m != 1}
    missing = sorted(set(range(1, n + 1)) - set(ids))
    assert not dup and not missing and len(ids) == n, \
        f"duplicated {list(dup.items())[:10]} ({len(dup)}), missing {missing[:10]} ({len(missing)})"
    assert apply_changelog(out_paths) == expected_agg(range(1, n + 1), keys)


@pytest.mark.parametrize("backend,aligned_timeout", [("hashmap", None), ("rocksdb", None),
                                                     ("hashmap", "100 ms"), ("rocksdb", "100 ms")])
def test_unaligned_failover_exactly_once(make_cluster, workdir, backend, aligned_timeout):
    """With aligned_timeout the checkpoints start aligned and turn unaligned
    once it passed, the barriers queued on remote channels overtaking the
    senders' buffers (output channel state) as well as those at the gates."""
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk))
    extra = {"state.backend.type": backend}
    c.add_tm(slots=2, extra=extra)
    c.add_tm(slots=2, extra=extra)
    n, keys = 12000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(backpressured_agg_job(out, raw, n, keys, rate=4000, slow_rate=3000,
                                         aligned_timeout=aligned_timeout))
    c.wait_state(jid, "RUNNING", timeout=20)
    for v in c.job(jid)["vertices"]:
        subs = c.get(f"/sluice/jobs/{jid}/vertices/{v['id']}/subtasks")["subtasks"]
        assert sorted(s["taskmanager-id"] for s in subs) == ["tm-0", "tm-1"], (v["name"], subs)

    wait_persisted(c, jid)
    if aligned_timeout:
        wait_for(lambda: overtaken_remote(c) > 0, timeout=20,
                 what="a barrier overtaking a remote send queue")
    wait_for(lambda: committed_files(out) and committed_files(raw), timeout=10,
             what="committed output")
    assert c.job(jid)["state"] == "RUNNING"
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra=extra)

    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    cp = checkpoints(c, jid)
    assert cp["counts"]["restored"] == 1, cp["counts"]
    check_exact(committed_files(out), raw, n, keys)
    assert replayed(c) > 0  # the throttled sink keeps the hash exchange full
    for d in (out, raw):
        assert [f for f in os.listdir(d) if not PART.match(f)] == []


def test_unaligned_restore_at_another_parallelism(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms",
                              "state.checkpoints.dir": chk})
    c.add_tm(slots=3)
    n, keys = 12000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = backpressured_agg_job(out, raw, n, keys, rate=4000, slow_rate=2000)
    jf = os.path.join(workdir, "job.json")
    with open(jf, "w") as f:
        json.dump(job, f)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_persisted(c, jid)
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    latest = checkpoints(c, jid)["latest"]["completed"]
    path = latest["external_path"][len("file:"):]
    unaligned, files = channel_states(path)
    assert unaligned and files, files
    run1_out = committed_files(out)
    assert 0 < len(raw_ids(committed_files(raw))) < n

    # at parallelism 3: the in-flight records re-partitioned by key group
    r = c.cli("run", "-s", f"file:{path}", "-p", "3", jf, timeout=90)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    new_out = [p for p in committed_files(out) if p not in run1_out]
    check_exact(run1_out + new_out, raw, n, keys)
    # the in-flight records were replayed (every subtask of the aggregate
    # reads every old channel of the hash edge and keeps its key groups)
    assert replayed(c) > 0


def overtaken_remote(c):
    """Buffers queued on remote channels that an aligned barrier overtook
    when its aligned-checkpoint-timeout passed, as the TaskManagers log it."""
    total = 0
    for tm in c.tms:
        with open(tm.log_path) as f:
            for line in f:
                m = re.search(r"the barrier overtook (\d+) queued buffers on \d+ remote", line)
                if m:
                    total += int(m.group(1))
    return total


def replayed_by_subtask(c, name_part, p):
    """In-flight records replayed on restore per subtask of the task whose
    name contains name_part, running at parallelism p."""
    got = [0] * p
    for tm in c.tms:
        with open(tm.log_path) as f:
            for line in f:
                m = re.search(r"task (.*) \((\d+)/(\d+)\): replayed (\d+) in-flight", line)
                if m and name_part in m.group(1) and int(m.group(3)) == p:
                    got[int(m.group(2)) - 1] += int(m.group(4))
    return got


def replayed(c):
    """In-flight records the TaskManagers say they replayed on restore."""
    total = 0
    for tm in c.tms:
        with open(tm.log_path) as f:
            for line in f:
                m = re.search(r"replayed (\d+) in-flight records", line)
                if m:
                    total += int(m.group(1))
    return total


def test_stop_with_savepoint_stays_aligned(make_cluster, workdir):
    """With unaligned checkpoints on, stop-with-savepoint still takes an
    aligned savepoint (SYNC_SAVEPOINT, no channel state), and the job
    restored from it ends with the exact output."""
    from test_savepoints import stop_with_savepoint
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms",
                              "state.checkpoints.dir": chk})
    c.add_tm(slots=2)
    n, keys = 12000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    job = backpressured_agg_job(out, raw, n, keys, rate=4000, slow_rate=6000)
    jf = os.path.join(workdir, "job.json")
    with open(jf, "w") as f:
        json.dump(job, f)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_persisted(c, jid)
    sp = stop_with_savepoint(c, jid, f"file://{workdir}/sp")
    unaligned, files = channel_states(sp)
    assert not unaligned and files == []
    cp = checkpoints(c, jid)
    assert cp["latest"]["savepoint"]["checkpoint_type"] == "SYNC_SAVEPOINT"
    assert cp["latest"]["savepoint"]["persisted_data"] == 0
    run1_out = committed_files(out)
    r = c.cli("run", "-s", f"file:{sp}", jf, timeout=90)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    new_out = [p for p in committed_files(out) if p not in run1_out]
    check_exact(run1_out + new_out, raw, n, keys)


def test_unaligned_checkpoints_on_s3(make_cluster, workdir, s3):
    """Channel state on S3: written to a staging file, uploaded with the
    checkpoint, fetched back for the restore after a TaskManager is killed;
    the output is exact and no staged file is left behind."""
    chk = f"s3://{BUCKET}/checkpoints"
    c = make_cluster(jm_conf={**s3.conf(), **failover_conf(), "state.checkpoints.dir": chk,
                              "execution.checkpointing.tolerable-failed-checkpoints": "10"})
    tm_conf = {**s3.conf(), "taskmanager.tmp.dirs": workdir}
    c.add_tm(slots=2, extra=tm_conf)
    c.add_tm(slots=2, extra=tm_conf)
    n, keys = 12000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(backpressured_agg_job(out, raw, n, keys, rate=4000, slow_rate=3000))
    c.wait_state(jid, "RUNNING", timeout=20)
    h = wait_persisted(c, jid)
    key_dir = key_of(h["external_path"])
    names = set(objects(s3, key_dir + "/"))
    assert any(k.rsplit("/", 1)[1].startswith("channels-") for k in names), sorted(names)
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra=tm_conf)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert checkpoints(c, jid)["counts"]["restored"] == 1
    check_exact(committed_files(out), raw, n, keys)
    no_local_leftovers(workdir, skip=[c.tms[0].id])


def test_aligned_checkpoints_report_data_processed_while_aligning(make_cluster, workdir):
    """An aligned checkpoint of a backpressured job: each sink subtask goes on
    processing the channel whose barrier has not come yet while it aligns;
    those bytes are the checkpoint's processed_data (per checkpoint, and the
    sum of its tasks'), and nothing is persisted."""
    c = make_cluster(jm_conf={"state.checkpoints.dir": os.path.join(workdir, "chk")})
    c.add_tm(slots=1)  # the default queues: alignments of a second or so
    c.add_tm(slots=1)
    jid = c.submit(slow_job(unaligned=False, timeout="60 s", rate=20000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2, timeout=90)
    done = [h for h in checkpoints(c, jid)["history"] if h["status"] == "COMPLETED"]
    assert all(h["checkpoint_type"] == "CHECKPOINT" and h["persisted_data"] == 0 for h in done), done
    assert any(h["processed_data"] > 0 for h in done), [(h["id"], h["processed_data"]) for h in done]
    for h in done:
        det = c.get(f"/jobs/{jid}/checkpoints/details/{h['id']}")
        assert sum(t["processed_data"] for t in det["tasks"].values()) == h["processed_data"], det
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)

    # aligned-checkpoint-timeout with these small receive queues: the remote
    # channel's in-band barrier waits for credit in the sender's queue, behind
    # its buffers; once the timeout passed it overtakes them (Flink's output
    # side), and they are the sources' output channel state -- a source
    # writes channel state no other way in this mode
    jid = c.submit(slow_job(unaligned=True, aligned_timeout="200 ms", timeout="30 s"))
    c.wait_state(jid, "RUNNING", timeout=20)

    def gen_output_state():
        h = checkpoints(c, jid)["latest"]["completed"]
        if not h:
            return None
        try:
            _, files = channel_states(h["external_path"][len("file:"):])
        except FileNotFoundError:
            return None  # subsumed meanwhile
        if any(f["head_uid"] == "gen" and f["size"] > 0 for f in files):
            assert h["checkpoint_type"] == "UNALIGNED_CHECKPOINT", h
            return h
        return None
    wait_for(gen_output_state, timeout=30, what="a checkpoint with the sources' output channel state")
    assert overtaken_remote(c) > 0
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)


def broadcast_job(out, n, rate, slow_rate, p=2):
    """A sequence source at parallelism 1 broadcast to every subtask of a
    pass-through calc, whose rows go into a two-phase-commit file sink and
    into a blackhole throttled to slow_rate rows/s (so buffers queue at the
    calc's broadcast input and unaligned checkpoints persist them)."""
    return {"name": "broadcast, backpressured", "parallelism": p,
            "config": {"execution.checkpointing.unaligned.enabled": "true"},
            "vertices": [
                {"id": "gen", "uid": "gen", "type": "datagen", "parallelism": 1,
                 "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(n)}},
                {"id": "pass", "uid": "pass", "type": "calc", "config": {"projection": ["id"]}},
                {"id": "out", "uid": "out", "type": "file", "config": {"path": out, "format": "json"}},
                {"id": "slow", "uid": "slow", "type": "blackhole",
                 "config": {"sink.rows-per-second": str(slow_rate)}}],
            "edges": [{"from": "gen", "to": "pass", "strategy": "broadcast"},
                      {"from": "pass", "to": "out", "strategy": "forward"},
                      {"from": "pass", "to": "slow", "strategy": "rebalance"}]}


def test_unaligned_rescale_broadcast_edge(make_cluster, workdir):
    """Restore at parallelism 3 from an unaligned checkpoint taken at 2 with
    in-flight data on a broadcast edge. As Flink's ROUND_ROBIN mapping of a
    broadcast edge's channel state, old consumer q's in-flight data goes to
    new subtask q mod 3 only: each old consumer's stream is completed exactly
    once and the new third subtask starts at the checkpoint. So every id up
    to the source's position at the checkpoint is in the output exactly
    twice (once per old consumer) and every later one exactly three times."""
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms",
                              "state.checkpoints.dir": chk})
    c.add_tm(slots=3)
    n = 6000
    out = os.path.join(workdir, "out")
    job = broadcast_job(out, n, rate=4000, slow_rate=3000)
    jf = os.path.join(workdir, "job.json")
    with open(jf, "w") as f:
        json.dump(job, f)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)

    def broadcast_in_flight():
        # the latest checkpoint holds in-flight data of the broadcast edge
        # (the calc's files) for both subtasks
        h = checkpoints(c, jid)["latest"]["completed"]
        try:
            unaligned, files = channel_states(h["external_path"][len("file:"):]) if h else (0, [])
        except FileNotFoundError:
            return None  # subsumed meanwhile
        both = {f["subtask"] for f in files if f["head_uid"] == "pass" and f["size"] > 0} == {0, 1}
        return h if unaligned and both else None
    wait_for(broadcast_in_flight, timeout=20, what="a checkpoint with the broadcast edge's in-flight data")
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    # the latest one, which the committed output ends at (under this steady
    # backpressure every checkpoint has the broadcast edge's in-flight data)
    assert broadcast_in_flight(), "the latest checkpoint has no in-flight data of the broadcast edge"
    path = checkpoints(c, jid)["latest"]["completed"]["external_path"][len("file:"):]
    run1 = committed_files(out)

    r = c.cli("run", "-s", f"file:{path}", "-p", "3", jf, timeout=90)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    run2 = [p for p in committed_files(out) if p not in run1]
    # the new third subtask replayed nothing: what it wrote is exactly what
    # the restored source emitted after its position at the checkpoint
    mine = replayed_by_subtask(c, "pass", 3)
    assert mine[0] > 0 and mine[1] > 0 and mine[2] == 0, mine
    third = sorted(raw_ids([p for p in run2 if PART.match(os.path.basename(p)).group(1) == "2"]))
    cut = n - len(third)
    assert 0 < cut < n and third == list(range(cut + 1, n + 1)), (cut, third[:5])
    counts = raw_ids(run1 + run2)
    bad = [(i, counts.get(i, 0)) for i in range(1, n + 1) if counts.get(i, 0) != (2 if i <= cut else 3)]
    assert not bad, (cut, bad[:10], len(bad))


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_unaligned_event_time_windows_exact_after_failover(make_cluster, workdir, backend):
    """Watermarks in channel state: test_windows' seeded event-time stream
    (a watermark after every row that advances it, 1 s delay, so which rows
    are late is fixed) into a 10 s tumbling COUNT/SUM, behind a pass-through
    calc that also feeds a throttled sink, so the calc's input holds rows
    and watermarks in flight at every unaligned checkpoint. A
    TaskManager is killed and replaced: each channel's watermark at the
    snapshot and the watermarks in flight are replayed in order with the
    rows, so the restored task judges late rows exactly as the run without
    the failure did -- the committed windows equal the model's."""
    from test_windows import BASE, expected_windows, read_windows
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk))
    extra = {"state.backend.type": backend}
    c.add_tm(slots=1, extra=extra)
    n, disorder = 8000, 5000
    out = os.path.join(workdir, "w")
    # parallelism 1 throughout, so the window reads one channel and its
    # watermark is the generator's, row by row (test_windows' model)
    job = {"name": "event-time windows, backpressured", "parallelism": 1,
           "config": {"execution.checkpointing.unaligned.enabled": "true"},
           "vertices": [
               {"id": "gen", "uid": "gen", "type": "datagen", "parallelism": 1,
                "schema": [{"name": "id", "type": "BIGINT"}],
                "config": {"rows-per-second": "4000", "fields.id.kind": "sequence",
                           "fields.id.start": "1", "fields.id.end": str(n)}},
               {"id": "ev", "uid": "ev", "type": "calc", "parallelism": 1,
                "config": {"projection": [
                    "id", "CAST(id % 5 AS INT) AS user_id",
                    f"TO_TIMESTAMP_LTZ({BASE} + id * 100 - (id * 7919) % {disorder}, 3) AS ts"]}},
               {"id": "wm", "uid": "wm", "type": "watermark", "parallelism": 1,
                "config": {"column": "ts", "delay": "1 s", "interval": "0 ms"}},
               {"id": "pass", "uid": "pass", "type": "calc",
                "config": {"projection": ["id", "user_id", "ts"]}},
               {"id": "win", "uid": "win", "type": "window",
                "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '10' SECOND)",
                           "group-by": ["user_id"], "aggregates": ["COUNT(*) AS cnt", "SUM(id) AS s"]}},
               {"id": "out", "uid": "out", "type": "file", "config": {"path": out, "format": "json"}},
               {"id": "slow", "uid": "slow", "type": "blackhole",
                "config": {"sink.rows-per-second": "2000"}}],
           "edges": [{"from": "gen", "to": "ev"}, {"from": "ev", "to": "wm"},
                     {"from": "wm", "to": "pass", "strategy": "rebalance"},
                     {"from": "pass", "to": "win", "strategy": "hash", "keys": ["user_id"]},
                     {"from": "win", "to": "out", "strategy": "forward"},
                     {"from": "pass", "to": "slow", "strategy": "rebalance"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_persisted(c, jid)
    wait_for(lambda: committed_files(out), timeout=15, what="committed windows")
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=1, extra=extra)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert checkpoints(c, jid)["counts"]["restored"] == 1
    exp, late = expected_windows(n, disorder_ms=disorder, delay_ms=1000)
    assert late > 0
    assert read_windows(out) == exp
    assert replayed_watermarks(c) > 0


def replayed_watermarks(c):
    total = 0
    for tm in c.tms:
        with open(tm.log_path) as f:
            for line in f:
                m = re.search(r"in-flight records of the checkpoint \((\d+) watermarks\)", line)
                if m:
                    total += int(m.group(1))
    return total
