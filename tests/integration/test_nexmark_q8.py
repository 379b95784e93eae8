"""Nexmark q8 (bench/nexmark/queries/q8.sql) on a real cluster, against a
Python model: a window aggregation with GROUP BY keys, window_start and
window_end but no aggregate call (a distinct per window: the window
operator with an empty aggregate list), on each side of a join.

q8 pairs each person with the 10 s tumbling window it registered in when
the same person opened an auction in that window. Both subqueries are
distinct per (keys, window), so each (person, window) appears at most once.
The query runs twice on the same event files: in one phase, and with
Flink's mini-batch keys on, so a local_aggregate with no aggregates runs
before each window (two phases); both must give the model's rows exactly.
"""
import os
import sys

from conftest import BUILD, ROOT
from test_nexmark_smoke import read_kind
from test_sql import finish, job_ids, ms, rows

sys.path.insert(0, os.path.join(ROOT, "bench", "nexmark"))
import run as nexmark  # noqa: E402

EVENTS, RATE = 3000, 100  # 30 s of event time: three 10 s windows and a bit
WINDOW = 10000

MINI_BATCH = ("SET 'table.exec.mini-batch.enabled' = 'true';\n"
              "SET 'table.exec.mini-batch.allow-latency' = '1 s';\n"
              "SET 'table.exec.mini-batch.size' = '50';\n")


def model(person, auction):
    """q8's rows: (id, name, window start in ms) of every person who opened
    an auction in the window of their registration."""
    sellers = {(a["seller"], ms(a["dateTime"]) // WINDOW * WINDOW) for a in auction}
    people = {(p["id"], p["name"], ms(p["dateTime"]) // WINDOW * WINDOW) for p in person}
    return sorted(p for p in people if (p[0], p[2]) in sellers)


def run_q8(cluster, workdir, data, name, prefix=""):
    out = os.path.join(workdir, f"out-{name}")
    sink = f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json'"
    path = os.path.join(workdir, f"{name}.sql")
    with open(path, "w") as f:
        f.write(prefix + nexmark.sluice_script("q8", data, sink=sink))
    r = cluster.cli("sql", "-f", path, timeout=120)
    jid = job_ids(r.stdout)
    assert jid, r.stdout + r.stderr
    finish(cluster, jid[0])
    plan = cluster.get(f"/jobs/{jid[0]}/plan")
    descriptions = " | ".join(n["description"] for n in plan["plan"]["nodes"])
    return sorted((g["id"], g["name"], ms(g["stime"])) for g in rows(out)), descriptions


def test_q8_matches_a_model_in_one_and_two_phases(cluster, workdir):
    cluster.add_tm(slots=2)
    data = os.path.join(workdir, "events")
    nexmark.generate(BUILD, EVENTS, data, rate=RATE)
    person, auction = read_kind(data, "person"), read_kind(data, "auction")
    want = model(person, auction)
    # the test means something: some persons match, and some do not
    assert 5 <= len(want) < len(person), (len(want), len(person))

    got, plan = run_q8(cluster, workdir, data, "one-phase")
    assert got == want
    assert "local-window" not in plan

    got, plan = run_q8(cluster, workdir, data, "two-phase", MINI_BATCH)
    assert got == want
    assert "-> local-window |" in plan and "-> local-window-2 |" in plan  # the local phases
