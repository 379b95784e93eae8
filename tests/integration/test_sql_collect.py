"""COLLECT in GROUP BY, from SQL text through a running job at parallelism
2: Flink's MULTISET<t> NOT NULL of a group's non-NULL values, over an
insert-only input and over an updating one (a GROUP BY of a GROUP BY, whose
-U/-D rows take values out again), of an INT, a DECIMAL and a nested ROW,
with FILTER; and through stop-with-savepoint and a restore at another
parallelism on RocksDB. Each changelog is applied with every -U/-D checked
against the row it retracts; the expected multisets are counted here in
Python from the ids alone."""
import collections
import decimal
import json
import os

from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql
from test_sql_types_keys import apply

D = decimal.Decimal


def ddl(n, rate):
    return f"""
CREATE TABLE ev (
    id  BIGINT,
    k   AS CAST(id % 3 AS INT),
    v   AS CAST(id % 4 AS INT),
    amt AS CAST(id % 5 AS DECIMAL(6, 2)) / 4,
    r   ROW<a INT>
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}', 'seed' = '5',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}',
        'fields.r.a.min' = '0', 'fields.r.a.max' = '1', 'fields.r.null-rate' = '0.25');
"""


def sinks(out):
    return f"""
CREATE TABLE plain (k INT, vs MULTISET<INT>, amts MULTISET<DECIMAL(17, 13)>, rs MULTISET<ROW<a INT>>,
                    odd MULTISET<INT>, n BIGINT, dv MULTISET<INT>)
  WITH ('connector' = 'filesystem', 'path' = '{out}/plain', 'format' = 'json');
CREATE TABLE rows_r (id BIGINT, r ROW<a INT>)
  WITH ('connector' = 'filesystem', 'path' = '{out}/rows_r', 'format' = 'json');
CREATE TABLE upd (c BIGINT, ks MULTISET<INT>, dks MULTISET<INT>)
  WITH ('connector' = 'filesystem', 'path' = '{out}/upd', 'format' = 'json');
"""


QUERY = """
EXECUTE STATEMENT SET BEGIN
INSERT INTO plain SELECT k, COLLECT(v), COLLECT(amt), COLLECT(r),
    COLLECT(v) FILTER (WHERE id % 2 = 1), COUNT(*), COLLECT(DISTINCT v) FROM ev GROUP BY k;
INSERT INTO upd SELECT c, COLLECT(k), COLLECT(DISTINCT k % 2) FROM (SELECT k, v, COUNT(*) AS c FROM ev GROUP BY k, v)
    GROUP BY c;
INSERT INTO rows_r SELECT id, r FROM ev;
END;
"""


def tables(out, first=None):
    def files(name):
        now = committed_files(os.path.join(out, name))
        if first is None:
            return now
        return [f for f in now if f in first] + [f for f in now if f not in first]
    plain = apply(files("plain"), lambda r: r["k"])
    upd = apply(files("upd"), lambda r: r["c"])
    rs = {r["id"]: r["r"] for r in apply(files("rows_r"), lambda r: r["id"]).values()}
    return plain, upd, rs


def model(n, rs):
    """rs: {id: the random ROW} as the job wrote it. A MULTISET's JSON object
    is keyed by each element's text as Flink prints it (+I[0], 0E-13)."""
    plain = {}
    for k in range(3):
        ids = [i for i in range(1, n + 1) if i % 3 == k]
        amts = collections.Counter(str((D(i % 5) / 4).quantize(D("0.0000000000001"))) for i in ids)
        plain[k] = {
            "k": k,
            "vs": dict(collections.Counter(str(i % 4) for i in ids)),
            "rs": dict(collections.Counter(f"+I[{rs[i]['a']}]" for i in ids if rs[i] is not None)),
            "amts": dict(amts),
            "odd": dict(collections.Counter(str(i % 4) for i in ids if i % 2 == 1)),
            "n": len(ids),
            "dv": {str(v): 1 for v in set(i % 4 for i in ids)}}
    cnt = collections.Counter((i % 3, i % 4) for i in range(1, n + 1))
    upd = collections.defaultdict(collections.Counter)
    for (k, v), c in cnt.items():
        upd[c][str(k)] += 1
    return plain, {c: {"c": c, "ks": dict(ks), "dks": {str(x): 1 for x in set(int(k) % 2 for k in ks)}}
                   for c, ks in upd.items()}


def check(plain, upd, rs, n):
    assert sorted(rs) == list(range(1, n + 1))
    want_plain, want_upd = model(n, rs)
    assert 0 < sum(sum(r["rs"].values()) for r in want_plain.values()) < n  # some NULL ROWs
    assert plain == want_plain
    assert upd == want_upd


