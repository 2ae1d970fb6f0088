package e2e

// The progress and migration API on the real control plane:
// tokens are real service-account tokens reviewed by the real API server,
// authorisation is a real SubjectAccessReview against real RBAC.

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// drakePlain trusts drake's CA but presents no client certificate: what a
// training pod or a user's tool is.
func (e *env) drakePlain(t *testing.T) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(e.certDir, "ca.crt"))
	if err != nil {
		t.Fatalf("ca: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}
}

// kubectl runs the control plane's kubectl and returns its trimmed output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(os.Getenv("DRAKE_CP_BIN"), "kubectl"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// podToken is a token of ns's default ServiceAccount bound to pod p for
// drake's audience, as the kubelet projects it into the pod.
func podToken(t *testing.T, p *corev1.Pod) string {
	t.Helper()
	return podTokenFor(t, p, "drake")
}

// podTokenFor is podToken for audience ("": the API server's, the token
// every pod mounts).
func podTokenFor(t *testing.T, p *corev1.Pod, audience string) string {
	t.Helper()
	args := []string{"create", "token", "default", "-n", p.Namespace, "--duration", "10m",
		"--bound-object-kind", "Pod", "--bound-object-name", p.Name, "--bound-object-uid", string(p.UID)}
	if audience != "" {
		args = append(args, "--audience", audience)
	}
	return kubectl(t, args...)
}

// progressFromPod runs `drake progress` as it runs inside p: with p's
// DRAKE_PROGRESS_URL and DRAKE_PROGRESS_CA_PEM, which must be drake's CA,
// and a token bound to p. The report must be accepted; the same command
// trusting the cluster's CA instead (what a pod mounts) must not send it.
func (e *env) progressFromPod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(e.certDir, "ca.crt"))
	if err != nil {
		t.Fatalf("ca: %v", err)
	}
	if got := podEnv(p, "DRAKE_PROGRESS_CA_PEM"); got != string(caPEM) {
		t.Fatalf("%s: DRAKE_PROGRESS_CA_PEM is %q, want drake's CA", p.Name, got)
	}
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte(podToken(t, p)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("DRAKE_BIN")
	if bin == "" {
		bin = filepath.Join(e.root, "build", "release", "drake")
	}
	run := func(pem, caFile string) (string, error) {
		cmd := exec.Command(bin, "progress", "--step", "20", "--value", "0.6", "--total-steps", "1000")
		cmd.Env = []string{"DRAKE_PROGRESS_URL=" + podEnv(p, "DRAKE_PROGRESS_URL"),
			"DRAKE_PROGRESS_TOKEN_FILE=" + tokFile, "DRAKE_PROGRESS_CA=" + caFile}
		if pem != "" {
			cmd.Env = append(cmd.Env, "DRAKE_PROGRESS_CA_PEM="+pem)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	clusterCA := filepath.Join(e.dir, "pki", "ca.crt")
	if out, err := run(podEnv(p, "DRAKE_PROGRESS_CA_PEM"), clusterCA); err != nil ||
		!strings.Contains(out, "drake accepted step 20") {
		t.Errorf("drake progress with the pod's environment: %v: %s", err, out)
	}
	if out, err := run("", clusterCA); err == nil || !strings.Contains(out, "could not reach drake") {
		t.Errorf("drake progress trusting the cluster's CA: %v: %s; want it not to trust drake", err, out)
	}
}

// post sends body to drake's path with token (none when ""), answering the
// status and body.
func (e *env) post(t *testing.T, c *http.Client, path, token, body string) (int, string) {
	t.Helper()
	url := strings.TrimSuffix(e.metricsURL, "/metrics") + path
	req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// twoWorkerJob is a CPU job: a PS and two workers, min one.
func twoWorkerJob(runFor string) map[string]any {
	ann := map[string]string{}
	if runFor != "" {
		ann["kwok.drake.dev/run-for"] = runFor
	}
	return map[string]any{
		"min-instances": int64(1), "max-instances": int64(2),
		"runPolicy": map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{
			"PS":     cpuReplica(1, "1", 0, ann),
			"Worker": cpuReplica(2, "2", 0, ann),
		},
	}
}

func TestProgressReportsAreAuthenticatedByThePodsOwnToken(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	w.expect("p", roleNeed{"ps": 1, "worker": 1})
	createTFJob(t, ns, "p", twoWorkerJob(""))
	poll(t, 90*time.Second, "p whole", func() (bool, error) { return w.whole("p"), nil })
	w0 := e.getPod(t, ns, "p-worker-0")
	w1 := e.getPod(t, ns, "p-worker-1")
	if podEnv(w0, "DRAKE_PROGRESS_URL") == "" {
		t.Errorf("p-worker-0 has no DRAKE_PROGRESS_URL in its environment")
	}
	// the token it reports with: projected, bound to it, for drake alone
	aud := ""
	for _, v := range w0.Spec.Volumes {
		if v.Projected != nil && v.Name == "drake-progress-token" {
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					aud = s.ServiceAccountToken.Audience
				}
			}
		}
	}
	if aud != "drake" || podEnv(w0, "DRAKE_PROGRESS_TOKEN_FILE") != "/var/run/secrets/drake.dev/progress/token" {
		t.Errorf("p-worker-0's progress token: audience %q, DRAKE_PROGRESS_TOKEN_FILE %q; want drake's projected token",
			aud, podEnv(w0, "DRAKE_PROGRESS_TOKEN_FILE"))
	}
	tok := podToken(t, w0)
	c := e.drakePlain(t)
	good := `{"step":10,"value":0.5,"metric":"accuracy","totalSteps":1000}`
	cases := []struct {
		what, token, body string
		code              int
	}{
		{"no token", "", good, 401},
		{"a token the API server does not know", "not-a-token", good, 401},
		{"the pod's token for the API server, not for drake", podTokenFor(t, w0, ""), good, 401},
		{"a malformed body", tok, `{"step":"ten","value":0.5,"metric":"accuracy"}`, 400},
		{"an unknown metric", tok, `{"step":10,"value":0.5,"metric":"vibes"}`, 400},
		{"a report for another pod", tok,
			fmt.Sprintf(`{"step":10,"value":0.5,"metric":"accuracy","namespace":%q,"pod":%q}`, ns, w1.Name), 403},
		{"the pod's own report", tok, good, 202},
	}
	for _, k := range cases {
		code, body := e.post(t, c, "/v1/progress", k.token, k.body)
		if code != k.code {
			t.Errorf("%s: %d %s; want %d", k.what, code, body, k.code)
		}
	}
	// drake progress, run with what the pod's environment holds, verifies
	// drake with the CA the controller wrote there and is accepted
	e.progressFromPod(t, w0)
	// a pod no TFJob of drake's controls: its own token, refused
	stray := e.createPod(t, ns, "stray")
	stray = e.waitPhase(t, ns, stray.Name, corev1.PodRunning, 60*time.Second)
	if code, body := e.post(t, c, "/v1/progress", podToken(t, stray), good); code != 403 ||
		!strings.Contains(body, "not a replica of a job drake manages") {
		t.Errorf("a report from a pod of no TFJob: %d %s; want 403 saying why", code, body)
	}
}

func TestMigrationRequestsAreAuthorisedAndRefusedWithTheirReason(t *testing.T) {
	e := withReconciler(t)
	waitQuiet(t, e)
	ns := e.namespace(t)
	w := watchGangs(t, e, ns)
	w.expect("mv", roleNeed{"ps": 1, "worker": 1})
	createTFJob(t, ns, "mv", twoWorkerJob("120s"))
	poll(t, 90*time.Second, "mv whole", func() (bool, error) { return w.whole("mv"), nil })
	pod := e.getPod(t, ns, "mv-worker-1")
	source := pod.Spec.NodeName
	// a user with no right to ask
	kubectl(t, "create", "serviceaccount", "mover", "-n", ns)
	tok := kubectl(t, "create", "token", "mover", "-n", ns, "--duration", "10m")
	c := e.drakePlain(t)
	req := func(onto string) string {
		if onto == "" {
			return fmt.Sprintf(`{"namespace":%q,"pod":"mv-worker-1"}`, ns)
		}
		return fmt.Sprintf(`{"namespace":%q,"pod":"mv-worker-1","onto":%q}`, ns, onto)
	}
	if code, body := e.post(t, c, "/v1/migrations", tok, req("")); code != 403 ||
		!strings.Contains(body, "tfjobs/migrations") {
		t.Errorf("a user without the right: %d %s; want 403 naming tfjobs/migrations", code, body)
	}
	// given the right, as the chart's migrator role grants it
	e.grantMigrations(t, ns, "mover")
	// onto its own node: refused by the policy, with that reason
	code, body := e.postGranted(t, c, "/v1/migrations", tok, req(source))
	if code != 409 || !strings.Contains(body, source) {
		t.Errorf("onto its own node %s: %d %s; want 409 saying so", source, code, body)
	}
	// no such replica
	if code, body := e.post(t, c, "/v1/migrations", tok,
		fmt.Sprintf(`{"namespace":%q,"pod":"mv-worker-9"}`, ns)); code != 404 {
		t.Errorf("a replica that does not exist: %d %s; want 404", code, body)
	}
	// anywhere else: accepted, and carried out
	code, body = e.post(t, c, "/v1/migrations", tok, req(""))
	if code != 202 || !strings.Contains(body, `"id"`) {
		t.Fatalf("a move the policy allows: %d %s; want 202 with an id", code, body)
	}
	ev := e.jobEvent(t, ns, "mv", "Migrated", 90*time.Second)
	after := e.getPod(t, ns, "mv-worker-1")
	if after.UID == pod.UID || after.Spec.NodeName == source || after.Spec.NodeName == "" {
		t.Errorf("after %q the worker is %s on %q (was %s on %s)", ev.Message, after.UID,
			after.Spec.NodeName, pod.UID, source)
	}
	if !strings.Contains(ev.Message, "mover") && !strings.Contains(e.migrationsList(t), "mover") {
		t.Errorf("GET /v1/migrations does not name the user who asked")
	}
	w.check(t, normalWaveMax, false)
}

// grantMigrations gives ServiceAccount sa of ns the right to ask for moves
// there (create on tfjobs/migrations), as the chart's migrator role does.
func (e *env) grantMigrations(t *testing.T, ns, sa string) {
	t.Helper()
	_, err := e.client.RbacV1().Roles(ns).Create(ctxFor(t, 10*time.Second), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "migrator"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kubeflow.org"}, Resources: []string{"tfjobs/migrations"},
			Verbs: []string{"create"}}},
	}, metav1.CreateOptions{})
	if err == nil {
		_, err = e.client.RbacV1().RoleBindings(ns).Create(ctxFor(t, 10*time.Second), &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "migrator"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "migrator"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("rbac: %v", err)
	}
}

