"""Flink SQL's exact results where Sluice used to differ (issue 36), end to
end with `sluice sql -f` on a cluster. Inputs are JSON files written here in
a fixed arrival order with out-of-order, boundary and late rows; the
watermark follows every row ('pipeline.auto-watermark-interval' = '0 ms'),
so each expected result is computed here by a Python model of Flink's rules:

- the SQL watermark is max(ts) - delay (Flink SQL), not max - delay - 1 ms
  (the DataStream rule): a row exactly at the boundary is late in TUMBLE,
  HOP and CUMULATE;
- keep-first deduplication on event time holds rows until the watermark,
  drops late rows and emits insert-only output, also across a savepoint
  restored at another parallelism on both state backends;
- Flink's cascaded windows (the inner one grouped by window_time), MIN/MAX
  of STRING in TUMBLE/HOP/SESSION windows, window TVF rows that keep late
  rows, FLOOR/CEIL(ts TO unit), MOD's result type and Flink's reserved
  words (refused unquoted as names).
"""
import collections
import json
import os
import random
import re

import pytest

from conftest import wait_for
from test_checkpoints import committed_files
from test_sql import BASE, finish, job_ids, ms, run_sql

SEC = 1000


def ts_text(t):
    """BASE-relative milliseconds as a TIMESTAMP(3) literal of the JSON format."""
    import datetime
    d = datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S.") + f"{t % 1000:03d}"


def write_rows(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def read_json(out):
    got = []
    for path in committed_files(out):
        with open(path) as f:
            got += [json.loads(line) for line in f if line.strip()]
    return got


def late_dropped(cluster, jid):
    """numLateRecordsDropped summed over every vertex and subtask of the job."""
    total = 0
    for v in cluster.job(jid)["vertices"]:
        m = cluster.get(f"/jobs/{jid}/vertices/{v['id']}/subtasks/metrics"
                        "?get=numLateRecordsDropped&agg=sum")
        total += int(m[0]["sum"]) if m else 0
    return total


# ---- 1. the SQL watermark boundary ------------------------------------------------------

E = BASE + 60 * SEC  # a window end (a multiple of 10 s)
BOUNDARY = [  # (id, ts): ordinary rows, then window_end + 4.999 s, then window_end - 0.3 s
    (1, E - 9 * SEC), (2, E - 6 * SEC), (3, E - 2 * SEC), (4, E + 4999), (5, E - 300),
    (6, E + 7 * SEC), (7, E + 12 * SEC),
]


def windows_of(kind, t):
    """The [start, end) windows of a row at t: TUMBLE 10 s, HOP 10 s by 5 s,
    CUMULATE 5 s steps up to 10 s."""
    if kind == "TUMBLE":
        s = t // (10 * SEC) * (10 * SEC)
        return [(s, s + 10 * SEC)]
    if kind == "HOP":
        s = t // (5 * SEC) * (5 * SEC)
        return [(s - 5 * SEC, s + 5 * SEC), (s, s + 10 * SEC)]
    s = t // (10 * SEC) * (10 * SEC)
    return [(s, e) for e in (s + 5 * SEC, s + 10 * SEC) if t < e]


def window_model(kind, rows, delay):
    """Flink SQL: watermark = max(ts) - delay after each row; a row is late for a
    window when end - 1 <= watermark; a row late for all its windows is dropped
    and counted."""
    wm, mx, counts, late = None, None, collections.Counter(), 0
    for _, t in rows:
        live = [w for w in windows_of(kind, t) if wm is None or w[1] - 1 > wm]
        if not live:
            late += 1
        for w in live:
            counts[w] += 1
        mx = t if mx is None else max(mx, t)
        wm = mx - delay
    return dict(counts), late


WINDOW_TVF = {
    "TUMBLE": "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
    "HOP": "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
    "CUMULATE": "CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
}


def test_sql_watermark_is_max_minus_delay_at_the_boundary(cluster, workdir):
    """A row at window_end + 4.999 s makes the watermark window_end - 1 ms with a
    5 s delay: the window fires and the next row, at window_end - 0.3 s, is late
    for it, as in Flink SQL (with max - delay - 1 it would still be counted)."""
    cluster.add_tm(slots=3)
    src = os.path.join(workdir, "src", "ev.json")
    write_rows(src, [{"id": i, "ts": ts_text(t)} for i, t in BOUNDARY])
    outs = {k: os.path.join(workdir, "out-" + k.lower()) for k in WINDOW_TVF}
    text = f"""
SET 'pipeline.auto-watermark-interval' = '0 ms';
CREATE TABLE ev (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{os.path.dirname(src)}', 'format' = 'json');
"""
    for kind, out in outs.items():
        text += f"""
CREATE TABLE out_{kind} (ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO out_{kind} SELECT window_start, window_end, COUNT(*)
  FROM TABLE({WINDOW_TVF[kind]}) GROUP BY window_start, window_end;
"""
    r = run_sql(cluster, workdir, "boundary.sql", text)
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 3, r.stdout
    for kind, jid in zip(WINDOW_TVF, jids):
        finish(cluster, jid)
        want, want_late = window_model(kind, BOUNDARY, 5 * SEC)
        got = {(ms(x["ws"]), ms(x["we"])): x["c"] for x in read_json(outs[kind])}
        assert got == want, kind
        assert late_dropped(cluster, jid) == want_late, kind
        # the boundary row is what differs from max - delay - 1 ms
        assert (E - 10 * SEC, E) in want and want[(E - 10 * SEC, E)] == 3
    # TUMBLE and CUMULATE drop it; HOP keeps it for the window still open
    assert [window_model(k, BOUNDARY, 5 * SEC)[1] for k in WINDOW_TVF] == [1, 0, 1]


def test_datastream_watermark_keeps_max_minus_delay_minus_one(cluster, workdir):
    """A JSON job's watermark operator (the DataStream rule, no 'rule' set) keeps
    max - delay - 1 ms: the same boundary row is counted in its window."""
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "dsrc", "ev.json")
    write_rows(src, [{"id": i, "ts": ts_text(t)} for i, t in BOUNDARY])
    out = os.path.join(workdir, "dout")
    job = {"name": "ds-boundary", "vertices": [
        {"id": "src", "type": "file-source",
         "schema": [{"name": "id", "type": "BIGINT"}, {"name": "ts", "type": "TIMESTAMP"}],
         "config": {"path": os.path.dirname(src), "format": "json"}},
        {"id": "wm", "type": "watermark",
         "config": {"column": "ts", "delay": "5 s", "interval": "0 ms"}},
        {"id": "win", "type": "window",
         "config": {"time-column": "ts", "window": "TUMBLE(INTERVAL '10' SECOND)",
                    "group-by": [], "aggregates": ["COUNT(*) AS c"]}},
        {"id": "out", "type": "file", "config": {"path": out, "format": "json"}}],
        "edges": [{"from": "src", "to": "wm"}, {"from": "wm", "to": "win"},
                  {"from": "win", "to": "out"}]}
    jid = cluster.submit(job, parallelism=1)
    finish(cluster, jid)
    got = {ms(x["window_start"]): x["c"] for x in read_json(out)}
    assert got[E - 10 * SEC] == 4  # ids 1, 2, 3 and the boundary row 5
    assert late_dropped(cluster, jid) == 0


