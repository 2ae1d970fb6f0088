package e2e

// tfjob_test.go - the TFJob reconciler on the real control plane: drake is
// restarted once with DRAKE_RECONCILE=true after the CRD in config/crd/ is
// installed, then each test submits TFJobs as a user would and checks the
// pods, services, TF_CONFIG, status and Events drake produces.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

var tfjobGVR = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}

var (
	reconcilerOnce sync.Once
	reconcilerErr  error
	dyn            dynamic.Interface
)

// withReconciler installs the CRD and restarts drake with the reconciler on,
// once per test binary.
func withReconciler(t *testing.T) *env {
	t.Helper()
	e := need(t)
	reconcilerOnce.Do(func() {
		kubectl := filepath.Join(os.Getenv("DRAKE_CP_BIN"), "kubectl")
		for _, plural := range []string{"tfjobs", "pytorchjobs"} {
			crd := filepath.Join(e.root, "config", "crd", "kubeflow.org_"+plural+".yaml")
			out, err := exec.Command(kubectl, "apply", "-f", crd).CombinedOutput()
			if err != nil {
				reconcilerErr = fmt.Errorf("kubectl apply crd: %v: %s", err, out)
				return
			}
			out, err = exec.Command(kubectl, "wait", "--for=condition=Established",
				"crd/"+plural+".kubeflow.org", "--timeout=60s").CombinedOutput()
			if err != nil {
				reconcilerErr = fmt.Errorf("crd not established: %v: %s", err, out)
				return
			}
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
		if err != nil {
			reconcilerErr = err
			return
		}
		if dyn, err = dynamic.NewForConfig(cfg); err != nil {
			reconcilerErr = err
			return
		}
		os.Setenv("DRAKE_RECONCILE", "true")
		os.Setenv("DRAKE_KINDS", "tfjobs,pytorchjobs") // one queue for both kinds
		// scaling thresholds in seconds, so scale_test.go runs in a minute
		os.Setenv("DRAKE_STARVE_AFTER", "5s")
		os.Setenv("DRAKE_IDLE_AFTER", "10s")
		// where TFJob pods send progress reports
		os.Setenv("DRAKE_PROGRESS_URL", strings.TrimSuffix(e.metricsURL, "/metrics")+"/v1/progress")
		// and the CA that verifies drake there, which pods get as PEM
		os.Setenv("DRAKE_PROGRESS_CA_FILE", filepath.Join(e.certDir, "ca.crt"))
		if e.mode == "gang" {
			// gang-only mode: TFJob pods must request the resource that
			// routes them to drake (managedResources in the scheduler config)
			os.Setenv("DRAKE_GANG_RESOURCE", "drake.dev/gang")
		}
		cmd := exec.Command(filepath.Join(e.root, "hack", "cluster-drake.sh"), "restart")
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			reconcilerErr = fmt.Errorf("restart drake with the reconciler: %v: %s", err, out)
		}
	})
	if reconcilerErr != nil {
		t.Fatal(reconcilerErr)
	}
	return e
}

func tfjobs(ns string) dynamic.ResourceInterface { return dyn.Resource(tfjobGVR).Namespace(ns) }

// tensorflow is a replica spec whose container is named as Kubeflow requires.
func tensorflow(replicas int, restart string, annotations map[string]string) map[string]any {
	meta := map[string]any{}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return map[string]any{
		"replicas": int64(replicas), "restartPolicy": restart,
		"template": map[string]any{
			"metadata": meta,
			"spec": map[string]any{
				"automountServiceAccountToken": false,
				"containers": []any{map[string]any{
					"name": "tensorflow", "image": "example.invalid/tf:1",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
				}},
			},
		},
	}
}

func createTFJob(t *testing.T, ns, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	out, err := tfjobs(ns).Create(ctxFor(t, 30*time.Second), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create tfjob %s/%s: %v", ns, name, err)
	}
	return out
}

// state is the type of the TFJob's last True condition ("" if none).
func state(t *testing.T, ns, name string) (string, *unstructured.Unstructured) {
	t.Helper()
	j, err := tfjobs(ns).Get(ctxFor(t, 30*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get tfjob: %v", err)
	}
	conds, _, _ := unstructured.NestedSlice(j.Object, "status", "conditions")
	last := ""
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] == "True" {
			last, _ = m["type"].(string)
		}
	}
	return last, j
}

func waitState(t *testing.T, ns, name, want string, d time.Duration) *unstructured.Unstructured {
	t.Helper()
	var j *unstructured.Unstructured
	poll(t, d, fmt.Sprintf("tfjob %s/%s %s", ns, name, want), func() (bool, error) {
		var s string
		s, j = state(t, ns, name)
		return s == want, nil
	})
	return j
}

