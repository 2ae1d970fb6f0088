package main

// --survey: how drake and DRAGON's rules compare, in drake sim, over every
// window the benchmark could have chosen, so that the window it did choose
// can be read against them (a window where the two policies tie in the
// simulator cannot separate them on the cluster either).

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// sizeMix names a window's jobs by GPU count, "8x38 16x2".
func sizeMix(jobs []simJob) string {
	n := map[int]int{}
	var sizes []int
	for _, j := range jobs {
		if n[j.GPUs] == 0 {
			sizes = append(sizes, j.GPUs)
		}
		n[j.GPUs]++
	}
	sort.Ints(sizes)
	var parts []string
	for _, g := range sizes {
		parts = append(parts, fmt.Sprintf("%dx%d", g, n[g]))
	}
	return strings.Join(parts, " ")
}

// surveyRow: one window's prediction.
type surveyRow struct {
	w             window
	drake, dragon float64 // mean JCT, s
}

func (r surveyRow) ratio() float64 { return r.drake / r.dragon }

// summarise: how many windows, the median, least and largest drake /
// dragon ratio, and how many are at most 0.9.
func summarise(rows []surveyRow) (n int, median, least, most float64, under int) {
	var v []float64
	for _, r := range rows {
		if x := r.ratio(); !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return 0, math.NaN(), math.NaN(), math.NaN(), 0
	}
	sort.Float64s(v)
	median = v[len(v)/2]
	if len(v)%2 == 0 {
		median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	for _, x := range v {
		if x <= 0.9 {
			under++
		}
	}
	return len(v), median, v[0], v[len(v)-1], under
}

func (b *bench) survey(jobs []simJob, kind string, chosen window, base string) error {
	ws, err := candidates(jobs, b.shape, b.o.win)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bench-replay-survey-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var rows []surveyRow
	for _, w := range ws {
		if w.shortestRun() < b.o.surveyMinRun {
			continue
		}
		trace := filepath.Join(tmp, "window.csv")
		if err := writeTrace(trace, kind, jobs, w); err != nil {
			return err
		}
		pred, err := b.predict(trace, filepath.Join(tmp, "sim"), "drake,dragon", false)
		if err != nil {
			return fmt.Errorf("window %d: %v", w.start, err)
		}
		rows = append(rows, surveyRow{w: w, drake: pred["drake"]["mean_jct_s"], dragon: pred["dragon"]["mean_jct_s"]})
		if len(rows)%25 == 0 {
			fmt.Printf("  survey: %d windows simulated\n", len(rows))
		}
	}
	path := base + "-survey.csv"
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	_ = cw.Write([]string{"start", "jobs", "compression", "shortest_run_s", "peak_demand", "gpus", "drake_mean_jct_s", "dragon_mean_jct_s", "drake_over_dragon"})
	for _, r := range rows {
		_ = cw.Write([]string{strconv.Itoa(r.w.start), strconv.Itoa(r.w.n), strconv.FormatFloat(r.w.compression, 'f', 1, 64),
			strconv.FormatFloat(r.w.shortestRun(), 'f', 1, 64), strconv.FormatFloat(r.w.peak, 'f', 2, 64),
			sizeMix(jobs[r.w.start : r.w.start+r.w.n]), strconv.FormatFloat(r.drake, 'f', 1, 64),
			strconv.FormatFloat(r.dragon, 'f', 1, 64), strconv.FormatFloat(r.ratio(), 'f', 3, 64)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	n, med, least, most, under := summarise(rows)
	fmt.Printf("survey: %d of %d candidate windows have a shortest job of at least %.0f s once compressed\n", len(rows), len(ws), b.o.surveyMinRun)
	if n > 0 {
		fmt.Printf("  drake sim, drake / dragon mean JCT over the %d with both finished: median %.3f, least %.3f, largest %.3f; %d windows at or below 0.9\n", n, med, least, most, under)
	}
	for _, r := range rows {
		if r.w.start == chosen.start {
			fmt.Printf("  the window the benchmark chooses (jobs %d..%d, %s): %.3f\n", r.w.start, r.w.start+r.w.n-1, sizeMix(jobs[r.w.start:r.w.start+r.w.n]), r.ratio())
		}
	}
	fmt.Printf("  per window: %s\n", path)
	return nil
}
