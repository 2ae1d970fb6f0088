#!/usr/bin/env bash
# real-nodes.sh - real Kubernetes nodes for the local cluster: each one a
# kubelet with its own containerd, runc, CNI bridge and kube-proxy, in a
# network namespace and a mount namespace of its own, plus CoreDNS for the
# cluster domain. hack/cluster-up.sh --real-nodes N calls `up`, and
# hack/cluster-down.sh calls `down` after stopping every recorded process.
#
#   up N            start real-node-0..N-1 and CoreDNS (the control plane must
#                   be running: $DRAKE_CLUSTER_DIR/env)
#   down            remove what up made on the host (namespaces, bridge,
#                   cgroups, mounts); its processes are stopped by PID first,
#                   by cluster-down.sh
#   import FILE...  import OCI image archives into every real node's containerd
#   exec I CMD...   run CMD inside node I's network and mount namespaces (e.g.
#                   ctr -n k8s.io images ls, or ip addr)
#   names           print the process names of the real nodes, one a line
#
# The network, all inside namespaces this script makes (nothing listens on
# a host address but loopback):
#   bridge drake-rn0 10.251.0.1/24 on the host: nothing listens there; it
#     carries the nodes' traffic and the API server's calls to kubelets
#   node i: netns drake-rn-i, eth0 10.251.0.(10+i), pods 10.245.i.0/24 on its
#     own cni0 bridge, routes to every other node's pod range via that node
#   10.251.0.2:6443 (/32 on each node's lo): a socat in the node's netns
#     that carries connections over a unix socket to a socat on the host,
#     which connects to kube-apiserver on 127.0.0.1. The API server's
#     "kubernetes" Service (10.96.0.1:443) points there, so pods reach it
#     as in any cluster.
#   CoreDNS in netns drake-rn-dns, 10.251.0.3:53 (kubelet's clusterDNS)
#   the host routes 10.96.0.0/16 (Services) to node 0, whose kube-proxy
#     masquerades and forwards, so host processes (the local kube-scheduler)
#     reach a Service's ClusterIP as a control-plane node does
#
# The mount namespace of a node gives kubelet, containerd, runc and CNI their
# own state folders (node_private below: /var/lib/kubelet, /var/lib/containerd,
# /var/lib/cni, /var/log/pods, /var/log/containers, /run/containerd,
# /run/netns; each node's copies under real/), a sysfs of the node's network
# namespace, and /var/lib/kubelet shared so volume mounts reach containers. kubelet's cgroupRoot is /drake-<node> in every
# cgroup v1 hierarchy (cgroupfs driver; a shared root would let one kubelet
# remove the other's pods). On a cgroup v1 (or hybrid) machine kubelet
# needs failCgroupV1: false; on a pure cgroup v2 machine it is not set.
#
# A node advertises the machine's real CPU and memory (every node shares
# them) and DRAKE_REAL_NODE_GPUS (default 8) nvidia.com/gpu that it does not
# have: the status is patched, as one advertises any extended resource, so
# the planner and kube-scheduler see GPU nodes while containers run on CPU.
# Images come from `make image` (hack/build-image.sh) and are imported into
# each node's containerd, pinned so that the kubelet's image garbage
# collection keeps them; pods use imagePullPolicy IfNotPresent or Never (no
# registry is reachable).
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

real_dir=$cluster_dir/real
bridge=drake-rn0
host_ip=10.251.0.1
api_ip=10.251.0.2
dns_ip=10.251.0.3
dns_ns=drake-rn-dns
pod_supernet=10.245.0.0/16
service_cidr=10.96.0.0/16
gpus=${DRAKE_REAL_NODE_GPUS:-8}

# the folders kubelet, containerd, runc and the CNI plugins keep state in,
# hard-coded or by default: each node has its own copy of each (nothing
# else of the host is hidden from it)
node_private="/var/lib/kubelet /var/lib/containerd /var/lib/cni /var/log/pods /var/log/containers /run/containerd /run/netns"

node_name() { echo "real-node-$1"; }
node_ip() { echo "10.251.0.$((10 + $1))"; }
node_ns() { echo "drake-rn-$1"; }
pod_cidr() { echo "10.245.$1.0/24"; }
node_count() { cat "$real_dir/count" 2>/dev/null || echo 0; }

need_root() {
  [ "$(id -u)" = 0 ] || cdie "real nodes need root (network and mount namespaces, cgroups, mounts)"
}

