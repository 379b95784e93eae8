"""The statements a Flink user pastes into `sluice sql` besides queries:
inline PRIMARY KEY, CREATE TABLE ... LIKE / AS SELECT, ALTER TABLE / VIEW,
SHOW CREATE / TABLES / VIEWS / COLUMNS, catalogs and databases with
qualified names, OPTIONS hints and EXPLAIN details -- each from SQL text
through `sluice sql -f` on a live cluster. Inputs are sequences, so every
expected row and every expected SHOW result is written down here."""
import decimal
import glob
import json
import os
import re

from conftest import wait_for

from test_sql import run_sql, job_ids, finish


def file_rows(out_dir):
    got = []
    for path in sorted(glob.glob(os.path.join(out_dir, "**", "part-*"), recursive=True)):
        with open(path) as f:
            got += [json.loads(line) for line in f if line.strip()]
    return got


def pos(text, marker, nth=1):
    """'line L, column C' of the nth occurrence of marker in a script."""
    i = -1
    for _ in range(nth):
        i = text.index(marker, i + 1)
    line = text.count("\n", 0, i) + 1
    return f"line {line}, column {i - (text.rfind(chr(10), 0, i) + 1) + 1}"


def blocks(out):
    """The client's answers, one per statement (the text after each prompt line)."""
    parts = re.split(r"^Flink SQL> .*$", out, flags=re.M)
    return [p.strip("\n") for p in parts[1:]]


def tableau(*rows, head):
    """Flink's boxed table, as the client prints it (right-aligned cells)."""
    cols = list(zip(head, *rows)) if rows else [(h,) for h in head]
    w = [max(len(str(x)) for x in c) for c in cols]
    line = "+" + "+".join("-" * (n + 2) for n in w) + "+"
    out = [line, "| " + " | ".join(str(h).rjust(n) for h, n in zip(head, w)) + " |", line]
    for r in rows:
        out.append("| " + " | ".join(str(x).rjust(n) for x, n in zip(r, w)) + " |")
    if rows:
        out.append(line)
        out.append(f"{len(rows)} row{'' if len(rows) == 1 else 's'} in set")
    else:
        out.append("Empty set")
    return "\n".join(out)


SEQ = """
CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '{n}');
"""


