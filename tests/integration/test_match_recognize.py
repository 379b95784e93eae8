"""MATCH_RECOGNIZE end to end: `sluice sql -f` scripts on a real cluster,
every match compared with a brute-force matcher written here.

The input is a datagen sequence whose columns are fixed functions of the id
(the "seed" picks which): a partition `sym`, a `price`, and an event time
that runs out of order by up to 70 ms (less than the watermark's delay, so
no row is late unless a test makes it so), unique per row. The reference
matcher below knows nothing of the operator: it sorts each partition by
time and, from each start row in turn, searches the pattern recursively
(continuation-passing over the pattern's tree, alternatives and quantifier
iterations in the SQL standard's preference order), with the DEFINE
conditions written out in Python. It applies WITHIN, the AFTER MATCH SKIP
strategy, and what the stream's end means (a match still waiting for rows
at the end is never emitted; with WITHIN it times out). Each quantifier,
alternation and grouping, every skip strategy, PREV / LAST / FIRST /
aggregates in conditions and measures, several partitions, out-of-order
and late input, parallelism 1 and 2, and stop-with-savepoint + restore at
another parallelism on both state backends are covered.
"""
import collections
import json
import os
import re

import pytest

from conftest import wait_for
from test_checkpoints import committed_files
from test_sql import BASE, finish, job_ids, ms, rows, run_sql
from test_windows import late_dropped


# ---- the input ---------------------------------------------------------------

def source(n, seed, nsym=3, rate=100000, extra="", delay=1):
    return f"""
CREATE TABLE ticks (
    id    BIGINT,
    sym   AS CAST((id * 13 + {seed}) % {nsym} AS INT),
    price AS CAST((id * 7919 + {seed} * 31) % 17 AS INT),
    ts    AS TO_TIMESTAMP_LTZ({BASE} + 10 * (id + (id * 31) % 7 - 3) + id % 10{extra}, 3),
    WATERMARK FOR ts AS ts - INTERVAL '{delay}' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def gen(n, seed, nsym=3, late=None):
    """The rows of source(): dicts with id, sym, price, ts (ms)."""
    out = []
    for i in range(1, n + 1):
        ts = BASE + 10 * (i + (i * 31) % 7 - 3) + i % 10
        if late and i % late == 0:
            ts -= 5000
        out.append({"id": i, "sym": (i * 13 + seed) % nsym, "price": (i * 7919 + seed * 31) % 17,
                    "ts": ts})
    return out


# ---- the reference matcher ---------------------------------------------------

def V(name):
    return ("var", name)


def SEQ(*k):
    return ("seq", k)


def ALT(*k):
    return ("alt", k)


def REP(node, lo, hi, greedy=True):
    return ("rep", node, lo, hi, greedy)


def NOT(name):
    """The next row must not satisfy name's condition; it is not taken (not_next)."""
    return ("not", name)


WEND = ("wend",)  # the WITHIN window is over (a row at or past it, or the end of the input)


