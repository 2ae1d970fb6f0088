/*
 * migrate.c - overload and explicit migration decisions (the rules are in
 * migrate.h).
 *
 * mig_decide works on its own copy of each node's used resources and
 * loads, and keeps the schedulable nodes sorted by (load, index), so each
 * decision sees what the earlier ones did and finds its target by walking
 * up from the least-loaded node.
 */
#include "migrate/migrate.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mig_defaults(struct mig_opts *o)
{
	o->k = 1.0;
	o->cooldown = 30;
	o->cap = 3;
	o->tail = 0.05;
	drake_speed_defaults(&o->speed);
	o->better_placement = true;
}

drake_err mig_opts_check(const struct mig_opts *o, char *why, size_t len)
{
	if (!(o->k >= 0) || !isfinite(o->k))
		return drake_errorf(DRAKE_EINVAL, why, len, "k %g must be a number >= 0", o->k);
	if (!(o->cooldown >= 0) || !isfinite(o->cooldown))
		return drake_errorf(DRAKE_EINVAL, why, len, "cool-down %g must be >= 0 s",
		                    o->cooldown);
	if (o->cap < 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "cap %d must be >= 0", o->cap);
	if (!(o->tail >= 0 && o->tail <= 1))
		return drake_errorf(DRAKE_EINVAL, why, len, "tail %g is outside [0, 1]", o->tail);
	if (!(o->speed.locality_penalty >= 0) || !(o->speed.rescale_pause >= 0) ||
	    !(o->speed.scaling_loss >= 0))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "the speed model's loss, penalty and pause must be >= 0");
	return DRAKE_OK;
}

static double ratio(int64_t used, int64_t alloc)
{
	return used > 0 ? (double)used / (double)alloc : 0;
}

/* One dimension's share of alloc: requests used, or, when the node's
 * usage is measured and higher, that measure moved by the same change in
 * requests as `used` has from the snapshot's (a replica moved in or out). */
static double share(int64_t used, int64_t snap_used, int64_t measured, bool known, int64_t alloc)
{
	if (known && measured + (used - snap_used) > used)
		used = measured + (used - snap_used);
	return ratio(used, alloc);
}

/* The load of node nd were its used resources `used`. */
static double load_of(const struct drake_node *nd, const struct drake_res *used)
{
	const struct drake_usage *u = &nd->usage;
	double sum = 0;
	int dims = 0;
	if (nd->alloc.cpu_milli > 0) {
		sum += share(used->cpu_milli, nd->used.cpu_milli, u->cpu_milli, u->known,
		             nd->alloc.cpu_milli);
		dims++;
	}
	if (nd->alloc.mem_bytes > 0) {
		sum += share(used->mem_bytes, nd->used.mem_bytes, u->mem_bytes, u->known,
		             nd->alloc.mem_bytes);
		dims++;
	}
	if (nd->alloc.gpu > 0) {
		sum += ratio(used->gpu, nd->alloc.gpu);
		dims++;
	}
	return dims ? sum / dims : 0;
}

double mig_node_load(const struct drake_cluster *c, size_t node)
{
	if (node >= c->n)
		return 0;
	return load_of(&c->nodes[node], &c->nodes[node].used);
}

/* Two passes: the mean, then the squared deviations from it. The loads
 * come from load[] when given, else from the snapshot. */
static void spread_of(const struct drake_cluster *c, const double *load, struct mig_spread *s,
                      double *m2)
{
	*s = (struct mig_spread){0};
	*m2 = 0;
	double sum = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->nodes[i].schedulable) {
			sum += load ? load[i] : mig_node_load(c, i);
			s->n++;
		}
	if (s->n == 0)
		return;
	s->mean = sum / (double)s->n;
	for (size_t i = 0; i < c->n; i++)
		if (c->nodes[i].schedulable) {
			double d = (load ? load[i] : mig_node_load(c, i)) - s->mean;
			*m2 += d * d;
		}
	s->std = sqrt(*m2 / (double)s->n);
}

