#!/usr/bin/env python3
"""Window benchmark: datagen -> watermark -> hash -> window (TUMBLE 10 s by
default, or --window, e.g. "HOP(INTERVAL '1' SECOND, INTERVAL '10' SECOND)";
COUNT(*) per user_id) -> blackhole, parallelism 2, on one TaskManager with 2
slots (so the hash exchange uses local channels).

The source is bounded (--rows, split across its 2 subtasks) and unthrottled;
`user_id` is uniform over --keys keys and `ts` is the time the row is
generated, so event time advances with the wall clock, the watermark
(bounded out-of-orderness, 1 s) follows it, and every 10 s window fires
while the job runs; the end of the input brings the maximum watermark,
which fires the last windows. Each run starts a fresh JobManager and
TaskManager from a private copy of the binaries (a rebuild of build/
during the benchmark cannot change them) and measures, from the moment
every vertex is RUNNING until the job is FINISHED:

  * records per second: rows / wall seconds;
  * records per CPU-second: rows / (user+sys CPU of every Sluice process,
    read from /proc/<pid>/stat) -- the figure to compare on a busy machine,
    since it does not count time spent waiting for a core;
  * with --threads, the CPU split by thread (name[tid]), sampled every 20 ms from
    /proc/<pid>/task/*/stat while the job runs.

Each figure is the median of --runs runs. The window's output rows and late
drops are checked: with a 1 s watermark delay and in-order rows, no row may
be dropped.

--skew F puts a fraction F of the rows on one key (user_id 0; the rest stay
uniform), the workload two-phase aggregation is for: one global window
subtask would take F of all rows. --two-phase runs every run twice, one
phase (as above) and two phases (a local_aggregate chained after the
watermark combines rows per key and slice, mini-batch size
--mini-batch-size, and the window merges partial accumulators), alternated,
and prints both plans' records per CPU-second and the ratio two / one (event
time is generation time, so a plan that runs faster spans fewer windows; that
the plans' results are equal is tests/unit/test_two_phase.c's job). Needs
`make` first.
Usage:

    python3 bench/window_bench.py [--rows N] [--keys K] [--runs R] [--threads] [--window W]
        [--backend hashmap|rocksdb] [--checkpoint-ms MS] [--incremental]
        [--skew F] [--two-phase] [--mini-batch-size N]
"""
import argparse
import collections
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK = os.sysconf("SC_CLK_TCK")


def private_build():
    """Copy the daemons into a temporary build/bin; returns that build dir."""
    src = os.path.join(ROOT, os.environ.get("SLUICE_BUILD", "build"), "bin")
    top = tempfile.mkdtemp(prefix="sluice-window-bench-")
    os.makedirs(os.path.join(top, "bin"))
    for b in ("sluice-jobmanager", "sluice-taskmanager"):
        path = os.path.join(src, b)
        if not os.access(path, os.X_OK):
            raise SystemExit(f"{path} not found: run `make` first")
        shutil.copy2(path, os.path.join(top, "bin", b))
    return top


