#!/bin/bash
# tests/docker/run.sh -- the Docker end-to-end test of Sluice, from nothing.
#
# This machine has a Docker engine but no image registry, so the Debian base
# images the Dockerfile starts from are made here: when `debian:bookworm` or
# `debian:bookworm-slim` is missing, a minimal bookworm is debootstrapped
# from the Debian mirror this machine's apt already uses, packed into a
# tarball kept in a cache directory (so later runs skip the download), and
# `docker import`ed under both tags. Then the Sluice image is built and
# tests/integration/test_docker.py brings up the compose cluster under a
# unique project name and runs the end-to-end scenarios against it; the test
# always removes its cluster and volumes, even when it fails.
#
#   tests/docker/run.sh          base images + image + the end-to-end test
#   tests/docker/run.sh base     only make sure the base images exist
#   tests/docker/run.sh build    base images + `docker build` of the image
#   tests/docker/run.sh clean    remove leftover test clusters (sluice-test-*)
#
# Environment:
#   SLUICE_IMAGE          image tag to build and test (default: sluice:test-<pid>,
#                         unique so that concurrent runs never test each
#                         other's build; also tagged sluice:test, and removed
#                         again at the end of a full run)
#   SLUICE_TEST_CACHE     cache directory (default /var/cache/sluice-test
#                         when writable, else ~/.cache/sluice-test)
#   SLUICE_DEBIAN_MIRROR  mirror for debootstrap (default: from apt sources)
#   SLUICE_REFRESH_BASE=1 debootstrap again even when the tarball is cached
#   SLUICE_DOCKER_TIMEOUT seconds the pytest run may take (default 1500)
#   SLUICE_BUILD_FROM=HEAD build the last commit (git archive) instead of the
#                         working tree, e.g. while others have edits in flight
#
# Every failure says what failed and exits non-zero; nothing here skips.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
IMAGE=${SLUICE_IMAGE:-sluice:test-$$}
SUITE=bookworm
BASE_TAGS="debian:$SUITE debian:$SUITE-slim"

die() { echo "docker-test: $*" >&2; exit 1; }
say() { echo "docker-test: $*" >&2; }

need_docker() {
    command -v docker >/dev/null 2>&1 || die "the docker command is not installed"
    docker info >/dev/null 2>&1 ||
        die "the Docker engine does not answer ('docker info' failed: is dockerd running and may $(id -un) use it?)"
}

cache_dir() {
    local d=${SLUICE_TEST_CACHE:-}
    if [ -z "$d" ]; then
        if mkdir -p /var/cache/sluice-test 2>/dev/null && [ -w /var/cache/sluice-test ]; then
            d=/var/cache/sluice-test
        else
            d=${XDG_CACHE_HOME:-$HOME/.cache}/sluice-test
        fi
    fi
    mkdir -p "$d" || die "cannot create the cache directory $d"
    echo "$d"
}

# The first Debian mirror (and security mirror) in this machine's apt
# sources, in either the deb822 or the one-line format.
apt_uri() { # suite-pattern
    local pat=$1 f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        awk -v pat="$pat" '
            /^[[:space:]]*$/ { if (uri != "" && suites ~ pat && !done) { print uri; done = 1 } uri = ""; suites = ""; next }
            /^URIs:/ { uri = $2 }
            /^Suites:/ { suites = $0 }
            END { if (uri != "" && suites ~ pat && !done) print uri }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        awk -v pat="$pat" '$1 == "deb" { u = ($2 ~ /^\[/) ? $3 : $2; s = ($2 ~ /^\[/) ? $4 : $3;
                                         if (s ~ pat) print u }' "$f"
    done
}

debian_mirror() {
    if [ -n "${SLUICE_DEBIAN_MIRROR:-}" ]; then echo "$SLUICE_DEBIAN_MIRROR"; return; fi
    local m
    m=$(apt_uri "(^|[[:space:]])$SUITE([[:space:]]|\$)" | grep -v -- '-security' | head -n 1 || true)
    echo "${m:-http://deb.debian.org/debian}"
}

