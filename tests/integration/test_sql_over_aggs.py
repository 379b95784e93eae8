"""RANK(), DENSE_RANK(), the variance aggregates (VAR_POP, VAR_SAMP,
STDDEV_POP, STDDEV_SAMP) and DISTINCT aggregates over OVER windows, from SQL text through running
jobs on two TaskManagers (sql/plan_over.c, operators/over_aggregate.c), at
parallelism 1 and 2 and across stop-with-savepoint + restore at another
parallelism on both backends. Every expected value is computed here by a
Python model from the generated ids:

- RANK / DENSE_RANK over Flink's default frame (RANGE BETWEEN UNBOUNDED
  PRECEDING AND CURRENT ROW) with peers (rows of one time share a rank):
  RANK is 1 + the rows of earlier times, DENSE_RANK 1 + the earlier times.
- The variances as Flink 2.3 computes them over a window (Calcite's
  expansion, checked with PyFlink): (SUM(x*x) - SUM(x)*SUM(x)/COUNT(x)) /
  COUNT(x) -- COUNT(x) - 1 for the sample ones, NULL for one row --, the
  square root for STDDEV, CAST to x's type: Java int/long arithmetic for an
  INT column (truncating divisions), doubles for a DOUBLE one; over ROWS n
  PRECEDING (retracted as rows leave), RANGE INTERVAL PRECEDING with peers
  and NULLs, and UNBOUNDED.
- COUNT / SUM / AVG / MAX (DISTINCT x) over ROWS n PRECEDING (values leave
  the frame's distinct set when their last copy does), RANGE with peers and
  UNBOUNDED, of INT, STRING and DOUBLE values and expressions, with NULLs.
- COLLECT [DISTINCT] over ROWS and RANGE frames: the MULTISET of the frame's
  non-NULL values (as the json format writes it, each element's text ->
  its copies).
- The variances with DISTINCT (Calcite's expansion with every SUM and COUNT
  DISTINCT: SUM(DISTINCT x * x) counts -2 and 2's square once).
- MIN / MAX [DISTINCT] of a STRING over ROWS, RANGE and UNBOUNDED frames,
  with NULLs (strings order by their bytes).
- LISTAGG(x [, sep]) and LISTAGG(DISTINCT x [, sep]) over ROWS, RANGE and
  UNBOUNDED frames: the frame's non-NULL values in time order; DISTINCT as
  Flink's distinct view feeds the list (a value joins its end at its first
  copy in the frame and leaves with its last), modelled by replaying the
  sliding frame.
"""
import bisect
import collections
import math
import os
import re

import pytest

from conftest import wait_for
from test_checkpoints import committed_files, read_rows
from test_sql import BASE, finish, job_ids, run_sql
from test_sql_over import events, is_over, late, sinks, ts_of, two_tms

