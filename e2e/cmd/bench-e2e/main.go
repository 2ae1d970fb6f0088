// bench-e2e measures how fast kube-scheduler binds pods, from the API
// server's view, with and without drake as its extender, in one cluster.
//
// hack/bench-e2e.sh starts the cluster with three schedulers: profile
// "default-scheduler" calls drake (filter, prioritize, bind; simple mode),
// "plain-scheduler" has no extender, and "plain-nobatch-scheduler" has no
// extender and OpportunisticBatching off (kube-scheduler turns batching off by
// itself for a profile with extenders, so this one isolates the cost of the
// extender calls). For each phase this program creates --pods plain pods for
// one scheduler as fast as it can (--workers parallel creates, client QPS
// unlimited in practice) and watches them until every one is bound.
// Throughput = pods / (first create request sent -> last binding seen on the
// watch). Phases run one at a time; the order is reversed every other round
// so that the growing number of pods in the cluster favours no profile.
//
// With --gang-jobs N (gang.go) a last phase follows in the same cluster:
// the TFJob CRD is installed, drake is restarted with its controller
// (--reconcile; gang admission is on by default), and N TFJobs of 1 PS +
// --gang-workers one-GPU workers are created as fast as possible for the drake
// profile. Pods and jobs fully bound per second are measured the same way and
// printed beside the plain-pod rows, with the longest time any job was seen
// partially bound on the watch.
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"drake.invalid/e2e/internal/kit"
)

type result struct {
	round          int
	scheduler      string
	pods           int
	createSeconds  float64 // first create sent -> last create answered
	bindSeconds    float64 // first create sent -> last binding seen
	serverSeconds  float64 // first creationTimestamp -> last PodScheduled transition (1 s resolution)
	podsPerSecond  float64
	drakeInvolved  bool
	schedulingErrs int
}

