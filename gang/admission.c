/*
 * admission.c - FIFO admission of whole gangs, with backfill.
 *
 * A cheap aggregate check (is there enough free in total for the PS, the
 * chief and min workers?) runs before the planner, so a long queue behind a full cluster
 * costs one comparison per job, not one plan.
 */
#include "gang/admission.h"

#include <stdlib.h>
#include <string.h>

int drake_fifo_cmp(double created_a, const char *name_a, double created_b, const char *name_b)
{
	if (created_a != created_b)
		return created_a < created_b ? -1 : 1;
	return strcmp(name_a ? name_a : "", name_b ? name_b : "");
}

static int cmp_entry(const void *a, const void *b)
{
	const struct drake_admission_entry *x = a, *y = b;
	return drake_fifo_cmp(x->created, x->name, y->created, y->name);
}

void drake_admission_sort(struct drake_admission_entry *e, size_t n)
{
	if (n > 1)
		qsort(e, n, sizeof(*e), cmp_entry);
}

void drake_plan_charge(struct drake_cluster *c, const struct drake_gang_req *req,
                       const struct drake_plan *p, int sign)
{
	for (int i = 0; i < p->n_ps; i++) {
		drake_cluster_charge(c, (size_t)p->ps_node[i], &req->ps, sign);
		if (p->ps_vgpu)
			drake_cluster_charge_vgpu(c, (size_t)p->ps_node[i], p->ps_vgpu[i].id,
			                          &req->ps_share, sign);
	}
	for (int i = 0; i < p->n_workers; i++) {
		drake_cluster_charge(c, (size_t)p->worker_node[i], &req->worker, sign);
		if (p->worker_vgpu)
			drake_cluster_charge_vgpu(c, (size_t)p->worker_node[i],
			                          p->worker_vgpu[i].id, &req->worker_share, sign);
	}
	if (p->n_chief) {
		drake_cluster_charge(c, (size_t)p->chief_node, &req->chief, sign);
		if (p->chief_vgpu.id[0])
			drake_cluster_charge_vgpu(c, (size_t)p->chief_node, p->chief_vgpu.id,
			                          &req->chief_share, sign);
	}
}

drake_err drake_admit_one(struct drake_cluster *c, struct drake_admission_entry *x, bool backfill,
                          struct drake_res *avail)
{
	x->status = DRAKE_ADMIT_NOT_TRIED;
	x->why[0] = '\0';
	struct drake_res need;
	drake_gang_min_need(&x->req, &need);
	/* If this exceeds the free sum, planning is moot. Skip the planner only
	 * when the job could fit the empty cluster in total; otherwise the
	 * planner says whether it can never fit. Without backfill the head is
	 * always planned so a job that can never fit is never mistaken for one
	 * that blocks the queue. */
	/* A job with node masks may use tainted nodes the sums leave out. */
	bool masked = x->req.ps_ok || x->req.worker_ok || x->req.chief_ok;
	if (backfill && !masked && !drake_res_fits(&need, avail) &&
	    drake_res_fits(&need, &c->alloc_total)) {
		x->status = DRAKE_ADMIT_WAITING;
		strcpy(x->why, "waiting: not enough free capacity in the whole cluster");
		return DRAKE_OK;
	}
	drake_err err = drake_plan_gang(c, &x->req, &x->plan, x->why, sizeof(x->why));
	switch (err) {
	case DRAKE_OK:
		x->status = DRAKE_ADMIT_STARTED;
		drake_plan_charge(c, &x->req, &x->plan, 1);
		drake_res_add_n(avail, &x->req.ps, -x->req.n_ps);
		drake_res_add_n(avail, &x->req.chief, -x->plan.n_chief);
		drake_res_add_n(avail, &x->req.worker, -x->plan.n_workers);
		return DRAKE_OK;
	case DRAKE_ESTATE: x->status = DRAKE_ADMIT_WAITING; return DRAKE_OK;
	case DRAKE_ELIMIT: x->status = DRAKE_ADMIT_NEVER; return DRAKE_OK;
	case DRAKE_EINVAL: x->status = DRAKE_ADMIT_INVALID; return DRAKE_OK;
	default: return err;
	}
}

drake_err drake_admit(struct drake_cluster *c, struct drake_admission_entry *e, size_t n,
                      const struct drake_admission_opts *opts, size_t *started)
{
	struct drake_res avail;
	drake_cluster_free_sum(c, &avail);
	*started = 0;
	bool blocked = false;
	for (size_t i = 0; i < n; i++) {
		struct drake_admission_entry *x = &e[i];
		if (blocked || (opts->max_admits > 0 && *started >= (size_t)opts->max_admits)) {
			x->status = DRAKE_ADMIT_NOT_TRIED;
			x->why[0] = '\0';
			continue;
		}
		drake_err err = drake_admit_one(c, x, opts->backfill, &avail);
		if (err)
			return err;
		if (x->status == DRAKE_ADMIT_STARTED)
			(*started)++;
		else if (x->status == DRAKE_ADMIT_WAITING && !opts->backfill)
			blocked = true;
	}
	return DRAKE_OK;
}

void drake_admission_release(struct drake_admission_entry *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++)
		drake_plan_release(&e[i].plan);
}

const char *drake_admit_status_name(enum drake_admit_status s)
{
	switch (s) {
	case DRAKE_ADMIT_NOT_TRIED: return "not-tried";
	case DRAKE_ADMIT_STARTED: return "started";
	case DRAKE_ADMIT_WAITING: return "waiting";
	case DRAKE_ADMIT_NEVER: return "never";
	case DRAKE_ADMIT_INVALID: return "invalid";
	}
	return "unknown";
}
