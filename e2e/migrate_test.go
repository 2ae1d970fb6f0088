package e2e

// Migration on the real control plane: a worker whose move
// brings its job onto fewer nodes, off a hot node it shares, is recreated
// there under its own name, index, service and TF_CONFIG, through the
// normal gang path; jobs packed whole are never spread; requests and
// progress reports are authenticated and refused with reasons.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// withDrakeEnv restarts drake with each key=value of kv in its
// environment (DRAKE_<FLAG> fallbacks) for the rest of the test, and
// restarts it as it was when the test ends.
func withDrakeEnv(t *testing.T, e *env, kv ...string) {
	t.Helper()
	type saved struct {
		key, value string
		had        bool
	}
	var prev []saved
	for i := 0; i+1 < len(kv); i += 2 {
		v, had := os.LookupEnv(kv[i])
		prev = append(prev, saved{kv[i], v, had})
		os.Setenv(kv[i], kv[i+1])
	}
	e.drakeCtl(t, "restart")
	t.Cleanup(func() {
		for _, p := range prev {
			if p.had {
				os.Setenv(p.key, p.value)
			} else {
				os.Unsetenv(p.key)
			}
		}
		e.drakeCtl(t, "restart")
	})
}

// podEnv is the value of name in the tensorflow container's environment.
func podEnv(p *corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		for _, ev := range c.Env {
			if ev.Name == name {
				return ev.Value
			}
		}
	}
	return ""
}

// migrationEvents lists ns's Events of reason (MigrationStarted,
// Migrated), oldest first.
func (e *env) migrationEvents(t *testing.T, ns, reason string) []corev1.Event {
	t.Helper()
	l, err := e.client.CoreV1().Events(ns).List(ctxFor(t, 10*time.Second),
		metav1.ListOptions{FieldSelector: "reason=" + reason})
	if err != nil {
		t.Fatalf("list %s events: %v", reason, err)
	}
	sort.SliceStable(l.Items, func(i, k int) bool {
		return l.Items[i].CreationTimestamp.Before(&l.Items[k].CreationTimestamp)
	})
	return l.Items
}

// moveOf parses a MigrationStarted message, "moving worker-1 from a to b
// (why; by who)".
func moveOf(t *testing.T, ev corev1.Event) (replica, from, to string) {
	t.Helper()
	if _, err := fmt.Sscanf(ev.Message, "moving %s from %s to %s", &replica, &from, &to); err != nil {
		t.Fatalf("MigrationStarted on %s says %q: %v", ev.InvolvedObject.Name, ev.Message, err)
	}
	return replica, from, to
}

// migrationCount is replica's count of moves in the TFJob's
// drake.dev/migrations record, and the time (drake's clock, seconds) of
// its last move.
func migrationCount(t *testing.T, ns, job, replica string) (n int, last float64) {
	t.Helper()
	_, j := state(t, ns, job)
	raw := j.GetAnnotations()["drake.dev/migrations"]
	var rec struct {
		Counts map[string]struct {
			N    int     `json:"n"`
			Last float64 `json:"last"`
		} `json:"counts"`
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		t.Fatalf("drake.dev/migrations on %s is %q: %v", job, raw, err)
	}
	c := rec.Counts[replica]
	return c.N, c.Last
}

