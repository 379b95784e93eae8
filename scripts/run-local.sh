#!/bin/sh
# A local Sluice cluster for a first run: one JobManager, one TaskManager
# with 2 slots, and the demo job from examples/ (a SQL script, run through
# `sluice sql -f`, or a JSON job graph). Logs and the TaskManager's
# printed rows go to build/local/; the rows are shown here as they come.
# Ctrl-C stops everything cleanly.
set -eu
cd "$(dirname "$0")/.."
BIN=build/bin
JOB=${1:-examples/clicks-tumble.sql}
OUT=build/local
mkdir -p "$OUT"
: > "$OUT/jobmanager.log"
: > "$OUT/taskmanager.log"
: > "$OUT/taskmanager.out"

jm_pid=""; tm_pid=""; tail_pid=""
cleanup() {
    trap - INT TERM EXIT
    echo
    echo "Stopping the local cluster..."
    [ -n "$tail_pid" ] && kill "$tail_pid" 2>/dev/null || true
    [ -n "$tm_pid" ] && kill "$tm_pid" 2>/dev/null || true
    [ -n "$jm_pid" ] && kill "$jm_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    echo "Stopped."
}
trap cleanup INT TERM EXIT

"$BIN/sluice-jobmanager" --config conf/sluice.yaml 2>"$OUT/jobmanager.log" &
jm_pid=$!
"$BIN/sluice-taskmanager" --config conf/sluice.yaml -D taskmanager.numberOfTaskSlots=2 \
    >"$OUT/taskmanager.out" 2>"$OUT/taskmanager.log" &
tm_pid=$!

# wait until the TaskManager has registered
i=0
until grep -q "registered at the JobManager" "$OUT/taskmanager.log" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 "$jm_pid" 2>/dev/null || ! kill -0 "$tm_pid" 2>/dev/null; then
        echo "The local cluster did not start. Logs:" >&2
        tail -n 20 "$OUT/jobmanager.log" "$OUT/taskmanager.log" >&2
        exit 1
    fi
    sleep 0.1
done

case "$JOB" in
*.sql) "$BIN/sluice" sql -f "$JOB" ;;
*) "$BIN/sluice" run -d "$JOB" ;;
esac
cat <<MSG

Sluice is running.
  Dashboard and REST API:  http://localhost:8081/
  List jobs:               $BIN/sluice list
  JobManager log:          $OUT/jobmanager.log
  TaskManager log:         $OUT/taskmanager.log
  Printed rows (print):    $OUT/taskmanager.out  (shown below)
Press Ctrl-C to stop.

MSG
tail -n +1 -f "$OUT/taskmanager.out" &
tail_pid=$!
wait "$jm_pid"
