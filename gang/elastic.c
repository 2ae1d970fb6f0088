/*
 * elastic.c - starvation shrink (drake's rule).
 */
#include "gang/elastic.h"

#include <stdlib.h>
#include <string.h>

#include "gang/admission.h"

#define PRUNE_MAX 64 /* give-back attempts after a successful shrink */

drake_err drake_victim_order_parse(const char *s, enum drake_victim_order *out)
{
	if (!s)
		return DRAKE_EINVAL;
	if (strcmp(s, "newest") == 0)
		*out = DRAKE_VICTIM_NEWEST_FIRST;
	else if (strcmp(s, "oldest") == 0)
		*out = DRAKE_VICTIM_OLDEST_FIRST;
	else if (strcmp(s, "least-progress") == 0)
		*out = DRAKE_VICTIM_LEAST_PROGRESS;
	else if (strcmp(s, "most-service") == 0)
		*out = DRAKE_VICTIM_MOST_SERVICE;
	else if (strcmp(s, "most-left") == 0)
		*out = DRAKE_VICTIM_MOST_LEFT;
	else
		return DRAKE_EINVAL;
	return DRAKE_OK;
}

const char *drake_victim_order_name(enum drake_victim_order o)
{
	switch (o) {
	case DRAKE_VICTIM_NEWEST_FIRST: return "newest";
	case DRAKE_VICTIM_OLDEST_FIRST: return "oldest";
	case DRAKE_VICTIM_LEAST_PROGRESS: return "least-progress";
	case DRAKE_VICTIM_MOST_SERVICE: return "most-service";
	case DRAKE_VICTIM_MOST_LEFT: return "most-left";
	case DRAKE_VICTIM_MOST_REMAINING: return "most-remaining";
	}
	return "unknown";
}

struct cand {
	int job, slot, slow, lonely;
	double key; /* smaller is taken first */
	int tie;    /* then smaller: the jobs' order, reversed for newest first */
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->slow != y->slow)
		return y->slow - x->slow;
	if (x->lonely != y->lonely)
		return y->lonely - x->lonely;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->tie != y->tie)
		return x->tie - y->tie;
	return y->slot - x->slot; /* highest index first */
}

static int home_node(const struct drake_running_job *j)
{
	if (j->n_ps > 0)
		return j->ps_node[0];
	return j->n_workers > 0 ? j->worker_node[0] : -1;
}

double drake_running_gpus(const struct drake_running_job *r)
{
	return (double)(r->worker.gpu * r->n_workers + r->ps.gpu * r->n_ps);
}

double drake_running_left(const struct drake_running_job *j)
{
	double p = j->progress;
	if (!(p > 0))
		return j->service;
	if (p >= 1)
		return 0;
	if (p < DRAKE_LEFT_MIN_PROGRESS)
		p = DRAKE_LEFT_MIN_PROGRESS;
	return j->service * (1 - p) / p;
}

static double victim_key(const struct drake_running_job *j, enum drake_victim_order o)
{
	switch (o) {
	case DRAKE_VICTIM_NEWEST_FIRST: return -j->admitted;
	case DRAKE_VICTIM_OLDEST_FIRST: return j->admitted;
	case DRAKE_VICTIM_LEAST_PROGRESS: return j->progress < 0 ? -1 : j->progress;
	case DRAKE_VICTIM_MOST_SERVICE: return -j->service;
	case DRAKE_VICTIM_MOST_LEFT: return -drake_running_left(j);
	case DRAKE_VICTIM_MOST_REMAINING:
		return j->remaining > 0 ? -j->remaining * drake_running_gpus(j) : 0;
	}
	return 0;
}

bool drake_running_fixed(const struct drake_running_job *r)
{
	return r->ending || r->binding;
}