func main() {
	pods := flag.Int("pods", 3000, "pods per phase")
	rounds := flag.Int("rounds", 2, "rounds; each runs both schedulers (ABBA order across rounds)")
	workers := flag.Int("workers", 64, "parallel pod creations")
	timeout := flag.Duration("timeout", 5*time.Minute, "deadline for one phase")
	withDrake := flag.String("drake-scheduler", "default-scheduler", "scheduler profile that calls drake")
	schedList := flag.String("schedulers", "plain-scheduler,plain-nobatch-scheduler,default-scheduler",
		"scheduler profiles to compare; the first is the baseline of the ratio")
	out := flag.String("csv", "", "CSV file to write (default bench/results/bench-e2e-<time>.csv)")
	nodes := flag.Int("nodes", 0, "node count, for the record")
	gangJobs := flag.Int("gang-jobs", 0, "TFJobs in the gang phase after the plain rounds (0: no gang phase)")
	gangWorkers := flag.Int("gang-workers", 7, "one-GPU workers per TFJob (plus one PS)")
	gangParallel := flag.Int("gang-parallel", 16, "parallel TFJob creations")
	gangTimeout := flag.Duration("gang-timeout", 10*time.Minute, "deadline for the gang phase")
	gangStall := flag.Duration("gang-stall", 60*time.Second, "end the gang phase (and report the jobs not bound) after this long without a binding")
	partialMax := flag.Duration("partial-max", 5*time.Second, "a job partially bound for longer than this is reported")
	root := flag.String("root", ".", "drake's source tree (config/crd/, hack/cluster-drake.sh)")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 10000, 10000
	cfg.UserAgent = "drake-bench-e2e"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail("client: %v", err)
	}

	scheds := strings.Split(*schedList, ",")
	var results []result
	for r := 1; r <= *rounds; r++ {
		order := append([]string(nil), scheds...)
		if r%2 == 0 { // reverse every other round, so no profile always runs on the fuller cluster
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, s := range order {
			res := phase(cs, r, s, *pods, *workers, *timeout)
			res.drakeInvolved = s == *withDrake
			fmt.Printf("round %d %-24s %5d pods bound in %6.2fs = %7.1f pods/s (creates took %.2fs)\n",
				r, s, res.pods, res.bindSeconds, res.podsPerSecond, res.createSeconds)
			results = append(results, res)
		}
	}

	sum, cnt, bsum := map[string]float64{}, map[string]int{}, map[string]float64{}
	fmt.Println()
	fmt.Printf("%-5s %-24s %-6s %6s %9s %9s %9s %9s\n", "round", "scheduler", "drake", "pods", "create_s", "bind_s", "server_s", "pods/s")
	for _, r := range results {
		fmt.Printf("%-5d %-24s %-6v %6d %9.2f %9.2f %9.0f %9.1f\n", r.round, r.scheduler, r.drakeInvolved, r.pods,
			r.createSeconds, r.bindSeconds, r.serverSeconds, r.podsPerSecond)
		sum[r.scheduler] += r.podsPerSecond
		bsum[r.scheduler] += r.bindSeconds
		cnt[r.scheduler]++
	}
	mean := func(s string) float64 { return sum[s] / float64(cnt[s]) }
	ratio := 0.0
	if *rounds > 0 {
		fmt.Println()
		for _, s := range scheds {
			fmt.Printf("mean %-24s %7.1f pods/s\n", s, mean(s))
		}
		ratio = mean(*withDrake) / mean(scheds[0])
		fmt.Printf("ratio %s / %s = %.3f (drake costs %.1f%% of throughput; target <= 20%%)\n",
			*withDrake, scheds[0], ratio, (1-ratio)*100)
		for _, s := range scheds[1:] {
			if s != *withDrake {
				fmt.Printf("ratio %s / %s = %.3f\n", *withDrake, s, mean(*withDrake)/mean(s))
			}
		}
		diagnostics(cfg)
	}

	var gang *gangResult
	if *gangJobs > 0 {
		enableReconciler(*root)
		before := schedulerMetrics(cfg)
		writesBefore := apiWrites(cfg)
		g := gangPhase(cfg, cs, *gangJobs, *gangWorkers, *gangParallel, *partialMax, *gangStall, *gangTimeout)
		gang = &g
		g.gangBound = gangDiagnostics(cfg)
		schedulerDelta(before, schedulerMetrics(cfg))
		if after := apiWrites(cfg); writesBefore != nil && after != nil {
			by, total := kit.WorkloadWrites(writesBefore, after)
			pods := float64(g.jobs * g.podsPerJob)
			fmt.Printf("%-34s %.0f API writes, %.2f per pod:", "gang phase", total, total/pods)
			for _, k := range slices.Sorted(maps.Keys(by)) {
				fmt.Printf(" %s=%.0f", k, by[k])
			}
			fmt.Println()
		}
		fmt.Printf("gang: %d of %d TFJobs bound whole, %d of %d pods bound\n", g.fullJobs, g.jobs, g.boundPods, g.jobs*g.podsPerJob)
		fmt.Printf("gang: %d TFJobs x %d pods: creates %.2fs, all pods created by drake's controller %.2fs, "+
			"first binding %.2fs, last binding %.2fs = %.1f pods/s, %.2f jobs/s (server view %.0fs)\n",
			g.jobs, g.podsPerJob, g.createSeconds, g.podsSeenSeconds, g.firstBindSeconds, g.bindSeconds,
			g.podsPerSecond, g.jobsPerSecond, g.serverSeconds)
		fmt.Printf("gang: longest partial gang on the watch %v (job %s); jobs partial > %v: %d; "+
			"widest PodScheduled spread in one job %.0fs; most nodes per job %d; drake_gang_members_bound_total %.0f of %d\n",
			g.maxPartial.Round(time.Millisecond), g.maxPartialJob, *partialMax, g.partialOver,
			g.serverMaxSpread, g.nodesPerJobMax, g.gangBound, g.jobs*g.podsPerJob)
	}

	// the side-by-side summary: plain pods per scheduler (mean over rounds)
	// and the gang phase, each against kube-scheduler alone
	base := 0.0
	if *rounds > 0 {
		base = mean(scheds[0])
	}
	rel := func(v float64) string {
		if base == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v/base)
	}
	fmt.Println()
	fmt.Printf("%-26s %-24s %-6s %6s %5s %8s %8s %7s %9s %s\n", "workload", "scheduler", "drake", "pods", "jobs",
		"bind_s", "pods/s", "jobs/s", "ratio", "partial>"+partialMax.String())
	if *rounds > 0 {
		for _, s := range scheds {
			fmt.Printf("%-26s %-24s %-6v %6d %5s %8.2f %8.1f %7s %9s %s\n", "plain pods", s, s == *withDrake, *pods, "-",
				bsum[s]/float64(cnt[s]), mean(s), "-", rel(mean(s)), "-")
		}
	}
	if gang != nil {
		fmt.Printf("%-26s %-24s %-6s %6d %5d %8.2f %8.1f %7.2f %9s %s (longest %v)\n",
			fmt.Sprintf("gang TFJobs 1 PS + %d W", *gangWorkers), *withDrake, "true+c", gang.boundPods, gang.fullJobs,
			gang.bindSeconds, gang.podsPerSecond, gang.jobsPerSecond, rel(gang.podsPerSecond),
			yesNo(gang.partialOver > 0), gang.maxPartial.Round(time.Millisecond))
		fmt.Printf("(ratio = pods/s over %s's; drake \"true+c\" = with its TFJob controller, --reconcile; gang pods and jobs = bound ones)\n", scheds[0])
		if gang.stalled != "" {
			fmt.Printf("NOT ALL GANGS BOUND: %d of %d jobs whole after %s; %d jobs partial > %v\n",
				gang.fullJobs, gang.jobs, gang.stalled, gang.partialOver, *partialMax)
		}
	}

	path := *out
	if path == "" {
		path = filepath.Join("bench", "results", "bench-e2e-"+time.Now().UTC().Format("20060102-150405")+".csv")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fail("%v", err)
	}
	f, err := os.Create(path)
	if err != nil {
		fail("%v", err)
	}
	w := csv.NewWriter(f)
	// the first eleven columns are those of the plain-only CSV; the gang
	// phase adds one row (round "gang") and the columns after them
	_ = w.Write([]string{"time", "round", "scheduler", "drake", "nodes", "pods", "create_seconds", "bind_seconds", "server_seconds", "pods_per_second", "ratio_drake_over_plain",
		"workload", "jobs", "jobs_per_second", "ratio_over_plain_alone", "pods_created_seconds", "first_bind_seconds",
		"max_partial_seconds", "max_partial_job", "jobs_partial_over_limit", "partial_limit_seconds", "max_schedule_spread_seconds", "max_nodes_per_job", "gang_members_bound",
		"jobs_created", "pods_expected", "ended_early"})
	now := time.Now().UTC().Format(time.RFC3339)
	for _, r := range results {
		_ = w.Write([]string{now, strconv.Itoa(r.round), r.scheduler, strconv.FormatBool(r.drakeInvolved), strconv.Itoa(*nodes),
			strconv.Itoa(r.pods), f2(r.createSeconds), f2(r.bindSeconds), f2(r.serverSeconds), f2(r.podsPerSecond), f2(ratio),
			"plain", "", "", rel(r.podsPerSecond), "", "", "", "", "", "", "", "", "", "", "", ""})
	}
	if g := gang; g != nil {
		_ = w.Write([]string{now, "gang", *withDrake, "true", strconv.Itoa(*nodes),
			itoa(g.boundPods), f2(g.createSeconds), f2(g.bindSeconds), f2(g.serverSeconds), f2(g.podsPerSecond), f2(ratio),
			fmt.Sprintf("tfjob-1ps-%dw", *gangWorkers), itoa(g.fullJobs), f2(g.jobsPerSecond), rel(g.podsPerSecond),
			f2(g.podsSeenSeconds), f2(g.firstBindSeconds), f2(g.maxPartial.Seconds()), g.maxPartialJob, itoa(g.partialOver),
			f2(partialMax.Seconds()), f2(g.serverMaxSpread), itoa(g.nodesPerJobMax), f2(g.gangBound),
			itoa(g.jobs), itoa(g.jobs * g.podsPerJob), g.stalled})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fail("csv: %v", err)
	}
	f.Close()
	fmt.Printf("wrote %s\n", path)
	if gang != nil && (gang.stalled != "" || gang.partialOver > 0) {
		fail("gang phase: %d of %d jobs bound whole, %d partial for more than %v", gang.fullJobs, gang.jobs, gang.partialOver, *partialMax)
	}
}

