/*
 * planner.c - the gang planner: best fit on one node, else fewest nodes.
 *
 * Everything works on a scratch array of per-node free vectors (a copy) and,
 * for a job whose replicas share GPUs, of per-node vGPU tables, so the same
 * code answers "where now?" (free = alloc - used, the vGPUs open now) and
 * "could it ever?" (free = alloc, no vGPU open). Unschedulable nodes have
 * nothing free.
 */
#include "gang/planner.h"

#include <stdio.h>
#include <stdlib.h>

#include "gang/roles.h"

void drake_plan_release(struct drake_plan *p)
{
	if (!p)
		return;
	free(p->ps_node);
	free(p->worker_node);
	free(p->ps_vgpu);
	free(p->worker_vgpu);
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

void drake_gang_min_need(const struct drake_gang_req *r, struct drake_res *out)
{
	drake_res_zero(out);
	drake_res_add_n(out, &r->ps, r->n_ps);
	drake_res_add_n(out, &r->chief, r->n_chief);
	drake_res_add_n(out, &r->worker, r->min_workers);
}

/* Distinct nodes of a placement, the chief's (when placed) included. */
static int span(const int *ps, int nps, const int *w, int nw, int nchief, int chief)
{
	int n = drake_plan_count_nodes(ps, nps, w, nw);
	bool seen = false;
	for (int i = 0; nchief && i < nps && !seen; i++)
		seen = ps[i] == chief;
	for (int i = 0; nchief && i < nw && !seen; i++)
		seen = w[i] == chief;
	return n + (nchief && !seen);
}

static drake_err share_check(const char *who, const struct drake_res *res,
                             const struct drake_share *s, char *why, size_t len)
{
	if (s->milli == 0 && s->mem_bytes == 0)
		return DRAKE_OK;
	if (s->milli == 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "%s: %s without %s", who,
		                    DRAKE_KUBESHARE_GPU_MEM, DRAKE_KUBESHARE_GPU_REQUEST);
	if (s->milli < 0 || s->milli > DRAKE_GPU_MILLI || s->mem_bytes < 0)
		return drake_errorf(
		    DRAKE_EINVAL, why, len,
		    "%s: a GPU share of %d milli-GPU and %lld bytes; want 1..%d and "
		    "no negative memory",
		    who, (int)s->milli, (long long)s->mem_bytes, DRAKE_GPU_MILLI);
	if (res->gpu > 0)
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "%s asks for %lld whole GPUs (%s) and a share of one (%s): "
		                    "one or the other",
		                    who, (long long)res->gpu, DRAKE_RES_GPU_NAME,
		                    DRAKE_KUBESHARE_GPU_REQUEST);
	return DRAKE_OK;
}

drake_err drake_gang_req_check(const struct drake_gang_req *req, char *why, size_t len)
{
	drake_err err;
	if ((err =
	         share_check(drake_role_name(DRAKE_ROLE_PS), &req->ps, &req->ps_share, why, len)) ||
	    (err = share_check(drake_role_name(DRAKE_ROLE_WORKER), &req->worker, &req->worker_share,
	                       why, len)) ||
	    (err = share_check(drake_role_name(DRAKE_ROLE_CHIEF), &req->chief, &req->chief_share,
	                       why, len)))
		return err;
	if (req->n_ps < 0 || req->min_workers < 0 || req->want_workers < 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "negative replica count");
	if (req->n_chief < 0 || req->n_chief > 1)
		return drake_errorf(DRAKE_EINVAL, why, len, "%d chiefs; a job has 0 or 1",
		                    req->n_chief);
	if (req->min_workers > req->want_workers)
		return drake_errorf(DRAKE_EINVAL, why, len, "min workers %d above desired %d",
		                    req->min_workers, req->want_workers);
	int total = req->n_ps + req->n_chief + req->want_workers;
	if (total > DRAKE_GANG_MAX_REPLICAS)
		return drake_errorf(DRAKE_ELIMIT, why, len, "%d replicas, limit %d", total,
		                    DRAKE_GANG_MAX_REPLICAS);
	if (total == 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "a job with no replicas");
	if (req->n_keep < 0 || req->n_keep > DRAKE_GANG_MAX_KEEP || (req->n_keep && !req->keep))
		return drake_errorf(DRAKE_EINVAL, why, len, "%d queue shapes; want 0..%d",
		                    req->n_keep, DRAKE_GANG_MAX_KEEP);
	return DRAKE_OK;
}

