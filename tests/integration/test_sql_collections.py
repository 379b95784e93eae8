"""The collection functions through `sluice sql -f` on a live cluster: a
filesystem JSON table with ARRAY and MAP columns is projected through every
function into a JSON file sink; the expectations come from a Python model of
each function written here (Flink's semantics: NULL handling, 1-based
positions, negative slice bounds, first occurrences kept)."""
import collections
import json
import os

from test_sql import run_sql, job_ids, rows, finish

SRC = [
    {"id": 1, "a": [1, 2, None, 2, 3], "b": [7, 2], "s": ["p", None, "q"],
     "m": {"x": 1, "y": None}, "ks": ["k1", "k2", "k1"], "t": "a=1,b=2,a=3"},
    {"id": 2, "a": [], "b": [], "s": [], "m": {}, "ks": [], "t": ""},
    {"id": 3, "a": None, "b": [1], "s": None, "m": None, "ks": None, "t": None},
    {"id": 4, "a": [5], "b": None, "s": ["only"], "m": {"k": -1}, "ks": ["z"], "t": "k,v=w"},
    {"id": 5, "a": [None, None, 9, -4], "b": [9], "s": [None], "m": {"a": 2, "b": 3},
     "ks": ["u", "v"], "t": "q="},
]

COLS = [  # (sink column, type, SQL expression, model)
    ("card_a", "INT", "CARDINALITY(a)", lambda r: None if r["a"] is None else len(r["a"])),
    ("card_m", "INT", "CARDINALITY(m)", lambda r: None if r["m"] is None else len(r["m"])),
    ("has2", "BOOLEAN", "ARRAY_CONTAINS(a, 2)", lambda r: None if r["a"] is None else 2 in r["a"]),
    ("hasnull", "BOOLEAN", "ARRAY_CONTAINS(a, CAST(NULL AS INT))",
     lambda r: None if r["a"] is None else None in r["a"]),
    ("pos2", "INT", "ARRAY_POSITION(a, 2)",
     lambda r: None if r["a"] is None else (r["a"].index(2) + 1 if 2 in r["a"] else 0)),
    ("dist", "ARRAY<INT>", "ARRAY_DISTINCT(a)", lambda r: None if r["a"] is None else dist(r["a"])),
    ("rm2", "ARRAY<INT>", "ARRAY_REMOVE(a, 2)",
     lambda r: None if r["a"] is None else [x for x in r["a"] if x != 2]),
    ("rev", "ARRAY<INT>", "ARRAY_REVERSE(a)", lambda r: None if r["a"] is None else r["a"][::-1]),
    ("sl23", "ARRAY<INT>", "ARRAY_SLICE(a, 2, 3)", lambda r: slice_(r["a"], 2, 3)),
    ("slm2", "ARRAY<INT>", "ARRAY_SLICE(a, -2)", lambda r: slice_(r["a"], -2, None)),
    ("uni", "ARRAY<INT>", "ARRAY_UNION(a, b)",
     lambda r: None if r["a"] is None or r["b"] is None else dist(r["a"] + r["b"])),
    ("cat", "ARRAY<INT>", "ARRAY_CONCAT(a, b, a)",
     lambda r: None if r["a"] is None or r["b"] is None else r["a"] + r["b"] + r["a"]),
    ("j", "STRING", "ARRAY_JOIN(s, '|')",
     lambda r: None if r["s"] is None else "|".join(x for x in r["s"] if x is not None)),
    ("jn", "STRING", "ARRAY_JOIN(s, '|', 'N')",
     lambda r: None if r["s"] is None else "|".join("N" if x is None else x for x in r["s"])),
    ("mx", "INT", "ARRAY_MAX(a)", lambda r: mm(max, r["a"])),
    ("mn", "INT", "ARRAY_MIN(a)", lambda r: mm(min, r["a"])),
    ("mk", "ARRAY<STRING>", "MAP_KEYS(m)", lambda r: None if r["m"] is None else list(r["m"])),
    ("mv", "ARRAY<INT>", "MAP_VALUES(m)",
     lambda r: None if r["m"] is None else list(r["m"].values())),
    ("me", "ARRAY<ROW<`key` STRING, `value` INT>>", "MAP_ENTRIES(m)",
     lambda r: None if r["m"] is None else [{"key": k, "value": v} for k, v in r["m"].items()]),
    ("mfa", "MAP<STRING, INT>", "MAP_FROM_ARRAYS(ks, ARRAY_SLICE(a, 1, CARDINALITY(ks)))",
     lambda r: mfa(r)),
    ("stm", "MAP<STRING, STRING>", "STR_TO_MAP(t)", lambda r: stm(r["t"])),
]


