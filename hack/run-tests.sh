#!/usr/bin/env bash
# run-tests.sh SUITE BIN... - runs cmocka test programs, keeps each one's output
# under build/test-logs/SUITE/, and ends with one line CI reads:
#   SUITE: N passed, N failed
# A program that crashes or exits non-zero without reporting a failure counts
# as one failure. RUN_WRAPPER (e.g. valgrind) prefixes every program.
# TEST_JOBS (default 1) programs run at once; their reports follow in the
# order given. The unit suites run two at a time: most of the longest one
# (the reconciler's, against a fake API server) is waiting on its timers.
set -uo pipefail
suite=$1
shift
logs=build/test-logs/$suite
mkdir -p "$logs"
jobs_max=${TEST_JOBS:-1}

# logname BIN: the program's path under build/VARIANT/, / as _ (two folders
# have a score_test)
logname() {
  local rel=${1#*build/*/}
  echo "$logs/${rel//\//_}.log"
}

# run_one BIN: its output in its log, then "rc secs" in LOG.rc
run_one() {
  local bin=$1 log t0 rc
  log=$(logname "$bin")
  t0=$EPOCHREALTIME
  # shellcheck disable=SC2086
  ${RUN_WRAPPER:-} "$bin" >"$log" 2>&1
  rc=$?
  echo "$rc $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')" >"$log.rc"
}

for bin in "$@"; do
  rm -f "$(logname "$bin").rc"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$bin" &
done
wait

passed=0
failed=0
for bin in "$@"; do
  name=$(basename "$bin")
  log=$(logname "$bin")
  read -r rc secs <"$log.rc" 2>/dev/null || { rc=125 secs=?; }
  ok=$(grep -c '^\[       OK \]' "$log")
  bad=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | head -1)
  bad=${bad:-0}
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then bad=1; fi
  passed=$((passed + ok))
  failed=$((failed + bad))
  if [ "$bad" -ne 0 ]; then
    echo "FAIL $name (exit $rc, ${secs}s), output follows:"
    # the failed assertions first: a sanitizer's report of what a failed
    # test left allocated would fill the tail
    grep -E '^\[ +(ERROR|LINE|FAILED) +\]' "$log" | head -n 20 | sed 's/^/    /'
    echo "    ..."
    tail -n 60 "$log" | sed 's/^/    /'
  else
    echo "ok   $name ($ok tests, ${secs}s)"
  fi
done
echo "$suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
