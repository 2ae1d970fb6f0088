#!/usr/bin/env bash
# bench-e2e.sh - `make bench-e2e`: a local cluster with BENCH_NODES (1000)
# kwok nodes and three kube-schedulers (client qps/burst raised): one with drake
# as extender (simple mode: drake sees every pod), two without (one with
# OpportunisticBatching off, see cluster-up.sh). The Go driver
# e2e/cmd/bench-e2e creates BENCH_PODS (2000) plain pods per phase for each,
# in rotating order over BENCH_ROUNDS (2) rounds, and prints pods bound per
# second. Then, in the same cluster, the gang phase: the driver installs the
# TFJob CRD, restarts drake with its controller (DRAKE_RECONCILE=true, gang
# admission on by default; DRAKE_GANG_RESOURCE in a gang-mode cluster) through
# hack/cluster-drake.sh, creates BENCH_GANG_JOBS (150; 0 skips the phase)
# TFJobs of 1 PS + BENCH_GANG_WORKERS (7) one-GPU workers, and prints pods and
# jobs fully bound per second beside the plain rows, and the longest time any
# job was seen partially bound. CSV under bench/results/. The cluster is torn
# down afterwards. DRAKE_CLUSTER_DIR and DRAKE_BIN (a copy of the binary)
# keep a run apart from other work in the tree; the driver is built into the
# cluster folder.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
nodes=${BENCH_NODES:-1000}
rc=1
finish() {
  "$drake_root/hack/cluster-down.sh" || true
  [ "$rc" = 0 ] || echo "bench-e2e failed (rc=$rc): logs in $cluster_dir/logs"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM
mkdir -p "$drake_root/build"
# drake posts the Bindings: lift its API client limit too (default 100/s)
export DRAKE_API_QPS=${DRAKE_API_QPS:-5000} DRAKE_API_BURST=${DRAKE_API_BURST:-10000}
mkdir -p "$cluster_dir"
(cd "$drake_root/e2e" && go build -o "$cluster_dir/bench-e2e" ./cmd/bench-e2e)
"$drake_root/hack/cluster-up.sh" --nodes "$nodes" --plain-scheduler --mode simple \
  --qps "${BENCH_SCHED_QPS:-5000}" --burst "${BENCH_SCHED_BURST:-10000}" ${BENCH_UP_ARGS:-}
# shellcheck disable=SC1091
source "$cluster_dir/env"
cd "$drake_root"
"$cluster_dir/bench-e2e" --nodes "$nodes" --pods "${BENCH_PODS:-2000}" --rounds "${BENCH_ROUNDS:-2}" \
  --gang-jobs "${BENCH_GANG_JOBS:-150}" --gang-workers "${BENCH_GANG_WORKERS:-7}" --root "$drake_root" ${BENCH_ARGS:-}
rc=$?
