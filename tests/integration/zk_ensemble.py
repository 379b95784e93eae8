"""A real ZooKeeper ensemble for tests: Debian's `zookeeper` package, N
QuorumPeerMain JVMs on loopback ports, each with its own temporary data
directory (zoo.cfg + myid), the four-letter-word commands `ruok` and `srvr`
whitelisted so that readiness is asked of the server itself.

    zk = Ensemble(workdir, n=3)   # started, every node serving
    zk.quorum                     # "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3"
    zk.kill(1); zk.start(1)       # SIGKILL one node; start it again
    zk.stop()                     # every node
"""
import os
import signal
import socket
import subprocess
import time

JARS = ["/usr/share/java/zookeeper.jar"]  # its manifest's Class-Path names the rest
CONF_DIRS = ["/etc/zookeeper/conf"]        # log4j.properties
MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def four_letter(port, cmd, timeout=1.0):
    """Send a four-letter command; the answer, or None when the node does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(cmd.encode())
            chunks = []
            while True:
                b = s.recv(4096)
                if not b:
                    break
                chunks.append(b)
            return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return None


def available():
    """Why the ensemble cannot run here, or None."""
    if not all(os.path.exists(j) for j in JARS):
        return "Debian's zookeeper package is not installed (scripts/install-deps.sh)"
    if not os.path.exists("/usr/bin/java"):
        return "no java"
    return None


class Ensemble:
    def __init__(self, workdir, n=3, tick_ms=200):
        self.dir = os.path.join(workdir, "zk")
        self.n = n
        ports = free_ports(3 * n)
        self.client_ports = ports[:n]
        peer = ports[n:2 * n]
        elect = ports[2 * n:]
        self.procs = [None] * n
        self.logs = []
        for i in range(n):
            d = os.path.join(self.dir, f"node{i + 1}")
            os.makedirs(os.path.join(d, "data"), exist_ok=True)
            with open(os.path.join(d, "data", "myid"), "w") as f:
                f.write(f"{i + 1}\n")
            lines = [f"tickTime={tick_ms}", "initLimit=50", "syncLimit=10",
                     f"dataDir={os.path.join(d, 'data')}",
                     f"clientPort={self.client_ports[i]}", "clientPortAddress=127.0.0.1",
                     "4lw.commands.whitelist=ruok,srvr,stat",
                     "admin.enableServer=false",
                     # small session bounds so that tests may use short session timeouts
                     f"minSessionTimeout={2 * tick_ms}", "maxSessionTimeout=60000"]
            if n > 1:
                for k in range(n):
                    lines.append(f"server.{k + 1}=127.0.0.1:{peer[k]}:{elect[k]}")
            with open(os.path.join(d, "zoo.cfg"), "w") as f:
                f.write("\n".join(lines) + "\n")
            self.logs.append(os.path.join(d, "zookeeper.log"))
        for i in range(n):
            self.start(i, wait=False)
        self.wait_serving()

    @property
    def quorum(self):
        return ",".join(f"127.0.0.1:{p}" for p in self.client_ports)

    def start(self, i, wait=True):
        d = os.path.join(self.dir, f"node{i + 1}")
        cp = ":".join(CONF_DIRS + JARS)
        env = dict(os.environ)
        env["ZOO_LOG_DIR"] = d
        log = open(self.logs[i], "ab")
        self.procs[i] = subprocess.Popen(
            ["/usr/bin/java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-Dzookeeper.log.dir=" + d, "-Dzookeeper.root.logger=INFO,CONSOLE",
             "-cp", cp, MAIN, os.path.join(d, "zoo.cfg")],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        if wait:
            self.wait_serving([i])

    def serving(self, i):
        """The node answers imok and serves as leader, follower or standalone."""
        if self.procs[i] is None or self.procs[i].poll() is not None:
            return False
        if four_letter(self.client_ports[i], "ruok") != "imok":
            return False
        srvr = four_letter(self.client_ports[i], "srvr") or ""
        return "Mode: " in srvr

    def mode(self, i):
        srvr = four_letter(self.client_ports[i], "srvr") or ""
        for line in srvr.splitlines():
            if line.startswith("Mode: "):
                return line[6:].strip()
        return None

    def wait_serving(self, nodes=None, timeout=90):
        nodes = range(self.n) if nodes is None else nodes
        deadline = time.monotonic() + timeout
        for i in nodes:
            while not self.serving(i):
                p = self.procs[i]
                if p is not None and p.poll() is not None:
                    raise AssertionError(f"ZooKeeper node {i + 1} exited:\n{self.log_tail(i)}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"ZooKeeper node {i + 1} does not serve:\n{self.log_tail(i)}")
                time.sleep(0.1)

    def log_tail(self, i, n=3000):
        try:
            with open(self.logs[i], "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return ""

    def kill(self, i, sig=signal.SIGKILL):
        p = self.procs[i]
        if p is not None and p.poll() is None:
            p.send_signal(sig)
            p.wait(timeout=30)
        self.procs[i] = None

    def stop(self):
        for i in range(self.n):
            self.kill(i, signal.SIGTERM if self.procs[i] else signal.SIGKILL)
