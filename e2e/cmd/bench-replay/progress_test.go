package main

import (
	"fmt"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * 1e9)) }

func near(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d > time.Millisecond || d < -time.Millisecond {
		t.Fatalf("%s: got %v, want %v", what, got.Sub(t0), want.Sub(t0))
	}
}

func TestProgressRunsAtItsRateAndFinishesWhenTheWorkIsDone(t *testing.T) {
	p := progress{work: 100}
	p.set(at(3), 10, "w0@n0", 2*time.Second)
	near(t, "finish", p.finishAt(), at(13)) // no pause at the start
	p.advance(at(13))
	if !p.finished() {
		t.Fatalf("done %v of 100 at the finish time", p.done)
	}
}

func TestAGrowStopsTheJobForThePauseThenRunsFaster(t *testing.T) {
	p := progress{work: 100}
	p.set(at(0), 10, "a", 2*time.Second)
	p.set(at(5), 20, "a,b", 2*time.Second) // 50 done; paused to 7; 50 at 20/s
	near(t, "finish", p.finishAt(), at(9.5))
	if p.pauses != 1 {
		t.Fatalf("pauses %d", p.pauses)
	}
}

func TestAJobStoppedWholeKeepsItsWorkAndPaysThePauseOnceToResume(t *testing.T) {
	p := progress{work: 100}
	p.set(at(0), 10, "a,b", 2*time.Second)
	p.set(at(4), 0, "b", 2*time.Second) // preempted: 40 done, its pods leave
	p.set(at(4.1), 0, "", 2*time.Second)
	p.set(at(20), 0, "a,b", 2*time.Second) // readmitted: bound, not Running yet
	if !p.finishAt().IsZero() || math.Abs(p.done-40) > 1e-9 {
		t.Fatalf("done %v, finish %v while preempted; want 40 and none", p.done, p.finishAt())
	}
	p.set(at(21), 10, "a,b", 2*time.Second) // runs again: paused to 23, 60 left
	near(t, "finish", p.finishAt(), at(29))
	if p.pauses != 1 {
		t.Fatalf("pauses %d, want the resume's alone", p.pauses)
	}
}

func TestChangesDuringAPauseRestartItOnce(t *testing.T) {
	p := progress{work: 100}
	p.set(at(0), 10, "a", 2*time.Second)
	p.set(at(5), 15, "a,b", 2*time.Second)
	p.set(at(5.1), 20, "a,b,c", 2*time.Second) // paused 5 .. 7.1
	near(t, "finish", p.finishAt(), at(9.6))
}

func TestAJobBelowItsMinimumStandsStillAndPaysAPauseToResume(t *testing.T) {
	p := progress{work: 100}
	p.set(at(0), 10, "a,b", 2*time.Second)
	p.set(at(4), 0, "a", 2*time.Second) // 40 done
	if !p.finishAt().IsZero() {
		t.Fatal("a stalled job has no finish time")
	}
	p.set(at(10), 10, "a,c", 2*time.Second) // paused to 12, 60 left
	near(t, "finish", p.finishAt(), at(18))
	if math.Abs(p.done-40) > 1e-9 {
		t.Fatalf("done %v while stalled, want 40", p.done)
	}
}

func TestTheSpeedModelIsDrakes(t *testing.T) {
	m := speedModel{ScalingLoss: 0.05, LocalityPenalty: 0.15, RescalePause: 10, NodeGPUs: 8}
	if r := m.rate(1, 1, 1); r != 1 {
		t.Fatalf("T(1, 1) = %v", r)
	}
	packed, spread := m.rate(8, 1, 1), m.rate(8, 1, 3)
	if packed <= 1 || packed >= 8 {
		t.Fatalf("T(8, 1) = %v: not sub-linear", packed)
	}
	if math.Abs(spread*(1+2*0.15)-packed) > 1e-9 {
		t.Fatalf("T(8, 3) = %v, want T(8, 1) / 1.3 = %v", spread, packed/1.3)
	}
	if m.rate(0, 1, 1) != 0 {
		t.Fatal("T(0) != 0")
	}
}

