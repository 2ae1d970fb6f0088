#!/usr/bin/env bash
# e2e-parallel.sh SUITE... - run end-to-end suites at the same time, each on
# a cluster of its own, and print their output one suite after the other.
#
# The suites spend most of their time waiting on the cluster (barrier and
# lease timeouts, starvation thresholds, kwok's pod stages), not computing,
# so on 2 cores they overlap: `make e2e` runs its four in about the time of
# the longest. Each gets its own state folder (build/cluster-SUITE, as
# DRAKE_CLUSTER_DIR) and a slice of the loopback ports (DRAKE_PORT_RANGE),
# so no two clusters can choose the same port; nothing else is shared but
# the cached binaries.
#
# suites:
#   simple          hack/e2e.sh in simple mode (the Go suite in e2e/)
#   gang            hack/e2e.sh in gang mode, but the fault and HA tests
#   gang-faults     the fault and HA tests (they stop and kill the control
#                   plane's components: about 5 minutes)
#   chart-second    hack/chart-e2e.sh secondScheduler
#   chart-extender  hack/chart-e2e.sh extenderOnly
#   replay          make bench-replay-smoke (a few jobs of the trace replay
#                   under every default arm)
#   soak            make soak-short (two minutes of the soak)
#
# Every suite's whole output (its "NAME: N passed, N failed" line last)
# follows in the order given, as each is read once all have ended; a suite's
# progress is in build/e2e-parallel/SUITE.log meanwhile. Exits non-zero if
# any suite failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- simple gang gang-faults chart-second chart-extender
faults='^(TestFault|TestHA)'
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"

out=$root/build/e2e-parallel
mkdir -p "$out"
# compile the Go suite once before the clusters start, so the suites do not
# build it side by side
(cd "$root/e2e" && go test -count=1 -run XXX . >/dev/null) || {
  echo "e2e-parallel: the e2e suite does not compile" >&2
  exit 1
}

# free-port.sh's ports are 15000-32767 at most; each suite takes an equal
# slice of 15000-31999
slice=$((17000 / $#))
pids=()
i=0
for s in "$@"; do
  case "$s" in
  simple) cmd=(env DRAKE_EXTENDER_MODE=simple "$root/hack/e2e.sh") ;;
  gang) cmd=(env DRAKE_EXTENDER_MODE=gang E2E_SKIP="$faults" "$root/hack/e2e.sh") ;;
  gang-faults) cmd=(env DRAKE_EXTENDER_MODE=gang E2E_RUN="$faults" E2E_NAME=e2e-gang-faults "$root/hack/e2e.sh") ;;
  chart-second) cmd=("$root/hack/chart-e2e.sh" secondScheduler) ;;
  chart-extender) cmd=("$root/hack/chart-e2e.sh" extenderOnly) ;;
  replay) cmd=(make -C "$root" --no-print-directory bench-replay-smoke) ;;
  soak) cmd=(make -C "$root" --no-print-directory soak-short) ;;
  *)
    echo "e2e-parallel: unknown suite $s (simple gang gang-faults chart-second chart-extender replay soak)" >&2
    exit 2
    ;;
  esac
  lo=$((15000 + i * slice))
  DRAKE_CLUSTER_DIR=$root/build/cluster-$s DRAKE_PORT_RANGE="$lo-$((lo + slice - 1))" \
    "${cmd[@]}" >"$out/$s.log" 2>&1 </dev/null &
  pids+=($!)
  echo "e2e-parallel: $s started (pid $!, log $out/$s.log)"
  i=$((i + 1))
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait; exit 130' INT TERM

rc=0
results=()
for j in "${!pids[@]}"; do
  wait "${pids[$j]}"
  r=$?
  [ "$r" -eq 0 ] || rc=1
  results+=("$r")
done
for j in "${!pids[@]}"; do
  s=${@:$((j + 1)):1}
  echo
  echo "===== e2e suite $s (exit ${results[$j]}) ====="
  cat "$out/$s.log"
done
exit "$rc"
