"""Flink's jdbc connector against a real PostgreSQL server (tests/pgserver.py,
one per module): `sluice sql -f` scripts on a real cluster write into it and
look rows up in it. Every expectation is computed here from the generated
ids (a Python model of the query) and compared with what psql reads back,
independently of Sluice's libpq code."""
import collections
import datetime
import os
import signal

from conftest import wait_for, failover_conf
from test_sql import run_sql, job_ids, finish
from test_checkpoints import wait_completed

BASE = 1767225600000  # 2026-01-01T00:00:00Z


def gen(n, rate=100000, name="events"):
    return f"""
CREATE TABLE {name} (id BIGINT) WITH (
    'connector' = 'datagen', 'rows-per-second' = '{rate}',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def jdbc(pg, table, extra=""):
    return (f"'connector' = 'jdbc', 'url' = '{pg.url}', 'table-name' = '{table}', "
            f"'username' = 'postgres', 'password' = 'secret'{extra}")


def ok(r):
    assert r.returncode == 0 and "[ERROR]" not in r.stdout, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout
    return jids[0]


def test_append_sink_writes_every_type(cluster, workdir, pg):
    pg.sql("CREATE TABLE t_append (id bigint, small integer, half double precision, "
           "name varchar(20), even boolean, ts timestamp(3), tz timestamptz, raw bytea)")
    cluster.add_tm(slots=2)
    n = 1000
    r = run_sql(cluster, workdir, "append.sql", gen(n) + f"""
CREATE TABLE t_append (id BIGINT, small INT, half DOUBLE, name STRING, even BOOLEAN,
                       ts TIMESTAMP(3), tz TIMESTAMP(3), `raw` BYTES)
  WITH ({jdbc(pg, 't_append', ", 'sink.buffer-flush.max-rows' = '37'")});
SET 'parallelism.default' = '2';
INSERT INTO t_append
SELECT id, CAST(id % 5 AS INT), id * 0.5,
       CASE WHEN id % 10 = 0 THEN NULL ELSE CONCAT('n', CAST(id AS STRING)) END,
       id % 2 = 0, TO_TIMESTAMP_LTZ({BASE} + id * 1001, 3), TO_TIMESTAMP_LTZ({BASE} - id, 3),
       CAST(CONCAT('b', CAST(id AS STRING)) AS BYTES)
FROM events;
""")
    finish(cluster, ok(r))
    got = pg.sql("SELECT id, small, half, name, even, to_char(ts, 'YYYY-MM-DD HH24:MI:SS.MS'), "
                 "(extract(epoch from tz) * 1000)::bigint, encode(raw, 'escape') "
                 "FROM t_append ORDER BY id")
    want = []
    for i in range(1, n + 1):
        ts = datetime.datetime.fromtimestamp((BASE + i * 1001) / 1000, datetime.timezone.utc)
        want.append([str(i), str(i % 5), repr(i * 0.5) if (i * 0.5) % 1 else str(int(i * 0.5)),
                     None if i % 10 == 0 else f"n{i}", "t" if i % 2 == 0 else "f",
                     ts.strftime("%Y-%m-%d %H:%M:%S.") + f"{(BASE + i * 1001) % 1000:03d}",
                     str(BASE - i), f"b{i}"])
    assert got == want


def test_upsert_sink_follows_a_changelog_with_deletes(cluster, workdir, pg):
    """Two GROUP BYs: per key k = id % 7 its count c; per count the number of
    keys that have it. As counts grow, a count loses its keys and its row is
    deleted (-D), so the table sees inserts, updates and deletes; in the end
    it holds exactly the model's rows."""
    pg.sql("CREATE TABLE t_hist (c bigint PRIMARY KEY, keys bigint NOT NULL, total bigint)")
    pg.sql("INSERT INTO t_hist VALUES (1000000, 1, 1)")  # a row the job never touches stays
    cluster.add_tm(slots=2)
    n = 2000
    r = run_sql(cluster, workdir, "upsert.sql", gen(n) + f"""
CREATE TABLE t_hist (c BIGINT, keys BIGINT, total BIGINT, PRIMARY KEY (c) NOT ENFORCED)
  WITH ({jdbc(pg, 't_hist', ", 'sink.buffer-flush.max-rows' = '50'")});
SET 'parallelism.default' = '2';
INSERT INTO t_hist
SELECT c, COUNT(*) AS keys, SUM(s) AS total
FROM (SELECT id % 7 AS k, COUNT(*) AS c, SUM(id) AS s FROM events WHERE id % 11 <> 0
      GROUP BY id % 7)
GROUP BY c;
""")
    finish(cluster, ok(r))
    per = collections.defaultdict(lambda: [0, 0])
    for i in range(1, n + 1):
        if i % 11:
            per[i % 7][0] += 1
            per[i % 7][1] += i
    hist = collections.defaultdict(lambda: [0, 0])
    for c, s in per.values():
        hist[c][0] += 1
        hist[c][1] += s
    want = sorted([[str(c), str(k), str(s)] for c, (k, s) in hist.items()] +
                  [["1000000", "1", "1"]], key=lambda x: int(x[0]))
    got = pg.sql("SELECT c, keys, total FROM t_hist ORDER BY c")
    assert got == want
    # the sink did delete: counts 1 .. the smallest final count went through the table
    assert len(hist) < 3 and min(hist) > 200


