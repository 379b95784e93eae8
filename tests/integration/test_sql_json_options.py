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
    # with json.ignore-parse-errors as well: refused, as Flink refuses the pair
    r = run_sql(cluster, workdir, "both.sql", f"""
CREATE TABLE src (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{src}',
    'format' = 'json', 'json.fail-on-missing-field' = 'true', 'json.ignore-parse-errors' = 'true');
CREATE TABLE o (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT * FROM src;
""")
    assert r.returncode != 0, r.stdout + r.stderr
    assert ("options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be "
            "true") in r.stdout + r.stderr, r.stdout + r.stderr


NESTED = "id INT, r ROW<a INT, b STRING, c ROW<d INT>>, arr ARRAY<ROW<a INT, b STRING>>, " \
    "ai ARRAY<INT>, m MAP<STRING, INT>"


def read_nested(cluster, workdir, name, lines, opts):
    """The rows `lines` read as NESTED with opts: (job, {id: row})."""
    src = os.path.join(workdir, name + "-in")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        f.write("".join(ln + "\n" for ln in lines))
    out = os.path.join(workdir, name)
    extra = "".join(f", '{k}' = '{v}'" for k, v in opts.items())
    r = run_sql(cluster, workdir, name + ".sql", f"""
CREATE TABLE src ({NESTED}) WITH ('connector' = 'filesystem', 'path' = '{src}',
    'format' = 'json'{extra});
CREATE TABLE {name} ({NESTED}) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO {name} SELECT * FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    job = cluster.wait_state(jid, ["FAILED", "FINISHED"], timeout=60)
    got = [json.loads(ln) for p in committed_files(out) for ln in open(p)] \
        if job["state"] == "FINISHED" else []
    return jid, job, got


FULL = '{"id":1,"r":{"a":1,"b":"x","c":{"d":1}},"arr":[{"a":1,"b":"x"}],"ai":[1],"m":{"k":1}}'


def test_json_fail_on_missing_field_nested(cluster, workdir):
    """Flink 2.3 (probed): json.fail-on-missing-field holds at every depth --
    a ROW field absent from its object fails the record; an explicit null
    does not."""
    cluster.add_tm(slots=1)
    ok = '{"id":2,"r":{"a":2,"b":null,"c":{"d":null}},"arr":[{"a":1,"b":null}],"ai":[],"m":{}}'
    _, job, got = read_nested(cluster, workdir, "deep_ok", [FULL, ok],
                              {"json.fail-on-missing-field": "true"})
    assert job["state"] == "FINISHED"
    assert sorted(g["id"] for g in got) == [1, 2]
    for name, line, path in (
            ("in_row", '{"id":3,"r":{"a":3,"b":"x","c":{}},"arr":[],"ai":[],"m":{}}',
             "field 'r': field 'c': field 'd' is missing (json.fail-on-missing-field)"),
            ("in_elem", '{"id":4,"r":{"a":4,"b":"x","c":{"d":1}},"arr":[{"a":1}],"ai":[],"m":{}}',
             "field 'arr': element 1: field 'b' is missing (json.fail-on-missing-field)")):
        jid, job, _ = read_nested(cluster, workdir, name, [FULL, line],
                                  {"json.fail-on-missing-field": "true"})
        assert job["state"] == "FAILED", name
        exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
        assert path in exc, exc
        # by default the same records read, the missing field NULL
        _, job, got = read_nested(cluster, workdir, name + "_dflt", [FULL, line], {})
        assert job["state"] == "FINISHED" and len(got) == 2, name


def test_json_ignore_parse_errors_by_field(cluster, workdir):
    """Flink 2.3's json.ignore-parse-errors (probed with these very lines): a
    scalar that does not parse is NULL where it stands -- a column, a ROW
    field, an ARRAY element, a MAP value; a value of the wrong shape (an
    object for an INT, a number for a ROW) makes the nearest column or ROW
    field holding it NULL; malformed JSON and a record that is no object are
    skipped. (Where the wrong-shaped value is not the last field of its
    object, or is an ARRAY element or a MAP value, Flink's reader loses its
    place in the object and what follows comes out NULL or garbled: those
    cases are left out.)"""
    cluster.add_tm(slots=1)
    lines = [
        FULL,
        '{"id":2,"r":{"a":2,"b":"x","c":{"d":1}},"arr":[{"a":1,"b":"x"}],"ai":[1,"zz",3],"m":{"k":1}}',
        '{"id":3,"r":{"a":3,"b":"x","c":{"d":1}},"arr":[{"a":"zz","b":"x"}],"ai":[1],'
        '"m":{"k":"zz","j":2}}',
        '{"id":4,"r":{"b":"x","c":"notarow","a":{"x":1}},"arr":[1,2],"ai":{"a":1},"m":[1]}',
        '{"id":5,"r":[1,2],"arr":"str","ai":[1],"m":{"k":1}}',
        '{"id":6,"r":{"a":6,"b":"x","c":{"d":1}},"arr":[{"a":1,"b":"x"}],"ai":[1],"m":{"k":1}',
        '[1,2]',
        '{"id":"12x","r":{"a":8}}',
        '{"id":9,"r":{"a":9,"b":{"q":1}}}',
        '{"id":11,"r":{"a":11,"b":"x","c":{"d":"zz"}},"arr":[],"ai":[1,true,3],"m":{"k":1}}',
        '{"id":12,"r":{"a":true,"b":"x"},"ai":[1]}',
    ]
    _, job, got = read_nested(cluster, workdir, "lenient", lines,
                              {"json.ignore-parse-errors": "true"})
    assert job["state"] == "FINISHED"
    row = lambda a, b, d: {"a": a, "b": b, "c": d if d is None else {"d": d}}  # noqa: E731
    want = [
        {"id": 1, "r": row(1, "x", 1), "arr": [{"a": 1, "b": "x"}], "ai": [1], "m": {"k": 1}},
        {"id": 2, "r": row(2, "x", 1), "arr": [{"a": 1, "b": "x"}], "ai": [1, None, 3],
         "m": {"k": 1}},
        {"id": 3, "r": row(3, "x", 1), "arr": [{"a": None, "b": "x"}], "ai": [1],
         "m": {"k": None, "j": 2}},
        {"id": 4, "r": row(None, "x", None), "arr": None, "ai": None, "m": None},
        {"id": 5, "r": None, "arr": None, "ai": [1], "m": {"k": 1}},
        {"id": None, "r": row(8, None, None), "arr": None, "ai": None, "m": None},
        {"id": 9, "r": row(9, '{"q":1}', None), "arr": None, "ai": None, "m": None},
        {"id": 11, "r": {"a": 11, "b": "x", "c": {"d": None}}, "arr": [], "ai": [1, None, 3],
         "m": {"k": 1}},
        {"id": 12, "r": row(None, "x", None), "arr": None, "ai": [1], "m": None},
    ]
    key = lambda g: json.dumps(g, sort_keys=True)  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)


# instants: ordinary, with a fraction, New York's 2026 DST gap and overlap,
# before the epoch
LTZ_MS = [(1, 1767225600123), (2, 1772953200000), (3, 1793511000500), (4, 1793514600000),
          (5, -86400000 + 3723040), (6, 0)]
LTZ_COLS = "id BIGINT, a TIMESTAMP_LTZ(3), c TIMESTAMP_LTZ(0), d TIMESTAMP_LTZ(6), " \
    "b TIMESTAMP(3), e TIMESTAMP(9)"


def ts_text(t, iso, z, nanos=None):
    """Flink's json text of a datetime (nanos: the nanoseconds of the second,
    else t's microseconds): the fraction without trailing zeros (none when
    zero), 'T' for ISO-8601, 'Z' after an instant."""
    s = t.strftime("%Y-%m-%d" + ("T" if iso else " ") + "%H:%M:%S")
    ns = t.microsecond * 1000 if nanos is None else nanos
    if ns:
        s += ("." + f"{ns:09d}").rstrip("0")
    return s + ("Z" if z else "")


def test_json_timestamp_ltz_written_with_z_and_read_back(cluster, workdir):
    """Flink 2.3 (probed) writes a TIMESTAMP_LTZ as its instant in UTC with a
    trailing 'Z' in both standards (`2026-01-01 00:00:00.123Z`,
    `2026-01-01T00:00:00.123Z`) whatever the session zone, and a TIMESTAMP
    as it is; the texts read back to the same values. The p > 3 columns come
    from the source's text (with its 'Z', and in the other standard)."""
    import datetime
    import zoneinfo
    cluster.add_tm(slots=1)
    zone = zoneinfo.ZoneInfo("America/New_York")
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

    def utc(ms):
        return (epoch + datetime.timedelta(milliseconds=ms)).replace(tzinfo=None)

    def loc(ms):
        return (epoch + datetime.timedelta(milliseconds=ms)).astimezone(zone).replace(tzinfo=None)

    def sub(ms, extra):  # the nanoseconds of the second: the ms's, then `extra` below them
        return (ms % 1000) * 1000000 + extra

    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for i, ms in LTZ_MS:
            f.write(json.dumps({"id": i, "ms": ms, "s": ms // 1000,
                                "d": ts_text(utc(ms).replace(microsecond=0), False, True,
                                             sub(ms, 456000)),
                                "e": ts_text(loc(ms).replace(microsecond=0), True, False,
                                             sub(ms, 456789))}) + "\n")
    p = {k: os.path.join(workdir, k) for k in ("sql", "iso", "back_sql", "back_iso")}

    def table(name, iso):
        extra = ", 'json.timestamp-format.standard' = 'ISO-8601'" if iso else ""
        return (f"CREATE TABLE `{name}` ({LTZ_COLS}) WITH ('connector' = 'filesystem', "
                f"'path' = '{p[name]}', 'format' = 'json'{extra});\n")
    sel = ("SELECT id, TO_TIMESTAMP_LTZ(ms, 3), TO_TIMESTAMP_LTZ(s, 0), d, "
           "CAST(TO_TIMESTAMP_LTZ(ms, 3) AS TIMESTAMP(3)), e FROM src")
    r = run_sql(cluster, workdir, "w.sql", "SET 'table.local-time-zone' = 'America/New_York';\n" +
                f"CREATE TABLE src (id BIGINT, ms BIGINT, s BIGINT, d TIMESTAMP_LTZ(6), "
                f"e TIMESTAMP(9)) WITH ('connector' = 'filesystem', 'path' = '{src}', "
                f"'format' = 'json');\n" + table("sql", False) + table("iso", True) +
                f"INSERT INTO `sql` {sel};\nINSERT INTO iso {sel};\n")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    for name, iso in (("sql", False), ("iso", True)):
        got = {int(k): v for k, v in texts(p[name]).items()}
        assert sorted(got) == [i for i, _ in LTZ_MS], name
        for i, ms in LTZ_MS:
            sec = (epoch + datetime.timedelta(seconds=ms // 1000)).replace(tzinfo=None)
            want = {"id": str(i), "a": ts_text(utc(ms), iso, True), "c": ts_text(sec, iso, True),
                    "d": ts_text(utc(ms).replace(microsecond=0), iso, True, sub(ms, 456000)),
                    "b": ts_text(loc(ms), iso, False),
                    "e": ts_text(loc(ms).replace(microsecond=0), iso, False, sub(ms, 456789))}
            assert got[i] == want, (name, got[i], want)
    # read back (both forms, in another session zone): the same values, written again alike
    r = run_sql(cluster, workdir, "r.sql", "SET 'table.local-time-zone' = 'Asia/Kolkata';\n" +
                "".join(table(n, n.endswith("iso")) for n in p) +
                "INSERT INTO back_sql SELECT * FROM `sql`;\nINSERT INTO back_iso SELECT * FROM iso;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    assert texts(p["back_sql"]) == texts(p["sql"])
    assert texts(p["back_iso"]) == texts(p["iso"])