// postGranted is post, repeated while the answer is 403: a RoleBinding
// just created takes a moment to be in effect.
func (e *env) postGranted(t *testing.T, c *http.Client, path, token, body string) (int, string) {
	t.Helper()
	var code int
	var out string
	poll(t, 30*time.Second, "the RoleBinding in effect", func() (bool, error) {
		code, out = e.post(t, c, path, token, body)
		return code != 403, nil
	})
	return code, out
}

// migrationsList is GET /v1/migrations (a client certificate, like /v1/jobs).
func (e *env) migrationsList(t *testing.T) string {
	t.Helper()
	resp, err := e.drakeHTTP(t).Get(strings.TrimSuffix(e.metricsURL, "/metrics") + "/v1/migrations")
	if err != nil {
		t.Fatalf("GET /v1/migrations: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// runningEntry is a job's entry in GET /v1/jobs' "running" list, or "".
// reportFlatUntilSlow has job's worker 0 report an accuracy that no longer
// improves until drake's jobs view marks the job slow.
func (e *env) reportFlatUntilSlow(t *testing.T, ns, job string) {
	t.Helper()
	tok := podToken(t, e.getPod(t, ns, job+"-worker-0"))
	c := e.drakePlain(t)
	key := ns + "/" + job
	for step := 0; !strings.Contains(e.runningEntry(t, key), `"slow":true`); step++ {
		if step > 40 {
			t.Fatalf("%s is not slow after %d flat reports: %s", job, step, e.runningEntry(t, key))
		}
		code, body := e.post(t, c, "/v1/progress", tok,
			fmt.Sprintf(`{"step":%d,"value":0.91,"metric":"accuracy","totalSteps":100000}`, 100*step))
		if code == 429 { // the per-pod limit: 1 report a second after a burst of 5
			step--
			time.Sleep(time.Second)
			continue
		}
		if code != 202 {
			t.Fatalf("report %d: %d %s", step, code, body)
		}
	}
}

func (e *env) runningEntry(t *testing.T, key string) string {
	t.Helper()
	resp, err := e.drakeHTTP(t).Get(strings.TrimSuffix(e.metricsURL, "/metrics") + "/v1/jobs")
	if err != nil {
		t.Fatalf("GET /v1/jobs: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	s := string(b)
	i := strings.Index(s, `{"job":"`+key+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], "}")
	return s[i : i+j+1]
}

func TestAConvergedJobGivesWorkersFirstToAStarvingJob(t *testing.T) {
	e := withReconciler(t)
	f := fillWithTwoElasticJobs(t, e)
	ns, w, gpus, aMax, bMax := f.ns, f.w, f.gpus, f.aMax, f.bMax
	// c needs two workers: a gives all it can above its min, b the rest.
	fromA := aMax - 1
	if fromA > 2 {
		fromA = 2
	}
	fromB := 2 - fromA
	if fromB >= 2 {
		t.Skipf("a has %d workers: it cannot give any, the test shows nothing", aMax)
	}
	// a's worker 0 reports its accuracy: it has stopped improving.
	e.reportFlatUntilSlow(t, ns, "a")
	// c needs two whole nodes: newest-first would take them from b; a,
	// which stopped learning, gives them instead.
	createTFJob(t, ns, "c", elasticJob(2, 2, 2, gpus, "15s"))
	ev := e.jobEvent(t, ns, "a", "ScaledDown", 90*time.Second)
	if !strings.Contains(ev.Message, "to "+ns+"/c") {
		t.Errorf("ScaledDown on a says %q; want it to name %s/c", ev.Message, ns)
	}
	poll(t, 120*time.Second, "c whole", func() (bool, error) { return w.whole("c"), nil })
	if n := liveWorkers(t, e, ns, "a"); n != aMax-fromA {
		t.Errorf("a has %d workers while c runs; it stopped learning and should have given %d (want %d)",
			n, fromA, aMax-fromA)
	}
	if n := liveWorkers(t, e, ns, "b"); n != bMax-fromB {
		t.Errorf("b has %d workers while c runs; a, which stopped learning, gives first (want %d)", n, bMax-fromB)
	}
	w.check(t, normalWaveMax, false)
}
