package main

// One arm: the job list replayed against one scheduler in a namespace of its
// own, followed on an informer by kit.Gangs (the soak's partial-gang
// tracker), and the namespace deleted afterwards so the next arm finds the
// cluster empty.
//
// A job's pods are created without kwok's finish annotation. When the tracker
// first sees the job whole (every PS and worker bound and live), the driver
// annotates each pod with kwok.drake.dev/run-for (the job's run time), so the
// pods finish that long after the gang came together: a distributed training
// job whose workers wait for their peers does no work while partial, which is
// exactly what a partial gang costs. The driver's annotations are counted and
// taken out of the API writes reported.

import (
	"context"
	"fmt"
	"math"
	"strconv"
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

// jobRecord: one job's times in an arm, seconds since the arm's start (NaN:
// never).
type jobRecord struct {
	name                   string
	gpus, pods             int
	submitted, whole, done float64
	partialGPUs, longest   float64
}

type sample struct {
	t                       float64
	busy, held              int64 // GPUs of whole jobs; GPUs of partial jobs (held, idle)
	waiting, running, ended int
}

type armResult struct {
	seed                     uint64
	arm                      string
	jobs, pods, gpus         int
	whole, done              int
	makespan                 float64 // first arrival -> last job done; NaN if not all done
	jobsPerSecond            float64
	ttwP50, ttwP99           float64 // arrival -> whole gang, s
	partialGPUs              float64 // GPU-seconds held by partial gangs
	partialLate              float64 // of which beyond --window of each partial interval
	longest                  float64 // longest partial interval, s
	longestJob               string
	deadlock                 bool
	stuck                    int // jobs never whole when the arm ended
	writes, driverPatches    float64
	writesPerPod             float64
	writesBy                 map[string]float64
	series                   []sample
	perJob                   []jobRecord
	err                      string
	cleanupSeconds, upSecond float64
}

// jobState is the driver's own record of one job in an arm.
type jobState struct {
	spec      jobSpec
	submitted time.Time
	whole     time.Time
	done      time.Time
	pods      map[string]corev1.PodPhase
	patched   bool
}

type armRun struct {
	b       *bench
	a       gangbench.Arm
	ns      string
	gangs   *kit.Gangs
	mu      sync.Mutex
	jobs    map[string]*jobState
	patches atomic.Int64
	patchEr atomic.Int64
	last    time.Time // last progress: a job whole or done
	ctx     context.Context
}

func (r *armRun) onPod(p *corev1.Pod, deleted bool) {
	now := time.Now()
	name := p.Labels[kit.JobLabel]
	r.gangs.Apply(p, deleted, now)
	r.mu.Lock()
	j := r.jobs[name]
	if j == nil {
		r.mu.Unlock()
		return
	}
	if !deleted {
		j.pods[p.Name] = p.Status.Phase
	}
	var patch []string
	if j.whole.IsZero() && r.gangs.View(name, now).IsWhole {
		j.whole, r.last = now, now
		if !j.patched {
			j.patched = true
			for n := range j.pods {
				patch = append(patch, n)
			}
		}
	}
	if j.done.IsZero() {
		ok := 0
		for _, ph := range j.pods {
			if ph == corev1.PodSucceeded {
				ok++
			}
		}
		if ok == j.spec.pods() {
			j.done, r.last = now, now
			r.mu.Unlock()
			r.gangs.Finish(name, now)
			r.mu.Lock()
		}
	}
	run := j.spec.runFor
	r.mu.Unlock()
	if len(patch) > 0 {
		go r.start(patch, run)
	}
}

// start annotates the pods of a job that just became whole with its run
// time (kwok ends them that long after).
func (r *armRun) start(pods []string, run time.Duration) {
	body := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, gangbench.RunForKey, run.String()))
	var wg sync.WaitGroup
	for _, n := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for try := 0; try < 5; try++ {
				r.patches.Add(1)
				_, err := r.b.cs.CoreV1().Pods(r.ns).Patch(r.ctx, n, types.StrategicMergePatchType, body, metav1.PatchOptions{})
				if err == nil || apierrors.IsNotFound(err) || r.ctx.Err() != nil {
					return
				}
				r.patchEr.Add(1)
				time.Sleep(200 * time.Millisecond) // back-off after an API error
			}
		}()
	}
	wg.Wait()
}

