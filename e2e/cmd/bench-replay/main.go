// bench-replay is the trace replay: a window of a real trace run on
// the local cluster's kwok nodes against each arm in turn, the cluster
// emptied between arms, beside `drake sim`'s prediction for the same window,
// cluster and model.
//
//   - The window (window.go): consecutive jobs of --trace, compressed in
//     time, chosen so that jobs queue and an arm fits --arm-budget; written
//     as a trace of its own (window-*.csv) that the cluster and drake sim
//     both replay.
//   - The jobs: `drake sim --print-jobs` on that trace makes each one's
//     TFJob (PS, workers W0, min/max-instances, requests) and its work; the
//     driver copies nothing of the model.
//   - Run times (progress.go, arm.go): each job's running workers and their
//     nodes are followed on the API; its progress is advanced at T(w, n) by
//     gang/speed.c itself (cgo, speed.c), with the parameters drake sim
//     printed, and every membership change after its start stops it for the
//     rescale pause; when its work is done its pods get run-for 0s and kwok
//     ends them. A Pollux workload's jobs (--apps) advance instead by their
//     applications' measured step times, at their replicas per node in the
//     order their workers use the nodes (pollux.go: sim/pollux_model.c
//     through cgo), their work compressed by --pollux-work-scale; each
//     running one reports its fraction of work done to drake once a
//     second (progress_report.go), as drake sim's Pollux jobs report
//     theirs to its policy.
//   - Arms: drake (TFJobs, elastic as the simulator makes them), in-tree
//     (v1.36 gang scheduling: the pods at trace size in a PodGroup),
//     in-tree-packed (the same under a MostAllocated profile), no-gang
//     (the same pods, plain kube-scheduler); dragon (drake serve --policy
//     dragon) once drake has that flag; tiresias (--policy tiresias) once drake serve's
//     help lists it, else left out with a note; volcano (the
//     pods at trace size in a Volcano PodGroup, vc-scheduler's gang plugin),
//     only when named in --arms, on a cluster with --volcano-scheduler.
//   - Every drake arm, and drake sim, runs its policy's times compressed
//     as the window's (policySettings, window.go): Tiresias' interval and
//     threshold, the scaling rules' --starve-after, --idle-after,
//     --service-threshold and --age-after, so that each policy waits in the
//     trace's time what it would wait on the trace's cluster.
//
// hack/bench-replay.sh brings the cluster up and down.
package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"drake.invalid/e2e/internal/gangbench"
	"drake.invalid/e2e/internal/kit"
)

type opts struct {
	trace, drake, apps              string
	traceFlags, modelFlags          []string
	win                             windowOpts
	budget                          time.Duration
	runs                            int
	arms                            []gangbench.Arm
	armTimeout, stall, sample, late time.Duration
	root, clusterDir, out           string
	decisionLogs, check             bool
	progressReports                 bool
	surveyMinRun                    float64
}

