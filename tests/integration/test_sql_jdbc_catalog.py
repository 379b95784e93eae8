"""Flink's JDBC catalog for PostgreSQL (sql/catalog_jdbc.c) against a real
PostgreSQL server (tests/pgserver.py): CREATE CATALOG ... WITH ('type' =
'jdbc'), USE CATALOG, SHOW DATABASES / TABLES, DESCRIBE, and INSERT INTO a
catalog table, every statement through `sluice sql -f` on a running cluster.
What the catalog shows is compared with what PostgreSQL holds (read with
psql), types against Flink's PostgresTypeMapper's mapping written out here."""
import os
import re
import subprocess

import pgserver
from test_sql import run_sql, job_ids, finish, ms


def catalog(pg, name="mypg", db="postgres", user="postgres", password="secret", url=None):
    base = url or f"jdbc:postgresql://127.0.0.1:{pg.port}"
    return (f"CREATE CATALOG {name} WITH ('type' = 'jdbc', 'default-database' = '{db}', "
            f"'username' = '{user}', 'password' = '{password}', 'base-url' = '{base}');\n")


def psql(pg, db, text):
    """Rows of text run in database db (pg.sql speaks to 'postgres' only)."""
    env = dict(os.environ, PGPASSWORD=pgserver.PASSWORD)
    r = subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(pg.port), "-U",
                        pgserver.USER, "-d", db, "-v", "ON_ERROR_STOP=1", "-A", "-t", "-F", "\t",
                        "-c", text], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines() if line]


def table_rows(out):
    """The rows of every tableau result in out: lists of cell texts."""
    rows = []
    for line in out.splitlines():
        if line.startswith("|") and not re.match(r"^\|\s+(table name|database name|catalog name|current database name|name)\s+\|",
                                                 line):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


TYPES = [  # PostgreSQL column, Flink's type (PostgresTypeMapper), nullable
    ("c_int2 int2", "SMALLINT", True),
    ("c_int4 integer NOT NULL", "INT", False),
    ("c_int8 bigint", "BIGINT", True),
    ("c_serial serial", "INT", False),
    ("c_float4 real", "FLOAT", True),
    ("c_float8 double precision", "DOUBLE", True),
    ("c_num numeric(12, 3)", "DECIMAL(12, 3)", True),
    ("c_numany numeric", "DECIMAL(38, 18)", True),
    ("c_bool boolean", "BOOLEAN", True),
    ("c_text text", "STRING", True),
    ("c_vc varchar(17)", "VARCHAR(17)", True),
    ("c_vcany varchar", "STRING", True),
    ("c_char char(5)", "CHAR(5)", True),
    ("c_bytea bytea", "BYTES", True),
    ("c_date date", "DATE", True),
    ("c_time time", "TIME(6)", True),
    ("c_time2 time(2)", "TIME(2)", True),
    ("c_ts timestamp", "TIMESTAMP(6)", True),
    ("c_ts3 timestamp(3)", "TIMESTAMP(3)", True),
    ("c_tz timestamptz(0)", "TIMESTAMP_LTZ(0)", True),
    ("c_ints integer[]", "ARRAY<INT>", True),
    ("c_texts text[]", "ARRAY<STRING>", True),
]


def describe(out):
    """name -> (type, null, key) of a DESCRIBE's table."""
    got = {}
    for line in out.splitlines():
        m = re.match(r"^\|\s*(\S+)\s*\|\s*([^|]*?)\s*\|\s*(TRUE|FALSE)\s*\|\s*([^|\s]*)\s*\|", line)
        if m:
            got[m.group(1)] = (m.group(2), m.group(3) == "TRUE", m.group(4))
    return got


