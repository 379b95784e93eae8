#!/usr/bin/env python3
"""Sluice next to Apache Flink on this machine: the same workloads, back to back.

    python3 bench/flink_vs_sluice.py [--quick] [--runs N] [--sluice-only]
                                     [--workloads a,b] [--json FILE]

Flink is installed by this script from PyPI (`apache-flink`, which ships
Flink's jars and scripts) into a venv under the cache directory
($SLUICE_BENCH_CACHE, default ~/.cache/sluice-bench) on first use, and runs
in local mode: PyFlink's TableEnvironment starts one JVM with a MiniCluster
(JobManager and TaskManager in that JVM) and the job is Flink SQL (datagen
and blackhole / print connectors, TUMBLE / HOP window TVFs, GROUP BY); see
bench/flink_driver.py. Sluice runs as its two daemons, a JobManager and a
TaskManager with 2 slots, on loopback, and the job is the equivalent JSON
job graph posted to its REST API. Both engines run every operator with
parallelism 2 (the machine has 2 cores).

Generator semantics are the same on both sides: a bounded datagen source of
N rows (`number-of-rows`, split across the 2 source subtasks) of uniformly
random numbers -- `user_id` in [0, 9999] (10,000 keys), `amount` in
[1, 100] -- and, for the event-time workloads, `ts` = the time the row was
generated, with a 1 s bounded-out-of-orderness watermark. Sequence fields
are not used because Flink's sequence generator materialises its whole
range in memory up front, which would charge Flink for its test source.

Each run of a workload measures, per engine:
  * records per CPU-second, as a marginal cost: the job runs twice on fresh
    processes, with N rows and with N/10 rows, and the figure is
    (N - N/10) / (CPU(N) - CPU(N/10)), where CPU is the whole user+sys CPU
    of the engine's processes from their spawn to the job's end, read from
    /proc/<pid>/stat once the job has FINISHED (Sluice: the JobManager and
    TaskManager; Flink: the JVM of the local mini-cluster, started by
    PyFlink; the idle PyFlink driver is reported apart). Start-up, class
    loading, planning, deployment and shutdown are the same in both runs
    and cancel; nothing is polled, so no window can miss work. Both runs'
    raw CPU figures are kept in --json.
  * peak RSS: VmHWM of the same processes in the N-row run (summed for
    Sluice's two).
  * time to first output: a separate run of the same job with N = 1000 and
    a `print` sink; from the moment the first engine process is spawned
    (Sluice: both daemons spawned together, job posted as soon as REST
    answers; Flink: the JVM launched by PyFlink, not counting the Python
    import of PyFlink) to the moment the first row line appears on the
    engine's stdout. For the window workloads that first row is produced
    when the bounded input ends and its final watermark fires the windows.
Each figure is the median over --runs runs; the ratio column is Sluice /
Flink (higher is better for records/CPU-s, lower for memory and start-up).
Every workload runs at least N_MIN = 10M rows (marginal over 1M): at 2M
Flink's marginal cost still carried JIT warm-up. The 1-minute load average
is recorded before and after every run (--json, and the lowest and highest
around each engine's runs in the table's load columns). One engine runs at
a time, and a full-size run holds an exclusive lock ($TMPDIR/sluice-bench.lock,
shared with bench/nexmark/run.py and bench/latency_bench.py) so that two
benchmarks never measure at once: a second one waits for it.

Workloads 9 and 10 (over-range, match-recognize) and the other OVER
workloads (over-range-rocksdb, over-rows, over-unbounded and their -rocksdb
forms, both engines on RocksDB) are SQL text that both engines run as written: Flink through the same driver, Sluice through
`sluice sql -f` (the `sluice` client of the build) on the same two daemons;
a planner that refuses the text gives "n/a (refused by the planner)" /
"n/a (refused by flink)" with its error printed. Their first-output runs are
skipped ("n/a (not measured)"): 1,000 rows over 10,000 keys make no match.

A workload whose Sluice operator does not exist yet (the JobManager rejects
the job with "unknown type") shows "n/a (operator missing)"; a checkpointed
workload whose Sluice run lasted three checkpoint intervals but completed no
checkpoint shows "n/a (no checkpoints)" (a shorter run, as in --quick, may
legitimately complete none). --sluice-only skips Flink entirely (the CI smoke
test runs `--quick --sluice-only --runs 1`).
"""
import argparse
import fcntl
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")
FLINK_VERSION = "2.3.0"
PARALLELISM = 2
KEYS = 10000
ROW_LINE = re.compile(rb"^(\d+> )?[+-][IUD]\[")
FIRST_OUTPUT_ROWS = 1000
HUGE_RATE = "1000000000"   # rows-per-second: effectively unthrottled


class Missing(Exception):
    """The workload cannot run on this engine (reason in the message)."""


# ---------------------------------------------------------------- workloads

def w(name, title, rows, quick_rows, kind, window=None, sluice_conf=None, flink_conf=None,
      flink_same_as=None, sluice_missing=None, rate=HUGE_RATE, sql=None, first_output=True):
    """flink_same_as: the Flink side of this workload is exactly that of another
    workload (so its Flink runs are shared, not repeated). sluice_missing: what
    Sluice lacks to run it (its row shows Flink's figures only). rate: the
    source's rows-per-second (unthrottled unless a steady state is the point).
    sql: for kind "sql", a function (rows, sink) -> (ddl statements, INSERT)
    that both engines run as written (Sluice through `sluice sql -f`).
    first_output: False skips the first-output runs ("n/a (not measured)")."""
    return {"name": name, "title": title, "rows": rows, "quick_rows": quick_rows, "kind": kind,
            "window": window, "sluice_conf": sluice_conf or {}, "flink_conf": flink_conf or {},
            "flink_same_as": flink_same_as, "sluice_missing": sluice_missing, "rate": rate,
            "sql": sql, "first_output": first_output}


def checkpoint_confs(backend, ckdir):
    sluice = {"execution.checkpointing.interval": "1 s", "state.backend.type": backend,
              "state.checkpoints.dir": ckdir}
    flink = {"execution.checkpointing.interval": "1 s", "state.backend.type": "rocksdb",
             "execution.checkpointing.dir": "file://" + ckdir}
    return sluice, flink


