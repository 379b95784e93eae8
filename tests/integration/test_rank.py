"""Top-N, deduplication, DISTINCT aggregates and FILTER from Flink SQL, end
to end on a cluster of two TaskManagers at parallelism 2 (and 4 after a
rescale). Inputs are sequence generators; every expected result is
computed here from the ids, independently of Sluice, and every changelog
is applied with each -U/-D checked against the row it retracts.

- Top-N with the row number, over an append-only and over an updating
  input (a GROUP BY), and the submission warning about unbounded state.
- Deduplication on event time, keep last (keep first: test_sql_flink_parity.py).
- Window Top-N over a TUMBLE aggregation: append-only final rows.
- COUNT/SUM(DISTINCT ...) and COUNT(*) FILTER (WHERE ...) in GROUP BY and in
  a TUMBLE window.
- Stop with a savepoint in the middle of a Top-N, restore at another
  parallelism (2 -> 4 and 4 -> 2): the final result equals the
  uninterrupted one.
"""
import collections
import json
import os
import re

import pytest

from conftest import wait_for
from test_checkpoints import committed_files, read_rows
from test_sql import BASE, finish, job_ids, ms, run_sql


def apply(paths, key_of, table=None):
    """Apply a changelog (json part files, in order) to {key: row}; a +I/+U
    must find its key empty, a -U/-D must retract exactly the row held."""
    table = {} if table is None else table
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                r = json.loads(line)
                op = r.pop("op", "+I")
                k = key_of(r)
                where = f"{os.path.basename(path)}:{n}"
                if op in ("+I", "+U"):
                    assert k not in table, f"{where}: {op} {r} for key {k} which holds {table[k]}"
                    table[k] = r
                else:
                    assert table.get(k) == r, f"{where}: {op} {r} for key {k} holding {table.get(k)}"
                    del table[k]
    return table


def sales(n, rate=100000):
    return f"""
CREATE TABLE sales (
    id     BIGINT,
    cat    AS CAST(id % 5 AS INT),
    amount AS CAST(id * 37 % 1009 AS INT)
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def top3(ids):
    """{(cat, rn): row} of the Top-3 per cat by amount DESC, id DESC (amount
    repeats every 1009 ids, so the latest rows keep displacing the list)."""
    per = collections.defaultdict(list)
    for i in ids:
        per[i % 5].append((-(i * 37 % 1009), -i))
    want = {}
    for cat, rows in per.items():
        for rn, (neg, negi) in enumerate(sorted(rows)[:3], 1):
            want[(cat, rn)] = {"cat": cat, "id": -negi, "amount": -neg, "rn": rn}
    return want


TOPN = """
CREATE TABLE top3 (cat INT, id BIGINT, amount INT, rn BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '{p}';
{extra}
INSERT INTO top3
SELECT * FROM (
  SELECT cat, id, amount,
         ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount DESC, id DESC) AS rn
  FROM sales)
