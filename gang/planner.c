/*
 * planner.c - the gang planner: best fit on one node, else fewest nodes.
 *
 * Everything works on a scratch array of per-node free vectors (a copy), so
 * the same code answers "where now?" (free = alloc - used) and "could it
 * ever?" (free = alloc). Unschedulable nodes have nothing free.
 */
#include "gang/planner.h"

#include <stdio.h>
#include <stdlib.h>

void drake_plan_release(struct drake_plan *p)
{
	if (!p)
		return;
	free(p->ps_node);
	free(p->worker_node);
	*p = (struct drake_plan){0};
}

int drake_plan_count_nodes(const int *ps_node, int n_ps, const int *worker_node, int n_workers)
{
	int n = 0;
	for (int i = 0; i < n_ps + n_workers; i++) {
		int v = i < n_ps ? ps_node[i] : worker_node[i - n_ps];
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = (j < n_ps ? ps_node[j] : worker_node[j - n_ps]) == v;
		n += !seen;
	}
	return n;
}

drake_err drake_gang_req_check(const struct drake_gang_req *req, char *why, size_t len)
{
	if (req->n_ps < 0 || req->min_workers < 0 || req->want_workers < 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "negative replica count");
	if (req->min_workers > req->want_workers)
		return drake_errorf(DRAKE_EINVAL, why, len, "min workers %d above desired %d",
		                    req->min_workers, req->want_workers);
	if (req->n_ps + req->want_workers > DRAKE_GANG_MAX_REPLICAS)
		return drake_errorf(DRAKE_ELIMIT, why, len, "%d replicas, limit %d",
		                    req->n_ps + req->want_workers, DRAKE_GANG_MAX_REPLICAS);
	if (req->n_ps + req->want_workers == 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "a job with no replicas");
	return DRAKE_OK;
}

struct view {
	size_t n;
	struct drake_res *free; /* mutable scratch */
	const struct drake_node *nodes;
};

/* Free after placing k of req on node i, scored as stranded capacity. */
static double score_after(const struct view *v, size_t i, const struct drake_res *req, int64_t k)
{
	struct drake_res left = v->free[i];
	drake_res_add_n(&left, req, -k);
	return drake_res_leftover(&left, &v->nodes[i].alloc);
}

/* Pass 1: the whole job on one node, best fit. Returns the node or -1. */
static long one_node(const struct view *v, const struct drake_gang_req *r)
{
	long best = -1;
	double best_score = 0;
	for (size_t i = 0; i < v->n; i++) {
		if (drake_res_count_fit(&r->ps, &v->free[i], r->n_ps) < r->n_ps)
			continue;
		struct drake_res g = v->free[i];
		drake_res_add_n(&g, &r->ps, -r->n_ps);
		if (drake_res_count_fit(&r->worker, &g, r->want_workers) < r->want_workers)
			continue;
		drake_res_add_n(&g, &r->worker, -r->want_workers);
		double s = drake_res_leftover(&g, &v->nodes[i].alloc);
		if (best < 0 || s < best_score) {
			best = (long)i;
			best_score = s;
		}
	}
	return best;
}

/* The PS node: where all PS fit and the most workers fit beside them;
 * ties by tighter fit, then name. -1 when no node takes all the PS. */
static long ps_home(const struct view *v, const struct drake_gang_req *r)
{
	long best = -1;
	int64_t best_w = -1;
	double best_score = 0;
	for (size_t i = 0; i < v->n; i++) {
		if (drake_res_count_fit(&r->ps, &v->free[i], r->n_ps) < r->n_ps)
			continue;
		struct drake_res g = v->free[i];
		drake_res_add_n(&g, &r->ps, -r->n_ps);
		int64_t w = drake_res_count_fit(&r->worker, &g, r->want_workers);
		if (r->n_ps == 0 && w == 0)
			continue;
		drake_res_add_n(&g, &r->worker, -w);
		double s = drake_res_leftover(&g, &v->nodes[i].alloc);
		if (w > best_w || (w == best_w && s < best_score)) {
			best = (long)i;
			best_w = w;
			best_score = s;
		}
	}
	return best;
}

/*
 * Places as much of r as fits into ps_out/w_out, consuming v->free.
 * *nps and *nw receive the counts placed.
 */
