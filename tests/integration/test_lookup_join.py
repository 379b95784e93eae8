"""Processing-time lookup joins from SQL (operators/lookup_join.c, planned
by sql/plan_join.c): `s JOIN t FOR SYSTEM_TIME AS OF s.p_time AS d ON ...`
with p_time a PROCTIME() of the query and t a 'filesystem' CSV table, run
by real daemons at parallelism 2; the rows this test wrote give the exact
expected output.

- INNER and LEFT, with an expression key on the stream side
  (MOD(B.id, 100) = S.k, as Nexmark q13), duplicate table keys (several
  rows per match), keys the table lacks and rows with a NULL key.
- Checkpointed: a TaskManager killed mid-run, the job restored from a
  checkpoint (the operator keeps no state and loads the table again at
  open); the exactly-once file sink holds each expected row once.
- Bad inputs: a missing side file and a malformed side row fail the job
  naming the file (and line); a kafka or datagen table cannot be looked up
  (a planning error naming the table and connector).
"""
import collections
import json
import os
import signal

from conftest import failover_conf
from test_checkpoints import committed_files, read_rows, wait_completed
from test_sql import finish, job_ids, rows, run_sql

N = 3000


def write_stream(path, n=N):
    """ids 1..n as JSON lines: id, name 'n<id % 7>'; every 50th id has a NULL
    key column (kk)."""
    with open(path, "w") as f:
        for i in range(1, n + 1):
            f.write(json.dumps({"id": i, "kk": None if i % 50 == 0 else i}) + "\n")


def side_rows():
    """key -> its values, in file order: keys 0..99 except multiples of 7
    (no match), keys divisible by 5 twice, a quoted value with a comma."""
    side = collections.OrderedDict()
    for k in range(100):
        if k % 7 == 0:
            continue
        side[k] = [f"v{k}"] + ([f"w{k},x"] if k % 5 == 0 else [])
    return side


def write_side(path, side):
    with open(path, "w") as f:
        for k, vals in side.items():
            f.write(f"{k},{vals[0]}\n")
        f.write("\n")
        for k, vals in side.items():  # second rows after the first ones: file order
            for v in vals[1:]:
                f.write(f'{k},"{v}"\n')


def expected(side, left, n=N):
    got = collections.Counter()
    for i in range(1, n + 1):
        kk = None if i % 50 == 0 else i
        match = side.get(kk % 100, []) if kk is not None else []
        for v in match:
            got[(i, kk % 100, v)] += 1
        if not match and left:
            got[(i, None, None)] += 1
    return got


def tables(src, side_path, out):
    return f"""
SET 'parallelism.default' = '2';
CREATE TABLE src (id BIGINT, kk BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE TABLE side_input (`key` BIGINT, `value` STRING)
WITH ('connector' = 'filesystem', 'path' = '{side_path}', 'format' = 'csv');
CREATE TABLE `out` (id BIGINT, k BIGINT, v STRING)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
"""


def test_sql_lookup_join_inner_and_left(cluster, workdir):
    cluster.add_tm(slots=4)
    src, side_path = os.path.join(workdir, "src.json"), os.path.join(workdir, "side.csv")
    write_stream(src)
    side = side_rows()
    write_side(side_path, side)
    for kind in ("inner", "left"):
        out = os.path.join(workdir, f"out-{kind}")
        join = "JOIN" if kind == "inner" else "LEFT JOIN"
        r = run_sql(cluster, workdir, f"{kind}.sql", tables(src, side_path, out) + f"""
INSERT INTO `out`
SELECT B.id, S.`key`, S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM src) B
{join} side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.kk, 100) = S.`key`;
""")
        jid = job_ids(r.stdout)
        assert jid, r.stdout + r.stderr
        job = finish(cluster, jid[0])
        assert {v["parallelism"] for v in job["vertices"]} == {2}
        # the side table is no source of the job
        assert not any("side_input" in v["name"] for v in job["vertices"]), job["vertices"]
        got = collections.Counter((x["id"], x["k"], x["v"]) for x in rows(out))
        assert got == expected(side, kind == "left"), kind


