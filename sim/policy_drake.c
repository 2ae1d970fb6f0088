/*
 * policy_drake.c - drake's rules in the simulator: exactly the gang/ calls
 * the cluster makes (drake_admit, drake_shrink_for, drake_grow), applied
 * through the sim's actions.
 *
 * Each decision: admit every waiting job that fits, FIFO with backfill;
 * then, for up to shrink_tries starving jobs (waited >= starve_after) in
 * FIFO order, shrink running jobs so the whole job fits and start it; then,
 * if nothing has happened for idle_after seconds and (by default) nobody is
 * waiting, grow running jobs toward max. Timers are kept by wake-ups, not
 * by polling.
 */
#include <stdlib.h>
#include <string.h>

#include "gang/admission.h"
#include "gang/elastic.h"
#include "sim/sim.h"

struct drake_pstate {
	double last_action;
};

static drake_err drake_init(struct sim *s, void **state)
{
	struct drake_pstate *p = calloc(1, sizeof(*p));
	if (!p)
		return DRAKE_ENOMEM;
	p->last_action = sim_now(s);
	*state = p;
	return DRAKE_OK;
}

static void drake_release(void *state)
{
	free(state);
}

static drake_err admit_all(struct sim *s, bool *acted)
{
	size_t n;
	const int *w = sim_waiting(s, &n);
	if (n == 0)
		return DRAKE_OK;
	struct drake_admission_entry *e = calloc(n, sizeof(*e));
	int *ids = malloc(n * sizeof(int));
	if (!e || !ids) {
		free(e);
		free(ids);
		return DRAKE_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct sim_job *j = sim_job(s, w[i]);
		ids[i] = w[i];
		e[i].name = j->t->id;
		e[i].created = j->submit;
		e[i].req = j->req;
	}
	struct drake_admission_opts o = {sim_cfg(s)->backfill, 0};
	size_t started = 0;
	struct drake_cluster *c = sim_cluster(s);
	drake_err err = drake_admit(c, e, n, &o, &started);
	/* drake_admit charged the snapshot; sim_start charges it again. */
	for (size_t i = 0; i < n; i++)
		if (e[i].status == DRAKE_ADMIT_STARTED)
			drake_plan_charge(c, &e[i].req, &e[i].plan, -1);
	for (size_t i = 0; !err && i < n; i++) {
		if (e[i].status != DRAKE_ADMIT_STARTED)
			continue;
		err = sim_start(s, ids[i], &e[i].plan);
		*acted = true;
	}
	drake_admission_release(e, n);
	free(e);
	free(ids);
	return err;
}

static drake_err running_views(struct sim *s, struct drake_running_job **out, const int **ids,
                               size_t *n)
{
	*ids = sim_running(s, n);
	*out = calloc(*n + 1, sizeof(**out));
	if (!*out)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < *n; i++)
		sim_running_view(s, (*ids)[i], &(*out)[i]);
	return DRAKE_OK;
}

static int cmp_slot_desc(const void *a, const void *b)
{
	const struct drake_scale_op *x = a, *y = b;
	if (x->job != y->job)
		return x->job - y->job;
	return y->slot - x->slot;
}

/* Applies removals: per job, highest slot first, so swap-removal never
 * moves a slot still to be removed. */
drake_err sim_apply_removals(struct sim *s, const int *ids, struct drake_scale_op *ops,
                             size_t n_ops)
{
	qsort(ops, n_ops, sizeof(*ops), cmp_slot_desc);
	drake_err err = DRAKE_OK;
	for (size_t i = 0; i < n_ops; i++) {
		sim_remove_worker(s, ids[ops[i].job], ops[i].slot);
		if (i + 1 == n_ops || ops[i + 1].job != ops[i].job)
			if ((err = sim_rescaled(s, ids[ops[i].job])))
				return err;
	}
	return err;
}

/* Applies additions (ops grouped by job as the grow functions return them). */
drake_err sim_apply_additions(struct sim *s, const int *ids, const struct drake_scale_op *ops,
                              size_t n_ops)
{
	drake_err err = DRAKE_OK;
	for (size_t i = 0; i < n_ops; i++) {
		if ((err = sim_add_worker(s, ids[ops[i].job], ops[i].node)))
			return err;
		if (i + 1 == n_ops || ops[i + 1].job != ops[i].job)
			if ((err = sim_rescaled(s, ids[ops[i].job])))
				return err;
	}
	return err;
}

