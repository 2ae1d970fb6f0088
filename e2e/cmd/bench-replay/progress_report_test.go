package main

import (
	"testing"
	"time"
)

func TestAReportIsTheFractionDoneInStepsClampedToTheJob(t *testing.T) {
	for _, c := range []struct {
		done float64
		step int64
		val  float64
	}{{0.25, 250000, 0.25}, {-0.1, 0, 0}, {1.5, progressSteps, 1}} {
		r := reportBody("ns", "j-worker-0", c.done)
		if r.Step != c.step || r.TotalSteps != progressSteps || r.Value != c.val || r.Metric != "accuracy" ||
			r.Namespace != "ns" || r.Pod != "j-worker-0" {
			t.Errorf("done %v: %+v; want step %d of %d, value %v", c.done, r, c.step, progressSteps, c.val)
		}
	}
}

func TestOnlyAStartedUnfinishedJobReportsAndForItsWorkerZero(t *testing.T) {
	t0 := time.Unix(1000, 0)
	running := &jobRun{prog: progress{work: 100}, pods: map[string]*podView{
		"a-worker-1": {role: "worker", index: 1, bound: true},
		"a-worker-0": {role: "worker", index: 0, bound: true},
	}}
	running.prog.set(t0, 10, "m", 0) // 10 units a second from t0
	waiting := &jobRun{prog: progress{work: 100}, pods: map[string]*podView{
		"b-worker-0": {role: "worker", index: 0},
	}}
	finished := &jobRun{prog: progress{work: 100}, finished: t0, pods: map[string]*podView{
		"c-worker-0": {role: "worker", index: 0, bound: true},
	}}
	finished.prog.set(t0, 10, "m", 0)
	unbound := &jobRun{prog: progress{work: 100}, pods: map[string]*podView{
		"d-worker-0": {role: "worker", index: 0},
	}}
	unbound.prog.set(t0, 10, "m", 0)
	r := &armRun{ns: "ns", jobs: map[string]*jobRun{"a": running, "b": waiting, "c": finished, "d": unbound}}
	got := r.due(t0.Add(2 * time.Second))
	if len(got) != 1 || got[0].Pod != "a-worker-0" || got[0].Step != 200000 {
		t.Fatalf("reports %+v; want a-worker-0 alone at step 200000 (20 of 100 done)", got)
	}
}