# ---- 2. keep-first deduplication on event time ------------------------------------------

def dedup_rows(n, keys, seed):
    """n rows (id, k, ts) in arrival order: event time mostly rising with
    disorder up to 3 s and some rows 4-9 s behind (late with a 2 s delay
    unless their key's window is still open)."""
    rnd = random.Random(seed)
    out, t = [], BASE
    for i in range(1, n + 1):
        t += rnd.randint(0, 300)
        jitter = rnd.randint(0, 3000) if rnd.random() < 0.5 else 0
        if rnd.random() < 0.08:
            jitter = rnd.randint(4000, 9000)
        out.append((i, rnd.randrange(keys), t - jitter))
    return out


def dedup_model(rows, delay):
    """Flink 2.x keep-first on event time: a row with ts <= watermark is late;
    the first (smallest ts, then earliest arrival) pending row per key goes out
    when the watermark reaches it, once; rows of an emitted key are dropped."""
    wm, mx = None, None
    pending, emitted, out, late = {}, set(), {}, 0
    for i, k, t in rows:
        if wm is not None and t <= wm:
            late += 1
        elif k not in emitted and (k not in pending or t < pending[k][1]):
            pending[k] = (i, t)
        mx = t if mx is None else max(mx, t)
        wm = mx - delay
        for key in [key for key, (_, pt) in pending.items() if pt <= wm]:
            out[key] = pending.pop(key)
            emitted.add(key)
    out.update(pending)  # the end of input fires the rest
    return out, late


DEDUP = """
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '{p}';
{extra}
CREATE TABLE ev (id BIGINT, k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE TABLE firsts (k INT, id BIGINT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
INSERT INTO firsts SELECT k, id, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM ev) WHERE rn = 1;
"""


def read_firsts(out):
    got = []
    for path in committed_files(out):
        with open(path) as f:
            for line in f:
                k, i, t = line.strip().split(",")
                got.append((int(k), int(i), ms(t)))
    return got


