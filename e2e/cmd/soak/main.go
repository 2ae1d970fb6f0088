// soak runs drake's TFJob controller and gang barrier in steady state for a
// long time and checks that nothing accumulates (the soak's target).
//
// hack/soak.sh starts a gang-mode cluster (default 200 standard kwok nodes
// plus the large, MIG and AMD ones cluster-up.sh adds) and runs this driver,
// which:
//   - installs the TFJob CRD and restarts drake with its controller
//     (kit.EnableReconciler, as bench-e2e and the e2e suite do);
//   - for --duration, submits small TFJobs (1 PS + 1..4 GPU workers,
//     min-instances sometimes below the replicas, cleanPodPolicy varied),
//     with exponential inter-arrival times of mean 1/--rate, held while
//     --max-waiting jobs are not yet bound whole (the queue stays bounded);
//     every pod finishes through kwok's kwok.drake.dev/run-for after a time
//     drawn per job from [--run-min, --run-max]; all draws come from --seed;
//   - deletes each job a time drawn from [--linger-min, --linger-max] after
//     it Succeeded, as users do, so the run reaches a steady state;
//   - every --sample, records drake's RSS (VmRSS of /proc/PID/status, PID
//     from the cluster's pids/drake.pid) and open descriptors (entries of
//     /proc/PID/fd), with the jobs submitted, waiting, running, succeeded
//     and deleted, to a CSV; a gnuplot PNG of RSS and descriptors follows;
//   - then stops submitting, waits (at most --drain) for every job to succeed
//     and be deleted, and (at most --settle) for drake's descriptors to come
//     back to where they were before the first job.
//
// It checks, prints a summary table and one "soak: N passed, N failed" line
// (make check sums those), and exits 1 if any check failed:
//   - every submitted job Succeeded (none Failed, none left after the drain);
//   - no job was partial for longer than --partial-max (the e2e suite's
//     definition, kit.Gangs: some member bound and live while a role is below
//     its minimum; an ordinary wave's Bindings are posted together);
//   - no pod was recreated (seen again under its name with a new UID);
//   - drake is the same process at the end (not crashed, not restarted);
//   - RSS flat: the median of the run's last quarter is at most --rss-ratio
//     times the median of its second quarter (the first quarter is warm-up:
//     caches fill and the allocator reaches its working set);
//   - descriptors flat: the last quarter's median at most --fd-slack above
//     the second quarter's;
//   - descriptors back: after the drain, at most --fd-slack above the count
//     before the first job (idle keep-alive connections close after drake's
//     --request-timeout, 30 s, hence --settle).
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"drake.invalid/e2e/internal/kit"
)

const runForKey = "kwok.drake.dev/run-for"

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "soak: "+format+"\n", a...)
	os.Exit(1)
}

// jobSpec is one drawn job.
type jobSpec struct {
	workers, min, gpus int
	runFor             time.Duration
	linger             time.Duration
	clean              string
}

type jobRec struct {
	spec                   jobSpec
	created                time.Time
	succeeded, failed      time.Time
	deleteSent, deleteSeen time.Time
	deleteErr              string
}

type sample struct {
	t                                       float64
	phase                                   string
	rss                                     int64
	fds                                     int
	submitted, waiting, running, done, fail int
	deleted, livePods                       int
}

type driver struct {
	ns    string
	dyn   dynamic.Interface
	gangs *kit.Gangs

	mu      sync.Mutex
	jobs    map[string]*jobRec
	changed chan struct{}
	held    time.Duration   // arrivals held back by --max-waiting
	reasons map[string]int  // drake's Events of note, by reason
	scaled  map[string]bool // jobs that were ScaledDown (their recreated workers are scaling, not loss)
	seenEv  map[string]bool
	podsNow func() int
}

func (d *driver) nudge() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