// diagnostics prints where the time went, from the components' own metrics:
// each scheduler's mean scheduling-algorithm time per pod (the extender calls
// happen inside it), drake's mean handling time per verb, and the API
// server's mean latency of pods/binding.
func diagnostics(cfg *rest.Config) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return
	}
	admin := &http.Client{Transport: rt, Timeout: 10 * time.Second}
	fmt.Println()
	for _, v := range []string{"DRAKE_SCHEDULER_URL", "DRAKE_PLAIN_SCHEDULER_URL", "DRAKE_PLAIN_NOBATCH_SCHEDULER_URL"} {
		if u := os.Getenv(v); u != "" {
			m := scrape(admin, u+"/metrics")
			fmt.Printf("%-34s scheduling algorithm %6.1f ms/pod over %.0f pods\n", v, 1000*m["scheduler_scheduling_algorithm_duration_seconds_sum"]/m["scheduler_scheduling_algorithm_duration_seconds_count"], m["scheduler_scheduling_algorithm_duration_seconds_count"])
		}
	}
	m := scrape(admin, cfg.Host+"/metrics")
	var bs, bc float64
	for k, v := range m {
		if strings.Contains(k, `subresource="binding"`) && strings.Contains(k, `verb="POST"`) {
			if strings.HasPrefix(k, "apiserver_request_duration_seconds_sum{") {
				bs += v
			} else if strings.HasPrefix(k, "apiserver_request_duration_seconds_count{") {
				bc += v
			}
		}
	}
	fmt.Printf("%-34s POST pods/binding %6.1f ms mean over %.0f\n", "kube-apiserver", 1000*bs/bc, bc)
	dc := drakeHTTP()
	if dc == nil {
		return
	}
	drakeVerbs(scrape(dc, os.Getenv("DRAKE_METRICS_URL")))
}

