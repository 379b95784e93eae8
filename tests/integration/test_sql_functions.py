"""Every built-in function docs/SQL.md marks as supported, run from SQL text
through a running job (`sluice sql -f` on a real cluster) over a seeded
JSON file, each result compared with a value computed here in Python.

The list of functions comes from docs/SQL.md's "Built-in functions" table:
a `yes` row without a case below fails the test, so the docs and the job
path cannot drift apart (TIMESTAMPADD / TIMESTAMPDIFF once passed the
expression evaluator's tests and failed in every job)."""
import base64
import datetime
import decimal
import hashlib
import json
import math
import os
import random
import re
import time
import urllib.parse

import pytest

from conftest import ROOT
from test_sql import run_sql, job_ids, rows, ms, finish, BASE

SEED = 30
N = 40

# ---- the docs' table --------------------------------------------------------------


def doc_functions():
    """(form, supported) for each row of docs/SQL.md's function table."""
    with open(os.path.join(ROOT, "docs", "SQL.md")) as f:
        text = f.read()
    m = re.search(r"^## Built-in functions\n(.*?)^## ", text, re.M | re.S)
    assert m, "docs/SQL.md has no '## Built-in functions' section"
    out = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3 or cells[0] in ("Function", "---"):
            continue
        assert cells[1] in ("yes", "no"), line
        out.append((cells[0], cells[1] == "yes"))
    assert len(out) > 80, out
    return out


# ---- Flink's semantics, written independently in Python ------------------------------


def java_random(seed):
    """java.util.Random(seed): nextDouble / nextInt(bound) as generators."""
    st = [(seed ^ 0x5DEECE66D) & ((1 << 48) - 1)]

    def nxt(bits):
        st[0] = (st[0] * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
        r = st[0] >> (48 - bits)
        return r - (1 << bits) if r >= 1 << (bits - 1) and bits == 32 else r

    def next_double():
        return ((nxt(26) << 27) + nxt(27)) * 2.0 ** -53

    def next_int(bound):
        r = nxt(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if u - r + m < 2 ** 31:
                return r
            u = nxt(31)
    return next_double, next_int


def dround(x, d, mode):
    """BigDecimal.valueOf(x).setScale(d, mode).doubleValue()"""
    if x is None or d is None:
        return None
    q = decimal.Decimal(repr(x)).quantize(decimal.Decimal(1).scaleb(-d), rounding=mode)
    return float(q)


def iround(x, d, mode):
    if x is None:
        return None
    if d >= 0:
        return x
    q = decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-d), rounding=mode)
    return int(q)


def initcap(s):
    out, start = [], True
    for ch in s:
        c = ord(ch)
        digit, up, lo = 48 <= c <= 57, 65 <= c <= 90, 97 <= c <= 122
        if start:
            if lo:
                ch = chr(c - 32)
            if digit or up or lo:
                start = False
        elif up:
            ch = chr(c + 32)
        elif not (digit or lo):
            start = True
        out.append(ch)
    return "".join(out)


def pad(s, n, p, left):
    if s is None or n is None or p is None:
        return None
    if n < 0 or p == "":
        return None
    keep = s[:n]
    fill = "".join(p[k % len(p)] for k in range(n - len(keep)))
    return fill + keep if left else keep + fill


def locate(seek, s, frm=1):
    if seek is None or s is None:
        return None
    if frm < 1 or frm - 1 > len(s):
        return 0
    return s.find(seek, frm - 1) + 1


def url_encode(s):
    out = []
    for b in s.encode():
        c = chr(b)
        if c.isascii() and (c.isalnum() or c in ".-*_"):
            out.append(c)
        elif c == " ":
            out.append("+")
        else:
            out.append("%%%02X" % b)
    return "".join(out)


def parse_url(u, part, key=None):
    sp = urllib.parse.urlsplit(u)
    if not sp.scheme:
        return None
    if key is not None:
        for kv in sp.query.split("&") if part == "QUERY" and "?" in u else []:
            k, eq, v = kv.partition("=")
            if k == key and eq:
                return v
        return None
    return {"HOST": sp.hostname, "PATH": sp.path, "REF": sp.fragment if "#" in u else None}[part]


def translate(s, frm, to):
    out = []
    for ch in s:
        k = frm.find(ch)
        if k < 0:
            out.append(ch)
        elif k < len(to):
            out.append(to[k])
    return "".join(out)


def strict(f):
    """f over its arguments, NULL when any is NULL."""
    return lambda *a: None if any(x is None for x in a) else f(*a)


def civil(t):
    return datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc)


def ts_text(t):
    return civil(t).strftime("%Y-%m-%d %H:%M:%S.") + "%03d" % (t % 1000)


def months_between(a, b):
    if b < a:
        return -months_between(b, a)
    ca, cb = civil(a), civil(b)
    m = (cb.year - ca.year) * 12 + cb.month - ca.month
    if m > 0 and add_months(a, m) > b:
        m -= 1
    return m


def add_months(t, k):
    c = civil(t)
    tot = c.year * 12 + c.month - 1 + k
    y, mo = divmod(tot, 12)
    mo += 1
    import calendar
    d = min(c.day, calendar.monthrange(y, mo)[1])
    tod = t % 86400000
    return int(datetime.datetime(y, mo, d, tzinfo=datetime.timezone.utc).timestamp()) * 1000 + tod


def tdiv(a, b):
    """Integer division truncated toward zero (Java's)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class Between:
    """An expected value that is a range (the wall clock)."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __eq__(self, got):
        return got is not None and self.lo <= got <= self.hi

    def __repr__(self):
        return f"Between({self.lo}, {self.hi})"


# ---- the seeded input -----------------------------------------------------------------

WORDS = ["hello", "Flink SQL", "h\u00e9llo w\u00f6rld", "", "a%b_c", "x-y~z", "abcabc",
         "  pad  ", "2nd-TRY of it", "a.b*c d"]
URLS = ["http://user:pw@example.com:8080/a/b.html?k1=v1&k2=v2#frag",
        "https://example.org/path?q=1", "http://host.net", "ftp://files.example.com/x/y.txt",
        "not a url"]