void mig_spread(const struct drake_cluster *c, struct mig_spread *s)
{
	double m2;
	spread_of(c, NULL, s, &m2);
}

static bool over(double load, const struct mig_spread *s, double k)
{
	return load - s->mean > k * s->std;
}

bool mig_overloaded(const struct drake_cluster *c, size_t node, const struct mig_spread *s,
                    double k)
{
	return node < c->n && c->nodes[node].schedulable && over(mig_node_load(c, node), s, k);
}

static void say(char *buf, size_t len, const char *fmt, ...) DRAKE_PRINTF(3, 4);

/* snprintf for messages that may be cut at the buffer's end (names are up
 * to 253 characters; a why is MIG_WHY_MAX). */
static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (len > 0)
		vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static const char *str(const char *s)
{
	return s ? s : "";
}

static const char *plural(enum drake_role role)
{
	switch (role) {
	case DRAKE_ROLE_PS: return "PS";
	case DRAKE_ROLE_CHIEF: return "chiefs";
	default: return "workers";
	}
}

/*
 * The replica rules: cap, tail, cool-down and, for a worker (a PS or chief
 * too unless asked for explicitly), the gang minimum with `moving` members
 * of its job and role already on the way. True (with why) when x may not
 * move now.
 */
static bool refused(const struct mig_replica *x, double now, const struct mig_opts *o, int moving,
                    bool asked, char *why, size_t len)
{
	if (x->migrations >= o->cap) {
		say(why, len, "moved %d time%s already (cap %d)", x->migrations,
		    x->migrations == 1 ? "" : "s", o->cap);
		return true;
	}
	if (x->progress >= 0 && x->progress >= 1 - o->tail) {
		say(why, len, "in the last %g%% of its steps (at %.0f%%)", o->tail * 100,
		    x->progress * 100);
		return true;
	}
	if (x->last_migrated >= 0 && now - x->last_migrated < o->cooldown) {
		double ago = now - x->last_migrated;
		say(why, len, "cooling down: moved %.0f s ago (cool-down %g s)", ago > 0 ? ago : 0,
		    o->cooldown);
		return true;
	}
	bool exempt = asked && (x->role == DRAKE_ROLE_PS || x->role == DRAKE_ROLE_CHIEF);
	int left = x->role_live - 1 - moving;
	if (!exempt && left < x->role_min) {
		say(why, len, "its job would have %d of the %d %s it needs while it moves",
		    left > 0 ? left : 0, x->role_min, plural(x->role));
		return true;
	}
	return false;
}

/* Why req does not fit in free: the first short resource. */
static void shortfall(const struct drake_cluster *c, const struct drake_res *req,
                      const struct drake_res *free_, char *buf, size_t len)
{
	char a[32], b[32];
	if (req->gpu > free_->gpu) {
		say(buf, len, "needs %" PRId64 " GPU%s, %" PRId64 " free", req->gpu,
		    req->gpu == 1 ? "" : "s", free_->gpu);
	} else if (req->cpu_milli > free_->cpu_milli) {
		say(buf, len, "needs %g CPUs, %g free", (double)req->cpu_milli / 1000,
		    (double)free_->cpu_milli / 1000);
	} else if (req->mem_bytes > free_->mem_bytes) {
		say(buf, len, "needs %s memory, %s free",
		    drake_res_format_bytes(req->mem_bytes, a, sizeof(a)),
		    drake_res_format_bytes(free_->mem_bytes, b, sizeof(b)));
	} else {
		for (int k = 0; k < DRAKE_RES_MAX_EXT; k++)
			if (req->ext[k] > 0 && req->ext[k] > free_->ext[k]) {
				say(buf, len, "needs %" PRId64 " %s, %" PRId64 " free", req->ext[k],
				    k < c->names.n ? c->names.name[k] : "of an extended resource",
				    free_->ext[k]);
				return;
			}
		say(buf, len, "fits");
	}
}

