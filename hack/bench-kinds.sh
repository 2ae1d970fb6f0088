#!/usr/bin/env bash
# bench-kinds.sh - the mixed-kind replay: each Pollux workload at load 1.0
# through drake sim's drake policy with every job a TFJob, every job a
# PyTorchJob, and half of each (--kind-mix, interleaved in trace order),
# each resize of a job costing its kind's measured cost (kind/registry.h:
# TFJob 1.9 s / 2.3 s, PyTorchJob 18.1 s / 6.5 s per shrink / grow); each
# mix once with drake's policy told the costs and once blind to them
# (--policy-costs=false: it believes every job pays the global 30 s, while
# the simulator still charges each its own); and once with no kind, as
# before jobs had one (every change 30 s, paid and believed). Writes one
# row per workload and arm to OUT/kinds.csv and prints the means over the
# workloads.
#
# usage: hack/bench-kinds.sh DRAKE_BIN TRACES_DIR OUT [extra drake sim flags...]
set -euo pipefail
drake=$1 traces=$2 out=$3
shift 3
mkdir -p "$out"
csv=$out/kinds.csv
arms=(
  "none|true|"
  "tfjob|true|tfjobs=1"
  "tfjob|false|tfjobs=1"
  "pytorchjob|true|pytorchjobs=1"
  "pytorchjob|false|pytorchjobs=1"
  "mix50|true|pytorchjobs=0.5,tfjobs=0.5"
  "mix50|false|pytorchjobs=0.5,tfjobs=0.5"
)
echo "workload,kinds,policy_costs,jobs,finished,mean_jct_s,p95_jct_s,makespan_s,resizes,scale_up,scale_down" >"$csv"
for w in "$traces"/pollux/workloads-1.0/workload-*.csv; do
  wl=$(basename "$w" .csv)
  for a in "${arms[@]}"; do
    IFS='|' read -r name pc mix <<<"$a"
    tag=$wl-$name-$pc
    "$drake" sim --trace "$w" --apps "$traces/pollux/apps" --policies drake --kind-mix "$mix" \
      --policy-costs="$pc" --out "$out" --tag "$tag" --plots=false --progress=false "$@" >/dev/null
    awk -F, -v wl="$wl" -v name="$name" -v pc="$pc" '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { printf "%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%s\n", wl, name, pc, $col["jobs"],
          $col["finished"], $col["mean_jct_s"], $col["p95_jct_s"], $col["makespan_s"],
          $col["scale_up"] + $col["scale_down"], $col["scale_up"], $col["scale_down"] }' \
      "$out/$tag-summary.csv" >>"$csv"
  done
done
echo "mean over $(ls "$traces"/pollux/workloads-1.0/workload-*.csv | wc -l) workloads (drake policy; $csv)"
printf '%-11s %-13s %10s %10s %9s\n' kinds "policy costs" "meanJCT" "p95JCT" "resizes"
awk -F, 'NR > 1 { k = $2 "|" $3; if (!(k in n)) order[m++] = k; n[k]++; jct[k] += $6; p95[k] += $7; rs[k] += $9 }
  END { for (i = 0; i < m; i++) { k = order[i]; split(k, a, "|");
          printf "%-11s %-13s %9.0fs %9.0fs %9.1f\n", a[1], a[1] == "none" ? "-" : a[2] == "true" ? "told" : "blind (30 s)",
            jct[k] / n[k], p95[k] / n[k], rs[k] / n[k] } }' "$csv"
