#!/usr/bin/env bash
# build-control-plane.sh - build (or reuse) the pinned upstream binaries that
# drake's local cluster runs: etcd, kube-apiserver, kube-scheduler,
# kube-controller-manager, kubectl, kwok and helm; and, for real nodes
# (hack/cluster-up.sh --real-nodes), kubelet, kube-proxy, containerd, runc,
# the CNI plugins and CoreDNS.
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
#   kubelet, kube-proxy - the same Kubernetes source and pins as the control
#     plane (their own wrapper, hack/gomod/kubelet, so adding them did not
#     change the control plane's cache key).
#   containerd v2.3.7 - kubelet 1.36 supports containerd 2.2 and 2.3 only
#     (containerd's RELEASES.md; Debian 12's 1.6 is end of life); the newest
#     2.3 patch. No btrfs, devmapper or zfs snapshotters (overlayfs is used).
#   runc v1.4.3 - the newest 1.4 patch; cgo with Debian's libseccomp-dev.
#   CNI plugins v1.10.0 - bridge, host-local, loopback, portmap.
#   CoreDNS v1.14.7 - its kubernetes plugin answers the cluster domain, so a
#     headless Service's pod names (TF_CONFIG's hosts) resolve.
#   Volcano v1.14.1 (component volcano, never built by default) - vc-scheduler
#     for make bench-replay's volcano arm. Volcano's go.mod replaces
#     volcano.sh/apis with a staging folder its module zip does not hold, so
#     the wrapper (hack/gomod/volcano) copies Volcano's other replaces and
#     points volcano.sh/apis at the published v1.14.0. v1.15.x cannot be
#     built so: the proxy serves no volcano.sh/apis v1.15.x, and v1.14.0
#     lacks the QueueAllocationGateKey that v1.15's pkg/scheduler/api uses.
#     Its CRDs (config/crd/volcano/bases of the same module) are copied
#     beside the binary, linked as volcano-crd/ in the bin folder.
#
# Binaries are cached under ${DRAKE_CACHE_DIR:-$HOME/.cache/drake}/bin/,
# one folder per component keyed by its version and a hash of its wrapper
# go.mod/go.sum, so a second run (also CI's fresh clone on the same machine)
# only checks that the files exist. Symlinks to the cached files are put in
# ${DRAKE_CP_BIN:-build/control-plane/bin}.
#
# usage: hack/build-control-plane.sh [--print-bindir] [component...]
#   components: etcd k8s kwok helm (default: these four), the node
#     components kubelet containerd runc cni coredns ("node": all five), and
#     volcano (vc-scheduler and Volcano's CRDs)
#   --print-bindir  print the symlink folder and exit (no build)
# env: DRAKE_CACHE_DIR, DRAKE_CP_BIN, GO_BUILD_P (parallelism, default 2),
#      FORCE=1 (rebuild even if cached)
set -euo pipefail

K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.22.0
CONTAINERD_VERSION=v2.3.7
RUNC_VERSION=v1.4.3
CNI_VERSION=v1.10.0
COREDNS_VERSION=v1.14.7
VOLCANO_VERSION=v1.14.1

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

components=()
for c in "$@"; do
  if [ "$c" = node ]; then components+=(kubelet containerd runc cni coredns); else components+=("$c"); fi
