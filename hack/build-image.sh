#!/usr/bin/env bash
# build-image.sh - build drake's container image, and the three others the
# local cluster's real nodes run, as OCI archives, with no container engine:
# each image's root is staged here from this machine's files and
# hack/oci-image.sh packs it. `make image` runs it for drake.
#
#   drake           $IMAGE:$IMAGE_TAG (ghcr.io/drake-scheduler/drake:<git describe>)
#                   distroless-style: build/release/drake, the shared libraries
#                   ldd finds for it and their loader, the CA bundle, passwd and
#                   group with root and drake (65532), /tmp; runs as 65532:65532
#   pause           $PAUSE_IMAGE (registry.k8s.io/pause:3.10): Kubernetes'
#                   build/pause/linux/pause.c from the Go module cache, static
#   kube-scheduler  registry.k8s.io/kube-scheduler:v1.36.3, the binary
#                   hack/build-control-plane.sh builds; runs as 65532:65532
#   busybox         drake.local/busybox:<Debian version>, busybox-static with
#                   its applet links, for test pods that run `sh -c`
#   train           $TRAIN_IMAGE:$TRAIN_IMAGE_TAG (drake.local/drake-train:<git
#                   describe>): examples/train's drake-train, drake (for
#                   `drake progress`), their libraries, the digits it learns
#   torch-train     $TORCH_TRAIN_IMAGE:$TRAIN_IMAGE_TAG (drake.local/torch-train:
#                   <git describe>): examples/torch-train (torchrun's elastic
#                   agent and the trainer), Debian's python3.11 with its
#                   standard library, the Python modules torch imports
#                   (torch, numpy, astunparse, six, typing_extensions), the
#                   shared libraries ldd finds for each extension module,
#                   drake, and the same digits; runs as 65532:65532. Two
#                   layers: Python and torch below, built once and cached
#                   (build_torch_train's comment), this commit's files above
#
# Each archive is build/image/<name>-<tag>.oci.tar. A build is skipped when a
# hash of the staged root, the image options and hack/oci-image.sh matches the
# last one (FORCE=1 rebuilds, torch-train's cached lower layer too). Every copied file's Debian package and version
# (dpkg -S) is listed in the image's /usr/share/doc/drake-image/packages.txt,
# with each package's copyright file under /usr/share/doc/<package>/.
#
# usage: hack/build-image.sh [--which drake|pause|kube-scheduler|busybox|train|torch-train|all]...
#                            [--out DIR] [--print-ref]
#   --which        the images to build (default drake; repeatable)
#   --out DIR      where the archives go (default build/image)
#   --print-ref    print each image's reference instead of building it
# Prints each archive's path (or reference) on stdout, one a line; progress,
# sizes and digests go to stderr.
# env: IMAGE, IMAGE_TAG, VERSION (default: git describe, as the Makefile),
#      PAUSE_IMAGE, TRAIN_IMAGE, TRAIN_IMAGE_TAG, TORCH_TRAIN_IMAGE,
#      SOURCE_DATE_EPOCH (default:
#      drake's, drake-train's and torch-train's from the last commit's time,
#      0 for the others and torch-train's lower layer), DRAKE_BIN and
#      TRAIN_BIN (use these binaries, no make), FORCE=1, DRAKE_CACHE_DIR
#      (torch-train's lower layer: default ~/.cache/drake)
set -euo pipefail
umask 022
caller=$PWD
root_dir=$(cd "$(dirname "$0")/.." && pwd)
cd "$root_dir"

# The Kubernetes release the control plane is built from (one place: there).
K8S_VERSION=$(sed -n 's/^K8S_VERSION=//p' hack/build-control-plane.sh)
VERSION=${VERSION:-$(git describe --always --dirty 2>/dev/null || echo unknown)}
IMAGE=${IMAGE:-ghcr.io/drake-scheduler/drake}
IMAGE_TAG=${IMAGE_TAG:-$VERSION}
PAUSE_IMAGE=${PAUSE_IMAGE:-registry.k8s.io/pause:3.10}

