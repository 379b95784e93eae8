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
