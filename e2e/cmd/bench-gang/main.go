// bench-gang is the gang contention benchmark: one cluster of kwok GPU
// nodes, one job list per seed replayed against each arm in turn, the
// cluster emptied between arms:
//
//   - drake: gang-only mode, drake's TFJob controller creating the pods
//     (kube-scheduler "default-scheduler" with drake as extender);
//   - in-tree: kube-scheduler "gang-scheduler" with GenericWorkload and
//     GangScheduling on (KEP-4671); the driver creates, per job, a PodGroup
//     (scheduling.k8s.io/v1alpha2) with gang minCount = PS + workers and the
//     same pods, joined by spec.schedulingGroup.podGroupName;
//   - no-gang: the same pods through kube-scheduler "plain-scheduler" alone.
//
// Jobs (jobs.go) are rigid TFJob-shaped gangs of 1 PS + workers, 1 to 64
// GPUs, submitted within --submit-window so that --demand times the
// cluster's GPUs waits; each runs --run-min..--run-max once its gang is whole
// (arm.go). Per arm it reports batch makespan, jobs/s, arrival -> whole gang
// (p50, p99), GPU-seconds held by partial gangs (and the part beyond
// --window into a partial interval), the longest partial interval,
// deadlocks, and API writes per pod (apiserver_request_total, POST, PUT,
// PATCH and DELETE, before/after, leases and node status left out, the
// driver's run-for annotations taken out).
//
// Then the cost-of-being-an-extender arm (cost.go): plain pods through
// kube-scheduler alone, with a trivial extender, with drake (filter only),
// with drake (filter and prioritize), and with drake in simple mode (its own
// entry: filter, bind, preempt).
//
// hack/bench-gang.sh brings the cluster up and down; see e2e/README.md.
package main

import (
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"drake.invalid/e2e/internal/gangbench"
	"drake.invalid/e2e/internal/kit"
)

type opts struct {
	seeds                         []uint64
	arms                          []gangbench.Arm
	demand                        float64
	sizes                         []sizeWeight
	runMin, runMax, window, stall time.Duration
	armTimeout, sample, late      time.Duration
	costPods, costRounds          int
	costScheds                    []string
	root, clusterDir, out         string
}