QUERIES = """
EXECUTE STATEMENT SET BEGIN
INSERT INTO o_rank
SELECT id, RANK() OVER w AS r, DENSE_RANK() OVER w AS dr, COUNT(*) OVER w AS c, SUM(v) OVER w AS s
FROM ev2 WINDOW w AS (PARTITION BY k ORDER BY ts);
INSERT INTO o_var_rows
SELECT id, VAR_POP(v) OVER w AS vp, VAR_SAMP(v) OVER w AS vs, STDDEV_POP(v) OVER w AS sp,
       STDDEV_SAMP(v) OVER w AS ss, VAR_SAMP(v) OVER w + 1 AS vs1
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW);
INSERT INTO o_var_range
SELECT id, VAR_POP(d) OVER w AS vp, STDDEV_SAMP(d) OVER w AS ss, STDDEV_POP(nv) OVER w AS sn,
       VAR_SAMP(nv) OVER w AS vn
FROM ev2 WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW);
INSERT INTO o_var_unb
SELECT id, RANK() OVER w AS r, VAR_SAMP(v) OVER w AS vs, STDDEV_POP(d) OVER w AS sp
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts);
INSERT INTO o_dist_rows
SELECT id, COUNT(DISTINCT v % 10) OVER w AS cd, SUM(DISTINCT nv % 7) OVER w AS sd,
       COUNT(DISTINCT name) OVER w AS cn, MAX(DISTINCT v) OVER w AS mx, SUM(v) OVER w AS s
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW);
INSERT INTO o_dist_range
SELECT id, AVG(DISTINCT d) OVER w AS ad, COUNT(DISTINCT nv % 5) OVER w AS cd
FROM ev2 WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW);
INSERT INTO o_dist_unb
SELECT id, COUNT(DISTINCT v % 10) OVER w AS cd, SUM(DISTINCT v % 10) OVER w AS sd
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts);
INSERT INTO o_collect
SELECT id, COLLECT(v % 5) OVER w AS cv, COLLECT(DISTINCT name) OVER w AS cn, COLLECT(nv) OVER w AS cnv
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW);
INSERT INTO o_collect_range
SELECT id, COLLECT(nv % 3) OVER w AS c, COUNT(*) OVER w AS n
FROM ev2 WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW);
INSERT INTO o_var_dist
SELECT id, VAR_POP(DISTINCT v % 10 - 5) OVER w AS vp, STDDEV_SAMP(DISTINCT nv % 7) OVER w AS ss
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW);
INSERT INTO o_strmm
SELECT id, MIN(name) OVER w AS mn, MAX(name) OVER w AS mx, MAX(CAST(nv AS STRING)) OVER w AS mv
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 4 PRECEDING AND CURRENT ROW);
INSERT INTO o_strmm_range
SELECT id, MIN(CAST(nv AS STRING)) OVER w AS mn, MAX(DISTINCT name) OVER w AS mx
FROM ev2 WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW);
INSERT INTO o_strmm_unb
SELECT id, MIN(name) OVER w AS mn, MAX(CAST(nv AS STRING)) OVER w AS mx
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts);
INSERT INTO o_listagg
SELECT id, LISTAGG(name) OVER w AS l, LISTAGG(DISTINCT name, '|') OVER w AS ld
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 4 PRECEDING AND CURRENT ROW);
INSERT INTO o_listagg_range
SELECT id, LISTAGG(CAST(nv % 3 AS STRING), '') OVER w AS l,
       LISTAGG(DISTINCT CAST(nv % 4 AS STRING)) OVER w AS ld
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW);
INSERT INTO o_listagg_unb
SELECT id, LISTAGG(CAST(nv % 10 AS STRING), ';') OVER w AS l, LISTAGG(DISTINCT name) OVER w AS ld
FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts);
END;
"""

EXTRA_COLS = ("    v  AS CAST(id * 37 % 101 AS INT),\n",
              "    v  AS CAST(id * 37 % 101 AS INT),\n"
              "    d  AS CAST(id * 37 % 101 AS DOUBLE) / 4,\n"
              "    nv AS CASE WHEN id % 5 = 0 THEN CAST(NULL AS INT) ELSE CAST(id * 37 % 101 AS INT) END,\n"
              "    name AS CAST(id * 37 % 101 % 13 AS STRING),\n")


def ddl(n, rate, late_from):
    text = events(n, rate, late_from).replace(*EXTRA_COLS)
    assert text.count("nv AS") == 2
    return text


def outs_of(workdir):
    return {
        "o_rank": ("id BIGINT, r BIGINT, dr BIGINT, c BIGINT, s INT", os.path.join(workdir, "rank")),
        "o_var_rows": ("id BIGINT, vp INT, vs INT, sp INT, ss INT, vs1 INT",
                       os.path.join(workdir, "var_rows")),
        "o_var_range": ("id BIGINT, vp DOUBLE, ss DOUBLE, sn INT, vn INT",
                        os.path.join(workdir, "var_range")),
        "o_var_unb": ("id BIGINT, r BIGINT, vs INT, sp DOUBLE", os.path.join(workdir, "var_unb")),
        "o_dist_rows": ("id BIGINT, cd BIGINT, sd INT, cn BIGINT, mx INT, s INT",
                        os.path.join(workdir, "dist_rows")),
        "o_dist_range": ("id BIGINT, ad DOUBLE, cd BIGINT", os.path.join(workdir, "dist_range")),
        "o_dist_unb": ("id BIGINT, cd BIGINT, sd INT", os.path.join(workdir, "dist_unb")),
        "o_collect": ("id BIGINT, cv MULTISET<INT>, cn MULTISET<STRING>, cnv MULTISET<INT>",
                      os.path.join(workdir, "collect")),
        "o_collect_range": ("id BIGINT, c MULTISET<INT>, n BIGINT",
                            os.path.join(workdir, "collect_range")),
        "o_var_dist": ("id BIGINT, vp INT, ss INT", os.path.join(workdir, "var_dist")),
        "o_strmm": ("id BIGINT, mn STRING, mx STRING, mv STRING", os.path.join(workdir, "strmm")),
        "o_strmm_range": ("id BIGINT, mn STRING, mx STRING", os.path.join(workdir, "strmm_range")),
        "o_strmm_unb": ("id BIGINT, mn STRING, mx STRING", os.path.join(workdir, "strmm_unb")),
        "o_listagg": ("id BIGINT, l STRING, ld STRING", os.path.join(workdir, "listagg")),
        "o_listagg_range": ("id BIGINT, l STRING, ld STRING",
                            os.path.join(workdir, "listagg_range")),
        "o_listagg_unb": ("id BIGINT, l STRING, ld STRING", os.path.join(workdir, "listagg_unb")),
    }


