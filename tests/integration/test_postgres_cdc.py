"""The postgres-cdc source against a real PostgreSQL (tests/pgserver.py,
wal_level = logical): `sluice sql` jobs read a table's snapshot and then its
changes through logical replication (pgoutput) while Python changes the
table with psql, through a TaskManager SIGKILL and a stop-with-savepoint and
restore; the final state written into PostgreSQL by the jdbc sink must equal
PostgreSQL's own view of the table (computed by PostgreSQL, not by Sluice)."""
import datetime
import json
import os
import random
import signal
import threading

import pytest

from conftest import failover_conf, wait_for
from test_checkpoints import wait_completed
from test_savepoints import stop_with_savepoint
from test_sql import Session, job_ids


def cdc(pg, table, slot, extra=""):
    return (f"'connector' = 'postgres-cdc', 'hostname' = '127.0.0.1', 'port' = '{pg.port}', "
            f"'username' = 'postgres', 'password' = 'secret', 'database-name' = 'postgres', "
            f"'schema-name' = 'public', 'table-name' = '{table}', 'slot.name' = '{slot}', "
            + (extra or "'decoding.plugin.name' = 'pgoutput'"))


def jdbc(pg, table):
    return (f"'connector' = 'jdbc', 'url' = '{pg.url}', 'table-name' = '{table}', "
            f"'username' = 'postgres', 'password' = 'secret'")


class Mutator:
    """Random inserts, updates (some of the key) and deletes of a table
    (id int primary key, grp text, amount bigint), a few statements per
    transaction, in a thread until stopped."""

    def __init__(self, pg, table, seed, key_updates=False):
        self.pg, self.table, self.rnd = pg, table, random.Random(seed)
        self.next_id, self.key_updates = 100000 * seed, key_updates
        self.stop_ev, self.count = threading.Event(), 0
        self.t = None

    def batch(self):
        r, t, stmts = self.rnd, self.table, []
        for _ in range(r.randrange(1, 5)):
            x = r.random()
            if x < 0.4:
                self.next_id += 1
                stmts.append(f"INSERT INTO {t} VALUES ({self.next_id}, 'g{r.randrange(5)}', "
                             f"{r.randrange(-1000, 1000)})")
            elif x < 0.75:
                stmts.append(f"UPDATE {t} SET amount = amount + {r.randrange(1, 50)}, grp = "
                             f"'g{r.randrange(5)}' WHERE id = (SELECT id FROM {t} ORDER BY "
                             f"random() LIMIT 1)")
            elif x < 0.85 and self.key_updates:
                self.next_id += 1
                stmts.append(f"UPDATE {t} SET id = {self.next_id} WHERE id = (SELECT id FROM "
                             f"{t} ORDER BY random() LIMIT 1)")
            else:
                stmts.append(f"DELETE FROM {t} WHERE id = (SELECT id FROM {t} ORDER BY "
                             f"random() LIMIT 1)")
        self.pg.sql("BEGIN; " + "; ".join(stmts) + "; COMMIT;")
        self.count += 1

    def run(self, n):
        for _ in range(n):
            self.batch()

    def start(self):
        def loop():
            while not self.stop_ev.is_set():
                self.batch()
        self.t = threading.Thread(target=loop, daemon=True)
        self.t.start()

    def stop(self):
        self.stop_ev.set()
        self.t.join()
        self.stop_ev.clear()


def seed_table(pg, table, n, full):
    pg.sql(f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id int PRIMARY KEY, grp text, "
           f"amount bigint)" + (f"; ALTER TABLE {table} REPLICA IDENTITY FULL" if full else ""))
    pg.sql(f"INSERT INTO {table} SELECT i, 'g' || (i % 5), i * 3 - 100 FROM "
           f"generate_series(1, {n}) i")


def submit(s, stmts, insert):
    for stmt in stmts:
        out = s.run(stmt)
        assert "[ERROR]" not in out, (stmt, out)
    out = s.run(insert)
    ids = job_ids(out)
    assert ids, out
    return ids[0]


def slots(pg, name):
    return pg.sql(f"SELECT slot_name, active FROM pg_replication_slots WHERE slot_name = '{name}'")


