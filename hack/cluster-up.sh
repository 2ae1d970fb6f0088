#!/usr/bin/env bash
# cluster-up.sh - a real Kubernetes control plane on 127.0.0.1 with drake as
# kube-scheduler's extender and kwok's simulated nodes.
#
#   etcd -> kube-apiserver (RBAC) -> kube-controller-manager -> drake
#        -> kube-scheduler (config/kube-scheduler.yaml.tmpl + drake's entry)
#        -> kwok + N fake nodes
#
# usage: hack/cluster-up.sh [options]
#   --nodes N        standard fake nodes kwok-node-0..N-1 (DRAKE_NODES, default 4;
#                    1000 for benchmarks); the extra shapes below come on top
#   --cpu C          cpu per standard node (DRAKE_NODE_CPU, default 32)
#   --memory M       allocatable memory per standard node (DRAKE_NODE_MEMORY,
#                    default 256Gi; capacity is 1/16 more, as kubelet reserves)
#   --gpus G         nvidia.com/gpu per standard node (DRAKE_NODE_GPUS, default 8)
#   --gpu-mib M      memory of each GPU in MiB, announced as KubeShare does in
#                    the node annotation kubeshare/gpu_info ("<id>:<MiB>,...")
#                    so fractional-GPU jobs can be placed (DRAKE_NODE_GPU_MIB,
#                    default 16384)
#   --pods P         pods per node (DRAKE_NODE_PODS, default 110)
#   --large-nodes N  larger nodes kwok-node-large-i, 64 cpu, 396Gi, 8 V100
#                    16GB, hugepages and an RDMA device-plugin resource
#                    (DRAKE_LARGE_NODES, default 1; 0: none)
#   --mig-nodes N    A100 80GB nodes kwok-node-mig-i, 24 cpu, one GPU whole and
#                    one split into 7 MIG 1g.10gb slices (DRAKE_MIG_NODES,
#                    default 1; 0: none)
#   --amd-nodes N    AMD nodes kwok-node-amd-i, 96 cpu, 8 amd.com/gpu and no
#                    nvidia.com/gpu (DRAKE_AMD_NODES, default 1; 0: none)
#   --real-nodes N   also N real nodes real-node-0..N-1 (DRAKE_REAL_NODES,
#                    default 0; up to 8): kubelet, containerd, runc, CNI and
#                    kube-proxy each, in namespaces of their own, and CoreDNS
#                    for cluster.local (hack/real-nodes.sh; needs root and
#                    hack/build-control-plane.sh node). They run containers;
#                    --nodes 0 --large-nodes 0 --mig-nodes 0 --amd-nodes 0
#                    leaves only them
#   --minimal-nodes  the old world: standard nodes only, advertising only cpu,
#                    memory, pods and nvidia.com/gpu, no extra labels
#                    (DRAKE_NODE_MINIMAL=1); overrides the three counts above
#   --mode MODE      gang: only pods requesting drake.dev/gang go through
#                    drake (managedResources, ignoredByScheduler; default);
#                    simple: every pod does (DRAKE_EXTENDER_MODE), and drake's
#                    entry names prioritizeVerb (weight 50) for drake's score
#                    unless DRAKE_PRIORITIZE=false
#   --plain-scheduler  also run kube-schedulers without any extender, profiles
#                    "plain-scheduler" and "plain-nobatch-scheduler" (the
#                    latter with OpportunisticBatching off); bench-e2e compares
#   --qps Q --burst B  kube-scheduler's API client limits (default 50/100)
#   --percentage-of-nodes-to-score P  every kube-scheduler's
#                    percentageOfNodesToScore (DRAKE_SCHED_PERCENTAGE;
#                    default 0: kube-scheduler's adaptive search; 100: every
#                    node, as before 2026-11-26)
#   --feature-gates G  feature gates for kube-apiserver and
#                    kube-controller-manager (DRAKE_FEATURE_GATES), e.g.
#                    GenericWorkload=true,GangScheduling=true
#   --runtime-config R kube-apiserver's --runtime-config (DRAKE_RUNTIME_CONFIG)
#   --gang-scheduler also run kube-scheduler "gang-scheduler" with the in-tree
#                    gang scheduling of KEP-4671 on (feature gates
#                    GenericWorkload and GangScheduling, per process) and no
#                    extender, its profiles gang-scheduler (stock scoring)
#                    and gang-packed-scheduler (NodeResourcesFit
#                    MostAllocated: bin packing); adds those gates to kube-apiserver and
#                    kube-controller-manager and serves
#                    scheduling.k8s.io/v1alpha2 (Workload, PodGroup)
#   --simple-scheduler  also run kube-scheduler "simple-scheduler" that sends
#                    every pod to drake (simple mode, managedResources []),
#                    beside a gang-mode default-scheduler: the same drake
#                    process answers both
#   --filter-scheduler  also run "drake-filter-scheduler": drake as extender
#                    with the filter verb only (no prioritize, bind, preempt),
#                    every pod, to tell the cost of each verb apart
#   --prioritize-scheduler  also run "drake-prio-scheduler": drake with filter
#                    and prioritize
#                    but no bind verb (kube-scheduler binds), every pod: what
#                    a prioritize round trip costs
#   --trivial-extender  also run a trivial extender (process
#                    "trivial-extender": build/release/bench/extender_bench
#                    --names-serve, libevent, OpenSSL and HTTP/2 as drake, answering
#                    filter with the node names it was sent) and
#                    "trivial-scheduler" calling it for every pod (filter
#                    only, same TLS settings as drake's entry)
#   --volcano-scheduler  also run Volcano's vc-scheduler (process
#                    "volcano-scheduler", schedulerName "volcano",
#                    config/volcano-scheduler.conf: actions enqueue, allocate,
#                    backfill; plugins gang, priority, predicates, nodeorder,
#                    binpack) after installing Volcano's CRDs; needs
#                    hack/build-control-plane.sh volcano. No vc-controller and
#                    no admission webhook: whoever submits creates the
#                    PodGroups (scheduling.volcano.sh/v1beta1)
#   The extra schedulers are profiles of their own processes (an extender
#   entry and feature gates apply to a whole kube-scheduler process);
#   hack/cluster-proc.sh stops and starts any of them by name.
#
# Node shapes. Real GPU nodes advertise more than cpu, memory and GPUs: pods,
# ephemeral-storage, hugepages-1Gi/-2Mi (usually "0"), and whatever device
# plugins add; kubelet reports capacity above allocatable (kube-reserved,
# system-reserved, eviction threshold), ephemeral-storage capacity in Ki and
# allocatable in plain bytes. Every kwok node here does the same, with the
# labels the cloud, kubelet and NVIDIA's GPU feature discovery put on real
# nodes (node.kubernetes.io/instance-type, topology.kubernetes.io/region and
# zone, nvidia.com/gpu.product, .count, .memory) and kwok.drake.dev/shape
# (standard, large, mig, amd) for the tests. Shapes, from public instance
# types (a real pool would be one provider; the shapes matter here):
#   standard  a GCE N1 custom machine with extended memory, 32 vCPU / 256 GiB
#             ("custom-32-262144-ext", the label follows --cpu/--memory), with
#             8 Tesla V100-SXM2-16GB attached (GCE allows 8 V100 on N1 up to
#             96 vCPU / 624 GB); odd-numbered ones also advertise
#             rdma/hca_shared_devices_a (Mellanox's RDMA shared-device plugin)
#   large     GCE n1-highmem-64 (64 vCPU, 416 GB) with 8 V100 16GB, 4Gi of
#             2Mi hugepages, rdma/hca_shared_devices_a
#   mig       GCE a2-ultragpu-2g (24 vCPU, 340 GB, 2 A100-SXM4-80GB), one GPU
#             in MIG mode under the device plugin's "mixed" strategy:
#             nvidia.com/gpu 1 and nvidia.com/mig-1g.10gb 7
#   amd       Azure ND MI300X v5 (96 vCPU, 1850 GiB, 8 AMD Instinct MI300X):
#             amd.com/gpu 8, rdma/hca_shared_devices_a
# All ports are picked free at start and written to $DRAKE_CLUSTER_DIR/env.
# On any failure the processes started so far are stopped (logs are kept).
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

