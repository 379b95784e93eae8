"""Partitioned filesystem tables beyond writing and reading them back
(test_sql_statements.py): partition pruning on the source, from SQL text
through `sluice sql -f` on a live cluster. The table's directories are
written here, so the expected rows are a Python filter over the same data."""
import glob
import json
import os
import re

from conftest import wait_for
from test_sql import run_sql, job_ids, finish
from test_sql_statements import file_rows

DAYS = [f"2026-01-0{d}" for d in range(1, 6)]
HOURS = range(6)


def write_table(root, bad=None):
    """30 partitions dt=<day>/hr=<h>, 3 rows each; {(dt, hr): rows}. A partition
    for which bad(dt, hr) is true also holds a file that fails the job when read."""
    data = {}
    for i, dt in enumerate(DAYS):
        for hr in HOURS:
            d = os.path.join(root, f"dt={dt}", f"hr={hr}")
            os.makedirs(d)
            rows = [{"id": (i * 6 + hr) * 3 + k, "v": (i * 7 + hr * 5 + k) % 13} for k in range(3)]
            data[(dt, hr)] = rows
            with open(os.path.join(d, "part-0"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
            if bad and bad(dt, hr):
                with open(os.path.join(d, "part-1"), "w") as f:
                    f.write("{this is not json\n")
    return data


def table(name, path):
    return f"""
CREATE TABLE {name} (id BIGINT, v INT, dt STRING, hr INT) PARTITIONED BY (dt, hr)
  WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json');
CREATE TABLE {name}_out (id BIGINT, v INT, dt STRING, hr INT)
  WITH ('connector' = 'filesystem', 'path' = '{path}-out', 'format' = 'json');
"""


def model(data, keep):
    return [dict(r, dt=dt, hr=hr) for (dt, hr), rows in data.items() for r in rows
            if keep(dt, hr, r["v"])]


def test_partition_pruning_skips_directories_the_where_rules_out(cluster, workdir):
    cluster.add_tm(slots=2)
    cases = [  # (WHERE, the model of it, does it prune on the partitions alone)
        ("dt BETWEEN '2026-01-02' AND '2026-01-03' AND hr IN (1, 3, 4) AND v > 3",
         lambda dt, hr, v: "2026-01-02" <= dt <= "2026-01-03" and hr in (1, 3, 4) and v > 3,
         lambda dt, hr: "2026-01-02" <= dt <= "2026-01-03" and hr in (1, 3, 4)),
        ("dt = '2026-01-05' AND hr < 2",
         lambda dt, hr, v: dt == "2026-01-05" and hr < 2,
         lambda dt, hr: dt == "2026-01-05" and hr < 2),
        ("hr > 4 AND (v < 6 OR v > 10) AND dt <> '2026-01-01'",
         lambda dt, hr, v: hr > 4 and (v < 6 or v > 10) and dt != "2026-01-01",
         lambda dt, hr: hr > 4 and dt != "2026-01-01"),
    ]
    for n, (where, keep, parts) in enumerate(cases):
        for par in (1, 2):
            root = os.path.join(workdir, f"t{n}-{par}")
            # every partition the predicate rules out holds a malformed file
            data = write_table(root, bad=lambda dt, hr, parts=parts: not parts(dt, hr))
            r = run_sql(cluster, workdir, f"q{n}-{par}.sql", table("t", root) + f"""
SET 'parallelism.default' = '{par}';
INSERT INTO t_out SELECT id, v, dt, hr FROM t WHERE {where};
""")
            assert r.returncode == 0, r.stdout + r.stderr
            finish(cluster, job_ids(r.stdout)[0])
            got = sorted(file_rows(root + "-out"), key=lambda x: sorted(x.items()))
            want = sorted(model(data, keep), key=lambda x: sorted(x.items()))
            assert got and got == want, (where, par)

    # the same malformed files fail the job when the WHERE cannot prune (an OR with
    # a non-partition column): what proves that the pruned ones were never opened
    root = os.path.join(workdir, "noprune")
    write_table(root, bad=lambda dt, hr: hr == 5)
    r = run_sql(cluster, workdir, "noprune.sql", table("t", root) + """
INSERT INTO t_out SELECT id, v, dt, hr FROM t WHERE hr < 5 OR v > 100;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    job = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FAILED"
    assert "part-1:1" in json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))


def test_a_scan_read_twice_is_not_pruned_by_one_readers_where(cluster, workdir):
    """A statement set's INSERTs share the scan: one reader's WHERE must not
    cut the rows of the other."""
    cluster.add_tm(slots=2)
    root = os.path.join(workdir, "shared")
    data = write_table(root)
    other = os.path.join(workdir, "shared-all")
    r = run_sql(cluster, workdir, "shared.sql", table("t", root) + f"""
CREATE TABLE t_all (id BIGINT, v INT, dt STRING, hr INT)
  WITH ('connector' = 'filesystem', 'path' = '{other}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO t_out SELECT id, v, dt, hr FROM t WHERE hr = 2;
INSERT INTO t_all SELECT id, v, dt, hr FROM t WHERE v >= 0;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    key = lambda x: sorted(x.items())
    assert sorted(file_rows(root + "-out"), key=key) == \
        sorted(model(data, lambda dt, hr, v: hr == 2), key=key)
    assert sorted(file_rows(other), key=key) == sorted(model(data, lambda *a: True), key=key)


BASE = 1767225600000  # 2026-01-01 00:00:00 UTC
STEP = 7 * 60 * 1000  # a row every 7 minutes of event time
N = 60                # rows: ids 1..N, 00:07 .. 07:00


def commit_table(path, extra):
    return f"""
CREATE TABLE src (
  id BIGINT,
  ts AS TO_TIMESTAMP_LTZ({BASE} + (CASE WHEN id <= {N} THEN id ELSE {N} END) * {STEP}, 3),
  WATERMARK FOR ts AS ts - INTERVAL '10' MINUTE
) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '1000000000');
CREATE TABLE sink_t (id BIGINT, ts TIMESTAMP(3), dt STRING, hr STRING) PARTITIONED BY (dt, hr)
  WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json'{extra});
"""


def test_success_files_where_the_watermark_passed_partition_time_plus_delay(cluster, workdir):
    """After row N the source keeps going with its event time stuck at row N's,
    so the final watermark is 07:00 - 10 min = 06:50: with a delay of 1 hour
    exactly the partitions hr <= 05 are committed, hr 06 and 07 never."""
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "commit")
    r = run_sql(cluster, workdir, "commit.sql", commit_table(out, """,
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.partition-commit.success-file.name' = '_DONE',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 h',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00'""") + f"""
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '200 ms';
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), DATE_FORMAT(ts, 'yyyy-MM-dd'),
  DATE_FORMAT(ts, 'HH') FROM src WHERE id <= {N};
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    want = {}
    for i in range(1, N + 1):
        s = (i * STEP) // 1000
        hh, mm = s // 3600, s % 3600 // 60
        want.setdefault(f"dt=2026-01-01/hr={hh:02d}", []).append(
            {"id": i, "ts": f"2026-01-01 {hh:02d}:{mm:02d}:00"})
    watermark = (N * STEP - 10 * 60 * 1000)  # ms after BASE
    committed = {p for p in want if int(p[-2:]) * 3600 * 1000 + 3600 * 1000 < watermark}
    assert committed == {f"dt=2026-01-01/hr={h:02d}" for h in range(6)}

    def done():
        return {os.path.relpath(os.path.dirname(p), out)
                for p in glob.glob(os.path.join(out, "*", "*", "_DONE"))}

    def rows():
        got = {}
        for p in glob.glob(os.path.join(out, "*", "*", "part-*")):
            with open(p) as f:
                got.setdefault(os.path.relpath(os.path.dirname(p), out), []).extend(
                    json.loads(x) for x in f if x.strip())
        return {k: sorted(v, key=lambda x: x["id"]) for k, v in got.items()}

    wait_for(lambda: rows() == want and done() == committed, timeout=60,
             what="every row committed and the success files")
    # later checkpoints (the watermark stays at 06:50) add no success file
    seen = cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= seen + 3,
             timeout=30, what="three more checkpoints")
    assert done() == committed and rows() == want
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, ["CANCELED"], timeout=30)

    # metastore: refused, there is none
    r = run_sql(cluster, workdir, "meta.sql", commit_table(os.path.join(workdir, "m"), """,
  'sink.partition-commit.policy.kind' = 'metastore,success-file'""") + """
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), 'd', 'h' FROM src;
""")
    assert "sink.partition-commit.policy.kind 'metastore' needs a Hive metastore, which Sluice " \
           "does not have; use 'success-file'" in r.stdout + r.stderr, r.stdout + r.stderr


def test_process_time_trigger_and_end_of_input(cluster, workdir):
    """process-time: a partition commits at a checkpoint once the delay has passed
    since it was created (never within the test for '1 h'); a bounded job commits
    every partition at its end, with checkpoints or without."""
    cluster.add_tm(slots=2)
    hours = {f"dt=2026-01-01/hr={h:02d}" for h in range(8)}

    def done(out, name):
        return {os.path.relpath(os.path.dirname(p), out)
                for p in glob.glob(os.path.join(out, "*", "*", name))}

    def nrows(out):
        n = 0
        for p in glob.glob(os.path.join(out, "*", "*", "part-*")):
            with open(p) as f:
                n += sum(1 for x in f if x.strip())
        return n

    insert = f"""
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '200 ms';
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), DATE_FORMAT(ts, 'yyyy-MM-dd'),
  DATE_FORMAT(ts, 'HH') FROM src WHERE id <= {N};
"""
    for delay, want in (("1 h", set()), ("0 s", hours)):
        out = os.path.join(workdir, f"pt-{delay[0]}")
        r = run_sql(cluster, workdir, f"pt{delay[0]}.sql", commit_table(out, f""",
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.partition-commit.delay' = '{delay}'""") + insert)
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        wait_for(lambda: nrows(out) == N and done(out, "_SUCCESS") == want, timeout=60,
                 what=f"rows and success files (delay {delay})")
        seen = cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]
        wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= seen + 3,
                 timeout=30, what="three more checkpoints")
        assert done(out, "_SUCCESS") == want and nrows(out) == N
        cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
        cluster.wait_state(jid, ["CANCELED"], timeout=30)

    # bounded (the sequence ends at N), with and without checkpoints, '1 h' delay:
    # the end of input commits every partition
    for ckpt in (True, False):
        out = os.path.join(workdir, f"end-{ckpt}")
        text = commit_table(out, """,
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.partition-commit.delay' = '1 h'""").replace("'1000000000'", f"'{N}'")
        if not ckpt:
            text += insert.replace("SET 'execution.checkpointing.interval' = '200 ms';", "")
        else:
            text += insert
        r = run_sql(cluster, workdir, f"end{ckpt}.sql", text)
        assert r.returncode == 0, r.stdout + r.stderr
        finish(cluster, job_ids(r.stdout)[0])
        assert done(out, "_SUCCESS") == hours and nrows(out) == N


