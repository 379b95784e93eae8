"""Partitioned filesystem tables beyond writing and reading them back
(test_sql_statements.py): partition pruning on the source, from SQL text
through `sluice sql -f` on a live cluster. The table's directories are
written here, so the expected rows are a Python filter over the same data."""
import json
import os

from test_sql import run_sql, job_ids, finish
from test_sql_statements import file_rows

DAYS = [f"2026-01-0{d}" for d in range(1, 6)]
HOURS = range(6)


def write_table(root, bad=None):
    """30 partitions dt=<day>/hr=<h>, 3 rows each; {(dt, hr): rows}. A partition
    for which bad(dt, hr) is true also holds a file that fails the job when read."""
    data = {}
    for i, dt in enumerate(DAYS):
        for hr in HOURS:
            d = os.path.join(root, f"dt={dt}", f"hr={hr}")
            os.makedirs(d)
            rows = [{"id": (i * 6 + hr) * 3 + k, "v": (i * 7 + hr * 5 + k) % 13} for k in range(3)]
            data[(dt, hr)] = rows
            with open(os.path.join(d, "part-0"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
            if bad and bad(dt, hr):
                with open(os.path.join(d, "part-1"), "w") as f:
                    f.write("{this is not json\n")
    return data


def table(name, path):
    return f"""
CREATE TABLE {name} (id BIGINT, v INT, dt STRING, hr INT) PARTITIONED BY (dt, hr)
  WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json');
CREATE TABLE {name}_out (id BIGINT, v INT, dt STRING, hr INT)
  WITH ('connector' = 'filesystem', 'path' = '{path}-out', 'format' = 'json');
"""


def model(data, keep):
    return [dict(r, dt=dt, hr=hr) for (dt, hr), rows in data.items() for r in rows
            if keep(dt, hr, r["v"])]


def test_partition_pruning_skips_directories_the_where_rules_out(cluster, workdir):
    cluster.add_tm(slots=2)
    cases = [  # (WHERE, the model of it, does it prune on the partitions alone)
        ("dt BETWEEN '2026-01-02' AND '2026-01-03' AND hr IN (1, 3, 4) AND v > 3",
         lambda dt, hr, v: "2026-01-02" <= dt <= "2026-01-03" and hr in (1, 3, 4) and v > 3,
         lambda dt, hr: "2026-01-02" <= dt <= "2026-01-03" and hr in (1, 3, 4)),
        ("dt = '2026-01-05' AND hr < 2",
         lambda dt, hr, v: dt == "2026-01-05" and hr < 2,
         lambda dt, hr: dt == "2026-01-05" and hr < 2),
        ("hr > 4 AND (v < 6 OR v > 10) AND dt <> '2026-01-01'",
         lambda dt, hr, v: hr > 4 and (v < 6 or v > 10) and dt != "2026-01-01",
         lambda dt, hr: hr > 4 and dt != "2026-01-01"),
    ]
    for n, (where, keep, parts) in enumerate(cases):
        for par in (1, 2):
            root = os.path.join(workdir, f"t{n}-{par}")
            # every partition the predicate rules out holds a malformed file
            data = write_table(root, bad=lambda dt, hr, parts=parts: not parts(dt, hr))
            r = run_sql(cluster, workdir, f"q{n}-{par}.sql", table("t", root) + f"""
SET 'parallelism.default' = '{par}';
INSERT INTO t_out SELECT id, v, dt, hr FROM t WHERE {where};
""")
            assert r.returncode == 0, r.stdout + r.stderr
            finish(cluster, job_ids(r.stdout)[0])
            got = sorted(file_rows(root + "-out"), key=lambda x: sorted(x.items()))
            want = sorted(model(data, keep), key=lambda x: sorted(x.items()))
            assert got and got == want, (where, par)

    # the same malformed files fail the job when the WHERE cannot prune (an OR with
    # a non-partition column): what proves that the pruned ones were never opened
    root = os.path.join(workdir, "noprune")
    write_table(root, bad=lambda dt, hr: hr == 5)
    r = run_sql(cluster, workdir, "noprune.sql", table("t", root) + """
INSERT INTO t_out SELECT id, v, dt, hr FROM t WHERE hr < 5 OR v > 100;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    job = cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FAILED"
    assert "part-1:1" in json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))


def test_a_scan_read_twice_is_not_pruned_by_one_readers_where(cluster, workdir):
    """A statement set's INSERTs share the scan: one reader's WHERE must not
    cut the rows of the other."""
    cluster.add_tm(slots=2)
    root = os.path.join(workdir, "shared")
    data = write_table(root)
    other = os.path.join(workdir, "shared-all")
    r = run_sql(cluster, workdir, "shared.sql", table("t", root) + f"""
CREATE TABLE t_all (id BIGINT, v INT, dt STRING, hr INT)
  WITH ('connector' = 'filesystem', 'path' = '{other}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO t_out SELECT id, v, dt, hr FROM t WHERE hr = 2;
INSERT INTO t_all SELECT id, v, dt, hr FROM t WHERE v >= 0;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    key = lambda x: sorted(x.items())
    assert sorted(file_rows(root + "-out"), key=key) == \
        sorted(model(data, lambda dt, hr, v: hr == 2), key=key)
    assert sorted(file_rows(other), key=key) == sorted(model(data, lambda *a: True), key=key)
