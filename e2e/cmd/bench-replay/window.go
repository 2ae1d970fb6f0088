package main

// The window: a run of consecutive jobs of the trace (in submission order,
// as `drake sim` sorts them), compressed in time, written as a trace of its
// own that both the cluster and `drake sim` replay, so the two see the very
// same jobs. The jobs' shapes and work come from `drake sim --print-jobs`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// simJob is one entry of `drake sim --print-jobs` (sim/jobs_json.h).
type simJob struct {
	Index          int     `json:"index"`
	ID             string  `json:"id"`
	Submit         float64 `json:"submit_s"`
	Duration       int64   `json:"duration_s"`
	GPUs           int     `json:"gpus"`
	PS             int     `json:"ps"`
	PSCPUMilli     int64   `json:"ps_cpu_milli"`
	PSMemBytes     int64   `json:"ps_mem_bytes"`
	Workers        int     `json:"workers"`
	MinWorkers     int     `json:"min_workers"`
	MaxWorkers     int     `json:"max_workers"`
	GPUsPerWorker  int     `json:"gpus_per_worker"`
	WorkerCPUMilli int64   `json:"worker_cpu_milli"`
	WorkerMemBytes int64   `json:"worker_mem_bytes"`
	Work           float64 `json:"work"`
	// a Pollux job's: its application, batch size and the artifact's
	// count of its work at its tuned size (before --pollux-work-scale)
	Application string  `json:"application"`
	BatchSize   int     `json:"batch_size"`
	Samples     float64 `json:"samples"`
}

type simJobs struct {
	Kind  string     `json:"kind"`
	Speed speedModel `json:"speed"`
	Jobs  []simJob   `json:"jobs"`
}

// clusterShape: the kwok nodes, as `drake sim` flags.
type clusterShape struct {
	nodes, gpus   int
	cpuMilli, mem int64
}

func (c clusterShape) simFlags() []string {
	return []string{"--nodes", fmt.Sprint(c.nodes), "--node-gpus", fmt.Sprint(c.gpus),
		"--node-cpu", fmt.Sprintf("%.3f", float64(c.cpuMilli)/1000), "--node-mem", fmt.Sprint(c.mem)}
}

// printJobs runs drake sim --print-jobs on trace with the cluster's shape
// and extra flags.
func printJobs(drake, trace string, c clusterShape, extra []string) (simJobs, error) {
	args := append([]string{"sim", "--trace", trace, "--print-jobs"}, c.simFlags()...)
	args = append(args, extra...)
	var out, errb bytes.Buffer
	cmd := exec.Command(drake, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return simJobs{}, fmt.Errorf("%s %s: %v: %s", drake, strings.Join(args, " "), err, errb.String())
	}
	var s simJobs
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		return simJobs{}, fmt.Errorf("drake sim --print-jobs: %v", err)
	}
	if len(s.Jobs) == 0 {
		return simJobs{}, fmt.Errorf("drake sim --print-jobs: no jobs in %s", trace)
	}
	return s, nil
}

// window is the choice made.
type window struct {
	start, n    int
	compression float64
	span, work  float64 // uncompressed: first to last submission, GPU-seconds
	peak        float64 // most GPUs asked for at once on an unbounded cluster / the cluster's GPUs
	over        float64 // share of the work asked for beyond the cluster's GPUs there
	longest     int64
	shortest    int64
	estimate    float64 // max(work / GPUs, longest, span) / compression, s
	clipped     int     // durations that compressed below 1 s (run 1 s)
	why         string
}

type windowOpts struct {
	jobs        int
	start       int     // -1: choose
	compression float64 // 0: choose
	minLoad     float64 // least peak demand over the cluster's GPUs
	target      float64 // seconds the estimate may reach
}

func fits(j simJob, c clusterShape) bool { return j.GPUs <= c.nodes*c.gpus }

// measure fills w's figures for jobs[start : start+n].
func measure(jobs []simJob, start, n, gpus int) window {
	w := window{start: start, n: n}
	first, last := jobs[start].Submit, jobs[start+n-1].Submit
	w.span = last - first
	for _, j := range jobs[start : start+n] {
		w.work += float64(j.GPUs) * float64(j.Duration)
		if j.Duration > w.longest {
			w.longest = j.Duration
		}
		if w.shortest == 0 || j.Duration < w.shortest {
			w.shortest = j.Duration
		}
	}
	w.peak, w.over = demand(jobs[start:start+n], gpus)
	return w
}

