/*
 * gang.c - filter, prioritize, the bind barrier and the preemption guard for
 * pods that carry admission's plan (see gang.h and gang/protocol.h).
 *
 * The barrier: kube-scheduler binds asynchronously, one request per pod, so
 * each member's bind request is held (libevent lets the reply wait) until
 * every member of its wave has arrived, counting members a previous drake
 * already bound. Then all Bindings are posted at once. A wave that does not
 * complete within the timeout (shorter than kube-scheduler's httpTimeout)
 * has every held request answered with an error: kube-scheduler forgets its
 * assumptions and retries, and no Binding was posted. If some Bindings fail
 * after others succeeded, the bound members are deleted (rolled back); the
 * controller recreates them gated and admission plans the job again.
 */
#include "extender/gang.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "common/log.h"
#include "extender/bind.h"
#include "gang/protocol.h"
#include "kube/api.h"
#include "kube/cache.h"
#include "kube/informer.h"
#include "kube/object.h"

static drake_err parse_count(const char *s, long max, long *out)
{
	if (!s)
		return DRAKE_EINVAL;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return DRAKE_EINVAL;
	*out = v;
	return DRAKE_OK;
}

drake_err gang_member_of(const struct ext_pod *pod, struct gang_member *m, char *why, size_t whylen)
{
	*m = (struct gang_member){0};
	const char *planned = ext_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	if (!planned)
		return DRAKE_OK;
	m->gang = ext_pod_annotation(pod, DRAKE_ANNOTATION_GANG);
	m->job = ext_pod_label(pod, DRAKE_LABEL_JOB_NAME);
	if (!m->job)
		m->job = "";
	if (!*planned || !m->gang || !strchr(m->gang, '.'))
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s: %s needs a non-empty %s of the form <uid>.<wave>",
		                    pod->ns, pod->name, DRAKE_ANNOTATION_PLANNED_NODE,
		                    DRAKE_ANNOTATION_GANG);
	if (parse_count(ext_pod_annotation(pod, DRAKE_ANNOTATION_GANG_SIZE), DRAKE_GANG_SIZE_MAX,
	                &m->size) ||
	    m->size < 1)
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s: %s must be an integer from 1 to %d", pod->ns,
		                    pod->name, DRAKE_ANNOTATION_GANG_SIZE, DRAKE_GANG_SIZE_MAX);
	const char *min = ext_pod_annotation(pod, DRAKE_ANNOTATION_GANG_MIN);
	if (min && parse_count(min, DRAKE_GANG_SIZE_MAX, &m->min))
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s: %s must be an integer from 0 to %d", pod->ns,
		                    pod->name, DRAKE_ANNOTATION_GANG_MIN, DRAKE_GANG_SIZE_MAX);
	m->planned_node = planned;
	return DRAKE_OK;
}

void gang_filter(const struct gang_member *m, const struct ext_pod *pod,
                 const struct ext_args *args, enum ext_verdict *verdicts, const char **reasons,
                 char *buf, size_t buflen)
{
	bool found = false;
	for (size_t i = 0; i < args->n_nodes; i++) {
		bool planned = strcmp(args->node_names[i], m->planned_node) == 0;
		found |= planned;
		/* Another node can never be right for this pod, so preemption
		 * there would only evict pods for nothing: unresolvable. */
		verdicts[i] = planned ? EXT_PASS : EXT_FAIL_UNRESOLVABLE;
		reasons[i] = buf;
	}
	if (found)
		snprintf(buf, buflen, "tfjob %s/%s: gang %s reserves %s for %s", pod->ns, m->job,
		         m->gang, m->planned_node, pod->name);
	else
		snprintf(buf, buflen,
		         "tfjob %s/%s: planned node %s for %s is not feasible now (gang %s)",
		         pod->ns, m->job, m->planned_node, pod->name, m->gang);
}

void gang_prioritize(const struct gang_member *m, const struct ext_args *args, int64_t *scores)
{
	for (size_t i = 0; i < args->n_nodes; i++)
		scores[i] = strcmp(args->node_names[i], m->planned_node) == 0 ? EXT_MAX_SCORE : 0;
}

/* ---- the barrier ---- */

struct waiter {
	struct bind_state *b;
	bool bound;
	TAILQ_ENTRY(waiter) link;
};

