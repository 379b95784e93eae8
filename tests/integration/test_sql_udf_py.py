"""Python scalar functions from SQL (docs/UDF.md): CREATE FUNCTION ...
LANGUAGE PYTHON over the PyFlink-style files in tests/udf_py/, run by the
interpreter embedded in the TaskManager at parallelism 2. Expected rows are
computed here by the same arithmetic in this process; the JobManager and
the SQL client never start an interpreter."""
import datetime
import json
import os

import pytest

from conftest import BUILD, ROOT
from test_ha import zk  # noqa: F401  (the ZooKeeper ensemble fixture, for the failover test)
from test_checkpoints import committed_files
from test_sql import finish, job_ids, rows, run_sql
from zk_ensemble import available as zk_available

PY = os.path.join(ROOT, "tests", "udf_py")
STRS = os.path.join(PY, "strs.py")


def seq(n):
    return f"""
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def line_of(text, path=STRS):
    with open(path) as f:
        return next(n for n, line in enumerate(f, 1) if text in line)


def create(*names, path=STRS):
    return "".join(f"CREATE FUNCTION {n} AS 'strs.{n}' LANGUAGE PYTHON USING JAR '{path}';\n"
                   for n in names)


def maps(pid):
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


@pytest.mark.parametrize("bundle", [
    "",  # the default: bundles of 1000 rows, 1 s
    "SET 'python.fn-execution.bundle.size' = '7';\nSET 'python.fn-execution.bundle.time' = '5 ms';",
    "SET 'python.fn-execution.bundle.size' = '1';",  # row by row
])
def test_scalar_functions_at_parallelism_2(cluster, workdir, bundle):
    cluster.add_tm(slots=2)
    n = 500
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "s.sql", create("mix", "tag", "nvl_neg", "half", "shout") +
                seq(n) + f"""
CREATE TABLE snk (id BIGINT, m BIGINT, t STRING, z BIGINT, h DOUBLE, s STRING)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
{bundle}
INSERT INTO snk
SELECT id, mix(id), tag(CONCAT('k', CAST(id % 7 AS STRING)), id * 2),
       nvl_neg(CASE WHEN id % 5 = 0 THEN CAST(NULL AS BIGINT) ELSE id END),
       half(id), shout(CASE WHEN id % 3 = 0 THEN 'é' || CAST(id AS STRING) ELSE '' END)
FROM src WHERE mix(id) % 3 <> 0;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    job = finish(cluster, jid)
    assert {v["parallelism"] for v in job["vertices"]} == {2}
    want = sorted((i, i * 31 + 7, f"k{i % 7}#{i * 2}", -1 if i % 5 == 0 else i, i / 2.0,
                   (f"É{i}!" if i % 3 == 0 else None))
                  for i in range(1, n + 1) if (i * 31 + 7) % 3 != 0)
    got = sorted((x["id"], x["m"], x["t"], x["z"], x["h"], x["s"]) for x in rows(out))
    assert len(want) > 300 and got == want
    # the interpreter lives in the TaskManager only
    tm_pid = cluster.tms[0].proc.pid
    assert "libpython3" in maps(tm_pid)
    assert "libpython3" not in maps(cluster.jm.proc.pid)


def test_a_bad_bundle_size_is_refused(cluster, workdir):
    r = run_sql(cluster, workdir, "b.sql", create("mix") + seq(5) + """
CREATE TABLE snk (m BIGINT) WITH ('connector' = 'blackhole');
SET 'python.fn-execution.bundle.size' = '0';
INSERT INTO snk SELECT mix(id) FROM src;
""")
    assert r.returncode != 0, r.stdout + r.stderr
    assert "python.fn-execution.bundle.size must be from 1 to 100000, not 0" in r.stdout, r.stdout


