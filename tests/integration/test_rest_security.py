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
import glob
import http.client
import os
import shutil
import socket
import subprocess
import uuid

from conftest import BUILD, Cluster, wait_for

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


# ---- the jar API (jobmanager/jars.c) behind the same gate ----------------------
# A C job runs its code wherever it is loaded; tests/plugins/load_marker.c's
# constructor writes sluice-loaded-<pid> (pid, parent, open descriptors,
# command line) into the loading process's working directory -- the test's
# scratch directory for every daemon -- so "no marker" means nobody ran it.

MARKER_JOB = os.path.join(BUILD, "plugins", "load_marker.so")
EVIL = "http://evil.example"
TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def multipart(path, filename="load_marker.so"):
    """A browser's multipart/form-data upload of the file at path."""
    boundary = uuid.uuid4().hex
    with open(path, "rb") as f:
        data = f.read()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\"{filename}\"\r\n"
            f"Content-Type: application/x-sharedlib\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def markers(workdir):
    """What the marker job's constructor wrote: one dict per process that loaded it."""
    out = []
    for path in sorted(glob.glob(os.path.join(workdir, "sluice-loaded-*"))):
        with open(path) as f:
            fields = dict(line.split(" ", 1) for line in f.read().splitlines())
        out.append({"pid": int(fields["pid"]), "ppid": int(fields["ppid"]), "fds": fields["fds"],
                    "argv": fields.get("argv", "").split()})
    return out


def cross_site_requests(c, method, path, body=None):
    """The requests a web page elsewhere (or a DNS-rebinding one) can make:
    (what, status expected, status and answer got). Multipart is refused
    everywhere but /jars/upload, whose own type it is."""
    js = body if body is not None else {}
    form = b"programArg=x"
    mp_body, mp = multipart(MARKER_JOB)
    cases = [("foreign Origin", 403, dict(JSON, Origin=EVIL), js),
             ("Origin null", 403, dict(JSON, Origin="null"), js),
             ("foreign Host", 403, dict(JSON, Host=f"attacker.example:{c.rest_port}"), js)]
    if method == "GET":
        cases += [("a link from another site", 403, {"Sec-Fetch-Site": "cross-site"}, None)]
    else:
        cases += [("text/plain", 415, {"Content-Type": "text/plain"}, '{"programArgsList": []}'),
                  ("a form", 415, {"Content-Type": "application/x-www-form-urlencoded"}, form),
                  ("multipart", 415, mp, mp_body)][:None if path != "/jars/upload" else -1]
    for what, expected, headers, data in cases:
        if method == "GET":
            data = None
        yield what, expected, c.request(method, path, data, headers=headers)


