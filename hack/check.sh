#!/usr/bin/env bash
# check.sh - everything CI runs, in order: dependencies; then, while the
# pinned upstream binaries build in the background (hack/build-control-plane.sh,
# cached under ~/.cache/drake: minutes from empty caches, nothing once
# cached) with the e2e drivers (one Go build cache), a -Werror build,
# drake's OCI image and checks of its contents (make image-check), lint,
# unit and integration tests, the same in one build under ASan and UBSan
# (make sanitize), the unit tests under valgrind and every libFuzzer target
# over its kept corpus and a few seconds more (make fuzz-smoke); then the
# Helm chart (helm lint, helm template); the kwok suites at once, each on
# its own control plane (make e2e: both modes' e2e suites and the chart
# installed in both of its modes, with a few jobs of the trace replay per
# arm and a 2-minute soak); the chart with drake's own image on real nodes
# and real training on them, TFJobs of drake-train and an elastic
# PyTorchJob of torch-train, on one real-node cluster (make real-suites:
# make chart-e2e-real's two modes, then make e2e-real). Every
# step runs even when an earlier one failed, so one CI run shows every
# problem. It ends with each step's minutes against the budget (40 minutes
# in all with the binaries cached, 60 from empty caches; a report, not a
# test), kept in build/check-times.txt, and one line that sums the
# suites' counts:
#   check: N passed, N failed
#
# env: CHECK_SKIP, step names to leave out (on a machine
#      that cannot run real nodes: "real"); the summary then names them
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
summary=build/check-summary.txt
times=build/check-times.txt
: >"$summary"
: >"$times"
failed_steps=()
t_start=$SECONDS

skipped=()
step() {
  local name=$1
  shift
  case " ${CHECK_SKIP:-} " in *" $name "*)
    skipped+=("$name")
    return 0
    ;;
  esac
  local t0=$SECONDS
  echo
  echo "=== $name: $*"
  "$@" 2>&1 | tee "build/check-$name.log"
  local rc=${PIPESTATUS[0]}
  grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "build/check-$name.log" >>"$summary"
  local counts
  counts=$(grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "build/check-$name.log" |
    awk '{p += $2; f += $4} END {if (NR) printf "%d passed, %d failed", p, f}')
  echo "=== $name: exit $rc after $((SECONDS - t0))s"
  record "$name" "$((SECONDS - t0))" "$rc" "$counts"
}

# record NAME SECONDS RC NOTE: the step's row in the table, and its failure
record() {
  printf '%s\t%d\t%d\t%s\n' "$1" "$2" "$3" "$4" >>"$times"
  [ "$3" -eq 0 ] || failed_steps+=("$1")
}

# The Go builds run in the background, where the C steps leave a core idle
# (the tests wait on timers, valgrind runs two programs, fuzzing one): first
# the control plane's binaries and the e2e drivers (one Go build cache),
# then, while the kwok suites run, the real nodes' (kubelet, containerd,
# runc, CNI, CoreDNS) and torch-train's image (Debian's python3-torch
# installed first; its lower layer, Python and torch, cached under
# ~/.cache/drake, so only its top layer is built per commit). With the
# binaries cached each takes seconds. Their rows in the table are how long
# the steps after them waited.
# timed NAME CMD...: CMD, then a line saying how long it took (its log's last)
timed() {
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  "$@"
  rc=$?
  echo "$name: exit $rc after $(($(date +%s) - t0))s, in the background"
  return "$rc"
}
cp_binaries() {
  # the C files bench-replay's cgo wrappers #include, hashed: Go's build
  # cache does not see them (golang/go#24355; hack/bench-replay.sh)
  local cgo
  cgo="${CGO_CFLAGS:--O2 -g} -DDRAKE_CGO_SOURCES=$(cat {common,gang,kind,sim}/*.[ch] | sha256sum | cut -c1-16)"
  hack/build-control-plane.sh etcd k8s kwok helm &&
    (cd e2e && export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" CGO_CFLAGS="$cgo" &&
      go test -count=1 -run XXX . >/dev/null && go build ./cmd/...)
}
# torch_image: python3-torch, and torch-train's image for make real-suites
torch_image() {
  hack/install-deps.sh --torch && hack/build-image.sh --which torch-train
}
# wait_for NAME PID: the step NAME is the wait for the background build PID
# (its log: build/check-NAME-build.log)
wait_for() {
  local name=$1 pid=$2 t0=$SECONDS rc
  echo
  echo "=== $name: waiting for the background build (pid $pid)"
  wait "$pid"
  rc=$?
  tee "build/check-$name.log" <"build/check-$name-build.log"
  echo "=== $name: exit $rc after waiting $((SECONDS - t0))s"
  record "$name" "$((SECONDS - t0))" "$rc" "waited; $(tail -n 1 "build/check-$name-build.log")"
}

step deps hack/install-deps.sh
timed binaries cp_binaries >build/check-binaries-build.log 2>&1 &
cp_pid=$!
step build make -j2 WERROR=1 all
step image make image-check
step lint make lint
step test make -j2 WERROR=1 test
step sanitize make -j2 WERROR=1 sanitize
step valgrind make -j2 valgrind
step fuzz make -j2 fuzz-smoke
wait_for binaries "$cp_pid"
timed node-binaries hack/build-control-plane.sh kubelet containerd runc cni coredns \
  >build/check-node-binaries-build.log 2>&1 &
node_pid=$!
timed torch-image torch_image >build/check-torch-image-build.log 2>&1 &
torch_pid=$!
step chart make chart-check
step e2e make e2e E2E_SUITES="simple gang gang-faults chart-second chart-extender replay soak"
wait_for node-binaries "$node_pid"
wait_for torch-image "$torch_pid"
step real make real-suites

passed=$(awk '{s += $2} END {print s + 0}' "$summary")
failed=$(awk '{s += $4} END {print s + 0}' "$summary")
total=$((SECONDS - t_start))
echo
echo "=== minutes per step (budget: 40 in all with the binaries cached, 60 from empty caches)"
awk -F'\t' '{printf "  %-13s %6.1f  %-6s %s\n", $1, $2 / 60, ($3 == 0 ? "ok" : "FAILED"), $4}' "$times"
printf '  %-13s %6.1f  (budget 40 warm, 60 from empty caches)\n' total "$(awk -v t="$total" 'BEGIN {print t / 60}')"
printf 'total\t%d\n' "$total" >>"$times"
[ ${#skipped[@]} -eq 0 ] || echo "  skipped (CHECK_SKIP): ${skipped[*]}"
if [ ${#failed_steps[@]} -gt 0 ]; then
  # CI keeps only the end of the output: name what failed here, with the
  # first lines each failing step printed about it (run-tests.sh puts a
  # failed program's assertions first).
  echo
  for name in "${failed_steps[@]}"; do
    echo "--- $name: what failed (whole log: build/check-$name.log)"
    grep -E -A3 '^(FAIL|not ok|--- FAIL)|SUMMARY: |runtime error:' "build/check-$name.log" |
      head -n 16
  done
  echo "failed steps: ${failed_steps[*]}"
  [ "$failed" -eq 0 ] && failed=${#failed_steps[@]}
fi
echo "check: $passed passed, $failed failed"
[ ${#failed_steps[@]} -eq 0 ]
