#!/usr/bin/env bash
# fetch-digits.sh OUT - puts scikit-learn's copy of the UCI handwritten
# digits (1,797 rows of 64 pixels and a digit) at OUT, gzip CSV, as Debian's
# python3-sklearn ships it. The package is not installed: `apt-get download`
# fetches the .deb and dpkg-deb unpacks the one file (python3-sklearn is
# Architecture: all, so any machine gets the same bytes). Beside OUT go the
# package's copyright file (python3-sklearn.copyright) and its version
# (python3-sklearn.version), which the image carries along.
# A machine with python3-sklearn installed copies its file instead.
set -euo pipefail
out=${1:?usage: fetch-digits.sh OUT}
member=usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
copyright=usr/share/doc/python3-sklearn/copyright
dir=$(dirname "$out")
mkdir -p "$dir"

die() {
  echo "fetch-digits: $*" >&2
  exit 1
}

if dpkg-query -W -f='${Status}' python3-sklearn 2>/dev/null | grep -q 'install ok installed' &&
  [ -f "/$member" ]; then
  install -m 0644 "/$member" "$out.tmp"
  install -m 0644 "/$copyright" "$dir/python3-sklearn.copyright"
  dpkg-query -W -f='${Version}\n' python3-sklearn >"$dir/python3-sklearn.version"
  mv "$out.tmp" "$out"
  echo "fetch-digits: $out from the installed python3-sklearn $(cat "$dir/python3-sklearn.version")" >&2
  exit 0
fi

work=$(mktemp -d "$dir/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
opts=()
# As root, apt drops to the _apt user, which cannot write here; say so
# instead of letting it warn.
[ "$(id -u)" -ne 0 ] || opts=(-o APT::Sandbox::User=root)
(cd "$work" && apt-get download -q "${opts[@]}" python3-sklearn >&2) ||
  die "apt-get download python3-sklearn failed: is the package index there (apt-get update) and the network up?"
deb=$(find "$work" -maxdepth 1 -name 'python3-sklearn_*.deb' | head -1)
[ -n "$deb" ] || die "apt-get download left no python3-sklearn_*.deb"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" "./$member" "./$copyright" ||
  die "$(basename "$deb") has no $member (a newer scikit-learn may have moved it)"
gzip -t "$work/$member" || die "$(basename "$deb"): $member is not valid gzip"
rows=$(zcat "$work/$member" | wc -l)
[ "$rows" -gt 0 ] || die "$member is empty"
install -m 0644 "$work/$copyright" "$dir/python3-sklearn.copyright"
dpkg-deb -f "$deb" Version >"$dir/python3-sklearn.version"
install -m 0644 "$work/$member" "$out"
echo "fetch-digits: $out ($rows rows) from python3-sklearn $(cat "$dir/python3-sklearn.version")" >&2
