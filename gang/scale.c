/*
 * scale.c - drake's decision step (see scale.h): the queue's order,
 * admission, starvation shrink with a reservation for the job that cannot
 * start yet, the room of ending jobs; growth by modelled gain and giving
 * back slow workers are scale_grow.c's (scale_internal.h).
 *
 * The step works on a clone of the snapshot and on its own copy of the
 * running jobs' worker lists, so each decision sees what the earlier ones
 * of the same step did. A running job's workers keep their original slot
 * numbers (orig[]) however many removals the step makes.
 */
#include "gang/scale.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/pack.h"
#include "gang/scale_internal.h"

void drake_scale_defaults(struct drake_scale_opts *o)
{
	*o = (struct drake_scale_opts){0};
	o->backfill = true;
	o->starve_after = 30;
	o->idle_after = 60;
	o->shrink_tries = 4;
	o->shrink.order = DRAKE_VICTIM_MOST_LEFT;
	o->shrink.lonely_first = true;
	drake_speed_defaults(&o->speed);
	o->ending_hold = 10;
	o->keep_window = 60;
	o->queue = DRAKE_QUEUE_PACK;
	o->age_after = 600;
	o->service_threshold = 4 * 3600;
	o->start_narrow = true;
}

drake_err drake_queue_order_parse(const char *s, enum drake_queue_order *out)
{
	if (s && strcmp(s, "fifo") == 0)
		*out = DRAKE_QUEUE_FIFO;
	else if (s && strcmp(s, "narrow") == 0)
		*out = DRAKE_QUEUE_NARROW;
	else if (s && strcmp(s, "pack") == 0)
		*out = DRAKE_QUEUE_PACK;
	else
		return DRAKE_EINVAL;
	return DRAKE_OK;
}

const char *drake_queue_order_name(enum drake_queue_order o)
{
	switch (o) {
	case DRAKE_QUEUE_SRPT: return "srpt";
	case DRAKE_QUEUE_NARROW: return "narrow";
	case DRAKE_QUEUE_PACK: return "pack";
	default: return "fifo";
	}
}

drake_err scale_push(struct step *s, struct drake_action a)
{
	if (s->n_act == s->cap_act) {
		size_t cap = s->cap_act ? s->cap_act * 2 : 16;
		struct drake_action *p = realloc(s->act, cap * sizeof(*p));
		if (!p)
			return DRAKE_ENOMEM;
		s->act = p;
		s->cap_act = cap;
	}
	s->act[s->n_act++] = a;
	return DRAKE_OK;
}

static drake_err step_init(struct step *s, const struct drake_cluster *c,
                           const struct drake_running_job *r, size_t nr)
{
	s->orig = c;
	s->r = r;
	s->nr = nr;
	if (drake_cluster_clone(&s->c, c))
		return DRAKE_ENOMEM;
	s->work = calloc(nr + 1, sizeof(*s->work));
	s->view = calloc(nr + 1, sizeof(*s->view));
	if (!s->work || !s->view)
		return DRAKE_ENOMEM;
	for (size_t j = 0; j < nr; j++) {
		int cap = r[j].max_workers > r[j].n_workers ? r[j].max_workers : r[j].n_workers;
		s->work[j].node = malloc(((size_t)cap + 1) * sizeof(int));
		s->work[j].orig = malloc(((size_t)cap + 1) * sizeof(int));
		if (!s->work[j].node || !s->work[j].orig)
			return DRAKE_ENOMEM;
		for (int k = 0; k < r[j].n_workers; k++) {
			s->work[j].node[k] = r[j].worker_node[k];
			s->work[j].orig[k] = k;
		}
		s->work[j].n = r[j].n_workers;
		drake_speed_fit(&s->o->speed, (int)(r[j].worker.gpu > 0 ? r[j].worker.gpu : 0),
		                r[j].obs, r[j].obs ? r[j].n_obs : 0, &s->work[j].fit);
		s->view[j] = r[j];
		s->view[j].worker_node = s->work[j].node;
	}
	return DRAKE_OK;
}

static void step_free(struct step *s)
{
	for (size_t j = 0; s->work && j < s->nr; j++) {
		free(s->work[j].node);
		free(s->work[j].orig);
	}
	free(s->work);
	free(s->view);
	free(s->act);
	free(s->took);
	drake_cluster_release(&s->c);
}

static bool starving(const struct step *s, const struct drake_admission_entry *x)
{
	return s->now - x->created >= s->o->starve_after;
}

/* Applies drake_shrink_for's removals (slots of the current lists) to the
 * clone and the lists, and records them as actions for waiting entry to. */
