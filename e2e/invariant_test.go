package e2e

// invariant_test.go - the gang invariant by role on real nodes:
// no TFJob runs without every PS, its chief and min-instances workers, also
// when a plain pod preempts a member, when workers finish at different
// times, when a job fits only one large node, when a template forges drake's
// annotations, and when drake is SIGKILLed in the middle of posting a wave.
// Each test watches its jobs' pods throughout (gangwatch_test.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// gangBindTimeout is the running drake's --gang-bind-timeout
// (DRAKE_GANG_BIND_TIMEOUT, which hack/cluster-drake.sh passes through the
// environment; drake's default 15 s).
func gangBindTimeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("DRAKE_GANG_BIND_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 15 * time.Second
}

// gangBound is the bound drake states: no job stays below its per-role
// minimum for longer than 2 x --gang-bind-timeout + 5 s.
func gangBound() time.Duration { return 2*gangBindTimeout() + 5*time.Second }

// withBindTimeout restarts drake with --gang-bind-timeout d (E2E_BIND_TIMEOUT
// overrides d) for the rest of the test, and restarts it with the previous
// value when the test ends.
func (e *env) withBindTimeout(t *testing.T, d time.Duration) {
	t.Helper()
	if v, err := time.ParseDuration(os.Getenv("E2E_BIND_TIMEOUT")); err == nil && v > 0 {
		d = v
	}
	prev, had := os.LookupEnv("DRAKE_GANG_BIND_TIMEOUT")
	os.Setenv("DRAKE_GANG_BIND_TIMEOUT", d.String())
	e.drakeCtl(t, "restart")
	t.Cleanup(func() {
		if had {
			os.Setenv("DRAKE_GANG_BIND_TIMEOUT", prev)
		} else {
			os.Unsetenv("DRAKE_GANG_BIND_TIMEOUT")
		}
		e.drakeCtl(t, "restart")
	})
}

// waitQuiet waits until no namespace is terminating and no pod is being
// deleted, so what earlier tests leave behind cannot free or take capacity
// while a test counts it.
func waitQuiet(t *testing.T, e *env) {
	t.Helper()
	poll(t, 180*time.Second, "cluster quiet (no namespace terminating, no pod deleting)", func() (bool, error) {
		nss, err := e.client.CoreV1().Namespaces().List(ctxFor(t, 10*time.Second), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, n := range nss.Items {
			if n.Status.Phase == corev1.NamespaceTerminating {
				return false, nil
			}
		}
		pods, err := e.client.CoreV1().Pods("").List(ctxFor(t, 10*time.Second), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				return false, nil
			}
		}
		return true, nil
	})
}

