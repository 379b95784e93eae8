"""Keyed exchange end to end: a million rows hashed by key group into an
unbounded GROUP BY on two TaskManagers with parallelism 4."""
import collections
import glob
import json
import os

import pytest

from conftest import wait_for


def agg_job(out, n, keys, p=4, backend_rows_per_second="20000000"):
    return {"name": "count and sum per key", "parallelism": p,
            "vertices": [
                {"id": "gen", "uid": "gen", "type": "datagen",
                 "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": backend_rows_per_second, "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(n)}},
                {"id": "keyed", "type": "calc",
                 "config": {"projection": [f"id % {keys} AS k", "id AS amount"]}},
                {"id": "agg", "uid": "agg", "type": "group_aggregate",
                 "config": {"group-by": ["k"],
                            "aggregates": ["COUNT(*) AS cnt", "SUM(amount) AS total",
                                           "MAX(amount) AS hi"]}},
                {"id": "out", "type": "file", "config": {"path": out, "format": "json"}}],
            "edges": [{"from": "gen", "to": "keyed", "strategy": "forward"},
                      {"from": "keyed", "to": "agg", "strategy": "hash", "keys": ["k"]},
                      {"from": "agg", "to": "out", "strategy": "forward"}]}


def apply_changelog(out):
    """Final table per key, and which subtask file each key's rows came from."""
    table, owner = {}, collections.defaultdict(set)
    for path in sorted(glob.glob(os.path.join(out, "part-*"))):
        sub = int(path.rsplit("-", 1)[1])
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                op = r.pop("op", "+I")
                k = r["k"]
                owner[k].add(sub)
                if op in ("+I", "+U"):
                    table[k] = (r["cnt"], r["total"], r["hi"])
                elif op in ("-U", "-D"):
                    assert table.get(k) == (r["cnt"], r["total"], r["hi"]), (k, op, r)
                    del table[k]
    return table, owner


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_million_rows_group_aggregate_exact(make_cluster, workdir, backend):
    c = make_cluster()
    extra = {"state.backend.type": backend}
    c.add_tm(slots=2, extra=extra)
    c.add_tm(slots=2, extra=extra)
    n, keys = (1_000_000, 1000) if backend == "hashmap" else (100_000, 1000)
    out = os.path.join(workdir, "agg")
    jid = c.submit(agg_job(out, n, keys))
    job = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=240)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    table, owner = apply_changelog(out)
    # expected, computed independently
    exp = {}
    for k in range(keys):
        ids = range(k if k else keys, n + 1, keys)
        exp[k] = (len(ids), sum(ids), max(ids))
    assert table == exp
    # each key's updates come from exactly one subtask, and all four worked
    assert all(len(s) == 1 for s in owner.values())
    assert sorted({next(iter(s)) for s in owner.values()}) == [0, 1, 2, 3]
    # the plan shows the hash exchange and the chains
    nodes = {nd["description"]: nd for nd in job["plan"]["nodes"]}
    assert set(nodes) == {"gen -> keyed", "agg -> out"}
    assert nodes["agg -> out"]["inputs"][0]["ship_strategy"] == "HASH"
    # every subtask of both vertices ran somewhere, spread over the two TaskManagers
    for v in job["vertices"]:
        subs = c.get(f"/sluice/jobs/{jid}/vertices/{v['id']}/subtasks")["subtasks"]
        assert sorted(s["taskmanager-id"] for s in subs) == ["tm-0", "tm-0", "tm-1", "tm-1"]


def test_keyed_operator_needs_hash_input(cluster):
    cluster.add_tm(slots=2)
    job = agg_job("/tmp/unused", 10, 2, p=2)
    job["edges"][1] = {"from": "keyed", "to": "agg", "strategy": "rebalance"}
    status, body = cluster.request("POST", "/jobs", job)
    assert status == 400
    assert body["errors"][0] == ("vertex 'agg': a keyed operator with parallelism 2 needs its input "
                                 "from 'keyed' hashed on its key: use {\"strategy\": \"hash\", "
                                 "\"keys\": [\"k\"]}")


def test_rocksdb_states_of_one_tm_share_one_budget(make_cluster, workdir):
    """Four RocksDB states in one TaskManager under one small managed budget:
    the TaskManager states the budget, and the job's result is exact."""
    c = make_cluster()
    tm = c.add_tm(slots=4, extra={"state.backend.type": "rocksdb",
                                  "taskmanager.memory.managed.size": "16mb",
                                  "state.backend.rocksdb.memory.write-buffer-ratio": "0.25"})
    assert ("RocksDB memory budget 16777216 bytes (taskmanager.memory.managed.size), shared by "
            "all RocksDB states: block cache 12582912 bytes, memtables 4194304 bytes"
            in tm.log_text())
    n, keys = 50_000, 5000
    out = os.path.join(workdir, "agg")
    jid = c.submit(agg_job(out, n, keys))
    job = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=240)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    table, _ = apply_changelog(out)
    exp = {}
    for k in range(keys):
        ids = range(k if k else keys, n + 1, keys)
        exp[k] = (len(ids), sum(ids), max(ids))
    assert table == exp


def test_rocksdb_budget_per_slot_and_off(make_cluster):
    c = make_cluster()
    tm = c.add_tm(slots=3, extra={"state.backend.rocksdb.memory.fixed-per-slot": "10mb"})
    assert ("RocksDB memory budget 31457280 bytes (state.backend.rocksdb.memory.fixed-per-slot "
            "x slots)" in tm.log_text())
    tm2 = c.add_tm(slots=1, extra={"state.backend.rocksdb.memory.managed": "false"})
    assert "RocksDB memory: not managed" in tm2.log_text()
