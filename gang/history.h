/*
 * history.h - what the jobs that finished ran, as a guess at what a running
 * job still has to run when it does not say (2D-Gittins' view: no job's
 * length is known, the distribution of finished jobs' is).
 *
 * A job that reports no progress is known by its attained service s, the
 * GPU-seconds it ran. Taking the attained service of the jobs that finished
 * as samples S_i of the service a job needs, its expected remaining service
 * is the mean residual
 *
 *     R(s) = mean over { i : S_i > s } of (S_i - s)
 *
 * and its expected remaining time R(s) / G at its G GPUs now. Between two
 * samples R falls as the job runs; it jumps when the job outlives a sample
 * (the short jobs it might have been are ruled out). R is known only with
 * DRAKE_HISTORY_MIN samples in all and DRAKE_HISTORY_TAIL of them above s:
 * a job that outlived nearly every finished job says little about its own
 * tail, and the caller falls back to its age (gang/speed.h).
 *
 * A sample counts as above s when it exceeds s by DRAKE_HISTORY_EPS
 * GPU-seconds, so a job whose service reaches a sample (at the time *next
 * names, up to rounding) has outlived it.
 *
 * Pure arithmetic over the caller's array, any order; no allocation.
 */
#ifndef DRAKE_GANG_HISTORY_H
#define DRAKE_GANG_HISTORY_H

#include <stddef.h>

#define DRAKE_HISTORY_MAX  256  /* finished jobs a controller (or the sim) keeps, latest */
#define DRAKE_HISTORY_MIN  16   /* samples before R is known at all */
#define DRAKE_HISTORY_TAIL 4    /* samples above s for R(s) to be known */
#define DRAKE_HISTORY_EPS  1e-3 /* GPU-seconds */

struct drake_history {
	const double *service; /* GPU-seconds each finished job ran, any order; may be NULL */
	size_t n;
};

/* The latest DRAKE_HISTORY_MAX samples, as a controller (or the sim) keeps
 * them; zeroed: empty. */
struct drake_history_ring {
	double service[DRAKE_HISTORY_MAX];
	size_t n, at;
};

/* Adds a finished job's service, in place of the oldest once full. */
void drake_history_put(struct drake_history_ring *r, double service);

/* The ring's samples as a history (borrowed). */
struct drake_history drake_history_of(const struct drake_history_ring *r);

/*
 * R(s) in GPU-seconds; negative when unknown (too few samples, or s < 0).
 * next (may be NULL): the least sample above s, the service at which R
 * jumps next; INFINITY when unknown.
 */
double drake_history_residual(const struct drake_history *h, double s, double *next);

/*
 * The least service above s at which R reaches want, or stops being known
 * (too few samples left above it): a sample the job outlives there, since
 * between samples R only falls. INFINITY when R is not known at s. Reads
 * the first DRAKE_HISTORY_MAX samples.
 */
double drake_history_reaches(const struct drake_history *h, double s, double want);

#endif
