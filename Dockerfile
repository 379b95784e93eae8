# Sluice's container image: one image for both daemons and the CLI.
#
# Two stages. The build stage compiles the JobManager, the TaskManager and
# the `sluice` CLI on Debian bookworm with the -dev packages. The runtime
# stage starts again from bookworm-slim with only the shared libraries the
# binaries load, and holds:
#   /opt/sluice/bin               the three binaries and the entry/health scripts (on PATH)
#   /opt/sluice/share/sluice/web  the dashboard (the JobManager finds it from its binary)
#   /opt/sluice/conf/sluice.yaml  conf/sluice.yaml + deploy/docker/container.yaml
#   /opt/sluice/examples          the example jobs
#   /checkpoints /savepoints /data  mount points for shared volumes
# and runs as the unprivileged user `sluice` (uid/gid 9999, as Flink's image).
#
#   docker build -t sluice .
#   docker run sluice jobmanager | taskmanager | sluice list | bash
# The container is configured through SLUICE_PROPERTIES (see
# docker-compose.yml and docs/DOCKER.md). Only Dockerfile syntax the classic
# builder knows is used, so it builds with or without BuildKit and offline
# once the two base images are present.

FROM debian:bookworm AS build
ARG DEBIAN_FRONTEND=noninteractive
# Lets tests/docker/run.sh find and remove superseded build stages.
LABEL sluice.stage=build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        build-essential pkg-config protobuf-c-compiler \
        libevent-dev libprotobuf-c-dev librocksdb-dev librdkafka-dev \
        libmicrohttpd-dev libjansson-dev libssl-dev lemon \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" build/bin/sluice-jobmanager build/bin/sluice-taskmanager build/bin/sluice
RUN mkdir -p /out/bin /out/share/sluice /out/conf /out/examples \
 && install -m 0755 build/bin/sluice-jobmanager build/bin/sluice-taskmanager build/bin/sluice \
        deploy/docker-entrypoint.sh deploy/docker-healthcheck.sh /out/bin/ \
 && strip --strip-unneeded /out/bin/sluice-jobmanager /out/bin/sluice-taskmanager /out/bin/sluice \
 && cp -r web /out/share/sluice/web \
 && cp examples/*.json examples/*.sql /out/examples/ \
 && cat conf/sluice.yaml deploy/docker/container.yaml > /out/conf/sluice.yaml

FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
LABEL sluice.stage=runtime
# The runtime halves of the build stage's -dev packages, nothing else.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        libevent-2.1-7 libevent-pthreads-2.1-7 libevent-openssl-2.1-7 libssl3 libprotobuf-c1 librocksdb7.8 \
        librdkafka1 libmicrohttpd12 libjansson4 libedit2 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 9999 sluice \
 && useradd --system --uid 9999 --gid sluice --home-dir /opt/sluice --no-create-home \
        --shell /usr/sbin/nologin sluice
COPY --from=build /out/ /opt/sluice/
# Named volumes mounted here start as copies of these directories, so they
# belong to `sluice` too.
RUN mkdir -p /opt/sluice/tmp /checkpoints /savepoints /data \
 && chown sluice:sluice /opt/sluice/tmp /checkpoints /savepoints /data \
 && if ldd /opt/sluice/bin/sluice-jobmanager /opt/sluice/bin/sluice-taskmanager /opt/sluice/bin/sluice \
        | grep -F 'not found'; then echo 'missing runtime libraries' >&2; exit 1; fi \
 && /opt/sluice/bin/sluice-jobmanager --help >/dev/null \
 && /opt/sluice/bin/sluice-taskmanager --help >/dev/null \
 && /opt/sluice/bin/sluice --help >/dev/null

ENV PATH=/opt/sluice/bin:$PATH \
    SLUICE_CONF_DIR=/opt/sluice/conf
WORKDIR /opt/sluice
USER sluice
# 8081: REST API and dashboard; 6123: RPC (TaskManagers to the JobManager).
# A TaskManager's data port is picked at start (taskmanager.data.port: 0).
EXPOSE 8081 6123
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/opt/sluice/bin/docker-healthcheck.sh"]
ENTRYPOINT ["/opt/sluice/bin/docker-entrypoint.sh"]
CMD ["help"]
