/*
 * dragon_step.c - one run of DRAGON's SchedulingAlgorithm (the phases are
 * in dragon_step.h).
 */
#include "gang/dragon_step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gang/dragon.h"

struct acts {
	struct drake_action *a;
	size_t n, cap;
};

static drake_err push(struct acts *x, struct drake_action a)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct drake_action *p = realloc(x->a, cap * sizeof(*p));
		if (!p)
			return DRAKE_ENOMEM;
		x->a = p;
		x->cap = cap;
	}
	x->a[x->n++] = a;
	return DRAKE_OK;
}

/* Phase 1: ScaleDown for the head's minimum workers. *ok: it succeeded
 * (with or without removals). */
static drake_err scale_down(const struct drake_cluster *c, const int *order, size_t n_order,
                            const struct drake_admission_entry *head,
                            const struct drake_running_job *r, size_t nr, struct acts *x, bool *ok)
{
	struct drake_scale_op *ops = NULL;
	size_t n_ops = 0;
	drake_err e = drake_dragon_scale_down(c, order, n_order, r, nr, &head->req.worker,
	                                      head->req.min_workers, &ops, &n_ops);
	*ok = e == DRAKE_OK;
	if (e == DRAKE_ESTATE)
		e = DRAKE_OK;
	for (size_t i = 0; !e && i < n_ops; i++)
		e = push(x, (struct drake_action){DRAKE_ACT_SHRINK, ops[i].job, ops[i].slot,
		                                  ops[i].node, 0, 0});
	free(ops);
	return e;
}

/* Phase 2: the first job in FIFO order that ScheduleJob places. */
static drake_err admit_first(const struct drake_cluster *c, const int *order, size_t n_order,
                             struct drake_admission_entry *w, size_t nw, struct acts *x,
                             bool *admitted)
{
	*admitted = false;
	for (size_t i = 0; i < nw; i++) {
		struct drake_admission_entry *e = &w[i];
		struct drake_plan plan = {0};
		drake_err err = drake_dragon_schedule(c, order, n_order, &e->req, &plan);
		if (err == DRAKE_OK) {
			drake_plan_release(&e->plan);
			e->plan = plan;
			e->status = DRAKE_ADMIT_STARTED;
			*admitted = true;
			return push(x,
			            (struct drake_action){DRAKE_ACT_ADMIT, (int)i, -1, -1, -1, 0});
		}
		drake_plan_release(&plan);
		if (err != DRAKE_ESTATE)
			return err;
		e->status = DRAKE_ADMIT_WAITING;
		snprintf(e->why, sizeof(e->why),
		         "waiting: DRAGON's first fit places fewer than its PS and %d workers",
		         e->req.min_workers);
	}
	return DRAKE_OK;
}

/* Phase 3: ScaleUp in running order. */
static drake_err scale_up(const struct drake_cluster *c, const int *order, size_t n_order,
                          const struct drake_running_job *r, size_t nr, struct acts *x)
{
	struct drake_scale_op *ops = NULL;
	size_t n_ops = 0;
	drake_err e = drake_dragon_scale_up(c, order, n_order, r, nr, &ops, &n_ops);
	for (size_t i = 0; !e && i < n_ops; i++)
		e = push(x,
		         (struct drake_action){DRAKE_ACT_GROW, ops[i].job, -1, ops[i].node, -1, 0});
	free(ops);
	return e;
}

drake_err drake_dragon_step(const struct drake_cluster *c, const int *order, size_t n_order,
                            struct drake_admission_entry *w, size_t nw,
                            const struct drake_running_job *r, size_t nr, double now,
                            const struct drake_dragon_opts *o, struct drake_dragon_state *st,
                            struct drake_step *out)
{
	*out = (struct drake_step){NULL, 0, INFINITY, -1, 0};
	for (size_t i = 0; i < nw; i++) {
		w[i].status = DRAKE_ADMIT_NOT_TRIED;
		w[i].why[0] = '\0';
	}
	/* DRAGON's running jobs are the jobs that still run: a job whose
	 * members have begun to end, or whose wave kube-scheduler has not bound
	 * yet (drake_running_fixed), neither gives nor grows. */
	struct drake_running_job *live = malloc((nr + 1) * sizeof(*live));
	size_t *of = malloc((nr + 1) * sizeof(*of));
	if (!live || !of) {
		free(live);
		free(of);
		return DRAKE_ENOMEM;
	}
	size_t nl = 0;
	for (size_t i = 0; i < nr; i++)
		if (!drake_running_fixed(&r[i])) {
			of[nl] = i;
			live[nl++] = r[i];
		}
	struct acts x = {0};
	drake_err e = DRAKE_OK;
	bool head_starves = nw > 0 && now - w[0].created >= o->starve_after;
	bool scaled_down = false;
	if (head_starves && o->scale_down_waits) {
		snprintf(w[0].why, sizeof(w[0].why),
		         "waiting: the workers of the last change are still leaving");
		w[0].status = DRAKE_ADMIT_WAITING;
	} else if (head_starves) {
		e = scale_down(c, order, n_order, &w[0], live, nl, &x, &scaled_down);
		st->last_action = now; /* even when ScaleDown failed */
	}
	bool admitted = false;
	if (!e && (!head_starves || scaled_down)) {
		e = admit_first(c, order, n_order, w, nw, &x, &admitted);
		if (admitted)
			st->last_action = now;
	}
	if (!e && now - st->last_action >= o->idle_after) {
		e = scale_up(c, order, n_order, live, nl, &x);
		st->last_action = now;
	}
	for (size_t i = 0; !e && i < x.n; i++) /* live's indexes back to r's */
		if (x.a[i].kind != DRAKE_ACT_ADMIT)
			x.a[i].job = (int)of[x.a[i].job];
	free(live);
	free(of);
	if (e) {
		free(x.a);
		return e;
	}
	if (nw > 0 && !head_starves)
		out->next = w[0].created + o->starve_after;
	if (nl > 0 && st->last_action + o->idle_after < out->next)
		out->next = st->last_action + o->idle_after;
	if (out->next <= now)
		out->next = INFINITY; /* tried at this run: again at the next event or resync */
	out->act = x.a;
	out->n = x.n;
	return DRAKE_OK;
}
