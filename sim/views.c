/*
 * views.c - the glue every policy shares between the simulator and gang/:
 * running jobs as gang/ sees them, and gang/'s scale ops applied as sim
 * actions.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

drake_err sim_running_views(struct sim *s, struct drake_running_job **v, int **ids, size_t *n)
{
	const int *r = sim_running(s, n);
	*v = calloc(*n + 1, sizeof(**v));
	*ids = malloc((*n + 1) * sizeof(int));
	if (!*v || !*ids) {
		free(*v);
		free(*ids);
		*v = NULL;
		*ids = NULL;
		return DRAKE_ENOMEM;
	}
	memcpy(*ids, r, *n * sizeof(int));
	for (size_t i = 0; i < *n; i++)
		sim_running_view(s, r[i], &(*v)[i]);
	return DRAKE_OK;
}

static int cmp_slot_desc(const void *a, const void *b)
{
	const struct drake_scale_op *x = a, *y = b;
	if (x->job != y->job)
		return x->job - y->job;
	return y->slot - x->slot;
}

/* Per job, highest slot first, so swap-removal never moves a slot still to
 * be removed. */
drake_err sim_apply_removals(struct sim *s, const int *ids, struct drake_scale_op *ops,
                             size_t n_ops)
{
	if (n_ops > 1)
		qsort(ops, n_ops, sizeof(*ops), cmp_slot_desc);
	drake_err err = DRAKE_OK;
	for (size_t i = 0; i < n_ops; i++) {
		sim_remove_worker(s, ids[ops[i].job], ops[i].slot);
		if (i + 1 == n_ops || ops[i + 1].job != ops[i].job)
			if ((err = sim_rescaled(s, ids[ops[i].job], false)))
				return err;
	}
	return err;
}

/* Ops grouped by job, as gang/ returns them. */
drake_err sim_apply_additions(struct sim *s, const int *ids, const struct drake_scale_op *ops,
                              size_t n_ops)
{
	drake_err err = DRAKE_OK;
	for (size_t i = 0; i < n_ops; i++) {
		if ((err = sim_add_worker(s, ids[ops[i].job], ops[i].node)))
			return err;
		if (i + 1 == n_ops || ops[i + 1].job != ops[i].job)
			if ((err = sim_rescaled(s, ids[ops[i].job], true)))
				return err;
	}
	return err;
}
