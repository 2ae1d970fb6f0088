#!/usr/bin/env bash
# image-check.sh - checks of drake's OCI image (make image) made on the image's
# own contents, run by `make image-check` (and so by `make check`):
#   - the archive: oci-layout, index.json naming the image for containerd and
#     podman, manifest.json naming it for docker, every blob's digest and size,
#     and skopeo reads it both as an OCI archive and as a docker archive;
#   - the config: user 65532:65532 (the chart's runAsUser), entrypoint drake
#     itself (the chart passes `args:` only), port 8443, the version label;
#   - the root, unpacked from the layer: every shared library drake needs
#     resolves inside it (the image's own loader, chrooted), every symbolic
#     link stays inside it, drake runs there as 65532:65532 and prints the
#     version, passwd/group/tmp/CA bundle as a distroless image has them, and
#     packages.txt names the Debian package of every file copied in;
#   - reproducible: two more builds into two folders give the same digest;
#   - the Dockerfile copies every source folder the Makefile compiles; with a
#     working docker or podman, its image holds every file of this one and
#     runs the same user and entrypoint (else: skipped).
# Needs root (chroot). Each check prints ok/FAIL; the last line is
#   image-check: N passed, N failed
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export VERSION=${VERSION:-$(git describe --always --dirty 2>/dev/null || echo unknown)}
export IMAGE=${IMAGE:-ghcr.io/drake-scheduler/drake}
export IMAGE_TAG=${IMAGE_TAG:-$VERSION}
ref=$IMAGE:$IMAGE_TAG
passed=0 failed=0
ok() { echo "  ok   $*"; passed=$((passed + 1)); }
bad() { echo "  FAIL $*"; failed=$((failed + 1)); }
# check DESC CMD...: ok when CMD succeeds
check() {
  local desc=$1
  shift
  if "$@"; then ok "$desc"; else bad "$desc"; fi
}
# jqe ARGS...: jq -e, quietly; quiet CMD...: CMD with no output (for check)
jqe() { jq -e "$@" >/dev/null; }
quiet() { "$@" >/dev/null 2>&1; }
finish() {
  echo "image-check: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

mkdir -p build
tmp=$(mktemp -d "$PWD/build/image-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "image-check: build"
if file=$(hack/build-image.sh --which drake 2>"$tmp/build.log") && [ -f "$file" ]; then
  ok "hack/build-image.sh built $file"
else
  bad "hack/build-image.sh --which drake"
  sed 's/^/    /' "$tmp/build.log"
  finish
fi

echo "image-check: archive"
lay=$tmp/layout
mkdir -p "$lay"
tar -xf "$file" -C "$lay"
check "oci-layout says imageLayoutVersion 1.0.0" \
  jqe '.imageLayoutVersion == "1.0.0"' "$lay/oci-layout"
check "index.json: one manifest, named $ref for containerd/podman, tag $IMAGE_TAG as ref.name" \
  jqe --arg ref "$ref" --arg tag "$IMAGE_TAG" '(.manifests | length) == 1 and
    .manifests[0].annotations["io.containerd.image.name"] == $ref and
    .manifests[0].annotations["org.opencontainers.image.ref.name"] == $tag and
    .manifests[0].mediaType == "application/vnd.oci.image.manifest.v1+json"' "$lay/index.json"
manifest=$(jq -r '.manifests[0].digest' "$lay/index.json" | sed 's/^sha256://')
blob() { echo "$lay/blobs/sha256/$1"; }
config=$(jq -r '.config.digest' "$(blob "$manifest")" 2>/dev/null | sed 's/^sha256://')
layer=$(jq -r '.layers[0].digest' "$(blob "$manifest")" 2>/dev/null | sed 's/^sha256://')
check "manifest.json names $ref for docker and points at the same config and layer" \
  jqe --arg ref "$ref" --arg c "blobs/sha256/$config" --arg l "blobs/sha256/$layer" \
  'length == 1 and .[0].RepoTags == [$ref] and .[0].Config == $c and .[0].Layers == [$l]' \
  "$lay/manifest.json"
# blobs_match: every blob's name is its sha256, and each descriptor's size
# and digest match the blob it names
blobs_match() {
  local f d s
  for f in "$lay"/blobs/sha256/*; do
    [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] || { echo "    $f: digest differs"; return 1; }
  done
  while read -r d s; do
    [ -f "$(blob "${d#sha256:}")" ] && [ "$(stat -c %s "$(blob "${d#sha256:}")")" = "$s" ] ||
      { echo "    $d: missing or not $s bytes"; return 1; }
  done < <(jq -r '.manifests[] | "\(.digest) \(.size)"' "$lay/index.json"
    jq -r '(.config, .layers[]) | "\(.digest) \(.size)"' "$(blob "$manifest")")
  [ "$(find "$lay/blobs/sha256" -type f | wc -l)" = 3 ]
}
check "every blob matches its digest and size; one layer" blobs_match
check "the layer's uncompressed digest is the config's diff_id" \
  test "sha256:$(gzip -dc "$(blob "$layer")" | sha256sum | cut -d' ' -f1)" = \
  "$(jq -r '.rootfs.diff_ids[0]' "$(blob "$config")")"
check "skopeo reads it as an OCI archive (tag $IMAGE_TAG)" \
  quiet skopeo inspect --raw "oci-archive:$file:$IMAGE_TAG"
check "skopeo reads it as a docker archive named $ref" \
  bash -c 'skopeo list-tags "docker-archive:$1" | jq -e --arg r "$2" ".Tags == [\$r]" >/dev/null' _ "$file" "$ref"

echo "image-check: config"
cfg=$(blob "$config")
check "user 65532:65532 (the chart's runAsUser/runAsGroup)" jqe '.config.User == "65532:65532"' "$cfg"
check "entrypoint /usr/local/bin/drake: the chart's args: [serve, ...] run drake serve" \
  jqe '.config.Entrypoint == ["/usr/local/bin/drake"]' "$cfg"
check "cmd serve --help, port 8443/tcp, linux/amd64" \
  jqe '.config.Cmd == ["serve", "--help"] and .config.ExposedPorts == {"8443/tcp": {}} and
    .os == "linux" and .architecture == "amd64"' "$cfg"
check "label org.opencontainers.image.version is $VERSION" \
  jqe --arg v "$VERSION" '.config.Labels["org.opencontainers.image.version"] == $v' "$cfg"

echo "image-check: root"
root=$tmp/root
mkdir -p "$root"
if ! tar -xzf "$(blob "$layer")" -C "$root" --numeric-owner; then
  bad "unpack the layer"
  finish
fi
ok "unpacked the layer: $(find "$root" -type f | wc -l) files, $(du -sh "$root" | cut -f1)"
if [ "$(id -u)" != 0 ]; then
  bad "the chroot checks need root"
  finish
fi
interp=$(LC_ALL=C readelf -l "$root/usr/local/bin/drake" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p')
# libs_resolve: the image's loader lists drake's libraries from inside the
# root: none missing, each found at a path that exists in the root
libs_resolve() {
  local out line p n=0
  out=$(chroot "$root" "$interp" --list /usr/local/bin/drake 2>&1) || { echo "$out" | sed 's/^/    /'; return 1; }
  if grep -q 'not found' <<<"$out"; then
    grep 'not found' <<<"$out" | sed 's/^/    /'
    return 1
  fi
  while read -r line; do
    case "$line" in
    *" => /"*) p=${line#* => } && p=${p%% (*} ;;
    *) continue ;;
    esac
    [ -e "$root$p" ] || { echo "    $p: not in the image"; return 1; }
    n=$((n + 1))
  done <<<"$out"
  echo "    $n libraries via $interp" >"$tmp/libs.txt"
  [ "$n" -gt 0 ]
}
if libs_resolve; then ok "every shared library drake needs resolves inside the image ($(sed 's/^ *//' "$tmp/libs.txt"))"; else
  bad "every shared library drake needs resolves inside the image"; fi
# links_inside: every symbolic link resolves to something in the root
links_inside() {
  local l r rc=0
  while IFS= read -r -d '' l; do
    case "$(readlink "$l")" in /*)
      echo "    ${l#"$root"} -> $(readlink "$l"): absolute (resolves outside the root when unpacked)"
      rc=1
      continue
      ;;
    esac
    r=$(realpath -m "$l")
    [[ $r == "$root"/* && -e $r ]] || { echo "    ${l#"$root"} -> $(readlink "$l"): dangling or outside"; rc=1; }
  done < <(find "$root" -type l -print0)
  return $rc
}
check "every symbolic link is relative and resolves inside the image" links_inside
out=$(chroot --userspec=65532:65532 "$root" /usr/local/bin/drake version 2>&1)
check "drake version as 65532:65532 in the image prints 'drake $VERSION' (got '$out')" \
  test "$out" = "drake $VERSION"
check "the default command (drake serve --help) runs as 65532:65532" \
  bash -c 'chroot --userspec=65532:65532 "$1" /usr/local/bin/drake serve --help | grep -q -- --tls-cert' _ "$root"
check "passwd and group have root and 65532" \
  bash -c 'grep -q "^root:x:0:0:" "$1/etc/passwd" && grep -q "^[a-z]*:x:65532:65532:" "$1/etc/passwd" &&
    grep -q "^root:x:0:" "$1/etc/group" && grep -q "^[a-z]*:x:65532:" "$1/etc/group"' _ "$root"
check "/tmp is mode 1777, every file owned by 0:0" \
  bash -c '[ "$(stat -c %a "$1/tmp")" = 1777 ] && [ -z "$(find "$1" ! -uid 0 -o ! -gid 0 | head -1)" ]' _ "$root"
check "the CA bundle /etc/ssl/certs/ca-certificates.crt has certificates" \
  bash -c '[ "$(grep -c "BEGIN CERTIFICATE" "$1/etc/ssl/certs/ca-certificates.crt")" -gt 50 ]' _ "$root"
# provenance: packages.txt names a source for every regular file outside
# /usr/share/doc and /etc, and a copyright file for every package it names
provenance() {
  local list=$root/usr/share/doc/drake-image/packages.txt f p rc=0
  [ -f "$list" ] || { echo "    no packages.txt"; return 1; }
  while IFS= read -r f; do
    grep -q "^/$f	" "$list" || { echo "    /$f: not in packages.txt"; rc=1; }
  done < <(cd "$root" && find usr etc -type f ! -path 'usr/share/doc/*' ! -path 'etc/passwd' \
    ! -path 'etc/group' ! -path 'etc/nsswitch.conf' | LC_ALL=C sort)
  while IFS= read -r p; do
    [ -f "$root/usr/share/doc/$p/copyright" ] || { echo "    $p: no /usr/share/doc/$p/copyright"; rc=1; }
  done < <(awk -F'\t' '!/^#/ && $2 ~ /^[a-z0-9][a-z0-9.+-]+$/ {print $2}' "$list" | sort -u)
  return $rc
}
check "packages.txt gives each copied file's Debian package; each package's copyright is there" provenance

echo "image-check: reproducible"
# Both builds take drake from the image itself, so a source edit (a rebuilt
# binary) between them cannot make them differ: the digest must be the
# image's own.
digest=sha256:$manifest
cp "$root/usr/local/bin/drake" "$tmp/drake"
rebuild() {
  local f
  f=$(DRAKE_BIN=$tmp/drake FORCE=1 hack/build-image.sh --which drake --out "$tmp/$1" 2>"$tmp/$1.log") &&
    sed -n 's/^manifest=//p' "${f%.tar}.txt"
}
d1=$(rebuild a)
d2=$(rebuild b)
check "two more builds into two folders give the image's manifest digest ($digest, ${d1:-failed}, ${d2:-failed})" \
  test "$d1" = "$digest" -a "$d2" = "$digest"
check "and byte-identical archives" cmp -s "$tmp/a/drake-$IMAGE_TAG.oci.tar" "$tmp/b/drake-$IMAGE_TAG.oci.tar"

echo "image-check: the Dockerfile"
# dockerfile_copies: the Dockerfile COPYs every folder the Makefile compiles
# (its MODULES, cmd/, mk/) and .dockerignore lets each in, so a new module
# cannot leave `make image-docker` without its sources.
dockerfile_copies() {
  local m rc=0
  for m in $(sed -n 's/^MODULES := //p' Makefile) cmd mk; do
    grep -qx "COPY $m/ $m/" Dockerfile || { echo "    Dockerfile: no 'COPY $m/ $m/'"; rc=1; }
    grep -qx "!$m/" .dockerignore || { echo "    .dockerignore: no '!$m/'"; rc=1; }
  done
  return $rc
}
check "the Dockerfile copies every folder the Makefile compiles ($(sed -n 's/^MODULES := //p' Makefile) cmd mk)" dockerfile_copies

echo "image-check: the Dockerfile's image"
engine=""
if docker info >/dev/null 2>&1; then engine=docker; elif podman info >/dev/null 2>&1; then engine=podman; fi
if [ -z "$engine" ]; then
  echo "  skip: no container engine (neither 'docker info' nor 'podman info' works), so the Dockerfile's image is not built"
elif ! "$engine" image inspect debian:12 >/dev/null 2>&1 && ! "$engine" pull -q debian:12 >/dev/null 2>&1; then
  echo "  skip: $engine works but cannot pull debian:12 (no registry reachable)"
elif ! make --no-print-directory image-docker IMAGE="$IMAGE" IMAGE_TAG="$IMAGE_TAG-docker" >"$tmp/docker.log" 2>&1; then
  bad "make image-docker"
  tail -20 "$tmp/docker.log" | sed 's/^/    /'
else
  dref=$IMAGE:$IMAGE_TAG-docker
  cid=$("$engine" create "$dref")
  "$engine" export "$cid" | tar -t | sed 's,^\./,,; s,/$,,' | LC_ALL=C sort -u >"$tmp/docker.files"
  "$engine" rm "$cid" >/dev/null
  # The Dockerfile's image is debian:12-slim: usr-merged, so /lib is /usr/lib.
  (cd "$root" && find . ! -type d ! -path './usr/share/doc/*' ! -path './etc/*' -printf '%P\n') |
    LC_ALL=C sort >"$tmp/oci.files"
  missing=$(LC_ALL=C comm -23 "$tmp/oci.files" "$tmp/docker.files")
  if [ -z "$missing" ]; then
    ok "the Dockerfile's image ($(wc -l <"$tmp/docker.files") entries) holds all $(wc -l <"$tmp/oci.files") files and links of this one outside /etc and /usr/share/doc"
  else
    bad "files of the OCI image missing from the Dockerfile's image:"
    sed 's/^/    /' <<<"$missing"
  fi
  check "the Dockerfile's image has the same user, entrypoint and cmd" test \
    "$("$engine" image inspect -f '{{json .Config.User}} {{json .Config.Entrypoint}} {{json .Config.Cmd}}' "$dref")" = \
    "$(jq -c -r '"\(.config.User | tojson) \(.config.Entrypoint | tojson) \(.config.Cmd | tojson)"' "$cfg")"
fi

finish
