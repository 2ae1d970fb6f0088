package kit

// Gangs is the partial-gang tracker for drivers that watch many jobs over a
// long run. The definition is the e2e suite's (e2e/gangwatch_test.go): a job
// is *partial* while some member is bound and live but a role has fewer
// members bound or Succeeded than the job needs (every PS, the chief,
// min-instances workers). For bench-e2e's jobs (every worker required, none
// finishing) that is its "0 < bound < size". A job stops being evaluated
// once it is Finished (its TFJob Succeeded or Failed): the clean-up that
// follows is not a gang running short.
//
// The tracker also counts GPUs (nvidia.com/gpu of each member's containers):
// PartialGPUSeconds integrates, over a job's partial intervals, the GPUs its
// live bound members hold (held, yet idle: the job cannot run), and GPUs
// splits the GPUs held now into those of whole jobs and of partial ones.

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
	gpus     int64
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
	// PartialGPUSeconds: GPUs held by live bound members, integrated over
	// the partial intervals (the open one up to the last event; View adds
	// the rest up to now)
	PartialGPUSeconds float64
	// PartialGPUSecondsLate: the part of PartialGPUSeconds held later than
	// Gangs.LateAfter into each partial interval (beyond a barrier's window)
	PartialGPUSecondsLate float64
	heldGPUs              int64     // live bound members' GPUs at the last event
	accAt                 time.Time // PartialGPUSeconds counted up to here
}

// Gangs tracks every job of one namespace; safe for concurrent use.
type Gangs struct {
	mu   sync.Mutex
	jobs map[string]*GangJob
	// LateAfter: GPU-seconds held by a partial job count as late once its
	// partial interval is this old (set before the first event)
	LateAfter time.Duration
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
	g.accrue(j, now)
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
	s.gpus = PodGPUs(p)
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
	g.accrue(j, now)
	g.close(j, now)
	j.finished, j.FinishedAt = true, now
}

// PodGPUs is a pod's nvidia.com/gpu: the larger of its containers' limits
// and requests, summed over the containers.
func PodGPUs(p *corev1.Pod) int64 {
	var n int64
	for _, c := range p.Spec.Containers {
		q := c.Resources.Limits[GPUResource]
		if r, ok := c.Resources.Requests[GPUResource]; ok && r.Cmp(q) > 0 {
			q = r
		}
		n += q.Value()
	}
	return n
}

// GPUResource is the GPU resource the tracker counts.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// accrue adds the GPUs held while partial since the last event.
func (g *Gangs) accrue(j *GangJob, now time.Time) {
	all, late := g.held(j, now)
	j.PartialGPUSeconds += all
	j.PartialGPUSecondsLate += late
	j.accAt = now
}

// held: the GPU-seconds a partial job held since the last event, and the
// part of them later than LateAfter into its partial interval.
func (g *Gangs) held(j *GangJob, now time.Time) (all, late float64) {
	if j.since.IsZero() || j.accAt.IsZero() || !now.After(j.accAt) {
		return 0, 0
	}
	all = float64(j.heldGPUs) * now.Sub(j.accAt).Seconds()
	from := j.since.Add(g.LateAfter)
	if from.Before(j.accAt) {
		from = j.accAt
	}
	if now.After(from) {
		late = float64(j.heldGPUs) * now.Sub(from).Seconds()
	}
	return all, late
}

// liveGPUs: the GPUs of the job's bound, live members.
func (j *GangJob) liveGPUs() int64 {
	var n int64
	for _, s := range j.pods {
		if !s.gone && !s.deleting && s.node != "" && s.phase != corev1.PodSucceeded && s.phase != corev1.PodFailed {
			n += s.gpus
		}
	}
	return n
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
	j.heldGPUs = j.liveGPUs()
	short := j.shortRoles(live, done)
	if short == "" && live["*"]+done["*"] > 0 && j.Whole.IsZero() {
		j.Whole = now
	}
	partial := live["*"] > 0 && short != ""
	switch {
	case partial && j.since.IsZero():
		j.since, j.short = now, short
		j.accAt = now
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
		all, late := g.held(j, now)
		v.PartialGPUSeconds += all
		v.PartialGPUSecondsLate += late
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

// GPUs splits the GPUs that bound, live members hold now: those of jobs
// that are not partial (whole, running) and those of partial jobs (held
// while the job waits for the rest of its gang). Finished jobs count in
// neither.
func (g *Gangs) GPUs() (whole, partial int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, j := range g.jobs {
		if j.finished {
			continue
		}
		n := j.liveGPUs()
		if j.since.IsZero() {
			whole += n
		} else {
			partial += n
		}
	}
	return
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
