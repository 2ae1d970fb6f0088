/*
 * pace.h - how many admitted gang pods may wait for kube-scheduler at once.
 *
 * kube-scheduler places one pod at a time, in queue order, and every wave
 * admission ungates joins that queue. A wave completes at the bind barrier
 * only when its last member gets there, so when far more pods are ungated
 * than kube-scheduler can place within the barrier's timeout, waves
 * interleave in the queue, time out and are retried with backoff: ungating
 * faster than kube-scheduler binds makes everything slower.
 *
 * Pacing keeps the admitted-but-unbound pods within what kube-scheduler
 * binds in a horizon (half the barrier timeout): budget = rate * horizon,
 * never below a floor. The rate is kube-scheduler's service rate, measured
 * only while admitted pods are waiting (binds per busy second), so a quiet
 * queue does not read as a slow scheduler and the budget cannot shrink
 * itself by starving the pipeline. Samples are taken over windows of busy
 * time and smoothed.
 *
 * Pure: the caller passes the clock and the counts.
 */
#ifndef DRAKE_GANG_PACE_H
#define DRAKE_GANG_PACE_H

#include <stdbool.h>

/* Busy seconds per rate sample. */
#define DRAKE_PACE_WINDOW_S 2.0

struct drake_pace {
	double rate;   /* pods bound per busy second, smoothed; 0 until measured */
	double busy_s; /* busy time in the current window */
	long binds;    /* pods bound in the current window */
	long unbound;  /* admitted pods waiting, at the last observation */
	double last_s; /* time of the last observation */
	bool started;
};

static inline void drake_pace_init(struct drake_pace *p)
{
	*p = (struct drake_pace){0};
}

/*
 * An observation at now_s (any monotonic clock, seconds): binds pods were
 * bound since the last one and unbound admitted pods still wait. The time
 * since the last observation counts as busy when pods were waiting then.
 */
void drake_pace_observe(struct drake_pace *p, double now_s, long binds, long unbound);

/*
 * The most admitted pods that should wait for kube-scheduler at once:
 * fixed when fixed > 0, else rate * horizon_s, at least floor.
 */
long drake_pace_budget(const struct drake_pace *p, double horizon_s, long floor, long fixed);

/*
 * Whether a wave of n pods may be ungated now, with unbound pods already
 * waiting: within the budget, or the only wave in flight (a wave larger
 * than the whole budget still starts, alone).
 */
static inline bool drake_pace_admits(long budget, long unbound, long n)
{
	return unbound <= 0 || unbound + n <= budget;
}

#endif