def i32(x):
    """Java's int: wraps at 32 bits."""
    return (x + 2 ** 31) % 2 ** 32 - 2 ** 31


def jdiv(a, b):
    """Java's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def jint(x):
    """Java's (int) of a double: toward zero (NaN 0)."""
    return 0 if math.isnan(x) else int(x)


def variance(xs, sample, sqrt, ints):
    """Calcite's expansion of VAR_POP/VAR_SAMP/STDDEV_POP/STDDEV_SAMP over the
    frame's values xs (NULLs skipped), computed as Flink's generated code
    does: SUM of an INT is an INT, x * x an INT, the divisions by COUNT (a
    BIGINT) long divisions; POWER in doubles; CAST back to INT."""
    xs = [x for x in xs if x is not None]
    n = len(xs)
    if n == 0 or (sample and n == 1):
        return None
    if ints:
        s = i32(sum(xs))
        sumsq = i32(sum(i32(x * x) for x in xs))
        var = jdiv(sumsq - jdiv(i32(s * s), n), n - 1 if sample else n)
        return jint(math.pow(float(var), 0.5)) if sqrt else i32(var)
    s, sumsq = sum(xs), sum(x * x for x in xs)
    var = (sumsq - s * s / n) / (n - 1 if sample else n)
    return math.pow(var, 0.5) if sqrt else var


