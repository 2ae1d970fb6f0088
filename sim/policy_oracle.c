/*
 * policy_oracle.c - the oracle bound in the simulator: drake's round
 * (policy_drake.c, one call of gang/'s drake_round() per decision) with
 * the waiting jobs in order of least remaining work (gang/scale.h,
 * DRAKE_QUEUE_SRPT: aged jobs first, then remaining seconds at the asked
 * size times the GPUs asked), and the running job with most remaining
 * work (times the GPUs it holds) gives workers first to a waiting one
 * (DRAKE_VICTIM_MOST_REMAINING) where drake's gives the most served.
 * Everything else is drake's round with the flags given: starvation
 * shrink, growth into idle GPUs, rule 4a, locality, pacing off.
 *
 * The remaining work is the simulator's truth, which no scheduler on a
 * cluster has: the job's work left (its total less what it has done,
 * pauses charged included) over its speed at the size its spec asks for,
 * placed on as few nodes as it fits (a Pollux job: its application's
 * measured speed packed node by node; else gang/speed.h's model). So it is
 * a bound on what knowing run times is worth on a row, not a policy:
 * `drake serve` has no such option. Nothing is decided here.
 */
#include <stdlib.h>

#include "sim/policy_round.h"
#include "sim/pollux_model.h"

/* Seconds of work job id has left at the size its spec asks for, tightly
 * placed; 0 (unknown) when that speed is not positive. */
static double oracle_remaining(struct sim *s, int id)
{
	const struct sim_config *cfg = sim_cfg(s);
	const struct sim_job *j = sim_job(s, id);
	int w0 = j->req.want_workers > 0 ? j->req.want_workers : 1;
	int g = (int)(j->req.worker.gpu > 0 ? j->req.worker.gpu : 0);
	struct drake_speed sp = cfg->model.speed;
	sp.node_gpus = drake_speed_node_gpus(sim_cluster(s));
	double rate = 0;
	if (j->app) {
		int per = g > 0 && sp.node_gpus >= g ? sp.node_gpus / g : 1;
		int *node = malloc((size_t)w0 * sizeof(int));
		if (!node)
			return 0; /* unknown: FIFO among the unknown */
		for (int k = 0; k < w0; k++)
			node[k] = k / per;
		drake_err e = sim_papp_job_rate(j->app, j->t->batch_size, j->t->samples, node, w0,
		                                cfg->model.pollux_iterations, &rate);
		free(node);
		if (e)
			return 0;
	} else {
		rate = drake_speed_rate(&sp, w0, g, drake_speed_min_nodes(&sp, w0, g));
	}
	double left = j->work_total - j->work_done;
	return rate > 0 && left > 0 ? left / rate : 0;
}

static drake_err oracle_init(struct sim *s, void **state)
{
	(void)s;
	*state = NULL;
	return DRAKE_OK;
}

static void oracle_release(void *state)
{
	(void)state;
}

static drake_err oracle_decide(struct sim *s, void *state)
{
	(void)state;
	struct drake_scale_opts o = sim_cfg(s)->scale;
	o.queue = DRAKE_QUEUE_SRPT;
	o.shrink.order = DRAKE_VICTIM_MOST_REMAINING;
	return sim_drake_decide(s, &o, oracle_remaining);
}

const struct sim_policy sim_policy_oracle = {"oracle", oracle_init, oracle_release, oracle_decide};
