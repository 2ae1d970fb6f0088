#!/usr/bin/env bash
# run-fuzz.sh SECONDS BIN... - runs each libFuzzer target for SECONDS on a
# scratch copy of its seed corpus (fuzz/corpus/<name>/, <name> being the
# binary's name without _fuzz), so the committed seeds stay as they are.
# Any crash, leak or sanitizer report fails the run; the reproducer is kept
# under build/fuzz-artifacts/. Ends with "fuzz: N passed, N failed".
set -uo pipefail
secs=$1
shift
passed=0
failed=0
mkdir -p build/fuzz-artifacts build/fuzz-logs
for bin in "$@"; do
  name=$(basename "$bin" _fuzz)
  work=build/fuzz-corpus/$name
  rm -rf "$work"
  mkdir -p "$work"
  [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/"
  log=build/fuzz-logs/$name.log
  echo "fuzz $name for ${secs}s ($(ls "$work" | wc -l) seeds)"
  if "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="build/fuzz-artifacts/$name-" -print_final_stats=1 "$work" >"$log" 2>&1; then
    passed=$((passed + 1))
    grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" | tail -1 | sed 's/^/    /'
  else
    failed=$((failed + 1))
    echo "FAIL fuzz target $name; last lines of $log:"
    tail -n 40 "$log" | sed 's/^/    /'
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
