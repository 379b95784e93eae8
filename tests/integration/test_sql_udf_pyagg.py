"""Python aggregate functions from SQL (docs/UDF.md, "Python aggregate
functions"): PyFlink-style AggregateFunction classes of tests/udf_py/aggs.py
(py_wsum: retract + merge; py_top2: merge only; span: a STRING result; Mean:
a decorated class; fussy: fails on 13; hoard: outgrows its accumulator) in
GROUP BY over retractions, TUMBLE/HOP windows, OVER, and across
stop-with-savepoint + restore at another parallelism on both backends.
Expected results come from Python models computed here."""
import collections
import json
import os

import pytest

from test_checkpoints import committed_files
from test_ha import zk  # noqa: F401  (the ZooKeeper ensemble fixture, for the failover test)
from zk_ensemble import available as zk_available
from test_sql import finish, job_ids, ms, run_sql
from test_sql_udf_agg import BASE, apply_changelog, inner_model, second_max, seq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGGS = os.path.join(ROOT, "tests", "udf_py", "aggs.py")


def create(*names):
    return "".join(f"CREATE FUNCTION {n} AS 'aggs.{n}' LANGUAGE PYTHON USING JAR '{AGGS}';\n"
                   for n in names)


FUNCS = create("py_wsum", "py_top2", "span", "Mean")


def line_of(text):
    with open(AGGS) as f:
        for n, line in enumerate(f, 1):
            if line.startswith(text):
                return n
    raise AssertionError(text)