func jobPods(t *testing.T, e *env, ns, job string) []corev1.Pod {
	t.Helper()
	l, err := e.client.CoreV1().Pods(ns).List(ctxFor(t, 30*time.Second),
		metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=" + job})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	sort.Slice(l.Items, func(i, k int) bool { return l.Items[i].Name < l.Items[k].Name })
	return l.Items
}

func waitPodCount(t *testing.T, e *env, ns, job string, n int, d time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	poll(t, d, fmt.Sprintf("%d pods of %s/%s", n, ns, job), func() (bool, error) {
		pods = jobPods(t, e, ns, job)
		return len(pods) == n, nil
	})
	return pods
}

func tfConfig(p *corev1.Pod) (map[string]any, bool) {
	for _, c := range p.Spec.Containers {
		if c.Name != "tensorflow" {
			continue
		}
		for _, ev := range c.Env {
			if ev.Name == "TF_CONFIG" {
				var m map[string]any
				return m, json.Unmarshal([]byte(ev.Value), &m) == nil
			}
		}
	}
	return nil, false
}

func TestTFJobDragonReadmeJobYieldsExpectedReplicas(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	kubectl := filepath.Join(os.Getenv("DRAKE_CP_BIN"), "kubectl")
	out, err := exec.Command(kubectl, "-n", ns, "apply", "-f",
		filepath.Join(e.root, "config", "crd", "examples", "dragon-readme.yaml")).CombinedOutput()
	if err != nil {
		t.Fatalf("apply DRAGON's README job: %v: %s", err, out)
	}
	pods := waitPodCount(t, e, ns, "job1", 5, 60*time.Second)
	_, job := state(t, ns, "job1")
	want := []string{"job1-ps-0", "job1-worker-0", "job1-worker-1", "job1-worker-2", "job1-worker-3"}
	for i, p := range pods {
		if p.Name != want[i] {
			t.Fatalf("pod %d is %s, want %s", i, p.Name, want[i])
		}
		typ, idx := strings.Split(p.Name, "-")[1], strings.Split(p.Name, "-")[2]
		for k, v := range map[string]string{
			"training.kubeflow.org/operator-name": "tfjob-controller",
			"training.kubeflow.org/job-name":      "job1",
			"training.kubeflow.org/replica-type":  typ,
			"training.kubeflow.org/replica-index": idx,
		} {
			if p.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q", p.Name, k, p.Labels[k], v)
			}
		}
		if (p.Name == "job1-worker-0") != (p.Labels["training.kubeflow.org/job-role"] == "master") {
			t.Errorf("%s: job-role label %q", p.Name, p.Labels["training.kubeflow.org/job-role"])
		}
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != job.GetUID() ||
			p.OwnerReferences[0].Controller == nil || !*p.OwnerReferences[0].Controller {
			t.Errorf("%s: owner references %+v", p.Name, p.OwnerReferences)
		}
		if p.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
			t.Errorf("%s: restartPolicy %s", p.Name, p.Spec.RestartPolicy)
		}
		cfg, ok := tfConfig(&p)
		if !ok {
			t.Fatalf("%s: no TF_CONFIG on container tensorflow", p.Name)
		}
		cluster, _ := cfg["cluster"].(map[string]any)
		workers, _ := cluster["worker"].([]any)
		ps, _ := cluster["ps"].([]any)
		if len(workers) != 4 || len(ps) != 1 || workers[3] != "job1-worker-3."+ns+".svc:2222" ||
			ps[0] != "job1-ps-0."+ns+".svc:2222" || cfg["environment"] != "cloud" {
			t.Errorf("%s: TF_CONFIG %v", p.Name, cfg)
		}
		task, _ := cfg["task"].(map[string]any)
		if task["type"] != typ || fmt.Sprint(task["index"]) != idx {
			t.Errorf("%s: TF_CONFIG task %v", p.Name, task)
		}
	}
	for _, name := range want {
		var svc *corev1.Service
		poll(t, 30*time.Second, "service "+name, func() (bool, error) {
			s, err := e.client.CoreV1().Services(ns).Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			svc = s
			return err == nil, err
		})
		if svc.Spec.ClusterIP != corev1.ClusterIPNone || len(svc.Spec.Ports) != 1 ||
			svc.Spec.Ports[0].Port != 2222 || svc.Spec.Selector["training.kubeflow.org/replica-index"] == "" {
			t.Errorf("service %s: %+v", name, svc.Spec)
		}
	}
	// Worker.replicas is 4 = max-instances: every pod is ungated and runs
	for _, name := range want {
		e.waitPhase(t, ns, name, corev1.PodRunning, 90*time.Second)
	}
	waitState(t, ns, "job1", "Running", 60*time.Second)
	// the status follows the pods' phases a moment later
	poll(t, 60*time.Second, "replicaStatuses.Worker.active = 4", func() (bool, error) {
		_, j := state(t, ns, "job1")
		active, _, _ := unstructured.NestedInt64(j.Object, "status", "replicaStatuses", "Worker", "active")
		return active == 4, nil
	})
}