func drawSpec(r *rand.Rand, o *opts) jobSpec {
	s := jobSpec{workers: 1 + r.IntN(4)}
	s.min = s.workers
	if s.workers > 1 && r.Float64() < 0.4 {
		s.min = 1 + r.IntN(s.workers-1)
	}
	s.gpus = []int{1, 1, 1, 2, 2, 4}[r.IntN(6)]
	s.runFor = o.runMin + time.Duration(r.Int64N(int64(o.runMax-o.runMin)+1))
	s.runFor = s.runFor.Round(time.Second)
	s.linger = o.lingerMin + time.Duration(r.Int64N(int64(o.lingerMax-o.lingerMin)+1))
	s.clean = []string{"None", "None", "Running", "All"}[r.IntN(4)]
	return s
}

// tfjob builds the TFJob: a PS of 1 cpu and workers of 2 cpu and 8Gi per
// GPU (a standard node has 32 cpu, 256Gi and 8 GPUs), every pod annotated to
// finish after runFor.
func tfjob(ns, name string, s jobSpec) *unstructured.Unstructured {
	replica := func(n int, cpu, mem string, gpus int) map[string]any {
		res := map[string]any{"requests": map[string]any{"cpu": cpu, "memory": mem}}
		if gpus > 0 {
			res["limits"] = map[string]any{"nvidia.com/gpu": strconv.Itoa(gpus)}
		}
		return map[string]any{
			"replicas": int64(n), "restartPolicy": "Never",
			"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{runForKey: s.runFor.String()}},
				"spec": map[string]any{
					"automountServiceAccountToken": false,
					"containers": []any{map[string]any{
						"name": "tensorflow", "image": "example.invalid/tf:1", "resources": res,
					}},
				},
			},
		}
	}
	spec := map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": s.clean},
		"tfReplicaSpecs": map[string]any{
			"PS":     replica(1, "1", "4Gi", 0),
			"Worker": replica(s.workers, strconv.Itoa(2*s.gpus), strconv.Itoa(8*s.gpus)+"Gi", s.gpus),
		},
	}
	if s.min < s.workers {
		spec["min-instances"] = int64(s.min)
		spec["max-instances"] = int64(s.workers)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// finalState is "Succeeded" or "Failed" when the TFJob's condition of that
// type is True, else "".
func finalState(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["status"] != "True" {
			continue
		}
		if t, _ := m["type"].(string); t == "Succeeded" || t == "Failed" {
			return t
		}
	}
	return ""
}

func (d *driver) onTFJob(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	now := time.Now()
	d.mu.Lock()
	rec := d.jobs[u.GetName()]
	if rec == nil {
		d.mu.Unlock()
		return
	}
	final := ""
	if deleted {
		if rec.deleteSeen.IsZero() {
			rec.deleteSeen = now
		}
	} else {
		switch final = finalState(u); {
		case final == "Succeeded" && rec.succeeded.IsZero():
			rec.succeeded = now
		case final == "Failed" && rec.failed.IsZero():
			rec.failed = now
		default:
			final = ""
		}
	}
	d.mu.Unlock()
	if final != "" {
		d.gangs.Finish(u.GetName(), now)
	}
	d.nudge()
}

// noteReasons are drake's Events the soak reports: gang trouble, scaling
// and migration.
var noteReasons = map[string]bool{"GangRolledBack": true, "GangReleased": true, "GangMemberForceDeleted": true,
	"ScaledDown": true, "ScaledUp": true, "MigrationStarted": true, "Migrated": true, "MigrationAbandoned": true,
	"GangWaiting": true, "TemplateAnnotationsStripped": true}

func (d *driver) onEvent(obj any) {
	ev, ok := obj.(*corev1.Event)
	if !ok || !noteReasons[ev.Reason] {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seenEv[string(ev.UID)] {
		return
	}
	d.seenEv[string(ev.UID)] = true
	d.reasons[ev.Reason]++
	if ev.Reason == "ScaledDown" {
		d.scaled[ev.InvolvedObject.Name] = true
	}
}

func (d *driver) onPod(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		d.gangs.Apply(p, deleted, time.Now())
		d.nudge()
	}
}

// counts: jobs submitted, waiting (not yet whole, not final), running
// (whole, not final), succeeded, failed, deleted (gone from the server).
func (d *driver) counts(now time.Time) (sub, wait, run, done, failed, del int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, r := range d.jobs {
		sub++
		switch {
		case !r.deleteSeen.IsZero():
			del++
		}
		switch {
		case !r.succeeded.IsZero():
			done++
		case !r.failed.IsZero():
			failed++
		case d.gangs.View(name, now).IsWhole:
			run++
		default:
			wait++
		}
	}
	return
}

