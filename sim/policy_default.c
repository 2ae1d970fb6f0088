/*
 * policy_default.c - what kube-scheduler does without drake: every pod on
 * its own, no gang.
 *
 * Pods join one queue in creation order; pods of jobs created at the same
 * instant are interleaved (seeded shuffle), as concurrent controllers
 * create them. Every decision walks the queue and binds each pod that fits
 * somewhere to the node with the best default score: NodeResourcesFit
 * LeastAllocated plus NodeResourcesBalancedAllocation, both on CPU and
 * memory only and truncated to integers 0..100 as the scheduler does
 * (GPUs are not scored by default), ties broken at random (seeded). A job
 * runs once all its pods are bound; until then its bound pods hold their
 * GPUs idle, and if every GPU ends up held that way, nothing moves again.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

struct pod {
	int job;
	bool ps;
};

struct default_pstate {
	struct pod *q;
	size_t n, cap;
};

static drake_err default_init(struct sim *s, void **state)
{
	(void)s;
	struct default_pstate *p = calloc(1, sizeof(*p));
	if (!p)
		return DRAKE_ENOMEM;
	*state = p;
	return DRAKE_OK;
}

static void default_release(void *state)
{
	struct default_pstate *p = state;
	if (!p)
		return;
	free(p->q);
	free(p);
}

static drake_err push_pod(struct default_pstate *p, struct pod pod)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1024;
		struct pod *q = realloc(p->q, cap * sizeof(*q));
		if (!q)
			return DRAKE_ENOMEM;
		p->q = q;
		p->cap = cap;
	}
	p->q[p->n++] = pod;
	return DRAKE_OK;
}

static int64_t pct(int64_t used, int64_t alloc)
{
	if (alloc <= 0)
		return 0;
	if (used >= alloc)
		return 0;
	return (alloc - used) * 100 / alloc;
}

/* The node for req, or -1: max score, ties at random. */
static long pick_node(struct sim *s, const struct drake_res *req)
{
	struct drake_cluster *c = sim_cluster(s);
	long best = -1;
	int64_t best_score = -1;
	uint64_t ties = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct drake_node *nd = &c->nodes[i];
		if (!nd->schedulable)
			continue;
		struct drake_res f;
		drake_cluster_free(c, i, &f);
		if (!drake_res_fits(req, &f))
			continue;
		int64_t cpu_used = nd->used.cpu_milli + req->cpu_milli;
		int64_t mem_used = nd->used.mem_bytes + req->mem_bytes;
		int64_t least =
		    (pct(cpu_used, nd->alloc.cpu_milli) + pct(mem_used, nd->alloc.mem_bytes)) / 2;
		double cf =
		    nd->alloc.cpu_milli ? (double)cpu_used / (double)nd->alloc.cpu_milli : 0;
		double mf =
		    nd->alloc.mem_bytes ? (double)mem_used / (double)nd->alloc.mem_bytes : 0;
		double d = cf > mf ? cf - mf : mf - cf;
		int64_t balanced = (int64_t)((1.0 - d) * 100);
		int64_t score = least + balanced;
		if (score > best_score) {
			best = (long)i;
			best_score = score;
			ties = 1;
		} else if (score == best_score && sim_rand(s) % ++ties == 0) {
			best = (long)i;
		}
	}
	return best;
}

static drake_err default_decide(struct sim *s, void *state)
{
	struct default_pstate *p = state;
	size_t na;
	const int *arrived = sim_arrived(s, &na);
	size_t first_new = p->n;
	drake_err err;
	for (size_t i = 0; i < na; i++) {
		struct sim_job *j = sim_job(s, arrived[i]);
		for (int k = 0; k < j->req.n_ps; k++)
			if ((err = push_pod(p, (struct pod){arrived[i], true})))
				return err;
		for (int k = 0; k < j->req.want_workers; k++)
			if ((err = push_pod(p, (struct pod){arrived[i], false})))
				return err;
	}
	if (na > 1) {
		for (size_t i = p->n; i > first_new + 1; i--) {
			size_t k = first_new + (size_t)(sim_rand(s) % (i - first_new));
			struct pod t = p->q[i - 1];
			p->q[i - 1] = p->q[k];
			p->q[k] = t;
		}
	}
	/* One pass in queue order. A request that found no node rules out
	 * every later request at least as large in every dimension. */
	struct drake_res failed[8];
	int n_failed = 0;
	size_t keep = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct pod pod = p->q[i];
		struct sim_job *j = sim_job(s, pod.job);
		const struct drake_res *req = pod.ps ? &j->req.ps : &j->req.worker;
		bool hopeless = false;
		for (int f = 0; f < n_failed && !hopeless; f++)
			hopeless = drake_res_fits(&failed[f], req);
		long node = hopeless ? -1 : pick_node(s, req);
		if (node < 0) {
			if (!hopeless && n_failed < 8)
				failed[n_failed++] = *req;
			p->q[keep++] = pod;
			continue;
		}
		if ((err = sim_bind_pod(s, pod.job, pod.ps, (int)node)))
			return err;
	}
	p->n = keep;
	return DRAKE_OK;
}

const struct sim_policy sim_policy_default = {"default", default_init, default_release,
                                              default_decide};
