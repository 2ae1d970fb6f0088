/*
 * node.c - the task and node model of place.h: checks, fit, the GPUs a
 * task takes, charging and giving back.
 */
#include "place/place.h"

#include <string.h>

int place_model_index(struct place_models *m, const char *name, bool add)
{
	size_t len = strlen(name);
	if (len == 0 || len >= PLACE_MODEL_MAX)
		return -1;
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->name[i], name) == 0)
			return i;
	if (!add || m->n >= PLACE_MAX_MODELS)
		return -1;
	memcpy(m->name[m->n], name, len + 1);
	return m->n++;
}

drake_err place_models_mask(struct place_models *m, const char *spec, uint64_t *mask, char *msg,
                            size_t mlen)
{
	uint64_t out = 0;
	bool named = false;
	const char *p = spec;
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len >= PLACE_MODEL_MAX)
			return drake_errorf(DRAKE_ELIMIT, msg, mlen,
			                    "GPU model \"%.*s...\" longer than %d characters", 16,
			                    p, PLACE_MODEL_MAX - 1);
		if (len > 0) {
			char name[PLACE_MODEL_MAX];
			memcpy(name, p, len);
			name[len] = '\0';
			int i = place_model_index(m, name, true);
			if (i < 0)
				return drake_errorf(DRAKE_ELIMIT, msg, mlen,
				                    "more than %d GPU models (at \"%s\")",
				                    PLACE_MAX_MODELS, name);
			out |= UINT64_C(1) << i;
			named = true;
		}
		p += len + (bar ? 1 : 0);
	}
	*mask = named ? out : PLACE_ANY_MODEL;
	return DRAKE_OK;
}

drake_err place_task_check(const struct place_task *t, char *msg, size_t mlen)
{
	if (t->cpu_milli < 0 || t->cpu_milli > PLACE_MAX_CPU_MILLI)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "cpu_milli %lld outside 0..%lld",
		                    (long long)t->cpu_milli, (long long)PLACE_MAX_CPU_MILLI);
	if (t->mem_mib < 0 || t->mem_mib > PLACE_MAX_MEM_MIB)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "memory_mib %lld outside 0..%lld",
		                    (long long)t->mem_mib, (long long)PLACE_MAX_MEM_MIB);
	if (t->num_gpu < 0 || t->num_gpu > PLACE_MAX_GPUS)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "num_gpu %d outside 0..%d",
		                    (int)t->num_gpu, PLACE_MAX_GPUS);
	if (t->num_gpu == 0 && t->gpu_milli != 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "gpu_milli %d without GPUs (num_gpu 0 wants gpu_milli 0)",
		                    (int)t->gpu_milli);
	if (t->num_gpu > 0 && (t->gpu_milli < 1 || t->gpu_milli > PLACE_GPU_MILLI))
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "gpu_milli %d outside 1..1000 (the share of each GPU)",
		                    (int)t->gpu_milli);
	if (t->num_gpu > 1 && t->gpu_milli != PLACE_GPU_MILLI)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "a share (gpu_milli %d) of more than one GPU (num_gpu %d): "
		                    "only single-GPU tasks share",
		                    (int)t->gpu_milli, (int)t->num_gpu);
	return DRAKE_OK;
}

int place_task_class(const struct place_task *t)
{
	if (t->num_gpu <= 0)
		return -1;
	return t->gpu_milli < PLACE_GPU_MILLI ? PLACE_CLASS_SHARE : t->num_gpu;
}

void place_node_init(struct place_node *n, int64_t cpu_milli, int64_t mem_mib, int gpus, int model)
{
	memset(n, 0, sizeof(*n));
	n->cpu_cap = n->cpu_left = cpu_milli;
	n->mem_cap = n->mem_left = mem_mib;
	n->n_gpu = gpus < 0 ? 0 : gpus > PLACE_MAX_GPUS ? PLACE_MAX_GPUS : gpus;
	n->model = model;
	for (int i = 0; i < n->n_gpu; i++)
		n->gpu_left[i] = PLACE_GPU_MILLI;
}

int64_t place_node_gpu_left(const struct place_node *n)
{
	int64_t s = 0;
	for (int i = 0; i < n->n_gpu; i++)
		s += n->gpu_left[i];
	return s;
}

int place_node_free_gpus(const struct place_node *n)
{
	int k = 0;
	for (int i = 0; i < n->n_gpu; i++)
		k += n->gpu_left[i] == PLACE_GPU_MILLI;
	return k;
}

bool place_model_ok(const struct place_node *n, const struct place_task *t)
{
	if (t->num_gpu == 0 || t->models == PLACE_ANY_MODEL)
		return true;
	return n->model >= 0 && n->model < PLACE_MAX_MODELS &&
	       (t->models & (UINT64_C(1) << n->model)) != 0;
}

bool place_fits(const struct place_node *n, const struct place_task *t)
{
	if (t->cpu_milli > n->cpu_left || t->mem_mib > n->mem_left || !place_model_ok(n, t))
		return false;
	if (t->num_gpu == 0)
		return true;
	int k = 0;
	for (int i = 0; i < n->n_gpu; i++)
		k += n->gpu_left[i] >= t->gpu_milli;
	return k >= t->num_gpu;
}

int place_share_best_fit(const struct place_node *n, const struct place_task *t)
{
	int best = -1;
	for (int i = 0; i < n->n_gpu; i++)
		if (n->gpu_left[i] >= t->gpu_milli &&
		    (best < 0 || n->gpu_left[i] < n->gpu_left[best]))
			best = i;
	return best;
}

int place_pick_gpus(const struct place_node *n, const struct place_task *t, int share_gpu,
                    int gpus[PLACE_MAX_GPUS])
{
	if (t->num_gpu <= 0)
		return 0;
	if (t->gpu_milli < PLACE_GPU_MILLI) {
		if (share_gpu < 0 || share_gpu >= n->n_gpu || n->gpu_left[share_gpu] < t->gpu_milli)
			return 0;
		gpus[0] = share_gpu;
		return 1;
	}
	int k = 0;
	for (int i = 0; i < n->n_gpu && k < t->num_gpu; i++)
		if (n->gpu_left[i] == PLACE_GPU_MILLI)
			gpus[k++] = i;
	return k == t->num_gpu ? k : 0;
}

static int64_t clamp64(int64_t v, int64_t hi)
{
	return v < 0 ? 0 : v > hi ? hi : v;
}

void place_charge(struct place_node *n, const struct place_task *t, const int *gpus, int sign)
{
	int s = sign < 0 ? -1 : 1;
	n->cpu_left = clamp64(n->cpu_left - s * t->cpu_milli, n->cpu_cap);
	n->mem_left = clamp64(n->mem_left - s * t->mem_mib, n->mem_cap);
	for (int i = 0; i < t->num_gpu; i++) {
		int g = gpus[i];
		if (g < 0 || g >= n->n_gpu)
			continue;
		n->gpu_left[g] =
		    (int32_t)clamp64((int64_t)n->gpu_left[g] - s * t->gpu_milli, PLACE_GPU_MILLI);
	}
	int c = place_task_class(t);
	if (c >= 0) {
		n->tasks[c] += s;
		if (n->tasks[c] < 0)
			n->tasks[c] = 0;
	}
}
