/*
 * round.c - drake's decision round (see round.h): members, repairs, backoff,
 * the scaling step, pacing and strays, in that order, on a clone of the
 * snapshot.
 */
#include "gang/round.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/elastic.h"
#include "gang/pace.h"

/* What the round makes of one job. */
struct work {
	const struct drake_round_job *in;
	struct drake_gang_req req; /* want_workers clamped to [min, max] */
	unsigned char *member;     /* max_workers entries */
	int n_members;
	bool rec;                    /* its record applies to its wave */
	int *ps_idx, *c_idx, *w_idx; /* waiting indexes per role (w: members only) */
	int n_ps_idx, n_c_idx, n_w_idx;
	enum drake_round_class cls;
	bool backoff;
	char gang[DRAKE_GANG_ID_MAX]; /* REPAIR, RUNNING: the wave of its placed pods */
	/* scalable: the running view, its slots' worker indexes */
	int view;
	int *ps_node, *w_node, *w_index;
	int n_bound, n_unbound;
	const struct drake_round_member *said; /* first member kube-scheduler refused */
};

struct round_ctx {
	const struct drake_round_job *jobs;
	size_t n;
	double now;
	const struct drake_round_opts *o;
	struct work *w;
	size_t *order;                   /* FIFO */
	const struct drake_cluster *cur; /* the snapshot, or clone once a repair charges it */
	struct drake_cluster c;
	struct drake_round *out;
	size_t cap;
};

static int clamp(int n, int lo, int hi)
{
	return n < lo ? lo : n > hi ? hi : n;
}

static struct drake_round_action *push(struct round_ctx *x, enum drake_round_kind kind,
                                       enum drake_round_reason reason, int job)
{
	struct drake_round *r = x->out;
	if (r->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 16;
		struct drake_round_action *a = realloc(r->act, cap * sizeof(*a));
		if (!a)
			return NULL;
		r->act = a;
		x->cap = cap;
	}
	struct drake_round_action *a = &r->act[r->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->reason = reason;
	a->job = job;
	a->for_job = -1;
	return a;
}

static const struct drake_round_member *member_of(const struct drake_round_job *j,
                                                  enum drake_role role, int i)
{
	return role == DRAKE_ROLE_PS      ? &j->ps[i]
	       : role == DRAKE_ROLE_CHIEF ? &j->chief[i]
	                                  : &j->workers[i];
}

/* The worker count of the wave that admitted the job: its gang size less PS
 * and chief, read from the first placed member that carries one; -1 none. */
static int admitted_workers(const struct work *w, const char **gang)
{
	const struct drake_round_job *j = w->in;
	const int n[DRAKE_NROLES] = {w->req.n_ps, w->req.n_chief, j->max_workers};
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int i = 0; i < n[r]; i++) {
			const struct drake_round_member *m = member_of(j, (enum drake_role)r, i);
			if (m->state == DRAKE_MEMBER_PLACED && m->gang) {
				*gang = m->gang;
				return m->gang_size - w->req.n_ps - w->req.n_chief;
			}
		}
	return -1;
}

/* Rule 1: the member workers. */
static void members(struct work *w)
{
	const struct drake_round_job *j = w->in;
	const char *gang = NULL;
	int n = admitted_workers(w, &gang);
	memset(w->member, 0, (size_t)j->max_workers + 1);
	if (j->rec.present && gang && j->rec.gang && !strcmp(j->rec.gang, gang)) {
		w->rec = true;
		memcpy(w->member, j->rec.member, (size_t)j->max_workers);
		w->n_members = j->rec.n;
		return;
	}
	/* none, or the record of an earlier wave: the job was admitted again */
	n = clamp(n < 0 ? w->req.want_workers : n, j->req.min_workers, j->max_workers);
	for (int i = 0; i < n; i++)
		w->member[i] = 1;
	w->n_members = n;
}

