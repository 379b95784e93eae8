"""Values of every type beyond the original seven as GROUP BY, join and
PARTITION BY keys, through a hash exchange, stop-with-savepoint and a
restore at another parallelism (2 -> 3, 3 -> 1) on both state backends.

A seeded datagen table makes the rows: DECIMAL, DATE, TIME, TIMESTAMP(9),
TINYINT, SMALLINT, FLOAT, CHAR, BINARY, ARRAY, MAP and a ROW nested two
levels deep, each drawn from a small domain so that keys repeat across the
savepoint. A first job copies the table, as it is generated at the first
run's parallelism, into a JSON file; the model below groups, joins and
ranks those rows in Python. The job under test runs the same table through
six INSERTs in one statement set, is stopped with a savepoint mid-stream
and restored at another parallelism; the changelog of both runs (each -U/-D
checked against the row it retracts) must end at the model's result. A
nested ROW key that hashed to another key group on another subtask or
backend would show as a key twice or a retraction of a row never held."""
import collections
import decimal
import json
import os

import pytest

from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql

N = 6000


def src_ddl(rate):
    return f"""
CREATE TABLE src (
    id  BIGINT,
    d   DECIMAL(10, 2),
    dt  DATE,
    tm  TIME(0),
    ts  TIMESTAMP(9),
    ti  TINYINT,
    si  SMALLINT,
    f   FLOAT,
    c   CHAR(1),
    b   BINARY(1),
    arr ARRAY<INT>,
    m   MAP<TINYINT, BOOLEAN>,
    r   ROW<a INT, n ROW<c CHAR(1), flags ARRAY<BOOLEAN>>>
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}', 'seed' = '29',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{N}',
    'fields.d.min' = '0', 'fields.d.max' = '0.05',
    'fields.dt.min' = '2026-02-27', 'fields.dt.max' = '2026-03-01',
    'fields.tm.min' = '10:00:00', 'fields.tm.max' = '10:00:03',
    'fields.ts.min' = '2026-01-01 00:00:00', 'fields.ts.max' = '2026-01-01 00:00:00.002',
    'fields.ti.min' = '-1', 'fields.ti.max' = '1',
    'fields.si.min' = '32766', 'fields.si.max' = '32767',
    'fields.f.min' = '1', 'fields.f.max' = '1.0000002',
    'fields.arr.length' = '2', 'fields.arr.element.min' = '0', 'fields.arr.element.max' = '1',
    'fields.arr.element.null-rate' = '0.3',
    'fields.m.length' = '2', 'fields.m.key.min' = '0', 'fields.m.key.max' = '1',
    'fields.r.a.min' = '0', 'fields.r.a.max' = '1', 'fields.r.n.flags.length' = '1',
    'fields.r.n.flags.element.null-rate' = '0.5', 'fields.r.n.null-rate' = '0.1');
"""


# (sink, its columns, the key columns, the query)
QUERIES = [
    ("g1", "d DECIMAL(10, 2), dt DATE, tm TIME(0), ti TINYINT, cnt BIGINT, total BIGINT",
     ["d", "dt", "tm", "ti"],
     "SELECT d, dt, tm, ti, COUNT(*), SUM(id) FROM src GROUP BY d, dt, tm, ti"),
    ("g2", "si SMALLINT, f FLOAT, c CHAR(1), cnt BIGINT, total BIGINT", ["si", "f", "c"],
     "SELECT si, f, c, COUNT(*), SUM(id) FROM src GROUP BY si, f, c"),
    ("g3", "b BINARY(1), cnt BIGINT, total BIGINT", ["b"],
     "SELECT b, COUNT(*), SUM(id) FROM src GROUP BY b"),
    ("g4", "arr ARRAY<INT>, m MAP<TINYINT, BOOLEAN>, cnt BIGINT, total BIGINT", ["arr", "m"],
     "SELECT arr, m, COUNT(*), SUM(id) FROM src GROUP BY arr, m"),
    ("top", "r ROW<a INT, n ROW<c CHAR(1), flags ARRAY<BOOLEAN>>>, id BIGINT, rn BIGINT",
     ["r", "rn"],
     "SELECT r, id, rn FROM (SELECT r, id, ROW_NUMBER() OVER (PARTITION BY r ORDER BY id) AS rn "
     "FROM src) WHERE rn <= 2"),
    ("j", "ts TIMESTAMP(9), r ROW<a INT, n ROW<c CHAR(1), flags ARRAY<BOOLEAN>>>, "
          "lid BIGINT, rid BIGINT", None,
     "SELECT x.ts, x.r, x.id, y.id FROM src AS x JOIN src AS y ON x.ts = y.ts AND x.r = y.r "
     "WHERE x.id <= y.id"),
]


def sinks_ddl(out):
    return "".join(
        f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
        f"'path' = '{os.path.join(out, name)}', 'format' = 'json');\n"
        for name, cols, _, _ in QUERIES)


def job_sql(out, p, extra=""):
    inserts = "".join(f"INSERT INTO {name} {q};\n" for name, _, _, q in QUERIES)
    return (src_ddl(rate=1000) + sinks_ddl(out) + f"SET 'parallelism.default' = '{p}';\n" +
            extra + "EXECUTE STATEMENT SET BEGIN\n" + inserts + "END;\n")


