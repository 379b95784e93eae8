"""The JSON functions through `sluice sql -f` on a live cluster: IS JSON,
JSON_EXISTS, JSON_VALUE (RETURNING, ON ERROR), JSON_QUERY (wrappers, ON
EMPTY), JSON_STRING, JSON_OBJECT and JSON_ARRAY (NULL / ABSENT ON NULL) over
a column of JSON texts, written to a JSON file sink. Expectations come from
Python's json module and a small SQL/JSON path model written here."""
import json
import os

from test_sql import run_sql, job_ids, rows, finish

TEXTS = [
    '{"a": {"b": [1, 2.5, "x", null, true]}, "d": "str", "e": 12345678901}',
    '[1, 2]',
    'not json',
    None,
    '"scalar"',
    '{"a": {"b": "y"}, "d": 7}',
    '  {"d": -3, "q": "t\\"ab\\u00e9"}  ',
]

MISSING, ERROR = object(), object()


def path(doc, steps, strict=False):
    """Items a path selects ([] when a lax step does not apply); ERROR in strict mode."""
    items = [doc]
    for s in steps:
        out = []
        for it in items:
            if s == "*":
                if isinstance(it, list):
                    out += it
                elif isinstance(it, dict):
                    out += list(it.values())
                elif strict:
                    return ERROR
            elif isinstance(s, int):
                if isinstance(it, list) and s < len(it):
                    out.append(it[s])
                elif strict:
                    return ERROR
            elif isinstance(it, dict) and s in it:
                out.append(it[s])
            elif strict:
                return ERROR
        items = out
    return items


def load(t):
    try:
        return json.loads(t)
    except (TypeError, ValueError):
        return MISSING


def jtext(v):
    """A JSON value as compact text (numbers as Java's Double/Long toString)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def jvalue(t, steps, strict=False, ret=str, on_error=None):
    if t is None:
        return None
    d = load(t)
    if d is MISSING:
        return on_error
    r = path(d, steps, strict)
    if r is ERROR:
        return on_error
    if not r or r == [None]:
        return None
    if len(r) > 1 or isinstance(r[0], (dict, list)):
        return on_error
    v = r[0]
    if ret is str:
        return v if isinstance(v, str) else jtext(v)
    try:
        return int(v) if not isinstance(v, bool) else on_error
    except ValueError:
        return on_error


def jquery(t, steps, wrap=None, on_empty=None):
    if t is None:
        return None
    d = load(t)
    if d is MISSING:
        return None
    r = path(d, steps)
    if not r:
        return on_empty
    if wrap == "U" or (wrap == "C" and (len(r) > 1 or not isinstance(r[0], (dict, list)))):
        return "[" + ",".join(jtext(x) for x in r) + "]"
    if len(r) > 1 or not isinstance(r[0], (dict, list)):
        return None
    return jtext(r[0])


def is_json(t, kind):
    d = load(t)
    if t is None or d is MISSING:
        return False
    return {"VALUE": True, "OBJECT": isinstance(d, dict), "ARRAY": isinstance(d, list),
            "SCALAR": not isinstance(d, (dict, list))}[kind]


def exists(t, steps, strict=False, on_error=False):
    if t is None:
        return None
    d = load(t)
    if d is MISSING:
        return on_error
    r = path(d, steps, strict)
    return on_error if r is ERROR else any(x is not None for x in r)


def jstr(s):
    return json.dumps(s, ensure_ascii=False)


COLS = [  # (column, type, SQL, model of (id, text))
    ("isj", "BOOLEAN", "j IS JSON", lambda i, t: is_json(t, "VALUE")),
    ("isv", "BOOLEAN", "j IS JSON VALUE", lambda i, t: is_json(t, "VALUE")),
    ("iso", "BOOLEAN", "j IS JSON OBJECT", lambda i, t: is_json(t, "OBJECT")),
    ("isa", "BOOLEAN", "j IS JSON ARRAY", lambda i, t: is_json(t, "ARRAY")),
    ("iss", "BOOLEAN", "j IS JSON SCALAR", lambda i, t: is_json(t, "SCALAR")),
    ("isn", "BOOLEAN", "j IS NOT JSON", lambda i, t: not is_json(t, "VALUE")),
    ("ex", "BOOLEAN", "JSON_EXISTS(j, '$.a.b')", lambda i, t: exists(t, ["a", "b"])),
    ("ex2", "BOOLEAN", "JSON_EXISTS(j, '$.a.b[9]')", lambda i, t: exists(t, ["a", "b", 9])),
    ("ex3", "BOOLEAN", "JSON_EXISTS(j, 'strict $.zz' TRUE ON ERROR)",
     lambda i, t: exists(t, ["zz"], True, True)),
    ("v0", "STRING", "JSON_VALUE(j, '$.a.b[0]')", lambda i, t: jvalue(t, ["a", "b", 0])),
    ("v1", "STRING", "JSON_VALUE(j, '$.a.b[1]')", lambda i, t: jvalue(t, ["a", "b", 1])),
    ("v4", "STRING", "JSON_VALUE(j, 'lax $.a.b[4]')", lambda i, t: jvalue(t, ["a", "b", 4])),
    ("vb", "STRING", "JSON_VALUE(j, '$.a.b')", lambda i, t: jvalue(t, ["a", "b"])),
    ("vd", "STRING", "JSON_VALUE(j, '$[''d'']')", lambda i, t: jvalue(t, ["d"])),
    ("ve", "STRING", "JSON_VALUE(j, '$.e')", lambda i, t: jvalue(t, ["e"])),
    ("vq", "STRING", "JSON_VALUE(j, '$.q')", lambda i, t: jvalue(t, ["q"])),
    ("vi", "INT", "JSON_VALUE(j, '$.d' RETURNING INT DEFAULT -1 ON ERROR)",
     lambda i, t: jvalue(t, ["d"], ret=int, on_error=-1)),
    ("vs", "STRING", "JSON_VALUE(j, 'strict $.zz' DEFAULT 'e' ON ERROR)",
     lambda i, t: jvalue(t, ["zz"], True, on_error="e")),
    ("qa", "STRING", "JSON_QUERY(j, '$.a')", lambda i, t: jquery(t, ["a"])),
    ("qd", "STRING", "JSON_QUERY(j, '$.d' WITH WRAPPER)", lambda i, t: jquery(t, ["d"], "U")),
    ("qc", "STRING", "JSON_QUERY(j, '$.a.b' WITH CONDITIONAL ARRAY WRAPPER)",
     lambda i, t: jquery(t, ["a", "b"], "C")),
    ("qs", "STRING", "JSON_QUERY(j, '$[*]' WITH UNCONDITIONAL WRAPPER)",
     lambda i, t: jquery(t, ["*"], "U")),
    ("qe", "STRING", "JSON_QUERY(j, '$.zz' EMPTY ARRAY ON EMPTY)",
     lambda i, t: jquery(t, ["zz"], on_empty="[]")),
    ("js", "STRING", "JSON_STRING(j)", lambda i, t: None if t is None else jstr(t)),
    ("ji", "STRING", "JSON_STRING(id)", lambda i, t: str(i)),
    ("o1", "STRING", "JSON_OBJECT('id' VALUE id, KEY 'j' VALUE j, 'n' VALUE CAST(NULL AS INT))",
     lambda i, t: '{"id":%d,"j":%s,"n":null}' % (i, "null" if t is None else jstr(t))),
    ("o2", "STRING", "JSON_OBJECT('j' VALUE j ABSENT ON NULL)",
     lambda i, t: "{}" if t is None else '{"j":%s}' % jstr(t)),
    ("o3", "STRING", "JSON_OBJECT('o' VALUE JSON_ARRAY(id, JSON_OBJECT()), 'b' VALUE id > 2)",
     lambda i, t: '{"o":[%d,{}],"b":%s}' % (i, "true" if i > 2 else "false")),
    ("a1", "STRING", "JSON_ARRAY(id, j)",
     lambda i, t: "[%d]" % i if t is None else "[%d,%s]" % (i, jstr(t))),
    ("a2", "STRING", "JSON_ARRAY(j NULL ON NULL)", lambda i, t: "[%s]" % ("null" if t is None else jstr(t))),
]


def test_json_functions(cluster, workdir):
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for i, t in enumerate(TEXTS, 1):
            f.write(json.dumps({"id": i, "j": t}) + "\n")
    out = os.path.join(workdir, "out")
    cols = ", ".join(f"{c} {t}" for c, t, _, _ in COLS)
    exprs = ",\n  ".join(e for _, _, e, _ in COLS)
    r = run_sql(cluster, workdir, "json.sql", f"""
