// bench-frag is the cluster benchmark: GPU fragmentation on kwok
// nodes shaped like Alibaba's openb GPU nodes, plain pods placed by the real
// kube-scheduler in simple mode, with drake's score on prioritize and
// without.
//
// It adds --nodes of the openb node list (every k-th row, so the models
// and shapes keep their mix) as kwok nodes (allocatable CPU, memory,
// nvidia.com/gpu; the model as nvidia.com/gpu.product). Then, per arm, it
// restarts drake with its controller and DRAKE_PRIORITIZE=true or false
// (the scheduler's extender entry names prioritizeVerb either way; off,
// drake answers 0 for every node), and creates pods one at a time, drawn
// with replacement from the task list by --seed, each waited for until
// kube-scheduler binds it or marks it Unschedulable. The arm ends at the
// first pod that fits nowhere, and reports the GPU allocation then
// (GPUs of bound pods / GPUs of the nodes), the pods bound, and the nodes
// with every GPU free. Both arms draw the same pods.
//
// Only the list's whole-GPU and CPU-only tasks are used: a share of one GPU
// needs KubeShare's device plugin to be counted by kube-scheduler, which
// kwok nodes do not run, so shares would fit everywhere. --list picks the
// task list (default, or gpuspec10/20/25, whose tasks may name the GPU
// models they run on in gpu_spec): a task naming models asks for them by a
// required node affinity (In on nvidia.com/gpu.product), and one that no
// node of its models could hold even empty (a model the --nodes lack, or
// 120 cores asked of 96-core nodes) is left out, since it would end an arm
// whenever it is drawn.
//
// hack/bench-frag.sh brings the cluster up and down; see e2e/README.md.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"drake.invalid/e2e/internal/kit"
)

type node struct {
	name, model string
	cpu, mem    int64
	gpu         int
}

type task struct {
	cpu, mem int64
	gpu      int
	models   []string // allowed GPU models; none: any
}

func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rows = append(rows, strings.Split(strings.TrimSpace(sc.Text()), ","))
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return rows[1:], sc.Err()
}

func atoi(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }

// xorshift: the same draws in both arms.
type rng uint64

func (r *rng) next(n int) int {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return int(uint64(*r) % uint64(n))
}

func kwokNode(n node) *corev1.Node {
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	res := corev1.ResourceList{
		corev1.ResourceCPU:    q(fmt.Sprintf("%dm", n.cpu)),
		corev1.ResourceMemory: q(fmt.Sprintf("%dMi", n.mem)),
		corev1.ResourcePods:   q("1000"),
		"nvidia.com/gpu":      q(strconv.Itoa(n.gpu)),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": n.name,
				"kwok.drake.dev/shape": "openb", "nvidia.com/gpu.product": n.model},
		},
		Status: corev1.NodeStatus{Allocatable: res, Capacity: res},
	}
}

func pod(ns string, k int, t task) *corev1.Pod {
	req := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(t.cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(t.mem<<20, resource.BinarySI),
	}
	if t.gpu > 0 {
		req["nvidia.com/gpu"] = *resource.NewQuantity(int64(t.gpu), resource.DecimalSI)
	}
	var aff *corev1.Affinity
	if len(t.models) > 0 {
		aff = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "nvidia.com/gpu.product", Operator: corev1.NodeSelectorOpIn, Values: t.models}}}}}}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t-%05d", k), Namespace: ns},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "example.invalid/task:1",
				Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
			Affinity:                     aff,
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: new(bool),
		},
	}
}

type result struct {
	arm                      string
	pods, gpusBound, gpusAll int
	idleNodes                int
	stoppedAt                string
	unfit                    task
	seed                     uint64
	seconds                  float64
}