drake_err drake_shrink_for(const struct drake_cluster *c, const struct drake_running_job *jobs,
                           size_t n, const struct drake_gang_req *starving,
                           const struct drake_shrink_opts *o, struct drake_scale_op **ops,
                           size_t *n_ops, struct drake_plan *plan, char *why, size_t len)
{
	*ops = NULL;
	*n_ops = 0;
	struct drake_cluster w;
	struct cand *cand = NULL;
	int *removed = NULL;
	struct drake_scale_op *out = NULL;
	size_t nc = 0, nout = 0;
	drake_err err = drake_cluster_clone(&w, c);
	if (err)
		return drake_errorf(err, why, len, "out of memory");

	size_t total = 0;
	for (size_t j = 0; j < n; j++)
		if (jobs[j].n_workers > jobs[j].min_workers && !drake_running_fixed(&jobs[j]))
			total += (size_t)jobs[j].n_workers;
	cand = malloc((total + 1) * sizeof(*cand));
	removed = calloc(n + 1, sizeof(*removed));
	out = malloc((total + 1) * sizeof(*out));
	if (!cand || !removed || !out) {
		err = drake_errorf(DRAKE_ENOMEM, why, len, "out of memory");
		goto done;
	}
	for (size_t j = 0; j < n; j++) {
		const struct drake_running_job *r = &jobs[j];
		if (r->n_workers <= r->min_workers || drake_running_fixed(r))
			continue;
		int home = home_node(r);
		for (int s = 1; s < r->n_workers; s++)
			cand[nc++] = (struct cand){
			    (int)j, s, r->slow, o->lonely_first && r->worker_node[s] != home,
			    victim_key(r, o->order),
			    /* jobs come in admission order; times tie at the second */
			    o->order == DRAKE_VICTIM_OLDEST_FIRST ? (int)j : -(int)j};
	}
	qsort(cand, nc, sizeof(*cand), cmp_cand);

	struct drake_res need, avail;
	drake_gang_min_need(starving, &need);
	drake_cluster_free_sum(&w, &avail);

	err = DRAKE_ESTATE;
	size_t k = 0;
	for (;;) {
		if (drake_res_fits(&need, &avail)) {
			err = drake_plan_gang(&w, starving, plan, why, len);
			if (err != DRAKE_ESTATE)
				break;
		}
		/* Next removable candidate. */
		while (k < nc && removed[cand[k].job] >=
		                     jobs[cand[k].job].n_workers - jobs[cand[k].job].min_workers)
			k++;
		if (k == nc)
			break;
		const struct drake_running_job *r = &jobs[cand[k].job];
		int node = r->worker_node[cand[k].slot];
		drake_cluster_charge(&w, (size_t)node, &r->worker, -1);
		drake_res_add(&avail, &r->worker); /* an upper bound; the planner decides */
		removed[cand[k].job]++;
		out[nout++] = (struct drake_scale_op){cand[k].job, cand[k].slot, node};
		k++;
	}
	if (err == DRAKE_ESTATE) {
		drake_errorf(DRAKE_ESTATE, why, len,
		             "no allowed scale-down makes it fit (%zu workers removable)", nc);
		goto done;
	}
	if (err)
		goto done;

	/* Give back what was not needed, latest removal first. The clone
	 * carries the starving plan while each give-back is tried. */
	drake_plan_charge(&w, starving, plan, 1);
	for (size_t i = nout; i-- > 0 && nout - i <= PRUNE_MAX;) {
		const struct drake_running_job *r = &jobs[out[i].job];
		drake_plan_charge(&w, starving, plan, -1);
		drake_cluster_charge(&w, (size_t)out[i].node, &r->worker, 1);
		struct drake_plan alt = {0};
		char tmp[DRAKE_WHY_MAX];
		drake_err e2 = drake_plan_gang(&w, starving, &alt, tmp, sizeof(tmp));
		if (e2 == DRAKE_OK && alt.n_workers >= plan->n_workers) {
			drake_plan_release(plan);
			*plan = alt;
			memmove(&out[i], &out[i + 1], (nout - i - 1) * sizeof(*out));
			nout--;
		} else {
			drake_plan_release(&alt);
			drake_cluster_charge(&w, (size_t)out[i].node, &r->worker, -1);
			if (e2 == DRAKE_ENOMEM) {
				drake_plan_release(plan);
				err = DRAKE_ENOMEM;
				goto done;
			}
		}
		drake_plan_charge(&w, starving, plan, 1);
	}
	if (nout > 0) {
		*ops = out;
		*n_ops = nout;
		out = NULL;
	}
done:
	free(out);
	free(cand);
	free(removed);
	drake_cluster_release(&w);
	return err;
}
