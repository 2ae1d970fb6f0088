package gangbench

import (
	"os"
	"path/filepath"
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

// fakeDrake writes a script that prints help as drake serve --help would.
func fakeDrake(t *testing.T, policyLine string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "drake")
	body := "#!/bin/sh\ncat <<'X'\n  --gang                           gang mode\n" + policyLine + "\n                                   default: drake\nX\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheTiresiasArmRunsOnceDrakeServeListsThePolicy(t *testing.T) {
	allowed := []string{"drake", "dragon", "tiresias", "in-tree", "in-tree-packed"}
	before := fakeDrake(t, "  --policy string                  with --gang: drake, or dragon (DRAGON's rules)")
	arms, skipped, err := ParseArmsSkipping("drake,tiresias,dragon", allowed, before)
	if err != nil || len(arms) != 2 || arms[0].Name != "drake" || arms[1].Name != "dragon" || len(skipped) != 1 ||
		!strings.Contains(skipped[0], "tiresias") {
		t.Fatalf("before: arms %+v, skipped %v, err %v; want drake, dragon and tiresias left out", arms, skipped, err)
	}
	after := fakeDrake(t, "  --policy string                  with --gang: drake, dragon or tiresias")
	arms, skipped, err = ParseArmsSkipping("drake,tiresias", allowed, after)
	if err != nil || len(arms) != 2 || arms[1].Name != "tiresias" || len(skipped) != 0 {
		t.Fatalf("after: arms %+v, skipped %v, err %v; want drake, tiresias", arms, skipped, err)
	}
	if env := arms[1].DrakeEnv; len(env) != 1 || env[0] != "DRAKE_POLICY=tiresias" || !arms[1].TFJobs {
		t.Errorf("tiresias arm %+v: want TFJobs under DRAKE_POLICY=tiresias", arms[1])
	}
	// a binary without --policy at all refuses the arm, as it does dragon
	none := fakeDrake(t, "  --strict-fifo                    no backfill")
	if _, _, err := ParseArmsSkipping("tiresias", allowed, none); err == nil {
		t.Error("no --policy flag: tiresias accepted")
	}
}

func TestThePackedInTreeArmIsTheGangSchedulersSecondProfile(t *testing.T) {
	arms, err := ParseArms("in-tree-packed", []string{"in-tree-packed"}, "")
	if err != nil {
		t.Fatal(err)
	}
	a := arms[0]
	if a.Process != "gang-scheduler" || a.Scheduler != "gang-packed-scheduler" || a.Group != InTreeGroup || a.TFJobs {
		t.Errorf("in-tree-packed %+v: want process gang-scheduler, schedulerName gang-packed-scheduler, in-tree PodGroups", a)
	}
}
