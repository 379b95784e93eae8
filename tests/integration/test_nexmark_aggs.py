"""Nexmark queries whose aggregates are the point, on a real cluster against
Python models of the queries evaluated on the same event files.

q8 (bench/nexmark/queries/q8.sql): a window aggregation with GROUP BY keys,
window_start and window_end but no aggregate call (a distinct per window:
the window operator with an empty aggregate list), on each side of a join.

q8 pairs each person with the 10 s tumbling window it registered in when
the same person opened an auction in that window. Both subqueries are
distinct per (keys, window), so each (person, window) appears at most once.
The query runs twice on the same event files: in one phase, and with
Flink's mini-batch keys on, so a local_aggregate with no aggregates runs
before each window (two phases); both must give the model's rows exactly.

q5: the hottest auctions per HOP window, whose window aggregation both sides
of the join share (sub-plan reuse), against a model, reused and not.

q15, q16 and q17: GROUP BY a day and COUNT(*) with and without FILTER,
COUNT(DISTINCT x) with and without FILTER (several filters over the same
column), MIN, MAX, AVG and SUM of BIGINT, and (q16) MAX of a STRING. The
day is DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') and q16's minute
DATE_FORMAT(`dateTime`, 'HH:mm'), each a single value over these 30 s of
events, too few groups and values to test with; so the test puts in
stand-ins that vary (and need no DATE_FORMAT) -- the 10 s bucket
SUBSTRING(CAST(`dateTime` AS STRING), 1, 18) for the day, the time of day
to the second SUBSTRING(..., 12, 8) for the minute -- and the model
computes the same. The final table (the changelog applied per key) must
equal the model's.
"""
import collections
import datetime
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


def model_q5(bid):
    """q5's rows as a multiset of (auction, num): per HOP window (10 s, sliding
    by 2 s), every auction whose bid count is the window's highest."""
    counts = collections.defaultdict(collections.Counter)  # window start -> auction -> bids
    for b in bid:
        t = ms(b["dateTime"])
        for start in range(t - t % 2000, t - 10000, -2000):
            counts[start][b["auction"]] += 1
    out = collections.Counter()
    for per in counts.values():
        top = max(per.values())
        out.update((a, n) for a, n in per.items() if n == top)
    return out


def applied(changelog, cols):
    """A changelog without a key applied as a multiset of rows."""
    table = collections.Counter()
    for row in changelog:
        key = tuple(row[c] for c in cols)
        if row.get("op", "+I") in ("+I", "+U"):
            table[key] += 1
        else:
            assert table[key] > 0, (row, "retracts a row not held")
            table[key] -= 1
    return +table


def test_q5_matches_a_model_with_and_without_sub_plan_reuse(cluster, workdir):
    """q5 counts bids per auction in the same HOP windows on both sides of its
    join; the planner computes that window aggregation once and feeds both
    sides (sub-plan reuse). Planned once or twice, the rows are the model's."""
    cluster.add_tm(slots=2)
    data = os.path.join(workdir, "events")
    nexmark.generate(BUILD, EVENTS, data, rate=RATE)
    want = model_q5(read_kind(data, "bid"))
    # the test means something: a dozen windows and more, and the lead changes hands
    assert sum(want.values()) >= 12 and len({a for a, _ in want}) >= 2, want
    for name, prefix, windows in (("reused", "", 1),
                                  ("planned-twice",
                                   "SET 'table.optimizer.reuse-sub-plan-enabled' = 'false';\n", 2)):
        out = os.path.join(workdir, f"out-q5-{name}")
        sink = f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json'"
        path = os.path.join(workdir, f"q5-{name}.sql")
        with open(path, "w") as f:
            f.write(prefix + nexmark.sluice_script("q5", data, sink=sink))
        r = cluster.cli("sql", "-f", path, timeout=120)
        jid = job_ids(r.stdout)
        assert jid, r.stdout + r.stderr
        finish(cluster, jid[0])
        plan = cluster.get(f"/jobs/{jid[0]}/plan")["plan"]["nodes"]
        assert sum(1 for n in plan if n["operator"] == "window") == windows, plan
        assert applied(rows(out), ("auction", "num")) == want, name