drake_err scale_apply_removals(struct step *s, const struct drake_scale_op *ops, size_t n, int to)
{
	/* Per job, highest current slot first, so earlier removals never
	 * shift a slot still to be removed. ops come grouped by nothing in
	 * particular: walk the jobs. */
	for (size_t j = 0; j < s->nr; j++) {
		for (;;) {
			int best = -1;
			for (size_t i = 0; i < n; i++)
				if (ops[i].job == (int)j && ops[i].slot >= 0 &&
				    (best < 0 || ops[i].slot > ops[best].slot))
					best = (int)i;
			if (best < 0)
				break;
			struct work *w = &s->work[j];
			int slot = ops[best].slot;
			drake_err e = scale_push(s, (struct drake_action){DRAKE_ACT_SHRINK, (int)j,
			                                                  w->orig[slot],
			                                                  w->node[slot], to, 0});
			if (e)
				return e;
			drake_cluster_charge(&s->c, (size_t)w->node[slot], &s->r[j].worker, -1);
			memmove(&w->node[slot], &w->node[slot + 1],
			        (size_t)(w->n - slot - 1) * sizeof(int));
			memmove(&w->orig[slot], &w->orig[slot + 1],
			        (size_t)(w->n - slot - 1) * sizeof(int));
			w->n--;
			s->view[j].n_workers = w->n;
			/* Mark done: a slot no op can name. */
			((struct drake_scale_op *)ops)[best].slot = -1;
		}
	}
	return DRAKE_OK;
}

/* Running job indexes, youngest admitted first (expected to end first). */
static int *youngest_first(const struct step *s)
{
	int *ix = malloc((s->nr + 1) * sizeof(int));
	if (!ix)
		return NULL;
	for (size_t a = 0; a < s->nr; a++) {
		size_t b = a;
		while (b > 0 && s->r[ix[b - 1]].admitted < s->r[a].admitted) {
			ix[b] = ix[b - 1];
			b--;
		}
		ix[b] = (int)a;
	}
	return ix;
}

/*
 * Holds nodes for a starving job that cannot start: running jobs are taken
 * off a second clone, youngest first, until the job fits; the nodes of
 * that plan become unschedulable in the step's clone. Returns how many
 * nodes were held (0 when even an empty cluster of running jobs has no
 * room: then nothing is held).
 */
static drake_err reserve(struct step *s, const struct drake_gang_req *req, int *held)
{
	*held = 0;
	struct drake_cluster t;
	int *ix = youngest_first(s);
	if (!ix)
		return DRAKE_ENOMEM;
	if (drake_cluster_clone(&t, &s->c)) {
		free(ix);
		return DRAKE_ENOMEM;
	}
	struct drake_res need, avail;
	drake_gang_min_need(req, &need);
	struct drake_plan plan = {0};
	drake_err e = DRAKE_ESTATE;
	for (size_t k = 0; k <= s->nr; k++) {
		if (k > 0) {
			const struct drake_running_job *j = &s->r[ix[k - 1]];
			const struct work *w = &s->work[ix[k - 1]];
			for (int p = 0; p < j->n_ps; p++)
				drake_cluster_charge(&t, (size_t)j->ps_node[p], &j->ps, -1);
			for (int p = 0; p < w->n; p++)
				drake_cluster_charge(&t, (size_t)w->node[p], &j->worker, -1);
		}
		drake_cluster_free_sum(&t, &avail);
		if (!drake_res_fits(&need, &avail))
			continue;
		char why[DRAKE_WHY_MAX];
		e = drake_plan_gang(&t, req, &plan, why, sizeof(why));
		if (e != DRAKE_ESTATE)
			break;
	}
	if (e == DRAKE_OK) {
		bool *mark = calloc(s->c.n + 1, sizeof(bool));
		if (!mark)
			e = DRAKE_ENOMEM;
		for (int p = 0; mark && p < plan.n_ps; p++)
			mark[plan.ps_node[p]] = true;
		for (int p = 0; mark && p < plan.n_workers; p++)
			mark[plan.worker_node[p]] = true;
		if (mark && plan.n_chief)
			mark[plan.chief_node] = true;
		for (size_t i = 0; mark && i < s->c.n; i++)
			if (mark[i] && s->c.nodes[i].schedulable) {
				drake_cluster_set_schedulable(&s->c, i, false);
				(*held)++;
			}
		free(mark);
	} else if (e == DRAKE_ESTATE || e == DRAKE_ELIMIT || e == DRAKE_EINVAL) {
		e = DRAKE_OK;
	}
	drake_plan_release(&plan);
	drake_cluster_release(&t);
	free(ix);
	return e;
}

/*
 * The planner rejected x outright on the clone (e: DRAKE_ELIMIT or
 * DRAKE_EINVAL; why says why). The clone counts the nodes held for a
 * starving job as absent, so a job that can never fit there may still fit
 * the caller's cluster: it then waits for the held nodes. Otherwise x is
 * NEVER (or INVALID), as drake_admit_one would say had it planned x.
 */
