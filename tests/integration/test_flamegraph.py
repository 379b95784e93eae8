"""Flame graphs of a running SQL job's vertex (GET /jobs/:id/vertices/:vid/flamegraph).

Two TaskManagers run one subtask each of a datagen -> calc -> blackhole chain;
the JobManager asks both for stack samples and merges them. Checked: the first
answer is Flink's "waiting" graph, then a graph in Flink's shape (read with
Flink's own VertexFlameGraph class and strict mapper) whose root counts every
sample of both threads (2 x num-samples), each node at least its children's sum;
the stacks name the source's static run function (datagen_run, from .symtab)
under the task thread's entry; on_cpu and off_cpu split the same samples; a
bad type is refused; one subtask's graph (subtaskindex) counts that thread's
samples alone; a finished job's vertex answers Flink's "terminated", and
rest.flamegraph.enabled false Flink's "disabled".
"""
from conftest import wait_for
from test_flink_cli import flink_home, run_harness  # noqa: F401 (fixture)
from test_sql import job_ids, run_sql

SAMPLES = 20
SQL = """
CREATE TEMPORARY TABLE src (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50000000');
CREATE TEMPORARY TABLE snk (y BIGINT) WITH ('connector' = 'blackhole');
SET 'parallelism.default' = '2';
INSERT INTO snk SELECT x * 3 FROM src WHERE x % 2 = 0;
"""


def nodes(n):
    yield n
    for c in n.get("children", []):
        yield from nodes(c)


def paths(n, prefix=()):
    """Every root-to-node path with the samples that end there."""
    here = prefix + (n["name"],)
    ends = n["value"] - sum(c["value"] for c in n["children"])
    if ends:
        yield here, ends
    for c in n["children"]:
        yield from paths(c, here)


def test_flamegraph_of_running_sql_job(make_cluster, workdir, flink_home):  # noqa: F811
    cluster = make_cluster(jm_conf={"rest.flamegraph.num-samples": str(SAMPLES),
                                    "rest.flamegraph.delay-between-samples": "10 ms"})
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "flame.sql", SQL)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, ["RUNNING"])
    job = cluster.get(f"/jobs/{jid}")
    assert len(job["vertices"]) == 1, job["vertices"]  # one chain
    vid = job["vertices"][0]["id"]
    wait_for(lambda: all(s["status"] == "RUNNING" for s in
                         cluster.get(f"/jobs/{jid}/vertices/{vid}")["subtasks"]), what="subtasks running")
    url = f"/jobs/{jid}/vertices/{vid}/flamegraph"

    first = cluster.get(url)
    assert first == {"endTimestamp": -3}, first  # Flink's "waiting": sampling begun
    full = wait_for(lambda: (lambda g: g if g["endTimestamp"] > 0 else None)(cluster.get(url)),
                    timeout=60, what="the flame graph")
    root = full["data"]
    assert root["name"] == "root"
    assert root["value"] == 2 * SAMPLES, root["value"]  # both subtasks, on two TaskManagers
    for n in nodes(root):
        assert set(n) == {"name", "value", "children"}, n.keys()
        assert n["value"] >= sum(c["value"] for c in n["children"]) > -1
    stacks = list(paths(root))
    assert sum(v for _, v in stacks) == 2 * SAMPLES
    # every sample is a task thread; a busy source is mostly inside its run
    # function, called from the task's loop (the rest waits for its next turn)
    assert all("task_main" in path for path, _ in stacks), stacks
    in_run = sum(v for path, v in stacks if "datagen_run" in path)
    assert in_run >= SAMPLES // 2, stacks
    assert all(p.index("task_main") < p.index("datagen_run") for p, _ in stacks if "datagen_run" in p)

    on = cluster.get(url + "?type=on_cpu")
    off = cluster.get(url + "?type=off_cpu")
    assert on["endTimestamp"] == off["endTimestamp"] == full["endTimestamp"]  # the same samples
    assert on["data"]["value"] + off["data"]["value"] == 2 * SAMPLES
    assert cluster.get(url + "?type=full") == full

    assert cluster.get(url + "?type=ON_CPU") == on  # Flink reads the type case-insensitively
    status, body = cluster.request("GET", url + "?type=wall")
    assert status == 400 and "bad flame graph type 'wall'" in str(body), (status, body)

    # one subtask (Flink 2.x's subtaskindex): its own sampling, one thread's samples
    one = url + "?subtaskindex=1"
    assert cluster.get(one) == {"endTimestamp": -3}
    g1 = wait_for(lambda: (lambda g: g if g["endTimestamp"] > 0 else None)(cluster.get(one)),
                  timeout=60, what="subtask 1's flame graph")
    assert g1["data"]["value"] == SAMPLES, g1["data"]["value"]
    assert any("datagen_run" in p for p, _ in paths(g1["data"]))
    for bad in ("2", "-1", "x"):
        status, body = cluster.request("GET", url + "?subtaskindex=" + bad)
        assert status == 400 and f"bad subtaskindex '{bad}'" in str(body), (status, body)

    # Flink's own class reads all three
    lines = ["\t".join(["GET", cluster.url + "/v1" + url + q,
                        "org.apache.flink.runtime.webmonitor.threadinfo.VertexFlameGraph", "-"]) + "\n"
             for q in ("", "?type=on_cpu", "?type=off_cpu", "?subtaskindex=1&type=off_cpu")]
    results = run_harness(flink_home, workdir, lines)
    assert all(l.startswith("OK") for l in results), results


BOUNDED = {"name": "bounded", "parallelism": 1, "vertices": [
    {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
     "config": {"number-of-rows": "10"}},
    {"id": "s", "type": "blackhole"}], "edges": [{"from": "g", "to": "s"}]}


def test_flamegraph_terminated_and_disabled(make_cluster):
    for enabled, want in (("true", {"endTimestamp": -1}), ("false", {"endTimestamp": -2})):
        cluster = make_cluster(jm_conf={"rest.flamegraph.enabled": enabled})
        cluster.add_tm(slots=1)
        jid = cluster.submit(BOUNDED)
        assert cluster.wait_state(jid, ["FINISHED", "FAILED"])["state"] == "FINISHED"
        vid = cluster.get(f"/jobs/{jid}")["vertices"][0]["id"]
        # enabled: Flink's "terminated" (nothing runs to sample); disabled: Flink's "disabled"
        assert cluster.get(f"/jobs/{jid}/vertices/{vid}/flamegraph") == want
        cluster.shutdown()