/* One replica type as the planner places it: its vector and its GPU share. */
struct replica {
	struct drake_res res;
	struct drake_share share;
	const unsigned char *ok; /* the role's node mask, NULL: every schedulable node */
};

/* Node i is open to the role: schedulable and in its mask, or tainted
 * and let in by its mask (its tolerations). */
static bool allowed(const struct drake_node *nd, const struct replica *r, size_t i)
{
	if (r->ok && !r->ok[i])
		return false;
	return nd->schedulable || (nd->tainted && r->ok);
}

struct view {
	size_t n;
	struct drake_res *free; /* mutable scratch */
	struct drake_vgpus *vg; /* mutable scratch; NULL when no replica shares a GPU */
	const struct drake_node *nodes;
	uint64_t seed; /* new vGPU ids */
	struct replica ps, wk, chief;
	const struct drake_res *keep; /* the queue's shapes (drake_gang_req) */
	int n_keep;
};

/* GPUs the queue's shapes can use in free f: per shape asking for GPUs,
 * the copies that fit times their GPUs. */
static int64_t usable(const struct view *v, const struct drake_res *f)
{
	int64_t u = 0;
	for (int k = 0; k < v->n_keep; k++)
		if (v->keep[k].gpu > 0)
			u += drake_res_count_fit(&v->keep[k], f, 1 << 20) * v->keep[k].gpu;
	return u;
}

/* usable() summed over the view's nodes. */
static int64_t usable_all(const struct view *v)
{
	int64_t u = 0;
	for (size_t i = 0; i < v->n; i++)
		u += usable(v, &v->free[i]);
	return u;
}

static struct drake_vgpus *vg_of(const struct view *v, size_t i)
{
	return v->vg ? &v->vg[i] : NULL;
}

/* How many copies of r fit into free and vg (node i's), at most cap. */
static int64_t fit(const struct view *v, size_t i, const struct drake_res *free,
                   const struct drake_vgpus *vg, const struct replica *r, int64_t cap)
{
	if (!allowed(&v->nodes[i], r, i))
		return 0;
	int64_t k = drake_res_count_fit(&r->res, free, cap);
	if (r->share.milli > 0)
		k = drake_vgpu_count_fit(vg, free->gpu, v->nodes[i].gpu_mem, &r->share, k);
	return k;
}

/* Takes k copies of r (that fit() counted) from free and vg: each share
 * goes to the first vGPU with room, else opens one on a free whole GPU.
 * picks, when not NULL, receives each copy's vGPU. */
static void take(const struct view *v, size_t i, struct drake_res *free, struct drake_vgpus *vg,
                 const struct replica *r, int64_t k, struct drake_vgpu_pick *picks)
{
	const struct drake_node *nd = &v->nodes[i];
	drake_res_add_n(free, &r->res, -k);
	for (int64_t j = 0; r->share.milli > 0 && j < k; j++) {
		int at = drake_vgpu_first_fit(vg, &r->share);
		if (at < 0 && drake_vgpu_can_open(vg, free->gpu, nd->gpu_mem, &r->share)) {
			char id[DRAKE_VGPU_ID_MAX];
			drake_vgpu_new_id(vg, v->seed, nd->name, id);
			at = drake_vgpu_open(vg, id, nd->gpu_mem);
			free->gpu--;
		}
		if (at < 0)
			return; /* not reached: fit() counted k */
		drake_vgpu_share(&vg->v[at], &r->share, 1);
		if (picks) {
			snprintf(picks[j].id, sizeof(picks[j].id), "%s", vg->v[at].id);
			picks[j].opened = drake_vgpu_find(&nd->vgpus, picks[j].id) < 0;
		}
	}
}

/* Stranded capacity of what is left on node i; a shared GPU's unused share
 * is stranded too, so a job fills open vGPUs before it opens new ones. */
static double leftover(const struct view *v, size_t i, const struct drake_res *left,
                       const struct drake_vgpus *vg)
{
	double s = drake_res_leftover(left, &v->nodes[i].alloc);
	if (vg && v->nodes[i].alloc.gpu > 0)
		s += drake_vgpu_stranded(vg) / (double)v->nodes[i].alloc.gpu;
	return s;
}