/* Rule 2: waiting indexes per role; false when a member is missing. */
static bool waiting(struct work *w)
{
	const struct drake_round_job *j = w->in;
	for (int i = 0; i < w->req.n_ps; i++) {
		if (j->ps[i].state == DRAKE_MEMBER_MISSING)
			return false;
		if (j->ps[i].state == DRAKE_MEMBER_WAITING)
			w->ps_idx[w->n_ps_idx++] = i;
	}
	for (int i = 0; i < w->req.n_chief; i++) {
		if (j->chief[i].state == DRAKE_MEMBER_MISSING)
			return false;
		if (j->chief[i].state == DRAKE_MEMBER_WAITING)
			w->c_idx[w->n_c_idx++] = i;
	}
	for (int i = 0; i < j->max_workers; i++) {
		if (!w->member[i])
			continue;
		if (j->workers[i].state == DRAKE_MEMBER_MISSING)
			return false;
		if (j->workers[i].state == DRAKE_MEMBER_WAITING)
			w->w_idx[w->n_w_idx++] = i;
	}
	return true;
}

/* The wave the job's pods belong to: the first member, PS, chief, then the
 * workers it asks for, that carries one. */
static void current_wave(struct work *w)
{
	const struct drake_round_job *j = w->in;
	const int n[DRAKE_NROLES] = {w->req.n_ps, w->req.n_chief, w->req.want_workers};
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int i = 0; i < n[r] && (r != DRAKE_ROLE_WORKER || i < j->max_workers); i++) {
			const struct drake_round_member *m = member_of(j, (enum drake_role)r, i);
			if (m->gang && m->gang_size > 0 && strlen(m->gang) < sizeof(w->gang)) {
				snprintf(w->gang, sizeof(w->gang), "%s", m->gang);
				return;
			}
		}
}

static drake_err work_init(struct work *w, const struct drake_round_job *j)
{
	memset(w, 0, sizeof(*w));
	w->in = j;
	w->view = -1;
	w->req = j->req;
	w->req.want_workers = clamp(j->req.want_workers, j->req.min_workers, j->max_workers);
	size_t slots = (size_t)j->req.n_ps + (size_t)j->req.n_chief + (size_t)j->max_workers;
	w->member = calloc((size_t)j->max_workers + 1, 1);
	w->ps_idx = malloc((2 * slots + (size_t)j->max_workers + 1) * sizeof(int));
	if (!w->member || !w->ps_idx)
		return DRAKE_ENOMEM;
	w->c_idx = w->ps_idx + j->req.n_ps;
	w->w_idx = w->c_idx + j->req.n_chief;
	w->ps_node = w->w_idx + j->max_workers;
	w->w_node = w->ps_node + j->req.n_ps;
	w->w_index = w->w_node + j->max_workers;
	members(w);
	if (!waiting(w)) {
		w->cls = DRAKE_CLASS_INCOMPLETE; /* pods being created or replaced */
		return DRAKE_OK;
	}
	int nw = w->n_ps_idx + w->n_c_idx + w->n_w_idx;
	int total = w->req.n_ps + w->req.n_chief + w->n_members;
	w->cls = nw == 0 ? DRAKE_CLASS_RUNNING : nw == total ? DRAKE_CLASS_NEW : DRAKE_CLASS_REPAIR;
	if (w->cls != DRAKE_CLASS_NEW)
		current_wave(w);
	return DRAKE_OK;
}

static void work_release(struct work *w)
{
	free(w->member);
	free(w->ps_idx);
}

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
static drake_err wave(struct round_ctx *x, struct drake_round_action *a, const struct work *w,
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
		snprintf(a->gang, sizeof(a->gang), "%.*s.%ld", DRAKE_GANG_ID_MAX - 24, w->in->uid,
		         (long)x->now);
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

/* ---- repairs ---- */

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
static drake_err repairs(struct round_ctx *x, long *admitted)
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
		struct drake_round_action *a = push(x, e ? DRAKE_ROUND_HOLD : DRAKE_ROUND_REPAIR,
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
		e = wave(x, a, w, &plan);
		drake_plan_release(&plan);
		if (e)
			return e;
		*admitted += a->n_pods; /* repairs always go */
	}
	return DRAKE_OK;
}

/* ---- backoff ---- */

/* Rule 4: a new job kube-scheduler refused, still within its backoff with
 * nothing it may wait for changed since. */
