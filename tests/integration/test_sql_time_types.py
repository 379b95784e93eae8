"""Flink's types for time values and literals through `sluice sql -f` on a
live cluster (issue 29): PROCTIME() is TIMESTAMP_LTZ(3) *PROCTIME*, the clock
functions NOT NULL, a string literal CHAR(n) NOT NULL, a datetime difference
an INTERVAL; CAST to TIMESTAMP(p) / TIMESTAMP_LTZ(p) for p 0..9; TIMESTAMP +
an interval column; CASE x WHEN and NULLIF over ARRAY, MAP and ROW.

The DESCRIBE expectations are what Flink 2.3 prints for the same view
(probed on Flink itself); the values are computed here with Python's
datetime, independently of Sluice."""
import datetime
import json
import os

from test_sql import run_sql, job_ids, rows, finish

SRC = [
    {"id": 1, "d1": "2024-03-01", "d2": "2024-02-01", "ts": "2024-01-31 10:00:00",
     "s": "2026-01-02 03:04:05.123456789", "a": [1, 2], "m": {"k": 1}, "r": {"x": 1, "y": "a"}},
    {"id": 2, "d1": "2023-12-30", "d2": "2024-01-02", "ts": "2024-02-29 23:59:59.5",
     "s": "1969-12-31 23:59:59.987654321", "a": [1, 3], "m": {"k": 2}, "r": {"x": 2, "y": "b"}},
    {"id": 3, "d1": None, "d2": "2024-01-02", "ts": "2024-01-01 00:00:00",
     "s": "2026-07-01 12:00:00", "a": None, "m": {}, "r": None},
]

DDL = """
CREATE TABLE src (id BIGINT, d1 DATE, d2 DATE, ts TIMESTAMP(3), s STRING, a ARRAY<INT>,
                  m MAP<STRING, INT>, r ROW<x INT, y STRING>, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE VIEW v AS SELECT id, ts, (d1 - d2) DAY AS gap, 'abc' AS lit, CURRENT_TIMESTAMP AS c1,
  NOW() AS c2, LOCALTIMESTAMP AS c3, CURRENT_DATE AS c4, CURRENT_TIME AS c5, pt AS vpt,
  PROCTIME() AS pt2 FROM src;
"""


def describe_cells(out):
    got = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if line.startswith("|") and len(cells) > 3:
            got[cells[1]] = (cells[2], cells[3])
    return got


def ts_cut(text, p):
    """A TIMESTAMP text's fraction cut to p digits (Flink's CAST to TIMESTAMP(p))."""
    whole, _, frac = text.partition(".")
    return whole + ("." + frac[:p].ljust(p, "0") if p else "")


