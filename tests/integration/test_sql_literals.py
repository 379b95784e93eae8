"""The expression language of Flink's types through `sluice sql -f` on a live
cluster (issue 29): DATE / TIMESTAMP(p) / INTERVAL literals (year-month and
day-time), ARRAY[...], MAP[...] and ROW(...) constructors, element and field
access (arr[i], m['k'], r.f, t.r.f.g) in SELECT, WHERE, GROUP BY and join
keys, CASTs to, from and between nested types, and DATE / TIMESTAMP(p) /
TIME arithmetic with intervals. A filesystem JSON table goes through each
expression into a JSON sink; every expectation is computed here with
Python's datetime, calendar and decimal and Flink's documented rules
(1-based elements, NULL out of range, a month added keeps the day or
clamps it to the month's end), independently of Sluice. Refusals are
checked with their line:column."""
import calendar
import collections
import datetime
import decimal
import json
import os

from test_sql import run_sql, job_ids, rows, finish

D = decimal.Decimal

SRC = [
    {"id": 1, "a": [10, 20, 30], "m": {"k": 5, "z": None}, "s": "k",
     "r": {"x": 1, "y": {"z": "p"}}, "d": "2024-01-31", "ts": "2024-01-31 10:00:00.123456",
     "t": "23:30:00", "n": 2},
    {"id": 2, "a": [], "m": {}, "s": "q", "r": {"x": 2, "y": None},
     "d": "2024-02-29", "ts": "2023-03-31 23:59:59.999999", "t": "00:10:00", "n": 0},
    {"id": 3, "a": None, "m": None, "s": None, "r": None, "d": None, "ts": None, "t": None,
     "n": None},
    {"id": 4, "a": [None, -4], "m": {"q": -1}, "s": "q", "r": {"x": None, "y": {"z": "p"}},
     "d": "2023-12-31", "ts": "2024-12-31 00:00:00.5", "t": "12:00:00", "n": 4},
    {"id": 5, "a": [7], "m": {"k": 1, "q": 2}, "s": "k", "r": {"x": 5, "y": {"z": None}},
     "d": "2024-05-31", "ts": "2024-08-31 12:34:56", "t": "00:00:00", "n": -1},
]

DDL = """
CREATE TABLE src (id BIGINT, a ARRAY<INT>, m MAP<STRING, INT>, s STRING,
                  r ROW<x INT, y ROW<z STRING>>, d DATE, ts TIMESTAMP(6), t TIME, n INT)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
"""


# ---- the models ---------------------------------------------------------------

def date(s):
    return None if s is None else datetime.date.fromisoformat(s)


def ts6(s):
    if s is None:
        return None
    return datetime.datetime.strptime(s + ("" if "." in s else ".0"), "%Y-%m-%d %H:%M:%S.%f")


def add_months(x, months):
    """java.time's plusMonths: the day kept, or clamped to the month's last day."""
    if x is None:
        return None
    total = x.year * 12 + (x.month - 1) + months
    y, m = divmod(total, 12)
    return x.replace(year=y, month=m + 1, day=min(x.day, calendar.monthrange(y, m + 1)[1]))


def ts_text(x, p):
    """CAST(TIMESTAMP(p) AS STRING): exactly p fraction digits."""
    if x is None:
        return None
    base = x.strftime("%Y-%m-%d %H:%M:%S")
    return base + ("." + "%06d" % x.microsecond + "000")[:p + 1] if p else base


def elem(xs, i):
    if xs is None or i is None or not 1 <= i <= len(xs):
        return None
    return xs[i - 1]


