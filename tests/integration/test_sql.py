"""Flink SQL end to end: `sluice sql -f` scripts planned by the client and
run on a real cluster. Inputs are sequence generators, so every expected
result is computed here from the ids, independently of Sluice."""
import collections
import datetime
import glob
import json
import os
import re
import subprocess

from conftest import wait_for, ROOT, BIN
from test_checkpoints import apply_changelog, committed_files

BASE = 1767225600000  # 2026-01-01T00:00:00Z


def run_sql(cluster, workdir, name, text, timeout=120):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return cluster.cli("sql", "-f", path, timeout=timeout)


def job_ids(out):
    return re.findall(r"^Job ID: ([0-9a-f]{32})$", out, re.M)


def rows(out_dir):
    got = []
    for path in sorted(glob.glob(os.path.join(out_dir, "part-*"))):
        with open(path) as f:
            got += [json.loads(line) for line in f if line.strip()]
    return got


def ms(ts):
    ts = ts.rstrip("Z")  # a TIMESTAMP_LTZ as the json format writes it: its UTC instant + 'Z'
    d = datetime.datetime.strptime(ts + ("" if "." in ts else ".0"), "%Y-%m-%d %H:%M:%S.%f")
    return int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def finish(cluster, jid):
    job = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    return job


EVENTS = """
CREATE TABLE events (
    id      BIGINT,
    user_id AS CAST(id % 3 AS INT),
    ts      AS TO_TIMESTAMP_LTZ({base} + id * 100, 3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
    'connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}'
);
"""


def test_tumble_count_over_a_sequence(cluster, workdir):
    cluster.add_tm(slots=2)
    n = 1000
    out = os.path.join(workdir, "tumble")
    r = run_sql(cluster, workdir, "tumble.sql", EVENTS.format(base=BASE, n=n) + f"""
CREATE TABLE counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), user_id INT,
                     cnt BIGINT, total BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');

SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'sql tumble test';

INSERT INTO counts
SELECT window_start, window_end, user_id, COUNT(*) AS cnt, SUM(id) AS total
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, user_id;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[INFO] Submitting SQL update statement to the cluster..." in r.stdout
    assert "[INFO] SQL update statement has been successfully submitted to the cluster:" in r.stdout
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout
    job = finish(cluster, jids[0])
    assert job["name"] == "sql tumble test"

    # independently: window of id = floor(id * 100 / 10000), key id % 3
    want = collections.defaultdict(lambda: [0, 0])
    for i in range(1, n + 1):
        start = BASE + (i * 100 // 10000) * 10000
        want[(start, i % 3)][0] += 1
        want[(start, i % 3)][1] += i
    got = {}
    for row in rows(out):
        assert row.get("op", "+I") == "+I", row
        key = (ms(row["window_start"]), row["user_id"])
        assert key not in got, f"window {key} emitted twice"
        assert ms(row["window_end"]) == key[0] + 10000
        got[key] = [row["cnt"], row["total"]]
    assert got == dict(want)


def test_group_by_changelog_into_a_json_file(cluster, workdir):
    cluster.add_tm(slots=1)
    n = 200
    out = os.path.join(workdir, "agg")
    r = run_sql(cluster, workdir, "agg.sql", EVENTS.format(base=BASE, n=n) + f"""
CREATE TABLE per_key (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');

INSERT INTO per_key
SELECT id % 4 AS k, COUNT(*) AS c, SUM(id) AS s FROM events WHERE id % 10 <> 0 GROUP BY id % 4;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])

    # the changelog, row by row: +I for a new key, then -U old / +U new
    want, state = [], {}
    for i in range(1, n + 1):
        if i % 10 == 0:
            continue
        k = i % 4
        if k in state:
            c, s = state[k]
            want.append(("-U", k, c, s))
            state[k] = (c + 1, s + i)
            want.append(("+U", k) + state[k])
        else:
            state[k] = (1, i)
            want.append(("+I", k, 1, i))
    got = [(row.get("op", "+I"), row["k"], row["c"], row["s"]) for row in rows(out)]
    assert got == want


