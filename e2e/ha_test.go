package e2e

// High availability: two drakes with --leader-elect behind a
// stand-in for their Service. Exactly one acts; killing it mid-wave hands
// the work to the standby within the lease time, with no partial gang past
// the bound and no pod recreated; a leader stopped with SIGTERM hands the
// lease back so the standby takes over without waiting the lease out.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	haLease = 10 * time.Second // --leader-elect-lease-duration in these tests
	haRetry = time.Second
)

// failover stands in for the Service in front of drake's replicas: it
// listens on drake's port (kube-scheduler's extender URL) and hands each new
// connection, TLS untouched, to a replica whose /readyz answers 200, the
// endpoints a Service has. With no ready replica the connection is closed,
// as a Service without endpoints refuses it.
type failover struct {
	ln       net.Listener
	backends map[string]string // replica name -> host:port
	client   *http.Client
	mu       sync.Mutex
	ready    string // the ready replica's name, "" for none
	conns    map[net.Conn]bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

func newFailover(t *testing.T, e *env, port string, backends map[string]string) *failover {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("failover: listen on drake's port %s: %v", port, err)
	}
	f := &failover{ln: ln, backends: backends, client: e.drakePlain(t), conns: map[net.Conn]bool{}, stop: make(chan struct{})}
	f.client.Timeout = 2 * time.Second
	f.wg.Add(2)
	go f.probe()
	go f.accept()
	t.Cleanup(f.close)
	return f
}

