#!/usr/bin/env python3
"""Exchange-path benchmark: datagen -> hash exchange -> group_aggregate ->
blackhole at parallelism 2, on one TaskManager (2 slots: local channels)
and on two (1 slot each: every other record crosses a TCP connection).

Prints records per second, records per CPU-second (user+sys of every
Sluice process, read from /proc), and bytes per record on the wire, each a
median of --runs runs. Needs `make` first. Usage:

    python3 bench/exchange_bench.py [--rows N] [--keys K] [--runs R]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import conftest  # noqa: E402  (the test fixtures start real daemons)

CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def job(rows, keys):
    return {"name": "exchange bench", "parallelism": 2,
            "vertices": [
                {"id": "gen", "type": "datagen", "schema": [{"name": "k", "type": "BIGINT"},
                                                             {"name": "v", "type": "BIGINT"}],
                 "config": {"rows-per-second": "1000000000", "number-of-rows": str(rows),
                            "fields.k.min": "1", "fields.k.max": str(keys),
                            "fields.v.min": "1", "fields.v.max": "1000", "seed": "1"}},
                {"id": "agg", "type": "group_aggregate",
                 "config": {"group-by": ["k"], "aggregates": ["COUNT(*) AS c", "SUM(v) AS s"]}},
                {"id": "sink", "type": "blackhole"}],
            "edges": [{"from": "gen", "to": "agg", "strategy": "hash", "keys": ["k"]},
                      {"from": "agg", "to": "sink"}]}


def run_once(tms, rows, keys):
    with tempfile.TemporaryDirectory() as d:
        c = conftest.Cluster(d)
        try:
            if tms == 1:
                c.add_tm(slots=2)
            else:
                c.add_tm(slots=1)
                c.add_tm(slots=1)
            procs = [c.jm.proc.pid] + [t.proc.pid for t in c.tms]
            cpu0 = sum(cpu_seconds(p) for p in procs)
            t0 = time.monotonic()
            jid = c.submit(job(rows, keys))
            j = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=600)
            wall = time.monotonic() - t0
            cpu = sum(cpu_seconds(p) for p in procs) - cpu0
            assert j["state"] == "FINISHED", j
            gen = [v for v in j["vertices"] if v["name"] == "gen"][0]["metrics"]
            return rows / wall, rows / cpu, gen["write-bytes"] / max(gen["write-records"], 1)
        finally:
            c.shutdown()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    print(f"exchange benchmark: {a.rows} rows, {a.keys} keys, parallelism 2, median of {a.runs}")
    print(f"{'setup':<28}{'rows/s':>14}{'rows/CPU-s':>14}{'bytes/row':>11}")
    base = None
    for tms in (1, 2):
        res = [run_once(tms, a.rows, a.keys) for _ in range(a.runs)]
        rate = statistics.median(r[0] for r in res)
        per_cpu = statistics.median(r[1] for r in res)
        bpr = statistics.median(r[2] for r in res)
        label = "1 TaskManager x 2 slots" if tms == 1 else "2 TaskManagers x 1 slot"
        print(f"{label:<28}{rate:>14,.0f}{per_cpu:>14,.0f}{bpr:>11.1f}")
        if base is None:
            base = per_cpu
        else:
            print(f"ratio (2 TMs / 1 TM, per CPU-second): {per_cpu / base:.2f}")


if __name__ == "__main__":
    main()
