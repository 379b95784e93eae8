"""Bounded libFuzzer runs of every outside input's parser (tests/fuzz/,
one target per input kind: SQL, control frames, data connections (HELLO,
AUTH, DATA and CREDIT frames), network buffers, rows, job
graphs, calc expressions, snapshot files, REST bodies): `make fuzz` for a
few seconds each from the committed seeds; any crash, sanitizer report,
leak or timeout fails. The targets carry their own ASan + UBSan, so they run
once, with the optimised suite. `make fuzz FUZZ_SECONDS=600` runs longer."""
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


@pytest.mark.release_only
@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_run_finds_nothing(target):
    secs = os.environ.get("SLUICE_FUZZ_SECONDS", "5")
    r = subprocess.run(["make", "--no-print-directory", "fuzz", f"FUZZ_TARGETS={target}",
                        f"FUZZ_SECONDS={secs}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "Done " in out and "ERROR:" not in out, out[-6000:]