/* A copy of node i's room, to try a placement on without committing it. */
struct trial {
	struct drake_res free;
	struct drake_vgpus vg;
	struct drake_vgpus *vgp; /* &vg, or NULL when no replica shares a GPU */
};

static void trial_init(struct trial *t, const struct view *v, size_t i)
{
	t->free = v->free[i];
	t->vgp = NULL;
	if (v->vg) {
		t->vg = v->vg[i];
		t->vgp = &t->vg;
	}
}

/* Free after placing k of r on node i, scored as stranded capacity. */
static double score_after(const struct view *v, size_t i, const struct replica *r, int64_t k)
{
	struct trial t;
	trial_init(&t, v, i);
	take(v, i, &t.free, t.vgp, r, k, NULL);
	return leftover(v, i, &t.free, t.vgp);
}

/* GPUs usable by the queue that placing k copies of r on node i loses. */
static int64_t loss_of(const struct view *v, size_t i, const struct replica *r, int64_t k)
{
	struct trial t;
	trial_init(&t, v, i);
	take(v, i, &t.free, t.vgp, r, k, NULL);
	return usable(v, &v->free[i]) - usable(v, &t.free);
}

/* How many copies of r fit on node i now, at most cap. */
static int64_t room(const struct view *v, size_t i, const struct replica *r, int64_t cap)
{
	return fit(v, i, &v->free[i], vg_of(v, i), r, cap);
}

/* Places k copies of r on node i: their node goes to nodes[*count..] and
 * their vGPUs to picks[*count..] (when picks is not NULL). */
static void put(struct view *v, size_t i, const struct replica *r, int64_t k, int *nodes,
                struct drake_vgpu_pick *picks, int *count)
{
	take(v, i, &v->free[i], vg_of(v, i), r, k, picks ? &picks[*count] : NULL);
	for (int64_t j = 0; j < k; j++)
		nodes[(*count)++] = (int)i;
}

/* Pass 1: the whole job on one node, the one that loses the queue the
 * fewest usable GPUs, then best fit. Returns the node or -1. */
static long one_node(const struct view *v, const struct drake_gang_req *r)
{
	long best = -1;
	double best_score = 0;
	int64_t best_loss = 0;
	for (size_t i = 0; i < v->n; i++) {
		struct trial t;
		trial_init(&t, v, i);
		if (fit(v, i, &t.free, t.vgp, &v->ps, r->n_ps) < r->n_ps)
			continue;
		take(v, i, &t.free, t.vgp, &v->ps, r->n_ps, NULL);
		if (fit(v, i, &t.free, t.vgp, &v->chief, r->n_chief) < r->n_chief)
			continue;
		take(v, i, &t.free, t.vgp, &v->chief, r->n_chief, NULL);
		if (fit(v, i, &t.free, t.vgp, &v->wk, r->want_workers) < r->want_workers)
			continue;
		take(v, i, &t.free, t.vgp, &v->wk, r->want_workers, NULL);
		double s = leftover(v, i, &t.free, t.vgp);
		int64_t loss = usable(v, &v->free[i]) - usable(v, &t.free);
		if (best < 0 || loss < best_loss || (loss == best_loss && s < best_score)) {
			best = (long)i;
			best_score = s;
			best_loss = loss;
		}
	}
	return best;
}

/* The PS node: where all PS fit and the most other members (the chief and
 * workers, the chief taken first) fit beside them; ties by the chief being
 * there, then tighter fit, then name. -1 when no node takes all the PS (or,
 * without PS, a single member). */
static long ps_home(const struct view *v, const struct drake_gang_req *r)
{
	long best = -1;
	int64_t best_m = -1, best_c = -1;
	double best_score = 0;
	for (size_t i = 0; i < v->n; i++) {
		struct trial t;
		trial_init(&t, v, i);
		if (fit(v, i, &t.free, t.vgp, &v->ps, r->n_ps) < r->n_ps)
			continue;
		take(v, i, &t.free, t.vgp, &v->ps, r->n_ps, NULL);
		int64_t c = fit(v, i, &t.free, t.vgp, &v->chief, r->n_chief);
		take(v, i, &t.free, t.vgp, &v->chief, c, NULL);
		int64_t w = fit(v, i, &t.free, t.vgp, &v->wk, r->want_workers);
		if (r->n_ps == 0 && w + c == 0)
			continue;
		take(v, i, &t.free, t.vgp, &v->wk, w, NULL);
		double s = leftover(v, i, &t.free, t.vgp);
		int64_t m = c + w;
		if (m > best_m || (m == best_m && c > best_c) ||
		    (m == best_m && c == best_c && s < best_score)) {
			best = (long)i;
			best_m = m;
			best_c = c;
			best_score = s;
		}
	}
	return best;
}