nodes=${DRAKE_NODES:-4}
cpu=${DRAKE_NODE_CPU:-32}
memory=${DRAKE_NODE_MEMORY:-256Gi}
gpus=${DRAKE_NODE_GPUS:-8}
gpumib=${DRAKE_NODE_GPU_MIB:-16384}
podsper=${DRAKE_NODE_PODS:-110}
mode=${DRAKE_EXTENDER_MODE:-gang}
plain=${DRAKE_PLAIN_SCHEDULER:-0}
qps=${DRAKE_SCHED_QPS:-50}
burst=${DRAKE_SCHED_BURST:-100}
pct=${DRAKE_SCHED_PERCENTAGE:-0}
large=${DRAKE_LARGE_NODES:-1}
mig=${DRAKE_MIG_NODES:-1}
amd=${DRAKE_AMD_NODES:-1}
minimal=${DRAKE_NODE_MINIMAL:-0}
real=${DRAKE_REAL_NODES:-0}
gates=${DRAKE_FEATURE_GATES:-}
runtime_config=${DRAKE_RUNTIME_CONFIG:-}
gang_sched=0
simple_sched=0
filter_sched=0
prio_sched=0
volcano=0
trivial=0
while [ $# -gt 0 ]; do
  case "$1" in
  --nodes) nodes=$2; shift 2 ;;
  --cpu) cpu=$2; shift 2 ;;
  --memory) memory=$2; shift 2 ;;
  --gpus) gpus=$2; shift 2 ;;
  --gpu-mib) gpumib=$2; shift 2 ;;
  --pods) podsper=$2; shift 2 ;;
  --mode) mode=$2; shift 2 ;;
  --large-nodes) large=$2; shift 2 ;;
  --mig-nodes) mig=$2; shift 2 ;;
  --amd-nodes) amd=$2; shift 2 ;;
  --minimal-nodes) minimal=1; shift ;;
  --real-nodes) real=$2; shift 2 ;;
  --plain-scheduler) plain=1; shift ;;
  --qps) qps=$2; shift 2 ;;
  --burst) burst=$2; shift 2 ;;
  --percentage-of-nodes-to-score) pct=$2; shift 2 ;;
  --feature-gates) gates=$2; shift 2 ;;
  --runtime-config) runtime_config=$2; shift 2 ;;
  --gang-scheduler) gang_sched=1; shift ;;
  --simple-scheduler) simple_sched=1; shift ;;
  --filter-scheduler) filter_sched=1; shift ;;
  --prioritize-scheduler) prio_sched=1; shift ;;
  --trivial-extender) trivial=1; shift ;;
  --volcano-scheduler) volcano=1; shift ;;
  -h|--help) print_header "$0"; exit 0 ;;
  *) cdie "unknown option $1 (see --help)" ;;
  esac
