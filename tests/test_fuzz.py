"""Bounded libFuzzer runs of every outside input's parser (tests/fuzz/,
one target per input kind: SQL, control frames, data connections (HELLO,
AUTH, DATA and CREDIT frames), network buffers, rows, job
graphs, calc expressions, snapshot files, REST bodies): `make fuzz` for a
few seconds each from the committed seeds; any crash, sanitizer report,
leak or timeout fails. The targets carry their own ASan + UBSan, so they run
once, with the optimised suite. `make fuzz FUZZ_SECONDS=600` runs longer."""
import fcntl
import glob
import os
import subprocess

import pytest

from conftest import ROOT

TARGETS = sorted(os.path.basename(p)[len("fuzz_"):-2]
                 for p in glob.glob(os.path.join(ROOT, "tests", "fuzz", "fuzz_*.c")))


def test_every_input_kind_has_a_target():
    assert {"sql", "control", "wire", "data", "rows", "jobgraph", "expr", "snapshot", "rest"} <= set(TARGETS)
    for t in TARGETS:
        assert os.listdir(os.path.join(ROOT, "tests", "fuzz", t)), f"no seeds for {t}"


@pytest.fixture(scope="session")
def fuzz_targets():
    """Every target built once, make -j, before any runs: parallel workers
    (one session each) share build/fuzz, so one builds under a lock and the
    others find the targets up to date."""
    os.makedirs(os.path.join(ROOT, "build", "fuzz"), exist_ok=True)
    with open(os.path.join(ROOT, "build", "fuzz", ".build.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(["make", "--no-print-directory", f"-j{os.cpu_count() or 1}"]
                           + [f"build/fuzz/fuzz_{t}" for t in TARGETS],
                           cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


@pytest.mark.release_only
@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_run_finds_nothing(target, fuzz_targets):
    secs = os.environ.get("SLUICE_FUZZ_SECONDS", "5")
    r = subprocess.run(["make", "--no-print-directory", "fuzz", f"FUZZ_TARGETS={target}",
                        f"FUZZ_SECONDS={secs}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "Done " in out and "ERROR:" not in out, out[-6000:]
