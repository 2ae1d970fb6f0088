package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// env is what hack/cluster-up.sh wrote to $DRAKE_CLUSTER_DIR/env; the harness
// (hack/e2e.sh) sources it before `go test`.
type env struct {
	dir, root, metricsURL, certDir, mode string
	client                               kubernetes.Interface

	httpOnce sync.Once
	http     *http.Client
	httpErr  error
}

var cluster *env

func TestMain(m *testing.M) {
	dir := os.Getenv("DRAKE_CLUSTER_DIR")
	if dir == "" || os.Getenv("KUBECONFIG") == "" {
		fmt.Println("e2e: no cluster (DRAKE_CLUSTER_DIR/KUBECONFIG unset): run `make e2e`; every test will skip")
		os.Exit(m.Run())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: kubeconfig:", err)
		os.Exit(2)
	}
	cfg.UserAgent = "drake-e2e"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: client:", err)
		os.Exit(2)
	}
	root, _ := filepath.Abs("..")
	cluster = &env{
		dir: dir, root: root,
		metricsURL: os.Getenv("DRAKE_METRICS_URL"),
		certDir:    os.Getenv("DRAKE_CERT_DIR"),
		mode:       os.Getenv("DRAKE_EXTENDER_MODE"),
		client:     cs,
	}
	code := m.Run()
	printPartialStats()
	os.Exit(code)
}

func need(t *testing.T) *env {
	t.Helper()
	if cluster == nil {
		t.Skip("no cluster: run `make e2e`")
	}
	return cluster
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a fresh namespace for one test, waits for its default
// service account (made by kube-controller-manager, needed by admission), and
// deletes it when the test ends.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	name := "e2e-" + strings.ToLower(rand.String(6))
	ctx := ctxFor(t, 2*time.Minute)
	_, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = e.client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	poll(t, 60*time.Second, "default service account in "+name, func() (bool, error) {
		_, err := e.client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return name
}

// poll calls f every 100 ms until it reports done, fails, or the deadline passes.
func poll(t *testing.T, d time.Duration, what string, f func() (bool, error)) {
	t.Helper()
	pollEvery(t, d, 100*time.Millisecond, what, f)
}

// pollEvery is poll looking every `every`, for a state that may last less
// than poll's 100 ms.
func pollEvery(t *testing.T, d, every time.Duration, what string, f func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, err := f()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(every)
	}
}

// pollUntil calls f every 100 ms until it returns "" (done) or fails; f
// otherwise says what is still missing, which a timeout reports.
func pollUntil(t *testing.T, d time.Duration, what string, f func() (string, error)) {
	t.Helper()
	var missing string
	deadline := time.Now().Add(d)
	for {
		var err error
		if missing, err = f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %s", d, what, missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type podOpt func(*corev1.Pod)

func withNodeSelector(k, v string) podOpt {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{k: v} }
}
func withAnnotation(k, v string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}
func withResource(name string, q string) podOpt {
	return func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		c.Resources.Requests[corev1.ResourceName(name)] = resource.MustParse(q)
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		c.Resources.Limits[corev1.ResourceName(name)] = resource.MustParse(q)
	}
}

func (e *env) createPod(t *testing.T, ns, name string, opts ...podOpt) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "main", Image: "example.invalid/trainer:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
				}},
			}},
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: new(bool),
		},
	}
	for _, o := range opts {
		o(p)
	}
	out, err := e.client.CoreV1().Pods(ns).Create(ctxFor(t, 30*time.Second), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", ns, name, err)
	}
	return out
}

func (e *env) getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s/%s: %v", ns, name, err)
	}
	return p
}

// waitPhase waits for the pod to reach phase and returns it.
func (e *env) waitPhase(t *testing.T, ns, name string, phase corev1.PodPhase, d time.Duration) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	poll(t, d, fmt.Sprintf("pod %s/%s %s", ns, name, phase), func() (bool, error) {
		p = e.getPod(t, ns, name)
		return p.Status.Phase == phase, nil
	})
	return p
}

// events returns the events about one pod.
func (e *env) events(t *testing.T, ns, pod string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.name": pod, "involvedObject.kind": "Pod"}.AsSelector().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	return l.Items
}

// waitEvent waits for an event with the reason whose message contains substr
// and returns it.
func (e *env) waitEvent(t *testing.T, ns, pod, reason, substr string, d time.Duration) corev1.Event {
	t.Helper()
	var found corev1.Event
	poll(t, d, fmt.Sprintf("event %s %q on %s/%s", reason, substr, ns, pod), func() (bool, error) {
		for _, ev := range e.events(t, ns, pod) {
			if ev.Reason == reason && strings.Contains(ev.Message, substr) {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

// drakeHTTP is the mTLS client (presenting kube-scheduler's certificate) for
// drake's own endpoints: metrics, health, the jobs API. It is built once and
// keeps its connections, so a test that scrapes every 5 ms does not make a
// TLS handshake, and leave an idle connection behind, per scrape. Idle
// connections are dropped before drake's 30 s request deadline would close
// them; a GET on one drake closed anyway (a restart) is redialled by
// net/http.
func (e *env) drakeHTTP(t *testing.T) *http.Client {
	t.Helper()
	e.httpOnce.Do(func() {
		cert, err := tls.LoadX509KeyPair(filepath.Join(e.certDir, "client.crt"), filepath.Join(e.certDir, "client.key"))
		if err != nil {
			e.httpErr = fmt.Errorf("client cert: %w", err)
			return
		}
		caPEM, err := os.ReadFile(filepath.Join(e.certDir, "ca.crt"))
		if err != nil {
			e.httpErr = fmt.Errorf("ca: %w", err)
			return
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		e.http = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     20 * time.Second,
		}}
	})
	if e.httpErr != nil {
		t.Fatalf("drake's client: %v", e.httpErr)
	}
	return e.http
}

var sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)`)

// metrics scrapes drake's /metrics and returns "name{labels}" -> value. A
// scrape that fails in transport is logged and tried again, twice at most:
// the fault tests scrape thousands of times while they kill the control
// plane's components around drake, and one lost connection is not the
// failure they look for.
func (e *env) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	var resp *http.Response
	var err error
	for try := 1; ; try++ {
		if resp, err = e.drakeHTTP(t).Get(e.metricsURL); err == nil {
			break
		}
		if try == 3 {
			t.Fatalf("scrape %s: %v (the third try)", e.metricsURL, err)
		}
		t.Logf("scrape %s: %v; trying again", e.metricsURL, err)
		time.Sleep(200 * time.Millisecond)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape %s: %s %s", e.metricsURL, resp.Status, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err == nil {
			out[m[1]+m[2]] = v
		}
	}
	return out
}

// requests sums drake_requests_total over codes for one verb; ok200 is the
// count with code="200".
func requests(m map[string]float64, verb string) (all, ok200 float64) {
	for k, v := range m {
		if strings.HasPrefix(k, "drake_requests_total{") && strings.Contains(k, `verb="`+verb+`"`) {
			all += v
			if strings.Contains(k, `code="200"`) {
				ok200 += v
			}
		}
	}
	return
}

// drakeCtl runs hack/cluster-drake.sh start|stop.
func (e *env) drakeCtl(t *testing.T, action string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(e.root, "hack", "cluster-drake.sh"), action)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	t.Logf("cluster-drake.sh %s: %s", action, strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("cluster-drake.sh %s: %v", action, err)
	}
}

func (e *env) drakeUp(t *testing.T) bool {
	resp, err := e.drakeHTTP(t).Get(strings.TrimSuffix(e.metricsURL, "/metrics") + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}
