/*
 * placement.c - one run of the placement study (placement.h): build the
 * seed's workload, place it task by task with one policy's pure score,
 * and record allocation and fragmentation per arrived percent.
 */
#include "sim/placement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/frag.h"
#include "place/reserve.h"
#include "place/learn.h"

/* splitmix64: small, fast, and the same everywhere. */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t v;
	do
		v = rng_next(r);
	while (v >= limit);
	return v % n;
}

drake_err placement_workload(const struct placement_tasks *tasks, int64_t cluster_gpu_milli,
                             double arrive, uint64_t seed, struct place_task **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (tasks->n == 0)
		return DRAKE_EINVAL;
	int64_t target = (int64_t)floor(arrive * (double)cluster_gpu_milli);
	int64_t total = 0;
	for (size_t i = 0; i < tasks->n; i++)
		total += place_task_gpu(&tasks->t[i]);
	struct rng r = {seed};
	/* Room for the list plus what can be appended: each appended task asks
	 * for some GPU (tasks without any append for free, so bound them too). */
	size_t cap = tasks->n + 1024;
	struct place_task *w = malloc(cap * sizeof(*w));
	if (!w)
		return DRAKE_ENOMEM;
	memcpy(w, tasks->t, tasks->n * sizeof(*w));
	size_t k = tasks->n;
	while (total < target) {
		const struct place_task *t = &tasks->t[rng_below(&r, tasks->n)];
		if (total + place_task_gpu(t) > target)
			break;
		if (k == cap) {
			if (cap >= (size_t)SIM_TRACE_MAX_ROWS * 16) {
				free(w);
				return DRAKE_ELIMIT;
			}
			struct place_task *p = realloc(w, cap * 2 * sizeof(*w));
			if (!p) {
				free(w);
				return DRAKE_ENOMEM;
			}
			w = p;
			cap *= 2;
		}
		w[k++] = *t;
		total += place_task_gpu(t);
	}
	while (total > target && k > 0) {
		size_t i = (size_t)rng_below(&r, k);
		total -= place_task_gpu(&w[i]);
		memmove(&w[i], &w[i + 1], (k - i - 1) * sizeof(*w));
		k--;
	}
	for (size_t i = k; i > 1; i--) {
		size_t j = (size_t)rng_below(&r, i);
		struct place_task tmp = w[i - 1];
		w[i - 1] = w[j];
		w[j] = tmp;
	}
	*out = w;
	*n = k;
	return DRAKE_OK;
}

/* The order ties are settled in: the nodes shuffled once per seed, the
 * same order for every policy and every task of the run. */
static size_t *node_order(size_t n, uint64_t seed)
{
	size_t *o = malloc((n ? n : 1) * sizeof(*o));
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++)
		o[i] = i;
	struct rng r = {seed ^ UINT64_C(0x2545f4914f6cdd1d)};
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rng_below(&r, i);
		size_t tmp = o[i - 1];
		o[i - 1] = o[j];
		o[j] = tmp;
	}
	return o;
}

/* The node task t goes to (c->n: none fits) and, for a share, its GPU. */
static size_t choose(const struct placement_cluster *c, const struct place_node *nodes,
                     const int64_t *frag, const size_t *order, const struct place_task *t,
                     const struct place_ctx *ctx, enum place_policy p, bool draw, struct rng *r,
                     int *pick_gpu)
{
	int64_t best = PLACE_NO_FIT;
	size_t pick = c->n, ties = 0;
	*pick_gpu = -1;
	for (size_t k = 0; k < c->n; k++) {
		size_t i = order[k];
		int gpu;
		int64_t s = place_score_cached(p, &nodes[i], frag ? frag[i] : -1, t, ctx, &gpu);
		if (s == PLACE_NO_FIT || s < best)
			continue;
		if (s > best) {
			best = s;
			ties = 0;
		} else if (!draw) {
			continue; /* the first best in node order keeps it */
		}
		/* a reservoir draw among the best, as kube-scheduler's selectHost */
		if (++ties == 1 || rng_below(r, ties) == 0) {
			pick = i;
			*pick_gpu = gpu;
		}
	}
	return pick;
}

