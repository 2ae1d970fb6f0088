# shellcheck shell=bash
# free-port.sh - free_port, for the scripts that start servers on loopback
# (hack/cluster-lib.sh, tests/train/itest.sh). Source it.
#
# free_port: a TCP port no socket uses now (any state), below the kernel's
# ephemeral range, so that an outgoing connection cannot take it as its
# source port before the server binds it, and a client connecting to it
# while nothing listens cannot be connected to itself; and not one handed
# out earlier by this shell. Called as $(free_port), it runs in a subshell
# whose memory of the ports it gave is lost: DRAKE_PORTS_FILE names a file
# that keeps them instead (cluster-lib.sh sets one per cluster).
#
# DRAKE_PORT_RANGE=LO-HI narrows the choice to that range (inside the one
# above), so that clusters started at the same time (hack/e2e-parallel.sh)
# cannot pick the same port between choosing and binding it.
_used_ports=" "
free_port() {
  local p i lo=15000 hi eph
  eph=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  hi=$((eph - 1))
  [ "$hi" -gt $((lo + 1000)) ] || { lo=1025; hi=$((eph - 1)); }
  if [ -n "${DRAKE_PORT_RANGE:-}" ]; then
    local rlo=${DRAKE_PORT_RANGE%-*} rhi=${DRAKE_PORT_RANGE#*-}
    if ! [[ "$rlo" =~ ^[0-9]+$ && "$rhi" =~ ^[0-9]+$ ]] || [ "$rlo" -lt "$lo" ] ||
      [ "$rhi" -gt "$hi" ] || [ "$rlo" -ge "$rhi" ]; then
      echo "free_port: DRAKE_PORT_RANGE=$DRAKE_PORT_RANGE is not LO-HI within $lo-$hi" >&2
      return 1
    fi
    lo=$rlo hi=$rhi
  fi
  for i in $(seq 1 200); do
    p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
    case "$_used_ports" in *" $p "*) continue ;; esac
    if [ -n "${DRAKE_PORTS_FILE:-}" ] && grep -qx "$p" "$DRAKE_PORTS_FILE" 2>/dev/null; then
      continue
    fi
    if ! ss -Htan "( sport = :$p or dport = :$p )" | grep -q .; then
      _used_ports="$_used_ports$p "
      [ -z "${DRAKE_PORTS_FILE:-}" ] || echo "$p" >>"$DRAKE_PORTS_FILE"
      echo "$p"
      return 0
    fi
  done
  echo "free_port: no free port found below $eph" >&2
  return 1
}
