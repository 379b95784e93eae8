#!/bin/sh
# The whole test suite: builds Sluice twice -- optimised (build/) and with
# AddressSanitizer + UndefinedBehaviorSanitizer (build-san/) -- and runs
# every test against both: unit tests and whole-cluster integration tests
# with real daemons on loopback. Browser, Docker, fuzz and benchmark-smoke
# tests run once, against the optimised build. Ends with "N passed, N failed".
#
# Tests run on parallel pytest-xdist workers (SLUICE_TEST_JOBS, default one
# more than the number of cores, at least 3 and at most 5; the sanitized half
# as many, or SLUICE_SAN_TEST_JOBS) with --dist loadgroup: tests are
# handed out one at a time, longest modules first, except the modules that
# tests/conftest.py keeps in order on one worker. The sanitized build is
# compiled at the lowest CPU priority while the optimised half's tests run,
# on the CPU time they leave idle.
set -u
cd "$(dirname "$0")/.."
./scripts/install-deps.sh || { echo "installing dependencies failed"; echo "0 passed, 1 failed"; exit 1; }

PY=/usr/bin/python3
REPORTS=build/test-reports
mkdir -p "$REPORTS"
rm -f "$REPORTS"/*.xml
status=0
extra_failures=0  # a half that could not run (build failed, pytest error): one failure each
T0=$(date +%s)

JOBS=${SLUICE_TEST_JOBS:-}
if [ -z "$JOBS" ]; then
    JOBS=$(($(nproc) + 1))
    [ "$JOBS" -ge 3 ] || JOBS=3
    [ "$JOBS" -le 5 ] || JOBS=5
fi

elapsed() { t=$(($(date +%s) - T0)); printf '%d:%02d' $((t / 60)) $((t % 60)); }

# One worker more than cores: the integration tests wait on daemons, throttled
# sources, restart delays and timeouts for most of their time (a long
# sanitized test used a quarter of a core, measured with /usr/bin/time).
SAN_JOBS=${SLUICE_SAN_TEST_JOBS:-$JOBS}

run_suite() { # name build-dir workers pytest-args...
    name=$1; dir=$2; workers=$3; shift 3
    echo "=== $name: pytest against $dir on $workers workers (at $(elapsed)) ==="
    SLUICE_BUILD=$dir $PY -m pytest -p no:cacheprovider -q -n "$workers" --dist loadgroup \
        --durations=15 --junitxml="$REPORTS/$name.xml" "$@"
    rc=$?
    # 1 = tests failed (counted in the report); 5 = no tests collected, or
    # any other exit: a failure of the suite itself
    [ $rc -eq 0 ] || status=1
    [ $rc -le 1 ] || extra_failures=$((extra_failures + 1))
    echo "=== $name: done at $(elapsed), pytest exit $rc ==="
}

echo "=== build (gcc, -O2) ==="
if ! make -j"$(nproc)" all >build/make.log 2>&1; then
    cat build/make.log; echo "0 passed, 1 failed"; exit 1
fi
if grep -q "warning:" build/make.log; then grep "warning:" build/make.log; status=1; fi

echo "=== build (gcc, ASan + UBSan) in the background, at the lowest priority ==="
nice -n 19 make -j"$(nproc)" SAN=1 all >build/make-san.log 2>&1 &
san_build=$!

run_suite release build "$JOBS" tests

if wait $san_build; then
    run_suite sanitized build-san "$SAN_JOBS" tests -m "not release_only"
else
    cat build/make-san.log; echo "=== the sanitized build failed: no sanitized tests ==="
    extra_failures=$((extra_failures + 1)); status=1
fi

echo "=== finished after $(elapsed) ==="
$PY - "$REPORTS" "$extra_failures" <<'PYEOF'
import glob, sys, xml.etree.ElementTree as ET
p = s = 0
f = int(sys.argv[2])
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
