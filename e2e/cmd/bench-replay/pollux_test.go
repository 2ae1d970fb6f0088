package main

import (
	"os"
	"strings"
	"testing"
)

// The measured tables through cgo, as the simulator reads them: four
// replicas of cifar10 packed on one node train faster than spread over
// two, and a job with no replica does nothing.
func TestAPolluxJobRunsAtItsMeasuredSpeedForWhereItsWorkersAre(t *testing.T) {
	apps, err := loadApps("../../../traces/pollux/apps", []string{"cifar10"})
	if err != nil {
		t.Fatal(err)
	}
	defer apps.release()
	packed, err := apps.rate("cifar10", 2048, 1000, []string{"a", "a", "a", "a"})
	if err != nil {
		t.Fatal(err)
	}
	spread, _ := apps.rate("cifar10", 2048, 1000, []string{"a", "b", "a", "b"})
	if !(packed > spread && spread > 0) {
		t.Fatalf("packed %v, spread %v: want packed > spread > 0", packed, spread)
	}
	if r, _ := apps.rate("cifar10", 2048, 1000, nil); r != 0 {
		t.Fatalf("no replica: rate %v", r)
	}
	if _, err := apps.rate("bert", 2048, 1000, []string{"a"}); err == nil {
		t.Fatal("an application not loaded: no error")
	}
}

// The workers reach the rate in replica order, whatever the map's.
func TestTheRateSeesWorkersInReplicaOrder(t *testing.T) {
	pods := map[string]*podView{}
	for i, n := range []string{"n2", "n0", "n1", "n0"} {
		pods["w"+string(rune('a'+i))] = &podView{role: "worker", node: n, index: 3 - i, bound: true, running: true}
	}
	var got []string
	jobState(pods, 0, 1, false, func(ps, w []string) float64 { got = w; return 1 })
	if strings.Join(got, ",") != "n0,n1,n0,n2" {
		t.Fatalf("workers' nodes %v, want by index n0,n1,n0,n2", got)
	}
}

// A Pollux window is written in Pollux's layout, its times compressed,
// and its work compressed by drake sim's flag.
func TestAPolluxWindowIsWrittenAsAPolluxTrace(t *testing.T) {
	jobs := []simJob{{ID: "cifar10-0", Submit: 100, Workers: 4, Application: "cifar10", BatchSize: 2048},
		{ID: "ncf-1", Submit: 300, Workers: 1, Application: "ncf", BatchSize: 32768}}
	w := window{start: 0, n: 2, compression: 10}
	p := t.TempDir() + "/w.csv"
	if err := writeTrace(p, "pollux", jobs, w); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := "name,time,application,num_replicas,batch_size\ncifar10-0,0,cifar10,4,2048\nncf-1,20,ncf,1,32768\n"
	if string(b) != want {
		t.Fatalf("got\n%s\nwant\n%s", b, want)
	}
	if f := workScaleFlags("pollux", w); len(f) != 4 || f[0] != "--pollux-work-scale" || f[1] != "0.10000000000000001" ||
		f[2] != "--tiresias-restart" || f[3] != "3.000000s" {
		t.Fatalf("flags %v", f)
	}
	if f := workScaleFlags("itp", w); f != nil {
		t.Fatalf("itp flags %v", f)
	}
	sim, las, scale := policySettings(w)
	if len(sim) != 12 || sim[1] != "6.000000s" || sim[3] != "5760.000000" || sim[4] != "--starve-after" ||
		sim[5] != "3.000000s" || sim[9] != "1440.000000" ||
		len(las) != 2 || las[0] != "DRAKE_LAS_INTERVAL=6.000000s" || las[1] != "DRAKE_LAS_THRESHOLD=5760.000000" ||
		len(scale) != 4 || scale[1] != "DRAKE_IDLE_AFTER=6.000000s" || scale[3] != "DRAKE_AGE_AFTER=60.000000s" {
		t.Fatalf("policy settings %v %v %v", sim, las, scale)
	}
}
