#!/usr/bin/env bash
# oci-image.sh - write a container image from a root filesystem folder (its
# top layer) and any layers written before (below it), with no container
# engine, daemon or registry. The output is an OCI
# image layout (oci-layout, index.json, blobs/sha256/...) packed as one tar
# archive, which `ctr -n k8s.io images import FILE`, `docker load -i FILE`,
# `podman load -i FILE` and `skopeo inspect oci-archive:FILE` read.
#
# How the readers name the image (checked in their sources, not guessed):
#   - containerd's importer (ctr, and docker on the containerd image store)
#     takes index.json's annotation io.containerd.image.name as the full name;
#     without it, org.opencontainers.image.ref.name is only a tag that ctr
#     prefixes with "import-<date>".
#   - podman reads io.containerd.image.name first, then ref.name.
#   - docker's classic image store reads only manifest.json's RepoTags (the
#     file `docker save` writes beside index.json since Docker 25).
# So index.json carries the full reference in io.containerd.image.name and
# the tag alone in ref.name (what containerd's own exporter writes, and what
# `oci-archive:FILE:TAG` selects), and manifest.json names it for docker.
#
# Reproducible: entries in byte order of their names, every mtime and the
# config's `created` set to --epoch, owners numeric 0:0, no atime/ctime
# records, gzip without a file name or time stamp, JSON with sorted keys.
# The same folder and options give the same manifest digest.
#
# A layer that changes less often than the image (hack/build-image.sh's
# torch-train: Python and torch, hundreds of MB, against a trainer script and
# drake) is written once with --layer-only and named by --lower in each
# image built on it: its blob is copied in as it is, not packed again, and
# a node that imported one image on it has the layer already.
#
# usage: hack/oci-image.sh --root DIR --ref NAME[:TAG] --output FILE [options]
#        hack/oci-image.sh --layer-only --root DIR --output LAYER [--epoch S] [--gzip-level N]
#   --entrypoint JSON   e.g. '["/usr/local/bin/drake"]'
#   --cmd JSON          e.g. '["serve","--help"]'
#   --user UID[:GID]    numeric, so no /etc/passwd lookup is needed
#   --env KEY=VALUE     repeatable; without a PATH= one, the usual PATH is set
#   --workdir DIR
#   --port PORT[/PROTO] repeatable; 8443 means 8443/tcp
#   --label KEY=VALUE   repeatable
#   --arch ARCH         default: this machine's (amd64, arm64, ...)
#   --epoch SECONDS     default: $SOURCE_DATE_EPOCH, else 0
#   --gzip-level N      1 (fastest) to 9 (smallest, the default)
#   --lower LAYER       a layer written by --layer-only, below DIR's (repeatable,
#                       the lowest first); its diff_id is read from LAYER.diff_id
#   --layer-only        write only DIR's layer: the gzip tar to --output and its
#                       diff_id (sha256:HEX of the tar) to OUTPUT.diff_id
# Prints key=value lines: ref, file, manifest, config, layer, diff_id,
# layer_bytes (the gzip layer), tar_bytes (the layer unpacked into one tar),
# of the top layer (DIR's); with --layer-only only the last four and file.
set -euo pipefail

die() {
  echo "oci-image: $*" >&2
  exit 2
}

root="" ref="" output="" entrypoint="" cmd="" user="" workdir="" arch="" level=9 layer_only=0
epoch=${SOURCE_DATE_EPOCH:-0}
envs=() ports=() labels=() lowers=()
while [ $# -gt 0 ]; do
  if [ "$1" = --layer-only ]; then
    layer_only=1
    shift
    continue
  fi
  [ $# -ge 2 ] || die "$1 needs a value"
  case "$1" in
  --root) root=$2 ;;
  --ref) ref=$2 ;;
  --output) output=$2 ;;
  --entrypoint) entrypoint=$2 ;;
  --cmd) cmd=$2 ;;
  --user) user=$2 ;;
  --env) envs+=("$2") ;;
  --workdir) workdir=$2 ;;
  --port) ports+=("$2") ;;
  --label) labels+=("$2") ;;
  --arch) arch=$2 ;;
  --epoch) epoch=$2 ;;
  --gzip-level) level=$2 ;;
  --lower) lowers+=("$2") ;;
  *) die "unknown option $1 (see the header of $0)" ;;
  esac
  shift 2
done

