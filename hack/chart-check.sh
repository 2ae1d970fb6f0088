#!/usr/bin/env bash
# chart-check.sh - static checks of the Helm chart in charts/drake, run by
# `make chart-check` (and so by `make check`): helm lint --strict, helm
# template of every mode (secondScheduler, extenderOnly, each also
# gang-only) and TLS source, values the schema must refuse, and the
# rendered objects' key facts. Each case prints ok/FAIL; the last line is
#   chart: N passed, N failed
set -uo pipefail
cd "$(dirname "$0")/.."
helm=${HELM:-build/control-plane/bin/helm}
[ -x "$helm" ] || hack/build-control-plane.sh helm >/dev/null
chart=charts/drake
out=build/chart
mkdir -p "$out"
passed=0 failed=0
ok() { echo "  ok   $*"; passed=$((passed + 1)); }
bad() { echo "  FAIL $*"; failed=$((failed + 1)); }

# render NAME ARGS... : helm template into $out/NAME.yaml
render() {
  local name=$1
  shift
  if "$helm" template drake "$chart" -n drake-system --kube-version 1.31.4 "$@" \
    >"$out/$name.yaml" 2>"$out/$name.err"; then
    ok "helm template $name ($(grep -c '^kind:' "$out/$name.yaml") objects)"
  else
    bad "helm template $name: $(head -3 "$out/$name.err")"
  fi
}
# has NAME REGEX DESC : the rendering NAME matches REGEX (grep -E)
has() { if grep -qE -e "$2" "$out/$1.yaml"; then ok "$1: $3"; else bad "$1: $3 (no /$2/)"; fi; }
hasnt() { if grep -qE -e "$2" "$out/$1.yaml"; then bad "$1: $3 (found /$2/)"; else ok "$1: $3"; fi; }
# refused DESC ARGS... : helm template must fail
refused() {
  local desc=$1
  shift
  if "$helm" template drake "$chart" "$@" >/dev/null 2>"$out/refused.err"; then
    bad "schema accepted $desc"
  else
    ok "refused $desc: $(grep -m1 -E 'at |error' "$out/refused.err" | sed 's/^ *//' | cut -c1-90)"
  fi
}
# kinds NAME KIND... : each KIND is rendered
kinds() {
  local name=$1 k
  shift
  for k in "$@"; do has "$name" "^kind: $k\$" "renders a $k"; done
}

echo "chart: helm lint"
if "$helm" lint --strict "$chart" >"$out/lint.txt" 2>&1; then ok "$(tail -1 "$out/lint.txt")"; else
  bad "helm lint"; cat "$out/lint.txt"; fi
if "$helm" lint --strict "$chart" --set mode=extenderOnly,gangOnly=true >"$out/lint2.txt" 2>&1; then
  ok "helm lint extenderOnly gangOnly"; else bad "helm lint extenderOnly gangOnly"; cat "$out/lint2.txt"; fi

echo "chart: helm template"
render second
kinds second CustomResourceDefinition ServiceAccount ClusterRole ClusterRoleBinding RoleBinding \
  ConfigMap Service Deployment PodDisruptionBudget Secret
