"""The exchange end to end: records larger than a network buffer (spanning
records), keys larger than the old 4 KiB key buffer, the key limit, and a
JobManager restarted under running TaskManagers (deployment identity by
session)."""
import glob
import json
import os
import signal
import struct
import subprocess

import pytest

from conftest import BIN, Daemon, wait_for

MAX_KEY_BYTES = 64 * 1024 - 1  # lib/sl_limits.h: keyed state stores key lengths as u16


def murmur3_32(data, seed=0):
    """MurmurHash3 x86 32-bit, written from the algorithm's description."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & mask
    n = len(data) // 4
    for i in range(n):
        k = struct.unpack_from("<I", data, i * 4)[0]
        k = rotl((k * c1) & mask, 15) * c2 & mask
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & mask
    tail = data[n * 4:]
    k = 0
    for i, b in enumerate(tail):
        k |= b << (8 * i)
    if tail:
        h ^= rotl((k * c1) & mask, 15) * c2 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    return h ^ (h >> 16)


def subtask_of_string_key(key, p, max_p=128):
    """Where a hash edge sends a one-column STRING key: the key's bytes are
    1 (not null), u32 length, the UTF-8 bytes (docs/JOBS.md, key groups)."""
    raw = key.encode()
    kg = murmur3_32(b"\x01" + struct.pack("<I", len(raw)) + raw) % max_p
    return kg * p // max_p


def ten(col):
    return "CONCAT(" + ", ".join([col] * 10) + ")"


def long_rows_job(out, n, key_expr="CONCAT(s3, s2, s2, s1, s1, s1, s1, s1)"):
    """Row id: s = str(id + 1000) repeated 10,000 times (40,000 characters);
    k = the same repeated 1,250 times (5,000 characters) by default."""
    base = "CAST(id + 1000 AS STRING)"
    return {"name": "long rows", "parallelism": 2,
            "vertices": [
                {"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": "1000000", "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(n)}},
                {"id": "c1", "type": "calc", "config": {"projection": ["id", ten(base) + " AS s1"]}},
                {"id": "c2", "type": "calc", "config": {"projection": ["id", "s1", ten("s1") + " AS s2"]}},
                {"id": "c3", "type": "calc",
                 "config": {"projection": ["id", "s1", "s2", ten("s2") + " AS s3"]}},
                {"id": "c4", "type": "calc",
                 "config": {"projection": ["id", key_expr + " AS k", ten("s3") + " AS s"]}},
                {"id": "out", "type": "file", "config": {"path": out, "format": "json"}}],
            "edges": [{"from": "gen", "to": "c1", "strategy": "forward"},
                      {"from": "c1", "to": "c2", "strategy": "forward"},
                      {"from": "c2", "to": "c3", "strategy": "forward"},
                      {"from": "c3", "to": "c4", "strategy": "forward"},
                      {"from": "c4", "to": "out", "strategy": "hash", "keys": ["k"]}]}


def read_parts(out):
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, "part-*"))):
        sub = int(path.rsplit("-", 1)[1])
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                assert r["id"] not in rows, f"row {r['id']} twice"
                rows[r["id"]] = (sub, r)
    return rows


@pytest.mark.parametrize("segment", ["32kb", "4kb"])
def test_40k_row_and_5k_key_through_a_hash_exchange(make_cluster, workdir, segment):
    """With 4 KiB buffers each record spans 10 of them, over the wire and
    locally, with the floating buffers lent as the backlog grows."""
    c = make_cluster()
    extra = {"taskmanager.memory.segment-size": segment}
    c.add_tm(slots=1, extra=extra)
    c.add_tm(slots=1, extra=extra)
    out = os.path.join(workdir, "long")
    n = 40
    jid = c.submit(long_rows_job(out, n))
    job = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=120)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    rows = read_parts(out)
    assert sorted(rows) == list(range(1, n + 1))
    for i, (sub, r) in rows.items():
        unit = str(i + 1000)
        assert r["s"] == unit * 10000 and len(r["s"]) == 40000, i
        assert r["k"] == unit * 1250 and len(r["k"]) == 5000, i
        # routed by the whole key (a key over 4 KiB used to hash as the empty key)
        assert sub == subtask_of_string_key(r["k"], 2), i
    assert {sub for sub, _ in rows.values()} == {0, 1}
    # both producers ran, one on each TaskManager: records crossed the wire
    gen = [v for v in job["vertices"] if v["name"].startswith("gen")][0]
    subs = c.get(f"/sluice/jobs/{jid}/vertices/{gen['id']}/subtasks")["subtasks"]
    assert sorted(s["taskmanager-id"] for s in subs) == ["tm-0", "tm-1"]


def test_key_over_the_limit_fails_the_job_naming_the_limit(make_cluster, workdir):
    c = make_cluster()
    c.add_tm(slots=1)
    c.add_tm(slots=1)
    out = os.path.join(workdir, "toolong")
    # k = s (40,000 characters) twice: 80,005 key bytes
    job = long_rows_job(out, 4)
    job["vertices"][4]["config"]["projection"] = ["id", ten("s3") + " AS s"]
    job["vertices"].insert(5, {"id": "c5", "type": "calc",
                               "config": {"projection": ["id", "CONCAT(s, s) AS k", "s"]}})
    job["edges"][-1] = {"from": "c4", "to": "c5", "strategy": "forward"}
    job["edges"].append({"from": "c5", "to": "out", "strategy": "hash", "keys": ["k"]})
    jid = c.submit(job)
    j = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=120)
    assert j["state"] == "FAILED"
    exc = json.dumps(c.get(f"/jobs/{jid}/exceptions"))
    assert f"a key of 80005 bytes exceeds the maximum key size of {MAX_KEY_BYTES} bytes" in exc, exc
    assert "c5" in exc, exc  # the vertex
    for tm in c.tms:
        assert tm.alive()


@pytest.mark.parametrize("value,limit", [("2mb", "1048576"), ("64mb", "1048576"), ("2kb", "4096")])
def test_segment_size_the_wire_cannot_carry_is_refused(workdir, value, limit):
    r = subprocess.run([os.path.join(BIN, "sluice-taskmanager"), "-D",
                        f"taskmanager.memory.segment-size={value}"],
                       capture_output=True, text=True, timeout=30, cwd=workdir)
    assert r.returncode != 0
    assert "taskmanager.memory.segment-size" in r.stderr and limit in r.stderr, r.stderr


def seq_job(out, n):
    return {"name": "sequence", "parallelism": 2,
            "vertices": [
                {"id": "gen", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                 "config": {"rows-per-second": "200000", "fields.k.kind": "sequence",
                            "fields.k.start": "1", "fields.k.end": str(n)}},
                {"id": "c", "type": "calc", "config": {"projection": ["k", "k * 3 AS v"]}},
                {"id": "out", "type": "file", "config": {"path": out, "format": "csv"}}],
            "edges": [{"from": "gen", "to": "c", "strategy": "hash", "keys": ["k"]},
                      {"from": "c", "to": "out", "strategy": "forward"}]}


def endless_job():
    return {"name": "endless", "parallelism": 2,
            "vertices": [{"id": "g", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"}],
                          "config": {"rows-per-second": "5000"}},
                         {"id": "s", "type": "blackhole"}],
            "edges": [{"from": "g", "to": "s", "strategy": "hash", "keys": ["k"]}]}


def restart_jobmanager(c):
    """SIGKILL the JobManager and start a new one on the same ports."""
    c.jm.kill(signal.SIGKILL)
    conf = dict(c.conf)
    conf["rest.port"] = str(c.rest_port)
    conf["jobmanager.rpc.port"] = str(c.rpc_port)
    args = [os.path.join(BIN, "sluice-jobmanager")]
    for k, v in conf.items():
        args += ["-D", f"{k}={v}"]
    c.jm.log.close()
    c.jm.out.close()
    os.rename(c.jm.log_path, c.jm.log_path + ".1")
    os.rename(c.jm.out_path, c.jm.out_path + ".1")
    c.jm = Daemon("jobmanager", args, c.workdir)
    wait_for(lambda: "REST port" in c.jm.log_text() or not c.jm.alive(), what="JobManager restart")
    assert c.jm.alive(), c.jm.log_text()


def test_jobmanager_restart_under_running_taskmanagers(make_cluster, workdir):
    c = make_cluster()
    tms = [c.add_tm(slots=2), c.add_tm(slots=2)]
    # the old session gets to attempt 3; attempt 3 runs across both
    # TaskManagers when the JobManager dies
    for round_ in range(2):
        out = os.path.join(workdir, f"before{round_}")
        jid = c.submit(seq_job(out, 1000))
        assert c.wait_state(jid, ["FINISHED", "FAILED"], timeout=120)["state"] == "FINISHED"
    old = c.submit(endless_job())
    wait_for(lambda: c.job(old)["status-counts"]["RUNNING"] == 2, what="first job running")
    restart_jobmanager(c)
    wait_for(lambda: len(c.get("/taskmanagers")["taskmanagers"]) == 2, timeout=30,
             what="both TaskManagers registered again")
    # the new session's attempts 1, 2 and 3 run to their exact output
    for round_ in range(3):
        out = os.path.join(workdir, f"seq{round_}")
        n = 50000
        jid = c.submit(seq_job(out, n))
        job = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=120)
        assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
        got = []
        for path in glob.glob(os.path.join(out, "part-*")):
            with open(path) as f:
                got += [tuple(int(x) for x in line.split(",")) for line in f if line.strip()]
        assert sorted(got) == [(k, 3 * k) for k in range(1, n + 1)]
    for tm in tms:
        assert tm.alive()
        assert tm.log_text().count("registered at the JobManager") >= 2
