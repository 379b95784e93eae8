"""Runs one Flink SQL job in Flink's local mode for bench/flink_vs_sluice.py.

This script runs under the Python of the Flink venv that the harness makes
(it imports PyFlink), never under the project's own Python. It reads one job
spec (JSON) from the file named on its command line:

    {"config": {"parallelism.default": "2", ...},   Flink configuration
     "ddl": ["CREATE TABLE ...", ...],
     "insert": "INSERT INTO ... SELECT ...",
     "mode": "throughput" | "first-output"}

and creates a streaming TableEnvironment with that configuration. PyFlink
launches one JVM (its gateway) and the job runs there on a MiniCluster --
Flink's local mode: JobManager and TaskManager in that single JVM.

Protocol on stdout, one line each, so the harness can parse it while the
JVM (which inherits this stdout) prints the rows of a `print` sink:

    BENCH-T0 <monotonic>      just before the JVM is launched
    BENCH-RESULT {json}       throughput mode, after the job finished

In throughput mode the result holds the JVM's whole CPU time (user+sys,
from /proc/<pid>/stat) from its start to the job's end ("cpu_total_s", the
figure the harness's marginal measure uses), the CPU spent from the moment every vertex of the job is RUNNING
(polled on the mini-cluster's REST API, whose port the spec's config sets)
until the job finished ("cpu_s"), the same from just before the INSERT is
planned and submitted ("cpu_submit_s": adds SQL planning, the lazy start of
the mini-cluster and task deployment), the wall times of both, and the JVM's
peak resident set (VmHWM from /proc/<pid>/status). The driver's own Python process only waits
on the JVM while the job runs; its CPU is reported separately. In
first-output mode the driver submits the job and waits; the harness ends
the process group once the first row shows.
"""
import json
import os
import sys
import time
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")


def children(pid):
    """Direct children of pid (from /proc/<pid>/task/*/children)."""
    kids = []
    task_dir = f"/proc/{pid}/task"
    for tid in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{tid}/children") as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def peak_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def find_jvm():
    for pid in children(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if cmd and os.path.basename(cmd[0]) == b"java":
            return pid
    raise SystemExit("flink_driver: no JVM child found after creating the TableEnvironment")


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    from pyflink.common import Configuration
    from pyflink.table import EnvironmentSettings, TableEnvironment

    conf = Configuration()
    for k, v in spec.get("config", {}).items():
        conf.set_string(k, str(v))
    print(f"BENCH-T0 {time.monotonic():.6f}", flush=True)
    settings = EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build()
    t_env = TableEnvironment.create(settings)
    for stmt in spec["ddl"]:
        t_env.execute_sql(stmt)
    jvm = find_jvm()

    cpu0, wall0 = cpu_seconds(jvm), time.monotonic()
    result = t_env.execute_sql(spec["insert"])
    if spec.get("mode") != "throughput":
        result.wait()
        return
    job_id = str(result.get_job_client().get_job_id())
    wait_all_running(int(spec["config"]["rest.port"]), job_id)
    cpu_run, wall_run, self_run = cpu_seconds(jvm), time.monotonic(), cpu_seconds(os.getpid())
    result.wait()
    wall1, cpu1, self1 = time.monotonic(), cpu_seconds(jvm), cpu_seconds(os.getpid())
    print("BENCH-RESULT " + json.dumps({
        "cpu_total_s": cpu1, "cpu_s": cpu1 - cpu_run, "wall_s": wall1 - wall_run,
        "cpu_submit_s": cpu1 - cpu0, "wall_submit_s": wall1 - wall0,
        "peak_rss": peak_rss_bytes(jvm), "driver_cpu_s": self1 - self_run,
        "driver_peak_rss": peak_rss_bytes(os.getpid()), "jvm_pid": jvm}), flush=True)


def wait_all_running(port, job_id, timeout=600):
    """Poll the mini-cluster's REST API until every vertex of the job runs
    (or has already finished: a short job can end, and its mini-cluster shut
    down, before the first poll)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/{job_id}", timeout=5) as r:
                job = json.load(r)
            vs = job.get("vertices", [])
            if job.get("state") in ("FINISHED", "FAILED", "CANCELED") or (
                    vs and all(v["status"] in ("RUNNING", "FINISHED") for v in vs)):
                return
        except OSError as e:
            # urllib wraps a refused connection in URLError (an OSError)
            # whose reason is the ConnectionRefusedError: the per-job
            # mini-cluster shuts down with its job, so the job is over
            if isinstance(getattr(e, "reason", e), ConnectionRefusedError):
                return
        time.sleep(0.02)
    raise SystemExit(f"flink_driver: job {job_id} did not reach RUNNING")


if __name__ == "__main__":
    main()
