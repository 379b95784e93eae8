"""The Avro tests' independent side, Python's standard library only: the
schema Flink derives from a table (AvroSchemaConverter's rules, written
here from the table's types, not read from Sluice), an Avro binary encoder
to write source records and a decoder to read what the sink wrote, and a
small schema registry (the Confluent REST calls the format makes: register
a subject's schema, fetch a schema by id) served over HTTP from the test.

Values in Python: BOOLEAN bool, integers int, FLOAT/DOUBLE float, STRING
str, BYTES bytes, DECIMAL decimal.Decimal, DATE datetime.date, TIME
datetime.time, TIMESTAMP datetime.datetime (naive, UTC), ARRAY list, MAP
and MULTISET dict, ROW dict by field name; NULL None.
"""
import datetime
import decimal
import http.server
import io
import json
import re
import ssl
import struct
import threading

EPOCH = datetime.datetime(1970, 1, 1)
decimal.getcontext().prec = 80  # DECIMAL(38) values exactly (the default context keeps 28 digits)
NS = "org.apache.flink.avro.generated"


# ---- Flink's schema of a table -------------------------------------------------------


def split_top(s, sep=","):
    """Split at sep outside <> and ()."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_type(t):
    """A Flink SQL type text -> (kind, args, notnull)."""
    t = t.strip()
    notnull = t.upper().endswith("NOT NULL")
    if notnull:
        t = t[:-8].strip()
    m = re.match(r"(\w+)\s*(?:<(.*)>|\((.*)\))?$", t, re.S)
    kind = m.group(1).upper()
    if kind in ("ARRAY", "MULTISET"):
        return (kind, [parse_type(m.group(2))], notnull)
    if kind == "MAP":
        k, v = split_top(m.group(2))
        return (kind, [parse_type(k), parse_type(v)], notnull)
    if kind == "ROW":
        fields = []
        for f in split_top(m.group(2)):
            name, ft = f.split(None, 1)
            fields.append((name.strip("`"), parse_type(ft)))
        return (kind, fields, notnull)
    args = [int(x) for x in (m.group(3) or "").split(",") if x.strip()]
    return (kind, args, notnull)


def flink_schema(t, name):
    """The Avro schema (JSON value) of type t as Flink derives it."""
    kind, args, notnull = t
    lg = lambda base, l: {"type": base, "logicalType": l}  # noqa: E731
    if kind == "BOOLEAN":
        s = "boolean"
    elif kind in ("TINYINT", "SMALLINT", "INT", "INTEGER"):
        s = "int"
    elif kind == "BIGINT":
        s = "long"
    elif kind == "FLOAT":
        s = "float"
    elif kind == "DOUBLE":
        s = "double"
    elif kind in ("STRING", "VARCHAR", "CHAR"):
        s = "string"
    elif kind in ("BYTES", "VARBINARY", "BINARY"):
        s = "bytes"
    elif kind == "DECIMAL":
        s = {"type": "bytes", "logicalType": "decimal", "precision": args[0], "scale": args[1]}
    elif kind == "DATE":
        s = lg("int", "date")
    elif kind == "TIME":
        s = lg("int", "time-millis") if not args or args[0] <= 3 else lg("long", "time-micros")
    elif kind in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        p = args[0] if args else 6
        s = lg("long", "timestamp-millis" if p <= 3 else "timestamp-micros")
    elif kind == "ARRAY":
        s = {"type": "array", "items": flink_schema(args[0], name)}
    elif kind == "MAP":
        s = {"type": "map", "values": flink_schema(args[1], name)}
    elif kind == "MULTISET":
        s = {"type": "map", "values": "int"}
    elif kind == "ROW":
        s = {"type": "record", "name": name, "fields": [field(n, ft, name + "_" + n) for n, ft in args]}
    else:
        raise ValueError(kind)
    return s if notnull else ["null", s]


def field(n, ft, recname):
    f = {"name": n, "type": flink_schema(ft, recname)}
    if not ft[2]:
        f["default"] = None
    return f


def table_schema(cols):
    """cols: [(name, type text)] -> the record schema of the table."""
    return {"type": "record", "name": "record", "namespace": NS,
            "fields": [field(n, parse_type(t), "record_" + n) for n, t in cols]}


# ---- binary ------------------------------------------------------------------------


def zz(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode(schema, v, out):
    if isinstance(schema, list):  # a union: null first
        if v is None:
            out.write(zz(schema.index("null")))
            return
        i = next(k for k, b in enumerate(schema) if b != "null")
        out.write(zz(i))
        return encode(schema[i], v, out)
    if isinstance(schema, str):
        schema = {"type": schema}
    t, lt = schema["type"], schema.get("logicalType")
    if t == "record":
        for f in schema["fields"]:
            encode(f["type"], v.get(f["name"]), out)
    elif t == "array":
        if v:
            out.write(zz(len(v)))
            for e in v:
                encode(schema["items"], e, out)
        out.write(zz(0))
    elif t == "map":
        if v:
            out.write(zz(len(v)))
            for k, e in v.items():
                encode("string", k, out)
                encode(schema["values"], e, out)
        out.write(zz(0))
    elif t == "boolean":
        out.write(b"\x01" if v else b"\x00")
    elif t in ("int", "long"):
        if lt == "date":
            v = (v - EPOCH.date()).days
        elif lt == "time-millis":
            v = (v.hour * 3600 + v.minute * 60 + v.second) * 1000 + v.microsecond // 1000
        elif lt == "time-micros":
            v = (v.hour * 3600 + v.minute * 60 + v.second) * 1000000 + v.microsecond
        elif lt in ("timestamp-millis", "timestamp-micros"):
            d = v - EPOCH
            us = (d.days * 86400 + d.seconds) * 1000000 + d.microseconds
            v = us // 1000 if lt == "timestamp-millis" else us
        out.write(zz(v))
    elif t == "float":
        out.write(struct.pack("<f", v))
    elif t == "double":
        out.write(struct.pack("<d", v))
    elif t in ("string", "bytes"):
        if lt == "decimal":
            u = int(v.scaleb(schema["scale"]))
            n = 1
            while not -(1 << (8 * n - 1)) <= u < (1 << (8 * n - 1)):
                n += 1
            v = u.to_bytes(n, "big", signed=True)
        elif t == "string":
            v = v.encode()
        out.write(zz(len(v)))
        out.write(v)
    else:
        raise ValueError(t)


def to_bytes(schema, v):
    b = io.BytesIO()
    encode(schema, v, b)
    return b.getvalue()


class Reader:
    def __init__(self, b):
        self.b, self.i = b, 0

    def long(self):
        shift = n = 0
        while True:
            c = self.b[self.i]
            self.i += 1
            n |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return (n >> 1) ^ -(n & 1)

    def take(self, n):
        assert self.i + n <= len(self.b), "past the end of the record"
        r = self.b[self.i:self.i + n]
        self.i += n
        return r


def decode(schema, r):
    if isinstance(schema, list):
        return decode(schema[r.long()], r)
    if isinstance(schema, str):
        schema = {"type": schema}
    t, lt = schema["type"], schema.get("logicalType")
    if t == "null":
        return None
    if t == "record":
        return {f["name"]: decode(f["type"], r) for f in schema["fields"]}
    if t in ("array", "map"):
        out = [] if t == "array" else {}
        while True:
            n = r.long()
            if n == 0:
                return out
            if n < 0:
                r.long()
                n = -n
            for _ in range(n):
                if t == "array":
                    out.append(decode(schema["items"], r))
                else:
                    k = decode("string", r)
                    out[k] = decode(schema["values"], r)
    if t == "boolean":
        return r.take(1) == b"\x01"
    if t in ("int", "long"):
        v = r.long()
        if lt == "date":
            return EPOCH.date() + datetime.timedelta(days=v)
        if lt in ("time-millis", "time-micros"):
            us = v * 1000 if lt == "time-millis" else v
            return (datetime.datetime.min + datetime.timedelta(microseconds=us)).time()
        if lt in ("timestamp-millis", "timestamp-micros"):
            return EPOCH + datetime.timedelta(microseconds=v * 1000 if lt == "timestamp-millis" else v)
        return v
    if t == "float":
        return struct.unpack("<f", r.take(4))[0]
    if t == "double":
        return struct.unpack("<d", r.take(8))[0]
    if t in ("string", "bytes"):
        b = r.take(r.long())
        if lt == "decimal":
            return decimal.Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-schema["scale"])
        return b.decode() if t == "string" else b
    raise ValueError(t)


def from_bytes(schema, b):
    r = Reader(b)
    v = decode(schema, r)
    assert r.i == len(b), f"{len(b) - r.i} bytes after the record"
    return v


# ---- a schema registry -----------------------------------------------------------------


class Registry:
    """The Confluent registry's two calls the format makes: POST
    /subjects/<s>/versions {"schema": text} -> {"id": n} (the same text gets
    the same id), GET /schemas/ids/<n> -> {"schema": text}. Every request is
    logged in self.calls."""

    def __init__(self, tls=None, auth=None):
        """tls: a PEM file with the server's certificate and key, to serve
        HTTPS; auth: the Authorization header every request must carry (else
        401, as the registry answers)."""
        self.schemas, self.subjects, self.calls, self.refused = [], {}, [], 0
        reg = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def answer(self, code, obj):
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def allowed(self):
                if auth is None or self.headers.get("Authorization") == auth:
                    return True
                reg.refused += 1
                self.answer(401, {"error_code": 401, "message": "Unauthorized"})
                return False

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if not self.allowed():
                    return
                reg.calls.append(("POST", self.path, self.headers.get("Content-Type")))
                m = re.match(r"/subjects/([^/]+)/versions$", self.path)
                if not m:
                    return self.answer(404, {"error_code": 404, "message": "not found"})
                text = json.loads(body)["schema"]
                self.answer(200, {"id": reg.register(m.group(1), text)})

            def do_GET(self):
                if not self.allowed():
                    return
                reg.calls.append(("GET", self.path, None))
                m = re.match(r"/schemas/ids/(\d+)$", self.path)
                if not m or not 1 <= int(m.group(1)) <= len(reg.schemas):
                    return self.answer(404, {"error_code": 40403, "message": "Schema not found"})
                self.answer(200, {"schema": reg.schemas[int(m.group(1)) - 1]})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        host = "localhost" if tls else "127.0.0.1"  # the certificate names localhost
        self.url = f"{'https' if tls else 'http'}://{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def register(self, subject, text):
        if text not in self.schemas:
            self.schemas.append(text)
        sid = self.schemas.index(text) + 1  # ids start at 1, as the registry's do
        self.subjects.setdefault(subject, [])
        if sid not in self.subjects[subject]:
            self.subjects[subject].append(sid)
        return sid

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def confluent(sid, schema, v):
    return b"\x00" + struct.pack(">I", sid) + to_bytes(schema, v)


def unconfluent(registry, b):
    assert b[0] == 0, b[:5]
    sid = struct.unpack(">I", b[1:5])[0]
    return sid, from_bytes(json.loads(registry.schemas[sid - 1]), b[5:])
