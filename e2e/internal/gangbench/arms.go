// Package gangbench holds what the gang benchmarks in e2e/cmd (bench-gang,
// bench-replay) share: the arms (which kube-scheduler process serves which
// way of scheduling), the pods, PodGroups and TFJobs they submit, emptying
// the cluster between arms, percentiles, CSV files and the PNG of GPUs busy
// and held by partial gangs.
package gangbench

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"drake.invalid/e2e/internal/kit"
)

// Arm is one way of scheduling a job list.
type Arm struct {
	Name      string // drake, dragon, tiresias, in-tree, in-tree-packed, no-gang, volcano
	Process   string // the scheduler process that serves it
	Scheduler string // the pods' schedulerName
	// Group: how a pods arm gathers a job's pods into a gang
	Group Group
	// TFJobs: the arm submits TFJobs for drake's controller, not pods
	TFJobs bool
	// DrakeEnv: drake is restarted with these DRAKE_<FLAG> settings for the
	// arm (a TFJob arm's policy); nil: drake's defaults
	DrakeEnv []string
	// NeedsFlag: a drake serve flag the arm needs ("" none); the arm is
	// refused while `drake serve --help` does not list it
	NeedsFlag string
	// NeedsValue: a word the flag's line of `drake serve --help` must
	// hold (a policy's name); while it does not, the arm is left out of
	// the list with a note (Skipped), not refused, so one --arms works
	// with the binary before and after it gains the value
	NeedsValue string
}

// Arms: every arm the benchmarks know. dragon is drake serve --policy
// dragon (DRAGON's rules through drake's admission, barrier and backstop);
// volcano is Volcano's vc-scheduler with its gang plugin
// (hack/cluster-up.sh --volcano-scheduler); tiresias is drake serve
// --policy tiresias, run once drake's help lists that policy; in-tree-packed
// is in-tree gang scheduling under the gang-scheduler process's second
// profile, gang-packed-scheduler, which scores nodes by NodeResourcesFit's
// MostAllocated (bin packing; the stock profile spreads pods).
var Arms = []Arm{
	{Name: "drake", Process: "kube-scheduler", Scheduler: "default-scheduler", TFJobs: true},
	{Name: "dragon", Process: "kube-scheduler", Scheduler: "default-scheduler", TFJobs: true,
		DrakeEnv: []string{"DRAKE_POLICY=dragon"}, NeedsFlag: "--policy"},
	{Name: "tiresias", Process: "kube-scheduler", Scheduler: "default-scheduler", TFJobs: true,
		DrakeEnv: []string{"DRAKE_POLICY=tiresias"}, NeedsFlag: "--policy", NeedsValue: "tiresias"},
	{Name: "in-tree", Process: "gang-scheduler", Scheduler: "gang-scheduler", Group: InTreeGroup},
	{Name: "in-tree-packed", Process: "gang-scheduler", Scheduler: "gang-packed-scheduler", Group: InTreeGroup},
	{Name: "no-gang", Process: "plain-scheduler", Scheduler: "plain-scheduler"},
	{Name: "volcano", Process: "volcano-scheduler", Scheduler: "volcano", Group: VolcanoGroup},
}

// ParseArms: a comma-separated list of arm names, each one of allowed.
// drake (the binary, for NeedsFlag) may be "" when no arm needs a flag.
// An arm whose NeedsValue the binary's help does not hold is left out.
func ParseArms(list string, allowed []string, drake string) ([]Arm, error) {
	arms, _, err := ParseArmsSkipping(list, allowed, drake)
	return arms, err
}

// helpLine: the line of `drake serve --help` that lists flag, "" none.
func helpLine(drake, flag string) string {
	help, err := exec.Command(drake, "serve", "--help").CombinedOutput()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(help), "\n") {
		if strings.HasPrefix(l, "  "+flag+" ") {
			return l
		}
	}
	return ""
}

// ParseArmsSkipping is ParseArms that also names the arms it left out,
// each with why.
func ParseArmsSkipping(list string, allowed []string, drake string) ([]Arm, []string, error) {
	var out []Arm
	var skipped []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		var a *Arm
		for i := range Arms {
			if Arms[i].Name == n {
				a = &Arms[i]
			}
		}
		ok := false
		for _, x := range allowed {
			ok = ok || x == n
		}
		if a == nil || !ok {
			return nil, nil, fmt.Errorf("--arms: unknown arm %q (known: %s)", n, strings.Join(allowed, ", "))
		}
		if a.NeedsFlag != "" {
			line := helpLine(drake, a.NeedsFlag)
			if line == "" {
				return nil, nil, fmt.Errorf("--arms: arm %s needs drake serve %s, which %s does not have yet", n, a.NeedsFlag, drake)
			}
			if a.NeedsValue != "" && !strings.Contains(line, a.NeedsValue) {
				skipped = append(skipped, fmt.Sprintf("arm %s left out: %s serve --help does not list %s %s yet", n, drake, a.NeedsFlag, a.NeedsValue))
				continue
			}
		}
		out = append(out, *a)
	}
	return out, skipped, nil
}

// Activate leaves only the scheduler process name running of procs,
// so idle schedulers do not add their watch traffic and cycles to the arm
// measured.
func Activate(root, clusterDir string, procs []string, name string) error {
	for _, p := range procs {
		if p != name && kit.Running(clusterDir, p) {
			if err := kit.Proc(root, "stop", p); err != nil {
				return err
			}
		}
	}
	if !kit.Running(clusterDir, name) {
		return kit.Proc(root, "start", name)
	}
	return nil
}

// SchedulerProcs: the scheduler processes of the cluster that run now.
func SchedulerProcs(clusterDir string) []string {
	var out []string
	for _, p := range []string{"kube-scheduler", "gang-scheduler", "plain-scheduler", "plain-nobatch-scheduler",
		"simple-scheduler", "drake-filter-scheduler", "drake-prio-scheduler", "trivial-scheduler", "volcano-scheduler"} {
		if kit.Running(clusterDir, p) {
			out = append(out, p)
		}
	}
	return out
}

// armNeeds: what brings up each arm's scheduler process
var armNeeds = map[string]string{
	"gang-scheduler":    "hack/cluster-up.sh --gang-scheduler",
	"plain-scheduler":   "hack/cluster-up.sh --plain-scheduler",
	"volcano-scheduler": "hack/build-control-plane.sh volcano, then hack/cluster-up.sh --volcano-scheduler",
}

// CheckProcs: an error naming the first arm whose scheduler process is
// not among procs (the cluster's, SchedulerProcs), before any arm runs.
func CheckProcs(arms []Arm, procs []string) error {
	for _, a := range arms {
		if !slices.Contains(procs, a.Process) {
			how := armNeeds[a.Process]
			if how == "" {
				how = "hack/cluster-up.sh"
			}
			return fmt.Errorf("arm %s needs the scheduler process %s, which the cluster does not run (%s)", a.Name, a.Process, how)
		}
	}
	return nil
}

// DrakeBinary: the drake binary the cluster runs (DRAKE_BIN, else the
// release build under root).
func DrakeBinary(root, env string) string {
	if env != "" {
		return env
	}
	return filepath.Join(root, "build", "release", "drake")
}
