package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"drake.invalid/e2e/internal/gangbench"
)

func contextTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func cell(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func (r armResult) line() string {
	if r.err != "" {
		return "ERROR: " + r.err
	}
	dl := ""
	if r.deadlock {
		dl = ", DEADLOCK"
	}
	return fmt.Sprintf("%d/%d jobs done, JCT mean %s s median %s s p95 %s s, queue %s s, makespan %s s, util %s %%, partial %.0f GPU-s (%.0f beyond window), %d pauses%s",
		r.done, r.jobs, cell(r.meanJCT, 1), cell(r.medJCT, 1), cell(r.p95JCT, 1), cell(r.meanQueue, 1), cell(r.makespan, 1),
		cell(100*r.util, 1), r.partialGPUs, r.partialLate, r.pauses, dl)
}

func (r armResult) replayLine() string {
	if r.replayErr != nil {
		return "decision log: " + r.replayErr.Error()
	}
	return fmt.Sprintf("decision log: %d rounds replayed by drake sim --replay, %d differing", r.replayed, r.differing)
}

// the figures of the table: name, the cluster's value, drake sim's
// summary.csv column
type figure struct {
	name, simCol string
	get          func(armResult) float64
	scale        float64 // sim value x scale = the cluster's unit
	prec         int
}

var figures = []figure{
	{"mean JCT s", "mean_jct_s", func(r armResult) float64 { return r.meanJCT }, 1, 1},
	{"median JCT s", "median_jct_s", func(r armResult) float64 { return r.medJCT }, 1, 1},
	{"p95 JCT s", "p95_jct_s", func(r armResult) float64 { return r.p95JCT }, 1, 1},
	{"mean queue s", "mean_queue_s", func(r armResult) float64 { return r.meanQueue }, 1, 1},
	{"makespan s", "makespan_s", func(r armResult) float64 { return r.makespan }, 1, 1},
	{"GPU util %", "gpu_util", func(r armResult) float64 { return 100 * r.util }, 100, 1},
	{"partial GPU-s", "held_gpu_hours", func(r armResult) float64 { return r.partialGPUs }, 3600, 0},
}

// simPolicy: drake sim's policy beside each arm (in-tree has none: the
// simulator does not model kube-scheduler's gang scheduling).
var simPolicy = map[string]string{"drake": "drake", "dragon": "dragon", "tiresias": "tiresias", "no-gang": "default"}

// simPolicies: the drake sim policies predicted for a trace kind (Tiresias
// is the artifact's, on Pollux workloads).
func simPolicies(kind string) []string {
	if kind == "pollux" {
		return []string{"drake", "dragon", "tiresias", "default"}
	}
	return []string{"drake", "dragon", "default"}
}

// medianOf: an arm's medians over runs.
func medianOf(arm string, rs []armResult) armResult {
	m := armResult{arm: arm}
	var v [9][]float64
	for _, r := range rs {
		if r.arm != arm {
			continue
		}
		if r.err != "" { // an arm cut short: its jobs count, its figures do not
			m.jobs += r.jobs
			m.done += r.done
			continue
		}
		for i, x := range []float64{r.meanJCT, r.medJCT, r.p95JCT, r.meanQueue, r.makespan, r.util, r.partialGPUs, r.partialLate, float64(r.pauses)} {
			v[i] = append(v[i], x)
		}
		m.jobs += r.jobs
		m.done += r.done
		m.deadlock = m.deadlock || r.deadlock
	}
	m.meanJCT, m.medJCT, m.p95JCT = gangbench.Median(v[0]), gangbench.Median(v[1]), gangbench.Median(v[2])
	m.meanQueue, m.makespan, m.util = gangbench.Median(v[3]), gangbench.Median(v[4]), gangbench.Median(v[5])
	m.partialGPUs, m.partialLate = gangbench.Median(v[6]), gangbench.Median(v[7])
	m.pauses = int(gangbench.Median(v[8]))
	return m
}

func (b *bench) report(base string, w window, rs []armResult, pred map[string]simFigures) {
	fmt.Printf("\nbench-replay: window of %d jobs (from job %d), compression %.1f, %d x %d-GPU nodes, %d run(s); cluster / drake sim\n",
		w.n, w.start, w.compression, b.shape.nodes, b.shape.gpus, b.o.runs)
	hdr := fmt.Sprintf("%-8s %-8s %6s", "arm", "sim", "done")
	for _, f := range figures {
		hdr += fmt.Sprintf(" %22s", f.name)
	}
	fmt.Println(hdr)
	var meds []armResult
	for _, a := range b.o.arms {
		m := medianOf(a.Name, rs)
		meds = append(meds, m)
		sp := simPolicy[a.Name]
		line := fmt.Sprintf("%-8s %-8s %6s", a.Name, map[bool]string{true: sp, false: "-"}[sp != ""], fmt.Sprintf("%d/%d", m.done, m.jobs))
		for _, f := range figures {
			c := f.get(m)
			s := math.NaN()
			if p, ok := pred[sp]; ok && p["finished"] == p["jobs"] {
				if v, ok := p[f.simCol]; ok {
					s = v * f.scale
				}
			}
			ratio := "-"
			if !math.IsNaN(c) && !math.IsNaN(s) && s > 0 {
				ratio = fmt.Sprintf("%.2f", c/s)
			}
			line += fmt.Sprintf(" %22s", fmt.Sprintf("%s/%s=%s", cell(c, f.prec), cell(s, f.prec), ratio))
		}
		fmt.Println(line)
	}
	for _, p := range []string{"drake", "dragon", "tiresias", "default"} {
		if x, ok := pred[p]; ok && x["finished"] < x["jobs"] {
			fmt.Printf("drake sim %-7s %.0f of %.0f jobs done: deadlock (%.0f jobs hold GPUs of partial gangs)\n", p, x["finished"], x["jobs"], x["deadlock_jobs"])
		} else if ok {
			fmt.Printf("drake sim %-7s mean JCT %s s, median %s s, p95 %s s, queue %s s, makespan %s s, util %s %%\n", p,
				cell(x["mean_jct_s"], 1), cell(x["median_jct_s"], 1), cell(x["p95_jct_s"], 1), cell(x["mean_queue_s"], 1),
				cell(x["makespan_s"], 1), cell(100*x["gpu_util"], 1))
		}
	}
	ratios(os.Stdout, meds, pred)
	fmt.Println("(JCT: submission -> every pod ended, over the jobs done; queue: submission -> the job can train (PS and min-instances workers,")
	fmt.Println(" every worker where rigid, running); makespan: first submission -> last job done; util: GPU-seconds of")
	fmt.Println(" jobs that can train / (GPUs x makespan); partial GPU-s: held by partially bound gangs (sim: held_gpu_hours);")
	fmt.Println(" in-tree and volcano have no simulator counterpart; - where the sim deadlocked or the arm was cut short)")
	b.writeCSVs(base, rs, meds, pred)
}

// The benchmark's targets (BENCHMARKS.md): drake's mean JCT against an
// arm's on the cluster (arms not named have none), and how far the
// cluster's drake / dragon may be from the simulator's.
var jctTarget = map[string]float64{"in-tree": 0.9, "in-tree-packed": 0.9, "dragon": 0.85}

const fidelityTarget = 0.10

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "missed"
}