def test_time_types_described_and_evaluated(cluster, workdir):
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in SRC:
            f.write(json.dumps(r) + "\n")
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "tt.sql", DDL.format(src=src) + f"""
DESCRIBE src;
DESCRIBE v;
CREATE TABLE sink (id BIGINT, t9 STRING, t1 STRING, t0 STRING, l6 STRING, t4 STRING,
  shifted TIMESTAMP(3), ca STRING, cm STRING, cr STRING, na ARRAY<INT>,
  nm MAP<STRING, INT>, lit_eq BOOLEAN, lit_cat STRING)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT v.id,
  CAST(CAST(s AS TIMESTAMP(9)) AS STRING), CAST(CAST(s AS TIMESTAMP(1)) AS STRING),
  CAST(CAST(s AS TIMESTAMP(0)) AS STRING), CAST(CAST(s AS TIMESTAMP_LTZ(6)) AS STRING),
  CAST(CAST(CAST(s AS TIMESTAMP(9)) AS TIMESTAMP(4)) AS STRING),
  v.ts + gap,
  CASE a WHEN ARRAY[1, 2] THEN 'one-two' WHEN ARRAY[CAST(1 AS BIGINT), 3] THEN 'one-three'
    ELSE 'other' END,
  CASE m WHEN MAP['k', 1] THEN 'k1' ELSE 'no' END,
  CASE r WHEN ROW(2, 'b') THEN 'r2' END,
  NULLIF(a, ARRAY[1, 2]), NULLIF(m, MAP['k', 2]), 'a ' = 'a', 'ab' || 'c'
FROM v JOIN src ON v.id = src.id;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    d = describe_cells(r.stdout)
    # Flink 2.3's DESCRIBE of the same table and view
    assert d["pt"] == ("TIMESTAMP_LTZ(3) *PROCTIME*", "FALSE"), d
    assert d["gap"] == ("INTERVAL SECOND(3)", "TRUE"), d
    assert d["lit"] == ("CHAR(3)", "FALSE"), d
    assert d["c1"] == ("TIMESTAMP_LTZ(3)", "FALSE"), d
    assert d["c2"] == ("TIMESTAMP_LTZ(3)", "FALSE"), d
    assert d["c3"] == ("TIMESTAMP(3)", "FALSE"), d
    assert d["c4"] == ("DATE", "FALSE"), d
    assert d["c5"] == ("TIME(0)", "FALSE"), d
    # a view's processing-time attributes are marked as Flink marks them: the PROCTIME() item
    # and the table's attribute kept under another name alike
    assert d["pt2"] == ("TIMESTAMP_LTZ(3) *PROCTIME*", "FALSE"), d
    assert d["vpt"] == ("TIMESTAMP_LTZ(3) *PROCTIME*", "FALSE"), d
    finish(cluster, job_ids(r.stdout)[0])
    got = {g["id"]: g for g in rows(out)}
    assert sorted(got) == [1, 2, 3]
    fmt = "%Y-%m-%d %H:%M:%S.%f"
    for s in SRC:
        g = got[s["id"]]
        assert g["t9"] == ts_cut(s["s"], 9), g
        assert g["t1"] == ts_cut(s["s"], 1), g
        assert g["t0"] == ts_cut(s["s"], 0), g
        assert g["l6"] == ts_cut(s["s"], 6), g
        assert g["t4"] == ts_cut(s["s"], 4), g
        if s["d1"] is None:
            assert g["shifted"] is None, g
        else:
            days = (datetime.date.fromisoformat(s["d1"]) -
                    datetime.date.fromisoformat(s["d2"])).days
            base = datetime.datetime.strptime(s["ts"] + ("" if "." in s["ts"] else ".0"), fmt)
            want = base + datetime.timedelta(days=days)
            assert datetime.datetime.fromisoformat(g["shifted"].replace("T", " ")) == want, g
        a, m, rr = s["a"], s["m"], s["r"]
        assert g["ca"] == ("other" if a is None else {(1, 2): "one-two", (1, 3): "one-three"}
                           .get(tuple(a), "other")), g
        assert g["cm"] == ("k1" if m == {"k": 1} else "no"), g
        assert g["cr"] == ("r2" if rr == {"x": 2, "y": "b"} else None), g
        assert g["na"] == (None if a == [1, 2] else a), g
        assert g["nm"] == (None if m == {"k": 2} else m), g
        assert g["lit_eq"] is False and g["lit_cat"] == "abc", g


def test_refusals_in_flinks_words(cluster, workdir):
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "bad.sql", """
CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
SELECT CAST(NOW() AS BIGINT) FROM t;
""")
    assert r.returncode != 0
    assert "The cast from TIMESTAMP_LTZ type to NUMERIC type is not allowed" in r.stdout + r.stderr
    assert "line 3, column 8" in r.stdout + r.stderr


def test_proctime_into_a_timestamp_column_reads_the_session_zone(cluster, workdir):
    """PROCTIME() is a TIMESTAMP_LTZ(3): INSERT into a TIMESTAMP(3) column casts
    it through the session zone (Flink's implicit CAST), the same text as
    CAST(pt AS STRING); the json format writes the LTZ column as its UTC
    instant with a 'Z'."""
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "pt.sql", f"""
SET 'table.local-time-zone' = 'Asia/Shanghai';
CREATE TABLE src (id BIGINT, pt AS PROCTIME())
WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.id.kind' = 'sequence',
      'fields.id.start' = '1', 'fields.id.end' = '3');
