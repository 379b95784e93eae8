"""Comparisons of nested values, IEEE division, datetime differences and the
clock functions' types through `sluice sql -f` on a live cluster (issue 29).

A filesystem JSON table goes through each expression into a JSON sink; the
expectations are computed here by Python models of Flink 2.3's behaviour
as probed on Flink itself (an ARRAY is equal to another of the same length
whose elements are all equal and non-NULL -- a NULL element makes them
unequal; a ROW field by field, two NULL fields equal; a MAP entry by entry
in any order), independently of Sluice. Refusals are checked with their
line:column."""
import calendar
import datetime
import json
import math
import os

from test_sql import run_sql, job_ids, rows, finish, ms

SRC = [
    {"id": 1, "a": [1, None], "b": [1, None], "r": {"x": 1, "y": None}, "s": {"x": 1, "y": None},
     "m": {"k": 1, "z": None}, "n": {"z": None, "k": 1}, "aa": [[1, 2]], "bb": [[1, 2]],
     "d": 1.5, "z": 0.0, "f": 2.5, "dd": "2024-03-01", "de": "2024-02-01",
     "t1": "2024-03-01 10:00:00.5", "t2": "2024-02-01 00:00:00"},
    {"id": 2, "a": [1, 2], "b": [1, 3], "r": {"x": 1, "y": 2}, "s": {"x": 1, "y": 3},
     "m": {"k": 1}, "n": {"k": 2}, "aa": [[1, None]], "bb": [[1, None]],
     "d": -1.5, "z": 0.0, "f": 0.0, "dd": "2024-01-01", "de": "2024-03-01",
     "t1": "2024-02-01 00:00:00", "t2": "2024-03-01 10:00:00.5"},
    {"id": 3, "a": None, "b": [1], "r": None, "s": {"x": 1, "y": 2}, "m": None, "n": {},
     "aa": [], "bb": [[]], "d": 0.0, "z": 0.0, "f": 1.0, "dd": None, "de": "2024-01-01",
     "t1": None, "t2": None},
    {"id": 4, "a": [7, 8], "b": [7, 8], "r": {"x": None, "y": 5}, "s": {"x": 2, "y": 5},
     "m": {"p": 1, "q": 2}, "n": {"q": 2, "p": 1}, "aa": [[3], [4, 5]], "bb": [[3], [4, 5]],
     "d": 2.0, "z": 4.0, "f": -3.0, "dd": "2024-03-30", "de": "2024-01-31",
     "t1": "2024-03-31 00:00:00", "t2": "2024-01-31 00:00:01"},
]

DDL = """
CREATE TABLE src (id BIGINT, a ARRAY<INT>, b ARRAY<INT>, r ROW<x INT, y INT>,
                  s ROW<x INT, y INT>, m MAP<STRING, INT>, n MAP<STRING, INT>,
                  aa ARRAY<ARRAY<INT>>, bb ARRAY<ARRAY<INT>>, d DOUBLE, z DOUBLE, f FLOAT,
                  dd DATE, de DATE, t1 TIMESTAMP(3), t2 TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
"""


# ---- the models ---------------------------------------------------------------

def arr_eq(x, y):
    """Flink's `=` on two non-NULL arrays: same length, every element non-NULL and equal."""
    if len(x) != len(y):
        return False
    for u, v in zip(x, y):
        if u is None or v is None:
            return False
        if isinstance(u, list):
            if not arr_eq(u, v):
                return False
        elif u != v:
            return False
    return True


def row_eq(x, y):
    """Flink's `=` on two non-NULL rows: field by field, two NULL fields equal."""
    return all(x[k] == y[k] for k in x)


def map_eq(x, y):
    return x == y  # entries in any order, NULL values equal


def eq3(f):
    """NULL in, NULL out; else the model."""
    return lambda x, y: None if x is None or y is None else f(x, y)


def not3(v):
    return None if v is None else not v


def in3(x, items, f):
    """x IN (items): TRUE on a match, NULL when x or an item is NULL and none matched."""
    if x is None:
        return None
    unknown = False
    for it in items:
        if it is None:
            unknown = True
        elif f(x, it):
            return True
    return None if unknown else False


def distinct(x, y, f):
    if x is None or y is None:
        return (x is None) != (y is None)
    return not f(x, y)


def fdiv(x, y, flt=False):
    """Java's float / double division: an infinity or NaN by zero; as CAST(... AS STRING)."""
    if y == 0:
        q = math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * (
            1 if math.copysign(1, y) > 0 else -1)
    else:
        q = x / y
    if math.isnan(q):
        return "NaN"
    if math.isinf(q):
        return "Infinity" if q > 0 else "-Infinity"
    return repr(q)