def test_group_by_over_retractions_at_parallelism_2(cluster, workdir):
    """The inner GROUP BY's updates reach py_wsum and Mean as retractions;
    the final table is the model's."""
    cluster.add_tm(slots=2)
    n, mod = 2000, 37
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "g.sql", FUNCS + seq(n) + f"""
CREATE TABLE snk (g BIGINT, ws BIGINT, m DOUBLE, cnt BIGINT, PRIMARY KEY (g) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO snk
SELECT c % 3 AS g, py_wsum(s, c) AS ws, Mean(s) AS m, COUNT(*) AS cnt
FROM (SELECT id % {mod} AS k, COUNT(*) AS c, SUM(id) AS s FROM src WHERE id % 7 <> 0
      GROUP BY id % {mod})
GROUP BY c % 3;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    job = finish(cluster, job_ids(r.stdout)[0])
    assert {v["parallelism"] for v in job["vertices"]} == {2}
    table, ops = apply_changelog(committed_files(out), ["g"])
    assert ops["-U"] > 50, ops
    want = collections.defaultdict(list)
    for c, s in inner_model(n, mod).values():
        want[c % 3].append((c, s))
    assert table == {(g,): {"g": g, "ws": sum(s * c for c, s in v),
                            "m": sum(float(s) for _, s in v) / len(v), "cnt": len(v)}
                     for g, v in want.items()}


def test_tumble_and_hop_windows(cluster, workdir):
    """py_wsum, py_top2 and span (a STRING result) per TUMBLE window, and
    per HOP window (slices' pickled accumulators merged), at parallelism 2."""
    cluster.add_tm(slots=2)
    n = 1500
    o1, o2 = os.path.join(workdir, "tumble"), os.path.join(workdir, "hop")
    r = run_sql(cluster, workdir, "w.sql", FUNCS + seq(n) + f"""
CREATE TABLE t_out (window_start TIMESTAMP(3), k BIGINT, ws BIGINT, t2 BIGINT, sp STRING)
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE h_out (window_start TIMESTAMP(3), ws BIGINT, t2 BIGINT, sp STRING, cnt BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO t_out
SELECT window_start, k3 AS k, py_wsum(id, id % 5) AS ws, py_top2(id * 37 % 101) AS t2,
       span(id * 7 % 1000) AS sp
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k3;
INSERT INTO h_out
SELECT window_start, py_wsum(id, 2) AS ws, py_top2(id * 37 % 101) AS t2,
       span(id * 7 % 1000) AS sp, COUNT(*) AS cnt
FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))
GROUP BY window_start, window_end;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)

    def span_of(v):
        xs = [i * 7 % 1000 for i in v]
        return "%d..%d" % (min(xs), max(xs))

    ts = {i: BASE + i * 100 for i in range(1, n + 1)}
    tw = collections.defaultdict(list)
    for i in range(1, n + 1):
        tw[(BASE + (ts[i] - BASE) // 10000 * 10000, i % 3)].append(i)
    want_t = {k: (sum(i * (i % 5) for i in v), second_max([i * 37 % 101 for i in v]), span_of(v))
              for k, v in tw.items()}
    got_t = {}
    for row in (json.loads(x) for p in committed_files(o1) for x in open(p)):
        key = (ms(row["window_start"]), row["k"])
        assert key not in got_t
        got_t[key] = (row["ws"], row["t2"], row["sp"])
    assert got_t == want_t
    hw = collections.defaultdict(list)
    for i in range(1, n + 1):
        last = BASE + (ts[i] - BASE) // 5000 * 5000
        for start in (last, last - 5000, last - 10000):
            hw[start].append(i)
    want_h = {k: (sum(2 * i for i in v), second_max([i * 37 % 101 for i in v]), span_of(v), len(v))
              for k, v in hw.items()}
    got_h = {ms(row["window_start"]): (row["ws"], row["t2"], row["sp"], row["cnt"])
             for row in (json.loads(x) for p in committed_files(o2) for x in open(p))}
    assert got_h == want_h


def test_over_rows_and_unbounded(cluster, workdir):
    """py_wsum and span over ROWS BETWEEN 2 PRECEDING AND CURRENT ROW and
    over the unbounded past of each partition, at parallelism 2."""
    cluster.add_tm(slots=2)
    n = 400
    o1, o2 = os.path.join(workdir, "rows"), os.path.join(workdir, "unb")
    r = run_sql(cluster, workdir, "o.sql", FUNCS + seq(n) + f"""
CREATE TABLE s1 (id BIGINT, k BIGINT, ws BIGINT, sp STRING)
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE s2 (id BIGINT, k BIGINT, ws BIGINT, sp STRING)
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO s1
SELECT id, k3 AS k,
       py_wsum(id, id % 4) OVER (PARTITION BY k3 ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW),
       span(id * 7 % 1000) OVER (PARTITION BY k3 ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
FROM src;
INSERT INTO s2
SELECT id, k3 AS k, py_wsum(id, id % 4) OVER w, span(id * 7 % 1000) OVER w
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
            xs = [x * 7 % 1000 for x in frame]
            want[i] = (i % 3, sum(x * (x % 4) for x in frame), "%d..%d" % (min(xs), max(xs)))
        got = {}
        for row in (json.loads(x) for p in committed_files(out) for x in open(p)):
            assert row["id"] not in got
            got[row["id"]] = (row["k"], row["ws"], row["sp"])
        assert got == want, out


@pytest.mark.parametrize("backend,p1,p2", [("hashmap", 2, 1), ("rocksdb", 1, 2)])
def test_accumulators_across_a_savepoint(make_cluster, workdir, backend, p1, p2):
    """Stop with a savepoint mid-stream, restore at another parallelism: the
    pickled accumulators come back from keyed state and the changelog across
    the seam ends at the model."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n, mod = 5000, 23
    out = os.path.join(workdir, "out")
    query = """
CREATE TABLE snk (k BIGINT, ws BIGINT, t2 BIGINT, sp STRING, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '{p}';
{extra}
INSERT INTO snk SELECT id % {mod} AS k, py_wsum(id, id % 4) AS ws, py_top2(id * 37 % 1009) AS t2,
       span(id * 7 % 1000) AS sp
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
    want = {}
    for k, v in vals.items():
        xs = [i * 7 % 1000 for i in v]
        want[(k,)] = {"k": k, "ws": sum(i * (i % 4) for i in v),
                      "t2": second_max([i * 37 % 1009 for i in v]),
                      "sp": "%d..%d" % (min(xs), max(xs))}
    assert table == want


def test_failures_name_the_function_the_step_and_the_row(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "f.sql", create("fussy", "hoard") + seq(50) + f"""
CREATE TABLE snk (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE snk2 (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}2', 'format' = 'json');
INSERT INTO snk SELECT id % 4 AS k, fussy(id) FROM src GROUP BY id % 4;
INSERT INTO snk2 SELECT id % 2 AS k, hoard(id) FROM src GROUP BY id % 2;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    j1, j2 = job_ids(r.stdout)
    fl = line_of('            raise ValueError("thirteen')
    for jid, want in ((j1, f"function 'fussy' failed in accumulate: ValueError: thirteen is "
                           f"unlucky (aggs.py, line {fl}) (arguments: 13)"),
                      (j2, "function 'hoard' failed in accumulate: its accumulator pickles to ")):
        cluster.wait_state(jid, ["FAILED"], timeout=90)
        text = str(cluster.get(f"/jobs/{jid}/exceptions"))
        assert want in text, text
    assert "bytes, more than the 64 of its state slot (give udaf(...) accumulator_bytes=N" in text


@pytest.mark.parametrize("name,want", [
    ("pandas_sum", "udaf over a function is PyFlink's Pandas aggregate (func_type='pandas'), "
                   "which Sluice does not run"),
    ("no_value", "class NoValue must define create_accumulator, accumulate and get_value"),
])
def test_bad_declarations_are_clear_errors_at_create(cluster, workdir, name, want):
    r = run_sql(cluster, workdir, "e.sql", create(name))
    assert r.returncode != 0 and want in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("stmt,want", [
    ("SELECT c % 3, py_top2(s) FROM (SELECT id % 5 AS k, COUNT(*) AS c, SUM(id) AS s FROM src "
     "GROUP BY id % 5) GROUP BY c % 3;",
     "py_top2 declares no retract, so it cannot aggregate an updating input"),
    ("SELECT py_wsum(id, 'x') FROM src GROUP BY id % 2;",
     "argument 2 of py_wsum must be BIGINT, not STRING"),
])
def test_bad_calls_are_clear_errors(cluster, workdir, stmt, want):
    r = run_sql(cluster, workdir, "e.sql", FUNCS + seq(5) + stmt + "\n")
    assert r.returncode != 0 and want in r.stdout, r.stdout + r.stderr


def test_describe_a_python_aggregate(cluster, workdir):
    r = run_sql(cluster, workdir, "d.sql", FUNCS + "DESCRIBE FUNCTION py_wsum;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "AGGREGATE" in r.stdout and "BIGINT py_wsum(BIGINT, BIGINT)" in r.stdout, r.stdout
    assert "PYTHON" in r.stdout, r.stdout


# ---- DECIMAL(p, s) ------------------------------------------------------------

def dec_changelog(paths, key):
    """apply_changelog's rules with the numbers read as decimal.Decimal (exact)."""
    import decimal
    table, ops = {}, collections.Counter()
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                r = json.loads(line, parse_float=decimal.Decimal)
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


def test_decimal_aggregates_over_retractions_and_insert_only_input(cluster, workdir):
    """Python aggregate functions over DECIMAL at parallelism 2: dsum
    (DECIMAL(12, 2) -> DECIMAL(20, 2), retract + merge) over the updates of an
    inner SUM -- a DECIMAL(38, 2) cast to the declared DECIMAL(12, 2) -- and
    dsum / dmean over an insert-only DECIMAL(10, 2) column (dmean's mean
    rounded HALF_EVEN to DECIMAL(10, 3) as PyFlink's coder rounds). The model
    is Python's decimal module."""
    from decimal import Context, Decimal, ROUND_HALF_EVEN
    cluster.add_tm(slots=2)
    decs = os.path.join(ROOT, "tests", "udf_py", "decs.py")
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    n, mod = 1500, 37
    amounts = {i: (Decimal(i * 7919 % 100003) / 100) * (-1 if i % 6 == 0 else 1)
               for i in range(1, n + 1)}
    with open(os.path.join(src, "part-0.csv"), "w") as f:
        for i in range(1, n + 1):
            f.write(f"{i},{amounts[i]}\n")
    out, out2 = os.path.join(workdir, "out"), os.path.join(workdir, "out2")
    fns = "".join(f"CREATE FUNCTION {x} AS 'decs.{x}' LANGUAGE PYTHON USING JAR '{decs}';\n"
                  for x in ("dsum", "dmean"))
    r = run_sql(cluster, workdir, "d.sql", fns + f"""
CREATE TABLE s (id BIGINT, amount DECIMAL(10, 2))
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv');
CREATE TABLE snk (g BIGINT, total DECIMAL(20, 2), cnt BIGINT, PRIMARY KEY (g) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE snk2 (k BIGINT, total DECIMAL(20, 2), mean DECIMAL(10, 3), PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO snk
SELECT c % 3 AS g, dsum(t) AS total, COUNT(*) AS cnt
FROM (SELECT id % {mod} AS k, COUNT(*) AS c, SUM(amount) AS t FROM s WHERE id % 7 <> 0
      GROUP BY id % {mod})
GROUP BY c % 3;
INSERT INTO snk2 SELECT id % 5 AS k, dsum(amount), dmean(amount) FROM s GROUP BY id % 5;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    inner = collections.defaultdict(list)
    for i in range(1, n + 1):
        if i % 7:
            inner[i % mod].append(amounts[i])
    want = collections.defaultdict(lambda: [Decimal(0), 0])
    for vals in inner.values():
        w = want[len(vals) % 3]
        w[0] += sum(vals, Decimal(0))
        w[1] += 1
    table, ops = dec_changelog(committed_files(out), ["g"])
    assert ops["-U"] > 20, ops
    assert {k[0]: (v["total"], v["cnt"]) for k, v in table.items()} == \
        {g: (t, c) for g, (t, c) in want.items()}
    per = collections.defaultdict(list)
    for i in range(1, n + 1):
        per[i % 5].append(amounts[i])
    want2 = {k: (sum(v, Decimal(0)),
                 (sum(v, Decimal(0)) / len(v)).quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN,
                                                        context=Context(prec=10)))
             for k, v in per.items()}
    table2, _ = dec_changelog(committed_files(out2), ["k"])
    assert {k[0]: (v["total"], v["mean"]) for k, v in table2.items()} == want2


@pytest.mark.skipif(zk_available() is not None, reason=str(zk_available()))
def test_python_aggregates_survive_a_taskmanager_kill_and_a_jobmanager_failover(workdir, zk):  # noqa: F811
    """High availability with Python aggregate functions: a GROUP BY calling
    py_wsum and dsum (DECIMAL) runs at parallelism 2 on a ZooKeeper-led
    cluster of two JobManagers and two TaskManagers; a TaskManager running
    its tasks is SIGKILLed (the job restarts from its checkpoint on the
    other), then the leading JobManager (the next leader recovers the job --
    the Python module's text in its graph -- from the job store). The
    committed table is exactly the Python model's."""
    import signal
    import subprocess
    from decimal import Decimal
    import test_ha
    from conftest import BIN, wait_for
    decs = os.path.join(ROOT, "tests", "udf_py", "decs.py")
    c = test_ha.HACluster(workdir, zk, njm=2, ntm=2, slots=2)
    try:
        leader = c.leader()
        n, mod = 20000, 11
        out = os.path.join(workdir, "out")
        path = os.path.join(workdir, "ha.sql")
        with open(path, "w") as f:
            f.write(create("py_wsum") + f"""
CREATE FUNCTION dsum AS 'decs.dsum' LANGUAGE PYTHON USING JAR '{decs}';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE snk (k BIGINT, ws BIGINT, ds DECIMAL(20, 2), PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO snk SELECT id % {mod} AS k, py_wsum(id, id % 3) AS ws,
                       dsum(CAST(id AS DECIMAL(10, 2)) / 4) AS ds
FROM src GROUP BY id % {mod};
""")
        r = subprocess.run([os.path.join(BIN, "sluice"), "-m", f"127.0.0.1:{leader.rest_port}",
                            "sql", "-f", path], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        # a TaskManager that runs the job's tasks, once a checkpoint is complete
        c.wait_state(jid, "RUNNING", leader)
        base = c.completed(jid, leader)
        wait_for(lambda: c.completed(jid, leader) > base, timeout=30, what="a checkpoint")
        tms = c.get("/taskmanagers", leader)["taskmanagers"]
        busy = [t["id"] for t in tms if t["freeSlots"] < t["slotsNumber"]]
        victim = next(t for t in c.tms if t.id in busy)
        victim.kill(signal.SIGKILL)
        # the job runs again on the other TaskManager and checkpoints there
        base = c.completed(jid, leader)
        wait_for(lambda: c.completed(jid, leader) > base, timeout=60,
                 what="a checkpoint after the TaskManager's loss")
        assert c.job_state(jid, leader) == "RUNNING"
        test_ha.kill_leader_and_wait(c, jid, restart=False)
        new = c.leader(exclude=(leader,))
        assert c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], new, timeout=120) == \
            "FINISHED", c.get(f"/jobs/{jid}/exceptions", new)
        table, _ = dec_changelog(committed_files(out), ["k"])
        want = {}
        for i in range(1, n + 1):
            ws, ds = want.get(i % mod, (0, Decimal(0)))
            # CAST(id AS DECIMAL(10, 2)) / 4 is exact, and cast to dsum's DECIMAL(12, 2) unchanged
            want[i % mod] = (ws + i * (i % 3), ds + Decimal(i) / 4)
        assert table == {(k,): {"k": k, "ws": ws, "ds": ds} for k, (ws, ds) in want.items()}
    finally:
        problems = c.shutdown()
        assert not problems, "\n".join(problems)


def test_decimal_aggregates_over_rows_and_in_a_window(cluster, workdir):
    """dsum (DECIMAL(12, 2) -> DECIMAL(20, 2)) OVER the 2 preceding rows and the
    current one, from a BIGINT argument cast to DECIMAL(12, 2); dmean in a
    TUMBLE window, its mean rounded HALF_EVEN to DECIMAL(10, 3); parallelism 2."""
    from decimal import Context, Decimal, ROUND_HALF_EVEN
    cluster.add_tm(slots=2)
    decs = os.path.join(ROOT, "tests", "udf_py", "decs.py")
    n = 600
    o1, o2 = os.path.join(workdir, "over"), os.path.join(workdir, "win")
    fns = "".join(f"CREATE FUNCTION {x} AS 'decs.{x}' LANGUAGE PYTHON USING JAR '{decs}';\n"
                  for x in ("dsum", "dmean"))
    r = run_sql(cluster, workdir, "o.sql", fns + seq(n) + f"""
CREATE TABLE s1 (id BIGINT, k BIGINT, ds DECIMAL(20, 2))
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE s2 (window_start TIMESTAMP(3), k BIGINT, m DECIMAL(10, 3))
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO s1
SELECT id, k3 AS k, dsum(id * 3) OVER (PARTITION BY k3 ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
FROM src;
INSERT INTO s2
SELECT window_start, k3, dmean(CAST(id AS DECIMAL(10, 2)) / 7)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, k3;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)
    want, seen = {}, collections.defaultdict(list)
    for i in range(1, n + 1):
        seen[i % 3].append(Decimal(i * 3))
        want[i] = (i % 3, sum(seen[i % 3][-3:], Decimal(0)))
    got = {}
    for row in (json.loads(x, parse_float=Decimal) for p in committed_files(o1) for x in open(p)):
        assert row["id"] not in got
        got[row["id"]] = (row["k"], Decimal(row["ds"]))
    assert got == want
    # the window's argument: CAST(id AS DECIMAL(10, 2)) / 7 is Flink's DECIMAL(21, 13)
    # (rounded HALF_UP), then cast HALF_UP to dmean's DECIMAL(10, 2)
    def arg(i):
        q13 = (Decimal(i) / 7).quantize(Decimal(1).scaleb(-13), rounding="ROUND_HALF_UP",
                                        context=Context(prec=50))
        return q13.quantize(Decimal("0.01"), rounding="ROUND_HALF_UP")
    wins = collections.defaultdict(list)
    for i in range(1, n + 1):
        wins[((BASE + i * 100) // 5000 * 5000, i % 3)].append(arg(i))
    want_w = {k: (sum(v, Decimal(0)) / len(v)).quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN,
                                                         context=Context(prec=10))
              for k, v in wins.items()}
    got_w = {}
    for row in (json.loads(x, parse_float=Decimal) for p in committed_files(o2) for x in open(p)):
        got_w[(ms(row["window_start"]), row["k"])] = row["m"]
    assert got_w == want_w