static drake_err rejected(const struct step *s, struct drake_admission_entry *x, drake_err e,
                          const char *why)
{
	char tmp[DRAKE_WHY_MAX];
	if (e == DRAKE_ELIMIT && s->held_for) {
		struct drake_plan p = {0};
		drake_err e2 = drake_plan_gang(s->orig, &x->req, &p, tmp, sizeof(tmp));
		drake_plan_release(&p);
		if (e2 == DRAKE_ENOMEM)
			return e2;
		if (e2 != DRAKE_ELIMIT) {
			x->status = DRAKE_ADMIT_WAITING;
			snprintf(x->why, sizeof(x->why),
			         "waiting: the nodes held for %.80s leave too little for it",
			         s->held_for);
			return DRAKE_OK;
		}
		why = tmp;
	}
	x->status = e == DRAKE_EINVAL ? DRAKE_ADMIT_INVALID : DRAKE_ADMIT_NEVER;
	if (why != x->why)
		snprintf(x->why, sizeof(x->why), "%s", why);
	return DRAKE_OK;
}

/* Starts waiting entry x on plan once the removals ops[0..n) (freed here)
 * are applied for it; the plan is x's from then on. */
static drake_err start_after(struct step *s, struct drake_admission_entry *x, int xi,
                             struct drake_scale_op *ops, size_t n, struct drake_plan *plan)
{
	drake_err e = scale_apply_removals(s, ops, n, xi);
	free(ops);
	if (e) {
		drake_plan_release(plan);
		return e;
	}
	drake_plan_release(&x->plan);
	x->plan = *plan;
	x->status = DRAKE_ADMIT_STARTED;
	x->why[0] = '\0';
	drake_plan_charge(&s->c, &x->req, &x->plan, 1);
	return DRAKE_OK;
}

/* Starts waiting entry x by shrinking running jobs, if an allowed set of
 * removals makes it fit; else says why in x->why. */
static drake_err shrink_for(struct step *s, struct drake_admission_entry *x, int xi)
{
	struct drake_scale_op *ops = NULL;
	size_t n_ops = 0;
	struct drake_plan plan = {0};
	char why[DRAKE_WHY_MAX];
	drake_err e = drake_shrink_for(&s->c, s->view, s->nr, &x->req, &s->o->shrink, &ops, &n_ops,
	                               &plan, why, sizeof(why));
	if (e == DRAKE_ESTATE) {
		snprintf(x->why, sizeof(x->why), "waited %.0f s; %.160s", s->now - x->created, why);
		return DRAKE_OK;
	}
	/* Admission's cheap check lets a job wait without planning it while
	 * the cluster is busy; planned here, it may never fit at all. */
	if (e == DRAKE_ELIMIT || e == DRAKE_EINVAL)
		return rejected(s, x, e, why);
	if (e)
		return e;
	return start_after(s, x, xi, ops, n_ops, &plan);
}

/* ---- the room of ending jobs ---- */

static bool ending(const struct step *s, const struct drake_running_job *j)
{
	return j->ending && s->o->ending_hold > 0 && s->now - j->ending_since < s->o->ending_hold;
}

/* soon: the step's clone without the jobs that are ending (false, and soon
 * untouched, when none is). */
static drake_err soon_build(struct step *s, struct drake_cluster *soon, bool *have)
{
	*have = false;
	for (size_t j = 0; j < s->nr; j++)
		*have |= ending(s, &s->r[j]);
	if (!*have)
		return DRAKE_OK;
	if (drake_cluster_clone(soon, &s->c)) {
		*have = false;
		return DRAKE_ENOMEM;
	}
	for (size_t j = 0; j < s->nr; j++) {
		const struct drake_running_job *r = &s->r[j];
		if (!ending(s, r))
			continue;
		for (int p = 0; p < r->n_ps; p++)
			drake_cluster_charge(soon, (size_t)r->ps_node[p], &r->ps, -1);
		for (int p = 0; p < s->work[j].n; p++)
			drake_cluster_charge(soon, (size_t)s->work[j].node[p], &r->worker, -1);
		double until = r->ending_since + s->o->ending_hold;
		if (until < s->soon_until)
			s->soon_until = until;
	}
	return DRAKE_OK;
}

/* x waits for plan, its plan on soon: charged there, and the plan's nodes
 * held for it in the step's clone. Releases plan. */
static void hold_plan(struct step *s, struct drake_cluster *soon, struct drake_admission_entry *x,
                      struct drake_plan *plan)
{
	drake_plan_charge(soon, &x->req, plan, 1);
	int held = 0;
	for (size_t i = 0; i < s->c.n; i++) {
		bool in = plan->n_chief && plan->chief_node == (int)i;
		for (int p = 0; !in && p < plan->n_ps; p++)
			in = plan->ps_node[p] == (int)i;
		for (int p = 0; !in && p < plan->n_workers; p++)
			in = plan->worker_node[p] == (int)i;
		if (in && s->c.nodes[i].schedulable) {
			drake_cluster_set_schedulable(&s->c, i, false);
			held++;
		}
	}
	drake_plan_release(plan);
	if (held > 0) {
		s->hold_until = s->soon_until;
		if (!s->held_for)
			s->held_for = x->name ? x->name : "";
		size_t l = strlen(x->why);
		snprintf(x->why + l, sizeof(x->why) - l, "; %d node%s of ending jobs held for it",
		         held, held == 1 ? "" : "s");
	}
}

