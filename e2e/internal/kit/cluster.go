// Package kit holds what the cluster drivers in e2e/cmd (bench-e2e, soak)
// share: turning on drake's TFJob controller in the running local cluster,
// namespaces, drake's /metrics, a process's RSS and descriptors, and the
// partial-gang tracker (gangs.go).
package kit

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// TFJobGVR is Kubeflow's TFJob resource (config/crd/kubeflow.org_tfjobs.yaml).
var TFJobGVR = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}

// JobLabel names a TFJob pod's job.
const JobLabel = "training.kubeflow.org/job-name"

// EnableReconciler installs the TFJob CRD and restarts drake with
// DRAKE_RECONCILE=true (and DRAKE_GANG_RESOURCE=drake.dev/gang in a
// gang-mode cluster), as e2e/tfjob_test.go's withReconciler does, through
// hack/cluster-drake.sh restart. The restart inherits the environment plus
// extraEnv ("NAME=value"). It returns how long the restart took.
func EnableReconciler(root string, extraEnv ...string) (time.Duration, error) {
	kubectl := filepath.Join(os.Getenv("DRAKE_CP_BIN"), "kubectl")
	crd := filepath.Join(root, "config", "crd", "kubeflow.org_tfjobs.yaml")
	if out, err := exec.Command(kubectl, "apply", "-f", crd).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("kubectl apply %s: %v: %s", crd, err, out)
	}
	if out, err := exec.Command(kubectl, "wait", "--for=condition=Established",
		"crd/tfjobs.kubeflow.org", "--timeout=60s").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("TFJob CRD not established: %v: %s", err, out)
	}
	env := append(os.Environ(), "DRAKE_RECONCILE=true")
	if os.Getenv("DRAKE_EXTENDER_MODE") == "gang" {
		env = append(env, "DRAKE_GANG_RESOURCE=drake.dev/gang")
	}
	env = append(env, extraEnv...)
	cmd := exec.Command(filepath.Join(root, "hack", "cluster-drake.sh"), "restart")
	cmd.Env = env
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("restart drake with --reconcile: %v: %s", err, out)
	}
	return time.Since(t0), nil
}

// NewNamespace creates ns and waits until its default service account
// exists (pods cannot be created before it) or ctx ends.
func NewNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("namespace %s: %v", ns, err)
	}
	for {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no default service account in %s", ns)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DrakeHTTP is a client for drake's /metrics with kube-scheduler's client
// certificate (drake requires it); nil if the certificates are not there.
func DrakeHTTP() *http.Client {
	dir := os.Getenv("DRAKE_CERT_DIR")
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
	if err != nil {
		return nil
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}}
}

// Scrape reads Prometheus text into "name{labels}" -> value.
func Scrape(c *http.Client, url string) (map[string]float64, error) {
	out := map[string]float64{}
	resp, err := c.Get(url)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// ReadPID reads a pid file the cluster scripts write (pids/NAME.pid).
func ReadPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// ProcUsage is a process's resident set (VmRSS of /proc/PID/status, KiB)
// and its open file descriptors (entries of /proc/PID/fd).
func ProcUsage(pid int) (rssKiB int64, fds int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			if rssKiB, err = strconv.ParseInt(f[1], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("VmRSS %q: %v", line, err)
			}
			found = true
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS (a zombie?)", pid)
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, 0, err
	}
	return rssKiB, len(ents), nil
}
