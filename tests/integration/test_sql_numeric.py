"""TINYINT, SMALLINT and FLOAT arithmetic at their own width, CASTs to and
from them, and the functions and conditionals that keep a DECIMAL (ABS,
SIGN, FLOOR, CEIL, ROUND, TRUNCATE, MOD, CASE, COALESCE, IF, NULLIF,
GREATEST, LEAST) through `sluice sql -f` on a live cluster. Every
expectation is computed here: Java's byte/short/int wrapping and float
rounding with struct, DECIMAL results with Python's decimal (ROUND_HALF_UP)
and Flink's result-type rules (checked against Flink 2.3 with
tests/tools/flink_types_probe.py-style queries)."""
import decimal
import json
import math
import os
import struct

from test_sql import run_sql, job_ids, finish
from test_sql_types import rows_text

D = decimal.Decimal
CTX = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)


def f32(x):
    """x rounded to a float (Java's (float) x)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def wrap(x, bits):
    """Java's narrowing of an integer to `bits` bits."""
    m = 1 << bits
    x %= m
    return x - m if x >= m // 2 else x


def d2i(x):
    """Java's (int) of a double: saturating, NaN 0."""
    if math.isnan(x):
        return 0
    return max(-2**31, min(2**31 - 1, int(x)))


def java_float_text(x):
    """Float.toString: the shortest digits that read back as the float."""
    if x == 0:
        return "0.0"
    for p in range(1, 10):
        s = "%.*e" % (p - 1, x)
        if f32(float(s)) == x:
            break
    mant, exp = s.split("e")
    digits, e = mant.replace("-", "").replace(".", "").rstrip("0") or "0", int(exp)
    sign = "-" if x < 0 else ""
    if 1e-3 <= abs(x) < 1e7:
        if e >= 0:
            whole = (digits + "0" * (e + 1))[:e + 1]
            frac = digits[e + 1:] or "0"
            return f"{sign}{whole}.{frac}"
        return f"{sign}0.{'0' * (-e - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


# id, t, s, f (JSON text, read as a float), i, b, d, p (exact text), str
SRC = [
    (1, 127, 32767, "0.1", 2147483647, 5, 0.1, "12.34", "42"),
    (2, -128, -32768, "-2.5", -7, -3, 1e10, "-7.005", "300"),
    (3, 3, 200, "1e10", 1000, 1 << 40, -2.75, "0.5", "1.5"),
    (4, -1, -1, "16777217", 0, 7, 255.9, None, "abc"),
    (5, 100, 1000, "3.3333333", -100, -9, -1e-5, "-0.01", " 7 "),
]

DDL = """
CREATE TABLE src (id BIGINT, t TINYINT, s SMALLINT, f FLOAT, i INT, b BIGINT, d DOUBLE,
    p DECIMAL(10, 2), str STRING)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
"""


def write_src(workdir):
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for (i, t, s, fl, it, b, d, p, st) in SRC:
            obj = json.dumps({"id": i, "t": t, "s": s, "f": "@F@", "i": it, "b": b, "d": d,
                              "p": "@P@", "str": st})
            f.write(obj.replace('"@F@"', fl).replace('"@P@"', p if p is not None else "null")
                    + "\n")
    return src


def read(out):
    return {r["id"]: r for r in (json.loads(ln, parse_float=D, parse_int=int)
                                 for ln in rows_text(out))}


