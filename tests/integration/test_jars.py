"""The jar API with C jobs (jobmanager/jars.c): POST /jars/upload (multipart),
GET /jars, GET /jars/:id/plan, POST /jars/:id/run, DELETE /jars/:id.

The SilenceDetector is uploaded and run over REST; its GAPs are compared
with test_datastream's replay. The TaskManager gets the object from the
deployment (it plans "library": "jar:<id>" and writes its own copy under
its taskmanager.tmp.dirs, never reading the JobManager's upload directory).
Hostile file names stay names inside web.upload.dir; an upload over
web.upload.max-size is refused and leaves nothing behind; an entry point
that crashes, fails or names a function built for another ABI gets a clear
error while the JobManager carries on."""
import glob
import os
import re
import urllib.request
import uuid

from conftest import BUILD, wait_for
from test_datastream import JOB as SILENCE, ms, read, replay

BAD = os.path.join(BUILD, "plugins", "bad_jobs.so")


def upload(c, data, filename, field="jarfile"):
    """A multipart/form-data POST built by hand, so the file name can be
    anything (raw bytes: a NUL, ../, 300 characters)."""
    boundary = uuid.uuid4().hex
    fn = filename if isinstance(filename, bytes) else filename.encode()
    body = (b"--" + boundary.encode() + b"\r\n"
            b'Content-Disposition: form-data; name="' + field.encode() + b'"; filename="' + fn + b'"\r\n'
            b"Content-Type: application/x-sharedlib\r\n\r\n" + data + b"\r\n"
            b"--" + boundary.encode() + b"--\r\n")
    return c.request("POST", "/jars/upload", body,
                     {"Content-Type": f"multipart/form-data; boundary={boundary}"})


def upload_file(c, path, name=None):
    with open(path, "rb") as f:
        status, body = upload(c, f.read(), name or os.path.basename(path))
    assert status == 200, body
    assert body["status"] == "success"
    return os.path.basename(body["filename"]), body["filename"]


def jar_conf(workdir, **extra):
    conf = {"web.upload.dir": os.path.join(workdir, "uploads")}
    conf.update(extra)
    return conf


def test_upload_list_plan_run_delete(make_cluster, workdir):
    c = make_cluster(jm_conf=jar_conf(workdir))
    tmp = os.path.join(workdir, "tm-tmp")
    os.makedirs(tmp)
    c.add_tm(slots=2, extra={"taskmanager.tmp.dirs": tmp})
    jid_, path = upload_file(c, SILENCE)
    assert re.fullmatch(r"[0-9a-f]{32}_silence\.so", jid_)
    assert path == os.path.join(workdir, "uploads", jid_)
    files = c.get("/jars")["files"]
    assert [(f["id"], f["name"]) for f in files] == [(jid_, "silence.so")]
    assert files[0]["entry"] == [{"name": "sluice_job_main", "description": None}]

    out = os.path.join(workdir, "out")
    plan = c.get(f"/jars/{jid_}/plan?programArg={out}%203000")["plan"]
    assert [n["id"] for n in plan["nodes"]] == ["gen", "events", "silence", "wm", "detector", "gaps",
                                                  "ooo", "late_rows"]
    det = [n for n in plan["nodes"] if n["id"] == "detector"][0]
    assert det["operator"] == "keyed_process" and det["parallelism"] == 2
    assert det["inputs"][0]["ship_strategy"] == "HASH"

    status, body = c.request("POST", f"/jars/{jid_}/run",
                             {"programArgsList": [out, "3000"], "parallelism": 2})
    assert status == 200, body
    job = c.wait_state(body["jobid"], {"FINISHED", "FAILED"}, timeout=120)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{body['jobid']}/exceptions")
    gaps, _, _ = replay(3000)
    assert sorted((g["sensor"], ms(g["deadline"])) for g in read(out, "gaps")) == sorted(gaps)
    # the TaskManager loaded its own copy, shipped with the deployment
    shipped = glob.glob(os.path.join(tmp, "sluice-*", "jars", jid_))
    assert len(shipped) == 1
    with open(SILENCE, "rb") as a, open(shipped[0], "rb") as b:
        assert a.read() == b.read()

    status, _ = c.request("DELETE", f"/jars/{jid_}")
    assert status == 200
    assert c.get("/jars")["files"] == []
    assert not os.path.exists(path)
    status, body = c.request("POST", f"/jars/{jid_}/run", {})
    assert status == 404 and "does not exist" in body["errors"][0]


