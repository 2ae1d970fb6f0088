/*
 * progress_model.c - the learning-curve model (formulas in
 * progress_model.h).
 */
#include "sim/progress_model.h"

#include <math.h>

void sim_curve_defaults(struct sim_curve_opts *o)
{
	o->on = false;
	o->interval = 60;
	o->converge_frac = 0.5;
	o->tau_early_min = 0.02;
	o->tau_early_max = 0.05;
	o->tau_late_min = 0.3;
	o->tau_late_max = 1.0;
	o->a_max = 0.9;
	o->resolution = 1e-4;
	o->noise = 0;
}

static bool range_ok(double lo, double hi)
{
	return lo > 0 && hi >= lo && isfinite(hi);
}

drake_err sim_curve_opts_check(const struct sim_curve_opts *o, char *why, size_t len)
{
	if (!(o->interval > 0) || !isfinite(o->interval))
		return drake_errorf(DRAKE_EINVAL, why, len, "progress interval %g must be > 0 s",
		                    o->interval);
	if (!(o->converge_frac >= 0 && o->converge_frac <= 1))
		return drake_errorf(DRAKE_EINVAL, why, len, "converge-frac %g is outside [0, 1]",
		                    o->converge_frac);
	if (!range_ok(o->tau_early_min, o->tau_early_max))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "tau-early range [%g, %g] needs 0 < min <= max",
		                    o->tau_early_min, o->tau_early_max);
	if (!range_ok(o->tau_late_min, o->tau_late_max))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "tau-late range [%g, %g] needs 0 < min <= max", o->tau_late_min,
		                    o->tau_late_max);
	if (!(o->a_max > 0 && o->a_max <= 1))
		return drake_errorf(DRAKE_EINVAL, why, len, "curve-max %g is outside (0, 1]",
		                    o->a_max);
	if (!(o->resolution >= 0 && o->resolution <= 0.1))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "curve-resolution %g is outside [0, 0.1]", o->resolution);
	if (!(o->noise >= 0 && o->noise <= 1))
		return drake_errorf(DRAKE_EINVAL, why, len, "curve-noise %g is outside [0, 1]",
		                    o->noise);
	return DRAKE_OK;
}

/* splitmix64, as sim.c's generator, on a state of the job's own. */
static uint64_t next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double uniform(uint64_t *x)
{
	return (double)(next(x) >> 11) * 0x1.0p-53;
}

void sim_curve_draw(const struct sim_curve_opts *o, uint64_t seed, size_t job,
                    struct sim_curve *out)
{
	/* A state per (seed, job), mixed so neighbouring jobs are unrelated. */
	uint64_t x = seed ^ 0x6a09e667f3bcc909ULL;
	next(&x);
	x ^= (uint64_t)job * 0xd1b54a32d192ed03ULL;
	next(&x);
	out->early = uniform(&x) < o->converge_frac;
	double u = uniform(&x);
	out->tau = out->early ? o->tau_early_min + u * (o->tau_early_max - o->tau_early_min)
	                      : o->tau_late_min + u * (o->tau_late_max - o->tau_late_min);
	out->a_max = o->a_max;
	out->rng = next(&x);
}

double sim_curve_value(const struct sim_curve *c, double f)
{
	f = f < 0 ? 0 : f > 1 ? 1 : f;
	return c->a_max * (1 - exp(-f / c->tau));
}

/* Standard normal (Box-Muller, one of the pair). */
static double gaussian(uint64_t *x)
{
	double u1 = uniform(x), u2 = uniform(x);
	return sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
}

double sim_curve_report(const struct sim_curve_opts *o, struct sim_curve *c, double f)
{
	double v = sim_curve_value(c, f);
	if (o->noise > 0)
		v += o->noise * gaussian(&c->rng);
	if (o->resolution > 0)
		v = round(v / o->resolution) * o->resolution;
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

double sim_curve_flat_from(const struct sim_curve_opts *o, const struct sim_curve *c)
{
	if (!(o->resolution > 0) || c->a_max <= o->resolution)
		return o->resolution > 0 ? 0 : INFINITY;
	return c->tau * log(c->a_max / o->resolution);
}