static drake_err backoff(struct round_ctx *x, size_t i)
{
	struct work *w = &x->w[i];
	const struct drake_round_job *j = w->in;
	if (w->cls != DRAKE_CLASS_NEW || j->refusal.tries <= 0 ||
	    drake_refusal_may_retry(&j->refusal, x->now, j->changed))
		return DRAKE_OK;
	w->backoff = true;
	if (j->refusal.until_s < x->out->next)
		x->out->next = j->refusal.until_s;
	struct drake_round_action *a = push(x, DRAKE_ROUND_HOLD, DRAKE_REASON_BACKOFF, (int)i);
	if (!a)
		return DRAKE_ENOMEM;
	a->status = DRAKE_ADMIT_WAITING;
	a->quiet = true;
	a->until = j->refusal.until_s;
	const char *ns_end = strchr(j->name, '/');
	int ns_len = ns_end ? (int)(ns_end - j->name) : (int)strlen(j->name);
	int n = snprintf(a->why, sizeof(a->why),
	                 "kube-scheduler cannot place %s: %s (refused %d time%s in a row; tried "
	                 "again in %.0fs, or sooner when a node or a PersistentVolumeClaim in %.*s "
	                 "changes)",
	                 j->refused_pod ? j->refused_pod : "", j->refused_why ? j->refused_why : "",
	                 j->refusal.tries, j->refusal.tries == 1 ? "" : "s",
	                 j->refusal.until_s - x->now, ns_len, j->name);
	if (n >= (int)sizeof(a->why)) /* cut: kube-scheduler's message was long */
		memcpy(a->why + sizeof(a->why) - 4, "...", 4);
	return DRAKE_OK;
}

/* ---- the scaling step ---- */

/* A running job as the step sees it, into w's slot arrays; false when some
 * member's node cannot be told, it is finishing, or worker 0 is not a
 * member (worker 0 is slot 0, never given away). */
static bool running_view(struct work *w, struct drake_running_job *v)
{
	const struct drake_round_job *j = w->in;
	*v = (struct drake_running_job){0};
	for (int i = 0; i < w->req.n_ps; i++) {
		const struct drake_round_member *m = &j->ps[i];
		if (m->finished || m->node < 0)
			return false;
		w->ps_node[i] = m->node;
	}
	for (int i = 0; i < w->req.n_chief; i++)
		if (j->chief[i].finished || j->chief[i].node < 0)
			return false;
	int n = 0;
	for (int i = 0; i < j->max_workers; i++) {
		if (!w->member[i])
			continue;
		if (j->workers[i].finished || j->workers[i].node < 0)
			return false;
		w->w_node[n] = j->workers[i].node;
		w->w_index[n++] = i;
	}
	if (n == 0 || w->w_index[0] != 0)
		return false;
	v->name = j->name;
	v->admitted = j->admitted > 0 ? j->admitted : j->created;
	v->progress = j->progress;
	v->slow = j->slow;
	v->min_workers = j->req.min_workers;
	v->max_workers = j->max_workers;
	v->ps = w->req.ps;
	v->worker = w->req.worker;
	v->n_ps = w->req.n_ps;
	v->ps_node = w->ps_node;
	v->n_workers = n;
	v->worker_node = w->w_node;
	v->last_scaled = w->rec && j->rec.at > 0 ? j->rec.at : v->admitted;
	return true;
}