drake_err placement_run(const struct placement_cluster *c, const struct place_typical *ty,
                        size_t learn_window, const struct place_task *w, size_t n,
                        enum place_policy p, uint64_t seed, enum placement_ties ties,
                        struct placement_run *out, char *msg, size_t mlen)
{
	memset(out, 0, sizeof(*out));
	struct place_learner learner = {0};
	if (learn_window && place_learner_init(&learner, learn_window, msg, mlen) != DRAKE_OK)
		return DRAKE_EINVAL;
	struct place_node *nodes = malloc((c->n ? c->n : 1) * sizeof(*nodes));
	int64_t *frag = malloc((c->n ? c->n : 1) * sizeof(*frag));
	size_t *order = node_order(c->n, seed);
	double *alloc_sum = calloc(PLACEMENT_MAX_PCT + 1, sizeof(double));
	double *frag_sum = calloc(PLACEMENT_MAX_PCT + 1, sizeof(double));
	size_t *steps = calloc(PLACEMENT_MAX_PCT + 1, sizeof(size_t));
	drake_err err = DRAKE_OK;
	if (!nodes || !frag || !order || !alloc_sum || !frag_sum || !steps) {
		err = drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory for %zu nodes", c->n);
		goto out;
	}
	memcpy(nodes, c->nodes, c->n * sizeof(*nodes));
	int64_t frag_total = 0, idle = 0;
	for (size_t i = 0; i < c->n; i++) {
		frag[i] = place_frag(&nodes[i], ty);
		frag_total += frag[i];
		idle += place_node_gpu_left(&nodes[i]);
	}
	/* The score's view: the list's typical shapes, or those the learner
	 * has seen so far (rebuilt per task below), and how much of each GPU
	 * model the restricted ones claim. */
	int64_t cap[PLACE_MAX_MODELS];
	int32_t reserve[PLACE_MAX_MODELS];
	int64_t cap_total = place_model_capacity(c->nodes, NULL, c->n, cap);
	place_reserve_build(ty, cap, cap_total, reserve);
	struct place_ctx ctx = {ty, c->max_cpu_milli, c->max_gpu_milli, reserve};
	/* The study's random policy draws among the feasible nodes whatever the
	 * tie rule: it scores one drawn node high and the others 0. */
	bool draw = ties == PLACEMENT_TIES_RANDOM || p == PLACE_RANDOM;
	struct rng r = {seed ^ (UINT64_C(0x5851f42d4c957f2d) * (uint64_t)(p + 1))};
	double total = (double)c->gpu_milli;
	int64_t arrived = 0, placed = 0;
	for (size_t k = 0; k < n; k++) {
		const struct place_task *t = &w[k];
		arrived += place_task_gpu(t);
		if (learn_window) { /* as the prioritize verb: count the pod, then score it */
			char key[32];
			bool counted;
			snprintf(key, sizeof(key), "task-%zu", k);
			if (place_learner_observe(&learner, key, t, &counted) != DRAKE_OK) {
				err = drake_errorf(DRAKE_ENOMEM, msg, mlen,
				                   "out of memory learning shapes");
				goto out;
			}
			ctx.ty = place_learner_typical(&learner);
			place_reserve_build(ctx.ty, cap, cap_total, reserve);
		}
		int pick_gpu;
		size_t pick = choose(c, nodes, learn_window ? NULL : frag, order, t, &ctx, p, draw,
		                     &r, &pick_gpu);
		int gpus[PLACE_MAX_GPUS];
		if (pick == c->n ||
		    (t->num_gpu > 0 && !place_pick_gpus(&nodes[pick], t, pick_gpu, gpus))) {
			out->failed++;
			out->failed_gpu_milli += place_task_gpu(t);
		} else {
			place_charge(&nodes[pick], t, gpus, 1);
			placed += place_task_gpu(t);
			idle -= place_task_gpu(t);
			frag_total -= frag[pick];
			frag[pick] = place_frag(&nodes[pick], ty);
			frag_total += frag[pick];
		}
		long pct = lround(100.0 * (double)arrived / total);
		if (pct >= 0 && pct <= PLACEMENT_MAX_PCT) {
			alloc_sum[pct] += (double)placed / total;
			if (idle > 0 && ty->total > 0)
				frag_sum[pct] +=
				    (double)frag_total / (double)ty->total / (double)idle;
			steps[pct]++;
		}
	}
	for (size_t i = 0; i < c->n; i++)
		out->nodes_used +=
		    nodes[i].cpu_left < nodes[i].cpu_cap || nodes[i].mem_left < nodes[i].mem_cap ||
		    place_node_gpu_left(&nodes[i]) < nodes[i].n_gpu * PLACE_GPU_MILLI;
	out->tasks = n;
	out->final_arrived = (double)arrived / total;
	out->final_alloc = (double)placed / total;
	/* A percent no step rounded to (one task jumped over it) takes its
	 * neighbours' steps, as the study's analysis does. */
	long last = lround(100.0 * (double)arrived / total);
	for (int b = 0; b <= PLACEMENT_MAX_PCT; b++) {
		double a = alloc_sum[b], f = frag_sum[b];
		size_t m = steps[b];
		if (m == 0 && b > 0 && b < last && b < PLACEMENT_MAX_PCT) {
			a = alloc_sum[b - 1] + alloc_sum[b + 1];
			f = frag_sum[b - 1] + frag_sum[b + 1];
			m = steps[b - 1] + steps[b + 1];
		}
		out->alloc[b] = m ? a / (double)m : -1;
		out->frag_rate[b] = m ? f / (double)m : -1;
	}
out:
	place_learner_release(&learner);
	free(nodes);
	free(frag);
	free(order);
	free(alloc_sum);
	free(frag_sum);
	free(steps);
	return err;
}
