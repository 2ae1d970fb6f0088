package gangbench

// The objects an arm submits: a TFJob for drake's controller, or a job's
// pods (in a PodGroup for the in-tree gang scheduler).

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	schedv1a2 "k8s.io/api/scheduling/v1alpha2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"drake.invalid/e2e/internal/kit"
)

// RunForKey: kwok's pod-finish stage ends a Running pod this long after
// the annotation appears (config/kwok-stages.yaml).
const RunForKey = "kwok.drake.dev/run-for"

// Replica is one role's pods: how many and each one's requests (cpu and
// memory as quantities, GPUs as nvidia.com/gpu limits).
type Replica struct {
	N         int
	CPU, Mem  string
	GPUs      int
	Role      string // ps, worker
	Scheduler string // pods only; a TFJob's pods get drake's default
}

// Pod is replica r's pod idx of job in ns, in PodGroup group ("" none).
func Pod(ns, job string, r Replica, idx int, group string) *corev1.Pod {
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
	if group != "" {
		g := group
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &g}
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

// SubmitPods creates a job's pods the plain way; with a PodGroup of
// minCount = every pod first when group (the in-tree gang scheduler).
func SubmitPods(ctx context.Context, cs kubernetes.Interface, ns, job string, group bool, roles ...Replica) error {
	g := ""
	total := 0
	for _, r := range roles {
		total += r.N
	}
	if group {
		pg := &schedv1a2.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: job, Namespace: ns},
			Spec: schedv1a2.PodGroupSpec{SchedulingPolicy: schedv1a2.PodGroupSchedulingPolicy{
				Gang: &schedv1a2.GangSchedulingPolicy{MinCount: int32(total)}}},
		}
		if _, err := cs.SchedulingV1alpha2().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("podgroup %s: %v", job, err)
		}
		g = job
	}
	var pods []*corev1.Pod
	for _, r := range roles {
		for i := 0; i < r.N; i++ {
			pods = append(pods, Pod(ns, job, r, i, g))
		}
	}
	_, err := kit.CreateParallel(ctx, len(pods), 8, func(k int) (string, error) {
		got, err := cs.CoreV1().Pods(ns).Create(ctx, pods[k], metav1.CreateOptions{})
		if err == nil && g != "" && got.Spec.SchedulingGroup == nil {
			return pods[k].Name, fmt.Errorf("the API server dropped spec.schedulingGroup (feature gate GenericWorkload off on kube-apiserver?)")
		}
		return pods[k].Name, err
	})
	return err
}
