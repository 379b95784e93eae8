"""A crash inside a C user function (core/udf_guard.h): SIGSEGV, SIGFPE,
abort() and a stack overflow in a scalar function, a SIGSEGV in a table
function and in an aggregate's accumulate each fail their task naming the
function, the signal and the row; the TaskManager lives on (tainted, said in
its log) and runs the next job to the model's result."""
import json
import os

import pytest

from conftest import BUILD
from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql
from test_sql_udf import mix, seq

FUNCS = os.path.join(BUILD, "plugins", "udf_funcs.so")
AGGS = os.path.join(BUILD, "plugins", "udf_aggs.so")

@pytest.fixture(autouse=True)
def user_fault_handlers(monkeypatch):
    """Under AddressSanitizer (SLUICE_BUILD=build-san) its own SIGSEGV/SIGFPE
    handlers win unless it lets the program install its own."""
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get(
        "ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0") + ":allow_user_segv_handler=1")


WHAT = {"segv": "SIGSEGV, an invalid memory access at 0xd",
        "fpe": "SIGFPE, an arithmetic fault such as an integer division by zero at 0x",
        "abort": "SIGABRT, abort()",
        "stack": "SIGSEGV, an invalid memory access at 0x"}


def still_works(cluster, workdir, tm):
    """The TaskManager that caught the crash runs a job calling a C function."""
    assert tm.alive(), tm.log_text()[-3000:]
    out = os.path.join(workdir, "after")
    r = run_sql(cluster, workdir, "after.sql", f"""
CREATE FUNCTION mix AS 'mix' USING JAR '{FUNCS}';
""" + seq("src2", 300) + f"""
CREATE TABLE snk2 (id BIGINT, m BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO snk2 SELECT id, mix(id) FROM src2;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = sorted((row["id"], row["m"]) for p in committed_files(out) for row in map(json.loads, open(p)))
    assert got == [(i, mix(i)) for i in range(1, 301)]
    assert tm.alive()


@pytest.mark.parametrize("how", ["segv", "fpe", "abort", "stack"])
def test_a_crashing_scalar_function_fails_its_task(cluster, workdir, how):
    tm = cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "c.sql", f"""
CREATE FUNCTION crash AS 'crash' USING JAR '{FUNCS}';
""" + seq("src", 50) + f"""
CREATE TABLE snk (v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO snk SELECT crash(id, '{how}') FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["FAILED"], timeout=90)
    text = str(cluster.get(f"/jobs/{jid}/exceptions"))
    assert f"function 'crash' crashed ({WHAT[how]}" in text, text
    assert "(row 13 of subtask 0)" in text, text
    assert "this TaskManager is tainted (1 crash caught)" in tm.log_text()
    still_works(cluster, workdir, tm)


def test_a_crashing_table_function_and_aggregate(cluster, workdir):
    tm = cluster.add_tm(slots=2)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "c.sql", f"""
CREATE FUNCTION crash_rows AS 'crash_rows' USING JAR '{FUNCS}';
CREATE FUNCTION crashsum AS 'crashsum' USING JAR '{AGGS}';
""" + seq("src", 50) + f"""
CREATE TABLE snk (id BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE snk2 (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}2', 'format' = 'json');
INSERT INTO snk SELECT id, v FROM src, LATERAL TABLE(crash_rows(id)) AS t(v);
INSERT INTO snk2 SELECT id % 3 AS k, crashsum(id) FROM src GROUP BY id % 3;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    j1, j2 = job_ids(r.stdout)
    for jid, want in ((j1, "function 'crash_rows' crashed (SIGSEGV, an invalid memory access at "
                           "0xd) (row 13 of subtask 0)"),
                      (j2, "function 'crashsum' failed in accumulate: crashed (SIGSEGV, an "
                           "invalid memory access at 0xd) (arguments: 13)")):
        cluster.wait_state(jid, ["FAILED"], timeout=90)
        text = str(cluster.get(f"/jobs/{jid}/exceptions"))
        assert want in text, text
    still_works(cluster, workdir, tm)