def make_rows():
    rnd = random.Random(SEED)
    out, t, tmax = [], BASE, BASE
    for k in range(1, N + 1):
        if k % 7 == 0:  # a late row: behind the largest time seen so far
            t = tmax - rnd.randint(1, 4) * 1000 - 500
        else:
            tmax += rnd.randint(1, 5) * 1000
            t = tmax
        out.append({
            "id": k,
            "i": None if k % 9 == 4 else rnd.randint(-500, 500),
            "d": None if k % 11 == 5 else round(rnd.uniform(-50, 50), 3),
            "s": None if k % 10 == 3 else rnd.choice(WORDS),
            "u": rnd.choice(URLS),
            "ts": t,
        })
    # the watermark each row meets in the calc: the largest earlier time - 1 s (the
    # times keep whole-second gaps between in-order rows and put late rows half a second
    # off, so that a watermark 1 ms lower, as Flink's bounded out-of-orderness has it,
    # gives the same whole seconds)
    tmax = None
    for r in out:
        r["wm"] = None if tmax is None else tmax - 1000
        tmax = r["ts"] if tmax is None else max(tmax, r["ts"])
    return out


# ---- the cases: (docs form, SQL, result type, expected(row)) ---------------------------

H, U = decimal.ROUND_HALF_UP, decimal.ROUND_DOWN
T0 = "TIMESTAMP '2026-01-01 00:00:00'"


def str_to_map(t, ld=",", kd="="):
    """STR_TO_MAP's model: split on the list delimiter, then at the first key-value
    delimiter; a pair without one maps to None; a later key replaces an earlier one."""
    if t is None:
        return None
    if t == "":
        return {}
    out = {}
    for part in t.split(ld):
        k, eq, v = part.partition(kd)
        out[k] = v if eq else None
    return out


def first_seen(xs):
    out = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out


def coll_cases():
    """The collection functions over maps and arrays made from the row's s (words) and u
    (URLs) by STR_TO_MAP."""
    F = "Collection functions (`CARDINALITY`, `ELEMENT`, `ARRAY_*`, `MAP_*`, `STR_TO_MAP`)"
    M = "STR_TO_MAP(s, ' ', '-')"
    U = "STR_TO_MAP(u, '&', '=')"

    def m(r):
        return str_to_map(r["s"], " ", "-")

    def on(f):
        return lambda r: None if r["s"] is None else f(m(r))
    return [
        (F, f"CARDINALITY({M})", "INT", on(len)),
        (F, f"MAP_KEYS({M})", "ARRAY<STRING>", on(list)),
        (F, f"MAP_VALUES({M})", "ARRAY<STRING>", on(lambda x: list(x.values()))),
        (F, f"MAP_ENTRIES({U})", "ARRAY<ROW<`key` STRING, `value` STRING>>",
         lambda r: [{"key": k, "value": v} for k, v in str_to_map(r["u"], "&", "=").items()]),
        (F, f"{U}", "MAP<STRING, STRING>", lambda r: str_to_map(r["u"], "&", "=")),
        (F, f"STR_TO_MAP(s)", "MAP<STRING, STRING>", lambda r: str_to_map(r["s"])),
        (F, f"ARRAY_CONTAINS(MAP_KEYS({M}), 'a')", "BOOLEAN", on(lambda x: "a" in x)),
        (F, f"ARRAY_CONTAINS(MAP_VALUES({M}), CAST(NULL AS STRING))", "BOOLEAN",
         on(lambda x: None in x.values())),
        (F, f"ARRAY_POSITION(MAP_VALUES({M}), 'y')", "INT",
         on(lambda x: list(x.values()).index("y") + 1 if "y" in x.values() else 0)),
        (F, f"ARRAY_DISTINCT(MAP_VALUES({M}))", "ARRAY<STRING>",
         on(lambda x: first_seen(list(x.values())))),
        (F, f"ARRAY_REMOVE(MAP_VALUES({M}), CAST(NULL AS STRING))", "ARRAY<STRING>",
         on(lambda x: [v for v in x.values() if v is not None])),
        (F, f"ARRAY_REVERSE(MAP_KEYS({M}))", "ARRAY<STRING>", on(lambda x: list(x)[::-1])),
        (F, f"ARRAY_SLICE(MAP_KEYS({M}), 2)", "ARRAY<STRING>", on(lambda x: list(x)[1:])),
        (F, f"ARRAY_SLICE(MAP_KEYS({M}), -1, -1)", "ARRAY<STRING>", on(lambda x: list(x)[-1:])),
        (F, f"ARRAY_UNION(MAP_KEYS({M}), MAP_VALUES({M}))", "ARRAY<STRING>",
         on(lambda x: first_seen(list(x) + list(x.values())))),
        (F, f"ARRAY_CONCAT(MAP_KEYS({M}), MAP_KEYS({M}))", "ARRAY<STRING>",
         on(lambda x: list(x) * 2)),
        (F, f"ARRAY_JOIN(MAP_VALUES({M}), '+', '?')", "STRING",
         on(lambda x: "+".join("?" if v is None else v for v in x.values()))),
        (F, f"ARRAY_JOIN(MAP_VALUES({M}), '+')", "STRING",
         on(lambda x: "+".join(v for v in x.values() if v is not None))),
        (F, f"ARRAY_MAX(MAP_KEYS({M}))", "STRING", on(lambda x: max(k.encode() for k in x).decode() if x else None)),
        (F, f"ARRAY_MIN(MAP_KEYS({M}))", "STRING", on(lambda x: min(k.encode() for k in x).decode() if x else None)),
        (F, f"ELEMENT(ARRAY_SLICE(MAP_KEYS({M}), 1, 1))", "STRING", on(lambda x: list(x)[0] if x else None)),
        (F, f"MAP_FROM_ARRAYS(MAP_KEYS({M}), ARRAY_REVERSE(MAP_VALUES({M})))",
         "MAP<STRING, STRING>", on(lambda x: dict(zip(x, list(x.values())[::-1])))),
    ]


