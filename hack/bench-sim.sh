#!/usr/bin/env bash
# bench-sim.sh - replays the project's traces through drake sim and prints,
# per row, drake / dragon for mean JCT, p95 JCT and makespan, side by side
# from one run (the policy table). Every policy's full table, CSVs and
# plots land under OUT (bench/results/sim by default), one tag per row.
# Then drake again on three rows with learning curves, with
# migrate/'s overload policy, and with both, against drake without (the
# first section's drake), next to SpeCon's reported gains. Between the
# two, drake / dragon over stretches of 40 to 1,000 consecutive ITP jobs:
# how long a stretch of the trace drake's lead over DRAGON needs.
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

# ---- how long a stretch of the trace drake's lead needs ----
# Stretches of N consecutive ITP jobs at their recorded arrivals, each
# replayed alone on an empty cluster of itp-ts1's shape: drake / dragon
# mean JCT per stretch, then its median, least and largest over the
# stretches, with the run-time (JCT - queueing) and queueing ratios of
# the median stretch (the lower middle one of an even count). Stretches
# start every max(N, 150) jobs.
horizons=(40 100 300 1000)
total=$(($(wc -l <"$itp") - 1))
mkdir -p "$out/horizon"
: >"$out/horizon.csv.tmp"
for n in "${horizons[@]}"; do
  step=$((n > 150 ? n : 150))
  echo "== horizon $n: drake sim --trace $itp --first-job S --max-jobs $n, S = 0, $step, ... (< $((total - n + 1)))"
  for ((s = 0; s + n <= total; s += step)); do
    # shellcheck disable=SC2086
    "$drake" sim --trace "$itp" --first-job "$s" --max-jobs "$n" --policies drake,dragon \
      --out "$out/horizon" --tag "h$n-$s" --plots=false --progress=false "$@" >/dev/null
    awk -F, -v n="$n" -v s="$s" '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { m[$1] = $col["mean_jct_s"]; q[$1] = $col["mean_queue_s"] }
      END {
        if (!("drake" in m) || !("dragon" in m) || m["dragon"] <= q["dragon"]) { print "horizon " n " from " s ": missing rows" > "/dev/stderr"; exit 1 }
        printf "%d,%d,%.1f,%.1f,%.1f,%.1f,%.4f,%.4f,%s\n", n, s, m["drake"], m["dragon"], q["drake"], q["dragon"],
          m["drake"] / m["dragon"], (m["drake"] - q["drake"]) / (m["dragon"] - q["dragon"]),
          (q["dragon"] > 0 ? sprintf("%.4f", q["drake"] / q["dragon"]) : "-")
      }' "$out/horizon/h$n-$s-summary.csv" >>"$out/horizon.csv.tmp"
  done
done
{
  echo "jobs,first_job,drake_mean_jct_s,dragon_mean_jct_s,drake_mean_queue_s,dragon_mean_queue_s,mean_jct_ratio,run_ratio,queue_ratio"
  cat "$out/horizon.csv.tmp"
} >"$out/horizon.csv"
rm -f "$out/horizon.csv.tmp"

echo
echo "drake / dragon mean JCT over stretches of N consecutive ITP jobs (recorded arrivals, each"
echo "stretch alone on an empty cluster); the whole trace is row itp-ts1 above. run: mean"
echo "(JCT - queueing) ratio, queue: mean queueing ratio, both of the median stretch (the lower of"
echo "the middle two when their count is even). CSV: $out/horizon.csv"
printf '%6s %8s %8s %8s %8s %8s %8s %8s\n' jobs stretches median least largest "<=0.9" run queue
for n in "${horizons[@]}"; do
  awk -F, -v n="$n" '$1 == n { print $7 "," $8 "," $9 }' "$out/horizon.csv" | sort -t, -k1,1g |
    awk -F, -v n="$n" '
      { r[NR] = $1; run[NR] = $2; q[NR] = $3; if ($1 <= 0.9) le++ }
      END {
        mid = int((NR + 1) / 2)
        printf "%6d %8d %8.3f %8.3f %8.3f %8d %8.3f %8s\n", n, NR, r[mid], r[1], r[NR], le, run[mid], q[mid]
      }'
done