def test_exactly_once_through_a_taskmanager_kill(make_cluster, workdir, pg):
    """datagen 1..n at a steady rate into a table without a key, exactly-once
    (a transaction prepared at each barrier, committed when its checkpoint
    completes), checkpoints every 300 ms; a TaskManager is SIGKILLed once
    rows are committed and replaced. Every id is in the table exactly once,
    and no prepared transaction is left."""
    pg.sql("CREATE TABLE t_eos (id bigint NOT NULL)")
    c = make_cluster(jm_conf=failover_conf(interval="300 ms"))
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    n = 6000
    r = run_sql(c, workdir, "eos.sql", gen(n, rate=1500) + f"""
CREATE TABLE t_eos (id BIGINT)
  WITH ({jdbc(pg, 't_eos', ", 'sink.delivery-guarantee' = 'exactly-once', "
                           "'sink.transactional-id-prefix' = 'eos-test'")});
SET 'parallelism.default' = '2';
INSERT INTO t_eos SELECT id FROM events;
""")
    jid = ok(r)
    c.wait_state(jid, "RUNNING", timeout=30)
    wait_completed(c, jid, 3, timeout=60)
    wait_for(lambda: int(pg.sql("SELECT count(*) FROM t_eos")[0][0]) > 500, timeout=60,
             what="committed rows")
    # something is prepared or in flight at the kill, most of the time
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2)
    st = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=120)
    assert st["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] >= 1
    dup = pg.sql("SELECT id, count(*) FROM t_eos GROUP BY id HAVING count(*) > 1 LIMIT 10")
    assert dup == []
    got = [int(x[0]) for x in pg.sql("SELECT id FROM t_eos ORDER BY id")]
    assert got == list(range(1, n + 1))
    assert pg.sql("SELECT count(*) FROM pg_prepared_xacts") == [["0"]]


def lookup_model(n, dim):
    """Orders 1..n with customer id % 13 and amount id * 3, joined with the
    dimension rows (a dict key -> (name, rate)); keys 10..12 have none."""
    inner, left = [], []
    for i in range(1, n + 1):
        k = i % 13
        if k in dim:
            name, rate = dim[k]
            row = [str(i), str(k), name, repr(rate), repr(i * 3 * rate)]
            inner.append(row)
            left.append(row)
        else:
            left.append([str(i), str(k), None, None, None])
    return inner, left


def test_lookup_join_with_and_without_a_cache(cluster, workdir, pg):
    """FOR SYSTEM_TIME AS OF o.proc_time against a jdbc table: an inner join
    with Flink's PARTIAL cache (smaller than the keys, so entries are
    evicted and looked up again), and a LEFT join without a cache, both
    written back into PostgreSQL and compared with the model."""
    pg.sql("CREATE TABLE customers (id integer PRIMARY KEY, name varchar(20), rate real)")
    dim = {k: (f"c{k}" if k != 4 else None, k * 0.25) for k in range(10)}
    pg.sql("INSERT INTO customers VALUES " + ", ".join(
        f"({k}, {'NULL' if v[0] is None else repr(v[0])}, {v[1]})" for k, v in dim.items()))
    pg.sql("CREATE TABLE enriched (id bigint, cust integer, name text, rate double precision, "
           "cost double precision)")
    pg.sql("CREATE TABLE enriched_left (LIKE enriched)")
    cluster.add_tm(slots=2)
    n = 600
    dims = f"""
CREATE TABLE orders (id BIGINT, proc_time AS PROCTIME()) WITH (
    'connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE customers (id INT, name STRING, rate DOUBLE)
  WITH ({jdbc(pg, 'customers', ", 'lookup.cache' = 'PARTIAL', "
                                "'lookup.partial-cache.max-rows' = '5', "
                                "'lookup.partial-cache.expire-after-write' = '1 min'")});
CREATE TABLE customers_nc (id INT, name STRING, rate DOUBLE)
  WITH ({jdbc(pg, 'customers')});
CREATE TABLE enriched (id BIGINT, cust INT, name STRING, rate DOUBLE, cost DOUBLE)
  WITH ({jdbc(pg, 'enriched')});
CREATE TABLE enriched_left (id BIGINT, cust INT, name STRING, rate DOUBLE, cost DOUBLE)
  WITH ({jdbc(pg, 'enriched_left')});
SET 'parallelism.default' = '2';
"""
    r = run_sql(cluster, workdir, "lookup.sql", dims + """
INSERT INTO enriched
SELECT o.id, c.id, c.name, c.rate, o.id * 3 * c.rate
FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c
  ON CAST(o.id % 13 AS INT) = c.id;
""")
    finish(cluster, ok(r))
    r = run_sql(cluster, workdir, "lookup_left.sql", dims + """
INSERT INTO enriched_left
SELECT o.id, CAST(o.id % 13 AS INT), c.name, c.rate, o.id * 3 * c.rate
FROM orders AS o LEFT JOIN customers_nc FOR SYSTEM_TIME AS OF o.proc_time AS c
  ON CAST(o.id % 13 AS INT) = c.id;
""")
    finish(cluster, ok(r))
    inner, left = lookup_model(n, dim)
    q = "SELECT id, cust, name, rate::text, cost::text FROM {} ORDER BY id"
    fix = lambda rows: [[a, b, c, None if d is None else repr(float(d)),
                         None if e is None else repr(float(e))] for a, b, c, d, e in rows]
    assert fix(pg.sql(q.format("enriched"))) == inner
    assert fix(pg.sql(q.format("enriched_left"))) == left


def test_bad_inputs_are_refused_with_clear_errors(cluster, workdir, pg):
    """Each mistake stops the script with one message: the SQL layer's with
    line and column, or, at submission, the JobManager's check with the
    server's own words. No job runs."""
    pg.sql("CREATE TABLE t_bad (id bigint PRIMARY KEY, name text)")
    pg.sql("CREATE TABLE t_nounique (id bigint, name text)")
    cluster.add_tm(slots=1)
    good = jdbc(pg, "t_bad")
    cases = [
        # (table DDL WITH, columns, query, expected fragments)
        (f"'connector' = 'jdbc', 'url' = 'jdbc:mysql://x/y', 'table-name' = 't_bad'", "",
         ["line 7, column 3", "Cannot handle such jdbc url: jdbc:mysql://x/y"]),
        (f"'connector' = 'jdbc', 'url' = '{pg.url}'", "",
         ["line 7, column 3", "connector 'jdbc' needs 'table-name'"]),
        (f"'connector' = 'jdbc', 'url' = '{pg.url}', 'table-name' = 't_bad', 'username' = 'x'",
         "", ["Either all or none of the following options should be provided: username, password"]),
        (good + ", 'sink.buffer-flush.max-row' = '5'", "",
         ["unknown option 'sink.buffer-flush.max-row'", "did you mean 'sink.buffer-flush.max-rows'"]),
        (good.replace(f":{pg.port}/", ":1/"), "",
         ["jdbc sink 't_bad': cannot connect to PostgreSQL", "Connection refused"]),
        (good.replace("'secret'", "'wrong'"), "",
         ["cannot connect to PostgreSQL", 'password authentication failed for user "postgres"']),
        (jdbc(pg, "t_missing"), "", ['relation "t_missing" does not exist']),
        (good, "missing_col", ['column "missing_col" of relation "t_bad" does not exist']),
        (good, "ts_name", ['column "id" is of type bigint but expression is of type timestamp without time zone']),
        (jdbc(pg, "t_nounique"), "pk",
         ["there is no unique or exclusion constraint matching the ON CONFLICT specification"]),
        (good, "updating", ["doesn't support consuming update and delete changes",
                            "please declare primary key for sink table"]),
    ]
    for i, (with_, how, want) in enumerate(cases):
        cols = "id BIGINT, name STRING"
        query = "SELECT id, CAST(id AS STRING) FROM events"
        if how == "missing_col":
            cols = "id BIGINT, missing_col STRING"
        elif how == "ts_name":
            cols = "id TIMESTAMP(3), name STRING"
            query = "SELECT TO_TIMESTAMP_LTZ(id, 3), CAST(id AS STRING) FROM events"
        elif how == "pk":
            cols += ", PRIMARY KEY (id) NOT ENFORCED"
        elif how == "updating":
            query = "SELECT id % 3, CAST(COUNT(*) AS STRING) FROM events GROUP BY id % 3"
        r = run_sql(cluster, workdir, f"bad{i}.sql", gen(10) + f"""
CREATE TABLE t_bad ({cols})
  WITH ({with_});
INSERT INTO t_bad {query};
""")
        out = r.stdout + r.stderr
        assert "[ERROR]" in out and not job_ids(r.stdout), out
        for w in want:
            assert w in out, (i, w, out)
    # a scanned and a looked-up column of another type than the server's: refused at submission
    pg.sql("CREATE TABLE t_dim (id integer, price numeric)")
    r = run_sql(cluster, workdir, "bad_scan.sql", f"""
CREATE TABLE t_dim (id INT, price DOUBLE) WITH ({jdbc(pg, 't_dim')});
CREATE TABLE out_t (id INT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT id FROM t_dim;
""")
    assert "column 'price' is numeric in PostgreSQL, which does not map to DOUBLE" in r.stdout, \
        r.stdout
    r = run_sql(cluster, workdir, "bad_lookup.sql", gen(10, name="o0") + f"""
CREATE TABLE o (id BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE t_dim (id INT, price DOUBLE) WITH ({jdbc(pg, 't_dim')});
CREATE TABLE out_t (id BIGINT, price DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT o.id, d.price FROM o JOIN t_dim FOR SYSTEM_TIME AS OF o.pt AS d
  ON CAST(o.id AS INT) = d.id;
""")
    assert "column 'price' is numeric in PostgreSQL, which does not map to DOUBLE" in r.stdout, \
        r.stdout
    assert cluster.get("/jobs/overview")["jobs"] == []


def flink_splits(lower, upper, num):
    """Flink's JdbcNumericBetweenParametersProvider(lower, upper).ofBatchNum(num)."""
    count = upper - lower + 1
    num = min(num, count)
    size = -(-count // num)
    big = count - (size - 1) * num
    out, start = [], lower
    for i in range(num):
        end = start + size - 1 - (1 if i >= big else 0)
        out.append((start, end))
        start = end + 1
    return out


def test_partitioned_scan_at_parallelism_2(cluster, workdir, pg):
    """scan.partition.* splits the scan as Flink does ([1, 1000] into 7
    BETWEEN ranges of 143 and 142 ids), two subtasks read them (split i is
    subtask i % 2's), scan.fetch-size sets the round trips: the table gets
    exactly the rows whose id is within the bounds -- as in Flink, rows
    outside them and NULL ids are not read."""
    pg.sql("CREATE TABLE t_parts (id bigint, k integer, v text)")
    pg.sql("INSERT INTO t_parts SELECT i, i % 13, 'v' || i FROM generate_series(-20, 1030) i")
    pg.sql("INSERT INTO t_parts VALUES (NULL, 1, 'null id')")
    pg.sql("CREATE TABLE t_parts_out (id bigint, k integer, v text)")
    cluster.add_tm(slots=2)
    opts = (", 'scan.partition.column' = 'id', 'scan.partition.num' = '7', "
            "'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '1000', "
            "'scan.fetch-size' = '33'")
    r = run_sql(cluster, workdir, "parts.sql", f"""
CREATE TABLE t_parts (id BIGINT, k INT, v STRING) WITH ({jdbc(pg, 't_parts', opts)});
CREATE TABLE t_parts_out (id BIGINT, k INT, v STRING) WITH ({jdbc(pg, 't_parts_out')});
SET 'parallelism.default' = '2';
INSERT INTO t_parts_out SELECT id, k, v FROM t_parts;
""")
    job = finish(cluster, ok(r))
    src = [v for v in job["vertices"] if v["name"].startswith("t_parts")]
    assert src and src[0]["parallelism"] == 2, job["vertices"]
    splits = flink_splits(1, 1000, 7)
    assert [b - a + 1 for a, b in splits] == [143] * 6 + [142]
    want = [[str(i), str(i % 13), f"v{i}"] for a, b in splits for i in range(a, b + 1)]
    assert pg.sql("SELECT id, k, v FROM t_parts_out ORDER BY id") == want


def test_partitioned_scan_on_date_and_timestamp_columns(cluster, workdir, pg):
    """scan.partition.column may be a DATE or a TIMESTAMP (as in Flink), the
    bounds that type's literals: at parallelism 2 the table gets exactly the
    rows whose column is within the bounds (both ends included; a timestamp
    between two milliseconds is read once), with scan.auto-commit set either
    way; a bound that is no literal of the column's type is refused."""
    pg.sql("CREATE TABLE t_dparts (id integer, d date, ts timestamp(6))")
    base = datetime.datetime(2026, 1, 1)
    rows = [(i, (base + datetime.timedelta(days=i % 40)).date(),
             base + datetime.timedelta(microseconds=i * 1234567)) for i in range(400)]
    pg.sql("INSERT INTO t_dparts VALUES " + ", ".join(
        f"({i}, DATE '{d}', TIMESTAMP '{t.isoformat(sep=' ')}')" for i, d, t in rows) +
        ", (400, NULL, NULL)")
    pg.sql("CREATE TABLE t_dparts_out (id integer, src text)")
    cluster.add_tm(slots=4)
    lo_d, hi_d = datetime.date(2026, 1, 5), datetime.date(2026, 2, 1)
    lo_t = datetime.datetime(2026, 1, 1, 0, 1, 0, 500)
    hi_t = rows[300][2]  # a bound with microseconds: that row is read
    opts_d = (", 'scan.partition.column' = 'd', 'scan.partition.num' = '5', "
              f"'scan.partition.lower-bound' = '{lo_d}', 'scan.partition.upper-bound' = '{hi_d}', "
              "'scan.fetch-size' = '7'")
    opts_t = (", 'scan.partition.column' = 'ts', 'scan.partition.num' = '6', "
              f"'scan.partition.lower-bound' = '{lo_t.isoformat(sep=' ')}', "
              f"'scan.partition.upper-bound' = '{hi_t.isoformat(sep=' ')}', "
              "'scan.auto-commit' = 'false', 'scan.fetch-size' = '10'")
    r = run_sql(cluster, workdir, "dparts.sql", f"""
CREATE TABLE by_d (id INT, d DATE, ts TIMESTAMP(6)) WITH ({jdbc(pg, 't_dparts', opts_d)});
CREATE TABLE by_ts (id INT, d DATE, ts TIMESTAMP(6)) WITH ({jdbc(pg, 't_dparts', opts_t)});
CREATE TABLE t_dparts_out (id INT, src STRING) WITH ({jdbc(pg, 't_dparts_out')});
SET 'parallelism.default' = '2';
INSERT INTO t_dparts_out SELECT id, 'd' FROM by_d UNION ALL SELECT id, 'ts' FROM by_ts;
""")
    job = finish(cluster, ok(r))
    srcs = [v for v in job["vertices"] if v["name"].startswith(("by_d", "by_ts"))]
    assert len(srcs) == 2 and all(v["parallelism"] == 2 for v in srcs), job["vertices"]
    want = sorted([[str(i), "d"] for i, d, _ in rows if lo_d <= d <= hi_d] +
                  [[str(i), "ts"] for i, _, t in rows if lo_t <= t <= hi_t],
                  key=lambda x: (x[1], int(x[0])))
    assert len(want) > 300
    assert pg.sql("SELECT id, src FROM t_dparts_out ORDER BY src, id") == want

    for opts, msg in [
        (opts_d.replace(f"'{hi_d}'", "'soon'"), "'scan.partition.upper-bound'='soon' is not a "
         "DATE literal (the type of 'scan.partition.column' 'd')"),
        (opts_d.replace("'d'", "'id2'"), "'scan.partition.column' 'id2' is STRING; it must be a "
         "numeric, date or timestamp column"),
        (opts_t.replace("'false'", "'maybe'"), "'scan.auto-commit' is true or false, not 'maybe'"),
    ]:
        r = run_sql(cluster, workdir, "dparts_bad.sql", f"""
CREATE TABLE by_x (id INT, id2 STRING, d DATE, ts TIMESTAMP(6)) WITH ({jdbc(pg, 't_dparts', opts)});
""")
        assert "[ERROR]" in r.stdout and msg in r.stdout, (msg, r.stdout)


def test_scan_restores_from_a_savepoint_mid_scan(cluster, workdir, pg):
    """A partitioned scan (4 splits, 2 subtasks) is stopped with a savepoint
    while its splits are half read (a function on the scanned view makes the
    later rows of each split slow), then restored at parallelism 3: each split
    is read again and the rows already emitted are skipped, so the table gets
    every row exactly once across the two runs."""
    n = 1000
    pg.sql("CREATE TABLE t_slow_base (id bigint, v text)")
    pg.sql(f"INSERT INTO t_slow_base SELECT i, 'v' || i FROM generate_series(1, {n}) i")
    pg.sql("CREATE FUNCTION slow_row(i bigint) RETURNS boolean AS $$ BEGIN "
           "IF (i - 1) % 250 >= 100 THEN PERFORM pg_sleep(0.02); END IF; RETURN true; END "
           "$$ LANGUAGE plpgsql")
    pg.sql("CREATE VIEW t_slow AS SELECT id, v FROM t_slow_base WHERE slow_row(id)")
    pg.sql("CREATE TABLE t_slow_out (id bigint, v text)")
    cluster.add_tm(slots=3)
    opts = (", 'scan.partition.column' = 'id', 'scan.partition.num' = '4', "
            "'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '1000', "
            "'scan.fetch-size' = '10'")
    script = """
CREATE TABLE t_slow (id BIGINT, v STRING) WITH ({src});
CREATE TABLE t_slow_out (id BIGINT, v STRING) WITH ({dst});
SET 'parallelism.default' = '{p}';
{extra}
INSERT INTO t_slow_out SELECT id, v FROM t_slow;
"""
    args = dict(src=jdbc(pg, 't_slow', opts), dst=jdbc(pg, 't_slow_out'))
    jid = ok(run_sql(cluster, workdir, "slow1.sql", script.format(p=2, extra="", **args)))
    sp = cluster.stop_after_progress(jid, "t_slow", 200, os.path.join(workdir, "sp"))
    first = int(pg.sql("SELECT count(*) FROM t_slow_out")[0][0])
    assert 200 <= first < n  # stopped mid-scan
    jid2 = ok(run_sql(cluster, workdir, "slow2.sql", script.format(
        p=3, extra=f"SET 'execution.savepoint.path' = '{sp}';", **args)))
    job2 = finish(cluster, jid2)
    assert cluster.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    assert {v["parallelism"] for v in job2["vertices"]} == {3}
    assert pg.sql("SELECT id, count(*) FROM t_slow_out GROUP BY id HAVING count(*) > 1 "
                  "LIMIT 5") == []
    assert pg.sql("SELECT id, v FROM t_slow_out ORDER BY id") == \
        [[str(i), f"v{i}"] for i in range(1, n + 1)]


def test_values_beyond_the_declared_types(cluster, workdir, pg):
    """A numeric of more digits than the declared DECIMAL's precision reads
    as NULL (Flink's DecimalData.fromBigDecimal); a NaN numeric, a
    two-dimensional array and a smallint beyond a TINYINT have no Sluice
    value: the job fails naming the column and why."""
    import json
    pg.sql("CREATE TABLE t_wide (id bigint, d numeric(12, 3))")
    pg.sql("INSERT INTO t_wide VALUES (1, 123.454), (2, 123.455), (3, -12345.678), (4, NULL)")
    pg.sql("CREATE TABLE t_wide_out (id bigint, d numeric(5, 2))")
    pg.sql("CREATE TABLE t_nan (id bigint, d numeric(10, 2))")
    pg.sql("INSERT INTO t_nan VALUES (1, 1.5), (2, 'NaN')")
    pg.sql("CREATE TABLE t_grid (id bigint, g integer[])")
    pg.sql("INSERT INTO t_grid VALUES (1, '{{1,2},{3,4}}')")
    pg.sql("CREATE TABLE t_tiny (id bigint, s smallint)")
    pg.sql("INSERT INTO t_tiny VALUES (1, -128), (2, 300)")
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "wide.sql", f"""
CREATE TABLE t_wide (id BIGINT, d DECIMAL(5, 2)) WITH ({jdbc(pg, 't_wide')});
CREATE TABLE t_wide_out (id BIGINT, d DECIMAL(5, 2)) WITH ({jdbc(pg, 't_wide_out')});
INSERT INTO t_wide_out SELECT id, d FROM t_wide;
""")
    finish(cluster, ok(r))
    # HALF_UP to the scale; -12345.68 has 7 digits: NULL
    assert pg.sql("SELECT id, d FROM t_wide_out ORDER BY id") == \
        [["1", "123.45"], ["2", "123.46"], ["3", None], ["4", None]]
    for table, cols, why in [("t_nan", "id BIGINT, d DECIMAL(10, 2)",
                              "column 'd': NaN does not read as DECIMAL(10, 2)"),
                             ("t_grid", "id BIGINT, g ARRAY<INT>",
                              "column 'g': a 2-dimensional array does not read as ARRAY<INT>"),
                             ("t_tiny", "id BIGINT, s TINYINT",
                              "column 's': 300 is out of TINYINT's range")]:
        r = run_sql(cluster, workdir, f"{table}.sql", f"""
CREATE TABLE {table} ({cols}) WITH ({jdbc(pg, table)});
CREATE TABLE sink_{table} ({cols}) WITH ('connector' = 'blackhole');
INSERT INTO sink_{table} SELECT * FROM {table};
""")
        jid = ok(r)
        job = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=30)
        exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
        assert job["state"] == "FAILED" and why in exc, exc
