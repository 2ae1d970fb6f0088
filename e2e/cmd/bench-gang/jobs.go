package main

// The job list: the hard case. Mixed sizes (1 to 64 GPUs, some
// larger than any node), all arriving within --submit-window, so that the
// total demand (--demand times the cluster's GPUs) waits in a queue, and each
// running for a drawn time once its gang is whole. Every draw comes from the
// seed, so each arm replays the same list.

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
)

// jobSpec is one job: 1 PS (no GPU) and workers of gpw GPUs each, rigid
// (min-instances = replicas: the gang is every pod).
type jobSpec struct {
	name    string
	at      time.Duration // arrival, since the arm's start
	workers int
	gpw     int // GPUs per worker
	runFor  time.Duration
}

func (j jobSpec) gpus() int { return j.workers * j.gpw }
func (j jobSpec) pods() int { return 1 + j.workers }

// sizeWeight is one entry of --sizes: total GPUs and its relative weight.
type sizeWeight struct {
	gpus   int
	weight float64
}

func parseSizes(s string) ([]sizeWeight, error) {
	var out []sizeWeight
	for _, f := range strings.Split(s, ",") {
		g, w, ok := strings.Cut(strings.TrimSpace(f), ":")
		gi, err1 := strconv.Atoi(g)
		wf, err2 := strconv.ParseFloat(w, 64)
		if !ok || err1 != nil || err2 != nil || gi < 1 || wf <= 0 {
			return nil, fmt.Errorf("--sizes: %q is not GPUS:WEIGHT", f)
		}
		out = append(out, sizeWeight{gi, wf})
	}
	return out, nil
}

// shape splits a job of g GPUs into workers: up to a node's worth (maxGPW) on
// one worker, larger jobs in workers of maxGPW or maxGPW/2 GPUs (drawn), as
// data-parallel jobs are laid out on 8-GPU machines.
func shape(r *rand.Rand, g, maxGPW int) (workers, gpw int) {
	if g <= maxGPW {
		// 1 worker of g, or g/2 workers of 2, ... : one of the power-of-two
		// splits whose workers hold at least 1 GPU
		var opts []int
		for w := g; w >= 1; w /= 2 {
			if g%w == 0 {
				opts = append(opts, w)
			}
		}
		gpw = opts[r.IntN(len(opts))]
		return g / gpw, gpw
	}
	gpw = maxGPW
	if r.IntN(2) == 0 && maxGPW >= 2 {
		gpw = maxGPW / 2
	}
	return (g + gpw - 1) / gpw, gpw
}

// makeJobs draws jobs until their GPUs reach demand x clusterGPUs. Arrivals
// have exponential gaps scaled so the last one lands within the window.
func makeJobs(seed uint64, sizes []sizeWeight, clusterGPUs int, demand float64, maxGPW int,
	runMin, runMax, window time.Duration) []jobSpec {
	r := rand.New(rand.NewPCG(seed, 0x9a46))
	var total float64
	for _, s := range sizes {
		total += s.weight
	}
	var jobs []jobSpec
	sum := 0
	for float64(sum) < demand*float64(clusterGPUs) {
		x := r.Float64() * total
		g := sizes[len(sizes)-1].gpus
		for _, s := range sizes {
			if x < s.weight {
				g = s.gpus
				break
			}
			x -= s.weight
		}
		if g > clusterGPUs {
			continue // could never run
		}
		w, gpw := shape(r, g, maxGPW)
		run := runMin + time.Duration(r.Int64N(int64(runMax-runMin)+1))
		jobs = append(jobs, jobSpec{name: fmt.Sprintf("j%03d", len(jobs)), workers: w, gpw: gpw, runFor: run.Round(time.Second)})
		sum += w * gpw
	}
	// arrivals: exponential gaps, rescaled to end at the window
	gaps := make([]float64, len(jobs))
	var acc float64
	for i := range gaps {
		if i > 0 {
			acc += r.ExpFloat64()
		}
		gaps[i] = acc
	}
	for i := range jobs {
		if acc > 0 {
			jobs[i].at = time.Duration(gaps[i] / acc * float64(window))
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].at < jobs[b].at })
	return jobs
}

// describe: one line for the log.
func describe(jobs []jobSpec, clusterGPUs int) string {
	by := map[int]int{}
	gpus, pods, large := 0, 0, 0
	for _, j := range jobs {
		by[j.gpus()]++
		gpus += j.gpus()
		pods += j.pods()
		if j.gpus() > 8 {
			large++
		}
	}
	var ks []int
	for k := range by {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%dx%d", by[k], k))
	}
	return fmt.Sprintf("%d jobs, %d pods, %d GPUs = %.2fx the cluster's %d (%d jobs larger than an 8-GPU node); by GPUs: %s",
		len(jobs), pods, gpus, float64(gpus)/float64(clusterGPUs), clusterGPUs, large, strings.Join(parts, " "))
}
