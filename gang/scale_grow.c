/*
 * scale_grow.c - the decision step's growth (scale.h, rules 4 and 4a): the
 * batch of workers each job gains by its modelled speed, paid for against
 * the job's cost of a change over its expected remaining time, jobs served
 * by relative speed-up per GPU; and rule 0, giving back the workers a
 * job's own rates say slow it down. scale.c runs them inside the step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gang/planner.h"
#include "gang/scale_internal.h"

/* ---- growth ---- */

static int nodes_of(const struct drake_running_job *j, const struct work *w)
{
	return drake_plan_count_nodes(j->ps_node, j->n_ps, w->node, w->n);
}

static bool uses(const struct drake_running_job *j, const struct work *w, int node)
{
	for (int p = 0; p < j->n_ps; p++)
		if (j->ps_node[p] == node)
			return true;
	for (int p = 0; p < w->n; p++)
		if (w->node[p] == node)
			return true;
	return false;
}

/* The node the next worker of job j goes to: its PS's node, then the node
 * it already uses with most of its workers, then the node with most room
 * for its workers; -1 when none has room. extra[] counts the workers this
 * batch placed so far per node (already charged to the clone). */
static int next_node(const struct step *s, size_t j, const struct work *w)
{
	const struct drake_running_job *r = &s->r[j];
	const struct drake_cluster *c = &s->c;
	struct drake_res f;
	int home = r->n_ps > 0 ? r->ps_node[0] : (w->n > 0 ? w->node[0] : -1);
	if (home >= 0 && c->nodes[home].schedulable) {
		drake_cluster_free(c, (size_t)home, &f);
		if (drake_res_fits(&r->worker, &f))
			return home;
	}
	int best = -1, best_on = 0;
	for (int p = 0; p < w->n; p++) {
		int nd = w->node[p];
		if (nd == home || !c->nodes[nd].schedulable)
			continue;
		int on = 0;
		for (int q = 0; q < w->n; q++)
			on += w->node[q] == nd;
		if (on <= best_on)
			continue;
		drake_cluster_free(c, (size_t)nd, &f);
		if (drake_res_fits(&r->worker, &f)) {
			best = nd;
			best_on = on;
		}
	}
	if (best >= 0)
		return best;
	int64_t most = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (!c->nodes[i].schedulable || uses(r, w, (int)i))
			continue;
		drake_cluster_free(c, i, &f);
		int64_t k = drake_res_count_fit(&r->worker, &f, 1 << 20);
		if (k > most) {
			most = k;
			best = (int)i;
		}
	}
	return best;
}

/* Expected remaining time of a running job (see scale.h): its progress's
 * when it reports any, else the finished jobs' mean residual service over
 * its GPUs when that is known, else its age. */
double scale_remaining(const struct step *s, const struct drake_running_job *j, bool *by_history)
{
	if (by_history)
		*by_history = false;
	double g = drake_running_gpus(j);
	if (!(j->progress > 0) && j->service > 0 && g > 0) {
		double r = drake_history_residual(&s->o->history, j->service, NULL);
		if (r >= 0) {
			if (by_history)
				*by_history = true;
			return r / g;
		}
	}
	return drake_speed_remaining(j->admitted, j->progress, s->now);
}

/* Job r's speed at w workers over n nodes: the rate it was seen at there,
 * else its fitted model's (gang/speed_fit.h). */
static double rate_at(const struct drake_running_job *r, const struct work *w, int workers,
                      int nodes)
{
	for (int i = 0; r->obs && i < r->n_obs; i++)
		if (r->obs[i].workers == workers && r->obs[i].nodes == nodes && r->obs[i].rate > 0)
			return r->obs[i].rate;
	int g = (int)(r->worker.gpu > 0 ? r->worker.gpu : 0);
	return drake_speed_fitted_rate(&w->fit, workers, g, nodes);
}

/* The most workers growth may give job r: its max (rule 4a: the size it
 * asks for), or, when a size it
 * was seen at ran slower than a smaller one it was seen at (its rates,
 * gang/speed_fit.h), the size with the best rate seen: past it, more
 * workers are known not to pay, whatever the model promises of the sizes
 * in between. */
static int growth_cap(const struct step *s, const struct drake_running_job *r)
{
	int cap = s->to_asked ? scale_asked(r) : r->max_workers;
	if (cap > r->max_workers)
		cap = r->max_workers;
	int best = -1;
	for (int i = 0; r->obs && i < r->n_obs; i++)
		if (r->obs[i].rate > 0 && (best < 0 || r->obs[i].rate > r->obs[best].rate))
			best = i;
	if (best < 0)
		return cap;
	for (int i = 0; i < r->n_obs; i++)
		if (r->obs[i].workers > r->obs[best].workers && r->obs[i].rate < r->obs[best].rate)
			return r->obs[best].workers < cap ? r->obs[best].workers : cap;
	return cap;
}

/* What a change costs job r (its own cost, else rescale_pause). */
static double grow_pause(const struct step *s, const struct drake_running_job *r)
{
	return drake_speed_pause(&s->o->speed, r->cost.grow);
}