type bench struct {
	o        opts
	cfg      *rest.Config
	cs       kubernetes.Interface
	dyn      dynamic.Interface
	procs    []string
	shape    clusterShape
	gpus     int
	speed    speedModel
	apps     *polluxApps // a Pollux window's measurements, else nil
	drakeEnv string      // the DRAKE_<FLAG> settings drake runs with now
	drakeUp  bool
	logFile  string // --decision-logs: the arm's decision log, "" none
	// the drake arms' scaling times and the tiresias arm's own, compressed
	// as the window (policySettings)
	policyEnv, lasEnv []string
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench-replay: "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	var o opts
	var survey bool
	flag.StringVar(&o.trace, "trace", "", "any trace drake sim reads (default: ROOT/traces/ms_itp_cluster03.csv)")
	traceFlags := flag.String("trace-flags", "", "drake sim flags to read --trace (e.g. --trace-columns ...); the window is written as an ITP or gang trace")
	modelFlags := flag.String("model-flags", "", "drake sim flags of the job and speed model (e.g. --gpus-per-worker 2 --locality-penalty 0.3), for the jobs and the prediction alike")
	flag.IntVar(&o.win.jobs, "jobs", 40, "jobs in the window")
	flag.IntVar(&o.win.start, "start", -1, "first job of the window, in submission order (-1: choose)")
	flag.Float64Var(&o.win.compression, "compression", 0, "divide the window's times by this (0: choose)")
	flag.Float64Var(&o.win.minLoad, "min-load", 1.5, "a chosen window, run at trace sizes on an unbounded cluster, asks for at least this many times the cluster's GPUs at once")
	flag.DurationVar(&o.budget, "arm-budget", 20*time.Minute, "an arm's time; the window's estimate, max(work / GPUs, longest job, span), is compressed to --fill of it")
	flag.BoolVar(&survey, "survey", false, "no arms: drake sim's drake and dragon on every window --jobs/--min-load/--arm-budget allow whose shortest job runs at least --survey-min-run once compressed; CSV and a summary of drake / dragon mean JCT over them")
	flag.Float64Var(&o.surveyMinRun, "survey-min-run", 20, "--survey: least compressed duration of a window's shortest job, s")
	fill := flag.Float64("fill", 0.3, "share of --arm-budget the estimate may take (arms take longer than the estimate when jobs queue)")
	flag.IntVar(&o.runs, "runs", 1, "runs of every arm (the order rotates per run); the table shows medians")
	arms := flag.String("arms", "drake,dragon,in-tree,no-gang", "arms, from drake, dragon, tiresias (left out until drake serve --help lists --policy tiresias), in-tree, in-tree-packed (MostAllocated), no-gang, volcano (Volcano's vc-scheduler: hack/build-control-plane.sh volcano, a cluster with --volcano-scheduler)")
	flag.StringVar(&o.apps, "apps", "", "a Pollux workload's applications' measurements (traces/pollux/apps) for a Pollux --trace: its jobs advance by their measured step times")
	flag.DurationVar(&o.armTimeout, "arm-timeout", 0, "deadline of one arm (0: --arm-budget)")
	flag.DurationVar(&o.stall, "stall", 90*time.Second, "deadlock: every job has arrived, no GPU is busy and no job started or ended for this long")
	flag.DurationVar(&o.sample, "sample", time.Second, "sampling interval of the GPUs busy and held")
	flag.DurationVar(&o.late, "window", 2*time.Second, "GPU-seconds held by a partial gang count as beyond the barrier window after this long")
	flag.StringVar(&o.drake, "drake", "", "the drake binary (default: $DRAKE_BIN, else ROOT/build/release/drake)")
	flag.StringVar(&o.root, "root", ".", "drake's source tree")
	flag.StringVar(&o.clusterDir, "cluster-dir", os.Getenv("DRAKE_CLUSTER_DIR"), "the cluster's state folder")
	flag.StringVar(&o.out, "out", filepath.Join("bench", "results", "bench-replay"), "folder of the CSVs and PNG")
	flag.BoolVar(&o.decisionLogs, "decision-logs", false, "drake arms write a decision log of every round (--cluster-dir/decisions-RUN-ARM.jsonl, never rotated) that drake sim --replay decides again after the arm; differences are printed (they cost the arm some CPU)")
	flag.BoolVar(&o.progressReports, "progress-reports", true, "each running job of a TFJob arm reports its fraction of work done to drake's POST /v1/progress once a second, as drake sim's jobs report theirs to its policy; false: drake sees no progress on the cluster, nor drake sim's policy beside it (--progress-reports=false)")
	flag.BoolVar(&o.check, "check", false, "exit 1 unless every arm finished every job, no arm but no-gang held a partial gang beyond --window, (with --decision-logs) every logged round replays the same, and drake accepted every progress report of an arm that sent them")
	flag.Parse()
	if o.drake == "" {
		o.drake = gangbench.DrakeBinary(o.root, os.Getenv("DRAKE_BIN"))
	}
	if o.trace == "" {
		o.trace = filepath.Join(o.root, "traces", "ms_itp_cluster03.csv")
	}
	o.traceFlags, o.modelFlags = strings.Fields(*traceFlags), strings.Fields(*modelFlags)
	if o.armTimeout == 0 {
		o.armTimeout = o.budget
	}
	if o.runs < 1 || *fill <= 0 || *fill > 1 || o.budget <= 0 {
		fail("need --runs >= 1, 0 < --fill <= 1, --arm-budget > 0")
	}
	o.win.target = *fill * o.budget.Seconds()
	var err error
	var skipped []string
	if o.arms, skipped, err = gangbench.ParseArmsSkipping(*arms, []string{"drake", "dragon", "tiresias", "in-tree", "in-tree-packed", "no-gang", "volcano"}, o.drake); err != nil {
		fail("%v", err)
	}
	for _, m := range skipped {
		fmt.Printf("bench-replay: %s\n", m)
	}
	if len(o.arms) == 0 {
		fail("--arms: no arm left to run")
	}
	if o.apps != "" {
		o.modelFlags = append(o.modelFlags, "--apps", o.apps)
	}

	b := &bench{o: o}
	b.cfg, err = clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	b.cfg.QPS, b.cfg.Burst = 2000, 4000
	b.cfg.UserAgent = "drake-bench-replay"
	if b.cs, err = kubernetes.NewForConfig(b.cfg); err != nil {
		fail("client: %v", err)
	}
	if b.dyn, err = dynamic.NewForConfig(b.cfg); err != nil {
		fail("dynamic client: %v", err)
	}
	b.procs = gangbench.SchedulerProcs(o.clusterDir)
	if err := gangbench.CheckProcs(o.arms, b.procs); err != nil {
		fail("%v", err)
	}
	if err := b.readNodes(); err != nil {
		fail("%v", err)
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fail("%v", err)
	}
	base := filepath.Join(o.out, "bench-replay-"+stamp)

	// the window, and the jobs drake sim makes of it
	all, err := printJobs(o.drake, o.trace, b.shape, append(append([]string(nil), o.traceFlags...), o.modelFlags...))
	if err != nil {
		fail("%v", err)
	}
	w, err := choose(all.Jobs, b.shape, o.win)
	if err != nil {
		fail("%v", err)
	}
	winTrace := base + "-window.csv"
	if err := writeTrace(winTrace, all.Kind, all.Jobs, w); err != nil {
		fail("%v", err)
	}
	if all.Kind == "pollux" && o.apps == "" {
		fail("%s is a Pollux workload: --apps must name its applications' measurements", o.trace)
	}
	// the window's own flags: a Pollux window's work compressed as its times
	b.o.modelFlags = append(append([]string(nil), o.modelFlags...), workScaleFlags(all.Kind, w)...)
	// and every policy's times, for drake sim and the drake arms
	policyFlags, lasEnv, scaleEnv := policySettings(w)
	b.o.modelFlags = append(b.o.modelFlags, policyFlags...)
	b.lasEnv, b.policyEnv = lasEnv, scaleEnv
	sj, err := printJobs(o.drake, winTrace, b.shape, b.o.modelFlags)
	if err != nil {
		fail("%v", err)
	}
	b.speed = sj.Speed
	// what a change of size stops a job for here is the driver's pause
	// (progress.go), so drake serve's policy weighs a resize against that,
	// as drake sim's does (its jobs have no kind: the same pause), not
	// against drake-train's measured cost
	if b.speed.RescalePause > 0 {
		b.policyEnv = append(b.policyEnv, fmt.Sprintf("DRAKE_RESIZE_COST=tfjobs=%.6fs", b.speed.RescalePause))
	}
	if all.Kind == "pollux" {
		if b.apps, err = loadApps(o.apps, applications(sj.Jobs)); err != nil {
			fail("%v", err)
		}
		defer b.apps.release()
	}
	var jobs []replayJob
	for i, j := range sj.Jobs {
		jobs = append(jobs, replayJob{name: fmt.Sprintf("r%03d", i), sj: j, at: time.Duration(j.Submit * float64(time.Second))})
	}
	fmt.Printf("bench-replay: %s, %d jobs; cluster %d nodes x %d GPUs (%d), %.0f cpu, %s memory each\n",
		o.trace, len(all.Jobs), b.shape.nodes, b.shape.gpus, b.gpus, float64(b.shape.cpuMilli)/1000, fmtBytes(b.shape.mem))
	fmt.Printf("window: jobs %d..%d (%s)\n", w.start, w.start+w.n-1, w.why)
	fmt.Printf("  span %.0f s, %.0f GPU-s of work, longest job %d s; on an unbounded cluster at trace sizes it asks for up to %.2fx the cluster's GPUs, %.0f%% of the work beyond them\n",
		w.span, w.work, w.longest, w.peak, 100*w.over)
	fmt.Printf("  compression %.1f: estimate max(work/GPUs, longest, span) / compression = %.0f s (budget %v x %.2f); %d durations raised to 1 s\n",
		w.compression, w.estimate, o.budget, *fill, w.clipped)
	fmt.Printf("  written as %s; speed model: scaling loss %g, locality penalty %g, rescale pause %g s, %d GPUs per node\n",
		winTrace, b.speed.ScalingLoss, b.speed.LocalityPenalty, b.speed.RescalePause, b.speed.NodeGPUs)

	if survey {
		if err := b.survey(all.Jobs, all.Kind, w, base); err != nil {
			fail("%v", err)
		}
		return
	}
	pred, err := b.predict(winTrace, base+"-sim", strings.Join(simPolicies(all.Kind), ","), true)
	if err != nil {
		fail("%v", err)
	}
	var results []armResult
	for run := 1; run <= o.runs; run++ {
		k := (run - 1) % len(o.arms)
		order := append(append([]gangbench.Arm(nil), o.arms[k:]...), o.arms[:k]...)
		for _, a := range order {
			fmt.Printf("run %d, arm %s (schedulerName %q)\n", run, a.Name, a.Scheduler)
			r := b.runArm(a, run, jobs)
			fmt.Printf("  %s\n", r.line())
			if b.logFile != "" && r.err == "" {
				r.replayed, r.differing, r.replayErr = b.replay(b.logFile)
				fmt.Printf("  %s\n", r.replayLine())
			}
			results = append(results, r)
		}
	}
	b.report(base, w, results, pred)
	if o.check {
		n, bad := checkResults(results)
		for _, m := range bad {
			fmt.Printf("bench-replay: --check: %s\n", m)
		}
		fmt.Printf("bench-replay: %d passed, %d failed\n", n-len(bad), len(bad))
		if len(bad) > 0 {
			os.Exit(1)
		}
	}
}

