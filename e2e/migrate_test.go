package e2e

// Migration on the real control plane (issue 12): a worker on an
// overloaded node is recreated elsewhere under its own name, index,
// service and TF_CONFIG, through the normal gang path; requests and
// progress reports are authenticated and refused with reasons.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withDrakeEnv restarts drake with key=value in its environment (a
// DRAKE_<FLAG> fallback) for the rest of the test, and restarts it as it
// was when the test ends.
func withDrakeEnv(t *testing.T, e *env, key, value string) {
	t.Helper()
	prev, had := os.LookupEnv(key)
	os.Setenv(key, value)
	e.drakeCtl(t, "restart")
	t.Cleanup(func() {
		if had {
			os.Setenv(key, prev)
		} else {
			os.Unsetenv(key)
		}
		e.drakeCtl(t, "restart")
	})
}

// podEnv is the value of name in the tensorflow container's environment.
func podEnv(p *corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		for _, ev := range c.Env {
			if ev.Name == name {
				return ev.Value
			}
		}
	}
	return ""
}

func TestMigrateAWorkerOffAnOverloadedNodeKeepsItsNameAndTFConfig(t *testing.T) {
	e := withReconciler(t)
	waitQuiet(t, e)
	ns := e.namespace(t)
	// Three small CPU jobs: drake packs each whole onto the tightest node,
	// so all three share one node, far above the others' load.
	w := watchGangs(t, e, ns)
	for _, job := range []string{"m1", "m2", "m3"} {
		w.expect(job, roleNeed{"ps": 1, "worker": 1})
		// two workers, min one: a worker may move without the job going
		// below its minimum
		createTFJob(t, ns, job, map[string]any{
			"min-instances": int64(1), "max-instances": int64(2),
			"runPolicy": map[string]any{"cleanPodPolicy": "None"},
			"tfReplicaSpecs": map[string]any{
				"PS":     cpuReplica(1, "1", 0, map[string]string{"kwok.drake.dev/run-for": "90s"}),
				"Worker": cpuReplica(2, "3", 0, map[string]string{"kwok.drake.dev/run-for": "90s"}),
			},
		})
		poll(t, 60*time.Second, job+" whole", func() (bool, error) { return w.whole(job), nil })
	}
	nodes := map[string]bool{}
	before := map[string]*corev1.Pod{}
	for _, job := range []string{"m1", "m2", "m3"} {
		for _, p := range jobPods(t, e, ns, job) {
			nodes[p.Spec.NodeName] = true
			p := p
			before[p.Name] = &p
		}
	}
	if len(nodes) != 1 {
		t.Skipf("the three jobs landed on %d nodes (%v), not one: nothing is overloaded", len(nodes), nodes)
	}
	var source string
	for n := range nodes {
		source = n
	}
	// Now drake may move them (the pods above are the "before").
	withDrakeEnv(t, e, "DRAKE_MIGRATE", "true")
	// The moment a move is recorded, drake is SIGKILLed and started again:
	// the move must complete from its record, the replica neither lost
	// nor doubled. The overload rule may go on to move other replicas
	// after this one; the test follows the move it interrupted.
	var job, replica, target string
	poll(t, 120*time.Second, "a MigrationStarted event", func() (bool, error) {
		l, err := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second),
			metav1.ListOptions{FieldSelector: "reason=MigrationStarted"})
		if err != nil || len(l.Items) == 0 {
			return false, err
		}
		ev := l.Items[0]
		var from string
		// "moving worker-1 from a to b (why; by policy)"
		if _, err := fmt.Sscanf(ev.Message, "moving %s from %s to %s", &replica, &from, &target); err != nil {
			return false, fmt.Errorf("MigrationStarted says %q: %v", ev.Message, err)
		}
		if from != source {
			return false, fmt.Errorf("MigrationStarted says %q; want a move from %s", ev.Message, source)
		}
		job = ev.InvolvedObject.Name
		return true, nil
	})
	pidText, err := os.ReadFile(filepath.Join(e.dir, "pids", "drake.pid"))
	if err != nil {
		t.Fatalf("drake pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	_ = syscall.Kill(pid, syscall.SIGKILL)
	poll(t, 30*time.Second, "killed drake reaped", func() (bool, error) { return syscall.Kill(pid, 0) != nil, nil })
	t.Logf("drake SIGKILLed while moving %s of %s from %s to %s", replica, job, source, target)
	e.drakeCtl(t, "start")
	// drake completes that move: its Migrated event names the replica.
	prefix := replica + " moved from " + source + " to "
	var landed string
	poll(t, 120*time.Second, "a Migrated event for "+job+" "+replica, func() (bool, error) {
		l, err := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second),
			metav1.ListOptions{FieldSelector: "reason=Migrated,involvedObject.name=" + job})
		if err != nil {
			return false, err
		}
		for _, ev := range l.Items {
			if strings.HasPrefix(ev.Message, prefix) {
				t.Logf("%s: %s", job, ev.Message)
				landed = strings.Fields(strings.TrimPrefix(ev.Message, prefix))[0]
				return true, nil
			}
		}
		return false, nil
	})
	after := e.getPod(t, ns, job+"-"+replica)
	old := before[after.Name]
	switch {
	case old == nil:
		t.Errorf("worker %s did not exist before: a move keeps the pod's name", after.Name)
	case after.UID == old.UID:
		t.Errorf("worker %s kept its uid: it was not recreated", after.Name)
	case landed == source || old.Spec.NodeName != source || after.Spec.NodeName != landed:
		t.Errorf("worker %s was on %s, is on %s, and the event says it landed on %s: it did not leave the overloaded node %s",
			after.Name, old.Spec.NodeName, after.Spec.NodeName, landed, source)
	case podEnv(after, "TF_CONFIG") != podEnv(old, "TF_CONFIG"):
		t.Errorf("TF_CONFIG changed:\n%s\n%s", podEnv(old, "TF_CONFIG"), podEnv(after, "TF_CONFIG"))
	case after.Labels["training.kubeflow.org/replica-index"] != old.Labels["training.kubeflow.org/replica-index"]:
		t.Errorf("replica index changed")
	}
	// the move is counted on the TFJob (the cap reads it)
	_, j := state(t, ns, job)
	rec := j.GetAnnotations()["drake.dev/migrations"]
	if !strings.Contains(rec, `"`+replica+`":{"last":`) {
		t.Errorf("drake.dev/migrations on %s: %s; want %s counted", job, rec, replica)
	}
	// No new moves from here on; a move already recorded is still carried
	// to its end. Then every job has exactly its two workers, all bound:
	// no replica lost or doubled by the moves or the kill.
	os.Setenv("DRAKE_MIGRATE", "false")
	e.drakeCtl(t, "restart")
	for _, jb := range []string{"m1", "m2", "m3"} {
		pollUntil(t, 60*time.Second, jb+" settled with its two workers bound", func() (string, error) {
			_, tj := state(t, ns, jb)
			if r := tj.GetAnnotations()["drake.dev/migrations"]; strings.Contains(r, `"moving":{`) {
				return "a move is in flight: " + r, nil
			}
			workers, unbound := 0, []string{}
			for _, p := range jobPods(t, e, ns, jb) {
				if strings.Contains(p.Name, "-worker-") {
					workers++
					if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
						unbound = append(unbound, p.Name)
					}
				}
			}
			if workers != 2 || len(unbound) > 0 {
				return fmt.Sprintf("%d worker pods (want 2); not bound or being deleted: %v", workers, unbound), nil
			}
			return "", nil
		})
	}
	for _, jb := range []string{"m1", "m2", "m3"} {
		waitState(t, ns, jb, "Succeeded", 180*time.Second)
	}
	// A worker move never leaves a job below its minimum: each job's
	// single worker was briefly gone, which the watch sees as short; the
	// backstop's bound applies.
	w.check(t, gangBound(), false)
}
