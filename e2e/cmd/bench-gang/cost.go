package main

// The cost of being an extender: plain pods (10m cpu, no GPU) through
// kube-scheduler profiles that differ only in their extender, one running at
// a time, in rotating order:
//
//   plain-scheduler         no extender
//   trivial-scheduler       a trivial extender (bench/extender_bench
//                           --names-serve: libevent, OpenSSL and HTTP/2 as
//                           drake, answering filter with every node it was
//                           sent, cut from the request unparsed)
//   drake-filter-scheduler  drake, filter verb only
//   drake-prio-scheduler    drake, filter and prioritize (kube-scheduler binds;
//                           drake's own entry names no prioritize verb)
//   simple-scheduler        drake in simple mode: filter and bind (and
//                           preempt), as config/drake-extender.yaml.tmpl
//
// Each scheduler is (re)started for its phase, so its own metrics are that
// phase's: mean scheduling-algorithm time per pod (the extender's filter and
// prioritize calls are inside it) and mean Bind time (drake's bind verb, or
// the in-tree binder). drake's per-verb times are deltas of its /metrics.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"drake.invalid/e2e/internal/gangbench"
	"drake.invalid/e2e/internal/kit"
)

type costResult struct {
	round           int
	scheduler       string
	kit.PlainResult // pods/s and times
	algoMs, bindMs  float64
	drakeMs         map[string]float64 // drake's mean ms per verb in this phase
	drakeCalls      map[string]float64
	err             string
}

func contextTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func (b *bench) costArm() []costResult {
	var out []costResult
	fmt.Printf("\ncost of being an extender: %d plain pods per phase, %d rounds\n", b.o.costPods, b.o.costRounds)
	for r := 1; r <= b.o.costRounds; r++ {
		order := append([]string(nil), b.o.costScheds...)
		if r%2 == 0 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, s := range order {
			c := b.costPhase(r, s)
			if c.err != "" {
				fmt.Printf("round %d %-24s ERROR: %s\n", r, s, c.err)
			} else {
				fmt.Printf("round %d %-24s %5d pods in %6.2fs = %6.1f pods/s; algorithm %.1f ms/pod, bind %.1f ms\n",
					r, s, c.Pods, c.BindSeconds, c.PodsPerSecond, c.algoMs, c.bindMs)
			}
			out = append(out, c)
		}
	}
	return out
}

// costPhase restarts the scheduler (fresh metrics), then runs one phase.
func (b *bench) costPhase(round int, sched string) costResult {
	c := costResult{round: round, scheduler: sched}
	if kit.Running(b.o.clusterDir, sched) {
		if err := kit.Proc(b.o.root, "stop", sched); err != nil {
			c.err = err.Error()
			return c
		}
	}
	if err := gangbench.Activate(b.o.root, b.o.clusterDir, b.procs, sched); err != nil {
		c.err = err.Error()
		return c
	}
	ctx, cancel := contextTimeout(10 * time.Minute)
	defer cancel()
	ns := fmt.Sprintf("bg-cost-%d-%s", round, sched)
	if err := kit.NewNamespace(ctx, b.cs, ns); err != nil {
		c.err = err.Error()
		return c
	}
	dc := kit.DrakeHTTP()
	var d0 map[string]float64
	if dc != nil {
		d0, _ = kit.Scrape(dc, os.Getenv("DRAKE_METRICS_URL"))
	}
	res, err := kit.PlainPhase(ctx, b.cs, ns, sched, b.o.costPods, 64)
	if err != nil {
		c.err = err.Error()
	}
	c.PlainResult = res
	if u := b.schedURL(sched); u != "" {
		if m, err := kit.Scrape(b.admin, u+"/metrics"); err == nil {
			c.algoMs = meanMs(m, "scheduler_scheduling_algorithm_duration_seconds", "")
			c.bindMs = meanMs(m, "scheduler_framework_extension_point_duration_seconds", `extension_point="Bind"`)
		}
	}
	if dc != nil {
		d1, _ := kit.Scrape(dc, os.Getenv("DRAKE_METRICS_URL"))
		c.drakeMs, c.drakeCalls = map[string]float64{}, map[string]float64{}
		for _, v := range []string{"filter", "prioritize", "bind"} {
			sk := `drake_request_duration_seconds_sum{verb="` + v + `"}`
			ck := `drake_request_duration_seconds_count{verb="` + v + `"}`
			if n := d1[ck] - d0[ck]; n > 0 {
				c.drakeCalls[v] = n
				c.drakeMs[v] = 1000 * (d1[sk] - d0[sk]) / n
			}
		}
	}
	if err := gangbench.DeleteNamespace(b.cs, ns); err != nil && c.err == "" {
		c.err = err.Error()
	}
	return c
}

// schedURL: the https://127.0.0.1:PORT of a scheduler process (its
// --secure-port in the recorded command line).
func (b *bench) schedURL(name string) string {
	raw, err := os.ReadFile(b.o.clusterDir + "/pids/" + name + ".cmd")
	if err != nil {
		return ""
	}
	for _, a := range strings.Split(string(raw), "\x00") {
		if p, ok := strings.CutPrefix(a, "--secure-port="); ok {
			return "https://127.0.0.1:" + p
		}
	}
	return ""
}

// meanMs: sum/count of a histogram over the series whose labels contain
// match, in ms.
func meanMs(m map[string]float64, name, match string) float64 {
	var s, n float64
	for k, v := range m {
		if !strings.Contains(k, match) {
			continue
		}
		switch {
		case strings.HasPrefix(k, name+"_sum"):
			s += v
		case strings.HasPrefix(k, name+"_count"):
			n += v
		}
	}
	if n == 0 {
		return -1
	}
	return 1000 * s / n
}
