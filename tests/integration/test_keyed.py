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
