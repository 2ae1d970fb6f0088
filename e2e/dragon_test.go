package e2e

// DRAGON's rules on the real control plane (drake serve --policy dragon):
// its two timers fire as DRAGON's controller fires them, through drake's
// admission, barrier and backstop. With the e2e suite's thresholds
// (--starve-after 5s, --idle-after 10s; see withReconciler), a job that
// cannot start makes the oldest running job give workers (ScaleDown, the
// oldest first: drake's own rule takes from the newest), and once nothing
// has happened for the idle time the job that gave grows back (ScaleUp).
// A job that has finished has left DRAGON's running list: ScaleUp grows the
// job still running, never the finished one.

import (
	"strings"
	"testing"
	"time"
)

func TestDragonPolicyScalesDownTheOldestForAStarvingJobAndScalesUpWhenIdle(t *testing.T) {
	e := withReconciler(t)
	withDrakeEnv(t, e, "DRAKE_POLICY", "dragon")
	f := fillWithTwoElasticJobs(t, e)
	ns, w, gpus, aMax := f.ns, f.w, f.gpus, f.aMax

	// c needs two whole nodes; nothing is free. After starve_after DRAGON's
	// ScaleDown takes workers from the oldest running job first: a gives
	// all it can (down to its min, 1) before b gives any. drake's own rule
	// takes from the newest, b, first.
	created := time.Now()
	createTFJob(t, ns, "c", elasticJob(2, 2, 2, gpus, "30s"))
	down := e.jobEvent(t, ns, "a", "ScaledDown", 90*time.Second)
	waited := time.Since(created)
	// creationTimestamp and drake's clock are whole seconds: up to 1 s early
	if waited < 4*time.Second {
		t.Errorf("a gave workers %v after c was created; DRAGON waits --starve-after (5s) first", waited)
	}
	poll(t, 120*time.Second, "c whole", func() (bool, error) { return w.whole("c"), nil })
	if n := liveWorkers(t, e, ns, "a"); n != 1 {
		t.Errorf("a, the oldest job, has %d workers while c runs; DRAGON takes from it first, down to its min (1)", n)
	}
	if n := liveWorkers(t, e, ns, "b"); aMax-1 >= 2 && n != f.bMax {
		t.Errorf("b has %d workers; a's %d gave c enough, so b keeps its %d", n, aMax-1, f.bMax)
	}

	// ScaleUp runs once nothing has happened for idle_after (10s): its
	// first growth comes no sooner than that after the last ScaleDown.
	up := e.jobEvent(t, ns, "a", "ScaledUp", 120*time.Second)
	gap := up.LastTimestamp.Sub(down.LastTimestamp.Time)
	if gap < 9*time.Second { // Event times are whole seconds
		t.Errorf("a grew %v after its ScaleDown; DRAGON's ScaleUp waits --idle-after (10s) without an action", gap)
	}
	if !strings.Contains(up.Message, "DRAGON's ScaleUp") {
		t.Errorf("ScaledUp on a says %q; want DRAGON's rule named", up.Message)
	}
	poll(t, 180*time.Second, "a back at max", func() (bool, error) { return liveWorkers(t, e, ns, "a") == aMax, nil })
	t.Logf("a: gave workers %v after c arrived (%s); grew %v after that (%s)",
		waited.Round(time.Second), down.Message, gap, up.Message)
	w.check(t, normalWaveMax, false)
}

// A TFJob that has finished has left DRAGON's running list, as it leaves
// DRAGON's own: ScaleUp grows the job still running into the idle GPUs,
// never the finished one, whose pods stay (cleanPodPolicy None) and whose
// gated workers are never started.
func TestDragonPolicyScalesUpTheJobStillRunningNotOneThatFinished(t *testing.T) {
	e := withReconciler(t)
	withDrakeEnv(t, e, "DRAKE_POLICY", "dragon")
	ns, gpus, slots := idleGPUSlots(t, e, 3)
	// done asks for 1 worker and may grow to all but one slot; it runs 3 s.
	// live, admitted after it, restarts DRAGON's action timer, so ScaleUp
	// (--idle-after, 10 s) comes after done has finished.
	createTFJob(t, ns, "done", elasticJob(1, 1, slots-1, gpus, "3s"))
	poll(t, 120*time.Second, "done started", func() (bool, error) { return liveWorkers(t, e, ns, "done") == 1, nil })
	createTFJob(t, ns, "live", elasticJob(1, 1, slots-1, gpus, ""))
	poll(t, 120*time.Second, "live started", func() (bool, error) { return liveWorkers(t, e, ns, "live") == 1, nil })
	waitState(t, ns, "done", "Succeeded", 60*time.Second)
	up := e.jobEvent(t, ns, "live", "ScaledUp", 120*time.Second)
	if !strings.Contains(up.Message, "DRAGON's ScaleUp") {
		t.Errorf("ScaledUp on live says %q; want DRAGON's rule named", up.Message)
	}
	poll(t, 60*time.Second, "live at its max", func() (bool, error) {
		return liveWorkers(t, e, ns, "live") == slots-1, nil
	})
	if hasEvent(e.jobEvents(t, ns, "done"), "ScaledUp") {
		t.Errorf("done, finished, was grown: %v", e.jobEvents(t, ns, "done"))
	}
	bound := 0
	for _, p := range jobPods(t, e, ns, "done") {
		if strings.Contains(p.Name, "-worker-") && p.Spec.NodeName != "" {
			bound++
		}
	}
	if bound != 1 {
		t.Errorf("done has %d workers bound; it finished with 1 and none may start after", bound)
	}
	t.Logf("live grew 1 -> %d (%s)", slots-1, up.Message)
}