// applications: the distinct applications of jobs.
func applications(jobs []simJob) []string {
	var out []string
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.Application != "" && !seen[j.Application] {
			seen[j.Application] = true
			out = append(out, j.Application)
		}
	}
	return out
}

// replay: drake sim --replay over an arm's decision log (its rotated part
// first): rounds replayed and differing.
func (b *bench) replay(log string) (replayed, differing int, err error) {
	for _, f := range []string{log + ".1", log} {
		if _, serr := os.Stat(f); serr != nil {
			continue
		}
		out, rerr := exec.Command(b.o.drake, "sim", "--replay", f).CombinedOutput()
		var read, rep, diff, skip int
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		last := lines[len(lines)-1]
		at := strings.LastIndex(last, ": ")
		if at < 0 {
			return replayed, differing, fmt.Errorf("drake sim --replay %s: %v: %s", f, rerr, last)
		}
		if _, serr := fmt.Sscanf(last[at+2:], "%d rounds read, %d replayed, %d differing, %d skipped", &read, &rep, &diff, &skip); serr != nil {
			return replayed, differing, fmt.Errorf("drake sim --replay %s: %v: %s", f, rerr, last)
		}
		if diff > 0 {
			fmt.Printf("%s\n", strings.Join(lines[:min(len(lines), 6)], "\n"))
		}
		replayed += rep
		differing += diff
	}
	if replayed == 0 {
		return 0, 0, fmt.Errorf("%s: no round logged", log)
	}
	return replayed, differing, nil
}

