"""User-defined C functions from SQL (docs/UDF.md): CREATE FUNCTION over
shared objects the test suite builds (tests/plugins/udf_*.c), called from
jobs at parallelism 2 on a real cluster. Expected rows are computed here by
a Python model of each function over the same sequence input; the
JobManager never maps a function's object."""
import os
import re

from conftest import wait_for, BUILD
from test_sql import run_sql, job_ids, rows, finish

PLUGINS = os.path.join(BUILD, "plugins")
FUNCS = os.path.join(PLUGINS, "udf_funcs.so")
M64 = (1 << 64) - 1


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def mix(x):
    return s64(x * 31 + 7)


def seq(name, n, extra=""):
    return f"""
CREATE TABLE {name} (id BIGINT{extra}) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def jm_maps(cluster):
    with open(f"/proc/{cluster.jm.proc.pid}/maps") as f:
        return f.read()


def start(cluster):
    cluster.add_tm(slots=2)


def test_scalar_functions_at_parallelism_2(cluster, workdir):
    start(cluster)
    n = 400
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "s.sql", f"""
CREATE FUNCTION mix AS 'mix' LANGUAGE C USING JAR '{FUNCS}';
ADD JAR '{FUNCS}';
CREATE TEMPORARY FUNCTION tag AS 'tag';
CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS nvl_neg AS 'nvl_neg';
CREATE FUNCTION half AS 'half';
""" + seq("src", n) + f"""
CREATE TABLE snk (id BIGINT, m BIGINT, t STRING, z BIGINT, h DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO snk
SELECT id, mix(id), tag(CONCAT('k', CAST(id % 7 AS STRING)), id * 2),
       nvl_neg(CASE WHEN id % 5 = 0 THEN CAST(NULL AS BIGINT) ELSE id END),
       half(id)
FROM src WHERE mix(id) % 3 <> 0;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    want = sorted((i, mix(i), f"k{i % 7}#{i * 2}", -1 if i % 5 == 0 else i, i / 2.0)
                  for i in range(1, n + 1) if mix(i) % 3 != 0)
    got = sorted((x["id"], x["m"], x["t"], x["z"], x["h"]) for x in rows(out))
    assert len(want) > 200 and got == want
    # the rows were computed on the TaskManager; the JobManager never mapped the object
    assert "udf_funcs.so" not in jm_maps(cluster)


def test_table_functions_cross_and_left_lateral(cluster, workdir):
    start(cluster)
    n = 300
    o1, o2, o3 = (os.path.join(workdir, x) for x in ("cross", "comma", "left"))
    r = run_sql(cluster, workdir, "t.sql", f"""
CREATE FUNCTION upto AS 'upto' USING JAR '{FUNCS}';
CREATE FUNCTION split_words AS 'split_words' USING JAR '{FUNCS}';
CREATE FUNCTION mix AS 'mix' USING JAR '{FUNCS}';
""" + seq("src", n) + f"""
CREATE TABLE cross_out (id BIGINT, i BIGINT, m BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE comma_out (id BIGINT, w STRING, p INT)
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
CREATE TABLE left_out (id BIGINT, i BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o3}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO cross_out SELECT s.id, t.i, mix(t.i + s.id)
  FROM src AS s CROSS JOIN LATERAL TABLE(upto(s.id % 4)) AS t(i) WHERE t.i <> 2;
INSERT INTO comma_out SELECT id, word, pos
  FROM src, LATERAL TABLE(split_words(CONCAT('a', CAST(id AS STRING), '  b', CAST(id % 3 AS STRING))));
INSERT INTO left_out SELECT id, x
  FROM src LEFT JOIN LATERAL TABLE(upto(id % 3)) AS u(x) ON TRUE;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    want1 = sorted((i, k, mix(k + i)) for i in range(1, n + 1) for k in range(i % 4) if k != 2)
    got1 = sorted((x["id"], x["i"], x["m"]) for x in rows(o1))
    assert len(want1) > 300 and got1 == want1
    want2 = sorted([(i, f"a{i}", 1) for i in range(1, n + 1)] + [(i, f"b{i % 3}", 2) for i in range(1, n + 1)])
    assert sorted((x["id"], x["w"], x["p"]) for x in rows(o2)) == want2
    want3 = sorted([(i, k) for i in range(1, n + 1) for k in range(i % 3)] +
                   [(i, None) for i in range(1, n + 1) if i % 3 == 0], key=lambda t: (t[0], -1 if t[1] is None else t[1]))
    got3 = sorted(((x["id"], x.get("i")) for x in rows(o3)), key=lambda t: (t[0], -1 if t[1] is None else t[1]))
    assert got3 == want3
    assert "udf_funcs.so" not in jm_maps(cluster)


def test_bad_functions_are_clear_errors(cluster, workdir):
    start(cluster)
    bad = os.path.join(PLUGINS, "udf_bad_sig.so")
    nosym = os.path.join(PLUGINS, "udf_nosym.so")
    cases = [
        (f"CREATE FUNCTION w AS 'weird' USING JAR '{bad}';",
         "line 1, column 30: " + bad + ": bad declaration \"sluice-udf 1|scalar|weird|DECIMAL(40, 2)|BIGINT|"
         "deterministic strict\": unknown result type 'DECIMAL(40, 2)'"),
        (f"CREATE FUNCTION h AS 'hidden' USING JAR '{nosym}';",
         f"line 1, column 1: {nosym} declares 'hidden' but does not export a function of that name"),
        (f"CREATE FUNCTION x AS 'nope' USING JAR '{FUNCS}';",
         f"line 1, column 29: {FUNCS} declares no function 'nope' (it declares crash_rows, crash, upto, split_words, "),
        ("CREATE FUNCTION p AS 'mod.f' LANGUAGE JAVA;",
         "line 1, column 39: LANGUAGE JAVA is not supported"),
        (f"CREATE SYSTEM FUNCTION s AS 'mix' USING JAR '{FUNCS}';",
         "CREATE SYSTEM FUNCTION is not supported"),
        (f"CREATE FUNCTION `upper` AS 'mix' USING JAR '{FUNCS}';",
         "'upper' is a built-in function"),
        (f"CREATE FUNCTION mix AS 'mix' USING JAR '{FUNCS}';\n" + seq("src", 5) +
         "SELECT mix('a') FROM src;", "line 5, column 12: argument 1 of 'mix' must be BIGINT, got CHAR(1)"),
        (f"CREATE FUNCTION mix AS 'mix' USING JAR '{FUNCS}';\n" + seq("src", 5) +
         "SELECT mix(id, id) FROM src;", "line 5, column 8: function 'mix' takes 1 argument (BIGINT mix(BIGINT)), got 2"),
        (f"CREATE FUNCTION upto AS 'upto' USING JAR '{FUNCS}';\n" + seq("src", 5) +
         "SELECT upto(id) FROM src;", "line 5, column 8: 'upto' is a table function"),
        (f"CREATE FUNCTION mix AS 'mix' USING JAR '{FUNCS}';\n" + seq("src", 5) +
         "SELECT * FROM src, LATERAL TABLE(mix(id));", "line 5, column 34: 'mix' is a scalar function"),
        ("DROP FUNCTION nope;", "line 1, column 1: Function nope does not exist"),
        ("REMOVE JAR '/x.so';", "The jar '/x.so' was not added"),
    ]
    for i, (text, want) in enumerate(cases):
        r = run_sql(cluster, workdir, f"e{i}.sql", text + "\n")
        assert r.returncode != 0 and want in r.stdout, (text, r.stdout + r.stderr)
        assert "Traceback" not in r.stderr and "Sanitizer" not in r.stderr
    # the session's statements themselves
    r = run_sql(cluster, workdir, "ok.sql", f"""
ADD JAR '{FUNCS}';
CREATE FUNCTION mix AS 'mix';
CREATE FUNCTION IF NOT EXISTS mix AS 'tag';
SHOW USER FUNCTIONS;
SHOW JARS;
DESCRIBE FUNCTION mix;
DROP TEMPORARY FUNCTION mix;
DROP FUNCTION IF EXISTS mix;
REMOVE JAR '{FUNCS}';
SHOW JARS;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "|           mix |\n+---------------+\n1 row in set" in r.stdout
    assert re.search(r"\|\s+signature \|\s+BIGINT mix\(BIGINT\) \|", r.stdout)
    assert r.stdout.rstrip().endswith("Empty set"), r.stdout


def test_a_failing_function_fails_the_task_with_its_message(cluster, workdir):
    start(cluster)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "f.sql", f"""
CREATE FUNCTION unlucky AS 'unlucky' USING JAR '{FUNCS}';
""" + seq("src", 50) + f"""
CREATE TABLE snk (v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO snk SELECT unlucky(id) FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["FAILED"], timeout=90)
    ex = cluster.get(f"/jobs/{jid}/exceptions")
    text = str(ex)
    assert "function 'unlucky' failed: 13 is unlucky (row 13 of subtask 0)" in text, text


# ---- DECIMAL(p, s) in C functions ----------------------------------------------

DECFNS = os.path.join(PLUGINS, "udf_decimal.so")


def test_decimal_scalar_table_and_aggregate_c_functions_are_exact(cluster, workdir):
    """DECIMAL(p, s) in and out of C functions (tests/plugins/udf_decimal.c)
    at parallelism 2: arguments arrive as unscaled values at the declared
    scale (a BIGINT cast to DECIMAL(10, 2) first, as Flink casts
    implicitly), results and emitted columns are read at the declared
    scale, 38-digit values pass unchanged; an aggregate sums exactly over
    an updating input. The model is Python's decimal module."""
    import collections
    from decimal import Decimal, ROUND_HALF_UP, ROUND_DOWN
    from test_sql_udf_py import dec_source, dec_rows
    from test_sql_subquery import apply_changes
    from test_checkpoints import committed_files
    cluster.add_tm(slots=2)
    n = 400
    src, data = dec_source(workdir, n)
    out, tout, aout = (os.path.join(workdir, d) for d in ("out", "tout", "aout"))
    fns = "".join(f"CREATE FUNCTION {f} AS '{f}' LANGUAGE C USING JAR '{DECFNS}';\n"
                  for f in ("fee", "flip", "parts", "dsum"))
    r = run_sql(cluster, workdir, "d.sql", fns + f"""
CREATE TABLE s (id BIGINT, amount DECIMAL(10, 2), rate DECIMAL(5, 4), big DECIMAL(38, 18))
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv');
CREATE TABLE snk (id BIGINT, f DECIMAL(12, 2), fi DECIMAL(12, 2), fl DECIMAL(38, 18))
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE tsnk (id BIGINT, part DECIMAL(10, 2), idx INT)
  WITH ('connector' = 'filesystem', 'path' = '{tout}', 'format' = 'json');
CREATE TABLE asnk (c BIGINT, total DECIMAL(38, 2))
  WITH ('connector' = 'filesystem', 'path' = '{aout}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO snk SELECT id, fee(amount, rate), fee(id, rate), flip(big) FROM s;
INSERT INTO tsnk SELECT id, part, idx FROM s, LATERAL TABLE(parts(amount, CAST(id % 4 AS INT))) AS t(part, idx);
INSERT INTO asnk SELECT c, dsum(last_amount) FROM (
    SELECT id % 7 AS k, COUNT(*) AS c, MAX(amount) AS last_amount FROM s GROUP BY id % 7
) GROUP BY c;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    cent = Decimal("0.01")

    def fee(a, rt):
        return None if a is None else (a * (1 + rt)).quantize(cent, rounding=ROUND_HALF_UP)

    want, twant = [], []
    for i, a, rt, b in data:
        want.append((i, fee(a, rt), fee(Decimal(i), rt), b.copy_negate()))
        k = i % 4
        if a is not None and k:
            each = (a / k).quantize(cent, rounding=ROUND_DOWN)
            twant += [(i, each, j) for j in range(k - 1)] + [(i, a - each * (k - 1), k - 1)]
    got = sorted((x["id"], x["f"], x["fi"], x["fl"]) for x in dec_rows(out))
    assert got == sorted(want)
    tgot = sorted((x["id"], x["part"], x["idx"]) for x in dec_rows(tout))
    assert len(twant) > 300 and tgot == sorted(twant)
    # the inner GROUP BY's final rows: per key its count and largest amount; the
    # outer sums the largest amounts per count (through the inner's retractions)
    per = collections.defaultdict(list)
    for i, a, _, _ in data:
        per[i % 7].append(a)
    awant = collections.Counter()
    for vals in per.values():
        top = max((v for v in vals if v is not None), default=None)
        awant[len(vals)] += top if top is not None else 0
    import json as _json
    bag = collections.Counter()
    for path in committed_files(aout):
        with open(path) as f:
            for line in f:
                row = _json.loads(line, parse_float=Decimal)
                op = row.pop("op", "+I")
                key = (row["c"], row["total"])
                bag[key] += 1 if op in ("+I", "+U") else -1
    assert +bag == collections.Counter({(c, t): 1 for c, t in awant.items()})
    assert "udf_decimal.so" not in jm_maps(cluster)


def test_a_c_function_decimal_result_too_wide_fails_the_task(cluster, workdir):
    start(cluster)
    r = run_sql(cluster, workdir, "w.sql", f"""
CREATE FUNCTION shrink AS 'shrink' LANGUAGE C USING JAR '{DECFNS}';
""" + seq("src", 500) + """
CREATE TABLE snk (d DECIMAL(5, 2)) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT shrink(CAST(id * 10 AS DECIMAL(10, 2))) FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["FAILED"], timeout=90)
    text = str(cluster.get(f"/jobs/{jid}/exceptions"))
    assert ("function 'shrink' returned an unscaled DECIMAL of more than 5 digits where "
            "DECIMAL(5, 2) was declared") in text, text
