"""Checkpoints and savepoints on S3 (`s3://bucket/path` directories,
core/store.c through libcurl) against an S3-compatible server on this machine:
moto's server mode from PyPI (scripts/s3_server.py installs it into a venv
once, as the Kafka tests install their broker). What moto does not check --
signatures, keys -- is in docs/S3.md.

- Checkpoints on S3, both backends: _metadata and every state file are
  objects (sizes as _metadata records them); a TaskManager is killed, the job
  restores from the checkpoint on S3 and the committed output is exact; the
  TaskManagers' staging and restore copies are gone afterwards.
- Incremental RocksDB checkpoints on S3: later checkpoints upload less than
  their state; once the job ends, shared/ holds exactly the SST objects the
  retained checkpoints reference; a cancelled job restarted from a retained
  incremental checkpoint at a higher parallelism gives exact output.
- Savepoints on S3, both backends: stop-with-savepoint into s3://, restore
  at another parallelism with exact output, REST shows the s3:// path;
  disposal deletes every object of the savepoint (the bucket is listed);
  paths outside the allowed s3:// roots are refused.
- A hung server (SIGSTOP): checkpoints fail by timeout, and complete again
  once it answers (SIGCONT); the output is exact.
- Cancelled with DELETE_ON_CANCELLATION: no object is left.
- A state file above s3.multipart.part-size: a multipart object on the
  server (ETag "-<parts>", first part of the part size, no open upload),
  restored exactly.
- High availability on S3: high-availability.storageDir and the checkpoints
  are s3:// (no directory shared by the daemons); the leader is killed twice,
  each next leader recovers the job from its graph and checkpoint on S3, the
  output is exact and the finished job's graph is deleted.
- HTTPS with a private CA (s3.ssl.truststore) and virtual-host addressing,
  every request signed and checked by a proxy: checkpoints, a kill, a
  savepoint and a restore at another parallelism, exact; without the CA the
  certificate is refused; an unreadable truststore stops the daemon.
- The server killed during checkpoints: the checkpoint in flight fails with
  the upload's error in the history, the job keeps running, and once the
  server is back a checkpoint completes; the bounded job's output is exact.
"""
import json
import os
import re
import signal
import sys

import pytest

from conftest import ROOT, wait_for
from test_checkpoints import (agg_job, apply_changelog, checkpoints, committed_files,
                              expected_agg, raw_ids, read_metadata, wait_completed)

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import s3_server  # noqa: E402

BUCKET = "sluice-state"


@pytest.fixture(scope="session")
def s3_env():
    try:
        return s3_server.ensure_env()
    except s3_server.InstallError as e:
        pytest.fail(f"cannot install the test S3 server (moto[server] from PyPI): {e}")


@pytest.fixture
def s3(s3_env, workdir):
    srv = s3_server.Server(s3_env["python"], os.path.join(workdir, "moto.log"))
    srv.client().create_bucket(Bucket=BUCKET)
    yield srv
    srv.stop()


def objects(srv, prefix=""):
    """{key: size} of every object under prefix, listed by boto3 (not Sluice)."""
    out = {}
    pages = srv.client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    for page in pages:
        for o in page.get("Contents", []):
            out[o["Key"]] = o["Size"]
    return out


def fetch_metadata(srv, key_dir, workdir):
    """read_metadata of the s3 snapshot directory key_dir (a key prefix)."""
    local = os.path.join(workdir, "md-" + key_dir.replace("/", "_"))
    os.makedirs(local, exist_ok=True)
    srv.client().download_file(BUCKET, key_dir + "/_metadata", os.path.join(local, "_metadata"))
    return read_metadata(local)


def cluster_on_s3(make_cluster, srv, jm_conf, tms=2, slots=2, tm_conf=None):
    c = make_cluster(jm_conf={**srv.conf(), **jm_conf})
    for _ in range(tms):
        c.add_tm(slots=slots, extra={**srv.conf(), **(tm_conf or {})})
    return c


def key_of(url):
    assert url.startswith(f"s3://{BUCKET}/"), url
    return url[len(f"s3://{BUCKET}/"):]


def check_files(srv, key_dir, md):
    """Every file _metadata names is an object: a full state file of the
    recorded size; an incremental one's state file, private files (beside
    it) and shared files (in the job's shared/)."""
    have = objects(srv, key_dir.rsplit("/", 1)[0] + "/")
    shared = key_dir.rsplit("/", 1)[0] + "/shared/"
    n = 0
    for op in md["operators"]:
        for st in op["subtasks"]:
            if not st["file"]:
                continue
            n += 1
            state = f"{key_dir}/{st['file']}"
            assert state in have, (state, sorted(have)[:10])
            if not st["shared_files"] and not st["private_files"]:
                assert have[state] == st["size"], (state, have[state], st)
            for p in st["private_files"]:
                assert f"{key_dir}/{p}" in have, p
            for p in st["shared_files"]:
                assert shared + p in have, p
    assert n, md