def test_union_all_of_two_tables(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "union")
    r = run_sql(cluster, workdir, "union.sql", f"""
CREATE TEMPORARY TABLE a (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '300');
CREATE TEMPORARY TABLE b (n INT, label STRING) WITH ('connector' = 'datagen',
    'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '50',
    'fields.label.length' = '4');
CREATE TABLE sink (id BIGINT, src STRING) WITH ('connector' = 'filesystem', 'path' = '{out}',
    'format' = 'json');
CREATE VIEW odd_a AS SELECT id FROM a WHERE id % 2 = 1;

INSERT INTO sink
WITH bb AS (SELECT CAST(n AS BIGINT) * 1000 AS id FROM b)
SELECT id, 'a' AS src FROM odd_a
UNION ALL
SELECT id, CASE WHEN id > 25000 THEN 'b-high' ELSE 'b-low' END FROM bb;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    want = sorted([(i, "a") for i in range(1, 301, 2)] +
                  [(n * 1000, "b-high" if n * 1000 > 25000 else "b-low") for n in range(1, 51)])
    got = sorted((row["id"], row["src"]) for row in rows(out))
    assert got == want


def test_statement_set_runs_two_inserts_as_one_job(cluster, workdir):
    cluster.add_tm(slots=1)
    o1, o2 = os.path.join(workdir, "s1"), os.path.join(workdir, "s2")
    r = run_sql(cluster, workdir, "set.sql", f"""
CREATE TABLE g (id INT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
    'fields.id.start' = '1', 'fields.id.end' = '40', 'rows-per-second' = '100000');
CREATE TABLE small (id INT) WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'csv');
CREATE TABLE big (id INT, sq BIGINT) WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
  INSERT INTO small SELECT id FROM g WHERE id <= 10;
  INSERT INTO big SELECT id, CAST(id AS BIGINT) * id FROM g WHERE id > 30;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1
    finish(cluster, jids[0])
    small = []
    for path in glob.glob(os.path.join(o1, "part-*")):
        small += [int(line) for line in open(path) if line.strip()]
    assert sorted(small) == list(range(1, 11))
    assert sorted((row["id"], row["sq"]) for row in rows(o2)) == [(i, i * i) for i in range(31, 41)]