/* x waits, and fits once the ending jobs are gone: it gets that plan on
 * soon (hold_plan()). */
static drake_err hold_ending(struct step *s, struct drake_cluster *soon,
                             struct drake_admission_entry *x)
{
	struct drake_plan plan = {0};
	char why[DRAKE_WHY_MAX];
	drake_err e = drake_plan_gang(soon, &x->req, &plan, why, sizeof(why));
	if (e != DRAKE_OK) {
		drake_plan_release(&plan);
		return e == DRAKE_ENOMEM ? e : DRAKE_OK;
	}
	hold_plan(s, soon, x, &plan);
	return DRAKE_OK;
}

/* x fits now, but with fewer workers than it asks for. When the ending
 * jobs' room would give it more, it waits for that room (hold_plan())
 * instead of starting narrow: a job's members end within moments of each
 * other, and growth pays only later, if ever. The wait is bounded by
 * ending_hold. The caller recounts its free sum. */
static drake_err narrow_waits(struct step *s, struct drake_cluster *soon,
                              struct drake_admission_entry *x, bool *waits)
{
	*waits = false;
	struct drake_plan wide = {0};
	char why[DRAKE_WHY_MAX];
	drake_err e = drake_plan_gang(soon, &x->req, &wide, why, sizeof(why));
	int n = e == DRAKE_OK ? wide.n_workers : 0;
	if (n <= x->plan.n_workers) {
		drake_plan_release(&wide);
		return e == DRAKE_ENOMEM ? e : DRAKE_OK;
	}
	drake_plan_charge(&s->c, &x->req, &x->plan, -1);
	snprintf(x->why, sizeof(x->why),
	         "waiting: %d of %d workers fit now, %d once the ending jobs' room is free",
	         x->plan.n_workers, x->req.want_workers, n);
	drake_plan_release(&x->plan);
	x->status = DRAKE_ADMIT_WAITING;
	*waits = true;
	hold_plan(s, soon, x, &wide);
	return DRAKE_OK;
}

/* ---- room for the queue ---- */

static void keep_add(struct step *s, const struct drake_res *r, int n)
{
	if (n <= 0 || r->gpu <= 0 || s->n_keep == DRAKE_GANG_MAX_KEEP)
		return;
	for (int k = 0; k < s->n_keep; k++)
		if (memcmp(&s->keep[k], r, sizeof(*r)) == 0)
			return;
	s->keep[s->n_keep++] = *r;
}

/* The shapes the planner keeps room for (planner.h, "Room for the
 * queue"): every replica asking for GPUs of the waiting jobs, then of the
 * running jobs admitted within keep_window, newest first; at most
 * DRAKE_GANG_MAX_KEEP, the first come kept. */
static drake_err keep_shapes(struct step *s, const struct drake_admission_entry *w, size_t nw)
{
	s->n_keep = 0;
	if (s->o->keep_window < 0)
		return DRAKE_OK;
	for (size_t i = 0; i < nw; i++) {
		keep_add(s, &w[i].req.worker, w[i].req.want_workers);
		keep_add(s, &w[i].req.ps, w[i].req.n_ps);
		keep_add(s, &w[i].req.chief, w[i].req.n_chief);
	}
	int *ix = youngest_first(s);
	if (!ix)
		return DRAKE_ENOMEM;
	for (size_t k = 0; k < s->nr; k++) {
		const struct drake_running_job *j = &s->r[ix[k]];
		if (s->now - j->admitted > s->o->keep_window)
			break;
		keep_add(s, &j->worker, j->n_workers);
		keep_add(s, &j->ps, j->n_ps);
	}
	free(ix);
	return DRAKE_OK;
}

/* The size a running job's spec asks for: its floor when a waiting job
 * takes back what it was lent. */
int scale_asked(const struct drake_running_job *r)
{
	return r->want_workers > r->min_workers ? r->want_workers : r->min_workers;
}

/* How far down a running job gives workers to a new job (rule 1b): its
 * min once its attained service passed the threshold, else the size it
 * asks (what it holds beyond was lent), else (size unknown) nothing. */
static int floor_of(const struct step *s, const struct drake_running_job *r)
{
	double t = s->o->service_threshold;
	/* what it is expected still to run, in GPU-seconds, when its progress
	 * says: a job about to end keeps its workers */
	bool ends_soon = r->progress > 0 && scale_remaining(s, r, NULL) * drake_running_gpus(r) < t;
	if (t > 0 && r->service >= t && !ends_soon)
		return r->min_workers;
	return r->want_workers > 0 ? scale_asked(r) : r->n_workers;
}

/*
 * Rule 1b (scale.h): workers a running job holds beyond the size its spec
 * asks for were lent from idle capacity, and a waiting job that does not
 * fit at the size it asks for takes them back at once, without waiting to
 * starve: the fewest removals (drake_shrink_for's order, never below a
 * job's asked size) that let it start at that size. *started when it did;
 * when no set of loans is enough, nothing changes and the usual rules go
 * on.
 */
