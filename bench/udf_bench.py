#!/usr/bin/env python3
"""User-defined function benchmark: the same scalar work -- x * 31 + 7 over
a BIGINT -- as a built-in expression, as a C function (CREATE FUNCTION ...
LANGUAGE C, tests/plugins/udf_funcs.c's `mix`) and as a Python function
(LANGUAGE PYTHON, tests/udf_py/strs.py's `mix`, run by the TaskManager's
embedded interpreter), each in the same job:

    datagen (random BIGINT, bounded) -> calc (SELECT f(x), the result summed
    into a filter so that it is used) -> blackhole

at parallelism 1 on one TaskManager. Each run starts a fresh JobManager and
TaskManager from a private copy of the binaries and measures, from the
submission until the job is FINISHED, the user+sys CPU of
every Sluice process (/proc/<pid>/stat): records per CPU-second is rows /
CPU seconds. The count starts at the submission, so deployment and the
interpreter's start-up are in it (once per run; large --rows amortise
them). Printed per variant: the median of --runs runs, the raw rows
and CPU seconds, and the ratio to the built-in. The per-call cost of a
function is (1/udf - 1/builtin) per record. Needs `make` first.

Usage:
    python3 bench/udf_bench.py [--rows N] [--py-rows N] [--runs R] [--variants LIST]

"python" calls the function in bundles (python.fn-execution.bundle.size 1000,
one GIL entry per bundle), "python-rowwise" with bundle.size 1 (one GIL entry
per call).
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK = os.sysconf("SC_CLK_TCK")
SRC_BUILD = os.path.join(ROOT, os.environ.get("SLUICE_BUILD", "build"))


def private_build():
    top = tempfile.mkdtemp(prefix="sluice-udf-bench-")
    os.makedirs(os.path.join(top, "bin"))
    for b in ("sluice-jobmanager", "sluice-taskmanager"):
        path = os.path.join(SRC_BUILD, "bin", b)
        if not os.access(path, os.X_OK):
            raise SystemExit(f"{path} not found: run `make` first")
        shutil.copy2(path, os.path.join(top, "bin", b))
    os.makedirs(os.path.join(top, "plugins"))
    shutil.copy2(os.path.join(SRC_BUILD, "plugins", "udf_funcs.so"),
                 os.path.join(top, "plugins", "udf_funcs.so"))
    return top


BUILD = private_build()
os.environ["SLUICE_BUILD"] = BUILD
sys.path.insert(0, os.path.join(ROOT, "tests"))
import conftest  # noqa: E402  (the test fixtures start real daemons)

C_DECL = "sluice-udf 1|scalar|mix|BIGINT|BIGINT|deterministic strict"
PY_DECL = "sluice-udf 1|scalar|mix|BIGINT|BIGINT|deterministic nullable"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def job(variant, rows, par=1):
    call = {"builtin": "x * 31 + 7", "c": "mix(x)", "python": "mix(x)",
            "python-rowwise": "mix(x)"}[variant]
    calc = {"projection": [f"{call} AS m"], "filter": f"{call} <> 0"}
    if variant == "c":
        calc["functions"] = [{"name": "mix", "symbol": "mix", "declaration": C_DECL,
                              "library": os.path.join(BUILD, "plugins", "udf_funcs.so")}]
    elif variant.startswith("python"):
        with open(os.path.join(ROOT, "tests", "udf_py", "strs.py")) as f:
            src = f.read()
        calc["functions"] = [{"name": "mix", "symbol": "mix", "declaration": PY_DECL,
                              "library": "py:strs", "language": "python", "module": "strs",
                              "source": src}]
        # python: calls in bundles of 1000 rows under one GIL entry (the default);
        # python-rowwise: bundle.size 1, the GIL taken per call (as before bundles)
        calc["python.fn-execution.bundle.size"] = 1 if variant == "python-rowwise" else 1000
    # the call runs twice per row (filter and projection), as the same SQL would plan it
    return {"name": f"udf bench {variant}", "parallelism": par,
            "vertices": [
                {"id": "gen", "type": "datagen", "schema": [{"name": "x", "type": "BIGINT"}],
                 "config": {"rows-per-second": "1000000000", "number-of-rows": str(rows),
                            "fields.x.min": "1", "fields.x.max": "1000000000", "seed": "1"}},
                {"id": "calc", "type": "calc", "config": calc},
                {"id": "sink", "type": "blackhole"}],
            "edges": [{"from": "gen", "to": "calc", "strategy": "forward"},
                      {"from": "calc", "to": "sink", "strategy": "forward"}]}


def run_once(variant, rows, par=1):
    with tempfile.TemporaryDirectory() as d:
        c = conftest.Cluster(d)
        try:
            c.add_tm(slots=par, extra={"taskmanager.tmp.dirs": d})
            procs = [c.jm.proc.pid] + [t.proc.pid for t in c.tms]
            # from the submission: a short job may be done before its vertices show RUNNING;
            # deployment and (for Python) the interpreter's start are counted, once per run
            t0, cpu0 = time.monotonic(), sum(cpu_seconds(p) for p in procs)
            jid = c.submit(job(variant, rows, par))
            j = c.job(jid)
            while j["state"] not in ("FINISHED", "FAILED", "CANCELED"):
                time.sleep(0.02)
                j = c.job(jid)
            wall = time.monotonic() - t0
            cpu = sum(cpu_seconds(p) for p in procs) - cpu0
            assert j["state"] == "FINISHED", (j, c.get(f"/jobs/{jid}/exceptions"))
            # one chained vertex (gen -> calc -> sink): the source wrote every row
            out = j["vertices"][0]["metrics"]
            assert out.get("write-records") in (rows, rows * par), j["vertices"]
            rows = out["write-records"]
            return {"per_cpu": rows / cpu, "cpu": cpu, "wall": wall}
        finally:
            problems = c.shutdown()
            if problems:
                print("\n".join(problems), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000, help="rows of the built-in and C runs")
    ap.add_argument("--py-rows", type=int, default=1_000_000, help="rows of the Python runs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--parallelism", type=int, default=1,
                    help="subtasks on the one TaskManager (>1: its Python calls contend for the GIL)")
    ap.add_argument("--variants", default="builtin,c,python-rowwise,python",
                    help="comma-separated: builtin (always run first), c, python-rowwise, python")
    a = ap.parse_args()
    print(f"udf benchmark: x * 31 + 7 twice per row (filter and projection), parallelism "
          f"{a.parallelism} (one TaskManager), "
          f"median of {a.runs} (load average {os.getloadavg()[0]:.1f})")
    med = {}
    try:
        want = ["builtin"] + [v for v in a.variants.split(",") if v and v != "builtin"]
        for variant in want:
            rows = a.py_rows if variant.startswith("python") else a.rows
            res = [run_once(variant, rows, a.parallelism) for _ in range(a.runs)]
            m = statistics.median(r["per_cpu"] for r in res)
            med[variant] = m
            raw = ", ".join(f"{r['cpu']:.2f} s CPU / {r['wall']:.2f} s wall" for r in res)
            ratio = m / med["builtin"]
            per_call = (1 / m - 1 / med["builtin"]) / 2 * 1e9
            print(f"  {variant:<8} {rows:>12,} rows  {m:>12,.0f} records/CPU-s  "
                  f"{ratio:6.3f}x built-in  {per_call:8.1f} ns per call  ({raw})", flush=True)
    finally:
        shutil.rmtree(BUILD, ignore_errors=True)


if __name__ == "__main__":
    main()
