#!/bin/sh
# A local Sluice cluster for a first run: one JobManager, one TaskManager
# with 2 slots, and the demo job from examples/ (a SQL script, run through
# `sluice sql -f`, or a JSON job graph). Logs and the TaskManager's
# printed rows go to build/local/; the rows are shown here as they come.
# REST_PORT and RPC_PORT (default 8081 and 6123; 0 picks free ones) let two
# people run it on one machine; the URL printed is the one really in use.
# Ctrl-C stops everything cleanly.
set -eu
cd "$(dirname "$0")/.."
BIN=build/bin
JOB=${1:-examples/clicks-tumble.sql}
OUT=build/local
REST_PORT=${REST_PORT:-8081}
RPC_PORT=${RPC_PORT:-6123}
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

"$BIN/sluice-jobmanager" --config conf/sluice.yaml -D "rest.port=$REST_PORT" \
    -D "jobmanager.rpc.port=$RPC_PORT" 2>"$OUT/jobmanager.log" &
jm_pid=$!

# the ports it listens on (the ones asked for, or the free ones it found for 0)
i=0
until grep -q "RPC port [0-9]*, REST port [0-9]*" "$OUT/jobmanager.log" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 "$jm_pid" 2>/dev/null; then
        echo "The JobManager did not start (is port $REST_PORT or $RPC_PORT taken? try" \
             "REST_PORT=0 RPC_PORT=0). Log:" >&2
        tail -n 20 "$OUT/jobmanager.log" >&2
        exit 1
    fi
    sleep 0.1
done
RPC_PORT=$(sed -n 's/.*RPC port \([0-9]*\), REST port \([0-9]*\).*/\1/p' "$OUT/jobmanager.log" | head -n 1)
REST_PORT=$(sed -n 's/.*RPC port \([0-9]*\), REST port \([0-9]*\).*/\2/p' "$OUT/jobmanager.log" | head -n 1)

"$BIN/sluice-taskmanager" --config conf/sluice.yaml -D taskmanager.numberOfTaskSlots=2 \
    -D "jobmanager.rpc.port=$RPC_PORT" >"$OUT/taskmanager.out" 2>"$OUT/taskmanager.log" &
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
*.sql) "$BIN/sluice" -m "localhost:$REST_PORT" sql -f "$JOB" ;;
*) "$BIN/sluice" -m "localhost:$REST_PORT" run -d "$JOB" ;;
esac
cat <<MSG

Sluice is running.
  Dashboard and REST API:  http://localhost:$REST_PORT/
  List jobs:               $BIN/sluice -m localhost:$REST_PORT list
  JobManager log:          $OUT/jobmanager.log
  TaskManager log:         $OUT/taskmanager.log
  Printed rows (print):    $OUT/taskmanager.out  (shown below)
Press Ctrl-C to stop.

MSG
tail -n +1 -f "$OUT/taskmanager.out" &
tail_pid=$!
wait "$jm_pid"
