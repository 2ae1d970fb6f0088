package main

// One arm: the window's jobs submitted at their (compressed) times into a
// namespace of their own, each job's running workers and their nodes
// followed on a pod informer, its progress advanced by the speed model
// (progress.go), and its pods finished through kwok (run-for 0s) when its
// work is done. The partial-gang tracker (kit.Gangs) counts GPUs busy in
// jobs that can run and held by partial gangs. The namespace is deleted
// afterwards so the next arm finds the cluster empty.

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"drake.invalid/e2e/internal/gangbench"
	"drake.invalid/e2e/internal/kit"
)

// replayJob: one job of the window on the cluster.
type replayJob struct {
	name string
	sj   simJob
	at   time.Duration // submission, since the arm's start (compressed)
}

// minWorkers: what the job needs to train in this arm: its min-instances
// under drake's policies (elastic TFJobs), every worker where the job is
// rigid (in-tree, no gang).
func (j replayJob) minWorkers(a gangbench.Arm) int {
	if a.TFJobs {
		return j.sj.MinWorkers
	}
	return j.sj.Workers
}

func (j replayJob) roles(a gangbench.Arm) (ps, workers gangbench.Replica) {
	q := func(milli int64) string { return strconv.FormatInt(milli, 10) + "m" }
	ps = gangbench.Replica{N: j.sj.PS, CPU: q(j.sj.PSCPUMilli), Mem: strconv.FormatInt(j.sj.PSMemBytes, 10), Role: "ps", Scheduler: a.Scheduler}
	workers = gangbench.Replica{N: j.sj.Workers, CPU: q(j.sj.WorkerCPUMilli), Mem: strconv.FormatInt(j.sj.WorkerMemBytes, 10),
		GPUs: j.sj.GPUsPerWorker, Role: "worker", Scheduler: a.Scheduler}
	return ps, workers
}

type podView struct {
	role, node string
	index      int  // its replica index (label, else the name's last number)
	bound      bool // on a node, not being deleted, not ended
	pending    bool // admitted and waiting for a node: no scheduling gate, not bound, not being deleted, not ended
	running    bool // bound and Running
	ended      bool // Succeeded or Failed
	annotated  bool
}

// update: the view of pod p as the informer has it now (deleted: gone).
func (v *podView) update(p *corev1.Pod, deleted bool) {
	live := !deleted && p.DeletionTimestamp == nil
	v.node = p.Spec.NodeName
	v.ended = p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	v.bound = live && !v.ended && p.Spec.NodeName != ""
	v.running = v.bound && p.Status.Phase == corev1.PodRunning
	// drake creates every TFJob pod behind a scheduling gate and ungates
	// those it admits: a gated pod is not of a wave
	v.pending = live && !v.ended && p.Spec.NodeName == "" && len(p.Spec.SchedulingGates) == 0
}

type jobRun struct {
	j         replayJob
	submitted time.Time
	prog      progress
	pods      map[string]*podView
	gen       int // of the finish timer
	timer     *time.Timer
	finished  time.Time // work done (the driver ends its pods)
	done      time.Time // every pod it ran has ended
}

type armRun struct {
	b        *bench
	a        gangbench.Arm
	ns       string
	gangs    *kit.Gangs
	ctx      context.Context
	mu       sync.Mutex
	jobs     map[string]*jobRun
	last     time.Time // last job started or done
	patches  atomic.Int64
	patchErr atomic.Int64
}

