/*
 * score.c - the policies of score.h.
 */
#include "place/score.h"

#include <math.h>
#include <string.h>

#include "place/frag.h"
#include "place/reserve.h"

static const char *const names[PLACE_NPOLICIES] = {
    [PLACE_RANDOM] = "random",   [PLACE_BESTFIT] = "bestfit",       [PLACE_DOTPROD] = "dotprod",
    [PLACE_PACKING] = "packing", [PLACE_CLUSTERING] = "clustering", [PLACE_FGD] = "fgd",
    [PLACE_DRAKE] = "drake",
};

const char *place_policy_name(enum place_policy p)
{
	return p >= 0 && p < PLACE_NPOLICIES ? names[p] : "?";
}

int place_policy_parse(const char *name)
{
	for (int i = 0; i < PLACE_NPOLICIES; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t bestfit(const struct place_node *n, const struct place_task *t,
                       const struct place_ctx *c)
{
	int64_t mc = c->max_cpu_milli > 0 ? c->max_cpu_milli : 1;
	int64_t mg = c->max_gpu_milli > 0 ? c->max_gpu_milli : 1;
	int64_t cpu = n->cpu_left - t->cpu_milli;
	int64_t gpu = place_node_gpu_left(n) - place_task_gpu(t);
	/* 100 - ceil(100 x (0.5 cpu / mc + 0.5 gpu / mg)) */
	return 100 - ceil_div(50 * cpu * mg + 50 * gpu * mc, mc * mg);
}

static int64_t dotprod(const struct place_node *n, const struct place_task *t,
                       const struct place_ctx *c)
{
	double mc = c->max_cpu_milli > 0 ? (double)c->max_cpu_milli : 1;
	double mg = c->max_gpu_milli > 0 ? (double)c->max_gpu_milli : 1;
	double d = ((double)n->cpu_left / mc) * ((double)t->cpu_milli / mc) +
	           ((double)place_node_gpu_left(n) / mg) * ((double)place_task_gpu(t) / mg);
	return (int64_t)(100.0 * (1.0 - d / 2));
}

static int64_t packing(const struct place_node *n, const struct place_task *t)
{
	if (t->num_gpu == 0)
		return 0;
	int free = place_node_free_gpus(n);
	if (free == n->n_gpu)
		return max64(33 - free, free);
	/* the GPUs it would use: fullest first, among those with room */
	int used[PLACE_MAX_GPUS], k = 0, opened = 0;
	int order[PLACE_MAX_GPUS];
	for (int i = 0; i < n->n_gpu; i++) {
		int j = i;
		while (j > 0 && n->gpu_left[order[j - 1]] > n->gpu_left[i]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (int i = 0; i < n->n_gpu && k < t->num_gpu; i++) {
		int g = order[i];
		if (n->gpu_left[g] >= t->gpu_milli) {
			used[k++] = g;
			opened += n->gpu_left[g] == PLACE_GPU_MILLI;
		}
	}
	if (opened > 0)
		return max64(50 - opened, 33);
	int64_t ratio = 0;
	for (int i = 0; i < k; i++)
		ratio += (int64_t)n->gpu_left[used[i]] * 100 / PLACE_GPU_MILLI;
	return max64(100 - ratio / 10, 50);
}

static int64_t clustering(const struct place_node *n, const struct place_task *t,
                          const struct place_ctx *c)
{
	int cls = place_task_class(t);
	if (cls < 0)
		return 0;
	int64_t mg = c->max_gpu_milli > 0 ? c->max_gpu_milli : 1;
	int64_t base = 25 * (mg - place_node_gpu_left(n)) / mg;
	int kinds = 0;
	for (int i = 0; i < PLACE_CLASSES; i++)
		kinds += n->tasks[i] > 0;
	if (n->tasks[cls] > 0)
		return base + (kinds == 1 ? 75 : 50);
	return base + (kinds == 0 ? 25 : 0);
}

/* 100 x sigmoid(milli-GPU of fragmentation removed / 1000), rounded down:
 * the study's FGD plugin score (the same operations, so the same buckets). */
static int64_t fgd_points(int64_t now, int64_t after, int64_t total)
{
	double d = total > 0 ? (double)(now - after) / (double)total : 0;
	return (int64_t)(1.0 / (1.0 + exp(-d / 1000.0)) * 100.0);
}

/* a / b rounded down, b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Best fit as a tie-break: 0..PLACE_DRAKE_TIE_MAX, higher for less CPU and
 * GPU left after placing, each over the largest node's. */
static int64_t fit_tiebreak(const struct place_node *n, const struct place_task *t,
                            const struct place_ctx *c)
{
	int64_t mc = c->max_cpu_milli > 0 ? c->max_cpu_milli : 1;
	int64_t mg = c->max_gpu_milli > 0 ? c->max_gpu_milli : 1;
	int64_t cpu = n->cpu_left - t->cpu_milli, gpu = place_node_gpu_left(n) - place_task_gpu(t);
	const int64_t half = (PLACE_DRAKE_TIE_MAX + 1) / 2;
	int64_t a = cpu >= mc ? half : cpu * half / mc;
	int64_t b = gpu >= mg ? half : gpu * half / mg;
	int64_t v = PLACE_DRAKE_TIE_MAX - a - b;
	return v < 0 ? 0 : v;
}

/* drake's points for t on n with the GPUs gpus[] (score.h). */
static int64_t drake_points(const struct place_node *n, int64_t frag_now,
                            const struct place_task *t, const int *gpus, const struct place_ctx *c)
{
	const struct place_typical *ty = c->ty;
	int64_t total = ty->total > 0 ? ty->total : 1;
	struct place_node after = *n;
	place_charge(&after, t, gpus, 1);
	int64_t grow = place_frag(&after, ty) - frag_now +
	               total * (place_stranded(&after, ty) - place_stranded(n, ty));
	if (c->reserve && n->model >= 0 && n->model < PLACE_MAX_MODELS)
		grow += total * place_task_gpu(t) * c->reserve[n->model] / PLACE_GPU_MILLI;
	int64_t lost = floor_div(-grow * PLACE_DRAKE_RESOLUTION, total);
	return lost * (PLACE_DRAKE_TIE_MAX + 1) + fit_tiebreak(n, t, c);
}

/* The best placement of t on n by FGD's points or drake's: the points, and
 * for a share its GPU, the first of the best (GPUs with the same room give
 * the same result, so each amount of room is tried once). */
static int64_t frag_points(enum place_policy p, const struct place_node *n, int64_t now,
                           const struct place_task *t, const struct place_ctx *c, int *gpu)
{
	int gpus[PLACE_MAX_GPUS] = {0};
	if (now < 0)
		now = place_frag(n, c->ty);
	*gpu = -1;
	bool share = t->num_gpu == 1 && t->gpu_milli < PLACE_GPU_MILLI;
	int64_t best = PLACE_NO_FIT;
	for (int i = 0; i < (share ? n->n_gpu : 1); i++) {
		if (share) {
			int seen = n->gpu_left[i] < t->gpu_milli;
			for (int j = 0; j < i && !seen; j++)
				seen = n->gpu_left[j] == n->gpu_left[i];
			if (seen)
				continue;
			gpus[0] = i;
		} else if (t->num_gpu > 0 && !place_pick_gpus(n, t, -1, gpus)) {
			return PLACE_NO_FIT;
		}
		int64_t pts = p == PLACE_FGD ? fgd_points(now, place_frag_after(n, t, gpus, c->ty),
		                                          c->ty->total)
		                             : drake_points(n, now, t, gpus, c);
		if (pts > best) {
			best = pts;
			*gpu = share ? i : -1;
		}
	}
	return best;
}

int64_t place_score_node(const struct place_node *n, const struct place_task *t,
                         const struct place_ctx *c, int *gpu)
{
	return place_score_cached(PLACE_DRAKE, n, -1, t, c, gpu);
}

int64_t place_score_cached(enum place_policy p, const struct place_node *n, int64_t frag_now,
                           const struct place_task *t, const struct place_ctx *c, int *gpu)
{
	*gpu = -1;
	if (!place_fits(n, t))
		return PLACE_NO_FIT;
	if (t->num_gpu == 1 && t->gpu_milli < PLACE_GPU_MILLI && p != PLACE_FGD && p != PLACE_DRAKE)
		*gpu = place_share_best_fit(n, t);
	switch (p) {
	case PLACE_RANDOM: return 0;
	case PLACE_BESTFIT: return bestfit(n, t, c);
	case PLACE_DOTPROD: return dotprod(n, t, c);
	case PLACE_PACKING: return packing(n, t);
	case PLACE_CLUSTERING: return clustering(n, t, c);
	case PLACE_FGD:
	case PLACE_DRAKE: return frag_points(p, n, frag_now, t, c, gpu);
	default: return PLACE_NO_FIT;
	}
}

int64_t place_score(enum place_policy p, const struct place_node *n, const struct place_task *t,
                    const struct place_ctx *c, int *gpu)
{
	return place_score_cached(p, n, -1, t, c, gpu);
}

void place_normalize(const int64_t *scores, size_t n, int64_t max, int64_t *out)
{
	int64_t hi = PLACE_NO_FIT, lo = INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		if (scores[i] == PLACE_NO_FIT)
			continue;
		hi = scores[i] > hi ? scores[i] : hi;
		lo = scores[i] < lo ? scores[i] : lo;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t s = scores[i];
		if (s == PLACE_NO_FIT || max <= 0)
			out[i] = 0;
		else if (s == hi)
			out[i] = max;
		else /* lo <= s < hi: in double, a difference of two int64 may not fit one */
			out[i] = (int64_t)((double)(max - 1) *
			                   (((double)s - (double)lo) / ((double)hi - (double)lo)));
	}
}

void place_priorities(const struct place_node *nodes, const bool *known, size_t n,
                      const struct place_task *t, const struct place_typical *ty, int64_t max,
                      int64_t *out)
{
	int64_t cap[PLACE_MAX_MODELS];
	int32_t reserve[PLACE_MAX_MODELS];
	int64_t cap_total = place_model_capacity(nodes, known, n, cap);
	place_reserve_build(ty, cap, cap_total, reserve);
	struct place_ctx c = {ty, 0, 0, reserve};
	for (size_t i = 0; i < n; i++) {
		if (!known[i])
			continue;
		int64_t gpu = (int64_t)nodes[i].n_gpu * PLACE_GPU_MILLI;
		c.max_cpu_milli =
		    nodes[i].cpu_cap > c.max_cpu_milli ? nodes[i].cpu_cap : c.max_cpu_milli;
		c.max_gpu_milli = gpu > c.max_gpu_milli ? gpu : c.max_gpu_milli;
	}
	for (size_t i = 0; i < n; i++) {
		int gpu;
		out[i] = known[i] ? place_score_node(&nodes[i], t, &c, &gpu) : PLACE_NO_FIT;
	}
	place_normalize(out, n, max, out);
}