static drake_err relieve_starving(struct sim *s, bool *acted)
{
	const struct sim_config *cfg = sim_cfg(s);
	double now = sim_now(s);
	int tries = 0;
	size_t nw;
	const int *w = sim_waiting(s, &nw);
	for (size_t i = 0; i < nw && tries < cfg->shrink_tries; i++) {
		struct sim_job *j = sim_job(s, w[i]);
		if (now - j->submit < cfg->starve_after)
			break; /* FIFO: everyone behind waited less */
		tries++;
		struct drake_running_job *views;
		const int *ids;
		size_t nr;
		drake_err err = running_views(s, &views, &ids, &nr);
		if (err)
			return err;
		struct drake_shrink_opts o = {cfg->victim_order, cfg->lonely_first};
		struct drake_scale_op *ops = NULL;
		size_t n_ops = 0;
		struct drake_plan plan = {0};
		char why[DRAKE_WHY_MAX];
		err = drake_shrink_for(sim_cluster(s), views, nr, &j->req, &o, &ops, &n_ops, &plan,
		                       why, sizeof(why));
		if (err == DRAKE_OK) {
			/* ids is the live running list: copy it, removals keep it but
			 * starting a job appends to it. */
			int *idc = malloc((nr + 1) * sizeof(int));
			if (!idc)
				err = DRAKE_ENOMEM;
			else {
				memcpy(idc, ids, nr * sizeof(int));
				err = sim_apply_removals(s, idc, ops, n_ops);
				free(idc);
			}
			if (!err)
				err = sim_start(s, w[i], &plan);
			*acted = true;
			i--; /* the waiting list lost this job */
			w = sim_waiting(s, &nw);
		} else if (err == DRAKE_ESTATE) {
			err = DRAKE_OK;
		}
		free(ops);
		free(views);
		drake_plan_release(&plan);
		if (err)
			return err;
	}
	return DRAKE_OK;
}

static drake_err grow_idle(struct sim *s, bool *acted)
{
	struct drake_running_job *views;
	const int *ids;
	size_t nr;
	drake_err err = running_views(s, &views, &ids, &nr);
	if (err)
		return err;
	struct drake_grow_opts o = {sim_cfg(s)->grow_new_nodes};
	struct drake_scale_op *ops = NULL;
	size_t n_ops = 0;
	err = drake_grow(sim_cluster(s), views, nr, &o, &ops, &n_ops);
	if (!err && n_ops) {
		err = sim_apply_additions(s, ids, ops, n_ops);
		*acted = true;
	}
	free(ops);
	free(views);
	return err;
}

static bool can_grow(struct sim *s)
{
	size_t nr;
	const int *r = sim_running(s, &nr);
	for (size_t i = 0; i < nr; i++) {
		struct sim_job *j = sim_job(s, r[i]);
		if (j->n_workers < j->max_workers)
			return true;
	}
	return false;
}

static drake_err drake_decide(struct sim *s, void *state)
{
	struct drake_pstate *p = state;
	const struct sim_config *cfg = sim_cfg(s);
	double now = sim_now(s);
	bool acted = false;
	drake_err err;
	if ((err = admit_all(s, &acted)) || (err = relieve_starving(s, &acted)))
		return err;
	if (acted)
		p->last_action = now;

	size_t nw;
	const int *w = sim_waiting(s, &nw);
	for (size_t i = 0; i < nw; i++) {
		double t = sim_job(s, w[i])->submit + cfg->starve_after;
		if (t > now) {
			if ((err = sim_wake_at(s, t)))
				return err;
			break;
		}
	}
	if ((nw == 0 || cfg->grow_when_waiting) && can_grow(s)) {
		struct drake_res f;
		drake_cluster_free_total(sim_cluster(s), &f);
		if (now - p->last_action >= cfg->idle_after) {
			bool grew = false;
			if (f.gpu > 0 && (err = grow_idle(s, &grew)))
				return err;
			if (grew)
				p->last_action = now;
		} else if (f.gpu > 0) {
			err = sim_wake_at(s, p->last_action + cfg->idle_after);
		}
	}
	return err;
}

const struct sim_policy sim_policy_drake = {"drake", drake_init, drake_release, drake_decide};
