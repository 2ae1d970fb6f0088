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
# A bench of changes that did not happen measures nothing: each run checks
# (ok/FAIL) that its job trained and Succeeded, the fixed one was never
# scaled or moved, drake shrank the elastic one (ScaledDown) and its PS saw
# the two removed workers leave and trained on two after that, the second
# job Succeeded, drake grew the first back (ScaledUp) and each new worker
# rejoined the PS at a step > 0 and fetched the weights, worker 1 was moved
# (Migrated) and its PS saw it leave and rejoin, and the CSVs hold each
# run's time to target and each change's latency. The PS's lines count
# only from drake's decision (its Event) on (real-lib.sh). The last line is
#   bench-train-real: N passed, N failed
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
# uids JOB: "name uid" of each pod of JOB
uids() {
  k get pods -n "$jobs_ns" -l "training.kubeflow.org/job-name=$1" \
    -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' | sort
}
# event_on JOB REASON: the message of the TFJob's latest Event of REASON
event_on() {
  k get events -n "$jobs_ns" --field-selector "involvedObject.kind=TFJob,involvedObject.name=$1,reason=$2" \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | tail -n 1 | grep .
}
# ps_running NAME: NAME's PS container runs (a log followed before that
# ends at once, empty: kubelet follows only a running container)
ps_running() {
  [ -n "$(k get pod -n "$jobs_ns" "$1-ps-0" -o jsonpath='{.status.containerStatuses[0].state.running.startedAt}')" ]
}
# start RUN NAME ARGS...: submit, note the time, follow the PS's log
start() {
  local run=$1 name=$2
  shift 2
  mkdir -p "$work/$run"
  date +%s.%N >"$work/$run/t0"
  job "$name" "$@" | k apply -n "$jobs_ns" -f - >/dev/null
  eventually 180 ps_running "$name" || { bad "$run: $name's PS did not start"; exit 1; }
  k logs -n "$jobs_ns" -f --timestamps "$name-ps-0" >"$work/$run/ps.log" 2>&1 &
  echo $! >"$work/$run/pid"
}
# trains RUN NAME: the run's job trains (its PS is past step 0)
trains() {
  if eventually 120 training "$1"; then ok "$1: $2 trains"; else bad "$1: $2's PS never got past step 0: $(tail -3 "$work/$1/ps.log")"; fi
}
# finish RUN NAME: the job Succeeded; its Events kept; its pods gone before
# the next run
finish() {
  if eventually 600 succeeded "$2"; then ok "$1: $2 Succeeded"; else bad "$1: $2 did not succeed"; fi
  kill "$(cat "$work/$1/pid")" 2>/dev/null || true
  k get events -n "$jobs_ns" --field-selector "involvedObject.kind=TFJob,involvedObject.name=$2" \
    -o jsonpath='{range .items[*]}{.lastTimestamp} {.reason} {.message}{"\n"}{end}' >"$work/$1/events.txt"
  if eventually 120 no_pods "$2"; then ok "$1: $2's pods are gone"; else bad "$1: $2's pods remain: $(k get pods -n "$jobs_ns" 2>&1)"; fi
}

start fixed fixed 4 4 4 4 300ms
trains fixed fixed
finish fixed fixed
if grep -Eq ' (ScaledDown|ScaledUp|MigrationStarted) ' "$work/fixed/events.txt"; then
  bad "fixed: drake changed the fixed-width job: $(grep -E ' (ScaledDown|ScaledUp|MigrationStarted) ' "$work/fixed/events.txt" | tr '\n' ';')"
else
  ok "fixed: no scaling or migration Event on fixed"
fi

