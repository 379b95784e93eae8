"""Flink's group-window functions end to end with `sluice sql -f` on a
cluster: GROUP BY TUMBLE(ts, size) / HOP(ts, slide, size) / SESSION(ts,
gap) beside other keys, with TUMBLE_START/_END/_ROWTIME/_PROCTIME and their
HOP and SESSION forms, HAVING, DISTINCT and FILTER, a cascade over
TUMBLE_ROWTIME, a processing-time window, EXPLAIN and Flink's refusals.

Inputs are JSON files in a fixed arrival order; the watermark follows every
row ('pipeline.auto-watermark-interval' = '0 ms') as max(ts) - 1 s, so each
expected result is computed here by a Python model of Flink's rules: a row
goes into each of its windows [start, end) whose end - 1 the watermark has
not reached; a row with no such window is dropped and counted in
numLateRecordsDropped; _END is exclusive, _ROWTIME = end - 1 ms.
tests/integration/test_flink_oracle.py runs the same forms through Flink.
"""
import collections
import os
import random
import re
import time

import pytest

from test_sql import BASE, finish, job_ids, ms, run_sql
from test_sql_flink_parity import late_dropped, read_json, ts_text, write_rows

SEC = 1000
WORDS = ["pear", "apple", "kiwi", "fig", "plum"]


def events(n, seed, late=True):
    """n rows (id, k, v, s, ts) in arrival order: time rising by 50-400 ms;
    with `late`, every ninth row 1.5-4 s behind the maximum (late with a 1 s
    delay unless a window of it is still open); some v and s NULL."""
    rnd = random.Random(seed)
    out, t = [], BASE + 1000
    for i in range(1, n + 1):
        t += rnd.randint(50, 400)
        ts = t - rnd.randint(1500, 4000) if late and i % 9 == 0 else t
        v = None if i % 11 == 0 else rnd.randint(0, 99)
        s = None if i % 13 == 0 else rnd.choice(WORDS)
        out.append((i, rnd.choice("abc"), v, s, ts))
    return out


def session_events(n, seed):
    """Rows for sessions: gaps of 0.1-2.5 s, some neighbours swapped when at
    most 0.7 s apart (out of order, never late with a 1 s delay)."""
    rnd = random.Random(seed)
    out, t = [], BASE + 1000
    for i in range(1, n + 1):
        t += rnd.choice([100, 200, 300, 450, 900, 1500, 2500])
        out.append((i, rnd.choice("ab"), rnd.randint(0, 99), None, t))
    for i in range(0, len(out) - 1, 3):
        if out[i + 1][4] - out[i][4] <= 700:
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def write_events(workdir, name, rows):
    src = os.path.join(workdir, name, "ev.json")
    write_rows(src, [{"id": i, "k": k, "v": v, "s": s, "ts": ts_text(t)}
                     for i, k, v, s, t in rows])
    return os.path.dirname(src)


def tumble(size):
    return lambda t: [(t - t % size, t - t % size + size)]


def hop(slide, size):
    """Windows [s, s + size) with s a multiple of the slide in (t - size, t]
    (the size need not be a multiple of the slide)."""
    return lambda t: [(s, s + size) for s in range(t - t % slide, t - size, -slide)]


def windows_model(rows, wins_of, delay=SEC):
    """({window: [rows in it]}, rows dropped as late): the watermark is
    max - delay after each row; a row joins each window with end - 1 > wm."""
    wm, mx, out, late = None, None, collections.defaultdict(list), 0
    for r in rows:
        live = [w for w in wins_of(r[4]) if wm is None or w[1] - 1 > wm]
        late += not live
        for w in live:
            out[w].append(r)
        mx = r[4] if mx is None else max(mx, r[4])
        wm = mx - delay
    return out, late