CREATE TABLE sink (id BIGINT, l TIMESTAMP(3), s STRING, z TIMESTAMP_LTZ(3))
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, pt, CAST(pt AS STRING), pt AS pz FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    t0 = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    finish(cluster, job_ids(r.stdout)[0])
    t1 = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    got = rows(out)
    assert sorted(g["id"] for g in got) == [1, 2, 3]
    eight = datetime.timedelta(hours=8)  # Asia/Shanghai: no daylight saving time
    for g in got:
        local = datetime.datetime.fromisoformat(g["l"].replace("T", " "))
        assert g["s"].startswith(local.strftime("%Y-%m-%d %H:%M:%S")), g
        assert g["z"].endswith("Z"), g
        utc = datetime.datetime.fromisoformat(g["z"].rstrip("Z").replace("T", " "))
        assert local - utc == eight, g
        slack = datetime.timedelta(seconds=60)
        assert t0 - slack <= utc <= t1 + slack, (g, t0, t1)


# ---- text types of literals and of expressions over text ------------------------------

# (expression, Flink 2.3's DESCRIBE type and null column), each probed on Flink itself
# over t (x INT, s STRING, c CHAR(3), v VARCHAR(5)), every column nullable
TEXT_TYPES = [
    ("''", "CHAR(0)", "FALSE"),
    ("'a' || 'bc'", "CHAR(3)", "FALSE"),
    ("'' || 'a'", "CHAR(1)", "FALSE"),
    ("'ab' || c", "CHAR(5)", "TRUE"),
    ("c || v", "VARCHAR(8)", "TRUE"),
    ("v || v", "VARCHAR(10)", "TRUE"),
    ("'a' || s", "STRING", "TRUE"),
    ("CASE WHEN x > 0 THEN 'a' ELSE 'abc' END", "VARCHAR(3)", "FALSE"),
    ("CASE WHEN x > 0 THEN 'ab' ELSE 'cd' END", "CHAR(2)", "FALSE"),
    ("CASE WHEN x > 0 THEN '' ELSE 'ab' END", "VARCHAR(2)", "FALSE"),
    ("CASE x WHEN 1 THEN 'a' WHEN 2 THEN 'bb' END", "VARCHAR(2)", "TRUE"),
    ("CASE WHEN x > 0 THEN 'a' END", "CHAR(1)", "TRUE"),
    ("CASE WHEN x > 0 THEN c ELSE 'abcd' END", "VARCHAR(4)", "TRUE"),
    ("CASE WHEN x > 0 THEN v ELSE 'ab' END", "VARCHAR(5)", "TRUE"),
    ("COALESCE('a', 'bcd')", "VARCHAR(3)", "FALSE"),
    ("COALESCE(NULL, 'ab')", "CHAR(2)", "FALSE"),
    ("COALESCE('', 'a')", "VARCHAR(1)", "FALSE"),
    ("COALESCE(s, 'abc')", "STRING", "FALSE"),
    ("COALESCE(c, v)", "VARCHAR(5)", "TRUE"),
    ("IFNULL('a', 'bc')", "CHAR(1)", "FALSE"),
    ("IFNULL(c, 'abcd')", "VARCHAR(4)", "FALSE"),
    ("IFNULL(v, 'ab')", "VARCHAR(5)", "FALSE"),
    ("IF(x > 0, 'a', 'bcd')", "VARCHAR(3)", "TRUE"),
    ("IF(x > 0, 'ab', 'cd')", "CHAR(2)", "TRUE"),
    ("NULLIF('ab', 'c')", "CHAR(2)", "TRUE"),
    ("NULLIF(c, 'ab')", "CHAR(3)", "TRUE"),
    ("GREATEST('a', 'bc')", "VARCHAR(2)", "FALSE"),
    ("LEAST(c, 'ab')", "VARCHAR(3)", "TRUE"),
]