TUMBLE = ("TUMBLE", "INTERVAL '10' SECOND")
HOP = ("HOP", "INTERVAL '1' SECOND, INTERVAL '10' SECOND")
CUMULATE = ("CUMULATE", "INTERVAL '1' SECOND, INTERVAL '10' SECOND")


# The smallest N of a workload: at 2M rows Flink's marginal cost still carries
# JIT warm-up (its figure rose 1.5-3x from 2M to 10M rows while Sluice's
# barely moved), so every workload runs at least 10M rows (marginal over 1M).
N_MIN = 10_000_000


def workloads(ckdir):
    rs, rf = checkpoint_confs("rocksdb", ckdir)
    hs, hf = checkpoint_confs("hashmap", ckdir)
    return [
        w("stateless", "1 stateless filter/projection", 20_000_000, 2_000_000, "stateless"),
        w("tumble", "2 TUMBLE 10 s, 10k keys", N_MIN, 1_000_000, "window", TUMBLE),
        w("hop", "3 HOP 1 s / 10 s, 10k keys", N_MIN, 400_000, "window", HOP),
        w("cumulate", "3b CUMULATE 1 s / 10 s, 10k keys", N_MIN, 400_000, "window", CUMULATE),
        w("group", "4 GROUP BY 10k keys (changelog)", N_MIN, 1_000_000, "group"),
        w("ckpt-rocksdb", "5 TUMBLE + checkpoints 1 s, RocksDB", N_MIN, 200_000,
          "window", TUMBLE, rs, rf),
        w("ckpt-hashmap", "5 TUMBLE + checkpoints 1 s, Sluice hashmap (Flink RocksDB)",
          N_MIN, 200_000, "window", TUMBLE, hs, hf, flink_same_as="ckpt-rocksdb"),
        w("ckpt-incremental", "5c TUMBLE + incremental checkpoints 1 s, RocksDB",
          N_MIN, 200_000, "window", TUMBLE,
          dict(rs, **{"execution.checkpointing.incremental": "true"}),
          dict(rf, **{"execution.checkpointing.incremental": "true"})),
        w("ckpt-steady", "6 TUMBLE + checkpoints 1 s, RocksDB, steady 100k rows/s",
          N_MIN, 300_000, "window", TUMBLE, rs, rf, rate="100000"),
        w("ckpt-steady-hashmap", "6b TUMBLE + checkpoints 1 s, Sluice hashmap (Flink RocksDB), "
          "steady 100k rows/s", N_MIN, 300_000, "window", TUMBLE, hs, hf, rate="100000",
          flink_same_as="ckpt-steady"),
        w("interval-join", "7 interval join +-1 min, orders x payments", N_MIN, 100_000,
          "interval-join"),
        w("regular-join", "8 regular join, orders x payments (unbounded state)", N_MIN, 100_000,
          "regular-join"),
        w("over-range", "9 OVER RANGE 1 min AVG/COUNT, 10k keys", N_MIN, 100_000, "sql",
          sql=over_range_sql, first_output=False),
        w("match-recognize", "10 MATCH_RECOGNIZE A B+ C, 10k keys", N_MIN, 100_000, "sql",
          sql=match_recognize_sql, first_output=False),
        w("over-range-rocksdb", "9b OVER RANGE 1 min AVG/COUNT, 10k keys, RocksDB", N_MIN,
          100_000, "sql", sluice_conf=ROCKSDB, flink_conf=ROCKSDB, sql=over_range_sql,
          first_output=False),
        w("over-rows", "9c OVER ROWS 100 PRECEDING AVG/MIN/MAX, 10k keys", N_MIN, 100_000,
          "sql", sql=over_rows_sql, first_output=False),
        w("over-rows-rocksdb", "9d OVER ROWS 100 PRECEDING AVG/MIN/MAX, 10k keys, RocksDB",
          N_MIN, 100_000, "sql", sluice_conf=ROCKSDB, flink_conf=ROCKSDB, sql=over_rows_sql,
          first_output=False),
        w("over-unbounded", "9e OVER UNBOUNDED PRECEDING SUM/COUNT/MAX, 10k keys", N_MIN,
          100_000, "sql", sql=over_unbounded_sql, first_output=False),
        w("over-unbounded-rocksdb", "9f OVER UNBOUNDED PRECEDING SUM/COUNT/MAX, 10k keys, RocksDB",
          N_MIN, 100_000, "sql", sluice_conf=ROCKSDB, flink_conf=ROCKSDB,
          sql=over_unbounded_sql, first_output=False),
        w("decimal-sum", "11 SUM(DECIMAL(18, 2)) per key, 10k keys (changelog)", N_MIN,
          100_000, "sql", sql=decimal_sum_sql, first_output=False),
    ]


ROCKSDB = {"state.backend.type": "rocksdb"}


def decimal_sum_sql(rows, sink):
    """Issue 29's bench: money per key -- SUM and COUNT of a DECIMAL(18, 2)
    price (a random count of cents, 0.01 .. 1000.00) per key, 10,000 keys, an
    updating result. Both engines compute the exact sum."""
    src = sql_source("src", "k INT, cents INT", rows,
                     {"fields.k.min": "0", "fields.k.max": str(KEYS - 1),
                      "fields.cents.min": "1", "fields.cents.max": "100000"})
    snk = (f"CREATE TABLE snk (k INT, total DECIMAL(38, 2), cnt BIGINT) "
           f"WITH ('connector' = '{sink}')")
    q = ("INSERT INTO snk SELECT k, SUM(price) AS total, COUNT(*) AS cnt FROM "
         "(SELECT k, CAST(cents * 0.01 AS DECIMAL(18, 2)) AS price FROM src) GROUP BY k")
    return [src, snk], q


