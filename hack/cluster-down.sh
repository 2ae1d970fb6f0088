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
if [ -f "$cluster_dir/pids/order" ]; then
  for name in $(tac "$cluster_dir/pids/order"); do
    stop_proc "$name"
  done
fi
# anything recorded but not in the order file
for f in "$cluster_dir"/pids/*.pid; do
  [ -f "$f" ] && stop_proc "$(basename "$f" .pid)"
done
rm -rf "$cluster_dir/pids" "$cluster_dir/etcd"
if [ "$purge" = 1 ]; then
  rm -rf "$cluster_dir"
  clog "cluster down; $cluster_dir removed"
else
  [ -d "$cluster_dir/logs" ] && clog "cluster down; logs kept in $cluster_dir/logs"
fi