// deleter deletes each Succeeded job once its linger has passed.
func (d *driver) deleter(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		var due []string
		d.mu.Lock()
		for name, r := range d.jobs {
			if !r.succeeded.IsZero() && r.deleteSent.IsZero() && now.Sub(r.succeeded) >= r.spec.linger {
				due = append(due, name)
			}
		}
		d.mu.Unlock()
		for _, name := range due {
			bg := metav1.DeletePropagationBackground
			err := d.dyn.Resource(kit.TFJobGVR).Namespace(d.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
			d.mu.Lock()
			if err == nil || strings.Contains(err.Error(), "not found") {
				d.jobs[name].deleteSent = time.Now()
			} else {
				d.jobs[name].deleteErr = err.Error() // tried again at the next tick
			}
			d.mu.Unlock()
		}
	}
}

type opts struct {
	duration, sample, drain, settle, partialMax time.Duration
	runMin, runMax, lingerMin, lingerMax        time.Duration
	rate                                        float64
	maxWaiting                                  int
	seed                                        uint64
	rssRatio                                    float64
	fdSlack                                     int
	csvPath, pngPath, root, clusterDir, ns      string
	nodes                                       int
	fill                                        float64
}

func main() {
	var o opts
	flag.DurationVar(&o.duration, "duration", 30*time.Minute, "how long jobs arrive")
	flag.Float64Var(&o.rate, "rate", 0.5, "mean job arrivals per second (exponential inter-arrival times)")
	flag.IntVar(&o.maxWaiting, "max-waiting", 24, "hold arrivals while this many jobs are not yet bound whole")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of every draw (shapes, run times, lingers, arrivals)")
	flag.DurationVar(&o.runMin, "run-min", 20*time.Second, "shortest run time of a job's pods (kwok run-for)")
	flag.DurationVar(&o.runMax, "run-max", 90*time.Second, "longest run time")
	flag.DurationVar(&o.lingerMin, "linger-min", 5*time.Second, "a job is deleted at least this long after it Succeeded")
	flag.DurationVar(&o.lingerMax, "linger-max", 60*time.Second, "and at most this long")
	flag.DurationVar(&o.sample, "sample", 5*time.Second, "sampling interval of drake's RSS and descriptors")
	flag.DurationVar(&o.drain, "drain", 8*time.Minute, "after the arrivals, how long every job gets to succeed and be deleted")
	flag.DurationVar(&o.settle, "settle", 2*time.Minute, "after the drain, how long drake's descriptors get to come back")
	flag.DurationVar(&o.partialMax, "partial-max", 5*time.Second, "a job partial for longer than this fails the soak")
	flag.Float64Var(&o.rssRatio, "rss-ratio", 1.10, "largest allowed last-quarter / second-quarter median RSS")
	flag.IntVar(&o.fdSlack, "fd-slack", 5, "allowed descriptor growth (steady state, and after the drain)")
	flag.StringVar(&o.csvPath, "csv", "", "CSV of the samples (default bench/results/soak/soak-<time>.csv)")
	flag.StringVar(&o.pngPath, "png", "", "PNG of RSS and descriptors (default: the CSV's name with .png)")
	flag.StringVar(&o.root, "root", ".", "drake's source tree (config/crd/, hack/cluster-drake.sh)")
	flag.StringVar(&o.clusterDir, "cluster-dir", os.Getenv("DRAKE_CLUSTER_DIR"), "the cluster's state folder (pids/drake.pid)")
	flag.StringVar(&o.ns, "namespace", "soak", "namespace of the jobs")
	flag.IntVar(&o.nodes, "nodes", 0, "standard node count (kwok-node-0..N-1), for --fill and the record")
	flag.Float64Var(&o.fill, "fill", 0.9, "fraction of the standard nodes whose 8 GPUs other tenants hold for the whole run (plain pods placed with spec.nodeName), so the TFJobs keep the rest busy")
	flag.Parse()
	if o.runMax < o.runMin || o.lingerMax < o.lingerMin || o.rate <= 0 || o.duration <= 0 {
		fail("bad flags: need run-min <= run-max, linger-min <= linger-max, rate > 0, duration > 0")
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	if o.csvPath == "" {
		o.csvPath = filepath.Join("bench", "results", "soak", "soak-"+stamp+".csv")
	}
	if o.pngPath == "" {
		o.pngPath = strings.TrimSuffix(o.csvPath, ".csv") + ".png"
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.UserAgent = "drake-soak"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail("client: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fail("dynamic client: %v", err)
	}

	took, err := kit.EnableReconciler(o.root)
	if err != nil {
		fail("%v", err)
	}
	pidFile := filepath.Join(o.clusterDir, "pids", "drake.pid")
	pid, err := kit.ReadPID(pidFile)
	if err != nil {
		fail("drake's pid: %v", err)
	}
	fmt.Printf("soak: drake restarted with --reconcile in %.1fs, pid %d\n", took.Seconds(), pid)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nsCtx, nsCancel := context.WithTimeout(ctx, time.Minute)
	if err := kit.NewNamespace(nsCtx, cs, o.ns); err != nil {
		fail("%v", err)
	}
	nsCancel()

	fillers := fillNodes(ctx, cs, &o)

	d := &driver{ns: o.ns, dyn: dyn, gangs: kit.NewGangs(), jobs: map[string]*jobRec{}, changed: make(chan struct{}, 1),
		reasons: map[string]int{}, scaled: map[string]bool{}, seenEv: map[string]bool{}}
	pf := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(o.ns))
	podInf := pf.Core().V1().Pods().Informer()
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.onPod(obj, false) },
		UpdateFunc: func(_, obj any) { d.onPod(obj, false) },
		DeleteFunc: func(obj any) { d.onPod(obj, true) },
	})
	d.podsNow = func() int { return len(podInf.GetStore().ListKeys()) }
	evInf := pf.Core().V1().Events().Informer()
	_, _ = evInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.onEvent(obj) },
		UpdateFunc: func(_, obj any) { d.onEvent(obj) },
	})
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, o.ns, nil)
	tfInf := df.ForResource(kit.TFJobGVR).Informer()
	_, _ = tfInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.onTFJob(obj, false) },
		UpdateFunc: func(_, obj any) { d.onTFJob(obj, false) },
		DeleteFunc: func(obj any) { d.onTFJob(obj, true) },
	})
	pf.Start(ctx.Done())
	df.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInf.HasSynced, tfInf.HasSynced, evInf.HasSynced) {
		fail("informers did not sync")
	}
	go d.deleter(ctx)

	// the sampler writes one CSV row per --sample
	if err := os.MkdirAll(filepath.Dir(o.csvPath), 0o755); err != nil {
		fail("%v", err)
	}
	cf, err := os.Create(o.csvPath)
	if err != nil {
		fail("%v", err)
	}
	cw := csv.NewWriter(cf)
	_ = cw.Write([]string{"t_s", "phase", "rss_kib", "fds", "jobs_submitted", "jobs_waiting", "jobs_running",
		"jobs_succeeded", "jobs_failed", "jobs_deleted", "pods_live", "pods_in_namespace"})
	var smu sync.Mutex
	var samples []sample
	phase := "idle"
	var pidChanged []string
	start := time.Now()
	takeSample := func() {
		now := time.Now()
		s := sample{t: now.Sub(start).Seconds(), rss: -1, fds: -1}
		smu.Lock()
		s.phase = phase
		smu.Unlock()
		if p, err := kit.ReadPID(pidFile); err != nil || p != pid {
			smu.Lock()
			pidChanged = append(pidChanged, fmt.Sprintf("t=%.0fs pid file: %d (%v)", s.t, p, err))
			smu.Unlock()
		}
		if rss, fds, err := kit.ProcUsage(pid); err == nil {
			s.rss, s.fds = rss, fds
		} else {
			smu.Lock()
			pidChanged = append(pidChanged, fmt.Sprintf("t=%.0fs drake pid %d: %v", s.t, pid, err))
			smu.Unlock()
		}
		s.submitted, s.waiting, s.running, s.done, s.fail, s.deleted = d.counts(now)
		s.livePods = d.gangs.LivePods()
		inNS := d.podsNow()
		smu.Lock()
		samples = append(samples, s)
		smu.Unlock()
		_ = cw.Write([]string{strconv.FormatFloat(s.t, 'f', 1, 64), s.phase, strconv.FormatInt(s.rss, 10), strconv.Itoa(s.fds),
			strconv.Itoa(s.submitted), strconv.Itoa(s.waiting), strconv.Itoa(s.running), strconv.Itoa(s.done),
			strconv.Itoa(s.fail), strconv.Itoa(s.deleted), strconv.Itoa(s.livePods), strconv.Itoa(inNS)})
		cw.Flush()
		if s.t > 0 && int(s.t)%60 < int(o.sample.Seconds()) {
			fmt.Printf("soak: t=%4.0fs %-6s rss %6d KiB fds %3d | jobs %4d submitted %3d waiting %3d running %4d succeeded %d failed %4d deleted | %d pods live\n",
				s.t, s.phase, s.rss, s.fds, s.submitted, s.waiting, s.running, s.done, s.fail, s.deleted, s.livePods)
		}
	}
	setPhase := func(p string) {
		smu.Lock()
		phase = p
		smu.Unlock()
	}
	takeSample() // before the first job: the descriptor baseline
	sampCtx, sampStop := context.WithCancel(ctx)
	sampDone := make(chan struct{})
	go func() {
		defer close(sampDone)
		tick := time.NewTicker(o.sample)
		defer tick.Stop()
		for {
			select {
			case <-sampCtx.Done():
				return
			case <-tick.C:
				takeSample()
			}
		}
	}()

	// arrivals
	setPhase("run")
	runStart := time.Now()
	end := runStart.Add(o.duration)
	rng := rand.New(rand.NewPCG(o.seed, 0x50a4))
	next := runStart
	k := 0
	createErrs := 0
