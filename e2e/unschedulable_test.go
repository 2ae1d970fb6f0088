package e2e

// Gangs kube-scheduler will not place for a reason drake's planner does not
// model (gang/refusal.h): the reason reaches the TFJob (a Warning Event, an
// Unschedulable condition) and GET /v1/jobs, the wave gives its
// reservation back at once so other jobs run, the job backs off, and it is
// tried again the moment what it waits for appears (a claim, a node
// label). Also Kubeflow's runPolicy.schedulingPolicy.minAvailable.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// withBackoff restarts drake with --gang-backoff-min and -max for the rest
// of the test (restored after), so that a retry before the backoff ends
// can only come from the watch.
func (e *env) withBackoff(t *testing.T, min, max time.Duration) {
	t.Helper()
	secs := func(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Seconds())) }
	vars := map[string]string{"DRAKE_GANG_BACKOFF_MIN": secs(min), "DRAKE_GANG_BACKOFF_MAX": secs(max)}
	prev := map[string]*string{}
	for k, v := range vars {
		if old, ok := os.LookupEnv(k); ok {
			prev[k] = &old
		} else {
			prev[k] = nil
		}
		os.Setenv(k, v)
	}
	e.drakeCtl(t, "restart")
	t.Cleanup(func() {
		for k, old := range prev {
			if old != nil {
				os.Setenv(k, *old)
			} else {
				os.Unsetenv(k)
			}
		}
		e.drakeCtl(t, "restart")
	})
}

// jobsView is GET /v1/jobs.
func (e *env) jobsView(t *testing.T) string {
	t.Helper()
	resp, err := e.drakeHTTP(t).Get(strings.TrimSuffix(e.metricsURL, "/metrics") + "/v1/jobs")
	if err != nil {
		t.Fatalf("GET /v1/jobs: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// jobsEntry is key's entry in GET /v1/jobs: its status ("waiting", or
// "running" when it is in the running list) and what it waits for.
func (e *env) jobsEntry(t *testing.T, key string) (status, waitsFor string) {
	t.Helper()
	var v struct {
		Jobs    []struct{ Job, Status, WaitsFor string }
		Running []struct{ Job string }
	}
	body := e.jobsView(t)
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("GET /v1/jobs: %v: %s", err, body)
	}
	for _, r := range v.Running {
		if r.Job == key {
			return "running", ""
		}
	}
	for _, j := range v.Jobs {
		if j.Job == key {
			return j.Status, j.WaitsFor
		}
	}
	return "", ""
}

// condition is the TFJob's condition of type typ, or nil; last says
// whether it is the last one (kubectl's State column).
func condition(j *unstructured.Unstructured, typ string) (c map[string]any, last bool) {
	conds, _, _ := unstructured.NestedSlice(j.Object, "status", "conditions")
	for i, x := range conds {
		m, _ := x.(map[string]any)
		if m["type"] == typ {
			return m, i == len(conds)-1
		}
	}
	return nil, false
}

// withClaim mounts the PersistentVolumeClaim claim in the workers of spec.
func withClaim(spec map[string]any, claim string) map[string]any {
	w := spec["tfReplicaSpecs"].(map[string]any)["Worker"].(map[string]any)
	ps := w["template"].(map[string]any)["spec"].(map[string]any)
	ps["volumes"] = []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": claim}}}
	c := ps["containers"].([]any)[0].(map[string]any)
	c["volumeMounts"] = []any{map[string]any{"name": "data", "mountPath": "/data"}}
	return spec
}

// createBoundClaim makes claim in ns already bound to a PersistentVolume of
// its own (this cluster runs no volume binder): kube-scheduler then places
// pods that mount it.
func (e *env) createBoundClaim(t *testing.T, ns, claim string) {
	t.Helper()
	pvName := ns + "-" + claim
	size := resource.MustParse("1Gi")
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + pvName}},
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
		},
	}
	if _, err := e.client.CoreV1().PersistentVolumes().Create(ctxFor(t, 30*time.Second), pv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pv: %v", err)
	}
	t.Cleanup(func() {
		_ = e.client.CoreV1().PersistentVolumes().Delete(ctxFor(t, 30*time.Second), pvName, metav1.DeleteOptions{})
	})
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: ns,
			Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			VolumeName:       pvName,
			StorageClassName: &empty,
		},
	}
	if _, err := e.client.CoreV1().PersistentVolumeClaims(ns).Create(ctxFor(t, 30*time.Second), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pvc: %v", err)
	}
}

