package main

// A job's progress on the cluster, advanced by the speed model exactly as
// `drake sim` advances it (sim/sim.c): work done grows at T(w, n) while the
// job runs; every change of its membership (a worker joining, leaving or
// moving) once it has started stops it for the rescale pause (a Pollux
// job's start too: startPaused), a change
// during a pause restarting that pause (the simulator charges a batch of
// changes to one job once: kube-scheduler binds a grow's pods one by one,
// milliseconds apart); it finishes when work done reaches its work. A job
// stopped whole (every worker gone: --policy tiresias preempted it) keeps
// its work done, stands still, and pays the pause again when it runs once
// more, as the simulator charges every resume of a preempted job.

import (
	"math"
	"time"
)

type progress struct {
	work        float64 // the job's work: duration x T(W0, n_min(W0))
	done        float64
	rate        float64 // now; 0 while it cannot run
	last        time.Time
	pausedUntil time.Time
	started     time.Time // first time it could run; zero before
	members     string    // the running workers and their nodes at the last change
	pauses      int       // membership changes charged
	changes     int       // rate or membership changes seen
	startPaused bool      // its start costs a pause too (a Pollux job's restart, as drake sim charges it)
	stopped     bool      // started, then every worker gone: its next run is a resume
}

// advance counts work done up to now at the current rate, pauses left out.
func (p *progress) advance(now time.Time) {
	from := p.last
	if p.pausedUntil.After(from) {
		from = p.pausedUntil
	}
	if now.After(from) && p.rate > 0 {
		p.done += p.rate * now.Sub(from).Seconds()
		if p.done > p.work {
			p.done = p.work
		}
	}
	if now.After(p.last) {
		p.last = now
	}
}

// set records the job's state at now: rate (0: cannot run) and members, a
// key of its running workers and their nodes. A change of members after the
// start, to a state that runs, starts a pause of pause.
func (p *progress) set(now time.Time, rate float64, members string, pause time.Duration) {
	p.advance(now)
	if rate == p.rate && members == p.members {
		return
	}
	p.changes++
	if !p.started.IsZero() && members == "" {
		p.stopped = true
	}
	if !p.started.IsZero() && rate > 0 && (members != p.members || p.stopped) {
		p.pausedUntil = now.Add(pause)
		p.pauses++
		p.stopped = false
	}
	if p.started.IsZero() && rate > 0 {
		p.started = now
		if p.startPaused {
			p.pausedUntil = now.Add(pause)
			p.pauses++
		}
	}
	p.rate, p.members = rate, members
}

// finishAt: when the work is done at the current rate (pause included);
// zero time when the job cannot run now.
func (p *progress) finishAt() time.Time {
	if p.rate <= 0 {
		return time.Time{}
	}
	from := p.last
	if p.pausedUntil.After(from) {
		from = p.pausedUntil
	}
	left := p.work - p.done
	if left < 0 {
		left = 0
	}
	return from.Add(time.Duration(math.Ceil(left / p.rate * 1e9)))
}

// finished: the work is done (within a microsecond's work).
func (p *progress) finished() bool { return p.work-p.done <= p.rate*1e-6 || p.done >= p.work }