def model(n, late_from):
    v = {i: i * 37 % 101 for i in range(1, n + 1)}
    d = {i: v[i] / 4 for i in v}
    nv = {i: None if i % 5 == 0 else v[i] for i in v}
    want = {name: {} for name in ("o_rank", "o_var_rows", "o_var_range", "o_var_unb",
                                  "o_dist_rows", "o_dist_range", "o_dist_unb", "o_collect",
                                  "o_collect_range", "o_var_dist", "o_strmm", "o_strmm_range",
                                  "o_strmm_unb", "o_listagg", "o_listagg_range",
                                  "o_listagg_unb")}

    def multiset(xs):
        """A MULTISET as the json format writes it: each element's text -> copies."""
        return dict(collections.Counter(str(x) for x in xs if x is not None))

    def dset(xs):
        return {x for x in xs if x is not None}

    def dvar(xs, sample, sqrt):
        """A DISTINCT variance as Calcite expands it: SUM(DISTINCT x * x),
        SUM(DISTINCT x), COUNT(DISTINCT x) -- two values of one square (-2
        and 2) count it once -- in INT arithmetic."""
        ds = dset(xs)
        n = len(ds)
        if n == 0 or (sample and n == 1):
            return None
        s, sumsq = i32(sum(ds)), i32(sum(dset(i32(x * x) for x in ds)))
        var = jdiv(sumsq - jdiv(i32(s * s), n), n - 1 if sample else n)
        return jint(math.pow(float(var), 0.5)) if sqrt else i32(var)

    def smin(xs, mx=False):
        """MIN / MAX of strings (byte order: these are ASCII), NULLs skipped."""
        xs = [x for x in xs if x is not None]
        return (max(xs) if mx else min(xs)) if xs else None

    def snv(x):
        return None if nv[x] is None else str(nv[x])

    def lagg(xs, sep=","):
        """LISTAGG: the non-NULL values in frame order, NULL for none."""
        xs = [x for x in xs if x is not None]
        return sep.join(xs) if xs else None

    class Distinct:
        """LISTAGG(DISTINCT) as Flink's distinct view feeds it: a value joins
        the end of the list at its first copy in the frame and leaves it
        with its last; frames slide (rows leave from the front)."""
        def __init__(self, vals):
            self.vals, self.lo, self.hi = vals, 0, 0
            self.count, self.order = collections.Counter(), []

        def frame(self, lo, hi, sep=","):
            for x in self.vals[self.lo:lo]:
                if x is not None:
                    self.count[x] -= 1
                    if not self.count[x]:
                        self.order.remove(x)
            for x in self.vals[max(lo, self.hi):hi]:
                if x is not None:
                    if not self.count[x]:
                        self.order.append(x)
                    self.count[x] += 1
            self.lo, self.hi = lo, hi
            return sep.join(self.order) if self.order else None
    per = collections.defaultdict(list)
    for i in range(1, n + 1):
        if not late(i, n, late_from):
            per[i % 7].append(i)
    for rows in per.values():
        rows.sort(key=ts_of)  # distinct times
        times = [ts_of(x) for x in rows]
        names = [str(v[x] % 13) for x in rows]
        d_rows, d_unb = Distinct(names), Distinct(names)
        d_range = Distinct([None if nv[x] is None else str(nv[x] % 4) for x in rows])
        for j, i in enumerate(rows):
            lo = bisect.bisect_left(times, times[j] - 1000)
            want["o_listagg"][i] = {"id": i, "l": lagg(names[max(0, j - 4):j + 1]),
                                    "ld": d_rows.frame(max(0, j - 4), j + 1, "|")}
            want["o_listagg_range"][i] = {
                "id": i, "l": lagg([None if nv[x] is None else str(nv[x] % 3)
                                    for x in rows[lo:j + 1]], ""),
                "ld": d_range.frame(lo, j + 1)}
            want["o_listagg_unb"][i] = {
                "id": i, "l": lagg([None if nv[x] is None else str(nv[x] % 10)
                                    for x in rows[:j + 1]], ";"),
                "ld": d_unb.frame(0, j + 1)}
            fr = [v[x] for x in rows[max(0, j - 3):j + 1]]
            vs = variance(fr, True, False, True)
            want["o_var_rows"][i] = {"id": i, "vp": variance(fr, False, False, True), "vs": vs,
                                     "sp": variance(fr, False, True, True),
                                     "ss": variance(fr, True, True, True),
                                     "vs1": None if vs is None else vs + 1}
            f4 = rows[max(0, j - 3):j + 1]
            want["o_collect"][i] = {"id": i, "cv": multiset(v[x] % 5 for x in f4),
                                    "cn": multiset(set(str(v[x] % 13) for x in f4)),
                                    "cnv": multiset(nv[x] for x in f4)}
            f6 = rows[max(0, j - 5):j + 1]
            want["o_var_dist"][i] = {"id": i, "vp": dvar([v[x] % 10 - 5 for x in f6], False, False),
                                     "ss": dvar([None if nv[x] is None else nv[x] % 7
                                                 for x in f6], True, True)}
            f5 = rows[max(0, j - 4):j + 1]
            want["o_strmm"][i] = {"id": i, "mn": smin(str(v[x] % 13) for x in f5),
                                  "mx": smin((str(v[x] % 13) for x in f5), True),
                                  "mv": smin((snv(x) for x in f5), True)}
            sd = dset(None if nv[x] is None else nv[x] % 7 for x in f6)
            want["o_dist_rows"][i] = {"id": i, "cd": len(dset(v[x] % 10 for x in f6)),
                                      "sd": sum(sd) if sd else None,
                                      "cn": len(dset(str(v[x] % 13) for x in f6)),
                                      "mx": max(v[x] for x in f6), "s": sum(v[x] for x in f6)}
            upto = rows[:j + 1]
            want["o_strmm_unb"][i] = {"id": i, "mn": smin(str(v[x] % 13) for x in upto),
                                      "mx": smin((snv(x) for x in upto), True)}
            want["o_dist_unb"][i] = {"id": i, "cd": len(dset(v[x] % 10 for x in upto)),
                                     "sd": sum(dset(v[x] % 10 for x in upto))}
            want["o_var_unb"][i] = {"id": i, "r": j + 1,
                                    "vs": variance([v[x] for x in upto], True, False, True),
                                    "sp": variance([d[x] for x in upto], False, True, False)}
    ts2 = {i: BASE + ((i // 50) * 50 + (i * 7) % 50) // 4 * 40 for i in range(1, n + 1)}
    per = collections.defaultdict(list)
    for i in range(1, n + 1):
        per[i % 3].append(i)
    for rows in per.values():
        rows.sort(key=lambda x: ts2[x])
        times = [ts2[x] for x in rows]
        distinct = sorted(set(times))
        for i in rows:
            t = ts2[i]
            before = bisect.bisect_left(times, t)
            upto = rows[:bisect.bisect_right(times, t)]
            want["o_rank"][i] = {"id": i, "r": before + 1, "dr": bisect.bisect_left(distinct, t) + 1,
                                 "c": len(upto), "s": sum(v[x] for x in upto)}
            fr = rows[bisect.bisect_left(times, t - 1000):len(upto)]
            want["o_var_range"][i] = {"id": i, "vp": variance([d[x] for x in fr], False, False, False),
                                      "ss": variance([d[x] for x in fr], True, True, False),
                                      "sn": variance([nv[x] for x in fr], False, True, True),
                                      "vn": variance([nv[x] for x in fr], True, False, True)}
            want["o_collect_range"][i] = {"id": i, "n": len(fr), "c": multiset(
                None if nv[x] is None else nv[x] % 3 for x in fr)}
            want["o_strmm_range"][i] = {"id": i, "mn": smin(snv(x) for x in fr),
                                        "mx": smin((str(v[x] % 13) for x in fr), True)}
            ds = dset(d[x] for x in fr)
            want["o_dist_range"][i] = {"id": i, "ad": sum(ds) / len(ds),
                                       "cd": len(dset(None if nv[x] is None else nv[x] % 5
                                                      for x in fr))}
    return want


def close(a, b):
    if isinstance(a, float) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def check(outs, want):
    for name, (_, path) in outs.items():
        got = {}
        for r in read_rows(committed_files(path)):
            r.pop("op", None)
            assert r["id"] not in got, f"{name}: id {r['id']} emitted twice"
            got[r["id"]] = r
        w = want[name]
        bad = sorted(i for i in set(got) | set(w)
                     if set(got.get(i, {})) != set(w.get(i, {})) or
                     not all(close(got[i][f], w[i][f]) for f in w[i]))
        assert not bad, (name, len(got), len(w), len(bad),
                         [(got.get(i), w.get(i)) for i in bad[:4]])


@pytest.mark.parametrize("p", [1, 2])
def test_rank_and_variance(make_cluster, workdir, p):
    c = two_tms(make_cluster)
    n = 3000
    late_from = n * 3 // 4
    outs = outs_of(workdir)
    r = run_sql(c, workdir, "aggs.sql", ddl(n, 1000, late_from) + sinks(outs) +
                f"\nSET 'parallelism.default' = '{p}';\n" + QUERIES)
    assert r.returncode == 0, r.stdout + r.stderr
    job = finish(c, job_ids(r.stdout)[0])
    assert sorted(v["parallelism"] for v in job["vertices"] if is_over(v)) == [p] * 16
    check(outs, model(n, late_from))


@pytest.mark.parametrize("p1,p2,backend", [(1, 2, "hashmap"), (2, 1, "rocksdb")])
def test_rank_and_variance_savepoint_and_rescale(make_cluster, workdir, p1, p2, backend):
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=4, extra={"state.backend.type": backend})
    c.add_tm(slots=4, extra={"state.backend.type": backend})
    n = 6000
    late_from = n * 3 // 4  # after the restore's first watermark
    outs = outs_of(workdir)
    # 400 rows/s: the stop (after n // 4 rows, ~4 s) comes ~11 s before the end
    r = run_sql(c, workdir, "run1.sql", ddl(n, 400, late_from) + sinks(outs) +
                f"\nSET 'parallelism.default' = '{p1}';\n" + QUERIES)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    c.wait_state(jid, "RUNNING", timeout=30)
    wait_for(lambda: sum(v["metrics"].get("write-records", 0) for v in c.job(jid)["vertices"]
                         if v["name"].startswith("ev")) >= n // 4, timeout=60,
             what="the sources to make progress")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), timeout=60,
             what="every task running (a savepoint needs them all)")
    r = c.cli("stop", "--savepoint", "file://" + os.path.join(workdir, "sp"), jid, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (\S+)", r.stdout).group(1)
    job = c.wait_state(jid, ["FINISHED", "FAILED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert 0 < len(read_rows(committed_files(outs["o_var_rows"][1]))) < n  # stopped mid-stream
    r = run_sql(c, workdir, "run2.sql", ddl(n, 4000, late_from) + sinks(outs) +
                f"\nSET 'parallelism.default' = '{p2}';\n"
                f"SET 'execution.savepoint.path' = '{sp}';\n" + QUERIES)
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    assert c.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    check(outs, model(n, late_from))