func drakeVerbs(m map[string]float64) {
	calls := 0.0
	for _, verb := range []string{"filter", "prioritize", "bind"} {
		sum := m[`drake_request_duration_seconds_sum{verb="`+verb+`"}`]
		cnt := m[`drake_request_duration_seconds_count{verb="`+verb+`"}`]
		calls += cnt
		if cnt == 0 {
			fmt.Printf("%-34s %-10s no calls\n", "drake", verb)
			continue
		}
		fmt.Printf("%-34s %-10s %8.2f ms mean over %.0f calls\n", "drake", verb, 1000*sum/cnt, cnt)
	}
	// kube-scheduler's extender client keeps few idle HTTP/1.1 connections,
	// so calls made while binds are held open new ones, each a TLS handshake
	if acc, ok := m["drake_connections_accepted_total"]; ok && calls > 0 {
		fmt.Printf("%-34s connections accepted %.0f (HTTP/2: %.0f) for %.0f verb calls (%.2f per call)\n", "drake", acc, m["drake_connections_http2_total"], calls, acc/calls)
	}
}

// apiWrites is kube-apiserver's write count by resource (kit.APIWrites),
// or nil.
func apiWrites(cfg *rest.Config) map[string]float64 {
	c, err := kit.AdminHTTP(cfg)
	if err != nil {
		return nil
	}
	m, err := kit.APIWrites(context.Background(), c, cfg.Host)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-e2e: API writes: %v\n", err)
		return nil
	}
	return m
}

// schedulerMetrics scrapes the kube-scheduler that has drake as extender.
func schedulerMetrics(cfg *rest.Config) map[string]float64 {
	u := os.Getenv("DRAKE_SCHEDULER_URL")
	c, err := kit.AdminHTTP(cfg)
	if u == "" || err != nil {
		return nil
	}
	return scrape(c, u+"/metrics")
}