def dist(xs):
    out = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out


def slice_(xs, s, e):
    if xs is None:
        return None
    n = len(xs)
    e = n if e is None else e
    s = s + n + 1 if s < 0 else s
    e = e + n + 1 if e < 0 else e
    s, e = max(s, 1), min(e, n)
    return xs[s - 1:e] if s <= e else []


def mm(f, xs):
    if xs is None:
        return None
    xs = [x for x in xs if x is not None]
    return f(xs) if xs else None


def mfa(r):
    if r["ks"] is None or r["a"] is None:
        return None
    vals = slice_(r["a"], 1, len(r["ks"]))
    if len(vals) != len(r["ks"]):
        return "ERROR"
    return dict(zip(r["ks"], vals))


def stm(t):
    if t is None:
        return None
    if t == "":
        return {}
    out = {}
    for part in t.split(","):
        k, eq, v = part.partition("=")
        out[k] = v if eq else None
    return out


def test_collection_functions(cluster, workdir):
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    # row 3 (a NULL) and rows whose key array is longer than a stay valid for MAP_FROM_ARRAYS
    good = [r for r in SRC if mfa(r) != "ERROR"]
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in good:
            f.write(json.dumps(r) + "\n")
    out = os.path.join(workdir, "out")
    cols = ", ".join(f"{c} {t}" for c, t, _, _ in COLS)
    exprs = ", ".join(e for _, _, e, _ in COLS)
    r = run_sql(cluster, workdir, "coll.sql", f"""
CREATE TABLE src (id BIGINT, a ARRAY<INT>, b ARRAY<INT>, s ARRAY<STRING>, m MAP<STRING, INT>,
                  ks ARRAY<STRING>, t STRING)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE sink (id BIGINT, {cols})
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id, {exprs} FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout + r.stderr
    finish(cluster, jids[0])
    got = {g["id"]: g for g in rows(out)}
    assert sorted(got) == sorted(x["id"] for x in good)
    for s in good:
        g = got[s["id"]]
        g.pop("op", None)
        want = {"id": s["id"]}
        want.update({c: model(s) for c, _, _, model in COLS})
        assert g == want, (s["id"], {k: (g.get(k), want[k]) for k in want if g.get(k) != want[k]})


def test_element_and_refusals(cluster, workdir):
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in ({"id": 1, "a": [4]}, {"id": 2, "a": []}, {"id": 3, "a": None}):
            f.write(json.dumps(r) + "\n")
    out = os.path.join(workdir, "out")
    ddl = f"""
CREATE TABLE src (id BIGINT, a ARRAY<INT>, b ARRAY<STRING>, m MAP<STRING, INT>)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE sink (id BIGINT, e INT)
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
"""
    r = run_sql(cluster, workdir, "el.sql", ddl + "INSERT INTO sink SELECT id, ELEMENT(a) FROM src;\n")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = sorted((g["id"], g["e"]) for g in rows(out))
    assert got == [(1, 4), (2, None), (3, None)]
    cases = [
        ("INSERT INTO sink SELECT id, CARDINALITY(id) FROM src;", "CARDINALITY(id)",
         "CARDINALITY needs an ARRAY, MAP or MULTISET, got BIGINT"),
        ("INSERT INTO sink SELECT id, ARRAY_POSITION(a, 'x') FROM src;", "ARRAY_POSITION(",
         "ARRAY_POSITION: ARRAY<INT> cannot hold CHAR(1) NOT NULL"),
        ("INSERT INTO sink SELECT id, CARDINALITY(ARRAY_CONCAT(a, b)) FROM src;", "ARRAY_CONCAT(",
         "ARRAY_CONCAT: ARRAY<INT> and ARRAY<STRING> have no common element type"),
        ("INSERT INTO sink SELECT id, CARDINALITY(MAP_KEYS(a)) FROM src;", "MAP_KEYS(",
         "MAP_KEYS needs a MAP as argument 1, got ARRAY<INT>"),
        ("INSERT INTO sink SELECT id, CHAR_LENGTH(ARRAY_JOIN(a, ',')) FROM src;", "ARRAY_JOIN(",
         "ARRAY_JOIN needs an ARRAY of strings, got ARRAY<INT>"),
    ]
    for stmt, at, msg in cases:
        r = run_sql(cluster, workdir, "bad.sql", ddl + stmt + "\n")
        assert r.returncode != 0, stmt
        where = f"line 6, column {stmt.index(at) + 1}: "
        assert where + msg in r.stdout + r.stderr, (stmt, r.stdout + r.stderr)