def test_catalog_shows_the_servers_databases_tables_and_types(cluster, workdir, pg):
    """SHOW DATABASES / TABLES list what the server holds (schema.table, the
    system schemas left out), DESCRIBE gives Flink's type of every PostgreSQL
    column type the mapping covers, nullability and the primary key from the
    server; a table of `public` is named with or without its schema."""
    pg.sql("CREATE DATABASE showdb")
    pg.sql("CREATE DATABASE shop")
    psql(pg, "showdb", "CREATE SCHEMA inventory")
    psql(pg, "showdb", "CREATE TABLE public.types (" + ", ".join(c for c, _, _ in TYPES) +
         ", CONSTRAINT types_pk PRIMARY KEY (c_int8, c_int2))")
    psql(pg, "showdb", "CREATE TABLE inventory.stock (sku text PRIMARY KEY, qty int4)")
    psql(pg, "showdb", "CREATE VIEW public.not_a_table AS SELECT 1 AS one")
    psql(pg, "shop", "CREATE TABLE orders (id bigint PRIMARY KEY, amount double precision)")
    psql(pg, "shop", "CREATE SCHEMA s2; CREATE TABLE s2.returns (id bigint)")
    # the databases the server itself holds, read with psql; Flink leaves out template0/1
    dbs = sorted(r[0] for r in pg.sql("SELECT datname FROM pg_database"))
    assert {"postgres", "showdb", "shop", "template0", "template1"} <= set(dbs)
    r = run_sql(cluster, workdir, "show.sql", catalog(pg, db="showdb") + """
SHOW CATALOGS;
USE CATALOG mypg;
SHOW CURRENT DATABASE;
SHOW DATABASES;
SHOW TABLES;
SHOW TABLES FROM shop;
DESCRIBE mypg.showdb.`public.types`;
DESCRIBE `inventory.stock`;
DESCRIBE types;
USE shop;
SHOW TABLES;
DESCRIBE orders;
""")
    assert r.returncode == 0 and "[ERROR]" not in r.stdout, r.stdout + r.stderr
    blocks = r.stdout.split("Flink SQL> ")
    cells = lambda b: [row[0] for row in table_rows(b)]
    assert cells(blocks[2]) == ["default_catalog", "mypg"]
    assert cells(blocks[4]) == ["showdb"]
    assert cells(blocks[5]) == [d for d in dbs if d not in ("template0", "template1")]
    assert cells(blocks[6]) == ["inventory.stock", "public.types"]  # no view
    assert cells(blocks[7]) == ["public.orders", "s2.returns"]
    want = {c.split()[0]: (t, null and not c.startswith(("c_int8", "c_int2")),
                           "PRI" if c.startswith(("c_int8", "c_int2")) else "")
            for c, t, null in TYPES}
    assert describe(blocks[8]) == want, blocks[8]
    assert list(describe(blocks[8])) == [c.split()[0] for c, _, _ in TYPES]  # column order
    assert describe(blocks[9]) == {"sku": ("STRING", False, "PRI"), "qty": ("INT", True, "")}
    assert describe(blocks[10]) == want  # `types` is public.types
    assert cells(blocks[12]) == ["public.orders", "s2.returns"]
    assert describe(blocks[13]) == {"id": ("BIGINT", False, "PRI"),
                                    "amount": ("DOUBLE", True, "")}