// ratios prints drake's mean JCT over each other arm's on the cluster
// (the medians of the runs) with its target, and beside it the
// simulator's ratio on the same window and the cluster's over it.
func ratios(w io.Writer, meds []armResult, pred map[string]simFigures) {
	by := map[string]armResult{}
	for _, m := range meds {
		by[m.arm] = m
	}
	d, ok := by["drake"]
	if !ok || d.done < d.jobs {
		return
	}
	for _, o := range []string{"in-tree", "in-tree-packed", "dragon", "tiresias", "no-gang", "volcano"} {
		x, ok := by[o]
		if !ok {
			continue
		}
		if x.done < x.jobs {
			fmt.Fprintf(w, "cluster: %s finished %d of %d jobs: no ratio\n", o, x.done, x.jobs)
			continue
		}
		r := d.meanJCT / x.meanJCT
		fmt.Fprintf(w, "cluster: drake mean JCT / %s = %s", o, cell(r, 2))
		if t, ok := jctTarget[o]; ok {
			fmt.Fprintf(w, " (target <= %g: %s)", t, verdict(r <= t))
		}
		sd, so := pred["drake"], pred[simPolicy[o]]
		if sd != nil && so != nil && sd["finished"] == sd["jobs"] && so["finished"] == so["jobs"] {
			sr := sd["mean_jct_s"] / so["mean_jct_s"]
			fmt.Fprintf(w, "; drake sim: drake / %s = %s; cluster / sim = %s", simPolicy[o], cell(sr, 2), cell(r/sr, 2))
			if o == "dragon" {
				fmt.Fprintf(w, " (target within %.0f %%: %s)", 100*fidelityTarget,
					verdict(math.Abs(r/sr-1) <= fidelityTarget))
			}
		}
		fmt.Fprintln(w)
	}
}