def test_cdc_group_by_through_kill_and_savepoint(make_cluster, workdir, pg):
    """A table without a Flink PRIMARY KEY (REPLICA IDENTITY FULL: -U/+U
    with whole old rows) into `GROUP BY grp` (COUNT, SUM) upserted into a
    jdbc table. Changes flow all along; a TaskManager is SIGKILLed mid-way,
    later the job is stopped with a savepoint, the table changes while no
    job runs, and the job is restored from the savepoint. The end state of
    the jdbc table must be PostgreSQL's own GROUP BY of the table: a change
    lost or read twice would show in a count or a sum."""
    seed_table(pg, "items", 300, full=True)
    pg.sql("DROP TABLE IF EXISTS totals; CREATE TABLE totals (grp text PRIMARY KEY, cnt bigint, "
           "total bigint)")
    chk = os.path.join(workdir, "chk")
    c = make_cluster(jm_conf=failover_conf(chk=chk))
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    ddl = [f"CREATE TABLE items (id INT, grp STRING, amount BIGINT) WITH ({cdc(pg, 'items', 's_items')});",
           "CREATE TABLE totals (grp STRING, cnt BIGINT, total BIGINT, PRIMARY KEY (grp) NOT "
           f"ENFORCED) WITH ({jdbc(pg, 'totals')});",
           "SET 'parallelism.default' = '2';"]
    insert = "INSERT INTO totals SELECT grp, COUNT(*), SUM(amount) FROM items GROUP BY grp;"
    s = Session(c)
    jid = submit(s, ddl, insert)
    c.wait_state(jid, "RUNNING", timeout=20)
    want_q = "SELECT grp, count(*), sum(amount) FROM items GROUP BY grp ORDER BY grp"
    got_q = "SELECT grp, cnt, total FROM totals WHERE cnt > 0 ORDER BY grp"
    wait_for(lambda: pg.sql(got_q) == pg.sql(want_q), timeout=60, what="the snapshot's totals")
    assert slots(pg, "s_items") == [["s_items", "t"]]
    m = Mutator(pg, "items", 1)
    m.start()
    try:
        wait_completed(c, jid, 3)
        c.tms[0].kill(signal.SIGKILL)
        c.add_tm(slots=2)
        wait_for(lambda: c.job(jid)["state"] == "RUNNING", timeout=30, what="running after the kill")
        wait_completed(c, jid, c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] + 2)
    finally:
        m.stop()
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] >= 1
    m.start()
    try:
        sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    finally:
        m.stop()
    assert slots(pg, "s_items") == [["s_items", "f"]]  # kept while no job runs, as Flink CDC keeps it
    m.run(30)  # while no job runs: the slot keeps these changes
    assert "Session property has been set." in s.run(f"SET 'execution.savepoint.path' = '{sp}';")
    jid2 = job_ids(s.run(insert))[0]
    c.wait_state(jid2, "RUNNING", timeout=20)
    m.run(30)
    wait_for(lambda: pg.sql(got_q) == pg.sql(want_q), timeout=60,
             what="the totals equal to PostgreSQL's GROUP BY")
    assert m.count >= 60
    s.close()


def test_cdc_primary_key_upserts_into_a_mirror(make_cluster, workdir, pg):
    """A Flink PRIMARY KEY over a table of the default replica identity
    (updates carry no old row, deletes only the key; an update of the key
    carries the old key): the source's upserts go through
    changelog-normalize into a jdbc mirror table, through a TaskManager
    SIGKILL: the mirror ends equal to the table, row for row."""
    seed_table(pg, "accts", 200, full=False)
    pg.sql("DROP TABLE IF EXISTS mirror; CREATE TABLE mirror (id int PRIMARY KEY, grp text, "
           "amount bigint)")
    c = make_cluster(jm_conf=failover_conf())
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    s = Session(c)
    jid = submit(s, [
        f"CREATE TABLE accts (id INT, grp STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
        f"WITH ({cdc(pg, 'accts', 's_accts')});",
        f"CREATE TABLE mirror (id INT, grp STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
        f"WITH ({jdbc(pg, 'mirror')});", "SET 'parallelism.default' = '2';"],
        "INSERT INTO mirror SELECT * FROM accts;")
    s.close()
    c.wait_state(jid, "RUNNING", timeout=20)
    q = "SELECT id, grp, amount FROM {} ORDER BY id"
    m = Mutator(pg, "accts", 2, key_updates=True)
    m.start()
    try:
        wait_completed(c, jid, 3)
        c.tms[1].kill(signal.SIGKILL)
        c.add_tm(slots=2)
        wait_for(lambda: c.job(jid)["state"] == "RUNNING", timeout=30, what="running after the kill")
        wait_completed(c, jid, c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] + 2)
    finally:
        m.stop()
    wait_for(lambda: pg.sql(q.format("mirror")) == pg.sql(q.format("accts")), timeout=60,
             what="the mirror equal to the table")
    assert m.count > 0 and len(pg.sql(q.format("accts"))) > 100