static drake_err reclaim(struct step *s, struct drake_admission_entry *x, int xi, bool *started)
{
	*started = false;
	bool lent = false;
	for (size_t j = 0; j < s->nr; j++)
		lent |= !drake_running_fixed(&s->r[j]) && s->work[j].n > floor_of(s, &s->r[j]);
	if (!lent || s->o->shrinks_wait || x->req.want_workers <= x->req.min_workers)
		return DRAKE_OK;
	struct drake_gang_req req = x->req;
	req.min_workers = req.want_workers;
	struct drake_plan plan = {0};
	char why[DRAKE_WHY_MAX];
	drake_err e = drake_plan_gang(&s->c, &req, &plan, why, sizeof(why));
	drake_plan_release(&plan);
	if (e != DRAKE_ESTATE)
		return e == DRAKE_ENOMEM ? e : DRAKE_OK; /* it fits as asked, or never */
	struct drake_running_job *v = malloc((s->nr + 1) * sizeof(*v));
	if (!v)
		return DRAKE_ENOMEM;
	for (size_t j = 0; j < s->nr; j++) {
		v[j] = s->view[j];
		v[j].min_workers = floor_of(s, &s->r[j]);
	}
	struct drake_scale_op *ops = NULL;
	size_t n_ops = 0;
	e = drake_shrink_for(&s->c, v, s->nr, &req, &s->o->shrink, &ops, &n_ops, &plan, why,
	                     sizeof(why));
	free(v);
	if (e == DRAKE_ESTATE || e == DRAKE_ELIMIT || e == DRAKE_EINVAL)
		return DRAKE_OK;
	if (e) {
		free(ops);
		return e;
	}
	*started = true;
	return start_after(s, x, xi, ops, n_ops, &plan);
}

/*
 * Rule 1's start: before it starves, a job starts with the workers its spec
 * asks for or waits (unless start_narrow), so that it does not take the
 * last few GPUs at a fraction of its speed and leave the jobs behind it,
 * which fit whole, to wait; a starving job, or one whose asked size never
 * fits the cluster, starts with what fits down to its min.
 */
static drake_err admit_whole(struct step *s, struct drake_admission_entry *x,
                             struct drake_res *avail)
{
	int min = x->req.min_workers;
	if (s->o->start_narrow || x->req.want_workers <= min || starving(s, x))
		return drake_admit_one(&s->c, x, s->o->backfill, avail);
	x->req.min_workers = x->req.want_workers;
	drake_err e = drake_admit_one(&s->c, x, s->o->backfill, avail);
	x->req.min_workers = min;
	if (e || x->status == DRAKE_ADMIT_NEVER || x->status == DRAKE_ADMIT_INVALID)
		return e ? e : drake_admit_one(&s->c, x, s->o->backfill, avail);
	if (x->status == DRAKE_ADMIT_WAITING) {
		size_t l = strlen(x->why);
		snprintf(
		    x->why + l, sizeof(x->why) - l,
		    "%s(room for its %d workers; it starts with fewer once it has waited %.0f s)",
		    l ? " " : "waiting ", x->req.want_workers, s->o->starve_after);
	}
	return DRAKE_OK;
}

/* Waiting entry x of index i, in FIFO order: starts it if it fits, by
 * shrinking running jobs if it starves, or holds nodes for it (starving:
 * reserve(); fitting once the ending jobs are gone: hold_ending(), or
 * fitting wider then: narrow_waits(), both on soon, NULL when no job is
 * ending). */
static drake_err admit_one(struct step *s, struct drake_admission_entry *x, size_t i,
                           struct drake_res *avail, int *tries, struct drake_cluster *soon,
                           struct drake_step *out)
{
	const struct drake_scale_opts *o = s->o;
	bool lent_back;
	drake_err e = reclaim(s, x, (int)i, &lent_back);
	if (e)
		return e;
	if (lent_back) {
		drake_cluster_free_sum(&s->c, avail);
		if (soon)
			drake_plan_charge(soon, &x->req, &x->plan, 1);
		return scale_push(s, (struct drake_action){DRAKE_ACT_ADMIT, (int)i, -1, -1, -1, 0});
	}
	const struct drake_res *keep = x->req.keep;
	int n_keep = x->req.n_keep;
	x->req.keep = s->keep;
	x->req.n_keep = s->n_keep;
	e = admit_whole(s, x, avail);
	x->req.keep = keep;
	x->req.n_keep = n_keep;
	if (!e && x->status == DRAKE_ADMIT_NEVER && s->held_for)
		e = rejected(s, x, DRAKE_ELIMIT, x->why);
	bool narrow = false;
	if (!e && soon && x->status == DRAKE_ADMIT_STARTED &&
	    x->plan.n_workers < x->req.want_workers)
		e = narrow_waits(s, soon, x, &narrow);
	if (e)
		return e;
	if (x->status == DRAKE_ADMIT_WAITING && !narrow && starving(s, x) &&
	    *tries < o->shrink_tries) {
		(*tries)++;
		if (o->shrinks_wait)
			snprintf(x->why, sizeof(x->why),
			         "waited %.0f s; the workers of the last change are still leaving",
			         s->now - x->created);
		else if ((e = shrink_for(s, x, (int)i)))
			return e;
		if (x->status == DRAKE_ADMIT_STARTED) {
			drake_cluster_free_sum(&s->c, avail);
			s->took[s->n_took++] = i;
		} else if (x->status == DRAKE_ADMIT_WAITING && out->reserved_for < 0) {
			int held;
			if ((e = reserve(s, &x->req, &held)))
				return e;
			if (held > 0) {
				out->reserved_for = (int)i;
				out->reserved_nodes = held;
				s->held_for = x->name ? x->name : "";
				size_t l = strlen(x->why);
				snprintf(x->why + l, sizeof(x->why) - l, "; %d node%s held for it",
				         held, held == 1 ? "" : "s");
				drake_cluster_free_sum(&s->c, avail);
			}
		}
	}
	if (soon && x->status == DRAKE_ADMIT_STARTED) {
		drake_plan_charge(soon, &x->req, &x->plan, 1);
	} else if (soon && x->status == DRAKE_ADMIT_WAITING) {
		if (!narrow && (e = hold_ending(s, soon, x)))
			return e;
		drake_cluster_free_sum(&s->c, avail);
	}
	if (x->status == DRAKE_ADMIT_STARTED)
		return scale_push(s, (struct drake_action){DRAKE_ACT_ADMIT, (int)i, -1, -1, -1, 0});
	return DRAKE_OK;
}