def test_pruning_through_the_watermark_of_an_event_time_table(cluster, workdir):
    """WATERMARK FOR puts a watermark vertex after the source; the WHERE still prunes."""
    cluster.add_tm(slots=2)
    root = os.path.join(workdir, "wm")
    want = []
    for day in range(1, 4):
        for hr in range(3):
            d = os.path.join(root, f"dt=2026-01-0{day}", f"hr={hr}")
            os.makedirs(d)
            with open(os.path.join(d, "part-0"), "w") as f:
                for k in range(4):
                    row = {"id": day * 100 + hr * 10 + k, "ts": f"2026-01-0{day} 0{hr}:0{k}:00"}
                    f.write(json.dumps(row) + "\n")
                    if day == 2 and hr >= 1:
                        want.append(dict(row, dt=f"2026-01-0{day}", hr=hr))
            if not (day == 2 and hr >= 1):
                with open(os.path.join(d, "part-1"), "w") as f:
                    f.write("{not json\n")
    r = run_sql(cluster, workdir, "wm.sql", f"""
CREATE TABLE t (id BIGINT, ts TIMESTAMP(3), dt STRING, hr INT,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) PARTITIONED BY (dt, hr)
  WITH ('connector' = 'filesystem', 'path' = '{root}', 'format' = 'json');
CREATE TABLE o (id BIGINT, ts TIMESTAMP(3), dt STRING, hr INT)
  WITH ('connector' = 'filesystem', 'path' = '{root}-out', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO o SELECT id, ts, dt, hr FROM t WHERE t.dt = '2026-01-02' AND t.hr IN (1, 2);
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(file_rows(root + "-out"), key=lambda x: x["id"]) == \
        sorted(want, key=lambda x: x["id"])


def test_partitions_waiting_for_their_commit_survive_a_savepoint(cluster, workdir):
    """hr 06 and 07 wait (watermark 06:50, delay 1 h) when the job stops with a
    savepoint; the restored job's watermark reaches 09:10 without a row for them,
    so only the restored state can commit them."""
    cluster.add_tm(slots=2)
    out, sp_dir = os.path.join(workdir, "sp-out"), os.path.join(workdir, "sp")
    opts = """,
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 h',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00'"""
    insert = f"""
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '200 ms';
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), DATE_FORMAT(ts, 'yyyy-MM-dd'),
  DATE_FORMAT(ts, 'HH') FROM src WHERE id <= {N};
