#!/usr/bin/env bash
# bench-gang.sh - `make bench-gang`: gang scheduling under
# contention, drake against kube-scheduler's in-tree gang scheduling and
# against no gang at all, on one cluster, one arm at a time.
#
# A gang-mode cluster of BENCH_GANG_NODES (16) standard kwok nodes (8 GPUs
# each) plus cluster-up.sh's large, MIG and AMD nodes, with every scheduler
# the arms need, each its own kube-scheduler process (the driver runs one at
# a time): default-scheduler with drake (gang mode), gang-scheduler (in-tree
# GangScheduling, feature gates on kube-apiserver, kube-controller-manager
# and that scheduler), plain-scheduler (no extender), and for the
# cost-of-being-an-extender arm simple-scheduler (drake, every pod),
# drake-filter-scheduler (drake, filter only), drake-prio-scheduler
# (drake, filter and prioritize, no bind verb) and trivial-scheduler (a
# trivial extender, bench/extender_bench --names-serve). The Go driver
# e2e/cmd/bench-gang replays one job list per seed against each arm and
# prints the table; CSV and PNG go to BENCH_GANG_OUT
# (bench/results/bench-gang). The cluster is always torn down.
#
# env: BENCH_GANG_SEEDS (1,2,3), BENCH_GANG_DEMAND (2.5), BENCH_GANG_NODES,
#      BENCH_GANG_COST_PODS (600; 0 skips the cost arm), BENCH_GANG_ARGS
#      (more driver flags: --arms, --sizes, --run-min, --run-max,
#      --submit-window, --stall, --cost-rounds; --seeds= runs only the cost
#      arm), BENCH_GANG_UP_ARGS
#      (cluster-up.sh options); DRAKE_CLUSTER_DIR and DRAKE_BIN keep a run
#      apart from other work in the tree.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
nodes=${BENCH_GANG_NODES:-16}
out=${BENCH_GANG_OUT:-$drake_root/bench/results/bench-gang}
rc=1
finish() {
  "$drake_root/hack/cluster-down.sh" || true
  [ "$rc" = 0 ] || echo "bench-gang failed (rc=$rc): logs in $cluster_dir/logs"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM
# drake posts the Bindings and its controller the pods: lift its API client
# limit (default 100/s), as bench-e2e does
export DRAKE_API_QPS=${DRAKE_API_QPS:-5000} DRAKE_API_BURST=${DRAKE_API_BURST:-10000}
mkdir -p "$cluster_dir" "$out"
(cd "$drake_root/e2e" && go build -o "$cluster_dir/bench-gang" ./cmd/bench-gang)
# shellcheck disable=SC2086
"$drake_root/hack/cluster-up.sh" --nodes "$nodes" --mode gang \
  --plain-scheduler --gang-scheduler --simple-scheduler --filter-scheduler --prioritize-scheduler --trivial-extender \
  --qps "${BENCH_SCHED_QPS:-5000}" --burst "${BENCH_SCHED_BURST:-10000}" ${BENCH_GANG_UP_ARGS:-}
# shellcheck disable=SC1091
source "$cluster_dir/env"
cd "$drake_root"
set +e
# shellcheck disable=SC2086
"$cluster_dir/bench-gang" --seeds "${BENCH_GANG_SEEDS:-1,2,3}" --demand "${BENCH_GANG_DEMAND:-2.5}" \
  --cost-pods "${BENCH_GANG_COST_PODS:-600}" --root "$drake_root" --cluster-dir "$cluster_dir" --out "$out" \
  ${BENCH_GANG_ARGS:-}
rc=$?
set -e
