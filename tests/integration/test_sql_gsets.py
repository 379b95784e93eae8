"""GROUP BY GROUPING SETS, ROLLUP and CUBE with GROUPING / GROUPING_ID /
GROUP_ID, in group aggregation (over an insert-only and over an updating
input) and in window TVF aggregation (also with sets that leave out the
window bounds, which aggregate the TVF's rows as a plain table), the window
TVFs' named arguments (DATA =>, TIMECOL =>, SIZE =>, SLIDE =>, STEP =>, GAP
=>, `OFFSET` =>) and HOP's and CUMULATE's offsets (negative, past the size),
with and without aggregation, from
SQL text through `sluice sql -f` on a running cluster at parallelism 1 and 2.

The input is seeded JSON lines with NULLs among the keys (a NULL key and a
key nulled by a grouping set are different groups). Each expected result is
computed here in Python: the grouping sets are written out by hand per query
(ROLLUP(a, b) as (a, b), (a), ()), each row is counted once per set, and the
result is compared with the final multiset of the sink's changelog. The
grouping-sets aggregate is also stopped with a savepoint half-way and
restored, on both state backends."""
import collections
import datetime
import json
import os
import random

import pytest

import flink_oracle as fo
from conftest import wait_for
from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql
from test_sql_subquery import apply_changes

SEED = 30
BASE = datetime.datetime(2026, 1, 1)


def orders():
    rng = random.Random(SEED)
    t, out = 0, []
    for i in range(1, 301):
        t += rng.randrange(20, 400)
        out.append({"id": i, "cust": None if i % 13 == 0 else rng.randrange(0, 5),
                    "prod": None if i % 17 == 0 else rng.choice(["x", "y", "z"]),
                    "amount": None if i % 29 == 0 else rng.randrange(1, 100),
                    "ts": (BASE + datetime.timedelta(milliseconds=t)).strftime(
                        "%Y-%m-%d %H:%M:%S.%f")[:-3]})
    return out


def ms(r):
    return fo.ms_of_text(r["ts"])


def wtext(m):
    return (datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=m)).strftime(
        "%Y-%m-%d %H:%M:%S.%f")[:-3]


TABLE = ("CREATE TABLE orders (id BIGINT, cust INT, prod STRING, amount INT, ts TIMESTAMP(3), "
         "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
         "'path' = '{path}', 'format' = 'json');\n")

T2 = "TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND))"