// refusedUntil waits for job's refusal record and returns when its
// backoff ends.
func refusedUntil(t *testing.T, ns, job string) time.Time {
	t.Helper()
	var until time.Time
	poll(t, 30*time.Second, "drake.dev/unschedulable on "+job, func() (bool, error) {
		_, j := state(t, ns, job)
		v := j.GetAnnotations()["drake.dev/unschedulable"]
		if v == "" {
			return false, nil
		}
		var rec struct {
			Tries int
			Until float64 // seconds, with their fraction
		}
		if err := json.Unmarshal([]byte(v), &rec); err != nil {
			return false, fmt.Errorf("drake.dev/unschedulable %q: %v", v, err)
		}
		until = time.Unix(0, int64(rec.Until*1e9))
		return rec.Tries > 0, nil
	})
	return until
}

// checkRefusalSaid checks that job's refusal is said where a user looks,
// within one barrier timeout of its admission: a Warning Event naming the
// member and kube-scheduler's message, the Unschedulable condition last,
// and GET /v1/jobs listing it as waiting for that reason, not running.
func checkRefusalSaid(t *testing.T, e *env, ns, job, member, says string) {
	t.Helper()
	admitted := e.jobEvent(t, ns, job, "GangAdmitted", 60*time.Second)
	ev := e.jobEvent(t, ns, job, "GangUnschedulable", 30*time.Second)
	if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Message, member) || !strings.Contains(ev.Message, says) {
		t.Errorf("GangUnschedulable event is %s %q; want a Warning naming %s and %q", ev.Type, ev.Message, member, says)
	}
	if gap := ev.FirstTimestamp.Sub(admitted.FirstTimestamp.Time); gap > 15*time.Second {
		t.Errorf("the refusal was said %v after the admission; want within one barrier timeout (15s)", gap)
	}
	pollUntil(t, 15*time.Second, "Unschedulable condition on "+job, func() (string, error) {
		_, j := state(t, ns, job)
		c, last := condition(j, "Unschedulable")
		msg, _ := c["message"].(string)
		if c == nil || c["status"] != "True" || !last || !strings.Contains(msg, says) || !strings.Contains(msg, member) {
			return fmt.Sprintf("conditions %v", j.Object["status"]), nil
		}
		return "", nil
	})
	pollUntil(t, 15*time.Second, job+" waiting in GET /v1/jobs", func() (string, error) {
		st, why := e.jobsEntry(t, ns+"/"+job)
		if st != "waiting" || !strings.Contains(why, says) {
			return fmt.Sprintf("status %q waitsFor %q", st, why), nil
		}
		return "", nil
	})
	for _, r := range []string{"GangReleased"} {
		l, _ := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second), metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + job + ",reason=" + r})
		if l != nil && len(l.Items) > 0 {
			t.Errorf("%s got %s: %q; a refused wave is released as GangUnschedulable", job, r, l.Items[0].Message)
		}
	}
}

// checkPlaced checks that a job refused before runs, says so, and carries
// no refusal any more.
func checkPlaced(t *testing.T, ns, job string) {
	t.Helper()
	j := waitState(t, ns, job, "Running", 60*time.Second)
	pollUntil(t, 30*time.Second, job+" without its refusal", func() (string, error) {
		_, j = state(t, ns, job)
		if c, _ := condition(j, "Unschedulable"); c != nil {
			return fmt.Sprintf("Unschedulable condition still there: %v", c), nil
		}
		if v := j.GetAnnotations()["drake.dev/unschedulable"]; v != "" {
			return "drake.dev/unschedulable still " + v, nil
		}
		return "", nil
	})
}

func TestUnschedulableMissingClaimIsSaidHoldsNothingAndStartsWhenTheClaimAppears(t *testing.T) {
	e := withReconciler(t)
	_, gpus := clusterShape(t)
	e.withBackoff(t, 60*time.Second, 5*time.Minute)
	waitGPUsIdle(t, e)
	nodesN := gpuNodes(t, e, gpus)
	ns := e.namespace(t)
	// claimless takes every whole-GPU node; other needs two of them, so
	// other can start only if claimless holds nothing.
	bw := watchBindings(t, e, ns, map[string]int{"claimless": nodesN + 1, "other": 3})
	createTFJob(t, ns, "claimless", withClaim(gpuJob(nodesN, gpus, ""), "data"))
	checkRefusalSaid(t, e, ns, "claimless", "claimless-worker-", `persistentvolumeclaim "data" not found`)
	until := refusedUntil(t, ns, "claimless")
	// Its GPUs are free meanwhile: another job starts and finishes.
	createTFJob(t, ns, "other", gpuJob(2, gpus, "5s"))
	poll(t, 40*time.Second, "other bound whole while claimless backs off", func() (bool, error) {
		return bw.whole("other"), nil
	})
	if n := bw.boundCount("claimless"); n > 0 {
		t.Errorf("claimless has %d pods bound before its claim exists", n)
	}
	waitState(t, ns, "other", "Succeeded", 60*time.Second)
	// The claim appears: claimless starts whole at once, not when its
	// backoff ends.
	e.createBoundClaim(t, ns, "data")
	created := time.Now()
	poll(t, 30*time.Second, "claimless bound whole after its claim appeared", func() (bool, error) {
		return bw.whole("claimless"), nil
	})
	if now := time.Now(); !now.Before(until) {
		t.Errorf("claimless started at %v, after its backoff ended (%v): the claim's appearance did not retry it", now, until)
	} else {
		t.Logf("claimless bound whole %v after its claim appeared, %v before its backoff would have ended",
			time.Since(created).Round(time.Millisecond), until.Sub(now).Round(time.Second))
	}
	checkPlaced(t, ns, "claimless")
	if st, _ := e.jobsEntry(t, ns+"/claimless"); st != "running" {
		t.Errorf("GET /v1/jobs lists claimless as %q once it runs; want running", st)
	}
	bw.check(t, normalWaveMax, true)
}