// nodeList returns the cluster's nodes sorted by name.
func (e *env) nodeList(t *testing.T) []corev1.Node {
	t.Helper()
	l, err := e.client.CoreV1().Nodes().List(ctxFor(t, 30*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	sort.Slice(l.Items, func(i, k int) bool { return l.Items[i].Name < l.Items[k].Name })
	return l.Items
}

// gpuNodes counts the nodes with at least gpus nvidia.com/gpu allocatable.
func gpuNodes(t *testing.T, e *env, gpus int) int {
	t.Helper()
	n := 0
	for _, nd := range e.nodeList(t) {
		q := nd.Status.Allocatable["nvidia.com/gpu"]
		if q.Value() >= int64(gpus) {
			n++
		}
	}
	return n
}

func podCPUMilli(p *corev1.Pod) int64 {
	var sum int64
	for _, c := range p.Spec.Containers {
		q, ok := c.Resources.Requests[corev1.ResourceCPU]
		if !ok {
			q = c.Resources.Limits[corev1.ResourceCPU]
		}
		sum += q.MilliValue()
	}
	return sum
}

// freeCPU is each node's allocatable cpu minus the requests of the pods
// bound to it that have not finished, in millicores.
func (e *env) freeCPU(t *testing.T) map[string]int64 {
	t.Helper()
	free := map[string]int64{}
	for _, n := range e.nodeList(t) {
		q := n.Status.Allocatable[corev1.ResourceCPU]
		free[n.Name] = q.MilliValue()
	}
	l, err := e.client.CoreV1().Pods("").List(ctxFor(t, 30*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	for i := range l.Items {
		p := &l.Items[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		free[p.Spec.NodeName] -= podCPUMilli(p)
	}
	return free
}

// priorityClass creates a PriorityClass, removed when the test ends.
func (e *env) priorityClass(t *testing.T, name string, value int32) string {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value,
		Description: "drake e2e " + t.Name()}
	if _, err := e.client.SchedulingV1().PriorityClasses().Create(ctxFor(t, 30*time.Second), pc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create priority class %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = e.client.SchedulingV1().PriorityClasses().Delete(ctxFor(t, 30*time.Second), name, metav1.DeleteOptions{})
	})
	return name
}

// fillNode puts pods of priority class pc straight on node (spec.nodeName:
// no scheduler, like a DaemonSet's or another scheduler's pods) asking
// milli cpu in all, in pieces of at most 4 cpu.
func (e *env) fillNode(t *testing.T, ns, node, pc string, milli int64) int {
	t.Helper()
	n := 0
	for milli > 0 {
		piece := milli
		if piece > 4000 {
			piece = 4000
		}
		milli -= piece
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fill-%s-%d", node, n), Namespace: ns,
				Labels: map[string]string{"e2e.drake.dev/role": "filler"}},
			Spec: corev1.PodSpec{
				NodeName: node, PriorityClassName: pc, RestartPolicy: corev1.RestartPolicyNever,
				AutomountServiceAccountToken: new(bool),
				Containers: []corev1.Container{{Name: "main", Image: "example.invalid/filler:1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    *resource.NewMilliQuantity(piece, resource.DecimalSI),
						corev1.ResourceMemory: resource.MustParse("64Mi"),
					}}}},
			},
		}
		if _, err := e.client.CoreV1().Pods(ns).Create(ctxFor(t, 30*time.Second), p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create filler %s: %v", p.Name, err)
		}
		n++
	}
	return n
}

// cpuReplica is a replica spec asking cpu (requests = limits) and gpu
// nvidia.com/gpu (0: none).
func cpuReplica(replicas int, cpu string, gpu int, annotations map[string]string) map[string]any {
	r := tensorflow(replicas, "Never", annotations)
	res := map[string]any{"cpu": cpu, "memory": "1Gi"}
	if gpu > 0 {
		res["nvidia.com/gpu"] = strconv.Itoa(gpu)
	}
	c := r["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["resources"] = map[string]any{"requests": res, "limits": res}
	return r
}

// jobEvents lists the Events on a TFJob, "reason: message" each.
func (e *env) jobEvents(t *testing.T, ns, job string) []corev1.Event {
	t.Helper()
	l, err := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + job + ",involvedObject.kind=TFJob"})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	return l.Items
}

func hasEvent(evs []corev1.Event, reason string) bool {
	for _, ev := range evs {
		if ev.Reason == reason {
			return true
		}
	}
	return false
}

// jobBindings returns the API server's audit records of the job's
// successful Bindings, in the order it received them.
func (e *env) jobBindings(t *testing.T, ns, job string) []auditEvent {
	t.Helper()
	return e.jobBindingRecords(t, ns, job, true)
}

// jobBindingRecords: every Binding request for job's pods the API server
// completed (with ok, only the 2xx ones), in the order it received them.
func (e *env) jobBindingRecords(t *testing.T, ns, job string, ok bool) []auditEvent {
	t.Helper()
	out := e.bindingRecords(t, ns, func(pod string) bool { return strings.HasPrefix(pod, job+"-") }, ok)
	sort.SliceStable(out, func(i, k int) bool {
		return out[i].RequestReceivedTimestamp.Before(out[k].RequestReceivedTimestamp)
	})
	return out
}

