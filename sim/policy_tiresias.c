/*
 * policy_tiresias.c - Tiresias in the simulator as `drake serve --policy
 * tiresias` runs it: one call of gang/'s drake_round() per decision with
 * policy DRAKE_POLICY_TIRESIAS (its step 5 is gang/round_tiresias.c:
 * 2D-LAS, gang/tiresias.h, every cfg->tiresias_interval seconds over the
 * new and running jobs, rigid at their asked size; PREEMPT for a running
 * job it no longer runs, which keeps its progress and waits again; the
 * jobs it runs planned rigid by gang/planner.h in its order), through the
 * sim's side of the round (policy_round.h). Nothing is decided here.
 *
 * What the controller keeps between its rounds is kept here: the last
 * decision's time and each job's 2D-LAS state, taken from the round's
 * status. The round's next decision comes back as a wake-up. Every start,
 * the first and each resume, costs cfg->tiresias_restart seconds without
 * progress, as the Pollux artifact's reallocate() (policy_round.c).
 */
#include <math.h>
#include <stdlib.h>

#include "sim/policy_round.h"

static drake_err tiresias_init(struct sim *s, void **state)
{
	struct sim_round_keep *p = calloc(1, sizeof(*p));
	if (!p)
		return DRAKE_ENOMEM;
	p->las = calloc(sim_job_count(s) + 1, sizeof(*p->las));
	if (!p->las) {
		free(p);
		return DRAKE_ENOMEM;
	}
	p->las_decided = -1; /* none yet: the first round decides, at time 0 too */
	*state = p;
	return DRAKE_OK;
}

static void tiresias_release(void *state)
{
	struct sim_round_keep *p = state;
	if (!p)
		return;
	free(p->las);
	free(p);
}

static drake_err tiresias_decide(struct sim *s, void *state)
{
	const struct sim_config *cfg = sim_cfg(s);
	struct drake_round_opts o = {.policy = DRAKE_POLICY_TIRESIAS,
	                             .las = cfg->las,
	                             .las_interval = cfg->tiresias_interval,
	                             .scale = cfg->scale};
	o.scale.speed = cfg->model.speed;
	double next = INFINITY;
	drake_err err = sim_round_once(s, &o, &next, state);
	size_t nw, nr;
	sim_waiting(s, &nw);
	sim_running(s, &nr);
	if (!err && nw + nr > 0 && next < INFINITY && next > sim_now(s))
		err = sim_wake_at(s, next);
	return err;
}

const struct sim_policy sim_policy_tiresias = {"tiresias", tiresias_init, tiresias_release,
                                               tiresias_decide};