def test_insert_into_catalog_tables(cluster, workdir, pg):
    """INSERT INTO a catalog table runs the jdbc sink on the server's
    definition: its primary key makes it an upsert (a row already there is
    updated, one the job does not write stays), and a table of another schema
    and another database is written through its catalog path. psql reads back
    exactly the model's rows."""
    pg.sql("CREATE TABLE items (id bigint PRIMARY KEY, name text, price double precision, "
           "even boolean, ts timestamp(3), raw bytea)")
    pg.sql("INSERT INTO items VALUES (3, 'old', -1, NULL, NULL, NULL), "
           "(999, 'kept', 9.5, true, NULL, NULL)")
    pg.sql("CREATE SCHEMA logs")
    pg.sql("CREATE TABLE logs.log (id bigint, note varchar(10))")
    pg.sql("CREATE DATABASE shop2")
    psql(pg, "shop2", "CREATE TABLE orders (id integer PRIMARY KEY, amount bigint NOT NULL)")
    cluster.add_tm(slots=2)
    n = 200
    base = 1767225600000
    r = run_sql(cluster, workdir, "ins.sql", catalog(pg) + f"""
CREATE TABLE events (id BIGINT) WITH (
    'connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
EXECUTE STATEMENT SET BEGIN
INSERT INTO mypg.postgres.`public.items`
SELECT id, CONCAT('n', CAST(id AS STRING)), id * 0.25, id % 2 = 0,
       TO_TIMESTAMP(FROM_UNIXTIME({base // 1000} + id)), CAST(CONCAT('b', CAST(id AS STRING)) AS BYTES)
FROM events;
INSERT INTO mypg.postgres.`logs.log` SELECT id, CAST(CONCAT('x', CAST(id AS STRING)) AS VARCHAR(10)) FROM events WHERE id % 10 = 0;
INSERT INTO mypg.shop2.orders SELECT CAST(id % 7 AS INT), id FROM events;
END;
""")
    assert r.returncode == 0 and "[ERROR]" not in r.stdout, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout
    finish(cluster, jids[0])
    got = pg.sql("SELECT id, name, price, even, to_char(ts, 'YYYY-MM-DD HH24:MI:SS'), "
                 "encode(raw, 'escape') FROM items ORDER BY id")
    import datetime
    want = []
    for i in range(1, n + 1):
        t = datetime.datetime.fromtimestamp(base // 1000 + i, datetime.timezone.utc)
        p = i * 0.25
        want.append([str(i), f"n{i}", str(int(p)) if p == int(p) else repr(p),
                     "t" if i % 2 == 0 else "f", t.strftime("%Y-%m-%d %H:%M:%S"), f"b{i}"])
    want.append(["999", "kept", "9.5", "t", None, None])
    assert got == want
    assert pg.sql("SELECT id, note FROM logs.log ORDER BY id") == \
        [[str(i), f"x{i}"] for i in range(10, n + 1, 10)]
    # per key id % 7 the last id written (upserts in order of the sequence)
    last = {}
    for i in range(1, n + 1):
        last[i % 7] = i
    assert psql(pg, "shop2", "SELECT id, amount FROM orders ORDER BY id") == \
        [[str(k), str(last[k])] for k in sorted(last)]


def err_of(cluster, workdir, text):
    r = run_sql(cluster, workdir, "bad.sql", text)
    assert "[ERROR]" in r.stdout, r.stdout + r.stderr
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    assert not job_ids(r.stdout)
    return r.stdout.split("[ERROR]", 1)[1]


def test_catalog_refusals(cluster, workdir, pg):
    """Bad options, a wrong password, an unknown database or table, a type
    Flink does not map, DDL inside the catalog, and types the jdbc connector
    cannot carry: each refused with what is wrong (the server's own message
    where the server said it), and no job."""
    pg.sql("CREATE TABLE money (id bigint PRIMARY KEY, amount numeric(10, 2))")
    pg.sql("CREATE TABLE odd (id bigint, u uuid)")
    pg.sql("CREATE TABLE plain (id bigint PRIMARY KEY)")
    port = pg.port
    cases = [
        ("CREATE CATALOG c WITH ('type' = 'jdbc', 'default-database' = 'postgres', "
         "'username' = 'postgres', 'password' = 'secret');",
         "line 1, column 1: catalog 'c': One or more required options are missing. Missing "
         "required options are: base-url"),
        ("CREATE CATALOG c WITH ('type' = 'jdbc', 'base-url' = 'jdbc:postgresql://h:1', "
         "'default-database' = 'postgres', 'username' = 'u', 'password' = 'p', 'x' = 'y');",
         "catalog 'c': Unsupported options found for 'jdbc': x"),
        (catalog(pg, name="c", url="jdbc:mysql://127.0.0.1:3306"),
         "catalog 'c': 'base-url' 'jdbc:mysql://127.0.0.1:3306' is not a PostgreSQL JDBC base URL"),
        (catalog(pg, name="c", url=f"jdbc:postgresql://127.0.0.1:{port}/postgres"),
         "is not a PostgreSQL JDBC base URL without a database"),
        (catalog(pg, name="c", password="wrong"),
         f"catalog 'c': Failed connecting to jdbc:postgresql://127.0.0.1:{port}/postgres via "
         "JDBC: connection to server at \"127.0.0.1\", port " + str(port) +
         " failed: FATAL:  password authentication failed for user \"postgres\""),
        (catalog(pg, name="c", db="nosuch"),
         'FATAL:  database "nosuch" does not exist'),
        (catalog(pg) + "DESCRIBE mypg.postgres.nosuch;",
         "line 2, column 1: catalog 'mypg': Table (or view) nosuch does not exist in database "
         "postgres"),
        (catalog(pg) + "DESCRIBE mypg.postgres.`other.plain`;",
         "Table (or view) other.plain does not exist in database postgres"),
        (catalog(pg) + "USE mypg.nosuch;",
         "A database with name [nosuch] does not exist in the catalog: [mypg]."),
        (catalog(pg) + "DESCRIBE mypg.nosuch.plain;",
         'database "nosuch" does not exist'),
        (catalog(pg) + "DESCRIBE mypg.postgres.odd;",
         "catalog 'mypg': table odd, column 'u': Doesn't support Postgres type 'uuid' yet"),
        (catalog(pg) + "USE CATALOG mypg;\nCREATE TABLE t (id BIGINT) WITH ('connector' = 'blackhole');",
         "line 3, column 1: Could not execute CreateTable in path `mypg`.`postgres`.`t`: catalog "
         "'mypg' is a JDBC catalog, which supports no DDL"),
        (catalog(pg) + "DROP TABLE mypg.postgres.plain;",
         "Could not execute DropTable in path `mypg`.`postgres`.`plain`"),
        (catalog(pg) + "CREATE VIEW mypg.postgres.v AS SELECT 1;",
         "Could not execute CreateView in path `mypg`.`postgres`.`v`"),
        (catalog(pg) + "CREATE DATABASE mypg.more;",
         "Could not execute CREATE DATABASE more: catalog 'mypg' is a JDBC catalog"),
        (catalog(pg) + "CREATE TABLE s (id BIGINT, amount DOUBLE) WITH "
         "('connector' = 'datagen', 'number-of-rows' = '3');\n"
         "INSERT INTO mypg.postgres.money SELECT * FROM s;",
         "INSERT INTO mypg.postgres.money: column 2 ('amount') is DOUBLE, the table's 'amount' "
         "is DECIMAL(10, 2); CAST it"),
        (f"CREATE TABLE m (id BIGINT, x MAP<STRING, INT>) WITH ('connector' = 'jdbc', "
         f"'url' = 'jdbc:postgresql://127.0.0.1:{port}/postgres', 'table-name' = 'm');",
         "line 1, column 48: table 'm': column 'x' is MAP<STRING, INT>; the jdbc connector "
         "cannot carry that type yet"),
        (f"CREATE TABLE m (id BIGINT, x ARRAY<ARRAY<INT>>) WITH ('connector' = 'jdbc', "
         f"'url' = 'jdbc:postgresql://127.0.0.1:{port}/postgres', 'table-name' = 'm');",
         "column 'x' is ARRAY<ARRAY<INT>>; the jdbc connector cannot carry that type yet"),
    ]
    for text, msg in cases:
        e = err_of(cluster, workdir, text)
        assert msg in e, (text, e)


def test_select_from_catalog_tables(cluster, workdir, pg):
    """SELECT from a catalog table scans it once (bounded) and the job
    FINISHES: the rows the server holds, NULLs included, through a query
    that filters, joins two catalog tables and writes a filesystem table."""
    pg.sql("CREATE TABLE goods (id bigint PRIMARY KEY, name text, price double precision, "
           "ok boolean, made timestamp(3), bin bytea, n integer)")
    pg.sql("INSERT INTO goods SELECT i, 'g' || i, i * 1.5, i % 3 = 0, "
           "timestamp '2026-01-01 00:00:00' + i * interval '1.25 second', "
           "convert_to('r' || i, 'UTF8'), CASE WHEN i % 4 = 0 THEN NULL ELSE i * 10 END "
           "FROM generate_series(1, 2500) i")
    pg.sql("CREATE SCHEMA sales")
    pg.sql("CREATE TABLE sales.stock (good bigint, qty integer)")
    pg.sql("INSERT INTO sales.stock SELECT i * 2, i FROM generate_series(1, 1300) i")
    out = os.path.join(workdir, "out")
    cluster.add_tm(slots=2)
    r = run_sql(cluster, workdir, "sel.sql", catalog(pg) + f"""
CREATE TABLE res (id BIGINT, name STRING, price DOUBLE, ok BOOLEAN, made TIMESTAMP(3),
                  bin BYTES, n INT, qty INT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO res
SELECT g.id, g.name, g.price, g.ok, g.made, g.bin, g.n, s.qty
FROM mypg.postgres.goods AS g JOIN mypg.postgres.`sales.stock` AS s ON g.id = s.good
WHERE g.id % 5 <> 1;
""")
    assert r.returncode == 0 and "[ERROR]" not in r.stdout, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    import base64
    import glob
    import json
    got = []
    for path in glob.glob(os.path.join(out, "part-*")):
        with open(path) as f:
            got += [json.loads(line) for line in f if line.strip()]
    want = pg.sql("SELECT g.id, g.name, g.price, g.ok, to_char(g.made, 'YYYY-MM-DD HH24:MI:SS.MS'), "
                  "encode(g.bin, 'base64'), g.n, s.qty FROM goods g JOIN sales.stock s "
                  "ON g.id = s.good WHERE g.id % 5 <> 1 ORDER BY g.id")
    assert len(want) == 1000  # even ids up to 2500, less those ending in 1 or 6
    got.sort(key=lambda x: x["id"])
    norm = [[str(x["id"]), x["name"], x["price"], x["ok"], ms(x["made"]),
             x["bin"], x["n"], x["qty"]] for x in got]
    exp = [[w[0], w[1], float(w[2]), w[3] == "t", ms(w[4]), w[5],
            None if w[6] is None else int(w[6]), int(w[7])] for w in want]
    assert norm[:3] == exp[:3]
    assert norm == exp


def test_lookup_join_against_a_catalog_table(cluster, workdir, pg):
    """A catalog table on the right of a processing-time lookup join is
    looked up key by key by the jdbc connector: each id finds the server's
    row (a missing one drops the row of the inner join)."""
    pg.sql("CREATE TABLE prices (id bigint PRIMARY KEY, label varchar(8), price double precision)")
    pg.sql("INSERT INTO prices SELECT i, 'p' || i, i / 4.0 FROM generate_series(1, 300) i "
           "WHERE i % 7 <> 0")
    out = os.path.join(workdir, "out")
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "lookup.sql", catalog(pg) + f"""
CREATE TABLE o (id BIGINT, pt AS PROCTIME()) WITH (
    'connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '400');
CREATE TABLE res (id BIGINT, label STRING, price DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO res SELECT o.id, p.label, p.price
FROM o JOIN mypg.postgres.prices FOR SYSTEM_TIME AS OF o.pt AS p ON o.id = p.id;
""")
    assert r.returncode == 0 and "[ERROR]" not in r.stdout, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    import glob
    import json
    got = []
    for path in glob.glob(os.path.join(out, "part-*")):
        with open(path) as f:
            got += [json.loads(line) for line in f if line.strip()]
    want = pg.sql("SELECT id, label, price FROM prices ORDER BY id")
    assert sorted([str(x["id"]), x["label"], x["price"]] for x in got) == \
        sorted([w[0], w[1], float(w[2])] for w in want)


