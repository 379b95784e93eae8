"""The filesystem source (vertex type file-source, SQL 'connector' =
'filesystem'): files written here, read by real daemons, results checked
against what this test computes from the rows it wrote.

- SQL over a directory of JSON-lines files and over one CSV file (quoted
  fields with commas, quotes and line breaks), with a watermark and a
  TUMBLE window; a bad record fails the job naming file, line and reason,
  and with 'json.ignore-parse-errors' a value not of its type is NULL and
  a record that is not JSON is skipped (as Flink); an unknown option is
  refused with a did-you-mean.
- Exactly once across a TaskManager kill (restored from a checkpoint) and
  across a stop-with-savepoint at p=2 restored at p=3 (the files and their
  read positions are re-dealt through the union state): every id of the
  files reaches the exactly-once file sink once. A throttled blackhole
  beside that sink backpressures the source so that it is mid-file when the
  kill or the savepoint comes.
"""
import collections
import json
import os
import signal

import pytest

from conftest import failover_conf, wait_for
from test_checkpoints import committed_files, raw_ids, vertex_records_out, wait_completed
from test_savepoints import exactly_once, new_files, stop_with_savepoint
from test_sql import BASE, finish, job_ids, ms, rows, run_sql


def write_json_files(d, nfiles, per_file, pad=0):
    """ids 1..nfiles*per_file over nfiles files, file k holding ids
    k*per_file+1.., ts = BASE + id * 10 ms, name = 'n<id % 7>' (followed by
    `pad` x's: rows big enough to fill the exchange's buffers)."""
    os.makedirs(d, exist_ok=True)
    for k in range(nfiles):
        with open(os.path.join(d, f"events-{k}.json"), "w") as f:
            for i in range(k * per_file + 1, (k + 1) * per_file + 1):
                f.write(json.dumps({"id": i, "name": f"n{i % 7}" + "x" * pad,
                                    "ts": f"2026-01-01 00:{(i * 10) // 60000:02d}:"
                                          f"{(i * 10) % 60000 / 1000:06.3f}"}) + "\n")


def test_sql_reads_json_directory_with_window(cluster, workdir):
    cluster.add_tm(slots=2)
    src, out = os.path.join(workdir, "src"), os.path.join(workdir, "out")
    write_json_files(src, 3, 1000)  # 3000 ids over 30 s of event time
    with open(os.path.join(src, ".hidden"), "w") as f:
        f.write("not read\n")
    r = run_sql(cluster, workdir, "fs.sql", f"""
SET 'parallelism.default' = '2';
CREATE TABLE src (
    id BIGINT, name STRING, ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE `out` (ws TIMESTAMP(3), name STRING, cnt BIGINT, total BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `out`
SELECT window_start, name, COUNT(*), SUM(id)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, name;
""")
    jid = job_ids(r.stdout)
    assert jid, r.stdout + r.stderr
    finish(cluster, jid[0])
    exp = collections.Counter()
    tot = collections.Counter()
    for i in range(1, 3001):
        w = (BASE + i * 10) // 10000 * 10000
        exp[(w, f"n{i % 7}")] += 1
        tot[(w, f"n{i % 7}")] += i
    got = {(ms(x["ws"]), x["name"]): (x["cnt"], x["total"]) for x in rows(out)}
    assert len(rows(out)) == len(got)
    assert got == {k: (exp[k], tot[k]) for k in exp}


def test_sql_reads_csv_with_quoted_fields(cluster, workdir):
    cluster.add_tm(slots=1)
    src, out = os.path.join(workdir, "in.csv"), os.path.join(workdir, "out")
    texts = {i: ["plain", "a,b", 'say "hi"', "two\nlines", ""][i % 5] for i in range(1, 501)}

    def q(s):
        return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') or not s else s
    with open(src, "w", newline="") as f:
        for i in range(1, 501):
            f.write(f"{i},{q(texts[i])},{i * 0.5}\r\n")
        f.write("\n")  # a trailing blank line is not a record
    r = run_sql(cluster, workdir, "csv.sql", f"""
CREATE TABLE src (id BIGINT, txt STRING, x DOUBLE)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv');
CREATE TABLE `out` (id BIGINT, txt STRING, x DOUBLE)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `out` SELECT id, txt, x FROM src;
""")
    jid = job_ids(r.stdout)
    assert jid, r.stdout + r.stderr
    finish(cluster, jid[0])
    got = sorted((x["id"], x["txt"], x["x"]) for x in rows(out))
    assert got == [(i, texts[i], i * 0.5) for i in range(1, 501)]


