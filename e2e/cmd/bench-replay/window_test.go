package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// flagDefault: the default drake's flag table in a C source gives flag
// name, in the table's units (a duration in seconds).
func flagDefault(t *testing.T, src, name string) float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "cmd", src))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\{"` + regexp.QuoteMeta(name) + `",\s*[^,]+,\s*(FLAG_\w+),\s*[^,]+,\s*"([^"]*)"`)
	m := re.FindSubmatch(b)
	if m == nil {
		t.Fatalf("cmd/%s: no flag %s", src, name)
	}
	v := string(m[2])
	if string(m[1]) == "FLAG_DURATION" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("cmd/%s: %s default %q: %v", src, name, v, err)
		}
		return d.Seconds()
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("cmd/%s: %s default %q: %v", src, name, v, err)
	}
	return x
}

// Every policy runs its own defaults in the trace's time: the times
// bench-replay compresses are drake serve's defaults as its flag tables
// give them (a copy here once said 7200 GPU-s where drake serve's
// --service-threshold is 14400, and every cluster run ran that).
func TestTheCompressedSettingsAreDrakeServesDefaults(t *testing.T) {
	for _, c := range []struct {
		src, flag string
		v         float64
	}{
		{"scale_flags.c", "starve-after", starveAfter},
		{"scale_flags.c", "idle-after", idleAfter},
		{"scale_flags.c", "service-threshold", serviceThreshold},
		{"scale_flags.c", "age-after", ageAfter},
		{"serve_flags.c", "las-interval", lasInterval},
		{"serve_flags.c", "las-threshold", lasThreshold},
		{"sim.c", "tiresias-interval", lasInterval},
		{"sim.c", "tiresias-threshold", lasThreshold},
	} {
		if got := flagDefault(t, c.src, c.flag); got != c.v {
			t.Errorf("cmd/%s --%s defaults to %v; bench-replay compresses %v", c.src, c.flag, got, c.v)
		}
	}
}

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
