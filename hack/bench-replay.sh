#!/usr/bin/env bash
# bench-replay.sh - `make bench-replay`: a window of a real trace
# replayed on the local cluster against each arm in turn, run times by
# drake's own speed model (or, for a Pollux workload with --apps, by its
# applications' measured step times), beside `drake sim`'s prediction for
# the window.
#
# A gang-mode cluster of BENCH_REPLAY_NODES (16) kwok nodes of the
# simulator's node shape (--node-gpus 8, --node-cpu 96, --node-mem 768Gi:
# BENCH_REPLAY_NODE_GPUS, _CPU, _MEMORY), no other node shapes, with the
# schedulers the arms need, each its own kube-scheduler process (the driver
# runs one at a time): default-scheduler with drake (gang mode),
# gang-scheduler (in-tree GangScheduling, with a second profile
# gang-packed-scheduler that scores by MostAllocated) and plain-scheduler
# (no extender), and Volcano's vc-scheduler when --arms in BENCH_REPLAY_ARGS
# names volcano (hack/build-control-plane.sh volcano builds it; no default
# arm needs it). The Go driver e2e/cmd/bench-replay chooses the window, asks
# drake sim for its jobs, runs the arms and prints the table; CSVs and PNG
# go to BENCH_REPLAY_OUT (bench/results/bench-replay). The cluster is always
# torn down.
#
# env: BENCH_REPLAY_TRACE (traces/ms_itp_cluster03.csv of this repository),
#      BENCH_REPLAY_ARGS (more driver flags: --jobs, --start, --compression,
#      --arm-budget, --fill, --min-load, --runs, --arms, --apps,
#      --model-flags, --trace-flags; see bench-replay --help), BENCH_REPLAY_UP_ARGS
#      (cluster-up.sh options); DRAKE_CLUSTER_DIR and DRAKE_BIN keep a run
#      apart from other work in the tree.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
# no arguments: driver flags go in BENCH_REPLAY_ARGS; --help prints this
# header and the driver's flags, and starts nothing
case "${1:-}" in
"") ;;
-h | --help)
  print_header "$0"
  echo
  echo "driver flags (BENCH_REPLAY_ARGS):"
  (cd "$drake_root/e2e" && go run ./cmd/bench-replay -help 2>&1 | sed 1d) || true
  exit 0
  ;;
*)
  echo "bench-replay.sh: unexpected argument $1: driver flags go in BENCH_REPLAY_ARGS (see --help)" >&2
  exit 2
  ;;
esac
nodes=${BENCH_REPLAY_NODES:-16}
out=${BENCH_REPLAY_OUT:-$drake_root/bench/results/bench-replay}
trace=${BENCH_REPLAY_TRACE:-$drake_root/traces/ms_itp_cluster03.csv}
rc=1
finish() {
  "$drake_root/hack/cluster-down.sh" || true
  [ "$rc" = 0 ] || echo "bench-replay failed (rc=$rc): logs in $cluster_dir/logs"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM
export DRAKE_API_QPS=${DRAKE_API_QPS:-5000} DRAKE_API_BURST=${DRAKE_API_BURST:-10000}
mkdir -p "$cluster_dir" "$out"
# the driver's own tests first (its progress accounting, the window choice,
# gang/speed.c through cgo): a fraction of a second. Go's build cache does
# not see the C files its cgo wrappers #include (golang/go#24355): their
# hash in CGO_CFLAGS makes it compile them again when they change.
CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DDRAKE_CGO_SOURCES=$(cat "$drake_root"/{common,gang,kind,sim}/*.[ch] | sha256sum | cut -c1-16)"
export CGO_CFLAGS
(cd "$drake_root/e2e" && go test -count=1 ./cmd/bench-replay >/dev/null &&
  go build -o "$cluster_dir/bench-replay" ./cmd/bench-replay)
# the volcano arm's scheduler only when --arms names it
volcano=()
# shellcheck disable=SC2086
set -- ${BENCH_REPLAY_ARGS:-}
while [ $# -gt 0 ]; do
  case "$1" in
  --arms) arms=${2:-}; shift ;;
  --arms=*) arms=${1#--arms=} ;;
  esac
  shift
done
case ",${arms:-}," in *,volcano,*) volcano=(--volcano-scheduler) ;; esac
# shellcheck disable=SC2086
"$drake_root/hack/cluster-up.sh" --nodes "$nodes" --mode gang --minimal-nodes \
  --gpus "${BENCH_REPLAY_NODE_GPUS:-8}" --cpu "${BENCH_REPLAY_NODE_CPU:-96}" --memory "${BENCH_REPLAY_NODE_MEMORY:-768Gi}" \
  --plain-scheduler --gang-scheduler "${volcano[@]}" \
  --qps "${BENCH_SCHED_QPS:-5000}" --burst "${BENCH_SCHED_BURST:-10000}" ${BENCH_REPLAY_UP_ARGS:-}
# shellcheck disable=SC1091
source "$cluster_dir/env"
cd "$drake_root"
set +e
# shellcheck disable=SC2086
"$cluster_dir/bench-replay" --trace "$trace" --root "$drake_root" --cluster-dir "$cluster_dir" --out "$out" \
  ${BENCH_REPLAY_ARGS:-}
rc=$?
set -e
