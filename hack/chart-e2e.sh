#!/usr/bin/env bash
# chart-e2e.sh secondScheduler|extenderOnly - install charts/drake into a
# fresh local cluster for real and run drake with the chart's identity.
#
#   1. cluster-up.sh (simple mode for secondScheduler; gang mode, and the
#      chart's gangOnly=true, for extenderOnly), then stop the cluster's own
#      drake, which runs with admin credentials.
#   2. helm install --wait=false (extenderOnly with replicas=2, so leader
#      election on): the CRD, RBAC, ConfigMap, Secrets,
#      Service, Deployment(s) and PDB must all exist as rendered (kubectl
#      diff of the release manifest against the live objects is empty). The
#      Deployments' pods never run: kwok runs no containers.
#   3. drake as a local process with a token of the chart's ServiceAccount
#      (kubectl create token) and the arguments the chart's Deployment
#      renders (listen address, port and certificate paths made local).
#      secondScheduler: it serves the certificate from the chart's Secret,
#      and a local kube-scheduler runs the KubeSchedulerConfiguration from
#      the chart's ConfigMap (URL and file paths made local) with a token of
#      the chart's scheduler ServiceAccount. extenderOnly: the cluster's
#      kube-scheduler calls it as before. The Deployment's probes, made as
#      the kubelet makes them (HTTPS, no client certificate), get 200; other
#      requests without a client certificate get 403. With replicas=2 it
#      is ready only once it holds the chart's Lease, through the chart's Role.
#   4. a TFJob gang (1 PS, 2 workers) whose templates name no scheduler is
#      bound whole, its pods carrying the mode's schedulerName, every
#      Binding posted by the chart's ServiceAccount (audit log); requests the
#      chart does not grant (delete a node, list secrets, update a TFJob)
#      are refused.
# Each check prints ok/FAIL; the last line is
#   chart-e2e-second-scheduler|chart-e2e-extender-only: N passed, N failed
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
mode=${1:-secondScheduler}
case "$mode" in
secondScheduler) cmode=simple gang_only=false replicas=1 suite=chart-e2e-second-scheduler ;;
extenderOnly) cmode=gang gang_only=true replicas=2 suite=chart-e2e-extender-only ;;
*) echo "usage: $0 secondScheduler|extenderOnly" >&2; exit 2 ;;
esac
passed=0 failed=0
ok() { echo "  ok   $*"; passed=$((passed + 1)); }
bad() { echo "  FAIL $*"; failed=$((failed + 1)); }