/* What is left of alloc once used is taken, never below zero. */
static void free_of(const struct drake_node *nd, const struct drake_res *used,
                    struct drake_res *out)
{
	*out = nd->alloc;
	drake_res_sub(out, used);
	out->cpu_milli = out->cpu_milli > 0 ? out->cpu_milli : 0;
	out->mem_bytes = out->mem_bytes > 0 ? out->mem_bytes : 0;
	out->gpu = out->gpu > 0 ? out->gpu : 0;
	for (int k = 0; k < DRAKE_RES_MAX_EXT; k++)
		out->ext[k] = out->ext[k] > 0 ? out->ext[k] : 0;
}

/* ---- overload and better placement ------------------------------------ */

struct slot {
	double load;
	size_t node;
};

/* Most loaded first, ties by node order. */
static int by_load_desc(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->load != y->load)
		return x->load > y->load ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

struct member {
	const char *job;
	size_t i;
};

static int by_job(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int k = strcmp(x->job, y->job);
	if (k)
		return k;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The state of one mig_decide_all call. */
struct work {
	const struct drake_cluster *c;
	const struct mig_replica *r;
	size_t nr;
	const struct mig_opts *o;
	double now;
	struct drake_speed sp;  /* o->speed, node_gpus from the snapshot */
	struct drake_res *used; /* per node, as the decisions so far leave it */
	double *load;           /* per node, from used */
	int *node;              /* per replica, as the decisions so far leave it */
	size_t *jid;            /* per replica: its job */
	struct member *mem;     /* replicas by job: job j is mem[first[j] .. first[j + 1]) */
	size_t *first;
	int *workers; /* per job: its live workers */
	size_t njobs;
	struct mig_decision *out;
	size_t n, cap;
};

static bool usable(const struct work *w, size_t i)
{
	return w->node[i] >= 0 && (size_t)w->node[i] < w->c->n;
}

/* Groups the replicas by job (name order), so each job's members and
 * nodes are found without a walk over every replica. */
static void group(struct work *w)
{
	for (size_t i = 0; i < w->nr; i++)
		w->mem[i] = (struct member){str(w->r[i].job), i};
	qsort(w->mem, w->nr, sizeof(w->mem[0]), by_job);
	w->njobs = 0;
	for (size_t k = 0; k < w->nr; k++) {
		if (k == 0 || strcmp(w->mem[k].job, w->mem[k - 1].job) != 0) {
			w->first[w->njobs] = k;
			w->workers[w->njobs++] = 0;
		}
		size_t i = w->mem[k].i, j = w->njobs - 1;
		w->jid[i] = j;
		w->workers[j] += usable(w, i) && w->r[i].role == DRAKE_ROLE_WORKER;
	}
	w->first[w->njobs] = w->nr;
}

/* Replicas of job j on node nd, x excluded (x may be (size_t)-1). */
static int on_node(const struct work *w, size_t j, int nd, size_t x)
{
	int k = 0;
	for (size_t m = w->first[j]; m < w->first[j + 1]; m++) {
		size_t i = w->mem[m].i;
		k += i != x && w->node[i] == nd;
	}
	return k;
}

/* Nodes job j spans. */
static int span(const struct work *w, size_t j)
{
	int n = 0;
	for (size_t m = w->first[j]; m < w->first[j + 1]; m++) {
		size_t i = w->mem[m].i;
		if (!usable(w, i))
			continue;
		bool seen = false;
		for (size_t q = w->first[j]; q < m && !seen; q++)
			seen = w->node[w->mem[q].i] == w->node[i];
		n += !seen;
	}
	return n;
}

/* The moved job's modelled gain, in seconds, for replica x going from a
 * span of n nodes to n2 (see migrate.h). */
static double gain_of(const struct work *w, size_t x, int n, int n2)
{
	const struct mig_replica *y = &w->r[x];
	int wk = w->workers[w->jid[x]];
	int g = (int)(y->req.gpu > 0 ? (y->req.gpu > 1 << 20 ? 1 << 20 : y->req.gpu) : 0);
	double before = drake_speed_rate(&w->sp, wk, g, n);
	double after = drake_speed_rate(&w->sp, wk, g, n2);
	double e = drake_speed_remaining(y->admitted, y->progress, w->now);
	double frac = after > 0 ? 1 - before / after : 0;
	return e * frac - w->sp.rescale_pause;
}

/* Members of job and role moving in the decisions made so far. */
static int moving(const struct work *w, const struct mig_replica *x)
{
	int n = 0;
	for (size_t d = 0; d < w->n; d++) {
		const struct mig_replica *y = &w->r[w->out[d].replica];
		n += y->role == x->role && strcmp(str(y->job), str(x->job)) == 0;
	}
	return n;
}

static bool decided(const struct work *w, size_t i)
{
	for (size_t d = 0; d < w->n; d++)
		if (w->out[d].replica == (int)i)
			return true;
	return false;
}

/* Worker i may move now (safety rules, not moved in this call). */
static bool movable(const struct work *w, size_t i)
{
	const struct mig_replica *x = &w->r[i];
	char why[MIG_WHY_MAX];
	return usable(w, i) && x->role == DRAKE_ROLE_WORKER && !decided(w, i) &&
	       !refused(x, w->now, w->o, moving(w, x), false, why, sizeof(why));
}

/* Node t takes replica i: schedulable, not its node, room for it. */
static bool takes(const struct work *w, size_t i, size_t t)
{
	const struct drake_cluster *c = w->c;
	struct drake_res room;
	if (!c->nodes[t].schedulable || (int)t == w->node[i])
		return false;
	free_of(&c->nodes[t], &w->used[t], &room);
	return drake_res_fits(&w->r[i].req, &room);
}

static drake_err push(struct work *w, const struct mig_decision *d)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		struct mig_decision *p = realloc(w->out, cap * sizeof(*p));
		if (!p)
			return DRAKE_ENOMEM;
		w->out = p;
		w->cap = cap;
	}
	w->out[w->n++] = *d;
	return DRAKE_OK;
}