WHERE rn <= 3;
"""


def two_tms(make_cluster, slots=1, **kw):
    c = make_cluster(**kw)
    c.add_tm(slots=slots)
    c.add_tm(slots=slots)
    return c


def test_topn_append_only_input(make_cluster, workdir):
    c = two_tms(make_cluster)
    n = 3000
    out = os.path.join(workdir, "top")
    r = run_sql(c, workdir, "top.sql", sales(n) + TOPN.format(out=out, p=2, extra=""))
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("[WARNING] Top-N 'rank' keeps state per key (cat) that nothing bounds") in r.stdout, \
        r.stdout
    job = finish(c, job_ids(r.stdout)[0])
    rank = [v for v in job["vertices"] if v["name"].startswith("rank")]
    assert rank and rank[0]["parallelism"] == 2
    table = apply(committed_files(out), lambda r: (r["cat"], r["rn"]))
    assert table == top3(range(1, n + 1))


def test_topn_over_an_updating_input(make_cluster, workdir):
    """Top-2 keys by their running count: the GROUP BY's -U/+U go into the
    Top-N, which keeps every key's row to promote the next."""
    c = two_tms(make_cluster)
    n = 2000
    out = os.path.join(workdir, "topk")
    r = run_sql(c, workdir, "topk.sql", sales(n) + f"""
CREATE TABLE topk (g INT, k INT, c BIGINT, rn BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
SET 'table.exec.state.ttl' = '1 h';
INSERT INTO topk
SELECT g, k, c, rn FROM (
  SELECT g, k, c, ROW_NUMBER() OVER (PARTITION BY g ORDER BY c DESC, k) AS rn
  FROM (SELECT cat AS g, CAST(id % 23 AS INT) AS k, COUNT(*) AS c FROM sales
        WHERE id % 7 <> 0 GROUP BY cat, CAST(id % 23 AS INT)))
WHERE rn <= 2;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "unbounded" not in r.stdout, r.stdout  # the TTL bounds both
    finish(c, job_ids(r.stdout)[0])
    counts = collections.Counter((i % 5, i % 23) for i in range(1, n + 1) if i % 7)
    per = collections.defaultdict(list)
    for (g, k), cnt in counts.items():
        per[g].append((-cnt, k))
    want = {}
    for g, rows in per.items():
        for rn, (neg, k) in enumerate(sorted(rows)[:2], 1):
            want[(g, rn)] = {"g": g, "k": k, "c": -neg, "rn": rn}
    assert apply(committed_files(out), lambda r: (r["g"], r["rn"])) == want


def test_deduplicate_on_event_time(make_cluster, workdir):
    """Rows arrive out of event-time order; keep last per key ends at the row
    with the largest rowtime. Keep first on processing time: one append-only
    row per key. (Keep first on event time, which waits for the watermark and
    drops late rows, is tested in test_sql_flink_parity.py.)"""
    c = two_tms(make_cluster)
    n = 2000
    last = os.path.join(workdir, "last")
    pfirst = os.path.join(workdir, "pfirst")
    r = run_sql(c, workdir, "dedup.sql", f"""
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id % 7 AS INT),
    ts AS TO_TIMESTAMP_LTZ({BASE} + (id * 7919 % {n}) * 10, 3),
    pt AS PROCTIME(),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE lasts (k INT, id BIGINT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{last}', 'format' = 'json');
CREATE TABLE pfirsts (k INT, id BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{pfirst}', 'format' = 'csv');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO lasts SELECT k, id, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM ev) WHERE rn = 1;
INSERT INTO pfirsts SELECT k, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM ev) WHERE rn = 1;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "deduplication 'dedup' keeps state per key (k) that nothing bounds" in r.stdout, r.stdout
    finish(c, job_ids(r.stdout)[0])
    ts = {i: BASE + (i * 7919 % n) * 10 for i in range(1, n + 1)}
    for path, pick in ((last, max),):
        table = apply(committed_files(path), lambda r: r["k"])
        got = {k: (r["id"], ms(r["ts"])) for k, r in table.items()}
        want = {}
        for k in range(7):
            i = pick((i for i in ts if i % 7 == k), key=lambda i: ts[i])
            want[k] = (i, ts[i])
        assert got == want, path
    # keep first on processing time is append-only (a csv sink takes it): one row per key,
    # whichever reached its subtask first
    got = []
    for path in committed_files(pfirst):
        with open(path) as f:
            got += [tuple(int(x) for x in line.strip().split(",")) for line in f]
    assert sorted(k for k, _ in got) == list(range(7)), got
    assert all(i % 7 == k and 1 <= i <= n for k, i in got), got


def test_distinct_and_filter_in_group_by_and_window(make_cluster, workdir):
    c = two_tms(make_cluster)
    n = 3000
    agg, win = os.path.join(workdir, "agg"), os.path.join(workdir, "win")
    r = run_sql(c, workdir, "distinct.sql", f"""
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id % 3 AS INT),
    ts AS TO_TIMESTAMP_LTZ({BASE} + id * 10, 3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE per_k (k INT, dv BIGINT, sv BIGINT, ev BIGINT, dvf BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{agg}', 'format' = 'json');
CREATE TABLE per_w (window_start TIMESTAMP(3), k INT, dv BIGINT, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{win}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO per_k
SELECT k, COUNT(DISTINCT id % 11), SUM(DISTINCT id % 11), COUNT(*) FILTER (WHERE id % 2 = 0),
       COUNT(DISTINCT id % 13) FILTER (WHERE id > 100)
FROM ev GROUP BY k;
INSERT INTO per_w
SELECT window_start, k, COUNT(DISTINCT id % 17) FILTER (WHERE id % 5 <> 0), COUNT(*)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
GROUP BY window_start, window_end, k;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(c, job_ids(r.stdout)[0])
    ids = range(1, n + 1)
    want = {}
    for k in range(3):
        mine = [i for i in ids if i % 3 == k]
        vals = {i % 11 for i in mine}
        want[k] = {"k": k, "dv": len(vals), "sv": sum(vals),
                   "ev": sum(1 for i in mine if i % 2 == 0),
                   "dvf": len({i % 13 for i in mine if i > 100})}
    assert apply(committed_files(agg), lambda r: r["k"]) == want
    wwant = collections.defaultdict(lambda: [set(), 0])
    for i in ids:
        key = ((BASE + i * 10) // 2000 * 2000, i % 3)
        if i % 5:
            wwant[key][0].add(i % 17)
        wwant[key][1] += 1
    got = {}
    for row in read_rows(committed_files(win)):
        assert row.get("op", "+I") == "+I", row
        key = (ms(row["window_start"]), row["k"])
        assert key not in got, f"window {key} twice"
        got[key] = (row["dv"], row["n"])
    assert got == {k: (len(s), cnt) for k, (s, cnt) in wwant.items()}


def test_window_topn_emits_final_rows(make_cluster, workdir):
    """Top-2 keys of every 2-second window by their count: append-only
    +I rows, each window's final list once, as Flink's window Top-N."""
    c = two_tms(make_cluster)
    n = 3000
    out = os.path.join(workdir, "wtop")
    r = run_sql(c, workdir, "wtop.sql", f"""
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id * 13 % 7 AS INT),
    ts AS TO_TIMESTAMP_LTZ({BASE} + id * 10, 3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE wtop (window_start TIMESTAMP(3), k INT, c BIGINT, rn BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
SET 'parallelism.default' = '2';
INSERT INTO wtop
SELECT window_start, k, c, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY c DESC, k) AS rn
  FROM (SELECT window_start, window_end, k, COUNT(*) AS c
        FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
        WHERE id % (k + 2) <> 0
        GROUP BY window_start, window_end, k))
WHERE rn <= 2;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "unbounded" not in r.stdout, r.stdout
    finish(c, job_ids(r.stdout)[0])
    counts = collections.Counter()
    for i in range(1, n + 1):
        k = i * 13 % 7
        if i % (k + 2):
            counts[((BASE + i * 10) // 2000 * 2000, k)] += 1
    per = collections.defaultdict(list)
    for (w, k), cnt in counts.items():
        per[w].append((-cnt, k))
    want = sorted((w, k, -neg, rn) for w, rows in per.items()
                  for rn, (neg, k) in enumerate(sorted(rows)[:2], 1))
    got = []
    for path in committed_files(out):
        with open(path) as f:
            for line in f:
                ws, k, cnt, rn = line.strip().split(",")
                got.append((ms(ws), int(k), int(cnt), int(rn)))
    assert sorted(got) == want


@pytest.mark.parametrize("p1,p2,backend", [(2, 4, "rocksdb"), (4, 2, "hashmap")])
def test_topn_savepoint_and_rescale(make_cluster, workdir, p1, p2, backend):
    """Stop with a savepoint while the Top-N runs, restore it at another
    parallelism: the changelog of both runs applies cleanly across the seam
    and ends at the Top-N of every id, exactly as an uninterrupted run."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n = 8000
    out = os.path.join(workdir, "top")
    r = run_sql(c, workdir, "run1.sql", sales(n, rate=600) + TOPN.format(out=out, p=p1, extra=""))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    sp = c.stop_after_progress(jid, "sales", n // 8, os.path.join(workdir, "sp"), timeout=30)
    run1 = committed_files(out)
    table1 = apply(run1, lambda r: (r["cat"], r["rn"]))
    assert table1 != top3(range(1, n + 1))  # stopped mid-stream

    r = run_sql(c, workdir, "run2.sql", sales(n, rate=4000) + TOPN.format(
        out=out, p=p2, extra=f"SET 'execution.savepoint.path' = '{sp}';"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    job2 = finish(c, jid2)
    assert {v["parallelism"] for v in job2["vertices"]} == {p2}
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    table = apply([p for p in committed_files(out) if p not in run1], lambda r: (r["cat"], r["rn"]),
                  dict(table1))
    assert table == top3(range(1, n + 1))