func roleOfName(job, pod string) string {
	rest := strings.TrimPrefix(pod, job+"-")
	if i := strings.LastIndex(rest, "-"); i > 0 {
		return rest[:i]
	}
	return rest
}

// checkPSFirst: the bind barrier posts a wave's Bindings PS and chief
// first, so in the job's first wave the API server received every PS and
// chief Binding (leaders of them: the role need) before any worker's.
// Every Binding request counts, whatever its answer: a drake SIGKILLed
// with a Binding in flight leaves a 504 in the audit log for a Binding
// that took effect, and a worker's request sent too early is wrong even
// if it failed.
func (e *env) checkPSFirst(t *testing.T, ns, job string, leaders int) {
	t.Helper()
	var recs []auditEvent
	poll(t, 10*time.Second, "audit records of "+job+"'s bindings", func() (bool, error) {
		recs = e.jobBindingRecords(t, ns, job, false)
		return len(recs) > leaders, nil
	})
	var order []string
	seen := 0
	for _, r := range recs {
		role := roleOfName(job, r.ObjectRef.Name)
		if len(order) < 6 {
			order = append(order, r.ObjectRef.Name)
		}
		if role == "worker" {
			break
		}
		if role == "ps" || role == "chief" {
			seen++
		}
	}
	if seen < leaders {
		t.Errorf("job %s: %d of its %d PS/chief Bindings reached the API server before the first worker's; want all (received first: %v)",
			job, seen, leaders, order)
	} else {
		t.Logf("job %s: Bindings received first: %v", job, order)
	}
}

// eventsOnFailure logs the jobs' Events and their pods' states when the
// test has failed (before its namespace goes). It keeps to a few lines (pods
// in the same state on one, 8 states at most) so that the assertion that
// failed stays among the last lines CI shows.
func (e *env) eventsOnFailure(t *testing.T, ns string, jobs ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, j := range jobs {
			logLastEvents(t, e.jobEvents(t, ns, j), 6)
			type group struct {
				first string
				n     int
			}
			groups := map[string]*group{}
			var order []string
			for _, p := range jobPods(t, e, ns, j) {
				var gates []string
				for _, g := range p.Spec.SchedulingGates {
					gates = append(gates, g.Name)
				}
				ann := []string{}
				for k, v := range p.Annotations {
					if strings.HasPrefix(k, "drake.dev/") || strings.HasPrefix(k, "kubeshare/") {
						ann = append(ann, k+"="+v)
					}
				}
				sort.Strings(ann)
				state := fmt.Sprintf("node %q phase %s gates %v annotations %v", p.Spec.NodeName, p.Status.Phase, gates, ann)
				if g := groups[state]; g != nil {
					g.n++
					continue
				}
				groups[state] = &group{first: p.Name, n: 1}
				order = append(order, state)
			}
			for k, state := range order {
				if k == 8 {
					t.Logf("... (%s: pods in %d more states left out)", j, len(order)-k)
					break
				}
				g := groups[state]
				if g.n == 1 {
					t.Logf("pod %s: %s", g.first, state)
				} else {
					t.Logf("%d pods (%s and %d more): %s", g.n, g.first, g.n-1, state)
				}
			}
		}
	})
}

func logEvents(t *testing.T, evs []corev1.Event) {
	t.Helper()
	for _, ev := range evs {
		t.Logf("TFJob event %s %s: %s", ev.Type, ev.Reason, ev.Message)
	}
}

// logLastEvents logs the latest `most` of a job's Events, oldest first.
func logLastEvents(t *testing.T, evs []corev1.Event, most int) {
	t.Helper()
	evs = append([]corev1.Event(nil), evs...)
	sort.SliceStable(evs, func(i, j int) bool {
		return evs[i].LastTimestamp.Before(&evs[j].LastTimestamp)
	})
	if len(evs) > most {
		t.Logf("TFJob events: %d earlier ones left out", len(evs)-most)
		evs = evs[len(evs)-most:]
	}
	logEvents(t, evs)
}

