/*
 * round_step.c - the round's scaling step (round.h, rules 5 and 6): new
 * and running jobs through drake_scale_step, its slots turned into worker
 * indexes, and pacing with its hold chain.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/dragon_step.h"
#include "gang/elastic.h"
#include "gang/pace.h"
#include "gang/round_internal.h"

/* A member of a running job as the step sees it: false when it rules the
 * job out (its node cannot be told, or it failed); *skip when it has
 * Succeeded, which makes the job ending since the earliest such time. */
static bool live_member(const struct drake_round_member *m, bool *skip, double *ending)
{
	*skip = false;
	if (m->finished && m->ended > 0) {
		*skip = true;
		if (m->ended < *ending)
			*ending = m->ended;
		return true;
	}
	return !m->finished && m->node >= 0;
}

/* A running job as the step sees it, into w's slot arrays; false when some
 * member's node cannot be told or it failed, or worker 0 is not a member
 * (worker 0 is slot 0, never given away). A job with members that
 * Succeeded is ending: its live members are its room, and the step never
 * scales it. */
static bool running_view(struct work *w, struct drake_running_job *v)
{
	const struct drake_round_job *j = w->in;
	*v = (struct drake_running_job){0};
	double ending = INFINITY;
	bool skip;
	int n_ps = 0;
	for (int i = 0; i < w->req.n_ps; i++) {
		const struct drake_round_member *m = &j->ps[i];
		if (!live_member(m, &skip, &ending))
			return false;
		if (!skip)
			w->ps_node[n_ps++] = m->node;
	}
	for (int i = 0; i < w->req.n_chief; i++)
		if (!live_member(&j->chief[i], &skip, &ending))
			return false;
	int n = 0;
	for (int i = 0; i < j->max_workers; i++) {
		if (!w->member[i])
			continue;
		if (!live_member(&j->workers[i], &skip, &ending))
			return false;
		if (skip)
			continue;
		w->w_node[n] = j->workers[i].node;
		w->w_index[n++] = i;
	}
	v->ending = ending < INFINITY;
	v->ending_since = v->ending ? ending : 0;
	if (!v->ending && (n == 0 || w->w_index[0] != 0))
		return false;
	v->name = j->name;
	v->admitted = j->admitted > 0 ? j->admitted : j->created;
	v->progress = j->progress;
	v->remaining = j->remaining_hint;
	v->slow = j->slow;
	v->min_workers = j->req.min_workers;
	v->max_workers = j->max_workers;
	v->want_workers = j->req.want_workers;
	v->ps = w->req.ps;
	v->worker = w->req.worker;
	v->n_ps = n_ps;
	v->ps_node = w->ps_node;
	v->n_workers = n;
	v->worker_node = w->w_node;
	v->last_scaled = w->rec && j->rec.at > 0 ? j->rec.at : v->admitted;
	v->service = j->service;
	v->obs = j->obs;
	v->n_obs = j->obs ? j->n_obs : 0;
	v->cost = j->cost;
	return true;
}

/* Some pod of some job is leaving its node, and not stuck (rule 5:
 * nobody gives workers): deleted, or a worker the job's record no longer
 * lists (a scale-down's worker whose deletion the snapshot does not show
 * yet), for DRAKE_LEAVING_STUCK seconds after the record was written. */
static bool round_leaving(const struct round_ctx *x)
{
	for (size_t i = 0; i < x->n; i++) {
		const struct drake_round_job *j = &x->jobs[i];
		int stray;
		if (round_strays(&x->w[i], &stray, 1) && j->rec.at > 0 &&
		    x->now < j->rec.at + DRAKE_LEAVING_STUCK)
			return true;
		const int n[DRAKE_NROLES] = {j->req.n_ps, j->req.n_chief, j->max_workers};
		for (int r = 0; r < DRAKE_NROLES; r++)
			for (int k = 0; k < n[r]; k++) {
				const struct drake_round_member *m =
				    round_member(j, (enum drake_role)r, k);
				if (m->leaving && (m->leaving_by <= 0 ||
				                   x->now < m->leaving_by + DRAKE_LEAVING_STUCK))
					return true;
			}
	}
	return false;
}

/* Until when some new job created within DRAKE_ARRIVAL_HOLD is still
 * arriving: a member missing (its pods being created) and none placed;
 * 0 when none is (gang/scale.h, the queue). */
static double round_arriving_until(const struct round_ctx *x)
{
	double until = 0;
	for (size_t i = 0; i < x->n; i++) {
		const struct drake_round_job *j = &x->jobs[i];
		double t = j->created + DRAKE_ARRIVAL_HOLD;
		if (x->w[i].cls != DRAKE_CLASS_INCOMPLETE || x->now >= t || t <= until)
			continue;
		bool placed = false;
		const int n[DRAKE_NROLES] = {j->req.n_ps, j->req.n_chief, j->max_workers};
		for (int r = 0; r < DRAKE_NROLES && !placed; r++)
			for (int k = 0; k < n[r] && !placed; k++)
				placed = round_member(j, (enum drake_role)r, k)->state ==
				         DRAKE_MEMBER_PLACED;
		if (!placed)
			until = t;
	}
	return until;
}

