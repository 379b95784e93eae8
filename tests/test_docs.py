"""The generated blocks of docs/CONFIG.md and docs/OPERATORS.md match what
core/config.c's table and the operators' option tables print
(build/tools/gen_docs); on a difference the test fails with the diff and the
one command that regenerates them."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_generated_docs_are_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_docs.py"), "--check"],
                       capture_output=True, text=True,
                       env=dict(os.environ, SLUICE_BUILD=os.environ.get("SLUICE_BUILD", "build")))
    assert r.returncode == 0, ("docs differ from the tables; regenerate with `make docs` "
                               "and commit:\n" + r.stdout + r.stderr)
