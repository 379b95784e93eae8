#!/usr/bin/python3
"""An S3-compatible server for tests and examples: moto's server mode, from
the PyPI package moto[server], installed into a venv under
~/.cache/sluice-s3 (or $SLUICE_S3_CACHE), once; later calls find the marker
and do nothing.

    scripts/s3_server.py --install            install (idempotent), print paths
    scripts/s3_server.py --run [PORT] [BUCKET] run a server in the foreground
                                              (in memory; Ctrl-C stops it)
    VENV/bin/python scripts/s3_server.py --serve HOST PORT
                                              the server itself (moto pinned to S3,
                                              see serve()); what --run and Server start

Tests import this module: ensure_env() installs and returns the paths and
puts the venv's site-packages on sys.path (so `import boto3` works from the
system python that runs pytest); Server(python, port=None) starts moto on a
free loopback port, client() is a boto3 S3 client for it, stop() ends it.

What moto does not check (docs/S3.md): it accepts any access key
and secret and does not verify request signatures, so a wrong key or a
broken signature passes here and fails on a real S3; it keeps everything in
memory (a killed server loses its buckets); it does not throttle.
"""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyvenv  # noqa: E402

PACKAGES = ["moto[server]==5.2.1"]
ACCESS_KEY, SECRET_KEY = "sluice-test", "sluice-test-secret"


InstallError = pyvenv.InstallError


def cache_dir():
    return os.environ.get("SLUICE_S3_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "sluice-s3"))


def ensure_env():
    """Install once; returns {"python", "site"}. Raises InstallError with the
    reason (and pip's output) when it cannot; safe for parallel test workers
    (scripts/pyvenv.py)."""
    return pyvenv.ensure(cache_dir(), PACKAGES, _finish)


def _finish(venv, py, site):
    sites = [site]
    if sites[0] not in sys.path:
        sys.path.append(sites[0])  # after the system's own packages
    return {"python": py, "site": sites[0]}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """moto on 127.0.0.1:port (in memory), logging to log_path."""

    def __init__(self, python, log_path, port=None):
        self.python = python
        self.port = port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.proc = None
        self.start()

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.python, os.path.abspath(__file__), "--serve",
                                      "127.0.0.1", str(self.port)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"moto exited with {self.proc.returncode}; see {self.log_path}")
            try:
                with urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"moto did not answer on {self.endpoint}; see {self.log_path}")

    def kill(self):
        """SIGKILL: connections in flight break, everything stored is lost."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.log.close()

    def pause(self):
        """SIGSTOP: connections stay open and nothing answers (a hung server)."""
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def client(self):
        import boto3
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)

    def conf(self):
        """The s3.* options of a daemon that uses this server."""
        return {"s3.endpoint": self.endpoint, "s3.access-key": ACCESS_KEY,
                "s3.secret-key": SECRET_KEY, "s3.path.style.access": "true"}


def serve(host, port):
    """moto's server, in this process (run by the venv's python), answering
    every request as S3. moto picks the service of a request from the SigV4
    credential scope in its Authorization header and falls back to S3 when
    that does not parse; a SigV2 signature (what libs3 2.0 sends) that
    happens to hold exactly four '/' parses as a scope naming a made-up
    service, and moto answers 500 (about 1 request in 1,400). Only S3 is
    served here, so the guess is pinned."""
    from moto.moto_server import werkzeug_app
    from moto.server import main as moto_main
    werkzeug_app.DomainDispatcherApplication.infer_service_region_host = \
        lambda self, *args, **kwargs: "s3.us-east-1.amazonaws.com"
    moto_main(["-H", host, "-p", str(port)])


def main(argv):
    if argv[:1] == ["--serve"]:
        serve(argv[1], int(argv[2]))
        return 0
    if argv[:1] == ["--install"]:
        env = ensure_env()
        print(f"python: {env['python']}\nsite-packages: {env['site']}")
        return 0
    if argv[:1] == ["--run"]:
        env = ensure_env()
        port = int(argv[1]) if len(argv) > 1 else 9000
        s = Server(env["python"], os.devnull, port)
        if len(argv) > 2:
            s.client().create_bucket(Bucket=argv[2])
        print(f"moto S3 on {s.endpoint}" + (f", bucket {argv[2]}" if len(argv) > 2 else ""))
        try:
            s.proc.wait()
        except KeyboardInterrupt:
            s.stop()
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
