/*
 * round_tiresias.c - step 5 of the round (round.h) with policy
 * DRAKE_POLICY_TIRESIAS: Tiresias' 2D-LAS (gang/tiresias.h) as the Pollux
 * artifact runs it, on the controller.
 *
 *   - It decides at most every las_interval seconds: once now reaches
 *     opts' las_decided (the last decision) plus the interval, or when
 *     las_decided is negative (none yet). A decision at time 0 (the
 *     simulator's clock) is one like any other; the controller's 0 at its
 *     start is due at once, its clock being epoch seconds. Between
 *     decisions a new job is held (LAS_NEXT) and no running job is
 *     touched; repairs, backoff, pacing's note for unbound waves and stray
 *     releases go on as in every round.
 *   - A decision feeds drake_las_decide() every new job (not backing off)
 *     and every running job (every member placed, none finished), in FIFO
 *     order as their arrival sequence, each with its GPUs at its asked size
 *     (want_workers: jobs are rigid, never scaled) and its state: the job's
 *     las (kept by the caller between rounds), or, when the caller kept
 *     none and the job has attained service, drake_las_rebuild() of it.
 *     The cluster's GPUs are the schedulable nodes' allocatable GPUs less
 *     what the jobs outside the decision hold (repairs, ending jobs, jobs
 *     whose pods are being created): their placed members that have not
 *     finished.
 *   - A running job LAS no longer runs is PREEMPTed (LAS_PREEMPT), every
 *     placed pod of it named; the caller deletes them and the job comes
 *     back as a new job.
 *   - A new job LAS runs is planned rigid (min_workers = want_workers) by
 *     gang/planner.h on the snapshot with the preempted jobs' pods taken
 *     off, in LAS order, each plan charged before the next: ADMIT (paced as
 *     every wave), else HOLD NO_FIT, and it waits for the next decision.
 *     The artifact fits by GPU count over the whole cluster (its jobs take
 *     whole GPUs anywhere); here the nodes must hold the pods (CPU, memory,
 *     GPUs per node, node masks), so a job LAS runs can wait where the
 *     artifact would start it, and the GPUs LAS counted for it stay idle
 *     until the next decision unless a later job fits them.
 *   - A new job LAS does not run is held (LAS_QUEUE), its queue and
 *     service said.
 *
 * Every job's state after the round is in the round's status (las); the
 * decision's time in the round's las_decided; next is the next decision.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/admission.h"
#include "gang/round_internal.h"

static int64_t job_gpus(const struct work *w)
{
	return w->req.worker.gpu * w->req.want_workers + w->req.ps.gpu * w->req.n_ps +
	       w->req.chief.gpu * w->req.n_chief;
}

/* The GPUs w's members hold: placed and not finished. */
static int64_t held_gpus(const struct work *w)
{
	const struct drake_round_job *j = w->in;
	const int n[DRAKE_NROLES] = {w->req.n_ps, w->req.n_chief, j->max_workers};
	const int64_t g[DRAKE_NROLES] = {w->req.ps.gpu, w->req.chief.gpu, w->req.worker.gpu};
	int64_t sum = 0;
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int i = 0; i < n[r]; i++) {
			const struct drake_round_member *m = round_member(j, (enum drake_role)r, i);
			if (m->state == DRAKE_MEMBER_PLACED && !m->finished)
				sum += g[r];
		}
	return sum;
}

/* A running job LAS may decide on: every member placed, none finished. */
static bool decidable_running(const struct work *w)
{
	const struct drake_round_job *j = w->in;
	if (w->cls != DRAKE_CLASS_RUNNING)
		return false;
	const int n[DRAKE_NROLES] = {w->req.n_ps, w->req.n_chief, j->max_workers};
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int i = 0; i < n[r]; i++) {
			const struct drake_round_member *m = round_member(j, (enum drake_role)r, i);
			if (r == DRAKE_ROLE_WORKER && !w->member[i])
				continue;
			if (m->state != DRAKE_MEMBER_PLACED || m->finished)
				return false;
		}
	return true;
}

