"""Flink SQL's data types end to end through `sluice sql -f` on a live
cluster: a filesystem JSON table with DECIMAL, DATE, TIME, TIMESTAMP(6),
TINYINT, SMALLINT, FLOAT, ARRAY, MAP and ROW columns is copied through a
filter into a JSON file sink and into print, and grouped by a DATE and by a
DECIMAL column at parallelism 2. Every expectation is computed here with
Python's json, decimal and datetime, independently of Sluice."""
import collections
import datetime
import decimal
import json
import os

from conftest import wait_for
from test_sql import run_sql, job_ids, rows, finish

D = decimal.Decimal


def dec2(x):
    """DECIMAL(10, 2) of a JSON number's text: rounded half up, as Flink."""
    return D(x).quantize(D("0.01"), rounding=decimal.ROUND_HALF_UP)


# id, price text (exact), date, time, ts6, tiny, small, float, arr, map, row
SRC = [
    (1, "12.345", "2026-01-01", "10:00:00", "2026-01-01 00:00:00.123456", 1, -300, 1.5,
     [1, None, 3], {"a": 1, "b": None}, {"id": 7, "tags": ["x", "y"]}),
    (2, "0.5", "2025-12-31", "23:59:59", "2026-01-01 00:00:01.5", -128, 32767, -2.25,
     [], {}, {"id": None, "tags": None}),
    (3, "99999999.99", "2026-01-01", "00:00:01", "2026-01-01 00:00:00", 127, 0, 1024.0,
     None, None, None),
    (4, "-7.005", "2024-02-29", "12:30:00", "1969-12-31 23:59:59.999999", 0, 1, 0.0,
     [42], {"k": -1}, {"id": 1, "tags": []}),
    (5, "1", "2026-01-01", "08:00:00", "2026-06-30 12:00:00.000001", 5, 5, 3.0,
     [5], {"z": 5}, {"id": 5}),
]


def java_time(t):
    """LocalTime.toString: HH:mm, :ss only when not zero."""
    h, m, s = t.split(":")
    return f"{h}:{m}" if s == "00" else t


def java_ts(text):
    """LocalDateTime.toString of 'yyyy-MM-dd HH:mm:ss[.f]' (fraction in 3/6 digits)."""
    date, time = text.split(" ")
    hms, _, frac = time.partition(".")
    h, m, s = hms.split(":")
    frac = (frac + "000000000")[:9].rstrip("0")
    if not frac and s == "00":
        return f"{date}T{h}:{m}"
    if not frac:
        return f"{date}T{hms}"
    digits = 3 if len(frac) <= 3 else 6 if len(frac) <= 6 else 9
    return f"{date}T{hms}.{frac.ljust(digits, '0')}"


def json_ts(text):
    """The json format's TIMESTAMP(6) text: fraction without trailing zeros."""
    date, time = text.split(" ")
    hms, _, frac = time.partition(".")
    frac = frac.rstrip("0")
    return f"{date} {hms}" + (f".{frac}" if frac else "")


def java_float(f):
    return repr(float(f)).replace("e+", "E").replace("e", "E")


def show(v):
    """Flink's print text of a nested value (Java's toString forms)."""
    if v is None:
        return "null"
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}={show(x)}" for k, x in v.items()) + "}"
    return str(v)


def show_row(r):
    if r is None:
        return "null"
    return f"+I[{show(r.get('id'))}, {show(r.get('tags'))}]"


DDL = """
CREATE TABLE src (
    id BIGINT, price DECIMAL(10, 2), d DATE, t TIME, ts TIMESTAMP(6), ti TINYINT,
    si SMALLINT, f FLOAT, arr ARRAY<INT>, m MAP<STRING, INT>,
    r ROW<id INT, tags ARRAY<STRING>>
) WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
"""