out=build/image
which=()
print_ref=0
while [ $# -gt 0 ]; do
  case "$1" in
  --which)
    [ $# -ge 2 ] || { echo "build-image: --which needs a name" >&2; exit 2; }
    if [ "$2" = all ]; then which+=(drake pause kube-scheduler busybox); else which+=("$2"); fi
    shift 2
    ;;
  --out)
    [ $# -ge 2 ] || { echo "build-image: --out needs a folder" >&2; exit 2; }
    out=$2
    shift 2
    ;;
  --print-ref) print_ref=1 && shift ;;
  *) echo "build-image: unknown option $1 (see the header of $0)" >&2 && exit 2 ;;
  esac
done
[ ${#which[@]} -gt 0 ] || which=(drake)
case "$out" in /*) ;; *) [ "$out" = build/image ] || out=$caller/$out ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

log() { echo "[image] $*" >&2; }
die() {
  echo "build-image: $*" >&2
  exit 1
}

# owner PATH: "package<TAB>version" of the Debian package that installed PATH.
# dpkg records some files under /lib and others under /usr/lib (usr-merge),
# so both spellings are tried, of the path as given and resolved.
owner() {
  local p c pkg
  for p in "$1" "$(readlink -f "$1")"; do
    for c in "$p" "${p/#\/usr\/lib\//\/lib\/}" "${p/#\/lib\//\/usr\/lib\/}" \
      "${p/#\/usr\/bin\//\/bin\/}" "${p/#\/bin\//\/usr\/bin\/}"; do
      pkg=$(dpkg-query -S "$c" 2>/dev/null | grep -v '^diversion' | head -1 | sed 's/: .*//; s/:.*//') || true
      if [ -n "$pkg" ]; then
        printf '%s\t%s\n' "$pkg" "$(dpkg-query -W -f='${Version}' "$pkg")"
        return 0
      fi
    done
  done
  return 1
}

# Per-image staging state: the root being built and its package list.
stage=""
pkglist=""
new_root() {
  stage=$out/root-$1
  rm -rf "$stage"
  mkdir -p "$stage/usr/share/doc/drake-image" "$stage/tmp"
  chmod 1777 "$stage/tmp"
  pkglist=$stage/usr/share/doc/drake-image/packages.txt
  printf '# Where each file of this image came from: the Debian package (dpkg -S)\n# and its version, or how it was built. Licences: /usr/share/doc/PACKAGE/.\n' >"$pkglist"
}
# record PATH_IN_IMAGE HOST_PATH: note HOST_PATH's package and copy its
# copyright file into the image.
record() {
  local o pkg
  o=$(owner "$2") || die "$2: no Debian package owns it (dpkg -S)"
  printf '%s\t%s\n' "$1" "$o" >>"$pkglist"
  pkg=${o%%$'\t'*}
  if [ -f "/usr/share/doc/$pkg/copyright" ] && [ ! -f "$stage/usr/share/doc/$pkg/copyright" ]; then
    install -D -m 0644 "/usr/share/doc/$pkg/copyright" "$stage/usr/share/doc/$pkg/copyright"
  fi
}
# add_file HOST_PATH IMAGE_PATH MODE [NOTE]: copy a file; NOTE says where it
# came from when it is not from a Debian package.
add_file() {
  install -D -m "$3" "$1" "$stage$2"
  if [ $# -ge 4 ]; then printf '%s\t%s\n' "$2" "$4" >>"$pkglist"; else record "$2" "$1"; fi
}
# add_link IMAGE_PATH TARGET: a symbolic link in the image.
add_link() {
  mkdir -p "$(dirname "$stage$1")"
  ln -sfn "$2" "$stage$1"
}
# relpath FROM_DIR TO: TO relative to FROM_DIR (both absolute image paths)
relpath() { realpath -m -s --relative-to="$1" "$2"; } # -s: this machine's links (/bin -> usr/bin) are not the image's

# add_libs BINARY: every shared object ldd resolves for BINARY, and the
# loader, with their modes on this machine. Each real file goes where it is
# here; the name the loader looks up (the soname, e.g. libcurl.so.4, or
# /lib64/ld-linux-x86-64.so.2) is a link to it, and /lib and /lib64 are links
# into /usr as on this usr-merged machine. There is no ld.so.cache: the
# loader's built-in search path has the multiarch folders. A file of the
# lower layer (in_lower: its paths) is not copied again.
declare -A in_lower=()
add_libs() {
  local line path real dir top
  local -a paths=()
  while read -r line; do
    case "$line" in
    *"not found"*) die "ldd $1: $line" ;;
    *" => /"*) path=${line#* => } && paths+=("${path%% (*}") ;;
    /*) paths+=("${line%% (*}") ;;
    esac
  done < <(ldd "$1")
  [ ${#paths[@]} -gt 0 ] || die "ldd found no libraries for $1"
  for path in "${paths[@]}"; do
    real=$(readlink -f "$path")
    dir=$(readlink -f "$(dirname "$path")")
    [ -f "$stage$real" ] || [ -n "${in_lower[$real]:-}" ] || add_file "$real" "$real" "$(stat -c %a "$real")"
    [ "$dir/$(basename "$path")" = "$real" ] ||
      add_link "$dir/$(basename "$path")" "$(relpath "$dir" "$real")"
    top=${path#/}
    top=/${top%%/*}
    if [ -L "$top" ] && [ ! -L "$stage$top" ]; then
      add_link "$top" "$(readlink "$top")"
    fi
  done
}
# add_etc USER_NAME UID: passwd and group with root and one user, and an
# nsswitch.conf that keeps glibc to files and DNS (built into libc).
add_etc() {
  mkdir -p "$stage/etc"
  printf 'root:x:0:0:root:/root:/sbin/nologin\n%s:x:%s:%s:%s:/nonexistent:/sbin/nologin\n' \
    "$1" "$2" "$2" "$1" >"$stage/etc/passwd"
  printf 'root:x:0:\n%s:x:%s:\n' "$1" "$2" >"$stage/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\nnetworks: files\nservices: files\nprotocols: files\n' \
    >"$stage/etc/nsswitch.conf"
  chmod 0644 "$stage/etc/passwd" "$stage/etc/group" "$stage/etc/nsswitch.conf"
  printf '/etc/passwd\twritten by hack/build-image.sh (root, %s %s)\n' "$1" "$2" >>"$pkglist"
}
# add_ca: Debian's CA bundle, which update-ca-certificates generates from the
# ca-certificates package (so dpkg -S does not know the file itself).
add_ca() {
  local f=/etc/ssl/certs/ca-certificates.crt
  [ -s "$f" ] || die "$f missing: apt-get install ca-certificates"
  add_file "$f" "$f" 0644 "ca-certificates	$(dpkg-query -W -f='${Version}' ca-certificates) (generated by update-ca-certificates)"
  [ -f "$stage/usr/share/doc/ca-certificates/copyright" ] ||
    install -D -m 0644 /usr/share/doc/ca-certificates/copyright "$stage/usr/share/doc/ca-certificates/copyright"
}

# add_digits FILE: scikit-learn's digits (examples/train/fetch-digits.sh's
# FILE) as /usr/share/drake-train/digits.csv.gz, with python3-sklearn's
# copyright file
add_digits() {
  add_file "$1" /usr/share/drake-train/digits.csv.gz 0644 \
    "python3-sklearn	$(cat build/train/python3-sklearn.version) (sklearn/datasets/data/digits.csv.gz, taken from the .deb by examples/train/fetch-digits.sh)"
  install -D -m 0644 build/train/python3-sklearn.copyright "$stage/usr/share/doc/python3-sklearn/copyright"
}

# tree_key DIR: a hash of DIR's names, types, modes, link targets and contents.
tree_key() {
  (
    cd "$1"
    find . -printf '%P %y %m %l\n' | LC_ALL=C sort
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  ) | sha256sum | cut -c1-64
}

# pack NAME FILE_STEM REF EPOCH OCI_IMAGE_OPTIONS...: pack the staged root
# into $out/FILE_STEM.oci.tar unless the same inputs built it last time.
pack() {
  local name=$1 stem=$2 ref=$3 epoch=$4
  shift 4
  local file=$out/$stem.oci.tar meta=$out/$stem.oci.txt key files_bytes
  key=$({
    tree_key "$stage"
    printf '%s\n' "$ref" "$epoch" "$@"
    cat hack/oci-image.sh
  } | sha256sum | cut -c1-64)
  if [ "${FORCE:-0}" != 1 ] && [ -f "$file" ] && [ -f "$meta" ] && grep -qx "key=$key" "$meta"; then
    log "$name: unchanged, cached"
  else
    files_bytes=$(find "$stage" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    hack/oci-image.sh --root "$stage" --ref "$ref" --output "$file" --epoch "$epoch" "$@" >"$meta.tmp"
    printf 'key=%s\nfiles_bytes=%s\n' "$key" "$files_bytes" >>"$meta.tmp"
    mv "$meta.tmp" "$meta"
  fi
  rm -rf "$stage"
  kv() { sed -n "s/^$1=//p" "$meta"; }
  log "$name: $(kv ref)"
  log "$name:   layer $(kv layer_bytes) bytes gzip ($(numfmt --to=si "$(kv layer_bytes)")B), $(kv files_bytes) bytes unpacked ($(numfmt --to=si "$(kv files_bytes)")B), archive $(stat -c %s "$file") bytes"
  log "$name:   manifest $(kv manifest)"
  log "$name:   $file"
  echo "$file"
}

# tag_of REF: the part after the last colon of the last path component
tag_of() {
  local last=${1##*/}
  if [[ $last == *:* ]]; then echo "${last##*:}"; else echo latest; fi
}

