#!/bin/sh
# Installs the Debian packages Sluice needs to build, run and test.
# Idempotent: packages already present are not touched, and apt is only
# consulted when something is missing.
set -eu

PKGS="build-essential pkg-config clang
libevent-dev libprotobuf-c-dev protobuf-c-compiler librocksdb-dev librdkafka-dev
libmicrohttpd-dev libjansson-dev libssl-dev lemon libclang-rt-14-dev libedit2
python3 python3-dev python3-pytest python3-pytest-xdist python3-requests python3-selenium openssl
chromium chromium-driver curl procps iproute2
debootstrap
zookeeper libzookeeper-mt-dev
postgresql libpq-dev libavro-dev
libicu-dev
libcurl4-openssl-dev
libdw-dev"

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