def sessions_model(rows, gap):
    """{(start, end, k): rows}: per key, runs of times at most `gap` apart
    (touching windows merge); no row is late."""
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[r[1]].append(r)
    out = {}
    for k, rs in by_key.items():
        rs.sort(key=lambda r: r[4])
        cur = [rs[0]]
        for r in rs[1:]:
            if r[4] > cur[-1][4] + gap:
                out[(cur[0][4], cur[-1][4] + gap, k)] = cur
                cur = []
            cur.append(r)
        out[(cur[0][4], cur[-1][4] + gap, k)] = cur
    return out


DDL = """
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '{p}';
CREATE TABLE ev (id BIGINT, k STRING, v INT, s STRING, ts TIMESTAMP(3),
                 WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
"""

T3 = "ts, INTERVAL '3' SECOND"
H14 = "ts, INTERVAL '1' SECOND, INTERVAL '4' SECOND"
S1 = "ts, INTERVAL '1' SECOND"
H25 = "ts, INTERVAL '2' SECOND, INTERVAL '5' SECOND"  # the size no multiple of the slide


@pytest.mark.parametrize("p,late", [(1, True), (2, False)])
def test_event_time_tumble_hop_session_with_auxiliary_functions(cluster, workdir, p, late):
    """TUMBLE per key with every auxiliary function, DISTINCT and FILTER; a
    global HOP with HAVING; SESSION per key; a HOP whose size is no multiple
    of its slide (2 or 3 windows a row) per key; one job (a statement set).
    At parallelism 1 with late rows (exact late-row count); at 2 on in-order
    input (no row late however the two readers interleave)."""
    cluster.add_tm(slots=4 * p)
    rows = events(500, seed=301 + p, late=late)
    srows = session_events(300, seed=311 + p)
    outs = {n: os.path.join(workdir, "out-" + n) for n in ("t", "h", "s", "u")}
    ssrc = write_events(workdir, "s", srows)
    r = run_sql(cluster, workdir, "gw.sql", DDL.format(p=p, src=write_events(workdir, "e", rows)) + f"""
CREATE TABLE sev (id BIGINT, k STRING, v INT, s STRING, ts TIMESTAMP(3),
                  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{ssrc}', 'format' = 'json');
CREATE TABLE out_t (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), rt TIMESTAMP(3), c BIGINT,
                    sv INT, ds BIGINT, big BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["t"]}', 'format' = 'json');
CREATE TABLE out_h (ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, mx INT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["h"]}', 'format' = 'json');
CREATE TABLE out_s (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), rt TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["s"]}', 'format' = 'json');
CREATE TABLE out_u (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, sv INT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["u"]}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_t SELECT k, TUMBLE_START({T3}), TUMBLE_END({T3}), TUMBLE_ROWTIME({T3}),
    COUNT(*), SUM(v), COUNT(DISTINCT s), COUNT(*) FILTER (WHERE v > 50)
  FROM ev GROUP BY TUMBLE({T3}), k;
INSERT INTO out_h SELECT HOP_START({H14}) AS ws, HOP_END({H14}) AS we, COUNT(*) AS c, MAX(v)
  FROM ev GROUP BY HOP({H14}) HAVING COUNT(*) >= 12;
INSERT INTO out_s SELECT k, SESSION_START({S1}), SESSION_END({S1}), SESSION_ROWTIME({S1}), COUNT(*)
  FROM sev GROUP BY k, SESSION({S1});
INSERT INTO out_u SELECT k, HOP_START({H25}), HOP_END({H25}), COUNT(*), SUM(v)
  FROM ev GROUP BY HOP({H25}), k;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)

    twins, tlate = windows_model(rows, tumble(3 * SEC))
    want = {}
    for (s, e), rs in twins.items():
        for k in "abc":
            krs = [x for x in rs if x[1] == k]
            if krs:
                vs = [x[2] for x in krs if x[2] is not None]
                want[(k, s)] = (e, e - 1, len(krs), sum(vs) if vs else None,
                                len({x[3] for x in krs if x[3] is not None}),
                                sum(1 for x in krs if x[2] is not None and x[2] > 50))
    got = {(x["k"], ms(x["ws"])): (ms(x["we"]), ms(x["rt"]), x["c"], x["sv"], x["ds"], x["big"])
           for x in read_json(outs["t"])}
    assert got == want

    hwins, hlate = windows_model(rows, hop(SEC, 4 * SEC))
    want = {s: (e, len(rs), max((x[2] for x in rs if x[2] is not None), default=None))
            for (s, e), rs in hwins.items() if len(rs) >= 12}
    got = {ms(x["ws"]): (ms(x["we"]), x["c"], x["mx"]) for x in read_json(outs["h"])}
    assert got == want
    assert 0 < len(want) < len(hwins)  # HAVING kept some windows, not all

    sess = sessions_model(srows, SEC)
    got_rows = read_json(outs["s"])
    assert all(x.get("op", "+I") == "+I" for x in got_rows)
    got = {(x["k"], ms(x["ws"]), ms(x["we"])): (ms(x["rt"]), x["c"]) for x in got_rows}
    assert got == {(k, s, e): (e - 1, len(rs)) for (s, e, k), rs in sess.items()}
    assert len(sess) > 20 and any(len(rs) > 3 for rs in sess.values())

    uwins, ulate = windows_model(rows, hop(2 * SEC, 5 * SEC))
    want = {}
    for (s, e), rs in uwins.items():
        for k in "abc":
            krs = [x for x in rs if x[1] == k]
            if krs:
                vs = [x[2] for x in krs if x[2] is not None]
                want[(k, s)] = (e, len(krs), sum(vs) if vs else None)
    got = {(x["k"], ms(x["ws"])): (ms(x["we"]), x["c"], x["sv"]) for x in read_json(outs["u"])}
    assert got == want
    assert {len(hop(2 * SEC, 5 * SEC)(x[4])) for x in rows} == {2, 3}

    if late:
        assert tlate > 0 and hlate < tlate  # HOP keeps some rows TUMBLE drops
    else:
        assert tlate == hlate == ulate == 0
    assert late_dropped(cluster, jid) == tlate + hlate + ulate


def test_cascade_on_tumble_rowtime(cluster, workdir):
    """TUMBLE_ROWTIME is the result's event-time attribute: a view with it
    feeds a second, coarser group window (also straight from a subquery);
    late rows are dropped by the inner window only."""
    cluster.add_tm(slots=2)
    rows = events(400, seed=321)
    outs = {n: os.path.join(workdir, "out-" + n) for n in ("view", "sub")}
    inner = ("SELECT k, TUMBLE_ROWTIME(ts, INTERVAL '2' SECOND) AS rt, COUNT(*) AS c "
             "FROM ev GROUP BY TUMBLE(ts, INTERVAL '2' SECOND), k")
    outer = ("SELECT TUMBLE_START(rt, INTERVAL '10' SECOND) AS ws, "
             "TUMBLE_END(rt, INTERVAL '10' SECOND) AS we, k, SUM(c) AS c, COUNT(*) AS n "
             "FROM {src} GROUP BY TUMBLE(rt, INTERVAL '10' SECOND), k")
    r = run_sql(cluster, workdir, "cascade.sql", DDL.format(p=1, src=write_events(workdir, "c", rows)) + f"""
CREATE VIEW per2 AS {inner};
CREATE TABLE out_view (ws TIMESTAMP(3), we TIMESTAMP(3), k STRING, c BIGINT, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["view"]}', 'format' = 'json');
CREATE TABLE out_sub (ws TIMESTAMP(3), we TIMESTAMP(3), k STRING, c BIGINT, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["sub"]}', 'format' = 'json');
INSERT INTO out_view {outer.format(src="per2")};
INSERT INTO out_sub {outer.format(src="(" + inner + ")")};
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 2, r.stdout
    wins, late = windows_model(rows, tumble(2 * SEC))
    per2 = collections.Counter()
    for (s, e), rs in wins.items():
        for x in rs:
            per2[(e - 1, x[1])] += 1  # (inner TUMBLE_ROWTIME, k)
    want = collections.defaultdict(lambda: [0, 0])
    for (rt, k), c in per2.items():
        ws = rt - rt % (10 * SEC)
        w = want[(ws, ws + 10 * SEC, k)]
        w[0] += c
        w[1] += 1
    assert late > 0
    for jid, n in zip(jids, ("view", "sub")):
        finish(cluster, jid)
        got = {(ms(x["ws"]), ms(x["we"]), x["k"]): [x["c"], x["n"]] for x in read_json(outs[n])}
        assert got == dict(want), n
        assert late_dropped(cluster, jid) == late, n


def test_processing_time_tumble_and_session(cluster, workdir):
    """TUMBLE and SESSION on a PROCTIME() column at parallelism 2: which
    window a row falls into depends on the clock, so only what does not is
    asserted -- TUMBLE: every row counted once per key, windows aligned on
    the size, _END exclusive at start + size, TUMBLE_PROCTIME a wall-clock
    time no earlier than the window's start and no later than now; SESSION
    with a one-hour gap: the rows of a key (read in far less than an hour)
    are one session, from its first row's arrival to its last's plus the
    gap."""
    cluster.add_tm(slots=4)
    rows = events(300, seed=331, late=False)
    out = os.path.join(workdir, "out")
    sout = os.path.join(workdir, "out-s")
    t0 = int(time.time() * 1000)
    r = run_sql(cluster, workdir, "proc.sql", f"""
SET 'parallelism.default' = '2';
CREATE TABLE pev (id BIGINT, k STRING, v INT, s STRING, ts TIMESTAMP(3), pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '{write_events(workdir, "p", rows)}', 'format' = 'json');
CREATE TABLE out_p (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), p TIMESTAMP(3), c BIGINT, sid BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE out_s (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), p TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{sout}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_p SELECT k, TUMBLE_START(pt, INTERVAL '1' HOUR), TUMBLE_END(pt, INTERVAL '1' HOUR),
    TUMBLE_PROCTIME(pt, INTERVAL '1' HOUR), COUNT(*), SUM(id)
  FROM pev GROUP BY TUMBLE(pt, INTERVAL '1' HOUR), k;
INSERT INTO out_s SELECT k, SESSION_START(pt, INTERVAL '1' HOUR), SESSION_END(pt, INTERVAL '1' HOUR),
    SESSION_PROCTIME(pt, INTERVAL '1' HOUR), COUNT(*)
  FROM pev GROUP BY SESSION(pt, INTERVAL '1' HOUR), k;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    now = int(time.time() * 1000)
    got = read_json(out)
    counts, sids = collections.Counter(), collections.Counter()
    for x in got:
        ws, we, pt = ms(x["ws"]), ms(x["we"]), ms(x["p"])
        assert ws % 3_600_000 == 0 and we == ws + 3_600_000, x
        assert ws <= pt <= now, x
        counts[x["k"]] += x["c"]
        sids[x["k"]] += x["sid"]
    assert counts == collections.Counter(x[1] for x in rows)
    want_sids = collections.Counter()
    for x in rows:
        want_sids[x[1]] += x[0]
    assert sids == want_sids
    hour = 3_600_000
    got = {}
    for x in read_json(sout):
        ws, we, pt = ms(x["ws"]), ms(x["we"]), ms(x["p"])
        assert t0 <= ws and ws + hour <= we <= now + hour and ws <= pt <= now, x
        assert x["k"] not in got, x  # one session per key
        got[x["k"]] = x["c"]
    assert got == dict(collections.Counter(x[1] for x in rows))


def test_explain_shows_the_window_plan(cluster, workdir):
    """EXPLAIN shows the window vertex and the calc the auxiliary functions
    become; SHOW FUNCTIONS lists the auxiliary functions."""
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "explain.sql", DDL.format(p=1, src=workdir) + """
EXPLAIN SELECT k, TUMBLE_START(ts, INTERVAL '3' SECOND) AS ws, COUNT(*)
  FROM ev GROUP BY TUMBLE(ts, INTERVAL '3' SECOND), k HAVING COUNT(*) > 2;
SHOW FUNCTIONS;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for fn in ("TUMBLE", "TUMBLE_START", "HOP_END", "SESSION_ROWTIME", "TUMBLE_PROCTIME"):
        assert re.search(r"^\|\s+" + fn + r" \|$", r.stdout, re.M), fn
    plan = r.stdout[r.stdout.index("== Optimized Execution Plan =="):]
    plan = plan[:plan.index("== Job Graph ==")]
    assert ('window[window] uid=window-ev-' in plan and
            '{"time-column":"ts","window":"TUMBLE(INTERVAL \'3\' SECOND)","group-by":["k"],'
            '"aggregates":["COUNT(*) AS __agg0"],"allowed-lateness":"0 s"}' in plan), plan
    assert ('window-select[calc] uid=window-select {"projection":["k","window_start AS ws",'
            '"__agg0 AS `EXPR$2`"],"filter":"__agg0 > 2"}') in plan, plan


PCOLS = ("CREATE TABLE pev (k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME()) "
         "WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');")
W = "TUMBLE(ts, INTERVAL '1' MINUTE)"
REFUSALS = [
    # (query, the text the error points at, the message)
    (f"SELECT k, TUMBLE_START(ts, INTERVAL '2' MINUTE) FROM ev GROUP BY {W}, k",
     "TUMBLE_START", "Call to auxiliary group function 'TUMBLE_START' must have matching call "
     "to group function 'TUMBLE' in GROUP BY clause"),
    ("SELECT k, TUMBLE_END(ts, INTERVAL '1' MINUTE) FROM ev GROUP BY k",
     "TUMBLE_END", "Call to auxiliary group function 'TUMBLE_END' must have matching call "
     "to group function 'TUMBLE' in GROUP BY clause"),
    (f"SELECT HOP_START(ts, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE) FROM ev GROUP BY {W}",
     "HOP_START", "Call to auxiliary group function 'HOP_START' must have matching call "
     "to group function 'HOP' in GROUP BY clause"),
    (f"SELECT {W}, COUNT(*) FROM ev GROUP BY {W}",
     W, "Group function 'TUMBLE' can only appear in GROUP BY clause"),
    (f"SELECT COUNT(*) FROM ev GROUP BY {W}, TUMBLE(ts, INTERVAL '2' MINUTE)",
     "TUMBLE(ts, INTERVAL '2'", "Only a single window group function may be used in GROUP BY"),
    ("SELECT COUNT(*) FROM ev GROUP BY TUMBLE(v, INTERVAL '1' MINUTE)",
     "v, INTERVAL", "Window aggregate can only be defined over a time attribute column, "
     "but INT encountered."),
    ("SELECT COUNT(*) FROM (SELECT CAST(ts AS TIMESTAMP(3)) AS t2 FROM ev) "
     "GROUP BY TUMBLE(t2, INTERVAL '1' MINUTE)",
     "t2, INTERVAL", "Window aggregate can only be defined over a time attribute column, "
     "but TIMESTAMP(3) encountered."),
    ("SELECT TUMBLE_ROWTIME(pt, INTERVAL '1' MINUTE) FROM pev GROUP BY TUMBLE(pt, INTERVAL '1' MINUTE)",
     "TUMBLE_ROWTIME", "A proctime window cannot provide a rowtime attribute."),
    (f"SELECT COUNT(*) FROM ev WHERE TUMBLE_START(ts, INTERVAL '1' MINUTE) > ts GROUP BY {W}",
     "TUMBLE_START", "TUMBLE_START cannot be used in WHERE"),
    (f"SELECT window_start, COUNT(*) FROM ev GROUP BY {W}",
     "window_start", "Column 'window_start' not found in any table"),
    ("SELECT COUNT(*) FROM ev GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE, INTERVAL '10' SECOND)",
     "INTERVAL '10'", "TUMBLE window with alignment is not supported yet."),
    ("SELECT window_start, COUNT(*) FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
     "INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
     "HOP(TABLE", "HOP table function based aggregate requires size must be an integral multiple "
     "of slide, but got size 5000 ms and slide 2000 ms"),
    (f"SELECT k, COUNT(*), ts FROM ev GROUP BY {W}, k",
     "ts FROM", "column 'ts' must be in GROUP BY or inside an aggregate function"),
]


@pytest.mark.parametrize("i", range(len(REFUSALS)))
def test_refusals_name_the_place(cluster, workdir, i):
    """Flink's refusals, each with the line and column of what is wrong."""
    query, at, msg = REFUSALS[i]
    head = DDL.format(p=1, src=workdir) + PCOLS.format(src=workdir) + "\n"
    line = head.count("\n") + 1
    r = run_sql(cluster, workdir, "bad.sql", head + query + ";\n")
    assert r.returncode != 0
    assert f"line {line}, column {query.index(at) + 1}: {msg}" in r.stdout + r.stderr, \
        r.stdout + r.stderr


# A source for savepoint tests: event time a permutation within blocks of 50
# ids (1 s), so with a 2 s delay no row is late whichever subtask runs ahead;
# gen_ts(id) is its time column
GEN_SOURCE = """
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '{p}';
{extra}
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id % 7 AS INT),
    ts AS TO_TIMESTAMP_LTZ({base} + 20 * ((id / 50) * 50 + id * 37 % 50), 3),
    WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def gen_ts(i):
    return BASE + 20 * ((i // 50) * 50 + i * 37 % 50)


GEN = GEN_SOURCE + """CREATE TABLE wins (k INT, ws TIMESTAMP(3), c BIGINT, sid BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
"""
LEGACY = ("INSERT INTO wins SELECT k, TUMBLE_START(ts, INTERVAL '1' SECOND), COUNT(*), SUM(id) "
          "FROM ev GROUP BY TUMBLE(ts, INTERVAL '1' SECOND), k;")
TVF = ("INSERT INTO wins SELECT k, window_start, COUNT(*), SUM(id) "
       "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
       "GROUP BY window_start, window_end, k;")


@pytest.mark.parametrize("p1,p2,backend", [(1, 2, "rocksdb"), (2, 3, "hashmap")])
def test_savepoint_of_a_group_window_restores_into_the_tvf_form(make_cluster, workdir, p1, p2,
                                                                 backend):
    """A group-window job plans onto the same window vertex (and uid) as its
    window TVF form: stopped with a savepoint while windows are open, it
    restores at another parallelism as the TVF query and every (window, key)
    goes out once with all its rows. Event time is a permutation within
    blocks of 50 ids (1 s), so with a 2 s delay no row is late whichever
    source subtask runs ahead."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=3, extra={"state.backend.type": backend})
    n = 6000
    out = os.path.join(workdir, "wins")
    args = dict(base=BASE, n=n, out=out)
    r = run_sql(c, workdir, "run1.sql", GEN.format(p=p1, extra="", rate=1000, **args) + LEGACY)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    sp = c.stop_after_progress(jid, "ev", n // 4, os.path.join(workdir, "sp"))
    first = read_json(out)
    r = run_sql(c, workdir, "run2.sql", GEN.format(
        p=p2, extra=f"SET 'execution.savepoint.path' = '{sp}';", rate=6000, **args) + TVF)
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    assert c.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    want = collections.defaultdict(lambda: [0, 0])
    for i in range(1, n + 1):
        t = gen_ts(i)
        w = want[(i % 7, t - t % SEC)]
        w[0] += 1
        w[1] += i
    got_rows = read_json(out)
    got = {(x["k"], ms(x["ws"])): [x["c"], x["sid"]] for x in got_rows}
    assert len(got) == len(got_rows)  # each (key, window) once
    assert got == dict(want)
    assert 0 < len(first) < len(want)  # stopped with windows still to come
    assert late_dropped(c, jid2) == 0
