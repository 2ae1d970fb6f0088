# shellcheck shell=bash
# cluster-lib.sh - helpers shared by cluster-up.sh, cluster-down.sh,
# cluster-drake.sh and e2e.sh. Source it; it defines functions and paths only.
#
# State folder (${DRAKE_CLUSTER_DIR:-build/cluster}):
#   env                 sourced by tests and scripts (ports, URLs, paths)
#   pids/NAME.pid       one per process we started; pids/order lists start order
#   pids/NAME.cmd       its command line, NUL-separated (cluster-proc.sh start)
#   logs/NAME.log       each component's output (kept after teardown)
#   pki/                the cluster CA, admin cert and service-account key
#   drake-pki/          drake's CA, serving cert and kube-scheduler's client cert
#   etcd/               etcd's data (removed on teardown)

drake_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cluster_dir=${DRAKE_CLUSTER_DIR:-$drake_root/build/cluster}
case "$cluster_dir" in /*) ;; *) cluster_dir=$drake_root/$cluster_dir ;; esac

# print_header SCRIPT: SCRIPT's header comment (line 2 to `set -e`), for --help
print_header() { sed -n '2,/^set -e/p' "$1" | sed '$d' | sed 's/^# \{0,1\}//'; }
clog() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
cdie() {
  clog "ERROR: $*"
  exit 1
}

# free_port (free-port.sh): a port no socket uses, below the kernel's
# ephemeral range. Another program could still bind it first; the
# component then fails to start and cluster-up reports it.
# shellcheck source=hack/free-port.sh
source "$drake_root/hack/free-port.sh"
# the ports this cluster was given (cluster-up.sh empties it first)
export DRAKE_PORTS_FILE=$cluster_dir/ports-given

# start_proc NAME CMD... : run CMD in the background, output to logs/NAME.log,
# and record its PID. Async commands of a non-interactive shell ignore SIGINT,
# so a ^C in the terminal after `make up` does not reach them.
start_proc() {
  local name=$1
  shift
  mkdir -p "$cluster_dir/pids" "$cluster_dir/logs"
  if [ -f "$cluster_dir/pids/$name.pid" ] && kill -0 "$(cat "$cluster_dir/pids/$name.pid")" 2>/dev/null; then
    cdie "$name already running (pid $(cat "$cluster_dir/pids/$name.pid"))"
  fi
  printf '# %s\n' "$*" >>"$cluster_dir/logs/$name.log"
  # the exact argument list, so cluster-proc.sh can start it again as it was
  printf '%s\0' "$@" >"$cluster_dir/pids/$name.cmd"
  "$@" >>"$cluster_dir/logs/$name.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$cluster_dir/pids/$name.pid"
  grep -qx "$name" "$cluster_dir/pids/order" 2>/dev/null || echo "$name" >>"$cluster_dir/pids/order"
  clog "started $name (pid $pid, log $cluster_dir/logs/$name.log)"
}

proc_alive() {
  local f="$cluster_dir/pids/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# stop_proc NAME [SECONDS]: SIGTERM the recorded PID, wait for it to exit,
# SIGKILL after the deadline. Never looks processes up by name.
stop_proc() {
  local name=$1 secs=${2:-15} f pid deadline
  f="$cluster_dir/pids/$name.pid"
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + secs))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      clog "$name (pid $pid) ignored SIGTERM for ${secs}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    clog "stopped $name (pid $pid)"
  fi
  rm -f "$f"
}

# wait_for DESC SECONDS NAME CMD... : poll CMD until it succeeds; fail when the
# deadline passes or when process NAME (if not "-") has exited.
wait_for() {
  local desc=$1 secs=$2 name=$3
  shift 3
  local deadline=$((SECONDS + secs)) t0=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if [ "$name" != - ] && ! proc_alive "$name"; then
      tail -n 30 "$cluster_dir/logs/$name.log" >&2 || true
      cdie "$name exited while waiting for $desc (log: $cluster_dir/logs/$name.log)"
    fi
    if [ $SECONDS -ge $deadline ]; then
      [ "$name" != - ] && { tail -n 30 "$cluster_dir/logs/$name.log" >&2 || true; }
      cdie "timed out after ${secs}s waiting for $desc"
    fi
    sleep 0.2
  done
  clog "$desc ($((SECONDS - t0))s)"
}

# https_ok URL : GET with the admin client cert, succeed on HTTP 200.
https_ok() {
  curl -sf -o /dev/null --max-time 5 --cacert "$cluster_dir/pki/ca.crt" \
    --cert "$cluster_dir/pki/admin.crt" --key "$cluster_dir/pki/admin.key" "$1"
}

# drake_ok URL : GET drake with kube-scheduler's client cert.
drake_ok() {
  curl -sf -o /dev/null --max-time 5 --cacert "$cluster_dir/drake-pki/ca.crt" \
    --cert "$cluster_dir/drake-pki/client.crt" --key "$cluster_dir/drake-pki/client.key" "$1"
}

# secret_files NAMESPACE SECRET DIR : the Secret's ca.crt, tls.crt and
# tls.key as files in DIR (the key readable by its owner only).
secret_files() {
  local f
  mkdir -p "$3"
  for f in ca.crt tls.crt tls.key; do
    "$DRAKE_CP_BIN/kubectl" --kubeconfig "$KUBECONFIG" get secret -n "$1" "$2" \
      -o jsonpath="{.data.${f//./\\.}}" | base64 -d >"$3/$f"
  done
  chmod 600 "$3/tls.key"
}

# render TEMPLATE OUT VAR=VALUE... : replace each @VAR@ with VALUE.
render() {
  local tmpl=$1 out=$2 content kv
  shift 2
  content=$(cat "$tmpl")
  for kv in "$@"; do
    content=${content//@${kv%%=*}@/${kv#*=}}
  done
  if grep -q '@[A-Z_]*@' <<<"$content"; then
    cdie "unfilled placeholder in $tmpl: $(grep -o '@[A-Z_]*@' <<<"$content" | sort -u | tr '\n' ' ')"
  fi
  printf '%s\n' "$content" >"$out"
}

# loopback_only : every listening TCP socket of our recorded processes is on
# 127.0.0.1 (or ::1). Prints offenders and fails otherwise.
loopback_only() {
  local f pid bad=0 line
  for f in "$cluster_dir"/pids/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    while read -r line; do
      [ -n "$line" ] || continue
      case "$line" in
      127.*|\[::1\]*|::1*) ;;
      *) clog "$(basename "$f" .pid) (pid $pid) listens on $line"; bad=1 ;;
      esac
    done < <(ss -Htlnp 2>/dev/null | awk -v p="pid=$pid," 'index($0, p) {print $4}')
  done
  return $bad
}