# in_node I CMD...: CMD in node I's network and mount namespaces (the mount
# namespace is its holder process's)
in_node() {
  local i=$1
  shift
  local holder
  holder=$(cat "$cluster_dir/pids/$(node_name "$i")-ns.pid" 2>/dev/null) ||
    cdie "node $i is not running (no namespace holder)"
  nsenter --net="/run/netns/$(node_ns "$i")" --mount="/proc/$holder/ns/mnt" -- "$@"
}

# check_host: every reason a real node cannot start here, said plainly
check_host() {
  need_root
  local bin=$1 b
  for b in kubelet kube-proxy containerd containerd-shim-runc-v2 ctr runc coredns cni/bridge cni/host-local cni/loopback cni/portmap; do
    [ -x "$bin/$b" ] || cdie "missing $bin/$b: run hack/build-control-plane.sh node"
  done
  for b in socat nsenter unshare ip iptables conntrack; do
    command -v "$b" >/dev/null || cdie "real nodes need $b (hack/install-deps.sh installs it)"
  done
  grep -qw overlay /proc/filesystems || cdie "the kernel has no overlay filesystem (containerd's snapshotter)"
  [ -e /sys/fs/cgroup/cpu ] || [ -e /sys/fs/cgroup/cgroup.controllers ] ||
    cdie "no cgroup hierarchy mounted at /sys/fs/cgroup"
  ip netns list >/dev/null 2>&1 || cdie "cannot list network namespaces (ip netns)"
  local p
  for p in $node_private; do
    case "$drake_root/ $real_dir/ $bin/" in
    *"$p/"*) cdie "$drake_root, $real_dir or $bin is under $p, which each real node replaces with its own: move it, or set DRAKE_CLUSTER_DIR elsewhere" ;;
    esac
  done
}

cgroup_v1() { [ ! -e /sys/fs/cgroup/cgroup.controllers ]; }