/* Step 5 by DRAGON's rules: its node order is the snapshot's (by name), its
 * action timer the round's in and out. */
static drake_err dragon(struct round_ctx *x, struct drake_admission_entry *e, size_t ne,
                        const struct drake_running_job *v, size_t nv, struct drake_step *st)
{
	int *order = malloc((x->cur->n + 1) * sizeof(*order));
	if (!order)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < x->cur->n; i++)
		order[i] = (int)i;
	struct drake_dragon_opts d = {x->o->scale.starve_after, x->o->scale.idle_after,
	                              round_leaving(x)};
	struct drake_dragon_state ds = {x->o->dragon_last_action};
	drake_err err =
	    drake_dragon_step(x->cur, order, x->cur->n, e, ne, v, nv, x->now, &d, &ds, st);
	x->out->dragon_last_action = ds.last_action;
	free(order);
	return err;
}

/* Members bound, and the first refusal, of a running job. */
void round_count_bound(struct work *w)
{
	const struct drake_round_job *j = w->in;
	const int n[DRAKE_NROLES] = {w->req.n_ps, w->req.n_chief, j->max_workers};
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int i = 0; i < n[r]; i++) {
			const struct drake_round_member *m = round_member(j, (enum drake_role)r, i);
			if ((r == DRAKE_ROLE_WORKER && !w->member[i]) ||
			    m->state == DRAKE_MEMBER_MISSING)
				continue;
			if (m->bound) {
				w->n_bound++;
				continue;
			}
			w->n_unbound++;
			if (!w->said && m->refused)
				w->said = m;
		}
}

drake_err round_unbound_hold(struct round_ctx *x, size_t i)
{
	struct work *w = &x->w[i];
	struct drake_round_action *a =
	    round_push(x, DRAKE_ROUND_HOLD, DRAKE_REASON_UNBOUND, (int)i);
	if (!a)
		return DRAKE_ENOMEM;
	a->status = DRAKE_ADMIT_WAITING;
	a->quiet = true;
	snprintf(a->gang, sizeof(a->gang), "%s", w->gang);
	if (w->said)
		snprintf(a->why, sizeof(a->why),
		         "admitted as gang %s; kube-scheduler has not placed %s: %.*s", w->gang,
		         w->said->name ? w->said->name : "",
		         drake_refusal_summary_len(w->said->refused), w->said->refused);
	else
		snprintf(a->why, sizeof(a->why),
		         "admitted as gang %s; its %d members wait for kube-scheduler to bind them",
		         w->gang, w->n_unbound);
	return DRAKE_OK;
}

/* SHRINK of view k: the step's actions s[0..n) (all SHRINK of it, for one
 * waiting job, or for none: for_job -1, it runs faster with fewer). */
static drake_err shrink(struct round_ctx *x, const struct work *w, const struct drake_action *s,
                        size_t n, const size_t *entry_job, const unsigned char *member, int members)
{
	bool faster = s[n - 1].for_job < 0;
	size_t to = faster ? 0 : entry_job[s[n - 1].for_job];
	struct drake_round_action *a =
	    round_push(x, DRAKE_ROUND_SHRINK, faster ? DRAKE_REASON_FASTER : DRAKE_REASON_GIVE,
	               (int)(w - x->w));
	if (!a)
		return DRAKE_ENOMEM;
	a->pods = calloc(n, sizeof(*a->pods));
	a->member = malloc((size_t)w->in->max_workers + 1);
	if (!a->pods || !a->member)
		return DRAKE_ENOMEM;
	memcpy(a->member, member, (size_t)w->in->max_workers);
	for (size_t i = 0; i < n; i++) {
		int idx = w->w_index[s[i].slot];
		size_t k = i; /* highest index first */
		for (; k > 0 && a->pods[k - 1].index < idx; k--)
			a->pods[k] = a->pods[k - 1];
		a->pods[k] = (struct drake_round_pod){
		    .role = DRAKE_ROLE_WORKER, .index = idx, .node = s[i].node};
		a->member[idx] = 0;
	}
	a->n_pods = (int)n;
	a->members_before = members;
	a->members_after = members - (int)n;
	if (faster) {
		a->for_job = -1;
		snprintf(a->why, sizeof(a->why),
		         "gave back %zu worker%s: the rates it reported say it runs faster with "
		         "fewer (%d -> %d workers)",
		         n, n == 1 ? "" : "s", a->members_before, a->members_after);
		return DRAKE_OK;
	}
	a->for_job = (int)to;
	a->since = x->now - x->jobs[to].created;
	snprintf(a->why, sizeof(a->why),
	         "gave %zu worker%s to %s, waiting %.0f s (%d -> %d workers)", n, n == 1 ? "" : "s",
	         x->jobs[to].name, a->since, a->members_before, a->members_after);
	return DRAKE_OK;
}

