/*
 * optimus.c - Optimus' greedy marginal-gain allocation (see optimus.h).
 */
#include "gang/optimus.h"

#include <stdlib.h>

/* The gain of one more replica for j, given the GPUs left when it is
 * computed (optimus.py: 0 at the maximum or with no GPU left). */
static double gain_of(const struct drake_optimus_job *j, int64_t left)
{
	int r = j->replicas;
	if (r + 1 > j->max_replicas || left < 1)
		return 0;
	return (j->step[r - 1] - j->step[r]) * j->remaining;
}

drake_err drake_optimus_allocate(struct drake_optimus_job *jobs, size_t n, int64_t gpus)
{
	if (n > DRAKE_OPTIMUS_MAX_JOBS)
		return DRAKE_ELIMIT;
	for (size_t i = 0; i < n; i++)
		if (jobs[i].max_replicas < 1 || !jobs[i].step || !(jobs[i].remaining >= 0))
			return DRAKE_EINVAL;
	double *gain = malloc((n + 1) * sizeof(*gain));
	if (!gain)
		return DRAKE_ENOMEM;
	int64_t left = gpus;
	for (size_t i = 0; i < n; i++) {
		jobs[i].replicas = 0;
		gain[i] = 0;
		if (left < 1)
			continue;
		jobs[i].replicas = 1;
		left--;
		gain[i] = gain_of(&jobs[i], left);
	}
	while (left > 0) {
		size_t best = n;
		for (size_t i = 0; i < n; i++)
			if (gain[i] > 0 && (best == n || gain[i] > gain[best]))
				best = i;
		if (best == n)
			break;
		jobs[best].replicas++;
		gain[best] = gain_of(&jobs[best], left);
		left--;
	}
	free(gain);
	return DRAKE_OK;
}