"""

    def done():
        return {os.path.relpath(os.path.dirname(p), out)
                for p in glob.glob(os.path.join(out, "*", "*", "_SUCCESS"))}

    def nrows():
        n = 0
        for p in glob.glob(os.path.join(out, "*", "*", "part-*")):
            with open(p) as f:
                n += sum(1 for x in f if x.strip())
        return n

    first = {f"dt=2026-01-01/hr={h:02d}" for h in range(6)}
    r = run_sql(cluster, workdir, "sp1.sql", commit_table(out, opts) + insert)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    wait_for(lambda: nrows() == N and done() == first, timeout=60, what="the first commits")
    r = cluster.cli("stop", "--savepoint", "file://" + sp_dir, jid, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (\S+)", r.stdout).group(1)
    cluster.wait_state(jid, ["FINISHED"], timeout=60)
    assert done() == first and nrows() == N

    # the restored source is past row N: its event time is now held at row 80's (09:20)
    table2 = commit_table(out, opts).replace(f"WHEN id <= {N} THEN id ELSE {N} END",
                                             "WHEN id <= 80 THEN id ELSE 80 END")
    r = run_sql(cluster, workdir, "sp2.sql", table2 + f"SET 'execution.savepoint.path' = '{sp}';\n"
                + insert)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    both = first | {"dt=2026-01-01/hr=06", "dt=2026-01-01/hr=07"}
    wait_for(lambda: done() == both, timeout=60, what="hr 06 and 07 committed after the restore")
    assert nrows() == N
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, ["CANCELED"], timeout=30)


def test_watermark_time_zone_reads_partition_times_in_that_zone(cluster, workdir):
    """sink.partition-commit.watermark-time-zone: the partition's time ('$dt $hr:00:00',
    a local time) is the instant of that wall-clock time in the zone, compared with the
    watermark (an instant: ts is a TIMESTAMP_LTZ). The partitions come from the UTC
    wall clock as before; in America/Sao_Paulo (UTC-3) hour HH is HH+3 UTC, so with the
    final watermark at 06:50 UTC and a delay of 1 hour only hr 00..02 commit. Then
    Flink's refusals: a bare offset as the zone, policy 'custom'."""
    from datetime import datetime
    from zoneinfo import ZoneInfo
    cluster.add_tm(slots=2)
    zone = "America/Sao_Paulo"
    out = os.path.join(workdir, "wtz")
    r = run_sql(cluster, workdir, "wtz.sql", commit_table(out, f""",
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 h',
  'sink.partition-commit.watermark-time-zone' = '{zone}',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00'""") + f"""
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '200 ms';
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), DATE_FORMAT(ts, 'yyyy-MM-dd'),
  DATE_FORMAT(ts, 'HH') FROM src WHERE id <= {N};
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    parts = {}
    for i in range(1, N + 1):
        s = (i * STEP) // 1000
        parts.setdefault(f"dt=2026-01-01/hr={s // 3600:02d}", 0)
        parts[f"dt=2026-01-01/hr={s // 3600:02d}"] += 1
    watermark = BASE + N * STEP - 10 * 60 * 1000
    committed = set()
    for p in parts:
        local = datetime(2026, 1, 1, int(p[-2:]), tzinfo=ZoneInfo(zone))
        if watermark > int(local.timestamp() * 1000) + 3600 * 1000:
            committed.add(p)
    assert committed == {f"dt=2026-01-01/hr={h:02d}" for h in range(3)}

    def done():
        return {os.path.relpath(os.path.dirname(p), out)
                for p in glob.glob(os.path.join(out, "*", "*", "_SUCCESS"))}

    def counts():
        got = {}
        for p in glob.glob(os.path.join(out, "*", "*", "part-*")):
            with open(p) as f:
                k = os.path.relpath(os.path.dirname(p), out)
                got[k] = got.get(k, 0) + sum(1 for x in f if x.strip())
        return got

    wait_for(lambda: counts() == parts and done() == committed, timeout=60,
             what="every row committed and the success files in the zone")
    seen = cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= seen + 3,
             timeout=30, what="three more checkpoints")
    assert done() == committed and counts() == parts
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, ["CANCELED"], timeout=30)

    refusals = [
        ("'sink.partition-commit.watermark-time-zone' = '+08:00'",
         "Invalid time zone for 'sink.partition-commit.watermark-time-zone'. The value should "
         "be a Time Zone Database (TZDB) ID such as 'America/Los_Angeles'"),
        ("'sink.partition-commit.watermark-time-zone' = 'No/Such'",
         "Invalid time zone for 'sink.partition-commit.watermark-time-zone'"),
        ("'sink.partition-commit.policy.kind' = 'custom'",
         "sink.partition-commit.policy.kind 'custom' needs sink.partition-commit.policy.class, "
         "a Java PartitionCommitPolicy class, which Sluice cannot run; use 'success-file'"),
    ]
    for n, (opt, msg) in enumerate(refusals):
        r = run_sql(cluster, workdir, f"bad{n}.sql", commit_table(
            os.path.join(workdir, f"bad{n}"), ",\n  " + opt) + """
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), 'd', 'h' FROM src;
""")
        assert msg in r.stdout + r.stderr, r.stdout + r.stderr
        assert not job_ids(r.stdout), r.stdout
    # the committer needs the writers' reports ahead of each barrier: not
    # with unaligned checkpoints
    r = run_sql(cluster, workdir, "unaligned.sql", commit_table(
        os.path.join(workdir, "unal"), ",\n  'sink.partition-commit.policy.kind' = 'success-file'") + """
