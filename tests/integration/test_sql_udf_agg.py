"""User-defined C aggregate functions from SQL (docs/UDF.md): the test
suite's tests/plugins/udf_aggs.c (wsum: retract + merge; top2: merge only;
fussy: fails on 13; badsize: a table that contradicts its declaration),
used from `sluice sql -f` scripts on a real cluster. Expected results are
computed here from the sequence ids by a Python model of each function."""
import collections
import json
import os

import pytest

from conftest import BUILD
from test_checkpoints import committed_files
from test_sql import BASE, finish, job_ids, ms, run_sql

AGGS = os.path.join(BUILD, "plugins", "udf_aggs.so")

FUNCS = f"""
CREATE FUNCTION wsum AS 'wsum' LANGUAGE C USING JAR '{AGGS}';
CREATE FUNCTION top2 AS 'top2' LANGUAGE C USING JAR '{AGGS}';
"""


def seq(n, rate=100000):
    return f"""
CREATE TABLE src (id BIGINT, k3 AS id % 3, ts AS TO_TIMESTAMP_LTZ({BASE} + id * 100, 3),
                  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def apply_changelog(paths, key, table=None):
    """Apply json changelog part files (in order) to {key: row}; a -U/-D must
    remove exactly the row the key holds, +I/+U must find the key free."""
    table = {} if table is None else table
    ops = collections.Counter()
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                r = json.loads(line)
                op = r.pop("op", "+I")
                ops[op] += 1
                k = tuple(r[c] for c in key)
                if op in ("+I", "+U"):
                    assert k not in table, f"{path}:{n}: {op} for {k} holding {table.get(k)}"
                    table[k] = r
                else:
                    assert table.get(k) == r, f"{path}:{n}: {op} {r} for {k} holding {table.get(k)}"
                    del table[k]
    return table, ops


def second_max(vals):
    return sorted(vals)[-2] if len(vals) >= 2 else None


def inner_model(n, mod):
    """The inner GROUP BY id % mod: count and sum per key, ids 1..n without multiples of 7."""
    per = {}
    for i in range(1, n + 1):
        if i % 7 == 0:
            continue
        c, s = per.get(i % mod, (0, 0))
        per[i % mod] = (c + 1, s + i)
    return per


def outer_model(per):
    """SELECT c % 3 AS g, wsum(s, c) AS ws, COUNT(*) AS cnt FROM inner GROUP BY c % 3."""
    out = {}
    for c, s in per.values():
        g = c % 3
        ws, cnt = out.get(g, (0, 0))
        out[g] = (ws + s * c, cnt + 1)
    return {(g,): {"g": g, "ws": ws, "cnt": cnt} for g, (ws, cnt) in out.items()}


RETRACT_QUERY = """
CREATE TABLE snk (g BIGINT, ws BIGINT, cnt BIGINT, PRIMARY KEY (g) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
{extra}
INSERT INTO snk
SELECT c % 3 AS g, wsum(s, c) AS ws, COUNT(*) AS cnt
FROM (SELECT id % {mod} AS k, COUNT(*) AS c, SUM(id) AS s FROM src WHERE id % 7 <> 0
      GROUP BY id % {mod})
GROUP BY c % 3;
"""


def test_group_by_over_retractions_at_parallelism_2(cluster, workdir):
    """The inner GROUP BY's updates reach wsum as retractions and inserts;
    the final table is the model's, and retractions were seen."""
    cluster.add_tm(slots=2)
    n, mod = 3000, 41
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "g.sql", FUNCS + seq(n) + RETRACT_QUERY.format(
        out=out, mod=mod, extra="SET 'parallelism.default' = '2';"))
    assert r.returncode == 0, r.stdout + r.stderr
    job = finish(cluster, job_ids(r.stdout)[0])
    assert {v["parallelism"] for v in job["vertices"]} == {2}
    table, ops = apply_changelog(committed_files(out), ["g"])
    assert ops["-U"] > 100 and ops["-D"] + ops["-U"] > 0, ops
    assert table == outer_model(inner_model(n, mod))


