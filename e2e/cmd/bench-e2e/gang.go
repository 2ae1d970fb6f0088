package main

// The gang phase: drake restarted with its TFJob controller (--reconcile,
// gang admission on by default), then --gang-jobs TFJobs of 1 PS + N one-GPU
// workers created as fast as possible. Throughput is measured as for plain
// pods, from the first TFJob create request to the last pod binding seen on a
// watch, and cross-checked with the objects' own timestamps. The same watch
// tracks every job's bound-pod count over time: a job with some but not all
// of its pods bound is "partial", and the longest such interval is reported
// (drake's bind barrier should keep it near zero).

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"drake.invalid/e2e/internal/kit"
)

var tfjobGVR = kit.TFJobGVR

const jobLabel = kit.JobLabel

type gangResult struct {
	jobs, podsPerJob int
	createSeconds    float64 // first TFJob create sent -> last create answered
	podsSeenSeconds  float64 // first TFJob create sent -> last of the controller's pods seen on the watch
	firstBindSeconds float64 // first TFJob create sent -> first binding seen
	bindSeconds      float64 // first TFJob create sent -> last binding seen (= last job fully bound)
	serverSeconds    float64 // first TFJob creationTimestamp -> last PodScheduled transition (1 s resolution)
	podsPerSecond    float64
	jobsPerSecond    float64
	maxPartial       time.Duration // longest time any job had 0 < bound < size, on the watch
	maxPartialJob    string
	partialOver      int     // jobs partial for longer than the threshold
	serverMaxSpread  float64 // max over jobs of last - first PodScheduled time (1 s resolution)
	nodesPerJobMax   int
	gangBound        float64 // drake_gang_members_bound_total during the phase
	fullJobs         int     // jobs with every pod bound at the end
	boundPods        int     // pods bound at the end
	stalled          string  // why the phase ended before every job was bound ("" if it did not)
}

// enableReconciler installs the TFJob CRD and restarts drake with its
// controller (kit.EnableReconciler); the restart inherits the rest of the
// environment (DRAKE_API_QPS/BURST from hack/bench-e2e.sh).
func enableReconciler(root string) {
	took, err := kit.EnableReconciler(root)
	if err != nil {
		fail("%v", err)
	}
	fmt.Printf("\ndrake restarted with --reconcile (gang admission on) in %.1fs\n", took.Seconds())
}

// gangJob: 1 PS (no GPU) + workers one-GPU workers, running until deleted.
func gangJob(ns, name string, workers int) *unstructured.Unstructured {
	replica := func(n int, gpu bool) map[string]any {
		res := map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}
		if gpu {
			res["limits"] = map[string]any{"nvidia.com/gpu": "1"}
		}
		return map[string]any{
			"replicas": int64(n), "restartPolicy": "Never",
			"template": map[string]any{"spec": map[string]any{
				"automountServiceAccountToken": false,
				"containers": []any{map[string]any{
					"name": "tensorflow", "image": "example.invalid/tf:1", "resources": res,
				}},
			}},
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"runPolicy":      map[string]any{"cleanPodPolicy": "None"},
			"tfReplicaSpecs": map[string]any{"PS": replica(1, false), "Worker": replica(workers, true)},
		},
	}}
}

// jobTrack is one job's state on the watch.
type jobTrack struct {
	bound        map[types.UID]bool
	partialSince time.Time // zero when not partial
	longest      time.Duration
	full         time.Time
}