def test_small_integers_and_float_at_their_own_width(cluster, workdir):
    cluster.add_tm(slots=1)
    src = write_src(workdir)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "num.sql", DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, tt TINYINT, ss SMALLINT, ts SMALLINT, ti INT, nt TINYINT,
    tdiv TINYINT, fp FLOAT, fd FLOAT, df DOUBLE, fi FLOAT, bf FLOAT, c1 TINYINT, c2 SMALLINT,
    c3 TINYINT, c4 TINYINT, c5 FLOAT, c6 STRING, c7 STRING, c8 SMALLINT, c9 DECIMAL(10, 3),
    c10 FLOAT, lt BOOLEAN, gt BOOLEAN, md TINYINT, co SMALLINT, gr SMALLINT, cs FLOAT,
    fs STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, t + t, s * s, t * s, t + i, -t, t / CAST(-1 AS TINYINT),
    f + 1, f * d, d - f, f + i, b + f, CAST(i AS TINYINT), CAST(i AS SMALLINT),
    CAST(d AS TINYINT), TRY_CAST(str AS TINYINT), TRY_CAST(str AS FLOAT), CAST(f AS STRING),
    CAST(t AS STRING), CAST(p AS SMALLINT), CAST(f AS DECIMAL(10, 3)), CAST(d AS FLOAT),
    t < s, f > 0.5, MOD(b, t), COALESCE(t, s), GREATEST(t, s),
    CASE WHEN i > 0 THEN f ELSE i END, CAST(f * f AS STRING)
  FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    got = read(out)
    want = {}
    for (id_, t, s, fl, i, b, d, p, st) in SRC:
        f = f32(float(fl))
        pr = None if p is None else CTX.quantize(D(p), D("0.01"))
        try:
            tc = wrap(int(st.strip().split(".")[0]), 64)
            tc = tc if -128 <= tc <= 127 else None
        except ValueError:
            tc = None
        try:
            fc = f32(float(st))
        except ValueError:
            fc = None
        want[id_] = {
            "tt": wrap(t + t, 8), "ss": wrap(s * s, 16), "ts": wrap(t * s, 16),
            "ti": wrap(t + i, 32), "nt": wrap(-t, 8), "tdiv": wrap(-t, 8),
            "fp": f32(f + 1.0), "fd": f32(f * f32(d)), "df": d - f,
            "fi": f32(f + f32(float(i))), "bf": f32(f32(float(b)) + f),
            "c1": wrap(i, 8), "c2": wrap(i, 16), "c3": wrap(d2i(d), 8), "c4": tc, "c5": fc,
            "c6": java_float_text(f), "c7": str(t),
            "c8": None if pr is None else wrap(int(pr), 16),
            "c9": CTX.quantize(D(java_float_text(f)) if "E" not in java_float_text(f)
                               else D(repr(f)), D("0.001")) if abs(f) < 1e7 else None,
            "c10": f32(d), "lt": t < s, "gt": float(f) > 0.5,
            "md": int(math.fmod(b, t)), "co": t, "gr": max(t, s),
            "cs": f if i > 0 else f32(float(i)), "fs": java_float_text(f32(f * f)),
        }
    assert set(got) == set(want)
    for id_, w in want.items():
        g = got[id_]
        for k, v in w.items():
            gv = g[k]
            if k in ("fp", "fd", "fi", "bf", "c5", "c10", "cs") and v is not None:
                # a FLOAT column: the float the sink's text reads back as
                assert gv is not None and f32(float(gv)) == v, (id_, k, gv, v)
            elif k == "df":
                assert float(gv) == v, (id_, k, gv, v)
            elif k == "c9" and v is not None:
                assert D(str(gv)) == v, (id_, k, gv, v)
            else:
                assert gv == v, (id_, k, gv, v)


def q(x, scale):
    return CTX.quantize(D(x), D(1).scaleb(-scale))