def load(line):
    """A JSON row, its numbers with fractions as exact decimals."""
    return json.loads(line, parse_float=decimal.Decimal)


def apply(paths, key_of):
    """Apply a changelog (json part files, in order) to {key: row}; a +I/+U
    must find its key empty, a -U/-D must retract exactly the row held."""
    table = {}
    for path in paths:
        with open(path) as fh:
            for n, line in enumerate(fh, 1):
                r = load(line)
                op = r.pop("op", "+I")
                key = key_of(r)
                where = f"{os.path.basename(path)}:{n}"
                if op in ("+I", "+U"):
                    assert key not in table, f"{where}: {op} {r} for {key} holding {table[key]}"
                    table[key] = r
                else:
                    assert table.get(key) == r, f"{where}: {op} {r} for {key} holding {table.get(key)}"
                    del table[key]
    return table


def k(v):
    """A JSON value as a hashable key (the order of a MAP's entries counts, as
    in the binary form Flink and Sluice key by)."""
    return json.dumps(v, default=str)


def model(src_rows):
    """Every sink's final table, {key: row}, from the copied rows."""
    want = {}
    for name, _, keys, _ in QUERIES[:4]:
        acc = collections.defaultdict(lambda: [0, 0])
        for r in src_rows:
            a = acc[tuple(k(r[c]) for c in keys)]
            a[0] += 1
            a[1] += r["id"]
        want[name] = {key: (cnt, total) for key, (cnt, total) in acc.items()}
    per = collections.defaultdict(list)
    for r in src_rows:
        per[k(r["r"])].append(r["id"])
    want["top"] = {(key, rn): i for key, ids in per.items()
                   for rn, i in enumerate(sorted(ids)[:2], 1)}
    by = collections.defaultdict(list)
    for r in src_rows:
        by[(r["ts"], k(r["r"]))].append(r["id"])
    want["j"] = collections.Counter((ts, rk, a, b) for (ts, rk), ids in by.items()
                                    for a in ids for b in ids if a <= b)
    return want


def files(out, name, first):
    """A sink's part files: those of the first run (`first`, all of them when
    None), then the second run's."""
    now = committed_files(os.path.join(out, name))
    if first is None:
        return now
    return [f for f in now if f in first] + [f for f in now if f not in first]


def final_tables(out, first=None):
    """Each sink's changelog (the first run's files, then the second's) applied."""
    got = {}
    for name, _, keys, _ in QUERIES[:4]:
        table = apply(files(out, name, first), lambda r, keys=keys: tuple(k(r[c]) for c in keys))
        got[name] = {key: (r["cnt"], r["total"]) for key, r in table.items()}
    table = apply(files(out, "top", first), lambda r: (k(r["r"]), r["rn"]))
    got["top"] = {key: r["id"] for key, r in table.items()}
    j = collections.Counter()
    for path in files(out, "j", first):
        with open(path) as fh:
            for line in fh:
                r = load(line)
                assert r.pop("op", "+I") == "+I", r
                j[(r["ts"], k(r["r"]), r["lid"], r["rid"])] += 1
    got["j"] = j
    return got


def copy_source(c, workdir, p):
    """The table's rows as datagen makes them at parallelism p."""
    cap = os.path.join(workdir, "copy")
    cols = src_ddl(1).split("(", 1)[1].split(") WITH")[0]
    r = run_sql(c, workdir, "copy.sql", src_ddl(rate=100000) + f"""
CREATE TABLE cap ({cols}) WITH ('connector' = 'filesystem', 'path' = '{cap}', 'format' = 'json');
SET 'parallelism.default' = '{p}';
INSERT INTO cap SELECT * FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(c, job_ids(r.stdout)[0])
    rows = []
    for path in committed_files(cap):
        with open(path) as fh:
            rows += [load(line) for line in fh]
    for r in rows:
        r.pop("op", None)
    assert sorted(r["id"] for r in rows) == list(range(1, N + 1))
    return rows


@pytest.mark.parametrize("p1,p2,backend", [(2, 3, "hashmap"), (2, 3, "rocksdb"),
                                            (3, 1, "hashmap"), (3, 1, "rocksdb")])
def test_keys_of_every_type_across_savepoint_and_rescale(make_cluster, workdir, p1, p2, backend):
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=3, extra={"state.backend.type": backend})
    c.add_tm(slots=3, extra={"state.backend.type": backend})
    src_rows = copy_source(c, workdir, p1)
    want = model(src_rows)
    # the domains are small enough that keys repeat
    assert len(want["g1"]) < 300 and len(want["g4"]) < 150 and len(want["top"]) < 250

    out = os.path.join(workdir, "out")
    r = run_sql(c, workdir, "run1.sql", job_sql(out, p1))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    sp = c.stop_after_progress(jid, "src", N // 4, os.path.join(workdir, "sp"), timeout=60)
    run1 = set(f for name, _, _, _ in QUERIES for f in committed_files(os.path.join(out, name)))
    mid = final_tables(out)
    assert mid["g1"] != want["g1"]  # stopped mid-stream

    r = run_sql(c, workdir, "run2.sql", job_sql(
        out, p2, extra=f"SET 'execution.savepoint.path' = '{sp}';\n"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    job2 = finish(c, jid2)
    assert {v["parallelism"] for v in job2["vertices"]} == {p2}
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    got = final_tables(out, run1)
    for name in want:
        assert got[name] == want[name], name
