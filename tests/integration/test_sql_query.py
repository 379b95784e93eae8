"""Flink's query forms around a SELECT, end to end through `sluice sql -f`
on a cluster: VALUES and SELECT without FROM (a bounded `values` source;
the job FINISHES), column aliases `AS t(a, b)`, SELECT DISTINCT, UNION,
INTERSECT and EXCEPT with and without ALL (changelogs applied row by row,
every -D checked against a row that is there), ORDER BY ... LIMIT / OFFSET /
FETCH FIRST as a Top-N, and the forms Flink refuses. Inputs are sequence
generators; every expected result is computed here from the ids, by a
Python model of the set semantics, independently of Sluice. The stateful
ones also stop with a savepoint mid-stream and restore on both backends."""
import collections
import os
import re

import pytest

from conftest import wait_for
from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql
from test_sql_select import tableau


def apply_multiset(paths, bag=None):
    """Apply a changelog (json part files, in order) to a multiset of rows:
    +I/+U add a copy, -U/-D must remove a copy that is there."""
    import json
    bag = collections.Counter() if bag is None else bag
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                r = json.loads(line)
                op = r.pop("op", "+I")
                row = tuple(sorted(r.items()))
                if op in ("+I", "+U"):
                    bag[row] += 1
                else:
                    assert bag[row] > 0, f"{os.path.basename(path)}:{n}: {op} {r} is not there"
                    bag[row] -= 1
                    if not bag[row]:
                        del bag[row]
    return bag


def bag_of(rows):
    return collections.Counter(tuple(sorted(r.items())) for r in rows)


# a: ids 1..na, k = id % 7; b: ids 1..nb, k = id % 5 * 2 (the evens 0..8)
def tables(na, nb, rate=100000):
    return f"""
CREATE TABLE a (id BIGINT, k AS CAST(id % 7 AS INT),
                tag AS CASE WHEN id % 7 % 2 = 0 THEN 'even' ELSE 'odd' END)
  WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{na}');
CREATE TABLE b (id BIGINT, k AS CAST(id % 5 * 2 AS INT),
                tag AS CASE WHEN id % 5 * 2 % 2 = 0 THEN 'even' ELSE 'odd' END)
  WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{nb}');
"""


SETOPS = {
    "dist": "SELECT DISTINCT k, tag FROM a",
    "uni": "SELECT k, tag FROM a UNION SELECT k, tag FROM b",
    "inter": "SELECT k, tag FROM a INTERSECT SELECT k, tag FROM b",
    "inter_all": "SELECT k, tag FROM a INTERSECT ALL SELECT k, tag FROM b",
    "exc": "SELECT k, tag FROM a EXCEPT SELECT k, tag FROM b",
    "exc_all": "SELECT k, tag FROM a EXCEPT ALL SELECT k, tag FROM b",
}


def setops_script(workdir, p, extra=""):
    ddl = "".join(f"CREATE TABLE {n} (k INT, tag STRING) WITH ('connector' = 'filesystem', "
                  f"'path' = '{os.path.join(workdir, n)}', 'format' = 'json');\n" for n in SETOPS)
    ins = "".join(f"INSERT INTO {n} {q};\n" for n, q in SETOPS.items())
    return (ddl + f"SET 'parallelism.default' = '{p}';\n{extra}\n"
            "EXECUTE STATEMENT SET BEGIN\n" + ins + "END;\n")


def setops_model(na, nb):
    """The expected multiset of each query, from the ids."""
    def row(k):
        return {"k": k, "tag": "even" if k % 2 == 0 else "odd"}
    ca = collections.Counter(i % 7 for i in range(1, na + 1))
    cb = collections.Counter(i % 5 * 2 for i in range(1, nb + 1))
    want = {
        "dist": [row(k) for k in ca],
        "uni": [row(k) for k in set(ca) | set(cb)],
        "inter": [row(k) for k in set(ca) & set(cb)],
        "inter_all": [row(k) for k in ca for _ in range(min(ca[k], cb[k]))],
        "exc": [row(k) for k in set(ca) - set(cb)],
        "exc_all": [row(k) for k in ca for _ in range(max(ca[k] - cb[k], 0))],
    }
    return {n: bag_of(rs) for n, rs in want.items()}


