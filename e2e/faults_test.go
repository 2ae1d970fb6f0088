package e2e

// faults_test.go - control-plane faults on the real control
// plane: kube-apiserver stopped for 20 s, etcd compacted so that watches
// get 410 Gone, a watch cut in the middle of its stream by a SIGKILLed
// kube-apiserver while waves are admitted, and kube-scheduler SIGKILLed
// while drake holds a wave's binds at its barrier. Each test watches its
// jobs for partial gangs throughout (gangwatch_test.go) and checks what a
// user relies on: /readyz says not ready, and why, while drake's caches are
// not synced; jobs submitted before and after run whole; running pods keep
// their uids; no replica is lost or doubled.
//
// The components are stopped and started by their recorded PIDs with
// hack/cluster-proc.sh (same binary, flags and port). The faults concern
// the caches and the barrier, not which pods reach drake, so the tests run
// in one mode only: gang mode, the one drake is deployed in by default.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// faultCluster is withReconciler for the fault tests: gang mode only, and a
// cluster with no earlier test's pods coming or going.
func faultCluster(t *testing.T) *env {
	t.Helper()
	e := withReconciler(t)
	if e.mode != "gang" {
		t.Skip("mode-independent fault test: runs in gang mode only (DRAKE_EXTENDER_MODE=gang)")
	}
	waitQuiet(t, e)
	return e
}

// procCtl runs hack/cluster-proc.sh stop|kill|start NAME.
func (e *env) procCtl(t *testing.T, action, name string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(e.root, "hack", "cluster-proc.sh"), action, name)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	t.Logf("cluster-proc.sh %s %s: %s", action, name, strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("cluster-proc.sh %s %s: %v", action, name, err)
	}
}

// readyz is drake's /readyz: its status code (0: no answer) and body.
func (e *env) readyz(t *testing.T) (int, string) {
	t.Helper()
	resp, err := e.drakeHTTP(t).Get(strings.TrimSuffix(e.metricsURL, "/metrics") + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// drakeLogSize is the length of drake's log now: drakeLogSince reads what
// was written after it.
func (e *env) drakeLogSize(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(e.dir, "logs", "drake.log"))
	if err != nil {
		t.Fatalf("drake log: %v", err)
	}
	return fi.Size()
}

func (e *env) drakeLogSince(t *testing.T, off int64) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, "logs", "drake.log"))
	if err != nil {
		t.Fatalf("drake log: %v", err)
	}
	if off > int64(len(b)) {
		off = 0 // drake's log was started again
	}
	return string(b[off:])
}

// logLines are the lines of log with msg=<msg> and every key=value given.
func logLines(log, msg string, kv ...string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, " msg="+msg+" ") {
			continue
		}
		ok := true
		for _, s := range kv {
			ok = ok && strings.Contains(line, " "+s)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// podUIDs maps each of the job's pods to its uid and node.
func podUIDs(t *testing.T, e *env, ns, job string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range jobPods(t, e, ns, job) {
		out[p.Name] = string(p.UID) + "@" + p.Spec.NodeName
	}
	return out
}

// checkReplicas: the job has exactly the pods its spec names
// (<job>-<role>-<index>), each once, bound and Running: none lost, none
// doubled.
func checkReplicas(t *testing.T, e *env, ns, job string, roles map[string]int) {
	t.Helper()
	want := map[string]bool{}
	for role, n := range roles {
		for i := 0; i < n; i++ {
			want[fmt.Sprintf("%s-%s-%d", job, role, i)] = true
		}
	}
	var pods []corev1.Pod
	// kwok marks a bound pod Running a moment after its binding
	poll(t, 120*time.Second, "every pod of "+job+" Running", func() (bool, error) {
		pods = jobPods(t, e, ns, job)
		for _, p := range pods {
			if p.Status.Phase != corev1.PodRunning {
				return false, nil
			}
		}
		return len(pods) >= len(want), nil
	})
	seen := map[string]int{}
	for _, p := range pods {
		seen[p.Name]++
		switch {
		case !want[p.Name]:
			t.Errorf("job %s: pod %s is no replica of its spec", job, p.Name)
		case p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil:
			t.Errorf("job %s: replica %s is %s on %q (deleting: %v); want Running", job, p.Name,
				p.Status.Phase, p.Spec.NodeName, p.DeletionTimestamp != nil)
		}
	}
	for name := range want {
		if seen[name] != 1 {
			t.Errorf("job %s: replica %s exists %d times; want once", job, name, seen[name])
		}
	}
}

// noRollbacks: drake neither rolled back nor released a wave of the jobs.
func noRollbacks(t *testing.T, e *env, ns string, jobs ...string) {
	t.Helper()
	for _, job := range jobs {
		for _, ev := range e.jobEvents(t, ns, job) {
			if ev.Reason == "GangRolledBack" || ev.Reason == "GangReleased" {
				t.Errorf("job %s: %s: %s", job, ev.Reason, ev.Message)
			}
		}
	}
}

// smallJob is a PS and workers of 1 cpu each, running until deleted.
func smallJob(workers int) map[string]any {
	return map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "1", 0, nil),
			"Worker": cpuReplica(workers, "1", 0, nil),
		},
	}
}

