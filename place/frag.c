/*
 * frag.c - the fragmentation measure of frag.h. The typical set is grouped
 * by GPU request, so a node's GPUs are read once per group and each shape
 * costs two comparisons: the measure runs for every candidate node of
 * every task the study places.
 */
#include "place/frag.h"

/* For a GPU request (k GPUs with need milli each): whether k GPUs have
 * room, and the idle milli on GPUs too full for it. */
static void gpu_side(const struct place_node *n, int32_t k, int32_t need, int *fits,
                     int64_t *too_full)
{
	int room = 0;
	int64_t frag = 0;
	for (int i = 0; i < n->n_gpu; i++) {
		if (n->gpu_left[i] >= need)
			room++;
		else
			frag += n->gpu_left[i];
	}
	*fits = room >= k;
	*too_full = frag;
}

int64_t place_frag_shape(const struct place_node *n, const struct place_task *m)
{
	int64_t idle = place_node_gpu_left(n);
	if (idle == 0 || m->num_gpu == 0 || !place_model_ok(n, m) || m->cpu_milli > n->cpu_left ||
	    m->mem_mib > n->mem_left)
		return idle;
	int fits;
	int64_t too_full;
	gpu_side(n, m->num_gpu, m->gpu_milli, &fits, &too_full);
	return fits ? too_full : idle;
}

int64_t place_frag(const struct place_node *n, const struct place_typical *ty)
{
	int64_t idle = place_node_gpu_left(n);
	if (idle == 0)
		return 0;
	int64_t sum = 0;
	for (size_t gi = 0; gi < ty->n_groups; gi++) {
		const struct place_group *g = &ty->g[gi];
		struct place_task probe = {0, 0, g->num_gpu, g->gpu_milli, g->models};
		int fits = 0;
		int64_t too_full = idle;
		if (g->num_gpu > 0 && place_model_ok(n, &probe))
			gpu_side(n, g->num_gpu, g->gpu_milli, &fits, &too_full);
		if (!fits) {
			sum += g->weight * idle;
			continue;
		}
		for (int32_t i = g->first; i < g->first + g->n; i++) {
			const struct place_shape *s = &ty->s[i];
			bool room = s->t.cpu_milli <= n->cpu_left && s->t.mem_mib <= n->mem_left;
			sum += s->count * (room ? too_full : idle);
		}
	}
	return sum;
}

int64_t place_frag_after(const struct place_node *n, const struct place_task *t, const int *gpus,
                         const struct place_typical *ty)
{
	struct place_node after = *n;
	place_charge(&after, t, gpus, 1);
	return place_frag(&after, ty);
}

int64_t place_stranded(const struct place_node *n, const struct place_typical *ty)
{
	int64_t idle = place_node_gpu_left(n);
	if (idle == 0 || ty->gpu_task_cpu <= 0 || ty->gpu_task_gpu <= 0)
		return 0;
	/* cpu_left <= PLACE_MAX_CPU_MILLI and gpu_task_gpu <= 16,000: no overflow */
	int64_t fed = n->cpu_left * ty->gpu_task_gpu / ty->gpu_task_cpu;
	return idle > fed ? idle - fed : 0;
}