def test_cdc_refuses_what_it_cannot_read(cluster, workdir, pg):
    """A missing table, a table whose updates carry no old row without a
    Flink primary key, a missing column, a wrong password, an unknown plugin:
    each refused at submission with a message that names it (the server's
    for the password)."""
    seed_table(pg, "plain", 3, full=False)
    cluster.add_tm(slots=1)
    s = Session(cluster)
    for stmt in ["CREATE TABLE sink1 (id INT, grp STRING, amount BIGINT) WITH ('connector' = 'blackhole');",
                 f"CREATE TABLE nope (id INT, grp STRING, amount BIGINT) WITH ({cdc(pg, 'nope', 's_nope')});",
                 f"CREATE TABLE plain (id INT, grp STRING, amount BIGINT) WITH ({cdc(pg, 'plain', 's_plain')});",
                 f"CREATE TABLE nocol (id INT, grp STRING, zz BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
                 f"WITH ({cdc(pg, 'plain', 's_nocol')});",
                 f"CREATE TABLE badpw (id INT, grp STRING, amount BIGINT, PRIMARY KEY (id) NOT "
                 f"ENFORCED) WITH ({cdc(pg, 'plain', 's_pw').replace('secret', 'wrong')});",
                 f"CREATE TABLE plug (id INT) WITH "
                 f"({cdc(pg, 'plain', 's_x', extra=chr(39) + 'decoding.plugin.name' + chr(39) + ' = ' + chr(39) + 'wal2json' + chr(39))});"]:
        assert "[ERROR]" not in s.run(stmt), stmt
    # refused at submission (the JobManager connects and reads the catalog)
    for table, msg in [("nope", 'no table "public"."nope" in database'),
                       ("plain", "is not REPLICA IDENTITY FULL"),
                       ("nocol", 'table "public"."plain" has no column "zz"'),
                       ("badpw", 'password authentication failed for user "postgres"')]:
        out = s.run(f"INSERT INTO sink1 SELECT * FROM {table};")
        assert msg in out and not job_ids(out), out
    out = s.run("INSERT INTO sink1 SELECT id, 'x', CAST(1 AS BIGINT) FROM plug;")
    assert "'wal2json' is not supported (pgoutput is)" in out, out
    s.close()


def test_cdc_latest_offset_and_slot_dropped_on_stop(cluster, workdir, pg):
    """scan.startup.mode latest-offset reads no snapshot, only the changes
    after the slot was made; debezium.slot.drop.on.stop = true drops the
    slot when the job is cancelled (without it the slot stays: the test
    above)."""
    seed_table(pg, "late", 50, full=False)
    pg.sql("DROP TABLE IF EXISTS late_out; CREATE TABLE late_out (id int PRIMARY KEY, grp text, "
           "amount bigint)")
    cluster.add_tm(slots=2)
    s = Session(cluster)
    extra = ("'decoding.plugin.name' = 'pgoutput', 'scan.startup.mode' = 'latest-offset', "
             "'debezium.slot.drop.on.stop' = 'true'")
    jid = submit(s, [
        f"CREATE TABLE late (id INT, grp STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
        f"WITH ({cdc(pg, 'late', 's_late', extra=extra)});",
        f"CREATE TABLE late_out (id INT, grp STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
        f"WITH ({jdbc(pg, 'late_out')});"], "INSERT INTO late_out SELECT * FROM late;")
    s.close()
    cluster.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: slots(pg, "s_late") == [["s_late", "t"]], timeout=30, what="the slot streaming")
    pg.sql("INSERT INTO late VALUES (1001, 'x', 1), (1002, 'y', 2); "
           "UPDATE late SET amount = 7 WHERE id = 3; DELETE FROM late WHERE id = 1002")
    want = [["3", "g3", "7"], ["1001", "x", "1"]]
    wait_for(lambda: pg.sql("SELECT * FROM late_out ORDER BY id") == want, timeout=30,
             what="only the changes after the start")
    cluster.cli("cancel", jid, check=True)
    cluster.wait_state(jid, ["CANCELED"], timeout=30)
    wait_for(lambda: slots(pg, "s_late") == [], timeout=30, what="the slot dropped")


