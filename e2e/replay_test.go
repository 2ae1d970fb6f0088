package e2e

// The proof that the cluster's decisions are the round's: drake
// serve writes every admission round's inputs and outputs to its
// --decision-log while a mixed batch runs (a rigid gang that starves and
// takes workers from an elastic job, a worker of the running gang deleted
// and repaired, the elastic job growing back once the gang is done), then
// `drake sim --replay` decides every logged round again from its inputs
// with the round's own code: no round may differ. Once with drake's rules,
// once with DRAGON's (--policy dragon).

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// logKinds counts the actions of each kind in a decision log.
func logKinds(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("decision log: %v", err)
	}
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Out struct {
				Actions []struct {
					Kind string `json:"kind"`
				} `json:"actions"`
			} `json:"out"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue // a line being written; the replay judges lines
		}
		for _, a := range line.Out.Actions {
			kinds[a.Kind]++
		}
	}
	return kinds
}

// setenv sets k for the rest of the test and restores it after.
func setenv(t *testing.T, k, v string) {
	old, had := os.LookupEnv(k)
	os.Setenv(k, v)
	t.Cleanup(func() {
		if had {
			os.Setenv(k, old)
		} else {
			os.Unsetenv(k)
		}
	})
}

// readHead is a file's first line.
func readHead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}

func TestDecisionLogReplaysWithoutDifference(t *testing.T) {
	e := withReconciler(t)
	// drake's rules, then DRAGON's (--policy dragon) in the same round
	for _, policy := range []string{"drake", "dragon"} {
		t.Run(policy, func(t *testing.T) { replayBatch(t, e, policy) })
	}
}

func replayBatch(t *testing.T, e *env, policy string) {
	nodes := e.nodeList(t)
	if len(nodes) < 2 {
		t.Skip("needs 2 nodes")
	}
	ns := e.namespace(t)
	// drake restarted as it was once the env is restored (cleanups run
	// last in, first out)
	t.Cleanup(func() { e.drakeCtl(t, "restart") })
	logPath := decisionLogPath(t, ns)
	setenv(t, "DRAKE_DECISION_LOG", logPath)
	setenv(t, "DRAKE_POLICY", policy)
	e.drakeCtl(t, "restart")
	waitGPUsIdle(t, e)

	// Workers of half a node's GPUs: the elastic job a fills every such
	// slot; the gang g (min = max = 2) then starves and takes two of them.
	g0 := nodes[0].Status.Allocatable["nvidia.com/gpu"]
	gpus := int(g0.Value()) / 2
	if gpus < 1 {
		t.Skip("needs nodes with 2 GPUs or more")
	}
	slots := gpuSlots(t, e, gpus)
	if slots < 4 {
		t.Skipf("needs 4 worker slots of %d GPUs; the cluster holds %d", gpus, slots)
	}
	createTFJob(t, ns, "a", elasticJob(slots, 1, slots, gpus, ""))
	poll(t, 60*time.Second, "a at max", func() (bool, error) { return liveWorkers(t, e, ns, "a") == slots, nil })
	createTFJob(t, ns, "g", elasticJob(2, 2, 2, gpus, "25s"))
	e.jobEvent(t, ns, "a", "ScaledDown", 60*time.Second)
	poll(t, 60*time.Second, "g running", func() (bool, error) { return liveWorkers(t, e, ns, "g") == 2, nil })

	// a worker of the running gang is deleted: drake puts its replacement
	// back into the running wave
	victim := ""
	for _, p := range jobPods(t, e, ns, "g") {
		if strings.Contains(p.Name, "-worker-1") {
			victim = p.Name
		}
	}
	if err := e.client.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", victim, err)
	}
	poll(t, 60*time.Second, "a repair logged", func() (bool, error) { return logKinds(t, logPath)["repair"] > 0, nil })
	// g ends; a grows back into the room
	poll(t, 90*time.Second, "a grown back", func() (bool, error) { return logKinds(t, logPath)["grow"] > 0, nil })

	if !strings.Contains(readHead(t, logPath), `"policy":"`+policy+`"`) {
		t.Errorf("the log's first round is not decided by %s's rules", policy)
	}
	kinds := logKinds(t, logPath)
	t.Logf("decision log %s: actions %v", logPath, kinds)
	for _, k := range []string{"admit", "shrink", "repair", "grow"} {
		if kinds[k] == 0 {
			t.Errorf("the log holds no %s action; the batch should have made one", k)
		}
	}
	replayDecisionLog(t, logPath)
}

// decisionLogPath is the file for namespace ns's decision log (the
// caller sets DRAKE_DECISION_LOG to it and restarts drake).
func decisionLogPath(t *testing.T, ns string) string {
	t.Helper()
	logDir := filepath.Join(os.Getenv("DRAKE_CLUSTER_DIR"), "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(logDir, "decision-"+ns+".log")
}

// replayDecisionLog decides every round of the log again with `drake sim
// --replay`: none may differ, and some must be replayed.
func replayDecisionLog(t *testing.T, logPath string) {
	t.Helper()
	// E2E_REPLAY_DRAKE: a different drake for the replay (to see this test
	// fail against a round changed on the replay's side only)
	bin := os.Getenv("E2E_REPLAY_DRAKE")
	if bin == "" {
		bin = os.Getenv("DRAKE_BIN")
	}
	out, err := exec.Command(bin, "sim", "--replay", logPath).CombinedOutput()
	t.Logf("drake sim --replay:\n%s", out)
	m := regexp.MustCompile(`(\d+) rounds read, (\d+) replayed, (\d+) differing, (\d+) skipped`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no summary in drake sim --replay's output")
	}
	if err != nil || string(m[3]) != "0" {
		t.Errorf("drake sim --replay: %v, %s rounds differ; want none", err, m[3])
	}
	if string(m[2]) == "0" {
		t.Errorf("no round replayed")
	}
	// only a partial last line may be skipped (no shares in this batch)
	if s := string(m[4]); s != "0" && s != "1" {
		t.Errorf("%s lines skipped; want at most the partial last", s)
	}
}