// checkResults: what --check asserts of each arm's run (checks made,
// and the failures): it ran; every job finished; no partial gang beyond
// the window (but under no-gang); with --decision-logs, every logged round
// replays the same; drake accepted every progress report an arm sent, and
// there was at least one.
func checkResults(results []armResult) (int, []string) {
	n := 0
	var bad []string
	check := func(ok bool, format string, a ...any) {
		n++
		if !ok {
			bad = append(bad, fmt.Sprintf(format, a...))
		}
	}
	for _, r := range results {
		id := fmt.Sprintf("run %d %s", r.run, r.arm)
		if check(r.err == "", "%s: %s", id, r.err); r.err != "" {
			continue
		}
		check(r.done == r.jobs, "%s: %d of %d jobs done", id, r.done, r.jobs)
		if r.arm != "no-gang" {
			check(r.partialLate == 0, "%s: %.0f GPU-s held by partial gangs beyond the window", id, r.partialLate)
		}
		if r.replayErr != nil || r.replayed > 0 {
			check(r.replayErr == nil && r.differing == 0, "%s: %s", id, r.replayLine())
		}
		if p := r.reports; p != nil {
			check(p.sent > 0 && p.failed == 0, "%s: %d progress reports accepted, %d refused (first: %s)",
				id, p.sent, p.failed, p.first)
		}
	}
	return n, bad
}

