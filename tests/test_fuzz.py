"""A bounded libFuzzer run of the SQL front end (tests/fuzz/fuzz_sql.c):
`make fuzz` for a few seconds; any crash, sanitizer report or leak fails.
The fuzzer carries its own ASan + UBSan, so it runs once, with the
optimised suite."""
import os
import subprocess

import pytest

from conftest import ROOT


@pytest.mark.release_only
def test_sql_parser_fuzz_run_finds_nothing():
    secs = os.environ.get("SLUICE_FUZZ_SECONDS", "5")
    r = subprocess.run(["make", "--no-print-directory", "fuzz", f"FUZZ_SECONDS={secs}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "Done " in out and "ERROR:" not in out, out[-6000:]
