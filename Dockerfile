# drake's container image for docker or podman: `make image-docker` builds it.
#
#   build:   debian:12 with the -dev packages hack/install-deps.sh installs
#            (the compiler and libraries only, no test tools), make drake
#   runtime: debian:12-slim with only the shared libraries drake links
#            (libevent + libevent-openssl, jansson, yajl, libcurl, OpenSSL,
#            libyaml, nghttp2) and CA certificates; runs as uid/gid 65532,
#            the user the Helm chart's securityContext names.
#
# `make image` needs no engine: it builds a distroless image of drake and the
# libraries it links from this machine's Debian packages (hack/build-image.sh).
#
# VERSION stamps `drake --version` (the Makefile's git describe cannot run
# without .git in the build context).

FROM debian:12 AS build
ARG VERSION=unknown
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      build-essential pkg-config \
      libevent-dev libjansson-dev libyajl-dev libssl-dev libcurl4-openssl-dev libyaml-dev libnghttp2-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY mk/ mk/
COPY cmd/ cmd/
COPY common/ common/
COPY extender/ extender/
COPY kube/ kube/
COPY gang/ gang/
COPY migrate/ migrate/
COPY place/ place/
COPY sim/ sim/
COPY kind/ kind/
COPY tfjob/ tfjob/
COPY pytorchjob/ pytorchjob/
COPY reconciler/ reconciler/
RUN make -j"$(nproc)" build/release/drake VERSION="$VERSION" \
 && build/release/drake --version

FROM debian:12-slim
ARG VERSION=unknown
LABEL org.opencontainers.image.title="drake" \
      org.opencontainers.image.description="kube-scheduler extender and TFJob controller: gang scheduling for TFJobs" \
      org.opencontainers.image.version="$VERSION"
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libevent-2.1-7 libevent-core-2.1-7 libevent-openssl-2.1-7 libjansson4 libyajl2 libcurl4 libssl3 libyaml-0-2 \
      libnghttp2-14 \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 drake \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin drake
COPY --from=build /src/build/release/drake /usr/local/bin/drake
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/drake"]
CMD ["serve", "--help"]
