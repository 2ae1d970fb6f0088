/*
 * reserve.c - the restricted shapes' claim on each GPU model (reserve.h).
 */
#include "place/reserve.h"

int64_t place_model_capacity(const struct place_node *nodes, const bool *known, size_t n,
                             int64_t cap[PLACE_MAX_MODELS])
{
	int64_t total = 0;
	for (int m = 0; m < PLACE_MAX_MODELS; m++)
		cap[m] = 0;
	for (size_t i = 0; i < n; i++) {
		if (known && !known[i])
			continue;
		int64_t g = (int64_t)nodes[i].n_gpu * PLACE_GPU_MILLI;
		total += g;
		if (nodes[i].model >= 0 && nodes[i].model < PLACE_MAX_MODELS)
			cap[nodes[i].model] += g;
	}
	return total;
}

void place_reserve_build(const struct place_typical *ty, const int64_t cap[PLACE_MAX_MODELS],
                         int64_t cap_total, int32_t out[PLACE_MAX_MODELS])
{
	/* In double, summed in group order: a count times a request could
	 * overflow int64, and a fixed order gives the same result every time. */
	double claim[PLACE_MAX_MODELS] = {0}, demand = 0;
	for (size_t gi = 0; gi < ty->n_groups; gi++)
		demand += (double)ty->g[gi].weight * ty->g[gi].num_gpu * ty->g[gi].gpu_milli;
	for (size_t gi = 0; demand > 0 && gi < ty->n_groups; gi++) {
		const struct place_group *g = &ty->g[gi];
		if (g->num_gpu == 0 || g->models == PLACE_ANY_MODEL)
			continue;
		int64_t allowed = 0;
		for (int m = 0; m < PLACE_MAX_MODELS; m++)
			if (g->models >> m & 1)
				allowed += cap[m];
		if (allowed <= 0)
			continue; /* no node of its models: it claims nothing here */
		double share = (double)g->weight * g->num_gpu * g->gpu_milli / demand *
		               ((double)cap_total / (double)allowed);
		for (int m = 0; m < PLACE_MAX_MODELS; m++)
			if (g->models >> m & 1)
				claim[m] += share;
	}
	for (int m = 0; m < PLACE_MAX_MODELS; m++) {
		double v = claim[m] * PLACE_GPU_MILLI + 0.5;
		out[m] = v >= PLACE_GPU_MILLI ? PLACE_GPU_MILLI : (int32_t)v;
	}
}
