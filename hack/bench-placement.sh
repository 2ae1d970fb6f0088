#!/usr/bin/env bash
# bench-placement.sh - the placement study of Weng et al., "Beware of
# Fragmentation" (USENIX ATC'23) through `drake sim placement`: the 1,213
# GPU nodes and each of the seven task lists, 7 policies x 10 seeds (42..51).
# Writes OUT/TRACE.csv and OUT/TRACE.png per task list, OUT/summary.csv,
# and prints each policy's GPU allocation at 100 % and 130 % arrived next
# to the published means, then FGD and drake again with ties drawn at
# random (stock kube-scheduler), and drake once more with the typical
# shapes learnt as the tasks arrive (--shapes learnt, as drake serve
# --prioritize runs it; OUT/TRACE-learnt.csv), beside the main runs.
#
# usage: hack/bench-placement.sh DRAKE_BIN TRACES_DIR OUT [extra drake sim placement flags...]
set -euo pipefail
drake=$1 traces=$2 out=$3
shift 3
mkdir -p "$out"
# A copy of the binary, so a rebuild during the study cannot swap it mid-way.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$drake" "$tmp/drake"
drake=$tmp/drake
nodes=$traces/alibaba2023_openb_node_list_gpu_node.csv
lists=(default gpushare40 gpushare100 multigpu50 gpuspec10 gpuspec20 gpuspec25)

# Published means over 10 seeds, allocation % at 100 % / 130 % arrived
# (the paper's table of results): trace policy a100 a130.
published="
default random 86.30 87.47
default dotprod 90.62 90.85
default clustering 91.65 91.88
default packing 91.78 92.00
default bestfit 92.86 93.08
default fgd 95.23 95.39
gpushare40 random 84.86 86.00
gpushare40 dotprod 89.30 89.56
gpushare40 clustering 89.76 90.02
gpushare40 packing 89.77 90.03
gpushare40 bestfit 91.44 91.69
gpushare40 fgd 93.96 94.15
gpushare100 random 78.90 79.44
gpushare100 dotprod 81.98 82.42
gpushare100 clustering 82.22 82.65
gpushare100 packing 82.13 82.57
gpushare100 bestfit 84.62 85.01
gpushare100 fgd 86.64 86.90
multigpu50 random 81.28 90.28
multigpu50 dotprod 94.73 94.85
multigpu50 clustering 95.69 95.81
multigpu50 packing 96.06 96.18
multigpu50 bestfit 95.62 95.74
multigpu50 fgd 97.09 97.18
gpuspec10 random 86.26 87.43
gpuspec10 dotprod 90.17 90.39
gpuspec10 clustering 91.96 92.18
gpuspec10 packing 92.24 92.46
gpuspec10 bestfit 93.10 93.31
gpuspec10 fgd 94.66 94.95
gpuspec20 random 85.90 87.24
gpuspec20 dotprod 88.29 89.97
gpuspec20 clustering 89.11 92.24
gpuspec20 packing 89.28 92.94
gpuspec20 bestfit 88.46 93.30
gpuspec20 fgd 94.66 94.84
gpuspec25 random 85.42 86.94
gpuspec25 dotprod 85.44 89.63
gpuspec25 clustering 86.41 92.08
gpuspec25 packing 86.77 92.98
gpuspec25 bestfit 85.67 93.23
gpuspec25 fgd 93.91 94.74
"

start=$(date +%s)
# drake with learnt shapes runs beside the rest (its own output files).
(
  for t in "${lists[@]}"; do
    "$drake" sim placement --nodes "$nodes" --tasks "$traces/alibaba2023_openb_pod_list_$t.csv" \
      --policies drake --shapes learnt --csv "$out/$t-learnt.csv" --progress=false "$@" \
      >"$out/$t-learnt.txt"
  done
) &
learnt=$!
for t in "${lists[@]}"; do
  echo "== $t: drake sim placement --tasks alibaba2023_openb_pod_list_$t.csv" >&2
  "$drake" sim placement --nodes "$nodes" --tasks "$traces/alibaba2023_openb_pod_list_$t.csv" \
    --csv "$out/$t.csv" --png "$out/$t.png" --title "placement study: $t (10 seeds)" \
    --progress=false "$@" >"$out/$t.txt"
done
for t in "${lists[@]}"; do
  echo "== $t, ties drawn at random: fgd, drake" >&2
  "$drake" sim placement --nodes "$nodes" --tasks "$traces/alibaba2023_openb_pod_list_$t.csv" \
    --policies fgd,drake --ties random --csv "$out/$t-ties-random.csv" --progress=false "$@" \
    >"$out/$t-ties-random.txt"
done
wait "$learnt"
secs=$(($(date +%s) - start))

