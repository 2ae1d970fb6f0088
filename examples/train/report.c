/*
 * report.c - runs `drake progress` for report.h. posix_spawnp, not a
 * library call: the drake binary already knows the token, the CA and the
 * endpoint's answers, and the trainer stays free of TLS.
 */
#include "examples/train/report.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

void reporter_init(struct reporter *r, const char *bin, const char *url, double every,
                   uint64_t total)
{
	*r = (struct reporter){.bin = bin, .every = every, .total = total};
	r->on = url && *url && bin && *bin;
	r->last = -1e18;
}

static void collect(struct reporter *r, bool wait)
{
	if (r->pid <= 0)
		return;
	int st;
	pid_t got;
	do
		got = waitpid(r->pid, &st, wait ? 0 : WNOHANG);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		return;
	r->pid = 0;
	if (got < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		r->failed++;
		/* drake progress printed why on stderr; training goes on */
		printf("report: drake progress failed (%s %d); training goes on\n",
		       got < 0         ? "wait"
		       : WIFEXITED(st) ? "exit"
		                       : "signal",
		       got < 0         ? errno
		       : WIFEXITED(st) ? WEXITSTATUS(st)
		                       : WTERMSIG(st));
		fflush(stdout);
	}
}

static void start(struct reporter *r, uint64_t step, double accuracy)
{
	char s[32], v[32], t[32];
	if (r->total && step > r->total)
		step = r->total; /* drake refuses a step beyond totalSteps */
	snprintf(s, sizeof(s), "%llu", (unsigned long long)step);
	snprintf(v, sizeof(v), "%.6f", accuracy);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)r->total);
	char *argv[] = {(char *)r->bin, "progress", "--step",        s, "--value", v,
	                "--metric",     "accuracy", "--total-steps", t, NULL};
	if (!r->total)
		argv[8] = NULL;
	fflush(stdout);
	int e = posix_spawnp(&r->pid, r->bin, NULL, NULL, argv, environ);
	if (e != 0) {
		r->pid = 0;
		r->failed++;
		printf("report: cannot run %s: %s; training goes on\n", r->bin, strerror(e));
		fflush(stdout);
		return;
	}
	r->sent++;
}

void reporter_tick(struct reporter *r, double now, uint64_t step, double accuracy)
{
	if (!r->on)
		return;
	collect(r, false);
	if (r->pid > 0 || now - r->last < r->every)
		return;
	r->last = now;
	start(r, step, accuracy);
}

/* Waits for the report in flight at most limit seconds, then kills it: a
 * report that hangs must not keep a finished replica from exiting. */
static void collect_within(struct reporter *r, double limit)
{
	const struct timespec tick = {0, 20 * 1000 * 1000};
	for (double waited = 0; r->pid > 0 && waited < limit; waited += 0.02) {
		collect(r, false);
		if (r->pid > 0)
			nanosleep(&tick, NULL);
	}
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		collect(r, true);
	}
}

void reporter_finish(struct reporter *r, uint64_t step, double accuracy)
{
	if (!r->on)
		return;
	collect_within(r, REPORT_FINISH_WAIT_S);
	start(r, step, accuracy);
	collect_within(r, REPORT_FINISH_WAIT_S);
}
