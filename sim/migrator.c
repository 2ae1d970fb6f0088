/*
 * migrator.c - migrate/'s round (migrate/step.h) as the simulator's
 * migrator: the sim's world in, the move carried out (how the sim's state
 * maps onto the round's world is in migrator.h).
 */
#include "sim/migrator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "migrate/step.h"

#define NAME_MAX_LEN 96 /* "<job id>-worker-<slot>": ids are at most 63 bytes */

/* The replicas and waiting jobs the round sees, and where each replica
 * came from. */
struct world {
	struct mig_replica *r;
	int *job, *slot; /* slot -1: a PS */
	char (*name)[NAME_MAX_LEN];
	size_t n;
	struct mig_waiting *wait;
	size_t nwait;
};

static void world_release(struct world *w)
{
	free(w->r);
	free(w->job);
	free(w->slot);
	free(w->name);
	free(w->wait);
}

static void add(struct world *w, struct sim *s, int ji, int slot, int node)
{
	struct sim_job *j = sim_job(s, ji);
	size_t k = w->n++;
	bool ps = slot < 0;
	snprintf(w->name[k], sizeof(w->name[k]), "%s-%s-%d", j->t->id, ps ? "ps" : "worker",
	         ps ? -1 - slot : slot);
	w->job[k] = ji;
	w->slot[k] = slot;
	w->r[k] = (struct mig_replica){
	    .job = j->t->id,
	    .pod = w->name[k],
	    .role = ps ? DRAKE_ROLE_PS : DRAKE_ROLE_WORKER,
	    .node = node,
	    .req = ps ? j->req.ps : j->req.worker,
	    .migrations = ps ? 0 : j->moves[slot],
	    .last_migrated = ps ? -1 : j->moved_at[slot],
	    .progress = j->prog ? mig_progress_fraction(j->prog) : -1,
	    .role_live = ps ? j->n_ps : j->n_workers,
	    .role_min = ps ? j->req.n_ps : j->req.min_workers,
	    .admitted = j->start,
	    .cls = j->prog ? j->prog->cls : MIG_CLASS_UNKNOWN,
	};
}

/* Every running job's PS and workers, PS first, in admission order. */
static drake_err build(struct sim *s, struct world *w)
{
	size_t nr, total = 0;
	const int *run = sim_running(s, &nr);
	for (size_t i = 0; i < nr; i++)
		total += (size_t)(sim_job(s, run[i])->n_ps + sim_job(s, run[i])->n_workers);
	size_t nq;
	const int *q = sim_waiting(s, &nq);
	memset(w, 0, sizeof(*w));
	w->r = malloc((total + 1) * sizeof(*w->r));
	w->job = malloc((total + 1) * sizeof(int));
	w->slot = malloc((total + 1) * sizeof(int));
	w->name = malloc((total + 1) * sizeof(*w->name));
	w->wait = malloc((nq + 1) * sizeof(*w->wait));
	if (!w->r || !w->job || !w->slot || !w->name || !w->wait)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct sim_job *j = sim_job(s, run[i]);
		for (int p = 0; p < j->n_ps; p++)
			add(w, s, run[i], -1 - p, j->ps_node[p]);
		for (int k = 0; k < j->n_workers; k++)
			add(w, s, run[i], k, j->worker_node[k]);
	}
	for (size_t i = 0; i < nq; i++) {
		const struct sim_job *j = sim_job(s, q[i]);
		w->wait[w->nwait++] = (struct mig_waiting){j->t->id, &j->req};
	}
	return DRAKE_OK;
}

static drake_err decide(struct sim *s, void *arg)
{
	struct sim_mig_state *st = arg;
	double now = sim_now(s);
	size_t scaled = sim_scale_count(s);
	struct world w;
	drake_err err = build(s, &w);
	struct mig_world in = {.c = sim_cluster(s),
	                       .r = w.r,
	                       .nr = w.n,
	                       .wait = w.wait,
	                       .nwait = w.nwait,
	                       .moving = now < st->busy_until,
	                       .scaling = scaled != st->scaled_seen};
	st->scaled_seen = scaled;
	st->opts.speed = sim_cfg(s)->model.speed; /* the model the scaling step runs */
	struct mig_step_out out = {.held = MIG_HELD_NONE};
	if (!err)
		err = mig_step(&in, now, &st->opts, &out);
	if (!err && out.held == MIG_HELD_SCALING) {
		st->skipped_scaled++;
		err = sim_wake_at(s, now + SIM_MIG_TICK); /* the controller's next look */
	}
	if (!err && out.held == MIG_HELD_MOVING)
		st->skipped_busy++; /* woken when it ends */
	const struct mig_decision *d = &out.move;
	/* the sim moves workers; the policy moves nothing else */
	if (!err && out.held == MIG_MOVED && w.slot[d->replica] >= 0) {
		int ri = d->replica;
		err = sim_move_worker(s, w.job[ri], w.slot[ri], d->to);
		if (!err)
			log_debug("sim_migration", "t=%.0f why=\"%s\"", now, d->why);
		if (!err) {
			st->moves++;
			st->busy_until = now + sim_cfg(s)->model.speed.rescale_pause;
			err = sim_wake_at(s, st->busy_until);
		}
	}
	world_release(&w);
	return err;
}

void sim_migrator_init(struct sim_migrator *m, struct sim_mig_state *st, const struct mig_opts *o)
{
	memset(st, 0, sizeof(*st));
	if (o)
		st->opts = *o;
	else
		mig_defaults(&st->opts);
	st->busy_until = -1;
	*m = (struct sim_migrator){"migrate", decide, st};
}