@pytest.mark.parametrize("p", [1, 2])
def test_keep_first_on_event_time_is_insert_only_and_drops_late_rows(cluster, workdir, p):
    """At parallelism 1 and 2 over one input file: at 2 the source subtask
    without a file says idle first and no row is judged before it has, so the
    same rows are late as at 1 (docs/ARCHITECTURE.md, "Watermarks")."""
    cluster.add_tm(slots=2)
    rows = dedup_rows(600, 40, seed=36 + p)
    src = os.path.join(workdir, "src", "ev.json")
    write_rows(src, [{"id": i, "k": k, "ts": ts_text(t)} for i, k, t in rows])
    out = os.path.join(workdir, "firsts")
    text = DEDUP.format(p=p, extra="", src=os.path.dirname(src), out=out)
    r = run_sql(cluster, workdir, "explain.sql", text.replace("INSERT INTO", "EXPLAIN CHANGELOG_MODE INSERT INTO"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"\[rowtime_deduplicate\].*changelogMode=\[I\]", r.stdout), r.stdout
    # the csv sink is append-only: it takes the result
    r = run_sql(cluster, workdir, "dedup.sql", text)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    want, want_late = dedup_model(rows, 2 * SEC)
    assert want_late > 10  # the input does have late rows
    got = read_firsts(out)
    assert sorted(got) == sorted((k, i, t) for k, (i, t) in want.items())
    assert late_dropped(cluster, jid) == want_late


DEDUP_GEN = """
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '{p}';
{extra}
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id % {keys} AS INT),
    ts AS TO_TIMESTAMP_LTZ({base} + 20 * ((id / 50) * 50 + id * 37 % 50), 3),
    WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE firsts (k INT, id BIGINT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
INSERT INTO firsts SELECT k, id, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM ev) WHERE rn = 1;
"""


@pytest.mark.parametrize("p1,p2,backend", [(1, 2, "rocksdb"), (2, 3, "hashmap")])
def test_keep_first_on_event_time_across_savepoint_rescale(make_cluster, workdir, p1, p2, backend):
    """Stop with a savepoint while rows are pending (held to the watermark) and
    keys are emitted, restore at another parallelism: every key's first row
    goes out exactly once, as in an uninterrupted run. Event time is a
    permutation within blocks of 50 ids (1 s), so with a 2 s delay no row is
    late whichever source subtask runs ahead; the first row per key is the
    one with the smallest ts (all distinct). (Not to a lower parallelism:
    datagen deals each old subtask's id range to one new subtask, and one
    subtask serving two ranges in turn makes rows of the earlier range late,
    in Flink as here.)"""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=3, extra={"state.backend.type": backend})
    n, keys = 6000, 3000
    out = os.path.join(workdir, "firsts")
    args = dict(keys=keys, base=BASE, n=n, out=out)
    r = run_sql(c, workdir, "run1.sql", DEDUP_GEN.format(p=p1, extra="", rate=1000, **args))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    sp = c.stop_after_progress(jid, "ev", n // 8, os.path.join(workdir, "sp"))
    first = read_firsts(out)
    assert 0 < len(first) < keys  # stopped with keys still to come

    r = run_sql(c, workdir, "run2.sql", DEDUP_GEN.format(
        p=p2, extra=f"SET 'execution.savepoint.path' = '{sp}';", rate=6000, **args))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    job2 = finish(c, jid2)
    assert {v["parallelism"] for v in job2["vertices"]} == {p2}
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1
    ts = {i: BASE + 20 * ((i // 50) * 50 + i * 37 % 50) for i in range(1, n + 1)}
    want = {}
    for i in range(1, n + 1):
        k = i % keys
        if k not in want or ts[i] < ts[want[k]]:
            want[k] = i
    got = read_firsts(out)
    missing = set((k, i, ts[i]) for k, i in want.items()) - set(got)
    extra = collections.Counter(got) - collections.Counter((k, i, ts[i]) for k, i in want.items())
    assert not missing and not extra, (len(first), sorted(missing)[:10], sorted(extra)[:10])
    assert late_dropped(c, jid2) == 0


# ---- 4. documented aggregates that were refused ----------------------------------------

def test_min_max_of_boolean_in_window_and_group_by(cluster, workdir):
    """MIN/MAX of a BOOLEAN (FALSE < TRUE, as Flink orders them) in a TUMBLE
    window aggregation and in a GROUP BY, against a model."""
    from test_rank import apply
    cluster.add_tm(slots=2)
    rows = [(i, i % 3, (i * 7) % 5 == 0 or (i % 3 == 2 and i > 40)) for i in range(1, 61)]
    src = os.path.join(workdir, "src", "ev.json")
    write_rows(src, [{"id": i, "k": k, "b": b, "ts": ts_text(BASE + i * SEC)} for i, k, b in rows])
    wout, gout = os.path.join(workdir, "wout"), os.path.join(workdir, "gout")
    r = run_sql(cluster, workdir, "bool.sql", f"""
CREATE TABLE ev (id BIGINT, k INT, b BOOLEAN, ts TIMESTAMP(3),
                 WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{os.path.dirname(src)}', 'format' = 'json');
CREATE TABLE wout (ws TIMESTAMP(3), k INT, lo BOOLEAN, hi BOOLEAN)
  WITH ('connector' = 'filesystem', 'path' = '{wout}', 'format' = 'json');
CREATE TABLE gout (k INT, lo BOOLEAN, hi BOOLEAN)
  WITH ('connector' = 'filesystem', 'path' = '{gout}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO wout SELECT window_start, k, MIN(b), MAX(b)
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, k;
INSERT INTO gout SELECT k, MIN(b), MAX(b) FROM ev WHERE id > 20 GROUP BY k;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    wwant = collections.defaultdict(list)
    gwant = collections.defaultdict(list)
    for i, k, b in rows:
        wwant[((BASE + i * SEC) // (10 * SEC) * (10 * SEC), k)].append(b)
        if i > 20:
            gwant[k].append(b)
    got = {(ms(x["ws"]), x["k"]): (x["lo"], x["hi"]) for x in read_json(wout)}
    assert got == {key: (min(v), max(v)) for key, v in wwant.items()}
    assert any(lo != hi for lo, hi in got.values()) and any(lo == hi for lo, hi in got.values())
    table = apply(committed_files(gout), lambda x: x["k"])
    assert {k: (x["lo"], x["hi"]) for k, x in table.items()} == \
        {k: (min(v), max(v)) for k, v in gwant.items()}


# ---- 3. cascaded windows, STRING MIN/MAX in windows, window TVF rows, FLOOR/CEIL, MOD ----

WORDS = ["pear", "Apple", "apple", "zeta", "", "mango", "Zulu", "äpfel", "kiwi", "ab", "a"]


def late_events(n, seed):
    """n rows (id, k, s, ts) in arrival order: time rising by 50-400 ms, every
    ninth row 1.5-4 s behind the maximum (late with a 1 s delay unless its
    window is still open), some strings NULL."""
    rnd = random.Random(seed)
    out, t = [], BASE + 1000
    for i in range(1, n + 1):
        t += rnd.randint(50, 400)
        ts = t - rnd.randint(1500, 4000) if i % 9 == 0 else t
        s = None if i % 13 == 0 else rnd.choice(WORDS)
        out.append((i, rnd.choice("abc"), s, ts))
    return out


def write_events(workdir, name, rows):
    src = os.path.join(workdir, name, "ev.json")
    write_rows(src, [{"id": i, "k": k, "s": s, "ts": ts_text(t)} for i, k, s, t in rows])
    return os.path.dirname(src)


EV_DDL = """
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '1';
CREATE TABLE ev (id BIGINT, k STRING, s STRING, ts TIMESTAMP(3),
                 WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
"""


def windows_model(rows, wins_of, delay=SEC):
    """{window: [rows in it]}: a row goes into each of its windows the
    watermark (max - delay after each row) has not passed (end - 1 > wm)."""
    wm, mx, out = None, None, collections.defaultdict(list)
    for r in rows:
        for w in wins_of(r[3]):
            if wm is None or w[1] - 1 > wm:
                out[w].append(r)
        mx = r[3] if mx is None else max(mx, r[3])
        wm = mx - delay
    return out


def tumble(size):
    return lambda t: [(t - t % size, t - t % size + size)]


def hop(slide, size):
    return lambda t: [(s, s + size) for s in range(t - t % slide - size + slide, t + 1, slide)
                      if s <= t < s + size]


def test_cascaded_windows_in_flinks_form(cluster, workdir):
    """Flink's documented cascade: the inner window grouped by window_start,
    window_end, window_time (selected as rt), a second, coarser TUMBLE over
    rt; late rows are dropped by the inner window only."""
    cluster.add_tm(slots=2)
    rows = late_events(400, seed=361)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "cascade.sql", EV_DDL.format(src=write_events(workdir, "c", rows)) + f"""
CREATE VIEW per2 AS SELECT window_start AS ws, window_end AS we, window_time AS rt, k, COUNT(*) AS c
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
  GROUP BY window_start, window_end, window_time, k;
CREATE TABLE out10 (ws TIMESTAMP(3), we TIMESTAMP(3), k STRING, c BIGINT, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO out10 SELECT window_start, window_end, k, SUM(c), COUNT(*)
  FROM TABLE(TUMBLE(TABLE per2, DESCRIPTOR(rt), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, k;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    inner = collections.Counter()
    for (s, e), rs in windows_model(rows, tumble(2 * SEC)).items():
        for row in rs:
            inner[(s, e, row[1])] += 1
    want = collections.defaultdict(lambda: [0, 0])
    for (s, e, k), c in inner.items():
        w = want[((e - 1) // (10 * SEC) * (10 * SEC), k)]
        w[0] += c
        w[1] += 1
    got = {(ms(x["ws"]), x["k"]): [x["c"], x["n"]] for x in read_json(out)}
    assert got == dict(want)
    assert sum(c for c, _ in want.values()) < len(rows)  # some rows were late
    assert late_dropped(cluster, jid) == len(rows) - sum(c for c, _ in want.values())


def sessions_model(rows, gap):
    """Sessions per key of rows that are never late: runs of times no more
    than `gap` apart (touching windows merge, as in Flink)."""
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[r[1]].append(r)
    out = {}
    for k, rs in by_key.items():
        rs.sort(key=lambda r: r[3])
        cur = [rs[0]]
        for r in rs[1:]:
            if r[3] > cur[-1][3] + gap:
                out[(cur[0][3], cur[-1][3] + gap, k)] = cur
                cur = []
            cur.append(r)
        out[(cur[0][3], cur[-1][3] + gap, k)] = cur
    return out


def str_min_max(rs):
    """Flink's STRING order (UTF-8 bytes, unsigned); NULLs skipped."""
    vals = [r[2].encode() for r in rs if r[2] is not None]
    return (min(vals).decode(), max(vals).decode()) if vals else (None, None)


def test_min_max_of_string_in_windows(cluster, workdir):
    """MIN/MAX of a STRING in TUMBLE and HOP (sliced) windows over input with
    late rows, and in SESSION windows whose sessions merge (rows up to 0.7 s
    out of order, a 1 s delay, so none is late): the extrema as Flink orders
    strings, NULL for a window without a value."""
    cluster.add_tm(slots=3)
    rows = late_events(500, seed=362)
    rnd = random.Random(363)
    srows, t = [], BASE + 1000
    for i in range(1, 301):
        t += rnd.choice([100, 200, 300, 450, 900, 1500])
        srows.append((i, rnd.choice("ab"), None if i % 11 == 0 else rnd.choice(WORDS), t))
    for i in range(0, len(srows) - 1, 3):  # arrival out of order, by at most 0.7 s
        if srows[i + 1][3] - srows[i][3] <= 700:
            srows[i], srows[i + 1] = srows[i + 1], srows[i]
    outs = {n: os.path.join(workdir, "out-" + n) for n in ("tumble", "hop", "session")}
    ssrc = write_events(workdir, "s", srows)
    r = run_sql(cluster, workdir, "minmax.sql", EV_DDL.format(src=write_events(workdir, "e", rows)) + f"""
CREATE TABLE sev (id BIGINT, k STRING, s STRING, ts TIMESTAMP(3),
                  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{ssrc}', 'format' = 'json');
CREATE TABLE out_tumble (ws TIMESTAMP(3), k STRING, mn STRING, mx STRING)
  WITH ('connector' = 'filesystem', 'path' = '{outs["tumble"]}', 'format' = 'json');
CREATE TABLE out_hop (ws TIMESTAMP(3), mn STRING, mx STRING, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["hop"]}', 'format' = 'json');
CREATE TABLE out_session (ws TIMESTAMP(3), we TIMESTAMP(3), k STRING, mn STRING, mx STRING)
  WITH ('connector' = 'filesystem', 'path' = '{outs["session"]}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_tumble SELECT window_start, k, MIN(s), MAX(s)
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '3' SECOND)) GROUP BY window_start, window_end, k;
INSERT INTO out_hop SELECT window_start, MIN(s), MAX(s), COUNT(*)
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4' SECOND))
  GROUP BY window_start, window_end;
INSERT INTO out_session SELECT window_start, window_end, k, MIN(s), MAX(s)
  FROM TABLE(SESSION(TABLE sev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND))
  GROUP BY window_start, window_end, k;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    want = {}
    for (s, e), rs in windows_model(rows, tumble(3 * SEC)).items():
        for k in "abc":
            krs = [x for x in rs if x[1] == k]
            if krs:
                want[(s, k)] = str_min_max(krs)
    got = {(ms(x["ws"]), x["k"]): (x["mn"], x["mx"]) for x in read_json(outs["tumble"])}
    assert got == want
    want = {s: str_min_max(rs) + (len(rs),) for (s, e), rs in
            windows_model(rows, hop(SEC, 4 * SEC)).items()}
    got = {ms(x["ws"]): (x["mn"], x["mx"], x["c"]) for x in read_json(outs["hop"])}
    assert got == want
    want = {key: str_min_max(rs) for key, rs in sessions_model(srows, SEC).items()}
    got_rows = read_json(outs["session"])
    assert all(x.get("op", "+I") == "+I" for x in got_rows)
    got = {(ms(x["ws"]), ms(x["we"]), x["k"]): (x["mn"], x["mx"]) for x in got_rows}
    assert got == want
    assert len(want) > 20 and any(len(rs) > 3 for rs in sessions_model(srows, SEC).values())


def test_window_tvf_rows_keep_late_rows(cluster, workdir):
    """A window TVF without aggregation emits every row for every window it
    falls into, late or not, as Flink 2.x does (nothing is dropped or
    counted); a window Top-N over the same TVF still drops the late ones."""
    cluster.add_tm(slots=2)
    rows = late_events(300, seed=364)
    out, top = os.path.join(workdir, "out"), os.path.join(workdir, "top")
    r = run_sql(cluster, workdir, "tvf.sql", EV_DDL.format(src=write_events(workdir, "e", rows)) + f"""
CREATE TABLE out_rows (id BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), wt TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE out_top (id BIGINT, ws TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{top}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_rows SELECT id, window_start, window_end, window_time
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND));
INSERT INTO out_top SELECT id, window_start FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY id DESC) AS rn
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))) WHERE rn <= 1;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    want = collections.Counter((i, s, e, e - 1) for i, _, _, t in rows for s, e in hop(SEC, 3 * SEC)(t))
    got = collections.Counter((x["id"], ms(x["ws"]), ms(x["we"]), ms(x["wt"])) for x in read_json(out))
    assert got == want
    kept = windows_model(rows, tumble(2 * SEC))
    assert sum(len(v) for v in kept.values()) < len(rows)  # late rows there are
    got = sorted((x["id"], ms(x["ws"])) for x in read_json(top))
    assert got == sorted((max(x[0] for x in rs), s) for (s, e), rs in kept.items())
    # only the Top-N counts late rows: one per late row
    assert late_dropped(cluster, jid) == len(rows) - sum(len(v) for v in kept.values())


def session_rows_model(rows, gap, keyed=True, delay=SEC):
    """SESSION TVF rows as Flink 2.3 gives them (checked with PyFlink): per
    key, a row opens [t, t + gap), which swallows every open session it
    intersects (touching counts); a row whose merged session ends at or
    before the watermark (max - delay after each row: end - 1 <= wm) is late
    and dropped; a session fires when the watermark reaches end - 1 (all at
    the end of the input). Returns ([(id, start, end)], dropped)."""
    open_ = collections.defaultdict(list)  # key -> [[start, end, [ids]]]
    out, dropped, mx = [], 0, None
    for i, k, _, t in rows:
        k = k if keyed else None
        wm = None if mx is None else mx - delay
        start, end, ids, rest = t, t + gap, [i], []
        for ss in open_[k]:
            if ss[0] <= t + gap and t <= ss[1]:
                start, end, ids = min(start, ss[0]), max(end, ss[1]), ids + ss[2]
            else:
                rest.append(ss)
        mx = t if mx is None else max(mx, t)
        if wm is not None and end - 1 <= wm:
            dropped += 1
            continue
        open_[k] = rest + [[start, end, ids]]
        wm = mx - delay
        for key in open_:
            keep = []
            for ss in open_[key]:
                if ss[1] - 1 <= wm:
                    out += [(x, ss[0], ss[1]) for x in ss[2]]
                else:
                    keep.append(ss)
            open_[key] = keep
    for sessions in open_.values():
        for ss in sessions:
            out += [(x, ss[0], ss[1]) for x in ss[2]]
    return out, dropped


@pytest.mark.parametrize("p", [1, 2])
def test_session_tvf_rows(cluster, workdir, p):
    """SESSION window TVF rows without aggregation (Flink 2.3 plans them): each
    row goes out once its session closes, with window_start, window_end and
    window_time = window_end - 1; late rows are dropped and counted;
    partitioned (hash-keyed, parallelism p) and global."""
    cluster.add_tm(slots=4)
    rows = late_events(400, seed=3064)
    outs = {n: os.path.join(workdir, n) for n in ("keyed", "glob")}
    r = run_sql(cluster, workdir, "sess.sql", EV_DDL.format(src=write_events(workdir, "e", rows)) + f"""
SET 'parallelism.default' = '{p}';
CREATE TABLE out_keyed (id BIGINT, k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), wt TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{outs["keyed"]}', 'format' = 'json');
CREATE TABLE out_glob (id BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{outs["glob"]}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_keyed SELECT id, k, window_start, window_end, window_time
  FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND));
INSERT INTO out_glob SELECT id, window_start, window_end
  FROM TABLE(SESSION(DATA => TABLE ev, TIMECOL => DESCRIPTOR(ts), GAP => INTERVAL '2' SECOND));
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    want, dropped = session_rows_model(rows, SEC)
    kof = {i: k for i, k, _, _ in rows}
    got = read_json(outs["keyed"])
    assert all(x.get("op", "+I") == "+I" for x in got)
    assert sorted((x["id"], x["k"], ms(x["ws"]), ms(x["we"]), ms(x["wt"])) for x in got) == \
        sorted((i, kof[i], s, e, e - 1) for i, s, e in want)
    assert dropped > 3 and len({(s, e) for _, s, e in want}) > 10
    want_g, dropped_g = session_rows_model(rows, 2 * SEC, keyed=False)
    assert sorted((x["id"], ms(x["ws"]), ms(x["we"])) for x in read_json(outs["glob"])) == \
        sorted(want_g)
    assert late_dropped(cluster, jid) == dropped + dropped_g


def test_proctime_tvf_rows(cluster, workdir):
    """TUMBLE, HOP and CUMULATE TVF rows on processing time without
    aggregation (Flink 2.3 plans them): each row goes out at once, for every
    window holding the instant it arrived -- a moment of the run, so the
    model checks each row's windows against the run's span: the windows of
    one instant, aligned to the epoch, window_time = window_end - 1. A
    processing-time SESSION holds its rows until the clock passes the gap;
    the input ends first, so nothing comes out, as in Flink."""
    import time
    cluster.add_tm(slots=2)
    rows = late_events(200, seed=3065)
    outs = {n: os.path.join(workdir, n) for n in ("tum", "hop", "cum", "sess")}
    ddl = EV_DDL.format(src=write_events(workdir, "e", rows)).replace(
        "ts TIMESTAMP(3),", "ts TIMESTAMP(3), pt AS PROCTIME(),")
    sinks = "".join(f"CREATE TABLE out_{n} (id BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), "
                    f"wt TIMESTAMP_LTZ(3)) WITH ('connector' = 'filesystem', 'path' = "
                    f"'{outs[n]}', 'format' = 'json');\n" for n in outs)
    t0 = int(time.time() * 1000)
    r = run_sql(cluster, workdir, "proc.sql", ddl + sinks + """
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_tum SELECT id, window_start, window_end, window_time
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(pt), INTERVAL '5' SECOND));
INSERT INTO out_hop SELECT id, window_start, window_end, window_time
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(pt), INTERVAL '1' SECOND, INTERVAL '3' SECOND));
INSERT INTO out_cum SELECT id, window_start, window_end, window_time
  FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(pt), INTERVAL '1' SECOND, INTERVAL '3' SECOND));
INSERT INTO out_sess SELECT id, window_start, window_end, window_time
  FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(pt), INTERVAL '1' HOUR));
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    t1 = int(time.time() * 1000)
    ids = sorted(i for i, _, _, _ in rows)

    def wins(name):
        by = collections.defaultdict(set)
        for x in read_json(outs[name]):
            assert ms(x["wt"]) == ms(x["we"]) - 1, x
            by[x["id"]].add((ms(x["ws"]), ms(x["we"])))
        assert sorted(by) == ids, name
        return by

    def of_instant(ws, model):
        """Some instant of the run has exactly these windows."""
        return any(model(t) == ws for t in {s for s, _ in ws} | {e - 1 for _, e in ws})

    tum = lambda t: {(t - t % 5000, t - t % 5000 + 5000)}
    hop3 = lambda t: {(s, s + 3000) for s in range(t - t % 1000 - 2000, t + 1, 1000)}
    cum = lambda t: {(t - t % 3000, e) for e in range(t - t % 3000 + 1000, t - t % 3000 + 3001, 1000)
                     if e > t}
    for name, model in (("tum", tum), ("hop", hop3), ("cum", cum)):
        for i, ws in wins(name).items():
            assert of_instant(ws, model) and all(t0 - 5000 <= s and e <= t1 + 5000
                                                 for s, e in ws), (name, i, ws)
    assert read_json(outs["sess"]) == []