A1 = [1, None]
COLS = [  # (sink column, type, SQL expression, model of a source row)
    ("ae", "BOOLEAN", "a = b", lambda r: eq3(arr_eq)(r["a"], r["b"])),
    ("an", "BOOLEAN", "a <> b", lambda r: not3(eq3(arr_eq)(r["a"], r["b"]))),
    ("ad", "BOOLEAN", "a IS DISTINCT FROM b", lambda r: distinct(r["a"], r["b"], arr_eq)),
    ("and", "BOOLEAN", "a IS NOT DISTINCT FROM b", lambda r: not distinct(r["a"], r["b"], arr_eq)),
    ("ai", "BOOLEAN", "a IN (b, ARRAY[1, 2])", lambda r: in3(r["a"], [r["b"], [1, 2]], arr_eq)),
    ("ani", "BOOLEAN", "a NOT IN (ARRAY[7, 8])", lambda r: not3(in3(r["a"], [[7, 8]], arr_eq))),
    ("awide", "BOOLEAN", "a = ARRAY[CAST(1 AS BIGINT), 2]",
     lambda r: eq3(arr_eq)(r["a"], [1, 2])),
    ("anul", "BOOLEAN", "a = ARRAY[1, CAST(NULL AS INT)]", lambda r: eq3(arr_eq)(r["a"], A1)),
    ("aae", "BOOLEAN", "aa = bb", lambda r: eq3(arr_eq)(r["aa"], r["bb"])),
    ("re", "BOOLEAN", "r = s", lambda r: eq3(row_eq)(r["r"], r["s"])),
    ("rn", "BOOLEAN", "r <> s", lambda r: not3(eq3(row_eq)(r["r"], r["s"]))),
    ("rd", "BOOLEAN", "r IS DISTINCT FROM s", lambda r: distinct(r["r"], r["s"], row_eq)),
    ("ri", "BOOLEAN", "r IN (s)", lambda r: in3(r["r"], [r["s"]], row_eq)),
    ("rc", "BOOLEAN", "r = ROW(1, CAST(NULL AS INT))",
     lambda r: eq3(row_eq)(r["r"], {"x": 1, "y": None})),
    ("me", "BOOLEAN", "m = n", lambda r: eq3(map_eq)(r["m"], r["n"])),
    ("mn", "BOOLEAN", "m <> n", lambda r: not3(eq3(map_eq)(r["m"], r["n"]))),
    ("md", "BOOLEAN", "m IS NOT DISTINCT FROM n", lambda r: not distinct(r["m"], r["n"], map_eq)),
    ("mc", "BOOLEAN", "m = MAP['q', 2, 'p', 1]", lambda r: eq3(map_eq)(r["m"], {"p": 1, "q": 2})),
    ("dz", "STRING", "CAST(d / z AS STRING)", lambda r: fdiv(r["d"], r["z"])),
    ("d0", "STRING", "CAST(d / 0 AS STRING)", lambda r: fdiv(r["d"], 0)),
    ("f0", "STRING", "CAST(f / 0 AS STRING)", lambda r: fdiv(r["f"], 0, True)),
    ("fneg", "STRING", "CAST(f / (z * -1) AS STRING)",
     lambda r: fdiv(r["f"], -r["z"]) if r["z"] == 0 else repr(r["f"] / -r["z"])),
    ("dzd", "DOUBLE", "d / z", lambda r: None if r["z"] == 0 else r["d"] / r["z"]),
]


def write_src(workdir, recs):
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return src


def run_cols(cluster, workdir, cols, name):
    src = write_src(workdir, SRC)
    out = os.path.join(workdir, "out")
    sink = ", ".join(f"`{c}` {t}" for c, t, _, _ in cols)
    exprs = ", ".join(e for _, _, e, _ in cols)
    r = run_sql(cluster, workdir, name, DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, {sink})
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, {exprs} FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout + r.stderr
    finish(cluster, jids[0])
    got = {g["id"]: g for g in rows(out)}
    assert sorted(got) == [s["id"] for s in SRC]
    return got


def test_nested_equality_and_ieee_division(cluster, workdir):
    cluster.add_tm(slots=1)
    got = run_cols(cluster, workdir, COLS, "eq.sql")
    for s in SRC:
        g = got[s["id"]]
        for c, t, _, model in COLS:
            want = model(s)
            have = g.get(c)
            if c == "dzd" and s["z"] == 0:  # the JSON sink writes NaN/Infinity as strings
                want = fdiv(s["d"], s["z"])
            assert have == want, (s["id"], c, have, want)


