/*
 * observed.c - what drake saw each running job do, for its round
 * (gang/round.h: service, obs): the attained service, GPU-seconds its
 * placed members ran, added up pass by pass; and the rate its replicas'
 * progress reports show at each size and spread it ran at
 * (gang/speed_fit.h), measured between reports that came after the size
 * last changed (the first RATE_SETTLE_S after a change are the change's
 * own cost, not the size's speed).
 *
 * With --policy tiresias, also the job's 2D-LAS state (gang/tiresias.h)
 * as the last round left it.
 *
 * Kept in memory per job uid, as the progress reports are; a drake that
 * restarts (or a new leader) takes a running job's service to be its GPUs
 * now times its time since admission (a job preempted and waiting: the
 * service its drake.dev/preempted note recorded; its service before an
 * earlier preemption is lost), its rates come back with its next
 * reports, and its 2D-LAS state is rebuilt by the round from that service
 * (drake_las_rebuild: its queue from the service against the thresholds,
 * entered at the first decision after the restart).
 * Jobs that leave the round are forgotten after the pass.
 *
 * A job seen running and then ending (a member Succeeded, the round's
 * ending job) adds its attained service to the finished jobs' history
 * (gang/history.h), once: the round's guess at what a job that reports no
 * progress has left. The latest DRAKE_HISTORY_MAX are kept, in memory; a
 * job first seen already ending (as after a restart) is not counted, its
 * service not having been seen, so a drake that restarts starts the
 * history again.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gang/round.h"
#include "migrate/progress.h"
#include "reconciler/internal.h"

#define RATE_SETTLE_S 30.0

struct rec_observed {
	char uid[64];
	double service, at; /* GPU-seconds up to at */
	double gpus;        /* placed GPUs since at */
	int workers, nodes; /* its size and spread since `since` */
	double since;
	struct drake_speed_obs obs[DRAKE_SPEED_MAX_OBS];
	int n_obs;
	unsigned long seen;         /* the last pass that saw it */
	struct drake_las_state las; /* --policy tiresias: as the last round left it */
	bool ended;                 /* seen ending: counted in the history, or not to be */
};

static struct rec_observed *observed_of(struct reconciler *r, const char *uid, bool *fresh)
{
	*fresh = false;
	for (size_t i = 0; i < r->nobserved; i++)
		if (!strcmp(r->observed[i]->uid, uid))
			return r->observed[i];
	if (r->nobserved == RECONCILER_MAX_PROGRESS)
		return NULL;
	/* the entries stay where they are: the jobs observed before this one
	 * in the pass hold pointers into theirs (in->obs) */
	struct rec_observed **p = realloc(r->observed, (r->nobserved + 1) * sizeof(*p));
	if (!p)
		return NULL;
	r->observed = p;
	struct rec_observed *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	r->observed[r->nobserved++] = e;
	snprintf(e->uid, sizeof(e->uid), "%s", uid);
	*fresh = true;
	return e;
}

/* Placed GPUs, workers and distinct nodes of in's live members; *ended
 * when a member Succeeded at a known time (what makes the round take the
 * job to be ending, gang/round.h). */
static void placed(const struct drake_round_job *in, double *gpus, int *workers, int *nodes,
                   bool *ended)
{
	int seen[64], n_seen = 0;
	*gpus = 0;
	*workers = 0;
	*nodes = 0;
	*ended = false;
	const int n[DRAKE_NROLES] = {in->req.n_ps, in->req.n_chief, in->max_workers};
	const struct drake_res *res[DRAKE_NROLES] = {&in->req.ps, &in->req.chief, &in->req.worker};
	const struct drake_round_member *m[DRAKE_NROLES] = {in->ps, in->chief, in->workers};
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int i = 0; i < n[r]; i++) {
			const struct drake_round_member *x = &m[r][i];
			*ended |= x->finished && x->ended > 0;
			if (x->state != DRAKE_MEMBER_PLACED || !x->bound || x->finished ||
			    x->node < 0)
				continue;
			*gpus += (double)res[r]->gpu;
			if (r == DRAKE_ROLE_WORKER)
				(*workers)++;
			int k = 0;
			while (k < n_seen && seen[k] != x->node)
				k++;
			if (k == n_seen && n_seen < 64)
				seen[n_seen++] = x->node;
		}
	*nodes = n_seen;
}

/* The job's rate at its current size, from reports after since + settle:
 * its fraction of steps per second (steps per second when the total is
 * not known); false without two such reports. */
static bool rate_since(const struct mig_progress *p, double since, double *rate)
{
	const struct mig_sample *first = NULL, *last = NULL;
	for (size_t k = 0; k < p->n; k++) {
		const struct mig_sample *s = &p->ring[(p->head + k) % MIG_RING];
		if (s->t < since + RATE_SETTLE_S)
			continue;
		if (!first)
			first = s;
		last = s;
	}
	if (!first || last == first || last->t <= first->t || last->step <= first->step)
		return false;
	*rate = (double)(last->step - first->step) / (last->t - first->t);
	if (p->total_steps > 0)
		*rate /= (double)p->total_steps;
	return isfinite(*rate) && *rate > 0;
}

struct drake_history rec_history(const struct reconciler *r)
{
	return drake_history_of(&r->history);
}

void rec_observe(struct reconciler *r, const char *key, struct drake_round_job *in, double now)
{
	bool fresh;
	struct rec_observed *e = in->uid ? observed_of(r, in->uid, &fresh) : NULL;
	if (!e)
		return; /* no room or memory: the round goes on without */
	double gpus;
	int workers, nodes;
	bool ended;
	placed(in, &gpus, &workers, &nodes, &ended);
	if (fresh) {
		double since = in->admitted > 0 ? in->admitted : now;
		e->service = gpus * (now > since ? now - since : 0);
		if (in->service > e->service) /* a preempted job's, from its note */
			e->service = in->service;
		e->since = in->rec.at > since ? in->rec.at : since;
	} else if (now > e->at) {
		e->service += e->gpus * (now - e->at);
	}
	e->at = now;
	e->gpus = gpus;
	e->seen = r->observe_pass;
	if (workers != e->workers || nodes != e->nodes) {
		e->workers = workers;
		e->nodes = nodes;
		if (!fresh)
			e->since = now;
	}
	if (!e->ended && ended) {
		e->ended = true;
		if (!fresh && e->service > 0)
			drake_history_put(&r->history, e->service);
	}
	const struct mig_progress *p = rec_job_samples(r, key, in->uid);
	double rate;
	if (p && workers > 0 && rate_since(p, e->since, &rate)) {
		drake_speed_obs_put(e->obs, &e->n_obs,
		                    (struct drake_speed_obs){workers, nodes, rate});
	}
	in->service = e->service;
	in->las = e->las;
	in->obs = e->n_obs ? e->obs : NULL;
	in->n_obs = e->n_obs;
}

void rec_observed_keep_las(struct reconciler *r, const char *uid, const struct drake_las_state *st)
{
	for (size_t i = 0; i < r->nobserved; i++)
		if (!strcmp(r->observed[i]->uid, uid)) {
			r->observed[i]->las = *st;
			return;
		}
}

void rec_observed_gc(struct reconciler *r)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->nobserved; i++)
		if (r->observed[i]->seen == r->observe_pass)
			r->observed[kept++] = r->observed[i];
		else
			free(r->observed[i]);
	r->nobserved = kept;
}

void rec_observed_free(struct reconciler *r)
{
	for (size_t i = 0; i < r->nobserved; i++)
		free(r->observed[i]);
	free(r->observed);
	r->observed = NULL;
	r->nobserved = 0;
}