def test_cdc_types_from_snapshot_and_stream(cluster, workdir, pg):
    """Every type the jdbc sink also writes, with NULLs, read from the
    snapshot and from the stream (pgoutput's text form) and mirrored: the
    mirror's text, as psql prints it, equals the table's; a value TOASTed out
    of line (REPLICA IDENTITY FULL carries it when another column changes)."""
    cols = "id int PRIMARY KEY, b boolean, sm smallint, f float8, s text, raw bytea, " \
           "ts timestamp(3), tz timestamptz(3)"
    pg.sql(f"DROP TABLE IF EXISTS typed; CREATE TABLE typed ({cols}); "
           f"ALTER TABLE typed REPLICA IDENTITY FULL; DROP TABLE IF EXISTS typed_out; "
           f"CREATE TABLE typed_out ({cols})")
    pg.sql("INSERT INTO typed VALUES (1, true, -32768, 1.5e300, 'grüße, \"q\"', '\\x00ff10', "
           "'1969-12-31 23:59:59.123', '2026-01-01 10:00:00.5+02'), "
           "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "
           "(3, false, 7, -0.25, '', '\\x', '2026-06-30 12:00:00', '1970-01-01 00:00:00+00')")
    cluster.add_tm(slots=2)
    s = Session(cluster)
    sql_cols = ("id INT, b BOOLEAN, sm INT, f DOUBLE, s STRING, `raw` BYTES, ts TIMESTAMP(3), "
                "tz TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED")
    jid = submit(s, [
        f"CREATE TABLE typed ({sql_cols}) WITH ({cdc(pg, 'typed', 's_typed')});",
        f"CREATE TABLE typed_out ({sql_cols}) WITH ({jdbc(pg, 'typed_out')});"],
        "INSERT INTO typed_out SELECT * FROM typed;")
    s.close()
    cluster.wait_state(jid, "RUNNING", timeout=20)
    q = "SELECT * FROM {} ORDER BY id"
    wait_for(lambda: pg.sql(q.format("typed_out")) == pg.sql(q.format("typed")), timeout=30,
             what="the snapshot mirrored")
    big = "".join(random.Random(7).choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(20000))
    pg.sql(f"INSERT INTO typed VALUES (4, true, 1, 2, '{big}', '\\xdeadbeef', "
           "'2000-02-29 00:00:00.001', '2000-02-29 00:00:00.001+00'); "
           "UPDATE typed SET s = NULL, f = 'NaN' WHERE id = 1; UPDATE typed SET b = true, "
           "raw = '\\x01' WHERE id = 2; DELETE FROM typed WHERE id = 3")
    pg.sql("UPDATE typed SET sm = 2 WHERE id = 4")  # s stays TOASTed, unchanged
    wait_for(lambda: pg.sql(q.format("typed_out")) == pg.sql(q.format("typed")), timeout=30,
             what="the changes mirrored")
    assert pg.sql("SELECT length(s), sm FROM typed_out WHERE id = 4") == [["20000", "2"]]