def json_cases():
    """The JSON functions over JSON made from the row's s by JSON_OBJECT (tests/integration/
    test_sql_json_functions.py has the paths, clauses and errors)."""
    F = "JSON functions (`IS JSON`, `JSON_EXISTS`, `JSON_VALUE`, `JSON_QUERY`, `JSON_STRING`, `JSON_OBJECT`, `JSON_ARRAY`)"
    O = "JSON_OBJECT('s' VALUE s, 'n' VALUE i)"

    def obj(r):
        return "{%s,%s}" % ('"s":' + ("null" if r["s"] is None else json.dumps(r["s"], ensure_ascii=False)),
                            '"n":' + ("null" if r["i"] is None else str(r["i"])))

    def is_json(t):
        try:
            json.loads(t)
            return True
        except ValueError:
            return False
    return [
        (F, O, "STRING", obj),
        (F, "s IS JSON", "BOOLEAN", lambda r: r["s"] is not None and is_json(r["s"])),
        (F, f"{O} IS JSON OBJECT", "BOOLEAN", lambda r: True),
        (F, f"JSON_VALUE({O}, '$.s')", "STRING", lambda r: r["s"]),
        (F, f"JSON_VALUE({O}, '$.n' RETURNING INT)", "INT", lambda r: r["i"]),
        (F, f"JSON_EXISTS({O}, 'strict $.n')", "BOOLEAN", lambda r: r["i"] is not None),
        (F, f"JSON_QUERY({O}, '$.s' WITH WRAPPER)", "STRING",
         lambda r: "[%s]" % ("null" if r["s"] is None else json.dumps(r["s"], ensure_ascii=False))),
        (F, "JSON_STRING(s)", "STRING", lambda r: None if r["s"] is None else json.dumps(r["s"], ensure_ascii=False)),
        (F, "JSON_ARRAY(s, i)", "STRING",
         lambda r: "[%s]" % ",".join(x for x in (None if r["s"] is None else json.dumps(r["s"], ensure_ascii=False),
                                                None if r["i"] is None else str(r["i"])) if x is not None)),
    ]


