"""A throwaway PostgreSQL server for the jdbc connector's tests.

Debian's `postgresql` package: initdb and pg_ctl from /usr/lib/postgresql/<v>/bin.
initdb refuses to run as root, so when the suite runs as root the server's
files belong to the `postgres` user the package creates and every server
command runs through `runuser -u postgres`. The server listens on 127.0.0.1
on a free port (and a Unix socket in its own directory), asks TCP clients for
a password (scram-sha-256; user `postgres`, password `secret`) and allows
prepared transactions (max_prepared_transactions = 20) for the exactly-once
sink. `sql()` runs statements through psql and returns the rows as lists of
strings, independently of Sluice's libpq code.
"""
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

USER = "postgres"
PASSWORD = "secret"


def _bindir():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for d in dirs:
        if os.path.exists(os.path.join(d, "initdb")):
            return d
    return None


def available():
    return _bindir() is not None and shutil.which("psql") is not None


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class PgServer:
    def __init__(self):
        self.bindir = _bindir()
        self.dir = tempfile.mkdtemp(prefix="sluice-pg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.port = _free_port()
        self.as_user = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        pwfile = os.path.join(self.dir, "pw")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        if self.as_user:
            os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
        self._run([os.path.join(self.bindir, "initdb"), "-D", self.data, "-U", USER,
                   "--pwfile", pwfile, "--auth-host=scram-sha-256", "--auth-local=trust",
                   "-E", "UTF8", "--locale=C"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                    f"unix_socket_directories = '{self.dir}'\nmax_prepared_transactions = 20\n"
                    "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                    "shared_buffers = 16MB\nmax_connections = 60\n"
                    # logical replication, for the postgres-cdc source's tests
                    "wal_level = logical\nmax_replication_slots = 10\nmax_wal_senders = 10\n")
        self._run([os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-l",
                   os.path.join(self.dir, "server.log"), "-w", "-t", "60", "start"])
        self.url = f"jdbc:postgresql://127.0.0.1:{self.port}/postgres"

    def _run(self, args):
        r = subprocess.run(self.as_user + args, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{args} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
        return r

    def sql(self, text, check=True):
        """Rows of the last statement as lists of strings (NULL as None)."""
        env = dict(os.environ, PGPASSWORD=PASSWORD)
        r = subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", USER,
                            "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-A", "-t", "-F", "\t",
                            "-P", "null=\\N", "-c", text], capture_output=True, text=True,
                           env=env, timeout=60)
        if check:
            assert r.returncode == 0, f"psql {text!r}: {r.stderr}"
        out = []
        for line in r.stdout.splitlines():
            if line == "":
                continue
            out.append([None if c == "\\N" else c for c in line.split("\t")])
        return out if check else (r.returncode, out, r.stderr)

    def stop(self):
        try:
            self._run([os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate",
                       "-w", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