RT_COLS = ("id bigint PRIMARY KEY, s int2, f real, d numeric(12, 3), dn numeric, dt date, "
           "tm time, tm2 time(2), ts timestamp, ts3 timestamp(3), ltz timestamptz, "
           "ints integer[], texts text[], nums numeric(10, 2)[], days date[], vc varchar(10), "
           "ch char(3), dbl double precision")

# The source rows, computed by PostgreSQL from i (so they are written without Sluice):
# negative and pre-1970 / pre-2000 values, microseconds, NULLs inside arrays, empty
# arrays, quoting in text elements, and a row of NULLs every 11th id.
RT_FILL = """INSERT INTO {t} SELECT i,
  CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 263 % 65535) - 32767 END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 0.375 - 50)::real END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 7654321) % 1000000000 - 500000000) / 1000.0 END,
  CASE WHEN i % 11 = 0 THEN NULL WHEN i % 3 = 0 THEN 12345678901234567890.123456789012345678
       ELSE -(i::numeric / 7)::numeric(30, 18) END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE date '2001-03-04' + (i * 97 - 14000) END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE time '00:00:00' + (i * 7919 % 86400) * interval '1 second'
       + (i * 123457 % 1000000) * interval '1 microsecond' END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE time '00:00:00' + (i * 7919 % 86400) * interval '1 second'
       + (i * 1237 % 100) * interval '10 millisecond' END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE timestamp '1999-12-31 23:59:59.999999'
       + (i - 150) * interval '3 day 1 hour 17 second' + (i * 1013 % 1000000) * interval '1 microsecond' END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE timestamp '1969-12-31 23:59:58' + i * interval '1.001 second' END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE timestamptz '2026-06-01 00:00:00+00' - i * interval '37 hour 3.000007 second' END,
  CASE WHEN i % 11 = 0 THEN NULL WHEN i % 5 = 0 THEN '{{}}'::int[] ELSE ARRAY[i, NULL, -i * 1000003] END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE ARRAY['a"b' || i, 'x,y {{}}', NULL, ''] END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE ARRAY[i * 1.25, -0.01, NULL, 99999999.99]::numeric(10, 2)[] END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE ARRAY[date '1970-01-01' - i, date '2000-01-01' + i] END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE 'v' || i END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE 'c' || (i % 10) END,
  CASE WHEN i % 11 = 0 THEN NULL ELSE i / 3.0 END
FROM generate_series(1, {n}) i"""


