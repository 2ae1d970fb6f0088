package e2e

// prioritize_test.go - simple mode with drake's score on prioritize: a
// plain GPU pod goes where drake's fragmentation score puts it (onto the
// idle node a filler pod took half of, keeping whole 8-GPU nodes free), and
// with the score off kube-scheduler's own plugins, which spread, put it
// elsewhere. Needs the controller (drake's node and pod
// caches), so it restarts drake with it (withReconciler).

import (
	"os"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// idleStandardNode is a standard node no live pod uses (other tests of the
// suite leave theirs where they ran), the first by name.
func idleStandardNode(t *testing.T, e *env) string {
	t.Helper()
	nodes, err := e.client.CoreV1().Nodes().List(ctxFor(t, 30*time.Second),
		metav1.ListOptions{LabelSelector: "kwok.drake.dev/shape=standard"})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	pods, err := e.client.CoreV1().Pods("").List(ctxFor(t, 30*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	used := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			used[p.Spec.NodeName] = true
		}
	}
	var idle []string
	for _, n := range nodes.Items {
		if !used[n.Name] {
			idle = append(idle, n.Name)
		}
	}
	if len(idle) == 0 {
		t.Fatalf("every standard node runs a pod: the test needs one idle")
	}
	sort.Strings(idle)
	return idle[0]
}

// placeGPUPod pins a filler (4 GPUs, 16 cores) to scoredNode, then places
// a plain 4-GPU pod and returns the node kube-scheduler bound it to.
func placeGPUPod(t *testing.T, e *env, ns, scoredNode string) string {
	t.Helper()
	e.createPod(t, ns, "filler", withNodeSelector("kubernetes.io/hostname", scoredNode),
		withResource("nvidia.com/gpu", "4"), withResource("cpu", "16"))
	e.waitPhase(t, ns, "filler", "Running", 60*time.Second)
	before, _ := requests(e.metrics(t), "prioritize")
	e.createPod(t, ns, "plain", withResource("nvidia.com/gpu", "4"))
	p := e.waitPhase(t, ns, "plain", "Running", 60*time.Second)
	after, _ := requests(e.metrics(t), "prioritize")
	if after <= before {
		t.Fatalf("kube-scheduler did not call drake's prioritize for the pod (%v calls before, %v after)", before, after)
	}
	for _, name := range []string{"plain", "filler"} {
		zero := int64(0)
		if err := e.client.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), name,
			metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	poll(t, 60*time.Second, "pods gone", func() (bool, error) {
		l, err := e.client.CoreV1().Pods(ns).List(ctxFor(t, 30*time.Second), metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	})
	return p.Spec.NodeName
}

func TestPrioritizeKeepsWholeNodesFree(t *testing.T) {
	e := withReconciler(t)
	if e.mode != "simple" {
		t.Skip("prioritize is registered in simple mode only")
	}
	defer func() { // the other tests run with the default (auto: on)
		os.Unsetenv("DRAKE_PRIORITIZE")
		e.drakeCtl(t, "restart")
	}()

	ns := e.namespace(t)
	scoredNode := idleStandardNode(t, e)
	if got := placeGPUPod(t, e, ns, scoredNode); got != scoredNode {
		t.Errorf("with drake's score the 4-GPU pod went to %s, not %s (whose other 4 GPUs it fills, keeping whole nodes free)", got, scoredNode)
	}

	os.Setenv("DRAKE_PRIORITIZE", "false")
	e.drakeCtl(t, "restart")
	if got := placeGPUPod(t, e, ns, scoredNode); got == scoredNode {
		t.Errorf("with drake's score off the 4-GPU pod still went to %s: kube-scheduler's spreading plugins should prefer an idle node, so the test cannot tell the score's effect", got)
	}
}
