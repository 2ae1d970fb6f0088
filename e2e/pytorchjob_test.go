package e2e

// pytorchjob_test.go - Kubeflow's PyTorchJob under drake on the real control
// plane (the CRD in config/crd/, drake serving --kinds tfjobs,pytorchjobs;
// see withReconciler): manifests of the training operator's own examples
// (simple, mnist with gloo, elastic echo, elastic imagenet: the same kinds,
// fields and values, images that kwok never pulls) are accepted unchanged,
// each runs as a gang with the operator's environment, and a PyTorchJob
// waits in one queue with a TFJob.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var pytorchjobGVR = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}

func pytorchjobs(ns string) dynamic.ResourceInterface {
	return dyn.Resource(pytorchjobGVR).Namespace(ns)
}

// The shapes of the training operator's examples/pytorch manifests.
const ptSimple = `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pytorch-simple
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: example.invalid/pytorch-mnist:1
            imagePullPolicy: Always
            command: ["python3", "/opt/mnist/src/mnist.py", "--epochs=1"]
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: example.invalid/pytorch-mnist:1
            imagePullPolicy: Always
            command: ["python3", "/opt/mnist/src/mnist.py", "--epochs=1"]
`

const ptMnistGloo = `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pytorch-dist-mnist-gloo
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: example.invalid/pytorch_dist_mnist:latest
            args: ["--backend", "gloo"]
            resources:
              limits:
                nvidia.com/gpu: 1
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: example.invalid/pytorch_dist_mnist:latest
            args: ["--backend", "gloo"]
            resources:
              limits:
                nvidia.com/gpu: 1
`

const ptEcho = `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: elastic-example-echo
spec:
  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 1
    maxReplicas: 2
    maxRestarts: 100
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: example.invalid/pytorch-elastic-example-echo:1.0.0
            imagePullPolicy: IfNotPresent
            env:
            - name: LOGLEVEL
              value: DEBUG
            command: ["python", "-m", "torch.distributed.run", "--rdzv_backend=c10d", "./echo.py"]
`

const ptImagenet = `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: elastic-example-imagenet
spec:
  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 1
    maxReplicas: 3
    maxRestarts: 100
    metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 80
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: example.invalid/pytorch-elastic-example-imagenet:0.1
            imagePullPolicy: IfNotPresent
            resources:
              requests:
                cpu: 4
            env:
            - name: LOGLEVEL
              value: DEBUG
            command: ["python", "-m", "torch.distributed.run", "/workspace/examples/imagenet.py",
                      "--arch=resnet18", "--epochs=1", "--batch-size=32", "--workers=0",
                      "/workspace/data/tiny-imagenet-200"]
`

func createPyTorchJobYAML(t *testing.T, ns, manifest string) string {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	obj.SetNamespace(ns)
	if _, err := pytorchjobs(ns).Create(ctxFor(t, 30*time.Second), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the API server refused PyTorchJob %s: %v", obj.GetName(), err)
	}
	return obj.GetName()
}

// ptState is the type of the PyTorchJob's last True condition and its reason.
func ptState(t *testing.T, ns, name string) (string, string) {
	t.Helper()
	j, err := pytorchjobs(ns).Get(ctxFor(t, 30*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pytorchjob: %v", err)
	}
	conds, _, _ := unstructured.NestedSlice(j.Object, "status", "conditions")
	last, reason := "", ""
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] == "True" {
			last, _ = m["type"].(string)
			reason, _ = m["reason"].(string)
		}
	}
	return last, reason
}

func ptWaitState(t *testing.T, ns, name, want string, d time.Duration) {
	t.Helper()
	poll(t, d, fmt.Sprintf("pytorchjob %s/%s %s", ns, name, want), func() (bool, error) {
		s, reason := ptState(t, ns, name)
		if s == "Failed" {
			return false, fmt.Errorf("pytorchjob %s failed: %s", name, reason)
		}
		return s == want, nil
	})
}

func pytorchEnv(p *corev1.Pod) map[string]string {
	env := map[string]string{}
	for _, c := range p.Spec.Containers {
		if c.Name != "pytorch" {
			continue
		}
		for _, v := range c.Env {
			env[v.Name] = v.Value
		}
	}
	return env
}