arrivals:
	for {
		next = next.Add(time.Duration(rng.ExpFloat64() / o.rate * float64(time.Second)))
		spec := drawSpec(rng, &o)
		if !next.Before(end) {
			break
		}
		time.Sleep(time.Until(next)) // the arrival process itself, not a wait for state
		// the queue bound: hold while too many jobs wait to be bound whole
		heldFrom := time.Now()
		for {
			_, w, _, _, _, _ := d.counts(time.Now())
			if w < o.maxWaiting {
				break
			}
			if !time.Now().Before(end) {
				break arrivals
			}
			select {
			case <-d.changed:
			case <-time.After(time.Until(end)):
			}
		}
		d.mu.Lock()
		d.held += time.Since(heldFrom)
		d.mu.Unlock()
		name := fmt.Sprintf("s-%05d", k)
		k++
		d.mu.Lock()
		d.jobs[name] = &jobRec{spec: spec, created: time.Now()}
		d.mu.Unlock()
		d.gangs.Expect(name, kit.Need{"ps": 1, "worker": spec.min})
		for try := 0; ; try++ {
			cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := dyn.Resource(kit.TFJobGVR).Namespace(o.ns).Create(cctx, tfjob(o.ns, name, spec), metav1.CreateOptions{})
			ccancel()
			if err == nil || strings.Contains(err.Error(), "already exists") {
				break
			}
			createErrs++
			if try == 5 {
				fail("create tfjob %s: %v", name, err)
			}
			time.Sleep(time.Second) // retry back-off after an API error
		}
	}
	runEnd := time.Now()
	setPhase("drain")
	fmt.Printf("soak: arrivals stopped after %v: %d jobs submitted; draining (at most %v)\n",
		runEnd.Sub(runStart).Round(time.Second), k, o.drain)

	// drain: every job final and deleted, no pod left in the namespace
	drainDeadline := time.Now().Add(o.drain)
	drained := false
	for {
		sub, _, _, _, _, del := d.counts(time.Now())
		if del == sub && d.podsNow() == 0 {
			drained = true
			break
		}
		_, _, _, _, failed, _ := d.counts(time.Now())
		if failed > 0 && del+failed == sub && d.gangs.LivePods() == 0 {
			break // failed jobs are kept for inspection; nothing else will move
		}
		if time.Now().After(drainDeadline) {
			break
		}
		select {
		case <-d.changed:
		case <-time.After(time.Second):
		}
	}
	drainEnd := time.Now()
	fmt.Printf("soak: drain %s after %v\n", map[bool]string{true: "complete", false: "INCOMPLETE"}[drained],
		drainEnd.Sub(runEnd).Round(time.Second))

	// settle: descriptors back to the baseline (idle keep-alive connections
	// close after drake's --request-timeout)
	setPhase("settle")
	smu.Lock()
	fd0 := samples[0].fds
	smu.Unlock()
	settleDeadline := time.Now().Add(o.settle)
	fdEnd := -1
	for {
		if _, fds, err := kit.ProcUsage(pid); err == nil {
			fdEnd = fds
			if fds <= fd0+o.fdSlack {
				break
			}
		}
		if time.Now().After(settleDeadline) {
			break
		}
		time.Sleep(time.Second) // polling /proc: the state itself
	}
	takeSample()
	sampStop()
	<-sampDone
	cw.Flush()
	cf.Close()

	// drake's own counters
	var waves map[string]float64
	if c := kit.DrakeHTTP(); c != nil {
		waves, _ = kit.Scrape(c, os.Getenv("DRAKE_METRICS_URL"))
	}

	report(&o, d, fillers, samples, pidChanged, runStart, runEnd, drainEnd, drained, fd0, fdEnd, createErrs, waves)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[int(math.Ceil(p*float64(len(s))))-1]
}

