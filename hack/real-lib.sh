# shellcheck shell=bash
# real-lib.sh - what the suites on real nodes share (chart-e2e-real.sh,
# e2e-real.sh): ok/FAIL counting with a closing line, polling that does not
# end the script, a cluster of two real nodes with drake installed by its
# chart from its own image, and the diagnostics kept when a check fails.
# Source it after cluster-lib.sh; set suite (the closing line's name) and
# keep_as (the log folder's name) first. It defines functions and these
# names: ns (drake's namespace), jobs_ns (the tests' namespace), passed,
# failed, leader (after real_install_drake).
#
# REAL_SHARED=1 (hack/real-suites.sh: the suites one after the other on one
# cluster): real_cluster_up finds the cluster up with the images imported,
# and real_finish leaves it as the suite found it (real_reset) instead of
# stopping it.

ns=drake-system
jobs_ns=real
passed=0 failed=0
ok() { echo "  ok   $*"; passed=$((passed + 1)); }
bad() { echo "  FAIL $*"; failed=$((failed + 1)); }
k() { "$DRAKE_CP_BIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }
helm() { "$DRAKE_CP_BIN/helm" --kubeconfig "$KUBECONFIG" "$@"; }

# eventually SECONDS CMD...: poll CMD until it succeeds (0) or the time is
# up (1); unlike wait_for, it does not end the script
eventually() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
}

# log_has NAMESPACE POD ERE: the pod's log has a line matching ERE. The
# log is read whole before grep sees it: under pipefail, "k logs | grep -q"
# fails when grep stops at its match while kubectl still writes (SIGPIPE)
log_has() {
  local log
  log=$(k logs -n "$1" "$2" 2>/dev/null) || return 1
  grep -Eq -- "$3" <<<"$log"
}

# --- drake-train's PS log against drake's decisions --------------------------
# A PS log is `kubectl logs --timestamps` of drake-train's PS: each line
# starts with its time, RFC 3339 in UTC, which compares as a string. The PS
# prints its width ("workers=N") from start-up, while its workers join one by
# one, so a width line proves a shrink or a grow only if it came after the
# decision. An Event's lastTimestamp has whole seconds and is stamped when
# drake writes the Event, after the decision it reports: a line stamped in a
# later second came after the decision. A worker leaving is counted from a
# second before the Event's (a shrunk job's pods are deleted before drake
# writes it), and a width line only after every worker the decision
# concerned has been seen to leave or join.

# event_times NAMESPACE KIND NAME REASON: the lastTimestamp of each of the
# object's Events of REASON, oldest first; fails when there is none
event_times() {
  k get events -n "$1" --field-selector "involvedObject.kind=$2,involvedObject.name=$3,reason=$4" \
    -o jsonpath='{range .items[*]}{.lastTimestamp}{"\n"}{end}' | sort | grep .
}
# shift_time TIME SECONDS: TIME (RFC 3339, UTC) moved by SECONDS, whole seconds
shift_time() { date -u -d "@$(($(date -u -d "$1" +%s) + $2))" +%Y-%m-%dT%H:%M:%SZ; }
# ps_members FILE SINCE VERB: the PS's "worker I VERB at step S" lines
# (VERB: joined, rejoined or left) stamped in SINCE's second or later
ps_members() {
  awk -v t="${2%Z}" -v re="ps: worker [0-9]+ $3 at step " 'substr($1, 1, 19) >= t && $0 ~ re' "$1"
}
# ps_saw FILE SINCE VERB IDX...: the PS saw each worker IDX VERB (at a step
# > 0 for a rejoin) in SINCE's second or later; fails without an IDX
ps_saw() {
  local f=$1 since=$2 verb=$3 i lines step='[0-9]+'
  shift 3
  [ $# -gt 0 ] || return 1
  [ "$verb" != rejoined ] || step='[1-9][0-9]*'
  lines=$(ps_members "$f" "$since" "$verb")
  for i in "$@"; do
    grep -Eq "ps: worker $i $verb at step $step( |$)" <<<"$lines" || return 1
  done
}
# ps_after FILE SINCE VERB AFTER IDX...: the PS's lines once it has seen
# each worker IDX VERB (counted from SINCE's second), stamped in AFTER's
# second or later; nothing until it has seen them all
ps_after() {
  local f=$1 since=$2 verb=$3 after=$4
  shift 4
  awk -v t="${since%Z}" -v a="${after%Z}" -v verb="$verb" -v want="$*" '
    BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) need[w[i]] = 1; left = n }
    { s = substr($1, 1, 19) }
    s < t { next }
    left > 0 {
      if (n > 0 && $2 == "ps:" && $3 == "worker" && $5 == verb && ($4 in need)) { delete need[$4]; left-- }
      next
    }
    n > 0 && s >= a { print }' "$f"
}