done
case "$mode" in simple|gang) ;; *) cdie "--mode must be simple or gang" ;; esac
for v in "$nodes" "$large" "$mig" "$amd" "$real"; do
  case "$v" in ''|*[!0-9]*) cdie "node counts must be whole numbers (got '$v')" ;; esac
done
case "$pct" in ''|*[!0-9]*) cdie "--percentage-of-nodes-to-score must be 0..100 (got '$pct')" ;; esac
[ "$pct" -le 100 ] || cdie "--percentage-of-nodes-to-score must be 0..100 (got '$pct')"
if [ "$minimal" = 1 ]; then large=0 mig=0 amd=0; fi
# add_gates LIST MORE: LIST with MORE's gates appended unless already named
add_gates() {
  local out=$1 g
  for g in ${2//,/ }; do
    case ",$out," in *",${g%%=*}="*) ;; *) out=${out:+$out,}$g ;; esac
  done
  printf '%s' "$out"
}
if [ "$gang_sched" = 1 ]; then
  gates=$(add_gates "$gates" GenericWorkload=true,GangScheduling=true)
  case ",$runtime_config," in
  *,scheduling.k8s.io/v1alpha2=*) ;;
  *) runtime_config=${runtime_config:+$runtime_config,}scheduling.k8s.io/v1alpha2=true ;;
  esac
fi
trivial_bin=${DRAKE_TRIVIAL_EXTENDER_BIN:-$drake_root/build/release/bench/extender_bench}
if [ "$trivial" = 1 ] && [ ! -x "$trivial_bin" ]; then
  cdie "no $trivial_bin for --trivial-extender: make build/release/bench/extender_bench"
fi

drake_bin=${DRAKE_BIN:-$drake_root/build/release/drake}
[ -x "$drake_bin" ] || cdie "no drake binary at $drake_bin: run make"
bin=$("$drake_root/hack/build-control-plane.sh" --print-bindir)
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
  [ -x "$bin/$b" ] || cdie "missing $bin/$b: run hack/build-control-plane.sh (make control-plane)"
done
if [ "$volcano" = 1 ]; then
  for b in vc-scheduler volcano-crd; do
    [ -e "$bin/$b" ] || cdie "missing $bin/$b for --volcano-scheduler: run hack/build-control-plane.sh volcano"
  done
fi
if [ "$real" -gt 0 ]; then
  for b in kubelet kube-proxy containerd runc coredns; do
    [ -x "$bin/$b" ] || cdie "missing $bin/$b for --real-nodes: run hack/build-control-plane.sh node"
  done
fi