/* Has waiting entry x waited long enough to go ahead of narrower jobs? */
static bool aged(const struct step *s, const struct drake_admission_entry *x)
{
	return s->now - x->created >= s->o->age_after;
}

/* Does young waiting entry x wait for the jobs still arriving (scale.h,
 * the queue)? Only where later arrivals may go ahead of it, and for at
 * most DRAKE_ARRIVAL_HOLD after its creation. */
static bool waits_for_arrivals(const struct step *s, const struct drake_admission_entry *x)
{
	bool reorders = s->o->queue == DRAKE_QUEUE_PACK || s->o->queue == DRAKE_QUEUE_NARROW;
	return reorders && s->o->backfill && !aged(s, x) && s->now < s->o->arriving_until &&
	       s->now - x->created < DRAKE_ARRIVAL_HOLD;
}

/* When x stops waiting for arrivals, if nothing else happens first. */
static double arrivals_until(const struct step *s, const struct drake_admission_entry *x)
{
	double own = x->created + DRAKE_ARRIVAL_HOLD;
	return own < s->o->arriving_until ? own : s->o->arriving_until;
}

/* The GPUs a waiting job asks for: its PS and chief and the workers its
 * spec asks for (an elastic job's minimum says little of its size). */
static int64_t want_gpus(const struct drake_admission_entry *x)
{
	struct drake_res need;
	drake_gang_min_need(&x->req, &need);
	int more = x->req.want_workers - x->req.min_workers;
	return need.gpu + (more > 0 ? more : 0) * x->req.worker.gpu;
}

/* An oracle's remaining work of waiting entry x (DRAKE_QUEUE_SRPT): its
 * remaining seconds at the size it asks for times the GPUs it asks for;
 * INFINITY when unknown, so that unknown jobs keep their FIFO order behind
 * the known ones. */
static double remaining_work(const struct drake_admission_entry *x)
{
	if (!(x->remaining > 0))
		return INFINITY;
	int64_t g = want_gpus(x);
	return x->remaining * (double)(g > 0 ? g : 1);
}

/* Does waiting entry y stay ahead of x (y is before x in FIFO order)? Aged
 * before young (FIFO among the aged); among the young, narrower (or, the
 * oracle's, less remaining work) first, ties FIFO. */
static bool stays_ahead(const struct step *s, const struct drake_admission_entry *y,
                        const struct drake_admission_entry *x)
{
	if (aged(s, y))
		return true;
	if (aged(s, x))
		return false;
	if (s->o->queue == DRAKE_QUEUE_PACK)
		return true; /* FIFO here; pack_young() picks the set first */
	if (s->o->queue == DRAKE_QUEUE_SRPT)
		return remaining_work(y) <= remaining_work(x);
	return want_gpus(y) <= want_gpus(x);
}

/* The order waiting entries w[0..nw) (FIFO as given) are tried in, into
 * ix: FIFO, or aged first, then narrowest (least remaining work), then
 * FIFO, or (PACK) aged first, then FIFO until pack_young() reorders the
 * young (scale.h). A stable insertion sort: the queue is short. */
static void queue_order(const struct step *s, const struct drake_admission_entry *w, size_t nw,
                        size_t *ix)
{
	for (size_t a = 0; a < nw; a++) {
		size_t b = a;
		while (s->o->queue != DRAKE_QUEUE_FIFO && b > 0 &&
		       !stays_ahead(s, &w[ix[b - 1]], &w[a])) {
			ix[b] = ix[b - 1];
			b--;
		}
		ix[b] = a;
	}
}