func TestPyTorchJobKubeflowExamplesAreAcceptedAndRunAsGangs(t *testing.T) {
	e := withReconciler(t)
	ns := e.namespace(t)
	type example struct {
		manifest string
		pods     int // Master and max workers: every slot has its pod
		started  int // pods drake starts: Master and Worker.replicas
		env      map[string]string
	}
	examples := []example{
		{ptSimple, 2, 2, map[string]string{"MASTER_ADDR": "pytorch-simple-master-0",
			"MASTER_PORT": "23456", "WORLD_SIZE": "2", "PYTHONUNBUFFERED": "0"}},
		{ptMnistGloo, 2, 2, map[string]string{"MASTER_ADDR": "pytorch-dist-mnist-gloo-master-0",
			"WORLD_SIZE": "2"}},
		{ptEcho, 2, 2, map[string]string{"PET_NNODES": "1:2", "PET_RDZV_BACKEND": "c10d",
			"PET_RDZV_ENDPOINT": "elastic-example-echo-worker-0:23456", "PET_MAX_RESTARTS": "100",
			"LOGLEVEL": "DEBUG"}},
		{ptImagenet, 3, 2, map[string]string{"PET_NNODES": "1:3",
			"PET_RDZV_ENDPOINT": "elastic-example-imagenet-worker-0:23456"}},
	}
	for _, x := range examples {
		name := createPyTorchJobYAML(t, ns, x.manifest)
		pods := waitPodCount(t, e, ns, name, x.pods, 60*time.Second)
		ptWaitState(t, ns, name, "Running", 90*time.Second)
		started := 0
		for _, p := range jobPods(t, e, ns, name) {
			if p.Spec.NodeName == "" {
				continue
			}
			started++
			if plan := p.Annotations["drake.dev/planned-node"]; plan != p.Spec.NodeName {
				t.Errorf("%s: pod %s bound to %q, planned on %q", name, p.Name, p.Spec.NodeName, plan)
			}
		}
		// an elastic job may have grown into idle room since (--idle-after)
		if started < x.started || started > x.pods {
			t.Errorf("%s: %d pods started, want %d to %d (the gang drake admitted)", name, started,
				x.started, x.pods)
		}
		for _, p := range pods {
			if p.Labels["training.kubeflow.org/operator-name"] != "pytorchjob-controller" {
				t.Errorf("%s: pod %s labels %v", name, p.Name, p.Labels)
			}
			if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "PyTorchJob" {
				t.Errorf("%s: pod %s owners %v", name, p.Name, p.OwnerReferences)
			}
			if _, err := e.client.CoreV1().Services(ns).Get(ctxFor(t, 10*time.Second), p.Name, metav1.GetOptions{}); err != nil {
				t.Errorf("%s: no Service %s: %v", name, p.Name, err)
			}
		}
		env := pytorchEnv(&pods[len(pods)-1])
		for k, v := range x.env {
			if env[k] != v {
				t.Errorf("%s: %s=%q in %s, want %q", name, k, env[k], pods[len(pods)-1].Name, v)
			}
		}
		if x.env["MASTER_ADDR"] != "" {
			if w := pytorchEnv(&pods[len(pods)-1]); w["RANK"] != "1" {
				t.Errorf("%s: worker 0's RANK %q, want 1", name, w["RANK"])
			}
		}
	}
	// the HPA imagenet's metrics ask for is not made, and the job says so
	ev := e.jobEvent(t, ns, "elastic-example-imagenet", "FieldNotHonoured", 30*time.Second)
	if !strings.Contains(ev.Message, "elasticPolicy.metrics") {
		t.Errorf("FieldNotHonoured says %q", ev.Message)
	}
	if s, reason := ptState(t, ns, "pytorch-simple"); reason != "PyTorchJobRunning" {
		t.Errorf("pytorch-simple is %s with reason %q", s, reason)
	}
}

func TestPyTorchJobWaitsInOneQueueWithATFJobAndRunsWhole(t *testing.T) {
	e := withReconciler(t)
	_, gpus := clusterShape(t)
	waitGPUsIdle(t, e)
	nodesN := gpuNodes(t, e, gpus)
	ns := e.namespace(t)
	// the TFJob takes all but one whole node; the PyTorchJob (a Master and
	// two workers of a whole node each) needs three, so it waits for the
	// TFJob to end and then starts whole
	tfWorkers := nodesN - 1
	bw := watchBindings(t, e, ns, map[string]int{"tf": tfWorkers + 1, "pt": 3})
	createTFJob(t, ns, "tf", gpuJob(tfWorkers, gpus, "20s"))
	poll(t, 120*time.Second, "tf bound whole", func() (bool, error) { return bw.boundCount("tf") == tfWorkers+1, nil })
	replica := func(n int) map[string]any {
		return map[string]any{
			"replicas": int64(n), "restartPolicy": "Never",
			"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"kwok.drake.dev/run-for": "5s"}},
				"spec": map[string]any{
					"automountServiceAccountToken": false,
					"containers": []any{map[string]any{
						"name": "pytorch", "image": "example.invalid/pt:1",
						"resources": map[string]any{
							"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
							"limits":   map[string]any{"nvidia.com/gpu": strconv.Itoa(gpus)},
						},
					}},
				},
			},
		}
	}
	pt := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
		"metadata": map[string]any{"name": "pt", "namespace": ns},
		"spec": map[string]any{"pytorchReplicaSpecs": map[string]any{
			"Master": replica(1), "Worker": replica(2)}},
	}}
	if _, err := pytorchjobs(ns).Create(ctxFor(t, 30*time.Second), pt, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pytorchjob: %v", err)
	}
	waitJobsListing(t, e, "pt listed as a waiting PyTorchJob by GET /v1/jobs",
		`"job":"`+ns+`/pt","status"`, `"kind":"PyTorchJob"`)
	waitFirstThenSecond(t, e, bw, ns, "tf", "pt")
	poll(t, 120*time.Second, "pt bound whole", func() (bool, error) { return bw.allBound(), nil })
	bw.check(t, normalWaveMax, true)
	ev := e.jobEvent(t, ns, "pt", "GangWaiting", 10*time.Second)
	t.Logf("pt waited: %s", ev.Message)
	ptWaitState(t, ns, "pt", "Succeeded", 120*time.Second)
}