security_mirror() {
    local m
    m=$(apt_uri "$SUITE-security" | head -n 1 || true)
    echo "${m:-http://deb.debian.org/debian-security}"
}

# debootstrap a minimal bookworm into a cached tarball (once).
make_rootfs_tarball() { # tarball
    local tarball=$1 arch mirror security dir
    arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
    mirror=$(debian_mirror)
    security=$(security_mirror)
    [ "$(id -u)" -eq 0 ] || die "debootstrap needs root to build the base image (run as root, or provide debian:$SUITE yourself)"
    if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
        say "installing debootstrap"
        "$ROOT/scripts/install-deps.sh" || die "installing debootstrap through scripts/install-deps.sh failed"
    fi
    command -v debootstrap >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
    command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed and could not be installed"

    dir=$(mktemp -d "${TMPDIR:-/tmp}/sluice-rootfs.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$dir'" EXIT
    say "debootstrap --variant=minbase $SUITE from $mirror (a few minutes, once)"
    if ! debootstrap --variant=minbase --arch="$arch" "$SUITE" "$dir" "$mirror" >"$dir.log" 2>&1; then
        tail -n 30 "$dir.log" >&2
        die "debootstrap of $SUITE from $mirror failed (full log: $dir.log)"
    fi
    # The same apt sources an official image has: release, updates, security.
    cat >"$dir/etc/apt/sources.list" <<EOF
deb $mirror $SUITE main
deb $mirror $SUITE-updates main
deb $security $SUITE-security main
EOF
    # Keep image layers small: no downloaded packages, no indexes, no docs.
    cat >"$dir/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    printf 'Acquire::Languages "none";\n' >"$dir/etc/apt/apt.conf.d/docker-no-languages"
    # Slim, as Debian's -slim images are: no manuals, docs or translations
    # now or in later installs (copyright files stay).
    cat >"$dir/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
    find "$dir/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
    find "$dir/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
    rm -rf "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/var/lib/apt/lists/* \
           "$dir"/var/cache/apt/archives/*.deb "$dir"/var/cache/apt/*.bin "$dir"/var/log/*.log \
           "$dir"/etc/hostname "$dir"/etc/resolv.conf "$dir"/etc/machine-id
    find "$dir/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
        -exec rm -rf {} + 2>/dev/null || true
    tar -C "$dir" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
        -czf "$tarball.tmp" . || die "packing the root file system into $tarball failed"
    mv "$tarball.tmp" "$tarball"
    rm -rf "$dir" "$dir.log"
    trap - EXIT
    say "cached the $SUITE root file system in $tarball ($(du -h "$tarball" | cut -f1))"
}

ensure_base() {
    need_docker
    local missing="" present="" tag
    for tag in $BASE_TAGS; do
        if docker image inspect "$tag" >/dev/null 2>&1; then present="$present $tag"; else missing="$missing $tag"; fi
    done
    [ -z "$missing" ] && return 0
    local cache tarball
    cache=$(cache_dir)
    tarball="$cache/debian-$SUITE-minbase-$(dpkg --print-architecture 2>/dev/null || echo amd64).tar.gz"
    (
        # one debootstrap at a time, even with concurrent test runs
        flock 9
        if [ "${SLUICE_REFRESH_BASE:-0}" = 1 ] || [ ! -s "$tarball" ]; then
            make_rootfs_tarball "$tarball"
        fi
    ) 9>"$cache/.lock"
    [ -s "$tarball" ] || die "no base tarball at $tarball"
    local first=""
    for tag in $missing; do
        if [ -z "$first" ]; then
            say "docker import $tarball as $tag"
            docker import -c 'CMD ["bash"]' -m "debootstrap --variant=minbase $SUITE" - "$tag" <"$tarball" >/dev/null ||
                die "docker import of $tarball as $tag failed"
            first=$tag
        else
            docker tag "$first" "$tag" || die "docker tag $first $tag failed"
        fi
    done
}

build_image() {
    ensure_base
    say "docker build -t $IMAGE $ROOT"
    local log
    log=$(mktemp "${TMPDIR:-/tmp}/sluice-docker-build.XXXXXX")
    [ -n "${SLUICE_BUILD_FROM:-}" ] && say "building git revision $SLUICE_BUILD_FROM, not the working tree"
    local rc=0
    docker_build -t "$IMAGE" >"$log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        tail -n 40 "$log" >&2
        die "docker build failed (full log: $log)"
    fi
    # sluice:test names the newest build for people; sluice:test-build keeps
    # the newest build stage, whose layers are the next build's cache. Images
    # that earlier builds left untagged go (after an hour, so that no build
    # running at the same time loses its layers).
    docker tag "$IMAGE" sluice:test
    local stage
    stage=$(awk '/^Step [0-9]+\/[0-9]+ : FROM /{ if (seen) { print id; exit } seen = 1 }
                 /^ ---> [0-9a-f]+$/{ id = $2 }' "$log")
    if [ -n "$stage" ]; then docker tag "$stage" sluice:test-build || true; fi
    docker image prune -f --filter label=sluice.stage --filter until=1h >/dev/null 2>&1 || true
    rm -f "$log"
}

# docker build of the working tree, or of a git revision; the legacy
# builder takes FROM images from the local store, where BuildKit in some
# engines insists on asking a registry, which this machine lacks.
docker_build() { # docker-build-args...
    if [ -n "${SLUICE_BUILD_FROM:-}" ]; then
        git -C "$ROOT" archive --format=tar "$SLUICE_BUILD_FROM" |
            DOCKER_BUILDKIT=0 timeout 1800 docker build --force-rm "$@" -
    else
        DOCKER_BUILDKIT=0 timeout 1800 docker build --force-rm "$@" "$ROOT"
    fi
}

clean() {
    need_docker
    local p
    for p in $(docker ps -a --filter label=com.docker.compose.project --format '{{.Label "com.docker.compose.project"}}' |
               sort -u | grep '^sluice-test' || true); do
        say "removing leftover cluster $p"
        docker ps -aq --filter "label=com.docker.compose.project=$p" | xargs -r docker rm -f >/dev/null
        docker volume ls -q --filter "label=com.docker.compose.project=$p" | xargs -r docker volume rm >/dev/null
        docker network ls -q --filter "label=com.docker.compose.project=$p" | xargs -r docker network rm >/dev/null
    done
}

case "${1:-all}" in
base) ensure_base ;;
build) build_image ;;
clean) clean ;;
all)
    start=$(date +%s)
    build_image
    say "image ready after $(($(date +%s) - start)) s; running tests/integration/test_docker.py"
    cd "$ROOT"
    rc=0
    # the system's python3 has pytest (scripts/install-deps.sh), a pyenv one may not
    py=/usr/bin/python3
    [ -x "$py" ] || py=python3
    SLUICE_IMAGE=$IMAGE SLUICE_DOCKER_IMAGE_BUILT=1 timeout "${SLUICE_DOCKER_TIMEOUT:-1500}" \
        "$py" -m pytest -p no:cacheprovider -v -rs tests/integration/test_docker.py || rc=$?
    [ -n "${SLUICE_IMAGE:-}" ] || docker rmi "$IMAGE" >/dev/null 2>&1 || true
    [ $rc -eq 124 ] && say "the test run exceeded ${SLUICE_DOCKER_TIMEOUT:-1500} s and was stopped"
    say "finished in $(($(date +%s) - start)) s"
    exit $rc
    ;;
*) die "unknown command '$1' (use: base, build, clean, or nothing for everything)" ;;
esac