/*
 * DRAKE_QUEUE_PACK, once the aged jobs were tried: the young entries
 * ix[0..n) (FIFO) are reordered so that the set drake_pack_choose() picks
 * for the GPUs free (on soon when jobs are ending: their room is the
 * queue's within ending_hold) comes first, in FIFO order, the rest after.
 */
static drake_err pack_young(const struct step *s, const struct drake_admission_entry *w, size_t *ix,
                            size_t n, const struct drake_cluster *soon)
{
	if (n < 2)
		return DRAKE_OK;
	struct drake_res room;
	drake_cluster_free_sum(soon ? soon : &s->c, &room);
	int64_t *gpus = malloc(n * sizeof(*gpus));
	bool *chosen = malloc(n * sizeof(*chosen));
	size_t *tmp = malloc(n * sizeof(*tmp));
	drake_err e = gpus && chosen && tmp ? DRAKE_OK : DRAKE_ENOMEM;
	for (size_t k = 0; !e && k < n; k++)
		gpus[k] = want_gpus(&w[ix[k]]);
	if (!e)
		e = drake_pack_choose(gpus, n, room.gpu, chosen);
	if (!e) {
		size_t m = 0;
		for (size_t k = 0; k < n; k++)
			if (chosen[k])
				tmp[m++] = ix[k];
		for (size_t k = 0; k < n; k++)
			if (!chosen[k])
				tmp[m++] = ix[k];
		memcpy(ix, tmp, n * sizeof(*ix));
	}
	free(gpus);
	free(chosen);
	free(tmp);
	return e;
}

/*
 * The jobs started on workers running jobs gave (rule 2) were each planned
 * on what the ones before them left, so one may take a worker's room on the
 * node freed for the next, which then spreads onto the node freed for the
 * one after it, and so on: four starving jobs, four nodes freed of four
 * workers each, every job over two or three nodes. Planned again together
 * (the widest first, ties in the order they started) on all the room they
 * had, at the sizes they got, each goes onto the fewest nodes the planner
 * finds; the new plans are kept when every job fits and they span fewer
 * nodes in all, else the first ones stay. The removals are the same.
 */
static drake_err consolidate(struct step *s, struct drake_admission_entry *w)
{
	if (s->n_took < 2)
		return DRAKE_OK;
	for (size_t k = 0; k < s->n_took; k++)
		if (w[s->took[k]].req.worker_share.milli || w[s->took[k]].req.ps_share.milli ||
		    w[s->took[k]].req.chief_share.milli)
			return DRAKE_OK; /* the plans name vGPUs: left as they are */
	size_t n = s->n_took;
	size_t *ord = malloc(n * sizeof(*ord));
	struct drake_plan *alt = calloc(n, sizeof(*alt));
	if (!ord || !alt) {
		free(ord);
		free(alt);
		return DRAKE_ENOMEM;
	}
	for (size_t k = 0; k < n; k++) { /* the widest first, stably: a few entries */
		size_t j = k;
		while (j > 0 && w[ord[j - 1]].plan.n_workers < w[s->took[k]].plan.n_workers) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = s->took[k];
	}
	int before = 0, after = 0;
	for (size_t k = 0; k < n; k++) {
		before += w[ord[k]].plan.nodes_spanned;
		drake_plan_charge(&s->c, &w[ord[k]].req, &w[ord[k]].plan, -1);
	}
	drake_err e = DRAKE_OK;
	size_t done = 0;
	for (; done < n; done++) {
		struct drake_admission_entry *x = &w[ord[done]];
		struct drake_gang_req req = x->req;
		req.min_workers = req.want_workers = x->plan.n_workers;
		req.keep = s->keep;
		req.n_keep = s->n_keep;
		char why[DRAKE_WHY_MAX];
		e = drake_plan_gang(&s->c, &req, &alt[done], why, sizeof(why));
		if (e || alt[done].n_workers != x->plan.n_workers) {
			drake_plan_release(&alt[done]);
			break;
		}
		drake_plan_charge(&s->c, &req, &alt[done], 1);
		after += alt[done].nodes_spanned;
	}
	bool keep = done == n && after < before;
	for (size_t k = 0; k < done; k++) {
		struct drake_admission_entry *x = &w[ord[k]];
		drake_plan_charge(&s->c, &x->req, &alt[k], -1);
		if (keep) {
			drake_plan_release(&x->plan);
			x->plan = alt[k];
		} else {
			drake_plan_release(&alt[k]);
		}
	}
	for (size_t k = 0; k < n; k++)
		drake_plan_charge(&s->c, &w[ord[k]].req, &w[ord[k]].plan, 1);
	free(ord);
	free(alt);
	return e == DRAKE_ENOMEM ? e : DRAKE_OK;
}

