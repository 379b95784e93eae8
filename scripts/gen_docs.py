#!/usr/bin/env python3
"""Regenerate the generated blocks of docs/CONFIG.md and docs/OPERATORS.md.

Each block sits between `<!-- BEGIN GENERATED: <what> -->` and
`<!-- END GENERATED: <what> -->`; everything outside them is hand-written.
The content comes from build/tools/gen_docs (tests/tools/gen_docs.c), which
prints core/config.c's table and every built-in operator's option table.

    make docs                       rewrite the blocks
    scripts/gen_docs.py --check     exit 1 with a diff when a block differs
"""
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCKS = [("docs/CONFIG.md", "config"), ("docs/OPERATORS.md", "operators")]


def generated(what):
    tool = os.path.join(ROOT, os.environ.get("SLUICE_BUILD", "build"), "tools", "gen_docs")
    return subprocess.run([tool, what], check=True, capture_output=True, text=True).stdout


def block_re(what):
    return re.compile(r"(<!-- BEGIN GENERATED: %s[^>]*-->\n)(.*?)(<!-- END GENERATED: %s -->)"
                      % (what, what), re.S)


def check_or_write(write):
    diffs = []
    for path, what in BLOCKS:
        full = os.path.join(ROOT, path)
        text = open(full).read()
        m = block_re(what).search(text)
        if not m:
            diffs.append("%s: no generated block '%s'\n" % (path, what))
            continue
        want = generated(what)
        if m.group(2) == want:
            continue
        if write:
            text = text[:m.start(2)] + want + text[m.end(2):]
            open(full, "w").write(text)
        else:
            diffs.append("".join(difflib.unified_diff(
                m.group(2).splitlines(True), want.splitlines(True),
                path + " (committed)", path + " (generated)")))
    return diffs


if __name__ == "__main__":
    diffs = check_or_write(write="--check" not in sys.argv)
    if diffs:
        sys.stdout.write("".join(diffs))
        sys.exit(1)
