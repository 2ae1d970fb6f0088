package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gang mode (hack/cluster-up.sh --mode gang): drake's extender entry lists
// managedResources [{name: drake.dev/gang, ignoredByScheduler: true}].
// No node advertises drake.dev/gang. kube-scheduler must not count it when
// fitting, must send the pod to drake, and the node agent (kwok here) must
// run the pod.
func TestGangModeIgnoredResourceIsScheduledAndRuns(t *testing.T) {
	e := need(t)
	if e.mode != "gang" {
		t.Skip("needs the cluster in gang mode (DRAKE_EXTENDER_MODE=gang)")
	}
	ns := e.namespace(t)
	before := e.metrics(t)
	e.createPod(t, ns, "member", withResource("drake.dev/gang", "1"))
	p := e.waitPhase(t, ns, "member", corev1.PodRunning, 60*time.Second)
	after := e.metrics(t)
	for _, verb := range []string{"filter", "bind"} {
		_, b := requests(before, verb)
		_, a := requests(after, verb)
		if a <= b {
			t.Errorf("drake %s not called for a drake.dev/gang pod: %v -> %v", verb, b, a)
		}
	}
	node, err := e.client.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), p.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := node.Status.Allocatable["drake.dev/gang"]; ok {
		t.Fatalf("node %s advertises drake.dev/gang; the test needs it not to", node.Name)
	}
	t.Logf("pod requesting drake.dev/gang=1 runs on %s, which does not advertise it", p.Spec.NodeName)
}

// Gang mode: a pod without drake.dev/gang never reaches drake.
func TestGangModeSkipsPlainPods(t *testing.T) {
	e := need(t)
	if e.mode != "gang" {
		t.Skip("needs the cluster in gang mode (DRAKE_EXTENDER_MODE=gang)")
	}
	ns := e.namespace(t)
	before := e.metrics(t)
	e.createPod(t, ns, "plain")
	p := e.waitPhase(t, ns, "plain", corev1.PodRunning, 60*time.Second)
	after := e.metrics(t)
	for _, verb := range []string{"filter", "bind"} {
		b, _ := requests(before, verb)
		a, _ := requests(after, verb)
		if a != b {
			t.Errorf("drake %s called for a plain pod in gang mode: %v -> %v", verb, b, a)
		}
	}
	recs := e.bindingAudit(t, ns, "plain")
	if len(recs) != 1 || !strings.HasPrefix(recs[0].UserAgent, "kube-scheduler") {
		t.Errorf("want one binding by kube-scheduler's own binder, got %+v", recs)
	}
	t.Logf("plain pod bound to %s by kube-scheduler, drake not called", p.Spec.NodeName)
}

// Simple mode: nothing tells kube-scheduler to ignore drake.dev/gang, so a
// pod requesting it fits no node.
func TestSimpleModeUnadvertisedResourceUnschedulable(t *testing.T) {
	e := need(t)
	if e.mode == "gang" {
		t.Skip("simple mode only")
	}
	ns := e.namespace(t)
	e.createPod(t, ns, "member", withResource("drake.dev/gang", "1"))
	ev := e.waitEvent(t, ns, "member", "FailedScheduling", "drake.dev/gang", 60*time.Second)
	t.Logf("event: %s", ev.Message)
}
