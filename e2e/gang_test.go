package e2e

// Gang scheduling on the real control plane: admission plans a
// TFJob's PS and workers and ungates them together; kube-scheduler places
// each pod through drake's filter (pinned to the plan) and drake's bind
// barrier binds the whole wave or nothing. These tests use GPUs as the
// scarce resource, so the cluster's shape (DRAKE_NODES x DRAKE_NODE_GPUS,
// default 4 x 8) decides what fits.

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func clusterShape(t *testing.T) (nodes, gpus int) {
	nodes, _ = strconv.Atoi(os.Getenv("DRAKE_NODES"))
	gpus, _ = strconv.Atoi(os.Getenv("DRAKE_NODE_GPUS"))
	if nodes < 2 || gpus < 8 {
		t.Skipf("needs at least 2 nodes of 8 GPUs (have %d x %d)", nodes, gpus)
	}
	return nodes, gpus
}

// gpuJob is a TFJob spec: one PS without GPUs and `workers` workers of
// `gpu` GPUs each; every pod completes after runFor ("" = runs until
// deleted).
func gpuJob(workers, gpu int, runFor string) map[string]any {
	var ann map[string]string
	if runFor != "" {
		ann = map[string]string{"kwok.drake.dev/run-for": runFor}
	}
	ps := tensorflow(1, "Never", ann)
	w := tensorflow(workers, "Never", ann)
	c := w["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["resources"] = map[string]any{
		"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
		"limits":   map[string]any{"nvidia.com/gpu": strconv.Itoa(gpu)},
	}
	return map[string]any{
		"runPolicy":      map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{"PS": ps, "Worker": w},
	}
}

// waitGPUsIdle waits until no running pod anywhere holds a GPU, so earlier
// tests cannot take capacity these tests count on.
func waitGPUsIdle(t *testing.T, e *env) {
	t.Helper()
	poll(t, 120*time.Second, "GPUs idle", func() (bool, error) {
		l, err := e.client.CoreV1().Pods("").List(ctxFor(t, 10*time.Second), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range l.Items {
			if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			if holdsGPU(p) {
				return false, nil
			}
		}
		return true, nil
	})
}

func firstKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}

func nodesOf(t *testing.T, e *env, ns, job string) (map[string]int, string) {
	t.Helper()
	nodes := map[string]int{}
	psNode := ""
	for _, p := range jobPods(t, e, ns, job) {
		nodes[p.Spec.NodeName]++
		if strings.Contains(p.Name, "-ps-") {
			psNode = p.Spec.NodeName
		}
		if plan := p.Annotations["drake.dev/planned-node"]; plan != p.Spec.NodeName {
			t.Errorf("pod %s bound to %q, planned on %q", p.Name, p.Spec.NodeName, plan)
		}
	}
	return nodes, psNode
}

func TestGangOnePSSevenWorkersLandsOnOneNode(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	before := e.metrics(t)["drake_gang_members_bound_total"]
	bw := watchBindings(t, e, ns, map[string]int{"onenode": 8})
	createTFJob(t, ns, "onenode", gpuJob(7, 1, ""))
	poll(t, 120*time.Second, "onenode bound whole", func() (bool, error) { return bw.allBound(), nil })
	bw.check(t, normalWaveMax, true)
	// Every one of the 8 bindings was posted by drake's barrier for a
	// complete wave, none outside it.
	e.waitBarrierBound(t, before, 8)
	nodes, _ := nodesOf(t, e, ns, "onenode")
	if len(nodes) != 1 {
		t.Errorf("1 PS + 7 one-GPU workers spread over %d nodes %v; want one 8-GPU node", len(nodes), nodes)
	}
	job := waitState(t, ns, "onenode", "Running", 60*time.Second)
	// The plan is recorded on the TFJob: one node holding all 8 pods.
	plan := job.GetAnnotations()["drake.dev/plan"]
	if !strings.Contains(plan, `"ps":1`) || !strings.Contains(plan, `"workers":7`) ||
		!strings.Contains(plan, fmt.Sprintf(`"nodes":{%q:8}`, firstKey(nodes))) {
		t.Errorf("drake.dev/plan on the TFJob is %q; want 1 PS and 7 workers on one node", plan)
	}
	ev := e.jobEvent(t, ns, "onenode", "GangAdmitted", 30*time.Second)
	if !strings.Contains(ev.Message, "on 1 node") {
		t.Errorf("GangAdmitted says %q", ev.Message)
	}
}