# elastic: the shrink, small, the grow, each seen by drake's Event and in
# big's PS log after it (real-lib.sh: the PS prints its width from
# start-up, so a line counts only from the decision on)
plog=$work/elastic/ps.log
start elastic big 4 2 4 4 300ms
trains elastic big
big_before=$(uids big)
job small 2 2 2 4 10ms | k apply -n "$jobs_ns" -f - >/dev/null
t_down="" removed="" t_up=""
if eventually 120 event_on big ScaledDown; then
  ok "elastic: drake shrank big for small: $(event_on big ScaledDown)"
  t_down=$(event_times "$jobs_ns" TFJob big ScaledDown | tail -n 1 || true)
else
  bad "elastic: big was not shrunk for small: $(k get events -n "$jobs_ns" 2>&1 | tail -5)"
fi
# the workers drake took: two of big's pods replaced (the replacements
# wait gated)
two_replaced() { [ "$(comm -23 <(echo "$big_before") <(uids big) | grep -c .)" = 2 ]; }
if [ -n "$t_down" ] && eventually 60 two_replaced; then
  removed=$(comm -23 <(echo "$big_before") <(uids big) | awk '$1 ~ /^big-worker-[0-9]+$/ {sub(/^big-worker-/, "", $1); print $1}' | sort -n | xargs)
fi
# (not two: the checks below that need them fail at once)
[ "$(wc -w <<<"$removed")" = 2 ] || removed=""
left_all() { [ -n "$t_down" ] && ps_saw "$plog" "$(shift_time "$t_down" -1)" left $removed; }
if [ -n "$removed" ] && eventually 60 left_all; then
  ok "elastic: big's PS saw the removed workers ($removed) leave after the ScaledDown of $t_down"
else
  bad "elastic: big's PS did not see 2 removed workers (${removed:-none}) leave after the ScaledDown of ${t_down:-none}: $(tail -5 "$plog")"
fi
narrow() { [ -n "$t_down" ] && ps_width 2 "$plog" "$(shift_time "$t_down" -1)" left "$(shift_time "$t_down" 1)" $removed; }
if [ -n "$removed" ] && eventually 60 narrow; then
  ok "elastic: big trains on 2 workers once they left: $(narrow | cut -d' ' -f2-)"
else
  bad "elastic: big's PS did not train with 2 workers after its workers left: $(tail -3 "$plog")"
fi
if eventually 300 succeeded small; then ok "elastic: small Succeeded on big's GPUs"; else bad "elastic: small did not succeed: $(k get pods -n "$jobs_ns" -o wide 2>&1)"; fi
# the grow: one worker at a time or both at once; every new worker fetches
# the weights at a step > 0 (its log, read while its pod exists) and
# rejoins the PS after the first ScaledUp
grown() { [ "$(event_times "$jobs_ns" TFJob big ScaledUp | grep -c .)" -ge 1 ] && started big 5; }
if eventually 180 grown; then
  ok "elastic: drake grew big back to 4 running workers once the cluster was idle: $(event_on big ScaledUp)"
  t_up=$(event_times "$jobs_ns" TFJob big ScaledUp | head -n 1 || true)
else
  bad "elastic: big was not grown back to 4 workers: $(k get pods -n "$jobs_ns" -o wide 2>&1)"
fi
# shellcheck disable=SC2086
check_fetched "elastic: " "$jobs_ns" big $removed
rejoined_all() { [ -n "$t_up" ] && ps_saw "$plog" "$t_up" rejoined $removed; }
if [ -n "$removed" ] && eventually 60 rejoined_all; then
  ok "elastic: each new worker ($removed) rejoined big's PS at a step > 0 after the ScaledUp of $t_up"
else
  bad "elastic: not every new worker (${removed:-none}) rejoined big's PS at a step > 0 after the ScaledUp of ${t_up:-none}: $(tail -5 "$plog")"
fi
wide() { [ -n "$t_up" ] && ps_width 4 "$plog" "$t_up" rejoined "$(shift_time "$t_up" 1)" $removed; }
if [ -n "$removed" ] && eventually 60 wide; then
  ok "elastic: big trains on 4 workers once they rejoined: $(wide | cut -d' ' -f2-)"