@pytest.mark.parametrize("fn,want", [
    ("boom", "function 'boom' failed: ZeroDivisionError: integer division or modulo by zero "
             f"(strs.py, line {line_of('return 10 // (x - 13)')}) (row 13 of subtask 0)"),
    ("too_big", "function 'too_big' failed: returned 10000000000, out of INT's range (row 1 of "
                "subtask 0)"),
    ("wrong_type", "function 'wrong_type' failed: returned a str where BIGINT was declared"),
])
def test_a_failing_function_fails_the_task_with_its_message(cluster, workdir, fn, want):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "f.sql", create(fn) + seq(50) + f"""
CREATE TABLE snk (v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO snk SELECT {fn}(id) FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["FAILED"], timeout=90)
    text = str(cluster.get(f"/jobs/{jid}/exceptions"))
    assert want in text, text


def test_a_syntax_error_is_refused_at_create_naming_the_line(cluster, workdir):
    """The client compiles the file with python3 (it runs nothing) at CREATE."""
    broken = os.path.join(PY, "broken.py")
    r = run_sql(cluster, workdir, "b.sql", f"""
CREATE FUNCTION f AS 'broken.f' LANGUAGE PYTHON USING JAR '{broken}';
""")
    assert r.returncode != 0, r.stdout + r.stderr
    assert f"{broken}, line 6: SyntaxError: '(' was never closed" in r.stdout, r.stdout


TABLES = os.path.join(PY, "tables.py")


def test_table_functions_at_parallelism_2(cluster, workdir):
    """@udtf functions in LATERAL TABLE and LEFT JOIN LATERAL TABLE ... ON TRUE:
    tuples, single values and Row, a generator and a list."""
    cluster.add_tm(slots=2)
    n = 300
    o1, o2 = os.path.join(workdir, "words"), os.path.join(workdir, "upto")
    r = run_sql(cluster, workdir, "t.sql", f"""
