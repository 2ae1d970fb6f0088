/*
 * reconciler.c - the job controller's loop and lifecycle. Informer
 * callbacks only mark a job's key dirty (a node change marks admission
 * dirty); a zero-delay event drains the dirty set, syncs each job from the
 * caches (sync.c) and runs an admission round (waves.c) when anything
 * changed. A one-second tick moves the keys to look at later into the queue
 * and resyncs every job now and then. internal.h maps the other files.
 */
#include "reconciler/reconciler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "common/log.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/node.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "reconciler/internal.h"
#include "reconciler/pass_world.h"
#include "kind/pod_codec.h"

/* ---- informer handlers: mark the owning job dirty ---- */

/* Jobs and services are cached as JSON; pods and nodes as records. */

static void job_changed(void *obj, void *arg)
{
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) == DRAKE_OK)
		rec_enqueue(arg, &((struct reconciler *)arg)->now, m.ns, m.name);
}

/* The job a service belongs to (its label, with a job of a kind this
 * controller serves as its controlling owner), or NULL; m is its
 * metadata. pod_job: the same for a cached pod. */
static const char *svc_job(const struct reconciler *r, const struct json_t *obj,
                           struct kube_meta *m)
{
	const char *job = kube_obj_label(obj, JOB_LABEL_JOB);
	return job && kube_obj_meta(obj, m) == DRAKE_OK &&
	               job_kind_named(r->kinds, r->nkinds, m->owner_kind)
	           ? job
	           : NULL;
}

static const char *pod_job(const struct reconciler *r, const struct kube_pod *p)
{
	const char *job = kube_pod_label(p, JOB_LABEL_JOB);
	return job && job_kind_named(r->kinds, r->nkinds, p->owner_kind) ? job : NULL;
}

struct json_t *rec_job_get(const struct reconciler *r, const char *ns, const char *name,
                           const struct job_kind **kind)
{
	for (size_t k = 0; k < r->nkinds; k++) {
		struct json_t *obj = kube_informer_get(r->jobs[k], ns, name);
		if (obj) {
			if (kind)
				*kind = r->kinds[k];
			return obj;
		}
	}
	return NULL;
}

void rec_job_caches(const struct reconciler *r, struct job_caches *jc)
{
	memset(jc, 0, sizeof(*jc));
	for (size_t k = 0; k < r->nkinds; k++) {
		jc->cache[k] = kube_informer_cache(r->jobs[k]);
		jc->kind[k] = r->kinds[k];
	}
	jc->n = r->nkinds;
}

static size_t jobs_count(const struct reconciler *r)
{
	size_t n = 0;
	for (size_t k = 0; k < r->nkinds; k++)
		n += kube_cache_count(kube_informer_cache(r->jobs[k]));
	return n;
}

static void svc_changed(void *obj, void *arg)
{
	struct kube_meta m;
	const char *job = svc_job(arg, obj, &m);
	if (job)
		rec_enqueue(arg, &((struct reconciler *)arg)->now, m.ns, job);
}

/* The node a pod is charged to in prioritize's view changed. */
static void pod_moved(struct reconciler *r, const struct kube_pod *p)
{
	if (p->node_name && *p->node_name)
		place_view_memo_forget(&r->place_memo, p->node_name);
}

static void pod_changed(void *obj, void *arg)
{
	const struct kube_pod *p = obj;
	pod_moved(arg, p);
	const char *job = pod_job(arg, p);
	if (job)
		rec_enqueue(arg, &((struct reconciler *)arg)->now, p->ns, job);
}

/* An added object meets its job's expectation of that slot, even when it
 * is deleted again before a pass sees it (kwok's second delete of a name). */
static void observed(struct reconciler *r, const char *ns, const char *job, enum job_rtype t,
                     int index, bool svc)
{
	char key[KEY_MAX];
	if (snprintf(key, sizeof(key), "%s/%s", ns, job) >= (int)sizeof(key))
		return;
	struct inflight *f = rec_inflight_of(r, key, false);
	if (f)
		rec_expect_seen(f, t, index, svc);
}

static void pod_added(void *obj, void *arg)
{
	const struct kube_pod *p = obj;
	pod_moved(arg, p);
	const char *job = pod_job(arg, p);
	enum job_rtype t;
	int index;
	if (!job)
		return;
	if (job_pod_replica_of(p, &t, &index))
		observed(arg, p->ns, job, t, index, false);
	rec_enqueue(arg, &((struct reconciler *)arg)->now, p->ns, job);
}

