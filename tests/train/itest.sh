#!/usr/bin/env bash
# itest.sh TRAIN DATA [DRAKE] - drake-train's integration test, no cluster
# needed: a PS and its workers as local processes on 127.0.0.1, each with
# the TF_CONFIG a TFJob replica gets, training on the real digits (DATA).
# With DRAKE (the drake binary), the coordinator's reports also go through
# the real `drake progress` to a real `drake serve` over verified TLS.
# `make train-itest` (and so `make test`) runs it. Each case prints ok or
# FAIL with the reason; logs stay under build/test-logs/train-itest/<case>/.
# The last line is the one CI reads:
#   train-itest: N passed, N failed
set -uo pipefail
train=${1:?usage: itest.sh TRAIN DATA}
data=${2:?usage: itest.sh TRAIN DATA}
drake=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
logs=$root/build/test-logs/train-itest
rm -rf "$logs"
mkdir -p "$logs"

passed=0 failed=0
declare -A pid_of=()
started=()

cleanup() {
  local p
  for p in "${started[@]}"; do
    kill -CONT "$p" 2>/dev/null
    kill -KILL "$p" 2>/dev/null
  done
}
trap cleanup EXIT

# free_port: below the kernel's ephemeral range (a port in it could be
# another test's source port when the PS binds it)
# shellcheck source=hack/free-port.sh
source "$root/hack/free-port.sh"

# cluster PS_PORT WORKERS [CHIEF EVALUATOR]: the "cluster" object.
cluster() {
  local ps=$1 n=$2 chief=${3:-0} ev=${4:-0} w="" i
  for ((i = 0; i < n; i++)); do w+="${w:+,}\"127.0.0.1:$((ps + 1 + i))\""; done
  local c="\"ps\":[\"127.0.0.1:$ps\"],\"worker\":[$w]"
  [ "$chief" = 0 ] || c="\"chief\":[\"127.0.0.1:$((ps + 100))\"],$c"
  [ "$ev" = 0 ] || c+=",\"evaluator\":[\"127.0.0.1:$((ps + 101))\"]"
  echo "{$c}"
}
tf_config() { echo "{\"cluster\":$1,\"task\":{\"type\":\"$2\",\"index\":$3},\"environment\":\"cloud\"}"; }

# start DIR NAME CLUSTER TYPE INDEX [ARGS...]: one replica in the background.
start() {
  local dir=$1 name=$2 cl=$3 type=$4 index=$5
  shift 5
  TF_CONFIG=$(tf_config "$cl" "$type" "$index") "$train" --data "$data" --log-interval 0.2s \
    "$@" >>"$dir/$name.log" 2>>"$dir/$name.err" &
  pid_of[$dir/$name]=$!
  started+=("$!")
}

# wait_exit DIR NAME SECONDS: the replica's exit code, or 124 (and killed)
# when it is still running after SECONDS.
wait_exit() {
  local p=${pid_of[$1/$2]} end=$((SECONDS + $3))
  while kill -0 "$p" 2>/dev/null; do
    if [ $SECONDS -ge $end ]; then
      kill -KILL "$p" 2>/dev/null
      wait "$p" 2>/dev/null
      return 124
    fi
    sleep 0.05
  done
  wait "$p"
}

# wait_for FILE REGEX SECONDS: true once FILE has a line matching REGEX.
wait_for() {
  local end=$((SECONDS + $3))
  until grep -qE "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.05
  done
}

# wait_after FILE FIRST THEN SECONDS: true once a line matching THEN
# follows one matching FIRST.
wait_after() {
  local end=$((SECONDS + $4))
  until awk -v a="$2" -v b="$3" '$0 ~ a {f = 1; next} f && $0 ~ b {found = 1; exit} END {exit !found}' "$1" 2>/dev/null; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.05
  done
}