BUILD = private_build()
os.environ["SLUICE_BUILD"] = BUILD      # absolute: conftest joins it onto ROOT unchanged
sys.path.insert(0, os.path.join(ROOT, "tests"))
import conftest  # noqa: E402  (the test fixtures start real daemons)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def sample_threads(pid, seen):
    """Record {tid: (name, CPU seconds)} of one process's live threads into
    seen. Task threads exit when the job ends, taking their counters with
    them, so the caller samples while the job runs and keeps the last value."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                raw = f.read()
        except OSError:
            continue                               # the thread ended meanwhile
        name = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw.rsplit(")", 1)[1].split()
        seen[(pid, tid)] = (name, (int(fields[11]) + int(fields[12])) / CLK)


def job(rows, keys, window, skew=0.0, two_phase=False, mb_size=1000):
    aggs = ["COUNT(*) AS cnt"]
    g = {"name": "window bench", "parallelism": 2,
         "vertices": [
             {"id": "gen", "type": "datagen",
              "schema": [{"name": "user_id", "type": "INT"},
                         {"name": "ts", "type": "TIMESTAMP(3)"}],
              "config": {"rows-per-second": "1000000000", "number-of-rows": str(rows),
                         "fields.user_id.min": "0", "fields.user_id.max": str(keys - 1),
                         "seed": "1"}},
             {"id": "wm", "type": "watermark", "config": {"column": "ts", "delay": "1 s"}},
             {"id": "win", "type": "window",
              "config": {"time-column": "ts", "window": window,
                         "group-by": ["user_id"], "aggregates": aggs}},
             {"id": "sink", "type": "blackhole"}],
         "edges": [{"from": "gen", "to": "wm", "strategy": "forward"},
                   {"from": "wm", "to": "win", "strategy": "hash", "keys": ["user_id"]},
                   {"from": "win", "to": "sink", "strategy": "forward"}]}
    if skew > 0:
        # a fraction `skew` of the rows on user_id 0: datagen draws uniformly
        # from [0, m); the lowest `cut` values go to 0, the rest to 1..keys-1
        m = int(round((keys - 1) / (1 - skew)))
        cut = m - keys + 1
        gen = g["vertices"][0]["config"]
        gen["fields.user_id.max"] = str(m - 1)
        g["vertices"].insert(1, {"id": "skew", "type": "calc", "config": {"projection": [
            f"CASE WHEN user_id < {cut} THEN 0 ELSE user_id - {cut - 1} END AS user_id",
            "ts"]}})
        g["edges"][0] = {"from": "gen", "to": "skew", "strategy": "forward"}
        g["edges"].insert(1, {"from": "skew", "to": "wm", "strategy": "forward"})
    if two_phase:
        g["vertices"].insert(-2, {"id": "local", "type": "local_aggregate", "config": {
            "time-column": "ts", "window": window, "group-by": ["user_id"], "aggregates": aggs,
            "table.exec.mini-batch.size": str(mb_size)}})
        g["vertices"][-2]["config"]["phase"] = "global"
        for e in g["edges"]:
            if e["to"] == "win":
                e["from"] = "local"
        g["edges"].append({"from": "wm", "to": "local", "strategy": "forward"})
    return g


def all_running(j):
    return j["state"] == "RUNNING" and all(v["status"] in ("RUNNING", "FINISHED")
                                           for v in j["vertices"])


def run_once(rows, keys, threads, window, backend, checkpoint_ms, incremental=False, skew=0.0,
             two_phase=False, mb_size=1000):
    with tempfile.TemporaryDirectory() as d:
        jm_conf = {"execution.checkpointing.interval": f"{checkpoint_ms} ms"} if checkpoint_ms else {}
        c = conftest.Cluster(d, jm_conf=jm_conf)
        try:
            c.add_tm(slots=2, extra={"state.backend.type": backend, "taskmanager.tmp.dirs": d,
                                     "execution.checkpointing.incremental": str(incremental).lower()})
            procs = [c.jm.proc.pid] + [t.proc.pid for t in c.tms]
            jid = c.submit(job(rows, keys, window, skew, two_phase, mb_size))
            # poll tightly: the job may run for only a few seconds
            while True:
                j = c.job(jid)
                if all_running(j) or j["state"] in ("FINISHED", "FAILED"):
                    break
                time.sleep(0.01)
            t0 = time.monotonic()
            cpu0 = sum(cpu_seconds(p) for p in procs)
            first, last = {}, {}
            if threads:
                for p in procs:
                    sample_threads(p, first)
            while j["state"] not in ("FINISHED", "FAILED", "CANCELED"):
                if threads:
                    for p in procs:
                        sample_threads(p, last)
                time.sleep(0.02)
                j = c.job(jid)
            wall = time.monotonic() - t0
            cpu = sum(cpu_seconds(p) for p in procs) - cpu0
            split = None
            if threads:
                # a thread's CPU after its last sample is lost: the split is a lower bound
                split = collections.Counter()
                for key, (name, s) in last.items():
                    tag = "jm" if key[0] == c.jm.proc.pid else "tm"
                    split[f"{tag}:{name}[{key[1]}]"] += s - first.get(key, (name, 0.0))[1]
            assert j["state"] == "FINISHED", j
            win = [v for v in j["vertices"] if v["name"].startswith("win")][0]["metrics"]
            return {"rate": rows / wall, "per_cpu": rows / cpu, "wall": wall, "cpu": cpu,
                    "windows_out": win["write-records"], "late": win.get("numLateRecordsDropped", 0),
                    "read": win["read-records"], "split": split}
        finally:
            problems = c.shutdown()
            if problems:
                print("\n".join(problems), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", action="store_true", help="show CPU seconds per thread name")
    ap.add_argument("--window", default="TUMBLE(INTERVAL '10' SECOND)")
    ap.add_argument("--backend", default="hashmap", choices=["hashmap", "rocksdb"])
    ap.add_argument("--checkpoint-ms", type=int, default=0, help="checkpoint interval (0: none)")
    ap.add_argument("--incremental", action="store_true",
                    help="execution.checkpointing.incremental: true (rocksdb)")
    ap.add_argument("--skew", type=float, default=0.0,
                    help="fraction of the rows on user_id 0 (0: uniform)")
    ap.add_argument("--two-phase", action="store_true",
                    help="run one phase and two phases (local_aggregate) and compare")
    ap.add_argument("--mini-batch-size", type=int, default=1000)
    a = ap.parse_args()
    if a.two_phase:
        return compare_two_phase(a)
    print(f"window benchmark: {a.rows:,} rows, {a.keys:,} keys, {a.window} COUNT(*), "
          f"{a.backend}, checkpoints {a.checkpoint_ms or 'off'} ms"
          f"{' incremental' if a.incremental else ''}, "
          f"parallelism 2 on 1 TaskManager x 2 slots, median of {a.runs} "
          f"(load average {os.getloadavg()[0]:.1f})")
    res = []
    try:
        for i in range(a.runs):
            r = run_once(a.rows, a.keys, a.threads, a.window, a.backend, a.checkpoint_ms,
                         a.incremental)
            res.append(r)
            print(f"  run {i + 1}: {r['rate']:>12,.0f} rows/s {r['per_cpu']:>12,.0f} rows/CPU-s"
                  f"  wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s, window rows in {r['read']:,}"
                  f", out {r['windows_out']:,}, late dropped {r['late']}", flush=True)
            if r["split"]:
                for name, s in r["split"].most_common():
                    if s >= 0.01:
                        print(f"      {name:<36}{s:8.2f} s")
            if r["late"] != 0 or r["read"] != a.rows:
                print("  WARNING: the window did not count every row", file=sys.stderr)
    finally:
        shutil.rmtree(BUILD, ignore_errors=True)
    rate = statistics.median(r["rate"] for r in res)
    per_cpu = statistics.median(r["per_cpu"] for r in res)
    print(f"median: {rate:,.0f} records/s, {per_cpu:,.0f} records per CPU-second "
          f"(target 1,000,000 per core)")


def compare_two_phase(a):
    print(f"window benchmark, one phase against two: {a.rows:,} rows, {a.keys:,} keys, "
          f"{a.skew:.0%} on one key, {a.window} COUNT(*), {a.backend}, checkpoints "
          f"{a.checkpoint_ms or 'off'} ms, mini-batch size {a.mini_batch_size}, parallelism 2 on "
          f"1 TaskManager x 2 slots, median of {a.runs} (load average {os.getloadavg()[0]:.1f})")
    res = {False: [], True: []}
    try:
        for i in range(a.runs):
            for two in (False, True):
                r = run_once(a.rows, a.keys, False, a.window, a.backend, a.checkpoint_ms,
                             a.incremental, a.skew, two, a.mini_batch_size)
                res[two].append(r)
                print(f"  run {i + 1} {'two phases' if two else 'one phase '}: "
                      f"{r['per_cpu']:>12,.0f} rows/CPU-s {r['rate']:>12,.0f} rows/s  CPU "
                      f"{r['cpu']:.2f} s, window records in {r['read']:,}, results "
                      f"{r['windows_out']:,}, late dropped {r['late']}", flush=True)
                if r["late"] != 0:
                    print("  WARNING: rows were dropped as late", file=sys.stderr)
    finally:
        shutil.rmtree(BUILD, ignore_errors=True)
    one = statistics.median(r["per_cpu"] for r in res[False])
    two = statistics.median(r["per_cpu"] for r in res[True])
    print(f"median records per CPU-second: one phase {one:,.0f}, two phases {two:,.0f}, "
          f"ratio two/one {two / one:.2f}x")


if __name__ == "__main__":
    main()
