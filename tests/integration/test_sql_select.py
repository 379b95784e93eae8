"""A plain SELECT whose rows stream back to the client: the `collect` sink,
GET /jobs/:jobid/results (credit-bounded, a slow client backpressures the
job), and `sluice sql` printing them in Flink's tableau, changelog and table
result modes. Inputs are sequence generators; every expected output is
computed here from the ids."""
import os
import re
import signal
import subprocess

from conftest import wait_for, BIN

CREDIT = 512  # SL_COLLECT_CREDIT: rows the JobManager holds per job


def run_sql(cluster, workdir, name, text, timeout=120):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return cluster.cli("sql", "-f", path, timeout=timeout)


def seq_table(n, name="seq", rate=100000):
    return f"""
CREATE TABLE {name} (id BIGINT) WITH (
  'connector' = 'datagen', 'rows-per-second' = '{rate}',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def tableau(heads, widths, rows):
    """Flink's streaming tableau: op column, right-aligned cells."""
    line = "+" + "+".join("-" * (w + 2) for w in [2] + widths) + "+"
    out = [line, "| " + " | ".join(h.rjust(w) for h, w in zip(["op"] + heads, [2] + widths)) + " |", line]
    for r in rows:
        cells = [("<NULL>" if v is None else str(v)) for v in r[1:]]
        out.append("| " + " | ".join(c.rjust(w) for c, w in zip([r[0]] + cells, [2] + widths)) + " |")
    out.append(line)
    out.append(f"Received a total of {len(rows)} row{'' if len(rows) == 1 else 's'}")
    return "\n".join(out) + "\n"


def group_count_changelog(ids, key):
    """The changelog of SELECT k, COUNT(*) ... GROUP BY k over ids in order."""
    counts, log = {}, []
    for i in ids:
        k = key(i)
        if k in counts:
            log.append(("-U", k, counts[k]))
            counts[k] += 1
            log.append(("+U", k, counts[k]))
        else:
            counts[k] = 1
            log.append(("+I", k, 1))
    return log


def test_tableau_prints_a_bounded_select_exactly(cluster, workdir):
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "t.sql", seq_table(7) + """
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT id, id * 2 AS twice, CASE WHEN id % 2 = 0 THEN 'even' END AS parity FROM seq WHERE id <= 5;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    want = tableau(["id", "twice", "parity"], [20, 20, 30],
                   [("+I", i, 2 * i, "even" if i % 2 == 0 else None) for i in range(1, 6)])
    assert want in r.stdout, r.stdout
    # the job ended with its input
    jobs = cluster.get("/jobs/overview")["jobs"]
    assert [j["state"] for j in jobs if j["name"] == "collect"] == ["FINISHED"]


def test_changelog_and_table_modes_of_a_group_by(cluster, workdir):
    cluster.add_tm(slots=1)
    n = 10
    log = group_count_changelog(range(1, n + 1), lambda i: i % 3)
    r = run_sql(cluster, workdir, "c.sql", seq_table(n) + """