/* Where place() puts a job: a node (and, when the arrays are not NULL, a
 * vGPU) per placed replica. */
struct placed {
	int *ps, *w;
	struct drake_vgpu_pick *ps_pick, *w_pick, *chief_pick;
	int nps, nw, nchief;
	int chief; /* the chief's node when nchief is 1 */
};

/* The chief's node: home when it fits there, else the node it fits best;
 * -1 when it fits nowhere. */
static long chief_home(const struct view *v, long home)
{
	if (home >= 0 && room(v, (size_t)home, &v->chief, 1) == 1)
		return home;
	long best = -1;
	double best_score = 0;
	for (size_t i = 0; i < v->n; i++) {
		if ((long)i == home || room(v, i, &v->chief, 1) < 1)
			continue;
		double s = score_after(v, i, &v->chief, 1);
		if (best < 0 || s < best_score) {
			best = (long)i;
			best_score = s;
		}
	}
	return best;
}

/* Places r's chief, if it has one and it fits, near home. */
static void place_chief(struct view *v, const struct drake_gang_req *r, long home, struct placed *o)
{
	long at = r->n_chief ? chief_home(v, home) : -1;
	if (at < 0)
		return;
	int count = 0;
	put(v, (size_t)at, &v->chief, 1, &o->chief, o->chief_pick, &count);
	o->nchief = count;
}

/*
 * Places as much of r as fits into o, consuming the view: the PS, then the
 * chief, then the workers. o's counts receive how many were placed.
 */
static void place(struct view *v, const struct drake_gang_req *r, struct placed *o)
{
	o->nps = o->nw = o->nchief = 0;
	long home = one_node(v, r);
	if (home >= 0) {
		put(v, (size_t)home, &v->ps, r->n_ps, o->ps, o->ps_pick, &o->nps);
		place_chief(v, r, home, o);
		put(v, (size_t)home, &v->wk, r->want_workers, o->w, o->w_pick, &o->nw);
		return;
	}

	home = ps_home(v, r);
	if (home >= 0) {
		put(v, (size_t)home, &v->ps, r->n_ps, o->ps, o->ps_pick, &o->nps);
	} else {
		/* No node takes every PS: spread them first-fit by name. */
		for (size_t i = 0; i < v->n && o->nps < r->n_ps; i++)
			while (o->nps < r->n_ps && room(v, i, &v->ps, 1) == 1)
				put(v, i, &v->ps, 1, o->ps, o->ps_pick, &o->nps);
		/* Without PS, no home means no node takes a single member. */
		if (o->nps < r->n_ps || o->nps == 0)
			return;
		home = o->ps[0];
	}
	/* The chief before the workers: it is required, they are elastic. */
	place_chief(v, r, home, o);

	int rest = r->want_workers;
	int64_t k = room(v, (size_t)home, &v->wk, rest);
	put(v, (size_t)home, &v->wk, k, o->w, o->w_pick, &o->nw);
	rest -= (int)k;

	/* Fill outward: the node that takes all the rest losing the queue the
	 * fewest GPUs, then the tightest; else the node that takes the most
	 * (then loses the fewest), until done or out of nodes. */
	while (rest > 0) {
		long pick = -1, big = -1;
		int64_t big_k = 0, pick_loss = 0, big_loss = 0;
		double pick_score = 0;
		for (size_t i = 0; i < v->n; i++) {
			if ((long)i == home)
				continue;
			int64_t c = room(v, i, &v->wk, rest);
			if (c == 0)
				continue;
			int64_t loss = v->n_keep ? loss_of(v, i, &v->wk, c) : 0;
			if (c == rest) {
				double s = score_after(v, i, &v->wk, c);
				if (pick < 0 || loss < pick_loss ||
				    (loss == pick_loss && s < pick_score)) {
					pick = (long)i;
					pick_score = s;
					pick_loss = loss;
				}
			} else if (c > big_k || (c == big_k && loss < big_loss)) {
				big = (long)i;
				big_k = c;
				big_loss = loss;
			}
		}
		if (pick < 0 && big < 0)
			break;
		long at = pick >= 0 ? pick : big;
		int64_t c = pick >= 0 ? rest : big_k;
		put(v, (size_t)at, &v->wk, c, o->w, o->w_pick, &o->nw);
		rest -= (int)c;
	}
}