type check struct {
	name, detail string
	ok           bool
}

func report(o *opts, d *driver, fillers int, samples []sample, pidChanged []string, runStart, runEnd, drainEnd time.Time,
	drained bool, fd0, fdEnd, createErrs int, m map[string]float64) {
	now := time.Now()
	// the run's quarters, by time since the arrivals began
	t0 := samples[0].t
	var runS []sample
	for _, s := range samples {
		if s.phase == "run" && s.rss >= 0 {
			runS = append(runS, s)
		}
	}
	T := runEnd.Sub(runStart).Seconds()
	tRun0 := t0
	for _, s := range samples {
		if s.phase == "run" {
			tRun0 = s.t
			break
		}
	}
	quarter := func(q int) (rss, fds []float64) {
		lo, hi := tRun0+T*float64(q-1)/4, tRun0+T*float64(q)/4
		for _, s := range runS {
			if s.t >= lo && s.t < hi {
				rss = append(rss, float64(s.rss))
				fds = append(fds, float64(s.fds))
			}
		}
		return
	}
	r2, f2 := quarter(2)
	r4, f4 := quarter(4)
	rssRatio := median(r4) / median(r2)
	var maxRSS int64
	var maxFD int
	for _, s := range samples {
		if s.rss > maxRSS {
			maxRSS = s.rss
		}
		if s.fds > maxFD {
			maxFD = s.fds
		}
	}
	// least-squares slope of RSS over the second half of the run, KiB/min
	var sx, sy, sxx, sxy, n float64
	for _, s := range runS {
		if s.t-tRun0 >= T/2 {
			x, y := (s.t-tRun0)/60, float64(s.rss)
			sx, sy, sxx, sxy, n = sx+x, sy+y, sxx+x*x, sxy+x*y, n+1
		}
	}
	slope := math.NaN()
	if n >= 2 && n*sxx-sx*sx != 0 {
		slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	}

	// jobs
	views := d.gangs.All(now)
	var worst kit.GangJobView
	over, recreated, scaledRecreated, intervals := 0, 0, 0, 0
	var waits []float64
	d.mu.Lock()
	sub, succeeded, failed, deleted, notFinal := len(d.jobs), 0, 0, 0, 0
	var failedNames, leftNames []string
	pods := 0
	minBelow := 0
	for _, v := range views {
		r := d.jobs[v.Name]
		if r == nil {
			continue
		}
		pods += 1 + r.spec.workers
		if r.spec.min < r.spec.workers {
			minBelow++
		}
		if v.Longest > worst.Longest {
			worst = v
		}
		if v.Longest > o.partialMax {
			over++
		}
		if d.scaled[v.Name] {
			scaledRecreated += v.Recreated
		} else {
			recreated += v.Recreated
		}
		intervals += v.Intervals
		if !v.Whole.IsZero() {
			waits = append(waits, v.Whole.Sub(r.created).Seconds())
		}
	}
	for name, r := range d.jobs {
		switch {
		case !r.succeeded.IsZero():
			succeeded++
		case !r.failed.IsZero():
			failed++
			failedNames = append(failedNames, name)
		default:
			notFinal++
			leftNames = append(leftNames, name)
		}
		if !r.deleteSeen.IsZero() {
			deleted++
		}
	}
	held := d.held
	var reasons []string
	for r, n := range d.reasons {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(reasons)
	d.mu.Unlock()
	sort.Strings(failedNames)
	sort.Strings(leftNames)

	checks := []check{
		{"every job Succeeded", fmt.Sprintf("%d of %d succeeded, %d failed %v, %d not final %v; drain complete: %v",
			succeeded, sub, failed, head(failedNames), notFinal, head(leftNames), drained),
			sub > 0 && succeeded == sub && drained},
		{"no partial gang > " + o.partialMax.String(), fmt.Sprintf("longest %.3fs (job %s, short: %s); %d jobs over; %d partial intervals in all",
			worst.Longest.Seconds(), orDash(worst.Name), orDash(worst.LongestWhy), over, intervals), over == 0},
		{"no pod recreated", fmt.Sprintf("%d pods seen again under a new UID (and %d workers recreated by ScaledUp after a ScaledDown)", recreated, scaledRecreated), recreated == 0},
		{"drake the same process", fmt.Sprintf("pid %s", strings.Join(append([]string{"unchanged"}, pidChanged...), "; ")), len(pidChanged) == 0},
		{fmt.Sprintf("RSS flat (Q4/Q2 median <= %.2f)", o.rssRatio), fmt.Sprintf("Q2 median %.0f KiB, Q4 median %.0f KiB, ratio %.3f; second-half slope %.1f KiB/min; max %d KiB",
			median(r2), median(r4), rssRatio, slope, maxRSS), len(r2) > 0 && len(r4) > 0 && rssRatio <= o.rssRatio},
		{fmt.Sprintf("fds flat (Q4 - Q2 median <= %d)", o.fdSlack), fmt.Sprintf("Q2 median %.0f, Q4 median %.0f; max %d",
			median(f2), median(f4), maxFD), len(f2) > 0 && len(f4) > 0 && median(f4)-median(f2) <= float64(o.fdSlack)},
		{fmt.Sprintf("fds back after the drain (<= start + %d)", o.fdSlack), fmt.Sprintf("start %d, after drain and settle %d", fd0, fdEnd),
			fdEnd >= 0 && fdEnd <= fd0+o.fdSlack},
	}

	fmt.Println()
	fmt.Printf("soak summary: %d standard nodes (+ cluster-up's large, MIG, AMD), seed %d, arrivals %v at %.2f/s (held %v by --max-waiting %d), drain %v\n",
		o.nodes, o.seed, runEnd.Sub(runStart).Round(time.Second), o.rate, held.Round(time.Second), o.maxWaiting, drainEnd.Sub(runEnd).Round(time.Second))
	fmt.Printf("  other tenants: %d standard nodes' GPUs held by plain pods (--fill %.2f)\n", fillers, o.fill)
	fmt.Printf("  jobs %d (%d with min-instances below replicas), pods %d, create retries %d\n", sub, minBelow, pods, createErrs)
	fmt.Printf("  drake's Events of note: %s\n", orDash(strings.Join(reasons, ", ")))
	fmt.Printf("  submit -> whole: median %.1fs, p95 %.1fs, max %.1fs (%d jobs)\n", median(waits), pct(waits, 0.95), pct(waits, 1), len(waits))
	if m != nil {
		fmt.Printf("  drake: members bound through the barrier %.0f, waves timed out %.0f, rolled back %.0f\n",
			m["drake_gang_members_bound_total"], m[`drake_gang_waves_total{outcome="timed_out"}`], m[`drake_gang_waves_total{outcome="rolled_back"}`])
	}
	fmt.Println()
	fmt.Printf("  %-40s %-6s %s\n", "check", "result", "detail")
	passed, failedN := 0, 0
	for _, c := range checks {
		res := "ok"
		if c.ok {
			passed++
		} else {
			res = "FAIL"
			failedN++
		}
		fmt.Printf("  %-40s %-6s %s\n", c.name, res, c.detail)
	}
	fmt.Printf("\nsamples: %s\n", o.csvPath)
	if err := plot(o.csvPath, o.pngPath); err != nil {
		fmt.Printf("plot: %v\n", err)
	} else {
		fmt.Printf("plot:    %s\n", o.pngPath)
	}
	fmt.Printf("soak: %d passed, %d failed\n", passed, failedN)
	if failedN > 0 {
		os.Exit(1)
	}
}

func head(s []string) []string {
	if len(s) > 5 {
		return append(s[:5:5], "...")
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// plot draws RSS (MiB, left axis) and descriptors (right axis) over time
// with gnuplot's png terminal, with the jobs running as a thin line.
func plot(csvPath, pngPath string) error {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		return fmt.Errorf("gnuplot not installed (hack/install-deps.sh installs gnuplot-nox)")
	}
	script := fmt.Sprintf(`set terminal png size 1100,600
set output %q
set datafile separator ","
set key autotitle columnhead outside bottom center horizontal
set title "drake under the soak: RSS and open descriptors"
set xlabel "seconds since the controller started"
set ylabel "RSS (MiB)"
set y2label "open fds / jobs running"
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
set grid
plot %q using 1:($3/1024) with lines lw 2 title "RSS (MiB)", \
     %q using 1:4 axes x1y2 with lines lw 2 title "open fds", \
     %q using 1:7 axes x1y2 with lines lw 1 dt 2 title "jobs running"
`, pngPath, csvPath, csvPath, csvPath)
	cmd := exec.Command("gnuplot")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gnuplot: %v: %s", err, out)
	}
	return nil
}

// fillNodes places one plain pod holding all 8 GPUs (and 1 cpu) on each of
// the first --fill of the standard nodes, with spec.nodeName as another
// tenant's workload would arrive already placed, and waits until kwok runs
// them all. In gang mode these pods never reach drake, but drake's snapshot
// counts them, so the TFJobs share the remaining nodes.
func fillNodes(ctx context.Context, cs kubernetes.Interface, o *opts) int {
	n := int(math.Round(o.fill * float64(o.nodes)))
	if n <= 0 {
		return 0
	}
	ns := o.ns + "-tenants"
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := kit.NewNamespace(cctx, cs, ns); err != nil {
		fail("%v", err)
	}
	f := false
	for i := 0; i < n; i++ {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("tenant-%04d", i), Namespace: ns},
			Spec: corev1.PodSpec{
				NodeName: fmt.Sprintf("kwok-node-%d", i), AutomountServiceAccountToken: &f,
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "example.invalid/tenant:1",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("8Gi")},
						Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")},
					}}},
			},
		}
		if _, err := cs.CoreV1().Pods(ns).Create(cctx, p, metav1.CreateOptions{}); err != nil {
			fail("tenant pod %s: %v", p.Name, err)
		}
	}
	for {
		l, err := cs.CoreV1().Pods(ns).List(cctx, metav1.ListOptions{})
		running := 0
		if err == nil {
			for _, p := range l.Items {
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
		}
		if running == n {
			break
		}
		if cctx.Err() != nil {
			fail("only %d of %d tenant pods Running", running, n)
		}
		time.Sleep(time.Second) // polling the pods' phase
	}
	fmt.Printf("soak: %d tenant pods hold the GPUs of kwok-node-0..%d\n", n, n-1)
	return n
}