# name: (sink columns, query)
QUERIES = {
    "sets": ("cust INT, prod STRING, c BIGINT, s INT",
             "SELECT cust, prod, COUNT(*) AS c, SUM(amount) AS s FROM orders "
             "GROUP BY GROUPING SETS ((cust, prod), (cust), ())"),
    "rollup": ("cust INT, prod STRING, g1 BIGINT, g2 BIGINT, g3 BIGINT, c BIGINT",
               "SELECT cust, prod, GROUPING(cust) AS g1, GROUPING(cust, prod) AS g2, "
               "GROUPING_ID(prod, cust) AS g3, COUNT(*) AS c FROM orders GROUP BY ROLLUP (cust, prod)"),
    "cube_having": ("cust INT, prod STRING, c BIGINT",
                    "SELECT cust, prod, COUNT(*) AS c FROM orders GROUP BY CUBE (cust, prod) "
                    "HAVING COUNT(*) > 12"),
    "dup_sets": ("prod STRING, gid BIGINT, c BIGINT",
                 "SELECT prod, GROUP_ID() AS gid, COUNT(*) AS c FROM orders "
                 "GROUP BY GROUPING SETS ((prod), (prod), ())"),
    "expr_rollup": ("m INT, prod STRING, mx INT",
                    "SELECT cust % 3 AS m, prod, MAX(amount) AS mx FROM orders "
                    "GROUP BY cust % 3, ROLLUP (prod)"),
    "key_is_arg": ("amount INT, s INT, g BIGINT",
                   "SELECT amount, SUM(amount) AS s, GROUPING(amount) AS g FROM orders "
                   "GROUP BY GROUPING SETS ((amount), ())"),
    "nested": ("cust INT, prod STRING, c BIGINT",
               "SELECT cust, prod, COUNT(*) AS c FROM orders "
               "GROUP BY GROUPING SETS (cust, ROLLUP (prod), (cust, prod))"),
    "empty_set": ("c BIGINT, s INT", "SELECT COUNT(*) AS c, SUM(amount) AS s FROM orders GROUP BY ()"),
    "updating_input": ("n BIGINT, c BIGINT",
                       "SELECT n, COUNT(*) AS c FROM (SELECT cust, COUNT(*) AS n FROM orders "
                       "GROUP BY cust) GROUP BY ROLLUP (n)"),
    "win_sets": ("ws TIMESTAMP(3), we TIMESTAMP(3), cust INT, s INT",
                 f"SELECT window_start AS ws, window_end AS we, cust, SUM(amount) AS s FROM {T2} "
                 "GROUP BY window_start, window_end, GROUPING SETS ((cust), ())"),
    "win_cube": ("ws TIMESTAMP(3), cust INT, prod STRING, g BIGINT, c BIGINT",
                 f"SELECT window_start AS ws, cust, prod, GROUPING(cust, prod) AS g, "
                 f"COUNT(*) AS c FROM {T2} GROUP BY window_start, window_end, CUBE (cust, prod)"),
    # two phases under mini-batch: the local aggregate after the expand vertex
    "win_two_phase": ("ws TIMESTAMP(3), we TIMESTAMP(3), cust INT, s INT",
                      "SELECT window_start AS ws, window_end AS we, cust, SUM(amount) AS s "
                      f"FROM {T2} GROUP BY window_start, window_end, ROLLUP (cust)",
                      "SET 'table.exec.mini-batch.enabled' = 'true';\n"
                      "SET 'table.exec.mini-batch.allow-latency' = '100 ms';\n"
                      "SET 'table.exec.mini-batch.size' = '50';\n"),
    # a group window beside ROLLUP (plan_groupwin.c's rewrite keeps the grouping sets)
    "gw_rollup": ("ws TIMESTAMP(3), cust INT, g BIGINT, s INT",
                  "SELECT TUMBLE_START(ts, INTERVAL '2' SECOND) AS ws, cust, GROUPING(cust) AS g, "
                  "SUM(amount) AS s FROM orders GROUP BY TUMBLE(ts, INTERVAL '2' SECOND), "
                  "ROLLUP (cust)"),
    "named_tumble": ("ws TIMESTAMP(3), c BIGINT",
                     "SELECT window_start AS ws, COUNT(*) AS c FROM TABLE(TUMBLE(DATA => TABLE "
                     "orders, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '2' SECOND, `OFFSET` => "
                     "INTERVAL '500' MILLISECOND)) GROUP BY window_start, window_end"),
    "named_hop": ("ws TIMESTAMP(3), c BIGINT",
                  "SELECT window_start AS ws, COUNT(*) AS c FROM TABLE(HOP(SIZE => INTERVAL '3' "
                  "SECOND, DATA => TABLE orders, SLIDE => INTERVAL '1' SECOND, TIMECOL => "
                  "DESCRIPTOR(ts))) GROUP BY window_start, window_end"),
    "named_cumulate": ("ws TIMESTAMP(3), we TIMESTAMP(3), s INT",
                       "SELECT window_start AS ws, window_end AS we, SUM(amount) AS s FROM "
                       "TABLE(CUMULATE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts), STEP => "
                       "INTERVAL '1' SECOND, SIZE => INTERVAL '4' SECOND)) "
                       "GROUP BY window_start, window_end"),
    "named_session": ("cust INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT",
                      "SELECT cust, window_start AS ws, window_end AS we, COUNT(*) AS c FROM "
                      "TABLE(SESSION(DATA => TABLE orders PARTITION BY cust, TIMECOL => "
                      "DESCRIPTOR(ts), GAP => INTERVAL '1' SECOND)) "
                      "GROUP BY cust, window_start, window_end"),
    # SESSION's named OFFSET: Flink 2.3 takes it and ignores it
    "named_session_offset": ("cust INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT",
                             "SELECT cust, window_start AS ws, window_end AS we, COUNT(*) AS c "
                             "FROM TABLE(SESSION(DATA => TABLE orders PARTITION BY cust, TIMECOL "
                             "=> DESCRIPTOR(ts), GAP => INTERVAL '1' SECOND, `OFFSET` => INTERVAL "
                             "'300' MILLISECOND)) GROUP BY cust, window_start, window_end"),
    # offsets: HOP's negative one (-300 ms: starts at 700 ms past each second), CUMULATE's
    # past its size (5.5 s modulo 4 s: periods start 1.5 s past each 4 s, steps 0.5 s past)
    "hop_offset": ("ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s INT",
                   "SELECT window_start AS ws, window_end AS we, COUNT(*) AS c, SUM(amount) AS s "
                   "FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL "
                   "'3' SECOND, INTERVAL '-300' MILLISECOND)) GROUP BY window_start, window_end"),
    "cumulate_offset": ("ws TIMESTAMP(3), we TIMESTAMP(3), s INT",
                        "SELECT window_start AS ws, window_end AS we, SUM(amount) AS s FROM "
                        "TABLE(CUMULATE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts), STEP => "
                        "INTERVAL '1' SECOND, SIZE => INTERVAL '4' SECOND, `OFFSET` => INTERVAL "
                        "'5500' MILLISECOND)) GROUP BY window_start, window_end"),
    "hop_offset_rows": ("id BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3)",
                        "SELECT id, window_start AS ws, window_end AS we FROM TABLE(HOP(TABLE "
                        "orders, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND, "
                        "INTERVAL '-300' MILLISECOND))"),
    "cumulate_offset_rows": ("id BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3)",
                             "SELECT id, window_start AS ws, window_end AS we FROM TABLE(CUMULATE("
                             "TABLE orders, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4' "
                             "SECOND, INTERVAL '5500' MILLISECOND))"),
    # grouping sets leaving out the window bounds: Flink aggregates the TVF's rows as a
    # plain table (an updating result; one row per window a row falls into)
    "win_table_sets": ("ws TIMESTAMP(3), we TIMESTAMP(3), cust INT, c BIGINT, s INT",
                       "SELECT window_start AS ws, window_end AS we, cust, COUNT(*) AS c, "
                       f"SUM(amount) AS s FROM {T2} GROUP BY GROUPING SETS "
                       "((window_start, window_end, cust), ())"),
    "win_table_rollup": ("ws TIMESTAMP(3), cust INT, g BIGINT, c BIGINT",
                         "SELECT window_start AS ws, cust, GROUPING(window_start, cust) AS g, "
                         "COUNT(*) AS c FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL "
                         "'1' SECOND, INTERVAL '3' SECOND)) GROUP BY ROLLUP (window_start, cust)"),
}