// finishPods tells kwok to end every pod of job (run-for 1s: the pods
// were created without one, so they ran until now).
func (e *env) finishPods(t *testing.T, ns, job string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"kwok.drake.dev/run-for":"1s"}}}`)
	for _, p := range jobPods(t, e, ns, job) {
		if p.DeletionTimestamp != nil {
			continue
		}
		if _, err := e.client.CoreV1().Pods(ns).Patch(ctxFor(t, 10*time.Second), p.Name,
			types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("annotate %s: %v", p.Name, err)
		}
	}
}

// The migration rule weighs locality (migrate/migrate.h): a move is made
// only when it brings its job onto fewer nodes and the job's modelled gain
// repays the restart. So three jobs packed whole on one hot node stay
// where they are; a worker an explicit request sent away from its PS is
// brought back by the policy once that node is contended and hot and the
// job is old enough for the move to pay.
func TestMigrateLeavesPackedJobsAloneAndBringsALonelyWorkerBackToItsPS(t *testing.T) {
	// The speed model's defaults (--locality-penalty 0.15, --rescale-pause
	// 10s): bringing a job from 2 nodes to 1 saves E * (1 - 1/1.15) of its
	// expected remaining time E (its age, without progress reports), so
	// the move pays once the job is older than 10 / (0.15 / 1.15) s.
	const payAge = 10 / (0.15 / 1.15) // 76.7 s
	e := withReconciler(t)
	waitQuiet(t, e)
	ns := e.namespace(t)
	jobs := []string{"m1", "m2", "m3"}
	// Three small CPU jobs: drake packs each whole onto the tightest node,
	// so all three share one node, far above the others' load. They have
	// no run-for: they run until the test has seen the moves.
	w := watchGangs(t, e, ns)
	for _, job := range jobs {
		w.expect(job, roleNeed{"ps": 1, "worker": 1})
		// two workers, min one: a worker may move without the job going
		// below its minimum
		createTFJob(t, ns, job, map[string]any{
			"min-instances": int64(1), "max-instances": int64(2),
			"runPolicy": map[string]any{"cleanPodPolicy": "None"},
			"tfReplicaSpecs": map[string]any{
				"PS":     cpuReplica(1, "1", 0, nil),
				"Worker": cpuReplica(2, "3", 0, nil),
			},
		})
		poll(t, 60*time.Second, job+" whole", func() (bool, error) { return w.whole(job), nil })
	}
	nodes := map[string]bool{}
	for _, job := range jobs {
		for _, p := range jobPods(t, e, ns, job) {
			nodes[p.Spec.NodeName] = true
		}
	}
	if len(nodes) != 1 {
		t.Skipf("the three jobs landed on %d nodes (%v), not one: nothing is overloaded", len(nodes), nodes)
	}
	var packed string // X: the node of the three jobs
	for n := range nodes {
		packed = n
	}
	orig := e.getPod(t, ns, "m1-worker-1")

	// Migration on, with a short cool-down (5 s instead of 30 s) so that
	// the job's age, not the cool-down, decides when the policy's move
	// below may be made.
	withDrakeEnv(t, e, "DRAKE_MIGRATE", "true", "DRAKE_MIGRATE_COOLDOWN", "5s")

	// (a) The packed node is overloaded and contended (three jobs), but
	// every move off it would spread a job: none is made. The policy runs
	// on each decision pass; once drake has made one since its restart
	// (GET /v1/jobs lists the three running), a resync (30 s) and a margin
	// more are watched.
	noMove := func() {
		if evs := e.migrationEvents(t, ns, "MigrationStarted"); len(evs) > 0 {
			t.Fatalf("jobs packed whole on %s were spread: %s", packed, evs[0].Message)
		}
	}
	poll(t, 60*time.Second, "the three jobs running in drake's decision state", func() (bool, error) {
		noMove()
		for _, job := range jobs {
			if e.runningEntry(t, ns+"/"+job) == "" {
				return false, nil
			}
		}
		return true, nil
	})
	for end := time.Now().Add(35 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		noMove()
	}

	// (b) An explicit request sends m1's worker-1 to another node Y (the
	// first 8-GPU node by name other than X): now m1 spans two nodes.
	var spare string // Y
	for _, n := range e.nodeList(t) {
		if q := n.Status.Allocatable["nvidia.com/gpu"]; n.Name != packed && q.Value() >= 8 {
			spare = n.Name
			break
		}
	}
	if spare == "" {
		t.Fatalf("no 8-GPU node besides %s", packed)
	}
	kubectl(t, "create", "serviceaccount", "mover", "-n", ns)
	tok := kubectl(t, "create", "token", "mover", "-n", ns, "--duration", "10m")
	e.grantMigrations(t, ns, "mover")
	c := e.drakePlain(t)
	if code, body := e.postGranted(t, c, "/v1/migrations", tok,
		fmt.Sprintf(`{"namespace":%q,"pod":"m1-worker-1","onto":%q}`, ns, spare)); code != 202 {
		t.Fatalf("explicit move of m1-worker-1 onto %s: %d %s; want 202", spare, code, body)
	}
	ev := e.jobEvent(t, ns, "m1", "Migrated", 120*time.Second)
	if want := "worker-1 moved from " + packed + " to " + spare; ev.Message != want {
		t.Fatalf("Migrated on m1 says %q; want %q", ev.Message, want)
	}
	mid := e.getPod(t, ns, "m1-worker-1")
	if mid.UID == orig.UID || mid.Spec.NodeName != spare {
		t.Fatalf("after the explicit move m1-worker-1 is %s on %q (was %s on %s); want a new pod on %s",
			mid.UID, mid.Spec.NodeName, orig.UID, orig.Spec.NodeName, spare)
	}

	// The policy's move below is held half-done on purpose: a finalizer
	// keeps m1-worker-1 terminating once drake deletes it, so the kill
	// lands after the move is recorded and before it can end, however
	// fast the rest of the move is (without it the whole move takes
	// about 0.1 s on kwok, and the kill may land after its end).
	const hold = "e2e.drake.dev/hold"
	setFinalizers := func(fin string) {
		patch := fmt.Sprintf(`{"metadata":{"finalizers":%s}}`, fin)
		if _, err := e.client.CoreV1().Pods(ns).Patch(ctxFor(t, 10*time.Second), "m1-worker-1",
			types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("set finalizers %s on m1-worker-1: %v", fin, err)
		}
	}
	setFinalizers(`["` + hold + `"]`)
	t.Cleanup(func() {
		if p, err := e.client.CoreV1().Pods(ns).Get(context.Background(), "m1-worker-1", metav1.GetOptions{}); err == nil && p.UID == mid.UID {
			setFinalizers("null")
		}
	})

	// (c) Pods drake does not move fill Y but for 1 cpu: Y is contended
	// (m1's worker beside them) and the most loaded node, above mean + 1
	// standard deviation.
	free := e.freeCPU(t)[spare]
	e.fillNode(t, ns, spare, "", free-1000)

	// (d) The policy moves m1's worker-1 back onto X, its PS's node, the
	// one move that lowers a job's span, once m1 is old enough for the
	// move to pay. The moment it is recorded drake is SIGKILLed and started
	// again: the move must complete from its record, the replica neither
	// lost nor doubled. No other move is made, ever (the moves of jobs
	// packed on X would spread them).
	var policy corev1.Event
	poll(t, 180*time.Second, "the policy's MigrationStarted for m1 worker-1 from "+spare, func() (bool, error) {
		evs := e.migrationEvents(t, ns, "MigrationStarted")
		for i, ev := range evs {
			replica, from, to := moveOf(t, ev)
			switch {
			case i == 0 && ev.InvolvedObject.Name == "m1" && replica == "worker-1" && from == packed && to == spare:
				// the explicit request's
			case i == 1 && ev.InvolvedObject.Name == "m1" && replica == "worker-1" && from == spare && to == packed:
				policy = ev
			default:
				return false, fmt.Errorf("unexpected move %d of %s: %s", i+1, ev.InvolvedObject.Name, ev.Message)
			}
		}
		return len(evs) >= 2, nil
	})
	// drake has deleted the held pod (the move's first step once its
	// record is in drake's cache) before it is killed.
	poll(t, 60*time.Second, "m1-worker-1 terminating", func() (bool, error) {
		return e.getPod(t, ns, "m1-worker-1").DeletionTimestamp != nil, nil
	})
	killDrake(t, e)
	t.Logf("drake SIGKILLed while moving m1 worker-1 from %s to %s: %s", spare, packed, policy.Message)
	for _, ev := range e.migrationEvents(t, ns, "Migrated") {
		if ev.InvolvedObject.Name == "m1" && strings.HasPrefix(ev.Message, "worker-1 moved from "+spare) {
			t.Fatalf("the move ended while its pod was still terminating: %s", ev.Message)
		}
	}
	e.drakeCtl(t, "start")
	// The restarted drake reads the move from its record; the pod goes
	// once its finalizer does, and the move ends from there.
	setFinalizers("null")
	for _, want := range []string{"by policy", "its PS's node", "(2 -> 1 nodes"} {
		if !strings.Contains(policy.Message, want) {
			t.Errorf("the policy's move says %q; want it to say %q", policy.Message, want)
		}
	}
	// drake completes that move: its Migrated event names the replica.
	prefix := "worker-1 moved from " + spare + " to "
	var landed string
	poll(t, 120*time.Second, "a Migrated event for m1 worker-1 from "+spare, func() (bool, error) {
		for _, ev := range e.migrationEvents(t, ns, "Migrated") {
			if ev.InvolvedObject.Name == "m1" && strings.HasPrefix(ev.Message, prefix) {
				t.Logf("m1: %s", ev.Message)
				landed = strings.Fields(strings.TrimPrefix(ev.Message, prefix))[0]
				return true, nil
			}
		}
		return false, nil
	})
	after := e.getPod(t, ns, "m1-worker-1")
	ps := e.getPod(t, ns, "m1-ps-0")
	switch {
	case after.UID == mid.UID || after.UID == orig.UID:
		t.Errorf("m1-worker-1 kept uid %s: it was not recreated", after.UID)
	case landed != packed || after.Spec.NodeName != landed || ps.Spec.NodeName != packed:
		t.Errorf("m1-worker-1 is on %s, the event says it landed on %s, its PS is on %s: want all on %s",
			after.Spec.NodeName, landed, ps.Spec.NodeName, packed)
	case podEnv(after, "TF_CONFIG") != podEnv(orig, "TF_CONFIG"):
		t.Errorf("TF_CONFIG changed:\n%s\n%s", podEnv(orig, "TF_CONFIG"), podEnv(after, "TF_CONFIG"))
	case after.Labels["training.kubeflow.org/replica-index"] != orig.Labels["training.kubeflow.org/replica-index"]:
		t.Errorf("replica index changed: %q, was %q", after.Labels["training.kubeflow.org/replica-index"],
			orig.Labels["training.kubeflow.org/replica-index"])
	}
	// Both moves are counted on the TFJob (the cap reads it), and the
	// policy's was decided only once the move paid: m1's age (since its
	// first wave, the gang id's seconds) above payAge.
	n, last := migrationCount(t, ns, "m1", "worker-1")
	if n != 2 {
		t.Errorf("drake.dev/migrations counts %d moves of m1 worker-1; want 2", n)
	}
	gang := ps.Annotations["drake.dev/gang"]
	waved, err := strconv.ParseFloat(gang[strings.LastIndex(gang, ".")+1:], 64)
	if err != nil {
		t.Fatalf("m1-ps-0's drake.dev/gang %q: %v", gang, err)
	}
	// last is whole seconds, so a decision at payAge + a fraction may read 76
	if age := last - waved; age < math.Floor(payAge) {
		t.Errorf("the policy moved m1 worker-1 when m1 was %.0f s old; the move pays only after %.1f s", age, payAge)
	} else {
		t.Logf("the policy moved m1 worker-1 when m1 was %.0f s old (pays after %.1f s)", age, payAge)
	}

	// No new moves from here on; a move already recorded is still carried
	// to its end. Then every job has exactly its two workers, all bound:
	// no replica lost or doubled by the moves or the kill.
	os.Setenv("DRAKE_MIGRATE", "false")
	e.drakeCtl(t, "restart")
	for _, jb := range jobs {
		pollUntil(t, 60*time.Second, jb+" settled with its two workers bound", func() (string, error) {
			_, tj := state(t, ns, jb)
			if r := tj.GetAnnotations()["drake.dev/migrations"]; strings.Contains(r, `"moving":{`) {
				return "a move is in flight: " + r, nil
			}
			workers, unbound := 0, []string{}
			for _, p := range jobPods(t, e, ns, jb) {
				if strings.Contains(p.Name, "-worker-") {
					workers++
					if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
						unbound = append(unbound, p.Name)
					}
				}
			}
			if workers != 2 || len(unbound) > 0 {
				return fmt.Sprintf("%d worker pods (want 2); not bound or being deleted: %v", workers, unbound), nil
			}
			return "", nil
		})
	}
	if evs := e.migrationEvents(t, ns, "MigrationStarted"); len(evs) != 2 {
		t.Errorf("%d moves were started; want the explicit one and the policy's", len(evs))
	}
	// The jobs finish, and succeed.
	for _, jb := range jobs {
		e.finishPods(t, ns, jb)
	}
	for _, jb := range jobs {
		waitState(t, ns, jb, "Succeeded", 180*time.Second)
	}
	// A worker move never leaves a job below its minimum: m1's other
	// worker stays; the backstop's bound applies.
	w.check(t, gangBound(), false)
}

// SpeCon's better placement (migrate/migrate.h): a worker of a job that has
// stopped learning, spread over two nodes, moves onto its job's other node
// when that lets the first waiting job start. Nothing else would: the
// overload rule is off (k 100), starvation is not reached (10 minutes), and
// without the move the waiting job fits nowhere.
func TestASlowJobsWorkerMovesOntoItsOwnNodeSoAWaitingJobFits(t *testing.T) {
	e := withReconciler(t)
	waitQuiet(t, e)
	ns := e.namespace(t)
	withDrakeEnv(t, e, "DRAKE_MIGRATE", "true", "DRAKE_MIGRATE_COOLDOWN", "5s",
		"DRAKE_OVERLOAD_STDDEVS", "100", "DRAKE_STARVE_AFTER", "10m")
	// X and Y: the two nodes with the most CPU free (ties by name); every
	// other node is filled. X keeps 7 CPUs (s whole: PS 1 + two workers of
	// 3), Y 5 (the waiting job whole: PS 1 + a worker of 4).
	free := e.freeCPU(t)
	names := make([]string, 0, len(free))
	for n := range free {
		names = append(names, n)
	}
	sort.Slice(names, func(i, k int) bool {
		if free[names[i]] != free[names[k]] {
			return free[names[i]] > free[names[k]]
		}
		return names[i] < names[k]
	})
	x, y := names[0], names[1]
	if free[y] < 7000 {
		t.Skipf("needs two nodes with 7 CPUs free; the second most has %dm", free[y])
	}
	for _, n := range names[2:] {
		if free[n] > 0 {
			e.fillNode(t, ns, n, "", free[n])
		}
	}
	e.fillNode(t, ns, x, "", free[x]-7000)
	e.fillNode(t, ns, y, "", free[y]-5000)

	w := watchGangs(t, e, ns)
	w.expect("s", roleNeed{"ps": 1, "worker": 1})
	w.expect("w", roleNeed{"ps": 1, "worker": 1})
	createTFJob(t, ns, "s", map[string]any{
		"min-instances": int64(1), "max-instances": int64(2),
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "1", 0, nil),
			"Worker": cpuReplica(2, "3", 0, nil),
		},
	})
	poll(t, 60*time.Second, "s whole", func() (bool, error) { return w.whole("s") && w.roleCount("s", "worker") == 2, nil })
	for _, p := range jobPods(t, e, ns, "s") {
		if p.Spec.NodeName != x {
			t.Fatalf("%s is on %s; s should be packed whole on %s", p.Name, p.Spec.NodeName, x)
		}
	}
	// An explicit request spreads s: worker-1 onto Y.
	kubectl(t, "create", "serviceaccount", "mover", "-n", ns)
	tok := kubectl(t, "create", "token", "mover", "-n", ns, "--duration", "10m")
	e.grantMigrations(t, ns, "mover")
	if code, body := e.postGranted(t, e.drakePlain(t), "/v1/migrations", tok,
		fmt.Sprintf(`{"namespace":%q,"pod":"s-worker-1","onto":%q}`, ns, y)); code != 202 {
		t.Fatalf("explicit move of s-worker-1 onto %s: %d %s; want 202", y, code, body)
	}
	if ev := e.jobEvent(t, ns, "s", "Migrated", 120*time.Second); ev.Message != "worker-1 moved from "+x+" to "+y {
		t.Fatalf("Migrated on s says %q", ev.Message)
	}
	spread := e.getPod(t, ns, "s-worker-1")
	// s stops learning.
	e.reportFlatUntilSlow(t, ns, "s")
	// w (PS 1 CPU, a worker of 4) fits nowhere: X has 3 free, Y 2.
	createTFJob(t, ns, "w", map[string]any{
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "1", 0, nil),
			"Worker": cpuReplica(1, "4", 0, nil),
		},
	})
	var placement corev1.Event
	poll(t, 120*time.Second, "s's worker-1 moved back to make room for w", func() (bool, error) {
		evs := e.migrationEvents(t, ns, "MigrationStarted")
		if len(evs) > 2 {
			return false, fmt.Errorf("%d moves; want the explicit one and one more: %s", len(evs), evs[2].Message)
		}
		if len(evs) < 2 {
			if w.whole("w") {
				return false, fmt.Errorf("w started without a move")
			}
			return false, nil
		}
		placement = evs[1]
		return true, nil
	})
	t.Logf("s: %s", placement.Message)
	replica, from, to := moveOf(t, placement)
	if placement.InvolvedObject.Name != "s" || replica != "worker-1" || from != y || to != x {
		t.Fatalf("the second move is %s's %s from %s to %s; want s's worker-1 from %s to %s",
			placement.InvolvedObject.Name, replica, from, to, y, x)
	}
	for _, want := range []string{"makes slow progress and yields", "waiting job " + ns + "/w fits"} {
		if !strings.Contains(placement.Message, want) {
			t.Errorf("the move says %q; want it to say %q", placement.Message, want)
		}
	}
	poll(t, 120*time.Second, "w whole", func() (bool, error) { return w.whole("w"), nil })
	for _, p := range jobPods(t, e, ns, "w") {
		if p.Spec.NodeName != y {
			t.Errorf("%s is on %s; w fits only on %s", p.Name, p.Spec.NodeName, y)
		}
	}
	pollUntil(t, 60*time.Second, "s whole on "+x, func() (string, error) {
		// A moved replica is deleted before it is recreated: count the
		// pods, or the gap between the two reads as "all on X".
		pods := jobPods(t, e, ns, "s")
		if len(pods) != 3 {
			return fmt.Sprintf("%d of s's 3 pods exist", len(pods)), nil
		}
		for _, p := range pods {
			if p.Spec.NodeName != x || p.DeletionTimestamp != nil {
				return p.Name + " on " + p.Spec.NodeName, nil
			}
		}
		return "", nil
	})
	if after := e.getPod(t, ns, "s-worker-1"); after.UID == spread.UID {
		t.Errorf("s-worker-1 kept uid %s: it was not recreated", after.UID)
	}
	w.check(t, gangBound(), false)
}