# wait_listening PORT: the PS has bound its port.
wait_listening() {
  local end=$((SECONDS + 10))
  until [ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.05
  done
}

fails=()
check() { # check CONDITION-DESCRIPTION COMMAND...: record a failed expectation
  local what=$1
  shift
  "$@" || fails+=("$what")
}
has() { grep -qE "$2" "$1" 2>/dev/null; }
lacks() { ! grep -qE "$2" "$1" 2>/dev/null; }
rc_is() { [ "$1" = "$2" ]; }

# run_case NAME: runs case_NAME in its own folder and reports it.
run_case() {
  local name=$1 t0=$SECONDS
  local dir=$logs/$name
  mkdir -p "$dir"
  fails=()
  "case_$name" "$dir"
  if [ ${#fails[@]} -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok   $name ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    echo "FAIL $name ($((SECONDS - t0)) s):"
    printf '    %s\n' "${fails[@]}"
    echo "    logs: $dir"
  fi
}

# The PS's final line: "ps: finished at step N: accuracy A >= T (...)".
final_accuracy() { sed -nE 's/^ps: finished at step [0-9]+: accuracy ([0-9.]+) .*/\1/p' "$1"; }
final_step() { sed -nE 's/^ps: finished at step ([0-9]+):.*/\1/p' "$1"; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 >= b + 0) }'; }

case_trains_to_the_target_with_three_workers() {
  local d=$1 port cl i rc
  port=$(free_port)
  cl=$(cluster "$port" 3)
  # a fake drake that must never run: no DRAKE_PROGRESS_URL, no reports
  printf '#!/bin/sh\necho "$@" >>%s/reports\n' "$d" >"$d/drake" && chmod +x "$d/drake"
  start "$d" ps "$cl" ps 0 --step-delay 2ms
  check "the PS listens on its TF_CONFIG port" wait_listening "$port"
  for i in 0 1 2; do start "$d" "worker-$i" "$cl" worker "$i" --step-delay 2ms --drake "$d/drake"; done
  for i in ps worker-0 worker-1 worker-2; do
    wait_exit "$d" "$i" 40
    rc=$?
    check "$i exits 0 (got $rc)" rc_is "$rc" 0
  done
  check "the PS reaches the target: 'target reached'" has "$d/ps.log" 'target reached'
  check "the PS's final accuracy >= 0.96 (got '$(final_accuracy "$d/ps.log")')" \
    at_least "$(final_accuracy "$d/ps.log")" 0.96
  check "the PS saw 3 replicas" has "$d/ps.log" '3 replicas seen'
  check "the PS prints steps/s, accuracy and workers" has "$d/ps.log" \
    '^ps: step=[0-9]+ steps/s=[0-9.]+ accuracy=0\.[0-9]+@[0-9]+ workers=3 seen=3'
  check "worker 0 coordinates and ends the job" has "$d/worker-0.log" 'the target is reached; finishing the job'
  check "worker 1 is told the job is done" has "$d/worker-1.log" 'the PS says the job is done'
  check "worker 2 is told the job is done" has "$d/worker-2.log" 'the PS says the job is done'
  check "worker 1 does not coordinate" lacks "$d/worker-1.log" 'finishing the job'
  check "no report without DRAKE_PROGRESS_URL" test ! -e "$d/reports"
}

case_a_killed_worker_rejoins_and_the_job_finishes() {
  local d=$1 port cl rc first step
  port=$(free_port)
  cl=$(cluster "$port" 2)
  # the step cap ends this job at exactly 600 steps, about 6 s at 20 ms a step
  local args=(--step-delay 20ms --global-steps 600 --target-accuracy 1)
  start "$d" ps "$cl" ps 0 "${args[@]}"
  check "the PS listens" wait_listening "$port"
  start "$d" worker-0 "$cl" worker 0 "${args[@]}"
  start "$d" worker-1 "$cl" worker 1 "${args[@]}"
  check "worker 1 trains on shard 1 of 2" wait_for "$d/worker-1.log" 'step=[1-9][0-9]* .*shard=1/2' 10
  first=${pid_of[$d/worker-1]}
  kill -KILL "$first"
  wait "$first" 2>/dev/null
  check "the PS notices worker 1 left" wait_for "$d/ps.log" '^ps: worker 1 left at step' 10
  check "worker 0 takes the whole training set alone" wait_for "$d/worker-0.log" 'shard=0/1' 5
  start "$d" worker-1 "$cl" worker 1 "${args[@]}"
  check "the PS says worker 1 rejoined, 2 training" wait_for "$d/ps.log" \
    '^ps: worker 1 rejoined at step [1-9][0-9]* \(2 training, 2 seen\)' 10
  check "worker 1 goes on from the PS's step, not 0" has "$d/worker-1.log" \
    'connected to the PS 127\.0\.0\.1:[0-9]+ at step [1-9]'
  check "worker 1 trains on shard 1 of 2 again" wait_after "$d/worker-1.log" \
    'connected.*at step [1-9]' 'step=[0-9]+ .*shard=1/2' 10
  for i in ps worker-0 worker-1; do
    wait_exit "$d" "$i" 40
    rc=$?
    check "$i exits 0 (got $rc)" rc_is "$rc" 0
  done
  step=$(final_step "$d/ps.log")
  check "the job ends at the step cap, exactly 600 (got '$step')" rc_is "$step" 600
  check "the PS says the step cap ended it" has "$d/ps.log" 'step cap reached'
  check "the rejoin came before the end" awk '/worker 1 rejoined/ {r = 1} /finished at step/ {exit !r}' "$d/ps.log"
}

case_one_worker_runs_are_repeatable() {
  local d=$1 port cl run rc
  for run in 1 2; do
    port=$(free_port)
    cl=$(cluster "$port" 1)
    start "$d" "ps-$run" "$cl" ps 0 --seed 7
    check "the PS listens" wait_listening "$port"
    start "$d" "worker-$run" "$cl" worker 0 --seed 7
    for i in "ps-$run" "worker-$run"; do
      wait_exit "$d" "$i" 40
      rc=$?
      check "$i exits 0 (got $rc)" rc_is "$rc" 0
    done
  done
  local a b
  a=$(sed -nE 's/^(ps: finished at step [0-9]+: accuracy [0-9.]+).*/\1/p' "$d/ps-1.log")
  b=$(sed -nE 's/^(ps: finished at step [0-9]+: accuracy [0-9.]+).*/\1/p' "$d/ps-2.log")
  check "the same seed gives the same step and accuracy ('$a', '$b')" test -n "$a" -a "$a" = "$b"
}

case_the_chief_ends_the_job_and_an_evaluator_follows() {
  local d=$1 port cl rc
  port=$(free_port)
  cl=$(cluster "$port" 1 chief evaluator)
  start "$d" ps "$cl" ps 0 --step-delay 2ms
  check "the PS listens" wait_listening "$port"
  start "$d" chief-0 "$cl" chief 0 --step-delay 2ms
  start "$d" worker-0 "$cl" worker 0 --step-delay 2ms
  start "$d" evaluator-0 "$cl" evaluator 0 --log-interval 0.1s
  for i in ps chief-0 worker-0 evaluator-0; do
    wait_exit "$d" "$i" 40
    rc=$?
    check "$i exits 0 (got $rc)" rc_is "$rc" 0
  done
  check "the chief is the coordinator" has "$d/chief-0.log" 'coordinator: tests and ends the job'
  check "the chief ends the job" has "$d/chief-0.log" 'finishing the job'
  check "worker 0 does not coordinate when there is a chief" lacks "$d/worker-0.log" 'coordinator|finishing'
  check "the PS reaches the target" at_least "$(final_accuracy "$d/ps.log")" 0.96
  check "the PS counts 2 training replicas, not the evaluator" has "$d/ps.log" '2 replicas seen'
  check "the evaluator tests the weights" has "$d/evaluator-0.log" '^evaluator 0: step=[0-9]+ accuracy=0\.[0-9]+'
}

case_no_tf_config_exits_2_saying_so() {
  local d=$1 rc
  env -u TF_CONFIG "$train" --data "$data" >"$d/unset.log" 2>&1
  rc=$?
  check "exit 2 without TF_CONFIG (got $rc)" rc_is "$rc" 2
  check "the message says TF_CONFIG is not set" has "$d/unset.log" '^drake-train: TF_CONFIG is not set'
  TF_CONFIG="" "$train" --data "$data" >"$d/empty.log" 2>&1
  rc=$?
  check "exit 2 with an empty TF_CONFIG (got $rc)" rc_is "$rc" 2
  check "the message says TF_CONFIG is not set" has "$d/empty.log" 'TF_CONFIG is not set'
}

case_malformed_tf_config_exits_2_naming_the_problem() {
  local d=$1 rc i=0 json want
  local cases=(
    '{"cluster":'
    'TF_CONFIG: not JSON'
    '{"cluster":{"ps":["127.0.0.1:1"]}}'
    'TF_CONFIG: "task" is missing'
    '{"cluster":{"ps":["127.0.0.1:1"],"worker":["a:1"]},"task":{"type":"worker","index":4}}'
    'TF_CONFIG: the task worker 4 is not in cluster.worker \(1 endpoint listed\)'
    '{"cluster":{"ps":["ps-0.ml.svc"],"worker":["a:1"]},"task":{"type":"worker","index":0}}'
    'TF_CONFIG: cluster.ps\[0\]: "ps-0.ml.svc" has no port'
    '{"cluster":{"ps":["a:1","b:1"],"worker":["a:1"]},"task":{"type":"worker","index":0}}'
    'TF_CONFIG: cluster.ps lists 2 parameter servers'
    '{"cluster":{"ps":["a:1"]},"task":{"type":"ps","index":0}}'
    'TF_CONFIG: the cluster has neither a chief nor a worker'
    '{"cluster":{"ps":["a:1"],"worker":["a:1"]},"task":{"type":"leader","index":0}}'
    'TF_CONFIG: task.type "leader" is not chief, ps, worker or evaluator'
  )
  while [ $i -lt ${#cases[@]} ]; do
    json=${cases[$i]} want=${cases[$((i + 1))]}
    TF_CONFIG=$json "$train" --data "$data" >"$d/case-$i.log" 2>&1
    rc=$?
    check "exit 2 for $json (got $rc)" rc_is "$rc" 2
    check "'drake-train: $want' for $json" has "$d/case-$i.log" "^drake-train: $want"
    i=$((i + 2))
  done
}

case_a_ps_that_never_answers_ends_the_worker_with_the_reason() {
  local d=$1 port cl rc t0 took
  # nothing listens
  port=$(free_port)
  cl=$(cluster "$port" 1)
  t0=$SECONDS
  start "$d" refused "$cl" worker 0 --ps-timeout 2s
  wait_exit "$d" refused 20
  rc=$? took=$((SECONDS - t0))
  check "exit 1 when nothing listens (got $rc)" rc_is "$rc" 1
  check "gives up within the bound: 2 s + slack (took $took s)" test "$took" -le 6
  check "says why: gave up, no answer, connection refused" has "$d/refused.err" \
    "^drake-train worker 0: gave up: the PS 127\.0\.0\.1:$port did not answer for [0-9]+ s \(--ps-timeout\): cannot connect to 127\.0\.0\.1:$port: Connection refused"
  # the PS's name never resolves
  cl='{"ps":["drake-train-itest.invalid:2222"],"worker":["127.0.0.1:1"]}'
  start "$d" unresolved "$cl" worker 0 --ps-timeout 1s
  wait_exit "$d" unresolved 20
  rc=$?
  check "exit 1 when the name never resolves (got $rc)" rc_is "$rc" 1
  check "says it cannot resolve the name" has "$d/unresolved.err" \
    'gave up: the PS drake-train-itest\.invalid:2222 .*cannot resolve drake-train-itest\.invalid'
  # a PS that accepts (the kernel does) but never answers: stopped
  port=$(free_port)
  cl=$(cluster "$port" 1)
  start "$d" ps "$cl" ps 0
  check "the PS listens" wait_listening "$port"
  kill -STOP "${pid_of[$d/ps]}"
  t0=$SECONDS
  start "$d" silent "$cl" worker 0 --io-timeout 0.5s --ps-timeout 2s
  wait_exit "$d" silent 20
  rc=$? took=$((SECONDS - t0))
  kill -CONT "${pid_of[$d/ps]}"
  kill -KILL "${pid_of[$d/ps]}"
  wait "${pid_of[$d/ps]}" 2>/dev/null
  check "exit 1 when the PS never answers (got $rc)" rc_is "$rc" 1
  check "gives up within the bound (took $took s)" test "$took" -le 8
  check "says the PS gave no answer in time" has "$d/silent.err" 'gave up: .*no answer in time'
}

case_a_replica_with_another_model_is_refused() {
  local d=$1 port cl rc
  port=$(free_port)
  cl=$(cluster "$port" 1)
  start "$d" ps "$cl" ps 0
  check "the PS listens" wait_listening "$port"
  start "$d" worker-0 "$cl" worker 0 --hidden 16 --ps-timeout 30s
  wait_exit "$d" worker-0 10
  rc=$?
  check "exit 1 at once, not after --ps-timeout (got $rc)" rc_is "$rc" 1
  check "says the models differ" has "$d/worker-0.err" \
    'the PS refused us: model mismatch: the PS trains 64-32-10, this replica 64-16-10'
}

case_bad_data_is_refused_with_file_and_line() {
  local d=$1 rc
  { zcat "$data" | head -1; echo "0,0,x"; } >"$d/bad.csv"
  TF_CONFIG=$(tf_config "$(cluster 2222 1)" worker 0) "$train" --data "$d/bad.csv" \
    >"$d/worker.log" 2>&1
  rc=$?
  check "exit 1 on a malformed row (got $rc)" rc_is "$rc" 1
  check "names the file, line and field" has "$d/worker.log" \
    "the data: $d/bad.csv:2: field 3 is \"x\", not a whole number"
  TF_CONFIG=$(tf_config "$(cluster 2222 1)" worker 0) "$train" --data "$d/none.csv.gz" \
    >"$d/missing.log" 2>&1
  rc=$?
  check "exit 1 on a missing file (got $rc)" rc_is "$rc" 1
  check "says it cannot open it" has "$d/missing.log" "cannot open $d/none.csv.gz: No such file"
}

case_the_coordinator_reports_progress_through_drake_progress() {
  local d=$1 port cl rc i
  # fake drake binaries: one records and accepts, one refuses
  # shellcheck disable=SC2016 # $PPID and $* are the fake's, not ours
  printf '#!/bin/sh\necho "$PPID $*" >>%s/reports\necho "drake accepted"\n' "$d" >"$d/drake-ok"
  printf '#!/bin/sh\necho "drake progress: refused (HTTP 403): not a replica" >&2\nexit 1\n' >"$d/drake-refuses"
  chmod +x "$d/drake-ok" "$d/drake-refuses"
  local args=(--step-delay 5ms --global-steps 400 --target-accuracy 1 --report-interval 0.2s)
  for fake in drake-ok drake-refuses; do
    port=$(free_port)
    cl=$(cluster "$port" 2)
    export DRAKE_PROGRESS_URL=https://drake.invalid/v1/progress
    start "$d" "ps-$fake" "$cl" ps 0 "${args[@]}" --drake "$d/$fake"
    check "the PS listens" wait_listening "$port"
    for i in 0 1; do start "$d" "worker-$i-$fake" "$cl" worker "$i" "${args[@]}" --drake "$d/$fake"; done
    unset DRAKE_PROGRESS_URL
    for i in "ps-$fake" "worker-0-$fake" "worker-1-$fake"; do
      wait_exit "$d" "$i" 40
      rc=$?
      check "$i exits 0 (got $rc)" rc_is "$rc" 0
    done
  done
  local w0=${pid_of[$d/worker-0-drake-ok]} n
  n=$(wc -l <"$d/reports" 2>/dev/null || echo 0)
  check "several reports were sent (got $n)" test "$n" -ge 3
  # shellcheck disable=SC2016 # an awk program
  check "only worker 0 reports" awk -v p="$w0" '$1 != p {exit 1}' "$d/reports"
  check "a report is 'progress --step N --value ACC --metric accuracy --total-steps 400'" \
    has "$d/reports" '^[0-9]+ progress --step [0-9]+ --value 0\.[0-9]{6} --metric accuracy --total-steps 400$'
  check "the last report is the final step" has <(tail -1 "$d/reports") ' --step 400 '
  check "a refused report is logged" has "$d/worker-0-drake-refuses.log" \
    'report: drake progress failed \(exit 1\); training goes on'
  check "drake's reason reaches the log" has "$d/worker-0-drake-refuses.err" 'refused \(HTTP 403\)'
}

case_reports_reach_a_real_drake_over_verified_tls() {
  local d=$1 port cl rc dport dpid ca
  hack/gen-certs.sh "$logs/certs" >/dev/null || { fails+=("hack/gen-certs.sh failed"); return; }
  dport=$(free_port)
  env -u DRAKE_KUBECONFIG -u KUBERNETES_SERVICE_HOST "$drake" serve --port "$dport" \
    --tls-cert "$logs/certs/server.crt" --tls-key "$logs/certs/server.key" \
    --client-ca "$logs/certs/ca.crt" >"$d/drake.log" 2>&1 &
  dpid=$!
  started+=("$dpid")
  check "drake serve listens" wait_listening "$dport"
  echo "a-projected-token" >"$d/token"
  local args=(--step-delay 5ms --global-steps 200 --target-accuracy 1 --report-interval 0.3s --drake "$drake")
  for ca in ca other-ca; do
    port=$(free_port)
    cl=$(cluster "$port" 1)
    start "$d" "ps-$ca" "$cl" ps 0 "${args[@]}"
    check "the PS listens" wait_listening "$port"
    DRAKE_PROGRESS_URL=https://127.0.0.1:$dport/v1/progress DRAKE_PROGRESS_TOKEN_FILE=$d/token \
      DRAKE_PROGRESS_CA_PEM=$(cat "$logs/certs/$ca.crt") start "$d" "worker-0-$ca" "$cl" worker 0 "${args[@]}"
    for i in "ps-$ca" "worker-0-$ca"; do
      wait_exit "$d" "$i" 60
      rc=$?
      check "$i exits 0 though drake refuses every report (got $rc)" rc_is "$rc" 0
    done
    check "worker 0 logs the failed reports ($ca)" has "$d/worker-0-$ca.log" 'report: drake progress failed \(exit 1\)'
  done
  kill -TERM "$dpid"
  wait "$dpid" 2>/dev/null
  # drake without its controller answers 503: the report reached it, token and all
  check "drake's own answer reaches the log" has "$d/worker-0-ca.err" \
    "drake progress: refused \(HTTP 503\): progress reports need drake's TFJob controller"
  check "a drake the CA does not vouch for gets nothing" has "$d/worker-0-other-ca.err" \
    "drake progress: could not reach drake at https://127\.0\.0\.1:$dport/v1/progress: .*(certificate|SSL)"
  check "... and never the request" lacks "$d/worker-0-other-ca.err" 'HTTP 503'
}

cases=(trains_to_the_target_with_three_workers \
  a_killed_worker_rejoins_and_the_job_finishes \
  one_worker_runs_are_repeatable \
  the_chief_ends_the_job_and_an_evaluator_follows \
  no_tf_config_exits_2_saying_so \
  malformed_tf_config_exits_2_naming_the_problem \
  a_ps_that_never_answers_ends_the_worker_with_the_reason \
  a_replica_with_another_model_is_refused \
  bad_data_is_refused_with_file_and_line \
  the_coordinator_reports_progress_through_drake_progress)
[ -z "$drake" ] || cases+=(reports_reach_a_real_drake_over_verified_tls)
cd "$root" || exit 1
for c in "${cases[@]}"; do
  run_case "$c"
done
echo "train-itest: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