def write_src(workdir):
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for (i, price, d, t, ts, ti, si, fl, arr, m, r) in SRC:
            # the price as an exact JSON number text, not a Python float
            obj = json.dumps({"id": i, "price": "@P@", "d": d, "t": t, "ts": ts, "ti": ti,
                              "si": si, "f": fl, "arr": arr, "m": m, "r": r})
            f.write(obj.replace('"@P@"', price) + "\n")
    return src


def test_every_type_through_filter_json_and_print(cluster, workdir):
    tm = cluster.add_tm(slots=1)
    src = write_src(workdir)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "types.sql", DDL.format(src=src) + f"""
CREATE TABLE sink (
    id BIGINT, price DECIMAL(10, 2), d DATE, t TIME, ts TIMESTAMP(6), ti TINYINT,
    si SMALLINT, f FLOAT, arr ARRAY<INT>, m MAP<STRING, INT>,
    r ROW<id INT, tags ARRAY<STRING>>
) WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
CREATE TABLE shown (id BIGINT, price DECIMAL(10, 2), d DATE, t TIME, ts TIMESTAMP(6),
    ti TINYINT, si SMALLINT, f FLOAT, arr ARRAY<INT>, m MAP<STRING, INT>,
    r ROW<id INT, tags ARRAY<STRING>>) WITH ('connector' = 'print');
DESCRIBE src;
INSERT INTO sink SELECT * FROM src WHERE id <> 5;
INSERT INTO shown SELECT id, price, d, t, ts, ti, si, f, arr, m, r FROM src WHERE id > 1;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    # DESCRIBE shows the full types as Flink does
    for col, typ in [("price", "DECIMAL(10, 2)"), ("d", "DATE"), ("t", "TIME(0)"),
                     ("ts", "TIMESTAMP(6)"), ("ti", "TINYINT"), ("f", "FLOAT"),
                     ("arr", "ARRAY<INT>"), ("m", "MAP<STRING, INT>"),
                     ("r", "ROW<`id` INT, `tags` ARRAY<STRING>>")]:
        assert any(col in ln and typ in ln for ln in r.stdout.splitlines()), (col, typ, r.stdout)
    jids = job_ids(r.stdout)
    assert len(jids) == 2, r.stdout + r.stderr
    for j in jids:
        finish(cluster, j)

    got = []
    for line in rows_text(out):
        got.append(json.loads(line, parse_float=D))
    want = []
    for (i, price, d, t, ts, ti, si, fl, arr, m, rr) in SRC:
        if i == 5:
            continue
        row = {"id": i, "price": dec2(price), "d": d, "t": t, "ts": json_ts(ts), "ti": ti,
               "si": si, "f": D(repr(fl)), "arr": arr, "m": m,
               "r": None if rr is None else {"id": rr.get("id"), "tags": rr.get("tags")}}
        want.append(row)
    strip = [{k: v for k, v in g.items() if k != "op"} for g in got]
    assert sorted(strip, key=lambda x: x["id"]) == want
    # DECIMAL keeps its scale in the text ("0.50", not 0.5)
    text = "".join(rows_text(out))
    assert '"price":0.50' in text and '"price":99999999.99' in text and '"price":-7.01' in text

    def printed():
        return sorted(ln for ln in tm.out_text().splitlines() if ln.startswith("+I["))
    want_print = []
    for (i, price, d, t, ts, ti, si, fl, arr, m, rr) in SRC:
        if i <= 1:
            continue
        vals = [str(i), str(dec2(price)), d, java_time(t), java_ts(ts), str(ti), str(si),
                java_float(fl), show(arr), show(m), show_row(rr)]
        want_print.append("+I[" + ", ".join(vals) + "]")
    wait_for(lambda: len(printed()) == len(want_print), timeout=30, what="printed rows")
    assert printed() == sorted(want_print)


def rows_text(out_dir):
    import glob
    lines = []
    for path in sorted(glob.glob(os.path.join(out_dir, "part-*"))):
        with open(path) as f:
            lines += [ln for ln in f if ln.strip()]
    return lines


def final_state(records, key):
    """Apply a changelog ({"op": ..., key: ..., ...}) to {key: row}; a -U/-D
    must retract exactly what the key holds."""
    table = {}
    for r in records:
        r = dict(r)
        op = r.pop("op", "+I")
        k = r[key]
        if op in ("+I", "+U"):
            assert k not in table, (op, r, table.get(k))
            table[k] = r
        else:
            assert table.get(k) == r, (op, r, table.get(k))
            del table[k]
    return table


def test_group_by_date_and_decimal_at_parallelism_2(cluster, workdir):
    cluster.add_tm(slots=2)
    src = write_src(workdir)
    out1 = os.path.join(workdir, "by_date")
    out2 = os.path.join(workdir, "by_price")
    r = run_sql(cluster, workdir, "group.sql", DDL.format(src=src) + f"""