/* The running job's pods, as a PREEMPT names them; its pods' requests are
 * refunded on t (whole GPUs; a GPU share's vGPU stays charged). */
static drake_err preempt(struct round_ctx *x, size_t i, const struct drake_las_state *st,
                         struct drake_cluster *t)
{
	const struct work *w = &x->w[i];
	const struct drake_round_job *j = w->in;
	struct drake_round_action *a =
	    round_push(x, DRAKE_ROUND_PREEMPT, DRAKE_REASON_LAS_PREEMPT, (int)i);
	int slots = w->req.n_ps + w->req.n_chief + j->max_workers;
	if (!a || !(a->pods = calloc((size_t)slots + 1, sizeof(*a->pods))))
		return DRAKE_ENOMEM;
	const int n[DRAKE_NROLES] = {w->req.n_ps, w->req.n_chief, j->max_workers};
	const struct drake_res *res[DRAKE_NROLES] = {&w->req.ps, &w->req.chief, &w->req.worker};
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int k = 0; k < n[r]; k++) {
			const struct drake_round_member *m = round_member(j, (enum drake_role)r, k);
			if (m->state != DRAKE_MEMBER_PLACED)
				continue;
			a->pods[a->n_pods++] = (struct drake_round_pod){
			    .role = (enum drake_role)r, .index = k, .node = m->node};
			if (m->node >= 0 && (size_t)m->node < t->n)
				drake_cluster_charge(t, (size_t)m->node, res[r], -1);
		}
	snprintf(a->gang, sizeof(a->gang), "%s", w->gang);
	a->members_before = w->n_members;
	a->status = DRAKE_ADMIT_WAITING;
	snprintf(a->why, sizeof(a->why),
	         "preempted by 2D-LAS: queue %d, attained service %.0f GPU-s; jobs ahead of it "
	         "take its GPUs, it waits to run again",
	         st->queue, st->executed * (double)job_gpus(w));
	return DRAKE_OK;
}

static drake_err hold(struct round_ctx *x, size_t i, enum drake_round_reason reason, bool quiet,
                      const char *why)
{
	struct drake_round_action *a = round_push(x, DRAKE_ROUND_HOLD, reason, (int)i);
	if (!a)
		return DRAKE_ENOMEM;
	a->status = DRAKE_ADMIT_WAITING;
	a->quiet = quiet;
	snprintf(a->why, sizeof(a->why), "%s", why);
	return DRAKE_OK;
}

/* A new job LAS runs: planned rigid on t, admitted (paced) or held. */
static drake_err start(struct round_ctx *x, size_t i, struct drake_cluster *t, long *admitted)
{
	const struct work *w = &x->w[i];
	struct drake_gang_req rigid = w->req;
	rigid.min_workers = rigid.want_workers;
	struct drake_plan plan = {0};
	char why[DRAKE_WHY_MAX];
	drake_err e = drake_plan_gang(t, &rigid, &plan, why, sizeof(why));
	if (e == DRAKE_ESTATE || e == DRAKE_ELIMIT || e == DRAKE_EINVAL) {
		char msg[DRAKE_WHY_MAX];
		snprintf(msg, sizeof(msg),
		         "2D-LAS runs it, but its %d workers do not fit now: %.*s",
		         rigid.want_workers, (int)sizeof(msg) / 2, why);
		return hold(x, i, DRAKE_REASON_NO_FIT, false, msg);
	}
	if (e)
		return e;
	drake_plan_charge(t, &rigid, &plan, 1);
	struct drake_round_action *a = round_push(x, DRAKE_ROUND_ADMIT, DRAKE_REASON_FITS, (int)i);
	e = a ? round_wave(x, a, w, &plan) : DRAKE_ENOMEM;
	drake_plan_release(&plan);
	if (!e)
		round_pace(x, a, admitted);
	return e;
}

