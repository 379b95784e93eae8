"""Apache Flink as the oracle: the same SQL over the same files through
Flink 2.3 and through Sluice, compared as final multisets.

Used by tests/integration/test_flink_oracle.py; also run as a script under
the Python of the Flink venv (`python flink_oracle.py --driver spec out`),
where it is the Flink side.

Flink side. PyFlink's TableEnvironment starts one JVM (its gateway, with a
local MiniCluster) and every query of the run goes through it as ONE job:
each query is planned alone first (`sql_query` for its result schema, then
EXPLAIN of `INSERT INTO` a sink of that schema), so a query Flink refuses
is recorded with its message and left out; the others become one statement
set whose sinks are `filesystem` tables in the `debezium-json` format (the
filesystem sink takes the changelog its format can encode: an insert or
update-after is an "after" image, an update-before or delete a "before"
image). One job instead of one per query: a MiniCluster per job costs
seconds. Parallelism 1, `pipeline.auto-watermark-interval` 0 (Flink SQL's
watermark assigner then emits after every row whose watermark is higher)
and the local time zone UTC. The driver writes one JSON line per query:
{"name", "ok": true, "cols": [[name, type]], "rows": [[kind, [values]]]}
or {"name", "ok": false, "error"}; values as debezium-json writes them
(TIMESTAMP as SQL text).

Sluice side. Per query a script for `sluice sql -f`: the same table DDL, a
`filesystem` json sink whose columns are the names and types of Flink's
result schema (DECIMAL and FLOAT as themselves, any length of VARCHAR as STRING), the
same `SET`s, and `INSERT INTO` the sink the same SELECT; the json sink
writes the changelog with each row's kind (`"op"`).

Comparison. Each side's changelog is applied to a multiset: +I and +U add
a row, -U and -D remove one (a row retracted more often than added is an
error of that side, reported as such). Values are
normalised by the type of Flink's column: TIMESTAMP text or datetime to
epoch ms, DOUBLE/FLOAT to a float rounded to 12 significant digits
(the order of additions of SUM/AVG may differ), DECIMAL exactly (a
Decimal: equal values at any scale are equal), the rest as they are.
"""
import collections
import datetime
import decimal
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EPOCH = datetime.datetime(1970, 1, 1)

# ------------------------------------------------------------------ Flink side
# (runs under the Flink venv's Python; imports PyFlink only there)


def _first_line(e):
    text = str(e)
    # py4j wraps the Java exception: keep its message lines, not the stack
    lines = [ln for ln in text.splitlines()
             if ln.strip() and not ln.strip().startswith(("at ", "...", "An error occurred"))]
    return "\n".join(lines[:6])


def _sink_rows(d):
    """[(kind, row dict)] of a debezium-json filesystem sink directory (the
    files Flink committed and any it left in progress)."""
    rows = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        with open(os.path.join(d, name)) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line, parse_float=decimal.Decimal)
                    if r.get("before") is not None:
                        rows.append(("-D", r["before"]))
                    if r.get("after") is not None:
                        rows.append(("+I", r["after"]))
    return rows


def _plain(value, flink_type):
    """A value read with Decimal numbers as JSON can carry it: a DECIMAL
    column's as its exact text, any other number as a float."""
    if isinstance(value, decimal.Decimal):
        return str(value) if flink_type.upper().startswith("DECIMAL") else float(value)
    return value