def test_select_without_from_and_values(cluster, workdir):
    cluster.add_tm(slots=2)
    out, joined = os.path.join(workdir, "out"), os.path.join(workdir, "joined")
    r = run_sql(cluster, workdir, "v.sql", f"""
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT 1 AS a, 'x' AS b, 1 + 2 AS c;
SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, CAST(NULL AS STRING))) AS t(x, y) WHERE x > 1;
VALUES (1, 2.5), (20, 1);
CREATE TABLE `out` (n BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `out` VALUES (1, 'one'), (2, 'two'), (3, CAST(NULL AS STRING));
CREATE TABLE seq (id BIGINT, k AS CAST(id % 4 AS INT)) WITH (
  'connector' = 'datagen', 'rows-per-second' = '100000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '40');
CREATE TABLE joined (id BIGINT, name STRING) WITH ('connector' = 'filesystem', 'path' = '{joined}', 'format' = 'json');
INSERT INTO joined SELECT s.id, v.name FROM seq AS s JOIN (VALUES (1, 'one'), (3, 'three')) AS v(k, name) ON s.k = v.k;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert tableau(["a", "b", "c"], [11, 30, 11], [("+I", 1, "x", 3)]) in r.stdout, r.stdout
    assert tableau(["x", "y"], [11, 30], [("+I", 2, "b"), ("+I", 3, None)]) in r.stdout, r.stdout
    # a column of INT and DECIMAL values is DOUBLE here; Flink names the columns EXPR$n
    assert tableau(["EXPR$0", "EXPR$1"], [11, 30], [("+I", 1, 2.5), ("+I", 20, 1.0)]) \
        in r.stdout, r.stdout
    jobs = cluster.get("/jobs/overview")["jobs"]
    assert [j["state"] for j in jobs if j["name"] == "collect"] == ["FINISHED"] * 3
    ids = job_ids(r.stdout)
    assert len(ids) == 2
    for jid in ids:
        job = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
        assert job["state"] == "FINISHED", (jid, cluster.get(f"/jobs/{jid}/exceptions"), job)
    assert apply_multiset(committed_files(out)) == bag_of(
        [{"n": 1, "s": "one"}, {"n": 2, "s": "two"}, {"n": 3, "s": None}])
    names = {1: "one", 3: "three"}
    assert apply_multiset(committed_files(joined)) == bag_of(
        [{"id": i, "name": names[i % 4]} for i in range(1, 41) if i % 4 in names])


@pytest.mark.parametrize("p", [1, 2])
def test_distinct_union_intersect_except(make_cluster, workdir, p):
    c = make_cluster()
    c.add_tm(slots=2)
    na, nb = 300, 180
    r = run_sql(c, workdir, "s.sql", tables(na, nb) + setops_script(workdir, p))
    assert r.returncode == 0, r.stdout + r.stderr
    job = finish(c, job_ids(r.stdout)[0])
    kinds = collections.Counter(v["name"].split(" ")[0].split("-")[0] for v in job["vertices"])
    assert kinds["intersect"] == 2 and kinds["except"] == 2, job["vertices"]
    want = setops_model(na, nb)
    for name in SETOPS:
        assert apply_multiset(committed_files(os.path.join(workdir, name))) == want[name], name


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_set_operations_across_a_savepoint(make_cluster, workdir, backend):
    """Stop with a savepoint while the inputs are half read, restore at
    another parallelism: the changelogs of both runs apply cleanly across
    the seam and end at the model's result."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    na, nb = 3000, 2000
    r = run_sql(c, workdir, "run1.sql", tables(na, nb, rate=400) + setops_script(workdir, 2))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    c.wait_state(jid, "RUNNING", timeout=30)
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), timeout=60,
             what="every task to run")
    sp = c.stop_after_progress(jid, "a", na // 6, os.path.join(workdir, "sp"))
    want = setops_model(na, nb)
    run1, bags = {}, {}
    for name in SETOPS:
        run1[name] = committed_files(os.path.join(workdir, name))
        bags[name] = apply_multiset(run1[name])
    assert bags["inter_all"] != want["inter_all"]  # stopped mid-stream

    r = run_sql(c, workdir, "run2.sql", tables(na, nb, rate=100000) + setops_script(
        workdir, 1, extra=f"SET 'execution.savepoint.path' = '{sp}';"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    for name in SETOPS:
        new = [f for f in committed_files(os.path.join(workdir, name)) if f not in run1[name]]
        assert apply_multiset(new, bags[name]) == want[name], name


def test_order_by_limit_is_a_top_n(cluster, workdir):
    cluster.add_tm(slots=3)  # three jobs at once
    n = 2000
    outs = {x: os.path.join(workdir, x) for x in ("top", "page", "fetched")}
    ddl = "".join(f"CREATE TABLE {x} (id BIGINT, amount INT) WITH ('connector' = 'filesystem', "
                  f"'path' = '{d}', 'format' = 'json');\n" for x, d in outs.items())
    r = run_sql(cluster, workdir, "o.sql", f"""
CREATE TABLE sales (id BIGINT, amount AS CAST(id * 37 % 1009 AS INT)) WITH (
  'connector' = 'datagen', 'rows-per-second' = '100000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
{ddl}
SET 'table.exec.state.ttl' = '1 h';
INSERT INTO top SELECT id, amount FROM sales ORDER BY amount DESC, id LIMIT 5;
INSERT INTO page SELECT id, amount FROM sales ORDER BY amount, id DESC LIMIT 3 OFFSET 4;
INSERT INTO fetched SELECT id, amount FROM sales ORDER BY amount DESC, id DESC FETCH FIRST 2 ROWS ONLY;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)
    rows = [{"id": i, "amount": i * 37 % 1009} for i in range(1, n + 1)]
    top = sorted(rows, key=lambda x: (-x["amount"], x["id"]))[:5]
    page = sorted(rows, key=lambda x: (x["amount"], -x["id"]))[4:7]
    fetch = sorted(rows, key=lambda x: (-x["amount"], -x["id"]))[:2]
    assert apply_multiset(committed_files(outs["top"])) == bag_of(top)
    assert apply_multiset(committed_files(outs["page"])) == bag_of(page)
    assert apply_multiset(committed_files(outs["fetched"])) == bag_of(fetch)


@pytest.mark.parametrize("stmt,err", [
    ("SELECT id FROM seq ORDER BY id;",
     "line 1, column 29: Sort on a non-time-attribute field is not supported."),
    ("SELECT id FROM seq ORDER BY id OFFSET 3;",
     "line 1, column 39: FETCH is missed, which on streaming table is not supported currently."),
    ("VALUES (1, 'a'), ('b', 2);",
     "line 1, column 19: Values passed to VALUES operator must have compatible types: column 1 "
     "is STRING here and INT above"),
    ("SELECT * FROM (VALUES (1, 2)) AS t(x);",
     "line 1, column 36: List of column aliases must have same degree as table; table has 2 "
     "columns, whereas alias list has 1 columns"),
    ("SELECT id FROM seq INTERSECT SELECT CAST(id AS STRING) FROM seq;",
     "line 1, column 30: Type mismatch in column 1 of INTERSECT: STRING here, BIGINT before"),
    ("SELECT id FROM seq ORDER BY id LIMIT 20000;",
     "line 1, column 38: LIMIT: 20000 is out of range (0 to 10000)"),
])
def test_refused_forms_name_their_place(cluster, workdir, stmt, err):
    r = run_sql(cluster, workdir, "e.sql", """
CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen');
""".lstrip() + stmt)
    assert r.returncode != 0
    got = r.stdout + r.stderr
    assert err.replace("line 1,", "line 2,") in got, got


def test_where_filters_a_join_input_before_the_join(cluster, workdir):
    """A WHERE conjunct that reads one table of a join only is applied between
    that table's scan and the join (plan_join.c), where the table's rows can
    only reach the output with their own values: the joins read just the rows
    that pass (their read-records), and the results are exactly the model's.
    A conjunct on the side a LEFT JOIN pads (b.id IS NULL OR ...) must stay
    after the join: a b row it drops would turn an a row's match into a NULL
    row that passes."""
    cluster.add_tm(slots=2)
    outs = {n: os.path.join(workdir, n) for n in ("inn", "left_pad", "three")}
    ddl = "".join(f"CREATE TABLE {n} (x BIGINT, y BIGINT) WITH ('connector' = 'filesystem', "
                  f"'path' = '{d}', 'format' = 'json');\n" for n, d in outs.items())
    queries = {
        "inn": "SELECT a.id, b.id FROM a JOIN b ON a.k = b.k "
                 "WHERE a.id % 3 = 0 AND b.id < 50 AND a.id + b.id > 100",
        "left_pad": "SELECT a.id, b.id FROM a LEFT JOIN b ON a.k = b.k "
                    "WHERE a.id <= 30 AND (b.id IS NULL OR b.id > 290)",
        "three": "SELECT a.id, cv FROM a JOIN c ON a.k = c.ck JOIN b ON a.k = b.k "
                 "WHERE cv > 90 AND b.id = 10 AND a.id < 40",
    }
    r = run_sql(cluster, workdir, "push.sql", tables(400, 300) + f"""
CREATE TABLE c (cv BIGINT, ck AS CAST(cv % 7 AS INT))
  WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.cv.kind' = 'sequence', 'fields.cv.start' = '1', 'fields.cv.end' = '100');
SET 'parallelism.default' = '2';
{ddl}""" + "".join(f"INSERT INTO {n} {q};\n" for n, q in queries.items()))
    assert r.returncode == 0, r.stdout + r.stderr
    ids = job_ids(r.stdout)
    assert len(ids) == 3, r.stdout
    a = {i: i % 7 for i in range(1, 401)}
    b = {i: i % 5 * 2 for i in range(1, 301)}
    c = {i: i % 7 for i in range(1, 101)}
    want = {
        "inn": [(x, y) for x in a for y in b
                  if a[x] == b[y] and x % 3 == 0 and y < 50 and x + y > 100],
        "left_pad": [],
        "three": [(x, z) for x in a for z in c for y in b
                  if a[x] == c[z] == b[y] and z > 90 and y == 10 and x < 40],
    }
    for x in range(1, 31):
        matches = [y for y in b if b[y] == a[x]]
        want["left_pad"] += [(x, y) for y in matches if y > 290] if matches else [(x, None)]
    # what each job's joins read: the rows of the filtered inputs only (the
    # padded side of the LEFT JOIN whole)
    reads = {
        "inn": [sum(1 for x in a if x % 3 == 0) + sum(1 for y in b if y < 50)],
        "left_pad": [30 + 300],
        # (a JOIN c) reads a.id < 40 and cv > 90; the join over it, its pairs and b.id = 10
        "three": sorted([sum(1 for x in a if x < 40) + sum(1 for z in c if z > 90),
                         sum(1 for x in a for z in c if x < 40 and z > 90 and a[x] == c[z]) + 1]),
    }
    for (name, out), jid in zip(outs.items(), ids):
        job = finish(cluster, jid)
        assert apply_multiset(committed_files(out)) == bag_of(
            [{"x": x, "y": y} for x, y in want[name]]), name
        joins = sorted(v["metrics"]["read-records"] for v in job["vertices"]
                       if v["name"].startswith("join"))
        assert joins == reads[name], (name, [(v["name"], v["metrics"]["read-records"])
                                             for v in job["vertices"]])
