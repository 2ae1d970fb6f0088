/*
 * progress.c - one job's progress class from its metric samples (the rule
 * and its formulas are in progress.h).
 *
 * The fit is recomputed over the whole ring on every sample (at most 63
 * intervals, two passes over centred sums): exact, and nothing drifts the
 * way running sums with removals do.
 */
#include "migrate/progress.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void mig_progress_defaults(struct mig_progress_opts *o)
{
	o->alpha = 0.1;
	o->window = 10;
}

drake_err mig_progress_opts_check(const struct mig_progress_opts *o, char *why, size_t len)
{
	if (!(o->alpha > 0 && o->alpha <= 1))
		return drake_errorf(DRAKE_EINVAL, why, len, "alpha %g is outside (0, 1]", o->alpha);
	if (o->window < 1 || o->window > MIG_RING - 1)
		return drake_errorf(DRAKE_EINVAL, why, len, "window %d is outside [1, %d]",
		                    o->window, MIG_RING - 1);
	return DRAKE_OK;
}

void mig_progress_init(struct mig_progress *p, enum mig_kind kind, int64_t total_steps)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->total_steps = total_steps > 0 ? total_steps : 0;
	p->cls = MIG_CLASS_UNKNOWN;
}

const char *mig_class_name(enum mig_class c)
{
	switch (c) {
	case MIG_CLASS_UNKNOWN: return "unknown";
	case MIG_CLASS_PROGRESSING: return "progressing";
	case MIG_CLASS_SLOWING: return "slowing";
	case MIG_CLASS_CONVERGED: return "converged";
	}
	return "?";
}

bool mig_class_slow(enum mig_class c)
{
	return c == MIG_CLASS_SLOWING || c == MIG_CLASS_CONVERGED;
}

bool mig_progress_slow(const struct mig_progress *p)
{
	return p && mig_class_slow(p->cls);
}

/* The k-th sample, oldest first. */
static const struct mig_sample *at(const struct mig_progress *p, size_t k)
{
	return &p->ring[(p->head + k) % MIG_RING];
}

static double direction(const struct mig_progress *p)
{
	return p->kind == MIG_KIND_LOSS ? -1.0 : 1.0;
}

/* Mean rate from sample a to sample b (a before b), better direction. */
static double rate_between(const struct mig_progress *p, const struct mig_sample *a,
                           const struct mig_sample *b)
{
	return direction(p) * (b->value - a->value) / (b->t - a->t);
}

static drake_err check_sample(const struct mig_progress *p, const struct mig_sample *s, char *why,
                              size_t len)
{
	if (!isfinite(s->t) || !isfinite(s->value))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "t %g and value %g must be finite numbers", s->t, s->value);
	if (fabs(s->t) > MIG_TIME_MAX)
		return drake_errorf(DRAKE_EINVAL, why, len, "t %g is beyond +-%g s", s->t,
		                    MIG_TIME_MAX);
	if (fabs(s->value) > MIG_VALUE_MAX)
		return drake_errorf(DRAKE_EINVAL, why, len, "value %g is beyond +-%g", s->value,
		                    MIG_VALUE_MAX);
	if (s->step < 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "step %lld is negative",
		                    (long long)s->step);
	if (p->total_steps > 0 && s->step > p->total_steps)
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "step %lld is beyond the job's %lld steps", (long long)s->step,
		                    (long long)p->total_steps);
	if (p->n == 0)
		return DRAKE_OK;
	const struct mig_sample *last = at(p, p->n - 1);
	if (s->t < last->t)
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "t %g goes backwards (the latest sample is at %g)", s->t,
		                    last->t);
	if (s->t == last->t)
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "t %g does not advance past the latest sample's (a rate needs "
		                    "time to pass)",
		                    s->t);
	if (!isfinite(rate_between(p, last, s)))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "the change from %g to %g in %g s is too steep to rate",
		                    last->value, s->value, s->t - last->t);
	return DRAKE_OK;
}

static void push(struct mig_progress *p, const struct mig_sample *s)
{
	if (p->n < MIG_RING) {
		p->ring[(p->head + p->n) % MIG_RING] = *s;
		p->n++;
	} else {
		p->ring[p->head] = *s;
		p->head = (p->head + 1) % MIG_RING;
	}
	p->samples++;
}

/*
 * Least squares of ln r_i on (m_i - m_n) over the ring's positive rates:
 * b = Sxy / Sxx, a = ybar - b * xbar, both from centred sums; ln E is a
 * clamped to [min ln r_i, max ln r_i].
 */