def test_catalog_types_round_trip(cluster, workdir, pg):
    """Every type Flink's PostgreSQL mapping gives a catalog column is read
    (scan and lookup) and written (upsert sink) by the jdbc connector: a
    table PostgreSQL filled is copied by a scan into one table and by a
    lookup join into another, and a third is written from values computed in
    SQL. PostgreSQL itself compares the copies with the source (row
    equality, numerics by value), and the SQL-written rows are compared
    with a Python model, as psql prints them."""
    n = 120
    for t in ("rt_src", "rt_scan", "rt_look"):
        pg.sql(f"CREATE TABLE {t} ({RT_COLS})")
    pg.sql(RT_FILL.format(t="rt_src", n=n))
    # numerics at the edges of numeric's base-10000 digits, scanned and written back
    edges = ["0", "0.001", "-0.001", "9999.999", "10000", "-10000.001", "100000000.1",
             "999999999.999", "-999999999.999", "0.01", "1000.0"]
    big = ["0", "1e-18", "-1e-18", "99999999999999999999.999999999999999999",
           "-10000000000000000000", "0.000100000000000001", "123456789", "1e19"]
    pg.sql("INSERT INTO rt_src (id, d, dn, nums) VALUES " + ", ".join(
        f"({1000 + j}, {d}, {dn}, ARRAY[{d}::numeric / 1000000, {d}::numeric % 100]::numeric(10, 2)[])"
        for j, (d, dn) in enumerate(zip(edges, big + ["0"] * (len(edges) - len(big))))))
    pg.sql("CREATE TABLE rt_sql (id bigint PRIMARY KEY, d numeric(12, 3), dt date, tm time(3), "
           "ts timestamp(3), s smallint, f real, ints bigint[], words varchar(8)[])")
    cluster.add_tm(slots=2)
    r = run_sql(cluster, workdir, "rt.sql", catalog(pg) + f"""
CREATE TABLE k (id BIGINT, pt AS PROCTIME()) WITH (
    'connector' = 'datagen', 'rows-per-second' = '100000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
EXECUTE STATEMENT SET BEGIN
INSERT INTO mypg.postgres.rt_scan SELECT * FROM mypg.postgres.rt_src;
INSERT INTO mypg.postgres.rt_look
SELECT s.* FROM k JOIN mypg.postgres.rt_src FOR SYSTEM_TIME AS OF k.pt AS s ON k.id = s.id;
INSERT INTO mypg.postgres.rt_sql
SELECT id, CAST(CONCAT(CAST(id * 7 - 400 AS STRING), '.', CAST(id % 10 AS STRING), '05') AS DECIMAL(12, 3)),
       CAST(CONCAT('19', CAST(50 + id % 50 AS STRING), '-0', CAST(1 + id % 9 AS STRING), '-2', CAST(id % 8 AS STRING)) AS DATE),
       CAST(CONCAT('1', CAST(id % 10 AS STRING), ':3', CAST(id % 6 AS STRING), ':0', CAST(id % 10 AS STRING), '.', CAST(100 + id AS STRING)) AS TIME(3)),
       CAST(CONCAT('2026-02-0', CAST(1 + id % 9 AS STRING), ' 0', CAST(id % 10 AS STRING), ':00:00.', CAST(100 + id * 3 AS STRING)) AS TIMESTAMP(3)),
       CAST(id - 60 AS SMALLINT), CAST(id * 0.5 AS FLOAT),
       ARRAY[id, id * 1000000000000], ARRAY[CONCAT('w', CAST(id AS STRING)), CAST(NULL AS STRING)]
FROM k;
END;
""")
    assert r.returncode == 0 and "[ERROR]" not in r.stdout, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    for t in ("rt_scan", "rt_look"):
        only = "" if t == "rt_scan" else f"WHERE id <= {n}"  # the lookup's keys are 1..n
        assert pg.sql(f"SELECT count(*) FROM {t}") == [[str(n + (0 if only else len(edges)))]]
        diff = pg.sql(f"SELECT s.id, d.id FROM (SELECT * FROM rt_src {only}) s FULL JOIN {t} d "
                      "ON s.id = d.id WHERE (s.*) IS DISTINCT FROM (d.*)")
        assert diff == [], (t, diff[:3], pg.sql(f"SELECT * FROM {t} WHERE id = "
                                                f"{(diff[0][0] or diff[0][1])}"),
                            pg.sql(f"SELECT * FROM rt_src WHERE id = {(diff[0][0] or diff[0][1])}"))
    # a DECIMAL(38, 18) column keeps 18 fraction digits; the value is the same
    assert pg.sql("SELECT dn::text FROM rt_scan WHERE id = 3") == \
        [["12345678901234567890.123456789012345678"]]
    assert pg.sql("SELECT dn::text FROM rt_scan WHERE id = 1") == [["-0.142857142857142857"]]
    got = pg.sql("SELECT id, d, dt, tm, ts, s, f, ints, words FROM rt_sql ORDER BY id")
    want = []
    for i in range(1, n + 1):
        d = i * 7 - 400
        want.append([str(i), f"{d}.{i % 10}05",
                     f"19{50 + i % 50}-0{1 + i % 9}-2{i % 8}",
                     f"1{i % 10}:3{i % 6}:0{i % 10}.{100 + i}".rstrip("0"),
                     f"2026-02-0{1 + i % 9} 0{i % 10}:00:00.{100 + i * 3}".rstrip("0"),
                     str(i - 60), str(i * 0.5).removesuffix(".0"),
                     f"{{{i},{i * 1000000000000}}}", f"{{w{i},NULL}}"])
    assert got == want


