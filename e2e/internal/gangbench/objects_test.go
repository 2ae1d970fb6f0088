package gangbench

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestVolcanoPodGroup(t *testing.T) {
	pg := VolcanoPodGroup("replay-1-volcano", "j7", 5)
	if pg.GetAPIVersion() != "scheduling.volcano.sh/v1beta1" || pg.GetKind() != "PodGroup" {
		t.Fatalf("type %s %s, want scheduling.volcano.sh/v1beta1 PodGroup", pg.GetAPIVersion(), pg.GetKind())
	}
	if pg.GetName() != "j7" || pg.GetNamespace() != "replay-1-volcano" {
		t.Fatalf("named %s/%s, want replay-1-volcano/j7", pg.GetNamespace(), pg.GetName())
	}
	if m, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember"); m != 5 {
		t.Errorf("spec.minMember %d, want 5", m)
	}
	if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "default" {
		t.Errorf("spec.queue %q, want default (the queue vc-scheduler creates)", q)
	}
	// without vc-controller nobody else sets Pending, and vc-scheduler's
	// enqueue action only admits Pending groups
	if ph, _, _ := unstructured.NestedString(pg.Object, "status", "phase"); ph != "Pending" {
		t.Errorf("status.phase %q, want Pending", ph)
	}
}

func TestPodGroupMembership(t *testing.T) {
	r := Replica{N: 2, CPU: "1", Mem: "1Gi", GPUs: 1, Role: "worker", Scheduler: "volcano"}
	v := Pod("ns", "j1", r, 1, VolcanoGroup)
	if v.Name != "j1-worker-1" || v.Spec.SchedulerName != "volcano" {
		t.Fatalf("pod %s scheduler %s", v.Name, v.Spec.SchedulerName)
	}
	if v.Annotations[VolcanoGroupKey] != "j1" || v.Annotations[VolcanoGroupKey] == "" {
		t.Errorf("volcano pod annotations %v, want %s: j1", v.Annotations, VolcanoGroupKey)
	}
	if v.Spec.SchedulingGroup != nil {
		t.Errorf("volcano pod has an in-tree schedulingGroup")
	}
	in := Pod("ns", "j1", r, 0, InTreeGroup)
	if in.Spec.SchedulingGroup == nil || in.Spec.SchedulingGroup.PodGroupName == nil || *in.Spec.SchedulingGroup.PodGroupName != "j1" {
		t.Errorf("in-tree pod's schedulingGroup %v, want PodGroup j1", in.Spec.SchedulingGroup)
	}
	if _, ok := in.Annotations[VolcanoGroupKey]; ok {
		t.Errorf("in-tree pod has Volcano's group annotation")
	}
	plain := Pod("ns", "j1", r, 0, NoGroup)
	if plain.Spec.SchedulingGroup != nil || len(plain.Annotations) != 0 {
		t.Errorf("plain pod in a group: %v %v", plain.Spec.SchedulingGroup, plain.Annotations)
	}
}