struct barrier {
	struct gang_barriers *reg;
	char *id;        /* "<tfjob uid>.<wave>" */
	char *owner_uid; /* the TFJob's uid: the id up to its last '.' */
	char *job;       /* "ns/name", for messages */
	long size;
	size_t n_waiting;
	size_t n_posting;
	size_t n_ok, n_failed;
	bool released;
	struct event *timer;
	TAILQ_HEAD(waiter_list, waiter) waiters;
	TAILQ_ENTRY(barrier) link;
};

struct gang_barriers {
	struct event_base *base;
	double timeout;
	TAILQ_HEAD(barrier_list, barrier) list;
	struct kube_informer *pods; /* as last given to gang_join */
	uint64_t members_bound;     /* Bindings posted by released waves that succeeded */
	uint64_t waves_timed_out;
	uint64_t waves_rolled_back;
};

void gang_barriers_stats(const struct gang_barriers *g, uint64_t *bound, uint64_t *timed_out,
                         uint64_t *rolled_back)
{
	*bound = g->members_bound;
	*timed_out = g->waves_timed_out;
	*rolled_back = g->waves_rolled_back;
}

struct gang_barriers *gang_barriers_new(struct event_base *base, double timeout_s)
{
	struct gang_barriers *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->base = base;
	g->timeout = timeout_s > 0 ? timeout_s : 15;
	TAILQ_INIT(&g->list);
	return g;
}

size_t gang_barriers_waiting(const struct gang_barriers *g)
{
	size_t n = 0;
	const struct barrier *bar;
	TAILQ_FOREACH (bar, &g->list, link) {
		n += bar->n_waiting;
	}
	return n;
}

static void barrier_free(struct barrier *bar)
{
	struct waiter *w;
	while ((w = TAILQ_FIRST(&bar->waiters))) {
		TAILQ_REMOVE(&bar->waiters, w, link);
		bind_unref(w->b);
		free(w);
	}
	if (bar->reg) /* NULL once the registry is gone (shutdown) */
		TAILQ_REMOVE(&bar->reg->list, bar, link);
	if (bar->timer)
		event_free(bar->timer);
	free(bar->id);
	free(bar->owner_uid);
	free(bar->job);
	free(bar);
}

/* Answers every waiter still held with error and frees the barrier. */
static void barrier_fail(struct barrier *bar, const char *error)
{
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		bind_answer(w->b, error);
	}
	barrier_free(bar);
}

