"""DECIMAL arithmetic, comparisons and CASTs, DATE/TIME CASTs and
comparisons, and SUM/AVG/MIN/MAX over DECIMAL and DATE in GROUP BY (with
retraction) through `sluice sql -f` on a live cluster. Every expectation is
computed here with Python's decimal (ROUND_HALF_UP) and datetime and
Flink's documented result-type rules, independently of Sluice."""
import collections
import datetime
import decimal
import json
import os

from test_sql import run_sql, job_ids, finish
from test_sql_types import final_state, rows_text

D = decimal.Decimal
CTX = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)


def q(x, scale):
    """x rounded HALF_UP to `scale` fraction digits."""
    return CTX.quantize(D(x), D(1).scaleb(-scale))


# id, k, price (exact text), qty, d
SRC = [
    (1, "a", "12.345", 3, "2026-01-01"),
    (2, "a", "0.5", -7, "2025-12-31"),
    (3, "b", "99999999.99", 2, "2024-02-29"),
    (4, "b", "-7.005", 1, "2026-03-01"),
    (5, "c", "1", 0, "2026-01-01"),
    (6, "a", None, 4, None),
    (7, "c", "0.01", 11, "1999-12-31"),
]

DDL = """
CREATE TABLE src (id BIGINT, k STRING, price DECIMAL(10, 2), qty INT, d DATE)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
"""


def write_src(workdir):
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for (i, k, price, qty, d) in SRC:
            obj = json.dumps({"id": i, "k": k, "price": "@P@", "qty": qty, "d": d})
            f.write(obj.replace('"@P@"', price if price is not None else "null") + "\n")
    return src


def price(p):
    return None if p is None else q(p, 2)  # DECIMAL(10, 2) of the JSON text


def read(out):
    return [json.loads(ln, parse_float=D, parse_int=D) for ln in rows_text(out)]


