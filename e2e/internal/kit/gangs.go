package kit

// Gangs is the partial-gang tracker for drivers that watch many jobs over a
// long run. The definition is the e2e suite's (e2e/gangwatch_test.go): a job
// is *partial* while some member is bound and live but a role has fewer
// members bound or Succeeded than the job needs (every PS, the chief,
// min-instances workers). For bench-e2e's jobs (every worker required, none
// finishing) that is its "0 < bound < size". A job stops being evaluated
// once it is Finished (its TFJob Succeeded or Failed): the clean-up that
// follows is not a gang running short.

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Need is a job's minimum per role: "ps", "chief", "worker" (the
// lower-cased training.kubeflow.org/replica-type).
type Need map[string]int

type member struct {
	uid      types.UID
	role     string
	node     string
	phase    corev1.PodPhase
	deleting bool
	gone     bool
}

// GangJob is one job's record.
type GangJob struct {
	need       Need
	pods       map[string]*member
	since      time.Time // partial since; zero when not partial
	short      string
	Longest    time.Duration // longest closed partial interval
	LongestWhy string        // the roles short in it
	Intervals  int           // partial intervals, the open one included
	Recreated  int           // pods seen again under a new UID
	FirstBind  time.Time
	Whole      time.Time // first time every role had its minimum
	FinishedAt time.Time
	finished   bool
}

// Gangs tracks every job of one namespace; safe for concurrent use.
type Gangs struct {
	mu   sync.Mutex
	jobs map[string]*GangJob
}

func NewGangs() *Gangs { return &Gangs{jobs: map[string]*GangJob{}} }

func (g *Gangs) job(name string) *GangJob {
	j := g.jobs[name]
	if j == nil {
		j = &GangJob{pods: map[string]*member{}}
		g.jobs[name] = j
	}
	return j
}

// RoleOf is a TFJob pod's role, from its replica-type label.
func RoleOf(p *corev1.Pod) string {
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

// Expect registers a job's minimum per role (pods seen before count too).
func (g *Gangs) Expect(job string, need Need) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.job(job)
	j.need = need
	g.eval(j, time.Now())
}

// Apply records one pod event (deleted: the pod is gone from the server).
func (g *Gangs) Apply(p *corev1.Pod, deleted bool, now time.Time) {
	name := p.Labels[JobLabel]
	if name == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.job(name)
	s := j.pods[p.Name]
	if s != nil && s.uid != p.UID {
		if deleted {
			return // an older incarnation, already replaced
		}
		j.Recreated++
		s = nil
	}
	if s == nil {
		s = &member{uid: p.UID}
		j.pods[p.Name] = s
	}
	s.role = RoleOf(p)
	s.node = p.Spec.NodeName
	s.phase = p.Status.Phase
	s.deleting = p.DeletionTimestamp != nil
	s.gone = s.gone || deleted
	if s.node != "" && j.FirstBind.IsZero() {
		j.FirstBind = now
	}
	g.eval(j, now)
}

// Finish stops evaluating the job (its TFJob reached a final state).
func (g *Gangs) Finish(job string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.job(job)
	if j.finished {
		return
	}
	g.eval(j, now)
	g.close(j, now)
	j.finished, j.FinishedAt = true, now
}

func (j *GangJob) counts() (live, done map[string]int) {
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

func (j *GangJob) shortRoles(live, done map[string]int) string {
	var out []string
	for r, n := range j.need {
		if have := live[r] + done[r]; have < n {
			out = append(out, fmt.Sprintf("%s %d/%d", r, have, n))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func (g *Gangs) close(j *GangJob, now time.Time) {
	if j.since.IsZero() {
		return
	}
	if d := now.Sub(j.since); d > j.Longest {
		j.Longest, j.LongestWhy = d, j.short
	}
	j.since = time.Time{}
}

func (g *Gangs) eval(j *GangJob, now time.Time) {
	if j.need == nil || j.finished {
		return
	}
	live, done := j.counts()
	short := j.shortRoles(live, done)
	if short == "" && live["*"]+done["*"] > 0 && j.Whole.IsZero() {
		j.Whole = now
	}
	partial := live["*"] > 0 && short != ""
	switch {
	case partial && j.since.IsZero():
		j.since, j.short = now, short
		j.Intervals++
	case !partial:
		g.close(j, now)
	}
}

// GangJobView is a copy of one job's record with its open interval (up to
// now) counted in Longest.
type GangJobView struct {
	GangJob
	Name        string
	PartialNow  bool
	IsWhole     bool
	LiveMembers int
}

// View copies one job's record.
func (g *Gangs) View(name string, now time.Time) GangJobView {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.view(name, g.job(name), now)
}

func (g *Gangs) view(name string, j *GangJob, now time.Time) GangJobView {
	v := GangJobView{GangJob: *j, Name: name}
	v.pods = nil
	if !j.since.IsZero() {
		v.PartialNow = true
		if d := now.Sub(j.since); d > v.Longest {
			v.Longest, v.LongestWhy = d, j.short+" (still partial)"
		}
	}
	live, _ := j.counts()
	v.LiveMembers = live["*"]
	v.IsWhole = !j.Whole.IsZero()
	return v
}

// All copies every job's record, by name.
func (g *Gangs) All(now time.Time) []GangJobView {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]GangJobView, 0, len(g.jobs))
	for name, j := range g.jobs {
		out = append(out, g.view(name, j, now))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// LivePods counts the bound, live, unfinished members of every job.
func (g *Gangs) LivePods() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, j := range g.jobs {
		live, _ := j.counts()
		n += live["*"]
	}
	return n
}
