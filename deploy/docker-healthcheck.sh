#!/bin/bash
# docker-healthcheck.sh -- the Sluice image's HEALTHCHECK: is this daemon
# doing its job?
#
# The program running as PID 1 says which daemon this container is:
#   sluice-jobmanager   healthy when its REST API answers GET /overview, or,
#                       as a high-availability standby (which answers 503
#                       there), when GET /config says STANDBY;
#   sluice-taskmanager  healthy when the JobManager lists this TaskManager
#                       in GET /taskmanagers, i.e. it is registered (its id
#                       is taskmanager.resource-id, or by default starts
#                       with the container's hostname and a colon);
#   anything else       healthy (a one-off command has nothing to check).
#
# The keys it needs (rest.port, rest.bind-address, rest.address,
# jobmanager.rpc.address, taskmanager.resource-id) are looked up the way
# the daemon looked them up: the configuration file (--config FILE on PID
# 1's command line, else $SLUICE_CONF_DIR/sluice.yaml), then
# SLUICE_PROPERTIES, then PID 1's -D arguments; the last setting wins.
# Only flat `key: value` lines are understood, which is how the shipped
# files and the compose file write them. HTTP goes through bash's /dev/tcp,
# so the image needs no curl. Exit 0 = healthy, 1 = unhealthy, with one line
# saying why (docker inspect shows it).
set -u

CONF_DIR=${SLUICE_CONF_DIR:-/opt/sluice/conf}

mapfile -d '' ARGS </proc/1/cmdline 2>/dev/null || ARGS=()
PROG=$(basename -- "${ARGS[0]:-}")

conf_file=$CONF_DIR/sluice.yaml
for ((i = 1; i < ${#ARGS[@]}; i++)); do
    case "${ARGS[i]}" in
    --config) conf_file=${ARGS[i + 1]:-} ;;
    --config=*) conf_file=${ARGS[i]#--config=} ;;
    esac
done

# Print the value of KEY in YAML-ish TEXT (last `KEY: value` line), or nothing.
yaml_value() { # key text
    printf '%s\n' "$2" | awk -v key="$1" '
        {
            line = $0
            sub(/^[ \t]+/, "", line)
            if (index(line, key ":") != 1) next
            v = substr(line, length(key) + 2)
            sub(/^[ \t]+/, "", v)
            if (v ~ /^"/) { v = substr(v, 2); sub(/".*$/, "", v) }
            else if (v ~ /^\047/) { v = substr(v, 2); sub(/\047.*$/, "", v) }
            else { sub(/[ \t]+#.*$/, "", v); sub(/[ \t]+$/, "", v) }
            val = v; found = 1
        }
        END { if (found) print val }'
}

conf_get() { # key default
    local key=$1 val=$2 v
    if [ -r "$conf_file" ]; then
        v=$(yaml_value "$key" "$(cat "$conf_file")")
        [ -n "$v" ] && val=$v
    fi
    if [ -n "${SLUICE_PROPERTIES:-}" ]; then
        v=$(yaml_value "$key" "$SLUICE_PROPERTIES")
        [ -n "$v" ] && val=$v
    fi
    for ((i = 1; i < ${#ARGS[@]}; i++)); do
        case "${ARGS[i]}" in
        -D) [[ "${ARGS[i + 1]:-}" == "$key="* ]] && val=${ARGS[i + 1]#"$key="} ;;
        -D"$key"=*) val=${ARGS[i]#-D"$key"=} ;;
        esac
    done
    printf '%s' "$val"
}

# GET http://host:port/path; the body on stdout; fails unless the status is 200.
http_get() { # host port path
    local resp status
    exec 3<>"/dev/tcp/$1/$2" 2>/dev/null || { echo "cannot connect to $1:$2" >&2; return 1; }
    printf 'GET %s HTTP/1.0\r\nHost: %s:%s\r\nConnection: close\r\n\r\n' "$3" "$1" "$2" >&3
    resp=$(cat <&3)
    exec 3<&-
    status=$(printf '%s' "$resp" | head -n 1 | tr -d '\r')
    case "$status" in
    "HTTP/1."?" 200"*) printf '%s' "${resp#*$'\r\n\r\n'}" ;;
    *) echo "GET $3 from $1:$2 answered '${status:-nothing}'" >&2; return 1 ;;
    esac
}

is_loopback() { case "$1" in "" | localhost | 127.* | ::1 | 0.0.0.0 | ::) return 0 ;; esac; return 1; }

case "$PROG" in
sluice-jobmanager)
    port=$(conf_get rest.port 8081)
    host=$(conf_get rest.bind-address 127.0.0.1)
    is_loopback "$host" && host=127.0.0.1
    if ! body=$(http_get "$host" "$port" /overview 2>/dev/null); then
        conf=$(http_get "$host" "$port" /config) || exit 1
        case "$conf" in
        *'"role":"STANDBY"'*) echo "standby JobManager, REST answers on $host:$port"; exit 0 ;;
        *) echo "GET /overview on $host:$port failed and it is no standby"; exit 1 ;;
        esac
    fi
    case "$body" in
    *'"slots-total"'*) echo "REST answers on $host:$port"; exit 0 ;;
    *) echo "GET /overview on $host:$port did not return an overview"; exit 1 ;;
    esac
    ;;
sluice-taskmanager)
    port=$(conf_get rest.port 8081)
    host=$(conf_get rest.address localhost)
    is_loopback "$host" && host=$(conf_get jobmanager.rpc.address localhost)
    id=$(conf_get taskmanager.resource-id "")
    if [ -n "$id" ]; then want="\"$id\""; else want="\"$(hostname):"; fi
    body=$(http_get "$host" "$port" /taskmanagers) || exit 1
    case "$body" in
    *"$want"*) echo "registered with the JobManager at $host:$port"; exit 0 ;;
    *) echo "not (yet) registered: the JobManager at $host:$port does not list ${want#\"}"; exit 1 ;;
    esac
    ;;
*)
    echo "PID 1 is '${PROG:-unknown}', not a Sluice daemon: nothing to check"
    exit 0
    ;;
esac
