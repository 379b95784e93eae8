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

No timing is asserted: the queue is long enough that an aligned barrier
cannot make the timeout, and a priority barrier needs a buffer or two.
"""
import json
import os
import signal

import pytest

from conftest import failover_conf, wait_for
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


def slow_job(unaligned, timeout="4 s", aligned_timeout=None, p=2):
    """datagen (fast, ~40-byte rows) -> rebalance -> blackhole throttled to
    2000 rows/s: backpressured, with buffers queued on every channel."""
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
                 "config": {"sink.rows-per-second": "2000"}}],
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