def local_leftovers(workdir, skip=()):
    left = []
    for d, _, files in os.walk(workdir):
        if any(f"/sluice-{tm}/" in d + "/" for tm in skip):
            continue
        if "/s3-upload" in d or "/restore-" in d:
            left += [os.path.join(d, f) for f in files]
    return left


def no_local_leftovers(workdir, skip=()):
    """The TaskManagers' staging files and restore copies are removed (a
    restore copy when the TaskManager reaps the ended deployment); skip: ids
    of TaskManagers killed by SIGKILL, which could not clean up."""
    wait_for(lambda: not local_leftovers(workdir, skip), timeout=10, interval=0.2,
             what=f"no staged or restored state files left: {local_leftovers(workdir, skip)[:4]}")


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_checkpoints_and_failover_on_s3(make_cluster, workdir, s3, backend):
    chk = f"s3://{BUCKET}/checkpoints"
    c = cluster_on_s3(make_cluster, s3, {
        "state.checkpoints.dir": chk, "execution.checkpointing.interval": "300 ms",
        # the checkpoint in flight when the TaskManager dies fails: not a second restart
        "execution.checkpointing.tolerable-failed-checkpoints": "10",
        "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "3",
        "restart-strategy.fixed-delay.delay": "200 ms"},
        tm_conf={"state.backend.type": backend, "taskmanager.tmp.dirs": workdir})
    n, keys = 12000, 500
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2)
    wait_for(lambda: committed_files(out) and committed_files(raw), timeout=10,
             what="committed output")
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra={**s3.conf(), "state.backend.type": backend,
                             "taskmanager.tmp.dirs": workdir})
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    cp = checkpoints(c, jid)
    assert cp["counts"]["restored"] == 1, (cp["counts"], [(e.get("exceptionName"), e.get("stacktrace", "")[:300]) for e in c.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]])
    assert cp["latest"]["restored"]["external_path"].startswith(f"{chk}/{jid}/chk-")
    ids = raw_ids(committed_files(raw))
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)
    # the latest checkpoint (which retention keeps) is on S3, every file of it
    latest = cp["latest"]["completed"]
    assert latest["external_path"] == f"{chk}/{jid}/chk-{latest['id']}"
    md = fetch_metadata(s3, key_of(latest["external_path"]), workdir)
    assert md["job_id"] == jid and md["checkpoint_id"] == latest["id"]
    check_files(s3, key_of(latest["external_path"]), md)
    # retention (num-retained 1): one completed checkpoint is left on S3, the
    # latest; those it replaced were deleted object by object
    want = {f"checkpoints/{jid}/chk-{cp['latest']['completed']['id']}/_metadata"}

    def metadata_left():
        return {k for k in objects(s3, f"checkpoints/{jid}/") if k.endswith("/_metadata")}
    wait_for(lambda: metadata_left() == want, timeout=10,
             what=f"only {want} left, not {metadata_left()}, history "
                  f"{[(h['id'], h['status']) for h in checkpoints(c, jid)['history']]}")
    no_local_leftovers(workdir, skip=[c.tms[0].id])


INC = {"state.backend.type": "rocksdb", "execution.checkpointing.incremental": "true"}


def md_shared(srv, key_dir, workdir):
    md = fetch_metadata(srv, key_dir, workdir)
    refs = set()
    for op in md["operators"]:
        for st in op["subtasks"]:
            refs.update(st["shared_files"])
    return md, refs


