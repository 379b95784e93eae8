"""Mutual TLS on the cluster's internal connections (security.ssl.internal.*,
core/tls.h), with a CA and certificates the test makes with the openssl
command line.

- JobManager and two TaskManagers, each with its own certificate from the
  test's CA, run a job across both TaskManagers (RPC and data connections
  over TLS) with exact output.
- A plain-TCP peer speaking the HELLO frame to the RPC port or a data
  port gets nowhere: the handshake fails, it never registers, the failure
  is logged; a TaskManager whose certificate comes from another CA is
  refused the same way. The job never restarts.
"""
import os
import socket
import subprocess

from conftest import wait_for
from test_checkpoints import agg_job
from test_cluster_auth import closed_by_peer, data_hello, hello, register
from test_faults import exact_output


def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stderr)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}",
            cwd=d)
    return os.path.join(d, f"{name}.pem")


def make_node(d, ca, name, hosts=()):
    """A PEM keystore (certificate then key) signed by ca; hosts: the DNS
    names and IP addresses a server's certificate is for."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
    ext = []
    if hosts:
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write("subjectAltName=" + ",".join(
                ("IP:" if h.replace(".", "").isdigit() else "DNS:") + h for h in hosts) + "\n")
        ext = ["-extfile", f"{name}.ext"]
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", *ext, cwd=d)
    ks = os.path.join(d, f"{name}-keystore.pem")
    with open(ks, "w") as out:
        for part in (f"{name}.pem", f"{name}.key"):
            with open(os.path.join(d, part)) as f:
                out.write(f.read())
    return ks


def tls_conf(keystore, truststore):
    return {"security.ssl.internal.enabled": "true",
            "security.ssl.internal.keystore": keystore,
            "security.ssl.internal.truststore": truststore}


def test_mutual_tls_cluster_refuses_peers_without_a_certificate(make_cluster, workdir):
    pki = os.path.join(workdir, "pki")
    os.makedirs(pki)
    ca = make_ca(pki, "cluster-ca")
    other_ca = make_ca(pki, "other-ca")
    c = make_cluster(jm_conf=tls_conf(make_node(pki, "cluster-ca", "jobmanager"), ca))
    c.add_tm(slots=1, extra=tls_conf(make_node(pki, "cluster-ca", "tm0"), ca))
    c.add_tm(slots=1, extra=tls_conf(make_node(pki, "cluster-ca", "tm1"), ca))
    n, keys = 8000, 10
    out, raw = os.path.join(workdir, "out"), os.path.join(workdir, "raw")
    jid = c.submit(agg_job(out, raw, n, keys, rate=2000))
    c.wait_state(jid, "RUNNING", timeout=20)
    assert "RPC connections use mutual TLS" in c.jm.log_text()
    wait_for(lambda: "data connection to" in c.tms[0].log_text() + c.tms[1].log_text(),
             what="a data connection over TLS")

    # plain TCP: the RPC port and a data port
    with socket.create_connection(("127.0.0.1", c.rpc_port)) as s:
        s.sendall(hello("plain") + register("plain"))
        assert closed_by_peer(s)
    tms = {t["id"]: t for t in c.get("/taskmanagers")["taskmanagers"]}
    with socket.create_connection(("127.0.0.1", tms["tm-1"]["dataPort"])) as s:
        s.sendall(data_hello("tm-0"))
        assert closed_by_peer(s)
    # a certificate from another CA
    rogue = c.add_tm(slots=1, wait=False,
                     extra=tls_conf(make_node(pki, "other-ca", "rogue"), other_ca))
    wait_for(lambda: "cannot connect to the JobManager over TLS" in rogue.log_text(),
             what="the rogue's handshake to fail")

    job = c.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)
    assert job["state"] == "FINISHED", c.get(f"/jobs/{jid}/exceptions")
    assert job["timestamps"]["RESTARTING"] == 0, job["timestamps"]
    exact_output(out, raw, n, keys)
    assert sorted(t["id"] for t in c.get("/taskmanagers")["taskmanagers"]) == ["tm-0", "tm-1"]
    assert c.jm.log_text().count("closing connection from") >= 2
    assert "refused a data connection from" in c.tms[1].log_text()


def test_bad_tls_files_refuse_to_start(make_cluster, workdir):
    from conftest import BIN
    r = subprocess.run([os.path.join(BIN, "sluice-jobmanager"), "-D", "rest.port=0",
                        "-D", "jobmanager.rpc.port=0", "-D", "security.ssl.internal.enabled=true",
                        "-D", f"security.ssl.internal.keystore={workdir}/missing.pem",
                        "-D", f"security.ssl.internal.truststore={workdir}/missing.pem"],
                       capture_output=True, text=True, timeout=30, cwd=workdir)
    assert r.returncode != 0
    assert "security.ssl.internal.keystore: no certificate in" in r.stderr + r.stdout, r.stderr