static void fit(struct mig_progress *p)
{
	double x[MIG_RING], y[MIG_RING];
	size_t k = 0;
	const struct mig_sample *newest = at(p, p->n - 1), *before = at(p, p->n - 2);
	double m_n = 0.5 * (before->t + newest->t);
	for (size_t i = 1; i < p->n; i++) {
		const struct mig_sample *a = at(p, i - 1), *b = at(p, i);
		double r = rate_between(p, a, b);
		if (!(r > 0))
			continue;
		x[k] = 0.5 * (a->t + b->t) - m_n;
		y[k] = log(r);
		k++;
	}
	p->fitted = false;
	if (k < 2)
		return;
	double xbar = 0, ybar = 0, ymin = y[0], ymax = y[0];
	for (size_t i = 0; i < k; i++) {
		xbar += x[i];
		ybar += y[i];
		ymin = y[i] < ymin ? y[i] : ymin;
		ymax = y[i] > ymax ? y[i] : ymax;
	}
	xbar /= (double)k;
	ybar /= (double)k;
	double sxx = 0, sxy = 0;
	for (size_t i = 0; i < k; i++) {
		sxx += (x[i] - xbar) * (x[i] - xbar);
		sxy += (x[i] - xbar) * (y[i] - ybar);
	}
	if (!(sxx > 0))
		return; /* cannot happen with strictly increasing t; kept for safety */
	p->slope = sxy / sxx;
	double a = ybar - p->slope * xbar;
	p->log_expected = a < ymin ? ymin : a > ymax ? ymax : a;
	p->fitted = true;
	p->fits++;
}

/* r < alpha * E, in logs (E may be beyond what a double holds). */
static bool below_expected(const struct mig_progress *p, double r, double alpha)
{
	if (!(r > 0))
		return true;
	return p->fitted && log(r) < log(alpha) + p->log_expected;
}

static bool converged_condition(const struct mig_progress *p, double alpha)
{
	if (p->fitted && p->early > 0 && p->log_expected < log(alpha) + log(p->early))
		return true;
	return p->window_rate <= alpha * p->early;
}

static void classify(struct mig_progress *p, const struct mig_progress_opts *o, bool below)
{
	if (p->samples < 3) {
		p->cls = MIG_CLASS_UNKNOWN;
		return;
	}
	switch (p->cls) {
	case MIG_CLASS_UNKNOWN:
	case MIG_CLASS_PROGRESSING:
		p->cls = p->below >= o->window ? MIG_CLASS_SLOWING : MIG_CLASS_PROGRESSING;
		break;
	case MIG_CLASS_SLOWING:
		if (p->above >= MIG_PROGRESS_RECOVER)
			p->cls = MIG_CLASS_PROGRESSING;
		else if (below && converged_condition(p, o->alpha))
			p->cls = MIG_CLASS_CONVERGED;
		break;
	case MIG_CLASS_CONVERGED:
		if (p->above >= MIG_PROGRESS_RECOVER && p->window_rate > o->alpha * p->early)
			p->cls = MIG_CLASS_PROGRESSING;
		break;
	}
}

drake_err mig_progress_add(struct mig_progress *p, const struct mig_sample *s,
                           const struct mig_progress_opts *o, char *why, size_t len)
{
	struct mig_progress_opts def;
	if (!o) {
		mig_progress_defaults(&def);
		o = &def;
	}
	drake_err err = mig_progress_opts_check(o, why, len);
	if (err)
		return err;
	err = check_sample(p, s, why, len);
	if (err)
		return err;
	push(p, s);
	if (p->n < 2) {
		classify(p, o, false);
		return DRAKE_OK;
	}

	const struct mig_sample *newest = at(p, p->n - 1);
	p->rate = rate_between(p, at(p, p->n - 2), newest);
	fit(p);
	size_t w = (size_t)o->window < p->n - 1 ? (size_t)o->window : p->n - 1;
	p->window_rate = rate_between(p, at(p, p->n - 1 - w), newest);
	if (p->samples <= (int64_t)o->window + 1) {
		/* The ring still holds the first sample: samples <= window + 1 <= MIG_RING. */
		double e = rate_between(p, at(p, 0), newest);
		p->early = e > 0 ? e : 0;
	}

	bool below = below_expected(p, p->rate, o->alpha);
	bool above = p->fitted && p->rate > 0 && log(p->rate) >= p->log_expected;
	p->below = below ? p->below + (p->below < INT_MAX) : 0;
	p->above = above ? p->above + (p->above < INT_MAX) : 0;
	classify(p, o, below);
	return DRAKE_OK;
}

double mig_progress_fraction(const struct mig_progress *p)
{
	if (p->total_steps <= 0 || p->n == 0)
		return -1;
	double f = (double)at(p, p->n - 1)->step / (double)p->total_steps;
	return f < 0 ? 0 : f > 1 ? 1 : f;
}

double mig_progress_expected(const struct mig_progress *p)
{
	return p->fitted ? exp(p->log_expected) : -1;
}
