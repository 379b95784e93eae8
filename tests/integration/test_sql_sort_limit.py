"""Flink's streaming ORDER BY and LIMIT without a Top-N, and set operations
over branches of different types, end to end through `sluice sql -f` on a
cluster:

- ORDER BY an ascending time attribute (Flink's temporal sort): rows go out
  in rowtime order once the watermark passes them, ties in arrival order or
  by the further ORDER BY columns, late rows dropped and counted; ORDER BY a
  processing-time attribute keeps the arrival order; the rows held for the
  watermark survive a savepoint on both backends;
- LIMIT n [OFFSET m] without ORDER BY: the first rows that arrive (an INSERT
  job finishes with its bounded sources; a SELECT's client cancels the job
  once it has the rows), also across a savepoint;
- UNION ALL / UNION / INTERSECT / EXCEPT of INT, BIGINT and DOUBLE columns
  widened to the common type, parenthesised and nested branches.

Inputs are JSON files written here in a fixed, seeded arrival order, or
sequence generators; every expected result is computed by a Python model
of Flink's rules, independently of Sluice."""
import collections
import json
import os
import random
import re

import pytest

from conftest import wait_for
from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql
from test_sql_flink_parity import late_dropped, ts_text, write_rows
from test_sql_query import apply_multiset, bag_of
from test_sql_select import tableau

BASE = 1_700_000_000_000


def read_lines(out):
    """The rows of a json sink, file by file in write order."""
    got = []
    for path in committed_files(out):
        with open(path) as f:
            got += [json.loads(line) for line in f if line.strip()]
    return got


def sort_rows(n, seed, late=True):
    """n rows (id, k, ts) in arrival order: event time rising by 0-200 ms
    steps on a 100 ms grid (so many ties), disorder up to 1.5 s, and with
    `late` some rows 3-6 s behind (late with a 2 s delay)."""
    rnd = random.Random(seed)
    out, t = [], BASE
    for i in range(1, n + 1):
        t += rnd.choice([0, 0, 100, 200])
        back = rnd.choice([0, 0, 0, 100, 500, 1500])
        if late and rnd.random() < 0.06:
            back = rnd.choice([3000, 4000, 6000])
        out.append((i, rnd.randrange(5), t - back))
    return out


def sort_model(rows, delay):
    """Flink's RowTimeSortOperator with a per-row watermark max(ts) - delay:
    a row with ts <= watermark is late; the rest go out by ts, rows of one
    ts in arrival order. Returns (the kept rows in arrival order, late)."""
    wm, kept, late = None, [], 0
    for r in rows:
        if wm is not None and r[2] <= wm:
            late += 1
        else:
            kept.append(r)
        wm = r[2] - delay if wm is None else max(wm, r[2] - delay)
    return kept, late


SORT_DDL = """
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '{p}';
CREATE TABLE ev (id BIGINT, k INT, ts TIMESTAMP(3), pt AS PROCTIME(),
                 WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
"""


def sink(name, path, cols="id BIGINT, k INT, ts TIMESTAMP(3)"):
    return (f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
            f"'path' = '{path}', 'format' = 'json', 'sink.parallelism' = '1');\n")


def as_tuples(got):
    from test_sql import ms
    return [(x["id"], x["k"], ms(x["ts"])) for x in got]


