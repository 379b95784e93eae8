#!/usr/bin/env python3
"""End-to-end latency at fixed rates, Sluice beside Flink 2.3, measured the same way.

    python3 bench/latency_bench.py [--rates 10000,100000] [--seconds S] [--warmup W]
                                   [--pipelines stateless,tumble] [--configs a,b]
                                   [--sluice-only] [--build DIR] [--json FILE]

Both engines run the same Flink SQL text (Sluice through `sluice sql -f` on a
JobManager and a TaskManager with 2 slots, Flink in local mode through
bench/flink_driver.py), parallelism 2, one engine at a time:

  src: datagen, `rows-per-second` R for S seconds (R * S rows, bounded), k in
       [0, 99], v in [1, 100], and ts TIMESTAMP(3) = the wall clock when the
       source created the row (both engines' datagen stamp a TIMESTAMP column
       with the generation time), WATERMARK FOR ts AS ts - INTERVAL '0' SECOND.
  stateless: SELECT ts, LOCALTIMESTAMP AS arrival, k, v FROM src
  tumble:    SELECT window_end, LOCALTIMESTAMP AS arrival, k, cnt FROM
             (TUMBLE 1 s over ts, COUNT(*) GROUP BY window_start, window_end, k)
  into a `print` sink.

LOCALTIMESTAMP is evaluated per row by both engines (streaming mode) in the
last operator before the sink, so `arrival` is the wall clock at which the
row reached the sink, whatever the sink's own output buffering. Latency is
arrival - ts for the stateless pipeline (event creation to sink) and
arrival - window_end for the window (the window's result could exist at
window_end at the earliest, when its last row can have been created; this
includes the watermark interval, 200 ms by default on both engines, and the
0 s bounded-out-of-orderness delay). The rows are parsed offline from the
engine's stdout once the job finished; rows created in the first --warmup
seconds are left out (JIT, start-up), and so is the last window, which
end-of-input fires before its end. Timestamps have millisecond resolution,
so a figure of 0 or 1 ms means "within a millisecond or two".

Configurations (--configs): sluice (its defaults: execution.buffer-timeout
100 ms), sluice-bt0 (execution.buffer-timeout 0), flink (its defaults:
execution.buffer-timeout.interval 100 ms), flink-bt0 (0: flush after every
record), flink-bt1 (1 ms). Each run prints p50 / p99 / p99.9 / max in ms, the
number of samples, the engine's whole-process CPU seconds and the 1-minute
load average before and after. The machine has 2 cores shared with other
work, so the load is part of every figure.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import flink_vs_sluice as fvs  # noqa: E402

CONFIGS = {
    "sluice": ("sluice", {}),
    "sluice-bt0": ("sluice", {"execution.buffer-timeout": "0 ms"}),
    "flink": ("flink", {}),
    "flink-bt0": ("flink", {"execution.buffer-timeout.interval": "0 ms"}),
    "flink-bt1": ("flink", {"execution.buffer-timeout.interval": "1 ms"}),
}
DEFAULT_CONFIGS = ["sluice", "sluice-bt0", "flink", "flink-bt0"]
PIPELINES = ["stateless", "tumble"]
KEYS = 100
ROW = re.compile(r"^(?:[^ ]*> )?\+I\[(.*)\]$")


def sql(pipeline, rate, seconds):
    """(ddl statements, INSERT) of a pipeline at `rate` rows/s for `seconds`."""
    opts = {"connector": "datagen", "number-of-rows": str(rate * seconds),
            "rows-per-second": str(rate), "fields.k.min": "0", "fields.k.max": str(KEYS - 1),
            "fields.v.min": "1", "fields.v.max": "100"}
    with_ = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items())
    src = (f"CREATE TABLE src (k INT, v INT, ts TIMESTAMP(3), "
           f"WATERMARK FOR ts AS ts - INTERVAL '0' SECOND) WITH ({with_})")
    if pipeline == "stateless":
        snk = ("CREATE TABLE snk (ts TIMESTAMP(3), arrival TIMESTAMP(3), k INT, v INT) "
               "WITH ('connector' = 'print')")
        q = "INSERT INTO snk SELECT ts, LOCALTIMESTAMP AS arrival, k, v FROM src"
    else:
        snk = ("CREATE TABLE snk (window_end TIMESTAMP(3), arrival TIMESTAMP(3), k INT, "
               "cnt BIGINT) WITH ('connector' = 'print')")
        q = ("INSERT INTO snk SELECT window_end, LOCALTIMESTAMP AS arrival, k, cnt FROM ("
             "SELECT window_end, k, COUNT(*) AS cnt FROM "
             "TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
             "GROUP BY window_start, window_end, k)")
    return [src, snk], q


def parse_ts(text):
    """A printed TIMESTAMP(3) (Java's LocalDateTime form: '2026-12-08T00:31:40.120',
    '...T00:31' when seconds and fraction are zero) as ms since the epoch (UTC)."""
    d = datetime.datetime.fromisoformat(text.strip())
    return (d - datetime.datetime(1970, 1, 1)).total_seconds() * 1000.0


def samples(path, pipeline, warmup_s):
    """Latencies (ms) of the rows printed in `path`."""
    pairs = []
    with open(path, errors="replace") as f:
        for line in f:
            m = ROW.match(line.rstrip("\n"))
            if not m:
                continue
            cols = m.group(1).split(", ")
            pairs.append((parse_ts(cols[0]), parse_ts(cols[1])))
    if not pairs:
        return [], 0
    # the first row's creation; for the window, the start of the first window
    start = min(t for t, _ in pairs) - (0 if pipeline == "stateless" else 1000)
    if pipeline == "stateless":
        lat = [a - t for t, a in pairs if t >= start + warmup_s * 1000]
    else:
        last = max(t for t, _ in pairs)  # fired by end of input, before its end
        lat = [a - t for t, a in pairs if t != last and t >= start + warmup_s * 1000]
    return lat, len(pairs)


def pct(sorted_vals, p):
    """Nearest-rank percentile."""
    if not sorted_vals:
        return None
    i = max(0, min(len(sorted_vals) - 1, int(-(-p * len(sorted_vals) // 100)) - 1))
    return sorted_vals[i]


def sluice_run(build, conf, ddl, insert, workdir, timeout):
    out_path = os.path.join(workdir, "taskmanager.out")
    out = open(out_path, "wb")
    c = fvs.SluiceCluster(build, workdir, conf, out)
    try:
        c.wait_rest()
        c.wait_slots(fvs.PARALLELISM)
        path = os.path.join(workdir, "job.sql")
        with open(path, "w") as f:
            f.write(f"SET 'parallelism.default' = '{fvs.PARALLELISM}';\n")
            f.write("".join(s + ";\n" for s in ddl + [insert]))
        r = subprocess.run([os.path.join(build, "bin", "sluice"), "-m", f"127.0.0.1:{c.rest}",
                            "sql", "-f", path], capture_output=True, text=True, timeout=120)
        m = re.findall(r"^Job ID: ([0-9a-f]{32})$", r.stdout, re.M)
        if not m:
            raise RuntimeError("Sluice refused the SQL: " + (r.stdout + r.stderr)[-600:])
        c.wait_done(m[-1], timeout=timeout)
        cpu = sum(fvs.cpu_seconds(p) for p in c.pids())
        return {"cpu_total_s": cpu, "out": out_path}
    finally:
        c.shutdown()
        out.close()


def flink_run(py, conf, ddl, insert, workdir, timeout):
    port = fvs.free_port()
    cfg = {"parallelism.default": str(fvs.PARALLELISM), "rest.port": str(port),
           "rest.bind-port": str(port), "rest.address": "127.0.0.1"}
    cfg.update(conf)
    spec = os.path.join(workdir, "flink-job.json")
    with open(spec, "w") as f:
        json.dump({"config": cfg, "ddl": ddl, "insert": insert, "mode": "throughput"}, f)
    out_path = os.path.join(workdir, "flink.out")
    env = dict(os.environ, FLINK_LOG_DIR=workdir, PYTHONUNBUFFERED="1")
    with open(out_path, "wb") as out, open(os.path.join(workdir, "flink-driver.err"), "wb") as err:
        p = subprocess.Popen([py, os.path.join(HERE, "flink_driver.py"), spec], stdout=out,
                             stderr=err, cwd=workdir, env=env, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, 9)  # the session this function started
                p.wait()
    res = None
    with open(out_path, errors="replace") as f:
        for line in f:
            if line.startswith("BENCH-RESULT "):
                res = json.loads(line.split(" ", 1)[1])
    if rc != 0 or res is None:
        raise RuntimeError(f"Flink driver exited with {rc}; see {workdir}/flink-driver.err")
    return {"cpu_total_s": res["cpu_total_s"], "out": out_path}


def measure(engine, conf, pipeline, rate, args, py, top):
    ddl, insert = sql(pipeline, rate, args.seconds)
    work = tempfile.mkdtemp(prefix=f"{pipeline}-{rate}-{engine}-", dir=top)
    timeout = args.seconds * 10 + 300
    before = fvs.loadavg1()
    if engine == "sluice":
        got = sluice_run(args.build, conf, ddl, insert, work, timeout)
    else:
        got = flink_run(py, conf, ddl, insert, work, timeout)
    after = fvs.loadavg1()
    lat, rows = samples(got["out"], pipeline, args.warmup)
    lat.sort()
    res = {"rows": rows, "samples": len(lat), "cpu_total_s": round(got["cpu_total_s"], 2),
           "load": [before, after]}
    for name, p in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        res[name] = pct(lat, p)
    res["max"] = lat[-1] if lat else None
    shutil.rmtree(work, ignore_errors=True)
    return res


def fmt_ms(v):
    return "n/a" if v is None else f"{v:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="10000,100000", help="rows per second, comma-separated")
    ap.add_argument("--seconds", type=int, default=20, help="length of each run's input")
    ap.add_argument("--warmup", type=float, default=5, help="seconds of input left out")
    ap.add_argument("--pipelines", default=",".join(PIPELINES))
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                    help="comma-separated, of: " + ",".join(CONFIGS))
    ap.add_argument("--sluice-only", action="store_true", help="only the sluice* configs")
    ap.add_argument("--build", default=os.path.join(fvs.ROOT, "build"))
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    rates = [int(x) for x in a.rates.split(",")]
    pipelines = a.pipelines.split(",")
    configs = a.configs.split(",")
    for x in pipelines:
        if x not in PIPELINES:
            raise SystemExit(f"unknown pipeline '{x}' ({', '.join(PIPELINES)})")
    for x in configs:
        if x not in CONFIGS:
            raise SystemExit(f"unknown config '{x}' ({', '.join(CONFIGS)})")
    if a.sluice_only:
        configs = [x for x in configs if CONFIGS[x][0] == "sluice"]
    if a.warmup >= a.seconds:
        raise SystemExit("--warmup must be shorter than --seconds")
    for b in ("sluice-jobmanager", "sluice-taskmanager", "sluice"):
        if not os.access(os.path.join(a.build, "bin", b), os.X_OK):
            raise SystemExit(f"{a.build}/bin/{b} not found: run `make` first")
    py = fvs.ensure_flink() if any(CONFIGS[x][0] == "flink" for x in configs) else None
    # a short run (the smoke test) measures nothing worth a figure: no waiting
    lock = fvs.engine_lock() if a.seconds >= 10 else None  # noqa: F841
    top = tempfile.mkdtemp(prefix="sluice-latency-")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"{started}, load average {fvs.loadavg1()}", flush=True)
    results = []
    failures = 0
    try:
        for pipeline in pipelines:
            for rate in rates:
                for cname in configs:
                    engine, conf = CONFIGS[cname]
                    try:
                        r = measure(engine, conf, pipeline, rate, a, py, top)
                    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                        print(f"  error: {e}", flush=True)
                        failures += 1
                        r = {"error": str(e)[:300]}
                    r.update({"pipeline": pipeline, "rate": rate, "config": cname})
                    results.append(r)
                    print(f"{pipeline} {rate} rows/s {cname}: {json.dumps(r)}", flush=True)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"\nEnd-to-end latency (ms, event creation to sink; window: from window_end), "
          f"{a.seconds} s per run, first {a.warmup:g} s left out, parallelism "
          f"{fvs.PARALLELISM}; {started} to {finished}\n")
    print("| pipeline | rows/s | config | p50 | p99 | p99.9 | max | samples | CPU-s | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            cells = ["failed"] * 6 + ["-"]
        else:
            cells = [fmt_ms(r["p50"]), fmt_ms(r["p99"]), fmt_ms(r["p999"]), fmt_ms(r["max"]),
                     str(r["samples"]), f"{r['cpu_total_s']:.1f}",
                     f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"]
        print(f"| {r['pipeline']} | {r['rate']} | {r['config']} | " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"started": started, "finished": finished, "seconds": a.seconds,
                       "warmup": a.warmup, "results": results}, f, indent=1)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
