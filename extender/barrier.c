/*
 * barrier.c - the gang bind barrier (see barrier.h).
 *
 * A barrier is one wave: the requests held for it, what the job needs per
 * role, and a timer. It lives from the first member's arrival until every
 * held request has been answered: on release it posts the PS and chief
 * Bindings (the leaders), then the workers once every leader is bound; a
 * wave without leaders (a repair of workers only) posts everything at once.
 */
#include "extender/barrier.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "common/log.h"
#include "extender/member.h"
#include "gang/protocol.h"
#include "gang/roles.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "kube/pod.h"

struct waiter {
	void *req;
	char *name; /* the pod's: messages, and spotting a retried request */
	enum drake_role role;
	bool posted, bound;
	TAILQ_ENTRY(waiter) link;
};

enum phase {
	WAITING,         /* holding requests until the wave can run */
	POSTING_LEADERS, /* the PS and chief Bindings are in flight */
	POSTING_REST,    /* the workers' (or, without leaders, everyone's) */
};

struct barrier {
	struct barrier_reg *reg; /* NULL once the registry is gone (shutdown) */
	const struct barrier_ops *ops;
	char *id;        /* "<tfjob uid>.<wave>" */
	char *owner_uid; /* the TFJob's uid: the id up to its last '.' */
	char *ns;        /* where the wave's pods live: its first member's */
	char *job;       /* "ns/name", for messages */
	long size;
	bool has_min_roles;
	struct drake_roles min_roles;
	size_t n_waiting;
	enum phase phase;
	size_t n_posting, n_ok, n_failed;
	char failure[400]; /* the first Binding that failed, for the others' answers */
	struct event *timer;
	TAILQ_HEAD(waiter_list, waiter) waiters;
	TAILQ_ENTRY(barrier) link;
};

struct barrier_reg {
	struct event_base *base;
	double timeout;
	const struct barrier_ops *ops;
	TAILQ_HEAD(barrier_list, barrier) list;
	const struct kube_cache *pods; /* as last given to barrier_join */
	struct barrier_stats stats;
};

static bool is_leader(enum drake_role r)
{
	return r == DRAKE_ROLE_PS || r == DRAKE_ROLE_CHIEF;
}

struct barrier_reg *barrier_reg_new(struct event_base *base, double timeout_s,
                                    const struct barrier_ops *ops)
{
	struct barrier_reg *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->base = base;
	g->timeout = timeout_s > 0 ? timeout_s : 15;
	g->ops = ops;
	TAILQ_INIT(&g->list);
	return g;
}

void barrier_stats(const struct barrier_reg *g, struct barrier_stats *out)
{
	*out = g->stats;
	out->waiting = 0;
	const struct barrier *bar;
	TAILQ_FOREACH (bar, &g->list, link) {
		out->waiting += bar->n_waiting;
	}
}

static void barrier_free(struct barrier *bar)
{
	struct waiter *w;
	while ((w = TAILQ_FIRST(&bar->waiters))) {
		TAILQ_REMOVE(&bar->waiters, w, link);
		bar->ops->drop(w->req);
		free(w->name);
		free(w);
	}
	if (bar->reg)
		TAILQ_REMOVE(&bar->reg->list, bar, link);
	if (bar->timer)
		event_free(bar->timer);
	free(bar->id);
	free(bar->owner_uid);
	free(bar->ns);
	free(bar->job);
	free(bar);
}

/* Answers every request still held with error and frees the barrier. */
static void barrier_fail(struct barrier *bar, const char *error)
{
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		bar->ops->answer(w->req, error);
	}
	barrier_free(bar);
}

void barrier_reg_free(struct barrier_reg *g)
{
	if (!g)
		return;
	struct barrier *bar;
	while ((bar = TAILQ_FIRST(&g->list))) {
		if (bar->phase != WAITING) {
			/* Bindings in flight keep their waiters; their callbacks
			 * come from kube_client_free later, find the calls gone,
			 * and free the barrier on their own (bar->reg == NULL). */
			TAILQ_REMOVE(&g->list, bar, link);
			bar->reg = NULL;
			continue;
		}
		barrier_fail(bar, "drake is shutting down");
	}
	free(g);
}

