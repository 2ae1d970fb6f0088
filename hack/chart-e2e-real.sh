#!/usr/bin/env bash
# chart-e2e-real.sh secondScheduler|extenderOnly - install charts/drake with
# drake's own image on real nodes (hack/real-nodes.sh: kubelet, containerd,
# CNI, kube-proxy, CoreDNS) and check what a user relies on:
#
#   1. the images from `make image` (drake, kube-scheduler, busybox; pause
#      is imported by real-nodes.sh) imported into each node's containerd;
#      helm install with replicas=2 and gangOnly (the chart's defaults but
#      for replicas), pullPolicy Never: no registry is asked
#   2. drake's two pods run on real nodes as 65532, one leader Ready (its
#      HTTPS readiness probe passes only on the leader with synced caches:
#      it read its ServiceAccount token and TLS Secret from its mounts), the
#      standby Running and not Ready; secondScheduler: the chart's
#      kube-scheduler pod runs; extenderOnly: the cluster's kube-scheduler
#      is given NOTES.txt's extenders stanza (the Service's ClusterIP for
#      its name, which the host cannot resolve) and restarted
#   3. DRAGON's README TFJob, its image replaced by busybox (the PS serves
#      HTTP on its TF_CONFIG port, each worker fetches from the PS address in
#      its TF_CONFIG) and its CPU and memory cut to fit these nodes: all five
#      containers start, TF_CONFIG in each container's environment is the one
#      drake wrote, the PS's name resolves through CoreDNS and answers across
#      the pod network, and the pods asked for drake.dev/gang, which no node
#      advertises (kubelet admitted them anyway); who bound each pod is
#      observed: kube-scheduler's Scheduled Event names the profile and the
#      scheduler instance (the chart's scheduler pod, or the cluster's own
#      kube-scheduler), the audit log that drake posted the Binding
#   4. faults: the leader pod is deleted while a second job's wave waits
#      (the standby takes over, the job starts whole, no pod of the first job
#      is recreated or restarted); containerd of a node is restarted (its
#      containers keep running: same start time, no restart); the kubelet of
#      the leader's node is stopped (the node goes NotReady, the leader
#      yields the Lease to the replica on the other node, and a job there,
#      whose pods tolerate a NotReady node for 5 s, runs whole on the other
#      node)
# Each check prints ok/FAIL; the last line is
#   chart-e2e-real-second-scheduler|chart-e2e-real-extender-only: N passed, N failed
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
# shellcheck source=hack/real-lib.sh
source "$(dirname "$0")/real-lib.sh"
mode=${1:-secondScheduler}
case "$mode" in
secondScheduler) suite=chart-e2e-real-second-scheduler sched=drake-scheduler ;;
extenderOnly) suite=chart-e2e-real-extender-only sched=default-scheduler ;;
*) echo "usage: $0 secondScheduler|extenderOnly" >&2; exit 2 ;;
esac
keep_as=chart-real-$mode
trap real_finish EXIT
trap 'exit 130' INT TERM
hack_dir=$drake_root/hack
work=$cluster_dir/chart-real

# --- 1. images and helm install ------------------------------------------------
real_cluster_up drake kube-scheduler busybox
drake_ref=${image_ref[drake]} busybox_ref=${image_ref[busybox]}
real_install_drake "$mode"

# --- 2. drake (and its scheduler) as pods ---------------------------------------
holder=$(lease_holder)
if [ "$holder" = "$leader" ]; then ok "the ready pod $leader holds the Lease"; else bad "Lease holder '$holder', ready pod '$leader'"; fi
uid=$(k exec -n "$ns" "$leader" -- /usr/local/bin/drake version 2>/dev/null | head -1 || true)
if [ -n "$uid" ]; then ok "drake runs in its image: $uid"; else bad "kubectl exec drake version failed"; fi
user=$(k get pod -n "$ns" "$leader" -o jsonpath='{.spec.securityContext.runAsUser}')
proc_uid=$("$hack_dir/real-nodes.sh" exec "$(k get pod -n "$ns" "$leader" -o jsonpath='{.spec.nodeName}' | sed 's/real-node-//')" \
  sh -c 'for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" != /usr/local/bin/drake ] || awk "/^Uid:/ {print \$2}" "$p/status"; done' | sort -u | head -1)