def test_collect_insert_only_and_updating_input(cluster, workdir):
    cluster.add_tm(slots=2)
    n = 2000
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "collect.sql", ddl(n, 100000) + sinks(out) +
                "SET 'parallelism.default' = '2';\n" + QUERY)
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    check(*tables(out), n)


def test_collect_across_savepoint_and_rescale(make_cluster, workdir):
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=3, extra={"state.backend.type": "rocksdb"})
    n = 4000
    out = os.path.join(workdir, "out")
    r = run_sql(c, workdir, "run1.sql", ddl(n, 1000) + sinks(out) +
                "SET 'parallelism.default' = '2';\n" + QUERY)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = c.stop_after_progress(job_ids(r.stdout)[0], "ev", n // 4, os.path.join(workdir, "sp"))
    run1 = set(f for name in ("plain", "upd", "rows_r")
               for f in committed_files(os.path.join(out, name)))
    r = run_sql(c, workdir, "run2.sql", ddl(n, 4000) + sinks(out) +
                f"SET 'parallelism.default' = '3';\nSET 'execution.savepoint.path' = '{sp}';\n" +
                QUERY)
    assert r.returncode == 0, r.stdout + r.stderr
    finish(c, job_ids(r.stdout)[0])
    check(*tables(out, run1), n)


def test_json_arrayagg_in_order_with_retraction(cluster, workdir):
    """JSON_ARRAYAGG (ABSENT ON NULL, Flink's default) at parallelism 1,
    where the order rows arrive in is the ids' order: over an insert-only
    input (strings with a quote, every fifth NULL and left out) and over an
    updating one, where a -U takes out the earliest equal value (Flink's
    list remove) and a +U appends; the model replays the inner GROUP BY's
    changelog row by row."""
    cluster.add_tm(slots=1)
    n = 60
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "jag.sql", f"""
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id % 3 AS INT),
    s  AS CASE WHEN id % 5 = 0 THEN CAST(NULL AS STRING) ELSE CONCAT('n"', CAST(id AS STRING)) END
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE plain (k INT, ss STRING, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}/plain', 'format' = 'json');
CREATE TABLE upd (c BIGINT, ks STRING)
  WITH ('connector' = 'filesystem', 'path' = '{out}/upd', 'format' = 'json');
SET 'parallelism.default' = '1';
EXECUTE STATEMENT SET BEGIN
INSERT INTO plain SELECT k, JSON_ARRAYAGG(s), COUNT(*) FROM ev GROUP BY k;
INSERT INTO upd SELECT c, JSON_ARRAYAGG(k) FROM (SELECT k, COUNT(*) AS c FROM ev GROUP BY k)
    GROUP BY c;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    plain = apply(committed_files(os.path.join(out, "plain")), lambda r: r["k"])
    upd = apply(committed_files(os.path.join(out, "upd")), lambda r: r["c"])
    want = {k: [f'n"{i}' for i in range(1, n + 1) if i % 3 == k and i % 5] for k in range(3)}
    assert {k: json.loads(r["ss"]) for k, r in plain.items()} == want
    assert {k: r["n"] for k, r in plain.items()} == {k: n // 3 for k in range(3)}
    # the model: the inner GROUP BY's -U/+U per id, then the outer lists
    cnt, lists = {}, {}
    for i in range(1, n + 1):
        k = i % 3
        if k in cnt:
            lists[cnt[k]].remove(k)  # the earliest equal one
            if not lists[cnt[k]]:
                del lists[cnt[k]]
        cnt[k] = cnt.get(k, 0) + 1
        lists.setdefault(cnt[k], []).append(k)
    assert {c: json.loads(r["ks"]) for c, r in upd.items()} == lists


def test_json_aggs_on_null_clauses_and_objectagg_with_retraction(cluster, workdir):
    """JSON_ARRAYAGG with explicit NULL ON NULL / ABSENT ON NULL, and
    JSON_OBJECTAGG ([KEY] k VALUE v, Flink's default NULL ON NULL, and ABSENT
    ON NULL) at parallelism 1 over an insert-only input, and JSON_OBJECTAGG
    over an updating one (a GROUP BY of a GROUP BY: a -U takes the key's
    member out, a +U puts it into another group). The models are built here
    from the ids; an object's members come in key order."""
    cluster.add_tm(slots=1)
    n = 60
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "jobj.sql", f"""
CREATE TABLE ev (
    id BIGINT,
    k  AS CAST(id % 3 AS INT),
    s  AS CASE WHEN id % 5 = 0 THEN CAST(NULL AS STRING) ELSE CONCAT('n"', CAST(id AS STRING)) END
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE plain (k INT, an STRING, aa STRING, o STRING, oa STRING, anf STRING, obf STRING)
  WITH ('connector' = 'filesystem', 'path' = '{out}/plain', 'format' = 'json');
CREATE TABLE upd (c BIGINT, o STRING)
  WITH ('connector' = 'filesystem', 'path' = '{out}/upd', 'format' = 'json');
SET 'parallelism.default' = '1';
EXECUTE STATEMENT SET BEGIN
INSERT INTO plain SELECT k, JSON_ARRAYAGG(s NULL ON NULL), JSON_ARRAYAGG(s ABSENT ON NULL),
    JSON_OBJECTAGG(KEY CONCAT('i', CAST(id AS STRING)) VALUE s),
    JSON_OBJECTAGG(CONCAT('i', CAST(id AS STRING)) VALUE s ABSENT ON NULL),
    JSON_ARRAYAGG(s NULL ON NULL) FILTER (WHERE id % 2 = 1),
    JSON_OBJECTAGG(CAST(id AS STRING) VALUE id) FILTER (WHERE id % 2 = 0) FROM ev GROUP BY k;
INSERT INTO upd SELECT c, JSON_OBJECTAGG(KEY CAST(k AS STRING) VALUE k * 10)
    FROM (SELECT k, COUNT(*) AS c FROM ev GROUP BY k) GROUP BY c;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    plain = apply(committed_files(os.path.join(out, "plain")), lambda r: r["k"])
    upd = apply(committed_files(os.path.join(out, "upd")), lambda r: r["c"])
    assert sorted(plain) == [0, 1, 2]
    for k, row in plain.items():
        ids = [i for i in range(1, n + 1) if i % 3 == k]
        val = {i: (f'n"{i}' if i % 5 else None) for i in ids}
        assert json.loads(row["an"]) == [val[i] for i in ids]
        assert json.loads(row["aa"]) == [val[i] for i in ids if val[i] is not None]
        members = sorted((f"i{i}", val[i]) for i in ids)  # key order (bytes)
        assert list(json.loads(row["o"]).items()) == members
        assert list(json.loads(row["oa"]).items()) == [m for m in members if m[1] is not None]
        assert json.loads(row["anf"]) == [val[i] for i in ids if i % 2]
        assert list(json.loads(row["obf"]).items()) == sorted((str(i), i) for i in ids if i % 2 == 0)
    # the model: the inner GROUP BY's counts at the end; a key's member sits in its count's group
    final = collections.Counter(i % 3 for i in range(1, n + 1))
    want = collections.defaultdict(dict)
    for k, c in sorted(final.items(), key=lambda kc: str(kc[0])):
        want[c][str(k)] = k * 10
    assert {c: list(json.loads(r["o"]).items()) for c, r in upd.items()} == \
        {c: list(m.items()) for c, m in want.items()}


def test_json_objectagg_duplicate_or_null_key_fails_the_job(cluster, workdir):
    """As Flink: a key already present in the group, or a NULL key, fails
    the job with a message naming it."""
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    for name, key, want in (("dup", "CAST(id % 2 AS STRING)", "the key '1' is already present"),
                            ("nul", "CAST(NULL AS STRING)", "the key is NULL")):
        r = run_sql(cluster, workdir, f"{name}.sql", f"""
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '10');
CREATE TABLE o (o STRING) WITH ('connector' = 'filesystem', 'path' = '{out}/{name}', 'format' = 'json');
INSERT INTO o SELECT JSON_OBJECTAGG({key} VALUE id) FROM ev;
""")
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        assert cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)["state"] == "FAILED"
        exc = cluster.get(f"/jobs/{jid}/exceptions")
        assert want in str(exc.get("root-exception", exc)), exc


def test_json_agg_clauses_refused_where_they_do_not_belong(cluster, workdir):
    """A non-STRING key, an ON NULL clause on another function and KEY ...
    VALUE on another function are refused when the script is planned,
    naming the place."""
    cluster.add_tm(slots=1)
    ddl = """
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE o (o STRING) WITH ('connector' = 'blackhole');
"""
    for name, sel, want in (
            ("key", "JSON_OBJECTAGG(id VALUE id)", "the key of JSON_OBJECTAGG must be a STRING, not BIGINT"),
            ("sum", "CAST(SUM(id NULL ON NULL) AS STRING)",
             "expected JSON_ARRAYAGG or JSON_OBJECTAGG before an ON NULL clause, found SUM"),
            ("kv", "CAST(MAX(KEY 'a' VALUE id) AS STRING)",
             "expected JSON_OBJECTAGG before (key VALUE value), found MAX")):
        r = run_sql(cluster, workdir, f"{name}.sql", ddl + f"INSERT INTO o SELECT {sel} FROM ev;\n")
        assert r.returncode != 0 and want in r.stdout + r.stderr, r.stdout + r.stderr