// waitDrakeReady polls /readyz until it answers 200.
func (e *env) waitDrakeReady(t *testing.T, d time.Duration) {
	t.Helper()
	poll(t, d, "drake /readyz 200", func() (bool, error) {
		code, _ := e.readyz(t)
		return code == 200, nil
	})
}

// TestFaultAPIServerStoppedTwentySecondsThenRestarted: while kube-apiserver
// is down and until drake has relisted, /readyz is 503 naming the cache
// and why; afterwards a job submitted before and one submitted after run
// whole, and the pods that ran through the outage keep their uids.
func TestFaultAPIServerStoppedTwentySecondsThenRestarted(t *testing.T) {
	e := faultCluster(t)
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	w.expect("before", roleNeed{"ps": 1, "worker": 3})
	w.expect("after", roleNeed{"ps": 1, "worker": 3})
	e.eventsOnFailure(t, ns, "before", "after")
	createTFJob(t, ns, "before", smallJob(3))
	poll(t, 120*time.Second, "before whole", func() (bool, error) { return w.whole("before"), nil })
	waitState(t, ns, "before", "Running", 120*time.Second)
	uids := podUIDs(t, e, ns, "before")
	e.waitDrakeReady(t, 30*time.Second)
	logFrom := e.drakeLogSize(t)

	down := time.Now()
	e.procCtl(t, "stop", "kube-apiserver")
	// not ready, with the reason, as soon as drake's watches break...
	var why string
	poll(t, 60*time.Second, "drake /readyz 503 with the API server down", func() (bool, error) {
		code, body := e.readyz(t)
		why = body
		return code == 503, nil
	})
	t.Logf("drake /readyz with the API server down (%.1fs after SIGTERM): %q", time.Since(down).Seconds(), why)
	if !strings.Contains(why, "cache not synced") || !strings.Contains(why, "relisting") {
		t.Errorf("/readyz says %q; want the cache that is not synced and why", why)
	}
	// ...and for as long as the API server is down (the outage lasts 20 s:
	// this is the fault's length, not a wait for anything)
	for time.Since(down) < 20*time.Second {
		if code, body := e.readyz(t); code != 503 {
			t.Errorf("drake /readyz %d %q with the API server down; want 503", code, body)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	e.procCtl(t, "start", "kube-apiserver")
	back := time.Now()
	// not ready until every cache relisted: readiness comes back only
	// after an informer_resynced line for each cache that went stale
	var readyAt time.Time
	poll(t, 180*time.Second, "drake ready again after the API server's restart", func() (bool, error) {
		code, body := e.readyz(t)
		if code == 200 {
			readyAt = time.Now()
			return true, nil
		}
		why = body
		return false, nil
	})
	log := e.drakeLogSince(t, logFrom)
	t.Logf("API server down %.1fs; drake ready %.1fs after it was back (last reason: %q)",
		back.Sub(down).Seconds(), readyAt.Sub(back).Seconds(), why)
	for _, inf := range []string{"tfjobs", "pods", "services", "nodes"} {
		stale := logLines(log, "informer_stale", "informer="+inf)
		resynced := logLines(log, "informer_resynced", "informer="+inf)
		if len(stale) == 0 || len(resynced) == 0 {
			t.Errorf("informer %s: %d informer_stale and %d informer_resynced lines since the stop; want both",
				inf, len(stale), len(resynced))
		}
	}

	createTFJob(t, ns, "after", smallJob(3))
	poll(t, 180*time.Second, "before and after whole", func() (bool, error) { return w.allBound(), nil })
	waitState(t, ns, "after", "Running", 120*time.Second)
	w.check(t, normalWaveMax, true)
	checkReplicas(t, e, ns, "before", map[string]int{"ps": 1, "worker": 3})
	checkReplicas(t, e, ns, "after", map[string]int{"ps": 1, "worker": 3})
	if got := podUIDs(t, e, ns, "before"); fmt.Sprint(got) != fmt.Sprint(uids) {
		t.Errorf("the pods that ran through the outage changed: before %v, after %v", uids, got)
	}
	if n := w.recreated("before"); n != 0 {
		t.Errorf("%d pods of before were recreated", n)
	}
	noRollbacks(t, e, ns, "before", "after")
}

// etcdPost posts a JSON body to etcd's v3 HTTP gateway.
func etcdPost(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Post(os.Getenv("DRAKE_ETCD_URL")+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("etcd %s: %v", path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("etcd %s: %s %s", path, resp.Status, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("etcd %s: %v: %s", path, err, out)
	}
	return m
}

// etcdRevision is etcd's current revision (the header of any range read).
func etcdRevision(t *testing.T) int64 {
	t.Helper()
	m := etcdPost(t, "/v3/kv/range", map[string]any{
		"key": base64.StdEncoding.EncodeToString([]byte("/registry/namespaces/default")),
	})
	h, _ := m["header"].(map[string]any)
	rev, err := strconv.ParseInt(fmt.Sprint(h["revision"]), 10, 64)
	if err != nil {
		t.Fatalf("etcd revision in %v: %v", m, err)
	}
	return rev
}

var staleGoneRE = regexp.MustCompile(`msg=informer_stale informer=(\S+) why="watch expired \(HTTP 410\)`)

// TestFaultEtcdCompactedWatchesGetGoneAndDrakeRelists: etcd is compacted
// past every revision the API server's watch caches have read, then
// restarted, so the API server's own etcd watches resume below the
// compaction, its watch caches relist, and drake's watches, resumed from
// their last resourceVersion, are answered 410 Gone. drake relists each
// such cache (informer_stale ... 410, informer_resynced), decides nothing
// meanwhile, and jobs still run whole; the running one is untouched.
func TestFaultEtcdCompactedWatchesGetGoneAndDrakeRelists(t *testing.T) {
	e := faultCluster(t)
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	w.expect("pre", roleNeed{"ps": 1, "worker": 3})
	w.expect("post", roleNeed{"ps": 1, "worker": 3})
	e.eventsOnFailure(t, ns, "pre", "post")
	createTFJob(t, ns, "pre", smallJob(3))
	poll(t, 120*time.Second, "pre whole", func() (bool, error) { return w.whole("pre"), nil })
	waitState(t, ns, "pre", "Running", 120*time.Second)
	uids := podUIDs(t, e, ns, "pre")
	e.waitDrakeReady(t, 30*time.Second)
	logFrom := e.drakeLogSize(t)

	// Two writes the watched collections do not see put the revision at
	// least two past the last event of each; compacting there leaves every
	// watch cache's resume point below the compaction.
	for i := 0; i < 2; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bump-%d", i), Namespace: ns}}
		if _, err := e.client.CoreV1().ConfigMaps(ns).Create(ctxFor(t, 30*time.Second), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create configmap: %v", err)
		}
	}
	rev := etcdRevision(t)
	etcdPost(t, "/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true})
	t.Logf("etcd compacted at revision %d", rev)
	e.procCtl(t, "stop", "etcd")
	e.procCtl(t, "start", "etcd")

	var gone []string
	poll(t, 180*time.Second, "a drake watch answered 410 Gone and that cache relisted", func() (bool, error) {
		log := e.drakeLogSince(t, logFrom)
		gone = gone[:0]
		for _, m := range staleGoneRE.FindAllStringSubmatch(log, -1) {
			gone = append(gone, m[1])
		}
		if len(gone) == 0 {
			return false, nil
		}
		for _, inf := range gone {
			if len(logLines(log, "informer_resynced", "informer="+inf)) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	sort.Strings(gone)
	t.Logf("drake caches answered 410 Gone and relisted: %v", gone)
	e.waitDrakeReady(t, 120*time.Second)

	createTFJob(t, ns, "post", smallJob(3))
	poll(t, 180*time.Second, "pre and post whole", func() (bool, error) { return w.allBound(), nil })
	waitState(t, ns, "post", "Running", 120*time.Second)
	w.check(t, normalWaveMax, true)
	checkReplicas(t, e, ns, "pre", map[string]int{"ps": 1, "worker": 3})
	checkReplicas(t, e, ns, "post", map[string]int{"ps": 1, "worker": 3})
	if got := podUIDs(t, e, ns, "pre"); fmt.Sprint(got) != fmt.Sprint(uids) {
		t.Errorf("the running job's pods changed: before %v, after %v", uids, got)
	}
	noRollbacks(t, e, ns, "pre", "post")
}

// TestFaultAPIServerSIGKILLedMidStreamWhileWavesAreAdmitted: kube-apiserver
// is SIGKILLed the moment the first job's first Binding is seen, while the
// other jobs are being admitted, so every watch of drake's is cut in the
// middle of its stream; it is started again at once. drake's caches go
// stale and relist; every job ends whole, none partial past the bound
// after the restart, each replica exactly once.
func TestFaultAPIServerSIGKILLedMidStreamWhileWavesAreAdmitted(t *testing.T) {
	e := faultCluster(t)
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	const jobs, workers = 6, 3
	var names []string
	for i := 0; i < jobs; i++ {
		name := fmt.Sprintf("cut-%d", i)
		names = append(names, name)
		w.expect(name, roleNeed{"ps": 1, "worker": workers})
	}
	e.eventsOnFailure(t, ns, names...)
	logFrom := e.drakeLogSize(t)
	for _, name := range names {
		createTFJob(t, ns, name, smallJob(workers))
	}
	select {
	case <-w.firstBound(names[0]):
	case <-time.After(180 * time.Second):
		t.Fatal("no pod of cut-0 was bound within 180 s")
	}
	e.procCtl(t, "kill", "kube-apiserver")
	var bound []string
	for _, name := range names {
		bound = append(bound, fmt.Sprintf("%s:%d", name, w.boundCount(name)))
	}
	t.Logf("kube-apiserver SIGKILLed at cut-0's first binding; pods bound per job then: %v", bound)
	e.procCtl(t, "start", "kube-apiserver")
	restarted := time.Now()
	limit := gangBound()
	poll(t, limit+180*time.Second, "every job whole after the restart", func() (bool, error) {
		for _, name := range names {
			if d, why := w.longest(name, restarted); d > limit {
				return false, fmt.Errorf("%s partial for %v after the restart (short: %s), more than %v",
					name, d.Round(time.Millisecond), why, limit)
			}
		}
		return w.allBound(), nil
	})
	e.waitDrakeReady(t, 120*time.Second)
	w.checkAfter(t, limit, true, restarted)
	for _, name := range names {
		waitState(t, ns, name, "Running", 120*time.Second)
		checkReplicas(t, e, ns, name, map[string]int{"ps": 1, "worker": workers})
		t.Logf("job %s: pods recreated %d", name, w.recreated(name))
	}
	log := e.drakeLogSince(t, logFrom)
	if n := len(logLines(log, "informer_stale", "informer=pods")); n == 0 {
		t.Errorf("drake's pod cache never went stale although its watch was cut")
	}
	if n := len(logLines(log, "informer_resynced", "informer=pods")); n == 0 {
		t.Errorf("drake's pod cache never relisted after its watch was cut")
	}
}

// TestFaultKubeSchedulerSIGKILLedWhileBindsAreHeld: a wave of a PS and 61
// workers; the moment drake holds some of its binds at the barrier and none
// is bound yet, kube-scheduler is SIGKILLed (its held requests die with
// it) and started again. The new kube-scheduler schedules the pods again;
// the job ends whole, never partial past the bound, each replica bound
// exactly once.
func TestFaultKubeSchedulerSIGKILLedWhileBindsAreHeld(t *testing.T) {
	e := faultCluster(t)
	ns := e.namespace(t)
	const workers = 61 // 62 pods: one wave under drake's pacing floor of 64
	w := watchGangs(t, e, ns)
	w.expect("held", roleNeed{"ps": 1, "worker": workers})
	e.eventsOnFailure(t, ns, "held")
	createTFJob(t, ns, "held", map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     tensorflow(1, "Never", nil),
			"Worker": tensorflow(workers, "Never", nil),
		},
	})
	// The window lasts from the first bind drake holds to the last of the
	// wave's 62, which an idle kube-scheduler can send within one of poll's
	// 100 ms sleeps (seen on a clean clone's run): look every 5 ms.
	var waiting float64
	pollEvery(t, 180*time.Second, 5*time.Millisecond, "binds of held waiting at drake's barrier", func() (bool, error) {
		waiting = e.metrics(t)["drake_gang_binds_waiting"]
		if n := w.boundCount("held"); n > 0 && waiting == 0 {
			return false, fmt.Errorf("%d pods of held bound before a look saw its binds held: the window was missed", n)
		}
		return waiting > 0, nil
	})
	// SIGKILL from here at once (a shell would cost the window), then let
	// cluster-proc.sh reap the record
	pidText, err := os.ReadFile(filepath.Join(e.dir, "pids", "kube-scheduler.pid"))
	if err != nil {
		t.Fatalf("kube-scheduler pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL kube-scheduler: %v", err)
	}
	e.procCtl(t, "kill", "kube-scheduler")
	// with kube-scheduler gone the wave cannot complete: binds still held
	// now were held while it died
	heldAfter := e.metrics(t)["drake_gang_binds_waiting"]
	t.Logf("kube-scheduler SIGKILLed with %v binds held at the barrier (%v after it died), %d pods bound",
		waiting, heldAfter, w.boundCount("held"))
	if heldAfter == 0 && w.boundCount("held") > 0 {
		t.Errorf("the wave was bound before kube-scheduler died: the test missed its window")
	}
	e.procCtl(t, "start", "kube-scheduler")
	restarted := time.Now()
	limit := gangBound()
	poll(t, limit+240*time.Second, "held whole after kube-scheduler's restart", func() (bool, error) {
		if d, why := w.longest("held", restarted); d > limit {
			return false, fmt.Errorf("held partial for %v after the restart (short: %s), more than %v",
				d.Round(time.Millisecond), why, limit)
		}
		return w.whole("held"), nil
	})
	t.Logf("held whole %.1fs after kube-scheduler's restart", time.Since(restarted).Seconds())
	w.check(t, limit, true)
	waitState(t, ns, "held", "Running", 120*time.Second)
	checkReplicas(t, e, ns, "held", map[string]int{"ps": 1, "worker": workers})
	// each pod bound once: no replica posted twice, none recreated
	if n := w.recreated("held"); n != 0 {
		t.Errorf("%d pods of held were recreated", n)
	}
	perPod := map[string]int{}
	poll(t, 30*time.Second, "audit records of held's Bindings", func() (bool, error) {
		perPod = map[string]int{}
		for _, b := range e.jobBindings(t, ns, "held") {
			perPod[b.ObjectRef.Name]++
		}
		return len(perPod) == workers+1, nil
	})
	for pod, n := range perPod {
		if n != 1 {
			t.Errorf("pod %s has %d successful Bindings; want 1", pod, n)
		}
	}
	e.checkPSFirst(t, ns, "held", 1)
}

// A pinned gang member (drake ungates it with a required node affinity on
// its planned node) whose node is cordoned between admission and
// kube-scheduler's turn fits nowhere it may go, so drake's filter is never
// asked and cannot re-plan it. The backstop's release must catch it: the
// wave, with nothing bound, is recreated behind the gate after four barrier
// timeouts and planned again on a node that is schedulable, and the job
// runs whole there. Nothing of it is ever bound on the cordoned node.
func TestFaultPinnedWaveWhosePlannedNodeIsCordonedBeforeSchedulingIsReleasedAndReplanned(t *testing.T) {
	e := faultCluster(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	w.expect("c", roleNeed{"ps": 1, "worker": 1})
	e.eventsOnFailure(t, ns, "c")
	// kube-scheduler down: admission plans and ungates, nothing is scheduled
	e.procCtl(t, "stop", "kube-scheduler")
	schedulerUp := false
	t.Cleanup(func() {
		if !schedulerUp {
			e.procCtl(t, "start", "kube-scheduler")
		}
	})
	createTFJob(t, ns, "c", gpuJob(1, 1, ""))
	var planned string
	var first []corev1.Pod
	pollUntil(t, 60*time.Second, "c's two pods ungated and pinned", func() (string, error) {
		first = jobPods(t, e, ns, "c")
		if len(first) != 2 {
			return fmt.Sprintf("%d pods", len(first)), nil
		}
		for _, p := range first {
			node := p.Annotations["drake.dev/planned-node"]
			if len(p.Spec.SchedulingGates) > 0 || node == "" {
				return p.Name + " not admitted yet", nil
			}
			if pins := pinnedNodes(p); len(pins) != 1 || pins[0] != node {
				return "", fmt.Errorf("%s is pinned to %v; want its planned node %s alone (a one-node wave)", p.Name, pins, node)
			}
			if planned != "" && node != planned {
				return "", fmt.Errorf("c is planned on %s and %s; a 1-GPU job fits one node", planned, node)
			}
			planned = node
		}
		return "", nil
	})
	e.cordon(t, planned, true)
	t.Cleanup(func() { e.cordon(t, planned, false) })
	t.Logf("c planned and pinned on %s; cordoned it, starting kube-scheduler", planned)
	e.procCtl(t, "start", "kube-scheduler")
	schedulerUp = true
	started := time.Now()
	release := 4*gangBindTimeout() + 30*time.Second
	poll(t, release+60*time.Second, "c whole elsewhere", func() (bool, error) { return w.whole("c"), nil })
	t.Logf("c whole %.1fs after kube-scheduler started (release after %v)", time.Since(started).Seconds(), 4*gangBindTimeout())
	ev := e.jobEvent(t, ns, "c", "GangReleased", 10*time.Second)
	t.Logf("GangReleased: %s", ev.Message)
	for _, p := range jobPods(t, e, ns, "c") {
		if p.Spec.NodeName == planned {
			t.Errorf("%s is bound on %s, which was cordoned", p.Name, planned)
		}
		for _, f := range first {
			if f.Name == p.Name && f.UID == p.UID {
				t.Errorf("%s kept uid %s: the released wave was not recreated", p.Name, p.UID)
			}
		}
	}
	w.check(t, gangBound(), true)
}

// pinnedNodes are the nodes a pod's required node affinity names, a term
// each with one metadata.name value, in order; nil when it names anything
// else.
func pinnedNodes(p corev1.Pod) []string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []string
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchExpressions) != 0 || len(term.MatchFields) != 1 {
			return nil
		}
		f := term.MatchFields[0]
		if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || len(f.Values) != 1 {
			return nil
		}
		out = append(out, f.Values[0])
	}
	return out
}

// cordon sets or clears a node's spec.unschedulable.
func (e *env) cordon(t *testing.T, node string, on bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	if _, err := e.client.CoreV1().Nodes().Patch(ctxFor(t, 10*time.Second), node, types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("cordon %s=%t: %v", node, on, err)
	}
}
