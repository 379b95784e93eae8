"""The DataStream API in C: the SilenceDetector example (a C job built as a
shared object, examples/datastream/silence.c) submitted with `sluice run
job.so args`, its KeyedProcessFunction run by the TaskManagers, and its
GAP / out-of-order / late counts compared with a replay of the same events
and watermarks computed here."""
import datetime
import glob
import json
import os
import re

from conftest import BUILD

BASE = 1767225600000
GAP_MS = 5000
DELAY_MS = 1000
JOB = os.path.join(BUILD, "examples", "silence.so")


def events(n):
    """What the job's source, calc and filter make of ids 1..n."""
    for i in range(1, n + 1):
        sensor = i % 3
        ts = BASE + i * 100 - (700 if i % 50 == 0 else 0)
        if sensor == 2 and 800 <= i <= 1200:
            continue
        yield i, sensor, ts


def replay(n):
    """The detector's results: a watermark (max seen - delay - 1) after every
    row that advances it, event timers firing as it passes them, and the
    final maximum watermark of a bounded source."""
    wm, seen = None, None
    max_ts, timers = {}, set()
    gaps, ooo, late = [], [], []

    def fire(upto):
        for t, k in sorted(x for x in timers if x[0] <= upto):
            timers.discard((t, k))
            if k in max_ts and t == max_ts[k] + GAP_MS:
                gaps.append((k, t))
                del max_ts[k]

    for i, k, ts in events(n):
        if wm is not None and ts <= wm:
            late.append(i)
        elif k in max_ts and ts <= max_ts[k]:
            ooo.append(i)
        else:
            if k in max_ts:
                timers.discard((max_ts[k] + GAP_MS, k))
            max_ts[k] = ts
            timers.add((ts + GAP_MS, k))
        seen = ts if seen is None else max(seen, ts)
        if wm is None or seen - DELAY_MS - 1 > wm:
            wm = seen - DELAY_MS - 1
            fire(wm)
    fire(float("inf"))
    return gaps, ooo, late


def read(out, name):
    rows = []
    for path in glob.glob(os.path.join(out, name, "part-*")):
        with open(path) as f:
            rows += [json.loads(line) for line in f]
    return rows


def ms(text):
    d = datetime.datetime.strptime(text + ("" if "." in text else ".0"), "%Y-%m-%d %H:%M:%S.%f")
    return int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def test_silence_detector(cluster, workdir):
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "out")
    n = 3000
    r = cluster.cli("run", JOB, out, str(n), check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    job = cluster.wait_state(jid, {"FINISHED", "FAILED"}, timeout=120)
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    gaps, ooo, late = replay(n)
    # the seed's reading: one real gap (sensor 2 goes silent mid-stream) and
    # one per sensor from the final watermark of the bounded source
    assert len(gaps) == 4 and len(late) == 0
    assert sorted((g["sensor"], ms(g["deadline"])) for g in read(out, "gaps")) == sorted(gaps)
    assert sorted(r["id"] for r in read(out, "out_of_order")) == sorted(ooo)
    assert len(ooo) == sum(1 for i, _, _ in events(n) if i % 50 == 0)
    assert read(out, "late") == []


def test_c_job_errors(cluster, workdir):
    cluster.add_tm(slots=1)
    plain = os.path.join(BUILD, "plugins", "test_ops.so")  # a shared object, not a C job
    r = cluster.cli("run", plain)
    assert r.returncode == 1 and "has no sluice_job_main() (is it a Sluice C job?)" in r.stderr
    r = cluster.cli("run", os.path.join(workdir, "missing.so"))
    assert r.returncode == 1 and "missing.so" in r.stderr