/* Applies the move of replica i to dst in the working state. */
static void move_to(struct work *w, size_t i, size_t dst)
{
	const struct drake_cluster *c = w->c;
	size_t src = (size_t)w->node[i];
	drake_res_sub(&w->used[src], &w->r[i].req);
	drake_res_add(&w->used[dst], &w->r[i].req);
	w->load[src] = load_of(&c->nodes[src], &w->used[src]);
	w->load[dst] = load_of(&c->nodes[dst], &w->used[dst]);
	w->node[i] = (int)dst;
}

/* A candidate move and how it ranks. */
struct cand {
	int i, to;
	int n, n2;      /* its job's span before and after */
	double gain;    /* the moved job's, seconds */
	int plan_nodes; /* better placement: the waiting job's plan's span */
	double to_load; /* the target's load before the move */
};

/* Overload: a before b. */
static bool better_overload(const struct work *w, const struct cand *a, const struct cand *b)
{
	if (b->i < 0)
		return true;
	if (a->gain != b->gain)
		return a->gain > b->gain;
	if (a->n - a->n2 != b->n - b->n2)
		return a->n - a->n2 > b->n - b->n2;
	if (a->to_load != b->to_load)
		return a->to_load < b->to_load;
	int k = strcmp(str(w->r[a->i].pod), str(w->r[b->i].pod));
	if (k)
		return k < 0;
	return a->i != b->i ? a->i < b->i : a->to < b->to;
}