def sql_source(name, cols, rows, opts):
    """A bounded datagen table of `rows` random rows with `ts` = generation
    time and a 1 s watermark, as the other event-time workloads have."""
    o = {"connector": "datagen", "number-of-rows": str(rows), "rows-per-second": HUGE_RATE}
    o.update(opts)
    with_ = ", ".join(f"'{k}' = '{v}'" for k, v in o.items())
    return (f"CREATE TABLE {name} ({cols}, ts TIMESTAMP(3), "
            f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ({with_})")


def over_range_sql(rows, sink):
    """Issue 30's bench: per key, the average and count of the last minute of
    event time at every row (RANGE frame), 10,000 keys."""
    src = sql_source("src", "k INT, v INT", rows,
                     {"fields.k.min": "0", "fields.k.max": str(KEYS - 1),
                      "fields.v.min": "1", "fields.v.max": "100"})
    snk = (f"CREATE TABLE snk (k INT, ts TIMESTAMP(3), avg_v INT, cnt BIGINT) "
           f"WITH ('connector' = '{sink}')")
    frame = "PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW"
    q = (f"INSERT INTO snk SELECT k, ts, AVG(v) OVER ({frame}) AS avg_v, "
         f"COUNT(*) OVER ({frame}) AS cnt FROM src")
    return [src, snk], q


def over_src(rows):
    return sql_source("src", "k INT, v INT", rows,
                      {"fields.k.min": "0", "fields.k.max": str(KEYS - 1),
                       "fields.v.min": "1", "fields.v.max": "100"})


def over_rows_sql(rows, sink):
    """Per key, the average, minimum and maximum of the row and the 100 rows
    before it in event time (ROWS frame), 10,000 keys."""
    snk = (f"CREATE TABLE snk (k INT, ts TIMESTAMP(3), avg_v INT, min_v INT, max_v INT) "
           f"WITH ('connector' = '{sink}')")
    frame = "PARTITION BY k ORDER BY ts ROWS BETWEEN 100 PRECEDING AND CURRENT ROW"
    q = (f"INSERT INTO snk SELECT k, ts, AVG(v) OVER w AS avg_v, MIN(v) OVER w AS min_v, "
         f"MAX(v) OVER w AS max_v FROM src WINDOW w AS ({frame})")
    return [over_src(rows), snk], q


def over_unbounded_sql(rows, sink):
    """Per key, the sum, count and maximum of every row up to this one in event
    time (RANGE UNBOUNDED PRECEDING), 10,000 keys."""
    snk = (f"CREATE TABLE snk (k INT, ts TIMESTAMP(3), sum_v INT, cnt BIGINT, max_v INT) "
           f"WITH ('connector' = '{sink}')")
    frame = "PARTITION BY k ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    q = (f"INSERT INTO snk SELECT k, ts, SUM(v) OVER w AS sum_v, COUNT(*) OVER w AS cnt, "
         f"MAX(v) OVER w AS max_v FROM src WINDOW w AS ({frame})")
    return [over_src(rows), snk], q


def match_recognize_sql(rows, sink):
    """Issue 31's bench: Flink's documented price-drop pattern (a start row,
    strictly falling prices, then a rise) per symbol over a random ticker of
    10,000 symbols with prices in [1, 100]."""
    src = sql_source("ticker", "symbol INT, price INT", rows,
                     {"fields.symbol.min": "0", "fields.symbol.max": str(KEYS - 1),
                      "fields.price.min": "1", "fields.price.max": "100"})
    snk = (f"CREATE TABLE snk (symbol INT, start_ts TIMESTAMP(3), bottom_ts TIMESTAMP(3), "
           f"end_ts TIMESTAMP(3), start_price INT, bottom_price INT, end_price INT) "
           f"WITH ('connector' = '{sink}')")
    q = ("INSERT INTO snk SELECT * FROM ticker MATCH_RECOGNIZE ("
         " PARTITION BY symbol ORDER BY ts"
         " MEASURES A.ts AS start_ts, LAST(B.ts) AS bottom_ts, C.ts AS end_ts,"
         " A.price AS start_price, LAST(B.price) AS bottom_price, C.price AS end_price"
         " ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW"
         " PATTERN (A B+ C)"
         " DEFINE B AS (LAST(B.price, 1) IS NULL AND B.price < A.price)"
         " OR B.price < LAST(B.price, 1),"
         " C AS C.price > LAST(B.price, 1)) MR")
    return [src, snk], q