if [ -d "$cluster_dir/pids" ] && ls "$cluster_dir"/pids/*.pid >/dev/null 2>&1; then
  for f in "$cluster_dir"/pids/*.pid; do
    kill -0 "$(cat "$f")" 2>/dev/null && cdie "a cluster is already running in $cluster_dir (make down first)"
  done
fi
# a fresh state folder; the previous run's logs move to logs.prev
rm -rf "$cluster_dir/logs.prev" "$cluster_dir/etcd" "$cluster_dir/pids"
[ -d "$cluster_dir/logs" ] && mv "$cluster_dir/logs" "$cluster_dir/logs.prev"
mkdir -p "$cluster_dir"/{pki,logs,pids}

up_ok=0
on_exit() {
  if [ "$up_ok" != 1 ]; then
    clog "cluster-up failed: stopping what was started; logs in $cluster_dir/logs"
    "$drake_root/hack/cluster-down.sh" >&2 || true
  fi
}
trap on_exit EXIT

t_start=$SECONDS
pki=$cluster_dir/pki

# --- certificates -----------------------------------------------------------
# 10.96.0.1 (the kubernetes Service) and 10.251.0.2 (the API address inside
# real nodes, hack/real-nodes.sh) are where pods and kubelets reach it
if [ ! -f "$pki/admin.crt" ] || ! openssl x509 -in "$pki/admin.crt" -noout -ext subjectAltName 2>/dev/null | grep -q 10.251.0.2; then
  clog "making the cluster PKI (openssl)"
  (
    cd "$pki"
    q() { "$@" >/dev/null 2>&1 || { echo "openssl failed: $*" >&2; exit 1; }; }
    q openssl req -x509 -newkey rsa:2048 -nodes -days 365 -keyout ca.key -out ca.crt \
      -subj "/CN=drake-local-cluster-ca"
    # one identity for every component: the apiserver's serving cert and the
    # client cert of the admin, the scheduler, kcm, kwok and drake
    q openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=drake-admin"
    q openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
      -out admin.crt -extfile <(printf '%s\n' \
        'subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.96.0.1,IP:10.251.0.2' \
        'extendedKeyUsage=serverAuth,clientAuth' 'keyUsage=digitalSignature,keyEncipherment')
    # service-account token signing key
    q openssl genrsa -out sa.key 2048
    q openssl rsa -in sa.key -pubout -out sa.pub
    rm -f ./*.csr ./*.srl
    chmod 600 ./*.key
  )
fi
"$drake_root/hack/gen-certs.sh" "$cluster_dir/drake-pki"

# --- ports and env file -----------------------------------------------------
mkdir -p "$cluster_dir"
: >"$DRAKE_PORTS_FILE"
etcd_port=$(free_port)
etcd_peer_port=$(free_port)
api_port=$(free_port)
kcm_port=$(free_port)
sched_port=$(free_port)
plain_sched_port=$(free_port)
plain_nobatch_port=$(free_port)
gang_sched_port=$(free_port)
simple_sched_port=$(free_port)
filter_sched_port=$(free_port)
trivial_sched_port=$(free_port)
prio_sched_port=$(free_port)
trivial_port=$(free_port)
volcano_healthz_port=$(free_port)
volcano_metrics_port=$(free_port)
drake_port=$(free_port)
kubeconfig=$cluster_dir/admin.kubeconfig
cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: drake-local
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $pki/ca.crt
users:
- name: drake-admin
  user:
    client-certificate: $pki/admin.crt
    client-key: $pki/admin.key
contexts:
- name: drake-local
  context: {cluster: drake-local, user: drake-admin}
current-context: drake-local
EOF
chmod 600 "$kubeconfig"

cat >"$cluster_dir/env" <<EOF
# written by hack/cluster-up.sh; source it
export DRAKE_CLUSTER_DIR=$cluster_dir
export KUBECONFIG=$kubeconfig
export DRAKE_CP_BIN=$bin
export DRAKE_BIN=$drake_bin
export DRAKE_APISERVER_URL=https://127.0.0.1:$api_port
export DRAKE_ETCD_URL=http://127.0.0.1:$etcd_port
export DRAKE_PORT=$drake_port
export DRAKE_URL=https://127.0.0.1:$drake_port
export DRAKE_METRICS_URL=https://127.0.0.1:$drake_port/metrics
export DRAKE_CERT_DIR=$cluster_dir/drake-pki
export DRAKE_SCHEDULER_URL=https://127.0.0.1:$sched_port
export DRAKE_PLAIN_SCHEDULER=$plain
export DRAKE_PLAIN_SCHEDULER_URL=https://127.0.0.1:$plain_sched_port
export DRAKE_PLAIN_NOBATCH_SCHEDULER_URL=https://127.0.0.1:$plain_nobatch_port
export DRAKE_KCM_URL=https://127.0.0.1:$kcm_port
export DRAKE_GANG_SCHEDULER=$gang_sched
export DRAKE_GANG_SCHEDULER_URL=https://127.0.0.1:$gang_sched_port
export DRAKE_SIMPLE_SCHEDULER=$simple_sched
export DRAKE_SIMPLE_SCHEDULER_URL=https://127.0.0.1:$simple_sched_port
export DRAKE_FILTER_SCHEDULER=$filter_sched
export DRAKE_FILTER_SCHEDULER_URL=https://127.0.0.1:$filter_sched_port
export DRAKE_TRIVIAL_EXTENDER=$trivial
export DRAKE_TRIVIAL_SCHEDULER_URL=https://127.0.0.1:$trivial_sched_port
export DRAKE_TRIVIAL_EXTENDER_URL=https://127.0.0.1:$trivial_port
export DRAKE_VOLCANO_SCHEDULER=$volcano
export DRAKE_FEATURE_GATES=$gates
export DRAKE_EXTENDER_MODE=$mode
export DRAKE_NODES=$nodes
export DRAKE_NODE_CPU=$cpu
export DRAKE_NODE_MEMORY=$memory
export DRAKE_NODE_GPUS=$gpus
export DRAKE_NODE_GPU_MIB=$gpumib
export DRAKE_NODE_PODS=$podsper
export DRAKE_LARGE_NODES=$large
export DRAKE_MIG_NODES=$mig
export DRAKE_AMD_NODES=$amd
export DRAKE_NODE_MINIMAL=$minimal
export DRAKE_REAL_NODES=$real
export DRAKE_ALL_NODES=$((nodes + large + mig + amd + real))
EOF

# --- etcd -------------------------------------------------------------------
start_proc etcd "$bin/etcd" --name=drake0 --data-dir="$cluster_dir/etcd" \
  --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
  --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster="drake0=http://127.0.0.1:$etcd_peer_port" \
  --unsafe-no-fsync --quota-backend-bytes=4294967296 --log-level=warn
wait_for "etcd healthy" 60 etcd curl -sf --max-time 2 "http://127.0.0.1:$etcd_port/health"

# --- kube-apiserver ---------------------------------------------------------
# --endpoint-reconciler-type=none: the loopback advertise address would be
# rejected by the endpoints reconciler; nothing here needs the kubernetes
# service's endpoints.
start_proc kube-apiserver "$bin/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
  --endpoint-reconciler-type=none \
  --tls-cert-file="$pki/admin.crt" --tls-private-key-file="$pki/admin.key" \
  --client-ca-file="$pki/ca.crt" \
  --requestheader-client-ca-file="$pki/ca.crt" --requestheader-allowed-names=drake-front-proxy \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --kubelet-preferred-address-types=InternalIP \
  --kubelet-client-certificate="$pki/admin.crt" --kubelet-client-key="$pki/admin.key" \
  --allow-privileged=true \
  --max-requests-inflight=2000 --max-mutating-requests-inflight=1000 \
  --audit-policy-file="$drake_root/config/audit-policy.yaml" \
  --audit-log-path="$cluster_dir/logs/audit.log" --audit-log-format=json --audit-log-maxsize=0 \
  ${gates:+--feature-gates="$gates"} ${runtime_config:+--runtime-config="$runtime_config"} \
  --profiling=false
wait_for "kube-apiserver ready" 120 kube-apiserver https_ok "https://127.0.0.1:$api_port/readyz"

kctl() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# --- kube-controller-manager ------------------------------------------------
kcm_controllers=node-lifecycle-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,job-controller,replicaset-controller,deployment-controller,pod-garbage-collector-controller,ttl-after-finished-controller
# with GenericWorkload on, kube-apiserver puts the finalizer
# scheduling.k8s.io/podgroup-protection on every PodGroup and only this
# controller takes it off: without it no namespace holding one is ever deleted
case ",$gates," in
*,GenericWorkload=true,*) kcm_controllers=$kcm_controllers,podgroup-protection-controller ;;
esac
# real nodes run containers: pods mount kube-root-ca.crt, Services need
# their EndpointSlices (CoreDNS answers from them), and pods on a node that
# stops answering are evicted once their tolerations run out
[ "$real" -gt 0 ] &&
  kcm_controllers=$kcm_controllers,root-ca-certificate-publisher-controller,endpointslice-controller,taint-eviction-controller
start_proc kube-controller-manager "$bin/kube-controller-manager" \
  --kubeconfig="$kubeconfig" \
  --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$kcm_port" --leader-elect=false \
  --tls-cert-file="$pki/admin.crt" --tls-private-key-file="$pki/admin.key" \
  --root-ca-file="$pki/ca.crt" --service-account-private-key-file="$pki/sa.key" \
  --controllers="$kcm_controllers" \
  --kube-api-qps=500 --kube-api-burst=1000 \
  ${gates:+--feature-gates="$gates"} \
  --profiling=false
wait_for "kube-controller-manager healthy" 60 kube-controller-manager \
  https_ok "https://127.0.0.1:$kcm_port/healthz"

# --- drake ------------------------------------------------------------------
"$drake_root/hack/cluster-drake.sh" start

# --- kube-scheduler ---------------------------------------------------------
if [ "$mode" = gang ]; then
  managed='  # gang mode: only pods that request drake.dev/gang reach drake; the
  # scheduler ignores that resource when fitting (no node advertises it), and
  # the kubelet drops unadvertised extended resources before admission.
  managedResources:
  - name: drake.dev/gang
    ignoredByScheduler: true'
else
  managed='  # simple mode: managedResources empty, so every pod reaches drake.
  managedResources: []'
fi
# prioritizeVerb: in simple mode, unless DRAKE_PRIORITIZE=false (drake
# then answers 0 for every pod); never in gang-only mode
prio_verb='  prioritizeVerb: prioritize
  weight: 50'
no_prio_verb='  # (no prioritizeVerb)'
prio=$no_prio_verb
if [ "$mode" = simple ] && [ "${DRAKE_PRIORITIZE:-auto}" != false ]; then prio=$prio_verb; fi
render "$drake_root/config/drake-extender.yaml.tmpl" "$cluster_dir/drake-extender.yaml" \
  "DRAKE_PORT=$drake_port" "DRAKE_CA=$cluster_dir/drake-pki/ca.crt" \
  "DRAKE_CLIENT_CERT=$cluster_dir/drake-pki/client.crt" "DRAKE_CLIENT_KEY=$cluster_dir/drake-pki/client.key" \
  "MANAGED_RESOURCES=$managed" "PRIORITIZE=$prio"
# render_sched OUT NAME EXTENDERS: a kube-scheduler configuration from
# config/kube-scheduler.yaml.tmpl with this cluster's client limits and search
render_sched() {
  render "$drake_root/config/kube-scheduler.yaml.tmpl" "$1" \
    "KUBECONFIG=$kubeconfig" "QPS=$qps" "BURST=$burst" "PERCENTAGE=$pct" \
    "SCHEDULER_NAME=$2" "EXTENDERS=$3"
}
render_sched "$cluster_dir/kube-scheduler.yaml" default-scheduler "$(cat "$cluster_dir/drake-extender.yaml")"

start_sched() { # NAME CONFIG PORT [EXTRA ARGS]
  start_proc "$1" "$bin/kube-scheduler" --config="$2" "${@:4}" \
    --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$3" --profiling=false \
    --tls-cert-file="$pki/admin.crt" --tls-private-key-file="$pki/admin.key"
  wait_for "$1 healthy" 60 "$1" https_ok "https://127.0.0.1:$3/healthz"
}
start_sched kube-scheduler "$cluster_dir/kube-scheduler.yaml" "$sched_port"
if [ "$plain" = 1 ]; then
  render_sched "$cluster_dir/kube-scheduler-plain.yaml" plain-scheduler ""
  sed -i 's/^extenders:$/extenders: []  # the plain scheduler of bench-e2e: no extender/' \
    "$cluster_dir/kube-scheduler-plain.yaml"
  start_sched plain-scheduler "$cluster_dir/kube-scheduler-plain.yaml" "$plain_sched_port"
  # kube-scheduler turns off OpportunisticBatching (beta, on by default since
  # 1.35: identical pods reuse filter/score results) for any profile that has
  # an extender. A third scheduler without extender and with the gate off
  # separates that loss from the cost of the extender calls themselves.
  render_sched "$cluster_dir/kube-scheduler-plain-nobatch.yaml" plain-nobatch-scheduler ""
  sed -i 's/^extenders:$/extenders: []  # bench-e2e: no extender, no batching/' \
    "$cluster_dir/kube-scheduler-plain-nobatch.yaml"
  start_sched plain-nobatch-scheduler "$cluster_dir/kube-scheduler-plain-nobatch.yaml" "$plain_nobatch_port" \
    --feature-gates=OpportunisticBatching=false
fi
if [ "$gang_sched" = 1 ]; then
  # the in-tree peer of drake's gang barrier (KEP-4671): the GangScheduling
  # plugin is in the default profile once its gate is on; no extender
  render_sched "$cluster_dir/kube-scheduler-gang.yaml" gang-scheduler ""
  sed -i 's/^extenders:$/extenders: []  # in-tree gang scheduling, no extender/' "$cluster_dir/kube-scheduler-gang.yaml"
  # and a second profile, gang-packed-scheduler, that packs: NodeResourcesFit
  # scores by MostAllocated (the stock LeastAllocated spreads pods), as an
  # operator who wants locality would configure it (bench-replay's
  # in-tree-packed arm)
  sed -i "/^extenders: \\[\\]/e cat '$drake_root/config/kube-scheduler-packed-profile.yaml'" \
    "$cluster_dir/kube-scheduler-gang.yaml"
  grep -q gang-packed-scheduler "$cluster_dir/kube-scheduler-gang.yaml" ||
    cdie "kube-scheduler-gang.yaml: the gang-packed-scheduler profile was not inserted"
  start_sched gang-scheduler "$cluster_dir/kube-scheduler-gang.yaml" "$gang_sched_port" \
    --feature-gates="$(add_gates "$gates" GenericWorkload=true,GangScheduling=true)"
fi
if [ "$volcano" = 1 ]; then
  # Volcano's CRDs (from its module, by hack/build-control-plane.sh), then
  # vc-scheduler; it creates the queues "default" and "root" itself
  kctl create -f "$bin/volcano-crd/" -o name >/dev/null
  kctl wait --for condition=established --timeout=60s -f "$bin/volcano-crd/" >/dev/null
  start_proc volcano-scheduler "$bin/vc-scheduler" --kubeconfig="$kubeconfig" \
    --scheduler-conf="$drake_root/config/volcano-scheduler.conf" --scheduler-name=volcano \
    --leader-elect=false --kube-api-qps="$qps" --kube-api-burst="$burst" \
    --enable-healthz --healthz-address="127.0.0.1:$volcano_healthz_port" \
    --listen-address="127.0.0.1:$volcano_metrics_port"
  wait_for "volcano-scheduler healthy" 60 volcano-scheduler \
    curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$volcano_healthz_port/healthz"
fi
simple_managed='  # every pod reaches the extender (simple mode)
  managedResources: []'
# drake_entry OUT [PRIORITIZE]: drake's extender entry for every pod (simple
# mode), without prioritizeVerb unless PRIORITIZE gives its lines
drake_entry() {
  render "$drake_root/config/drake-extender.yaml.tmpl" "$1" \
    "DRAKE_PORT=$drake_port" "DRAKE_CA=$cluster_dir/drake-pki/ca.crt" \
    "DRAKE_CLIENT_CERT=$cluster_dir/drake-pki/client.crt" "DRAKE_CLIENT_KEY=$cluster_dir/drake-pki/client.key" \
    "MANAGED_RESOURCES=$simple_managed" "PRIORITIZE=${2:-$no_prio_verb}"
}
if [ "$simple_sched" = 1 ]; then
  drake_entry "$cluster_dir/drake-extender-simple.yaml"
  render_sched "$cluster_dir/kube-scheduler-simple.yaml" simple-scheduler "$(cat "$cluster_dir/drake-extender-simple.yaml")"
  start_sched simple-scheduler "$cluster_dir/kube-scheduler-simple.yaml" "$simple_sched_port"
fi
if [ "$filter_sched" = 1 ]; then
  # drake's entry without bindVerb and preemptVerb: one HTTPS call per pod,
  # as with the trivial extender below
  drake_entry "$cluster_dir/drake-extender-filter.yaml"
  sed -i -E '/^ *(bindVerb|preemptVerb):/d' "$cluster_dir/drake-extender-filter.yaml"
  render_sched "$cluster_dir/kube-scheduler-filter.yaml" drake-filter-scheduler "$(cat "$cluster_dir/drake-extender-filter.yaml")"
  start_sched drake-filter-scheduler "$cluster_dir/kube-scheduler-filter.yaml" "$filter_sched_port"
fi
if [ "$prio_sched" = 1 ]; then
  # drake's entry with prioritizeVerb and without bindVerb and preemptVerb
  drake_entry "$cluster_dir/drake-extender-prio.yaml" "$prio_verb"
  sed -i -E '/^ *(bindVerb|preemptVerb):/d' "$cluster_dir/drake-extender-prio.yaml"
  render_sched "$cluster_dir/kube-scheduler-prio.yaml" drake-prio-scheduler "$(cat "$cluster_dir/drake-extender-prio.yaml")"
  start_sched drake-prio-scheduler "$cluster_dir/kube-scheduler-prio.yaml" "$prio_sched_port"
fi
if [ "$trivial" = 1 ]; then
  # the floor of "the cost of being an extender": drake's TLS settings (its
  # serving certificate; kube-scheduler's client certificate checked against
  # drake's CA) and no work but answering the NodeNames array cut from the
  # request, which kube-scheduler reads back as "every node passes"
  start_proc trivial-extender "$trivial_bin" --names-serve "$trivial_port" "$cluster_dir/drake-pki"
  wait_for "trivial-extender listening" 30 trivial-extender \
    bash -c "ss -Htln 'sport = :$trivial_port' | grep -q ."
  cat >"$cluster_dir/trivial-extender.yaml" <<EOF
- urlPrefix: "https://127.0.0.1:$trivial_port/scheduler"
  filterVerb: filter
  nodeCacheCapable: true
  enableHTTPS: true
  tlsConfig:
    insecure: false
    serverName: "127.0.0.1"
    caFile: "$cluster_dir/drake-pki/ca.crt"
    certFile: "$cluster_dir/drake-pki/client.crt"
    keyFile: "$cluster_dir/drake-pki/client.key"
  httpTimeout: 30s
  ignorable: false
  managedResources: []
EOF
  render_sched "$cluster_dir/kube-scheduler-trivial.yaml" trivial-scheduler "$(cat "$cluster_dir/trivial-extender.yaml")"
  start_sched trivial-scheduler "$cluster_dir/kube-scheduler-trivial.yaml" "$trivial_sched_port"
fi

# --- kwok and its nodes -----------------------------------------------------
start_proc kwok "$bin/kwok" --kubeconfig="$kubeconfig" \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --config="$drake_root/config/kwok-stages.yaml" \
  --cidr=10.244.0.0/16 --node-ip=10.250.0.1
clog "creating $nodes standard nodes ($cpu cpu, $memory, $gpus nvidia.com/gpu, $podsper pods each)$([ "$minimal" = 1 ] && echo ', minimal resources') + $large large, $mig mig, $amd amd"
# One awk program writes every node: standard ones from the options, the
# other shapes from fixed tables (see the header). Quantities are written
# as kubelet reports them.
awk -v n="$nodes" -v cpu="$cpu" -v mem="$memory" -v gpu="$gpus" -v pods="$podsper" -v gpumib="$gpumib" \
  -v large="$large" -v mig="$mig" -v amd="$amd" -v minimal="$minimal" '
function gpuinfo(name, count, mib,   g, s) {
  s = ""
  for (g = 0; g < count; g++) s = s sprintf("%sGPU-%s-%d:%s", (g ? "," : ""), name, g, mib)
  return s
}
# node NAME ANNOTATIONS LABELS ALLOCATABLE CAPACITY (the last four: YAML flow-map bodies)
function node(name, ann, lab, alloc, cap) {
  printf "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: %s\n", name
  printf "    annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: \"0\"%s}\n", ann
  printf "    labels: {type: kwok, kubernetes.io/hostname: %s, kubernetes.io/os: linux, kubernetes.io/arch: amd64%s}\n", name, lab
  printf "  status:\n    allocatable: {%s}\n    capacity: {%s}\n", alloc, cap
}
function q(k, v) { return sprintf(", %s: \"%s\"", k, v) }
BEGIN {
  print "apiVersion: v1\nkind: List\nitems:"
  zones[0] = "us-central1-a"; zones[1] = "us-central1-b"; zones[2] = "us-central1-c"; zones[3] = "us-central1-f"
  # capacity memory: allocatable plus 1/16 (kube-reserved, system-reserved,
  # eviction threshold) when given in Gi
  memcap = mem
  if (mem ~ /^[0-9]+Gi$/) { g = mem; sub(/Gi$/, "", g); memcap = (g + int(g / 16)) "Gi"; mib = g * 1024 }
  itype = (mem ~ /^[0-9]+Gi$/) ? sprintf("custom-%s-%d-ext", cpu, mib) : "custom"
  for (i = 0; i < n; i++) {
    name = sprintf("kwok-node-%d", i)
    ann = (gpu > 0) ? sprintf(", kubeshare/gpu_info: \"%s\"", gpuinfo(name, gpu, gpumib)) : ""
    lab = sprintf(", drake.dev/node-group: group-%d", i % 4)
    if (minimal == 1) {
      res = sprintf("cpu: \"%s\", memory: \"%s\", pods: \"%s\", nvidia.com/gpu: \"%s\"", cpu, mem, pods, gpu)
      node(name, ann, lab, res, res)
      continue
    }
    lab = lab ", kwok.drake.dev/shape: standard" q("node.kubernetes.io/instance-type", itype) \
      ", topology.kubernetes.io/region: us-central1, topology.kubernetes.io/zone: " zones[i % 4]
    if (gpu > 0)
      lab = lab ", cloud.google.com/gke-accelerator: nvidia-tesla-v100, nvidia.com/gpu.product: Tesla-V100-SXM2-16GB" \
        q("nvidia.com/gpu.count", gpu) q("nvidia.com/gpu.memory", gpumib)
    rdma = (i % 2 == 1) ? q("rdma/hca_shared_devices_a", 1000) : ""
    common = q("pods", pods) q("hugepages-1Gi", 0) q("hugepages-2Mi", 0) q("nvidia.com/gpu", gpu) rdma
    node(name, ann, lab,
      sprintf("cpu: \"%s\", memory: \"%s\", ephemeral-storage: \"468118195763\"%s", cpu, mem, common),
      sprintf("cpu: \"%s\", memory: \"%s\", ephemeral-storage: \"507944172Ki\"%s", cpu, memcap, common))
  }
  for (i = 0; i < large; i++) {
    name = sprintf("kwok-node-large-%d", i)
    lab = ", kwok.drake.dev/shape: large, node.kubernetes.io/instance-type: n1-highmem-64" \
      ", topology.kubernetes.io/region: us-central1, topology.kubernetes.io/zone: " zones[i % 4] \
      ", cloud.google.com/gke-accelerator: nvidia-tesla-v100, nvidia.com/gpu.product: Tesla-V100-SXM2-16GB" \
      ", nvidia.com/gpu.count: \"8\", nvidia.com/gpu.memory: \"16384\""
    common = q("pods", pods) q("hugepages-1Gi", 0) q("hugepages-2Mi", "4Gi") q("nvidia.com/gpu", 8) \
      q("rdma/hca_shared_devices_a", 1000)
    node(name, sprintf(", kubeshare/gpu_info: \"%s\"", gpuinfo(name, 8, 16384)), lab,
      "cpu: \"64\", memory: \"396Gi\", ephemeral-storage: \"936070189056\"" common,
      "cpu: \"64\", memory: \"416Gi\", ephemeral-storage: \"1015889056Ki\"" common)
  }
  for (i = 0; i < mig; i++) {
    name = sprintf("kwok-node-mig-%d", i)
    lab = ", kwok.drake.dev/shape: mig, node.kubernetes.io/instance-type: a2-ultragpu-2g" \
      ", topology.kubernetes.io/region: us-central1, topology.kubernetes.io/zone: " zones[(i + 2) % 4] \
      ", cloud.google.com/gke-accelerator: nvidia-a100-80gb, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB" \
      ", nvidia.com/gpu.count: \"1\", nvidia.com/gpu.memory: \"81920\", nvidia.com/mig.strategy: mixed" \
      ", nvidia.com/mig-1g.10gb.count: \"7\""
    common = q("pods", pods) q("hugepages-1Gi", 0) q("hugepages-2Mi", 0) q("nvidia.com/gpu", 1) \
      q("nvidia.com/mig-1g.10gb", 7)
    node(name, sprintf(", kubeshare/gpu_info: \"%s\"", gpuinfo(name, 1, 81920)), lab,
      "cpu: \"24\", memory: \"316Gi\", ephemeral-storage: \"348312721475\"" common,
      "cpu: \"24\", memory: \"340Gi\", ephemeral-storage: \"377957096Ki\"" common)
  }
  for (i = 0; i < amd; i++) {
    name = sprintf("kwok-node-amd-%d", i)
    lab = ", kwok.drake.dev/shape: amd, node.kubernetes.io/instance-type: Standard_ND96isr_MI300X_v5" \
      ", topology.kubernetes.io/region: eastus, topology.kubernetes.io/zone: eastus-" (i % 3 + 1) \
      ", amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM, amd.com/gpu.count: \"8\""
    common = q("pods", pods) q("hugepages-1Gi", 0) q("hugepages-2Mi", 0) q("amd.com/gpu", 8) \
      q("rdma/hca_shared_devices_a", 1000)
    node(name, "", lab,
      "cpu: \"96\", memory: \"1800Gi\", ephemeral-storage: \"936070189056\"" common,
      "cpu: \"96\", memory: \"1850Gi\", ephemeral-storage: \"1015889056Ki\"" common)
  }
}' >"$cluster_dir/nodes.yaml"
[ $((nodes + large + mig + amd)) -eq 0 ] || kctl create -f "$cluster_dir/nodes.yaml" -o name >/dev/null
if [ "$real" -gt 0 ]; then
  "$drake_root/hack/real-nodes.sh" up "$real"
fi
# Ready, and the not-ready taint that admission puts on every new node
# removed again by kube-controller-manager's node-lifecycle controller
ready_nodes() {
  local n
  n=$(kctl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status} {.spec.taints}{"\n"}{end}' | grep -c '^True $')
  [ "$n" -ge "$all_nodes" ]
}
all_nodes=$((nodes + large + mig + amd + real))
wait_for "$all_nodes nodes Ready and untainted" $((60 + all_nodes / 5)) kwok ready_nodes
wait_for "default service account" 60 kube-controller-manager kctl get serviceaccount default -n default

loopback_only || cdie "a component listens beyond loopback"
clog "all listeners are on loopback"
up_ok=1
clog "cluster up in $((SECONDS - t_start))s: source $cluster_dir/env"