// The replicas' requests: a PS of 1 cpu and 4Gi, workers of 2 cpu and 8Gi per
// GPU (a standard node: 32 cpu, 256Gi, 8 GPUs), as the soak's jobs.
func roles(j jobSpec, sched string) (ps, workers gangbench.Replica) {
	return gangbench.Replica{N: 1, CPU: "1", Mem: "4Gi", Role: "ps", Scheduler: sched},
		gangbench.Replica{N: j.workers, CPU: strconv.Itoa(2 * j.gpw), Mem: strconv.Itoa(8*j.gpw) + "Gi", GPUs: j.gpw,
			Role: "worker", Scheduler: sched}
}

// submit creates one job the arm's way: a TFJob (drake's controller makes the
// pods), a PodGroup with minCount = every pod and the pods (in-tree), or the
// pods alone (no gang).
func (r *armRun) submit(j jobSpec) error {
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	ps, w := roles(j, r.a.Scheduler)
	if r.a.TFJobs {
		_, err := r.b.dyn.Resource(kit.TFJobGVR).Namespace(r.ns).Create(ctx, gangbench.TFJob(r.ns, j.name, ps, w, 0, 0), metav1.CreateOptions{})
		return err
	}
	return gangbench.SubmitPods(ctx, r.b.cs, r.b.dyn, r.ns, j.name, r.a.Group, ps, w)
}