def hop_windows(m, slide, size, off=0):
    """The starts of the HOP windows holding time m (offset off)."""
    last = tumble(m, slide, off)
    return list(range(last - size + slide, last + 1, slide))


def cumulate_windows(m, step, size, off=0):
    """The (start, end) CUMULATE windows holding time m (offset off, modulo size)."""
    ws = tumble(m, size, off % size)
    return [(ws, we) for we in range(ws + step, ws + size + 1, step) if we > m]


def grouped(rows, key_sets, key_of, aggs, extra=lambda s, k: ()):
    """Every row once per grouping set (a list of key-name tuples, repeats
    kept): {(set index, values of the set's keys): aggregates}. Returns the
    result rows: the keys (None where the set leaves one out), extra(set
    index, key), then the aggregates."""
    names = []
    for s in key_sets:
        names += [n for n in s if n not in names]
    groups = collections.OrderedDict()
    for r in rows:
        for i, s in enumerate(key_sets):
            k = tuple(key_of(r, n) if n in s else None for n in names)
            groups.setdefault((i, k), []).append(r)
    out = collections.Counter()
    for (i, k), rs in groups.items():
        out[k + extra(i, k) + tuple(a(rs) for a in aggs)] += 1
    return out


def total(rs, f="amount"):
    vs = [r[f] for r in rs if r[f] is not None]
    return sum(vs) if vs else None