// gangPhase ends when every job is bound whole, or, so that a stuck gang
// is reported rather than waited for, when no pod has been bound for stall
// (after the first binding) or the phase has taken timeout.
func gangPhase(cfg *rest.Config, cs kubernetes.Interface, jobs, workers, parallel int, partialMax, stall, timeout time.Duration) gangResult {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fail("dynamic client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	ns := "bench-gang"
	newNamespace(ctx, cs, ns)
	size := workers + 1
	total := jobs * size
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fail("list: %v", err)
	}

	var mu sync.Mutex
	track := map[string]*jobTrack{}
	seen := map[types.UID]bool{}
	var lastSeen, firstBound, lastBound time.Time
	boundTotal := 0
	done := make(chan struct{})
	// update applies one pod event to its job; called with mu held.
	update := func(p *corev1.Pod, deleted bool, now time.Time) {
		job := p.Labels[jobLabel]
		if job == "" {
			return
		}
		if !seen[p.UID] {
			seen[p.UID] = true
			lastSeen = now
		}
		j := track[job]
		if j == nil {
			j = &jobTrack{bound: map[types.UID]bool{}}
			track[job] = j
		}
		isBound := p.Spec.NodeName != "" && !deleted
		if isBound == j.bound[p.UID] {
			return
		}
		if isBound {
			j.bound[p.UID] = true
			boundTotal++
			if firstBound.IsZero() {
				firstBound = now
			}
			lastBound = now
		} else {
			delete(j.bound, p.UID)
			boundTotal--
		}
		n := len(j.bound)
		switch {
		case n > 0 && n < size:
			if j.partialSince.IsZero() {
				j.partialSince = now
			}
		default:
			if !j.partialSince.IsZero() {
				if d := now.Sub(j.partialSince); d > j.longest {
					j.longest = d
				}
				j.partialSince = time.Time{}
			}
			if n == size && j.full.IsZero() {
				j.full = now
			}
		}
	}
	go watchPods(ctx, cs, ns, list.ResourceVersion, func(p *corev1.Pod, deleted bool) bool {
		mu.Lock()
		defer mu.Unlock()
		update(p, deleted, time.Now())
		full := 0
		for _, j := range track {
			if len(j.bound) == size {
				full++
			}
		}
		if full == jobs && boundTotal == total {
			close(done)
			return true
		}
		return false
	})

	start := time.Now()
	created := createParallel(ctx, jobs, parallel, func(k int) (string, error) {
		obj := gangJob(ns, fmt.Sprintf("g-%04d", k), workers)
		_, err := dyn.Resource(tfjobGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
		return "tfjob " + obj.GetName(), err
	})
	stalled := ""
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
		}
		mu.Lock()
		lb := lastBound
		mu.Unlock()
		switch {
		case time.Since(start) > timeout:
			stalled = fmt.Sprintf("phase deadline %v", timeout)
		case !lb.IsZero() && time.Since(lb) > stall:
			stalled = fmt.Sprintf("no binding for %v", stall)
		default:
			continue
		}
		break wait
	}
	mu.Lock()
	res := gangResult{jobs: jobs, podsPerJob: size, createSeconds: created.Seconds(),
		podsSeenSeconds: lastSeen.Sub(start).Seconds(), firstBindSeconds: firstBound.Sub(start).Seconds(),
		bindSeconds: lastBound.Sub(start).Seconds(), boundPods: boundTotal, stalled: stalled}
	var lastFull time.Time
	now := time.Now()
	for name, j := range track {
		if len(j.bound) == size {
			res.fullJobs++
			if j.full.After(lastFull) {
				lastFull = j.full
			}
		}
		l := j.longest
		if !j.partialSince.IsZero() {
			l = now.Sub(j.partialSince)
		}
		if l > res.maxPartial {
			res.maxPartial, res.maxPartialJob = l, name
		}
		if l > partialMax {
			res.partialOver++
		}
	}
	mu.Unlock()
	if stalled != "" {
		fmt.Printf("gang: phase ended early (%s): %d of %d jobs bound whole, %d of %d pods bound\n",
			stalled, res.fullJobs, jobs, res.boundPods, total)
	}
	// with every job bound these are total/bind_s and jobs/bind_s; otherwise
	// the rates of what was bound, up to its last binding
	res.podsPerSecond = float64(res.boundPods) / res.bindSeconds
	res.jobsPerSecond = float64(res.fullJobs) / lastFull.Sub(start).Seconds()
	res.serverSeconds, res.serverMaxSpread, res.nodesPerJobMax = gangServerView(ctx, cs, dyn, ns)
	return res
}

// gangServerView: from the objects themselves (second resolution), the span
// first TFJob creationTimestamp -> last PodScheduled=True transition, the
// widest spread of PodScheduled times within one job, and the most nodes
// any one job was placed on.
func gangServerView(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns string) (span, spread float64, maxNodes int) {
	tj, err := dyn.Resource(tfjobGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(tj.Items) == 0 {
		return -1, -1, -1
	}
	var first time.Time
	for _, j := range tj.Items {
		if t := j.GetCreationTimestamp().Time; first.IsZero() || t.Before(first) {
			first = t
		}
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return -1, -1, -1
	}
	lo, hi := map[string]time.Time{}, map[string]time.Time{}
	nodes := map[string]map[string]bool{}
	var last time.Time
	for _, p := range pods.Items {
		job := p.Labels[jobLabel]
		if nodes[job] == nil {
			nodes[job] = map[string]bool{}
		}
		nodes[job][p.Spec.NodeName] = true
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionTrue {
				continue
			}
			t := c.LastTransitionTime.Time
			if t.After(last) {
				last = t
			}
			if l, ok := lo[job]; !ok || t.Before(l) {
				lo[job] = t
			}
			if h, ok := hi[job]; !ok || t.After(h) {
				hi[job] = t
			}
		}
	}
	for job := range lo {
		if d := hi[job].Sub(lo[job]).Seconds(); d > spread {
			spread = d
		}
	}
	for _, n := range nodes {
		if len(n) > maxNodes {
			maxNodes = len(n)
		}
	}
	return last.Sub(first).Seconds(), spread, maxNodes
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "no"
}

func itoa(i int) string { return strconv.Itoa(i) }