def flink_floor(unit, t, ceil=False):
    """Flink's FLOOR/CEIL(ts TO unit) on UTC milliseconds, written from its
    rules (DateTimeUtils.timestampFloor/Ceil): fixed units by arithmetic; WEEK
    (from Sunday), MONTH, QUARTER, YEAR from the date, the ceiling moving on
    unless the date is the first day."""
    import datetime
    fixed = {"SECOND": 1000, "MINUTE": 60000, "HOUR": 3600000, "DAY": 86400000}
    if unit in fixed:
        m = fixed[unit]
        f = t // m * m
        return f + m if ceil and f != t else f
    days = int(t / 86400000)  # Java's division, toward zero
    d = datetime.date(1970, 1, 1) + datetime.timedelta(days=days)
    if unit == "WEEK":
        dow = (d.weekday() + 1) % 7  # Sunday 0
        start = d - datetime.timedelta(days=dow)
        if ceil and dow:
            start += datetime.timedelta(days=7)
    else:
        first = {"YEAR": 1, "QUARTER": (d.month - 1) // 3 * 3 + 1, "MONTH": d.month}[unit]
        step = {"YEAR": 12, "QUARTER": 3, "MONTH": 1}[unit]
        if ceil and (d.month > first or d.day > 1):
            first += step
        start = datetime.date(d.year + (first - 1) // 12, (first - 1) % 12 + 1, 1)
    return (start - datetime.date(1970, 1, 1)).days * 86400000


def test_floor_ceil_to_unit_and_mod_result_types(cluster, workdir):
    """FLOOR(ts TO unit) / CEIL(ts TO unit) for every unit Sluice takes, on
    times that sit on boundaries and between them, against a model of
    Flink's rules; MOD / % typed as Flink types them (the divisor's type),
    in DESCRIBE and in a running job's values."""
    cluster.add_tm(slots=1)
    units = ["SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"]
    rnd = random.Random(365)
    times = [BASE, BASE + 1, BASE - 1, BASE + 86400000, 951782400000, 951782400000 + 3600000,
             1772323200000, 1772323200000 + 45296789, -1, 0, -34560012345]
    times += [BASE + rnd.randint(0, 400 * 86400000) for _ in range(40)]
    src = os.path.join(workdir, "src", "t.json")
    write_rows(src, [{"id": i, "big": 7_000_000_000 + i * 13, "ts": ts_text(t)}
                     for i, t in enumerate(times)])
    out = os.path.join(workdir, "out")
    cols = ", ".join(f"FLOOR(ts TO {u}) AS f_{u}, CEIL(ts TO {u}) AS c_{u}" for u in units)
    sink_cols = ", ".join(f"f_{u} TIMESTAMP(3), c_{u} TIMESTAMP(3)" for u in units)
    text = f"""
CREATE TABLE t (id INT, big BIGINT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '{os.path.dirname(src)}', 'format' = 'json');
CREATE VIEW mods AS SELECT MOD(big, 7) AS m1, big % id AS m2, MOD(id, big) AS m3, id % 3 AS m4
  FROM t WHERE id > 0;
DESCRIBE mods;
CREATE TABLE out_t (id INT, m1 INT, m2 INT, m3 BIGINT, {sink_cols})
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO out_t SELECT id, MOD(big, 7), big % (id + 1), MOD(id, big), {cols} FROM t;
"""
    r = run_sql(cluster, workdir, "floor.sql", text)
    assert r.returncode == 0, r.stdout + r.stderr
    types = dict(re.findall(r"^\|\s+(m\d)\s+\|\s+(\w+)\s+\|", r.stdout, re.M))
    assert types == {"m1": "INT", "m2": "INT", "m3": "BIGINT", "m4": "INT"}, r.stdout
    finish(cluster, job_ids(r.stdout)[0])
    got = {x["id"]: x for x in read_json(out)}
    assert sorted(got) == list(range(len(times)))
    for i, t in enumerate(times):
        x = got[i]
        big = 7_000_000_000 + i * 13
        assert (x["m1"], x["m2"], x["m3"]) == (big % 7, big % (i + 1), i % big), x
        for u in units:
            assert (ms(x[f"f_{u}"]), ms(x[f"c_{u}"])) == \
                (flink_floor(u, t), flink_floor(u, t, True)), (u, t, x)


def test_floor_ceil_refused_forms(cluster, workdir):
    """Units Sluice does not take, and FLOOR TO of a non-timestamp: an error
    with line and column, no job."""
    for expr, msg in [("FLOOR(ts TO DECADE)", "line 2, column 20: FLOOR(... TO DECADE) is not "
                                               "supported yet"),
                      ("CEIL(ts TO DOW)", "line 2, column 19: CEIL(... TO unit): the unit must be"),
                      ("FLOOR(id TO DAY)", "line 2, column 14: FLOOR(... TO DAY) needs a TIMESTAMP, "
                                           "got BIGINT")]:
        r = run_sql(cluster, workdir, "bad.sql", "CREATE TABLE t (id BIGINT, ts TIMESTAMP(3)) WITH "
                    "('connector' = 'datagen', 'number-of-rows' = '1');\n"
                    f"SELECT {expr} FROM t;\n")
        assert msg in r.stdout + r.stderr, r.stdout + r.stderr
        assert not job_ids(r.stdout)


def test_flinks_reserved_words_need_back_quotes(cluster, workdir):
    """A word Flink SQL reserves (method, ref, matches, value, out, ...) used
    unquoted as a column, an alias or a table is refused, naming the word
    with its line and column and telling to back-quote it; back-quoted, the
    same names run and read back."""
    cases = [
        ("CREATE TABLE t (id BIGINT, method STRING) WITH ('connector' = 'datagen');",
         'line 1, column 28: Encountered "method": a reserved keyword in Flink SQL; '
         "back-quote it (`method`) to use it as a name"),
        ("CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen');\n"
         "SELECT id AS ref FROM t;", 'line 2, column 14: Encountered "ref"'),
        ("CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen');\n"
         "SELECT t.id FROM t AS\n  matches;", 'line 3, column 3: Encountered "matches"'),
        ("CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');",
         'line 1, column 14: Encountered "out"'),
        ("CREATE TABLE t (`value` BIGINT) WITH ('connector' = 'datagen');\n"
         "SELECT t.value FROM t;", 'line 2, column 10: Encountered "value"'),
    ]
    for n, (text, msg) in enumerate(cases):
        r = run_sql(cluster, workdir, f"bad{n}.sql", text + "\n")
        assert msg in r.stdout + r.stderr, (text, r.stdout + r.stderr)
        assert "back-quote it" in r.stdout + r.stderr
        assert not job_ids(r.stdout)
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "quoted.sql", f"""
CREATE TABLE t (id BIGINT, `method` STRING, `value` INT)
  WITH ('connector' = 'datagen', 'number-of-rows' = '7', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '7', 'fields.method.length' = '3');
CREATE TABLE `out` (`ref` BIGINT, `matches` INT, n INT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `out` SELECT id AS `ref`, CHAR_LENGTH(`method`) AS `matches`, MOD(`value`, 1) FROM t;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = sorted((x["ref"], x["matches"], x["n"]) for x in read_json(out))
    assert got == [(i, 3, 0) for i in range(1, 8)]