def tumble(m, size, off=0):
    return (m - off) // size * size + off


def model(name, rows):
    kv = lambda r, n: r[n]  # noqa: E731
    count = len
    if name == "sets":
        return grouped(rows, [("cust", "prod"), ("cust",), ()], kv, [count, total])
    if name == "rollup":
        sets = [("cust", "prod"), ("cust",), ()]
        g = {0: (0, 0, 0), 1: (0, 1, 2), 2: (1, 3, 3)}  # GROUPING(cust), (cust, prod), (prod, cust)
        return grouped(rows, sets, kv, [count], extra=lambda i, k: g[i])
    if name == "cube_having":
        out = grouped(rows, [("cust", "prod"), ("cust",), ("prod",), ()], kv, [count])
        return collections.Counter({k: n for k, n in out.items() if k[-1] > 12})
    if name == "dup_sets":
        return grouped(rows, [("prod",), ("prod",), ()], kv, [count],
                       extra=lambda i, k: (1 if i == 1 else 0,))
    if name == "expr_rollup":
        km = lambda r, n: (r["cust"] % 3 if r["cust"] is not None else None) if n == "m" \
            else r[n]  # noqa: E731
        return grouped(rows, [("m", "prod"), ("m",)], km,
                       [lambda rs: max((r["amount"] for r in rs if r["amount"] is not None),
                                       default=None)])
    if name == "key_is_arg":
        out = grouped(rows, [("amount",), ()], kv, [total], extra=lambda i, k: (i,))
        return collections.Counter({(a, s, g): n for (a, g, s), n in out.items()})
    if name == "nested":
        return grouped(rows, [("cust",), ("prod",), (), ("cust", "prod")], kv, [count])
    if name == "empty_set":
        return grouped(rows, [()], kv, [count, total])
    if name == "updating_input":
        n = collections.Counter(r["cust"] for r in rows)
        per = [{"n": c} for c in n.values()]
        return grouped(per, [("n",), ()], kv, [count])
    if name == "win_sets":
        kw = lambda r, n: tumble(ms(r), 2000) if n == "ws" else r[n]  # noqa: E731
        out = grouped(rows, [("ws", "cust"), ("ws",)], kw, [total])
        return collections.Counter({(wtext(k[0]), wtext(k[0] + 2000), k[1], k[2]): v
                                    for k, v in out.items()})
    if name == "win_two_phase":
        return model("win_sets", rows)
    if name == "gw_rollup":
        kw = lambda r, n: tumble(ms(r), 2000) if n == "ws" else r[n]  # noqa: E731
        out = grouped(rows, [("ws", "cust"), ("ws",)], kw, [total], extra=lambda i, k: (i,))
        return collections.Counter({(wtext(k[0]),) + k[1:]: v for k, v in out.items()})
    if name == "win_cube":
        kw = lambda r, n: tumble(ms(r), 2000) if n == "ws" else r[n]  # noqa: E731
        sets = [("ws", "cust", "prod"), ("ws", "cust"), ("ws", "prod"), ("ws",)]
        out = grouped(rows, sets, kw, [count], extra=lambda i, k: ((0, 1, 2, 3)[i],))
        return collections.Counter({(wtext(k[0]),) + k[1:]: v for k, v in out.items()})
    if name == "named_tumble":
        return collections.Counter((wtext(w), c) for w, c in collections.Counter(
            tumble(ms(r), 2000, 500) for r in rows).items())
    if name == "named_hop":
        c = collections.Counter()
        for r in rows:
            m = ms(r)
            for w in range(tumble(m, 1000) - 2000, tumble(m, 1000) + 1, 1000):
                c[w] += 1
        return collections.Counter((wtext(w), n) for w, n in c.items())
    if name == "named_cumulate":
        s = collections.defaultdict(list)
        for r in rows:
            m = ms(r)
            ws = tumble(m, 4000)
            for we in range(tumble(m, 1000) + 1000, ws + 4001, 1000):
                s[(ws, we)].append(r)
        return collections.Counter((wtext(a), wtext(b), total(rs)) for (a, b), rs in s.items())
    if name == "hop_offset":
        per = collections.defaultdict(list)
        for r in rows:
            for w in hop_windows(ms(r), 1000, 3000, -300):
                per[w].append(r)
        return collections.Counter((wtext(w), wtext(w + 3000), len(rs), total(rs))
                                   for w, rs in per.items())
    if name == "cumulate_offset":
        per = collections.defaultdict(list)
        for r in rows:
            for w in cumulate_windows(ms(r), 1000, 4000, 5500):
                per[w].append(r)
        return collections.Counter((wtext(a), wtext(b), total(rs)) for (a, b), rs in per.items())
    if name == "hop_offset_rows":
        return collections.Counter((r["id"], wtext(w), wtext(w + 3000))
                                   for r in rows for w in hop_windows(ms(r), 1000, 3000, -300))
    if name == "cumulate_offset_rows":
        return collections.Counter((r["id"], wtext(a), wtext(b)) for r in rows
                                   for a, b in cumulate_windows(ms(r), 1000, 4000, 5500))
    if name == "win_table_sets":
        kw = lambda r, n: tumble(ms(r), 2000) if n == "ws" else r[n]  # noqa: E731
        out = grouped(rows, [("ws", "cust"), ()], kw, [count, total])
        return collections.Counter({(None if k[0] is None else wtext(k[0]),
                                     None if k[0] is None else wtext(k[0] + 2000)) + k[1:]: v
                                    for k, v in out.items()})
    if name == "win_table_rollup":
        per = [dict(r, ws=w) for r in rows for w in hop_windows(ms(r), 1000, 3000)]
        out = grouped(per, [("ws", "cust"), ("ws",), ()], kv, [count],
                      extra=lambda i, k: ((0, 1, 3)[i],))
        return collections.Counter({(None if k[0] is None else wtext(k[0]),) + k[1:]: v
                                    for k, v in out.items()})
    if name in ("named_session", "named_session_offset"):
        out = collections.Counter()
        by = collections.defaultdict(list)
        for r in rows:
            by[r["cust"]].append(ms(r))
        for k, ts in by.items():
            ts.sort()
            start = prev = ts[0]
            n = 0
            for t in ts:
                if t >= prev + 1000:
                    out[(k, wtext(start), wtext(prev + 1000), n)] += 1
                    start, n = t, 0
                prev = t
                n += 1
            out[(k, wtext(start), wtext(prev + 1000), n)] += 1
        return out
    raise AssertionError(name)


