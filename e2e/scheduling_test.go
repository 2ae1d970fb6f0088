package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef struct {
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Stage                    string    `json:"stage"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// bindings returns the API server's audit records of successful
// pods/binding creations in ns whose pod name match accepts
// (config/audit-policy.yaml logs only those), in file order.
func (e *env) bindings(t *testing.T, ns string, match func(pod string) bool) []auditEvent {
	t.Helper()
	return e.bindingRecords(t, ns, match, true)
}

// bindingRecords: the Binding requests for ns's pods that match, as the
// API server completed them; with ok, only those it answered 2xx.
func (e *env) bindingRecords(t *testing.T, ns string, match func(pod string) bool, ok bool) []auditEvent {
	t.Helper()
	f, err := os.Open(filepath.Join(e.dir, "logs", "audit.log"))
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Stage == "ResponseComplete" && ev.Verb == "create" && ev.ObjectRef.Subresource == "binding" &&
			ev.ObjectRef.Namespace == ns && match(ev.ObjectRef.Name) && (!ok || ev.ResponseStatus.Code/100 == 2) {
			out = append(out, ev)
		}
	}
	return out
}

// bindingAudit: the successful Bindings of the pod ns/name.
func (e *env) bindingAudit(t *testing.T, ns, name string) []auditEvent {
	t.Helper()
	return e.bindings(t, ns, func(pod string) bool { return pod == name })
}

// A plain pod goes kube-scheduler -> drake filter/prioritize/bind ->
// Binding posted by drake -> kwok runs it. In simple mode drake's entry
// names the prioritize verb (drake's score), and a plain pod has more than
// one feasible node, so kube-scheduler asks drake to score them.
func TestPlainPodScheduledThroughDrake(t *testing.T) {
	e := need(t)
	if e.mode == "gang" {
		t.Skip("gang mode: plain pods do not reach drake (see TestGangModeSkipsPlainPods)")
	}
	ns := e.namespace(t)
	before := e.metrics(t)
	e.createPod(t, ns, "plain")
	p := e.waitPhase(t, ns, "plain", corev1.PodRunning, 60*time.Second)
	if !strings.HasPrefix(p.Spec.NodeName, "kwok-node-") {
		t.Fatalf("bound to %q, want a kwok node", p.Spec.NodeName)
	}
	after := e.metrics(t)
	for _, verb := range []string{"filter", "prioritize", "bind"} {
		_, b := requests(before, verb)
		_, a := requests(after, verb)
		if a <= b {
			t.Errorf("drake_requests_total{verb=%q,code=\"200\"} did not grow: %v -> %v", verb, b, a)
		}
	}
	// The API server's audit log names the client that posted the Binding.
	var recs []auditEvent
	poll(t, 10*time.Second, "audit record of the binding", func() (bool, error) {
		recs = e.bindingAudit(t, ns, "plain")
		return len(recs) > 0, nil
	})
	if len(recs) != 1 {
		t.Fatalf("%d successful bindings recorded, want 1: %+v", len(recs), recs)
	}
	if strings.HasPrefix(recs[0].UserAgent, "kube-scheduler") {
		t.Fatalf("binding posted by kube-scheduler itself (user agent %q), not by drake", recs[0].UserAgent)
	}
	t.Logf("bound to %s; binding posted by user agent %q", p.Spec.NodeName, recs[0].UserAgent)
}

// A pod whose nodeSelector matches no node stays Pending with FailedScheduling.
func TestUnmatchedNodeSelectorStaysPending(t *testing.T) {
	e := need(t)
	ns := e.namespace(t)
	e.createPod(t, ns, "nowhere", withNodeSelector("drake.dev/no-such-label", "x"))
	ev := e.waitEvent(t, ns, "nowhere", "FailedScheduling", "didn't match", 60*time.Second)
	t.Logf("event: %s", ev.Message)
	p := e.getPod(t, ns, "nowhere")
	if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod bound to %q phase %s, want unbound Pending", p.Spec.NodeName, p.Status.Phase)
	}
}

// The configuration says ignorable: false. With drake down, pods that reach
// the extender are not scheduled (FailedScheduling, scheduler error) and the
// rest of the control plane keeps working; once drake is back they are
// scheduled without anyone touching them.
func TestDrakeDownPodsWaitThenSchedule(t *testing.T) {
	e := need(t)
	ns := e.namespace(t)
	opts := []podOpt{}
	if e.mode == "gang" {
		opts = append(opts, withResource("drake.dev/gang", "1"))
	}
	e.drakeCtl(t, "stop")
	restarted := false
	t.Cleanup(func() {
		if !restarted && !e.drakeUp(t) {
			e.drakeCtl(t, "start")
		}
	})
	e.createPod(t, ns, "while-down", opts...)
	ev := e.waitEvent(t, ns, "while-down", "FailedScheduling", "", 60*time.Second)
	t.Logf("while drake is down: %s", ev.Message)
	if !strings.Contains(ev.Message, "127.0.0.1") && !strings.Contains(strings.ToLower(ev.Message), "extender") {
		t.Errorf("FailedScheduling does not mention the extender: %q", ev.Message)
	}
	// the API server and controllers still serve: a namespace can be made and
	// its service account appears
	_ = e.namespace(t)
	if p := e.getPod(t, ns, "while-down"); p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %s while drake was down: ignorable is not false?", p.Spec.NodeName)
	}
	e.drakeCtl(t, "start")
	restarted = true
	p := e.waitPhase(t, ns, "while-down", corev1.PodRunning, 90*time.Second)
	t.Logf("after drake came back: bound to %s", p.Spec.NodeName)
}

// kwok: a pod annotated kwok.drake.dev/run-for completes Succeeded, exit 0, after
// that long; deleting a pod removes it.
func TestRunForAnnotationCompletesAndDeleteWorks(t *testing.T) {
	e := need(t)
	ns := e.namespace(t)
	opts := []podOpt{withAnnotation("kwok.drake.dev/run-for", "3s")}
	if e.mode == "gang" {
		opts = append(opts, withResource("drake.dev/gang", "1"))
	}
	e.createPod(t, ns, "trainer", opts...)
	running := e.waitPhase(t, ns, "trainer", corev1.PodRunning, 60*time.Second)
	done := e.waitPhase(t, ns, "trainer", corev1.PodSucceeded, 60*time.Second)
	cs := done.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 {
		t.Fatalf("container status %+v, want terminated with exit code 0", cs)
	}
	if running.Status.StartTime != nil {
		ran := cs[0].State.Terminated.FinishedAt.Sub(running.Status.StartTime.Time)
		// timestamps have 1 s resolution
		if ran < 2*time.Second {
			t.Fatalf("finished after %v, want about 3s", ran)
		}
		t.Logf("ran for %v", ran)
	}
	if err := e.client.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "trainer", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	poll(t, 30*time.Second, "pod gone", func() (bool, error) {
		_, err := e.client.CoreV1().Pods(ns).Get(context.Background(), "trainer", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// The fake nodes advertise GPUs and a GPU pod is placed on one.
func TestGPUPodScheduled(t *testing.T) {
	e := need(t)
	ns := e.namespace(t)
	nodes, err := e.client.CoreV1().Nodes().List(ctxFor(t, 30*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	if len(nodes.Items) == 0 {
		t.Fatal("no nodes")
	}
	gpu := nodes.Items[0].Status.Allocatable["nvidia.com/gpu"]
	if gpu.Value() == 0 {
		t.Skip("nodes advertise no nvidia.com/gpu (started with --gpus 0)")
	}
	opts := []podOpt{withResource("nvidia.com/gpu", "2")}
	if e.mode == "gang" {
		opts = append(opts, withResource("drake.dev/gang", "1"))
	}
	e.createPod(t, ns, "gpu", opts...)
	p := e.waitPhase(t, ns, "gpu", corev1.PodRunning, 60*time.Second)
	t.Logf("GPU pod on %s (%d GPUs per node)", p.Spec.NodeName, gpu.Value())
}
