/*
 * tiresias.c - 2D-LAS as the Pollux artifact ran it (see tiresias.h).
 */
#include "gang/tiresias.h"

#include <math.h>
#include <stdlib.h>

void drake_las_defaults(struct drake_las_opts *o)
{
	*o = (struct drake_las_opts){0};
	o->n_queues = 2;
	o->threshold[0] = 16 * 3600.0; /* tiresias.py: _queue_threshold */
	o->promote_knob = 0;           /* tiresias.py: _solve_starvation */
}

struct key {
	int queue;
	double entered;
	uint64_t seq;
	size_t idx;
};

static int by_priority(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	if (x->entered != y->entered)
		return x->entered < y->entered ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static bool opts_ok(const struct drake_las_opts *o)
{
	if (o->n_queues < 1 || o->n_queues > DRAKE_LAS_MAX_QUEUES || !(o->promote_knob >= 0) ||
	    !isfinite(o->promote_knob))
		return false;
	for (int q = 0; q + 1 < o->n_queues; q++)
		if (!(o->threshold[q] > 0) || !isfinite(o->threshold[q]) ||
		    (q > 0 && o->threshold[q] <= o->threshold[q - 1]))
			return false;
	return true;
}

/* Service and waiting up to now; demotion while running, promotion while
 * waiting, as tiresias.py's "Update queues" step. */
static void account(struct drake_las_job *j, double now, const struct drake_las_opts *o)
{
	struct drake_las_state *st = j->st;
	if (!st->seen) {
		*st = (struct drake_las_state){.seen = true, .entered = now, .last_check = now};
		return;
	}
	double dt = now - st->last_check;
	st->last_check = now;
	if (j->running) {
		st->executed += dt;
		st->total_executed += dt;
		double service = st->executed * (double)j->gpus;
		while (st->queue + 1 < o->n_queues && service >= o->threshold[st->queue]) {
			st->queue++;
			st->entered = now;
		}
		return;
	}
	if (st->executed > 0)
		st->pending_since_run += dt;
	if (o->promote_knob > 0 && st->queue > 0 && st->executed > 0 &&
	    st->pending_since_run >= st->executed * o->promote_knob) {
		st->executed = 0;
		st->pending_since_run = 0;
		st->queue = 0;
		st->entered = now;
	}
}

drake_err drake_las_decide(struct drake_las_job *jobs, size_t n, int64_t total_gpus, double now,
                           const struct drake_las_opts *o, size_t *order)
{
	if (!o || !opts_ok(o) || (n > 0 && !jobs) || !isfinite(now))
		return DRAKE_EINVAL;
	if (n > DRAKE_LAS_MAX_JOBS)
		return DRAKE_ELIMIT;
	for (size_t i = 0; i < n; i++)
		if (!jobs[i].st || jobs[i].gpus < 0 ||
		    (jobs[i].st->seen && now < jobs[i].st->last_check))
			return DRAKE_EINVAL;
	struct key *k = malloc((n + 1) * sizeof(*k));
	if (!k)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		account(&jobs[i], now, o);
		k[i] = (struct key){jobs[i].st->queue, jobs[i].st->entered, jobs[i].seq, i};
	}
	qsort(k, n, sizeof(*k), by_priority);
	int64_t left = total_gpus;
	for (size_t i = 0; i < n; i++) {
		struct drake_las_job *j = &jobs[k[i].idx];
		j->run = j->gpus <= left;
		if (j->run)
			left -= j->gpus;
		if (order)
			order[i] = k[i].idx;
	}
	free(k);
	return DRAKE_OK;
}

void drake_las_rebuild(struct drake_las_state *st, double service, int64_t gpus, double now,
                       const struct drake_las_opts *o)
{
	*st = (struct drake_las_state){.seen = true, .entered = now, .last_check = now};
	if (!(service > 0) || !isfinite(service))
		return;
	while (st->queue + 1 < o->n_queues && service >= o->threshold[st->queue])
		st->queue++;
	st->executed = gpus > 0 ? service / (double)gpus : 0;
	st->total_executed = st->executed;
}

drake_err drake_las_place(int64_t *free, size_t n, int64_t gpus, int *node)
{
	int64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += free[i] > 0 ? free[i] : 0;
	if (gpus < 0 || gpus > sum)
		return DRAKE_ESTATE;
	int64_t placed = 0;
	while (placed < gpus) {
		size_t best = 0;
		for (size_t i = 1; i < n; i++)
			if (free[i] > free[best])
				best = i;
		int64_t take = gpus - placed < free[best] ? gpus - placed : free[best];
		for (int64_t g = 0; g < take; g++)
			node[placed++] = (int)best;
		free[best] -= take;
	}
	return DRAKE_OK;
}