static double shrink_pause(const struct step *s, const struct drake_running_job *r)
{
	return drake_speed_pause(&s->o->speed, r->cost.shrink);
}

struct batch {
	int k;           /* workers to add */
	double before;   /* T now */
	double after;    /* T with them */
	double saved;    /* seconds saved net of the pause */
	bool by_history; /* the saving's E came from the finished jobs' service */
};

/*
 * The best batch for job j on the clone as it is: workers are placed one
 * by one (charged to the clone, then given back) and the count with the
 * highest modelled speed is kept. nodes[] receives its placement.
 */
static void best_batch(struct step *s, size_t j, int *nodes, struct batch *b)
{
	const struct drake_running_job *r = &s->r[j];
	struct work *w = &s->work[j];
	int base = w->n;
	*b = (struct batch){0};
	b->before = rate_at(r, w, base, nodes_of(r, w));
	double best = b->before;
	int placed = 0;
	int cap = growth_cap(s, r);
	while (base + placed < cap) {
		int nd = next_node(s, j, w);
		if (nd < 0)
			break;
		drake_cluster_charge(&s->c, (size_t)nd, &r->worker, 1);
		w->node[w->n++] = nd;
		nodes[placed++] = nd;
		double t = rate_at(r, w, w->n, nodes_of(r, w));
		if (t > best) {
			best = t;
			b->k = placed;
		}
	}
	for (int p = 0; p < placed; p++)
		drake_cluster_charge(&s->c, (size_t)nodes[p], &r->worker, -1);
	w->n = base;
	b->after = best;
	if (b->k > 0) {
		double e = scale_remaining(s, r, &b->by_history);
		double frac = b->before > 0 ? 1 - b->before / b->after : 1;
		b->saved = e * frac - grow_pause(s, r);
	}
}

struct grow_cand {
	size_t job;
	bool slow;      /* its progress is slowing or converged: served last */
	double per_gpu; /* relative speed-up per GPU added */
};