void gang_barriers_free(struct gang_barriers *g)
{
	if (!g)
		return;
	struct barrier *bar;
	while ((bar = TAILQ_FIRST(&g->list))) {
		if (bar->released) {
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

struct count_ctx {
	const char *gang;
	size_t bound;
};

static bool count_bound(struct json_t *obj, void *arg)
{
	struct count_ctx *c = arg;
	struct kube_meta m;
	const char *gang = kube_obj_annotation(obj, DRAKE_ANNOTATION_GANG);
	if (gang && strcmp(gang, c->gang) == 0 && kube_obj_meta(obj, &m) == DRAKE_OK &&
	    m.node_name && *m.node_name && !m.deleting)
		c->bound++;
	return true;
}

/* Members of the wave already bound (a wave cut short by a restart). */
static size_t bound_before(struct kube_informer *pods, const struct barrier *bar)
{
	if (!pods)
		return 0;
	struct count_ctx c = {bar->id, 0};
	kube_cache_by_owner(kube_informer_cache(pods), bar->owner_uid, count_bound, &c);
	return c.bound;
}

static void on_rolled_back(const struct kube_response *r, void *arg)
{
	char *pod = arg;
	if (r->status >= 200 && r->status < 300)
		log_warn("gang_rolled_back", "pod=%s", pod);
	else if (r->status != 404)
		log_error("gang_rollback_failed", "pod=%s status=%ld", pod, r->status);
	free(pod);
}

static void rollback(struct barrier *bar)
{
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (!w->bound)
			continue;
		struct ext_bind_args *a = &w->b->args;
		struct kube_resource res = {"", "v1", "pods", a->pod_ns, a->pod_name, NULL};
		char *tag = NULL;
		if (asprintf(&tag, "%s/%s", a->pod_ns, a->pod_name) < 0)
			tag = NULL;
		if (!tag || kube_delete(w->b->kube, &res, a->pod_uid[0] ? a->pod_uid : NULL, NULL,
		                        on_rolled_back, tag) != DRAKE_OK) {
			log_error("gang_rollback_failed", "pod=%s/%s reason=%s", a->pod_ns,
			          a->pod_name, "cannot start the delete");
			free(tag);
		}
	}
}

struct post_ctx {
	struct barrier *bar;
	struct waiter *w;
};

static void on_posted(struct bind_state *b, const char *error, void *arg)
{
	struct post_ctx *pc = arg;
	struct barrier *bar = pc->bar;
	pc->w->bound = error == NULL;
	bind_answer(b, error);
	free(pc);
	if (error)
		bar->n_failed++;
	else
		bar->n_ok++;
	if (!error && bar->reg)
		bar->reg->members_bound++;
	if (--bar->n_posting > 0)
		return;
	if (bar->n_failed && bar->n_ok && !bar->reg) {
		/* Shutdown: the client is going away and cannot delete. */
		log_error("gang_partial_bind",
		          "gang=%s job=%s bound=%zu failed=%zu action=none "
		          "reason=shutting_down",
		          bar->id, bar->job, bar->n_ok, bar->n_failed);
	} else if (bar->n_failed && bar->n_ok) {
		log_error("gang_partial_bind",
		          "gang=%s job=%s bound=%zu failed=%zu action=rollback", bar->id, bar->job,
		          bar->n_ok, bar->n_failed);
		bar->reg->waves_rolled_back++;
		rollback(bar);
	} else if (!bar->n_failed) {
		log_info("gang_bound", "gang=%s job=%s members=%zu", bar->id, bar->job, bar->n_ok);
	}
	barrier_free(bar);
}

static void release(struct barrier *bar)
{
	bar->released = true;
	if (bar->timer)
		event_del(bar->timer);
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (w->b->call)
			continue;
		/* A held request was answered already (shutdown): posting the
		 * others could leave a partial gang. */
		barrier_fail(bar, "gang wave lost a member's request; kube-scheduler will retry");
		return;
	}
	log_info("gang_release", "gang=%s job=%s members=%zu", bar->id, bar->job, bar->n_waiting);
	bar->n_posting = bar->n_waiting;
	bar->n_waiting = 0;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		struct post_ctx *pc = malloc(sizeof(*pc));
		if (!pc) {
			bar->n_failed++;
			bar->n_posting--;
			bind_answer(w->b, "out of memory posting the binding");
			continue;
		}
		pc->bar = bar;
		pc->w = w;
		bind_post(w->b, on_posted, pc);
	}
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct barrier *bar = arg;
	char msg[512];
	size_t before = bound_before(bar->reg->pods, bar);
	snprintf(msg, sizeof(msg),
	         "tfjob %s: gang %s: %zu of %ld members reached bind within %gs; none was bound, "
	         "kube-scheduler will retry",
	         bar->job, bar->id, bar->n_waiting + before, bar->size, bar->reg->timeout);
	bar->reg->waves_timed_out++;
	log_warn("gang_bind_timeout", "gang=%s job=%s arrived=%zu size=%ld", bar->id, bar->job,
	         bar->n_waiting + before, bar->size);
	barrier_fail(bar, msg);
}

static struct barrier *barrier_new(struct gang_barriers *g, const struct gang_member *m,
                                   const struct bind_state *b)
{
	struct barrier *bar = calloc(1, sizeof(*bar));
	if (!bar)
		return NULL;
	bar->reg = g;
	bar->size = m->size;
	TAILQ_INIT(&bar->waiters);
	bar->id = strdup(m->gang);
	const char *dot = strrchr(m->gang, '.');
	bar->owner_uid = strndup(m->gang, (size_t)(dot - m->gang));
	if (asprintf(&bar->job, "%s/%s", b->args.pod_ns, m->job) < 0)
		bar->job = NULL;
	bar->timer = evtimer_new(g->base, on_timeout, bar);
	TAILQ_INSERT_TAIL(&g->list, bar, link);
	if (!bar->id || !bar->owner_uid || !bar->job || !bar->timer) {
		barrier_free(bar);
		return NULL;
	}
	double t = g->timeout;
	struct timeval tv = {(time_t)t, (suseconds_t)((t - (double)(time_t)t) * 1e6)};
	evtimer_add(bar->timer, &tv);
	return bar;
}

