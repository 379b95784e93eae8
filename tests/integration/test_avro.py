"""The avro and avro-confluent formats through a Kafka-protocol broker, from
SQL text: every type Avro carries written by Python (avro_model, stdlib
only) and read back by Python from what Sluice wrote; SQL literals written
by Sluice and decoded by Python; the registry calls of avro-confluent
answered by a registry served from this test; a writer schema that differs
from the table's read through schema resolution; bad records failing the
job with a message naming the record; and Kafka -> avro -> Kafka exactly
once through TaskManager kills."""
import datetime
import decimal
import json
import random
import re
import signal

import pytest

import avro_model as am
from conftest import wait_for
from test_kafka import (BASE, broker, create_topic, exactly_once_committed, kafka_env,  # noqa: F401
                        log_records, newer_librdkafka, produce_kv, checkpoints_completed)
from test_sql import Session, job_ids

D = decimal.Decimal
COLS = [("id", "BIGINT NOT NULL"), ("c_bool", "BOOLEAN"), ("c_tiny", "TINYINT"),
        ("c_small", "SMALLINT"), ("c_int", "INT"), ("c_float", "FLOAT"), ("c_double", "DOUBLE"),
        ("c_str", "STRING"), ("c_bytes", "BYTES"), ("c_dec", "DECIMAL(10, 2)"),
        ("c_dec38", "DECIMAL(38, 10)"), ("c_date", "DATE"), ("c_time", "TIME(3)"),
        ("c_ts3", "TIMESTAMP(3)"), ("c_ts6", "TIMESTAMP(6)"), ("c_ltz", "TIMESTAMP_LTZ(3)"),
        ("c_ai", "ARRAY<INT>"), ("c_as", "ARRAY<STRING NOT NULL>"), ("c_map", "MAP<STRING, BIGINT>"),
        ("c_mset", "MULTISET<STRING>"), ("c_row", "ROW<x INT, y STRING>"),
        ("c_nest", "ARRAY<ROW<p DOUBLE, q ARRAY<INT>>>")]


def ddl(name, cols):
    return f"CREATE TABLE {name} (" + ", ".join(f"{n} {t}" for n, t in cols) + ")"


