/*
 * speed_fit.c - a job's speed model from its observed rates (see
 * speed_fit.h).
 */
#include "gang/speed_fit.h"

#include <math.h>
#include <string.h>

/* The grid of the job's two terms. */
#define A_STEPS 40
#define A_STEP  0.05
#define B_STEPS 40
#define B_STEP  0.1
/* Weight of the pull of a and b towards 0 against one observation's
 * squared log error: small, so that two observations decide. */
#define PRIOR_WEIGHT 1e-3

static bool usable(const struct drake_speed_obs *o)
{
	return o->workers >= 1 && o->nodes >= 1 && o->rate > 0 && isfinite(o->rate);
}

void drake_speed_obs_put(struct drake_speed_obs *obs, int *n, struct drake_speed_obs o)
{
	int k = 0;
	while (k < *n && (obs[k].workers != o.workers || obs[k].nodes != o.nodes))
		k++;
	if (k == DRAKE_SPEED_MAX_OBS) {
		memmove(&obs[0], &obs[1], (DRAKE_SPEED_MAX_OBS - 1) * sizeof(o));
		k--;
	} else if (k == *n) {
		(*n)++;
	}
	obs[k] = o;
}

void drake_speed_fit(const struct drake_speed *prior, int gpus_per_worker,
                     const struct drake_speed_obs *obs, int n, struct drake_speed_fitted *out)
{
	*out = (struct drake_speed_fitted){.prior = *prior, .c = 1};
	if (n > DRAKE_SPEED_MAX_OBS)
		n = DRAKE_SPEED_MAX_OBS;
	/* per observation: ln(rate / T(w, n)), and w - 1, n - 1 */
	double base[DRAKE_SPEED_MAX_OBS];
	int w1[DRAKE_SPEED_MAX_OBS], n1[DRAKE_SPEED_MAX_OBS], k = 0;
	for (int i = 0; i < n; i++) {
		if (!usable(&obs[i]))
			continue;
		double t = drake_speed_rate(prior, obs[i].workers, gpus_per_worker, obs[i].nodes);
		base[k] = log(obs[i].rate / t);
		w1[k] = obs[i].workers - 1;
		n1[k] = obs[i].nodes - 1;
		out->sized |= k > 0 && (w1[k] != w1[0] || n1[k] != n1[0]);
		k++;
	}
	out->n_obs = k;
	if (k == 0)
		return;
	double sum = 0;
	for (int i = 0; i < k; i++)
		sum += base[i];
	out->c = exp(sum / k); /* one size: the prior's shape, scaled */
	if (!out->sized)
		return;
	/* the two terms tabled per grid value, so that the walk only adds */
	double la[A_STEPS + 1][DRAKE_SPEED_MAX_OBS], lb[B_STEPS + 1][DRAKE_SPEED_MAX_OBS];
	for (int i = 0; i < k; i++) {
		for (int ia = 0; ia <= A_STEPS; ia++)
			la[ia][i] = log(1 + ia * A_STEP * w1[i]);
		for (int ib = 0; ib <= B_STEPS; ib++)
			lb[ib][i] = log(1 + ib * B_STEP * n1[i]);
	}
	double best = INFINITY;
	for (int ia = 0; ia <= A_STEPS; ia++)
		for (int ib = 0; ib <= B_STEPS; ib++) {
			double d[DRAKE_SPEED_MAX_OBS], s = 0;
			for (int i = 0; i < k; i++) {
				d[i] = base[i] + la[ia][i] + lb[ib][i]; /* ln c for this one */
				s += d[i];
			}
			double lc = s / k, err = 0;
			for (int i = 0; i < k; i++)
				err += (d[i] - lc) * (d[i] - lc);
			double a = ia * A_STEP, b = ib * B_STEP;
			err += PRIOR_WEIGHT * (a * a + b * b);
			if (err < best) {
				best = err;
				out->a = a;
				out->b = b;
				out->c = exp(lc);
			}
		}
}

double drake_speed_fitted_rate(const struct drake_speed_fitted *f, int w, int gpus_per_worker,
                               int nodes)
{
	if (w <= 0)
		return 0;
	double t = f->c * drake_speed_rate(&f->prior, w, gpus_per_worker, nodes);
	return t / (1 + f->a * (w - 1)) / (1 + f->b * (nodes > 1 ? nodes - 1 : 0));
}
