#!/usr/bin/env bash
# cluster-drake.sh start|stop|restart - start or stop drake in the running
# local cluster (cluster-up.sh uses it; the e2e tests stop and restart drake
# with it to check what kube-scheduler does while drake is down).
# cluster-drake.sh start-replica NAME PORT | stop-replica NAME - a further
# drake, process drake-NAME (log drake-NAME.log), on PORT with leader
# election on (identity drake-NAME unless DRAKE_LEADER_ELECT_IDENTITY is
# set), for the high-availability tests; starting waits for /healthz only,
# since a standby is not ready.
# drake is stopped by its recorded PID; starting waits for /readyz.
# drake reads DRAKE_<FLAG> variables as fallbacks for its flags, and the
# environment passes through: e.g. DRAKE_RECONCILE=true,
# DRAKE_GANG_RESOURCE=drake.dev/gang, DRAKE_GANG_BIND_TIMEOUT=6s (the e2e
# tests set these). The ones set are logged at start. In a gang-mode
# cluster DRAKE_GANG_RESOURCE defaults to drake.dev/gang, the resource
# kube-scheduler's managedResources routes to drake: without it the
# controller's TFJob pods would never reach drake.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
[ -f "$cluster_dir/env" ] || cdie "no cluster in $cluster_dir"
# shellcheck disable=SC1091
source "$cluster_dir/env"

start() {
  local v n set=""
  if [ "${DRAKE_EXTENDER_MODE:-}" = gang ] && [ -z "${DRAKE_GANG_RESOURCE+x}" ]; then
    export DRAKE_GANG_RESOURCE=drake.dev/gang
  fi
  for v in RECONCILE GANG GANG_RESOURCE GANG_BIND_TIMEOUT GANG_MAX_UNBOUND GANG_PIN STRICT_FIFO \
    API_QPS API_BURST API_MAX_INFLIGHT API_TIMEOUT LEADER_ELECT LEADER_ELECT_IDENTITY; do
    n=DRAKE_$v
    [ -z "${!n:-}" ] || set="$set $n=${!n}"
  done
  if [ -n "$set" ]; then
    clog "drake environment:$set"
    mkdir -p "$cluster_dir/logs" && printf '# environment:%s\n' "$set" >>"$cluster_dir/logs/drake.log"
  fi
  local name=${1:-drake} port=${2:-$DRAKE_PORT} probe=${3:-readyz}
  start_proc "$name" "$DRAKE_BIN" serve --address 127.0.0.1 --port "$port" --prefix /scheduler \
    --tls-cert "$DRAKE_CERT_DIR/server.crt" --tls-key "$DRAKE_CERT_DIR/server.key" \
    --client-ca "$DRAKE_CERT_DIR/ca.crt" --kubeconfig "$KUBECONFIG" --log-level "${DRAKE_LOG_LEVEL:-info}"
  wait_for "$name $probe" 60 "$name" drake_ok "https://127.0.0.1:$port/$probe"
}

start_replica() {
  [ $# = 2 ] || { echo "usage: $0 start-replica NAME PORT" >&2; exit 2; }
  export DRAKE_LEADER_ELECT=true DRAKE_LEADER_ELECT_IDENTITY=${DRAKE_LEADER_ELECT_IDENTITY:-drake-$1}
  start "drake-$1" "$2" healthz
}

case "${1:-}" in
start) start ;;
stop) stop_proc drake ;;
restart) stop_proc drake; start ;;
start-replica) shift; start_replica "$@" ;;
stop-replica) stop_proc "drake-${2:?usage: $0 stop-replica NAME}" ;;
*) echo "usage: $0 start|stop|restart|start-replica NAME PORT|stop-replica NAME" >&2; exit 2 ;;
esac