SET 'execution.checkpointing.interval' = '1 s';
SET 'execution.checkpointing.unaligned.enabled' = 'true';
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), 'd', 'h' FROM src;
""")
    assert "a filesystem sink's partition commit needs aligned checkpoints" in r.stdout + r.stderr, \
        r.stdout + r.stderr
    assert not job_ids(r.stdout), r.stdout


# ---- one committer for all writers (Flink's PartitionCommitter) -------------
M = 240                 # rows, a bounded sequence
MSTEP = 2 * 60 * 1000   # event time per row within a writer's chunk


def spread_table(path, par, rate, extra=""):
    """Each source subtask reads chunk i of 1..M (M/par rows) and its rows' event
    times run over the same hours, 00:02 .. 08:00 for every chunk: so every
    partition gets files from every writer, and each writer's event time (and
    watermark) rises monotonically."""
    c = M // par
    return f"""
CREATE TABLE src (
  id BIGINT,
  ts AS TO_TIMESTAMP_LTZ({BASE} + (MOD(id - 1, {c}) + 1) * {MSTEP}, 3),
  WATERMARK FOR ts AS ts - INTERVAL '10' MINUTE
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '{M}');
CREATE TABLE sink_t (id BIGINT, ts TIMESTAMP(3), dt STRING, hr STRING) PARTITIONED BY (dt, hr)
  WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json',
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '{extra or "1 h"}',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00');
"""


def spread_model(par):
    """{partition: rows sorted by id}: the same arithmetic in Python."""
    c = M // par
    want = {}
    for i in range(1, M + 1):
        s = (((i - 1) % c) + 1) * MSTEP // 1000
        hh, mm = s // 3600, s % 3600 // 60
        want.setdefault(f"dt=2026-01-01/hr={hh:02d}", []).append(
            {"id": i, "ts": f"2026-01-01 {hh:02d}:{mm:02d}:00"})
    return want


def part_rows(out, part):
    rows = []
    for p in glob.glob(os.path.join(out, part, "part-*")):
        with open(p) as f:
            rows.extend(json.loads(x) for x in f if x.strip())
    return sorted(rows, key=lambda x: x["id"])


def watch_success(cluster, jid, out, want, seen, until, timeout=90):
    """Poll the directory (no fixed sleep: a 2 ms poll) until until() holds; the
    moment a partition's _SUCCESS appears, its committed rows are read and must
    be all of the model's for it. seen: partitions already checked."""
    import time
    deadline = time.monotonic() + timeout
    k = 0
    while True:
        for p in glob.glob(os.path.join(out, "*", "*", "_SUCCESS")):
            part = os.path.relpath(os.path.dirname(p), out)
            if part in seen:
                continue
            got = part_rows(out, part)
            assert got == want[part], (part, len(got), len(want[part]))
            seen.add(part)
        k += 1
        if k % 50 == 0 and until():
            return
        assert time.monotonic() < deadline, ("timed out", sorted(seen))
        time.sleep(0.002)