/* Key of a node for the next replica of place_keep(): less loss, then a
 * node the job uses, then tighter; by name last (the walk's order). */
struct keep_key {
	int64_t loss;
	bool mine;
	double left;
};

static bool keep_better(const struct keep_key *a, const struct keep_key *b)
{
	if (a->loss != b->loss)
		return a->loss < b->loss;
	if (a->mine != b->mine)
		return a->mine;
	return a->left < b->left;
}

/* The node for k copies of r by keep_key (-1: none takes them). mine marks
 * the job's nodes; mine_list[0..n_mine) lists them, looked at first: a
 * node of the job that loses nothing is the best any node can be but for
 * tightness, so the other nodes are walked only when none does. */
static long keep_pick(const struct view *v, const struct replica *r, int64_t k, const bool *mine,
                      const int *mine_list, int n_mine)
{
	long best = -1;
	struct keep_key bk = {0};
	for (int m = 0; m < n_mine; m++) {
		size_t i = (size_t)mine_list[m];
		if (room(v, i, r, k) < k || loss_of(v, i, r, k) > 0)
			continue;
		struct keep_key key = {0, true, score_after(v, i, r, k)};
		if (best < 0 || keep_better(&key, &bk)) {
			best = (long)i;
			bk = key;
		}
	}
	if (best >= 0)
		return best;
	for (size_t i = 0; i < v->n; i++) {
		if (room(v, i, r, k) < k)
			continue;
		struct keep_key key = {loss_of(v, i, r, k), mine[i], score_after(v, i, r, k)};
		if (best < 0 || keep_better(&key, &bk)) {
			best = (long)i;
			bk = key;
		}
	}
	return best;
}

/*
 * The placement that keeps room for the queue: the workers one by one
 * (keep_pick), then all PS on one node by the same key (else one by one),
 * then the chief beside the first PS when it fits (else by the key); a
 * worker on the PS's node becomes worker 0. Consumes the view like place();
 * mine (v->n entries, all false) is scratch, mine_list too.
 */
static void place_keep(struct view *v, const struct drake_gang_req *r, struct placed *o, bool *mine,
                       int *mine_list)
{
	int n_mine = 0;
	o->nps = o->nw = o->nchief = 0;
	for (int n = 0; n < r->want_workers; n++) {
		long at = keep_pick(v, &v->wk, 1, mine, mine_list, n_mine);
		if (at < 0)
			break;
		put(v, (size_t)at, &v->wk, 1, o->w, NULL, &o->nw);
		if (!mine[at]) {
			mine[at] = true;
			mine_list[n_mine++] = (int)at;
		}
	}
	if (o->nw < r->min_workers)
		return;
	long home = r->n_ps ? keep_pick(v, &v->ps, r->n_ps, mine, mine_list, n_mine) : -1;
	if (home >= 0) {
		put(v, (size_t)home, &v->ps, r->n_ps, o->ps, NULL, &o->nps);
	} else {
		for (int n = 0; n < r->n_ps; n++) {
			long at = keep_pick(v, &v->ps, 1, mine, mine_list, n_mine);
			if (at < 0)
				return;
			put(v, (size_t)at, &v->ps, 1, o->ps, NULL, &o->nps);
		}
		if (r->n_ps)
			home = o->ps[0];
	}
	if (r->n_chief) {
		long at = home >= 0 && room(v, (size_t)home, &v->chief, 1) == 1
		              ? home
		              : keep_pick(v, &v->chief, 1, mine, mine_list, n_mine);
		if (at < 0)
			return;
		int count = 0;
		put(v, (size_t)at, &v->chief, 1, &o->chief, NULL, &count);
		o->nchief = count;
	}
	/* worker 0 coordinates: beside the PS when one is there */
	for (int n = 0; home >= 0 && n < o->nw; n++) {
		if (o->w[n] == home) {
			o->w[n] = o->w[0];
			o->w[0] = (int)home;
			break;
		}
	}
}