# ps_width N FILE SINCE VERB AFTER IDX...: the first of ps_after's lines
# where the PS trains with N workers; fails when there is none
ps_width() {
  local n=$1 lines
  shift
  lines=$(ps_after "$@")
  grep -m1 -E "workers=$n " <<<"$lines"
}
# worker_fetched NAMESPACE POD: drake-train worker POD's log says it
# connected to the PS at a step > 0 and then trained on the weights it
# fetched (a worker prints a progress line, "worker I: step=...", only once
# the PS has answered its PULL with the weights); prints those two lines
worker_fetched() {
  local log
  log=$(k logs -n "$1" "$2" 2>/dev/null) || return 1
  awk '/: connected to the PS .* at step [1-9]/ && !c {c = 1; first = $0; next}
    c && /^worker [0-9]+: step=[0-9]+ local_steps/ {print first "; " $0; f = 1; exit}
    END {exit !f}' <<<"$log"
}
# check_fetched LABEL NAMESPACE JOB WORKER...: one check per worker index
# that its pod's log shows it fetched the weights at a step > 0
# (worker_fetched); LABEL starts each check's line
check_fetched() {
  local label=$1 namespace=$2 job=$3 i pod
  shift 3
  for i in "$@"; do
    pod=$job-worker-$i
    if eventually 30 worker_fetched "$namespace" "$pod"; then
      ok "$label$pod fetched the weights at a step > 0 and trained on them: $(worker_fetched "$namespace" "$pod")"
    else
      bad "$label$pod did not fetch the weights at a step > 0: $(k logs -n "$namespace" "$pod" 2>&1 | head -n 5 || true)"
    fi
  done
}

# lease_holder: who holds drake's Lease now ("" when nobody)
lease_holder() { k get lease -n "$ns" drake -o jsonpath='{.spec.holderIdentity}'; }
# led_by_other OLD: the Lease is held, by another replica than OLD
led_by_other() {
  local l
  l=$(lease_holder)
  [ -n "$l" ] && [ "$l" != "$1" ]
}
# started JOB N: N pods of TFJob JOB (in jobs_ns) have their container running
started() {
  [ "$(k get pods -n "$jobs_ns" -l "training.kubeflow.org/job-name=$1" \
    -o jsonpath='{range .items[*]}{.status.containerStatuses[0].state.running.startedAt}{"\n"}{end}' | grep -c .)" = "$2" ]
}