/* The best move off hot node src (c.i < 0: none worth making). */
static struct cand best_move(const struct work *w, size_t src)
{
	struct cand best = {.i = -1};
	for (size_t i = 0; i < w->nr; i++) {
		if (w->node[i] != (int)src || !movable(w, i))
			continue;
		size_t j = w->jid[i];
		int n = span(w, j);
		bool alone = on_node(w, j, (int)src, i) == 0;
		for (size_t t = 0; t < w->c->n; t++) {
			if (!takes(w, i, t))
				continue;
			int n2 = n - alone + (on_node(w, j, (int)t, i) == 0);
			if (n2 >= n)
				continue; /* spreads it or keeps it: no gain, a pause */
			struct cand k = {(int)i, (int)t,    n, n2, gain_of(w, i, n, n2),
			                 0,      w->load[t]};
			if (k.gain > 0 && better_overload(w, &k, &best))
				best = k;
		}
	}
	return best;
}

/* How a target of job j is named in a why: its PS's node or another. */
static const char *whose(const struct work *w, size_t j, size_t t)
{
	for (size_t m = w->first[j]; m < w->first[j + 1]; m++) {
		size_t i = w->mem[m].i;
		if (w->node[i] == (int)t && w->r[i].role != DRAKE_ROLE_WORKER)
			return "its PS's node";
	}
	return "a node of its job";
}

/* Node src is contended: replicas of two jobs or more, or pods drake does
 * not move beside one job's. */
static bool contended(const struct work *w, size_t src)
{
	struct drake_res mine = {0};
	size_t job = (size_t)-1;
	for (size_t i = 0; i < w->nr; i++) {
		if (w->node[i] != (int)src)
			continue;
		if (job != (size_t)-1 && w->jid[i] != job)
			return true;
		job = w->jid[i];
		drake_res_add(&mine, &w->r[i].req);
	}
	const struct drake_res *u = &w->c->nodes[src].used;
	return u->cpu_milli > mine.cpu_milli || u->mem_bytes > mine.mem_bytes || u->gpu > mine.gpu;
}

/* The overloaded, contended nodes, most loaded first, judged on the
 * snapshot as given; *judged their spread. */
static size_t hot_nodes(const struct work *w, struct slot *hot, struct mig_spread *judged)
{
	const struct drake_cluster *c = w->c;
	double m2;
	spread_of(c, w->load, judged, &m2);
	size_t n_hot = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->nodes[i].schedulable && over(w->load[i], judged, w->o->k) && contended(w, i))
			hot[n_hot++] = (struct slot){w->load[i], i};
	qsort(hot, n_hot, sizeof(hot[0]), by_load_desc);
	return n_hot;
}

static drake_err overload(struct work *w, const struct slot *hot, size_t n_hot,
                          const struct mig_spread *judged)
{
	const struct drake_cluster *c = w->c;
	for (size_t h = 0; h < n_hot; h++) {
		size_t src = hot[h].node;
		struct cand k = best_move(w, src);
		if (k.i < 0)
			continue;
		const struct mig_replica *x = &w->r[k.i];
		struct mig_decision d = {.replica = k.i,
		                         .from = (int)src,
		                         .to = k.to,
		                         .reason = MIG_OVERLOAD,
		                         .gain = k.gain};
		say(d.why, sizeof(d.why),
		    "%s is overloaded (load %.2f%s > mean %.2f + %g x std %.2f) and shared: worker "
		    "%s "
		    "of %s moves to %s, %s (%d -> %d nodes, saves %.0f s net of its restart)",
		    c->nodes[src].name, mig_node_load(c, src),
		    c->nodes[src].usage.known ? " measured" : "", judged->mean, w->o->k,
		    judged->std, str(x->pod), str(x->job), c->nodes[k.to].name,
		    whose(w, w->jid[k.i], (size_t)k.to), k.n, k.n2, k.gain);
		move_to(w, (size_t)k.i, (size_t)k.to);
		drake_err err = push(w, &d);
		if (err)
			return err;
	}
	return DRAKE_OK;
}