func (b *bench) runArm(a gangbench.Arm, seed uint64, jobs []jobSpec) armResult {
	res := armResult{seed: seed, arm: a.Name, jobs: len(jobs), makespan: math.NaN(), jobsPerSecond: math.NaN(),
		ttwP50: math.NaN(), ttwP99: math.NaN()}
	for _, j := range jobs {
		res.pods += j.pods()
		res.gpus += j.gpus()
	}
	t0 := time.Now()
	if err := gangbench.Activate(b.o.root, b.o.clusterDir, b.procs, a.Process); err != nil {
		res.err = err.Error()
		return res
	}
	res.upSecond = time.Since(t0).Seconds()
	ctx, cancel := context.WithTimeout(context.Background(), b.o.armTimeout+2*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("bg-%d-%s", seed, a.Name)
	if err := kit.NewNamespace(ctx, b.cs, ns); err != nil {
		res.err = err.Error()
		return res
	}
	defer func() {
		t := time.Now()
		if err := gangbench.DeleteNamespace(b.cs, ns); err != nil && res.err == "" {
			res.err = err.Error()
		}
		res.cleanupSeconds = time.Since(t).Seconds()
	}()

	g := kit.NewGangs()
	g.LateAfter = b.o.late
	r := &armRun{b: b, a: a, ns: ns, gangs: g, jobs: map[string]*jobState{}, ctx: ctx}
	ictx, icancel := context.WithCancel(ctx)
	defer icancel()
	if err := gangbench.WatchPods(ictx, b.cs, ns, r.onPod); err != nil {
		res.err = err.Error()
		return res
	}

	before, err := kit.APIWrites(ctx, b.admin, b.cfg.Host)
	if err != nil {
		res.err = "metrics: " + err.Error()
		return res
	}
	start := time.Now()
	r.mu.Lock()
	r.last = start
	r.mu.Unlock()
	var subErr atomic.Value
	var subWG sync.WaitGroup
	go func() {
		for _, j := range jobs {
			time.Sleep(time.Until(start.Add(j.at))) // the arrival process itself
			if ictx.Err() != nil {
				return
			}
			r.mu.Lock()
			r.jobs[j.name] = &jobState{spec: j, submitted: time.Now(), pods: map[string]corev1.PodPhase{}}
			r.mu.Unlock()
			g.Expect(j.name, kit.Need{"ps": 1, "worker": j.workers})
			subWG.Add(1)
			go func() {
				defer subWG.Done()
				if err := r.submit(j); err != nil {
					subErr.CompareAndSwap(nil, fmt.Sprintf("submit %s: %v", j.name, err))
				}
			}()
		}
	}()

	tick := time.NewTicker(b.o.sample)
	defer tick.Stop()
	lastArrival := jobs[len(jobs)-1].at
	for {
		<-tick.C
		now := time.Now()
		busy, held := g.GPUs()
		s := sample{t: now.Sub(start).Seconds(), busy: busy, held: held}
		r.mu.Lock()
		for _, j := range r.jobs {
			switch {
			case !j.done.IsZero():
				s.ended++
			case !j.whole.IsZero():
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
		arrived := now.Sub(start) > lastArrival
		if arrived && now.Sub(lastProgress) > b.o.stall && s.running == 0 {
			res.deadlock = true
			break
		}
		if now.Sub(start) > b.o.armTimeout {
			res.err = fmt.Sprintf("arm deadline %v", b.o.armTimeout)
			break
		}
		if len(res.series)%15 == 0 {
			fmt.Printf("  %-8s t=%4.0fs jobs waiting %3d running %3d done %3d | GPUs busy %3d held by partial gangs %3d\n",
				a.Name, s.t, s.waiting, s.running, s.ended, s.busy, s.held)
		}
	}
	end := time.Now()
	icancel()
	subWG.Wait()
	after, err := kit.APIWrites(ctx, b.admin, b.cfg.Host)
	if err != nil && res.err == "" {
		res.err = "metrics: " + err.Error()
	}
	res.writesBy, res.writes = kit.WorkloadWrites(before, after)
	res.driverPatches = float64(r.patches.Load())
	res.writes -= res.driverPatches
	res.writesBy["pods"] -= res.driverPatches
	res.writesPerPod = res.writes / float64(res.pods)

	views := g.All(end)
	var ttw []float64
	var lastDone time.Time
	r.mu.Lock()
	for _, v := range views {
		j := r.jobs[v.Name]
		if j == nil {
			continue
		}
		res.partialGPUs += v.PartialGPUSeconds
		res.partialLate += v.PartialGPUSecondsLate
		if l := v.Longest.Seconds(); l > res.longest {
			res.longest, res.longestJob = l, v.Name
		}
	}
	since := func(t time.Time) float64 {
		if t.IsZero() {
			return math.NaN()
		}
		return t.Sub(start).Seconds()
	}
	pv := map[string]kit.GangJobView{}
	for _, v := range views {
		pv[v.Name] = v
	}
	for _, j := range jobs {
		st := r.jobs[j.name]
		if st == nil {
			continue
		}
		v := pv[j.name]
		res.perJob = append(res.perJob, jobRecord{name: j.name, gpus: j.gpus(), pods: j.pods(), submitted: since(st.submitted),
			whole: since(st.whole), done: since(st.done), partialGPUs: v.PartialGPUSeconds, longest: v.Longest.Seconds()})
	}
	for _, j := range r.jobs {
		if !j.whole.IsZero() {
			res.whole++
			ttw = append(ttw, j.whole.Sub(j.submitted).Seconds())
		} else {
			res.stuck++
		}
		if !j.done.IsZero() {
			res.done++
			if j.done.After(lastDone) {
				lastDone = j.done
			}
		}
	}
	r.mu.Unlock()
	res.stuck += len(jobs) - len(r.jobs)
	if res.done == len(jobs) {
		res.makespan = lastDone.Sub(start).Seconds()
		res.jobsPerSecond = float64(len(jobs)) / res.makespan
	}
	if len(ttw) > 0 {
		res.ttwP50, res.ttwP99 = gangbench.Pct(ttw, 0.50), gangbench.Pct(ttw, 0.99)
	}
	if n := r.patchEr.Load(); n > 0 {
		fmt.Printf("  %s: %d run-for annotations failed once and were retried\n", a.Name, n)
	}
	return res
}