def final(out_dir, cols):
    names = [c.split()[0] for c in cols.split(", ")]
    types = [c.split()[1] for c in cols.split(", ")]
    got, problems = fo.final_multiset(
        [(k, [r.get(n) for n in names]) for k, r in fo.sink_changelog(out_dir)],
        list(zip(names, types)))
    assert not problems, problems[:5]
    return got


def expected(name, rows, cols):
    want = model(name, rows)
    types = [c.split()[1] for c in cols.split(", ")]
    return collections.Counter({tuple(fo.normalise(v, t) for v, t in zip(k, types)): n
                                for k, n in want.items()})


@pytest.mark.parametrize("parallelism", [1, 2])
def test_grouping_sets_and_named_tvf_arguments(cluster, workdir, parallelism):
    cluster.add_tm(slots=8)
    rows = orders()
    path = os.path.join(workdir, "orders.jsonl")
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    head = TABLE.format(path=path) + f"SET 'parallelism.default' = '{parallelism}';\n"
    jobs = {}
    for name, (cols, sql, *extra) in QUERIES.items():
        out = os.path.join(workdir, f"out-{name}")
        r = run_sql(cluster, workdir, f"{name}.sql", head + "".join(extra) +
                    f"CREATE TABLE sink ({cols}) WITH ('connector' = 'filesystem', "
                    f"'path' = '{out}', 'format' = 'json');\nINSERT INTO sink {sql};\n")
        assert r.returncode == 0 and job_ids(r.stdout), (name, r.stdout + r.stderr)
        jobs[name] = (job_ids(r.stdout)[0], out, cols)
    for name, (jid, out, cols) in jobs.items():
        finish(cluster, jid)
        want = expected(name, rows, cols)
        assert sum(want.values()) > 0, name
        got = final(out, cols)
        assert got == want, (name, fo.describe_diff(want, got))