static void svc_added(void *obj, void *arg)
{
	struct kube_meta m;
	const char *job = svc_job(arg, obj, &m);
	enum job_rtype t;
	int index;
	if (!job)
		return;
	if (job_replica_of(obj, &t, &index))
		observed(arg, m.ns, job, t, index, true);
	rec_enqueue(arg, &((struct reconciler *)arg)->now, m.ns, job);
}

static void job_updated(void *o, void *n, void *arg)
{
	job_changed(n, arg);
}

static void node_changed(void *obj, void *arg)
{
	struct reconciler *r = arg;
	place_view_memo_forget(&r->place_memo, ((const struct kube_node *)obj)->name);
	r->admit_dirty = true;
	r->nodes_changed_s = rec_now_s(r);
}

static void node_updated(void *o, void *n, void *arg)
{
	struct reconciler *r = arg;
	place_view_memo_forget(&r->place_memo, ((const struct kube_node *)n)->name);
	r->admit_dirty = true;
	if (kube_node_placement_changed(o, n))
		r->nodes_changed_s = rec_now_s(r);
}

/* A claim appeared, changed or went: a job of its namespace refused for
 * want of it may be tried again. */
static void claim_changed(void *obj, void *arg)
{
	struct reconciler *r = arg;
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) != DRAKE_OK || !m.ns)
		return;
	double now = rec_now_s(r);
	r->admit_dirty = true;
	for (size_t i = 0; i < r->nclaim_notes; i++)
		if (!strcmp(r->claim_notes[i].ns, m.ns)) {
			r->claim_notes[i].at_s = now;
			return;
		}
	size_t at = r->nclaim_notes < RECONCILER_CLAIM_NOTES ? r->nclaim_notes++ : r->claim_head;
	r->claim_head = (at + 1) % RECONCILER_CLAIM_NOTES;
	snprintf(r->claim_notes[at].ns, sizeof(r->claim_notes[at].ns), "%s", m.ns);
	r->claim_notes[at].at_s = now;
}

static void claim_updated(void *o, void *n, void *arg)
{
	claim_changed(n, arg);
}

double rec_changed_s(const struct reconciler *r, const char *ns)
{
	double at = r->nodes_changed_s;
	for (size_t i = 0; ns && i < r->nclaim_notes; i++)
		if (!strcmp(r->claim_notes[i].ns, ns) && r->claim_notes[i].at_s > at)
			at = r->claim_notes[i].at_s;
	return at;
}

static void svc_updated(void *o, void *n, void *arg)
{
	svc_changed(n, arg);
}

static void pod_updated(void *o, void *n, void *arg)
{
	pod_moved(arg, o);
	pod_changed(n, arg);
}

/* ---- queue processing ---- */

static bool enqueue_job(struct json_t *obj, void *arg)
{
	job_changed(obj, arg);
	return true;
}

/* The process's CPU time (s): what a pass costs, whatever else the host runs. */
static double cpu_now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	struct reconciler *r = arg;
	if (r->opts.standby)
		return; /* another replica acts; the caches follow */
	if (!reconciler_synced(r))
		return; /* a pass on a partial cache would create duplicates */
	if (!r->was_synced) {
		r->was_synced = true;
		log_info("reconciler_synced", "jobs=%zu", jobs_count(r));
		for (size_t k = 0; k < r->nkinds; k++)
			kube_cache_foreach(kube_informer_cache(r->jobs[k]), enqueue_job, r);
	}
	double cpu0 = cpu_now_s();
	struct keyset batch = r->now;
	memset(&r->now, 0, sizeof(r->now));
	for (size_t i = 0; i < batch.n; i++) {
		char ns[64] = "", name[KUBE_NAME_MAX + 1] = "";
		if (sscanf(batch.keys[i], "%63[^/]/%253s", ns, name) == 2)
			rec_sync_job(r, ns, name);
	}
	free(batch.keys);
	if (batch.n)
		r->admit_dirty = true;
	bool round = r->admit_dirty;
	if (round)
		rec_admit_pass(r);
	if (batch.n || round) /* make bench-memory reads these */
		log_debug("controller_pass", "synced=%zu round=%s cpu_s=%.6f", batch.n,
		          round ? "true" : "false", cpu_now_s() - cpu0);
}