static bool held_here(const struct barrier *bar, const char *name)
{
	const struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (strcmp(w->name, name) == 0)
			return true;
	}
	return false;
}

struct count_ctx {
	const struct barrier *bar;
	struct drake_roles roles;
	size_t n;
};

/* A member of this wave bound before: on a node, not being deleted, not
 * failed (a Succeeded member is done, and counts), and the member it claims
 * to be. One of the requests held here does not count twice. */
static bool count_bound(const struct kube_pod *obj, void *arg)
{
	struct count_ctx *c = arg;
	const char *gang = kube_pod_annotation(obj, DRAKE_ANNOTATION_GANG);
	struct kube_meta meta;
	kube_pod_meta(obj, &meta);
	if (!gang || strcmp(gang, c->bar->id) != 0 || !meta.node_name || meta.deleting ||
	    held_here(c->bar, meta.name))
		return true;
	const char *phase = obj->phase;
	if (phase && strcmp(phase, "Failed") == 0)
		return true;
	struct ext_member m;
	char why[256];
	if (ext_member_of_pod(obj, &m, why, sizeof(why)) != DRAKE_OK || !m.planned_node ||
	    ext_member_check(&m, c->bar->ns, why, sizeof(why)) != DRAKE_OK)
		return true;
	c->roles.n[m.role]++;
	c->n++;
	return true;
}

/* Members of the wave there now, per role and in all: held + bound before. */
static size_t present(const struct barrier *bar, struct drake_roles *have)
{
	struct count_ctx c = {.bar = bar};
	if (bar->reg && bar->reg->pods)
		kube_pods_by_owner(bar->reg->pods, bar->owner_uid, count_bound, &c);
	const struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		c.roles.n[w->role]++;
	}
	*have = c.roles;
	return c.n + bar->n_waiting;
}

/* The first role whose minimum is not there, or -1. */
static int role_short(const struct barrier *bar, const struct drake_roles *have)
{
	return bar->has_min_roles ? drake_roles_short(have, &bar->min_roles) : -1;
}

static void undo_bound(struct barrier *bar)
{
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (w->bound)
			bar->ops->undo(w->req);
	}
}

/* Every request has been answered: count, undo a partial wave, free. */
static void finish(struct barrier *bar)
{
	if (bar->n_failed && bar->n_ok && !bar->reg) {
		/* Shutdown: the client is going away and cannot delete. */
		log_error("gang_partial_bind",
		          "gang=%s job=%s bound=%zu failed=%zu action=none reason=shutting_down",
		          bar->id, bar->job, bar->n_ok, bar->n_failed);
	} else if (bar->n_failed && bar->n_ok) {
		log_error("gang_partial_bind",
		          "gang=%s job=%s bound=%zu failed=%zu action=rollback", bar->id, bar->job,
		          bar->n_ok, bar->n_failed);
		bar->reg->stats.waves_rolled_back++;
		undo_bound(bar);
	} else if (bar->n_failed) {
		log_warn("gang_not_bound", "gang=%s job=%s failed=%zu", bar->id, bar->job,
		         bar->n_failed);
	} else {
		log_info("gang_bound", "gang=%s job=%s members=%zu", bar->id, bar->job, bar->n_ok);
	}
	barrier_free(bar);
}

static void post_phase(struct barrier *bar, enum phase phase);

/* The leaders are all answered. The workers go only if every leader is
 * bound; otherwise they are answered without a Binding and the leaders
 * already bound are undone by finish(). */
static void leaders_done(struct barrier *bar)
{
	char why[512] = "";
	const struct waiter *w;
	if (bar->n_failed)
		snprintf(why, sizeof(why), "job %s: gang %s: not bound because %s", bar->job,
		         bar->id, bar->failure);
	else if (!bar->reg)
		snprintf(why, sizeof(why), "drake is shutting down");
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (!why[0] && !w->posted && !bar->ops->held(w->req))
			snprintf(why, sizeof(why),
			         "job %s: gang %s: a member's request was lost before the workers "
			         "were bound; kube-scheduler will retry",
			         bar->job, bar->id);
	}
	if (!why[0]) {
		post_phase(bar, POSTING_REST);
		return;
	}
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (w->posted)
			continue;
		bar->ops->answer(w->req, why);
		bar->n_failed++;
	}
	finish(bar);
}