// schedulerDelta prints what drake's kube-scheduler did between two
// scrapes: scheduling attempts by result, the mean algorithm time per
// attempt, and the time per attempt spent in each extension point, so a
// gang phase shows whether its pods wait in that serial cycle, and where.
func schedulerDelta(a, b map[string]float64) {
	if a == nil || b == nil {
		return
	}
	d := func(k string) float64 { return b[k] - a[k] }
	attempts := 0.0
	for _, r := range []string{"scheduled", "unschedulable", "error"} {
		n := 0.0
		for k := range b {
			if strings.HasPrefix(k, "scheduler_schedule_attempts_total{") && strings.Contains(k, `result="`+r+`"`) {
				n += d(k)
			}
		}
		attempts += n
		fmt.Printf("%-34s attempts %-13s %6.0f\n", "kube-scheduler (gang phase)", r, n)
	}
	if attempts == 0 {
		return
	}
	alg := d("scheduler_scheduling_algorithm_duration_seconds_sum")
	fmt.Printf("%-34s scheduling algorithm %.2f ms per attempt\n", "kube-scheduler (gang phase)", 1000*alg/attempts)
	points := map[string]float64{}
	for k := range b {
		const pre = `scheduler_framework_extension_point_duration_seconds_sum{`
		if !strings.HasPrefix(k, pre) {
			continue
		}
		i := strings.Index(k, `extension_point="`)
		if i < 0 {
			continue
		}
		ep := k[i+len(`extension_point="`):]
		ep = ep[:strings.IndexByte(ep, '"')]
		points[ep] += d(k)
	}
	for _, ep := range slices.Sorted(maps.Keys(points)) {
		if points[ep] > 0 {
			fmt.Printf("%-34s %-20s %7.2f ms per attempt\n", "kube-scheduler (gang phase)", ep, 1000*points[ep]/attempts)
		}
	}
}

// drakeHTTP: a client for drake's /metrics (kit.DrakeHTTP).
func drakeHTTP() *http.Client { return kit.DrakeHTTP() }

// gangDiagnostics prints drake's verb times since its restart with the
// controller (the gang phase only) and returns how many pods drake's gang
// barrier bound (drake_gang_members_bound_total).
func gangDiagnostics(cfg *rest.Config) float64 {
	_ = cfg
	dc := drakeHTTP()
	if dc == nil {
		return -1
	}
	m := scrape(dc, os.Getenv("DRAKE_METRICS_URL"))
	fmt.Println()
	drakeVerbs(m)
	fmt.Printf("%-34s members bound through the gang barrier %.0f; waves timed out %.0f, rolled back %.0f\n", "drake",
		m["drake_gang_members_bound_total"], m[`drake_gang_waves_total{outcome="timed_out"}`],
		m[`drake_gang_waves_total{outcome="rolled_back"}`])
	return m["drake_gang_members_bound_total"]
}

// scrape reads Prometheus text into "name{labels}" -> value (kit.Scrape).
func scrape(c *http.Client, url string) map[string]float64 {
	out, err := kit.Scrape(c, url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-e2e: scrape %s: %v\n", url, err)
	}
	return out
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench-e2e: "+format+"\n", a...)
	os.Exit(1)
}

// newNamespace creates ns and waits for its default service account; it
// exits on failure.
func newNamespace(ctx context.Context, cs kubernetes.Interface, ns string) {
	if err := kit.NewNamespace(ctx, cs, ns); err != nil {
		fail("%v", err)
	}
}

func phase(cs kubernetes.Interface, round int, sched string, n, workers int, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ns := fmt.Sprintf("bench-%d-%s", round, sched)
	newNamespace(ctx, cs, ns)
	r, err := kit.PlainPhase(ctx, cs, ns, sched, n, workers)
	if err != nil {
		fail("%v", err)
	}
	return result{round: round, scheduler: sched, pods: n, createSeconds: r.CreateSeconds, bindSeconds: r.BindSeconds,
		serverSeconds: r.ServerSeconds, podsPerSecond: r.PodsPerSecond}
}

// createParallel: kit.CreateParallel, exiting on failure.
func createParallel(ctx context.Context, n, workers int, create func(k int) (string, error)) time.Duration {
	d, err := kit.CreateParallel(ctx, n, workers, create)
	if err != nil {
		fail("%v", err)
	}
	return d
}

// watchPods: kit.WatchPods, exiting on failure.
func watchPods(ctx context.Context, cs kubernetes.Interface, ns, rv string, seen func(p *corev1.Pod, deleted bool) bool) {
	if err := kit.WatchPods(ctx, cs, ns, rv, seen); err != nil {
		fail("%v", err)
	}
}