func fmtBytes(v int64) string {
	if v%(1<<30) == 0 {
		return strconv.FormatInt(v>>30, 10) + "Gi"
	}
	return strconv.FormatInt(v, 10)
}

// readNodes: the kwok nodes' shape; every node must have the same GPUs,
// cpu and memory (the simulator's identical nodes).
func (b *bench) readNodes() error {
	ctx, cancel := contextTimeout(time.Minute)
	defer cancel()
	l, err := b.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("nodes: %v", err)
	}
	for i, n := range l.Items {
		g := n.Status.Allocatable[kit.GPUResource]
		c := n.Status.Allocatable["cpu"]
		m := n.Status.Allocatable["memory"]
		s := clusterShape{nodes: 1, gpus: int(g.Value()), cpuMilli: c.MilliValue(), mem: m.Value()}
		if i == 0 {
			b.shape = s
		} else if s.gpus != b.shape.gpus || s.cpuMilli != b.shape.cpuMilli || s.mem != b.shape.mem {
			return fmt.Errorf("node %s is %d GPUs, %dm cpu, %d memory, unlike the others: drake sim models identical nodes", n.Name, s.gpus, s.cpuMilli, s.mem)
		} else {
			b.shape.nodes++
		}
	}
	b.gpus = b.shape.nodes * b.shape.gpus
	if b.gpus == 0 {
		return fmt.Errorf("no node has nvidia.com/gpu")
	}
	return nil
}

// drakeFor restarts drake with the arm's settings when a TFJob arm needs
// other ones than it runs with (the first TFJob arm turns its controller
// on).
func (b *bench) drakeFor(a gangbench.Arm, run int) error {
	b.logFile = ""
	if !a.TFJobs {
		return nil
	}
	// the window's times first: an arm's own settings come after and win
	settings := append([]string(nil), b.policyEnv...)
	if a.Name == "tiresias" {
		settings = append(settings, b.lasEnv...)
	}
	settings = append(settings, a.DrakeEnv...)
	if b.o.decisionLogs {
		b.logFile = filepath.Join(b.o.clusterDir, fmt.Sprintf("decisions-%d-%s.jsonl", run, a.Name))
		for _, f := range []string{b.logFile, b.logFile + ".1"} {
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		// every round of the arm, unrotated, so the replay covers the whole run
		settings = append(append([]string(nil), settings...), "DRAKE_DECISION_LOG="+b.logFile, "DRAKE_DECISION_LOG_MAX=0")
	}
	env := strings.Join(settings, " ")
	if b.drakeUp && env == b.drakeEnv {
		return nil
	}
	took, err := kit.EnableReconciler(b.o.root, settings...)
	if err != nil {
		return err
	}
	b.drakeUp, b.drakeEnv = true, env
	fmt.Printf("  drake restarted with its TFJob controller%s in %.1fs\n", map[bool]string{true: " and " + env, false: ""}[env != ""], took.Seconds())
	return nil
}

// simFigures: one policy's row of drake sim's summary.csv.
type simFigures map[string]float64

// predict runs drake sim's policies (a comma list) on the window trace with
// the cluster's shape and the same model flags, its output in dir; echo
// prints the command and its table.
func (b *bench) predict(trace, dir, policies string, echo bool) (map[string]simFigures, error) {
	args := append([]string{"sim", "--trace", trace, "--policies", policies, "--out", dir,
		"--plots=false", "--progress=false"}, b.shape.simFlags()...)
	args = append(args, b.o.modelFlags...)
	if !b.o.progressReports {
		args = append(args, "--progress-reports=false")
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(b.o.drake, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", b.o.drake, strings.Join(args, " "), err, errb.String())
	}
	if echo {
		fmt.Printf("drake %s\n%s", strings.Join(args, " "), out.String())
	}
	f, err := os.Open(filepath.Join(dir, "summary.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("%s/summary.csv: %v", dir, err)
	}
	res := map[string]simFigures{}
	for _, r := range rows[1:] {
		fig := simFigures{}
		for i, h := range rows[0] {
			if i < len(r) {
				if v, err := strconv.ParseFloat(r[i], 64); err == nil {
					fig[h] = v
				}
			}
		}
		res[r[0]] = fig
	}
	return res, nil
}
