"""The files in deploy/ for running without compose: the example multi-host
configuration starts a working cluster (only the addresses, ports and
directories that this one machine needs are overridden with -D), and the
systemd units pass systemd's own verification without a warning."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request

import pytest

from conftest import BIN, ROOT, Daemon, wait_for

DEPLOY = os.path.join(ROOT, "deploy")


def test_example_configuration_makes_a_working_cluster(workdir):
    state = {f"state.{k}.dir": os.path.join(workdir, k) for k in ("checkpoints", "savepoints")}
    local = [f"{k}={v}" for k, v in state.items()]
    jm_args = [os.path.join(BIN, "sluice-jobmanager"), "--config",
               os.path.join(DEPLOY, "conf", "jobmanager.yaml")]
    for kv in local + ["rest.port=0", "jobmanager.rpc.port=0", "rest.bind-address=127.0.0.1",
                       "jobmanager.bind-host=127.0.0.1"]:
        jm_args += ["-D", kv]
    jm = Daemon("jobmanager", jm_args, workdir)
    tm = None
    try:
        m = wait_for(lambda: re.search(r"RPC port (\d+), REST port (\d+)", jm.log_text())
                     or (not jm.alive() and "dead"), what="JobManager start")
        assert m != "dead", "JobManager exited:\n" + jm.log_text()
        rpc, rest = m.group(1), m.group(2)
        tm_args = [os.path.join(BIN, "sluice-taskmanager"), "--config",
                   os.path.join(DEPLOY, "conf", "taskmanager.yaml")]
        for kv in local + ["jobmanager.rpc.address=127.0.0.1", f"jobmanager.rpc.port={rpc}",
                           "taskmanager.data.port=0", "taskmanager.bind-host=127.0.0.1",
                           f"taskmanager.tmp.dirs={workdir}"]:
            tm_args += ["-D", kv]
        tm = Daemon("taskmanager", tm_args, workdir)

        def get(path):
            with urllib.request.urlopen(f"http://127.0.0.1:{rest}{path}", timeout=10) as r:
                return json.loads(r.read())

        tms = wait_for(lambda: get("/taskmanagers")["taskmanagers"] or (not tm.alive() and "dead"),
                       what="the TaskManager to register")
        assert tms != "dead", "TaskManager exited:\n" + tm.log_text()
        assert tms[0]["slotsNumber"] == 4  # from deploy/conf/taskmanager.yaml
        conf = {e["key"]: e["value"] for e in get("/jobmanager/config")}
        assert conf["restart-strategy.type"] == "fixed-delay"  # from deploy/conf/jobmanager.yaml
        assert conf["rest.auth-token"] == "******"
        # the example's token guards mutating calls
        req = urllib.request.Request(f"http://127.0.0.1:{rest}/jobs", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        assert e.value.code == 401
    finally:
        problems = []
        for d in [x for x in (tm, jm) if x]:
            rc = d.stop()
            if rc != 0:
                problems.append(f"{d.name} exited with {rc}:\n{d.log_text()[-2000:]}")
        assert not problems, "\n".join(problems)


def test_systemd_units_verify_cleanly():
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed, so the units cannot be verified here")
    # A private root with the system's unit files, the units and the binaries
    # where the units expect them; nothing outside it is touched.
    root = tempfile.mkdtemp(prefix="sluice-units-")
    try:
        shutil.copytree("/usr/lib/systemd/system", os.path.join(root, "usr/lib/systemd/system"),
                        symlinks=True)
        os.makedirs(os.path.join(root, "opt/sluice/bin"))
        os.makedirs(os.path.join(root, "etc/systemd/system"))
        for b in ("sluice-jobmanager", "sluice-taskmanager"):
            shutil.copy(os.path.join(BIN, b), os.path.join(root, "opt/sluice/bin", b))
            shutil.copy(os.path.join(DEPLOY, "systemd", b + ".service"),
                        os.path.join(root, "etc/systemd/system"))
        r = subprocess.run([analyze, "verify", f"--root={root}", "sluice-jobmanager.service",
                            "sluice-taskmanager.service"], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0 and r.stderr.strip() == "", r.stdout + r.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)