def test_tumble_and_hop_windows(cluster, workdir):
    """wsum and top2 per TUMBLE and per HOP window (HOP windows merge the
    slices' accumulators: top2's and wsum's merge), at parallelism 2."""
    cluster.add_tm(slots=2)
    n = 2000
    o1, o2 = os.path.join(workdir, "tumble"), os.path.join(workdir, "hop")
    r = run_sql(cluster, workdir, "w.sql", FUNCS + seq(n) + f"""
CREATE TABLE t_out (window_start TIMESTAMP(3), k BIGINT, ws BIGINT, t2 BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE h_out (window_start TIMESTAMP(3), ws BIGINT, t2 BIGINT, cnt BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO t_out
SELECT window_start, k3 AS k, wsum(id, id % 5) AS ws, top2(id * 37 % 101) AS t2
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k3;
INSERT INTO h_out
SELECT window_start, wsum(id, 2) AS ws, top2(id * 37 % 101) AS t2, COUNT(*) AS cnt
FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))
GROUP BY window_start, window_end;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)
    ts = {i: BASE + i * 100 for i in range(1, n + 1)}
    tw = collections.defaultdict(list)
    for i in range(1, n + 1):
        tw[(BASE + (ts[i] - BASE) // 10000 * 10000, i % 3)].append(i)
    want_t = {k: (sum(i * (i % 5) for i in v), second_max([i * 37 % 101 for i in v]))
              for k, v in tw.items()}
    got_t = {}
    for row in (json.loads(x) for p in committed_files(o1) for x in open(p)):
        key = (ms(row["window_start"]), row["k"])
        assert key not in got_t
        got_t[key] = (row["ws"], row["t2"])
    assert got_t == want_t
    hw = collections.defaultdict(list)
    for i in range(1, n + 1):
        last = BASE + (ts[i] - BASE) // 5000 * 5000
        for start in (last, last - 5000, last - 10000):
            hw[start].append(i)
    want_h = {k: (sum(2 * i for i in v), second_max([i * 37 % 101 for i in v]), len(v))
              for k, v in hw.items()}
    got_h = {ms(row["window_start"]): (row["ws"], row["t2"], row["cnt"])
             for row in (json.loads(x) for p in committed_files(o2) for x in open(p))}
    assert got_h == want_h


@pytest.mark.parametrize("backend,p1,p2", [("hashmap", 2, 1), ("rocksdb", 1, 2)])
def test_aggregate_state_across_a_savepoint(make_cluster, workdir, backend, p1, p2):
    """Stop with a savepoint mid-stream, restore at another parallelism:
    wsum's accumulators come back from keyed state (moved between key
    groups' owners) and the changelog across the seam ends at the model."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n, mod = 6000, 23
    out = os.path.join(workdir, "out")
    query = """
CREATE TABLE snk (k BIGINT, ws BIGINT, t2 BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '{p}';
{extra}
INSERT INTO snk SELECT id % {mod} AS k, wsum(id, id % 4) AS ws, top2(id * 37 % 1009) AS t2
FROM src GROUP BY id % {mod};
"""
    r = run_sql(c, workdir, "run1.sql", FUNCS + seq(n, rate=1000) +
                query.format(out=out, p=p1, mod=mod, extra=""))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    sp = c.stop_after_progress(jid, "src", n // 6, os.path.join(workdir, "sp"))
    run1 = committed_files(out)
    table1, _ = apply_changelog(run1, ["k"])
    r = run_sql(c, workdir, "run2.sql", FUNCS + seq(n) + query.format(
        out=out, p=p2, mod=mod, extra=f"SET 'execution.savepoint.path' = '{sp}';"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    job2 = finish(c, jid2)
    assert {v["parallelism"] for v in job2["vertices"]} == {p2}
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    table, _ = apply_changelog([p for p in committed_files(out) if p not in run1], ["k"],
                               dict(table1))
    vals = collections.defaultdict(list)
    for i in range(1, n + 1):
        vals[i % mod].append(i)
    want = {(k,): {"k": k, "ws": sum(i * (i % 4) for i in v),
                   "t2": second_max([i * 37 % 1009 for i in v])} for k, v in vals.items()}
    assert table == want


def test_a_failing_aggregate_fails_the_task_with_its_message(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "f.sql", f"""
CREATE FUNCTION fussy AS 'fussy' USING JAR '{AGGS}';
CREATE FUNCTION badsize AS 'badsize' USING JAR '{AGGS}';
""" + seq(50) + f"""
CREATE TABLE snk (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE snk2 (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}2', 'format' = 'json');
INSERT INTO snk SELECT id % 4 AS k, fussy(id) FROM src GROUP BY id % 4;
INSERT INTO snk2 SELECT id % 4 AS k, badsize(id) FROM src GROUP BY id % 4;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    j1, j2 = job_ids(r.stdout)
    for jid, want in ((j1, "function 'fussy' failed in accumulate: thirteen is unlucky "
                           "(arguments: 13)"),
                      (j2, f"function 'badsize': the table 'badsize' of ")):
        cluster.wait_state(jid, ["FAILED"], timeout=90)
        text = str(cluster.get(f"/jobs/{jid}/exceptions"))
        assert want in text, text
    assert "acc_size differs from the declared accumulator size (declared: 8 bytes)" in text


@pytest.mark.parametrize("stmt,want", [
    ("SELECT c % 3, top2(s) FROM (SELECT id % 5 AS k, COUNT(*) AS c, SUM(id) AS s FROM src "
     "GROUP BY id % 5) GROUP BY c % 3;",
     "line 1, column 15: top2 declares no retract, so it cannot aggregate an updating input"),
    ("SELECT wsum(id) FROM src GROUP BY id % 2;", "line 1, column 8: wsum takes 2 arguments, not 1"),
    ("SELECT wsum(id, 'x') FROM src GROUP BY id % 2;",
     "line 1, column 17: argument 2 of wsum must be BIGINT, not STRING"),
    ("SELECT wsum(DISTINCT id, id) FROM src GROUP BY id % 2;",
     "line 1, column 8: wsum is a user-defined aggregate function: it takes neither '*' nor DISTINCT"),
])
def test_bad_calls_are_clear_errors(cluster, workdir, stmt, want):
    head = FUNCS + seq(5)
    want = want.replace("line 1,", f"line {head.count(chr(10)) + 1},")
    r = run_sql(cluster, workdir, "e.sql", head + stmt + "\n")
    assert r.returncode != 0 and want in r.stdout, r.stdout + r.stderr


def test_describe_an_aggregate_function(cluster, workdir):
    r = run_sql(cluster, workdir, "d.sql", FUNCS + "DESCRIBE FUNCTION wsum;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "AGGREGATE" in r.stdout and "BIGINT wsum(BIGINT, BIGINT)" in r.stdout, r.stdout


def test_over_rows_and_unbounded_windows(cluster, workdir):
    """wsum and top2 over ROWS BETWEEN 2 PRECEDING AND CURRENT ROW (a frame
    recomputed per row), and over the unbounded past of each partition, p=2."""
    cluster.add_tm(slots=2)
    n = 600
    o1, o2 = os.path.join(workdir, "rows"), os.path.join(workdir, "unb")
    r = run_sql(cluster, workdir, "o.sql", FUNCS + seq(n) + f"""
CREATE TABLE s1 (id BIGINT, k BIGINT, ws BIGINT, t2 BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE s2 (id BIGINT, k BIGINT, ws BIGINT, t2 BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO s1
SELECT id, k3 AS k,
       wsum(id, id % 4) OVER (PARTITION BY k3 ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW),
       top2(id * 37 % 101) OVER (PARTITION BY k3 ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
FROM src;
INSERT INTO s2
SELECT id, k3 AS k,
       wsum(id, id % 4) OVER w, top2(id * 37 % 101) OVER w
FROM src WINDOW w AS (PARTITION BY k3 ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)
    for out, width in ((o1, 3), (o2, n)):
        want, seen = {}, collections.defaultdict(list)
        for i in range(1, n + 1):
            seen[i % 3].append(i)
            frame = seen[i % 3][-width:]
            want[i] = (i % 3, sum(x * (x % 4) for x in frame),
                       second_max([x * 37 % 101 for x in frame]))
        got = {}
        for row in (json.loads(x) for p in committed_files(out) for x in open(p)):
            assert row["id"] not in got
            got[row["id"]] = (row["k"], row["ws"], row["t2"])
        assert got == want, out


def test_string_results_of_c_aggregates(cluster, workdir):
    """longest (a STRING borrowed from its accumulator, merge) and tagsum (a
    STRING from ctx->alloc) per key over GROUP BY and per HOP window, p=2."""
    cluster.add_tm(slots=2)
    n = 900
    o1, o2 = os.path.join(workdir, "g"), os.path.join(workdir, "h")
    r = run_sql(cluster, workdir, "s.sql", f"""
CREATE FUNCTION longest AS 'longest' USING JAR '{AGGS}';
CREATE FUNCTION tagsum AS 'tagsum' USING JAR '{AGGS}';
""" + seq(n) + f"""
CREATE TABLE g_out (k BIGINT, lw STRING, ts STRING, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE h_out (window_start TIMESTAMP(3), lw STRING, ts STRING)
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO g_out SELECT id % 7 AS k, longest(REPEAT('ab', CAST(id * 37 % 41 AS INT)) || CAST(id AS STRING)),
       tagsum(id) FROM src GROUP BY id % 7;
INSERT INTO h_out SELECT window_start, longest(REPEAT('x', CAST(id % 23 AS INT)) || CAST(id AS STRING)),
       tagsum(id) FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))
GROUP BY window_start, window_end;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)

    def longest(words):
        words = [w[:60] for w in words]
        return min(words, key=lambda w: (-len(w), w.encode()))

    table, _ = apply_changelog(committed_files(o1), ["k"])
    vals = collections.defaultdict(list)
    for i in range(1, n + 1):
        vals[i % 7].append(i)
    assert table == {(k,): {"k": k, "lw": longest(["ab" * (i * 37 % 41) + str(i) for i in v]),
                            "ts": "n=%d" % sum(v)} for k, v in vals.items()}
    hw = collections.defaultdict(list)
    for i in range(1, n + 1):
        last = BASE + (BASE + i * 100 - BASE) // 5000 * 5000
        for start in (last, last - 5000, last - 10000):
            hw[start].append(i)
    got = {ms(row["window_start"]): (row["lw"], row["ts"])
           for row in (json.loads(x) for p in committed_files(o2) for x in open(p))}
    assert got == {k: (longest(["x" * (i % 23) + str(i) for i in v]), "n=%d" % sum(v))
                   for k, v in hw.items()}