# make_cgroup_root NAME: /NAME in every v1 hierarchy, cpuset filled from
# the parent (an empty cpuset.cpus would refuse every process)
make_cgroup_root() {
  local name=$1 h
  if cgroup_v1; then
    for h in /sys/fs/cgroup/*/; do
      [ "$h" = /sys/fs/cgroup/unified/ ] && continue
      [ -f "$h/cgroup.procs" ] || continue
      mkdir -p "$h/$name"
      if [ -f "$h/cpuset.cpus" ]; then
        cat "$h/cpuset.cpus" >"$h/$name/cpuset.cpus"
        cat "$h/cpuset.mems" >"$h/$name/cpuset.mems"
      fi
    done
  else
    mkdir -p "/sys/fs/cgroup/$name"
  fi
}

# remove_cgroup_root NAME: rmdir bottom-up (only empty cgroups can go)
remove_cgroup_root() {
  local name=$1 h
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -d "$h/$name" ] || continue
    find "$h/$name" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
}

# sign DIR NAME CN [O]: a client key and certificate from the cluster CA
sign() {
  local dir=$1 name=$2 cn=$3 o=${4:-}
  [ -f "$dir/$name.crt" ] && return 0
  openssl req -newkey rsa:2048 -nodes -keyout "$dir/$name.key" -out "$dir/$name.csr" \
    -subj "${o:+/O=$o}/CN=$cn" >/dev/null 2>&1 || cdie "openssl req for $cn failed"
  openssl x509 -req -in "$dir/$name.csr" -CA "$cluster_dir/pki/ca.crt" -CAkey "$cluster_dir/pki/ca.key" \
    -CAcreateserial -days 365 -out "$dir/$name.crt" \
    -extfile <(printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n') \
    >/dev/null 2>&1 || cdie "signing $cn failed"
  rm -f "$dir/$name.csr" "$cluster_dir/pki/ca.srl"
  chmod 600 "$dir/$name.key"
}

# kubeconfig FILE NAME: a kubeconfig for the API address inside the nodes
kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: drake-local
  cluster:
    server: https://$api_ip:6443
    certificate-authority: $cluster_dir/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: ${1%/*}/$2.crt
    client-key: ${1%/*}/$2.key
contexts:
- name: drake-local
  context: {cluster: drake-local, user: $2}
current-context: drake-local
EOF
}

# api_forwarder NAME NETNS: socat in NETNS on $api_ip:6443 -> the host socat
api_forwarder() {
  start_proc "$1" nsenter --net="/run/netns/$2" -- socat \
    "TCP-LISTEN:6443,bind=$api_ip,fork,reuseaddr" "UNIX-CONNECT:$real_dir/apiserver.sock"
}

# netns_up NAME IP: a network namespace on the bridge with IP, lo up, the API
# address on lo, a default route via the host (where it ends: the host
# forwards nothing) and routes to each node's pods
netns_up() {
  local ns=$1 ip=$2 veth=$3
  ip netns add "$ns"
  ip link add "$veth" type veth peer name eth0 netns "$ns"
  ip link set "$veth" master "$bridge" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" addr add "$api_ip/32" dev lo
  ip -n "$ns" route add default via "$host_ip"
}

up() {
  local n=$1 bin i name ns ip dir holder t0=$SECONDS
  case "$n" in '' | *[!0-9]*) cdie "up needs a node count (got '$n')" ;; esac
  [ "$n" -ge 1 ] && [ "$n" -le 8 ] || cdie "1 to 8 real nodes (got $n)"
  [ -f "$cluster_dir/env" ] || cdie "no cluster in $cluster_dir"
  # shellcheck disable=SC1091
  source "$cluster_dir/env"
  bin=$DRAKE_CP_BIN
  check_host "$bin"
  local pause
  pause=$("$drake_root/hack/build-image.sh" --which pause) || cdie "could not build the pause image"
  ip link show "$bridge" >/dev/null 2>&1 && cdie "bridge $bridge exists: another cluster runs real nodes (make down first)"
  rm -rf "$real_dir"
  mkdir -p "$real_dir"
  echo "$n" >"$real_dir/count"
  local kctl="$bin/kubectl --kubeconfig $KUBECONFIG"

  # the API server, reachable in the namespaces through one unix socket
  start_proc real-api-bridge socat "UNIX-LISTEN:$real_dir/apiserver.sock,fork,mode=600" \
    "TCP:127.0.0.1:${DRAKE_APISERVER_URL##*:}"
  wait_for "API bridge socket" 10 real-api-bridge test -S "$real_dir/apiserver.sock"
  # the kubernetes Service's endpoint: where pods reach the API server
  $kctl apply -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: real-nodes.drake.dev}
addressType: IPv4
endpoints:
- addresses: ["$api_ip"]
  conditions: {ready: true}
ports:
- {name: https, port: 6443, protocol: TCP}
EOF

  ip link add "$bridge" type bridge
  ip addr add "$host_ip/24" dev "$bridge"
  ip link set "$bridge" up

  # CoreDNS, in a namespace of its own
  netns_up "$dns_ns" "$dns_ip" drk-dns
  sign "$real_dir" coredns drake-coredns system:masters
  kubeconfig "$real_dir/coredns.kubeconfig" coredns
  cat >"$real_dir/Corefile" <<EOF
.:53 {
    errors
    health 127.0.0.1:8080
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $real_dir/coredns.kubeconfig drake-local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
EOF
  api_forwarder real-dns-api "$dns_ns"

  # the mount points of each node's private folders; those made here go
  # again at down
  local p
  for p in $node_private; do
    [ -d "$p" ] && continue
    mkdir -p "$p"
    echo "$p" >>"$real_dir/made-dirs"
  done
  sign "$real_dir" kube-proxy system:kube-proxy
  for ((i = 0; i < n; i++)); do
    name=$(node_name "$i") ns=$(node_ns "$i") ip=$(node_ip "$i") dir=$real_dir/$name
    mkdir -p "$dir"/{private,cni-conf,cgroup-keep}
    netns_up "$ns" "$ip" "drk-n$i"
    nsenter --net="/run/netns/$ns" -- sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
    # host -> pods of node i
    ip route add "$(pod_cidr "$i")" via "$ip" dev "$bridge"
    ip -n "$dns_ns" route add "$(pod_cidr "$i")" via "$ip"
    make_cgroup_root "drake-$name"

    # the node's mount namespace, held by a sleeping process
    # shellcheck disable=SC2016
    start_proc "$name-ns" nsenter --net="/run/netns/$ns" -- unshare -m --propagation slave -- bash -ec '
      d=$1
      mount --rbind /sys/fs/cgroup "$d/cgroup-keep"
      mount -t sysfs sysfs /sys
      mount --rbind "$d/cgroup-keep" /sys/fs/cgroup
      umount -l "$d/cgroup-keep"
      shift
      for p in "$@"; do
        mkdir -p "$d/private$p"
        mount --bind "$d/private$p" "$p"
      done
      mount --make-rshared /var/lib/kubelet
      touch "$d/mounts-ready"
      exec sleep infinity' real-node-ns "$dir" $node_private
    wait_for "$name namespaces" 10 "$name-ns" test -f "$dir/mounts-ready"
    holder=$(cat "$cluster_dir/pids/$name-ns.pid")
    local enter=(nsenter --net="/run/netns/$ns" --mount="/proc/$holder/ns/mnt" --)

    api_forwarder "$name-api" "$ns"

    # containerd
    cat >"$dir/containerd.toml" <<EOF
version = 3
[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = 'registry.k8s.io/pause:3.10'
[plugins.'io.containerd.cri.v1.runtime']
  # no CAP_SYS_RESOURCE on some machines: runc cannot lower a sandbox's
  # oom_score_adj to -998, so containerd keeps it at its own or above
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = 'io.containerd.runc.v2'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = '$bin/runc'
      SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['$bin/cni']
    conf_dir = '$dir/cni-conf'
EOF
    cat >"$dir/cni-conf/10-drake.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "drake-pods",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(pod_cidr "$i")"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
    start_proc "$name-containerd" "${enter[@]}" env PATH="$bin:$PATH" "$bin/containerd" --config "$dir/containerd.toml"
    wait_for "$name containerd" 60 "$name-containerd" "${enter[@]}" "$bin/ctr" version
    # the sandbox image its configuration pins (no registry is reachable)
    "${enter[@]}" "$bin/ctr" -n k8s.io images import "$pause" >/dev/null ||
      cdie "importing $pause into $name's containerd failed"

    # kubelet, with the node's own identity (Node authorizer, NodeRestriction)
    sign "$dir" kubelet "system:node:$name" system:nodes
    kubeconfig "$dir/kubelet.kubeconfig" kubelet
    printf 'nameserver %s\n' "$dns_ip" >"$dir/resolv.conf"
    {
      cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $cluster_dir/pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /drake-$name
clusterDomain: cluster.local
clusterDNS: [$dns_ip]
resolvConf: $dir/resolv.conf
podCIDR: $(pod_cidr "$i")
maxPods: 110
failSwapOn: false
serializeImagePulls: false
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
evictionHard: {memory.available: 100Mi, nodefs.available: 5%, imagefs.available: 5%}
EOF
      cgroup_v1 && echo 'failCgroupV1: false'
    } >"$dir/kubelet.yaml"
    start_proc "$name-kubelet" "${enter[@]}" env PATH="$bin:$PATH" "$bin/kubelet" \
      --config="$dir/kubelet.yaml" --kubeconfig="$dir/kubelet.kubeconfig" \
      --hostname-override="$name" --node-ip="$ip" \
      --node-labels="drake.dev/real-node=true,node.kubernetes.io/instance-type=local-$(nproc)cpu,topology.kubernetes.io/zone=local-a,drake.dev/node-group=real,nvidia.com/gpu.product=Fake-GPU,nvidia.com/gpu.count=$gpus" \
      --v=1

    # kube-proxy: Services inside the node (iptables, masquerade off-cluster)
    kubeconfig "$real_dir/kube-proxy.kubeconfig" kube-proxy
    cat >"$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $real_dir/kube-proxy.kubeconfig}
hostnameOverride: $name
bindAddress: $ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: $pod_supernet
mode: iptables
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
    start_proc "$name-kube-proxy" "${enter[@]}" "$bin/kube-proxy" --config="$dir/kube-proxy.yaml" --v=1
  done
  # every node reaches every other node's pods through that node
  local j
  for ((i = 0; i < n; i++)); do
    for ((j = 0; j < n; j++)); do
      [ "$i" = "$j" ] || ip -n "$(node_ns "$i")" route add "$(pod_cidr "$j")" via "$(node_ip "$j")"
    done
  done
  # Services from the host: through node 0's kube-proxy
  ip route add "$service_cidr" via "$(node_ip 0)" dev "$bridge"

  start_proc coredns nsenter --net="/run/netns/$dns_ns" -- "$bin/coredns" -conf "$real_dir/Corefile" -dns.port 53
  wait_for "CoreDNS ready" 60 coredns nsenter --net="/run/netns/$dns_ns" -- curl -sf --max-time 2 http://127.0.0.1:8181/ready

  for ((i = 0; i < n; i++)); do
    name=$(node_name "$i")
    wait_for "$name registered" 90 "$name-kubelet" $kctl get node "$name"
    # GPUs it does not have: the status is patched (kubelet keeps extended
    # resources it does not manage)
    $kctl patch node "$name" --subresource=status --type=merge \
      -p "{\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"$gpus\"}}}" >/dev/null
  done
  node_ready() {
    local i
    for ((i = 0; i < n; i++)); do
      [ "$($kctl get node "$(node_name "$i")" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] || return 1
      [ "$($kctl get node "$(node_name "$i")" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" = "$gpus" ] || return 1
    done
  }
  wait_for "$n real nodes Ready with $gpus GPUs each" 120 - node_ready
  clog "real nodes up in $((SECONDS - t0))s"
}

down() {
  need_root
  local n i name
  n=$(node_count)
  for ((i = 0; i < n; i++)); do
    name=$(node_name "$i")
    # containers outlive a stopped containerd (their shims); the shims and
    # what they run are in the node's cgroups: kill what is left there
    local h
    for h in /sys/fs/cgroup/*/drake-"$name" /sys/fs/cgroup/drake-"$name"; do
      [ -d "$h" ] || continue
      find "$h" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -KILL 2>/dev/null || true
    done
  done
  # processes started in a node's namespaces but outside its cgroups (the
  # shims, which containerd starts in its own cgroup) die with their
  # netns' holder only if recorded; kill any left in the node's netns
  for ((i = 0; i < n; i++)); do
    ip netns pids "$(node_ns "$i")" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  done
  ip netns pids "$dns_ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  for ((i = 0; i < n; i++)); do
    name=$(node_name "$i")
    remove_cgroup_root "drake-$name"
    ip netns del "$(node_ns "$i")" 2>/dev/null || true
  done
  ip netns del "$dns_ns" 2>/dev/null || true
  ip link del "$bridge" 2>/dev/null || true
  if [ -f "$real_dir/made-dirs" ]; then
    tac "$real_dir/made-dirs" | xargs -r rmdir 2>/dev/null || true
    rm -f "$real_dir/made-dirs"
  fi
  # the node folders hold overlay snapshots and mount points: nothing is
  # mounted there once the holders are gone (their mounts were private)
  [ "$n" -gt 0 ] && clog "real nodes removed ($n)"
  rm -f "$real_dir/count"
}