def test_bad_record_fails_with_file_and_line_or_is_skipped(cluster, workdir):
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "a.json"), "w") as f:
        f.write('{"id": 1}\n{"id": 2}\n{"id": "x"}\n{"id": 4\n{"id": 5}\n')
    outs = {}
    for name, extra in (("strict", ""), ("lenient", ", 'json.ignore-parse-errors' = 'true'")):
        outs[name] = os.path.join(workdir, name)
        r = run_sql(cluster, workdir, f"{name}.sql", f"""
CREATE TABLE src (id BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json'{extra});
CREATE TABLE `out` (id BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{outs[name]}', 'format' = 'json');
INSERT INTO `out` SELECT id FROM src;
""")
        jid = job_ids(r.stdout)
        assert jid, r.stdout + r.stderr
        job = cluster.wait_state(jid[0], ["FINISHED", "FAILED", "CANCELED"], timeout=60)
        if name == "strict":
            assert job["state"] == "FAILED"
            exc = json.dumps(cluster.get(f"/jobs/{jid[0]}/exceptions"))
            assert f"{src}/a.json:3: cannot decode the json record" in exc, exc
            assert "json.ignore-parse-errors" in exc
        else:
            assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid[0]}/exceptions")
            # line 3's id is NULL, line 4 (cut short) is skipped
            assert sorted((x["id"] is None, x["id"]) for x in rows(outs[name])) == \
                [(False, 1), (False, 2), (False, 5), (True, None)]

    r = run_sql(cluster, workdir, "typo.sql", f"""
CREATE TABLE src (id BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json',
      'json.ignore-parse-error' = 'true');
""")
    assert ("unknown option 'json.ignore-parse-error' for connector 'filesystem' "
            "(did you mean 'json.ignore-parse-errors'?)") in r.stdout, r.stdout


# ---- exactly once across failover and rescale ------------------------------------

def copy_job(src, raw, rate, p):
    """file-source(src) -> file(raw), and -> a blackhole at `rate` rows/s
    that holds the source back."""
    return {"name": "file copy", "parallelism": p,
            "vertices": [
                {"id": "src", "uid": "src", "type": "file-source",
                 "schema": [{"name": "id", "type": "BIGINT"}, {"name": "name", "type": "STRING"},
                            {"name": "ts", "type": "TIMESTAMP(3)"}],
                 "config": {"path": src, "format": "json"}},
                {"id": "raw", "uid": "raw", "type": "file",
                 "config": {"path": raw, "format": "json"}},
                {"id": "slow", "uid": "slow", "type": "blackhole",
                 "config": {"sink.rows-per-second": str(rate)}}],
            "edges": [{"from": "src", "to": "raw", "strategy": "forward"},
                      {"from": "src", "to": "slow", "strategy": "forward"}]}


def test_exactly_once_across_taskmanager_kill(make_cluster, workdir):
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk))
    c.add_tm(slots=2)
    src, raw = os.path.join(workdir, "src"), os.path.join(workdir, "raw")
    n = 5 * 3000
    write_json_files(src, 5, 3000, pad=1000)
    jid = c.submit(copy_job(src, raw, rate=3000, p=2))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2)
    wait_for(lambda: committed_files(raw), timeout=10, what="committed output")
    j = c.job(jid)
    assert j["state"] == "RUNNING", (j["timestamps"], j.get("duration"))
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] == 1
    exactly_once(raw_ids(committed_files(raw)), n)