# real_finish: the EXIT trap. On a failure it prints the pods, the last
# events and the test pods' last log lines (CI keeps no files), stops the
# cluster, keeps the component logs, and prints the closing line.
real_finish() {
  local rc=$? p keep
  if [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
    if [ -n "${KUBECONFIG:-}" ]; then
      k get pods -A -o wide --request-timeout=10s 2>/dev/null | sed 's/^/    /' || true
      k get events -A --sort-by=.lastTimestamp --request-timeout=10s 2>/dev/null | tail -n 40 | sed 's/^/    /' || true
      for p in $(k get pods -n "$jobs_ns" -o name --request-timeout=10s 2>/dev/null); do
        echo "    --- logs of $p"
        k logs -n "$jobs_ns" "$p" --tail=5 --request-timeout=10s 2>&1 | sed 's/^/    /' || true
      done
    fi
    # what the kubelets removed or evicted on their own (image garbage
    # collection, disk or memory pressure): not in the events above
    for p in "$cluster_dir"/logs/real-node-*-kubelet.log; do
      [ -f "$p" ] || continue
      echo "    --- $(basename "$p"): image collection and eviction"
      grep -E 'image_gc_manager|eviction_manager' "$p" | grep -v 'invalid capacity 0' | tail -n 8 | sed 's/^/    /' || true
    done
  fi
  if [ "${REAL_SHARED:-}" = 1 ]; then
    real_reset || { echo "  FAIL $suite: the shared cluster is not back as the next suite expects it"; failed=$((failed + 1)); }
  else
    "$drake_root/hack/cluster-down.sh" || true
  fi
  [ "$failed" -gt 0 ] || [ "$rc" -eq 0 ] || failed=$((failed + 1))
  if [ "$failed" -gt 0 ] && [ -d "$cluster_dir/logs" ]; then
    keep="$drake_root/build/e2e-logs/$keep_as-$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$keep" && cp -r "$cluster_dir/logs/." "$keep/"
    echo "$suite failed: component logs kept in $keep"
  fi
  echo "$suite: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# real_cluster_up IMAGE...: build the real-node components and IMAGEs
# (hack/build-image.sh names), start two real nodes only (gang-only mode),
# stop the cluster's own drake and import the images into both nodes.
# Sets image_ref[NAME] for each.
declare -A image_ref=()
real_cluster_up() {
  local hack_dir=$drake_root/hack w which=() files refs i
  # one version for the builds and the references (git describe may change
  # meanwhile: a commit, a file edited)
  VERSION=${VERSION:-$(git -C "$drake_root" describe --always --dirty 2>/dev/null || echo unknown)}
  export VERSION
  for w in "$@"; do which+=(--which "$w"); done
  mapfile -t refs < <("$hack_dir/build-image.sh" "${which[@]}" --print-ref)
  [ ${#refs[@]} -eq $# ] || cdie "build-image.sh gave ${#refs[@]} references for $#"
  for ((i = 1; i <= $#; i++)); do image_ref[${!i}]=${refs[$((i - 1))]}; done
  if [ "${REAL_SHARED:-}" = 1 ]; then
    [ -f "$cluster_dir/env" ] || cdie "REAL_SHARED=1 and no cluster in $cluster_dir"
    # shellcheck disable=SC1091
    source "$cluster_dir/env"
    return 0
  fi
  "$hack_dir/build-control-plane.sh" helm kubelet containerd runc cni coredns >/dev/null
  mapfile -t files < <("$hack_dir/build-image.sh" "${which[@]}")
  [ ${#files[@]} -eq $# ] || cdie "build-image.sh gave ${#files[@]} archives for $#"
  DRAKE_CLUSTER_DIR=$cluster_dir DRAKE_EXTENDER_MODE=gang "$hack_dir/cluster-up.sh" \
    --real-nodes 2 --nodes 0 --large-nodes 0 --mig-nodes 0 --amd-nodes 0
  # shellcheck disable=SC1091
  source "$cluster_dir/env"
  "$hack_dir/cluster-drake.sh" stop
  "$hack_dir/real-nodes.sh" import "${files[@]}"
}

# real_reset: the shared cluster as the next suite expects it, whatever
# this one did to it: every real node's containerd and kubelet running,
# drake's release and the two namespaces gone, the host's kube-scheduler on
# the configuration it had before the first suite (real-suites.sh keeps a
# copy), and the nodes Ready, untainted and advertising their GPUs
real_reset() {
  local i n hack_dir=$drake_root/hack
  n=$(k get nodes -l drake.dev/real-node=true -o name | grep -c .) || return 1
  for ((i = 0; i < n; i++)); do
    proc_alive "real-node-$i-containerd" || "$hack_dir/cluster-proc.sh" start "real-node-$i-containerd" || return 1
    proc_alive "real-node-$i-kubelet" || "$hack_dir/cluster-proc.sh" start "real-node-$i-kubelet" || return 1
  done
  if [ -f "$cluster_dir/kube-scheduler.yaml.shared" ] &&
    ! cmp -s "$cluster_dir/kube-scheduler.yaml" "$cluster_dir/kube-scheduler.yaml.shared"; then
    cp "$cluster_dir/kube-scheduler.yaml.shared" "$cluster_dir/kube-scheduler.yaml"
    "$hack_dir/cluster-proc.sh" stop kube-scheduler
    "$hack_dir/cluster-proc.sh" start kube-scheduler || return 1
  fi
  helm uninstall drake -n "$ns" --wait --timeout 120s >/dev/null 2>&1 || true
  # the tests' containers need not be given time to stop: nothing of them
  # is kept (busybox's sleep, as PID 1, would hold each pod 30 s)
  k delete pods -n "$jobs_ns" --all --grace-period=0 --force >/dev/null 2>&1 || true
  k delete namespace "$jobs_ns" "$ns" --ignore-not-found --wait=false >/dev/null || return 1
  # (read whole: under pipefail "k get | grep" fails when one is NotFound)
  gone() {
    local l
    l=$(k get namespace "$jobs_ns" "$ns" -o name --ignore-not-found 2>/dev/null) || return 1
    [ -z "$l" ]
  }
  fit() {
    local node
    for node in $(k get nodes -l drake.dev/real-node=true -o name); do
      [ "$(k get "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] &&
        [ -z "$(k get "$node" -o jsonpath='{.spec.taints}')" ] &&
        [ "$(k get "$node" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" = "${DRAKE_REAL_NODE_GPUS:-8}" ] || return 1
    done
  }
  eventually 180 gone || { echo "    namespaces left: $(k get namespace "$jobs_ns" "$ns" 2>&1 | tr '\n' ';')"; return 1; }
  eventually 180 fit || { echo "    nodes: $(k get nodes -o wide 2>&1 | tr '\n' ';')"; return 1; }
}

# real_install_drake MODE [HELM ARGS...]: helm install drake's chart with
# drake's image (replicas 2), and wait for one leader Ready; sets leader.
# The tag goes in with --set-string: --set reads a tag of digits alone (a
# short commit hash such as 1183615) as a number, which the chart's schema
# refuses.
drake_sel=app.kubernetes.io/name=drake,app.kubernetes.io/component=extender
ready_count() {
  k get pods -n "$ns" -l "$drake_sel" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    grep -c '^True$' || true
}
running_count() {
  k get pods -n "$ns" -l "$drake_sel" --field-selector status.phase=Running -o name | grep -c . || true
}
one_leader_ready() { [ "$(running_count)" = 2 ] && [ "$(ready_count)" = 1 ]; }
real_install_drake() {
  local mode=$1 ref=${image_ref[drake]}
  shift
  mkdir -p "$cluster_dir/chart-real"
  echo "$suite: helm install $ref ($mode)"
  if helm install drake "$drake_root/charts/drake" -n "$ns" --create-namespace --wait=false \
    --set mode="$mode" --set replicas=2 \
    --set image.repository="${ref%:*}" --set-string image.tag="${ref##*:}" --set image.pullPolicy=Never \
    --set scheduler.image.pullPolicy=Never --set flags.gangBindTimeout=6s "$@" \
    >"$cluster_dir/chart-real/install.txt" 2>&1; then
    ok "helm install --set mode=$mode,replicas=2,image=$ref $*"
  else
    bad "helm install: $(cat "$cluster_dir/chart-real/install.txt")"
    exit 1
  fi
  if eventually 180 one_leader_ready; then
    ok "drake's 2 pods run on real nodes; exactly one (the leader) passes its HTTPS readiness probe"
  else
    bad "drake pods: $(k get pods -n "$ns" -l "$drake_sel" -o wide 2>&1)"
    exit 1
  fi
  leader=$(k get pods -n "$ns" -l "$drake_sel" -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | awk '$2 == "True" {print $1}')
}
