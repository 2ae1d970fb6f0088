package e2e

// gangwatch_test.go - the partial-gang watcher every gang test runs for its
// whole length. It watches the pods of one namespace and keeps, per TFJob,
// each member's role (PS, chief, worker), node, phase and whether it is
// being deleted, including members leaving (Deleted events: a rollback is
// visible as the job's pods going away). A job is *partial* while some
// member is bound and live but a role has fewer members bound (or already
// Succeeded: finished members count as done) than the job needs: every PS,
// the chief, min-instances workers. The watcher records every partial
// interval with the roles that were short, and the tests bound them:
//   - a normal wave: at most normalWaveMax (the barrier posts a wave's
//     Bindings together; well under the barrier timeout);
//   - after a fault (preemption, SIGKILL of drake): at most
//     2 x --gang-bind-timeout + 5 s, the bound drake states.
// Each test logs the longest partial interval of each job; TestMain prints
// the longest across the suite.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// normalWaveMax is how long a job may be partial while an ordinary wave is
// bound: the barrier posts all of a wave's Bindings at once, so the spread
// seen on a watch is well under a second; 5 s leaves room for a loaded
// 2-core machine and stays below the barrier timeout (15 s by default).
const normalWaveMax = 5 * time.Second

// roleNeed is a job's per-role minimum: "ps", "chief", "worker" (the
// lower-cased training.kubeflow.org/replica-type), or "*" for all its pods
// counted together (watchBindings' "every pod bound" form).
type roleNeed map[string]int

