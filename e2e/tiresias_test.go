package e2e

// Tiresias' 2D-LAS on the real control plane (drake serve --policy
// tiresias), with a decision every 5 s and a threshold that a job filling
// the cluster passes in 4 s of running and a one-worker job in 4 s per
// worker slot of the cluster (16 s or more, past its 12 s run): the long
// job has passed it by the decision after the small one arrives, which
// preempts the long job whole (its pods deleted, its Services kept, a
// Preempted Event) and runs the small one; once that has finished the long
// one is readmitted and runs to the end. The small job's run spans two
// decisions after the preemption, so the long one, its pods made again,
// waits through at least one of them and drake says why (with a 5 s run it
// could end just as the next decision came, and the long job start again
// with nothing to say). Meanwhile the long job's last
// condition is Preempted. (With a threshold the small job also passed, the
// two would take turns: in one queue the one that entered it first runs.)
// Every round drake logged decides the same when `drake sim --replay`
// decides it again.
// Everything is read from the API server.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTiresiasPolicyPreemptsALongJobForAShortOneAndReadmitsItAfter(t *testing.T) {
	e := withReconciler(t)
	ns, gpus, slots := idleGPUSlots(t, e, 4)
	logPath := decisionLogPath(t, ns)
	withDrakeEnv(t, e, "DRAKE_POLICY", "tiresias", "DRAKE_DECISION_LOG", logPath,
		"DRAKE_LAS_THRESHOLD", strconv.Itoa(4*slots*gpus), "DRAKE_LAS_INTERVAL", "5s")

	createTFJob(t, ns, "long", gpuJob(slots, gpus, "20s"))
	poll(t, 120*time.Second, "long running on every slot", func() (bool, error) {
		return liveWorkers(t, e, ns, "long") == slots, nil
	})
	before := map[string]bool{}
	for _, p := range jobPods(t, e, ns, "long") {
		before[string(p.UID)] = true
	}
	svcs := func() map[string]string {
		l, err := e.client.CoreV1().Services(ns).List(ctxFor(t, 10*time.Second),
			metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=long"})
		if err != nil {
			t.Fatalf("list services: %v", err)
		}
		m := map[string]string{}
		for _, s := range l.Items {
			m[s.Name] = string(s.UID)
		}
		return m
	}
	svcBefore := svcs()

	createTFJob(t, ns, "short", gpuJob(1, gpus, "12s"))
	ev := e.jobEvent(t, ns, "long", "Preempted", 60*time.Second)
	if !strings.Contains(ev.Message, "queue 1, attained service") {
		t.Errorf("Preempted on long says %q; want its queue (1) and service", ev.Message)
	}
	// every pod of long is deleted: the pods it has now are new ones
	poll(t, 60*time.Second, "long's pods all replaced", func() (bool, error) {
		pods := jobPods(t, e, ns, "long")
		for _, p := range pods {
			if before[string(p.UID)] {
				return false, nil
			}
		}
		return len(pods) == slots+1, nil
	})
	// it waits as a new job: its last condition is Preempted (Running
	// False), and drake says why it waits
	waitState(t, ns, "long", "Preempted", 30*time.Second)
	wait := e.jobEvent(t, ns, "long", "GangWaiting", 30*time.Second)
	if !strings.Contains(wait.Message, "2D-LAS queue 1") {
		t.Errorf("GangWaiting on long says %q; want its 2D-LAS queue", wait.Message)
	}
	waitState(t, ns, "short", "Succeeded", 90*time.Second)
	poll(t, 60*time.Second, "long readmitted on every slot", func() (bool, error) {
		return liveWorkers(t, e, ns, "long") == slots, nil
	})
	waitState(t, ns, "long", "Running", 30*time.Second)
	waitState(t, ns, "long", "Succeeded", 90*time.Second)
	for name, uid := range svcBefore {
		if svcs()[name] != uid {
			t.Errorf("service %s of long was replaced or deleted by the preemption", name)
		}
	}
	if len(svcBefore) == 0 {
		t.Errorf("long had no Services before its preemption")
	}
	t.Logf("long preempted for short (%s), readmitted and finished", ev.Message)
	if kinds := logKinds(t, logPath); kinds["preempt"] == 0 {
		t.Errorf("the decision log holds no preempt action: %v", kinds)
	}
	replayDecisionLog(t, logPath)
}
