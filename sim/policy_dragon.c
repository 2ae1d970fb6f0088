/*
 * policy_dragon.c - DRAGON's SchedulingAlgorithm (reference/policies.md
 * 1.4), driven the way DRAGON's controller drives it.
 *
 * DRAGON has no ticker: the algorithm runs on every reconcile. Here a
 * reconcile happens after every batch of sim events (job added, pods
 * finished), again reconcile_delay seconds after any action (its own pod
 * creations and deletions trigger reconciles), and at every TFJob informer
 * resync (every dragon_resync seconds), when it runs once per TFJob, as
 * the workqueue does, stopping early once a run changes nothing.
 *
 * One run: Phase 1, if the head of the queue has waited >= starve_after,
 * ScaleDown for its min workers (its PS not counted), resetting the action
 * timer even on failure; Phase 2, only if there was no starving head or
 * ScaleDown succeeded, admit the first job in FIFO order whose PS and min
 * workers fit by ScheduleJob, asking for spec.Worker.replicas workers, on
 * the resources as they were before this run's ScaleDown; Phase 3, if
 * idle_after seconds passed since the last action, ScaleUp. Node order is
 * a fresh seeded shuffle each run (Go map order), or by name.
 */
#include <stdlib.h>
#include <string.h>

#include "gang/admission.h"
#include "gang/dragon.h"
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

static drake_err run_once(struct sim *s, struct dragon_pstate *p, bool *acted)
{
	const struct sim_config *cfg = sim_cfg(s);
	double now = sim_now(s);
	struct drake_cluster *c = sim_cluster(s);
	drake_err err = DRAKE_OK;
	size_t nw;
	const int *w = sim_waiting(s, &nw);
	shuffle(s, p);

	/* Phase 1 */
	bool hp = nw > 0 && now - sim_job(s, w[0])->submit >= cfg->scale.starve_after;
	bool scaled_down = false;
	struct drake_cluster before;
	drake_cluster_init(&before);
	if (hp) {
		if ((err = drake_cluster_clone(&before, c)))
			return err;
		struct drake_running_job *v;
		int *ids;
		size_t nr;
		if ((err = sim_running_views(s, &v, &ids, &nr)))
			goto out;
		struct sim_job *head = sim_job(s, w[0]);
		struct drake_scale_op *ops = NULL;
		size_t n_ops = 0;
		err = drake_dragon_scale_down(c, p->order, p->n_order, v, nr, &head->req.worker,
		                              head->req.min_workers, &ops, &n_ops);
		if (err == DRAKE_OK) {
			scaled_down = true;
			if (n_ops) {
				err = sim_apply_removals(s, ids, ops, n_ops);
				*acted = true;
			}
		} else if (err == DRAKE_ESTATE) {
			err = DRAKE_OK;
		}
		free(ops);
		free(v);
		free(ids);
		p->last_action = now; /* even when ScaleDown failed */
		if (err)
			goto out;
	}

	/* Phase 2: at most one admission, on the pre-ScaleDown resources. */
	if (!hp || scaled_down) {
		const struct drake_cluster *view = hp ? &before : c;
		w = sim_waiting(s, &nw);
		for (size_t i = 0; i < nw; i++) {
			struct sim_job *j = sim_job(s, w[i]);
			struct drake_plan plan = {0};
			err = drake_dragon_schedule(view, p->order, p->n_order, &j->req, &plan);
			if (err == DRAKE_OK) {
				err = sim_start(s, w[i], &plan);
				drake_plan_release(&plan);
				*acted = true;
				p->last_action = now;
				break;
			}
			drake_plan_release(&plan);
			if (err != DRAKE_ESTATE)
				goto out;
			err = DRAKE_OK;
		}
		if (err)
			goto out;
	}

	/* Phase 3 */
	if (now - p->last_action >= cfg->scale.idle_after) {
		struct drake_running_job *v;
		int *ids;
		size_t nr;
		if ((err = sim_running_views(s, &v, &ids, &nr)))
			goto out;
		struct drake_scale_op *ops = NULL;
		size_t n_ops = 0;
		err = drake_dragon_scale_up(c, p->order, p->n_order, v, nr, &ops, &n_ops);
		if (!err && n_ops) {
			err = sim_apply_additions(s, ids, ops, n_ops);
			*acted = true;
		}
		free(ops);
		free(v);
		free(ids);
		p->last_action = now;
	}
out:
	drake_cluster_release(&before);
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
