package main

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckFailsOnWhatASmokeRunMustNotShow(t *testing.T) {
	ok := []armResult{
		{run: 1, arm: "drake", jobs: 6, done: 6, replayed: 300, reports: &progressCounts{sent: 90}},
		{run: 1, arm: "no-gang", jobs: 6, done: 6, partialLate: 40}, // partial gangs are no-gang's nature
	}
	if n, bad := checkResults(ok); len(bad) != 0 || n != 7 {
		t.Fatalf("a clean run: %d checks, failures %v", n, bad)
	}
	cases := map[string]armResult{
		"jobs done":         {run: 1, arm: "in-tree", jobs: 6, done: 5},
		"beyond the window": {run: 1, arm: "dragon", jobs: 6, done: 6, partialLate: 3},
		"1 differing":       {run: 1, arm: "drake", jobs: 6, done: 6, replayed: 300, differing: 1},
		"no round logged":   {run: 1, arm: "drake", jobs: 6, done: 6, replayErr: errors.New("x.jsonl: no round logged")},
		"cluster gone":      {run: 1, arm: "drake", jobs: 6, err: "cluster gone"},
		"1 refused (first: 404": {run: 1, arm: "drake", jobs: 6, done: 6,
			reports: &progressCounts{sent: 89, failed: 1, first: "404 Not Found"}},
		"0 progress reports accepted": {run: 1, arm: "dragon", jobs: 6, done: 6, reports: &progressCounts{}},
	}
	for want, r := range cases {
		_, bad := checkResults(append(append([]armResult(nil), ok...), r))
		if len(bad) != 1 || !strings.Contains(bad[0], want) {
			t.Errorf("%s: failures %v", want, bad)
		}
	}
}