def test_incremental_checkpoints_on_s3_and_rescale(make_cluster, workdir, s3):
    chk = f"s3://{BUCKET}/inc"
    c = cluster_on_s3(make_cluster, s3, {"state.checkpoints.dir": chk,
                                         "execution.checkpointing.interval": "250 ms",
                                         "state.checkpoints.num-retained": "2"},
                      slots=3, tm_conf={**INC, "taskmanager.tmp.dirs": workdir})
    # every row a new key: the state grows a little per checkpoint
    n = 6000
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, n, rate=1000))
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), n)
    cp = checkpoints(c, jid)
    assert cp["counts"]["completed"] >= 6, cp["counts"]
    done = [h for h in cp["history"] if h["status"] == "COMPLETED"]
    later = [h for h in done if h["checkpointed_size"] < h["state_size"]]
    assert later, [(h["id"], h["checkpointed_size"], h["state_size"]) for h in done]
    # the two retained checkpoints are on S3, and shared/ holds exactly the
    # SST objects they reference (dropped ones took theirs, stopped uploads swept)
    kept = sorted({k.split("/")[2] for k in objects(s3, f"inc/{jid}/")
                   if k.endswith("/_metadata")})
    assert len(kept) == 2, kept
    want = set()
    for d in kept:
        md, refs = md_shared(s3, f"inc/{jid}/{d}", workdir)
        assert refs, d
        check_files(s3, f"inc/{jid}/{d}", md)
        want |= refs
    shared = f"inc/{jid}/shared/"
    wait_for(lambda: {k[len(shared):] for k in objects(s3, shared)} == want, timeout=10,
             what="only referenced SST objects in shared/")
    assert cp["counts"]["completed"] > len(kept)

    # a cancelled job at p=2 restarted from its retained incremental checkpoint at p=3
    n, keys = 12000, 500
    out, raw = os.path.join(workdir, "out2"), os.path.join(workdir, "raw2")
    jid = c.submit(agg_job(out, raw, n, keys, rate=3000, p=2))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    latest = checkpoints(c, jid)["latest"]["completed"]
    path = f"{chk}/{jid}/chk-{latest['id']}"
    assert latest["external_path"] == path
    md, refs = md_shared(s3, key_of(path), workdir)
    assert refs
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    assert 0 < len(raw_ids(run1_raw)) < n
    jf = os.path.join(workdir, "job3.json")
    with open(jf, "w") as f:
        json.dump(agg_job(out, raw, n, keys, rate=3000, p=3), f)
    r = c.cli("run", "-s", path, jf, timeout=90)
    m = re.fullmatch(r"Job has been submitted with JobID ([0-9a-f]{32})\n"
                     r"Job \1 finished with state FINISHED\.\n", r.stdout)
    assert r.returncode == 0 and m, r.stdout + r.stderr
    ids = raw_ids(committed_files(raw))
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    new_out = [p for p in committed_files(out) if p not in run1_out]
    assert apply_changelog(run1_out + new_out) == expected_agg(range(1, n + 1), keys)
    assert {v["parallelism"] for v in c.job(m.group(1))["vertices"]} == {3}
    cp2 = checkpoints(c, m.group(1))
    assert cp2["latest"]["restored"]["external_path"] == path, (
        cp2["counts"], [(h["id"], h.get("failure_message")) for h in cp2["history"] if h["status"] == "FAILED"],
        [e.get("exceptionName") for e in
         c.get(f"/jobs/{m.group(1)}/exceptions")["exceptionHistory"]["entries"]])
    no_local_leftovers(workdir)


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_savepoint_rescale_and_dispose_on_s3(make_cluster, workdir, s3, backend):
    sp_root = f"s3://{BUCKET}/savepoints"
    c = cluster_on_s3(make_cluster, s3, {"execution.checkpointing.interval": "1 h",
                                         "state.savepoints.dir": sp_root},
                      tms=2, slots=2, tm_conf={"state.backend.type": backend,
                                               "taskmanager.tmp.dirs": workdir})
    n, keys = 16000, 20
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jf = os.path.join(workdir, "job.json")
    with open(jf, "w") as f:
        json.dump(agg_job(out, raw, n, keys, rate=4000, p=2), f)
    r = c.cli("run", "-d", jf, check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: c.records_written(jid, "gen") >= n // 4, timeout=20, what="progress")
    # a target outside the allowed s3:// roots is refused before anything runs
    r = c.cli("savepoint", jid, f"s3://{BUCKET}/elsewhere", timeout=60)
    assert r.returncode != 0 and "is not under an s3:// directory" in r.stdout + r.stderr, \
        r.stdout + r.stderr
    r = c.cli("stop", "--savepoint", sp_root + "/", jid, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"Savepoint completed\. Path: (s3://\S+)\n", r.stdout)
    assert m, r.stdout
    sp = m.group(1)
    assert re.fullmatch(rf"{sp_root}/savepoint-{jid[:6]}-[0-9a-f]{{12}}", sp), sp
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=30)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    md = fetch_metadata(s3, key_of(sp), workdir)
    assert md["is_savepoint"] and md["job_id"] == jid
    check_files(s3, key_of(sp), md)
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    ids1 = raw_ids(run1_raw)
    assert 0 < len(ids1) < n
    table1 = apply_changelog(run1_out)
    assert table1 == expected_agg(ids1, keys)

    # `savepoint check` reads the savepoint from S3: every state maps...
    r = c.cli("savepoint", "check", sp, jf, "-p", "3")
    assert r.returncode == 0 and r.stdout.startswith(
        f"Savepoint {sp} (checkpoint {md['checkpoint_id']}, maxParallelism 128)\n"), r.stdout + r.stderr
    assert "uid 'agg' (group_aggregate, keyed, 2 -> 3 subtasks" in r.stdout, r.stdout
    # ...and a damaged object is found (one byte of a state file flipped, then put back)
    victim = f"{key_of(sp)}/agg-0.state"
    good = s3.client().get_object(Bucket=BUCKET, Key=victim)["Body"].read()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF
    s3.client().put_object(Bucket=BUCKET, Key=victim, Body=bytes(bad))
    r = c.cli("savepoint", "check", sp, jf)
    assert r.returncode != 0 and "agg-0.state" in r.stdout + r.stderr and "damaged" in r.stdout + r.stderr, \
        r.stdout + r.stderr
    s3.client().put_object(Bucket=BUCKET, Key=victim, Body=good)

    # restore at p=3
    r = c.cli("run", "-s", sp, "-p", "3", jf, timeout=90)
    m = re.fullmatch(r"Job has been submitted with JobID ([0-9a-f]{32})\n"
                     r"Job \1 finished with state FINISHED\.\n", r.stdout)
    assert r.returncode == 0 and m, r.stdout + r.stderr
    jid2 = m.group(1)
    assert {v["parallelism"] for v in c.job(jid2)["vertices"]} == {3}
    cp = checkpoints(c, jid2)
    assert cp["latest"]["restored"]["external_path"] == sp and cp["latest"]["restored"]["is_savepoint"]
    ids = raw_ids(run1_raw + [p for p in committed_files(raw) if p not in run1_raw])
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    table = apply_changelog([p for p in committed_files(out) if p not in run1_out], dict(table1))
    assert table == expected_agg(range(1, n + 1), keys)
    no_local_leftovers(workdir)
    # each TaskManager fetched only the subtask states its subtasks read: the
    # job's two file sinks and its source deal operator state round-robin
    # (old subtask k to new subtask k % 3), so neither fetched all of them
    fetched = [re.findall(rf"Job {jid2}: fetched the files of (\d+) of the (\d+) subtask states",
                          tm.log_text()) for tm in c.tms]
    assert all(len(f) == 1 for f in fetched), fetched
    assert all(0 < int(f[0][0]) < int(f[0][1]) for f in fetched), fetched

    # disposal deletes every object of the savepoint and nothing else
    assert objects(s3, key_of(sp) + "/")
    other = f"s3://{BUCKET}/savepoints/not-a-savepoint"
    s3.client().put_object(Bucket=BUCKET, Key=key_of(other) + "/notes.txt", Body=b"x")
    r = c.cli("savepoint", "-d", other)
    assert r.returncode != 0 and "no _metadata" in r.stdout + r.stderr, r.stdout + r.stderr
    r = c.cli("savepoint", "-d", sp)
    assert (r.returncode, r.stdout) == (0, f"Disposing savepoint '{sp}'.\nSavepoint '{sp}' disposed.\n"), \
        r.stdout + r.stderr
    assert objects(s3, key_of(sp) + "/") == {}
    assert list(objects(s3)) == [key_of(other) + "/notes.txt"]
    r = c.cli("run", "-d", "-s", sp, jf)
    assert r.returncode != 0 and "does not exist" in r.stdout + r.stderr, r.stdout + r.stderr


