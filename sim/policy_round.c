/*
 * policy_round.c - the simulator's side of gang/round.h (policy_round.h):
 * the round's inputs built from the sim's jobs, its actions applied
 * through the sim's.
 */
#include "sim/policy_round.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Storage the round's inputs borrow for one decision. */
struct inputs {
	struct drake_round_job *jobs;
	int *ids; /* sim job of each round job */
	size_t nw, n;
	struct drake_round_member *members;
	unsigned char *member;
};

static void inputs_release(struct inputs *in)
{
	free(in->jobs);
	free(in->ids);
	free(in->members);
	free(in->member);
}

static drake_err build(struct sim *s, struct inputs *in, const struct sim_round_keep *keep)
{
	size_t nw, nr;
	const int *w = sim_waiting(s, &nw);
	const int *r = sim_running(s, &nr);
	size_t slots = 0;
	in->nw = nw;
	in->n = nw + nr;
	for (size_t i = 0; i < in->n; i++) {
		struct sim_job *j = sim_job(s, i < nw ? w[i] : r[i - nw]);
		slots += (size_t)j->req.n_ps + (size_t)j->max_workers;
	}
	in->jobs = calloc(in->n + 1, sizeof(*in->jobs));
	in->ids = calloc(in->n + 1, sizeof(*in->ids));
	in->members = calloc(slots + 1, sizeof(*in->members));
	in->member = calloc(slots + 1, 1);
	if (!in->jobs || !in->ids || !in->members || !in->member)
		return DRAKE_ENOMEM;
	struct drake_round_member *m = in->members;
	unsigned char *mb = in->member;
	for (size_t i = 0; i < in->n; i++) {
		int id = i < nw ? w[i] : r[i - nw];
		struct sim_job *j = sim_job(s, id);
		struct drake_round_job *x = &in->jobs[i];
		in->ids[i] = id;
		*x = (struct drake_round_job){.name = j->t->id,
		                              .uid = j->t->id,
		                              .created = j->submit,
		                              .req = j->req,
		                              .max_workers = j->max_workers,
		                              .ps = m,
		                              .workers = m + j->req.n_ps,
		                              .progress = -1};
		if (keep && keep->las)
			x->las = keep->las[id];
		if (keep && keep->remaining)
			x->remaining_hint = keep->remaining(s, id);
		m += j->req.n_ps + j->max_workers;
		const struct drake_round_member gated = {.state = DRAKE_MEMBER_WAITING, .node = -1};
		for (int k = 0; k < j->req.n_ps + j->max_workers; k++)
			x->ps[k] = gated;
		if (i < nw)
			continue;
		/* running: PS and worker slots bound in its one wave (named after
		 * the job: a sim job is admitted once), a record of its slots */
		const struct drake_round_member bound = {.state = DRAKE_MEMBER_PLACED,
		                                         .bound = true,
		                                         .gang = j->t->id,
		                                         .gang_size = j->n_ps + j->n_workers};
		for (int k = 0; k < j->n_ps; k++) {
			x->ps[k] = bound;
			x->ps[k].node = j->ps_node[k];
		}
		for (int k = 0; k < j->n_workers; k++) {
			int idx = j->worker_index[k];
			x->workers[idx] = bound;
			x->workers[idx].node = j->worker_node[k];
			mb[idx] = 1;
		}
		struct drake_running_job v;
		sim_observe(s, id, sim_cfg(s)->curves.interval);
		sim_running_view(s, id, &v);
		x->admitted = j->start;
		x->progress = v.progress;
		x->slow = v.slow;
		x->service = v.service;
		x->obs = v.obs;
		x->n_obs = v.n_obs;
		x->cost = v.cost;
		x->rec = (struct drake_round_record){
		    .present = true,
		    .gang = j->t->id,
		    .member = mb,
		    .n = j->n_workers,
		    .at = j->last_scaled,
		    .gave_to = j->shrunk_for >= 0 ? sim_job(s, j->shrunk_for)->t->id : NULL};
		mb += j->max_workers;
	}
	return DRAKE_OK;
}

/* An ADMIT action's pods as the plan sim_start takes (no chief, no shares
 * in the sim); under Tiresias the start pays its restart. */