def test_one_committer_commits_a_partition_once_every_writer_finished_it(cluster, workdir):
    """At parallelism 2 and 3 the sink's writers all write every partition; the
    single partition_commit vertex writes a partition's _SUCCESS only once every
    writer's files for it are committed: checked the moment each success file
    appears. Partitions commit while the job runs (the watermark passes hour+1h)
    and the rest at its end."""
    cluster.add_tm(slots=4)
    for par in (2, 3):
        out = os.path.join(workdir, f"spread{par}")
        r = run_sql(cluster, workdir, f"spread{par}.sql", spread_table(out, par, 80) + f"""
SET 'parallelism.default' = '{par}';
SET 'execution.checkpointing.interval' = '200 ms';
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), DATE_FORMAT(ts, 'yyyy-MM-dd'),
  DATE_FORMAT(ts, 'HH') FROM src;
""")
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        job = cluster.job(jid)
        committers = [v for v in job["vertices"] if "committer" in v["name"]]
        assert len(committers) == 1 and committers[0]["parallelism"] == 1, job["vertices"]
        want = spread_model(par)
        seen = set()
        state = {}

        def ended():
            state["s"] = cluster.job(jid)["state"]
            return state["s"] in ("FINISHED", "FAILED", "CANCELED") and seen == set(want)
        watch_success(cluster, jid, out, want, seen, ended)
        assert state["s"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
        assert seen == set(want)
        for part, rows in want.items():
            assert part_rows(out, part) == rows
            writers = {os.path.basename(p).split("-")[1]
                       for p in glob.glob(os.path.join(out, part, "part-*"))}
            # every writer wrote the partition (hr=08 holds one row per chunk)
            assert writers == {str(i) for i in range(par)}, (part, writers)


def test_the_committers_pending_partitions_survive_a_rescaling_savepoint(cluster, workdir):
    """Stop-with-savepoint at parallelism 2 once a partition has committed, restore at
    3: a partition whose rows were all written (and committed as files) but which was
    still waiting for its trigger (delay 2 h) gets no new report from any writer, so
    only the committer's restored state commits it. Every row exactly once, and at
    the moment each success file appears its partition is complete."""
    cluster.add_tm(slots=4)
    out, sp_dir = os.path.join(workdir, "resc"), os.path.join(workdir, "resc-sp")
    want = spread_model(2)  # the restored source goes on with the old chunks
    text = spread_table(out, 2, 40, "2 h")
    insert = """
SET 'execution.checkpointing.interval' = '200 ms';
INSERT INTO sink_t SELECT id, CAST(ts AS TIMESTAMP(3)), DATE_FORMAT(ts, 'yyyy-MM-dd'),
  DATE_FORMAT(ts, 'HH') FROM src;
"""
    r = run_sql(cluster, workdir, "resc1.sql", text + "SET 'parallelism.default' = '2';\n" + insert)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    seen = set()
    watch_success(cluster, jid, out, want, seen, lambda: bool(seen))
    r = cluster.cli("stop", "--savepoint", "file://" + sp_dir, jid, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (\S+)", r.stdout).group(1)
    cluster.wait_state(jid, ["FINISHED"], timeout=60)
    watch_success(cluster, jid, out, want, seen, lambda: True)
    pending = {p for p in want if p not in seen and part_rows(out, p) == want[p]}
    assert pending, "no partition was complete and waiting at the stop"
    assert len(seen) < len(want)

    r = run_sql(cluster, workdir, "resc2.sql", text + f"SET 'execution.savepoint.path' = '{sp}';\n"
                "SET 'parallelism.default' = '3';\n" + insert)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    state = {}

    def ended():
        state["s"] = cluster.job(jid)["state"]
        return state["s"] in ("FINISHED", "FAILED", "CANCELED") and seen == set(want)
    watch_success(cluster, jid, out, want, seen, ended)
    assert state["s"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    assert seen == set(want) and pending <= seen
    for part, rows in want.items():
        assert part_rows(out, part) == rows, part
