"""Streaming joins from SQL on a real cluster: the seed's 02-sql-ops interval
join of orders and payments (p.ts within one minute of o.ts), planned by
`sluice sql -f` and run at parallelism 2 across two TaskManagers. The
feeders are sequence generators whose every column is a function of the
sequence number, so the expected enriched rows are computed here by a
brute-force join, independently of Sluice."""
import collections
import json
import os
import re

import pytest

from conftest import wait_for
from test_sql import BASE, finish, job_ids, ms, rows, run_sql

N_ORDERS = 600
N_PAYMENTS = 700
METHODS = ["card", "cash", "wallet"]


def order(i):
    return {"order_id": i, "user_id": i % 7, "amount": i * 37 % 500 + 1, "ts": BASE + i * 1000}


def payment(j):
    # the order it pays: near its own number, off by -75..74, so some fall
    # outside the minute and some name no order at all
    return {"order_id": j + (j * 13) % 150 - 75, "method": METHODS[j % 3], "ts": BASE + j * 1000}


FEEDERS = f"""
CREATE TABLE orders (
    order_id INT,
    user_id  AS order_id % 7,
    amount   AS order_id * 37 % 500 + 1,
    ts       AS TO_TIMESTAMP_LTZ({BASE} + order_id * 1000, 3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1',
        'fields.order_id.end' = '{N_ORDERS}');

CREATE TABLE payments (
    pay_id   INT,
    order_id AS pay_id + (pay_id * 13) % 150 - 75,
    `method` AS CASE WHEN pay_id % 3 = 0 THEN 'card' WHEN pay_id % 3 = 1 THEN 'cash'
                     ELSE 'wallet' END,
    ts       AS TO_TIMESTAMP_LTZ({BASE} + pay_id * 1000, 3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.pay_id.kind' = 'sequence', 'fields.pay_id.start' = '1',
        'fields.pay_id.end' = '{N_PAYMENTS}');
"""


def interval_join(kind="inner", lo=-60000, hi=60000):
    """The brute-force join: every order/payment pair of one order_id with
    o.ts + lo <= p.ts <= o.ts + hi; outer rows for the rest."""
    orders = [order(i) for i in range(1, N_ORDERS + 1)]
    pays = [payment(j) for j in range(1, N_PAYMENTS + 1)]
    out = collections.Counter()
    matched_p = set()
    for o in orders:
        hit = False
        for j, p in enumerate(pays):
            if p["order_id"] == o["order_id"] and o["ts"] + lo <= p["ts"] <= o["ts"] + hi:
                out[(o["order_id"], o["user_id"], o["amount"], p["method"])] += 1
                matched_p.add(j)
                hit = True
        if not hit and kind in ("left", "full"):
            out[(o["order_id"], o["user_id"], o["amount"], None)] += 1
    if kind in ("right", "full"):
        for j, p in enumerate(pays):
            if j not in matched_p:
                out[(None, None, None, p["method"])] += 1
    return out


def enriched_sink(out):
    return f"""
CREATE TABLE enriched (order_id INT, user_id INT, amount INT, `method` STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
"""