static void place(struct view *v, const struct drake_gang_req *r, int *ps_out, int *w_out, int *nps,
                  int *nw)
{
	*nps = 0;
	*nw = 0;
	long home = one_node(v, r);
	if (home >= 0) {
		for (int k = 0; k < r->n_ps; k++)
			ps_out[(*nps)++] = (int)home;
		for (int k = 0; k < r->want_workers; k++)
			w_out[(*nw)++] = (int)home;
		drake_res_add_n(&v->free[home], &r->ps, -r->n_ps);
		drake_res_add_n(&v->free[home], &r->worker, -r->want_workers);
		return;
	}

	home = ps_home(v, r);
	if (home >= 0) {
		for (int k = 0; k < r->n_ps; k++)
			ps_out[(*nps)++] = (int)home;
		drake_res_add_n(&v->free[home], &r->ps, -r->n_ps);
	} else {
		/* No node takes every PS: spread them first-fit by name. */
		for (size_t i = 0; i < v->n && *nps < r->n_ps; i++) {
			while (*nps < r->n_ps && drake_res_fits(&r->ps, &v->free[i])) {
				ps_out[(*nps)++] = (int)i;
				drake_res_sub(&v->free[i], &r->ps);
			}
		}
		if (*nps < r->n_ps)
			return;
		home = ps_out[0];
	}

	int rest = r->want_workers;
	int64_t k = drake_res_count_fit(&r->worker, &v->free[home], rest);
	for (int64_t j = 0; j < k; j++)
		w_out[(*nw)++] = (int)home;
	drake_res_add_n(&v->free[home], &r->worker, -k);
	rest -= (int)k;

	/* Fill outward: the tightest node that takes all the rest, else the
	 * node that takes the most, until done or out of nodes. */
	while (rest > 0) {
		long pick = -1, big = -1;
		int64_t big_k = 0;
		double pick_score = 0;
		for (size_t i = 0; i < v->n; i++) {
			if ((long)i == home)
				continue;
			int64_t c = drake_res_count_fit(&r->worker, &v->free[i], rest);
			if (c == 0)
				continue;
			if (c == rest) {
				double s = score_after(v, i, &r->worker, c);
				if (pick < 0 || s < pick_score) {
					pick = (long)i;
					pick_score = s;
				}
			} else if (c > big_k) {
				big = (long)i;
				big_k = c;
			}
		}
		if (pick < 0 && big < 0)
			break;
		long at = pick >= 0 ? pick : big;
		int64_t c = pick >= 0 ? rest : big_k;
		for (int64_t j = 0; j < c; j++)
			w_out[(*nw)++] = (int)at;
		drake_res_add_n(&v->free[at], &r->worker, -c);
		rest -= (int)c;
	}
}

static void fill_view(struct view *v, const struct drake_cluster *c, int empty)
{
	v->n = c->n;
	v->nodes = c->nodes;
	for (size_t i = 0; i < c->n; i++) {
		if (!c->nodes[i].schedulable)
			drake_res_zero(&v->free[i]);
		else if (empty)
			v->free[i] = c->nodes[i].alloc;
		else
			drake_cluster_free(c, i, &v->free[i]);
	}
}

static int64_t largest_block(const struct view *v, const struct drake_res *worker, size_t *at)
{
	int64_t best = 0;
	*at = 0;
	for (size_t i = 0; i < v->n; i++) {
		int64_t k = drake_res_count_fit(worker, &v->free[i], DRAKE_GANG_MAX_REPLICAS);
		if (k > best) {
			best = k;
			*at = i;
		}
	}
	return best;
}

static drake_err explain(const struct drake_cluster *c, const struct drake_gang_req *r,
                         struct view *v, int *ps, int *w, char *why, size_t len)
{
	char wres[96], pres[96];
	drake_res_format(&r->worker, wres, sizeof(wres));
	drake_res_format(&r->ps, pres, sizeof(pres));
	int nps, nw;
	size_t at;

	fill_view(v, c, 1);
	int64_t cap_block = largest_block(v, &r->worker, &at);
	place(v, r, ps, w, &nps, &nw);
	if (nps < r->n_ps || nw < r->min_workers)
		return drake_errorf(DRAKE_ELIMIT, why, len,
		                    "can never fit: needs %d PS (%s) + %d workers (%s); the empty "
		                    "cluster takes %d PS + %d workers, at most %lld on one node",
		                    r->n_ps, pres, r->min_workers, wres, nps, nw,
		                    (long long)cap_block);

	fill_view(v, c, 0);
	int64_t block = largest_block(v, &r->worker, &at);
	struct drake_res tot;
	drake_res_zero(&tot);
	for (size_t i = 0; i < v->n; i++)
		drake_res_add(&tot, &v->free[i]);
	place(v, r, ps, w, &nps, &nw);
	if (nps < r->n_ps)
		return drake_errorf(DRAKE_ESTATE, why, len,
		                    "waiting: needs %d PS (%s); only %d fit now", r->n_ps, pres,
		                    nps);
	return drake_errorf(DRAKE_ESTATE, why, len,
	                    "waiting: needs %d PS + %d workers (%s each); %d workers fit now, "
	                    "largest free block %lld workers%s%s, %lld GPUs free",
	                    r->n_ps, r->min_workers, wres, nw, (long long)block,
	                    block ? " on " : "", block ? c->nodes[at].name : "",
	                    (long long)tot.gpu);
}

drake_err drake_plan_gang(const struct drake_cluster *c, const struct drake_gang_req *req,
                          struct drake_plan *out, char *why, size_t len)
{
	drake_err err = drake_gang_req_check(req, why, len);
	if (err)
		return err;
	struct view v = {0};
	int *ps = malloc(((size_t)req->n_ps + 1) * sizeof(int));
	int *w = malloc(((size_t)req->want_workers + 1) * sizeof(int));
	v.free = malloc((c->n + 1) * sizeof(*v.free));
	if (!ps || !w || !v.free) {
		err = drake_errorf(DRAKE_ENOMEM, why, len, "out of memory planning");
		goto out;
	}
	int nps, nw;
	fill_view(&v, c, 0);
	place(&v, req, ps, w, &nps, &nw);
	if (nps == req->n_ps && nw >= req->min_workers) {
		out->n_ps = nps;
		out->n_workers = nw;
		out->ps_node = ps;
		out->worker_node = w;
		out->nodes_spanned = drake_plan_count_nodes(ps, nps, w, nw);
		ps = w = NULL;
		err = DRAKE_OK;
		if (why && len)
			why[0] = '\0';
		goto out;
	}
	err = explain(c, req, &v, ps, w, why, len);
out:
	free(ps);
	free(w);
	free(v.free);
	return err;
}