# ---- progress and migration ----
mig_rows=(gang53 itp-ts1 itp-ts0.5)
variants=(
  "curves|--learning-curves"
  "migrate|--migrate"
  "curves+migrate|--learning-curves --migrate"
)
for tag in "${mig_rows[@]}"; do
  for r in "${rows[@]}"; do [ "${r%%|*}" = "$tag" ] && args=${r#*|}; done
  for v in "${variants[@]}"; do
    name=${v%%|*} flags=${v#*|}
    echo "== $tag $name: drake sim $args $flags"
    # shellcheck disable=SC2086
    "$drake" sim $args --policies drake $flags --out "$out" --tag "$tag-$name" --plots=false \
      --progress=false "$@" >/dev/null
  done
done

echo
echo "drake with learning curves (--learning-curves) and migrate/'s overload policy (--migrate),"
echo "against drake without them (off = the drake rows above); changes vs off, negative is better"
printf '%-10s %-15s %9s %9s %9s %6s %10s %10s %8s %8s %9s %9s\n' row variant meanJCT p95JCT \
  makespan moves "JCT-early" "JCT-late" "d-mean" "d-p95" "d-makesp" "best-job"
for tag in "${mig_rows[@]}"; do
  for name in off curves migrate curves+migrate; do
    if [ "$name" = off ]; then sum=$out/$tag-summary.csv jobs=$out/$tag-jobs-drake.csv
    else sum=$out/$tag-$name-summary.csv jobs=$out/$tag-$name-jobs-drake.csv; fi
    awk -F, -v tag="$tag" -v name="$name" -v offsum="$out/$tag-summary.csv" \
        -v offjobs="$out/$tag-jobs-drake.csv" -v jobs="$jobs" '
      function fmt(s) { return s >= 172800 ? sprintf("%.1fd", s / 86400) : s >= 7200 ? sprintf("%.1fh", s / 3600) : sprintf("%.0fs", s) }
      function pct(a, b) { return b > 0 ? sprintf("%+.1f%%", 100 * (a / b - 1)) : "-" }
      function drake_row(file, v,   line, n, f, i, col) {
        while ((getline line < file) > 0) {
          n = split(line, f, ",")
          if (f[1] == "policy") { for (i = 1; i <= n; i++) col[f[i]] = i; continue }
          if (f[1] == "drake") for (k in col) v[k] = f[col[k]]
        }
        close(file)
      }
      function jcts(file, j,   line, f) {
        while ((getline line < file) > 0) { split(line, f, ","); if (f[1] != "job" && f[6] >= 0) j[f[1]] = f[6] }
        close(file)
      }
      BEGIN {
        drake_row(offsum, o); drake_row(ARGV[1], v); ARGV[1] = ""
        if (!("mean_jct_s" in v)) { print tag " " name ": missing drake row"; exit 1 }
        best = "-"
        if (name != "off") {
          jcts(offjobs, a); jcts(jobs, b); m = 0
          for (k in a) if ((k in b) && a[k] > 0 && b[k] / a[k] - 1 < m) m = b[k] / a[k] - 1
          best = sprintf("%+.1f%%", 100 * m)
        }
        printf "%-10s %-15s %9s %9s %9s %6d %10s %10s %8s %8s %9s %9s\n", tag, name,
          fmt(v["mean_jct_s"]), fmt(v["p95_jct_s"]), fmt(v["makespan_s"]), v["moves"],
          fmt(v["mean_jct_early_s"]), fmt(v["mean_jct_late_s"]),
          name == "off" ? "-" : pct(v["mean_jct_s"], o["mean_jct_s"]),
          name == "off" ? "-" : pct(v["p95_jct_s"], o["p95_jct_s"]),
          name == "off" ? "-" : pct(v["makespan_s"], o["makespan_s"]), best
      }' "$sum"
  done
done
echo "JCT-early / JCT-late: mean JCT of the jobs whose learning curve converges early / keeps"
echo "improving (the same jobs in every variant); best-job: the largest JCT cut of one job."
echo "SpeCon's reported gains, on its own testbed (short-lived jobs, CloudLab), NOT reproduced"
echo "here: mean JCT -14.8 %, makespan -24.7 %, one job up to -41.5 % (the SpeCon paper's evaluation)."