/* Better placement: a before b. */
static bool better_placement(const struct work *w, const struct cand *a, const struct cand *b)
{
	if (b->i < 0)
		return true;
	if (a->plan_nodes != b->plan_nodes)
		return a->plan_nodes < b->plan_nodes;
	if (a->gain != b->gain)
		return a->gain > b->gain;
	int k = strcmp(str(w->r[a->i].pod), str(w->r[b->i].pod));
	if (k)
		return k < 0;
	return a->i != b->i ? a->i < b->i : a->to < b->to;
}

/* The waiting job fits on c: plan_nodes its span, or -1; ENOMEM. */
static drake_err fits(const struct drake_cluster *c, const struct drake_gang_req *req,
                      int *plan_nodes, drake_err *verdict)
{
	struct drake_plan p = {0};
	char why[MIG_WHY_MAX];
	*verdict = drake_plan_gang(c, req, &p, why, sizeof(why));
	*plan_nodes = -1;
	if (*verdict == DRAKE_ENOMEM)
		return DRAKE_ENOMEM;
	if (*verdict == DRAKE_OK) {
		*plan_nodes = drake_plan_count_nodes(p.ps_node, p.n_ps, p.worker_node, p.n_workers);
		drake_plan_release(&p);
	}
	return DRAKE_OK;
}

/* The best move of a slow, spread job's worker that lets wt start, tried
 * on wc (the snapshot, charged and given back per candidate). */
static drake_err best_yield(struct work *w, struct drake_cluster *wc, const struct mig_waiting *wt,
                            struct cand *best)
{
	*best = (struct cand){.i = -1};
	for (size_t i = 0; i < w->nr; i++) {
		if (!mig_class_slow(w->r[i].cls) || !movable(w, i))
			continue;
		size_t j = w->jid[i], src = (size_t)w->node[i];
		int n = span(w, j);
		if (n < 2)
			continue; /* packed: moving it anywhere would spread it */
		bool alone = on_node(w, j, (int)src, i) == 0;
		for (size_t t = 0; t < w->c->n; t++) {
			if (on_node(w, j, (int)t, i) == 0 || !takes(w, i, t))
				continue; /* only onto a node of its own job */
			int n2 = n - alone, pn;
			drake_err verdict;
			drake_cluster_charge(wc, src, &w->r[i].req, -1);
			drake_cluster_charge(wc, t, &w->r[i].req, 1);
			drake_err e = fits(wc, wt->req, &pn, &verdict);
			drake_cluster_charge(wc, t, &w->r[i].req, -1);
			drake_cluster_charge(wc, src, &w->r[i].req, 1);
			if (e)
				return e;
			struct cand k = {(int)i, (int)t,    n, n2, gain_of(w, i, n, n2),
			                 pn,     w->load[t]};
			if (pn > 0 && better_placement(w, &k, best))
				*best = k;
		}
	}
	return DRAKE_OK;
}