// gpuNode is the first node with a whole node of GPUs.
func gpuNode(t *testing.T, e *env) string {
	t.Helper()
	for _, nd := range e.nodeList(t) {
		if q := nd.Status.Allocatable["nvidia.com/gpu"]; q.Value() >= 8 {
			return nd.Name
		}
	}
	t.Fatal("no node with 8 GPUs")
	return ""
}

// withTemplateSpec sets key of both replicas' pod specs in spec.
func withTemplateSpec(spec map[string]any, key string, v any) map[string]any {
	for _, role := range []string{"PS", "Worker"} {
		r := spec["tfReplicaSpecs"].(map[string]any)[role].(map[string]any)
		r["template"].(map[string]any)["spec"].(map[string]any)[key] = v
	}
	return spec
}

// checkWaitsUnadmitted checks that job is never admitted (no GangAdmitted,
// no member planned, none bound) and that GET /v1/jobs says why, with says.
func checkWaitsUnadmitted(t *testing.T, e *env, ns, job, says string) {
	t.Helper()
	pollUntil(t, 30*time.Second, job+" waiting in GET /v1/jobs", func() (string, error) {
		st, why := e.jobsEntry(t, ns+"/"+job)
		if st != "waiting" || !strings.Contains(why, says) {
			return fmt.Sprintf("status %q waitsFor %q", st, why), nil
		}
		return "", nil
	})
	// a few admission rounds more (every pod change and node heartbeat
	// makes one): still nothing admitted
	time.Sleep(3 * time.Second)
	for _, p := range jobPods(t, e, ns, job) {
		if p.Annotations["drake.dev/planned-node"] != "" || p.Spec.NodeName != "" {
			t.Errorf("%s was admitted (planned %q, bound %q) onto a node that cannot take it",
				p.Name, p.Annotations["drake.dev/planned-node"], p.Spec.NodeName)
		}
	}
	l, _ := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + job + ",reason=GangAdmitted"})
	if l != nil && len(l.Items) > 0 {
		t.Errorf("%s was admitted: %q", job, l.Items[0].Message)
	}
}