void gang_join(struct gang_barriers *g, struct kube_informer *pods, const struct gang_member *m,
               struct bind_state *b)
{
	g->pods = pods;
	struct barrier *bar;
	TAILQ_FOREACH (bar, &g->list, link) {
		if (!bar->released && strcmp(bar->id, m->gang) == 0)
			break;
	}
	if (!bar && !(bar = barrier_new(g, m, b))) {
		bind_answer(b, "out of memory holding the bind for its gang");
		return;
	}
	/* A retry of a pod already held replaces the stale request. */
	struct waiter *w;
	TAILQ_FOREACH (w, &bar->waiters, link) {
		if (strcmp(w->b->args.pod_ns, b->args.pod_ns) == 0 &&
		    strcmp(w->b->args.pod_name, b->args.pod_name) == 0) {
			bind_answer(w->b, "superseded by a newer bind request for the same pod");
			TAILQ_REMOVE(&bar->waiters, w, link);
			bar->n_waiting--;
			bind_unref(w->b);
			free(w);
			break;
		}
	}
	if (!(w = calloc(1, sizeof(*w)))) {
		bind_answer(b, "out of memory holding the bind for its gang");
		return;
	}
	bind_ref(b);
	w->b = b;
	TAILQ_INSERT_TAIL(&bar->waiters, w, link);
	bar->n_waiting++;
	size_t arrived = bar->n_waiting + bound_before(pods, bar);
	log_info("gang_wait", "gang=%s job=%s pod=%s arrived=%zu size=%ld", bar->id, bar->job,
	         b->args.pod_name, arrived, bar->size);
	if ((long)arrived >= bar->size)
		release(bar);
}

/* ---- preemption ---- */

static bool in_list(const char *uid, char *const *uids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(uid, uids[i]) == 0)
			return true;
	return false;
}

struct bound_ctx {
	size_t bound;
};

static bool count_job_bound(struct json_t *obj, void *arg)
{
	struct bound_ctx *c = arg;
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) == DRAKE_OK && m.node_name && *m.node_name && !m.deleting &&
	    kube_obj_annotation(obj, DRAKE_ANNOTATION_GANG))
		c->bound++;
	return true;
}

struct guard_ctx {
	struct kube_informer *pods;
	char *const *uids;
	size_t n_uids;
	char *why;
	size_t whylen;
	bool allowed;
	/* gangs already checked on this node, by owner uid */
	const char *checked[64];
	size_t n_checked;
};

struct per_owner_ctx {
	const char *owner;
	char *const *uids;
	size_t n_uids;
	size_t victims;
};

static bool count_victims_of_owner(struct json_t *obj, void *arg)
{
	struct per_owner_ctx *c = arg;
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) == DRAKE_OK && m.owner_uid &&
	    strcmp(m.owner_uid, c->owner) == 0 && in_list(m.uid, c->uids, c->n_uids))
		c->victims++;
	return true;
}

static bool guard_pod(struct json_t *obj, void *arg)
{
	struct guard_ctx *c = arg;
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) != DRAKE_OK || !in_list(m.uid, c->uids, c->n_uids) ||
	    !m.owner_uid || !kube_obj_annotation(obj, DRAKE_ANNOTATION_GANG))
		return true;
	for (size_t i = 0; i < c->n_checked; i++)
		if (strcmp(c->checked[i], m.owner_uid) == 0)
			return true;
	if (c->n_checked < sizeof(c->checked) / sizeof(c->checked[0]))
		c->checked[c->n_checked++] = m.owner_uid;
	long min = 0;
	const char *mins = kube_obj_annotation(obj, DRAKE_ANNOTATION_GANG_MIN);
	if (!mins || parse_count(mins, DRAKE_GANG_SIZE_MAX, &min) || min == 0)
		return true;
	const struct kube_cache *cache = kube_informer_cache(c->pods);
	struct bound_ctx b = {0};
	kube_cache_by_owner(cache, m.owner_uid, count_job_bound, &b);
	struct per_owner_ctx v = {m.owner_uid, c->uids, c->n_uids, 0};
	kube_cache_by_owner(cache, m.owner_uid, count_victims_of_owner, &v);
	if ((long)b.bound - (long)v.victims < min) {
		const char *job = kube_obj_label(obj, DRAKE_LABEL_JOB_NAME);
		snprintf(c->why, c->whylen,
		         "tfjob %s/%s would drop to %ld of the %ld pods its gang needs", m.ns,
		         job ? job : "?", (long)b.bound - (long)v.victims, min);
		c->allowed = false;
		return false;
	}
	return true;
}

bool gang_preempt_allowed(struct kube_informer *pods, const char *node, char *const *uids,
                          size_t n_uids, char *why, size_t whylen)
{
	if (!pods || n_uids == 0)
		return true;
	struct guard_ctx c = {.pods = pods,
	                      .uids = uids,
	                      .n_uids = n_uids,
	                      .why = why,
	                      .whylen = whylen,
	                      .allowed = true};
	kube_cache_by_node(kube_informer_cache(pods), node, guard_pod, &c);
	return c.allowed;
}
