#!/usr/bin/env bash
# check.sh - everything CI runs, in order: dependencies, a -Werror build,
# drake's OCI image and checks of its contents (make image-check), lint,
# the Helm chart (helm lint, helm template), unit and integration tests,
# the same under ASan and UBSan, the unit tests under valgrind, a
# fuzz smoke run of every libFuzzer target, and the end-to-end suite on a
# real control plane (with the chart installed for real), the chart with
# drake's own image on real nodes (make chart-e2e-real), real training on
# them (make e2e-real), a few jobs of the trace replay per arm (make
# bench-replay-smoke), and a 2-minute
# soak (make soak-short: steady-state TFJobs, drake's RSS and descriptors
# flat; about 3.5 minutes with the cluster). Every step runs
# even when an earlier one failed, so one CI run shows every problem. The
# last line sums the suites' own counts:
#   check: N passed, N failed
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
mkdir -p build
summary=build/check-summary.txt
: >"$summary"
failed_steps=()

step() {
  local name=$1
  shift
  local t0=$SECONDS
  echo
  echo "=== $name: $*"
  "$@" 2>&1 | tee "build/check-$name.log"
  local rc=${PIPESTATUS[0]}
  grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "build/check-$name.log" >>"$summary"
  echo "=== $name: exit $rc after $((SECONDS - t0))s"
  [ "$rc" -eq 0 ] || failed_steps+=("$name")
}

step deps hack/install-deps.sh
step build make -j2 WERROR=1 all
step image make image-check
step lint make lint
step chart make chart-check
step test make -j2 WERROR=1 test
step asan make -j2 WERROR=1 asan
step ubsan make -j2 WERROR=1 ubsan
step valgrind make -j2 valgrind
step fuzz make -j2 fuzz FUZZ_SECONDS="$FUZZ_SECONDS"
if grep -q '^e2e:' mk/*.mk 2>/dev/null; then
  step e2e make e2e
fi
if grep -q '^chart-e2e-real:' mk/*.mk 2>/dev/null; then
  step real make chart-e2e-real
fi
if grep -q '^e2e-real:' mk/*.mk 2>/dev/null; then
  step train make e2e-real
fi
if grep -q '^bench-replay-smoke:' mk/*.mk 2>/dev/null; then
  step replay make bench-replay-smoke
fi
if grep -q '^soak-short:' mk/*.mk 2>/dev/null; then
  step soak make soak-short
fi

passed=$(awk '{s += $2} END {print s + 0}' "$summary")
failed=$(awk '{s += $4} END {print s + 0}' "$summary")
echo
if [ ${#failed_steps[@]} -gt 0 ]; then
  # CI keeps only the end of the output: name what failed here, with the
  # first lines each failing step printed about it (run-tests.sh puts a
  # failed program's assertions first).
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