def test_exactly_once_across_savepoint_rescale_2_to_3(make_cluster, workdir):
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=3)
    src, raw = os.path.join(workdir, "src"), os.path.join(workdir, "raw")
    n = 5 * 2000
    write_json_files(src, 5, 2000, pad=1000)
    job = copy_job(src, raw, rate=2000, p=2)
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: vertex_records_out(c, jid, "src") >= n // 4, timeout=30, what="a quarter of the rows")
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    run1 = committed_files(raw)
    ids1 = raw_ids(run1)
    assert 0 < len(ids1) < n

    job["vertices"][2]["config"]["sink.rows-per-second"] = "1000000"
    status, body = c.request("POST", f"/jobs?savepointPath=file:{sp}&parallelism=3", job)
    assert status == 200, body
    job2 = c.wait_state(body["jobid"], ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job2["state"] == "FINISHED", c.get(f"/jobs/{body['jobid']}/exceptions")
    assert {v["parallelism"] for v in job2["vertices"]} == {3}
    exactly_once(raw_ids(run1 + new_files(raw, run1)), n)


def idle_reader_rows(n=2000, late_every=20):
    """ids 1..n, 20 ms apart from 00:00:10, every `late_every`-th row 4 s
    behind: late rows (and rows behind but on time) from the first windows
    on."""
    out = []
    for i in range(1, n + 1):
        t = 10000 + i * 20 - (4000 if i % late_every == 0 else 0)
        out.append({"id": i, "ts": f"2026-01-01 00:{t // 60000:02d}:{t % 60000 / 1000:06.3f}"})
    return out


def expected_tumble(rows_in, size_ms, delay_ms):
    """Window start -> count, replaying Flink SQL's watermark (max - delay
    after every row; a row is judged by the watermark of the rows before
    it): a row whose window's last millisecond is at or below it is late."""
    wm, exp, late = -2**63, collections.Counter(), 0
    for r in rows_in:
        t = ms(r["ts"])
        start = t - t % size_ms
        if start + size_ms - 1 <= wm:
            late += 1
        else:
            exp[start] += 1
        wm = max(wm, t - delay_ms)
    return exp, late


@pytest.mark.parametrize("layout", ["one file", "a file and an empty file"])
def test_a_reader_without_rows_does_not_change_which_rows_are_late(cluster, workdir, layout):
    """Parallelism 2 over one file (the second reader gets no file: it says
    idle) or over a file and an empty one (the second reader ends at once):
    the window counts and late rows are exactly those of one reader, every
    run -- no row is judged before both readers have spoken, whichever
    starts first."""
    cluster.add_tm(slots=4)
    src, out = os.path.join(workdir, "src"), os.path.join(workdir, "out")
    os.makedirs(src)
    data = idle_reader_rows()
    with open(os.path.join(src, "a.json"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in data)
    if layout != "one file":
        open(os.path.join(src, "b.json"), "w").close()
    r = run_sql(cluster, workdir, "idle.sql", f"""
SET 'parallelism.default' = '2';
SET 'pipeline.auto-watermark-interval' = '0 ms';
CREATE TABLE src (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE TABLE `out` (ws TIMESTAMP(3), cnt BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `out` SELECT window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end;
""")
    jid = job_ids(r.stdout)
    assert jid, r.stdout + r.stderr
    finish(cluster, jid[0])
    exp, late = expected_tumble(data, 5000, 1000)
    assert late >= 40, late  # the input has late rows, early ones too
    got = collections.Counter()
    for x in rows(out):
        got[ms(x["ws"])] += x["cnt"]
    assert got == exp
    assert sum(got.values()) == len(data) - late


def test_tasks_that_end_together_report_their_last_figures(cluster, workdir):
    """Regression: several tasks of one TaskManager ending at once. A
    task's final report carries its last figures, but the deployment could
    be freed (another task's exit reaped it) before the network thread read
    that report, which then went without them: a job that ran shorter than
    a heartbeat showed 0 records (and 0 late rows). Every subtask's final
    numRecordsIn must be exactly the rows of its file, in every job."""
    cluster.add_tm(slots=24)
    jobs = []
    for j in range(4):
        src = os.path.join(workdir, f"src{j}")
        os.makedirs(src)
        for k in range(6):  # file k goes to subtask k; k + 1 rows each
            with open(os.path.join(src, f"f{k}.json"), "w") as f:
                f.writelines(json.dumps({"id": i}) + "\n" for i in range(k + 1))
        jobs.append(src)
    text = "SET 'parallelism.default' = '6';\n"
    for j, src in enumerate(jobs):
        text += f"""
CREATE TABLE s{j} (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE TABLE o{j} (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{src}-out', 'format' = 'json');
INSERT INTO o{j} SELECT id FROM s{j};
"""
    r = run_sql(cluster, workdir, "together.sql", text)
    jids = job_ids(r.stdout)
    assert len(jids) == 4, r.stdout + r.stderr
    for jid in jids:
        finish(cluster, jid)
        for v in cluster.job(jid)["vertices"]:
            got = [int(float(m["value"])) for m in sorted(
                cluster.get(f"/jobs/{jid}/vertices/{v['id']}/metrics?get=numRecordsIn"),
                key=lambda m: int(m["id"].split(".")[0]))]
            assert got == [1, 2, 3, 4, 5, 6], (v["name"], got)