if [ "$user" = 65532 ] && [ "$proc_uid" = 65532 ]; then
  ok "drake's process runs as uid 65532"
else
  bad "runAsUser '$user', process uid '$proc_uid'"
fi

if [ "$mode" = secondScheduler ]; then
  sched_ready() {
    [ "$(k get pods -n "$ns" -l app.kubernetes.io/component=scheduler -o jsonpath='{.items[*].status.conditions[?(@.type=="Ready")].status}')" = True ]
  }
  if eventually 120 sched_ready; then
    ok "the chart's kube-scheduler runs from $(k get pods -n "$ns" -l app.kubernetes.io/component=scheduler -o jsonpath='{.items[0].spec.containers[0].image}')"
  else
    bad "the chart's kube-scheduler is not Ready: $(k get pods -n "$ns" -o wide 2>&1)"
  fi
else
  # the cluster's kube-scheduler gets NOTES.txt's stanza: the Service's
  # ClusterIP for its name, and the client certificate's files
  secret_files "$ns" drake-client-tls "$work/client"
  ip=$(k get svc -n "$ns" drake -o jsonpath='{.spec.clusterIP}')
  sed -n '/^extenders:$/,/^$/p' "$work/install.txt" | sed '1d' |
    sed -e "s#https://drake\.$ns\.svc#https://$ip#" \
      -e "s#/path/to/drake-client/tls.crt.*#$work/client/tls.crt#" -e "s#/path/to/drake-client/tls.key#$work/client/tls.key#" \
      >"$work/extender.yaml"
  grep -q "urlPrefix: \"https://$ip" "$work/extender.yaml" || { bad "no extenders stanza in NOTES.txt: $(cat "$work/install.txt")"; exit 1; }
  render "$drake_root/config/kube-scheduler.yaml.tmpl" "$cluster_dir/kube-scheduler.yaml" \
    "KUBECONFIG=$KUBECONFIG" "QPS=50" "BURST=100" "PERCENTAGE=0" "SCHEDULER_NAME=default-scheduler" \
    "EXTENDERS=$(cat "$work/extender.yaml")"
  "$hack_dir/cluster-proc.sh" stop kube-scheduler
  "$hack_dir/cluster-proc.sh" start kube-scheduler
  if curl -s -o /dev/null --max-time 5 --cacert <(k get secret -n "$ns" drake-tls -o jsonpath='{.data.ca\.crt}' | base64 -d) \
    --cert "$work/client/tls.crt" --key "$work/client/tls.key" --resolve "drake.$ns.svc:443:$ip" \
    "https://drake.$ns.svc/readyz"; then
    ok "the host reaches drake's Service (ClusterIP $ip) with the chart's client certificate"
  else
    bad "drake's Service at $ip does not answer from the host"
  fi
fi

