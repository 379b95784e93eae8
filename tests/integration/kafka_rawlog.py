"""The exactly-once tests' oracle: a partition's raw record batches, read
with the Kafka Fetch protocol (v4, read_uncommitted) over a plain socket,
with the transaction control records applied here.

tansu hides open transactions from read_committed consumers but still shows
aborted records to them (its fetch responses carry no aborted-transactions
list), so no client's read_committed view can be trusted. This reader trusts
only the log itself: a record of a transactional batch counts when a COMMIT
control record of its producer follows it, is dropped at an ABORT, and does
not count while its transaction is still open; records of non-transactional
batches count as they are. Compressed batches are refused (the sink under
test does not compress).
"""
import socket
import struct

API_FETCH, API_METADATA = 1, 3


def _varint(b, i):
    shift = v = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return (v >> 1) ^ -(v & 1), i  # zigzag


class Conn:
    def __init__(self, bootstrap):
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=10)
        self.corr = 0

    def close(self):
        self.s.close()

    def _recv(self, n):
        out = b""
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            out += chunk
        return out

    def request(self, api, version, body):
        self.corr += 1
        cid = b"sluice-oracle"
        hdr = struct.pack(">hhih", api, version, self.corr, len(cid)) + cid
        msg = hdr + body
        self.s.sendall(struct.pack(">i", len(msg)) + msg)
        n = struct.unpack(">i", self._recv(4))[0]
        data = self._recv(n)
        corr = struct.unpack(">i", data[:4])[0]
        assert corr == self.corr, (corr, self.corr)
        return data[4:]


def _str(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def fetch(conn, topic, partition, offset, max_bytes=1 << 20):
    """The raw record batches of a partition from offset on."""
    return fetch_hw(conn, topic, partition, offset, max_bytes)[1]


def fetch_hw(conn, topic, partition, offset, max_bytes=1 << 20):
    """(the Fetch response's high watermark, its raw record batches)."""
    body = struct.pack(">iiiib", -1, 100, 1, max_bytes, 0)
    body += struct.pack(">i", 1) + _str(topic) + struct.pack(">i", 1)
    body += struct.pack(">iqi", partition, offset, max_bytes)
    r = conn.request(API_FETCH, 4, body)
    i = 4  # throttle
    (ntopics,) = struct.unpack_from(">i", r, i)
    i += 4
    assert ntopics == 1, ntopics
    (tl,) = struct.unpack_from(">h", r, i)
    i += 2 + tl
    (nparts,) = struct.unpack_from(">i", r, i)
    i += 4
    assert nparts == 1, nparts
    part, err, hw, lso = struct.unpack_from(">ihqq", r, i)
    i += 22
    assert err == 0, f"fetch {topic}/{partition}@{offset}: error {err}"
    (naborted,) = struct.unpack_from(">i", r, i)
    i += 4
    i += max(naborted, 0) * 16
    (rl,) = struct.unpack_from(">i", r, i)
    i += 4
    return hw, r[i:i + max(rl, 0)]


def batches(data):
    """Complete record batches in data: dicts with their records
    (offset, key, value) and, in "meta", each record's (timestamp, headers)
    with headers a list of (name, value bytes or None)."""
    i = 0
    while i + 12 <= len(data):
        base, blen = struct.unpack_from(">qi", data, i)
        if i + 12 + blen > len(data):
            break  # cut short by max_bytes
        b = data[i + 12:i + 12 + blen]
        (epoch, magic, crc, attrs, last_delta, first_ts, max_ts, pid, pepoch, bseq,
         count) = struct.unpack_from(">ibIhiqqqhii", b, 0)
        assert magic == 2, f"batch at {base}: magic {magic}"
        assert attrs & 7 == 0, f"batch at {base}: compressed (attributes {attrs})"
        recs, meta, j = [], [], 49
        for _ in range(count):
            ln, j = _varint(b, j)
            end = j + ln
            j += 1  # attributes
            tsd, j = _varint(b, j)
            od, j = _varint(b, j)
            kl, j = _varint(b, j)
            key = None if kl < 0 else b[j:j + kl]
            j += max(kl, 0)
            vl, j = _varint(b, j)
            value = None if vl < 0 else b[j:j + vl]
            j += max(vl, 0)
            hdrs = []
            if j < end:
                nh, j = _varint(b, j)
                for _ in range(nh):
                    hk, j = _varint(b, j)
                    name = b[j:j + hk].decode()
                    j += hk
                    hv, j = _varint(b, j)
                    hdrs.append((name, None if hv < 0 else b[j:j + hv]))
                    j += max(hv, 0)
            recs.append((base + od, key, value))
            meta.append((first_ts + tsd, hdrs))
            j = end
        yield {"base": base, "last": base + last_delta, "pid": pid, "epoch": pepoch,
               "transactional": bool(attrs & 16), "control": bool(attrs & 32), "records": recs,
               "meta": meta}
        i += 12 + blen


def partitions(conn, topic):
    body = struct.pack(">i", 1) + _str(topic)
    r = conn.request(API_METADATA, 1, body)
    i = 0
    (nb,) = struct.unpack_from(">i", r, i)
    i += 4
    for _ in range(nb):
        i += 4
        (hl,) = struct.unpack_from(">h", r, i)
        i += 2 + hl + 4
        (rl,) = struct.unpack_from(">h", r, i)
        i += 2 + max(rl, 0)
    i += 4  # controller id
    (nt,) = struct.unpack_from(">i", r, i)
    i += 4
    for _ in range(nt):
        err, tl = struct.unpack_from(">hh", r, i)
        i += 4
        name = r[i:i + tl].decode()
        i += tl + 1  # is_internal
        (np_,) = struct.unpack_from(">i", r, i)
        i += 4
        ids = []
        for _ in range(np_):
            perr, pid, leader = struct.unpack_from(">hii", r, i)
            i += 10
            (nrep,) = struct.unpack_from(">i", r, i)
            i += 4 + 4 * nrep
            (nisr,) = struct.unpack_from(">i", r, i)
            i += 4 + 4 * nisr
            ids.append(pid)
        if name == topic:
            assert err == 0, f"metadata {topic}: error {err}"
            return sorted(ids)
    raise AssertionError(f"no topic {topic}")


def committed(bootstrap, topic):
    """Every committed record value of the topic, per partition in log order,
    and a summary: {"values": [...], "open": n records of open transactions,
    "aborted": n, "commits": n, "aborts": n}."""
    conn = Conn(bootstrap)
    out = {"values": [], "open": 0, "aborted": 0, "commits": 0, "aborts": 0}
    try:
        for p in partitions(conn, topic):
            pending = {}  # pid -> records of its open transaction
            offset = 0
            while True:
                bs = list(batches(fetch(conn, topic, p, offset)))
                bs = [b for b in bs if b["last"] >= offset]
                if not bs:
                    break
                for b in bs:
                    offset = b["last"] + 1
                    if b["control"]:
                        for _, key, _ in b["records"]:
                            _, kind = struct.unpack(">hh", key[:4])
                            recs = pending.pop(b["pid"], [])
                            if kind == 1:
                                out["values"] += recs
                                out["commits"] += 1
                            else:
                                out["aborted"] += len(recs)
                                out["aborts"] += 1
                    elif b["transactional"]:
                        pending.setdefault(b["pid"], []).extend(v for _, _, v in b["records"])
                    else:
                        out["values"] += [v for _, _, v in b["records"]]
            out["open"] += sum(len(r) for r in pending.values())
    finally:
        conn.close()
    return out