[ -d "$root" ] || die "--root must name a folder"
[ "$layer_only" = 1 ] || [ -n "$ref" ] || die "--ref is required"
[ -n "$output" ] || die "--output is required"
[ "$layer_only" = 0 ] || [ ${#lowers[@]} -eq 0 ] || die "--layer-only writes one layer: no --lower"
for l in "${lowers[@]}"; do
  [ -f "$l" ] || die "--lower $l: no such layer"
  grep -Eqx 'sha256:[0-9a-f]{64}' "$l.diff_id" 2>/dev/null || die "--lower $l: no $l.diff_id (hack/oci-image.sh --layer-only writes it)"
done
[[ $epoch =~ ^[0-9]+$ ]] || die "--epoch must be seconds since 1970, got '$epoch'"
[[ $level =~ ^[1-9]$ ]] || die "--gzip-level must be 1 to 9, got '$level'"
[ -z "$user" ] || [[ $user =~ ^[0-9]+(:[0-9]+)?$ ]] || die "--user must be UID or UID:GID, got '$user'"
for j in entrypoint cmd; do
  [ -z "${!j}" ] || jq -e 'type == "array" and all(type == "string")' <<<"${!j}" >/dev/null 2>&1 ||
    die "--$j must be a JSON array of strings, got '${!j}'"
done
for kv in "${envs[@]}" "${labels[@]}"; do
  [[ $kv == ?*=* ]] || die "expected KEY=VALUE, got '$kv'"
done
for p in "${ports[@]}"; do
  [[ $p =~ ^[0-9]+(/(tcp|udp|sctp))?$ ]] || die "--port must be PORT or PORT/PROTO, got '$p'"
done
if [ -z "$arch" ]; then
  case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  armv7l) arch=arm ;;
  ppc64le) arch=ppc64le ;;
  s390x) arch=s390x ;;
  riscv64) arch=riscv64 ;;
  *) die "unknown machine $(uname -m): pass --arch" ;;
  esac
fi

