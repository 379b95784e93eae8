"""A daemon out of file descriptors logs once per episode and never spins.

The JobManager's RLIMIT_NOFILE is lowered (prlimit on the running process)
to a few descriptors above what it holds; then more connections are opened
to its RPC port than it can accept. accept() fails with EMFILE: the
listener pauses and retries every 100 ms instead of calling accept() in a
loop, so the process uses (almost) no CPU, and says so once. With the
limit back and the connections closed, it accepts again, says so once, and
a TaskManager registers. A second episode is logged once more. (The
TaskManager's data port uses the same listener code, common/listen.c.)
"""
import os
import re
import resource
import socket
import time

from conftest import wait_for

EPISODE = re.compile(r"RPC port cannot accept connections: Too many open files \(descriptor "
                     r"limit (\d+)\); new connections wait in the backlog, retried every 100 ms "
                     r"\(said once until accepting works again\)")
AGAIN = re.compile(r"RPC port accepts connections again \((\d+) accept attempts failed meanwhile\)")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def exhaust(c, pid, limit):
    """Lower the limit and connect until accept() must fail; the sockets."""
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, hard))
    socks = []
    for _ in range(limit - open_fds(pid) + 8):
        s = socket.create_connection(("127.0.0.1", c.rpc_port), timeout=5)
        socks.append(s)
    return socks, soft, hard


def episode(c, pid, n_before):
    limit = open_fds(pid) + 4
    socks, soft, hard = exhaust(c, pid, limit)
    m = wait_for(lambda: len(EPISODE.findall(c.jm.log_text())) > n_before and
                 EPISODE.findall(c.jm.log_text()), timeout=10,
                 what="the JobManager to say it is out of descriptors")
    assert int(m[-1]) == limit, m
    # no busy loop: over a second the process is nearly idle (a spinning
    # accept loop burns the whole second)
    t0 = cpu_seconds(pid)
    time.sleep(1.0)  # a measurement over an interval, not a wait for a condition
    used = cpu_seconds(pid) - t0
    assert used < 0.3, f"{used:.2f} s of CPU in 1 s while out of descriptors"
    assert len(EPISODE.findall(c.jm.log_text())) == n_before + 1, c.jm.log_text()[-3000:]
    # the limit back, the connections gone: it accepts again, once said
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    for s in socks:
        s.close()
    again = wait_for(lambda: len(AGAIN.findall(c.jm.log_text())) > n_before and
                     AGAIN.findall(c.jm.log_text()), timeout=10, what="accepting again")
    assert int(again[-1]) >= 1


def test_out_of_descriptors_logs_once_and_never_spins(cluster):
    pid = cluster.jm.proc.pid
    episode(cluster, pid, 0)
    cluster.add_tm(slots=1)  # registers: the RPC port works again
    episode(cluster, pid, 1)
    assert len(EPISODE.findall(cluster.jm.log_text())) == 2
    assert len(AGAIN.findall(cluster.jm.log_text())) == 2
    cluster.add_tm(slots=1)