def _driver_main(spec_path, out_path):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    with open(spec_path) as f:
        spec = json.load(f)
    work = os.path.dirname(os.path.abspath(out_path))
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    for k, v in spec["config"].items():
        conf.set(k, v)
    for stmt in spec["ddl"]:
        env.execute_sql(stmt)
    recs, sinks = [], {}
    stmts = env.create_statement_set()
    for n, q in enumerate(spec["queries"]):
        rec = {"name": q["name"]}
        recs.append(rec)
        try:
            for stmt in q.get("ddl", []):
                env.execute_sql(stmt)
            table = env.sql_query(q["sql"])
            schema = table._j_table.getResolvedSchema()
            names = list(schema.getColumnNames())
            raw = [str(t.toString()) for t in schema.getColumnDataTypes()]
            types = [t.replace(" *ROWTIME*", "").replace(" *PROCTIME*", "") for t in raw]
            rec["cols"] = [[a, b] for a, b in zip(names, types)]
            sink_dir = os.path.join(work, f"flink-out-{n}")
            cols = ", ".join(f"`{a}` {b}" for a, b in zip(names, types))
            env.execute_sql(f"CREATE TABLE oracle_sink_{n} ({cols}) WITH ("
                            f"'connector' = 'filesystem', 'path' = '{sink_dir}', "
                            f"'format' = 'debezium-json')")
            insert = f"INSERT INTO oracle_sink_{n} {q['sql']}"
            if sum("*ROWTIME*" in t for t in raw) > 1:
                # Flink's sink takes one rowtime column (the SQL client's result
                # takes any number): the others are cast to plain timestamps
                # around the query, which itself stays as written
                sel = ", ".join(f"CAST(`{a}` AS {b.replace(' NOT NULL', '')}) AS `{a}`"
                                if "*ROWTIME*" in r else f"`{a}`"
                                for a, b, r in zip(names, types, raw))
                insert = f"INSERT INTO oracle_sink_{n} SELECT {sel} FROM ({q['sql']})"
            env.explain_sql(insert)  # refused here rather than in the one job
            stmts.add_insert_sql(insert)
            sinks[q["name"]] = sink_dir
        except Exception as e:  # a refusal is the result
            rec.update(ok=False, error=_first_line(e))
    t0 = time.monotonic()
    if sinks:
        stmts.execute().wait()
    for rec in recs:
        if rec["name"] in sinks:
            rows = _sink_rows(sinks[rec["name"]])
            rec.update(ok=True, rows=[[k, [_plain(r.get(c), t) for c, t in rec["cols"]]]
                                      for k, r in rows])
    with open(out_path, "w") as out:
        out.write(json.dumps({"job_seconds": round(time.monotonic() - t0, 3)}) + "\n")
        for rec in recs:
            out.write(json.dumps(rec) + "\n")


FLINK_CONFIG = {"parallelism.default": "1",
                "pipeline.auto-watermark-interval": "0 ms",
                "table.local-time-zone": "UTC"}


