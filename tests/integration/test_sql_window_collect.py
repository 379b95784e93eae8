"""COLLECT, COLLECT(DISTINCT), JSON_ARRAYAGG and JSON_OBJECTAGG in window
aggregations, and group windows over a retracting input (an anti join),
from SQL text through running jobs (`sluice sql -f`), each result computed
here by a Python model:

- window TVFs (TUMBLE, HOP, CUMULATE, SESSION) and group windows (GROUP BY
  TUMBLE / HOP / SESSION) with COLLECT [DISTINCT] and FILTER, JSON_ARRAYAGG
  in TUMBLE windows (arrival order: one input file, one reader, one channel
  per key) and JSON_OBJECTAGG (members in their keys' byte order); at
  parallelism 1 with late rows and at 2 in order;
- GROUP BY TUMBLE / HOP over `WHERE NOT EXISTS (...)`, whose -D rows take
  rows back out of their windows (the subquery's table has no watermark, so
  the windows fire once it has ended and every retraction is in);
- a window with COLLECT state stopped with a savepoint on RocksDB and
  restored at another parallelism;
- MIN/MAX (also of a STRING), COUNT/SUM/AVG(DISTINCT) and the JSON
  aggregates over those retractions (TUMBLE, HOP, SESSION), also across a
  savepoint restored at another parallelism on both backends;
- the refusals: Flink's where Flink refuses.
The model of windows, lateness and sessions is test_sql_groupwin.py's.
tests/integration/test_flink_oracle.py runs the same forms through Flink.
"""
import collections
import json
import os
import random

import pytest

from test_sql import BASE, finish, job_ids, ms, run_sql
from test_sql_flink_parity import late_dropped, read_json
from test_sql_groupwin import (DDL, GEN_SOURCE, SEC, events, gen_ts, hop, session_events,
                               sessions_model, tumble, windows_model, write_events)


def multiset(values):
    """A MULTISET as the json format writes it: element text -> copies."""
    return dict(collections.Counter(str(v) for v in values if v is not None))


def jtext(v):
    return "null" if v is None else json.dumps(v, separators=(",", ":"))


def jarray(values):
    return "[" + ",".join(jtext(v) for v in values) + "]"


def jobject(pairs, absent_on_null=False):
    """Members in their keys' byte order (Flink's come in hash order)."""
    pairs = [(k, v) for k, v in pairs if not (absent_on_null and v is None)]
    pairs.sort(key=lambda kv: kv[0].encode())
    return "{" + ",".join(f"{jtext(k)}:{jtext(v)}" for k, v in pairs) + "}"


def cumulate(step, size):
    def wins(t):
        s = t - t % size
        return [(s, e) for e in range(s + step, s + size + 1, step) if e > t]
    return wins


T3 = "ts, INTERVAL '3' SECOND"
H14 = "ts, INTERVAL '1' SECOND, INTERVAL '4' SECOND"
S1 = "ts, INTERVAL '1' SECOND"
WIN = "window_start, window_end"


def by_key(rows):
    out = collections.defaultdict(list)
    for r in rows:
        out[r[1]].append(r)
    return out