CREATE FUNCTION split_words AS 'tables.split_words' LANGUAGE PYTHON USING JAR '{TABLES}';
CREATE FUNCTION upto AS 'tables.upto' LANGUAGE PYTHON USING JAR '{TABLES}';
CREATE TABLE src (id BIGINT,
                  line AS CONCAT('a', CAST(id % 3 AS STRING), '  b', CAST(id % 7 AS STRING)))
  WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE s1 (id BIGINT, w STRING, p INT)
  WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE s2 (id BIGINT, v BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO s1 SELECT id, w, p FROM src, LATERAL TABLE(split_words(line)) AS t(w, p);
INSERT INTO s2 SELECT id, v FROM src LEFT JOIN LATERAL TABLE(upto(id)) AS t(v) ON TRUE;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for jid in job_ids(r.stdout):
        finish(cluster, jid)
    want1 = sorted(x for i in range(1, n + 1)
                   for x in ((i, f"a{i % 3}", 1), (i, f"b{i % 7}", 3)))
    assert sorted((x["id"], x["w"], x["p"]) for x in rows(o1)) == want1
    want2 = sorted((i, v) for i in range(1, n + 1)
                   for v in (list(range(i % 4)) if i % 4 else [None]))
    got2 = sorted(((x["id"], x["v"]) for x in rows(o2)), key=lambda t: (t[0], -1 if t[1] is None else t[1]))
    assert got2 == sorted(want2, key=lambda t: (t[0], -1 if t[1] is None else t[1]))


def test_a_failing_table_function_fails_the_task(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "f.sql", f"""
CREATE FUNCTION bad_width AS 'tables.bad_width' LANGUAGE PYTHON USING JAR '{TABLES}';
""" + seq(10) + f"""
CREATE TABLE snk (id BIGINT, a BIGINT, b BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO snk SELECT id, a, b FROM src, LATERAL TABLE(bad_width(id)) AS t(a, b);
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["FAILED"], timeout=90)
    text = str(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "function 'bad_width' failed: yielded a row of 3 values, 2 columns were declared " \
           "(row 1 of subtask 0)" in text, text


@pytest.mark.parametrize("stmt,want", [
    (f"CREATE FUNCTION f AS 'strs.nope' LANGUAGE PYTHON USING JAR '{STRS}';",
     f"{STRS}: no top-level 'def nope(', 'class nope' or 'nope = udf(...)' in the file"),
    (f"CREATE FUNCTION f AS 'strs.undecorated' LANGUAGE PYTHON USING JAR '{STRS}';",
     f"{STRS}, line {line_of('def undecorated')}: 'undecorated' has no @udf(result_type=..., "
     "input_types=[...]), @udtf(result_types=[...], input_types=[...]) or udaf(...) declaration"),
    (f"CREATE FUNCTION f AS 'partial.no_inputs' LANGUAGE PYTHON USING JAR '{PY}/partial.py';",
     "partial.py, line 5: @udf must declare input_types= (Sluice type-checks calls without "
     "running the file)"),
    (f"CREATE FUNCTION f AS 'partial.rows' LANGUAGE PYTHON USING JAR '{PY}/partial.py';",
     "partial.py, line 10: @udtf must declare input_types= (Sluice type-checks calls"),
    (f"CREATE FUNCTION f AS 'partial.total' LANGUAGE PYTHON USING JAR '{PY}/partial.py';",
     "partial.py, line 20: udaf over a function is PyFlink's Pandas aggregate (func_type='pandas')"),
    (f"CREATE FUNCTION f AS 'partial.dec' LANGUAGE PYTHON USING JAR '{PY}/partial.py';",
     "partial.py, line 15: @udf: type DECIMAL(40, 2): Python functions take BOOLEAN, INT, "
     "BIGINT, DOUBLE, DECIMAL(p, s), STRING, BYTES, TIMESTAMP(3), TIMESTAMP_LTZ(3) and DATE"),
    (f"CREATE FUNCTION f AS 'mix' LANGUAGE PYTHON USING JAR '{STRS}';",
     "a Python function is named 'module.function', not 'mix'"),
    ("CREATE FUNCTION f AS 'strs.mix' LANGUAGE PYTHON;",
     "name the Python file of 'strs.mix' with USING JAR '/path/strs.py'"),
    (create("mix") + seq(5) + "SELECT mix('a') FROM src;",
     "argument 1 of 'mix' must be BIGINT, got CHAR(1)"),
])
def test_bad_declarations_are_clear_errors_at_create(cluster, workdir, stmt, want):
    r = run_sql(cluster, workdir, "e.sql", stmt + "\n")
    assert r.returncode != 0 and want in r.stdout, r.stdout + r.stderr


def test_describe_a_python_function(cluster, workdir):
    r = run_sql(cluster, workdir, "d.sql", create("tag") + "DESCRIBE FUNCTION tag;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    for want in ("strs.tag", "PYTHON", "STRING tag(STRING, BIGINT)", STRS):
        assert want in r.stdout, r.stdout


def test_alter_function_changes_what_later_jobs_call(cluster, workdir):
    """ALTER FUNCTION as Flink's (not of temporary functions; IF EXISTS): a C
    function altered into a Python one; the next job calls the new one."""
    cluster.add_tm(slots=1)
    funcs = os.path.join(BUILD, "plugins", "udf_funcs.so")
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "a.sql", f"""
CREATE FUNCTION f AS 'mix' LANGUAGE C USING JAR '{funcs}';
ALTER FUNCTION f AS 'strs.nvl_neg' LANGUAGE PYTHON USING JAR '{STRS}';
ALTER FUNCTION IF EXISTS nope AS 'strs.mix' LANGUAGE PYTHON;
DESCRIBE FUNCTION f;
""" + seq(40) + f"""
CREATE TABLE snk (id BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO snk SELECT id, f(CASE WHEN id % 4 = 0 THEN CAST(NULL AS BIGINT) ELSE id END) FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "strs.nvl_neg" in r.stdout and "PYTHON" in r.stdout, r.stdout
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted((x["id"], x["v"]) for x in rows(out)) == \
        [(i, -1 if i % 4 == 0 else i) for i in range(1, 41)]
    for stmt, want in [
            ("CREATE TEMPORARY FUNCTION t AS 'strs.mix' LANGUAGE PYTHON USING JAR '%s';\n"
             "ALTER TEMPORARY FUNCTION t AS 'strs.tag' LANGUAGE PYTHON;" % STRS,
             "line 2, column 1: Alter temporary catalog function is not supported"),
            ("ALTER TEMPORARY SYSTEM FUNCTION t AS 'strs.tag' LANGUAGE PYTHON;",
             "line 1, column 1: Alter temporary system function is not supported"),
            ("ALTER FUNCTION nope AS 'strs.tag' LANGUAGE PYTHON;",
             "line 1, column 1: Function default_database.nope does not exist in Catalog "
             "default_catalog."),
            ("CREATE FUNCTION g AS 'strs.mix' LANGUAGE PYTHON USING JAR '%s';\n"
             "ALTER FUNCTION g AS 'strs.undecorated' LANGUAGE PYTHON;" % STRS,
             "'undecorated' has no @udf")]:
        r = run_sql(cluster, workdir, "ae.sql", stmt + "\n")
        assert r.returncode != 0 and want in r.stdout, (stmt, r.stdout + r.stderr)


def test_a_job_with_python_and_c_functions_across_a_savepoint(make_cluster, workdir):
    """A Python scalar function feeding a C aggregate function: stop with a
    savepoint mid-stream, restore at parallelism 1 from a new session (the
    functions are created again, their files shipped again); the changelog
    across the seam ends at the model's table."""
    from test_checkpoints import committed_files
    from test_sql_udf_agg import AGGS, apply_changelog
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": "rocksdb"})
    n, mod = 6000, 17
    out = os.path.join(workdir, "out")

    def script(rate, p, extra):
        return create("mix") + f"""
CREATE FUNCTION wsum AS 'wsum' LANGUAGE C USING JAR '{AGGS}';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE snk (k BIGINT, ws BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '{p}';
{extra}
INSERT INTO snk SELECT id % {mod} AS k, wsum(mix(id), id % 3) AS ws FROM src GROUP BY id % {mod};
"""
    r = run_sql(c, workdir, "run1.sql", script(1000, 2, ""))
    assert r.returncode == 0, r.stdout + r.stderr
    sp = c.stop_after_progress(job_ids(r.stdout)[0], "src", n // 6, os.path.join(workdir, "sp"))
    run1 = committed_files(out)
    table1, _ = apply_changelog(run1, ["k"])
    r = run_sql(c, workdir, "run2.sql", script(100000, 1, f"SET 'execution.savepoint.path' = '{sp}';"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1
    table, _ = apply_changelog([p for p in committed_files(out) if p not in run1], ["k"],
                               dict(table1))
    want = {}
    for i in range(1, n + 1):
        want[i % mod] = want.get(i % mod, 0) + (i * 31 + 7) * (i % 3)
    assert table == {(k,): {"k": k, "ws": v} for k, v in want.items()}


@pytest.mark.skipif(zk_available() is not None, reason=str(zk_available()))
def test_functions_survive_a_jobmanager_failover(workdir, zk):  # noqa: F811
    """High availability: a SQL job calling a Python and a C function runs
    on a ZooKeeper-led cluster; the leader is SIGKILLed mid-run and the next
    leader recovers the job from the job store -- the Python module's text
    in the graph, the C object beside it -- and the committed table is
    exact."""
    import subprocess
    import test_ha
    from conftest import BIN
    from test_checkpoints import committed_files
    from test_sql_udf_agg import AGGS, apply_changelog
    c = test_ha.HACluster(workdir, zk, njm=2, ntm=1, slots=2,
                          jm_conf={"execution.checkpointing.interval": "300 ms"})
    try:
        leader = c.leader()
        n, mod = 8000, 13
        out = os.path.join(workdir, "out")
        path = os.path.join(workdir, "ha.sql")
        with open(path, "w") as f:
            f.write(create("mix") + f"""
CREATE FUNCTION wsum AS 'wsum' LANGUAGE C USING JAR '{AGGS}';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE snk (k BIGINT, ws BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO snk SELECT id % {mod} AS k, wsum(mix(id), 1) AS ws FROM src GROUP BY id % {mod};
""")
        r = subprocess.run([os.path.join(BIN, "sluice"), "-m", f"127.0.0.1:{leader.rest_port}",
                            "sql", "-f", path], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        test_ha.kill_leader_and_wait(c, jid, restart=False)
        new = c.leader(exclude=(leader,))
        assert c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], new, timeout=120) == \
            "FINISHED", c.get(f"/jobs/{jid}/exceptions", new)
        table, _ = apply_changelog(committed_files(out), ["k"])
        want = {}
        for i in range(1, n + 1):
            want[i % mod] = want.get(i % mod, 0) + i * 31 + 7
        assert table == {(k,): {"k": k, "ws": v} for k, v in want.items()}
    finally:
        problems = c.shutdown()
        assert not problems, "\n".join(problems)


TIMES = os.path.join(PY, "times.py")


def exact_ms(text):
    """A TIMESTAMP as Sluice writes it, to ms since the epoch (integer arithmetic); a
    TIMESTAMP_LTZ column's value is its UTC instant with a 'Z'."""
    text = text.rstrip("Z")
    d = datetime.datetime.strptime(text + ("" if "." in text else ".0"), "%Y-%m-%d %H:%M:%S.%f")
    return (d - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1)


def test_timestamp_and_date_arguments_and_results(cluster, workdir):
    """datetime.datetime for TIMESTAMP / TIMESTAMP_LTZ (naive, UTC; an aware
    result is converted), datetime.date for DATE, both ways, before and after
    1970, at parallelism 2."""
    cluster.add_tm(slots=2)
    n = 300
    out = os.path.join(workdir, "out")
    fns = "".join(f"CREATE FUNCTION {f} AS 'times.{f}' LANGUAGE PYTHON USING JAR '{TIMES}';\n"
                  for f in ("plus_days", "day_of", "iso", "aware"))
    r = run_sql(cluster, workdir, "t.sql", fns + f"""
CREATE TABLE src (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 3196800007 - 500000000000, 3))
  WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE snk (id BIGINT, p TIMESTAMP(3), d DATE, s STRING, a TIMESTAMP_LTZ(3))
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO snk SELECT id, plus_days(ts, id), day_of(ts), iso(day_of(ts)), aware(id * 1000003)
FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    epoch = datetime.datetime(1970, 1, 1)
    got, want = {}, {}
    for row in (json.loads(x) for p in committed_files(out) for x in open(p)):
        got[row["id"]] = (exact_ms(row["p"]), row["d"], row["s"], exact_ms(row["a"]))
    for i in range(1, n + 1):
        t = i * 3196800007 - 500000000000
        when = epoch + datetime.timedelta(milliseconds=t)
        want[i] = (t + i * 86400000 + i, when.date().isoformat(),
                   "%s/%d" % (when.date().isoformat(), when.date().weekday()), i * 1000003)
    assert got == want


def test_a_result_of_the_wrong_type_for_a_date(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "t.sql", f"""
CREATE FUNCTION not_a_date AS 'times.not_a_date' LANGUAGE PYTHON USING JAR '{TIMES}';
""" + seq(5) + f"""
CREATE TABLE snk (d DATE) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO snk SELECT not_a_date(id) FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["FAILED"], timeout=90)
    text = str(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "function 'not_a_date' failed: returned a str where DATE was declared (row 1 of " \
           "subtask 0)" in text, text


# ---- DECIMAL(p, s) ------------------------------------------------------------

DECS = os.path.join(PY, "decs.py")


def create_dec(*names):
    return "".join(f"CREATE FUNCTION {n} AS 'decs.{n}' LANGUAGE PYTHON USING JAR '{DECS}';\n"
                   for n in names)


def dec_rows(out_dir):
    """The sink's JSON rows with numbers read as decimal.Decimal (exact)."""
    import decimal
    import glob
    got = []
    for path in sorted(glob.glob(os.path.join(out_dir, "part-*"))):
        with open(path) as f:
            got += [json.loads(line, parse_float=decimal.Decimal) for line in f if line.strip()]
    return got


def dec_source(workdir, n):
    """n rows of exact DECIMAL text: amounts with cents, rates of 4 digits, 38-digit values."""
    from decimal import Decimal
    src = os.path.join(workdir, "decsrc")
    os.makedirs(src)
    data = []
    for i in range(1, n + 1):
        amount = None if i % 17 == 0 else Decimal(i * 7919 % 1000003) / 100 * (-1 if i % 5 == 0 else 1)
        rate = Decimal(i * 37 % 2000) / 10000
        big = Decimal(f"{i * 98765432109876543 % 10 ** 20}.{i * 123456789 % 10 ** 18:018d}")
        if i % 2:
            big = -big
        data.append((i, amount, rate, big))
    with open(os.path.join(src, "part-0.csv"), "w") as f:
        for i, a, r, b in data:
            f.write(f"{i},{'' if a is None else a},{r},{b}\n")
    return src, data


def test_decimal_scalar_and_table_functions_are_exact(cluster, workdir):
    """DECIMAL(p, s) in and out of Python functions at parallelism 2: arguments
    are decimal.Decimal of exactly s fraction digits (a BIGINT and a wider
    DECIMAL cast to the declared type, as Flink casts implicitly), results
    rounded HALF_EVEN to the declared scale as PyFlink's coder quantizes,
    38-digit values unchanged; a table function yields DECIMAL columns. The
    model is Python's decimal module, here."""
    from decimal import Decimal, ROUND_HALF_EVEN, Context
    cluster.add_tm(slots=2)
    n = 400
    src, data = dec_source(workdir, n)
    out, tout = os.path.join(workdir, "out"), os.path.join(workdir, "tout")
    r = run_sql(cluster, workdir, "d.sql", create_dec("with_fee", "shape", "flip", "split") + f"""
CREATE TABLE s (id BIGINT, amount DECIMAL(10, 2), rate DECIMAL(5, 4), big DECIMAL(38, 18))
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv');
CREATE TABLE snk (id BIGINT, fee DECIMAL(12, 2), sh STRING, si STRING, fl DECIMAL(38, 18))
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE tsnk (id BIGINT, part DECIMAL(10, 2), idx INT)
  WITH ('connector' = 'filesystem', 'path' = '{tout}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO snk SELECT id, with_fee(amount, rate), shape(amount), shape(id), flip(big) FROM s;
INSERT INTO tsnk SELECT id, part, idx FROM s, LATERAL TABLE(split(amount, CAST(id % 4 AS INT))) AS t(part, idx);
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])

    def q(v, p, s):
        return v.quantize(Decimal(1).scaleb(-s), rounding=ROUND_HALF_EVEN, context=Context(prec=p))

    def shape(x):
        return "None" if x is None else "Decimal:%s:%d" % (x, x.as_tuple().exponent)

    want, twant = [], []
    for i, a, rt, b in data:
        a2 = None if a is None else q(a, 10, 2)
        fee = None if a2 is None else q(a2 * (1 + rt), 12, 2)
        want.append((i, fee, shape(a2), shape(Decimal(i).quantize(Decimal("0.01"))), b.copy_negate()))
        k = i % 4
        if a2 is not None and k:
            part = (a2 / k).quantize(Decimal("0.01"))
            twant += [(i, part, j) for j in range(k - 1)] + [(i, a2 - part * (k - 1), k - 1)]
    got = sorted((x["id"], x["fee"], x["sh"], x["si"], x["fl"]) for x in dec_rows(out))
    assert got == sorted(want)
    # the scales survive exactly: 12.50 stays 12.50, not 12.5
    assert any(s.endswith("0:-2") for _, _, s, _, _ in got)
    tgot = sorted((x["id"], x["part"], x["idx"]) for x in dec_rows(tout))
    assert len(twant) > 300 and tgot == sorted(twant)


@pytest.mark.parametrize("fn,want", [
    ("grow", "function 'grow' failed: decimal.InvalidOperation: returned 100000.00, which does "
             "not fit DECIMAL(5, 2)"),
    ("as_float", "function 'as_float' failed: returned a float where DECIMAL(10, 2) was "
                 "declared (return a decimal.Decimal or an int)"),
])
def test_a_decimal_result_that_does_not_fit_fails_the_task(cluster, workdir, fn, want):
    """As PyFlink's coder: a result of more digits than the declared precision
    is decimal.InvalidOperation, a float is no DECIMAL -- the task fails."""
    cluster.add_tm(slots=1)
    arg = "CAST(id AS DECIMAL(10, 2))" if fn == "grow" else "id"
    r = run_sql(cluster, workdir, "f.sql", create_dec(fn) + seq(500) + f"""
CREATE TABLE snk (d DECIMAL(10, 2)) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT {fn}({arg}) FROM src WHERE id >= 100;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["FAILED"], timeout=90)
    text = str(cluster.get(f"/jobs/{jid}/exceptions"))
    assert want in text, text


def test_decimal_arguments_are_type_checked_at_planning(cluster, workdir):
    r = run_sql(cluster, workdir, "e.sql", create_dec("with_fee") + seq(5) +
                "SELECT with_fee(CAST(id AS DOUBLE), 0.5) FROM src;\n")
    assert r.returncode != 0
    assert "argument 1 of 'with_fee' must be DECIMAL(10, 2), got DOUBLE" in r.stdout, r.stdout
    r = run_sql(cluster, workdir, "d.sql", create_dec("with_fee") + "DESCRIBE FUNCTION with_fee;\n")
    assert "DECIMAL(12, 2) with_fee(DECIMAL(10, 2), DECIMAL(5, 4))" in r.stdout, r.stdout
