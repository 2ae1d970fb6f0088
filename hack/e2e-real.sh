#!/usr/bin/env bash
# e2e-real.sh - real training under drake on real nodes: drake-train
# (examples/train) in TFJobs that drake places, with drake installed by its
# chart from its own image (two replicas, gang-only, second-scheduler mode).
#
#   1. DRAGON's README TFJob, unchanged but for the image, a step cap and
#      resources that fit these nodes (1 PS + 4 workers, min 1, max 4,
#      cleanPodPolicy All): the PS and workers find each other through the
#      TF_CONFIG names drake wrote, train to the target accuracy (the PS
#      says "target reached", not the step cap), worker 0 reports its
#      progress to drake with its pod's projected token, verifying drake's
#      certificate (drake counts the reports accepted), the TFJob turns
#      Succeeded, and cleanPodPolicy All removes its pods.
#   2. drake's leader pod deleted mid-training: the standby takes the Lease,
#      no training pod is recreated or restarted, and the job still reaches
#      its target and Succeeds.
# Each check prints ok/FAIL; the last line is
#   e2e-real: N passed, N failed
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
# shellcheck source=hack/real-lib.sh
source "$(dirname "$0")/real-lib.sh"
suite=e2e-real keep_as=e2e-real
trap real_finish EXIT
trap 'exit 130' INT TERM
hack_dir=$drake_root/hack
work=$cluster_dir/e2e-real

real_cluster_up drake kube-scheduler train
train_ref=${image_ref[train]}
real_install_drake secondScheduler
mkdir -p "$work"
k create namespace "$jobs_ns" >/dev/null

# the chart's client certificate, to read drake's /metrics through its Service
secret_files "$ns" drake-tls "$work/drake-tls"
secret_files "$ns" drake-client-tls "$work/drake-client-tls"
svc_ip=$(k get svc -n "$ns" drake -o jsonpath='{.spec.clusterIP}')
# accepted: drake's count of progress reports it accepted (the leader's)
accepted() {
  curl -sf --max-time 5 --cacert "$work/drake-tls/ca.crt" --cert "$work/drake-client-tls/tls.crt" \
    --key "$work/drake-client-tls/tls.key" --resolve "drake.$ns.svc:443:$svc_ip" \
    "https://drake.$ns.svc/metrics" | awk '/^drake_progress_reports_total\{outcome="accepted"\}/ {print $2}'
}

