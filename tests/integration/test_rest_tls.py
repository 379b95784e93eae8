"""REST over HTTPS (security.ssl.rest.enabled, security.ssl.rest.keystore):
the JobManager serves its API and dashboard over TLS with a certificate the
test makes with openssl; a client that trusts that certificate gets Flink's
answers, a plain-HTTP client gets no HTTP answer, and a keystore that is no
PEM file stops the JobManager at start-up with a message naming it."""
import json
import os
import re
import socket
import ssl
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import BIN, Daemon, wait_for


def make_cert(workdir):
    key, crt = os.path.join(workdir, "rest.key"), os.path.join(workdir, "rest.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", crt, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    pem = os.path.join(workdir, "rest.pem")
    with open(pem, "w") as out:
        out.write(open(crt).read() + open(key).read())
    return crt, pem


def start_jm(workdir, keystore):
    args = [os.path.join(BIN, "sluice-jobmanager"), "-D", "rest.port=0", "-D",
            "jobmanager.rpc.port=0", "-D", "security.ssl.rest.enabled=true", "-D",
            f"security.ssl.rest.keystore={keystore}"]
    return Daemon("jobmanager", args, workdir)


def test_rest_over_https(workdir):
    crt, pem = make_cert(workdir)
    jm = start_jm(workdir, pem)
    try:
        m = wait_for(lambda: re.search(r"REST port (\d+) \((https?)://", jm.log_text())
                     or (not jm.alive() and "dead"), what="JobManager start")
        assert m != "dead", jm.log_text()
        port, scheme = int(m.group(1)), m.group(2)
        assert scheme == "https"
        ctx = ssl.create_default_context(cafile=crt)
        with urllib.request.urlopen(f"https://localhost:{port}/overview", context=ctx,
                                    timeout=10) as r:
            ov = json.loads(r.read())
        assert r.status == 200 and ov["taskmanagers"] == 0 and ov["jobs-running"] == 0, ov
        req = urllib.request.Request(f"https://localhost:{port}/jobs/0123/yarn-cancel",
                                     method="GET")
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, context=ctx, timeout=10)
        assert e.value.code == 404
        # a client that does not trust the certificate is refused by the handshake
        with pytest.raises(urllib.error.URLError) as e:
            urllib.request.urlopen(f"https://localhost:{port}/overview",
                                   context=ssl.create_default_context(), timeout=10)
        assert isinstance(e.value.reason, ssl.SSLCertVerificationError), e.value
        # plain HTTP gets no HTTP answer on the TLS port
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"GET /overview HTTP/1.1\r\nHost: localhost\r\n\r\n")
            try:
                got = s.recv(4096)
            except ConnectionResetError:
                got = b""
        assert not got.startswith(b"HTTP/"), got
        assert jm.alive()
    finally:
        assert jm.stop() == 0, jm.log_text()


def test_keystore_that_is_no_pem_stops_the_start(workdir):
    bad = os.path.join(workdir, "bad.pem")
    with open(bad, "w") as f:
        f.write("not a certificate\n")
    jm = start_jm(workdir, bad)
    jm.proc.wait(timeout=30)
    assert jm.proc.returncode != 0
    assert f"security.ssl.rest.keystore {bad}: not a PEM file" in jm.log_text(), jm.log_text()
    jm.stop()
