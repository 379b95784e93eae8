"""datagen for INTERVAL YEAR TO MONTH and INTERVAL DAY TO SECOND columns
(issue 29), through `sluice sql -f` on a live cluster, as Flink 2.3's
datagen makes them (probed through the Table API, since Flink's DDL cannot
declare an interval column): random only -- a year-month interval as a
number of months, by default 0..120000, a day-time one as milliseconds, by
default the whole BIGINT range, `min`/`max` in those units, `null-rate`;
a sequence and `length` are refused. The rows (the json format writes an
interval as its number of months / milliseconds) are checked against the
bounds."""
import collections
import json
import os

from test_sql import finish, job_ids, run_sql
from test_sql_types import rows_text

N = 3000

DDL = f"""
CREATE TABLE g (
    id BIGINT,
    ym INTERVAL YEAR TO MONTH,
    ds INTERVAL DAY TO SECOND(3),
    ymd INTERVAL YEAR(4) TO MONTH,
    dsd INTERVAL DAY TO SECOND(3),
    arr ARRAY<INTERVAL YEAR TO MONTH>,
    r ROW<d INTERVAL DAY TO SECOND(3)>
) WITH ('connector' = 'datagen', 'seed' = '11', 'rows-per-second' = '1000000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{N}',
    'fields.ym.min' = '10', 'fields.ym.max' = '12', 'fields.ym.null-rate' = '0.25',
    'fields.ds.min' = '-5', 'fields.ds.max' = '2000',
    'fields.arr.length' = '2', 'fields.arr.element.min' = '-3', 'fields.arr.element.max' = '-1',
    'fields.r.d.min' = '86400000', 'fields.r.d.max' = '86400002');
"""

OUT = """
CREATE TABLE o (id BIGINT, ym INTERVAL YEAR TO MONTH, ds INTERVAL DAY TO SECOND(3),
    ymd INTERVAL YEAR(4) TO MONTH, dsd INTERVAL DAY TO SECOND(3),
    arr ARRAY<INTERVAL YEAR TO MONTH>, r ROW<d INTERVAL DAY TO SECOND(3)>)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO o SELECT * FROM g;
"""


def test_datagen_random_intervals(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "g.sql", DDL + OUT.format(out=out))
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    rows = [json.loads(ln) for ln in rows_text(out)]
    assert sorted(g["id"] for g in rows) == list(range(1, N + 1))
    ym = collections.Counter(g["ym"] for g in rows)
    assert set(ym) == {None, 10, 11, 12}, ym  # every value of min..max, and NULLs
    assert 0.20 * N < ym[None] < 0.30 * N, ym
    assert {g["ds"] for g in rows} <= set(range(-5, 2001))
    assert len({g["ds"] for g in rows}) > 1000  # spread over the range
    # Flink's defaults: months 0..120000; milliseconds over the whole BIGINT range
    assert all(0 <= g["ymd"] <= 120000 for g in rows)
    assert max(g["ymd"] for g in rows) > 100000 and min(g["ymd"] for g in rows) < 20000
    assert any(g["dsd"] < -2**62 for g in rows) and any(g["dsd"] > 2**62 for g in rows)
    assert all(len(g["arr"]) == 2 and set(g["arr"]) <= {-3, -2, -1} for g in rows)
    assert {g["r"]["d"] for g in rows} == {86400000, 86400001, 86400002}
    # the json format reads the numbers back as the intervals they were
    back = os.path.join(workdir, "back")
    r = run_sql(cluster, workdir, "b.sql", OUT.format(out=out).split("INSERT")[0] +
                OUT.format(out=back).split("INSERT")[0].replace("TABLE o ", "TABLE b ") +
                "INSERT INTO b SELECT * FROM o;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    key = lambda g: g["id"]  # noqa: E731
    assert sorted((json.loads(ln) for ln in rows_text(back)), key=key) == sorted(rows, key=key)


def refused(cluster, workdir, opts, col="ym INTERVAL YEAR TO MONTH"):
    extra = "".join(f", '{k}' = '{v}'" for k, v in opts.items())
    r = run_sql(cluster, workdir, "bad.sql", f"""
CREATE TABLE g ({col}) WITH ('connector' = 'datagen', 'number-of-rows' = '3'{extra});
CREATE TABLE o ({col}) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT * FROM g;
""")
    assert r.returncode != 0, r.stdout
    return r.stdout + r.stderr


def test_datagen_interval_refusals(cluster, workdir):
    cluster.add_tm(slots=1)
    # Flink: "Unsupported type: INTERVAL YEAR(2) TO MONTH" for a sequence
    out = refused(cluster, workdir, {"fields.ym.kind": "sequence", "fields.ym.start": "1",
                                     "fields.ym.end": "4"})
    assert "a sequence needs a number or string column, 'ym' is INTERVAL YEAR(2) TO MONTH" \
        in out, out
    out = refused(cluster, workdir, {"fields.ym.length": "3"})
    assert "option 'fields.ym.length' does not apply to INTERVAL YEAR(2) TO MONTH column 'ym'" \
        in out, out
    out = refused(cluster, workdir, {"fields.ym.max": "3000000000"})
    assert "option 'fields.ym.max': 3000000000 does not fit an INT column" in out, out
    out = refused(cluster, workdir, {"fields.ds.min": "5", "fields.ds.max": "4"},
                  col="ds INTERVAL DAY TO SECOND(3)")
    assert "field 'ds': min 5 is above max 4" in out, out
