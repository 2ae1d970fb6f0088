#!/usr/bin/env bash
# up.sh - `make up`: start the local cluster (hack/cluster-up.sh, options and
# DRAKE_* variables pass through; with DRAKE_REAL_NODES=N, `make up
# REAL_NODES=N`, N real nodes only and a TFJob of drake-train that trains on
# them instead of what follows), apply examples/hello-pods.yaml, install the
# TFJob CRD, restart drake with its TFJob controller, submit the TFJob from
# DRAGON's README unchanged and wait until it runs as a gang, then print what
# to look at. The cluster keeps running until `make down`.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
real=${DRAKE_REAL_NODES:-0}
if [ "$real" -gt 0 ]; then
  # Real nodes only: they run containers, so the demo is a job that trains
  # (examples/train/tfjob.yaml, drake-train's image imported into each node)
  "$drake_root/hack/cluster-up.sh" --nodes 0 --large-nodes 0 --mig-nodes 0 --amd-nodes 0 "$@"
  # shellcheck disable=SC1091
  source "$cluster_dir/env"
  k="$DRAKE_CP_BIN/kubectl"
  "$drake_root/hack/real-nodes.sh" import "$(TRAIN_IMAGE_TAG=dev "$drake_root/hack/build-image.sh" --which train)"
  "$k" apply -f "$drake_root/config/crd/kubeflow.org_tfjobs.yaml"
  "$k" wait --for=condition=Established crd/tfjobs.kubeflow.org --timeout=60s
  DRAKE_RECONCILE=true "$drake_root/hack/cluster-drake.sh" restart
  "$k" create namespace demo --dry-run=client -o yaml | "$k" apply -f -
  "$k" apply -n demo -f "$drake_root/examples/train/tfjob.yaml"
  training() {
    [ "$("$k" get pods -n demo -l training.kubeflow.org/job-name=digits \
      -o jsonpath='{range .items[?(@.status.phase=="Running")]}x{end}')" = xxxxx ]
  }
  wait_for "TFJob digits (1 PS + 4 workers of drake-train) running on $real real nodes" 180 - training
  "$k" get pods -n demo -o wide
  cat <<EOM

drake is kube-scheduler's extender ($DRAKE_EXTENDER_MODE mode) on a local cluster of $real real nodes
(kubelet, containerd, CNI, kube-proxy, CoreDNS: e2e/README.md, "Real nodes").

  export KUBECONFIG=$KUBECONFIG PATH=$DRAKE_CP_BIN:\$PATH
  kubectl logs -n demo -f digits-ps-0     # steps/s and test accuracy, to 0.96
  kubectl get tfjobs -n demo -w            # Succeeded when worker 0 reaches the target
  kubectl exec -n demo digits-worker-0 -- /usr/local/bin/drake version

Logs of every component: $DRAKE_CLUSTER_DIR/logs/
Stop everything:          make down
EOM
  exit 0
fi
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

# The TFJob controller needs its CRD before it can sync (drake's /readyz
# waits for every cache), so drake is restarted with it once the CRD exists.
"$k" apply -f "$drake_root/config/crd/kubeflow.org_tfjobs.yaml"
"$k" wait --for=condition=Established crd/tfjobs.kubeflow.org --timeout=60s
DRAKE_RECONCILE=true "$drake_root/hack/cluster-drake.sh" restart
"$k" apply -n demo -f "$drake_root/config/crd/examples/dragon-readme.yaml"
gang_running() {
  [ "$("$k" get pods -n demo -l training.kubeflow.org/job-name=job1 \
    -o jsonpath='{range .items[?(@.status.phase=="Running")]}x{end}')" = xxxxx ]
}
wait_for "TFJob job1 (1 PS + 4 workers) running as one gang" 120 - gang_running
job_running() {
  [ "$("$k" get tfjob -n demo job1 -o jsonpath='{.status.conditions[-1:].type}')" = Running ]
}
wait_for "TFJob job1 Running" 60 - job_running
echo
"$k" get tfjobs -n demo
"$k" get pods -n demo -l training.kubeflow.org/job-name=job1 -o wide
"$k" get events -n demo --field-selector involvedObject.name=job1,reason=GangAdmitted \
  -o custom-columns=EVENT:.reason,MESSAGE:.message
c=$DRAKE_CERT_DIR
cat <<EOM

drake is kube-scheduler's extender ($DRAKE_EXTENDER_MODE mode) on a local cluster ($DRAKE_ALL_NODES kwok nodes: $DRAKE_NODES standard,
$DRAKE_LARGE_NODES large, $DRAKE_MIG_NODES MIG, $DRAKE_AMD_NODES AMD; see hack/cluster-up.sh --help).

  export KUBECONFIG=$KUBECONFIG PATH=$DRAKE_CP_BIN:\$PATH
  kubectl get nodes -L kwok.drake.dev/shape,node.kubernetes.io/instance-type,topology.kubernetes.io/zone
  kubectl get pods -n demo -o wide        # 'trainer' turns Completed after 60 s
  kubectl describe pod -n demo too-big    # FailedScheduling: not enough GPUs
  kubectl get events -n demo
  kubectl get tfjobs -n demo               # DRAGON's README job, gang-scheduled
  kubectl get pods -n demo -l training.kubeflow.org/job-name=job1 -o wide
  kubectl get pod -n demo job1-worker-0 -o jsonpath='{.metadata.annotations}'   # the plan

drake's metrics and waiting gangs (it requires kube-scheduler's client certificate):
  curl --cacert $c/ca.crt --cert $c/client.crt --key $c/client.key $DRAKE_METRICS_URL
  curl --cacert $c/ca.crt --cert $c/client.crt --key $c/client.key ${DRAKE_METRICS_URL%/metrics}/v1/jobs

Logs of every component: $DRAKE_CLUSTER_DIR/logs/   (drake.log, kube-scheduler.log, ...)
Scheduler configuration:  $DRAKE_CLUSTER_DIR/kube-scheduler.yaml
Stop everything:          make down
EOM