CREATE TABLE src (id INT, j STRING)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE sink (id INT, {cols})
WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
INSERT INTO sink SELECT id,
  {exprs}
FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout + r.stderr
    finish(cluster, jids[0])
    got = {g["id"]: g for g in rows(out)}
    assert sorted(got) == list(range(1, len(TEXTS) + 1))
    bad = []
    for i, t in enumerate(TEXTS, 1):
        for c, _, e, model in COLS:
            if got[i][c] != model(i, t):
                bad.append((i, c, e, got[i][c], model(i, t)))
    assert not bad, "\n".join(map(repr, bad))


def test_json_refusals(cluster, workdir):
    pre = ("CREATE TABLE src (id INT, j STRING) WITH ('connector' = 'filesystem', "
           "'path' = '/tmp/none', 'format' = 'json');\n"
           "CREATE TABLE o (x STRING) WITH ('connector' = 'print');\n")
    cases = [
        ("INSERT INTO o SELECT JSON_VALUE(j, '$.a' DEFAULT 1 ON BOTH) FROM src;", "BOTH",
         "expected ON EMPTY or ON ERROR, found BOTH"),
        ("INSERT INTO o SELECT JSON_QUERY(j, '$.a' WITH SOME WRAPPER) FROM src;", "WITH SOME",
         "expected WITH [CONDITIONAL | UNCONDITIONAL] [ARRAY] WRAPPER"),
        ("INSERT INTO o SELECT JSON_ARRAY(j PRESENT ON NULL) FROM src;", "PRESENT",
         "expected NULL ON NULL or ABSENT ON NULL, found PRESENT"),
        ("INSERT INTO o SELECT JSON_VALUE(id, '$.a') FROM src;", "JSON_VALUE",
         "JSON_VALUE needs a STRING as argument 1, got INT"),
        ("INSERT INTO o SELECT CAST(JSON_VALUE(j, '$.a' RETURNING TIME) AS STRING) FROM src;",
         "JSON_VALUE", "JSON_VALUE ... RETURNING TIME is not supported"),
    ]
    for stmt, at, msg in cases:
        r = run_sql(cluster, workdir, "bad.sql", pre + stmt + "\n")
        assert r.returncode != 0, stmt
        where = f"line 3, column {stmt.index(at) + 1}: "
        assert where + msg in r.stdout + r.stderr, (stmt, r.stdout + r.stderr)