def test_show_create_hides_the_password_and_changes_are_read_again(cluster, workdir, pg):
    """SHOW CREATE TABLE of a catalog table prints its definition with the
    password hidden; the table is read from the server by every statement
    that names it (as Flink's JdbcCatalog.getTable), so a column added in the
    database is seen by the next DESCRIBE and by the next job of the same
    session, which copies it through a parallel scan (an OPTIONS hint)."""
    from test_sql import Session
    pg.sql("CREATE TABLE evolving (id bigint PRIMARY KEY, a text)")
    pg.sql("INSERT INTO evolving VALUES (1, 'x'), (2, NULL)")
    pg.sql("CREATE TABLE evolved (id bigint PRIMARY KEY, a text, b numeric(5, 1))")
    cluster.add_tm(slots=2)
    s = Session(cluster)
    try:
        assert "[INFO]" in s.run(catalog(pg, password="secret").strip())
        out = s.run("SHOW CREATE TABLE mypg.postgres.evolving;")
        assert "secret" not in out, out
        assert out.strip().endswith(
            "CREATE TABLE `mypg`.`postgres`.`evolving` (\n"
            "  `id` BIGINT NOT NULL,\n"
            "  `a` STRING,\n"
            "  CONSTRAINT `evolving_pkey` PRIMARY KEY (`id`) NOT ENFORCED\n"
            ")\n"
            "WITH (\n"
            "  'connector' = 'jdbc',\n"
            "  'password' = '******',\n"
            "  'table-name' = 'public.evolving',\n"
            f"  'url' = 'jdbc:postgresql://127.0.0.1:{pg.port}/postgres',\n"
            "  'username' = 'postgres'\n"
            ")"), out
        assert describe(s.run("DESCRIBE mypg.postgres.evolving;")) == {
            "id": ("BIGINT", False, "PRI"), "a": ("STRING", True, "")}
        pg.sql("ALTER TABLE evolving ADD COLUMN b numeric(5, 1)")
        pg.sql("UPDATE evolving SET b = id * 2.5")
        assert describe(s.run("DESCRIBE mypg.postgres.evolving;")) == {
            "id": ("BIGINT", False, "PRI"), "a": ("STRING", True, ""),
            "b": ("DECIMAL(5, 1)", True, "")}
        # with Flink's parallel scan through a dynamic options hint
        assert "[INFO]" in s.run("SET 'parallelism.default' = '2';")
        out = s.run("INSERT INTO mypg.postgres.evolved SELECT id + 100, a, b FROM "
                    "mypg.postgres.evolving /*+ OPTIONS('scan.partition.column' = 'id', "
                    "'scan.partition.num' = '2', 'scan.partition.lower-bound' = '1', "
                    "'scan.partition.upper-bound' = '2') */;")
        jids = job_ids(out)
        assert len(jids) == 1, out
    finally:
        s.close()
    job = finish(cluster, jids[0])
    assert {v["parallelism"] for v in job["vertices"]} == {2}, job["vertices"]
    assert pg.sql("SELECT id, a, b FROM evolved ORDER BY id") == [
        ["101", "x", "2.5"], ["102", None, "5.0"]]