def text(v):
    """Flink's CAST(... AS STRING) of a nested value."""
    if v is None:
        return "NULL"
    if isinstance(v, list):
        return "[" + ", ".join(text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{text(k)}={text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, tuple):
        return "(" + ", ".join(text(x) for x in v) + ")"
    return str(v)


def nn(f):
    """A model of a value built from a nullable input: NULL in, NULL out."""
    return lambda x: None if x is None else f(x)


def time_plus(t, sign, r):
    """Flink's TIME +/- a day-time interval of r ms: ((t + day) +/- (r rem day)) mod day,
    rem taking the dividend's sign (Java's %)."""
    if t is None:
        return None
    h, mi, s = map(int, t.split(":"))
    day = 86400000
    rem = abs(r) % day * (1 if r >= 0 else -1)
    ms = ((h * 3600 + mi * 60 + s) * 1000 + day + sign * rem) % day
    return "%02d:%02d:%02d" % (ms // 3600000, ms // 60000 % 60, ms // 1000 % 60)


IV_DT = (3 * 86400 + 4 * 3600 + 5 * 60 + 6) * 1000 + 789  # INTERVAL '3 04:05:06.789' DAY TO SECOND

COLS = [  # (sink column, type, SQL expression, model of a source row)
    ("a1", "INT", "a[1]", lambda r: elem(r["a"], 1)),
    ("an", "INT", "a[n]", lambda r: elem(r["a"], r["n"])),
    ("a9", "INT", "a[9]", lambda r: elem(r["a"], 9)),
    ("mk", "INT", "m['k']", lambda r: None if r["m"] is None else r["m"].get("k")),
    ("ms", "INT", "m[s]", lambda r: None if r["m"] is None or r["s"] is None else r["m"].get(r["s"])),
    ("rx", "INT", "r.x", lambda r: None if r["r"] is None else r["r"]["x"]),
    ("ryz", "STRING", "r.y.z", lambda r: None if r["r"] is None or r["r"]["y"] is None
     else r["r"]["y"]["z"]),
    ("tryz", "STRING", "src.r.y.z", lambda r: None if r["r"] is None or r["r"]["y"] is None
     else r["r"]["y"]["z"]),
    ("arr", "ARRAY<INT>", "ARRAY[n, n + 1, NULL]",
     lambda r: [r["n"], None if r["n"] is None else r["n"] + 1, None]),
    ("arr2", "ARRAY<ARRAY<INT>>", "ARRAY[a, ARRAY[n]]", lambda r: [r["a"], [r["n"]]]),
    ("mp", "MAP<STRING, INT>", "MAP['a', n, 'b', 2, 'a', 3]", lambda r: {"a": 3, "b": 2}),
    ("mp2", "MAP<STRING, BIGINT>", "MAP[COALESCE(s, '-'), id]",
     lambda r: {"-" if r["s"] is None else r["s"]: r["id"]}),
    ("rw", "ROW<f0 INT, f1 STRING>", "ROW(n, s)", lambda r: {"f0": r["n"], "f1": r["s"]}),
    ("rwx", "STRING", "ROW(n, s).EXPR$1", lambda r: r["s"]),
    ("irw", "STRING", "CAST((n, s, (id, 'x')) AS STRING)",
     lambda r: text((r["n"], r["s"], (r["id"], "x")))),
    ("el", "INT", "ARRAY[10, 20, 30][n]", lambda r: elem([10, 20, 30], r["n"])),
    ("ml", "INT", "MAP['k', 1, 'q', 2][s]", lambda r: {"k": 1, "q": 2}.get(r["s"])),
    ("cas", "STRING", "CAST(a AS STRING)", lambda r: None if r["a"] is None else text(r["a"])),
    ("cms", "STRING", "CAST(m AS STRING)", lambda r: None if r["m"] is None else text(r["m"])),
    ("crs", "STRING", "CAST(r AS STRING)",
     lambda r: None if r["r"] is None else text((r["r"]["x"], None if r["r"]["y"] is None
                                                 else (r["r"]["y"]["z"],)))),
    ("cab", "ARRAY<BIGINT>", "CAST(a AS ARRAY<BIGINT>)", lambda r: r["a"]),
    ("casd", "ARRAY<DECIMAL(6, 2)>", "CAST(a AS ARRAY<DECIMAL(6, 2)>)",
     lambda r: None if r["a"] is None else [None if x is None else D(x).quantize(D("0.01"))
                                              for x in r["a"]]),
    ("cass", "ARRAY<STRING>", "CAST(a AS ARRAY<STRING>)",
     lambda r: None if r["a"] is None else [None if x is None else str(x) for x in r["a"]]),
    ("dl", "DATE", "DATE '2024-01-31'", lambda r: "2024-01-31"),
    ("dpm", "STRING", "CAST(d + INTERVAL '1' MONTH AS STRING)",
     lambda r: nn(lambda x: add_months(date(x), 1).isoformat())(r["d"])),
    ("dmy", "STRING", "CAST(d - INTERVAL '1-2' YEAR TO MONTH AS STRING)",
     lambda r: nn(lambda x: add_months(date(x), -14).isoformat())(r["d"])),
    ("dpd", "DATE", "d + INTERVAL '3 04:05:06.789' DAY TO SECOND",
     lambda r: nn(lambda x: (date(x) + datetime.timedelta(days=3)).isoformat())(r["d"])),
    ("idp", "DATE", "INTERVAL '2' YEAR + d",
     lambda r: nn(lambda x: add_months(date(x), 24).isoformat())(r["d"])),
    ("tsd", "STRING", "CAST(ts + INTERVAL '3 04:05:06.789' DAY TO SECOND AS STRING)",
     lambda r: ts_text(None if r["ts"] is None
                       else ts6(r["ts"]) + datetime.timedelta(milliseconds=IV_DT), 6)),
    ("tsm", "STRING", "CAST(ts - INTERVAL '1' MONTH AS STRING)",
     lambda r: ts_text(add_months(ts6(r["ts"]), -1), 6)),
    ("tsy", "STRING", "CAST(ts + INTERVAL '10' MINUTE + INTERVAL '1' YEAR AS STRING)",
     lambda r: ts_text(add_months(None if r["ts"] is None
                                  else ts6(r["ts"]) + datetime.timedelta(minutes=10), 12), 6)),
    ("tl9", "STRING",
     "CAST(TIMESTAMP '2024-01-31 10:00:00.123456789' + INTERVAL '1' MONTH AS STRING)",
     lambda r: "2024-02-29 10:00:00.123456789"),
    ("tl0", "STRING", "CAST(TIMESTAMP '2024-01-31 10:00:00' AS STRING)",
     lambda r: "2024-01-31 10:00:00"),
    ("tm", "STRING", "CAST(t + INTERVAL '45' MINUTE AS STRING)",
     lambda r: time_plus(r["t"], 1, 45 * 60000)),
    ("tmd", "STRING", "CAST(t - INTERVAL '1 00:20:00' DAY TO SECOND AS STRING)",
     lambda r: time_plus(r["t"], -1, 86400000 + 20 * 60000)),
    ("ivs", "STRING", "CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING)", lambda r: "+1-02"),
    ("ivm", "STRING", "CAST(INTERVAL '10' MINUTE AS STRING)", lambda r: "+0 00:10:00.000"),
    ("cmp", "BOOLEAN", "d < ts",
     lambda r: None if r["d"] is None else
     datetime.datetime.combine(date(r["d"]), datetime.time()) < ts6(r["ts"])),
    ("cmp2", "BOOLEAN", "ts > TIMESTAMP '2024-01-31 10:00:00.123455999'",
     lambda r: None if r["ts"] is None else ts6(r["ts"]) > datetime.datetime(2024, 1, 31, 10, 0, 0, 123455)),
]


def write_src(workdir, recs):
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return src


def test_literals_constructors_access_and_date_arithmetic(cluster, workdir):
    cluster.add_tm(slots=1)
    src = write_src(workdir, SRC)
    out = os.path.join(workdir, "out")
    cols = ", ".join(f"{c} {t}" for c, t, _, _ in COLS)
    exprs = ", ".join(e for _, _, e, _ in COLS)
    r = run_sql(cluster, workdir, "lit.sql", DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, {cols})
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, {exprs} FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout + r.stderr
    finish(cluster, jids[0])
    got = {g["id"]: g for g in rows(out)}
    assert sorted(got) == [s["id"] for s in SRC]
    for s in SRC:
        g = got[s["id"]]
        g.pop("op", None)
        for c, _, _, model in COLS:
            want = model(s)
            have = g.get(c)
            if isinstance(want, list) and want and isinstance(want[0], D):
                have = [None if x is None else D(str(x)).quantize(D("0.01")) for x in have]
            assert have == want, (s["id"], c, have, want)


def test_access_in_where_group_by_and_join_keys(cluster, workdir):
    cluster.add_tm(slots=1)
    src = write_src(workdir, SRC)
    out = os.path.join(workdir, "out")
    out2 = os.path.join(workdir, "out2")
    out3 = os.path.join(workdir, "out3")
    out4 = os.path.join(workdir, "out4")
    r = run_sql(cluster, workdir, "keys.sql", DDL.format(src=src) + f"""
CREATE TABLE byz (z STRING, c BIGINT, PRIMARY KEY (z) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
CREATE TABLE joined (id BIGINT, id2 BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'file://{out2}', 'format' = 'json');
CREATE TABLE joined2 (id BIGINT, z STRING, a1 INT)
WITH ('connector' = 'filesystem', 'path' = 'file://{out3}', 'format' = 'json');
CREATE TABLE joined3 (id BIGINT, z STRING, a1 INT)
WITH ('connector' = 'filesystem', 'path' = 'file://{out4}', 'format' = 'json');
INSERT INTO byz SELECT r.y.z, COUNT(*) FROM src WHERE a[1] IS NULL OR a[1] > 5 GROUP BY r.y.z;
INSERT INTO joined SELECT x.id, y.id
  FROM (SELECT id, src.r.x AS k, d FROM src) AS x JOIN (SELECT id, a[2] AS k FROM src) AS y
  ON x.k = y.k
  WHERE x.d + INTERVAL '1' MONTH > DATE '2024-02-01';
INSERT INTO joined2 SELECT x.id, x.r.y.z, y.a[1] FROM src AS x JOIN src AS y ON x.id = y.id
  WHERE x.r.x > 1;
INSERT INTO joined3 SELECT x.id, r.y.z, a[1] FROM src AS x JOIN (SELECT id AS id2 FROM src) AS y
  ON x.id = y.id2 WHERE r.x > 1;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)

    def z_of(s):
        return None if s["r"] is None or s["r"]["y"] is None else s["r"]["y"]["z"]

    keep = [s for s in SRC if elem(s["a"], 1) is None or elem(s["a"], 1) > 5]
    want = collections.Counter(z_of(s) for s in keep)
    state = {}
    for g in rows(out):
        op = g.pop("op", "+I")
        if op in ("+I", "+U"):
            state[g["z"]] = g["c"]
        else:
            state.pop(g["z"], None)
    assert state == dict(want), (state, want)

    pairs = sorted((x["id"], y["id"]) for x in SRC for y in SRC
                   if x["r"] is not None and x["r"]["x"] is not None
                   and elem(y["a"], 2) == x["r"]["x"]
                   and x["d"] is not None
                   and add_months(date(x["d"]), 1) > datetime.date(2024, 2, 1))
    got = sorted((g["id"], g["id2"]) for g in rows(out2))
    assert got == pairs
    # qualified access through a join (t.r.f.g, t.arr[i]) in the SELECT and the WHERE
    want3 = sorted((s["id"], z_of(s), elem(s["a"], 1)) for s in SRC
                   if s["r"] is not None and s["r"]["x"] is not None and s["r"]["x"] > 1)
    got3 = sorted((g["id"], g["z"], g["a1"]) for g in rows(out3))
    assert got3 == want3
    # unqualified r.f over a join: r is a ROW column of one side
    got4 = sorted((g["id"], g["z"], g["a1"]) for g in rows(out4))
    assert got4 == want3


def test_values_of_nested_columns(cluster, workdir):
    """VALUES whose columns are MAP, ARRAY and ROW values (each column's type is
    the first row's; a later row of another element type is cast to it)."""
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "values.sql", f"""
CREATE TABLE sink (k INT, m MAP<STRING, STRING>, a ARRAY<BIGINT>, r ROW<x INT, y STRING>)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT * FROM (VALUES
  (1, STR_TO_MAP('a=1,b=2'), ARRAY[1, 2], ROW(7, 'p')),
  (2, STR_TO_MAP('c=3'), ARRAY[CAST(NULL AS INT), 5], ROW(8, 'q'))) AS t(k, m, a, r);
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout + r.stderr
    finish(cluster, jids[0])
    got = sorted((g["k"], g["m"], g["a"], g["r"]) for g in rows(out))
    assert got == [(1, {"a": "1", "b": "2"}, [1, 2], {"x": 7, "y": "p"}),
                   (2, {"c": "3"}, [None, 5], {"x": 8, "y": "q"})], got


def test_refusals_name_line_and_column(cluster, workdir):
    cluster.add_tm(slots=1)
    src = write_src(workdir, SRC[:1])
    out = os.path.join(workdir, "out")
    ddl = DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, v STRING)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
"""
    line = ddl.count("\n") + 1
    cases = [
        ("INSERT INTO sink SELECT id, CAST(ARRAY[1, 'x'] AS STRING) FROM src;", "ARRAY[",
         "ARRAY: INT and CHAR(1) NOT NULL have no common type"),
        ("INSERT INTO sink SELECT id, CAST(MAP['a'] AS STRING) FROM src;", "MAP[",
         "MAP needs keys and values in pairs, got 1 arguments"),
        ("INSERT INTO sink SELECT id, CAST(a['x'] AS STRING) FROM src;", "['x']",
         "an ARRAY index must be an integer, got CHAR(1) NOT NULL"),
        ("INSERT INTO sink SELECT id, CAST(m[1] AS STRING) FROM src;", "[1]",
         "MAP<STRING, INT> has keys of type STRING, not INT"),
        ("INSERT INTO sink SELECT id, r.w FROM src;", "w FROM",
         "unknown field 'w' of ROW<`x` INT, `y` ROW<`z` STRING>>"),
        ("INSERT INTO sink SELECT id, CAST(s[1] AS STRING) FROM src;", "[1]",
         "'[...]' needs an ARRAY or a MAP, got STRING"),
        ("INSERT INTO sink SELECT id, CAST(CAST(a AS INT) AS STRING) FROM src;", "CAST(a",
         "cannot CAST ARRAY<INT> to INT"),
        ("INSERT INTO sink SELECT id, CAST(d + INTERVAL '1' HOUR AS STRING) FROM src;", "+ INTERVAL",
         "cannot apply '+' to DATE and INTERVAL HOUR"),
        ("INSERT INTO sink SELECT id, CAST(t + INTERVAL '1' YEAR AS STRING) FROM src;", "+ INTERVAL",
         "cannot apply '+' to TIME(0) and INTERVAL YEAR"),
        ("INSERT INTO sink SELECT id, CAST(INTERVAL '1-12' YEAR TO MONTH AS STRING) FROM src;",
         "'1-12'", "invalid INTERVAL literal '1-12': MONTH must be 0 to 11"),
        ("INSERT INTO sink SELECT id, CAST(DATE '2024-02-30' AS STRING) FROM src;", "'2024-02-30'",
         "invalid DATE literal '2024-02-30'"),
        ("INSERT INTO sink SELECT id, CAST(TIMESTAMP '2024-01-31 25:00:00' AS STRING) FROM src;",
         "'2024-01-31 25", "invalid TIMESTAMP literal '2024-01-31 25:00:00'"),
        ("INSERT INTO sink SELECT id, CAST(ARRAY[NULL] AS STRING) FROM src;", "ARRAY[",
         "ARRAY of NULLs only: Illegal use of 'NULL'"),
    ]
    for stmt, at, msg in cases:
        r = run_sql(cluster, workdir, "bad.sql", ddl + stmt + "\n")
        assert r.returncode != 0, stmt
        where = f"line {line}, column {stmt.index(at) + 1}: "
        assert where + msg in r.stdout + r.stderr, (stmt, where + msg, r.stdout + r.stderr)