func TestUnschedulableNodeSelectorNothingMatchesWaitsSayingWhyAndStartsWhenANodeIsLabelled(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	label := "e2e.drake.dev/" + ns
	bw := watchBindings(t, e, ns, map[string]int{"picky": 3})
	createTFJob(t, ns, "picky", withTemplateSpec(gpuJob(2, 1, ""), "nodeSelector", map[string]any{label: "yes"}))
	// The planner reads node selectors: picky is never admitted, and says why.
	checkWaitsUnadmitted(t, e, ns, "picky", "no schedulable node matches the node selector and required affinity of the PS")
	// A node gets the label: picky is planned there at once and bound whole.
	node := gpuNode(t, e)
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"yes"}}}`, label)
	if _, err := e.client.CoreV1().Nodes().Patch(ctxFor(t, 30*time.Second), node, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("label node %s: %v", node, err)
	}
	t.Cleanup(func() {
		unpatch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, label)
		_, _ = e.client.CoreV1().Nodes().Patch(ctxFor(t, 30*time.Second), node, types.MergePatchType,
			[]byte(unpatch), metav1.PatchOptions{})
	})
	poll(t, 30*time.Second, "picky bound whole after a node matched it", func() (bool, error) {
		return bw.whole("picky"), nil
	})
	for _, p := range jobPods(t, e, ns, "picky") {
		if p.Spec.NodeName != node || p.Annotations["drake.dev/planned-node"] != node {
			t.Errorf("%s planned on %q, bound to %q; want %s, the only node its selector matches",
				p.Name, p.Annotations["drake.dev/planned-node"], p.Spec.NodeName, node)
		}
	}
	checkPlaced(t, ns, "picky")
	bw.check(t, normalWaveMax, true)
}

func TestUnschedulableTaintedNodeTakesOnlyAGangThatToleratesIt(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	key := "e2e.drake.dev/" + ns
	node := gpuNode(t, e)
	nd, err := e.client.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), node, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node %s: %v", node, err)
	}
	before := nd.Spec.Taints
	nd.Spec.Taints = append(append([]corev1.Taint{}, before...),
		corev1.Taint{Key: key, Value: "yes", Effect: corev1.TaintEffectNoSchedule})
	if _, err := e.client.CoreV1().Nodes().Update(ctxFor(t, 30*time.Second), nd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("taint node %s: %v", node, err)
	}
	t.Cleanup(func() {
		n, err := e.client.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), node, metav1.GetOptions{})
		if err == nil {
			n.Spec.Taints = before
			_, _ = e.client.CoreV1().Nodes().Update(ctxFor(t, 30*time.Second), n, metav1.UpdateOptions{})
		}
	})
	bw := watchBindings(t, e, ns, map[string]int{"tolerant": 3})
	on := map[string]any{"kubernetes.io/hostname": node}
	// Both select the tainted node; only one tolerates its taint.
	createTFJob(t, ns, "intolerant", withTemplateSpec(gpuJob(2, 1, ""), "nodeSelector", on))
	checkWaitsUnadmitted(t, e, ns, "intolerant", "has only taints they tolerate")
	tolerant := withTemplateSpec(gpuJob(2, 1, ""), "nodeSelector", on)
	tolerant = withTemplateSpec(tolerant, "tolerations", []any{map[string]any{
		"key": key, "operator": "Exists", "effect": "NoSchedule"}})
	createTFJob(t, ns, "tolerant", tolerant)
	poll(t, 30*time.Second, "tolerant bound whole on the tainted node", func() (bool, error) {
		return bw.whole("tolerant"), nil
	})
	for _, p := range jobPods(t, e, ns, "tolerant") {
		if p.Spec.NodeName != node {
			t.Errorf("%s bound to %q; want %s", p.Name, p.Spec.NodeName, node)
		}
	}
	waitState(t, ns, "tolerant", "Running", 60*time.Second)
	if st, why := e.jobsEntry(t, ns+"/intolerant"); st != "waiting" {
		t.Errorf("intolerant is %q (%s) in GET /v1/jobs; want waiting", st, why)
	}
	bw.check(t, normalWaveMax, true)
}

func TestKubeflowMinAvailableIsTheGangMinimumAndBelowThePSCountIsRefused(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	ns := e.namespace(t)
	// minAvailable 3 of 1 PS + 4 workers: the gang's minimum is 2 workers.
	spec := gpuJob(4, 1, "")
	spec["runPolicy"].(map[string]any)["schedulingPolicy"] = map[string]any{"minAvailable": int64(3)}
	createTFJob(t, ns, "avail", spec)
	pollUntil(t, 60*time.Second, "avail's members carry a minimum of 2 workers", func() (string, error) {
		pods := jobPods(t, e, ns, "avail")
		if len(pods) == 0 {
			return "no pods", nil
		}
		for _, p := range pods {
			if p.Annotations["drake.dev/planned-node"] == "" {
				continue
			}
			if got := p.Annotations["drake.dev/gang-min-roles"]; got != "ps=1,chief=0,worker=2" {
				return fmt.Sprintf("%s: drake.dev/gang-min-roles %q", p.Name, got), nil
			}
			return "", nil
		}
		return "no member admitted yet", nil
	})
	// Below the PS count: refused with a condition that says why.
	bad := gpuJob(2, 1, "")
	bad["tfReplicaSpecs"].(map[string]any)["PS"].(map[string]any)["replicas"] = int64(2)
	bad["runPolicy"].(map[string]any)["schedulingPolicy"] = map[string]any{"minAvailable": int64(1)}
	createTFJob(t, ns, "toofew", bad)
	j := waitState(t, ns, "toofew", "Failed", 30*time.Second)
	c, _ := condition(j, "Failed")
	if msg, _ := c["message"].(string); !strings.Contains(msg, "minAvailable (1) is below the 2 PS the job cannot run without") {
		t.Errorf("toofew's Failed condition says %q", msg)
	}
	if pods := jobPods(t, e, ns, "toofew"); len(pods) > 0 {
		t.Errorf("toofew has %d pods; a refused job gets none", len(pods))
	}
}
