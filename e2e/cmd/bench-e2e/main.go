// bench-e2e measures how fast kube-scheduler binds pods, from the API
// server's view, with and without drake as its extender, in one cluster.
//
// hack/bench-e2e.sh starts the cluster with three schedulers: profile
// "default-scheduler" calls drake (filter, prioritize, bind; simple mode),
// "plain-scheduler" has no extender, and "plain-nobatch-scheduler" has no
// extender and OpportunisticBatching off (kube-scheduler turns batching off by
// itself for a profile with extenders, so this one isolates the cost of the
// extender calls). For each phase this program creates --pods plain pods for
// one scheduler as fast as it can (--workers parallel creates, client QPS
// unlimited in practice) and watches them until every one is bound.
// Throughput = pods / (first create request sent -> last binding seen on the
// watch). Phases run one at a time; the order is reversed every other round
// so that the growing number of pods in the cluster favours no profile.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

type result struct {
	round          int
	scheduler      string
	pods           int
	createSeconds  float64 // first create sent -> last create answered
	bindSeconds    float64 // first create sent -> last binding seen
	serverSeconds  float64 // first creationTimestamp -> last PodScheduled transition (1 s resolution)
	podsPerSecond  float64
	drakeInvolved  bool
	schedulingErrs int
}

func main() {
	pods := flag.Int("pods", 3000, "pods per phase")
	rounds := flag.Int("rounds", 2, "rounds; each runs both schedulers (ABBA order across rounds)")
	workers := flag.Int("workers", 64, "parallel pod creations")
	timeout := flag.Duration("timeout", 5*time.Minute, "deadline for one phase")
	withDrake := flag.String("drake-scheduler", "default-scheduler", "scheduler profile that calls drake")
	schedList := flag.String("schedulers", "plain-scheduler,plain-nobatch-scheduler,default-scheduler",
		"scheduler profiles to compare; the first is the baseline of the ratio")
	out := flag.String("csv", "", "CSV file to write (default bench/results/bench-e2e-<time>.csv)")
	nodes := flag.Int("nodes", 0, "node count, for the record")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 10000, 10000
	cfg.UserAgent = "drake-bench-e2e"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail("client: %v", err)
	}

	scheds := strings.Split(*schedList, ",")
	var results []result
	for r := 1; r <= *rounds; r++ {
		order := append([]string(nil), scheds...)
		if r%2 == 0 { // reverse every other round, so no profile always runs on the fuller cluster
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, s := range order {
			res := phase(cs, r, s, *pods, *workers, *timeout)
			res.drakeInvolved = s == *withDrake
			fmt.Printf("round %d %-24s %5d pods bound in %6.2fs = %7.1f pods/s (creates took %.2fs)\n",
				r, s, res.pods, res.bindSeconds, res.podsPerSecond, res.createSeconds)
			results = append(results, res)
		}
	}

	sum, cnt := map[string]float64{}, map[string]int{}
	fmt.Println()
	fmt.Printf("%-5s %-24s %-6s %6s %9s %9s %9s %9s\n", "round", "scheduler", "drake", "pods", "create_s", "bind_s", "server_s", "pods/s")
	for _, r := range results {
		fmt.Printf("%-5d %-24s %-6v %6d %9.2f %9.2f %9.0f %9.1f\n", r.round, r.scheduler, r.drakeInvolved, r.pods,
			r.createSeconds, r.bindSeconds, r.serverSeconds, r.podsPerSecond)
		sum[r.scheduler] += r.podsPerSecond
		cnt[r.scheduler]++
	}
	mean := func(s string) float64 { return sum[s] / float64(cnt[s]) }
	fmt.Println()
	for _, s := range scheds {
		fmt.Printf("mean %-24s %7.1f pods/s\n", s, mean(s))
	}
	ratio := mean(*withDrake) / mean(scheds[0])
	fmt.Printf("ratio %s / %s = %.3f (drake costs %.1f%% of throughput; target <= 20%%)\n",
		*withDrake, scheds[0], ratio, (1-ratio)*100)
	for _, s := range scheds[1:] {
		if s != *withDrake {
			fmt.Printf("ratio %s / %s = %.3f\n", *withDrake, s, mean(*withDrake)/mean(s))
		}
	}

	diagnostics(cfg)

	path := *out
	if path == "" {
		path = filepath.Join("bench", "results", "bench-e2e-"+time.Now().UTC().Format("20060102-150405")+".csv")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fail("%v", err)
	}
	f, err := os.Create(path)
	if err != nil {
		fail("%v", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"time", "round", "scheduler", "drake", "nodes", "pods", "create_seconds", "bind_seconds", "server_seconds", "pods_per_second", "ratio_drake_over_plain"})
	now := time.Now().UTC().Format(time.RFC3339)
	for _, r := range results {
		_ = w.Write([]string{now, strconv.Itoa(r.round), r.scheduler, strconv.FormatBool(r.drakeInvolved), strconv.Itoa(*nodes),
			strconv.Itoa(r.pods), f2(r.createSeconds), f2(r.bindSeconds), f2(r.serverSeconds), f2(r.podsPerSecond), f2(ratio)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fail("csv: %v", err)
	}
	f.Close()
	fmt.Printf("wrote %s\n", path)
}

// diagnostics prints where the time went, from the components' own metrics:
// each scheduler's mean scheduling-algorithm time per pod (the extender calls
// happen inside it), drake's mean handling time per verb, and the API
// server's mean latency of pods/binding.
func diagnostics(cfg *rest.Config) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return
	}
	admin := &http.Client{Transport: rt, Timeout: 10 * time.Second}
	fmt.Println()
	for _, v := range []string{"DRAKE_SCHEDULER_URL", "DRAKE_PLAIN_SCHEDULER_URL", "DRAKE_PLAIN_NOBATCH_SCHEDULER_URL"} {
		if u := os.Getenv(v); u != "" {
			m := scrape(admin, u+"/metrics")
			fmt.Printf("%-34s scheduling algorithm %6.1f ms/pod over %.0f pods\n", v, 1000*m["scheduler_scheduling_algorithm_duration_seconds_sum"]/m["scheduler_scheduling_algorithm_duration_seconds_count"], m["scheduler_scheduling_algorithm_duration_seconds_count"])
		}
	}
	m := scrape(admin, cfg.Host+"/metrics")
	var bs, bc float64
	for k, v := range m {
		if strings.Contains(k, `subresource="binding"`) && strings.Contains(k, `verb="POST"`) {
			if strings.HasPrefix(k, "apiserver_request_duration_seconds_sum{") {
				bs += v
			} else if strings.HasPrefix(k, "apiserver_request_duration_seconds_count{") {
				bc += v
			}
		}
	}
	fmt.Printf("%-34s POST pods/binding %6.1f ms mean over %.0f\n", "kube-apiserver", 1000*bs/bc, bc)
	dir := os.Getenv("DRAKE_CERT_DIR")
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
	if err != nil {
		return
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	dc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}}
	m = scrape(dc, os.Getenv("DRAKE_METRICS_URL"))
	for _, verb := range []string{"filter", "prioritize", "bind"} {
		sum := m[`drake_request_duration_seconds_sum{verb="`+verb+`"}`]
		cnt := m[`drake_request_duration_seconds_count{verb="`+verb+`"}`]
		fmt.Printf("%-34s %-10s %8.2f ms mean over %.0f calls\n", "drake", verb, 1000*sum/cnt, cnt)
	}
}

