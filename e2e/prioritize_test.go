package e2e

// prioritize_test.go - simple mode with drake's score on prioritize: a
// plain GPU pod goes where drake's fragmentation score puts it (of two
// 8-GPU nodes the test adds, onto the one a filler pod took half of,
// keeping the other whole), and with the score off kube-scheduler's own
// plugins, which spread, put it on the other. Needs the controller (drake's node and pod
// caches), so it restarts drake with it (withReconciler).

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// twoNodes adds two kwok nodes of the standard shape (32 cores, 256Gi,
// 8 GPUs) labelled drake.dev/prio-test=ns, so the test's pods choose
// between them alone whatever other tests left elsewhere, and removes them
// when the test ends.
func twoNodes(t *testing.T, e *env, ns string) (a, b string) {
	t.Helper()
	q := resource.MustParse
	names := []string{ns + "-a", ns + "-b"}
	for _, n := range names {
		res := corev1.ResourceList{corev1.ResourceCPU: q("32"), corev1.ResourceMemory: q("256Gi"),
			corev1.ResourcePods: q("110"), "nvidia.com/gpu": q("8")}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": n,
					"drake.dev/prio-test": ns, "nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}},
			Status: corev1.NodeStatus{Allocatable: res, Capacity: res},
		}
		if _, err := e.client.CoreV1().Nodes().Create(ctxFor(t, 30*time.Second), node, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create node %s: %v", n, err)
		}
		name := n
		t.Cleanup(func() {
			_ = e.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	poll(t, 60*time.Second, "the test's nodes Ready", func() (bool, error) {
		for _, n := range names {
			node, err := e.client.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), n, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			ready := false
			for _, c := range node.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready || len(node.Spec.Taints) > 0 {
				return false, nil
			}
		}
		return true, nil
	})
	return names[0], names[1]
}

// placeGPUPod pins a filler (4 GPUs, 16 cores) to scoredNode, then places
// a plain 4-GPU pod that may go to either test node, and returns the node
// kube-scheduler bound it to.
func placeGPUPod(t *testing.T, e *env, ns, scoredNode string) string {
	t.Helper()
	e.createPod(t, ns, "filler", withNodeSelector("kubernetes.io/hostname", scoredNode),
		withResource("nvidia.com/gpu", "4"), withResource("cpu", "16"))
	e.waitPhase(t, ns, "filler", "Running", 60*time.Second)
	before, _ := requests(e.metrics(t), "prioritize")
	e.createPod(t, ns, "plain", withNodeSelector("drake.dev/prio-test", ns),
		withResource("nvidia.com/gpu", "4"))
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
	scoredNode, _ := twoNodes(t, e, ns)
	if got := placeGPUPod(t, e, ns, scoredNode); got != scoredNode {
		t.Errorf("with drake's score the 4-GPU pod went to %s, not %s (whose other 4 GPUs it fills, keeping whole nodes free)", got, scoredNode)
	}

	os.Setenv("DRAKE_PRIORITIZE", "false")
	e.drakeCtl(t, "restart")
	if got := placeGPUPod(t, e, ns, scoredNode); got == scoredNode {
		t.Errorf("with drake's score off the 4-GPU pod still went to %s: kube-scheduler's spreading plugins should prefer the idle node, so the test cannot tell the score's effect", got)
	}
}
