#!/usr/bin/env bash
# bench-real-nodes.sh - what real nodes cost here: the time hack/cluster-up.sh
# takes to bring up N real nodes (and the whole cluster), the time until 10
# busybox pods run on them, the memory (RSS) of each node's kubelet,
# containerd and kube-proxy and of CoreDNS with those pods running, and the
# time make down takes. Prints a table and writes
# bench/results/real-nodes.csv (name,value,unit). Needs root, and the
# binaries of hack/build-control-plane.sh node (their cold build times are
# in its log lines: "built in Ns").
#
# usage: hack/bench-real-nodes.sh [N]   (N real nodes, default 2)
set -euo pipefail
now() { date +%s.%N; }
# since T: seconds since T, one decimal
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
n=${1:-2}
out=$drake_root/bench/results/real-nodes.csv
hack_dir=$drake_root/hack
"$hack_dir/build-control-plane.sh" etcd k8s kwok helm node >/dev/null
busybox=$("$hack_dir/build-image.sh" --which busybox 2>/dev/null)
ref=$("$hack_dir/build-image.sh" --which busybox --print-ref)
trap '"$hack_dir/cluster-down.sh" >/dev/null 2>&1 || true' EXIT

t0=$(now)
"$hack_dir/cluster-up.sh" --real-nodes "$n" --nodes 0 --large-nodes 0 --mig-nodes 0 --amd-nodes 0 \
  >"$cluster_dir/bench-up.log" 2>&1 || { tail -20 "$cluster_dir/bench-up.log"; exit 1; }
t_up=$(since "$t0")
t_nodes=$(sed -n 's/.*real nodes up in \([0-9]*\)s.*/\1/p' "$cluster_dir/bench-up.log")
# shellcheck disable=SC1091
source "$cluster_dir/env"
k() { "$DRAKE_CP_BIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }
"$hack_dir/real-nodes.sh" import "$busybox" >/dev/null 2>&1
t0=$(now)
k create deployment bench --image="$ref" --replicas=10 -- sleep 3600 >/dev/null
k patch deployment bench --type=json \
  -p '[{"op":"add","path":"/spec/template/spec/containers/0/imagePullPolicy","value":"Never"}]' >/dev/null
running() { [ "$(k get pods -l app=bench --field-selector status.phase=Running -o name | grep -c .)" -ge 10 ]; }
wait_for "10 busybox pods Running" 180 - running
t_pods=$(since "$t0")

rss() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$(cat "$cluster_dir/pids/$1.pid")/status"; }
{
  echo "name,value,unit"
  echo "real_nodes,$n,count"
  echo "cluster_up,$t_up,s"
  echo "real_nodes_up,$t_nodes,s"
  echo "ten_pods_running,$t_pods,s"
  for ((i = 0; i < n; i++)); do
    for p in kubelet containerd kube-proxy; do echo "rss_real-node-${i}_$p,$(rss "real-node-$i-$p"),MiB"; done
  done
  echo "rss_coredns,$(rss coredns),MiB"
  echo "rss_kube-apiserver,$(rss kube-apiserver),MiB"
} >"$out.tmp"
trap - EXIT
t0=$(now)
"$hack_dir/cluster-down.sh" >/dev/null 2>&1
echo "make_down,$(since "$t0"),s" >>"$out.tmp"
mv "$out.tmp" "$out"
column -s, -t "$out"
echo "(written to ${out#"$drake_root"/})"