def test_hostile_names_and_oversize(make_cluster, workdir):
    c = make_cluster(jm_conf=jar_conf(workdir, **{"web.upload.max-size": "64kb"}))
    updir = os.path.join(workdir, "uploads")
    elf = b"\x7fELF" + b"\0" * 1000
    names = [b"../../../../tmp/evil.so", b"..%2f..%2fx.so", b"a/b/../../c.so",
             b"x" * 300 + b".so", b"sub\\..\\win.so", b".hidden.so"]
    for name in names:
        status, body = upload(c, elf, name)
        assert status == 200, (name, body)
        fid = os.path.basename(body["filename"])
        assert os.path.dirname(body["filename"]) == updir
        assert re.fullmatch(r"[0-9a-f]{32}_[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}", fid), fid
        assert fid.endswith(".so")
    assert not os.path.exists("/tmp/evil.so")
    ids = [f["id"] for f in c.get("/jars")["files"]]
    assert len(ids) == len(names)
    assert sorted(os.listdir(updir)) == sorted(ids)  # nothing anywhere else, no temporary files
    # a NUL in the part's header: libmicrohttpd's parser sees no file there
    status, body = upload(c, elf, b"../evil\x00/../../x.so")
    assert status == 400 and body["errors"] == ["Exactly 1 file must be sent, received 0."]
    status, body = upload(c, elf, "evil.jar")
    assert status == 400 and body["errors"] == ["Only shared objects (.so) are allowed."]
    status, body = upload(c, b"not an object", "plain.so")
    assert status == 400 and "no ELF header" in body["errors"][0]
    # over web.upload.max-size: refused, nothing kept
    status, body = upload(c, b"\x7fELF" + b"\0" * (70 << 10), "big.so")
    assert status == 413 and "web.upload.max-size (65536 bytes)" in body["errors"][0]
    assert sorted(os.listdir(updir)) == sorted(ids)
    # a form is no upload: refused on its headers (the REST guard), nothing kept
    status, body = c.request("POST", "/jars/upload", b"x=1", {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 415, body
    assert body["errors"] == ["a POST must send Content-Type: application/json or multipart/form-data "
                              "(got 'application/x-www-form-urlencoded')"]
    assert sorted(os.listdir(updir)) == sorted(ids)


def test_bad_entry_points(make_cluster, workdir):
    c = make_cluster(jm_conf=jar_conf(workdir))
    fid, _ = upload_file(c, BAD)
    status, body = c.request("POST", f"/jars/{fid}/run", {"entryClass": "crash_main"})
    assert status == 400
    assert body["errors"] == ["the entry point of bad_jobs.so crashed: signal 11 (Segmentation fault)"]
    status, body = c.request("POST", f"/jars/{fid}/run", {"entryClass": "old_abi_main"})
    assert status == 400
    assert body["errors"] == ["'old_abi_fn' in bad_jobs.so was built for DataStream ABI 1, this Sluice has 2"]
    status, body = c.request("POST", f"/jars/{fid}/run", {"entryClass": "failing_main"})
    assert status == 400 and body["errors"] == ["bad_jobs.so: failing_main() returned 7"]
    status, body = c.request("POST", f"/jars/{fid}/run", {"entryClass": "no_such_main"})
    assert status == 400 and body["errors"] == ["bad_jobs.so has no no_such_main() (is it a Sluice C job?)"]
    assert c.jm.alive()
    assert c.get("/overview")["jobs-failed"] == 0


def test_hanging_entry_point_is_killed(make_cluster, workdir):
    """An entry point that never returns: the child is killed after
    web.submit.build.timeout (3 s here) with an error saying so, and the
    JobManager answers other requests all the while (the run waits on one
    REST thread)."""
    import threading
    c = make_cluster(jm_conf=jar_conf(workdir, **{"web.submit.build.timeout": "2500 ms"}))
    fid, _ = upload_file(c, BAD)
    answer = {}
    t = threading.Thread(target=lambda: answer.update(
        r=c.request("POST", f"/jars/{fid}/run", {"entryClass": "hang_main"}, timeout=90)))
    t.start()
    wait_for(lambda: any(_child_of(p, c.jm.proc.pid) for p in os.listdir("/proc") if p.isdigit()),
             timeout=10, what="the JobManager's child building the graph")
    assert c.get("/overview")["jobs-running"] == 0  # served while the child hangs
    t.join(timeout=90)
    status, body = answer["r"]
    assert status == 400
    assert body["errors"] == ["the entry point of bad_jobs.so did not return within 3 s "
                              "(web.submit.build.timeout; the process was killed)"]
    assert c.jm.alive()


def _child_of(pid, parent):
    """Is /proc/pid a --build-c-job child of process `parent`?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        with open(f"/proc/{pid}/cmdline") as f:
            return ppid == parent and "--build-c-job" in f.read().split("\0")
    except (OSError, ValueError, IndexError):
        return False


def test_submit_disabled(make_cluster, workdir):
    c = make_cluster(jm_conf=jar_conf(workdir, **{"web.submit.enable": "false"}))
    status, body = upload(c, b"\x7fELF", "x.so")
    assert status == 404 and "web.submit.enable: false" in body["errors"][0]
    status, body = c.request("GET", "/jars")
    assert status == 404


def test_upload_needs_the_token(make_cluster, workdir):
    c = make_cluster(jm_conf=jar_conf(workdir, **{"rest.auth-token": "s3cret"}))
    status, body = upload(c, b"\x7fELF" + b"\0" * 100, "x.so")
    assert status == 401 and "rest.auth-token" in body["errors"][0]
    assert os.listdir(os.path.join(workdir, "uploads")) == []  # not even a temporary file
    assert c.get("/jars")["files"] == []  # reading needs no token


def test_hybrid_job_over_rest(make_cluster, workdir):
    """The hybrid pipeline (C parser -> SQL TUMBLE -> C detector) built in the
    JobManager's child process from an upload: the SQL planner runs there
    too, and the job computes exactly test_datastream's windows."""
    from test_datastream import HYBRID, hybrid_expected, hybrid_rows
    c = make_cluster(jm_conf=jar_conf(workdir))
    c.add_tm(slots=4)
    jid_, _ = upload_file(c, HYBRID)
    out = os.path.join(workdir, "out")
    status, body = c.request("POST", f"/jars/{jid_}/run", {"programArgsList": [out, "1000"]})
    assert status == 200, body
    job = c.wait_state(body["jobid"], {"FINISHED", "FAILED"}, timeout=120)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{body['jobid']}/exceptions")
    assert hybrid_rows(out) == hybrid_expected(1000)


MARKER = os.path.join(BUILD, "plugins", "load_marker.so")
SANITIZED = "san" in os.path.basename(BUILD.rstrip("/"))


def test_build_child_limits(make_cluster, workdir):
    """The child that runs an entry point has a CPU-time limit
    (web.submit.build.cpu-time) and an address-space limit
    (web.submit.build.memory): an entry point that spins is killed after its
    second of CPU, not after the 30 s wall-clock timeout; one that asks for
    more memory than the limit does not get it."""
    import time
    c = make_cluster(jm_conf=jar_conf(workdir, **{"web.submit.build.cpu-time": "1 s",
                                                  "web.submit.build.memory": "512 mb"}))
    fid, _ = upload_file(c, MARKER)
    t0 = time.monotonic()
    status, body = c.request("POST", f"/jars/{fid}/plan", {"entryClass": "burn_main"})
    took = time.monotonic() - t0
    assert status == 400
    assert body["errors"] == ["the entry point of load_marker.so used more than 1 s of CPU time "
                              "(web.submit.build.cpu-time; the process was killed)"]
    assert took < 15, took
    if not SANITIZED:  # AddressSanitizer's shadow memory cannot live under RLIMIT_AS
        status, body = c.request("POST", f"/jars/{fid}/plan", {"entryClass": "hog_main"})
        assert status == 400 and body["errors"] == ["load_marker.so: hog_main() returned 3"], body
    # within the limits the same object plans
    status, body = c.request("POST", f"/jars/{fid}/plan", {})
    assert status == 200, body
    assert c.jm.alive()