def test_inline_primary_key_describe_and_refusals(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "pk")
    r = run_sql(cluster, workdir, "pk.sql", SEQ.format(n=20) + f"""
CREATE TABLE per_key (k BIGINT PRIMARY KEY NOT ENFORCED, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
DESCRIBE per_key;
CREATE TABLE two (a INT, b STRING, CONSTRAINT my_pk PRIMARY KEY (a, b) NOT ENFORCED)
  WITH ('connector' = 'blackhole');
DESCRIBE two;
INSERT INTO per_key SELECT id % 3 AS k, COUNT(*) AS c FROM seq GROUP BY id % 3;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    b = blocks(r.stdout)
    assert b[2] == tableau(("k", "BIGINT", "FALSE", "PRI", "", ""), ("c", "BIGINT", "TRUE", "", "", ""),
                           head=["name", "type", "null", "key", "extras", "watermark"])
    assert b[4] == tableau(("a", "INT", "FALSE", "PRI", "", ""), ("b", "STRING", "FALSE", "PRI", "", ""),
                           head=["name", "type", "null", "key", "extras", "watermark"])
    finish(cluster, job_ids(r.stdout)[0])
    final = {}
    for row in file_rows(out):
        if row.get("op") in ("-U", "-D"):
            del final[row["k"]]
        else:
            final[row["k"]] = row["c"]
    assert final == {k: sum(1 for i in range(1, 21) if i % 3 == k) for k in range(3)}

    for text, where, what in [
        ("CREATE TABLE x (a INT PRIMARY KEY) WITH ('connector' = 'blackhole');",
         "PRIMARY", "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint"),
        ("CREATE TABLE x (a INT, PRIMARY KEY (a) ENFORCED) WITH ('connector' = 'blackhole');",
         "PRIMARY", "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint."),
        ("CREATE TABLE x (a INT PRIMARY KEY NOT ENFORCED, b INT, PRIMARY KEY (b) NOT ENFORCED)"
         " WITH ('connector' = 'blackhole');",
         "PRIMARY KEY (b)", "Duplicate primary key definition"),
    ]:
        r = run_sql(cluster, workdir, "bad.sql", text)
        assert r.returncode == 1
        assert f"{pos(text, where)}: {what}" in r.stdout, r.stdout


def test_create_table_like_merges_as_flink(cluster, workdir):
    cluster.add_tm(slots=1)
    src, dst = os.path.join(workdir, "src"), os.path.join(workdir, "dst")
    os.makedirs(src)
    with open(os.path.join(src, "a.json"), "w") as f:
        for i in range(1, 6):
            f.write(json.dumps({"id": i, "name": f"n{i}"}) + "\n")
    r = run_sql(cluster, workdir, "like.sql", f"""
CREATE TABLE base (id BIGINT, name STRING, twice AS id * 2, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
CREATE TABLE copy (extra AS id + 100) WITH ('path' = '{dst}') LIKE base (EXCLUDING CONSTRAINTS);
SHOW CREATE TABLE copy;
CREATE TABLE plain (n2 AS UPPER(name)) WITH ('path' = '{dst}') LIKE base (EXCLUDING GENERATED, EXCLUDING CONSTRAINTS);
DESCRIBE plain;
INSERT INTO copy SELECT id, name FROM base;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    b = blocks(r.stdout)
    assert b[2] == f"""CREATE TABLE `default_catalog`.`default_database`.`copy` (
  `id` BIGINT,
  `name` STRING,
  `twice` AS id * 2,
  `extra` AS id + 100
)
WITH (
  'connector' = 'filesystem',
  'format' = 'json',
  'path' = '{dst}'
)"""
    assert b[4] == tableau(("id", "BIGINT", "TRUE", "", "", ""), ("name", "STRING", "TRUE", "", "", ""),
                           ("n2", "STRING", "TRUE", "", "AS UPPER(name)", ""),
                           head=["name", "type", "null", "key", "extras", "watermark"])
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(file_rows(dst), key=lambda x: x["id"]) == [
        {"id": i, "name": f"n{i}"} for i in range(1, 6)]

    base = f"""CREATE TABLE base (id BIGINT, ts TIMESTAMP(3), g AS id + 1,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json');
"""
    for text, where, what in [
        ("CREATE TABLE c (id INT) LIKE base;", ("id INT", 1),
         "A column named 'id' already exists in the base table."),
        ("CREATE TABLE c (g AS id + 2) LIKE base;", ("g AS id + 2", 1),
         "A generated column named 'g' already exists in the base table. You might want to "
         "specify EXCLUDING GENERATED or OVERWRITING GENERATED."),
        ("CREATE TABLE c (WATERMARK FOR ts AS ts) LIKE base;", ("WATERMARK", 2),
         "There already exists a watermark spec for column 'ts' in the base table."),
        ("CREATE TABLE c (PRIMARY KEY (id) NOT ENFORCED) LIKE base;", ("PRIMARY", 2),
         "The base table already has a primary key. You might want to specify EXCLUDING "
         "CONSTRAINTS."),
        ("CREATE TABLE c WITH ('format' = 'csv') LIKE base (INCLUDING ALL);", ("'format' = 'csv'", 1),
         "There already exists an option ['format' -> 'json'] in the base table. You might want "
         "to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS."),
        ("CREATE TABLE c LIKE base (OVERWRITING ALL);", ("OVERWRITING", 1),
         "Illegal merging strategy 'OVERWRITING' for 'ALL' option."),
        ("CREATE TABLE c LIKE nope;", ("LIKE nope", 1),
         "Source table 'nope' of the LIKE clause can not be found"),
    ]:
        r = run_sql(cluster, workdir, "bad.sql", base + text)
        assert r.returncode == 1
        assert f"{pos(base + text, *where)}: {what}" in r.stdout, r.stdout

    # the OVERWRITING forms take the derived table's definitions
    r = run_sql(cluster, workdir, "over.sql", base + """
CREATE TABLE c (g AS id + 2, WATERMARK FOR ts AS ts) WITH ('format' = 'csv')
  LIKE base (OVERWRITING GENERATED, OVERWRITING WATERMARKS, EXCLUDING CONSTRAINTS);
DESCRIBE c;
""")
    assert r.returncode == 0, r.stdout
    assert blocks(r.stdout)[2] == tableau(
        ("id", "BIGINT", "TRUE", "", "", ""), ("ts", "TIMESTAMP(3) *ROWTIME*", "TRUE", "", "", "ts"),
        ("g", "BIGINT", "TRUE", "", "AS id + 2", ""),
        head=["name", "type", "null", "key", "extras", "watermark"])


def test_create_table_as_select_runs_the_insert(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "ctas")
    r = run_sql(cluster, workdir, "ctas.sql", SEQ.format(n=50) + f"""
CREATE TABLE doubled WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json')
AS SELECT id, id * 2 AS d, CAST(id AS STRING) AS s FROM seq WHERE id % 5 = 0;
DESCRIBE doubled;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[INFO] Submitting SQL update statement to the cluster..." in r.stdout
    b = blocks(r.stdout)
    assert b[2] == tableau(("id", "BIGINT", "TRUE", "", "", ""), ("d", "BIGINT", "TRUE", "", "", ""),
                           ("s", "STRING", "TRUE", "", "", ""),
                           head=["name", "type", "null", "key", "extras", "watermark"])
    job = finish(cluster, job_ids(r.stdout)[0])
    assert job["name"] == "insert-into_default_catalog.default_database.doubled"
    assert sorted(file_rows(out), key=lambda x: x["id"]) == [
        {"id": i, "d": 2 * i, "s": str(i)} for i in range(5, 51, 5)]

    # a query that does not plan refuses the statement with the query's position
    r = run_sql(cluster, workdir, "bad.sql", SEQ.format(n=5) + f"""
CREATE TABLE t2 WITH ('connector' = 'filesystem', 'path' = '{out}2', 'format' = 'json')
AS SELECT nope FROM seq;
""")
    assert r.returncode == 1 and "line 6, column 11: unknown column 'nope'" in r.stdout, r.stdout


def test_alter_table_and_view_and_show_create_round_trip(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "alter")
    script = SEQ.format(n=10) + f"""
CREATE TABLE sink (id BIGINT, name STRING, ts TIMESTAMP(3), x AS id + 1,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  COMMENT 'the sink'
  WITH ('connector' = 'filesystem', 'path' = '{out}-old', 'format' = 'csv');
ALTER TABLE sink SET ('path' = '{out}', 'format' = 'json');
ALTER TABLE sink RESET ('json.ignore-parse-errors');
ALTER TABLE sink ADD (extra INT FIRST, PRIMARY KEY (id) NOT ENFORCED);
ALTER TABLE sink MODIFY name STRING NOT NULL AFTER ts;
ALTER TABLE sink DROP (extra);
ALTER TABLE sink RENAME name TO label;
ALTER TABLE sink DROP WATERMARK;
ALTER TABLE sink RENAME TO sink2;
SHOW CREATE TABLE sink2;
SHOW TABLES;
CREATE VIEW v AS SELECT id FROM seq;
ALTER VIEW v AS SELECT id, CAST(id * 10 AS STRING) AS label FROM seq;
ALTER VIEW v RENAME TO v2;
SHOW VIEWS;
SHOW CREATE VIEW v2;
SHOW COLUMNS FROM sink2 LIKE '%l%';
SHOW COLUMNS IN sink2 NOT LIKE '%l%';
INSERT INTO sink2 (id, label, ts) SELECT id, label, TIMESTAMP '2026-01-01 00:00:00' FROM v2;
"""
    r = run_sql(cluster, workdir, "alter.sql", script)
    assert r.returncode == 0, r.stdout + r.stderr
    b = blocks(r.stdout)
    created = f"""CREATE TABLE `default_catalog`.`default_database`.`sink2` (
  `id` BIGINT NOT NULL,
  `ts` TIMESTAMP(3),
  `label` STRING NOT NULL,
  `x` AS id + 1,
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
COMMENT 'the sink'
WITH (
  'connector' = 'filesystem',
  'format' = 'json',
  'path' = '{out}'
)"""
    assert b[10] == created
    assert b[11] == tableau(("seq",), ("sink2",), head=["table name"])
    assert b[15] == tableau(("v2",), head=["view name"])
    assert b[16] == ("CREATE VIEW `default_catalog`.`default_database`.`v2` (\n  `id`,\n  `label`\n)\n"
                     "AS SELECT id, CAST(id * 10 AS STRING) AS label FROM seq")
    assert b[17] == tableau(("label", "STRING", "FALSE", "", "", ""),
                            head=["name", "type", "null", "key", "extras", "watermark"])
    assert b[18] == tableau(("id", "BIGINT", "FALSE", "PRI", "", ""), ("ts", "TIMESTAMP(3)", "TRUE", "", "", ""),
                            ("x", "BIGINT", "TRUE", "", "AS id + 1", ""),
                            head=["name", "type", "null", "key", "extras", "watermark"])
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(file_rows(out), key=lambda x: x["id"]) == [
        {"id": i, "ts": "2026-01-01 00:00:00", "label": str(i * 10)} for i in range(1, 11)]

    # the round trip: SHOW CREATE TABLE's text, run again under another name, shows the same
    again = created.replace("`sink2`", "`sink3`")
    r = run_sql(cluster, workdir, "again.sql", again + ";\nSHOW CREATE TABLE sink3;\n"
                "SHOW CREATE TABLE `default_catalog`.`default_database`.sink3;\n")
    assert r.returncode == 0, r.stdout
    assert blocks(r.stdout)[1] == again and blocks(r.stdout)[2] == again
    view = b[16].replace("`v2`", "`v3`")
    r = run_sql(cluster, workdir, "view.sql", SEQ.format(n=3) + view + ";\nSHOW CREATE VIEW v3;\n")
    assert r.returncode == 0, r.stdout
    assert blocks(r.stdout)[2] == view

    for text, where, what in [
        ("ALTER TABLE sink ADD id INT;", "id INT;",
         "Column `id` already exists in the table."),
        ("ALTER TABLE sink MODIFY nope INT;", "nope",
         "Column `nope` does not exist in the table."),
        ("ALTER TABLE sink DROP ts;", "ts;",
         "The column `ts` is referenced by watermark expression."),
        ("ALTER TABLE sink DROP id;", "id;",
         "The column `id` is referenced by computed column `x`."),
        ("ALTER TABLE sink ADD WATERMARK FOR ts AS ts;", "WATERMARK FOR ts AS ts;",
         "The current table has already defined the watermark strategy `ts` AS ts - INTERVAL '2' "
         "SECOND. You might want to drop it before adding a new one."),
        ("ALTER TABLE sink RESET ('connector');", "'connector');",
         "ALTER TABLE RESET does not support changing 'connector'"),
        ("ALTER TABLE sink SET ('fromat' = 'csv');", "'fromat'",
         "table 'sink': unknown option 'fromat' for connector 'filesystem' (did you mean 'format'?)"),
        ("ALTER TABLE nope RENAME TO x;", "ALTER TABLE nope",
         "Table `default_catalog`.`default_database`.`nope` doesn't exist or is a temporary table."),
        ("ALTER VIEW sink RENAME TO x;", "ALTER VIEW", "ALTER VIEW for a table is not allowed"),
    ]:
        full = script.split("ALTER TABLE sink SET")[0] + text
        r = run_sql(cluster, workdir, "bad.sql", full)
        assert r.returncode == 1
        assert f"{pos(full, where)}: {what}" in r.stdout, (text, r.stdout)
    r = run_sql(cluster, workdir, "ifex.sql", "ALTER TABLE IF EXISTS nope SET ('a' = 'b');")
    assert r.returncode == 0 and "[INFO] Execute statement succeed." in r.stdout, r.stdout


def test_catalogs_databases_and_qualified_names(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "cat")
    r = run_sql(cluster, workdir, "cat.sql", f"""
SHOW CURRENT CATALOG;
SHOW CURRENT DATABASE;
CREATE DATABASE db1;
CREATE DATABASE IF NOT EXISTS db1;
USE db1;
CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '12');
CREATE CATALOG c2 WITH ('type' = 'generic_in_memory');
CREATE DATABASE c2.sinks;
CREATE TABLE c2.sinks.results (id BIGINT, tag STRING)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE default_database.seq (id INT) WITH ('connector' = 'blackhole');
SHOW TABLES;
SHOW TABLES FROM c2.sinks;
SHOW CATALOGS;
SHOW DATABASES;
SHOW DATABASES FROM c2;
USE CATALOG c2;
SHOW CURRENT DATABASE;
USE sinks;
SHOW TABLES;
SET 'pipeline.name' = 'qualified';
INSERT INTO results SELECT s.id, 'db1' AS tag FROM default_catalog.db1.seq AS s WHERE s.id % 4 = 0;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    b = blocks(r.stdout)
    assert b[0] == tableau(("default_catalog",), head=["current catalog name"])
    assert b[1] == tableau(("default_database",), head=["current database name"])
    assert b[10] == tableau(("seq",), head=["table name"])
    assert b[11] == tableau(("results",), head=["table name"])
    assert b[12] == tableau(("c2",), ("default_catalog",), head=["catalog name"])
    assert b[13] == tableau(("db1",), ("default_database",), head=["database name"])
    assert b[14] == tableau(("default",), ("sinks",), head=["database name"])
    assert b[16] == tableau(("default",), head=["current database name"])
    assert b[18] == tableau(("results",), head=["table name"])
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(file_rows(out), key=lambda x: x["id"]) == [{"id": i, "tag": "db1"} for i in (4, 8, 12)]

    # the job's name names the sink's catalog and database (Flink's default name)
    r = run_sql(cluster, workdir, "name.sql", f"""
CREATE DATABASE db2;
CREATE TABLE db2.seq (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '3');
CREATE TABLE db2.sunk (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}2', 'format' = 'json');
INSERT INTO db2.sunk SELECT id FROM db2.seq;
""")
    assert r.returncode == 0, r.stdout
    job = finish(cluster, job_ids(r.stdout)[0])
    assert job["name"] == "insert-into_default_catalog.db2.sunk"
    assert sorted(x["id"] for x in file_rows(out + "2")) == [1, 2, 3]

    # a qualified table or view reads as its last part; a view's names are where it was made
    r = run_sql(cluster, workdir, "alias.sql", f"""
CREATE DATABASE db3;
USE db3;
CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '5');
CREATE VIEW v AS SELECT id FROM seq WHERE id > 2;
USE default_database;
CREATE TABLE sunk (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}3', 'format' = 'json');
INSERT INTO sunk SELECT v.id FROM db3.v JOIN default_catalog.db3.seq ON v.id = seq.id;
""")
    assert r.returncode == 0, r.stdout
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(x["id"] for x in file_rows(out + "3")) == [3, 4, 5]

    for text, where, what in [
        ("USE nope;", "line 1, column 1", "A database with name [nope] does not exist in the catalog: [default_catalog]."),
        ("USE CATALOG nope;", "line 1, column 1", "A catalog with name [nope] does not exist."),
        ("CREATE TABLE nope.t (a INT) WITH ('connector' = 'blackhole');", "line 1, column 1",
         "Database nope does not exist in Catalog default_catalog"),
        ("CREATE DATABASE d; CREATE DATABASE d;", "line 1, column 20",
         "Database d already exists in Catalog default_catalog."),
        ("CREATE DATABASE d; CREATE TABLE d.t (a INT) WITH ('connector' = 'blackhole'); DROP DATABASE d;",
         "line 1, column 79", "Database d in catalog default_catalog is not empty"),
        ("DROP DATABASE default_database;", "line 1, column 1", "Cannot drop a database which is currently in use."),
        ("CREATE CATALOG h WITH ('type' = 'hive');", "line 1, column 1",
         "catalog 'h': Sluice has the in-memory catalog and PostgreSQL's JDBC catalog: WITH ('type' = 'generic_in_memory') or ('type' = 'jdbc', ...), not 'hive'"),
        ("SELECT * FROM db9.t;", "line 1, column 15", "table or view 'db9.t' does not exist in this session"),
    ]:
        r = run_sql(cluster, workdir, "bad.sql", text)
        assert r.returncode == 1
        assert f"{where}: {what}" in r.stdout, (text, r.stdout)
    r = run_sql(cluster, workdir, "cascade.sql", """
CREATE DATABASE d;
CREATE TABLE d.t (a INT) WITH ('connector' = 'datagen');
CREATE VIEW d.v AS SELECT a FROM d.t;
DROP DATABASE d CASCADE;
SHOW DATABASES;
CREATE DATABASE d;
SHOW TABLES FROM d;
DROP DATABASE IF EXISTS nope;
""")
    assert r.returncode == 0, r.stdout
    b = blocks(r.stdout)
    assert b[4] == tableau(("default_database",), head=["database name"])
    assert b[6] == tableau(head=["table name"])


def test_options_hints_and_explain_details(cluster, workdir):
    cluster.add_tm(slots=1)
    a, bdir, out, out2 = (os.path.join(workdir, x) for x in ("a", "b", "out", "out2"))
    for d, ids in ((a, range(1, 4)), (bdir, range(10, 13))):
        os.makedirs(d)
        with open(os.path.join(d, "f.json"), "w") as f:
            for i in ids:
                f.write(json.dumps({"id": i}) + "\n")
    tables = f"""
CREATE TABLE src (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{a}', 'format' = 'json');
CREATE TABLE snk (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
"""
    r = run_sql(cluster, workdir, "hint.sql", tables + f"""
INSERT INTO snk /*+ OPTIONS('path' = '{out2}') */
SELECT id * 2 AS id FROM src /*+ OPTIONS('path' = '{bdir}') */ AS s WHERE s.id > 10;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(x["id"] for x in file_rows(out2)) == [22, 24]
    assert not os.path.exists(out)

    # the table itself is unchanged by a hint
    r = run_sql(cluster, workdir, "plain.sql", tables + "INSERT INTO snk SELECT id FROM src;\n")
    assert r.returncode == 0, r.stdout
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted(x["id"] for x in file_rows(out)) == [1, 2, 3]

    for text, where, what in [
        ("SELECT * FROM src /*+ OPTIONS('pth' = 'x') */;", "'pth'",
         "table 'src': unknown option 'pth' for connector 'filesystem' (did you mean 'path'?)"),
        ("SELECT * FROM src /*+ LOOKUP('a' = 'b') */;", "LOOKUP",
         "unknown table hint 'LOOKUP'"),
        ("SELECT * FROM src /*+ OPTIONS('path' = '/x') */ UNION ALL SELECT * FROM src;",
         "src;", "table 'src' is used with different OPTIONS hints in one statement"),
    ]:
        r = run_sql(cluster, workdir, "bad.sql", tables + text)
        assert r.returncode == 1
        assert f"{pos(tables + text, where)}: {what}" in r.stdout, (text, r.stdout)

    r = run_sql(cluster, workdir, "explain.sql", tables + """
EXPLAIN PLAN FOR SELECT id FROM src;
EXPLAIN ESTIMATED_COST, CHANGELOG_MODE SELECT id, COUNT(*) AS c FROM src GROUP BY id;
EXPLAIN JSON_EXECUTION_PLAN, PLAN_ADVICE INSERT INTO snk SELECT id FROM src;
""")
    assert r.returncode == 0, r.stdout
    b = blocks(r.stdout)
    assert b[2].startswith("== Optimized Execution Plan ==\nsrc[file-source] uid=source-src {")
    assert "changelogMode" not in b[2]
    assert "agg[group_aggregate] uid=agg-src-" in b[3] and "changelogMode=[I,UB,UA]" in b[3]
    assert "snk[file] uid=sink-snk" in b[4]
    r = run_sql(cluster, workdir, "bad.sql", tables + "EXPLAIN FOO SELECT id FROM src;")
    assert r.returncode == 1
    assert ("line 4, column 9: unknown EXPLAIN detail 'FOO' (ESTIMATED_COST, CHANGELOG_MODE, "
            "JSON_EXECUTION_PLAN or PLAN_ADVICE)") in r.stdout, r.stdout


def partition_files(out):
    """{relative directory: [rows of every part file in it]} under out."""
    got = {}
    def order(path):  # part-<i>[-<n>] in write order
        return [int(x) for x in re.findall(r"\d+", os.path.basename(path))]
    for path in sorted(glob.glob(os.path.join(out, "**", "part-*"), recursive=True), key=order):
        rel = os.path.relpath(os.path.dirname(path), out)
        with open(path) as f:
            got.setdefault(rel, []).extend(f.read().splitlines())
    return got


def test_partitioned_by_writes_flinks_directories_and_reads_them_back(cluster, workdir):
    cluster.add_tm(slots=2)
    n = 60
    for fmt, ckpt in (("json", False), ("csv", True)):
        out, back = os.path.join(workdir, f"parts-{fmt}"), os.path.join(workdir, f"back-{fmt}")
        table = f"""
CREATE TABLE parts (id BIGINT, name STRING, dt STRING, hr INT)
  PARTITIONED BY (dt, hr)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = '{fmt}');
"""
        r = run_sql(cluster, workdir, f"w-{fmt}.sql", SEQ.format(n=n) + table + f"""
SET 'parallelism.default' = '2';
{"SET 'execution.checkpointing.interval' = '200 ms';" if ckpt else ""}
INSERT INTO parts SELECT id, CONCAT('n', CAST(id AS STRING)) AS name,
  CASE WHEN id % 10 = 0 THEN CAST(NULL AS STRING) WHEN id % 2 = 0 THEN '2026-01-01' ELSE 'x/y:z' END AS dt,
  CAST(id % 3 AS INT) AS hr
FROM seq;
""")
        assert r.returncode == 0, r.stdout + r.stderr
        finish(cluster, job_ids(r.stdout)[0])

        # Flink's layout: <path>/dt=<v>/hr=<v>/, '/' and ':' escaped, NULL the default
        # partition, and the rows without the partition columns
        want = {}
        for i in range(1, n + 1):
            dt = "__DEFAULT_PARTITION__" if i % 10 == 0 else "2026-01-01" if i % 2 == 0 else "x%2Fy%3Az"
            line = json.dumps({"id": i, "name": f"n{i}"}, separators=(",", ":")) if fmt == "json" \
                else f"{i},n{i}"
            want.setdefault(f"dt={dt}/hr={i % 3}", []).append(line)
        got = partition_files(out)
        assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
        assert not glob.glob(os.path.join(out, "**", ".part-*"), recursive=True)

        # and the source reads them back with the partition columns from the path
        r = run_sql(cluster, workdir, f"r-{fmt}.sql", table + f"""
CREATE TABLE back (id BIGINT, name STRING, dt STRING, hr INT)
  WITH ('connector' = 'filesystem', 'path' = '{back}', 'format' = 'json');
SET 'parallelism.default' = '2';
INSERT INTO back SELECT id, name, dt, hr FROM parts WHERE hr <> 2;
""")
        assert r.returncode == 0, r.stdout + r.stderr
        finish(cluster, job_ids(r.stdout)[0])
        rows = sorted(file_rows(back), key=lambda x: x["id"])
        assert rows == [{"id": i, "name": f"n{i}",
                         "dt": None if i % 10 == 0 else "2026-01-01" if i % 2 == 0 else "x/y:z",
                         "hr": i % 3} for i in range(1, n + 1) if i % 3 != 2]

    for text, where, what in [
        ("CREATE TABLE p (a INT, b INT) PARTITIONED BY (c) WITH ('connector' = 'filesystem', "
         "'path' = '/tmp/x', 'format' = 'json');", "c)",
         "Partition column 'c' not defined in the table schema of table 'p'"),
        ("CREATE TABLE p (a INT, b AS a + 1) PARTITIONED BY (b) WITH ('connector' = 'filesystem', "
         "'path' = '/tmp/x', 'format' = 'json');", "b)",
         "partition column 'b' of table 'p' must be a physical column"),
        ("CREATE TABLE p (a INT, b AS a) PARTITIONED BY (a) WITH ('connector' = 'filesystem', "
         "'path' = '/tmp/x', 'format' = 'json');", "PARTITIONED",
         "table 'p': every physical column is a partition column; the files need at least one"),
        ("CREATE TABLE p (a INT) PARTITIONED BY (a) WITH ('connector' = 'blackhole');",
         "PARTITIONED", "table 'p': PARTITIONED BY is supported for the filesystem connector only"),
    ]:
        r = run_sql(cluster, workdir, "bad.sql", text)
        assert r.returncode == 1
        assert f"{pos(text, where)}: {what}" in r.stdout, (text, r.stdout)


def test_partitioned_sink_exactly_once_across_savepoint_and_rescale(cluster, workdir):
    """Two-phase commit per partition directory: stop with a savepoint mid-stream,
    restore at another parallelism; every row is in its partition exactly once."""
    cluster.add_tm(slots=3)
    n = 6000
    out, sp_dir = os.path.join(workdir, "parts"), os.path.join(workdir, "sp")
    ddl = f"""
CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE parts (id BIGINT, k STRING, b INT) PARTITIONED BY (k, b)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'execution.checkpointing.interval' = '300 ms';
"""
    insert = ("INSERT INTO parts SELECT id, CONCAT('k', CAST(id % 7 AS STRING)) AS k, "
              "CAST(id % 2 AS INT) AS b FROM seq;\n")
    r = run_sql(cluster, workdir, "run1.sql", ddl + "SET 'parallelism.default' = '2';\n" + insert)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = cluster.stop_after_progress(job_ids(r.stdout)[0], "seq", n // 5, sp_dir)
    first = sum(len(v) for v in partition_files(out).values())
    assert 0 < first < n, first
    r = run_sql(cluster, workdir, "run2.sql", ddl + "SET 'parallelism.default' = '3';\n"
                f"SET 'execution.savepoint.path' = '{sp}';\n" + insert)
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = partition_files(out)
    want = {}
    for i in range(1, n + 1):
        want.setdefault(f"k=k{i % 7}/b={i % 2}", []).append(i)
    assert {d: sorted(json.loads(x)["id"] for x in v) for d, v in got.items()} == want
    assert not glob.glob(os.path.join(out, "**", ".part-*"), recursive=True)


def test_like_keeps_the_base_partitions_as_flink(cluster, workdir):
    base = ("CREATE TABLE p (a INT, b INT) PARTITIONED BY (a) WITH ('connector' = 'filesystem', "
            "'path' = '/tmp/p', 'format' = 'json');\n")
    text = base + "CREATE TABLE q PARTITIONED BY (b) LIKE p;"
    r = run_sql(cluster, workdir, "bad.sql", text)
    assert r.returncode == 1
    assert (f"{pos(text, 'PARTITIONED', 2)}: The base table already has partitions defined. You "
            "might want to specify EXCLUDING PARTITIONS.") in r.stdout, r.stdout
    # EXCLUDING ALL still takes the base's partitions when the new table has none (Flink 2.3)
    r = run_sql(cluster, workdir, "ok.sql", base + """
CREATE TABLE q WITH ('connector' = 'filesystem', 'path' = '/tmp/q', 'format' = 'csv') LIKE p (EXCLUDING ALL);
CREATE TABLE r PARTITIONED BY (b) LIKE p (EXCLUDING PARTITIONS);
SHOW CREATE TABLE q;
SHOW CREATE TABLE r;
""")
    assert r.returncode == 0, r.stdout
    b = blocks(r.stdout)
    assert b[3] == """CREATE TABLE `default_catalog`.`default_database`.`q` (
  `a` INT,
  `b` INT
)
PARTITIONED BY (`a`)
WITH (
  'connector' = 'filesystem',
  'format' = 'csv',
  'path' = '/tmp/q'
)"""
    assert "\nPARTITIONED BY (`b`)\nWITH (\n  'connector' = 'filesystem',\n  'format' = 'json',\n" \
        "  'path' = '/tmp/p'\n)" in b[4]


def test_if_not_exists_and_if_exists(cluster, workdir):
    r = run_sql(cluster, workdir, "ifne.sql", """
CREATE TABLE t (a INT) WITH ('connector' = 'datagen');
CREATE TABLE IF NOT EXISTS t (b STRING) WITH ('connector' = 'blackhole');
DESCRIBE t;
CREATE TEMPORARY VIEW v AS SELECT a FROM t;
CREATE TEMPORARY VIEW IF NOT EXISTS v AS SELECT a + 1 AS b FROM t;
SHOW CREATE VIEW v;
DROP TABLE IF EXISTS nope;
DROP VIEW IF EXISTS nope;
DROP VIEW v;
SHOW VIEWS;
DROP TABLE t;
SHOW TABLES;
""")
    assert r.returncode == 0, r.stdout
    b = blocks(r.stdout)
    assert b[2] == tableau(("a", "INT", "TRUE", "", "", ""),
                           head=["name", "type", "null", "key", "extras", "watermark"])
    assert b[5] == ("CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`v` (\n  `a`\n)\n"
                    "AS SELECT a FROM t")
    assert b[9] == tableau(head=["view name"]) and b[11] == tableau(head=["table name"])
    assert [x for i, x in enumerate(b) if i not in (2, 5, 9, 11)] == \
        ["[INFO] Execute statement succeed."] * 8


def test_partitioned_sink_exactly_once_across_a_taskmanager_kill(make_cluster, workdir):
    """A TaskManager SIGKILLed mid-stream: the restarted job commits the pending
    files of every partition from the last completed checkpoint, deletes the
    rest, and writes each row once."""
    import signal
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "200 ms"})
    first = c.add_tm(slots=2)
    n = 12000
    out = os.path.join(workdir, "parts")
    r = run_sql(c, workdir, "kill.sql", f"""
CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE parts (id BIGINT, k INT) PARTITIONED BY (k)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
SET 'parallelism.default' = '2';
INSERT INTO parts SELECT id, CAST(id % 5 AS INT) AS k FROM seq;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 2, timeout=30,
             what="two completed checkpoints")
    c.add_tm(slots=2)
    first.kill(signal.SIGKILL)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert job["timestamps"]["RESTARTING"] > 0, job["timestamps"]
    got = {d: sorted(int(x.split(",")[0]) for x in v) for d, v in partition_files(out).items()}
    assert got == {f"k={k}": [i for i in range(1, n + 1) if i % 5 == k] for k in range(5)}
    assert not glob.glob(os.path.join(out, "**", ".part-*"), recursive=True)


def test_view_with_a_column_list(cluster, workdir):
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "vcols")
    r = run_sql(cluster, workdir, "vcols.sql", SEQ.format(n=4) + f"""
CREATE VIEW doubled (k, twice) AS SELECT id, id * 2 FROM seq;
DESCRIBE doubled;
SHOW CREATE VIEW doubled;
CREATE TABLE sunk (k BIGINT, twice BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO sunk SELECT k, twice FROM doubled WHERE twice > 2;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    b = blocks(r.stdout)
    assert b[2] == tableau(("k", "BIGINT", "TRUE", "", "", ""), ("twice", "BIGINT", "TRUE", "", "", ""),
                           head=["name", "type", "null", "key", "extras", "watermark"])
    assert b[3] == ("CREATE VIEW `default_catalog`.`default_database`.`doubled` (\n  `k`,\n  `twice`\n)\n"
                    "AS SELECT id, id * 2 FROM seq")
    finish(cluster, job_ids(r.stdout)[0])
    assert sorted((x["k"], x["twice"]) for x in file_rows(out)) == [(2, 4), (3, 6), (4, 8)]
    text = SEQ.format(n=4) + "CREATE VIEW bad (a) AS SELECT id, id * 2 AS d FROM seq;"
    r = run_sql(cluster, workdir, "bad.sql", text)
    assert r.returncode == 1
    assert (f"{pos(text, 'a) AS')}: List of column aliases must have same degree as table; table "
            "has 2 columns") in r.stdout, r.stdout


def test_more_partitions_than_open_files(cluster, workdir):
    """300 partitions, rows round-robin over them: a subtask holds at most 256 open,
    so files are closed and reopened to append, with and without checkpointing."""
    cluster.add_tm(slots=1)
    n, parts = 1500, 300
    for ckpt in (False, True):
        out = os.path.join(workdir, f"many-{ckpt}")
        r = run_sql(cluster, workdir, "many.sql", SEQ.format(n=n) + f"""
CREATE TABLE many (id BIGINT, p INT) PARTITIONED BY (p)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
{"SET 'execution.checkpointing.interval' = '100 ms';" if ckpt else ""}
INSERT INTO many SELECT id, CAST(id % {parts} AS INT) AS p FROM seq;
""")
        assert r.returncode == 0, r.stdout + r.stderr
        finish(cluster, job_ids(r.stdout)[0])
        got = {d: [int(x) for x in v] for d, v in partition_files(out).items()}
        # one subtask writes each partition's rows in order, appended across reopenings
        assert got == {f"p={k}": [i for i in range(1, n + 1) if i % parts == k] for k in range(parts)}
        assert not glob.glob(os.path.join(out, "**", ".part-*"), recursive=True)


def test_insert_column_list_writes_null_of_every_type(cluster, workdir):
    """INSERT INTO t (cols) writes NULL into every column the list leaves out,
    whatever its type (Flink does the same)."""
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "collist")
    left_out = {"d": "DECIMAL(10, 2)", "dt": "DATE", "tm": "TIME", "ti": "TINYINT",
                "si": "SMALLINT", "f": "FLOAT", "ts6": "TIMESTAMP(6)", "ltz": "TIMESTAMP_LTZ(3)",
                "b": "BYTES", "c": "CHAR(3)", "arr": "ARRAY<INT>", "m": "MAP<STRING, INT>",
                "ms": "MULTISET<STRING>", "r": "ROW<a INT, b STRING>",
                "iv": "INTERVAL DAY TO SECOND", "iy": "INTERVAL YEAR TO MONTH"}
    cols = ", ".join(f"{n} {t}" for n, t in left_out.items())
    script = SEQ.format(n=3) + f"""
CREATE TABLE sink (id BIGINT, {cols}, d2 DECIMAL(20, 4))
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO sink (d2, id) SELECT CAST(id AS DECIMAL(20, 4)) / 8, id FROM seq;
"""
    r = run_sql(cluster, workdir, "collist.sql", script)
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    want = [dict({"id": i}, **{n: None for n in left_out}, d2=decimal.Decimal(i) / 8)
            for i in (1, 2, 3)]
    got = sorted(file_rows(out), key=lambda x: x["id"])
    assert [dict(g, d2=decimal.Decimal(str(g["d2"]))) for g in got] == want, got
    # a NOT NULL column cannot be left out (Flink 2.3's words)
    r = run_sql(cluster, workdir, "collist_nn.sql", SEQ.format(n=3) + f"""
CREATE TABLE sink_nn (id BIGINT, d DECIMAL(10, 2) NOT NULL)
  WITH ('connector' = 'filesystem', 'path' = '{out}-nn', 'format' = 'json');
INSERT INTO sink_nn (id) SELECT id FROM seq;
""")
    assert "INSERT INTO sink_nn: Column 'd' has no default value and does not allow NULLs" \
        in r.stdout, r.stdout
    assert not job_ids(r.stdout)
