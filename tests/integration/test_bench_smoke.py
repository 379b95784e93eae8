"""Smoke test of the Flink comparison benchmark (bench/flink_vs_sluice.py).

Runs the Sluice-only short variant -- `--quick --sluice-only --runs 1` --
against the optimised build and checks that it completes and prints a
well-formed results table: the header, one row per workload with ten cells,
each Sluice cell either a number with its unit or an "n/a (...)" reason,
each Flink cell "skipped". No timing or ratio is asserted: CI machines are
shared and the figures mean nothing here. Marked release_only because the
benchmark is meaningless under the sanitizers.
"""
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

WORKLOADS = ["1 stateless filter/projection", "2 TUMBLE 10 s, 10k keys",
             "3 HOP 1 s / 10 s, 10k keys", "3b CUMULATE 1 s / 10 s, 10k keys",
             "4 GROUP BY 10k keys (changelog)",
             "5 TUMBLE + checkpoints 1 s, RocksDB",
             "5 TUMBLE + checkpoints 1 s, Sluice hashmap (Flink RocksDB)",
             "5c TUMBLE + incremental checkpoints 1 s, RocksDB",
             "6 TUMBLE + checkpoints 1 s, RocksDB, steady 100k rows/s",
             "6b TUMBLE + checkpoints 1 s, Sluice hashmap (Flink RocksDB), steady 100k rows/s",
             "7 interval join +-1 min, orders x payments",
             "8 regular join, orders x payments (unbounded state)",
             "9 OVER RANGE 1 min AVG/COUNT, 10k keys",
             "10 MATCH_RECOGNIZE A B+ C, 10k keys",
             "9b OVER RANGE 1 min AVG/COUNT, 10k keys, RocksDB",
             "9c OVER ROWS 100 PRECEDING AVG/MIN/MAX, 10k keys",
             "9d OVER ROWS 100 PRECEDING AVG/MIN/MAX, 10k keys, RocksDB",
             "9e OVER UNBOUNDED PRECEDING SUM/COUNT/MAX, 10k keys",
             "9f OVER UNBOUNDED PRECEDING SUM/COUNT/MAX, 10k keys, RocksDB"]
HEADER = ["workload", "rec/CPU-s Sluice", "Flink", "ratio", "peak RSS Sluice", "Flink",
          "ratio", "first output Sluice", "Flink", "ratio", "load Sluice", "load Flink"]
NA = r"n/a \([a-z ]+\)"
RATE = re.compile(rf"^(\d+\.\d\d M|\d+ k|{NA})$")
MEM = re.compile(rf"^(\d+ MiB|{NA})$")
SECS = re.compile(rf"^(\d+\.\d\d s|{NA})$")
LOAD = re.compile(rf"^(\d+\.\d-\d+\.\d|-)$")


def cells(line):
    assert line.startswith("| ") and line.endswith(" |"), line
    return [c.strip() for c in line[2:-2].split(" | ")]


@pytest.mark.release_only
def test_bench_quick_sluice_only_prints_table():
    cmd = [sys.executable, os.path.join(ROOT, "bench", "flink_vs_sluice.py"),
           "--quick", "--sluice-only", "--runs", "1", "--build", BUILD]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    lines = r.stdout.splitlines()
    start = lines.index("| " + " | ".join(HEADER) + " |")
    assert lines[start + 1] == "|" + "---|" * len(HEADER)
    rows = [cells(l) for l in lines[start + 2:start + 2 + len(WORKLOADS)]]
    assert [row[0] for row in rows] == WORKLOADS
    for row in rows:
        assert len(row) == len(HEADER), row
        assert RATE.match(row[1]), row
        assert MEM.match(row[4]), row
        assert SECS.match(row[7]), row
        assert [row[2], row[5], row[8]] == ["skipped"] * 3, row
        assert [row[3], row[6], row[9]] == ["-"] * 3, row
        assert LOAD.match(row[10]) and row[11] == "-", row
    # a workload that ran reports a real rate and memory, not a placeholder
    assert any(not row[1].startswith("n/a") for row in rows)


LAT_HEADER = ["pipeline", "rows/s", "config", "p50", "p99", "p99.9", "max", "samples", "CPU-s",
              "load"]


@pytest.mark.release_only
def test_latency_bench_sluice_only_prints_table():
    """bench/latency_bench.py, Sluice's default configuration only, 2 s of
    input at 1,000 rows/s per pipeline: one table row per pipeline, every
    latency a whole number of milliseconds, samples counted. No latency is
    asserted (a shared machine)."""
    cmd = [sys.executable, os.path.join(ROOT, "bench", "latency_bench.py"), "--sluice-only",
           "--configs", "sluice", "--rates", "1000", "--seconds", "2", "--warmup", "0.5",
           "--build", BUILD]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    lines = r.stdout.splitlines()
    start = lines.index("| " + " | ".join(LAT_HEADER) + " |")
    assert lines[start + 1] == "|" + "---|" * len(LAT_HEADER)
    rows = [cells(l) for l in lines[start + 2:] if l.startswith("| ")]
    assert [row[:3] for row in rows] == [["stateless", "1000", "sluice"],
                                         ["tumble", "1000", "sluice"]]
    for row in rows:
        assert len(row) == len(LAT_HEADER), row
        for c in row[3:7]:
            assert re.match(r"^-?\d+$", c), row
        assert int(row[3]) <= int(row[4]) <= int(row[5]) <= int(row[6]), row
        assert int(row[7]) > 0, row
        assert re.match(r"^\d+\.\d$", row[8]) and LOAD.match(row[9]), row
    # 2 s at 1,000 rows/s, the first 0.5 s left out: the stateless rows are counted
    assert 1000 <= int(rows[0][7]) <= 2000, rows[0]