import() {
  [ $# -gt 0 ] || cdie "import needs OCI archives"
  # shellcheck disable=SC1091
  source "$cluster_dir/env"
  local n i f ref refs
  n=$(node_count)
  [ "$n" -gt 0 ] || cdie "no real nodes running"
  for f in "$@"; do
    [ -f "$f" ] || cdie "no image archive $f"
    f=$(realpath "$f") # entering the node's mount namespace leaves the folder
    mapfile -t refs < <(tar -xOf "$f" index.json | jq -r '.manifests[].annotations["io.containerd.image.name"] // empty')
    [ ${#refs[@]} -gt 0 ] || cdie "$f names no image (index.json has no io.containerd.image.name)"
    for ((i = 0; i < n; i++)); do
      in_node "$i" "$DRAKE_CP_BIN/ctr" -n k8s.io images import "$f" >/dev/null ||
        cdie "ctr images import $f failed on $(node_name "$i")"
      # pinned: the kubelet's image garbage collection leaves it alone. No
      # registry serves these images (pods say imagePullPolicy: Never), so
      # one collected while no container used it (on a CI disk past the
      # kubelet's 85 % threshold) would fail the next pod with
      # ErrImageNeverPull
      for ref in "${refs[@]}"; do
        in_node "$i" "$DRAKE_CP_BIN/ctr" -n k8s.io images label "$ref" io.cri-containerd.pinned=pinned >/dev/null ||
          cdie "pinning $ref failed on $(node_name "$i")"
      done
    done
    clog "imported and pinned $(basename "$f") (${refs[*]}) into $n real nodes"
  done
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
up) up "${1:-}" ;;
down) down ;;
import) import "$@" ;;
exec)
  i=${1:?exec needs a node index}
  shift
  in_node "$i" "$@"
  ;;
names)
  for ((i = 0; i < $(node_count); i++)); do
    for p in ns api containerd kubelet kube-proxy; do echo "$(node_name "$i")-$p"; done
  done
  ;;
-h | --help) print_header "$0" ;;
*) echo "usage: $0 up N|down|import FILE...|exec I CMD...|names (see --help)" >&2; exit 2 ;;
esac
