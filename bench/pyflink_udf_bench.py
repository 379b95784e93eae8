#!/usr/bin/env python3
"""The same Python scalar UDF through PyFlink and through Sluice: records
per CPU-second of each, and the ratio.

The function is tests/udf_py/strs.py's `mix` (x * 31 + 7, decorated with
PyFlink's @udf), the query the same in both:

    CREATE TABLE src (x BIGINT) WITH ('connector' = 'datagen', bounded, random 1..1e9);
    INSERT INTO blackhole SELECT mix(x) FROM src WHERE mix(x) <> 0;

at parallelism 1. PyFlink 2.3 runs it in its local mini-cluster (a JVM)
with the function in PyFlink's Python worker process (Beam's harness),
bundles of python.fn-execution.bundle.size (its default, 100000); Sluice
plans the same job (bench/udf_bench.py's "python" variant: the calc
operator, bundles of 1000 rows in the TaskManager's embedded interpreter).

CPU: every process of each system (PyFlink: the driver, its JVM and the
Python workers, sampled from /proc every 20 ms by process group; Sluice: the
JobManager and TaskManager). Each system runs two sizes, and the figure is
the marginal rate (rows2 - rows1) / (cpu2 - cpu1), so the start-up of the
JVM, of the interpreter and of the job cancels out. PyFlink's venv is the
one bench/flink_vs_sluice.py installs (apache-flink 2.3.0, Java 17).

Usage:
    python3 bench/pyflink_udf_bench.py [--small N] [--large N] [--sluice-large N] [--runs R]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
CLK = os.sysconf("SC_CLK_TCK")
STRS = os.path.join(ROOT, "tests", "udf_py", "strs.py")

DRIVER = r'''
import sys
from pyflink.table import EnvironmentSettings, TableEnvironment
n, strs = int(sys.argv[1]), sys.argv[2]
sys.path.insert(0, __import__("os").path.dirname(strs))
from strs import mix
env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
conf = env.get_config()
conf.set("parallelism.default", "1")
conf.set("python.executable", sys.executable)
conf.set("python.client.executable", sys.executable)
env.add_python_file(strs)
env.create_temporary_function("mix", mix)
env.execute_sql(f"""CREATE TABLE src (x BIGINT) WITH ('connector' = 'datagen',
    'number-of-rows' = '{n}', 'rows-per-second' = '1000000000',
    'fields.x.min' = '1', 'fields.x.max' = '1000000000')""")
env.execute_sql("CREATE TABLE snk (m BIGINT) WITH ('connector' = 'blackhole')")
env.execute_sql("INSERT INTO snk SELECT mix(x) FROM src WHERE mix(x) <> 0").wait()
print("done", n)
'''


def group_cpu(pgid, seen):
    """CPU seconds of every live process of group pgid, kept per pid in seen."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # field 5: pgrp
            seen[pid] = max(seen.get(pid, 0), (int(fields[11]) + int(fields[12])) / CLK)


def pyflink_once(py, n):
    seen = {}
    t0 = time.monotonic()
    p = subprocess.Popen([py, "-c", DRIVER, str(n), STRS], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    while p.poll() is None:
        group_cpu(p.pid, seen)
        time.sleep(0.02)
    out, err = p.communicate()
    try:
        os.killpg(p.pid, signal.SIGKILL)  # a JVM or worker left behind
    except ProcessLookupError:
        pass
    if p.returncode != 0 or "done" not in out:
        raise SystemExit(f"PyFlink run failed ({p.returncode}):\n{err[-3000:]}")
    return sum(seen.values()), time.monotonic() - t0


def marginal(small, large):
    (r1, c1), (r2, c2) = small, large
    return (r2 - r1) / (c2 - c1) if c2 > c1 else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=200_000)
    ap.add_argument("--large", type=int, default=1_200_000, help="rows of PyFlink's large run")
    ap.add_argument("--sluice-large", type=int, default=3_000_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    import flink_vs_sluice
    py = flink_vs_sluice.ensure_flink()
    print(f"Python UDF mix(x) twice per row (filter and projection), parallelism 1, median of "
          f"{a.runs} marginal rates (load average {os.getloadavg()[0]:.1f})", flush=True)
    rates = []
    for _ in range(a.runs):
        s = pyflink_once(py, a.small)
        lg = pyflink_once(py, a.large)
        rates.append(marginal((a.small, s[0]), (a.large, lg[0])))
        print(f"  pyflink: {a.small:,} rows {s[0]:.2f} s CPU ({s[1]:.1f} s wall), {a.large:,} rows "
              f"{lg[0]:.2f} s CPU ({lg[1]:.1f} s wall): {rates[-1]:,.0f} records/CPU-s", flush=True)
    pf = statistics.median(rates)
    import udf_bench  # a private copy of the Sluice binaries, and its cluster helpers
    try:
        srates = []
        for _ in range(a.runs):
            s = udf_bench.run_once("python", a.small)
            lg = udf_bench.run_once("python", a.sluice_large)
            srates.append(marginal((a.small, s["cpu"]), (a.sluice_large, lg["cpu"])))
            print(f"  sluice:  {a.small:,} rows {s['cpu']:.2f} s CPU, {a.sluice_large:,} rows "
                  f"{lg['cpu']:.2f} s CPU: {srates[-1]:,.0f} records/CPU-s", flush=True)
    finally:
        shutil.rmtree(udf_bench.BUILD, ignore_errors=True)
    sl = statistics.median(srates)
    print(f"PyFlink {pf:,.0f} records/CPU-s, Sluice {sl:,.0f} records/CPU-s: Sluice/PyFlink = "
          f"{sl / pf:.1f}x")


if __name__ == "__main__":
    main()
