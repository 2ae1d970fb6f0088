#!/usr/bin/env bash
# bench-frag.sh - `make bench-frag`: GPU fragmentation on the
# cluster. A simple-mode cluster (every pod through drake, whose extender
# entry names prioritizeVerb) with no nodes of cluster-up.sh's own shapes;
# the Go driver e2e/cmd/bench-frag adds BENCH_FRAG_NODES (300) kwok nodes
# shaped like the openb GPU nodes of traces/ and places pods of
# a task list (the default one; BENCH_FRAG_ARGS="--list gpuspec25" for one
# whose tasks ask for GPU models by node affinity) one at a time through kube-scheduler, once with
# drake's score on prioritize and once without, until the first pod fits
# nowhere; it prints the GPU allocation of each arm side by side and writes
# BENCH_FRAG_CSV (bench/results/bench-frag.csv). kube-scheduler scores every
# feasible node (percentageOfNodesToScore 100) in both arms, so drake's
# score is given every node to choose from. The cluster is always torn
# down.
#
# env: BENCH_FRAG_NODES, BENCH_FRAG_SEEDS (1,2,3), BENCH_FRAG_ARGS (more driver
#      flags), TRACES (traces/ of this repository; a relative path is
#      taken from the repository root); DRAKE_CLUSTER_DIR keeps a run
#      apart from other work.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
rc=1
finish() {
  "$drake_root/hack/cluster-down.sh" || true
  [ "$rc" = 0 ] || echo "bench-frag failed (rc=$rc): logs in $cluster_dir/logs"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM
export DRAKE_API_QPS=${DRAKE_API_QPS:-5000} DRAKE_API_BURST=${DRAKE_API_BURST:-10000}
mkdir -p "$cluster_dir" "$drake_root/bench/results"
(cd "$drake_root/e2e" && go build -o "$cluster_dir/bench-frag" ./cmd/bench-frag)
"$drake_root/hack/cluster-up.sh" --mode simple --nodes 0 --large-nodes 0 --mig-nodes 0 --amd-nodes 0 \
  --percentage-of-nodes-to-score 100 --qps 5000 --burst 10000
# shellcheck disable=SC1091
source "$cluster_dir/env"
cd "$drake_root"
set +e
# shellcheck disable=SC2086
"$cluster_dir/bench-frag" --traces "${TRACES:-$drake_root/traces}" --nodes "${BENCH_FRAG_NODES:-300}" \
  --seeds "${BENCH_FRAG_SEEDS:-1,2,3}" --csv "${BENCH_FRAG_CSV:-$drake_root/bench/results/bench-frag.csv}" \
  ${BENCH_FRAG_ARGS:-}
rc=$?
set -e