func (n roleNeed) String() string {
	var parts []string
	for r, v := range n {
		parts = append(parts, fmt.Sprintf("%s>=%d", r, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

type podState struct {
	uid      types.UID
	role     string
	node     string
	phase    corev1.PodPhase
	deleting bool
	gone     bool // deleted from the API server
}

type partialInterval struct {
	start, end time.Time // end zero: still partial
	short      string    // the roles short when it began, e.g. "ps 0/1"
}

type jobTrack struct {
	need      roleNeed
	pods      map[string]*podState
	since     time.Time // partial since; zero when not partial
	short     string
	intervals []partialInterval
	firstBind time.Time
	firstRole string        // the role of the first member seen bound
	bindCh    chan struct{} // closed at the job's first binding
	recreated int           // pods seen again under a new UID
	left      map[string]int
	lastState string
}

// gangWatch is the watcher; see the top of this file.
type gangWatch struct {
	name   string
	mu     sync.Mutex
	jobs   map[string]*jobTrack
	cancel context.CancelFunc
	done   chan struct{}
}

// bindWatch is the older name the gang tests use.
type bindWatch = gangWatch

func (w *gangWatch) job(name string) *jobTrack {
	j := w.jobs[name]
	if j == nil {
		j = &jobTrack{pods: map[string]*podState{}, bindCh: make(chan struct{}), left: map[string]int{}}
		w.jobs[name] = j
	}
	return j
}

func roleOf(p *corev1.Pod) string {
	if r := p.Labels["training.kubeflow.org/replica-type"]; r != "" {
		return strings.ToLower(r)
	}
	for _, r := range []string{"ps", "chief", "worker", "evaluator", "master"} {
		if strings.Contains(p.Name, "-"+r+"-") {
			return r
		}
	}
	return "?"
}

// watchGangs starts the watcher on ns; it stops when the test ends, after
// logging each job's longest partial interval.
func watchGangs(t *testing.T, e *env, ns string) *gangWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &gangWatch{name: t.Name(), jobs: map[string]*jobTrack{}, cancel: cancel, done: make(chan struct{})}
	pods := e.client.CoreV1().Pods(ns)
	first, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatalf("watch pods: %v", err)
	}
	go func() {
		defer close(w.done)
		wi := first
		rv := ""
		for {
			for ev := range wi.ResultChan() {
				if ev.Type == watch.Error {
					rv = "" // e.g. 410 Gone: watch again from the current state
					break
				}
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				rv = p.ResourceVersion
				if ev.Type != watch.Bookmark {
					w.apply(ev.Type, p, time.Now())
				}
			}
			wi.Stop()
			// the server ends watches now and then: resume
			for {
				if ctx.Err() != nil {
					return
				}
				wi, err = pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
				if err == nil {
					break
				}
				rv = ""
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-w.done
		w.report(t)
	})
	return w
}

func (w *gangWatch) apply(typ watch.EventType, p *corev1.Pod, now time.Time) {
	jobName := p.Labels["training.kubeflow.org/job-name"]
	if jobName == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.job(jobName)
	s := j.pods[p.Name]
	if s != nil && s.uid != p.UID {
		if typ == watch.Deleted {
			return // an older incarnation, already replaced
		}
		j.recreated++
		s = nil
	}
	if s == nil {
		s = &podState{uid: p.UID}
		j.pods[p.Name] = s
	}
	wasBoundLive := s.node != "" && !s.deleting && !s.gone && s.phase != corev1.PodSucceeded && s.phase != corev1.PodFailed
	s.role = roleOf(p)
	s.node = p.Spec.NodeName
	s.phase = p.Status.Phase
	s.deleting = p.DeletionTimestamp != nil
	if typ == watch.Deleted {
		s.gone = true
	}
	if wasBoundLive && (s.deleting || s.gone) {
		j.left[s.role]++
	}
	if s.node != "" && j.firstBind.IsZero() {
		j.firstBind, j.firstRole = now, s.role
		close(j.bindCh)
	}
	w.eval(j, now)
}

// counts: members bound and live, and members Succeeded, per role ("*" all).
func (j *jobTrack) counts() (live, done map[string]int) {
	live, done = map[string]int{}, map[string]int{}
	for _, s := range j.pods {
		switch {
		case s.phase == corev1.PodSucceeded:
			done[s.role]++
			done["*"]++
		case s.gone || s.deleting || s.node == "" || s.phase == corev1.PodFailed:
		default:
			live[s.role]++
			live["*"]++
		}
	}
	return
}

// shortRoles lists the roles below the job's need, "ps 0/1 worker 2/4".
func (j *jobTrack) shortRoles(live, done map[string]int) string {
	var out []string
	for r, n := range j.need {
		if have := live[r] + done[r]; have < n {
			out = append(out, fmt.Sprintf("%s %d/%d", r, have, n))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func (w *gangWatch) eval(j *jobTrack, now time.Time) {
	if j.need == nil {
		return
	}
	live, done := j.counts()
	short := j.shortRoles(live, done)
	partial := live["*"] > 0 && short != ""
	switch {
	case partial && j.since.IsZero():
		j.since, j.short = now, short
	case !partial && !j.since.IsZero():
		j.intervals = append(j.intervals, partialInterval{start: j.since, end: now, short: j.short})
		j.since = time.Time{}
	}
}

// expect registers a job's per-role minimum (pods seen before count too).
func (w *gangWatch) expect(job string, need roleNeed) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.job(job)
	j.need = need
	w.eval(j, time.Now())
}

// watchBindings is the gang tests' form: every job must have all `size`
// pods bound (or finished) at once.
func watchBindings(t *testing.T, e *env, ns string, sizes map[string]int) *gangWatch {
	t.Helper()
	w := watchGangs(t, e, ns)
	for job, n := range sizes {
		w.expect(job, roleNeed{"*": n})
	}
	return w
}

// firstBound is closed when the job's first pod is seen bound.
func (w *gangWatch) firstBound(job string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.job(job).bindCh
}

// firstBoundRole is the role of the job's first member seen bound ("" if none).
func (w *gangWatch) firstBoundRole(job string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.job(job).firstRole
}

// whole: every role has its minimum bound or finished.
func (w *gangWatch) whole(job string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.job(job)
	if j.need == nil {
		return false
	}
	live, done := j.counts()
	return j.shortRoles(live, done) == "" && live["*"]+done["*"] > 0
}

// allBound: every expected job is whole.
func (w *gangWatch) allBound() bool {
	for _, name := range w.expected() {
		if !w.whole(name) {
			return false
		}
	}
	return true
}

// boundCount is how many of the job's pods are bound and live or finished.
func (w *gangWatch) boundCount(job string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	live, done := w.job(job).counts()
	return live["*"] + done["*"]
}

// roleCount is how many of one role are bound and live.
func (w *gangWatch) roleCount(job, role string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	live, _ := w.job(job).counts()
	return live[role]
}

// left is how many members of a role were seen leaving while bound.
func (w *gangWatch) left(job, role string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.job(job).left[role]
}

// recreated is how many of the job's pods came back under a new UID.
func (w *gangWatch) recreated(job string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.job(job).recreated
}

// longest is the longest partial interval of the job counted from after
// (the zero time: from the start), the open one up to now included, and the
// roles that were short in it.
func (w *gangWatch) longest(job string, after time.Time) (time.Duration, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.job(job)
	ivs := append([]partialInterval(nil), j.intervals...)
	if !j.since.IsZero() {
		ivs = append(ivs, partialInterval{start: j.since, end: time.Now(), short: j.short + " (still partial)"})
	}
	var best time.Duration
	why := ""
	for _, iv := range ivs {
		start := iv.start
		if start.Before(after) {
			start = after
		}
		if d := iv.end.Sub(start); d > best {
			best, why = d, iv.short
		}
	}
	return best, why
}

// check fails the test for any expected job partial for longer than max, or
// (with complete) not whole now.
func (w *gangWatch) check(t *testing.T, max time.Duration, complete bool) {
	t.Helper()
	w.checkAfter(t, max, complete, time.Time{})
}

// expected lists the jobs whose minimum the watch knows, by name.
func (w *gangWatch) expected() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var jobs []string
	for name, j := range w.jobs {
		if j.need != nil {
			jobs = append(jobs, name)
		}
	}
	sort.Strings(jobs)
	return jobs
}

func (w *gangWatch) checkAfter(t *testing.T, max time.Duration, complete bool, after time.Time) {
	t.Helper()
	jobs := w.expected()
	for _, job := range jobs {
		if d, why := w.longest(job, after); d > max {
			t.Errorf("job %s: partial gang for %v (short: %s), more than %v", job, d.Round(time.Millisecond), why, max)
		}
		if complete && !w.whole(job) {
			w.mu.Lock()
			j := w.jobs[job]
			live, done := j.counts()
			t.Errorf("job %s: not whole: short %s (%d bound, %d done; needs %v)", job,
				j.shortRoles(live, done), live["*"], done["*"], j.need)
			w.mu.Unlock()
		}
	}
}

// suite-wide figures, printed by TestMain
var partialStats struct {
	sync.Mutex
	max   time.Duration
	where string
	n     int
}

func (w *gangWatch) report(t *testing.T) {
	jobs := w.expected()
	for _, job := range jobs {
		d, why := w.longest(job, time.Time{})
		w.mu.Lock()
		j := w.jobs[job]
		n, rec := len(j.intervals), j.recreated
		if !j.since.IsZero() {
			n++
		}
		w.mu.Unlock()
		if why == "" {
			why = "-"
		}
		t.Logf("partial-gang watch: job %s longest partial %.3fs (short: %s), %d partial intervals, %d pods recreated",
			job, d.Seconds(), why, n, rec)
		partialStats.Lock()
		partialStats.n++
		if d > partialStats.max {
			partialStats.max, partialStats.where = d, w.name+" job "+job+" ("+why+")"
		}
		partialStats.Unlock()
	}
}

func printPartialStats() {
	partialStats.Lock()
	defer partialStats.Unlock()
	if partialStats.n == 0 {
		return
	}
	fmt.Fprintf(os.Stdout, "partial-gang seconds observed across the suite: longest %.3fs over %d watched jobs (%s)\n",
		partialStats.max.Seconds(), partialStats.n, partialStats.where)
}
