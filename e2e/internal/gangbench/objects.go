package gangbench

// The objects an arm submits: a TFJob for drake's controller, or a job's
// pods (in a PodGroup for the in-tree gang scheduler or for Volcano's).

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	schedv1a2 "k8s.io/api/scheduling/v1alpha2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"drake.invalid/e2e/internal/kit"
)

// RunForKey: kwok's pod-finish stage ends a Running pod this long after
// the annotation appears (config/kwok-stages.yaml).
const RunForKey = "kwok.drake.dev/run-for"

// Group: how an arm gathers a job's pods into one gang.
type Group int

const (
	// NoGroup: plain pods
	NoGroup Group = iota
	// InTreeGroup: a scheduling.k8s.io/v1alpha2 PodGroup (KEP-4671) that
	// each pod names in spec.schedulingGroup
	InTreeGroup
	// VolcanoGroup: a scheduling.volcano.sh/v1beta1 PodGroup that each pod
	// names in the annotation VolcanoGroupKey
	VolcanoGroup
)

// VolcanoGroupKey: the pod annotation vc-scheduler reads a pod's PodGroup
// from (what Volcano's own job controller writes).
const VolcanoGroupKey = "scheduling.k8s.io/group-name"

// VolcanoQueue: the queue of every Volcano PodGroup; vc-scheduler creates
// it at start.
const VolcanoQueue = "default"

// VolcanoPodGroupGVR: Volcano's PodGroups.
var VolcanoPodGroupGVR = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}

// VolcanoPodGroup is job's Volcano PodGroup in ns: minMember pods in
// VolcanoQueue, phase Pending, as vc-controller would create it (no
// vc-controller runs here); from Pending, vc-scheduler's enqueue action
// admits it and allocate binds its pods only when gang counts minMember
// of them placed.
func VolcanoPodGroup(ns, job string, minMember int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"name": job, "namespace": ns},
		"spec":     map[string]any{"minMember": int64(minMember), "queue": VolcanoQueue},
		"status":   map[string]any{"phase": "Pending"},
	}}
}

// Replica is one role's pods: how many and each one's requests (cpu and
// memory as quantities, GPUs as nvidia.com/gpu limits).
type Replica struct {
	N         int
	CPU, Mem  string
	GPUs      int
	Role      string // ps, worker
	Scheduler string // pods only; a TFJob's pods get drake's default
}

// Pod is replica r's pod idx of job in ns, in the PodGroup named job of
// kind g.
func Pod(ns, job string, r Replica, idx int, g Group) *corev1.Pod {
	f := false
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(r.CPU), corev1.ResourceMemory: resource.MustParse(r.Mem)}}
	if r.GPUs > 0 {
		res.Limits = corev1.ResourceList{kit.GPUResource: *resource.NewQuantity(int64(r.GPUs), resource.DecimalSI)}
	}
	rt := map[string]string{"ps": "PS", "worker": "Worker"}[r.Role]
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", job, r.Role, idx), Namespace: ns,
			Labels: map[string]string{kit.JobLabel: job, "training.kubeflow.org/replica-type": rt,
				"training.kubeflow.org/replica-index": strconv.Itoa(idx)}},
		Spec: corev1.PodSpec{
			SchedulerName: r.Scheduler, AutomountServiceAccountToken: &f, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "tensorflow", Image: "example.invalid/tf:1", Resources: res}},
		},
	}
	switch g {
	case InTreeGroup:
		name := job
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	case VolcanoGroup:
		p.Annotations = map[string]string{VolcanoGroupKey: job}
	}
	return p
}

// TFJob is a TFJob of ps and workers; minW > 0 sets min-instances and
// max-instances (drake's elastic bounds), else the job is rigid.
func TFJob(ns, name string, ps, workers Replica, minW, maxW int) *unstructured.Unstructured {
	replica := func(r Replica) map[string]any {
		res := map[string]any{"requests": map[string]any{"cpu": r.CPU, "memory": r.Mem}}
		if r.GPUs > 0 {
			res["limits"] = map[string]any{"nvidia.com/gpu": strconv.Itoa(r.GPUs)}
		}
		return map[string]any{
			"replicas": int64(r.N), "restartPolicy": "Never",
			"template": map[string]any{"spec": map[string]any{
				"automountServiceAccountToken": false,
				"containers":                   []any{map[string]any{"name": "tensorflow", "image": "example.invalid/tf:1", "resources": res}},
			}},
		}
	}
	spec := map[string]any{
		"runPolicy":      map[string]any{"cleanPodPolicy": "None"},
		"tfReplicaSpecs": map[string]any{"PS": replica(ps), "Worker": replica(workers)},
	}
	if minW > 0 {
		spec["min-instances"], spec["max-instances"] = int64(minW), int64(maxW)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// SubmitPods creates a job's pods the plain way; with g, a PodGroup of
// the job's name and minimum every pod first. dyn is needed for
// VolcanoGroup only.
func SubmitPods(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns, job string, g Group, roles ...Replica) error {
	total := 0
	for _, r := range roles {
		total += r.N
	}
	switch g {
	case InTreeGroup:
		pg := &schedv1a2.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: job, Namespace: ns},
			Spec: schedv1a2.PodGroupSpec{SchedulingPolicy: schedv1a2.PodGroupSchedulingPolicy{
				Gang: &schedv1a2.GangSchedulingPolicy{MinCount: int32(total)}}},
		}
		if _, err := cs.SchedulingV1alpha2().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("podgroup %s: %v", job, err)
		}
	case VolcanoGroup:
		if _, err := dyn.Resource(VolcanoPodGroupGVR).Namespace(ns).Create(ctx, VolcanoPodGroup(ns, job, total), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("volcano podgroup %s: %v", job, err)
		}
	}
	var pods []*corev1.Pod
	for _, r := range roles {
		for i := 0; i < r.N; i++ {
			pods = append(pods, Pod(ns, job, r, i, g))
		}
	}
	_, err := kit.CreateParallel(ctx, len(pods), 8, func(k int) (string, error) {
		got, err := cs.CoreV1().Pods(ns).Create(ctx, pods[k], metav1.CreateOptions{})
		if err == nil && g == InTreeGroup && got.Spec.SchedulingGroup == nil {
			return pods[k].Name, fmt.Errorf("the API server dropped spec.schedulingGroup (feature gate GenericWorkload off on kube-apiserver?)")
		}
		return pods[k].Name, err
	})
	return err
}