// outcome waits until the pod is bound (and says where) or unschedulable.
func outcome(ctx context.Context, cs kubernetes.Interface, ns, name string) (bound bool, node string, err error) {
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		if p.Spec.NodeName != "" {
			return true, p.Spec.NodeName, nil
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == "Unschedulable" {
				return false, "", nil
			}
		}
		if ctx.Err() != nil {
			return false, "", ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func runArm(ctx context.Context, cs kubernetes.Interface, root, arm string, nodes []node, tasks []task, seed uint64, max int) (result, error) {
	on := arm == "drake"
	if _, err := kit.EnableReconciler(root, "DRAKE_PRIORITIZE="+strconv.FormatBool(on)); err != nil {
		return result{}, err
	}
	ns := fmt.Sprintf("frag-%s-%d", arm, time.Now().Unix()%100000)
	if err := kit.NewNamespace(ctx, cs, ns); err != nil {
		return result{}, err
	}
	defer func() {
		zero := int64(0)
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		for i := 0; i < 600; i++ { // the next arm starts on an empty cluster
			l, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			if err == nil && len(l.Items) == 0 {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	r := result{arm: arm}
	used := map[string]int{}
	for _, n := range nodes {
		r.gpusAll += n.gpu
	}
	g := rng(seed)
	t0 := time.Now()
	for k := 0; k < max; k++ {
		t := tasks[g.next(len(tasks))]
		p := pod(ns, k, t)
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return r, fmt.Errorf("create %s: %v", p.Name, err)
		}
		bound, at, err := outcome(ctx, cs, ns, p.Name)
		if err != nil {
			return r, err
		}
		if !bound {
			r.stoppedAt = fmt.Sprintf("%s (cpu %dm, %d GPUs, models %q)", p.Name, t.cpu, t.gpu, strings.Join(t.models, "|"))
			r.unfit = t
			break
		}
		r.pods++
		r.gpusBound += t.gpu
		used[at] += t.gpu
	}
	r.seconds = time.Since(t0).Seconds()
	for _, n := range nodes {
		if n.gpu > 0 && used[n.name] == 0 {
			r.idleNodes++
		}
	}
	return r, nil
}

func main() {
	traces := flag.String("traces", "traces", "folder of the openb lists (run from drake's source tree, as hack/bench-frag.sh does)")
	nNodes := flag.Int("nodes", 300, "openb nodes to add (every k-th row of the list)")
	seedList := flag.String("seeds", "1,2,3", "draws of the task list, one run of both arms each")
	max := flag.Int("max-pods", 20000, "stop an arm after this many pods")
	csvPath := flag.String("csv", "bench/results/bench-frag.csv", "where the CSV goes")
	list := flag.String("list", "default", "the task list: default, gpuspec10, gpuspec20 or gpuspec25 (alibaba2023_openb_pod_list_LIST.csv)")
	flag.Parse()
	root, _ := filepath.Abs(".")
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-frag:", err)
		os.Exit(2)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()

	rows, err := readCSV(filepath.Join(*traces, "alibaba2023_openb_node_list_gpu_node.csv"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-frag:", err)
		os.Exit(2)
	}
	stride := len(rows) / *nNodes
	if stride < 1 {
		stride = 1
	}
	var nodes []node
	for i := 0; i < len(rows) && len(nodes) < *nNodes; i += stride {
		r := rows[i]
		nodes = append(nodes, node{name: strings.ToLower(r[0]), cpu: atoi(r[1]), mem: atoi(r[2]), gpu: int(atoi(r[3])), model: r[4]})
	}
	trows, err := readCSV(filepath.Join(*traces, "alibaba2023_openb_pod_list_"+*list+".csv"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-frag:", err)
		os.Exit(2)
	}
	// fits: some node of one of the models could hold t when empty
	fits := func(t task) bool {
		for _, n := range nodes {
			for _, m := range t.models {
				if n.model == m && n.cpu >= t.cpu && n.mem >= t.mem && n.gpu >= t.gpu {
					return true
				}
			}
		}
		return false
	}
	var tasks []task
	restricted := 0
	for _, r := range trows {
		gpu, milli := atoi(r[3]), atoi(r[4])
		if gpu > 0 && milli < 1000 {
			continue // a share: see the header
		}
		t := task{cpu: atoi(r[1]), mem: atoi(r[2]), gpu: int(gpu)}
		if gpu > 0 && len(r) > 5 && r[5] != "" {
			seen := map[string]bool{}
			for _, m := range strings.Split(r[5], "|") {
				if m != "" && !seen[m] {
					seen[m] = true
					t.models = append(t.models, m)
				}
			}
			if !fits(t) {
				continue // no node of its models could hold it: see the header
			}
			restricted++
		}
		tasks = append(tasks, t)
	}
	for _, n := range nodes {
		if _, err := cs.CoreV1().Nodes().Create(ctx, kwokNode(n), metav1.CreateOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, "bench-frag: node", n.name, err)
			os.Exit(1)
		}
	}
	for { // kwok marks them Ready
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kwok.drake.dev/shape=openb"})
		ready := 0
		for _, n := range l.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if err == nil && ready == len(nodes) {
			break
		}
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "bench-frag: nodes not Ready")
			os.Exit(1)
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Printf("bench-frag: %d openb nodes, %d tasks (whole-GPU and CPU) of the %s list, %d of them restricted to GPU models\n", len(nodes), len(tasks), *list, restricted)
	var res []result
	for _, f := range strings.Split(*seedList, ",") {
		seed, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil || seed == 0 {
			fmt.Fprintln(os.Stderr, "bench-frag: --seeds: not a positive integer:", f)
			os.Exit(2)
		}
		fmt.Printf("seed %d\n", seed)
		for _, arm := range []string{"drake", "kube-scheduler"} {
			r, err := runArm(ctx, cs, root, arm, nodes, tasks, seed, *max)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench-frag:", arm, err)
				os.Exit(1)
			}
			r.seed = seed
			res = append(res, r)
			fmt.Printf("  %-15s %5d pods bound, GPU allocation %.2f %% (%d of %d), %d nodes with every GPU free, first unfit pod %s, %.0f s\n",
				r.arm, r.pods, 100*float64(r.gpusBound)/float64(r.gpusAll), r.gpusBound, r.gpusAll, r.idleNodes, r.stoppedAt, r.seconds)
		}
	}
	f, err := os.Create(*csvPath)
	if err == nil {
		fmt.Fprintln(f, "list,arm,seed,nodes,pods_bound,gpus_bound,gpus_total,alloc_pct,idle_nodes,first_unfit_cpu_milli,first_unfit_gpus,first_unfit_models")
		for _, r := range res {
			fmt.Fprintf(f, "%s,%s,%d,%d,%d,%d,%d,%.2f,%d,%d,%d,%s\n", *list, r.arm, r.seed, len(nodes), r.pods, r.gpusBound, r.gpusAll,
				100*float64(r.gpusBound)/float64(r.gpusAll), r.idleNodes, r.unfit.cpu, r.unfit.gpu, strings.Join(r.unfit.models, "|"))
		}
		f.Close()
		fmt.Println("CSV:", *csvPath)
	}
}