// A wave of eight workers (minimum four) bound together whose pods turn
// Running one by one: the job starts at its fourth worker and speeds up
// as the rest run, with no rescale pause. A shrink's deletions, ms apart,
// cost one pause.
// oneJob: a job of one PS (bound and Running) and a minimum of 4 workers,
// its progress, and step(s), which feeds the driver's view of its pods at
// s seconds to its progress (a 10 s pause, a rate of one per worker).
func oneJob() (map[string]*podView, *progress, func(s float64)) {
	pods := map[string]*podView{"ps-0": {role: "ps", node: "n0", bound: true, running: true}}
	rate := func(ps, w []string) float64 { return float64(len(w)) }
	p := &progress{work: 1000}
	step := func(s float64) {
		r, m := jobState(pods, 1, 4, !p.started.IsZero(), rate)
		p.set(at(s), r, m, 10*time.Second)
	}
	return pods, p, step
}

func TestAWaveTurningRunningPodByPodCostsNoPause(t *testing.T) {
	pods, p, step := oneJob()
	for i := 0; i < 8; i++ {
		pods[fmt.Sprintf("worker-%d", i)] = &podView{role: "worker", node: "n0", bound: true}
	}
	step(0)
	for i := 0; i < 8; i++ {
		pods[fmt.Sprintf("worker-%d", i)].running = true
		step(1 + 0.5*float64(i))
	}
	if p.started != at(2.5) || p.pauses != 0 || p.rate != 8 {
		t.Fatalf("started %v, pauses %d, rate %v; want 2.5s, 0, 8", p.started.Sub(t0), p.pauses, p.rate)
	}
	for i := 4; i < 8; i++ { // a shrink to four
		pods[fmt.Sprintf("worker-%d", i)].bound, pods[fmt.Sprintf("worker-%d", i)].running = false, false
		step(30 + 0.001*float64(i))
	}
	if p.pauses != 4 || p.pausedUntil != at(40.007) {
		t.Fatalf("after the shrink: pauses %d, paused until %v; want 4 changes ending 40.007s", p.pauses, p.pausedUntil.Sub(t0))
	}
}

// The driver's side of a wave kube-scheduler binds pod by pod, seconds
// apart under load: the job starts with the whole wave, as in the
// simulator, not on its first four workers with a pause for each later one.
func TestAJobStartsOnceItsWaveIsBound(t *testing.T) {
	pods, p, step := oneJob()
	for i := 0; i < 8; i++ {
		pods[fmt.Sprintf("worker-%d", i)] = &podView{role: "worker", pending: true}
	}
	step(0)
	for i := 0; i < 8; i++ { // bound and Running one by one, 0.5 s apart
		w := pods[fmt.Sprintf("worker-%d", i)]
		w.pending, w.bound, w.running, w.node = false, true, true, "n0"
		step(1 + 0.5*float64(i))
		if i < 7 && !p.started.IsZero() {
			t.Fatalf("started with %d of the wave's 8 workers bound", i+1)
		}
	}
	if p.started != at(4.5) || p.pauses != 0 || p.rate != 8 {
		t.Fatalf("started %v, pauses %d, rate %v; want 4.5s, 0, 8", p.started.Sub(t0), p.pauses, p.rate)
	}
	pods["worker-8"] = &podView{role: "worker", pending: true} // a grow
	step(60)
	pods["worker-8"].pending, pods["worker-8"].bound, pods["worker-8"].node = false, true, "n1"
	step(61)
	if p.pauses != 1 || p.rate != 8 {
		t.Fatalf("a started job's grow: pauses %d, rate %v; want 1, 8 (still running while it binds)", p.pauses, p.rate)
	}
}

// A Pollux job's start costs the pause too, as drake sim charges it.
func TestAPolluxJobsStartIsPaused(t *testing.T) {
	p := progress{work: 100, startPaused: true}
	p.set(at(0), 10, "a", 2*time.Second)
	if got := p.finishAt(); !got.Equal(at(12)) {
		t.Fatalf("finish %v, want %v", got, at(12))
	}
	if p.pauses != 1 {
		t.Fatalf("pauses %d, want 1", p.pauses)
	}
	q := progress{work: 100}
	q.set(at(0), 10, "a", 2*time.Second)
	if got := q.finishAt(); !got.Equal(at(10)) {
		t.Fatalf("without: finish %v, want %v", got, at(10))
	}
}
