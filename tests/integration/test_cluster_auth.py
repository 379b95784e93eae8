"""The shared cluster secret (security.cluster.secret, core/auth.h).

- A cluster whose daemons hold the secret (one TaskManager reads it from
  security.cluster.secret-file) runs a job across two TaskManagers -- RPC
  and data connections all authenticated -- with exact output.
- While it runs, a fake TaskManager (a Python socket speaking the HELLO
  frame, without the secret) tries to register: with no challenge, with a
  made-up proof, and by skipping the proof to send a registration and a
  TaskStatus reporting a real task FAILED. Each is refused and logged; it
  never appears in /taskmanagers. It also connects to a real TaskManager's
  data port claiming the other one's id, with and without a challenge:
  refused and logged, the real data connection untouched. The job never
  restarts and its output is exact.
- A real TaskManager without the secret is refused by the JobManager and
  says why in its log; one with a wrong secret is refused too.
- A peer that does hold the secret (the handshake computed here with
  Python's hmac) registers under its own id, but its reports of other
  TaskManagers' tasks -- FAILED states, checkpoint acknowledgements -- are
  ignored and logged: the job never restarts.
"""
import hashlib
import hmac
import os
import socket
import struct

from conftest import wait_for
from test_checkpoints import _fields, agg_job
from test_faults import exact_output

SECRET = "correct horse battery staple"


# ---- the wire, written out here from proto/control.proto and taskmanager/net.c ----

def _varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _len_field(num, data):
    data = data.encode() if isinstance(data, str) else data
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def _int_field(num, v):
    return _varint(num << 3) + _varint(v)


def frame(envelope_field, body):
    env = _len_field(envelope_field, body)
    return struct.pack(">I", len(env)) + env


def hello(peer_id, nonce=None, proof=None):
    body = _int_field(1, 1) + _len_field(2, "taskmanager") + _len_field(3, peer_id)
    if nonce is not None:
        body += _len_field(4, nonce)
    if proof is not None:
        body += _len_field(5, proof)
    return frame(1, body)


def register(tm_id):
    body = (_len_field(1, tm_id) + _len_field(2, "127.0.0.1") + _int_field(3, 1) +
            _int_field(4, 4))
    return frame(2, body)


def task_failed(job_id, attempt, tm_id):
    body = (_len_field(1, job_id) + _int_field(2, attempt) + _int_field(3, 0) + _int_field(4, 0) +
            _int_field(5, 5) + _len_field(6, "java.lang.Exception: forged") + _len_field(7, tm_id))
    return frame(8, body)


def read_frame(s):
    hdr = b""
    while len(hdr) < 4:
        chunk = s.recv(4 - len(hdr))
        if not chunk:
            return None
        hdr += chunk
    n = struct.unpack(">I", hdr)[0]
    body = b""
    while len(body) < n:
        chunk = s.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def closed_by_peer(s):
    """True once the other side has closed (reads drain to EOF)."""
    s.settimeout(10)
    try:
        while True:
            if not s.recv(4096):
                return True
    except ConnectionResetError:
        return True


def data_hello(claimed_id, nonce=b""):
    idb = claimed_id.encode()
    return struct.pack("<BQIIII", 3, 0, 0x534C4443, 2, len(idb), len(nonce)) + idb + nonce


def test_secret_authenticates_and_fakes_are_refused(make_cluster, workdir):
    secret_file = os.path.join(workdir, "cluster.secret")
    with open(secret_file, "w") as f:
        f.write(SECRET + "\n")
    c = make_cluster(jm_conf={"security.cluster.secret": SECRET})
    c.add_tm(slots=1, extra={"security.cluster.secret": SECRET})
    c.add_tm(slots=1, extra={"security.cluster.secret-file": secret_file})
    n, keys = 8000, 10  # 2000 rows/s: 4 s, long enough for the attempts below
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: "data connection to" in c.tms[0].log_text() + c.tms[1].log_text(),
             what="an authenticated data connection")
    # the secret is not shown back
    conf = {e["key"]: e["value"] for e in c.get("/jobmanager/config")}
    assert conf["security.cluster.secret"] == "******"

    rpc = ("127.0.0.1", c.rpc_port)
    # 1. no challenge: refused at once
    with socket.create_connection(rpc) as s:
        s.sendall(hello("fake-1") + register("fake-1"))
        assert closed_by_peer(s)
    # 2. a challenge, then a made-up proof
    with socket.create_connection(rpc) as s:
        s.sendall(hello("fake-2", nonce=os.urandom(32)))
        reply = dict(_fields(_fields(read_frame(s))[0][1]))
        assert len(reply[4]) == 32 and len(reply[5]) == 32  # its nonce and proof
        s.sendall(hello("fake-2", proof=os.urandom(32)) + register("fake-2"))
        assert closed_by_peer(s)
    # 3. a challenge, then no proof at all: registration and a forged FAILED
    with socket.create_connection(rpc) as s:
        s.sendall(hello("tm-0", nonce=os.urandom(32)))
        assert read_frame(s)
        s.sendall(register("tm-0") + task_failed(jid, 1, "tm-0") + task_failed(jid, 0, "tm-0"))
        assert closed_by_peer(s)
    # 4. a real TaskManager's data port, claiming the other's id
    tms = {t["id"]: t for t in c.get("/taskmanagers")["taskmanagers"]}
    data = ("127.0.0.1", tms["tm-1"]["dataPort"])
    with socket.create_connection(data) as s:
        s.sendall(data_hello("tm-0"))
        assert closed_by_peer(s)
    with socket.create_connection(data) as s:
        s.sendall(data_hello("tm-0", os.urandom(32)))
        answer = b""
        while len(answer) < 25 + 64:
            answer += s.recv(4096)
        assert answer[0] == 4  # the acceptor's challenge and proof
        s.sendall(struct.pack("<BQIIII", 4, 0, 0x534C4443, 2, 32, 0) + os.urandom(32))
        assert closed_by_peer(s)

    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert job["timestamps"]["RESTARTING"] == 0, job["timestamps"]
    assert c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"] == []
    exact_output(out, raw, n, keys)
    assert sorted(tms) == ["tm-0", "tm-1"]
    assert sorted(t["id"] for t in c.get("/taskmanagers")["taskmanagers"]) == ["tm-0", "tm-1"]
    log = c.jm.log_text()
    assert log.count("refused: it sent no challenge") == 1, log
    assert log.count("refused: it did not prove the cluster secret") == 1, log
    assert log.count("refused: a message before it proved the cluster secret") == 1, log
    assert "TaskManager fake" not in log and "forged" not in log
    tm1 = c.tms[1].log_text()
    assert "it claims to be tm-0 but sent no challenge" in tm1, tm1
    assert "tm-0 did not answer our challenge" in tm1 or \
        "it claims to be tm-0 but did not prove the cluster secret" in tm1, tm1
    assert "replacing its data connection" not in tm1