def test_decimal_arithmetic_comparisons_and_casts(cluster, workdir):
    cluster.add_tm(slots=1)
    src = write_src(workdir)
    out = os.path.join(workdir, "out")
    # result types by Flink's rules: (10,2)*INT(10,0) -> (21,2); (10,2)+0.005(3,3)
    # -> (12,3); (10,2)/INT -> (21,13); (10,2)-2.5(2,1) -> (11,2); % INT -> (10,2)
    r = run_sql(cluster, workdir, "dec.sql", DDL.format(src=src) + f"""
CREATE TABLE sink (id BIGINT, total DECIMAL(21, 2), p2 DECIMAL(12, 3), third DECIMAL(21, 13),
    neg DECIMAL(10, 2), sub DECIMAL(11, 2), md DECIMAL(10, 2), pb BIGINT, ps STRING,
    r1 DECIMAL(12, 1), big BOOLEAN, dbl DOUBLE, ds STRING, after BOOLEAN, tsd STRING,
    tc STRING, lit DECIMAL(5, 3), tryc DECIMAL(4, 2), ovf DECIMAL(4, 2), ab DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, price * qty, price + 0.005, price / 3, -price, price - 2.5,
    price % 7, CAST(price AS BIGINT), CAST(price AS STRING),
    CAST(CAST(price AS STRING) AS DECIMAL(12, 1)), price > 10, price * CAST(2 AS DOUBLE),
    CAST(d AS STRING), CAST('2025-12-31' AS DATE) < d,
    CAST(CAST(CAST('2026-01-02 10:11:12.5' AS TIMESTAMP(3)) AS DATE) AS STRING),
    CAST(CAST(' 10:11:12 ' AS TIME) AS STRING), -1.250 + 0, TRY_CAST('x1' AS DECIMAL(4, 2)),
    CAST(price * 100 AS DECIMAL(4, 2)), ABS(price)
  FROM src WHERE price BETWEEN -10 AND 100000000 OR price IS NULL;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    got = {g["id"]: g for g in read(out)}
    want = {}
    for (i, k, p, qty, d) in SRC:
        pr = price(p)
        if pr is not None and not (D(-10) <= pr <= D(100000000)):
            continue
        if pr is None:
            row = {"id": i, "total": None, "p2": None, "third": None, "neg": None, "sub": None,
                   "md": None, "pb": None, "ps": None, "r1": None, "big": None, "dbl": None,
                   "ab": None}
        else:
            ovf = q(pr * 100, 2)
            row = {"id": i, "total": q(pr * qty, 2), "p2": q(pr + D("0.005"), 3),
                   "third": CTX.divide(pr, 3).quantize(D(1).scaleb(-13), rounding=decimal.ROUND_HALF_UP),
                   "neg": -pr, "sub": q(pr - D("2.5"), 2),
                   "md": q(CTX.remainder(pr, 7), 2), "pb": int(pr), "ps": str(pr),
                   "r1": q(pr, 1), "big": pr > 10, "dbl": float(pr) * 2.0,
                   # ABS keeps the DECIMAL; the DOUBLE column converts it (INSERT's implicit CAST)
                   "ab": float(abs(pr)),
                   }
            row["ovf"] = ovf if abs(ovf) < 100 else None
        row["ds"] = d
        row["after"] = None if d is None else datetime.date.fromisoformat(d) > datetime.date(2025, 12, 31)
        row["tsd"] = "2026-01-02"
        row["tc"] = "10:11:12"
        row["lit"] = D("-1.250")
        row["tryc"] = None
        row.setdefault("ovf", None)
        want[i] = row
    assert set(got) == set(want), (sorted(got), sorted(want))
    for i in want:
        g = {kk: v for kk, v in got[i].items() if kk != "op"}
        w = want[i]
        for kk in w:
            gv = g.get(kk)
            if isinstance(w[kk], float):
                assert float(gv) == w[kk], (i, kk, gv, w[kk])
            elif isinstance(w[kk], bool) or w[kk] is None or isinstance(w[kk], str):
                assert gv == w[kk], (i, kk, gv, w[kk])
            else:
                assert gv == w[kk] and str(gv) == str(w[kk]), (i, kk, gv, w[kk])


def test_decimal_and_date_aggregates_with_retraction_at_parallelism_2(cluster, workdir):
    cluster.add_tm(slots=2)
    src = write_src(workdir)
    out1 = os.path.join(workdir, "per_k")
    out2 = os.path.join(workdir, "total")
    r = run_sql(cluster, workdir, "agg.sql", DDL.format(src=src) + f"""
SET 'parallelism.default' = '2';
CREATE TABLE per_k (k STRING, s DECIMAL(38, 2), a DECIMAL(38, 6), mn DECIMAL(10, 2),
    mx DECIMAL(10, 2), dmin DATE, dmax DATE, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out1}', 'format' = 'json');
CREATE TABLE total (g INT, s DECIMAL(38, 2), mx DECIMAL(18, 2), n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out2}', 'format' = 'json');
INSERT INTO per_k SELECT k, SUM(price), AVG(price), MIN(price), MAX(price), MIN(d), MAX(d),
    COUNT(price) FROM src GROUP BY k;
INSERT INTO total SELECT 1 AS g, SUM(s), MAX(CAST(s AS DECIMAL(18, 2))), COUNT(*) FROM
    (SELECT k, SUM(price) AS s FROM src GROUP BY k) GROUP BY 1;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 2, r.stdout + r.stderr
    for j in jids:
        finish(cluster, j)
    by = collections.defaultdict(list)
    dates = collections.defaultdict(list)
    for (i, k, p, qty, d) in SRC:
        if p is not None:
            by[k].append(price(p))
        if d is not None:
            dates[k].append(d)
    final = final_state(read(out1), "k")
    want = {}
    for k in by:
        vals = by[k]
        s = sum(vals, D(0))
        want[k] = {"k": k, "s": q(s, 2), "a": CTX.divide(s, len(vals)).quantize(
            D("0.000001"), rounding=decimal.ROUND_HALF_UP), "mn": min(vals), "mx": max(vals),
            "dmin": min(dates[k]), "dmax": max(dates[k]), "c": len(vals)}
    assert final == want
    for k in want:  # the scale shows in the text: 2 and 6 digits
        assert str(final[k]["s"]) == str(want[k]["s"]) and str(final[k]["a"]) == str(want[k]["a"])
    tot = final_state(read(out2), "g")
    sums = [q(sum(v, D(0)), 2) for v in by.values()]
    assert tot == {1: {"g": 1, "s": sum(sums, D(0)), "mx": max(sums), "n": len(sums)}}


def test_refusals_name_position_and_types(cluster, workdir):
    src = write_src(workdir)
    cases = [
        ("INSERT INTO o SELECT CAST(d AS INT) FROM src;",
         "line 6, column 22: cannot CAST DATE to INT"),
        ("INSERT INTO o SELECT price + d FROM src;",
         "line 6, column 28: cannot apply '+' to DECIMAL(10, 2) and DATE"),
        ("INSERT INTO o SELECT id FROM src WHERE d > price;",
         "line 6, column 42: cannot compare DATE with DECIMAL(10, 2) in '>'"),
        ("INSERT INTO o SELECT SUM(d) FROM src;",
         "line 6, column 22: SUM of DATE is not supported"),
        ("INSERT INTO o SELECT CAST(price AS DECIMAL(40, 2)) FROM src;",
         "line 6, column"),
    ]
    for stmt, msg in cases:
        r = run_sql(cluster, workdir, "bad.sql", DDL.format(src=src) + """
CREATE TABLE o (x BIGINT) WITH ('connector' = 'print');
""" + stmt + "\n")
        assert r.returncode != 0
        assert msg in r.stdout + r.stderr, (stmt, r.stdout + r.stderr)
