"""The REST API cannot be turned against its host (docs/SECURITY.md).

Each refusal is checked with the request a browser or an attacker would
send, and with its effect: nothing submitted, nothing written, nothing
deleted.

- a mutating call must be application/json: a cross-site form or "simple"
  fetch (text/plain, form-urlencoded, multipart, none) gets 415;
- a browser's Origin other than the server's own (or one listed in
  web.access-control-allow-origin) gets 403; so does a Host header that is
  not a name of the JobManager (DNS rebinding);
- a savepoint target, restore path or savepoint to dispose of outside
  state.savepoints.dir / state.checkpoints.dir / rest.allowed-dirs gets 400
  naming the roots -- after canonicalisation, so a symlink or 'file:relative'
  does not slip through;
- dispose removes only a directory whose _metadata is a savepoint's: 404
  when there is none, 400 for a checkpoint, and nothing is deleted;
- one client cannot hold more than its share of connections.
"""
import http.client
import os
import socket

from conftest import Cluster, wait_for

ENDLESS = {"name": "endless", "parallelism": 1,
           "vertices": [{"id": "g", "uid": "g", "type": "datagen",
                         "schema": [{"name": "x", "type": "BIGINT"}],
                         "config": {"rows-per-second": "100"}},
                        {"id": "s", "uid": "s", "type": "blackhole"}],
           "edges": [{"from": "g", "to": "s"}]}
JSON = {"Content-Type": "application/json"}


def strict_cluster(make_cluster, workdir, **conf):
    """A cluster whose only allowed roots are its savepoint and checkpoint dirs."""
    base = {"rest.allowed-dirs": ""}
    base.update(conf)
    return make_cluster(jm_conf=base)


def running(c):
    jid = c.submit(ENDLESS)
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), what="tasks running")
    return jid


def test_mutating_calls_must_be_json(cluster):
    body = '{"name": "x"}'
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=b",
                  None):
        headers = {"Content-Type": ctype} if ctype else {"Content-Type": ""}
        status, resp = cluster.request("POST", "/jobs", body, headers=headers)
        assert status == 415, (ctype, status, resp)
        assert "Content-Type: application/json" in resp["errors"][0], resp
    assert cluster.get("/jobs")["jobs"] == []  # nothing was submitted
    cluster.add_tm(slots=1)
    jid = running(cluster)
    status, resp = cluster.request("PATCH", f"/jobs/{jid}?mode=cancel", headers={"Content-Type": "text/plain"})
    assert status == 415, resp
    status, resp = cluster.request("POST", f"/jobs/{jid}/stop", "{}", headers={"Content-Type": "text/plain"})
    assert status == 415, resp
    assert cluster.job(jid)["state"] == "RUNNING"
    # application/json with a charset is JSON
    status, _ = cluster.request("PATCH", f"/jobs/{jid}?mode=cancel",
                                headers={"Content-Type": "application/json; charset=utf-8"})
    assert status == 202
    cluster.wait_state(jid, "CANCELED")
    log = cluster.jm.log_text()
    assert "POST /jobs -> 415" in log


def test_foreign_origin_and_host_are_refused(make_cluster):
    c = make_cluster(jm_conf={"web.access-control-allow-origin": "https://ops.example.com",
                              "rest.allowed-hosts": "sluice.internal"})
    job = ENDLESS
    status, resp = c.request("POST", "/jobs", job, headers=dict(JSON, Origin="http://evil.example"))
    assert status == 403 and "http://evil.example" in resp["errors"][0], resp
    status, resp = c.request("POST", "/jobs", job, headers=dict(JSON, Origin="null"))
    assert status == 403, resp
    assert c.get("/jobs")["jobs"] == []
    # the dashboard's own origin, and a listed one, may
    status, resp = c.request("POST", "/jobs", job, headers=dict(JSON, Origin=c.url))
    assert status == 200, resp
    status, resp = c.request("POST", "/jobs", job, headers=dict(JSON, Origin="https://ops.example.com"))
    assert status == 200, resp
    assert len(c.get("/jobs")["jobs"]) == 2
    # a name that is not this JobManager's: refused, reads too (DNS rebinding)
    for method, path, body in (("GET", "/jobs/overview", None), ("POST", "/jobs", job), ("GET", "/", None)):
        status, resp = c.request(method, path, body, headers={"Host": f"attacker.example:{c.rest_port}"})
        assert status == 403 and "attacker.example" in resp["errors"][0], (path, resp)
    for host in ("localhost", "127.0.0.1", "sluice.internal", "[::1]"):
        status, _ = c.request("GET", "/overview", headers={"Host": f"{host}:{c.rest_port}"})
        assert status == 200, host
    assert len(c.get("/jobs")["jobs"]) == 2