/* GROW of view k: the step's actions g[0..n) (all GROW of it). Each takes
 * the lowest gated worker that is not a member; none left: no action. */
static drake_err grow(struct round_ctx *x, const struct work *w, const struct drake_action *g,
                      size_t n)
{
	const struct drake_round_job *j = w->in;
	struct drake_round_pod *pods = calloc(n, sizeof(*pods));
	unsigned char *member = malloc((size_t)j->max_workers + 1);
	if (!pods || !member) {
		free(pods);
		free(member);
		return DRAKE_ENOMEM;
	}
	memcpy(member, w->member, (size_t)j->max_workers);
	int next = 0, added = 0;
	char where[120] = "";
	size_t wl = 0;
	for (size_t i = 0; i < n; i++) {
		while (next < j->max_workers &&
		       (member[next] || j->workers[next].state != DRAKE_MEMBER_WAITING))
			next++;
		if (next >= j->max_workers)
			break;
		member[next] = 1;
		pods[added++] = (struct drake_round_pod){
		    .role = DRAKE_ROLE_WORKER, .index = next, .node = g[i].node};
		const char *name = x->cur->nodes[g[i].node].name;
		if (!strstr(where, name) && wl < sizeof(where) - 1)
			wl += (size_t)snprintf(where + wl, sizeof(where) - wl, "%s%s",
			                       wl ? ", " : "", name);
	}
	struct drake_round_action *a =
	    added ? round_push(x, DRAKE_ROUND_GROW, DRAKE_REASON_SPEEDUP, (int)(w - x->w)) : NULL;
	if (!a) {
		free(pods);
		free(member);
		return added ? DRAKE_ENOMEM : DRAKE_OK; /* no gated worker left to add */
	}
	a->pods = pods;
	a->n_pods = added;
	a->member = member;
	a->gain = g[0].gain;
	a->members_before = w->n_members;
	a->members_after = w->n_members + added;
	if (x->o->policy == DRAKE_POLICY_DRAGON)
		snprintf(
		    a->why, sizeof(a->why),
		    "+%d worker%s on %s, DRAGON's ScaleUp after %.0f s without an action (%d -> "
		    "%d workers)",
		    added, added == 1 ? "" : "s", where, x->o->scale.idle_after, a->members_before,
		    a->members_after);
	else
		snprintf(a->why, sizeof(a->why),
		         "+%d worker%s on %s, modelled speed +%.0f%% (%d -> %d workers)", added,
		         added == 1 ? "" : "s", where, a->gain * 100, a->members_before,
		         a->members_after);
	return DRAKE_OK;
}

/* Rule 6 for one admitted wave: goes, or is held with every wave after it. */
static bool paced_go(struct round_ctx *x, long *admitted, int n_pods)
{
	long budget = x->o->pace_budget;
	if (budget <= 0)
		return true;
	if (x->out->held || !drake_pace_admits(budget, *admitted, n_pods))
		return false;
	*admitted += n_pods;
	return true;
}

void round_pace(struct round_ctx *x, struct drake_round_action *a, long *admitted)
{
	if (paced_go(x, admitted, a->n_pods))
		return;
	a->kind = DRAKE_ROUND_HOLD;
	a->reason = DRAKE_REASON_PACED;
	a->status = DRAKE_ADMIT_WAITING;
	snprintf(a->why, sizeof(a->why), "%s",
	         "paced: starts once kube-scheduler has bound the gangs admitted before it");
	x->out->held++;
}