def test_server_killed_mid_checkpoint(make_cluster, workdir, s3):
    chk = f"s3://{BUCKET}/chk"
    c = cluster_on_s3(make_cluster, s3, {
        "state.checkpoints.dir": chk, "execution.checkpointing.interval": "100 ms",
        "execution.checkpointing.tolerable-failed-checkpoints": "1000",
        "execution.checkpointing.timeout": "20 s"},
        tms=1, slots=2, tm_conf={"taskmanager.tmp.dirs": workdir})
    # many keys: each checkpoint uploads a few MB, so a kill lands in an upload
    n, keys = 400_000, 200_000
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=40_000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_for(lambda: c.records_written(jid, "gen") >= 100_000, timeout=60, what="state to grow")
    wait_completed(c, jid, 2)

    def in_flight():
        h = checkpoints(c, jid)["history"]
        return next((x["id"] for x in h if x["status"] == "IN_PROGRESS"), None)
    cid = wait_for(in_flight, timeout=20, what="a checkpoint in progress")
    s3.kill()

    def entry():
        h = [x for x in checkpoints(c, jid)["history"] if x["id"] == cid]
        return h and h[0]["status"] != "IN_PROGRESS" and h[0]
    e = wait_for(entry, timeout=30, what=f"checkpoint {cid} to end")
    # the checkpoint in flight failed, with the upload's error as its reason
    assert e["status"] == "FAILED", e
    msg = e["failure_message"]
    assert re.search(rf"(uploading|reading|looking up) {re.escape(chk)}/{jid}/chk-{cid}/\S+ at "
                     rf"127\.0\.0\.1:{s3.port}: ", msg), msg
    failed = checkpoints(c, jid)
    assert c.job(jid)["state"] == "RUNNING"
    # back (empty: moto keeps nothing), and the next checkpoint completes
    s3.start()
    s3.client().create_bucket(Bucket=BUCKET)
    completed = failed["counts"]["completed"]
    after = wait_for(lambda: (lambda cp: cp["counts"]["completed"] > completed and cp)(
        checkpoints(c, jid)), timeout=60, what="a checkpoint completed after the restart")
    latest = after["latest"]["completed"]
    md = fetch_metadata(s3, key_of(latest["external_path"]), workdir)
    check_files(s3, key_of(latest["external_path"]), md)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=120)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    ids = raw_ids(committed_files(raw))
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)
    no_local_leftovers(workdir)


