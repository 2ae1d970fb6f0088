package gangbench

import (
	"strings"
	"testing"
)

func TestParseArmsVolcano(t *testing.T) {
	all := []string{"drake", "dragon", "in-tree", "no-gang", "volcano"}
	got, err := ParseArms("volcano, in-tree", all, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "volcano" || got[1].Name != "in-tree" {
		t.Fatalf("arms %+v, want volcano then in-tree", got)
	}
	v := got[0]
	if v.Process != "volcano-scheduler" || v.Scheduler != "volcano" || v.Group != VolcanoGroup || v.TFJobs {
		t.Errorf("volcano arm %+v: want process volcano-scheduler, schedulerName volcano, Volcano PodGroups, pods", v)
	}
	if got[1].Group != InTreeGroup {
		t.Errorf("in-tree arm's group %v, want InTreeGroup", got[1].Group)
	}
	// a benchmark that does not allow volcano refuses it
	if _, err := ParseArms("volcano", []string{"drake", "in-tree", "no-gang"}, ""); err == nil || !strings.Contains(err.Error(), `"volcano"`) {
		t.Errorf("volcano not allowed: err %v", err)
	}
}

func TestCheckProcs(t *testing.T) {
	arms, err := ParseArms("in-tree,volcano", []string{"in-tree", "volcano"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckProcs(arms, []string{"kube-scheduler", "gang-scheduler", "volcano-scheduler"}); err != nil {
		t.Errorf("every process there: %v", err)
	}
	err = CheckProcs(arms, []string{"kube-scheduler", "gang-scheduler", "plain-scheduler"})
	if err == nil || !strings.Contains(err.Error(), "arm volcano") || !strings.Contains(err.Error(), "--volcano-scheduler") {
		t.Errorf("no volcano-scheduler: err %v", err)
	}
}