# The reference, normalised as docker and containerd do: a name without a
# registry is on docker.io, a one-part name there is under library/.
name="" tag="" full=""
if [ "$layer_only" = 0 ]; then
  case "$ref" in *@*) die "a digest reference cannot name an image being built: $ref" ;; esac
  last=${ref##*/}
  if [[ $last == *:* ]]; then
    tag=${last##*:}
    name=${ref%:*}
  else
    tag=latest
    name=$ref
  fi
  first=${name%%/*}
  if [[ $name != */* ]]; then
    name=docker.io/library/$name
  elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
    name=docker.io/$name
  fi
  component='[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*'
  [[ $name =~ ^[a-zA-Z0-9.-]+(:[0-9]+)?(/$component)+$ ]] || die "not an image name: $name"
  [[ $tag =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "not an image tag: $tag"
  full=$name:$tag
fi

created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
out_dir=$(dirname "$output")
mkdir -p "$out_dir"
work=$(mktemp -d "$out_dir/.oci-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
layout=$work/layout
mkdir -p "$layout/blobs/sha256"

# pack DIR TARFILE: DIR's contents (not DIR itself) as a reproducible tar.
pack() {
  (cd "$1" && find . -mindepth 1 -printf '%P\0') | LC_ALL=C sort -z >"$work/list"
  tar --create --file "$2" --directory "$1" --no-recursion --null --files-from "$work/list" \
    --format=posix --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' \
    --mtime="@$epoch" --owner=0 --group=0 --numeric-owner
}
# blob FILE: move FILE into blobs/sha256/ under its digest; prints the hex.
blob() {
  local hex
  hex=$(sha256sum "$1" | cut -d' ' -f1)
  mv "$1" "$layout/blobs/sha256/$hex"
  echo "$hex"
}
size() { stat -c %s "$layout/blobs/sha256/$1"; }
# json_list ITEMS... -> a JSON array of strings
json_list() { if [ $# -eq 0 ]; then echo '[]'; else printf '%s\n' "$@" | jq -R . | jq -s -c .; fi; }

pack "$root" "$work/layer.tar"
tar_bytes=$(stat -c %s "$work/layer.tar")
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n "-$level" "$work/layer.tar"
if [ "$layer_only" = 1 ]; then
  mv "$work/layer.tar.gz" "$output"
  printf 'sha256:%s\n' "$diff_id" >"$output.diff_id"
  printf 'file=%s\nlayer=sha256:%s\ndiff_id=sha256:%s\nlayer_bytes=%s\ntar_bytes=%s\n' \
    "$output" "$(sha256sum "$output" | cut -d' ' -f1)" "$diff_id" "$(stat -c %s "$output")" "$tar_bytes"
  exit 0
fi
layer=$(blob "$work/layer.tar.gz")
layer_bytes=$(size "$layer")
# the lower layers' blobs, as they are (a hard link when the file system
# allows it: hundreds of MB need not be copied)
layers=() diff_ids=()
for l in "${lowers[@]}"; do
  hex=$(sha256sum "$l" | cut -d' ' -f1)
  ln -f "$l" "$layout/blobs/sha256/$hex" 2>/dev/null || cp "$l" "$layout/blobs/sha256/$hex"
  layers+=("$hex")
  diff_ids+=("$(cat "$l.diff_id")")
done
layers+=("$layer")
diff_ids+=("sha256:$diff_id")

has_path=0
for kv in "${envs[@]}"; do [[ $kv != PATH=* ]] || has_path=1; done
[ "$has_path" = 1 ] || envs=("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" "${envs[@]}")
jq -n -c -S -j \
  --arg arch "$arch" --arg created "$created" --argjson diffs "$(json_list "${diff_ids[@]}")" \
  --arg user "$user" --arg workdir "$workdir" \
  --argjson entrypoint "${entrypoint:-null}" --argjson cmd "${cmd:-null}" \
  --argjson env "$(json_list "${envs[@]}")" \
  --argjson ports "$(json_list "${ports[@]}")" \
  --argjson labels "$(json_list "${labels[@]}")" '
  {
    architecture: $arch,
    os: "linux",
    created: $created,
    config: ({
      User: $user,
      Env: $env,
      Entrypoint: $entrypoint,
      Cmd: $cmd,
      WorkingDir: $workdir,
      ExposedPorts: ($ports | map((if test("/") then . else . + "/tcp" end) | {key: ., value: {}}) | from_entries),
      Labels: ($labels | map(capture("^(?<key>[^=]+)=(?<value>.*)$")) | from_entries)
    } | with_entries(select(.value != null and .value != "" and .value != [] and .value != {}))),
    rootfs: {type: "layers", diff_ids: $diffs},
    history: [$diffs[] | {created: $created, created_by: "hack/oci-image.sh"}]
  }' >"$work/config.json"
config=$(blob "$work/config.json")

for l in "${layers[@]}"; do printf '%s %s\n' "$l" "$(size "$l")"; done >"$work/layers"
jq -n -c -S -j --arg config "sha256:$config" --argjson config_size "$(size "$config")" \
  --rawfile layers "$work/layers" '
  {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $config, size: $config_size},
    layers: [$layers | split("\n")[] | select(. != "") | split(" ") |
      {mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: ("sha256:" + .[0]), size: (.[1] | tonumber)}]
  }' >"$work/manifest.json"
manifest=$(blob "$work/manifest.json")

jq -n -c -S -j --arg manifest "sha256:$manifest" --argjson size "$(size "$manifest")" \
  --arg arch "$arch" --arg full "$full" --arg tag "$tag" '
  {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [{
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      digest: $manifest,
      size: $size,
      platform: {architecture: $arch, os: "linux"},
      annotations: {"io.containerd.image.name": $full, "org.opencontainers.image.ref.name": $tag}
    }]
  }' >"$layout/index.json"
jq -n -c -j --arg config "blobs/sha256/$config" --argjson layers "$(json_list "${layers[@]/#/blobs/sha256/}")" \
  --arg full "$full" '[{Config: $config, RepoTags: [$full], Layers: $layers}]' >"$layout/manifest.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
chmod 0644 "$layout"/*.json "$layout/oci-layout" "$layout"/blobs/sha256/*
chmod 0755 "$layout" "$layout/blobs" "$layout/blobs/sha256"

pack "$layout" "$work/image.tar"
mv "$work/image.tar" "$output"
printf 'ref=%s\nfile=%s\nmanifest=sha256:%s\nconfig=sha256:%s\nlayer=sha256:%s\ndiff_id=sha256:%s\nlayer_bytes=%s\ntar_bytes=%s\n' \
  "$full" "$output" "$manifest" "$config" "$layer" "$diff_id" "$layer_bytes" "$tar_bytes"