def test_text_types_of_literal_expressions_as_flink(cluster, workdir):
    """'' is CHAR(0) NOT NULL and expressions over literals take Flink's CHAR(n) /
    VARCHAR(n) (DESCRIBE of a view), also after the process's type table has
    taken over 3000 other types (every literal keeps its exact type: no fallback
    to STRING); a CTAS table's columns are the query's full types (SHOW CREATE
    TABLE, as Flink's); CHAR(0) in a table's schema is refused with Flink's words;
    the values are the literals' own (no padding where the type is a VARCHAR)."""
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for x in (1, -1, None):
            f.write(json.dumps({"x": x, "s": None, "c": "ab", "v": "v"}) + "\n")
    out = os.path.join(workdir, "out")
    items = ", ".join(f"{e} AS e{i}" for i, (e, _, _) in enumerate(TEXT_TYPES))
    # over 3000 distinct types first: VARCHAR(1) .. VARCHAR(3100)
    fill = "".join(
        f"CREATE VIEW f{b} AS SELECT COALESCE("
        + ", ".join(f"CAST(s AS VARCHAR({n}))" for n in range(b * 775 + 1, b * 775 + 776))
        + ") AS z FROM t;\n" for b in range(4))
    long_lit = "x" * 4000
    r = run_sql(cluster, workdir, "text.sql", f"""
CREATE TABLE t (x INT, s STRING, c CHAR(3), v VARCHAR(5))
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
{fill}CREATE VIEW tv AS SELECT {items}, '{long_lit}' AS lng, 'q' || '{long_lit}' AS lng2 FROM t;
DESCRIBE tv;
CREATE TABLE ctas WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json')
AS SELECT x, 'a' || 'bc' AS b, CASE WHEN x > 0 THEN 'a' ELSE 'abc' END AS cv,
  CASE WHEN x > 0 THEN 'ab' ELSE 'cd' END || '|' AS cc, COALESCE(s, 'none') AS co,
  IF(x > 0, '', 'yz') AS iv, CAST(1.5 AS DECIMAL(10, 2)) AS d FROM t;
SHOW CREATE TABLE ctas;
CREATE TABLE vals WITH ('connector' = 'filesystem', 'path' = 'file://{out}-v', 'format' = 'json')
AS SELECT * FROM (VALUES ('', 1), ('abc', 2), ('a' || '', 3)) AS v(s, n);
""")
    assert r.returncode == 0, r.stdout + r.stderr
    d = describe_cells(r.stdout)
    for i, (e, typ, null) in enumerate(TEXT_TYPES):
        assert d[f"e{i}"] == (typ, null), (e, d[f"e{i}"], typ, null)
    assert d["lng"] == ("CHAR(4000)", "FALSE") and d["lng2"] == ("CHAR(4001)", "FALSE"), d
    show = r.stdout[r.stdout.index("SHOW CREATE TABLE ctas"):]
    for col in ("`x` INT,", "`b` CHAR(3) NOT NULL,", "`cv` VARCHAR(3) NOT NULL,",
                "`cc` CHAR(3) NOT NULL,", "`co` STRING NOT NULL,", "`iv` VARCHAR(2),",
                "`d` DECIMAL(10, 2)"):
        assert col in show, (col, show)
    jids = job_ids(r.stdout)
    assert len(jids) == 2, r.stdout + r.stderr
    for j in jids:
        finish(cluster, j)
    # a later VALUES row is not cut to the first one's CHAR(0)
    assert sorted((g["n"], g["s"]) for g in rows(out + "-v")) == [(1, ""), (2, "abc"), (3, "a")]
    got = sorted((g["x"] is None, g["x"], g["b"], g["cv"], g["cc"], g["co"], g["iv"], g["d"])
                 for g in rows(out))
    want = sorted((x is None, x, "abc", "a" if x is not None and x > 0 else "abc",
                   ("ab" if x is not None and x > 0 else "cd") + "|", "none",
                   # IF of a NULL condition is its ELSE branch (as probed on Flink)
                   "" if x is not None and x > 0 else "yz", 1.5) for x in (1, -1, None))
    assert got == want, got
    for stmt in ("CREATE TABLE z (a CHAR(0)) WITH ('connector' = 'blackhole');",
                 "CREATE TABLE z WITH ('connector' = 'blackhole') AS SELECT '' AS a FROM t;"):
        r = run_sql(cluster, workdir, "bad.sql", f"""
CREATE TABLE t (x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
{stmt}
""")
        assert r.returncode != 0, stmt
        assert "Zero-length character strings have no serializable string representation." \
            in r.stdout + r.stderr, r.stdout + r.stderr


