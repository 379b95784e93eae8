#!/bin/sh
# docker-entrypoint.sh -- the Sluice image's entry point.
#
#   jobmanager [ARGS]    run sluice-jobmanager (REST + dashboard on 8081, RPC on 6123)
#   taskmanager [ARGS]   run sluice-taskmanager (registers with jobmanager.rpc.address)
#   help                 print this text
#   anything else        run it as a command (e.g. `sluice list`, `bash`)
#
# The daemons read their configuration themselves: the image's
# /opt/sluice/conf/sluice.yaml (the repository's conf/sluice.yaml plus the
# container defaults of deploy/docker/container.yaml), then the
# SLUICE_PROPERTIES environment variable (YAML lines, as Flink's image reads
# FLINK_PROPERTIES), then any -D key=value arguments. A --config FILE
# argument replaces the image's file. The daemon replaces this shell (exec),
# so it is PID 1, gets SIGTERM from `docker stop` and shuts down cleanly;
# started as root, it drops to the `sluice` user first.
set -eu

CONF_DIR=${SLUICE_CONF_DIR:-/opt/sluice/conf}

usage() {
    echo "Usage: docker run IMAGE COMMAND"
    sed -n '4,7p' "$0" | sed 's/^# \{0,1\}//'
}

# Root is only needed by whoever started us that way; the daemons never need it.
as_sluice() {
    if [ "$(id -u)" = 0 ] && id sluice >/dev/null 2>&1; then
        exec setpriv --reuid=sluice --regid=sluice --init-groups -- "$@"
    fi
    exec "$@"
}

# Say once, at start, what the daemon will be told beyond the file, so that
# `docker compose logs` shows the effective overrides.
show_properties() {
    if [ -n "${SLUICE_PROPERTIES:-}" ]; then
        echo "docker-entrypoint: SLUICE_PROPERTIES:" >&2
        printf '%s\n' "$SLUICE_PROPERTIES" | grep -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' |
            grep -v -i 'auth-token' | sed 's/^/    /' >&2 || true
    fi
}

case "${1:-help}" in
jobmanager | taskmanager)
    role=$1
    shift
    show_properties
    as_sluice "sluice-$role" --config "$CONF_DIR/sluice.yaml" "$@"
    ;;
help | --help | -h)
    usage
    ;;
*)
    as_sluice "$@"
    ;;
esac
