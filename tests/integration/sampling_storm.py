"""A sampling storm: a cluster whose JobManager samples task threads as fast as
it can (rest.flamegraph.delay-between-samples 1 ms, a graph stale after 1 ms),
and a thread that keeps asking, for every running vertex, for its flame graph
and now and then for every daemon's thread dump, so that every task thread --
and, through the thread dumps, every thread of every daemon -- keeps receiving
the sampler's signal while the cluster works. What the storm got is counted
(samples in finished graphs, thread dumps answered) so a test can check that it
really stormed. Requests are bounded: the thread stops with the cluster."""
import json
import threading
import time
import urllib.request

STORM_CONF = {
    "rest.flamegraph.num-samples": "100",
    "rest.flamegraph.delay-between-samples": "1 ms",
    "rest.flamegraph.refresh-interval": "1 ms",
}


class Storm:
    def __init__(self, url, dump_every=1.0):
        self.url = url
        self.dump_every = dump_every
        self.samples = 0       # samples in the finished graphs seen (each counted once)
        self.graphs = 0
        self.dumps = 0         # thread dumps answered, all daemons
        self.errors = []       # answers other than 200 / a job or TaskManager gone
        self.kinds = set()     # operator types of the jobs stormed while RUNNING
        self._jobs = set()
        self._seen = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampling-storm", daemon=True)
        self._thread.start()
        # the jobs' kinds from a watcher of its own: one round of the storm's
        # requests can outlast a short job, a glance at the overview does not
        self._watcher = threading.Thread(target=self._watch, name="storm-kinds", daemon=True)
        self._watcher.start()

    def _get(self, path):
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, e.read()[:300]
        except (OSError, ValueError) as e:
            return 0, str(e)

    def _run(self):
        last_dump = 0.0
        while not self._stop.is_set():
            status, jobs = self._get("/jobs/overview")
            for job in (jobs or {}).get("jobs", []) if status == 200 else []:
                if job.get("state") != "RUNNING":
                    continue
                status, info = self._get(f"/jobs/{job['jid']}")
                for v in (info or {}).get("vertices", []) if status == 200 else []:
                    status, g = self._get(f"/jobs/{job['jid']}/vertices/{v['id']}/flamegraph")
                    if status == 200 and g.get("endTimestamp", 0) > 0:
                        key = (job["jid"], v["id"], g["endTimestamp"])
                        if key not in self._seen:
                            self._seen.add(key)
                            self.graphs += 1
                            self.samples += g["data"]["value"]
                    elif status not in (200, 404):  # 404: the job ended meanwhile
                        self.errors.append(("flamegraph", status, g))
            if time.monotonic() - last_dump >= self.dump_every:
                last_dump = time.monotonic()
                status, tms = self._get("/taskmanagers")
                paths = ["/jobmanager/thread-dump"] + [
                    f"/taskmanagers/{t['id']}/thread-dump" for t in (tms or {}).get("taskmanagers", [])]
                for p in paths if status == 200 else []:
                    st, dump = self._get(p)
                    if st == 200 and dump.get("threadInfos"):
                        self.dumps += 1
                    elif st not in (404, 504):  # a TaskManager gone or busy sampling
                        self.errors.append((p, st, dump))
            self._stop.wait(0.02)

    def _watch(self):
        while not self._stop.is_set():
            status, jobs = self._get("/jobs/overview")
            for job in (jobs or {}).get("jobs", []) if status == 200 else []:
                if job.get("state") == "RUNNING" and job["jid"] not in self._jobs:
                    status, sj = self._get(f"/sluice/jobs/{job['jid']}")
                    if status == 200:
                        self._jobs.add(job["jid"])
                        self.kinds |= {o["type"] for n in sj["plan"]["nodes"] for o in n["operators"]}
            self._stop.wait(0.005)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=60)
        self._watcher.join(timeout=60)
        return self