busybox_ref() {
  local v
  v=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null) || die "busybox-static is not installed (hack/install-deps.sh)"
  v=${v#*:}
  echo "drake.local/busybox:${v//[+~]/-}"
}
ref_of() {
  case "$1" in
  drake) echo "$IMAGE:$IMAGE_TAG" ;;
  pause) echo "$PAUSE_IMAGE" ;;
  kube-scheduler) echo "registry.k8s.io/kube-scheduler:$K8S_VERSION" ;;
  busybox) busybox_ref ;;
  train) echo "${TRAIN_IMAGE:-drake.local/drake-train}:${TRAIN_IMAGE_TAG:-$VERSION}" ;;
  torch-train) echo "${TORCH_TRAIN_IMAGE:-drake.local/torch-train}:${TRAIN_IMAGE_TAG:-$VERSION}" ;;
  *) die "unknown image $1 (drake, pause, kube-scheduler, busybox, train, torch-train, all)" ;;
  esac
}

build_drake() {
  local bin=${DRAKE_BIN:-build/release/drake} ref epoch
  ref=$(ref_of drake)
  if [ -z "${DRAKE_BIN:-}" ]; then
    log "drake: make build/release/drake VERSION=$VERSION"
    make --no-print-directory -j2 build/release/drake VERSION="$VERSION" >&2
  fi
  [ -x "$bin" ] || die "$bin: not built"
  epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
  new_root drake
  add_file "$bin" /usr/local/bin/drake 0755 "built from this repository by make ($("$bin" version))"
  add_libs "$bin"
  add_ca
  add_etc drake 65532
  pack drake "drake-$(tag_of "$ref")" "$ref" "$epoch" \
    --entrypoint '["/usr/local/bin/drake"]' --cmd '["serve","--help"]' \
    --user 65532:65532 --port 8443 --workdir / \
    --label org.opencontainers.image.title=drake \
    --label "org.opencontainers.image.description=kube-scheduler extender and TFJob controller: gang scheduling for TFJobs" \
    --label "org.opencontainers.image.version=$VERSION"
}