else
  bad "elastic: big's PS did not train with 4 workers after they rejoined: $(tail -3 "$plog")"
fi
finish elastic big
if eventually 60 no_pods small; then ok "elastic: small's pods are gone"; else bad "elastic: small's pods remain: $(k get pods -n "$jobs_ns" 2>&1)"; fi

# migrate: worker 1 moved onto the other node, seen by drake's Events and
# in the PS's log after MigrationStarted (written before the pod goes)
plog=$work/migrate/ps.log
start migrate mig 3 1 3 1 300ms
trains migrate mig
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
moved_w1() { event_on mig Migrated | grep -q "^worker-1 moved from $from to $onto"; }
if eventually 120 moved_w1; then
  ok "migrate: drake moved it: $(event_on mig Migrated)"
else
  bad "migrate: no Migrated event for worker-1 from $from to $onto: $(k get events -n "$jobs_ns" 2>&1 | tail -5)"
fi
t_mig=$(event_times "$jobs_ns" TFJob mig MigrationStarted | tail -n 1 || true)
mig_back() {
  local l
  [ -n "$t_mig" ] && ps_saw "$plog" "$t_mig" left 1 && l=$(ps_after "$plog" "$t_mig" left "$t_mig" 1) &&
    grep -m1 -E 'ps: worker 1 rejoined at step [1-9]' <<<"$l"
}
if eventually 60 mig_back; then
  ok "migrate: mig's PS saw worker 1 leave after the MigrationStarted of $t_mig and rejoin: $(mig_back | cut -d' ' -f2-)"
else
  bad "migrate: mig's PS did not see worker 1 leave after the MigrationStarted of ${t_mig:-none} and rejoin at a step > 0: $(tail -5 "$plog")"
fi
on_onto() { [ "$(k get pod -n "$jobs_ns" mig-worker-1 -o jsonpath='{.spec.nodeName}')" = "$onto" ] && worker_fetched "$jobs_ns" mig-worker-1; }
if eventually 30 on_onto; then
  ok "migrate: mig-worker-1 on $onto fetched the weights at a step > 0: $(worker_fetched "$jobs_ns" mig-worker-1)"
else
  bad "migrate: mig-worker-1 on $onto did not fetch the weights at a step > 0: $(k logs -n "$jobs_ns" mig-worker-1 2>&1 | head -n 5 || true)"
fi
finish migrate mig

python3 "$drake_root/hack/train-curves.py" "$out" fixed="$work/fixed" elastic="$work/elastic" \
  migrate="$work/migrate"
for f in summary changes; do
  echo "$f:"
  column -s, -t <"$out/$f.csv" | sed 's/^/  /'
done
# the bench's figures: each run's time to target, and the latency of each
# change (train-curves.py matches each decision with the PS line it
# explains: a shrink of 2, grows adding 2, the migration)
for r in fixed elastic migrate; do
  if grep -q "^$r," "$out/summary.csv"; then ok "$r: its PS reached the target (summary.csv)"; else bad "$r: no time to target in summary.csv"; fi
done
if grep -q '^elastic,shrink by 2,' "$out/changes.csv"; then ok "elastic: the shrink by 2 and its latency are in changes.csv"; else bad "elastic: no shrink by 2 in changes.csv"; fi
grew=$(awk -F, '$1 == "elastic" && $2 ~ /^grow by / {split($2, w, " "); n += w[3]} END {print n + 0}' "$out/changes.csv")
if [ "$grew" = 2 ]; then ok "elastic: the grows (2 workers) and their latencies are in changes.csv"; else bad "elastic: changes.csv has grows of $grew workers; want 2"; fi
if grep -q '^migrate,migration,' "$out/changes.csv"; then ok "migrate: the migration and its latency are in changes.csv"; else bad "migrate: no migration in changes.csv"; fi
ok "CSVs and curves.png in $out"
