#!/usr/bin/env bash
# soak.sh - `make soak`: drake's TFJob controller and gang barrier in steady
# state. A gang-mode cluster with SOAK_NODES (200) standard kwok
# nodes plus cluster-up.sh's large, MIG and AMD ones; the Go driver
# e2e/cmd/soak restarts drake with its controller (DRAKE_RECONCILE=true,
# DRAKE_GANG_RESOURCE=drake.dev/gang) and, for SOAK_DURATION (30m), submits
# small TFJobs (1 PS + 1..4 GPU workers) at SOAK_RATE (0.5) jobs/s, queue held
# below --max-waiting, each finishing through kwok's run-for and deleted a
# while after it Succeeded. drake's RSS and open descriptors are sampled every
# 5 s into bench/results/soak/soak-<time>.csv (+ .png, gnuplot). The driver
# checks every job Succeeded, no partial gang, no pod recreated, drake the
# same process, RSS and descriptors flat, and prints "soak: N passed, N
# failed". The cluster is torn down afterwards; on failure its logs are kept
# beside the CSV (soak-<time>-logs/) and drake's last lines printed.
#
# env: SOAK_DURATION, SOAK_NODES, SOAK_RATE, SOAK_SEED (1), SOAK_ARGS (more
#      driver flags, e.g. --run-min 10s), SOAK_UP_ARGS (cluster-up.sh
#      options), SOAK_OUT (folder of the results); DRAKE_CLUSTER_DIR and
#      DRAKE_BIN keep a run apart from other work in the tree.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
nodes=${SOAK_NODES:-200}
duration=${SOAK_DURATION:-30m}
out=${SOAK_OUT:-$drake_root/bench/results/soak}
stamp=$(date -u +%Y%m%d-%H%M%S)
rc=1
finish() {
  "$drake_root/hack/cluster-down.sh" || true
  if [ "$rc" != 0 ] && [ -d "$cluster_dir/logs" ]; then
    keep="$out/soak-$stamp-logs"
    mkdir -p "$keep"
    cp -r "$cluster_dir/logs/." "$keep/"
    if [ -f "$keep/drake.log" ]; then
      echo "===== last lines of drake.log ====="
      tail -n 40 "$keep/drake.log"
    fi
    echo "soak failed (rc=$rc): component logs kept in $keep"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM
mkdir -p "$cluster_dir" "$out"
(cd "$drake_root/e2e" && go build -o "$cluster_dir/soak" ./cmd/soak)
# shellcheck disable=SC2086
"$drake_root/hack/cluster-up.sh" --nodes "$nodes" --mode gang ${SOAK_UP_ARGS:-}
# shellcheck disable=SC1091
source "$cluster_dir/env"
cd "$drake_root"
set +e
# shellcheck disable=SC2086
"$cluster_dir/soak" --duration "$duration" --rate "${SOAK_RATE:-0.5}" --seed "${SOAK_SEED:-1}" \
  --nodes "$nodes" --root "$drake_root" --cluster-dir "$cluster_dir" \
  --csv "$out/soak-$stamp.csv" ${SOAK_ARGS:-}
rc=$?
set -e
