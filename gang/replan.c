/*
 * replan.c - one member's new node (see replan.h).
 */
#include "gang/replan.h"

#include <string.h>

int drake_replan_pick(const struct drake_cluster *c, const struct drake_res *req,
                      const char *const *candidates, const int *members, size_t n)
{
	int best = -1;
	double best_left = 0;
	for (size_t i = 0; i < n; i++) {
		int k = drake_cluster_find(c, candidates[i]);
		struct drake_res free_, left;
		if (k < 0 || !c->nodes[k].schedulable)
			continue;
		drake_cluster_free(c, (size_t)k, &free_);
		if (!drake_res_fits(req, &free_))
			continue;
		left = free_;
		drake_res_sub(&left, req);
		double l = drake_res_leftover(&left, &c->nodes[k].alloc);
		if (best < 0 || members[i] > members[best] ||
		    (members[i] == members[best] &&
		     (l < best_left ||
		      (l == best_left && strcmp(candidates[i], candidates[best]) < 0)))) {
			best = (int)i;
			best_left = l;
		}
	}
	return best;
}