// scrape reads Prometheus text into "name{labels}" -> value.
func scrape(c *http.Client, url string) map[string]float64 {
	out := map[string]float64{}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-e2e: scrape %s: %v\n", url, err)
		return out
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
	return out
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench-e2e: "+format+"\n", a...)
	os.Exit(1)
}

func phase(cs kubernetes.Interface, round int, sched string, n, workers int, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ns := fmt.Sprintf("bench-%d-%s", round, sched)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fail("namespace %s: %v", ns, err)
	}
	for {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			break
		}
		if ctx.Err() != nil {
			fail("no default service account in %s", ns)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// watch first, so no binding is missed
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fail("list: %v", err)
	}
	bound := map[string]time.Time{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		rv := list.ResourceVersion
		for {
			w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				fail("watch: %v", err)
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					break
				}
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				rv = p.ResourceVersion
				if p.Spec.NodeName == "" {
					continue
				}
				mu.Lock()
				if _, seen := bound[p.Name]; !seen {
					bound[p.Name] = time.Now()
					if len(bound) == n {
						close(done)
						mu.Unlock()
						w.Stop()
						return
					}
				}
				mu.Unlock()
			}
			w.Stop()
			if ctx.Err() != nil {
				return
			}
		}
	}()

	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				p := benchPod(ns, fmt.Sprintf("p-%05d", k), sched)
				for {
					_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
					if err == nil || ctx.Err() != nil {
						break
					}
					if !strings.Contains(err.Error(), "rate") && !strings.Contains(err.Error(), "timeout") {
						fail("create %s: %v", p.Name, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	created := time.Since(start)
	select {
	case <-done:
	case <-ctx.Done():
		mu.Lock()
		fail("%s: only %d of %d pods bound within %v", sched, len(bound), n, timeout)
	}
	var last time.Time
	mu.Lock()
	for _, t := range bound {
		if t.After(last) {
			last = t
		}
	}
	mu.Unlock()
	res := result{round: round, scheduler: sched, pods: n, createSeconds: created.Seconds(), bindSeconds: last.Sub(start).Seconds()}
	res.podsPerSecond = float64(n) / res.bindSeconds
	res.serverSeconds = serverSpan(ctx, cs, ns)
	return res
}

// serverSpan: first creationTimestamp -> last PodScheduled=True transition,
// from the objects themselves (second resolution), as a cross-check.
func serverSpan(ctx context.Context, cs kubernetes.Interface, ns string) float64 {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) == 0 {
		return -1
	}
	var created, scheduled []time.Time
	for _, p := range list.Items {
		created = append(created, p.CreationTimestamp.Time)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				scheduled = append(scheduled, c.LastTransitionTime.Time)
			}
		}
	}
	if len(scheduled) == 0 {
		return -1
	}
	sort.Slice(created, func(i, j int) bool { return created[i].Before(created[j]) })
	sort.Slice(scheduled, func(i, j int) bool { return scheduled[i].Before(scheduled[j]) })
	return scheduled[len(scheduled)-1].Sub(created[0]).Seconds()
}

func benchPod(ns, name, sched string) *corev1.Pod {
	f := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			SchedulerName:                sched,
			AutomountServiceAccountToken: &f,
			RestartPolicy:                corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: "example.invalid/bench:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
				}},
			}},
		},
	}
}
