#!/bin/sh
# The whole test suite: builds Sluice twice -- optimised (build/) and with
# AddressSanitizer + UndefinedBehaviorSanitizer (build-san/) -- and runs
# every test against both: unit tests and whole-cluster integration tests
# with real daemons on loopback. Browser, Docker and benchmark-smoke tests
# run once, against the optimised build. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
./scripts/install-deps.sh || { echo "installing dependencies failed"; echo "0 passed, 1 failed"; exit 1; }

PY=/usr/bin/python3
REPORTS=build/test-reports
mkdir -p "$REPORTS"
rm -f "$REPORTS"/*.xml
status=0

run_suite() { # name build-dir pytest-args...
    name=$1; dir=$2; shift 2
    echo "=== $name: pytest against $dir ==="
    SLUICE_BUILD=$dir $PY -m pytest -p no:cacheprovider -q --junitxml="$REPORTS/$name.xml" "$@"
    rc=$?
    # 5 = no tests collected: that is a failure of the suite itself
    [ $rc -eq 0 ] || status=1
}

echo "=== build (gcc, -O2) ==="
if ! make -j"$(nproc)" all >build/make.log 2>&1; then
    cat build/make.log; echo "0 passed, 1 failed"; exit 1
fi
if grep -q "warning:" build/make.log; then grep "warning:" build/make.log; status=1; fi
run_suite release build tests

echo "=== build (gcc, ASan + UBSan) ==="
if ! make -j"$(nproc)" SAN=1 all >build/make-san.log 2>&1; then
    cat build/make-san.log; echo "0 passed, 1 failed"; exit 1
fi
run_suite sanitized build-san tests -m "not release_only"

$PY - "$REPORTS" <<'PYEOF'
import glob, sys, xml.etree.ElementTree as ET
p = f = s = 0
for path in glob.glob(sys.argv[1] + "/*.xml"):
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    for su in suites:
        t = int(su.get("tests", 0)); fl = int(su.get("failures", 0)) + int(su.get("errors", 0))
        sk = int(su.get("skipped", 0))
        p += t - fl - sk; f += fl; s += sk
print(f"{p} passed, {f} failed" + (f", {s} skipped" if s else ""))
PYEOF
exit $status