func TestGangMemberWhosePlannedNodeIsNotOfferedIsReplannedAmongTheCandidates(t *testing.T) {
	e := withReconciler(t)
	nodesN, _ := clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	// drake's planner does not read pod affinity: on an idle cluster it
	// plans this job on the first node by name, while kube-scheduler offers
	// its filter only the node of the anchor pod the job's pods must be
	// beside, the last one. Filter re-plans each member there.
	target := fmt.Sprintf("kwok-node-%d", nodesN-1)
	// The anchor requests nothing, so the target does not look fuller to
	// the planner's best fit than the other idle nodes.
	e.createPod(t, ns, "anchor", func(p *corev1.Pod) {
		p.Labels = map[string]string{"e2e-anchor": "yes"}
		p.Spec.NodeName = target
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	})
	spec := gpuJob(3, 1, "")
	for _, r := range []string{"PS", "Worker"} {
		tmpl := spec["tfReplicaSpecs"].(map[string]any)[r].(map[string]any)["template"].(map[string]any)
		tmpl["spec"].(map[string]any)["affinity"] = map[string]any{"podAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"labelSelector": map[string]any{"matchLabels": map[string]any{"e2e-anchor": "yes"}},
				"topologyKey":   "kubernetes.io/hostname",
			}},
		}}
	}
	bw := watchBindings(t, e, ns, map[string]int{"pinned": 4})
	createTFJob(t, ns, "pinned", spec)
	// well within the 60 s after which a wave with nothing bound is released
	poll(t, 40*time.Second, "pinned bound whole", func() (bool, error) { return bw.allBound(), nil })
	bw.check(t, normalWaveMax, true)
	replanned := 0
	for _, p := range jobPods(t, e, ns, "pinned") {
		if p.Spec.NodeName != target {
			t.Errorf("pod %s bound to %s; its pod affinity allows only %s", p.Name, p.Spec.NodeName, target)
		}
		if p.Annotations["drake.dev/planned-node"] != target {
			replanned++
		}
	}
	if replanned == 0 {
		t.Errorf("every pod was planned on %s already; the test did not exercise re-planning", target)
	}
	evs, err := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == "GangReleased" || ev.Reason == "GangRolledBack" {
			t.Errorf("%s: %s", ev.Reason, ev.Message)
		}
	}
}

func TestGangTooLargeForANodeSpansTheFewestNodesWorkersBesideThePS(t *testing.T) {
	e := withReconciler(t)
	_, gpus := clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	workers := gpus + gpus/2 // one node and a half of one-GPU workers
	bw := watchBindings(t, e, ns, map[string]int{"wide": workers + 1})
	createTFJob(t, ns, "wide", gpuJob(workers, 1, ""))
	poll(t, 120*time.Second, "wide bound whole", func() (bool, error) { return bw.allBound(), nil })
	bw.check(t, normalWaveMax, true)
	nodes, psNode := nodesOf(t, e, ns, "wide")
	if len(nodes) != 2 {
		t.Errorf("%d one-GPU workers spread over %d nodes %v; want 2", workers, len(nodes), nodes)
	}
	if nodes[psNode] != gpus+1 { // the PS and a full node of workers
		t.Errorf("PS node %s holds %d pods; want the PS and %d workers", psNode, nodes[psNode], gpus)
	}
	// Each member was ungated pinned: its planned node first, then the
	// wave's other node, so kube-scheduler searched those two alone.
	for _, p := range jobPods(t, e, ns, "wide") {
		pins := pinnedNodes(p)
		if len(pins) != 2 || pins[0] != p.Annotations["drake.dev/planned-node"] || pins[0] == pins[1] ||
			nodes[pins[0]] == 0 || nodes[pins[1]] == 0 {
			t.Errorf("%s (planned on %s, bound on %s) is pinned to %v; want its planned node, then the wave's other node",
				p.Name, p.Annotations["drake.dev/planned-node"], p.Spec.NodeName, pins)
		}
	}
}