SET 'parallelism.default' = '2';
CREATE TABLE by_date (d DATE, cnt BIGINT, ids BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out1}', 'format' = 'json');
CREATE TABLE by_price (price DECIMAL(10, 2), cnt BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out2}', 'format' = 'json');
INSERT INTO by_date SELECT d, COUNT(*) AS cnt, SUM(id) AS ids FROM src GROUP BY d;
INSERT INTO by_price SELECT price, COUNT(*) AS cnt FROM src GROUP BY price;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 2, r.stdout + r.stderr
    for j in jids:
        finish(cluster, j)
    want_d = collections.Counter()
    want_ids = collections.Counter()
    for row in SRC:
        want_d[row[2]] += 1
        want_ids[row[2]] += row[0]
    final = final_state(rows(out1), "d")
    assert {k: (v["cnt"], v["ids"]) for k, v in final.items()} == \
        {k: (want_d[k], want_ids[k]) for k in want_d}
    want_p = collections.Counter(str(dec2(row[1])) for row in SRC)
    got_p = collections.Counter()
    final = final_state([json.loads(ln, parse_float=D) for ln in rows_text(out2)], "price")
    for k, v in final.items():
        got_p[str(k)] = v["cnt"]
    assert got_p == want_p


def test_expressions_over_new_types_are_refused_where_not_supported(cluster, workdir):
    src = write_src(workdir)
    cases = [
        ("INSERT INTO o SELECT price || 'x' FROM src;",
         "line 9, column 28: cannot apply '||' to DECIMAL(10, 2) and CHAR(1)"),
        ("INSERT INTO o SELECT price FROM src WHERE arr < arr;",
         "line 9, column 47: Comparable type expected, but was 'ARRAY<INT>'"),
        ("INSERT INTO o SELECT SUM(ts) FROM src;",
         "line 9, column 22: SUM of TIMESTAMP(6) is not supported yet"),
        ("INSERT INTO o SELECT MAX(ts) FROM src;",
         "line 9, column 22: MAX of TIMESTAMP(6) is not supported yet"),
        ("CREATE TABLE c (x ARRAY<INT>) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', "
         "'format' = 'csv');\nINSERT INTO c SELECT arr FROM src;",
         "line 9, column 31: table 'c': column 'x' is ARRAY<INT>; the csv format cannot carry "
         "that type yet (json can)"),
    ]
    for stmt, msg in cases:
        r = run_sql(cluster, workdir, "bad.sql", DDL.format(src=src) + """
CREATE TABLE o (x DECIMAL(10, 2)) WITH ('connector' = 'print');
""" + stmt + "\n")
        assert r.returncode != 0
        assert msg in r.stdout + r.stderr, r.stdout + r.stderr


# ---- a savepoint from before the full types ------------------------------------

OLD_N, OLD_BASE = 6000, 1767225600000
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "sp-v1-agg")


