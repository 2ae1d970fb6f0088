#!/usr/bin/env bash
# e2e.sh - bring the local cluster up, run the Go e2e tests (e2e/), tear the
# cluster down whatever happened. On failure the component logs are copied to
# build/e2e-logs/<suite>-<time>/ and their last lines printed, then drake's log lines
# for the namespaces the failing tests name, then those tests' output.
#
# env: DRAKE_EXTENDER_MODE=simple|gang (default gang, as cluster-up.sh), E2E_UP_ARGS (extra
#      cluster-up.sh options), E2E_RUN (go test -run pattern), E2E_SKIP
#      (go test -skip pattern), E2E_NAME (the suite's name in its last line,
#      default e2e-MODE),
#      E2E_TIMEOUT (go test -timeout, default 30m: a suite is about 12 min)
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"

suite=${E2E_NAME:-e2e-${DRAKE_EXTENDER_MODE:-gang}}
rc=1
finish() {
  "$drake_root/hack/cluster-down.sh" || true
  if [ "$rc" != 0 ] && [ -d "$cluster_dir/logs" ]; then
    keep="$drake_root/build/e2e-logs/$suite-$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$keep"
    cp -r "$cluster_dir/logs/." "$keep/"
    for f in "$keep"/*.log; do
      echo "===== last lines of $(basename "$f") ====="
      tail -n 20 "$f"
    done
    # the failing assertions last, where a reader of the CI output looks
    if [ -f "$cluster_dir/go-test.log" ]; then
      cp "$cluster_dir/go-test.log" "$keep/"
      # each failing test's own output: what it logged since its "=== RUN"
      awk '/^=== (RUN|CONT)/ { buf = "" } { buf = buf $0 "\n" }
           /^--- FAIL/ { printf "%s", buf; buf = "" }' "$cluster_dir/go-test.log" >"$keep/failed.txt"
      # CI keeps no logs: drake's own account of the namespaces the failing
      # tests name (the barrier's per-pod lines left out)
      if [ -f "$keep/drake.log" ]; then
        for ns in $(grep -oE 'e2e-[a-z0-9]{6}' "$keep/failed.txt" | sort -u | head -n 5); do
          echo "===== drake.log for namespace $ns ====="
          grep -F "$ns/" "$keep/drake.log" | grep -vE 'msg=(gang_wait|bound) ' | tail -n 60 || true
        done
      fi
      echo "===== failed tests ($suite) ====="
      tail -n 60 "$keep/failed.txt"
    fi
    echo "e2e failed (rc=$rc): component logs kept in $keep"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# compile the tests before starting anything, and run the benchmark
# tools' own unit tests (the drivers' accounting, the arms' objects): no
# cluster, a few seconds
(cd "$drake_root/e2e" && go test -count=1 -run XXX . >/dev/null &&
  go test -count=1 ./cmd/... ./internal/... >/dev/null)
# shellcheck disable=SC2086
"$drake_root/hack/cluster-up.sh" ${E2E_UP_ARGS:-}
# shellcheck disable=SC1091
source "$cluster_dir/env"
set +e
out="$cluster_dir/go-test.log"
(cd "$drake_root/e2e" && go test -count=1 -v -timeout "${E2E_TIMEOUT:-30m}" ${E2E_RUN:+-run "$E2E_RUN"} ${E2E_SKIP:+-skip "$E2E_SKIP"} .) 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
# One line that make check sums with the other suites' counts.
echo "$suite: $(grep -c -- '^--- PASS' "$out") passed, $(grep -c -- '^--- FAIL' "$out") failed"
