"""Flink's SQL Gateway REST API (`sluice sql-gateway`) driven over HTTP like
any client: sessions, statements, operations, results fetched page by page,
STOP JOB WITH SAVEPOINT, clear 4xx for bad ids and bodies; and
`sluice sql --endpoint` running a script through it. Inputs are sequence
generators; expected rows are computed here."""
import json
import os
import re
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import wait_for, BIN

from test_sql_select import tableau, seq_table


class Gateway:
    def __init__(self, cluster, workdir):
        cmd = [os.path.join(BIN, "sluice"), "-m", f"127.0.0.1:{cluster.rest_port}", "sql-gateway",
               "-Dsql-gateway.endpoint.rest.port=0"]
        self.log = open(os.path.join(workdir, "gateway.log"), "w+")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        m = re.match(r"SQL gateway listening on http://127\.0\.0\.1:(\d+) ", line)
        assert m, line
        self.port = int(m.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def request(self, method, path, body=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def ok(self, method, path, body=None):
        status, got = self.request(method, path, body)
        assert status == 200, (method, path, status, got)
        return got

    def run(self, sid, statement):
        return self.ok("POST", f"/v1/sessions/{sid}/statements", {"statement": statement})["operationHandle"]

    def fetch_all(self, sid, oh, fmt="JSON"):
        """Every page until EOS; NOT_READY pages are retried at the same token."""
        uri, data, pages = f"/v1/sessions/{sid}/operations/{oh}/result/0?rowFormat={fmt}", [], []
        while True:
            page = self.ok("GET", uri)
            pages.append(page)
            data += page["results"]["data"]
            if page["resultType"] == "EOS":
                assert "nextResultUri" not in page
                return pages, data
            uri = page["nextResultUri"]

    def stop(self):
        self.proc.terminate()
        rc = self.proc.wait(timeout=30)
        self.log.seek(0)
        text = self.log.read()
        self.log.close()
        assert rc == 0, text
        for marker in ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer"):
            assert marker not in text, text


@pytest.fixture
def gateway(cluster, workdir):
    g = Gateway(cluster, workdir)
    yield g
    g.stop()


def test_info_sessions_and_configuration(cluster, gateway):
    assert gateway.ok("GET", "/v1/api_versions") == {"versions": ["V1", "V2"]}
    info = gateway.ok("GET", "/v1/info")
    assert set(info) == {"productName", "version"}
    sid = gateway.ok("POST", "/v1/sessions", {"sessionName": "t", "properties": {
        "parallelism.default": "1", "pipeline.name": "it's mine"}})["sessionHandle"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", sid)
    assert gateway.ok("GET", f"/v1/sessions/{sid}") == {"properties": {
        "parallelism.default": "1", "pipeline.name": "it's mine"}}
    assert gateway.ok("POST", f"/v1/sessions/{sid}/heartbeat") == {}
    assert gateway.ok("POST", f"/v2/sessions/{sid}/configure-session",
                      {"statement": "SET 'sql-client.execution.result-mode' = 'tableau'"}) == {}
    oh = gateway.run(sid, "SET 'table.exec.state.ttl' = '1 h'")
    assert gateway.ok("GET", f"/v1/sessions/{sid}/operations/{oh}/status") == {"status": "FINISHED"}
    pages, data = gateway.fetch_all(sid, oh)
    assert pages[0]["resultKind"] == "SUCCESS" and pages[0]["isQueryResult"] is False
    assert data == [{"kind": "INSERT", "fields": ["OK"]}]
    props = gateway.ok("GET", f"/v1/sessions/{sid}")["properties"]
    assert props["table.exec.state.ttl"] == "1 h"
    assert props["sql-client.execution.result-mode"] == "tableau"
    assert gateway.ok("DELETE", f"/v1/sessions/{sid}") == {"status": "CLOSED"}
    status, body = gateway.request("GET", f"/v1/sessions/{sid}")
    assert status == 404 and body == {"errors": [f"Session '{sid}' does not exist."]}


def test_create_insert_and_a_select_fetched_page_by_page(cluster, workdir, gateway):
    cluster.add_tm(slots=1)
    n = 1300  # more than a page (512 rows)
    sid = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    assert gateway.ok("POST", f"/v1/sessions/{sid}/configure-session",
                      {"statement": seq_table(n)}) == {}
    oh = gateway.run(sid, "CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole')")
    assert gateway.fetch_all(sid, oh)[1] == [{"kind": "INSERT", "fields": ["OK"]}]
    oh = gateway.run(sid, "INSERT INTO sink SELECT id FROM seq")
    pages, data = gateway.fetch_all(sid, oh)
    jid = data[0]["fields"][0]
    assert pages[0]["jobID"] == jid and pages[0]["resultKind"] == "SUCCESS_WITH_CONTENT"
    assert pages[0]["results"]["columns"][0]["name"] == "job id"
    assert cluster.wait_state(jid, ["FINISHED", "FAILED"])["state"] == "FINISHED"

    oh = gateway.run(sid, "SELECT id, id % 7 = 0 AS sevens, CAST(id AS STRING) AS s, "
                          "TIMESTAMP '2026-01-01 00:00:00' + CAST(id AS INT) * INTERVAL '1' SECOND AS ts "
                          "FROM seq")
    pages, data = gateway.fetch_all(sid, oh)
    assert all(p["isQueryResult"] is True for p in pages)
    cols = pages[0]["results"]["columns"]
    assert [(c["name"], c["logicalType"]["type"]) for c in cols] == [
        ("id", "BIGINT"), ("sevens", "BOOLEAN"), ("s", "VARCHAR"),
        ("ts", "TIMESTAMP_WITHOUT_TIME_ZONE")]
    assert max(len(p["results"]["data"]) for p in pages) <= 512
    want = [{"kind": "INSERT", "fields": [i, i % 7 == 0, str(i),
                                          "2026-01-01T%02d:%02d:%02d" % (i // 3600, i // 60 % 60, i % 60)]}
            for i in range(1, n + 1)]
    assert data == want
    assert gateway.ok("GET", f"/v1/sessions/{sid}/operations/{oh}/status") == {"status": "FINISHED"}
    # a page may be fetched again until the next one is asked for; older ones are gone
    oh = gateway.run(sid, "SELECT id FROM seq WHERE id <= 3")
    first = wait_for(lambda: (lambda p: p if p["resultType"] == "PAYLOAD" else None)(
        gateway.ok("GET", f"/v1/sessions/{sid}/operations/{oh}/result/0?rowFormat=PLAIN_TEXT")))
    again = gateway.ok("GET", f"/v1/sessions/{sid}/operations/{oh}/result/0?rowFormat=PLAIN_TEXT")
    assert again["results"]["data"] == first["results"]["data"]
    assert first["results"]["rowFormat"] == "PLAIN_TEXT"
    assert [d["fields"][0] for d in first["results"]["data"]] == ["1", "2", "3"]
    status, body = gateway.request("GET", f"/v1/sessions/{sid}/operations/{oh}/result/5?rowFormat=JSON")
    assert status == 400 and body["errors"] == [
        "token 5 is not available: fetch 1 (the next page) or 0 (the last page again)"]
    assert gateway.ok("DELETE", f"/v1/sessions/{sid}/operations/{oh}/close") == {"status": "CLOSED"}
    status, body = gateway.request("GET", f"/v1/sessions/{sid}/operations/{oh}/status")
    assert status == 404 and body == {"errors": [f"Operation '{oh}' does not exist in session '{sid}'."]}


def test_stop_job_with_savepoint_and_cancel_of_a_query(cluster, workdir, gateway):
    cluster.add_tm(slots=2)
    sp = os.path.join(workdir, "sp")
    sid = gateway.ok("POST", "/v1/sessions", {"properties": {"state.savepoints.dir": sp}})["sessionHandle"]
    gateway.run(sid, seq_table(10 ** 9, rate=50))
    gateway.run(sid, "CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole')")
    jid = gateway.fetch_all(sid, gateway.run(sid, "INSERT INTO sink SELECT id FROM seq"))[1][0]["fields"][0]
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in cluster.job(jid)["vertices"]))
    pages, data = gateway.fetch_all(sid, gateway.run(sid, f"STOP JOB '{jid}' WITH SAVEPOINT"))
    assert pages[0]["results"]["columns"][0]["name"] == "savepoint path"
    path = data[0]["fields"][0]
    assert path.startswith("file:" + sp + "/savepoint-"), path
    assert os.path.exists(os.path.join(path[len("file:"):], "_metadata"))
    assert cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"])["state"] == "FINISHED"
    # an unbounded query, cancelled through its operation: its job is cancelled
    oh = gateway.run(sid, "SELECT id FROM seq")
    wait_for(lambda: gateway.ok("GET", f"/v1/sessions/{sid}/operations/{oh}/result/0?rowFormat=JSON")
             ["resultType"] == "PAYLOAD")
    assert gateway.ok("POST", f"/v1/sessions/{sid}/operations/{oh}/cancel") == {"status": "CANCELED"}
    q = [j for j in cluster.get("/jobs/overview")["jobs"] if j["name"] == "collect"]
    assert len(q) == 1
    assert cluster.wait_state(q[0]["jid"], ["CANCELED", "FAILED", "FINISHED"])["state"] == "CANCELED"


def test_bad_ids_bodies_and_statements(cluster, gateway):
    zero = "00000000-0000-4000-8000-000000000000"
    status, body = gateway.request("POST", f"/v1/sessions/{zero}/statements", {"statement": "SET"})
    assert status == 404 and body == {"errors": [f"Session '{zero}' does not exist."]}
    status, body = gateway.request("POST", "/v1/sessions", raw=b"{not json")
    assert status == 400 and body["errors"][0].startswith(
        "Request did not match expected format OpenSessionRequestBody: ")
    status, body = gateway.request("POST", "/v1/sessions", {"properties": {"a": 1}})
    assert status == 400 and body == {"errors": ["property 'a' must be a string"]}
    status, body = gateway.request("POST", "/v1/sessions", {"properties": {"parallelism.default": "0"}})
    assert status == 400 and "'parallelism.default' must be a number from 1 to 32768" in body["errors"][0]
    sid = gateway.ok("POST", "/v1/sessions")["sessionHandle"]
    for raw in (b"[]", b"{\"statement\": 5}", b"{}", b"nope"):
        status, body = gateway.request("POST", f"/v1/sessions/{sid}/statements", raw=raw)
        assert status == 400 and body["errors"][0].startswith(
            "Request did not match expected format ExecuteStatementRequestBody"), (raw, body)
    status, body = gateway.request("GET", f"/v1/sessions/{sid}/operations/{zero}/status")
    assert status == 404 and body == {"errors": [f"Operation '{zero}' does not exist in session '{sid}'."]}
    oh = gateway.run(sid, "SELECT nope FROM nowhere")
    assert gateway.ok("GET", f"/v1/sessions/{sid}/operations/{oh}/status") == {"status": "ERROR"}
    status, body = gateway.request("GET", f"/v1/sessions/{sid}/operations/{oh}/result/0")
    assert status == 500 and body == {"errors": [
        "Failed to execute the statement: line 1, column 18: table or view 'nowhere' does not exist in this session"]}, body
    oh = gateway.run(sid, "SET")
    for tok, want in [("x", "token 'x' is not a whole number"), ("2", "token 2: this result has tokens 0 and 1")]:
        status, body = gateway.request("GET", f"/v1/sessions/{sid}/operations/{oh}/result/{tok}")
        assert status == 400 and body == {"errors": [want]}
    status, body = gateway.request("GET", f"/v1/sessions/{sid}/operations/{oh}/result/0?rowFormat=XML")
    assert status == 400 and body == {"errors": ["rowFormat must be JSON or PLAIN_TEXT, got 'XML'"]}
    status, body = gateway.request("GET", "/v1/nothing")
    assert status == 404 and body == {"errors": ["Not found: GET /v1/nothing"]}


def test_sql_client_runs_a_script_through_the_gateway(cluster, workdir, gateway):
    cluster.add_tm(slots=1)
    path = os.path.join(workdir, "g.sql")
    with open(path, "w") as f:
        f.write(seq_table(4) + """
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT id, id * id AS sq FROM seq;
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id FROM seq;
""")
    r = cluster.cli("sql", "--endpoint", f"127.0.0.1:{gateway.port}", "-f", path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert tableau(["id", "sq"], [20, 20], [("+I", i, i * i) for i in range(1, 5)]) in r.stdout, r.stdout
    jids = re.findall(r"^Job ID: ([0-9a-f]{32})$", r.stdout, re.M)
    assert len(jids) == 1
    assert cluster.wait_state(jids[0], ["FINISHED", "FAILED"])["state"] == "FINISHED"
    # the session was closed at the end
    bad = cluster.cli("sql", "--endpoint", "127.0.0.1", "-f", path)
    assert bad.returncode == 2 and "--endpoint '127.0.0.1' is not host:port" in bad.stderr


def test_show_describe_set_explain_are_result_sets(cluster, gateway):
    """SHOW, DESCRIBE, SET and EXPLAIN answer with Flink's result sets: its
    column names and types, one row per item, NULL where Flink has none."""
    sid = gateway.ok("POST", "/v1/sessions", {"properties": {"pipeline.name": "p"}})["sessionHandle"]
    gateway.run(sid, "CREATE TABLE t (id BIGINT NOT NULL, name STRING, ts TIMESTAMP(3), "
                     "up AS UPPER(name), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, "
                     "PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen')")
    gateway.run(sid, "CREATE VIEW v AS SELECT id, EXTRACT(HOUR FROM ts) AS h FROM t")

    def result(statement, fmt="JSON"):
        pages, data = gateway.fetch_all(sid, gateway.run(sid, statement), fmt)
        assert pages[0]["resultKind"] == "SUCCESS_WITH_CONTENT" and pages[0]["isQueryResult"] is False
        cols = [(c["name"], c["logicalType"]["type"]) for c in pages[0]["results"]["columns"]]
        assert all(d["kind"] == "INSERT" for d in data)
        return cols, [d["fields"] for d in data]

    assert result("SHOW TABLES") == ([("table name", "VARCHAR")], [["t"], ["v"]])
    assert result("SHOW VIEWS") == ([("view name", "VARCHAR")], [["v"]])
    cols, rows = result("SHOW FUNCTIONS")
    assert cols == [("function name", "VARCHAR")] and ["EXTRACT"] in rows and ["TUMBLE"] in rows
    assert rows == sorted(rows)
    cols, rows = result("DESCRIBE t")
    assert cols == [("name", "VARCHAR"), ("type", "VARCHAR"), ("null", "BOOLEAN"), ("key", "VARCHAR"),
                    ("extras", "VARCHAR"), ("watermark", "VARCHAR")]
    assert rows == [["id", "BIGINT", False, "PRI", None, None],
                    ["name", "STRING", True, None, None, None],
                    ["ts", "TIMESTAMP(3) *ROWTIME*", True, None, None, "ts - INTERVAL '1' SECOND"],
                    ["up", "STRING", True, None, "AS UPPER(name)", None]], rows
    cols, rows = result("DESC v", "PLAIN_TEXT")  # a view's columns do not keep NOT NULL
    assert rows == [["id", "BIGINT", "TRUE", None, None, None],
                    ["h", "BIGINT", "TRUE", None, None, None]], rows
    assert result("SET") == ([("key", "VARCHAR"), ("value", "VARCHAR")], [["pipeline.name", "p"]])
    cols, rows = result("EXPLAIN SELECT id FROM v")
    assert cols == [("result", "VARCHAR")] and len(rows) == 1
    plan = rows[0][0]
    assert plan.startswith("== Optimized Execution Plan ==\nt[datagen] uid=source-t\n") and \
        "== Job Graph ==\n{" in plan and "changelogMode" not in plan, plan
    cols, rows = result("EXPLAIN CHANGELOG_MODE SELECT h, COUNT(*) AS c FROM v GROUP BY h")
    plan = rows[0][0]
    assert re.search(r"^agg\[group_aggregate\] uid=agg-t-[0-9a-f]{8} changelogMode=\[I,UB,UA\] ", plan, re.M), plan
    assert "\ncollect[collect] uid=sink-collect changelogMode=[NONE]\n" in plan, plan
    cols, rows = result("SHOW JOBS")
    assert cols == [("job id", "VARCHAR"), ("job name", "VARCHAR"), ("status", "VARCHAR"),
                    ("start time", "VARCHAR")]


ROW_KINDS = {"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"}


def flink_decode(page):
    """FetchResultResponseBodyDeserializer and ResultInfoDeserializer of Flink 2.x's
    gateway, rule by rule: `resultType` required; NOT_READY needs only `nextResultUri`;
    otherwise `isQueryResult`, `results` (columns, rowFormat, data rows of kind and
    fields) and `resultKind` are required, and `jobID` is read whenever the field is
    there -- `JobID.fromHexString(node.asText())`, so null reads as "null" and fails.
    Returns the job id or None; raises AssertionError where Flink's client would throw."""
    assert "resultType" in page, "Can not find the required field resultType."
    assert page["resultType"] in ("NOT_READY", "PAYLOAD", "EOS"), page["resultType"]
    if page["resultType"] == "NOT_READY":
        assert isinstance(page["nextResultUri"], str)
        return None
    assert isinstance(page["isQueryResult"], bool)
    assert page["resultKind"] in ("SUCCESS", "SUCCESS_WITH_CONTENT"), page["resultKind"]
    res = page["results"]
    assert res["rowFormat"].upper() in ("JSON", "PLAIN_TEXT")
    for c in res["columns"]:
        assert isinstance(c["name"], str) and isinstance(c["logicalType"]["type"], str), c
    for row in res["data"]:
        assert row["kind"] in ROW_KINDS and len(row["fields"]) <= len(res["columns"]), row
    if "nextResultUri" in page:
        assert isinstance(page["nextResultUri"], str)
    if "jobID" not in page:
        return None
    text = "null" if page["jobID"] is None else str(page["jobID"])
    assert re.fullmatch(r"[0-9a-fA-F]{32}", text), f'Cannot parse JobID from "{text}"'
    return text


def test_every_result_kind_decodes_with_flinks_gateway_rules(cluster, workdir, gateway):
    """Each kind of statement's pages, JSON and PLAIN_TEXT, decode as Flink's client
    decodes them: no jobID field where there is no job, the job's id where there is."""
    cluster.add_tm(slots=2)
    sid = gateway.ok("POST", "/v1/sessions", {"properties": {
        "state.savepoints.dir": os.path.join(workdir, "sp")}})["sessionHandle"]

    def pages(statement, fmt="JSON"):
        return gateway.fetch_all(sid, gateway.run(sid, statement), fmt)[0]

    def job_ids(statement, fmt="JSON"):
        return {flink_decode(p) for p in pages(statement, fmt)}

    no_job = [seq_table(10 ** 9, rate=20), seq_table(3, name="few"),
              "CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole')",
              "CREATE VIEW v AS SELECT id FROM few", "SET 'pipeline.name' = 'kinds'", "SET",
              "RESET 'pipeline.name'", "SHOW TABLES", "SHOW VIEWS", "SHOW FUNCTIONS", "DESCRIBE few",
              "EXPLAIN SELECT id FROM few", "SHOW JOBS", "DROP VIEW v"]
    for statement in no_job:
        for fmt in ("JSON", "PLAIN_TEXT"):
            ps = pages(statement, fmt) if statement.startswith("SHOW") or fmt == "JSON" else None
            if ps is None:
                continue
            assert all("jobID" not in p for p in ps), (statement, ps)
            assert {flink_decode(p) for p in ps} == {None}, statement
    # INSERT: the job's id, on every page
    ps = pages("INSERT INTO sink SELECT id FROM seq")
    jid = ps[0]["results"]["data"][0]["fields"][0]
    assert {flink_decode(p) for p in ps} == {jid}
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in cluster.job(jid)["vertices"]))
    # a query: NOT_READY pages carry nothing to decode, the others the query's job
    for fmt in ("JSON", "PLAIN_TEXT"):
        ps = pages("SELECT id FROM few", fmt)
        got = {flink_decode(p) for p in ps} - {None}
        q = [j["jid"] for j in cluster.get("/jobs/overview")["jobs"] if j["name"] == "collect"]
        assert len(got) == 1 and got <= set(q), (got, q)
        assert [d["fields"][0] for p in ps for d in p["results"]["data"]] == \
            ([1, 2, 3] if fmt == "JSON" else ["1", "2", "3"])
    # STOP JOB: a savepoint path and no job field (the statement ran no job)
    ps = pages(f"STOP JOB '{jid}' WITH SAVEPOINT")
    assert all("jobID" not in p for p in ps) and {flink_decode(p) for p in ps} == {None}
    assert cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"])["state"] == "FINISHED"
    # the rule itself: an explicit null is what Flink's client cannot read
    with pytest.raises(AssertionError, match='Cannot parse JobID from "null"'):
        flink_decode(dict(ps[0], jobID=None))


def test_complete_statement_offers_keywords_tables_and_columns(cluster, gateway):
    sid = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    gateway.run(sid, "CREATE TABLE orders (id BIGINT, name STRING, amount DOUBLE) "
                     "WITH ('connector' = 'datagen')")
    gateway.run(sid, "CREATE TABLE nations (nation_key BIGINT, name STRING) WITH ('connector' = 'datagen')")
    gateway.run(sid, "CREATE VIEW big AS SELECT id FROM orders WHERE amount > 10")

    def complete(statement, position=None, method="GET", version="v1"):
        pos = len(statement) if position is None else position
        status, body = gateway.request(method, f"/{version}/sessions/{sid}/complete-statement",
                                       {"statement": statement, "position": pos})
        assert status == 200, body
        assert set(body) == {"candidates"}
        return body["candidates"]

    assert complete("SEL") == ["SELECT"]
    assert complete("sel", method="POST", version="v2") == ["SELECT"]
    assert complete("SHOW TA") == ["TABLE", "TABLES"]
    # after FROM / JOIN / INTO / DESCRIBE: the session's tables and views
    assert sorted(complete("SELECT * FROM ")) == ["big", "nations", "orders"]
    assert complete("SELECT * FROM orders JOIN n") == ["nations"]
    assert complete("DESCRIBE o") == ["orders"]
    # after `t.`: t's columns
    assert complete("SELECT orders. FROM orders", 14) == ["id", "name", "amount"]
    assert complete("SELECT nations.na FROM nations", 17) == ["nation_key", "name"]
    # elsewhere: the named tables' columns, the tables, the keywords
    assert complete("SELECT am FROM orders", 9) == ["amount"]
    assert complete("SELECT n FROM nations", 8) == ["nation_key", "name", "nations", "NEXT", "NOT", "NULL"]
    assert "SELECT" in complete("") and "orders" in complete("")
    # bad requests: clear 4xx
    for body, want in (({"statement": "SEL", "position": 4}, "position 4 is outside the statement (0 to 3)"),
                       ({"statement": "SEL", "position": -1}, "position -1 is outside the statement (0 to 3)"),
                       ({"statement": "SEL"}, "Request did not match expected format CompleteStatementRequestBody")):
        status, got = gateway.request("GET", f"/v1/sessions/{sid}/complete-statement", body)
        assert status == 400 and got["errors"][0].startswith(want), got
    zero = "00000000-0000-4000-8000-000000000000"
    status, got = gateway.request("GET", f"/v1/sessions/{zero}/complete-statement",
                                  {"statement": "S", "position": 1})
    assert status == 404 and got == {"errors": [f"Session '{zero}' does not exist."]}


def flink_logical_type(text):
    """Flink's LogicalType JSON (its gateway's serializer layout), computed
    here from Flink's type text by a small parser of its own."""
    pos = [0]

    def peek(s):
        rest = text[pos[0]:].lstrip()
        return rest.upper().startswith(s)

    def take(s):
        rest = text[pos[0]:]
        pos[0] += len(rest) - len(rest.lstrip())
        assert text[pos[0]:pos[0] + len(s)].upper() == s, (text, pos[0], s)
        pos[0] += len(s)

    def num():
        rest = text[pos[0]:].lstrip()
        pos[0] += len(text[pos[0]:]) - len(rest)
        m = re.match(r"\d+", rest)
        pos[0] += m.end()
        return int(m.group())

    def name():
        rest = text[pos[0]:].lstrip()
        pos[0] += len(text[pos[0]:]) - len(rest)
        m = re.match(r"`([^`]*)`|(\w+)", rest)
        pos[0] += m.end()
        return m.group(1) if m.group(1) is not None else m.group(2)

    def args(default):
        if peek("("):
            take("(")
            vals = [num()]
            while peek(","):
                take(",")
                vals.append(num())
            take(")")
            return vals
        return default

    def typ():
        t = None
        for simple, root in (("BOOLEAN", "BOOLEAN"), ("TINYINT", "TINYINT"),
                             ("SMALLINT", "SMALLINT"), ("INT", "INTEGER"), ("BIGINT", "BIGINT"),
                             ("FLOAT", "FLOAT"), ("DOUBLE", "DOUBLE"), ("DATE", "DATE")):
            if re.match(simple + r"\b", text[pos[0]:].lstrip().upper()):
                take(simple)
                t = {"type": root}
                break
        if t is None:
            if peek("DECIMAL"):
                take("DECIMAL")
                p, s = (args([10, 0]) + [0])[:2]
                t = {"type": "DECIMAL", "precision": p, "scale": s}
            elif peek("CHAR"):
                take("CHAR")
                t = {"type": "CHAR", "length": args([1])[0]}
            elif peek("VARCHAR"):
                take("VARCHAR")
                t = {"type": "VARCHAR", "length": args([1])[0]}
            elif peek("STRING"):
                take("STRING")
                t = {"type": "VARCHAR", "length": 2147483647}
            elif peek("BINARY"):
                take("BINARY")
                t = {"type": "BINARY", "length": args([1])[0]}
            elif peek("BYTES"):
                take("BYTES")
                t = {"type": "VARBINARY", "length": 2147483647}
            elif peek("TIMESTAMP_LTZ"):
                take("TIMESTAMP_LTZ")
                t = {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": args([6])[0]}
            elif peek("TIMESTAMP"):
                take("TIMESTAMP")
                t = {"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": args([6])[0]}
            elif peek("TIME"):
                take("TIME")
                t = {"type": "TIME_WITHOUT_TIME_ZONE", "precision": args([0])[0]}
            elif peek("ARRAY") or peek("MULTISET"):
                root = "ARRAY" if peek("ARRAY") else "MULTISET"
                take(root)
                take("<")
                t = {"type": root, "elementType": typ()}
                take(">")
            elif peek("MAP"):
                take("MAP")
                take("<")
                k = typ()
                take(",")
                t = {"type": "MAP", "keyType": k, "valueType": typ()}
                take(">")
            elif peek("ROW"):
                take("ROW")
                take("<")
                fields = [{"name": name(), "fieldType": typ()}]
                while peek(","):
                    take(",")
                    fields.append({"name": name(), "fieldType": typ()})
                take(">")
                t = {"type": "ROW", "fields": fields}
        assert t is not None, text[pos[0]:]
        nullable = True
        if peek("NOT NULL"):
            take("NOT NULL")
            nullable = False
        return dict({"type": t["type"], "nullable": nullable},
                    **{k: v for k, v in t.items() if k != "type"})

    t = typ()
    assert not text[pos[0]:].strip(), text
    return t


def test_result_columns_carry_flinks_logical_types(cluster, workdir, gateway):
    """Every type as a query column: the column's logicalType is Flink's
    JSON for its type (nested to two levels, NOT NULL inside), and scalar
    values are JSON numbers, strings and booleans as Flink's gateway writes
    them."""
    cluster.add_tm(slots=1)
    types = ["TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN",
             "DECIMAL(10, 2)", "DECIMAL(38, 18)", "CHAR(3)", "VARCHAR(20)", "STRING",
             "BINARY(4)", "BYTES", "DATE", "TIME(0)", "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(9)",
             "TIMESTAMP_LTZ(6)", "ARRAY<INT NOT NULL>", "MULTISET<STRING>",
             "MAP<STRING, ARRAY<DECIMAL(5, 1)>>",
             "ROW<`a` INT, `b` ROW<`c` DATE, `d` ARRAY<TIMESTAMP(6)>> NOT NULL>"]
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        f.write(json.dumps({"c0": -5, "c1": 300, "c2": 7, "c3": 1 << 40, "c4": 1.5, "c5": 0.25,
                            "c6": True, "c7": 12.5, "c14": "2026-01-02", "c15": "10:00:01",
                            "c17": "2026-01-01 00:00:00.5"}) + "\n")
    cols = ", ".join(f"c{i} {t}" for i, t in enumerate(types))
    sid = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    gateway.fetch_all(sid, gateway.run(sid, f"CREATE TABLE t ({cols}) WITH ("
                                            f"'connector' = 'filesystem', 'path' = '{src}', "
                                            f"'format' = 'json')"))
    oh = gateway.run(sid, "SELECT * FROM t")
    pages, data = gateway.fetch_all(sid, oh)
    got = pages[0]["results"]["columns"]
    assert [c["name"] for c in got] == [f"c{i}" for i in range(len(types))]
    for c, t in zip(got, types):
        assert c["logicalType"] == flink_logical_type(t), (t, c["logicalType"])
    assert len(data) == 1
    f = data[0]["fields"]
    assert f[:8] == [-5, 300, 7, 1 << 40, 1.5, 0.25, True, 12.5]
    # TIMESTAMP in ISO-8601 as Flink's gateway writes it (RowDataToJsonConverters with
    # ISO_8601: ISO_LOCAL_DATE_TIME, the fraction to its last non-zero digit -- Flink 2.3's
    # json format writes TIMESTAMP '2026-01-01 00:00:00.5' as "2026-01-01T00:00:00.5")
    assert f[14] == "2026-01-02" and f[15] == "10:00:01" and f[17] == "2026-01-01T00:00:00.5"
    assert f[8] is None and f[23] is None
    # text literals and expressions over them: Flink's CHAR(0), CHAR(n) and VARCHAR(n)
    oh = gateway.run(sid, "SELECT '' AS e, 'a' || 'bc' AS b, CASE WHEN c2 > 0 THEN 'a' "
                          "ELSE 'abc' END AS v, COALESCE(c11, 'x') AS s FROM t")
    pages, data = gateway.fetch_all(sid, oh)
    got = [c["logicalType"] for c in pages[0]["results"]["columns"]]
    assert got == [flink_logical_type(t) for t in ("CHAR(0) NOT NULL", "CHAR(3) NOT NULL",
                                                   "VARCHAR(3) NOT NULL", "STRING NOT NULL")], got
    assert data[0]["fields"] == ["", "abc", "a", "x"], data


def test_nested_values_are_json_in_json_rows(cluster, workdir, gateway):
    """ARRAY, MULTISET, MAP and ROW values of a query's rows are JSON arrays
    and objects in rowFormat=JSON, as Flink's gateway writes them (its JSON
    format's converters: a ROW by field names, a MULTISET as element ->
    count, DECIMAL numbers, ISO-8601 timestamps, NULL elements as null), and
    their print text in PLAIN_TEXT."""
    cluster.add_tm(slots=1)
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    rows_in = [
        {"id": 1, "a": [1, 2, None], "m": {"k": [1.5, -2.0], "z": None}, "ms": {"x": 2, "y": 1},
         "r": {"a": 7, "b": {"c": "2026-01-02", "d": ["2026-01-01 00:00:00.123456"]}}},
        {"id": 2, "a": [], "m": {}, "ms": {}, "r": {"a": None, "b": None}},
        {"id": 3},
    ]
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for r in rows_in:
            f.write(json.dumps(r) + "\n")
    sid = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    gateway.fetch_all(sid, gateway.run(sid, f"""CREATE TABLE t (id BIGINT, a ARRAY<INT>,
        m MAP<STRING, ARRAY<DECIMAL(5, 1)>>, ms MULTISET<STRING>,
        r ROW<a INT, b ROW<c DATE, d ARRAY<TIMESTAMP(6)>>>)
        WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json')"""))
    _, data = gateway.fetch_all(sid, gateway.run(sid, "SELECT * FROM t"))
    got = sorted((d["fields"] for d in data), key=lambda f: f[0])
    assert got == [
        [1, [1, 2, None], {"k": [1.5, -2.0], "z": None}, {"x": 2, "y": 1},
         {"a": 7, "b": {"c": "2026-01-02", "d": ["2026-01-01T00:00:00.123456"]}}],
        [2, [], {}, {}, {"a": None, "b": None}],
        [3, None, None, None, None],
    ], got
    _, data = gateway.fetch_all(sid, gateway.run(sid, "SELECT id, a, r FROM t WHERE id = 1"),
                                "PLAIN_TEXT")
    # PLAIN_TEXT: every value its text, nested ones too
    assert len(data) == 1 and all(isinstance(v, str) for v in data[0]["fields"]), data
    assert data[0]["fields"][:2] == ["1", "[1, 2, null]"], data


def test_session_time_zone_applies_to_its_statements(cluster, workdir, gateway):
    """SET 'table.local-time-zone' in a gateway session, as in the embedded
    client: TIMESTAMP_LTZ values show in the session's zone, a CAST to STRING
    and clock functions use it; another session keeps UTC."""
    cluster.add_tm(slots=2)
    tokyo = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    utc = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    for sid in (tokyo, utc):
        gateway.fetch_all(sid, gateway.run(sid, seq_table(1)))
    gateway.fetch_all(tokyo, gateway.run(tokyo, "SET 'table.local-time-zone' = 'Asia/Tokyo'"))
    q = ("SELECT TO_TIMESTAMP_LTZ(id - 1, 3) AS l, CAST(TO_TIMESTAMP_LTZ(id - 1, 3) AS STRING) "
         "AS s, HOUR(CAST(TO_TIMESTAMP_LTZ(id - 1, 3) AS TIMESTAMP(3))) AS h FROM seq")
    for sid, fmt, want in [
            (tokyo, "PLAIN_TEXT", ["1970-01-01 09:00:00.000", "1970-01-01 09:00:00.000", "9"]),
            (utc, "PLAIN_TEXT", ["1970-01-01 00:00:00.000", "1970-01-01 00:00:00.000", "0"])]:
        _, data = gateway.fetch_all(sid, gateway.run(sid, q), fmt)
        assert [d["fields"] for d in data] == [want], (sid, data)
    # without FROM (a VALUES vertex): the TIMESTAMP_LTZ column shows in the zone too
    for sid, want in [(tokyo, "1970-01-01 09:00:00.000"), (utc, "1970-01-01 00:00:00.000")]:
        _, data = gateway.fetch_all(sid, gateway.run(sid, "SELECT TO_TIMESTAMP_LTZ(0, 3) AS l"),
                                    "PLAIN_TEXT")
        assert [d["fields"] for d in data] == [[want]], (sid, data)
    # a clock function: LOCALTIMESTAMP is the session zone's wall-clock time
    import datetime as dt
    for sid, zone_h in [(tokyo, 9), (utc, 0)]:
        _, data = gateway.fetch_all(sid, gateway.run(
            sid, "SELECT CAST(LOCALTIMESTAMP AS STRING) AS t FROM seq"), "PLAIN_TEXT")
        shown = dt.datetime.strptime(data[0]["fields"][0][:19], "%Y-%m-%d %H:%M:%S")
        now = dt.datetime.utcnow() + dt.timedelta(hours=zone_h)
        assert abs((shown - now).total_seconds()) < 120, (sid, data, now)


def test_sql_client_endpoint_takes_a_url(cluster, workdir, gateway):
    """`sluice sql --endpoint http://host:port` (Flink's SQL client takes a
    URL) runs its statements in a gateway session: planned there -- a table
    the client's statements create is in the gateway's session."""
    cluster.add_tm(slots=1)
    path = os.path.join(workdir, "u.sql")
    with open(path, "w") as f:
        f.write(seq_table(3) + """
SET 'sql-client.execution.result-mode' = 'tableau';
SET 'table.local-time-zone' = 'America/New_York';
SELECT id, CAST(TO_TIMESTAMP_LTZ(0, 3) AS STRING) AS s FROM seq;
""")
    for ep in (f"http://127.0.0.1:{gateway.port}", f"http://127.0.0.1:{gateway.port}/"):
        r = cluster.cli("sql", "--endpoint", ep, "-f", path)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1969-12-31 19:00:00.000" in r.stdout, r.stdout
    for ep, why in [("https://127.0.0.1:1", "is https"), ("http://127.0.0.1:1/v1", "has a path"),
                    ("http://:8083", "no host")]:
        bad = cluster.cli("sql", "--endpoint", ep, "-f", path)
        assert bad.returncode == 2 and why in bad.stderr, bad.stderr


def test_ltz_and_map_keys_in_json_rows_as_flinks_gateway(cluster, workdir, gateway):
    """rowFormat=JSON writes a TIMESTAMP_LTZ as its UTC instant with Flink's 'Z'
    (in any session zone), the fraction to its last non-zero digit; a MAP
    with keys that are no strings is refused in JSON with the words of
    Flink's JSON converters and shown in PLAIN_TEXT."""
    import datetime as dt
    cluster.add_tm(slots=1)
    sid = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    gateway.fetch_all(sid, gateway.run(sid, seq_table(2)))
    gateway.fetch_all(sid, gateway.run(sid, "SET 'table.local-time-zone' = 'America/New_York'"))
    base = 1704074400123  # 2024-01-01 02:00:00.123 UTC
    q = (f"SELECT id, TO_TIMESTAMP_LTZ({base} + (id - 1) * 877, 3) AS l, "
         f"TO_TIMESTAMP_LTZ({base // 1000} + id, 0) AS l0 FROM seq")
    _, data = gateway.fetch_all(sid, gateway.run(sid, q))

    def instant(ms):
        t = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
        text = t.strftime("%Y-%m-%dT%H:%M:%S")
        frac = f"{ms % 1000:03d}".rstrip("0")
        return text + ("." + frac if frac else "") + "Z"
    got = sorted(d["fields"] for d in data)
    assert got == [[i, instant(base + (i - 1) * 877), instant((base // 1000 + i) * 1000)]
                   for i in (1, 2)], got
    oh = gateway.run(sid, "SELECT id, MAP[id, 'x'] AS m FROM seq")
    status, body = gateway.request("GET", f"/v1/sessions/{sid}/operations/{oh}/result/0"
                                   "?rowFormat=JSON")
    assert status == 500, body
    assert ("JSON format doesn't support non-string as key type of map. The type is: "
            "MAP<BIGINT, CHAR(1) NOT NULL>") in json.dumps(body), body
    _, data = gateway.fetch_all(sid, oh, "PLAIN_TEXT")
    assert sorted(d["fields"] for d in data) == [["1", "{1=x}"], ["2", "{2=x}"]], data


def test_ltz_json_rows_carry_the_instant_in_the_repeated_hour(cluster, workdir, gateway):
    """America/New_York repeats 01:00-02:00 on 2026-11-01: the instants
    05:30:00.25Z and 06:30:00.25Z both show as 01:30:00.250 in the session's
    zone (PLAIN_TEXT, as Flink's client), and rowFormat=JSON writes each as
    its own UTC instant with Flink's 'Z' -- top-level, at precision 6, and
    inside ARRAY, ROW and MAP values alike."""
    import datetime as dt
    cluster.add_tm(slots=1)
    sid = gateway.ok("POST", "/v1/sessions", {})["sessionHandle"]
    gateway.fetch_all(sid, gateway.run(sid, seq_table(2)))
    gateway.fetch_all(sid, gateway.run(sid, "SET 'table.local-time-zone' = 'America/New_York'"))
    base = int((dt.datetime(2026, 11, 1, 5, 30, 0, 250000, tzinfo=dt.timezone.utc)
                - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds() * 1000)
    ny = dt.timezone(dt.timedelta(hours=-4)), dt.timezone(dt.timedelta(hours=-5))
    for i in (0, 1):  # the model: both are 01:30:00.25 on the wall clock, EDT then EST
        t = dt.datetime.fromtimestamp((base + i * 3600000) / 1000, ny[i])
        assert t.strftime("%H:%M:%S.%f") == "01:30:00.250000"
    q = (f"SELECT id, TO_TIMESTAMP_LTZ(b, 3) AS l, CAST(TO_TIMESTAMP_LTZ(b, 3) AS TIMESTAMP_LTZ(6))"
         f" AS l6, ARRAY[TO_TIMESTAMP_LTZ(b, 3)] AS a, ROW(TO_TIMESTAMP_LTZ(b, 3), id) AS r, "
         f"MAP['k', CAST(TO_TIMESTAMP_LTZ(b, 3) AS TIMESTAMP_LTZ(6))] AS m "
         f"FROM (SELECT id, {base} + (id - 1) * 3600000 AS b FROM seq)")
    _, data = gateway.fetch_all(sid, gateway.run(sid, q))

    def instant(ms):
        t = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}".rstrip("0") + "Z"
    got = sorted([f[0], f[1], f[2], f[3], list(f[4].values()), f[5]] for f in
                 (d["fields"] for d in data))
    want = [[i, instant(base + (i - 1) * 3600000)] for i in (1, 2)]
    assert got == [[i, t, t, [t], [t, i], {"k": t}] for i, t in want], got
    _, data = gateway.fetch_all(sid, gateway.run(sid, q), "PLAIN_TEXT")
    assert sorted(d["fields"][1] for d in data) == ["2026-11-01 01:30:00.250"] * 2, data