/* True, and a round asked for, when the decision step's timer is due. */
static bool admit_due(struct reconciler *r)
{
	if (rec_now_s(r) < r->admit_at)
		return false;
	r->admit_at = INFINITY;
	r->admit_dirty = true;
	return true;
}

/* The step's timer, armed by rec_arm_timer (on_tick also checks, once a
 * second). */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct reconciler *r = arg;
	if (!r->opts.standby && admit_due(r))
		event_active(&r->drain, 0, 0);
}

void rec_arm_timer(struct reconciler *r)
{
	if (!r->events_ready)
		return;
	event_del(&r->timer);
	double d = r->admit_at - rec_now_s(r);
	/* a timer already due is left to the tick: a step that keeps asking
	 * for one in the past must not spin the loop */
	if (!isfinite(d) || d <= 0)
		return;
	/* a millisecond past it: the round then sees the timer due */
	long long ms = (long long)ceil(d * 1000) + 1;
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
	event_add(&r->timer, &tv);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct reconciler *r = arg;
	if (r->opts.standby)
		return;
	if (rec_now_ms(r) - r->last_requeue_ms >= r->opts.requeue_ms) {
		r->last_requeue_ms = rec_now_ms(r);
		for (size_t i = 0; i < r->later.n; i++)
			if (rec_keyset_add(&r->now, r->later.keys[i]) != DRAKE_OK)
				break;
		r->later.n = 0;
	}
	/* forget jobs with nothing in flight or expected, so the table stays small */
	size_t kept = 0;
	long long at = rec_now_ms(r);
	for (size_t i = 0; i < r->ninflight; i++) {
		struct inflight *f = &r->inflight[i];
		if (f->n > 0 || f->failures > 0 || f->expect_ms > at)
			r->inflight[kept++] = *f;
		else
			rec_expect_clear(f);
	}
	r->ninflight = kept;
	long long now = rec_now_ms(r);
	if (now - r->last_resync_ms >= (long long)r->opts.resync_s * 1000) {
		r->last_resync_ms = now;
		for (size_t k = 0; k < r->nkinds; k++)
			kube_cache_foreach(kube_informer_cache(r->jobs[k]), enqueue_job, r);
	}
	rec_usage_tick(r);
	admit_due(r); /* a decision step's timer */
	if (r->now.n || !r->was_synced ||
	    (r->admit_dirty || r->npending || r->ndeferred || r->nscaling))
		event_active(&r->drain, 0, 0);
}

/* ---- lifecycle ---- */

