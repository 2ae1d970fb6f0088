/*
 * policy_drake.c - drake in the simulator: one call of gang/'s drake_round()
 * per decision, the function the controller calls (reconciler/admit.c),
 * through the sim's side of the round (policy_round.h). Nothing is decided
 * here. Its timers come back as a wake-up time, and so does a Pollux job's
 * first report at a new size or spread (sim_observe), which the round
 * reads with each job's attained service.
 */
#include <math.h>

#include "sim/policy_round.h"

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

drake_err sim_drake_decide(struct sim *s, const struct drake_scale_opts *scale,
                           sim_remaining_fn remaining)
{
	const struct sim_config *cfg = sim_cfg(s);
	struct drake_round_opts o = {.scale = *scale};
	o.scale.speed = cfg->model.speed;
	double next = INFINITY;
	struct sim_round_keep keep = {.remaining = remaining};
	drake_err err = sim_round_once(s, &o, &next, remaining ? &keep : NULL);
	/* not at this instant: the loop decides again while decisions change
	 * something, and the same state decides the same */
	if (!err && next < INFINITY && next > sim_now(s))
		err = sim_wake_at(s, next);
	/* a Pollux job's first report at a new size or spread: look again then */
	size_t nr;
	const int *run = sim_running(s, &nr);
	for (size_t i = 0; !err && i < nr; i++) {
		const struct sim_job *j = sim_job(s, run[i]);
		double t = j->last_scaled + cfg->curves.interval;
		if (j->app && t > sim_now(s))
			err = sim_wake_at(s, t);
	}
	return err;
}

static drake_err drake_decide(struct sim *s, void *state)
{
	(void)state;
	return sim_drake_decide(s, &sim_cfg(s)->scale, NULL);
}

const struct sim_policy sim_policy_drake = {"drake", drake_init, drake_release, drake_decide};