// demand: the jobs run on an unbounded cluster at their trace sizes and
// durations; the most GPUs in use at once over gpus, and the share of the
// GPU-seconds above gpus (work that must wait on the real cluster).
func demand(jobs []simJob, gpus int) (peak, over float64) {
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	work := 0.0
	for _, j := range jobs {
		evs = append(evs, ev{j.Submit, j.GPUs}, ev{j.Submit + float64(j.Duration), -j.GPUs})
		work += float64(j.GPUs) * float64(j.Duration)
	}
	sort.Slice(evs, func(a, b int) bool { return evs[a].t < evs[b].t || (evs[a].t == evs[b].t && evs[a].d < evs[b].d) })
	cur, most, above := 0, 0, 0.0
	for i, e := range evs {
		if i > 0 && cur > gpus {
			above += float64(cur-gpus) * (e.t - evs[i-1].t)
		}
		cur += e.d
		if cur > most {
			most = cur
		}
	}
	return float64(most) / float64(gpus), above / math.Max(work, 1)
}

// shortestRun: the shortest job's compressed duration, s.
func (w window) shortestRun() float64 { return float64(w.shortest) / w.compression }

func (w *window) compress(c float64, gpus int) {
	w.compression = c
	w.estimate = math.Max(math.Max(w.work/float64(gpus), float64(w.longest)), w.span) / c
}

// candidates: the windows choose picks among. With o.start given, that one
// run of o.jobs; else every run of o.jobs consecutive jobs that all fit the
// cluster and, run at their trace sizes on an unbounded cluster, ask for at
// least o.minLoad times its GPUs at once (so jobs queue). Each is
// compressed by o.compression, or else so that the estimate of an arm's
// length, max(work / GPUs, longest job, span), is o.target.
func candidates(jobs []simJob, c clusterShape, o windowOpts) ([]window, error) {
	gpus := c.nodes * c.gpus
	if o.jobs < 1 || o.jobs > len(jobs) {
		return nil, fmt.Errorf("--jobs %d: the trace has %d jobs", o.jobs, len(jobs))
	}
	starts := []int{o.start}
	if o.start < 0 {
		starts = nil
		for s := 0; s+o.jobs <= len(jobs); s++ {
			starts = append(starts, s)
		}
	} else if o.start+o.jobs > len(jobs) {
		return nil, fmt.Errorf("--start %d --jobs %d: the trace has %d jobs", o.start, o.jobs, len(jobs))
	}
	var out []window
	for _, s := range starts {
		ok := true
		for _, j := range jobs[s : s+o.jobs] {
			ok = ok && fits(j, c)
		}
		if !ok {
			continue
		}
		w := measure(jobs, s, o.jobs, gpus)
		if o.start < 0 && w.peak < o.minLoad {
			continue
		}
		cmp := o.compression
		if cmp <= 0 {
			cmp = math.Max(1, math.Max(math.Max(w.work/float64(gpus), float64(w.longest)), w.span)/o.target)
		}
		w.compress(cmp, gpus)
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no run of %d jobs that all fit %d GPUs asks for %.2fx them at once; try --jobs, --min-load or --nodes", o.jobs, gpus, o.minLoad)
	}
	return out, nil
}

// choose picks the window among the candidates: the one whose shortest
// job is longest once compressed (short jobs are the ones the control
// plane's latency and the rescale pause weigh on); ties: the larger share
// of work beyond the cluster.
func choose(jobs []simJob, c clusterShape, o windowOpts) (window, error) {
	ws, err := candidates(jobs, c, o)
	if err != nil {
		return window{}, err
	}
	best := ws[0]
	for _, w := range ws[1:] {
		if w.shortestRun() > best.shortestRun() || (w.shortestRun() == best.shortestRun() && w.over > best.over) {
			best = w
		}
	}
	for _, j := range jobs[best.start : best.start+best.n] {
		if math.Round(float64(j.Duration)/best.compression) < 1 {
			best.clipped++
		}
	}
	if o.start < 0 {
		best.why = fmt.Sprintf("of the %d runs of %d consecutive jobs that fit the cluster and, run at trace size on an unbounded one, ask for at least %.2fx its GPUs at once, the one whose shortest job is longest once compressed", len(ws), o.jobs, o.minLoad)
	} else {
		best.why = "given by --start"
	}
	return best, nil
}

