#!/usr/bin/env bash
# cluster-down.sh - stop every process hack/cluster-up.sh started, by its
# recorded PID, in reverse start order (never by process name), then remove
# etcd's data. Logs stay in $DRAKE_CLUSTER_DIR/logs for a post-mortem;
# --purge removes the whole state folder instead.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
purge=0
[ "${1:-}" = --purge ] && purge=1
names=()
[ -f "$cluster_dir/pids/order" ] && mapfile -t names < <(tac "$cluster_dir/pids/order")
for f in "$cluster_dir"/pids/*.pid; do
  [ -f "$f" ] || continue
  n=$(basename "$f" .pid)
  printf '%s\n' "${names[@]}" | grep -qx "$n" || names+=("$n")
done
# term_wait NAME... : SIGTERM each, then wait for all of them together;
# SIGKILL what is still there after 15 s.
term_wait() {
  local n p f deadline
  declare -A pid_of=()
  for n in "$@"; do
    f="$cluster_dir/pids/$n.pid"
    [ -f "$f" ] || continue
    p=$(cat "$f")
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null || true
      pid_of[$n]=$p
    fi
  done
  deadline=$((SECONDS + 15))
  for n in "$@"; do
    p=${pid_of[$n]:-}
    [ -n "$p" ] || continue
    while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then
      clog "$n (pid $p) ignored SIGTERM for 15s: SIGKILL"
      kill -KILL "$p" 2>/dev/null || true
    fi
    clog "stopped $n (pid $p)"
  done
}
# the clients of the API server together, then kube-apiserver, then etcd
# (an API server whose etcd is gone takes long to shut down)
clients=()
for n in "${names[@]}"; do
  case "$n" in kube-apiserver|etcd) ;; *) clients+=("$n") ;; esac
done
term_wait "${clients[@]}"
term_wait kube-apiserver
term_wait etcd
# real nodes: their namespaces, bridge, cgroups and what runs in them
[ -f "$cluster_dir/real/count" ] && "$drake_root/hack/real-nodes.sh" down
rm -rf "$cluster_dir/pids" "$cluster_dir/etcd"
if [ "$purge" = 1 ]; then
  rm -rf "$cluster_dir"
  clog "cluster down; $cluster_dir removed"
else
  [ -d "$cluster_dir/logs" ] && clog "cluster down; logs kept in $cluster_dir/logs"
fi
