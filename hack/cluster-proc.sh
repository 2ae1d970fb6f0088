#!/usr/bin/env bash
# cluster-proc.sh stop|kill|start NAME - stop one component of the running
# local cluster by its recorded PID, or start it again with the very command
# line cluster-up.sh started it with (pids/NAME.cmd: same binary, flags and
# port). The e2e fault tests use it on kube-apiserver, etcd and
# kube-scheduler; make bench-gang on the extra schedulers cluster-up.sh can
# start (any NAME ending in -scheduler; healthy: /healthz on the
# --secure-port of its recorded command line, volcano-scheduler's on its
# --healthz-address); the real-node tests on a
# real node's kubelet, containerd and kube-proxy (real-node-I-kubelet,
# -containerd, -kube-proxy; started again in the node's namespaces); drake
# has hack/cluster-drake.sh.
#   stop   SIGTERM, SIGKILL after 15 s (cluster-lib.sh's stop_proc)
#   kill   SIGKILL at once, as a crash would
#   start  runs pids/NAME.cmd again and waits until the component is healthy
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
[ -f "$cluster_dir/env" ] || cdie "no cluster in $cluster_dir"
# shellcheck disable=SC1091
source "$cluster_dir/env"

action=${1:-}
name=${2:-}
case "$name" in
etcd | kube-apiserver | kube-scheduler | kube-controller-manager | kwok | *-scheduler) ;;
real-node-[0-9]-kubelet | real-node-[0-9]-containerd | real-node-[0-9]-kube-proxy) ;;
*) echo "usage: $0 stop|kill|start etcd|kube-apiserver|kube-scheduler|kube-controller-manager|kwok|NAME-scheduler|real-node-I-kubelet|real-node-I-containerd|real-node-I-kube-proxy" >&2; exit 2 ;;
esac

node_index() { local i=${name#real-node-}; echo "${i%%-*}"; }
healthy() {
  case "$name" in
  etcd) curl -sf --max-time 2 "$DRAKE_ETCD_URL/health" ;;
  kube-apiserver) https_ok "$DRAKE_APISERVER_URL/readyz" ;;
  kube-scheduler) https_ok "$DRAKE_SCHEDULER_URL/healthz" ;;
  kube-controller-manager) https_ok "$DRAKE_KCM_URL/healthz" ;;
  kwok) proc_alive kwok ;;
  real-node-*-kubelet) "$drake_root/hack/real-nodes.sh" exec "$(node_index)" curl -sf --max-time 2 http://127.0.0.1:10248/healthz ;;
  real-node-*-containerd) "$drake_root/hack/real-nodes.sh" exec "$(node_index)" "$DRAKE_CP_BIN/ctr" version ;;
  real-node-*-kube-proxy) "$drake_root/hack/real-nodes.sh" exec "$(node_index)" curl -sf --max-time 2 http://127.0.0.1:10256/healthz ;;
  volcano-scheduler)
    curl -sf -o /dev/null --max-time 5 "http://$(tr '\0' '\n' <"$cluster_dir/pids/$name.cmd" | sed -n 's/^--healthz-address=//p')/healthz"
    ;;
  *-scheduler)
    local port
    port=$(tr '\0' '\n' <"$cluster_dir/pids/$name.cmd" | sed -n 's/^--secure-port=//p')
    https_ok "https://127.0.0.1:$port/healthz"
    ;;
  esac
}

case "$action" in
stop) stop_proc "$name" ;;
kill)
  f="$cluster_dir/pids/$name.pid"
  [ -f "$f" ] || cdie "$name is not running (no $f)"
  pid=$(cat "$f")
  kill -KILL "$pid" 2>/dev/null || true
  deadline=$((SECONDS + 15))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && cdie "$name (pid $pid) survived SIGKILL"
  rm -f "$f"
  clog "killed $name (pid $pid, SIGKILL)"
  ;;
start)
  cmdf="$cluster_dir/pids/$name.cmd"
  [ -f "$cmdf" ] || cdie "no recorded command line for $name ($cmdf)"
  mapfile -d '' -t cmd <"$cmdf"
  start_proc "$name" "${cmd[@]}"
  wait_for "$name healthy" 120 "$name" healthy
  ;;
*) echo "usage: $0 stop|kill|start NAME" >&2; exit 2 ;;
esac