struct reconciler *reconciler_new(struct event_base *base, struct kube_client *client,
                                  const struct reconciler_options *opts, char *msg, size_t msglen)
{
	struct reconciler *r = calloc(1, sizeof(*r));
	if (!r || !base || !client) {
		free(r);
		drake_errorf(r ? DRAKE_EINVAL : DRAKE_ENOMEM, msg, msglen,
		             "reconciler needs an event base and a client");
		return NULL;
	}
	r->base = base;
	r->client = client;
	if (opts)
		r->opts = *opts;
	for (size_t k = 0; k < r->opts.nkinds && k < JOB_KINDS_MAX; k++)
		if (r->opts.kinds[k])
			r->kinds[r->nkinds++] = r->opts.kinds[k];
	r->opts.kinds = NULL; /* r->kinds holds them */
	if (!r->nkinds) {
		free(r);
		drake_errorf(DRAKE_EINVAL, msg, msglen, "the controller serves no job kind");
		return NULL;
	}
	if (r->opts.resync_s <= 0)
		r->opts.resync_s = 30;
	if (r->opts.requeue_ms <= 0)
		r->opts.requeue_ms = 1000;
	if (r->opts.gang_bind_timeout_s <= 0)
		r->opts.gang_bind_timeout_s = 15;
	if (r->opts.backoff_min_s <= 0)
		r->opts.backoff_min_s = 5;
	if (r->opts.backoff_max_s <= 0)
		r->opts.backoff_max_s = 300;
	if (r->opts.backoff_max_s < r->opts.backoff_min_s)
		r->opts.backoff_max_s = r->opts.backoff_min_s;
	if (r->opts.scale)
		r->scale = *r->opts.scale;
	else
		drake_scale_defaults(&r->scale);
	r->opts.scale = &r->scale; /* a copy: the caller's may go */
	if (r->opts.resize_costs)
		r->resize_costs = *r->opts.resize_costs;
	else
		job_resize_costs_default(&r->resize_costs);
	r->opts.resize_costs = &r->resize_costs; /* likewise */
	if (r->opts.mig)
		r->mig = *r->opts.mig;
	else
		mig_defaults(&r->mig);
	r->opts.mig = &r->mig;
	if (r->opts.progress)
		r->prog = *r->opts.progress;
	else
		mig_progress_defaults(&r->prog);
	r->opts.progress = &r->prog;
	r->admit_at = INFINITY;
	drake_pace_init(&r->pace);
	r->dragon_last_action = rec_now_s(r); /* DRAGON's controller starts its timer */
	r->last_requeue_ms = rec_now_ms(r);
	if (opts && opts->cluster_domain && *opts->cluster_domain)
		r->domain = strdup(opts->cluster_domain);
	r->opts.cluster_domain = r->domain;
	if (opts && opts->gang_resource && *opts->gang_resource)
		r->gang_resource = strdup(opts->gang_resource);
	r->opts.gang_resource = r->gang_resource;
	r->last_resync_ms = rec_now_ms(r);
	r->owned = calloc(1, sizeof(*r->owned));
	r->svcs = calloc(1, sizeof(*r->svcs));
	if (r->opts.gang && opts && opts->decision_log && *opts->decision_log) {
		r->dlog = calloc(1, sizeof(*r->dlog));
		if (!r->dlog || decision_log_open(r->dlog, opts->decision_log,
		                                  (long)opts->decision_log_max, msg, msglen)) {
			if (!r->dlog)
				drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
			reconciler_free(r);
			return NULL;
		}
	}
	r->opts.decision_log = NULL; /* the caller's string may go */
	struct kube_informer_handlers jh = {job_changed, job_updated, job_changed, r};
	struct kube_informer_handlers ph = {pod_added, pod_updated, pod_changed, r};
	struct kube_informer_handlers sh = {svc_added, svc_updated, svc_changed, r};
	/* 50,000 pods as whole JSON trees are 1.3 GB; as records, tens of MB */
	struct kube_informer_options po = {
	    .name = "pods", .path = "/api/v1/pods", .codec = kube_pod_codec()};
	struct kube_informer_options so = {.name = "services", .path = "/api/v1/services"};
	bool jobs_ok = true;
	for (size_t k = 0; k < r->nkinds && jobs_ok; k++) {
		const struct job_kind *kd = r->kinds[k];
		snprintf(r->job_paths[k], sizeof(r->job_paths[k]), "/apis/%s/%s/%s", kd->group,
		         kd->version, kd->plural);
		struct kube_informer_options jo = {.name = kd->plural, .path = r->job_paths[k]};
		r->jobs[k] = kube_informer_new(base, client, &jo, &jh, msg, msglen);
		jobs_ok = r->jobs[k] != NULL;
	}
	r->pods = kube_informer_new(base, client, &po, &ph, msg, msglen);
	r->services = kube_informer_new(base, client, &so, &sh, msg, msglen);
	if (r->opts.gang) {
		struct kube_informer_handlers nh = {node_changed, node_updated, node_changed, r};
		struct kube_informer_options no = {
		    .name = "nodes", .path = "/api/v1/nodes", .codec = kube_node_codec()};
		r->nodes = kube_informer_new(base, client, &no, &nh, msg, msglen);
		if (r->nodes && r->opts.watch_claims) {
			struct kube_informer_handlers ch = {claim_changed, claim_updated,
			                                    claim_changed, r};
			struct kube_informer_options co = {.name = "persistentvolumeclaims",
			                                   .path =
			                                       "/api/v1/persistentvolumeclaims"};
			r->claims = kube_informer_new(base, client, &co, &ch, msg, msglen);
			if (!r->claims) {
				reconciler_free(r);
				return NULL;
			}
		}
	}
	if (!r->owned || !r->svcs) {
		reconciler_free(r);
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		return NULL;
	}
	if (!jobs_ok || !r->pods || !r->services || (r->opts.gang && !r->nodes)) {
		reconciler_free(r);
		return NULL;
	}
	event_assign(&r->drain, base, -1, 0, on_drain, r);
	event_assign(&r->tick, base, -1, EV_PERSIST, on_tick, r);
	event_assign(&r->timer, base, -1, 0, on_timer, r);
	r->events_ready = true;
	return r;
}