# ---- across a savepoint: the grouping-sets aggregate's state restored

SP_QUERIES = {
    "sp_sets": ("k INT, m INT, c BIGINT, s BIGINT",
                "SELECT k, m, COUNT(*) AS c, SUM(id) AS s FROM a "
                "GROUP BY GROUPING SETS ((k, m), (k), ())"),
    "sp_rollup": ("k INT, m INT, g BIGINT, c BIGINT",
                  "SELECT k, m, GROUPING(k, m) AS g, COUNT(*) AS c FROM a GROUP BY ROLLUP (k, m)"),
}


def sp_script(workdir, n, rate, p, extra=""):
    ddl = (f"CREATE TABLE a (id BIGINT, k AS CAST(id % 7 AS INT), m AS CAST(id % 3 AS INT)) "
           f"WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}', "
           f"'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');\n")
    ddl += "".join(f"CREATE TABLE out_{q} ({cols}) WITH ('connector' = 'filesystem', "
                   f"'path' = '{os.path.join(workdir, q)}', 'format' = 'json');\n"
                   for q, (cols, _) in SP_QUERIES.items())
    ins = "".join(f"INSERT INTO out_{q} {sql};\n" for q, (_, sql) in SP_QUERIES.items())
    return (ddl + f"SET 'parallelism.default' = '{p}';\n{extra}\n"
            "EXECUTE STATEMENT SET BEGIN\n" + ins + "END;\n")


