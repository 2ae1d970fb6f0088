#!/usr/bin/env bash
# bench-train-real.sh - what scaling and migration cost a job that really
# trains: drake-train on two real nodes under drake installed by its chart
# (as make e2e-real runs it: --starve-after 3s, --idle-after 10s). Three
# runs, one after the other, of the same job (1 PS + 4 workers of 4 GPUs,
# 300 ms per step, target 0.96):
#
#   fixed    alone, min = max = 4 workers: the job at a fixed width;
#   elastic  min 2, max 4, and a second job (2 workers of 4 GPUs) submitted
#            once it trains: drake shrinks it to 2, the second job runs,
#            drake grows it back once the cluster is idle;
#   migrate  1 PS + 3 workers of 1 GPU, worker 1 moved onto the other node
#            by POST /v1/migrations once it trains.
#
# hack/train-curves.py turns the PS logs (with timestamps) and the TFJobs'
# Events into CSVs and curves.png under BENCH_TRAIN_OUT
# (bench/results/train-real): time to target of each run, and per
# membership change the time from drake's decision to the PS seeing it.
# Needs root (real nodes); one such cluster at a time on the machine.
set -euo pipefail
# shellcheck source=hack/cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"
# shellcheck source=hack/real-lib.sh
source "$(dirname "$0")/real-lib.sh"
suite=bench-train-real keep_as=bench-train-real
trap real_finish EXIT
trap 'exit 130' INT TERM
out=${BENCH_TRAIN_OUT:-$drake_root/bench/results/train-real}
work=$cluster_dir/bench-train-real

real_cluster_up drake kube-scheduler train
train_ref=${image_ref[train]}
real_install_drake secondScheduler --set flags.starveAfter=3s --set flags.idleAfter=10s
mkdir -p "$work"
k create namespace "$jobs_ns" >/dev/null
secret_files "$ns" drake-tls "$work/drake-tls"
svc_ip=$(k get svc -n "$ns" drake -o jsonpath='{.spec.clusterIP}')

# job NAME WORKERS MIN MAX GPU DELAY: the TFJob, as e2e-real's tfjob makes it
job() {
  python3 - "$drake_root/config/crd/examples/dragon-readme.yaml" "$train_ref" "$@" <<'EOF'
import sys, yaml
src, image, name, workers, lo, hi, gpu, delay = sys.argv[1:9]
job = yaml.safe_load(open(src))
job["metadata"]["name"] = name
job["spec"]["min-instances"], job["spec"]["max-instances"] = int(lo), int(hi)
job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = int(workers)
for rtype, spec in job["spec"]["tfReplicaSpecs"].items():
    c = spec["template"]["spec"]["containers"][0]
    c["image"], c["imagePullPolicy"] = image, "Never"
    c["env"] = [{"name": "TARGET_ACCURACY", "value": "0.96"},
                {"name": "GLOBAL_STEPS", "value": "200000"},
                {"name": "TRAIN_STEP_DELAY", "value": delay},
                {"name": "TRAIN_LOG_INTERVAL", "value": "1s"}]
    c["resources"] = {"requests": {"cpu": "100m", "memory": "32Mi"},
                      "limits": {"cpu": "500m", "memory": "128Mi", **(
                          {"nvidia.com/gpu": int(gpu)} if rtype == "Worker" else {})}}
print(yaml.safe_dump(job))
EOF
}
succeeded() {
  k get tfjob -n "$jobs_ns" "$1" -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}' | grep -qx True
}
no_pods() { [ -z "$(k get pods -n "$jobs_ns" -l "training.kubeflow.org/job-name=$1" -o name)" ]; }
training() { grep -q 'ps: step=[1-9]' "$work/$1/ps.log"; }
# start RUN NAME ARGS...: submit, note the time, follow the PS's log
start() {
  local run=$1 name=$2
  shift 2
  mkdir -p "$work/$run"
  date +%s.%N >"$work/$run/t0"
  job "$name" "$@" | k apply -n "$jobs_ns" -f - >/dev/null
  eventually 180 k logs -n "$jobs_ns" "$name-ps-0" || { bad "$run: $name's PS did not start"; exit 1; }
  k logs -n "$jobs_ns" -f --timestamps "$name-ps-0" >"$work/$run/ps.log" 2>&1 &
  echo $! >"$work/$run/pid"
}
# finish RUN NAME: the job Succeeded; its Events kept
finish() {
  if eventually 600 succeeded "$2"; then ok "$1: $2 Succeeded"; else bad "$1: $2 did not succeed"; fi
  kill "$(cat "$work/$1/pid")" 2>/dev/null || true
  k get events -n "$jobs_ns" --field-selector "involvedObject.kind=TFJob,involvedObject.name=$2" \
    -o jsonpath='{range .items[*]}{.lastTimestamp} {.reason} {.message}{"\n"}{end}' >"$work/$1/events.txt"
  eventually 120 no_pods "$2" || true
}

start fixed fixed 4 4 4 4 300ms
finish fixed fixed

start elastic big 4 2 4 4 300ms
eventually 120 training elastic || true
job small 2 2 2 4 10ms | k apply -n "$jobs_ns" -f - >/dev/null
finish elastic big
eventually 120 succeeded small || true

start migrate mig 3 1 3 1 300ms
eventually 120 training migrate || true
k create serviceaccount mover -n "$jobs_ns" >/dev/null
k create rolebinding mover-migrates -n "$jobs_ns" --clusterrole=drake-migrator \
  --serviceaccount="$jobs_ns:mover" >/dev/null
tok=$(k create token mover -n "$jobs_ns" --duration 10m)
from=$(k get pod -n "$jobs_ns" mig-worker-1 -o jsonpath='{.spec.nodeName}')
onto=$(k get nodes -o name | sed 's|node/||' | grep -vx "$from" | head -n 1)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$work/drake-tls/ca.crt" \
  --resolve "drake.$ns.svc:443:$svc_ip" -H "Authorization: Bearer $tok" \
  -d "{\"namespace\":\"$jobs_ns\",\"pod\":\"mig-worker-1\",\"onto\":\"$onto\"}" \
  "https://drake.$ns.svc/v1/migrations")
if [ "$code" = 202 ]; then ok "migrate: mig-worker-1 onto $onto accepted"; else bad "migrate: POST /v1/migrations answered $code"; fi
finish migrate mig

python3 "$drake_root/hack/train-curves.py" "$out" fixed="$work/fixed" elastic="$work/elastic" \
  migrate="$work/migrate"
ok "CSVs and curves.png in $out"
for f in summary changes; do
  echo "$f:"
  column -s, -t <"$out/$f.csv" | sed 's/^/  /'
done