type bench struct {
	o      opts
	cfg    *rest.Config
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	admin  *http.Client
	procs  []string // the kube-scheduler processes of the cluster
	gpus   int      // nvidia.com/gpu of all nodes
	maxGPU int      // most nvidia.com/gpu on one node
	nodes  int
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench-gang: "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	var o opts
	seeds := flag.String("seeds", "1,2,3", "seeds of the job lists (one list per seed, replayed against every arm; empty: only the extender-cost arm)")
	arms := flag.String("arms", "drake,in-tree,no-gang", "arms, from drake, in-tree, no-gang (the order rotates per seed)")
	flag.Float64Var(&o.demand, "demand", 2.5, "GPUs of the job list / GPUs of the cluster")
	sizes := flag.String("sizes", "1:14,2:12,4:14,8:20,16:16,32:14,64:10", "job sizes in GPUs and their weights")
	flag.DurationVar(&o.runMin, "run-min", 10*time.Second, "shortest run time of a job once whole")
	flag.DurationVar(&o.runMax, "run-max", 30*time.Second, "longest run time")
	flag.DurationVar(&o.window, "submit-window", 5*time.Second, "every job arrives within this time of the arm's start")
	flag.DurationVar(&o.stall, "stall", 60*time.Second, "deadlock: every job has arrived, none runs, and none became whole or finished for this long")
	flag.DurationVar(&o.armTimeout, "arm-timeout", 8*time.Minute, "deadline of one arm")
	flag.DurationVar(&o.sample, "sample", time.Second, "sampling interval of the GPUs busy / held by partial gangs")
	flag.DurationVar(&o.late, "window", 2*time.Second, "GPU-seconds held by a partial gang count as beyond the barrier window after this long into its partial interval")
	flag.IntVar(&o.costPods, "cost-pods", 600, "plain pods per phase of the extender-cost arm (0: skip it)")
	flag.IntVar(&o.costRounds, "cost-rounds", 2, "rounds of the extender-cost arm (order reversed every other round)")
	costScheds := flag.String("cost-schedulers", "plain-scheduler,trivial-scheduler,drake-filter-scheduler,drake-prio-scheduler,simple-scheduler",
		"profiles of the extender-cost arm")
	flag.StringVar(&o.root, "root", ".", "drake's source tree (config/crd/, hack/)")
	flag.StringVar(&o.clusterDir, "cluster-dir", os.Getenv("DRAKE_CLUSTER_DIR"), "the cluster's state folder")
	flag.StringVar(&o.out, "out", filepath.Join("bench", "results", "bench-gang"), "folder of the CSV and PNG")
	flag.Parse()
	if strings.TrimSpace(*seeds) != "" {
		for _, s := range strings.Split(*seeds, ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				fail("--seeds: %v", err)
			}
			o.seeds = append(o.seeds, v)
		}
	}
	var err error
	if o.arms, err = gangbench.ParseArms(*arms, []string{"drake", "in-tree", "no-gang"}, ""); err != nil {
		fail("%v", err)
	}
	if o.sizes, err = parseSizes(*sizes); err != nil {
		fail("%v", err)
	}
	if *costScheds != "" {
		o.costScheds = strings.Split(*costScheds, ",")
	}
	if o.runMax < o.runMin || o.demand <= 0 {
		fail("need run-min <= run-max and demand > 0")
	}

	b := &bench{o: o}
	b.cfg, err = clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	b.cfg.QPS, b.cfg.Burst = 2000, 4000
	b.cfg.UserAgent = "drake-bench-gang"
	if b.cs, err = kubernetes.NewForConfig(b.cfg); err != nil {
		fail("client: %v", err)
	}
	if b.dyn, err = dynamic.NewForConfig(b.cfg); err != nil {
		fail("dynamic client: %v", err)
	}
	if b.admin, err = kit.AdminHTTP(b.cfg); err != nil {
		fail("admin client: %v", err)
	}
	b.procs = gangbench.SchedulerProcs(o.clusterDir)
	b.readNodes()
	took, err := kit.EnableReconciler(o.root)
	if err != nil {
		fail("%v", err)
	}
	fmt.Printf("bench-gang: drake restarted with its TFJob controller in %.1fs; schedulers: %s\n", took.Seconds(), strings.Join(b.procs, ", "))
	fmt.Printf("bench-gang: %d nodes, %d nvidia.com/gpu (at most %d on one node)\n", b.nodes, b.gpus, b.maxGPU)

	stamp := time.Now().UTC().Format("20060102-150405")
	var results []armResult
	for si, seed := range o.seeds {
		jobs := makeJobs(seed, o.sizes, b.gpus, o.demand, b.maxGPU, o.runMin, o.runMax, o.window)
		fmt.Printf("\nseed %d: %s\n", seed, describe(jobs, b.gpus))
		order := append([]gangbench.Arm(nil), o.arms[si%len(o.arms):]...)
		order = append(order, o.arms[:si%len(o.arms)]...)
		for _, a := range order {
			fmt.Printf("seed %d, arm %s (kube-scheduler %q)\n", seed, a.Name, a.Scheduler)
			r := b.runArm(a, seed, jobs)
			fmt.Printf("  %s\n", r.line())
			results = append(results, r)
		}
	}
	var cost []costResult
	if o.costPods > 0 && o.costRounds > 0 && len(o.costScheds) > 0 {
		cost = b.costArm()
	}
	b.report(stamp, results, cost)
}

func (b *bench) readNodes() {
	ctx, cancel := contextTimeout(time.Minute)
	defer cancel()
	l, err := b.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		fail("nodes: %v", err)
	}
	for _, n := range l.Items {
		q := n.Status.Allocatable[kit.GPUResource]
		g := int(q.Value())
		b.gpus += g
		if g > b.maxGPU {
			b.maxGPU = g
		}
		b.nodes++
	}
	if b.gpus == 0 {
		fail("no node has nvidia.com/gpu")
	}
}

func (r armResult) line() string {
	if r.err != "" {
		return "ERROR: " + r.err
	}
	ms := "DNF"
	if !math.IsNaN(r.makespan) {
		ms = fmt.Sprintf("%.1fs", r.makespan)
	}
	dl := ""
	if r.deadlock {
		dl = fmt.Sprintf(", DEADLOCK (%d jobs never whole)", r.stuck)
	}
	return fmt.Sprintf("%d/%d jobs done, makespan %s, whole p50 %.1fs p99 %.1fs, partial %.0f GPU-s (%.0f beyond window), longest partial %.2fs, %.1f writes/pod%s",
		r.done, r.jobs, ms, r.ttwP50, r.ttwP99, r.partialGPUs, r.partialLate, r.longest, r.writesPerPod, dl)
}