def sp_model(n):
    rows = [{"id": i, "k": i % 7, "m": i % 3} for i in range(1, n + 1)]
    kv = lambda r, c: r[c]  # noqa: E731
    return {
        "sp_sets": grouped(rows, [("k", "m"), ("k",), ()], kv,
                           [len, lambda rs: sum(r["id"] for r in rs)]),
        "sp_rollup": grouped(rows, [("k", "m"), ("k",), ()], kv, [len],
                             extra=lambda i, k: ((0, 1, 3)[i],)),
    }


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_grouping_sets_across_a_savepoint(make_cluster, workdir, backend):
    """Stop with a savepoint while the input is half read, restore at another
    parallelism: the changelogs of both runs apply across the seam and end at
    the model's result."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=8, extra={"state.backend.type": backend})
    n = 3000
    # 200 rows/s: the stop (after n // 6 rows, ~2.5 s) comes ~12 s before the end
    r = run_sql(c, workdir, "run1.sql", sp_script(workdir, n, 200, 2))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    c.wait_state(jid, "RUNNING", timeout=30)
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), timeout=60,
             what="every task to run")
    sp = c.stop_after_progress(jid, "a", n // 6, os.path.join(workdir, "sp"))
    want = sp_model(n)
    run1, bags = {}, {}
    for q in SP_QUERIES:
        run1[q] = committed_files(os.path.join(workdir, q))
        bags[q] = apply_changes(run1[q], collections.Counter())
        assert bags[q] and bags[q] != want[q], q  # stopped mid-stream
    r = run_sql(c, workdir, "run2.sql", sp_script(
        workdir, n, 100000, 1, extra=f"SET 'execution.savepoint.path' = '{sp}';"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    for q in SP_QUERIES:
        new = [f for f in committed_files(os.path.join(workdir, q)) if f not in run1[q]]
        assert apply_changes(new, bags[q]) == want[q], q


# ---- refusals: each names its place

REFUSED = [
    ("SELECT prod, GROUPING(amount) AS g, COUNT(*) FROM orders GROUP BY ROLLUP (prod)",
     "line 4, column 23: Argument to GROUPING operator must be a grouped expression"),
    ("SELECT prod, GROUP_ID(prod) AS g FROM orders GROUP BY CUBE (prod)",
     "line 4, column 14: GROUP_ID() takes no arguments"),
    # Flink's planner's words: TUMBLE's offset within its size (HOP and CUMULATE take any)
    ("SELECT CAST(window_start AS STRING) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), "
     "INTERVAL '2' SECOND, INTERVAL '-2' SECOND)) GROUP BY window_start, window_end",
     "line 4, column 48: TUMBLE table function parameters must satisfy abs(offset) < size, but "
     "got size 2000 ms and offset -2000 ms."),
    ("SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
     "INTERVAL '3' SECOND))",
     "line 4, column 21: TUMBLE table function parameters must satisfy abs(offset) < size, but "
     "got size 2000 ms and offset 3000 ms."),
    ("SELECT prod, COUNT(*) FROM orders GROUP BY ROLLUP (prod, ROLLUP (cust))",
     "line 4, column 58: unexpected 'ROLLUP', expected an expression"),
    ("SELECT prod, COUNT(*) FROM orders GROUP BY GROUPING SET ((prod), ())",
     "line 4, column 53: unexpected 'SET'"),
    ("SELECT * FROM TABLE(TUMBLE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts), "
     "SIZE => INTERVAL '2' SECOND, SIZE => INTERVAL '4' SECOND))",
     "line 4, column 106: Duplicate argument name 'SIZE'"),
    ("SELECT * FROM TABLE(TUMBLE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts), "
     "SLIDE => INTERVAL '2' SECOND))",
     "line 4, column 77: Param 'SLIDE' not found in function 'TUMBLE' (its parameters: DATA, "
     "TIMECOL, SIZE, OFFSET)"),
    ("SELECT * FROM TABLE(TUMBLE(data => TABLE orders, timecol => DESCRIPTOR(ts), "
     "size => INTERVAL '2' SECOND))",
     "line 4, column 28: Param 'data' not found in function 'TUMBLE'; did you mean 'DATA'?"),
    ("SELECT * FROM TABLE(HOP(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts), "
     "SIZE => INTERVAL '2' SECOND))",
     "line 4, column 21: Invalid number of arguments to function 'HOP'. Was expecting 4 "
     "arguments (SLIDE is missing)"),
    ("SELECT * FROM TABLE(TUMBLE(DATA => orders, TIMECOL => DESCRIPTOR(ts), "
     "SIZE => INTERVAL '2' SECOND))",
     "line 4, column 28: the argument DATA of TUMBLE is a table: DATA => TABLE t"),
    ("SELECT * FROM TABLE(TUMBLE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts), "
     "SIZE => INTERVAL '2' SECOND, OFFSET => INTERVAL '1' SECOND))",
     "line 4, column 106: unexpected 'OFFSET'"),
    ("SELECT CAST(window_start AS STRING) FROM TABLE(SESSION(TABLE orders, DESCRIPTOR(ts), "
     "INTERVAL '2' SECOND, INTERVAL '1' SECOND)) GROUP BY window_start, window_end",
     "line 4, column 48: Invalid number of arguments to function 'SESSION'. Was expecting 3 "
     "arguments"),
]


def test_refusals_name_the_place(cluster, workdir):
    path = os.path.join(workdir, "orders.jsonl")
    open(path, "w").close()
    head = TABLE.format(path=path) + ("CREATE TABLE sink (x STRING) WITH ('connector' = "
                                      "'blackhole');\nINSERT INTO sink\n")
    bad = []
    for i, (sql, msg) in enumerate(REFUSED):
        r = run_sql(cluster, workdir, f"bad{i}.sql", head + sql + ";\n")
        out = r.stdout + r.stderr
        if msg not in out:
            bad.append(f"{sql}\n  wanted: {msg}\n  got: {out[out.find('Reason:'):].strip()}")
    assert not bad, "\n".join(bad)
