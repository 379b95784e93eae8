"""Nested values (ROW in ROW, ARRAY, MAP, DECIMAL, DATE, TIMESTAMP(6))
through Kafka from SQL text, against the Kafka-compatible broker of
test_kafka.py:

- debezium-json change events (c, u, d) read as a changelog and written to
  a filesystem sink, to a kafka sink in debezium-json and to upsert-kafka
  (key from the primary key, -U dropped, -D a tombstone);
- a topic of nested JSON read by the kafka source and written by the kafka
  sink with a key of a nested ROW and a DECIMAL (key.format json,
  key.fields), every record compared as JSON.

The expected records are derived from the produced events in Python; JSON
is compared parsed (numbers as exact decimals), so the order of an
object's members does not matter."""
import decimal
import json
import os

from test_kafka import (kafka_env, broker, newer_librdkafka, create_topic, produce_kv,  # noqa: F401
                        log_records)
from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql

D = decimal.Decimal

COLS = """id BIGINT, price DECIMAL(10, 2), tags ARRAY<STRING>, attrs MAP<STRING, INT>,
    addr ROW<city STRING, zip ROW<code INT, ext ARRAY<INT>>>, d DATE, ts TIMESTAMP(6)"""


def row(i, price, tags, attrs, city, code, ext, d, ts):
    return {"id": i, "price": price, "tags": tags, "attrs": attrs,
            "addr": {"city": city, "zip": {"code": code, "ext": ext}}, "d": d, "ts": ts}


A1 = row(1, D("12.50"), ["x", "y"], {"k": 1, "n": None}, "Oslo", 150, [1, None], "2026-01-01",
         "2026-01-01 10:00:00.123456")
B1 = row(2, D("0.05"), [], {}, "Rome", None, None, "1999-12-31", "2026-01-01 10:00:00")
A2 = row(1, D("99999999.99"), ["z"], {"k": 2}, "Lima", 1, [], "2026-02-28",
         "2026-01-01 10:00:00.5")
C1 = row(3, D("-1.00"), None, None, "Lima", 1, [], "2026-03-01", "2026-01-01 23:59:59.999999")


def load(b):
    return b if b is None else json.loads(b, parse_float=D, parse_int=D)


def dumps(v):
    """JSON text, a Decimal as a number."""
    return json.dumps(v, default=float)


def norm(v):
    """v with every number as a Decimal (ints too), for comparing with load()."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return D(str(v))
    return v


def test_debezium_with_nested_values_into_three_sinks(cluster, broker, workdir):
    bs = broker.bootstrap
    cluster.add_tm(slots=4)
    for t in ("cdc", "cdc-out", "cdc-ups"):
        create_topic(bs, t, 1)
    ev = [("c", None, A1), ("c", None, B1), ("u", A1, A2), ("d", B1, None), ("c", None, C1)]
    produce_kv(bs, "cdc", [(0, None, dumps({"before": b, "after": a, "op": op,
                                                       "ts_ms": 1}).encode(), None)
                           for op, b, a in ev])
    rows = []
    for op, b, a in ev:
        rows += {"c": [("+I", a)], "u": [("-U", b), ("+U", a)], "d": [("-D", b)]}[op]

    out = os.path.join(workdir, "files")
    r = run_sql(cluster, workdir, "cdc.sql", f"""
CREATE TABLE cdc ({COLS}) WITH ('connector' = 'kafka', 'topic' = 'cdc',
    'properties.bootstrap.servers' = '{bs}', 'value.format' = 'debezium-json',
    'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE files ({COLS}) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
CREATE TABLE dbz ({COLS}) WITH ('connector' = 'kafka', 'topic' = 'cdc-out',
    'properties.bootstrap.servers' = '{bs}', 'value.format' = 'debezium-json');
CREATE TABLE ups ({COLS}, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
    'topic' = 'cdc-ups', 'properties.bootstrap.servers' = '{bs}', 'key.format' = 'json',
    'value.format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO files SELECT * FROM cdc;
INSERT INTO dbz SELECT * FROM cdc;
INSERT INTO ups SELECT * FROM cdc;
END;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])

    got = []
    for p in committed_files(out):
        with open(p) as f:
            for line in f:
                x = load(line)
                got.append((x.pop("op", "+I"), x))
    assert got == [(k, norm(v)) for k, v in rows]

    want_dbz = [{"before": None, "after": v, "op": "c"} if k in ("+I", "+U")
                else {"before": v, "after": None, "op": "d"} for k, v in rows]
    assert [load(v) for k, v in log_records(bs, "cdc-out")[0]] == norm(want_dbz)

    want_ups = [({"id": v["id"]}, None if k == "-D" else v) for k, v in rows if k != "-U"]
    assert [(load(k), load(v)) for k, v in log_records(bs, "cdc-ups")[0]] == \
        [(norm(k), norm(v)) for k, v in want_ups]


def test_nested_json_kafka_to_kafka_with_a_nested_key(cluster, broker, workdir):
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "nested-in", 2)
    create_topic(bs, "nested-out", 1)
    src = [A1, B1, A2, C1]
    produce_kv(bs, "nested-in", [(i % 2, None, dumps(v).encode(), None)
                                 for i, v in enumerate(src)])
    r = run_sql(cluster, workdir, "k2k.sql", f"""
CREATE TABLE nin ({COLS}) WITH ('connector' = 'kafka', 'topic' = 'nested-in',
    'properties.bootstrap.servers' = '{bs}', 'format' = 'json',
    'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE nout (addr ROW<city STRING, zip ROW<code INT, ext ARRAY<INT>>>,
    price DECIMAL(10, 2), tags ARRAY<STRING>, attrs MAP<STRING, INT>, id BIGINT)
  WITH ('connector' = 'kafka', 'topic' = 'nested-out', 'properties.bootstrap.servers' = '{bs}',
    'key.format' = 'json', 'key.fields' = 'addr;price', 'value.format' = 'json');
INSERT INTO nout SELECT addr, price, tags, attrs, id FROM nin;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    got = sorted(((load(k), load(v)) for k, v in log_records(bs, "nested-out")[0]),
                 key=lambda kv: kv[1]["id"])
    want = [({"addr": v["addr"], "price": v["price"]},
             {"addr": v["addr"], "price": v["price"], "tags": v["tags"], "attrs": v["attrs"],
              "id": v["id"]}) for v in sorted(src, key=lambda v: v["id"])]
    # A1 and A2 share an id: order them by their price then
    got.sort(key=lambda kv: (kv[1]["id"], kv[1]["price"]))
    want.sort(key=lambda kv: (kv[1]["id"], kv[1]["price"]))
    assert got == [(norm(k), norm(v)) for k, v in want]