has second 'image: "registry.k8s.io/kube-scheduler:v1.31.4"' "kube-scheduler tag from the cluster version"
has second 'schedulerName: drake-scheduler' "profile drake-scheduler"
has second '^        - --scheduler-name=drake-scheduler$' "drake gives TFJob pods schedulerName drake-scheduler"
has second 'httpTimeout: 30s' "httpTimeout 30s"
has second 'name: system:volume-scheduler' "binds system:volume-scheduler"
has second 'name: extension-apiserver-authentication-reader' "binds the authentication reader"
has second '- name: drake.dev/gang' "gang-only by default: managedResources drake.dev/gang"
has second '^        - --gang-resource=drake.dev/gang$' "gang-only by default: drake gets --gang-resource"
render second-simple --set gangOnly=false
hasnt second-simple 'managedResources' "gangOnly=false (simple mode): no managedResources"
hasnt second-simple '--gang-resource' "gangOnly=false: no --gang-resource"
has second-simple 'prioritizeVerb: prioritize' "gangOnly=false: the extender entry names prioritizeVerb"
has second-simple '^ *weight: 50$' "gangOnly=false: prioritize weight 50"
has second-simple '^        - --prioritize=true$' "gangOnly=false: drake gets --prioritize=true"
hasnt second 'prioritizeVerb' "gang-only: no prioritizeVerb"
has second '^        - --prioritize=false$' "gang-only: drake gets --prioritize=false"
render second-prio --set prioritize.enabled=true,prioritize.weight=7
has second-prio 'prioritizeVerb: prioritize' "prioritize.enabled=true in gang-only mode: prioritizeVerb"
has second-prio '^ *weight: 7$' "prioritize.weight sets the entry's weight"
render second-simple-noprio --set gangOnly=false,prioritize.enabled=false
hasnt second-simple-noprio 'prioritizeVerb' "prioritize.enabled=false in simple mode: no prioritizeVerb"
has second-simple-noprio '^        - --prioritize=false$' "prioritize.enabled=false: drake gets --prioritize=false"
render second-simple-nogang --set gangOnly=false,flags.gang=false
hasnt second-simple-nogang 'prioritizeVerb' "gangOnly=false with flags.gang=false: no prioritizeVerb (no node cache to score from)"
has second 'readOnlyRootFilesystem: true' "read-only root"
has second '^        - --client-ca=' "mTLS by default: drake gets --client-ca"
has second 'path: /healthz' "mTLS: HTTPS liveness and startup probes on /healthz"
has second 'path: /readyz' "mTLS: HTTPS readiness probe on /readyz"
hasnt second 'tcpSocket' "mTLS: no TCP probes"
has second 'helm.sh/resource-policy: keep' "CRD kept on uninstall"
has second 'resources: \["tokenreviews"\]' "drake may create TokenReviews (progress and migration API)"
has second '^        - --progress-ca-file=/etc/drake/tls/ca.crt$' "TFJob pods get the CA that verifies drake (DRAKE_PROGRESS_CA_PEM)"
has second 'apiGroups: \["metrics.k8s.io"\]' "drake may list the metrics API's node usage (--node-metrics-interval)"
has second 'resources: \["subjectaccessreviews"\]' "drake may create SubjectAccessReviews (migrations)"
has second '^  name: drake-migrator$' "renders the drake-migrator ClusterRole"
has second 'resources: \["tfjobs/migrations"\]' "drake-migrator grants tfjobs/migrations"
has second 'rbac.authorization.k8s.io/aggregate-to-edit: "true"' "drake-migrator aggregates to edit"
has second 'rbac.authorization.k8s.io/aggregate-to-admin: "true"' "drake-migrator aggregates to admin"
render no-migrator --set migratorRole.create=false
hasnt no-migrator 'resources: \["tfjobs/migrations"\]' "migratorRole.create=false: no drake-migrator"
render migrator-admin-only --set migratorRole.aggregateToEdit=false
hasnt migrator-admin-only 'aggregate-to-edit' "aggregateToEdit=false: not in edit"
has migrator-admin-only 'aggregate-to-admin: "true"' "aggregateToEdit=false: still in admin"
render second-gang --set gangOnly=true
has second-gang '- name: drake.dev/gang' "managedResources drake.dev/gang"
has second-gang 'ignoredByScheduler: true' "ignoredByScheduler"
has second-gang '- --gang-resource=drake.dev/gang' "drake gets --gang-resource"
render extender --set mode=extenderOnly
hasnt extender '^kind: ConfigMap$' "no second scheduler"
hasnt extender 'kube-scheduler:' "no kube-scheduler image"
hasnt extender '--scheduler-name' "extenderOnly: pods keep their template's schedulerName"
render other-name --set scheduler.name=gpu-gang
has other-name '^        - --scheduler-name=gpu-gang$' "drake's --scheduler-name follows scheduler.name"
has other-name 'schedulerName: gpu-gang' "the profile follows scheduler.name"
render extender-gang --set mode=extenderOnly,gangOnly=true
render plain-tls --set tls.clientAuth=false
has plain-tls 'path: /readyz' "HTTPS readiness probe on /readyz"
hasnt plain-tls '--client-ca' "no --client-ca"
render existing-secret --set tls.source=secret,tls.existingSecret=my-tls,tls.existingClientSecret=my-client
hasnt existing-secret '^kind: Secret$' "renders no Secret"
has existing-secret 'secretName: my-tls' "mounts my-tls"
render cert-manager --set tls.source=certManager
kinds cert-manager Certificate Issuer
hasnt second '--leader-elect' "one replica: no leader election"
has second 'type: Recreate' "one replica: replaced with Recreate"
render ha --set replicas=3
has ha '^  replicas: 3$' "replicas=3: three drake replicas"
has ha '^        - --leader-elect$' "replicas=3: leader election on"
has ha '^        - --leader-elect-namespace=drake-system$' "replicas=3: the Lease in the release namespace"
has ha '^        - --leader-elect-name=drake$' "replicas=3: the Lease named after the release"
has ha 'fieldPath: metadata.name' "replicas=3: each pod's name is its identity in the Lease"
has ha 'type: RollingUpdate' "replicas=3: rolling updates"
has ha 'podAntiAffinity' "replicas=3: spread over nodes"
has ha '^  name: drake-lease$' "replicas=3: a Role for the Lease"
has ha 'resourceNames: \["drake"\]' "replicas=3: get and update of its own Lease only"
render no-crd --set crd.install=false
hasnt no-crd 'CustomResourceDefinition' "no CRD"
render all-flags --set flags.apiQps=5,flags.apiBurst=10,flags.apiMaxInflight=8,flags.apiTimeout=3s \
  --set flags.apiMaxBody=1Mi,flags.maxBody=1Mi,flags.maxNodes=10,flags.maxNameLen=60,flags.maxLabels=5 \
  --set flags.maxVictims=5,flags.requestTimeout=5s,flags.clusterDomain=cluster.local,flags.gang=false \
  --set flags.strictFifo=true,flags.gangMaxUnbound=9,flags.logLevel=debug,replicas=2 \
  --set-string flags.resizeCost=pytorchjobs=20s/5s
