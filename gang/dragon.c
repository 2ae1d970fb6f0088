/*
 * dragon.c - DRAGON's ScheduleJob, ScaleDown and ScaleUp, node order given.
 */
#include "gang/dragon.h"

#include <stdlib.h>

static drake_err views(const struct drake_cluster *c, struct drake_res **free_out)
{
	struct drake_res *f = malloc((c->n + 1) * sizeof(*f));
	if (!f)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		if (c->nodes[i].schedulable)
			drake_cluster_free(c, i, &f[i]);
		else
			drake_res_zero(&f[i]);
	}
	*free_out = f;
	return DRAKE_OK;
}

/* The request sequence: PS group first, then workers. */
static const struct drake_res *nth_req(const struct drake_gang_req *r, int k)
{
	return k < r->n_ps ? &r->ps : &r->worker;
}

static void schedule_on(struct drake_res *f, const int *order, size_t n_order,
                        const struct drake_gang_req *r, int *ps, int *w, int *nps, int *nw)
{
	int total = r->n_ps + r->want_workers;
	*nps = 0;
	*nw = 0;
	int max_slot = 0;
	long max_node = -1;
	for (size_t o = 0; o < n_order; o++) {
		int i = order[o];
		struct drake_res g = f[i];
		int placed_ps = 0, placed_w = 0, k;
		for (k = 0; k < total; k++) {
			if (!drake_res_fits(nth_req(r, k), &g))
				break;
			drake_res_sub(&g, nth_req(r, k));
			if (k < r->n_ps)
				placed_ps++;
			else
				placed_w++;
		}
		if (k == total) {
			for (int j = 0; j < r->n_ps; j++)
				ps[(*nps)++] = i;
			for (int j = 0; j < r->want_workers; j++)
				w[(*nw)++] = i;
			f[i] = g;
			return;
		}
		int slots = placed_ps > placed_w ? placed_ps : placed_w;
		if (slots > max_slot) {
			max_slot = slots;
			max_node = i;
		}
	}
	if (max_slot == 0)
		return;
	/* Cross-node fallback: maxSlotNode first, then the others in order;
	 * a node that refuses one request is never revisited. */
	size_t cur = 0;
	for (int k = 0; k < total; k++) {
		const struct drake_res *q = nth_req(r, k);
		for (;;) {
			if (cur > n_order)
				return;
			int node = cur == 0 ? (int)max_node : order[cur - 1];
			if (cur > 0 && node == max_node) {
				cur++;
				continue;
			}
			if (drake_res_fits(q, &f[node])) {
				drake_res_sub(&f[node], q);
				if (k < r->n_ps)
					ps[(*nps)++] = node;
				else
					w[(*nw)++] = node;
				break;
			}
			cur++;
		}
	}
}

drake_err drake_dragon_schedule(const struct drake_cluster *c, const int *order, size_t n_order,
                                const struct drake_gang_req *req, struct drake_plan *out)
{
	struct drake_res *f;
	if (drake_gang_req_check(req, NULL, 0))
		return DRAKE_EINVAL;
	if (views(c, &f))
		return DRAKE_ENOMEM;
	int *ps = malloc(((size_t)req->n_ps + 1) * sizeof(int));
	int *w = malloc(((size_t)req->want_workers + 1) * sizeof(int));
	if (!ps || !w) {
		free(ps);
		free(w);
		free(f);
		return DRAKE_ENOMEM;
	}
	int nps, nw;
	schedule_on(f, order, n_order, req, ps, w, &nps, &nw);
	free(f);
	out->n_ps = nps;
	out->n_workers = nw;
	out->ps_node = ps;
	out->worker_node = w;
	out->nodes_spanned = drake_plan_count_nodes(ps, nps, w, nw);
	return nps == req->n_ps && nw >= req->min_workers ? DRAKE_OK : DRAKE_ESTATE;
}

/* Does hp (min workers, no PS) fit on c? */
static drake_err hp_fits(const struct drake_cluster *c, const int *order, size_t n_order,
                         const struct drake_gang_req *hp, int *fits)
{
	struct drake_plan p = {0};
	drake_err err = drake_dragon_schedule(c, order, n_order, hp, &p);
	drake_plan_release(&p);
	if (err != DRAKE_OK && err != DRAKE_ESTATE)
		return err;
	*fits = err == DRAKE_OK;
	return DRAKE_OK;
}