/* The running jobs' status, as round_step gives it (never scalable). */
static void running_status(struct round_ctx *x)
{
	for (size_t i = 0; i < x->n; i++) {
		struct work *w = &x->w[i];
		if (w->cls != DRAKE_CLASS_RUNNING || !decidable_running(w))
			continue;
		w->view = 0; /* round.c's note for a wave nothing of which is bound */
		struct drake_round_status *s = &x->out->jobs[i];
		s->running = w->n_bound > 0;
		s->last_scaled = w->in->admitted > 0 ? w->in->admitted : w->in->created;
	}
}

static drake_err between(struct round_ctx *x, double next)
{
	char why[DRAKE_WHY_MAX];
	snprintf(why, sizeof(why), "waits for the next 2D-LAS decision (every %.0f s)",
	         x->o->las_interval);
	for (size_t k = 0; k < x->n; k++) {
		size_t i = x->order[k];
		if (x->w[i].cls == DRAKE_CLASS_NEW && !x->w[i].backoff) {
			drake_err e = hold(x, i, DRAKE_REASON_LAS_NEXT, true, why);
			if (e)
				return e;
		}
	}
	if (next < x->out->next)
		x->out->next = next;
	return DRAKE_OK;
}

drake_err round_tiresias(struct round_ctx *x, long *admitted)
{
	const struct drake_round_opts *o = x->o;
	running_status(x);
	double next = o->las_decided + o->las_interval;
	if (o->las_decided >= 0 && x->now < next)
		return between(x, next);
	struct drake_las_job *lj = calloc(x->n + 1, sizeof(*lj));
	struct drake_las_state *st = calloc(x->n + 1, sizeof(*st));
	size_t *job = calloc(x->n + 1, sizeof(*job));
	size_t *order = calloc(x->n + 1, sizeof(*order));
	struct drake_cluster t;
	drake_cluster_init(&t);
	drake_err e = lj && st && job && order ? drake_cluster_clone(&t, x->cur) : DRAKE_ENOMEM;
	int64_t total = x->cur->alloc_total.gpu;
	size_t n = 0;
	for (size_t k = 0; !e && k < x->n; k++) {
		size_t i = x->order[k];
		const struct work *w = &x->w[i];
		bool fresh = w->cls == DRAKE_CLASS_NEW && !w->backoff;
		if (!fresh && !decidable_running(w)) {
			total -= held_gpus(w); /* a repair, an ending job, pods being made */
			continue;
		}
		st[n] = w->in->las;
		if (!st[n].seen && w->in->service > 0)
			drake_las_rebuild(&st[n], w->in->service, job_gpus(w), x->now, &o->las);
		lj[n] = (struct drake_las_job){
		    .gpus = job_gpus(w), .running = !fresh, .seq = (uint64_t)k, .st = &st[n]};
		job[n++] = i;
	}
	if (!e)
		e = drake_las_decide(lj, n, total > 0 ? total : 0, x->now, &o->las, order);
	for (size_t k = 0; !e && k < n; k++)
		x->out->jobs[job[k]].las = st[k];
	for (size_t k = 0; !e && k < n; k++)
		if (lj[order[k]].running && !lj[order[k]].run)
			e = preempt(x, job[order[k]], &st[order[k]], &t);
	for (size_t k = 0; !e && k < n; k++) {
		size_t q = order[k];
		if (lj[q].running)
			continue;
		if (lj[q].run) {
			e = start(x, job[q], &t, admitted);
			continue;
		}
		char why[DRAKE_WHY_MAX];
		snprintf(why, sizeof(why),
		         "2D-LAS queue %d, attained service %.0f GPU-s: the jobs ahead of it take "
		         "the GPUs",
		         st[q].queue, st[q].executed * (double)lj[q].gpus);
		e = hold(x, job[q], DRAKE_REASON_LAS_QUEUE, false, why);
	}
	if (!e) {
		x->out->las_decided = x->now;
		if (x->now + o->las_interval < x->out->next)
			x->out->next = x->now + o->las_interval;
	}
	drake_cluster_release(&t);
	free(lj);
	free(st);
	free(job);
	free(order);
	return e;
}