@pytest.mark.parametrize("p,late", [(1, True), (2, False)])
def test_collect_and_json_aggs_in_every_window_kind(cluster, workdir, p, late):
    cluster.add_tm(slots=8 * p)
    rows = events(400, seed=401 + p, late=late)
    srows = session_events(200, seed=411 + p)
    names = ("tt", "th", "tc", "ts", "gt", "gh", "gs")
    outs = {n: os.path.join(workdir, "out-" + n) for n in names}
    ssrc = write_events(workdir, "s", srows)
    sql = DDL.format(p=p, src=write_events(workdir, "e", rows)) + f"""
CREATE TABLE sev (id BIGINT, k STRING, v INT, s STRING, ts TIMESTAMP(3),
                  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{ssrc}', 'format' = 'json');
CREATE TABLE tt (k STRING, ws TIMESTAMP(3), cs MULTISET<STRING>, ds MULTISET<STRING>,
                 ja STRING, jo STRING, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["tt"]}', 'format' = 'json');
CREATE TABLE th (ws TIMESTAMP(3), ck MULTISET<STRING>, jo STRING)
  WITH ('connector' = 'filesystem', 'path' = '{outs["th"]}', 'format' = 'json');
CREATE TABLE tc (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), ds MULTISET<STRING>, big MULTISET<INT>)
  WITH ('connector' = 'filesystem', 'path' = '{outs["tc"]}', 'format' = 'json');
CREATE TABLE ts (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), cv MULTISET<INT>, jo STRING)
  WITH ('connector' = 'filesystem', 'path' = '{outs["ts"]}', 'format' = 'json');
CREATE TABLE gt (k STRING, ws TIMESTAMP(3), cs MULTISET<STRING>, ja STRING)
  WITH ('connector' = 'filesystem', 'path' = '{outs["gt"]}', 'format' = 'json');
CREATE TABLE gh (k STRING, ws TIMESTAMP(3), ds MULTISET<STRING>)
  WITH ('connector' = 'filesystem', 'path' = '{outs["gh"]}', 'format' = 'json');
CREATE TABLE gs (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), cv MULTISET<INT>)
  WITH ('connector' = 'filesystem', 'path' = '{outs["gs"]}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO tt SELECT k, window_start, COLLECT(s), COLLECT(DISTINCT s), JSON_ARRAYAGG(v),
    JSON_OBJECTAGG(KEY CAST(id AS STRING) VALUE s), COUNT(*)
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '3' SECOND)) GROUP BY {WIN}, k;
INSERT INTO th SELECT window_start, COLLECT(k),
    JSON_OBJECTAGG(KEY CAST(id AS STRING) VALUE v ABSENT ON NULL)
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4' SECOND))
  GROUP BY {WIN};
INSERT INTO tc SELECT k, window_start, window_end, COLLECT(DISTINCT s),
    COLLECT(v) FILTER (WHERE v > 50)
  FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND))
  GROUP BY {WIN}, k;
INSERT INTO ts SELECT k, window_start, window_end, COLLECT(v),
    JSON_OBJECTAGG(KEY CAST(id AS STRING) VALUE v)
  FROM TABLE(SESSION(TABLE sev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND))
  GROUP BY {WIN}, k;
INSERT INTO gt SELECT k, TUMBLE_START({T3}), COLLECT(s), JSON_ARRAYAGG(s NULL ON NULL)
  FROM ev GROUP BY TUMBLE({T3}), k;
INSERT INTO gh SELECT k, HOP_START({H14}), COLLECT(DISTINCT s) FROM ev GROUP BY HOP({H14}), k;
INSERT INTO gs SELECT k, SESSION_START({S1}), SESSION_END({S1}), COLLECT(v)
  FROM sev GROUP BY SESSION({S1}), k;
END;
"""
    r = run_sql(cluster, workdir, "wc.sql", sql)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)

    def got(name, key, val):
        rs = read_json(outs[name])
        assert all(x.get("op", "+I") == "+I" for x in rs), rs[:3]
        out = {key(x): val(x) for x in rs}
        assert len(out) == len(rs)  # each window and key once
        return out

    # rows: (id, k, v, s, ts)
    want = {}
    for (s, e), ws in windows_model(rows, tumble(3 * SEC))[0].items():
        for k, krs in by_key(ws).items():
            want[(k, s)] = (multiset(x[3] for x in krs), {x: 1 for x in multiset(x[3] for x in krs)},
                            jarray([x[2] for x in krs if x[2] is not None]),
                            jobject([(str(x[0]), x[3]) for x in krs]), len(krs))
    assert got("tt", lambda x: (x["k"], ms(x["ws"])),
               lambda x: (x["cs"], x["ds"], x["ja"], x["jo"], x["c"])) == want
    assert any(len(w[0]) > 1 and max(w[0].values()) > 1 for w in want.values())  # repeats

    want = {s: (multiset(x[1] for x in ws), jobject([(str(x[0]), x[2]) for x in ws], True))
            for (s, e), ws in windows_model(rows, hop(SEC, 4 * SEC))[0].items()}
    assert got("th", lambda x: ms(x["ws"]), lambda x: (x["ck"], x["jo"])) == want

    want = {}
    for (s, e), ws in windows_model(rows, cumulate(SEC, 3 * SEC))[0].items():
        for k, krs in by_key(ws).items():
            want[(k, s, e)] = ({x: 1 for x in multiset(x[3] for x in krs)},
                               multiset(x[2] for x in krs if x[2] is not None and x[2] > 50))
    assert got("tc", lambda x: (x["k"], ms(x["ws"]), ms(x["we"])),
               lambda x: (x["ds"], x["big"])) == want

    sess = sessions_model(srows, SEC)
    want = {(k, s, e): (multiset(x[2] for x in rs), jobject([(str(x[0]), x[2]) for x in rs]))
            for (s, e, k), rs in sess.items()}
    assert got("ts", lambda x: (x["k"], ms(x["ws"]), ms(x["we"])),
               lambda x: (x["cv"], x["jo"])) == want
    assert any(len(rs) > 3 for rs in sess.values())  # sessions merged
    assert got("gs", lambda x: (x["k"], ms(x["ws"]), ms(x["we"])), lambda x: x["cv"]) == \
        {k: v[0] for k, v in want.items()}

    want = {}
    for (s, e), ws in windows_model(rows, tumble(3 * SEC))[0].items():
        for k, krs in by_key(ws).items():
            want[(k, s)] = (multiset(x[3] for x in krs), jarray([x[3] for x in krs]))
    assert got("gt", lambda x: (x["k"], ms(x["ws"])), lambda x: (x["cs"], x["ja"])) == want

    hwins, hlate = windows_model(rows, hop(SEC, 4 * SEC))
    want = {}
    for (s, e), ws in hwins.items():
        for k, krs in by_key(ws).items():
            want[(k, s)] = {x: 1 for x in multiset(x[3] for x in krs)}
    assert got("gh", lambda x: (x["k"], ms(x["ws"])), lambda x: x["ds"]) == want
    # every query counts the rows it dropped as late (the TVF and group-window forms alike)
    tlate = windows_model(rows, tumble(3 * SEC))[1]
    assert (tlate > 0) == late
    assert late_dropped(cluster, jid) == 2 * (tlate + hlate) + \
        windows_model(rows, cumulate(SEC, 3 * SEC))[1]