def test_cancel_without_retention_deletes_every_object(make_cluster, workdir, s3):
    chk = f"s3://{BUCKET}/drop"
    c = cluster_on_s3(make_cluster, s3, {
        "state.checkpoints.dir": chk, "execution.checkpointing.interval": "200 ms",
        "execution.checkpointing.externalized-checkpoint-retention": "DELETE_ON_CANCELLATION"},
        tms=1, slots=2, tm_conf={**INC, "taskmanager.tmp.dirs": workdir})
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, 100_000, 1000, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 3)
    have = objects(s3, f"drop/{jid}/")
    assert any("/shared/" in k for k in have) and any(k.endswith("/_metadata") for k in have), have
    c.cli("cancel", jid, check=True)
    c.wait_state(jid, "CANCELED", timeout=20)
    wait_for(lambda: objects(s3, f"drop/{jid}/") == {}, timeout=10,
             what=f"no object left under drop/{jid}/ (have {sorted(objects(s3, f'drop/{jid}/'))[:5]})")


def test_hung_server_times_checkpoints_out_then_recovers(make_cluster, workdir, s3):
    """A server that stops answering (SIGSTOP: connections stay open) holds
    the snapshot writer; the checkpoint is failed by the coordinator's
    timeout, not waited for, and once the server answers again the held
    requests go through and checkpoints complete."""
    chk = f"s3://{BUCKET}/hung"
    c = cluster_on_s3(make_cluster, s3, {
        "state.checkpoints.dir": chk, "execution.checkpointing.interval": "200 ms",
        "execution.checkpointing.timeout": "3 s",
        "execution.checkpointing.tolerable-failed-checkpoints": "1000"},
        tms=1, slots=2, tm_conf={"taskmanager.tmp.dirs": workdir})
    n, keys = 60_000, 1000
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=3000))
    c.wait_state(jid, "RUNNING", timeout=20)
    before = wait_completed(c, jid, 2)["counts"]
    s3.pause()
    try:
        failed = wait_for(lambda: (lambda cp: cp["counts"]["failed"] > before["failed"] and cp)(
            checkpoints(c, jid)), timeout=30, what="a checkpoint failed while the server hangs")
        assert c.job(jid)["state"] == "RUNNING"
    finally:
        s3.resume()
    done = failed["counts"]["completed"]
    wait_for(lambda: checkpoints(c, jid)["counts"]["completed"] > done, timeout=60,
             what="a checkpoint completed after the server answered again")
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=90)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    ids = raw_ids(committed_files(raw))
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    assert apply_changelog(committed_files(out)) == expected_agg(range(1, n + 1), keys)