func (b *bench) writeCSVs(base string, rs []armResult, meds []armResult, pred map[string]simFigures) {
	row := func(run string, r armResult) []string {
		return []string{run, r.arm, strconv.Itoa(r.jobs), strconv.Itoa(r.done), cell(r.meanJCT, 2), cell(r.medJCT, 2), cell(r.p95JCT, 2),
			cell(r.meanQueue, 2), cell(r.makespan, 2), cell(r.util, 4), cell(r.partialGPUs, 1), cell(r.partialLate, 1),
			strconv.Itoa(r.pauses), strconv.FormatBool(r.deadlock), r.err}
	}
	w, closeF, err := gangbench.CSVFile(base + ".csv")
	if err != nil {
		fail("%v", err)
	}
	_ = w.Write([]string{"run", "arm", "jobs", "jobs_done", "mean_jct_s", "median_jct_s", "p95_jct_s", "mean_queue_s", "makespan_s",
		"gpu_util", "partial_gpu_s", "partial_gpu_s_beyond_window", "rescale_pauses", "deadlock", "error"})
	for _, r := range rs {
		_ = w.Write(row(strconv.Itoa(r.run), r))
	}
	for _, m := range meds {
		_ = w.Write(row("median", m))
	}
	for _, p := range []string{"drake", "dragon", "tiresias", "default"} {
		x, ok := pred[p]
		if !ok {
			continue
		}
		_ = w.Write([]string{"sim", p, cell(x["jobs"], 0), cell(x["finished"], 0), cell(x["mean_jct_s"], 2), cell(x["median_jct_s"], 2),
			cell(x["p95_jct_s"], 2), cell(x["mean_queue_s"], 2), cell(x["makespan_s"], 2), cell(x["gpu_util"], 4),
			cell(3600*x["held_gpu_hours"], 1), "", cell(x["scale_up"]+x["scale_down"], 0), strconv.FormatBool(x["deadlock_jobs"] > 0), ""})
	}
	if err := closeF(); err != nil {
		fail("%v", err)
	}
	w, closeF, err = gangbench.CSVFile(base + "-jobs.csv")
	if err != nil {
		fail("%v", err)
	}
	_ = w.Write([]string{"run", "arm", "job", "trace_id", "gpus", "workers", "submitted_s", "started_s", "done_s", "rescale_pauses"})
	for _, r := range rs {
		for _, j := range r.perJob {
			_ = w.Write([]string{strconv.Itoa(r.run), r.arm, j.name, j.id, strconv.Itoa(j.gpus), strconv.Itoa(j.workers),
				cell(j.submitted, 3), cell(j.started, 3), cell(j.done, 3), strconv.Itoa(j.pauses)})
		}
	}
	if err := closeF(); err != nil {
		fail("%v", err)
	}
	series := base + "-series.csv"
	w, closeF, err = gangbench.CSVFile(series)
	if err != nil {
		fail("%v", err)
	}
	_ = w.Write([]string{"run", "arm", "t_s", "gpus_busy", "gpus_held_by_partial", "jobs_waiting", "jobs_running", "jobs_done"})
	for _, r := range rs {
		for _, s := range r.series {
			_ = w.Write([]string{strconv.Itoa(r.run), r.arm, cell(s.t, 1), strconv.FormatInt(s.busy, 10), strconv.FormatInt(s.held, 10),
				strconv.Itoa(s.waiting), strconv.Itoa(s.running), strconv.Itoa(s.ended)})
		}
	}
	if err := closeF(); err != nil {
		fail("%v", err)
	}
	fmt.Printf("wrote %s.csv, %s-jobs.csv, %s, %s-window.csv, %s-sim/\n", base, base, series, base, base)
	var panels []gangbench.Panel
	for _, a := range b.o.arms {
		for run := 1; run <= b.o.runs; run++ {
			panels = append(panels, gangbench.Panel{Arm: a.Name, Run: uint64(run), Title: fmt.Sprintf("%s, run %d", a.Name, run)})
		}
	}
	if err := gangbench.PlotBusyHeld(series, base+".png", len(b.o.arms), b.o.runs, b.gpus, panels); err != nil {
		fmt.Printf("plot: %v\n", err)
	} else {
		fmt.Printf("plot: %s.png\n", base)
	}
}
