package main

import (
	"strings"
	"testing"
)

func TestRatiosSayWhichTargetsAreMet(t *testing.T) {
	sim := func(drake, dragon float64) map[string]simFigures {
		return map[string]simFigures{
			"drake":  {"jobs": 40, "finished": 40, "mean_jct_s": drake},
			"dragon": {"jobs": 40, "finished": 40, "mean_jct_s": dragon},
		}
	}
	arm := func(name string, jct float64) armResult {
		return armResult{arm: name, jobs: 40, done: 40, meanJCT: jct}
	}
	cases := []struct {
		name string
		meds []armResult
		pred map[string]simFigures
		want []string
	}{
		{"the benchmark's window: in-tree beaten, DRAGON tied, the simulator followed",
			[]armResult{arm("drake", 148.9), arm("dragon", 150.0), arm("in-tree", 273.1)}, sim(146.6, 148.2),
			[]string{
				"drake mean JCT / in-tree = 0.55 (target <= 0.9: met)\n",
				"drake mean JCT / dragon = 0.99 (target <= 0.85: missed); drake sim: drake / dragon = 0.99; cluster / sim = 1.00 (target within 10 %: met)\n",
			}},
		{"a simulator that charges DRAGON too much",
			[]armResult{arm("drake", 64.0), arm("dragon", 63.1)}, sim(66.0, 87.9),
			[]string{"drake mean JCT / dragon = 1.01 (target <= 0.85: missed); drake sim: drake / dragon = 0.75; cluster / sim = 1.35 (target within 10 %: missed)\n"}},
		{"drake ahead on both sides",
			[]armResult{arm("drake", 80), arm("dragon", 100)}, sim(82, 100),
			[]string{"drake mean JCT / dragon = 0.80 (target <= 0.85: met); drake sim: drake / dragon = 0.82; cluster / sim = 0.98 (target within 10 %: met)\n"}},
		{"the cluster far ahead of the simulator is as far off as behind it",
			[]armResult{arm("drake", 80), arm("dragon", 100)}, sim(100, 100),
			[]string{"drake mean JCT / dragon = 0.80 (target <= 0.85: met); drake sim: drake / dragon = 1.00; cluster / sim = 0.80 (target within 10 %: missed)\n"}},
		{"no simulator figure when the simulator did not finish every job",
			[]armResult{arm("drake", 80), arm("dragon", 100)},
			map[string]simFigures{"drake": {"jobs": 40, "finished": 40, "mean_jct_s": 82}, "dragon": {"jobs": 40, "finished": 39, "mean_jct_s": 100}},
			[]string{"drake mean JCT / dragon = 0.80 (target <= 0.85: met)\n"}},
		{"an arm cut short has no ratio",
			[]armResult{arm("drake", 80), {arm: "dragon", jobs: 40, done: 12, meanJCT: 50}}, sim(82, 100),
			[]string{"cluster: dragon finished 12 of 40 jobs: no ratio\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			ratios(&b, c.meds, c.pred)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("want %q in:\n%s", w, b.String())
				}
			}
			if strings.Count(b.String(), "\n") != len(c.want) {
				t.Errorf("want %d lines, got:\n%s", len(c.want), b.String())
			}
		})
	}
}