func TestGangTwoJobsOverTheClusterRunOneAfterTheOther(t *testing.T) {
	e := withReconciler(t)
	_, gpus := clusterShape(t)
	waitGPUsIdle(t, e)
	// every node with a whole node's worth of GPUs counts (the standard
	// nodes and the large ones, hack/cluster-up.sh)
	nodesN := gpuNodes(t, e, gpus)
	ns := e.namespace(t)
	// first: whole nodes for all but one node; second: two whole nodes.
	// Together they need one node more than the cluster has.
	firstWorkers, secondWorkers := nodesN-1, 2
	bw := watchBindings(t, e, ns, map[string]int{"first": firstWorkers + 1, "second": secondWorkers + 1})
	createTFJob(t, ns, "first", gpuJob(firstWorkers, gpus, "20s"))
	poll(t, 120*time.Second, "first bound whole", func() (bool, error) { return bw.boundCount("first") == firstWorkers+1, nil })
	createTFJob(t, ns, "second", gpuJob(secondWorkers, gpus, "5s"))
	// drake says what second waits for.
	waitJobsListing(t, e, "second listed by GET /v1/jobs", `"job":"`+ns+`/second"`)
	waitFirstThenSecond(t, e, bw, ns, "first", "second")
	poll(t, 120*time.Second, "second bound whole", func() (bool, error) { return bw.allBound(), nil })
	bw.check(t, normalWaveMax, true)
	ev := e.jobEvent(t, ns, "second", "GangWaiting", 10*time.Second)
	t.Logf("second waited: %s", ev.Message)
	waitState(t, ns, "second", "Succeeded", 120*time.Second)
}

func TestGangTwentySmallJobsAtOnceNeverBindPartially(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	sizes := map[string]int{}
	for i := 0; i < 20; i++ {
		sizes[fmt.Sprintf("small-%02d", i)] = 4
	}
	before := e.metrics(t)["drake_gang_members_bound_total"]
	bw := watchBindings(t, e, ns, sizes)
	for name := range sizes {
		createTFJob(t, ns, name, gpuJob(3, 2, "4s"))
	}
	poll(t, 300*time.Second, "every small job bound whole", func() (bool, error) {
		bw.check(t, normalWaveMax, false)
		if t.Failed() {
			return false, fmt.Errorf("a partial gang was seen")
		}
		return bw.allBound(), nil
	})
	bw.check(t, normalWaveMax, true)
	e.waitBarrierBound(t, before, 80)
}

// waitBarrierBound waits until drake_gang_members_bound_total has risen by
// want since `before`, and fails if it rises past it. drake counts a member
// once the API server has answered its Binding, which may come after a
// watch has shown the pod bound, so one look after the watch can be short.
func (e *env) waitBarrierBound(t *testing.T, before float64, want int) {
	t.Helper()
	pollUntil(t, 30*time.Second, "drake's count of members bound through the barrier", func() (string, error) {
		got := e.metrics(t)["drake_gang_members_bound_total"] - before
		if got > float64(want) {
			return "", fmt.Errorf("drake bound %v pods through the gang barrier; want %d", got, want)
		}
		if got < float64(want) {
			return fmt.Sprintf("%v of %d counted", got, want), nil
		}
		return "", nil
	})
}

