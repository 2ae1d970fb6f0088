package main

// What a job tells drake of its progress on the cluster, as drake sim's
// jobs tell its policy (sim/sim.c, sim_running_view: a job reports its
// steps against its total). Once a second, for each job of a TFJob arm
// that has started and not finished, the driver posts its fraction of work
// done (progress.go) to drake's POST /v1/progress for the job's worker 0,
// the replica that is never given away: step and totalSteps out of
// progressSteps, and the fraction as an accuracy. It authenticates with the
// cluster's client certificate (drake serve --client-ca), so the body
// names the pod (docs/progress-and-migration-api.md). drake's policy then
// weighs a change by the job's expected remaining time from its progress,
// as it does in the simulator, not by its age alone.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"drake.invalid/e2e/internal/kit"
)

// progressSteps: a job's steps in all, as it reports them.
const progressSteps = 1000000

// progressReport: one report's body.
type progressReport struct {
	Namespace  string  `json:"namespace"`
	Pod        string  `json:"pod"`
	Step       int64   `json:"step"`
	TotalSteps int64   `json:"totalSteps"`
	Value      float64 `json:"value"`
	Metric     string  `json:"metric"`
}

// progressReporter posts reports to one drake and counts the answers.
type progressReporter struct {
	client *http.Client
	url    string
	mu     sync.Mutex
	sent   int
	failed int
	first  string // the first failure
}

// newProgressReporter: a reporter for the cluster's drake ($DRAKE_URL,
// the client certificate in $DRAKE_CERT_DIR).
func newProgressReporter() (*progressReporter, error) {
	url := os.Getenv("DRAKE_URL")
	if url == "" {
		return nil, fmt.Errorf("progress reports: DRAKE_URL is not set (source the cluster's env)")
	}
	c := kit.DrakeHTTP()
	if c == nil {
		return nil, fmt.Errorf("progress reports: no client certificate in DRAKE_CERT_DIR=%q", os.Getenv("DRAKE_CERT_DIR"))
	}
	return &progressReporter{client: c, url: url + "/v1/progress"}, nil
}

// reportBody: the report of ns/pod's job at fraction done (0 to 1).
func reportBody(ns, pod string, done float64) progressReport {
	if done < 0 {
		done = 0
	}
	if done > 1 {
		done = 1
	}
	return progressReport{Namespace: ns, Pod: pod, Step: int64(done * progressSteps), TotalSteps: progressSteps,
		Value: done, Metric: "accuracy"}
}

func (p *progressReporter) post(ctx context.Context, r progressReport) {
	body, _ := json.Marshal(r)
	err := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := p.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("%s/%s: %s %s", r.Namespace, r.Pod, resp.Status, bytes.TrimSpace(msg))
		}
		return nil
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		p.failed++
		if p.first == "" {
			p.first = err.Error()
		}
		return
	}
	if err == nil {
		p.sent++
	}
}

// progressCounts: what became of an arm's reports.
type progressCounts struct {
	sent, failed int
	first        string // the first failure
}

func (p *progressReporter) counts() progressCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return progressCounts{p.sent, p.failed, p.first}
}

// summary: one line for the arm's output.
func (p *progressReporter) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := fmt.Sprintf("%d progress reports accepted", p.sent)
	if p.failed > 0 {
		s += fmt.Sprintf(", %d failed (first: %s)", p.failed, p.first)
	}
	return s
}

// due: the reports of r's running jobs at now, by job name: each started,
// unfinished job with its worker 0 bound.
func (r *armRun) due(now time.Time) []progressReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []progressReport
	for _, jr := range r.jobs {
		if jr.prog.started.IsZero() || !jr.finished.IsZero() || jr.prog.work <= 0 {
			continue
		}
		for name, v := range jr.pods {
			if v.role == "worker" && v.index == 0 && v.bound {
				jr.prog.advance(now)
				out = append(out, reportBody(r.ns, name, jr.prog.done/jr.prog.work))
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// reportProgress posts r's reports every interval until ctx ends.
func (r *armRun) reportProgress(ctx context.Context, p *progressReporter, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, rep := range r.due(now) {
				p.post(ctx, rep)
			}
		}
	}
}
