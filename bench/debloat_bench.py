#!/usr/bin/env python3
"""Buffer debloating under backpressure: how long an aligned checkpoint
takes to get through a backpressured job, with and without
taskmanager.network.memory.buffer-debloat.enabled.

The job: datagen (fast, ~40-byte rows) -> rebalance -> blackhole throttled
to --rate rows/s per subtask, parallelism 2 on two TaskManagers (1 slot
each: local and remote channels), aligned exactly-once checkpoints every
--interval. An aligned barrier waits behind every buffer queued before the
throttled sink; debloating shrinks those buffers to about a second of the
sink's throughput. Prints, per setting, the completed checkpoints'
end-to-end duration (median and max over the last --checkpoints) and the
sink's announced debloatedBufferSize. Needs `make` first. Usage:

    python3 bench/debloat_bench.py [--rate R] [--checkpoints K] [--interval S]
"""
import argparse
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import conftest  # noqa: E402  (the test fixtures start real daemons)


def job(rate, interval):
    return {"name": "debloat bench", "parallelism": 2,
            "config": {"execution.checkpointing.interval": f"{int(interval * 1000)} ms",
                       "execution.checkpointing.timeout": "120 s",
                       "execution.checkpointing.tolerable-failed-checkpoints": "1000"},
            "vertices": [
                {"id": "gen", "type": "datagen",
                 "schema": [{"name": "id", "type": "BIGINT"}, {"name": "s", "type": "STRING"}],
                 "config": {"rows-per-second": "1000000", "fields.s.length": "20"}},
                {"id": "slow", "type": "blackhole", "config": {"sink.rows-per-second": str(rate)}}],
            "edges": [{"from": "gen", "to": "slow", "strategy": "rebalance"}]}


def run_once(debloat, rate, k, interval):
    extra = {"taskmanager.network.memory.buffer-debloat.enabled": "true" if debloat else "false"}
    with tempfile.TemporaryDirectory() as d:
        c = conftest.Cluster(d)
        try:
            c.add_tm(slots=1, extra=extra)
            c.add_tm(slots=1, extra=extra)
            jid = c.submit(job(rate, interval))
            c.wait_state(jid, "RUNNING")
            # the first checkpoints start before the queues fill: skip two
            conftest.wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= k + 2,
                              timeout=600, what=f"{k + 2} checkpoints")
            hist = c.get(f"/jobs/{jid}/checkpoints")["history"]
            durs = [h["end_to_end_duration"] for h in hist if h["status"] == "COMPLETED"][:k]
            slow = next(v["id"] for v in c.job(jid)["vertices"] if v["name"] == "slow")
            m = c.get(f"/jobs/{jid}/vertices/{slow}/subtasks/metrics?get=debloatedBufferSize&agg=min,max")
            size = (m[0]["min"], m[0]["max"]) if m else (0, 0)
            c.request("PATCH", f"/jobs/{jid}?mode=cancel")
            return durs, size
        finally:
            c.shutdown()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=2000, help="throttled sink rows/s per subtask")
    ap.add_argument("--checkpoints", type=int, default=5)
    ap.add_argument("--interval", type=float, default=1.0, help="checkpoint interval, seconds")
    a = ap.parse_args()
    print(f"aligned checkpoints under backpressure: sink throttled to {a.rate} rows/s per subtask, "
          f"p=2 on 2 TaskManagers, last {a.checkpoints} checkpoints, load {os.getloadavg()[0]:.2f}")
    print(f"{'debloating':<12}{'median ms':>11}{'max ms':>9}{'debloatedBufferSize':>22}")
    for debloat in (False, True):
        durs, size = run_once(debloat, a.rate, a.checkpoints, a.interval)
        sz = f"{size[0]:.0f}..{size[1]:.0f}" if debloat else "-"
        print(f"{'on' if debloat else 'off':<12}{statistics.median(durs):>11.0f}{max(durs):>9.0f}{sz:>22}")


if __name__ == "__main__":
    main()