def test_seed_interval_join_of_orders_and_payments(cluster, workdir):
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "enriched")
    r = run_sql(cluster, workdir, "join.sql", FEEDERS + enriched_sink(out) + """
INSERT INTO enriched
SELECT o.order_id, o.user_id, o.amount, p.`method`
FROM orders o
JOIN payments p
  ON o.order_id = p.order_id
 AND p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL '1' MINUTE;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING" not in r.stdout, r.stdout  # an interval join's state is bounded
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    detail = cluster.get(f"/jobs/{jid}")
    joins = [v for v in detail["vertices"] if "interval" in v["name"]]
    assert joins and joins[0]["parallelism"] == 2, detail["vertices"]
    subs = cluster.get(f"/sluice/jobs/{jid}/vertices/{joins[0]['id']}/subtasks")["subtasks"]
    assert len({s["taskmanager-id"] for s in subs}) == 2, subs  # one subtask on each TaskManager
    late = cluster.get(f"/jobs/{jid}/vertices/{joins[0]['id']}/metrics?get=numLateRecordsDropped")
    assert late and all(float(m["value"]) == 0 for m in late), late  # in-order feeders: nothing is late
    got = collections.Counter()
    for row in rows(out):
        assert row.get("op", "+I") == "+I", row
        got[(row["order_id"], row["user_id"], row["amount"], row["method"])] += 1
    want = interval_join()
    assert sum(want.values()) > 300  # the data does exercise the join
    assert got == want


def test_left_interval_join_pads_orders_without_payment(cluster, workdir):
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "left")
    r = run_sql(cluster, workdir, "left.sql", FEEDERS + enriched_sink(out) + """
INSERT INTO enriched
SELECT o.order_id, o.user_id, o.amount, p.`method`
FROM orders AS o LEFT OUTER JOIN payments AS p
  ON o.order_id = p.order_id AND p.ts >= o.ts - INTERVAL '10' SECOND AND p.ts < o.ts + INTERVAL '30' SECOND;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = collections.Counter()
    for row in rows(out):
        assert row.get("op", "+I") == "+I", row
        got[(row["order_id"], row["user_id"], row["amount"], row["method"])] += 1
    want = interval_join("left", -10000, 29999)
    assert sum(1 for k in want if k[3] is None) > 20
    assert got == want


def test_join_errors_name_the_problem(cluster, workdir):
    r = run_sql(cluster, workdir, "bad.sql", FEEDERS + enriched_sink(os.path.join(workdir, "x")) + """
INSERT INTO enriched SELECT o.order_id, o.user_id, o.amount, p.`method`
FROM orders o JOIN payments p ON o.amount > p.pay_id;
""")
    assert "needs an equality between a column of each side" in r.stdout + r.stderr
    r = run_sql(cluster, workdir, "bad2.sql", FEEDERS + enriched_sink(os.path.join(workdir, "x")) + """
INSERT INTO enriched SELECT order_id, user_id, amount, `method`
FROM orders o JOIN payments p ON o.order_id = p.order_id;
""")
    assert "column 'order_id' is ambiguous" in r.stdout + r.stderr
    r = run_sql(cluster, workdir, "bad3.sql", FEEDERS + enriched_sink(os.path.join(workdir, "x")) + """
INSERT INTO enriched SELECT o.order_id, o.user_id, o.amount, q.`method`
FROM orders o JOIN payments p ON o.order_id = p.order_id;
""")
    assert "unknown table or alias 'q' (the join names 'o', 'p')" in r.stdout + r.stderr


def regular_left_join():
    """orders LEFT JOIN payments ON order_id, as a multiset of rows."""
    pays = collections.defaultdict(list)
    for j in range(1, N_PAYMENTS + 1):
        pays[payment(j)["order_id"]].append(payment(j)["method"])
    out = collections.Counter()
    for i in range(1, N_ORDERS + 1):
        o = order(i)
        for m in pays.get(i, [None]):
            out[(o["order_id"], o["user_id"], o["amount"], m)] += 1
    return out


def applied_changelog(out):
    """The enriched sink's changelog applied row by row: the table it ends
    as (a multiset) and the count of each row kind. Each -D must retract a
    row the table holds."""
    table, ops = collections.Counter(), collections.Counter()
    for row in rows(out):
        op = row.pop("op", "+I")
        ops[op] += 1
        key = (row["order_id"], row["user_id"], row["amount"], row["method"])
        if op == "+I":
            table[key] += 1
        else:
            assert op == "-D" and table[key] > 0, (op, key, table[key])
            table[key] -= 1
    return +table, ops


def regular_full_join_with_condition():
    """orders FULL JOIN payments ON order_id AND (amount + pay_id) % 4 <> 0:
    pairs of an order_id for which the condition holds; an order or payment
    with no such pair comes out alone, padded with NULLs."""
    out = collections.Counter()
    paired = set()
    for i in range(1, N_ORDERS + 1):
        o = order(i)
        hit = False
        for j in range(1, N_PAYMENTS + 1):
            p = payment(j)
            if p["order_id"] == i and (o["amount"] + j) % 4 != 0:
                out[(i, o["user_id"], o["amount"], p["method"])] += 1
                paired.add(j)
                hit = True
        if not hit:
            out[(i, o["user_id"], o["amount"], None)] += 1
    for j in range(1, N_PAYMENTS + 1):
        if j not in paired:
            out[(None, None, None, payment(j)["method"])] += 1
    return out


def test_regular_outer_join_with_a_condition_beyond_the_keys(cluster, workdir):
    """A FULL JOIN whose ON has a condition over both sides besides the key:
    the join evaluates it per pair, so it decides which rows stand alone, as
    in Flink. The changelog applied row by row ends as the model's join."""
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "cond")
    r = run_sql(cluster, workdir, "cond.sql", FEEDERS + enriched_sink(out) + """
INSERT INTO enriched
SELECT o.order_id, o.user_id, o.amount, p.`method`
FROM orders o FULL JOIN payments p ON o.order_id = p.order_id AND MOD(o.amount + p.pay_id, 4) <> 0;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    plan = cluster.get(f"/jobs/{jid}/plan")["plan"]["nodes"]
    assert "join-filter" not in json.dumps(plan), plan  # no filter after the join
    table, _ = applied_changelog(out)
    assert table == regular_full_join_with_condition()


def test_regular_left_join_changelog_across_two_taskmanagers(cluster, workdir):
    """Without the time condition: a regular LEFT JOIN, whose changelog
    (+I[o, null], then -D[o, null] +I[o, p] when the payment comes) applied
    row by row ends as the left join of everything; each -D must retract a
    row the table holds."""
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "regular")
    r = run_sql(cluster, workdir, "regular.sql", FEEDERS + enriched_sink(out) + """
INSERT INTO enriched
SELECT o.order_id, o.user_id, o.amount, p.`method`
FROM orders o LEFT JOIN payments p ON o.order_id = p.order_id;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[WARNING] regular join" in r.stdout
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    subs = cluster.get(f"/sluice/jobs/{jid}/vertices/{join_vertex(cluster, jid, 'join')}/subtasks")["subtasks"]
    assert len({s["taskmanager-id"] for s in subs}) == 2, subs
    table, ops = applied_changelog(out)
    assert table == regular_left_join()
    # Flink's join changelog: inserts and deletes. How many -D there are
    # depends on which feeder runs ahead (a payment before its order retracts
    # nothing), so only their kind is fixed here; the retractions themselves
    # are checked against a model in tests/unit/test_joins.c.
    assert set(ops) <= {"+I", "-D"}, ops


def test_state_ttl_setting_and_hint_bound_a_regular_join(cluster, workdir):
    base = FEEDERS + enriched_sink(os.path.join(workdir, "x"))
    q = ("INSERT INTO enriched SELECT {hint} o.order_id, o.user_id, o.amount, p.`method` "
         "FROM orders o JOIN payments p ON o.order_id = p.order_id;\n")

    def plan(pre, hint=""):
        r = run_sql(cluster, workdir, "ttl.sql", base + pre + "EXPLAIN " + q.format(hint=hint))
        assert r.returncode == 0, r.stdout + r.stderr
        job = json.loads(r.stdout.split("== Job Graph ==\n", 1)[1].split("\n\n")[0])
        cfg = [v for v in job["vertices"] if v["type"] == "regular_join"][0].get("config", {})
        return cfg, "[WARNING]" in r.stdout

    cfg, warned = plan("")
    assert warned and "table.exec.state.ttl" not in cfg
    cfg, warned = plan("SET 'table.exec.state.ttl' = '1 h';\n")
    assert not warned and cfg["table.exec.state.ttl"] == "1 h"
    cfg, warned = plan("", "/*+ STATE_TTL('o' = '1d', 'p' = '12 h') */")
    assert not warned and cfg["left.state.ttl"] == "1d" and cfg["right.state.ttl"] == "12 h"
    cfg, warned = plan("", "/*+ STATE_TTL('p' = '12 h') */")
    assert warned and cfg["right.state.ttl"] == "12 h"  # the left side is still unbounded
    r = run_sql(cluster, workdir, "bad.sql", base + q.format(hint="/*+ STATE_TTL('q' = '1 d') */"))
    assert "STATE_TTL: 'q' is not an input of the join (it reads 'o', 'p')" in r.stdout
    r = run_sql(cluster, workdir, "bad.sql", base + q.format(hint="/*+ STATE_TTL('o' = 'soon') */"))
    assert "'soon' for 'o' is not a positive duration" in r.stdout
    r = run_sql(cluster, workdir, "bad.sql", base + q.format(hint="/*+ NO_SUCH('o' = '1') */"))
    assert "unknown hint 'NO_SUCH'" in r.stdout


RATES = f"""
CREATE TABLE orders2 (
    order_id INT,
    currency AS CASE order_id % 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'GBP' END,
    ts       AS TO_TIMESTAMP_LTZ({BASE} + order_id * 1000, 3),
    WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '600');
CREATE TABLE rates (
    id       INT,
    currency AS CASE id % 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'GBP' END,
    rate     AS id * 7 % 100,
    ts       AS TO_TIMESTAMP_LTZ({BASE} + id * 3000 + 500, 3),
    WATERMARK FOR ts AS ts - INTERVAL '2' SECOND,
    PRIMARY KEY (currency) NOT ENFORCED
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200');
"""


def currency(i):
    return ["EUR", "USD", "GBP"][i % 3]


def temporal_expected(left):
    versions = collections.defaultdict(list)  # currency -> [(ts, rate)]
    for j in range(1, 201):
        versions[currency(j)].append((j * 3000 + 500, j * 7 % 100))
    out = collections.Counter()
    for i in range(1, 601):
        t = i * 1000
        valid = [v for v in versions[currency(i)] if v[0] <= t]
        if valid:
            out[(i, currency(i), max(valid)[1])] += 1
        elif left:
            out[(i, currency(i), None)] += 1
    return out


def test_temporal_join_against_a_versioned_table(cluster, workdir):
    """FOR SYSTEM_TIME AS OF o.ts: each order gets the rate of its currency
    valid at its time (the latest version at or before it), at parallelism 2
    across two TaskManagers; a LEFT join pads the orders before any rate."""
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    for kind, left in (("JOIN", False), ("LEFT JOIN", True)):
        out = os.path.join(workdir, f"temporal-{left}")
        r = run_sql(cluster, workdir, "temporal.sql", RATES + f"""
CREATE TABLE priced (order_id INT, currency STRING, rate INT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO priced
SELECT o.order_id, o.currency, r.rate
FROM orders2 AS o {kind} rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency;
""")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "[WARNING]" not in r.stdout  # versions are bounded by the watermark
        jid = job_ids(r.stdout)[0]
        finish(cluster, jid)
        got = collections.Counter()
        for row in rows(out):
            assert row.get("op", "+I") == "+I", row
            got[(row["order_id"], row["currency"], row["rate"])] += 1
        want = temporal_expected(left)
        assert (sum(1 for k in want if k[2] is None) > 0) == left
        assert got == want
    r = run_sql(cluster, workdir, "bad.sql", RATES + """
CREATE TABLE priced (order_id INT, currency STRING, rate INT) WITH ('connector' = 'blackhole');
INSERT INTO priced SELECT o.order_id, o.currency, r.rate
FROM rates AS r JOIN orders2 FOR SYSTEM_TIME AS OF r.ts AS o ON o.currency = r.currency;
""")
    assert "'orders2' is not a versioned table (it needs a PRIMARY KEY and a WATERMARK" in r.stdout


ONE_SOURCE = f"""
SET 'pipeline.auto-watermark-interval' = '0 ms';
CREATE TABLE events (
    id BIGINT,
    ts AS TO_TIMESTAMP_LTZ({BASE} + id * 1000, 3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '3000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000000');
CREATE VIEW orders AS SELECT id AS order_id, id % 100 AS amount, ts FROM events WHERE id % 2 = 0;
CREATE VIEW payments AS SELECT id + 1 AS order_id, id AS pay_id, ts FROM events WHERE id % 2 = 1;
CREATE TABLE sink (order_id BIGINT, amount BIGINT, pay_id BIGINT) WITH ('connector' = 'blackhole');
"""


def join_vertex(cluster, jid, word):
    vs = cluster.get(f"/jobs/{jid}")["vertices"]
    found = [v["id"] for v in vs if word in v["name"]]
    assert found, vs
    return found[0]


def state_sample(cluster, jid, vid):
    ms = cluster.get(f"/jobs/{jid}/vertices/{vid}/metrics?get=numRecordsIn,stateEntries,"
                     "stateSizeBytes,numLateRecordsDropped")
    return {m["id"].split(".", 1)[1]: float(m["value"]) for m in ms}  # subtask 0 (parallelism 1)


def test_regular_join_warns_and_its_state_grows_while_the_interval_joins_stays_flat(cluster, workdir):
    """One source feeds both sides (even ids are orders, each odd id pays the
    next order one second later), with a watermark after every row, so the
    interval join's state holds the rows of the last 125 s of event time
    (one row per second: 126 rows) plus whatever is in flight between the
    two inputs; the regular join keeps every row it has seen."""
    cluster.add_tm(slots=2)
    r = run_sql(cluster, workdir, "interval.sql", ONE_SOURCE + """
INSERT INTO sink SELECT o.order_id, o.amount, p.pay_id FROM orders o JOIN payments p
  ON o.order_id = p.order_id AND p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL '1' MINUTE;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[WARNING]" not in r.stdout, r.stdout
    ij = job_ids(r.stdout)[0]
    r = run_sql(cluster, workdir, "regular.sql", ONE_SOURCE + """
INSERT INTO sink SELECT o.order_id, o.amount, p.pay_id FROM orders o JOIN payments p
  ON o.order_id = p.order_id;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[WARNING] regular join 'join' keeps state per key (order_id) that nothing bounds" in r.stdout
    assert "Set 'table.exec.state.ttl'" in r.stdout
    rj = job_ids(r.stdout)[0]
    # the same warning in the job's REST detail (the dashboard shows it)
    ws = cluster.get(f"/sluice/jobs/{rj}")["warnings"]
    assert [(w["operator"], w["key"], w["setting"]) for w in ws] == \
        [("regular join", "order_id", "table.exec.state.ttl")], ws
    assert cluster.get(f"/sluice/jobs/{ij}")["warnings"] == []
    for jid in (ij, rj):
        cluster.wait_state(jid, "RUNNING")
    iv, rv = join_vertex(cluster, ij, "interval"), join_vertex(cluster, rj, "join")

    def after(jid, vid, n):
        return wait_for(lambda: (lambda s: s["numRecordsIn"] >= n and s)(state_sample(cluster, jid, vid)),
                        timeout=60, what=f"{n} rows into the join")
    ra, ia = after(rj, rv, 2000), after(ij, iv, 2000)
    rb = after(rj, rv, ra["numRecordsIn"] + 5000)
    ib = after(ij, iv, ia["numRecordsIn"] + 5000)
    # regular: every row it has seen stays (each is distinct): entries >= rows in
    for s in (ra, rb):
        assert s["stateEntries"] >= s["numRecordsIn"], s
        assert s["stateSizeBytes"] > 0
    assert rb["stateEntries"] >= ra["stateEntries"] + 4000
    # interval: bounded by the interval, whatever has gone through
    for s in (ia, ib):
        assert s["stateEntries"] <= 1000, s
        assert s["numLateRecordsDropped"] == 0, s
    for jid in (ij, rj):
        cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
        cluster.wait_state(jid, "CANCELED")


# ---- savepoint + rescale in the middle of an interval join -------------------------

def join_job(out, n, rate, p, chunk, kind="interval"):
    """orders 1..n and payments 1..n from sequence generators; a payment pays
    order pay_id - pay_id % 3; times are BASE + (id - 1) % chunk ms,
    with `chunk` the share of one source subtask of the first run (n / p):
    every subtask walks through the same times in order and no row is ever
    late, before or after a rescale (the new subtasks go on with the old
    shares; a subtask serving several shares takes batches of up to 1024
    rows from each in turn, well within the watermark's 5 s). kind
    "interval": p.ts - o.ts within [-1, 1] ms; "regular": no time condition
    (the regular join's state crosses the savepoint whole)."""
    def src(name, col, extra):
        return [
            {"id": name, "uid": name, "type": "datagen",
             "schema": [{"name": col, "type": "BIGINT"}],
             "config": {"rows-per-second": str(rate), f"fields.{col}.kind": "sequence",
                        f"fields.{col}.start": "1", f"fields.{col}.end": str(n)}},
            {"id": f"{name}-cols", "type": "calc",
             "config": {"projection": [col] + extra +
                        [f"TO_TIMESTAMP_LTZ({BASE} + (({col} - 1) % {chunk}), 3) AS ts"]}},
            {"id": f"{name}-wm", "uid": f"{name}-wm", "type": "watermark",
             "config": {"column": "ts", "delay": "5 s", "interval": "0 ms"}}]
    vs = src("orders", "order_id", []) + src("payments", "pay_id", ["pay_id - pay_id % 3 AS order_id"])
    cfg = {"join-type": "inner", "left-keys": ["order_id"], "right-keys": ["order_id"]}
    if kind == "interval":
        cfg.update({"left-time": "ts", "right-time": "ts", "lower-bound": -1, "upper-bound": 1})
    vs += [{"id": "join", "uid": "join", "type": f"{kind}_join", "config": cfg},
           {"id": "proj", "type": "calc", "config": {"projection": ["order_id", "pay_id"]}},
           {"id": "out", "uid": "out", "type": "file", "config": {"path": out, "format": "json"}}]
    es = []
    for s in ("orders", "payments"):
        es += [{"from": s, "to": f"{s}-cols", "strategy": "forward"},
               {"from": f"{s}-cols", "to": f"{s}-wm", "strategy": "forward"}]
    es += [{"from": "orders-wm", "to": "join", "strategy": "hash", "keys": ["order_id"], "input": 0},
           {"from": "payments-wm", "to": "join", "strategy": "hash", "keys": ["order_id"], "input": 1},
           {"from": "join", "to": "proj", "strategy": "forward"},
           {"from": "proj", "to": "out", "strategy": "forward"}]
    return {"name": "interval join", "parallelism": p, "vertices": vs, "edges": es}


def job_ids_of_run(out):
    return re.search(r"JobID ([0-9a-f]{32})", out).group(1)


def expected_pairs(n, chunk, kind="interval"):
    def ts(i):
        return (i - 1) % chunk
    want = collections.Counter()
    for j in range(1, n + 1):
        o = j - j % 3
        if 1 <= o <= n and (kind == "regular" or -1 <= ts(j) - ts(o) <= 1):
            want[(o, j)] += 1
    return want


@pytest.mark.parametrize("kind,backend,p1,p2", [("interval", "hashmap", 2, 4), ("interval", "rocksdb", 2, 4),
                                                ("interval", "hashmap", 4, 2), ("interval", "rocksdb", 4, 2),
                                                ("regular", "rocksdb", 2, 4), ("regular", "hashmap", 4, 2)])
def test_savepoint_and_rescale_in_the_middle_of_a_join(make_cluster, workdir, kind, backend, p1, p2):
    from test_checkpoints import committed_files, read_rows
    from test_savepoints import NO_PERIODIC, new_files, run_detached, stop_with_savepoint, write_job
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n = 16000
    out = os.path.join(workdir, "out")
    jf = write_job(workdir, "join.json", join_job(out, n, rate=2000, p=p1, chunk=n // p1, kind=kind))
    jid = run_detached(c, "-p", str(p1), jf)
    c.wait_state(jid, "RUNNING", timeout=20)
    jv = join_vertex(c, jid, "join")
    # stop mid-stream, with rows of both sides waiting in the join's state
    rows_in = lambda: sum(float(m["value"]) for m in
                          c.get(f"/jobs/{jid}/vertices/{jv}/metrics?get=numRecordsIn"))
    wait_for(lambda: rows_in() >= n // 2, timeout=60, what="a quarter of the rows into the join")
    sp = stop_with_savepoint(c, jid, "file://" + os.path.join(workdir, "sp"))
    run1 = committed_files(out)
    got1 = collections.Counter((r["order_id"], r["pay_id"]) for r in read_rows(run1))
    assert 0 < sum(got1.values()) < sum(expected_pairs(n, n // p1, kind).values())  # stopped mid-stream

    r = c.cli("run", "-s", f"file:{sp}", "-p", str(p2), jf, timeout=90)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    got = got1 + collections.Counter((r["order_id"], r["pay_id"]) for r in read_rows(new_files(out, run1)))
    want = expected_pairs(n, n // p1, kind)
    assert len(want) > 5000
    late = sum(v["metrics"].get("numLateRecordsDropped", 0) for v in c.job(job_ids_of_run(r.stdout))["vertices"])
    missing, extra = want - got, got - want
    assert (late, sorted(missing)[:20], len(missing), sorted(extra)[:20]) == (0, [], 0, [])


def test_group_by_without_ttl_warns_too(cluster, workdir):
    """The same check serves GROUP BY: a key per group grows without a TTL; a
    global aggregate (one group) or a TTL is bounded."""
    src = """
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
                                 'fields.id.start' = '1', 'fields.id.end' = '10');
CREATE TABLE o (c BIGINT, k BIGINT) WITH ('connector' = 'print');
"""
    r = run_sql(cluster, workdir, "g.sql", src + "EXPLAIN INSERT INTO o SELECT COUNT(*) AS c, id % 3 AS k "
                "FROM g GROUP BY id % 3;\n")
    assert "[WARNING] GROUP BY 'agg' keeps state per key" in r.stdout, r.stdout
    assert "Set 'table.exec.state.ttl'" in r.stdout
    r = run_sql(cluster, workdir, "g.sql", src + "EXPLAIN INSERT INTO o SELECT COUNT(*) AS c, 0 AS k FROM g;\n")
    assert r.returncode == 0 and "[WARNING]" not in r.stdout, r.stdout
    r = run_sql(cluster, workdir, "g.sql", src + "SET 'table.exec.state.ttl' = '1 h';\n"
                "EXPLAIN INSERT INTO o SELECT COUNT(*) AS c, id % 3 AS k FROM g GROUP BY id % 3;\n")
    assert r.returncode == 0 and "[WARNING] GROUP BY" not in r.stdout, r.stdout


WJ_NL, WJ_NR = 400, 300
WINDOW_FEEDERS = f"""
CREATE TABLE lefts (
    id INT,
    k  AS id % 7,
    ts AS TO_TIMESTAMP_LTZ({BASE} + id * 1000, 3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{WJ_NL}');
CREATE TABLE rights (
    id INT,
    k  AS id % 9,
    ts AS TO_TIMESTAMP_LTZ({BASE} + id * 1700, 3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{WJ_NR}');
"""


def hop_windows(ts, slide, size):
    s = ts - ts % slide
    while s > ts - size:
        yield s
        s -= slide


def window_join_model(kind, windows):
    """The brute-force window join of lefts and rights on (window, k): rows
    (left id, right id, window_start), None for an outer side's missing row."""
    def side(n, step, mod):
        out = collections.defaultdict(list)  # (window_start, k) -> ids
        for i in range(1, n + 1):
            for ws in windows(BASE + i * step):
                out[(ws, i % mod)].append(i)
        return out
    left, right = side(WJ_NL, 1000, 7), side(WJ_NR, 1700, 9)
    want = collections.Counter()
    for key in set(left) | set(right):
        ls, rs = left.get(key, []), right.get(key, [])
        for li in ls:
            for ri in rs:
                want[(li, ri, key[0])] += 1
        if not rs and kind in ("left", "full"):
            for li in ls:
                want[(li, None, key[0])] += 1
        if not ls and kind in ("right", "full"):
            for ri in rs:
                want[(None, ri, key[0])] += 1
    return want


def test_window_joins_from_sql_equal_a_brute_force_join(cluster, workdir):
    """Flink's window join from SQL -- two window TVFs joined on their
    window bounds and a key -- at parallelism 2 over two TaskManagers: a FULL
    OUTER join of tumbling windows and an inner join of hopping ones (and a
    window Top-N over a window TVF), in one statement set; each sink's rows
    equal the result computed here."""
    cluster.add_tm(slots=2)
    cluster.add_tm(slots=2)
    full_out, hop_out = os.path.join(workdir, "full"), os.path.join(workdir, "hop")
    top_out = os.path.join(workdir, "top")
    r = run_sql(cluster, workdir, "wjoin.sql", WINDOW_FEEDERS + f"""
CREATE TABLE full_out (lid INT, rid INT, ws TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = 'file://{full_out}', 'format' = 'json');
CREATE TABLE hop_out (lid INT, rid INT, ws TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = 'file://{hop_out}', 'format' = 'json');
CREATE TABLE top_out (id INT, ws TIMESTAMP(3), rn BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{top_out}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO full_out
SELECT L.id, R.id, COALESCE(L.window_start, R.window_start)
FROM (SELECT * FROM TABLE(TUMBLE(TABLE lefts, DESCRIPTOR(ts), INTERVAL '10' SECOND))) L
FULL OUTER JOIN (SELECT * FROM TABLE(TUMBLE(TABLE rights, DESCRIPTOR(ts), INTERVAL '10' SECOND))) R
  ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k;
INSERT INTO hop_out
SELECT L.id, R.id, L.window_start
FROM TABLE(HOP(TABLE lefts, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) AS L
JOIN TABLE(HOP(TABLE rights, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) AS R
  ON L.k = R.k AND L.window_end = R.window_end AND L.window_start = R.window_start;
INSERT INTO top_out
SELECT id, window_start, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY k DESC, id) AS rn
  FROM TABLE(TUMBLE(TABLE rights, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn <= 2;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING" not in r.stdout, r.stdout  # a window join's state is bounded by its windows
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    vs = cluster.get(f"/jobs/{jid}")["vertices"]
    joins = [v for v in vs if "window-join" in v["name"]]
    assert len(joins) == 2 and all(v["parallelism"] == 2 for v in joins), vs
    for v in joins + [v for v in vs if "window-tvf" in v["name"]]:
        late = cluster.get(f"/jobs/{jid}/vertices/{v['id']}/metrics?get=numLateRecordsDropped")
        assert late and all(float(m["value"]) == 0 for m in late), (v["name"], late)

    def got(out):
        c = collections.Counter()
        for row in rows(out):
            assert row.get("op", "+I") == "+I", row
            c[(row["lid"], row["rid"], ms(row["ws"]))] += 1
        return c
    want_full = window_join_model("full", lambda ts: [ts - ts % 10000])
    assert sum(1 for k in want_full if k[0] is None) > 10 and sum(1 for k in want_full if k[1] is None) > 10
    assert got(full_out) == want_full
    want_hop = window_join_model("inner", lambda ts: hop_windows(ts, 5000, 15000))
    assert sum(want_hop.values()) > 1000
    assert got(hop_out) == want_hop
    # a window Top-N straight over a window TVF: each window's two rows of highest k
    per_window = collections.defaultdict(list)
    for i in range(1, WJ_NR + 1):
        ts = BASE + i * 1700
        per_window[ts - ts % 10000].append((-(i % 9), i))
    want_top = sorted((i, ws, rn + 1) for ws, rs in per_window.items()
                      for rn, (_, i) in enumerate(sorted(rs)[:2]))
    got_top = sorted((r["id"], ms(r["ws"]), r["rn"]) for r in rows(top_out))
    assert all(r.get("op", "+I") == "+I" for r in rows(top_out))
    assert got_top == want_top