def cases():
    rd, ri = java_random(7)[0], java_random(11)[1]
    c = [
        ("`=` `<>` `<` `<=` `>` `>=`", "i = 3 OR i <> 3", "BOOLEAN", lambda r: strict(lambda i: True)(r["i"])),
        ("`=` `<>` `<` `<=` `>` `>=`", "CAST(i < 0 AS STRING) || CAST(i <= 0 AS STRING) || CAST(d > 0 AS STRING) || CAST(d >= 0 AS STRING)",
         "STRING", lambda r: None if r["i"] is None or r["d"] is None else
         "".join("TRUE" if x else "FALSE" for x in (r["i"] < 0, r["i"] <= 0, r["d"] > 0, r["d"] >= 0))),
        ("`IS [NOT] DISTINCT FROM`", "i IS DISTINCT FROM CAST(NULL AS INT)", "BOOLEAN", lambda r: r["i"] is not None),
        ("`IS [NOT] DISTINCT FROM`", "s IS NOT DISTINCT FROM 'hello'", "BOOLEAN", lambda r: r["s"] == "hello"),
        ("`IS [NOT] NULL`", "s IS NULL", "BOOLEAN", lambda r: r["s"] is None),
        ("`IS [NOT] NULL`", "d IS NOT NULL", "BOOLEAN", lambda r: r["d"] is not None),
        ("`[NOT] BETWEEN`", "i BETWEEN -100 AND 100", "BOOLEAN", strict_r("i", lambda i: -100 <= i <= 100)),
        ("`[NOT] BETWEEN`", "i NOT BETWEEN -100 AND 100", "BOOLEAN", strict_r("i", lambda i: not -100 <= i <= 100)),
        ("`[NOT] LIKE [ESCAPE]`", "s LIKE '%l_o%'", "BOOLEAN", strict_r("s", lambda s: re.fullmatch(r".*l.o.*", s, re.S) is not None)),
        ("`[NOT] LIKE [ESCAPE]`", "s NOT LIKE 'a!%%' ESCAPE '!'", "BOOLEAN", strict_r("s", lambda s: not s.startswith("a%"))),
        ("`[NOT] SIMILAR TO [ESCAPE]`", "s SIMILAR TO '(a|h)%(o|c)'", "BOOLEAN", strict_r("s", lambda s: re.fullmatch(r"(a|h).*(o|c)", s, re.S) is not None)),
        ("`[NOT] SIMILAR TO [ESCAPE]`", "s NOT SIMILAR TO '[a-z]+!%%' ESCAPE '!'", "BOOLEAN", strict_r("s", lambda s: re.fullmatch(r"[a-z]+%.*", s, re.S) is None)),
        ("`[NOT] SIMILAR TO [ESCAPE]`", "s SIMILAR TO '_{5}'", "BOOLEAN", strict_r("s", lambda s: len(s.encode()) == 5)),
        ("`[NOT] IN (values)`", "s IN ('hello', 'abcabc')", "BOOLEAN", strict_r("s", lambda s: s in ("hello", "abcabc"))),
        ("`[NOT] IN (values)`", "i NOT IN (1, 2, 3)", "BOOLEAN", strict_r("i", lambda i: i not in (1, 2, 3))),
        ("`AND` `OR` `NOT`", "(i > 0 AND d > 0) OR NOT (s = 'hello')", "BOOLEAN", lambda r: or3(and3(gt(r["i"], 0), gt(r["d"], 0)), not3(None if r["s"] is None else r["s"] == "hello"))),
        ("`IS [NOT] TRUE/FALSE/UNKNOWN`", "CAST((i > 0) IS TRUE AS STRING) || CAST((i > 0) IS NOT FALSE AS STRING) || CAST((i > 0) IS UNKNOWN AS STRING)", "STRING",
         lambda r: "".join("TRUE" if x else "FALSE" for x in (gt(r["i"], 0) is True, gt(r["i"], 0) is not False, r["i"] is None))),
        ("`+` `-` `*` `/` `%`", "i + 1", "INT", strict_r("i", lambda i: i + 1)),
        ("`+` `-` `*` `/` `%`", "(i - 3) * 2", "INT", strict_r("i", lambda i: (i - 3) * 2)),
        ("`+` `-` `*` `/` `%`", "i / 7", "INT", strict_r("i", lambda i: tdiv(i, 7))),
        ("`+` `-` `*` `/` `%`", "i % 7", "INT", strict_r("i", lambda i: int(math.fmod(i, 7)))),
        ("`+` `-` `*` `/` `%`", "d / 4", "DOUBLE", strict_r("d", lambda d: d / 4)),
        ("`ABS(x)`", "ABS(i)", "INT", strict_r("i", abs)),
        ("`MOD(a, b)`", "MOD(i, 5)", "INT", strict_r("i", lambda i: int(math.fmod(i, 5)))),
        ("`POWER(a, b)`", "POWER(d, 2)", "DOUBLE", strict_r("d", lambda d: math.pow(d, 2))),
        ("`SQRT(x)`", "SQRT(ABS(d))", "DOUBLE", strict_r("d", lambda d: math.sqrt(abs(d)))),
        ("`LN(x)`", "LN(ABS(d) + 1)", "DOUBLE", strict_r("d", lambda d: math.log(abs(d) + 1))),
        ("`LOG10(x)`", "LOG10(ABS(d) + 1)", "DOUBLE", strict_r("d", lambda d: math.log10(abs(d) + 1))),
        ("`LOG2(x)`", "LOG2(ABS(d) + 1)", "DOUBLE", strict_r("d", lambda d: math.log(abs(d) + 1) / math.log(2))),
        ("`LOG(x)` / `LOG(base, x)`", "LOG(ABS(d) + 1)", "DOUBLE", strict_r("d", lambda d: math.log(abs(d) + 1))),
        ("`LOG(x)` / `LOG(base, x)`", "LOG(3, ABS(d) + 1)", "DOUBLE", strict_r("d", lambda d: math.log(abs(d) + 1) / math.log(3))),
        ("`EXP(x)`", "EXP(d / 10)", "DOUBLE", strict_r("d", lambda d: math.exp(d / 10))),
        ("`CEIL(x)` / `CEILING(x)`", "CEIL(d)", "DOUBLE", strict_r("d", lambda d: float(math.ceil(d)))),
        ("`CEIL(x)` / `CEILING(x)`", "CEILING(d)", "DOUBLE", strict_r("d", lambda d: float(math.ceil(d)))),
        ("`FLOOR(x)`", "FLOOR(d)", "DOUBLE", strict_r("d", lambda d: float(math.floor(d)))),
    ]
    for f, py in [("SIN", math.sin), ("COS", math.cos), ("TAN", math.tan), ("ATAN", math.atan)]:
        c.append(("`SIN` `COS` `TAN` `COT` `ASIN` `ACOS` `ATAN`", f"{f}(d)", "DOUBLE", strict_r("d", py)))
    c += [
        ("`SIN` `COS` `TAN` `COT` `ASIN` `ACOS` `ATAN`", "COT(i + 0.25)", "DOUBLE", strict_r("i", lambda i: 1.0 / math.tan(i + 0.25))),
        ("`SIN` `COS` `TAN` `COT` `ASIN` `ACOS` `ATAN`", "ASIN(d / 100)", "DOUBLE", strict_r("d", lambda d: math.asin(d / 100))),
        ("`SIN` `COS` `TAN` `COT` `ASIN` `ACOS` `ATAN`", "ACOS(d / 100)", "DOUBLE", strict_r("d", lambda d: math.acos(d / 100))),
        ("`SINH` `COSH` `TANH`", "SINH(d / 10)", "DOUBLE", strict_r("d", lambda d: math.sinh(d / 10))),
        ("`SINH` `COSH` `TANH`", "COSH(d / 10)", "DOUBLE", strict_r("d", lambda d: math.cosh(d / 10))),
        ("`SINH` `COSH` `TANH`", "TANH(d / 10)", "DOUBLE", strict_r("d", lambda d: math.tanh(d / 10))),
        ("`ATAN2(y, x)`", "ATAN2(d, i)", "DOUBLE", lambda r: strict(lambda d, i: math.atan2(d, i))(r["d"], r["i"])),
        ("`DEGREES(x)` / `RADIANS(x)`", "DEGREES(d)", "DOUBLE", strict_r("d", lambda d: d * 57.29577951308232)),
        ("`DEGREES(x)` / `RADIANS(x)`", "RADIANS(i)", "DOUBLE", strict_r("i", lambda i: i * 0.017453292519943295)),
        ("`SIGN(x)`", "SIGN(i)", "INT", strict_r("i", lambda i: (i > 0) - (i < 0))),
        ("`SIGN(x)`", "SIGN(d)", "DOUBLE", strict_r("d", lambda d: float((d > 0) - (d < 0)))),
        ("`ROUND(x [, d])`", "ROUND(d, 1)", "DOUBLE", strict_r("d", lambda d: dround(d, 1, H))),
        ("`ROUND(x [, d])`", "ROUND(d)", "DOUBLE", strict_r("d", lambda d: dround(d, 0, H))),
        ("`ROUND(x [, d])`", "ROUND(i, -1)", "INT", strict_r("i", lambda i: iround(i, -1, H))),
        ("`TRUNCATE(x [, d])`", "TRUNCATE(d, 2)", "DOUBLE", strict_r("d", lambda d: dround(d, 2, U))),
        ("`TRUNCATE(x [, d])`", "TRUNCATE(i, -2)", "INT", strict_r("i", lambda i: iround(i, -2, U))),
        ("`PI()` / `E()`", "PI() * id + E()", "DOUBLE", lambda r: math.pi * r["id"] + math.e),
        ("`RAND([seed])`", "RAND(7)", "DOUBLE", lambda r: rd()),
        ("`RAND([seed])`", "RAND() >= 0 AND RAND() < 1", "BOOLEAN", lambda r: True),
        ("`RAND_INTEGER([seed,] bound)`", "RAND_INTEGER(11, 100)", "INT", lambda r: ri(100)),
        ("`UUID()`", "UUID() SIMILAR TO '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'", "BOOLEAN", lambda r: True),
        ("`BIN(n)`", "BIN(i)", "STRING", strict_r("i", lambda i: format(i & (2 ** 64 - 1), "b"))),
        ("`HEX(n)` / `HEX(s)`", "HEX(i)", "STRING", strict_r("i", lambda i: format(i & (2 ** 64 - 1), "X"))),
        ("`HEX(n)` / `HEX(s)`", "HEX(s)", "STRING", strict_r("s", lambda s: s.encode().hex().upper())),
        ("`s1 \\|\\| s2`", "s || '!'", "STRING", strict_r("s", lambda s: s + "!")),
        ("`CONCAT(s, ...)`", "CONCAT(s, '-', u)", "STRING", lambda r: strict(lambda s, u: s + "-" + u)(r["s"], r["u"])),
        ("`CONCAT_WS(sep, s, ...)`", "CONCAT_WS('~', s, 'x', CAST(i AS STRING))", "STRING",
         lambda r: "~".join(x for x in (r["s"], "x", None if r["i"] is None else str(r["i"])) if x is not None)),
        ("`CHAR_LENGTH(s)` / `CHARACTER_LENGTH(s)`", "CHAR_LENGTH(s)", "INT", strict_r("s", len)),
        ("`CHAR_LENGTH(s)` / `CHARACTER_LENGTH(s)`", "CHARACTER_LENGTH(u)", "INT", strict_r("u", len)),
        ("`UPPER(s)` / `LOWER(s)`", "UPPER(s)", "STRING", strict_r("s", lambda s: "".join(ch.upper() if ch.isascii() else ch for ch in s))),
        ("`UPPER(s)` / `LOWER(s)`", "LOWER(u)", "STRING", strict_r("u", str.lower)),
        ("`POSITION(a IN b)`", "POSITION('l' IN s)", "INT", strict_r("s", lambda s: s.find("l") + 1)),
        ("`TRIM([BOTH\\|LEADING\\|TRAILING] [c] FROM s)`", "TRIM(s)", "STRING", strict_r("s", lambda s: s.strip(" "))),
        ("`TRIM([BOTH\\|LEADING\\|TRAILING] [c] FROM s)`", "TRIM(LEADING 'a' FROM s)", "STRING", strict_r("s", lambda s: s.lstrip("a"))),
        ("`LTRIM(s [, chars])` / `RTRIM(s [, chars])` / `BTRIM(s [, chars])`", "LTRIM(s)", "STRING", strict_r("s", lambda s: s.lstrip(" "))),
        ("`LTRIM(s [, chars])` / `RTRIM(s [, chars])` / `BTRIM(s [, chars])`", "RTRIM(s, 'co')", "STRING", strict_r("s", lambda s: s.rstrip("co"))),
        ("`LTRIM(s [, chars])` / `RTRIM(s [, chars])` / `BTRIM(s [, chars])`", "BTRIM(s, 'ah')", "STRING", strict_r("s", lambda s: s.strip("ah"))),
        ("`REPEAT(s, n)`", "REPEAT(s, MOD(id, 3) - 1)", "STRING", lambda r: strict(lambda s: s * max(r["id"] % 3 - 1, 0))(r["s"])),
        ("`REPLACE(s, a, b)`", "REPLACE(s, 'l', 'L')", "STRING", strict_r("s", lambda s: s.replace("l", "L"))),
        ("`OVERLAY(s PLACING r FROM p [FOR n])`", "OVERLAY(s PLACING '##' FROM 2 FOR 3)", "STRING", strict_r("s", lambda s: s[:1] + "##" + s[4:])),
        ("`OVERLAY(s PLACING r FROM p [FOR n])`", "OVERLAY(s PLACING 'XY' FROM 3)", "STRING", strict_r("s", lambda s: s[:2] + "XY" + s[4:])),
        ("`SUBSTRING(s FROM p [FOR n])` / `SUBSTRING(s, p [, n])` / `SUBSTR`", "SUBSTRING(s FROM 2 FOR 3)", "STRING", strict_r("s", lambda s: s[1:4])),
        ("`SUBSTRING(s FROM p [FOR n])` / `SUBSTRING(s, p [, n])` / `SUBSTR`", "SUBSTR(u, 3)", "STRING", strict_r("u", lambda u: u[2:])),
        ("`INITCAP(s)`", "INITCAP(s)", "STRING", strict_r("s", initcap)),
        ("`LPAD(s, n, pad)` / `RPAD(s, n, pad)`", "LPAD(s, 8, '*-')", "STRING", lambda r: pad(r["s"], 8, "*-", True)),
        ("`LPAD(s, n, pad)` / `RPAD(s, n, pad)`", "RPAD(s, CAST(MOD(id, 12) AS INT) - 1, '.')", "STRING", lambda r: pad(r["s"], r["id"] % 12 - 1, ".", False)),
        ("`LEFT(s, n)` / `RIGHT(s, n)`", "LEFT(s, 3)", "STRING", strict_r("s", lambda s: s[:3])),
        ("`LEFT(s, n)` / `RIGHT(s, n)`", "RIGHT(u, 4)", "STRING", strict_r("u", lambda u: u[-4:])),
        ("`LOCATE(a, s [, from])`", "LOCATE('a', s)", "INT", strict_r("s", lambda s: locate("a", s))),
        ("`LOCATE(a, s [, from])`", "LOCATE('a', s, 3)", "INT", strict_r("s", lambda s: locate("a", s, 3))),
        ("`INSTR(s, a)`", "INSTR(u, 'example')", "INT", strict_r("u", lambda u: locate("example", u))),
        ("`REVERSE(s)`", "REVERSE(s)", "STRING", strict_r("s", lambda s: s[::-1])),
        ("`TRANSLATE(s, from, to)`", "TRANSLATE(s, 'alo', 'AL')", "STRING", strict_r("s", lambda s: translate(s, "alo", "AL"))),
        ("`ELT(k, s1, ...)`", "ELT(CAST(MOD(id, 4) AS INT), 'one', s, 'three')", "STRING",
         lambda r: [None, "one", r["s"], "three"][r["id"] % 4]),
        ("`ASCII(s)`", "ASCII(s)", "INT", strict_r("s", lambda s: ord(s[0]) if s else 0)),
        ("`CHR(n)`", "CHR(i)", "STRING", strict_r("i", lambda i: chr(i & 255) if i >= 0 else "")),
        ("`STARTSWITH(s, p)` / `ENDSWITH(s, p)`", "STARTSWITH(s, 'h')", "BOOLEAN", strict_r("s", lambda s: s.startswith("h"))),
        ("`STARTSWITH(s, p)` / `ENDSWITH(s, p)`", "ENDSWITH(u, '.txt')", "BOOLEAN", strict_r("u", lambda u: u.endswith(".txt"))),
        ("`SPLIT_INDEX(s, sep, k)`", "SPLIT_INDEX(u, '/', 2)", "STRING", strict_r("u", lambda u: (u.split("/") + [None] * 3)[2])),
        ("`REGEXP(s, p)` / `REGEXP_EXTRACT(s, p [, g])` / `REGEXP_REPLACE(s, p, r)`", "REGEXP(s, 'l+o')", "BOOLEAN", strict_r("s", lambda s: re.search("l+o", s) is not None)),
        ("`REGEXP(s, p)` / `REGEXP_EXTRACT(s, p [, g])` / `REGEXP_REPLACE(s, p, r)`", "REGEXP_EXTRACT(u, '//([a-z.]+)', 1)", "STRING", strict_r("u", lambda u: (re.search("//([a-z.]+)", u) or [None, None])[1])),
        ("`REGEXP(s, p)` / `REGEXP_EXTRACT(s, p [, g])` / `REGEXP_REPLACE(s, p, r)`", "REGEXP_REPLACE(s, '[aeiou]', '_')", "STRING", strict_r("s", lambda s: re.sub("[aeiou]", "_", s))),
        ("`URL_ENCODE(s)` / `URL_DECODE(s)`", "URL_ENCODE(s)", "STRING", strict_r("s", url_encode)),
        ("`URL_ENCODE(s)` / `URL_DECODE(s)`", "URL_DECODE(URL_ENCODE(u) || CASE WHEN id = 5 THEN '%g' ELSE '' END)", "STRING", lambda r: None if r["id"] == 5 else r["u"]),
        ("`PARSE_URL(url, part [, key])`", "PARSE_URL(u, 'HOST')", "STRING", lambda r: parse_url(r["u"], "HOST")),
        ("`PARSE_URL(url, part [, key])`", "PARSE_URL(u, 'PATH')", "STRING", lambda r: parse_url(r["u"], "PATH")),
        ("`PARSE_URL(url, part [, key])`", "PARSE_URL(u, 'REF')", "STRING", lambda r: parse_url(r["u"], "REF")),
        ("`PARSE_URL(url, part [, key])`", "PARSE_URL(u, 'QUERY', 'q')", "STRING", lambda r: parse_url(r["u"], "QUERY", "q")),
        ("`TO_BASE64(s)` / `FROM_BASE64(s)`", "TO_BASE64(s)", "STRING", strict_r("s", lambda s: base64.b64encode(s.encode()).decode())),
        ("`TO_BASE64(s)` / `FROM_BASE64(s)`", "FROM_BASE64(TO_BASE64(u))", "STRING", strict_r("u", lambda u: u)),
        ("`MD5(s)` `SHA1(s)` `SHA224(s)` `SHA256(s)` `SHA384(s)` `SHA512(s)`", "MD5(s)", "STRING", strict_r("s", lambda s: hashlib.md5(s.encode()).hexdigest())),
        ("`SHA2(s, bits)`", "SHA2(u, CAST(224 + MOD(id, 5) * 32 AS INT))", "STRING",
         lambda r: (lambda bits: getattr(hashlib, f"sha{bits}")(r["u"].encode()).hexdigest()
                    if bits in (224, 256, 384, 512) else None)(224 + r["id"] % 5 * 32)),
        ("`CASE`", "CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' ELSE 'zero or null' END", "STRING",
         lambda r: "pos" if (r["i"] or 0) > 0 else "neg" if (r["i"] or 0) < 0 else "zero or null"),
        ("`CASE`", "CASE MOD(id, 3) WHEN 0 THEN s ELSE u END", "STRING", lambda r: r["s"] if r["id"] % 3 == 0 else r["u"]),
        ("`COALESCE(a, ...)` / `IFNULL(a, b)`", "COALESCE(s, u)", "STRING", lambda r: r["s"] if r["s"] is not None else r["u"]),
        ("`COALESCE(a, ...)` / `IFNULL(a, b)`", "IFNULL(i, -1)", "INT", lambda r: -1 if r["i"] is None else r["i"]),
        ("`NULLIF(a, b)`", "NULLIF(s, 'hello')", "STRING", lambda r: None if r["s"] == "hello" else r["s"]),
        ("`IF(c, a, b)`", "IF(d > 0, 'p', 'n')", "STRING", lambda r: "p" if r["d"] is not None and r["d"] > 0 else "n"),
        ("`GREATEST(a, ...)` / `LEAST(a, ...)`", "GREATEST(i, d, 0)", "DOUBLE", lambda r: strict(lambda i, d: float(max(i, d, 0)))(r["i"], r["d"])),
        ("`GREATEST(a, ...)` / `LEAST(a, ...)`", "LEAST(s, 'b')", "STRING", strict_r("s", lambda s: min(s.encode(), b"b").decode())),
        ("`CAST(x AS t)` / `TRY_CAST(x AS t)`", "CAST(i AS STRING)", "STRING", strict_r("i", str)),
        ("`CAST(x AS t)` / `TRY_CAST(x AS t)`", "TRY_CAST(s AS INT)", "INT", lambda r: None),
        ("`TIMESTAMP '...'` / `INTERVAL '...' unit`", "TIMESTAMP '2026-03-04 05:06:07.890' + INTERVAL '2' HOUR", "TIMESTAMP(3)", lambda r: ms("2026-03-04 07:06:07.890")),
        ("`TIMESTAMP '...'` / `INTERVAL '...' unit`", "CAST(TIMESTAMP '2024-01-31 05:06:07.123456789' + INTERVAL '1-1' YEAR TO MONTH AS STRING)", "STRING", lambda r: "2025-02-28 05:06:07.123456789"),
        ("`DATE '...'` / `TIME '...'`", "CAST(DATE '2024-01-31' + INTERVAL '1' MONTH AS STRING) || ' ' || CAST(TIME '23:30:00' + INTERVAL '45' MINUTE AS STRING)", "STRING", lambda r: "2024-02-29 00:15:00"),
        ("`ARRAY[...]`, `MAP[...]`, `ROW(...)`, `arr[i]`, `m[k]`, `r.f`", "ARRAY[i, 2][1] + MAP['a', i]['a'] + ROW(i, 2).EXPR$1", "INT", strict_r("i", lambda i: i + i + 2)),
        ("`CURRENT_TIMESTAMP` / `LOCALTIMESTAMP` / `NOW()` / `CURRENT_ROW_TIMESTAMP()`", "CURRENT_TIMESTAMP", "TIMESTAMP(3)", "clock"),
        ("`CURRENT_TIMESTAMP` / `LOCALTIMESTAMP` / `NOW()` / `CURRENT_ROW_TIMESTAMP()`", "LOCALTIMESTAMP", "TIMESTAMP(3)", "clock"),
        ("`CURRENT_TIMESTAMP` / `LOCALTIMESTAMP` / `NOW()` / `CURRENT_ROW_TIMESTAMP()`", "NOW()", "TIMESTAMP(3)", "clock"),
        ("`CURRENT_TIMESTAMP` / `LOCALTIMESTAMP` / `NOW()` / `CURRENT_ROW_TIMESTAMP()`", "CURRENT_ROW_TIMESTAMP()", "TIMESTAMP(3)", "clock"),
        ("`EXTRACT(unit FROM ts)`", "EXTRACT(DAY FROM ts) * 100 + EXTRACT(MINUTE FROM ts)", "BIGINT", lambda r: civil(r["ts"]).day * 100 + civil(r["ts"]).minute),
        # a DATE's time fields read its day count as milliseconds (Flink's reading)
        ("`EXTRACT(unit FROM ts)`", "EXTRACT(DOY FROM CAST(ts AS DATE)) * 1000 + EXTRACT(SECOND FROM CAST(ts AS DATE))", "BIGINT",
         lambda r: civil(r["ts"]).timetuple().tm_yday * 1000 + (r["ts"] // 86400000 // 1000) % 60),
        ("`EXTRACT(unit FROM ts)`", "EXTRACT(MILLISECOND FROM CAST(ts AS TIME(3))) + HOUR(CAST(ts AS TIME)) * 1000", "BIGINT",
         lambda r: r["ts"] % 1000 + civil(r["ts"]).hour * 1000),
        ("`CURRENT_DATE` / `CURRENT_TIME` / `LOCALTIME`", "TIMESTAMPDIFF(SECOND, CAST(CURRENT_DATE AS TIMESTAMP(3)), CURRENT_TIMESTAMP) BETWEEN 0 AND 86399", "BOOLEAN", lambda r: True),
        ("`CURRENT_DATE` / `CURRENT_TIME` / `LOCALTIME`", "ABS(TIMESTAMPDIFF(SECOND, CAST(CAST(CURRENT_TIMESTAMP AS DATE) AS TIMESTAMP(3)), CURRENT_TIMESTAMP) - (HOUR(CURRENT_TIME) * 3600 + MINUTE(LOCALTIME) * 60 + SECOND(CURRENT_TIME))) <= 61", "BOOLEAN", lambda r: True),
        ("`TO_DATE(s [, format])`", "TO_DATE(DATE_FORMAT(ts, 'dd.MM.yyyy'), 'dd.MM.yyyy')", "DATE", lambda r: civil(r["ts"]).date().isoformat()),
        ("`TO_DATE(s [, format])`", "TO_DATE(s)", "DATE", lambda r: None if r["s"] is None else
         (r["s"] if re.fullmatch(r"\d{4}-\d\d-\d\d", r["s"]) else None)),
        ("`YEAR(ts)` `QUARTER` `MONTH` `WEEK` `DAYOFYEAR` `DAYOFMONTH` `DAYOFWEEK` `HOUR` `MINUTE` `SECOND`",
         "YEAR(ts) * 10000000 + QUARTER(ts) * 1000000 + MONTH(ts) * 10000 + WEEK(ts) * 100 + DAYOFYEAR(ts)", "BIGINT",
         lambda r: (lambda c: c.year * 10000000 + ((c.month - 1) // 3 + 1) * 1000000 + c.month * 10000 + c.isocalendar()[1] * 100 + c.timetuple().tm_yday)(civil(r["ts"]))),
        ("`YEAR(ts)` `QUARTER` `MONTH` `WEEK` `DAYOFYEAR` `DAYOFMONTH` `DAYOFWEEK` `HOUR` `MINUTE` `SECOND`",
         "DAYOFMONTH(ts) * 1000000 + DAYOFWEEK(ts) * 100000 + HOUR(ts) * 10000 + MINUTE(ts) * 100 + SECOND(ts)", "BIGINT",
         lambda r: (lambda c: c.day * 1000000 + (c.isoweekday() % 7 + 1) * 100000 + c.hour * 10000 + c.minute * 100 + c.second)(civil(r["ts"]))),
        ("`TIMESTAMPADD(unit, n, ts)`", "TIMESTAMPADD(DAY, 1, ts)", "TIMESTAMP(3)", lambda r: r["ts"] + 86400000),
        ("`TIMESTAMPADD(unit, n, ts)`", "TIMESTAMPADD(MONTH, CAST(id AS INT), ts)", "TIMESTAMP(3)", lambda r: add_months(r["ts"], r["id"])),
        ("`TIMESTAMPADD(unit, n, ts)`", "TIMESTAMPADD(SECOND, i, ts)", "TIMESTAMP(3)", lambda r: None if r["i"] is None else r["ts"] + r["i"] * 1000),
        ("`TIMESTAMPDIFF(unit, a, b)`", f"TIMESTAMPDIFF(SECOND, {T0}, ts)", "INT", lambda r: tdiv(r["ts"] - BASE, 1000)),
        ("`TIMESTAMPDIFF(unit, a, b)`", f"TIMESTAMPDIFF(MINUTE, ts, {T0})", "INT", lambda r: tdiv(BASE - r["ts"], 60000)),
        ("`TIMESTAMPDIFF(unit, a, b)`", f"TIMESTAMPDIFF(MONTH, {T0}, TIMESTAMPADD(DAY, CAST(id * 9 AS INT), ts))", "INT", lambda r: months_between(BASE, r["ts"] + r["id"] * 9 * 86400000)),
        ("`DATE_FORMAT(ts, fmt)`", "DATE_FORMAT(ts, 'yyyy/MM/dd HH:mm:ss')", "STRING", lambda r: civil(r["ts"]).strftime("%Y/%m/%d %H:%M:%S")),
        ("`TO_TIMESTAMP(s [, format])`", "TO_TIMESTAMP(CAST(ts AS STRING))", "TIMESTAMP(3)", lambda r: r["ts"]),
        ("`TO_TIMESTAMP(s [, format])`", "TO_TIMESTAMP(DATE_FORMAT(ts, 'dd/MM/yyyy HH:mm:ss.SSS'), 'dd/MM/yyyy HH:mm:ss.SSS')", "TIMESTAMP(3)", lambda r: r["ts"]),
        ("`TO_TIMESTAMP(s [, format])`", "TO_TIMESTAMP(s, 'yyyy')", "TIMESTAMP(3)", lambda r: None),
        ("`TO_TIMESTAMP_LTZ(n, 0\\|3)`", "TO_TIMESTAMP_LTZ(id * 1000, 3)", "TIMESTAMP(3)", lambda r: r["id"] * 1000),
        ("`TO_TIMESTAMP_LTZ(n, 0\\|3)`", "TO_TIMESTAMP_LTZ(id, 0)", "TIMESTAMP(3)", lambda r: r["id"] * 1000),
        ("`UNIX_TIMESTAMP([s [, format]])`", "UNIX_TIMESTAMP(DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss'))", "BIGINT", lambda r: r["ts"] // 1000),
        ("`UNIX_TIMESTAMP([s [, format]])`", "UNIX_TIMESTAMP(DATE_FORMAT(ts, 'yyyyMMddHHmmss'), 'yyyyMMddHHmmss')", "BIGINT", lambda r: r["ts"] // 1000),
        ("`UNIX_TIMESTAMP([s [, format]])`", "UNIX_TIMESTAMP(s, 'yyyy-MM')", "BIGINT", strict_r("s", lambda s: -2 ** 63)),
        ("`UNIX_TIMESTAMP([s [, format]])`", "UNIX_TIMESTAMP() > 1767225600", "BOOLEAN", lambda r: True),
        ("`FROM_UNIXTIME(n [, format])`", "FROM_UNIXTIME(id * 86400)", "STRING", lambda r: ts_text(r["id"] * 86400000)[:19]),
        ("`FROM_UNIXTIME(n [, format])`", "FROM_UNIXTIME(TIMESTAMPDIFF(SECOND, TIMESTAMP '1970-01-01 00:00:00', ts), 'dd.MM.yyyy HH:mm')", "STRING", lambda r: civil(r["ts"]).strftime("%d.%m.%Y %H:%M")),
        ("`CURRENT_WATERMARK(ts)`", "CURRENT_WATERMARK(ts) IS NULL", "BOOLEAN", lambda r: r["wm"] is None),
        ("`CURRENT_WATERMARK(ts)`", "TIMESTAMPDIFF(SECOND, CURRENT_WATERMARK(ts), ts)", "INT", lambda r: None if r["wm"] is None else tdiv(r["ts"] - r["wm"], 1000)),
    ]
    return c + coll_cases() + json_cases()


def strict_r(col, f):
    return lambda r: None if r[col] is None else f(r[col])


def gt(a, b):
    return None if a is None else a > b


def and3(a, b):
    return False if a is False or b is False else None if a is None or b is None else True


def or3(a, b):
    return True if a is True or b is True else None if a is None or b is None else False


def not3(a):
    return None if a is None else not a


# ---- the test -------------------------------------------------------------------------


@pytest.mark.parametrize("parallelism", [1, 2])
def test_every_documented_function_through_a_running_job(cluster, workdir, parallelism):
    documented = doc_functions()
    cs = cases()
    covered = {c[0] for c in cs}
    missing = [f for f, yes in documented if yes and f not in covered]
    assert not missing, f"docs/SQL.md lists these as supported, but no case runs them: {missing}"
    stale = covered - {f for f, yes in documented if yes}
    assert not stale, f"cases for forms docs/SQL.md does not list as supported: {stale}"

    data = make_rows()
    src, out = os.path.join(workdir, "src"), os.path.join(workdir, "out")
    os.makedirs(src)
    with open(os.path.join(src, "rows.json"), "w") as f:
        for r in data:
            f.write(json.dumps({"id": r["id"], "i": r["i"], "d": r["d"], "s": r["s"],
                                "u": r["u"], "ts": ts_text(r["ts"])}) + "\n")
    cols = ", ".join(f"c{k} {t}" for k, (_, _, t, _) in enumerate(cs))
    items = ",\n  ".join(f"{sql} AS c{k}" for k, (_, sql, _, _) in enumerate(cs))
    cluster.add_tm(slots=parallelism)
    t0 = int(time.time() * 1000)
    r = run_sql(cluster, workdir, "functions.sql", f"""
SET 'parallelism.default' = '{parallelism}';
SET 'pipeline.auto-watermark-interval' = '0 ms';
CREATE TABLE src (
    id BIGINT, i INT, d DOUBLE, s STRING, u STRING, ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE `out` (id BIGINT, {cols})
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO `out` SELECT id,
  {items}
FROM src;
""", timeout=180)
    jids = job_ids(r.stdout)
    assert len(jids) == 1, r.stdout + r.stderr
    finish(cluster, jids[0])
    t1 = int(time.time() * 1000)

    got = rows(out)
    assert [g["id"] for g in got] == [d["id"] for d in data]
    bad = []
    for k, (form, sql, typ, fn) in enumerate(cs):
        for g, d in zip(got, data):
            want = Between(t0 - 1000, t1 + 1000) if fn == "clock" else fn(d)
            v = g[f"c{k}"]
            if typ.startswith("TIMESTAMP") and v is not None:
                v = ms(v)
            if v != want:
                bad.append(f"{sql} on row {d['id']} {d}: got {v!r}, want {want!r}")
    assert not bad, f"{len(bad)} wrong results:\n" + "\n".join(bad[:30])
    # the rows must exercise what they are meant to: NULLs, late rows, a first watermark
    assert any(d["i"] is None for d in data) and any(d["s"] is None for d in data)
    assert any(d["wm"] is not None and d["ts"] < d["wm"] for d in data)
