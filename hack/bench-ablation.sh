#!/usr/bin/env bash
# bench-ablation.sh - what each of drake's rules is worth: Pollux's
# workloads 1-6 at every load (0.5, 1.0, 1.5, 2.0) through drake sim's
# drake policy with its defaults, and again with one rule switched off at a
# time, everything else at its default:
#   victim-newest     the newest job gives workers first (DRAGON's order),
#                     not the one with most GPU-seconds expected left
#   victim-service    the job with most attained service gives first
#                     (Tiresias' order), its progress not read
#   no-threshold      --service-threshold 0: a running job lends only the
#                     workers it holds beyond its asked size, however long
#                     it has run
#   no-narrow         --start-narrow=false: a new job waits for the workers
#                     it asks for until it starves
#   no-starve-shrink  --starve-after 100000h: no running job gives workers
#                     to a job that waited (rule 2)
#   no-growth         --idle-after 100000h: no job grows past the size it
#                     asks for (a job below it still grows back, rule 4a)
#   rigid             --pollux-rigid: every job runs at its tuned size, no
#                     elasticity at all
#   no-locality       --locality-penalty 0: the speed model ignores spread
#   no-lonely-first   --lonely-first=false: workers off their job's home
#                     node (worker 0's: Pollux's jobs have no PS) are not
#                     given first
#   no-backfill       --backfill=false: no job starts behind one that does
#                     not fit
#   queue-fifo        --queue-order fifo: waiting jobs in submission order,
#                     not the set that fills the free GPUs best first
#   queue-narrow      --queue-order narrow: fewest GPUs first (the other
#                     order)
# Writes one row per load, workload and arm to OUT/ablation.csv (mean and
# p95 JCT, longest wait from submission to start, resizes) and prints the
# mean over the six workloads of each load, and each arm's ratio to the
# defaults.
#
# usage: hack/bench-ablation.sh DRAKE_BIN TRACES_DIR OUT [extra drake sim flags...]
set -euo pipefail
drake=$1 traces=$2 out=$3
shift 3
mkdir -p "$out"
csv=$out/ablation.csv
arms=(
  "default|"
  "victim-newest|--victim-order newest"
  "victim-service|--victim-order most-service"
  "no-threshold|--service-threshold 0"
  "no-narrow|--start-narrow=false"
  "no-starve-shrink|--starve-after 100000h"
  "no-growth|--idle-after 100000h"
  "rigid|--pollux-rigid"
  "no-locality|--locality-penalty 0"
  "no-lonely-first|--lonely-first=false"
  "no-backfill|--backfill=false"
  "queue-fifo|--queue-order fifo"
  "queue-narrow|--queue-order narrow"
)
loads=(0.5 1.0 1.5 2.0)
echo "load,workload,arm,jobs,finished,mean_jct_s,p95_jct_s,longest_wait_s,resizes" >"$csv"
n=0 total=$((${#loads[@]} * 6 * ${#arms[@]}))
for l in "${loads[@]}"; do
  for w in "$traces"/pollux/workloads-"$l"/workload-*.csv; do
    wl=$(basename "$w" .csv)
    for a in "${arms[@]}"; do
      IFS='|' read -r name flags <<<"$a"
      tag=$l-$wl-$name
      # shellcheck disable=SC2086
      "$drake" sim --trace "$w" --apps "$traces/pollux/apps" --policies drake $flags \
        --out "$out" --tag "$tag" --plots=false --progress=false "$@" >/dev/null
      wait_s=$(awk -F, 'NR > 1 && $4 != "" { q = $4 - $3; if (q > m) m = q } END { printf "%.1f", m + 0 }' \
        "$out/$tag-jobs-drake.csv")
      awk -F, -v l="$l" -v wl="$wl" -v name="$name" -v q="$wait_s" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { printf "%s,%s,%s,%s,%s,%s,%s,%s,%d\n", l, wl, name, $col["jobs"], $col["finished"],
            $col["mean_jct_s"], $col["p95_jct_s"], q, $col["scale_up"] + $col["scale_down"] }' \
        "$out/$tag-summary.csv" >>"$csv"
      rm -f "$out/$tag"-*.csv
      n=$((n + 1))
    done
  done
  echo "bench-ablation: load $l done ($n of $total runs)" >&2
done
echo "mean over the 6 workloads of each load, hours (ratio to the defaults); $csv"
awk -F, '
  NR > 1 { k = $3; if (!(k in seen)) { seen[k] = 1; order[m++] = k }
           L[$1] = 1; jct[k, $1] += $6 / 3600; p95[k, $1] += $7 / 3600; cnt[k, $1]++
           if ($8 / 3600 > wait[k, $1]) wait[k, $1] = $8 / 3600 }
  END {
    nl = 0; for (l in L) ls[nl++] = l
    for (i = 0; i < nl; i++) for (j = i + 1; j < nl; j++) if (ls[j] < ls[i]) { t = ls[i]; ls[i] = ls[j]; ls[j] = t }
    printf "%-17s", "arm"; for (i = 0; i < nl; i++) printf " | load %-23s", ls[i]; printf "\n"
    printf "%-17s", ""; for (i = 0; i < nl; i++) printf " | %-28s", "mean (ratio) p95 wait"; printf "\n"
    for (a = 0; a < m; a++) {
      k = order[a]; printf "%-17s", k
      for (i = 0; i < nl; i++) {
        l = ls[i]; mj = jct[k, l] / cnt[k, l]; d = jct["default", l] / cnt["default", l]
        printf " | %5.2f (%4.2f) %5.2f %5.2f", mj, mj / d, p95[k, l] / cnt[k, l], wait[k, l]
      }
      printf "\n"
    }
  }' "$csv"