build_pause() {
  local ref src tag bin
  ref=$(ref_of pause)
  src=$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION
  if [ ! -f "$src/build/pause/linux/pause.c" ]; then
    log "pause: go mod download k8s.io/kubernetes@$K8S_VERSION"
    (cd hack/gomod/k8s && GOFLAGS=-mod=readonly GOTOOLCHAIN=local go mod download k8s.io/kubernetes) >&2
  fi
  [ -f "$src/build/pause/linux/pause.c" ] || die "no build/pause/linux/pause.c in $src"
  # The version pause reports (-v) is upstream's TAG for this release.
  tag=$(sed -n 's/^TAG ?= *//p' "$src/build/pause/Makefile")
  bin=$out/pause-bin/pause
  mkdir -p "$(dirname "$bin")"
  if [ ! -x "$bin" ] || [ "$src/build/pause/linux/pause.c" -nt "$bin" ] || [ "$0" -nt "$bin" ]; then
    gcc -Os -Wall -Werror -static -DVERSION="v$tag" -o "$bin" "$src/build/pause/linux/pause.c"
  fi
  new_root pause
  add_file "$bin" /pause 0755 "built by gcc -Os -static from k8s.io/kubernetes@$K8S_VERSION build/pause/linux/pause.c (v$tag), glibc from libc6-dev $(dpkg-query -W -f='${Version}' libc6-dev)"
  install -D -m 0644 "$src/LICENSE" "$stage/usr/share/doc/kubernetes/LICENSE"
  # glibc is linked in statically: its licence goes along
  install -D -m 0644 /usr/share/doc/libc6-dev/copyright "$stage/usr/share/doc/libc6-dev/copyright"
  pack pause "pause-$(tag_of "$ref")" "$ref" "${SOURCE_DATE_EPOCH:-0}" \
    --entrypoint '["/pause"]' --user 65535:65535
}