drake_err reconciler_start(struct reconciler *r)
{
	if (!r)
		return DRAKE_EINVAL;
	drake_err e = DRAKE_OK;
	for (size_t k = 0; k < r->nkinds && e == DRAKE_OK; k++)
		e = kube_informer_start(r->jobs[k]);
	if (e == DRAKE_OK)
		e = kube_informer_start(r->pods);
	if (e == DRAKE_OK)
		e = kube_informer_start(r->services);
	if (e == DRAKE_OK && r->nodes)
		e = kube_informer_start(r->nodes);
	if (e == DRAKE_OK && r->claims)
		e = kube_informer_start(r->claims);
	if (e != DRAKE_OK)
		return e;
	long tick = r->opts.requeue_ms < 1000 ? r->opts.requeue_ms : 1000;
	struct timeval sec = {tick / 1000, (tick % 1000) * 1000};
	event_add(&r->tick, &sec);
	return DRAKE_OK;
}

void reconciler_lead(struct reconciler *r)
{
	if (!r || !r->opts.standby)
		return;
	r->opts.standby = false;
	r->last_requeue_ms = r->last_resync_ms = rec_now_ms(r);
	log_info("reconciler_leading", "synced=%s jobs=%zu",
	         reconciler_synced(r) ? "true" : "false", jobs_count(r));
	event_active(&r->drain, 0, 0);
}

void reconciler_free(struct reconciler *r)
{
	if (!r)
		return;
	rec_writes_detach(r);
	rec_usage_free(r);
	if (r->events_ready) {
		event_del(&r->drain);
		event_del(&r->tick);
		event_del(&r->timer);
	}
	decision_log_close(r->dlog);
	free(r->dlog);
	for (size_t k = 0; k < r->nkinds; k++)
		kube_informer_free(r->jobs[k]);
	kube_informer_free(r->pods);
	kube_informer_free(r->services);
	kube_informer_free(r->nodes);
	kube_informer_free(r->claims);
	place_view_memo_release(&r->place_memo);
	pass_world_release(r->world);
	free(r->world);
	for (size_t i = 0; i < r->npending; i++)
		free(r->pending[i].w.pods);
	free(r->pending);
	for (size_t i = 0; i < r->ndeferred; i++) {
		free(r->deferred[i].w.pods);
		free(r->deferred[i].waits);
	}
	free(r->deferred);
	free(r->running);
	free(r->progress);
	rec_observed_free(r);
	for (size_t i = 0; i < r->nscaling; i++)
		free(r->scaling[i].value);
	free(r->scaling);
	free(r->partials);
	free(r->waits);
	free(r->now.keys);
	free(r->later.keys);
	for (size_t i = 0; i < r->ninflight; i++)
		rec_expect_clear(&r->inflight[i]);
	free(r->inflight);
	admit_skipped_release(&r->skipped);
	free(r->owned);
	free(r->svcs);
	free(r->domain);
	free(r->gang_resource);
	free(r);
}

bool reconciler_synced(const struct reconciler *r)
{
	if (!r)
		return false;
	for (size_t k = 0; k < r->nkinds; k++)
		if (!kube_informer_synced(r->jobs[k]))
			return false;
	return kube_informer_synced(r->pods) && kube_informer_synced(r->services) &&
	       (!r->nodes || kube_informer_synced(r->nodes));
}

int reconciler_node_ready(const struct reconciler *r, const char *name)
{
	if (!r || !r->nodes || !name || !*name || !kube_informer_synced(r->nodes))
		return -1;
	const struct kube_node *n = kube_nodes_get(kube_informer_cache(r->nodes), name);
	const char *ready = n ? kube_node_condition(n, "Ready", NULL) : NULL;
	return !ready ? -1 : !strcmp(ready, "True");
}

bool reconciler_ready(const struct reconciler *r, char *why, size_t whylen)
{
	if (!r) {
		snprintf(why, whylen, "no controller");
		return false;
	}
	struct kube_informer *infs[JOB_KINDS_MAX + 4] = {r->pods, r->services, r->nodes};
	for (size_t k = 0; k < r->nkinds; k++)
		infs[3 + k] = r->jobs[k];
	for (size_t i = 0; i < sizeof(infs) / sizeof(infs[0]); i++) {
		if (!infs[i] || kube_informer_synced(infs[i]))
			continue;
		snprintf(why, whylen, "%s cache not synced: %s", kube_informer_name(infs[i]),
		         kube_informer_unsynced_why(infs[i]));
		return false;
	}
	return true;
}

struct kube_informer *reconciler_pods(const struct reconciler *r)
{
	return r ? r->pods : NULL;
}