# ---- (d1 - d2) qualifier ----------------------------------------------------------

def add_months(d, m):
    """java.time's plusMonths on a date: the day kept or clamped to the month's end."""
    total = d.year * 12 + d.month - 1 + m
    y, mo = divmod(total, 12)
    return d.replace(year=y, month=mo + 1, day=min(d.day, calendar.monthrange(y, mo + 1)[1]))


def months_between(d1, d0):
    """Calcite's subtractMonths(d0, d1) on dates: the largest m with d1 + m months <= d0
    (negated for d0 < d1)."""
    if d0 < d1:
        return -months_between(d0, d1)
    m = 0
    while add_months(d1, m + 1) <= d0:
        m += 1
    return m


def ts_months(t0, t1):
    """Calcite's subtractMonths on timestamps: on the days, one less when the
    result lands on t0's day and t0's time of day is the earlier."""
    x = months_between(t1.date(), t0.date())
    if add_months(t1.date(), x) == t0.date() and t0.time() < t1.time():
        x -= 1
    return x


def dt_text(ms):
    """CAST(<day-time interval> AS STRING): +D HH:MM:SS.mmm."""
    sign = "-" if ms < 0 else "+"
    ms = abs(ms)
    d, ms = divmod(ms, 86400000)
    h, ms = divmod(ms, 3600000)
    mi, ms = divmod(ms, 60000)
    s, ms = divmod(ms, 1000)
    return "%s%d %02d:%02d:%02d.%03d" % (sign, d, h, mi, s, ms)