def old_types_job(rate):
    """datagen 1..OLD_N -> keys of INT, STRING, TIMESTAMP(3) and BOOLEAN ->
    COUNT/SUM per key -> print. Its state (source offsets, the aggregate's
    key bytes and rows) is in the original seven types' binary form."""
    return {"name": "old types", "parallelism": 1,
            "vertices": [
                {"id": "gen", "uid": "gen", "type": "datagen",
                 "schema": [{"name": "id", "type": "BIGINT"}],
                 "config": {"rows-per-second": str(rate), "fields.id.kind": "sequence",
                            "fields.id.start": "1", "fields.id.end": str(OLD_N)}},
                {"id": "keyed", "type": "calc",
                 "config": {"projection": [
                     "CAST(id % 7 AS INT) AS k", "CAST(id % 3 AS STRING) AS s",
                     f"TO_TIMESTAMP_LTZ({OLD_BASE} + (id % 2) * 1000, 3) AS t",
                     "id % 5 = 0 AS b", "id AS amount", "CAST(id AS DOUBLE) / 2 AS half"]}},
                {"id": "agg", "uid": "agg", "type": "group_aggregate",
                 "config": {"group-by": ["k", "s", "t", "b"],
                            "aggregates": ["COUNT(*) AS cnt", "SUM(amount) AS total",
                                           "MAX(half) AS mx"]}},
                {"id": "out", "uid": "out", "type": "print", "config": {}}],
            "edges": [{"from": "gen", "to": "keyed", "strategy": "forward"},
                      {"from": "keyed", "to": "agg", "strategy": "hash", "keys": ["k", "s"]},
                      {"from": "agg", "to": "out", "strategy": "forward"}]}


def test_savepoint_from_before_the_types_restores(make_cluster, workdir):
    """The fixture was written by the build before the full data types
    (fixtures/make_old_savepoint.py); this build restores it and finishes
    the sequence: every key's final COUNT/SUM/MAX covers ids 1..OLD_N once,
    which holds only if the restored counts, sums and source offset are
    read as they were written."""
    import shutil
    sp = os.path.join(workdir, "sp")
    shutil.copytree(FIXTURE, sp)
    c = make_cluster()
    tm = c.add_tm(slots=1)
    path = os.path.join(workdir, "job.json")
    with open(path, "w") as f:
        json.dump(old_types_job(rate=100000), f)
    r = c.cli("run", "-s", f"file:{sp}", path, timeout=60)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    def key_of(i):
        t = datetime.datetime.fromtimestamp((OLD_BASE + (i % 2) * 1000) / 1000,
                                            datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M")
        return (str(i % 7), str(i % 3), t + (":01" if i % 2 else ""),
                "true" if i % 5 == 0 else "false")

    last, first = {}, {}
    for ln in tm.out_text().splitlines():
        if ln[:3] in ("+I[", "+U[", "-U["):
            f = ln[3:-1].split(", ")
            k, v = tuple(f[:4]), (int(f[4]), int(f[5]), float(f[6]))
            first.setdefault(k, (ln[:2], v))
            if ln[0] == "+":
                last[k] = v
    # every key's first output retracts what the savepoint held: the
    # aggregate over ids 1..x for the one x where the old run stopped
    assert all(op == "-U" for op, _ in first.values()), first
    acc, x_found = {}, None
    for x in range(1, OLD_N + 1):
        k = key_of(x)
        c_, s_, m_ = acc.get(k, (0, 0, 0.0))
        acc[k] = (c_ + 1, s_ + x, max(m_, x / 2))
        if len(acc) == len(first) and all(acc[k] == v for k, (_, v) in first.items()):
            x_found = x
            break
    assert x_found and x_found < OLD_N, "the restored state is no prefix of the sequence"
    # and the run finished the sequence from there, every id once
    for i in range(x_found + 1, OLD_N + 1):
        k = key_of(i)
        c_, s_, m_ = acc[k]
        acc[k] = (c_ + 1, s_ + i, max(m_, i / 2))
    assert last == acc
