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
        (catalog(pg) + "CREATE TABLE s (id BIGINT, amount DECIMAL(10, 2)) WITH "
         "('connector' = 'datagen', 'number-of-rows' = '3');\n"
         "INSERT INTO mypg.postgres.money SELECT * FROM s;",
         "INSERT INTO mypg.postgres.money: column 'amount' is DECIMAL(10, 2); the jdbc "
         "connector cannot carry that type yet"),
        (catalog(pg) + "SELECT * FROM mypg.postgres.money;",
         "line 2, column 15: table 'mypg.postgres.money' (connector 'jdbc'): column 'amount' is "
         "DECIMAL(10, 2); the jdbc connector cannot carry that type yet"),
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
