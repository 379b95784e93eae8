"""Flink's json format options from SQL text through running jobs:
json.timestamp-format.standard (SQL / ISO-8601),
json.encode.decimal-as-plain-number, json.map-null-key.mode (FAIL / DROP /
LITERAL) with json.map-null-key.literal on the writing side, and
json.fail-on-missing-field (with and without json.ignore-parse-errors) on
the reading side. The rows come from a seeded datagen table whose MAP has
NULL keys; one job writes them three ways and the texts are checked against
each other and against Python's decimal (whose to-string rule is Java's
BigDecimal.toString)."""
import decimal
import json
import os

from conftest import wait_for
from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql

N = 300

SRC = f"""
CREATE TABLE src (
    id BIGINT,
    d  DECIMAL(10, 7),
    ts TIMESTAMP(6),
    t3 TIMESTAMP(3),
    m  MAP<INT, INT>
) WITH ('connector' = 'datagen', 'rows-per-second' = '100000', 'seed' = '3',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{N}',
    'fields.d.min' = '0', 'fields.d.max' = '0.0000011',
    'fields.ts.min' = '2026-01-01 10:00:00', 'fields.ts.max' = '2026-01-01 10:00:01',
    'fields.t3.min' = '2026-01-01 10:00:00', 'fields.t3.max' = '2026-01-01 10:00:01',
    'fields.m.length' = '2', 'fields.m.key.min' = '0', 'fields.m.key.max' = '0',
    'fields.m.key.null-rate' = '0.5');
"""


def sink(name, path, opts):
    extra = "".join(f", '{k}' = '{v}'" for k, v in opts.items())
    return (f"CREATE TABLE {name} (id BIGINT, d DECIMAL(10, 7), ts TIMESTAMP(6), "
            f"t3 TIMESTAMP(3), m MAP<INT, INT>) WITH ('connector' = 'filesystem', "
            f"'path' = '{path}', 'format' = 'json'{extra});\n")


def texts(path):
    """{id: row} with every number kept as its text."""
    out = {}
    for p in committed_files(path):
        with open(p) as f:
            for line in f:
                r = json.loads(line, parse_float=str, parse_int=str)
                out[int(r["id"])] = r
    return out


def test_json_write_options(cluster, workdir):
    cluster.add_tm(slots=1)
    iso, lit = os.path.join(workdir, "iso"), os.path.join(workdir, "lit")
    r = run_sql(cluster, workdir, "w.sql", SRC + sink("iso", iso, {
        "json.timestamp-format.standard": "ISO-8601",
        "json.encode.decimal-as-plain-number": "true",
        "json.map-null-key.mode": "DROP"}) + sink("lit", lit, {
            "json.map-null-key.mode": "LITERAL", "json.map-null-key.literal": "N/A"}) + """
EXECUTE STATEMENT SET BEGIN
INSERT INTO iso SELECT * FROM src;
INSERT INTO lit SELECT * FROM src;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    a, b = texts(iso), texts(lit)
    assert sorted(a) == sorted(b) == list(range(1, N + 1))
    nullkeys = sci = 0
    for i in range(1, N + 1):
        x, y = a[i], b[i]
        # LITERAL writes the NULL key as the literal, DROP leaves it out
        nullkeys += "N/A" in y["m"]
        assert x["m"] == {k: v for k, v in y["m"].items() if k != "N/A"}
        assert set(y["m"]) <= {"0", "N/A"}
        # SQL: a blank between date and time; ISO-8601: a 'T'
        assert " " in y["ts"] and x["ts"] == y["ts"].replace(" ", "T")
        assert " " in y["t3"] and x["t3"] == y["t3"].replace(" ", "T")
        # the default DECIMAL text is BigDecimal.toString (Python's str of a
        # Decimal is the same rule); plain-number is toPlainString
        v = decimal.Decimal(y["d"])
        assert y["d"] == str(v.quantize(decimal.Decimal("1E-7"))), y["d"]
        assert x["d"] == format(v.quantize(decimal.Decimal("1E-7")), "f"), x["d"]
        sci += "E" in y["d"]
    assert 0 < nullkeys < N and sci > 0


def test_json_map_null_key_fail_is_the_default(cluster, workdir):
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "f.sql", SRC + sink("o_all", os.path.join(workdir, "o"), {}) +
                "INSERT INTO o_all SELECT * FROM src;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    job = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=60)
    assert job["state"] == "FAILED"
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "column 'm': a MAP<INT, INT> has a NULL key" in exc, exc
    assert "json.map-null-key.mode" in exc, exc


def test_json_fail_on_missing_field(cluster, workdir):
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "in")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        f.write('{"id": 1, "d": 1.5, "s": "a"}\n{"id": 2, "s": "b"}\n{"id": 3, "d": 2, "s": null}\n')

    def run(name, opts):
        out = os.path.join(workdir, name)
        extra = "".join(f", '{k}' = '{v}'" for k, v in opts.items())
        r = run_sql(cluster, workdir, name + ".sql", f"""
CREATE TABLE src (id BIGINT, d DECIMAL(5, 2), s STRING) WITH ('connector' = 'filesystem',
    'path' = '{src}', 'format' = 'json'{extra});
CREATE TABLE {name} (id BIGINT, d DECIMAL(5, 2), s STRING)
    WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO {name} SELECT * FROM src;
""")
        assert r.returncode == 0, r.stdout + r.stderr
        jid = job_ids(r.stdout)[0]
        return jid, cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=60), out

    # default: a missing field is NULL (an explicit null too)
    _, job, out = run("dflt", {})
    assert job["state"] == "FINISHED"
    got = {r["id"]: (r["d"], r["s"]) for r in
           (json.loads(ln) for p in committed_files(out) for ln in open(p))}
    assert got == {1: (1.5, "a"), 2: (None, "b"), 3: (2.0, None)}
    # fail-on-missing-field: row 2 fails the job, naming the field
    jid, job, _ = run("strict", {"json.fail-on-missing-field": "true"})
    assert job["state"] == "FAILED"
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "field 'd' is missing (json.fail-on-missing-field)" in exc, exc
    # ... unless parse errors are ignored: row 2 is skipped (a null is no missing field)
    _, job, out = run("skipped", {"json.fail-on-missing-field": "true",
                               "json.ignore-parse-errors": "true"})
    assert job["state"] == "FINISHED"
    got = sorted(r["id"] for r in (json.loads(ln) for p in committed_files(out) for ln in open(p)))
    assert got == [1, 3]
