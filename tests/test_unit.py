"""Runs every C unit test case (tests/unit/test_*.c) as its own pytest case."""
import glob
import os
import subprocess

import pytest

from conftest import BUILD

def _cases():
    out = []
    for exe in sorted(glob.glob(os.path.join(BUILD, "tests", "test_*"))):
        if not os.access(exe, os.X_OK):
            continue
        names = subprocess.run([exe, "--list"], capture_output=True, text=True, check=True).stdout.split()
        out += [pytest.param(exe, n, id=f"{os.path.basename(exe)}::{n}") for n in names]
    return out


@pytest.mark.parametrize("exe,name", _cases())
def test_unit(exe, name):
    r = subprocess.run([exe, name], capture_output=True, text=True, timeout=300,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode == 0, r.stdout + r.stderr
