/*
 * round_repair.c - the waves a round starts, and repairs: a running job's
 * lost members back onto the nodes recorded for them, else wherever the
 * planner puts them, alone and ahead of any new job (round.h, rule 3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/round_internal.h"

/* The pods a job cannot run without, per role. */
static struct drake_roles gang_min(const struct drake_gang_req *req)
{
	struct drake_roles r = {0};
	r.n[DRAKE_ROLE_PS] = req->n_ps;
	r.n[DRAKE_ROLE_CHIEF] = req->n_chief;
	r.n[DRAKE_ROLE_WORKER] = req->min_workers;
	return r;
}

/* A wave of the job's waiting pods, placed by plan. */
drake_err round_wave(struct round_ctx *x, struct drake_round_action *a, const struct work *w,
                     const struct drake_plan *plan)
{
	a->min = gang_min(&w->req);
	int n = plan->n_ps + plan->n_chief + plan->n_workers;
	/* A repair joins the wave its job's placed pods belong to, so the
	 * barrier counts them and completes that wave; every member counts,
	 * scaling included. Only a job with no wave on record gets a new one. */
	if (w->cls == DRAKE_CLASS_REPAIR && w->gang[0]) {
		snprintf(a->gang, sizeof(a->gang), "%s", w->gang);
		a->size = w->req.n_ps + w->req.n_chief + w->n_members;
	} else {
		drake_err e =
		    drake_gang_id_format(w->in->uid, (long long)x->now, a->gang, sizeof(a->gang));
		if (e) /* the round holds a job whose uid cannot name a wave */
			return e;
		a->size = n;
	}
	a->pods = calloc((size_t)n + 1, sizeof(*a->pods));
	if (!a->pods)
		return DRAKE_ENOMEM;
	a->n_pods = n;
	for (int i = 0; i < n; i++) {
		struct drake_round_pod *p = &a->pods[i];
		const struct drake_vgpu_pick *pick;
		if (i < plan->n_ps) {
			*p = (struct drake_round_pod){DRAKE_ROLE_PS, w->ps_idx[i], plan->ps_node[i],
			                              w->req.ps_share, ""};
			pick = plan->ps_vgpu ? &plan->ps_vgpu[i] : NULL;
		} else if (i < plan->n_ps + plan->n_chief) {
			*p = (struct drake_round_pod){DRAKE_ROLE_CHIEF, w->c_idx[i - plan->n_ps],
			                              plan->chief_node, w->req.chief_share, ""};
			pick = plan->chief_vgpu.id[0] ? &plan->chief_vgpu : NULL;
		} else {
			int k = i - plan->n_ps - plan->n_chief;
			*p =
			    (struct drake_round_pod){DRAKE_ROLE_WORKER, w->w_idx[k],
			                             plan->worker_node[k], w->req.worker_share, ""};
			pick = plan->worker_vgpu ? &plan->worker_vgpu[k] : NULL;
		}
		if (pick)
			snprintf(p->gpuid, sizeof(p->gpuid), "%s", pick->id);
		else
			p->share = (struct drake_share){0};
	}
	return DRAKE_OK;
}

/* The node recorded for a waiting member: where a migration in flight moves
 * it, or (a worker) where the scale-up that added it chose. */
static const char *hinted_node(const struct work *w, enum drake_role role, int index)
{
	const struct drake_round_job *j = w->in;
	if (j->move.active && j->move.role == role && j->move.index == index && j->move.to &&
	    j->move.to[0])
		return j->move.to;
	for (int i = 0; w->rec && role == DRAKE_ROLE_WORKER && i < j->rec.n_place; i++)
		if (j->rec.place[i].index == index)
			return j->rec.place[i].node;
	return NULL;
}

/* One waiting member onto its hinted node if it has room there (charged to
 * c as it goes); -1 when not. */
static int hinted(struct drake_cluster *c, const struct work *w, enum drake_role role, int index,
                  const struct drake_res *req)
{
	const char *name = hinted_node(w, role, index);
	int node = name ? drake_cluster_find(c, name) : -1;
	struct drake_res f;
	if (node >= 0)
		drake_cluster_free(c, (size_t)node, &f);
	if (node < 0 || !c->nodes[node].schedulable || !drake_res_fits(req, &f))
		return -1;
	drake_cluster_charge(c, (size_t)node, req, 1);
	return node;
}

/* Members that wait with a node recorded for each go there while those
 * nodes have room. ESTATE when any has no such node or room (the planner
 * then decides), or when a member shares a GPU (its vGPU is the planner's). */
