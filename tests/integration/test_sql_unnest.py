"""UNNEST through `sluice sql -f` on a live cluster: CROSS JOIN UNNEST of an
ARRAY, of a MAP (key and value columns), of an ARRAY of ROWs (the row's
fields as columns), WITH ORDINALITY, LEFT JOIN UNNEST ... ON TRUE and the
comma form, the default column names (EXPR$0, KEY, VALUE, ORDINALITY; a
one-column UNNEST's alias names its column), read from a filesystem JSON table and written to JSON file
sinks. Expectations are computed here from the input with plain Python."""
import collections
import json
import os

from test_sql import run_sql, job_ids, rows, finish

SRC = [
    {"id": 1, "arr": [10, None, 30], "m": {"a": 1, "b": None},
     "rs": [{"p": 1, "q": "x"}, None, {"p": None, "q": "z"}]},
    {"id": 2, "arr": [], "m": {}, "rs": []},
    {"id": 3, "arr": None, "m": None, "rs": None},
    {"id": 4, "arr": [7], "m": {"k": -1}, "rs": [{"p": 4, "q": None}]},
]

DDL = """
CREATE TABLE src (id BIGINT, arr ARRAY<INT>, m MAP<STRING, INT>,
                  rs ARRAY<ROW<p INT, q STRING>>)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
"""


def write_src(workdir):
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in SRC:
            f.write(json.dumps(r) + "\n")
    return src


def sink(name, cols, out):
    return (f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
            f"'path' = 'file://{out}', 'format' = 'json');\n")


def bag(rs):
    return collections.Counter(json.dumps(r, sort_keys=True) for r in rs)


def strip(rs):
    out = []
    for r in rs:
        assert r.pop("op", "+I") == "+I", r
        out.append(r)
    return out


def test_unnest_forms(cluster, workdir):
    cluster.add_tm(slots=2)
    src = write_src(workdir)
    d = {n: os.path.join(workdir, n) for n in ("a", "o", "l", "m", "r", "c", "mo", "dn", "ax")}
    text = DDL.format(src=src)
    text += sink("a", "id BIGINT, x INT", d["a"])
    text += sink("o", "id BIGINT, x INT, n INT", d["o"])
    text += sink("l", "id BIGINT, x INT", d["l"])
    text += sink("m", "id BIGINT, k STRING, v INT", d["m"])
    text += sink("r", "id BIGINT, p INT, q STRING", d["r"])
    text += sink("c", "id BIGINT, x INT", d["c"])
    text += sink("mo", "id BIGINT, k STRING, v INT, n INT", d["mo"])
    text += sink("dn", "id BIGINT, k STRING, v INT, n INT", d["dn"])
    text += sink("ax", "id BIGINT, x INT", d["ax"])
    text += """
INSERT INTO dn SELECT id, `KEY`, `VALUE`, ORDINALITY FROM src CROSS JOIN UNNEST(m) WITH ORDINALITY;
INSERT INTO ax SELECT id, x FROM src CROSS JOIN UNNEST(arr) AS x;
INSERT INTO a SELECT id, x FROM src CROSS JOIN UNNEST(arr) AS t(x);
INSERT INTO o SELECT id, x, n FROM src CROSS JOIN UNNEST(src.arr) WITH ORDINALITY AS t(x, n);
INSERT INTO l SELECT s.id, t.x FROM src AS s LEFT JOIN UNNEST(s.arr) AS t(x) ON TRUE;
INSERT INTO m SELECT id, k, v FROM src CROSS JOIN UNNEST(m) AS t(k, v);
INSERT INTO r SELECT id, p, q FROM src CROSS JOIN UNNEST(rs) AS t(p, q) WHERE id > 0;
INSERT INTO c SELECT id, x FROM src, UNNEST(arr) AS t(x) WHERE x > 8;
INSERT INTO mo SELECT id, k, v, n FROM src JOIN UNNEST(m) WITH ORDINALITY AS t(k, v, n) ON TRUE;
"""
    r = run_sql(cluster, workdir, "unnest.sql", "SET 'parallelism.default' = '2';\n" + text)
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 9, r.stdout + r.stderr
    for j in jids:
        finish(cluster, j)

    want_a, want_o, want_l, want_m, want_r, want_c, want_mo = [], [], [], [], [], [], []
    for s in SRC:
        arr = s["arr"] or []
        for i, x in enumerate(arr):
            want_a.append({"id": s["id"], "x": x})
            want_o.append({"id": s["id"], "x": x, "n": i + 1})
            want_l.append({"id": s["id"], "x": x})
            if x is not None and x > 8:
                want_c.append({"id": s["id"], "x": x})
        if not arr:
            want_l.append({"id": s["id"], "x": None})
        for i, (k, v) in enumerate((s["m"] or {}).items()):
            want_m.append({"id": s["id"], "k": k, "v": v})
            want_mo.append({"id": s["id"], "k": k, "v": v, "n": i + 1})
        for e in s["rs"] or []:
            e = e or {}
            want_r.append({"id": s["id"], "p": e.get("p"), "q": e.get("q")})
    for name, want in (("a", want_a), ("o", want_o), ("l", want_l), ("m", want_m),
                       ("r", want_r), ("c", want_c), ("mo", want_mo), ("ax", want_a),
                       ("dn", [{"id": x["id"], "k": x["k"], "v": x["v"], "n": x["n"]}
                               for x in want_mo])):
        assert bag(strip(rows(d[name]))) == bag(want), name


def test_unnest_refusals(cluster, workdir):
    src = write_src(workdir)
    pre = DDL.format(src=src) + "CREATE TABLE o (id BIGINT, x INT) WITH ('connector' = 'print');\n"
    # (statement, the text the message points at, the message)
    cases = [
        ("INSERT INTO o SELECT id, x FROM src CROSS JOIN UNNEST(arr, arr) AS t(x);", "arr) AS",
         "UNNEST takes one array, map or multiset"),
        ("INSERT INTO o SELECT id, x FROM src CROSS JOIN UNNEST(id) AS t(x);", "id) AS",
         "UNNEST takes an ARRAY, MAP or MULTISET, got BIGINT"),
        ("INSERT INTO o SELECT id, x FROM src CROSS JOIN UNNEST(m) AS t(x);", "x);",
         "UNNEST(...) gives 2 columns, the alias names 1"),
        ("INSERT INTO o SELECT id, x FROM src LEFT JOIN UNNEST(arr) AS t(x) ON x > 1;", "x > 1",
         "a join with UNNEST takes ON TRUE only"),
        ("INSERT INTO o SELECT id, x FROM src CROSS JOIN UNNEST(arr) WITH ORDINAL AS t(x);",
         "ORDINAL ", "expected WITH ORDINALITY after UNNEST(...), found WITH ORDINAL"),
        ("INSERT INTO o SELECT id, id FROM src CROSS JOIN UNNEST(arr) AS t(id);", "id);",
         "column 'id' of UNNEST(...) is also a column before it"),
    ]
    for stmt, at, msg in cases:
        r = run_sql(cluster, workdir, "bad.sql", pre + stmt + "\n")
        assert r.returncode != 0, stmt
        where = f"line 6, column {stmt.index(at) + 1}: "
        assert where + msg in r.stdout + r.stderr, (stmt, r.stdout + r.stderr)
