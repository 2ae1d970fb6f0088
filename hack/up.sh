#!/usr/bin/env bash
# up.sh - `make up`: start the local cluster (hack/cluster-up.sh, options and
# DRAKE_* variables pass through), apply examples/hello-pods.yaml, wait until
# its pods are placed, and print what to look at. The cluster keeps running
# until `make down`.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
"$drake_root/hack/cluster-up.sh" "$@"
# shellcheck disable=SC1091
source "$cluster_dir/env"
k="$DRAKE_CP_BIN/kubectl"
"$k" apply -f "$drake_root/examples/hello-pods.yaml"
placed() {
  [ "$("$k" get pods -n demo -o jsonpath='{range .items[?(@.status.phase=="Running")]}x{end}')" = xxxx ]
}
wait_for "example pods Running" 120 - placed
"$k" get pods -n demo -o wide
c=$DRAKE_CERT_DIR
cat <<EOM

drake is kube-scheduler's extender on a local cluster ($DRAKE_NODES kwok nodes).

  export KUBECONFIG=$KUBECONFIG PATH=$DRAKE_CP_BIN:\$PATH
  kubectl get nodes
  kubectl get pods -n demo -o wide        # 'trainer' turns Completed after 60 s
  kubectl describe pod -n demo too-big    # FailedScheduling: not enough GPUs
  kubectl get events -n demo

drake's metrics (it requires kube-scheduler's client certificate):
  curl --cacert $c/ca.crt --cert $c/client.crt --key $c/client.key $DRAKE_METRICS_URL

Logs of every component: $DRAKE_CLUSTER_DIR/logs/   (drake.log, kube-scheduler.log, ...)
Scheduler configuration:  $DRAKE_CLUSTER_DIR/kube-scheduler.yaml
Stop everything:          make down
EOM