// replicaIndex: the pod's training.kubeflow.org/replica-index, else the
// number its name ends with, else -1.
func replicaIndex(p *corev1.Pod) int {
	v := p.Labels["training.kubeflow.org/replica-index"]
	if v == "" {
		v = p.Name[strings.LastIndex(p.Name, "-")+1:]
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return i
}

// state: the job's rate now and its members, a key of its workers and
// their nodes. The members are the workers bound and not being deleted,
// whether or not their kubelet has said Running yet: membership changes
// when the controller and the scheduler act (a wave bound, a shrink's
// deletions, a grow's binds), as in the simulator, and not again as each
// pod of a wave turns Running a little later (counted so, a job that
// starts at its minimum paid a rescale pause for each later worker of its
// own first wave). The rate counts what runs: the PS and workers Running.
// A job that has not started starts once its first wave is bound, no
// worker of it waiting for a node: the simulator starts a job with every
// worker it was admitted with, and a job started on the first of them
// would pay a pause for each later bind of its own wave. rate gets the
// nodes of the PS and of the workers Running, the workers' by replica
// index.
func jobState(pods map[string]*podView, wantPS, minWorkers int, started bool, rate func(ps, workers []string) float64) (float64, string) {
	ps, w := 0, 0
	var psNodes []string
	var workers []*podView
	var mem []string
	binding := false
	for name, p := range pods {
		if p.bound && p.role == "worker" {
			mem = append(mem, name+"@"+p.node)
		}
		if p.pending && p.role == "worker" {
			binding = true
		}
		if !p.running {
			continue
		}
		switch p.role {
		case "ps":
			ps++
			psNodes = append(psNodes, p.node)
		case "worker":
			w++
			workers = append(workers, p)
		}
	}
	sort.Strings(mem)
	members := strings.Join(mem, ",")
	if ps < wantPS || w < minWorkers || w == 0 || (!started && binding) {
		return 0, members
	}
	sort.Slice(workers, func(a, b int) bool { return workers[a].index < workers[b].index })
	wNodes := make([]string, len(workers))
	for i, p := range workers {
		wNodes[i] = p.node
	}
	return rate(psNodes, wNodes), members
}

// distinct: how many different names in lists.
func distinct(lists ...[]string) int {
	seen := map[string]bool{}
	for _, l := range lists {
		for _, n := range l {
			seen[n] = true
		}
	}
	return len(seen)
}

func (r *armRun) state(jr *jobRun) (float64, string) {
	sj := jr.j.sj
	return jobState(jr.pods, sj.PS, jr.j.minWorkers(r.a), !jr.prog.started.IsZero(), func(ps, w []string) float64 {
		if sj.Application == "" {
			return r.b.speed.rate(len(w), sj.GPUsPerWorker, distinct(ps, w))
		}
		v, err := r.b.apps.rate(sj.Application, sj.BatchSize, sj.Samples, w)
		if err != nil {
			fail("job %s: %v", jr.j.name, err) // the window's applications were loaded
		}
		return v
	})
}

func (r *armRun) onPod(p *corev1.Pod, deleted bool) {
	now := time.Now()
	name := p.Labels[kit.JobLabel]
	r.gangs.Apply(p, deleted, now)
	r.mu.Lock()
	defer r.mu.Unlock()
	jr := r.jobs[name]
	if jr == nil {
		return
	}
	v := jr.pods[p.Name]
	if v == nil {
		v = &podView{role: kit.RoleOf(p), index: replicaIndex(p)}
		jr.pods[p.Name] = v
	}
	v.update(p, deleted)
	if deleted {
		delete(jr.pods, p.Name)
	}
	if !jr.finished.IsZero() {
		r.endPods(jr, now)
		return
	}
	waiting := jr.prog.started.IsZero()
	rate, members := r.state(jr)
	jr.prog.set(now, rate, members, time.Duration(r.b.speed.RescalePause*float64(time.Second)))
	if waiting && !jr.prog.started.IsZero() {
		r.last = now
	}
	r.arm(jr)
}

// arm (re)sets the job's finish timer at its finish time at the current
// rate.
func (r *armRun) arm(jr *jobRun) {
	jr.gen++
	if jr.timer != nil {
		jr.timer.Stop()
	}
	at := jr.prog.finishAt()
	if at.IsZero() {
		return
	}
	gen := jr.gen
	jr.timer = time.AfterFunc(time.Until(at), func() { r.fire(jr, gen) })
}

func (r *armRun) fire(jr *jobRun, gen int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen != jr.gen || !jr.finished.IsZero() {
		return
	}
	now := time.Now()
	jr.prog.advance(now)
	if !jr.prog.finished() {
		r.arm(jr) // a timer early by a rounding
		return
	}
	jr.finished = now
	r.endPods(jr, now)
}

// endPods: the work is done; every running pod of the job gets run-for 0s
// (kwok ends it at once); done once none runs and one has ended.
func (r *armRun) endPods(jr *jobRun, now time.Time) {
	running, ended := 0, 0
	for name, p := range jr.pods {
		if p.ended {
			ended++
		}
		if !p.running {
			continue
		}
		running++
		if !p.annotated {
			p.annotated = true
			go r.patch(name)
		}
	}
	if running == 0 && ended > 0 && jr.done.IsZero() {
		jr.done, r.last = now, now
		r.gangs.Finish(jr.j.name, now)
	}
}

func (r *armRun) patch(pod string) {
	body := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"0s"}}}`, gangbench.RunForKey))
	for try := 0; try < 5; try++ {
		r.patches.Add(1)
		_, err := r.b.cs.CoreV1().Pods(r.ns).Patch(r.ctx, pod, types.StrategicMergePatchType, body, metav1.PatchOptions{})
		if err == nil || apierrors.IsNotFound(err) || r.ctx.Err() != nil {
			return
		}
		r.patchErr.Add(1)
		time.Sleep(200 * time.Millisecond) // back-off after an API error
	}
}

func (r *armRun) submit(j replayJob) error {
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	ps, w := j.roles(r.a)
	if r.a.TFJobs {
		_, err := r.b.dyn.Resource(kit.TFJobGVR).Namespace(r.ns).Create(ctx,
			gangbench.TFJob(r.ns, j.name, ps, w, j.sj.MinWorkers, j.sj.MaxWorkers), metav1.CreateOptions{})
		return err
	}
	return gangbench.SubmitPods(ctx, r.b.cs, r.b.dyn, r.ns, j.name, r.a.Group, ps, w)
}

type sample struct {
	t                       float64
	busy, held              int64
	waiting, running, ended int
}

// armResult: one arm's figures (seconds; NaN: not reached).
type armResult struct {
	run                      int
	arm                      string
	jobs, done               int
	meanJCT, medJCT, p95JCT  float64
	meanQueue, makespan      float64
	util                     float64 // busy GPU-seconds / (GPUs x makespan)
	partialGPUs, partialLate float64
	pauses                   int
	deadlock                 bool
	err                      string
	replayed, differing      int             // --decision-logs: the arm's logged rounds
	replayErr                error           // --decision-logs: the replay could not run
	reports                  *progressCounts // progress reports posted, nil when none were
	series                   []sample
	perJob                   []jobRecord
}

type jobRecord struct {
	name, id                 string
	gpus, workers            int
	submitted, started, done float64
	pauses                   int
}

func (b *bench) runArm(a gangbench.Arm, run int, jobs []replayJob) armResult {
	res := armResult{run: run, arm: a.Name, jobs: len(jobs)}
	for _, p := range []*float64{&res.meanJCT, &res.medJCT, &res.p95JCT, &res.meanQueue, &res.makespan, &res.util} {
		*p = math.NaN()
	}
	if err := b.drakeFor(a, run); err != nil {
		res.err = err.Error()
		return res
	}
	if err := gangbench.Activate(b.o.root, b.o.clusterDir, b.procs, a.Process); err != nil {
		res.err = err.Error()
		return res
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.o.armTimeout+2*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("replay-%d-%s", run, a.Name)
	if err := kit.NewNamespace(ctx, b.cs, ns); err != nil {
		res.err = err.Error()
		return res
	}
	defer func() {
		if err := gangbench.DeleteNamespace(b.cs, ns); err != nil && res.err == "" {
			res.err = err.Error()
		}
	}()
	g := kit.NewGangs()
	g.LateAfter = b.o.late
	r := &armRun{b: b, a: a, ns: ns, gangs: g, jobs: map[string]*jobRun{}, ctx: ctx}
	ictx, icancel := context.WithCancel(ctx)
	defer icancel()
	if err := gangbench.WatchPods(ictx, b.cs, ns, r.onPod); err != nil {
		res.err = err.Error()
		return res
	}
	// Each job reports its progress to drake, as it does to drake sim's
	// policy (progress_report.go); with --progress-reports=false neither
	// does (predict).
	var reporter *progressReporter
	if a.TFJobs && b.o.progressReports {
		var err error
		if reporter, err = newProgressReporter(); err != nil {
			res.err = err.Error()
			return res
		}
		go r.reportProgress(ictx, reporter, time.Second)
	}
	start := time.Now()
	fmt.Printf("  %s: t=0 at %s\n", a.Name, start.UTC().Format("15:04:05.000"))
	r.mu.Lock()
	r.last = start
	r.mu.Unlock()
	var subErr atomic.Value
	var subWG sync.WaitGroup
	// The arrival process itself. Jobs are created one at a time in the
	// trace's order, as a user's kubectl apply would: jobs of one instant
	// then carry creation times in that order (ties in the second broken
	// by name, r000 first), so FIFO serves them as the simulator does.
	// Created concurrently, they reached the API server in any order, and
	// gang53's 32-pod head job waited a wave behind smaller ones.
	subWG.Add(1)
	go func() {
		defer subWG.Done()
		for _, j := range jobs {
			select {
			case <-ictx.Done():
				return
			case <-time.After(time.Until(start.Add(j.at))):
			}
			r.mu.Lock()
			r.jobs[j.name] = &jobRun{j: j, submitted: time.Now(), pods: map[string]*podView{}, prog: progress{work: j.sj.Work, startPaused: r.b.apps != nil}}
			r.mu.Unlock()
			g.Expect(j.name, kit.Need{"ps": j.sj.PS, "worker": j.minWorkers(a)})
			if err := r.submit(j); err != nil {
				subErr.CompareAndSwap(nil, fmt.Sprintf("submit %s: %v", j.name, err))
			}
		}
	}()

	tick := time.NewTicker(b.o.sample)
	defer tick.Stop()
	lastArrival := jobs[len(jobs)-1].at
	var busyGPUs float64 // GPU-seconds, sampled
	for {
		<-tick.C
		now := time.Now()
		busy, held := g.GPUs()
		busyGPUs += float64(busy) * b.o.sample.Seconds()
		s := sample{t: now.Sub(start).Seconds(), busy: busy, held: held}
		r.mu.Lock()
		for _, j := range r.jobs {
			switch {
			case !j.done.IsZero():
				s.ended++
			case !j.prog.started.IsZero():
				s.running++
			default:
				s.waiting++
			}
		}
		lastProgress := r.last
		r.mu.Unlock()
		res.series = append(res.series, s)
		if e, _ := subErr.Load().(string); e != "" {
			res.err = e
			break
		}
		if s.ended == len(jobs) {
			break
		}
		if now.Sub(start) > lastArrival && now.Sub(lastProgress) > b.o.stall && busy == 0 {
			res.deadlock = true
			break
		}
		if now.Sub(start) > b.o.armTimeout {
			res.err = fmt.Sprintf("arm deadline %v", b.o.armTimeout)
			break
		}
		if len(res.series)%30 == 0 {
			fmt.Printf("  %-8s t=%4.0fs jobs waiting %3d running %3d done %3d | GPUs busy %3d held by partial gangs %3d\n",
				a.Name, s.t, s.waiting, s.running, s.ended, s.busy, s.held)
		}
	}
	end := time.Now()
	icancel()
	subWG.Wait()
	if reporter != nil {
		fmt.Printf("  %s: %s\n", a.Name, reporter.summary())
		c := reporter.counts()
		res.reports = &c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, jr := range r.jobs {
		if jr.timer != nil {
			jr.timer.Stop()
		}
		jr.gen++
	}
	for _, v := range g.All(end) {
		res.partialGPUs += v.PartialGPUSeconds
		res.partialLate += v.PartialGPUSecondsLate
	}
	since := func(t time.Time) float64 {
		if t.IsZero() {
			return math.NaN()
		}
		return t.Sub(start).Seconds()
	}
	var jct, queue []float64
	var lastDone time.Time
	firstSubmit := time.Time{}
	for _, j := range jobs {
		jr := r.jobs[j.name]
		if jr == nil {
			continue
		}
		if firstSubmit.IsZero() || jr.submitted.Before(firstSubmit) {
			firstSubmit = jr.submitted
		}
		res.pauses += jr.prog.pauses
		res.perJob = append(res.perJob, jobRecord{name: j.name, id: j.sj.ID, gpus: j.sj.GPUs, workers: j.sj.Workers,
			submitted: since(jr.submitted), started: since(jr.prog.started), done: since(jr.done), pauses: jr.prog.pauses})
		if jr.done.IsZero() {
			continue
		}
		res.done++
		jct = append(jct, jr.done.Sub(jr.submitted).Seconds())
		queue = append(queue, jr.prog.started.Sub(jr.submitted).Seconds())
		if jr.done.After(lastDone) {
			lastDone = jr.done
		}
	}
	if len(jct) > 0 {
		res.meanJCT, res.medJCT, res.p95JCT = mean(jct), lowerMedian(jct), gangbench.Pct(jct, 0.95)
		res.meanQueue = mean(queue)
	}
	if res.done == len(jobs) {
		res.makespan = lastDone.Sub(firstSubmit).Seconds()
		res.util = busyGPUs / (float64(b.gpus) * res.makespan)
	}
	if n := r.patchErr.Load(); n > 0 {
		fmt.Printf("  %s: %d run-for annotations failed once and were retried\n", a.Name, n)
	}
	return res
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// lowerMedian: the median as drake sim reports it (the lower middle).
func lowerMedian(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[(len(s)-1)/2]
}
