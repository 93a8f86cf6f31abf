# MotionServer container image.
#
#   docker build -t motion-server .
#   docker run --rm -p 8080:8080 --read-only motion-server
#
# Configuration is by MOTION_* environment variables (see `motion-server --help`).
# The worker pool is sized to the container's CPU quota (cgroup cpu.max) unless
# MOTION_THREADS says otherwise.
#
# The base images are build arguments, so the same file builds from a registry (the
# defaults) or from stand-ins (scripts/image-test.sh builds Debian bookworm with debootstrap
# where no registry can be reached). BINARY_STAGE says where the binary comes from: `build`
# compiles it in the Swift image; `prebuilt` takes a release binary built on a bookworm host
# (`make release`) from a build context named `hostbin`:
#
#   buildah bud --build-arg BINARY_STAGE=prebuilt --build-context hostbin=DIR -t motion-server .
ARG SWIFT_IMAGE=docker.io/library/swift:6.3-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim
ARG BINARY_STAGE=build

# ---------------------------------------------------------------------------- build
FROM ${SWIFT_IMAGE} AS build

# Build dependencies of the CMicroHTTPD system-library target.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev pkg-config zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# The whole repository (filtered by .dockerignore), so that Sources/MotionHTTP/openapi.yaml
# stays a link to ./openapi.yaml, which the build embeds into the binary.
COPY . .

# The release build of `make release`, with the Swift runtime linked statically: the binary
# then needs only libc, libstdc++, libgcc_s and libmicrohttpd at run time.
RUN --mount=type=cache,target=/src/.build \
    swift build -c release --static-swift-stdlib --product motion-server \
    && install -D -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/motion-server" /out/motion-server

# ---------------------------------------------------------------------------- prebuilt
# A release binary built outside (scripts/image-test.sh); only used with BINARY_STAGE=prebuilt.
FROM ${RUNTIME_IMAGE} AS prebuilt
# hadolint ignore=DL3022
COPY --from=hostbin motion-server /out/motion-server

# The stage named by BINARY_STAGE.
# hadolint ignore=DL3006
FROM ${BINARY_STAGE} AS binary

# ---------------------------------------------------------------------------- runtime
FROM ${RUNTIME_IMAGE}

# Versions are not pinned: the image should pick up Debian security updates of these two
# libraries on every rebuild, and bookworm's ABI for them is stable.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libstdc++6 \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 motion \
    && useradd --system --uid 10001 --gid motion --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin motion

COPY --from=binary /out/motion-server /usr/local/bin/motion-server

USER 10001:10001
ENV MOTION_HOST=0.0.0.0 \
    MOTION_PORT=8080
EXPOSE 8080

# Liveness over plain bash (/dev/tcp): bookworm-slim has no curl or wget.
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${MOTION_PORT:-8080} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r -t 2 _ status _ <&3 && [ \"$status\" = 200 ]"]

# SIGTERM drains open streams (MOTION_DRAIN_TIMEOUT, default 10 s) and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/motion-server"]
