package kit

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Proc runs hack/cluster-proc.sh ACTION NAME (stop, start) on one component
// of the running local cluster: by its recorded PID and command line, never
// by process name.
func Proc(root, action, name string) error {
	out, err := exec.Command(filepath.Join(root, "hack", "cluster-proc.sh"), action, name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cluster-proc.sh %s %s: %v: %s", action, name, err, out)
	}
	return nil
}

// Running reports whether the cluster's recorded process NAME is alive
// (pids/NAME.pid names a live process).
func Running(clusterDir, name string) bool {
	pid, err := ReadPID(filepath.Join(clusterDir, "pids", name+".pid"))
	if err != nil {
		return false
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// AdminHTTP is an HTTP client with the cluster's admin credentials (the
// components' /metrics).
func AdminHTTP(cfg *rest.Config) (*http.Client, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt, Timeout: 20 * time.Second}, nil
}

// writeVerbs are the verbs of apiserver_request_total that change state.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// APIWrites reads kube-apiserver's apiserver_request_total and returns the
// writes (verbs POST, PUT, PATCH, DELETE) by "resource[/subresource]".
func APIWrites(ctx context.Context, c *http.Client, apiserver string) (map[string]float64, error) {
	m, err := Scrape(c, strings.TrimRight(apiserver, "/")+"/metrics")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for k, v := range m {
		if !strings.HasPrefix(k, "apiserver_request_total{") {
			continue
		}
		l := labels(k)
		if !writeVerbs[l["verb"]] {
			continue
		}
		r := l["resource"]
		if s := l["subresource"]; s != "" {
			r += "/" + s
		}
		out[r] += v
	}
	return out, nil
}

// background writes are not a workload's: kwok's node leases and node
// status, and the driver's own namespace.
var background = map[string]bool{"leases": true, "nodes": true, "nodes/status": true, "namespaces": true,
	"serviceaccounts": true, "configmaps": true, "secrets": true}

// WorkloadWrites is after - before of two APIWrites, by resource, with the
// background writes left out, and their sum.
func WorkloadWrites(before, after map[string]float64) (map[string]float64, float64) {
	by := map[string]float64{}
	total := 0.0
	for k, v := range after {
		if d := v - before[k]; d > 0 && !background[k] {
			by[k] = d
			total += d
		}
	}
	return by, total
}

// labels parses the label set of a scraped key `name{a="x",b="y"}`.
func labels(key string) map[string]string {
	out := map[string]string{}
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return out
	}
	body := strings.TrimSuffix(key[i+1:], "}")
	for len(body) > 0 {
		eq := strings.IndexByte(body, '=')
		if eq < 0 || eq+1 >= len(body) || body[eq+1] != '"' {
			break
		}
		name := body[:eq]
		rest := body[eq+2:]
		var val strings.Builder
		j := 0
		for ; j < len(rest); j++ {
			if rest[j] == '\\' && j+1 < len(rest) {
				j++
				val.WriteByte(rest[j])
				continue
			}
			if rest[j] == '"' {
				break
			}
			val.WriteByte(rest[j])
		}
		out[name] = val.String()
		body = strings.TrimPrefix(rest[min(j+1, len(rest)):], ",")
	}
	return out
}