def join_keys(rows):
    """order_id range of the join workloads: about one payment per order."""
    return max(1000, rows // 2)


def sluice_job(wl, rows, sink):
    """The workload as a Sluice job graph; sink is 'blackhole' or 'print'."""
    if wl["kind"] in ("interval-join", "regular-join"):
        return sluice_join_job(wl, rows, sink)
    schema = [{"name": "user_id", "type": "INT"}, {"name": "amount", "type": "INT"}]
    conf = {"number-of-rows": str(rows), "rows-per-second": wl["rate"],
            "fields.user_id.min": "0", "fields.user_id.max": str(KEYS - 1),
            "fields.amount.min": "1", "fields.amount.max": "100"}
    if wl["kind"] == "stateless":
        schema.insert(0, {"name": "id", "type": "BIGINT"})
        conf.update({"fields.id.min": "0", "fields.id.max": "1000000000"})
    if wl["kind"] == "window":
        schema.append({"name": "ts", "type": "TIMESTAMP(3)"})
    vs = [{"id": "gen", "type": "datagen", "schema": schema, "config": conf}]
    es = []

    def add(v, strategy="forward", keys=None):
        e = {"from": vs[-1]["id"], "to": v["id"], "strategy": strategy}
        if keys:
            e["keys"] = keys
        vs.append(v)
        es.append(e)

    if wl["kind"] == "stateless":
        add({"id": "calc", "type": "calc",
             "config": {"projection": ["id", "user_id", "amount * 2 AS a2"],
                        "filter": "amount % 2 = 0"}})
    elif wl["kind"] == "window":
        fn, args = wl["window"]
        add({"id": "wm", "type": "watermark", "config": {"column": "ts", "delay": "1 s"}})
        add({"id": "win", "type": "window",
             "config": {"time-column": "ts", "window": f"{fn}({args})", "group-by": ["user_id"],
                        "aggregates": ["COUNT(*) AS cnt", "SUM(amount) AS total"]}},
            "hash", ["user_id"])
    else:
        add({"id": "agg", "type": "group_aggregate",
             "config": {"group-by": ["user_id"],
                        "aggregates": ["COUNT(*) AS cnt", "SUM(amount) AS total"]}},
            "hash", ["user_id"])
    add({"id": "sink", "type": sink, "config": {}})
    return {"name": f"bench {wl['name']}", "parallelism": PARALLELISM,
            "vertices": vs, "edges": es}


def join_sides(rows):
    """orders and payments: rows / 2 each, order_id uniform in [0, join_keys),
    ts = generation time with a 1 s watermark."""
    half = str(rows // 2)
    keys = str(join_keys(rows) - 1)
    common = {"number-of-rows": half, "rows-per-second": HUGE_RATE,
              "fields.order_id.min": "0", "fields.order_id.max": keys}
    orders = dict(common, **{"fields.amount.min": "1", "fields.amount.max": "500"})
    pays = dict(common, **{"fields.method.length": "6"})
    return orders, pays


JOIN_ON = {"interval-join": " AND p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL '1' MINUTE",
           "regular-join": ""}


def sluice_join_job(wl, rows, sink):
    orders, pays = join_sides(rows)
    vs = [{"id": "orders", "type": "datagen",
           "schema": [{"name": "order_id", "type": "INT"}, {"name": "amount", "type": "INT"},
                      {"name": "ts", "type": "TIMESTAMP(3)"}], "config": orders},
          {"id": "owm", "type": "watermark", "config": {"column": "ts", "delay": "1 s"}},
          {"id": "payments", "type": "datagen",
           "schema": [{"name": "order_id", "type": "INT"}, {"name": "method", "type": "STRING"},
                      {"name": "ts", "type": "TIMESTAMP(3)"}], "config": pays},
          {"id": "pwm", "type": "watermark", "config": {"column": "ts", "delay": "1 s"}}]
    cfg = {"join-type": "inner", "left-keys": ["order_id"], "right-keys": ["order_id"]}
    if wl["kind"] == "interval-join":
        cfg.update({"left-time": "ts", "right-time": "ts", "lower-bound": -60000,
                    "upper-bound": 60000})
    vs += [{"id": "join", "type": wl["kind"].replace("-", "_"), "config": cfg},
           {"id": "proj", "type": "calc", "config": {"projection": ["order_id", "amount", "method"]}},
           {"id": "sink", "type": sink, "config": {}}]
    es = [{"from": "orders", "to": "owm", "strategy": "forward"},
          {"from": "payments", "to": "pwm", "strategy": "forward"},
          {"from": "owm", "to": "join", "strategy": "hash", "keys": ["order_id"], "input": 0},
          {"from": "pwm", "to": "join", "strategy": "hash", "keys": ["order_id"], "input": 1},
          {"from": "join", "to": "proj", "strategy": "forward"},
          {"from": "proj", "to": "sink", "strategy": "forward"}]
    return {"name": f"bench {wl['name']}", "parallelism": PARALLELISM, "vertices": vs, "edges": es}


def flink_join_sql(wl, rows, sink):
    orders, pays = join_sides(rows)

    def table(name, cols, opts):
        with_ = ", ".join(f"'{k}' = '{v}'" for k, v in dict(opts, connector="datagen").items())
        return (f"CREATE TABLE {name} ({cols}, ts TIMESTAMP(3), "
                f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ({with_})")
    ddl = [table("orders", "order_id INT, amount INT", orders),
           table("payments", "order_id INT, `method` STRING", pays),
           f"CREATE TABLE snk (order_id INT, amount INT, `method` STRING) WITH ('connector' = '{sink}')"]
    q = ("INSERT INTO snk SELECT o.order_id, o.amount, p.`method` FROM orders o JOIN payments p "
         "ON o.order_id = p.order_id" + JOIN_ON[wl["kind"]])
    return ddl, q


def flink_sql(wl, rows, sink):
    """The workload as Flink SQL: (ddl statements, insert statement)."""
    if wl["kind"] == "sql":
        return wl["sql"](rows, sink)
    if wl["kind"] in ("interval-join", "regular-join"):
        return flink_join_sql(wl, rows, sink)
    opts = {"connector": "datagen", "number-of-rows": str(rows), "rows-per-second": wl["rate"],
            "fields.user_id.min": "0", "fields.user_id.max": str(KEYS - 1),
            "fields.amount.min": "1", "fields.amount.max": "100"}
    cols = ["user_id INT", "amount INT"]
    if wl["kind"] == "stateless":
        cols.insert(0, "id BIGINT")
        opts.update({"fields.id.min": "0", "fields.id.max": "1000000000"})
    if wl["kind"] == "window":
        cols += ["ts TIMESTAMP(3)", "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"]
    with_ = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items())
    src = f"CREATE TABLE src ({', '.join(cols)}) WITH ({with_})"
    if wl["kind"] == "stateless":
        out = "id BIGINT, user_id INT, a2 INT"
        q = "SELECT id, user_id, amount * 2 AS a2 FROM src WHERE amount % 2 = 0"
    elif wl["kind"] == "window":
        fn, args = wl["window"]
        out = ("window_start TIMESTAMP(3), window_end TIMESTAMP(3), user_id INT, "
               "cnt BIGINT, total INT")
        q = (f"SELECT window_start, window_end, user_id, COUNT(*) AS cnt, SUM(amount) AS total "
             f"FROM TABLE({fn}(TABLE src, DESCRIPTOR(ts), {args})) "
             f"GROUP BY window_start, window_end, user_id")
    else:
        out = "user_id INT, cnt BIGINT, total INT"
        q = "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total FROM src GROUP BY user_id"
    snk = f"CREATE TABLE snk ({out}) WITH ('connector' = '{sink}')"
    return [src, snk], f"INSERT INTO snk {q}"


# ------------------------------------------------------------ process stats

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def peak_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc, timeout=15):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def watch_first_row(stream, found):
    """Read lines from stream; note the monotonic time of the first row line."""
    for line in iter(stream.readline, b""):
        if "t" not in found and ROW_LINE.match(line):
            found["t"] = time.monotonic()
        elif line.startswith(b"BENCH-"):
            found.setdefault("lines", []).append(line.decode().strip())
    found["eof"] = True


# ------------------------------------------------------------------- Sluice

class SluiceCluster:
    """A JobManager and a TaskManager (2 slots) on loopback, both spawned at once."""

    def __init__(self, build, workdir, conf, tm_stdout):
        self.workdir = workdir
        self.rest = free_port()
        rpc = free_port()
        base = dict(conf)
        base["taskmanager.tmp.dirs"] = workdir
        jm_conf = dict(base, **{"rest.port": self.rest, "rest.address": "127.0.0.1",
                                "jobmanager.rpc.port": rpc})
        tm_conf = dict(base, **{"jobmanager.rpc.address": "127.0.0.1",
                                "jobmanager.rpc.port": rpc,
                                "taskmanager.numberOfTaskSlots": PARALLELISM})
        env = dict(os.environ)
        env.pop("SLUICE_PROPERTIES", None)

        def args(binary, c):
            a = [os.path.join(build, "bin", binary)]
            for k, v in c.items():
                a += ["-D", f"{k}={v}"]
            return a

        self.jm_log = open(os.path.join(workdir, "jobmanager.log"), "wb")
        self.tm_log = open(os.path.join(workdir, "taskmanager.log"), "wb")
        self.t0 = time.monotonic()
        self.jm = subprocess.Popen(args("sluice-jobmanager", jm_conf), stdout=subprocess.DEVNULL,
                                   stderr=self.jm_log, cwd=workdir, env=env)
        self.tm = subprocess.Popen(args("sluice-taskmanager", tm_conf), stdout=tm_stdout,
                                   stderr=self.tm_log, cwd=workdir, env=env)

    def pids(self):
        return [self.jm.pid, self.tm.pid]

    def request(self, method, path, body=None, timeout=30):
        c = http.client.HTTPConnection("127.0.0.1", self.rest, timeout=timeout)
        try:
            c.request(method, path, body=json.dumps(body) if body is not None else None,
                      headers={"Content-Type": "application/json"} if body is not None else {})
            r = c.getresponse()
            raw = r.read()
            try:
                return r.status, json.loads(raw) if raw else None
            except ValueError:
                return r.status, raw.decode("utf-8", "replace")
        finally:
            c.close()

    def alive_or_die(self):
        for name, p in (("JobManager", self.jm), ("TaskManager", self.tm)):
            if p.poll() is not None:
                raise RuntimeError(f"Sluice {name} exited with {p.returncode}; logs in "
                                   f"{self.workdir}")

    def wait_rest(self, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.request("GET", "/overview", timeout=2)
            except OSError:
                self.alive_or_die()
                if time.monotonic() > deadline:
                    raise RuntimeError("Sluice REST API did not come up")
                time.sleep(0.002)

    def wait_slots(self, n, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            _, ov = self.request("GET", "/overview")
            if ov and ov.get("slots-available", 0) >= n:
                return
            self.alive_or_die()
            if time.monotonic() > deadline:
                raise RuntimeError("Sluice TaskManager did not register")
            time.sleep(0.01)

    def submit(self, job):
        status, body = self.request("POST", "/jobs", job)
        if status != 200:
            errs = body.get("errors", [body]) if isinstance(body, dict) else [body]
            text = "; ".join(str(e) for e in errs)
            if "unknown type" in text:
                raise Missing("operator missing")
            raise RuntimeError(f"Sluice rejected the job: {text}")
        return body["jobid"]

    def wait_running(self, jid, timeout=60):
        """Until every vertex runs (or has finished already)."""
        deadline = time.monotonic() + timeout
        while True:
            _, j = self.request("GET", f"/jobs/{jid}")
            if isinstance(j, dict):
                vs = j.get("vertices", [])
                if j.get("state") in ("FINISHED", "FAILED", "CANCELED") or (
                        vs and all(v.get("status") in ("RUNNING", "FINISHED") for v in vs)):
                    return
            self.alive_or_die()
            if time.monotonic() > deadline:
                raise RuntimeError(f"Sluice job not running after {timeout}s")
            time.sleep(0.005)

    def wait_done(self, jid, timeout):
        deadline = time.monotonic() + timeout
        while True:
            _, j = self.request("GET", f"/jobs/{jid}")
            state = j.get("state") if isinstance(j, dict) else None
            if state == "FINISHED":
                return
            if state in ("FAILED", "CANCELED"):
                _, ex = self.request("GET", f"/jobs/{jid}/exceptions")
                raise RuntimeError(f"Sluice job {state}: {json.dumps(ex)[:600]}")
            self.alive_or_die()
            if time.monotonic() > deadline:
                raise RuntimeError(f"Sluice job not finished after {timeout}s (state {state})")
            time.sleep(0.02)

    def completed_checkpoints(self, jid):
        status, body = self.request("GET", f"/jobs/{jid}/checkpoints")
        if status != 200 or not isinstance(body, dict):
            return 0
        return int(body.get("counts", {}).get("completed", 0))

    def shutdown(self):
        for p in (self.tm, self.jm):
            stop(p)
        self.jm_log.close()
        self.tm_log.close()


def sluice_sql_submit(build, c, wl, rows, sink, workdir):
    """The workload's SQL through `sluice sql -f` against cluster c; its job id.
    A statement the planner refuses raises Missing (the error is printed)."""
    ddl, insert = wl["sql"](rows, sink)
    path = os.path.join(workdir, "job.sql")
    with open(path, "w") as f:
        f.write(f"SET 'parallelism.default' = '{PARALLELISM}';\n")
        f.write("".join(s + ";\n" for s in ddl + [insert]))
    r = subprocess.run([os.path.join(build, "bin", "sluice"), "-m", f"127.0.0.1:{c.rest}",
                        "sql", "-f", path], capture_output=True, text=True, timeout=120)
    m = re.findall(r"^Job ID: ([0-9a-f]{32})$", r.stdout, re.M)
    if not m:
        out = r.stdout + r.stderr
        err = re.search(r"\[ERROR\][^\n]*(\n(?!Flink SQL>)[^\n]*)*", out)
        print("  Sluice refused the SQL: " +
              " ".join((err.group(0) if err else out.strip()[-400:]).split())[:400], flush=True)
        raise Missing("refused by the planner")
    return m[-1]


def sluice_throughput(build, wl, rows, workdir):
    ck = os.path.join(workdir, "checkpoints")
    os.makedirs(ck, exist_ok=True)
    c = SluiceCluster(build, workdir, wl["sluice_conf"], subprocess.DEVNULL)
    try:
        c.wait_rest()
        c.wait_slots(PARALLELISM)
        cpu0 = sum(cpu_seconds(p) for p in c.pids())
        t0 = time.monotonic()
        if wl["kind"] == "sql":
            jid = sluice_sql_submit(build, c, wl, rows, "blackhole", workdir)
        else:
            jid = c.submit(sluice_job(wl, rows, "blackhole"))
        c.wait_running(jid)
        cpu_run = sum(cpu_seconds(p) for p in c.pids())
        t_run = time.monotonic()
        c.wait_done(jid, timeout=900)
        t1 = time.monotonic()
        cpu1 = sum(cpu_seconds(p) for p in c.pids())
        rss = sum(peak_rss(p) for p in c.pids())
        res = {"cpu_total_s": cpu1, "cpu_s": cpu1 - cpu_run, "wall_s": t1 - t_run,
               "cpu_submit_s": cpu1 - cpu0, "wall_submit_s": t1 - t0, "peak_rss": rss}
        if "execution.checkpointing.interval" in wl["sluice_conf"]:
            res["checkpoints"] = c.completed_checkpoints(jid)
            if res["checkpoints"] == 0 and t1 - t_run >= 3.0:
                # ran for three intervals and completed none: the row says n/a, not a figure
                raise Missing("no checkpoints")
        return res
    finally:
        c.shutdown()


def marginal(run_one, rows, workdir):
    """Run the job with rows and with rows // 10 on fresh processes; the
    records per CPU-second of the difference (fixed costs cancel)."""
    small_rows = max(rows // 10, 1)
    load = {}

    def timed(n, tag):
        before = loadavg1()
        got = run_one(n, os.path.join(workdir, tag))
        load[tag] = [before, loadavg1()]
        return got
    small = timed(small_rows, "small")
    large = timed(rows, "large")
    extra = large["cpu_total_s"] - small["cpu_total_s"]
    if extra <= 0:
        raise RuntimeError(f"{rows} rows cost no more CPU than {small_rows} "
                           f"({large['cpu_total_s']:.2f} s vs {small['cpu_total_s']:.2f} s): "
                           "raise the row count")
    res = dict(large)
    res.update({"rate": (rows - small_rows) / extra, "small_rows": small_rows,
                "small": small, "load": load})
    return res


def loadavg1():
    """The 1-minute load average, rounded: recorded before and after every run."""
    return round(os.getloadavg()[0], 2)


def fmt_load(res):
    """'a-b' : the lowest and highest 1-minute load seen around a marginal's two runs."""
    vals = [v for pair in res.get("load", {}).values() for v in pair]
    return f"{min(vals):.1f}-{max(vals):.1f}" if vals else "?"


BENCH_LOCK = os.path.join(tempfile.gettempdir(), "sluice-bench.lock")


def engine_lock():
    """An exclusive lock held while an engine is measured, so that two
    benchmark scripts (of this tree or another's) never measure at once:
    a second one waits here. Returns the open file (the lock lives while it
    is open)."""
    f = open(BENCH_LOCK, "w")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"waiting for {BENCH_LOCK} (another benchmark is measuring) ...", flush=True)
        fcntl.flock(f, fcntl.LOCK_EX)
    return f


def sluice_marginal(build, wl, rows, workdir):
    def one(n, d):
        os.makedirs(d)
        return sluice_throughput(build, wl, n, d)
    return marginal(one, rows, workdir)


def flink_marginal(py, wl, rows, workdir):
    def one(n, d):
        os.makedirs(d)
        return flink_run(py, wl, n, "blackhole", "throughput", d)
    return marginal(one, rows, workdir)


def sluice_first_output(build, wl, workdir):
    found = {}
    c = SluiceCluster(build, workdir, wl["sluice_conf"], subprocess.PIPE)
    reader = threading.Thread(target=watch_first_row, args=(c.tm.stdout, found), daemon=True)
    reader.start()
    try:
        c.wait_rest()
        jid = c.submit(sluice_job(wl, FIRST_OUTPUT_ROWS, "print"))
        deadline = time.monotonic() + 120
        while "t" not in found:
            c.alive_or_die()
            if time.monotonic() > deadline:
                raise RuntimeError("no Sluice output row within 120 s")
            _, j = c.request("GET", f"/jobs/{jid}")
            if isinstance(j, dict) and j.get("state") in ("FAILED", "CANCELED"):
                raise RuntimeError(f"Sluice first-output job {j.get('state')}")
            time.sleep(0.005)
        return {"first_output_s": found["t"] - c.t0}
    finally:
        c.shutdown()
        reader.join(timeout=10)


# -------------------------------------------------------------------- Flink

def cache_dir():
    return os.environ.get("SLUICE_BENCH_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "sluice-bench"))


def ensure_flink():
    """A venv with apache-flink; returns its python. Installs on first use."""
    venv = os.path.join(cache_dir(), f"flink-{FLINK_VERSION}")
    py = os.path.join(venv, "bin", "python")
    marker = os.path.join(venv, ".installed")
    if os.path.exists(marker):
        return py
    # processes starting at the same time (parallel test workers) install one
    # at a time: the others wait for the lock and then find the marker
    os.makedirs(cache_dir(), exist_ok=True)
    with open(os.path.join(cache_dir(), ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(marker):
            install_flink(venv, py, marker)
    return py


def install_flink(venv, py, marker):
    if shutil.which("java") is None:
        raise SystemExit("Flink needs Java 17 (`java` not found on PATH)")
    print(f"Installing apache-flink=={FLINK_VERSION} into {venv} (once; about 850 MB)...",
          flush=True)
    if subprocess.run([sys.executable, "-m", "venv", venv]).returncode != 0:
        raise SystemExit(f"could not create a venv in {venv} with {sys.executable} "
                         "(on Debian: apt-get install python3-venv)")
    if subprocess.run([py, "-m", "pip", "install", "-q",
                       f"apache-flink=={FLINK_VERSION}"]).returncode != 0:
        raise SystemExit(f"pip could not install apache-flink=={FLINK_VERSION} into {venv}")
    open(marker, "w").close()


def flink_run(py, wl, rows, sink, mode, workdir):
    ddl, insert = flink_sql(wl, rows, sink)
    try:
        return flink_run_sql(py, ddl, insert, wl["flink_conf"], mode, workdir)
    except RuntimeError:
        err = os.path.join(workdir, "flink-driver.err")
        text = open(err, errors="replace").read() if os.path.exists(err) else ""
        m = re.search(r"(org\.apache\.flink\.table\.api\.\w+Exception|"
                      r"org\.apache\.calcite\.\w+\.\w+Exception)[^\n]*", text)
        if m:
            print(f"  Flink refused the SQL: {m.group(0)[:400]}", flush=True)
            raise Missing("refused by flink")
        raise


def flink_run_sql(py, ddl, insert, flink_conf, mode, workdir):
    """One Flink SQL job (ddl statements, then the INSERT) in local mode
    through bench/flink_driver.py; its BENCH-RESULT (throughput mode) or the
    time to its first output row (first-output mode)."""
    ck = os.path.join(workdir, "checkpoints")
    os.makedirs(ck, exist_ok=True)
    port = free_port()
    conf = {"parallelism.default": str(PARALLELISM), "rest.port": str(port),
            "rest.bind-port": str(port), "rest.address": "127.0.0.1"}
    conf.update(flink_conf)
    if "execution.checkpointing.interval" in conf:
        conf["execution.checkpointing.externalized-checkpoint-retention"] = \
            "RETAIN_ON_CANCELLATION"
    spec_path = os.path.join(workdir, "flink-job.json")
    with open(spec_path, "w") as f:
        json.dump({"config": conf, "ddl": ddl, "insert": insert, "mode": mode}, f)
    env = dict(os.environ, FLINK_LOG_DIR=workdir, PYTHONUNBUFFERED="1")
    err = open(os.path.join(workdir, "flink-driver.err"), "wb")
    p = subprocess.Popen([py, os.path.join(HERE, "flink_driver.py"), spec_path],
                         stdout=subprocess.PIPE, stderr=err, cwd=workdir, env=env,
                         start_new_session=True)
    found = {}
    reader = threading.Thread(target=watch_first_row, args=(p.stdout, found), daemon=True)
    reader.start()
    try:
        if mode == "first-output":
            deadline = time.monotonic() + 300
            while "t" not in found:
                if p.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"no Flink output row; see {workdir}/flink-driver.err")
                time.sleep(0.005)
            t0 = [float(l.split()[1]) for l in found.get("lines", []) if l.startswith("BENCH-T0")]
            return {"first_output_s": found["t"] - t0[0]}
        rc = p.wait(timeout=1800)
        reader.join(timeout=10)
        results = [l for l in found.get("lines", []) if l.startswith("BENCH-RESULT ")]
        if rc != 0 or not results:
            raise RuntimeError(f"Flink driver exited with {rc}; see {workdir}/flink-driver.err")
        res = json.loads(results[-1].split(" ", 1)[1])
        if "execution.checkpointing.interval" in conf:
            res["checkpoints"] = flink_checkpoints(workdir)
        return res
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)   # the session this function started
            p.wait()
        reader.join(timeout=10)
        err.close()


def flink_checkpoints(workdir):
    n = 0
    for name in os.listdir(workdir):
        if name.endswith(".log"):
            with open(os.path.join(workdir, name), errors="replace") as f:
                n += sum(1 for line in f if "Completed checkpoint" in line)
    return n


# ------------------------------------------------------------------- report

def fmt_rate(v):
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k"


def fmt_mem(v):
    return f"{v / 2**20:.0f} MiB"


def fmt_time(v):
    return f"{v:.2f} s"


def cell(results, key, fmt):
    if isinstance(results, str):
        return results
    vals = [r[key] for r in results if key in r]
    return fmt(statistics.median(vals)) if vals else "n/a"


def median(results, key):
    if isinstance(results, str):
        return None
    vals = [r[key] for r in results if key in r]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def loads(results):
    """The lowest and highest 1-minute load average around an engine's runs."""
    if isinstance(results, str) or not results:
        return "-"
    vals = [v for r in results for pair in r.get("load", {}).values() for v in pair]
    return f"{min(vals):.1f}-{max(vals):.1f}" if vals else "?"


def table(rows_out):
    head = ["workload", "rec/CPU-s Sluice", "Flink", "ratio", "peak RSS Sluice", "Flink",
            "ratio", "first output Sluice", "Flink", "ratio", "load Sluice", "load Flink"]
    lines = []
    for wl, rows, s_tp, f_tp, s_fo, f_fo in rows_out:
        s_rate = None if isinstance(s_tp, str) else median(s_tp, "rate")
        f_rate = None if isinstance(f_tp, str) else median(f_tp, "rate")
        lines.append([
            wl["title"],
            s_tp if isinstance(s_tp, str) else fmt_rate(s_rate),
            f_tp if isinstance(f_tp, str) else fmt_rate(f_rate),
            ratio(s_rate, f_rate),
            cell(s_tp, "peak_rss", fmt_mem), cell(f_tp, "peak_rss", fmt_mem),
            ratio(median(s_tp, "peak_rss"), median(f_tp, "peak_rss")),
            cell(s_fo, "first_output_s", fmt_time), cell(f_fo, "first_output_s", fmt_time),
            ratio(median(s_fo, "first_output_s"), median(f_fo, "first_output_s")),
            loads(s_tp), loads(f_tp),
        ])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(l) + " |" for l in lines]
    return "\n".join(out)


# --------------------------------------------------------------------- main

def run_guarded(fn, *args):
    """A result dict, "n/a (reason)" for a known gap, or "n/a (run failed)"
    (with the error printed) for anything else: one broken run does not throw
    away the others, but it makes the script exit non-zero."""
    try:
        return fn(*args)
    except Missing as e:
        return f"n/a ({e})"
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
        print(f"  error: {type(e).__name__}: {e}", flush=True)
        return "n/a (run failed)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small row counts (seconds per run)")
    ap.add_argument("--runs", type=int, default=3, help="runs per workload and engine (median)")
    ap.add_argument("--sluice-only", action="store_true", help="skip Flink")
    ap.add_argument("--workloads", help="comma-separated subset of: " +
                    ",".join(x["name"] for x in workloads("")))
    ap.add_argument("--rows", type=int, help="override N for every workload")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="Sluice build directory (default build/)")
    ap.add_argument("--json", help="also write every measurement to this file")
    ap.add_argument("--keep", action="store_true", help="keep the work directories")
    ap.add_argument("--no-first-output", action="store_true",
                    help="skip the first-output runs (records per CPU-second and RSS only)")
    a = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C, so the finally blocks stop every daemon,
    # JVM and driver this script started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    for b in ("sluice-jobmanager", "sluice-taskmanager"):
        if not os.access(os.path.join(a.build, "bin", b), os.X_OK):
            raise SystemExit(f"{a.build}/bin/{b} not found: run `make` first")
    py = None if a.sluice_only else ensure_flink()
    # held until exit: one benchmark measures at a time (--quick measures nothing
    # worth a figure, so the CI smoke test does not wait behind a long benchmark)
    lock = None if a.quick else engine_lock()  # noqa: F841

    top = tempfile.mkdtemp(prefix="sluice-bench-")
    # run a private copy of the daemons, so a rebuild of build/ during a long
    # benchmark cannot change or remove them under it
    os.makedirs(os.path.join(top, "build", "bin"))
    for b in ("sluice-jobmanager", "sluice-taskmanager", "sluice"):
        if os.path.exists(os.path.join(a.build, "bin", b)):   # the client: SQL workloads
            shutil.copy2(os.path.join(a.build, "bin", b), os.path.join(top, "build", "bin", b))
    build = os.path.join(top, "build")
    chosen = workloads(os.path.join(top, "ck"))
    if a.workloads:
        names = a.workloads.split(",")
        unknown = set(names) - {x["name"] for x in chosen}
        if unknown:
            raise SystemExit(f"unknown workload(s): {', '.join(sorted(unknown))}")
        chosen = [x for x in chosen if x["name"] in names]

    seq = [0]

    def wdir(tag):
        seq[0] += 1
        d = os.path.join(top, f"{seq[0]:03d}-{tag}")
        os.makedirs(d)
        return d

    results = {x["name"]: {"s_tp": [], "f_tp": [], "s_fo": [], "f_fo": []} for x in chosen}
    failures = 0
    started = time.time()
    load_start = os.getloadavg()[0]
    for run in range(a.runs):
        for wl in chosen:
            rows = a.rows or (wl["quick_rows"] if a.quick else wl["rows"])
            r = results[wl["name"]]
            steps = [("s_tp", sluice_marginal, (build, wl, rows)),
                     ("s_fo", sluice_first_output, (build, wl))]
            if wl.get("sluice_missing"):
                r["s_tp"] = r["s_fo"] = f"n/a ({wl['sluice_missing']})"
            if not wl["first_output"] or a.no_first_output:
                r["s_fo"] = r["f_fo"] = "n/a (not measured)"
            shared = wl["flink_same_as"] in results
            if py and not shared:
                steps += [("f_tp", lambda wl_, rows_, d: flink_marginal(py, wl_, rows_, d),
                           (wl, rows)),
                          ("f_fo", lambda wl_, d: flink_run(py, wl_, FIRST_OUTPUT_ROWS, "print",
                                                            "first-output", d), (wl,))]
            for key, fn, args in steps:
                if isinstance(r[key], str):
                    continue                       # already known to be n/a
                got = run_guarded(fn, *args, wdir(f"{wl['name']}-{key}"))
                if got == "n/a (run failed)":
                    failures += 1
                    if not r[key]:
                        r[key] = got
                elif isinstance(got, str):
                    r[key] = got
                else:
                    r[key].append(got)
                print(f"run {run + 1}/{a.runs} {wl['name']:<13} {key}: "
                      f"{got if isinstance(got, str) else json.dumps(got)}", flush=True)

    rows_out = []
    for wl in chosen:
        r = results[wl["name"]]
        rows = a.rows or (wl["quick_rows"] if a.quick else wl["rows"])
        src = results.get(wl["flink_same_as"], r)
        f_tp = "skipped" if a.sluice_only else src["f_tp"]
        f_fo = "skipped" if a.sluice_only else src["f_fo"]
        if isinstance(r["s_tp"], str) and not isinstance(r["s_fo"], str):
            r["s_fo"] = r["s_tp"]
        rows_out.append((wl, rows, r["s_tp"], f_tp, r["s_fo"], f_fo))

    load_end = os.getloadavg()[0]
    print()
    print(f"Sluice vs Flink {FLINK_VERSION}" + (" (Flink skipped)" if a.sluice_only else "") +
          f", parallelism {PARALLELISM}, median of {a.runs} run(s), "
          f"{'quick' if a.quick else 'full'} row counts, {time.time() - started:.0f} s")
    print(f"machine: {os.cpu_count()} CPUs, 1-min load average {load_start:.1f} at start, "
          f"{load_end:.1f} at end")
    print("rows per workload: " + ", ".join(
        f"{wl['name']}={rows}" for wl, rows, *_ in rows_out))
    print(table(rows_out))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"flink_version": FLINK_VERSION, "runs": a.runs, "quick": a.quick,
                       "rows": {wl["name"]: rows for wl, rows, *_ in rows_out},
                       "load_average": [load_start, load_end],
                       "results": results}, f, indent=1)
    if not a.keep:
        shutil.rmtree(top, ignore_errors=True)
    else:
        print(f"work directories kept in {top}")
    if failures:
        print(f"{failures} run(s) failed (see the errors above)")
        sys.exit(1)


if __name__ == "__main__":
    main()