SET 'sql-client.execution.result-mode' = 'changelog';
SELECT CAST(id % 3 AS INT) AS k, COUNT(*) AS c FROM seq GROUP BY CAST(id % 3 AS INT);
SET 'sql-client.execution.result-mode' = 'table';
SELECT CAST(id % 3 AS INT) AS k, COUNT(*) AS c FROM seq GROUP BY CAST(id % 3 AS INT);
""")
    assert r.returncode == 0, r.stdout + r.stderr
    # changelog: the tableau's rows and header without the box
    widths = [2, 11, 20]
    head = " ".join(h.rjust(w) for h, w in zip(["op", "k", "c"], widths)) + " "
    body = [" ".join(str(v).rjust(w) for v, w in zip(row, widths)) + " " for row in log]
    want = "\n".join([head] + body) + f"\nReceived a total of {len(log)} rows\n"
    assert want in r.stdout, r.stdout
    # table: the changelog applied, printed once at the end
    table = []
    for op, k, c in log:
        if op.startswith("-"):
            table.remove((k, c))
        else:
            table.append((k, c))
    w = [max(len("k"), *(len(str(k)) for k, _ in table)), max(len("c"), *(len(str(c)) for _, c in table))]
    line = "+" + "+".join("-" * (x + 2) for x in w) + "+"
    want = "\n".join([line, f"| {'k'.rjust(w[0])} | {'c'.rjust(w[1])} |", line] +
                     [f"| {str(k).rjust(w[0])} | {str(c).rjust(w[1])} |" for k, c in table] +
                     [line, f"{len(table)} rows in set"]) + "\n"
    assert want in r.stdout, r.stdout


def collect_job(n, rate):
    return {"name": "collect-test", "vertices": [
        {"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
         "config": {"rows-per-second": rate, "fields.id.kind": "sequence",
                    "fields.id.start": 1, "fields.id.end": n}},
        {"id": "out", "type": "collect"}],
        "edges": [{"from": "gen", "to": "out"}]}


def test_results_are_credit_bounded_and_exact(cluster, workdir):
    """Without a reader the JobManager holds at most CREDIT rows and the job
    waits; read page by page, every row arrives once, in order."""
    cluster.add_tm(slots=1)
    n = 20 * CREDIT
    jid = cluster.submit(collect_job(n, 1000000))
    # fill the buffer without acknowledging anything (token 0 takes nothing)
    page = wait_for(lambda: (lambda p: p if len(p["rows"]) == CREDIT else None)(
        cluster.get(f"/jobs/{jid}/results?token=0")), what="the buffer to fill")
    assert page["token"] == 0 and page["nextToken"] == CREDIT and page["end"] is False
    assert [r[1] for r in page["rows"]] == [str(i) for i in range(1, CREDIT + 1)]
    # the job cannot finish: its sink waits for credit to send the rest
    assert cluster.job(jid)["state"] == "RUNNING"
    again = cluster.get(f"/jobs/{jid}/results?token=0&max=3")
    assert [r[1] for r in again["rows"]] == ["1", "2", "3"] and again["nextToken"] == 3
    got, token = [], 0
    while True:
        page = cluster.get(f"/jobs/{jid}/results?token={token}&max=200")
        assert len(page["rows"]) <= 200
        got += page["rows"]
        token = page["nextToken"]
        if page["end"]:
            break
    assert got == [["+I", str(i)] for i in range(1, n + 1)]
    assert cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"])["state"] == "FINISHED"
    # acknowledged rows are gone; the end stays visible
    status, body = cluster.request("GET", f"/jobs/{jid}/results?token=0")
    assert status == 410 and "acknowledged already" in body["errors"][0], body
    assert cluster.get(f"/jobs/{jid}/results?token={n}")["end"] is True


def test_checkpoints_complete_while_the_client_does_not_read(cluster, workdir):
    """A client that stops reading leaves the sink without credit; the sink
    keeps the rows the JobManager cannot hold and goes on taking barriers:
    checkpoints complete while nothing is fetched, and then every row
    arrives once."""
    cluster.add_tm(slots=2)
    n = 3 * CREDIT
    jid = cluster.submit({"name": "collect-cp", "config": {"execution.checkpointing.interval": "100 ms"},
                          "vertices": [
        {"id": "gen", "type": "datagen", "parallelism": 2, "schema": [{"name": "id", "type": "BIGINT"}],
         "config": {"rows-per-second": 20000, "fields.id.kind": "sequence", "fields.id.start": 1,
                    "fields.id.end": 10 ** 9}},
        {"id": "keep", "type": "calc", "config": {"filter": f"id <= {n}"}},
        {"id": "out", "type": "collect"}],
        "edges": [{"from": "gen", "to": "keep"}, {"from": "keep", "to": "out"}]})

    def pending():
        info = [s["info"] for s in cluster.get(f"/sluice/jobs/{jid}/operator-info")["subtasks"]
                if s["vertex"] == "out" and s.get("info")]
        return info[0] if info else None
    # the JobManager holds CREDIT rows; the sink keeps the others
    wait_for(lambda: pending() == {"pendingRows": n - CREDIT, "sentRows": CREDIT},
             what="the sink to run out of credit")
    done = cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= done + 3,
             what="checkpoints while nobody reads")
    assert pending() == {"pendingRows": n - CREDIT, "sentRows": CREDIT}  # still no credit
    got, token = [], 0
    while len(got) < n:
        page = cluster.get(f"/jobs/{jid}/results?token={token}&max=300")
        got += page["rows"]
        token = page["nextToken"]
    assert got == [["+I", str(i)] for i in range(1, n + 1)]
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    assert cluster.wait_state(jid, ["CANCELED", "FAILED"])["state"] == "CANCELED"


def test_a_taskmanager_kill_mid_select_loses_and_repeats_no_row(make_cluster, workdir):
    """With checkpointing a SELECT's rows reach the client exactly once across
    a restart: the sink sends only rows a completed checkpoint covers, a
    restored sink sends again what the JobManager may lack, and the
    JobManager drops what it has. The TaskManager running the query is
    killed after the client has read some rows; every row then arrives once,
    in order."""
    c = make_cluster(jm_conf={"restart-strategy.type": "fixed-delay",
                              "restart-strategy.fixed-delay.attempts": "5",
                              "restart-strategy.fixed-delay.delay": "50 ms"})
    first = c.add_tm(slots=1)
    n = 4 * CREDIT
    job = collect_job(n, 500)
    job["config"] = {"execution.checkpointing.interval": "100 ms"}
    jid = c.submit(job)
    got, token, killed = [], 0, False
    while True:
        page = c.get(f"/jobs/{jid}/results?token={token}&max=100")
        assert "error" not in page, page
        got += page["rows"]
        token = page["nextToken"]
        if page["end"]:
            break
        if not killed and len(got) >= 300:
            # the job cannot have finished: the client has not read its end
            first.kill(signal.SIGKILL)
            c.add_tm(slots=1)
            killed = True
    assert killed
    assert got == [["+I", str(i)] for i in range(1, n + 1)]
    final = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"])
    assert final["state"] == "FINISHED" and final["timestamps"]["RESTARTING"] > 0, final


def test_results_errors(cluster, workdir):
    cluster.add_tm(slots=1)
    status, body = cluster.request("GET", "/jobs/" + "0" * 32 + "/results")
    assert status == 404 and body["errors"] == ["Job " + "0" * 32 + " not found"]
    jid = cluster.submit(collect_job(5, 1000))
    for q, want in [("token=x", "token and max must be whole numbers (max at least 1)"),
                    ("token=-1", "token and max must be whole numbers (max at least 1)"),
                    ("max=0", "token and max must be whole numbers (max at least 1)"),
                    ("token=99", "token 99 is beyond the results (the next row is token ")]:
        status, body = cluster.request("GET", f"/jobs/{jid}/results?{q}")
        assert status == 400 and body["errors"][0].startswith(want), (q, body)
    printing = cluster.submit({"name": "p", "vertices": [
        {"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
         "config": {"number-of-rows": 3}}, {"id": "out", "type": "blackhole"}],
        "edges": [{"from": "gen", "to": "out"}]})
    status, body = cluster.request("GET", f"/jobs/{printing}/results")
    assert status == 400 and "has no collect sink" in body["errors"][0]


def test_ctrl_c_stops_an_unbounded_select_and_cancels_its_job(cluster, workdir):
    cluster.add_tm(slots=1)
    path = os.path.join(workdir, "u.sql")
    with open(path, "w") as f:
        f.write(seq_table(10 ** 9, rate=20) + "SET 'sql-client.execution.result-mode' = 'tableau';\n"
                "SELECT id FROM seq;\n")
    cmd = [os.path.join(BIN, "sluice"), "-m", f"127.0.0.1:{cluster.rest_port}", "sql", "-f", path]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while True:  # until the first row is printed
            line = p.stdout.readline()
            assert line, "sluice sql ended before printing a row"
            lines.append(line)
            if line.startswith("| +I |"):
                break
        p.send_signal(signal.SIGINT)
        rest = p.stdout.read()  # to the end: the client exits after the cancel
        err = p.stderr.read()
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    out = "".join(lines) + rest
    assert p.returncode == 0, out + err
    printed = [int(l.split("|")[2]) for l in out.splitlines() if l.startswith("| +I |")]
    assert printed == list(range(1, len(printed) + 1))
    assert f"Query terminated, received a total of {len(printed)} row" in out, out
    jobs = [j for j in cluster.get("/jobs/overview")["jobs"] if j["name"] == "collect"]
    assert len(jobs) == 1
    assert cluster.wait_state(jobs[0]["jid"], ["CANCELED", "FAILED", "FINISHED"])["state"] == "CANCELED"


def test_a_jobs_config_overrides_the_clusters(cluster, workdir):
    """Per-job checkpointing, restart strategy and state backend: the
    cluster takes no checkpoints, one job takes them every 100 ms."""
    cluster.add_tm(slots=2)
    def job(config):
        j = {"name": "cfg", "vertices": [
            {"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
             "config": {"rows-per-second": 100}},
            {"id": "out", "type": "blackhole"}], "edges": [{"from": "gen", "to": "out"}]}
        if config:
            j["config"] = config
        return j
    plain = cluster.submit(job(None))
    own = cluster.submit(job({"execution.checkpointing.interval": "100 ms",
                              "restart-strategy.type": "fixed-delay",
                              "restart-strategy.fixed-delay.attempts": 2,
                              "state.backend.type": "rocksdb"}))
    cluster.wait_state(own, "RUNNING")
    wait_for(lambda: cluster.get(f"/jobs/{own}/checkpoints")["counts"]["completed"] >= 2,
             what="the job's own checkpoints")
    conf = cluster.get(f"/jobs/{own}/checkpoints/config")
    assert conf["interval"] == 100 and conf["state_backend"] == "rocksdb"
    assert cluster.get(f"/jobs/{own}/config")["execution-config"]["restart-strategy"] == "fixed-delay"
    assert cluster.get(f"/jobs/{plain}/checkpoints/config")["interval"] == 0
    assert cluster.get(f"/jobs/{plain}/checkpoints")["counts"]["completed"] == 0
    assert cluster.get(f"/jobs/{plain}/config")["execution-config"]["restart-strategy"] == "none"
    status, body = cluster.request("POST", "/jobs", job({"execution.checkpointing.intervl": "1 s"}))
    assert status == 400 and body["errors"] == [
        "job: config: unknown key 'execution.checkpointing.intervl'; did you mean "
        "'execution.checkpointing.interval'?"], body
    for jid in (plain, own):  # free the slots
        cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
        cluster.wait_state(jid, "CANCELED")
    # SET in sluice sql reaches the job through the same object
    r = cluster.cli("sql", "-f", _script(workdir, seq_table(10 ** 9, rate=50) + """
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id FROM seq;
"""))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = re.findall(r"^Job ID: ([0-9a-f]{32})$", r.stdout, re.M)[0]
    wait_for(lambda: cluster.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 1,
             what="the SQL job's checkpoints")
    assert cluster.get(f"/jobs/{jid}/checkpoints/config")["interval"] == 100


def _script(workdir, text):
    path = os.path.join(workdir, "cfg.sql")
    with open(path, "w") as f:
        f.write(text)
    return path
