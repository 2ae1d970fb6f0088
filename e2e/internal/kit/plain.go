package kit

// Plain-pod throughput, shared by bench-e2e (kube-scheduler alone vs with
// drake) and bench-gang's cost-of-being-an-extender arm: N small pods for one
// scheduler profile, created as fast as the API allows, watched until every
// one is bound.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// PlainResult is one plain-pod phase.
type PlainResult struct {
	Scheduler     string
	Pods          int
	CreateSeconds float64 // first create sent -> last create answered
	BindSeconds   float64 // first create sent -> last binding seen
	ServerSeconds float64 // first creationTimestamp -> last PodScheduled transition (1 s resolution)
	PodsPerSecond float64
}

// PlainPod is a small pod (10m cpu, 16Mi) for scheduler profile sched.
func PlainPod(ns, name, sched string) *corev1.Pod {
	f := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			SchedulerName:                sched,
			AutomountServiceAccountToken: &f,
			RestartPolicy:                corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: "example.invalid/bench:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
				}},
			}},
		},
	}
}

// PlainPhase creates n plain pods for sched in the existing namespace ns from
// `parallel` goroutines and waits (at most until ctx ends) until every one is
// bound. Throughput = n / (first create sent -> last binding seen).
func PlainPhase(ctx context.Context, cs kubernetes.Interface, ns, sched string, n, parallel int) (PlainResult, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return PlainResult{}, fmt.Errorf("list: %v", err)
	}
	bound := map[string]time.Time{}
	var mu sync.Mutex
	done := make(chan struct{})
	werr := make(chan error, 1)
	go func() {
		err := WatchPods(ctx, cs, ns, list.ResourceVersion, func(p *corev1.Pod, deleted bool) bool {
			if p.Spec.NodeName == "" {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			if _, seen := bound[p.Name]; !seen {
				bound[p.Name] = time.Now()
				if len(bound) == n {
					close(done)
					return true
				}
			}
			return false
		})
		if err != nil {
			werr <- err
		}
	}()
	start := time.Now()
	created, err := CreateParallel(ctx, n, parallel, func(k int) (string, error) {
		p := PlainPod(ns, fmt.Sprintf("p-%05d", k), sched)
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return p.Name, err
	})
	if err != nil {
		return PlainResult{}, err
	}
	select {
	case <-done:
	case err := <-werr:
		return PlainResult{}, err
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		return PlainResult{}, fmt.Errorf("%s: only %d of %d pods bound in time", sched, len(bound), n)
	}
	var last time.Time
	mu.Lock()
	for _, t := range bound {
		if t.After(last) {
			last = t
		}
	}
	mu.Unlock()
	res := PlainResult{Scheduler: sched, Pods: n, CreateSeconds: created.Seconds(), BindSeconds: last.Sub(start).Seconds()}
	res.PodsPerSecond = float64(n) / res.BindSeconds
	res.ServerSeconds = ServerSpan(ctx, cs, ns)
	return res, nil
}

// ServerSpan: first creationTimestamp -> last PodScheduled=True transition
// of the pods of ns, from the objects themselves (second resolution), as a
// cross-check of a watch-timed phase; -1 if there is nothing to measure.
func ServerSpan(ctx context.Context, cs kubernetes.Interface, ns string) float64 {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) == 0 {
		return -1
	}
	var created, scheduled []time.Time
	for _, p := range list.Items {
		created = append(created, p.CreationTimestamp.Time)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				scheduled = append(scheduled, c.LastTransitionTime.Time)
			}
		}
	}
	if len(scheduled) == 0 {
		return -1
	}
	sort.Slice(created, func(i, j int) bool { return created[i].Before(created[j]) })
	sort.Slice(scheduled, func(i, j int) bool { return scheduled[i].Before(scheduled[j]) })
	return scheduled[len(scheduled)-1].Sub(created[0]).Seconds()
}

// CreateParallel creates n objects from `parallel` goroutines, create(k)
// making the k-th; an API rate limit or timeout is retried, anything else
// ends it with that error. Returns how long the creates took.
func CreateParallel(ctx context.Context, n, parallel int, create func(k int) (string, error)) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	start := time.Now()
	for i := 0; i < parallel; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first.Load() == nil {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				for {
					name, err := create(k)
					if err == nil || ctx.Err() != nil {
						break
					}
					if !strings.Contains(err.Error(), "rate") && !strings.Contains(err.Error(), "timeout") {
						first.CompareAndSwap(nil, fmt.Errorf("create %s: %v", name, err))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return time.Since(start), err
	}
	return time.Since(start), nil
}

// WatchPods follows the pods of ns from resourceVersion rv, resuming the
// watch when the server ends it, and calls seen for every pod event until
// seen returns true or ctx ends (nil), or a watch cannot be started (its
// error).
func WatchPods(ctx context.Context, cs kubernetes.Interface, ns, rv string, seen func(p *corev1.Pod, deleted bool) bool) error {
	for {
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch: %v", err)
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			rv = p.ResourceVersion
			if ev.Type == watch.Bookmark {
				continue
			}
			if seen(p, ev.Type == watch.Deleted) {
				w.Stop()
				return nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return nil
		}
	}
}