# --- 3. DRAGON's README TFJob with containers -----------------------------------
k create namespace "$jobs_ns" >/dev/null
# tfjob NAME WORKERS: DRAGON's README job (min 1, max WORKERS), busybox, small
tfjob() {
  local name=$1 workers=$2
  python3 - "$drake_root/config/crd/examples/dragon-readme.yaml" "$name" "$workers" "$busybox_ref" <<'EOF'
import sys, yaml
src, name, workers, image = sys.argv[1:]
job = yaml.safe_load(open(src))
job["metadata"]["name"] = name
job["spec"]["max-instances"] = int(workers)
ps_cmd = ("mkdir -p /www && echo \"ps $HOSTNAME\" > /www/index.html && "
          "port=$(echo \"$TF_CONFIG\" | sed 's/.*\"ps\":\\[\"[^:]*:\\([0-9]*\\)\".*/\\1/') && "
          "exec httpd -f -p $port -h /www")
worker_cmd = ("ps=$(echo \"$TF_CONFIG\" | sed 's/.*\"ps\":\\[\"\\([^\"]*\\)\".*/\\1/') && "
              "until wget -q -O /tmp/ps \"http://$ps/\"; do sleep 1; done && cat /tmp/ps && exec sleep 3600")
for rtype, spec in job["spec"]["tfReplicaSpecs"].items():
    if rtype == "Worker":
        spec["replicas"] = int(workers)
    c = spec["template"]["spec"]["containers"][0]
    c["image"] = image
    c["imagePullPolicy"] = "Never"
    c["command"] = ["sh", "-c", ps_cmd if rtype == "PS" else worker_cmd]
    # these nodes have the machine's 2 cores: a tenth of a core each
    c["resources"]["limits"]["cpu"] = "100m"
    c["resources"]["limits"]["memory"] = "64Mi"
    # evicted 5 s after its node stops answering, not 300 s
    spec["template"]["spec"]["tolerations"] = [
        {"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
        for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]
print(yaml.safe_dump(job))
EOF
}
# started JOB N: N pods of JOB with every container running
tfjob job1 4 | k apply -n "$jobs_ns" -f - >/dev/null
if eventually 180 started job1 5; then
  ok "DRAGON's README TFJob: all 5 containers started on real nodes ($(k get pods -n "$jobs_ns" -o jsonpath='{.items[*].spec.nodeName}' | tr ' ' '\n' | sort | uniq -c | xargs))"
else
  bad "job1 pods: $(k get pods -n "$jobs_ns" -o wide 2>&1)"
  exit 1
fi
pods=$(k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job1 -o jsonpath='{.items[*].metadata.name}')
schedulers=$(k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job1 -o jsonpath='{.items[*].spec.schedulerName}' | tr ' ' '\n' | sort -u | xargs)
if [ "$schedulers" = "$sched" ]; then ok "drake wrote schedulerName $sched into job1's pods"; else bad "job1's schedulerNames: $schedulers"; fi
# Who placed them, as observed rather than as drake asked: kube-scheduler
# records a Scheduled Event once its profile has bound a pod, with
# reportingComponent the profile's schedulerName and reportingInstance that
# name, a dash and the scheduler's host name (client-go's events
# recorder): the chart's scheduler pod, or this host for the cluster's own
# kube-scheduler. The Binding itself is posted by drake (the extender's
# bindVerb), as the API server's audit log records (config/audit-policy.yaml).
if [ "$mode" = secondScheduler ]; then
  instances=$(k get pods -n "$ns" -l app.kubernetes.io/component=scheduler -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sed "s/^/$sched-/" | xargs)
else
  instances="$sched-$(uname -n)"
fi
# placed_by: "POD COMPONENT INSTANCE" for each Scheduled Event of each of
# job1's pods (of the pod's uid); a pod without one has "POD - -"
placed_by() {
  python3 -c '
import json, sys
pods, events = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for p in pods["items"]:
    uid, name = p["metadata"]["uid"], p["metadata"]["name"]
    seen = [(e.get("reportingComponent") or (e.get("source") or {}).get("component") or "?",
             e.get("reportingInstance") or "?")
            for e in events["items"] if e["involvedObject"].get("uid") == uid]
    for c, i in seen or [("-", "-")]:
        print(name, c, i)' \
    <(k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job1 -o json) \
    <(k get events -n "$jobs_ns" --field-selector reason=Scheduled -o json)
}
# placed_as_expected: each of the 5 pods has one Scheduled Event, from $sched
# in one of $instances
placed_as_expected() {
  local lines
  lines=$(placed_by) || return 1
  [ "$(grep -c . <<<"$lines")" = 5 ] && [ "$(cut -d' ' -f1 <<<"$lines" | sort -u | grep -c .)" = 5 ] &&
    awk -v c="$sched" -v is=" $instances " '$2 != c || index(is, " " $3 " ") == 0 {bad = 1} END {exit bad}' <<<"$lines"
}
if eventually 30 placed_as_expected; then
  ok "kube-scheduler's Scheduled Events say $sched bound job1's 5 pods ($(placed_by | awk '{print $3}' | sort | uniq -c | xargs))"
else
  bad "job1's pods were not all bound by $sched (${instances:-no chart scheduler pod}): $(placed_by | tr '\n' ';')"
fi
# bound_by: "POD USER CODE" for each pods/binding request of job1's pods the
# audit log has
bound_by() {
  python3 - "$cluster_dir/logs/audit.log" "$jobs_ns" "$pods" <<'EOP'
import json, sys
log, ns, pods = sys.argv[1], sys.argv[2], sys.argv[3].split()
seen = {p: [] for p in pods}
for line in open(log):
    e = json.loads(line)
    o = e.get("objectRef", {})
    if (o.get("namespace") == ns and o.get("subresource") == "binding" and o.get("name") in seen
            and e.get("stage") == "ResponseComplete"):
        seen[o["name"]].append((e["user"]["username"], str(e.get("responseStatus", {}).get("code"))))
for p in pods:
    for u, c in seen[p] or [("-", "-")]:
        print(p, u, c)
EOP
}
# bound_by_drake: each pod has one Binding, posted by drake's ServiceAccount
bound_by_drake() {
  local lines
  lines=$(bound_by) || return 1
  [ "$(awk '$3 == 201' <<<"$lines" | cut -d' ' -f1 | sort -u | grep -c .)" = 5 ] &&
    awk -v u="system:serviceaccount:$ns:drake" '$2 != u || $3 != 201 {bad = 1} END {exit bad}' <<<"$lines"
}
if eventually 30 bound_by_drake; then
  ok "the API server's audit log: each of job1's 5 Bindings was posted by system:serviceaccount:$ns:drake (bindVerb)"
else
  bad "job1's Bindings (audit log): $(bound_by | tr '\n' ';')"
fi
same=0
for p in $pods; do
  want=$(k get pod -n "$jobs_ns" "$p" -o jsonpath='{.spec.containers[0].env[?(@.name=="TF_CONFIG")].value}')
  have=$(k exec -n "$jobs_ns" "$p" -- sh -c 'printf %s "$TF_CONFIG"' 2>/dev/null || true)
  [ -n "$want" ] && [ "$want" = "$have" ] && same=$((same + 1))
done
if [ "$same" = 5 ]; then ok "TF_CONFIG in each of the 5 containers is the one drake wrote"; else bad "TF_CONFIG matched in $same of 5 containers"; fi
fetched() { log_has "$jobs_ns" "job1-worker-$1" '^ps job1-ps-0$'; }
n=0
for w in 0 1 2 3; do eventually 60 fetched "$w" && n=$((n + 1)); done
ps_addr=$(k get pod -n "$jobs_ns" job1-worker-0 -o jsonpath='{.spec.containers[0].env[?(@.name=="TF_CONFIG")].value}' | sed 's/.*"ps":\["\([^"]*\)".*/\1/')
ps_host=${ps_addr%:*}
if [ "$n" = 4 ]; then
  ok "every worker reached the PS at $ps_host (CoreDNS, the pod network)"
else
  bad "$n of 4 workers reached the PS at $ps_host"
fi
# and from the other node, whatever drake packed where
ps_node=$(k get pod -n "$jobs_ns" job1-ps-0 -o jsonpath='{.spec.nodeName}')
far=real-node-0
[ "$ps_node" = real-node-0 ] && far=real-node-1
k run -n "$jobs_ns" probe --image="$busybox_ref" --image-pull-policy=Never --restart=Never \
  --overrides="{\"spec\":{\"nodeName\":\"$far\"}}" -- sleep 3600 >/dev/null
eventually 60 k exec -n "$jobs_ns" probe -- true || true
if k exec -n "$jobs_ns" probe -- wget -q -O- "http://$ps_addr/" 2>/dev/null | grep -qx "ps job1-ps-0"; then
  ok "a pod on $far reaches the PS on $ps_node at $ps_host (pod network across nodes)"
else
  bad "a pod on $far does not reach the PS on $ps_node at $ps_host"
fi
resolved=$(k exec -n "$jobs_ns" job1-worker-0 -- nslookup "$ps_host.cluster.local" 2>/dev/null | awk '/^Address/ {a=$NF} END {print a}' || true)
ps_ip=$(k get pod -n "$jobs_ns" job1-ps-0 -o jsonpath='{.status.podIP}')
if [ -n "$ps_ip" ] && [ "$resolved" = "$ps_ip" ]; then ok "$ps_host resolves to the PS pod's IP $ps_ip"; else bad "$ps_host resolved to '$resolved', PS pod IP '$ps_ip'"; fi
gang=$(k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job1 -o jsonpath='{range .items[*]}{.spec.containers[0].resources.requests.drake\.dev/gang}{"\n"}{end}' | grep -c . || true)
adv=$(k get nodes -o jsonpath='{.items[*].status.allocatable.drake\.dev/gang}')
if [ "$gang" = 5 ] && [ -z "$adv" ]; then
  ok "gang-only: the 5 running pods request drake.dev/gang, which no node advertises (kubelet admitted them)"
else
  bad "gang-only: $gang pods request drake.dev/gang; nodes advertise '$adv'"
fi

# --- 4. faults ------------------------------------------------------------------
# start times of job1's containers, to tell a restart or a recreation
fingerprint() {
  k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job1 \
    -o jsonpath='{range .items[*]}{.metadata.uid} {.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].state.running.startedAt}{"\n"}{end}' | sort
}
before=$(fingerprint)

# the leader is deleted while job2's wave waits for it
tfjob job2 1 | k apply -n "$jobs_ns" -f - >/dev/null
k delete pod -n "$ns" "$leader" --wait=false >/dev/null
if eventually 120 led_by_other "$leader"; then
  ok "the standby took the Lease after the leader's pod was deleted"
else
  bad "no new leader: Lease holder $(lease_holder)"
fi
if eventually 180 started job2 2; then
  ok "job2, submitted as the leader went, started whole"
else
  bad "job2 pods: $(k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job2 -o wide 2>&1)"
fi
if [ "$(fingerprint)" = "$before" ]; then
  ok "no pod of job1 was recreated or restarted across the leader change"
else
  bad "job1 changed across the leader change: before $before after $(fingerprint)"
fi

# containerd restarted on the PS's node: running containers survive it
exec_ok() { k exec -n "$jobs_ns" "$1" -- true; }
"$hack_dir/cluster-proc.sh" stop "$ps_node-containerd"
"$hack_dir/cluster-proc.sh" start "$ps_node-containerd"
eventually 60 exec_ok job1-ps-0 || true
if [ "$(fingerprint)" = "$before" ] && exec_ok job1-ps-0; then
  ok "containerd restarted on $ps_node: job1's containers kept running (same start times, no restart); exec into job1-ps-0 works"
else
  bad "containerd restart: before $before after $(fingerprint)"
fi

# the kubelet of the leader's node stopped: the node goes NotReady, the
# leader yields the Lease (its pod is no endpoint of the Service any more),
# and job2 runs whole on the other node
k delete tfjob -n "$jobs_ns" job1 >/dev/null
leader=$(lease_holder)
node2=$(k get pod -n "$ns" "$leader" -o jsonpath='{.spec.nodeName}')
other=real-node-0
[ "$node2" = real-node-0 ] && other=real-node-1
echo "chart e2e real ($mode): stopping the kubelet of $node2 (leader $leader, job2 on $(k get pod -n "$jobs_ns" job2-ps-0 -o jsonpath='{.spec.nodeName}'))"
t0=$SECONDS
"$hack_dir/cluster-proc.sh" stop "$node2-kubelet"
not_ready() { [ "$(k get node "$node2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" != True ]; }
eventually 120 not_ready || bad "$node2 still Ready 120 s after its kubelet stopped"
t_nr=$((SECONDS - t0))
led_elsewhere() {
  led_by_other "$leader" && [ "$(k get pod -n "$ns" "$(lease_holder)" -o jsonpath='{.spec.nodeName}')" = "$other" ]
}
if eventually 60 led_elsewhere; then
  ok "kubelet of $node2 stopped: NotReady after ${t_nr}s; the leader yielded and a replica on $other leads after $((SECONDS - t0))s"
else
  bad "the leader on $node2 kept the Lease ($(lease_holder)) $((SECONDS - t0))s after its kubelet stopped"
fi
on_other() {
  [ "$(k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job2 --field-selector spec.nodeName="$other" \
    -o jsonpath='{range .items[*]}{.status.containerStatuses[0].state.running.startedAt}{"\n"}{end}' | grep -c .)" = 2 ]
}
if eventually 240 on_other; then
  ok "job2 runs whole on $other $((SECONDS - t0))s after $node2's kubelet stopped"
else
  bad "job2 after $node2's kubelet stopped: $(k get pods -n "$jobs_ns" -o wide 2>&1)"
fi
"$hack_dir/cluster-proc.sh" start "$node2-kubelet"
