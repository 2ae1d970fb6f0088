package e2e

// The chief (TFJob's Chief replica) on the real control plane: it is a
// member of its job's gang, admitted in the same wave as the PS and the
// workers, held by the same bind barrier, and placed beside the PS.

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// chiefJob is gpuJob(workers, gpu, "") plus a Chief of chiefGPU GPUs.
func chiefJob(workers, gpu, chiefGPU int) map[string]any {
	spec := gpuJob(workers, gpu, "")
	chief := tensorflow(1, "Never", nil)
	c := chief["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["resources"] = map[string]any{
		"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
		"limits":   map[string]any{"nvidia.com/gpu": strconv.Itoa(chiefGPU)},
	}
	spec["tfReplicaSpecs"].(map[string]any)["Chief"] = chief
	return spec
}

func TestChiefIsBoundInTheWaveOfItsPSAndWorkersOnOneNode(t *testing.T) {
	e := withReconciler(t)
	clusterShape(t)
	waitGPUsIdle(t, e)
	ns := e.namespace(t)
	// 1 PS + 1 one-GPU chief + 6 one-GPU workers: 8 pods, 7 GPUs.
	bw := watchBindings(t, e, ns, map[string]int{"withchief": 8})
	createTFJob(t, ns, "withchief", chiefJob(6, 1, 1))
	poll(t, 120*time.Second, "withchief bound whole", func() (bool, error) { return bw.allBound(), nil })
	bw.check(t, normalWaveMax, true)

	nodes, psNode := nodesOf(t, e, ns, "withchief")
	if len(nodes) != 1 {
		t.Errorf("1 PS + chief + 6 workers spread over %d nodes %v; want one", len(nodes), nodes)
	}
	gang, chief := "", 0
	for _, p := range jobPods(t, e, ns, "withchief") {
		g := p.Annotations["drake.dev/gang"]
		if g == "" {
			t.Errorf("pod %s carries no drake.dev/gang", p.Name)
		} else if gang == "" {
			gang = g
		} else if g != gang {
			t.Errorf("pod %s is in gang %q, another pod in %q; want one wave", p.Name, g, gang)
		}
		if size, min := p.Annotations["drake.dev/gang-size"], p.Annotations["drake.dev/gang-min"]; size != "8" || min != "8" {
			t.Errorf("pod %s: gang-size %q, gang-min %q; want 8 and 8 (PS + chief + 6 workers)", p.Name, size, min)
		}
		if strings.Contains(p.Name, "-chief-") {
			chief++
			if p.Spec.NodeName != psNode {
				t.Errorf("chief %s on %q, its PS on %q; want beside the PS", p.Name, p.Spec.NodeName, psNode)
			}
		}
	}
	if chief != 1 {
		t.Errorf("found %d chief pods; want 1", chief)
	}
	job := waitState(t, ns, "withchief", "Running", 60*time.Second)
	if plan := job.GetAnnotations()["drake.dev/plan"]; !strings.Contains(plan, `"chief":1`) ||
		!strings.Contains(plan, `"workers":6`) {
		t.Errorf("drake.dev/plan on the TFJob is %q; want the chief and 6 workers", plan)
	}
}
