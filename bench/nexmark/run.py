#!/usr/bin/env python3
"""Nexmark q0-q22 on Sluice and on Flink 2.3, reading the same event files.

    python3 bench/nexmark/run.py [--events N] [--queries q0,q1,...] [--rate R] [--sluice-only]
                                 [--build DIR] [--json FILE] [--keep DIR]

Events. A Sluice job (generate.sql over the `nexmark` source of
nexmark_table.sql, parallelism 2) writes the persons, auctions and bids
once, as JSON lines in Flink's json format, into <dir>/person, <dir>/auction
and <dir>/bid (part-0 and part-1 each; event i went to part-(i % 2), so each
file is in event-time order). It is done twice, for N events and for N/10.
Both engines then read those files with their own filesystem connector
(tables.sql: the same DDL on both, WATERMARK FOR dateTime AS dateTime -
INTERVAL '4' SECOND, as Flink's Nexmark DDL has). q13's side input,
<dir>/side_input, is the CSV file Flink's Nexmark ships: 10,000 rows, key
0..9999 and the key as its string value ("7,7").

Measure: that of bench/flink_vs_sluice.py, whose helpers this script
imports. Each query runs on fresh processes over the N/10-event files and
over the N-event files; records per CPU-second is (N - N/10) / (CPU(N) -
CPU(N/10)), CPU being the whole user+sys CPU of the engine's processes
(Sluice: JobManager and TaskManager; Flink: the local-mode JVM) from their
start to the job's end. "Records" are events of all three kinds (as
Nexmark counts them), whichever tables the query reads. Peak memory is the
VmHWM of the same processes in the N-event run. Both engines run with
parallelism 2 and a blackhole sink.

A query that Sluice's planner refuses is listed with the planner's error
(the operator or function it lacks) and not run on Flink; a query Flink
refuses is listed the same way.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import flink_vs_sluice as fvs  # noqa: E402

QUERIES = [f"q{i}" for i in range(23)]
DEFAULT_EVENTS = 2_000_000
RATE = 10_000_000  # events per second of event time: Flink's nexmark default (--rate)


def read(name):
    with open(os.path.join(HERE, name)) as f:
        return f.read()


def fill(text, **kw):
    for k, v in kw.items():
        text = text.replace("${" + k + "}", str(v))
    return text


def statements(text):
    """The statements of a script, comments dropped (no ';' inside strings here)."""
    body = "\n".join(l for l in text.splitlines() if not l.strip().startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


def sluice_sql(build, cluster, path, timeout=300):
    cmd = [os.path.join(build, "bin", "sluice"), "-m", f"127.0.0.1:{cluster.rest}", "sql", "-f",
           path]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def job_id(out):
    m = re.findall(r"^Job ID: ([0-9a-f]{32})$", out, re.M)
    return m[-1] if m else None


def planner_error(out):
    """The first [ERROR] of `sluice sql` output, on one line."""
    m = re.search(r"\[ERROR\][^\n]*(\n(?!Flink SQL>)[^\n]*)*", out)
    text = m.group(0) if m else out.strip()[-400:]
    return " ".join(text.split())[:400]


def run_script(build, workdir, name, script, timeout):
    """`script` through `sluice sql -f` on a fresh JobManager and TaskManager
    (2 slots); once its job finished, the processes' whole CPU and peak
    memory. A script the planner refuses raises Missing with its error."""
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(script)
    c = fvs.SluiceCluster(build, workdir, {}, subprocess.DEVNULL)
    try:
        c.wait_rest()
        c.wait_slots(fvs.PARALLELISM)
        r = sluice_sql(build, c, path)
        jid = job_id(r.stdout)
        if not jid:
            raise fvs.Missing(planner_error(r.stdout + r.stderr))
        c.wait_done(jid, timeout=timeout)
        cpu = sum(fvs.cpu_seconds(p) for p in c.pids())
        rss = sum(fvs.peak_rss(p) for p in c.pids())
        return {"cpu_total_s": cpu, "peak_rss": rss}
    finally:
        c.shutdown()


SIDE_INPUT_ROWS = 10_000


def side_input(out_dir):
    """q13's bounded side input: out_dir/side_input, key,value with value the
    key as a string, keys 0..9999 (Flink's Nexmark side_input file)."""
    path = os.path.join(out_dir, "side_input")
    if os.path.exists(path):
        return
    with open(path + ".tmp", "w") as f:
        f.writelines(f"{k},{k}\n" for k in range(SIDE_INPUT_ROWS))
    os.rename(path + ".tmp", path)


def generate(build, events, out_dir, rate=RATE):
    """Write `events` Nexmark events (`rate` per second of event time) into
    out_dir/{person,auction,bid}, and q13's side input."""
    if os.path.exists(os.path.join(out_dir, "DONE")):
        side_input(out_dir)  # event files kept from a run before the side input existed
        return
    shutil.rmtree(out_dir, ignore_errors=True)
    work = os.path.join(out_dir, "_work")
    os.makedirs(work)
    script = fill(read("nexmark_table.sql") + read("generate.sql"), RATE=rate, EVENTS=events,
                  DIR=out_dir)
    try:
        run_script(build, work, "generate.sql", script, timeout=1800)
    except fvs.Missing as e:
        raise RuntimeError(f"generating events failed: {e}")
    side_input(out_dir)
    open(os.path.join(out_dir, "DONE"), "w").close()


def sluice_script(query, data_dir, sink=None):
    """tables.sql + the query, for `sluice sql -f`; sink replaces the blackhole sink's WITH."""
    q = read(os.path.join("queries", f"{query}.sql"))
    if sink:
        q = q.replace("WITH ('connector' = 'blackhole')", f"WITH ({sink})")
    return ("SET 'parallelism.default' = '2';\n" +
            fill(read("tables.sql") + q, DIR=data_dir))


def sluice_run(build, query, data_dir, workdir):
    os.makedirs(workdir)
    return run_script(build, workdir, f"{query}.sql", sluice_script(query, data_dir), 900)


def flink_run(py, query, data_dir, workdir):
    os.makedirs(workdir)
    stmts = statements(fill(read("tables.sql") + read(os.path.join("queries", f"{query}.sql")),
                            DIR=data_dir))
    ddl = [s for s in stmts if not s.upper().startswith("INSERT")]
    insert = [s for s in stmts if s.upper().startswith("INSERT")][0]
    try:
        return fvs.flink_run_sql(py, ddl, insert, {}, "throughput", workdir)
    except RuntimeError as e:
        err = os.path.join(workdir, "flink-driver.err")
        text = open(err, errors="replace").read() if os.path.exists(err) else ""
        m = re.search(r"(org\.apache\.flink\.table\.api\.\w+Exception|"
                      r"org\.apache\.calcite\.\w+\.\w+Exception)[^\n]*", text)
        if m:
            raise fvs.Missing(m.group(0)[:300])
        raise e


def marginal(run_one, query, dirs, events, workdir):
    """run_one over the small and the large event files: the marginal rate."""
    small_events = events // 10
    d = {events: dirs[0], small_events: dirs[1]}
    return fvs.marginal(lambda n, w: run_one(query, d[n], w), events, workdir)


def fmt(res, key, f):
    if res is None:
        return "skipped"
    if "missing" in res:
        return "n/a"
    return f(res[key])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS)
    ap.add_argument("--rate", type=int, default=RATE,
                    help="events per second of event time (N / rate is the event time the "
                         "windows see; Flink's Nexmark setup, 100M events at 10M/s, spans 10 s)")
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--sluice-only", action="store_true")
    ap.add_argument("--build", default=os.path.join(fvs.ROOT, "build"))
    ap.add_argument("--json")
    ap.add_argument("--keep", help="directory for the event files (kept between runs)")
    args = ap.parse_args()
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    for q in queries:
        if q not in QUERIES:
            raise SystemExit(f"unknown query '{q}' (q0..q22)")
    base = args.keep or tempfile.mkdtemp(prefix="sluice-nexmark-")
    tag = "" if args.rate == RATE else f"-at-{args.rate}"
    big = os.path.join(base, f"events-{args.events}{tag}")
    small = os.path.join(base, f"events-{args.events // 10}{tag}")
    print(f"generating {args.events} and {args.events // 10} events into {base} ...", flush=True)
    generate(args.build, args.events, big, args.rate)
    generate(args.build, args.events // 10, small, args.rate)
    py = None if args.sluice_only else fvs.ensure_flink()

    results = {}
    for q in queries:
        work = tempfile.mkdtemp(prefix=f"nexmark-{q}-", dir=base)
        res = {"sluice": None, "flink": None}
        for engine in ("sluice", "flink"):
            if engine == "flink" and (py is None or "missing" in res["sluice"]):
                continue  # Flink's figure only beside a Sluice one
            try:
                if engine == "sluice":
                    one = lambda qq, d, w: sluice_run(args.build, qq, d, w)  # noqa: E731
                else:
                    one = lambda qq, d, w: flink_run(py, qq, d, w)  # noqa: E731
                res[engine] = marginal(one, q, (big, small), args.events,
                                       os.path.join(work, engine))
            except fvs.Missing as e:
                res[engine] = {"missing": str(e)}
            except RuntimeError as e:
                res[engine] = {"missing": f"failed: {e}"[:400]}
            r = res[engine]
            print(f"{q} {engine}: " + (f"{fvs.fmt_rate(r['rate'])} rec/CPU-s, peak "
                                       f"{fvs.fmt_mem(r['peak_rss'])}" if "rate" in r
                                       else r["missing"]), flush=True)
        results[q] = res
        if args.json:  # after every query, so an interrupted run keeps what it measured
            with open(args.json, "w") as f:
                json.dump({"events": args.events, "results": results}, f, indent=1)
        shutil.rmtree(work, ignore_errors=True)

    print(f"\nNexmark, {args.events} events (marginal over {args.events // 10}), parallelism 2\n")
    print("| query | rec/CPU-s Sluice | Flink | ratio | peak RSS Sluice | Flink | ratio |")
    print("|---|---|---|---|---|---|---|")
    for q in queries:
        s, f = results[q]["sluice"], results[q]["flink"]
        ok = s and f and "rate" in s and "rate" in f
        print(f"| {q} | {fmt(s, 'rate', fvs.fmt_rate)} | {fmt(f, 'rate', fvs.fmt_rate)} | "
              f"{fvs.ratio(s['rate'], f['rate']) if ok else '-'} | "
              f"{fmt(s, 'peak_rss', fvs.fmt_mem)} | {fmt(f, 'peak_rss', fvs.fmt_mem)} | "
              f"{fvs.ratio(s['peak_rss'], f['peak_rss']) if ok else '-'} |")
    missing = [(q, e, results[q][e]["missing"]) for q in queries for e in ("sluice", "flink")
               if results[q][e] and "missing" in results[q][e]]
    if missing:
        print("\nNot run:")
        for q, e, why in missing:
            print(f"- {q} on {e}: {why}")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