# One row per trace and policy: measured and published allocation, the
# seeds' range and the GPUs left unallocated at 130 %, and the
# fragmentation rate, from each trace's curves CSV.
gpus=$(awk -F, 'NR > 1 { s += $4 } END { print s }' "$nodes")
awk -F, -v pub="$published" -v lists="${lists[*]}" -v out="$out" -v gpus="$gpus" '
  BEGIN {
    n = split(pub, lines, "\n")
    for (i = 1; i <= n; i++) {
      split(lines[i], f, " ")
      if (f[1] != "") { p100[f[1] "," f[2]] = f[3]; p130[f[1] "," f[2]] = f[4] }
    }
    nt = split(lists, ts, " ")
    print "trace,policy,alloc_100,alloc_130,published_100,published_130,delta_100,delta_130,frag_rate_100,frag_rate_130,alloc_130_ties_random,alloc_130_min,alloc_130_max,unallocated_gpus_130,alloc_100_min,learnt_100,learnt_130,learnt_100_min,learnt_130_min"
    for (k = 1; k <= nt; k++) {
      t = ts[k]; delete a100; delete a130; delete f100; delete f130; delete r130; delete lo; delete hi; delete lo100; np = 0
      l100 = l130 = ll100 = ll130 = ""
      file = out "/" t ".csv"
      while ((getline line < file) > 0) {
        split(line, c, ",")
        if (c[1] == "policy") continue
        if (!(c[1] in seen)) { seen[c[1]] = 1; order[++np] = c[1] }
        if (c[2] == 100) { a100[c[1]] = c[3]; f100[c[1]] = c[6]; lo100[c[1]] = c[4] }
        if (c[2] == 130) { a130[c[1]] = c[3]; f130[c[1]] = c[6]; lo[c[1]] = c[4]; hi[c[1]] = c[5] }
      }
      close(file)
      file = out "/" t "-learnt.csv"
      while ((getline line < file) > 0) {
        split(line, c, ",")
        if (c[1] != "drake") continue
        if (c[2] == 100) { l100 = sprintf("%.2f", c[3]); ll100 = sprintf("%.2f", c[4]) }
        if (c[2] == 130) { l130 = sprintf("%.2f", c[3]); ll130 = sprintf("%.2f", c[4]) }
      }
      close(file)
      file = out "/" t "-ties-random.csv"
      while ((getline line < file) > 0) {
        split(line, c, ",")
        if (c[2] == 130) r130[c[1]] = c[3]
      }
      close(file)
      for (i = 1; i <= np; i++) {
        p = order[i]; key = t "," p
        d100 = (key in p100) ? sprintf("%+.2f", a100[p] - p100[key]) : ""
        d130 = (key in p130) ? sprintf("%+.2f", a130[p] - p130[key]) : ""
        d = p == "drake"
        printf "%s,%s,%.2f,%.2f,%s,%s,%s,%s,%.2f,%.2f,%s,%.2f,%.2f,%.0f,%.2f,%s,%s,%s,%s\n", t, p, a100[p],
          a130[p], (key in p100) ? p100[key] : "", (key in p130) ? p130[key] : "", d100, d130,
          f100[p], f130[p], (p in r130) ? sprintf("%.2f", r130[p]) : "", lo[p], hi[p],
          (100 - a130[p]) * gpus / 100, lo100[p], d ? l100 : "", d ? l130 : "", d ? ll100 : "",
          d ? ll130 : ""
      }
      delete seen
    }
  }' >"$out/summary.csv"

echo
echo "GPU allocation, % of the cluster's $gpus GPUs, mean of 10 seeds, at 100 % and 130 % of them"
echo "arrived; published: Weng et al. ATC'23; delta: measured - published, points"
printf '%-12s %-11s %8s %8s %10s %10s %8s %8s %9s\n' trace policy "@100" "@130" "pub@100" "pub@130" \
  "d@100" "d@130" "frag@130"
awk -F, 'NR > 1 {
  printf "%-12s %-11s %8.2f %8.2f %10s %10s %8s %8s %8.2f%%\n", $1, $2, $3, $4,
    $5 == "" ? "-" : $5, $6 == "" ? "-" : $6, $7 == "" ? "-" : $7, $8 == "" ? "-" : $8, $10
}' "$out/summary.csv"

echo
echo "checks: FGD and best fit within 0.5 points of the published means; drake, with the list's"
echo "shapes and with learnt ones, at or above FGD's published mean at 100 % and 130 % arrived"
echo "and its worst seed at or above FGD's mean (published and simulated, the higher)"
awk -F, 'NR > 1 {
  if ($2 == "fgd" || $2 == "bestfit")
    for (i = 7; i <= 8; i++) {
      d = $i + 0; if (d < 0) d = -d
      printf "  %-12s %-8s %s %+.2f  %s\n", $1, $2, (i == 7 ? "@100" : "@130"), $i, (d <= 0.5 ? "ok" : "OFF")
    }
  if ($2 == "fgd") { f100[$1] = $3; f130[$1] = $4; p100[$1] = $5; p130[$1] = $6; fu[$1] = $14; rf[$1] = $11 }
  if ($2 == "drake") {
    d100[$1] = $3; d130[$1] = $4; m100[$1] = $15; m130[$1] = $12; du[$1] = $14; rd[$1] = $11
    l100[$1] = $16; l130[$1] = $17; lm100[$1] = $18; lm130[$1] = $19
  }
  if (!($1 in seen)) { seen[$1] = 1; ord[++n] = $1 }
}
function verdict(mean, worst, pub, sim) {
  bar = pub > sim ? pub : sim
  return (mean + 0 >= pub + 0 && worst + 0 >= bar + 0) ? "ok" : "MISSED"
}
END {
  for (i = 1; i <= n; i++) {
    t = ord[i]
    if (!((t in f100) && (t in d100))) continue
    printf "  %-12s @100 drake %.2f (worst %.2f), learnt %s (worst %s) vs fgd %.2f, published %s: %s, learnt %s\n",
      t, d100[t], m100[t], l100[t], lm100[t], f100[t], p100[t], verdict(d100[t], m100[t], p100[t], f100[t]),
      verdict(l100[t], lm100[t], p100[t], f100[t])
    printf "  %-12s @130 drake %.2f (worst %.2f), learnt %s (worst %s) vs fgd %.2f, published %s: %s, learnt %s; unallocated GPUs %s vs %s; ties drawn at random: %s vs %s\n",
      t, d130[t], m130[t], l130[t], lm130[t], f130[t], p130[t], verdict(d130[t], m130[t], p130[t], f130[t]),
      verdict(l130[t], lm130[t], p130[t], f130[t]), du[t], fu[t], rd[t], rf[t]
  }
}' "$out/summary.csv"
echo
echo "study: $secs s on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'))"
echo "CSVs and plots: $out/"