build_kube_scheduler() {
  local ref bin src
  ref=$(ref_of kube-scheduler)
  hack/build-control-plane.sh k8s >&2
  bin=$(hack/build-control-plane.sh --print-bindir)/kube-scheduler
  [ -x "$bin" ] || die "$bin: not built"
  new_root kube-scheduler
  add_file "$(readlink -f "$bin")" /usr/local/bin/kube-scheduler 0755 \
    "built by hack/build-control-plane.sh from k8s.io/kubernetes@$K8S_VERSION (static, CGO_ENABLED=0)"
  src=$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION
  [ ! -f "$src/LICENSE" ] || install -D -m 0644 "$src/LICENSE" "$stage/usr/share/doc/kubernetes/LICENSE"
  add_ca
  add_etc nonroot 65532
  pack kube-scheduler "kube-scheduler-$(tag_of "$ref")" "$ref" "${SOURCE_DATE_EPOCH:-0}" \
    --entrypoint '["/usr/local/bin/kube-scheduler"]' --user 65532:65532
}

build_busybox() {
  local ref bb=/bin/busybox applet
  ref=$(ref_of busybox)
  [[ -x $bb && $(owner "$bb") == busybox-static* ]] || die "$bb is not busybox-static's (hack/install-deps.sh)"
  new_root busybox
  add_file "$(readlink -f "$bb")" /bin/busybox 0755
  # `--list-full` names busybox itself too: linking it would replace the binary.
  while read -r applet; do
    [ "$applet" != bin/busybox ] || continue
    add_link "/$applet" "$(relpath "/$(dirname "$applet")" /bin/busybox)"
  done < <("$bb" --list-full)
  add_etc nobody 65534
  pack busybox "busybox-$(tag_of "$ref")" "$ref" "${SOURCE_DATE_EPOCH:-0}" --cmd '["sh"]'
}

# drake-train (examples/train): the trainer, drake for `drake progress`,
# their libraries, and scikit-learn's digits from Debian's python3-sklearn
build_train() {
  local ref epoch data=build/train/digits.csv.gz
  local drake=${DRAKE_BIN:-build/release/drake} train=${TRAIN_BIN:-build/release/examples/train/drake-train}
  local -a targets=("$data")
  ref=$(ref_of train)
  [ -n "${DRAKE_BIN:-}" ] || targets+=(build/release/drake)
  [ -n "${TRAIN_BIN:-}" ] || targets+=(build/release/examples/train/drake-train)
  log "train: make ${targets[*]} VERSION=$VERSION"
  make --no-print-directory -j2 "${targets[@]}" VERSION="$VERSION" >&2
  for b in "$drake" "$train"; do [ -x "$b" ] || die "$b: not built"; done
  epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
  new_root train
  add_file "$train" /usr/local/bin/drake-train 0755 "built from this repository by make ($VERSION)"
  add_file "$drake" /usr/local/bin/drake 0755 "built from this repository by make ($("$drake" version))"
  add_libs "$train"
  add_libs "$drake"
  add_ca
  add_digits "$data"
  add_etc train 65532
  pack train "drake-train-$(tag_of "$ref")" "$ref" "$epoch" \
    --entrypoint '["/usr/local/bin/drake-train"]' --user 65532:65532 --port 2222 --workdir / \
    --env TRAIN_DATA=/usr/share/drake-train/digits.csv.gz \
    --label org.opencontainers.image.title=drake-train \
    --label "org.opencontainers.image.description=drake's example parameter-server trainer for TFJobs (examples/train)" \
    --label "org.opencontainers.image.version=$VERSION"
}