class SigningProxy:
    """An HTTP proxy in front of moto that checks each request's AWS
    signature version 4 with botocore's own signer (S3SigV4Auth), which moto
    does not, and refuses a bad one with 403 SignatureDoesNotMatch as S3
    would. counts: {method: requests}; bad: the ones refused."""

    def __init__(self, upstream_port, key, secret, region, tls=None):
        """tls: (certificate file, key file) to serve HTTPS. A request for
        virtual-host style `<bucket>.localhost` is checked as sent and passed
        to moto path-style; vhosts counts them."""
        import http.client
        import ssl
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        proxy = self
        self.counts, self.bad, self.vhosts = {}, [], 0
        auth = S3SigV4Auth(Credentials(key, secret), "s3", region)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle_one(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n) if n else b""
                given = self.headers.get("Authorization", "")
                signed = given.partition("SignedHeaders=")[2].partition(",")[0].split(";")
                scheme = "https" if tls else "http"
                req = AWSRequest(method=self.command, url=f"{scheme}://{self.headers['Host']}{self.path}",
                                 headers={k: v for k, v in self.headers.items() if k.lower() in signed})
                req.context["timestamp"] = self.headers.get("X-Amz-Date", "")
                want = auth.signature(auth.string_to_sign(req, auth.canonical_request(req)), req)
                proxy.counts[self.command] = proxy.counts.get(self.command, 0) + 1
                if given.partition("Signature=")[2] != want or f"/{region}/s3/" not in given:
                    proxy.bad.append(f"{self.command} {self.path}")
                    out = b"<Error><Code>SignatureDoesNotMatch</Code><Message>checked by the test</Message></Error>"
                    self.send_response(403)
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                    return
                conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
                hd = {k: v for k, v in self.headers.items()
                      if k.lower() not in ("expect", "connection", "host")}
                path = self.path
                host = self.headers.get("Host", "")
                if host.startswith(f"{BUCKET}.localhost"):  # virtual-host style
                    proxy.vhosts += 1
                    path = f"/{BUCKET}{path}"
                conn.request(self.command, path, body=body if n else None, headers=hd)
                r = conn.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding", "server", "date"):
                        self.send_header(k, v)
                self.send_header("Content-Length", r.getheader("Content-Length", str(len(data)))
                                 if self.command == "HEAD" else str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_one

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def test_multipart_savepoint_and_restore(make_cluster, workdir, s3, request):
    """Requests signed for region eu-central-1 and checked by SigningProxy.
    A state file larger than s3.multipart.part-size is uploaded in parts:
    on the server it is one object whose ETag says how many parts made it
    (S3's "<md5 of the parts' md5s>-<parts>"), its first part has the
    configured size, no upload is left open, `savepoint check` reads it and a
    restore from it gives exact output."""
    part = 5 << 20  # S3's smallest part size
    sp_root = f"s3://{BUCKET}/big"
    conf = s3.conf()
    proxy = SigningProxy(s3.port, conf["s3.access-key"], conf["s3.secret-key"], "eu-central-1")
    request.addfinalizer(proxy.stop)
    # the check can fail: a request signed with another secret is refused
    import boto3
    import botocore.exceptions
    wrong = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{proxy.port}", region_name="eu-central-1",
                         aws_access_key_id=conf["s3.access-key"], aws_secret_access_key="not-the-secret")
    with pytest.raises(botocore.exceptions.ClientError, match="SignatureDoesNotMatch"):
        wrong.put_object(Bucket=BUCKET, Key="x", Body=b"x")
    assert proxy.bad == ["PUT /sluice-state/x"], proxy.bad
    proxy.bad.clear()
    signed = {**conf, "s3.endpoint": f"http://127.0.0.1:{proxy.port}", "s3.region": "eu-central-1"}
    c = make_cluster(jm_conf={**signed, "execution.checkpointing.interval": "1 h",
                              "state.savepoints.dir": sp_root})
    c.add_tm(slots=1, extra={**signed, "state.backend.type": "hashmap",
                             "s3.multipart.part-size": "5mb", "taskmanager.tmp.dirs": workdir})
    # every id its own key: the aggregate's state grows with every row
    n = 900_000
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jf = os.path.join(workdir, "job.json")
    with open(jf, "w") as f:
        json.dump(agg_job(out, raw, n, n, rate=100_000, p=1), f)
    r = c.cli("run", "-d", jf, check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    c.wait_state(jid, "RUNNING", timeout=20)
    # 400,000 keys: about 14 MB of state, three parts or more
    wait_for(lambda: c.records_written(jid, "gen") >= 400_000, timeout=60, what="progress")
    r = c.cli("stop", "--savepoint", sp_root, jid, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (s3://\S+)\n", r.stdout).group(1)
    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=30)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    md = fetch_metadata(s3, key_of(sp), workdir)
    check_files(s3, key_of(sp), md)
    key = f"{key_of(sp)}/agg-0.state"
    head = s3.client().head_object(Bucket=BUCKET, Key=key)
    size = head["ContentLength"]
    parts = -(-size // part)
    assert parts >= 3, size
    assert head["ETag"].strip('"').endswith(f"-{parts}"), (head["ETag"], size)
    first = s3.client().head_object(Bucket=BUCKET, Key=key, PartNumber=1)
    assert first["ContentLength"] == part and first.get("PartsCount") == parts, first
    assert not s3.client().list_multipart_uploads(Bucket=BUCKET).get("Uploads"), "an upload left open"
    # small files stay single PUTs (no part count in the ETag)
    assert "-" not in s3.client().head_object(Bucket=BUCKET, Key=f"{key_of(sp)}/_metadata")["ETag"]
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    ids1 = raw_ids(run1_raw)
    table1 = apply_changelog(run1_out)
    assert table1 == expected_agg(ids1, n)

    r = c.cli("savepoint", "check", sp, jf)
    assert r.returncode == 0, r.stdout + r.stderr
    r = c.cli("run", "-s", sp, jf, timeout=120)
    m = re.fullmatch(r"Job has been submitted with JobID ([0-9a-f]{32})\n"
                     r"Job \1 finished with state FINISHED\.\n", r.stdout)
    assert r.returncode == 0 and m, r.stdout + r.stderr
    assert checkpoints(c, m.group(1))["latest"]["restored"]["external_path"] == sp
    ids = raw_ids(run1_raw + [p for p in committed_files(raw) if p not in run1_raw])
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    table = apply_changelog([p for p in committed_files(out) if p not in run1_out], dict(table1))
    assert table == expected_agg(range(1, n + 1), n)
    no_local_leftovers(workdir)
    # every request went through the signature check, and each kind was made
    assert not proxy.bad, proxy.bad[:5]
    assert {"PUT", "POST", "GET"} <= set(proxy.counts), proxy.counts


def test_high_availability_store_on_s3(workdir, s3):
    """high-availability.storageDir and the checkpoints on S3, no shared
    directory between the daemons: the submitted job's graph is an object,
    the leading JobManager is SIGKILLed twice and each next leader recovers
    the job from S3 (its graph and its latest checkpoint), the output is
    exact, and the finished job's graph is deleted from S3."""
    from test_ha import HACluster, check_exact, kill_leader_and_wait, submit
    from zk_ensemble import Ensemble, available
    if available() is not None:
        pytest.fail(f"ZooKeeper is needed for this test: {available()}")
    zk = Ensemble(workdir, n=1)
    c = None
    try:
        c = HACluster(workdir, zk, njm=0, ntm=0, jm_conf={
            **s3.conf(), "state.checkpoints.dir": f"s3://{BUCKET}/chk",
            "execution.checkpointing.tolerable-failed-checkpoints": "10"})
        c.ha.update({**s3.conf(), "high-availability.storageDir": f"s3://{BUCKET}/ha"})
        for _ in range(2):
            c.start_jm()
        for _ in range(2):
            c.add_tm(2)
        n, keys = 9000, 300
        out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
        jid = submit(c, agg_job(out, raw, n, keys, rate=1500))
        graph = f"ha/test-cluster/submittedJobGraph-{jid}.json"
        assert graph in objects(s3, "ha/"), objects(s3, "ha/")
        assert not os.path.exists(os.path.join(workdir, "ha")), "the HA store went to a local directory"
        for _ in range(2):
            kill_leader_and_wait(c, jid)
        leader = c.leader()
        assert c.wait_state(jid, ["FINISHED", "FAILED"], leader, timeout=120) == "FINISHED", \
            c.get(f"/jobs/{jid}/exceptions", leader)
        restored = c.get(f"/jobs/{jid}/checkpoints", leader)["latest"]["restored"]
        assert restored and restored["external_path"].startswith(f"s3://{BUCKET}/chk/{jid}/chk-"), restored
        check_exact(out, raw, n, keys)
        wait_for(lambda: graph not in objects(s3, "ha/"), timeout=20,
                 what=f"the finished job's graph removed from S3: {sorted(objects(s3, 'ha/'))}")
    finally:
        problems = c.shutdown() if c else []
        zk.stop()
    assert not problems, "\n".join(problems)


def test_https_endpoint_with_virtual_host_addressing(make_cluster, workdir, s3, request):
    """s3.endpoint https:// with a private CA (s3.ssl.truststore) and
    virtual-host style buckets (s3.path.style.access false: requests go to
    https://<bucket>.localhost:<port>/<key>), signed for eu-central-1 and
    every signature checked: checkpoints, a TaskManager kill, a savepoint
    and a restore from it, exact output. Without the CA the certificate is
    refused with curl's words; a truststore that cannot be read stops the
    daemon at start."""
    from test_cluster_tls import make_ca, make_node
    ca = make_ca(workdir, "s3-ca")
    server = make_node(workdir, "s3-ca", "s3-server", hosts=("localhost", f"{BUCKET}.localhost"))
    conf = s3.conf()
    proxy = SigningProxy(s3.port, conf["s3.access-key"], conf["s3.secret-key"], "eu-central-1",
                         tls=(server, None))
    request.addfinalizer(proxy.stop)
    tls = {**conf, "s3.endpoint": f"https://localhost:{proxy.port}", "s3.region": "eu-central-1",
           "s3.path.style.access": "false", "s3.ssl.truststore": ca}
    chk, sp_root = f"s3://{BUCKET}/tls-chk", f"s3://{BUCKET}/tls-sp"
    c = make_cluster(jm_conf={**tls, "state.checkpoints.dir": chk, "state.savepoints.dir": sp_root,
                              "execution.checkpointing.interval": "300 ms",
                              "execution.checkpointing.tolerable-failed-checkpoints": "10",
                              "restart-strategy.type": "fixed-delay",
                              "restart-strategy.fixed-delay.attempts": "3",
                              "restart-strategy.fixed-delay.delay": "200 ms"})
    for _ in range(2):
        c.add_tm(slots=2, extra={**tls, "taskmanager.tmp.dirs": workdir})
    n, keys = 12000, 100
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jf = os.path.join(workdir, "job.json")
    with open(jf, "w") as f:
        json.dump(agg_job(out, raw, n, keys, rate=2000, p=2), f)
    jid = re.search(r"JobID ([0-9a-f]{32})", c.cli("run", "-d", jf, check=True).stdout).group(1)
    c.wait_state(jid, "RUNNING", timeout=20)
    wait_completed(c, jid, 2)
    c.tms[0].kill(signal.SIGKILL)
    c.add_tm(slots=2, extra={**tls, "taskmanager.tmp.dirs": workdir})
    wait_for(lambda: checkpoints(c, jid)["counts"]["restored"] >= 1, timeout=60, what="the restore")
    wait_completed(c, jid, checkpoints(c, jid)["counts"]["completed"] + 1)
    r = c.cli("stop", "--savepoint", sp_root, jid, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    sp = re.search(r"Savepoint completed\. Path: (s3://\S+)\n", r.stdout).group(1)
    assert c.wait_state(jid, ["FINISHED", "FAILED"], timeout=30)["state"] == "FINISHED"
    assert checkpoints(c, jid)["latest"]["restored"]["external_path"].startswith(f"{chk}/{jid}/chk-")
    run1_out, run1_raw = committed_files(out), committed_files(raw)
    table1 = apply_changelog(run1_out)
    assert table1 == expected_agg(raw_ids(run1_raw), keys)
    r = c.cli("run", "-s", sp, "-p", "3", jf, timeout=90)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    ids = raw_ids(run1_raw + [p for p in committed_files(raw) if p not in run1_raw])
    assert sorted(ids) == list(range(1, n + 1)) and set(ids.values()) == {1}
    table = apply_changelog([p for p in committed_files(out) if p not in run1_out], dict(table1))
    assert table == expected_agg(range(1, n + 1), keys)
    # every request virtual-host style, over TLS, correctly signed
    assert not proxy.bad and proxy.vhosts == sum(proxy.counts.values()) > 0, (proxy.bad, proxy.counts)
    md = fetch_metadata(s3, key_of(sp), workdir)
    check_files(s3, key_of(sp), md)

    # without the private CA: the server's certificate is refused, by name
    c2 = make_cluster(jm_conf={**{k: v for k, v in tls.items() if k != "s3.ssl.truststore"},
                               "state.savepoints.dir": sp_root})
    r = c2.cli("savepoint", "check", sp, jf)
    assert r.returncode != 0 and "certificate" in (r.stdout + r.stderr).lower(), r.stdout + r.stderr
    # an unreadable truststore stops the daemon with the option's name
    from conftest import BIN
    import subprocess
    bad = subprocess.run([os.path.join(BIN, "sluice-jobmanager"), "-D", "rest.port=0",
                          "-D", "jobmanager.rpc.port=0", "-D", "s3.ssl.truststore=/nonexistent/ca.pem"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode != 0 and "s3.ssl.truststore: cannot read /nonexistent/ca.pem" in bad.stderr, \
        bad.stderr