def flink_python():
    """The Flink venv's python (installed on first use, as for the CLI test)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import flink_vs_sluice as bench
    return bench.ensure_flink()


def run_flink(ddl, queries, workdir, timeout=900, config=None):
    """Every query through one Flink JVM; {name: record} (see the driver).
    config: settings over FLINK_CONFIG (another table.local-time-zone)."""
    py = flink_python()
    spec = os.path.join(workdir, "flink-spec.json")
    out = os.path.join(workdir, "flink-results.jsonl")
    with open(spec, "w") as f:
        json.dump({"config": dict(FLINK_CONFIG, **(config or {})), "ddl": ddl,
                   "queries": queries}, f)
    env = dict(os.environ, FLINK_LOG_DIR=workdir, PYTHONUNBUFFERED="1")
    with open(os.path.join(workdir, "flink-driver.log"), "wb") as log:
        r = subprocess.run([py, os.path.abspath(__file__), "--driver", spec, out],
                           stdout=log, stderr=subprocess.STDOUT, cwd=workdir, env=env,
                           timeout=timeout)
    got = {}
    if os.path.exists(out):
        with open(out) as f:
            for line in f:
                rec = json.loads(line)
                if "name" in rec:
                    got[rec["name"]] = rec
    if r.returncode != 0 or len(got) != len(queries):
        with open(os.path.join(workdir, "flink-driver.log"), errors="replace") as f:
            tail = f.read()[-4000:]
        raise AssertionError(f"the Flink driver exited with {r.returncode} after "
                             f"{len(got)} of {len(queries)} queries:\n{tail}")
    return got


# ----------------------------------------------------------------- Sluice side

def sluice_type(flink_type):
    """The sink column type for a Flink result type."""
    t = flink_type.upper().replace(" NOT NULL", "")
    t = t.replace(" *ROWTIME*", "").replace(" *PROCTIME*", "")
    if t.startswith(("VARCHAR", "CHAR", "STRING")):
        return "STRING"
    if t.startswith("DECIMAL"):
        return t  # exact: compared digit for digit
    if t.startswith("FLOAT"):
        return "FLOAT"
    if t.startswith(("REAL", "DOUBLE")):
        return "DOUBLE"
    if t.startswith("TIMESTAMP_LTZ") or t.startswith("TIMESTAMP(3) WITH LOCAL"):
        return "TIMESTAMP_LTZ(3)"
    if t.startswith("TIMESTAMP"):
        return "TIMESTAMP(3)"
    return t


def quote(name):
    return "`" + name.replace("`", "``") + "`"


def sluice_script(ddl, query, cols, out_dir, parallelism, settings):
    sink = ", ".join(f"{quote(n)} {sluice_type(t)}" for n, t in cols)
    lines = [s.rstrip().rstrip(";") + ";" for s in ddl + query.get("ddl", [])]
    lines += [f"SET '{k}' = '{v}';" for k, v in settings.items()]
    lines.append(f"SET 'parallelism.default' = '{parallelism}';")
    lines.append(f"CREATE TABLE oracle_sink ({sink}) WITH ('connector' = 'filesystem', "
                 f"'path' = '{out_dir}', 'format' = 'json');")
    lines.append("INSERT INTO oracle_sink " + query["sql"].rstrip().rstrip(";") + ";")
    return "\n".join(lines) + "\n"


PART = re.compile(r"^part-(\d+)(?:-(\d+))?$")


def sink_changelog(out_dir):
    """[(kind, row dict)] of a json filesystem sink, part files in order."""
    found = []
    if os.path.isdir(out_dir):
        for name in os.listdir(out_dir):
            m = PART.match(name)
            if m:
                found.append((int(m.group(1)), int(m.group(2) or -1), name))
    rows = []
    for _, _, name in sorted(found):
        with open(os.path.join(out_dir, name)) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line, parse_float=decimal.Decimal)
                    rows.append((r.pop("op", "+I"), r))
    return rows


# ----------------------------------------------------------------- comparison

def ms_of_text(text):
    """'2026-01-01 00:00:00.02' (Flink's json/SQL form, also with 'T', and a
    TIMESTAMP_LTZ's trailing 'Z') to epoch ms."""
    text = text.replace("T", " ").rstrip("Z")
    if "." not in text:
        text += ".0"
    d = datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f")
    return int(round((d - EPOCH).total_seconds() * 1000))


def normalise(value, flink_type):
    if value is None:
        return None
    if isinstance(value, list):  # an ARRAY: its elements as they are, hashable
        return tuple(tuple(v) if isinstance(v, list) else v for v in value)
    t = flink_type.upper()
    if t.startswith("TIMESTAMP"):
        if isinstance(value, dict):
            return value["ts"]
        return ms_of_text(value)
    if t.startswith("DECIMAL"):
        return decimal.Decimal(str(value))  # exact (read as Decimal, equal across scales)
    if t.startswith(("DOUBLE", "FLOAT", "REAL")):
        if isinstance(value, str):  # NaN / Infinity as text
            return value
        return float(f"{float(value):.12g}")
    if isinstance(value, dict):  # a MULTISET's or MAP's object: its entries, in any order
        return tuple(sorted((k, str(v)) for k, v in value.items()))
    return value


def final_multiset(changes, cols):
    """Apply [(kind, values)] to a multiset of normalised tuples: +I/+U count
    +1, -U/-D count -1. The sum, not a replay in order: a sink of parallelism
    2 writes one file per subtask, and the order between files is not
    known, so a retraction may be read before its row. Returns (Counter,
    problems): a row retracted more often than added is a problem."""
    counts = collections.Counter()
    for kind, vals in changes:
        row = tuple(normalise(v, t) for v, (_, t) in zip(vals, cols))
        counts[row] += 1 if kind in ("+I", "+U") else -1
    problems = [f"{list(row)} retracted {-n} more time(s) than added"
                for row, n in counts.items() if n < 0]
    return +counts, problems


def sluice_changes(out_dir, cols):
    return [(k, [r.get(n) for n, _ in cols]) for k, r in sink_changelog(out_dir)]


def describe_diff(want, got, limit=12):
    """A short text of the rows only one side has."""
    only_w = want - got
    only_g = got - want
    lines = []
    for label, c in (("only Flink", only_w), ("only Sluice", only_g)):
        items = sorted(c.items(), key=repr)
        for row, n in items[:limit]:
            lines.append(f"  {label}: {list(row)}" + (f" x{n}" if n > 1 else ""))
        if len(items) > limit:
            lines.append(f"  {label}: ... {len(items) - limit} more")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--driver":
        _driver_main(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: flink_oracle.py --driver SPEC OUT")
