set datafile separator ','
set terminal pngcairo noenhanced size 1500,520 font ',10'
set output 'bench/results/placement/gpuspec25.png'
set multiplot layout 1,3 title 'placement study: gpuspec25 (10 seeds)'
set grid
set key bottom right
set xlabel 'GPU requests arrived (% of cluster GPUs)'
set title 'GPU allocation'
set ylabel 'allocated GPUs (% of cluster)'
set xrange [0:130]
set yrange [0:*]
plot 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'random' ? $3 : 1/0) with lines lw 1.5 lc rgb '#8c8c8c' title 'random', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'dotprod' ? $3 : 1/0) with lines lw 1.5 lc rgb '#2ca02c' title 'dotprod', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'clustering' ? $3 : 1/0) with lines lw 1.5 lc rgb '#9467bd' title 'clustering', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'packing' ? $3 : 1/0) with lines lw 1.5 lc rgb '#ff7f0e' title 'packing', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'bestfit' ? $3 : 1/0) with lines lw 1.5 lc rgb '#b8860b' title 'bestfit', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'fgd' ? $3 : 1/0) with lines lw 2.5 lc rgb '#1f77b4' title 'fgd', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'drake' ? $3 : 1/0) with lines lw 2.5 lc rgb '#d62728' title 'drake', x with lines dt 2 lc rgb 'gray' title 'arrived'
set title 'GPU allocation, from 80 % arrived'
set ylabel 'allocated GPUs (% of cluster)'
set xrange [80:130]
set yrange [*:*]
unset key
plot 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'random' ? $3 : 1/0) with lines lw 1.5 lc rgb '#8c8c8c' title 'random', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'dotprod' ? $3 : 1/0) with lines lw 1.5 lc rgb '#2ca02c' title 'dotprod', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'clustering' ? $3 : 1/0) with lines lw 1.5 lc rgb '#9467bd' title 'clustering', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'packing' ? $3 : 1/0) with lines lw 1.5 lc rgb '#ff7f0e' title 'packing', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'bestfit' ? $3 : 1/0) with lines lw 1.5 lc rgb '#b8860b' title 'bestfit', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'fgd' ? $3 : 1/0) with lines lw 2.5 lc rgb '#1f77b4' title 'fgd', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'drake' ? $3 : 1/0) with lines lw 2.5 lc rgb '#d62728' title 'drake'
set title 'fragmentation rate (fragment / idle GPU)'
set ylabel 'fragmentation rate (%)'
set xrange [0:130]
set yrange [0:*]
plot 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'random' ? $6 : 1/0) with lines lw 1.5 lc rgb '#8c8c8c' title 'random', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'dotprod' ? $6 : 1/0) with lines lw 1.5 lc rgb '#2ca02c' title 'dotprod', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'clustering' ? $6 : 1/0) with lines lw 1.5 lc rgb '#9467bd' title 'clustering', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'packing' ? $6 : 1/0) with lines lw 1.5 lc rgb '#ff7f0e' title 'packing', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'bestfit' ? $6 : 1/0) with lines lw 1.5 lc rgb '#b8860b' title 'bestfit', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'fgd' ? $6 : 1/0) with lines lw 2.5 lc rgb '#1f77b4' title 'fgd', 'bench/results/placement/gpuspec25.csv' using 2:(strcol(1) eq 'drake' ? $6 : 1/0) with lines lw 2.5 lc rgb '#d62728' title 'drake'
unset multiplot