/* Members bound, and the first refusal, of a running job. */
static void count_bound(struct work *w)
{
	const struct drake_round_job *j = w->in;
	const int n[DRAKE_NROLES] = {w->req.n_ps, w->req.n_chief, j->max_workers};
	for (int r = 0; r < DRAKE_NROLES; r++)
		for (int i = 0; i < n[r]; i++) {
			const struct drake_round_member *m = member_of(j, (enum drake_role)r, i);
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

static drake_err unbound_hold(struct round_ctx *x, size_t i)
{
	struct work *w = &x->w[i];
	struct drake_round_action *a = push(x, DRAKE_ROUND_HOLD, DRAKE_REASON_UNBOUND, (int)i);
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

/* SHRINK of view k: the step's actions s[0..n) (all SHRINK of it). */
static drake_err shrink(struct round_ctx *x, const struct work *w, const struct drake_action *s,
                        size_t n, const size_t *entry_job)
{
	size_t to = entry_job[s[n - 1].for_job];
	struct drake_round_action *a =
	    push(x, DRAKE_ROUND_SHRINK, DRAKE_REASON_GIVE, (int)(w - x->w));
	if (!a)
		return DRAKE_ENOMEM;
	a->pods = calloc(n, sizeof(*a->pods));
	a->member = malloc((size_t)w->in->max_workers + 1);
	if (!a->pods || !a->member)
		return DRAKE_ENOMEM;
	memcpy(a->member, w->member, (size_t)w->in->max_workers);
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
	a->for_job = (int)to;
	a->members_before = w->n_members;
	a->members_after = w->n_members - (int)n;
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
	    added ? push(x, DRAKE_ROUND_GROW, DRAKE_REASON_SPEEDUP, (int)(w - x->w)) : NULL;
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
	snprintf(a->why, sizeof(a->why),
	         "+%d worker%s on %s, modelled speed +%.0f%% (%d -> %d workers)", added,
	         added == 1 ? "" : "s", where, a->gain * 100, a->members_before, a->members_after);
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

static drake_err step(struct round_ctx *x, long *admitted)
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
			entry_job[ne++] = i;
		} else if (w->cls == DRAKE_CLASS_RUNNING && running_view(w, &v[nv])) {
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
	if (!err)
		err = drake_scale_step(x->cur, e, ne, v, nv, x->now, &x->o->scale, &st);
	if (!err) {
		x->out->next = st.next < x->out->next ? st.next : x->out->next;
		x->out->reserved_for = st.reserved_for >= 0 ? (int)entry_job[st.reserved_for] : -1;
	}
	for (size_t k = 0; !err && k < nv; k++) {
		struct drake_round_status *s = &x->out->jobs[view_job[k]];
		s->scalable = true;
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
			struct drake_round_action *a = push(
			    x, DRAKE_ROUND_ADMIT,
			    starved ? DRAKE_REASON_STARVED : DRAKE_REASON_FITS, (int)entry_job[k]);
			err = a ? wave(x, a, w, &en->plan) : DRAKE_ENOMEM;
			if (!err && !paced_go(x, admitted, a->n_pods)) {
				a->kind = DRAKE_ROUND_HOLD;
				a->reason = DRAKE_REASON_PACED;
				a->status = DRAKE_ADMIT_WAITING;
				snprintf(a->why, sizeof(a->why), "%s",
				         "paced: starts once kube-scheduler has bound the gangs "
				         "admitted before it");
				x->out->held++;
			}
			continue;
		}
		enum drake_round_reason r = en->status == DRAKE_ADMIT_NEVER ? DRAKE_REASON_NEVER
		                            : en->status == DRAKE_ADMIT_NOT_TRIED
		                                ? DRAKE_REASON_FIFO
		                                : DRAKE_REASON_NO_FIT;
		struct drake_round_action *a = push(x, DRAKE_ROUND_HOLD, r, (int)entry_job[k]);
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
	 * starving jobs in one step; it never both gives and grows). */
	if (!err && !(mine = malloc((st.n + 1) * sizeof(*mine))))
		err = DRAKE_ENOMEM;
	for (size_t k = 0; !err && k < nv; k++) {
		const struct work *w = &x->w[view_job[k]];
		for (int kind = DRAKE_ACT_SHRINK; !err && kind <= DRAKE_ACT_GROW; kind++) {
			size_t n = 0;
			for (size_t i = 0; i < st.n; i++)
				if ((int)st.act[i].kind == kind && st.act[i].job == (int)k)
					mine[n++] = st.act[i];
			if (n)
				err = kind == DRAKE_ACT_SHRINK ? shrink(x, w, mine, n, entry_job)
				                               : grow(x, w, mine, n);
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

/* Rule 7: workers still placed that the record no longer lists. */
static drake_err strays(struct round_ctx *x, size_t i)
{
	const struct work *w = &x->w[i];
	const struct drake_round_job *j = w->in;
	if (!w->rec || w->cls == DRAKE_CLASS_INCOMPLETE || w->backoff)
		return DRAKE_OK;
	int idx[8], n = 0;
	for (int k = 0; k < j->max_workers && n < 8; k++)
		if (!w->member[k] && j->workers[k].state == DRAKE_MEMBER_PLACED &&
		    !j->workers[k].finished)
			idx[n++] = k;
	if (!n)
		return DRAKE_OK;
	struct drake_round_action *a = push(x, DRAKE_ROUND_RELEASE, DRAKE_REASON_STRAY, (int)i);
	if (!a || !(a->pods = calloc((size_t)n, sizeof(*a->pods))))
		return DRAKE_ENOMEM;
	for (int k = n; k-- > 0;) /* highest index first */
		a->pods[a->n_pods++] = (struct drake_round_pod){
		    .role = DRAKE_ROLE_WORKER, .index = idx[k], .node = j->workers[idx[k]].node};
	snprintf(a->why, sizeof(a->why), "%d placed worker%s no longer in the scale record", n,
	         n == 1 ? "" : "s");
	return DRAKE_OK;
}

struct fifo_key {
	double created;
	const char *name;
	size_t job;
};

static int by_fifo(const void *a, const void *b)
{
	const struct fifo_key *x = a, *y = b;
	return drake_fifo_cmp(x->created, x->name, y->created, y->name);
}

static drake_err fifo(struct round_ctx *x)
{
	struct fifo_key *k = malloc((x->n + 1) * sizeof(*k));
	if (!k)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < x->n; i++)
		k[i] = (struct fifo_key){x->jobs[i].created, x->jobs[i].name, i};
	if (x->n > 1)
		qsort(k, x->n, sizeof(*k), by_fifo);
	for (size_t i = 0; i < x->n; i++)
		x->order[i] = k[i].job;
	free(k);
	return DRAKE_OK;
}

drake_err drake_round(const struct drake_cluster *c, const struct drake_round_job *jobs, size_t n,
                      double now, const struct drake_round_opts *o, struct drake_round *out)
{
	memset(out, 0, sizeof(*out));
	out->next = INFINITY;
	out->reserved_for = -1;
	struct round_ctx x = {.jobs = jobs, .n = n, .now = now, .o = o, .out = out, .cur = c};
	drake_cluster_init(&x.c);
	x.w = calloc(n + 1, sizeof(*x.w));
	x.order = calloc(n + 1, sizeof(*x.order));
	out->jobs = calloc(n + 1, sizeof(*out->jobs));
	out->n_jobs = n;
	drake_err err = x.w && x.order && out->jobs ? DRAKE_OK : DRAKE_ENOMEM;
	size_t ready = 0;
	for (; !err && ready < n; ready++)
		err = work_init(&x.w[ready], &jobs[ready]);
	if (!err)
		err = fifo(&x);
	for (size_t i = 0; !err && i < n; i++) {
		struct work *w = &x.w[i];
		struct drake_round_status *s = &out->jobs[i];
		s->cls = w->cls;
		s->members = w->n_members;
		s->record = w->rec;
		snprintf(s->gang, sizeof(s->gang), "%s", w->gang);
		if (w->cls == DRAKE_CLASS_RUNNING)
			count_bound(w);
	}
	long admitted = o->pace_unbound;
	if (!err)
		err = repairs(&x, &admitted);
	for (size_t k = 0; !err && k < n; k++)
		err = backoff(&x, x.order[k]);
	if (!err)
		err = step(&x, &admitted);
	for (size_t k = 0; !err && k < n; k++) {
		size_t i = x.order[k];
		if (x.w[i].view >= 0 && x.w[i].n_bound == 0)
			err = unbound_hold(&x, i);
	}
	for (size_t k = 0; !err && k < n; k++)
		err = strays(&x, x.order[k]);
	for (size_t i = 0; i < ready; i++)
		work_release(&x.w[i]);
	free(x.w);
	free(x.order);
	drake_cluster_release(&x.c);
	if (err)
		drake_round_release(out);
	return err;
}

void drake_round_release(struct drake_round *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->act[i].pods);
		free(r->act[i].member);
	}
	free(r->act);
	free(r->jobs);
	memset(r, 0, sizeof(*r));
}

const char *drake_round_kind_name(enum drake_round_kind k)
{
	static const char *const names[] = {"repair", "admit", "hold", "shrink", "grow", "release"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

const char *drake_round_reason_name(enum drake_round_reason r)
{
	static const char *const names[DRAKE_NREASONS] = {
	    "lost-members", "hinted",  "fits",    "starved",      "no-fit", "never",   "fifo",
	    "paced",        "backoff", "unbound", "repair-waits", "give",   "speedup", "stray"};
	return (unsigned)r < DRAKE_NREASONS ? names[r] : "?";
}