func TestGangDrakeKilledDuringTheBindBarrierStillBindsWholeGangs(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	bw := watchBindings(t, e, ns, map[string]int{"barrier": 8})
	createTFJob(t, ns, "barrier", gpuJob(7, 1, ""))
	// As soon as admission has planned the wave, binds are on their way:
	// kill drake then.
	poll(t, 120*time.Second, "barrier admitted", func() (bool, error) {
		for _, p := range jobPods(t, e, ns, "barrier") {
			if p.Annotations["drake.dev/planned-node"] != "" {
				return true, nil
			}
		}
		return false, nil
	})
	killDrake(t, e)
	t.Logf("drake killed with %d of 8 pods bound", bw.boundCount("barrier"))
	e.drakeCtl(t, "start")
	poll(t, 120*time.Second, "barrier bound whole after the restart", func() (bool, error) { return bw.allBound(), nil })
	// A wave cut by the kill is completed by the restarted drake (it counts
	// members already bound); the gap is bounded by the restart, not by luck.
	bw.check(t, gangBound(), true)
	waitState(t, ns, "barrier", "Running", 60*time.Second)
}

// waitJobsListing waits until GET /v1/jobs answers 200 with every one of
// the strings in its body.
func waitJobsListing(t *testing.T, e *env, what string, want ...string) {
	t.Helper()
	jobsURL := strings.TrimSuffix(e.metricsURL, "/metrics") + "/v1/jobs"
	poll(t, 30*time.Second, what, func() (bool, error) {
		resp, err := e.drakeHTTP(t).Get(jobsURL)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				return false, nil
			}
		}
		return resp.StatusCode == 200, nil
	})
}

// waitFirstThenSecond waits until every pod of job first has succeeded,
// failing if second ever held a GPU node beside a running GPU pod of first,
// or had a pod bound before any of first's GPU pods had finished: the second
// job waited whole for the capacity the first freed. first's pods finish one
// by one (each runs for its own run-for), so second may start once enough
// of them have.
func waitFirstThenSecond(t *testing.T, e *env, bw *gangWatch, ns, first, second string) {
	t.Helper()
	poll(t, 120*time.Second, first+"'s pods finished", func() (bool, error) {
		// second's bindings are read before first's pods are listed, so
		// the list is at least as new as the bindings it is held against.
		n := bw.boundCount(second)
		firstPods := jobPods(t, e, ns, first)
		if n > 0 {
			running := map[string]string{} // node -> a running GPU pod of first
			freed := 0
			for _, p := range firstPods {
				if !holdsGPU(p) {
					continue
				}
				switch p.Status.Phase {
				case corev1.PodSucceeded, corev1.PodFailed:
					freed++
				default:
					running[p.Spec.NodeName] = p.Name
				}
			}
			if freed == 0 {
				return false, fmt.Errorf("%s has %d pods bound while every GPU pod of %s still runs",
					second, n, first)
			}
			for _, p := range jobPods(t, e, ns, second) {
				if holdsGPU(p) && p.Spec.NodeName != "" && running[p.Spec.NodeName] != "" {
					return false, fmt.Errorf("%s's %s is bound on %s beside %s's running %s",
						second, p.Name, p.Spec.NodeName, first, running[p.Spec.NodeName])
				}
			}
		}
		for _, p := range firstPods {
			if p.Status.Phase != corev1.PodSucceeded {
				return false, nil
			}
		}
		return true, nil
	})
}

// holdsGPU says whether a pod asks for a GPU.
func holdsGPU(p corev1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits["nvidia.com/gpu"]; ok && !q.IsZero() {
			return true
		}
	}
	return false
}

// jobEvent waits for an Event with the given reason on a job.
func (e *env) jobEvent(t *testing.T, ns, job, reason string, d time.Duration) corev1.Event {
	t.Helper()
	var found corev1.Event
	poll(t, d, reason+" event on "+job, func() (bool, error) {
		l, err := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second), metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + job + ",reason=" + reason,
		})
		if err != nil {
			return false, err
		}
		if len(l.Items) > 0 {
			found = l.Items[0]
			return true, nil
		}
		return false, nil
	})
	return found
}
