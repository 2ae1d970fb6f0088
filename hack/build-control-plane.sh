#!/usr/bin/env bash
# build-control-plane.sh - build (or reuse) the pinned upstream binaries that
# drake's local cluster runs: etcd, kube-apiserver, kube-scheduler,
# kube-controller-manager, kubectl, kwok and helm.
#
# Everything comes from the Go module proxy through the small wrapper modules
# in hack/gomod/*/ (their go.mod and go.sum are committed, so a build needs no
# checksum service and always resolves the same module graph).
#
# Version choice:
#   Kubernetes v1.36.3 - the newest release on the proxy. Its go directive is
#     go 1.26.0, which this machine's Go 1.26.x satisfies with
#     GOTOOLCHAIN=local, and 1.36 is the line upstream itself builds with
#     Go 1.26 (older lines were made for Go 1.24/1.25 and 1.33 needed a patch
#     to build with a newer Go), so it is the lowest-risk and the newest.
#     Every staging module is pinned to the matching v0.36.3.
#   etcd v3.6.16 - kubeadm and kwokctl pair Kubernetes 1.34-1.36 with etcd
#     3.6; this is the newest 3.6 patch. (Debian's 3.4.23 is below the
#     documented minimum for 1.31+ and end of life.)
#   kwok v0.8.0 - built against the same k8s libraries (v0.36.x). Note that
#     v0.8.0 has no built-in stages: config/kwok-stages.yaml supplies them.
#   helm v3.22.0 - newest helm v3; its go directive is 1.26.0.
#
# Binaries are cached under ${DRAKE_CACHE_DIR:-$HOME/.cache/drake}/bin/,
# one folder per component keyed by its version and a hash of its wrapper
# go.mod/go.sum, so a second run (also CI's fresh clone on the same machine)
# only checks that the files exist. Symlinks to the cached files are put in
# ${DRAKE_CP_BIN:-build/control-plane/bin}.
#
# usage: hack/build-control-plane.sh [--print-bindir] [component...]
#   components: etcd k8s kwok helm (default: all)
#   --print-bindir  print the symlink folder and exit (no build)
# env: DRAKE_CACHE_DIR, DRAKE_CP_BIN, GO_BUILD_P (parallelism, default 2),
#      FORCE=1 (rebuild even if cached)
set -euo pipefail

K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.22.0

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${DRAKE_CACHE_DIR:-$HOME/.cache/drake}
bindir=${DRAKE_CP_BIN:-$root/build/control-plane/bin}
case "$bindir" in /*) ;; *) bindir=$root/$bindir ;; esac

if [ "${1:-}" = --print-bindir ]; then
  echo "$bindir"
  exit 0
fi

export GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"
p=${GO_BUILD_P:-2}

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(etcd kwok k8s helm)

log() { printf '[control-plane %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# key DIR VERSION -> VERSION-<8 hex of the wrapper's go.mod+go.sum>
key() {
  local h
  h=$(cat "$root/hack/gomod/$1/go.mod" "$root/hack/gomod/$1/go.sum" | sha256sum | cut -c1-8)
  echo "$2-$h"
}

# ensure NAME VERSION "BIN..." "PKG..." LDFLAGS
ensure() {
  local name=$1 version=$2 bins=$3 pkgs=$4 ldflags=$5
  local dir="$cache/bin/$name-$(key "$name" "$version")"
  local have=1 b
  for b in $bins; do [ -x "$dir/$b" ] || have=0; done
  if [ "$have" = 1 ] && [ "${FORCE:-0}" != 1 ]; then
    log "$name $version: cached in $dir"
  else
    log "$name $version: building $bins (go build -p $p; a cold k8s build takes tens of minutes on 2 cores)"
    local t0 tmp
    t0=$(date +%s)
    tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # shellcheck disable=SC2086
    local out="$tmp/"
    [ "$(wc -w <<<"$bins")" = 1 ] && out="$tmp/$bins"
    (cd "$root/hack/gomod/$name" && go build -p "$p" -trimpath -ldflags "$ldflags" -o "$out" $pkgs)
    for b in $bins; do [ -x "$tmp/$b" ] || { log "$name: $b missing after build"; exit 1; }; done
    rm -rf "$dir"
    mv "$tmp" "$dir"
    log "$name $version: built in $(($(date +%s) - t0))s"
  fi
  mkdir -p "$bindir"
  for b in $bins; do ln -sfn "$dir/$b" "$bindir/$b"; done
}

for c in "${components[@]}"; do
  case "$c" in
  etcd)
    ensure etcd "$ETCD_VERSION" etcd go.etcd.io/etcd/server/v3 \
      "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION"
    ;;
  k8s)
    minor=${K8S_VERSION#v1.}
    minor=${minor%%.*}
    ensure k8s "$K8S_VERSION" "kube-apiserver kube-scheduler kube-controller-manager kubectl" \
      "k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl" \
      "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.gitCommit=module-proxy-$K8S_VERSION -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitTreeState=clean"
    ;;
  kwok)
    ensure kwok "$KWOK_VERSION" kwok sigs.k8s.io/kwok/cmd/kwok \
      "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"
    ;;
  helm)
    minor=${K8S_VERSION#v1.}
    minor=${minor%%.*}
    ensure helm "$HELM_VERSION" helm helm.sh/helm/v3/cmd/helm \
      "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
    ;;
  *)
    echo "build-control-plane: unknown component $c (etcd k8s kwok helm)" >&2
    exit 2
    ;;
  esac
done
log "binaries in $bindir"