// (a) Preemption. A TFJob (PS 20 cpu, 4 workers of 2 cpu, min-instances 1,
// no GPU) packed on one 32-cpu node; every node filled by priority-100 pods;
// then a priority-1000 pod asking 18 cpu. kube-scheduler's cheapest victim
// is the job's PS (priority 0). Simple mode: kube-scheduler asks drake's
// preempt verb, which never offers a live PS, so the preemptor takes
// fillers elsewhere. Gang-only mode: kube-scheduler does not ask drake about
// a plain pod, the PS can be taken, and the controller must repair the job
// or roll it back whole within the stated bound. Either way the workers
// never run without their PS for longer than that, and once capacity is
// free again the job runs whole.
func TestGangPreemptionNeverLeavesWorkersWithoutTheirPS(t *testing.T) {
	e := withReconciler(t)
	waitQuiet(t, e)
	e.withBindTimeout(t, 6*time.Second)
	bound := gangBound()
	ns := e.namespace(t)
	low := e.priorityClass(t, ns+"-low", 100)
	high := e.priorityClass(t, ns+"-high", 1000)

	// the job's node: the first 32-cpu node
	target := ""
	for _, n := range e.nodeList(t) {
		q := n.Status.Allocatable[corev1.ResourceCPU]
		if q.MilliValue() == 32000 {
			target = n.Name
			break
		}
	}
	if target == "" {
		t.Skip("needs a node with 32 cpu allocatable")
	}
	free := e.freeCPU(t)
	if free[target] < 28000 {
		t.Fatalf("node %s has %dm cpu free; the job needs 28 cpu", target, free[target])
	}
	fillers := 0
	for node, m := range free {
		if node != target && m > 0 {
			fillers += e.fillNode(t, ns, node, low, m)
		}
	}
	w := watchGangs(t, e, ns)
	w.expect("victim", roleNeed{"ps": 1, "worker": 1})
	createTFJob(t, ns, "victim", map[string]any{
		"min-instances": int64(1), "max-instances": int64(4),
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "20", 0, nil),
			"Worker": cpuReplica(4, "2", 0, nil),
		},
	})
	poll(t, 120*time.Second, "victim's PS and a worker bound", func() (bool, error) { return w.whole("victim"), nil })
	e.checkPSFirst(t, ns, "victim", 1)
	// the whole wave (PS and all four workers) binds together
	poll(t, 60*time.Second, "victim's five pods bound", func() (bool, error) {
		return w.roleCount("victim", "ps") == 1 && w.roleCount("victim", "worker") == 4, nil
	})
	var psUID types.UID
	for _, p := range jobPods(t, e, ns, "victim") {
		if p.Spec.NodeName != "" && p.Spec.NodeName != target {
			t.Errorf("pod %s on %s; every other node is full, want %s", p.Name, p.Spec.NodeName, target)
		}
		if strings.Contains(p.Name, "-ps-") {
			psUID = p.UID
		}
	}
	t.Logf("victim bound on %s: ps %d, workers %d", target, w.roleCount("victim", "ps"), w.roleCount("victim", "worker"))
	free = e.freeCPU(t)
	fillers += e.fillNode(t, ns, target, low, free[target])
	free = e.freeCPU(t)
	for node, m := range free {
		if m >= 18000 {
			t.Fatalf("node %s still has %dm cpu free after filling", node, m)
		}
	}
	t.Logf("%d priority-100 fillers; every node has less than 18 cpu free", fillers)

	e.createPod(t, ns, "preemptor", func(p *corev1.Pod) {
		p.Spec.PriorityClassName = high
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("18"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	})
	preempted := time.Now()
	var pre *corev1.Pod
	poll(t, 120*time.Second, "preemptor bound", func() (bool, error) {
		pre = e.getPod(t, ns, "preemptor")
		return pre.Spec.NodeName != "", nil
	})
	psTaken := pre.Spec.NodeName == target || w.left("victim", "ps") > 0
	t.Logf("mode %s: preemptor bound to %s %.1fs after it was created; PS taken: %v (workers taken: %d)",
		e.mode, pre.Spec.NodeName, time.Since(preempted).Seconds(), psTaken, w.left("victim", "worker"))
	if e.mode != "gang" && psTaken {
		t.Errorf("simple mode: kube-scheduler asked drake's preempt verb, yet the job's live PS was preempted")
	}

	// Watch for the stated bound (and then some): the job is whole, or has
	// nothing bound (rolled back, waiting gated), never partial longer.
	deadline := time.Now().Add(bound + 10*time.Second)
	for time.Now().Before(deadline) {
		if d, why := w.longest("victim", time.Time{}); d > bound {
			t.Errorf("victim partial for %v (short: %s), more than 2 x gang-bind-timeout + 5 s = %v", d.Round(time.Millisecond), why, bound)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	evs := e.jobEvents(t, ns, "victim")
	logEvents(t, evs)
	if psTaken {
		for _, p := range jobPods(t, e, ns, "victim") {
			if strings.Contains(p.Name, "-ps-") && p.UID == psUID && p.DeletionTimestamp == nil {
				t.Logf("the PS pod kept its UID (repaired in place?)")
			}
		}
		t.Logf("after the PS was taken: GangRolledBack event %v, pods recreated %d", hasEvent(evs, "GangRolledBack"), w.recreated("victim"))
	}

	// Free the capacity: the job runs whole again.
	if err := e.client.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "preemptor", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete preemptor: %v", err)
	}
	if err := e.client.CoreV1().Pods(ns).DeleteCollection(ctxFor(t, 30*time.Second), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "e2e.drake.dev/role=filler"}); err != nil {
		t.Fatalf("delete fillers: %v", err)
	}
	poll(t, 180*time.Second, "victim whole again once capacity is free", func() (bool, error) {
		if !w.whole("victim") {
			return false, nil
		}
		for _, p := range jobPods(t, e, ns, "victim") {
			if strings.Contains(p.Name, "-ps-") {
				return p.Status.Phase == corev1.PodRunning, nil
			}
		}
		return false, nil
	})
	w.check(t, bound, true)
}