static drake_err start(struct sim *s, int id, const struct drake_round_action *a,
                       enum drake_round_policy policy)
{
	struct drake_plan p = {0};
	p.ps_node = malloc((size_t)a->n_pods * sizeof(int) + 1);
	p.worker_node = malloc((size_t)a->n_pods * sizeof(int) + 1);
	drake_err err = p.ps_node && p.worker_node ? DRAKE_OK : DRAKE_ENOMEM;
	for (int i = 0; !err && i < a->n_pods; i++) {
		if (a->pods[i].role == DRAKE_ROLE_PS)
			p.ps_node[p.n_ps++] = a->pods[i].node;
		else if (a->pods[i].role == DRAKE_ROLE_WORKER)
			p.worker_node[p.n_workers++] = a->pods[i].node;
	}
	if (!err)
		err = sim_start(s, id, &p);
	/* sim_start charges a Pollux job's restart itself */
	if (!err && policy == DRAKE_POLICY_TIRESIAS && !sim_job(s, id)->app)
		err = sim_restart_pause(s, id, sim_cfg(s)->tiresias_restart);
	drake_plan_release(&p);
	return err;
}

/* Applies a round: preemptions and removals first (the admissions' plans
 * assume them), then admissions, then growth. A SHRINK names worker
 * indexes: their slots are looked up; a GROW's workers take the lowest
 * free indexes, the ones it names. */
static drake_err apply(struct sim *s, const struct inputs *in, const struct drake_round *r,
                       enum drake_round_policy policy)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->act[i].kind == DRAKE_ROUND_PREEMPT) {
			drake_err e = sim_preempt(s, in->ids[r->act[i].job]);
			if (e)
				return e;
		}
	size_t n = 0;
	const int *rids = in->ids + in->nw;
	size_t cap = 1;
	for (size_t i = 0; i < r->n; i++)
		cap += (size_t)r->act[i].n_pods;
	struct drake_scale_op *ops = malloc(cap * sizeof(*ops));
	if (!ops)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		const struct drake_round_action *a = &r->act[i];
		if (a->kind != DRAKE_ROUND_SHRINK)
			continue;
		int job = a->job - (int)in->nw;
		struct sim_job *j = sim_job(s, in->ids[a->job]);
		for (int k = 0; k < a->n_pods; k++) {
			int slot = sim_worker_slot(j, a->pods[k].index);
			if (slot <= 0) {
				free(ops);
				return DRAKE_ESTATE; /* the round's inputs came from the slots */
			}
			ops[n++] = (struct drake_scale_op){job, slot, a->pods[k].node};
		}
		if (a->for_job >= 0) /* else it gave them back, for no job */
			j->shrunk_for = in->ids[a->for_job];
	}
	drake_err err = sim_apply_removals(s, rids, ops, n);
	for (size_t i = 0; !err && i < r->n; i++)
		if (r->act[i].kind == DRAKE_ROUND_ADMIT)
			err = start(s, in->ids[r->act[i].job], &r->act[i], policy);
	n = 0;
	for (size_t i = 0; i < r->n; i++)
		for (int k = 0; r->act[i].kind == DRAKE_ROUND_GROW && k < r->act[i].n_pods; k++)
			ops[n++] = (struct drake_scale_op){r->act[i].job - (int)in->nw, -1,
			                                   r->act[i].pods[k].node};
	if (!err)
		err = sim_apply_additions(s, rids, ops, n);
	free(ops);
	return err;
}

drake_err sim_round_once(struct sim *s, const struct drake_round_opts *o, double *next,
                         struct sim_round_keep *keep)
{
	struct inputs in = {0};
	struct drake_round r = {0};
	struct drake_round_opts ro = *o;
	ro.scale.history = sim_history(s);
	if (keep) {
		ro.dragon_last_action = keep->dragon_last_action;
		ro.las_decided = keep->las_decided;
	}
	drake_err err = build(s, &in, keep);
	if (!err)
		err = drake_round(sim_cluster(s), in.jobs, in.n, sim_now(s), &ro, &r);
	if (!err)
		err = apply(s, &in, &r, ro.policy);
	if (!err && next)
		*next = r.next;
	if (!err && keep) {
		keep->dragon_last_action = r.dragon_last_action;
		keep->las_decided = r.las_decided;
		for (size_t i = 0; keep->las && i < in.n; i++)
			keep->las[in.ids[i]] = r.jobs[i].las;
	}
	drake_round_release(&r);
	inputs_release(&in);
	return err;
}
