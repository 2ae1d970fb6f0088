/*
 * policy_dragon.c - DRAGON's rules in the simulator as `drake serve --policy
 * dragon` runs them: one call of gang/'s drake_round() per decision with
 * policy DRAKE_POLICY_DRAGON (its step 5 is gang/dragon_step.h's run of
 * DRAGON's SchedulingAlgorithm: ScaleDown for a starving head, at most one
 * admission by first fit over the nodes in the snapshot's order, ScaleUp
 * after idle_after), through the sim's side of the round
 * (policy_round.h), the same inputs, node order and worker slots as
 * policy_drake.c. The one state kept between decisions is DRAGON's action
 * timer, which the controller keeps between its rounds too. The loop
 * decides again at the same instant while a decision changes something
 * (one admission per round), and the round's next time comes back as a
 * wake-up.
 */
#include <math.h>
#include <stdlib.h>

#include "sim/policy_round.h"

struct dragon_pstate {
	double last_action;
};

static drake_err dragon_init(struct sim *s, void **state)
{
	struct dragon_pstate *p = calloc(1, sizeof(*p));
	if (!p)
		return DRAKE_ENOMEM;
	p->last_action = sim_now(s);
	*state = p;
	return DRAKE_OK;
}

static void dragon_release(void *state)
{
	free(state);
}

static drake_err dragon_decide(struct sim *s, void *state)
{
	struct dragon_pstate *p = state;
	const struct sim_config *cfg = sim_cfg(s);
	struct drake_round_opts o = {.policy = DRAKE_POLICY_DRAGON,
	                             .dragon_last_action = p->last_action,
	                             .scale = cfg->scale};
	o.scale.speed = cfg->model.speed;
	double next = INFINITY;
	drake_err err = sim_round_once(s, &o, NULL, &next, &p->last_action);
	if (!err && next < INFINITY && next > sim_now(s))
		err = sim_wake_at(s, next);
	return err;
}

const struct sim_policy sim_policy_dragon = {"dragon", dragon_init, dragon_release, dragon_decide};