static bool placed_all(const struct drake_gang_req *r, const struct placed *o)
{
	return o->nps == r->n_ps && o->nchief == r->n_chief && o->nw >= r->min_workers;
}

static void fill_view(struct view *v, const struct drake_cluster *c, int empty)
{
	v->n = c->n;
	v->nodes = c->nodes;
	for (size_t i = 0; i < c->n; i++) {
		/* a tainted node is open to the roles it lets in (fit() checks) */
		bool usable = c->nodes[i].schedulable ||
		              (c->nodes[i].tainted && (v->ps.ok || v->wk.ok || v->chief.ok));
		bool open = usable && !empty;
		if (!usable)
			drake_res_zero(&v->free[i]);
		else if (empty)
			v->free[i] = c->nodes[i].alloc;
		else
			drake_cluster_free(c, i, &v->free[i]);
		if (v->vg && open)
			v->vg[i] = c->nodes[i].vgpus;
		else if (v->vg)
			v->vg[i].n = 0;
	}
}

static int64_t largest_block(const struct view *v, size_t *at)
{
	int64_t best = 0;
	*at = 0;
	for (size_t i = 0; i < v->n; i++) {
		int64_t k = room(v, i, &v->wk, DRAKE_GANG_MAX_REPLICAS);
		if (k > best) {
			best = k;
			*at = i;
		}
	}
	return best;
}

/* "cpu=1 mem=1Gi gpu=0", plus " gpu_share=0.5 gpu_mem=4Gi" with a share. */
static const char *fmt_replica(const struct replica *r, char *buf, size_t len)
{
	char res[96], share[64] = "";
	drake_res_format(&r->res, res, sizeof(res));
	if (r->share.milli > 0)
		drake_share_format(&r->share, share, sizeof(share));
	snprintf(buf, len, "%s%s%s", res, share[0] ? " " : "", share);
	return buf;
}

/* When no GPU anywhere holds a share's memory, says so (and returns true). */
static bool share_never_fits(const struct drake_cluster *c, const struct replica *r,
                             const char *who, char *why, size_t len)
{
	if (r->share.milli <= 0 || r->share.mem_bytes <= 0)
		return false;
	int64_t most = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->nodes[i].schedulable && c->nodes[i].alloc.gpu > 0 &&
		    c->nodes[i].gpu_mem > most)
			most = c->nodes[i].gpu_mem;
	if (most >= r->share.mem_bytes)
		return false;
	char want[32], have[32];
	drake_res_format_bytes(r->share.mem_bytes, want, sizeof(want));
	if (most == 0)
		drake_errorf(DRAKE_ELIMIT, why, len,
		             "can never fit: %s asks for %s of GPU memory (%s) and no schedulable "
		             "node gives its GPUs' memory (%s)",
		             who, want, DRAKE_KUBESHARE_GPU_MEM, DRAKE_KUBESHARE_GPU_INFO);
	else
		drake_errorf(DRAKE_ELIMIT, why, len,
		             "can never fit: %s asks for %s of GPU memory (%s), more than any GPU "
		             "has (largest %s)",
		             who, want, DRAKE_KUBESHARE_GPU_MEM,
		             drake_res_format_bytes(most, have, sizeof(have)));
	return true;
}

/* " + 1 chief (cpu=...)" for a job with a chief, "" without. */
static const char *fmt_chief(const struct drake_gang_req *r, const struct view *v, char *buf,
                             size_t len)
{
	char res[160];
	if (r->n_chief)
		snprintf(buf, len, " + 1 chief (%s)", fmt_replica(&v->chief, res, sizeof(res)));
	else if (len)
		buf[0] = '\0';
	return buf;
}

static drake_err explain(const struct drake_cluster *c, const struct drake_gang_req *r,
                         struct view *v, struct placed *o, char *why, size_t len)
{
	char wres[160], pres[160], cres[200];
	fmt_replica(&v->wk, wres, sizeof(wres));
	fmt_replica(&v->ps, pres, sizeof(pres));
	fmt_chief(r, v, cres, sizeof(cres));
	size_t at;