done
[ ${#components[@]} -gt 0 ] || components=(etcd kwok k8s helm)

log() { printf '[control-plane %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# key DIR VERSION -> VERSION-<8 hex of the wrapper's go.mod+go.sum>
key() {
  local h
  h=$(cat "$root/hack/gomod/$1/go.mod" "$root/hack/gomod/$1/go.sum" | sha256sum | cut -c1-8)
  echo "$2-$h"
}

# [TAGS=...] [CGO=1] [SUB=dir] ensure NAME VERSION "BIN..." "PKG..." LDFLAGS
#   TAGS: go build -tags; CGO=1: build with cgo; SUB: link the binaries into
#   that subfolder of the bin folder (the CNI plugins get their own, which
#   containerd's CNI configuration names); POST: a function run on the new
#   folder after the build, before it is moved into the cache; KEEP: more
#   names in the cached folder that must exist (what POST made), linked too
ensure() {
  local name=$1 version=$2 bins=$3 pkgs=$4 ldflags=$5
  local dir="$cache/bin/$name-$(key "$name" "$version")"
  local have=1 b
  for b in $bins ${KEEP:-}; do [ -e "$dir/$b" ] || have=0; done
  if [ "$have" = 1 ] && [ "${FORCE:-0}" != 1 ]; then
    log "$name $version: cached in $dir"
  else
    log "$name $version: building $bins (go build -p $p; cold on 2 cores: k8s about 5-10 min, kubelet 1-6, containerd 3, CoreDNS 4-5, Volcano 4)"
    local t0 tmp
    t0=$(date +%s)
    tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # shellcheck disable=SC2086
    local out="$tmp/"
    [ "$(wc -w <<<"$bins")" = 1 ] && out="$tmp/$bins"
    (cd "$root/hack/gomod/$name" && CGO_ENABLED=${CGO:-0} go build -p "$p" -trimpath \
      ${TAGS:+-tags "$TAGS"} -ldflags "$ldflags" -o "$out" $pkgs)
    for b in $bins; do [ -x "$tmp/$b" ] || { log "$name: $b missing after build"; exit 1; }; done
    [ -z "${POST:-}" ] || "$POST" "$tmp"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    log "$name $version: built in $(($(date +%s) - t0))s"
  fi
  local to=$bindir${SUB:+/$SUB}
  mkdir -p "$to"
  # a rename, so that scripts running side by side (hack/e2e-parallel.sh)
  # never see the link missing
  for b in $bins ${KEEP:-}; do
    ln -sfn "$dir/$b" "$to/.$b.$$"
    mv -Tf "$to/.$b.$$" "$to/$b"
  done
}

# volcano_crds DIR: Volcano's CRDs from the module's own source, into
# DIR/volcano-crd (vc-scheduler watches PodGroups, Queues, HyperNodes,
# NodeShards and Numatopologies; all of config/crd/volcano/bases go in)
volcano_crds() {
  local src
  src=$(cd "$root/hack/gomod/volcano" && go list -m -f '{{.Dir}}' volcano.sh/volcano)
  [ -d "$src/config/crd/volcano/bases" ] || { log "volcano: no CRDs in $src"; exit 1; }
  mkdir -p "$1/volcano-crd"
  cp "$src"/config/crd/volcano/bases/*.yaml "$1/volcano-crd/"
}

minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.gitCommit=module-proxy-$K8S_VERSION -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitTreeState=clean"
for c in "${components[@]}"; do
  case "$c" in
  etcd)
    ensure etcd "$ETCD_VERSION" etcd go.etcd.io/etcd/server/v3 \
      "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION"
    ;;
  k8s)
    ensure k8s "$K8S_VERSION" "kube-apiserver kube-scheduler kube-controller-manager kubectl" \
      "k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl" \
      "$k8s_ldflags"
    ;;
  kubelet)
    ensure kubelet "$K8S_VERSION" "kubelet kube-proxy" \
      "k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy" "$k8s_ldflags"
    ;;
  containerd)
    TAGS="no_btrfs no_devmapper no_zfs" ensure containerd "$CONTAINERD_VERSION" "containerd containerd-shim-runc-v2 ctr" \
      "github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/ctr" \
      "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION -X github.com/containerd/containerd/v2/version.Revision=module-proxy"
    ;;
  runc)
    TAGS=seccomp CGO=1 ensure runc "$RUNC_VERSION" runc github.com/opencontainers/runc \
      "-s -w -X main.version=${RUNC_VERSION#v} -X main.gitCommit=module-proxy"
    ;;
  cni)
    SUB=cni ensure cni "$CNI_VERSION" "bridge host-local loopback portmap" \
      "github.com/containernetworking/plugins/plugins/main/bridge github.com/containernetworking/plugins/plugins/ipam/host-local github.com/containernetworking/plugins/plugins/main/loopback github.com/containernetworking/plugins/plugins/meta/portmap" \
      "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_VERSION"
    ;;
  coredns)
    ensure coredns "$COREDNS_VERSION" coredns github.com/coredns/coredns \
      "-s -w -X github.com/coredns/coredns/coremain.GitCommit=module-proxy-$COREDNS_VERSION"
    ;;
  volcano)
    POST=volcano_crds KEEP=volcano-crd ensure volcano "$VOLCANO_VERSION" vc-scheduler volcano.sh/volcano/cmd/scheduler \
      "-s -w -X volcano.sh/volcano/pkg/version.Version=$VOLCANO_VERSION -X volcano.sh/volcano/pkg/version.GitSHA=module-proxy"
    ;;
  kwok)
    ensure kwok "$KWOK_VERSION" kwok sigs.k8s.io/kwok/cmd/kwok \
      "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"
    ;;
  helm)
    ensure helm "$HELM_VERSION" helm helm.sh/helm/v3/cmd/helm \
      "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
    ;;
  *)
    echo "build-control-plane: unknown component $c (etcd k8s kwok helm kubelet containerd runc cni coredns node volcano)" >&2
    exit 2
    ;;
  esac
done
log "binaries in $bindir"
