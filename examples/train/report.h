/*
 * report.h - the coordinator's progress reports to drake: every so often it
 * runs `drake progress --step N --value ACC --metric accuracy
 * --total-steps CAP` in the background, which reads DRAKE_PROGRESS_URL, the
 * projected token and drake's CA from the pod's environment and verifies
 * drake's certificate. Training never waits for a report (but for the last
 * one), and a failed report is logged, not fatal.
 *
 * Ownership: a struct reporter is the caller's; it owns at most one child
 * process, which reporter_finish waits for (REPORT_FINISH_WAIT_S at most).
 */
#ifndef DRAKE_TRAIN_REPORT_H
#define DRAKE_TRAIN_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a finishing replica waits for its last report (drake progress
 * gives up after its own --timeout, 10 s by default) before killing it. */
#define REPORT_FINISH_WAIT_S 15.0

struct reporter {
	const char *bin; /* "drake", or a path */
	double every;    /* seconds between reports */
	uint64_t total;  /* --total-steps, 0 for none */
	bool on;
	pid_t pid; /* the report in flight, or 0 */
	double last;
	unsigned sent, failed;
};

/* Reports only when url is set (drake's controller sets DRAKE_PROGRESS_URL
 * in TFJob pods). */
void reporter_init(struct reporter *r, const char *bin, const char *url, double every,
                   uint64_t total);

/* Collects a finished report; starts a new one when `every` has passed and
 * none is in flight. */
void reporter_tick(struct reporter *r, double now, uint64_t step, double accuracy);

/* Waits for the report in flight, then sends (step, accuracy) and waits for
 * it too: the last word before the replica exits. */
void reporter_finish(struct reporter *r, uint64_t step, double accuracy);

#endif