	fill_view(v, c, 1);
	int64_t cap_block = largest_block(v, &at);
	place(v, r, o);
	if (!placed_all(r, o)) {
		if ((r->n_ps && share_never_fits(c, &v->ps, "a PS", why, len)) ||
		    (r->n_chief && share_never_fits(c, &v->chief, "the chief", why, len)) ||
		    (r->min_workers && share_never_fits(c, &v->wk, "a worker", why, len)))
			return DRAKE_ELIMIT;
		return drake_errorf(
		    DRAKE_ELIMIT, why, len,
		    "can never fit: needs %d PS (%s)%s + %d workers (%s); the empty "
		    "cluster%s takes %d PS + %d workers%s, at most %lld on one node",
		    r->n_ps, pres, cres, r->min_workers, wres,
		    r->ps_ok || r->worker_ok || r->chief_ok
		        ? " (the nodes its node selector, affinity and tolerations allow)"
		        : "",
		    o->nps, o->nw,
		    !r->n_chief ? ""
		    : o->nchief ? " and the chief"
		                : " but not the chief",
		    (long long)cap_block);
	}

	fill_view(v, c, 0);
	int64_t block = largest_block(v, &at);
	struct drake_res tot;
	drake_res_zero(&tot);
	for (size_t i = 0; i < v->n; i++)
		drake_res_add(&tot, &v->free[i]);
	place(v, r, o);
	if (o->nps < r->n_ps)
		return drake_errorf(DRAKE_ESTATE, why, len,
		                    "waiting: needs %d PS (%s); only %d fit now", r->n_ps, pres,
		                    o->nps);
	if (o->nchief < r->n_chief)
		return drake_errorf(DRAKE_ESTATE, why, len,
		                    "waiting: needs %d PS%s + %d workers; the chief fits on no "
		                    "node now",
		                    r->n_ps, cres, r->min_workers);
	return drake_errorf(DRAKE_ESTATE, why, len,
	                    "waiting: needs %d PS%s + %d workers (%s each); %d workers fit now, "
	                    "largest free block %lld workers%s%s, %lld GPUs free",
	                    r->n_ps, r->n_chief ? " + 1 chief" : "", r->min_workers, wres, o->nw,
	                    (long long)block, block ? " on " : "", block ? c->nodes[at].name : "",
	                    (long long)tot.gpu);
}

/* A role the job needs whose mask lets it onto no node: the job waits
 * for a node to match (ESTATE), whatever the room. */
static drake_err no_node_for(const struct drake_cluster *c, const struct drake_gang_req *req,
                             const struct view *v, char *why, size_t len)
{
	const struct {
		const struct replica *r;
		bool needed;
		const char *who;
	} roles[] = {{&v->ps, req->n_ps > 0, "the PS"},
	             {&v->chief, req->n_chief > 0, "the chief"},
	             {&v->wk, req->min_workers > 0, "the workers"}};
	for (size_t k = 0; k < sizeof(roles) / sizeof(roles[0]); k++) {
		if (!roles[k].needed || !roles[k].r->ok)
			continue;
		bool any = false;
		for (size_t i = 0; i < c->n && !any; i++)
			any = allowed(&c->nodes[i], roles[k].r, i);
		if (!any)
			return drake_errorf(
			    DRAKE_ESTATE, why, len,
			    "waiting: no schedulable node matches the node selector "
			    "and required affinity of %s and has only taints they "
			    "tolerate",
			    roles[k].who);
	}
	return DRAKE_OK;
}

/* o holds place()'s plan, v what it left. Tries place_keep() and, when it
 * leaves the queue more usable GPUs on no more nodes, puts its plan in o
 * instead (it places every worker that fits, so never fewer than o). Only
 * for jobs that share no GPU (there are no vGPU picks to carry). */