static int by_value(const void *a, const void *b)
{
	const struct grow_cand *x = a, *y = b;
	if (x->slow != y->slow)
		return x->slow ? 1 : -1;
	if (x->per_gpu != y->per_gpu)
		return x->per_gpu > y->per_gpu ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

static bool growable(const struct step *s, size_t j)
{
	const struct drake_running_job *r = &s->r[j];
	if (s->to_asked && (r->want_workers <= 0 || s->work[j].n >= scale_asked(r)))
		return false;
	return !r->gave_to_waiting && !drake_running_fixed(r) && s->work[j].n < r->max_workers &&
	       s->work[j].n > 0;
}

/* When a batch that does not pay yet will, while the job's progress is
 * unknown: with E its age, from the time it is old enough (*exact: it
 * pays from then on, up to rounding); with E from the finished jobs'
 * service, when the job outlives a finished job past which E pays, or
 * past which E is its age again (gang/history.h: between two finished
 * jobs' services E only falls). */
static double pays_at(const struct step *s, const struct drake_running_job *r,
                      const struct batch *b, double pause, bool *exact)
{
	*exact = false;
	if (b->k == 0 || r->progress > 0 || b->after <= b->before)
		return INFINITY;
	double frac = b->before > 0 ? 1 - b->before / b->after : 1;
	if (b->by_history) {
		double g = drake_running_gpus(r);
		double at = drake_history_reaches(&s->o->history, r->service, pause * g / frac);
		return at < INFINITY ? s->now + (at - r->service) / g : INFINITY;
	}
	*exact = true;
	return r->admitted + pause / frac;
}

/* A batch is worth it when it saves more than the job's own pause (its
 * cost of a change: a job whose trainer restarts every worker on a
 * membership change grows only for a larger saving), and from the exact
 * time pays_at() names: there it saves exactly its pause (up to rounding),
 * and a step at that time would otherwise neither grow the job nor name a
 * later time to look again. *again (may be NULL): when a batch that does
 * not pay is to be looked at again (pays_at), INFINITY when it pays. */
static bool pays(const struct step *s, size_t j, const struct batch *b, double *again)
{
	if (again)
		*again = INFINITY;
	if (b->k > 0 && b->saved > 0)
		return true;
	bool exact;
	double t = pays_at(s, &s->r[j], b, grow_pause(s, &s->r[j]), &exact);
	if (b->k > 0 && t <= s->now && exact)
		return true;
	if (again)
		*again = t;
	return false;
}

drake_err scale_grow(struct step *s, double *next)
{
	int maxw = 0;
	for (size_t j = 0; j < s->nr; j++)
		if (s->r[j].max_workers > maxw)
			maxw = s->r[j].max_workers;
	int *nodes = malloc(((size_t)maxw + 1) * sizeof(int));
	struct grow_cand *cand = malloc((s->nr + 1) * sizeof(*cand));
	if (!nodes || !cand) {
		free(nodes);
		free(cand);
		return DRAKE_ENOMEM;
	}
	size_t nc = 0;
	for (size_t j = 0; j < s->nr; j++) {
		if (!growable(s, j))
			continue;
		struct batch b;
		double t;
		best_batch(s, j, nodes, &b);
		if (pays(s, j, &b, &t)) {
			double gpus =
			    (double)b.k * (s->r[j].worker.gpu > 0 ? s->r[j].worker.gpu : 1);
			cand[nc++] =
			    (struct grow_cand){j, s->r[j].slow, (b.after / b.before - 1) / gpus};
		} else if (t > s->now && t < *next) {
			*next = t;
		}
	}
	if (nc > 1)
		qsort(cand, nc, sizeof(*cand), by_value);
	drake_err e = DRAKE_OK;
	for (size_t i = 0; !e && i < nc; i++) {
		size_t j = cand[i].job;
		struct batch b;
		best_batch(s, j, nodes, &b); /* on what earlier jobs left */
		if (!pays(s, j, &b, NULL))
			continue;
		struct work *w = &s->work[j];
		for (int p = 0; !e && p < b.k; p++) {
			drake_cluster_charge(&s->c, (size_t)nodes[p], &s->r[j].worker, 1);
			w->orig[w->n] = -1;
			w->node[w->n++] = nodes[p];
			e = scale_push(s,
			               (struct drake_action){DRAKE_ACT_GROW, (int)j, -1, nodes[p],
			                                     -1, b.after / b.before - 1});
		}
	}
	free(nodes);
	free(cand);
	return e;
}

/* ---- giving back workers that slow a job down ---- */

/* A job gives workers back only for a modelled gain of at least this
 * fraction, so that the noise of measured rates does not resize it. */
#define SHED_MARGIN 0.05

/*
 * A job whose own model (fitted to two sizes or spreads it ran at,
 * gang/speed_fit.h) says it runs faster with fewer workers gives them
 * back: workers come off one at a time, each time the one whose removal
 * leaves the job fastest (ties: the highest slot), never worker 0 and never
 * below its min, and the count with the highest modelled speed is kept
 * when it beats the current one by SHED_MARGIN and saves more than the
 * job's own cost of losing workers (drake_speed_pause) over its expected
 * remaining time. The removals are SHRINK
 * actions for no waiting job (for_job -1).
 */
drake_err scale_shed(struct step *s)
{
	drake_err e = DRAKE_OK;
	for (size_t j = 0; !e && j < s->nr; j++) {
		const struct drake_running_job *r = &s->r[j];
		struct work *w = &s->work[j];
		int floor = r->min_workers > 1 ? r->min_workers : 1;
		if (!w->fit.sized || drake_running_fixed(r) || r->slow || w->n <= floor)
			continue;
		int *cur = malloc(((size_t)w->n + 1) * sizeof(int));
		int *pos = malloc(((size_t)w->n + 1) * sizeof(int));
		int *tmp = malloc(((size_t)w->n + 1) * sizeof(int));
		struct drake_scale_op *ops = malloc(((size_t)w->n + 1) * sizeof(*ops));
		if (!cur || !pos || !tmp || !ops) {
			e = DRAKE_ENOMEM;
		} else {
			int n = w->n, k = 0, best_k = 0;
			memcpy(cur, w->node, (size_t)n * sizeof(int));
			for (int p = 0; p < n; p++)
				pos[p] = p;
			double t0 = rate_at(r, w, n, nodes_of(r, w));
			double best = t0;
			while (n > floor) {
				int drop = -1;
				double dt = -1;
				for (int p = n - 1; p >= 1; p--) {
					int m = 0;
					for (int q = 0; q < n; q++)
						if (q != p)
							tmp[m++] = cur[q];
					double t = rate_at(
					    r, w, m,
					    drake_plan_count_nodes(r->ps_node, r->n_ps, tmp, m));
					if (t > dt) {
						dt = t;
						drop = p;
					}
				}
				ops[k++] = (struct drake_scale_op){(int)j, pos[drop], cur[drop]};
				memmove(&cur[drop], &cur[drop + 1],
				        (size_t)(n - drop - 1) * sizeof(int));
				memmove(&pos[drop], &pos[drop + 1],
				        (size_t)(n - drop - 1) * sizeof(int));
				n--;
				if (dt > best) {
					best = dt;
					best_k = k;
				}
			}
			double frac = best > 0 ? 1 - t0 / best : 0;
			if (best_k > 0 && best >= t0 * (1 + SHED_MARGIN) &&
			    scale_remaining(s, r, NULL) * frac > shrink_pause(s, r))
				e = scale_apply_removals(s, ops, (size_t)best_k, -1);
		}
		free(cur);
		free(pos);
		free(tmp);
		free(ops);
	}
	return e;
}

/* Could a worker of some growable job fit anywhere now? */
bool scale_room_to_grow(const struct step *s)
{
	struct drake_res f;
	drake_cluster_free_sum(&s->c, &f);
	for (size_t j = 0; j < s->nr; j++)
		if (growable(s, j) && drake_res_fits(&s->r[j].worker, &f))
			return true;
	return false;
}