static drake_err planned_hints(struct drake_cluster *c, const struct work *w,
                               const struct drake_gang_req *req, struct drake_plan *plan)
{
	*plan = (struct drake_plan){0};
	if ((!(w->rec && w->in->rec.n_place) && !w->in->move.active) || req->worker_share.milli ||
	    req->ps_share.milli || req->chief_share.milli)
		return DRAKE_ESTATE;
	plan->ps_node = malloc((size_t)(req->n_ps + 1) * sizeof(int));
	plan->worker_node = malloc((size_t)(req->want_workers + 1) * sizeof(int));
	if (!plan->ps_node || !plan->worker_node) {
		drake_plan_release(plan);
		return DRAKE_ENOMEM;
	}
	bool ok = true;
	for (int k = 0; ok && k < req->n_ps; k++)
		ok = (plan->ps_node[plan->n_ps++] =
		          hinted(c, w, DRAKE_ROLE_PS, w->ps_idx[k], &req->ps)) >= 0;
	if (ok && req->n_chief) {
		plan->n_chief = 1;
		ok = (plan->chief_node =
		          hinted(c, w, DRAKE_ROLE_CHIEF, w->c_idx[0], &req->chief)) >= 0;
	}
	for (int k = 0; ok && k < req->want_workers; k++)
		ok = (plan->worker_node[plan->n_workers++] =
		          hinted(c, w, DRAKE_ROLE_WORKER, w->w_idx[k], &req->worker)) >= 0;
	/* give back what was charged: the caller charges the plan */
	for (int k = 0; k < plan->n_ps; k++)
		if (plan->ps_node[k] >= 0)
			drake_cluster_charge(c, (size_t)plan->ps_node[k], &req->ps, -1);
	if (plan->n_chief && plan->chief_node >= 0)
		drake_cluster_charge(c, (size_t)plan->chief_node, &req->chief, -1);
	for (int k = 0; k < plan->n_workers; k++)
		if (plan->worker_node[k] >= 0)
			drake_cluster_charge(c, (size_t)plan->worker_node[k], &req->worker, -1);
	if (!ok) {
		drake_plan_release(plan);
		return DRAKE_ESTATE;
	}
	plan->nodes_spanned =
	    drake_plan_count_nodes(plan->ps_node, plan->n_ps, plan->worker_node, plan->n_workers);
	return DRAKE_OK;
}

/* Rule 3: the replacements of each running job, planned alone, first. */
drake_err round_repairs(struct round_ctx *x, long *admitted)
{
	for (size_t k = 0; k < x->n; k++) {
		size_t i = x->order[k];
		struct work *w = &x->w[i];
		if (w->cls != DRAKE_CLASS_REPAIR)
			continue;
		if (x->cur != &x->c) { /* the first repair: charge a copy */
			drake_err e = drake_cluster_clone(&x->c, x->cur);
			if (e)
				return e;
			x->cur = &x->c;
		}
		struct drake_gang_req req = w->req;
		req.n_ps = w->n_ps_idx;
		req.n_chief = w->n_c_idx;
		req.min_workers = req.want_workers = w->n_w_idx;
		struct drake_plan plan;
		char why[DRAKE_WHY_MAX];
		enum drake_round_reason reason = DRAKE_REASON_HINTED;
		drake_err e = planned_hints(&x->c, w, &req, &plan);
		if (e == DRAKE_ESTATE) {
			reason = DRAKE_REASON_LOST_MEMBERS;
			e = drake_plan_gang(&x->c, &req, &plan, why, sizeof(why));
		}
		if (e == DRAKE_ENOMEM)
			return e;
		struct drake_round_action *a =
		    round_push(x, e ? DRAKE_ROUND_HOLD : DRAKE_ROUND_REPAIR,
		               e ? DRAKE_REASON_REPAIR_WAITS : reason, (int)i);
		if (!a) {
			if (!e)
				drake_plan_release(&plan);
			return DRAKE_ENOMEM;
		}
		if (e) {
			a->status = e == DRAKE_ELIMIT ? DRAKE_ADMIT_NEVER : DRAKE_ADMIT_WAITING;
			snprintf(a->why, sizeof(a->why), "%s", why);
			continue;
		}
		drake_plan_charge(&x->c, &req, &plan, 1);
		e = round_wave(x, a, w, &plan);
		drake_plan_release(&plan);
		if (e)
			return e;
		*admitted += a->n_pods; /* repairs always go */
	}
	return DRAKE_OK;
}