def test_jar_endpoints_refuse_cross_site_requests(make_cluster, workdir):
    """Every /jars call goes through the REST guard before jars.c sees it:
    an upload, a plan (which runs the job's code), a run and a delete from
    another site get 403 or 415 and have no effect -- nothing stored,
    nothing loaded, no job, nothing deleted."""
    updir = os.path.join(workdir, "uploads")
    c = make_cluster(jm_conf={"web.upload.dir": updir})
    body, mp = multipart(MARKER_JOB)
    for what, expected, headers, data in (
            ("foreign Origin", 403, dict(mp, Origin=EVIL), body),
            ("Origin null", 403, dict(mp, Origin="null"), body),
            ("foreign Host", 403, dict(mp, Host=f"attacker.example:{c.rest_port}"), body),
            ("text/plain", 415, {"Content-Type": "text/plain"}, body),
            ("a form", 415, {"Content-Type": "application/x-www-form-urlencoded"}, b"jarfile=x")):
        status, resp = c.request("POST", "/jars/upload", data, headers=headers)
        assert (status, len(resp["errors"])) == (expected, 1), (what, status, resp)
        status, resp = c.request("POST", "/v1/jars/upload", data, headers=headers)
        assert status == expected, (what, "/v1", status, resp)
    assert os.listdir(updir) == []  # not even a temporary file
    assert c.get("/jars")["files"] == []
    # the dashboard's own page may upload
    status, resp = c.request("POST", "/jars/upload", body, headers=dict(mp, Origin=c.url))
    assert status == 200, resp
    jar = os.path.basename(resp["filename"])
    assert os.listdir(updir) == [jar]

    refusals = [("GET", f"/jars/{jar}/plan"), ("POST", f"/jars/{jar}/plan"), ("POST", f"/jars/{jar}/run"),
                ("DELETE", f"/jars/{jar}"), ("POST", "/jars/upload")]
    for method, path in refusals:
        for what, expected, (status, resp) in cross_site_requests(c, method, path):
            assert status == expected, (method, path, what, status, resp)
            assert isinstance(resp["errors"][0], str), resp
    assert markers(workdir) == []  # no process loaded the object
    assert c.get("/jobs")["jobs"] == []
    assert [f["id"] for f in c.get("/jars")["files"]] == [jar]
    assert os.listdir(updir) == [jar]
    assert "GET /jars/%s/plan -> 403: a GET from another site's web page (Sec-Fetch-Site: cross-site)" % jar \
        in c.jm.log_text()

    # the same plan from the dashboard's own page is built -- in a child of
    # the JobManager that has nothing open but its stdin and its two pipes
    status, resp = c.request("GET", f"/jars/{jar}/plan", headers={"Origin": c.url, "Sec-Fetch-Site": "same-origin"})
    assert status == 200, resp
    assert [n["id"] for n in resp["plan"]["nodes"]] == ["gen", "pass", "out"]
    (m,) = markers(workdir)
    assert m["pid"] != c.jm.proc.pid and m["ppid"] == c.jm.proc.pid
    assert "--build-c-job" in m["argv"]
    assert m["fds"] == "0,1,2", m
    status, resp = c.request("DELETE", f"/jars/{jar}", headers={"Origin": c.url})
    assert status == 200, resp
    assert os.listdir(updir) == []


def test_jar_endpoints_need_the_token(make_cluster, workdir):
    """With rest.auth-token set, upload, plan (GET and POST: it runs the
    job's code), run and delete need it; listing does not. With it, the job
    runs -- its code in the build child and on the TaskManager, never in the
    JobManager."""
    updir = os.path.join(workdir, "uploads")
    c = make_cluster(jm_conf={"web.upload.dir": updir, "rest.auth-token": TOKEN})
    body, mp = multipart(MARKER_JOB)
    for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        status, resp = c.request("POST", "/jars/upload", body, headers=dict(mp, **auth))
        assert status == 401 and "rest.auth-token" in resp["errors"][0], (auth, resp)
    assert os.listdir(updir) == []
    status, resp = c.request("POST", "/jars/upload", body, headers=dict(mp, **AUTH))
    assert status == 200, resp
    jar = os.path.basename(resp["filename"])
    assert [f["id"] for f in c.get("/jars")["files"]] == [jar]  # reading needs no token

    for method, path, data in (("GET", f"/jars/{jar}/plan", None), ("POST", f"/jars/{jar}/plan", {}),
                               ("GET", f"/v1/jars/{jar}/plan?parallelism=1", None),
                               ("POST", f"/jars/{jar}/run", {}), ("DELETE", f"/jars/{jar}", None)):
        status, resp = c.request(method, path, data)
        assert status == 401, (method, path, status, resp)
        assert "Authorization: Bearer <rest.auth-token>" in resp["errors"][0], resp
    assert markers(workdir) == []
    assert c.get("/jobs")["jobs"] == []
    assert os.listdir(updir) == [jar]

    status, resp = c.request("GET", f"/jars/{jar}/plan", headers=AUTH)
    assert status == 200, resp
    c.add_tm(slots=1)
    status, resp = c.request("POST", f"/jars/{jar}/run", {"parallelism": 1}, headers=AUTH)
    assert status == 200, resp
    job = c.wait_state(resp["jobid"], {"FINISHED", "FAILED"})
    assert job["state"] == "FINISHED", c.get(f"/jobs/{resp['jobid']}/exceptions")
    loaded = markers(workdir)
    children = [m for m in loaded if "--build-c-job" in m["argv"]]
    assert len(children) == 2  # the plan's and the run's
    assert all(m["ppid"] == c.jm.proc.pid and m["fds"] == "0,1,2" for m in children), children
    assert {m["pid"] for m in loaded} - {m["pid"] for m in children} == {c.tms[0].proc.pid}
    assert c.jm.proc.pid not in {m["pid"] for m in loaded}
    status, resp = c.request("DELETE", f"/jars/{jar}", headers=AUTH)
    assert status == 200, resp
    assert os.listdir(updir) == []


