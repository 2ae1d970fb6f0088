package e2e

// Load-aware scaling on the real control plane: running elastic
// jobs give workers to a job that starves and grow back into the capacity
// it leaves, by gang/scale.h's step, with the thresholds drake serve is
// started with in the e2e suite (--starve-after 5s, --idle-after 10s; see
// withReconciler).

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// elasticJob is gpuJob with DRAGON's min-instances / max-instances.
func elasticJob(workers, min, max, gpu int, runFor string) map[string]any {
	j := gpuJob(workers, gpu, runFor)
	j["min-instances"] = int64(min)
	j["max-instances"] = int64(max)
	return j
}

// gpuSlots counts how many workers of gpus nvidia.com/gpu the cluster holds.
func gpuSlots(t *testing.T, e *env, gpus int) int {
	t.Helper()
	n := 0
	for _, nd := range e.nodeList(t) {
		q := nd.Status.Allocatable["nvidia.com/gpu"]
		n += int(q.Value()) / gpus
	}
	return n
}

// liveWorkers counts a job's worker pods that are bound and not finished.
func liveWorkers(t *testing.T, e *env, ns, job string) int {
	n := 0
	for _, p := range jobPods(t, e, ns, job) {
		if strings.Contains(p.Name, "-worker-") && p.Spec.NodeName != "" &&
			p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded &&
			p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// scaleRecord is drake.dev/scale on a TFJob.
func scaleRecord(t *testing.T, ns, job string) (workers []int, forKey string) {
	t.Helper()
	_, j := state(t, ns, job)
	v := j.GetAnnotations()["drake.dev/scale"]
	if v == "" {
		return nil, ""
	}
	var rec struct {
		Workers []int  `json:"workers"`
		For     string `json:"for"`
	}
	if err := json.Unmarshal([]byte(v), &rec); err != nil {
		t.Fatalf("drake.dev/scale on %s is not JSON: %q", job, v)
	}
	return rec.Workers, rec.For
}

// twoElasticJobs is what fillWithTwoElasticJobs set up.
type twoElasticJobs struct {
	ns         string
	w          *gangWatch
	gpus       int
	aMax, bMax int
}

// idleGPUSlots waits until no pod holds a GPU and gives a new namespace,
// the whole-node GPU count and how many workers of it the cluster holds;
// it skips the test below need.
func idleGPUSlots(t *testing.T, e *env, need int) (ns string, gpus, slots int) {
	t.Helper()
	_, gpus = clusterShape(t)
	waitGPUsIdle(t, e)
	ns = e.namespace(t)
	if slots = gpuSlots(t, e, gpus); slots < need {
		t.Skipf("needs %d whole-node GPU workers of %d GPUs; the cluster holds %d", need, gpus, slots)
	}
	return ns, gpus, slots
}

// fillWithTwoElasticJobs starts a, then b (min 1 each) at their max, filling
// every whole-node GPU slot of a quiet cluster in a new namespace; the
// watch expects them and c (a PS and two workers), the job each test then
// makes starve.
func fillWithTwoElasticJobs(t *testing.T, e *env) twoElasticJobs {
	t.Helper()
	ns, gpus, slots := idleGPUSlots(t, e, 4)
	aMax := slots / 2
	bMax := slots - aMax
	w := watchGangs(t, e, ns)
	w.expect("a", roleNeed{"ps": 1, "worker": 1})
	w.expect("b", roleNeed{"ps": 1, "worker": 1})
	w.expect("c", roleNeed{"ps": 1, "worker": 2})
	createTFJob(t, ns, "a", elasticJob(aMax, 1, aMax, gpus, ""))
	poll(t, 120*time.Second, "a at max", func() (bool, error) { return liveWorkers(t, e, ns, "a") == aMax, nil })
	createTFJob(t, ns, "b", elasticJob(bMax, 1, bMax, gpus, ""))
	poll(t, 120*time.Second, "b at max", func() (bool, error) { return liveWorkers(t, e, ns, "b") == bMax, nil })
	return twoElasticJobs{ns, w, gpus, aMax, bMax}
}

func TestScaleRunningJobsShrinkForAStarvingJobAndGrowBack(t *testing.T) {
	e := withReconciler(t)
	f := fillWithTwoElasticJobs(t, e)
	ns, w, gpus, aMax, bMax := f.ns, f.w, f.gpus, f.aMax, f.bMax

	// c needs two whole nodes: nothing is free, so it waits, then starves
	// and takes two workers, from b (the newest) first.
	created := time.Now()
	createTFJob(t, ns, "c", elasticJob(2, 2, 2, gpus, "15s"))
	ev := e.jobEvent(t, ns, "b", "ScaledDown", 90*time.Second)
	waited := time.Since(created)
	if !strings.Contains(ev.Message, "to "+ns+"/c") {
		t.Errorf("ScaledDown on b says %q; want it to name %s/c", ev.Message, ns)
	}
	// creationTimestamp and drake's clock are whole seconds: up to 1 s early
	if waited < 4*time.Second {
		t.Errorf("b gave workers %v after c was created; c had to wait --starve-after (5s)", waited)
	}
	if ws, forKey := scaleRecord(t, ns, "b"); len(ws) != bMax-2 || forKey != ns+"/c" {
		t.Errorf("drake.dev/scale on b: workers %v, for %q; want %d workers, for %s/c", ws, forKey, bMax-2, ns)
	}
	poll(t, 120*time.Second, "c whole", func() (bool, error) { return w.whole("c"), nil })
	if n := liveWorkers(t, e, ns, "a"); n != aMax {
		t.Errorf("a has %d workers while c runs; only b needed to give (want %d)", n, aMax)
	}
	poll(t, 60*time.Second, "b down to its record", func() (bool, error) { return liveWorkers(t, e, ns, "b") == bMax-2, nil })
	// GET /v1/jobs lists the running jobs with their scaling state.
	jobsURL := strings.TrimSuffix(e.metricsURL, "/metrics") + "/v1/jobs"
	want := fmt.Sprintf(`{"job":"%s/b","workers":%d,"min":1,"max":%d,"lastScaled":`, ns, bMax-2, bMax)
	poll(t, 30*time.Second, "b's scaling state in GET /v1/jobs", func() (bool, error) {
		resp, err := e.drakeHTTP(t).Get(jobsURL)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && strings.Contains(string(body), want) &&
			strings.Contains(string(body), fmt.Sprintf(`"gaveTo":"%s/c"}`, ns)), nil
	})

	// c finishes; after --idle-after without admission or scaling, b
	// grows back to its max into the nodes c left.
	waitState(t, ns, "c", "Succeeded", 120*time.Second)
	finished := time.Now()
	up := e.jobEvent(t, ns, "b", "ScaledUp", 120*time.Second)
	if !strings.Contains(up.Message, "modelled speed +") {
		t.Errorf("ScaledUp on b says %q", up.Message)
	}
	poll(t, 120*time.Second, "b back at max", func() (bool, error) { return liveWorkers(t, e, ns, "b") == bMax, nil })
	t.Logf("b: gave 2 workers %v after c arrived (%s); grew back %v after c finished (%s)",
		waited.Round(time.Second), ev.Message, time.Since(finished).Round(time.Second), up.Message)
	// kubectl shows each job's workers against its min and max.
	out, err := exec.Command(filepath.Join(os.Getenv("DRAKE_CP_BIN"), "kubectl"), "get", "tfjobs",
		"-n", ns, "b").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get tfjobs: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	head, row := []string{}, []string{}
	if len(lines) == 2 {
		head, row = strings.Fields(lines[0]), strings.Fields(lines[1])
	}
	if len(head) != 6 || len(row) != 6 || head[2] != "WORKERS" || head[3] != "MIN" || head[4] != "MAX" ||
		row[3] != "1" || row[4] != fmt.Sprint(bMax) {
		t.Errorf("kubectl get tfjobs b:\n%s\nwant WORKERS, MIN 1 and MAX %d columns", out, bMax)
	}
	// Never partial, never below min: the watcher saw every job whole
	// whenever any of its members ran.
	w.check(t, normalWaveMax, false)
	for _, job := range []string{"a", "b"} {
		if !w.whole(job) {
			t.Errorf("job %s is not whole at the end", job)
		}
	}
}

// drake SIGKILLed the moment a scale-down is recorded on its job: after the
// restart the shrink is carried out from the record, exactly. The giving
// job keeps the workers the record names, each bound once and untouched
// (same uid), and none of the others is bound (their replacements wait,
// gated, for the job to grow again); the starving job starts whole; the
// other job never gives; no gang is ever partial past the bound.
func TestAScaleDownCutByADrakeKillCompletesFromItsRecord(t *testing.T) {
	e := withReconciler(t)
	f := fillWithTwoElasticJobs(t, e)
	ns, w, gpus, aMax, bMax := f.ns, f.w, f.gpus, f.aMax, f.bMax
	before := map[string]string{} // b's pods: name -> uid
	for _, p := range jobPods(t, e, ns, "b") {
		before[p.Name] = string(p.UID)
	}
	createTFJob(t, ns, "c", elasticJob(2, 2, 2, gpus, "15s"))
	var kept []int
	poll(t, 90*time.Second, "b's scale-down recorded for c", func() (bool, error) {
		ws, forKey := scaleRecord(t, ns, "b")
		kept = ws
		return forKey == ns+"/c", nil
	})
	killDrake(t, e)
	t.Logf("drake SIGKILLed with b's record naming workers %v; %d of b's workers live", kept,
		liveWorkers(t, e, ns, "b"))
	e.drakeCtl(t, "start")
	if len(kept) != bMax-2 {
		t.Fatalf("b's record keeps workers %v; want %d of them", kept, bMax-2)
	}
	poll(t, 120*time.Second, "c whole", func() (bool, error) { return w.whole("c"), nil })
	pollUntil(t, 60*time.Second, "b exactly its record", func() (string, error) {
		want := map[string]bool{}
		for _, i := range kept {
			want[fmt.Sprintf("b-worker-%d", i)] = true
		}
		seen := map[string]int{}
		for _, p := range jobPods(t, e, ns, "b") {
			if !strings.Contains(p.Name, "-worker-") || p.DeletionTimestamp != nil {
				continue
			}
			if !want[p.Name] {
				if p.Spec.NodeName != "" {
					return p.Name + " is bound; the record gave it away", nil
				}
				continue // a replacement, gated until b grows again
			}
			seen[p.Name]++
			switch {
			case p.Spec.NodeName == "":
				return p.Name + " is not bound", nil
			case string(p.UID) != before[p.Name]:
				return fmt.Sprintf("%s was recreated (uid %s, was %s)", p.Name, p.UID, before[p.Name]), nil
			}
		}
		for name := range want {
			if seen[name] != 1 {
				return fmt.Sprintf("%s is live %d times", name, seen[name]), nil
			}
		}
		return "", nil
	})
	if n := liveWorkers(t, e, ns, "a"); n != aMax {
		t.Errorf("a has %d workers; only b gave (want %d)", n, aMax)
	}
	if ps := e.getPod(t, ns, "b-ps-0"); string(ps.UID) != before["b-ps-0"] {
		t.Errorf("b's PS was recreated")
	}
	w.check(t, normalWaveMax, false)
}