// writeTrace writes the window, compressed, as a trace in the source's own
// layout (ITP, gang or Pollux): submissions from 0, times divided by the
// compression and rounded, durations at least 1 s. A Pollux job has no
// duration: its work, from its application's measurements, is compressed
// by drake sim --pollux-work-scale (workScaleFlags).
func writeTrace(path, kind string, jobs []simJob, w window) error {
	var b strings.Builder
	first := jobs[w.start].Submit
	switch kind {
	case "gang":
		b.WriteString("job_id,submit_order,replicas,gpus_per_pod,duration_s\n")
	case "pollux":
		b.WriteString("name,time,application,num_replicas,batch_size\n")
	default:
		b.WriteString("job_id,submission_time,duration,num_gpu\n")
	}
	for k, j := range jobs[w.start : w.start+w.n] {
		d := int64(math.Max(1, math.Round(float64(j.Duration)/w.compression)))
		id := strings.NewReplacer(",", "_", "\n", "_").Replace(j.ID)
		s := int64(math.Round((j.Submit - first) / w.compression))
		switch kind {
		case "gang":
			fmt.Fprintf(&b, "%s,%d,%d,%d,%d\n", id, k, j.Workers, j.GPUsPerWorker, d)
		case "pollux":
			fmt.Fprintf(&b, "%s,%d,%s,%d,%d\n", id, s, j.Application, j.Workers, j.BatchSize)
		default:
			fmt.Fprintf(&b, "%s,%d,%d,%d\n", id, s, d, j.GPUs)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Tiresias' settings in the artifact (drake sim's --tiresias-interval and
// --tiresias-threshold defaults, drake serve's --las-interval and
// --las-threshold; window_test.go reads them there): a decision every 60 s,
// queues split at 16 GPU-hours.
const (
	lasInterval  = 60.0
	lasThreshold = 57600.0
)

// drake serve's defaults for the scaling rules' times (cmd/scale_flags.c;
// window_test.go reads them there): a job starves after 30 s, the cluster
// is idle after 60 s, a job's attained service passes the threshold at 4
// GPU-hours, and a waiting job ages after 10 minutes.
const (
	starveAfter      = 30.0
	idleAfter        = 60.0
	serviceThreshold = 14400.0
	ageAfter         = 600.0
)

// policySettings: every policy's times compressed as the window's, as
// drake sim flags and as drake serve's settings, so that each policy runs
// its settings in the trace's time: Tiresias' interval and threshold (las,
// for the tiresias arm only: drake serve refuses an interval under 1 s,
// which a window compressed enough asks for), and the scaling rules'
// starve, idle, service and age times (scale, for every drake arm; DRAGON's
// rules use the first two). What a change of size costs is not among them:
// a pause of the trainer is the cluster's own.
func policySettings(w window) (simFlags, las, scale []string) {
	c := w.compression
	set := []struct {
		flag, env string
		v         float64
		dur, las  bool
	}{
		{"--tiresias-interval", "DRAKE_LAS_INTERVAL", lasInterval, true, true},
		{"--tiresias-threshold", "DRAKE_LAS_THRESHOLD", lasThreshold, false, true},
		{"--starve-after", "DRAKE_STARVE_AFTER", starveAfter, true, false},
		{"--idle-after", "DRAKE_IDLE_AFTER", idleAfter, true, false},
		{"--service-threshold", "DRAKE_SERVICE_THRESHOLD", serviceThreshold, false, false},
		{"--age-after", "DRAKE_AGE_AFTER", ageAfter, true, false},
	}
	for _, x := range set {
		v := fmt.Sprintf("%.6f", x.v/c)
		if x.dur {
			v += "s"
		}
		simFlags = append(simFlags, x.flag, v)
		if x.las {
			las = append(las, x.env+"="+v)
		} else {
			scale = append(scale, x.env+"="+v)
		}
	}
	return simFlags, las, scale
}

// polluxRestart: what a Pollux job's every start and change costs, the
// artifact's 30 s (drake sim's --tiresias-restart default).
const polluxRestart = 30.0

// workScaleFlags: the drake sim flags that compress a Pollux window's
// work, and the restart each start and change costs, as writeTrace
// compressed its times (none for other kinds, whose durations are written
// compressed).
func workScaleFlags(kind string, w window) []string {
	if kind != "pollux" {
		return nil
	}
	return []string{"--pollux-work-scale", fmt.Sprintf("%.17g", 1/w.compression),
		"--tiresias-restart", fmt.Sprintf("%.6fs", polluxRestart/w.compression)}
}
