"""Flink's Prometheus reporter on the JobManager and a TaskManager.

With metrics.reporter.prom.factory.class set (and the port 0: any free one,
read from each daemon's log) both daemons serve Prometheus's text format.
During a running job with periodic checkpoints the test scrapes both and
checks names, labels and values against REST, which shows the same reports:
a counter scraped between two REST reads lies between them.
"""
import re
import time
import urllib.request

from conftest import wait_for

PROM = {"metrics.reporter.prom.factory.class": "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
        "metrics.reporter.prom.port": "0"}
SAMPLE = re.compile(r'^(flink_[A-Za-z0-9_:]+)\{(.*)\} (\S+)$')


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    out = []
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        out.append((m.group(1), labels, float(m.group(3))))
    return text, out


def port_of(daemon):
    m = wait_for(lambda: re.search(r"Prometheus reporter serving on port (\d+)", daemon.log_text()),
                 what=f"{daemon.name}'s reporter")
    return int(m.group(1))


def test_both_daemons_serve_flink_metric_names_with_values_matching_rest(make_cluster):
    c = make_cluster(jm_conf=dict(PROM, **{"execution.checkpointing.interval": "300 ms"}))
    tm = c.add_tm(slots=2, extra=PROM)
    jm_port, tm_port = port_of(c.jm), port_of(tm)
    job = {"name": "prom job", "parallelism": 1,
           "vertices": [{"id": "gen", "uid": "gen", "type": "datagen",
                         "schema": [{"name": "x", "type": "BIGINT"}], "config": {"rows-per-second": "500"}},
                        {"id": "s", "uid": "s", "type": "blackhole"}],
           "edges": [{"from": "gen", "to": "s", "strategy": "rebalance"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 2, what="2 checkpoints")
    vid = next(v["id"] for v in c.job(jid)["vertices"] if "gen" in v["name"])
    rest_out = lambda: float(c.get(f"/jobs/{jid}/vertices/{vid}/metrics?get=0.numRecordsOut")[0]["value"])
    wait_for(lambda: rest_out() > 0, what="records out of the source")

    before = rest_out()
    text, tm_samples = scrape(tm_port)
    time.sleep(0.6)  # the TaskManager's next heartbeats reach REST
    after = rest_out()
    assert "# TYPE flink_taskmanager_job_task_numRecordsOut gauge" in text
    outs = [s for s in tm_samples if s[0] == "flink_taskmanager_job_task_numRecordsOut"
            and s[1]["task_id"] == vid]
    assert len(outs) == 1, tm_samples
    name, labels, value = outs[0]
    assert labels["job_id"] == jid and labels["job_name"] == "prom job" and labels["subtask_index"] == "0"
    assert labels["tm_id"] == tm.id and "gen" in labels["task_name"]
    assert before <= value <= after, (before, value, after)
    names = {s[0] for s in tm_samples}
    for n in ("numRecordsIn", "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond",
              "currentInputWatermark", "numLateRecordsDropped"):
        assert "flink_taskmanager_job_task_" + n in names, n
    for s in tm_samples:
        if s[0] == "flink_taskmanager_job_task_busyTimeMsPerSecond":
            assert 0 <= s[2] <= 1000

    count = lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]
    before = count()
    _, jm_samples = scrape(jm_port)
    time.sleep(1.2)  # the JobManager renders every second
    after = count()
    done = [s for s in jm_samples if s[0] == "flink_jobmanager_job_numberOfCompletedCheckpoints"]
    assert len(done) == 1 and done[0][1]["job_id"] == jid and done[0][1]["job_name"] == "prom job"
    # the scrape lags REST by at most one render (1 s: about 4 checkpoints at 300 ms)
    assert before - 4 <= done[0][2] <= after, (before, done[0][2], after)
    by_name = {s[0]: s[2] for s in jm_samples}
    assert by_name["flink_jobmanager_numRegisteredTaskManagers"] == 1
    assert by_name["flink_jobmanager_taskSlotsTotal"] == 2
    assert by_name["flink_jobmanager_numRunningJobs"] == 1
    assert by_name["flink_jobmanager_job_lastCheckpointDuration"] >= 0


def test_operator_scope_metrics_per_chained_operator_match_rest(make_cluster):
    """A chain of three operators (datagen -> calc filter -> blackhole, forward
    edges): Flink's operator-scope samples, one per operator with operator_id
    and operator_name, lie between two REST reads of the same operator's
    metric (<subtask>.<operator name>.<metric> of the vertex)."""
    c = make_cluster(jm_conf=dict(PROM))
    tm = c.add_tm(slots=1, extra=PROM)
    tm_port = port_of(tm)
    job = {"name": "ops job", "parallelism": 1,
           "vertices": [{"id": "gen", "uid": "gen-uid", "type": "datagen",
                         "schema": [{"name": "x", "type": "BIGINT"}],
                         "config": {"rows-per-second": "500", "fields.x.kind": "sequence",
                                    "fields.x.start": "1", "fields.x.end": "100000000"}},
                        {"id": "even", "uid": "even-uid", "type": "calc", "config": {"filter": "x % 2 = 0"}},
                        {"id": "out", "uid": "out-uid", "type": "blackhole"}],
           "edges": [{"from": "gen", "to": "even", "strategy": "forward"},
                     {"from": "even", "to": "out", "strategy": "forward"}]}
    jid = c.submit(job)
    c.wait_state(jid, "RUNNING")
    vertices = c.job(jid)["vertices"]
    assert len(vertices) == 1, vertices  # one chain
    vid = vertices[0]["id"]

    def rest(op, metric):
        m = c.get(f"/jobs/{jid}/vertices/{vid}/metrics?get=0.{op}.{metric}")
        assert [x["id"] for x in m] == [f"0.{op}.{metric}"], m
        return float(m[0]["value"])
    wait_for(lambda: rest("even", "numRecordsOut") > 10, what="rows through the filter")
    checks = [("gen", "numRecordsOut"), ("even", "numRecordsIn"), ("even", "numRecordsOut"),
              ("out", "numRecordsIn")]
    before = {k: rest(*k) for k in checks}
    _, samples = scrape(tm_port)
    time.sleep(0.6)  # the TaskManager's next heartbeats reach REST
    after = {k: rest(*k) for k in checks}
    ops = {}
    for name, labels, value in samples:
        if name.startswith("flink_taskmanager_job_task_operator_"):
            assert labels["job_id"] == jid and labels["task_id"] == vid and labels["subtask_index"] == "0"
            ops[(labels["operator_name"], name[len("flink_taskmanager_job_task_operator_"):])] = value
            assert labels["operator_id"] == labels["operator_name"] + "-uid"
    for op in ("gen", "even", "out"):
        for metric in ("numRecordsIn", "numRecordsOut", "numLateRecordsDropped", "currentInputWatermark",
                       "currentOutputWatermark"):
            assert (op, metric) in ops, (op, metric, sorted(ops))
    for k in checks:
        assert before[k] <= ops[k] <= after[k], (k, before[k], ops[k], after[k])
    # the filter passes the even half of the sequence 1, 2, 3, ...: of n in, n // 2 out
    assert ops[("even", "numRecordsOut")] == ops[("even", "numRecordsIn")] // 2
    assert ops[("gen", "numRecordsIn")] == 0 and ops[("out", "numRecordsOut")] == 0
    assert all(ops[(op, "numLateRecordsDropped")] == 0 for op in ("gen", "even", "out"))
    # no event time in this job: no watermark anywhere
    assert ops[("even", "currentInputWatermark")] == -2**63
