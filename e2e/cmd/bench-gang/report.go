package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"drake.invalid/e2e/internal/gangbench"
)

func ff(v float64, prec int) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func cell(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

var header = []string{"seed", "arm", "jobs", "pods", "gpus", "jobs_whole", "jobs_done", "makespan_s", "jobs_per_s",
	"ttw_p50_s", "ttw_p99_s", "partial_gpu_s", "partial_gpu_s_beyond_window", "longest_partial_s", "longest_partial_job",
	"deadlock", "jobs_never_whole", "api_writes", "api_writes_per_pod", "driver_runfor_patches", "writes_by_resource", "error"}

func (r armResult) row(seed string) []string {
	var by []string
	for k, v := range r.writesBy {
		if v != 0 {
			by = append(by, fmt.Sprintf("%s=%.0f", k, v))
		}
	}
	sort.Strings(by)
	return []string{seed, r.arm, strconv.Itoa(r.jobs), strconv.Itoa(r.pods), strconv.Itoa(r.gpus), strconv.Itoa(r.whole),
		strconv.Itoa(r.done), ff(r.makespan, 2), ff(r.jobsPerSecond, 3), ff(r.ttwP50, 2), ff(r.ttwP99, 2),
		ff(r.partialGPUs, 1), ff(r.partialLate, 1), ff(r.longest, 2), r.longestJob, strconv.FormatBool(r.deadlock),
		strconv.Itoa(r.stuck), ff(r.writes, 0), ff(r.writesPerPod, 2), ff(r.driverPatches, 0), strings.Join(by, " "), r.err}
}

// medianOf: the per-arm medians over seeds (NaN entries, such as the
// makespan of a deadlocked run, are left out; deadlocks are summed).
func medianOf(arm string, rs []armResult) armResult {
	m := armResult{arm: arm}
	var ms, jps, p50, p99, pg, pl, lo, wpp []float64
	for _, r := range rs {
		if r.arm != arm || r.err != "" {
			continue
		}
		ms, jps, p50, p99 = append(ms, r.makespan), append(jps, r.jobsPerSecond), append(p50, r.ttwP50), append(p99, r.ttwP99)
		pg, pl, lo, wpp = append(pg, r.partialGPUs), append(pl, r.partialLate), append(lo, r.longest), append(wpp, r.writesPerPod)
		m.jobs += r.jobs
		m.done += r.done
		m.whole += r.whole
		m.stuck += r.stuck
		m.pods += r.pods
		m.gpus += r.gpus
		if r.deadlock {
			m.deadlock = true
		}
	}
	m.makespan, m.jobsPerSecond, m.ttwP50, m.ttwP99 = gangbench.Median(ms), gangbench.Median(jps), gangbench.Median(p50), gangbench.Median(p99)
	m.partialGPUs, m.partialLate, m.longest, m.writesPerPod = gangbench.Median(pg), gangbench.Median(pl), gangbench.Median(lo), gangbench.Median(wpp)
	return m
}

func (b *bench) report(stamp string, rs []armResult, cost []costResult) {
	if err := os.MkdirAll(b.o.out, 0o755); err != nil {
		fail("%v", err)
	}
	base := filepath.Join(b.o.out, "bench-gang-"+stamp)
	if len(rs) > 0 {
		b.gangReport(base, rs)
	}
	if len(cost) > 0 {
		b.costReport(base+"-cost.csv", cost)
	}
}

// gangReport prints the contention arms' table and writes their CSV and PNG.
func (b *bench) gangReport(base string, rs []armResult) {
	deadlocks := map[string]int{}
	for _, r := range rs {
		if r.deadlock {
			deadlocks[r.arm]++
		}
	}
	fmt.Printf("\nbench-gang: %d nodes, %d GPUs, demand %.1fx, run %v-%v once whole, arrivals within %v, seeds %v\n",
		b.nodes, b.gpus, b.o.demand, b.o.runMin, b.o.runMax, b.o.window, b.o.seeds)
	f := "%-6s %-8s %5s %10s %7s %8s %8s %10s %10s %9s %9s %10s\n"
	fmt.Printf(f, "seed", "arm", "done", "makespan_s", "jobs/s", "ttw_p50", "ttw_p99", "partial_gs", ">window_gs", "longest_s", "deadlock", "writes/pod")
	line := func(seed string, r armResult, dl string) {
		fmt.Printf(f, seed, r.arm, fmt.Sprintf("%d/%d", r.done, r.jobs), cell(r.makespan, 1), cell(r.jobsPerSecond, 3),
			cell(r.ttwP50, 1), cell(r.ttwP99, 1), cell(r.partialGPUs, 0), cell(r.partialLate, 0), cell(r.longest, 2), dl,
			cell(r.writesPerPod, 2))
	}
	for _, r := range rs {
		if r.err != "" {
			fmt.Printf("%-6d %-8s ERROR: %s\n", r.seed, r.arm, r.err)
			continue
		}
		line(strconv.FormatUint(r.seed, 10), r, map[bool]string{true: "YES", false: "no"}[r.deadlock])
	}
	var meds []armResult
	for _, a := range b.o.arms {
		m := medianOf(a.Name, rs)
		meds = append(meds, m)
		line("median", m, fmt.Sprintf("%d of %d", deadlocks[a.Name], len(b.o.seeds)))
	}
	fmt.Println("(makespan: first arrival -> last job done; ttw: arrival -> whole gang; partial_gs: GPU-seconds held by")
	fmt.Printf(" partially bound gangs, >window_gs: of them, held later than %v into a partial interval; writes/pod: API\n", b.o.late)
	fmt.Println(" writes per pod, leases and node status left out, the driver's run-for annotations taken out)")
	verdict(meds)

	w, closeF := csvFile(base + ".csv")
	_ = w.Write(header)
	for _, r := range rs {
		_ = w.Write(r.row(strconv.FormatUint(r.seed, 10)))
	}
	for _, m := range meds {
		row := m.row("median")
		row[15] = strconv.Itoa(deadlocks[m.arm])
		_ = w.Write(row)
	}
	closeF()
	series := base + "-series.csv"
	w, closeF = csvFile(series)
	_ = w.Write([]string{"seed", "arm", "t_s", "gpus_busy", "gpus_held_by_partial", "jobs_waiting", "jobs_running", "jobs_done"})
	for _, r := range rs {
		for _, s := range r.series {
			_ = w.Write([]string{strconv.FormatUint(r.seed, 10), r.arm, ff(s.t, 1), strconv.FormatInt(s.busy, 10),
				strconv.FormatInt(s.held, 10), strconv.Itoa(s.waiting), strconv.Itoa(s.running), strconv.Itoa(s.ended)})
		}
	}
	closeF()
	w, closeF = csvFile(base + "-jobs.csv")
	_ = w.Write([]string{"seed", "arm", "job", "gpus", "pods", "submitted_s", "whole_s", "done_s", "partial_gpu_s", "longest_partial_s"})
	for _, r := range rs {
		for _, j := range r.perJob {
			_ = w.Write([]string{strconv.FormatUint(r.seed, 10), r.arm, j.name, strconv.Itoa(j.gpus), strconv.Itoa(j.pods),
				ff(j.submitted, 3), ff(j.whole, 3), ff(j.done, 3), ff(j.partialGPUs, 1), ff(j.longest, 3)})
		}
	}
	closeF()
	fmt.Printf("wrote %s.csv, %s, %s-jobs.csv\n", base, series, base)
	if err := b.plot(series, base+".png"); err != nil {
		fmt.Printf("plot: %v\n", err)
	} else {
		fmt.Printf("plot: %s.png\n", base)
	}
}

// verdict prints the targets against the medians.
func verdict(meds []armResult) {
	by := map[string]armResult{}
	for _, m := range meds {
		by[m.arm] = m
	}
	d, okD := by["drake"]
	t, okT := by["in-tree"]
	if !okD {
		return
	}
	fmt.Println()
	if okT {
		cmp := func(what string, dv, tv float64) {
			res := "no worse"
			if math.IsNaN(dv) || (!math.IsNaN(tv) && dv > tv) {
				res = "WORSE"
			}
			fmt.Printf("target: drake's %s no worse than in-tree's: %s vs %s -> %s\n", what, cell(dv, 1), cell(tv, 1), res)
		}
		cmp("median makespan (s)", d.makespan, t.makespan)
		cmp("median p99 arrival -> whole (s)", d.ttwP99, t.ttwP99)
		if t.ttwP50 < d.ttwP50 {
			fmt.Printf("in-tree wins the median p50 arrival -> whole: %.1f s vs drake's %.1f s\n", t.ttwP50, d.ttwP50)
		}
	}
	res := "met"
	if d.partialLate > 0 {
		res = "NOT met"
	}
	fmt.Printf("target: zero GPU-seconds held by drake's partial gangs beyond the window: median %.1f -> %s\n", d.partialLate, res)
}

func csvFile(path string) (*csv.Writer, func()) {
	w, closeF, err := gangbench.CSVFile(path)
	if err != nil {
		fail("%v", err)
	}
	return w, func() {
		if err := closeF(); err != nil {
			fail("%v", err)
		}
	}
}

// plot: one panel per arm (rows) and seed (columns).
func (b *bench) plot(series, png string) error {
	var panels []gangbench.Panel
	for _, a := range b.o.arms {
		for _, s := range b.o.seeds {
			panels = append(panels, gangbench.Panel{Arm: a.Name, Run: s, Title: fmt.Sprintf("%s, seed %d", a.Name, s)})
		}
	}
	return gangbench.PlotBusyHeld(series, png, len(b.o.arms), len(b.o.seeds), b.gpus, panels)
}

func (b *bench) costReport(path string, cost []costResult) {
	w, closeF := csvFile(path)
	_ = w.Write([]string{"round", "scheduler", "pods", "create_s", "bind_s", "server_s", "pods_per_s", "algorithm_ms_per_pod",
		"bind_ms", "drake_filter_ms", "drake_prioritize_ms", "drake_bind_ms", "drake_filter_calls", "drake_prioritize_calls", "drake_bind_calls", "error"})
	pps := map[string][]float64{}
	algo := map[string][]float64{}
	bind := map[string][]float64{}
	dk := map[string]map[string][]float64{}
	for _, c := range cost {
		_ = w.Write([]string{strconv.Itoa(c.round), c.scheduler, strconv.Itoa(c.Pods), ff(c.CreateSeconds, 2), ff(c.BindSeconds, 2),
			ff(c.ServerSeconds, 0), ff(c.PodsPerSecond, 1), ff(c.algoMs, 2), ff(c.bindMs, 2),
			ff(c.drakeMs["filter"], 3), ff(c.drakeMs["prioritize"], 3), ff(c.drakeMs["bind"], 3),
			ff(c.drakeCalls["filter"], 0), ff(c.drakeCalls["prioritize"], 0), ff(c.drakeCalls["bind"], 0), c.err})
		if c.err == "" {
			pps[c.scheduler] = append(pps[c.scheduler], c.PodsPerSecond)
			algo[c.scheduler] = append(algo[c.scheduler], c.algoMs)
			if c.bindMs >= 0 {
				bind[c.scheduler] = append(bind[c.scheduler], c.bindMs)
			}
			if dk[c.scheduler] == nil {
				dk[c.scheduler] = map[string][]float64{}
			}
			for v, ms := range c.drakeMs {
				dk[c.scheduler][v] = append(dk[c.scheduler][v], ms)
			}
		}
	}
	closeF()
	fmt.Printf("\ncost of being an extender (%d plain pods per phase, median of %d rounds, one scheduler running at a time)\n",
		b.o.costPods, b.o.costRounds)
	fmt.Printf("%-24s %8s %13s %12s | %-26s\n", "scheduler", "pods/s", "algorithm ms", "in-tree bind", "drake ms: filter prio bind")
	for _, s := range b.o.costScheds {
		d := dk[s]
		fmt.Printf("%-24s %8s %13s %12s | %16s %4s %4s\n", s, cell(gangbench.Median(pps[s]), 1), cell(gangbench.Median(algo[s]), 2),
			cell(gangbench.Median(bind[s]), 1), cell(gangbench.Median(d["filter"]), 2), cell(gangbench.Median(d["prioritize"]), 2), cell(gangbench.Median(d["bind"]), 1))
	}
	fmt.Println("(algorithm ms: kube-scheduler's mean scheduling-algorithm time per pod, the extender's filter and prioritize")
	fmt.Println(" round trips inside it; in-tree bind: its Bind extension point, - when the extender binds; drake ms: drake's")
	fmt.Println(" own mean handling time per verb from its /metrics)")
	ratio := func(a, c string) {
		if len(pps[a]) > 0 && len(pps[c]) > 0 {
			fmt.Printf("ratio %s / %s = %.2f\n", a, c, gangbench.Median(pps[a])/gangbench.Median(pps[c]))
		}
	}
	ratio("simple-scheduler", "trivial-scheduler")
	ratio("drake-filter-scheduler", "trivial-scheduler")
	ratio("simple-scheduler", "drake-filter-scheduler")
	ratio("drake-prio-scheduler", "drake-filter-scheduler")
	ratio("simple-scheduler", "drake-prio-scheduler")
	ratio("trivial-scheduler", "plain-scheduler")
	fmt.Println("(simple-scheduler = drake in simple mode, filter + bind + preempt; target for simple/trivial: 0.9)")
	fmt.Printf("wrote %s\n", path)
}