func TestTFJobSucceedsAndCleanPodPolicyAllRemovesPods(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	createTFJob(t, ns, "done", map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": "All"},
		"tfReplicaSpecs": map[string]any{
			"PS":     tensorflow(1, "OnFailure", nil),
			"Worker": tensorflow(2, "OnFailure", map[string]string{"kwok.drake.dev/run-for": "3s"}),
		},
	})
	waitState(t, ns, "done", "Succeeded", 120*time.Second)
	waitPodCount(t, e, ns, "done", 0, 60*time.Second)
	_, j := state(t, ns, "done")
	if _, ok, _ := unstructured.NestedString(j.Object, "status", "completionTime"); !ok {
		t.Errorf("no completionTime in %v", j.Object["status"])
	}
}

func TestTFJobFailedOnFailurePodIsRecreated(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	createTFJob(t, ns, "retry", map[string]any{
		"tfReplicaSpecs": map[string]any{"PS": tensorflow(1, "OnFailure", nil), "Worker": tensorflow(2, "OnFailure", nil)},
	})
	waitPodCount(t, e, ns, "retry", 3, 60*time.Second)
	old := e.waitPhase(t, ns, "retry-worker-1", corev1.PodRunning, 90*time.Second)
	old.Status.Phase = corev1.PodFailed
	old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "tensorflow", Image: "x",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
	if _, err := e.client.CoreV1().Pods(ns).UpdateStatus(ctxFor(t, 30*time.Second), old, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("mark pod failed: %v", err)
	}
	poll(t, 60*time.Second, "retry-worker-1 recreated", func() (bool, error) {
		p, err := e.client.CoreV1().Pods(ns).Get(ctxFor(t, 10*time.Second), "retry-worker-1", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && p.UID != old.UID, err
	})
	e.waitPhase(t, ns, "retry-worker-1", corev1.PodRunning, 90*time.Second)
	_, j := state(t, ns, "retry")
	if j.GetAnnotations()["drake.dev/restarts"] != "1" {
		t.Errorf("restarts annotation %q, want 1", j.GetAnnotations()["drake.dev/restarts"])
	}
}

func TestTFJobDeletedGarbageCollectsPodsAndServices(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	createTFJob(t, ns, "gone", map[string]any{
		"tfReplicaSpecs": map[string]any{"PS": tensorflow(1, "Never", nil), "Worker": tensorflow(2, "Never", nil)},
	})
	waitPodCount(t, e, ns, "gone", 3, 60*time.Second)
	bg := metav1.DeletePropagationBackground
	if err := tfjobs(ns).Delete(ctxFor(t, 30*time.Second), "gone", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatalf("delete tfjob: %v", err)
	}
	waitPodCount(t, e, ns, "gone", 0, 90*time.Second)
	poll(t, 60*time.Second, "services of gone removed", func() (bool, error) {
		l, err := e.client.CoreV1().Services(ns).List(ctxFor(t, 10*time.Second),
			metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=gone"})
		return err == nil && len(l.Items) == 0, err
	})
}

// killDrake SIGKILLs drake by its recorded PID and waits until it is reaped.
func killDrake(t *testing.T, e *env) {
	t.Helper()
	pidText, err := os.ReadFile(filepath.Join(e.dir, "pids", "drake.pid"))
	if err != nil {
		t.Fatalf("drake pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL drake: %v", err)
	}
	// cluster-drake.sh refuses to start while the old PID answers kill -0,
	// which a zombie does until it is reaped
	poll(t, 30*time.Second, "killed drake reaped", func() (bool, error) {
		return syscall.Kill(pid, 0) != nil, nil
	})
}

func TestTFJobKilledMidReconcileKeepsCreatedPodsAndFinishes(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	createTFJob(t, ns, "big", map[string]any{
		"tfReplicaSpecs": map[string]any{"PS": tensorflow(1, "OnFailure", nil), "Worker": tensorflow(40, "OnFailure", nil)},
	})
	var early []corev1.Pod
	poll(t, 60*time.Second, "first pods of big", func() (bool, error) {
		early = jobPods(t, e, ns, "big")
		return len(early) > 0, nil
	})
	seen := len(early)
	killDrake(t, e)
	early = jobPods(t, e, ns, "big") // what exists once drake is dead
	t.Logf("drake killed after seeing %d of 41 pods; %d existed once it was dead", seen, len(early))
	e.drakeCtl(t, "start")
	pods := waitPodCount(t, e, ns, "big", 41, 90*time.Second)
	uid := map[string]string{}
	for _, p := range pods {
		uid[p.Name] = string(p.UID)
	}
	for _, p := range early {
		if uid[p.Name] != string(p.UID) {
			t.Errorf("pod %s was recreated across the kill (uid %s, was %s)", p.Name, uid[p.Name], p.UID)
		}
	}
	poll(t, 60*time.Second, "41 services of big", func() (bool, error) {
		l, err := e.client.CoreV1().Services(ns).List(ctxFor(t, 10*time.Second),
			metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=big"})
		return err == nil && len(l.Items) == 41, err
	})
	waitState(t, ns, "big", "Running", 120*time.Second)
}

func TestTFJobSurvivesDrakeSIGKILLWithSamePods(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	createTFJob(t, ns, "steady", map[string]any{
		"tfReplicaSpecs": map[string]any{"PS": tensorflow(1, "OnFailure", nil), "Worker": tensorflow(3, "OnFailure", nil)},
	})
	pods := waitPodCount(t, e, ns, "steady", 4, 60*time.Second)
	for _, p := range pods {
		e.waitPhase(t, ns, p.Name, corev1.PodRunning, 90*time.Second)
	}
	before := map[string]string{}
	for _, p := range jobPods(t, e, ns, "steady") {
		before[p.Name] = string(p.UID)
	}
	killDrake(t, e)
	e.drakeCtl(t, "start")
	time.Sleep(5 * time.Second) // several passes of the restarted reconciler
	after := jobPods(t, e, ns, "steady")
	if len(after) != len(before) {
		t.Fatalf("%d pods after restart, %d before", len(after), len(before))
	}
	for _, p := range after {
		if before[p.Name] != string(p.UID) || p.DeletionTimestamp != nil {
			t.Errorf("pod %s changed across the restart (uid %s, was %s)", p.Name, p.UID, before[p.Name])
		}
	}
	if s, _ := state(t, ns, "steady"); s != "Running" {
		t.Errorf("state %q after restart, want Running", s)
	}
}

func TestTFJobInvalidGetsFailedConditionAndForeignJobIsIgnored(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	bad := tensorflow(1, "Never", nil)
	bad["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["name"] = "main"
	createTFJob(t, ns, "invalid", map[string]any{"tfReplicaSpecs": map[string]any{"Worker": bad}})
	createTFJob(t, ns, "theirs", map[string]any{
		"runPolicy":      map[string]any{"managedBy": "kubeflow.org/training-operator"},
		"tfReplicaSpecs": map[string]any{"Worker": tensorflow(1, "Never", nil)},
	})
	j := waitState(t, ns, "invalid", "Failed", 60*time.Second)
	conds, _, _ := unstructured.NestedSlice(j.Object, "status", "conditions")
	last, _ := conds[len(conds)-1].(map[string]any)
	if msg, _ := last["message"].(string); !strings.Contains(msg, `no container named "tensorflow"`) {
		t.Errorf("Failed condition message %q", msg)
	}
	time.Sleep(3 * time.Second)
	if pods := jobPods(t, e, ns, "theirs"); len(pods) != 0 {
		t.Errorf("drake created %d pods for a job managed by another controller", len(pods))
	}
	if s, _ := state(t, ns, "theirs"); s != "" {
		t.Errorf("drake wrote status %q on a job managed by another controller", s)
	}
}

func TestTFJobSuspendRemovesReplicasAndResumeBringsThemBack(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	createTFJob(t, ns, "pause", map[string]any{
		"runPolicy":      map[string]any{"suspend": false},
		"tfReplicaSpecs": map[string]any{"PS": tensorflow(1, "OnFailure", nil), "Worker": tensorflow(1, "OnFailure", nil)},
	})
	waitState(t, ns, "pause", "Running", 90*time.Second)
	setSuspend := func(v bool) {
		patch := []byte(fmt.Sprintf(`{"spec":{"runPolicy":{"suspend":%t}}}`, v))
		if _, err := tfjobs(ns).Patch(ctxFor(t, 30*time.Second), "pause", types.MergePatchType,
			patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("set suspend=%t: %v", v, err)
		}
	}
	setSuspend(true)
	waitState(t, ns, "pause", "Suspended", 60*time.Second)
	waitPodCount(t, e, ns, "pause", 0, 60*time.Second)
	poll(t, 60*time.Second, "services of pause removed", func() (bool, error) {
		l, err := e.client.CoreV1().Services(ns).List(ctxFor(t, 10*time.Second),
			metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=pause"})
		return err == nil && len(l.Items) == 0, err
	})
	setSuspend(false)
	waitState(t, ns, "pause", "Running", 90*time.Second)
	waitPodCount(t, e, ns, "pause", 2, 60*time.Second)
}