drake_err drake_dragon_scale_down(const struct drake_cluster *c, const int *order, size_t n_order,
                                  const struct drake_running_job *jobs, size_t n,
                                  const struct drake_res *worker, int min_workers,
                                  struct drake_scale_op **ops, size_t *n_ops)
{
	*ops = NULL;
	*n_ops = 0;
	struct drake_gang_req hp = {
	    .worker = *worker, .min_workers = min_workers, .want_workers = min_workers};
	struct drake_cluster w;
	if (drake_cluster_clone(&w, c))
		return DRAKE_ENOMEM;
	size_t cap = 1;
	for (size_t j = 0; j < n; j++)
		cap += (size_t)jobs[j].n_workers;
	struct drake_scale_op *out = malloc(cap * sizeof(*out));
	if (!out) {
		drake_cluster_release(&w);
		return DRAKE_ENOMEM;
	}
	size_t nout = 0;
	int fits = 0;
	drake_err err = DRAKE_OK;
	for (size_t j = 0; j < n && !fits && !err; j++) {
		const struct drake_running_job *r = &jobs[j];
		int max_delete = r->n_workers - r->min_workers, deleted = 0;
		int home = r->n_ps > 0 ? r->ps_node[0] : -1;
		/* SortNodeFromJob: the job's nodes other than the PS's, in map
		 * order, then the PS's node last. */
		for (int pass = 0; pass < 2 && !fits && !err && deleted <= max_delete; pass++) {
			for (size_t o = 0; o < n_order && !fits && !err; o++) {
				int node = order[o];
				if ((pass == 0) == (node == home))
					continue;
				for (int s = 0; s < r->n_workers; s++) {
					if (r->worker_node[s] != node)
						continue;
					if ((err = hp_fits(&w, order, n_order, &hp, &fits)) || fits)
						break;
					if (deleted >= max_delete)
						break;
					if (s == 0)
						continue; /* worker 0 is Critical */
					drake_cluster_charge(&w, (size_t)node, &r->worker, -1);
					out[nout++] = (struct drake_scale_op){(int)j, s, node};
					deleted++;
				}
				if (deleted >= max_delete)
					break;
			}
		}
	}
	if (!err && !fits)
		err = hp_fits(&w, order, n_order, &hp, &fits);
	drake_cluster_release(&w);
	if (err || !fits) {
		free(out);
		return err ? err : DRAKE_ESTATE;
	}
	if (nout == 0) {
		free(out);
		return DRAKE_OK;
	}
	*ops = out;
	*n_ops = nout;
	return DRAKE_OK;
}

drake_err drake_dragon_scale_up(const struct drake_cluster *c, const int *order, size_t n_order,
                                const struct drake_running_job *jobs, size_t n,
                                struct drake_scale_op **ops, size_t *n_ops)
{
	*ops = NULL;
	*n_ops = 0;
	size_t room = 0;
	for (size_t j = 0; j < n; j++)
		if (jobs[j].max_workers > jobs[j].n_workers)
			room += (size_t)(jobs[j].max_workers - jobs[j].n_workers);
	if (room == 0)
		return DRAKE_OK;
	struct drake_res *f;
	if (views(c, &f))
		return DRAKE_ENOMEM;
	struct drake_scale_op *out = malloc(room * sizeof(*out));
	int *added = calloc(n + 1, sizeof(int));
	if (!out || !added) {
		free(out);
		free(added);
		free(f);
		return DRAKE_ENOMEM;
	}
	size_t nout = 0, i = 0;
	for (size_t o = 0; o < n_order && i < n; o++) {
		int node = order[o];
		for (; i < n; i++) {
			const struct drake_running_job *r = &jobs[i];
			/* The original recomputes this from the old plan on every
			 * node and can overshoot max; drake caps it. */
			int k = r->max_workers - r->n_workers - added[i];
			int stuck = 0;
			for (int t = 0; t < k; t++) {
				if (!drake_res_fits(&r->worker, &f[node])) {
					stuck = 1;
					break;
				}
				drake_res_sub(&f[node], &r->worker);
				added[i]++;
				out[nout++] = (struct drake_scale_op){(int)i, -1, node};
			}
			if (stuck)
				break;
		}
	}
	free(added);
	free(f);
	if (nout == 0) {
		free(out);
		return DRAKE_OK;
	}
	*ops = out;
	*n_ops = nout;
	return DRAKE_OK;
}