def test_functions_and_conditionals_keep_decimal(cluster, workdir):
    cluster.add_tm(slots=1)
    src = write_src(workdir)
    out = os.path.join(workdir, "out")
    # result types by Flink's rules (probed on Flink 2.3): ABS/SIGN keep DECIMAL(10, 2);
    # FLOOR/CEIL (10, 0); ROUND(p, 1) (10, 1); ROUND(p) (9, 0); ROUND(p, -1) (9, 0);
    # MOD(p, 3) (10, 2); CASE with DECIMAL(5, 3) (11, 3); COALESCE with (20, 1) (21, 2);
    # IF with an INT (12, 2); GREATEST(p, 1) (12, 2); LEAST with (3, 1) (10, 2)
    r = run_sql(cluster, workdir, "decfn.sql", DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, ab DECIMAL(10, 2), sg DECIMAL(10, 2), fl DECIMAL(10, 0),
    ce DECIMAL(10, 0), r1 DECIMAL(10, 1), r0 DECIMAL(9, 0), rm DECIMAL(9, 0),
    tr DECIMAL(10, 1), md DECIMAL(10, 2), pw DOUBLE, cs DECIMAL(11, 3), co DECIMAL(21, 2),
    iff DECIMAL(12, 2), nu DECIMAL(10, 2), gr DECIMAL(12, 2), le DECIMAL(10, 2), cd DOUBLE,
    ab_s STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, ABS(p), SIGN(p), FLOOR(p), CEIL(p), ROUND(p, 1), ROUND(p),
    ROUND(p, -1), TRUNCATE(p, 1), MOD(p, 3), POWER(p, 2),
    CASE WHEN i > 0 THEN p ELSE CAST(1.5 AS DECIMAL(5, 3)) END,
    COALESCE(p, CAST(1 AS DECIMAL(20, 1))), IF(i > 0, p, i), NULLIF(p, 0.5), GREATEST(p, 1),
    LEAST(p, CAST(2.5 AS DECIMAL(3, 1))), CASE WHEN i > 0 THEN p ELSE d END,
    CAST(ABS(p) AS STRING)
  FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    got = read(out)
    want = {}
    for (id_, t, s, fl, i, b, d, p, st) in SRC:
        x = None if p is None else q(p, 2)
        if x is None:
            row = dict.fromkeys(["ab", "sg", "fl", "ce", "r1", "r0", "rm", "tr", "md", "pw",
                                 "gr", "le", "nu", "ab_s"])
            row["cs"] = q("1.5", 3) if i <= 0 else None
            row["co"] = q(1, 2)
            row["iff"] = None if i > 0 else q(i, 2)
        else:
            row = {"ab": abs(x), "sg": q(D(1 if x > 0 else -1 if x < 0 else 0), 2),
                   "fl": x.to_integral_value(rounding=decimal.ROUND_FLOOR),
                   "ce": x.to_integral_value(rounding=decimal.ROUND_CEILING),
                   "r1": q(x, 1), "r0": q(x, 0),
                   "rm": CTX.quantize(x.scaleb(-1), D(1)).scaleb(1),
                   "tr": x.quantize(D("0.1"), rounding=decimal.ROUND_DOWN),
                   "md": q(CTX.remainder(x, 3), 2), "pw": float(x) ** 2,
                   "cs": q(x if i > 0 else D("1.5"), 3), "co": x,
                   "iff": q(x if i > 0 else i, 2), "nu": None if x == D("0.5") else x,
                   "gr": max(x, D(1)), "le": min(x, D("2.5")), "ab_s": str(abs(x))}
        row["cd"] = float(x) if (i > 0 and x is not None) else (d if i <= 0 else None)
        want[id_] = row
    assert set(got) == set(want)
    for id_, w in want.items():
        g = got[id_]
        for k, v in w.items():
            gv = g[k]
            if v is None or isinstance(v, str):
                assert gv == v, (id_, k, gv, v)
            elif isinstance(v, float):
                assert float(gv) == v, (id_, k, gv, v)
            else:
                assert D(str(gv)) == v, (id_, k, gv, v)
                if k in ("ab", "sg", "md", "co", "gr", "le"):  # the scale shows in the text
                    assert len(str(gv).split(".")[-1]) == 2, (id_, k, gv)


def test_refusals_of_decimal_functions(cluster, workdir):
    src = write_src(workdir)
    r = run_sql(cluster, workdir, "bad.sql", DDL.format(src=src) + """
CREATE TABLE o (x DECIMAL(10, 2)) WITH ('connector' = 'print');
INSERT INTO o SELECT ROUND(p, i) FROM src;
""")
    assert r.returncode != 0
    assert ("line 7, column 31: ROUND of a DECIMAL needs a constant number of digits"
            in r.stdout + r.stderr), r.stdout + r.stderr


def test_aggregates_of_small_numbers_and_over_new_types(cluster, workdir):
    """SUM/AVG of TINYINT, SMALLINT and FLOAT (their own types) in GROUP BY at
    parallelism 2, and OVER aggregates of DECIMAL, DATE, TINYINT and FLOAT
    over a ROWS frame (rows leave the frame: retraction)."""
    cluster.add_tm(slots=2)
    src = os.path.join(workdir, "osrc")
    os.makedirs(src)
    rows = []
    for n in range(1, 41):
        rows.append({"id": n, "k": "abc"[n % 3], "t": (n * 37) % 200 - 100, "s": n * 700 - 7000,
                     "f": f32(n / 8 + 0.1), "p": "%d.%02d" % (n * 3 % 50, n * 7 % 100),
                     "d": "2026-01-%02d" % (1 + (n * 11) % 28),
                     "ts": "2026-01-01 00:00:%02d" % n})
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in rows:
            f.write(json.dumps(dict(r, p="@P@")).replace('"@P@"', r["p"]) + "\n")
    out1, out2 = os.path.join(workdir, "g"), os.path.join(workdir, "o")
    r = run_sql(cluster, workdir, "agg.sql", f"""
SET 'parallelism.default' = '2';
CREATE TABLE src (id BIGINT, k STRING, t TINYINT, s SMALLINT, f FLOAT, p DECIMAL(10, 2), d DATE,
    ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE g (k STRING, st TINYINT, avt TINYINT, ss SMALLINT, sf FLOAT, af FLOAT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out1}', 'format' = 'json');
CREATE TABLE o (id BIGINT, sp DECIMAL(38, 2), ap DECIMAL(38, 6), mnp DECIMAL(10, 2), mxd DATE,
    st TINYINT, mt TINYINT, mf FLOAT, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out2}', 'format' = 'json');
INSERT INTO g SELECT k, SUM(t), AVG(t), SUM(s), SUM(f), AVG(f) FROM src GROUP BY k;
INSERT INTO o SELECT id, SUM(p) OVER w, AVG(p) OVER w, MIN(p) OVER w, MAX(d) OVER w,
    SUM(t) OVER w, MAX(t) OVER w, MAX(f) OVER w, COUNT(d) OVER w
  FROM src WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    from test_sql_types import final_state
    got = final_state([json.loads(ln, parse_float=D) for ln in rows_text(out1)], "k")
    want = {}
    for k in "abc":
        rs = [x for x in rows if x["k"] == k]
        fs = 0.0
        for x in rs:  # a FLOAT SUM rounds to float at every step, in arrival order
            fs = f32(fs + x["f"]) if fs else x["f"]
        fsum = sum(x["f"] for x in rs)
        want[k] = {"k": k, "st": wrap(sum(x["t"] for x in rs), 8),
                   "avt": wrap(int(sum(x["t"] for x in rs) / len(rs)), 8),
                   "ss": wrap(sum(x["s"] for x in rs), 16), "sf": fs,
                   "af": f32(fsum / len(rs))}
    assert set(got) == set(want)
    for k in want:
        for col, v in want[k].items():
            g = got[k][col]
            if col in ("sf", "af"):
                assert f32(float(g)) == v, (k, col, g, v)
            else:
                assert g == v, (k, col, g, v)
    got = {x["id"]: x for x in (json.loads(ln, parse_float=D) for ln in rows_text(out2))}
    assert set(got) == {x["id"] for x in rows}
    for x in rows:
        part = [y for y in rows if y["k"] == x["k"] and y["id"] <= x["id"]][-3:]
        ps = [D(y["p"]) for y in part]
        w = {"sp": sum(ps), "ap": CTX.divide(sum(ps), len(ps)).quantize(D("0.000001")),
             "mnp": min(ps), "mxd": max(y["d"] for y in part),
             "st": wrap(sum(y["t"] for y in part), 8), "mt": max(y["t"] for y in part),
             "mf": max(y["f"] for y in part), "c": len(part)}
        g = got[x["id"]]
        for col, v in w.items():
            if col == "mf":
                assert f32(float(g[col])) == v, (x["id"], col, g[col], v)
            else:
                assert g[col] == v, (x["id"], col, g[col], v)


def test_insert_widens_small_numbers_and_refuses_narrowing(cluster, workdir):
    """INSERT converts a TINYINT, SMALLINT or FLOAT into a wider column
    (Flink's implicit casts); a narrowing one is refused with both types."""
    cluster.add_tm(slots=1)
    src = write_src(workdir)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "wide.sql", DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, a INT, b DOUBLE, c DECIMAL(5, 0), e BIGINT, g FLOAT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, t, f, s, t + t, i FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    got = read(out)
    for (id_, t, s, fl, i, b, d, p, st) in SRC:
        f = f32(float(fl))
        g = got[id_]
        assert g["a"] == t and float(g["b"]) == f and D(str(g["c"])) == s, g
        assert g["e"] == wrap(t + t, 8) and f32(float(g["g"])) == f32(float(i)), g
    r = run_sql(cluster, workdir, "narrow.sql", DDL.format(src=src) + """
CREATE TABLE o (x TINYINT) WITH ('connector' = 'print');
INSERT INTO o SELECT s FROM src;
""")
    assert r.returncode != 0
    assert "column 1 ('s') is SMALLINT, the table's 'x' is TINYINT; CAST it" in r.stdout + r.stderr, \
        r.stdout + r.stderr


def test_json_value_returning_decimal_and_date(cluster, workdir):
    """JSON_VALUE ... RETURNING DECIMAL(p, s) / DATE (a Sluice extension: Flink
    2.3's code generator refuses both): a number as its CAST (HALF_UP, NULL past
    the precision), text parsed, a DECIMAL DEFAULT converted to the type."""
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "jsrc")
    os.makedirs(src)
    docs = [(1, '{"p": 12.345, "d": "2024-02-29"}'), (2, '{"p": "1.005", "d": "2026-1-5"}'),
            (3, '{"p": 123456, "d": "2026-02-30"}'), (4, '{"p": "x"}'), (5, '{"q": 1}')]
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for i, j in docs:
            f.write(json.dumps({"id": i, "j": j}) + "\n")
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "jv.sql", f"""
CREATE TABLE src (id BIGINT, j STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE sink (id BIGINT, p DECIMAL(7, 2), d DATE, pd DECIMAL(7, 2))
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, JSON_VALUE(j, '$.p' RETURNING DECIMAL(7, 2)),
    JSON_VALUE(j, '$.d' RETURNING DATE),
    JSON_VALUE(j, '$.p' RETURNING DECIMAL(7, 2) DEFAULT 2.5 ON EMPTY DEFAULT -1.005 ON ERROR)
  FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    got = read(out)
    want = {1: (q("12.345", 2), "2024-02-29", q("12.345", 2)),
            2: (q("1.005", 2), "2026-01-05", q("1.005", 2)),
            3: (None, None, None),  # 123456.00 has 8 digits: NULL, as a numeric CAST
            4: (None, None, q("-1.005", 2)),  # 'x' is no number: ON ERROR
            5: (None, None, q("2.5", 2))}  # no $.p: ON EMPTY
    for i, (p, d, pd) in want.items():
        g = got[i]
        assert (g["p"], g["d"], g["pd"]) == (p, d, pd), (i, g)
        for k, v in (("p", p), ("pd", pd)):
            assert v is None or str(g[k]) == str(v), (i, k, g[k])


def test_char_and_varchar_lengths(cluster, workdir):
    """CAST to CHAR(n) pads with blanks and cuts, to VARCHAR(n) cuts (n code
    points); INSERT into a VARCHAR(n) column cuts the text to n, as Flink 2.3
    writes it (checked with PyFlink, table.exec.sink.type-length-enforcer at
    its default and at TRIM_PAD alike)."""
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "csrc")
    os.makedirs(src)
    words = ["2026-03-01", "h\u00e9llo w\u00f6rld", "ab", "", None]
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for i, w in enumerate(words):
            f.write(json.dumps({"id": i, "s": w}) + "\n")
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "chars.sql", f"""
CREATE TABLE src (id BIGINT, s STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE sink (id BIGINT, v3 VARCHAR(3), c12 STRING, n12 INT, v4 STRING, c3 STRING,
    eq BOOLEAN, s20 VARCHAR(20))
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, s, CONCAT('[', CAST(s AS CHAR(12)), ']'), CHAR_LENGTH(CAST(s AS CHAR(12))),
    CAST(s AS VARCHAR(4)), CAST(s AS CHAR(3)), CAST(s AS CHAR(12)) = s, s AS s2 FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    got = read(out)
    for i, w in enumerate(words):
        g = got[i]
        if w is None:
            assert all(g[k] is None for k in g if k not in ("id", "op")), g
            continue
        want = {"v3": w[:3], "c12": "[" + w[:12].ljust(12) + "]", "n12": 12, "v4": w[:4],
                "c3": w[:3].ljust(3), "eq": w[:12].ljust(12) == w, "s20": w}
        assert {k: g[k] for k in want} == want, (i, g, want)
