#!/usr/bin/env bash
# bench-sim.sh - replays the project's traces through drake sim and prints,
# per row, drake / dragon for mean JCT, p95 JCT and makespan, side by side
# from one run (issue 11's table). Every policy's full table, CSVs and
# plots land under OUT (bench/results/sim by default), one tag per row.
#
# usage: hack/bench-sim.sh DRAKE_BIN TRACES_DIR OUT [extra drake sim flags...]
set -euo pipefail
drake=$1 traces=$2 out=$3
shift 3
mkdir -p "$out"

itp=$traces/ms_itp_cluster03.csv
rows=(
  "gang53|--trace $traces/knavigator_gang53.csv"
  "itp-ts0.5|--trace $itp --time-scale 0.5"
  "itp-ts1|--trace $itp --time-scale 1"
  "itp-ts2|--trace $itp --time-scale 2"
  "itp-alibaba|--trace $itp --nodes-file $traces/alibaba2023_openb_nodes.csv --time-scale 0.1"
)

for r in "${rows[@]}"; do
  tag=${r%%|*} args=${r#*|}
  echo "== $tag: drake sim $args"
  # shellcheck disable=SC2086
  "$drake" sim $args --out "$out" --tag "$tag" --progress=false "$@"
done

echo
echo "drake / dragon (lower is better; targets: mean JCT <= 0.90, makespan <= 1.00)"
printf '%-12s %10s %10s %10s %10s %10s %10s  %s\n' row "meanJCT" "dragon" "ratio" "p95JCT" "ratio" "makespan" "targets"
for r in "${rows[@]}"; do
  tag=${r%%|*}
  awk -F, -v tag="$tag" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { mean[$1] = $col["mean_jct_s"]; p95[$1] = $col["p95_jct_s"]; mk[$1] = $col["makespan_s"] }
    END {
      if (!("drake" in mean) || !("dragon" in mean) || mean["dragon"] == 0) { print tag ": missing rows"; exit 1 }
      rm = mean["drake"] / mean["dragon"]; rp = p95["drake"] / p95["dragon"]; rk = mk["drake"] / mk["dragon"]
      ok = (rm <= 0.90 ? "mean ok" : "mean MISSED") ", " (rk <= 1.0 ? "makespan ok" : "makespan MISSED")
      printf "%-12s %9.0fs %9.0fs %10.3f %9.0fs %10.3f %10.4f  %s\n", tag, mean["drake"], mean["dragon"], rm, p95["drake"], rp, rk, ok
    }' "$out/$tag-summary.csv"
done
