/*
 * policy_dragon.c - DRAGON's SchedulingAlgorithm (NTHU-LSALAB/DRAGON,
 * scheduling.go), driven the way DRAGON's controller drives it.
 *
 * DRAGON has no ticker: the algorithm runs on every reconcile. Here a
 * reconcile happens after every batch of sim events (job added, pods
 * finished), again reconcile_delay seconds after any action (its own pod
 * creations and deletions trigger reconciles), and at every TFJob informer
 * resync (every dragon_resync seconds), when it runs once per TFJob, as
 * the workqueue does, stopping early once a run changes nothing.
 *
 * One run is gang/dragon_step.h's drake_dragon_step, the step `drake serve
 * --policy dragon` runs inside its round: ScaleDown for a starving head, at
 * most one admission by first fit, ScaleUp after idle_after. Node order is a fresh
 * seeded shuffle each run (Go map order), or by name.
 */
#include <stdlib.h>
#include <string.h>

#include "gang/admission.h"
#include "gang/dragon_step.h"
#include "sim/sim.h"

struct dragon_pstate {
	double last_action;
	double next_resync;
	int *order;
	size_t n_order;
};

static drake_err dragon_init(struct sim *s, void **state)
{
	struct dragon_pstate *p = calloc(1, sizeof(*p));
	size_t n = sim_cluster(s)->n;
	if (!p || !(p->order = malloc((n + 1) * sizeof(int)))) {
		free(p);
		return DRAKE_ENOMEM;
	}
	p->n_order = n;
	p->last_action = sim_now(s);
	p->next_resync = -1;
	*state = p;
	return DRAKE_OK;
}

static void dragon_release(void *state)
{
	struct dragon_pstate *p = state;
	if (!p)
		return;
	free(p->order);
	free(p);
}

static void shuffle(struct sim *s, struct dragon_pstate *p)
{
	for (size_t i = 0; i < p->n_order; i++)
		p->order[i] = (int)i;
	if (!sim_cfg(s)->dragon_shuffle)
		return;
	for (size_t i = p->n_order; i > 1; i--) {
		size_t k = (size_t)(sim_rand(s) % i);
		int t = p->order[i - 1];
		p->order[i - 1] = p->order[k];
		p->order[k] = t;
	}
}

/* Carries out a run's actions: ScaleDown's removals, the admission, then
 * ScaleUp's additions (each group of one job's changes is one rescale). */
static drake_err apply(struct sim *s, const int *w, struct drake_admission_entry *e,
                       const struct drake_step *st, const int *ids, bool *acted)
{
	struct drake_scale_op *down = malloc((st->n + 1) * sizeof(*down));
	struct drake_scale_op *up = malloc((st->n + 1) * sizeof(*up));
	size_t nd = 0, nu = 0;
	drake_err err = down && up ? DRAKE_OK : DRAKE_ENOMEM;
	int admit = -1;
	for (size_t i = 0; !err && i < st->n; i++) {
		const struct drake_action *a = &st->act[i];
		if (a->kind == DRAKE_ACT_SHRINK)
			down[nd++] = (struct drake_scale_op){a->job, a->slot, a->node};
		else if (a->kind == DRAKE_ACT_GROW)
			up[nu++] = (struct drake_scale_op){a->job, -1, a->node};
		else
			admit = a->job;
	}
	if (!err && nd)
		err = sim_apply_removals(s, ids, down, nd);
	if (!err && admit >= 0)
		err = sim_start(s, w[admit], &e[admit].plan);
	if (!err && nu)
		err = sim_apply_additions(s, ids, up, nu);
	*acted |= st->n > 0;
	free(down);
	free(up);
	return err;
}

/* One run of DRAGON's SchedulingAlgorithm (gang/dragon_step.h) on the
 * simulator's state. */
static drake_err run_once(struct sim *s, struct dragon_pstate *p, bool *acted)
{
	const struct sim_config *cfg = sim_cfg(s);
	size_t nw;
	const int *w = sim_waiting(s, &nw);
	shuffle(s, p);
	struct drake_admission_entry *e = calloc(nw + 1, sizeof(*e));
	struct drake_running_job *v = NULL;
	int *ids = NULL;
	size_t nr = 0;
	drake_err err = e ? sim_running_views(s, &v, &ids, &nr) : DRAKE_ENOMEM;
	for (size_t i = 0; !err && i < nw; i++) {
		const struct sim_job *j = sim_job(s, w[i]);
		e[i].created = j->submit;
		e[i].req = j->req;
	}
	/* the sim's removed pods leave at once: nothing is ever leaving */
	struct drake_dragon_opts o = {cfg->scale.starve_after, cfg->scale.idle_after, false};
	struct drake_dragon_state ds = {p->last_action};
	struct drake_step st = {0};
	if (!err)
		err = drake_dragon_step(sim_cluster(s), p->order, p->n_order, e, nw, v, nr,
		                        sim_now(s), &o, &ds, &st);
	if (!err) {
		p->last_action = ds.last_action;
		err = apply(s, w, e, &st, ids, acted);
	}
	drake_step_release(&st);
	if (e)
		drake_admission_release(e, nw);
	free(e);
	free(v);
	free(ids);
	return err;
}

static drake_err dragon_decide(struct sim *s, void *state)
{
	struct dragon_pstate *p = state;
	const struct sim_config *cfg = sim_cfg(s);
	double now = sim_now(s);
	size_t nw, nr;
	sim_waiting(s, &nw);
	sim_running(s, &nr);
	size_t runs = 1;
	if (p->next_resync < 0)
		p->next_resync = now + cfg->dragon_resync;
	if (now >= p->next_resync) {
		runs = nw + nr > 0 ? nw + nr : 1;
		p->next_resync = now + cfg->dragon_resync;
	}
	bool any = false;
	for (size_t r = 0; r < runs; r++) {
		bool acted = false;
		drake_err err = run_once(s, p, &acted);
		if (err)
			return err;
		any |= acted;
		if (!acted)
			break;
	}
	drake_err err = DRAKE_OK;
	if (any)
		err = sim_wake_at(s, now + cfg->dragon_reconcile_delay);
	sim_waiting(s, &nw);
	sim_running(s, &nr);
	if (!err && nw + nr > 0)
		err = sim_wake_at(s, p->next_resync);
	return err;
}

const struct sim_policy sim_policy_dragon = {"dragon", dragon_init, dragon_release, dragon_decide};