static drake_err placement(struct work *w, const struct mig_waiting *wait, size_t nwait)
{
	if (nwait == 0 || !w->o->better_placement)
		return DRAKE_OK;
	bool any = false;
	for (size_t i = 0; i < w->nr && !any; i++)
		any = mig_class_slow(w->r[i].cls) && w->r[i].role == DRAKE_ROLE_WORKER;
	if (!any)
		return DRAKE_OK;
	struct drake_cluster wc;
	drake_cluster_init(&wc);
	drake_err err = drake_cluster_clone(&wc, w->c);
	for (size_t q = 0; !err && q < nwait && q < MIG_WAIT_LOOK; q++) {
		int pn;
		drake_err verdict;
		if (!wait[q].req)
			continue;
		err = fits(&wc, wait[q].req, &pn, &verdict);
		if (err || verdict != DRAKE_ESTATE)
			continue; /* it fits now (admission's), or never will */
		struct cand k;
		err = best_yield(w, &wc, &wait[q], &k);
		if (err || k.i < 0)
			break; /* the first that waits is the one to make room for */
		const struct mig_replica *x = &w->r[k.i];
		struct mig_decision d = {.replica = k.i,
		                         .from = w->node[k.i],
		                         .to = k.to,
		                         .reason = MIG_PLACEMENT,
		                         .gain = k.gain};
		say(d.why, sizeof(d.why),
		    "%s makes slow progress and yields: worker %s moves from %s to %s, a node of "
		    "its "
		    "own (%d -> %d nodes), so waiting job %s fits (on %d node%s)",
		    str(x->job), str(x->pod), w->c->nodes[w->node[k.i]].name,
		    w->c->nodes[k.to].name, k.n, k.n2, str(wait[q].job), k.plan_nodes,
		    k.plan_nodes == 1 ? "" : "s");
		move_to(w, (size_t)k.i, (size_t)k.to);
		err = push(w, &d);
		break;
	}
	drake_cluster_release(&wc);
	return err;
}

static drake_err decide(struct work *w, struct slot *hot, const struct mig_waiting *wait,
                        size_t nwait)
{
	const struct drake_cluster *c = w->c;
	for (size_t i = 0; i < c->n; i++) {
		w->used[i] = c->nodes[i].used;
		w->load[i] = load_of(&c->nodes[i], &w->used[i]);
	}
	for (size_t i = 0; i < w->nr; i++)
		w->node[i] = w->r[i].node >= 0 && (size_t)w->r[i].node < c->n ? w->r[i].node : -1;
	group(w);
	struct mig_spread judged;
	size_t n_hot = hot_nodes(w, hot, &judged);
	drake_err err = placement(w, wait, nwait);
	return err ? err : overload(w, hot, n_hot, &judged);
}

drake_err mig_decide_all(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                         const struct mig_waiting *wait, size_t nwait, double now,
                         const struct mig_opts *o, struct mig_decision **out, size_t *n)
{
	struct mig_opts def;
	if (!o) {
		mig_defaults(&def);
		o = &def;
	}
	*out = NULL;
	*n = 0;
	struct work w = {.c = c, .r = r, .nr = nr, .o = o, .now = now, .sp = o->speed};
	w.sp.node_gpus = drake_speed_node_gpus(c);
	size_t nn = c->n ? c->n : 1, rr = nr ? nr : 1;
	w.used = malloc(nn * sizeof(*w.used));
	w.load = malloc(nn * sizeof(*w.load));
	w.node = malloc(rr * sizeof(*w.node));
	w.jid = malloc(rr * sizeof(*w.jid));
	w.mem = malloc(rr * sizeof(*w.mem));
	w.first = malloc((rr + 1) * sizeof(*w.first));
	w.workers = malloc(rr * sizeof(*w.workers));
	struct slot *hot = malloc(nn * sizeof(*hot));
	drake_err err = DRAKE_ENOMEM;
	if (w.used && w.load && w.node && w.jid && w.mem && w.first && w.workers && hot)
		err = decide(&w, hot, wait, nwait);
	free(w.used);
	free(w.load);
	free(w.node);
	free(w.jid);
	free(w.mem);
	free(w.first);
	free(w.workers);
	free(hot);
	if (err) {
		free(w.out);
		return err;
	}
	*out = w.out;
	*n = w.n;
	return DRAKE_OK;
}

drake_err mig_decide(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                     double now, const struct mig_opts *o, struct mig_decision **out, size_t *n)
{
	return mig_decide_all(c, r, nr, NULL, 0, now, o, out, n);
}

/* ---- explicit ---------------------------------------------------------- */