static drake_err keep_room(const struct drake_cluster *c, const struct drake_gang_req *req,
                           struct view *v, struct placed *o, char *why, size_t len)
{
	int64_t first = usable_all(v);
	struct placed k = {.ps = malloc(((size_t)req->n_ps + 1) * sizeof(int)),
	                   .w = malloc(((size_t)req->want_workers + 1) * sizeof(int))};
	bool *mine = calloc(c->n + 1, sizeof(bool));
	int *mine_list = malloc((c->n + 1) * sizeof(int));
	drake_err err = DRAKE_OK;
	if (!k.ps || !k.w || !mine || !mine_list) {
		err = drake_errorf(DRAKE_ENOMEM, why, len, "out of memory planning");
		goto out;
	}
	fill_view(v, c, 0);
	place_keep(v, req, &k, mine, mine_list);
	if (placed_all(req, &k) && usable_all(v) > first &&
	    span(k.ps, k.nps, k.w, k.nw, k.nchief, k.chief) <=
	        span(o->ps, o->nps, o->w, o->nw, o->nchief, o->chief)) {
		int *t = o->ps;
		o->ps = k.ps;
		k.ps = t;
		t = o->w;
		o->w = k.w;
		k.w = t;
		o->nps = k.nps;
		o->nw = k.nw;
		o->nchief = k.nchief;
		o->chief = k.chief;
	}
out:
	free(k.ps);
	free(k.w);
	free(mine);
	free(mine_list);
	return err;
}

drake_err drake_plan_gang(const struct drake_cluster *c, const struct drake_gang_req *req,
                          struct drake_plan *out, char *why, size_t len)
{
	drake_err err = drake_gang_req_check(req, why, len);
	if (err)
		return err;
	struct view v = {.seed = req->vgpu_seed,
	                 .ps = {req->ps, req->ps_share, req->ps_ok},
	                 .wk = {req->worker, req->worker_share, req->worker_ok},
	                 .chief = {req->chief, req->chief_share, req->chief_ok},
	                 .keep = req->keep,
	                 .n_keep = req->n_keep};
	if ((err = no_node_for(c, req, &v, why, len)))
		return err;
	bool ps_share = req->ps_share.milli > 0, w_share = req->worker_share.milli > 0;
	bool c_share = req->n_chief && req->chief_share.milli > 0;
	struct drake_vgpu_pick chief_pick = {{0}, false};
	struct placed o = {.ps = malloc(((size_t)req->n_ps + 1) * sizeof(int)),
	                   .w = malloc(((size_t)req->want_workers + 1) * sizeof(int)),
	                   .chief_pick = c_share ? &chief_pick : NULL};
	if (ps_share)
		o.ps_pick = calloc((size_t)req->n_ps + 1, sizeof(*o.ps_pick));
	if (w_share)
		o.w_pick = calloc((size_t)req->want_workers + 1, sizeof(*o.w_pick));
	if (ps_share || w_share || c_share)
		v.vg = malloc((c->n + 1) * sizeof(*v.vg));
	v.free = malloc((c->n + 1) * sizeof(*v.free));
	if (!o.ps || !o.w || !v.free || (ps_share && !o.ps_pick) || (w_share && !o.w_pick) ||
	    ((ps_share || w_share || c_share) && !v.vg)) {
		err = drake_errorf(DRAKE_ENOMEM, why, len, "out of memory planning");
		goto out;
	}
	fill_view(&v, c, 0);
	place(&v, req, &o);
	if (placed_all(req, &o) && v.n_keep > 0 && !v.vg &&
	    (err = keep_room(c, req, &v, &o, why, len)))
		goto out;
	if (placed_all(req, &o)) {
		*out = (struct drake_plan){
		    .n_ps = o.nps,
		    .n_workers = o.nw,
		    .ps_node = o.ps,
		    .worker_node = o.w,
		    .n_chief = o.nchief,
		    .chief_node = o.nchief ? o.chief : 0,
		    .nodes_spanned = span(o.ps, o.nps, o.w, o.nw, o.nchief, o.chief),
		    .ps_vgpu = o.ps_pick,
		    .worker_vgpu = o.w_pick,
		    .chief_vgpu = chief_pick,
		};
		o.ps = o.w = NULL;
		o.ps_pick = o.w_pick = NULL;
		err = DRAKE_OK;
		if (why && len)
			why[0] = '\0';
		goto out;
	}
	err = explain(c, req, &v, &o, why, len);
out:
	free(o.ps);
	free(o.w);
	free(o.ps_pick);
	free(o.w_pick);
	free(v.free);
	free(v.vg);
	return err;
}
