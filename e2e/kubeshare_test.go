package e2e

// KubeShare fractional GPUs on the real control plane: a TFJob whose
// workers each ask for a share of one GPU (the kubeshare/gpu_request and
// kubeshare/gpu_mem annotations of their template) is admitted as one gang,
// packed first fit onto shared GPUs ("vGPUs") of one node, and every worker
// is ungated carrying the kubeshare/GPUID of the vGPU its plan chose. The
// nodes announce their GPUs' memory in kubeshare/gpu_info (hack/cluster-up.sh).

import (
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// shareJob is a TFJob spec: one PS without GPUs and `workers` workers that
// each ask for `request` of one GPU and `mem` bytes of its memory.
func shareJob(workers int, request, mem string) map[string]any {
	ps := tensorflow(1, "Never", nil)
	w := tensorflow(workers, "Never", map[string]string{
		"kubeshare/gpu_request": request,
		"kubeshare/gpu_mem":     mem,
	})
	return map[string]any{
		"runPolicy":      map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{"PS": ps, "Worker": w},
	}
}

// needGPUInfo skips unless the nodes with nvidia.com/gpu announce their
// GPUs' memory (an AMD node has neither).
func needGPUInfo(t *testing.T, e *env) {
	t.Helper()
	l, err := e.client.CoreV1().Nodes().List(ctxFor(t, 30*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	for _, n := range l.Items {
		q := n.Status.Allocatable["nvidia.com/gpu"]
		if q.Value() > 0 && n.Annotations["kubeshare/gpu_info"] == "" {
			t.Skipf("node %s has no kubeshare/gpu_info annotation", n.Name)
		}
	}
}

var gpuIDRE = regexp.MustCompile(`^[a-z]{5}$`)

func TestKubeShareHalfGPUWorkersPackTwoPerVGPUOnOneNode(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	needGPUInfo(t, e)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	bw := watchBindings(t, e, ns, map[string]int{"halves": 5})
	createTFJob(t, ns, "halves", shareJob(4, "0.5", "4294967296")) // 4Gi of a 16Gi GPU
	poll(t, 120*time.Second, "halves bound whole", func() (bool, error) { return bw.allBound(), nil })
	bw.check(t, normalWaveMax, true)

	nodes, _ := nodesOf(t, e, ns, "halves")
	if len(nodes) != 1 {
		t.Errorf("1 PS + 4 half-GPU workers spread over %d nodes %v; want one", len(nodes), nodes)
	}
	perVGPU := map[string]int{}
	for _, p := range jobPods(t, e, ns, "halves") {
		id := p.Annotations["kubeshare/GPUID"]
		if strings.Contains(p.Name, "-ps-") {
			if id != "" {
				t.Errorf("PS %s asks no GPU share but got kubeshare/GPUID %q", p.Name, id)
			}
			continue
		}
		if !gpuIDRE.MatchString(id) {
			t.Errorf("worker %s: kubeshare/GPUID %q, want 5 lowercase letters", p.Name, id)
		}
		perVGPU[id]++
		// The template gave the request and memory; drake adds the limit
		// (the request) that KubeShare needs beside them.
		for k, want := range map[string]string{"kubeshare/gpu_request": "0.5",
			"kubeshare/gpu_limit": "0.5", "kubeshare/gpu_mem": "4294967296"} {
			if got := p.Annotations[k]; got != want {
				t.Errorf("worker %s: %s = %q, want %q", p.Name, k, got, want)
			}
		}
	}
	if len(perVGPU) != 2 {
		t.Errorf("4 half-GPU workers on %d vGPUs %v; want exactly 2", len(perVGPU), perVGPU)
	}
	for id, n := range perVGPU {
		if n != 2 {
			t.Errorf("vGPU %s holds %d half-GPU workers; want 2", id, n)
		}
	}
	waitState(t, ns, "halves", "Running", 60*time.Second)
}