finish() {
  local rc=$?
  "$drake_root/hack/cluster-down.sh" || true
  [ "$failed" -gt 0 ] || [ "$rc" -eq 0 ] || failed=$((failed + 1))
  if [ "$failed" -gt 0 ] && [ -d "$cluster_dir/logs" ]; then
    keep="$drake_root/build/e2e-logs/chart-$mode-$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$keep" && cp -r "$cluster_dir/logs/." "$keep/"
    for f in "$keep"/chart-*.log; do
      [ -f "$f" ] && { echo "===== last lines of $(basename "$f") ====="; tail -n 20 "$f"; }
    done
    echo "chart e2e failed: component logs kept in $keep"
  fi
  echo "$suite: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
trap finish EXIT
trap 'exit 130' INT TERM

hack_dir=$drake_root/hack
"$hack_dir/build-control-plane.sh" helm >/dev/null
DRAKE_EXTENDER_MODE=$cmode "$hack_dir/cluster-up.sh" --nodes 3 --large-nodes 0 --mig-nodes 0 --amd-nodes 0
# shellcheck disable=SC1091
source "$cluster_dir/env"
"$hack_dir/cluster-drake.sh" stop
k() { "$DRAKE_CP_BIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }
helm() { "$DRAKE_CP_BIN/helm" --kubeconfig "$KUBECONFIG" "$@"; }
ns=drake-system
work=$cluster_dir/chart
mkdir -p "$work"

# --- 2. helm install ----------------------------------------------------------
echo "chart e2e ($mode): helm install"
if helm install drake "$drake_root/charts/drake" -n "$ns" --create-namespace --wait=false \
  --set mode="$mode" --set gangOnly="$gang_only" --set replicas="$replicas" \
  --set flags.gangBindTimeout=6s >"$work/install.txt" 2>&1; then
  ok "helm install --set mode=$mode,gangOnly=$gang_only,replicas=$replicas"
else
  bad "helm install: $(cat "$work/install.txt")"
  exit 1
fi
helm get manifest drake -n "$ns" >"$work/manifest.yaml"
want=(CustomResourceDefinition/tfjobs.kubeflow.org CustomResourceDefinition/pytorchjobs.kubeflow.org ClusterRole/drake ClusterRoleBinding/drake
  ServiceAccount/drake Service/drake Deployment/drake PodDisruptionBudget/drake Secret/drake-tls
  Secret/drake-client-tls)
[ "$mode" = secondScheduler ] && want+=(ConfigMap/drake-scheduler-config Deployment/drake-scheduler
  ServiceAccount/drake-scheduler ClusterRoleBinding/drake-scheduler-kube-scheduler
  ClusterRoleBinding/drake-scheduler-volume-scheduler)
for o in "${want[@]}"; do
  if grep -qx "kind: ${o%%/*}" "$work/manifest.yaml" && k get -n "$ns" "${o%%/*}" "${o#*/}" >/dev/null 2>&1; then
    ok "$o rendered and exists"
  else
    bad "$o missing"
  fi
done
if [ "$mode" = secondScheduler ]; then
  if k get rolebinding -n kube-system drake-scheduler-auth-reader >/dev/null 2>&1; then
    ok "RoleBinding kube-system/drake-scheduler-auth-reader exists"
  else bad "RoleBinding kube-system/drake-scheduler-auth-reader missing"; fi
fi
# The live objects are what was rendered: a server-side dry-run apply of the
# manifest changes nothing.
if k diff --server-side --force-conflicts -f "$work/manifest.yaml" >"$work/diff.txt" 2>&1; then
  ok "live objects equal the release manifest (kubectl diff empty)"
else
  bad "kubectl diff of the release manifest: $(head -30 "$work/diff.txt")"
fi
ca=$(k get secret -n "$ns" drake-tls -o jsonpath='{.data.ca\.crt}')
if [ "$mode" = extenderOnly ]; then
  # NOTES.txt prints the extenders stanza with the CA the chart generated
  if grep -q "caData: \"$ca\"" "$work/install.txt" && grep -q 'ignoredByScheduler: true' "$work/install.txt"; then
    ok "NOTES.txt prints the extenders stanza with the generated CA as caData"
  else
    bad "NOTES.txt stanza: $(sed -n '/^extenders:/,/^$/p' "$work/install.txt")"
  fi
fi
# an upgrade keeps the generated certificates (lookup), so the CA
# kube-scheduler trusts stays valid
if helm upgrade drake "$drake_root/charts/drake" -n "$ns" --reuse-values --wait=false >"$work/upgrade.txt" 2>&1 &&
  [ "$(k get secret -n "$ns" drake-tls -o jsonpath='{.data.ca\.crt}')" = "$ca" ]; then
  ok "helm upgrade keeps the generated CA"
else
  bad "helm upgrade changed the CA or failed: $(head -5 "$work/upgrade.txt")"
fi
wait_for "CRDs established" 30 - k wait --for condition=established --timeout=5s crd/tfjobs.kubeflow.org crd/pytorchjobs.kubeflow.org

# --- 3. drake (and kube-scheduler) with the chart's identities ---------------
# kubeconfig_for SA FILE : a kubeconfig with a token of ServiceAccount SA
kubeconfig_for() {
  local tok
  tok=$(k create token "$1" -n "$ns" --duration 1h)
  cat >"$2" <<EOK
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $DRAKE_APISERVER_URL
    certificate-authority: $cluster_dir/pki/ca.crt
users:
- name: $1
  user:
    token: $tok
contexts:
- name: $1
  context: {cluster: local, user: $1}
current-context: $1
EOK
}
kubeconfig_for drake "$work/drake.kubeconfig"
# the drake container's arguments as the chart rendered them
mapfile -t args < <(python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "drake":
        for a in d["spec"]["template"]["spec"]["containers"][0]["args"]:
            if not a.split("=")[0] in ("--address", "--port", "--tls-cert", "--tls-key", "--client-ca"):
                print(a)' "$work/manifest.yaml")
port=$DRAKE_PORT
if [ "$mode" = secondScheduler ]; then
  # drake serves the chart's certificate, kube-scheduler checks it with the
  # chart's CA and presents the chart's client certificate
  secret_files "$ns" drake-tls "$work/drake-tls"
  secret_files "$ns" drake-client-tls "$work/drake-client-tls"
  port=$(free_port)
  tls=(--tls-cert "$work/drake-tls/tls.crt" --tls-key "$work/drake-tls/tls.key"
    --client-ca "$work/drake-tls/ca.crt")
else
  tls=(--tls-cert "$DRAKE_CERT_DIR/server.crt" --tls-key "$DRAKE_CERT_DIR/server.key"
    --client-ca "$DRAKE_CERT_DIR/ca.crt")
fi
# The container mounts the serving Secret at /etc/drake/tls; out here the
# same three files are the ones just chosen, so any other argument naming
# that mount (--progress-ca-file) is pointed at them.
local_ca=${tls[5]}
for i in "${!args[@]}"; do
  case ${args[$i]} in
  *=/etc/drake/tls/ca.crt) args[i]=${args[$i]%%=*}=$local_ca ;;
  *=/etc/drake/tls/*)
    echo "chart e2e: no local file for ${args[$i]}" >&2
    exit 1
    ;;
  esac
done
echo "chart e2e ($mode): drake ${args[*]} as system:serviceaccount:$ns:drake"
start_proc chart-drake "$DRAKE_BIN" "${args[@]:0:1}" --address 127.0.0.1 --port "$port" "${tls[@]}" \
  --kubeconfig "$work/drake.kubeconfig" "${args[@]:1}"
readyz() {
  curl -sf -o /dev/null --max-time 5 --cacert "$1/ca.crt" --cert "$2/tls.crt" --key "$2/tls.key" \
    --resolve "drake.$ns.svc:$port:127.0.0.1" "https://$3:$port/readyz"
}
if [ "$mode" = secondScheduler ]; then
  wait_for "drake ready (chart certificate)" 60 chart-drake readyz "$work/drake-tls" "$work/drake-client-tls" "drake.$ns.svc"
else
  mkdir -p "$work/pki" && cp "$DRAKE_CERT_DIR/ca.crt" "$work/pki/ca.crt" &&
    cp "$DRAKE_CERT_DIR/client.crt" "$work/pki/tls.crt" && cp "$DRAKE_CERT_DIR/client.key" "$work/pki/tls.key"
  wait_for "drake ready" 60 chart-drake readyz "$work/pki" "$work/pki" 127.0.0.1
fi
ok "drake is ready with the chart's ServiceAccount token and flags"
if [ "$replicas" -gt 1 ]; then
  # leader election with the chart's Role: ready means it holds the Lease
  holder=$(k get lease -n "$ns" drake -o jsonpath='{.spec.holderIdentity}' 2>&1 || true)
  if [ -n "$holder" ] && grep -q "leader_acquired.*identity=$holder" "$cluster_dir/logs/chart-drake.log"; then
    ok "replicas=$replicas: drake holds the Lease $ns/drake ($holder) with the chart's Role"
  else
    bad "replicas=$replicas: the Lease $ns/drake names '$holder', not the drake that is ready"
  fi
fi
# The kubelet's probes as the chart renders them: HTTPS GETs with no client
# certificate (and no check of drake's), answered under the chart's mTLS;
# anything else without a certificate is refused.
mapfile -t probes < <(python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "drake":
        c = d["spec"]["template"]["spec"]["containers"][0]
        for p in ("livenessProbe", "readinessProbe", "startupProbe"):
            g = c[p]["httpGet"]
            print(p, g["scheme"], g["path"])' "$work/manifest.yaml")
nocert() { curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
if [ "${#probes[@]}" -eq 3 ]; then
  for p in "${probes[@]}"; do
    read -r pname scheme path <<<"$p"
    code=$(nocert "${scheme,,}://127.0.0.1:$port$path" || true)
    if [ "$scheme" = HTTPS ] && [ "$code" = 200 ]; then
      ok "$pname: $scheme GET $path without a client certificate answers 200"
    else
      bad "$pname: $scheme GET $path without a client certificate answered ${code:-nothing}"
    fi
  done
else
  bad "the Deployment's probes are not three httpGet probes: ${probes[*]}"
fi
for req in "GET /metrics" "GET /v1/jobs" "POST /scheduler/filter"; do
  body=()
  [ "${req%% *}" = POST ] && body=(-d '{}')
  code=$(nocert -X "${req%% *}" "${body[@]}" "https://127.0.0.1:$port${req#* }" || true)
  if [ "$code" = 403 ]; then ok "$req without a client certificate: 403"; else
    bad "$req without a client certificate answered ${code:-nothing}, not 403"; fi
done

sched=default-scheduler
if [ "$mode" = secondScheduler ]; then
  sched=drake-scheduler
  kubeconfig_for drake-scheduler "$work/scheduler.kubeconfig"
  k get configmap -n "$ns" drake-scheduler-config -o jsonpath='{.data.config\.yaml}' >"$work/chart-config.yaml"
  python3 - "$work" "$port" <<'EOP'
import sys, yaml
work, port = sys.argv[1], sys.argv[2]
c = yaml.safe_load(open(work + "/chart-config.yaml"))
c["clientConnection"] = {"kubeconfig": work + "/scheduler.kubeconfig"}
e = c["extenders"][0]
host = e["tlsConfig"]["serverName"]
assert e["urlPrefix"].startswith("https://" + host + ":443/"), e["urlPrefix"]
e["urlPrefix"] = e["urlPrefix"].replace(host + ":443", "127.0.0.1:" + port)
t = e["tlsConfig"]
t["caFile"] = work + "/drake-tls/ca.crt"
t["certFile"] = work + "/drake-client-tls/tls.crt"
t["keyFile"] = work + "/drake-client-tls/tls.key"
yaml.safe_dump(c, open(work + "/scheduler.yaml", "w"))
EOP
  sport=$(free_port)
  start_proc chart-scheduler "$DRAKE_CP_BIN/kube-scheduler" --config="$work/scheduler.yaml" \
    --authentication-kubeconfig="$work/scheduler.kubeconfig" \
    --authorization-kubeconfig="$work/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$sport" --profiling=false
  # no --tls-cert-file, as in the chart: kube-scheduler serves a self-signed
  # certificate it keeps in memory (the chart's root filesystem is read-only)
  wait_for "chart kube-scheduler healthy" 60 chart-scheduler \
    curl -skf -o /dev/null --max-time 5 "https://127.0.0.1:$sport/healthz"
  ok "kube-scheduler runs the chart's KubeSchedulerConfiguration as system:serviceaccount:$ns:drake-scheduler"
fi

# --- 4. a TFJob gang, bound whole ---------------------------------------------
# The templates name no scheduler: in secondScheduler mode drake's controller
# gives the pods the chart's (--scheduler-name), in extenderOnly mode they
# keep the API server's default-scheduler.
echo "chart e2e ($mode): a TFJob gang"
k create namespace chart-e2e >/dev/null
replica() {
  cat <<EOR
    $1:
      replicas: $2
      restartPolicy: OnFailure
      template:
        spec:
          terminationGracePeriodSeconds: 0
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow:2.15.0
            resources:
              limits: {cpu: "2", memory: 2Gi}
EOR
}
k apply -n chart-e2e -f - >/dev/null <<EOF2
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: gang
spec:
  tfReplicaSpecs:
$(replica PS 1)
$(replica Worker 2)
EOF2
bound() {
  [ "$(k get pods -n chart-e2e -l training.kubeflow.org/job-name=gang \
    -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{"\n"}{end}' | grep -c .)" -eq 3 ]
}
if wait_for "TFJob gang bound" 90 chart-drake bound; then :; fi
k get pods -n chart-e2e -o wide --no-headers | sed 's/^/    /'
if bound; then ok "TFJob gang: its PS and 2 workers are all bound"; else bad "TFJob gang not bound whole"; fi
scheds=$(k get pods -n chart-e2e -l training.kubeflow.org/job-name=gang \
  -o jsonpath='{range .items[*]}{.spec.schedulerName}{"\n"}{end}' | sort | uniq -c | sed 's/^ *//')
if [ "$scheds" = "3 $sched" ]; then
  ok "TFJob pods' schedulerName is $sched (templates name none)"
else
  bad "TFJob pods' schedulerName: ${scheds:-none} (want 3 $sched)"
fi
# a pod can verify drake when it reports progress: it carries the CA of
# drake's serving certificate, read through --progress-ca-file
pem=$(k get pod -n chart-e2e gang-worker-0 \
  -o jsonpath='{.spec.containers[0].env[?(@.name=="DRAKE_PROGRESS_CA_PEM")].value}')
if [ -n "$pem" ] && [ "$pem" = "$(cat "$local_ca")" ]; then
  ok "TFJob pods carry the CA that verifies drake (DRAKE_PROGRESS_CA_PEM)"
else
  bad "DRAKE_PROGRESS_CA_PEM of gang-worker-0 is not drake's CA (${#pem} bytes)"
fi
# who posted the Bindings (the audit policy records exactly pods/binding)
by=$(python3 - "$cluster_dir/logs/audit.log" <<'EOP'
import json, sys
users = set()
for line in open(sys.argv[1]):
    e = json.loads(line)
    o = e.get("objectRef", {})
    if o.get("namespace") == "chart-e2e" and o.get("subresource") == "binding" and e.get("stage") == "ResponseComplete":
        users.add(e["user"]["username"] + " " + str(e.get("responseStatus", {}).get("code")))
print(",".join(sorted(users)))
EOP
)
if [ "$by" = "system:serviceaccount:$ns:drake 201" ]; then
  ok "every Binding was posted by system:serviceaccount:$ns:drake (audit log)"
else
  bad "Bindings posted by: ${by:-nobody}"
fi

# --- requests the chart does not grant are refused -----------------------------
sa() { "$DRAKE_CP_BIN/kubectl" --kubeconfig "$work/drake.kubeconfig" "$@"; }
refused() { # DESC CMD...
  local desc=$1 out
  shift
  if out=$("$@" 2>&1); then
    bad "allowed: $desc"
  elif grep -qi forbidden <<<"$out"; then
    ok "refused: $desc"
  else
    bad "$desc failed but not as Forbidden: $out"
  fi
}
refused "delete a node" sa delete node kwok-node-0 --dry-run=server
refused "list secrets" sa get secrets -A
refused "read a secret in drake's namespace" sa get secret -n "$ns" drake-tls
refused "update a TFJob (drake only patches)" sa replace -n chart-e2e -f <(k get tfjob -n chart-e2e gang -o yaml)
refused "create a Deployment" sa create deployment x -n chart-e2e --image=x --dry-run=server
refused "patch a node" sa label node kwok-node-0 x=y --dry-run=server
forbidden='forbidden|status=403|HTTP 403'
if ! grep -qiE "$forbidden" "$cluster_dir/logs/chart-drake.log"; then
  ok "drake met no 403 with the chart's RBAC (its log)"
else
  bad "drake met 403s: $(grep -m3 -iE "$forbidden" "$cluster_dir/logs/chart-drake.log")"
fi
if [ "$mode" = secondScheduler ]; then
  if ! grep -qiE 'forbidden' "$cluster_dir/logs/chart-scheduler.log"; then
    ok "kube-scheduler met no 403 with the chart's scheduler RBAC (its log)"
  else
    bad "kube-scheduler met 403s: $(grep -m3 -i forbidden "$cluster_dir/logs/chart-scheduler.log")"
  fi
fi