# tfjob NAME DELAY: DRAGON's README job with drake-train; DELAY slows each
# training step so the job lasts long enough to be disturbed
tfjob() {
  python3 - "$drake_root/config/crd/examples/dragon-readme.yaml" "$1" "$2" "$train_ref" <<'EOF'
import sys, yaml
src, name, delay, image = sys.argv[1:]
job = yaml.safe_load(open(src))
job["metadata"]["name"] = name
for rtype, spec in job["spec"]["tfReplicaSpecs"].items():
    c = spec["template"]["spec"]["containers"][0]
    c["image"] = image
    c["imagePullPolicy"] = "Never"
    # a step cap far beyond the target: the job ends at the target
    c["env"] = [{"name": "TARGET_ACCURACY", "value": "0.96"},
                {"name": "GLOBAL_STEPS", "value": "200000"},
                {"name": "TRAIN_STEP_DELAY", "value": delay}]
    # these nodes have the machine's 2 cores
    c["resources"] = {"requests": {"cpu": "100m", "memory": "32Mi"},
                      "limits": {"cpu": "500m", "memory": "128Mi", **(
                          {"nvidia.com/gpu": 1} if rtype == "Worker" else {})}}
print(yaml.safe_dump(job))
EOF
}
# submit NAME DELAY: the job, and its 1 PS + 4 workers started (or the end)
submit() {
  local t=$SECONDS
  tfjob "$1" "$2" | k apply -n "$jobs_ns" -f - >/dev/null
  if eventually 180 started "$1" 5; then
    ok "$1: 1 PS + 4 workers of drake-train started whole on real nodes ($((SECONDS - t))s)"
  else
    bad "$1 did not start whole: $(k get pods -n "$jobs_ns" -o wide 2>&1)"
    exit 1
  fi
}
succeeded() {
  k get tfjob -n "$jobs_ns" "$1" -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}' | grep -qx True
}
no_pods() { [ -z "$(k get pods -n "$jobs_ns" -l "training.kubeflow.org/job-name=$1" -o name)" ]; }
# follow_ps JOB: the PS's log, followed into a file (the pod goes at the end)
follow_ps() {
  k logs -n "$jobs_ns" -f "$1-ps-0" >"$work/$1-ps.log" 2>&1 &
  echo $! >"$work/$1-ps.pid"
}
stop_follow() {
  local p
  p=$(cat "$work/$1-ps.pid" 2>/dev/null) || return 0
  kill "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}

# --- 1. DRAGON's README job trains to its target --------------------------------
a0=$(accepted || echo 0)
t0=$SECONDS
submit job1 20ms
follow_ps job1
if eventually 300 succeeded job1; then
  ok "job1 Succeeded $((SECONDS - t0))s after it was submitted"
else
  bad "job1 did not succeed: $(k get tfjob -n "$jobs_ns" job1 -o jsonpath='{.status}' 2>&1)"
fi
stop_follow job1
if grep -q "target reached" "$work/job1-ps.log"; then
  ok "the PS trained to the target: $(grep -m1 'ps: finished' "$work/job1-ps.log")"
else
  bad "the PS did not reach its target: $(tail -3 "$work/job1-ps.log")"
fi
a1=$(accepted || echo 0)
if [ "${a1:-0}" -gt "${a0:-0}" ] 2>/dev/null; then
  ok "drake accepted $((a1 - a0)) progress reports from worker 0 (its pod's token, drake's certificate verified)"
else
  bad "drake accepted no progress report (before $a0, after $a1)"
fi
if eventually 60 no_pods job1; then ok "cleanPodPolicy All removed job1's pods"; else bad "job1's pods remain: $(k get pods -n "$jobs_ns" 2>&1)"; fi

# --- 2. the leader deleted mid-training ------------------------------------------
t0=$SECONDS
submit job2 150ms
follow_ps job2
# uid, restart count and container of each pod: a recreated or restarted
# replica changes it, one that finishes does not
fingerprint() {
  k get pods -n "$jobs_ns" -l training.kubeflow.org/job-name=job2 \
    -o jsonpath='{range .items[*]}{.metadata.uid} {.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].containerID}{"\n"}{end}' | sort
}
training() { grep -q "accuracy" "$work/job2-ps.log"; }
eventually 60 training || true
before=$(fingerprint)
leader=$(lease_holder)
k delete pod -n "$ns" "$leader" --wait=false >/dev/null
if eventually 120 led_by_other "$leader"; then ok "the standby took the Lease while job2 trained"; else bad "no new leader after $leader's pod was deleted"; fi
# until job2 succeeds, its five pods stay the ones it started with (fewer
# lines: cleanPodPolicy is removing them as it succeeds)
changed=""
watch_job2() {
  local fp
  fp=$(fingerprint)
  [ "$(grep -c . <<<"$fp")" != 5 ] || [ "$fp" = "$before" ] || changed=$fp
  succeeded job2
}
if eventually 300 watch_job2; then
  ok "job2 Succeeded $((SECONDS - t0))s after it was submitted"
else
  bad "job2 did not succeed: $(k get tfjob -n "$jobs_ns" job2 -o jsonpath='{.status}' 2>&1)"
fi
stop_follow job2
if [ -z "$changed" ]; then
  ok "no pod of job2 was recreated or restarted across the leader change"
else
  bad "job2's pods changed across the leader change: before $before after $changed"
fi
if grep -q "target reached" "$work/job2-ps.log"; then
  ok "job2's PS trained to the target across the leader change: $(grep -m1 'ps: finished' "$work/job2-ps.log")"
else
  bad "job2's PS did not reach its target: $(tail -3 "$work/job2-ps.log")"
fi
