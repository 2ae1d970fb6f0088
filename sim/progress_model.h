/*
 * progress_model.h - learning curves for simulated jobs: what the metric a
 * job's replicas report looks like, so the simulator can feed migrate/'s
 * progress classes (migrate/progress.h) the way replicas feed the
 * controller's.
 *
 * Each job j gets an accuracy curve over f, the fraction of its work done
 * (pauses excluded), f in [0, 1]:
 *
 *     accuracy_j(f) = a_max * (1 - exp(-f / tau_j))
 *
 * With probability converge_frac the job converges early, tau_j uniform in
 * [tau_early_min, tau_early_max]; else it keeps improving, tau_j uniform in
 * [tau_late_min, tau_late_max]. The reported value is that, plus Gaussian
 * noise of standard deviation `noise` (0 by default: an evaluation over a
 * fixed set), rounded to `resolution` (an accuracy is a count over an
 * evaluation set: 1e-4 is 10,000 examples) and clamped to [0, 1]. The
 * remaining gain a_max * exp(-f / tau) drops below one resolution step at
 *
 *     f_flat = tau * ln(a_max / resolution)
 *
 * (0.02 <= tau <= 0.05: f_flat in [0.18, 0.46]); from there on the
 * reported value moves by at most one step, so the job's metric is flat
 * for the rest of its run. A late job (tau >= 0.3) has f_flat > 1: it
 * improves until it ends.
 *
 * A job's draw depends only on the seed and its index in the trace, never
 * on the policy or on the order of events, so the same job has the same
 * curve in every run of that seed; the noise comes from a generator of its
 * own, also seeded per job.
 *
 * Pure arithmetic, no allocation.
 */
#ifndef DRAKE_SIM_PROGRESS_MODEL_H
#define DRAKE_SIM_PROGRESS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct sim_curve_opts {
	bool on;              /* replicas report samples (--learning-curves) */
	double interval;      /* seconds of virtual time between samples */
	double converge_frac; /* share of jobs that converge early */
	double tau_early_min, tau_early_max;
	double tau_late_min, tau_late_max;
	double a_max;
	double resolution; /* reported values are multiples of this (0: exact) */
	double noise;      /* standard deviation of the reported value's noise */
};

/* One job's curve. */
struct sim_curve {
	double tau;
	double a_max;
	bool early; /* drawn from the early-converging range */
	uint64_t rng;
};

/* off, 60 s, 0.5, tau early [0.02, 0.05], late [0.3, 1], a_max 0.9,
 * resolution 1e-4, noise 0. */
void sim_curve_defaults(struct sim_curve_opts *o);

/* EINVAL with why when o is out of range: interval > 0, converge_frac in
 * [0, 1], 0 < min <= max for both tau ranges, a_max in (0, 1], resolution
 * in [0, 0.1], noise in [0, 1]. */
drake_err sim_curve_opts_check(const struct sim_curve_opts *o, char *why,
                               size_t len) DRAKE_MUST_CHECK;

/* Job `job`'s curve under seed. */
void sim_curve_draw(const struct sim_curve_opts *o, uint64_t seed, size_t job,
                    struct sim_curve *out);

/* The noiseless curve at f (clamped to [0, 1]). */
double sim_curve_value(const struct sim_curve *c, double f);

/* The value the job reports at f: noise from its generator (advanced),
 * rounding, clamping. */
double sim_curve_report(const struct sim_curve_opts *o, struct sim_curve *c, double f);

/* f_flat above: where the remaining gain falls below one resolution step
 * (INFINITY without a resolution). */
double sim_curve_flat_from(const struct sim_curve_opts *o, const struct sim_curve *c);

#endif
