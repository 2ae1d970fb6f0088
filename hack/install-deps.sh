#!/usr/bin/env bash
# Installs everything drake needs to build, test, fuzz and benchmark, from
# Debian's packages. Safe to run any number of times: apt-get skips what is
# already installed, and the package index is refreshed only when it is older
# than a day (or missing).
#
# usage: hack/install-deps.sh [--torch]
#   --torch   also Debian's python3-torch (186 packages with its Depends,
#             about a minute from nothing), which only examples/torch-train
#             and its targets need (make torch-train-itest,
#             torch-train-image, e2e-real, e2e-real-torch, real-suites;
#             make check installs it in the background, before it builds
#             torch-train's image)
set -euo pipefail

packages=(
  build-essential pkg-config make git ca-certificates openssl curl
  libevent-dev libjansson-dev libyajl-dev libssl-dev libcurl4-openssl-dev libcmocka-dev libyaml-dev libnghttp2-dev
  zlib1g-dev
  clang clang-format clang-tidy cppcheck libclang-rt-14-dev llvm
  valgrind gnuplot-nox jq procps psmisc iproute2
  skopeo busybox-static
  socat libseccomp-dev conntrack iptables
)
case "${1:-}" in
"") ;;
--torch) packages+=(python3-torch) ;;
*) echo "usage: hack/install-deps.sh [--torch]" >&2; exit 2 ;;
esac

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo" >&2; exit 1; }
  sudo=sudo
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

stamp=/var/lib/apt/periodic/update-success-stamp
lists=$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)
if [ -z "$lists" ] && { [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440)" ]; }; then
  echo "install-deps: apt-get update"
  $sudo apt-get update -qq
fi
echo "install-deps: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