def test_lookup_join_checkpointed_across_taskmanager_kill(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk))
    c.add_tm(slots=2)
    side_path, out = os.path.join(workdir, "side.csv"), os.path.join(workdir, "out")
    side = side_rows()
    write_side(side_path, side)
    n = 12000
    r = run_sql(c, workdir, "cp.sql", f"""
SET 'parallelism.default' = '2';
CREATE TABLE ids (id BIGINT, p_time AS PROCTIME())
WITH ('connector' = 'datagen', 'rows-per-second' = '2000',
      'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE side_input (`key` BIGINT, `value` STRING)
WITH ('connector' = 'filesystem', 'path' = '{side_path}', 'format' = 'csv');
CREATE TABLE `out` (id BIGINT, k BIGINT, v STRING)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `out`
SELECT I.id, S.`key`, S.`value`
FROM ids AS I LEFT JOIN side_input FOR SYSTEM_TIME AS OF I.p_time AS S
ON MOD(I.id, 100) = S.`key`;
""")
    jid = job_ids(r.stdout)
    assert jid, r.stdout + r.stderr
    jid = jid[0]
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2)
    assert c.job(jid)["state"] == "RUNNING"
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] >= 1
    got = collections.Counter((x["id"], x["k"], x["v"]) for x in read_rows(committed_files(out)))
    want = collections.Counter()
    for i in range(1, n + 1):
        match = side.get(i % 100, [])
        for v in match:
            want[(i, i % 100, v)] += 1
        if not match:
            want[(i, None, None)] += 1
    assert got == want


def test_lookup_join_bad_inputs(cluster, workdir):
    cluster.add_tm(slots=2)
    src = os.path.join(workdir, "src.json")
    write_stream(src, 100)
    query = """
INSERT INTO `out`
SELECT B.id, S.`key`, S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM src) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.kk, 100) = S.`key`;
"""
    # a missing side file and a malformed side row fail the job, naming the file (and line)
    missing = os.path.join(workdir, "missing.csv")
    bad = os.path.join(workdir, "bad.csv")
    with open(bad, "w") as f:
        f.write("1,one\n2,two\nthree,3\n")
    for name, path, want in (("missing", missing, f"cannot read '{missing}': No such file"),
                             ("bad", bad, f"{bad}:3: cannot decode the csv record")):
        out = os.path.join(workdir, f"out-{name}")
        r = run_sql(cluster, workdir, f"{name}.sql", tables(src, path, out) + query)
        jid = job_ids(r.stdout)
        assert jid, r.stdout + r.stderr
        job = cluster.wait_state(jid[0], ["FINISHED", "FAILED", "CANCELED"], timeout=60)
        assert job["state"] == "FAILED", name
        exc = json.dumps(cluster.get(f"/jobs/{jid[0]}/exceptions"))
        assert "table 'side_input'" in exc and want in exc, exc
    # a table whose connector serves no lookups: refused at planning
    for conn, opts in (("kafka", "'topic' = 't', 'properties.bootstrap.servers' = 'localhost:1', "
                                 "'format' = 'json'"),
                       ("datagen", "'number-of-rows' = '10'")):
        r = run_sql(cluster, workdir, f"{conn}.sql", f"""
CREATE TABLE src (id BIGINT, kk BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE TABLE side_input (`key` BIGINT, `value` STRING) WITH ('connector' = '{conn}', {opts});
CREATE TABLE `out` (id BIGINT, k BIGINT, v STRING) WITH ('connector' = 'blackhole');
""" + query)
        assert not job_ids(r.stdout), r.stdout
        assert (f"table 'side_input' (connector '{conn}') cannot serve lookups") in r.stdout, r.stdout
    # PROCTIME() inside an expression is still refused, clearly
    r = run_sql(cluster, workdir, "pt.sql", f"""
CREATE TABLE src (id BIGINT, kk BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE TABLE `out` (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO `out` SELECT id FROM src WHERE PROCTIME() IS NOT NULL;
""")
    assert not job_ids(r.stdout), r.stdout
    assert "it cannot be used inside an expression" in r.stdout, r.stdout
