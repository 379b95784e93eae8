"""A daemon out of file descriptors logs once per episode and never spins.

The JobManager's RLIMIT_NOFILE is lowered (prlimit on the running process)
to a few descriptors above what it holds; then more connections are opened
to its RPC port than it can accept. accept() fails with EMFILE: the
listener pauses and retries every 100 ms instead of calling accept() in a
loop, so the process uses (almost) no CPU, and says so once. With the
limit back and the connections closed, it accepts again, says so once, and
a TaskManager registers. A second episode is logged once more. The same
for a TaskManager's data port, which then still runs a job.
"""
import os
import re
import resource
import socket
import time

from conftest import wait_for



def episode_re(what):
    return re.compile(what + r" cannot accept connections: Too many open files \(descriptor "
                      r"limit (\d+)\); new connections wait in the backlog, retried every 100 ms "
                      r"\(said once until accepting works again\)")


def again_re(what):
    return re.compile(what + r" accepts connections again \((\d+) accept attempts failed meanwhile\)")


EPISODE, AGAIN = episode_re("RPC port"), again_re("RPC port")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def exhaust(port, pid, limit):
    """Lower the limit and connect until accept() must fail; the sockets."""
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, hard))
    socks = []
    for _ in range(limit - open_fds(pid) + 8):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        socks.append(s)
    return socks, soft, hard


def episode(daemon, port, n_before, what="RPC port"):
    pid = daemon.proc.pid
    ep, ag = episode_re(what), again_re(what)
    limit = open_fds(pid) + 4
    socks, soft, hard = exhaust(port, pid, limit)
    m = wait_for(lambda: len(ep.findall(daemon.log_text())) > n_before and
                 ep.findall(daemon.log_text()), timeout=10,
                 what=f"{daemon.name} to say it is out of descriptors")
    assert int(m[-1]) == limit, m
    # no busy loop: over a second the process is nearly idle (a spinning
    # accept loop burns the whole second)
    t0 = cpu_seconds(pid)
    time.sleep(1.0)  # a measurement over an interval, not a wait for a condition
    used = cpu_seconds(pid) - t0
    assert used < 0.3, f"{used:.2f} s of CPU in 1 s while out of descriptors"
    assert len(ep.findall(daemon.log_text())) == n_before + 1, daemon.log_text()[-3000:]
    # the limit back, the connections gone: it accepts again, once said
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    for s in socks:
        s.close()
    again = wait_for(lambda: len(ag.findall(daemon.log_text())) > n_before and
                     ag.findall(daemon.log_text()), timeout=10, what="accepting again")
    assert int(again[-1]) >= 1


def test_out_of_descriptors_logs_once_and_never_spins(cluster):
    episode(cluster.jm, cluster.rpc_port, 0)
    cluster.add_tm(slots=1)  # registers: the RPC port works again
    episode(cluster.jm, cluster.rpc_port, 1)
    assert len(EPISODE.findall(cluster.jm.log_text())) == 2
    assert len(AGAIN.findall(cluster.jm.log_text())) == 2
    cluster.add_tm(slots=1)


def test_taskmanager_data_port_out_of_descriptors(cluster, workdir):
    tm = cluster.add_tm(slots=1)
    port = int(wait_for(lambda: re.search(r"data port (\d+)", tm.log_text()), timeout=10,
                        what="the data port").group(1))
    episode(tm, port, 0, what="data port")
    # it still runs a job end to end (its data port and its JobManager link work)
    out = os.path.join(workdir, "out")
    job = {"name": "after", "parallelism": 1,
           "vertices": [{"id": "gen", "type": "datagen", "schema": [{"name": "id", "type": "BIGINT"}],
                         "config": {"rows-per-second": "1000000", "fields.id.kind": "sequence",
                                    "fields.id.start": "1", "fields.id.end": "100"}},
                        {"id": "out", "type": "file", "config": {"path": out, "format": "json"}}],
           "edges": [{"from": "gen", "to": "out", "strategy": "rebalance"}]}
    jid = cluster.submit(job)
    assert cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=30)["state"] == "FINISHED"
    with open(os.path.join(out, "part-0")) as f:
        assert sorted(int(line.split(":")[1].strip(" }\n")) for line in f) == list(range(1, 101))
