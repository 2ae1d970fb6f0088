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
	return DRAKE_OK;
}

static double ratio(int64_t used, int64_t alloc)
{
	return used > 0 ? (double)used / (double)alloc : 0;
}

/* The load of node nd were its used resources `used`. */
static double load_of(const struct drake_node *nd, const struct drake_res *used)
{
	double sum = 0;
	int dims = 0;
	if (nd->alloc.cpu_milli > 0) {
		sum += ratio(used->cpu_milli, nd->alloc.cpu_milli);
		dims++;
	}
	if (nd->alloc.mem_bytes > 0) {
		sum += ratio(used->mem_bytes, nd->alloc.mem_bytes);
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

/* ---- overload ---------------------------------------------------------- */

struct slot {
	double load;
	size_t node;
};

static int by_load(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->load != y->load)
		return x->load < y->load ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* Most loaded first, ties by node order. */
static int by_load_desc(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->load != y->load)
		return x->load > y->load ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* The state of one mig_decide call. */
struct work {
	const struct drake_cluster *c;
	const struct mig_replica *r;
	size_t nr;
	const struct mig_opts *o;
	double now;
	struct drake_res *used; /* per node, as the decisions so far leave it */
	double *load;           /* per node, from used */
	struct slot *order;     /* schedulable nodes by (load, index) */
	size_t n_order;
	struct mig_spread s; /* of load */
	double m2;           /* sum of squared deviations from s.mean */
	struct mig_decision *out;
	size_t n, cap;
};

/* Moves node's entry in order to where its new load sorts. */
static void reorder(struct work *w, size_t node)
{
	size_t i = 0;
	while (i < w->n_order && w->order[i].node != node)
		i++;
	if (i == w->n_order)
		return;
	memmove(&w->order[i], &w->order[i + 1], (w->n_order - i - 1) * sizeof(w->order[0]));
	struct slot e = {w->load[node], node};
	size_t lo = 0, hi = w->n_order - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (by_load(&w->order[mid], &e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&w->order[lo + 1], &w->order[lo], (w->n_order - 1 - lo) * sizeof(w->order[0]));
	w->order[lo] = e;
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

/* The spread were node s at load ls and node t at load lt (both
 * schedulable): sum (L'_i - M)^2 - N (M' - M)^2 over N, from the current
 * mean M and m2, so no node is walked again. */
static double std_after(const struct work *w, size_t s, double ls, size_t t, double lt)
{
	double n = (double)w->s.n, mean = w->s.mean;
	double ds = w->load[s] - mean, dt = w->load[t] - mean;
	double m2 =
	    w->m2 - ds * ds - dt * dt + (ls - mean) * (ls - mean) + (lt - mean) * (lt - mean);
	double shift = ((ls - w->load[s]) + (lt - w->load[t])) / n;
	double var = (m2 - n * shift * shift) / n;
	return var > 0 ? sqrt(var) : 0;
}

/* The best move off node src, or -1 with *best_to untouched. */
static int best_move(const struct work *w, size_t src, int *best_to, double *best_std)
{
	const struct drake_cluster *c = w->c;
	int best = -1;
	for (size_t i = 0; i < w->nr; i++) {
		const struct mig_replica *x = &w->r[i];
		if (x->node < 0 || (size_t)x->node != src || x->role != DRAKE_ROLE_WORKER)
			continue;
		bool done = false;
		for (size_t d = 0; d < w->n && !done; d++)
			done = w->out[d].replica == (int)i;
		char why[MIG_WHY_MAX];
		if (done || refused(x, w->now, w->o, moving(w, x), false, why, sizeof(why)))
			continue;
		struct drake_res after = w->used[src];
		drake_res_sub(&after, &x->req);
		double ls = load_of(&c->nodes[src], &after);
		for (size_t k = 0; k < w->n_order; k++) {
			size_t t = w->order[k].node;
			struct drake_res room, then = w->used[t];
			if (t == src)
				continue;
			free_of(&c->nodes[t], &w->used[t], &room);
			if (!drake_res_fits(&x->req, &room))
				continue;
			drake_res_add(&then, &x->req);
			double lt = load_of(&c->nodes[t], &then);
			if (lt > ls)
				continue;
			double sd = std_after(w, src, ls, t, lt);
			bool better =
			    best < 0 || sd < *best_std ||
			    (sd == *best_std && strcmp(str(x->pod), str(w->r[best].pod)) < 0);
			if (sd < w->s.std && better) {
				best = (int)i;
				*best_to = (int)t;
				*best_std = sd;
			}
			break; /* the least-loaded node that takes it is its target */
		}
	}
	return best;
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

/* Records and applies the move of r[ri] from src to dst. */
static drake_err apply(struct work *w, int ri, size_t src, size_t dst, double k,
                       const struct mig_spread *judged)
{
	const struct drake_cluster *c = w->c;
	const struct mig_replica *x = &w->r[ri];
	double was = w->load[dst];
	struct mig_decision d = {
	    .replica = ri, .from = (int)src, .to = (int)dst, .reason = MIG_OVERLOAD};
	drake_res_sub(&w->used[src], &x->req);
	drake_res_add(&w->used[dst], &x->req);
	w->load[src] = load_of(&c->nodes[src], &w->used[src]);
	w->load[dst] = load_of(&c->nodes[dst], &w->used[dst]);
	reorder(w, src);
	reorder(w, dst);
	spread_of(c, w->load, &w->s, &w->m2);
	say(d.why, sizeof(d.why),
	    "%s is overloaded (load %.2f > mean %.2f + %g x std %.2f): worker %s of %s moves to "
	    "%s (load %.2f -> %.2f)",
	    c->nodes[src].name, mig_node_load(c, src), judged->mean, k, judged->std, str(x->pod),
	    str(x->job), c->nodes[dst].name, was, w->load[dst]);
	return push(w, &d);
}

static drake_err decide(struct work *w, struct slot *hot)
{
	const struct drake_cluster *c = w->c;
	for (size_t i = 0; i < c->n; i++) {
		w->used[i] = c->nodes[i].used;
		w->load[i] = load_of(&c->nodes[i], &w->used[i]);
		if (c->nodes[i].schedulable)
			w->order[w->n_order++] = (struct slot){w->load[i], i};
	}
	qsort(w->order, w->n_order, sizeof(w->order[0]), by_load);
	spread_of(c, w->load, &w->s, &w->m2);
	struct mig_spread judged = w->s;

	/* Overloaded nodes, judged once on the snapshot: most loaded first. */
	size_t n_hot = 0;
	for (size_t k = 0; k < w->n_order; k++)
		if (over(w->order[k].load, &judged, w->o->k))
			hot[n_hot++] = w->order[k];
	qsort(hot, n_hot, sizeof(hot[0]), by_load_desc);
	for (size_t h = 0; h < n_hot; h++) {
		int to = -1;
		double sd = 0;
		int ri = best_move(w, hot[h].node, &to, &sd);
		if (ri < 0)
			continue;
		drake_err err = apply(w, ri, hot[h].node, (size_t)to, w->o->k, &judged);
		if (err)
			return err;
	}
	return DRAKE_OK;
}

drake_err mig_decide(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                     double now, const struct mig_opts *o, struct mig_decision **out, size_t *n)
{
	struct mig_opts def;
	if (!o) {
		mig_defaults(&def);
		o = &def;
	}
	*out = NULL;
	*n = 0;
	struct work w = {.c = c, .r = r, .nr = nr, .o = o, .now = now};
	size_t nn = c->n ? c->n : 1;
	w.used = malloc(nn * sizeof(*w.used));
	w.load = malloc(nn * sizeof(*w.load));
	w.order = malloc(nn * sizeof(*w.order));
	struct slot *hot = malloc(nn * sizeof(*hot));
	drake_err err = DRAKE_ENOMEM;
	if (w.used && w.load && w.order && hot)
		err = decide(&w, hot);
	free(w.used);
	free(w.load);
	free(w.order);
	free(hot);
	if (err) {
		free(w.out);
		return err;
	}
	*out = w.out;
	*n = w.n;
	return DRAKE_OK;
}

/* ---- explicit ---------------------------------------------------------- */

drake_err mig_explicit(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                       size_t i, int away, int onto, double now, const struct mig_opts *o,
                       struct mig_decision *out, char *why, size_t len)
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
