/*
 * history.c - the mean residual service of finished jobs (see history.h).
 */
#include "gang/history.h"

#include <math.h>
#include <stdlib.h>

double drake_history_residual(const struct drake_history *h, double s, double *next)
{
	if (next)
		*next = INFINITY;
	if (!h || !h->service || h->n < DRAKE_HISTORY_MIN || !(s >= 0))
		return -1;
	double sum = 0, least = INFINITY;
	size_t k = 0;
	for (size_t i = 0; i < h->n; i++) {
		double x = h->service[i];
		if (!(x > s + DRAKE_HISTORY_EPS) || !isfinite(x))
			continue;
		sum += x - s;
		k++;
		if (x < least)
			least = x;
	}
	if (k < DRAKE_HISTORY_TAIL)
		return -1;
	if (next)
		*next = least;
	return sum / (double)k;
}

void drake_history_put(struct drake_history_ring *r, double service)
{
	r->service[r->at] = service;
	r->at = (r->at + 1) % DRAKE_HISTORY_MAX;
	if (r->n < DRAKE_HISTORY_MAX)
		r->n++;
}

struct drake_history drake_history_of(const struct drake_history_ring *r)
{
	return (struct drake_history){r->service, r->n};
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double drake_history_reaches(const struct drake_history *h, double s, double want)
{
	if (drake_history_residual(h, s, NULL) < 0)
		return INFINITY;
	double v[DRAKE_HISTORY_MAX] = {0};
	size_t m = 0;
	for (size_t i = 0; i < h->n && i < DRAKE_HISTORY_MAX; i++)
		if (h->service[i] > s + DRAKE_HISTORY_EPS && isfinite(h->service[i]))
			v[m++] = h->service[i];
	qsort(v, m, sizeof(v[0]), by_value);
	double above = 0; /* the sum of the samples not yet outlived */
	for (size_t k = 0; k < m; k++)
		above += v[k];
	for (size_t k = 0; k < m; k++) {
		/* outliving v[k] outlives every sample within EPS of it */
		size_t j = k;
		while (j < m && !(v[j] > v[k] + DRAKE_HISTORY_EPS))
			above -= v[j++];
		size_t left = m - j;
		if (left < DRAKE_HISTORY_TAIL || above / (double)left - v[k] >= want)
			return v[k];
		k = j - 1;
	}
	return INFINITY;
}
