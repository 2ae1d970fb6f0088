package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestDemandCountsWhatOverlapsBeyondTheCluster(t *testing.T) {
	jobs := []simJob{{Submit: 0, Duration: 10, GPUs: 8}, {Submit: 5, Duration: 10, GPUs: 8}}
	peak, over := demand(jobs, 8)
	if peak != 2 {
		t.Fatalf("peak %v, want 2", peak)
	}
	if math.Abs(over-40.0/160) > 1e-12 { // 8 GPUs beyond the cluster for 5 s of 160 GPU-s
		t.Fatalf("over %v, want 0.25", over)
	}
	if p, o := demand(jobs[:1], 8); p != 1 || o != 0 {
		t.Fatalf("one job: %v %v", p, o)
	}
}

func TestChooseTakesAQueueingWindowWithTheLongestShortJob(t *testing.T) {
	c := clusterShape{nodes: 1, gpus: 8}
	jobs := []simJob{
		{Submit: 0, Duration: 100, GPUs: 8},   // 0: alone, no queue with 1
		{Submit: 200, Duration: 100, GPUs: 8}, // 1
		{Submit: 210, Duration: 20, GPUs: 8},  // 2: queues behind 1, but short
		{Submit: 400, Duration: 300, GPUs: 8}, // 3
		{Submit: 401, Duration: 200, GPUs: 8}, // 4: queues behind 3
		{Submit: 900, Duration: 50, GPUs: 16}, // 5: larger than the cluster
	}
	w, err := choose(jobs, c, windowOpts{jobs: 2, start: -1, minLoad: 1.5, target: 100})
	if err != nil {
		t.Fatal(err)
	}
	// windows 1-2 and 3-4 queue; 3-4's shortest (200 s) is the longer
	if w.start != 3 {
		t.Fatalf("start %d, want 3 (%s)", w.start, w.why)
	}
	// estimate max(work / GPUs = 500, longest 300, span 1) compressed to 100
	if math.Abs(w.compression-5) > 1e-9 || math.Abs(w.estimate-100) > 1e-9 {
		t.Fatalf("compression %v estimate %v", w.compression, w.estimate)
	}
	if _, err := choose(jobs, c, windowOpts{jobs: 2, start: -1, minLoad: 3, target: 100}); err == nil {
		t.Fatal("no window asks for 3x the cluster, yet one was chosen")
	}
	given, err := choose(jobs, c, windowOpts{jobs: 2, start: 0, compression: 2, minLoad: 1.5, target: 100})
	if err != nil || given.start != 0 || given.compression != 2 {
		t.Fatalf("--start/--compression not taken: %+v %v", given, err)
	}
}

func TestTheWindowIsWrittenCompressedFromZero(t *testing.T) {
	jobs := []simJob{{ID: "a", Submit: 100, Duration: 1000, GPUs: 8}, {ID: "b,c", Submit: 130, Duration: 4, GPUs: 1}}
	p := filepath.Join(t.TempDir(), "w.csv")
	if err := writeTrace(p, "itp", jobs, window{start: 0, n: 2, compression: 10}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := "job_id,submission_time,duration,num_gpu\na,0,100,8\nb_c,3,1,1\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTheSurveySummarisesDrakeOverDragonAndNamesTheSizeMix(t *testing.T) {
	rows := []surveyRow{{drake: 90, dragon: 100}, {drake: 100, dragon: 100}, {drake: 80, dragon: 100}, {drake: 1, dragon: 0}}
	n, med, least, most, under := summarise(rows)
	if n != 3 || med != 0.9 || least != 0.8 || most != 1 || under != 2 {
		t.Fatalf("summarise: n %d median %v least %v largest %v at or below 0.9 %d; want 3 0.9 0.8 1 2", n, med, least, most, under)
	}
	if got := sizeMix([]simJob{{GPUs: 16}, {GPUs: 8}, {GPUs: 8}, {GPUs: 1}}); got != "1x1 8x2 16x1" {
		t.Fatalf("sizeMix: %q", got)
	}
}

func TestChooseTakesTheCandidateWhoseShortestJobRunsLongest(t *testing.T) {
	c := clusterShape{nodes: 1, gpus: 8}
	// four jobs of 8 GPUs, all at once: any two ask for 2x the GPUs
	jobs := []simJob{{GPUs: 8, Duration: 10}, {GPUs: 8, Duration: 100}, {GPUs: 8, Duration: 50}, {GPUs: 8, Duration: 60}}
	o := windowOpts{jobs: 2, start: -1, minLoad: 1.5, target: 100}
	ws, err := candidates(jobs, c, o)
	if err != nil || len(ws) != 3 {
		t.Fatalf("candidates: %d, %v; want 3", len(ws), err)
	}
	w, err := choose(jobs, c, o)
	if err != nil || w.start != 2 {
		t.Fatalf("choose: start %d, %v; want 2 (its shortest, 50 s, runs 45 s at compression 1.1)", w.start, err)
	}
}
