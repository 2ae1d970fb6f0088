/*
 * policy_drake.c - drake in the simulator: one call of gang/'s drake_round()
 * per decision, the function the controller calls (reconciler/admit.c),
 * through the sim's side of the round (policy_round.h). Nothing is decided
 * here. Its timers come back as a wake-up time.
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

static drake_err drake_decide(struct sim *s, void *state)
{
	(void)state;
	const struct sim_config *cfg = sim_cfg(s);
	struct drake_round_opts o = {.scale = cfg->scale};
	o.scale.speed = cfg->model.speed;
	double next = INFINITY;
	drake_err err = sim_round_once(s, &o, &next, NULL);
	/* not at this instant: the loop decides again while decisions change
	 * something, and the same state decides the same */
	if (!err && next < INFINITY && next > sim_now(s))
		err = sim_wake_at(s, next);
	return err;
}

const struct sim_policy sim_policy_drake = {"drake", drake_init, drake_release, drake_decide};