/* Drops one count of the Bindings in flight; the last one ends the phase. */
static void phase_step(struct barrier *bar)
{
	if (--bar->n_posting > 0)
		return;
	if (bar->phase == POSTING_LEADERS)
		leaders_done(bar);
	else
		finish(bar);
}

static void record(struct barrier *bar, struct waiter *w, const char *error)
{
	w->bound = error == NULL;
	bar->ops->answer(w->req, error);
	if (!error) {
		bar->n_ok++;
		if (bar->reg)
			bar->reg->stats.members_bound++;
		return;
	}
	if (!bar->n_failed++)
		snprintf(bar->failure, sizeof(bar->failure), "the Binding of %s failed: %s",
		         w->name, error);
}

struct post_ctx {
	struct barrier *bar;
	struct waiter *w;
};

static void on_posted(void *req, const char *error, void *arg)
{
	struct post_ctx pc = *(struct post_ctx *)arg;
	free(arg);
	record(pc.bar, pc.w, error);
	phase_step(pc.bar);
}

static void post_phase(struct barrier *bar, enum phase phase)
{
	bar->phase = phase;
	/* One count more while the loop runs: a Binding that fails before
	 * post() returns must not end the phase and free the barrier under
	 * this loop. */
	bar->n_posting = 1;
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (w->posted || (phase == POSTING_LEADERS && !is_leader(w->role)))
			continue;
		w->posted = true;
		bar->n_posting++;
		struct post_ctx *pc = malloc(sizeof(*pc));
		if (!pc) {
			record(bar, w, "out of memory posting the binding");
			bar->n_posting--;
			continue;
		}
		*pc = (struct post_ctx){bar, w};
		bar->ops->post(w->req, on_posted, pc);
	}
	phase_step(bar);
}

static void release(struct barrier *bar)
{
	if (bar->timer)
		event_del(bar->timer);
	struct waiter *w;
	bool leaders = false;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		leaders |= is_leader(w->role);
		if (bar->ops->held(w->req))
			continue;
		/* A held request was answered already (shutdown): posting the
		 * others could leave a partial gang. */
		barrier_fail(bar, "gang wave lost a member's request; kube-scheduler will retry");
		return;
	}
	log_info("gang_release", "gang=%s job=%s members=%zu leaders_first=%s", bar->id, bar->job,
	         bar->n_waiting, leaders ? "yes" : "no");
	bar->n_waiting = 0;
	post_phase(bar, leaders ? POSTING_LEADERS : POSTING_REST);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct barrier *bar = arg;
	struct drake_roles have;
	size_t arrived = present(bar, &have);
	int r = role_short(bar, &have);
	char roles[128] = "";
	if (r >= 0)
		snprintf(roles, sizeof(roles), ", with %d of the %d %s the job needs", have.n[r],
		         bar->min_roles.n[r], drake_role_name((enum drake_role)r));
	char msg[512];
	snprintf(msg, sizeof(msg),
	         "job %s: gang %s: %zu of %ld members reached bind within %gs%s; none was bound, "
	         "kube-scheduler will retry",
	         bar->job, bar->id, arrived, bar->size, bar->reg->timeout, roles);
	bar->reg->stats.waves_timed_out++;
	char fmt[64];
	log_warn("gang_bind_timeout", "gang=%s job=%s arrived=%zu size=%ld present=%s", bar->id,
	         bar->job, arrived, bar->size, drake_roles_format(&have, fmt, sizeof(fmt)));
	barrier_fail(bar, msg);
}