// (b) Workers that finish at different times: each worker pod is annotated
// kwok.drake.dev/run-for with its own end time after it runs (kwok reads the
// live pod), so the job loses one worker after another to Succeeded.
// Finished members count as done: the job completes (AllWorkers) without a
// rollback, no pod recreated.
func TestGangWorkersFinishingAtDifferentTimesCompleteWithoutRollback(t *testing.T) {
	e := withReconciler(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	w.expect("staggered", roleNeed{"ps": 1, "worker": 4})
	e.eventsOnFailure(t, ns, "staggered")
	createTFJob(t, ns, "staggered", map[string]any{
		"successPolicy": "AllWorkers",
		"runPolicy":     map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "1", 0, nil),
			"Worker": cpuReplica(4, "1", 1, nil),
		},
	})
	poll(t, 120*time.Second, "staggered whole", func() (bool, error) { return w.whole("staggered"), nil })
	e.checkPSFirst(t, ns, "staggered", 1)
	waitState(t, ns, "staggered", "Running", 60*time.Second)
	uids := map[string]types.UID{}
	for _, p := range jobPods(t, e, ns, "staggered") {
		uids[p.Name] = p.UID
	}
	// worker-3 ends first, worker-0 last, 4 s apart
	start := time.Now().Add(2 * time.Second)
	for i := 0; i < 4; i++ {
		end := start.Add(time.Duration(3-i) * 4 * time.Second).UTC().Format(time.RFC3339)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"kwok.drake.dev/run-for":%q}}}`, end)
		if _, err := e.client.CoreV1().Pods(ns).Patch(ctxFor(t, 30*time.Second), fmt.Sprintf("staggered-worker-%d", i),
			types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("annotate worker %d: %v", i, err)
		}
	}
	waitState(t, ns, "staggered", "Succeeded", 120*time.Second)
	finished := map[string]time.Time{}
	for _, p := range jobPods(t, e, ns, "staggered") {
		if uids[p.Name] != p.UID {
			t.Errorf("pod %s was recreated (uid %s, was %s)", p.Name, p.UID, uids[p.Name])
		}
		if strings.Contains(p.Name, "-worker-") {
			if p.Status.Phase != corev1.PodSucceeded {
				t.Errorf("worker %s is %s at the job's success", p.Name, p.Status.Phase)
				continue
			}
			if cs := p.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Terminated != nil {
				finished[p.Name] = cs[0].State.Terminated.FinishedAt.Time
			}
		}
	}
	if f0, f3 := finished["staggered-worker-0"], finished["staggered-worker-3"]; !f0.After(f3) {
		t.Errorf("workers did not finish at different times: worker-3 at %v, worker-0 at %v", f3, f0)
	} else {
		t.Logf("worker-3 finished %v before worker-0", f0.Sub(f3))
	}
	evs := e.jobEvents(t, ns, "staggered")
	for _, r := range []string{"GangRolledBack", "GangReleased"} {
		if hasEvent(evs, r) {
			logEvents(t, evs)
			t.Errorf("a job whose workers finished one after another got a %s event", r)
		}
	}
	if n := w.recreated("staggered"); n != 0 {
		t.Errorf("%d pods recreated", n)
	}
	w.check(t, normalWaveMax, true)
}

// (c) A job of 52 cpu (PS 12 cpu, 4 workers of 10 cpu and 1 GPU) fits on no
// 32-cpu node, only on the larger, realistically advertised node (64 cpu,
// hugepages, RDMA; hack/cluster-up.sh). It lands there, alone, whole.
func TestGangJobThatFitsOnlyTheLargeNodeLandsOnIt(t *testing.T) {
	e := withReconciler(t)
	large := ""
	for _, n := range e.nodeList(t) {
		if n.Labels["kwok.drake.dev/shape"] == "large" {
			large = n.Name
			break
		}
	}
	if large == "" {
		t.Skip("no large node (hack/cluster-up.sh --large-nodes 0 or --minimal-nodes)")
	}
	waitQuiet(t, e)
	waitGPUsIdle(t, e)
	if free := e.freeCPU(t)[large]; free < 52000 {
		t.Fatalf("large node %s has %dm cpu free; want 52 cpu", large, free)
	}
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	w.expect("big", roleNeed{"ps": 1, "worker": 4})
	e.eventsOnFailure(t, ns, "big")
	createTFJob(t, ns, "big", map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "12", 0, nil),
			"Worker": cpuReplica(4, "10", 1, nil),
		},
	})
	poll(t, 120*time.Second, "big bound whole", func() (bool, error) { return w.whole("big"), nil })
	e.checkPSFirst(t, ns, "big", 1)
	w.check(t, normalWaveMax, true)
	for _, p := range jobPods(t, e, ns, "big") {
		if p.Spec.NodeName != large {
			t.Errorf("pod %s on %q; 52 cpu fit only on %s", p.Name, p.Spec.NodeName, large)
		}
	}
	waitState(t, ns, "big", "Running", 60*time.Second)
}

// (d) A pod template that carries drake's own annotations (a forged
// drake.dev/planned-node naming a node, drake.dev/gang) and kubeshare/GPUID:
// drake strips them from the pods it creates and says so in a Warning
// TemplateAnnotationsStripped naming the keys; the job is admitted and runs
// normally; and the forged node is not made to look full: while a forged
// job that can never fit waits (its gated pods still carry what the
// template said), a job needing every 8-GPU node whole still gets them.
func TestGangForgedTemplateAnnotationsAreStrippedAndBlockNobody(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	waitQuiet(t, e)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	nodes := e.nodeList(t)
	forgedNode := nodes[0].Name
	forged := map[string]string{
		"drake.dev/planned-node": forgedNode,
		"drake.dev/gang":         "forged",
		"drake.dev/gang-size":    "1",
		"kubeshare/GPUID":        "abcde",
	}
	forgedKeys := []string{"drake.dev/gang", "drake.dev/gang-size", "drake.dev/planned-node", "kubeshare/GPUID"}
	w := watchGangs(t, e, ns)
	w.expect("forged", roleNeed{"ps": 1, "worker": 2})
	e.eventsOnFailure(t, ns, "forged", "forged-waiting", "everything")
	createTFJob(t, ns, "forged", map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "1", 0, forged),
			"Worker": cpuReplica(2, "1", 1, map[string]string{"drake.dev/planned-node": forgedNode, "drake.dev/gang": "forged", "kubeshare/GPUID": "abcde", "kwok.drake.dev/run-for": "4s"}),
		},
	})
	// one that never fits (9 GPUs a worker) and so keeps waiting, gated
	createTFJob(t, ns, "forged-waiting", map[string]any{
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "1", 0, forged),
			"Worker": cpuReplica(1, "1", 9, forged),
		},
	})
	// not fatal: the rest of the outcome is worth seeing without it
	var stripped *corev1.Event
	for end := time.Now().Add(60 * time.Second); stripped == nil && time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		for _, ev := range e.jobEvents(t, ns, "forged") {
			if ev.Reason == "TemplateAnnotationsStripped" {
				ev := ev
				stripped = &ev
			}
		}
	}
	switch {
	case stripped == nil:
		t.Errorf("no TemplateAnnotationsStripped event on forged within 60 s")
	case stripped.Type != corev1.EventTypeWarning:
		t.Errorf("TemplateAnnotationsStripped is a %s event; want Warning", stripped.Type)
	}
	if stripped != nil {
		t.Logf("TemplateAnnotationsStripped: %s", stripped.Message)
		for _, k := range forgedKeys {
			if !strings.Contains(stripped.Message, k) {
				t.Errorf("TemplateAnnotationsStripped does not name %s: %q", k, stripped.Message)
			}
		}
	}
	poll(t, 120*time.Second, "forged whole", func() (bool, error) { return w.whole("forged"), nil })
	w.check(t, normalWaveMax, true)
	for _, job := range []string{"forged", "forged-waiting"} {
		for _, p := range jobPods(t, e, ns, job) {
			if p.Annotations["drake.dev/gang"] == "forged" || p.Annotations["drake.dev/gang-size"] == "1" {
				t.Errorf("pod %s kept the template's drake.dev/gang* annotations: %v", p.Name, p.Annotations)
			}
			if id, ok := p.Annotations["kubeshare/GPUID"]; ok {
				t.Errorf("pod %s kept kubeshare/GPUID %q from its template", p.Name, id)
			}
			pn := p.Annotations["drake.dev/planned-node"]
			if p.Spec.NodeName != "" && pn != p.Spec.NodeName {
				t.Errorf("pod %s bound to %s, drake.dev/planned-node %q", p.Name, p.Spec.NodeName, pn)
			}
			if p.Spec.NodeName == "" && len(p.Spec.SchedulingGates) > 0 && pn != "" {
				t.Errorf("gated pod %s carries drake.dev/planned-node %q", p.Name, pn)
			}
		}
	}
	waitState(t, ns, "forged", "Succeeded", 120*time.Second)

	// a job needing every 8-GPU node whole, the forged node among them
	waitGPUsIdle(t, e)
	whole := gpuNodes(t, e, 8)
	w.expect("everything", roleNeed{"ps": 1, "worker": whole})
	createTFJob(t, ns, "everything", gpuJob(whole, 8, ""))
	poll(t, 120*time.Second, fmt.Sprintf("everything (%d whole 8-GPU nodes) bound", whole), func() (bool, error) {
		return w.whole("everything"), nil
	})
	w.check(t, normalWaveMax, false)
	// every 8-GPU node holds a worker, the forged node among them
	onForged := false
	for _, p := range jobPods(t, e, ns, "everything") {
		if p.Spec.NodeName == forgedNode && strings.Contains(p.Name, "-worker-") {
			onForged = true
		}
	}
	if q := nodes[0].Status.Allocatable["nvidia.com/gpu"]; q.Value() >= 8 && !onForged {
		t.Errorf("no worker of everything on %s, the node the forged annotations named", forgedNode)
	}
}

// (e) drake SIGKILLed right after the first Binding of a wave is seen on
// the watch (1 PS + 1 chief + 60 workers, one wave, so posting its Bindings
// takes a while), then started again: no job stays partial past the stated
// bound after the restart - the wave is completed, or rolled back and run
// whole later.
func TestGangDrakeSIGKILLedAfterTheFirstBindingOfAWave(t *testing.T) {
	e := withReconciler(t)
	waitQuiet(t, e)
	ns := e.namespace(t)
	const workers = 60 // 62 pods: one wave under drake's pacing floor of 64
	w := watchGangs(t, e, ns)
	w.expect("cut", roleNeed{"ps": 1, "chief": 1, "worker": workers})
	e.eventsOnFailure(t, ns, "cut")
	spec := map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     tensorflow(1, "Never", nil),
			"Chief":  tensorflow(1, "Never", nil),
			"Worker": tensorflow(workers, "Never", nil),
		},
	}
	pidText, err := os.ReadFile(filepath.Join(e.dir, "pids", "drake.pid"))
	if err != nil {
		t.Fatalf("drake pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	first := w.firstBound("cut")
	killed := make(chan int, 1)
	go func() {
		select {
		case <-first:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed <- w.boundCount("cut")
		case <-time.After(180 * time.Second):
			killed <- -1
		}
	}()
	createTFJob(t, ns, "cut", spec)
	atKill := <-killed
	if atKill < 0 {
		t.Fatal("no pod of cut was bound within 180 s")
	}
	poll(t, 30*time.Second, "killed drake reaped", func() (bool, error) { return syscall.Kill(pid, 0) != nil, nil })
	time.Sleep(time.Second)
	t.Logf("drake SIGKILLed at the first binding (a %s): %d of %d pods bound then, %d a second later",
		w.firstBoundRole("cut"), atKill, workers+2, w.boundCount("cut"))
	// PS and chief first: the first Binding of the wave is one of them
	if r := w.firstBoundRole("cut"); r != "ps" && r != "chief" {
		t.Errorf("the first member of the wave seen bound is a %s; the barrier posts the PS and the chief first", r)
	}
	e.drakeCtl(t, "start")
	restarted := time.Now()
	bound := gangBound()
	poll(t, bound+120*time.Second, "cut whole after the restart", func() (bool, error) {
		if d, why := w.longest("cut", restarted); d > bound {
			return false, fmt.Errorf("cut partial for %v after drake's restart (short: %s), more than %v", d.Round(time.Millisecond), why, bound)
		}
		return w.whole("cut"), nil
	})
	w.checkAfter(t, bound, true, restarted)
	e.checkPSFirst(t, ns, "cut", 2)
	logEvents(t, e.jobEvents(t, ns, "cut"))
	t.Logf("cut whole %.1fs after the restart; pods recreated %d", time.Since(restarted).Seconds(), w.recreated("cut"))
}