def test_taskmanager_without_the_secret_is_refused(make_cluster, workdir):
    c = make_cluster(jm_conf={"security.cluster.secret": SECRET})
    good = c.add_tm(slots=1, extra={"security.cluster.secret": SECRET})
    none = c.add_tm(slots=1, wait=False)
    wrong = c.add_tm(slots=1, wait=False, extra={"security.cluster.secret": "not it"})
    wait_for(lambda: "requires the cluster secret" in none.log_text(), what="the refusal, told")
    wait_for(lambda: "did not prove the cluster secret" in wrong.log_text(),
             what="the wrong secret found out")
    wait_for(lambda: c.jm.log_text().count("refused:") >= 2, what="the JobManager's refusals")
    assert [t["id"] for t in c.get("/taskmanagers")["taskmanagers"]] == [good.id]
    assert none.alive() and wrong.alive()  # they keep trying; they never get in


def mac(secret, label, first, second, tm_id):
    return hmac.new(secret.encode(), label.encode() + b"\0" + first + second + tm_id.encode(),
                    hashlib.sha256).digest()


def ack(job_id, attempt, cp_id, chain, subtask):
    body = (_len_field(1, job_id) + _int_field(2, attempt) + _int_field(3, cp_id) +
            _int_field(4, chain) + _int_field(5, subtask))
    return frame(10, body)


def test_authenticated_peer_cannot_speak_for_another(make_cluster, workdir):
    c = make_cluster(jm_conf={"security.cluster.secret": SECRET,
                              "execution.checkpointing.interval": "200 ms"})
    c.add_tm(slots=1, extra={"security.cluster.secret": SECRET})
    c.add_tm(slots=1, extra={"security.cluster.secret": SECRET})
    n, keys = 8000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    with socket.create_connection(("127.0.0.1", c.rpc_port)) as s:
        mine = os.urandom(32)
        s.sendall(hello("rogue", nonce=mine))
        reply = dict(_fields(_fields(read_frame(s))[0][1]))
        theirs = reply[4]
        assert reply[5] == mac(SECRET, "sluice-rpc-jobmanager", mine, theirs, "rogue")
        s.sendall(hello("rogue", proof=mac(SECRET, "sluice-rpc-taskmanager", theirs, mine, "rogue")))
        s.sendall(register("rogue"))
        wait_for(lambda: any(t["id"] == "rogue" for t in c.get("/taskmanagers")["taskmanagers"]),
                 what="the secret holder to register")
        forged = b""
        for attempt in (0, 1, 2):
            for chain in range(4):
                for sub in range(2):
                    forged += task_failed(jid, attempt, "tm-0") if chain == 0 else b""
                    forged += ack(jid, attempt, 1 + chain, chain, sub)
        for chain in range(4):
            for sub in range(2):
                body = (_len_field(1, jid) + _int_field(2, 1) + _int_field(3, chain) +
                        _int_field(4, sub) + _int_field(5, 5) + _len_field(6, "forged") +
                        _len_field(7, "tm-1"))
                forged += frame(8, body)
        s.sendall(forged)
        wait_for(lambda: "reported the state of a task that does not run there" in c.jm.log_text(),
                 what="the forged reports ignored")
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert job["timestamps"]["RESTARTING"] == 0, job["timestamps"]
    assert "forged" not in c.jm.log_text().replace("the forged", "")
    exact_output(out, raw, n, keys)