# every argument the chart renders is one drake serve accepts
if [ -x build/release/drake ]; then
  mapfile -t args < <(python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment" and d["spec"]["template"]["spec"]["containers"][0]["name"] == "drake":
        print("\n".join(d["spec"]["template"]["spec"]["containers"][0]["args"][1:]))' "$out/all-flags.yaml")
  if build/release/drake serve "${args[@]}" --help >/dev/null 2>"$out/args.err"; then
    ok "drake serve accepts the ${#args[@]} rendered arguments"
  else
    bad "drake serve refuses the rendered arguments: $(cat "$out/args.err")"
  fi
fi

echo "chart: values the schema refuses"
refused "an unknown top-level key" --set modee=extenderOnly
refused "an unknown mode" --set mode=both
refused "a string for a boolean" --set-string gangOnly=yes
refused "an unknown flag" --set flags.gangBindTimeot=5s
refused "a prioritize weight of 0" --set prioritize.weight=0
refused "a string for prioritize.enabled" --set-string prioritize.enabled=yes
refused "flags.prioritize (the chart sets it)" --set flags.prioritize=true
refused "prioritize.enabled true with flags.gang false" --set prioritize.enabled=true,flags.gang=false
refused "a flag the chart sets" --set flags.address=0.0.0.0
refused "an unknown tls source" --set tls.source=vault
refused "a port out of range" --set service.port=70000
refused "a scheduler name that is no DNS-1123 subdomain" --set scheduler.name=Drake_Scheduler
refused "a flag the chart sets (schedulerName)" --set flags.schedulerName=x
refused "an unknown migratorRole key" --set migratorRole.aggregateToView=true
refused "no replica" --set replicas=0
refused "a lease duration that is not whole seconds" --set leaderElection.leaseDuration=1500ms
refused "a flag the chart sets (leaderElect)" --set flags.leaderElect=true

echo "chart: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