STAND_INS = {"DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')": "SUBSTRING(CAST(`dateTime` AS STRING), 1, 18)",
             "DATE_FORMAT(`dateTime`, 'HH:mm')": "SUBSTRING(CAST(`dateTime` AS STRING), 12, 8)"}


def bucket(ts):
    """The day's stand-in for a dateTime string, from its milliseconds."""
    d = datetime.datetime.fromtimestamp(ms(ts) / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S")[:18]


def clock(ts):
    """The minute's stand-in."""
    d = datetime.datetime.fromtimestamp(ms(ts) / 1000, datetime.timezone.utc)
    return d.strftime("%H:%M:%S")


RANKS = (lambda p: p < 10000, lambda p: 10000 <= p < 1000000, lambda p: p >= 1000000)


def model_q15_q17(query, bid):
    groups = {}
    for b in bid:
        key = {"q15": (), "q16": (b["channel"],), "q17": (b["auction"],)}[query]
        groups.setdefault(key + (bucket(b["dateTime"]),), []).append(b)
    out = {}
    for key, bs in groups.items():
        prices = [b["price"] for b in bs]
        r = {"total_bids": len(bs)}
        for i, rank in enumerate(RANKS, 1):
            r[f"rank{i}_bids"] = sum(1 for p in prices if rank(p))
        if query in ("q15", "q16"):
            r["day"] = key[-1]
            if query == "q16":
                r["channel"] = key[0]
                r["minute"] = max(clock(b["dateTime"]) for b in bs)
            for col, name in (("bidder", "bidders"), ("auction", "auctions")):
                r[f"total_{name}"] = len({b[col] for b in bs})
                for i, rank in enumerate(RANKS, 1):
                    r[f"rank{i}_{name}"] = len({b[col] for b in bs if rank(b["price"])})
        else:
            r["auction"], r["day"] = key
            r["min_price"], r["max_price"] = min(prices), max(prices)
            total = sum(prices)
            r["sum_price"] = total
            r["avg_price"] = total // len(prices)  # BIGINT AVG truncates (prices are positive)
        out[key] = r
    return out


def final_table(changelog, key_cols):
    """The changelog applied per key: every -U/-D must retract the row held."""
    table = {}
    for row in changelog:
        op = row.pop("op", "+I")
        key = tuple(row[c] for c in key_cols)
        if op in ("+I", "+U"):
            table[key] = row
        else:
            assert table.get(key) == row, (op, row, table.get(key))
            del table[key]
    return table


def test_q15_q16_q17_aggregates_match_a_model(cluster, workdir):
    cluster.add_tm(slots=2)
    data = os.path.join(workdir, "events")
    nexmark.generate(BUILD, EVENTS, data, rate=RATE)
    bid = read_kind(data, "bid")
    for rank in RANKS:  # each FILTER keeps some bids and drops others
        assert 0 < sum(1 for b in bid if rank(b["price"])) < len(bid)
    for q, key_cols in (("q15", ("day",)), ("q16", ("channel", "day")), ("q17", ("auction", "day"))):
        out = os.path.join(workdir, f"out-{q}")
        sink = f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json'"
        script = nexmark.sluice_script(q, data, sink=sink)
        for fn, stand_in in STAND_INS.items():
            script = script.replace(fn, stand_in)
        assert "DATE_FORMAT" not in script
        path = os.path.join(workdir, f"{q}.sql")
        with open(path, "w") as f:
            f.write(script)
        r = cluster.cli("sql", "-f", path, timeout=120)
        jid = job_ids(r.stdout)
        assert jid, r.stdout + r.stderr
        finish(cluster, jid[0])
        got = final_table(rows(out), key_cols)
        want = model_q15_q17(q, bid)
        assert len(want) >= 3, q
        assert got == want, q