drake_err round_step(struct round_ctx *x, long *admitted)
{
	struct drake_admission_entry *e = calloc(x->n + 1, sizeof(*e));
	size_t *entry_job = calloc(x->n + 1, sizeof(*entry_job));
	struct drake_running_job *v = calloc(x->n + 1, sizeof(*v));
	size_t *view_job = calloc(x->n + 1, sizeof(*view_job));
	struct drake_action *mine = NULL;
	size_t ne = 0, nv = 0;
	struct drake_step st = {0};
	drake_err err = e && entry_job && v && view_job ? DRAKE_OK : DRAKE_ENOMEM;
	for (size_t k = 0; !err && k < x->n; k++) {
		size_t i = x->order[k];
		struct work *w = &x->w[i];
		if (w->cls == DRAKE_CLASS_NEW && !w->backoff) {
			e[ne].name = w->in->name;
			e[ne].created = w->in->created;
			e[ne].req = w->req;
			e[ne].remaining = w->in->remaining_hint;
			entry_job[ne++] = i;
		} else if (w->cls == DRAKE_CLASS_RUNNING && running_view(w, &v[nv])) {
			v[nv].binding = w->n_unbound > 0; /* round_count_bound's */
			w->view = (int)nv;
			view_job[nv++] = i;
		}
	}
	for (size_t k = 0; k < nv; k++) {
		const char *to = x->w[view_job[k]].rec ? x->jobs[view_job[k]].rec.gave_to : NULL;
		for (size_t i = 0; to && i < ne; i++)
			if (!strcmp(e[i].name, to))
				v[k].gave_to_waiting = true;
	}
	if (!err && x->o->policy == DRAKE_POLICY_DRAGON)
		err = dragon(x, e, ne, v, nv, &st);
	else if (!err) {
		struct drake_scale_opts so = x->o->scale;
		so.shrinks_wait = round_leaving(x);
		so.arriving_until = round_arriving_until(x);
		err = drake_scale_step(x->cur, e, ne, v, nv, x->now, &so, &st);
	}
	if (!err) {
		x->out->next = st.next < x->out->next ? st.next : x->out->next;
		x->out->reserved_for = st.reserved_for >= 0 ? (int)entry_job[st.reserved_for] : -1;
	}
	for (size_t k = 0; !err && k < nv; k++) {
		struct drake_round_status *s = &x->out->jobs[view_job[k]];
		s->scalable = !v[k].ending;
		s->last_scaled = v[k].last_scaled;
		s->gave_to_waiting = v[k].gave_to_waiting;
		s->running = x->w[view_job[k]].n_bound > 0;
	}
	for (size_t k = 0; !err && k < ne; k++) {
		struct work *w = &x->w[entry_job[k]];
		struct drake_admission_entry *en = &e[k];
		if (en->status == DRAKE_ADMIT_STARTED) {
			bool starved = false;
			for (size_t i = 0; i < st.n; i++)
				starved |= st.act[i].kind == DRAKE_ACT_SHRINK &&
				           st.act[i].for_job == (int)k;
			struct drake_round_action *a = round_push(
			    x, DRAKE_ROUND_ADMIT,
			    starved ? DRAKE_REASON_STARVED : DRAKE_REASON_FITS, (int)entry_job[k]);
			err = a ? round_wave(x, a, w, &en->plan) : DRAKE_ENOMEM;
			if (!err)
				round_pace(x, a, admitted);
			continue;
		}
		enum drake_round_reason r = en->status == DRAKE_ADMIT_NEVER ? DRAKE_REASON_NEVER
		                            : en->status == DRAKE_ADMIT_NOT_TRIED
		                                ? DRAKE_REASON_FIFO
		                                : DRAKE_REASON_NO_FIT;
		struct drake_round_action *a =
		    round_push(x, DRAKE_ROUND_HOLD, r, (int)entry_job[k]);
		if (!a) {
			err = DRAKE_ENOMEM;
			break;
		}
		a->status = en->status;
		snprintf(a->why, sizeof(a->why), "%s",
		         r == DRAKE_REASON_FIFO ? "behind a job that waits (strict FIFO)"
		                                : en->why);
	}
	/* Per job, every action of a kind at once (a job may give workers to two
	 * starving jobs in one step; it never both gives and grows). A job that
	 * gives workers back and then gives more away gets two SHRINKs. */
	if (!err && !(mine = malloc((st.n + 1) * sizeof(*mine))))
		err = DRAKE_ENOMEM;
	for (size_t k = 0; !err && k < nv; k++) {
		const struct work *w = &x->w[view_job[k]];
		const unsigned char *member = w->member;
		int members = w->n_members;
		/* workers given back (SHRINK for none), given away (on what the
		 * first left), added */
		for (int pass = 0; !err && pass < 3; pass++) {
			enum drake_act_kind kind = pass < 2 ? DRAKE_ACT_SHRINK : DRAKE_ACT_GROW;
			size_t n = 0;
			for (size_t i = 0; i < st.n; i++)
				if (st.act[i].kind == kind && st.act[i].job == (int)k &&
				    (pass == 2 || (st.act[i].for_job < 0) == (pass == 0)))
					mine[n++] = st.act[i];
			if (n && kind == DRAKE_ACT_SHRINK) {
				err = shrink(x, w, mine, n, entry_job, member, members);
				if (!err) {
					member = x->out->act[x->out->n - 1].member;
					members = x->out->act[x->out->n - 1].members_after;
				}
			} else if (n) {
				err = grow(x, w, mine, n);
			}
		}
	}
	free(mine);
	drake_step_release(&st);
	if (e)
		drake_admission_release(e, ne);
	free(e);
	free(entry_job);
	free(v);
	free(view_job);
	return err;
}