static drake_err admit(struct step *s, struct drake_admission_entry *w, size_t nw,
                       struct drake_step *out)
{
	struct drake_res avail;
	drake_cluster_free_sum(&s->c, &avail);
	struct drake_cluster soon;
	bool have_soon;
	size_t *ix = malloc((nw + 1) * sizeof(*ix));
	s->took = malloc((nw + 1) * sizeof(*s->took));
	s->n_took = 0;
	if (!ix || !s->took) {
		free(ix);
		return DRAKE_ENOMEM;
	}
	queue_order(s, w, nw, ix);
	drake_err e = soon_build(s, &soon, &have_soon);
	if (!e)
		e = keep_shapes(s, w, nw);
	int tries = 0;
	bool blocked = false;
	size_t n_aged = 0;
	while (n_aged < nw && aged(s, &w[ix[n_aged]]))
		n_aged++;
	for (size_t k = 0; !e && k < nw; k++) {
		if (s->o->queue == DRAKE_QUEUE_PACK && s->o->backfill && k == n_aged &&
		    (e = pack_young(s, w, ix + k, nw - k, have_soon ? &soon : NULL)))
			break;
		size_t i = ix[k];
		struct drake_admission_entry *x = &w[i];
		if (blocked) {
			x->status = DRAKE_ADMIT_NOT_TRIED;
			snprintf(x->why, sizeof(x->why), "behind a job that waits (strict FIFO)");
			continue;
		}
		if (waits_for_arrivals(s, x)) {
			x->status = DRAKE_ADMIT_WAITING;
			snprintf(x->why, sizeof(x->why), "%s",
			         "waiting: jobs submitted with it are still being created, and the "
			         "queue chooses among all of them");
			if (arrivals_until(s, x) < out->next)
				out->next = arrivals_until(s, x);
			continue;
		}
		e = admit_one(s, x, i, &avail, &tries, have_soon ? &soon : NULL, out);
		if (!e && x->status == DRAKE_ADMIT_WAITING && !s->o->backfill)
			blocked = true;
	}
	if (have_soon)
		drake_cluster_release(&soon);
	free(ix);
	return e ? e : consolidate(s, w);
}

/* Newest admission or scaling of any running job. */
static double last_action(const struct drake_running_job *r, size_t nr)
{
	double t = -INFINITY;
	for (size_t j = 0; j < nr; j++) {
		if (r[j].admitted > t)
			t = r[j].admitted;
		if (r[j].last_scaled > t)
			t = r[j].last_scaled;
	}
	return t;
}

static bool someone_waits(const struct drake_admission_entry *w, size_t nw)
{
	for (size_t i = 0; i < nw; i++)
		if (w[i].status == DRAKE_ADMIT_WAITING || w[i].status == DRAKE_ADMIT_NOT_TRIED)
			return true;
	return false;
}

drake_err drake_scale_step(const struct drake_cluster *c, struct drake_admission_entry *w,
                           size_t nw, const struct drake_running_job *r, size_t nr, double now,
                           const struct drake_scale_opts *o, struct drake_step *out)
{
	*out = (struct drake_step){NULL, 0, INFINITY, -1, 0};
	struct step s = {.o = o, .now = now, .soon_until = INFINITY, .hold_until = INFINITY};
	struct drake_scale_opts local = *o;
	local.speed.node_gpus = drake_speed_node_gpus(c);
	s.o = &local;
	drake_err e = step_init(&s, c, r, nr);
	if (!e && !o->shrinks_wait)
		e = scale_shed(&s);
	if (!e)
		e = admit(&s, w, nw, out);
	if (!e) {
		for (size_t i = 0; i < nw; i++) {
			bool waits = w[i].status == DRAKE_ADMIT_WAITING ||
			             w[i].status == DRAKE_ADMIT_NOT_TRIED;
			double t = w[i].created + o->starve_after;
			if (waits && t > now && t < out->next)
				out->next = t;
			t = w[i].created + o->age_after;
			if (waits && o->queue != DRAKE_QUEUE_FIFO && t > now && t < out->next)
				out->next = t;
		}
		if (s.hold_until < out->next)
			out->next = s.hold_until;
	}
	if (!e && !someone_waits(w, nw)) {
		/* rule 4a: back to the size asked for, at once */
		s.to_asked = true;
		if (scale_room_to_grow(&s))
			e = scale_grow(&s, &out->next);
		s.to_asked = false;
	}
	if (!e && s.n_act && !someone_waits(w, nw)) {
		/* This step's own actions restart the idle timer; a job it
		 * admitted is not among r yet, so look again then whatever r
		 * holds. */
		if (now + o->idle_after < out->next)
			out->next = now + o->idle_after;
	} else if (!e && !someone_waits(w, nw) && scale_room_to_grow(&s)) {
		double since = last_action(r, nr);
		if (now - since >= o->idle_after)
			e = scale_grow(&s, &out->next);
		else if (since + o->idle_after < out->next)
			out->next = since + o->idle_after;
	}
	if (!e) {
		out->act = s.act;
		out->n = s.n_act;
		s.act = NULL;
	}
	step_free(&s);
	return e;
}

void drake_step_release(struct drake_step *s)
{
	free(s->act);
	s->act = NULL;
	s->n = 0;
}
