/*
 * speed_fit.h - a running job's speed model fitted from what drake saw it
 * do, as Optimus and Pollux fit theirs: gang/speed.h's model T (the prior)
 * corrected by two terms of the job's own,
 *
 *   T_job(w, n) = c * T(w, n) / (1 + a * (w - 1)) / (1 + b * (n - 1))
 *
 * a, the scaling the job loses per worker beyond the prior's, and b, what
 * every node beyond the first costs it (an all-reduce that leaves the node
 * for the network; the prior charges only nodes beyond the fewest that
 * hold the workers). c, a and b are chosen to match the rates the job
 * reported at the sizes and spreads it ran at. A job seen at one size
 * keeps the prior's shape (a = b = 0), scaled to its rate: one rate says
 * nothing of the slope, and the prior is what lets a job try a size it has
 * not run at. Two sizes or spreads pin the slope: a job that ran slower
 * with more workers, or across more nodes, is fitted to do so, and the
 * growth rule (gang/scale.h) neither grows it there again nor keeps it
 * there.
 *
 * The fit minimises the squared error of ln T_job against the observed
 * rates plus a weak pull of a and b towards 0, over a grid (a in [0, 2] by
 * 0.05, b in [0, 4] by 0.1); c is the closed-form best for each (a, b).
 * Deterministic, no allocation, O(grid x observations).
 */
#ifndef DRAKE_GANG_SPEED_FIT_H
#define DRAKE_GANG_SPEED_FIT_H

#include <stdbool.h>

#include "gang/speed.h"

/* Observations of one job kept by the adapters (reconciler, sim). */
#define DRAKE_SPEED_MAX_OBS 8

/* The job ran at `workers` workers over `nodes` nodes (PS included) at
 * `rate`: progress per second in any unit the job keeps (a fraction of its
 * steps, steps), the same for all its observations. */
struct drake_speed_obs {
	int workers;
	int nodes;
	double rate;
};

/* Records o in obs[0..*n) (capacity DRAKE_SPEED_MAX_OBS): it replaces the
 * entry of the same size and spread, else is added, the oldest entry
 * dropped when they are full. */
void drake_speed_obs_put(struct drake_speed_obs *obs, int *n, struct drake_speed_obs o);

struct drake_speed_fitted {
	struct drake_speed prior;
	double c;   /* 1 without observations */
	double a;   /* scaling lost per worker beyond the prior's */
	double b;   /* cost of each node beyond the first */
	int n_obs;  /* observations it was fitted to (usable ones) */
	bool sized; /* they cover two sizes or spreads: a and b are the job's */
};

/*
 * Fits a job's model: obs[0..n) (rates <= 0, non-finite, or sizes < 1 are
 * ignored; at most DRAKE_SPEED_MAX_OBS are read) on prior.
 * gpus_per_worker as for drake_speed_rate.
 */
void drake_speed_fit(const struct drake_speed *prior, int gpus_per_worker,
                     const struct drake_speed_obs *obs, int n, struct drake_speed_fitted *out);

/* T_job(w, n); 0 for w <= 0. */
double drake_speed_fitted_rate(const struct drake_speed_fitted *f, int w, int gpus_per_worker,
                               int nodes);

#endif
