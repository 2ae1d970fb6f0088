#!/usr/bin/env bash
# itest.sh DATA - torch-train's integration test, no cluster needed: torchrun
# elastic agents (examples/torch-train/torchrun.py, --nnodes 1:3, c10d
# rendezvous on 127.0.0.1, gloo) as local processes, each with its own
# checkpoint folder as a pod has, training on the real digits (DATA):
#   1. two agents train together (a "world=2" line);
#   2. the second agent is stopped (SIGTERM, as a deleted pod's): torchrun
#      restarts the first one's worker, which resumes from its checkpoint
#      (started at a step > 0, world 1) and trains on;
#   3. a third agent with an empty checkpoint folder joins (a new pod):
#      both workers restart, the new one starts at the others' step (> 0)
#      from rank 0's checkpoint, world 2;
#   4. the job reaches its target accuracy and both agents exit 0.
# `make torch-train-itest` runs it. Each check prints ok or FAIL; logs stay
# under build/test-logs/torch-train-itest/. The last line:
#   torch-train-itest: N passed, N failed
set -uo pipefail
data=${1:?usage: itest.sh DATA}
root=$(cd "$(dirname "$0")/../.." && pwd)
logs=$root/build/test-logs/torch-train-itest
rm -rf "$logs"
mkdir -p "$logs"
# shellcheck source=hack/free-port.sh
source "$root/hack/free-port.sh"
port=$(free_port)
passed=0 failed=0
ok() { echo "  ok   $*"; passed=$((passed + 1)); }
bad() { echo "  FAIL $*"; failed=$((failed + 1)); }
declare -A pid_of=()
cleanup() {
  local p
  for p in "${pid_of[@]}"; do kill -KILL "$p" 2>/dev/null; done
}
trap cleanup EXIT

# agent NAME IS_HOST: a torchrun agent in the background, its log in
# NAME.log, its checkpoint in NAME/
agent() {
  mkdir -p "$logs/$1"
  TORCH_TRAIN_DATA=$data TORCH_TRAIN_CHECKPOINT=$logs/$1/checkpoint.pt TORCH_TRAIN_LOG_INTERVAL=0.5 \
    TORCH_TRAIN_STEP_DELAY=${TORCH_TRAIN_STEP_DELAY:-0.02} \
    /usr/bin/python3 "$root/examples/torch-train/torchrun.py" --nnodes 1:3 --nproc_per_node 1 \
    --rdzv_backend c10d --rdzv_endpoint "127.0.0.1:$port" --rdzv_id itest \
    --rdzv_conf "is_host=$2,last_call_timeout=1" --max_restarts 10 --monitor_interval 1 \
    "$root/examples/torch-train/torch-train.py" >"$logs/$1.log" 2>&1 &
  pid_of[$1]=$!
}
# within SECONDS CMD...: poll CMD until it succeeds or SECONDS pass
within() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt "$deadline" ] || return 1
    sleep 0.2
  done
}
has() { grep -Eq -- "$2" "$logs/$1.log"; }
# since NAME LINE PATTERN: a line matching PATTERN after line LINE of NAME.log
since() { tail -n "+$(($2 + 1))" "$logs/$1.log" | grep -Eq -- "$3"; }
lines() { grep -c '' "$logs/$1.log"; }
first() { tail -n "+$(($2 + 1))" "$logs/$1.log" | grep -Em1 -- "$3"; }

agent a 1
agent b 0
if within 120 has a 'step=[0-9]+ .*world=2'; then
  ok "two agents rendezvoused and train together: $(grep -Em1 'world=2' "$logs/a.log")"
else
  bad "a and b never trained together: $(tail -3 "$logs/a.log")"
fi
within 60 has a 'step=[1-9][0-9]+ .*world=2' || true
mark=$(lines a)
kill -TERM "${pid_of[b]}"
wait "${pid_of[b]}" 2>/dev/null
unset 'pid_of[b]'
shrunk='rank 0/1 .*started at step [1-9][0-9]* \(from rank 0'
if within 90 since a "$mark" "$shrunk"; then
  ok "b stopped: a's worker restarted alone and resumed from its checkpoint: $(first a "$mark" "$shrunk")"
else
  bad "a did not resume alone at a step > 0 after b stopped: $(tail -5 "$logs/a.log")"
fi
if within 30 since a "$mark" 'step=[0-9]+ .*world=1'; then ok "a trains on alone: $(first a "$mark" 'world=1')"; else bad "a does not train alone: $(tail -3 "$logs/a.log")"; fi
mark=$(lines a)
agent c 0
grown='rank 1/2 .*started at step [1-9][0-9]* \(from rank 0'
if within 90 has c "$grown"; then
  ok "c (no checkpoint of its own) joined at the job's step, from rank 0's checkpoint: $(grep -Em1 "$grown" "$logs/c.log")"
else
  bad "c did not join at a step > 0: $(tail -5 "$logs/c.log")"
fi
if within 30 since a "$mark" 'rank 0/2 .*started at step [1-9]'; then ok "a restarted with c at a step > 0: $(first a "$mark" 'rank 0/2 .*started at step')"; else bad "a did not restart with c: $(tail -3 "$logs/a.log")"; fi
if within 300 has a 'target reached'; then ok "$(grep -m1 'target reached' "$logs/a.log")"; else bad "a did not reach the target: $(tail -3 "$logs/a.log")"; fi
for n in a c; do
  if within 60 eval "! kill -0 ${pid_of[$n]} 2>/dev/null"; then
    wait "${pid_of[$n]}"
    rc=$?
    if [ $rc -eq 0 ]; then ok "agent $n exited 0"; else bad "agent $n exited $rc: $(tail -3 "$logs/$n.log")"; fi
  else
    bad "agent $n still runs after the target"
  fi
  unset "pid_of[$n]"
done
echo "torch-train-itest: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
