/*
 * round.c - drake's decision round (see round.h): each job's members and
 * class, FIFO, backoff, strays, and the round in order; repairs and waves
 * are in round_repair.c, the scaling step and pacing in round_step.c.
 */
#include "gang/round_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/elastic.h"
#include "gang/pace.h"

static int clamp(int n, int lo, int hi)
{
	return n < lo ? lo : n > hi ? hi : n;
}

struct drake_round_action *round_push(struct round_ctx *x, enum drake_round_kind kind,
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

const struct drake_round_member *round_member(const struct drake_round_job *j, enum drake_role role,
                                              int i)
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
			const struct drake_round_member *m = round_member(j, (enum drake_role)r, i);
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
			const struct drake_round_member *m = round_member(j, (enum drake_role)r, i);
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
	struct drake_round_action *a =
	    round_push(x, DRAKE_ROUND_HOLD, DRAKE_REASON_BACKOFF, (int)i);
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

/* A new job whose uid cannot name a wave (gang/protocol.h) is not planned:
 * the API server's uids always can, so it is said once and held. */
static drake_err unnamed(struct round_ctx *x, size_t i)
{
	struct work *w = &x->w[i];
	char id[DRAKE_GANG_ID_MAX];
	if (w->cls != DRAKE_CLASS_NEW || w->backoff ||
	    drake_gang_id_format(w->in->uid, 0, id, sizeof(id)) == DRAKE_OK)
		return DRAKE_OK;
	w->backoff = true; /* out of the step, as a job backing off is */
	struct drake_round_action *a = round_push(x, DRAKE_ROUND_HOLD, DRAKE_REASON_NEVER, (int)i);
	if (!a)
		return DRAKE_ENOMEM;
	a->status = DRAKE_ADMIT_INVALID;
	snprintf(a->why, sizeof(a->why), "its uid %.80s cannot name a gang (\"<uid>.<wave>\")",
	         w->in->uid ? w->in->uid : "(none)");
	return DRAKE_OK;
}

int round_strays(const struct work *w, int *idx, int cap)
{
	const struct drake_round_job *j = w->in;
	if (!w->rec || w->cls == DRAKE_CLASS_INCOMPLETE || w->backoff)
		return 0;
	int n = 0;
	for (int k = 0; k < j->max_workers && n < cap; k++)
		if (!w->member[k] && j->workers[k].state == DRAKE_MEMBER_PLACED &&
		    !j->workers[k].finished)
			idx[n++] = k;
	return n;
}

/* Rule 7: workers still placed that the record no longer lists. */
static drake_err strays(struct round_ctx *x, size_t i)
{
	const struct work *w = &x->w[i];
	const struct drake_round_job *j = w->in;
	int idx[8];
	int n = round_strays(w, idx, 8);
	if (!n)
		return DRAKE_OK;
	struct drake_round_action *a =
	    round_push(x, DRAKE_ROUND_RELEASE, DRAKE_REASON_STRAY, (int)i);
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
	out->dragon_last_action = o->dragon_last_action;
	out->las_decided = o->las_decided;
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
		s->las = jobs[i].las;
		snprintf(s->gang, sizeof(s->gang), "%s", w->gang);
		if (w->cls == DRAKE_CLASS_RUNNING)
			round_count_bound(w);
	}
	long admitted = o->pace_unbound;
	if (!err)
		err = round_repairs(&x, &admitted);
	for (size_t k = 0; !err && k < n; k++)
		err = backoff(&x, x.order[k]);
	for (size_t k = 0; !err && k < n; k++)
		err = unnamed(&x, x.order[k]);
	if (!err && o->policy == DRAKE_POLICY_TIRESIAS)
		err = round_tiresias(&x, &admitted);
	else if (!err)
		err = round_step(&x, &admitted);
	for (size_t k = 0; !err && k < n; k++) {
		size_t i = x.order[k];
		if (x.w[i].view >= 0 && x.w[i].n_bound == 0)
			err = round_unbound_hold(&x, i);
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
	static const char *const names[] = {"repair", "admit",   "hold",   "shrink",
	                                    "grow",   "release", "preempt"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

const char *drake_round_reason_name(enum drake_round_reason r)
{
	static const char *const names[DRAKE_NREASONS] = {
	    "lost-members", "hinted", "fits",    "starved",   "no-fit",       "never",
	    "fifo",         "paced",  "backoff", "unbound",   "repair-waits", "give",
	    "speedup",      "faster", "stray",   "las-queue", "las-next",     "las-preempt"};
	return (unsigned)r < DRAKE_NREASONS ? names[r] : "?";
}