def test_savepoint_targets_must_lie_under_a_root(make_cluster, workdir):
    c = strict_cluster(make_cluster, workdir)
    c.add_tm(slots=1)
    jid = running(c)
    sp_root = os.path.join(workdir, "savepoints")
    os.makedirs(sp_root, exist_ok=True)
    os.symlink("/etc", os.path.join(sp_root, "etc-link"))
    before = set(os.listdir("/etc"))
    for target in ("/etc", "file:///etc/cron.d", os.path.join(sp_root, "etc-link"),
                   os.path.join(sp_root, "etc-link", "x"), os.path.join(workdir, "elsewhere")):
        status, resp = c.request("POST", f"/jobs/{jid}/savepoints", {"target-directory": target})
        assert status == 400, (target, resp)
        assert "is not under a directory this JobManager may use" in resp["errors"][0], resp
        assert os.path.realpath(sp_root) in resp["errors"][0], resp
    for target in ("file:relative", "relative/dir", os.path.join(sp_root, "..", "escape")):
        status, resp = c.request("POST", f"/jobs/{jid}/stop", {"targetDirectory": target})
        assert status == 400, (target, resp)
    assert set(os.listdir("/etc")) == before
    assert not os.path.exists(os.path.join(workdir, "elsewhere"))
    assert c.job(jid)["state"] == "RUNNING"
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["total"] == 0  # none was even triggered
    # under the root (as a file:// URI too) it works
    status, resp = c.request("POST", f"/jobs/{jid}/savepoints",
                             {"target-directory": "file://" + os.path.join(sp_root, "mine")})
    assert status == 202, resp
    op = wait_for(lambda: (lambda r: r["status"]["id"] == "COMPLETED" and r)(
        c.get(f"/jobs/{jid}/savepoints/{resp['request-id']}")), what="the savepoint")
    loc = op["operation"]["location"]
    assert loc.startswith("file:" + os.path.realpath(os.path.join(sp_root, "mine")) + "/savepoint-"), loc
    # restoring from outside the roots is refused as well
    status, resp = c.request("POST", "/jobs?savepointPath=/etc", ENDLESS)
    assert status == 400 and "savepointPath '/etc' is not under" in resp["errors"][0], resp
    status, resp = c.request("POST", "/savepoints/check?savepointPath=/etc", ENDLESS)
    assert status == 400, resp


def test_dispose_removes_only_savepoints(make_cluster, workdir):
    c = strict_cluster(make_cluster, workdir, **{"execution.checkpointing.interval": "100 ms",
                                                 "state.checkpoints.num-retained": "1000"})
    c.add_tm(slots=1)
    jid = running(c)
    sp_root = os.path.join(workdir, "savepoints")
    # a directory named like a savepoint, holding state files but no _metadata
    fake = os.path.join(sp_root, "savepoint-abcdef-000000000000")
    os.makedirs(fake)
    open(os.path.join(fake, "g-0.state"), "w").close()
    status, resp = c.request("POST", "/savepoints/dispose", {"savepoint-path": fake})
    assert status == 404 and "no _metadata" in resp["errors"][0], resp
    status, resp = c.request("POST", "/savepoints/dispose",
                             {"savepoint-path": os.path.join(sp_root, "savepoint-none-000000000000")})
    assert status == 404, resp
    # a retained checkpoint is not a savepoint
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 1, what="a checkpoint")
    ck = c.get(f"/jobs/{jid}/checkpoints")["latest"]["completed"]["external_path"][len("file:"):]
    status, resp = c.request("POST", "/savepoints/dispose", {"savepoint-path": ck})
    assert status == 400 and "a checkpoint's" in resp["errors"][0], resp
    # outside the roots: refused before anything is looked at
    outside = os.path.join(workdir, "outside", "savepoint-abcdef-000000000000")
    os.makedirs(outside)
    open(os.path.join(outside, "_metadata"), "w").close()
    status, resp = c.request("POST", "/savepoints/dispose", {"savepoint-path": outside})
    assert status == 400 and "is not under" in resp["errors"][0], resp
    # Flink's asynchronous disposal says the same in its result
    _, trig = c.request("POST", "/savepoint-disposal", {"savepoint-path": fake})
    op = c.get(f"/savepoint-disposal/{trig['request-id']}")["operation"]
    assert "no _metadata" in op["failure-cause"]["stack-trace"], op
    assert os.listdir(fake) == ["g-0.state"] and os.path.isfile(os.path.join(ck, "_metadata"))
    assert os.path.isfile(os.path.join(outside, "_metadata"))
    # a real savepoint goes
    _, t = c.request("POST", f"/jobs/{jid}/savepoints", {})
    op = wait_for(lambda: (lambda r: r["status"]["id"] == "COMPLETED" and r)(
        c.get(f"/jobs/{jid}/savepoints/{t['request-id']}")), what="the savepoint")
    sp = op["operation"]["location"][len("file:"):]
    status, resp = c.request("POST", "/savepoints/dispose", {"savepoint-path": "file://" + sp})
    assert status == 200, resp
    assert not os.path.exists(sp)


def test_one_client_cannot_hold_every_connection(cluster):
    # half-open connections (a request line, never the end of the headers)
    socks = []
    try:
        for _ in range(400):
            s = socket.create_connection(("127.0.0.1", cluster.rest_port), timeout=10)
            s.sendall(b"GET /overview HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        # beyond the per-client limit the server closes them at once

        def closed(s):
            try:
                s.settimeout(0.05)
                return s.recv(1) == b""
            except socket.timeout:
                return False
            except OSError:
                return True
        wait_for(lambda: sum(closed(s) for s in socks) >= 400 - 256, what="connections over the limit closed")
        # while this client holds all it may, another client address is served
        other = http.client.HTTPConnection("127.0.0.1", cluster.rest_port, timeout=10,
                                           source_address=("127.0.0.2", 0))
        other.request("GET", "/overview")
        assert other.getresponse().status == 200
        other.close()
        # the ones held are closed after the idle timeout too, without any
        # request from us: the server does not keep them for ever
        wait_for(lambda: all(closed(s) for s in socks), timeout=60, what="half-open connections timed out")
    finally:
        for s in socks:
            s.close()
    assert cluster.get("/overview")["taskmanagers"] == 0
