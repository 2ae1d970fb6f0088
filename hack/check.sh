#!/usr/bin/env bash
# check.sh - everything CI runs, in order: dependencies, the pinned upstream
# binaries (hack/build-control-plane.sh: built once, cached under
# ~/.cache/drake), a -Werror build, drake's OCI image and checks of its
# contents (make image-check), lint, the Helm chart (helm lint, helm
# template), unit and integration tests, the same in one build under ASan
# and UBSan (make sanitize), the unit tests under valgrind, every libFuzzer
# target over its kept corpus and a few seconds more (make fuzz-smoke), the
# end-to-end suites on real control planes with kwok nodes (make e2e), the
# chart with drake's own image on real nodes (make chart-e2e-real), real
# training on them (make e2e-real), a few jobs of the trace replay per arm
# (make bench-replay-smoke), and a 2-minute soak (make soak-short). Every
# step runs even when an earlier one failed, so one CI run shows every
# problem. It ends with each step's minutes against the budget (40 minutes
# with the binaries cached, 60 from empty caches; a report, not a test),
# kept in build/check-times.txt, and one line that sums the suites' counts:
#   check: N passed, N failed
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
summary=build/check-summary.txt
times=build/check-times.txt
: >"$summary"
: >"$times"
failed_steps=()
t_start=$SECONDS

step() {
  local name=$1
  shift
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
  printf '%s\t%d\t%d\t%s\n' "$name" "$((SECONDS - t0))" "$rc" "$counts" >>"$times"
  [ "$rc" -eq 0 ] || failed_steps+=("$name")
}

has_target() { grep -q "^$1:" Makefile mk/*.mk 2>/dev/null; }

step deps hack/install-deps.sh
step binaries hack/build-control-plane.sh etcd k8s kwok helm node
step build make -j2 WERROR=1 all
step image make image-check
step lint make lint
step chart make chart-check
step test make -j2 WERROR=1 test
step sanitize make -j2 WERROR=1 sanitize
step valgrind make -j2 valgrind
step fuzz make -j2 fuzz-smoke
has_target e2e && step e2e make e2e
has_target chart-e2e-real && step real make chart-e2e-real
has_target e2e-real && step train make e2e-real
has_target bench-replay-smoke && step replay make bench-replay-smoke
has_target soak-short && step soak make soak-short

passed=$(awk '{s += $2} END {print s + 0}' "$summary")
failed=$(awk '{s += $4} END {print s + 0}' "$summary")
total=$((SECONDS - t_start))
echo
echo "=== minutes per step (budget: 40 in all with the binaries cached, 60 from empty caches)"
awk -F'\t' '{printf "  %-10s %6.1f  %-6s %s\n", $1, $2 / 60, ($3 == 0 ? "ok" : "FAILED"), $4}' "$times"
printf '  %-10s %6.1f  (budget 40 warm, 60 from empty caches)\n' total "$(awk -v t="$total" 'BEGIN {print t / 60}')"
printf 'total\t%d\n' "$total" >>"$times"
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