class Match:
    """The rows seq[s..pos] and their labels, as a condition or measure sees them."""

    def __init__(self, seq, s, labels):
        self.seq, self.s, self.labels = seq, s, labels

    @property
    def pos(self):
        return self.s + len(self.labels) - 1

    def cur(self, col):
        return self.seq[self.pos][col]

    def prev(self, col, n=1):
        i = self.pos - n
        return self.seq[i][col] if i >= self.s else None

    def rows_of(self, var):
        return [self.seq[self.s + k] for k, v in enumerate(self.labels) if var is None or v == var]

    def last(self, var, col, n=0):
        r = self.rows_of(var)
        return r[-1 - n][col] if n < len(r) else None

    def first(self, var, col, n=0):
        r = self.rows_of(var)
        return r[n][col] if n < len(r) else None

    def agg(self, fn, var, col):
        """fn over col (a name, or a function of the row) of var's rows."""
        vals = [col(r) if callable(col) else r[col] for r in self.rows_of(var)]
        vals = [v for v in vals if v is not None]
        if fn == "COUNT":
            return len(vals)
        if not vals:
            return None
        return {"SUM": sum(vals), "MIN": min(vals), "MAX": max(vals),
                "AVG": sum(vals) // len(vals)}[fn]


PENDING = "pending"


def attempt(seq, s, pattern, conds, within, cuts=None):
    """From start s: ('match', end, labels), PENDING or None, searching in
    preference order over the whole (offline) sequence. cuts (a list) gets
    the labels of the first branch WITHIN ended."""
    n = len(seq)

    def m(node, pos, labels, k):
        kind = node[0]
        if kind == "wend":
            return k(pos, labels) if pos == n or seq[pos]["ts"] - seq[s]["ts"] >= within else None
        if kind in ("var", "not"):
            if within and (pos == n or seq[pos]["ts"] - seq[s]["ts"] >= within):
                if cuts is not None and not cuts:
                    cuts.append(list(labels))
                return None
            if pos == n:
                return PENDING  # the stream ended
            lab = labels + [node[1]]
            cond = conds.get(node[1])
            if kind == "not":
                return None if cond(Match(seq, s, lab)) else k(pos, labels)
            if cond and not cond(Match(seq, s, lab)):
                return None
            return k(pos + 1, lab)
        if kind == "seq":
            kids = node[1]
            if not kids:
                return k(pos, labels)
            return m(kids[0], pos, labels, lambda p, l: m(("seq", kids[1:]), p, l, k))
        if kind == "alt":
            for alt in node[1]:
                r = m(alt, pos, labels, k)
                if r is not None:
                    return r
            return None
        _, body, lo, hi, greedy = node

        def rep(count, p, l):
            more = hi is None or count < hi
            stop = count >= lo
            order = (["more", "stop"] if greedy else ["stop", "more"])
            for o in order:
                if o == "more" and more:
                    r = m(body, p, l, lambda p2, l2: rep(count + 1, p2, l2))
                elif o == "stop" and stop:
                    r = k(p, l)
                else:
                    continue
                if r is not None:
                    return r
            return None
        return rep(0, pos, labels)

    return m(pattern, s, [], lambda p, l: ("match", p, l))


def reference(data, pattern, conds, measures, skip="past", skip_var=None, within=None):
    """{sym: [measure tuple per match, in order]}."""
    parts = collections.defaultdict(list)
    for r in data:
        parts[r["sym"]].append(r)
    out = {}
    for sym, seq in parts.items():
        seq.sort(key=lambda r: r["ts"])
        got, s = [], 0
        while s < len(seq):
            r = attempt(seq, s, pattern, conds, within)
            if r == PENDING:
                break
            if r is None:
                s += 1
                continue
            _, end, labels = r
            got.append(measures(Match(seq, s, labels)))
            if skip == "past":
                nxt = end
            elif skip == "next":
                nxt = s + 1
            else:
                idx = [s + k for k, v in enumerate(labels) if v == skip_var]
                nxt = (idx[0] if skip == "first" else idx[-1]) if idx else s + 1
                if nxt <= s:
                    nxt = s + 1
            s = nxt
        out[sym] = got
    return out


# ---- the queries ---------------------------------------------------------------

# name: (sink columns, MATCH_RECOGNIZE body, pattern, conditions, measures, skip, skip var, within)
QUERIES = {
    # greedy +, PREV, no AFTER MATCH (the next search starts at the next row, as in Flink),
    # MATCH_ROWTIME
    "drops": (
        "s_price INT, bottom INT, up INT, downs BIGINT, rt TIMESTAMP(3)",
        """MEASURES FIRST(S.price) AS s_price, LAST(D.price) AS bottom, U.price AS up,
                    COUNT(D.price) AS downs, MATCH_ROWTIME() AS rt
           ONE ROW PER MATCH
           PATTERN (S D+ U)
           DEFINE D AS D.price < PREV(price), U AS U.price > PREV(price, 1)""",
        SEQ(V("S"), REP(V("D"), 1, None), V("U")),
        {"D": lambda m: m.cur("price") < m.prev("price"),
         "U": lambda m: m.cur("price") > m.prev("price")},
        lambda m: (m.first("S", "price"), m.last("D", "price"), m.last("U", "price"),
                   m.agg("COUNT", "D", "price"), m.seq[m.pos]["ts"]),
        "next", None, None),
    # reluctant *? with an undefined (TRUE) variable, SKIP TO NEXT ROW
    "reluctant": (
        "a_id BIGINT, nb BIGINT, c_price INT, cls STRING",
        """MEASURES A.id AS a_id, COUNT(B.price) AS nb, LAST(C.price) AS c_price,
                    CLASSIFIER() AS cls
           ONE ROW PER MATCH
           AFTER MATCH SKIP TO NEXT ROW
           PATTERN (A B*? C)
           DEFINE A AS A.price > 10, C AS C.price < 5""",
        SEQ(V("A"), REP(V("B"), 0, None, False), V("C")),
        {"A": lambda m: m.cur("price") > 10, "C": lambda m: m.cur("price") < 5},
        lambda m: (m.last("A", "id"), m.agg("COUNT", "B", "price"), m.last("C", "price"), "C"),
        "next", None, None),
    # alternation in a group, {n,m}, {n}, a greedy ?, SKIP TO FIRST
    "alt": (
        "first_id BIGINT, last_id BIGINT, na BIGINT, nb BIGINT, nd BIGINT",
        """MEASURES FIRST(id) AS first_id, LAST(E.id) AS last_id, COUNT(A.id) AS na,
                    COUNT(B.id) AS nb, COUNT(D.id) AS nd
           AFTER MATCH SKIP TO FIRST C
           PATTERN ((A | B){2,3} C{1} D? E)
           DEFINE A AS A.price < 6, B AS B.price > 11, C AS C.price BETWEEN 4 AND 10,
                  D AS MOD(D.price, 2) = 0""",
        SEQ(REP(ALT(V("A"), V("B")), 2, 3), REP(V("C"), 1, 1), REP(V("D"), 0, 1), V("E")),
        {"A": lambda m: m.cur("price") < 6, "B": lambda m: m.cur("price") > 11,
         "C": lambda m: 4 <= m.cur("price") <= 10, "D": lambda m: m.cur("price") % 2 == 0},
        lambda m: (m.first(None, "id"), m.last("E", "id"), m.agg("COUNT", "A", "id"),
                   m.agg("COUNT", "B", "id"), m.agg("COUNT", "D", "id")),
        "first", "C", None),
    # {n,}, reluctant {,m}?, LAST(v.col, n) and aggregates, SKIP TO LAST
    "counts": (
        "sa INT, aa INT, mb INT, xa INT, a2 INT",
        """MEASURES SUM(A.price) AS sa, AVG(A.price) AS aa, MIN(B.price) AS mb, MAX(A.price) AS xa,
                    FIRST(A.price, 1) AS a2
           AFTER MATCH SKIP TO LAST A
           PATTERN (A{2,} B{,2}? C)
           DEFINE A AS A.price >= 7 AND (LAST(A.price, 1) IS NULL OR A.price <> LAST(A.price, 1)),
                  B AS B.price < 7, C AS C.price < 3 OR SUM(B.price) > 8""",
        SEQ(REP(V("A"), 2, None), REP(V("B"), 0, 2, False), V("C")),
        {"A": lambda m: m.cur("price") >= 7 and (m.last("A", "price", 1) is None
                                                or m.cur("price") != m.last("A", "price", 1)),
         "B": lambda m: m.cur("price") < 7,
         "C": lambda m: m.cur("price") < 3 or (m.agg("SUM", "B", "price") or 0) > 8},
        lambda m: (m.agg("SUM", "A", "price"), m.agg("AVG", "A", "price"), m.agg("MIN", "B", "price"),
                   m.agg("MAX", "A", "price"), m.first("A", "price", 1)),
        "last", "A", None),
    # WITHIN: a partial match that runs out of time is dropped
    "within": (
        "a_id BIGINT, c_id BIGINT, n BIGINT",
        """MEASURES A.id AS a_id, C.id AS c_id, COUNT(*) AS n
           AFTER MATCH SKIP PAST LAST ROW
           PATTERN (A B+? C) WITHIN INTERVAL '150' MILLISECOND
           DEFINE A AS A.price = 0, C AS C.price > 14""",
        SEQ(V("A"), REP(V("B"), 1, None, False), V("C")),
        {"A": lambda m: m.cur("price") == 0, "C": lambda m: m.cur("price") > 14},
        lambda m: (m.last("A", "id"), m.last("C", "id"), len(m.labels)),
        "past", None, 150),
    # aggregates over expressions of one variable (and of every row) in DEFINE (running)
    # and MEASURES, PREV(col, n) of the match's rows, SKIP TO v (= SKIP TO LAST v)
    "exprs": (
        "sx BIGINT, av INT, mn INT, big BIGINT, sp INT, n2 BIGINT",
        """MEASURES SUM(D.price * 2 + D.id % 3) AS sx, AVG(D.price * D.price) AS av,
                    MIN(ABS(D.price - 8)) AS mn, COUNT(CASE WHEN D.price > 8 THEN 1 END) AS big,
                    SUM(price) AS sp, COUNT(price * 0) AS n2
           AFTER MATCH SKIP TO D
           PATTERN (S D+? U)
           DEFINE D AS D.price < PREV(price) AND SUM(D.price * 2) < 40,
                  U AS U.price > LAST(D.price) AND AVG(D.price + 1) >= 3
                       AND U.price <> PREV(price, 2)""",
        SEQ(V("S"), REP(V("D"), 1, None, False), V("U")),
        {"D": lambda m: m.cur("price") < m.prev("price")
                        and m.agg("SUM", "D", lambda r: r["price"] * 2) < 40,
         "U": lambda m: m.cur("price") > m.last("D", "price")
                        and m.agg("AVG", "D", lambda r: r["price"] + 1) >= 3
                        and m.prev("price", 2) is not None and m.cur("price") != m.prev("price", 2)},
        lambda m: (m.agg("SUM", "D", lambda r: r["price"] * 2 + r["id"] % 3),
                   m.agg("AVG", "D", lambda r: r["price"] * r["price"]),
                   m.agg("MIN", "D", lambda r: abs(r["price"] - 8)),
                   len([r for r in m.rows_of("D") if r["price"] > 8]),
                   m.agg("SUM", None, "price"), len(m.labels)),
        "last", "D", None),
}


def sinks_and_inserts(names, out_dir, time_col="ts"):
    text, ins = "", []
    for name in names:
        cols, body = QUERIES[name][0], QUERIES[name][1]
        path = os.path.join(out_dir, name)
        text += (f"CREATE TABLE out_{name} (sym INT, {cols}) WITH ('connector' = 'filesystem', "
                 f"'path' = '{path}', 'format' = 'json');\n")
        ins.append(f"INSERT INTO out_{name} SELECT * FROM ticks MATCH_RECOGNIZE (\n"
                   f"  PARTITION BY sym ORDER BY {time_col}\n  {body}\n) AS m;")
    return text, ins


def expected(name, data):
    _, _, pat, conds, meas, skip, sv, within = QUERIES[name]
    return reference(data, pat, conds, meas, skip, sv, within)


def got_rows(paths, name):
    cols = ["sym"] + [c.split()[0] for c in QUERIES[name][0].split(", ")]
    got = collections.defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                assert r.pop("op", "+I") == "+I", r
                vals = tuple(ms(r[c]) if c == "rt" else r[c] for c in cols[1:])
                got[r["sym"]].append(vals)
    return dict(got)


def check(name, got, want):
    want = {k: v for k, v in want.items() if v}
    assert sum(len(v) for v in want.values()) >= 5, f"{name}: too few matches to mean anything"
    for sym in set(got) | set(want):
        key = repr
        assert sorted(got.get(sym, []), key=key) == sorted(want.get(sym, []), key=key), \
            f"{name}, sym {sym}: {len(got.get(sym, []))} matches, want {len(want.get(sym, []))}"


def two_tms(make_cluster, **kw):
    c = make_cluster(**kw)
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    return c


@pytest.mark.parametrize("p", [1, 2])
def test_patterns_against_a_brute_force_matcher(make_cluster, workdir, p):
    """Five MATCH_RECOGNIZE queries over one out-of-order stream in one job
    (a statement set), at parallelism 1 and 2: every partition's matches
    equal the reference matcher's, and nothing was late."""
    c = two_tms(make_cluster)
    n, seed = 3000, 5 + p
    out = os.path.join(workdir, "out")
    names = list(QUERIES)
    sinks, ins = sinks_and_inserts(names, out)
    r = run_sql(c, workdir, "mr.sql", source(n, seed) + sinks + f"SET 'parallelism.default' = '{p}';\n"
                "EXECUTE STATEMENT SET BEGIN\n" + "\n".join(ins) + "\nEND;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    job = finish(c, jid)
    mr = [v for v in job["vertices"] if v["name"].startswith("match")]  # chained to their sinks
    assert len(mr) == len(names) and all(v["parallelism"] == p for v in mr)
    assert late_dropped(c, jid) == 0
    data = gen(n, seed)
    for name in names:
        check(name, got_rows(committed_files(os.path.join(out, name)), name), expected(name, data))


def test_without_partition_by_one_task_matches_the_whole_stream(make_cluster, workdir):
    """No PARTITION BY: every row in one sequence, one task at parallelism 2,
    the output only the measures."""
    c = two_tms(make_cluster)
    n, seed = 2000, 4
    out = os.path.join(workdir, "global")
    cols, body = QUERIES["drops"][0], QUERIES["drops"][1]
    r = run_sql(c, workdir, "global.sql", source(n, seed) + f"""
CREATE TABLE out_global ({cols}) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO out_global SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts {body}) AS m;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    job = finish(c, job_ids(r.stdout)[0])
    assert [v["parallelism"] for v in job["vertices"] if v["name"].split(" ")[0] == "match"] == [1], \
        [(v["name"], v["parallelism"]) for v in job["vertices"]]
    got = []
    for path in committed_files(out):
        with open(path) as f:
            got += [tuple(ms(x[k]) if k == "rt" else x[k] for k in
                          ("s_price", "bottom", "up", "downs", "rt")) for x in map(json.loads, f)]
    want = expected("drops", [dict(x, sym=0) for x in gen(n, seed)])[0]
    assert len(want) >= 20
    assert sorted(got, key=repr) == sorted(want, key=repr)


def test_late_rows_are_dropped_and_counted(make_cluster, workdir):
    """Every 40th row is 5 s behind: with a watermark after each row the rows
    it has passed are late, dropped and counted, and the matches are those of
    the other rows. Processing time (ORDER BY a PROCTIME() column) matches in
    arrival order, which at parallelism 1 is the id order."""
    c = two_tms(make_cluster)
    n, seed = 2000, 3
    out = os.path.join(workdir, "out")
    sinks, ins = sinks_and_inserts(["drops"], out)
    psinks, pins = sinks_and_inserts(["reluctant"], out, time_col="pt")
    src = source(n, seed, extra=" - CASE WHEN id % 40 = 0 THEN 5000 ELSE 0 END").replace(
        "    WATERMARK", "    pt AS PROCTIME(),\n    WATERMARK")
    r = run_sql(c, workdir, "late.sql", src + sinks + psinks +
                "SET 'parallelism.default' = '1';\nSET 'pipeline.auto-watermark-interval' = '0 ms';\n"
                "EXECUTE STATEMENT SET BEGIN\n" + "\n".join(ins + pins) + "\nEND;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    finish(c, jid)
    data = gen(n, seed, late=40)
    wm, kept, late = -2**63, [], 0  # the watermark: max time so far - 1 s - 1 ms
    for row in data:
        if row["ts"] <= wm:
            late += 1
        else:
            kept.append(row)
        wm = max(wm, row["ts"] - 1001)
    assert late == n // 40
    assert late_dropped(c, jid) == late
    check("drops", got_rows(committed_files(os.path.join(out, "drops")), "drops"),
          expected("drops", kept))
    arrival = [dict(r, ts=r["id"]) for r in data]  # processing time: the order of arrival
    check("reluctant", got_rows(committed_files(os.path.join(out, "reluctant")), "reluctant"),
          expected("reluctant", arrival))


@pytest.mark.parametrize("p1,p2,backend,delay", [(2, 3, "rocksdb", 1), (1, 2, "hashmap", 1),
                                                 (3, 1, "hashmap", 60), (3, 2, "rocksdb", 60)])
def test_savepoint_and_restore_at_another_parallelism(make_cluster, workdir, p1, p2, backend, delay):
    """Stop with a savepoint while matches are partial and rows wait for the
    watermark, restore at another parallelism: both runs' matches together
    are exactly the uninterrupted reference's. Scaling down, one source
    subtask reads the rest of several old subtasks' id ranges (20 s of event
    time apart) interleaved, so the watermark's delay is a minute there to
    keep every row on time: the first run then only holds rows waiting for
    the watermark, while scaling up it has matched and holds partial ones."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n, seed = 6000, 11
    out = os.path.join(workdir, "out")
    names = ["drops", "within"]
    sinks, ins = sinks_and_inserts(names, out)
    script = ("EXECUTE STATEMENT SET BEGIN\n" + "\n".join(ins) + "\nEND;\n")
    r = run_sql(c, workdir, "run1.sql", source(n, seed, rate=500, delay=delay) + sinks +
                f"SET 'parallelism.default' = '{p1}';\n" + script)
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    sp = c.stop_after_progress(jid, "ticks", n // 6, os.path.join(workdir, "sp"))
    run1 = {name: committed_files(os.path.join(out, name)) for name in names}
    data = gen(n, seed)
    before = sum(len(v) for v in got_rows(run1["drops"], "drops").values())
    assert before < sum(len(v) for v in expected("drops", data).values())  # stopped mid-stream
    assert before > 0 or delay == 60

    r = run_sql(c, workdir, "run2.sql", source(n, seed, rate=5000, delay=delay) + sinks +
                f"SET 'parallelism.default' = '{p2}';\nSET 'execution.savepoint.path' = '{sp}';\n" + script)
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    job2 = finish(c, jid2)
    assert {v["parallelism"] for v in job2["vertices"]} == {p2}
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    assert late_dropped(c, jid2) == 0
    for name in names:
        check(name, got_rows(committed_files(os.path.join(out, name)), name), expected(name, data))


def test_what_flink_refuses_is_refused_with_its_message_and_position(cluster, workdir):
    base = source(10, 1) + "CREATE TABLE o (sym INT, x INT) WITH ('connector' = 'blackhole');\n"

    def err(body, order="ts"):
        r = run_sql(cluster, workdir, "bad.sql", base + "INSERT INTO o SELECT * FROM ticks\n"
                    f"MATCH_RECOGNIZE (PARTITION BY sym ORDER BY {order}\n{body}) AS m;\n")
        assert r.returncode != 0 and not job_ids(r.stdout), r.stdout
        return r.stdout

    out = err("MEASURES A.price AS x ALL ROWS PER MATCH PATTERN (A B) DEFINE A AS A.price > 1")
    assert "line 13, column 23: All rows per match mode is not supported yet." in out, out
    out = err("MEASURES A.price AS x PATTERN (A B) DEFINE A AS A.price > 1", order="price")
    assert ("line 12, column 44: You must specify either rowtime or proctime for order by as the "
            "first one.") in out, out
    out = err("MEASURES A.price AS x PATTERN (A B+) DEFINE B AS B.price > 1")
    assert ("line 13, column 23: Greedy quantifiers are not allowed as the last element of a "
            "Pattern yet. Finish your pattern with either a simple variable or reluctant "
            "quantifier.") in out, out
    out = err("MEASURES A.price AS x PATTERN (A B?? C) DEFINE B AS B.price > 1")
    assert "Reluctant optional variables are not supported yet." in out, out
    out = err("MEASURES A.price AS x PATTERN (A B) DEFINE C AS C.price > 1")
    assert "line 13, column 44: 'C' is defined but is no variable of the PATTERN" in out, out
    out = err("MEASURES Z.price AS x PATTERN (A B) DEFINE A AS A.price > 1")
    assert "line 13, column 10: unknown pattern variable 'Z'" in out, out
    out = err("MEASURES A.price AS x PATTERN (A B) WITHIN 5 DEFINE A AS A.price > 1")
    assert ("Only constant intervals with millisecond resolution are supported as time "
            "constraints of patterns.") in out, out
    out = err("MEASURES A.price AS x PATTERN (A | ) DEFINE A AS A.price > 1")
    assert "line 13, column 36: unexpected ')'" in out, out

    def at(body, what):  # "line 13, column N" of `what` in the body's line
        return f"line 13, column {body.index(what) + 1}: "
    body = "MEASURES 1 + PREV(A.price) AS x PATTERN (A B) DEFINE A AS A.price > 1"
    assert at(body, "PREV") + "Cannot use PREV/NEXT in MEASURE 'PREV(`A`.`price`, 1)'" in err(body)
    body = "MEASURES NEXT(price, 0) AS x PATTERN (A B) DEFINE A AS A.price > 1"
    assert at(body, "NEXT") + "Cannot use PREV/NEXT in MEASURE 'NEXT(`*`.`price`, 0)'" in err(body)
    for call in ("NEXT(price)", "PREV(B.price)", "PREV(A.price, 2)", "PREV(price + 1)"):
        body = f"MEASURES A.price AS x PATTERN (A B) DEFINE B AS B.price < {call}"
        assert at(body, call) + "Physical offsets within partition are not supported" in err(body)
    body = "MEASURES SUM(A.price + B.price) AS x PATTERN (A B) DEFINE A AS A.price > 1"
    assert (at(body, "SUM") + "Multiple pattern variables in 'SUM(`A`.`price` + `B`.`price`)'"
            in err(body))
    body = "MEASURES SUM(B.price * price) AS x PATTERN (A B) DEFINE A AS A.price > 1"
    assert at(body, "SUM") + "Multiple pattern variables in 'SUM(`B`.`price` * `*`.`price`)'" in err(body)
    body = "MEASURES COUNT(A.*) AS x PATTERN (A B) DEFINE A AS A.price > 1"  # Flink: Unknown field '*'
    assert at(body, "*") + "unexpected '*'" in err(body)
    body = "MEASURES COUNT(1) AS x PATTERN (A B) DEFINE A AS A.price > 1"
    assert at(body, "COUNT") + "No pattern variable specified in aggregate" in err(body)
    body = "MEASURES SUM(B.price - FIRST(B.price)) AS x PATTERN (A B) DEFINE A AS A.price > 1"
    assert at(body, "FIRST") + "FIRST inside an aggregate of MATCH_RECOGNIZE is not supported" in err(body)
    body = "MEASURES A.price AS x PATTERN (A B) DEFINE B AS SUM(B.price * 'x') > 1"
    assert "line 13" in err(body)
    out = err("MEASURES A.price AS x PATTERN (A B) DEFINE A AS A.price > 1", order="ts, price, xx")
    assert "line 12, column 55: ORDER BY: a column of the input is expected after the time " \
           "attribute" in out, out


def test_order_by_further_columns_sorts_the_rows_of_one_time(make_cluster, workdir):
    """ORDER BY ts, price DESC, id DESC: about three rows of a symbol share each
    time, and the pattern sees them sorted by price (descending), then id
    (descending: against their order of arrival); at parallelism 1 and 2."""
    c = two_tms(make_cluster)
    n, seed = 3000, 2
    src = source(n, seed).replace(f"10 * (id + (id * 31) % 7 - 3) + id % 10", "100 * (id / 8)")
    assert "100 * (id / 8)" in src
    data = [dict(r, ts=BASE + 100 * (r["id"] // 8)) for r in gen(n, seed)]
    cols, body = QUERIES["drops"][0], QUERIES["drops"][1]
    outs, ins = {}, []
    for p in (1, 2):
        outs[p] = os.path.join(workdir, f"out{p}")
    text = src
    for p in (1, 2):
        text += (f"CREATE TABLE out_{p} (sym INT, {cols}) WITH ('connector' = 'filesystem', "
                 f"'path' = '{outs[p]}', 'format' = 'json');\n")
    for p in (1, 2):
        r = run_sql(c, workdir, f"order{p}.sql", text + f"SET 'parallelism.default' = '{p}';\n"
                    f"INSERT INTO out_{p} SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY sym "
                    f"ORDER BY ts, price DESC, id DESC {body}) AS m;\n")
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        finish(c, jid)
        assert late_dropped(c, jid) == 0
    # the reference sorts each partition by (ts, -price, -id); the matcher sorts by ts only
    # (a stable sort), so the rows are handed over in that order
    data.sort(key=lambda r: (r["ts"], -r["price"], -r["id"]))
    want = expected("drops", data)
    unsorted = expected("drops", sorted(data, key=lambda r: r["id"]))
    assert want != unsorted  # the further columns change the matches
    for p in (1, 2):
        check("drops", got_rows(committed_files(outs[p]), "drops"), want)


def test_skip_to_the_first_row_of_the_match_fails_the_job(make_cluster, workdir):
    """AFTER MATCH SKIP TO FIRST v where v is the match's first row would find
    the same match again: the job fails saying so (as the SQL standard and
    Flink have it); a SKIP TO variable the match does not have fails too."""
    c = two_tms(make_cluster)
    for name, skip, pattern, want in (
            ("first", "TO FIRST A", "(A C? B)", "Could not skip to first element of a match"),
            ("miss", "TO LAST C", "(A C? B)", "Could not skip to C. No such element in the found match")):
        r = run_sql(c, workdir, f"{name}.sql", source(200, 1) +
                    "CREATE TABLE o (sym INT, x BIGINT) WITH ('connector' = 'blackhole');\n"
                    "INSERT INTO o SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts "
                    f"MEASURES A.id AS x AFTER MATCH SKIP {skip} PATTERN {pattern} "
                    "DEFINE B AS B.price < A.price, C AS C.price > 100) AS m;\n")
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
        assert job["state"] == "FAILED"
        exc = json.dumps(c.get(f"/jobs/{jid}/exceptions"))
        assert want in exc, exc[:2000]


def test_stock_ticker_example_prints_flinks_result(cluster, workdir):
    """examples/stock-ticker.sql, Flink's documented query over Flink's
    documented ticker, prints Flink's documented row and nothing else (the
    last rise, 25 then 19, is still open when the input ends)."""
    from conftest import ROOT
    cluster.add_tm(slots=1)
    with open(os.path.join(ROOT, "examples", "stock-ticker.sql")) as f:
        text = f.read()
    assert "'path' = 'examples/ticker.csv'" in text
    text = text.replace("'path' = 'examples/ticker.csv'",
                        f"'path' = '{os.path.join(ROOT, 'examples', 'ticker.csv')}'")
    r = run_sql(cluster, workdir, "ticker.sql", text)
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    lines = [ln for ln in cluster.tms[0].out_text().splitlines() if ln.startswith(("+I", "-", "+U"))]
    assert lines == ["+I[ACME, 2011-04-01T10:00:04, 2011-04-01T10:00:07, 2011-04-01T10:00:08]"], lines


# ---- the C pattern API ---------------------------------------------------------

def test_c_pattern_job_with_a_timeout_side_output(cluster, workdir):
    """examples/datastream/cep.c (sl_cep_begin / followed_by_any / one_or_more /
    next / within, C conditions reading earlier rows of the match, a select
    function and a timeout function; a second pattern with not_next,
    not_followed_by and followed_by) against the reference matcher over the
    same readings: every alert, every timed-out partial match and every
    cooling match."""
    from conftest import BUILD
    cluster.add_tm(slots=2)
    out = os.path.join(workdir, "out")
    n = 3000
    r = cluster.cli("run", os.path.join(BUILD, "examples", "cep.so"), out, str(n), check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    job = cluster.wait_state(jid, {"FINISHED", "FAILED"}, timeout=120)
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    data = [{"id": i, "sym": i % 3, "ts": BASE + i * 100, "temp": 30 + (i * 7919) % 61}
            for i in range(1, n + 1)]

    def rise(m):
        before = [m.seq[m.s + k] for k, v in enumerate(m.labels[:-1]) if v == "rise"]
        return m.cur("temp") > before[-1]["temp"] if before else m.cur("temp") >= 60
    pattern = SEQ(V("high"), REP(V("__skip1"), 0, None, False), REP(V("rise"), 1, None, False),
                  V("drop"))
    conds = {"high": lambda m: m.cur("temp") >= 80, "rise": rise,
             "drop": lambda m: m.cur("temp") < 50}  # followed_by_any: any row may be skipped
    # not_next(hot2), not_followed_by(spike) then followed_by(cool): the rows skipped before
    # cool fit neither spike nor cool; not_followed_by(hot3) at the end: no hot row after warm
    # until the window (3 s from hot) is over
    cooling = SEQ(V("hot"), NOT("hot2"), REP(V("__skip2"), 0, None, False), V("cool"), V("warm"),
                  REP(V("__skip6"), 0, None), WEND)
    cconds = {"hot": lambda m: m.cur("temp") >= 80, "hot2": lambda m: m.cur("temp") >= 80,
              "__skip2": lambda m: 40 <= m.cur("temp") < 89, "cool": lambda m: m.cur("temp") < 40,
              "warm": lambda m: m.cur("temp") >= 70, "__skip6": lambda m: m.cur("temp") < 80}
    # the same without the negations and with any row skipped: it must find other matches
    loose = SEQ(V("hot"), REP(V("__skip2"), 0, None, False), V("cool"), V("warm"))
    lconds = dict(cconds, __skip2=lambda m: True)
    cools, loose_cools = collections.Counter(), collections.Counter()
    alerts, timeouts = collections.Counter(), collections.Counter()
    parts = collections.defaultdict(list)
    for row in data:
        parts[row["sym"]].append(row)
    zones = collections.defaultdict(list)  # the cooling pattern's key: (id * id) % 7
    for row in data:
        zones[row["id"] * row["id"] % 7].append(row)
    for sym, seq in parts.items():
        s = 0
        while s < len(seq):
            cuts = []
            r = attempt(seq, s, pattern, conds, 1200, cuts)
            if r is None:
                if cuts and cuts[0]:
                    timeouts[(sym, seq[s]["id"], sum(1 for v in cuts[0] if not v.startswith("__")),
                              seq[s]["ts"] + 1200)] += 1
                s += 1
                continue
            _, end, labels = r
            mm = Match(seq, s, labels)
            alerts[(sym, seq[s]["id"], mm.agg("COUNT", "rise", "id"), mm.last("drop", "id"),
                    mm.first("rise", "temp"))] += 1
            s = end
    for zone, seq in zones.items():
        for pat, cc, into in ((cooling, cconds, cools), (loose, lconds, loose_cools)):
            s = 0
            while s < len(seq):
                r = attempt(seq, s, pat, cc, 3000)
                if r is None:
                    s += 1
                    continue
                _, end, labels = r
                mm = Match(seq, s, labels)
                into[(zone, seq[s]["id"], mm.last("cool", "id"), mm.last("warm", "id"),
                      sum(1 for v in labels if not v.startswith("__")))] += 1
                s = end
    got_a = collections.Counter(tuple(x[c] for c in ("sensor", "high_id", "rises", "drop_id", "first_rise"))
                                for x in rows(os.path.join(out, "alerts")))
    got_t = collections.Counter(tuple(x[c] for c in ("sensor", "high_id", "rows", "timeout_ts"))
                                for x in rows(os.path.join(out, "timeouts")))
    assert sum(alerts.values()) >= 20 and sum(timeouts.values()) >= 20, (len(alerts), len(timeouts))
    got_c = collections.Counter(tuple(x[c] for c in ("zone", "hot_id", "cool_id", "warm_id", "rows"))
                                for x in rows(os.path.join(out, "cooling")))
    assert got_a == alerts
    assert got_t == timeouts
    assert sum(cools.values()) >= 20, len(cools)
    assert cools != loose_cools  # not_next, not_followed_by and followed_by's strictness matter
    assert got_c == cools
