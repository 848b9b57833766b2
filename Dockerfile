# The sizeup operator image: `docker build -t sizeup:0.1.0 .` (any OCI builder works).
#
# Two stages. The build stage compiles on Debian bookworm with exactly the packages of the build
# group in scripts/install-deps.sh; the final stage is bookworm-slim with only the shared libraries
# the binary loads, no compiler, no -dev package, no shell tools beyond the base image, and runs as
# a numeric non-root user (the chart's default securityContext uses the same 65532:65532).
# tests/integration/dockerfile_check.sh checks all of this, since no container engine runs in CI.

FROM debian:bookworm AS build
# Keep this list equal to build_pkgs in scripts/install-deps.sh.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc make pkg-config libcurl4-openssl-dev libcjson-dev libyaml-dev libwebsockets-dev \
        libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what `make` needs: the Makefile and the sources (.dockerignore keeps out everything else,
# in particular a host build/ folder).
COPY Makefile ./
COPY src/ src/
RUN make -j"$(nproc)" CFLAGS="-O2 -g" \
    && objcopy --strip-debug build/sizeup build/sizeup.stripped \
    && ./build/sizeup.stripped version

FROM debian:bookworm-slim
# The runtime halves of the -dev packages above; ca-certificates verifies the API server and any
# HTTPS target.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libcurl4 libcjson1 libyaml-0-2 libwebsockets17 libssl3 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/sizeup.stripped /usr/local/bin/sizeup
LABEL org.opencontainers.image.title="sizeup" \
      org.opencontainers.image.description="Measures how many workers, CPU and memory a pod needs" \
      org.opencontainers.image.version="0.1.0"
# Numeric, so Kubernetes can verify runAsNonRoot without a passwd entry.
USER 65532:65532
# The admin server: /healthz, /readyz, /metrics.
EXPOSE 8081
ENTRYPOINT ["/usr/local/bin/sizeup"]
CMD ["operator"]