def ym_text(m):
    sign = "-" if m < 0 else "+"
    return "%s%d-%02d" % (sign, abs(m) // 12, abs(m) % 12)


def day(s):
    return None if s is None else datetime.date.fromisoformat(s)


def ts(s):
    if s is None:
        return None
    return datetime.datetime.strptime(s + ("" if "." in s else ".0"), "%Y-%m-%d %H:%M:%S.%f")


def both(f):
    return lambda x, y: None if x is None or y is None else f(x, y)


def ms_between(a, b):
    return round((a - b).total_seconds() * 1000)


DIFF = [
    ("dday", "STRING", "CAST((dd - de) DAY AS STRING)",
     lambda r: both(lambda a, b: dt_text((a - b).days * 86400000))(day(r["dd"]), day(r["de"]))),
    ("dhour", "STRING", "CAST((dd - de) HOUR AS STRING)",
     lambda r: both(lambda a, b: dt_text((a - b).days * 86400000))(day(r["dd"]), day(r["de"]))),
    ("dmon", "STRING", "CAST((dd - de) MONTH AS STRING)",
     lambda r: both(lambda a, b: ym_text(months_between(b, a)))(day(r["dd"]), day(r["de"]))),
    ("dym", "STRING", "CAST((dd - de) YEAR TO MONTH AS STRING)",
     lambda r: both(lambda a, b: ym_text(months_between(b, a)))(day(r["dd"]), day(r["de"]))),
    ("tds", "STRING", "CAST((t1 - t2) DAY TO SECOND AS STRING)",
     lambda r: both(lambda a, b: dt_text(ms_between(a, b)))(ts(r["t1"]), ts(r["t2"]))),
    ("tday", "STRING", "CAST((t1 - t2) DAY AS STRING)",
     lambda r: both(lambda a, b: dt_text(ms_between(a, b)))(ts(r["t1"]), ts(r["t2"]))),
    ("tym", "STRING", "CAST((t1 - t2) YEAR TO MONTH AS STRING)",
     lambda r: both(lambda a, b: ym_text(ts_months(a, b)))(ts(r["t1"]), ts(r["t2"]))),
    ("dcmp", "BOOLEAN", "(dd - de) DAY > INTERVAL '1' DAY",
     lambda r: both(lambda a, b: (a - b).days > 1)(day(r["dd"]), day(r["de"]))),
    ("tadd", "TIMESTAMP(3)", "t2 + (t1 - t2) SECOND",
     lambda r: r["t1"]),
]


def test_datetime_differences_as_intervals(cluster, workdir):
    cluster.add_tm(slots=1)
    got = run_cols(cluster, workdir, DIFF, "diff.sql")
    for s in SRC:
        g = got[s["id"]]
        for c, t, _, model in DIFF:
            want, have = model(s), g.get(c)
            if c == "tadd" and have is not None:
                have, want = ts(have.replace("T", " ")), ts(want)
            assert have == want, (s["id"], c, have, want)


# ---- the clock functions' types, TIMESTAMP WITH LOCAL TIME ZONE literals --------

def test_clock_types_and_ltz_literals_in_the_session_zone(cluster, workdir):
    """CURRENT_TIMESTAMP / NOW() / CURRENT_ROW_TIMESTAMP() are TIMESTAMP_LTZ(3) and
    LOCALTIMESTAMP TIMESTAMP(3) (Flink's DESCRIBE); in Asia/Shanghai the LTZ reads as
    the zone's wall clock, as LOCALTIMESTAMP does; a TIMESTAMP WITH LOCAL TIME ZONE
    literal is its text read in the session zone."""
    cluster.add_tm(slots=1)
    src = write_src(workdir, SRC[:1])
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "clock.sql", DDL.format(src=src) + f"""
SET 'table.local-time-zone' = 'Asia/Shanghai';
CREATE VIEW v AS SELECT CURRENT_TIMESTAMP AS c1, NOW() AS c2, CURRENT_ROW_TIMESTAMP() AS c3,
  LOCALTIMESTAMP AS c4, TIMESTAMP WITH LOCAL TIME ZONE '2024-01-01 10:00:00.25' AS c5,
  ARRAY[1, 2] AS c6, ARRAY[id, 1] AS c7, ROW(id, 'x') AS c8, MAP['a', 1, 'b', id] AS c9,
  ARRAY[ARRAY[1], ARRAY[CAST(NULL AS INT)]] AS c10 FROM src;
DESCRIBE v;
CREATE TABLE sink (id BIGINT, ct STRING, lt STRING, lit STRING, eq BOOLEAN, lz TIMESTAMP_LTZ(3),
  arr ARRAY<INT>, rw ROW<a BIGINT, b STRING>, arb ARRAY<BIGINT>, eqn BOOLEAN)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, CAST(CURRENT_TIMESTAMP AS STRING), CAST(LOCALTIMESTAMP AS STRING),
  CAST(TIMESTAMP WITH LOCAL TIME ZONE '2024-01-01 10:00:00' AS STRING),
  TIMESTAMP WITH LOCAL TIME ZONE '2024-01-01 10:00:00' = TO_TIMESTAMP_LTZ(1704074400000, 3),
  NOW(), ARRAY[1, 2], ROW(id, 'x'), CAST(ARRAY[1, 2] AS ARRAY<BIGINT>), ARRAY[1, 2] = a FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    described = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if line.startswith("|") and len(cells) > 3:
            described[cells[1]] = (cells[2], cells[3])
    # Flink 2.3's DESCRIBE (the clock functions are NOT NULL, a literal 'x' CHAR(1) NOT NULL)
    assert described["c1"] == ("TIMESTAMP_LTZ(3)", "FALSE")
    assert described["c2"] == ("TIMESTAMP_LTZ(3)", "FALSE")
    assert described["c3"] == ("TIMESTAMP_LTZ(3)", "FALSE")
    assert described["c4"] == ("TIMESTAMP(3)", "FALSE")
    assert described["c5"] == ("TIMESTAMP_LTZ(2)", "FALSE")
    assert described["c6"] == ("ARRAY<INT NOT NULL>", "FALSE")
    assert described["c7"] == ("ARRAY<BIGINT>", "FALSE")
    assert described["c8"] == ("ROW<`EXPR$0` BIGINT, `EXPR$1` CHAR(1) NOT NULL>", "FALSE")
    assert described["c9"] == ("MAP<CHAR(1) NOT NULL, BIGINT>", "FALSE")
    assert described["c10"] == ("ARRAY<ARRAY<INT> NOT NULL>", "FALSE")
    t0 = datetime.datetime.now(datetime.timezone.utc)
    finish(cluster, job_ids(r.stdout)[0])
    t1 = datetime.datetime.now(datetime.timezone.utc)
    g = rows(out)[0]
    shanghai = datetime.timedelta(hours=8)  # no daylight saving time

    def local(text):
        return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc) - shanghai

    lo = t0 - datetime.timedelta(seconds=30)
    assert lo <= local(g["ct"]) <= t1, (g, t0, t1)
    assert lo <= local(g["lt"]) <= t1, (g, t0, t1)
    assert g["lit"] == "2024-01-01 10:00:00"
    assert g["eq"] is True
    assert (g["arr"], g["rw"], g["arb"], g["eqn"]) == ([1, 2], {"a": 1, "b": "x"}, [1, 2], False)


def test_refusals_name_line_and_column(cluster, workdir):
    cluster.add_tm(slots=1)
    src = write_src(workdir, SRC[:1])
    out = os.path.join(workdir, "out")
    ddl = DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, v BOOLEAN)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
CREATE TABLE ev (id INT, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts)
WITH ('connector' = 'datagen', 'number-of-rows' = '1');
CREATE TABLE dim (k INT, r ROW<x INT>, arr ARRAY<INT>)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
CREATE TABLE ver (k INT, r ROW<x INT>, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED,
  WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
"""
    line = ddl.count("\n") + 1
    lookup = "INSERT INTO sink SELECT e.id, TRUE FROM ev AS e JOIN dim FOR SYSTEM_TIME AS OF e.pt AS d "
    cases = [
        # a lookup join keys on the table's columns: a field or an element of one is refused
        # as Flink refuses it
        (lookup + "ON e.id = d.r.x;", "e.id = d.r",
         "Temporal table join requires an equality condition on fields of table [dim]"),
        (lookup + "ON d.arr[1] = e.id;", "d.arr[1] =",
         "Temporal table join requires an equality condition on fields of table [dim]"),
        # a temporal join keys on the versioned table's primary key (and more, below)
        ("INSERT INTO sink SELECT e.id, TRUE FROM ev AS e JOIN ver FOR SYSTEM_TIME AS OF e.ts AS v "
         "ON e.id = v.r.x;", "e.id = v.r",
         "Temporal table's primary key [k] must be included in the equivalence condition of "
         "temporal join"),
        # a join key's error names the expression as written, its qualifier kept
        ("INSERT INTO sink SELECT x.id, TRUE FROM src AS x JOIN src AS y ON y.d = x.r.x;",
         "y.d = x", "join key y.d = x.r.x compares DOUBLE with INT"),
        ("INSERT INTO sink SELECT id, a < b FROM src;", "< b",
         "Comparable type expected, but was 'ARRAY<INT>'"),
        ("INSERT INTO sink SELECT id, r >= s FROM src;", ">= s",
         "Comparable type expected, but was 'ROW<`x` INT, `y` INT>'"),
        ("INSERT INTO sink SELECT id, m BETWEEN n AND n FROM src;", "BETWEEN",
         "Comparable type expected, but was 'MAP<STRING, INT>'"),
        ("INSERT INTO sink SELECT id, a = 1 FROM src;", "= 1",
         "cannot compare ARRAY<INT> with INT in '='"),
        ("INSERT INTO sink SELECT id, a = r FROM src;", "= r",
         "cannot compare ARRAY<INT> with ROW<`x` INT, `y` INT> in '='"),
        ("INSERT INTO sink SELECT id, dd - de > INTERVAL '1' DAY FROM src;", "- de",
         "cannot apply '-' to DATE and DATE"),
        ("INSERT INTO sink SELECT id, (t1 - dd) DAY > INTERVAL '1' DAY FROM src;", "- dd",
         "Parameters must be of the same type: TIMESTAMP(3) and DATE"),
        ("INSERT INTO sink SELECT id, (d - z) DAY > INTERVAL '1' DAY FROM src;", "- z",
         "cannot apply '(.. - ..) DAY' to DOUBLE and DOUBLE"),
        ("INSERT INTO sink SELECT id, (d) DAY > INTERVAL '1' DAY FROM src;", "(d)",
         "an interval qualifier after '( ... )' needs the difference of two datetimes"),
        ("INSERT INTO sink SELECT id, TIMESTAMP_LTZ '2024-01-01 00:00:00' IS NULL FROM src;",
         "'2024", "syntax error"),
    ]
    for stmt, at, msg in cases:
        r = run_sql(cluster, workdir, "bad.sql", ddl + stmt + "\n")
        assert r.returncode != 0, stmt
        where = f"line {line}, column {stmt.index(at) + 1}: "
        assert where + msg in r.stdout + r.stderr, (stmt, where + msg, r.stdout + r.stderr)


# ---- join keys written as access expressions --------------------------------------

def test_join_on_access_expressions(cluster, workdir):
    """ON a.r.x = b.id, ON a.arr[1] = b.k, ON a.m['k'] = b.k: keys computed before
    the join (a hash exchange at parallelism 2), the joined row as Flink's (SELECT *
    shows the inputs' columns only)."""
    cluster.add_tm(slots=2)
    src = write_src(workdir, SRC)
    outs = {k: os.path.join(workdir, k) for k in ("o1", "o2", "o3", "o4")}
    r = run_sql(cluster, workdir, "jk.sql", DDL.format(src=src) + f"""
SET 'parallelism.default' = '2';
CREATE TABLE o1 (id BIGINT, id2 BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'file://{outs["o1"]}', 'format' = 'json');
CREATE TABLE o2 (id BIGINT, id2 BIGINT, a1 INT)
WITH ('connector' = 'filesystem', 'path' = 'file://{outs["o2"]}', 'format' = 'json');
CREATE TABLE o3 (id BIGINT, id2 BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'file://{outs["o3"]}', 'format' = 'json');
CREATE TABLE o4 (id BIGINT, d DOUBLE, s ROW<x INT, y INT>, id0 BIGINT, d0 DOUBLE,
                 s0 ROW<x INT, y INT>)
WITH ('connector' = 'filesystem', 'path' = 'file://{outs["o4"]}', 'format' = 'json');
INSERT INTO o1 SELECT x.id, y.id FROM src AS x JOIN src AS y ON x.r.y = y.b[1] + 1;
INSERT INTO o2 SELECT x.id, y.id, x.a[1] FROM src AS x JOIN src AS y ON x.a[1] = y.b[1]
  AND x.id < y.id;
INSERT INTO o3 SELECT x.id, y.id FROM src AS x LEFT JOIN src AS y ON x.m['k'] = y.s.x
  AND y.id > 1;
INSERT INTO o4 SELECT * FROM (SELECT id, d, s FROM src) AS x JOIN (SELECT id, d, s FROM src) AS y
  ON x.s.y = y.s.y AND x.id <> y.id;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 4, r.stdout + r.stderr
    for jid in jids:
        finish(cluster, jid)

    def get(x, *path):
        for k in path:
            if x is None:
                return None
            if isinstance(k, int):
                x = x[k - 1] if 1 <= k <= len(x) else None
            else:
                x = x.get(k)
        return x

    def final(d, key):
        state = []
        for g in rows(d):
            op = g.pop("op", "+I")
            t = tuple(g[k] for k in key)
            if op in ("+I", "+U"):
                state.append(t)
            else:
                state.remove(t)
        return sorted(state, key=repr)

    want1 = sorted((x["id"], y["id"]) for x in SRC for y in SRC
                   if get(x, "r", "y") is not None and get(y, "b", 1) is not None
                   and get(x, "r", "y") == get(y, "b", 1) + 1)
    assert final(outs["o1"], ("id", "id2")) == want1
    want2 = sorted((x["id"], y["id"], get(x, "a", 1)) for x in SRC for y in SRC
                   if get(x, "a", 1) is not None and get(x, "a", 1) == get(y, "b", 1)
                   and x["id"] < y["id"])
    assert final(outs["o2"], ("id", "id2", "a1")) == want2
    want3 = []
    for x in SRC:
        m = [(x["id"], y["id"]) for y in SRC if get(x, "m", "k") is not None
             and get(x, "m", "k") == get(y, "s", "x") and y["id"] > 1]
        want3 += m or [(x["id"], None)]
    assert final(outs["o3"], ("id", "id2")) == sorted(want3, key=repr)
    want4 = sorted(((x["id"], x["d"], x["s"], y["id"], y["d"], y["s"]) for x in SRC for y in SRC
                    if get(x, "s", "y") is not None and get(x, "s", "y") == get(y, "s", "y")
                    and x["id"] != y["id"]), key=repr)
    assert final(outs["o4"], ("id", "d", "s", "id0", "d0", "s0")) == want4


def version_k(vs, k, t):
    """The latest row of vs with key k at or before t."""
    valid = [v for v in vs if k is not None and v["k"] == k and v["t"] <= t]
    return max(valid, key=lambda v: v["t"]) if valid else None


def json_table(workdir, name, recs):
    d = os.path.join(workdir, name)
    os.makedirs(d)
    with open(os.path.join(d, "part-0.json"), "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return d


def test_window_temporal_and_lookup_joins_on_access_expressions(cluster, workdir):
    """Keys written as access expressions (`e.r.k`, `e.arr[1]`, `e.m['k']`) in a
    window join (inner and LEFT, both sides' keys computed), an event-time
    temporal join (inner and LEFT; also keyed beyond the versioned table's
    primary key on a ROW field of it, as Flink keys it: the versions of each
    whole key) and a lookup join (inner and LEFT), one job
    at parallelism 2: each result is the model's join of the rows, a NULL key
    (a NULL ROW field, an index past the array, a missing map key) meeting
    nothing; SELECT * of a temporal join shows the inputs' columns only."""
    cluster.add_tm(slots=2)
    base = datetime.datetime(2026, 1, 1)

    def ts(ms):
        return (base + datetime.timedelta(milliseconds=ms)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    ev = [{"id": i,
           "r": None if i % 11 == 0 else {"k": None if i % 7 == 0 else i % 5, "n": f"n{i}"},
           "arr": None if i % 13 == 0 else ([] if i % 9 == 0 else [i % 4, i]),
           "m": {"z": 1} if i % 6 == 0 else {"k": i % 3}, "t": i * 1000} for i in range(1, 61)]
    ri = [{"id": j, "r": {"k": j % 3, "n": f"r{j}"}, "arr": [j % 5], "t": j * 1500}
          for j in range(1, 41)]
    ver = [{"k": j % 5, "v": f"v{j}", "t": j * 2000 + 500} for j in range(1, 31)]
    # a versioned table keyed beyond its primary key: versions per (k, vr.x)
    vn = [{"k": j % 4, "vr": None if j % 10 == 0 else {"x": j % 3}, "v": f"n{j}",
           "t": j * 1300 + 200} for j in range(1, 46)]
    dim = [{"k": k, "v": f"d{k}"} for k in range(4)]
    srcs = {n: json_table(workdir, n, [dict(r, ts=ts(r.pop("t"))) if "t" in r else r
                                       for r in map(dict, recs)])
            for n, recs in (("ev", ev), ("ri", ri), ("ver", ver), ("dim", dim), ("vn", vn))}
    outs = {k: os.path.join(workdir, k)
            for k in ("w1", "w2", "t1", "t2", "t3", "t4", "l1", "l2", "l3")}

    def sink(name, cols):
        return (f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
                f"'path' = 'file://{outs[name]}', 'format' = 'json');\n")
    pair, val = "id BIGINT, id2 BIGINT", "id BIGINT, v STRING"
    tv = ("CREATE TABLE ev (id BIGINT, r ROW<k INT, n STRING>, arr ARRAY<INT>, m MAP<STRING, INT>, "
          "ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
          f"WITH ('connector' = 'filesystem', 'path' = 'file://{srcs['ev']}', 'format' = 'json');\n"
          "CREATE TABLE ri (id BIGINT, r ROW<k INT, n STRING>, arr ARRAY<INT>, ts TIMESTAMP(3), "
          "WATERMARK FOR ts AS ts) "
          f"WITH ('connector' = 'filesystem', 'path' = 'file://{srcs['ri']}', 'format' = 'json');\n"
          "CREATE TABLE ver (k INT, v STRING, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED, "
          "WATERMARK FOR ts AS ts) "
          f"WITH ('connector' = 'filesystem', 'path' = 'file://{srcs['ver']}', 'format' = 'json');\n"
          "CREATE TABLE dim (k INT, v STRING) "
          f"WITH ('connector' = 'filesystem', 'path' = 'file://{srcs['dim']}', 'format' = 'json');\n"
          "CREATE TABLE vn (k INT, vr ROW<x INT>, v STRING, ts TIMESTAMP(3), "
          "PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR ts AS ts) "
          f"WITH ('connector' = 'filesystem', 'path' = 'file://{srcs['vn']}', 'format' = 'json');\n")
    win = ("(SELECT * FROM TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '10' SECOND))) AS {a}")
    wb = "L.window_start = R.window_start AND L.window_end = R.window_end"
    r = run_sql(cluster, workdir, "ak.sql", "SET 'parallelism.default' = '2';\n" + tv +
                sink("w1", pair) + sink("w2", pair) + sink("t1", val) +
                sink("t2", "id BIGINT, r ROW<k INT, n STRING>, arr ARRAY<INT>, m MAP<STRING, INT>, "
                           "ts TIMESTAMP(3), pt TIMESTAMP_LTZ(3), k INT, v STRING, ts0 TIMESTAMP(3)") +
                sink("t3", val) + sink("t4", val) +
                sink("l1", val) + sink("l2", val) + sink("l3", val) + f"""
EXECUTE STATEMENT SET BEGIN
INSERT INTO w1 SELECT L.id, R.id FROM {win.format(t='ev', a='L')} JOIN {win.format(t='ri', a='R')}
  ON {wb} AND L.r.k = R.arr[1];
INSERT INTO w2 SELECT L.id, R.id FROM {win.format(t='ev', a='L')} LEFT JOIN {win.format(t='ri', a='R')}
  ON {wb} AND L.m['k'] = R.r.k;
INSERT INTO t1 SELECT e.id, v.v FROM ev AS e JOIN ver FOR SYSTEM_TIME AS OF e.ts AS v ON e.r.k = v.k;
INSERT INTO t2 SELECT * FROM ev AS e LEFT JOIN ver FOR SYSTEM_TIME AS OF e.ts AS v
  ON e.arr[1] = v.k;
INSERT INTO t3 SELECT e.id, v.v FROM ev AS e JOIN vn FOR SYSTEM_TIME AS OF e.ts AS v
  ON e.r.k = v.k AND e.arr[1] = v.vr.x;
INSERT INTO t4 SELECT e.id, v.v FROM ev AS e LEFT JOIN vn FOR SYSTEM_TIME AS OF e.ts AS v
  ON v.vr.x = MOD(e.id, 3) AND e.r.k = v.k;
INSERT INTO l1 SELECT e.id, d.v FROM ev AS e JOIN dim FOR SYSTEM_TIME AS OF e.pt AS d ON e.r.k = d.k;
INSERT INTO l2 SELECT e.id, d.v FROM ev AS e LEFT JOIN dim FOR SYSTEM_TIME AS OF e.pt AS d
  ON e.m['k'] = d.k;
INSERT INTO l3 SELECT e.id, d.v FROM ev AS e JOIN dim FOR SYSTEM_TIME AS OF e.pt AS d
  ON d.k = e.arr[1];
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout + r.stderr
    finish(cluster, jids[0])

    def get(x, *path):
        for k in path:
            if x is None:
                return None
            x = (x[k - 1] if 1 <= k <= len(x) else None) if isinstance(k, int) else x.get(k)
        return x

    def got(name, *cols):
        out = []
        for g in rows(outs[name]):
            assert g.pop("op", "+I") == "+I", g
            out.append(tuple(g[c] for c in cols))
        return sorted(out, key=repr)

    def window(t):
        return t // 10000

    def inner(lefts, rights, on, left_outer=False):
        out = []
        for x in lefts:
            m = [(x["id"], y["id"]) for y in rights if on(x, y)]
            out += m or ([(x["id"], None)] if left_outer else [])
        return sorted(out, key=repr)

    assert got("w1", "id", "id2") == inner(
        ev, ri, lambda x, y: window(x["t"]) == window(y["t"]) and get(x, "r", "k") is not None
        and get(x, "r", "k") == get(y, "arr", 1))
    assert got("w2", "id", "id2") == inner(
        ev, ri, lambda x, y: window(x["t"]) == window(y["t"]) and get(x, "m", "k") is not None
        and get(x, "m", "k") == get(y, "r", "k"), left_outer=True)

    def version(k, t):
        """The version of k valid at time t: the latest at or before it."""
        valid = [v for v in ver if k is not None and v["k"] == k and v["t"] <= t]
        return max(valid, key=lambda v: v["t"]) if valid else None
    want = [(x["id"], version(get(x, "r", "k"), x["t"])["v"]) for x in ev
            if version(get(x, "r", "k"), x["t"])]
    assert got("t1", "id", "v") == sorted(want, key=repr)
    want = []
    for x in ev:
        v = version(get(x, "arr", 1), x["t"])
        want.append((x["id"], x["r"], x["arr"], x["m"], x["t"], v and v["k"], v and v["v"],
                     v and v["t"]))
    have = got("t2", "id", "r", "arr", "m", "ts", "k", "v", "ts0")
    t0 = ms("2026-01-01 00:00:00")
    assert sorted((h[:4] + (ms(h[4]) - t0,) + h[5:7] + (h[7] and ms(h[7]) - t0,) for h in have),
                  key=repr) == sorted(want, key=repr)

    def nversion(k, x, t):
        """vn's version of the whole key (k, vr.x) valid at t, as Flink keys it."""
        valid = [v for v in vn if k is not None and x is not None and v["k"] == k
                 and get(v, "vr", "x") == x and v["t"] <= t]
        return max(valid, key=lambda v: v["t"]) if valid else None
    want = [(x["id"], nversion(get(x, "r", "k"), get(x, "arr", 1), x["t"])["v"]) for x in ev
            if nversion(get(x, "r", "k"), get(x, "arr", 1), x["t"])]
    assert want and got("t3", "id", "v") == sorted(want, key=repr)
    want = []
    for x in ev:
        v = nversion(get(x, "r", "k"), x["id"] % 3, x["t"])
        want.append((x["id"], v and v["v"]))
    assert got("t4", "id", "v") == sorted(want, key=repr)
    # keyed by k alone the latest version would often be another vr.x: the whole key matters
    assert any(version_k(vn, get(x, "r", "k"), x["t"]) not in
               (None, nversion(get(x, "r", "k"), x["id"] % 3, x["t"])) for x in ev)

    def look(key, left_outer=False):
        out = []
        for x in ev:
            k = key(x)
            m = [(x["id"], d["v"]) for d in dim if k is not None and d["k"] == k]
            out += m or ([(x["id"], None)] if left_outer else [])
        return sorted(out, key=repr)
    assert got("l1", "id", "v") == look(lambda x: get(x, "r", "k"))
    assert got("l2", "id", "v") == look(lambda x: get(x, "m", "k"), left_outer=True)
    assert got("l3", "id", "v") == look(lambda x: get(x, "arr", 1))