def test_cdc_times_timestamps_and_arrays(cluster, workdir, pg):
    """TIME, TIMESTAMP(6), TIMESTAMP_LTZ(6) and arrays (int[], text[] with
    quotes, commas, backslashes and NULLs, int[][] as ARRAY<ARRAY<INT>>) read
    from the snapshot and from the stream, written as Flink's CAST to STRING
    into a jdbc table: equal to the text worked out here from the values
    inserted. A malformed array (a dimension header) fails the job naming
    the column."""
    cols = "id int PRIMARY KEY, t time(3), ts timestamp(6), tz timestamptz(6), ia int[], " \
           "ta text[], m int[][]"
    pg.sql(f"DROP TABLE IF EXISTS tarr; CREATE TABLE tarr ({cols}); DROP TABLE IF EXISTS tarr_out; "
           "CREATE TABLE tarr_out (id int PRIMARY KEY, t text, ts text, tz text, ia text, ta text, "
           "m text)")
    rows = {
        1: ("10:00:00.123", "2026-01-01 10:00:00.123456", "2026-01-01 10:00:00.5+02",
            [1, None, -3], ["a b", 'q"uote', "c,d", "back\\slash", None, ""], [[1, 2], [3, 4]]),
        2: (None, None, None, None, None, None),
        3: ("23:59:59", "1969-12-31 23:59:59.000001", "1970-01-01 00:00:00+00", [], ["NULL"],
            [[5]]),
    }
    def pg_array(a):
        if a is None:
            return "NULL"
        def el(x):
            if x is None:
                return "NULL"
            if isinstance(x, list):
                return "ARRAY[" + ",".join(el(y) for y in x) + "]"
            if isinstance(x, str):
                return "'" + x.replace("'", "''") + "'"
            return str(x)
        return "ARRAY[" + ",".join(el(x) for x in a) + "]"
    def pg_row(i, r):
        t, ts, tz, ia, ta, m = (list(r) + [None] * 6)[:6]
        q = lambda x: "NULL" if x is None else f"'{x}'"  # noqa: E731
        return (f"({i}, {q(t)}, {q(ts)}, {q(tz)}, {pg_array(ia)}::int[], {pg_array(ta)}::text[], "
                f"{pg_array(m)}::int[][])")
    pg.sql("INSERT INTO tarr VALUES " + ", ".join(pg_row(i, r) for i, r in rows.items()))
    cluster.add_tm(slots=2)
    s = Session(cluster)
    sql_cols = ("id INT, t TIME(3), ts TIMESTAMP(6), tz TIMESTAMP_LTZ(6), ia ARRAY<INT>, "
                "ta ARRAY<STRING>, m ARRAY<ARRAY<INT>>, PRIMARY KEY (id) NOT ENFORCED")
    out_cols = ("id INT, t STRING, ts STRING, tz STRING, ia STRING, ta STRING, m STRING, "
                "PRIMARY KEY (id) NOT ENFORCED")
    jid = submit(s, [
        f"CREATE TABLE tarr ({sql_cols}) WITH ({cdc(pg, 'tarr', 's_tarr')});",
        f"CREATE TABLE tarr_out ({out_cols}) WITH ({jdbc(pg, 'tarr_out')});"],
        "INSERT INTO tarr_out SELECT id, CAST(t AS STRING), CAST(ts AS STRING), "
        "CAST(tz AS STRING), CAST(ia AS STRING), CAST(ta AS STRING), CAST(m AS STRING) FROM tarr;")
    s.close()
    cluster.wait_state(jid, "RUNNING", timeout=20)

    def flink_text(i, r):
        """Flink's CAST(... AS STRING) of the values (session zone UTC)."""
        t, ts, tz, ia, ta, m = (list(r) + [None] * 6)[:6]
        def arr(a):
            return None if a is None else "[" + ", ".join(
                "NULL" if x is None else arr(x) if isinstance(x, list) else str(x) for x in a) + "]"
        def tzs(x):
            if x is None:
                return None
            if x[-3] in "+-":
                x += ":00"
            d = datetime.datetime.fromisoformat(x.replace(" ", "T"))
            return d.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
        ts6 = ts and datetime.datetime.fromisoformat(ts).strftime("%Y-%m-%d %H:%M:%S.%f")
        return [str(i), t, ts6, tzs(tz), arr(ia), arr(ta), arr(m)]
    want = lambda: [[c if c is not None else "" for c in flink_text(i, r)]  # noqa: E731
                    for i, r in sorted(rows.items())]
    q = "SELECT id, coalesce(t, ''), coalesce(ts, ''), coalesce(tz, ''), coalesce(ia, ''), " \
        "coalesce(ta, ''), coalesce(m, '') FROM tarr_out ORDER BY id"
    wait_for(lambda: pg.sql(q) == want(), timeout=30,
             what=f"the snapshot mirrored: {pg.sql(q)} vs {want()}")
    rows[4] = ("00:00:00.001", "2000-02-29 00:00:00.999999", "2000-02-29 12:00:00.25-05",
               [7], ['{"x":1}'], [[0, None], [None, 9]])
    rows[1] = ("10:00:00.123", "2026-01-01 10:00:00.123456", "2026-01-01 10:00:00.5+02",
               [2], None, [[1]])
    pg.sql("INSERT INTO tarr VALUES " + pg_row(4, rows[4]) + "; "
           f"UPDATE tarr SET ia = {pg_array([2])}::int[], ta = NULL, m = {pg_array([[1]])}::int[][] "
           "WHERE id = 1; DELETE FROM tarr WHERE id = 3")
    del rows[3]
    wait_for(lambda: pg.sql(q) == want(), timeout=30,
             what=f"the changes mirrored: {pg.sql(q)} vs {want()}")
    # an array with its own lower bound carries a dimension header in text
    pg.sql("INSERT INTO tarr (id, ia) VALUES (5, '[0:1]={1,2}'::int[])")
    job = cluster.wait_state(jid, ["FAILED"], timeout=30)
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "column 'ia'" in exc and "an array that does not start with '{'" in exc, exc
    assert job["state"] == "FAILED"