def random_row(rnd, i):
    """One row of COLS: edge values, NULLs in about a fifth of the nullable
    places (elements and fields too)."""
    def maybe(v):
        return None if rnd.random() < 0.2 else v
    ts = am.EPOCH + datetime.timedelta(microseconds=rnd.randrange(-10**15, 4 * 10**15))
    return {
        "id": i,
        "c_bool": maybe(rnd.random() < 0.5),
        "c_tiny": maybe(rnd.choice([-128, 127, 0, rnd.randrange(-128, 128)])),
        "c_small": maybe(rnd.choice([-32768, 32767, rnd.randrange(-32768, 32768)])),
        "c_int": maybe(rnd.choice([-2**31, 2**31 - 1, rnd.randrange(-2**31, 2**31)])),
        "c_float": maybe(rnd.randrange(-10**6, 10**6) / 8),
        "c_double": maybe(rnd.choice([1e300, -2.5e-300, rnd.random() * 1e6])),
        "c_str": maybe(rnd.choice(["", "ascii", "grüße, 東京", "a,b\"c\n", "x" * 300])),
        "c_bytes": maybe(bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 40)))),
        "c_dec": maybe(D(rnd.randrange(-10**10 + 1, 10**10)).scaleb(-2)),
        "c_dec38": maybe(D(rnd.choice([10**38 - 1, -(10**38) + 1, rnd.randrange(-10**30, 10**30)]))
                         .scaleb(-10)),
        "c_date": maybe(datetime.date(1970, 1, 1) + datetime.timedelta(days=rnd.randrange(-40000,
                                                                                           40000))),
        "c_time": maybe((datetime.datetime.min + datetime.timedelta(
            milliseconds=rnd.randrange(86400000))).time()),
        "c_ts3": maybe(ts.replace(microsecond=ts.microsecond // 1000 * 1000)),
        "c_ts6": maybe(ts),
        "c_ltz": maybe(ts.replace(microsecond=ts.microsecond // 1000 * 1000)),
        "c_ai": maybe([maybe(rnd.randrange(-1000, 1000)) for _ in range(rnd.randrange(0, 6))]),
        "c_as": maybe([rnd.choice(["", "a", "ü"]) for _ in range(rnd.randrange(0, 4))]),
        "c_map": maybe({f"k{j}": maybe(rnd.randrange(-2**63, 2**63)) for j in range(rnd.randrange(0, 4))}),
        "c_mset": maybe({f"e{j}": rnd.randrange(1, 4) for j in range(rnd.randrange(0, 3))}),
        "c_row": maybe({"x": maybe(rnd.randrange(100)), "y": maybe("y%d" % i)}),
        "c_nest": maybe([maybe({"p": maybe(rnd.random()), "q": maybe([maybe(rnd.randrange(9))
                                                                        for _ in range(rnd.randrange(3))])})
                         for _ in range(rnd.randrange(0, 3))]),
    }


def run_insert(s, cluster, stmt, timeout=90):
    out = s.run(stmt)
    ids = job_ids(out)
    assert ids, out
    st = cluster.wait_state(ids[0], ["FINISHED", "FAILED", "CANCELED"], timeout=timeout)
    return ids[0], st


@pytest.fixture
def registry():
    r = am.Registry()
    yield r
    r.stop()


def test_avro_round_trip_of_every_type(cluster, broker):
    """Python writes n records (key avro: the id; value avro: every column)
    in the schema Flink derives; `INSERT INTO out SELECT * FROM src` reads
    and writes them with the avro format; Python decodes the output's keys
    and values with the same derived schema: every value comes back equal,
    NULLs where they were."""
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "av-in", 2)
    create_topic(bs, "av-out", 1)
    schema = am.table_schema(COLS)
    kschema = am.table_schema(COLS[:1])
    rnd = random.Random(35)
    rows = [random_row(rnd, i) for i in range(60)]
    produce_kv(bs, "av-in", [(r["id"] % 2, am.to_bytes(kschema, {"id": r["id"]}),
                              am.to_bytes(schema, r), None) for r in rows])
    s = Session(cluster)
    opts = (f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{bs}', "
            "'key.format' = 'avro', 'key.fields' = 'id', 'value.format' = 'avro'")
    for stmt in [ddl("src", COLS) + f" WITH ({opts}, 'topic' = 'av-in', "
                 "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');",
                 ddl("dst", COLS) + f" WITH ({opts}, 'topic' = 'av-out');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    jid, st = run_insert(s, cluster, "INSERT INTO dst SELECT * FROM src;")
    s.close()
    assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    got = {}
    for k, v in log_records(bs, "av-out")[0]:
        key = am.from_bytes(kschema, k)
        val = am.from_bytes(schema, v)
        assert key["id"] == val["id"]
        got[val["id"]] = val
    assert len(got) == len(rows)
    for r in rows:
        assert got[r["id"]] == r, (r["id"], {c: (r[c], got[r["id"]][c]) for c in r
                                             if r[c] != got[r["id"]][c]})


def test_avro_sql_literals_decoded_by_python(cluster, broker):
    """Values Sluice makes (SQL literals) in the bytes Python reads: the
    encoding checked on its own, not only as the inverse of the decoding."""
    bs = broker.bootstrap
    cluster.add_tm(slots=1)
    create_topic(bs, "av-lit", 1)
    cols = [("id", "BIGINT"), ("b", "BOOLEAN"), ("i", "INT"), ("d", "DOUBLE"), ("s", "STRING"),
            ("amt", "DECIMAL(10, 2)"), ("dt", "DATE"), ("tm", "TIME(3)"), ("ts", "TIMESTAMP(3)")]
    s = Session(cluster)
    assert s.run(ddl("lit", cols) + f" WITH ('connector' = 'kafka', 'topic' = 'av-lit', "
                 f"'properties.bootstrap.servers' = '{bs}', 'format' = 'avro');") == \
        "[INFO] Execute statement succeed.\n"
    jid, st = run_insert(s, cluster, (
        "INSERT INTO lit VALUES (CAST(1 AS BIGINT), TRUE, -7, 2.5, 'héllo', CAST(-12.34 AS "
        "DECIMAL(10, 2)), CAST('1969-12-31' AS DATE), CAST('23:59:59.999' AS TIME(3)), CAST('1969-12-31 "
        "23:59:59.123' AS TIMESTAMP(3))), (CAST(2 AS BIGINT), CAST(NULL AS BOOLEAN), CAST(NULL AS INT), "
        "CAST(NULL AS DOUBLE), CAST(NULL AS STRING), CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS "
        "DATE), CAST(NULL AS TIME(3)), CAST(NULL AS TIMESTAMP(3)));"))
    s.close()
    assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    schema = am.table_schema(cols)
    got = sorted((am.from_bytes(schema, v) for _, v in log_records(bs, "av-lit")[0]),
                 key=lambda r: r["id"])
    assert got == [
        {"id": 1, "b": True, "i": -7, "d": 2.5, "s": "héllo", "amt": D("-12.34"),
         "dt": datetime.date(1969, 12, 31), "tm": datetime.time(23, 59, 59, 999000),
         "ts": datetime.datetime(1969, 12, 31, 23, 59, 59, 123000)},
        dict({c: None for c, _ in cols}, id=2)]


def test_avro_confluent_registry_and_schema_resolution(cluster, broker, registry):
    """avro-confluent, key and value: Python writes records in the wire
    format under a writer schema of its own (fields in another order, one
    more field, an int where the table has BIGINT) registered with the test's
    registry; the source fetches it by id and reads through libavro's
    resolution; the sink registers the table's schema (Flink's derivation)
    under <topic>-key and <topic>-value and writes it with that id."""
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "cf-in", 1)
    create_topic(bs, "cf-out", 1)
    cols = [("id", "BIGINT NOT NULL"), ("name", "STRING"), ("amount", "DECIMAL(12, 3)"),
            ("tags", "ARRAY<STRING>")]
    writer = {"type": "record", "name": "Order", "fields": [
        {"name": "tags", "type": ["null", {"type": "array", "items": ["null", "string"]}]},
        {"name": "extra", "type": "string"},
        {"name": "amount", "type": ["null", {"type": "bytes", "logicalType": "decimal",
                                             "precision": 12, "scale": 3}]},
        {"name": "name", "type": ["null", "string"]},
        {"name": "id", "type": "int"}]}
    kwriter = {"type": "record", "name": "Key", "fields": [{"name": "id", "type": "long"}]}
    wid = registry.register("upstream-value", json.dumps(writer))
    kid = registry.register("upstream-key", json.dumps(kwriter))
    rows = [{"id": i, "name": None if i % 5 == 0 else f"n{i}",
             "amount": D(i * 1001 - 5000).scaleb(-3), "tags": [f"t{i}", None][: i % 3]}
            for i in range(40)]
    produce_kv(bs, "cf-in", [(0, am.confluent(kid, kwriter, {"id": r["id"]}),
                              am.confluent(wid, writer, dict(r, extra="x" * (r["id"] % 7))), None)
                             for r in rows])
    s = Session(cluster)
    opts = (f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{bs}', "
            "'key.format' = 'avro-confluent', 'key.fields' = 'id', "
            f"'key.avro-confluent.url' = '{registry.url}', 'value.format' = 'avro-confluent', "
            f"'value.avro-confluent.url' = '{registry.url}'")
    for stmt in [ddl("src", cols) + f" WITH ({opts}, 'topic' = 'cf-in', "
                 "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');",
                 ddl("dst", cols) + f" WITH ({opts}, 'topic' = 'cf-out');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    jid, st = run_insert(s, cluster, "INSERT INTO dst SELECT * FROM src;")
    s.close()
    assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    # the sink registered exactly Flink's derived schemas under the topic's subjects
    vs = registry.subjects["cf-out-value"]
    ks = registry.subjects["cf-out-key"]
    assert len(vs) == 1 and len(ks) == 1
    assert json.loads(registry.schemas[vs[0] - 1]) == am.table_schema(cols)
    assert json.loads(registry.schemas[ks[0] - 1]) == am.table_schema(cols[:1])
    assert ("POST", "/subjects/cf-out-value/versions",
            "application/vnd.schemaregistry.v1+json") in registry.calls
    # each writer schema fetched by id once per reading subtask, not per record
    gets = [c for c in registry.calls if c[0] == "GET"]
    assert sorted(set(gets)) == sorted({("GET", f"/schemas/ids/{wid}", None),
                                        ("GET", f"/schemas/ids/{kid}", None)})
    assert len(gets) == 2, gets
    got = []
    for k, v in log_records(bs, "cf-out")[0]:
        sk, key = am.unconfluent(registry, k)
        sv, val = am.unconfluent(registry, v)
        assert (sk, sv) == (ks[0], vs[0]) and key == {"id": val["id"]}
        got.append(val)
    assert got == rows


def test_avro_bad_records_fail_with_the_record_named(cluster, broker, registry):
    """A record that is not Avro of the table's schema fails the job with
    the topic, partition, offset and the reason (Flink's avro format has no
    ignore-parse-errors option); an id the registry does not know fails with
    the registry's answer; a type Avro cannot carry is refused at CREATE/INSERT."""
    bs = broker.bootstrap
    cluster.add_tm(slots=1)
    create_topic(bs, "bad", 1)
    create_topic(bs, "bad-cf", 1)
    cols = [("id", "BIGINT NOT NULL"), ("name", "STRING")]
    schema = am.table_schema(cols)
    produce_kv(bs, "bad", [(0, None, am.to_bytes(schema, {"id": 1, "name": "ok"}), None),
                           (0, None, am.to_bytes(schema, {"id": 2, "name": "ok"}) + b"\x00", None)])
    produce_kv(bs, "bad-cf", [(0, None, am.confluent(99, schema, {"id": 1, "name": "x"}), None)])
    s = Session(cluster)
    base = f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{bs}', " \
           "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"
    for stmt in [ddl("b1", cols) + f" WITH ({base}, 'topic' = 'bad', 'format' = 'avro');",
                 ddl("b2", cols) + f" WITH ({base}, 'topic' = 'bad-cf', 'format' = "
                 f"'avro-confluent', 'avro-confluent.url' = '{registry.url}');",
                 "CREATE TABLE sink1 (id BIGINT, name STRING) WITH ('connector' = 'blackhole');",
                 ddl("iv", [("id", "BIGINT"), ("x", "MAP<INT, STRING>")]) +
                 f" WITH ('connector' = 'kafka', 'topic' = 'bad', 'properties.bootstrap.servers' "
                 f"= '{bs}', 'format' = 'avro');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    jid, st = run_insert(s, cluster, "INSERT INTO sink1 SELECT * FROM b1;")
    assert st["state"] == "FAILED"
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "cannot decode the value of topic 'bad' partition 0 offset 1 as avro" in exc, exc
    assert "1 bytes after the Avro record" in exc, exc
    jid, st = run_insert(s, cluster, "INSERT INTO sink1 SELECT * FROM b2;")
    assert st["state"] == "FAILED"
    exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "offset 0 as avro-confluent" in exc and "/schemas/ids/99: HTTP 404" in exc, exc
    out = s.run("INSERT INTO sink1 SELECT id, CAST(id AS STRING) FROM iv;")
    assert "column 'x': MAP<INT, STRING>: Avro map keys are strings" in out, out
    out = s.run(ddl("nourl", cols) + f" WITH ({base}, 'topic' = 'bad', 'format' = "
                "'avro-confluent');")
    out += s.run("INSERT INTO sink1 SELECT * FROM nourl;")
    assert "needs 'avro-confluent.url'" in out, out
    s.close()


def test_avro_confluent_registry_over_https_with_authentication(cluster, broker, workdir):
    """The registry served over HTTPS with a private CA and requiring basic
    authentication, as Flink's avro-confluent options configure it
    (basic-auth.credentials-source USER_INFO, basic-auth.user-info,
    ssl.truststore.location -- a PEM file here): a sink registers its schema
    and writes records Python decodes; a source reads them back through the
    registry (each call authenticated) into a json topic, equal to the rows
    written. A wrong password fails the job with the registry's 401; bearer
    authentication sends the token; without the CA the certificate is refused."""
    import base64
    from test_cluster_tls import make_ca, make_node
    bs = broker.bootstrap
    ca = make_ca(workdir, "registry-ca")
    server = make_node(workdir, "registry-ca", "registry", hosts=("localhost",))
    basic = "Basic " + base64.b64encode(b"flink:s3cr:et").decode()
    reg = am.Registry(tls=server, auth=basic)
    try:
        cluster.add_tm(slots=2)
        for t in ("sec-av", "sec-in", "sec-json", "sec-bad"):
            create_topic(bs, t, 1)
        cols = [("id", "BIGINT NOT NULL"), ("name", "STRING")]
        rows = [{"id": i, "name": f"n{i}"} for i in range(1, 21)]
        # the source's topic: written here, its schema registered here
        schema = am.table_schema(cols)
        sid = reg.register("upstream-value", json.dumps(schema))
        produce_kv(bs, "sec-in", [(0, None, am.confluent(sid, schema, r), None) for r in rows])
        kafka = f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{bs}'"
        bounded = "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"

        def avro(user_info, extra=""):
            return (f"'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '{reg.url}', "
                    "'value.avro-confluent.basic-auth.credentials-source' = 'USER_INFO', "
                    f"'value.avro-confluent.basic-auth.user-info' = '{user_info}', "
                    f"'value.avro-confluent.ssl.truststore.location' = '{ca}'{extra}")
        s = Session(cluster)
        for stmt in [ddl("sec_out", cols) + f" WITH ({kafka}, 'topic' = 'sec-av', {avro('flink:s3cr:et')});",
                     ddl("sec_in", cols) + f" WITH ({kafka}, 'topic' = 'sec-in', {bounded}, "
                     f"{avro('flink:s3cr:et')});",
                     ddl("sec_json", cols) + f" WITH ({kafka}, 'topic' = 'sec-json', 'format' = 'json');",
                     ddl("sec_wrong", cols) + f" WITH ({kafka}, 'topic' = 'sec-bad', "
                     f"{avro('flink:wrong')});",
                     ddl("sec_noca", cols) + f" WITH ({kafka}, 'topic' = 'sec-bad', "
                     f"'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '{reg.url}');"]:
            assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
        values = ", ".join(f"({r['id']}, '{r['name']}')" for r in rows)
        jid, st = run_insert(s, cluster, f"INSERT INTO sec_out VALUES {values};")
        assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
        got = [am.unconfluent(reg, v)[1] for _, v in log_records(bs, "sec-av")[0]]
        assert got == rows
        jid, st = run_insert(s, cluster, "INSERT INTO sec_json SELECT * FROM sec_in;")
        assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
        assert [json.loads(v) for _, v in log_records(bs, "sec-json")[0]] == rows
        assert reg.refused == 0 and ("GET", f"/schemas/ids/{sid}", None) in reg.calls and \
            ("POST", "/subjects/sec-av-value/versions", "application/vnd.schemaregistry.v1+json") \
            in reg.calls, reg.calls
        # a wrong password: the registry's 401, by URL
        jid, st = run_insert(s, cluster, "INSERT INTO sec_wrong VALUES (1, 'x');")
        assert st["state"] == "FAILED"
        exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions"))
        assert "HTTP 401" in exc and f"{reg.url}/subjects/sec-bad-value/versions" in exc, exc
        assert reg.refused >= 1
        # no CA: the registry's certificate is refused
        jid, st = run_insert(s, cluster, "INSERT INTO sec_noca VALUES (1, 'x');")
        assert st["state"] == "FAILED"
        exc = json.dumps(cluster.get(f"/jobs/{jid}/exceptions")).lower()
        assert "certificate" in exc, exc
        # refusals at planning: an unknown credentials source, ssl options on http://
        out = s.run(ddl("sec_src", cols) + f" WITH ({kafka}, 'topic' = 'sec-bad', "
                    f"'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '{reg.url}', "
                    "'value.avro-confluent.basic-auth.credentials-source' = 'SASL_INHERIT');")
        out += s.run("INSERT INTO sec_src VALUES (1, 'x');")
        assert "'SASL_INHERIT' is not supported" in out, out
        s.close()
    finally:
        reg.stop()
    # bearer authentication sends the token
    reg = am.Registry(auth="Bearer t0ken")
    try:
        s = Session(cluster)
        create_topic(bs, "sec-bearer", 1)
        assert s.run(ddl("sec_bearer", cols) + f" WITH ({kafka}, 'topic' = 'sec-bearer', "
                     f"'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '{reg.url}', "
                     "'value.avro-confluent.bearer-auth.credentials-source' = 'STATIC_TOKEN', "
                     "'value.avro-confluent.bearer-auth.token' = 't0ken');") == \
            "[INFO] Execute statement succeed.\n"
        jid, st = run_insert(s, cluster, "INSERT INTO sec_bearer VALUES (7, 'b');")
        assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
        assert reg.refused == 0 and reg.calls, reg.calls
        assert [am.unconfluent(reg, v)[1] for _, v in log_records(bs, "sec-bearer")[0]] == \
            [{"id": 7, "name": "b"}]
        s.close()
    finally:
        reg.stop()


def test_kafka_avro_to_kafka_avro_exactly_once_through_kills(make_cluster, broker):
    """A producer writes n avro records (4 partitions) at about 400 a second
    while `INSERT INTO out SELECT id, name, amount, ts, tags FROM src WHERE ...`
    reads them (bounded at exactly those n) into an exactly-once avro sink,
    checkpoints every 300 ms; two TaskManager SIGKILLs with restarts: the
    committed output (raw-log oracle, decoded by Python) holds every record
    that passes the filter exactly once, equal to what was written, and no
    transaction is left open."""
    import threading
    import time
    import kafka_rawlog
    from confluent_kafka import Producer
    bs = broker.bootstrap
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "300 ms",
                              "restart-strategy.type": "fixed-delay",
                              "restart-strategy.fixed-delay.attempts": "10",
                              "restart-strategy.fixed-delay.delay": "200 ms"})
    c.add_tm(slots=2)
    c.add_tm(slots=2)
    n, parts = 4000, 4
    create_topic(bs, "ax-in", parts)
    create_topic(bs, "ax-out", 2)
    cols = [("id", "BIGINT NOT NULL"), ("name", "STRING"), ("amount", "DECIMAL(12, 2)"),
            ("ts", "TIMESTAMP(3)"), ("tags", "ARRAY<STRING>")]
    schema = am.table_schema(cols)
    rows = [{"id": i, "name": None if i % 7 == 0 else f"n{i}", "amount": D(i * 37 - 900).scaleb(-2),
             "ts": am.EPOCH + datetime.timedelta(milliseconds=BASE + i),
             "tags": [f"t{i % 5}"] * (i % 3)} for i in range(n)]
    s = Session(c)
    opts = f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{bs}', 'format' = 'avro'"
    ends = ";".join(f"partition:{p},offset:{n // parts}" for p in range(parts))
    for stmt in [ddl("src", cols) + f" WITH ({opts}, 'topic' = 'ax-in', "
                 "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = "
                 f"'specific-offsets', 'scan.bounded.specific-offsets' = '{ends}');",
                 ddl("dst", cols) + f" WITH ({opts}, 'topic' = 'ax-out', "
                 "'sink.delivery-guarantee' = 'exactly-once', "
                 "'sink.transactional-id-prefix' = 'ax');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    assert "Session property has been set." in s.run("SET 'parallelism.default' = '2';")
    out = s.run("INSERT INTO dst SELECT * FROM src WHERE MOD(id, 3) <> 1;")
    s.close()
    jid = job_ids(out)[0]
    c.wait_state(jid, "RUNNING", timeout=20)
    stop = threading.Event()

    def feed():
        p = Producer({"bootstrap.servers": bs, "linger.ms": 5})
        for i, r in enumerate(rows):
            if stop.is_set():
                return
            p.produce("ax-in", value=am.to_bytes(schema, r), partition=i % parts)
            if i % 20 == 19:
                p.flush(10)
                time.sleep(0.05)
        p.flush(10)
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        for k in range(2):
            done = checkpoints_completed(c, jid)
            wait_for(lambda: checkpoints_completed(c, jid) >= done + 2, timeout=30,
                     what=f"two more checkpoints before kill {k + 1}")
            assert c.job(jid)["state"] == "RUNNING", c.get(f"/jobs/{jid}/exceptions")
            victim = next(t for t in c.tms if t.alive())
            victim.kill(signal.SIGKILL)
            c.add_tm(slots=2)
            wait_for(lambda: c.job(jid)["state"] == "RUNNING", timeout=30,
                     what=f"the job running again after kill {k + 1}")
        assert feeder.is_alive(), "the input was written before the second kill"
        st = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=120)
        assert st["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    finally:
        stop.set()
        feeder.join()
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["restored"] >= 2
    got = kafka_rawlog.committed(bs, "ax-out")
    assert got["open"] == 0, {k: v for k, v in got.items() if k != "values"}
    vals = [am.from_bytes(schema, v) for v in got["values"]]
    ids = [v["id"] for v in vals]
    want = [r for r in rows if r["id"] % 3 != 1]
    assert len(ids) == len(set(ids)) == len(want), (len(ids), len(set(ids)), len(want))
    assert sorted(vals, key=lambda v: v["id"]) == want


def test_upsert_kafka_with_avro_key_and_value(cluster, broker):
    """A GROUP BY into upsert-kafka with avro key and value (the primary
    key, NOT NULL, is the record key): per key the last record decoded by
    Python is the model's count and sum; an upsert-kafka source reads the
    topic back through changelog-normalize into a second topic with the
    same final rows."""
    bs = broker.bootstrap
    cluster.add_tm(slots=2)
    create_topic(bs, "up-avro", 1)
    create_topic(bs, "up-avro2", 1)
    s = Session(cluster)
    up = (f"'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '{bs}', "
          "'key.format' = 'avro', 'value.format' = 'avro'")
    for stmt in [
        "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '100', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100');",
        f"CREATE TABLE counts (k BIGINT, cnt BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
        f"WITH ({up}, 'topic' = 'up-avro');",
        f"CREATE TABLE counts2 (k BIGINT, cnt BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
        f"WITH ({up}, 'topic' = 'up-avro2');"]:
        assert s.run(stmt) == "[INFO] Execute statement succeed.\n", stmt
    jid, st = run_insert(s, cluster, "INSERT INTO counts SELECT id % 7, COUNT(*), SUM(id) FROM g "
                                     "GROUP BY id % 7;")
    assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    # bounded at the records written (tansu's latest offset is the last batch's base + 1,
    # docs/KAFKA.md)
    n = len(log_records(bs, "up-avro")[0])
    assert s.run(f"CREATE TABLE counts_in (k BIGINT, cnt BIGINT, total BIGINT, PRIMARY KEY (k) "
                 f"NOT ENFORCED) WITH ({up}, 'topic' = 'up-avro', 'scan.bounded.mode' = "
                 f"'specific-offsets', 'scan.bounded.specific-offsets' = "
                 f"'partition:0,offset:{n}');") == "[INFO] Execute statement succeed.\n"
    jid, st = run_insert(s, cluster, "INSERT INTO counts2 SELECT * FROM counts_in;")
    assert st["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    s.close()
    cols = [("k", "BIGINT NOT NULL"), ("cnt", "BIGINT"), ("total", "BIGINT")]
    kschema, vschema = am.table_schema(cols[:1]), am.table_schema(cols)
    want = {k: {"k": k, "cnt": sum(1 for i in range(1, 101) if i % 7 == k),
                "total": sum(i for i in range(1, 101) if i % 7 == k)} for k in range(7)}
    for topic in ("up-avro", "up-avro2"):
        last = {}
        for k, v in log_records(bs, topic)[0]:
            key = am.from_bytes(kschema, k)["k"]
            last[key] = v and am.from_bytes(vschema, v)
        assert last == want, (topic, last)
