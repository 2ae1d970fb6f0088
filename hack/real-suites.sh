#!/usr/bin/env bash
# real-suites.sh - the real-node suites on one cluster: what make
# chart-e2e-real and make e2e-real check, without bringing up and tearing
# down a cluster for each (three of them otherwise, one a chart mode).
# One cluster of two real nodes with every image the suites use imported
# (but torch-train's, 250 MB of gzip, which only e2e-real's case 6 runs:
# it is imported in the background while e2e-real's cases 1 to 5 run, not
# beside the chart's suites, which restart a node's containerd; its exit
# status goes to $REAL_TORCH_IMPORT, which case 6 waits for); then, one
# after the other and each with REAL_SHARED=1 (real-lib.sh):
#   hack/chart-e2e-real.sh secondScheduler
#   hack/chart-e2e-real.sh extenderOnly
#   hack/e2e-real.sh
# Each suite installs drake itself and, at its end, leaves the cluster as
# it found it (real_reset: drake's release and the test namespaces gone,
# every kubelet and containerd running, the nodes Ready, untainted and
# advertising their GPUs, the host's kube-scheduler on the configuration it
# had at the start); a suite whose reset fails says so with a FAIL. Every
# suite runs even when one before it failed, and prints its own closing
# line, and so does the import (its time too). Needs root (and Debian's
# python3-torch: hack/install-deps.sh --torch); one real-node cluster at a
# time on the machine.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
# shellcheck source=hack/real-lib.sh
source "$(dirname "$0")/real-lib.sh"
hack_dir=$drake_root/hack
[ "${REAL_SHARED:-}" != 1 ] || cdie "real-suites.sh brings up the shared cluster itself"
torch_pid=""
trap '[ -z "$torch_pid" ] || kill "$torch_pid" 2>/dev/null || true; "$hack_dir/cluster-down.sh" || true' EXIT
trap 'exit 130' INT TERM

t0=$SECONDS
real_cluster_up drake kube-scheduler busybox train
cp "$cluster_dir/kube-scheduler.yaml" "$cluster_dir/kube-scheduler.yaml.shared"
echo "real-suites: the cluster is up with its images after $((SECONDS - t0))s"
# torch_import: torch-train's image (built, or found built, by
# hack/build-image.sh) imported into both nodes; then its exit status in
# $REAL_TORCH_IMPORT (written whole: e2e-real's case 6 waits for the file)
export REAL_TORCH_IMPORT=$cluster_dir/torch-import.rc
rm -f "$REAL_TORCH_IMPORT"
torch_import() {
  local t=$SECONDS f rc=0
  f=$(VERSION=$VERSION "$hack_dir/build-image.sh" --which torch-train) &&
    "$hack_dir/real-nodes.sh" import "$f" || rc=1
  echo "real-suites: torch-train's image built and imported in $((SECONDS - t))s, in the background (exit $rc)"
  echo "$rc" >"$REAL_TORCH_IMPORT.tmp" && mv "$REAL_TORCH_IMPORT.tmp" "$REAL_TORCH_IMPORT"
}
rc=0
for s in "chart-e2e-real.sh secondScheduler" "chart-e2e-real.sh extenderOnly" "e2e-real.sh"; do
  if [ "$s" = e2e-real.sh ]; then
    torch_import >"$cluster_dir/torch-import.log" 2>&1 &
    torch_pid=$!
  fi
  t=$SECONDS
  # shellcheck disable=SC2086
  REAL_SHARED=1 "$hack_dir/"$s || rc=1
  echo "real-suites: $s took $((SECONDS - t))s"
done
wait "$torch_pid" || true
torch_pid=""
# the import's log when it failed (case 6 said so), else its time
if [ "$(cat "$REAL_TORCH_IMPORT" 2>/dev/null)" = 0 ]; then
  tail -n 1 "$cluster_dir/torch-import.log"
else
  sed 's/^/    /' "$cluster_dir/torch-import.log"
fi
echo "real-suites: $((SECONDS - t0))s in all"
exit $rc