// probe refreshes the ready replica every 100 ms, as endpoints follow
// readiness.
func (f *failover) probe() {
	defer f.wg.Done()
	for {
		ready := ""
		for name, addr := range f.backends {
			if code, _ := f.readyz(addr); code == 200 {
				ready = name
			}
		}
		f.mu.Lock()
		f.ready = ready
		f.mu.Unlock()
		select {
		case <-f.stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (f *failover) readyz(addr string) (int, string) {
	resp, err := f.client.Get("https://" + addr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func (f *failover) current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ready
}

func (f *failover) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		name := f.current()
		if name == "" {
			c.Close()
			continue
		}
		b, err := net.DialTimeout("tcp", f.backends[name], 2*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		f.mu.Lock()
		f.conns[c], f.conns[b] = true, true
		f.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
			f.mu.Lock()
			delete(f.conns, dst)
			delete(f.conns, src)
			f.mu.Unlock()
		}
		go pipe(b, c)
		go pipe(c, b)
	}
}

func (f *failover) close() {
	close(f.stop)
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func replicaCtl(t *testing.T, e *env, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(e.root, "hack", "cluster-drake.sh"), args...)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	t.Logf("cluster-drake.sh %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("cluster-drake.sh %s: %v", strings.Join(args, " "), err)
	}
}

func replicaPID(t *testing.T, e *env, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, "pids", "drake-"+name+".pid"))
	if err != nil {
		t.Fatalf("pid of drake-%s: %v", name, err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// withTwoReplicas replaces the cluster's drake with replicas a and b, leader
// election on, behind a failover on drake's port; the test's end restores
// the single drake.
func withTwoReplicas(t *testing.T, e *env, ns string) *failover {
	t.Helper()
	vars := map[string]string{
		"DRAKE_LEADER_ELECT_NAMESPACE":      ns,
		"DRAKE_LEADER_ELECT_LEASE_DURATION": haLease.String(),
		"DRAKE_LEADER_ELECT_RENEW_DEADLINE": (haLease - 2*time.Second).String(),
		"DRAKE_LEADER_ELECT_RETRY_PERIOD":   haRetry.String(),
	}
	for k, v := range vars {
		os.Setenv(k, v)
	}
	e.drakeCtl(t, "stop")
	backends := map[string]string{}
	t.Cleanup(func() {
		for name := range backends {
			replicaCtl(t, e, "stop-replica", name)
		}
		for k := range vars {
			os.Unsetenv(k)
		}
		e.drakeCtl(t, "start")
	})
	for _, name := range []string{"a", "b"} {
		port := freePort(t)
		replicaCtl(t, e, "start-replica", name, port)
		backends[name] = "127.0.0.1:" + port
	}
	return newFailover(t, e, os.Getenv("DRAKE_PORT"), backends)
}

// leaderOf waits until exactly one replica is ready and the Lease names it.
func leaderOf(t *testing.T, e *env, f *failover, ns string, within time.Duration) (string, int32) {
	t.Helper()
	var leader string
	var transitions int32
	pollUntil(t, within, "one ready replica holding the lease", func() (string, error) {
		ready, states := []string{}, []string{}
		for name, addr := range f.backends {
			code, body := f.readyz(addr)
			states = append(states, fmt.Sprintf("%s: %d %s", name, code, body))
			if code == 200 {
				ready = append(ready, name)
			}
		}
		if len(ready) != 1 {
			return fmt.Sprintf("%d ready (%s)", len(ready), strings.Join(states, "; ")), nil
		}
		l, err := e.client.CoordinationV1().Leases(ns).Get(ctxFor(t, 10*time.Second), "drake", metav1.GetOptions{})
		if err != nil {
			return "lease: " + err.Error(), nil
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		if holder != "drake-"+ready[0] {
			return fmt.Sprintf("%s is ready but the lease names %q", ready[0], holder), nil
		}
		leader = ready[0]
		if l.Spec.LeaseTransitions != nil {
			transitions = *l.Spec.LeaseTransitions
		}
		return "", nil
	})
	return leader, transitions
}

func other(name string) string {
	if name == "a" {
		return "b"
	}
	return "a"
}

func TestHATheStandbyTakesOverAWaveFromAKilledLeaderAndAStoppedLeaderHandsTheLeaseOver(t *testing.T) {
	e := withReconciler(t)
	if e.mode != "gang" {
		t.Skip("leader election does not depend on the extender mode: runs in the gang-mode suite")
	}
	waitQuiet(t, e)
	ns := e.namespace(t)
	f := withTwoReplicas(t, e, ns)
	leader, transitions := leaderOf(t, e, f, ns, 60*time.Second)
	standby := other(leader)
	t.Logf("drake-%s leads (lease transitions %d); drake-%s stands by", leader, transitions, standby)
	// The standby decides nothing: its verbs answer 503 and say why.
	resp, err := e.drakeHTTP(t).Post("https://"+f.backends[standby]+"/scheduler/filter", "application/json",
		strings.NewReader(`{"pod":{"metadata":{"name":"p","namespace":"`+ns+`"}},"nodenames":["n"]}`))
	if err != nil {
		t.Fatalf("filter on the standby: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), "standby") {
		t.Errorf("filter on the standby: %d %s; want 503 saying it is a standby", resp.StatusCode, body)
	}

	// A wave of jobs; the leader is SIGKILLed at the first Binding.
	const jobs, workers = 6, 3
	w := watchGangs(t, e, ns)
	names := []string{}
	for i := 0; i < jobs; i++ {
		names = append(names, fmt.Sprintf("ha%d", i))
		w.expect(names[i], roleNeed{"ps": 1, "worker": workers})
	}
	pid := replicaPID(t, e, leader)
	killed := make(chan time.Time, 1)
	first := w.firstBound(names[0])
	go func() {
		select {
		case <-first:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed <- time.Now()
		case <-time.After(180 * time.Second):
			killed <- time.Time{}
		}
	}()
	for _, name := range names {
		createTFJob(t, ns, name, map[string]any{
			"runPolicy": map[string]any{"cleanPodPolicy": "None"},
			"tfReplicaSpecs": map[string]any{
				"PS":     tensorflow(1, "Never", nil),
				"Worker": tensorflow(workers, "Never", nil),
			},
		})
	}
	at := <-killed
	if at.IsZero() {
		t.Fatal("no pod of ha0 was bound within 180 s")
	}
	poll(t, 30*time.Second, "killed leader reaped", func() (bool, error) { return syscall.Kill(pid, 0) != nil, nil })
	boundAtKill := map[string]string{} // pod -> uid, bound before the kill
	for _, name := range names {
		for _, p := range jobPods(t, e, ns, name) {
			if p.Spec.NodeName != "" {
				boundAtKill[p.Name] = string(p.UID)
			}
		}
	}
	now, moved := leaderOf(t, e, f, ns, haLease+haRetry+30*time.Second)
	took := time.Since(at)
	t.Logf("drake-%s SIGKILLed at the first binding (%d pods bound); drake-%s ready and holding the lease %.1fs later",
		leader, len(boundAtKill), now, took.Seconds())
	if now != standby || moved != transitions+1 {
		t.Errorf("after the kill drake-%s leads with %d transitions; want drake-%s with %d", now, moved, standby, transitions+1)
	}
	bound := gangBound() + haLease + haRetry
	pollUntil(t, bound+120*time.Second, "every job whole under the new leader", func() (string, error) {
		for _, name := range names {
			if d, why := w.longest(name, at); d > bound {
				return "", fmt.Errorf("%s partial for %v after the kill (short: %s), more than %v", name, d.Round(time.Millisecond), why, bound)
			}
			if !w.whole(name) {
				return name + " not whole", nil
			}
		}
		return "", nil
	})
	w.checkAfter(t, bound, true, at)
	for _, name := range names {
		if n := w.recreated(name); n != 0 {
			t.Errorf("%s: %d pods recreated across the take-over; want none", name, n)
		}
		for _, p := range jobPods(t, e, ns, name) {
			if uid, ok := boundAtKill[p.Name]; ok && uid != string(p.UID) {
				t.Errorf("%s was bound before the kill and was recreated after it", p.Name)
			}
		}
	}

	// The killed replica comes back as a standby; SIGTERM to the leader
	// hands the lease back, so the standby leads within half a lease
	// (without the hand-back it would wait out most of one).
	replicaCtl(t, e, "start-replica", leader, strings.Split(f.backends[leader], ":")[1])
	if code, why := f.readyz(f.backends[leader]); code != 503 || !strings.Contains(why, "standby") {
		t.Errorf("restarted drake-%s: readyz %d %q; want 503 standby", leader, code, why)
	}
	stopped := time.Now()
	replicaCtl(t, e, "stop-replica", now)
	back, _ := leaderOf(t, e, f, ns, haLease+30*time.Second)
	handover := time.Since(stopped)
	t.Logf("drake-%s stopped with SIGTERM; drake-%s leads %.1fs later (lease %v)", now, back, handover.Seconds(), haLease)
	if back != leader || handover >= haLease/2 {
		t.Errorf("after SIGTERM to drake-%s: drake-%s leads after %v; want drake-%s within half the lease (%v)",
			now, back, handover.Round(time.Millisecond), leader, haLease/2)
	}
	// and the new leader acts: one more job runs whole
	w.expect("after", roleNeed{"ps": 1, "worker": 1})
	createTFJob(t, ns, "after", map[string]any{"tfReplicaSpecs": map[string]any{
		"PS": tensorflow(1, "Never", nil), "Worker": tensorflow(1, "Never", nil)}})
	poll(t, 120*time.Second, "after whole", func() (bool, error) { return w.whole("after"), nil })
}
