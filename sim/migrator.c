/*
 * migrator.c - migrate/'s overload policy as the simulator's migrator (the
 * rules the sim follows, and where they come from, are in migrator.h).
 */
#include "sim/migrator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#define NAME_MAX_LEN 96 /* "<job id>-worker-<slot>": ids are at most 63 bytes */

/* The replicas and waiting jobs mig_decide_all sees, and where each
 * replica came from. */
struct world {
	struct mig_replica *r;
	int *job, *slot; /* slot -1: a PS */
	char (*name)[NAME_MAX_LEN];
	size_t n;
	struct mig_waiting wait[MIG_WAIT_LOOK];
	size_t nwait;
	bool any_slow;
};

static void world_release(struct world *w)
{
	free(w->r);
	free(w->job);
	free(w->slot);
	free(w->name);
}

/* As reconciler/migrations.c rec_job_slow. */
static bool slow(const struct sim_job *j)
{
	return j->prog &&
	       (j->prog->cls == MIG_CLASS_SLOWING || j->prog->cls == MIG_CLASS_CONVERGED);
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
	    .slow = slow(j),
	};
}

/* Every running job's PS and workers, PS first, in admission order. */
static drake_err build(struct sim *s, struct world *w)
{
	size_t nr, total = 0;
	const int *run = sim_running(s, &nr);
	for (size_t i = 0; i < nr; i++)
		total += (size_t)(sim_job(s, run[i])->n_ps + sim_job(s, run[i])->n_workers);
	memset(w, 0, sizeof(*w));
	w->r = malloc((total + 1) * sizeof(*w->r));
	w->job = malloc((total + 1) * sizeof(int));
	w->slot = malloc((total + 1) * sizeof(int));
	w->name = malloc((total + 1) * sizeof(*w->name));
	if (!w->r || !w->job || !w->slot || !w->name)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct sim_job *j = sim_job(s, run[i]);
		for (int p = 0; p < j->n_ps; p++)
			add(w, s, run[i], -1 - p, j->ps_node[p]);
		for (int k = 0; k < j->n_workers; k++)
			add(w, s, run[i], k, j->worker_node[k]);
		w->any_slow |= slow(j);
	}
	size_t nq;
	const int *q = sim_waiting(s, &nq);
	for (size_t i = 0; i < nq && w->nwait < MIG_WAIT_LOOK; i++) {
		const struct sim_job *j = sim_job(s, q[i]);
		w->wait[w->nwait++] = (struct mig_waiting){j->t->id, &j->req};
	}
	return DRAKE_OK;
}

/* mig_decide_all makes no overload decision without an overloaded node,
 * and no better-placement one without a waiting job and a slow one: skip
 * building the replicas without either (the same outcome, far cheaper on
 * a quiet cluster). */
static bool any_overloaded(const struct drake_cluster *c, double k)
{
	struct mig_spread sp;
	mig_spread(c, &sp);
	for (size_t i = 0; i < c->n; i++)
		if (mig_overloaded(c, i, &sp, k))
			return true;
	return false;
}

static drake_err decide(struct sim *s, void *arg)
{
	struct sim_mig_state *st = arg;
	double now = sim_now(s);
	size_t scaled = sim_scale_count(s);
	if (scaled != st->scaled_seen) {
		st->scaled_seen = scaled;
		st->skipped_scaled++;
		return sim_wake_at(s, now + SIM_MIG_TICK);
	}
	if (now < st->busy_until) {
		st->skipped_busy++;
		return DRAKE_OK; /* woken when it ends */
	}
	struct drake_cluster *c = sim_cluster(s);
	st->opts.speed = sim_cfg(s)->model.speed; /* the model the scaling step runs */
	size_t nq;
	sim_waiting(s, &nq);
	if (!any_overloaded(c, st->opts.k) && (nq == 0 || !st->opts.better_placement))
		return DRAKE_OK;
	struct world w;
	struct mig_decision *d = NULL;
	size_t n = 0;
	drake_err err = build(s, &w);
	if (!err && !w.any_slow)
		w.nwait = 0; /* nothing may yield */
	if (!err)
		err = mig_decide_all(c, w.r, w.n, w.wait, w.nwait, now, &st->opts, &d, &n);
	if (!err && n > 0 && w.slot[d[0].replica] >= 0) { /* the policy moves only workers */
		int ri = d[0].replica;
		err = sim_move_worker(s, w.job[ri], w.slot[ri], d[0].to);
		if (!err)
			log_debug("sim_migration", "t=%.0f why=\"%s\"", now, d[0].why);
		if (!err) {
			st->moves++;
			st->busy_until = now + sim_cfg(s)->model.speed.rescale_pause;
			err = sim_wake_at(s, st->busy_until);
		}
	}
	free(d);
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
