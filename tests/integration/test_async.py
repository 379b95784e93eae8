"""Async I/O (the `async_wait` operator, examples/datastream/lookup.c) against a
small TCP lookup service started here: one line "ID" in, "OK VALUE" or "ERR
WHY" out. The service's behaviour is a function of the id (and of how often
it was asked), so the expected output is worked out here from the same rule:

- id % 10 == 3: answered only after SLOW_S, well past the operator's timeout ->
  the function's timeout handler gives (id, -1, "timeout");
- id % 10 == 5: "ERR busy" for the first two attempts, then an answer -> the
  fixed-delay retry strategy gets it at the third attempt;
- otherwise an answer after a short delay that varies with the id, so
  answers come back out of order.

The value is id * id % 1000. The service also records the most requests it
ever had open at once, which shows the operator's capacity holding."""
import os
import re
import socketserver
import threading
import time

import pytest

from conftest import BUILD, wait_for
from test_datastream import read
from test_savepoints import NO_PERIODIC, stop_with_savepoint

JOB = os.path.join(BUILD, "examples", "lookup.so")
SLOW_S = 3.0


class Service:
    def __init__(self, rule):
        self.rule = rule          # id, attempt -> (delay_s, line)
        self.lock = threading.Lock()
        self.attempts = {}
        self.log = []             # ids in the order their requests arrived
        self.open = 0
        self.max_open = 0
        svc = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                for line in self.rfile:
                    i = int(line)
                    with svc.lock:
                        a = svc.attempts[i] = svc.attempts.get(i, 0) + 1
                        svc.log.append(i)
                        svc.open += 1
                        svc.max_open = max(svc.max_open, svc.open)
                    delay, reply = svc.rule(i, a)
                    time.sleep(delay)
                    with svc.lock:
                        svc.open -= 1
                    try:
                        self.wfile.write(reply.encode() + b"\n")
                        self.wfile.flush()
                    except OSError:
                        return

        class Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            request_queue_size = 256  # a burst of connects must not wait for a SYN retry

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address = "127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def value(i):
    return i * i % 1000


def mixed_rule(i, attempt):
    if i % 10 == 3:
        return SLOW_S, f"OK {value(i)}"
    if i % 10 == 5 and attempt <= 2:
        return 0.0, "ERR busy"
    return (i * 37 % 11) / 1000.0, f"OK {value(i)}"


def expected_mixed(n):
    return [(i, -1, "timeout") if i % 10 == 3 else (i, value(i), "ok") for i in range(1, n + 1)]


@pytest.fixture
def service_factory():
    made = []

    def make(rule):
        s = Service(rule)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


def rows(out):
    return [(r["id"], r["value"], r["status"]) for r in read(out, "lookups")]


def run_job(cluster, *args, timeout=120):
    r = cluster.cli("run", JOB, *args, timeout=timeout)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    return re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)


@pytest.mark.parametrize("mode", ["ordered", "unordered"])
def test_async_timeouts_retries(cluster, workdir, service_factory, mode):
    svc = service_factory(mixed_rule)
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    n = 100
    run_job(cluster, out, svc.address, str(n), "2000", mode, "20", "1 s", "3")
    got = rows(out)
    if mode == "ordered":
        assert got == expected_mixed(n)  # input order, whatever order the answers came in
    else:
        assert sorted(got) == expected_mixed(n)
    # every id asked, the failing ones exactly three times (two ERR, one answer)
    assert {i: svc.attempts[i] for i in range(5, n + 1, 10)} == {i: 3 for i in range(5, n + 1, 10)}
    assert all(svc.attempts[i] == 1 for i in range(1, n + 1) if i % 10 != 5)


def test_async_capacity_backpressure(cluster, workdir, service_factory):
    """Capacity 4, a fast source and a function that starts a thread per
    request: never more than 4 requests reach the service at once, and 4 do
    (the operator stops taking input while full, it does not queue more)."""
    svc = service_factory(lambda i, a: (0.05, f"OK {value(i)}"))
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    n = 80
    run_job(cluster, out, svc.address, str(n), "100000", "unordered", "4", "10 s", "1")
    assert sorted(rows(out)) == [(i, value(i), "ok") for i in range(1, n + 1)]
    assert svc.max_open == 4
    assert sorted(svc.log) == list(range(1, n + 1))


def test_async_exhausted_retries_fail_the_job(cluster, workdir, service_factory):
    svc = service_factory(lambda i, a: (0.0, "ERR no such id") if i == 7 else (0.0, f"OK {value(i)}"))
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    r = cluster.cli("run", JOB, out, svc.address, "20", "1000", "ordered", "5", "5 s", "2")
    assert r.returncode != 0
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    exc = cluster.get(f"/jobs/{jid}/exceptions")
    assert "async request failed after 2 attempts: ERR no such id" in str(exc), exc
    assert svc.attempts[7] == 2


def test_async_restore_with_requests_in_flight(make_cluster, workdir, service_factory):
    """Stopped with a savepoint while requests are in flight (every answer
    takes 500 ms, capacity 4: 8 answers a second for 20 rows a second, so the
    operator is always full and holds the source back): the savepoint holds
    their input rows, the restored job asks for them again first, and the
    two runs' committed output is every id exactly once, in order."""
    svc = service_factory(lambda i, a: (0.5, f"OK {value(i)}"))
    c = make_cluster(jm_conf=NO_PERIODIC)
    c.add_tm(slots=1)
    out = os.path.join(workdir, "out")
    n = 60
    args = [out, svc.address, str(n), "20", "ordered", "4", "20 s", "1"]
    r = c.cli("run", "-d", JOB, *args, check=True)
    jid = re.search(r"JobID ([0-9a-f]{32})", r.stdout).group(1)
    wait_for(lambda: len(svc.log) >= 20, timeout=30, what="20 requests")
    sp = stop_with_savepoint(c, jid, os.path.join(workdir, "sp"))
    first = rows(out)
    assert 0 < len(first) < n
    assert first == [(i, value(i), "ok") for i in range(1, len(first) + 1)]
    with svc.lock:
        asked_before = list(svc.log)
    r = c.cli("run", "-s", f"file:{sp}", JOB, *args, timeout=120)
    assert r.returncode == 0 and "finished with state FINISHED" in r.stdout, r.stdout + r.stderr
    assert rows(out) == [(i, value(i), "ok") for i in range(1, n + 1)]
    asked_after = svc.log[len(asked_before):]
    # the requests in flight at the savepoint: asked in the first run, their
    # rows not committed by it, asked again at once by the restored one
    in_flight = sorted(set(asked_before) - {row[0] for row in first})
    assert 1 <= len(in_flight) <= 4, in_flight
    # the restored job sends up to capacity (4) requests at once, over several
    # connections: their arrival order is the machine's, so the in-flight ids are
    # among the first four asked, not necessarily the very first
    assert set(in_flight) <= set(asked_after[:4]), (in_flight, asked_after[:8])
    assert sorted(asked_after) == list(range(len(first) + 1, n + 1))