drake_err mig_explicit(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                       size_t i, int away, int onto, bool pause_job, double now,
                       const struct mig_opts *o, struct mig_decision *out, char *why, size_t len)
{
	struct mig_opts def;
	if (!o) {
		mig_defaults(&def);
		o = &def;
	}
	if (i >= nr)
		return drake_errorf(DRAKE_EINVAL, why, len, "no replica %zu (there are %zu)", i,
		                    nr);
	if (away < -1 || (away >= 0 && (size_t)away >= c->n))
		return drake_errorf(DRAKE_EINVAL, why, len, "no node %d to move away from", away);
	if (onto < -1 || (onto >= 0 && (size_t)onto >= c->n))
		return drake_errorf(DRAKE_EINVAL, why, len, "no node %d to move onto", onto);
	const struct mig_replica *x = &r[i];
	if (x->node < 0 || (size_t)x->node >= c->n)
		return drake_errorf(DRAKE_ESTATE, why, len, "%s is not running on a node",
		                    str(x->pod));
	size_t src = (size_t)x->node;
	if (away >= 0 && (size_t)away != src)
		return drake_errorf(DRAKE_ESTATE, why, len, "%s runs on %s, not on %s", str(x->pod),
		                    c->nodes[src].name, c->nodes[away].name);
	if (x->role != DRAKE_ROLE_WORKER && !pause_job)
		return drake_errorf(DRAKE_ESTATE, why, len,
		                    "%s is the %s of %s: its job stops training while it moves, so "
		                    "only a request that says so moves it (\"pauseJob\": true)",
		                    str(x->pod), drake_role_name(x->role), str(x->job));
	char rule[MIG_WHY_MAX];
	if (refused(x, now, o, 0, true, rule, sizeof(rule)))
		return drake_errorf(DRAKE_ESTATE, why, len, "%s", rule);

	struct drake_res room;
	int to = -1;
	if (onto >= 0) {
		const struct drake_node *nd = &c->nodes[onto];
		if ((size_t)onto == src)
			return drake_errorf(DRAKE_ESTATE, why, len, "%s already runs on %s",
			                    str(x->pod), nd->name);
		if (!nd->schedulable)
			return drake_errorf(DRAKE_ESTATE, why, len,
			                    "%s is not schedulable (tainted or cordoned)",
			                    nd->name);
		free_of(nd, &nd->used, &room);
		if (!drake_res_fits(&x->req, &room)) {
			shortfall(c, &x->req, &room, rule, sizeof(rule));
			return drake_errorf(DRAKE_ESTATE, why, len, "%s has no room for it: %s",
			                    nd->name, rule);
		}
		to = onto;
	} else {
		double best = 0;
		for (size_t t = 0; t < c->n; t++) {
			const struct drake_node *nd = &c->nodes[t];
			if (t == src || !nd->schedulable)
				continue;
			free_of(nd, &nd->used, &room);
			double l = mig_node_load(c, t);
			if (drake_res_fits(&x->req, &room) && (to < 0 || l < best)) {
				to = (int)t;
				best = l;
			}
		}
		if (to < 0)
			return drake_errorf(DRAKE_ESTATE, why, len,
			                    "the only node that fits it is its own node %s",
			                    c->nodes[src].name);
	}

	*out = (struct mig_decision){
	    .replica = (int)i, .from = (int)src, .to = to, .reason = MIG_EXPLICIT};
	/* The caution first: names may fill the rest of the buffer. */
	const char *role = drake_role_name(x->role);
	if (x->role == DRAKE_ROLE_WORKER)
		say(out->why, sizeof(out->why),
		    "explicit request: worker %s of %s moves from %s to %s", str(x->pod),
		    str(x->job), c->nodes[src].name, c->nodes[to].name);
	else
		say(out->why, sizeof(out->why),
		    "explicit request, so a %s may move (its job runs without it while it moves; "
		    "the "
		    "backstop repairs or rolls back): %s of %s moves from %s to %s",
		    role, str(x->pod), str(x->job), c->nodes[src].name, c->nodes[to].name);
	return DRAKE_OK;
}