def test_view_marks_every_copy_of_a_time_attribute(cluster, workdir):
    """As Flink 2.3 (probed on it): a view selecting a table's processing-time
    attribute twice, a second PROCTIME() and its event-time attribute twice
    marks each such column (DESCRIBE), a CAST of one is a plain column, and a
    group window or a window TVF takes any copy: TUMBLE over the rowtime's
    copy counts exactly the model's windows, a processing-time TVF over the
    proctime's copy counts every row once."""
    from test_sql_groupwin import SEC, events, tumble, windows_model, write_events
    from test_sql import ms
    cluster.add_tm(slots=4)
    evs = events(120, seed=71, late=False)
    src = write_events(workdir, "e", evs)
    outs = {x: os.path.join(workdir, "out-" + x) for x in ("g", "p")}
    r = run_sql(cluster, workdir, "views.sql", f"""
SET 'pipeline.auto-watermark-interval' = '0 ms';
CREATE TABLE ev (id BIGINT, k STRING, v INT, s STRING, ts TIMESTAMP(3), pt AS PROCTIME(),
                 WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE VIEW w AS SELECT id, pt, pt AS pt2, PROCTIME() AS p3, ts, ts AS ts2,
  CAST(pt AS TIMESTAMP_LTZ(3)) AS pc FROM ev;
CREATE VIEW w2 AS SELECT id, pt2, ts2 FROM w;
DESCRIBE w;
DESCRIBE w2;
CREATE TABLE og (ws TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["g"]}', 'format' = 'json');
CREATE TABLE op (c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["p"]}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO og SELECT TUMBLE_START(ts2, INTERVAL '3' SECOND), COUNT(*) FROM w2
  GROUP BY TUMBLE(ts2, INTERVAL '3' SECOND);
INSERT INTO op SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(pt2), INTERVAL '1' HOUR))
  GROUP BY window_start, window_end;
END;
""".replace("{{src}}", src).replace('{outs["g"]}', outs["g"]).replace('{outs["p"]}', outs["p"]))
    assert r.returncode == 0, r.stdout + r.stderr
    d = describe_cells(r.stdout)
    for c in ("pt", "pt2", "p3"):
        assert d[c] == ("TIMESTAMP_LTZ(3) *PROCTIME*", "FALSE"), (c, d)
    for c in ("ts", "ts2"):
        assert d[c] == ("TIMESTAMP(3) *ROWTIME*", "TRUE"), (c, d)
    assert d["pc"][0] == "TIMESTAMP_LTZ(3)", d  # a CAST makes a plain column, as in Flink
    finish(cluster, job_ids(r.stdout)[0])
    want = {s: len(ws) for (s, e), ws in windows_model(evs, tumble(3 * SEC))[0].items()}
    assert {ms(g["ws"]): g["c"] for g in rows(outs["g"])} == want
    assert sum(g["c"] for g in rows(outs["p"])) == len(evs)
