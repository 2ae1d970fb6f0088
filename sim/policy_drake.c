/*
 * policy_drake.c - drake in the simulator: one call of gang/'s
 * drake_scale_step() per decision, the function the controller calls, and
 * its actions applied through the sim's. Nothing is decided here.
 *
 * The step's inputs are what the controller has too: the waiting jobs in
 * FIFO order, the running jobs with their admission and last-scaling
 * times, and whether each last gave workers to a job that still waits
 * (progress is unknown to both). Its timers come back as a wake-up time.
 */
#include <stdlib.h>
#include <string.h>

#include "gang/scale.h"
#include "sim/sim.h"

static drake_err drake_init(struct sim *s, void **state)
{
	(void)s;
	*state = NULL;
	return DRAKE_OK;
}

static void drake_release(void *state)
{
	(void)state;
}

/* Applies a step: removals first (the admissions' plans assume them), then
 * admissions, then growth. */
static drake_err apply(struct sim *s, const int *wids, struct drake_admission_entry *e,
                       const int *rids, const struct drake_step *st)
{
	struct drake_scale_op *ops = malloc((st->n + 1) * sizeof(*ops));
	if (!ops)
		return DRAKE_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct drake_action *a = &st->act[i];
		if (a->kind != DRAKE_ACT_SHRINK)
			continue;
		ops[n++] = (struct drake_scale_op){a->job, a->slot, a->node};
		sim_job(s, rids[a->job])->shrunk_for = wids[a->for_job];
	}
	drake_err err = sim_apply_removals(s, rids, ops, n);
	for (size_t i = 0; !err && i < st->n; i++)
		if (st->act[i].kind == DRAKE_ACT_ADMIT)
			err = sim_start(s, wids[st->act[i].job], &e[st->act[i].job].plan);
	n = 0;
	for (size_t i = 0; i < st->n; i++)
		if (st->act[i].kind == DRAKE_ACT_GROW)
			ops[n++] = (struct drake_scale_op){st->act[i].job, -1, st->act[i].node};
	if (!err)
		err = sim_apply_additions(s, rids, ops, n);
	free(ops);
	return err;
}

static drake_err drake_decide(struct sim *s, void *state)
{
	(void)state;
	const struct sim_config *cfg = sim_cfg(s);
	struct drake_scale_opts o = cfg->scale;
	o.speed = cfg->model.speed;
	size_t nw, nr;
	const int *w = sim_waiting(s, &nw);
	int *wids = malloc((nw + 1) * sizeof(int));
	struct drake_admission_entry *e = calloc(nw + 1, sizeof(*e));
	struct drake_running_job *v = NULL;
	int *rids = NULL;
	drake_err err = wids && e ? sim_running_views(s, &v, &rids, &nr) : DRAKE_ENOMEM;
	struct drake_step st = {0};
	if (!err) {
		memcpy(wids, w, nw * sizeof(int));
		for (size_t i = 0; i < nw; i++) {
			struct sim_job *j = sim_job(s, w[i]);
			e[i].name = j->t->id;
			e[i].created = j->submit;
			e[i].req = j->req;
		}
		err = drake_scale_step(sim_cluster(s), e, nw, v, nr, sim_now(s), &o, &st);
	}
	if (!err)
		err = apply(s, wids, e, rids, &st);
	if (!err && st.next < INFINITY)
		err = sim_wake_at(s, st.next);
	drake_step_release(&st);
	if (e)
		drake_admission_release(e, nw);
	free(e);
	free(wids);
	free(v);
	free(rids);
	return err;
}

const struct sim_policy sim_policy_drake = {"drake", drake_init, drake_release, drake_decide};