def test_other_families_refuse_cross_site_requests(make_cluster, workdir):
    """The same cross-site requests against job submission, cancellation and
    savepoints: refused, no job, no cancel, no savepoint."""
    c = make_cluster(jm_conf={"rest.auth-token": TOKEN})
    for what, expected, (status, resp) in cross_site_requests(c, "POST", "/jobs", ENDLESS):
        assert status == expected, (what, status, resp)
    assert c.get("/jobs")["jobs"] == []
    c.add_tm(slots=1)
    status, resp = c.request("POST", "/jobs", ENDLESS, headers=AUTH)
    assert status == 200, resp
    jid = resp["jobid"]
    c.wait_state(jid, "RUNNING")
    for method, path, data in (("PATCH", f"/jobs/{jid}?mode=cancel", None),
                               ("POST", f"/jobs/{jid}/savepoints", {}),
                               ("POST", f"/jobs/{jid}/stop", {})):
        for what, expected, (status, resp) in cross_site_requests(c, method, path, data):
            assert status == expected, (method, path, what, status, resp)
        status, resp = c.request(method, path, data)
        assert status == 401, (method, path, resp)  # same-site, but without the token
    assert c.job(jid)["state"] == "RUNNING"
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["total"] == 0
    status, _ = c.request("PATCH", f"/jobs/{jid}?mode=cancel", headers=dict(AUTH, Origin=c.url))
    assert status == 202
    c.wait_state(jid, "CANCELED")


# ---- the JobManager's own upload directory -----------------------------------------

def test_upload_dir_removed_on_exit_and_stale_ones_swept(make_cluster, workdir):
    """Without web.upload.dir the JobManager stores uploads in
    /tmp/sluice-web-upload-<its pid>: gone after a clean SIGTERM; those of
    JobManagers no longer running are removed at the next start, a live
    process's stays."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"/tmp/sluice-web-upload-{dead.pid}"
    alive = f"/tmp/sluice-web-upload-{os.getpid()}"  # this test's own process: alive
    for d in (stale, alive):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "0" * 32 + "_old.so"), "wb") as f:
            f.write(b"\x7fELF")
    try:
        c = make_cluster()
        own = f"/tmp/sluice-web-upload-{c.jm.proc.pid}"
        assert not os.path.exists(stale)
        assert os.listdir(alive) == ["0" * 32 + "_old.so"]
        assert f"removed {stale}, left by JobManager {dead.pid} (no longer running)" in c.jm.log_text()
        body, mp = multipart(MARKER_JOB)
        status, resp = c.request("POST", "/jars/upload", body, headers=mp)
        assert status == 200 and os.path.dirname(resp["filename"]) == own, resp
        assert c.jm.stop() == 0
        assert not os.path.exists(own)
    finally:
        for d in (stale, alive):
            shutil.rmtree(d, ignore_errors=True)


def test_configured_upload_dir_stays(make_cluster, workdir):
    updir = os.path.join(workdir, "uploads")
    c = make_cluster(jm_conf={"web.upload.dir": updir})
    body, mp = multipart(MARKER_JOB)
    status, resp = c.request("POST", "/jars/upload", body, headers=mp)
    assert status == 200, resp
    assert c.jm.stop() == 0
    assert os.listdir(updir) == [os.path.basename(resp["filename"])]