def test_order_by_rowtime_sorts_by_the_watermark(cluster, workdir):
    """One file in a fixed order with late rows and ties, read at
    parallelism 1 so that the arrival order is the file's: the exact
    sequences and numLateRecordsDropped."""
    cluster.add_tm(slots=4)
    src = os.path.join(workdir, "src")
    rows = sort_rows(800, seed=30)
    write_rows(os.path.join(src, "ev.json"), [{"id": i, "k": k, "ts": ts_text(t)}
                                               for i, k, t in rows])
    outs = {x: os.path.join(workdir, x) for x in ("by_ts", "by_ts_k", "by_pt")}
    r = run_sql(cluster, workdir, "s.sql", SORT_DDL.format(p=1, src=src)
                + sink("by_ts", outs["by_ts"]) + sink("by_ts_k", outs["by_ts_k"])
                + sink("by_pt", outs["by_pt"]) + """
EXECUTE STATEMENT SET BEGIN
INSERT INTO by_ts SELECT id, k, ts FROM ev ORDER BY ts;
INSERT INTO by_ts_k SELECT id, k, ts FROM ev ORDER BY ts, k DESC, id;
INSERT INTO by_pt SELECT id, k, ts FROM (SELECT id, k, ts, pt FROM ev ORDER BY pt);
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    job = finish(cluster, jid)
    sorts = [v for v in job["vertices"] if v["name"].startswith("sort")]
    assert len(sorts) == 3 and all(v["parallelism"] == 1 for v in sorts), job["vertices"]
    kept, late = sort_model(rows, 2000)
    assert late > 10
    # stable: rows of one rowtime in arrival order
    assert as_tuples(read_lines(outs["by_ts"])) == sorted(kept, key=lambda x: x[2])
    assert as_tuples(read_lines(outs["by_ts_k"])) == sorted(kept, key=lambda x: (x[2], -x[1], x[0]))
    # processing time: the arrival order, every row (none is late)
    assert as_tuples(read_lines(outs["by_pt"])) == rows
    assert late_dropped(cluster, jid) == 2 * late


def test_order_by_rowtime_at_parallelism_2(cluster, workdir):
    """Two generator subtasks, each in rising order with disorder under the
    watermark delay (no row is late): ORDER BY ts, id is the one exact
    order; ORDER BY ts gives every row in time order."""
    cluster.add_tm(slots=4)
    n = 3000
    outs = {x: os.path.join(workdir, x) for x in ("sorted", "by_ts")}
    r = run_sql(cluster, workdir, "s.sql", SORT_GEN.format(
        p=2, extra="", base=BASE, rate=100000, n=n,
        sink=sink("sorted", outs["sorted"]) + sink("by_ts", outs["by_ts"]))
        .replace("INSERT INTO sorted", "EXECUTE STATEMENT SET BEGIN\nINSERT INTO by_ts SELECT id, "
                 "k, ts FROM gen ORDER BY ts;\nINSERT INTO sorted") + "END;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    ts = {i: BASE + i * 100 - i % 7 * 150 for i in range(1, n + 1)}
    assert [x["id"] for x in read_lines(outs["sorted"])] == sorted(ts, key=lambda i: (ts[i], i))
    by_ts = as_tuples(read_lines(outs["by_ts"]))
    assert [x[2] for x in by_ts] == sorted(ts.values())
    assert sorted(by_ts) == [(i, i % 5, ts[i]) for i in range(1, n + 1)]
    assert late_dropped(cluster, jid) == 0


SORT_GEN = """
SET 'parallelism.default' = '{p}';
{extra}
CREATE TABLE gen (id BIGINT, k AS CAST(id % 5 AS INT),
                  ts AS TO_TIMESTAMP_LTZ({base} + id * 100 - id % 7 * 150, 3),
                  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
{sink}
INSERT INTO sorted SELECT id, k, ts FROM gen ORDER BY ts, id;
"""


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_order_by_rowtime_across_a_savepoint(make_cluster, workdir, backend):
    """Stop with a savepoint while rows wait for the watermark, restore at
    another parallelism: both runs together give every row once, in order."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=3, extra={"state.backend.type": backend})
    n = 3000
    out = os.path.join(workdir, "sorted")
    snk = sink("sorted", out)
    r = run_sql(c, workdir, "run1.sql", SORT_GEN.format(p=2, extra="", base=BASE, rate=300, n=n,
                                                        sink=snk))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    c.wait_state(jid, "RUNNING", timeout=30)
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), timeout=60,
             what="every task to run")
    wait_for(lambda: sum(v["metrics"].get("write-records", 0) for v in c.job(jid)["vertices"]
                         if v["name"].startswith("sort")) >= 300, timeout=60,
             what="the sort to emit rows")
    r = c.cli("stop", "--savepoint", "file://" + os.path.join(workdir, "sp"), jid, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (\S+)", r.stdout).group(1)
    job = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    run1 = committed_files(out)
    first = [x["id"] for x in read_lines(out)]
    assert 0 < len(first) < n

    r = run_sql(c, workdir, "run2.sql", SORT_GEN.format(
        p=1, extra=f"SET 'execution.savepoint.path' = '{sp}';", base=BASE, rate=100000, n=n,
        sink=snk))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    second = []
    for path in committed_files(out):
        if path not in run1:
            with open(path) as f:
                second += [json.loads(line)["id"] for line in f if line.strip()]
    want = sorted(range(1, n + 1), key=lambda i: (i * 100 - i % 7 * 150, i))
    assert first + second == want


# ---- LIMIT without ORDER BY ----------------------------------------------------------

SEQ = """
CREATE TABLE seq (id BIGINT, k AS CAST(id % 4 AS INT)) WITH (
  'connector' = 'datagen', 'rows-per-second' = '{rate}',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


@pytest.mark.parametrize("p", [1, 2])
def test_limit_without_order_by_keeps_the_first_rows(make_cluster, workdir, p):
    c = make_cluster()
    c.add_tm(slots=4)
    n = 2000
    outs = {x: os.path.join(workdir, x) for x in ("first", "page")}
    r = run_sql(c, workdir, "l.sql", SEQ.format(rate=100000, n=n) + f"""
SET 'parallelism.default' = '{p}';
CREATE TABLE first (id BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = '{outs["first"]}', 'format' = 'json');
CREATE TABLE page (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{outs["page"]}', 'format' = 'json');
INSERT INTO first SELECT id, k FROM seq WHERE k <> 0 LIMIT 7;
INSERT INTO page SELECT id FROM seq LIMIT 3 OFFSET 4;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 2
    for jid in jids:
        job = finish(c, jid)  # bounded sources: the job finishes
        lim = [v for v in job["vertices"] if v["name"].startswith("limit")]
        assert len(lim) == 1 and lim[0]["parallelism"] == 1, job["vertices"]
    first = [x["id"] for x in read_lines(outs["first"])]
    page = [x["id"] for x in read_lines(outs["page"])]
    if p == 1:
        assert first == [i for i in range(1, n + 1) if i % 4 != 0][:7]
        assert page == [5, 6, 7]
    else:
        # which rows come first depends on how the two source subtasks interleave:
        # exactly that many distinct rows of the input, as Flink gives
        assert len(first) == 7 == len(set(first)) and all(i % 4 != 0 for i in first)
        assert len(page) == 3 == len(set(page)) and all(1 <= i <= n for i in page)
    assert all(x["k"] == x["id"] % 4 for x in read_lines(outs["first"]))


def test_select_limit_ends_the_result(cluster, workdir):
    """An unbounded source: the client shows the 3 rows, ends the result and
    cancels the job (its sources would run on)."""
    cluster.add_tm(slots=2)
    r = run_sql(cluster, workdir, "q.sql", """
SET 'sql-client.execution.result-mode' = 'tableau';
SET 'parallelism.default' = '1';
CREATE TABLE unb (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000');
SELECT id, id * 2 AS d FROM unb LIMIT 3;
""", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert tableau(["id", "d"], [20, 20], [("+I", i, 2 * i) for i in (1, 2, 3)]) in r.stdout, r.stdout
    jobs = [j for j in cluster.get("/jobs/overview")["jobs"] if j["name"] == "collect"]
    assert len(jobs) == 1
    job = cluster.wait_state(jobs[0]["jid"], ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "CANCELED"


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_limit_across_a_savepoint(make_cluster, workdir, backend):
    """The count of rows seen is keyed state: stopped with a savepoint after
    some rows, restored, the job forwards exactly the rows still due."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    out = os.path.join(workdir, "lim")
    text = SEQ.format(rate="{rate}", n=5000) + f"""
SET 'parallelism.default' = '1';
{{extra}}
CREATE TABLE lim (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO lim SELECT id FROM seq LIMIT 400 OFFSET 100;
"""
    r = run_sql(c, workdir, "run1.sql", text.format(rate=200, extra=""))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    c.wait_state(jid, "RUNNING", timeout=30)
    wait_for(lambda: sum(v["metrics"].get("write-records", 0) for v in c.job(jid)["vertices"]
                         if v["name"].startswith("limit")) >= 50, timeout=60,
             what="the limit to forward rows")
    r = c.cli("stop", "--savepoint", "file://" + os.path.join(workdir, "sp"), jid, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (\S+)", r.stdout).group(1)
    assert c.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)["state"] == "FINISHED"
    first = [x["id"] for x in read_lines(out)]
    assert 50 <= len(first) < 400
    r = run_sql(c, workdir, "run2.sql", text.format(
        rate=100000, extra=f"SET 'execution.savepoint.path' = '{sp}';"))
    assert r.returncode == 0, r.stdout + r.stderr
    finish(c, job_ids(r.stdout)[0])
    assert [x["id"] for x in read_lines(out)] == list(range(101, 501))


# ---- set operations: widening, parentheses -------------------------------------------

WIDE = {
    # INT UNION ALL BIGINT -> BIGINT
    "u_all": ("x BIGINT", "SELECT k AS x FROM a UNION ALL SELECT id FROM b"),
    # INT UNION DOUBLE -> DOUBLE (distinct)
    "u_dist": ("x DOUBLE", "SELECT k AS x FROM a UNION SELECT CAST(id AS DOUBLE) / 2 FROM b"),
    # BIGINT INTERSECT INT, then EXCEPT DOUBLE: nested, parenthesised
    "nested": ("x DOUBLE", "(SELECT id AS x FROM a INTERSECT SELECT k * 3 FROM b) "
                           "EXCEPT (SELECT CAST(id AS DOUBLE) FROM b WHERE id > 20)"),
    # parenthesised branches with their own LIMIT-free ORDER-free bodies
    "paren": ("x BIGINT, t STRING", "(SELECT id AS x, 'a' AS t FROM a WHERE id <= 3) UNION ALL "
                                    "((SELECT k, 'b' FROM b WHERE id <= 2) UNION ALL "
                                    "(SELECT id, 'c' FROM b WHERE id = 9))"),
}


@pytest.mark.parametrize("p", [1, 2])
def test_set_operations_widen_types_and_take_parentheses(make_cluster, workdir, p):
    c = make_cluster()
    c.add_tm(slots=4)
    na, nb = 40, 30
    ddl = "".join(f"CREATE TABLE {n} ({cols}) WITH ('connector' = 'filesystem', "
                  f"'path' = '{os.path.join(workdir, n)}', 'format' = 'json');\n"
                  for n, (cols, _) in WIDE.items())
    r = run_sql(c, workdir, "w.sql", f"""
CREATE TABLE a (id BIGINT, k AS CAST(id % 7 AS INT)) WITH ('connector' = 'datagen',
  'rows-per-second' = '100000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
  'fields.id.end' = '{na}');
CREATE TABLE b (id BIGINT, k AS CAST(id % 5 AS INT)) WITH ('connector' = 'datagen',
  'rows-per-second' = '100000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
  'fields.id.end' = '{nb}');
{ddl}
SET 'parallelism.default' = '{p}';
EXECUTE STATEMENT SET BEGIN
""" + "".join(f"INSERT INTO {n} {q};\n" for n, (_, q) in WIDE.items()) + "END;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(c, job_ids(r.stdout)[0])
    A, B = range(1, na + 1), range(1, nb + 1)
    want = {
        "u_all": [{"x": i % 7} for i in A] + [{"x": i} for i in B],
        "u_dist": [{"x": float(v)} for v in {i % 7 for i in A} | {i / 2 for i in B}],
        "nested": [{"x": float(v)} for v in
                   ({i for i in A} & {i % 5 * 3 for i in B}) - {i for i in B if i > 20}],
        "paren": [{"x": i, "t": "a"} for i in (1, 2, 3)] + [{"x": i % 5, "t": "b"} for i in (1, 2)]
                 + [{"x": 9, "t": "c"}],
    }
    for name in WIDE:
        assert apply_multiset(committed_files(os.path.join(workdir, name))) == bag_of(want[name]), name


@pytest.mark.parametrize("stmt,err", [
    ("SELECT id FROM seq UNION ALL SELECT name FROM seq;",
     "line 1, column 30: Type mismatch in column 1 of UNION: STRING here, BIGINT before"),
    ("(SELECT id FROM seq) INTERSECT (SELECT id, name FROM seq);",
     "line 1, column 33: Column count mismatch in INTERSECT"),
    ("SELECT id FROM seq OFFSET 3;",
     "line 1, column 27: FETCH is missed, which on streaming table is not supported currently."),
    ("SELECT id, ts FROM seq ORDER BY ts DESC;",
     "line 1, column 33: Sort on a non-time-attribute field is not supported."),
    ("SELECT id, pt FROM seq ORDER BY pt, id;",
     "line 1, column 37: ORDER BY a processing-time attribute with further sort columns is not "
     "supported yet"),
    ("SELECT name, COUNT(*) FROM seq GROUP BY name LIMIT 3;",
     "line 1, column 46: LIMIT without ORDER BY over an updating input"),
])
def test_refused_sort_limit_forms(cluster, workdir, stmt, err):
    r = run_sql(cluster, workdir, "e.sql", """
CREATE TABLE seq (id BIGINT, name STRING, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen');
""".lstrip() + stmt)
    assert r.returncode != 0
    got = r.stdout + r.stderr
    assert err.replace("line 1,", "line 3,") in got, got


def test_a_finished_jobs_slot_serves_the_next_job(cluster, workdir):
    """Regression: with one slot, a script of two INSERTs whose first is a tiny
    bounded job: the second gets the slot as soon as the first FINISHES."""
    cluster.add_tm(slots=1)
    one, two = os.path.join(workdir, "one"), os.path.join(workdir, "two")
    r = run_sql(cluster, workdir, "two.sql", SEQ.format(rate=100000, n=50) + f"""
SET 'parallelism.default' = '1';
CREATE TABLE `one` (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{one}', 'format' = 'json');
CREATE TABLE two (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{two}', 'format' = 'json');
INSERT INTO `one` VALUES (1), (2);
INSERT INTO two SELECT id FROM seq;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 2
    for jid in jids:
        job = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
        assert job["state"] == "FINISHED", (jid, cluster.get(f"/jobs/{jid}/exceptions"))
    assert sorted(x["id"] for x in read_lines(one)) == [1, 2]
    assert sorted(x["id"] for x in read_lines(two)) == list(range(1, 51))
