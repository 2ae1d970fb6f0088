#!/usr/bin/env bash
# build-image.sh - drake-train's container image as an OCI archive, with no
# container engine: hack/build-image.sh --which train, the builder of drake's
# own images. `make train-image` runs it.
#
# The image holds:
#   /usr/local/bin/drake-train   the trainer (entrypoint)
#   /usr/local/bin/drake         drake itself, for `drake progress`
#   every shared library ldd finds for both, and their loader
#   /etc/ssl/certs/ca-certificates.crt, passwd and group (root, train 65532)
#   /usr/share/drake-train/digits.csv.gz, from Debian's python3-sklearn
#   /usr/share/doc/<package>/copyright for each package a file came from,
#   and /usr/share/doc/drake-image/packages.txt saying which
# It runs as 65532:65532 and exposes TF_CONFIG's default port, 2222.
#
# usage: examples/train/build-image.sh [--out DIR] [--print-ref]
# Prints the archive's path (or with --print-ref the image reference) on
# stdout; progress and the digest go to stderr.
# env: TRAIN_IMAGE (drake.local/drake-train), TRAIN_IMAGE_TAG (VERSION),
#      VERSION (git describe, as the Makefile), SOURCE_DATE_EPOCH (the last
#      commit's time), DRAKE_BIN and TRAIN_BIN (use these binaries, no make)
set -euo pipefail
exec "$(dirname "$0")/../../hack/build-image.sh" --which train "$@"