static struct barrier *barrier_new(struct barrier_reg *g, const struct ext_member *m)
{
	struct barrier *bar = calloc(1, sizeof(*bar));
	if (!bar)
		return NULL;
	bar->reg = g;
	bar->ops = g->ops;
	bar->size = m->size;
	TAILQ_INIT(&bar->waiters);
	bar->id = strdup(m->gang);
	struct drake_gang_id id; /* ext_member_of read it: no error here */
	bar->owner_uid = drake_gang_id_parse(m->gang, &id, NULL, 0) ? NULL : strdup(id.uid);
	bar->ns = strdup(m->ns);
	if (asprintf(&bar->job, "%s/%s", m->ns, m->job) < 0)
		bar->job = NULL;
	bar->timer = evtimer_new(g->base, on_timeout, bar);
	TAILQ_INSERT_TAIL(&g->list, bar, link);
	if (!bar->id || !bar->owner_uid || !bar->ns || !bar->job || !bar->timer) {
		barrier_free(bar);
		return NULL;
	}
	double t = g->timeout;
	struct timeval tv = {(time_t)t, (suseconds_t)((t - (double)(time_t)t) * 1e6)};
	evtimer_add(bar->timer, &tv);
	return bar;
}

static void refuse(struct barrier_reg *g, const struct ext_member *m, void *req, const char *why)
{
	char msg[768];
	snprintf(msg, sizeof(msg),
	         "job %s/%s: gang %s: %s; it is not bound and does not count toward the wave",
	         m->ns, m->job, m->gang, why);
	char q[600];
	log_warn("gang_join_refused", "gang=%s pod=%s/%s why=%s", m->gang, m->ns, m->name,
	         drake_log_quote(why, q, sizeof(q)));
	g->stats.joins_refused++;
	g->ops->answer(req, msg);
}

void barrier_join(struct barrier_reg *g, const struct kube_cache *pods, const struct ext_member *m,
                  void *req)
{
	g->pods = pods;
	char why[512];
	if (ext_member_check(m, NULL, why, sizeof(why)) != DRAKE_OK) {
		refuse(g, m, req, why);
		return;
	}
	struct barrier *bar;
	TAILQ_FOREACH (bar, &g->list, link) {
		if (bar->phase == WAITING && strcmp(bar->id, m->gang) == 0)
			break;
	}
	if (bar && ext_member_check(m, bar->ns, why, sizeof(why)) != DRAKE_OK) {
		refuse(g, m, req, why);
		return;
	}
	if (!bar && !(bar = barrier_new(g, m))) {
		g->ops->answer(req, "out of memory holding the bind for its gang");
		return;
	}
	/* A retry of a pod already held replaces the stale request. */
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (strcmp(w->name, m->name) == 0) {
			g->ops->answer(w->req,
			               "superseded by a newer bind request for the same pod");
			TAILQ_REMOVE(&bar->waiters, w, link);
			bar->n_waiting--;
			g->ops->drop(w->req);
			free(w->name);
			free(w);
			break;
		}
	}
	if (!(w = calloc(1, sizeof(*w))) || !(w->name = strdup(m->name))) {
		free(w);
		g->ops->answer(req, "out of memory holding the bind for its gang");
		return;
	}
	g->ops->hold(req);
	w->req = req;
	w->role = (enum drake_role)m->role;
	TAILQ_INSERT_TAIL(&bar->waiters, w, link);
	bar->n_waiting++;
	/* Members of one wave carry one minimum; should two disagree, the
	 * stricter holds. */
	if (m->has_min_roles) {
		for (int r = 0; r < DRAKE_NROLES; r++)
			if (!bar->has_min_roles || m->min_roles.n[r] > bar->min_roles.n[r])
				bar->min_roles.n[r] = m->min_roles.n[r];
		bar->has_min_roles = true;
	}
	struct drake_roles have;
	size_t arrived = present(bar, &have);
	int r = role_short(bar, &have);
	char fmt[64];
	log_info("gang_wait", "gang=%s job=%s pod=%s arrived=%zu size=%ld present=%s short=%s",
	         bar->id, bar->job, m->name, arrived, bar->size,
	         drake_roles_format(&have, fmt, sizeof(fmt)),
	         r >= 0 ? drake_role_name((enum drake_role)r) : "none");
	if ((long)arrived >= bar->size && r < 0)
		release(bar);
}
