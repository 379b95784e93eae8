# Sluice's container image: one image for both daemons and the CLI.
#
# Two stages (and a third for docker-compose.ha.yml's ZooKeeper, below;
# docker-compose.s3.yml's S3 server is deploy/s3/Dockerfile). The build stage compiles the JobManager, the TaskManager and
# the `sluice` CLI on Debian bookworm with the -dev packages. The runtime
# stage starts again from bookworm-slim with only the shared libraries the
# binaries load, and holds:
#   /opt/sluice/bin               the three binaries and the entry/health scripts (on PATH)
#   /opt/sluice/share/sluice/web  the dashboard (the JobManager finds it from its binary)
#   /opt/sluice/conf/sluice.yaml  conf/sluice.yaml + deploy/docker/container.yaml
#   /opt/sluice/examples          the example jobs
#   /checkpoints /savepoints /data /ha  mount points for shared volumes (/ha:
#                                 high-availability.storageDir, docs/HA.md)
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
        libcurl4-openssl-dev \
        libevent-dev libprotobuf-c-dev librocksdb-dev librdkafka-dev \
        libmicrohttpd-dev libjansson-dev libssl-dev lemon libzookeeper-mt-dev libpq-dev libicu-dev python3-dev libavro-dev \
        libdw-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" build/bin/sluice-jobmanager build/bin/sluice-taskmanager build/bin/sluice
# The TaskManager keeps its symbol table (.symtab): flame graphs name the
# sampled frames, static functions too, from it (taskmanager/sampler.c).
RUN mkdir -p /out/bin /out/share/sluice /out/conf /out/examples \
 && install -m 0755 build/bin/sluice-jobmanager build/bin/sluice-taskmanager build/bin/sluice \
        deploy/docker-entrypoint.sh deploy/docker-healthcheck.sh /out/bin/ \
 && strip --strip-unneeded /out/bin/sluice-jobmanager /out/bin/sluice \
 && strip --strip-debug /out/bin/sluice-taskmanager \
 && cp -r web /out/share/sluice/web \
 && cp examples/*.json examples/*.sql /out/examples/ \
 && cat conf/sluice.yaml deploy/docker/container.yaml > /out/conf/sluice.yaml

# ZooKeeper for high availability (docker-compose.ha.yml builds this stage
# with `target: zookeeper`): Debian's own server package, one node with its
# data on a volume, four-letter words ruok and srvr allowed for the
# healthcheck. Not the default target: that is the runtime stage below.
FROM debian:bookworm-slim AS zookeeper
ARG DEBIAN_FRONTEND=noninteractive
LABEL sluice.stage=zookeeper
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends zookeeper \
 && rm -rf /var/lib/apt/lists/* \
 && printf '%s\n' 'tickTime=2000' 'initLimit=10' 'syncLimit=5' 'dataDir=/var/lib/zookeeper' \
        'clientPort=2181' '4lw.commands.whitelist=ruok,srvr' 'admin.enableServer=false' \
        > /etc/zookeeper/conf/zoo.cfg \
 && (id zookeeper >/dev/null 2>&1 || useradd --system --user-group --no-create-home zookeeper) \
 && mkdir -p /var/lib/zookeeper && chown zookeeper:zookeeper /var/lib/zookeeper
USER zookeeper
EXPOSE 2181
HEALTHCHECK --interval=5s --timeout=5s --start-period=20s --retries=5 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/2181 && printf ruok >&3 && grep -q imok <&3"]
CMD ["java", "-Dzookeeper.root.logger=INFO,CONSOLE", "-cp", "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar", \
     "org.apache.zookeeper.server.quorum.QuorumPeerMain", "/etc/zookeeper/conf/zoo.cfg"]

FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
LABEL sluice.stage=runtime
# The runtime halves of the build stage's -dev packages, nothing else.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        libevent-2.1-7 libevent-pthreads-2.1-7 libevent-openssl-2.1-7 libssl3 libprotobuf-c1 librocksdb7.8 \
        libcurl4 \
        librdkafka1 libmicrohttpd12 libjansson4 libedit2 libzookeeper-mt2 libpq5 libicu72 libpython3.11 libavro23 \
        libdw1 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 9999 sluice \
 && useradd --system --uid 9999 --gid sluice --home-dir /opt/sluice --no-create-home \
        --shell /usr/sbin/nologin sluice
COPY --from=build /out/ /opt/sluice/
# Named volumes mounted here start as copies of these directories, so they
# belong to `sluice` too.
RUN mkdir -p /opt/sluice/tmp /checkpoints /savepoints /data /ha \
 && chown sluice:sluice /opt/sluice/tmp /checkpoints /savepoints /data /ha \
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