def test_self_union_reads_the_table_once(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "self")
    r = run_sql(cluster, workdir, "self.sql", f"""
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
    'fields.id.start' = '1', 'fields.id.end' = '30', 'rows-per-second' = '100000');
CREATE TABLE o (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO o SELECT * FROM g UNION ALL SELECT * FROM g UNION ALL SELECT id + 100 FROM g;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(row["id"] for row in rows(out)) == sorted(
        list(range(1, 31)) * 2 + list(range(101, 131)))


def test_errors_stop_the_script_with_flinks_message(cluster, workdir):
    r = run_sql(cluster, workdir, "bad.sql", """
CREATE TABLE t (id INT) WITH ('connector' = 'datagen', 'rows-per-secnd' = '5');
SHOW TABLES;
""")
    assert r.returncode == 1
    assert "[ERROR] Could not execute SQL statement. Reason:\n" in r.stdout
    assert ("line 2, column 56: table 't': unknown option 'rows-per-secnd' for connector "
            "'datagen' (did you mean 'rows-per-second'?)") in r.stdout
    assert "SHOW TABLES" not in r.stdout.split("[ERROR]")[1]

    r = run_sql(cluster, workdir, "twice.sql", """
CREATE TABLE t (id INT) WITH ('connector' = 'blackhole');
CREATE TABLE t (id INT) WITH ('connector' = 'blackhole');
""")
    assert r.returncode == 1
    assert ("line 3, column 1: Table (or view) default_database.t already exists in Catalog "
            "default_catalog (the catalog is per session") in r.stdout


def test_example_scripts_plan_like_the_json_examples(cluster, workdir):
    """examples/clicks-*.sql build the same stateful pipeline as
    examples/clicks-*.json: same window, keys, aggregates, watermark delay
    and source options (the rows are random, so the plans are compared)."""
    for name in ("tumble", "hop", "session", "tumble-1s-delay"):
        sql = open(os.path.join(ROOT, "examples", f"clicks-{name}.sql")).read()
        sql = sql.replace("INSERT INTO", "EXPLAIN INSERT INTO")
        r = run_sql(cluster, workdir, f"{name}.sql", sql)
        assert r.returncode == 0, r.stdout + r.stderr
        plan = json.loads(r.stdout.split("== Job Graph ==\n", 1)[1].split("\n\n")[0])
        ref = json.load(open(os.path.join(ROOT, "examples", f"clicks-{name}.json")))

        def by_type(job, t):
            return [v for v in job["vertices"] if v["type"] == t]
        w, rw = by_type(plan, "window")[0]["config"], by_type(ref, "window")[0]["config"]
        for k in ("window", "group-by", "aggregates", "allowed-lateness"):
            assert w[k] == rw[k], (name, k)
        delay = by_type(ref, "watermark")[0]["config"]["delay"]  # "5 s"
        assert by_type(plan, "watermark")[0]["config"]["delay"] == f"{int(delay.split()[0]) * 1000} ms"
        src, rsrc = by_type(plan, "datagen")[0]["config"], by_type(ref, "datagen")[0]["config"]
        for k, v in rsrc.items():
            assert src[k] == v, (name, k)
        assert [c for c in plan["vertices"] if c["type"] == "calc"][-1]["config"]["projection"] == \
            [c for c in ref["vertices"] if c["type"] == "calc"][-1]["config"]["projection"]
        assert len(by_type(plan, "print")) == 1


def test_seed_clicks_script_prints_window_counts(cluster, workdir):
    cluster.add_tm(slots=1)
    r = cluster.cli("sql", "-f", os.path.join(ROOT, "examples", "clicks-tumble.sql"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    line = wait_for(lambda: re.search(r"^\+I\[(\S+), (\S+), (\d+)\]$", cluster.tms[0].out_text(), re.M),
                    timeout=40, what="a window count")
    start, end = (datetime.datetime.fromisoformat(line.group(i)) for i in (1, 2))
    assert (end - start).total_seconds() == 10 and start.second % 10 == 0
    assert 0 < int(line.group(3)) <= 20 * 10 * 2
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")


class Session:
    """An interactive `sluice sql` fed statement by statement on stdin."""

    def __init__(self, cluster):
        self.p = subprocess.Popen([os.path.join(BIN, "sluice"), "-m", f"127.0.0.1:{cluster.rest_port}",
                                   "sql"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)

    def run(self, stmt):
        """Send one statement; return its output up to the blank line that ends it."""
        self.p.stdin.write(stmt + "\n")
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            assert line, "the SQL client ended:\n" + "".join(out)
            if line == "\n" and out and not out[-1].startswith("[INFO] Submitting"):
                return "".join(out)
            out.append(line)

    def close(self):
        self.p.stdin.write("QUIT;\n")
        self.p.stdin.close()
        rest = self.p.stdout.read()
        assert self.p.wait(timeout=30) == 0, rest


def test_seed_recipe_savepoint_rescale_and_a_changed_select(make_cluster, workdir):
    """The seed's recipe in one session: INSERT, stop with a savepoint,
    CREATE TABLE again fails (the catalog is per session), SET the
    savepoint path and parallelism 2, run only a changed INSERT (new SELECT
    list, new filter before the aggregate). The aggregate's uid does not
    change, so its state is restored: the changelog across the seam is
    exact, with no key counted twice or lost."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    n, keys = 10000, 5  # 10 s of input: the stop lands mid-stream even on a busy machine
    out = os.path.join(workdir, "out")
    create = ("CREATE TABLE events (id BIGINT) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '1000', 'fields.id.kind' = 'sequence', "
              "'fields.id.start' = '1', 'fields.id.end' = '%d');" % n)
    s = Session(c)
    assert s.run(create) == "[INFO] Execute statement succeed.\n"
    assert s.run("CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT) WITH ("
                 f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');") == \
        "[INFO] Execute statement succeed.\n"
    r = s.run("INSERT INTO per_key SELECT id % 5 AS k, COUNT(*) AS cnt, SUM(id) AS total "
              "FROM events GROUP BY id % 5;")
    jid = job_ids(r)[0]
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: sum(v["metrics"].get("write-records", 0) for v in c.job(jid)["vertices"]
                         if v["name"].startswith("events")) >= n // 10, timeout=20,
             what="the source to make progress")
    sp_base = os.path.join(workdir, "sp")
    r = c.cli("stop", "--savepoint", "file://" + sp_base, jid, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (\S+)", r.stdout).group(1)
    c.wait_state(jid, ["FINISHED"], timeout=20)
    run1 = committed_files(out)
    table1 = apply_changelog(run1)
    seen = sum(cnt for cnt, _ in table1.values())
    assert 0 < seen < n, seen  # stopped mid-stream

    # `sluice savepoint check` on the plans: the changed SELECT keeps every uid; a new key
    # drops the aggregate's state, and the check says which
    def plan_file(name, insert):
        text = s.run("EXPLAIN " + insert)
        path = os.path.join(workdir, name)
        with open(path, "w") as f:
            f.write(text.split("== Job Graph ==\n", 1)[1])
        return path
    same = plan_file("same.json", "INSERT INTO per_key SELECT id % 5 AS k, COUNT(*) AS cnt, "
                                  "SUM(id) * 1 AS total FROM events WHERE id > 0 GROUP BY id % 5;")
    r = c.cli("savepoint", "check", sp, same)
    assert r.returncode == 0 and "Dropped (no vertex with this uid): none" in r.stdout, r.stdout + r.stderr
    agg_uid = re.search(r"uid '(agg-events-[0-9a-f]{8})' \(group_aggregate", r.stdout).group(1)
    other = plan_file("other.json", "INSERT INTO per_key SELECT id % 7 AS k, COUNT(*) AS cnt, "
                                    "SUM(id) AS total FROM events GROUP BY id % 7;")
    r = c.cli("savepoint", "check", sp, other)
    assert r.returncode == 1 and f"uid(s) '{agg_uid}'" in r.stderr, r.stdout + r.stderr
    r = c.cli("savepoint", "check", "-n", sp, other)
    assert r.returncode == 0, r.stderr
    assert re.search(rf"Dropped \(no vertex with this uid\):\n  uid '{agg_uid}' \(group_aggregate",
                     r.stdout), r.stdout

    r = s.run(create)
    assert "already exists in Catalog default_catalog (the catalog is per session" in r, r
    assert "Session property has been set." in s.run(f"SET 'execution.savepoint.path' = '{sp}';")
    assert "Session property has been set." in s.run("SET 'parallelism.default' = '2';")
    plan = s.run("EXPLAIN INSERT INTO per_key SELECT id % 5 AS k, COUNT(*) AS cnt, SUM(id) * 1 AS total "
                 "FROM events WHERE id > 0 GROUP BY id % 5;")
    r = s.run("INSERT INTO per_key SELECT id % 5 AS k, COUNT(*) AS cnt, SUM(id) * 1 AS total "
              "FROM events WHERE id > 0 GROUP BY id % 5;")
    jid2 = job_ids(r)[0]
    s.close()
    job2 = c.wait_state(jid2, ["FINISHED", "FAILED"], timeout=60)
    assert job2["state"] == "FINISHED", c.get(f"/jobs/{jid2}/exceptions")
    assert {v["parallelism"] for v in job2["vertices"]} == {2}
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    assert "agg[group_aggregate] uid=agg-events-" in plan

    table = apply_changelog([p for p in committed_files(out) if p not in run1], dict(table1))
    want = {}
    for i in range(1, n + 1):
        cnt, tot = want.get(i % keys, (0, 0))
        want[i % keys] = (cnt + 1, tot + i)
    assert table == want


def test_show_jobs_and_stop_job_with_savepoint(cluster, workdir):
    cluster.add_tm(slots=1)
    s = Session(cluster)
    s.run("CREATE TABLE slow (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10',"
          " 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000');")
    s.run("CREATE TABLE nowhere (id BIGINT) WITH ('connector' = 'blackhole');")
    s.run("SET 'pipeline.name' = 'slow one';")
    jid = job_ids(s.run("INSERT INTO nowhere SELECT id FROM slow;"))[0]
    cluster.wait_state(jid, "RUNNING", timeout=20)
    out = s.run("SHOW JOBS;")
    assert re.search(rf"^\| {jid} \| slow one \| RUNNING \| \d{{4}}-\d\d-\d\dT[\d:.]+ \|$", out, re.M), out
    assert out.endswith("1 row in set\n"), out
    # a savepoint needs every task running (the job is RUNNING while they deploy)
    wait_for(lambda: all(v["status"] == "RUNNING" for v in cluster.job(jid)["vertices"]),
             timeout=30, what="every task to run")
    out = s.run(f"STOP JOB '{jid}' WITH SAVEPOINT;")
    m = re.search(r"^\| (file:\S+/savepoint-[0-9a-f]{6}-[0-9a-f]{12}) \|$", out, re.M)
    assert m and "savepoint path" in out, out
    assert os.path.isfile(os.path.join(m.group(1)[len("file:"):], "_metadata"))
    assert cluster.wait_state(jid, ["FINISHED"], timeout=20)
    out = s.run("STOP JOB 'abc';")
    assert "'abc' is not a job id (32 hexadecimal digits)" in out, out
    s.close()


def test_global_aggregate_having_and_a_processing_time_window(cluster, workdir):
    """GROUP BY nothing (one keyless aggregate at parallelism 1) with HAVING
    after it, and a TUMBLE over PROCTIME() next to it in one statement set."""
    cluster.add_tm(slots=2)
    n = 500
    o1, o2 = os.path.join(workdir, "total"), os.path.join(workdir, "pt")
    r = run_sql(cluster, workdir, "global.sql", f"""
CREATE TABLE g (id BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen',
    'rows-per-second' = '100000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
    'fields.id.end' = '{n}');
CREATE TABLE total (c BIGINT, s BIGINT, lo BIGINT, hi BIGINT, a BIGINT)
    WITH ('connector' = 'filesystem', 'path' = '{o1}', 'format' = 'json');
CREATE TABLE per_second (c BIGINT) WITH ('connector' = 'filesystem', 'path' = '{o2}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO total SELECT COUNT(*), SUM(id), MIN(id), MAX(id), AVG(id) FROM g HAVING COUNT(*) > 100;
INSERT INTO per_second SELECT COUNT(*) AS c FROM TABLE(TUMBLE(TABLE g, DESCRIPTOR(pt), INTERVAL '1' SECOND))
    GROUP BY window_start, window_end;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = [(row.get("op", "+I"), row["c"], row["s"]) for row in rows(o1)]
    # HAVING hides the first 100 results; then -U/+U pairs, one per row
    final = {}
    for op, c, s in got:
        if op in ("+I", "+U"):
            final = (c, s)
    assert final == (n, n * (n + 1) // 2)
    last = rows(o1)[-1]
    assert (last["lo"], last["hi"], last["a"]) == (1, n, (n + 1) // 2)
    assert all(c > 100 for _, c, _ in got)
    # processing-time windows: every row lands in exactly one window
    assert sum(row["c"] for row in rows(o2)) <= n


def test_processing_time_example_prints_counts_per_user(cluster, workdir):
    cluster.add_tm(slots=1)
    r = cluster.cli("sql", "-f", os.path.join(ROOT, "examples", "clicks-proctime.sql"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    line = wait_for(lambda: re.search(r"^\+I\[(\S+), (\S+), ([1-5]), (\d+)\]$",
                                      cluster.tms[0].out_text(), re.M),
                    timeout=40, what="a processing-time window count")
    start, end = (datetime.datetime.fromisoformat(line.group(i)) for i in (1, 2))
    assert (end - start).total_seconds() == 10
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")


def test_hop_cumulate_and_session_windows_exact(cluster, workdir):
    """Event time = BASE + id * 100 ms, plus 10 s after every 50 ids (a pause
    that ends every session). Three window TVFs in one statement set; every
    expected window computed here from the ids."""
    cluster.add_tm(slots=2)
    n = 400
    o = {w: os.path.join(workdir, w) for w in ("hop", "cum", "ses")}
    r = run_sql(cluster, workdir, "windows.sql", f"""
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id % 2 AS INT),
    ts AS TO_TIMESTAMP_LTZ({BASE} + id * 100 + (id / 50) * 10000, 3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE hop_out (ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT)
    WITH ('connector' = 'filesystem', 'path' = '{o["hop"]}', 'format' = 'json');
CREATE TABLE cum_out (ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT)
    WITH ('connector' = 'filesystem', 'path' = '{o["cum"]}', 'format' = 'json');
CREATE TABLE ses_out (ws TIMESTAMP(3), we TIMESTAMP(3), k INT, c BIGINT, lo BIGINT, hi BIGINT)
    WITH ('connector' = 'filesystem', 'path' = '{o["ses"]}', 'format' = 'json');
SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET BEGIN
INSERT INTO hop_out SELECT window_start, window_end, COUNT(*), SUM(id)
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
  GROUP BY window_start, window_end;
INSERT INTO cum_out SELECT window_start, window_end, COUNT(*)
  FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY window_start, window_end;
INSERT INTO ses_out SELECT window_start, window_end, k, COUNT(*), MIN(id), MAX(id)
  FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))
  GROUP BY window_start, window_end, k;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])

    ts = {i: i * 100 + (i // 50) * 10000 for i in range(1, n + 1)}  # ms after BASE
    hop = collections.defaultdict(lambda: [0, 0])
    cum = collections.Counter()
    for i, t in ts.items():
        for start in range((t // 5000 - 1) * 5000, t + 1, 5000):
            if start <= t < start + 10000:
                hop[(start, start + 10000)][0] += 1
                hop[(start, start + 10000)][1] += i
        base = t // 10000 * 10000
        for end in range(base + 2000, base + 10001, 2000):
            if t < end:
                cum[(base, end)] += 1
    ses = {}
    for k in (0, 1):
        ids = [i for i in ts if i % 2 == k]
        cur = []
        for i in ids + [None]:
            if cur and (i is None or ts[i] - ts[cur[-1]] >= 5000):
                ses[(ts[cur[0]], ts[cur[-1]] + 5000, k)] = (len(cur), cur[0], cur[-1])
                cur = []
            if i is not None:
                cur.append(i)

    def read(name, keyf, valf):
        got = {}
        for row in rows(o[name]):
            assert row.get("op", "+I") == "+I", row
            key = keyf(row)
            assert key not in got, f"{name}: window {key} twice"
            got[key] = valf(row)
        return got
    w = lambda row: (ms(row["ws"]) - BASE, ms(row["we"]) - BASE)  # noqa: E731
    assert read("hop", w, lambda row: [row["c"], row["s"]]) == dict(hop)
    assert read("cum", w, lambda row: row["c"]) == dict(cum)
    assert read("ses", lambda row: w(row) + (row["k"],),
                lambda row: (row["c"], row["lo"], row["hi"])) == ses


def test_window_time_is_a_time_attribute_for_a_second_window(cluster, workdir):
    """Per-second counts (a view keeping window_time), rolled up into
    5-second windows over that window_time."""
    cluster.add_tm(slots=1)
    n = 1000
    out = os.path.join(workdir, "rollup")
    r = run_sql(cluster, workdir, "rollup.sql", EVENTS.format(base=BASE, n=n) + f"""
CREATE VIEW per_second AS
SELECT window_start AS ws, window_time, COUNT(*) AS c
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY window_start, window_end;
CREATE TABLE `rollup` (ws TIMESTAMP(3), secs BIGINT, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `rollup`
SELECT window_start, COUNT(*), SUM(c)
FROM TABLE(TUMBLE(TABLE per_second, DESCRIPTOR(window_time), INTERVAL '5' SECOND))
GROUP BY window_start, window_end;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    per_sec = collections.Counter(i * 100 // 1000 for i in range(1, n + 1))
    want = collections.defaultdict(lambda: [0, 0])
    for sec, c in per_sec.items():  # window_time = end - 1 ms lies in the same 5 s window
        want[BASE + sec // 5 * 5000][0] += 1
        want[BASE + sec // 5 * 5000][1] += c
    got = {ms(row["ws"]): [row["secs"], row["c"]] for row in rows(out)}
    assert got == dict(want)