ANTI = """
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '{p}';
CREATE TABLE ev (id BIGINT, k STRING, v INT, s STRING, ts TIMESTAMP(3),
                 WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
-- the subquery's rows come slowly, after ev's, and with no watermark
CREATE TABLE nv (id BIGINT, bad AS id % 3 = 0)
  WITH ('connector' = 'datagen', 'rows-per-second' = '300', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""
KEEP = "FROM ev e WHERE NOT EXISTS (SELECT 1 FROM nv WHERE nv.id = e.id AND nv.bad)"


@pytest.mark.parametrize("p", [1, 2])
def test_group_windows_over_an_anti_join_take_its_retractions(cluster, workdir, p):
    """Flink 2.3 plans GROUP BY TUMBLE / HOP over NOT EXISTS: rows of ev
    pass the anti join while nv has no match for them and are retracted
    (-D) when nv's row with the same id and `bad` comes; the windows fire
    once nv has ended (it sends no watermark before), so each holds the
    rows whose id is not a multiple of 3. A window all of whose rows went
    emits nothing (Flink's record counter)."""
    cluster.add_tm(slots=6 * p)
    n = 300
    rows = events(n, seed=421 + p, late=False)
    outs = {x: os.path.join(workdir, "out-" + x) for x in ("t", "h")}
    r = run_sql(cluster, workdir, "anti.sql", ANTI.format(p=p, n=n, src=write_events(
        workdir, "e", rows)) + f"""
CREATE TABLE ot (k STRING, ws TIMESTAMP(3), c BIGINT, sv INT, cs MULTISET<STRING>,
                 ds MULTISET<STRING>)
  WITH ('connector' = 'filesystem', 'path' = '{outs["t"]}', 'format' = 'json');
CREATE TABLE oh (ws TIMESTAMP(3), c BIGINT, av INT, ck MULTISET<STRING>)
  WITH ('connector' = 'filesystem', 'path' = '{outs["h"]}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO ot SELECT e.k, TUMBLE_START(e.ts, INTERVAL '3' SECOND), COUNT(*), SUM(e.v), COLLECT(e.s),
    COLLECT(DISTINCT e.s) {KEEP} GROUP BY TUMBLE(e.ts, INTERVAL '3' SECOND), e.k;
INSERT INTO oh SELECT HOP_START(e.ts, INTERVAL '1' SECOND, INTERVAL '2' SECOND), COUNT(*),
    AVG(e.v), COLLECT(e.k)
  {KEEP} GROUP BY HOP(e.ts, INTERVAL '1' SECOND, INTERVAL '2' SECOND);
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    kept = [x for x in rows if x[0] % 3]
    want = {}
    for (s, e), ws in windows_model(kept, tumble(3 * SEC))[0].items():
        for k, krs in by_key(ws).items():
            vs = [x[2] for x in krs if x[2] is not None]
            cs = multiset(x[3] for x in krs)
            want[(k, s)] = (len(krs), sum(vs) if vs else None, cs, {x: 1 for x in cs})
    got = read_json(outs["t"])
    assert all(x.get("op", "+I") == "+I" for x in got)
    assert {(x["k"], ms(x["ws"])): (x["c"], x["sv"], x["cs"], x["ds"]) for x in got} == want
    assert len(got) == len(want)

    def avg(vs):  # AVG of INT: the sum divided, truncated toward zero
        return None if not vs else int(sum(vs) / len(vs))
    want = {s: (len(ws), avg([x[2] for x in ws if x[2] is not None]), multiset(x[1] for x in ws))
            for (s, e), ws in windows_model(kept, hop(SEC, 2 * SEC))[0].items()}
    got = read_json(outs["h"])
    assert {ms(x["ws"]): (x["c"], x["av"], x["ck"]) for x in got} == want
    assert len(got) == len(want)
    assert late_dropped(cluster, jid) == 0
    # the windows did take retractions: more rows came in than stayed
    into = 0
    for v in cluster.job(jid)["vertices"]:
        if v["name"].startswith("window"):
            m = cluster.get(f"/jobs/{jid}/vertices/{v['id']}/subtasks/metrics"
                            "?get=numRecordsIn&agg=sum")
            into += int(m[0]["sum"]) if m else 0
    assert into > 2 * len(kept), (into, len(kept))


GEN = GEN_SOURCE + """CREATE TABLE wins (k INT, ws TIMESTAMP(3), cm MULTISET<INT>, dm MULTISET<INT>, jo STRING)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO wins SELECT k, window_start, COLLECT(CAST(id % 5 AS INT)),
    COLLECT(DISTINCT CAST(id % 3 AS INT)), JSON_OBJECTAGG(KEY CAST(id AS STRING) VALUE id % 4)
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start,
    window_end, k;
"""


def test_window_collect_state_across_savepoint_on_rocksdb(make_cluster, workdir):
    """Stopped with a savepoint while windows hold COLLECT, COLLECT(DISTINCT)
    and JSON_OBJECTAGG values, restored at parallelism 2 from 1: every
    (window, key) goes out once with all its values. Event time is a
    permutation within blocks of 50 ids (1 s), so with a 2 s delay no row is
    late whichever source subtask runs ahead."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=3, extra={"state.backend.type": "rocksdb"})
    n = 4000
    out = os.path.join(workdir, "wins")
    args = dict(base=BASE, n=n, out=out)
    r = run_sql(c, workdir, "run1.sql", GEN.format(p=1, extra="", rate=1000, **args))
    assert r.returncode == 0, r.stdout + r.stderr
    sp = c.stop_after_progress(job_ids(r.stdout)[0], "ev", n // 4, os.path.join(workdir, "sp"))
    first = read_json(out)
    r = run_sql(c, workdir, "run2.sql", GEN.format(
        p=2, extra=f"SET 'execution.savepoint.path' = '{sp}';", rate=8000, **args))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    assert c.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    ids = collections.defaultdict(list)
    for i in range(1, n + 1):
        t = gen_ts(i)
        ids[(i % 7, t - t % SEC)].append(i)
    want = {key: (multiset(i % 5 for i in v), {str(x): 1 for x in {i % 3 for i in v}},
                  jobject([(str(i), i % 4) for i in v])) for key, v in ids.items()}
    got_rows = read_json(out)
    got = {(x["k"], ms(x["ws"])): (x["cm"], x["dm"], x["jo"]) for x in got_rows}
    assert len(got) == len(got_rows)
    assert got == want
    assert 0 < len(first) < len(want)  # stopped with windows still to come
    assert late_dropped(c, jid2) == 0


G5 = "TUMBLE(ts, INTERVAL '5' SECOND)"
REFUSALS = [
    # Flink 2.3's group window passes a non-STRING value as its Java class, for which
    # JsonArrayAggFunction / JsonObjectAggFunction have no accumulate
    (f"SELECT JSON_ARRAYAGG(v) FROM ev GROUP BY {G5}", "JSON_ARRAYAGG(v)",
     "Could not find an implementation method 'accumulate' in class 'org.apache.flink.table."
     "runtime.functions.aggregate.JsonArrayAggFunction' for function "
     "'JSON_ARRAYAGG_ABSENT_ON_NULL' that matches the following signature: void accumulate("
     "org.apache.flink.table.runtime.functions.aggregate.JsonArrayAggFunction.Accumulator, "
     "java.lang.Integer)"),
    (f"SELECT JSON_OBJECTAGG(KEY k VALUE id) FROM ev GROUP BY HOP(ts, INTERVAL '1' SECOND, "
     "INTERVAL '2' SECOND)", "JSON_OBJECTAGG(",
     "for function 'JSON_OBJECTAGG_NULL_ON_NULL' that matches the following signature: void "
     "accumulate(org.apache.flink.table.runtime.functions.aggregate.JsonObjectAggFunction."
     "Accumulator, org.apache.flink.table.data.StringData, java.lang.Long)"),
    # ... and a window that merges accumulators has no JSON_ARRAYAGG
    ("SELECT JSON_ARRAYAGG(s) FROM ev GROUP BY SESSION(ts, INTERVAL '1' SECOND)",
     "JSON_ARRAYAGG(s)", "Could not find an implementation method 'merge' in class "
     "'org.apache.flink.table.runtime.functions.aggregate.JsonArrayAggFunction' for function "
     "'JSON_ARRAYAGG_ABSENT_ON_NULL'"),
    (f"SELECT {WIN}, JSON_ARRAYAGG(v NULL ON NULL) FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), "
     f"INTERVAL '1' SECOND, INTERVAL '2' SECOND)) GROUP BY {WIN}", "JSON_ARRAYAGG(v",
     "for function 'JSON_ARRAYAGG_NULL_ON_NULL' that matches the following signature: void "
     "merge("),
    # a window TVF over the anti join: its ts is no time attribute (Flink's words)
    (f"SELECT {WIN}, COUNT(*) FROM TABLE(TUMBLE(TABLE anti, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
     f"GROUP BY {WIN}", "ts), INTERVAL", "The window function requires the timecol is a time "
     "attribute type, but is TIMESTAMP(3).",
     "CREATE VIEW anti AS SELECT e.* FROM ev e WHERE NOT EXISTS (SELECT 1 FROM ev f WHERE f.id = "
     "e.id + 1);\n"),
]


@pytest.mark.parametrize("i", range(len(REFUSALS)))
def test_refusals_name_the_place(cluster, workdir, i):
    query, at, msg, *pre = REFUSALS[i]
    head = DDL.format(p=1, src=workdir) + "\n" + "".join(pre)
    line = head.count("\n") + 1
    r = run_sql(cluster, workdir, "bad.sql", head + query + ";\n")
    assert r.returncode != 0
    err = r.stdout + r.stderr
    assert f"line {line}, column {query.index(at) + 1}: " in err and msg in err, err


def retract_session_rows(seed, n):
    """Rows (id, k, v, s, ts) for SESSION windows over the anti join, in time
    order: per key runs of rows at most 1 s apart, and the rows the join
    retracts (ids that are multiples of 3) only strictly between two kept
    rows of their key less than 1 s apart, so they merge no sessions that
    the kept rows do not, whenever their retraction comes."""
    rnd = random.Random(seed)
    kept, t = [], BASE + 1000
    for _ in range(n):
        t += rnd.choice([100, 300, 600, 1500, 2500])
        kept.append((rnd.choice("ab"), t))
    rows, last = [], {}
    for k, ts in kept:
        if k in last and 2 <= ts - last[k] < SEC and rnd.random() < 0.6:
            rows.append((True, k, (last[k] + ts) // 2))
        rows.append((False, k, ts))
        last[k] = ts
    rows.sort(key=lambda r: r[2])
    out, nid = [], 0
    for gone, k, ts in rows:
        nid += 1
        while (nid % 3 == 0) != gone:
            nid += 1
        v = rnd.randint(0, 99)
        out.append((nid, k, v, None if v % 10 == 0 else f"w{v % 7}", ts))
    return out


def minmax(vals, fn):
    vals = [x for x in vals if x is not None]
    return fn(vals) if vals else None


@pytest.mark.parametrize("p", [1, 2])
def test_group_windows_over_an_anti_join_min_max_distinct_json(cluster, workdir, p):
    """Over the anti join's -D rows the window keeps MIN/MAX values (also of a
    STRING) with their copies, DISTINCT values with theirs, and takes a
    retracted value out of JSON_ARRAYAGG / JSON_OBJECTAGG; TUMBLE, HOP and
    SESSION (whose retracted rows sit inside sessions of kept rows)."""
    cluster.add_tm(slots=8 * p)
    n = 300
    rows = events(n, seed=431 + p, late=False)
    srows = retract_session_rows(447 + p, 60)
    assert srows[-1][0] <= n
    outs = {x: os.path.join(workdir, "out-" + x) for x in ("t", "h", "s")}
    r = run_sql(cluster, workdir, "anti2.sql", ANTI.format(p=p, n=n, src=write_events(
        workdir, "e", rows)) + f"""
CREATE TABLE sev (id BIGINT, k STRING, v INT, s STRING, ts TIMESTAMP(3),
                  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{write_events(workdir, "s", srows)}',
        'format' = 'json');
CREATE TABLE ot (k STRING, ws TIMESTAMP(3), mi INT, ma INT, ms STRING, xs STRING, dc BIGINT,
                 ds INT, ja STRING, jo STRING)
  WITH ('connector' = 'filesystem', 'path' = '{outs["t"]}', 'format' = 'json');
CREATE TABLE oh (ws TIMESTAMP(3), mi INT, xs STRING, dk BIGINT, av INT, mf INT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["h"]}', 'format' = 'json');
CREATE TABLE os (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), mi INT, xs STRING, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{outs["s"]}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO ot SELECT e.k, TUMBLE_START(e.ts, INTERVAL '3' SECOND), MIN(e.v), MAX(e.v), MIN(e.s),
    MAX(e.s), COUNT(DISTINCT e.s), SUM(DISTINCT e.v), JSON_ARRAYAGG(e.s),
    JSON_OBJECTAGG(KEY CAST(e.id AS STRING) VALUE e.s)
  {KEEP} GROUP BY TUMBLE(e.ts, INTERVAL '3' SECOND), e.k;
INSERT INTO oh SELECT HOP_START(e.ts, INTERVAL '1' SECOND, INTERVAL '2' SECOND), MIN(e.v),
    MAX(e.s), COUNT(DISTINCT e.k), AVG(DISTINCT e.v), MAX(e.v) FILTER (WHERE e.k <> 'a')
  {KEEP} GROUP BY HOP(e.ts, INTERVAL '1' SECOND, INTERVAL '2' SECOND);
INSERT INTO os SELECT e.k, SESSION_START(e.ts, INTERVAL '1' SECOND),
    SESSION_END(e.ts, INTERVAL '1' SECOND), MIN(e.v), MAX(e.s), COUNT(*)
  FROM sev e WHERE NOT EXISTS (SELECT 1 FROM nv WHERE nv.id = e.id AND nv.bad)
  GROUP BY SESSION(e.ts, INTERVAL '1' SECOND), e.k;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(cluster, jid)
    kept = [x for x in rows if x[0] % 3]
    want = {}
    for (s, e), ws in windows_model(kept, tumble(3 * SEC))[0].items():
        for k, krs in by_key(ws).items():
            vs, ss = [x[2] for x in krs], [x[3] for x in krs]
            dv = {x for x in vs if x is not None}
            want[(k, s)] = (minmax(vs, min), minmax(vs, max),
                            minmax([x.encode() for x in ss if x is not None], min),
                            minmax([x.encode() for x in ss if x is not None], max),
                            len({x for x in ss if x is not None}), sum(dv) if dv else None,
                            sorted(x for x in ss if x is not None),
                            jobject([(str(x[0]), x[3]) for x in krs]))
    got = read_json(outs["t"])
    assert all(x.get("op", "+I") == "+I" for x in got)
    # JSON_ARRAYAGG keeps arrival order, which at p=2 two join subtasks interleave
    assert {(x["k"], ms(x["ws"])): (x["mi"], x["ma"], x["ms"] and x["ms"].encode(),
                                    x["xs"] and x["xs"].encode(), x["dc"], x["ds"],
                                    sorted(json.loads(x["ja"])), x["jo"]) for x in got} == want
    assert len(got) == len(want)
    if p == 1:  # one channel: the values in the order they came (ev's rows come before
        # nv's), a retraction taking out the earliest equal value (Flink's list remove)
        for x in got:
            krs = by_key(windows_model(rows, tumble(3 * SEC))[0][
                (ms(x["ws"]), ms(x["ws"]) + 3 * SEC)])[x["k"]]
            vals = [y[3] for y in krs if y[3] is not None]
            for y in krs:
                if y[0] % 3 == 0 and y[3] is not None:
                    vals.remove(y[3])
            assert x["ja"] == jarray(vals)

    def avg(vs):
        return None if not vs else int(sum(vs) / len(vs))
    want = {}
    for (s, e), ws in windows_model(kept, hop(SEC, 2 * SEC))[0].items():
        vs = [x[2] for x in ws]
        want[s] = (minmax(vs, min), minmax([x[3] for x in ws if x[3]], max),
                   len({x[1] for x in ws}), avg(sorted({x for x in vs if x is not None})),
                   minmax([x[2] for x in ws if x[1] != "a"], max))
    got = read_json(outs["h"])
    assert {ms(x["ws"]): (x["mi"], x["xs"], x["dk"], x["av"], x["mf"]) for x in got} == want
    assert len(got) == len(want)

    sess = sessions_model([x for x in srows if x[0] % 3], SEC)
    want = {(k, s, e): (minmax([x[2] for x in rs], min), minmax([x[3] for x in rs if x[3]], max),
                        len(rs)) for (s, e, k), rs in sess.items()}
    got = read_json(outs["s"])
    assert {(x["k"], ms(x["ws"]), ms(x["we"])): (x["mi"], x["xs"], x["c"]) for x in got} == want
    assert len(got) == len(want)
    assert sum(x[0] % 3 == 0 for x in srows) > 5  # sessions did take retractions
    # the extremum itself was retracted somewhere, so a successor had to be found
    gone = [x for x in rows if x[0] % 3 == 0]
    assert any(x[2] is not None and all(y[2] is None or y[2] <= x[2] for y in ws)
               and any(y[0] % 3 for y in ws)
               for (s, e), ws in windows_model(rows, tumble(3 * SEC))[0].items()
               for x in gone if x in ws)
    assert late_dropped(cluster, jid) == 0


@pytest.mark.parametrize("backend", ["rocksdb", "hashmap"])
def test_window_retraction_state_across_savepoint(make_cluster, workdir, backend):
    """Stopped with a savepoint while the anti join's retractions are still
    coming (nv's rows come slowly and hold the watermark), restored at
    parallelism 2 from 1: the MIN/MAX values, DISTINCT copies and JSON
    members kept per window go on, and every window's result is the model's."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=12, extra={"state.backend.type": backend})
    n = 150
    rows = events(n, seed=457, late=False)
    src = write_events(workdir, "e", rows)
    out = os.path.join(workdir, "out")
    tail = f"""
CREATE TABLE ot (k STRING, ws TIMESTAMP(3), mi INT, xs STRING, dc BIGINT, ja STRING, jo STRING)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO ot SELECT e.k, TUMBLE_START(e.ts, INTERVAL '3' SECOND), MIN(e.v), MAX(e.s),
    COUNT(DISTINCT e.v), JSON_ARRAYAGG(e.s), JSON_OBJECTAGG(KEY CAST(e.id AS STRING) VALUE e.s)
  {KEEP} GROUP BY TUMBLE(e.ts, INTERVAL '3' SECOND), e.k;
"""
    r = run_sql(c, workdir, "run1.sql", ANTI.format(p=1, n=n, src=src).replace(
        "'rows-per-second' = '300'", "'rows-per-second' = '30'") + tail)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = c.stop_after_progress(job_ids(r.stdout)[0], "nv", 20, os.path.join(workdir, "sp"))
    assert read_json(out) == []  # nothing fired: nv holds the watermark
    r = run_sql(c, workdir, "run2.sql", f"SET 'execution.savepoint.path' = '{sp}';\n" +
                ANTI.format(p=2, n=n, src=src) + tail)
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    assert c.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    want = {}
    for (s, e), ws in windows_model([x for x in rows if x[0] % 3], tumble(3 * SEC))[0].items():
        for k, krs in by_key(ws).items():
            vs, ss = [x[2] for x in krs], [x[3] for x in krs if x[3] is not None]
            want[(k, s)] = (minmax(vs, min), minmax(ss, max),
                            len({x for x in vs if x is not None}), sorted(ss),
                            jobject([(str(x[0]), x[3]) for x in krs]))
    got = read_json(out)
    assert {(x["k"], ms(x["ws"])): (x["mi"], x["xs"], x["dc"], sorted(json.loads(x["ja"])),
                                    x["jo"]) for x in got} == want
    assert len(got) == len(want)