# add_tree HOST_DIR [EXCLUDE...]: HOST_DIR copied whole to the same path in
# the image (links kept as links), but for __pycache__ and the EXCLUDE
# names (tar --exclude patterns); each file's Debian package is listed,
# looked up in dpkg's file lists at once (dpkg -S per file would take
# minutes for a Python tree).
add_tree() {
  local dir=$1 e missing
  shift
  local -a ex=(--exclude=__pycache__)
  for e in "$@"; do ex+=("--exclude=$e"); done
  mkdir -p "$stage$dir"
  tar -C "$dir" "${ex[@]}" -cf - . | tar -C "$stage$dir" -xf -
  if [ ! -s "$out/dpkg-index.txt" ] || [ /var/lib/dpkg/status -nt "$out/dpkg-index.txt" ]; then
    dpkg-query -W -f='${Package}\t${Version}\n' >"$out/dpkg-versions.txt"
    awk -F'\t' 'NR == FNR {v[$1] = $2; next}
      FNR == 1 {p = FILENAME; sub(/.*\//, "", p); sub(/\.list$/, "", p); sub(/:.*/, "", p)}
      {print $0 "\t" p "\t" v[p]}' "$out/dpkg-versions.txt" /var/lib/dpkg/info/*.list >"$out/dpkg-index.txt"
  fi
  missing=$(find "$stage$dir" \( -type f -o -type l \) | sed "s|^$stage||" |
    LC_ALL=C sort | awk -F'\t' -v list="$pkglist" '
      NR == FNR { if (!($1 in seen)) seen[$1] = $2 "\t" $3; next }
      { if ($1 in seen) print $1 "\t" seen[$1] >>list; else print $1 }' "$out/dpkg-index.txt" -)
  [ -z "$missing" ] || die "$dir: no Debian package owns $(head -n 3 <<<"$missing" | tr '\n' ' ')"
  awk -F'\t' -v d="$dir/" 'index($1, d) == 1 {print $2}' "$pkglist" | sort -u | while read -r e; do
    [ ! -f "/usr/share/doc/$e/copyright" ] || [ -f "$stage/usr/share/doc/$e/copyright" ] ||
      install -D -m 0644 "/usr/share/doc/$e/copyright" "$stage/usr/share/doc/$e/copyright"
  done
}

# torch-train (examples/torch-train): torchrun and the trainer on Debian's
# python3 and python3-torch, in two layers. The lower one is Python and
# torch, only what they load: the interpreter and its standard library (not
# its tests, IDLE, Tk, lib2to3, ensurepip), the modules torch imports, every
# shared library ldd finds for the extension modules, and torch/lib's
# libraries torch loads by path, compiled to .pyc here (unchecked hashes:
# the layer's mtimes are its epoch's), so a worker that torchrun restarts
# does not compile torch again. It does not change from one commit to the
# next, takes about 100 s to build on 2 cores and is 600 MB, packed with
# gzip -1 (-9 takes minutes more for 10 % less): it is built once and kept
# under ${DRAKE_CACHE_DIR:-~/.cache/drake}/torch-train-base/ (torch_base).
# The top layer is this commit's: the trainer and torchrun's wrapper, drake
# for `drake progress` and the libraries of drake's the lower layer lacks,
# the digits drake-train learns, the CA bundle, passwd and group.
torch_py=/usr/lib/python3/dist-packages
torch_trees=(/usr/lib/python3.11 "$torch_py/torch" "$torch_py/numpy" "$torch_py/astunparse")
torch_files=(/usr/bin/python3.11 "$torch_py/six.py" "$torch_py/typing_extensions.py")

# stage_torch_base: the lower layer's root in $stage
stage_torch_base() {
  local py=$torch_py m so l
  new_root torch-base
  add_file /usr/bin/python3.11 /usr/bin/python3.11 0755
  add_link /usr/bin/python3 python3.11
  add_libs /usr/bin/python3.11
  add_tree /usr/lib/python3.11 ./test ./idlelib ./tkinter ./turtledemo ./ensurepip ./lib2to3 \
    ./pydoc_data ./config-3.11-x86_64-linux-gnu ./lib-dynload/_tkinter.cpython-311-x86_64-linux-gnu.so
  # torch/bin: only torch_shm_manager, which torch checks for at import
  add_tree $py/torch './bin/*[Tt]est*' ./bin/tutorial_tensorexpr ./include ./share
  add_libs $py/torch/bin/torch_shm_manager
  for m in numpy astunparse; do add_tree $py/$m; done
  for m in six.py typing_extensions.py; do add_file $py/$m $py/$m 0644; done
  # torch/lib: the libraries torch loads by path (the caffe2 operator and
  # test modules it does not load are left out)
  for l in "$stage$py"/torch/lib/*; do
    case "$(basename "$l")" in
    libcaffe2_*) rm "$l" ;;
    *) so=$(readlink -f "$py/torch/lib/$(basename "$l")")
      [ -f "$stage$so" ] || add_file "$so" "$so" 0644
      add_link "$(dirname "$so")/$(basename "$(readlink "$py/torch/lib/$(basename "$l")")")" "$(basename "$so")" ;;
    esac
  done
  # (an extension module that needs no library at all has nothing to add)
  while read -r so; do
    so=/${so#"$stage"/}
    ldd "$so" | grep -q ' => /' && add_libs "$so"
  done < <(find "$stage/usr/lib" -path "$stage/usr/lib/x86_64-linux-gnu" -prune -o -name '*.so' -type f -print | LC_ALL=C sort)
  for so in "$stage$py"/torch/lib/*; do add_libs "$(readlink -f "$py/torch/lib/$(basename "$so")")"; done
  /usr/bin/python3.11 -m compileall -q -j 2 --invalidation-mode unchecked-hash -s "$stage" -p / \
    "$stage/usr/lib/python3.11" "$stage$py" >&2 || die "compileall failed"
  printf '*.pyc\tcompiled by hack/build-image.sh (python3.11 -m compileall --invalidation-mode unchecked-hash)\n' >>"$pkglist"
}

# torch_base: the lower layer, from the cache or built into it; prints its
# path (LAYER.diff_id beside it: hack/oci-image.sh --lower). The cache key is
# this script's functions that stage it, hack/oci-image.sh, and the name,
# size, mtime and type of every file of the trees it copies; an entry is
# used only while every Debian package its files came from (the libraries
# ldd finds too) is installed at the version it was built from
# (versions.txt against dpkg-query). Entries unused for 7 days are removed.
torch_base() {
  local dir=${DRAKE_CACHE_DIR:-$HOME/.cache/drake}/torch-train-base key d tmp hex t0=$SECONDS
  local -a pkgs=()
  key=$({
    declare -f stage_torch_base new_root record owner add_file add_link relpath add_libs add_tree
    cat hack/oci-image.sh
    find "${torch_trees[@]}" "${torch_files[@]}" -printf '%p %s %T@ %y %l\n' | LC_ALL=C sort
  } | sha256sum | cut -c1-16)
  d=$dir/$key
  [ ! -f "$d/versions.txt" ] || mapfile -t pkgs < <(cut -f1 "$d/versions.txt")
  if [ "${FORCE:-0}" != 1 ] && [ ${#pkgs[@]} -gt 0 ] && [ -f "$d/layer" ] &&
    cmp -s "$d/versions.txt" <(dpkg-query -W -f='${Package}\t${Version}\n' "${pkgs[@]}" 2>/dev/null | LC_ALL=C sort -u); then
    touch "$d"
    log "torch-train: its lower layer (Python, torch) cached in $d"
    echo "$d/$(cat "$d/layer")"
    return 0
  fi
  log "torch-train: building its lower layer (Python, torch) into $d"
  [ -x /usr/bin/python3.11 ] && [ -d "$torch_py/torch" ] || die "python3-torch is not installed (hack/install-deps.sh --torch)"
  stage_torch_base
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.new.XXXXXX")
  # the layer's list of files goes on top (the image's packages.txt)
  tail -n +3 "$pkglist" >"$tmp/packages.txt"
  rm -r "$stage/usr/share/doc/drake-image"
  awk -F'\t' 'NF == 3 {print $2}' "$tmp/packages.txt" | LC_ALL=C sort -u |
    xargs dpkg-query -W -f='${Package}\t${Version}\n' | LC_ALL=C sort -u >"$tmp/versions.txt"
  hack/oci-image.sh --layer-only --root "$stage" --output "$tmp/layer.tar.gz" --epoch 0 --gzip-level 1 >"$tmp/layer.txt"
  # named by its content: an image packed on it (pack's key) names it
  hex=$(cut -c8-23 "$tmp/layer.tar.gz.diff_id")
  mv "$tmp/layer.tar.gz" "$tmp/$hex.tar.gz"
  mv "$tmp/layer.tar.gz.diff_id" "$tmp/$hex.tar.gz.diff_id"
  echo "$hex.tar.gz" >"$tmp/layer"
  rm -rf "$stage"
  rm -rf "$d"
  mv -T "$tmp" "$d"
  find "$dir" -mindepth 1 -maxdepth 1 -type d -mtime +7 -exec rm -rf {} +
  log "torch-train: lower layer built in $((SECONDS - t0))s: $(sed -n 's/^layer_bytes=//p' "$d/layer.txt") bytes gzip, $(sed -n 's/^tar_bytes=//p' "$d/layer.txt") bytes unpacked"
  echo "$d/$(cat "$d/layer")"
}

build_torch_train() {
  local ref epoch data=build/train/digits.csv.gz base p
  local drake=${DRAKE_BIN:-build/release/drake}
  local -a targets=("$data")
  ref=$(ref_of torch-train)
  [ -n "${DRAKE_BIN:-}" ] || targets+=(build/release/drake)
  log "torch-train: make ${targets[*]} VERSION=$VERSION"
  make --no-print-directory -j2 "${targets[@]}" VERSION="$VERSION" >&2
  [ -x "$drake" ] || die "$drake: not built"
  base=$(torch_base)
  epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
  new_root torch-train
  # every file of the lower layer, listed here; add_libs skips them
  cat "$(dirname "$base")/packages.txt" >>"$pkglist"
  while IFS=$'\t' read -r p _; do in_lower[$p]=1; done <"$(dirname "$base")/packages.txt"
  add_file examples/torch-train/torchrun.py /usr/local/bin/torchrun 0755 "examples/torch-train/torchrun.py of this repository ($VERSION)"
  add_file examples/torch-train/torch-train.py /usr/local/bin/torch-train 0755 "examples/torch-train/torch-train.py of this repository ($VERSION)"
  add_file "$drake" /usr/local/bin/drake 0755 "built from this repository by make ($("$drake" version))"
  add_libs "$drake"
  add_ca
  add_digits "$data"
  add_etc train 65532
  pack torch-train "torch-train-$(tag_of "$ref")" "$ref" "$epoch" --lower "$base" \
    --entrypoint '["/usr/local/bin/torchrun"]' --cmd '["/usr/local/bin/torch-train"]' \
    --user 65532:65532 --port 23456 --workdir / \
    --env TORCH_TRAIN_DATA=/usr/share/drake-train/digits.csv.gz --env PYTHONDONTWRITEBYTECODE=1 \
    --label org.opencontainers.image.title=torch-train \
    --label "org.opencontainers.image.description=drake's example elastic PyTorch trainer for PyTorchJobs (examples/torch-train)" \
    --label "org.opencontainers.image.version=$VERSION"
}

for w in "${which[@]}"; do
  if [ "$print_ref" = 1 ]; then
    ref_of "$w"
    continue
  fi
  case "$w" in
  drake) build_drake ;;
  pause) build_pause ;;
  kube-scheduler) build_kube_scheduler ;;
  busybox) build_busybox ;;
  train) build_train ;;
  torch-train) build_torch_train ;;
  *) die "unknown image $w (drake, pause, kube-scheduler, busybox, train, torch-train, all)" ;;
  esac
done
