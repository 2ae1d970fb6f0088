#!/usr/bin/env bash
# cluster-drake.sh start|stop|restart - start or stop drake in the running
# local cluster (cluster-up.sh uses it; the e2e tests stop and restart drake
# with it to check what kube-scheduler does while drake is down).
# drake is stopped by its recorded PID; starting waits for /readyz.
# drake reads DRAKE_<FLAG> variables as fallbacks for its flags, and the
# environment passes through: e.g. DRAKE_RECONCILE=true,
# DRAKE_GANG_RESOURCE=drake.dev/gang, DRAKE_GANG_BIND_TIMEOUT=6s (the e2e
# tests set these). The ones set are logged at start.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
[ -f "$cluster_dir/env" ] || cdie "no cluster in $cluster_dir"
# shellcheck disable=SC1091
source "$cluster_dir/env"

start() {
  local v n set=""
  for v in RECONCILE GANG GANG_RESOURCE GANG_BIND_TIMEOUT GANG_MAX_UNBOUND STRICT_FIFO \
    API_QPS API_BURST API_MAX_INFLIGHT API_TIMEOUT; do
    n=DRAKE_$v
    [ -z "${!n:-}" ] || set="$set $n=${!n}"
  done
  if [ -n "$set" ]; then
    clog "drake environment:$set"
    mkdir -p "$cluster_dir/logs" && printf '# environment:%s\n' "$set" >>"$cluster_dir/logs/drake.log"
  fi
  start_proc drake "$DRAKE_BIN" serve --address 127.0.0.1 --port "$DRAKE_PORT" --prefix /scheduler \
    --tls-cert "$DRAKE_CERT_DIR/server.crt" --tls-key "$DRAKE_CERT_DIR/server.key" \
    --client-ca "$DRAKE_CERT_DIR/ca.crt" --kubeconfig "$KUBECONFIG" --log-level "${DRAKE_LOG_LEVEL:-info}"
  wait_for "drake ready" 60 drake drake_ok "$DRAKE_URL/readyz"
}

case "${1:-}" in
start) start ;;
stop) stop_proc drake ;;
restart) stop_proc drake; start ;;
*) echo "usage: $0 start|stop|restart" >&2; exit 2 ;;
esac
